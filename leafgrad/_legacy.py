"""PyTorch's legacy tensor types: ``torch.FloatTensor`` and its kin (``torch.cuda.*Tensor``).

Each is a constructor in its dtype (and device) that reads its arguments as ``Tensor.new`` does
(sizes, a sequence of values, a tensor of that dtype), a type that ``isinstance`` answers for
tensors of that dtype and device, and an argument of ``Tensor.type`` and
``set_default_tensor_type``. They are not subclasses of ``Tensor``, as in PyTorch."""

from __future__ import annotations

from . import _device as DEV
from . import _dtype as D
from . import _errors as E

_NAMES = ("Bool", "Byte", "Char", "Short", "Int", "Long", "Half", "BFloat16", "Float", "Double")
SET_DEFAULT_DEPRECATED = (
    "torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please use "
    "torch.set_default_dtype() and torch.set_default_device() as alternatives."
)


class LegacyType(type):
    """The metaclass of the legacy types: calling one constructs, ``isinstance`` checks the
    dtype and the device type."""

    dtype: D.dtype
    _device_type: str

    def __call__(cls, *args, **kwargs):
        from ._tensor import LEGACY_CTOR_TENSOR_DEVICE, _legacy_new

        sizes = args if args and all(isinstance(a, int) for a in args) else None
        if sizes is None and len(args) == 1 and type(args[0]).__name__ == "Size":
            sizes = tuple(args[0])
        if sizes is not None:
            for s in sizes:
                if s < 0:
                    raise RuntimeError(
                        f"Trying to create tensor with negative dimension {s}: "
                        f"[{', '.join(map(str, sizes))}]"
                    )
        return _legacy_new(
            cls.dtype, DEV.device(cls._device_type), args, kwargs, LEGACY_CTOR_TENSOR_DEVICE
        )

    def __instancecheck__(cls, obj) -> bool:
        from ._tensor import Tensor

        return (
            isinstance(obj, Tensor)
            and obj._dtype is cls.dtype
            and obj._device.type == cls._device_type
        )

    def __repr__(cls) -> str:
        prefix = "torch.cuda." if cls._device_type == "cuda" else "torch."
        return f"<class '{prefix}{cls.__name__}'>"

    @property
    def is_cuda(cls) -> bool:
        return cls._device_type == "cuda"

    @property
    def is_sparse(cls) -> bool:
        return False


def _make(name: str, device_type: str) -> LegacyType:
    dtype = next(d for d in D.ALL if d._legacy == name)
    cls = LegacyType(f"{name}Tensor", (), {"dtype": dtype, "_device_type": device_type})
    cls.__module__ = "leafgrad.cuda" if device_type == "cuda" else "leafgrad"
    return cls


CPU_TYPES = {f"{n}Tensor": _make(n, "cpu") for n in _NAMES}
CUDA_TYPES = {f"{n}Tensor": _make(n, "cuda") for n in _NAMES}


def resolve(t) -> tuple[D.dtype, str | None]:
    """``(dtype, device type or None)`` of a legacy type, its name, or a dtype."""
    if isinstance(t, LegacyType):
        return t.dtype, t._device_type
    if isinstance(t, str):
        from ._tensor import _dtype_from_type_name

        device = "cuda" if t.startswith("torch.cuda.") else None
        dtype = _dtype_from_type_name(t)
        if device is None and t.rsplit(".", 1)[-1].endswith("Tensor"):
            device = "cpu"
        return dtype, device
    return D.to_dtype(t), None


_WARNED: list = []


def set_default_tensor_type(t) -> None:
    """``torch.set_default_tensor_type`` (deprecated in PyTorch): the default dtype, and for a
    ``torch.cuda`` type the default device."""
    if not _WARNED:
        _WARNED.append(True)
        E.warn(SET_DEFAULT_DEPRECATED)  # once a process (TORCH_WARN_ONCE)
    if isinstance(t, str):
        dtype, device = resolve(t)
    elif isinstance(t, LegacyType):
        dtype, device = t.dtype, t._device_type
    else:
        raise TypeError(
            "invalid type object: only floating-point types are supported as the default type"
        )
    if not dtype.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    if device == "cuda":
        from .ops.tensor_info import set_default_device

        set_default_device("cuda")  # leafgrad's factories default to the CPU only: it raises
    D.set_default_dtype(dtype)
