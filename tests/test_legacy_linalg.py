"""The older ``torch.*`` spellings of linear algebra (``torch.qr``, ``torch.svd``,
``torch.pinverse``), ``torch.vmap``, and the ``torch.linalg`` composites (``vander``, ``vecdot``,
``diagonal``): PyTorch's results, strides, graphs, warnings, errors and reprs."""

from __future__ import annotations

import math

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


def _graded(m, f):
    x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
    r = f(m, x)
    r.abs().sum().backward()
    return r, r.stride(), type(r.grad_fn).__name__, x.grad


COMPOSITES = {
    "vander": lambda m: _graded(m, lambda m, x: m.linalg.vander(x)),
    "vander_N": lambda m: _graded(m, lambda m, x: m.linalg.vander(x, N=5)),
    "vander_2d": lambda m: _graded(m, lambda m, x: m.linalg.vander(x.reshape(1, 3) * m.ones(2, 1))),
    "vander_0d": lambda m: m.linalg.vander(m.tensor(2.0)),
    "vander_int": lambda m: m.linalg.vander(m.tensor([1, 2, 3])),
    "vander_bool": lambda m: m.linalg.vander(m.tensor([True])),
    "vander_N1": lambda m: m.linalg.vander(m.ones(3), N=1),
    "vecdot_1d": lambda m: _graded(m, lambda m, x: m.linalg.vecdot(x, x * 2)),
    "vecdot_2d": lambda m: _graded(m, lambda m, x: m.linalg.vecdot(x * m.ones(2, 1), x)),
    "vecdot_dim0": lambda m: _graded(
        m, lambda m, x: m.linalg.vecdot(x * m.ones(2, 1), m.ones(2, 3), dim=0)
    ),
    "vecdot_dtypes": lambda m: m.linalg.vecdot(m.ones(3), m.ones(3, dtype=m.long)),
    "vecdot_long": lambda m: m.linalg.vecdot(m.ones(3, dtype=m.long), m.ones(3, dtype=m.long)),
    "vecdot_sizes": lambda m: m.linalg.vecdot(m.ones(3), m.ones(2)),
    "vecdot_complex": lambda m: m.linalg.vecdot(m.tensor([1 + 2j, 3j]), m.tensor([2 - 1j, 1 + 1j])),
    "vecdot_complex_2d": lambda m: m.linalg.vecdot(
        m.tensor([[1 + 2j, 3j]]), m.tensor([2 - 1j, 1 + 1j])
    ),
    "diagonal": lambda m: _graded(m, lambda m, x: m.linalg.diagonal(x * m.ones(3, 1), offset=1)),
    "diagonal_3d": lambda m: m.linalg.diagonal(m.arange(18.0).reshape(2, 3, 3)),
}


@pytest.mark.parametrize("case", sorted(COMPOSITES))
def test_linalg_composites(case):
    both(COMPOSITES[case])


_COND_MATRICES = {
    "well_conditioned": [[2.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 4.0]],
    "singular": [[1.0, 2.0], [2.0, 4.0]],
    "batch": [[[2.0, 0.0], [0.0, 1.0]], [[1.0, 1.0], [0.0, 1.0]]],
}
_ORDERS = [None, 2, -2, 1, -1, math.inf, -math.inf, 1.0, "fro", "nuc"]


def _rounded_zero(m, r):
    """A condition number of a singular matrix is its largest singular value (or norm) over the
    rounding error left in place of a zero: inf where LAPACK's factorization gives an exact zero,
    some 1e16 where it gives a last-bit residue. Which one depends on the LAPACK build and the
    CPU (PyTorch's and XLA's agree on some machines, not on others), so it is compared as
    "infinite or beyond 1/eps of its dtype" only."""
    return bool((~m.isfinite(r) | (r.abs() * m.finfo(r.dtype).eps > 1)).all())


@pytest.mark.parametrize("p", _ORDERS, ids=str)
@pytest.mark.parametrize("matrix", sorted(_COND_MATRICES))
def test_cond(matrix, p):
    def fn(m):
        A = m.tensor(_COND_MATRICES[matrix], dtype=m.float64, requires_grad=True)
        r = m.linalg.cond(A, p)
        if matrix == "singular" and _rounded_zero(m, r):
            return ["singular", type(r.grad_fn).__name__ if r.grad_fn else None]
        out = [r, type(r.grad_fn).__name__ if r.grad_fn else None]
        if bool(m.isfinite(r).all()):
            r.sum().backward()
            out.append(A.grad)
        return out

    both(fn)


_COND_INPUTS = {
    "wide": lambda m: m.ones(2, 3),
    "vector": lambda m: m.ones(3),
    "empty": lambda m: m.ones(0, 3),
    "empty_batch": lambda m: m.ones(2, 0, 0),
    "integer": lambda m: m.ones(2, 2, dtype=m.long),
}


@pytest.mark.parametrize("p", [3, 0.5, "bad", None, 1, 1.0, math.inf, "fro", "nuc"], ids=str)
@pytest.mark.parametrize("case", sorted(_COND_INPUTS))
def test_cond_errors_and_empty_inputs(case, p):
    def fn(m):
        r = m.linalg.cond(_COND_INPUTS[case](m), p)
        if case == "wide" and _rounded_zero(m, r):  # rank 1: see _rounded_zero
            return "singular", r.dtype, r.shape
        return r

    both(fn)


def test_inv_ex_errors_name_linalg_inv():
    both(lambda m: m.linalg.inv_ex(m.ones(2, 2, dtype=m.long)))
    both(lambda m: m.linalg.inv_ex(m.ones(2, 3)))
