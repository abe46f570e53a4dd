"""``torch.autograd.forward_ad``: forward-mode AD with dual tensors.

Note [Forward AD]: inside ``dual_level()``, ``make_dual(x, t)`` gives a tensor that carries the
tangent ``t``; every op that takes a tensor with a tangent gives its outputs the tangents JAX's
``jax.jvp`` of the op's own forward computes (``propagate``, called by dispatch while a level is
open), and ``unpack_dual`` reads them back. Leaving the level forgets every tangent.

- ``make_dual`` is a view of its primal (``ViewBackward0`` when the primal requires grad), with the
  tangent object itself as its tangent; ``unpack_dual`` gives a view of the dual tensor without a
  tangent and that tangent. ``detach()`` drops the tangent; integer and bool outputs have none.
- An in-place op gives its tensor the tangent of the op's result (zeros when the result has none,
  as PyTorch's formulas write ``self_t.zero_()`` / ``copy_``).
- What leafgrad does not do exactly raises ``NotImplementedError``: a tangent that may require
  grad in PyTorch (forward-over-reverse: grad mode is on and an operand or a tangent requires
  grad; PyTorch's forward formulas read the primals even where a term is zero, so whether its
  tangent requires grad depends on each formula's text); a tangent whose dtype differs from its
  primal's (PyTorch keeps the tangent's dtype, JAX's JVP the primal's); an in-place write to a
  tensor whose memory another tensor with a tangent shares (PyTorch's tangents of views are
  views of one tangent); and ops that move tensors between devices.
"""

from __future__ import annotations

import threading
import weakref
from typing import NamedTuple

import jax

__all__ = [
    "dual_level",
    "enter_dual_level",
    "exit_dual_level",
    "make_dual",
    "unpack_dual",
    "UnpackedDualTensor",
]

NO_LEVEL = (
    "Trying to create a dual Tensor for forward AD but no level exists, make sure to "
    "enter_dual_level() first."
)
NESTED = "Nested forward mode AD is not supported at the moment"
SIZE = (
    "Trying to set a forward gradient that has a different size than that of the original "
    "Tensor, this is not supported. Tensor is of size {} while the given forward gradient is of "
    "size {}."
)
ALREADY_DUAL = (
    "Making a dual Tensor based on a Tensor that already has a forward gradient at the same "
    "level {} is not supported."
)
NOT_FLOAT = "Expected {} to be floating point or complex, but got: {}"
FORWARD_OVER_REVERSE = (
    "leafgrad: forward-mode AD where the tangent may require grad (forward-over-reverse, "
    "{}) is not supported; compute the tangents under no_grad() or with detached primals"
)
TANGENT_DTYPE = (
    "leafgrad: a tangent of dtype {} for a primal of dtype {} is not supported (JAX's JVP "
    "computes tangents in the primal's dtype)"
)
SHARED_WRITE = (
    "leafgrad: forward-mode AD through an in-place write to memory that another tensor with a "
    "tangent shares is not supported"
)
DEVICES = "leafgrad: forward-mode AD of an op that moves tensors between devices is not supported"

ACTIVE = [0]  # 1 while a dual level is open (in any thread): dispatch looks no further while 0
_KEY = "_fw_grad"


class _Level(threading.local):
    def __init__(self) -> None:
        self.level: int | None = None
        self.paused = 0  # inside a custom Function's forward, whose own jvp gives the tangents


_state = _Level()
_duals: dict = {}  # id -> weak reference of every tensor given a tangent at the open level
_lock = threading.Lock()


class UnpackedDualTensor(NamedTuple):
    """``unpack_dual``'s result: the primal (a view without a tangent) and the tangent."""

    primal: object
    tangent: object


def refuse_nesting() -> None:
    """PyTorch's error on entering a dual level inside another (``torch.func.jvp`` and the
    forward-mode jacobians enter one)."""
    if _state.level is not None:
        raise RuntimeError(NESTED)


def enter_dual_level() -> int:
    refuse_nesting()
    _state.level = 0
    with _lock:
        ACTIVE[0] += 1
    return 0


def exit_dual_level(*, level: int | None = None) -> None:
    if _state.level is None:
        raise RuntimeError("Trying to exit a forward AD level that was not the last one created.")
    _state.level = None
    with _lock:
        ACTIVE[0] -= 1
        refs = list(_duals.values())
        if not ACTIVE[0]:
            _duals.clear()
    for ref in refs:
        t = ref()
        if t is not None:
            t.__dict__.pop(_KEY, None)


class dual_level:
    """Context manager of a forward AD level: the tangents made inside are forgotten at exit."""

    def __enter__(self) -> int:
        return enter_dual_level()

    def __exit__(self, *exc) -> None:
        exit_dual_level()


def _level(level):
    if level is None:
        level = _state.level
    return level


def _set_tangent(t, tangent) -> None:
    t.__dict__[_KEY] = tangent
    key = id(t)
    with _lock:
        _duals[key] = weakref.ref(t, lambda ref, key=key: _forget(key, ref))


def _forget(key, ref) -> None:
    with _lock:
        if _duals.get(key) is ref:
            del _duals[key]


def tangent_of(t):
    """The tangent ``t`` carries at the open level, or None."""
    return t.__dict__.get(_KEY) if ACTIVE[0] else None


def make_dual(tensor, tangent, *, level: int | None = None):
    """A view of ``tensor`` that carries ``tangent`` (Note [Forward AD])."""
    level = _level(level)
    if level is None:
        raise RuntimeError(NO_LEVEL)
    if not (tensor.dtype.is_floating_point or tensor.dtype.is_complex):
        raise ValueError(NOT_FLOAT.format("primal", tensor.dtype))
    if not (tangent.dtype.is_floating_point or tangent.dtype.is_complex):
        raise ValueError(NOT_FLOAT.format("tangent", tangent.dtype))
    if tangent_of(tensor) is not None:
        raise RuntimeError(ALREADY_DUAL.format(level))
    if tuple(tangent.shape) != tuple(tensor.shape):
        raise RuntimeError(SIZE.format(list(tensor.shape), list(tangent.shape)))
    if tangent.dtype is not tensor.dtype:
        raise NotImplementedError(TANGENT_DTYPE.format(tangent.dtype, tensor.dtype))
    dual = tensor.view_as(tensor)
    _set_tangent(dual, tangent)
    return dual


def unpack_dual(tensor, *, level: int | None = None) -> UnpackedDualTensor:
    """``(primal, tangent)``: a view of ``tensor`` without a tangent, and its tangent (None when
    it has none, or outside a level)."""
    tangent = tangent_of(tensor) if _level(level) is not None else None
    if tangent is None:
        return UnpackedDualTensor(tensor, None)
    with paused(True):
        primal = tensor.view_as(tensor)
    return UnpackedDualTensor(primal, tangent)


# --- custom Functions ----------------------------------------------------------------------------


def tangents_of(args) -> list | None:
    """The tangents of a Function's arguments (None for those without), or None if none has."""
    from .._tensor import Tensor

    found = [tangent_of(a) if isinstance(a, Tensor) else None for a in args]
    return found if any(t is not None for t in found) else None


class paused:
    """While active (``on``), ops give their results no tangents."""

    def __init__(self, on: bool) -> None:
        self.on = on

    def __enter__(self):
        if self.on:
            _state.paused += 1

    def __exit__(self, *exc) -> None:
        if self.on:
            _state.paused -= 1


def set_tangents(outputs, tangents) -> None:
    """A Function's ``jvp`` gave ``tangents`` for its ``outputs``."""
    from .._tensor import Tensor

    outs = outputs if isinstance(outputs, tuple) else (outputs,)
    tans = tangents if isinstance(tangents, tuple) else (tangents,)
    for o, t in zip(outs, tans):
        if isinstance(o, Tensor) and isinstance(t, Tensor):
            o.__dict__.pop(_KEY, None)
            _set_tangent(o, t)


# --- dispatch's side ---------------------------------------------------------------------------

_JVPS: dict = {}


def _jvp_function(plan, positions: tuple):
    """``(duals, tangents, others) -> (out, tangent_out)`` for ``plan``'s forward, jitted."""
    key = (plan, positions)
    fn = _JVPS.get(key)
    if fn is None:
        forward = plan.forward

        def jvp(duals, tangents, others):
            def f(*d):
                args = list(others)
                for i, x in zip(positions, d):
                    args[i] = x
                return forward(*args)

            return jax.jvp(f, tuple(duals), tuple(tangents))

        if len(_JVPS) > 4096:
            _JVPS.clear()
        fn = _JVPS[key] = jax.jit(jvp)
    return fn


def propagate(plan, op, operands, arrays, result) -> None:
    """Give ``result`` the tangents of the op's JVP where an operand has one (Note [Forward
    AD])."""
    from .._tensor import Tensor
    from . import grad_mode

    if _state.paused:
        return
    positions = []
    tangents = []
    owners = []
    for i, o in enumerate(operands):
        if isinstance(o, Tensor):
            t = o.__dict__.get(_KEY)
            if t is not None:
                positions.append(i)
                tangents.append(t._data)
                owners.append((o, t))
    if not positions:
        return
    if plan.moves_in or plan.target is not None:
        raise NotImplementedError(DEVICES)
    positions = tuple(positions)
    args = list(arrays)
    if plan.scalars:
        from ..ops.dispatch import _weak_scalars

        args = list(_weak_scalars(args, plan.scalars))
    if grad_mode._state.grad_enabled and (
        any(isinstance(o, Tensor) and o._requires_grad for o in operands)
        or any(t._requires_grad for _, t in owners)
    ):
        # PyTorch's forward formulas read the primals (``other_t * self_p + ...``), so its
        # tangent would require grad: leafgrad cannot give it PyTorch's graph
        raise NotImplementedError(FORWARD_OVER_REVERSE.format(op.name))
    duals = [args[i] for i in positions]
    _, out_tangent = _jvp_function(plan, positions)(duals, tangents, args)
    outs = result if isinstance(result, tuple) else (result,)
    tans = out_tangent if isinstance(result, tuple) else (out_tangent,)
    for r, t in zip(outs, tans):
        if not isinstance(r, Tensor) or not (r.dtype.is_floating_point or r.dtype.is_complex):
            continue
        _set_tangent(r, Tensor._make(t, r._dtype, r._device))


def check_write(self) -> None:
    """Before an in-place write to ``self``: refuse one that tangents of other tensors on the
    same memory would have to follow."""
    cell = self.__dict__.get("_storage")
    if cell is not None:
        for m in cell.live():
            if m is not self and _KEY in m.__dict__:
                raise NotImplementedError(SHARED_WRITE)


def after_write(self, out) -> None:
    """An in-place op wrote ``out``'s value into ``self``: ``self`` takes ``out``'s tangent."""
    from .._tensor import Tensor

    new = out.__dict__.get(_KEY) if out is not None else None
    old = self.__dict__.get(_KEY)
    if new is None and old is None:
        return
    if new is None:
        new = Tensor._make(jax.numpy.zeros_like(old._data), old._dtype, old._device)
    elif new._dtype is not self._dtype:
        new = Tensor._make(new._data.astype(self._dtype.np), self._dtype, self._device)
    _set_tangent(self, new)
