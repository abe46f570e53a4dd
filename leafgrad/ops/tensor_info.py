"""The torch-level API around tensors: type information, global settings, introspection of
tensors and storages, the conjugation API and a few factories.

Most of this module answers questions about tensors without computing on them: ``finfo`` and
``iinfo``, ``typename``, ``broadcast_shapes``, ``storage_offset`` and ``data_ptr``. The settings
(threads, deterministic algorithms, float32 matmul precision, the default device) are recorded as
PyTorch records them; what they can and cannot change in JAX is said where each is defined.

Note [Storage offsets and data pointers]: leafgrad arrays have no memory addresses. A tensor's
``storage_offset()`` is computed from its view chain (Note [Storage] in ``_storage.py``): the
sizes, strides and offset PyTorch's view ops give, replayed from the storage root (whose strides
are those of a live tensor laid out as the root, else contiguous). ``data_ptr()`` is a made-up
address: each storage gets one base address (aligned, unique while the storage lives) the first
time it is asked for, and a view's pointer is ``base + storage_offset() * element_size()``, so
views at offset 0 share their base's pointer and pointer arithmetic between views of one storage
is PyTorch's. As in PyTorch, a tensor without elements has pointer 0.
"""

from __future__ import annotations

import itertools
import math
import operator
import os
import threading
from collections.abc import Sequence

import jax
import jax.numpy as jnp
import numpy as np

from .. import _device as DEV
from .. import _dtype as D
from .. import _errors as E
from .. import _factories as F
from .. import _storage as S
from .._tensor import Size, Tensor
from .api import FUNCTIONS, register_ops, tensor_op
from .dispatch import dispatch
from .inplace import inplace
from .shape import (
    MT_DIM,
    _compute_stride,
    _conj,
    _contiguous_strides,
    _expand_strides,
    _is_conj,
    _set_strides,
    _strides,
    checked_number,
    parsed_number,
    transpose,
)
from .table import OPS, OpDef, same

__all__ = ["finfo", "iinfo"]

# --- PyTorch's messages --------------------------------------------------------------------------
_MISSING = '{}() missing 1 required positional arguments: "{}"'
FINFO_KIND = (
    "torch.finfo() requires a floating point input type. Use torch.iinfo to handle 'torch.finfo'"
)
IINFO_KIND = "torch.iinfo() requires an integer input type. Use torch.finfo to handle 'torch.iinfo'"
IINFO_BOOL = "torch.bool is not supported by torch.iinfo"
_THREADS_INT = "{} expects an int, but got {}"
_THREADS_POSITIVE = "{} expects a positive integer"
INTEROP_TWICE = (
    "Error: cannot set number of interop threads after parallel work has started or "
    "set_num_interop_threads called"
)
MATMUL_PRECISION_IGNORED = (
    "{} is not one of 'highest', 'high', or 'medium'; the current"
    "setFloat32MatmulPrecision call has no effect. (Triggered internally at "
    "/__w/pytorch/pytorch/aten/src/ATen/Context.cpp:458.)"
)
ADJOINT_0D = (
    "adjoint() is deprecated on 0-D tensors. Consider using x.conj(). (Triggered internally at "
    "/__w/pytorch/pytorch/aten/src/ATen/native/TensorShape.cpp:4390.)"
)
RANGE_DEPRECATED = (
    "torch.range is deprecated and will be removed in a future release because its behavior is "
    "inconsistent with Python's range builtin. Instead, use torch.arange, which produces values "
    "in [start, end)."
)
ASARRAY_REQUIRES_GRAD = (
    "torch.asarray: unspecified requires_grad now defaults to obj.requires_grad instead of False. "
    "Pass requires_grad=False explicitly to get the old behavior and silence this warning. "
    "(Triggered internally at /__w/pytorch/pytorch/torch/csrc/utils/tensor_new.cpp:1737.)"
)
NOT_IMPLEMENTED_FOR = "\"{}\" not implemented for '{}'"
DEFAULT_DEVICE = (
    "leafgrad: set_default_device supports only 'cpu'; leafgrad's factories place tensors on the "
    "cpu unless given device=... (got {!r})"
)


_need_tensor = E.need_tensor


def _one_tensor(fn: str, args: tuple, kwargs: dict) -> Tensor:
    """The single ``input`` of a function ``fn(Tensor input)``, parsed as PyTorch's parser."""
    if len(args) + len(kwargs) == 0:
        raise TypeError(_MISSING.format(fn, "input"))
    x = args[0] if args else kwargs.get("input")
    if len(args) + len(kwargs) != 1 or (kwargs and "input" not in kwargs):
        params = E._parameters("(Tensor input)")
        message = E._signature_error(fn, params, args, kwargs)
        raise TypeError(message or E.invalid_arguments(fn, ("(Tensor input)",), args, kwargs))
    _need_tensor(x, fn)
    return x


# --- finfo and iinfo ------------------------------------------------------------------------------


def _info_dtype(cls_name: str, args: tuple, kwargs: dict, default):
    """The dtype argument of ``finfo``/``iinfo`` as PyTorch's parser reads it."""
    if not args and list(kwargs) == ["type"]:
        args, kwargs = (kwargs["type"],), {}
    if kwargs or not args:
        if not args and not kwargs and default is not None:
            return default
        raise TypeError(_MISSING.format(cls_name, "type"))
    if len(args) > 1:
        sigs = ("(torch.dtype type)", "()") if default is not None else ("(torch.dtype type)",)
        raise TypeError(E.invalid_arguments(cls_name, sigs, args, kwargs))
    (d,) = args
    if D.python_number_type(d):
        return D.to_dtype(d)
    if not isinstance(d, D.dtype):
        raise TypeError(E.MUST_BE.format(cls_name, "type", 1, "torch.dtype", E.py_typename(d)))
    return d


class _Info:
    """Read-only attributes, compared by dtype (torch's finfo/iinfo are not hashable)."""

    __slots__ = ()

    def __hash__(self):
        raise TypeError(f"unhashable type: 'torch.{type(self).__name__}'")

    def __setattr__(self, name, value):
        if name in self.__slots__:
            raise AttributeError(
                f"attribute '{name}' of 'torch.{type(self).__name__}' objects is not writable"
            )
        raise AttributeError(f"'torch.{type(self).__name__}' object has no attribute '{name}'")

    def __eq__(self, other):
        if type(other) is not type(self):
            return NotImplemented
        return self.dtype == other.dtype

    def __ne__(self, other):
        result = self.__eq__(other)
        return result if result is NotImplemented else not result

    def _set(self, **values) -> None:
        for k, v in values.items():
            object.__setattr__(self, k, v)


def _g(x) -> str:
    return format(float(x), "g")


class finfo(_Info):
    """``torch.finfo``: machine limits of a floating point (or complex: its real part) type.

    ``finfo()`` describes the default dtype. ``resolution`` is ``10 ** -digits10``, as PyTorch's.
    """

    __slots__ = ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype")

    def __init__(self, *args, **kwargs) -> None:
        d = _info_dtype("finfo", args, kwargs, D.get_default_dtype())
        d = d.to_real()
        if not d.is_floating_point:
            raise TypeError(FINFO_KIND)
        info = jnp.finfo(d.np)
        self._set(
            bits=int(info.bits),
            eps=float(info.eps),
            max=float(info.max),
            min=float(info.min),
            tiny=float(info.smallest_normal),
            smallest_normal=float(info.smallest_normal),
            resolution=10.0 ** -int(info.precision),
            dtype=d.name,
        )

    def __repr__(self) -> str:
        return (
            f"finfo(resolution={_g(self.resolution)}, min={_g(self.min)}, max={_g(self.max)}, "
            f"eps={_g(self.eps)}, smallest_normal={_g(self.smallest_normal)}, "
            f"tiny={_g(self.tiny)}, dtype={self.dtype})"
        )

    __str__ = __repr__


class iinfo(_Info):
    """``torch.iinfo``: machine limits of an integer type (not bool)."""

    __slots__ = ("bits", "max", "min", "dtype")

    def __init__(self, *args, **kwargs) -> None:
        d = _info_dtype("iinfo", args, kwargs, None)
        if d is D.bool_:
            raise TypeError(IINFO_BOOL)
        if d._kind not in "ui":
            raise TypeError(IINFO_KIND)
        info = np.iinfo(d.np)
        self._set(bits=int(info.bits), max=int(info.max), min=int(info.min), dtype=d.name)

    def __repr__(self) -> str:
        return f"iinfo(min={_g(self.min)}, max={_g(self.max)}, dtype={self.dtype})"

    __str__ = __repr__


for _cls in (finfo, iinfo):
    _cls.__module__ = "leafgrad"
    FUNCTIONS[_cls.__name__] = _cls


# --- global settings ------------------------------------------------------------------------------

# Note [Recorded settings]: JAX starts its thread pools when its backend starts and cannot resize
# them later, and XLA's CPU kernels are deterministic, so the thread counts and the deterministic
# flags are recorded and read back as PyTorch's are, and change nothing in JAX. To limit XLA's
# threads, set ``XLA_FLAGS=--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=N``
# before leafgrad is imported; for deterministic GPU reductions and scatters,
# ``XLA_FLAGS=--xla_gpu_deterministic_ops=true``. leafgrad's matrix products always run at
# JAX's highest precision (full float32), which PyTorch's ``"highest"`` means, whatever
# ``set_float32_matmul_precision`` was given.

_settings_lock = threading.Lock()


def _default_threads() -> int:
    value = os.environ.get("OMP_NUM_THREADS", "")
    if value.isdigit() and int(value) > 0:
        return int(value)
    try:
        return max(len(os.sched_getaffinity(0)), 1)
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


_SETTINGS = {
    "num_threads": _default_threads(),
    "num_interop_threads": None,  # None: not set yet (PyTorch allows one call)
    "deterministic": False,
    "deterministic_warn_only": False,
    "matmul_precision": "highest",
}


def _thread_count(fn: str, args: tuple) -> int:
    if len(args) != 1:
        raise TypeError(f"torch.{fn}() takes exactly one argument ({len(args)} given)")
    (n,) = args
    if isinstance(n, (bool, np.bool_)) or not isinstance(n, (int, np.integer)):
        raise RuntimeError(_THREADS_INT.format(fn, type(n).__name__))
    n = int(n)
    if not -(2**63) <= n < 2**63:
        raise ValueError("Overflow when unpacking long long")
    if not -(2**31) <= n < 2**31:
        raise ValueError("Overflow when unpacking long")
    if n <= 0:
        raise RuntimeError(_THREADS_POSITIVE.format(fn))
    return n


@tensor_op("set_num_threads", method=False)
def set_num_threads(*args) -> None:
    """``torch.set_num_threads(n)``: recorded only (Note [Recorded settings])."""
    _SETTINGS["num_threads"] = _thread_count("set_num_threads", args)


@tensor_op("get_num_threads", method=False)
def get_num_threads() -> int:
    """The value of the last ``set_num_threads``, else the cores this process may run on."""
    return _SETTINGS["num_threads"]


@tensor_op("set_num_interop_threads", method=False)
def set_num_interop_threads(*args) -> None:
    """``torch.set_num_interop_threads(n)``: recorded only, and only once, as PyTorch allows
    (Note [Recorded settings])."""
    n = _thread_count("set_num_interop_threads", args)
    with _settings_lock:
        if _SETTINGS["num_interop_threads"] is not None:
            raise RuntimeError(INTEROP_TWICE)
        _SETTINGS["num_interop_threads"] = n


@tensor_op("get_num_interop_threads", method=False)
def get_num_interop_threads() -> int:
    n = _SETTINGS["num_interop_threads"]
    return _default_threads() if n is None else n


# Note [Subnormal floats]: XLA's CPU runtime runs every kernel with the processor's
# flush-to-zero and denormals-are-zero modes on, and no flag turns them off: a subnormal float
# (below 1.2e-38 in float32, 2.2e-308 in float64) that an op reads or makes on a CPU device is
# read or made as 0 (``tensor([3e-39]) * 2`` is 0; PyTorch's default keeps 6e-39). Making a tensor
# from data, printing it and host reads (``tolist``, ``nonzero``) keep the value.
# ``set_flush_denormal(True)`` is therefore what leafgrad already does and returns True;
# ``set_flush_denormal(False)`` cannot be honoured and returns False, PyTorch's answer where the
# mode cannot be set.


@tensor_op("set_flush_denormal", method=False)
@E.one_argument("torch.set_flush_denormal")
def set_flush_denormal(mode) -> bool:
    """``torch.set_flush_denormal(mode)``: whether subnormal floats are flushed to zero on the CPU
    (Note [Subnormal floats]: leafgrad's CPU kernels always flush them)."""
    if not isinstance(mode, bool):
        raise RuntimeError(f"flush_denormal expects a bool, but got {type(mode).__name__}")
    return mode


def _bool_arg(fn: str, name: str, value, pos: int | None) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        if pos is None:
            raise TypeError(E.KW_MUST_BE.format(fn, name, "bool", E.py_typename(value)))
        raise TypeError(E.MUST_BE.format(fn, name, pos, "bool", E.py_typename(value)))
    return bool(value)


@tensor_op("use_deterministic_algorithms", method=False)
def use_deterministic_algorithms(mode, *, warn_only=False) -> None:
    """``torch.use_deterministic_algorithms``: recorded only (Note [Recorded settings])."""
    mode = _bool_arg("_set_deterministic_algorithms", "mode", mode, 1)
    warn_only = _bool_arg("_set_deterministic_algorithms", "warn_only", warn_only, None)
    _SETTINGS["deterministic"] = mode
    _SETTINGS["deterministic_warn_only"] = warn_only


@tensor_op("are_deterministic_algorithms_enabled", method=False)
def are_deterministic_algorithms_enabled() -> bool:
    return _SETTINGS["deterministic"]


@tensor_op("is_deterministic_algorithms_warn_only_enabled", method=False)
def is_deterministic_algorithms_warn_only_enabled() -> bool:
    return _SETTINGS["deterministic_warn_only"]


_DEBUG_MODES = {"default": 0, "warn": 1, "error": 2}


@tensor_op("set_deterministic_debug_mode", method=False)
def set_deterministic_debug_mode(debug_mode) -> None:
    """``"default"``/0: off; ``"warn"``/1: on, warn only; ``"error"``/2: on."""
    if isinstance(debug_mode, str):
        if debug_mode not in _DEBUG_MODES:
            raise RuntimeError(
                "invalid value of debug_mode, expected one of `default`, `warn`, `error`, but "
                f"got {debug_mode}"
            )
        debug_mode = _DEBUG_MODES[debug_mode]
    elif not isinstance(debug_mode, int):
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode)}")
    if debug_mode not in (0, 1, 2):
        raise RuntimeError(
            f"invalid value of debug_mode, expected 0, 1, or 2, but got {debug_mode}"
        )
    use_deterministic_algorithms(debug_mode > 0, warn_only=debug_mode == 1)


@tensor_op("get_deterministic_debug_mode", method=False)
def get_deterministic_debug_mode() -> int:
    if not _SETTINGS["deterministic"]:
        return 0
    return 1 if _SETTINGS["deterministic_warn_only"] else 2


@tensor_op("set_float32_matmul_precision", method=False)
def set_float32_matmul_precision(precision) -> None:
    """Recorded only: leafgrad's products always run at full float32 precision (Note [Recorded
    settings]). An unknown name warns and changes nothing, as in PyTorch."""
    if not isinstance(precision, str):
        raise RuntimeError(
            f"set_float32_matmul_precision expects a str, but got {type(precision).__name__}"
        )
    if precision not in ("highest", "high", "medium"):
        E.warn(MATMUL_PRECISION_IGNORED.format(precision))
        return
    _SETTINGS["matmul_precision"] = precision


@tensor_op("get_float32_matmul_precision", method=False)
def get_float32_matmul_precision() -> str:
    return _SETTINGS["matmul_precision"]


@tensor_op("set_default_device", method=False)
def set_default_device(device) -> None:
    """Only ``None`` and ``"cpu"``: leafgrad's factories cannot follow another default device."""
    if device is None:
        return
    dev = device if isinstance(device, DEV.device) else DEV.device(device)
    if dev.type != "cpu":
        raise NotImplementedError(DEFAULT_DEVICE.format(str(dev)))


@tensor_op("get_default_device", method=False)
def get_default_device() -> DEV.device:
    return DEV.device("cpu")


# --- typename, is_inference, broadcast_shapes -----------------------------------------------------


FUNCTIONS["typename"] = E.typename


@tensor_op("is_inference", method=False)
def is_inference(*args, **kwargs) -> bool:
    """``torch.is_inference(input)``: whether ``input`` is an inference tensor."""
    return _one_tensor("is_inference", args, kwargs)._inference


@tensor_op("broadcast_shapes", method=False)
def broadcast_shapes(*shapes) -> Size:
    """``torch.broadcast_shapes``: the shape the given shapes broadcast to (PyTorch's
    ``_refs._broadcast_shapes``: ints are 1-d shapes, ``None`` is skipped)."""
    shapes = tuple((s,) if isinstance(s, (int, np.integer)) else s for s in shapes if s is not None)
    if not shapes:
        return Size(())
    for shape in shapes:
        if not isinstance(shape, Sequence):
            raise RuntimeError(
                "Input shapes should be of type ints, a tuple of ints, or a list of ints, got "
                f"{shape}"
            )
    common = [1] * max(len(s) for s in shapes)
    for arg_idx, shape in enumerate(shapes):
        for idx in range(-1, -1 - len(shape), -1):
            if shape[idx] == common[idx]:
                continue
            if common[idx] == 1:
                if shape[idx] < 0:
                    raise ValueError("Attempting to broadcast a dimension with negative length!")
                common[idx] = shape[idx]
            if shape[idx] != 1 and common[idx] != shape[idx]:
                raise RuntimeError(
                    f"Attempting to broadcast a dimension of length {shape[idx]} at {idx}! "
                    f"Mismatching argument at index {arg_idx} had {shape}; but expected shape "
                    f"should be broadcastable to {common}"
                )
    for i, s in enumerate(common):
        if not isinstance(s, (int, np.integer)):
            raise TypeError(
                f"torch.Size() takes an iterable of 'int' (item {i} is '{type(s).__name__}')"
            )
    return Size(int(s) for s in common)


# --- tensor introspection ---------------------------------------------------------------------


@tensor_op("is_signed", method=False)
def _is_signed_function(*args, **kwargs) -> bool:
    return _one_tensor("is_signed", args, kwargs)._dtype.is_signed


@tensor_op("is_signed", function=False)
def is_signed(self) -> bool:
    """Whether the dtype is signed (every floating and complex type; not bool or uint8)."""
    return self._dtype.is_signed


@tensor_op("is_nonzero", method=False)
def _is_nonzero_function(*args, **kwargs) -> bool:
    return _one_tensor("is_nonzero", args, kwargs).is_nonzero()


@tensor_op("is_nonzero", function=False)
def is_nonzero(self) -> bool:
    """Whether the single element is not zero (reads the value: PyTorch's errors otherwise)."""
    return Tensor.__bool__(self)


_NOT_BOOL = (
    'self.scalar_type() == at::kBool INTERNAL ASSERT FAILED at "/__w/pytorch/pytorch/aten/src/'
    'ATen/native/ReduceOps.cpp":{}, please report a bug to PyTorch. '
)


def _all_true_or_any(name: str, line: int, t, reduce) -> Tensor:
    """``torch._is_all_true`` / ``_is_any_true``: a 0-d bool tensor. Inside vmap PyTorch
    reduces the whole batch (its validation checks read it), so the values read are every
    sample's (Note [Known values]); under ``leafgrad.compile`` the reduction is traced."""
    from .._known import known_values

    _need_tensor(t, name)
    if t._dtype is not D.bool_:
        raise RuntimeError(_NOT_BOOL.format(line))
    if t._device is DEV.META:
        return Tensor._make(DEV.meta_data((), np.bool_), D.bool_, DEV.META)
    values = known_values(t._data)[0]
    data = reduce(t._data) if values is None else jnp.asarray(bool(reduce(values)))
    return Tensor._make(data, D.bool_, t._device)


@tensor_op("_is_all_true", method=False)
def _is_all_true(self) -> Tensor:
    return _all_true_or_any("_is_all_true", 2144, self, jnp.all)


@tensor_op("_is_any_true", method=False)
def _is_any_true(self) -> Tensor:
    return _all_true_or_any("_is_any_true", 2148, self, jnp.any)


@tensor_op("is_same_size", method=False)
def _is_same_size_function(*args) -> bool:
    if not args:
        raise TypeError(_MISSING.format("is_same_size", "input"))
    _need_tensor(args[0], "is_same_size")
    if len(args) < 2:
        raise TypeError(_MISSING.format("is_same_size", "other"))
    _need_tensor(args[1], "is_same_size", "other", 2)
    return args[0]._data.shape == args[1]._data.shape


@tensor_op("is_same_size", function=False)
def is_same_size(self, other) -> bool:
    _need_tensor(other, "is_same_size", "other", 1)
    return self._data.shape == other._data.shape


def _output_nr(self) -> int:
    """The index of this tensor among the outputs of its ``grad_fn`` (0 for leaves)."""
    return 0 if self.grad_fn is None else self._output_nr


tensor_op("output_nr", function=False)(property(_output_nr))


def _root_strides(cell, shape) -> tuple:
    """The strides of the storage root: those of a live member laid out as the root."""
    for m in cell.live():
        if not S.chain_of(m) and m._data.shape == shape:
            return _strides(m)
    return _contiguous_strides(shape)


def _replay(chain, shape, strides, offset: int):
    """Sizes, strides and storage offset after the view steps of ``chain``, as PyTorch's view
    ops compute them (Note [Storage offsets and data pointers]); None for an unknown step."""
    shape, strides = list(shape), list(strides)
    for op, static, k in chain:
        a = dict(static)
        name = op.name
        if name in ("alias", "conj_view", "neg_view"):
            continue
        if name in ("view", "reshape_alias"):
            new = list(a["shape"])
            st = _compute_stride(tuple(shape), tuple(strides), tuple(new))
            shape, strides = new, list(_contiguous_strides(new) if st is None else st)
        elif name == "unsqueeze":
            d = a["dim"]
            shape.insert(d, 1)
            strides.insert(d, 1 if d >= len(strides) else shape[d + 1] * strides[d])
        elif name in ("squeeze_dim", "squeeze_dims"):
            dims = (a["dim"],) if name == "squeeze_dim" else tuple(a["dims"])
            keep = [i for i in range(len(shape)) if not (i in dims and shape[i] == 1)]
            shape, strides = [shape[i] for i in keep], [strides[i] for i in keep]
        elif name == "transpose":
            if shape:
                d0, d1 = a["dim0"], a["dim1"]
                shape[d0], shape[d1] = shape[d1], shape[d0]
                strides[d0], strides[d1] = strides[d1], strides[d0]
        elif name == "t":
            shape, strides = shape[::-1], strides[::-1]
        elif name == "permute":
            dims = a["dims"]
            shape, strides = [shape[d] for d in dims], [strides[d] for d in dims]
        elif name == "expand":
            new = list(a["shape"])
            strides, shape = list(_expand_strides(tuple(shape), tuple(strides), new)), new
        elif name == "slice":
            d, start, stop, step = a["dim"], a["start"], a["stop"], a["step"]
            offset += start * strides[d]
            shape[d] = len(range(start, stop, step))
            strides[d] *= step
        elif name in ("select", "unbind"):
            d = a["dim"]
            index = a["index"] if name == "select" else k
            index = index + shape[d] if index < 0 else index
            offset += index * strides[d]
            del shape[d], strides[d]
        elif name == "split":
            d, sizes = a["dim"], a["sizes"]
            offset += sum(sizes[:k]) * strides[d]
            shape[d] = sizes[k]
        elif name == "diagonal":
            off, d1, d2 = a["offset"], a["dim1"], a["dim2"]
            if off >= 0:
                size = max(min(shape[d1], shape[d2] - off), 0)
                moved = off * strides[d2]
            else:
                size = max(min(shape[d1] + off, shape[d2]), 0)
                moved = -off * strides[d1]
            if size > 0:
                offset += moved
            stride = strides[d1] + strides[d2]
            keep = [i for i in range(len(shape)) if i not in (d1, d2)]
            shape = [shape[i] for i in keep] + [size]
            strides = [strides[i] for i in keep] + [stride]
        elif name == "unfold":
            d, size, step = a["dimension"], a["size"], a["step"]
            if not shape:
                shape, strides = [size], [1]
                continue
            inner = strides[d]
            shape[d] = (shape[d] - size) // step + 1
            strides[d] *= step
            shape.append(size)
            strides.append(inner)
        elif name == "view_as_real":
            shape.append(2)
            strides = [2 * s for s in strides] + [1]
            offset *= 2
        elif name == "view_as_complex_view":
            shape.pop()
            strides = [s // 2 for s in strides[:-1]]
            offset //= 2
        elif name == "as_strided":
            shape, strides = list(a["size"]), list(a["stride"])
            offset = a["storage_offset"]
        elif name == "view_dtype":
            # PyTorch's ``view(dtype)``: the last dim (of stride 1) grows or shrinks by the ratio
            # of the itemsizes; the other strides and the offset count elements of the new size
            old, new = a["from_size"], a["dtype"].itemsize
            if old > new:
                r = old // new
                strides = [s * r for s in strides[:-1]] + strides[-1:]
                shape[-1:] = [n * r for n in shape[-1:]]
                offset *= r
            elif old < new:
                r = new // old
                strides = [s // r for s in strides[:-1]] + strides[-1:]
                shape[-1:] = [n // r for n in shape[-1:]]
                offset //= r
        else:
            return None
    return shape, strides, offset


def _first_position(chain, root_shape, root_strides) -> int:
    """The storage offset of the first element of a non-empty view, from its index map (for
    view steps ``_replay`` does not know)."""
    idx, _ = S.index_map(chain, root_shape)
    p = int(np.asarray(idx).reshape(-1)[0])
    shape, strides = tuple(root_shape), tuple(root_strides)
    if S.is_real_view(chain):
        shape, strides = shape + (2,), tuple(2 * s for s in strides) + (1,)
    coords = np.unravel_index(p, shape) if shape else ()
    return int(sum(int(c) * s for c, s in zip(coords, strides)))


@tensor_op("storage_offset", function=False)
def storage_offset(self) -> int:
    """The offset, in elements, of this tensor's first element in its storage (Note [Storage
    offsets and data pointers])."""
    chain = S.chain_of(self)
    if not chain:
        return 0
    cell = self.__dict__["_storage"]
    root_shape = cell.data.shape
    root_strides = _root_strides(cell, root_shape)
    replayed = _replay(chain, root_shape, root_strides, 0)
    if replayed is not None:
        return replayed[2]
    return _first_position(chain, root_shape, root_strides) if self._data.size else 0


_ADDRESS_ALIGN = 64
_next_address = [0x7F3A_0000_0000]


def _storage_address(t: Tensor) -> int:
    """The base address of ``t``'s storage, made the first time one of its tensors is asked."""
    cell = t.__dict__.get("_storage")
    holders = cell.live() if cell is not None else [t]
    for m in holders:
        address = m.__dict__.get("_storage_address")
        if address is not None:
            break
    else:
        root = t._data if cell is None else cell.data
        nbytes = int(np.prod(root.shape, dtype=np.int64)) * root.dtype.itemsize
        with _settings_lock:
            address = _next_address[0]
            _next_address[0] += -(-max(nbytes, 1) // _ADDRESS_ALIGN) * _ADDRESS_ALIGN
    for m in holders:
        m.__dict__.setdefault("_storage_address", address)
    return address


@tensor_op("data_ptr", function=False)
def data_ptr(self) -> int:
    """The address of the first element (Note [Storage offsets and data pointers]); 0 without
    elements."""
    if self._data.size == 0:
        return 0
    return _storage_address(self) + storage_offset(self) * self._dtype.itemsize


@tensor_op("untyped_storage", function=False)
def untyped_storage(self):
    """The bytes of the tensor's memory (``leafgrad.storage.UntypedStorage``): its storage
    root's, and what an earlier ``resize_`` gave up."""
    from ..storage import UntypedStorage

    return UntypedStorage(self, _storage_address(self), storage_nbytes(self), self._device)


def storage_nbytes(self) -> int:
    """The size in bytes of the tensor's memory: its storage root's, and what an earlier
    ``resize_`` gave up."""
    cell = self.__dict__.get("_storage")
    root = self._data if cell is None else cell.data
    nbytes = int(np.prod(root.shape, dtype=np.int64)) * root.dtype.itemsize
    tail = self.__dict__.get("_resized_tail")
    if tail is not None and cell is None:
        nbytes += int(tail.shape[0]) * tail.dtype.itemsize
    return nbytes


@tensor_op("storage", function=False)
def storage(self):
    """``Tensor.storage()`` (deprecated in PyTorch): the memory as elements of the dtype."""
    from ..storage import typed_storage

    return typed_storage(self)


# --- conjugation --------------------------------------------------------------------------------

# Note [Conjugate and negative bits]: PyTorch's ``conj()`` of a complex tensor is a lazy view
# with the conjugate bit set; ``imag`` of such a view is a lazy negation (the negative bit). Here
# both are view steps (``conj_view``, ``neg_view``) whose values are computed, and the bits are
# the parity of those steps in the tensor's chain. ``resolve_conj``/``resolve_neg`` copy a tensor
# whose bit is set (``CloneBackward0``, as PyTorch) and return any other tensor itself.

register_ops(
    OpDef("conj_physical", jnp.conj, "ConjPhysicalBackward0", ("self",), same),
    # the in-place variant's node, whatever the dtype (a real tensor too: its values stay)
    OpDef("conj_physical_inplace", jnp.conj, "ConjPhysicalBackward1", ("self",), same),
)


def _is_neg(t: Tensor) -> bool:
    return sum(1 for op, _, _ in S.chain_of(t) if op.name == "neg_view") % 2 == 1


@tensor_op("conj")
def conj(input) -> Tensor:
    """``conj``: a complex tensor's lazy conjugate view (``ConjBackward0``); a real tensor
    itself (Note [Conjugate and negative bits])."""
    _need_tensor(input, "conj")
    return _conj(input)


@tensor_op("is_conj")
def is_conj(input) -> bool:
    _need_tensor(input, "is_conj")
    return _is_conj(input)


@tensor_op("is_neg")
def is_neg(input) -> bool:
    _need_tensor(input, "is_neg")
    return _is_neg(input)


@tensor_op("resolve_conj")
def resolve_conj(input) -> Tensor:
    """A copy with the conjugation applied when the conjugate bit is set, else the tensor."""
    _need_tensor(input, "resolve_conj")
    return input.clone() if _is_conj(input) else input


@tensor_op("resolve_neg")
def resolve_neg(input) -> Tensor:
    """A copy with the negation applied when the negative bit is set, else the tensor."""
    _need_tensor(input, "resolve_neg")
    return input.clone() if _is_neg(input) else input


@tensor_op("conj_physical")
def conj_physical(input) -> Tensor:
    """The conjugate computed into a new tensor (``ConjPhysicalBackward0``); a real tensor
    itself."""
    _need_tensor(input, "conj_physical")
    if not input._dtype.is_complex:
        return input
    return dispatch(OPS["conj_physical"], input)


@tensor_op("conj_physical_")
def conj_physical_(input) -> Tensor:
    """``conj_physical`` written into the tensor (``ConjPhysicalBackward1``); for a real tensor
    the values stay, and the version still goes up, as in PyTorch."""
    _need_tensor(input, "conj_physical_")
    return inplace(input, lambda: dispatch(OPS["conj_physical_inplace"], input))


@tensor_op("adjoint")
def adjoint(input) -> Tensor:
    """The conjugate transpose of the last two dims, as views (``transpose`` then ``conj``)."""
    _need_tensor(input, "adjoint")
    n = input._data.ndim
    if n == 0:
        E.warn_once(ADJOINT_0D)
        return _conj(input)
    if n < 2:
        raise RuntimeError(MT_DIM.format("adjoint()", n))
    return _conj(transpose(input, -2, -1))


# --- factories ----------------------------------------------------------------------------------


def _number(fn: str, name: str, pos: int, x):
    """A ``Number`` argument as PyTorch's parser takes it (a 0-d tensor is read as its value)."""
    if not F._is_number(x):
        raise TypeError(E.MUST_BE.format(fn, name, pos, "Number", F._type_name(x)))
    if isinstance(x, Tensor):
        x = x.item()
    return parsed_number(x)


def _bool_kw(fn: str, name: str, value) -> bool | None:
    if value is None:
        return None
    if not isinstance(value, bool):
        raise TypeError(E.KW_MUST_BE.format(fn, name, "bool", E.py_typename(value)))
    return value


@tensor_op("scalar_tensor", method=False)
def scalar_tensor(
    *args, dtype=None, layout=None, device=None, pin_memory=None, requires_grad=False
) -> Tensor:
    """``torch.scalar_tensor(s)``: a 0-d tensor of the default dtype (or ``dtype``)."""
    if not args:
        raise TypeError(_MISSING.format("scalar_tensor", "s"))
    if len(args) > 1:
        raise TypeError(f"scalar_tensor() takes 1 positional argument but {len(args)} were given")
    s = _number("scalar_tensor", "s", 1, args[0])
    dtype = F._dtype_or_default(dtype, "scalar_tensor")
    value = checked_number(s, dtype)
    if isinstance(value, complex) and not dtype.is_complex:
        value = value.real
    values = F._convert(np.asarray(value), dtype.np, dtype)
    return F._leaf(values, dtype, device, requires_grad)


def _int_tuple(x, fn: str, name: str, pos: int) -> tuple:
    """A ``tuple of ints`` argument (no bare int), with PyTorch's parser errors."""
    try:
        if not isinstance(x, (tuple, list, Size)):
            raise TypeError(F.SIZE_NOT_TUPLE.format(fn=fn, pos=pos, type=F._type_name(x)))
        return F._size((x,), fn, pos)
    except TypeError as e:
        raise TypeError(str(e).replace("argument 'size'", f"argument '{name}'")) from None


@tensor_op("empty_strided", method=False)
def empty_strided(
    *args, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False
) -> Tensor:
    """``torch.empty_strided(size, stride)``: a new tensor that reports ``stride`` (Note [Strides]
    in ops/shape.py). Its values are zeros where PyTorch's are uninitialised."""
    if len(args) < 2:
        raise TypeError(_MISSING.format("empty_strided", ("size", "stride")[len(args)]))
    if len(args) > 2:
        raise TypeError(f"empty_strided() takes 2 positional arguments but {len(args)} were given")
    shape = _int_tuple(args[0], "empty_strided", "size", 1)
    stride = _int_tuple(args[1], "empty_strided", "stride", 2)
    dtype = F._dtype_or_default(dtype, "empty_strided")
    nbytes = F.check_shape(shape, dtype.itemsize)
    if len(shape) != len(stride):
        raise RuntimeError(
            f"dimensionality of sizes ({len(shape)}) must match dimensionality of strides "
            f"({len(stride)})"
        )
    if all(shape) and any(s < 0 for s in stride):
        raise RuntimeError(
            f"Storage size calculation overflowed with sizes={F._list_str(shape)} and "
            f"strides={F._list_str(stride)}"
        )
    with F.allocating(nbytes, device):
        out = F._leaf(np.zeros(shape, dtype.np), dtype, device, requires_grad)
    return _set_strides(out, stride)


@tensor_op("empty_permuted", method=False)
def empty_permuted(
    size,
    physical_layout,
    *,
    dtype=None,
    layout=None,
    device=None,
    requires_grad=False,
    pin_memory=False,
) -> Tensor:
    """``torch.empty_permuted(size, physical_layout)``: a new tensor whose dims are laid out in
    memory in the order ``physical_layout`` gives (outermost first); zeros, as ``empty_strided``."""
    shape = _int_tuple(size, "empty_permuted", "size", 1)
    order = _int_tuple(physical_layout, "empty_permuted", "physical_layout", 2)
    dim = len(shape)
    if dim != len(order):
        raise RuntimeError(
            "Number of dimensions in size does not match the length of the physical_layout; "
            f"i.e. len(size) = {dim} is not equal to len(physical_layout) = {len(order)}"
        )
    perm = [-1] * dim
    for i, d in enumerate(order):
        if not 0 <= d < dim:
            raise RuntimeError(
                f"Dimension out of range (expected to be between 0 and {dim - 1}, but got {d} at "
                f"index {i}).  NB: negative dims not currently supported; file an issue if you "
                "want it."
            )
        if perm[d] != -1:
            raise RuntimeError("Duplicate dim not allowed")
        perm[d] = i
    # the contiguous strides of the physical sizes (a size 0 counts as 1), permuted back
    phys = [shape[d] for d in order]
    phys_strides = [1] * dim
    for i in range(dim - 2, -1, -1):
        phys_strides[i] = phys_strides[i + 1] * max(phys[i + 1], 1)
    stride = tuple(phys_strides[perm[d]] for d in range(dim))
    return empty_strided(
        shape, stride, dtype=dtype, layout=layout, device=device, requires_grad=requires_grad
    )


def _legacy_name(d: D.dtype) -> str:
    return d._legacy


@tensor_op("asarray", method=False)
def asarray(*args, dtype=None, device=None, copy=None, requires_grad=None) -> Tensor:
    """``torch.asarray(obj)``: ``obj`` as a tensor, sharing a tensor's memory unless a copy is
    asked for (``copy=True``) or needed (another dtype or device).

    A tensor argument keeps its autograd history: a conversion is recorded (``ToCopyBackward0``,
    ``CloneBackward0``), and ``requires_grad`` (by default the tensor's own, with PyTorch's
    warning) is set on a leaf result in place, as PyTorch does; a non-leaf result is detached
    when it must not require grad. NumPy arrays, JAX arrays and sequences are copied: JAX
    arrays are immutable, so ``copy=False`` cannot give a tensor that sees later writes to a
    NumPy array, as PyTorch's does."""
    if not args:
        raise TypeError(_MISSING.format("asarray", "obj"))
    if len(args) > 1:
        raise TypeError(f"asarray() takes 1 positional argument but {len(args)} were given")
    (obj,) = args
    dtype = F._dtype_arg(dtype, "asarray")
    copy = _bool_kw("asarray", "copy", copy)
    requires_grad = _bool_kw("asarray", "requires_grad", requires_grad)
    t = None
    if isinstance(obj, Tensor):
        t = obj
    elif isinstance(obj, (np.ndarray, np.generic, jax.Array)):
        arr = np.asarray(obj)
        strides = F._numpy_strides(obj)
        t = F._numpy_layout(F._leaf(arr, D.from_numpy_dtype(arr.dtype), None, False), strides, True)
    if requires_grad is None:
        requires_grad = t is not None and t._requires_grad
        if requires_grad:
            E.warn_once(ASARRAY_REQUIRES_GRAD)
    if t is None:
        if copy is False:
            raise ValueError("can't alias arbitrary sequence into a tensor.")
        values, dtype = F._values(obj, dtype)
        return F._leaf(values, dtype, device, requires_grad)
    target = None if device is None else DEV.canonical(device)
    wrong_device = target is not None and target != t._device
    wrong_dtype = dtype is not None and dtype is not t._dtype
    if copy or (copy is None and (wrong_device or wrong_dtype)):
        if wrong_device or wrong_dtype:
            t = t.to(device=target, dtype=dtype, copy=bool(copy))
        else:
            t = t.clone()
    elif wrong_device:
        raise ValueError(f"can't alias tensor from device '{t._device}' to '{target}'.")
    elif wrong_dtype:
        raise ValueError(
            f"can't alias tensor with dtype '{_legacy_name(t._dtype)}' into dtype "
            f"'{_legacy_name(dtype)}'."
        )
    if t.grad_fn is None:
        if requires_grad and not (t._dtype.is_floating_point or t._dtype.is_complex):
            raise RuntimeError(E.REQUIRES_GRAD_FACTORY)
        t._set_requires_grad(requires_grad)
    elif not requires_grad:
        t = t.detach()
    return t


# ``range`` accumulates in int64 for integer types, in float32 for half types, else in double.
_RANGE_ACC = {D.float16: np.float32, D.bfloat16: np.float32}


def _range_checks(start: float, end: float, step: float) -> None:
    """PyTorch's ``arange_check_bounds`` (in double)."""
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if not (math.isfinite(start) and math.isfinite(end)):
        raise RuntimeError(f"unsupported range: {_g(start)} -> {_g(end)}")
    if not ((step > 0 and end >= start) or (step < 0 and end <= start)):
        raise RuntimeError(F.ARANGE_SIGN)


def _as_double(x) -> float:
    return float(x.real if isinstance(x, complex) else x)


@tensor_op("range", method=False)
def _range(
    *args,
    out=None,
    dtype=None,
    layout=None,
    device=None,
    pin_memory=False,
    requires_grad=False,
    **given,
) -> Tensor:
    """``torch.range(start, end, step=1)`` (deprecated): values from ``start`` to ``end``
    inclusive, in the default dtype unless ``dtype`` is given."""
    for i, name in enumerate(("start", "end", "step")):
        if name in given and len(args) == i:
            args = (*args, given.pop(name))
    if given:
        raise TypeError(f"range() got an unexpected keyword argument '{next(iter(given))}'")
    if len(args) > 3:
        raise TypeError(
            f"range() takes from 2 to 3 positional arguments but {len(args)} were given"
        )
    if len(args) < 2:
        raise TypeError(_MISSING.format("range", ("start", "end")[len(args)]))
    names = ("start", "end", "step")
    start, end, step = (_number("range", names[i], i + 1, a) for i, a in enumerate((*args, 1)[:3]))
    dtype = F._dtype_or_default(dtype, "range")
    E.warn(RANGE_DEPRECATED)
    if dtype._kind in "bc":
        raise NotImplementedError(NOT_IMPLEMENTED_FOR.format("range_cpu", dtype._legacy))
    if dtype._kind in "ui":
        xs, xe, xd = (int(_as_double(v)) for v in (start, end, step))
    else:
        acc = _RANGE_ACC.get(dtype, np.float64)
        xs, xe, xd = (acc(_as_double(v)) for v in (start, end, step))
    _range_checks(_as_double(start), _as_double(end), _as_double(step))
    if dtype._kind in "ui":
        size = (xe - xs) // xd + 1  # the signs agree: floor is C++'s truncation
        values = xs + np.arange(size, dtype=np.int64) * xd
        values = values.astype(dtype.np)
    else:
        with np.errstate(all="ignore"):
            size = int((xe - xs) / xd + acc(1))
            values = (xs + np.arange(size).astype(acc) * xd).astype(acc)
    with F.allocating(F.check_shape((size,), dtype.itemsize), device):
        return F._leaf(
            F._convert(np.asarray(values), dtype.np, dtype), dtype, device, requires_grad
        )


LOGSPACE_SIGNATURES = tuple(
    f"({a} start, {b} end, int steps, float base = 10.0, *, Tensor out = None, torch.dtype dtype "
    "= None, torch.layout layout = None, torch.device device = None, bool pin_memory = False, "
    "bool requires_grad = False)"
    for a, b in (
        ("Tensor", "Tensor"),
        ("Number", "Tensor"),
        ("Tensor", "Number"),
        ("Number", "Number"),
    )
)


def _is_int_arg(x) -> bool:
    if isinstance(x, Tensor):
        return x._dtype._kind in "iu" and x._data.ndim == 0
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def _is_float_arg(x) -> bool:
    if isinstance(x, Tensor):
        return x._data.ndim == 0 and x._dtype._kind in "iuf"
    return isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, bool)


def _logspace_values(start, end, steps: int, base: float, dtype: D.dtype) -> np.ndarray:
    """PyTorch's CPU kernel: in double from the endpoints rounded to ``dtype``, each half from
    its own end (complex types: in their own precision)."""
    if steps == 0:
        return np.zeros((0,), dtype.np)
    if steps == 1:
        if dtype.is_complex:
            value = np.power(np.complex128(base), np.complex128(start))
        else:
            value = np.power(np.float64(base), np.float64(_as_double(start)))
        value = checked_number(complex(value) if dtype.is_complex else float(value), dtype)
        return F._convert(np.full((1,), value), dtype.np, dtype)
    i = np.arange(steps)
    half = steps // 2
    if dtype.is_complex:
        c = dtype.np.type
        b, s, e = c(base), c(start), c(end)
        step = (e - s) / c(steps - 1)
        with np.errstate(all="ignore"):
            low = np.power(b, s + step * i.astype(dtype.np))
            high = np.power(b, e - step * (steps - i - 1).astype(dtype.np))
        return np.where(i < half, low, high).astype(dtype.np)
    if dtype._kind == "b":
        raise NotImplementedError(NOT_IMPLEMENTED_FOR.format("logspace_cpu", "Bool"))
    if dtype._kind in "ui":
        s, e = (int(_as_double(v)) for v in (start, end))
        s_d, e_d, diff = np.float64(s), np.float64(e), np.float64(e - s)
    else:
        # the endpoints rounded to ``dtype``, their difference in ``dtype`` (half types: in
        # float, rounded back, as c10's Half and BFloat16 operators do), then double
        s, e = (np.asarray(_as_double(v)).astype(dtype.np)[()] for v in (start, end))
        s_d, e_d, diff = np.float64(s), np.float64(e), np.float64(e - s)
    step = diff / np.float64(steps - 1)
    with np.errstate(all="ignore"):
        low = np.power(np.float64(base), s_d + step * i)
        high = np.power(np.float64(base), e_d - step * (steps - i - 1))
        values = np.where(i < half, low, high)
        if dtype._kind in "ui":
            return values.astype(np.int64).astype(dtype.np)
        return values.astype(dtype.np)


@tensor_op("logspace", method=False)
def logspace(*args, **kwargs) -> Tensor:
    """``torch.logspace(start, end, steps, base=10.0)``: ``base`` to the powers of ``linspace``,
    computed as PyTorch's CPU kernel does."""
    names = ("start", "end", "steps", "base")
    keywords = ("out", "dtype", "layout", "device", "pin_memory", "requires_grad")
    bound = dict(zip(names, args))
    for k, v in kwargs.items():
        if k in bound or k not in names + keywords:
            raise TypeError(E.invalid_arguments("logspace", LOGSPACE_SIGNATURES, args, kwargs))
        bound[k] = v
    ok = len(args) <= 4 and all(n in bound for n in names[:3])
    if ok:
        ok = all(isinstance(bound[n], Tensor) or F._is_number(bound[n]) for n in ("start", "end"))
        ok = ok and _is_int_arg(bound["steps"])
        ok = ok and ("base" not in bound or _is_float_arg(bound["base"]))
        ok = ok and (bound.get("dtype") is None or isinstance(bound["dtype"], D.dtype))
    if not ok:
        raise TypeError(E.invalid_arguments("logspace", LOGSPACE_SIGNATURES, args, kwargs))
    start, end = ends = F.range_ends("logspace", bound["start"], bound["end"])
    steps = int(bound["steps"])
    base = float(bound.get("base", 10.0))
    dtype = F.range_dtype("logspace", ends, bound.get("dtype"))
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    F.check_shape((steps,), dtype.itemsize)
    values = _logspace_values(start, end, steps, base, dtype)
    return F._leaf(values, dtype, bound.get("device"), bool(bound.get("requires_grad", False)))


@tensor_op("unravel_index", method=False)
def unravel_index(indices, shape) -> tuple:
    """``torch.unravel_index``: flat indices to coordinates, built as PyTorch builds it
    (``floor_divide`` and ``%`` by the shape's strides, then ``unbind``)."""
    if indices.is_complex() or indices.is_floating_point() or indices.dtype is D.bool_:
        raise TypeError(f"expected 'indices' to be integer dtype, but got {indices.dtype}")
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, Tensor):
        shape = Size([int(shape)])
    elif isinstance(shape, Sequence) and not isinstance(shape, (str, Tensor)):
        for dim in shape:
            if not isinstance(dim, int):
                raise TypeError(
                    f"expected 'shape' sequence to only contain ints, but got {_torch_type(dim)}"
                )
        shape = Size(shape)
    else:
        raise TypeError(
            f"expected 'shape' to be int or sequence of ints, but got {_torch_type(shape)}"
        )
    if not all(dim >= 0 for dim in shape):
        raise ValueError(f"'shape' cannot have negative values, but got {tuple(shape)}")
    coefs = list(
        reversed(list(itertools.accumulate(reversed(shape[1:] + Size([1])), func=operator.mul)))
    )
    new = F.tensor
    result = indices.unsqueeze(-1).floor_divide(
        new(coefs, device=indices.device, dtype=D.int64)
    ) % new(list(shape), device=indices.device, dtype=D.int64)
    return result.unbind(-1)


def _torch_type(x) -> str:
    """``str(type(x))`` with leafgrad's classes named as PyTorch's."""
    cls = type(x)
    return (
        f"<class '{E.torch_module(cls.__module__)}.{cls.__qualname__}'>"
        if (cls.__module__.startswith("leafgrad"))
        else str(cls)
    )
