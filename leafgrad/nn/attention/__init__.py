"""``torch.nn.attention``: ``SDPBackend`` and the ``sdpa_kernel`` context manager that chooses
which kernels ``F.scaled_dot_product_attention`` may use (Note [SDPA backends] in
backends/cuda.py)."""

from __future__ import annotations

import contextlib
import enum

from ...backends import cuda as _cuda

__all__ = ["SDPBackend", "sdpa_kernel", "WARN_FOR_UNFUSED_KERNELS"]

WARN_FOR_UNFUSED_KERNELS = False


class SDPBackend(enum.Enum):
    """The kernels of scaled dot product attention."""

    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4

    def __int__(self) -> int:
        return self.value

    def __index__(self) -> int:
        return self.value


_FLAGS = {
    SDPBackend.FLASH_ATTENTION: "flash",
    SDPBackend.EFFICIENT_ATTENTION: "mem_efficient",
    SDPBackend.MATH: "math",
    SDPBackend.CUDNN_ATTENTION: "cudnn",
}


@contextlib.contextmanager
def sdpa_kernel(backends, set_priority: bool = False):
    """Within the block only ``backends`` (one ``SDPBackend`` or a list) may run scaled dot
    product attention; the previous choice comes back on exit."""
    if not isinstance(backends, (list, SDPBackend)):
        raise AssertionError(
            "Backend must be an instance of SDPBackend or a list of SDPBackend instances, got "
            f"{type(backends).__name__}"
        )
    if isinstance(backends, SDPBackend):
        backends = [backends]
    chosen = set(backends)
    previous = dict(_cuda.SDP_ENABLED)
    try:
        for backend, flag in _FLAGS.items():
            _cuda.SDP_ENABLED[flag] = backend in chosen
        yield {}
    finally:
        _cuda.SDP_ENABLED.update(previous)
