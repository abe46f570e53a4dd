"""Tensor methods that run Python per element or only look at a tensor's memory:
``apply_``, ``map_``, ``map2_`` (a Python callable over each element, on the CPU, written into
the tensor's memory without a version bump, as PyTorch's do), ``nonzero_static``, ``to_dense``
of a strided tensor and ``is_set_to``."""

from __future__ import annotations

import operator

import jax.numpy as jnp
import numpy as np

from .. import _dtype as D
from .. import _errors as E
from .. import _storage as S
from .._tensor import Tensor
from ..autograd import grad_mode
from .api import tensor_op

REQUIRES_GRAD = "Can't call {0}() on Variable that requires grad. Use var.detach().{0}() instead."


def _python_value(dtype):
    """How a callable's result becomes an element of ``dtype`` (PyTorch's unpacking)."""
    if dtype is D.bool_:
        return bool
    if dtype.is_complex:
        return complex
    if dtype.is_floating_point:

        def real(v):
            if isinstance(v, (bool, int, float)) or hasattr(v, "__float__"):
                return float(v)
            raise TypeError(f"must be real number, not {type(v).__name__}")

        return real

    def integer(v):
        if isinstance(v, float):
            v = int(v)
        elif not isinstance(v, int):
            if not hasattr(v, "__index__"):
                raise TypeError(f"'{type(v).__name__}' object cannot be interpreted as an integer")
            v = operator.index(v)
        if not -(1 << 63) <= v < (1 << 63):
            raise ValueError("Overflow when unpacking long long")
        return v

    return integer


def _map(self: Tensor, name: str, fn, others) -> Tensor:
    if not callable(fn):
        raise TypeError(f"'{type(fn).__name__}' object is not callable")
    if self.requires_grad or any(o.requires_grad for o in others):
        raise RuntimeError(REQUIRES_GRAD.format(name))
    if self.device.type != "cpu":
        raise RuntimeError(f"{name} is only implemented on CPU tensors")
    host = np.asarray(self._data)
    args = [np.asarray(o.expand(self.shape)._data) for o in others] if others else []
    unpack = _python_value(self._dtype)
    flat = [
        unpack(fn(*(a.item() for a in values)))
        for values in zip(host.reshape(-1), *(a.reshape(-1) for a in args))
    ]
    if self._dtype.is_floating_point or self._dtype.is_complex or self._dtype is D.bool_:
        values = np.asarray(flat, dtype=self._dtype.np)
    else:  # an integer wraps into the dtype as C++'s conversion does
        values = np.asarray(flat, dtype=np.int64).astype(self._dtype.np)
    S.write(self, jnp.asarray(values.reshape(host.shape)))  # through memory: no version bump
    return self


def _same_type(name, self, other, argument):
    if other._dtype is not self._dtype:
        raise TypeError(
            f"{name}: expected {E.tensor_type_name(self._dtype, self._device)} for {argument} "
            f"(got {E.tensor_type_name(other._dtype, other._device)})"
        )


@tensor_op("apply_", function=False)
def apply_(self, callable):  # noqa: A002
    """``Tensor.apply_(callable)``: each element replaced by ``callable(element)``."""
    return _map(self, "apply_", callable, ())


@tensor_op("map_", function=False)
def map_(self, tensor, callable):  # noqa: A002
    """``Tensor.map_(tensor, callable)``: each element replaced by ``callable(element, t)`` with
    ``t`` the matching element of ``tensor`` broadcast to this shape."""
    if not callable_(callable):
        raise TypeError(f"'{type(callable).__name__}' object is not callable")
    _same_type("map_", self, tensor, "'other'")
    return _map(self, "map_", callable, (tensor,))


@tensor_op("map2_", function=False)
def map2_(self, x, y, callable):  # noqa: A002
    """``Tensor.map2_(x, y, callable)``: ``callable(element, x_i, y_i)`` per element."""
    if not callable_(callable):
        raise TypeError(f"'{type(callable).__name__}' object is not callable")
    _same_type("map2_", self, x, "argument 'x'")
    _same_type("map2_", self, y, "argument 'y'")
    return _map(self, "map2_", callable, (x, y))


callable_ = callable


@tensor_op("nonzero_static")
def nonzero_static(input, *, size, fill_value=-1):
    """``nonzero_static(input, *, size, fill_value=-1)``: ``nonzero`` cut or padded with
    ``fill_value`` to ``size`` rows."""
    if isinstance(size, bool) or not isinstance(size, (int, np.integer)):
        raise TypeError(f"nonzero_static(): argument 'size' must be int, not {type(size).__name__}")
    if E.int_refused(fill_value):
        raise TypeError(
            f"nonzero_static(): argument 'fill_value' must be int, not {E.py_typename(fill_value)}"
        )
    if size < 0:
        raise RuntimeError("nonzero_static: 'size' must be an non-negative integer")
    # A fixed-size result: traceable under jit (no host read), rows in C order as ``nonzero``.
    # (``jnp.argwhere`` leaves an empty input's rows at 0, not at ``fill_value``.)
    if input._data.size:
        out = jnp.argwhere(input._data, size=int(size), fill_value=int(fill_value))
    else:
        out = jnp.full((int(size), input._data.ndim), int(fill_value))
    out = out.astype(jnp.int64)
    return Tensor._make(out, D.int64, input._device, inference=grad_mode._state.inference)


@tensor_op("nonzero_static", function=False)
def _nonzero_static_method(self, *args, **kwargs):
    """``Tensor.nonzero_static``: its parser's words for a positional or a missing ``size``."""
    if args:
        raise TypeError(
            f"nonzero_static() takes from 1 to 0 positional arguments but {len(args)} were given"
        )
    if "size" not in kwargs:
        raise TypeError(E.missing_args("nonzero_static", ["size"]))
    return nonzero_static(self, **kwargs)


@tensor_op("to_dense", function=False)
def to_dense(self, dtype=None, *, masked_grad=None):
    """``Tensor.to_dense()``: a strided tensor is already dense (itself, or cast to ``dtype``)."""
    if dtype is None or D.to_dtype(dtype) is self._dtype:
        return self
    return self.to(dtype)


@tensor_op("is_set_to", function=False)
def is_set_to(self, tensor) -> bool:
    """Whether both tensors view the same memory with the same sizes and strides."""
    from .tensor_info import _storage_address

    return (
        _storage_address(self) == _storage_address(tensor)
        and self.storage_offset() == tensor.storage_offset()
        and tuple(self.shape) == tuple(tensor.shape)
        and self.stride() == tensor.stride()
    )
