"""``leafgrad.nn`` linear layers: Identity, Linear, Bilinear, with PyTorch's initialisation.

Note [Layer init order]: the default initialisers draw from the global CPU stream in exactly
PyTorch's order (weight first, then bias, each with the same ``uniform_``/``normal_`` call), so
after the same ``manual_seed`` a leafgrad layer holds the same numbers as PyTorch's.
"""

from __future__ import annotations

import math

from ... import _factories
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = ["Identity", "Linear", "Bilinear"]


# --- what the layers share ------------------------------------------------------------------------


def _default_bias_(weight, bias) -> None:
    """Linear's and conv's bias: ``U(-1/sqrt(fan_in), 1/sqrt(fan_in))``."""
    fan_in, _ = init._calculate_fan_in_and_fan_out(weight)
    bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
    init.uniform_(bias, -bound, bound)


def _functional(name: str):
    """``F.<name>``; layers whose functional is still missing raise only when called."""
    fn = getattr(F, name, None)
    if fn is None:
        raise NotImplementedError(f"leafgrad: nn.functional.{name} is not implemented yet")
    return fn


def _empty(shape, device, dtype):
    return _factories.empty(shape, device=device, dtype=dtype)


# --- layers ---------------------------------------------------------------------------------------


class Identity(Module):
    """A placeholder that returns its input; its arguments are ignored, as in PyTorch."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__()

    def forward(self, input):
        return input


class Linear(Module):
    """``y = x W^T + b`` with ``W`` of shape (out_features, in_features).

    >>> leafgrad.nn.Linear(3, 2)
    Linear(in_features=3, out_features=2, bias=True)
    """

    __constants__ = ["in_features", "out_features"]

    def __init__(
        self, in_features: int, out_features: int, bias: bool = True, device=None, dtype=None
    ) -> None:
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(_empty((out_features, in_features), device, dtype))
        if bias:
            self.bias = Parameter(_empty(out_features, device, dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Kaiming-uniform weight (a=sqrt(5)), then bias uniform in +-1/sqrt(fan_in)."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            _default_bias_(self.weight, self.bias)

    def forward(self, input):
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (
            f"in_features={self.in_features}, out_features={self.out_features}, "
            f"bias={self.bias is not None}"
        )


class Bilinear(Module):
    """``y = x1^T A x2 + b`` with ``A`` of shape (out_features, in1_features, in2_features)."""

    __constants__ = ["in1_features", "in2_features", "out_features"]

    def __init__(
        self,
        in1_features: int,
        in2_features: int,
        out_features: int,
        bias: bool = True,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        self.in1_features = in1_features
        self.in2_features = in2_features
        self.out_features = out_features
        shape = (out_features, in1_features, in2_features)
        self.weight = Parameter(_empty(shape, device, dtype))
        if bias:
            self.bias = Parameter(_empty(out_features, device, dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Weight and bias uniform in +-1/sqrt(in1_features)."""
        if self.in1_features <= 0:
            raise ValueError(
                f"in1_features must be > 0, but got (in1_features={self.in1_features})"
            )
        bound = 1 / math.sqrt(self.weight.size(1))
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1, input2):
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (
            f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
            f"out_features={self.out_features}, bias={self.bias is not None}"
        )
