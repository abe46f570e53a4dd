"""``F.channel_shuffle``, ``F.max_unpool1d/2d/3d`` (and their modules) and ``F.gumbel_softmax``,
as PyTorch 2.13's.

``max_unpool`` writes each value at its index into a zero plane per (batch, channel), the inverse
of ``max_pool(..., return_indices=True)``; its backward gathers the gradient at the indices. The
1-d form is PyTorch's: the 2-d op on an unsqueezed input, then a squeeze.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from .. import _autocast
from .. import _errors as E
from .._tensor import Tensor
from ..ops.api import register_ops
from ..ops.dispatch import dispatch
from ..ops.table import OpDef
from .modules.module import Module

__all__ = [
    "channel_shuffle",
    "native_channel_shuffle",
    "max_unpool1d",
    "max_unpool2d",
    "max_unpool3d",
    "gumbel_softmax",
]


def _channel_shuffle(x, groups):
    b, c, *rest = x.shape
    y = x.reshape(b, groups, c // groups, *rest)
    return jnp.swapaxes(y, 1, 2).reshape(x.shape)


def _scatter_planes(x, idx, n):
    """Each (batch, channel) plane of ``x`` written at ``idx`` into ``n`` zeros."""
    lead = x.shape[:-1]
    rows = jnp.arange(int(np.prod(lead))).reshape(-1, 1)
    out = jnp.zeros((rows.shape[0], n), x.dtype)
    out = out.at[rows, idx.reshape(rows.shape[0], -1)].set(x.reshape(rows.shape[0], -1))
    return out.reshape(*lead, n)


@functools.partial(jax.custom_vjp, nondiff_argnums=(2,))
def _unpool_planes(x, idx, n):
    return _scatter_planes(x, idx, n)


def _unpool_fwd(x, idx, n):
    return _scatter_planes(x, idx, n), idx


def _unpool_bwd(n, idx, g):
    # PyTorch's formula gathers the gradient at every index, a repeated one included
    grad = jnp.take_along_axis(g, idx, axis=-1)
    return grad, np.zeros(idx.shape, jax.dtypes.float0)


_unpool_planes.defvjp(_unpool_fwd, _unpool_bwd)


def _max_unpool(x, indices, size):
    from ..autograd import forward_ad

    lead = x.shape[: x.ndim - len(size)]
    flat = x.reshape(*lead, -1)
    idx = indices.reshape(*lead, -1)
    # forward AD: PyTorch's formula unpools the tangent (JAX cannot push one through the VJP)
    unpool = _scatter_planes if forward_ad.JVP_TRACING[0] else _unpool_planes
    out = unpool(flat, idx, int(np.prod(size)))
    return out.reshape(*lead, *size)


def _same_rule(meta, static):
    return (None,) * len(meta), meta[0][0]


register_ops(
    OpDef("nn.channel_shuffle", _channel_shuffle, "ChannelShuffleBackward0", ("self",), _same_rule),
    OpDef(
        "nn.max_unpool2d",
        _max_unpool,
        "MaxUnpool2DBackward0",
        ("self", "pool_indices"),
        _same_rule,
        edges=("self",),
        saves={"self": ("pool_indices",)},
    ),
    OpDef(
        "nn.max_unpool3d",
        _max_unpool,
        "MaxUnpool3DBackward0",
        ("self", "pool_indices"),
        _same_rule,
        edges=("self",),
        saves={"self": ("pool_indices",)},
    ),
)


def channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """``F.channel_shuffle``: ``(N, g * k, *) -> (N, k * g, *)``, the channels of the ``g``
    groups interleaved (ChannelShuffleBackward0)."""
    if input.ndim <= 2:
        raise RuntimeError(
            "channel_shuffle expects input with > 2 dims, but got input with sizes "
            f"[{', '.join(map(str, input.shape))}]"
        )
    groups = int(groups)
    if groups <= 0:
        raise RuntimeError(
            f"Number of groups to divide channels in must be positive. Value of groups:{groups}"
        )
    c = input.shape[1]
    if c % groups:
        raise RuntimeError(
            f"Number of channels must be divisible by groups. Got {c} channels and {groups} groups."
        )
    from ..ops.dispatch import OPS

    return dispatch(OPS["nn.channel_shuffle"], input, groups=groups)


def native_channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """``torch.native_channel_shuffle``: ``channel_shuffle``, which has no forward formula
    (Note [Forward AD not implemented])."""
    from ..autograd import forward_ad

    if forward_ad.ACTIVE[0] and forward_ad.tangent_of(input) is not None:
        raise forward_ad.refuse("native_channel_shuffle", False)
    return channel_shuffle(input, groups)


def _tuple(v, n: int) -> tuple:
    if isinstance(v, (list, tuple)):
        return tuple(int(x) for x in v)
    return (int(v),) * n


def _unpool_output_size(input, kernel_size, stride, padding, output_size) -> list:
    """PyTorch's ``_unpool_output_size``: the default size, or a checked given one."""
    default = [
        (input.shape[-len(kernel_size) + d] - 1) * stride[d] + kernel_size[d] - 2 * padding[d]
        for d in range(len(kernel_size))
    ]
    if output_size is None:
        return default
    if len(output_size) == len(kernel_size) + 2:
        output_size = output_size[2:]
    if len(output_size) != len(kernel_size):
        raise ValueError(
            f"output_size should be a sequence containing {len(kernel_size)} or "
            f"{len(kernel_size) + 2} elements, but it has a length of '{len(output_size)}'"
        )
    for d in range(len(kernel_size)):
        low, high = default[d] - stride[d], default[d] + stride[d]
        if not low < output_size[d] < high:
            raise ValueError(
                f'invalid output_size "{output_size}" (dim {d} must be between {low} and {high})'
            )
    return list(output_size)


def _check_indices(indices: Tensor, size) -> None:
    """PyTorch's kernel refuses an index outside the output plane (read on the host)."""
    data = indices._data
    if isinstance(data, jax.core.Tracer) or not data.size:
        return
    values = np.asarray(data)
    n = int(np.prod(size))
    bad = values[(values < 0) | (values >= n)]
    if bad.size:  # the kernel keeps the last bad index it meets
        dims = "x".join(str(s) for s in size)
        raise RuntimeError(
            f"Found an invalid max index: {int(bad.flat[-1])} (output volumes are of size {dims})"
        )


def _unpool(input, indices, size, name: str) -> Tensor:
    from ..ops.dispatch import OPS

    n = len(size)
    if indices.dtype.name != "int64":
        raise RuntimeError(
            "elements in indices should be type int64 but got: " + E.scalar_type_name(indices.dtype)
        )
    if tuple(input.shape) != tuple(indices.shape):
        raise RuntimeError(
            "Expected shape of indices to be same as that of the input tensor ("
            f"[{', '.join(map(str, input.shape))}]) but got indices tensor with shape: "
            f"[{', '.join(map(str, indices.shape))}]"
        )
    if input.ndim not in (n + 1, n + 2):
        raise RuntimeError(
            f"Input to {name} should be a {n + 1}d or {n + 2}d Tensor, but got a tensor with "
            f"{input.ndim} dimensions."
        )
    _check_indices(indices, size)
    return dispatch(OPS[f"nn.max_unpool{n}d"], input, indices, size=tuple(int(s) for s in size))


def _output_size(n: int, input, kernel_size, stride, padding, output_size) -> list:
    """The unpooled size from PyTorch's ``n``-d arguments (stride defaults to the kernel)."""
    k = _tuple(kernel_size, n)
    s = k if stride is None else _tuple(stride, n)
    return _unpool_output_size(input, k, s, _tuple(padding, n), output_size)


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """``F.max_unpool1d``: the 2-d op on the input unsqueezed, then squeezed."""
    size = _output_size(1, input, kernel_size, stride, padding, output_size)
    out = _unpool(input.unsqueeze(-1), indices.unsqueeze(-1), [*size, 1], "max_unpool2d")
    return out.squeeze(-1)


@_autocast.policy("fp32")
def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """``F.max_unpool2d`` (MaxUnpool2DBackward0)."""
    size = _output_size(2, input, kernel_size, stride, padding, output_size)
    return _unpool(input, indices, size, "max_unpool2d")


@_autocast.policy("fp32")
def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """``F.max_unpool3d`` (MaxUnpool3DBackward0)."""
    size = _output_size(3, input, kernel_size, stride, padding, output_size)
    return _unpool(input, indices, size, "max_unpool3d")


class ChannelShuffle(Module):
    """``nn.ChannelShuffle``."""

    def __init__(self, groups: int) -> None:
        super().__init__()
        self.groups = groups

    def forward(self, input):
        return channel_shuffle(input, self.groups)

    def extra_repr(self) -> str:
        return f"groups={self.groups}"


class _MaxUnpoolNd(Module):
    _n = 2
    _fn = staticmethod(max_unpool2d)

    def __init__(self, kernel_size, stride=None, padding=0) -> None:
        super().__init__()
        self.kernel_size = _tuple(kernel_size, self._n)
        self.stride = _tuple(stride if stride is not None else kernel_size, self._n)
        self.padding = _tuple(padding, self._n)

    def forward(self, input, indices, output_size=None):
        return self._fn(input, indices, self.kernel_size, self.stride, self.padding, output_size)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpoolNd):
    """``nn.MaxUnpool1d``."""

    _n = 1
    _fn = staticmethod(max_unpool1d)


class MaxUnpool2d(_MaxUnpoolNd):
    """``nn.MaxUnpool2d``."""

    _n = 2
    _fn = staticmethod(max_unpool2d)


class MaxUnpool3d(_MaxUnpoolNd):
    """``nn.MaxUnpool3d``."""

    _n = 3
    _fn = staticmethod(max_unpool3d)


def gumbel_softmax(logits, tau: float = 1, hard: bool = False, eps: float = 1e-10, dim: int = -1):
    """``F.gumbel_softmax``: a softmax of ``(logits + Gumbel noise) / tau``, drawn from the
    generator as PyTorch draws it (``exponential_``); ``hard`` gives the one-hot of its argmax
    with the soft sample's gradient (straight through)."""

    from .._factories import empty_like, zeros_like

    if eps != 1e-10:
        E.warn_above("`eps` parameter is deprecated and has no effect.")
    gumbels = -empty_like(logits).exponential_().log()
    gumbels = (logits + gumbels) / tau
    y_soft = gumbels.softmax(dim)
    if not hard:
        return y_soft
    index = y_soft.max(dim, keepdim=True)[1]
    y_hard = zeros_like(logits).scatter_(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft
