"""One jitted update for a whole parameter group: the optimizers' fast path.

Note [Group update]: PyTorch's for-loop kernels update each parameter with a few in-place ops, and
leafgrad's in-place ops each pay the full in-place dispatch (checks, a jitted call, the write,
the version bump). When nothing in a group needs that machinery, the whole group's update runs as
one cached ``jax.jit`` over all parameters, gradients and state, and the results are written
back as the in-place ops would have written them: through ``_storage.write`` (so tensors sharing
a parameter's memory see the change), each version counter bumped once per in-place op PyTorch
runs on it, new state tensors made as PyTorch makes them. Inside the jit each in-place op of the
for-loop is the same ``jax.numpy`` expression as its table entry, in the same order, with the
hyperparameters rounded to the tensor's dtype on the host as PyTorch rounds a Scalar; XLA
reassociates nothing, so the values are those of the per-op path, bit for bit.

A group takes the per-op path instead whenever it could behave differently: grad mode or
inference mode on (the in-place checks apply), ``leafgrad.compile`` tracing, hyperparameters that
are tensors requiring grad or not plain numbers, tensors that are not float32/float64, inference
tensors, tensors with recorded strides (expanded, transposed), tensors on different devices or
of different dtypes or shapes than their parameter, a parameter subclass with its own in-place
ops, and any memory shared among the tensors the update reads and writes (a parameter twice, a
parameter and a view of it, a gradient aliasing a parameter): there the order of the per-op
writes matters.

Note [Donated parameters]: PyTorch updates a parameter in its own memory. A jitted update makes
new arrays, and for a large layer allocating them costs more than the arithmetic (a 4 MiB update:
1.4 ms fresh, 0.17 ms donated, on this CPU), and the step's peak memory holds old and new
parameters at once. So an array is donated to the update (XLA writes the result into its buffer)
when nothing else can read it afterwards: its tensor shares memory with no other tensor (Note
[Storage]; or only its storage's root array, which is the same array) and the array object has
no reference besides those (``sys.getrefcount``: a graph kept with ``retain_graph``, a NumPy view
from ``.numpy()`` or a user's hold on the array each add one). JAX never lets two array objects
share a buffer here (a jitted call returns new buffers), so the count is the whole truth.
"""

from __future__ import annotations

import sys

import jax
import jax.numpy as jnp
import numpy as np

from .. import _compile
from .. import _dtype as D
from .. import _storage as S
from .._tensor import Tensor
from ..autograd import grad_mode

__all__ = ["sgd_group"]

_FLOATS = (D.float32, D.float64)
_KERNELS: dict = {}


def _number(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _eager_no_grad() -> bool:
    """The per-op path would run under ``no_grad`` outside inference mode, eagerly."""
    state = grad_mode._state
    return not (state.grad_enabled or state.inference or _compile.is_compiling())


def _cell(t: Tensor) -> int:
    """Identifies the memory ``t`` is part of (Note [Storage])."""
    cell = t.__dict__.get("_storage")
    return id(t) if cell is None else id(cell)


def _plain(t, like: Tensor) -> bool:
    """``t`` is a tensor the jit may read or rewrite like ``like``: same dtype (float32/float64),
    shape and device, not an inference tensor, dense."""
    return (
        isinstance(t, Tensor)
        and t._dtype is like._dtype
        and t._data.shape == like._data.shape
        and t._device == like._device
        and not t._inference
        and "_strides" not in t.__dict__
    )


def _plain_tensors(params, grads, states) -> bool:
    """Every parameter, gradient and existing state tensor may take the group update (Note
    [Group update]); ``states``: per parameter, its state tensors (None for ones not made yet)."""
    if not params:
        return False
    device = params[0]._device
    written: set[int] = set()
    read: list[int] = []
    for p, g, st in zip(params, grads, states):
        if not (
            p._dtype in _FLOATS
            and p._device == device
            and not p._inference
            and "_strides" not in p.__dict__
            and (type(p) is Tensor or type(p).add_ is Tensor.add_)
            and _plain(g, p)
        ):
            return False
        for t in (p, *st):
            if t is None:
                continue
            if t is not p and not _plain(t, p):
                return False
            key = _cell(t)
            if key in written:
                return False
            written.add(key)
        read.append(_cell(g))
    return written.isdisjoint(read)


# Note [Contracted multiply-add]: XLA on CPU computes ``x + a * y`` as one fused multiply-add
# (one rounding), as PyTorch's vectorized ``add(alpha=)`` kernels do, which is why the per-op path
# matches PyTorch. ``buf.mul_(momentum).add_(grad, alpha=a)`` rounds ``buf * momentum`` on its
# own, then fuses ``a * grad`` into the add; in one jit, ``buf * momentum + a * grad`` lets LLVM
# fuse either product (which one depends on operand order and sign folding). An optimization
# barrier does not keep them apart (XLA removes it before fusion), so the rounded product goes
# through its bits OR a zero the program cannot see: an integer, not a product, that no
# compiler can fuse into the add. It costs one vectorized OR per element.
def _rounded(x, zero):
    """``x`` as a value no later add can fuse with the multiply that made it."""
    bits = jax.lax.bitcast_convert_type(x, zero.dtype) | zero
    return jax.lax.bitcast_convert_type(bits, x.dtype)


def _write(t: Tensor, value, ops: int) -> None:
    """Write ``value`` into ``t`` as ``ops`` in-place ops in a row would (``inplace.commit``)."""
    S.write(t, value)
    t._version_counter.value += ops


_BITS = {"float32": np.int32, "float64": np.int64}


def _hyper(values, dtypes) -> dict:
    """Per dtype: each hyperparameter rounded on the host to it, as PyTorch rounds a Scalar, and
    a zero of its bit width (Note [Contracted multiply-add])."""
    return {dt.np.name: (np.asarray(values, dtype=dt.np), _BITS[dt.np.name](0)) for dt in dtypes}


# --- SGD ---------------------------------------------------------------------------------------


def _refs(t: Tensor) -> int:
    return sys.getrefcount(t._data)


_ALONE: list = []  # the count of an array held by its tensor only, measured once


def _donatable(t) -> bool:
    """Whether ``t``'s array may be donated to the update (Note [Donated parameters])."""
    if not _ALONE:
        _ALONE.append(_refs(Tensor._make(jnp.zeros(1), D.float32, None)))
    if t is None:
        return False
    cell = t.__dict__.get("_storage")
    if cell is None:
        return _refs(t) <= _ALONE[0]
    # a storage left with this one member (a Parameter made from a tensor since dropped): its
    # root is this same array, one more reference
    members = cell.live()
    if len(members) != 1 or members[0] is not t or cell.data is not t._data:
        return False
    del members
    return _refs(t) <= _ALONE[0] + 1


def _split(values, mask):
    return [v for v, d in zip(values, mask) if d], [v for v, d in zip(values, mask) if not d]


def _join(donated, kept, mask):
    donated, kept = iter(donated), iter(kept)
    return [next(donated) if d else next(kept) for d in mask]


def _sgd_kernel(maximize, decay, momentum, nesterov, have_buf: tuple, donate: tuple, bdonate):
    """The jitted for-loop of ``sgd`` over a group, each line one op of the per-op path; the
    arrays ``donate``/``bdonate`` mark are donated (Note [Donated parameters])."""
    key = ("sgd", maximize, decay, momentum, nesterov, have_buf, donate, bdonate)
    fn = _KERNELS.get(key)
    if fn is not None:
        return fn

    def update(dparams, kparams, grads, dbufs, kbufs, hyper):
        params = _join(dparams, kparams, donate)
        bufs = _join(dbufs, kbufs, bdonate)
        new_params, new_bufs = [], []
        for p, g, b, has in zip(params, grads, bufs, have_buf):
            (wd, mom, buf_alpha, neg_lr), zero = hyper[p.dtype.name]
            if maximize:
                g = -g  # grad.neg()
            if decay:
                g = g + wd * p  # grad.add(param, alpha=weight_decay)
            if momentum:
                # buf.mul_(momentum).add_(grad, alpha=1 - dampening) (Note [Contracted
                # multiply-add]), or a clone of grad
                b = _rounded(b * mom, zero) + buf_alpha * g if has else g
                new_bufs.append(b)
                g = g + mom * b if nesterov else b  # grad.add(buf, alpha=momentum)
            new_params.append(p + neg_lr * g)  # param.add_(grad, alpha=-lr)
        return new_params, new_bufs

    fn = _KERNELS[key] = jax.jit(update, donate_argnums=(0, 3))
    return fn


def sgd_group(
    params: list[Tensor],
    grads: list[Tensor],
    momentum_buffer_list: list[Tensor | None],
    *,
    weight_decay,
    momentum,
    lr,
    dampening,
    nesterov: bool,
    maximize: bool,
) -> bool:
    """Run ``sgd``'s update of the whole group as one jitted call (Note [Group update]); False,
    doing nothing, where the group needs the per-op path."""
    if not (
        _eager_no_grad()
        and _number(weight_decay)
        and _number(momentum)
        and _number(dampening)
        and (_number(lr) or (isinstance(lr, Tensor) and not lr.requires_grad))
    ):
        return False
    has_momentum = momentum != 0
    bufs = momentum_buffer_list if has_momentum else [None] * len(params)
    if not _plain_tensors(params, grads, [(b,) for b in bufs]):
        return False
    neg_lr = -(lr.item() if isinstance(lr, Tensor) else lr)
    # add_(..., alpha=1) adds without a multiply; multiplying by 1.0 gives the same numbers
    hyper = _hyper([weight_decay, momentum, 1 - dampening, neg_lr], {p._dtype for p in params})
    have_buf = tuple(b is not None for b in bufs)
    donate = tuple(_donatable(p) for p in params)
    bdonate = tuple(_donatable(b) for b in bufs)
    kernel = _sgd_kernel(
        bool(maximize), weight_decay != 0, has_momentum, bool(nesterov), have_buf, donate, bdonate
    )
    dparams, kparams = _split([p._data for p in params], donate)
    dbufs, kbufs = _split([None if b is None else b._data for b in bufs], bdonate)
    new_params, new_bufs = kernel(dparams, kparams, [g._data for g in grads], dbufs, kbufs, hyper)
    del dparams, dbufs
    for p, value in zip(params, new_params):
        _write(p, value, 1)
    if has_momentum:
        for i, (p, value) in enumerate(zip(params, new_bufs)):
            buf = momentum_buffer_list[i]
            if buf is None:  # grad.detach().clone(): a new tensor at version 0
                momentum_buffer_list[i] = Tensor._make(value, p._dtype, p._device)
            else:
                _write(buf, value, 2)  # mul_ then add_
    return True
