"""``torch.utils``: ``checkpoint``, ``hooks``."""

from . import checkpoint, hooks

__all__ = ["checkpoint", "hooks"]
