"""``torch.cuda.amp``: the deprecated spellings of ``torch.amp.autocast("cuda")`` and
``torch.amp.GradScaler("cuda")``."""

from __future__ import annotations

import warnings

import leafgrad as torch

from .amp import autocast_mode, grad_scaler

__all__ = ["amp_definitely_not_available", "autocast", "custom_bwd", "custom_fwd", "GradScaler"]


def amp_definitely_not_available() -> bool:
    """Whether neither CUDA nor XLA is there (leafgrad has no torch_xla)."""
    return not torch.cuda.is_available()


class autocast(autocast_mode.autocast):
    """``torch.cuda.amp.autocast(args...)``: ``torch.amp.autocast("cuda", args...)``."""

    def __init__(self, enabled=True, dtype=torch.float16, cache_enabled=True):
        warnings.warn(
            "`torch.cuda.amp.autocast(args...)` is deprecated. Please use "
            "`torch.amp.autocast('cuda', args...)` instead.",
            FutureWarning,
            stacklevel=2,
        )
        super().__init__("cuda", enabled=enabled, dtype=dtype, cache_enabled=cache_enabled)


def custom_fwd(fwd=None, *, cast_inputs=None):
    warnings.warn(
        "`torch.cuda.amp.custom_fwd(args...)` is deprecated. Please use "
        "`torch.amp.custom_fwd(args..., device_type='cuda')` instead.",
        FutureWarning,
        stacklevel=2,
    )
    return autocast_mode.custom_fwd(fwd, device_type="cuda", cast_inputs=cast_inputs)


def custom_bwd(bwd=None):
    warnings.warn(
        "`torch.cuda.amp.custom_bwd(args...)` is deprecated. Please use "
        "`torch.amp.custom_bwd(args..., device_type='cuda')` instead.",
        FutureWarning,
        stacklevel=2,
    )
    return autocast_mode.custom_bwd(bwd, device_type="cuda")


class GradScaler(grad_scaler.GradScaler):
    """``torch.cuda.amp.GradScaler(args...)``: ``torch.amp.GradScaler("cuda", args...)``."""

    def __init__(
        self,
        init_scale: float = 2.0**16,
        growth_factor: float = 2.0,
        backoff_factor: float = 0.5,
        growth_interval: int = 2000,
        enabled: bool = True,
    ) -> None:
        warnings.warn(
            "`torch.cuda.amp.GradScaler(args...)` is deprecated. "
            "Please use `torch.amp.GradScaler('cuda', args...)` instead.",
            FutureWarning,
            stacklevel=2,
        )
        super().__init__(
            "cuda",
            init_scale=init_scale,
            growth_factor=growth_factor,
            backoff_factor=backoff_factor,
            growth_interval=growth_interval,
            enabled=enabled,
        )
