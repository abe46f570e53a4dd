"""``functional_call`` under its old name, as ``torch.nn.utils.stateless``."""

from __future__ import annotations

import warnings

__all__ = ["functional_call"]


def functional_call(
    module, parameters_and_buffers, args=None, kwargs=None, *, tie_weights=True, strict=False
):
    """``leafgrad.func.functional_call`` (deprecated here, as in PyTorch)."""
    from ...func import functional_call as call

    warnings.warn(
        "`torch.nn.utils.stateless.functional_call` is deprecated as of PyTorch 2.0 and will be "
        "removed in a future version of PyTorch. Please use `torch.func.functional_call` "
        "instead which is a drop-in replacement.",
        FutureWarning,
        stacklevel=2,
    )
    return call(
        module, parameters_and_buffers, args, kwargs, tie_weights=tie_weights, strict=strict
    )
