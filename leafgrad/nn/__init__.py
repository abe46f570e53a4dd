"""``leafgrad.nn``: ``functional`` now; modules and parameters come with issue 6."""

from . import functional

__all__ = ["functional"]
