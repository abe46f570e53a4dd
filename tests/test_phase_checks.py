"""Note [Phase checks]: a loss that depends on the phase of complex eigenvectors or singular
vectors has no gradient; PyTorch's backward raises, and so does leafgrad's (it returned a
gradient), in the eager loop, the fused backward and a ``create_graph`` backward."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import both, host

SHAPES = {"eigh": [(3, 3), (2, 4, 4)], "svd": [(3, 3), (4, 2), (2, 3), (2, 3, 4)]}

EIGH_LOSSES = {
    "V.real": lambda L, V: V.real.sum(),
    "V.imag": lambda L, V: V.imag.sum(),
    "V.abs": lambda L, V: V.abs().sum(),
    "first vector real": lambda L, V: V[..., :, 0].real.sum(),
    "V V^H": lambda L, V: (V @ V.mH).real.sum() + L.sum(),
    "L": lambda L, V: L.sum(),
    "phase cancels": lambda L, V: (V * V.conj()).real.sum(),
}
SVD_LOSSES = {
    "U.real": lambda U, S, Vh: U.real.sum(),
    "Vh.real": lambda U, S, Vh: Vh.real.sum(),
    "U.abs": lambda U, S, Vh: U.abs().sum() + S.sum(),
    "U Vh": lambda U, S, Vh: (U[..., :, : S.shape[-1]] @ Vh[..., : S.shape[-1], :]).real.sum(),
    "S": lambda U, S, Vh: S.sum(),
    "Vh.abs squared": lambda U, S, Vh: (Vh.abs() ** 2).sum(),
}


def _matrix(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
    return a.astype(dtype)


def _run(m, make, loss, a, create_graph):
    A = m.tensor(a, requires_grad=True)
    out = loss(*make(m, A))
    try:
        (g,) = m.autograd.grad(out, A, create_graph=create_graph)
    finally:
        assert A.grad is None
    return g


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("dtype", ["complex128", "complex64"])
@pytest.mark.parametrize("loss", list(EIGH_LOSSES))
def test_eigh_phase(loss, dtype, create_graph, engine):
    for shape in SHAPES["eigh"]:
        a = _matrix(shape, dtype, len(loss))
        a = a @ np.conj(np.swapaxes(a, -1, -2))

        def make(m, A):
            return m.linalg.eigh(A)

        t, g = both(lambda m, a=a: _run(m, make, EIGH_LOSSES[loss], a, create_graph), compare=False)
        if not hasattr(t, "exc"):
            rtol = 1e-8 if dtype == "complex128" else 1e-3
            np.testing.assert_allclose(host(g), host(t), rtol=rtol, atol=rtol)


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("which", ["linalg.svd", "linalg.svd reduced", "torch.svd"])
@pytest.mark.parametrize("loss", list(SVD_LOSSES))
def test_svd_phase(loss, which, create_graph, engine):
    for shape in SHAPES["svd"]:
        a = _matrix(shape, "complex128", len(loss) + len(which))

        def make(m, A):
            if which == "torch.svd":
                U, S, V = m.svd(A)
                return U, S, V.mH
            return m.linalg.svd(A, full_matrices=which == "linalg.svd")

        t, g = both(lambda m, a=a: _run(m, make, SVD_LOSSES[loss], a, create_graph), compare=False)
        if not hasattr(t, "exc"):
            np.testing.assert_allclose(host(g), host(t), rtol=1e-8, atol=1e-8)


def test_real_inputs_are_not_checked(engine):
    """Real eigenvectors are defined up to a sign, which no check sees: any loss differentiates."""
    a = _matrix((3, 3), "complex128", 0).real
    a = a @ a.T

    def run(m):
        A = m.tensor(a, requires_grad=True)
        m.linalg.eigh(A)[1].sum().backward()
        m.linalg.svd(A)[0].sum().backward()
        return A.grad

    both(run, compare=False)


def test_second_backward_after_create_graph_is_not_checked():
    """A second backward reaches the vectors' node with only the gradient through the first
    backward's incoming gradient (leafgrad's recorded formula differentiates the vectors inside),
    which need not be phase-invariant alone: PyTorch's node sums more there, and passes."""
    rng = np.random.default_rng(1)
    a = rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3))
    h = a @ np.conj(a.T)

    def run(m):
        A = m.tensor(h, requires_grad=True)
        w, v = m.linalg.eigh(A)
        saved = v.grad_fn._saved_eigenvectors.shape  # (a wrapped node's saved outputs)
        (g,) = m.autograd.grad(v.abs().sum() + w.sum(), A, create_graph=True)
        g.abs().sum().backward()
        B = m.tensor(a[:, :2].copy(), requires_grad=True)
        U, S, Vh = m.linalg.svd(B, full_matrices=False)
        (g,) = m.autograd.grad(U.abs().sum() + S.sum(), B, create_graph=True)
        g.abs().sum().backward()
        return A.grad, B.grad, saved

    t, g = both(run, compare=False)
    for x, y in zip(t[:2], g[:2]):
        np.testing.assert_allclose(host(y), host(x), rtol=1e-8, atol=1e-8)
    assert t[2] == g[2]
