"""``torch.cuda.amp``: the deprecated spellings of ``torch.amp.autocast("cuda")`` and
``torch.amp.GradScaler("cuda")``."""

from __future__ import annotations

import warnings

import leafgrad as torch

from .amp import autocast_mode
from .amp._spellings import deprecated_autocast, deprecated_grad_scaler

__all__ = ["amp_definitely_not_available", "autocast", "custom_bwd", "custom_fwd", "GradScaler"]


def amp_definitely_not_available() -> bool:
    """Whether neither CUDA nor XLA is there (leafgrad has no torch_xla)."""
    return not torch.cuda.is_available()


autocast = deprecated_autocast("cuda", torch.float16, __name__)


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


GradScaler = deprecated_grad_scaler("cuda", __name__)
