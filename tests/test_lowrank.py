"""``torch.svd_lowrank`` / ``torch.pca_lowrank`` against torch 2.13: the same random projection
from the same seed, so the same singular values, vectors up to sign, graphs and gradients, and
the generator advanced alike."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import both, host

CASES = {
    "tall": lambda m, A: m.svd_lowrank(A, q=3),
    "wide": lambda m, A: m.svd_lowrank(A.mT, q=3, niter=1),
    "with M": lambda m, A: m.svd_lowrank(A, q=2, M=m.ones(A.shape[-1], dtype=A.dtype)),
    "pca": lambda m, A: m.pca_lowrank(A),
    "pca not centred": lambda m, A: m.pca_lowrank(A, q=2, center=False, niter=0),
    "batched": lambda m, A: m.svd_lowrank(A.reshape(2, 4, 5), q=2),
}


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("case", list(CASES))
def test_values_graphs_gradients(case, dtype):
    def run(m):
        m.manual_seed(0)
        A = m.randn(8, 5, dtype=getattr(m, dtype), requires_grad=True)
        U, S, V = CASES[case](m, A)
        names = [t.grad_fn.name() for t in (U, S, V)]
        (S.sum() + (U.abs().sum() + V.abs().sum()) * 0.1).backward()
        return names, [tuple(t.shape) for t in (U, S, V)], U, S, V, A.grad, m.randn(2)

    t, g = both(run, compare=False)
    assert g[:2] == t[:2]
    tol = 1e-9 if dtype == "float64" else 2e-4
    for k, (x, y) in enumerate(zip(t[2:], g[2:])):
        x, y = host(x), host(y)
        if k in (0, 2):  # singular vectors: up to sign
            x, y = np.abs(x), np.abs(y)
        np.testing.assert_allclose(y, x, rtol=tol, atol=tol)


@pytest.mark.parametrize("q,niter", [(9, 2), (-1, 2), (2, -1)])
def test_pca_checks(q, niter):
    both(lambda m: m.pca_lowrank(m.ones(4, 7), q=q, niter=niter))
