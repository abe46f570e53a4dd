"""``torch._amp_foreach_non_finite_check_and_unscale_`` and ``torch._amp_update_scale_``: the
in-place kernels behind ``GradScaler`` (``leafgrad/amp/grad_scaler.py``).

Note [AMP kernels]: the two ops write in place as ATen's CPU kernels do
(``AmpGradScalerKernels.cpp``), with PyTorch's bookkeeping around them, which differs:

- ``_amp_foreach_non_finite_check_and_unscale_(grads, found_inf, inv_scale)`` has no autograd
  kernel of its own and bumps no version: every grad is multiplied by ``inv_scale`` (in the
  grad's dtype; float16 and bfloat16 through float32), ``found_inf`` becomes 1.0 when a grad
  holds an inf or a NaN, and no ``_version`` changes, nothing is checked for autograd (a leaf
  that requires grad is written, a tensor keeps its ``grad_fn``). The grads are written one after
  the other: a grad the kernel refuses (an integer one, an expanded one) raises after the earlier
  ones, and ``found_inf``, were written. An empty list returns before any check.
- ``_amp_update_scale_(scale, growth_tracker, found_inf, growth_factor, backoff_factor,
  growth_interval)`` is an in-place op on ``scale`` as any other: the autograd checks first (a
  leaf that requires grad raises), a ``NotImplemented`` node over ``scale`` and ``found_inf``
  when either requires grad, and ``scale``'s version goes up; ``growth_tracker`` is written
  without a bump. The arithmetic is the kernel's: ``scale * factor`` in double, stored as float;
  a grown scale that is not finite is not kept; a NaN ``found_inf`` counts as found.

The kernel is the CPU's unless an operand is on another device (the virtual cuda one); that
kernel names its device in the device checks (``found_inf must be a CUDA tensor.``).
"""

from __future__ import annotations

import dataclasses
import functools
import sys

import jax.numpy as jnp
import numpy as np

from .. import _dtype as D
from .. import _errors as E
from .. import _storage as S
from .._tensor import Tensor
from ..autograd import grad_mode
from .api import refuse_backward, register_ops
from .dispatch import dispatch
from .inplace import _overlaps, inplace
from .table import OPS, OpDef

__all__ = ["_amp_foreach_non_finite_check_and_unscale_", "_amp_update_scale_"]

_FOREACH = "_amp_foreach_non_finite_check_and_unscale_"
_UPDATE = "_amp_update_scale_"
_INT64 = 1 << 63
_UNSCALED = (D.float32, D.float64, D.float16, D.bfloat16)  # FLOATING_TYPES and the reduced ones


# --- the arithmetic (table entries) -----------------------------------------------------------


def _unscale_forward(grad, inv_scale):
    inv = inv_scale.reshape(())
    if grad.dtype in (jnp.float16, jnp.bfloat16):  # through opmath (float32)
        return (grad.astype(jnp.float32) * inv).astype(grad.dtype)
    return grad * inv.astype(grad.dtype)  # a float64 grad: the double product


def _found_inf_forward(found_inf, grad):
    bad = jnp.any(~jnp.isfinite(grad))
    return jnp.where(bad, jnp.ones_like(found_inf), found_inf)


def _update_scale_forward(scale, found_inf, tracker, growth_factor, backoff_factor, interval):
    s = scale.reshape(()).astype(jnp.float64)
    found = found_inf.reshape(()) != 0  # NaN counts, as C's ``if (*found_inf_ptr)``
    grows = (tracker.reshape(()) + 1).astype(jnp.int64) == interval
    grown = (s * growth_factor).astype(jnp.float32)
    backed = (s * backoff_factor).astype(jnp.float32)
    kept = jnp.where(grows & jnp.isfinite(grown), grown, scale.reshape(()))
    return jnp.broadcast_to(jnp.where(found, backed, kept), scale.shape)


def _tracker_forward(tracker, found_inf, interval):
    found = found_inf.reshape(()) != 0
    successful = tracker + jnp.ones_like(tracker)  # int32, as the kernel's ``int``
    restart = found | (successful.astype(jnp.int64) == interval)
    return jnp.where(restart, jnp.zeros_like(tracker), successful)


def _like_first(meta, static):
    return (None,) * len(meta), meta[0][0]


def _written(scale, found_inf, value):
    return value


# The arithmetic runs under no_grad (no edges); ``amp_update_scale`` is the recorded write: its
# ``NotImplemented`` node over ``scale`` and ``found_inf`` (its value comes computed).
_OPS = (
    OpDef(
        "amp_unscale",
        _unscale_forward,
        "NotImplemented",
        ("self", "inv_scale"),
        _like_first,
        edges=(),
    ),
    OpDef(
        "amp_found_inf",
        _found_inf_forward,
        "NotImplemented",
        ("found_inf", "self"),
        _like_first,
        edges=(),
    ),
    OpDef(
        "amp_new_scale",
        _update_scale_forward,
        "NotImplemented",
        (
            "self",
            "found_inf",
            "growth_tracker",
            "growth_factor",
            "backoff_factor",
            "growth_interval",
        ),
        _like_first,
        edges=(),
    ),
    OpDef(
        "amp_growth_tracker",
        _tracker_forward,
        "NotImplemented",
        ("growth_tracker", "found_inf", "growth_interval"),
        _like_first,
        edges=(),
    ),
    OpDef(
        "amp_update_scale",
        _written,
        "NotImplemented",
        ("self", "found_inf", "value"),
        _like_first,
        edges=("self", "found_inf"),
    ),
)
if "amp_unscale" not in OPS:  # importing twice (reload) must not register twice
    register_ops(*_OPS)


# --- argument parsing (PyTorch's parser for these two signatures) -----------------------------

_FOREACH_PARAMS = (("tuple of Tensors", "self"), ("Tensor", "found_inf"), ("Tensor", "inv_scale"))
_UPDATE_PARAMS = (
    ("Tensor", "input"),
    ("Tensor", "growth_tracker"),
    ("Tensor", "found_inf"),
    ("float", "scale_growth_factor"),
    ("float", "scale_backoff_factor"),
    ("int", "growth_interval"),
)


def _takes(kind: str, x) -> bool:
    """Whether the parser takes ``x`` for a parameter of type ``kind``."""
    if kind == "Tensor":
        return isinstance(x, Tensor)
    if kind == "float":  # THPUtils_checkDouble, or a 0-d tensor without grad
        if isinstance(x, Tensor):
            return x.ndim == 0 and not x.requires_grad
        return isinstance(x, (int, float, np.integer, np.floating))
    # int: THPUtils_checkLong (not a bool), or a 0-d integer tensor without grad
    if isinstance(x, Tensor):
        d = x._dtype
        integral = not (d.is_floating_point or d.is_complex or d is D.bool_)
        return integral and x.ndim == 0 and not x.requires_grad
    return isinstance(x, (int, np.integer)) and not isinstance(x, bool)


def _parsed(name: str, params, args: tuple, kwargs: dict) -> dict:
    """``{name: value}`` as PyTorch's parser binds the call, else its TypeError."""
    names = [p for _, p in params]
    if len(args) > len(params):
        raise TypeError(
            f"{name}() takes {len(params)} positional arguments but {len(args)} were given"
        )
    values = {}
    for i, (kind, pname) in enumerate(params):
        if i < len(args):
            x, position = args[i], i + 1
        elif pname in kwargs:
            x, position = kwargs[pname], None
        else:
            raise TypeError(E.missing_args(name, names[i:]))
        if kind == "tuple of Tensors" and isinstance(x, (list, tuple)):
            for k, item in enumerate(x):
                if not isinstance(item, Tensor):
                    raise TypeError(
                        f"expected Tensor as element {k} in argument {i}, but got "
                        f"{E.py_typename(item)}"
                    )
        elif not _takes(kind, x):
            if position is None:
                raise TypeError(E.KW_MUST_BE.format(name, pname, kind, E.py_typename(x)))
            raise TypeError(E.MUST_BE.format(name, pname, position, kind, E.py_typename(x)))
        values[pname] = x
    for key in kwargs:
        if key in names[: len(args)]:
            raise TypeError(f"{name}() got multiple values for argument '{key}'")
        if key not in names:
            raise TypeError(f"{name}() got an unexpected keyword argument '{key}'")
    return values


def _as_float(x) -> float:
    return float(x.item()) if isinstance(x, Tensor) else float(x)


def _as_int(x) -> int:
    value = int(x.item()) if isinstance(x, Tensor) else int(x)
    if not -_INT64 <= value < _INT64:
        raise ValueError("Overflow when unpacking long long")
    return value


def _kernel_device(*tensors) -> str:
    """The device type whose kernel runs: the CPU's unless an operand is elsewhere."""
    for t in tensors:
        if t._device.type != "cpu":
            return t._device.type
    return "cpu"


def _check(ok: bool, message: str) -> None:
    if not ok:
        raise RuntimeError(message)


# --- the ops ----------------------------------------------------------------------------------


def _amp_foreach_non_finite_check_and_unscale_(*args, **kwargs) -> None:
    """Multiply each of ``self``'s tensors by ``inv_scale`` in place; set ``found_inf`` to 1.0
    when one of them holds an inf or a NaN (Note [AMP kernels])."""
    bound = _parsed(_FOREACH, _FOREACH_PARAMS, args, kwargs)
    grads, found_inf, inv_scale = bound["self"], bound["found_inf"], bound["inv_scale"]
    if not grads:
        return None
    kind = _kernel_device(*grads, found_inf, inv_scale)
    where = kind.upper()
    _check(inv_scale._device.type == kind, f"inv_scale must be a {where} tensor.")
    _check(found_inf._device.type == kind, f"found_inf must be a {where} tensor.")
    _check(inv_scale._data.size == 1, "inv_scale must be a 1-element tensor.")
    _check(found_inf._data.size == 1, "found_inf must be a 1-element tensor.")
    _check(inv_scale._dtype is D.float32, "inv_scale must be a float tensor.")
    _check(found_inf._dtype is D.float32, "found_inf must be a float tensor.")
    kernel = f"{_FOREACH[:-1]}_{kind}"
    first = grads[0]._device
    for t in grads:
        _check(t._device.type == kind, f"one of scaled_grads was not a {where} tensor.")
        if kind != "cpu":
            _check(t._device == first, "scaled_grads must be on the same device.")
        # (every leafgrad tensor is strided: "one of scaled_grads was not a strided tensor.")
        if _overlaps(t):
            raise RuntimeError(E.INTERNAL_OVERLAP)
        if t._dtype not in _UNSCALED:
            raise NotImplementedError(E.KERNEL_DTYPE.format(kernel, t._dtype._legacy))
        with grad_mode.no_grad():
            found = dispatch(OPS["amp_found_inf"], found_inf, t)
            unscaled = dispatch(OPS["amp_unscale"], t, inv_scale)
        S.write(t, unscaled._data)
        S.write(found_inf, found._data)
    return None


def _amp_update_scale_(*args, **kwargs) -> Tensor:
    """Update ``input`` (the scale) and ``growth_tracker`` in place from ``found_inf``: back off
    after a skipped step, grow after ``growth_interval`` good ones (Note [AMP kernels])."""
    bound = _parsed(_UPDATE, _UPDATE_PARAMS, args, kwargs)
    scale, tracker, found_inf = bound["input"], bound["growth_tracker"], bound["found_inf"]
    growth = _as_float(bound["scale_growth_factor"])
    backoff = _as_float(bound["scale_backoff_factor"])
    interval = _as_int(bound["growth_interval"])

    edges = (("self", scale), ("found_inf", found_inf))

    def compute():
        kind = _kernel_device(scale, tracker, found_inf)
        where = kind.upper()
        _check(tracker._device.type == kind, f"growth_tracker must be a {where} tensor.")
        _check(scale._device.type == kind, f"current_scale must be a {where} tensor.")
        _check(found_inf._device.type == kind, f"found_inf must be a {where} tensor.")
        _check(tracker._data.size == 1, "growth_tracker must be a 1-element tensor.")
        _check(scale._data.size == 1, "current_scale must be a 1-element tensor.")
        _check(found_inf._data.size == 1, "found_inf must be a 1-element tensor.")
        _check(tracker._dtype is D.int32, "growth_tracker must be an int tensor.")
        _check(scale._dtype is D.float32, "current_scale must be a float tensor.")
        _check(found_inf._dtype is D.float32, "found_inf must be a float tensor.")
        with grad_mode.no_grad():
            new_tracker = dispatch(OPS["amp_growth_tracker"], tracker, found_inf, interval)
            value = dispatch(
                OPS["amp_new_scale"], scale, found_inf, tracker, growth, backoff, interval
            )
        op = _update_op(tuple(n for n, t in edges if t._requires_grad) or ("self", "found_inf"))
        out = dispatch(op, scale, found_inf, value)
        S.write(tracker, new_tracker._data)  # no version bump for the tracker
        return refuse_backward(out, _no_derivative)

    return inplace(scale, compute, found_inf, overlap=None)


def _no_derivative() -> RuntimeError:
    return RuntimeError(f"derivative for aten::{_UPDATE} is not implemented")


@functools.cache
def _update_op(edges: tuple) -> OpDef:
    """``amp_update_scale`` with edges to the operands that require grad only: PyTorch's
    autograd fallback (no formula) makes its ``NotImplemented`` node over those."""
    op = OPS["amp_update_scale"]
    if edges == op.edges:
        return op
    return dataclasses.replace(
        op, name=f"{op.name}_{'_'.join(edges)}", edges=edges, differentiable=edges
    )


# ``leafgrad/__init__`` imports this module after it has published the op modules' functions
_package = sys.modules[__name__.rsplit(".", 2)[0]]
for _name in __all__:
    setattr(_package, _name, globals()[_name])
del _package, _name
