"""Gradients of the linalg factorizations and solvers under ``create_graph=True`` (Note [Graph
formulas] in leafgrad/ops/formulas.py): PyTorch's graphs of their derivative formulas
(leafgrad/ops/formulas_linalg.py), and the values of the first derivatives and higher, against
PyTorch."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from formula_check import check_graph

import leafgrad as lg

R = np.random.default_rng(0)


def _u(*shape):
    return R.uniform(-1.0, 1.0, shape)


def _wellcond(*shape):
    """Square matrices away from singular (a dominant diagonal)."""
    n = shape[-1]
    return _u(*shape) + 3 * np.eye(n)


def _spd(m, a):
    """A positive-definite matrix built from ``a`` (so its gradient flows back to ``a``)."""
    n = a.shape[-1]
    return a @ a.mT + m.eye(n, dtype=a.dtype)


A3, A33, B32, B3, B23 = _wellcond(3, 3), _wellcond(2, 3, 3), _u(3, 2), _u(3), _u(2, 3)

# Each case: fn(module, *tensors) and its float64 inputs (all require grad). A nonlinear op
# (``sin``) follows the op, so that the incoming gradient has history (see test_formulas_reduce).
CASES = {
    "inv_ex": (lambda m, a: m.linalg.inv_ex(a)[0], A33),
    "det": (lambda m, a: a.det(), A33),
    "logdet": (lambda m, a: m.logdet(a), A3),
    "solve": (lambda m, a, b: m.linalg.solve(a, b), A3, B32),
    "solve_vec_batch": (lambda m, a, b: m.linalg.solve(a, b), A33, B23),
    "solve_right": (lambda m, a, b: m.linalg.solve(a, b, left=False), A3, B23),
    "solve_bcast": (lambda m, a, b: m.linalg.solve(a, b), A33, B32),
    "cholesky_upper": (lambda m, a: m.linalg.cholesky(_spd(m, a), upper=True), _u(3, 3)),
    "cholesky_ex": (lambda m, a: m.linalg.cholesky_ex(_spd(m, a))[0], _u(2, 3, 3)),
    "cholesky_deprecated": (lambda m, a: m.cholesky(_spd(m, a)), _u(3, 3)),
    "eigvalsh": (lambda m, a: m.linalg.eigvalsh(a + a.mT), _u(3, 3)),
    # eigenvectors squared: their signs are LAPACK's choice
    "eigh": (lambda m, a: m.linalg.eigh(a + a.mT, UPLO="U")[1].pow(2), _u(2, 3, 3)),
    "eigh_both": (
        lambda m, a: (lambda r: r[0].unsqueeze(-2) * r[1].pow(2))(m.linalg.eigh(a)),
        _u(3, 3),
    ),
    "svdvals_wide": (lambda m, a: m.linalg.svdvals(a), _u(2, 2, 3)),
    "svd_s_tall": (lambda m, a: m.linalg.svd(a)[1], _u(4, 3)),
    # matmul's (1, n, m) @ (b, m, p) path squeezes the transposed operand, keeping its strides
    "matmul_bcast_t": (lambda m, a, b: a.mT @ b, _u(1, 3, 2), _u(5, 3, 4)),
    "solve_triangular": (
        lambda m, a, b: m.linalg.solve_triangular(a, b, upper=True),
        _wellcond(3, 3),
        B32,
    ),
    "solve_triangular_right_unit": (
        lambda m, a, b: m.linalg.solve_triangular(
            a, b, upper=False, left=False, unitriangular=True
        ),
        _wellcond(3, 3),
        B23,
    ),
}


@pytest.mark.filterwarnings("ignore:torch.cholesky is deprecated")
# "solve" (a plain matrix right-hand side) runs in test_third_derivatives only
@pytest.mark.parametrize("name", [n for n in CASES if n != "solve"])
def test_graph(name):
    fn, *inputs = CASES[name]
    check_graph(lambda m, *xs: fn(m, *xs).sin(), *inputs, order=2)


@pytest.mark.parametrize("name", ["det", "solve", "cholesky_upper", "logdet"])
def test_third_derivatives(name):
    """Without the ``sin``: the incoming gradient has no history, and the third derivatives
    run the formulas of the second derivatives' nodes."""
    fn, *inputs = CASES[name]
    check_graph(fn, *inputs, order=3)


SINGULAR = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [0.5, 1.0, -1.0]])


@pytest.mark.parametrize(
    "a", [SINGULAR, np.diag([1.0, 1.0, 2e-14]), np.stack([SINGULAR, SINGULAR.T])]
)
def test_det_singular(a):
    """linalg_det_backward's SVD formula where |det| < 100 eps (PyTorch's switch)."""
    check_graph(lambda m, x: m.linalg.det(x).sin(), a, depth=9, order=2)


def test_lapack_strides():
    """The factorizations' and solvers' results have LAPACK's column-major strides, as in
    PyTorch (the formulas' matmuls of their transposes record views by them)."""
    a, b = _wellcond(2, 3, 3), _u(3, 2)
    calls = [
        lambda m, a, b: m.linalg.inv(a),
        lambda m, a, b: m.linalg.inv_ex(a[0]).inverse,
        lambda m, a, b: m.linalg.solve(a, b),
        lambda m, a, b: m.linalg.solve(a, b[:, 0]),
        lambda m, a, b: m.linalg.solve(a[0], b[:, 0]),
        lambda m, a, b: m.linalg.solve(a[0], b.mT, left=False),
        lambda m, a, b: m.linalg.solve_triangular(a, b, upper=True),
        lambda m, a, b: m.linalg.solve_triangular(a[0], b.mT, upper=False, left=False),
        lambda m, a, b: m.linalg.svd(a[:, :, :2])[0],
        lambda m, a, b: m.linalg.svd(a, full_matrices=False)[2],
    ]
    for k, f in enumerate(calls):
        want = f(torch, torch.tensor(a), torch.tensor(b))
        got = f(lg, lg.tensor(a), lg.tensor(b))
        assert got.stride() == want.stride(), k
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-10, atol=1e-12)


def test_inv_ex_info():
    a = _wellcond(3, 3, 3)
    a[1] = 0.0
    a[2, :, 1] = a[2, :, 0]
    want = torch.linalg.inv_ex(torch.tensor(a))
    got = lg.linalg.inv_ex(lg.tensor(a))
    assert repr(type(got)) == repr(type(want)).replace("torch", "leafgrad") or got._fields == (
        "inverse",
        "info",
    )
    assert got.info.dtype is lg.int32 and got.info.tolist() == want.info.tolist()
    np.testing.assert_allclose(got.inverse[0].numpy(), want.inverse[0].numpy(), rtol=1e-10)
    with pytest.raises(torch.linalg.LinAlgError) as t_err:
        torch.linalg.inv_ex(torch.tensor(a), check_errors=True)
    with pytest.raises(lg.linalg.LinAlgError) as l_err:
        lg.linalg.inv_ex(lg.tensor(a), check_errors=True)
    assert str(l_err.value) == str(t_err.value)


@pytest.mark.parametrize(
    "shapes",
    [((3, 3), (3,)), ((3, 2), (3, 1)), ((2, 3, 3), (3, 3, 1))],
)
def test_solve_triangular_errors(shapes):
    sa, sb = shapes
    errors = []
    for m in (torch, lg):
        with pytest.raises(RuntimeError) as err:
            m.linalg.solve_triangular(m.ones(sa), m.ones(sb), upper=True)
        errors.append(str(err.value))
    assert errors[0] == errors[1]


@pytest.mark.parametrize(
    "shapes", [((3, 3), (3,)), ((2, 3, 3), (2, 3)), ((1, 1), (1,)), ((2, 1, 1), (2, 1))]
)
def test_solve_vector_right_errors(shapes):
    """A vector right-hand side (``linalg_solve_is_vector_rhs``) with ``left=False``."""
    sa, sb = shapes
    errors = []
    for m in (torch, lg):
        with pytest.raises(RuntimeError) as err:
            m.linalg.solve(m.ones(sa) + m.eye(sa[-1]), m.ones(sb), left=False)
        errors.append(str(err.value))
    assert errors[0] == errors[1]
