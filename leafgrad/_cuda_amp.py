"""``torch.cuda.amp``: the deprecated spelling of ``torch.amp.autocast("cuda")``."""

from __future__ import annotations

import warnings

import leafgrad as torch

from .amp import autocast_mode

__all__ = ["autocast", "custom_bwd", "custom_fwd"]


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
