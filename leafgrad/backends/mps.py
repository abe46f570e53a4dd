"""``torch.backends.mps``: Apple's Metal backend. leafgrad has no ``mps`` device."""

from __future__ import annotations


def is_available() -> bool:
    return False


def is_built() -> bool:
    return False
