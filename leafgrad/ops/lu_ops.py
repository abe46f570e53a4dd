"""LU factorisation with partial pivoting: ``linalg.lu_factor``, ``lu_factor_ex``, ``lu``,
``lu_solve``, ``linalg.solve_ex``, and the older ``torch.lu``/``lu_solve``/``lu_unpack``.

JAX's ``lax.linalg.lu`` is LAPACK's getrf (the same packed ``LU``: unit lower triangle below the
diagonal, ``U`` on and above); its pivots are 0-based, PyTorch's 1-based int32. Gradients are JAX's
VJPs of the same functions, which equal PyTorch's formulas where the factorisation is
differentiable (distinct pivots).
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
from jax import lax

from .. import _autocast
from .. import _dtype as D
from .. import _errors as E
from .._arg_check import check_bool
from .._known import physical_values
from .._tensor import Tensor
from ..autograd import grad_mode
from . import shape as _shape_ops
from .api import register_ops, tensor_op
from .dispatch import broadcast_shapes, dispatch
from .linalg_ops import (
    LinAlgError,
    _concrete,
    _finite,
    _getrf_info,
    _lapack_strides,
    _name,
    _real_of,
    _return_type,
    _solve_unchecked,
)
from .table import OPS, OpDef

__all__ = ["lu", "lu_solve", "lu_unpack"]

LU_ZERO_PIVOT = (
    "torch.{}: U[{k},{k}] is zero and using it on lu_solve would result in a division by zero. "
    "If you still want to perform the factorization, consider calling linalg.lu(A, pivot) or "
    "linalg.lu_factor_ex(A, pivot)"
)
NO_PIVOT = "linalg.lu_factor: LU without pivoting is not implemented on the CPU"
LU_2D = "torch.lu_factor: Expected tensor with 2 or more dimensions. Got size: [{}] instead"
LU_TORCH_DEPRECATED = (
    "torch.lu is deprecated in favor of torch.linalg.lu_factor / torch.linalg.lu_factor_ex and "
    "will be removed in a future PyTorch release.\nLU, pivots = torch.lu(A, compute_pivots)\n"
    "should be replaced with\nLU, pivots = torch.linalg.lu_factor(A, compute_pivots)\nand\n"
    "LU, pivots, info = torch.lu(A, compute_pivots, get_infos=True)\nshould be replaced with\n"
    "LU, pivots, info = torch.linalg.lu_factor_ex(A, compute_pivots) (Triggered internally at "
    "/__w/pytorch/pytorch/aten/src/ATen/native/BatchLinearAlgebra.cpp:2073.)"
)
LU_SOLVE_DEPRECATED = (
    "torch.lu_solve is deprecated in favor of torch.linalg.lu_solveand will be removed in a "
    "future PyTorch release.\nNote that torch.linalg.lu_solve has its arguments reversed.\n"
    "X = torch.lu_solve(B, LU, pivots)\nshould be replaced with\n"
    "X = torch.linalg.lu_solve(LU, pivots, B) (Triggered internally at "
    "/__w/pytorch/pytorch/aten/src/ATen/native/BatchLinearAlgebra.cpp:2230.)"
)


# --- array functions -----------------------------------------------------------------------------


def _lu_factor(a):
    lu, pivots, _ = lax.linalg.lu(a)
    return lu, (pivots + 1).astype(jnp.int32), _getrf_info(lu)


def _permutation(pivots, m):
    """The row order ``perm`` with ``A[perm] = L @ U``, from 1-based LAPACK pivots."""
    return lax.linalg.lu_pivots_to_permutation(pivots.astype(jnp.int32) - 1, m)


def _unpack(lu, pivots):
    """``(P, L, U)`` with ``A = P @ L @ U`` from a packed factorisation."""
    m, n = lu.shape[-2], lu.shape[-1]
    k = min(m, n)
    eye = jnp.eye(m, k, dtype=lu.dtype)
    lower = jnp.tril(lu[..., :, :k], -1) + eye
    upper = jnp.triu(lu[..., :k, :])
    perm = _permutation(pivots, m)
    p = jnp.swapaxes(jnp.eye(m, dtype=lu.dtype)[perm], -1, -2)
    return p, lower, upper


def _lu(a):
    lu, pivots, _ = lax.linalg.lu(a)
    return _unpack(lu, (pivots + 1).astype(jnp.int32))


def _lu_solve(lu, pivots, b, left=True, adjoint=False):
    """``X`` with ``op(A) X = B`` (``left``) or ``X op(A) = B``, ``A = P L U``, ``op`` the
    conjugate transpose when ``adjoint``."""
    n = lu.shape[-1]
    batch = jnp.broadcast_shapes(lu.shape[:-2], b.shape[:-2], pivots.shape[:-1])
    lu = jnp.broadcast_to(lu, (*batch, n, n))
    pivots = jnp.broadcast_to(pivots, (*batch, n))
    b = jnp.broadcast_to(b, (*batch, *b.shape[-2:]))
    perm = _permutation(pivots, n)
    if not left:  # X op(A) = B  <=>  op(A)^T X^T = B^T
        b = jnp.swapaxes(b, -1, -2)
        if adjoint:  # (A^H)^T = conj(A): solve conj(A) X^T = B^T
            lu = jnp.conj(lu)
            adjoint = False
            transpose = False
        else:
            transpose = True
    else:
        transpose = adjoint
    conj = adjoint and jnp.iscomplexobj(lu)
    if not transpose:
        y = jnp.take_along_axis(b, perm[..., :, None], axis=-2)  # P^T B
        y = lax.linalg.triangular_solve(lu, y, left_side=True, lower=True, unit_diagonal=True)
        x = lax.linalg.triangular_solve(lu, y, left_side=True, lower=False)
    else:  # A^T = U^T L^T P^T: X = P L^-T U^-T B
        y = lax.linalg.triangular_solve(
            lu, b, left_side=True, lower=False, transpose_a=True, conjugate_a=conj
        )
        y = lax.linalg.triangular_solve(
            lu,
            y,
            left_side=True,
            lower=True,
            unit_diagonal=True,
            transpose_a=True,
            conjugate_a=conj,
        )
        inverse = jnp.argsort(perm, axis=-1)
        x = jnp.take_along_axis(y, inverse[..., :, None], axis=-2)
    return jnp.swapaxes(x, -1, -2) if not left else x


def _lu_unpack(lu, pivots):
    return _unpack(lu, pivots)


# --- dtype rules ---------------------------------------------------------------------------------


def _factor_rule(meta, static):
    dt = meta[0][0]
    return (None,), (dt, D.int32, D.int32)


def _triple_rule(meta, static):
    """Three results of the first operand's dtype (P, L, U)."""
    dt = meta[0][0]
    return (None,) * len(meta), (dt, dt, dt)


def _solve_rule(meta, static):
    lu, b = meta[0][0], meta[2][0]
    if lu is not b:
        raise RuntimeError(
            "linalg.lu_solve: Expected LU and B to have the same dtype, but found LU of type "
            f"{_name(lu)} and B of type {_name(b)} instead"
        )
    return (None, None, None), lu


register_ops(
    OpDef(
        "linalg_lu_factor_ex",
        _lu_factor,
        "LinalgLuFactorExBackward0",
        ("A",),
        _factor_rule,
        saves={"A": ("result",)},
        n_out=3,
        differentiable_outputs=(0,),
    ),
    OpDef(
        "linalg_lu",
        _lu,
        "LinalgLuBackward0",
        ("A",),
        _triple_rule,
        saves={"A": ("result",)},
        n_out=3,
        differentiable_outputs=(1, 2),
    ),
    OpDef(
        "linalg_lu_solve",
        _lu_solve,
        "LinalgLuSolveBackward0",
        ("LU", "pivots", "B"),
        _solve_rule,
        edges=("LU", "B"),
        saves={"LU": ("LU", "pivots", "result"), "B": ("LU", "pivots")},
    ),
    OpDef(
        "lu_unpack",
        _lu_unpack,
        "LuUnpackBackward0",
        ("LU_data", "LU_pivots"),
        _triple_rule,
        edges=("LU_data",),
        n_out=3,
        differentiable_outputs=(1, 2),
    ),
)


linalg_lu_factor_type = _return_type("linalg_lu_factor", ("LU", "pivots"))
linalg_lu_factor_ex_type = _return_type("linalg_lu_factor_ex", ("LU", "pivots", "info"))
linalg_lu_type = _return_type("linalg_lu", ("P", "L", "U"))
lu_unpack_type = _return_type("lu_unpack", ("P", "L", "U"))
lu_with_info_type = _return_type("_lu_with_info", ("LU", "pivots", "info"))
linalg_solve_ex_type = _return_type("linalg_solve_ex", ("result", "info"))


# --- frontends -----------------------------------------------------------------------------------


def _check_lu_input(name: str, A, pivot: bool) -> None:
    if A.ndim < 2:
        raise RuntimeError(LU_2D.replace("torch.lu_factor", name).format(_sizes(A.shape)))
    if not (A.dtype.is_floating_point or A.dtype.is_complex):
        raise NotImplementedError(f"\"lu_cpu\" not implemented for '{_name(A.dtype)}'")
    if not pivot:
        raise RuntimeError(NO_PIVOT)


def _sizes(shape) -> str:
    return ", ".join(map(str, shape))


def _index_result(data, device, dtype=D.int32) -> Tensor:
    """An integer result computed outside the op table (info, rank): no history."""
    return Tensor._make(data, dtype, device, inference=grad_mode._state.inference)


def _factor(A, pivot: bool):
    _check_lu_input("torch.lu_factor", A, pivot)
    LU, pivots, info = dispatch(OPS["linalg_lu_factor_ex"], A)
    LU = _shape_ops._set_strides(LU, _lapack_strides(LU.shape))
    return LU, pivots, info


def _raise_on_info(info: Tensor, name: str, ndim: int) -> None:
    values = physical_values(info._data)  # inside vmap: the physical batch, as PyTorch's rule
    if values is None:
        return
    for b, k in enumerate(values.reshape(-1)):
        if k > 0:
            message = LU_ZERO_PIVOT.format(name, k=int(k))
            if values.ndim:
                message = message.replace(": U[", f": (Batch element {b}): U[", 1)
            raise RuntimeError(message)


def lu_factor_ex(A, *, pivot=True, check_errors=False, out=None):
    """``torch.linalg.lu_factor_ex``: ``(LU, pivots, info)`` (LinalgLuFactorExBackward0)."""
    LU, pivots, info = _factor(A, pivot)
    if check_errors:
        _raise_on_info(info, "linalg.lu_factor_ex", A.ndim)
    return linalg_lu_factor_ex_type((LU, pivots, info))


def lu_factor(A, *, pivot=True, out=None):
    """``torch.linalg.lu_factor``: ``(LU, pivots)``; a zero pivot raises, as PyTorch's does."""
    LU, pivots, info = _factor(A, pivot)
    _raise_on_info(info, "linalg.lu_factor", A.ndim)
    return linalg_lu_factor_type((LU, pivots))


def linalg_lu(A, *, pivot=True, out=None):
    """``torch.linalg.lu``: ``(P, L, U)`` with ``A = P @ L @ U`` (LinalgLuBackward0)."""
    _check_lu_input("linalg.lu", A, pivot)
    return linalg_lu_type(dispatch(OPS["linalg_lu"], A))


@_autocast.policy("fp32")
def lu_solve(LU, pivots, B, *, left=True, adjoint=False, out=None):
    """``torch.linalg.lu_solve``: ``X`` with ``A X = B`` (or ``X A = B``, ``A^H``) from
    ``lu_factor``'s output (LinalgLuSolveBackward0)."""
    if LU.ndim < 2:
        raise RuntimeError(
            "torch.linalg.lu_solve: The input tensor A must have at least 2 dimensions."
        )
    n = LU.shape[-1]
    if LU.shape[-2] != n:
        raise RuntimeError(
            "torch.linalg.lu_solve: A must be batches of square matrices, but they are "
            f"{LU.shape[-2]} by {n} matrices"
        )
    if B.ndim < 2:
        raise RuntimeError("linalg.lu_solve: The input tensor B must have at least 2 dimensions.")
    if LU.dtype is not B.dtype:
        _solve_rule([(LU.dtype, LU.ndim), None, (B.dtype, B.ndim)], {})
    if (B.shape[-2] if left else B.shape[-1]) != n:
        raise RuntimeError(
            "linalg.lu_solve: Incompatible shapes of A and B for the equation "
            f"{'AX = B' if left else 'XA = B'} ({n}x{n} and {B.shape[-2]}x{B.shape[-1]})"
        )
    if pivots.ndim < 1 or pivots.shape[-1] != n:
        raise RuntimeError(
            "linalg.lu_solve: Number of pivots per batch should be same as the dimension of the "
            "matrix"
        )
    if pivots.dtype is not D.int32:
        raise RuntimeError("linalg.lu_solve: pivots should be a Tensor of scalar type torch.int32")
    if tuple(pivots.shape) != tuple(LU.shape[:-1]):
        raise RuntimeError(
            "linalg.lu_solve: Expected LU.shape[:-1] and pivots.shape to be the same, but got "
            f"pivots with shape [{', '.join(map(str, pivots.shape))}] instead"
        )
    broadcast_shapes(tuple(B.shape[:-2]), tuple(LU.shape[:-2]))
    static = {}
    if not left:
        static["left"] = False
    if adjoint:
        static["adjoint"] = True
    out = dispatch(OPS["linalg_lu_solve"], LU, pivots, B, **static)
    if left:  # LAPACK's column-major result (XA = B gives its transpose)
        _shape_ops._set_strides(out, _lapack_strides(out.shape))
    return out


def solve_ex(A, B, *, left=True, check_errors=False, out=None):
    """``torch.linalg.solve_ex``: ``(result, info)`` (LinalgSolveExBackward0); ``info`` is
    LAPACK's status per matrix, and ``check_errors`` raises for a singular ``A``."""
    result = _solve_unchecked(A, B, left)
    if _concrete(result._data) and _finite(result):
        info = jnp.zeros(A.shape[:-2], jnp.int32)
    else:
        lu, _, _ = lax.linalg.lu(A._data)
        info = _getrf_info(lu)
    values = physical_values(info) if check_errors else None  # inside vmap: the physical batch
    if values is not None:
        for b, k in enumerate(values.reshape(-1)):
            if k > 0:
                prefix = f"(Batch element {b}): " if values.ndim else ""
                raise LinAlgError(
                    f"torch.linalg.solve_ex: {prefix}The solver failed because the input matrix "
                    "is singular."
                )
    return linalg_solve_ex_type((result, _index_result(info, A.device)))


@tensor_op("lu")
@_autocast.policy("fp32")
def lu(A, pivot=True, get_infos=False, out=None):
    """``torch.lu`` (deprecated in PyTorch, which warns once): ``(LU, pivots[, infos])``."""
    E.need_tensor(A, "_lu_with_info")  # PyTorch's Python-level lu passes it on
    check_bool("_lu_with_info", "pivot", pivot, None)  # PyTorch's lu passes it by keyword
    E.warn_once(LU_TORCH_DEPRECATED)
    LU, pivots, info = _factor(A, pivot)
    if get_infos:
        return lu_with_info_type((LU, pivots, info))
    return LU, pivots


@tensor_op("lu", function=False)
def _lu_method(self, pivot=True, get_infos=False):
    """``Tensor.lu`` (PyTorch's Python method: no ``out``)."""
    return lu(self, pivot, get_infos)


@tensor_op("lu_solve")
def lu_solve_deprecated(input, LU_data, LU_pivots, *, out=None):
    """``torch.lu_solve(B, LU, pivots)`` (deprecated in PyTorch, which warns once)."""
    E.warn_once(LU_SOLVE_DEPRECATED)
    return lu_solve(LU_data, LU_pivots, input)


@tensor_op("lu_unpack", method=False)
def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True, *, out=None):
    """``torch.lu_unpack``: ``(P, L, U)`` from ``lu_factor``'s output (LuUnpackBackward0)."""
    if LU_pivots.dtype is not D.int32:
        raise RuntimeError(
            "torch.lu_unpack: LU_pivots is expected to be a contiguous tensor of torch.int32 "
            "dtype.\nNote: this function is intended to be used with the output produced by "
            "torch.linalg.lu_factor"
        )
    P, L, U = dispatch(OPS["lu_unpack"], LU_data, LU_pivots)
    if not unpack_data:
        L = U = None
    if not unpack_pivots:
        P = None
    empty = jnp.zeros((0,), LU_data.dtype.np)
    return lu_unpack_type(
        tuple(
            Tensor._make(empty, LU_data.dtype, LU_data.device) if t is None else t
            for t in (P, L, U)
        )
    )


# --- least squares -------------------------------------------------------------------------------
# Note [Least squares]: every LAPACK driver PyTorch offers returns the least-squares solution of
# smallest norm for the rank it finds (``gels`` assumes full rank). leafgrad computes it as
# ``pinv(A) @ B``, with singular values at most ``rcond * s_max`` treated as zero (gelsd/gelss's
# rule; gelsy's rank estimate from a pivoted QR agrees away from the threshold), whose VJP is
# PyTorch's pinv-based formula. Which outputs are filled depends on the driver and, for the
# residuals, on the rank found, which is read on the host before the op runs.

_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


def _lstsq(a, b, rcond, residuals=False, vector=False):
    if vector:
        b = b[..., None]
    x = jnp.linalg.pinv(a, rtol=rcond) @ b
    if residuals:
        r = jnp.sum(jnp.abs(a @ x - b) ** 2, axis=-2)
    else:
        r = jnp.zeros((0,), jnp.abs(x).dtype if jnp.iscomplexobj(x) else x.dtype)
    return (x[..., 0] if vector else x), r


def _lstsq_rule(meta, static):
    a, b = meta[0][0], meta[1][0]
    if a is not b:
        raise RuntimeError(
            "torch.linalg.lstsq: Expected input and other to have the same dtype, but got "
            f"input's dtype {_name(a)} and other's dtype {_name(b)}"
        )
    return (None, None), (a, _real_of(a))


register_ops(
    OpDef(
        "linalg_lstsq",
        _lstsq,
        "LinalgLstsqBackward0",
        ("self", "b"),
        _lstsq_rule,
        saves={"self": ("self", "b", "result"), "b": ("self", "b", "result")},
        n_out=2,
    )
)

linalg_lstsq_type = _return_type(
    "linalg_lstsq", ("solution", "residuals", "rank", "singular_values")
)


@_autocast.policy("fp32")
def lstsq(A, B, rcond=None, *, driver=None):
    """``torch.linalg.lstsq``: ``(solution, residuals, rank, singular_values)`` (Note [Least
    squares]); the solution and residuals are differentiable (LinalgLstsqBackward0)."""
    if A.ndim < 2:
        raise RuntimeError("torch.linalg.lstsq: input must have at least 2 dimensions.")
    if B.ndim < 1:
        raise RuntimeError("torch.linalg.lstsq: other must have at least 1 dimension.")
    if A.dtype is not B.dtype:
        _lstsq_rule([(A.dtype, A.ndim), (B.dtype, B.ndim)], {})
    vector = B.ndim == A.ndim - 1
    if A.shape[-2] != (B.shape[-1] if vector else B.shape[-2]):
        name = "other.size(-1)" if vector else "other.size(-2)"
        raise RuntimeError(f"torch.linalg.lstsq: input.size(-2) should match {name}")
    if driver is None:
        driver = "gelsy"
    if driver not in _DRIVERS:
        raise RuntimeError(
            "torch.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)"
        )
    if not (A.dtype.is_floating_point or A.dtype.is_complex):
        raise RuntimeError(
            "torch.linalg.lstsq: Expected input and other to have the same dtype, but got input's "
            f"dtype {_name(A.dtype)} and other's dtype {_name(B.dtype)}"
        )
    if A.dtype is D.float16 or A.dtype is D.bfloat16:
        raise RuntimeError("This function doesn't handle types other than float and double")
    m, n = A.shape[-2], A.shape[-1]
    if rcond is None:
        rcond = float(np.finfo(A.dtype.np).eps) * max(m, n)
    s = jnp.linalg.svd(A._data, compute_uv=False)
    if not _concrete(s) and driver != "gelsy" and m > n:
        raise NotImplementedError(
            "leafgrad.linalg.lstsq: whether the residuals are computed depends on the rank, which "
            "cannot be read inside a trace; use driver='gelsy'"
        )
    if s.shape[-1]:
        rank = jnp.sum(s > rcond * jnp.max(s, axis=-1, keepdims=True), axis=-1)
    else:
        rank = jnp.zeros(s.shape[:-1], jnp.int64)
    full = driver == "gels" or (_concrete(rank) and bool(np.all(np.asarray(rank) == n)))
    residuals = driver != "gelsy" and m > n and full
    solution, res = dispatch(
        OPS["linalg_lstsq"], A, B, rcond=float(rcond), residuals=residuals, vector=vector
    )
    device = A.device
    real = res.dtype
    empty = jnp.zeros((0,), real.np)
    if driver == "gels":
        rank_t = _index_result(jnp.zeros((0,), jnp.int64), device, D.int64)
    else:
        rank_t = _index_result(rank.astype(jnp.int64), device, D.int64)
    if driver in ("gelsd", "gelss"):
        values = Tensor._make(s.astype(real.np), real, device)
    else:
        values = Tensor._make(empty, real, device)
    if not vector and m <= n:  # LAPACK's column-major result
        _shape_ops._set_strides(solution, _lapack_strides(solution.shape))
    return linalg_lstsq_type((solution, res, rank_t, values))
