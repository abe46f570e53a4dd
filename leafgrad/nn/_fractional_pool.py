"""``F.fractional_max_pool2d``/``3d`` (Graham, 2014) and their ``_with_indices`` forms.

Each is one op (``FractionalMaxPool2DBackward0``/``3D``, an edge to the input only: the random
samples are not differentiable) returning the maxima and their flat indices in each plane.
PyTorch's CPU kernel in ``jax.numpy``: the window starts along a dimension of ``n`` inputs,
``o`` outputs and pool ``k`` are ``int((i + u) * alpha) - int(u * alpha)`` for ``i < o - 1``
and ``n - k`` for the last, with ``alpha = (n - k) / (o - 1)``, all in the input's dtype (so
float16 and bfloat16 round after each operation, as ``c10::Half`` does); ``u`` is the plane's
random sample (2-d: ``[0]`` for the width, ``[1]`` for the height; 3-d: time, height, width).
A window's maximum is its first maximal entry, or its last NaN; the value is gathered at that
index, so the backward adds each output's gradient at its index, as PyTorch's backward kernel
does. Without ``_random_samples`` the samples are drawn as PyTorch draws them
(``torch.rand(N, C, 2 or 3, dtype=input.dtype)``), from the same generator.

A zero-sized kernel gives PyTorch's ``-inf`` values and start indices, without a gradient
(PyTorch's backward writes at those indices, which can lie outside the input).
"""

from __future__ import annotations

import functools
import math

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from .. import _autocast
from .. import _dtype as D
from .. import _errors as E
from .._tensor import Tensor
from ..ops.api import register_ops
from ..ops.dispatch import dispatch
from ..ops.formulas import formula
from ..ops.table import OPS, OpDef, same

__all__ = [
    "fractional_max_pool2d",
    "fractional_max_pool2d_with_indices",
    "fractional_max_pool3d",
    "fractional_max_pool3d_with_indices",
]

_HALF = {jnp.dtype(jnp.float16): (5, 10), jnp.dtype(jnp.bfloat16): (8, 7)}


def _starts(sample, n: int, o: int, k: int):
    """The window starts along one dimension, ``sample.shape + (o,)``."""
    last = jnp.full(sample.shape + (min(o, 1),), n - k, jnp.int64)
    if o <= 1:
        return last
    dt = sample.dtype
    bits = _HALF.get(jnp.dtype(dt))
    if bits is None:
        alpha = (np.asarray(n - k, dt) / np.asarray(o - 1, dt)).astype(dt)
        i = jnp.arange(o - 1, dtype=dt)
        a = (i + sample[..., None]) * jnp.asarray(alpha, dt)
        b = sample * jnp.asarray(alpha, dt)
    else:  # c10::Half and BFloat16 arithmetic: in float, rounded after each operation

        def r(v):
            return lax.reduce_precision(v, *bits)

        s = sample.astype(jnp.float32)
        alpha = r(jnp.asarray(np.float32(n - k) / np.float32(o - 1)))
        a = r(r(jnp.arange(o - 1, dtype=jnp.float32) + s[..., None]) * alpha)
        b = r(s * alpha)
    seq = a.astype(jnp.int32).astype(jnp.int64) - b.astype(jnp.int32).astype(jnp.int64)[..., None]
    return jnp.concatenate([seq, last], axis=-1)


@functools.partial(jax.jit, static_argnames=("kernel", "output_size"))
def _indices(x, samples, *, kernel, output_size):
    """The flat in-plane index of each window's maximum (its start for an empty window)."""
    nd = len(kernel)
    batched = x.ndim == nd + 2
    xb = x if batched else x[None]
    N, C, spatial = xb.shape[0], xb.shape[1], xb.shape[2:]
    u = samples[:N]
    which = (1, 0) if nd == 2 else (0, 1, 2)  # the sample of each spatial dimension
    flat = jnp.zeros((N, C) + (1,) * (2 * nd), jnp.int64)
    for i in range(nd):
        start = _starts(u[..., which[i]], spatial[i], output_size[i], kernel[i])
        shape = [N, C] + [1] * (2 * nd)
        shape[2 + i] = output_size[i]
        offset = [1] * (2 + 2 * nd)
        offset[2 + nd + i] = kernel[i]
        pos = start.reshape(shape) + jnp.arange(kernel[i]).reshape(offset)
        flat = flat * spatial[i] + pos
    out_shape = (N, C) + tuple(output_size)
    k = math.prod(kernel)
    if k == 0:  # no window: the window's start
        index = flat.reshape(out_shape)
    else:
        flat = jnp.broadcast_to(flat, out_shape + tuple(kernel)).reshape(out_shape + (k,))
        plane = xb.reshape(N, C, math.prod(spatial))
        picks = flat.reshape(N, C, math.prod(flat.shape[2:]))
        win = jnp.take_along_axis(plane, picks, axis=2).reshape(flat.shape)
        m = jnp.max(win, axis=-1, keepdims=True)
        arg = jnp.argmax(win == m, axis=-1)
        nan = jnp.isnan(win)
        last_nan = k - 1 - jnp.argmax(jnp.flip(nan, -1), axis=-1)
        arg = jnp.where(jnp.any(nan, axis=-1), last_nan, arg)
        index = jnp.take_along_axis(flat, arg[..., None], axis=-1)[..., 0]
    return index if batched else index[0]


def _gather(x, indices, *, nd, empty, kernel, output_size):
    """The values at ``indices`` of each plane (``-inf`` for empty windows); ``kernel`` and
    ``output_size`` are the node's saved arguments."""
    if empty:
        return jnp.full(indices.shape, -jnp.inf, x.dtype)
    lead = x.shape[:-nd]
    plane = x.reshape(lead + (math.prod(x.shape[-nd:]),))
    picks = indices.reshape(lead + (math.prod(indices.shape[-nd:]),))
    got = jnp.take_along_axis(plane, picks, axis=-1)
    return got.reshape(indices.shape)


def _scatter(grad_output, x, indices, *, nd, empty):
    """``fractional_max_pool{nd}d_backward``: each output's gradient added at its index."""
    lead = x.shape[:-nd]
    plane = jnp.zeros(lead + (math.prod(x.shape[-nd:]),), grad_output.dtype)
    n = math.prod(indices.shape[-nd:])
    if not empty:
        plane = plane.at[
            tuple(jnp.indices(lead + (1,), sparse=True)[:-1]) + (indices.reshape(lead + (n,)),)
        ].add(grad_output.reshape(lead + (n,)))
    return plane.reshape(x.shape)


register_ops(
    OpDef(
        "nn.fractional_max_pool",
        _gather,
        lambda nd, **_: f"FractionalMaxPool{nd}DBackward0",
        ("self", "indices"),
        same,
        edges=("self",),
        saves={"self": ("self", "indices")},
    ),
    OpDef(
        "nn.bwd.fractional_max_pool",
        _scatter,
        lambda nd, empty: f"FractionalMaxPool{nd}DBackwardBackward0",
        ("grad_output", "self", "indices"),
        same,
        edges=("grad_output", "self"),
        saves={"grad_output": ("indices",), "self": ("self",)},
    ),
)


@formula("nn.fractional_max_pool")
def _fractional_formula(ctx):
    x, indices = ctx["self"], ctx["indices"]
    if x is None or indices is None:
        return NotImplemented
    s = ctx.static
    g = dispatch(
        OPS["nn.bwd.fractional_max_pool"], ctx.grad, x, indices, nd=s["nd"], empty=s["empty"]
    )
    return {"self": g}


def _sizes(value, n: int, what: str, name: str) -> tuple[int, ...]:
    out = tuple(int(v) for v in value) if isinstance(value, (list, tuple)) else (int(value),) * n
    if len(out) != n:
        ints = "tuple of Ints" if n == 2 else "tuple of three Ints"
        raise RuntimeError(f"{name}: {what} must either be a single Int or {ints}")
    return out


def _fractional(input, kernel_size, output_size, samples, nd: int):
    """``torch._C._nn.fractional_max_pool{nd}d``: PyTorch's checks, then the op."""
    name = f"fractional_max_pool{nd}d"
    where = name + ("()" if nd == 2 else "_out()")
    kernel = _sizes(kernel_size, nd, "kernel_size", name)
    output_size = _sizes(output_size, nd, "output_size", name)
    ndim = input.dim()
    if ndim not in (nd + 1, nd + 2):
        raise RuntimeError(
            f"{where}: Expected {nd + 1}D or {nd + 2}D tensor, but got: {list(input.shape)}"
        )
    for i in range(1, ndim):
        if input.shape[i] == 0:
            raise RuntimeError(
                f"{where}: Expected input to have non-zero size for non-batch dimensions, but "
                f"got{list(input.shape)} with dimension {i} being empty."
            )
    spatial = input.shape[-nd:]
    names = ("height", "width") if nd == 2 else ("time", "height", "width")
    for n, k, o, dim in zip(spatial, kernel, output_size, names):
        # the 3-d check is strict: a window may not end at the input's last element
        if o + k - 1 > n or (nd == 3 and o + k - 1 == n):
            raise RuntimeError(f"{where}: pool {dim} {k} too large relative to input {dim} {n}")
    # fractional_max_pool_check_shape
    if samples.dtype != input.dtype:
        raise RuntimeError("Expect _random_samples to have the same dtype as input")
    if samples.dim() != 3:
        raise RuntimeError(f"Expect _random_samples to have 3 dimensions, got {samples.dim()}")
    batch = input.shape[0] if ndim == nd + 2 else 1
    if samples.shape[0] < batch:
        raise RuntimeError("Expect _random_samples.size(0) no less then input batch size.")
    if samples.shape[1] != input.shape[-nd - 1]:
        raise RuntimeError("Expect _random_samples.size(1) equals to input channel size.")
    if samples.shape[2] != nd:
        raise RuntimeError(
            f"Expect _random_samples.size(2) equals to {nd}; got {samples.shape[2]}."
        )
    if not input.dtype.is_floating_point:
        raise NotImplementedError(
            E.KERNEL_DTYPE.format(f"{name}_out_frame", E.scalar_type_name(input.dtype))
        )
    found = _indices(input._data, samples._data, kernel=kernel, output_size=tuple(output_size))
    indices = Tensor._make(found, D.int64, input.device)
    out = dispatch(
        OPS["nn.fractional_max_pool"],
        input,
        indices,
        nd=nd,
        empty=math.prod(kernel) == 0,
        kernel=kernel,
        output_size=tuple(output_size),
    )
    return out, indices


def _with_indices(input, kernel_size, output_size, output_ratio, samples, nd: int):
    import leafgrad

    name = f"fractional_max_pool{nd}d"
    if output_size is None and output_ratio is None:
        raise ValueError(f"{name} requires specifying either an output_size or an output_ratio")
    if output_size is None:
        if nd == 2 and len(output_ratio) > 2:  # PyTorch's len(): a bare float raises TypeError
            raise ValueError(
                f"{name} requires output_ratio to either be a single Int or tuple of Ints."
            )
        ratio = (
            tuple(output_ratio)
            if isinstance(output_ratio, (list, tuple))
            else ((output_ratio,) * nd)
        )
        output_size = [int(input.size(i - nd) * ratio[i]) for i in range(nd)]
    if samples is None:
        batch = 1 if input.dim() == nd + 1 else input.size(0)
        samples = leafgrad.rand(
            batch, input.size(-nd - 1), nd, dtype=input.dtype, device=input.device
        )
    return _fractional(input, kernel_size, output_size, samples, nd)


def _frontend(nd: int, with_indices: bool):
    """``F.fractional_max_pool{nd}d`` (the maxima, and the indices with ``return_indices``) or
    its ``_with_indices`` form (both, always)."""

    def fn(
        input,
        kernel_size,
        output_size=None,
        output_ratio=None,
        return_indices: bool = False,
        _random_samples=None,
    ):
        out = _with_indices(input, kernel_size, output_size, output_ratio, _random_samples, nd)
        return out if with_indices or return_indices else out[0]

    fn.__name__ = fn.__qualname__ = f"fractional_max_pool{nd}d" + (
        "_with_indices" if with_indices else ""
    )
    fn.__doc__ = (
        f"{nd}-d fractional max pooling over windows at random fractional strides "
        f"(``output_size``, or ``output_ratio`` of the input's size)"
        + ("; the maxima and their flat indices in each plane." if with_indices else ".")
    )
    return fn


fractional_max_pool2d = _autocast.policy("fp32")(_frontend(2, False))
fractional_max_pool2d_with_indices = _autocast.policy("fp32")(_frontend(2, True))
fractional_max_pool3d = _autocast.policy("fp32")(_frontend(3, False))
fractional_max_pool3d_with_indices = _autocast.policy("fp32")(_frontend(3, True))
