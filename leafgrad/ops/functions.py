"""The op functions of the ``leafgrad`` namespace (``leafgrad.add``, ``leafgrad.sum``, ...)."""

from __future__ import annotations

from .._tensor import Tensor
from .composite import dot, matmul, mm, mv

__all__ = [
    "add",
    "sub",
    "subtract",
    "mul",
    "multiply",
    "div",
    "divide",
    "true_divide",
    "pow",
    "neg",
    "negative",
    "reciprocal",
    "exp",
    "log",
    "sum",
    "mean",
    "matmul",
    "mm",
    "mv",
    "dot",
    "unsqueeze",
    "squeeze",
    "unbind",
    "clone",
    "detach",
    "eq",
    "ne",
    "lt",
    "le",
    "gt",
    "ge",
]


def _method(name: str):
    def fn(input: Tensor, *args, **kwargs):
        return getattr(input, name)(*args, **kwargs)

    fn.__name__ = name
    fn.__qualname__ = name
    fn.__doc__ = f"``torch.{name}``: the same as ``Tensor.{name}``."
    return fn


add = _method("add")
sub = subtract = _method("sub")
mul = multiply = _method("mul")
div = divide = true_divide = _method("div")
neg = negative = _method("neg")
reciprocal = _method("reciprocal")
exp = _method("exp")
log = _method("log")
sum = _method("sum")  # noqa: A001
mean = _method("mean")
unsqueeze = _method("unsqueeze")
squeeze = _method("squeeze")
unbind = _method("unbind")
clone = _method("clone")
detach = _method("detach")
eq = _method("eq")
ne = _method("ne")
lt = _method("lt")
le = _method("le")
gt = _method("gt")
ge = _method("ge")


def pow(input, exponent):  # noqa: A001
    """``torch.pow``: a tensor or a Python number on either side."""
    if isinstance(input, Tensor):
        return input.pow(exponent)
    return exponent.__rpow__(input)

