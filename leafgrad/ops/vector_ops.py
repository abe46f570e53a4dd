"""Differences, outer-product updates, norms of differences and integrals over a dimension.

``addr``, ``renorm``, ``dist``, ``cdist`` and ``_euclidean_dist`` are table entries with PyTorch's
nodes; ``diff``, ``trapezoid`` and ``cumulative_trapezoid`` are PyTorch's compositions (slices,
subtractions, sums), recorded node for node.

Note [Norm gradients at zero]: PyTorch differentiates norms by formulas that mask the points
where JAX's VJP of the forward divides by zero (``norm_backward``: 0 where the norm is 0, and for
``p < 1`` where an element is 0; the ``cdist`` kernels: 0 where a distance is 0). The norms here
are ``jax.custom_jvp`` functions whose tangent is that formula (each formula is ``grad * w(x)``,
so the tangent is ``sum(Re(conj(w) * t))`` and its transpose gives ``grad * w``); their values are
the plain forwards.
"""

from __future__ import annotations

import functools
import math

import jax
import jax.numpy as jnp
from jax import lax

from .. import _autocast
from .. import _dtype as D
from .. import _errors as E
from .._factories import written_zeros, zeros_like
from .._tensor import Tensor, _wrap_dim
from ..autograd import saved as saved_mod
from . import shape as _shape
from .api import register_ops, tensor_op, underivable
from .dispatch import broadcast_shapes, dispatch
from .elementwise import kernel_scalar
from .inplace import inplace
from .linalg_ops import (
    BMM_DTYPE,
    EXPAND_SIZE,
    FLOAT_INPUT,
    NORM_EMPTY,
    NORM_EMPTY_DIM,
    _no_gradient,
    _norm,
    _ord_text,
)
from .table import OPS, OpDef, sub_rule

# --- messages (PyTorch's text) -------------------------------------------------------------------
DIFF_1D = "diff expects input to be at least one-dimensional"
DIFF_ORDER = "order must be non-negative but got {}"
DIFF_DIMS = "diff expects prepend or append to be the same dimension as input"
DIFF_SHAPE = (
    "diff expects the shape of tensor to prepend or append to match that of input except along "
    "the differencing dimension; input.size({}) = {}, but got tensor.size({}) = {}"
)
ADDR_1D = "addr: Expected 1-D argument {}, but got {}-D"
ADDR_BOOL = "Boolean {} only supported for Boolean results."
ADDR_INTEGRAL = "For integral input tensors, argument {} must not be a floating point number."
ADDR_2D = "2D tensor expected, got {}D tensor for input"
ADDR_SIZES = "size mismatch, input: [{}], v1: [{}], v2: [{}]"
EXPAND_DIMS = (
    "expand({}{{[{}]}}, size=[{}]): the number of sizes provided ({}) must be greater or equal to "
    "the number of dimensions in the tensor ({})"
)
RENORM_P_REAL = "renorm: p must be real-valued"
RENORM_P = "renorm: non-positive-norm not supported"
RENORM_MAX_REAL = "renorm: maxnorm must be real-valued"
RENORM_MAX = "renorm: expected maxnorm to be >= 0 but got {}"
RENORM_2D = "renorm: input needs at least 2 dimensions, got {} dimensions"
NORM_FLOAT = "norm(): input dtype should be either floating point or complex. Got {} instead."
NORM_COMPLEX_ORD = "linalg.vector_norm: Expected a non-complex scalar as the order of norm."
CDIST_2D = "cdist only supports at least 2D tensors, {} got: {}D"
CDIST_COLS = "X1 and X2 must have the same number of columns. X1: {} X2: {}"
CDIST_FLOAT = "cdist only supports floating-point dtypes, {} got: {}"
CDIST_P = "cdist only supports non-negative p values"
CDIST_MODE = "{} is not a valid value for compute_mode"
CDIST_HALF = "\"cdist\" not implemented for '{}'"
TRAPEZOID_BOOL = "{}: received a bool input for `y`, but bool is not supported"
TRAPEZOID_BOOL_X = "{}: received a bool input for `x` or `y`, but bool is not supported"
TRAPEZOID_DX = "{}: Currently, we only support dx as a real number."
TRAPEZOID_X = "{}: There must be one `x` value for each sample point"

_CDIST_MODES = {
    "use_mm_for_euclid_dist_if_necessary": 0,
    "use_mm_for_euclid_dist": 1,
    "donot_use_mm_for_euclid_dist": 2,
}
_HIGHEST = lax.Precision.HIGHEST


def _sizes(shape) -> str:
    return ", ".join(str(s) for s in shape)


def _name(d) -> str:
    return E.scalar_type_name(d)


def _real_of(dt):
    return {"complex64": D.float32, "complex128": D.float64}.get(dt.name, dt)


def _number(value):
    """A Scalar argument as PyTorch's parser reads it: numbers, or a 0-d tensor's value."""
    if isinstance(value, Tensor):
        return value.item()
    return value


def _parse(name: str, signatures, args: tuple, kwargs: dict, match=None) -> tuple:
    """``(index, {name: value})`` of the signature PyTorch's parser takes, or its TypeError.
    ``match``: the signatures to bind with, where the printed ones name a type the binder reads
    more narrowly than the parser (``float`` takes a 0-d tensor)."""
    bound = E.bind(match or signatures, args, kwargs)
    if bound is None:
        raise TypeError(E.invalid_arguments(name, signatures, args, kwargs))
    return bound


# --- forwards ------------------------------------------------------------------------------------


def _addr(x, v1, v2, beta=1, alpha=1):
    """PyTorch's ``addr`` kernel: ``beta * self + alpha * vec1 * vec2``; with a false or zero
    ``beta``, ``self`` is not read (its NaNs do not propagate)."""
    if x.dtype == jnp.bool_:
        prod = (v1[:, None] & v2[None, :]) if alpha else jnp.zeros((v1.shape[0], v2.shape[0]), bool)
        if not beta:
            return prod
        return jnp.broadcast_to(x, prod.shape) | prod
    prod = (v1 if alpha == 1 else alpha * v1)[:, None] * v2[None, :]
    if beta == 0:
        return prod
    return (x if beta == 1 else beta * x) + prod


def _renorm(x, p, dim, maxnorm):
    axes = tuple(i for i in range(x.ndim) if i != dim)
    # half and bfloat16 norms are computed in float, as PyTorch's kernel does
    low = x.dtype in (jnp.float16, jnp.bfloat16)
    norm = _norm(x.astype(jnp.float32) if low else x, p, axes, True)
    maxn = jnp.asarray(maxnorm, norm.dtype)
    eps = jnp.asarray(1e-7, norm.dtype)
    factor = jnp.where(norm > maxn, maxn / (norm + eps), jnp.ones_like(norm))
    return x * factor.astype(x.dtype)


def _dist(x, y, p):
    d = x - y
    return _norm(d, p, tuple(range(d.ndim)), False)


def _pairwise(a, b):
    """``a[..., i, :] - b[..., j, :]`` over the broadcast batch dims: ``(..., r1, r2, c)``."""
    return a[..., :, None, :] - b[..., None, :, :]


def _cdist_value(x1, x2, p):
    batch = jnp.broadcast_shapes(x1.shape[:-2], x2.shape[:-2])
    x1 = jnp.broadcast_to(x1, batch + x1.shape[-2:])
    x2 = jnp.broadcast_to(x2, batch + x2.shape[-2:])
    d = jnp.abs(_pairwise(x1, x2))
    if d.shape[-1] == 0:
        return jnp.zeros(d.shape[:-1], x1.dtype)
    if p == 0:
        return jnp.sum(jnp.minimum(jnp.ceil(d), 1), axis=-1)
    if p == 1:
        return jnp.sum(d, axis=-1)
    if p == 2:
        return jnp.sqrt(jnp.sum(d * d, axis=-1))
    if math.isinf(p):
        return jnp.max(d, axis=-1)
    return jnp.sum(d ** jnp.asarray(p, d.dtype), axis=-1) ** jnp.asarray(1.0 / p, d.dtype)


def _cdist_weights(diff, dist, p):
    """PyTorch's ``_cdist_backward`` kernels (cpu/DistanceOpsKernel.cpp) with ``grad = 1``:
    d dist / d x1 for each pair and column; x2's is its negative (the kernels are odd in diff)."""
    zero = jnp.zeros((), diff.dtype)
    sign = jnp.sign(diff)
    if p == 0:
        # zeros that still read ``diff``: the gradient keeps x1 and x2 as inputs, as PyTorch's
        # CdistBackwardBackward0 does (its own backward then raises)
        return jnp.where(diff == diff, zero, zero)
    if p == 1:
        return sign
    if math.isinf(p):
        return sign * (jnp.abs(diff) == dist).astype(diff.dtype)
    dist0 = dist == 0
    safe_dist = jnp.where(dist0, jnp.ones_like(dist), dist)
    ad = jnp.abs(diff)
    safe_ad = jnp.where(ad == 0, jnp.ones_like(ad), ad)
    if p == 2:
        return jnp.where(dist0, zero, diff / safe_dist)
    if p < 2:
        w = sign * safe_ad ** (p - 1) / safe_dist ** (p - 1)
        masked = dist0 | ((diff == 0) & (p < 1))
        return jnp.where(masked, zero, w)
    return jnp.where(dist0, zero, diff * safe_ad ** (p - 2) / safe_dist ** (p - 1))


@functools.partial(jax.custom_jvp, nondiff_argnums=(2,))
def _cdist(x1, x2, p):
    return _cdist_value(x1, x2, p)


_no_cdist_double_backward = underivable("_cdist_backward")


@_cdist.defjvp
def _cdist_jvp(p, primals, tangents):
    # The rule's primals are differentiated only by a derivative of the backward (create_graph),
    # where PyTorch's ``_cdist_backward`` has no formula (CdistBackwardBackward0 raises).
    x1, x2 = (_no_cdist_double_backward(x) for x in primals)
    t1, t2 = tangents
    out = _cdist_value(x1, x2, p)
    if x1.shape[-1] == 0:
        return out, jnp.zeros_like(out)
    w = _cdist_weights(_pairwise(x1, x2), out[..., None], p)
    return out, jnp.sum(w * _pairwise(t1, t2), axis=-1)


def _mT(x):
    return jnp.swapaxes(x, -1, -2)


def _euclidean_value(x1, x2):
    """PyTorch's ``_euclidean_dist``: one product of padded operands, ``|x1|^2 - 2 x1.x2 +
    |x2|^2``, clamped at 1e-30 before the square root."""
    n1 = jnp.sum(x1 * x1, axis=-1, keepdims=True)
    n2 = jnp.sum(x2 * x2, axis=-1, keepdims=True)
    a = jnp.concatenate([x1 * -2, n1, jnp.ones_like(n1)], axis=-1)
    b = jnp.concatenate([x2, jnp.ones_like(n2), n2], axis=-1)
    m = jnp.matmul(a, _mT(b), precision=_HIGHEST)
    return jnp.sqrt(jnp.maximum(m, jnp.asarray(1e-30, m.dtype)))


@jax.custom_jvp
def _euclidean_dist(x1, x2):
    return _euclidean_value(x1, x2)


@_euclidean_dist.defjvp
def _euclidean_jvp(primals, tangents):
    # Transposed, this is ``_euclidean_dist_backward``: ratio = grad / res (0 where res is 0),
    # x1 * ratio.sum(-1, True) - ratio @ x2 and x2 * ratio.sum(-2)[..., None] - ratio.mT @ x1.
    (x1, x2), (t1, t2) = primals, tangents
    res = _euclidean_value(x1, x2)
    num = (
        jnp.sum(x1 * t1, axis=-1)[..., :, None]
        - jnp.matmul(t1, _mT(x2), precision=_HIGHEST)
        + jnp.sum(x2 * t2, axis=-1)[..., None, :]
        - jnp.matmul(x1, _mT(t2), precision=_HIGHEST)
    )
    zero = res == 0
    return res, jnp.where(zero, jnp.zeros_like(res), num / jnp.where(zero, 1, res))


# --- dtype rules ---------------------------------------------------------------------------------


def _addr_rule(meta, static):
    rt = D.result_type_of(list(meta))
    return (rt, rt, rt), rt


def _dist_rule(meta, static):
    rt = sub_rule(meta, static)[1]
    if not (rt.is_floating_point or rt.is_complex):
        raise RuntimeError(NORM_FLOAT.format(_name(rt)))
    return (rt, rt), _real_of(rt)


def _first(meta, static):
    return (None,) * len(meta), meta[0][0]


def _as_first(meta, static):
    # an empty cdist never reads x2, whatever its dtype
    return (meta[0][0],) * len(meta), meta[0][0]


_SAVES_ALL = {"x1": ("x1", "x2", "result"), "x2": ("x1", "x2", "result")}

register_ops(
    OpDef(
        "addr",
        _addr,
        "AddrBackward0",
        ("self", "vec1", "vec2"),
        _addr_rule,
        saves={"vec1": ("vec2",), "vec2": ("vec1",)},
    ),
    OpDef("renorm", _renorm, "RenormBackward0", ("self",), _first, saves={"self": ("self",)}),
    OpDef(
        "dist",
        _dist,
        "DistBackward0",
        ("self", "other"),
        _dist_rule,
        saves={"self": ("self", "other", "result"), "other": ("self", "other", "result")},
        broadcast=True,
    ),
    OpDef("cdist", _cdist, "CdistBackward0", ("x1", "x2"), _as_first, saves=_SAVES_ALL),
    OpDef(
        "euclidean_dist",
        _euclidean_dist,
        "EuclideanDistBackward0",
        ("x1", "x2"),
        _first,
        saves=_SAVES_ALL,
    ),
)


# --- diff ----------------------------------------------------------------------------------------

_DIFF_SIGS = (
    "(Tensor input, int n = 1, int dim = -1, Tensor prepend = None, Tensor append = None)",
)
_DIFF_METHOD_SIGS = ("(int n = 1, int dim = -1, Tensor prepend = None, Tensor append = None)",)


def _diff_check_other(input: Tensor, other, dim: int) -> None:
    if other is None:
        return
    d = _wrap_dim(dim, input.ndim)
    if other.ndim != input.ndim:
        raise RuntimeError(DIFF_DIMS)
    for i in range(other.ndim):
        if i != d and other.shape[i] != input.shape[i]:
            raise RuntimeError(DIFF_SHAPE.format(i, input.shape[i], i, other.shape[i]))


def _diff(input: Tensor, n: int, dim: int, prepend, append) -> Tensor:
    """ATen's ``diff``: ``n`` times ``narrow(1) - narrow(0)`` (``logical_xor`` for bool) along
    ``dim``, after concatenating ``prepend`` and ``append``; ``n = 0`` copies the input."""
    if input.ndim < 1:
        raise RuntimeError(DIFF_1D)
    if n < 0:
        raise RuntimeError(DIFF_ORDER.format(n))
    _diff_check_other(input, prepend, dim)
    _diff_check_other(input, append, dim)
    if n == 0:  # zeros_like(self).copy_(self): a copy whose node is CopyBackwards
        return zeros_like(input).copy_(input)
    if prepend is not None or append is not None:
        parts = [t for t in (prepend, input, append) if t is not None]
        input = _shape.cat(parts, dim)
    d = _wrap_dim(dim, input.ndim)
    size = input.shape[d]
    result, out_len = input, size - 1
    for _ in range(min(n, size)):
        # the dim as given (Note [Dims as written]); PyTorch's compiled call evaluates its
        # arguments right to left: narrow(0) is made first (its node's sequence number is lower,
        # which orders the sums of the gradients)
        left = _shape.narrow(result, dim, 0, out_len)
        right = _shape.narrow(result, dim, 1, out_len)
        if result.dtype is D.bool_:
            result = _logical_xor(right, left)
        else:
            result = right - left
        out_len -= 1
    return result


def _logical_xor(a: Tensor, b: Tensor) -> Tensor:
    return Tensor.logical_xor(a, b)


def _diff_args(sigs, name, args, kwargs):
    if len(args) + len(kwargs) == 0:
        return 1, -1, None, None
    _, values = _parse(name, sigs, args, kwargs)
    return (
        values.get("n", 1),
        values.get("dim", -1),
        values.get("prepend"),
        values.get("append"),
    )


@tensor_op("diff", method=False)
def diff(*args, **kwargs) -> Tensor:
    """``torch.diff(input, n=1, dim=-1, prepend=None, append=None)``: n-th forward differences."""
    _, values = _parse("diff", _DIFF_SIGS, args, kwargs)
    return _diff(
        values["input"],
        values.get("n", 1),
        values.get("dim", -1),
        values.get("prepend"),
        values.get("append"),
    )


@tensor_op("diff", function=False)
def _diff_method(self, *args, **kwargs) -> Tensor:
    n, dim, prepend, append = _diff_args(_DIFF_METHOD_SIGS, "diff", args, kwargs)
    return _diff(self, n, dim, prepend, append)


# --- addr ----------------------------------------------------------------------------------------


def _addr_scalars(dtype, beta, alpha) -> dict:
    """PyTorch's ``check_addr_scalar`` for beta then alpha, then the values as the kernel reads
    them (c10's checked conversion to the result type)."""
    static = {}
    for name, value in (("beta", beta), ("alpha", alpha)):
        value = _number(value)
        if isinstance(value, bool) and dtype is not D.bool_:
            raise RuntimeError(ADDR_BOOL.format(name))
        if dtype._kind in "biu" and isinstance(value, (float, complex)):
            raise RuntimeError(ADDR_INTEGRAL.format(name))
        if dtype is D.bool_:
            value = bool(value)
        else:
            value = kernel_scalar(value, dtype)
        if value != 1 or isinstance(value, bool):
            static[name] = value
    return static


def _check_vectors(vec1, vec2) -> None:
    if vec1.ndim != 1:
        raise RuntimeError(ADDR_1D.format("vec1", vec1.ndim))
    if vec2.ndim != 1:
        raise RuntimeError(ADDR_1D.format("vec2", vec2.ndim))


@tensor_op("addr")
def addr(input, vec1, vec2, *, beta=1, alpha=1) -> Tensor:
    """``torch.addr``: ``beta * input + alpha * outer(vec1, vec2)`` (AddrBackward0), ``input``
    broadcast to the outer product's shape; bool tensors compute ``or`` of ``and`` s."""
    _check_vectors(vec1, vec2)
    shape = (vec1.shape[0], vec2.shape[0])
    xs = tuple(input.shape)
    if len(xs) > 2:
        raise RuntimeError(
            EXPAND_DIMS.format(
                E.tensor_type_name(input.dtype, input.device),
                _sizes(xs),
                _sizes(shape),
                2,
                len(xs),
            )
        )
    for i, size in reversed(list(enumerate(xs))):  # expand checks the last dim first
        target = shape[2 - len(xs) + i]
        if size != 1 and size != target:
            raise RuntimeError(
                EXPAND_SIZE.format(target, size, 2 - len(xs) + i, _sizes(shape), _sizes(xs))
            )
    dtype = D.result_type_of([(t._dtype, t.ndim) for t in (input, vec1, vec2)])
    return dispatch(OPS["addr"], input, vec1, vec2, **_addr_scalars(dtype, beta, alpha))


@tensor_op("addr_", function=False)
def addr_(self, vec1, vec2, *, beta=1, alpha=1) -> Tensor:
    """``Tensor.addr_``: ``self`` is not broadcast, it must be the outer product's shape."""
    _check_vectors(vec1, vec2)
    if self.ndim != 2:
        raise RuntimeError(ADDR_2D.format(self.ndim))
    if tuple(self.shape) != (vec1.shape[0], vec2.shape[0]):
        raise RuntimeError(
            ADDR_SIZES.format(_sizes(self.shape), _sizes(vec1.shape), _sizes(vec2.shape))
        )
    return inplace(self, lambda: addr(self, vec1, vec2, beta=beta, alpha=alpha), vec1, vec2)


# --- renorm --------------------------------------------------------------------------------------


def _check_renorm(input, p, dim, maxnorm) -> tuple:
    if not isinstance(dim, int) or isinstance(dim, bool):
        raise TypeError(E.MUST_BE.format("renorm", "dim", 3, "int", E.py_typename(dim)))
    p, maxnorm = _number(p), _number(maxnorm)
    if isinstance(p, complex):
        raise RuntimeError(RENORM_P_REAL)
    if not p > 0:
        raise RuntimeError(RENORM_P)
    if isinstance(maxnorm, complex):
        raise RuntimeError(RENORM_MAX_REAL)
    if maxnorm < 0:
        raise RuntimeError(RENORM_MAX.format(f"{float(maxnorm):g}"))
    if input.ndim <= 1:
        raise RuntimeError(RENORM_2D.format(input.ndim))
    d = _wrap_dim(dim, input.ndim)
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise RuntimeError(FLOAT_INPUT.format("linalg.vector_norm", _name(input.dtype)))
    if input.numel() == 0 and math.isinf(p):
        for i in range(input.ndim):
            if i != d and input.shape[i] == 0:
                raise RuntimeError(NORM_EMPTY_DIM.format(_ord_text(float(p)), i))
    return float(p), d, float(maxnorm)


@tensor_op("renorm")
def renorm(input, p, dim, maxnorm) -> Tensor:
    """``torch.renorm``: each slice along ``dim`` whose ``p``-norm exceeds ``maxnorm`` scaled to
    ``maxnorm / (norm + 1e-7)`` (RenormBackward0)."""
    written = {"p": p, "maxnorm": maxnorm}  # the Scalars as given, which the node keeps
    p, d, maxnorm = _check_renorm(input, p, dim, maxnorm)
    out = dispatch(OPS["renorm"], input, p=p, dim=d, maxnorm=maxnorm)
    if all(type(v) in (int, float) for v in written.values()):
        saved_mod.keep_written(out, **written)
    return out


# --- dist ----------------------------------------------------------------------------------------


@tensor_op("dist")
def dist(input, other, p=2) -> Tensor:
    """``torch.dist``: the ``p``-norm of ``input - other`` (DistBackward0); ``p = 0`` counts
    non-zeros and gives no gradient (Note [Undefined gradients] in linalg_ops.py)."""
    if not isinstance(other, Tensor):
        raise TypeError(E.MUST_BE.format("dist", "other", 2, "Tensor", E.py_typename(other)))
    # PyTorch's order: the subtraction's checks, norm's dtype check, then vector_norm's
    shape = broadcast_shapes(tuple(input.shape), tuple(other.shape))
    meta = [(input._dtype, input.ndim), (other._dtype, other.ndim)]
    _dist_rule(meta, {})
    p = _number(p)
    if isinstance(p, complex):
        raise RuntimeError(NORM_COMPLEX_ORD)
    p = float(p)
    if math.prod(shape) == 0 and (p < 0 or p == math.inf):
        raise RuntimeError(NORM_EMPTY.format(_ord_text(p)))
    out = dispatch(OPS["dist"], input, other, p=p)
    if p == 0:
        _no_gradient(out)
        _refuse_negated_undefined(out)
    return out


def _refuse_negated_undefined(out: Tensor) -> None:
    """PyTorch's gradient of ``other`` is ``-norm_backward(...)``, and ``norm_backward`` for
    ``p = 0`` is undefined: negating it raises when that gradient is needed (Note [Needed
    edges]); the gradient of ``self`` is undefined (None)."""
    from ..autograd.graph import edge_needed, wrap_backward

    node = out._grad_fn
    if node is None or node._next_functions[1][0] is None:
        return

    def backward(primals, cts):
        if edge_needed(1):
            raise RuntimeError(E.UNDEFINED_ARGUMENT.format(0, "self"))
        return (None,) * len(primals)

    wrap_backward(node, backward)


# --- cdist ---------------------------------------------------------------------------------------


def _cdist_dtype_checks(x1, x2, p) -> None:
    for name, t in (("X1", x1), ("X2", x2)):
        if not t.dtype.is_floating_point:
            raise RuntimeError(CDIST_FLOAT.format(name, _name(t.dtype)))
    if p < 0:
        raise RuntimeError(CDIST_P)


@tensor_op("cdist", method=False)
@_autocast.policy("fp32")
def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary") -> Tensor:
    """``torch.cdist``: p-norm distances between the rows of ``x1`` and ``x2`` over broadcast
    batch dims (CdistBackward0); for ``p = 2`` with more than 25 rows (or ``compute_mode=
    'use_mm_for_euclid_dist'``) PyTorch's matrix-product form (EuclideanDistBackward0)."""
    mode = _CDIST_MODES.get(compute_mode) if isinstance(compute_mode, str) else None
    if mode is None:
        raise ValueError(CDIST_MODE.format(compute_mode))
    if not isinstance(x1, Tensor):
        raise TypeError(E.MUST_BE.format("cdist", "x1", 1, "Tensor", E.py_typename(x1)))
    if not isinstance(x2, Tensor):
        raise TypeError(E.MUST_BE.format("cdist", "x2", 2, "Tensor", E.py_typename(x2)))
    if E.float_refused(p):  # PyTorch's cdist passes p on by position
        raise TypeError(E.MUST_BE.format("cdist", "p", 3, "float", E.py_typename(p)))
    p = float(p)
    for name, t in (("X1", x1), ("X2", x2)):
        if t.ndim < 2:
            raise RuntimeError(CDIST_2D.format(name, t.ndim))
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(CDIST_COLS.format(x1.shape[-1], x2.shape[-1]))
    r1, r2 = x1.shape[-2], x2.shape[-2]
    use_mm = p == 2 and (mode == 1 or (mode == 0 and (r1 > 25 or r2 > 25)))
    if x1.numel() == 0 or x2.numel() == 0 or not use_mm:
        return _cdist_forward(x1, x2, p)
    _cdist_dtype_checks(x1, x2, p)
    batch = broadcast_shapes(tuple(x1.shape[:-2]), tuple(x2.shape[:-2]))
    c = x1.shape[-1]
    out_shape = (*batch, r1, r2)
    if math.prod(batch) == 1:
        if x1.dtype is not x2.dtype:
            raise RuntimeError(E.MM_DTYPE.format(E.c_type_name(x1.dtype), E.c_type_name(x2.dtype)))
        d = dispatch(OPS["euclidean_dist"], x1, x2)
        return _shape.view(d, out_shape)
    # ``x.expand(...).contiguous().view(batch, r, c)``, as PyTorch feeds its batched product
    n = math.prod(batch)
    a = _shape.view(_shape.contiguous(x1.expand(*batch, r1, c)), (n, r1, c))
    b = _shape.view(_shape.contiguous(x2.expand(*batch, r2, c)), (n, r2, c))
    if x1.dtype is not x2.dtype:
        raise RuntimeError(BMM_DTYPE.format(_name(x1.dtype), _name(x2.dtype)))
    return _shape.view(dispatch(OPS["euclidean_dist"], a, b), out_shape)


def _cdist_forward(x1, x2, p) -> Tensor:
    """ATen's ``_cdist_forward`` (CdistBackward0): the kernel, with PyTorch's checks."""
    _cdist_dtype_checks(x1, x2, p)
    batch = broadcast_shapes(tuple(x1.shape[:-2]), tuple(x2.shape[:-2]))
    if x1.shape[-2] and x2.shape[-2] and math.prod(batch) and x1.shape[-1]:
        if x1.dtype in (D.float16, D.bfloat16):
            raise NotImplementedError(CDIST_HALF.format(_name(x1.dtype)))
        if x1.dtype is not x2.dtype:
            raise RuntimeError(BMM_DTYPE.format(_name(x1.dtype), _name(x2.dtype)))
    return dispatch(OPS["cdist"], x1, x2, p=p)


# --- trapezoid -----------------------------------------------------------------------------------

_TRAPEZOID_SIGS = (
    "(Tensor y, Tensor x, *, int dim = -1)",
    "(Tensor y, *, Number dx = 1, int dim = -1)",
)
_TRAPZ_SIGS = (
    "(Tensor y, *, float dx = 1, int dim = -1)",
    "(Tensor y, Tensor x, *, int dim = -1)",
)
_TRAPZ_MATCH = (
    "(Tensor y, *, Number dx = 1, int dim = -1)",
    "(Tensor y, Tensor x, *, int dim = -1)",
)


def _mul_scalar(t: Tensor, value) -> Tensor:
    return dispatch(OPS["nn.mul_scalar"], t, value)


def _div_scalar(t: Tensor, value) -> Tensor:
    return dispatch(OPS["nn.div_scalar"], t, value)


def _slice(t: Tensor, dim: int, start, stop) -> Tensor:
    """``t.slice(dim, start, stop)``: a SliceBackward0 view (``dim`` already wrapped)."""
    if t.ndim == 0:
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    d = _wrap_dim(dim, t.ndim)
    written = {"start": start, "end": stop, "dim": dim}  # an omitted end stays None, as in ATen
    start, stop = _shape._clamp_slice(t.shape[d], start, stop, 1)
    return _shape._slice_view(t, d, start, stop, 1, written)


def _x_viewed(name: str, y: Tensor, x: Tensor, dim: int) -> Tensor:
    """``x`` viewed to broadcast against ``y``'s differences (ATen's Integration.cpp)."""
    if x.ndim == 1:
        if x.shape[0] != y.shape[dim]:
            raise RuntimeError(TRAPEZOID_X.format(name))
        sizes = [1] * y.ndim
        sizes[dim] = x.shape[0]
        return _shape.view(x, tuple(sizes))
    if x.ndim < y.ndim:
        return _shape.view(x, (1,) * (y.ndim - x.ndim) + tuple(x.shape))
    return x


def _dx_of(name: str, dx):
    dx = _number(dx)
    if isinstance(dx, (complex, bool)):
        raise RuntimeError(TRAPEZOID_DX.format(name))
    return float(dx)


def _size_at(y: Tensor, dim: int) -> int:
    if y.ndim == 0:
        raise IndexError(E.DIM_SCALAR.format(dim))
    return y.shape[_wrap_dim(dim, y.ndim)]


def _trapezoid(name: str, y: Tensor, x, dx, dim) -> Tensor:
    if x is not None:
        dim = _wrap_dim(dim, y.ndim)
    if _size_at(y, dim) == 0:
        d = _wrap_dim(dim, y.ndim)
        sizes = tuple(s for i, s in enumerate(y.shape) if i != d)
        return written_zeros(sizes, y.dtype, y.device)  # ATen's zeros_like_except
    if x is None:
        if y.dtype is D.bool_:
            raise RuntimeError(TRAPEZOID_BOOL.format("trapezoid"))
        dx = _dx_of("trapezoid", dx)
        # dx * (sum(y) - (y[0] + y[-1]) / 2)
        ends = _shape.select(y, dim, 0) + _shape.select(y, dim, -1)
        return _mul_scalar(y.sum(dim) - _mul_scalar(ends, 0.5), dx)
    if y.dtype is D.bool_ or x.dtype is D.bool_:
        raise RuntimeError(TRAPEZOID_BOOL_X.format("trapezoid"))
    xv = _x_viewed("trapezoid", y, x, dim)
    delta = _slice(xv, dim, 1, None) - _slice(xv, dim, 0, -1)
    left, right = _slice(y, dim, 0, -1), _slice(y, dim, 1, None)
    return _div_scalar(((left + right) * delta).sum(dim), 2.0)


@tensor_op("trapezoid", method=False)
def trapezoid(*args, **kwargs) -> Tensor:
    """``torch.trapezoid(y, x=None, *, dx=1, dim=-1)``: the trapezoidal rule along ``dim``."""
    k, v = _parse("trapezoid", _TRAPEZOID_SIGS, args, kwargs)
    return _trapezoid("trapezoid", v["y"], v.get("x"), v.get("dx", 1), v.get("dim", -1))


@tensor_op("trapz", method=False)
def trapz(*args, **kwargs) -> Tensor:
    """``torch.trapz``: ``trapezoid`` with a float ``dx``."""
    k, v = _parse("trapz", _TRAPZ_SIGS, args, kwargs, match=_TRAPZ_MATCH)
    dx = v.get("dx", 1)
    if isinstance(dx, (complex, bool)):
        raise TypeError(E.invalid_arguments("trapz", _TRAPZ_SIGS, args, kwargs))
    return _trapezoid("trapezoid", v["y"], v.get("x"), dx, v.get("dim", -1))


@tensor_op("cumulative_trapezoid", method=False)
def cumulative_trapezoid(*args, **kwargs) -> Tensor:
    """``torch.cumulative_trapezoid(y, x=None, *, dx=1, dim=-1)``: running trapezoidal sums."""
    name = "cumulative_trapezoid"
    _, v = _parse(name, _TRAPEZOID_SIGS, args, kwargs)
    y, x, dim = v["y"], v.get("x"), v.get("dim", -1)
    if x is None:
        if y.dtype is D.bool_:
            raise RuntimeError(TRAPEZOID_BOOL.format(name))
        dx = _dx_of(name, v.get("dx", 1))
        left, right = _slice(y, dim, 0, -1), _slice(y, dim, 1, None)
        return _mul_scalar(left + right, dx / 2.0).cumsum(dim)
    dim = _wrap_dim(dim, y.ndim)
    if y.dtype is D.bool_ or x.dtype is D.bool_:
        raise RuntimeError(TRAPEZOID_BOOL_X.format(name))
    if y.ndim == 0:
        raise IndexError(E.DIM_SCALAR.format(dim))
    xv = _x_viewed(name, y, x, dim)
    delta = _slice(xv, dim, 1, None) - _slice(xv, dim, 0, -1)
    left, right = _slice(y, dim, 0, -1), _slice(y, dim, 1, None)
    return _div_scalar(((left + right) * delta).cumsum(dim), 2.0)


# --- gradient ------------------------------------------------------------------------------------
# ``torch.gradient`` is a composite (ATen's ReduceOps.cpp): second-order central differences
# inside, one-sided ones of ``edge_order`` at the ends, joined by ``cat``. It is written here with
# the same ops in the same order, so values, ``grad_fn`` names and gradients are PyTorch's.

GRADIENT_EDGE = "torch.gradient only supports edge_order=1 and edge_order=2."
GRADIENT_SIZE = "torch.gradient expected each dimension size to be at least edge_order+1"


def _gradient_checks(x: Tensor, n_spacing, dims, edge_order: int) -> None:
    """ATen's ``pre_check_gradient``; ``n_spacing`` None when no spacing was given, ``dims``
    None when ``dim`` was not."""
    if x.dtype is D.uint8:
        raise RuntimeError("torch.gradient does not support uint8 input.")
    if n_spacing is not None and dims is None and n_spacing != x.ndim:
        raise RuntimeError(
            "torch.gradient expected spacing to be unspecified, a scalar, or a list of length "
            f"equal to 'self.dim() = {x.ndim}', since dim argument was not given, but got a list "
            f"of length {n_spacing}"
        )
    if n_spacing is not None and dims is not None and n_spacing != len(dims):
        raise RuntimeError(
            "torch.gradient expected spacing to be unspecified, a scalar or it's spacing and dim "
            f"arguments to have the same length, but got a spacing argument of length {n_spacing} "
            f"and a dim argument of length {len(dims)}."
        )
    if edge_order not in (1, 2):
        raise RuntimeError(GRADIENT_EDGE)
    if dims is not None:
        seen = set()
        for d in dims:
            w = _wrap_dim(d, x.ndim)
            if w in seen:
                raise RuntimeError(f"dim {w} appears multiple times in the list of dims")
            seen.add(w)
        sizes = [x.shape[_wrap_dim(d, x.ndim)] for d in dims]
    else:
        sizes = list(x.shape)
    if any(s < edge_order + 1 for s in sizes):
        raise RuntimeError(GRADIENT_SIZE)


def _gradient_spaced(x: Tensor, spacing, dims, edge_order: int) -> tuple:
    """``gradient_helper_float``: a number per dimension."""
    out = []
    for h, d in zip(spacing, dims):
        d = _wrap_dim(d, x.ndim)
        h = float(h)  # PyTorch's spacing is a double: DivBackward1 saves other=2.0
        # PyTorch's expressions, term for term: tensor * number (MulBackward1), / number
        # (DivBackward1)
        center = _div_scalar(_slice(x, d, 2, None) - _slice(x, d, 0, -2), h)
        if edge_order == 1:
            first = _div_scalar(_slice(x, d, 1, 2) - _slice(x, d, 0, 1), h)
            last = _div_scalar(_slice(x, d, -1, None) - _slice(x, d, -2, -1), h)
        else:
            first = _div_scalar(
                _mul_scalar(_slice(x, d, 0, 1), -1.5)
                + _mul_scalar(_slice(x, d, 1, 2), 2)
                - _mul_scalar(_slice(x, d, 2, 3), 0.5),
                h,
            )
            last = _div_scalar(
                _mul_scalar(_slice(x, d, -3, -2), 0.5)
                - _mul_scalar(_slice(x, d, -2, -1), 2)
                + _mul_scalar(_slice(x, d, -1, None), 1.5),
                h,
            )
        out.append(_shape.cat([first, _div_scalar(center, 2), last], d))
    return tuple(out)


def _gradient_coordinates(x: Tensor, coordinates, dims, edge_order: int) -> tuple:
    """``gradient_helper``: a 1-D tensor of coordinates per dimension."""
    for c in coordinates:
        if c.device != x.device:
            raise RuntimeError(
                "torch.gradient expected each tensor to be on the same device, but got devices "
                f"{x.device} and {c.device}!"
            )
    out = []
    for c, d in zip(coordinates, dims):
        if c.ndim != 1:
            raise RuntimeError(
                "torch.gradient expected each element of spacing to have one dimension, but got "
                f"an element with {c.ndim} dimensions!"
            )
        d = _wrap_dim(d, x.ndim)
        shape = [1] * x.ndim
        shape[d] = -1
        dx = _diff(c, 1, 0, None, None)
        dx1 = _slice(dx, 0, 0, -1)
        dx2 = _slice(dx, 0, 1, None)
        a = (-dx2 / (dx1 * (dx1 + dx2))).reshape(shape)
        b = ((dx2 - dx1) / (dx1 * dx2)).reshape(shape)
        c_ = (dx1 / (dx2 * (dx1 + dx2))).reshape(shape)
        center = a * _slice(x, d, 0, -2) + b * _slice(x, d, 1, -1) + c_ * _slice(x, d, 2, None)
        if edge_order == 1:
            first = (_slice(x, d, 1, 2) - _slice(x, d, 0, 1)) / dx[0]
            last = (_slice(x, d, -1, None) - _slice(x, d, -2, -1)) / dx[-1]
        else:
            a = -(2.0 * dx[0] + dx[1]) / (dx[0] * (dx[0] + dx[1]))
            b = (dx[0] + dx[1]) / (dx[0] * dx[1])
            c_ = (-dx[0]) / (dx[1] * (dx[0] + dx[1]))
            first = a * _slice(x, d, 0, 1) + b * _slice(x, d, 1, 2) + c_ * _slice(x, d, 2, 3)
            a = (dx[-1]) / (dx[-2] * (dx[-1] + dx[-2]))
            b = -(dx[-1] + dx[-2]) / (dx[-1] * dx[-2])
            c_ = (2 * dx[-1] + dx[-2]) / (dx[-1] * (dx[-1] + dx[-2]))
            last = a * _slice(x, d, -3, -2) + b * _slice(x, d, -2, -1) + c_ * _slice(x, d, -1, None)
        out.append(_shape.cat([first, center, last], d))
    return tuple(out)


@tensor_op("gradient", method=False)
def gradient(input, *, spacing=None, dim=None, edge_order=1) -> tuple:
    """``torch.gradient``: estimates of the derivative along each of ``dim`` (all dimensions by
    default) by central differences, spacing a number, a number per dimension, or coordinates
    (1-D tensors)."""
    if not isinstance(input, Tensor):
        raise TypeError(
            f"gradient(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}"
        )
    dims = None if dim is None else ([dim] if isinstance(dim, int) else list(dim))
    if (
        isinstance(spacing, (list, tuple))
        and spacing
        and all(isinstance(s, Tensor) for s in spacing)
    ):
        if not all(s.ndim == 0 for s in spacing):
            work = dims if dims is not None else list(range(input.ndim))
            _gradient_checks(input, len(spacing), dims, edge_order)
            return _gradient_coordinates(input, list(spacing), work, edge_order)
        spacing = [s.item() for s in spacing]
    if isinstance(spacing, Tensor):
        spacing = spacing.item()
    if spacing is None or not isinstance(spacing, (list, tuple)):
        unit = 1.0 if spacing is None else spacing
        work = dims if dims is not None else list(range(input.ndim))
        if spacing is None and dims is not None and not isinstance(dim, int):
            n_spacing = len(work)  # gradient(self, dim, edge_order): a unit spacing per dim
        elif spacing is None:
            n_spacing = None
        else:
            n_spacing = len(work)
        _gradient_checks(input, n_spacing, dims, edge_order)
        return _gradient_spaced(input, [unit] * len(work), work, edge_order)
    work = dims if dims is not None else list(range(input.ndim))
    _gradient_checks(input, len(spacing), dims, edge_order)
    return _gradient_spaced(input, list(spacing), work, edge_order)
