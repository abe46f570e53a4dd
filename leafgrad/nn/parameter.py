"""``leafgrad.nn.Parameter`` and ``Buffer``: the tensors a Module registers as its state.

A Parameter is a leafgrad Tensor subclass that shares its source tensor's memory and version
counter (as ``torch.Tensor._make_subclass`` does) and is always a leaf: ``Parameter(x * 3)`` holds
the values of ``x * 3`` without its history. Ops on a Parameter return plain Tensors.
"""

from __future__ import annotations

from .. import _errors as E
from .. import _storage
from .._tensor import Tensor, _copy_strides

__all__ = ["Parameter", "Buffer"]


class _ParameterMeta(type):
    # Tensors flagged ``_is_param`` also count as Parameters, as in PyTorch.
    def __instancecheck__(cls, instance) -> bool:
        if cls is Parameter and isinstance(instance, Tensor):
            if instance.__dict__.get("_is_param", False):
                return True
        return super().__instancecheck__(instance)


class Parameter(Tensor, metaclass=_ParameterMeta):
    """A Tensor that a Module registers as a parameter when assigned as an attribute.

    >>> p = Parameter(leafgrad.zeros(3))
    >>> p.requires_grad, p.is_leaf
    (True, True)
    """

    def __new__(cls, data: Tensor | None = None, requires_grad: bool = True):
        if data is None:
            from .._factories import empty

            data = empty(0)
        return _make_subclass(cls, data, requires_grad)

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(self.data.clone(), self.requires_grad)
        memo[id(self)] = result
        return result

    def __repr__(self, *, tensor_contents=None) -> str:
        return "Parameter containing:\n" + super().__repr__()

    __str__ = __repr__

    def __reduce_ex__(self, protocol):
        return (_rebuild_parameter, (self.data, self.requires_grad))


def _make_subclass(cls, data: Tensor, requires_grad: bool) -> Tensor:
    """A leaf of class ``cls`` sharing ``data``'s memory and version counter."""
    t = cls._make(data._data, data._dtype, data._device, inference=data._inference)
    t._version_counter = data._version_counter
    _storage.share(data, t)
    _copy_strides(data, t)
    if requires_grad and not (t._dtype.is_floating_point or t._dtype.is_complex):
        raise RuntimeError(E.REQUIRES_GRAD_FACTORY)
    t._set_requires_grad(bool(requires_grad))
    return t


def _rebuild_parameter(data: Tensor, requires_grad: bool) -> Parameter:
    return Parameter(data, requires_grad)


class _BufferMeta(type):
    # ``Buffer(x)`` returns a plain Tensor flagged ``_is_buffer``; isinstance checks the flag.
    def __instancecheck__(cls, instance) -> bool:
        if cls is Buffer:
            return isinstance(instance, Tensor) and instance.__dict__.get("_is_buffer", False)
        return super().__instancecheck__(instance)


class Buffer(metaclass=_BufferMeta):
    """Marks a Tensor as a Module buffer when assigned as an attribute (``persistent`` decides
    whether it is in ``state_dict``)."""

    def __new__(cls, data: Tensor | None = None, *, persistent: bool = True):
        if data is None:
            from .._factories import empty

            data = empty(0)
        t = data.detach().requires_grad_(data.requires_grad)
        t.persistent = persistent
        t._is_buffer = True
        return t
