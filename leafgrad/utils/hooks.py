"""``torch.utils.hooks``: ``RemovableHandle``, what every ``register_*hook`` returns."""

from __future__ import annotations

from ..autograd.graph import RemovableHandle

RemovableHandle.__module__ = __name__  # as PyTorch's repr names it

__all__ = ["RemovableHandle"]
