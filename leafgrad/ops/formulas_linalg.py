"""PyTorch's derivative formulas for create_graph (Note [Graph formulas] in formulas.py): the
``torch.linalg`` factorizations and solvers.

The formulas follow ``tools/autograd/derivatives.yaml`` and ``FunctionsManual.cpp``
(``linalg_det_backward``, ``slogdet_backward``, ``linalg_solve_backward``,
``cholesky_backward``, ``linalg_solve_triangular_backward``) in the branch PyTorch takes when
grad mode is on (``create_graph``): there they solve with ``linalg_solve`` on ``A.mH()`` (so that
the solve is differentiable again) rather than with the saved LU factors. A result the formula
reads (``result``, ``L``, ``inverse``) is recomputed from the saved input: a node of the op's own
name over the same inputs, as PyTorch's saved output is.

``det`` picks its formula by value, as PyTorch does: an SVD formula where ``|det| < 100 eps``.
Not covered (the one-op form): complex ``slogdet``; ``det`` of a batch mixing singular and
invertible matrices, or of values that cannot be read (under ``jit``).
"""

from __future__ import annotations

import numpy as np

from .. import _tensor
from .dispatch import dispatch
from .formulas import _conj, formula, smul
from .table import OPS


def _mH(t):
    """``Tensor::mH``: the conjugate transpose of the last two dims."""
    return _conj(t.transpose(-2, -1))


def _recompute(ctx, *names, lapack: bool = False):
    """The op's result from its saved inputs (a node of the op's own name); ``lapack``: with the
    column-major strides of LAPACK's result, which PyTorch's saved result has."""
    out = dispatch(ctx.op, *(ctx[n] for n in names), **ctx.static)
    return _lapack(out) if lapack else out


def _lapack(t):
    """``t`` with the column-major strides of LAPACK's results (a batch of vectors: as one
    matrix)."""
    from .linalg_ops import _lapack_strides
    from .shape import _set_strides

    return _set_strides(t, _lapack_strides(t.shape)) if t.ndim > 1 else t


def _solve(A, B, left=True):
    """``at::linalg_solve(A, B, left)`` on a matrix right-hand side (``left=False`` solves the
    transposed system, whose result is then row-major)."""
    out = dispatch(OPS["linalg_solve_ex"], A, B, vector=False, left=bool(left))
    return _lapack(out) if left else out


def _solve_triangular(A, B, upper, left=True, unitriangular=False):
    static = {"upper": bool(upper), "left": bool(left), "unitriangular": bool(unitriangular)}
    return _lapack(dispatch(OPS["linalg_solve_triangular"], A, B, **static))


def _concrete(t) -> bool:
    import jax

    return not isinstance(t._data, jax.core.Tracer)


def _det_rhs(g, A):
    """``diag_embed(g.unsqueeze(-1).expand_as(pivots)).mT()``: ``pivots`` has ``A``'s shape
    without its last dim."""
    return g.unsqueeze(-1).expand(tuple(A.shape[:-1])).diag_embed().transpose(-2, -1)


@formula("linalg_inv_ex")
def _inv(ctx):
    # A: -at::matmul(inverse.mH(), at::matmul(grad, inverse.mH()))
    inv_h = _mH(_recompute(ctx, "A", lapack=True))
    return {"A": -(inv_h @ (ctx.grad @ inv_h))}


@formula("linalg_det")
def _det(ctx):
    # linalg_det_backward under grad mode: linalg_solve(A.mH(), d) for invertible matrices
    A, g = ctx["A"], ctx.grad
    if not isinstance(A, _tensor.Tensor) or not _concrete(A):
        return NotImplemented
    det = _recompute(ctx, "A")
    if A.numel() == 0:
        return NotImplemented
    singular = det.detach().abs() < float(np.finfo(A._data.dtype).eps) * 100
    if not bool(singular.any()):
        return {"A": _solve(_mH(A), _det_rhs(g * _conj(det), A))}
    if not bool(singular.all()):
        return NotImplemented  # PyTorch's masked mix of both formulas
    # the singular formula: through the SVD, A = U diag(S) Vh
    from .formulas_reduce import _prod_safe_zeros

    U, S, Vh = dispatch(OPS["linalg_svd"], A, full_matrices=True)
    U, Vh = _lapack(U), _lapack(Vh)
    svd_det = OPS["linalg_det"]
    alpha = _conj(dispatch(svd_det, U) * dispatch(svd_det, Vh))
    D = _prod_safe_zeros((alpha * g).unsqueeze(-1), S, S.ndim - 1)
    # the product takes U's (column-major) strides, as TensorIterator gives it
    return {"A": _lapack(U * D.unsqueeze(-2)) @ Vh}


@formula("linalg_slogdet")
def _slogdet(ctx):
    A, g = ctx["A"], ctx.grads[1]
    if A._dtype.is_complex:
        return NotImplemented
    if g is None:
        return {"A": None}
    return {"A": _solve(_mH(A), _det_rhs(g, A))}


@formula("linalg_solve_ex")
def _linalg_solve(ctx):
    # linalg_solve_backward: gB = linalg_solve(A.mH(), gX, left); gA = -gB X^H (or -X^H gB)
    A, gX, s = ctx["A"], ctx.grad, ctx.static
    left, vector = s.get("left", True), s.get("vector", False)
    gB_ = _solve(_mH(A), gX.unsqueeze(-1) if vector else gX, left)
    out = {}
    if ctx.needs("A"):
        X = _recompute(ctx, "A", "B", lapack=left)
        X_ = X.unsqueeze(-1) if vector else X
        out["A"] = -(gB_ @ _mH(X_)) if left else -(_mH(X_) @ gB_)
    if ctx.needs("B"):
        out["B"] = gB_.squeeze(-1) if vector else gB_
    return out


def cholesky_backward(gL, upper: bool, L):
    """ATen's ``cholesky_backward`` (Iain Murray, arXiv 1602.07527)."""
    if upper:
        L, gL = _mH(L), _mH(gL)
    gA = (_mH(L) @ gL).tril()
    gA = smul(gA + _mH(gA.tril(-1)), 0.5)
    gA = _solve_triangular(_mH(L), gA, upper=True, left=True)
    return _solve_triangular(L, gA, upper=False, left=False)


@formula("linalg_cholesky_ex", "cholesky")
def _cholesky(ctx):
    L = _recompute(ctx, "self", lapack=True)
    return {"self": cholesky_backward(ctx.grad, bool(ctx.static.get("upper", False)), L)}


@formula("linalg_solve_triangular")
def _linalg_solve_triangular(ctx):
    # linalg_solve_triangular_backward
    A, g, s = ctx["self"], ctx.grad, ctx.static
    upper, left, unit = s["upper"], s.get("left", True), s.get("unitriangular", False)
    G_B = _solve_triangular(_mH(A), g, not upper, left, unit)
    out = {}
    if ctx.needs("self"):
        X_H = _mH(_recompute(ctx, "self", "B", lapack=True))
        G_A = -(G_B @ X_H) if left else -(X_H @ G_B)
        out["self"] = G_A.triu(int(unit)) if upper else G_A.tril(-int(unit))
    if ctx.needs("B"):
        out["B"] = G_B
    return out


@formula("linalg_eigh")
def _eigh(ctx):
    # linalg_eig_backward(gL, gV, L, V, is_hermitian=true)
    A, grads = ctx["A"], ctx.grads
    if A._dtype.is_complex:
        return NotImplemented  # the phase-invariance check on imag(diag(V^H gV))
    gL, gV = grads[0], grads[1] if len(grads) > 1 else None
    if gL is None and gV is None:
        return {"A": None}
    L, V = dispatch(ctx.op, A, **{**ctx.static, "vectors": True})
    V = _lapack(V)
    if gV is None:
        # the product takes V's (column-major) strides, as TensorIterator gives it
        return {"A": _lapack(V * gL.unsqueeze(-2)) @ _mH(V)}
    VhgV = _mH(V) @ gV
    VhgV = smul(VhgV - _mH(VhgV), 0.5)
    Econj = L.unsqueeze(-2) - L.unsqueeze(-1)
    Econj.diagonal(0, -2, -1).fill_(1.0)
    gA = VhgV.div_(Econj)
    if gL is not None:
        gA.diagonal(0, -2, -1).copy_(gL)
    return {"A": V @ (gA @ _mH(V))}


@formula("linalg_svd")
def _svd(ctx):
    # svd_backward for a gradient of S alone (svdvals, or U and Vh unused)
    A, s, grads = ctx["A"], ctx.static, ctx.grads
    uv = s.get("uv", True)
    gU, gS, gVh = grads if uv else (None, grads[0], None)
    if gU is not None or gVh is not None:
        return NotImplemented  # the general formula: not written yet
    if gS is None:
        return {"A": None}
    full = bool(s.get("full_matrices", True)) and uv
    U, S, Vh = dispatch(ctx.op, A, full_matrices=full, uv=True)
    U, Vh = _lapack(U), _lapack(Vh)
    k = S.shape[-1]
    if full:  # derivatives.yaml narrows U and Vh to the k singular vectors
        U, Vh = U.narrow(-1, 0, k), Vh.narrow(-2, 0, k)
    m, n = A.shape[-2], A.shape[-1]
    # the products take U's or Vh's (column-major) strides, as TensorIterator gives them
    if m >= n:
        return {"A": U @ _lapack(gS.unsqueeze(-1) * Vh)}
    return {"A": _lapack(U * gS.unsqueeze(-2)) @ Vh}


@formula("linalg_cross")
def _linalg_cross(ctx):
    """``self: linalg_cross(other.conj(), grad, dim)``, ``other: linalg_cross(grad,
    self.conj(), dim)``: the gradients are cross products themselves."""
    a, b, g = ctx["self"], ctx["other"], ctx.grad
    out, dim = {}, ctx.static["dim"]
    if ctx.needs("self"):
        if b is None:
            return NotImplemented
        out["self"] = dispatch(OPS["linalg_cross"], _conj(b), g, dim=dim)
    if ctx.needs("other"):
        if a is None:
            return NotImplemented
        out["other"] = dispatch(OPS["linalg_cross"], g, _conj(a), dim=dim)
    return out
