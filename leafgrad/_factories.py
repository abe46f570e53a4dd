"""Factories: ``tensor``, ``zeros``, ``arange``, ``rand``, ... Every result is a leaf.

Random factories draw from PyTorch's CPU generator stream, reproduced in ``_random``; tensors on
other devices draw from one generator per device, seeded together by ``manual_seed``.
"""

from __future__ import annotations

import contextlib
import functools
import math
import numbers

import jax
import numpy as np

from . import _device as DEV
from . import _dtype as D
from . import _errors as E
from . import _random as R
from ._known import known_values
from ._storage import kernel_wrote
from ._tensor import Size, Tensor
from .autograd import grad_mode
from .ops.api import tensor_op

__all__ = [
    "tensor",
    "as_tensor",
    "from_numpy",
    "zeros",
    "ones",
    "full",
    "empty",
    "arange",
    "linspace",
    "eye",
    "zeros_like",
    "ones_like",
    "full_like",
    "empty_like",
    "rand",
    "randn",
    "randint",
    "randperm",
    "rand_like",
    "randn_like",
    "randint_like",
    "is_tensor",
    "is_floating_point",
    "is_complex",
    "numel",
]

_SCALARS = (bool, int, float, complex)
INT64_MAX = (1 << 63) - 1
_U64_MAX = (1 << 64) - 1

# --- PyTorch's messages (named here: _errors.py belongs to another module) -------------------
SIZE_NOT_TUPLE = "{fn}(): argument 'size' (position {pos}) must be tuple of ints, not {type}"
SIZE_ELEMENT = (
    "{fn}(): argument 'size' (position {pos}) must be tuple of ints, but found element of type "
    "{type} at pos 0"
)
SIZE_UNPACK = (
    "{fn}(): argument 'size' failed to unpack the object at pos {pos} with error \"type must be "
    'tuple of ints,but got {type}"'
)
ONE_POSITIONAL = "{fn}() takes 1 positional argument but {n} were given"
NEGATIVE_DIMENSION = "Trying to create tensor with negative dimension {dim}: {shape}"
ZEROS_NEGATIVE = "zeros: Dimension size must be non-negative."
DTYPE_TYPE = "{fn}(): argument 'dtype' must be torch.dtype, not {type}"
FILL_VALUE_TYPE = "full(): argument 'fill_value' (position 2) must be Number, not {type}"
INFER_DTYPE = "Could not infer dtype of {type}"
NOT_REAL = "must be real number, not {type}"
NOT_INTEGER = "'{type}' object cannot be interpreted as an integer"
ARANGE_SIGN = "upper bound and lower bound inconsistent with step sign"
STORAGE_OVERFLOW = "Storage size calculation overflowed with sizes={shape}"
STRIDE_OVERFLOW = "Stride calculation overflowed"
MULTINOMIAL_TRACED = (
    "leafgrad: multinomial reads its probabilities on the host and cannot read values traced "
    "by leafgrad.compile or batched by vmap"
)
CPU_ALLOC = (
    "[enforce fail at alloc_cpu.cpp:127] err == 0. DefaultCPUAllocator: can't allocate memory: "
    "you tried to allocate {nbytes} bytes. Error code 12 (Cannot allocate memory)"
)


def _leaf(values: np.ndarray | jax.Array, dtype: D.dtype, device, requires_grad: bool) -> Tensor:
    """A new leaf on ``device``; checks ``requires_grad`` as PyTorch's factories do."""
    device = DEV.canonical(device)
    if requires_grad and not (dtype.is_floating_point or dtype.is_complex):
        raise RuntimeError(E.REQUIRES_GRAD_FACTORY)
    if device is DEV.META:  # Note [Meta tensors]: the shape and dtype only
        meta = DEV.meta_data(np.shape(values), dtype.np)
        inference = grad_mode.is_inference_mode_enabled()
        return Tensor._make(meta, dtype, device, bool(requires_grad), inference=inference)
    jdev = DEV.jax_device(device)
    if isinstance(values, np.ndarray) and values.dtype != dtype.np:
        with np.errstate(over="ignore", invalid="ignore"):  # inf, as PyTorch's casts give
            values = D.host_cast(values, dtype.np)
    array = jax.device_put(values, jdev)
    if array.dtype != dtype.np:
        array = array.astype(dtype.np)
    return Tensor._make(
        array,
        dtype,
        device,
        requires_grad=bool(requires_grad),
        inference=grad_mode.is_inference_mode_enabled(),
    )


def _type_name(x) -> str:
    """The type name PyTorch's argument parser prints (``tp_name``: ``numpy.float64``)."""
    return "Tensor" if isinstance(x, Tensor) else R._type_name(x)


def _is_int(x) -> bool:
    """An int as PyTorch's parser takes one for a size: no bool, a 0-d integer tensor is fine."""
    if isinstance(x, Tensor):
        return x._dtype._kind in "iu" and x._data.ndim == 0
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def _size(size, fn: str = "zeros", pos: int = 1) -> tuple[int, ...]:
    """PyTorch's parsing of a ``size`` given as ``*size``: ``(2, 3)``, ``((2, 3),)``, ``([2],)``.

    Only types are checked here; sizes themselves are ``check_shape``'s."""
    if len(size) == 1 and isinstance(size[0], (tuple, list, Size)):
        items = tuple(size[0])
    elif size and (isinstance(size[0], bool) or E.item_refused(size[0])):
        if len(size) > 1 and fn in ("zeros", "ones", "empty"):
            raise TypeError(ONE_POSITIONAL.format(fn=fn, n=len(size)))
        raise TypeError(SIZE_NOT_TUPLE.format(fn=fn, pos=pos, type=_type_name(size[0])))
    else:
        items = tuple(size)
    # after the first element PyTorch unpacks each item as an index: a bool is 0 or 1
    message = E.ints_error(fn, "size", f" (position {pos})", items)
    if message is not None:
        raise TypeError(message)
    return tuple(int(s) for s in items)


def check_shape(shape: tuple[int, ...], itemsize: int, fn: str = "") -> int:
    """The bytes a new contiguous tensor of ``shape`` needs, with PyTorch's errors for a negative
    size and for sizes whose storage or strides overflow int64 (computed with Python ints, so
    that nothing impossible reaches NumPy or XLA)."""
    for s in shape:
        if s < 0:
            if fn == "zeros":
                raise RuntimeError(ZEROS_NEGATIVE)
            raise RuntimeError(NEGATIVE_DIMENSION.format(dim=s, shape=_list_str(shape)))
    # computeStorageNbytesContiguous: an overflow of any partial product counts, even when a
    # later size is 0.
    numel, overflowed = 1, False
    for s in shape:
        numel *= s
        overflowed |= numel > _U64_MAX
    nbytes = numel * itemsize
    if overflowed or nbytes > INT64_MAX:
        raise RuntimeError(STORAGE_OVERFLOW.format(shape=_list_str(shape)))
    stride = 1
    for s in reversed(shape[1:]):
        stride *= max(s, 1)
        if stride > INT64_MAX:
            raise RuntimeError(STRIDE_OVERFLOW)
    return nbytes


@contextlib.contextmanager
def allocating(nbytes: int, device=None, note: str = ""):
    """Turn a failed host allocation of ``nbytes`` into PyTorch's CPU allocator error (followed
    by ``note``, leafgrad's own line, if given)."""
    text = CPU_ALLOC.format(nbytes=nbytes) + note
    try:
        yield
    except MemoryError:
        raise RuntimeError(text) from None
    except ValueError as e:  # NumPy's refusal of a buffer (an int64 intermediate) too large
        if not str(e).startswith("array is too big"):
            raise
        raise RuntimeError(text) from None
    except jax.errors.JaxRuntimeError as e:
        on_host = device is None or DEV.canonical(device).type == "cpu"
        if not (on_host and "RESOURCE_EXHAUSTED" in str(e)):
            raise
        raise RuntimeError(text) from None


def _dtype_arg(dtype, fn: str) -> D.dtype | None:
    """A ``dtype=`` argument, with PyTorch's error for what is not a dtype (a string, a number,
    a NumPy dtype or scalar type). Python's number types mean what they mean to PyTorch."""
    if dtype is None:
        return None
    if isinstance(dtype, D.dtype) or D.python_number_type(dtype):
        return D.to_dtype(dtype)
    raise TypeError(DTYPE_TYPE.format(fn=fn, type=_type_name(dtype)))


def _list_str(shape) -> str:
    return "[" + ", ".join(str(s) for s in shape) + "]"


# --- tensor() ----------------------------------------------------------------------------------


_MAX_DIMS = 64


def _is_sequence(x) -> bool:
    return isinstance(x, (list, tuple, str)) or (isinstance(x, (np.ndarray, Tensor)) and x.ndim > 0)


def _sizes(data) -> list[int]:
    """PyTorch's ``compute_sizes``: follow first elements while they are sequences."""
    sizes: list[int] = []
    seq = data
    while _is_sequence(seq):
        if isinstance(seq, Tensor) and seq is not data:
            break  # a tensor inside a list is one number (PySequence_Check is false for it)
        if isinstance(seq, (np.ndarray, Tensor)):
            sizes.extend(seq.shape)
            break
        sizes.append(len(seq))
        _warn_list_of_arrays(seq)
        if len(sizes) > _MAX_DIMS:
            raise ValueError(f"too many dimensions '{type(seq).__name__}'")
        if len(seq) == 0:
            break
        seq = seq[0]
    return sizes


def _warn_list_of_arrays(seq) -> None:
    # PyTorch warns (once) both when sizing and when storing such a list.
    if len(seq) and isinstance(seq[0], np.ndarray):
        E.warn_once(E.LIST_OF_NDARRAYS)


def _scalar_type(x) -> D.dtype:
    """PyTorch's ``infer_scalar_type`` of one object (sequences: every item, promoted)."""
    if isinstance(x, str):
        raise TypeError(E.INVALID_DATA_TYPE.format("str"))
    if isinstance(x, Tensor):
        return x._dtype
    if isinstance(x, (np.ndarray, np.generic)):
        return D.from_numpy_dtype(x.dtype)
    if isinstance(x, bool):
        return D.bool_
    if isinstance(x, int):
        return D.int64
    if isinstance(x, float):
        return D.get_default_dtype()
    if isinstance(x, complex):
        return D.inferred_complex_dtype()
    if isinstance(x, (list, tuple)):
        if len(x) == 0:
            return D.get_default_dtype()
        result = None
        for item in x:
            if item is x:
                raise TypeError("new(): self-referential lists are incompatible")
            k = _scalar_type(item)
            result = k if result is None else D.promote_types(result, k)
            if result is D.complex128:
                return result
        return result
    raise RuntimeError(f"Could not infer dtype of {type(x).__name__}")


def _host_type(dtype: D.dtype):
    """The NumPy type scalars are stored in on the host: a half type's are floats first, as
    PyTorch's ``store_scalar`` makes a ``c10::Half`` from a float (``D.host_cast``)."""
    return np.float32 if dtype is D.bfloat16 or dtype is D.float16 else dtype.np


def _store(data, sizes: list[int], dtype: D.dtype) -> np.ndarray:
    """PyTorch's ``recursive_store``: check every level's length, collect the scalars."""
    if 0 in sizes:  # PyTorch stores nothing (and checks nothing) for an empty result
        return np.zeros(sizes, _host_type(dtype))
    out: list = []
    ndim = len(sizes)
    stack = [(data, 0)]
    while stack:
        obj, dim = stack.pop()
        if dim == ndim:
            out.append(_checked_scalar(obj, dtype))
            continue
        if isinstance(obj, (np.ndarray, Tensor)):
            values = np.asarray(obj._data if isinstance(obj, Tensor) else obj)
            if list(values.shape) != sizes[dim:]:
                got = values.shape[0] if values.ndim else 0
                raise ValueError(E.SEQUENCE_LENGTH.format(sizes[dim], dim, got))
            out.extend(_checked_scalar(v, dtype) for v in values.reshape(-1).tolist())
            continue
        if not isinstance(obj, (list, tuple)):
            raise TypeError("not a sequence")
        if len(obj) != sizes[dim]:
            raise ValueError(E.SEQUENCE_LENGTH.format(sizes[dim], dim, len(obj)))
        if dim == 0:
            _warn_list_of_arrays(obj)
        stack.extend((item, dim + 1) for item in reversed(obj))
    if not out:
        return np.zeros(sizes, _host_type(dtype))
    with np.errstate(over="ignore", invalid="ignore"):  # inf, as PyTorch's conversions give
        return np.asarray(out, dtype=_host_type(dtype)).reshape(sizes)


_INT_RANGES = {
    d: (int(np.iinfo(d.np).min), int(np.iinfo(d.np).max))
    for d in (D.uint8, D.int8, D.int16, D.int32, D.int64)
}


def _overflow(dtype: D.dtype) -> str:
    return f"value cannot be converted to type {dtype.name} without overflow"


def _checked_scalar(x, dtype: D.dtype):
    """One scalar converted as PyTorch's ``store_scalar`` does, with its errors."""
    if isinstance(x, Tensor):
        if x.numel() != 1:
            raise ValueError(E.SCALAR_NUMEL)
        x = x.item()
    elif isinstance(x, (np.generic, np.ndarray)):
        x = x.item()
    if not isinstance(x, (*_SCALARS, str)):
        _not_a_number(x, dtype)
    if dtype._kind in "ui":
        if isinstance(x, complex):
            x = x.real
        lo, hi = _INT_RANGES[dtype]
        if isinstance(x, float):
            if x != x or not (lo - 1 < x < hi + 1):
                raise RuntimeError(_overflow(dtype))
            return int(x)
        x = int(x)
        if not -(1 << 63) <= x < 1 << 63:  # read as a C long long first
            raise ValueError("Overflow when unpacking long long")
        if dtype is D.uint8 and -255 <= x < 0:  # c10's overflow check lets these wrap into uint8
            return x % 256
        if not lo <= x <= hi:
            raise RuntimeError(_overflow(dtype))
        return x
    if dtype is D.bool_:
        return bool(x)
    if dtype.is_complex:
        return complex(x)
    if isinstance(x, complex):
        return x.real
    return float(x)


def _values(data, dtype: D.dtype | None):
    """Host values and dtype for ``tensor(data)``."""
    if isinstance(data, Tensor):
        return np.asarray(data._data), (data._dtype if dtype is None else dtype)
    if isinstance(data, (jax.Array, np.ndarray)):
        inferred = D.from_numpy_dtype(data.dtype)
        return data, (inferred if dtype is None else dtype)
    if data is None:
        raise RuntimeError("Could not infer dtype of NoneType")
    if isinstance(data, (np.generic,) + _SCALARS):
        dtype = _scalar_type(data) if dtype is None else dtype
        with np.errstate(over="ignore", invalid="ignore"):  # inf, as PyTorch's conversion
            return np.asarray(_checked_scalar(data, dtype), _host_type(dtype)), dtype
    if isinstance(data, str):
        raise TypeError(E.INVALID_DATA_TYPE.format("str"))
    if isinstance(data, (list, tuple)):
        sizes = _sizes(data)
        dtype = _scalar_type(data) if dtype is None else dtype
        return _store(data, sizes, dtype), dtype
    if hasattr(data, "__array__"):
        arr = np.asarray(data)
        return arr, (D.from_numpy_dtype(arr.dtype) if dtype is None else dtype)
    if dtype is None:
        raise RuntimeError(INFER_DTYPE.format(type=R._type_name(data)))
    _not_a_number(data, dtype)


def _not_a_number(x, dtype: D.dtype):
    """PyTorch's error for an object stored as a scalar of ``dtype``."""
    if dtype._kind in "uib":
        raise TypeError(NOT_INTEGER.format(type=R._type_name(x)))
    raise TypeError(NOT_REAL.format(type=R._type_name(x)))


def _convert(values: np.ndarray, np_dtype, dtype: D.dtype) -> np.ndarray:
    if dtype._kind in "ui" and values.dtype.kind == "f":
        values = np.trunc(values)  # float -> int truncates toward zero, as C++ casts do
    with np.errstate(invalid="ignore", over="ignore"):
        return D.host_cast(D.host_cast(values, np_dtype), dtype.np)


NEGATIVE_STRIDES = (
    "At least one stride in the given numpy array is negative, and tensors with negative "
    "strides are not currently supported. (You can probably work around this by making a copy "
    "of your array  with array.copy().) "
)


def _numpy_strides(data) -> tuple | None:
    """``(strides in elements, writable)`` of a NumPy array, None for another object; PyTorch
    refuses negative strides."""
    if not isinstance(data, np.ndarray):
        return None
    if any(s < 0 for s in data.strides):
        raise ValueError(NEGATIVE_STRIDES)
    if not data.itemsize:
        return None
    return tuple(s // data.itemsize for s in data.strides), data.flags.writeable


NOT_WRITABLE = (
    "The given NumPy array is not writable, and PyTorch does not support non-writable tensors. "
    "This means writing to this tensor will result in undefined behavior. You may want to copy "
    "the array to protect its data or make it writable before converting it to a tensor. This "
    "type of warning will be suppressed for the rest of this program. (Triggered internally at "
    "/__w/pytorch/pytorch/torch/csrc/utils/tensor_numpy.cpp:213.)"
)


def _numpy_layout(t: Tensor, found, shares: bool, warns: bool = True) -> Tensor:
    """Lay ``t``, made from a NumPy array (``found``: ``_numpy_strides`` of it), out as
    PyTorch's tensor would be:
    one that shares the array's memory has its strides; a copy keeps them when they are
    non-overlapping and dense (``clone``'s preserve_format), else is contiguous. A read-only
    array gets PyTorch's warning (once) from the conversions that view it first (``warns``: all
    but ``tensor``)."""
    from .ops.inplace import _dense
    from .ops.shape import _set_strides

    if found is None:
        return t
    strides, writable = found
    if warns and not writable:
        E.warn_once(NOT_WRITABLE)
    # an empty array's strides (NumPy gives it zeros) are kept by any conversion
    if shares or not t._data.size or _dense(t._data.shape, strides):
        _set_strides(t, strides)
    return t


@E.data_first("tensor")
def tensor(data, *, dtype=None, device=None, requires_grad: bool = False, pin_memory=False):
    """A new leaf tensor holding a copy of ``data`` (numbers, nested lists, arrays, tensors).

    Example::

        >>> leafgrad.tensor([[1., 2.], [3., 4.]], requires_grad=True)
        tensor([[1., 2.],
                [3., 4.]], requires_grad=True)
    """
    if isinstance(data, Tensor):
        E.warn(E.COPY_CONSTRUCT_WARNING)
    return _copy_of(data, _dtype_arg(dtype, "tensor"), device, requires_grad)


def _copy_of(data, dtype, device, requires_grad: bool) -> Tensor:
    """``tensor``'s leaf, without its warning for a tensor (``new_tensor`` gives its own)."""
    if device is None and isinstance(data, Tensor):
        device = data._device
    strides = _numpy_strides(data)
    values, dtype = _values(data, dtype)
    out = _numpy_layout(_leaf(values, dtype, device, requires_grad), strides, False, False)
    if isinstance(data, Tensor):
        kernel_wrote((data,), (out, 1))  # ``copy_`` into a fresh tensor
    return out


@E.data_first("as_tensor")
def as_tensor(data, *, dtype=None, device=None) -> Tensor:
    """``data`` as a tensor, without a copy when it already is one of that dtype and device."""
    if isinstance(data, Tensor):
        return data.to(dtype=dtype, device=device)
    dtype = _dtype_arg(dtype, "as_tensor")
    strides = _numpy_strides(data)
    values, dtype = _values(data, dtype)
    shares = strides is not None and dtype.np == data.dtype and DEV.canonical(device).type == "cpu"
    return _numpy_layout(_leaf(values, dtype, device, False), strides, shares)


@E.one_argument("torch._VariableFunctionsClass.from_numpy")
def from_numpy(ndarray: np.ndarray) -> Tensor:
    """A tensor with the array's values and dtype (a copy: JAX arrays are immutable)."""
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    strides = _numpy_strides(ndarray)
    return _numpy_layout(
        _leaf(ndarray, D.from_numpy_dtype(ndarray.dtype), None, False), strides, True
    )


def _legacy_new(cls, *args, **kwargs):
    """``torch.Tensor(...)``: from a sequence, or uninitialised (zeros here) from sizes."""
    device = kwargs.pop("device", None)
    dtype = D.get_default_dtype()
    if (
        len(args) == 1
        and not isinstance(args[0], (int, np.integer))
        and not isinstance(args[0], Size)
    ):
        data = args[0]
        if isinstance(data, Tensor):
            return data
        values, _ = _values(data, dtype)
        return _leaf(values, dtype, device, False)
    shape = _size(args)
    with allocating(check_shape(shape, dtype.itemsize), device):
        return _leaf(np.zeros(shape, dtype.np), dtype, device, False)


# --- filled factories ---------------------------------------------------------------------------


def range_ends(fn: str, start, end) -> list:
    """``linspace``'s and ``logspace``'s ends as numbers: a tensor must be 0-d."""
    from .ops.shape import parsed_number  # shape.py imports this module

    ends = []
    for name, x in (("start", start), ("end", end)):
        if isinstance(x, Tensor):
            if x._data.ndim != 0:
                raise RuntimeError(
                    f"{fn} only supports 0-dimensional start and end tensors, but got {name} "
                    f"with {x._data.ndim} dimension(s)."
                )
            x = x.item()
        ends.append(parsed_number(x))
    return ends


def range_dtype(fn: str, ends, dtype) -> D.dtype:
    """The result dtype of ``linspace``/``logspace``: the default dtype, or its complex type
    where an end is complex; a given real dtype refuses complex ends (PyTorch's message)."""
    complex_ends = any(isinstance(v, (complex, np.complexfloating)) for v in ends)
    inferred = D.default_complex_dtype() if complex_ends else D.get_default_dtype()
    if dtype is None:
        return inferred
    if complex_ends and not dtype.is_complex:
        raise RuntimeError(
            f"torch.{fn}(): inferred dtype {E.c_type_name(inferred)} can't be safely cast to "
            f"passed dtype {dtype._legacy}"
        )
    return dtype


def _dtype_or_default(dtype, fn: str) -> D.dtype:
    dtype = _dtype_arg(dtype, fn)
    return D.get_default_dtype() if dtype is None else dtype


def _size_by_keyword(factory):
    """``factory(*size, ...)`` that also takes its size as the keyword ``size``, a list only, as
    PyTorch's parser names the varargs (``torch.zeros(size=(2, 3))``)."""
    name = factory.__name__

    @functools.wraps(factory)
    def call(*size, **kwargs):
        if "size" in kwargs:
            given = kwargs.pop("size")
            if size:
                raise TypeError(f"{name}() got multiple values for argument 'size'")
            from ._arg_check import _check_listed

            _check_listed(name, "size", given)
            size = (given,)
        return factory(*size, **kwargs)

    return call


def _filled(fn: str, size, value, dtype, device, requires_grad) -> Tensor:
    """``zeros``/``ones``/``empty``: arguments checked in PyTorch's order, sizes before NumPy."""
    if not size:
        raise TypeError(f'{fn}() missing 1 required positional arguments: "size"')
    shape = _size(size, fn)
    dtype = _dtype_or_default(dtype, fn)
    nbytes = check_shape(shape, dtype.itemsize, fn)
    if _on_meta(device):  # Note [Meta tensors]: nothing is allocated
        return _leaf(_no_values(shape, dtype), dtype, device, requires_grad)
    with allocating(nbytes, device):
        make = np.zeros if value == 0 else np.ones
        return _leaf(make(shape, dtype.np), dtype, device, requires_grad)


def _on_meta(device) -> bool:
    return device is not None and DEV.canonical(device) is DEV.META


def _no_values(shape, dtype) -> np.ndarray:
    """An array of ``shape`` that allocates nothing, for a meta tensor's factory."""
    return np.broadcast_to(np.zeros((), dtype.np), shape)


@_size_by_keyword
def zeros(
    *size, out=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False
) -> Tensor:
    """A tensor of zeros of the given shape."""
    return _filled("zeros", size, 0, dtype, device, requires_grad)


def written_zeros(size, dtype, device) -> Tensor:
    """``at::zeros`` called inside an ATen function: ``empty`` and then ``zero_()``, which
    counts as a write (version 1), where ``torch.zeros`` from Python gives version 0."""
    out = zeros(size, dtype=dtype, device=device)
    out._version_counter.value = 1
    return out


@_size_by_keyword
def ones(
    *size, out=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False
) -> Tensor:
    """A tensor of ones of the given shape."""
    return _filled("ones", size, 1, dtype, device, requires_grad)


@_size_by_keyword
def empty(
    *size,
    out=None,
    dtype=None,
    layout=None,
    device=None,
    requires_grad=False,
    pin_memory=False,
    memory_format=None,
) -> Tensor:
    """An 'uninitialised' tensor: zeros here (JAX has no uninitialised memory), laid out as
    ``memory_format`` asks."""
    from ._tensor import _check_memory_format, _format_strides, preserve_format

    fmt = _check_memory_format("empty", memory_format)
    out = _filled("empty", size, 0, dtype, device, requires_grad)
    if fmt is preserve_format:
        raise RuntimeError("unsupported memory format Preserve")
    strides = _format_strides(tuple(out.shape), fmt)
    if strides is None:
        return out
    from .ops.shape import _set_strides

    return _set_strides(out, strides)


def _is_number(x) -> bool:
    """What PyTorch's parser takes as a ``Number``: a Python or NumPy scalar, a 0-d tensor."""
    if isinstance(x, Tensor):
        return x._data.ndim == 0
    return isinstance(x, (numbers.Number, np.generic)) and not isinstance(x, (str, bytes))


def full(
    size,
    fill_value,
    *,
    out=None,
    dtype=None,
    layout=None,
    device=None,
    requires_grad=False,
    pin_memory=False,
) -> Tensor:
    """A tensor filled with ``fill_value``; the dtype is inferred from it when not given."""
    if not isinstance(size, (tuple, list, Size)):  # no ``*size`` here: a bare int is an error
        raise TypeError(SIZE_NOT_TUPLE.format(fn="full", pos=1, type=_type_name(size)))
    shape = _size((size,), "full")
    if not _is_number(fill_value):
        raise TypeError(FILL_VALUE_TYPE.format(type=_type_name(fill_value)))
    from .ops.shape import checked_number, parsed_number  # shape.py imports this module

    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    fill_value = parsed_number(fill_value)
    dtype = _dtype_arg(dtype, "full")
    dtype = _scalar_type(fill_value) if dtype is None else dtype
    # c10's checked conversion of the Scalar: PyTorch's overflow error, a real part for a real type
    fill_value = checked_number(fill_value, dtype)
    if isinstance(fill_value, complex) and not dtype.is_complex:
        fill_value = fill_value.real
    nbytes = check_shape(shape, dtype.itemsize, "full")
    if _on_meta(device):
        return _leaf(_no_values(shape, dtype), dtype, device, requires_grad)
    with allocating(nbytes, device):
        values = np.full(shape, fill_value)
        return _leaf(_convert(values, dtype.np, dtype), dtype, device, requires_grad)


def _like(input: Tensor, dtype, device, fn: str):
    dtype = _dtype_arg(dtype, fn)
    return (
        input._dtype if dtype is None else dtype,
        input._device if device is None else device,
    )


def _like_strides(input: Tensor, memory_format, fn: str) -> tuple:
    """The strides of a ``*_like`` result (``empty_like``): ``preserve_format`` (the default)
    keeps a non-overlapping and dense input's strides, and gives any other input dense strides
    in its dims' stride order (``infer_dense_strides``, TensorIterator's sort); the other
    formats lay the result out as they say."""
    from ._tensor import _check_memory_format, _format_strides, preserve_format
    from .ops.shape import _contiguous_strides, _strides

    fmt = _check_memory_format(fn, memory_format)
    shape = tuple(input._data.shape)
    if fmt is None or fmt is preserve_format:
        return preserved_strides(shape, tuple(_strides(input)))
    return _format_strides(shape, fmt) or _contiguous_strides(shape)


def preserved_strides(shape: tuple, strides: tuple) -> tuple:
    """``empty_like``'s strides (preserve_format) for a tensor laid out as ``strides``."""
    from .ops.inplace import _dense

    if _dense(shape, strides) or 0 in shape:  # an empty tensor counts as dense
        return tuple(strides)
    out, step = [0] * len(shape), 1
    for d in reversed(R.iteration_order(shape, strides)):
        out[d] = step
        step *= max(shape[d], 1)
    return tuple(out)


def _with_strides(out: Tensor, strides) -> Tensor:
    from .ops.shape import _set_strides

    return _set_strides(out, strides)


def _keep_layout(input: Tensor, out: Tensor, requested) -> Tensor:
    """A ``*_like`` result is laid out like a sharded input (leafgrad.distributed) unless a
    device was asked for."""
    data = input._data
    if isinstance(data, jax.core.Tracer):
        from . import func

        return func.batch_like(out, data)
    if requested is not None:
        return out
    sharding = getattr(data, "sharding", None)
    if isinstance(sharding, jax.sharding.NamedSharding):
        out._data = jax.device_put(out._data, sharding)
    return out


def zeros_like(
    input: Tensor,
    *,
    dtype=None,
    layout=None,
    device=None,
    pin_memory=False,
    requires_grad=False,
    memory_format=None,
) -> Tensor:
    requested = device
    dtype, device = _like(input, dtype, device, "zeros_like")
    strides = _like_strides(input, memory_format, "zeros_like")
    return _keep_layout(
        input,
        _with_strides(
            zeros(input.shape, dtype=dtype, device=device, requires_grad=requires_grad), strides
        ),
        requested,
    )


def ones_like(
    input: Tensor,
    *,
    dtype=None,
    layout=None,
    device=None,
    pin_memory=False,
    requires_grad=False,
    memory_format=None,
) -> Tensor:
    requested = device
    dtype, device = _like(input, dtype, device, "ones_like")
    strides = _like_strides(input, memory_format, "ones_like")
    return _keep_layout(
        input,
        _with_strides(
            ones(input.shape, dtype=dtype, device=device, requires_grad=requires_grad), strides
        ),
        requested,
    )


def empty_like(
    input: Tensor,
    *,
    dtype=None,
    layout=None,
    device=None,
    pin_memory=False,
    requires_grad=False,
    memory_format=None,
) -> Tensor:
    requested = device
    dtype, device = _like(input, dtype, device, "empty_like")
    strides = _like_strides(input, memory_format, "empty_like")
    return _keep_layout(
        input,
        _with_strides(
            zeros(input.shape, dtype=dtype, device=device, requires_grad=requires_grad), strides
        ),
        requested,
    )


def full_like(
    input: Tensor,
    fill_value,
    *,
    dtype=None,
    layout=None,
    device=None,
    requires_grad=False,
    memory_format=None,
) -> Tensor:
    requested = device
    dtype, device = _like(input, dtype, device, "full_like")
    strides = _like_strides(input, memory_format, "full_like")
    return _keep_layout(
        input,
        _with_strides(
            full(
                tuple(input.shape),
                fill_value,
                dtype=dtype,
                device=device,
                requires_grad=requires_grad,
            ),
            strides,
        ),
        requested,
    )


def arange(
    start=0,
    end=None,
    step=1,
    *,
    out=None,
    dtype=None,
    layout=None,
    device=None,
    requires_grad=False,
    pin_memory=False,
) -> Tensor:
    """Values from ``start`` to ``end`` (exclusive) by ``step``, computed in double as PyTorch."""
    if end is None:
        start, end = 0, start
    start, end, step = (x.item() if isinstance(x, Tensor) else x for x in (start, end, step))
    if dtype is None:
        integral = all(isinstance(x, (int, np.integer)) for x in (start, end, step))
        dtype = D.int64 if integral else D.get_default_dtype()
    dtype = D.to_dtype(dtype)
    if dtype._kind in "bc":  # the kernel's dtype dispatch comes before its checks
        raise NotImplementedError(E.KERNEL_DTYPE.format("arange_cpu", dtype._legacy))
    if step == 0:
        raise RuntimeError("step must be nonzero")
    size = math.ceil((end - start) / step)
    if (step > 0 and end < start) or (step < 0 and end > start):
        raise RuntimeError(ARANGE_SIGN)
    if dtype._kind in "biu":
        # an integral dtype's kernel reads the bounds and the step truncated to int64 (its
        # accumulate type), and int64's size from them too: arange(3.5, dtype=long) is [0, 1, 2]
        # (a step truncated to 0 repeats the start, where int64's size is refused)
        truncated = [int(x) if math.isfinite(x) else x for x in (start, end, step)]
        if dtype == D.int64:
            if truncated[2] == 0:
                raise ValueError("step must be nonzero")
            size = math.ceil((truncated[1] - truncated[0]) / truncated[2])
        start, end, step = truncated
    size = max(size, 0)
    with allocating(check_shape((size,), dtype.itemsize), device):
        if dtype._kind in "biu":
            values = start + step * np.arange(size, dtype=np.int64)
        else:
            values = _arange_values(start, step, size, dtype)
        return _leaf(values, dtype, device, requires_grad)  # cast there, as PyTorch's (to inf)


def _arange_values(start, step, size: int, dtype: D.dtype) -> np.ndarray:
    """Note [Range kernels]: PyTorch's CPU ``arange`` kernel computes in the accumulate type
    (double; float for the half types) ``start + step * i`` fused into one multiply-add, but its
    vectorized loop (whole pairs of 256-bit vectors from the start of each thread's range) makes
    each vector from its first element, rounded to the result's type, as ``base + j * step``
    (fused, but for the half types); the elements after a range's last pair take the scalar
    formula. Ranges: ``at::parallel_for``'s split of the elements over the threads PyTorch
    would use, in grains of 32768 (measured)."""
    half = dtype.itemsize == 2
    acc, fma = (np.float32, R._fma32) if half else (np.float64, R._fma64)
    lanes = 32 // dtype.itemsize
    idx = np.arange(size)
    # each element's position within its thread's range
    from .ops.reduce import get_num_threads  # the ops import this module

    tasks = min(get_num_threads(), -(-size // _GRAIN_SIZE)) if size > _GRAIN_SIZE else 1
    chunk = -(-size // tasks) if size else 1
    begin = idx - idx % chunk
    length = np.minimum(begin + chunk, size) - begin
    offset = idx - begin
    with np.errstate(over="ignore", invalid="ignore"):
        start, step = acc(start), acc(step)
        values = D.host_cast(fma(step, idx.astype(acc), start), dtype.np)
        vector = offset < length // (2 * lanes) * (2 * lanes)
        if vector.any():
            lane = offset[vector] % lanes
            base = (idx[vector] - lane).astype(acc)
            widened = D.host_cast(fma(step, base, start), dtype.np).astype(acc)
            if half:  # the half types' vectors add a rounded product (measured)
                lanes_values = widened + lane.astype(acc) * step
            else:
                lanes_values = fma(lane.astype(acc), step, widened)
            values[vector] = D.host_cast(lanes_values, dtype.np)
    return values


_GRAIN_SIZE = 32768  # ATen's ``internal::GRAIN_SIZE``


def linspace(
    start,
    end,
    steps: int,
    *,
    out=None,
    dtype=None,
    layout=None,
    device=None,
    pin_memory=False,
    requires_grad=False,
) -> Tensor:
    """``steps`` evenly spaced values; both halves computed as PyTorch's CPU kernel does."""
    start, end = range_ends("linspace", start, end)
    dtype = range_dtype("linspace", (start, end), _dtype_arg(dtype, "linspace"))
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    if dtype is D.bool_:
        raise NotImplementedError(E.KERNEL_DTYPE.format("linspace_cpu", "Bool"))
    check_shape((steps,), dtype.itemsize)
    compute = np.float64 if dtype._kind in "biu" else dtype.np.type
    from .ops.shape import checked_number

    if steps == 1:
        if dtype._kind in "biu":  # the kernel's fill converts an integer result checked
            checked_number(start, dtype)
        with np.errstate(over="ignore", invalid="ignore"):
            values = _scalars_as(compute, start)
    else:
        if steps > 1:  # the kernel reads both ends as its scalar type, checked
            checked_number(start, dtype)
            checked_number(end, dtype)
        with np.errstate(over="ignore", invalid="ignore"):
            if dtype._kind in "iu":  # the ends as the integer type (truncated), then double
                ends = (x.real if isinstance(x, complex) else x for x in (start, end))
                start, end = (np.asarray(math.trunc(x)).astype(dtype.np) for x in ends)
            s, e = _scalars_as(compute, start, end)
        step = (e - s) / compute(steps - 1) if steps > 1 else compute(0)
        idx = np.arange(steps)
        half = steps // 2
        fma = {np.float64: R._fma64, np.float32: R._fma32}.get(compute)
        with np.errstate(all="ignore"):
            if fma is not None:  # Note [Range kernels]: GCC fuses the products and sums
                values = np.where(
                    idx < half,
                    fma(step, idx.astype(compute), s),
                    fma(-step, (steps - idx - 1).astype(compute), e),
                ).astype(compute)
            else:  # the half types' operators round each step; complex products
                values = np.where(
                    idx < half,
                    s + step * idx.astype(compute),
                    e - step * (steps - idx - 1).astype(compute),
                ).astype(compute)
    return _leaf(values, dtype, device, requires_grad)


def _scalars_as(compute, *values) -> np.ndarray:
    """Numbers as a Scalar's ``to<T>()`` converts them (a half type's through float)."""
    half = np.dtype(compute) in D.HALF_NP
    return D.host_cast(np.asarray(values, np.float64 if half else compute), compute)


def eye(
    n: int,
    m: int | None = None,
    *,
    out=None,
    dtype=None,
    layout=None,
    device=None,
    requires_grad=False,
    pin_memory=False,
) -> Tensor:
    """An identity matrix of ``n`` rows (and ``m`` columns)."""
    dtype = _dtype_or_default(dtype, "eye")
    if n < 0:
        raise RuntimeError(f"n must be greater or equal to 0, got {n}")
    return _leaf(np.eye(n, n if m is None else m, dtype=dtype.np), dtype, device, requires_grad)


# --- random -------------------------------------------------------------------------------------

_device_generators: dict = {}


def generator_for(device: DEV.device, generator) -> R.Generator:
    """The generator that draws for ``device``: the given one, or the device's default."""
    if R.DRAW_CHECK[0] is not None:  # Note [Randomness in vmap]: before any value is read
        R.DRAW_CHECK[0]()
    if generator is not None:
        return generator
    if device.type in ("cpu", "meta"):  # a meta tensor's draws read no values (or raise)
        return R.default_generator
    gen = _device_generators.get(device)
    if gen is None:
        gen = _device_generators[device] = R.Generator(device=str(device))
        gen.manual_seed(R.default_generator.initial_seed())
    return gen


def manual_seed(seed: int) -> R.Generator:
    """Seed the CPU generator (and every device's generator); returns the CPU generator."""
    seed = int(seed)  # as torch.manual_seed: "12" and 1.5 are taken, "a" raises int()'s error
    R.default_generator.manual_seed(seed)
    for gen in _device_generators.values():
        gen.manual_seed(seed)
    return R.default_generator


def _random_like(input: Tensor, fn: str, memory_format, draw, dtype, device, requires_grad):
    """``empty_like(input)`` then a random fill: the result keeps ``input``'s layout
    (``_like_strides``) and ``draw(shape, np_dtype, contiguous)`` fills it in memory order, as
    PyTorch's ``rand_like`` / ``randn_like`` / ``randint_like``."""
    from .ops.shape import _is_contiguous

    requested = device
    dtype, device = _like(input, dtype, device, fn)
    strides = _like_strides(input, memory_format, fn)
    shape = tuple(input._data.shape)
    nbytes = check_shape(shape, dtype.itemsize)
    contiguous = _is_contiguous(shape, strides)
    with allocating(nbytes, device):
        # Note [Randomness in vmap]: each sample's values, in the batch's physical layout
        order = R.iteration_order(shape, strides)
        values = R.sampled(lambda s: draw(s, dtype.np, contiguous), shape, like=input, order=order)
        if values is not None:
            return _leaf(values, dtype, device, requires_grad)
        values = R.fill_in_order(lambda s: draw(s, dtype.np, contiguous), shape, order)
        out = _with_strides(_leaf(values, dtype, device, requires_grad), strides)
    return _keep_layout(input, out, requested)


def _random_factory(fn: str, kind: str, size, generator, dtype, device, requires_grad) -> Tensor:
    shape = _size(size, fn)
    dtype = _dtype_or_default(dtype, fn)
    device = DEV.canonical(device)
    nbytes = check_shape(shape, dtype.itemsize)
    if device is DEV.META:  # Note [Meta tensors]: nothing is drawn
        return _leaf(_no_values(shape, dtype), dtype, device, requires_grad)
    gen = generator_for(device, generator)
    with allocating(nbytes, device):
        values = R.sampled(lambda s: getattr(R, kind)(gen, s, dtype.np), shape)
        if values is None:
            values = getattr(R, kind)(gen, shape, dtype.np)
        return _leaf(values, dtype, device, requires_grad)


@_size_by_keyword
def rand(
    *size,
    generator=None,
    out=None,
    dtype=None,
    layout=None,
    device=None,
    requires_grad=False,
    pin_memory=False,
) -> Tensor:
    """Uniform samples in [0, 1): on CPU the same numbers as PyTorch after ``manual_seed``."""
    return _random_factory("rand", "uniform", size, generator, dtype, device, requires_grad)


@_size_by_keyword
def randn(
    *size,
    generator=None,
    out=None,
    dtype=None,
    layout=None,
    device=None,
    requires_grad=False,
    pin_memory=False,
) -> Tensor:
    """Standard normal samples: on CPU the same numbers as PyTorch after ``manual_seed``."""
    return _random_factory("randn", "normal", size, generator, dtype, device, requires_grad)


def randint(
    low=None,
    high=None,
    size=None,
    *,
    generator=None,
    out=None,
    dtype=None,
    layout=None,
    device=None,
    requires_grad=False,
    pin_memory=False,
) -> Tensor:
    """Integers in [low, high): ``randint(high, size)`` or ``randint(low, high, size)``."""
    pos = 3
    if low is None and high is not None and size is not None:  # randint(high=.., size=..)
        low = 0
    if size is None:
        if high is None:
            raise TypeError(
                "randint() received an invalid combination of arguments - got "
                f"({type(low).__name__}, {type(high).__name__})"
            )
        if not isinstance(high, (tuple, list, Size)):  # randint(high, size) with a bare size
            raise TypeError(SIZE_NOT_TUPLE.format(fn="randint", pos=2, type=_type_name(high)))
        low, high, size, pos = 0, low, high, 2
    elif high is None:
        low, high = 0, low
    shape = _size((tuple(size),), "randint", pos)
    dtype = _dtype_arg(dtype, "randint") or D.int64
    device = DEV.canonical(device)
    nbytes = check_shape(shape, dtype.itemsize)
    gen = generator_for(device, generator)
    with allocating(nbytes, device):
        values = R.sampled(lambda s: R.randint(gen, int(low), int(high), s, dtype.np), shape)
        if values is None:
            values = R.randint(gen, int(low), int(high), shape, dtype.np)
        return _leaf(values, dtype, device, requires_grad)


def randperm(
    n: int,
    *,
    generator=None,
    out=None,
    dtype=None,
    layout=None,
    device=None,
    requires_grad=False,
    pin_memory=False,
) -> Tensor:
    """A random permutation of ``0 .. n-1``."""
    dtype = _dtype_arg(dtype, "randperm") or D.int64
    device = DEV.canonical(device)
    if int(n) >= 0:
        check_shape((int(n),), dtype.itemsize)
    gen = generator_for(device, generator)

    def draw(s):  # under vmap(randomness="different") one permutation per sample, in turn
        count = math.prod(s[:-1])
        return np.stack([R.randperm(gen, int(n), dtype.np) for _ in range(count)]).reshape(s)

    values = R.sampled(draw, (int(n),))
    if values is None:
        values = R.randperm(gen, int(n), dtype.np)
    return _leaf(values, dtype, device, requires_grad)


def rand_like(
    input: Tensor,
    *,
    dtype=None,
    layout=None,
    device=None,
    pin_memory=False,
    requires_grad=False,
    memory_format=None,
    generator=None,
) -> Tensor:
    """``empty_like(input).uniform_()``: ``input``'s layout, filled in memory order."""
    gen = generator_for(input._device if device is None else DEV.canonical(device), generator)
    return _random_like(
        input,
        "rand_like",
        memory_format,
        lambda s, d, _: R.uniform(gen, s, d),
        dtype,
        device,
        requires_grad,
    )


def randn_like(
    input: Tensor,
    *,
    dtype=None,
    layout=None,
    device=None,
    pin_memory=False,
    requires_grad=False,
    memory_format=None,
    generator=None,
) -> Tensor:
    """``empty_like(input).normal_()``: ``input``'s layout, filled in memory order (a result
    that is not contiguous takes ``normal_``'s element-by-element path)."""
    gen = generator_for(input._device if device is None else DEV.canonical(device), generator)
    return _random_like(
        input,
        "randn_like",
        memory_format,
        lambda s, d, contiguous: R.normal(gen, s, d, 0.0, 1.0, contiguous),
        dtype,
        device,
        requires_grad,
    )


def randint_like(
    input: Tensor,
    low=0,
    high=None,
    *,
    dtype=None,
    layout=None,
    device=None,
    pin_memory=False,
    requires_grad=False,
    memory_format=None,
    generator=None,
) -> Tensor:
    """``empty_like(input).random_(low, high)``: ``input``'s layout, filled in memory order."""
    if high is None:
        low, high = 0, low
    gen = generator_for(input._device if device is None else DEV.canonical(device), generator)
    return _random_like(
        input,
        "randint_like",
        memory_format,
        lambda s, d, _: R.randint(gen, int(low), int(high), s, d),
        dtype,
        device,
        requires_grad,
    )


def _multinomial(input, num_samples, replacement, generator, first: int) -> Tensor:
    """``multinomial``'s argument checks, then the samples. ``first``: the position PyTorch
    gives ``num_samples`` (2 for the function, 1 for the method); ``replacement`` is
    ``(value, positional)``: PyTorch names a position only for a positional argument."""
    if not isinstance(input, Tensor):
        raise TypeError(
            f"multinomial(): argument 'input' (position 1) must be Tensor, not {_type_name(input)}"
        )
    if not _is_int(num_samples) or isinstance(num_samples, Tensor):
        raise TypeError(
            f"multinomial(): argument 'num_samples' (position {first}) must be int, not "
            f"{_type_name(num_samples)}"
        )
    replacement, positional = replacement
    if not isinstance(replacement, bool):
        where = f" (position {first + 1})" if positional else ""
        raise TypeError(
            f"multinomial(): argument 'replacement'{where} must be bool, not "
            f"{_type_name(replacement)}"
        )
    if generator is not None and not isinstance(generator, R.Generator):
        raise TypeError(
            "multinomial(): argument 'generator' must be torch.Generator, not "
            f"{_type_name(generator)}"
        )
    if R.DRAW_CHECK[0] is not None:  # Note [Randomness in vmap]: each sample's draws
        gen = generator_for(input._device, generator)

        def draw(s, probs):
            rows = probs.reshape(-1, probs.shape[-1])
            order = R.iteration_order(rows.shape, (rows.shape[1], 1))
            drawn = R.multinomial(gen, rows, int(num_samples), replacement, order)
            return np.asarray(drawn).reshape(s)

        out_shape = (*input.shape[:-1], int(num_samples))
        values = R.sampled(draw, out_shape, (input,), lambda t: known_values(t._data)[0])
        if values is not None:
            return _leaf(values, D.int64, input._device, False)
    probs, levels = known_values(input._data)  # Note [Known values]: inside grad, jvp
    if probs is None or levels:
        if R.DRAW_CHECK[0] is not None:  # vmap's randomness error comes first
            R.DRAW_CHECK[0]()
        raise RuntimeError(MULTINOMIAL_TRACED)
    gen = generator_for(input._device, generator)
    from .ops.shape import _strides

    order = R.iteration_order(tuple(input.shape), _strides(input))
    values = R.multinomial(gen, probs, int(num_samples), replacement, order)
    out = _leaf(values, D.int64, input._device, False)
    kernel_wrote((input,), (out, 1 if replacement else 2))
    return out


def _replacement(given: tuple, kw: dict, first: int) -> tuple:
    """``(replacement, positional)`` from ``*given`` and ``**kw``, with Python's errors."""
    if len(given) > 1:
        raise TypeError(
            f"multinomial() takes from {first} to {first + 1} positional arguments but "
            f"{first + len(given)} were given"
        )
    value = kw.pop("replacement", False)
    if kw:
        raise TypeError(f"multinomial() got an unexpected keyword argument '{next(iter(kw))}'")
    return (given[0], True) if given else (value, False)


@tensor_op("multinomial", method=False)
def multinomial(input: Tensor, num_samples: int, *replacement, generator=None, **kw) -> Tensor:
    """Category indices drawn from the rows of ``input`` (probabilities, not normalised):
    ``multinomial(input, num_samples, replacement=False, *, generator=None)``. On CPU the same
    numbers as PyTorch after ``manual_seed``.

    Example::

        >>> leafgrad.manual_seed(0)
        >>> leafgrad.multinomial(leafgrad.tensor([0.1, 0.9]), 4, replacement=True)
        tensor([1, 1, 1, 1])
    """
    kw.pop("out", None)
    rep = _replacement(replacement, kw, 2)
    return _multinomial(input, num_samples, rep, generator, 2)


@tensor_op("multinomial", function=False)
def _multinomial_method(self, num_samples: int, *replacement, generator=None, **kw) -> Tensor:
    """``Tensor.multinomial(num_samples, replacement=False, *, generator=None)``."""
    return _multinomial(self, num_samples, _replacement(replacement, kw, 1), generator, 1)


# --- predicates ---------------------------------------------------------------------------------


def is_tensor(obj) -> bool:
    """Whether ``obj`` is a leafgrad Tensor."""
    return isinstance(obj, Tensor)


def is_floating_point(input: Tensor) -> bool:
    return input._dtype.is_floating_point


def is_complex(input: Tensor) -> bool:
    return input._dtype.is_complex


def numel(input: Tensor) -> int:
    return input.numel()
