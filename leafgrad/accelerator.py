"""``torch.accelerator``: the current accelerator, which in leafgrad is cuda (a GPU that JAX
sees, or the virtual cuda device) or none."""

from __future__ import annotations

from . import _device as DEV
from . import cuda as _cuda

__all__ = ["is_available", "current_accelerator", "device_count"]


def is_available() -> bool:
    return _cuda.is_available()


def current_accelerator(check_available: bool = False):
    """``device(type='cuda')`` where cuda devices are there, else None."""
    if _cuda.is_available():
        return DEV.device("cuda")
    return None


def device_count() -> int:
    return _cuda.device_count()
