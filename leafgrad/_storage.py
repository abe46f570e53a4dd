"""Shared storage: writes through a view, a base, ``detach()`` or ``.data`` are seen by all of them.

Note [Storage]: JAX arrays never change, so a tensor's ``_data`` is a value, not memory. Tensors
that share memory in PyTorch (a base and its views, ``detach()``, ``.data``) share a ``Storage``
here: the array of the storage's root and the set of its live members. Each member keeps its
``_chain``: the view steps ``(op, static items, output index)`` that take the root array to its
own. An in-place write computes the new value out of place, scatters it into the root through the
writer's chain, and re-reads every other member through its chain. A tensor that shares memory with
nobody has no storage object, so ordinary ops pay nothing, and reads always cost nothing: ``_data``
stays a plain attribute.

Note [View metadata]: a view also remembers how it was made (PyTorch's ``CreationMeta``: in grad
mode, under ``no_grad``, in inference mode, or as one output of a multi-view op) and the version of
the storage when its ``grad_fn`` was last set. When the storage has been written since, reading the
view's ``grad_fn`` regenerates it as ``AsStridedBackward0`` from the base's current history, or
raises PyTorch's error for views whose creation forbids it, exactly when PyTorch does (lazily).
"""

from __future__ import annotations

import weakref

import jax
import jax.numpy as jnp

from . import _errors as E
from .autograd.graph import make_op_node

__all__ = ["Storage", "share", "write", "chain_of", "gather", "scatter"]

DEFAULT, NO_GRAD_MODE, INFERENCE_MODE, MULTI_OUTPUT_NODE, IN_CUSTOM_FUNCTION = range(5)


class Storage:
    """The memory a group of tensors shares: the root array and the live members.

    Members are held by weak references keyed by ``id``: a ``WeakSet`` would compare tensors
    with ``==``, which is elementwise for tensors."""

    __slots__ = ("data", "members")

    def __init__(self, data) -> None:
        self.data = data
        self.members: dict = {}

    def add(self, t) -> None:
        key = id(t)
        members = self.members

        def gone(ref, key=key):
            if members.get(key) is ref:
                del members[key]

        members[key] = weakref.ref(t, gone)

    def discard(self, t) -> None:
        ref = self.members.get(id(t))
        if ref is not None and ref() is t:
            del self.members[id(t)]

    def live(self) -> list:
        return [t for t in (r() for r in list(self.members.values())) if t is not None]


class ViewMeta:
    """How a view was made and when its ``grad_fn`` was last made current (Note [View metadata])."""

    __slots__ = ("creation", "attr_version", "name", "output_nr")

    def __init__(self, creation: int, attr_version: int, name: str, output_nr: int) -> None:
        self.creation = creation
        self.attr_version = attr_version
        self.name = name
        self.output_nr = output_nr


def chain_of(t) -> tuple:
    return t.__dict__.get("_chain", ())


def share(source, result, step=None) -> None:
    """Make ``result`` share ``source``'s storage, one view ``step`` further from the root."""
    d = source.__dict__
    cell = d.get("_storage")
    if cell is None:
        cell = d["_storage"] = Storage(source._data)
        cell.add(source)
    rd = result.__dict__
    old = rd.get("_storage")
    if old is not None:
        old.discard(result)
    rd["_storage"] = cell
    cell.add(result)
    chain = d.get("_chain", ())
    if step is not None:
        chain = chain + (step,)
    if chain:
        rd["_chain"] = chain
    else:
        rd.pop("_chain", None)


def views_require_grad(base) -> None:
    """The views of ``base`` require grad once it does (PyTorch reads the base's flag)."""
    cell = base.__dict__.get("_storage")
    if cell is not None:
        for m in cell.live():
            if m._base is base:
                m._requires_grad = True


def shares_storage(a, b) -> bool:
    cell = a.__dict__.get("_storage")
    return cell is not None and cell is b.__dict__.get("_storage")


def write(t, value) -> None:
    """Give ``t`` the new value ``value`` (same shape and dtype) as if written into its memory:
    the storage root and every other tensor on the storage see the change."""
    cell = t.__dict__.get("_storage")
    if cell is None:
        t._data = value
        return
    chain = t.__dict__.get("_chain", ())
    root = value if not chain else scatter(chain)(cell.data, value)
    cell.data = root
    for m in cell.live():
        if m is t:
            m._data = value
            continue
        c = m.__dict__.get("_chain", ())
        m._data = root if not c else gather(c)(root)


# --- replaying view chains ---------------------------------------------------------------------

_GATHER: dict = {}
_SCATTER: dict = {}
_GATHER_VJP: dict = {}


def _apply(chain, x):
    for op, static, k in chain:
        x = op.forward(x, **dict(static))
        if k is not None:
            x = x[k]
    return x


def gather(chain):
    """Cached jit: the root array -> the array of the view reached by ``chain``."""
    fn = _GATHER.get(chain)
    if fn is None:
        fn = _GATHER[chain] = jax.jit(lambda root: _apply(chain, root))
    return fn


def scatter(chain):
    """Cached jit: (root array, new view value) -> the root with the view's elements replaced."""
    fn = _SCATTER.get(chain)
    if fn is None:
        conj = sum(1 for op, _, _ in chain if op.name == "conj_view") % 2 == 1

        def f(root, value):
            idx = _apply(chain, jnp.arange(root.size, dtype=jnp.int64).reshape(root.shape))
            value = jnp.conj(value) if conj else value
            flat = root.reshape(-1).at[idx.reshape(-1)].set(value.reshape(-1).astype(root.dtype))
            return flat.reshape(root.shape)

        fn = _SCATTER[chain] = jax.jit(f)
    return fn


def gather_vjp(chain):
    """Cached jit: (base-shaped zeros' shape via ``like``, view cotangent) -> base cotangent."""
    fn = _GATHER_VJP.get(chain)
    if fn is None:

        def f(like, ct):
            return jax.vjp(lambda b: _apply(chain, b), like)[1](ct)[0]

        fn = _GATHER_VJP[chain] = jax.jit(f)
    return fn


def relative_chain(view, base) -> tuple:
    """The view steps from ``base`` to ``view`` (``view`` was made from ``base`` by views)."""
    vc, bc = chain_of(view), chain_of(base)
    if vc[: len(bc)] != bc:
        raise NotImplementedError(
            "leafgrad: an in-place op on a view made before an in-place shape change of its base "
            "(t_, transpose_, squeeze_, unsqueeze_) is not supported"
        )
    return vc[len(bc) :]


# --- view grad_fn regeneration (Note [View metadata]) ------------------------------------------


def as_strided_node(view, base):
    """``AsStridedBackward0``: the view's gradient scattered into the base's shape."""
    from .ops.dispatch import _plain_edge

    chain = relative_chain(view, base)
    shape, dtype = base._data.shape, base._data.dtype
    vjp = gather_vjp(chain)

    def backward(primals, cts):
        return (vjp(jnp.zeros(shape, dtype), cts[0]),)

    return make_op_node("AsStridedBackward0", (_plain_edge(base),), backward, (), False)


def rebase_error(meta: ViewMeta, indirect: bool) -> str | None:
    """PyTorch's ``handle_view_on_rebase`` message for a view that may not be rebased."""
    c = meta.creation
    if c == DEFAULT:
        return None
    if c == MULTI_OUTPUT_NODE:
        what = (
            "its base or another view of its base has been modified inplace"
            if indirect
            else "is being modified inplace"
        )
        return E.VIEW_MULTI_OUTPUT.format(meta.output_nr, meta.name, what)
    if c == IN_CUSTOM_FUNCTION:
        from .autograd.function import VIEW_IN_CUSTOM_FUNCTION

        what = (
            "its base or another view of its base has been modified inplace"
            if indirect
            else "is being modified inplace"
        )
        return VIEW_IN_CUSTOM_FUNCTION.format(meta.output_nr, meta.name, what)
    if c == NO_GRAD_MODE:
        return E.VIEW_NO_GRAD_INDIRECT if indirect else E.VIEW_NO_GRAD
    return E.VIEW_INFERENCE_INDIRECT if indirect else E.VIEW_INFERENCE


def view_grad_fn(t):
    """The current ``grad_fn`` of the view ``t``, regenerated when its storage was written."""
    meta = t.__dict__.get("_vmeta")
    if meta is None:
        return t._grad_fn
    base = t._base
    if t._grad_fn is None and not base._requires_grad:
        return None
    version = t._version_counter.value
    if meta.attr_version == version:
        return t._grad_fn
    msg = rebase_error(meta, indirect=True)
    if msg is not None:
        raise RuntimeError(msg)
    meta.attr_version = version
    if base._requires_grad:
        t._grad_fn = as_strided_node(t, base)
        t._output_nr = 0
        t._requires_grad = True
    else:
        t._grad_fn = None
    return t._grad_fn
