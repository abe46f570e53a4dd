"""Devices: PyTorch's ``device`` objects mapped onto JAX's platforms, plus a virtual cuda device.

``cpu`` is JAX's CPU, ``cuda[:i]`` JAX's GPU platform and ``tpu[:i]`` its TPU platform. With the
environment variable ``LEAFGRAD_VIRTUAL_CUDA=N`` (N >= 1) and no GPU, ``cuda:0`` ... ``cuda:N-1``
are virtual devices whose arrays live on the host: they behave as separate devices (copies are
recorded ops, mixing devices raises) so PyTorch's cuda examples run anywhere.
"""

from __future__ import annotations

import functools
import operator as _operator
import os

import jax

from . import _errors as E

_KNOWN_TYPES = tuple(t.strip() for t in E.DEVICE_TYPES.split(","))


def _is_index(x) -> bool:
    """A NumPy integer (PyTorch's parser reads one as an int; other ``__index__`` objects not)."""
    import numpy as np

    return isinstance(x, np.integer)


class device:
    """``torch.device``: a device type and an optional index, e.g. ``device('cuda', 0)``."""

    __slots__ = ("type", "index")

    def __init__(self, type: str | device, index: int | None = None) -> None:  # noqa: A002
        if isinstance(type, device):
            self.type, self.index = type.type, type.index
            return
        if isinstance(type, int) and not isinstance(type, bool) or _is_index(type):
            # torch.device(0) means the current accelerator, cuda here (which must exist)
            index = _operator.index(type)
            if index < 0:
                raise RuntimeError("Device index must not be negative")
            if cuda_count() == 0:
                raise RuntimeError("Cannot access accelerator device when none is available.")
            self.type, self.index = "cuda", index
            return
        if not isinstance(type, str):
            raise TypeError(
                f"device() received an invalid combination of arguments - got ({_tname(type)}), "
                "but expected one of:\n * (torch.device device)\n      didn't match because "
                f"some of the arguments have invalid types: (!{E._described(type)}!)\n"
                " * (str type, int index = -1)\n"
            )
        if index is not None:
            if isinstance(index, bool) or not isinstance(index, int) and not _is_index(index):
                raise TypeError(
                    f"device(): argument 'index' (position 2) must be int, not {_tname(index)}"
                )
            index = int(index)
            if index < 0:
                raise RuntimeError("Device index must not be negative")
        name, index_str = _parse(type)
        if name not in _KNOWN_TYPES:
            raise RuntimeError(E.DEVICE_UNKNOWN.format(name))
        if index_str:
            if index is not None:
                raise RuntimeError(
                    "type (string) must not include an index because index was passed "
                    "explicitly: " + type
                )
            index = int(index_str)
        self.type, self.index = name, index

    def __repr__(self) -> str:
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other) -> bool:
        if not isinstance(other, device):
            return NotImplemented
        return self.type == other.type and self.index == other.index

    def __hash__(self) -> int:
        return hash((self.type, self.index))

    def __reduce__(self):
        return (device, (self.type, self.index))


def _parse(text: str) -> tuple[str, str]:
    """c10's device-string parser: ``([a-zA-Z_]+)(?::([1-9]\\d*|0))?`` with its errors."""
    if not text:
        raise RuntimeError("Device string must not be empty")
    name, colon, index = text.partition(":")
    ok = bool(name) and all(c.isascii() and (c.isalpha() or c == "_") for c in name)
    if colon:
        ok = ok and index.isascii() and index.isdigit() and (index == "0" or index[0] != "0")
    if not ok:
        raise RuntimeError(E.DEVICE_INVALID.format(text))
    return name, index


def _tname(x) -> str:
    return E.py_typename(x)


CPU = device("cpu")
META = device("meta")

# Note [Meta tensors]: a tensor on the meta device has a shape and a dtype and no values. Its
# ``_data`` is a ``MetaData`` (a ``jax.ShapeDtypeStruct`` that refuses NumPy); an op on meta
# tensors runs its forward under ``jax.eval_shape`` (dispatch's plans), so shapes, dtypes, views
# and nodes come out as PyTorch's, and nothing is computed or allocated. Backward through meta
# tensors and reading their values raise.
META_NO_DATA = "Cannot copy out of meta tensor; no data!"


class MetaData(jax.ShapeDtypeStruct):
    """A meta tensor's ``_data``: a shape and a dtype; reading values raises (an op that reads
    them on the host cannot run on meta tensors, as in PyTorch)."""

    def __array__(self, *args, **kwargs):
        raise NotImplementedError(META_NO_DATA)


def meta_data(shape, dtype) -> MetaData:
    return MetaData(tuple(shape), dtype)


def virtual_cuda_count() -> int:
    """How many virtual cuda devices ``LEAFGRAD_VIRTUAL_CUDA`` asks for (0 when unset)."""
    value = os.environ.get("LEAFGRAD_VIRTUAL_CUDA", "").strip().lower()
    if value in ("", "0", "false", "no", "off"):
        return 0
    if value in ("true", "yes", "on"):
        return 1
    try:
        return max(int(value), 0)
    except ValueError:
        return 1


@functools.cache
def _platform_devices(platform: str) -> tuple:
    try:
        return tuple(jax.devices(platform))
    except RuntimeError:
        return ()


def gpu_count() -> int:
    return len(_platform_devices("gpu"))


_BUILT: list = []


def cuda_built() -> bool:
    """Whether JAX has a GPU backend installed (a CUDA or ROCm plugin in ``jax_plugins``): the
    counterpart of a PyTorch built with CUDA, which says there is no GPU rather than that it was
    built without CUDA."""
    if not _BUILT:
        import importlib
        import pkgutil

        try:
            plugins = importlib.import_module("jax_plugins")
            names = [m.name for m in pkgutil.iter_modules(plugins.__path__)]
        except ImportError:
            names = []
        _BUILT.append(any("cuda" in n or "rocm" in n for n in names) or gpu_count() > 0)
    return _BUILT[0]


def no_cuda_error() -> Exception:
    """The error of a cuda device asked for where there is none: PyTorch's CPU build's
    ``AssertionError`` when JAX has no GPU backend installed, its CUDA build's ``RuntimeError``
    when one is installed but finds no GPU; with the virtual device's hint on a second line."""
    if cuda_built():
        return RuntimeError(E.NO_CUDA + "\n" + E.HELP_NO_CUDA)
    return AssertionError(E.CUDA_NOT_BUILT + "\n" + E.HELP_NO_CUDA)


def is_virtual(dev: device) -> bool:
    return dev.type == "cuda" and gpu_count() == 0


def canonical(dev) -> device:
    """The device a tensor reports: a string or index becomes a ``device`` with an index."""
    if dev is None:
        return CPU
    if not isinstance(dev, device):
        dev = device(dev)
    if dev.type == "cpu":
        return CPU
    if dev.type == "meta":  # Note [Meta tensors]
        return META
    if dev.type in ("cuda", "tpu"):
        index = 0 if dev.index is None else dev.index
        _check_available(dev.type, index)
        return device(dev.type, index)
    raise RuntimeError(E.UNSUPPORTED_DEVICE.format(dev.type))


def cuda_count() -> int:
    return gpu_count() or virtual_cuda_count()


def _check_available(dev_type: str, index: int) -> None:
    if dev_type == "cuda":
        count = cuda_count()
        if count == 0:
            raise no_cuda_error()
    else:
        count = len(_platform_devices("tpu"))
        if count == 0:
            raise RuntimeError(E.UNSUPPORTED_DEVICE.format(dev_type))
    if index >= count:
        raise RuntimeError(E.DEVICE_ORDINAL)


def jax_device(dev: device):
    """The JAX device that holds the arrays of tensors on ``dev``."""
    if dev.type == "meta":
        raise NotImplementedError(META_NO_DATA)
    if dev.type == "cpu" or (dev.type == "cuda" and gpu_count() == 0):
        return _platform_devices("cpu")[0]
    platform = "gpu" if dev.type == "cuda" else dev.type
    return _platform_devices(platform)[dev.index]
