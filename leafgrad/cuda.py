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
    "is_initialized",
    "get_device_name",
    "get_device_capability",
    "is_bf16_supported",
    "memory_allocated",
    "max_memory_allocated",
    "memory_reserved",
    "max_memory_reserved",
    "mem_get_info",
    "empty_cache",
    "device",
]


def is_available() -> bool:
    """True when a GPU (or the virtual cuda device) is there."""
    return DEV.cuda_count() > 0


def device_count() -> int:
    """The number of cuda devices (real, else virtual)."""
    return DEV.cuda_count()


def current_device() -> int:
    if not is_available():
        raise DEV.no_cuda_error()
    return 0


def is_initialized() -> bool:
    """Whether the cuda devices are set up: JAX sets up its backends at first use, so this is
    whether there are any."""
    return is_available()


def _jax_device(device=None):
    """The JAX device of a cuda device (None: the current one); raises where there is none."""
    if not is_available():
        raise DEV.no_cuda_error()
    if device is None or (isinstance(device, int) and device == -1):
        device = 0
    if isinstance(device, int):
        device = DEV.device("cuda", device)
    dev = DEV.canonical(device)
    if dev.type != "cuda":
        raise ValueError(f"Expected a cuda device, but got: {dev}")
    return DEV.jax_device(dev)


def _virtual_refusal(what: str) -> NotImplementedError:
    return NotImplementedError(
        f"leafgrad: the virtual cuda device (LEAFGRAD_VIRTUAL_CUDA) is the CPU; it has no {what}"
    )


def get_device_name(device=None) -> str:
    """The GPU's name as JAX reports it (``device_kind``)."""
    dev = _jax_device(device)
    if is_virtual():
        return "leafgrad virtual cuda device (CPU)"
    return dev.device_kind


def get_device_capability(device=None) -> tuple[int, int]:
    """The GPU's compute capability ``(major, minor)``."""
    dev = _jax_device(device)
    found = None if is_virtual() else getattr(dev, "compute_capability", None)
    if found is None:
        raise (
            _virtual_refusal("compute capability")
            if is_virtual()
            else NotImplementedError(
                f"leafgrad: JAX reports no compute capability for {dev.device_kind}"
            )
        )
    major, _, minor = str(found).partition(".")
    return int(major), int(minor or 0)


def is_bf16_supported(including_emulation: bool = True) -> bool:
    return is_available()


def _memory_stat(device, key: str) -> int:
    """One of JAX's allocator statistics of a GPU; 0 where there is no cuda device (PyTorch's
    CPU build says 0 too)."""
    if not is_available():
        return 0
    dev = _jax_device(device)
    if is_virtual():
        raise _virtual_refusal("memory statistics")
    stats = dev.memory_stats()
    if stats is None:
        raise NotImplementedError(f"leafgrad: JAX reports no memory statistics for {dev}")
    return int(stats.get(key, 0))


def memory_allocated(device=None) -> int:
    """Bytes held by live arrays on the GPU (JAX's ``bytes_in_use``)."""
    return _memory_stat(device, "bytes_in_use")


def max_memory_allocated(device=None) -> int:
    """The most bytes held at once since the process started (JAX's ``peak_bytes_in_use``)."""
    return _memory_stat(device, "peak_bytes_in_use")


def memory_reserved(device=None) -> int:
    """Bytes JAX's allocator holds from the driver (``bytes_reserved``, else ``bytes_in_use``)."""
    if not is_available():
        return 0
    reserved = _memory_stat(device, "bytes_reserved")
    return reserved or _memory_stat(device, "bytes_in_use")


def max_memory_reserved(device=None) -> int:
    if not is_available():
        return 0
    reserved = _memory_stat(device, "peak_bytes_reserved")
    return reserved or _memory_stat(device, "peak_bytes_in_use")


def mem_get_info(device=None) -> tuple[int, int]:
    """``(free, total)`` bytes of the GPU as JAX's allocator sees them (its limit as total)."""
    dev = _jax_device(device)
    if is_virtual():
        raise _virtual_refusal("memory statistics")
    stats = dev.memory_stats() or {}
    total = int(stats.get("bytes_limit", 0))
    return total - int(stats.get("bytes_in_use", 0)), total


def empty_cache() -> None:
    """Nothing to release: JAX frees an array's memory when the array dies."""


class device:
    """``torch.cuda.device``: a context manager that selects a cuda device. leafgrad's current
    cuda device is always device 0, so only it (or ``None``/-1, no change) can be selected."""

    def __init__(self, device) -> None:
        if device is None:
            self.idx = -1
        elif isinstance(device, int):
            self.idx = device
        else:
            self.idx = (
                DEV.device(device).index if not isinstance(device, DEV.device) else (device.index)
            )
            if self.idx is None:
                self.idx = -1

    def __enter__(self):
        if not DEV.cuda_built() and not is_available():
            raise RuntimeError(DEV.E.CUDA_CTX_NOT_BUILT)
        if self.idx not in (-1, 0):
            current_device()  # no device at all raises first
            raise NotImplementedError(
                "leafgrad: the current cuda device is always device 0; selecting another "
                "is not supported"
            )
        return self

    def __exit__(self, *exc) -> bool:
        return False


def is_virtual() -> bool:
    """True when cuda tensors live on the virtual cuda device (no GPU, variable set)."""
    return DEV.gpu_count() == 0 and DEV.virtual_cuda_count() > 0


def manual_seed(seed: int) -> None:
    """Seed the generator of every cuda device."""
    from . import _factories as F

    for index in range(device_count()):
        F.generator_for(DEV.device("cuda", index), None).manual_seed(seed)


manual_seed_all = manual_seed


def get_rng_state(device="cuda"):
    """The state of one cuda device's generator, as a uint8 tensor."""
    from . import _factories as F

    return F.generator_for(_cuda_device(device), None).get_state()


def set_rng_state(new_state, device="cuda") -> None:
    from . import _factories as F

    F.generator_for(_cuda_device(device), None).set_state(new_state)


def get_rng_state_all() -> list:
    return [get_rng_state(i) for i in range(device_count())]


def set_rng_state_all(new_states) -> None:
    for i, state in enumerate(new_states):
        set_rng_state(state, i)


def _cuda_device(device):
    """A cuda device, checked as ``.to`` checks it (no cuda: PyTorch's error)."""
    if isinstance(device, int):
        device = DEV.device("cuda", device)
    device = DEV.canonical(device)
    return device if device.index is not None else DEV.device("cuda", current_device())


def synchronize(device=None) -> None:
    """Wait for the work queued on the cuda devices to finish (every live array's)."""
    _jax_device(device)
    import jax

    jax.block_until_ready(jax.live_arrays())
