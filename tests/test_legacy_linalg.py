"""The older ``torch.*`` spellings of linear algebra (``torch.qr``, ``torch.svd``,
``torch.pinverse``) and ``torch.vmap``: PyTorch's results, strides, graphs, warnings and reprs."""

from __future__ import annotations

import pytest
from conftest import both

_A = [[2.0, 1.0], [1.0, 3.0], [0.0, 1.0]]


def _described(results, signless=False):
    # singular vectors are unique up to sign: LAPACK's and XLA's choices differ
    return [
        (t.abs() if signless else t, t.stride(), type(t.grad_fn).__name__ if t.grad_fn else None)
        + (t._is_view(),)
        for t in results
    ]


CASES = {
    "qr": lambda m, A: m.qr(A),
    "qr_complete_method": lambda m, A: A.qr(some=False),
    "linalg_qr": lambda m, A: m.linalg.qr(A),
    "linalg_qr_complete": lambda m, A: m.linalg.qr(A, "complete"),
    "svd": lambda m, A: m.svd(A),
    "svd_full": lambda m, A: m.svd(A, some=False),
    "svd_values_only": lambda m, A: m.svd(A, compute_uv=False),
    "svd_of_a_batch": lambda m, A: m.stack([A, A * 2]).svd(compute_uv=False),
    "pinverse": lambda m, A: (m.pinverse(A),),
    "pinverse_rcond": lambda m, A: (A.pinverse(rcond=0.5),),
}


@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("case", sorted(CASES))
def test_results_and_graphs(case, transposed):
    def fn(m):
        A = m.tensor(_A, dtype=m.float64, requires_grad=True)
        results = CASES[case](m, A.t() if transposed else A)
        loss = sum((r.abs() if r.dtype.is_floating_point else r * 0).sum() for r in results)
        loss.backward()
        return _described(results, signless=case.startswith("svd")), A.grad

    both(fn)


def test_repr_and_fields():
    def fn(m):
        A = m.tensor(_A)
        U, S, V = r = m.svd(A, compute_uv=False)
        Q, R = q = m.qr(A)
        return repr(r).replace("leafgrad", "torch"), r.V is V, repr(q).replace("leafgrad", "torch")

    both(fn)


def test_vmap_is_torch_func_vmap():
    both(lambda m: m.vmap(lambda t: t.sum() * 2)(m.arange(6.0).reshape(2, 3)))
