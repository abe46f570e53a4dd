"""``torch.nn.functional`` padding, 3-d and adaptive pooling, Lp pooling, local response norm and
channel (feature) dropouts, recorded with PyTorch's nodes.

``F.pad``'s constant, reflect and replicate modes are table ops named like ATen's
(``constant_pad_nd``, ``reflection_padNd``, ``replication_padNd``); reflect and replicate gather
from the input with static index arrays, so JAX's VJP is one scatter-add in output order, as
PyTorch's backward kernels add. Circular padding is built the way ATen's ``_pad_circular`` does
it: slices of a new tensor written with ``copy_`` (``CopySlices`` nodes). The Lp pools and local
response norm are composites mirroring PyTorch's Python code; the dropouts draw their noise from
PyTorch's CPU bernoulli stream in the order ATen's ``_dropout_impl`` draws it.
"""

from __future__ import annotations

import math

import jax.numpy as jnp
import numpy as np
from jax import lax

from .. import _autocast
from .. import _errors as E
from .. import _random as R
from ..ops.api import register_ops
from ..ops.dispatch import dispatch
from ..ops.table import OPS, OpDef
from . import _conv_pool as C

__all__ = [
    "pad",
    "max_pool3d",
    "avg_pool3d",
    "adaptive_avg_pool3d",
    "adaptive_max_pool1d",
    "adaptive_max_pool3d",
    "lp_pool1d",
    "lp_pool2d",
    "lp_pool3d",
    "conv_transpose3d",
    "local_response_norm",
    "dropout1d",
    "dropout2d",
    "dropout3d",
    "alpha_dropout",
    "feature_alpha_dropout",
]

# PyTorch's messages (aten/src/ATen/native/PadNd.cpp, ReflectionPad.cpp, Pool.h, Dropout.cpp, ...).
PAD_ODD = "Padding length must be divisible by 2"
PAD_TOO_LONG = (
    "Padding length should be less than or equal to two times the input dimension but got "
    "padding length {} and input of dimension {}"
)
PAD_MODE = "Unrecognised padding mode {}"
PAD_VALUE = 'Padding mode "{}" doesn\'t take in value argument'
PAD_UNSUPPORTED = (
    "Padding size {} is not supported for {}D input tensor.\n"
    "Supported combinations for non-constant padding:\n"
    "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
    "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
    "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)"
)
PAD_MODE_TYPE = "pad(): argument 'mode' (position 3) must be str, not {}"
REFLECT_SIZE = (
    "Argument #{}: Padding size should be less than the corresponding input dimension, but got: "
    "padding ({}, {}) at dimension {} of input {}"
)
PAD_INPUT = (
    "Expected {}D or {}D (batch mode) tensor with possibly 0 batch size and other non-zero "
    "dimensions for input, but got: {}"
)
NARROW_NEG = "narrow(): length must be non-negative."
CIRCULAR_WRAP = "Padding value causes wrapping around more than once."
CIRCULAR_EMPTY = "Negative padding value is resulting in an empty dimension"
NEGATIVE_DIM = "Trying to create tensor with negative dimension {}: {}"
POOL3D_INPUT = "non-empty 4D or 5D (batch mode) tensor expected for input"
POOL3D_EMPTY = (
    "{}: Expected input's non-batch dimensions to have positive length, but input has a shape "
    "of {} and non-batch dimension {} has length zero!"
)
AVG3D_SMALL = "input image (T: {} H: {} W: {}) smaller than kernel size (kT: {} kH: {} kW: {})"
DROPOUT_P = "dropout probability has to be between 0 and 1, but got {}"
FEATURE_DIMS = "Feature dropout requires at least 2 dimensions in the input"
CAST_ERROR = "result type Float can't be cast to the desired output type {}"
DROPOUT1D_DIMS = (
    "dropout1d: Expected 2D or 3D input, but received a {}D input. Note that dropout1d exists to "
    "provide channel-wise dropout on inputs with 1 spatial dimension, a channel dimension, and "
    "an optional batch dimension (i.e. 2D or 3D inputs)."
)
DROPOUT_ND_WARNING = (
    "dropout{n}d: Received a {d}-D input to dropout{n}d, which is deprecated and will result in "
    "an error in a future release. To retain the behavior and silence this warning, please use "
    "dropout instead. Note that dropout{n}d exists to provide channel-wise dropout on inputs "
    "with {n} spatial dimensions, a channel dimension, and an optional batch dimension (i.e. "
    "{a}D or {b}D inputs)."
)
DROPOUT2D_3D_WARNING = (
    "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D dropout "
    "behavior is desired - input is interpreted as shape (N, C, L), where C is the channel dim. "
    "This behavior will change in a future release to interpret the input as one without a "
    "batch dimension, i.e. shape (C, H, W). To maintain the 1D channel-wise dropout behavior, "
    "please switch to using dropout1d instead."
)
LRN_DIMS = "Expected 3D or higher dimensionality                          input (got {} dimensions)"


# --- padding ops ---------------------------------------------------------------------------------


def _constant_pad(x, pad, value):
    """``constant_pad_nd``: ``pad`` is ((lo, hi), ...) for the trailing dims (negative crops)."""
    lead = x.ndim - len(pad)
    cfg = [(0, 0, 0)] * lead + [(lo, hi, 0) for lo, hi in pad]
    # The fill value is converted as C++ converts a double to the tensor's type (truncation).
    fill = jnp.asarray(value).astype(x.dtype)
    return lax.pad(x, fill, cfg)


def _pad_index(n, lo, hi, mode):
    """Input positions each output position reads, along one dim: the input cropped by the
    negative pads, then reflected or replicated by the positive ones (PyTorch's kernels)."""
    start = max(-lo, 0)
    m = n - start - max(-hi, 0)
    k = np.arange(m + max(lo, 0) + max(hi, 0)) - max(lo, 0)
    if mode == "reflect":
        k = np.abs(k)
        k = np.where(k >= m, 2 * (m - 1) - k, k)
    return np.clip(k, 0, max(m - 1, 0)) + start


def _gather_pad(x, pad, mode):
    nd = len(pad)
    lead, shape = x.shape[: x.ndim - nd], x.shape[x.ndim - nd :]
    flat = np.zeros((), np.int64)
    outs = []
    for i, (n, (lo, hi)) in enumerate(zip(shape, pad)):
        ix = _pad_index(n, lo, hi, mode)
        sh = [1] * nd
        sh[i] = ix.shape[0]
        flat = flat * n + ix.reshape(sh)
        outs.append(ix.shape[0])
    flat = np.broadcast_to(flat, tuple(outs)).reshape(-1)
    out = jnp.take(x.reshape(lead + (math.prod(shape),)), jnp.asarray(flat), axis=-1)
    return out.reshape(lead + tuple(outs))


def _pad_name(prefix):
    return lambda pad, mode: f"{prefix}{len(pad)}DBackward0"


register_ops(
    OpDef("constant_pad_nd", _constant_pad, "ConstantPadNdBackward0", ("self",), C._dtype_rule),
    OpDef(
        "reflection_pad",
        _gather_pad,
        _pad_name("ReflectionPad"),
        ("self",),
        C._dtype_rule,
        saves={"self": ("self",)},
    ),
    OpDef(
        "replication_pad",
        _gather_pad,
        _pad_name("ReplicationPad"),
        ("self",),
        C._dtype_rule,
        saves={"self": ("self",)},
    ),
    OpDef(
        "max_pool3d_with_indices",
        C._max_pool_forward,
        "MaxPool3DWithIndicesBackward0",
        ("self",),
        C._pool_rule,
        saves={"self": ("self",)},
        n_out=2,
        differentiable_outputs=(0,),
    ),
    OpDef(
        "avg_pool3d",
        C._avg_pool_forward,
        "AvgPool3DBackward0",
        ("self",),
        C._dtype_rule,
        saves={"self": ("self",)},
    ),
    OpDef(
        "adaptive_max_pool3d",
        C._adaptive_max_forward,
        "AdaptiveMaxPool3DBackward0",
        ("self",),
        C._pool_rule,
        saves={"self": ("self",)},
        n_out=2,
        differentiable_outputs=(0,),
    ),
)


# --- F.pad ---------------------------------------------------------------------------------------


def _pairs(pad):
    """F.pad's flat (last dim first) list as ((lo, hi), ...) in dim order."""
    return tuple((pad[2 * i], pad[2 * i + 1]) for i in reversed(range(len(pad) // 2)))


def pad(input, pad, mode="constant", value=None):
    """``F.pad``: 'constant' (negative pads crop), 'reflect', 'replicate' and 'circular'."""
    if not isinstance(mode, str):
        raise TypeError(PAD_MODE_TYPE.format(type(mode).__name__))
    from .. import _arg_check

    message = _arg_check._list_error("pad", "pad", " (position 2)", pad)
    if message is not None:  # torch's pad parser: a list, not a bare int
        raise TypeError(message)
    if _autocast.ANY[0] and (mode == "replicate" or (mode == "reflect" and len(pad) < 6)):
        # Note [Autocast]: reflection_pad1d/2d and replication_pad1d/2d/3d run in float32
        return _fp32_pad(input, pad, mode, value)
    return _pad(input, pad, mode, value)


_fp32_pad = _autocast.policy("fp32")(lambda input, pad, mode, value: _pad(input, pad, mode, value))


def _pad(input, pad, mode, value):
    """F.pad once its arguments are parsed (``torch.constant_pad_nd`` takes a complex value)."""
    message = E.ints_error("pad", "pad", " (position 2)", tuple(pad))
    if message is not None:
        raise TypeError(message)
    pad = [int(p) for p in pad]
    if mode not in ("constant", "reflect", "replicate", "circular"):
        raise NotImplementedError(PAD_MODE.format(mode))
    nd = input.ndim
    if len(pad) % 2:
        raise RuntimeError(PAD_ODD)
    if len(pad) > 2 * nd:
        raise RuntimeError(PAD_TOO_LONG.format(len(pad), nd))
    if mode == "constant":
        return _pad_constant(input, pad, 0.0 if value is None else value)
    if value is not None and value != 0:
        raise RuntimeError(PAD_VALUE.format(mode))
    k = len(pad) // 2
    if k not in (1, 2, 3) or nd not in (k + 1, k + 2):
        raise NotImplementedError(PAD_UNSUPPORTED.format(len(pad), nd))
    if mode == "circular":
        return _pad_circular(input, pad)
    return _pad_gather(input, _pairs(pad), mode)


def _pad_constant(input, pad, value):
    shape = list(input.shape)
    lead = input.ndim - len(pad) // 2
    pairs = _pairs(pad)
    for i, (lo, hi) in enumerate(pairs):  # ATen narrows for the negative pads first
        for p in (lo, hi):
            if p < 0:
                if shape[lead + i] + p < 0:
                    raise RuntimeError(NARROW_NEG)
                shape[lead + i] += p
    from ..autograd import grad_mode

    if input._inference and not grad_mode._state.inference:
        return _pad_constant_below_autograd(input, pairs, value, tuple(shape))
    return dispatch(OPS["constant_pad_nd"], input, pad=pairs, value=value)


def _pad_constant_below_autograd(input, pairs, value, cropped):
    """ATen's ``constant_pad_nd`` kernel, step by step, where PyTorch runs it below autograd (an
    inference tensor outside inference mode: Note [Inference tensors] in _storage.py): its
    ``fill_`` and ``copy_`` into the new tensor are counted and recorded as such (a
    ``CopySlices`` where the input requires grad); pads that are all <= 0 clone the cropped
    input."""
    from .._factories import empty
    from .._tensor import _suggested_format

    lead = input.ndim - len(pairs)
    c_input = input
    for i, (lo, hi) in enumerate(pairs):
        d = lead + i
        if lo < 0:
            c_input = c_input.narrow(d, -lo, c_input.shape[d] + lo)
        if hi < 0:
            c_input = c_input.narrow(d, 0, c_input.shape[d] + hi)
    if all(p <= 0 for pair in pairs for p in pair):
        return c_input.clone()
    shape = list(cropped)
    for i, (lo, hi) in enumerate(pairs):
        shape[lead + i] += max(lo, 0) + max(hi, 0)
    output = empty(
        shape, dtype=input.dtype, device=input.device, memory_format=_suggested_format(input)
    )
    output.fill_(value)
    c_output = output
    for i, (lo, hi) in enumerate(pairs):
        d = lead + i
        if lo > 0:
            c_output = c_output.narrow(d, lo, c_output.shape[d] - lo)
        if hi > 0:
            c_output = c_output.narrow(d, 0, c_output.shape[d] - hi)
    c_output.copy_(c_input)
    return output


def _pad_gather(input, pairs, mode):
    k = len(pairs)
    shape = tuple(input.shape)
    if any(v == 0 for v in shape[-k - 1 :]):
        raise RuntimeError(PAD_INPUT.format(k + 1, k + 2, C._size(shape)))
    kernel = ("reflection_pad" if mode == "reflect" else "replication_pad") + f"{k}d"
    if mode == "reflect":
        for j, (lo, hi) in reversed(list(enumerate(pairs))):
            dim = input.ndim - k + j
            if not (lo < shape[dim] and hi < shape[dim]):
                raise RuntimeError(
                    REFLECT_SIZE.format(4 + 2 * (k - 1 - j), lo, hi, dim, C._size(shape))
                )
    outs = [shape[input.ndim - k + j] + lo + hi for j, (lo, hi) in enumerate(pairs)]
    if k == 1 and outs[0] < 1 or k > 1 and all(o < 1 for o in outs):
        names = "DHW"[3 - k :]
        ins = [f"{c}: {n}" for c, n in zip(names, shape[-k:])]
        got = " ".join(f"{c}: {o}" for c, o in zip(names, outs))
        if k == 1:
            text = f"input ({ins[0]}) is too small. Calculated output {got}"
        elif k == 2:
            space = " " if mode == "replicate" else ""
            text = f"input ({ins[0]}, {ins[1]}{space}) is too small. Calculated output {got}"
        else:
            text = f"input ({ins[0]} {ins[1]}, {ins[2]}) is too small. Calculated output {got}"
        raise RuntimeError(text)
    if any(o < 0 for o in outs):
        if mode == "reflect":
            raise RuntimeError("numel: integer multiplication overflow")
        full = list(shape[: input.ndim - k]) + outs
        raise RuntimeError(NEGATIVE_DIM.format(min(outs), C._size(full)))
    C._check_dtype(input, kernel, "fiuc")
    op = "reflection_pad" if mode == "reflect" else "replication_pad"
    return dispatch(OPS[op], input, pad=pairs, mode=mode)


def _slice(t, dim, start, stop):
    from ..ops.shape import _clamp_slice, _slice_view

    start, stop = _clamp_slice(t.shape[dim], start, stop, 1)
    return _slice_view(t, dim, start, stop, 1)


def _pad_circular(input, pad):
    """ATen's ``_pad_circular``: the input copied into a new tensor, then the borders copied from
    the opposite side, one dim (last first) and side at a time."""
    from .._factories import zeros

    in_shape = tuple(input.shape)
    nd = input.ndim
    k = len(pad) // 2
    out_shape = list(in_shape)
    for i in range(k):
        lo, hi = pad[2 * (k - i - 1)], pad[2 * (k - i - 1) + 1]
        size = in_shape[nd - k + i]
        if lo > size or hi > size:
            raise RuntimeError(CIRCULAR_WRAP)
        out_shape[nd - k + i] = size + lo + hi
        if out_shape[nd - k + i] < 0:
            raise RuntimeError(CIRCULAR_EMPTY)
    out = zeros(tuple(out_shape), dtype=input.dtype, device=input.device)
    out_slice, in_slice = out, input
    for i in range(k):
        dim = nd - i - 1
        lo, hi = pad[2 * i], pad[2 * i + 1]
        out_slice = _slice(out_slice, dim, max(lo, 0), out_shape[dim] - max(hi, 0))
        in_slice = _slice(in_slice, dim, max(-lo, 0), in_shape[dim] - max(-hi, 0))
    out_slice.copy_(in_slice)
    for i in range(k):
        dim = nd - i - 1
        lo, hi = pad[2 * i], pad[2 * i + 1]
        if lo > 0:
            end = out_shape[dim] - max(hi, 0)
            _slice(out, dim, 0, lo).copy_(_slice(out, dim, end - lo, end))
        if hi > 0:
            start = max(lo, 0)
            n = out_shape[dim]
            _slice(out, dim, n - hi, n).copy_(_slice(out, dim, start, start + hi))
    return out


# --- 3-d and adaptive pooling --------------------------------------------------------------------


def _pool3d_checks(input, k, s, p, d, ceil_mode, name, avg):
    if input.ndim not in (4, 5):
        raise RuntimeError(POOL3D_INPUT)
    C._check_window(k, s, p, d)
    if any(v <= 0 for v in d):
        raise RuntimeError(
            "dilation should be greater than zero, but got "
            f"dilationT: {d[0]} dilationH: {d[1]} dilationW: {d[2]}"
        )
    batched = input.ndim == 5
    dims = tuple(input.shape[1:] if batched else input.shape)
    for i, v in enumerate(dims):
        if v == 0:
            raise RuntimeError(POOL3D_EMPTY.format(name, C._size(input.shape), i))
    t, h, w = input.shape[-3:]
    if avg and not (t >= k[0] and h >= k[1] and w >= k[2]):
        raise RuntimeError(AVG3D_SMALL.format(t, h, w, *k))
    outs = [
        C._pool_out(n, kk, ss, pp, dd, ceil_mode)
        for n, kk, ss, pp, dd in zip(input.shape[-3:], k, s, p, d)
    ]
    if any(o < 1 for o in outs):
        c = input.shape[-4]
        raise RuntimeError(
            C.POOL_TOO_SMALL.format(f"{c}x{t}x{h}x{w}", f"{c}x{outs[0]}x{outs[1]}x{outs[2]}")
        )


@_autocast.policy("fp32")
def max_pool3d(
    input,
    kernel_size,
    stride=None,
    padding=0,
    dilation=1,
    ceil_mode=False,
    return_indices=False,
):
    """``F.max_pool3d``: the gradient goes to the first maximum of each window."""
    k, s, p = C._pool_args(kernel_size, stride, padding, 3)
    d = C._window_tuple(dilation, 3)
    _pool3d_checks(
        input, k, s, p, d, ceil_mode, "max_pool3d_with_indices_out_cpu_template()", False
    )
    C._check_dtype(input, "max_pool3d_cpu", "fiu")
    out, idx = dispatch(
        OPS["max_pool3d_with_indices"],
        input,
        kernel=k,
        stride=s,
        padding=p,
        dilation=d,
        ceil_mode=bool(ceil_mode),
    )
    C.keep_window(out, 3, kernel_size, stride, padding, dilation)
    return (out, idx) if return_indices else out


@_autocast.policy("fp32")
def avg_pool3d(
    input,
    kernel_size,
    stride=None,
    padding=0,
    ceil_mode=False,
    count_include_pad=True,
    divisor_override=None,
):
    """``F.avg_pool3d``."""
    k, s, p = C._pool_args(kernel_size, stride, padding, 3)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    _pool3d_checks(input, k, s, p, (1, 1, 1), ceil_mode, "avg_pool3d()", True)
    C._check_dtype(input, "avg_pool3d_out_frame", "f int64")
    out = dispatch(
        OPS["avg_pool3d"],
        input,
        kernel=k,
        stride=s,
        padding=p,
        ceil_mode=bool(ceil_mode),
        count_include_pad=bool(count_include_pad),
        divisor_override=None if divisor_override is None else int(divisor_override),
    )
    C.keep_window(out, 3, kernel_size, stride, padding)
    return out


def _output_size3(input, output_size):
    o = output_size if isinstance(output_size, (list, tuple)) else (output_size,) * 3
    return tuple(input.shape[input.ndim - 3 + i] if v is None else int(v) for i, v in enumerate(o))


@_autocast.policy("fp32")
def adaptive_avg_pool3d(input, output_size):
    """``F.adaptive_avg_pool3d``; an output of size 1 is a mean, as in PyTorch."""
    o = _output_size3(input, output_size)
    if any(v < 0 for v in o):
        raise RuntimeError(
            "adaptive_avg_pool3d: elements of output_size must be greater than or equal to 0 "
            f"but received {{{o[0]}, {o[1]},{o[2]}}}"
        )
    if o == (1, 1, 1):
        return input.mean(dim=(-1, -2, -3), keepdim=True)
    if input.ndim not in (4, 5):
        raise RuntimeError(
            f"adaptive_avg_pool3d(): Expected 4D or 5D tensor, but got {C._size(input.shape)}"
        )
    C._check_dtype(input, "adaptive_avg_pool3d_cpu", "f")
    C.pooled_nonempty(input, "adaptive_avg_pool3d", 1)
    out = dispatch(OPS["adaptive_avg_pool3d"], input, output_size=o)
    return C.empty_grad_refused(out, "adaptive_avg_pool3d")


@_autocast.policy("fp32")
def adaptive_max_pool3d(input, output_size, return_indices=False):
    """``F.adaptive_max_pool3d``: the gradient goes to the first maximum of each window."""
    if input.ndim not in (4, 5):
        raise RuntimeError(
            f"adaptive_max_pool3d(): Expected 4D or 5D tensor, but got: {C._size(input.shape)}"
        )
    C.pooled_nonempty(input, "adaptive_max_pool3d", 1)
    o = _output_size3(input, output_size)
    if any(v < 0 for v in o):
        shape = C._size(tuple(input.shape[:-3]) + o)
        raise RuntimeError(NEGATIVE_DIM.format(min(o), shape))
    C._check_dtype(input, "adaptive_max_pool3d_cpu", "f")
    out, idx = dispatch(OPS["adaptive_max_pool3d"], input, output_size=o)
    out = C.empty_grad_refused(out, "adaptive_max_pool3d")
    return (out, idx) if return_indices else out


def adaptive_max_pool1d(input, output_size, return_indices=False):
    """``F.adaptive_max_pool1d``: PyTorch's unsqueeze, 2-d pool, squeeze."""
    (o,) = C._ntuple(output_size, 1)
    C._check_dims(input, "adaptive_max_pool1d")
    C.pooled_nonempty(input, "adaptive_max_pool1d", 1)
    x = C._unsqueeze(input, -2)
    out, idx = C.adaptive_max_pool2d(x, (1, o), return_indices=True)
    out, idx = C._squeeze(out, -2), C._squeeze(idx, -2)
    return (out, idx) if return_indices else out


# --- Lp pooling and local response norm (PyTorch's Python composites) -----------------------------


def _lp_finish(out, size, norm_type):
    from .functional import relu

    return (out.sign() * relu(out.abs())).mul(size).pow(1.0 / norm_type)


def _lp_pool(nd, input, norm_type, kernel_size, stride, ceil_mode):
    maxp = {1: C.max_pool1d, 2: C.max_pool2d, 3: max_pool3d}[nd]
    avgp = {1: C.avg_pool1d, 2: C.avg_pool2d, 3: avg_pool3d}[nd]
    if isinstance(norm_type, (int, float)):
        if norm_type == float("inf"):
            return maxp(input.abs(), kernel_size, stride, 0, 1, ceil_mode)
        if norm_type == -float("inf"):
            return -maxp(-input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    if stride is not None:
        out = avgp(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    else:
        out = avgp(input.pow(norm_type), kernel_size, padding=0, ceil_mode=ceil_mode)
    size = kernel_size if nd == 1 else math.prod(C._ntuple(kernel_size, nd))
    return _lp_finish(out, size, norm_type)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """``F.lp_pool1d``: ``(sum over the window of x**p) ** (1/p)`` via avg_pool1d."""
    return _lp_pool(1, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """``F.lp_pool2d``."""
    return _lp_pool(2, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """``F.lp_pool3d``."""
    return _lp_pool(3, input, norm_type, kernel_size, stride, ceil_mode)


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """``F.local_response_norm``: normalisation across channels, PyTorch's composite."""
    dim = input.ndim
    if dim < 3:
        raise ValueError(LRN_DIMS.format(dim))
    if input.numel() == 0:
        return input
    div = input.mul(input)
    if dim == 3:
        div = div.unsqueeze(1)
        div = pad(div, (0, 0, size // 2, (size - 1) // 2))
        div = C.avg_pool2d(div, (size, 1), stride=1).squeeze(1)
    else:
        sizes = tuple(input.shape)
        div = div.view(sizes[0], 1, sizes[1], sizes[2], -1)
        div = pad(div, (0, 0, 0, 0, size // 2, (size - 1) // 2))
        div = avg_pool3d(div, (size, 1, 1), stride=1).squeeze(1)
        div = div.view(sizes)
    div = div.mul(alpha).add(k).pow(beta)
    return input / div


@_autocast.policy("lower_precision_fp")
def conv_transpose3d(
    input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1
):
    """``F.conv_transpose3d``: weight (C_in, C_out / groups, KD, KH, KW)."""
    return C._convolution(
        "conv_transpose3d",
        3,
        input,
        weight,
        bias,
        stride,
        padding,
        dilation,
        groups,
        True,
        output_padding,
    )


# --- dropouts ------------------------------------------------------------------------------------

_ALPHA = 1.7580993408473766  # SELU's alpha * scale, ATen's alpha_dropout constant


def _dropout_impl(input, p, train, feature, alpha, inplace):
    """ATen's ``_dropout_impl``: noise of shape (N, C, 1, ...) for feature dropout (else the
    input's), ``bernoulli_(1 - p)`` in the input's dtype, then scaled (alpha: shifted by b)."""
    from .._arg_check import _DROPOUT, check_call
    from .._factories import as_tensor

    # Note [Single signatures bound]: PyTorch's Python calls the native function here
    name = "feature_" * feature + "alpha_" * alpha + "dropout" + "_" * inplace
    check_call(name, _DROPOUT, (input, p, train))
    if p < 0 or p > 1:
        raise RuntimeError(DROPOUT_P.format(f"{float(p):g}"))  # a C++ double
    if p == 0 or not train or input.numel() == 0:
        return input
    dtype = input.dtype
    if p == 1:
        zero = as_tensor(np.zeros((), dtype.np), dtype=dtype, device=input.device)
        return input.mul_(zero) if inplace else input * zero
    if feature and input.ndim < 2:  # make_feature_noise's check, after the shortcuts
        raise RuntimeError(FEATURE_DIMS)
    shape = tuple(input.shape[:2]) + (1,) * (input.ndim - 2) if feature else tuple(input.shape)

    def draw(s):
        if input.is_meta:  # Note [Meta tensors]: bernoulli_ of a meta tensor draws nothing
            return np.broadcast_to(np.zeros((), dtype.np), s)
        return R.bernoulli(None, s, dtype.np, 1 - p)

    # Note [Randomness in vmap]: each sample's noise (PyTorch's vmap draws a new one)
    noise = R.sampled(draw, shape)
    if noise is None and R.batched(input._data):  # "same": a new contiguous noise
        noise = draw(shape)
    if noise is not None:
        pass
    elif feature:  # new_empty: contiguous
        noise = draw(shape)
    else:  # empty_like(input), filled in memory order (see functional._memory_order)
        from ..ops.shape import _strides

        order = R.iteration_order(shape, _strides(input))
        noise = R.fill_in_order(draw, shape, order)
    if not (dtype.is_floating_point or dtype.is_complex):
        from .. import _errors as E

        raise RuntimeError(CAST_ERROR.format(E.scalar_type_name(dtype)))
    ft = noise.dtype.type
    b = None
    if alpha:
        # In the tensor's dtype, each double scalar converted to it, as ATen's kernels do.
        a = 1.0 / math.sqrt((_ALPHA * _ALPHA * p + 1) * (1 - p))
        b = ((noise + ft(-1)) * ft(_ALPHA * a) + ft(_ALPHA * a * p)).astype(noise.dtype)
        noise = (noise * ft(a)).astype(noise.dtype)
        b = as_tensor(b, dtype=dtype, device=input.device)
    else:
        noise = noise / ft(1 - p)
    noise = as_tensor(noise, dtype=dtype, device=input.device)
    out = input.mul_(noise) if inplace else input * noise
    if b is not None:
        out = out.add_(b)
    return out


def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(DROPOUT_P.format(p))


def dropout1d(input, p=0.5, training=True, inplace=False):
    """``F.dropout1d``: zeroes whole channels of (N, C, L) or (C, L) input."""
    _check_p(p)
    if input.ndim not in (2, 3):
        raise RuntimeError(DROPOUT1D_DIMS.format(input.ndim))
    batched = input.ndim == 3
    if not batched:
        input = input.unsqueeze_(0) if inplace else input.unsqueeze(0)
    out = _dropout_impl(input, p, training, True, False, inplace)
    if not batched:
        out = out.squeeze_(0) if inplace else out.squeeze(0)
    return out


def dropout2d(input, p=0.5, training=True, inplace=False):
    """``F.dropout2d``: zeroes whole channels of (N, C, H, W) input (3-d input: as dropout1d)."""
    _check_p(p)
    if input.ndim not in (3, 4):
        E.warn_above(DROPOUT_ND_WARNING.format(n=2, d=input.ndim, a=3, b=4))
    if input.ndim == 3:
        E.warn_above(DROPOUT2D_3D_WARNING)
    return _dropout_impl(input, p, training, True, False, inplace)


def dropout3d(input, p=0.5, training=True, inplace=False):
    """``F.dropout3d``: zeroes whole channels of (N, C, D, H, W) or (C, D, H, W) input."""
    _check_p(p)
    if input.ndim not in (4, 5):
        E.warn_above(DROPOUT_ND_WARNING.format(n=3, d=input.ndim, a=4, b=5))
    batched = input.ndim == 5
    if not batched:
        input = input.unsqueeze_(0) if inplace else input.unsqueeze(0)
    out = _dropout_impl(input, p, training, True, False, inplace)
    if not batched:
        out = out.squeeze_(0) if inplace else out.squeeze(0)
    return out


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    """``F.alpha_dropout``: dropout keeping SELU's mean and variance."""
    _check_p(p)
    return _dropout_impl(input, p, training, False, True, inplace)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    """``F.feature_alpha_dropout``: alpha dropout of whole channels."""
    _check_p(p)
    return _dropout_impl(input, p, training, True, True, inplace)
