"""``skip_init``, as ``torch.nn.utils.skip_init``."""

from __future__ import annotations

import inspect

__all__ = ["skip_init"]


def skip_init(module_cls, *args, **kwargs):
    """An instance of ``module_cls`` whose parameters and buffers are not initialised.

    PyTorch builds the module on the meta device and allocates empty memory; leafgrad has no
    meta device, so it builds the module on the target device and puts the random generator
    back as it was: as in PyTorch, no random numbers are drawn, and the values are unspecified
    (here: whatever the initialisation gave)."""
    import leafgrad

    if not (isinstance(module_cls, type) and issubclass(module_cls, leafgrad.nn.Module)):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    kwargs["device"] = kwargs.pop("device", "cpu")
    state = leafgrad.get_rng_state()
    try:
        return module_cls(*args, **kwargs)
    finally:
        leafgrad.set_rng_state(state)
