"""``leafgrad.nn`` convolution layers: Conv1d/2d/3d and ConvTranspose1d/2d/3d, as PyTorch's.

Arguments, checks, reprs and the default initialisation (Note [Layer init order] in linear.py)
follow ``torch/nn/modules/conv.py``; the arithmetic is ``leafgrad.nn.functional``'s.
"""

from __future__ import annotations

import math

from ... import _dtype as D
from ... import _factories
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .linear import _default_bias_, _empty
from .module import Module

__all__ = [
    "Conv1d",
    "Conv2d",
    "Conv3d",
    "ConvTranspose1d",
    "ConvTranspose2d",
    "ConvTranspose3d",
]

_PADDING_MODES = {"zeros", "reflect", "replicate", "circular"}


def _ntuple(n: int):
    def parse(x) -> tuple:
        if isinstance(x, (list, tuple)) or hasattr(x, "__iter__") and not isinstance(x, str):
            return tuple(x)
        return (x,) * n

    return parse


_single, _pair, _triple = _ntuple(1), _ntuple(2), _ntuple(3)


def _reverse_repeat_tuple(t, n: int) -> tuple:
    """(a, b) -> (b, b, a, a): the padding layout ``F.pad`` takes, last dim first."""
    return tuple(x for x in reversed(t) for _ in range(n))


def _pad(input, pad, mode: str):
    """``F.pad(input, pad, mode)`` for the conv padding modes.

    Until ``F.pad`` exists, the padded input is gathered with ``index_select`` along each padded
    dim (reflected, clamped or wrapped indices): the same values and gradients as PyTorch's, but
    the padding node is ``IndexSelectBackward0`` rather than ``ReflectionPad1DBackward0`` etc.
    """
    fn = getattr(F, "pad", None)
    if fn is not None:
        return fn(input, pad, mode=mode)
    out = input
    for j in range(len(pad) // 2):
        dim = input.ndim - 1 - j
        left, right = pad[2 * j], pad[2 * j + 1]
        if left == 0 and right == 0:
            continue
        n = input.shape[dim]
        idx = []
        for i in range(-left, n + right):
            if mode == "reflect":
                i = -i if i < 0 else (2 * (n - 1) - i if i >= n else i)
            elif mode == "replicate":
                i = min(max(i, 0), n - 1)
            else:  # circular
                i %= n
            idx.append(i)
        index = _factories.tensor(idx, dtype=D.int64, device=input.device)
        out = out.index_select(dim, index)
    return out


class _ConvNd(Module):
    """What Conv and ConvTranspose share: argument checks, parameters, init and repr."""

    __constants__ = [
        "stride",
        "padding",
        "dilation",
        "groups",
        "padding_mode",
        "output_padding",
        "in_channels",
        "out_channels",
        "kernel_size",
    ]

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: tuple,
        stride: tuple,
        padding,
        dilation: tuple,
        transposed: bool,
        output_padding: tuple,
        groups: int,
        bias: bool,
        padding_mode: str,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        valid_padding_strings = {"same", "valid"}
        if isinstance(padding, str):
            if padding not in valid_padding_strings:
                raise ValueError(
                    f"Invalid padding string {padding!r}, should be one of {valid_padding_strings}"
                )
            if padding == "same" and any(s != 1 for s in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
        if padding_mode not in _PADDING_MODES:
            raise ValueError(
                f"padding_mode must be one of {_PADDING_MODES}, but got "
                f"padding_mode='{padding_mode}'"
            )
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding
        self.dilation = dilation
        self.transposed = transposed
        self.output_padding = output_padding
        self.groups = groups
        self.padding_mode = padding_mode
        if isinstance(padding, str):
            # 'same' puts the odd remainder of the total padding on the right, as PyTorch does.
            pads = [0, 0] * len(kernel_size)
            if padding == "same":
                for i, (d, k) in enumerate(zip(reversed(dilation), reversed(kernel_size))):
                    total = d * (k - 1)
                    pads[2 * i], pads[2 * i + 1] = total // 2, total - total // 2
            self._reversed_padding_repeated_twice = pads
        else:
            self._reversed_padding_repeated_twice = _reverse_repeat_tuple(padding, 2)
        if transposed:
            shape = (in_channels, out_channels // groups, *kernel_size)
        else:
            shape = (out_channels, in_channels // groups, *kernel_size)
        self.weight = Parameter(_empty(shape, device, dtype))
        if bias:
            self.bias = Parameter(_empty(out_channels, device, dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Kaiming-uniform weight (a=sqrt(5)), then bias uniform in +-1/sqrt(fan_in)."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            _default_bias_(self.weight, self.bias)

    def extra_repr(self) -> str:
        s = "{in_channels}, {out_channels}, kernel_size={kernel_size}, stride={stride}"
        # len() of a padding string: PyTorch's test, so padding='same' is always printed.
        if self.padding != (0,) * len(self.padding):
            s += ", padding={padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += ", dilation={dilation}"
        if self.output_padding != (0,) * len(self.output_padding):
            s += ", output_padding={output_padding}"
        if self.groups != 1:
            s += ", groups={groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += ", padding_mode={padding_mode}"
        return s.format(**self.__dict__)

    def __setstate__(self, state) -> None:
        super().__setstate__(state)
        if not hasattr(self, "padding_mode"):
            self.padding_mode = "zeros"


class _Conv(_ConvNd):
    _nd = 0
    _tuple = staticmethod(_single)

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size,
        stride=1,
        padding=0,
        dilation=1,
        groups: int = 1,
        bias: bool = True,
        padding_mode: str = "zeros",
        device=None,
        dtype=None,
    ) -> None:
        t = self._tuple
        super().__init__(
            in_channels,
            out_channels,
            t(kernel_size),
            t(stride),
            padding if isinstance(padding, str) else t(padding),
            t(dilation),
            False,
            t(0),
            groups,
            bias,
            padding_mode,
            device=device,
            dtype=dtype,
        )

    def _conv_forward(self, input, weight, bias):
        conv = getattr(F, f"conv{self._nd}d")
        if self.padding_mode != "zeros":
            padded = _pad(input, self._reversed_padding_repeated_twice, self.padding_mode)
            zero = self._tuple(0)
            return conv(padded, weight, bias, self.stride, zero, self.dilation, self.groups)
        return conv(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)

    def forward(self, input):
        return self._conv_forward(input, self.weight, self.bias)


class Conv1d(_Conv):
    """1-d convolution over (N, C_in, L) or unbatched (C_in, L) input.

    >>> leafgrad.nn.Conv1d(16, 33, 3, stride=2)
    Conv1d(16, 33, kernel_size=(3,), stride=(2,))
    """

    _nd = 1
    _tuple = staticmethod(_single)


class Conv2d(_Conv):
    """2-d convolution over (N, C_in, H, W) or unbatched (C_in, H, W) input."""

    _nd = 2
    _tuple = staticmethod(_pair)


class Conv3d(_Conv):
    """3-d convolution over (N, C_in, D, H, W) or unbatched (C_in, D, H, W) input."""

    _nd = 3
    _tuple = staticmethod(_triple)


class _ConvTransposeNd(_ConvNd):
    _nd = 0
    _tuple = staticmethod(_single)

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size,
        stride=1,
        padding=0,
        output_padding=0,
        groups: int = 1,
        bias: bool = True,
        dilation=1,
        padding_mode: str = "zeros",
        device=None,
        dtype=None,
    ) -> None:
        if padding_mode != "zeros":
            raise ValueError(
                f'Only "zeros" padding mode is supported for {self.__class__.__name__}'
            )
        t = self._tuple
        super().__init__(
            in_channels,
            out_channels,
            t(kernel_size),
            t(stride),
            t(padding),
            t(dilation),
            True,
            t(output_padding),
            groups,
            bias,
            padding_mode,
            device=device,
            dtype=dtype,
        )

    def _output_padding(
        self, input, output_size, stride, padding, kernel_size, num_spatial_dims, dilation=None
    ) -> list:
        """The output padding that gives ``output_size`` (``self.output_padding`` without one)."""
        if output_size is None:
            return list(_single(self.output_padding))
        has_batch_dim = input.dim() == num_spatial_dims + 2
        num_non_spatial_dims = 2 if has_batch_dim else 1
        if len(output_size) == num_non_spatial_dims + num_spatial_dims:
            output_size = output_size[num_non_spatial_dims:]
        if len(output_size) != num_spatial_dims:
            raise ValueError(
                f"ConvTranspose{num_spatial_dims}D: for {input.dim()}D input, output_size must "
                f"have {num_spatial_dims} or {num_non_spatial_dims + num_spatial_dims} elements "
                f"(got {len(output_size)})"
            )
        min_sizes, max_sizes = [], []
        for d in range(num_spatial_dims):
            size = (
                (input.size(d + num_non_spatial_dims) - 1) * stride[d]
                - 2 * padding[d]
                + (dilation[d] if dilation is not None else 1) * (kernel_size[d] - 1)
                + 1
            )
            min_sizes.append(size)
            max_sizes.append(size + stride[d] - 1)
        for size, lo, hi in zip(output_size, min_sizes, max_sizes):
            if size < lo or size > hi:
                raise ValueError(
                    f"requested an output size of {output_size}, but valid sizes range "
                    f"from {min_sizes} to {max_sizes} (for an input of {input.size()[2:]})"
                )
        return [output_size[d] - min_sizes[d] for d in range(num_spatial_dims)]

    def forward(self, input, output_size=None):
        if self.padding_mode != "zeros":
            raise ValueError(
                f"Only `zeros` padding mode is supported for {self.__class__.__name__}"
            )
        nd = self._nd
        output_padding = self._output_padding(
            input, output_size, self.stride, self.padding, self.kernel_size, nd, self.dilation
        )
        args = (self.stride, self.padding, output_padding, self.groups, self.dilation)
        fn = getattr(F, f"conv_transpose{nd}d", None)
        if fn is None:
            # F.conv_transpose3d is not exported yet; its frontend is the shared one.
            from .. import _conv_pool

            stride, padding, output_padding, groups, dilation = args
            return _conv_pool._convolution(
                f"conv_transpose{nd}d", nd, input, self.weight, self.bias, stride, padding,
                dilation, groups, True, output_padding,
            )  # fmt: skip
        return fn(input, self.weight, self.bias, *args)


class ConvTranspose1d(_ConvTransposeNd):
    """1-d transposed convolution; ``forward(input, output_size=None)``."""

    _nd = 1
    _tuple = staticmethod(_single)


class ConvTranspose2d(_ConvTransposeNd):
    """2-d transposed convolution; ``forward(input, output_size=None)``."""

    _nd = 2
    _tuple = staticmethod(_pair)


class ConvTranspose3d(_ConvTransposeNd):
    """3-d transposed convolution; ``forward(input, output_size=None)``."""

    _nd = 3
    _tuple = staticmethod(_triple)
