"""The deprecated per-device spellings ``torch.<device>.amp.autocast`` and
``torch.<device>.amp.GradScaler``: ``torch.amp``'s classes with the device fixed, warning
PyTorch's FutureWarning when made."""

from __future__ import annotations

import warnings

from . import autocast_mode, grad_scaler


def _deprecated(device: str, name: str) -> None:
    warnings.warn(
        f"`torch.{device}.amp.{name}(args...)` is deprecated. Please use "
        f"`torch.amp.{name}('{device}', args...)` instead.",
        FutureWarning,
        stacklevel=3,
    )


def deprecated_autocast(device: str, default_dtype, module: str):
    class autocast(autocast_mode.autocast):
        __doc__ = (
            f"``torch.{device}.amp.autocast(args...)``: "
            f"``torch.amp.autocast('{device}', args...)``."
        )

        def __init__(self, enabled=True, dtype=default_dtype, cache_enabled=True):
            _deprecated(device, "autocast")
            super().__init__(device, enabled=enabled, dtype=dtype, cache_enabled=cache_enabled)

    autocast.__module__ = module
    return autocast


def deprecated_grad_scaler(device: str, module: str):
    class GradScaler(grad_scaler.GradScaler):
        __doc__ = (
            f"``torch.{device}.amp.GradScaler(args...)``: "
            f"``torch.amp.GradScaler('{device}', args...)``."
        )

        def __init__(
            self,
            init_scale: float = 2.0**16,
            growth_factor: float = 2.0,
            backoff_factor: float = 0.5,
            growth_interval: int = 2000,
            enabled: bool = True,
        ) -> None:
            _deprecated(device, "GradScaler")
            super().__init__(
                device,
                init_scale=init_scale,
                growth_factor=growth_factor,
                backoff_factor=backoff_factor,
                growth_interval=growth_interval,
                enabled=enabled,
            )

    GradScaler.__module__ = module
    return GradScaler
