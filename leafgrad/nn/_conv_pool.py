"""Convolution, pooling, interpolation and normalisation layers for ``nn.functional``.

Each layer is one op-table entry named like PyTorch's ATen op (``convolution``,
``native_layer_norm``, ``max_pool2d_with_indices``, ...), so the recorded node has PyTorch's
``grad_fn`` name; the 1-d variants PyTorch builds from the 2-d ones (``max_pool1d`` = unsqueeze,
2-d pool, squeeze) are composites over table ops. Windows are gathered with static numpy index
arrays, so every forward is a gather plus arithmetic whose JAX VJP is PyTorch's backward (a max
pool gathers at the index of the first maximum of each window, where PyTorch sends the gradient).
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from .. import _autocast
from .. import _dtype as D
from .. import _errors as E
from .._tensor import Tensor
from ..autograd import forward_ad, grad_mode
from ..autograd import saved as saved_mod
from ..ops.api import refuse_backward, register_ops
from ..ops.dispatch import dispatch
from ..ops.table import OPS, OpDef

__all__ = [
    "conv1d",
    "conv2d",
    "conv3d",
    "conv_transpose1d",
    "conv_transpose2d",
    "layer_norm",
    "group_norm",
    "batch_norm",
    "instance_norm",
    "max_pool1d",
    "max_pool2d",
    "avg_pool1d",
    "avg_pool2d",
    "adaptive_avg_pool1d",
    "adaptive_avg_pool2d",
    "adaptive_max_pool2d",
    "fold",
    "interpolate",
    "unfold",
]

# PyTorch's messages (aten/src/ATen/native/Convolution.cpp, Pool.h, layer_norm.h, ...).
CONV_INPUT_DIM = "Expected {}D (unbatched) or {}D (batched) input to {}, but got input of size: {}"
CONV_CHANNELS = (
    "Given groups={}, weight of size {}, expected input{} to have {} channels, "
    "but got {} channels instead"
)
CONV_TRANSPOSE_CHANNELS = (
    "Given transposed=1, weight of size {}, expected input{} to have {} channels, "
    "but got {} channels instead"
)
CONV_WEIGHT_TYPE = (
    "Input type ({}) and weight type ({}) should be the same or input should be a MKLDNN tensor "
    "and weight is a dense tensor"
)
CONV_BIAS_TYPE = "Input type ({}) and bias type ({}) should be the same"
CONV_BIAS_SIZE = (
    "{}eight of size {}, expected bias to be 1-dimensional with {} elements, "
    "but got bias of size {} instead"
)
CONV_KERNEL_SIZE = (
    "Calculated padded input size per channel: ({}). Kernel size: ({}). "
    "Kernel size can't be greater than actual input size"
)
CONV_SAME_STRIDED = "padding='same' is not supported for strided convolutions"
CONV_BAD_PADDING = "Invalid padding string: '{}'"
CONV_PARAM_LEN = (
    "expected {} to be a single integer value or a list of {} values to match the convolution "
    "dimensions, but got {}={}"
)
POOL_PAD = (
    "pad should be at most half of effective kernel size, but got pad={}, kernel_size={} and "
    "dilation={}"
)
POOL_INPUT = "non-empty 3D or 4D (batch mode) tensor expected for input"
CONV_TRANSPOSE_SIZE = (
    "Given input size per channel: ({}). Calculated output size per channel: ({}). Output size "
    "is too small"
)
POOL_TOO_SMALL = "Given input size: ({}). Calculated output size: ({}). Output size is too small"
ADAPTIVE_INPUT = "adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got {}"
LAYER_NORM_SHAPE = (
    "Given normalized_shape={}, expected input with shape [*{}], but got input of size{}"
)
GROUP_NORM_GROUPS = (
    "Expected number of channels in input to be divisible by num_groups, but got input of shape "
    "{} and num_groups={}"
)
BATCH_NORM_STATS = "running_{} should contain {} elements not {}"
NOT_IMPLEMENTED = "\"{}\" not implemented for '{}'"
SAME_EVEN_WARNING = (
    "Using padding='same' with even kernel lengths and odd dilation may require a zero-padded "
    "copy of the input be created (Triggered internally at "
    "/__w/pytorch/pytorch/aten/src/ATen/native/Convolution.cpp:1101.)"
)
BATCH_NORM_ONE = "Expected more than 1 value per channel when training, got input size {}"


def _check_dtype(t, kernel: str, allowed: str) -> None:
    """PyTorch's dispatch error for a dtype a kernel lacks. ``allowed`` holds dtype kinds
    ('f' floating, 'i' signed, 'u' unsigned, 'b' bool) and/or exact names ('int64')."""
    dt = t.dtype
    name = str(dt).removeprefix("torch.")
    kinds, names = allowed.split()[0], allowed.split()[1:]
    if dt._kind in kinds or name in names:
        return
    raise NotImplementedError(NOT_IMPLEMENTED.format(kernel, E.scalar_type_name(dt)))


def _size(shape) -> str:
    return "[" + ", ".join(str(s) for s in shape) + "]"


def _dtype_rule(meta, static):
    """All operands keep their dtypes (checked by the frontends); the result has the first's."""
    return (None,) * len(meta), meta[0][0]


# --- convolution ---------------------------------------------------------------------------------


def _conv_forward(x, w, b, stride, padding, dilation, groups, transposed, output_padding):
    nd = x.ndim - 2
    spatial = "DHW"[3 - nd :]
    dn = lax.conv_dimension_numbers(
        x.shape, w.shape, ("NC" + spatial, "OI" + spatial, "NC" + spatial)
    )
    if not transposed:
        out = lax.conv_general_dilated(
            x,
            w,
            window_strides=stride,
            padding=[(p, p) for p in padding],
            rhs_dilation=dilation,
            feature_group_count=groups,
            dimension_numbers=dn,
            precision=lax.Precision.HIGHEST,
        )
    else:
        # A transposed convolution is the convolution of the stride-dilated input with the
        # flipped kernel whose in/out channels are swapped within each group.
        cin, coutg = w.shape[0], w.shape[1]
        k = w.shape[2:]
        wt = w.reshape((groups, cin // groups, coutg) + k)
        wt = jnp.swapaxes(wt, 1, 2).reshape((groups * coutg, cin // groups) + k)
        wt = jnp.flip(wt, axis=tuple(range(2, 2 + nd)))
        dn = lax.conv_dimension_numbers(
            x.shape, wt.shape, ("NC" + spatial, "OI" + spatial, "NC" + spatial)
        )
        pads = [
            (d * (kk - 1) - p, d * (kk - 1) - p + op)
            for d, kk, p, op in zip(dilation, k, padding, output_padding)
        ]
        out = lax.conv_general_dilated(
            _dilated(x, stride),
            wt,
            window_strides=(1,) * nd,
            padding=pads,
            rhs_dilation=dilation,
            feature_group_count=groups,
            dimension_numbers=dn,
            precision=lax.Precision.HIGHEST,
        )
    if b is not None:
        out = out + b.reshape((1, -1) + (1,) * nd)
    return out


def _dilated(x, stride):
    """``x`` with ``stride - 1`` zeros between neighbours along each spatial dim: the input of a
    transposed convolution. Written out, not as the convolution's ``lhs_dilation``: XLA's CPU
    compiler aborts the process (its algebraic simplifier swaps the operands of some
    base-dilated convolutions into an invalid window, e.g. a 3x2 input dilated by 2 under a
    2x3 kernel), and it folds an interior ``pad`` back into that form."""
    nd = len(stride)
    for axis, s in zip(range(x.ndim - nd, x.ndim), stride):
        if s == 1 or x.shape[axis] == 0:
            continue
        moved = jnp.moveaxis(x, axis, -1)
        n = moved.shape[-1]
        spaced = jnp.concatenate(
            [moved[..., None], jnp.zeros(moved.shape + (s - 1,), x.dtype)], axis=-1
        )
        spaced = spaced.reshape(moved.shape[:-1] + (n * s,))[..., : (n - 1) * s + 1]
        x = jnp.moveaxis(spaced, -1, axis)
    return x


# --- pooling windows -----------------------------------------------------------------------------


def _opmath(*xs):
    """PyTorch's CPU kernels compute float16/bfloat16 in float32 (``opmath_type``)."""
    out = tuple(
        x.astype(jnp.float32) if x is not None and x.dtype in D.HALF_ARRAY_TYPES else x for x in xs
    )
    return out if len(out) > 1 else out[0]


def _pool_out(size, k, s, p, d, ceil_mode):
    """PyTorch's ``pooling_output_shape``."""
    num = size + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)
    out = num // s + 1
    if ceil_mode and (out - 1) * s >= size + p:
        out -= 1
    return out


def _windows(x, idx, pad_value, kernel_major=False):
    """Gather windows over the trailing spatial dims: ``idx[i]`` is ``(O_i, K_i)`` indices into
    dim i padded by ``p_i`` on the left. Returns ``(..., O_0, O_1, ..., K_0 * K_1 * ...)``.

    One gather from the flattened padded input, so the VJP is one scatter-add in output order
    (output position, then window position): the order PyTorch's backward kernels add in.
    ``kernel_major`` returns ``(..., K, O_0, O_1, ...)`` gathered in that order (im2col's).
    """
    nd = len(idx)
    lead = x.shape[: x.ndim - nd]
    pads = [(0, 0)] * len(lead)
    for i, (ix, p) in enumerate(idx):
        size = x.shape[len(lead) + i]
        right = max(int(ix.max()) + 1 - (size + p), 0) if ix.size else 0
        pads.append((p, right))
    xp = jnp.pad(x, pads, constant_values=pad_value)
    padded = xp.shape[len(lead) :]
    # Static flat indices, shape (O_0, ..., O_{nd-1}, K_0, ..., K_{nd-1}).
    flat = np.zeros((), np.int64)
    for i, (ix, _) in enumerate(idx):
        sh = [1] * (2 * nd)
        sh[i], sh[nd + i] = ix.shape
        flat = flat * padded[i] + ix.reshape(sh)
    outs = tuple(ix.shape[0] for ix, _ in idx)
    k = math.prod(ix.shape[1] for ix, _ in idx)
    flat = np.broadcast_to(flat, outs + tuple(ix.shape[1] for ix, _ in idx))
    if kernel_major:
        flat = np.moveaxis(flat, tuple(range(nd)), tuple(range(nd, 2 * nd)))
    win = jnp.take(xp.reshape(lead + (math.prod(padded),)), jnp.asarray(flat.reshape(-1)), axis=-1)
    return win.reshape(lead + ((k,) + outs if kernel_major else outs + (k,)))


def _window_index(size, out, k, s, p, d):
    """(O, K) indices into the padded dim, and the unpadded positions they stand for."""
    ix = np.arange(out)[:, None] * s + np.arange(k)[None, :] * d
    return ix, ix - p


def _max_pool_forward(x, kernel, stride, padding, dilation, ceil_mode):
    nd = len(kernel)
    shape = x.shape[-nd:]
    outs = [
        _pool_out(n, k, s, p, d, ceil_mode)
        for n, k, s, p, d in zip(shape, kernel, stride, padding, dilation)
    ]
    idx, real = [], []
    for n, o, k, s, p, d in zip(shape, outs, kernel, stride, padding, dilation):
        ix, r = _window_index(n, o, k, s, p, d)
        idx.append((ix, p))
        real.append(r)
    low = -jnp.inf if jnp.issubdtype(x.dtype, jnp.floating) else jnp.iinfo(x.dtype).min
    win = _windows(x, idx, low)
    # Which window positions are inside the input, and their flat input index (static).
    valid = np.ones((), bool)
    flat = np.zeros((), np.int64)
    for i, r in enumerate(real):
        sh = [1] * (2 * nd)
        sh[i] = r.shape[0]
        sh[nd + i] = r.shape[1]
        rr = r.reshape(sh)
        valid = valid & ((rr >= 0) & (rr < shape[i]))
        flat = flat * shape[i] + rr
    valid = valid.reshape(tuple(outs) + (-1,))
    flat = np.broadcast_to(flat.reshape(tuple(outs) + (-1,)), valid.shape)
    return _first_max(x, win, valid, flat, low)


def _first_max(x, win, valid, flat, low):
    """The maximum of each window (last axis of ``win``, gathered from ``x``) and its flat input
    index, as PyTorch picks them.

    ``valid`` (static) marks the window positions inside the input, ``flat`` their indices.
    The value is gathered from the flattened input at that index, so JAX's VJP is one scatter-add
    in output order, which is how PyTorch's backward adds up overlapping windows.
    """
    # PyTorch keeps the first maximum of a window (``val > maxval``), except that every NaN
    # replaces the current one (``|| isnan(val)``): the last NaN wins.
    key = jnp.where(valid, win, low)
    m = jnp.max(key, axis=-1, keepdims=True)
    first = jnp.argmax(valid & (key == m), axis=-1)
    if jnp.issubdtype(win.dtype, jnp.floating):
        nan = valid & jnp.isnan(win)
        last_nan = nan.shape[-1] - 1 - jnp.argmax(jnp.flip(nan, -1), axis=-1)
        first = jnp.where(jnp.any(nan, axis=-1), last_nan, first)
    arg = first[..., None]
    flat_b = jnp.broadcast_to(jnp.asarray(flat), win.shape)
    indices = jnp.take_along_axis(flat_b, arg, axis=-1)[..., 0]
    nd = valid.ndim - 1
    lead = x.shape[: x.ndim - nd]
    out = jnp.take_along_axis(
        x.reshape(lead + (math.prod(x.shape[len(lead) :]),)),
        lax.stop_gradient(indices).reshape(lead + (math.prod(indices.shape[len(lead) :]),)),
        axis=-1,
    )
    return out.reshape(indices.shape), indices


def _avg_pool_forward(x, kernel, stride, padding, ceil_mode, count_include_pad, divisor_override):
    nd = len(kernel)
    shape = x.shape[-nd:]
    outs = [
        _pool_out(n, k, s, p, 1, ceil_mode) for n, k, s, p in zip(shape, kernel, stride, padding)
    ]
    idx = [
        (_window_index(n, o, k, s, p, 1)[0], p)
        for n, o, k, s, p in zip(shape, outs, kernel, stride, padding)
    ]
    win = _windows(_opmath(x), idx, 0)
    # PyTorch's divisor (cpu_avg_pool2d): the window clipped to the padded input, or to the input.
    div = np.ones((), np.int64)
    for i, (n, o, k, s, p) in enumerate(zip(shape, outs, kernel, stride, padding)):
        start = np.arange(o) * s - p
        end = np.minimum(start + k, n + p)
        full = end - start
        part = np.minimum(end, n) - np.maximum(start, 0)
        sh = [1] * nd
        sh[i] = o
        div = div * (full if count_include_pad else part).reshape(sh)
    if divisor_override:
        div = np.full(div.shape, divisor_override, np.int64)
    total = win[..., 0]
    for j in range(1, win.shape[-1]):  # PyTorch adds the window's terms one by one
        total = total + win[..., j]
    return _divide(total, div)


def _divide(total, div):
    """``total / div`` as a true division (Note [True division] in ops/reduce.py); C++'s
    truncating division for integers."""
    if jnp.issubdtype(total.dtype, jnp.integer):
        return lax.div(total, jnp.broadcast_to(jnp.asarray(div, total.dtype), total.shape))
    d = jnp.broadcast_to(jnp.asarray(div, total.dtype), total.shape)
    return total / lax.optimization_barrier(d)


def _adaptive_bounds(n, o):
    start = (np.arange(o) * n) // o
    end = -((-(np.arange(o) + 1) * n) // o)
    return start, end


def _adaptive_avg_forward(x, output_size):
    nd = len(output_size)
    shape = x.shape[-nd:]
    if 0 in output_size or 0 in x.shape:  # nothing to average (an empty batch or channels)
        return jnp.zeros(x.shape[: x.ndim - nd] + tuple(output_size), _opmath(x).dtype)
    idx, masks, counts = [], [], []
    for n, o in zip(shape, output_size):
        start, end = _adaptive_bounds(n, o)
        k = int((end - start).max()) if o else 1
        ix = start[:, None] + np.arange(k)[None, :]
        masks.append(ix < end[:, None])
        idx.append((np.minimum(ix, max(n - 1, 0)), 0))
        counts.append(end - start)
    x = _opmath(x)
    win = _windows(x, idx, 0)
    mask = np.ones((), bool)
    for i, m in enumerate(masks):
        sh = [1] * (2 * nd)
        sh[i] = m.shape[0]
        sh[nd + i] = m.shape[1]
        mask = mask & m.reshape(sh)
    mask = mask.reshape(tuple(output_size) + (-1,))
    win = jnp.where(mask, win, jnp.zeros((), x.dtype))
    total = win[..., 0]
    for j in range(1, win.shape[-1]):
        total = total + win[..., j]
    # PyTorch divides by each window extent in turn: sum / kh / kw.
    for i, c in enumerate(counts):
        sh = [1] * nd
        sh[i] = c.shape[0]
        total = _divide(total, np.broadcast_to(c.reshape(sh), tuple(output_size)))
    return total


def _adaptive_max_forward(x, output_size):
    nd = len(output_size)
    shape = x.shape[-nd:]
    if 0 in output_size or 0 in x.shape:  # no window to take a maximum of
        out = x.shape[: x.ndim - nd] + tuple(output_size)
        return jnp.zeros(out, x.dtype), jnp.zeros(out, jnp.int64)
    idx, valid, flat = [], np.ones((), bool), np.zeros((), np.int64)
    for i, (n, o) in enumerate(zip(shape, output_size)):
        start, end = _adaptive_bounds(n, o)
        k = int((end - start).max()) if o else 1
        ix = start[:, None] + np.arange(k)[None, :]
        sh = [1] * (2 * nd)
        sh[i], sh[nd + i] = ix.shape
        valid = valid & (ix < end[:, None]).reshape(sh)
        clipped = np.minimum(ix, max(n - 1, 0))
        flat = flat * n + clipped.reshape(sh)
        idx.append((clipped, 0))
    low = -jnp.inf if jnp.issubdtype(x.dtype, jnp.floating) else jnp.iinfo(x.dtype).min
    win = _windows(x, idx, low)
    valid = valid.reshape(tuple(output_size) + (-1,))
    flat = np.broadcast_to(flat.reshape(tuple(output_size) + (-1,)), valid.shape)
    return _first_max(x, win, valid, flat, low)


# --- interpolation -------------------------------------------------------------------------------


def _nearest_index(n, o, scale):
    if o == n:
        return np.arange(o)
    if o == 2 * n:
        return np.arange(o) >> 1
    s = np.float32(1.0 / scale) if scale else np.float32(n) / np.float32(o)
    src = np.floor(np.arange(o, dtype=np.float32) * s).astype(np.int64)
    return np.minimum(src, n - 1)


def _nearest_forward(x, output_size, scales):
    # One gather from the flattened input: its VJP adds into each source pixel in output order,
    # as PyTorch's backward kernel does.
    nd = len(output_size)
    lead, shape = x.shape[: x.ndim - nd], x.shape[x.ndim - nd :]
    flat = np.zeros((), np.int64)
    for i, (n, o, sc) in enumerate(zip(shape, output_size, scales)):
        sh = [1] * nd
        sh[i] = o
        flat = flat * n + _nearest_index(n, o, sc).reshape(sh)
    flat = np.broadcast_to(flat, tuple(output_size)).reshape(-1)
    out = jnp.take(x.reshape(lead + (math.prod(shape),)), jnp.asarray(flat), axis=-1)
    return out.reshape(lead + tuple(output_size))


def _linear_weights(n, o, align_corners, scale, dtype):
    """PyTorch's ``compute_indices_weights_linear``: indices i0, i1 and weights l0, l1."""
    ft = np.dtype(dtype)
    if o == n:  # PyTorch copies (whatever the scale)
        i = np.arange(o)
        return i, i, np.ones(o, ft), np.zeros(o, ft)
    if align_corners:
        s = ft.type(n - 1) / ft.type(o - 1) if o > 1 else ft.type(0)
        src = s * np.arange(o, dtype=ft)
    else:
        s = ft.type(1.0 / scale) if scale else ft.type(n) / ft.type(o)
        src = np.maximum(s * (np.arange(o, dtype=ft) + ft.type(0.5)) - ft.type(0.5), ft.type(0))
    i0 = np.minimum(np.floor(src).astype(np.int64), n - 1)
    lam = np.clip(src - i0.astype(ft), 0, 1).astype(ft)
    i1 = i0 + (i0 < n - 1)
    return i0, i1, (ft.type(1) - lam).astype(ft), lam


def _bilinear_forward(x, output_size, scales, align_corners):
    (oh, ow), (sh, sw) = output_size, scales
    h, w = x.shape[-2:]
    x = _opmath(x)
    dt = x.dtype
    h0, h1, hl0, hl1 = _linear_weights(h, oh, align_corners, sh, dt)
    w0, w1, wl0, wl1 = _linear_weights(w, ow, align_corners, sw, dt)

    def at(hi, wi):
        return jnp.take(jnp.take(x, jnp.asarray(hi), axis=-2), jnp.asarray(wi), axis=-1)

    wl0, wl1 = jnp.asarray(wl0), jnp.asarray(wl1)
    hl0, hl1 = jnp.asarray(hl0)[:, None], jnp.asarray(hl1)[:, None]
    top = at(h0, w0) * wl0 + at(h0, w1) * wl1
    bottom = at(h1, w0) * wl0 + at(h1, w1) * wl1
    return top * hl0 + bottom * hl1


def _area_scale(n, o, align_corners, scale, ft):
    """PyTorch's ``area_pixel_compute_scale`` in the kernel's opmath type."""
    if align_corners:
        return ft.type(n - 1) / ft.type(o - 1) if o > 1 else ft.type(0)
    return ft.type(1.0 / scale) if scale else ft.type(n) / ft.type(o)


def _cubic_taps(n, o, align_corners, scale, dtype):
    """PyTorch's ``HelperInterpCubic``: 4 clamped indices and the A=-0.75 cubic weights."""
    ft = np.dtype(dtype)
    s = _area_scale(n, o, align_corners, scale, ft)
    i = np.arange(o, dtype=ft)
    src = s * i if align_corners else s * (i + ft.type(0.5)) - ft.type(0.5)
    i0 = np.minimum(np.floor(src).astype(np.int64), n - 1)
    t = np.clip(src - i0.astype(ft), 0, 1).astype(ft)
    a = ft.type(-0.75)

    def conv1(x):
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def conv2(x):
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    x2 = ft.type(1) - t
    weights = [conv2(t + ft.type(1)), conv1(t), conv1(x2), conv2(x2 + ft.type(1))]
    taps = [np.clip(i0 - 1 + j, 0, n - 1) for j in range(4)]
    return list(zip(taps, [w.astype(ft) for w in weights]))


def _linear_taps(n, o, align_corners, scale, dtype):
    i0, i1, l0, l1 = _linear_weights(n, o, align_corners, scale, dtype)
    return [(i0, l0), (i1, l1)]


def _interp_forward(x, kind, output_size, scales, align_corners):
    """Separable interpolation as PyTorch's ``upsample_generic_Nd_kernel_impl`` nests it: the
    outermost spatial dim outside, each level summing ``tap * weight`` over its taps in order."""
    x = _opmath(x)
    nd = len(output_size)
    make = _cubic_taps if kind == "Bicubic" else _linear_taps
    taps = [
        make(n, o, align_corners, sc, x.dtype)
        for n, o, sc in zip(x.shape[x.ndim - nd :], output_size, scales)
    ]

    def level(y, k):
        if k == nd:
            return y
        axis = y.ndim - nd + k
        out = None
        for idx, w in taps[k]:
            shape = [1] * (nd - k)
            shape[0] = w.shape[0]
            t = level(jnp.take(y, jnp.asarray(idx), axis=axis), k + 1)
            term = t * jnp.asarray(w).reshape(shape)
            out = term if out is None else out + term
        return out

    out = level(x, 0)
    if kind == "Bicubic" and tuple(x.shape[x.ndim - nd :]) == tuple(output_size):
        # PyTorch's bicubic backward copies the gradient when the sizes are equal, although
        # the forward interpolates with the given scale: the same here.
        return lax.stop_gradient(out) + (x - lax.stop_gradient(x))
    return out


def _nearest_exact_index(n, o, scale, dtype):
    """PyTorch's ``HelperInterpNearestExact`` source index: floor(scale * (i + 0.5))."""
    ft = np.dtype(dtype)
    s = _area_scale(n, o, False, scale, ft)
    src = s * (np.arange(o, dtype=ft) + ft.type(0.5))
    return np.minimum(np.floor(src).astype(np.int64), n - 1)


def _nearest_exact_forward(x, output_size, scales):
    nd = len(output_size)
    dt = _opmath(x[..., :0]).dtype if jnp.issubdtype(x.dtype, jnp.floating) else jnp.float32
    for k, (n, o, sc) in enumerate(zip(x.shape[x.ndim - nd :], output_size, scales)):
        x = jnp.take(x, jnp.asarray(_nearest_exact_index(n, o, sc, dt)), axis=x.ndim - nd + k)
    return x


def _im2col_forward(x, kernel, dilation, padding, stride):
    h, w = x.shape[-2:]
    outs = [
        (n + 2 * p - d * (k - 1) - 1) // s + 1
        for n, k, p, d, s in zip((h, w), kernel, padding, dilation, stride)
    ]
    idx = [
        (_window_index(n, o, k, s, p, d)[0], p)
        for n, o, k, s, p, d in zip((h, w), outs, kernel, stride, padding, dilation)
    ]
    win = _windows(x, idx, 0, kernel_major=True)  # (..., C, KH*KW, OH, OW)
    lead = win.shape[:-4]
    return win.reshape(lead + (win.shape[-4] * win.shape[-3], outs[0] * outs[1]))


def _col2im_forward(x, output_size, kernel, dilation, padding, stride):
    """Columns back to an image, adding overlaps in PyTorch's order: kernel offset by offset
    (col2im's outer loop); the blocks of one offset land on distinct pixels."""
    (h, w), (kh, kw) = output_size, kernel
    blocks = [
        (n + 2 * p - (d * (k - 1) + 1)) // s + 1
        for n, k, p, d, s in zip(output_size, kernel, padding, dilation, stride)
    ]
    lead = x.shape[:-2]
    cols = x.reshape(lead + (x.shape[-2] // (kh * kw), kh, kw, blocks[0], blocks[1]))
    hp, wp = h + 2 * padding[0], w + 2 * padding[1]
    zero = jnp.zeros((), x.dtype)
    out = None
    for i in range(kh):
        for j in range(kw):
            top, left = i * dilation[0], j * dilation[1]
            cfg = [(0, 0, 0)] * (cols.ndim - 4)
            cfg += [
                (top, hp - top - (blocks[0] - 1) * stride[0] - 1, stride[0] - 1),
                (left, wp - left - (blocks[1] - 1) * stride[1] - 1, stride[1] - 1),
            ]
            placed = lax.pad(cols[..., i, j, :, :], zero, cfg)
            out = placed if out is None else out + placed
    return out[..., padding[0] : padding[0] + h, padding[1] : padding[1] + w]


# --- normalisation -------------------------------------------------------------------------------


def _norm(x, axes, eps):
    mean = jnp.mean(x, axis=axes, keepdims=True)
    var = jnp.mean(jnp.square(x - mean), axis=axes, keepdims=True)
    return (x - mean) * lax.rsqrt(var + eps)


def _layer_norm_forward(x, w, b, ndim, eps):
    x, w, b = _opmath(x, w, b)
    out = _norm(x, tuple(range(x.ndim - ndim, x.ndim)), eps)
    if w is not None:
        out = out * w
    if b is not None:
        out = out + b
    return out


def _affine(out, w, b):
    sh = (1, -1) + (1,) * (out.ndim - 2)
    if w is not None:
        out = out * w.reshape(sh)
    if b is not None:
        out = out + b.reshape(sh)
    return out


def _group_norm_forward(x, w, b, groups, eps):
    x, w, b = _opmath(x, w, b)
    n = x.shape[0]
    xg = x.reshape((n, groups, -1))
    out = _norm(xg, (2,), eps).reshape(x.shape)
    return _affine(out, w, b)


def _batch_norm_forward(x, w, b, rm, rv, training, eps):
    x, w, b, rm, rv = _opmath(x, w, b, rm, rv)
    axes = (0,) + tuple(range(2, x.ndim))
    if training:
        out = _norm(x, axes, eps)
    else:
        sh = (1, -1) + (1,) * (x.ndim - 2)
        out = (x - rm.reshape(sh)) * lax.rsqrt(rv.reshape(sh) + eps)
    return _affine(out, w, b)


def _batch_norm_update(x, rm, rv, momentum):
    dtypes = rm.dtype, rv.dtype
    x, rm, rv = _opmath(x, rm, rv)
    axes = (0,) + tuple(range(2, x.ndim))
    n = x.size // x.shape[1]
    mean = jnp.mean(x, axis=axes)
    var = jnp.sum(jnp.square(x - jnp.expand_dims(mean, axes)), axis=axes) / (n - 1)
    new_mean = momentum * mean + (1 - momentum) * rm
    new_var = momentum * var + (1 - momentum) * rv
    return new_mean.astype(dtypes[0]), new_var.astype(dtypes[1])


def _stats_rule(meta, static):
    return (None,) * len(meta), (meta[1][0], meta[2][0])


def _pool_rule(meta, static):
    return (None,), (meta[0][0], D.int64)


def _upsample_name(mode, output_size, **_):
    return f"Upsample{mode}{len(output_size)}DBackward0"


# the inputs PyTorch's normalization nodes save, whichever gradient is needed (they also save
# their mean and rstd outputs, which leafgrad's ops do not return: Note [Packed computed outputs]
# in autograd/saved.py). Group and batch norm's nodes keep every operand (``keeps_all``: the
# group-norm formula asks whether a bias was given, batch norm's eval mode reads the running
# stats); neither saves its output, which may be written in place. Batch norm saves its running
# stats too: a write to them before backward raises, though in training the update of a separate
# op here does not bump their versions, as PyTorch's kernel does not.
_LAYER_NORM = ("input", "weight", "bias")
_GROUP_NORM = ("input", "weight")
_BATCH_NORM = ("input", "weight", "running_mean", "running_var")
register_ops(
    OpDef(
        "convolution",
        _conv_forward,
        "ConvolutionBackward0",
        ("input", "weight", "bias"),
        _dtype_rule,
        saves={"input": ("input", "weight"), "weight": ("input", "weight")},
    ),
    OpDef(
        "native_layer_norm",
        _layer_norm_forward,
        "NativeLayerNormBackward0",
        ("input", "weight", "bias"),
        _dtype_rule,
        saves={"input": _LAYER_NORM, "weight": _LAYER_NORM, "bias": _LAYER_NORM},
    ),
    OpDef(
        "native_group_norm",
        _group_norm_forward,
        "NativeGroupNormBackward0",
        ("input", "weight", "bias"),
        _dtype_rule,
        saves={"input": _GROUP_NORM, "weight": _GROUP_NORM, "bias": _GROUP_NORM},
        keeps_all=True,
    ),
    OpDef(
        "native_batch_norm",
        _batch_norm_forward,
        "NativeBatchNormBackward0",
        ("input", "weight", "bias", "running_mean", "running_var"),
        _dtype_rule,
        edges=("input", "weight", "bias"),
        saves={"input": _BATCH_NORM, "weight": _BATCH_NORM, "bias": _BATCH_NORM},
        keeps_all=True,
    ),
    OpDef(
        "batch_norm_update_stats",
        _batch_norm_update,
        "",
        ("input", "running_mean", "running_var"),
        _stats_rule,
        differentiable=(),
        n_out=2,
    ),
    OpDef(
        "max_pool_with_indices",
        _max_pool_forward,
        "MaxPool2DWithIndicesBackward0",
        ("self",),
        _pool_rule,
        saves={"self": ("self",)},
        n_out=2,
        differentiable_outputs=(0,),
    ),
    OpDef(
        "adaptive_max_pool",
        _adaptive_max_forward,
        "AdaptiveMaxPool2DBackward0",
        ("self",),
        _pool_rule,
        saves={"self": ("self",)},
        n_out=2,
        differentiable_outputs=(0,),
    ),
    OpDef("col2im", _col2im_forward, "Col2ImBackward0", ("self",), _dtype_rule),
    OpDef(
        "avg_pool",
        _avg_pool_forward,
        "AvgPool2DBackward0",
        ("self",),
        _dtype_rule,
        saves={"self": ("self",)},
    ),
    OpDef(
        "adaptive_avg_pool",
        _adaptive_avg_forward,
        "AdaptiveAvgPool2DBackward0",
        ("self",),
        _dtype_rule,
        saves={"self": ("self",)},
    ),
    OpDef(
        "upsample_nearest",
        lambda x, mode, output_size, scales: _nearest_forward(x, output_size, scales),
        _upsample_name,
        ("self",),
        _dtype_rule,
    ),
    OpDef(
        "upsample_bilinear2d",
        lambda x, mode, output_size, scales, align_corners: _bilinear_forward(
            x, output_size, scales, align_corners
        ),
        _upsample_name,
        ("self",),
        _dtype_rule,
    ),
    OpDef(
        "upsample_interp",
        lambda x, mode, output_size, scales, align_corners: _interp_forward(
            x, mode, output_size, scales, align_corners
        ),
        _upsample_name,
        ("self",),
        _dtype_rule,
    ),
    OpDef(
        "upsample_nearest_exact",
        lambda x, output_size, scales: _nearest_exact_forward(x, output_size, scales),
        lambda output_size, scales: f"UpsampleNearestExact{len(output_size)}DBackward0",
        ("self",),
        _dtype_rule,
    ),
    OpDef(
        "adaptive_avg_pool3d",
        _adaptive_avg_forward,
        "AdaptiveAvgPool3DBackward0",
        ("self",),
        _dtype_rule,
        saves={"self": ("self",)},
    ),
    OpDef("im2col", _im2col_forward, "Im2ColBackward0", ("self",), _dtype_rule),
    OpDef(
        "conv_pool_pad",
        lambda x, pad: jnp.pad(x, pad),
        "ConstantPadNdBackward0",
        ("self",),
        _dtype_rule,
    ),
)


# --- argument parsing ----------------------------------------------------------------------------


def _ntuple(v, n):
    if isinstance(v, (list, tuple)):
        return tuple(int(a) for a in v)
    return (int(v),) * n


def _conv_param(v, n, name, expected):
    t = _ntuple(v, n)
    if len(t) == 1 and n > 1:
        t = t * n
    if len(t) != expected:
        raise RuntimeError(CONV_PARAM_LEN.format(name, expected, name, _size(t)))
    return t


def _type_name(t: Tensor) -> str:
    """The legacy tensor type PyTorch prints ('torch.FloatTensor')."""
    return f"torch.{E.scalar_type_name(t.dtype)}Tensor"


def _unsqueeze(x, dim):
    return dispatch(OPS["unsqueeze"], x, dim=dim)


def _squeeze(x, dim):
    return dispatch(OPS["squeeze_dim"], x, dim=dim)


def _convolution(
    name, nd, input, weight, bias, stride, padding, dilation, groups, transposed, output_padding
):
    if input.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(CONV_INPUT_DIM.format(nd + 1, nd + 2, name, _size(input.shape)))
    wd = weight.ndim - 2  # PyTorch counts the convolution's dims from the weight
    stride = _conv_param(stride, nd, "stride", wd)
    if not isinstance(padding, str):
        padding = _conv_param(padding, nd, "padding", wd)
    dilation = _conv_param(dilation, nd, "dilation", wd)
    if transposed:
        output_padding = _conv_param(output_padding, nd, "output_padding", wd)
    if not isinstance(padding, str) and any(p < 0 for p in padding):
        raise RuntimeError("negative padding is not supported")
    if transposed and any(v < 0 for v in output_padding):
        raise RuntimeError("negative output_padding is not supported")
    if any(v <= 0 for v in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(v <= 0 for v in dilation):
        raise RuntimeError(f"dilation should be greater than zero, but got {_size(dilation)}")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    batched = input.ndim == nd + 2
    if weight.dtype != input.dtype:
        raise RuntimeError(CONV_WEIGHT_TYPE.format(_type_name(input), _type_name(weight)))
    if bias is not None and bias.dtype != input.dtype:
        raise RuntimeError(
            CONV_BIAS_TYPE.format(E.c_type_name(input.dtype), E.c_type_name(bias.dtype))
        )
    if transposed:
        _check_dtype(input, f"slow_conv_transpose{max(nd, 2)}d_out_cpu", "f int64")
    else:
        _check_dtype(input, "slow_conv2d_cpu" if nd < 3 else "slow_conv3d_cpu", "fiu")
    x = input if batched else _unsqueeze(input, 0)
    k = tuple(weight.shape[2:])
    if isinstance(padding, str):
        if padding == "valid":
            padding = (0,) * nd
        elif padding == "same":
            if any(s != 1 for s in stride):
                raise RuntimeError(CONV_SAME_STRIDED)
            total = [d * (kk - 1) for d, kk in zip(dilation, k)]
            padding = tuple(t // 2 for t in total)
            if any(t % 2 for t in total):
                # PyTorch pads the input by the odd remainder on the right (constant_pad_nd).
                E.warn_once(SAME_EVEN_WARNING)  # TORCH_WARN_ONCE, at the user's line
                extra = tuple(t % 2 for t in total)
                x = dispatch(
                    OPS["conv_pool_pad"], x, pad=((0, 0), (0, 0)) + tuple((0, e) for e in extra)
                )
        else:
            raise RuntimeError(CONV_BAD_PADDING.format(padding))
    if not transposed:
        output_padding = (0,) * nd
    c = x.shape[1]
    if c == 0:
        raise NotImplementedError(
            f"{name} of an input with 0 channels is not implemented in leafgrad (PyTorch returns "
            "an empty result of its own shape rule)"
        )
    if weight.shape[0] % groups:
        raise RuntimeError(
            f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, "
            f"but got weight of size [{_size(weight.shape)}] instead"
        )
    if transposed:
        bad = [op >= s and op >= d for op, s, d in zip(output_padding, stride, dilation)]
        if any(bad):
            # PyTorch runs 1-d transposed convolutions as 2-d ones of height 1.
            lift = 2 - nd  # height entries (0 padding, stride 1, dilation 1) PyTorch adds
            parts = (
                ("output_padding", (0,) * lift + output_padding),
                ("stride", (1,) * lift + stride),
                ("dilation", (1,) * lift + dilation),
            )
            text = " ".join(f"{w}_height: {v[0]} {w}_width: {v[1]}" for w, v in parts)
            raise RuntimeError(
                "output padding must be smaller than either stride or dilation, but got " + text
            )
        if weight.shape[0] != c:
            raise RuntimeError(
                CONV_TRANSPOSE_CHANNELS.format(
                    _size(weight.shape), _size(x.shape), weight.shape[0], c
                )
            )
        cout = weight.shape[1] * groups
    else:
        if weight.shape[1] * groups != c:
            raise RuntimeError(CONV_CHANNELS.format(*_conv_channels(x, weight, groups)))
        cout = weight.shape[0]
        padded = [n + 2 * p for n, p in zip(x.shape[2:], padding)]
        eff = [d * (kk - 1) + 1 for d, kk in zip(dilation, k)]
        if any(e > n for e, n in zip(eff, padded)):
            raise RuntimeError(
                CONV_KERNEL_SIZE.format(" x ".join(map(str, padded)), " x ".join(map(str, eff)))
            )
    if bias is not None and (bias.ndim != 1 or bias.shape[0] != cout):
        given = "Given transposed=1, w" if transposed else "Given w"
        raise RuntimeError(
            CONV_BIAS_SIZE.format(given, _size(weight.shape), cout, _size(bias.shape))
        )
    lift = (1,) * (2 - nd)  # PyTorch runs 1-d convolutions as 2-d ones of height 1
    if x.numel() == 0 and x.shape[0] and x.shape[1]:
        shape = tuple(x.shape[:2]) + lift + tuple(x.shape[2:])
        raise RuntimeError(
            f"Only zero batch or zero channel inputs are supported, but got input shape: "
            f"{_size(shape)}"
        )
    if transposed:
        sizes = [
            (n - 1) * st - 2 * p + d * (kk - 1) + op + 1
            for n, st, p, d, kk, op in zip(
                x.shape[2:], stride, padding, dilation, k, output_padding
            )
        ]
        if any(n <= 0 for n in sizes):
            raise RuntimeError(
                CONV_TRANSPOSE_SIZE.format(
                    " x ".join(map(str, lift + tuple(x.shape[2:]))),
                    " x ".join(map(str, lift + tuple(sizes))),
                )
            )
    out = dispatch(
        OPS["convolution"],
        x,
        weight,
        bias,
        stride=stride,
        padding=padding,
        dilation=dilation,
        groups=int(groups),
        transposed=bool(transposed),
        output_padding=output_padding,
    )
    return out if batched else _squeeze(out, 0)


@_autocast.policy("lower_precision_fp")
def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """``F.conv1d``: (N, C, L) or unbatched (C, L) input."""
    return _convolution(
        "conv1d", 1, input, weight, bias, stride, padding, dilation, groups, False, 0
    )


@_autocast.policy("lower_precision_fp")
def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """``F.conv2d``: (N, C, H, W) or unbatched (C, H, W) input."""
    return _convolution(
        "conv2d", 2, input, weight, bias, stride, padding, dilation, groups, False, 0
    )


@_autocast.policy("lower_precision_fp")
def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """``F.conv3d``: (N, C, D, H, W) or unbatched (C, D, H, W) input."""
    return _convolution(
        "conv3d", 3, input, weight, bias, stride, padding, dilation, groups, False, 0
    )


@_autocast.policy("lower_precision_fp")
def conv_transpose1d(
    input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1
):
    """``F.conv_transpose1d``: weight (C_in, C_out / groups, K)."""
    return _convolution(
        "conv_transpose1d",
        1,
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


@_autocast.policy("lower_precision_fp")
def conv_transpose2d(
    input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1
):
    """``F.conv_transpose2d``: weight (C_in, C_out / groups, KH, KW)."""
    return _convolution(
        "conv_transpose2d",
        2,
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


# --- normalisation frontends ---------------------------------------------------------------------


def _check_mixed(input, *params) -> None:
    """PyTorch's normalization kernels on the CPU take float parameters with a bfloat16 or half
    input, else only the input's dtype."""
    params = [t for t in params if t is not None]
    if any(t.dtype != input.dtype for t in params):
        if any(t.dtype is not D.float32 for t in params):
            raise RuntimeError("mixed dtype (CPU): expect parameter to have scalar type of Float")
        if input.dtype not in (D.bfloat16, D.float16):
            raise RuntimeError("mixed dtype (CPU): all inputs must share same datatype.")


def _conv_channels(x: Tensor, weight: Tensor, groups: int) -> tuple:
    """The groups, weight size, input size, channels expected and channels found that PyTorch's
    channel error names; inside vmap, of its batch rule's physical operands: a batched input
    alone folds the batch into N, a batched weight alone into the output channels, and both
    run as a grouped convolution (the batch into the channels and the groups)."""
    n, batched = 1, (False, False)
    if isinstance(x._data, jax.core.Tracer) or isinstance(weight._data, jax.core.Tracer):
        from ..func import batch_layout

        n, batched = batch_layout(x, weight) or (1, (False, False))
    xs, ws = list(x.shape), list(weight.shape)
    if batched[0] and batched[1]:
        groups, xs[1] = groups * n, xs[1] * n
    elif batched[0]:
        xs[0] *= n
    if batched[1]:
        ws[0] *= n
    return groups, _size(ws), _size(xs), ws[1] * groups, xs[1]


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """``F.layer_norm`` over the trailing ``normalized_shape`` dims."""
    from .. import _arg_check

    message = _arg_check._list_error(
        "layer_norm", "normalized_shape", " (position 2)", normalized_shape
    )
    if message is not None:  # torch.layer_norm's parser: a list, not a bare int
        raise TypeError(message)
    ns = _ntuple(normalized_shape, 1)
    k = len(ns)
    if input.ndim < k or tuple(input.shape[input.ndim - k :]) != ns:
        tail = "".join(f", {s}" for s in ns)
        from ..ops.shape import _lead

        shape = (*_lead(input), *input.shape)  # inside vmap: the physical input's
        raise RuntimeError(LAYER_NORM_SHAPE.format(_size(ns), tail, _size(shape)))
    for which, t in (("weight", weight), ("bias", bias)):
        if t is not None and tuple(t.shape) != ns:
            raise RuntimeError(
                f"Expected {which} to be of same shape as normalized_shape, but got {which} of "
                f"shape {_size(t.shape)} and normalized_shape = {_size(ns)}"
            )
    _check_dtype(input, "LayerNormKernelImpl", "f")
    _check_mixed(input, weight, bias)
    return dispatch(OPS["native_layer_norm"], input, weight, bias, ndim=k, eps=float(eps))


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    """``F.group_norm``: (N, C, *) input, C divisible by ``num_groups``."""
    if input.ndim < 2:
        raise RuntimeError(
            f"Expected at least 2 dimensions for input tensor but received {input.ndim}"
        )
    if input.shape[1] % num_groups:
        raise RuntimeError(GROUP_NORM_GROUPS.format(_size(input.shape), num_groups))
    for which, t in (("weight", weight), ("bias", bias)):
        if t is not None and (t.ndim != 1 or t.numel() != input.shape[1]):
            raise RuntimeError(
                f"Expected {which} to be a vector of size equal to the number of channels in "
                f"input, but got {which} of shape {_size(t.shape)} and input of shape "
                f"{_size(input.shape)}"
            )
    _check_dtype(input, "GroupNormKernelImpl", "f")
    _check_mixed(input, weight, bias)
    out = dispatch(
        OPS["native_group_norm"], input, weight, bias, groups=int(num_groups), eps=float(eps)
    )
    if weight is None and bias is not None and bias.requires_grad:
        _refuse_bias_grad(out)
    return out


def _refuse_bias_grad(out) -> None:
    """PyTorch 2.13's NativeGroupNormBackward0 fails where it needs the bias's gradient without
    a weight: its kernel reads the undefined weight's device (with ``create_graph`` its formula
    fails otherwise, as leafgrad's formula does)."""
    from ..autograd import grad_mode
    from ..autograd.graph import edge_needed, wrap_backward

    node = out._grad_fn
    if node is None:
        return
    inner = node._backward

    def check(primals, grads):
        if edge_needed(2) and not grad_mode.is_grad_enabled():
            raise RuntimeError("tensor does not have a device")

    def backward(primals, cts):
        check(primals, cts)
        return inner(primals, cts)

    wrap_backward(node, backward, side_effect=check)


BATCH_NORM_VMAP = (
    "Batch norm got a batched tensor as input while the running_mean or running_var, which will "
    "be updated in place, were not batched.\nIf you are using a module and do not need eval "
    "mode, please set `track_running_stats` to be False.If you are using a prebuilt module and "
    "do not need eval mode, please see the functorch website for resources on how to patch your "
    "module to work with vmap"
)


def _batched_over_stats(input, running_mean) -> bool:
    """Inside ``vmap``: an input that varies over the batch with running statistics that do
    not (their in-place update is PyTorch's error)."""
    import jax

    if not isinstance(input._data, jax.core.Tracer) or isinstance(
        running_mean._data, jax.core.Tracer
    ):
        return False
    from ..func import active_transforms

    return "vmap" in active_transforms()


BATCH_NORM_DUAL_STATS = (
    "batch_norm is not differentiable wrt running_mean and running_var, they cannot have forward "
    "grad defined"
)


def batch_norm(
    input,
    running_mean,
    running_var,
    weight=None,
    bias=None,
    training=False,
    momentum=0.1,
    eps=1e-5,
):
    """``F.batch_norm``; in training, the running statistics are updated in place."""
    if training:  # F.batch_norm's _verify_batch_size
        n = math.prod(input.shape[:1] + input.shape[2:])
        if n == 1:
            raise ValueError(BATCH_NORM_ONE.format(f"torch.Size({_size(input.shape)})"))
    c = input.shape[1] if input.ndim > 1 else 0
    for which, t in (("mean", running_mean), ("var", running_var)):
        if t is not None and t.numel() != c:
            raise RuntimeError(BATCH_NORM_STATS.format(which, c, t.numel()))
        if t is None and not training:
            raise RuntimeError(f"running_{which} must be defined in evaluation mode")
    for which, t in (("weight", weight), ("bias", bias)):
        if t is not None and t.numel() != c:
            raise RuntimeError(f"{which} should contain {c} elements not {t.numel()}")
    _check_dtype(input, "batch_norm", "f")
    _check_mixed(input, weight, bias, running_mean, running_var)
    if training and running_mean is not None and _batched_over_stats(input, running_mean):
        raise RuntimeError(BATCH_NORM_VMAP)
    if not training:
        forward_ad.refuse_dual_reads(
            (input, weight, bias), (running_mean, running_var), RuntimeError(BATCH_NORM_DUAL_STATS)
        )
    out = dispatch(
        OPS["native_batch_norm"],
        input,
        weight,
        bias,
        running_mean,
        running_var,
        training=bool(training),
        eps=float(eps),
    )
    if training and running_mean is not None and running_var is not None:
        with grad_mode.no_grad():
            new_mean, new_var = dispatch(
                OPS["batch_norm_update_stats"],
                input.detach(),
                running_mean,
                running_var,
                momentum=float(momentum),
            )
        # JAX arrays are immutable: the in-place update rebinds the data. PyTorch's kernel writes
        # the running statistics without bumping their version counter (``_version`` stays), so
        # neither does leafgrad.
        for t, new in ((running_mean, new_mean), (running_var, new_var)):
            t._set_data(new._data)
    return out


def instance_norm(
    input,
    running_mean=None,
    running_var=None,
    weight=None,
    bias=None,
    use_input_stats=True,
    momentum=0.1,
    eps=1e-5,
):
    """``F.instance_norm``: ATen's ``instance_norm``, batch norm of the input viewed as
    (1, N * C, *) with the affine parameters and running statistics repeated N times; the
    running statistics are then the mean over N of the updated repeats, copied in place."""
    if use_input_stats and math.prod(input.shape[2:]) == 1:  # F.instance_norm's check
        raise ValueError(
            "Expected more than 1 spatial element when training, got input size "
            f"torch.Size({_size(input.shape)})"
        )
    if not use_input_stats and (running_mean is None or running_var is None):
        raise RuntimeError(
            "Expected running_mean and running_var to be defined when use_input_stats is false"
        )
    if (running_mean is None) != (running_var is None):
        raise ValueError("running_mean and running_var must either both be None or neither be None")
    _check_mixed(input, weight, bias, running_mean, running_var)
    n, c = input.shape[0], input.shape[1]
    rest = tuple(input.shape[2:])
    # ATen's order: the repeats, then ``input.contiguous().view(...)``
    w = None if weight is None else _repeat(weight, n)
    b = None if bias is None else _repeat(bias, n)
    if running_mean is not None:
        rm, rv = _repeat(running_mean, n), _repeat(running_var, n)
    x = dispatch(OPS["view"], input.contiguous(), shape=(1, n * c) + rest)
    if running_mean is None:
        out = dispatch(OPS["native_batch_norm"], x, w, b, None, None, training=True, eps=float(eps))
        return dispatch(OPS["view"], out, shape=tuple(input.shape))
    out = batch_norm(x, rm, rv, w, b, bool(use_input_stats), momentum, eps)
    if not use_input_stats:  # the running statistics are only read
        return dispatch(OPS["view"], out, shape=tuple(input.shape))
    with grad_mode.no_grad():
        # ATen writes through an alias with copy_, which bumps the version counters.
        for t, rep in ((running_mean, rm), (running_var, rv)):
            t.copy_(dispatch(OPS["view"], rep, shape=(n, -1)).mean(0))
    return dispatch(OPS["view"], out, shape=tuple(input.shape))


def _repeat(t, n):
    return dispatch(OPS["repeat"], t, repeats=(int(n),))


# --- pooling frontends ---------------------------------------------------------------------------


def _pool_args(kernel_size, stride, padding, nd):
    k = _window_tuple(kernel_size, nd)
    s = k if stride is None or (isinstance(stride, (list, tuple)) and not stride) else stride
    return k, _window_tuple(s, nd), _window_tuple(padding, nd)


def _window_tuple(v, nd):
    """A pooling window argument for ``nd`` dims: an int or a one-element list serves every dim,
    as PyTorch's kernels read them."""
    t = _ntuple(v, nd)
    return t * nd if len(t) == 1 else t


def _as_given(v, nd) -> tuple:
    """A window argument as PyTorch's node keeps it: an int made a list of ``nd``, a list as
    given, an omitted stride empty."""
    if v is None:
        return ()
    return tuple(int(a) for a in v) if isinstance(v, (list, tuple)) else (int(v),) * nd


def keep_window(out, nd, kernel_size, stride, padding, dilation=None) -> None:
    """The pooling node's window arguments as given (Note [Arguments as written])."""
    if out._grad_fn is not None:
        kept = {
            "kernel_size": _as_given(kernel_size, nd),
            "stride": _as_given(stride, nd),
            "padding": _as_given(padding, nd),
        }
        if dilation is not None:
            kept["dilation"] = _as_given(dilation, nd)
        saved_mod.keep_written(out, **kept)


def max_pool2d(
    input,
    kernel_size,
    stride=None,
    padding=0,
    dilation=1,
    ceil_mode=False,
    return_indices=False,
):
    """``F.max_pool2d``: the gradient goes to the first maximum of each window."""
    k, s, p = _pool_args(kernel_size, stride, padding, 2)
    d = _window_tuple(dilation, 2)
    if input.ndim not in (3, 4):
        raise RuntimeError(POOL_INPUT)
    _check_window(k, s, p, d)
    if any(v <= 0 for v in d):
        raise RuntimeError(
            f"dilation should be greater than zero, but got dilationH: {d[0]} dilationW: {d[1]}"
        )
    _check_nonempty(input, 2)
    _check_out(input, k, s, p, d, ceil_mode)
    _check_dtype(input, "max_pool2d", "fiu")
    out, idx = dispatch(
        OPS["max_pool_with_indices"],
        input,
        kernel=k,
        stride=s,
        padding=p,
        dilation=d,
        ceil_mode=bool(ceil_mode),
    )
    keep_window(out, 2, kernel_size, stride, padding, dilation)
    return (out, idx) if return_indices else out


def _check_window(k, s, p, d):
    """PyTorch's ``pooling_output_shape`` checks, height then width."""
    for kk, ss, pp, dd in zip(k, s, p, d):
        if ss == 0:
            raise RuntimeError("stride should not be zero")
        if pp < 0:
            raise RuntimeError(f"pad must be non-negative, but got pad: {pp}")
        if pp > ((kk - 1) * dd + 1) // 2:
            raise RuntimeError(POOL_PAD.format(pp, kk, dd))


def _check_nonempty(input, nd, prefix=""):
    """Pooling's shape check: only the batch dim of a batched input may be empty."""
    dims = input.shape[1:] if input.ndim == nd + 2 else input.shape
    if input.ndim not in (nd + 1, nd + 2) or any(v == 0 for v in dims):
        raise RuntimeError(
            f"{prefix}Expected {nd + 1}D or {nd + 2}D (batch mode) tensor with optional 0 dim "
            f"batch size for input, but got:{_size(input.shape)}"
        )


def _check_dims(input, name):
    if input.ndim not in (2, 3):
        raise RuntimeError(
            f"Expected 2 to 3 dimensions, but got {input.ndim}-dimensional tensor for argument "
            f"#1 'self' (while checking arguments for {name})"
        )


def _check_out(input, k, s, p, d, ceil_mode):
    shape = input.shape[-2:]
    outs = [_pool_out(n, kk, ss, pp, dd, ceil_mode) for n, kk, ss, pp, dd in zip(shape, k, s, p, d)]
    if any(o < 1 for o in outs):
        c = input.shape[-3]
        raise RuntimeError(
            POOL_TOO_SMALL.format(f"{c}x{shape[0]}x{shape[1]}", f"{c}x{outs[0]}x{outs[1]}")
        )


def _check_max_pool1d(input, k, s, p, d, ceil_mode) -> None:
    """``torch.max_pool1d``'s own checks (``check_max_pool1d``), before its 2-d pool; the
    ``return_indices`` form has the 2-d pool's."""
    for what, value in (("kernel_size", k), ("stride", s)):
        if value <= 0:
            raise RuntimeError(f"max_pool1d() {what} must be greater than zero, but got {value}")
    if p < 0:
        raise RuntimeError(f"max_pool1d() padding must be non-negative, but got {p}")
    if p > k // 2:
        raise RuntimeError(
            f"max_pool1d() padding should be at most half of kernel size, but got padding={p} "
            f"and kernel_size={k}"
        )
    if d <= 0:
        raise RuntimeError(f"max_pool1d() dilation must be greater than zero, but got {d}")
    out = _pool_out(input.shape[-1], k, s, p, d, ceil_mode)
    if out <= 0:
        raise RuntimeError(f"max_pool1d() Invalid computed output size: {out}")


def max_pool1d(
    input,
    kernel_size,
    stride=None,
    padding=0,
    dilation=1,
    ceil_mode=False,
    return_indices=False,
):
    """``F.max_pool1d``: PyTorch's unsqueeze, 2-d pool, squeeze."""
    k, s, p = _pool_args(kernel_size, stride, padding, 1)
    d = _ntuple(dilation, 1)
    _check_nonempty(input, 1, "max_pool1d: ")
    if not return_indices:
        _check_max_pool1d(input, k[0], s[0], p[0], d[0], ceil_mode)
    kernel = not return_indices and not (input.requires_grad and grad_mode.is_grad_enabled())
    if kernel and forward_ad.ACTIVE[0] and forward_ad.tangent_of(input) is not None:
        kernel = False  # PyTorch's max_pool1d takes the differentiable path for a dual input
    if kernel:
        _check_dtype(input, "max_pool1d_impl", "f")  # PyTorch's kernel without indices
    x = _unsqueeze(input, -2)
    res = max_pool2d(x, (1, k[0]), (1, s[0]), (0, p[0]), (1, d[0]), ceil_mode, True)
    if kernel:
        # the kernel's own result, not a view; an unbatched one is made batched and
        # ``squeeze_(0)``-ed (version 1)
        r = res[0]
        out = Tensor._make(r._data.squeeze(-2), r._dtype, r._device, inference=r._inference)
        if input.ndim == 2:
            out._version_counter.value = 1
        return out
    out, idx = _squeeze(res[0], -2), _squeeze(res[1], -2)
    return (out, idx) if return_indices else out


def avg_pool2d(
    input,
    kernel_size,
    stride=None,
    padding=0,
    ceil_mode=False,
    count_include_pad=True,
    divisor_override=None,
):
    """``F.avg_pool2d``."""
    k, s, p = _pool_args(kernel_size, stride, padding, 2)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    if input.ndim < 3:
        raise IndexError(E.DIM_RANGE.format(-max(input.ndim, 1), max(input.ndim, 1) - 1, -3))
    if input.ndim != 4 and input.ndim != 3:
        raise RuntimeError(POOL_INPUT)
    _check_window(k, s, p, (1, 1))
    _check_nonempty(input, 2)
    _check_out(input, k, s, p, (1, 1), ceil_mode)
    _check_dtype(input, "avg_pool2d", "f int64")
    out = dispatch(
        OPS["avg_pool"],
        input,
        kernel=k,
        stride=s,
        padding=p,
        ceil_mode=bool(ceil_mode),
        count_include_pad=bool(count_include_pad),
        divisor_override=None if divisor_override is None else int(divisor_override),
    )
    keep_window(out, 2, kernel_size, stride, padding)
    return out


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    """``F.avg_pool1d``: PyTorch's unsqueeze, 2-d pool, squeeze."""
    k, s, p = _pool_args(kernel_size, stride, padding, 1)
    _check_dims(input, "avg_pool1d")
    x = _unsqueeze(input, -2)
    out = avg_pool2d(x, (1, k[0]), (1, s[0]), (0, p[0]), ceil_mode, count_include_pad)
    return _squeeze(out, -2)


def pooled_nonempty(input, name: str, first: int) -> None:
    """The adaptive pools' refusal of an empty dim from ``first`` on (the dims their kernels
    check: the pooled ones, and for some the channels too)."""
    for i in range(first, input.ndim):
        if input.shape[i] == 0:
            raise RuntimeError(
                f"{name}(): Expected input to have non-zero size for non-batch dimensions, but "
                f"input has sizes {_size(input.shape)} with dimension {i} being empty"
            )


def empty_grad_refused(out, name: str):
    """The adaptive pools' backward kernels refuse a gradient with an empty dim after the
    first: ``out``'s node raises their error when its backward runs."""
    for i in range(1, out.ndim):
        if out.shape[i] == 0:
            message = (
                f"{name}_backward(): Expected grad_output to have non-zero size for non-batch "
                f"dimensions, but grad_output has sizes {_size(out.shape)} with dimension {i} "
                "being empty"
            )
            return refuse_backward(out, lambda message=message: RuntimeError(message))
    return out


def adaptive_avg_pool2d(input, output_size):
    """``F.adaptive_avg_pool2d``; an output of size 1 is a mean, as in PyTorch."""
    if input.ndim not in (3, 4):
        raise RuntimeError(ADAPTIVE_INPUT.format(_size(input.shape)))
    o = output_size if isinstance(output_size, (list, tuple)) else (output_size,) * 2
    o = tuple(input.shape[-2 + i] if v is None else int(v) for i, v in enumerate(o))
    if any(v < 0 for v in o):
        raise RuntimeError(
            "adaptive_avg_pool2d: elements of output_size must be greater than or equal to 0 "
            f"but received {{{o[0]}, {o[1]}}}"
        )
    _check_dtype(input, "adaptive_avg_pool2d", "f")
    if o == (1, 1):
        return input.mean(dim=(-1, -2), keepdim=True)
    pooled_nonempty(input, "adaptive_avg_pool2d", input.ndim - 2)
    out = dispatch(OPS["adaptive_avg_pool"], input, output_size=o)
    return empty_grad_refused(out, "adaptive_avg_pool2d")


def adaptive_avg_pool1d(input, output_size):
    """``F.adaptive_avg_pool1d``: PyTorch's unsqueeze, 2-d pool, squeeze."""
    (o,) = _ntuple(output_size, 1)
    _check_dims(input, "adaptive_avg_pool1d")
    return _squeeze(adaptive_avg_pool2d(_unsqueeze(input, -2), (1, o)), -2)


# --- interpolation and unfold --------------------------------------------------------------------


def interpolate(
    input,
    size=None,
    scale_factor=None,
    mode="nearest",
    align_corners=None,
    recompute_scale_factor=None,
    antialias=False,
):
    """``F.interpolate`` for modes 'nearest' (3-d to 5-d input) and 'bilinear' (4-d input)."""
    if mode in ("nearest", "area", "nearest-exact") and align_corners is not None:
        raise ValueError(
            "align_corners option can only be set with the interpolating modes: "
            "linear | bilinear | bicubic | trilinear"
        )
    if align_corners is None:
        align_corners = False
    nd = input.ndim - 2
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is None and scale_factor is None:
        raise ValueError("either size or scale_factor should be defined")
    if size is not None and isinstance(size, (list, tuple)) and len(size) != nd:
        raise ValueError(
            "Input and output must have the same number of spatial dimensions, but got input with "
            f"spatial dimensions of {list(input.shape[2:])} and output size of {size}. Please "
            "provide input tensor in (N, C, d1, d2, ...,dK) format and output size in (o1, o2, "
            "...,oK) format."
        )
    if isinstance(scale_factor, (list, tuple)) and len(scale_factor) != nd:
        raise ValueError(
            "Input and scale_factor must have the same number of spatial dimensions, but got "
            f"input with spatial dimensions of {list(input.shape[2:])} and scale_factor of shape "
            f"{scale_factor}. Please provide input tensor in (N, C, d1, d2, ...,dK) format and "
            "scale_factor in (s1, s2, ...,sK) format."
        )
    known = ("nearest", "linear", "bilinear", "bicubic", "trilinear", "area", "nearest-exact")
    if mode not in known:
        raise NotImplementedError(
            f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.ndim}D) "
            "for the modes: nearest | linear | bilinear | bicubic | trilinear | lanczos | "
            f"area | nearest-exact (got {mode})"
        )
    if antialias:
        raise NotImplementedError(
            "leafgrad: interpolate(antialias=True) is not implemented yet (PyTorch's separable "
            "anti-aliasing kernels are not modelled)"
        )
    if recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if size is not None:
        out = _ntuple(size, nd)
        scales = (None,) * nd
    else:
        factors = tuple(float(v) for v in _ntuple_f(scale_factor, nd))
        # PyTorch's Python computes floor(size * scale) in double; with recompute_scale_factor
        # the kernels then use out / in as the scale instead of 1 / scale.
        out = tuple(int(math.floor(float(n) * sc)) for n, sc in zip(input.shape[2:], factors))
        scales = (None,) * nd if recompute_scale_factor else factors
    if mode == "area":
        return _area(input, nd, out, mode)
    if nd in (1, 2, 3) and any(o <= 0 for o in out):
        names = "DHW"[3 - nd :]
        ins = ", ".join(f"{c}: {n}" for c, n in zip(names, input.shape[2:]))
        outs = ", ".join(f"{c}: {n}" for c, n in zip(names, out))
        joint = " and" if nd == 1 else ""  # PyTorch's 2-d and 3-d checks leave out the "and"
        raise RuntimeError(
            f"Input and output sizes should be greater than 0, but got input ({ins}){joint} "
            f"output ({outs})"
        )
    if mode in ("nearest", "nearest-exact"):
        if nd not in (1, 2, 3):
            raise NotImplementedError(_MODES_ERROR.format(input.ndim, mode))
        kernel = (
            "upsample_nearest2d_channels_last" if nd == 2 else "compute_indices_weights_nearest"
        )
        _check_dtype(input, kernel, "f uint8")
        if mode == "nearest-exact":
            return dispatch(OPS["upsample_nearest_exact"], input, output_size=out, scales=scales)
        return dispatch(
            OPS["upsample_nearest"], input, mode="Nearest", output_size=out, scales=scales
        )
    need = {"linear": 1, "bilinear": 2, "bicubic": 2, "trilinear": 3}[mode]
    if nd != need:
        if nd not in (1, 2, 3) or mode == "bicubic":
            raise NotImplementedError(_MODES_ERROR.format(input.ndim, mode))
        raise NotImplementedError(
            f"Got {input.ndim}D input, but {mode} mode needs {need + 2}D input"
        )
    if mode == "bilinear":
        if input.dtype == D.uint8:  # PyTorch has a separate rounding kernel for uint8 images
            raise NotImplementedError(
                "interpolate(mode='bilinear') of uint8 input is not implemented in leafgrad yet"
            )
        _check_dtype(input, "upsample_bilinear2d_channels_last", "f")
        return dispatch(
            OPS["upsample_bilinear2d"],
            input,
            mode="Bilinear",
            output_size=out,
            scales=scales,
            align_corners=bool(align_corners),
        )
    kernel = (
        "compute_indices_weights_cubic" if mode == "bicubic" else "compute_indices_weights_linear"
    )
    if mode == "bicubic" and input.dtype == D.uint8:
        raise NotImplementedError(
            "interpolate(mode='bicubic') of uint8 input is not implemented in leafgrad yet"
        )
    _check_dtype(input, kernel, "f")
    return dispatch(
        OPS["upsample_interp"],
        input,
        mode=mode.capitalize(),
        output_size=out,
        scales=scales,
        align_corners=bool(align_corners),
    )


_MODES_ERROR = (
    "Input Error: Only 3D, 4D and 5D input Tensors supported (got {}D) for the modes: nearest | "
    "linear | bilinear | bicubic | trilinear | lanczos | area | nearest-exact (got {})"
)


def _area(input, nd, out, mode):
    """mode='area': PyTorch's adaptive average pooling to the output size."""
    if nd == 1:
        return adaptive_avg_pool1d(input, out)
    if nd == 2:
        return adaptive_avg_pool2d(input, out)
    if nd == 3:
        _check_dtype(input, "adaptive_avg_pool3d_cpu", "f")
        if out == (1, 1, 1):
            return input.mean(dim=(-1, -2, -3), keepdim=True)
        pooled_nonempty(input, "adaptive_avg_pool3d", 1)
        out = dispatch(OPS["adaptive_avg_pool3d"], input, output_size=out)
        return empty_grad_refused(out, "adaptive_avg_pool3d")
    raise NotImplementedError(_MODES_ERROR.format(input.ndim, mode))


def _ntuple_f(v, n):
    if isinstance(v, (list, tuple)):
        return tuple(v)
    return (v,) * n


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """``F.unfold`` (im2col): (N, C, H, W) -> (N, C * KH * KW, L)."""
    k = _ntuple(kernel_size, 2)
    d, p, s = _ntuple(dilation, 2), _ntuple(padding, 2), _ntuple(stride, 2)
    if input.ndim < 3:
        n = max(input.ndim, 1)
        raise IndexError(E.DIM_RANGE.format(-n, n - 1, 2))
    if input.ndim > 4 or any(v == 0 for v in input.shape[-3:]):
        raise RuntimeError(
            "Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other non-zero "
            f"dimensions for input, but got: {_size(input.shape)}"
        )
    hw = tuple(input.shape[-2:])
    # C++ integer division truncates toward zero.
    blocks = [
        int((n + 2 * pp - (dd * (kk - 1) + 1)) / ss) + 1
        for n, kk, pp, dd, ss in zip(hw, k, p, d, s)
    ]
    if any(b < 1 for b in blocks):
        raise RuntimeError(
            f"Given input with spatial size ({hw[0]}, {hw[1]}), kernel_size=({k[0]}, {k[1]}), "
            f"dilation=({d[0]}, {d[1]}), padding=({p[0]}, {p[1]}), calculated shape of the array "
            f"of sliding blocks as ({blocks[0]}, {blocks[1]}), but its components must be at "
            "least one."
        )
    _check_dtype(input, "im2col_out_cpu", "fb")
    return dispatch(
        OPS["im2col"],
        input,
        kernel=k,
        dilation=_ntuple(dilation, 2),
        padding=_ntuple(padding, 2),
        stride=_ntuple(stride, 2),
    )


def adaptive_max_pool2d(input, output_size, return_indices=False):
    """``F.adaptive_max_pool2d``: the gradient goes to the first maximum of each window."""
    if input.ndim not in (3, 4):
        raise RuntimeError(
            f"adaptive_max_pool2d(): Expected 3D or 4D tensor, but got: {_size(input.shape)}"
        )
    o = output_size if isinstance(output_size, (list, tuple)) else (output_size,) * 2
    o = tuple(input.shape[-2 + i] if v is None else int(v) for i, v in enumerate(o))
    if any(v < 0 for v in o):
        shape = _size(tuple(input.shape[:-2]) + o)
        v = min(o)
        raise RuntimeError(f"Trying to create tensor with negative dimension {v}: {shape}")
    pooled_nonempty(input, "adaptive_max_pool2d", 1)
    _check_dtype(input, "adaptive_max_pool2d", "f")
    out, idx = dispatch(OPS["adaptive_max_pool"], input, output_size=o)
    out = empty_grad_refused(out, "adaptive_max_pool2d")
    return (out, idx) if return_indices else out


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """``F.fold`` (col2im): (N, C * KH * KW, L) -> (N, C, H, W)."""
    o, k = _ntuple(output_size, 2), _ntuple(kernel_size, 2)
    d, p, s = _ntuple(dilation, 2), _ntuple(padding, 2), _ntuple(stride, 2)
    if input.ndim not in (2, 3) or any(v == 0 for v in input.shape[-2:]):
        raise RuntimeError(
            "Expected 2D or 3D (batch mode) tensor with possibly 0 batch size and non-zero "
            f"dimensions for input, but got: {_size(input.shape)}"
        )
    if input.shape[-2] % (k[0] * k[1]):
        raise RuntimeError(
            "Expected size of input's dimension 1 to be divisible by the product of "
            f"kernel_size, but got input.size(1)={input.shape[-2]} and "
            f"kernel_size=({k[0]}, {k[1]})."
        )
    blocks = [
        int((n + 2 * pp - (dd * (kk - 1) + 1)) / ss) + 1 for n, kk, pp, dd, ss in zip(o, k, p, d, s)
    ]
    if input.shape[-1] != blocks[0] * blocks[1]:
        raise RuntimeError(
            f"Given output_size=({o[0]}, {o[1]}), kernel_size=({k[0]}, {k[1]}), "
            f"dilation=({d[0]}, {d[1]}), padding=({p[0]}, {p[1]}), stride=({s[0]}, {s[1]}), "
            "expected size of input's dimension 2 to match the calculated number of sliding "
            f"blocks {blocks[0]} * {blocks[1]} = {blocks[0] * blocks[1]}, but got "
            f"input.size(2)={input.shape[-1]}."
        )
    _check_dtype(input, "col2im_out_cpu", "fb")
    return dispatch(OPS["col2im"], input, output_size=o, kernel=k, dilation=d, padding=p, stride=s)
