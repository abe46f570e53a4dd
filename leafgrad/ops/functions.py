"""``leafgrad.*`` functions for the Tensor methods defined in ``_tensor.py``.

Op modules install their own functions with ``@tensor_op`` (``ops/api.py``); these are the few
methods of the Tensor class itself that PyTorch also offers as functions.
"""

from __future__ import annotations

import numpy as np

from .. import _errors as E
from .._tensor import POW_FUNCTION, Tensor

__all__ = [
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


neg = negative = _method("neg")
reciprocal = _method("reciprocal")
exp = _method("exp")
log = _method("log")
clone = _method("clone")
detach = _method("detach")


def pow(input, exponent):  # noqa: A001
    """``torch.pow``: a tensor or a Python number on either side."""
    if isinstance(input, Tensor) and (isinstance(exponent, Tensor) or _is_number(exponent)):
        return input.pow(exponent)
    if isinstance(exponent, Tensor) and _is_number(input):
        return exponent.__rpow__(input)
    raise TypeError(E.invalid_arguments("pow", POW_FUNCTION, (input, exponent)))


def _is_number(x) -> bool:
    return isinstance(x, (bool, int, float, complex, np.generic))
