"""``torch.amp``: automatic mixed precision (Note [Autocast] in ``leafgrad/_autocast.py``)."""

from .autocast_mode import (
    _cast,  # noqa: F401
    autocast,
    custom_bwd,
    custom_fwd,
    is_autocast_available,
)
from .grad_scaler import GradScaler

__all__ = ["autocast", "custom_bwd", "custom_fwd", "is_autocast_available", "GradScaler"]
