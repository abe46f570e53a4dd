"""Anomaly detection: NaN checks in backward and the forward traceback of the failing op."""

from __future__ import annotations

import threading


class _State(threading.local):
    def __init__(self) -> None:
        self.enabled = False
        self.check_nan = True


_state = _State()


def check_outputs(node, outputs, graph: bool) -> None:
    """Raise PyTorch's error when ``node`` returned NaN (anomaly mode with ``check_nan``)."""
    if not _state.check_nan:
        return
    import jax.numpy as jnp

    for i, g in enumerate(outputs):
        if g is None:
            continue
        arr = g._data if graph else g
        if bool(jnp.isnan(arr).any()):
            raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th output.")
