"""``torch.utils``: ``checkpoint``, ``hooks``."""

from . import checkpoint, data, hooks

__all__ = ["checkpoint", "data", "hooks"]
