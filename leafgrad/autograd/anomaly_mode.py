"""Anomaly detection: NaN checks in backward and the forward traceback of the failing op.

As in PyTorch 2.13: the switch is process-wide (``torch.set_anomaly_enabled`` sets a C++ static,
so other threads see it; checked against torch), ``detect_anomaly`` is a context manager (not a
decorator: torch's object is not callable either) and ``set_detect_anomaly`` works both as a call
and as a context manager.

How the pieces meet the core (Note [Anomaly integration]):

- ``record(node)``: dispatch calls it for every node it makes while anomaly mode is on. It keeps the
  Python stack of the forward call (leafgrad's own frames trimmed off the end, so the last frame is
  the user's line, as torch's C++ ops leave no Python frames) and, when the node is made inside a
  backward (``create_graph=True``), the node whose backward made it (torch's "parent").
- ``evaluating(node)``: the engine runs each node inside it while anomaly mode is on; it sets the
  parent for ``record`` and calls ``on_error(node)`` when anything in the node's turn raises.
- ``on_error(node)``: torch's warning(s) with the forward traceback, before the error propagates.
- ``check_outputs``: the NaN check after a node's backward.
- ``hint()``: the last sentence of the saved-tensor version error, which anomaly mode changes.
"""

from __future__ import annotations

import contextlib
import os
import sysconfig
import threading
import traceback
import warnings

__all__ = [
    "detect_anomaly",
    "set_detect_anomaly",
    "set_anomaly_enabled",
    "is_anomaly_enabled",
    "is_anomaly_check_nan_enabled",
]

ENABLED_WARNING = (
    "Anomaly Detection has been enabled. This mode will increase the runtime and should only be "
    "enabled for debugging."
)
HINT = (
    "Hint: enable anomaly detection to find the operation that failed to compute its gradient, "
    "with torch.autograd.set_detect_anomaly(True, check_nan=False)."
)
HINT_ANOMALY = (
    "Hint: the backtrace further above shows the operation that failed to compute its gradient. "
    "The variable in question was changed in there or anywhere later. Good luck!"
)
NAN_OUTPUT = "Function '{}' returned nan values in its {}th output."
_TRIGGERED = (  # torch's C++ warnings end with their source line
    " (Triggered internally at /__w/pytorch/pytorch/torch/csrc/autograd/"
    "python_anomaly_mode.cpp:{}.)"
)
ERROR_TRACE = (
    "Error detected in {}. Traceback of forward call that caused the error:\n{}"
    + _TRIGGERED.format(122)
)
ERROR_NO_TRACE = (
    "Error detected in {}. No forward pass information available. Enable detect anomaly during "
    "forward pass for more information." + _TRIGGERED.format(100)
)
PARENT_TRACE = (
    "\n\nPrevious calculation was induced by {}. Traceback of forward call that induced the "
    "previous calculation:\n{}" + _TRIGGERED.format(129)
)
ARG_NOT_BOOL = "set_anomaly_enabled(): argument '{}' (position {}) must be bool, not {}"
ARG_MISSING = 'set_anomaly_enabled() missing 1 required positional arguments: "enabled"'


class _State:
    """Process-wide, as PyTorch's ``AnomalyMode`` statics (not thread-local)."""

    def __init__(self) -> None:
        self.enabled = False
        self.check_nan = True


_state = _State()


class _Evaluating(threading.local):
    """The node whose backward this thread is running (torch's ``current_evaluating_node``)."""

    def __init__(self) -> None:
        self.node = None


_evaluating = _Evaluating()

_MISSING = object()


def _type_name(value) -> str:
    cls = type(value)
    if cls.__module__ in ("builtins", None):
        return cls.__name__
    return f"{cls.__module__}.{cls.__name__}"


def set_anomaly_enabled(enabled=_MISSING, check_nan=True) -> None:
    """Turn anomaly detection on or off (``torch.set_anomaly_enabled``); both must be bools."""
    if enabled is _MISSING:
        raise TypeError(ARG_MISSING)
    if type(enabled) is not bool:
        raise TypeError(ARG_NOT_BOOL.format("enabled", 1, _type_name(enabled)))
    if type(check_nan) is not bool:
        raise TypeError(ARG_NOT_BOOL.format("check_nan", 2, _type_name(check_nan)))
    _state.enabled = enabled
    _state.check_nan = check_nan


def is_anomaly_enabled() -> bool:
    """Whether anomaly detection is on."""
    return _state.enabled


def is_anomaly_check_nan_enabled() -> bool:
    """Whether anomaly detection checks backward outputs for NaN."""
    return _state.check_nan


class detect_anomaly:
    """Context manager: anomaly detection on inside the block (warns when made, as torch)."""

    def __init__(self, check_nan=True) -> None:
        self.prev = is_anomaly_enabled()
        self.check_nan = check_nan
        self.prev_check_nan = is_anomaly_check_nan_enabled()
        warnings.warn(ENABLED_WARNING, stacklevel=2)

    def __enter__(self) -> None:
        set_anomaly_enabled(True, self.check_nan)

    def __exit__(self, *args) -> None:
        set_anomaly_enabled(self.prev, self.prev_check_nan)


class set_detect_anomaly:
    """Set anomaly detection on or off now; as a context manager, restore it on exit."""

    def __init__(self, mode, check_nan=True) -> None:
        self.prev = is_anomaly_enabled()
        self.prev_check_nan = is_anomaly_check_nan_enabled()
        set_anomaly_enabled(mode, check_nan)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *args) -> None:
        set_anomaly_enabled(self.prev, self.prev_check_nan)


# --- the core's side (Note [Anomaly integration]) ----------------------------------------------

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_PATHS = sysconfig.get_paths()
_STDLIB_DIR = os.path.abspath(_PATHS["stdlib"]) + os.sep
_SITE_DIRS = tuple(os.path.abspath(_PATHS[k]) + os.sep for k in ("purelib", "platlib"))


def _internal(filename: str) -> bool:
    """A frame of leafgrad or of the standard library (e.g. contextlib between leafgrad frames)."""
    path = os.path.abspath(filename)
    if path.startswith(_PACKAGE_DIR):
        return True
    return path.startswith(_STDLIB_DIR) and not path.startswith(_SITE_DIRS)


def _forward_stack() -> list[str]:
    """``traceback.format_stack()`` of the caller up to its innermost frame of user code: torch's
    ops are C++ and leave no Python frames, so the user's line is the last one there too."""
    frames = traceback.extract_stack()
    end = len(frames)
    while end > 0 and _internal(frames[end - 1].filename):
        end -= 1
    return traceback.format_list(frames[:end])


def record(node) -> None:
    """Keep on ``node`` the forward stack and the node whose backward made it (if any)."""
    node._anomaly_trace = (_forward_stack(), _evaluating.node)


def hint() -> str:
    """The hint ending the saved-tensor version error: torch's text depends on anomaly mode."""
    return HINT_ANOMALY if _state.enabled else HINT


def on_error(node) -> None:
    """torch's warning(s) naming the failing node and where its forward ran (and its parents)."""
    trace = getattr(node, "_anomaly_trace", None)
    if trace is None:
        warnings.warn(ERROR_NO_TRACE.format(node.name()), stacklevel=2)
        return
    stack, parent = trace
    warnings.warn(ERROR_TRACE.format(node.name(), "".join(stack)), stacklevel=2)
    while parent is not None:
        ptrace = getattr(parent, "_anomaly_trace", None)
        if ptrace is None:
            break  # torch stops where a node has no metadata
        pstack, grandparent = ptrace
        warnings.warn(PARENT_TRACE.format(parent.name(), "".join(pstack)), stacklevel=2)
        parent = grandparent


@contextlib.contextmanager
def evaluating(node):
    """Run one node's turn in backward: nodes made meanwhile get it as parent; errors warn."""
    prev = _evaluating.node
    _evaluating.node = node
    try:
        yield
    except Exception:
        on_error(node)
        raise
    finally:
        _evaluating.node = prev


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
            raise RuntimeError(NAN_OUTPUT.format(node.name(), i))
