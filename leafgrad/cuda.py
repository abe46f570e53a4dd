"""``leafgrad.cuda``: GPU availability through JAX, or the virtual cuda device.

A real GPU is JAX's ``gpu`` platform. Without one, ``LEAFGRAD_VIRTUAL_CUDA=N`` gives ``N``
virtual cuda devices backed by the host CPU (see ``_device``).
"""

from __future__ import annotations

from . import _device as DEV

__all__ = [
    "is_available",
    "device_count",
    "current_device",
    "manual_seed",
    "manual_seed_all",
    "is_virtual",
    "synchronize",
]


def is_available() -> bool:
    """True when a GPU (or the virtual cuda device) is there."""
    return DEV.cuda_count() > 0


def device_count() -> int:
    """The number of cuda devices (real, else virtual)."""
    return DEV.cuda_count()


def current_device() -> int:
    if not is_available():
        raise RuntimeError(DEV.E.NO_CUDA + "\n" + DEV.E.HELP_NO_CUDA)
    return 0


def is_virtual() -> bool:
    """True when cuda tensors live on the virtual cuda device (no GPU, variable set)."""
    return DEV.gpu_count() == 0 and DEV.virtual_cuda_count() > 0


def manual_seed(seed: int) -> None:
    """Seed the generator of every cuda device."""
    from . import _factories as F

    for index in range(device_count()):
        F.generator_for(DEV.device("cuda", index), None).manual_seed(seed)


manual_seed_all = manual_seed


def synchronize(device=None) -> None:
    """Wait for pending work: JAX arrays are waited on when read, so nothing to do."""
