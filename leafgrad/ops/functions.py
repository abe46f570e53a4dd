"""``leafgrad.*`` functions for the Tensor methods defined in ``_tensor.py``.

Op modules install their own functions with ``@tensor_op`` (``ops/api.py``); these are the few
methods of the Tensor class itself that PyTorch also offers as functions.
"""

from __future__ import annotations

from .._tensor import Tensor

__all__ = [
    "mul",
    "multiply",
    "pow",
    "neg",
    "negative",
    "reciprocal",
    "exp",
    "log",
    "clone",
    "detach",
]


def _method(name: str):
    def fn(input: Tensor, *args, **kwargs):
        return getattr(input, name)(*args, **kwargs)

    fn.__name__ = name
    fn.__qualname__ = name
    fn.__doc__ = f"``torch.{name}``: the same as ``Tensor.{name}``."
    return fn


mul = multiply = _method("mul")
neg = negative = _method("neg")
reciprocal = _method("reciprocal")
exp = _method("exp")
log = _method("log")
clone = _method("clone")
detach = _method("detach")


def pow(input, exponent):  # noqa: A001
    """``torch.pow``: a tensor or a Python number on either side."""
    if isinstance(input, Tensor):
        return input.pow(exponent)
    return exponent.__rpow__(input)
