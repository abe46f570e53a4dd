"""``torch.cpu``: the CPU device's module (one device, always available)."""

from . import amp  # noqa: F401

__all__ = ["amp", "current_device", "device_count", "is_available", "synchronize"]


def is_available() -> bool:
    return True


def device_count() -> int:
    return 1


def current_device() -> str:
    return "cpu"


def synchronize(device=None) -> None:
    """Wait for the CPU's work: leafgrad's CPU arrays are ready when an op returns."""
