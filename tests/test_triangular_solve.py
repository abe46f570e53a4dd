"""``torch.triangular_solve`` (deprecated by PyTorch, kept for old scripts) against torch: both
outputs, their strides and nodes, gradients (in the triangle the solve reads, plus the full
gradient of the cloned coefficient), batch broadcasting, saved arguments, warning and errors."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import both

rng = np.random.default_rng(0)
A0 = rng.standard_normal((2, 3, 3)) + 4 * np.eye(3)
B0 = rng.standard_normal((2, 3, 2))


@pytest.mark.parametrize("upper", [True, False])
@pytest.mark.parametrize("transpose", [False, True])
@pytest.mark.parametrize("unitriangular", [False, True])
def test_values_and_gradients(upper, transpose, unitriangular):
    def fn(m):
        A = m.tensor(A0, requires_grad=True)
        b = m.tensor(B0[:1], requires_grad=True)
        x, M = m.triangular_solve(b, A, upper, transpose, unitriangular)
        (x.pow(2).sum() + (M * M.detach()).sum()).backward()
        node = x.grad_fn
        saved = (node._saved_upper, node._saved_transpose, node._saved_unitriangular)
        return x, M, x.stride(), M.stride(), A.grad, b.grad, saved, type(M.grad_fn).__name__

    # PyTorch's backward calls triangular_solve again and warns a second time; leafgrad warns
    # at the call only (checked below)
    both(fn, check_warnings=False)


def test_deprecation_warning():
    import warnings

    from conftest import lg

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        lg.triangular_solve(lg.ones(2, 1), lg.eye(2))
    assert [str(w.message).split("\n")[0] for w in caught] == [
        "torch.triangular_solve is deprecated in favor of torch.linalg.solve_triangularand will "
        "be removed in a future PyTorch release."
    ]


def test_method_and_repr():
    def fn(m):
        r = m.tensor(B0[0]).triangular_solve(m.tensor(A0[0]), upper=False)
        return repr(r), r.solution, r.cloned_coefficient

    both(fn)


ERRORS = {
    "b_1d": lambda m: m.triangular_solve(m.ones(3), m.eye(3)),
    "A_1d": lambda m: m.triangular_solve(m.ones(3, 1), m.ones(3)),
    "dtypes": lambda m: m.triangular_solve(m.ones(2, 1), m.eye(2, dtype=m.int64)),
    "long": lambda m: m.triangular_solve(m.ones(2, 1, dtype=m.int64), m.eye(2, dtype=m.int64)),
    "not_square": lambda m: m.triangular_solve(m.ones(2, 1), m.ones(2, 3)),
    "sizes": lambda m: m.triangular_solve(m.ones(4, 2), m.eye(3)),
    "batches": lambda m: m.triangular_solve(m.ones(2, 3, 1), m.eye(3).expand(4, 3, 3)),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors(name):
    both(ERRORS[name])
