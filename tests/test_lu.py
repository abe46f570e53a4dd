"""LU factorisation against PyTorch: linalg.lu_factor / lu_factor_ex / lu / lu_solve / solve_ex,
torch.lu / lu_solve / lu_unpack: values, pivots, info, grad_fn names, gradients (first and
second order), return types, warnings and errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from conftest import both, lg

TOL = {"rtol": 1e-10, "atol": 1e-12}


def _matrix(m, shape, seed=0, dtype="float64", requires_grad=True):
    rng = np.random.default_rng(seed)
    data = rng.standard_normal(shape)
    if dtype.startswith("complex"):
        data = data + 1j * rng.standard_normal(shape)
    return m.tensor(data, dtype=getattr(m, dtype), requires_grad=requires_grad)


SHAPES = [(3, 3), (2, 4, 4), (3, 5), (5, 3), (1, 1)]


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_lu_factor_ex_values_pivots_info_and_gradient(shape):
    def f(m):
        A = _matrix(m, shape)
        LU, pivots, info = m.linalg.lu_factor_ex(A)
        (LU * _matrix(m, LU.shape, 1, requires_grad=False)).sum().backward()
        return LU, pivots, info, A.grad, type(m.linalg.lu_factor_ex(A)).__name__

    both(f, **TOL)


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_linalg_lu_reconstructs_and_differentiates(shape):
    def f(m):
        A = _matrix(m, shape)
        P, L, U = m.linalg.lu(A)
        strides = [t.stride() for t in (P, L, U)]
        w1 = _matrix(m, L.shape, 1, requires_grad=False)
        w2 = _matrix(m, U.shape, 2, requires_grad=False)
        ((L * w1).sum() + (U * w2).sum()).backward()
        return P, L, U, A.grad, strides

    both(f, **TOL)


@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("adjoint", [False, True])
@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_lu_solve_values_and_gradients(left, adjoint, dtype):
    def f(m):
        A = _matrix(m, (2, 3, 3), dtype=dtype)
        B = _matrix(m, (3, 2) if left else (2, 3), 4, dtype=dtype)
        LU, pivots = m.linalg.lu_factor(A)
        X = m.linalg.lu_solve(LU, pivots, B, left=left, adjoint=adjoint)
        strides = (X.stride(), LU.stride(), pivots.stride())
        X.abs().sum().backward()
        # PyTorch's XA = B result of a complex solve is a conjugate view (its conj bit set)
        name = type(X.grad_fn).__name__
        grads = A.grad.resolve_conj(), B.grad.resolve_conj()
        return X.detach().resolve_conj(), name, strides, grads

    both(f, **TOL)


def test_lu_solve_second_order_and_grad_of_lu_directly():
    def f(m):
        LU = _matrix(m, (3, 3))
        pivots = m.tensor([2, 3, 3], dtype=m.int32)
        B = _matrix(m, (3, 2), 4)
        X = m.linalg.lu_solve(LU, pivots, B)
        (g,) = m.autograd.grad(X.pow(2).sum(), LU, create_graph=True)
        g.sum().backward()
        # values only for g: its graph's nodes are leafgrad's generic double-backward nodes,
        # not PyTorch's formula ops (AddBackward0, ...)
        return X, g.detach(), LU.grad, B.grad

    both(f, rtol=1e-9, atol=1e-11)


def test_solve_ex_and_lu_unpack():
    def f(m):
        A = _matrix(m, (2, 3, 3))
        B = _matrix(m, (2, 3, 2), 5)
        result, info = m.linalg.solve_ex(A, B)
        LU, pivots = m.linalg.lu_factor(A)
        P, L, U = m.lu_unpack(LU, pivots)
        (result.sum() + L.sum() + U.pow(2).sum()).backward()
        flags = [tuple(t.shape) for t in m.lu_unpack(LU, pivots, unpack_data=False)] + [
            tuple(t.shape) for t in m.lu_unpack(LU, pivots, unpack_pivots=False)
        ]
        return result, info, P, L, U, A.grad, B.grad, flags, type(m.lu_unpack(LU, pivots)).__name__

    both(f, **TOL)


def test_singular_inputs_report_info():
    def f(m):
        A = m.tensor([[[1.0, 2.0], [2.0, 4.0]], [[1.0, 0.0], [0.0, 1.0]]], dtype=m.float64)
        LU, pivots, info = m.linalg.lu_factor_ex(A)
        result, solve_info = m.linalg.solve_ex(A[1], m.ones(2, dtype=m.float64))
        return (
            LU,
            pivots,
            info,
            result,
            solve_info,
            m.linalg.solve_ex(A, m.ones(2, 2, 1, dtype=m.float64))[1],
        )

    both(f, **TOL)


def test_torch_lu_and_lu_solve_warn_once_and_match():
    def f(m):
        previous = m.is_warn_always_enabled()
        m.set_warn_always(True)
        try:
            A = _matrix(m, (3, 3))
            LU, pivots = m.lu(A)
            LU2, pivots2, infos = m.lu(A, get_infos=True)
            B = _matrix(m, (3, 1), 3)
            X = m.lu_solve(B, LU, pivots)
            X2 = B.lu_solve(LU, pivots)
            return LU, pivots, infos, X, X2, A.lu()[0]
        finally:
            m.set_warn_always(previous)

    both(f, **TOL)


@pytest.mark.parametrize(
    "call",
    [
        lambda m: m.linalg.lu_factor(m.tensor([[1.0, 2.0], [2.0, 4.0]])),
        lambda m: m.linalg.lu_factor(m.zeros(2, 3, 3)),
        lambda m: m.linalg.lu_factor_ex(m.zeros(2, 3, 3), check_errors=True),
        lambda m: m.linalg.lu_factor(m.ones(3)),
        lambda m: m.linalg.lu(m.ones(3)),
        lambda m: m.linalg.lu_factor(m.ones(2, 2, dtype=m.int32)),
        lambda m: m.linalg.lu_factor(m.eye(2), pivot=False),
        lambda m: m.linalg.lu(m.eye(2), pivot=False),
        lambda m: m.linalg.lu_solve(*m.linalg.lu_factor(m.eye(3)), m.ones(3)),
        lambda m: m.linalg.lu_solve(*m.linalg.lu_factor(m.eye(3)), m.ones(4, 2)),
        lambda m: m.linalg.lu_solve(*m.linalg.lu_factor(m.eye(3)), m.ones(2, 4), left=False),
        lambda m: m.linalg.lu_solve(m.eye(3), m.ones(3, dtype=m.int64), m.ones(3, 2)),
        lambda m: m.linalg.lu_solve(m.eye(3), m.ones(3, dtype=m.int32), m.ones(3, 2).double()),
        lambda m: m.linalg.lu_solve(m.ones(2, 3), m.ones(2, dtype=m.int32), m.ones(2, 2)),
        lambda m: m.linalg.lu_solve(m.ones(3), m.ones(3, dtype=m.int32), m.ones(3, 2)),
        lambda m: m.linalg.lu_solve(m.eye(3), m.ones(2, dtype=m.int32), m.ones(3, 2)),
        lambda m: m.linalg.lu_solve(m.ones(2, 3, 3), m.ones(3, 3, dtype=m.int32), m.ones(3, 2)),
        lambda m: m.lu_unpack(m.eye(3), m.ones(3, dtype=m.int64)),
    ],
)
def test_errors(call):
    both(call)


@pytest.mark.parametrize("shape", [(3, 3), (2, 3, 3)])
def test_solve_ex_check_errors_raises_linalg_error(shape):
    """torch's ``_LinAlgError`` (a RuntimeError; leafgrad's has the same name and text)."""
    with pytest.raises(torch.linalg.LinAlgError) as t_err:
        torch.linalg.solve_ex(torch.zeros(shape), torch.ones(3), check_errors=True)
    with pytest.raises(lg.linalg.LinAlgError) as g_err:
        lg.linalg.solve_ex(lg.zeros(shape), lg.ones(3), check_errors=True)
    assert type(g_err.value).__name__ == type(t_err.value).__name__
    assert str(g_err.value) == str(t_err.value)


def test_namespace():
    for name in ["lu", "lu_factor", "lu_factor_ex", "lu_solve", "solve_ex"]:
        assert name in lg.linalg.__all__
    for name in ["lu", "lu_solve", "lu_unpack"]:
        assert callable(getattr(lg, name))
    assert torch.linalg.lu_factor.__name__ == "linalg_lu_factor"


def test_saved_arguments():
    def f(m):
        A = _matrix(m, (3, 3))
        B = _matrix(m, (3, 2), 4)
        LU, pivots = m.linalg.lu_factor(A)
        X = m.linalg.lu_solve(LU, pivots, B)
        Y = m.linalg.lu_solve(LU, pivots, B.mT, left=False, adjoint=True)
        T = m.linalg.solve_triangular(A, B, upper=True, unitriangular=True)
        return (
            [(n._saved_left, n._saved_adjoint, n._saved_LU) for n in (X.grad_fn, Y.grad_fn)],
            (T.grad_fn._saved_left, T.grad_fn._saved_upper, T.grad_fn._saved_unitriangular),
        )

    both(f, **TOL)


LSTSQ_SHAPES = [
    ((5, 3), (5, 2)),
    ((3, 5), (3, 2)),
    ((4, 4), (4, 1)),
    ((2, 5, 3), (2, 5, 2)),
    ((5, 3), (5,)),
]


@pytest.mark.parametrize("driver", [None, "gels", "gelsd", "gelss"])
@pytest.mark.parametrize("shapes", LSTSQ_SHAPES, ids=str)
def test_lstsq_outputs_and_gradients(shapes, driver):
    def f(m):
        A = _matrix(m, shapes[0])
        B = _matrix(m, shapes[1], 3)
        r = m.linalg.lstsq(A, B, driver=driver)
        loss = r.solution.pow(2).sum() + r.residuals.sum()
        loss.backward()
        wide = shapes[0][-2] <= shapes[0][-1]  # a tall solution is a view of a taller buffer
        layout = [tuple(t.shape) for t in r] + [r.solution.stride()] * wide
        return tuple(r), A.grad, B.grad, layout, type(r).__name__

    both(f, rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize("driver", ["gelsy", "gelsd"])
def test_lstsq_rank_deficient_gives_the_minimum_norm_solution(driver):
    def f(m):
        A = _matrix(m, (5, 3), requires_grad=False)
        A[:, 2] = A[:, 1]
        B = _matrix(m, (5, 2), 3, requires_grad=False)
        r = m.linalg.lstsq(A, B, driver=driver)
        solution = r.solution
        if m is torch:
            # the minimum-norm solution is unique; PyTorch's gelsy (pivoted QR) has returned
            # another point, one that does not even minimize the residual (|AX - B| 5.10 against
            # 3.53), on a loaded CI machine with one thread or several. Its SVD driver's solution
            # is the reference for the solution; the driver's own call for the other fields.
            solution = m.linalg.lstsq(A, B, driver="gelsd").solution
        return solution, r.residuals, r.rank, r.singular_values, type(r).__name__

    both(f, rtol=1e-9, atol=1e-11)


def test_lstsq_rcond_float32_and_complex():
    def f(m):
        A = _matrix(m, (4, 3), dtype="float32", requires_grad=False)
        B = _matrix(m, (4, 2), 1, dtype="float32", requires_grad=False)
        C = _matrix(m, (4, 3), 2, dtype="complex128", requires_grad=False)
        D = _matrix(m, (4, 1), 3, dtype="complex128", requires_grad=False)
        return (
            tuple(m.linalg.lstsq(A, B, rcond=0.5, driver="gelsd")),
            tuple(m.linalg.lstsq(C, D, driver="gelss")),
        )

    both(f, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize(
    "call",
    [
        lambda m: m.linalg.lstsq(m.ones(3), m.ones(3)),
        lambda m: m.linalg.lstsq(m.ones(3, 2), m.ones(4, 1)),
        lambda m: m.linalg.lstsq(m.ones(3, 2), m.ones(3, 1, dtype=m.float64)),
        lambda m: m.linalg.lstsq(m.ones(3, 2), m.ones(3, 1), driver="foo"),
    ],
)
def test_lstsq_errors(call):
    both(call)
