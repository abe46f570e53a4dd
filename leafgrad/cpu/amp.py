"""``torch.cpu.amp``: the deprecated spellings of ``torch.amp.autocast("cpu")`` and
``torch.amp.GradScaler("cpu")``."""

from __future__ import annotations

import leafgrad as torch

from ..amp._spellings import deprecated_autocast, deprecated_grad_scaler

__all__ = ["autocast", "GradScaler"]

autocast = deprecated_autocast("cpu", torch.bfloat16, __name__)
GradScaler = deprecated_grad_scaler("cpu", __name__)
