"""``torch.signal``: window functions (``leafgrad.signal.windows``)."""

from . import windows

__all__ = ["windows"]
