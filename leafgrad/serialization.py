"""Saving and loading tensors and state dicts, in leafgrad's own format and in PyTorch's, safely.

``save(obj, f)`` writes leafgrad's format: a zip holding ``leafgrad.json`` (the structure of
``obj``, each storage's dtype, size and device, each tensor's offset, shape and stride into its
storage) and one raw little-endian array per storage under ``data/``. Reading it runs no code.

``save(obj, f, format="torch")`` (or ``save_torch``) writes PyTorch's zip format, which
``torch.load(f, weights_only=True)`` reads back. ``load`` tells the formats apart and reads
``torch.save`` files through an unpickler that knows only the globals a state dict needs: any other
global, or an opcode that could build another kind of object, raises ``pickle.UnpicklingError``
before anything runs, whatever ``weights_only`` says.

Note [Shared storages]: a tensor saved twice is stored once and loads as one object. Tensors that
share memory (a base and its views, ``detach()``, ``.data``) are written as one storage plus an
offset, shape and stride each, when the view is a strided window of the memory; they load sharing
one storage again, so an in-place write through one is seen by the others. As in PyTorch, the
loaded tensors are not views of each other (``_base`` is None) and have their own version counters.
A view that no offset and strides describe (a conjugate view) is saved as a copy of its values.
"""

from __future__ import annotations

import io
import json
import math
import os
import pickle
import struct
import sys
import zipfile
from collections import OrderedDict
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from . import _device as DEV
from . import _dtype as D
from . import _storage
from ._tensor import Size, Tensor
from .autograd import grad_mode
from .ops.iterator_layout import contiguous_strides as _contiguous

__all__ = ["save", "load", "save_torch"]

_MANIFEST = "leafgrad.json"
_FORMAT = "leafgrad"
_VERSION = 1
_ALIGN = 64  # PyTorch aligns each storage record to 64 bytes (``.storage_alignment``)

_CENTRAL_DIRECTORY = (
    "PytorchStreamReader failed reading zip archive: failed finding central directory. This is an "
    "internal miniz error. If you are seeing this error, there is a high likelihood that your "
    "checkpoint file is corrupted. This can happen if the checkpoint was not saved properly, was "
    "transferred incorrectly, or the file was modified after saving."
)
_WEIGHTS_ONLY = (
    "Weights only load failed. leafgrad.load never runs code from a file: it loads tensors, "
    "Parameters, dtypes, devices, sizes, OrderedDicts and plain Python containers, numbers and "
    "strings only.\n\n{}"
)


# --- errors ------------------------------------------------------------------------------------
# Note [Corrupt files]: anything that goes wrong while a file is parsed (a short read, a bad zip,
# wrong JSON, a pickle that does not fit) becomes one RuntimeError saying the file is corrupted.
# Errors leafgrad raises on purpose (unknown devices, unsupported globals) and errors raised by a
# user's ``map_location`` pass through unchanged: they are marked.


class _Intended(Exception):
    """Carries an error that must reach the user as it is (Note [Corrupt files])."""

    def __init__(self, error: BaseException) -> None:
        super().__init__(str(error))
        self.error = error


def _corrupt(what: str, exc: BaseException | None = None) -> RuntimeError:
    detail = "" if exc is None else f" ({type(exc).__name__}: {exc})"
    return RuntimeError(
        f"leafgrad.load: the file is truncated or corrupted: {what}{detail}. This can happen if "
        "the checkpoint was not saved completely or was modified after saving."
    )


def _parse(what: str, fn, *args):
    """Run ``fn(*args)``; turn unexpected errors into one clear RuntimeError."""
    try:
        return fn(*args)
    except _Intended as marked:
        raise marked.error from None
    except pickle.UnpicklingError:
        raise
    except Exception as exc:  # noqa: BLE001 - Note [Corrupt files]
        raise _corrupt(what, exc) from None


# --- tensors and their storages ----------------------------------------------------------------


def _index_map(shape, stride, offset) -> np.ndarray:
    """The flat storage index of every element of a strided tensor."""
    idx = np.full(tuple(shape), offset, dtype=np.int64)
    for d, (n, s) in enumerate(zip(shape, stride)):
        axis = [1] * len(shape)
        axis[d] = n
        idx = idx + (np.arange(n, dtype=np.int64) * s).reshape(axis)
    return idx


def _strided_window(idx: np.ndarray):
    """``(offset, stride)`` when the index map is a strided window of memory, else None."""
    shape = idx.shape
    if idx.size == 0:
        return 0, _contiguous(shape)
    offset = int(idx.reshape(-1)[0])
    stride = list(_contiguous(shape))
    for d, n in enumerate(shape):
        if n > 1:
            at = [0] * len(shape)
            at[d] = 1
            stride[d] = int(idx[tuple(at)]) - offset
    if offset < 0 or min(stride, default=0) < 0:
        return None
    if not np.array_equal(_index_map(shape, stride, offset), idx):
        return None
    return offset, tuple(stride)


class _Plan:
    """Which storage each tensor of an object lives in, and where (Note [Shared storages])."""

    def __init__(self) -> None:
        self.storages: list[tuple[np.ndarray, D.dtype, str]] = []  # flat values, dtype, device
        self.tensors: list[tuple[Tensor, int, int, tuple, tuple]] = []  # t, storage, off, stride
        self.index: dict[int, int] = {}  # id(tensor) -> position in ``tensors``
        self._cells: dict = {}

    def add(self, t: Tensor) -> int:
        k = self.index.get(id(t))
        if k is not None:
            return k
        shape = tuple(t._data.shape)
        placed = self._in_cell(t)
        if placed is None:
            placed = self._laid_out(t, shape)
        if placed is None:
            sid = self._new_storage(np.asarray(t._data), t)
            placed = sid, 0, _contiguous(shape)
        k = self.index[id(t)] = len(self.tensors)
        self.tensors.append((t, *placed))
        return k

    def _laid_out(self, t: Tensor, shape: tuple):
        """A tensor of its own memory with recorded dense strides (a transposed clone, an
        elementwise result): its values saved in memory order, with those strides, as
        PyTorch saves them."""
        from .ops.iterator_layout import dense_in_memory_order, non_overlapping_and_dense

        strides = t.__dict__.get("_strides")
        if strides is None or "_storage" in t.__dict__:
            return None
        if not non_overlapping_and_dense(shape, strides):
            return None
        values = dense_in_memory_order(np.asarray(t._data), strides)
        return self._new_storage(values, t), 0, tuple(strides)

    def _new_storage(self, values: np.ndarray, t: Tensor) -> int:
        self.storages.append((values.reshape(-1), t._dtype, str(t._device)))
        return len(self.storages) - 1

    def _in_cell(self, t: Tensor):
        cell = t.__dict__.get("_storage")
        if cell is None:
            return None
        root = cell.data
        if root.dtype != t._data.dtype:
            return None
        chain = _storage.chain_of(t)
        if any(op.name == "conj_view" for op, _, _ in chain):
            return None  # the values are conjugated: no window of the memory holds them
        if not chain and root.shape == t._data.shape:
            offset, stride = 0, _contiguous(root.shape)
        else:
            ids = jnp.arange(root.size, dtype=jnp.int64).reshape(root.shape)
            idx = np.asarray(_storage.gather(chain)(ids) if chain else ids)
            if idx.shape != t._data.shape:
                return None
            window = _strided_window(idx)
            if window is None:
                return None
            offset, stride = window
        key = (id(cell), str(t._device))
        known = self._cells.get(key)
        if known is None:
            # the cell is kept in the entry so that its id stays unique while saving
            known = self._cells[key] = (cell, self._new_storage(np.asarray(root), t))
        return known[1], offset, stride


def _parameter_class():
    """``leafgrad.nn.Parameter`` when it exists (it is written in leafgrad/nn/parameter.py)."""
    from .nn import parameter

    cls = getattr(parameter, "Parameter", None)
    return cls if isinstance(cls, type) and issubclass(cls, Tensor) else None


def _is_parameter(t: Tensor) -> bool:
    cls = _parameter_class()
    return cls is not None and isinstance(t, cls)


# --- map_location ------------------------------------------------------------------------------


class LoadedStorage:
    """What a callable ``map_location`` receives: one storage of the file and where it goes.

    ``map_location=lambda storage, loc: storage`` keeps it on the CPU; ``storage.cuda(1)`` moves
    it; returning None restores it where it was saved, as in PyTorch.
    """

    __slots__ = ("_nbytes", "_device")

    def __init__(self, nbytes: int, device: DEV.device) -> None:
        self._nbytes = nbytes
        self._device = device

    @property
    def device(self) -> DEV.device:
        return self._device

    def nbytes(self) -> int:
        return self._nbytes

    size = nbytes

    def cpu(self) -> LoadedStorage:
        return LoadedStorage(self._nbytes, DEV.CPU)

    def cuda(self, device=None, non_blocking: bool = False) -> LoadedStorage:
        if device is None:
            device = "cuda"
        elif isinstance(device, int):
            device = f"cuda:{device}"
        return LoadedStorage(self._nbytes, DEV.canonical(device))

    def to(self, device=None, non_blocking: bool = False, **kwargs) -> LoadedStorage:
        return LoadedStorage(self._nbytes, DEV.canonical(device))

    def __repr__(self) -> str:
        return f"LoadedStorage(nbytes={self._nbytes}, device={self._device!r})"


def _default_restore(location: str) -> DEV.device:
    """PyTorch's ``default_restore_location``: the device a storage tagged ``location`` goes to."""
    if location == "cpu":
        return DEV.CPU
    for backend in ("cuda", "tpu"):
        if location == backend or location.startswith(backend + ":"):
            dev = DEV.device(location)
            index = dev.index or 0
            count = DEV.cuda_count() if backend == "cuda" else len(DEV._platform_devices("tpu"))
            if count == 0:
                raise RuntimeError(
                    f"Attempting to deserialize object on a {backend.upper()} device but "
                    f"torch.{backend}.is_available() is False. If you are running on a CPU-only "
                    "machine, please use torch.load with map_location=torch.device('cpu') to map "
                    "your storages to the CPU."
                )
            if index >= count:
                raise RuntimeError(
                    f"Attempting to deserialize object on {backend.upper()} device {index} but "
                    f"torch.{backend}.device_count() is {count}. Please use torch.load with "
                    "map_location to map your storages to an existing device."
                )
            return DEV.canonical(DEV.device(backend, index))
    raise RuntimeError(
        "don't know how to restore data location of torch.storage.UntypedStorage (tagged with "
        f"{location})"
    )


def _restorer(map_location):
    """PyTorch's ``_get_restore_location``: ``(nbytes, location) -> device``."""
    if map_location is None:
        return lambda nbytes, loc: _default_restore(loc)
    if isinstance(map_location, dict):
        return lambda nbytes, loc: _default_restore(str(map_location.get(loc, loc)))
    if isinstance(map_location, bytes):
        map_location = map_location.decode()
    if isinstance(map_location, (str, DEV.device)):
        text = str(map_location)
        return lambda nbytes, loc: _default_restore(text)
    if not callable(map_location):
        raise TypeError(
            "map_location should be a string, a device, a dict or a callable "
            f"(storage, location) -> storage, not {type(map_location).__name__}"
        )

    def restore(nbytes, loc):
        result = map_location(LoadedStorage(nbytes, DEV.CPU), loc)
        if result is None:
            return _default_restore(loc)
        if isinstance(result, LoadedStorage):
            return result.device
        raise TypeError(
            "map_location returned an object of type "
            f"{type(result).__name__}; it must return the storage it was given (moved with "
            ".cpu(), .cuda() or .to()) or None"
        )

    return restore


# --- building loaded tensors -------------------------------------------------------------------


def _as_strided(x, size, stride, offset):
    return x.reshape(-1)[_index_map(size, stride, offset)]


def _make_as_strided_op():
    from .ops.table import OpDef

    # A view step over a flat storage: the chain of tensors loaded sharing one storage.
    return OpDef(
        "as_strided",
        _as_strided,
        "AsStridedBackward0",
        ("self",),
        lambda meta, static: ((None,), meta[0][0]),
        view=True,
    )


_AS_STRIDED = _make_as_strided_op()


class _StorageIn:
    """One storage read from a file: its bytes, where they go, and the tensors made from it."""

    __slots__ = ("raw", "dtype", "location", "device", "members", "cell")

    def __init__(self, raw: bytes, dtype: D.dtype | None, location: str) -> None:
        self.raw = raw
        self.dtype = dtype
        self.location = location
        self.device: DEV.device | None = None
        self.members: list = []  # [tensor, chain] of the tensors built from it
        self.cell = None


class _Builder:
    """Makes tensors from storages, sharing memory where a storage is used twice."""

    def __init__(self, map_location) -> None:
        self.restore = _restorer(map_location)
        self.swap = False  # the file's byte order is not this machine's
        self.owner: dict[int, tuple] = {}  # id(tensor) -> (tensor, its storage)

    def device_of(self, s: _StorageIn) -> DEV.device:
        if s.device is None:
            try:
                s.device = self.restore(len(s.raw), s.location)
            except Exception as exc:  # noqa: BLE001 - the user's own error, unchanged
                raise _Intended(exc) from None
        return s.device

    def set_byteorder(self, order: str) -> None:
        _check(order in ("little", "big"), f"byte order {order!r}")
        self.swap = order != sys.byteorder

    def flat(self, s: _StorageIn, dtype: D.dtype) -> np.ndarray:
        if len(s.raw) % dtype.itemsize:
            raise ValueError(f"a {dtype} storage of {len(s.raw)} bytes")
        values = np.frombuffer(s.raw, dtype.np)
        return values.byteswap() if self.swap and dtype.itemsize > 1 else values

    def tensor(self, s: _StorageIn, offset, shape, stride, dtype: D.dtype, requires_grad: bool):
        shape = tuple(int(n) for n in shape)
        stride = tuple(int(n) for n in stride)
        offset = int(offset)
        if len(shape) != len(stride) or min(shape, default=0) < 0 or offset < 0:
            raise ValueError(f"tensor of size {shape} and stride {stride} at offset {offset}")
        values = self.flat(s, dtype)
        numel = math.prod(shape)
        if numel and offset + sum((n - 1) * st for n, st in zip(shape, stride)) >= values.size:
            raise ValueError(f"tensor of size {shape} reads past its storage of {values.size}")
        if numel and min(stride, default=0) < 0:
            raise ValueError(f"negative stride {stride}")
        whole = offset == 0 and numel == values.size and stride == _contiguous(shape)
        chain = (
            ()
            if whole and shape == (values.size,)
            else ((_AS_STRIDED, (("size", shape), ("stride", stride), ("offset", offset)), None),)
        )
        data = values.reshape(shape) if whole else values[_index_map(shape, stride, offset)]
        device = self.device_of(s)
        array = jax.device_put(data, DEV.jax_device(device))
        t = Tensor._make(array, dtype, device, inference=grad_mode.is_inference_mode_enabled())
        t._version_counter.value = 1  # PyTorch's rebuild writes the storage in with ``set_``
        if stride != _contiguous(shape) and numel > 1:
            t.__dict__["_strides"] = stride  # PyTorch keeps the saved strides (Note [Strides])
        if requires_grad:
            t.requires_grad_(True)
        self._join(s, t, chain, values, dtype, device)
        self.owner[id(t)] = (t, s)
        return t

    def _join(self, s: _StorageIn, t: Tensor, chain, values, dtype, device) -> None:
        # Note [Shared storages]: the first tensor of a storage owns its values; a second one
        # makes the shared storage cell, the whole flat storage being the root.
        if s.members and (s.members[0][0]._dtype is not dtype):
            return  # reinterpreted bytes (untyped storages): a copy, not shared
        s.members.append([t, chain])
        if len(s.members) == 1:
            return
        if s.cell is None:
            root = jax.device_put(values, DEV.jax_device(device))
            s.cell = _storage.Storage(root)
            for m, c in s.members[:-1]:
                self._enter(s.cell, m, c)
        self._enter(s.cell, t, chain)

    @staticmethod
    def _enter(cell, t: Tensor, chain) -> None:
        d = t.__dict__
        old = d.get("_storage")
        if old is not None and old is not cell:
            old.discard(t)
        d["_storage"] = cell
        cell.add(t)
        if chain:
            d["_chain"] = chain
        else:
            d.pop("_chain", None)

    def parameter(self, t: Tensor, requires_grad: bool) -> Tensor:
        """``t`` as a Parameter (when leafgrad.nn.Parameter exists), taking its place."""
        cls = _parameter_class()
        if cls is None:
            if bool(requires_grad) != t._requires_grad:
                t.requires_grad_(bool(requires_grad))
            return t
        p = cls(t, bool(requires_grad))
        s = self.owner.get(id(t), (None, None))[1]
        if s is None:
            return p
        self.owner[id(p)] = (p, s)
        for entry in s.members:
            if entry[0] is t:
                entry[0] = p
                if s.cell is not None:
                    s.cell.discard(t)
                    self._enter(s.cell, p, entry[1])
                elif p.__dict__.get("_storage") is not None:
                    # the Parameter shares memory with ``t`` only, which nobody else holds
                    p.__dict__.pop("_storage").discard(p)
                    p.__dict__.pop("_chain", None)
        return p


# --- leafgrad's format: writing ----------------------------------------------------------------


def _encode(obj, plan: _Plan, active: set):
    """The JSON form of ``obj``; tensors become references into the plan's tensor table."""
    if obj is None or isinstance(obj, (bool, str)):
        return obj
    if isinstance(obj, int):
        return int(obj)
    if isinstance(obj, float):
        value = float(obj)
        return value if math.isfinite(value) else {"$": "float", "v": repr(value)}
    if isinstance(obj, Tensor):
        return {"$": "tensor", "i": plan.add(obj)}
    if isinstance(obj, complex):
        return {
            "$": "complex",
            "v": [_encode(obj.real, plan, active), _encode(obj.imag, plan, active)],
        }
    if isinstance(obj, D.dtype):
        return {"$": "dtype", "v": obj.name}
    if isinstance(obj, DEV.device):
        return {"$": "device", "v": str(obj)}
    if isinstance(obj, (bytes, bytearray)):
        return {"$": type(obj).__name__, "v": bytes(obj).hex()}
    if isinstance(obj, np.generic) and obj.shape == ():
        return _encode(obj.item(), plan, active)
    if id(obj) in active:
        raise ValueError("leafgrad.save: cannot save a container that contains itself")
    active.add(id(obj))
    try:
        if isinstance(obj, Size):
            return {"$": "size", "v": [int(n) for n in obj]}
        if type(obj) in (list, tuple, set, frozenset):
            return {"$": type(obj).__name__, "v": [_encode(x, plan, active) for x in obj]}
        if type(obj) in (dict, OrderedDict):
            out = {
                "$": "dict" if type(obj) is dict else "odict",
                "v": [[_encode(k, plan, active), _encode(v, plan, active)] for k, v in obj.items()],
            }
            attrs = getattr(obj, "__dict__", None)
            if attrs:
                out["attrs"] = [[k, _encode(v, plan, active)] for k, v in attrs.items()]
            return out
    finally:
        active.discard(id(obj))
    raise TypeError(
        f"leafgrad.save cannot save an object of type {_qualname(obj)}: it saves tensors, "
        "Parameters, dtypes, devices, sizes, None, bool, int, float, complex, "
        "str, bytes, and dicts, OrderedDicts, lists, tuples and sets of them"
    )


def _qualname(obj) -> str:
    return f"{type(obj).__module__}.{type(obj).__qualname__}"


def _little_endian(values: np.ndarray) -> bytes:
    if sys.byteorder == "big" and values.dtype.itemsize > 1:
        values = values.byteswap()
    return np.ascontiguousarray(values).tobytes()


def _open_for_write(f):
    if isinstance(f, (str, os.PathLike)):
        return open(f, "wb"), True
    if not hasattr(f, "write"):
        raise AttributeError(f"'{type(f).__name__}' object has no attribute 'write'")
    return f, False


def _write_zip(f, records) -> None:
    """Write ``(name, bytes)`` records into an uncompressed zip, each payload 64-byte aligned."""
    out, close = _open_for_write(f)
    try:
        with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED, allowZip64=True) as z:
            for name, payload in records:
                info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
                info.compress_type = zipfile.ZIP_STORED
                start = z.fp.tell() if z.fp.seekable() else 0
                # local header (30 bytes) + name + extra field: pad with an extra field so the
                # payload starts on an alignment boundary, as PyTorch's writer does.
                head = start + 30 + len(name.encode()) + 4
                pad = (-head) % _ALIGN
                info.extra = struct.pack("<HH", 0x4246, pad) + b"Z" * pad  # "FB" padding field
                z.writestr(info, payload)
    finally:
        if close:
            out.close()


def save(
    obj: Any,
    f,
    pickle_module: Any = None,
    pickle_protocol: int = 2,
    _use_new_zipfile_serialization: bool = True,
    _disable_byteorder_record: bool = False,
    *,
    format: str = "leafgrad",  # noqa: A002
) -> None:
    """Save a tensor or a nested dict/list/tuple of tensors and Python values to ``f``.

    ``f`` is a path or a binary file. ``format="leafgrad"`` (the default) writes a zip of raw
    arrays and a JSON manifest; ``format="torch"`` writes PyTorch's format, read by
    ``torch.load(f, weights_only=True)``. Tensors sharing memory stay shared.

    Example::

        >>> leafgrad.save(model.state_dict(), "model.pt")
        >>> model.load_state_dict(leafgrad.load("model.pt"))
    """
    if format == "torch":
        save_torch(obj, f)
        return
    if format != _FORMAT:
        raise ValueError(f"leafgrad.save: format must be 'leafgrad' or 'torch', got {format!r}")
    if not _use_new_zipfile_serialization:
        raise NotImplementedError(
            "leafgrad.save writes zip files only (_use_new_zipfile_serialization=False is "
            "PyTorch's legacy format)"
        )
    plan = _Plan()
    tree = _encode(obj, plan, set())
    manifest = {
        "format": _FORMAT,
        "version": _VERSION,
        "byteorder": "little",
        "storages": [
            {"dtype": dtype.name, "numel": int(values.size), "device": device}
            for values, dtype, device in plan.storages
        ],
        "tensors": [
            {
                "storage": sid,
                "offset": offset,
                "shape": [int(n) for n in t._data.shape],
                "stride": list(stride),
                "dtype": t._dtype.name,
                "requires_grad": bool(t._requires_grad),
                "parameter": _is_parameter(t),
            }
            for t, sid, offset, stride in plan.tensors
        ],
        "object": tree,
    }
    records = [(_MANIFEST, json.dumps(manifest).encode())]
    records += [(f"data/{k}", _little_endian(v)) for k, (v, _, _) in enumerate(plan.storages)]
    _write_zip(f, records)


# --- leafgrad's format: reading ----------------------------------------------------------------


def _check(cond: bool, what: str) -> None:
    if not cond:
        raise ValueError(what)


class _LeafgradReader:
    def __init__(self, z: zipfile.ZipFile, builder: _Builder) -> None:
        self.z = z
        self.builder = builder
        m = json.loads(z.read(_MANIFEST).decode())
        _check(isinstance(m, dict) and m.get("format") == _FORMAT, "not a leafgrad manifest")
        version = m.get("version")
        if not isinstance(version, int) or version > _VERSION:
            raise _Intended(
                RuntimeError(
                    f"leafgrad.load: the file has format version {version!r}; this leafgrad "
                    f"reads versions up to {_VERSION}"
                )
            )
        builder.set_byteorder(m.get("byteorder", "little"))
        self.storages = []
        for k, s in enumerate(m["storages"]):
            dtype = D._BY_NAME[s["dtype"]]
            raw = z.read(f"data/{k}")
            _check(len(raw) == int(s["numel"]) * dtype.itemsize, f"storage {k} has wrong size")
            _check(isinstance(s["device"], str), "device")
            self.storages.append(_StorageIn(raw, dtype, s["device"]))
        self.tensor_specs = m["tensors"]
        _check(isinstance(self.tensor_specs, list), "tensors")
        self.tensors: dict[int, Tensor] = {}
        self.tree = m["object"]

    def tensor(self, i: int) -> Tensor:
        t = self.tensors.get(i)
        if t is None:
            spec = self.tensor_specs[i]
            s = self.storages[spec["storage"]]
            dtype = D._BY_NAME[spec["dtype"]]
            _check(dtype is s.dtype, "tensor dtype differs from its storage's")
            rg = spec["requires_grad"]
            _check(isinstance(rg, bool), "requires_grad")
            if spec.get("parameter"):
                where = (spec["offset"], spec["shape"], spec["stride"])
                t = self.builder.parameter(self.builder.tensor(s, *where, dtype, False), rg)
            else:
                t = self.builder.tensor(s, spec["offset"], spec["shape"], spec["stride"], dtype, rg)
            self.tensors[i] = t
        return t

    def decode(self, node):
        if node is None or isinstance(node, (bool, int, float, str)):
            return node
        _check(isinstance(node, dict), f"unexpected {type(node).__name__} in the manifest")
        tag, v = node["$"], node.get("v")
        if tag == "tensor":
            _check(isinstance(node["i"], int) and node["i"] >= 0, "tensor index")
            return self.tensor(node["i"])
        if tag == "float":
            _check(v in ("inf", "-inf", "nan"), "float")
            return float(v)
        if tag == "complex":
            return complex(self.decode(v[0]), self.decode(v[1]))
        if tag == "dtype":
            return D._BY_NAME[v]
        if tag == "device":
            return DEV.device(v)
        if tag in ("bytes", "bytearray"):
            return (bytes if tag == "bytes" else bytearray)(bytes.fromhex(v))
        if tag == "size":
            _check(all(isinstance(n, int) for n in v), "size")
            return Size(v)
        if tag in ("list", "tuple", "set", "frozenset"):
            _check(isinstance(v, list), tag)
            items = [self.decode(x) for x in v]
            return {"list": list, "tuple": tuple, "set": set, "frozenset": frozenset}[tag](items)
        if tag in ("dict", "odict"):
            out = {} if tag == "dict" else OrderedDict()
            for k, x in v:
                out[self.decode(k)] = self.decode(x)
            for k, x in node.get("attrs", ()):
                _check(isinstance(k, str) and not k.startswith("__"), "attribute name")
                setattr(out, k, self.decode(x))
            return out
        raise ValueError(f"unknown entry {tag!r} in the manifest")


# --- PyTorch's format: reading -----------------------------------------------------------------


class _StorageType:
    """A ``torch.FloatStorage``-like global: only its dtype matters (None: untyped bytes)."""

    __slots__ = ("dtype", "name")

    def __init__(self, name: str, dtype: D.dtype | None) -> None:
        self.name = name
        self.dtype = dtype

    def __repr__(self) -> str:
        return f"torch.{self.name}"


_STORAGE_TYPES = {f"{d._legacy}Storage": d for d in D.ALL}
_FLOAT8 = ("float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e8m0fnu")


class _TorchUnpickler(pickle._Unpickler):
    """Reads ``data.pkl`` of a ``torch.save`` file; knows no globals but a state dict's.

    The pure-Python unpickler is used because every opcode goes through ``dispatch`` here:
    opcodes outside the table (those that build arbitrary objects) raise, and ``BUILD`` sets
    attributes on OrderedDicts only (a state dict's ``_metadata``).
    """

    def __init__(self, data: bytes, reader: _TorchReader) -> None:
        super().__init__(io.BytesIO(data), encoding="utf-8")
        self.reader = reader

    def find_class(self, module: str, name: str):
        if module == "__builtin__":
            module = "builtins"
        found = self.reader.globals(module, name)
        if found is None:
            full = f"{module}.{name}"
            raise pickle.UnpicklingError(
                _WEIGHTS_ONLY.format(
                    f"Unsupported global: GLOBAL {full} was not an allowed global by default."
                )
            )
        return found

    def persistent_load(self, pid):
        return self.reader.storage(pid)

    def _build(self):
        state = self.stack.pop()
        inst = self.stack[-1]
        if type(inst) is not OrderedDict or not isinstance(state, dict):
            raise pickle.UnpicklingError(
                _WEIGHTS_ONLY.format(f"Can only build OrderedDict, but got {type(inst)}")
            )
        for k, v in state.items():
            if not isinstance(k, str) or k.startswith("__"):
                raise pickle.UnpicklingError(_WEIGHTS_ONLY.format(f"bad attribute name {k!r}"))
            setattr(inst, k, v)

    def _unsupported(self):
        raise pickle.UnpicklingError(_WEIGHTS_ONLY.format("Unsupported operand"))


def _allowed_dispatch() -> dict:
    names = (
        "PROTO FRAME STOP MARK POP POP_MARK DUP NONE NEWTRUE NEWFALSE INT BININT BININT1 BININT2 "
        "LONG LONG1 LONG4 FLOAT BINFLOAT STRING BINSTRING SHORT_BINSTRING BINBYTES SHORT_BINBYTES "
        "BINBYTES8 BYTEARRAY8 UNICODE BINUNICODE SHORT_BINUNICODE BINUNICODE8 EMPTY_TUPLE TUPLE "
        "TUPLE1 TUPLE2 TUPLE3 EMPTY_LIST LIST APPEND APPENDS EMPTY_DICT DICT SETITEM SETITEMS "
        "EMPTY_SET ADDITEMS FROZENSET GET BINGET LONG_BINGET PUT BINPUT LONG_BINPUT MEMOIZE GLOBAL "
        "STACK_GLOBAL REDUCE BINPERSID PERSID"
    ).split()
    base = pickle._Unpickler.dispatch
    table = _Dispatch()
    for n in names:
        code = getattr(pickle, n)[0]
        table[code] = base[code]
    table[pickle.BUILD[0]] = _TorchUnpickler._build
    return table


class _Dispatch(dict):
    def __missing__(self, code):
        return _TorchUnpickler._unsupported


_TorchUnpickler.dispatch = _allowed_dispatch()


def _encode_bytes(text: str, encoding: str = "utf-8") -> bytes:
    if encoding != "latin1":
        raise pickle.UnpicklingError(_WEIGHTS_ONLY.format("_codecs.encode of a non-latin1 text"))
    return text.encode("latin1")


def _make_set(items=()):
    return set(items)


def _make_complex(real=0.0, imag=0.0):
    if not all(isinstance(x, (int, float)) for x in (real, imag)):
        raise pickle.UnpicklingError(_WEIGHTS_ONLY.format("complex of non-numbers"))
    return complex(real, imag)


def _make_bytearray(*args):
    if args and not isinstance(args[0], (bytes, bytearray, str, list)):
        raise pickle.UnpicklingError(_WEIGHTS_ONLY.format("bytearray of an unexpected value"))
    return bytearray(*args)


def _make_device(*args):
    return DEV.device(*args)


def _make_size(dims=()):
    return Size(int(n) for n in dims)


def _ordered_dict(*args):
    if args and not isinstance(args[0], (list, tuple, dict)):
        raise pickle.UnpicklingError(_WEIGHTS_ONLY.format("OrderedDict of an unexpected value"))
    return OrderedDict(*args)


def _get_layout(name: str) -> str:
    if name != "torch.strided":
        raise _Intended(RuntimeError(f"leafgrad.load: tensors of layout {name} are not supported"))
    return name


class _TensorTypes:
    Tensor = object()
    Parameter = object()


class _TorchReader:
    def __init__(self, z: zipfile.ZipFile, prefix: str, builder: _Builder) -> None:
        self.z = z
        self.prefix = prefix
        self.builder = builder
        self.loaded: dict[str, _StorageIn] = {}
        if prefix + "byteorder" in z.namelist():
            builder.set_byteorder(z.read(prefix + "byteorder").decode())
        rebuild = {
            "_rebuild_tensor_v2": self.rebuild_tensor_v2,
            "_rebuild_tensor": self.rebuild_tensor,
            "_rebuild_tensor_v3": self.rebuild_tensor_v3,
            "_rebuild_parameter": self.rebuild_parameter,
            "_rebuild_parameter_with_state": self.rebuild_parameter_with_state,
        }
        self.table = {
            ("collections", "OrderedDict"): _ordered_dict,
            ("torch.serialization", "_get_layout"): _get_layout,
            ("torch", "Size"): _make_size,
            ("torch", "device"): _make_device,
            ("torch", "Tensor"): _TensorTypes.Tensor,
            ("torch.nn.parameter", "Parameter"): _TensorTypes.Parameter,
            ("torch._tensor", "_rebuild_from_type_v2"): self.rebuild_from_type_v2,
            ("_codecs", "encode"): _encode_bytes,
            ("builtins", "set"): _make_set,
            ("builtins", "complex"): _make_complex,
            ("builtins", "bytearray"): _make_bytearray,
        }
        for name, fn in rebuild.items():
            self.table["torch._utils", name] = fn
        for d in D.ALL:
            self.table["torch", d.name] = d
        for alias, d in D.ALIASES.items():
            self.table["torch", alias] = d
        for name, d in _STORAGE_TYPES.items():
            self.table["torch", name] = _StorageType(name, d)
        self.table["torch", "UntypedStorage"] = _StorageType("UntypedStorage", None)
        self.table["torch.storage", "UntypedStorage"] = _StorageType("UntypedStorage", None)

    def globals(self, module: str, name: str):
        found = self.table.get((module, name))
        if found is None and module == "torch" and (name in _FLOAT8 or name.startswith("uint")):
            raise _Intended(RuntimeError(f"leafgrad.load: leafgrad has no dtype torch.{name}"))
        return found

    def storage(self, pid):
        if not (isinstance(pid, tuple) and len(pid) == 5 and pid[0] == "storage"):
            raise pickle.UnpicklingError(
                _WEIGHTS_ONLY.format("unsupported persistent id encountered")
            )
        _, stype, key, location, numel = pid
        _check(isinstance(stype, _StorageType), f"storage type {stype!r}")
        _check(isinstance(key, str) and isinstance(location, str), "storage key")
        s = self.loaded.get(key)
        if s is None:
            raw = self.z.read(f"{self.prefix}data/{key}")
            itemsize = 1 if stype.dtype is None else stype.dtype.itemsize
            _check(len(raw) == int(numel) * itemsize, f"storage {key} has the wrong size")
            s = self.loaded[key] = _StorageIn(raw, stype.dtype, location)
        return _TypedStorage(s, stype.dtype)

    def _tensor(self, storage, offset, size, stride, requires_grad, dtype=None):
        _check(isinstance(storage, _TypedStorage), "tensor without a storage")
        dtype = storage.dtype if dtype is None else dtype
        _check(isinstance(dtype, D.dtype), "tensor dtype")
        _check(isinstance(requires_grad, bool), "requires_grad")
        return self.builder.tensor(storage.s, offset, size, stride, dtype, requires_grad)

    def rebuild_tensor(self, storage, offset, size, stride):
        return self._tensor(storage, offset, size, stride, False)

    def rebuild_tensor_v2(
        self, storage, offset, size, stride, requires_grad, backward_hooks, metadata=None
    ):
        if metadata:
            raise _Intended(
                RuntimeError(f"leafgrad.load: tensor metadata {metadata!r} is not supported")
            )
        return self._tensor(storage, offset, size, stride, requires_grad)

    def rebuild_tensor_v3(
        self, storage, offset, size, stride, requires_grad, backward_hooks, dtype, metadata=None
    ):
        if metadata:
            raise _Intended(
                RuntimeError(f"leafgrad.load: tensor metadata {metadata!r} is not supported")
            )
        return self._tensor(storage, offset, size, stride, requires_grad, dtype)

    def rebuild_parameter(self, data, requires_grad, backward_hooks):
        _check(isinstance(data, Tensor) and isinstance(requires_grad, bool), "Parameter")
        return self.builder.parameter(data, requires_grad)

    def rebuild_parameter_with_state(self, data, requires_grad, backward_hooks, state):
        p = self.rebuild_parameter(data, requires_grad, backward_hooks)
        return self._set_state(p, state)

    def rebuild_from_type_v2(self, func, new_type, args, state):
        _check(func in (self.rebuild_tensor_v2, self.rebuild_tensor, self.rebuild_tensor_v3), "f")
        _check(new_type in (_TensorTypes.Tensor, _TensorTypes.Parameter), "tensor type")
        t = func(*args)
        if new_type is _TensorTypes.Parameter:
            t = self.rebuild_parameter(t, t._requires_grad, OrderedDict())
        return self._set_state(t, state)

    @staticmethod
    def _set_state(t: Tensor, state):
        # Python attributes a user set on the tensor: plain names only, nothing of Tensor's own.
        if isinstance(state, tuple) and len(state) == 2:
            state = {**(state[0] or {}), **(state[1] or {})}
        for k, v in (state or {}).items():
            _check(isinstance(k, str), "attribute name")
            if k.startswith("_") or hasattr(type(t), k):
                raise pickle.UnpicklingError(
                    _WEIGHTS_ONLY.format(f"refusing to set the tensor attribute {k!r}")
                )
            setattr(t, k, v)
        return t


class _TypedStorage:
    __slots__ = ("s", "dtype")

    def __init__(self, s: _StorageIn, dtype: D.dtype | None) -> None:
        self.s = s
        self.dtype = dtype


# --- PyTorch's format: writing -----------------------------------------------------------------


class _TorchPickler:
    """Writes pickle protocol 2 opcodes for a state dict the way ``torch.save`` does."""

    def __init__(self, plan: _Plan) -> None:
        self.plan = plan
        self.out = bytearray(b"\x80\x02")
        self.memo: dict[int, int] = {}
        self.keep: list = []  # objects whose ids are memo keys stay alive while writing
        self.globals: dict[tuple, int] = {}

    def put(self, obj) -> None:
        k = len(self.memo) + len(self.globals)
        self.memo[id(obj)] = k
        self.keep.append(obj)
        self._put(k)

    def _put(self, k: int) -> None:
        self.out += b"q" + bytes([k]) if k < 256 else b"r" + struct.pack("<I", k)

    def get(self, k: int) -> None:
        self.out += b"h" + bytes([k]) if k < 256 else b"j" + struct.pack("<I", k)

    def global_(self, module: str, name: str) -> None:
        k = self.globals.get((module, name))
        if k is not None:
            self.get(k)
            return
        self.out += b"c" + f"{module}\n{name}\n".encode()
        k = self.globals[module, name] = len(self.memo) + len(self.globals)
        self._put(k)

    def tuple_(self, items) -> None:
        if not items:
            self.out += b")"
            return
        if len(items) > 3:
            self.out += b"("
        for x in items:
            self.save(x)
        self.out += {1: b"\x85", 2: b"\x86", 3: b"\x87"}.get(len(items), b"t")

    def call(self, module: str, name: str, args) -> None:
        self.global_(module, name)
        self.tuple_(args)
        self.out += b"R"

    def save(self, obj) -> None:
        out = self.out
        if obj is None:
            out += b"N"
        elif obj is True or obj is False:
            out += b"\x88" if obj else b"\x89"
        elif isinstance(obj, int) and not isinstance(obj, bool):
            obj = int(obj)
            if 0 <= obj < 256:
                out += b"K" + bytes([obj])
            elif 0 <= obj < 65536:
                out += b"M" + struct.pack("<H", obj)
            elif -(2**31) <= obj < 2**31:
                out += b"J" + struct.pack("<i", obj)
            else:
                data = pickle.encode_long(obj)
                out += b"\x8a" + bytes([len(data)]) + data
        elif isinstance(obj, float):
            out += b"G" + struct.pack(">d", float(obj))
        elif isinstance(obj, str):
            data = obj.encode("utf-8", "surrogatepass")
            out += b"X" + struct.pack("<I", len(data)) + data
        elif id(obj) in self.memo:
            self.get(self.memo[id(obj)])
        elif isinstance(obj, Tensor):
            self.tensor(obj)
        elif isinstance(obj, D.dtype):
            self.global_("torch", obj.name)
        elif isinstance(obj, complex):
            self.call("builtins", "complex", (obj.real, obj.imag))
        elif isinstance(obj, DEV.device):
            args = (obj.type,) if obj.index is None else (obj.type, obj.index)
            self.call("torch", "device", args)
        elif type(obj) is bytes:
            self.call("_codecs", "encode", (obj.decode("latin1"), "latin1"))
        elif isinstance(obj, np.generic) and obj.shape == ():
            self.save(obj.item())
        elif isinstance(obj, Size):
            self.call("torch", "Size", (tuple(int(n) for n in obj),))
        elif type(obj) is tuple:
            self.tuple_(obj)
        elif type(obj) is set:
            self.call("builtins", "set", (list(obj),))
        elif type(obj) is list:
            out += b"]"
            self.put(obj)
            self.items(obj, b"e", self.save)
        elif type(obj) in (dict, OrderedDict):
            if type(obj) is dict:
                out += b"}"
            else:
                self.call("collections", "OrderedDict", ())
            self.put(obj)
            self.items(list(obj.items()), b"u", self.pair)
            attrs = getattr(obj, "__dict__", None)
            if attrs:  # a state dict's ``_metadata``, set by BUILD as torch.save does
                self.out += b"}"
                self.items(list(attrs.items()), b"u", self.pair)
                self.out += b"b"
        else:
            raise TypeError(
                f"leafgrad.save(format='torch') cannot save an object of type {_qualname(obj)}"
            )

    def pair(self, kv) -> None:
        self.save(kv[0])
        self.save(kv[1])

    def items(self, items, op: bytes, emit) -> None:
        for start in range(0, len(items), 1000):  # batches, as pickle does
            self.out += b"("
            for x in items[start : start + 1000]:
                emit(x)
            self.out += op

    def tensor(self, t: Tensor) -> None:
        if _is_parameter(t):
            self.global_("torch._utils", "_rebuild_parameter")
            self.rebuild(t, False)
            self.save(bool(t._requires_grad))
            self.call("collections", "OrderedDict", ())
            self.out += b"\x87R"
        else:
            self.rebuild(t, t._requires_grad)
        self.put(t)

    def rebuild(self, t: Tensor, requires_grad: bool) -> None:
        _, sid, offset, stride = self.plan.tensors[self.plan.add(t)]
        _, dtype, device = self.plan.storages[sid]
        numel = int(self.plan.storages[sid][0].size)
        self.global_("torch._utils", "_rebuild_tensor_v2")
        self.out += b"(("
        self.save("storage")
        self.global_("torch", f"{dtype._legacy}Storage")
        self.save(str(sid))
        self.save(device)
        self.save(numel)
        self.out += b"tQ"
        self.save(offset)
        self.tuple_(tuple(int(n) for n in t._data.shape))
        self.tuple_(tuple(stride))
        self.save(bool(requires_grad))
        self.call("collections", "OrderedDict", ())
        self.out += b"tR"


def save_torch(obj: Any, f) -> None:
    """Save ``obj`` in PyTorch's zip format, for ``torch.load(f, weights_only=True)``."""
    plan = _Plan()
    pickler = _TorchPickler(plan)
    pickler.save(obj)
    pickler.out += b"."
    prefix = "archive/"
    records = [
        (prefix + "data.pkl", bytes(pickler.out)),
        (prefix + ".format_version", b"1"),
        (prefix + ".storage_alignment", str(_ALIGN).encode()),
        (prefix + "byteorder", b"little"),
    ]
    records += [
        (f"{prefix}data/{k}", _little_endian(v)) for k, (v, _, _) in enumerate(plan.storages)
    ]
    records.append((prefix + "version", b"3\n"))
    records.append((prefix + ".data/serialization_id", b"0" * 40))
    _write_zip(f, records)


# --- load ----------------------------------------------------------------------------------------


def _open_zip(f) -> zipfile.ZipFile:
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as fh:
            data = fh.read()
    else:
        if not hasattr(f, "read"):
            raise AttributeError(f"'{type(f).__name__}' object has no attribute 'read'")
        data = f.read()
    if data[:4] != b"PK\x03\x04":
        if data[:2] == b"\x80\x02" or data[:1] == b"\x80":
            raise _Intended(
                RuntimeError(
                    "leafgrad.load reads zip checkpoints only: this file is in PyTorch's legacy "
                    "format (torch.save(..., _use_new_zipfile_serialization=False)); re-save it "
                    "with a current torch.save"
                )
            )
        raise ValueError("it is not a zip archive (neither a leafgrad nor a PyTorch checkpoint)")
    try:
        return zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile:
        raise _Intended(RuntimeError(_CENTRAL_DIRECTORY)) from None


def _torch_prefix(names) -> str | None:
    for name in names:
        if name.endswith("data.pkl") and name.count("/") == 1:
            return name[: -len("data.pkl")]
    return None


def load(
    f,
    map_location=None,
    pickle_module: Any = None,
    *,
    weights_only: bool = True,
    mmap=None,
    **pickle_load_args,
) -> Any:
    """Load what ``save`` or ``torch.save`` wrote to ``f`` (a path or a binary file).

    No code from the file runs: leafgrad's format has no pickle, and PyTorch files are read by an
    unpickler that knows only a state dict's globals (``weights_only=False`` unlocks nothing
    more). ``map_location`` is PyTorch's: ``'cpu'``, a device, a dict from saved to new location
    strings, or a callable ``(storage, location)`` returning ``storage.cpu()``,
    ``storage.cuda(i)``, the storage itself (the CPU) or None (where it was saved).

    Example::

        >>> state = leafgrad.load("model.pt", map_location="cpu")
    """
    builder = _Builder(map_location)
    z = _parse("cannot read it as a zip archive", _open_zip, f)
    names = _parse("cannot list the archive", z.namelist)
    if _MANIFEST in names:
        reader = _parse("the manifest", _LeafgradReader, z, builder)
        return _parse("the manifest", reader.decode, reader.tree)
    prefix = _torch_prefix(names)
    if prefix is None:
        raise _corrupt("the zip holds neither leafgrad.json nor <name>/data.pkl")
    reader = _parse("the PyTorch records", _TorchReader, z, prefix, builder)
    data = _parse("data.pkl", z.read, prefix + "data.pkl")
    return _parse("data.pkl", _TorchUnpickler(data, reader).load)
