"""``leafgrad.nn`` pooling layers: max, average, adaptive, fractional and power-average pooling.

Each layer stores its arguments as PyTorch does (so reprs match) and calls the matching
``leafgrad.nn.functional`` function; a layer whose functional is not written yet can be built
and printed, and raises ``NotImplementedError`` when called.
"""

from __future__ import annotations

from .conv import _pair, _single, _triple
from .linear import _functional
from .module import Module

__all__ = [
    "MaxPool1d",
    "MaxPool2d",
    "MaxPool3d",
    "AvgPool1d",
    "AvgPool2d",
    "AvgPool3d",
    "AdaptiveAvgPool1d",
    "AdaptiveAvgPool2d",
    "AdaptiveAvgPool3d",
    "AdaptiveMaxPool1d",
    "AdaptiveMaxPool2d",
    "AdaptiveMaxPool3d",
    "LPPool1d",
    "LPPool2d",
    "LPPool3d",
    "FractionalMaxPool2d",
    "FractionalMaxPool3d",
]


class _MaxPoolNd(Module):
    __constants__ = ["kernel_size", "stride", "padding", "dilation", "return_indices", "ceil_mode"]
    _fn = ""

    def __init__(
        self,
        kernel_size,
        stride=None,
        padding=0,
        dilation=1,
        return_indices: bool = False,
        ceil_mode: bool = False,
    ) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def forward(self, input):
        return _functional(self._fn)(
            input,
            self.kernel_size,
            self.stride,
            self.padding,
            self.dilation,
            ceil_mode=self.ceil_mode,
            return_indices=self.return_indices,
        )

    def extra_repr(self) -> str:
        return (
            f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
            f"dilation={self.dilation}, ceil_mode={self.ceil_mode}"
        )


class MaxPool1d(_MaxPoolNd):
    """Max over sliding windows of (N, C, L) or (C, L) input."""

    _fn = "max_pool1d"


class MaxPool2d(_MaxPoolNd):
    """Max over sliding windows of (N, C, H, W) or (C, H, W) input.

    >>> leafgrad.nn.MaxPool2d(3, stride=2)
    MaxPool2d(kernel_size=3, stride=2, padding=0, dilation=1, ceil_mode=False)
    """

    _fn = "max_pool2d"


class MaxPool3d(_MaxPoolNd):
    """Max over sliding windows of (N, C, D, H, W) or (C, D, H, W) input."""

    _fn = "max_pool3d"


class _AvgPoolNd(Module):
    __constants__ = ["kernel_size", "stride", "padding", "ceil_mode", "count_include_pad"]

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool1d(_AvgPoolNd):
    """Average over sliding windows of (N, C, L) or (C, L) input."""

    def __init__(
        self,
        kernel_size,
        stride=None,
        padding=0,
        ceil_mode: bool = False,
        count_include_pad: bool = True,
    ) -> None:
        super().__init__()
        self.kernel_size = _single(kernel_size)
        self.stride = _single(stride if stride is not None else kernel_size)
        self.padding = _single(padding)
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad

    def forward(self, input):
        return _functional("avg_pool1d")(
            input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
            self.count_include_pad,
        )  # fmt: skip


class _AvgPoolWithDivisor(_AvgPoolNd):
    _fn = ""

    def __init__(
        self,
        kernel_size,
        stride=None,
        padding=0,
        ceil_mode: bool = False,
        count_include_pad: bool = True,
        divisor_override=None,
    ) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input):
        return _functional(self._fn)(
            input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
            self.count_include_pad, self.divisor_override,
        )  # fmt: skip


class AvgPool2d(_AvgPoolWithDivisor):
    """Average over sliding windows of (N, C, H, W) or (C, H, W) input."""

    _fn = "avg_pool2d"


class AvgPool3d(_AvgPoolWithDivisor):
    """Average over sliding windows of (N, C, D, H, W) or (C, D, H, W) input."""

    _fn = "avg_pool3d"

    def __setstate__(self, d) -> None:
        super().__setstate__(d)
        self.__dict__.setdefault("padding", 0)
        self.__dict__.setdefault("ceil_mode", False)
        self.__dict__.setdefault("count_include_pad", True)


class _AdaptiveAvgPoolNd(Module):
    __constants__ = ["output_size"]
    _fn = ""

    def __init__(self, output_size) -> None:
        super().__init__()
        self.output_size = output_size

    def forward(self, input):
        return _functional(self._fn)(input, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(_AdaptiveAvgPoolNd):
    """Average pooling to a given output length."""

    _fn = "adaptive_avg_pool1d"


class AdaptiveAvgPool2d(_AdaptiveAvgPoolNd):
    """Average pooling to a given output size (``None`` keeps that input size)."""

    _fn = "adaptive_avg_pool2d"


class AdaptiveAvgPool3d(_AdaptiveAvgPoolNd):
    """Average pooling to a given 3-d output size."""

    _fn = "adaptive_avg_pool3d"


class _AdaptiveMaxPoolNd(Module):
    __constants__ = ["output_size", "return_indices"]
    _fn = ""

    def __init__(self, output_size, return_indices: bool = False) -> None:
        super().__init__()
        self.output_size = output_size
        self.return_indices = return_indices

    def forward(self, input):
        return _functional(self._fn)(input, self.output_size, self.return_indices)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveMaxPool1d(_AdaptiveMaxPoolNd):
    """Max pooling to a given output length."""

    _fn = "adaptive_max_pool1d"


class AdaptiveMaxPool2d(_AdaptiveMaxPoolNd):
    """Max pooling to a given output size (``None`` keeps that input size)."""

    _fn = "adaptive_max_pool2d"


class AdaptiveMaxPool3d(_AdaptiveMaxPoolNd):
    """Max pooling to a given 3-d output size."""

    _fn = "adaptive_max_pool3d"


class _LPPoolNd(Module):
    __constants__ = ["norm_type", "kernel_size", "stride", "ceil_mode"]
    _fn = ""

    def __init__(self, norm_type: float, kernel_size, stride=None, ceil_mode: bool = False):
        super().__init__()
        self.norm_type = norm_type
        self.kernel_size = kernel_size
        self.stride = stride
        self.ceil_mode = ceil_mode

    def forward(self, input):
        return _functional(self._fn)(
            input, float(self.norm_type), self.kernel_size, self.stride, self.ceil_mode
        )

    def extra_repr(self) -> str:
        return (
            f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, "
            f"stride={self.stride}, ceil_mode={self.ceil_mode}"
        )


class LPPool1d(_LPPoolNd):
    """Power-average pooling ``(sum x^p)^(1/p)`` over windows of 1-d input."""

    _fn = "lp_pool1d"


class LPPool2d(_LPPoolNd):
    """Power-average pooling ``(sum x^p)^(1/p)`` over windows of 2-d input."""

    _fn = "lp_pool2d"


class LPPool3d(_LPPoolNd):
    """Power-average pooling ``(sum x^p)^(1/p)`` over windows of 3-d input."""

    _fn = "lp_pool3d"


class _FractionalMaxPoolNd(Module):
    __constants__ = ["kernel_size", "return_indices", "output_size", "output_ratio"]
    _nd = 2

    def __init__(
        self,
        kernel_size,
        output_size=None,
        output_ratio=None,
        return_indices: bool = False,
        _random_samples=None,
    ) -> None:
        super().__init__()
        tup = _pair if self._nd == 2 else _triple
        name = type(self).__name__
        self.kernel_size = tup(kernel_size)
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = tup(output_size) if output_size is not None else None
        self.output_ratio = tup(output_ratio) if output_ratio is not None else None
        if output_size is None and output_ratio is None:
            raise ValueError(
                f"{name} requires specifying either an output size, or a pooling ratio"
            )
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if self.output_ratio is not None and not all(
            0 < r < 1 for r in self.output_ratio[: self._nd]
        ):
            raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")

    def forward(self, input):
        return _functional(f"fractional_max_pool{self._nd}d")(
            input,
            self.kernel_size,
            self.output_size,
            self.output_ratio,
            self.return_indices,
            _random_samples=self._random_samples,
        )


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    """2-d fractional max pooling: windows at random fractional strides."""

    _nd = 2


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    """3-d fractional max pooling: windows at random fractional strides."""

    _nd = 3
