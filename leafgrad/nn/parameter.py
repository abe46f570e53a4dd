"""``leafgrad.nn.Parameter`` and ``Buffer``: the tensors a Module registers as its state.

A Parameter is a leafgrad Tensor subclass that shares its source tensor's memory and version
counter (as ``torch.Tensor._make_subclass`` does) and is always a leaf: ``Parameter(x * 3)`` holds
the values of ``x * 3`` without its history. Ops on a Parameter return plain Tensors.
"""

from __future__ import annotations

from .. import _errors as E
from .. import _storage
from .._tensor import Tensor, _copy_strides

__all__ = ["Parameter", "Buffer", "UninitializedParameter", "UninitializedBuffer"]


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


# --- lazy modules' placeholders ------------------------------------------------------------------
# Note [Uninitialized tensors]: a lazy module's parameters and buffers are placeholders until its
# first forward gives them a shape (``materialize``), which also turns them into a Parameter or a
# plain Tensor. Until then they hold an empty array of their dtype and device, and every read of
# their values raises PyTorch's ValueError: the ``_data`` slot is shadowed by a property here, so
# any op (dispatch reads ``_data``) refuses them, at no cost to other tensors. Their dtype,
# device, ``size()`` (``[0]``) and the conversions a module's ``to``/``float``/``cuda`` apply
# work, as PyTorch allows them.

_UNINITIALIZED_USE = (
    "Attempted to use an uninitialized parameter in {}. This error happens when you are using a "
    "`LazyModule` or explicitly manipulating `torch.nn.parameter.{}` objects. When using "
    "LazyModules Call `forward` with a dummy batch to initialize the parameters before calling "
    "torch functions"
)
_UNINITIALIZED_SHAPE = (
    "Can't access the shape of an uninitialized parameter or buffer. This error usually happens "
    "in `load_state_dict` when trying to load an uninitialized parameter into an initialized "
    "one. Call `forward` to initialize the parameters before accessing their attributes."
)
_SLOT = Tensor._data  # the slot's descriptor on Tensor


def _caller() -> str:
    """How PyTorch names the function an uninitialized tensor was given to: the outermost
    leafgrad function on the stack (a Tensor method, or a function)."""
    import os
    import sys

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    frame, found = sys._getframe(2), None
    while frame is not None and frame.f_code.co_filename.startswith(root):
        found = frame
        frame = frame.f_back
    if found is None:
        return "<unknown>"
    name = found.f_code.co_name
    given = found.f_locals.get("name")  # methods made by a factory know their name
    if name in ("method", "fn", "wrapper", "parsed", "call") and isinstance(given, str):
        name = given
    if name.startswith("__") and name.endswith("__"):
        name = name[2:-2]
    owner = found.f_locals.get("self")
    if found.f_code.co_name == "call" and found.f_locals.get("method"):
        owner = (found.f_locals.get("args") or (None,))[0]  # _arg_check's outermost wrappers
    if isinstance(owner, Tensor):
        return f"<method '{name}' of 'torch._C.TensorBase' objects>"
    return f"<built-in method {name} of type object>"


class UninitializedTensorMixin:
    """What ``UninitializedParameter`` and ``UninitializedBuffer`` share."""

    cls_to_become: type = Tensor

    def _read_data(self):
        raise ValueError(_UNINITIALIZED_USE.format(_caller(), type(self).__name__))

    def _write_data(self, value) -> None:
        _SLOT.__set__(self, value)

    _data = property(_read_data, _write_data)

    def _placeholder(self) -> Tensor:
        return Tensor._make(_SLOT.__get__(self), self._dtype, self._device)

    def materialize(self, shape, device=None, dtype=None) -> None:
        """Give the tensor ``shape`` (uninitialized values) and make it a ``cls_to_become``."""
        from .._factories import empty

        device = self._device if device is None else device
        dtype = self._dtype if dtype is None else dtype
        fresh = empty(shape, device=device, dtype=dtype)
        self.__class__ = self.cls_to_become
        self.data = fresh

    @property
    def shape(self):
        raise RuntimeError(_UNINITIALIZED_SHAPE)

    @property
    def data(self) -> Tensor:
        return self._placeholder()

    @data.setter
    def data(self, value: Tensor) -> None:
        Tensor.data.fset(self, value._placeholder() if is_lazy(value) else value)

    def size(self, dim=None):
        return self._placeholder().size(dim)

    def dim(self):
        return self._read_data()

    def share_memory_(self):
        raise RuntimeError(
            "Can't share memory on an uninitialized parameter or buffer. Call `forward` to "
            "initialize the parameters before calling `module.share_memory()`."
        )

    def __repr__(self, *, tensor_contents=None) -> str:
        return f"<{type(self).__name__}>"

    __str__ = __repr__

    def __reduce_ex__(self, protocol):
        return (type(self), (self.requires_grad,))

    def __deepcopy__(self, memo):
        if id(self) not in memo:
            memo[id(self)] = type(self)(self.requires_grad, self._device, self._dtype)
        return memo[id(self)]

    def _converted(self, method: str, *args, **kwargs):
        """A conversion PyTorch allows (``to``, ``float``...): a placeholder of the new dtype
        and device."""
        out = getattr(self._placeholder(), method)(*args, **kwargs)
        return type(self)(self.requires_grad, out._device, out._dtype)

    def to(self, *args, **kwargs):
        return self._converted("to", *args, **kwargs)

    def cpu(self, *args, **kwargs):
        return self._converted("cpu", *args, **kwargs)

    def cuda(self, *args, **kwargs):
        return self._converted("cuda", *args, **kwargs)

    def type(self, *args, **kwargs):
        if not args and not kwargs:
            return self._placeholder().type()
        return self._converted("type", *args, **kwargs)

    def half(self):
        return self._converted("half")

    def float(self):
        return self._converted("float")

    def double(self):
        return self._converted("double")

    def bfloat16(self):
        return self._converted("bfloat16")


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """A parameter of a lazy module before its first forward (Note [Uninitialized tensors])."""

    cls_to_become = Parameter

    def __new__(cls, requires_grad: bool = True, device=None, dtype=None):
        from .._factories import empty

        return _make_subclass(cls, empty(0, device=device, dtype=dtype), requires_grad)


class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    """A buffer of a lazy module before its first forward (Note [Uninitialized tensors])."""

    cls_to_become = Tensor

    def __new__(cls, requires_grad: bool = False, device=None, dtype=None, persistent=True):
        from .._factories import empty

        data = empty(0, device=device, dtype=dtype)
        t = cls._make(_SLOT.__get__(data), data._dtype, data._device)
        t._set_requires_grad(bool(requires_grad))
        t.persistent = persistent
        return t


def is_lazy(param) -> bool:
    """Whether ``param`` is an uninitialized parameter or buffer of a lazy module."""
    return isinstance(param, UninitializedTensorMixin)
