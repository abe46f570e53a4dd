"""``torch.cpu.amp``: the deprecated spellings of ``torch.amp.autocast("cpu")`` and
``torch.amp.GradScaler("cpu")``."""

from __future__ import annotations

import warnings

import leafgrad as torch

from ..amp import autocast_mode, grad_scaler

__all__ = ["autocast", "GradScaler"]


class autocast(autocast_mode.autocast):
    """``torch.cpu.amp.autocast(args...)``: ``torch.amp.autocast("cpu", args...)``."""

    def __init__(self, enabled=True, dtype=torch.bfloat16, cache_enabled=True):
        warnings.warn(
            "`torch.cpu.amp.autocast(args...)` is deprecated. Please use "
            "`torch.amp.autocast('cpu', args...)` instead.",
            FutureWarning,
            stacklevel=2,
        )
        super().__init__("cpu", enabled=enabled, dtype=dtype, cache_enabled=cache_enabled)


class GradScaler(grad_scaler.GradScaler):
    """``torch.cpu.amp.GradScaler(args...)``: ``torch.amp.GradScaler("cpu", args...)``."""

    def __init__(
        self,
        init_scale: float = 2.0**16,
        growth_factor: float = 2.0,
        backoff_factor: float = 0.5,
        growth_interval: int = 2000,
        enabled: bool = True,
    ) -> None:
        warnings.warn(
            "`torch.cpu.amp.GradScaler(args...)` is deprecated. "
            "Please use `torch.amp.GradScaler('cpu', args...)` instead.",
            FutureWarning,
            stacklevel=2,
        )
        super().__init__(
            "cpu",
            init_scale=init_scale,
            growth_factor=growth_factor,
            backoff_factor=backoff_factor,
            growth_interval=growth_interval,
            enabled=enabled,
        )
