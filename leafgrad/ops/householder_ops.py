"""``torch.cholesky_inverse``, ``torch.cholesky_solve`` and ``torch.linalg.householder_product``
(``torch.orgqr``).

``cholesky_solve(B, L)`` solves ``L L^H X = B`` (``U^H U X = B`` with ``upper``) by two
triangular solves (LAPACK's potrs, which reads one triangle of ``L``); its derivative, as
PyTorch's formula, is that of ``(L L^H)^-1 B`` in the whole of ``L``.

``cholesky_inverse(L)`` is ``(L L^H)^-1`` from a Cholesky factor (``U^H U`` with ``upper``): two
triangular solves against the identity, LAPACK's potri. ``householder_product(A, tau)`` is the
first ``n`` columns of ``H_1 ... H_k``, ``H_i = I - tau_i v_i v_i^H`` with ``v_i`` the ``i``-th
column of ``A`` below the diagonal and a one on it (LAPACK's orgqr). JAX's LAPACK call for the
latter has no derivative, so it is written as the product itself (``k`` rank-one updates), whose
VJP is the gradient PyTorch's formula gives. Both results are column-major, as LAPACK's.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from .. import _autocast
from .. import _dtype as D
from .._known import physical_values
from ..autograd import forward_ad
from . import shape as _shape_ops
from .api import refuse_backward, refuse_complex_autograd, register_ops, tensor_op
from .dispatch import dispatch
from .formulas import formula
from .linalg_ops import LinAlgError, _lapack_strides, _mH, _name, _return_type
from .table import OPS, OpDef

__all__ = [
    "cholesky_inverse",
    "cholesky_solve",
    "geqrf",
    "householder_product",
    "orgqr",
    "triangular_solve",
]

CHOLESKY_INVERSE_SINGULAR = (
    "cholesky_inverse: {}The diagonal element {} is zero, the inversion could not be completed "
    "because the input matrix is singular."
)
HOUSEHOLDER = "torch.linalg.householder_product: "
GEQRF_NO_DERIVATIVE = "the derivative for 'geqrf' is not implemented."


@functools.partial(jax.custom_jvp, nondiff_argnums=(1,))
def _potri(L, upper):
    n = L.shape[-1]
    eye = jnp.broadcast_to(jnp.eye(n, dtype=L.dtype), L.shape)
    # A = L L^H: A^-1 = L^-H L^-1; with upper, A = U^H U: A^-1 = U^-1 U^-H
    lower = not upper
    y = lax.linalg.triangular_solve(
        L, eye, left_side=True, lower=lower, transpose_a=upper, conjugate_a=upper
    )
    return lax.linalg.triangular_solve(
        L, y, left_side=True, lower=lower, transpose_a=lower, conjugate_a=lower
    )


@_potri.defjvp
def _potri_jvp(upper, primals, tangents):
    """The derivative of ``(L L^H)^-1`` in the whole of ``L`` (PyTorch's formula differentiates
    the product, not the triangle LAPACK reads)."""
    (L,), (dL,) = primals, tangents
    X = _potri(L, upper)
    dA = _mH(dL) @ L + _mH(L) @ dL if upper else dL @ _mH(L) + L @ _mH(dL)
    return X, -(X @ dA @ X)


def _cholesky_inverse_jvp(upper, primals, tangents):
    """PyTorch's ``cholesky_inverse_jvp``: ``P + P^H`` with ``P = -X dC X C``, where ``C`` is
    ``L^H`` and ``dC`` is ``dL`` (``U`` and ``dU^H`` with ``upper``), the whole of both (Note
    [Whole tangents]: not the derivative of the value)."""
    (L,), (dL,) = primals, tangents
    X = _potri(L, upper)
    C, dC = (L, _mH(dL)) if upper else (_mH(L), dL)
    P = -(X @ dC @ X @ C)
    return P + _mH(P)


def _cholesky_inverse(L, upper=False):
    if forward_ad.JVP_TRACING[0]:
        return forward_ad.forward_formula(
            functools.partial(_potri, upper=upper),
            functools.partial(_cholesky_inverse_jvp, upper),
            L,
        )
    return _potri(L, upper)


def _potrs_value(B, L, upper):
    lower = not upper
    y = lax.linalg.triangular_solve(
        L, B, left_side=True, lower=lower, transpose_a=upper, conjugate_a=upper
    )
    return lax.linalg.triangular_solve(
        L, y, left_side=True, lower=lower, transpose_a=lower, conjugate_a=lower
    )


@functools.partial(jax.custom_jvp, nondiff_argnums=(2,))
def _potrs(B, L, upper):
    return _potrs_value(B, L, upper)


@_potrs.defjvp
def _potrs_jvp(upper, primals, tangents):
    """PyTorch's ``cholesky_solve_jvp``: ``cholesky_solve(dB - (dK + dK^H) X)`` with ``dK =
    dL L^H`` (``dU^H U``), in the whole of ``L``."""
    (B, L), (dB, dL) = primals, tangents
    X = _potrs_value(B, L, upper)
    dK = _mH(dL) @ L if upper else dL @ _mH(L)
    return X, _potrs_value(dB - (dK + _mH(dK)) @ X, L, upper)


def _triangular_solve_value(b, A, upper, transpose, unitriangular):
    batch = jnp.broadcast_shapes(b.shape[:-2], A.shape[:-2])
    b = jnp.broadcast_to(b, batch + b.shape[-2:])
    A = jnp.broadcast_to(A, batch + A.shape[-2:])
    x = lax.linalg.triangular_solve(
        A, b, left_side=True, lower=not upper, transpose_a=transpose, unit_diagonal=unitriangular
    )
    return x, A


def _triangular_solve_jvp(options, primals, tangents):
    """PyTorch's ``triangular_solve_jvp``: the same solve of ``db - dA x``, with the whole of
    ``dA``, untransposed under ``transpose`` (Note [Whole tangents]); the cloned coefficient's
    tangent is ``dA``."""
    (b, A), (db, dA) = primals, tangents
    x, A = _triangular_solve_value(b, A, *options)
    rhs = jnp.zeros_like(x) if db is None else jnp.broadcast_to(db, x.shape)
    if dA is not None:
        rhs = rhs - jnp.broadcast_to(dA, A.shape) @ x
    dx = _triangular_solve_value(rhs, A, *options)[0]
    return dx, jnp.zeros_like(A) if dA is None else jnp.broadcast_to(dA, A.shape)


def _triangular_solve(b, A, upper=True, transpose=False, unitriangular=False):
    """``(A^-1 b, A)`` (``A^-T b`` with ``transpose``), batches broadcast; JAX's derivative in
    ``A`` is in the triangle it reads (without the diagonal if unit), as PyTorch's backward
    formula; forward-mode AD takes PyTorch's forward formula."""
    options = (upper, transpose, unitriangular)
    if forward_ad.JVP_TRACING[0]:
        return forward_ad.forward_formula(
            lambda b, A: _triangular_solve_value(b, A, *options),
            functools.partial(_triangular_solve_jvp, options),
            b,
            A,
        )
    return _triangular_solve_value(b, A, *options)


def _cholesky_solve(B, L, upper=False):
    batch = jnp.broadcast_shapes(B.shape[:-2], L.shape[:-2])
    B = jnp.broadcast_to(B, batch + B.shape[-2:])
    L = jnp.broadcast_to(L, batch + L.shape[-2:])
    return _potrs(B, L, upper)


def _householder_product(a, tau):
    m, n = a.shape[-2], a.shape[-1]
    k = tau.shape[-1]
    q = jnp.broadcast_to(jnp.eye(m, n, dtype=a.dtype), a.shape)
    rows = jnp.arange(m)
    for i in reversed(range(k)):  # Q = H_1 (H_2 (... (H_k I)))
        v = jnp.where(rows > i, a[..., :, i], jnp.where(rows == i, 1, 0).astype(a.dtype))
        w = jnp.einsum("...m,...mn->...n", jnp.conj(v), q)
        q = q - tau[..., i, None, None] * v[..., :, None] * w[..., None, :]
    return q


def _ormqr(a, tau, c, left=True, transpose=False):
    """``Q @ c`` (or ``Q^H``, or from the right) with ``Q = H_1 ... H_k`` the reflectors stored
    in ``a`` and ``tau`` (LAPACK's ``ormqr``), applied one by one without forming ``Q``."""
    batch = jnp.broadcast_shapes(a.shape[:-2], c.shape[:-2])
    c = jnp.broadcast_to(c, batch + c.shape[-2:])
    m = a.shape[-2]
    k = tau.shape[-1]
    rows = jnp.arange(m)
    order = range(k) if left == transpose else reversed(range(k))
    for i in order:
        v = jnp.where(rows > i, a[..., :, i], jnp.where(rows == i, 1, 0).astype(a.dtype))
        t = jnp.conj(tau[..., i]) if transpose else tau[..., i]
        if left:  # c - t v (v^H c)
            w = jnp.einsum("...m,...mn->...n", jnp.conj(v), c)
            c = c - t[..., None, None] * v[..., :, None] * w[..., None, :]
        else:  # c - t (c v) v^H
            w = jnp.einsum("...nm,...m->...n", c, v)
            c = c - t[..., None, None] * w[..., :, None] * jnp.conj(v)[..., None, :]
    return c


def _first_rule(meta, static):
    return (None,) * len(meta), meta[0][0]


register_ops(
    OpDef(
        "ormqr",
        _ormqr,
        "OrmqrBackward0",
        ("self", "input2", "input3"),
        _first_rule,
        saves={
            "self": ("self", "input2", "input3", "result"),
            "input2": ("self", "input2", "input3", "result"),
            "input3": ("self", "input2", "input3", "result"),
        },
    ),
    OpDef(
        "cholesky_inverse",
        _cholesky_inverse,
        "CholeskyInverseBackward0",
        ("self",),
        _first_rule,
        saves={"self": ("self", "result")},
    ),
    OpDef(
        "cholesky_solve",
        _cholesky_solve,
        "CholeskySolveBackward0",
        ("self", "input2"),
        _first_rule,
        saves={"self": ("self", "input2", "result"), "input2": ("self", "input2", "result")},
    ),
    OpDef(
        "triangular_solve",
        _triangular_solve,
        "TriangularSolveBackward0",
        ("self", "A"),
        lambda meta, static: ((None, None), (meta[0][0], meta[0][0])),
        saves={"self": ("self", "A", "result"), "A": ("self", "A", "result")},
        n_out=2,
    ),
    OpDef(
        "linalg_householder_product",
        _householder_product,
        "LinalgHouseholderProductBackward0",
        ("input", "tau"),
        _first_rule,
        saves={"input": ("input", "tau", "result"), "tau": ("input", "tau", "result")},
    ),
)


@formula("cholesky_inverse")
def _cholesky_inverse_grad(ctx):
    """``cholesky_inverse_backward``: ``-(X (G + G^H) X) L`` (``-U (X (G + G^H) X)``)."""
    L, g = ctx["self"], ctx.grad
    # the saved result, or the same op recomputed from the saved input (the same node and values)
    X = (
        ctx._result
        if ctx._result is not None
        else dispatch(OPS["cholesky_inverse"], L, **ctx.static)
    )
    common = X.matmul((g + g.mH).matmul(X))
    return {"self": -(L.matmul(common)) if ctx.static.get("upper") else -(common.matmul(L))}


def _linear_solve_checks(name: str, b, A) -> None:
    """PyTorch's ``linearSolveCheckInputs`` and batch broadcast, in its order."""
    from .. import _errors as E
    from .dispatch import broadcast_shapes

    if b.dtype != A.dtype:
        raise RuntimeError(
            f"Expected b and A to have the same dtype, but found b of type "
            f"{E.scalar_type_name(b.dtype)} and A of type {E.scalar_type_name(A.dtype)} instead."
        )
    m, n = A.shape[-2], A.shape[-1]
    if m != n:
        raise RuntimeError(
            f"A must be batches of square matrices, but they are {m} by {n} matrices"
        )
    if n != b.shape[-2]:
        raise RuntimeError(
            f"Incompatible matrix sizes for {name}: each A matrix is {n} by {n} but each b matrix "
            f"is {b.shape[-2]} by {b.shape[-1]}"
        )
    broadcast_shapes(tuple(b.shape[:-2]), tuple(A.shape[:-2]))


@formula("cholesky_solve")
def _cholesky_solve_grad(ctx):
    """``cholesky_solve_backward``: ``G = cholesky_solve(grad, L)``, then ``-(C L)`` (``-(U C)``)
    with ``C = G X^H + X G^H``."""
    B, L, g = ctx["self"], ctx["input2"], ctx.grad
    if B is None or L is None:
        return NotImplemented
    upper = ctx.static.get("upper", False)
    X = dispatch(OPS["cholesky_solve"], B, L, **ctx.static)
    grad_self = dispatch(OPS["cholesky_solve"], g, L, **ctx.static)
    common = grad_self.matmul(X.mH)
    common = common + common.mH
    return {"self": grad_self, "input2": -(L.matmul(common)) if upper else -(common.matmul(L))}


@tensor_op("cholesky_solve")
@_autocast.policy("fp32")
def cholesky_solve(input, input2, upper=False, *, out=None):
    """``torch.cholesky_solve``: ``X`` with ``L L^H X = input`` (``U^H U X`` with ``upper``) from
    the Cholesky factor ``input2``, batches broadcast (CholeskySolveBackward0)."""
    from .. import _errors as E

    if not isinstance(upper, bool):
        raise TypeError(
            E.MUST_BE.format("cholesky_solve", "upper", 3, "bool", E.py_typename(upper))
        )
    if input.ndim < 2:
        raise RuntimeError(
            f"b should have at least 2 dimensions, but has {input.ndim} dimensions instead"
        )
    if input2.ndim < 2:
        raise RuntimeError(
            f"u should have at least 2 dimensions, but has {input2.ndim} dimensions instead"
        )
    _linear_solve_checks("cholesky_solve", input, input2)
    if not (input.dtype.is_floating_point or input.dtype.is_complex) or input.dtype in (
        D.float16,
        D.bfloat16,
    ):
        raise NotImplementedError(
            f"\"cholesky_solve_cpu\" not implemented for '{_name(input.dtype)}'"
        )
    static = {"upper": True} if upper else {}
    out = dispatch(OPS["cholesky_solve"], input, input2, **static)
    return _shape_ops._set_strides(out, _lapack_strides(out.shape))


_TRIANGULAR_SOLVE_DEPRECATED = (
    "torch.triangular_solve is deprecated in favor of torch.linalg.solve_triangularand will be "
    "removed in a future PyTorch release.\ntorch.linalg.solve_triangular has its arguments "
    "reversed and does not return a copy of one of the inputs.\nX = torch.triangular_solve(B, "
    "A).solution\nshould be replaced with\nX = torch.linalg.solve_triangular(A, B). (Triggered "
    "internally at /__w/pytorch/pytorch/aten/src/ATen/native/BatchLinearAlgebra.cpp:2273.)"
)


_TRIANGULAR_SOLVE_TYPE = _return_type("triangular_solve", ("solution", "cloned_coefficient"))


@tensor_op("triangular_solve")
@_autocast.policy("fp32")
def triangular_solve(input, A, upper=True, transpose=False, unitriangular=False, *, out=None):
    """``torch.triangular_solve`` (deprecated by PyTorch): ``(solution, cloned_coefficient)`` of
    ``A X = input`` with ``A`` triangular (TriangularSolveBackward0)."""
    from .. import _errors as E

    for name, t in (("b", input), ("A", A)):
        if t.ndim < 2:
            raise RuntimeError(
                f"torch.triangular_solve: Expected {name} to have at least 2 dimensions, but it "
                f"has {t.ndim} dimensions instead"
            )
    _linear_solve_checks("triangular_solve", input, A)
    E.warn_once(_TRIANGULAR_SOLVE_DEPRECATED)  # TORCH_WARN_ONCE, at the user's line
    if not (input.dtype.is_floating_point or input.dtype.is_complex) or input.dtype in (
        D.float16,
        D.bfloat16,
    ):
        raise NotImplementedError(
            f"\"triangular_solve_cpu\" not implemented for '{_name(input.dtype)}'"
        )
    static = {
        "upper": bool(upper),
        "transpose": bool(transpose),
        "unitriangular": bool(unitriangular),
    }
    x, M = dispatch(OPS["triangular_solve"], input, A, **static)
    if forward_ad.tangent_of(x) is not None:
        E.warn_once(_TRIANGULAR_SOLVE_DEPRECATED)  # PyTorch's forward formula calls it again
    x = _shape_ops._set_strides(x, _lapack_strides(x.shape))
    M = _shape_ops._set_strides(M, _lapack_strides(M.shape))
    return _TRIANGULAR_SOLVE_TYPE((x, M))


def _zero_diagonal_report(L) -> None:
    data = physical_values(L._data)  # inside vmap: the physical batch, as PyTorch's rule
    if data is None or data.size == 0:
        return
    diag = np.diagonal(data, axis1=-2, axis2=-1).reshape(-1, data.shape[-1])
    zero = diag == 0
    if zero.any():
        b = int(np.argmax(zero.any(axis=1)))
        prefix = f"(Batch element {b}): " if data.ndim > 2 else ""
        index = int(np.argmax(zero[b])) + 1
        raise LinAlgError(CHOLESKY_INVERSE_SINGULAR.format(prefix, index))


@tensor_op("cholesky_inverse")
@_autocast.policy("fp32")
def cholesky_inverse(input, upper=False, *, out=None):
    """``torch.cholesky_inverse``: the inverse of ``L L^H`` (``U^H U`` with ``upper``) from its
    Cholesky factor (CholeskyInverseBackward0); a zero on the diagonal raises LinAlgError."""
    if input.ndim < 2:
        raise RuntimeError("cholesky_inverse: The input tensor A must have at least 2 dimensions.")
    m, n = input.shape[-2], input.shape[-1]
    if m != n:
        raise RuntimeError(
            f"cholesky_inverse: A must be batches of square matrices, but they are {m} by {n} "
            "matrices"
        )
    if not (input.dtype.is_floating_point or input.dtype.is_complex) or input.dtype in (
        D.float16,
        D.bfloat16,
    ):
        raise NotImplementedError(
            f"\"cholesky_inverse_out_cpu\" not implemented for '{_name(input.dtype)}'"
        )
    _zero_diagonal_report(input)
    static = {"upper": True} if upper else {}
    out = dispatch(OPS["cholesky_inverse"], input, **static)
    return _shape_ops._set_strides(out, _lapack_strides(out.shape))


@_autocast.policy("fp32")
def householder_product(input, tau, *, out=None):
    """``torch.linalg.householder_product``: the first ``n`` columns of the product of the
    Householder reflectors stored in ``input`` and ``tau`` (LinalgHouseholderProductBackward0)."""
    if input.ndim < 2:
        raise RuntimeError(HOUSEHOLDER + "input must have at least 2 dimensions.")
    m, n = input.shape[-2], input.shape[-1]
    if m < n:
        raise RuntimeError(
            HOUSEHOLDER + "input.shape[-2] must be greater than or equal to input.shape[-1]"
        )
    if tau.ndim and tau.shape[-1] > n:
        raise RuntimeError(
            HOUSEHOLDER + "input.shape[-1] must be greater than or equal to tau.shape[-1]"
        )
    if tau.ndim != input.ndim - 1 or tuple(tau.shape[:-1]) != tuple(input.shape[:-2]):
        raise RuntimeError(
            HOUSEHOLDER + "Expected batch dimensions of tau to be equal to input.shape[:-2], but "
            f"got [{', '.join(map(str, tau.shape[:-1]))}]"
        )
    if tau.dtype is not input.dtype:
        raise RuntimeError(
            HOUSEHOLDER + f"tau dtype {_name(tau.dtype)} does not match input dtype "
            f"{_name(input.dtype)}"
        )
    result = dispatch(OPS["linalg_householder_product"], input, tau)
    return _shape_ops._set_strides(result, _lapack_strides(result.shape))


ORMQR = "torch.ormqr: "


@tensor_op("ormqr")
@_autocast.policy("fp32")
def ormqr(input, input2, input3, left=True, transpose=False, *, out=None):
    """``torch.ormqr``: multiply ``input3`` by the orthogonal ``Q`` of ``geqrf``'s
    ``(input, input2)``: ``Q @ C``, ``Q^H @ C``, ``C @ Q`` or ``C @ Q^H`` (OrmqrBackward0)."""
    a, tau, c = input, input2, input3
    if a.ndim < 2:
        raise RuntimeError(ORMQR + "input must have at least 2 dimensions.")
    if c.ndim < 2:
        raise RuntimeError(ORMQR + "other must have at least 2 dimensions.")
    side = -2 if left else -1
    if c.shape[side] != a.shape[-2]:
        which = "other.shape[-2]" if left else "other.shape[-1]"
        raise RuntimeError(ORMQR + f"{which} must be equal to input.shape[-2]")
    if tau.ndim != a.ndim - 1:
        raise RuntimeError(
            ORMQR + "Expected tau to have one dimension less than input, but got tau.ndim "
            f"equal to {tau.ndim} and input.ndim is equal to {a.ndim}"
        )
    if tau.shape[-1] != min(c.shape[side], a.shape[-1]):
        which = "other.shape[-2]" if left else "other.shape[-1]"
        raise RuntimeError(ORMQR + f"tau.shape[-1] must be equal to min({which}, input.shape[-1])")
    if a.ndim > 2:
        if tuple(tau.shape[:-1]) != tuple(a.shape[:-2]):
            raise RuntimeError(
                ORMQR + "Expected batch dimensions of tau to be equal to input.shape[:-2], but "
                f"got [{', '.join(map(str, tau.shape[:-1]))}]"
            )
        if tuple(c.shape[:-2]) != tuple(a.shape[:-2]):
            raise RuntimeError(
                ORMQR + "Expected batch dimensions of other to be equal to input.shape[:-2], "
                f"but got [{', '.join(map(str, c.shape[:-2]))}]"
            )
    for name, t in (("tau", tau), ("other", c)):
        if t.dtype is not a.dtype:
            raise RuntimeError(
                ORMQR + f"Expected input and {name} to have the same dtype, but input has "
                f"dtype{_name(a.dtype)} and {name} has dtype {_name(t.dtype)}"
            )
    if not (a.dtype.is_floating_point or a.dtype.is_complex) or a.dtype in (
        D.float16,
        D.bfloat16,
    ):
        raise NotImplementedError(f"\"ormqr_cpu\" not implemented for '{a.dtype._legacy}'")
    result = dispatch(OPS["ormqr"], a, tau, c, left=bool(left), transpose=bool(transpose))
    return _shape_ops._set_strides(result, _lapack_strides(result.shape))


@tensor_op("orgqr")
@_autocast.policy("fp32")
def orgqr(input, input2, *, out=None):
    """``torch.orgqr``: ``torch.linalg.householder_product``."""
    return householder_product(input, input2)


# --- geqrf: the reflectors householder_product takes --------------------------------------------


def _geqrf(a):
    h, tau = jnp.linalg.qr(a, mode="raw")  # LAPACK's geqrf, its matrix transposed
    return jnp.swapaxes(h, -1, -2), tau


def _geqrf_rule(meta, static):
    dt = meta[0][0]
    return (None,), (dt, dt)


register_ops(OpDef("geqrf", _geqrf, "GeqrfBackward0", ("self",), _geqrf_rule, n_out=2))

geqrf_type = _return_type("geqrf", ("a", "tau"))


@tensor_op("geqrf")
@_autocast.policy("fp32")
def geqrf(input, *, out=None):
    """``torch.geqrf``: LAPACK's QR factorisation as Householder reflectors ``(a, tau)``; as in
    PyTorch, it has no derivative (GeqrfBackward0 raises)."""
    if input.ndim < 2:
        raise RuntimeError("torch.geqrf: input must have at least 2 dimensions.")
    if not (input.dtype.is_floating_point or input.dtype.is_complex) or input.dtype in (
        D.float16,
        D.bfloat16,
    ):
        raise NotImplementedError(f"\"geqrf_cpu\" not implemented for '{_name(input.dtype)}'")
    a, tau = refuse_complex_autograd(dispatch(OPS["geqrf"], input), "geqrf")
    refuse_backward(a, lambda: NotImplementedError(GEQRF_NO_DERIVATIVE))
    _shape_ops._set_strides(a, _lapack_strides(a.shape))
    return geqrf_type((a, tau))
