"""Search and count ops (``searchsorted``, ``bucketize``, ``histc``, ``bincount``, ``unique``,
``unique_consecutive``) and complex builders (``polar``, ``complex``, ``frexp``, ``signbit``).

Note [Binary search as the kernel does it]: PyTorch's CPU ``searchsorted`` runs one bisection per
value (``start < end; mid = start + (end - start) / 2``, going right while
``!(boundary[mid] >= value)``, or ``>`` for ``right=True``). The forward runs the same bisection
for all values at once, a fixed number of rounds (the bit length of the boundary count), so that
NaNs and unsorted boundaries give PyTorch's indices, not NumPy's, and the op runs under
``jax.jit``.

Note [Histc bins]: ``histc`` puts ``x`` into bin ``int((x - min) * bins / (max - min))``, computed
in the input's dtype, the last bin keeping its right edge; values outside ``[min, max]`` and NaNs
are not counted. With ``min == max`` the range is the data's (read on the host, as PyTorch reads
it with ``item()``, and checked to be finite); under ``jax.jit`` it is computed in the program and
not checked.

Note [Eager unique]: ``unique``, ``unique_consecutive`` and ``bincount`` have result shapes that
depend on values (Note [Eager shapes] in shape.py): they read the input on the host, and the
values output is a gather by host-computed indices, recorded under PyTorch's node name
(``Unique2Backward0``...) whose backward raises PyTorch's error, as no derivative is defined.
"""

from __future__ import annotations

import builtins
import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from .. import _autocast
from .. import _dtype as D
from .. import _errors as E
from .._arg_check import check_bool
from .._storage import kernel_wrote
from .._tensor import Tensor
from ..autograd import grad_mode
from .api import register_ops, tensor_op
from .dispatch import dispatch
from .reductions import return_type
from .table import OPS, OpDef

__all__ = [
    "bincount",
    "bucketize",
    "complex",
    "frexp",
    "histc",
    "histogram",
    "histogramdd",
    "polar",
    "searchsorted",
    "signbit",
    "unique",
    "unique_consecutive",
]

# --- PyTorch's messages ---------------------------------------------------------------------------
KERNEL_DTYPE = "\"{}\" not implemented for '{}'"
SS = "torch.searchsorted(): "
SS_SIDE_RIGHT = SS + "side and right can't be set to opposites, got side of {} while right was True"
SS_SIDE = SS + "side can only be 'left' or 'right' but got {}"
SS_SORTER_SIZE = SS + (
    "boundary and sorter must have the same size, but got boundary tensor {}and got sorter "
    "tensor {}"
)
SS_SORTER_DTYPE = SS + "sorter must be a tensor of long dtype but got dtype {}"
SS_SORTER_RANGE = SS + "sorter index out of range"
SS_SCALAR = (
    SS + "input value can be a scalar only when boundaries tensor dimension is 1, but we got "
    "boundaries tensor dim({}) and input value's dim({}) numel({})"
)
SS_ZERO_DIM = SS + "boundaries tensor should have positive dimension, but got 0 dimension"
SS_DIMS = (
    SS + "boundaries tensor should be 1 dimension or the first N-1 dimensions of boundaries "
    "tensor and input value tensor must match, but we got boundaries tensor {} and input value "
    "tensor {}"
)
BUCKETIZE_DIM = "boundaries tensor must be 1 dimension, but got dim({})"
HISTC_ORDER = "torch.histc: max must be larger than min"
HISTC_FINITE = "torch.histc: range of [{}, {}] is not finite"
HISTC_BINS = "torch.histogram(): bins must be > 0, but got {} for dimension 0"
BINCOUNT_INPUT = "bincount only supports 1-d non-negative integral inputs."
BINCOUNT_WEIGHTS = "weights should be 1-d and have the same length as input"
BINCOUNT_MINLENGTH = "minlength should be >= 0"
NO_DERIVATIVE = "derivative for aten::{} is not implemented"
NOT_IMPLEMENTED = "the derivative for '{}' is not implemented."
UNIQUE_ZERO_DIMS = (
    "There are 0 sized dimensions, and they aren't selected, so unique cannot be applied"
)
UNIQUE_MANY_ZERO_DIMS = (
    "Number of zero sized dimensions is more than one, so unique cannot be applied "
)
EAGER_ONLY = (
    "{}() has a result shape that depends on tensor values; it cannot run under jax.jit "
    "(leafgrad computes it eagerly)"
)
COMPLEX_DTYPES = "Expected both inputs to be Half, Float or Double tensors but got {} and {}"
SECOND_DTYPE = "Expected object of scalar type {} but got scalar type {} for second argument"
FREXP_DTYPE = "torch.frexp() only supports floating-point dtypes"
COMPLEX_HALF = (
    "ComplexHalf support is experimental and many operators don't support it yet. (Triggered "
    "internally at /__w/pytorch/pytorch/aten/src/ATen/EmptyTensor.cpp:54.)"
)
SIGNBIT_COMPLEX = "signbit is not implemented for complex tensors."

frexp_type = return_type("frexp", ("mantissa", "exponent"))


def _kernel_error(kernel: str, dt) -> NotImplementedError:
    return NotImplementedError(KERNEL_DTYPE.format(kernel, dt._legacy))


def _sizes(shape) -> str:
    return "[" + ", ".join(str(s) for s in shape) + "]"


def _is_tracer(x) -> bool:
    return isinstance(x, jax.core.Tracer)


def _host(t: Tensor, name: str, what: str | None = None) -> np.ndarray:
    """``t``'s values on the host (Note [Values inside transforms] for traced ones)."""
    if _is_tracer(t._data):
        from .. import func

        values = func.traced_values(t._data, what or name)
        if values is None:
            raise RuntimeError(EAGER_ONLY.format(name))
        return values
    return np.asarray(t._data)


def _int_tensor(values, like: Tensor) -> Tensor:
    """An index result computed on the host (an inference tensor in inference mode)."""
    return Tensor._make(
        jnp.asarray(np.asarray(values, np.int64)),
        D.int64,
        like._device,
        inference=grad_mode._state.inference,
    )


_need_tensor = E.need_tensor


def _refusal(error):
    """The identity, whose differentiation raises ``error()`` (an op without a derivative: its
    backward raises PyTorch's error; no derivative formula)."""

    @jax.custom_jvp
    def identity(x):
        return x

    @identity.defjvp
    def _refuse(primals, tangents):
        raise error()

    return identity


# --- searchsorted / bucketize ---------------------------------------------------------------------


def _searchsorted(boundaries, values, sorter, right):
    """Note [Binary search as the kernel does it]."""
    n = boundaries.shape[-1]
    rows = int(np.prod(boundaries.shape[:-1]))
    rows_b = boundaries.reshape(rows, n)
    rows_v = values.reshape(rows, values.size // rows if rows else 0)
    rows_s = None if sorter is None else sorter.reshape(rows, n)
    start = jnp.zeros(rows_v.shape, jnp.int64)
    end = jnp.full(rows_v.shape, n, jnp.int64)
    for _ in range(int(n).bit_length()):
        active = start < end
        mid = start + ((end - start) >> 1)
        at = jnp.minimum(mid, n - 1)
        if rows_s is not None:
            at = jnp.take_along_axis(rows_s, at, axis=1)
        pivot = jnp.take_along_axis(rows_b, at, axis=1)
        go_right = ~(pivot > rows_v) if right else ~(pivot >= rows_v)
        start = jnp.where(active & go_right, mid + 1, start)
        end = jnp.where(active & ~go_right, mid, end)
    return start.reshape(values.shape)


def _searchsorted_rule(meta, static):
    common = D.result_type_of([meta[0], meta[1]])
    if common is D.bool_ or common.is_complex:
        raise _kernel_error("searchsorted_out_cpu", common)
    return (common, common, None), D.int32 if static["out_int32"] else D.int64


def _searchsorted_forward(boundaries, values, sorter, out_int32, right):
    return _searchsorted(boundaries, values, sorter, right)


def _histc_forward(x, bins, low, high, from_data):
    """Note [Histc bins]."""
    dt = x.dtype
    if from_data:
        if x.size:
            low, high = jnp.min(x).astype(jnp.float64), jnp.max(x).astype(jnp.float64)
            same = low == high
            low, high = jnp.where(same, low - 1, low), jnp.where(same, high + 1, high)
        else:
            low, high = jnp.float64(-1.0), jnp.float64(1.0)
    left, right = jnp.asarray(low).astype(dt), jnp.asarray(high).astype(dt)
    flat = x.reshape(-1)
    counted = (flat >= left) & (flat <= right)
    pos = ((flat - left) * jnp.asarray(bins, dt) / (right - left)).astype(jnp.int64)
    pos = jnp.where(pos == bins, bins - 1, pos)
    pos = jnp.where(counted, pos, bins)  # dropped by the scatter below
    return jnp.zeros((bins,), dt).at[pos].add(jnp.ones_like(flat), mode="drop")


def _histc_rule(meta, static):
    dt = meta[0][0]
    if not dt.is_floating_point:
        # bool fails first in the linspace of the bin edges
        kernel = "linspace_cpu" if dt is D.bool_ else "histogram_cpu"
        raise _kernel_error(kernel, dt)
    return (None,), dt


_BINCOUNT_NO_GRAD = _refusal(lambda: RuntimeError(NO_DERIVATIVE.format("bincount")))


def _bincount_forward(x, weights, length):
    if weights is None:
        return jnp.zeros((length,), jnp.int64).at[x].add(1)
    w = _BINCOUNT_NO_GRAD(weights)
    return jnp.zeros((length,), w.dtype).at[x].add(w)


def _bincount_rule(meta, static):
    w = meta[1]
    if w is None:
        return (None, None), D.int64
    rt = D.float32 if w[0] is D.float32 else D.float64
    return (None, rt), rt


def _unique_forward(x, index, name, dim):
    """The values output of ``unique``-like ops: a gather by host-computed indices."""
    x = _UNIQUE_REFUSALS[name](x)
    if dim is None:
        return x.reshape(-1)[index]
    return jnp.take(x, index, axis=dim)


_UNIQUE_NAMES = {
    "_unique2": "Unique2Backward0",
    "unique_dim": "UniqueDimBackward0",
    "unique_consecutive": "UniqueConsecutiveBackward0",
}
_UNIQUE_REFUSALS = {
    name: _refusal(lambda name=name: NotImplementedError(NOT_IMPLEMENTED.format(name)))
    for name in _UNIQUE_NAMES
}


def _same(meta, static):
    return (None,) * len(meta), meta[0][0]


# --- complex builders -----------------------------------------------------------------------------


def _complex_check(meta, static, kernel=None):
    a, b = meta[0][0], meta[1][0]
    allowed = (D.float16, D.float32, D.float64)
    if a not in allowed or b not in allowed:
        raise RuntimeError(COMPLEX_DTYPES.format(a._legacy, b._legacy))
    if a is not b:
        raise RuntimeError(SECOND_DTYPE.format(a._legacy, b._legacy))
    if a is D.float16:
        if kernel is not None:
            E.warn_once(COMPLEX_HALF)  # PyTorch makes the empty complex32 result first
            raise _kernel_error(kernel, a)
        raise NotImplementedError("leafgrad has no complex32 (torch.chalf) dtype")
    return (None, None), a.to_complex()


def _polar_rule(meta, static):
    return _complex_check(meta, static, "polar_cpu")


@jax.custom_jvp
def _signed_identity(x):
    return x


@_signed_identity.defjvp
def _signed_identity_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return x, t * jnp.sign(x)


def _polar(abs, angle):
    # PyTorch's formula gives ``abs`` the gradient ``real(conj(grad) * sgn(result))``, which is
    # the derivative times ``sign(abs)`` (0 at 0, negated for a negative ``abs``): the identity
    # whose tangent is so scaled gives it, and the value is ``abs * e^(i angle)`` bit for bit.
    magnitude = _signed_identity(abs)
    return lax.complex(magnitude * jnp.cos(angle), magnitude * jnp.sin(angle))


def _frexp_bits(x):
    """``std::frexp`` from the bits (XLA's CPU ``frexp`` flushes subnormals)."""
    info = jnp.finfo(x.dtype)
    width = info.bits
    mbits = info.nmant
    bias = -info.minexp + 1  # 127 for float32
    uint = {16: jnp.uint16, 32: jnp.uint32, 64: jnp.uint64}[width]
    bits = lax.bitcast_convert_type(x, uint)
    one = jnp.asarray(1, uint)
    frac_mask = (one << mbits) - one
    exp_mask = (one << (width - 1 - mbits)) - one
    field = (bits >> mbits) & exp_mask
    frac = bits & frac_mask
    sign = bits & (one << (width - 1))
    length = (width - lax.clz(frac)).astype(jnp.int32)  # bit length of the fraction
    subnormal = (field == 0) & (frac != 0)
    normal_exp = field.astype(jnp.int32) - bias + 1
    sub_exp = length + 1 - bias - mbits
    shift = jnp.where(subnormal, mbits + 1 - length, 0).astype(uint)
    sub_frac = (frac << shift) & frac_mask
    half = jnp.asarray(bias - 1, uint) << mbits
    mantissa_bits = sign | half | jnp.where(subnormal, sub_frac, frac)
    mantissa = lax.bitcast_convert_type(mantissa_bits, x.dtype)
    special = (field == exp_mask) | ((field == 0) & (frac == 0))
    mantissa = jnp.where(special, x, mantissa)
    exponent = jnp.where(special, 0, jnp.where(subnormal, sub_exp, normal_exp))
    return mantissa, exponent.astype(jnp.int32)


@jax.custom_jvp
def _mantissa(x):
    return _frexp_bits(x)[0]


@_mantissa.defjvp
def _mantissa_jvp(primals, tangents):
    # derivatives.yaml: ``grad / exponent.exp2()``, the power of two in the default dtype of
    # an integer tensor's exp2 (float32)
    (x,), (t,) = primals, tangents
    mantissa, exponent = _frexp_bits(x)
    scale = jnp.exp2(exponent.astype(jnp.float32))
    wide = jnp.promote_types(x.dtype, jnp.float32)
    return mantissa, (t.astype(wide) / scale.astype(wide)).astype(x.dtype)


def _frexp(x):
    return _mantissa(x), _frexp_bits(x)[1]


def _frexp_rule(meta, static):
    dt = meta[0][0]
    if not dt.is_floating_point:
        raise RuntimeError(FREXP_DTYPE)
    return (None,), (dt, D.int32)


def _signbit(x):
    if jnp.issubdtype(x.dtype, jnp.floating):
        return jnp.signbit(x)
    if jnp.issubdtype(x.dtype, jnp.signedinteger):
        return x < 0
    return jnp.zeros(x.shape, jnp.bool_)


def _signbit_rule(meta, static):
    if meta[0][0].is_complex:
        raise NotImplementedError(SIGNBIT_COMPLEX)
    return (None,), D.bool_


register_ops(
    OpDef(
        "searchsorted",
        _searchsorted_forward,
        "",
        ("sorted_sequence", "self", "sorter"),
        _searchsorted_rule,
        differentiable=(),
    ),
    OpDef("histc", _histc_forward, "", ("self",), _histc_rule, differentiable=()),
    OpDef(
        "bincount",
        _bincount_forward,
        "NotImplemented",
        ("self", "weights"),
        _bincount_rule,
        edges=("weights",),
    ),
    OpDef(
        "unique",
        _unique_forward,
        lambda name, dim: _UNIQUE_NAMES[name],
        ("self", "index"),
        _same,
        edges=("self",),
    ),
    OpDef(
        "polar",
        _polar,
        "PolarBackward0",
        ("abs", "angle"),
        _polar_rule,
        saves={"abs": ("result",), "angle": ("result",)},
        broadcast=True,
    ),
    OpDef(
        "complex",
        lambda real, imag: lax.complex(*jnp.broadcast_arrays(real, imag)),
        "ComplexBackward0",
        ("real", "imag"),
        _complex_check,
        # PyTorch's node keeps both operands, though its formulas read neither
        saves={"real": ("real", "imag"), "imag": ("real", "imag")},
        broadcast=True,
    ),
    OpDef(
        "frexp",
        _frexp,
        "FrexpBackward0",
        ("self",),
        _frexp_rule,
        n_out=2,
        differentiable_outputs=(0,),
        saves={"self": ("indices",)},
    ),
    OpDef("signbit", _signbit, "", ("self",), _signbit_rule, differentiable=()),
)


# --- frontends ------------------------------------------------------------------------------------


def _value_tensor(value, like: Tensor) -> Tensor:
    """A Python number as the 0-d tensor PyTorch's ``Scalar`` overloads make of it."""
    dt = D.bool_ if isinstance(value, bool) else D.int64 if isinstance(value, int) else D.float64
    if isinstance(value, (builtins.complex, np.complexfloating)):
        dt = D.complex128
    return Tensor._make(
        jnp.asarray(value, dt.np), dt, like._device, inference=grad_mode._state.inference
    )


_SS_TAIL = ", bool out_int32 = False, bool right = False, str side = None, Tensor sorter = None"
SS_COMBINATION = (
    "searchsorted() received an invalid combination of arguments - got ({}, {}), but expected one "
    "of:\n * (Tensor sorted_sequence, Tensor input, *" + _SS_TAIL + ", Tensor out = None)\n"
    " * (Tensor sorted_sequence, Number self, *" + _SS_TAIL + ", Tensor out = None)\n"
)
BUCKETIZE_COMBINATION = (
    "bucketize() received an invalid combination of arguments - got ({}, {}), but expected one "
    "of:\n * (Tensor input, Tensor boundaries, *, bool out_int32 = False, bool right = False, "
    "Tensor out = None)\n * (Number self, Tensor boundaries, *, bool out_int32 = False, "
    "bool right = False)\n"
)


def _run_searchsorted(boundaries, input, sorter, out_int32, right):
    if not isinstance(input, Tensor):
        input = _value_tensor(input, boundaries)
    if sorter is not None:
        if tuple(sorter.shape) != tuple(boundaries.shape):
            raise RuntimeError(
                SS_SORTER_SIZE.format(_sizes(boundaries.shape), _sizes(sorter.shape))
            )
        if sorter._dtype is not D.int64:
            raise RuntimeError(SS_SORTER_DTYPE.format(sorter._dtype._legacy))
        if sorter._data.size and not _is_tracer(sorter._data):
            s = np.asarray(sorter._data)
            if s.min() < 0 or s.max() >= boundaries.shape[-1]:
                raise RuntimeError(SS_SORTER_RANGE)
    bd, vd = boundaries._data.ndim, input._data.ndim
    if not (vd > 0 or (input._data.size == 1 and bd == 1)):
        raise RuntimeError(SS_SCALAR.format(bd, vd, input._data.size))
    if bd == 0:
        raise RuntimeError(SS_ZERO_DIM)
    if bd != 1 and (bd != vd or boundaries.shape[:-1] != input.shape[:-1]):
        raise RuntimeError(SS_DIMS.format(_sizes(boundaries.shape), _sizes(input.shape)))
    # PyTorch's kernel copies non-contiguous operands, after its checks, and says so once
    for what, t, line in (("input value", input, 32), ("boundary", boundaries, 38)) + (
        (("sorter", sorter, 44),) if sorter is not None else ()
    ):
        if not t.is_contiguous():
            E.warn_once(SS_NON_CONTIGUOUS.format(what=what, line=line))
    return dispatch(OPS_SEARCHSORTED, boundaries, input, sorter, out_int32=out_int32, right=right)


SS_NON_CONTIGUOUS = (
    "torch.searchsorted(): {what} tensor is non-contiguous, this will lower the performance due to "
    "extra data copy when converting non-contiguous tensor to contiguous, please use contiguous "
    "{what} tensor if possible. This message will only appear once per program. (Triggered "
    "internally at /__w/pytorch/pytorch/aten/src/ATen/native/BucketizationUtils.h:{line}.)"
)


@tensor_op("searchsorted", method=False)
def searchsorted(
    sorted_sequence, input, *, out_int32=False, right=False, side=None, sorter=None, out=None
) -> Tensor:
    """``torch.searchsorted``: where values would be inserted into sorted sequences."""
    _need_tensor(sorted_sequence, "searchsorted", "sorted_sequence", 1)
    if not isinstance(input, Tensor) and not E._is_number(input):
        raise TypeError(SS_COMBINATION.format(E.py_typename(sorted_sequence), E.py_typename(input)))
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(SS_SIDE.format(side))
        if right and side == "left":
            raise RuntimeError(SS_SIDE_RIGHT.format(side))
        right = side == "right"
    return _run_searchsorted(sorted_sequence, input, sorter, bool(out_int32), bool(right))


@tensor_op("bucketize", method=False)
def bucketize(input, boundaries, *, out_int32=False, right=False, out=None) -> Tensor:
    """``torch.bucketize``: the bucket of each value among 1-D boundaries."""
    if not isinstance(input, Tensor) and not E._is_number(input):
        raise TypeError(
            BUCKETIZE_COMBINATION.format(E.py_typename(input), E.py_typename(boundaries))
        )
    if not isinstance(boundaries, Tensor):  # neither overload binds
        raise TypeError(
            BUCKETIZE_COMBINATION.format(E.py_typename(input), E.py_typename(boundaries))
        )
    if boundaries._data.ndim != 1:
        raise RuntimeError(BUCKETIZE_DIM.format(boundaries._data.ndim))
    return _run_searchsorted(boundaries, input, None, bool(out_int32), bool(right))


def _c_number(v: float) -> str:
    """A double as C++'s ``operator<<`` prints it."""
    if v != v:
        return "-nan" if np.signbit(v) else "nan"
    if v in (float("inf"), float("-inf")):
        return "inf" if v > 0 else "-inf"
    return format(v, "g")


@tensor_op("histc")
def histc(input, bins=100, min=0, max=0) -> Tensor:  # noqa: A002
    """``torch.histc``: counts in equal-width bins (Note [Histc bins])."""
    bins = int(bins)
    if bins <= 0:
        raise RuntimeError(HISTC_BINS.format(bins))
    low, high = float(E.real_scalar(min, "double")), float(E.real_scalar(max, "double"))
    if input._dtype.is_complex and low == high and input._data.size > 0:
        raise _kernel_error("aminmax_cpu", input._dtype)  # the range from the data comes first
    _histc_rule(((input._dtype, input._data.ndim),), {})
    from_data = low == high and input._data.size > 0
    if from_data and not _is_tracer(input._data):
        values = np.asarray(input._data).astype(np.float64)
        low, high = float(values.min()), float(values.max())
        if low != low or high != high:  # PyTorch's vectorized aminmax gives a negative NaN
            low = high = -float("nan")
        from_data = False
    if not from_data:
        if low == high:
            low, high = low - 1, high + 1
        if not (np.isfinite(low) and np.isfinite(high)):
            raise RuntimeError(HISTC_FINITE.format(_c_number(low), _c_number(high)))
        if not low < high:
            raise RuntimeError(HISTC_ORDER)
    return dispatch(OPS_HISTC, input, bins=bins, low=low, high=high, from_data=from_data)


@tensor_op("bincount")
def bincount(input, weights=None, minlength=0) -> Tensor:
    """``torch.bincount``: the count (or summed weight) of each non-negative integer."""
    dt = input._dtype
    if dt is D.bool_ or dt._kind not in "ui":
        raise _kernel_error("bincount_cpu", dt)
    if minlength < 0:
        raise RuntimeError(BINCOUNT_MINLENGTH)
    if input._data.ndim == 1 and input._data.size == 0:
        return Tensor._make(
            jnp.zeros((minlength,), jnp.int64),
            D.int64,
            input._device,
            inference=grad_mode._state.inference,
        )
    values = _host(input, "bincount")
    if values.ndim != 1 or values.min() < 0:
        raise RuntimeError(BINCOUNT_INPUT)
    if weights is not None and (weights._data.ndim != 1 or weights.shape[0] != values.shape[0]):
        raise RuntimeError(BINCOUNT_WEIGHTS)
    length = max(int(values.max()) + 1, int(minlength))
    return dispatch(OPS_BINCOUNT, input, weights, length=length)


def _check_unique_dtype(input: Tensor, kernel: str) -> None:
    if input._dtype.is_complex:
        raise _kernel_error(kernel, input._dtype)


def _wrap(dim: int, ndim: int) -> int:
    if ndim == 0:
        raise IndexError(E.DIM_SCALAR.format(dim))
    if not -ndim <= dim < ndim:
        raise IndexError(E.DIM_RANGE.format(-ndim, ndim - 1, dim))
    return dim % ndim


def _groups(keys: np.ndarray, consecutive: bool):
    """``(first index of each group, inverse, counts)`` of the rows of ``keys`` (2-D): sorted
    (a stable lexicographic sort) or of consecutive runs. NaNs are never equal."""
    n = keys.shape[0]
    if n == 0:
        empty = np.zeros((0,), np.int64)
        return empty, empty, empty
    if consecutive:
        order = np.arange(n)
    elif keys.shape[1] == 1:
        order = np.argsort(keys[:, 0], kind="stable")
    else:
        order = np.lexsort(keys.T[::-1])
    ordered = keys[order]
    new = np.ones(n, bool)
    new[1:] = (ordered[1:] != ordered[:-1]).any(axis=1)
    starts = np.flatnonzero(new)
    inverse = np.empty(n, np.int64)
    inverse[order] = np.cumsum(new) - 1
    counts = np.diff(np.append(starts, n))
    return order[starts], inverse, counts


def _unique_outputs(input, name, dim, consecutive, return_inverse, return_counts):
    op = "unique_consecutive" if consecutive else "unique"
    values = _host(input, op, "unique_dim" if dim is not None and not consecutive else op)
    if dim is None:
        first, inverse, counts = _groups(values.reshape(-1, 1), consecutive)
        inverse = inverse.reshape(values.shape)
    else:
        shape = values.shape
        if shape[dim] == 0:
            if shape.count(0) != 1:
                raise RuntimeError(UNIQUE_MANY_ZERO_DIMS)
            first = inverse = counts = np.zeros((0,), np.int64)
        else:
            if 0 in shape:
                raise RuntimeError(UNIQUE_ZERO_DIMS)
            rows = np.moveaxis(values, dim, 0).reshape(shape[dim], -1)
            first, inverse, counts = _groups(rows, consecutive)
    index = Tensor._make(jnp.asarray(first.astype(np.int64)), D.int64, input._device)
    out = dispatch(OPS_UNIQUE, input, index, name=name, dim=dim)
    extra = []
    # PyTorch's kernels write their results in place: on an inference tensor outside inference
    # mode those writes are counted (Note [Inference tensors] in _storage.py; measured)
    counted = kernel_wrote((input,))
    # the kernels over slices (``unique_consecutive`` of a 1-D tensor along 0 takes the other)
    slices = dim is not None and not (consecutive and input._data.ndim == 1)
    versions = _kernel_versions(values, len(first), consecutive, slices) if counted else (0, 0, 0)
    out._version_counter.value = versions[0]
    if return_inverse:
        extra.append(_int_tensor(inverse, input))
        extra[-1]._version_counter.value = versions[1]
    if return_counts:
        extra.append(_int_tensor(counts, input))
        extra[-1]._version_counter.value = versions[2]
    return (out, *extra) if extra else out


def _kernel_versions(values, groups: int, consecutive: bool, slices: bool) -> tuple:
    """The versions PyTorch's CPU kernels leave on (output, inverse, counts): their ``resize_``
    calls, counted where they change a size (measured). The flat kernels start from empty
    tensors: the inverse is resized to the input's shape; ``unique_consecutive`` resizes the
    counts to the input's size and then, like the output, to the number of runs."""
    numel = values.size
    if slices:
        return 0, 0, 1 if numel else 0
    inverse = 0 if values.shape == (0,) else 1
    if not consecutive:
        return (1, 1, 1) if numel else (0, inverse, 0)
    shrunk = 1 if numel and groups != numel else 0
    return shrunk, inverse, (1 if numel else 0) + shrunk


@tensor_op("unique")
def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):  # noqa: A002
    """``torch.unique``: the sorted distinct values (or slices along ``dim``), with the inverse
    indices and counts on request (Note [Eager unique]); on CPU the result is sorted whatever
    ``sorted`` says, as PyTorch's is."""
    name = "_unique2" if dim is None else "unique_dim"
    E.need_tensor(input, name)  # PyTorch's Python-level unique passes it on to ``name``
    _bool_flags(name, sorted=sorted, return_inverse=return_inverse, return_counts=return_counts)
    if dim is None:
        _check_unique_dtype(input, "unique")
    else:
        dim = _wrap(int(dim), input._data.ndim)
        _check_unique_dtype(input, "unique_dim")
    return _unique_outputs(input, name, dim, False, return_inverse, return_counts)


def _bool_flags(fn: str, **flags) -> None:
    """The parser's refusal of a flag that is not a Python bool (PyTorch's Python-level unique
    passes them on by keyword to ``fn``)."""
    for name, value in flags.items():
        check_bool(fn, name, value, None)


@tensor_op("unique_consecutive")
def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """``torch.unique_consecutive``: one element (or slice) of each run of equal ones."""
    E.need_tensor(input, "unique_consecutive")
    _bool_flags("unique_consecutive", return_inverse=return_inverse, return_counts=return_counts)
    if dim is not None:
        dim = _wrap(int(dim), input._data.ndim)
    _check_unique_dtype(input, "unique")
    return _unique_outputs(input, "unique_consecutive", dim, True, return_inverse, return_counts)


@tensor_op("polar", method=False)
@_autocast.policy("fp32")
def polar(abs, angle, *, out=None) -> Tensor:  # noqa: A002
    """``torch.polar``: ``abs * (cos(angle) + i sin(angle))``."""
    _need_tensor(abs, "polar", "abs", 1)
    _need_tensor(angle, "polar", "angle", 2)
    return dispatch(OPS_POLAR, abs, angle)


@tensor_op("complex", method=False)
def complex(real, imag, *, out=None) -> Tensor:  # noqa: A001
    """``torch.complex``: ``real + i imag``."""
    _need_tensor(real, "complex", "real", 1)
    _need_tensor(imag, "complex", "imag", 2)
    out = dispatch(OPS_COMPLEX, real, imag)
    if out._grad_fn is not None:  # Note [Real views of gradients] in autograd/graph.py
        from ..autograd.graph import REAL_VIEW_GRADS

        REAL_VIEW_GRADS[out._grad_fn] = ("complex",)
    return out


@tensor_op("frexp")
def frexp(input, *, out=None):
    """``torch.frexp``: mantissas in ``[0.5, 1)`` and int32 exponents."""
    return frexp_type(*dispatch(OPS_FREXP, input))


@tensor_op("signbit")
def signbit(input, *, out=None) -> Tensor:
    """``torch.signbit``: whether the sign bit is set (``-0.0`` included)."""
    return dispatch(OPS_SIGNBIT, input)


OPS_SEARCHSORTED = OPS["searchsorted"]
OPS_HISTC = OPS["histc"]
OPS_BINCOUNT = OPS["bincount"]
OPS_UNIQUE = OPS["unique"]
OPS_POLAR = OPS["polar"]
OPS_COMPLEX = OPS["complex"]
OPS_FREXP = OPS["frexp"]
OPS_SIGNBIT = OPS["signbit"]


# --- histogram -----------------------------------------------------------------------------------
# ``torch.histogram`` (ATen's histogramdd over one dimension): ``x`` goes into bin ``i`` with
# ``edges[i] <= x < edges[i + 1]``, the last bin keeping its right edge; values outside the edges
# (and NaNs) are not counted. Equal-width edges are ``linspace(min, max, bins + 1)`` in the input's
# dtype, the range the data's by default ([0, 1] without data, widened by 0.5 each way when
# it is one value). No derivative is defined: the results of an input requiring grad get
# PyTorch's NotImplemented node.

_HISTOGRAM_NO_GRAD = _refusal(lambda: RuntimeError(NO_DERIVATIVE.format("histogram")))
HISTDD = "torch.histogramdd: "


def _histogram_forward(x, edges, weight, density=False):
    x = _HISTOGRAM_NO_GRAD(x).reshape(-1)
    edges = _HISTOGRAM_NO_GRAD(edges)
    n = edges.shape[0] - 1
    pos = jnp.searchsorted(edges, x, side="right") - 1
    pos = jnp.where(x == edges[-1], n - 1, pos)
    keep = (x >= edges[0]) & (x <= edges[-1])
    pos = jnp.where(keep, pos, n)  # a bin past the end, dropped
    if weight is None:
        w = jnp.ones(x.shape, x.dtype)
    else:
        w = _HISTOGRAM_NO_GRAD(weight).reshape(-1)
    hist = jnp.zeros((n + 1,), x.dtype).at[pos].add(w)[:n]
    if density:
        hist = hist / jnp.sum(hist)
        hist = hist / (edges[1:] - edges[:-1])
    return hist, edges


def _histogram_rule(meta, static):
    dt = meta[0][0]
    return (None, None, None), (dt, dt)


register_ops(
    OpDef(
        "histogram",
        _histogram_forward,
        "NotImplemented",
        ("self", "bins", "weight"),
        _histogram_rule,
    )
)
histogram_type = return_type("histogram", ("hist", "bin_edges"))


HISTOGRAM_TRACED = (
    "leafgrad: histogram with a count of bins and no range= reads the input's values for the "
    "bin edges, one set per call; a traced input (inside vmap, where each sample would need its "
    "own, or leafgrad.compile) has none: pass range= or the edges as a tensor"
)


@tensor_op("histogram")
def histogram(input, bins=100, *, range=None, weight=None, density=False, out=None):  # noqa: A002
    """``torch.histogram``: ``(hist, bin_edges)`` of ``input``'s values; ``bins`` a count of
    equal-width bins or the edges themselves (a 1-D tensor)."""
    from .._factories import linspace

    dt = input._dtype
    if dt not in (D.float32, D.float64):  # the kernel has no half types
        raise NotImplementedError(KERNEL_DTYPE.format("histogramdd", E.scalar_type_name(dt)))
    if weight is not None and tuple(weight.shape) != tuple(input.shape):
        shape = ", ".join(str(s) for s in (int(np.prod(input.shape)), 1))
        raise RuntimeError(
            HISTDD + "if weight tensor is provided it should have the same shape as the input "
            "tensor excluding its innermost dimension, but got input with shape "
            f"[{shape}] and weight with shape [{', '.join(str(s) for s in weight.shape)}]"
        )
    if isinstance(bins, Tensor):
        if bins._dtype is not dt:
            raise RuntimeError(
                HISTDD + "input tensor and bins tensors should have the same dtype, but got input "
                f"with dtype {E.scalar_type_name(dt).lower()} and bins for dimension 0 with dtype "
                f"{E.scalar_type_name(bins._dtype).lower()}"
            )
        if bins.ndim != 1:
            raise RuntimeError(
                HISTDD + f"bins tensor should have one dimension, but got {bins.ndim} dimensions "
                "in the bins tensor for dimension 0"
            )
        edges = bins
    else:
        bins = int(bins)
        if bins <= 0:
            raise RuntimeError(
                f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0"
            )
        if range is not None:
            low, high = float(range[0]), float(range[1])
        elif input._data.size:
            if _is_tracer(input._data):
                raise NotImplementedError(HISTOGRAM_TRACED)
            values = np.asarray(input._data).astype(np.float64)
            low, high = float(values.min()), float(values.max())
        else:
            low, high = 0.0, 1.0  # numpy's range for no data
        low, high = _checked_range(low, high, 0)
        with grad_mode.no_grad():
            edges = linspace(low, high, bins + 1, dtype=dt, device=input.device)
    hist, bin_edges = dispatch(OPS["histogram"], input, edges, weight, density=bool(density))
    given = (input, bins if isinstance(bins, Tensor) else None, weight)
    kernel_wrote(given, (hist, 4 if density else 2), (bin_edges, 1))
    return histogram_type(hist, bin_edges)


# --- histogramdd ----------------------------------------------------------------------------------

_FROM_COUNTS_NO_GRAD = _refusal(
    lambda: RuntimeError(NO_DERIVATIVE.format("_histogramdd_from_bin_cts"))
)
_FROM_TENSORS_NO_GRAD = _refusal(
    lambda: RuntimeError(NO_DERIVATIVE.format("_histogramdd_from_bin_tensors"))
)
_EDGES_NO_GRAD = _refusal(lambda: RuntimeError(NO_DERIVATIVE.format("_histogramdd_bin_edges")))


def _histogramdd_forward(x, weight, *edges, density=False, from_counts=True):
    """PyTorch's histogramdd kernel: each row of ``x`` (``(N, D)``) falls in the bin of each
    dim whose edges hold it (the last bin closed on the right); rows outside any dim's edges
    are dropped."""
    refuse = _FROM_COUNTS_NO_GRAD if from_counts else _FROM_TENSORS_NO_GRAD
    x = refuse(x)
    edges = [refuse(e) for e in edges]
    sizes = [e.shape[0] - 1 for e in edges]
    flat = jnp.zeros(x.shape[:1], jnp.int64)
    keep = jnp.ones(x.shape[:1], bool)
    for d, e in enumerate(edges):
        v = x[:, d]
        pos = jnp.searchsorted(e, v, side="right") - 1
        pos = jnp.where(v == e[-1], sizes[d] - 1, pos)
        keep = keep & (v >= e[0]) & (v <= e[-1])
        flat = flat * sizes[d] + jnp.clip(pos, 0, max(sizes[d] - 1, 0))
    total = int(np.prod(sizes))
    w = jnp.ones(x.shape[:1], x.dtype) if weight is None else refuse(weight)
    flat = jnp.where(keep, flat, total)  # a bin past the end, dropped
    hist = jnp.zeros((total + 1,), x.dtype).at[flat].add(w)[:total].reshape(sizes)
    if density:
        hist = hist / jnp.sum(hist)
        for d, e in enumerate(edges):
            shape = [1] * len(edges)
            shape[d] = sizes[d]
            hist = hist / (e[1:] - e[:-1]).reshape(shape)
    return hist


def _histogramdd_rule(meta, static):
    return (None,) * len(meta), meta[0][0]


def _bin_edges_forward(x, *, edges, dtype, dtype_):
    """The bin edges (computed by ``linspace`` outside, as constants), depending on ``x`` only
    through the refusal: PyTorch's ``_histogramdd_bin_edges`` has no derivative."""
    zero = jnp.sum(_EDGES_NO_GRAD(x)[:0]).astype(dtype)
    return tuple(jnp.asarray(e, dtype) + zero for e in edges)


@functools.cache
def _histogramdd_op(dims: int) -> OpDef:
    names = ("self", "weight") + tuple(f"bins{d}" for d in range(dims))
    return OpDef("histogramdd", _histogramdd_forward, "NotImplemented", names, _histogramdd_rule)


@functools.cache
def _bin_edges_op(dims: int) -> OpDef:
    return OpDef(
        "histogramdd_bin_edges",
        _bin_edges_forward,
        "NotImplemented",
        ("self",),
        lambda meta, static: ((None,), (static["dtype_"],) * dims),
        n_out=dims,
    )


histogramdd_type = return_type("histogramdd", ("hist", "bin_edges"))
_HISTOGRAMDD_SIGS = tuple(
    f"(Tensor input, {bins} bins, tuple of floats range = None, Tensor weight = None, "
    "bool density = False)"
    for bins in ("int", "tuple of ints", "tuple of Tensors")
)


def _checked_range(low, high, d) -> tuple:
    if not (np.isfinite(low) and np.isfinite(high)):
        raise RuntimeError(
            HISTDD + f"dimension {d}'s range [{_c_number(low)}, {_c_number(high)}] is not finite"
        )
    if low > high:
        raise RuntimeError(
            HISTDD + f"min should not exceed max, but got min {_c_number(low)} max "
            f"{_c_number(high)} for dimension {d}"
        )
    return (low - 0.5, high + 0.5) if low == high else (low, high)


@tensor_op("histogramdd", method=False)
def histogramdd(input, bins=None, *, range=None, weight=None, density=False, out=None):  # noqa: A002
    """``torch.histogramdd``: ``(hist, bin_edges)`` of the rows of ``input`` (its innermost dim
    is the point's coordinates); ``bins`` a count for every dim, a count per dim, or the edges
    of each dim (1-D tensors, returned as given)."""
    from .._factories import linspace

    if bins is None:  # required: PyTorch's parser lists its signatures
        given = {"range": range, "weight": weight, "density": density, "out": out}
        given = {k: v for k, v in given.items() if v is not None and v is not False}
        raise TypeError(E.invalid_arguments("histogramdd", _HISTOGRAMDD_SIGS, (input,), given))

    dt = input._dtype
    counts = None
    if isinstance(bins, int) and not isinstance(bins, bool):
        if not input.ndim:  # PyTorch reads ``input.size(-1)`` first
            raise IndexError("Dimension specified as -1 but tensor has no dimensions")
        counts = [bins] * input.shape[-1]
    elif isinstance(bins, (list, tuple)) and all(isinstance(b, int) for b in bins):
        counts = list(bins)
    if input.ndim < 2:
        raise RuntimeError(HISTDD + "input tensor should have at least 2 dimensions")
    if counts is None and len(list(bins)) != input.shape[-1]:  # before the dtype's refusal
        raise RuntimeError(
            HISTDD + f"expected {input.shape[-1]} sequences of bin edges for a "
            f"{input.shape[-1]}-dimensional histogram but got {len(list(bins))}"
        )
    if dt not in (D.float32, D.float64):  # the kernel has no half types
        raise NotImplementedError(KERNEL_DTYPE.format("histogramdd", E.scalar_type_name(dt)))
    if counts is not None and len(counts) != input.shape[-1]:
        raise RuntimeError(
            "histogramdd: The size of bins must be equal to the innermost dimension of the input."
        )
    dims = input.shape[-1]
    rows = int(np.prod(input.shape[:-1]))
    if counts is None:
        bins = list(bins)
        if len(bins) != dims:
            raise RuntimeError(
                HISTDD + f"expected {dims} sequences of bin edges for a {dims}-dimensional "
                f"histogram but got {len(bins)}"
            )
        for d, b in enumerate(bins):
            if b.ndim != 1:
                raise RuntimeError(
                    HISTDD + f"bins tensor should have one dimension, but got {b.ndim} "
                    f"dimensions in the bins tensor for dimension {d}"
                )
            if b._dtype is not dt:
                raise RuntimeError(
                    HISTDD + "input tensor and bins tensors should have the same dtype, but got "
                    f"input with dtype {E.scalar_type_name(dt).lower()} and bins for dimension "
                    f"{d} with dtype {E.scalar_type_name(b._dtype).lower()}"
                )
            if b.shape[0] < 1:
                raise RuntimeError(
                    HISTDD + "bins tensor should have at least 1 element, but got 0 elements in "
                    f"the bins tensor for dimension {d}"
                )
    if weight is not None:
        if tuple(weight.shape) != tuple(input.shape[:-1]):
            raise RuntimeError(
                HISTDD + "if weight tensor is provided it should have the same shape as the "
                f"input tensor excluding its innermost dimension, but got input with shape "
                f"[{rows}, {dims}] and weight with shape [{', '.join(map(str, weight.shape))}]"
            )
        if weight._dtype is not dt:
            n = E.c_type_name
            raise RuntimeError(
                HISTDD + "if weight tensor is provided, input tensor and weight tensor should "
                f"have the same dtype, but got input({n(dt)}), and weight({n(weight._dtype)})"
            )
    x = input.reshape(rows, dims)
    w = None if weight is None else weight.reshape(rows)
    if counts is not None:
        for d, c in enumerate(counts):
            if c <= 0:
                raise RuntimeError(
                    f"torch.histogram(): bins must be > 0, but got {c} for dimension {d}"
                )
        if range is not None and len(range) != 2 * dims:
            raise RuntimeError(
                HISTDD + f"for a {dims}-dimensional histogram range should have {2 * dims} "
                f"elements, but got {len(range)}"
            )
        values = np.asarray(x._data).astype(np.float64) if range is None else None
        limits = []
        for d in builtins.range(dims):
            if range is not None:
                low, high = float(range[2 * d]), float(range[2 * d + 1])
            elif rows:
                low, high = float(values[:, d].min()), float(values[:, d].max())
            else:
                low, high = 0.0, 1.0
            limits.append(_checked_range(low, high, d))
        with grad_mode.no_grad():
            arrays = [
                linspace(lo, hi, c + 1, dtype=dt, device=input.device)._data
                for (lo, hi), c in zip(limits, counts)
            ]
        static = tuple(tuple(float(v) for v in np.asarray(a)) for a in arrays)
        edges = dispatch(_bin_edges_op(dims), x, edges=static, dtype=dt.np, dtype_=dt)
        edges = tuple(edges) if isinstance(edges, (tuple, list)) else (edges,)
        hist = dispatch(
            _histogramdd_op(dims), x, w, *edges, density=bool(density), from_counts=True
        )
        kernel_wrote((input, weight), (hist, 2 + 3 * bool(density)), *((e, 1) for e in edges))
        return histogramdd_type(hist, edges)
    hist = dispatch(_histogramdd_op(dims), x, w, *bins, density=bool(density), from_counts=False)
    kernel_wrote((input, weight, *bins), (hist, 2 + 3 * bool(density)))
    return histogramdd_type(hist, tuple(bins))
