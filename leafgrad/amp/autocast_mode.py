"""``torch.autocast`` / ``torch.amp.autocast`` and ``custom_fwd``/``custom_bwd`` (Note [Autocast]
in ``leafgrad/_autocast.py``)."""

from __future__ import annotations

import collections.abc
import functools
import warnings

import numpy as np

import leafgrad as torch

__all__ = [
    "autocast_decorator",
    "autocast",
    "is_autocast_available",
    "custom_fwd",
    "custom_bwd",
]

_AVAILABLE = frozenset({"cpu", "cuda", "xpu", "ipu", "hpu", "xla", "mps", "mtia", "maia"})


def _device_type(device_type: str) -> str:
    """PyTorch's parse of a device type (its error for an unknown one)."""
    return torch.device(device_type).type


def is_autocast_available(device_type: str) -> bool:
    """Whether autocast can be used on ``device_type``."""
    return _device_type(device_type) in _AVAILABLE


def autocast_decorator(autocast_instance, func):
    @functools.wraps(func)
    def decorate_autocast(*args, **kwargs):
        with autocast_instance:
            return func(*args, **kwargs)

    return decorate_autocast


class autocast:
    """Run a region in mixed precision: the listed ops cast their inputs (Note [Autocast]).

    ``device_type`` ``"cpu"`` uses ``torch.bfloat16`` unless ``dtype`` says ``torch.float16``.
    A context manager or a decorator, as PyTorch's."""

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        self.fast_dtype = torch.get_autocast_dtype(device_type) if dtype is None else dtype
        self.device = device_type
        if not is_autocast_available(self.device):
            raise RuntimeError(
                f"User specified an unsupported autocast device_type '{self.device}'"
            )
        supported = [torch.bfloat16, torch.float16]
        self._cache_enabled = (
            torch.is_autocast_cache_enabled() if cache_enabled is None else cache_enabled
        )
        name = self.device.upper()
        if enabled:
            if self.device == "cuda":
                if not torch.cuda.is_available():
                    warnings.warn(
                        "CUDA is not available or torch_xla is imported. Disabling autocast.",
                        stacklevel=2,
                    )
                    enabled = False
                else:
                    raise NotImplementedError(
                        "leafgrad: autocast on cuda is not implemented (its op lists differ "
                        "from the CPU's); run the region in one dtype instead"
                    )
            elif self.fast_dtype not in supported:
                warnings.warn(
                    f"In {name} autocast, but the target dtype is not supported. Disabling "
                    f"autocast.\n{name} Autocast only supports dtypes of "
                    + ", ".join(map(str, supported))
                    + " currently.",
                    stacklevel=2,
                )
                enabled = False
        self._enabled = enabled

    def __enter__(self):
        self.prev_cache_enabled = torch.is_autocast_cache_enabled()
        self.prev = torch.is_autocast_enabled(self.device)
        self.prev_fastdtype = torch.get_autocast_dtype(self.device)
        torch.set_autocast_enabled(self.device, self._enabled)
        torch.set_autocast_dtype(self.device, self.fast_dtype)
        torch.autocast_increment_nesting()
        torch.set_autocast_cache_enabled(self._cache_enabled)
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        if torch.autocast_decrement_nesting() == 0:
            torch.clear_autocast_cache()
        torch.set_autocast_enabled(self.device, self.prev)
        torch.set_autocast_dtype(self.device, self.prev_fastdtype)
        torch.set_autocast_cache_enabled(self.prev_cache_enabled)
        return False

    def __call__(self, func):
        if not callable(func):
            raise TypeError(
                f"autocast()(func) requires a callable, but got {type(func).__name__}. Did you "
                "mean to use autocast as a context manager? For example:\n"
                "    with torch.autocast(device_type=...):\n"
                "        output = model(input)"
            )
        return autocast_decorator(self, func)


def _cast(value, device_type, dtype):
    if isinstance(value, torch.Tensor):
        eligible = (
            value.is_floating_point()
            and value.device.type == device_type
            and value.dtype is not torch.float64
        )
        return value.to(dtype) if eligible else value
    if isinstance(value, (str, bytes, np.ndarray)):
        return value
    if isinstance(value, collections.abc.Mapping):
        return {
            _cast(k, device_type, dtype): _cast(v, device_type, dtype) for k, v in value.items()
        }
    if isinstance(value, collections.abc.Iterable):
        cast = (_cast(v, device_type, dtype) for v in value)
        return type(value)(cast) if isinstance(value, (list, tuple)) else cast
    return value


def custom_fwd(fwd=None, *, device_type, cast_inputs=None):
    """Decorate an ``autograd.Function``'s ``forward``: with ``cast_inputs``, run it outside
    autocast on inputs cast to that dtype; ``custom_bwd`` then runs ``backward`` in the same
    autocast state."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def decorate_fwd(*args, **kwargs):
        args[0]._dtype = torch.get_autocast_dtype(device_type)
        if cast_inputs is None:
            args[0]._fwd_used_autocast = torch.is_autocast_enabled(device_type)
            return fwd(*args, **kwargs)
        autocast_context = torch.is_autocast_enabled(device_type)
        args[0]._fwd_used_autocast = False
        if autocast_context:
            with autocast(device_type=device_type, enabled=False):
                return fwd(
                    *_cast(args, device_type, cast_inputs),
                    **_cast(kwargs, device_type, cast_inputs),
                )
        return fwd(*args, **kwargs)

    return decorate_fwd


def custom_bwd(bwd=None, *, device_type):
    """Decorate an ``autograd.Function``'s ``backward`` (see ``custom_fwd``)."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def decorate_bwd(*args, **kwargs):
        with autocast(
            device_type=device_type, enabled=args[0]._fwd_used_autocast, dtype=args[0]._dtype
        ):
            return bwd(*args, **kwargs)

    return decorate_bwd
