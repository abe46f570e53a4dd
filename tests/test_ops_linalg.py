"""Differential tests of the linear algebra ops (matmul family, torch.linalg) against PyTorch."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from conftest import both, grad_fn_name, host, lg, same_tensor

RNG = np.random.default_rng(0)


def _values(shape, dtype):
    if dtype in ("int64", "int32"):
        return RNG.integers(-3, 4, size=shape).astype(dtype)
    if dtype == "bool":
        return RNG.integers(0, 2, size=shape).astype(bool)
    return RNG.standard_normal(shape).astype(dtype)


def _make(m, values, requires_grad):
    t = m.tensor(values, dtype=getattr(m, str(values.dtype)))
    return t.requires_grad_(requires_grad) if requires_grad else t


def graph(fn, depth=6):
    """The nested (name, children) structure of a grad_fn, down to ``depth``."""
    if fn is None or depth == 0:
        return None
    return (type(fn).__name__, tuple(graph(f, depth - 1) for f, _ in fn.next_functions))


def _outputs(r):
    return list(r) if isinstance(r, tuple) else [r]


def check(fn, specs, *, rtol=None, atol=None, grad=True, compare_graph=True, loss=None):
    """Run ``fn(m, *inputs)`` in torch and leafgrad on equal inputs; compare values, graphs,
    requires_grad/is_leaf and, by the backward of a weighted sum (or ``loss``), the gradients.

    ``specs``: (shape, dtype, requires_grad) or a numpy array with requires_grad.
    """
    vals = []
    for s in specs:
        if isinstance(s[0], np.ndarray):
            vals.append((s[0], s[1]))
        else:
            vals.append((_values(s[0], s[1]), s[2]))
    ti = [_make(torch, v, rg) for v, rg in vals]
    gi = [_make(lg, v, rg) for v, rg in vals]
    tr, gr = fn(torch, *ti), fn(lg, *gi)
    touts, gouts = _outputs(tr), _outputs(gr)
    assert len(touts) == len(gouts)
    for t, g in zip(touts, gouts):
        same_tensor(t, g, rtol=rtol, atol=atol)
        if compare_graph:
            assert graph(g.grad_fn) == graph(t.grad_fn)
    if not grad or not any(t.requires_grad for t in touts):
        return tr, gr
    if loss is not None:
        tl, gl = loss(torch, tr), loss(lg, gr)
    else:
        tl = gl = 0
        for k, (t, g) in enumerate(zip(touts, gouts)):
            if not t.requires_grad or not t.dtype.is_floating_point:
                continue
            w = np.linspace(0.5, 1.5, max(t.numel(), 1)).reshape(-1)[: t.numel()]
            w = w.reshape(tuple(t.shape)).astype(str(t.dtype).removeprefix("torch."))
            tl = tl + (t * torch.tensor(w)).sum() * (k + 1)
            gl = gl + (g * lg.tensor(w)).sum() * (k + 1)
    tl.backward()
    gl.backward()
    for (_, rg), t, g in zip(vals, ti, gi):
        if rg:
            assert (t.grad is None) == (g.grad is None)
            if t.grad is not None:
                same_tensor(t.grad, g.grad, autograd=False, rtol=rtol, atol=atol)
    return tr, gr


F32 = dict(rtol=1e-5, atol=1e-5)
F64 = dict(rtol=1e-10, atol=1e-10)


# --- matmul in every rank ------------------------------------------------------------------------

MATMUL_SHAPES = [
    ((3,), (3,)),
    ((2, 3), (3,)),
    ((3,), (3, 4)),
    ((2, 3), (3, 4)),
    ((2, 2, 3), (2, 3, 4)),
    ((2, 2, 3), (3, 4)),
    ((2, 3), (2, 3, 4)),
    ((2, 2, 3), (3,)),
    ((3,), (2, 3, 4)),
    ((1,), (2, 1, 4)),
    ((2, 1, 2, 3), (5, 3, 4)),
    ((1, 2, 3), (5, 3, 4)),
    ((5, 2, 3), (1, 3, 4)),
    ((2, 2, 3), (2, 1, 3, 4)),
    ((0, 2, 3), (3, 4)),
    ((2, 0, 3), (2, 3, 4)),
    ((2, 3, 0), (0, 4)),
]


@pytest.mark.parametrize("sa, sb", MATMUL_SHAPES)
@pytest.mark.parametrize("rg", [(True, True), (True, False), (False, True)])
def test_matmul_ranks(sa, sb, rg):
    if rg == (True, False) and len(sa) < 3 and len(sb) < 3:
        pytest.skip("the fold and batch paths depend on requires_grad, 1-D/2-D ones do not")
    check(lambda m, a, b: a @ b, [(sa, "float64", rg[0]), (sb, "float64", rg[1])], **F64)


@pytest.mark.parametrize("sa, sb", [((2, 2, 3), (2, 3, 4)), ((3,), (2, 3, 4)), ((2, 3), (3,))])
def test_matmul_float32_and_functions(sa, sb):
    check(lambda m, a, b: m.matmul(a, b), [(sa, "float32", True), (sb, "float32", True)], **F32)
    check(lambda m, a, b: a.matmul(b), [(sa, "float32", True), (sb, "float32", False)], **F32)


@pytest.mark.parametrize("sa, sb", [((2, 3), (3, 2)), ((2, 2, 3), (2, 3, 2)), ((3,), (3,))])
def test_matmul_integers(sa, sb):
    check(lambda m, a, b: a @ b, [(sa, "int64", False), (sb, "int64", False)])


def test_matmul_no_grad_and_rmatmul():
    def fn(m):
        a = m.ones(2, 3, requires_grad=True)
        with m.no_grad():
            r = a @ m.ones(3, 2)
        return r, r.requires_grad, r.is_leaf

    both(fn)
    both(lambda m: m.ones(2, 3).__rmatmul__(m.ones(4, 2)))


@pytest.mark.parametrize(
    "sa, sb, da, db",
    [
        ((), (3,), "float32", "float32"),
        ((2, 2, 3), (3, 3, 4), "float32", "float32"),
        ((2, 2, 3), (2, 4, 4), "float32", "float32"),
        ((2, 2, 3), (4, 4), "float32", "float32"),
        ((2, 3), (2, 4, 4), "float32", "float32"),
        ((2, 2, 3), (4,), "float32", "float32"),
        ((2, 2, 3), (2, 3, 4), "float32", "float64"),
        ((2, 3), (3, 2), "float32", "float64"),
        ((3,), (3,), "int64", "float32"),
        ((2, 3), (3, 2), "bool", "bool"),
        ((2, 2, 3), (2, 3, 2), "bool", "bool"),
        ((2, 2, 3), (3,), "bool", "bool"),
        ((3,), (3,), "bool", "bool"),
        ((4, 3), (3,), "bool", "bool"),
    ],
)
def test_matmul_errors(sa, sb, da, db):
    both(lambda m: m.matmul(m.ones(sa, dtype=getattr(m, da)), m.ones(sb, dtype=getattr(m, db))))


# --- mm, bmm, mv, dot, vdot, outer, inner, addmm family --------------------------------------


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_products(dtype):
    tol = F32 if dtype == "float32" else F64
    check(lambda m, a, b: m.mm(a, b), [((2, 3), dtype, True), ((3, 4), dtype, True)], **tol)
    check(lambda m, a, b: m.bmm(a, b), [((2, 2, 3), dtype, True), ((2, 3, 4), dtype, True)], **tol)
    check(lambda m, a, b: a.mv(b), [((2, 3), dtype, True), ((3,), dtype, True)], **tol)
    check(lambda m, a, b: m.dot(a, b), [((3,), dtype, True), ((3,), dtype, True)], **tol)
    check(lambda m, a, b: m.vdot(a, b), [((3,), dtype, True), ((3,), dtype, True)], **tol)
    check(lambda m, a, b: m.outer(a, b), [((2,), dtype, True), ((3,), dtype, True)], **tol)
    check(lambda m, a, b: m.ger(a, b), [((2,), dtype, False), ((3,), dtype, True)], **tol)
    check(lambda m, a, b: m.inner(a, b), [((2, 3), dtype, True), ((4, 3), dtype, True)], **tol)
    check(lambda m, a, b: m.inner(a, b), [((2, 5, 3), dtype, True), ((3,), dtype, True)], **tol)
    check(lambda m, a, b: m.inner(a, b), [((), dtype, True), ((2,), dtype, True)], **tol)


@pytest.mark.parametrize("beta, alpha", [(1, 1), (2, 0.5), (0, 3)])
def test_add_products(beta, alpha):
    kw = dict(beta=beta, alpha=alpha)
    f = "float64"
    check(
        lambda m, x, a, b: m.addmm(x, a, b, **kw),
        [((2, 4), f, True), ((2, 3), f, True), ((3, 4), f, True)],
        **F64,
    )
    check(
        lambda m, x, a, b: m.addmm(x, a, b, **kw),
        [((4,), f, True), ((2, 3), f, True), ((3, 4), f, False)],
        **F64,
    )
    check(
        lambda m, x, a, b: x.addmv(a, b, **kw),
        [((2,), f, True), ((2, 3), f, True), ((3,), f, True)],
        **F64,
    )
    check(
        lambda m, x, a, b: m.baddbmm(x, a, b, **kw),
        [((2, 2, 4), f, True), ((2, 2, 3), f, True), ((2, 3, 4), f, True)],
        **F64,
    )
    check(
        lambda m, x, a, b: m.addbmm(x, a, b, **kw),
        [((2, 4), f, True), ((5, 2, 3), f, True), ((5, 3, 4), f, True)],
        **F64,
    )


def test_addmm_ignores_input_when_beta_is_zero():
    def fn(m):
        x = m.full((2, 2), float("nan"))
        return m.addmm(x, m.ones(2, 3), m.ones(3, 2), beta=0)

    both(fn)


def test_integer_products():
    check(lambda m, a, b: m.mm(a, b), [((2, 3), "int64", False), ((3, 4), "int64", False)])
    check(lambda m, a, b: m.dot(a, b), [((3,), "int64", False), ((3,), "int64", False)])
    check(lambda m, a, b: m.outer(a, b), [((3,), "int64", False), ((2,), "float32", False)])
    check(lambda m, a: m.trace(a), [((3, 3), "int32", False)])


@pytest.mark.parametrize(
    "fn",
    [
        lambda m: m.mm(m.ones(2, 3), m.ones(4, 2)),
        lambda m: m.mm(m.ones(3), m.ones(3, 2)),
        lambda m: m.mm(m.ones(2, 3), m.ones(3, 2, dtype=m.float64)),
        lambda m: m.bmm(m.ones(2, 3), m.ones(2, 3, 4)),
        lambda m: m.bmm(m.ones(2, 2, 3), m.ones(2, 4, 2)),
        lambda m: m.bmm(m.ones(2, 2, 3), m.ones(2, 3, 2, dtype=m.float64)),
        lambda m: m.bmm(m.ones(2, 2, 3, dtype=m.bool), m.ones(2, 3, 2, dtype=m.bool)),
        lambda m: m.mv(m.ones(3, 3, dtype=m.long), m.ones(3)),
        lambda m: m.mv(m.ones(3, 3), m.ones(4)),
        lambda m: m.dot(m.ones(3, dtype=m.long), m.ones(3)),
        lambda m: m.dot(m.ones(3), m.ones(4)),
        lambda m: m.dot(m.ones(3, dtype=m.bool), m.ones(3, dtype=m.bool)),
        lambda m: m.vdot(m.ones(2, 2), m.ones(3)),
        lambda m: m.vdot(m.ones(3, dtype=m.long), m.ones(3)),
        lambda m: m.outer(m.ones(2, 2), m.ones(3)),
        lambda m: m.addmm(m.ones(4), m.ones(2, 3), m.ones(3, 3)),
        lambda m: m.addmm(m.ones(2, 2, dtype=m.float64), m.ones(2, 3), m.ones(3, 2)),
        lambda m: m.addmm(m.ones(2, 2), m.ones(2, 3), m.ones(4, 2)),
        lambda m: m.addmv(m.ones(2), m.ones(2, 3), m.ones(3, dtype=m.float64)),
        lambda m: m.baddbmm(m.ones(2, 2, 2), m.ones(2, 2, 3), m.ones(2, 4, 2)),
        lambda m: m.addbmm(m.ones(2, 2), m.ones(2, 2, 3), m.ones(2, 4, 2)),
        lambda m: m.trace(m.ones(3, 3, 3)),
        lambda m: m.trace(m.ones(3, 3, dtype=m.bool)),
        lambda m: m.tensordot(m.ones(2, 3), m.ones(4, 3), dims=([1], [0])),
        lambda m: m.tensordot(m.ones(2, 3), m.ones(4, 3), dims=([1], [1, 0])),
    ],
)
def test_product_errors(fn):
    both(fn)


# --- trace, cross, kron, tensordot, multi_dot, matrix_power ---------------------------------------


def test_trace_cross_kron():
    f = "float64"
    check(lambda m, a: m.trace(a), [((3, 3), f, True)], **F64)
    check(lambda m, a: a.trace(), [((2, 4), "float32", True)], **F32)
    check(lambda m, a, b: m.linalg.cross(a, b), [((2, 3), f, True), ((2, 3), f, True)], **F64)
    check(
        lambda m, a, b: m.linalg.cross(a, b, dim=0), [((3, 2), f, True), ((3, 1), f, True)], **F64
    )
    check(lambda m, a, b: m.cross(a, b, dim=1), [((2, 3), f, True), ((2, 3), f, False)], **F64)
    check(lambda m, a, b: m.kron(a, b), [((2, 3), f, True), ((3, 2), f, True)], **F64)
    check(lambda m, a, b: m.kron(a, b), [((2,), f, True), ((2, 3, 2), f, True)], **F64)


def test_cross_errors_and_warning():
    both(lambda m: m.linalg.cross(m.ones(2, 2), m.ones(2, 2)))
    both(lambda m: m.linalg.cross(m.ones(2, 3), m.ones(2, 3, dtype=m.float64)))
    both(lambda m: m.cross(m.ones(3, 3), m.ones(3, 3)))


@pytest.mark.parametrize(
    "sa, sb, dims",
    [
        ((2, 3, 4), (3, 4, 5), 2),
        ((2, 3, 4), (4, 3, 5), ([1, 2], [1, 0])),
        ((2, 3), (3, 2), 1),
        ((3, 1), (3, 4), ([1], [1])),
        ((2, 3), (4, 5), 0),
    ],
)
def test_tensordot(sa, sb, dims):
    check(
        lambda m, a, b: m.tensordot(a, b, dims=dims),
        [(sa, "float64", True), (sb, "float64", True)],
        **F64,
    )


@pytest.mark.parametrize(
    "shapes",
    [
        [(2, 3), (3, 4)],
        [(2, 3), (3, 4), (4, 2)],
        [(5, 3), (3, 4), (4, 1)],
        [(3,), (3, 4), (4, 2), (2, 5)],
        [(3, 2), (2, 4), (4, 6), (6, 1), (1,)],
    ],
)
def test_multi_dot(shapes):
    check(lambda m, *t: m.linalg.multi_dot(t), [(s, "float64", True) for s in shapes], **F64)


def test_multi_dot_errors():
    both(lambda m: m.linalg.multi_dot([m.ones(3, 4)]))
    both(lambda m: m.linalg.multi_dot([m.ones(3, 4), m.ones(3, 4)]))
    both(lambda m: m.linalg.multi_dot([m.ones(2, 3, 4), m.ones(4, 4)]))


@pytest.mark.parametrize("n", [0, 1, 2, 3, 5, 6, -1, -2, -3])
def test_matrix_power(n):
    a = np.eye(3) * 2 + RNG.standard_normal((3, 3)) * 0.3
    check(lambda m, x: m.linalg.matrix_power(x, n), [(a, True)], **F64)


def test_matrix_power_integers_and_errors():
    check(lambda m, x: m.linalg.matrix_power(x, 3), [((3, 3), "int64", False)])
    both(lambda m: m.linalg.matrix_power(m.ones(3, 4), 2))


def test_einsum_records_pytorchs_graph():
    # Fuller einsum coverage is in test_einsum.py.
    check(
        lambda m, a, b: m.einsum("ij,jk->ik", a, b),
        [((2, 3), "float64", True), ((3, 4), "float64", True)],
        **F64,
    )


# --- decompositions and solvers ------------------------------------------------------------------


def _well_conditioned(shape, spd=False):
    a = RNG.standard_normal(shape) * 0.3 + np.eye(shape[-1]) * 2
    if spd:
        a = a @ np.swapaxes(a, -1, -2) + np.eye(shape[-1])
    return a


@pytest.mark.parametrize(
    "shape, dtype", [((2, 3, 3), "float64"), ((3, 3), "float32"), ((0, 2, 2), "float64")]
)
def test_inv_det_slogdet_solve(shape, dtype):
    tol = dict(rtol=1e-4, atol=1e-4) if dtype == "float32" else F64
    a = _well_conditioned(shape).astype(dtype)
    check(lambda m, x: m.linalg.inv(x), [(a, True)], **tol)
    check(lambda m, x: m.inverse(x), [(a, True)], **tol)
    check(lambda m, x: m.linalg.det(x), [(a, True)], **tol)
    check(lambda m, x: m.det(x), [(a, True)], **tol)
    check(lambda m, x: tuple(m.linalg.slogdet(x)), [(a, True)], **tol)
    b = RNG.standard_normal(shape[:-1] + (2,)).astype(dtype)
    check(lambda m, x, y: m.linalg.solve(x, y), [(a, True), (b, True)], **tol)
    v = RNG.standard_normal(shape[:-1]).astype(dtype)
    check(lambda m, x, y: m.linalg.solve(x, y), [(a, True), (v, True)], **tol)


def test_solve_left_false_and_broadcast():
    a = _well_conditioned((3, 3))
    check(
        lambda m, x, y: m.linalg.solve(x, y, left=False),
        [(a, True), (RNG.standard_normal((2, 3)), True)],
        **F64,
    )
    check(
        lambda m, x, y: m.linalg.solve(x, y),
        [(a, True), (RNG.standard_normal((4, 3, 2)), True)],
        **F64,
    )


def test_slogdet_repr_and_fields():
    t, g = both(lambda m: m.linalg.slogdet(m.tensor([[2.0, 1.0], [1.0, 3.0]])))
    assert repr(g) == repr(t)
    assert type(g).__name__ == type(t).__name__
    same_tensor(t.logabsdet, g.logabsdet)
    same_tensor(t.sign, g.sign)


def _linalg_error(fn):
    """Both raise torch's ``_LinAlgError`` (a RuntimeError) with the same text."""
    with pytest.raises(RuntimeError) as te:
        fn(torch)
    with pytest.raises(RuntimeError) as ge:
        fn(lg)
    assert type(ge.value).__name__ == type(te.value).__name__ == "_LinAlgError"
    assert str(ge.value) == str(te.value)


def test_singular_errors():
    _linalg_error(lambda m: m.linalg.inv(m.ones(3, 3)))
    _linalg_error(lambda m: m.linalg.inv(m.ones(2, 3, 3)))
    _linalg_error(lambda m: m.linalg.inv(m.tensor([[1.0, 2.0], [0.0, 0.0]])))
    _linalg_error(lambda m: m.linalg.solve(m.ones(3, 3), m.ones(3)))
    _linalg_error(lambda m: m.linalg.cholesky(-m.eye(3)))
    _linalg_error(lambda m: m.linalg.cholesky(m.tensor([[1.0, 2.0], [2.0, 1.0]])))


@pytest.mark.parametrize(
    "fn",
    [
        lambda m: m.linalg.inv(m.ones(2, 3)),
        lambda m: m.linalg.inv(m.ones(3)),
        lambda m: m.linalg.inv(m.ones(3, 3, dtype=m.long)),
        lambda m: m.linalg.det(m.ones(3, 3, dtype=m.long)),
        lambda m: m.linalg.det(m.ones(2, 3)),
        lambda m: m.linalg.slogdet(m.ones(3, 3, dtype=m.long)),
        lambda m: m.linalg.solve(m.eye(3), m.ones(4)),
        lambda m: m.linalg.solve(m.eye(3), m.ones(3, 3, dtype=m.float64)),
        lambda m: m.linalg.solve(m.eye(3, dtype=m.long), m.ones(3)),
        lambda m: m.linalg.cholesky(m.ones(2, 3)),
        lambda m: m.linalg.eigh(m.ones(2, 3)),
        lambda m: m.linalg.eigh(m.eye(3), UPLO="x"),
        lambda m: m.linalg.svd(m.ones(3)),
        lambda m: m.linalg.svdvals(m.ones(3, 3, dtype=m.long)),
        lambda m: m.linalg.qr(m.ones(3)),
        lambda m: m.linalg.qr(m.ones(3, 3), mode="x"),
        lambda m: m.linalg.qr(m.ones(3, 3, dtype=m.long)),
        lambda m: m.linalg.pinv(m.ones(3, dtype=m.float64)),
        lambda m: m.linalg.pinv(m.ones(3, 3, dtype=m.long)),
    ],
)
def test_linalg_errors(fn):
    both(fn)


def test_cholesky():
    a = _well_conditioned((3, 3), spd=True)
    check(lambda m, x: m.linalg.cholesky(x), [(a, True)], **F64)
    check(lambda m, x: m.linalg.cholesky(x, upper=True), [(a, True)], **F64)
    # Only the lower triangle is read: an upper triangle of garbage changes nothing.
    b = a + np.triu(np.ones((3, 3)), 1) * 5
    check(lambda m, x: m.linalg.cholesky(x), [(b, True)], **F64)
    check(
        lambda m, x: m.linalg.cholesky(x),
        [(_well_conditioned((2, 3, 3), spd=True).astype("float32"), True)],
        rtol=1e-4,
        atol=1e-4,
    )


@pytest.mark.parametrize(
    "shape, mode",
    [((3, 3), "reduced"), ((4, 3), "reduced"), ((4, 3), "complete"), ((2, 3, 3), "reduced")],
)
def test_qr(shape, mode):
    a = RNG.standard_normal(shape)
    ta, ga = torch.tensor(a, requires_grad=True), lg.tensor(a, requires_grad=True)
    tq, tr = torch.linalg.qr(ta, mode=mode)
    gq, gr = lg.linalg.qr(ga, mode=mode)
    assert grad_fn_name(gq) == grad_fn_name(tq) == "LinalgQrBackward0"
    np.testing.assert_allclose(host(gq @ gr), a, atol=1e-12)
    # Both use LAPACK's Householder QR: the same signs, so Q and R themselves compare.
    np.testing.assert_allclose(np.abs(host(gr)), np.abs(host(tr)), atol=1e-10)
    w = np.linspace(0.5, 1.5, a.size).reshape(a.shape)
    if mode == "reduced":
        ((tq @ tr) * torch.tensor(w)).sum().backward()
        ((gq @ gr) * lg.tensor(w)).sum().backward()
        np.testing.assert_allclose(host(ga.grad), host(ta.grad), atol=1e-10)


@pytest.mark.parametrize("uplo", ["L", "U"])
def test_eigh(uplo):
    a = _well_conditioned((2, 3, 3), spd=True) + np.diag([0.0, 1.0, 3.0])
    ta, ga = torch.tensor(a, requires_grad=True), lg.tensor(a, requires_grad=True)
    tw, tv = torch.linalg.eigh(ta, UPLO=uplo)
    gw, gv = lg.linalg.eigh(ga, UPLO=uplo)
    assert grad_fn_name(gw) == grad_fn_name(tw) == "LinalgEighBackward0"
    np.testing.assert_allclose(host(gw), host(tw), atol=1e-10)
    # Gauge-invariant: eigenvalues and the projector onto the first eigenvector.
    w = np.linspace(0.5, 1.5, 9).reshape(3, 3)
    t1 = tv[..., :, :1]
    ((tw * tw).sum() + ((t1 @ t1.mT) * torch.tensor(w)).sum()).backward()
    g1 = gv @ lg.tensor(np.array([[1.0], [0.0], [0.0]]))
    ((gw * gw).sum() + ((g1 @ g1.transpose(-1, -2)) * lg.tensor(w)).sum()).backward()
    np.testing.assert_allclose(host(ga.grad), host(ta.grad), atol=1e-9)
    check(lambda m, x: m.linalg.eigvalsh(x, UPLO=uplo), [(a, True)], **F64)


@pytest.mark.parametrize("shape", [(4, 3), (2, 2, 3)])
def test_svd(shape):
    a = RNG.standard_normal(shape)
    check(lambda m, x: m.linalg.svdvals(x), [(a, True)], **F64)
    for full in (False, True):
        ta, ga = torch.tensor(a, requires_grad=True), lg.tensor(a, requires_grad=True)
        tu, ts, tvh = torch.linalg.svd(ta, full_matrices=full)
        gu, gs, gvh = lg.linalg.svd(ga, full_matrices=full)
        assert grad_fn_name(gu) == grad_fn_name(tu) == "LinalgSvdBackward0"
        assert tuple(gu.shape) == tuple(tu.shape) and tuple(gvh.shape) == tuple(tvh.shape)
        np.testing.assert_allclose(host(gs), host(ts), atol=1e-12)
        k = min(shape[-2:])
        rec = host(gu[..., :, :k] * gs.unsqueeze(-2) @ gvh[..., :k, :])
        np.testing.assert_allclose(rec, a, atol=1e-12)
        # A gauge-invariant loss: U diag(S) Vh weighted, and sum of S^2.
        w = np.linspace(0.5, 1.5, a.size).reshape(a.shape)
        ((tu[..., :, :k] * ts.unsqueeze(-2) @ tvh[..., :k, :]) * torch.tensor(w)).sum().backward()
        ((gu[..., :, :k] * gs.unsqueeze(-2) @ gvh[..., :k, :]) * lg.tensor(w)).sum().backward()
        np.testing.assert_allclose(host(ga.grad), host(ta.grad), atol=1e-9)


@pytest.mark.parametrize("shape", [(4, 3), (2, 3, 5)])
def test_pinv(shape):
    check(lambda m, x: m.linalg.pinv(x), [(RNG.standard_normal(shape), True)], **F64)


def test_backward_twice_raises():
    def fn(m):
        x = m.eye(3, dtype=m.float64) * 2
        x.requires_grad_()
        out = []
        for op in (m.linalg.inv, m.linalg.det, lambda a: a @ a, m.trace):
            y = op(x).sum()
            y.backward(retain_graph=False)
            try:
                y.backward()
                out.append("ok")
            except RuntimeError as e:
                out.append(str(e)[:40])
        return out

    both(fn)


# --- norms ---------------------------------------------------------------------------------------

VECTOR_ORDS = [2, 1, 3, 0.5, 0, math.inf, -math.inf, -1]


@pytest.mark.parametrize("ord", VECTOR_ORDS)
@pytest.mark.parametrize("dim, keepdim", [(None, False), ((0, 1), True), (-1, True)])
def test_vector_norm(ord, dim, keepdim):
    a = RNG.standard_normal((3, 4)) + 0.1
    check(lambda m, x: m.linalg.vector_norm(x, ord, dim, keepdim), [(a, True)], **F64)
    if dim is None:
        check(
            lambda m, x: m.linalg.vector_norm(x, ord, dim, keepdim),
            [(a.astype("float32"), True)],
            rtol=1e-5,
            atol=1e-5,
        )


@pytest.mark.parametrize("ord", [2, 1, math.inf, 3])
def test_vector_norm_at_zero(ord):
    a = np.array([[0.0, 0.0], [1.0, -1.0], [2.0, -2.0]])
    check(lambda m, x: m.linalg.vector_norm(x, ord, 1), [(a, True)], **F64)
    check(lambda m, x: m.linalg.vector_norm(x, ord), [(np.zeros(3), True)], **F64)


def test_vector_norm_order_zero_leaves_grad_undefined():
    check(lambda m, x: m.linalg.vector_norm(x, 0), [((3,), "float64", True)], **F64)


def _zero_order_input(m):
    return m.tensor([[1.0, 0.0, 2.0], [0.5, 0.0, -1.0]], requires_grad=True)


# Note [Undefined gradients]: the ord=0 formula gives no gradient, wherever the norm is reached from
ZERO_ORDER_NORMS = {
    "vector_norm_dim": lambda m, x: m.linalg.vector_norm(x, 0, dim=1, keepdim=True),
    "vector_norm_dtype": lambda m, x: m.linalg.vector_norm(x, 0.0, dtype=m.float64),
    "vector_norm_complex": lambda m, x: m.linalg.vector_norm(x.to(m.complex64), 0),
    "linalg_norm": lambda m, x: m.linalg.norm(x, 0, dim=0),
    "norm": lambda m, x: m.norm(x, p=0),
    "norm_method_dim": lambda m, x: x.norm(0, dim=1),
    "through_a_chain": lambda m, x: m.linalg.vector_norm(x.exp() * 2, 0),
}


@pytest.mark.parametrize("case", ZERO_ORDER_NORMS)
def test_zero_order_norm_gives_no_gradient(case):
    fn = ZERO_ORDER_NORMS[case]

    def grads(m):
        x = _zero_order_input(m)
        y = fn(m, x)
        unused = m.autograd.grad(y.sum(), x, allow_unused=True, retain_graph=True)
        materialized = m.autograd.grad(
            y.sum(), x, allow_unused=True, materialize_grads=True, retain_graph=True
        )
        y.sum().backward()
        return y, unused, materialized, x.grad

    both(grads)
    both(lambda m: m.autograd.grad(fn(m, _zero_order_input(m)).sum(), _zero_order_input(m)))


def test_zero_order_norm_without_gradient_in_every_engine_path():
    def fn(m):
        x = _zero_order_input(m)
        seen = []
        x.register_hook(seen.append)
        z = x * 2
        z.retain_grad()
        y = m.linalg.vector_norm(z, 0)
        y.grad_fn.register_hook(lambda gi, go: seen.append((gi, go)))
        (y * 3).backward(retain_graph=True)
        graph = m.autograd.grad(y, x, allow_unused=True, create_graph=True)
        mixed = m.autograd.grad(y + x.sum(), x, create_graph=True)
        return seen, z.grad, x.grad, graph, mixed

    both(fn)
    # the node saved what PyTorch's saves: a second backward raises
    both(lambda m: [y := m.linalg.vector_norm(_zero_order_input(m), 0), y.backward(), y.backward()])


def test_zero_order_norm_counts_non_finite_values():
    both(lambda m: m.linalg.vector_norm(m.tensor([math.inf, 0.0, math.nan, -math.inf]), 0))


def test_zero_order_norm_gradient_in_a_repeated_graph():
    # a training-loop-like graph runs its backward fused (Note [Fused backward])
    def fn(m):
        x = _zero_order_input(m)
        for _ in range(6):
            ((m.linalg.vector_norm(x * 2, 0, dim=1) * x.sum(1)).sum() + (x * 3).sum()).backward()
        return x.grad

    both(fn)


def test_vector_norm_dtype_and_errors():
    check(
        lambda m, x: m.linalg.vector_norm(x, dtype=m.float64),
        [((3,), "float32", True)],
        rtol=1e-6,
        atol=1e-6,
    )
    both(lambda m: m.linalg.vector_norm(m.ones(3, dtype=m.long)))
    both(lambda m: m.linalg.vector_norm(m.ones(3), dtype=m.long))
    both(lambda m: m.linalg.vector_norm(m.ones(3, dtype=m.float64), dtype=m.float32))
    both(lambda m: m.linalg.vector_norm(m.ones(0), float("inf")))
    both(lambda m: m.linalg.vector_norm(m.ones(2, 0), -1, dim=1))
    both(lambda m: m.linalg.vector_norm(m.ones(0)))


MATRIX_ORDS = ["fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf]


@pytest.mark.parametrize("ord", MATRIX_ORDS)
@pytest.mark.parametrize("dim, keepdim", [((-2, -1), False), ((0, 2), True), ((2, 0), False)])
def test_matrix_norm(ord, dim, keepdim):
    if dim == (2, 0) and ord not in (1, "nuc", -math.inf):
        pytest.skip("a few orders suffice for the reversed dims")
    a = RNG.standard_normal((3, 2, 4))
    check(lambda m, x: m.linalg.matrix_norm(x, ord, dim, keepdim), [(a, True)], **F64)


def test_matrix_norm_errors():
    both(lambda m: m.linalg.matrix_norm(m.ones(3)))
    both(lambda m: m.linalg.matrix_norm(m.ones(3, 3), 3))
    both(lambda m: m.linalg.matrix_norm(m.ones(3, 3), "abc"))
    both(lambda m: m.linalg.matrix_norm(m.ones(3, 3, dtype=m.long)))


@pytest.mark.parametrize(
    "args",
    [
        dict(),
        dict(ord=1),
        dict(ord="fro"),
        dict(ord="nuc"),
        dict(ord=2),
        dict(ord=math.inf, dim=(0, 1)),
        dict(dim=1),
        dict(ord=3, dim=0, keepdim=True),
    ],
)
def test_linalg_norm(args):
    check(lambda m, x: m.linalg.norm(x, **args), [((3, 4), "float64", True)], **F64)


def test_linalg_norm_errors():
    both(lambda m: m.linalg.norm(m.ones(2, 2, 2), 2))
    both(lambda m: m.linalg.norm(m.ones(2, 2, 2), dim=(0, 1, 2)))
    both(lambda m: m.linalg.norm(m.ones(2, 2), "fro", dim=0))


@pytest.mark.parametrize(
    "args",
    [
        dict(),
        dict(p=1),
        dict(p="fro", dim=1),
        dict(p=3, dim=1, keepdim=True),
        dict(p="nuc"),
        dict(p=math.inf),
        dict(dim=(0, 1)),
    ],
)
def test_torch_norm(args):
    check(lambda m, x: m.norm(x, **args), [((3, 4), "float64", True)], **F64)
    check(lambda m, x: x.norm(**args), [((3, 4), "float32", True)], rtol=1e-5, atol=1e-5)


def test_torch_norm_integer_refused():
    both(lambda m: m.norm(m.ones(2, 2, dtype=m.long)))


# --- jit -----------------------------------------------------------------------------------------


def test_runs_under_jit():
    import jax

    a = _well_conditioned((3, 3))

    def step(x):
        t = lg.Tensor._make(x, lg.float64, lg.device("cpu"))
        y = lg.linalg.inv(t)
        z = lg.matmul(lg.ones(2, 3, 3, dtype=lg.float64), y)
        n = lg.linalg.matrix_norm(z, "fro") + lg.linalg.vector_norm(z, 1)
        return n._data

    eager = step(a)
    jitted = jax.jit(step)(a)
    np.testing.assert_allclose(np.asarray(jitted), np.asarray(eager), rtol=1e-12)


@pytest.mark.parametrize("shape", [(4, 3), (3, 4), (2, 3, 3)])
def test_qr_mode_r(shape):
    """mode='r': an empty Q; the node is recorded but its backward raises PyTorch's error."""
    a = RNG.standard_normal(shape)
    ta, ga = torch.tensor(a, requires_grad=True), lg.tensor(a, requires_grad=True)
    tq, tr = torch.linalg.qr(ta, mode="r")
    gq, gr = lg.linalg.qr(ga, mode="r")
    same_tensor(tq, gq)
    assert grad_fn_name(gr) == grad_fn_name(tr) == "LinalgQrBackward0"
    assert gr.requires_grad and not gr.is_leaf
    np.testing.assert_allclose(np.abs(host(gr)), np.abs(host(tr)), atol=1e-10)
    both(lambda m: m.linalg.qr(m.tensor(a, requires_grad=True), mode="r")[1].sum().backward())
    with lg.no_grad():
        assert lg.linalg.qr(ga, mode="r")[1].grad_fn is None


@pytest.mark.parametrize(
    "kw",
    [
        {},
        {"atol": 1.0},
        {"rtol": 0.5},
        {"atol": 0.1, "rtol": 0.5},
        {"atol": 0.0},
        {"hermitian": True},
        {"hermitian": True, "atol": 0.5},
        {"tol": 0.5},
    ],
)
def test_matrix_rank(kw):
    diag = np.diag([3.0, 1.0, 0.2, 0.0])
    both(lambda m: m.linalg.matrix_rank(m.tensor(diag), **kw))
    both(lambda m: m.linalg.matrix_rank(m.tensor(diag, dtype=m.float32), **kw))
    low = RNG.standard_normal((2, 5, 2)) @ RNG.standard_normal((2, 2, 5))
    if not kw.get("hermitian"):
        both(lambda m: m.linalg.matrix_rank(m.tensor(low), **kw))
        both(lambda m: m.linalg.matrix_rank(m.tensor(low[:, :, :3]), **kw))
    both(lambda m: m.linalg.matrix_rank(m.tensor(low @ low.transpose(0, 2, 1)), **kw))


def test_matrix_rank_tensor_tolerances_grad_and_errors():
    a = np.stack([np.diag([3.0, 1.0, 0.2]), np.diag([3.0, 2.0, 1.0])])
    both(lambda m: m.linalg.matrix_rank(m.tensor(a), atol=m.tensor([0.5, 1.5])))
    both(lambda m: m.linalg.matrix_rank(m.tensor(a), atol=m.tensor([0.5, 0.0]), rtol=0.1))
    both(lambda m: m.linalg.matrix_rank(m.tensor(a), atol=m.tensor(0.5), rtol=0.1))
    both(lambda m: m.linalg.matrix_rank(m.tensor(a), rtol=m.tensor([0.5, 0.1])))
    both(lambda m: m.linalg.matrix_rank(m.tensor(a), m.tensor([0.5, 1.5]), True))
    both(lambda m: m.linalg.matrix_rank(m.tensor(a, requires_grad=True)))
    both(lambda m: m.linalg.matrix_rank(m.ones(0, 3)))
    both(lambda m: m.linalg.matrix_rank(m.ones(3)))
    both(lambda m: m.linalg.matrix_rank(m.ones(3, 3, dtype=m.long)))
    both(lambda m: m.linalg.matrix_rank(m.ones(3, 3, dtype=m.int32), hermitian=True))
    both(lambda m: m.linalg.matrix_rank(m.ones(3, 4), hermitian=True))
    both(lambda m: m.linalg.matrix_rank(m.ones(3, 3), atol=m.tensor(1.0, dtype=m.complex64)))


def test_matmul_folds_only_views_whose_batch_dims_fold():
    """``should_fold`` reads the larger operand's strides: a view whose batch dims do not fold
    without a copy takes the batched path (its graph and errors are bmm's)."""

    def fn(m):
        a = m.arange(18.0, requires_grad=True)
        v = (a * 1).reshape(3, 6).unfold(1, 2, 2)
        w = (a[:12] * 1).reshape(2, 3, 2).transpose(0, 1)
        outs = [v @ m.ones(2), v @ m.ones(2, 4), m.ones(3) @ v.transpose(-1, -2)]
        outs += [w @ m.ones(2), w @ m.ones(2, 2)]
        return [(o, o.grad_fn.name()) for o in outs]

    both(fn)
    both(lambda m: m.arange(18.0).reshape(3, 6).unfold(1, 2, 2) @ m.ones(3))


def _near_identity(m, shape):
    """The identity of the square matrix ``shape`` folds to, plus a small perturbation."""
    n = math.isqrt(math.prod(shape))
    noise = m.arange(1.0, n * n + 1, dtype=m.float64).sin().view(n, n) / 10
    return (m.eye(n, dtype=m.float64) + noise).reshape(shape)


TENSOR_LINALG = {
    "tensorinv": lambda m: (
        lambda a: (lambda r: (r, r.stride(), r.sum().backward(), a.grad))(
            m.linalg.tensorinv(a, ind=2)
        )
    )(_near_identity(m, (2, 3, 2, 3)).requires_grad_()),
    "tensorinv_ind1": lambda m: m.linalg.tensorinv(_near_identity(m, (4, 2, 2)), ind=1),
    "tensorsolve": lambda m: (
        lambda A, B: (lambda x: (x, x.stride(), (x**2).sum().backward(), A.grad, B.grad))(
            m.linalg.tensorsolve(A, B)
        )
    )(
        _near_identity(m, (2, 3, 6)).requires_grad_(),
        m.arange(1.0, 7.0, dtype=m.float64).view(2, 3).cos().requires_grad_(),
    ),
    "tensorsolve_dims": lambda m: m.linalg.tensorsolve(
        _near_identity(m, (6, 2, 3)),
        m.ones(2, 3, dtype=m.float64),
        dims=(0,),
    ),
    "tensorinv_bad_ind": lambda m: m.linalg.tensorinv(m.ones(4, 6, 8, 3), ind=0),
    "tensorinv_not_square": lambda m: m.linalg.tensorinv(m.ones(4, 6, 8, 2), ind=2),
    "tensorinv_long": lambda m: m.linalg.tensorinv(m.ones(2, 2, dtype=m.long), ind=1),
    "tensorsolve_not_square": lambda m: m.linalg.tensorsolve(m.ones(2, 3, 5), m.ones(2, 3)),
}


@pytest.mark.every_case
@pytest.mark.parametrize("name", list(TENSOR_LINALG))
def test_tensorinv_and_tensorsolve(name):
    both(TENSOR_LINALG[name])


def test_tensorinv_and_tensorsolve_of_singular_inputs():
    _linalg_error(lambda m: m.linalg.tensorinv(m.zeros(2, 2, 4), ind=2))
    _linalg_error(lambda m: m.linalg.tensorsolve(m.zeros(2, 2, 4), m.zeros(2, 2)))
