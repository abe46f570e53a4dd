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

import functools
import weakref

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from . import _errors as E
from . import _zero
from .autograd import grad_mode
from .autograd.graph import make_op_node

__all__ = ["Storage", "share", "write", "chain_of", "gather", "scatter"]

DEFAULT, NO_GRAD_MODE, INFERENCE_MODE, MULTI_OUTPUT_NODE, IN_CUSTOM_FUNCTION = range(5)


class Storage:
    """The memory a group of tensors shares: the root array and the live members.

    Members are held by weak references keyed by ``id``: a ``WeakSet`` would compare tensors
    with ``==``, which is elementwise for tensors."""

    __slots__ = ("data", "members", "zero")

    def __init__(self, data) -> None:
        self.data = data
        self.members: dict = {}
        self.zero = False  # a zero tensor's (Note [Zero gradients] in _zero.py)

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
                # Note [Views that inherit requires_grad] (dispatch.py): a view that requires
                # grad by its own flag keeps it as its own
                if m._grad_fn is None and not m._requires_grad:
                    m.__dict__["_inherited_rg"] = True
                m._requires_grad = True


def views_stop_requiring_grad(base) -> None:
    """The views that required grad only through ``base`` stop when it does (PyTorch reads the
    base's flag)."""
    cell = base.__dict__.get("_storage")
    if cell is not None:
        for m in cell.live():
            if m._base is base and m.__dict__.pop("_inherited_rg", None):
                m._requires_grad = False


def shares_storage(a, b) -> bool:
    cell = a.__dict__.get("_storage")
    return cell is not None and cell is b.__dict__.get("_storage")


def write(t, value, uniform: bool = False) -> None:
    """Give ``t`` the new value ``value`` (same shape and dtype) as if written into its memory:
    the storage root and every other tensor on the storage see the change. ``uniform``: every
    element of ``value`` is the same, so elements of ``t`` that share memory may be written."""
    cell = t.__dict__.get("_storage")
    if cell is None or t._device.type == "meta":  # Note [Meta tensors]: no values to write
        t._data = value
        return
    if cell.zero:  # Note [Zero gradients] in _zero.py
        raise RuntimeError(_zero.IMMUTABLE)
    chain = t.__dict__.get("_chain", ())
    if chain and not uniform and shares_elements(chain, cell.data.shape):
        raise NotImplementedError(SHARED_ELEMENTS)
    root = value if not chain else scatter(chain)(cell.data, value)
    cell.data = root
    for m in cell.live():
        if m is t:
            m._data = value
            continue
        c = m.__dict__.get("_chain", ())
        m._data = root if not c else gather(c)(root)


# --- replaying view chains ---------------------------------------------------------------------


def _apply(chain, x):
    for op, static, k in chain:
        x = op.forward(x, **dict(static))
        if k is not None:
            x = x[k]
    return x


# Note [Index maps]: a chain of view steps selects elements of the root, so it is described by
# the root positions of the view's elements. They are computed once per (chain, root shape) on
# the host with NumPy, and gathers and scatters take them as a runtime argument: one compiled
# gather or scatter serves every index (``x[i] = v`` in a loop compiles once, not once per i).
def _np_slice(x, dim, start, stop, step):
    key = [slice(None)] * x.ndim
    key[dim] = slice(start, stop, step)
    return x[tuple(key)]


def _np_split(x, dim, sizes, with_sizes=False):
    out, start = [], 0
    for size in sizes:
        out.append(_np_slice(x, dim, start, start + size, 1))
        start += size
    return tuple(out)


_NUMPY_STEPS = {
    "unsqueeze": lambda x, dim: np.expand_dims(x, dim),
    "squeeze_dim": lambda x, dim, inplace=False: np.squeeze(x, dim) if x.shape[dim] == 1 else x,
    "squeeze_dims": lambda x, dims, variant: np.squeeze(x, tuple(dims)) if dims else x,
    "unbind": lambda x, dim, n: tuple(np.take(x, i, axis=dim) for i in range(n)),
    "view": lambda x, shape: x.reshape(shape),
    "reshape_alias": lambda x, shape: x.reshape(shape),
    "alias": lambda x: x,
    "conj_view": lambda x: x,
    "transpose": lambda x, dim0, dim1: np.swapaxes(x, dim0, dim1) if x.ndim else x,
    "t": lambda x: x.T,
    "permute": lambda x, dims: np.transpose(x, dims),
    "expand": lambda x, shape: np.broadcast_to(x, shape),
    "slice": _np_slice,
    "select": lambda x, dim, index: np.take(x, index, axis=dim),
    "diagonal": lambda x, offset, dim1, dim2: np.diagonal(x, offset, dim1, dim2),
    "split": _np_split,
    # Note [Real views]: ``real``, ``imag`` and ``view_as_real`` view a complex root as real.
    # Positions after ``view_as_real`` index the root's real view (``2 * p`` the real part of
    # root element ``p``, ``2 * p + 1`` its imaginary part), so gathers and scatters run on that
    # view (``flat_root``) and a write replaces one part of the root. A conjugated tensor is
    # unconjugated before it is viewed as real (``imag`` then negates: ``neg_view``).
    "view_as_real": lambda x: np.stack([2 * x, 2 * x + 1], -1),
    "neg_view": lambda x: x,
    "view_dtype": lambda x, dtype, from_size: _np_units(x, from_size, dtype.itemsize),
    # Note [Complex views]: ``view_as_complex`` views real memory (a last dim of 2, stride 1, the
    # other strides and the offset even: checked by its frontend) as complex. Its step halves
    # the positions of the real parts, so the positions of a chain through it count elements of
    # the complex dtype (``unit_dtype``): gathers and scatters read the root's bytes as complex,
    # as for a dtype view (Note [Dtype views]). After it the chain no longer views complex memory
    # as real (``is_real_view``), unless a ``view_as_real`` follows.
    "view_as_complex_view": lambda x, dtype: x[..., 0] // 2,
}


def _np_units(x, from_size: int, to_size: int):
    """Positions in units of ``from_size`` bytes as positions in units of ``to_size`` bytes (Note
    [Dtype views]): a smaller element splits the last dim, a larger one merges it."""
    if from_size == to_size:
        return x
    if to_size < from_size:
        r = from_size // to_size
        return (x[..., None] * r + np.arange(r)).reshape(x.shape[:-1] + (x.shape[-1] * r,))
    return x[..., :: to_size // from_size] // (to_size // from_size)


# Note [Strided views]: ``as_strided`` selects storage positions, not elements of its input: its
# step's positions come from its own sizes, strides and offset, whatever the steps before it.
# Positions are in units of the view's element (the storage root's, or those of the last dtype
# view: Note [Dtype views]). A root laid out other than in order (``empty_strided``, a clone of a
# transposed tensor) keeps its strides in the step (``root_stride``): a storage position then
# names the root element laid out there (``as_strided`` refuses such a root seen through a dtype
# or real view).
STORAGE_STEPS = frozenset({"as_strided"})


def dense_layout(shape, strides) -> bool:
    """Whether ``strides`` lay ``shape``'s elements out over exactly its number of storage
    positions (a permutation of the dims, size-1 dims aside)."""
    n = int(np.prod(shape, dtype=np.int64))
    pos = strided_positions(shape, strides, 0).ravel()
    return n == 0 or (pos.max() == n - 1 and len(np.unique(pos)) == n)


def _elements_at(shape, strides) -> np.ndarray:
    """For each storage position of a dense layout of ``shape``, the (row-major) index of the
    element laid out there."""
    pos = strided_positions(shape, strides, 0).ravel()
    at = np.empty_like(pos)
    at[pos] = np.arange(pos.size, dtype=np.int64)
    return at


def strided_positions(size, stride, offset: int):
    """The storage positions of the elements of a strided layout (NumPy, ``size``-shaped)."""
    pos = np.full(tuple(size), offset, dtype=np.int64)
    for d, (n, st) in enumerate(zip(size, stride)):
        shape = [1] * len(size)
        shape[d] = n
        pos = pos + (np.arange(n, dtype=np.int64) * st).reshape(shape)
    return pos


_INDEX: dict = {}


def is_real_view(chain) -> bool:
    """Whether the chain views a complex root as real (Note [Real views]): its last step between
    real and complex views is a ``view_as_real`` (Note [Complex views])."""
    for op, _, _ in reversed(chain):
        if op.name == "view_as_real":
            return True
        if op.name == "view_as_complex_view":
            return False
    return False


def index_map(chain, shape) -> tuple:
    """The root positions of the view's elements (``jax.Array``, the view's shape) and whether
    the chain conjugates its values (negates them, for a real view: Note [Real views])
    (Note [Index maps])."""
    key = (chain, tuple(shape))
    found = _INDEX.get(key)
    if found is not None:
        return found
    if len(_INDEX) > 4096:
        _INDEX.clear()
    # a real view is made from an unconjugated tensor, so only its negations count
    flip = "neg_view" if is_real_view(chain) else "conj_view"
    conj = sum(1 for op, _, _ in chain if op.name == flip) % 2 == 1
    x = np.arange(int(np.prod(shape, dtype=np.int64)), dtype=np.int64).reshape(shape)
    # the map is a constant, cached across calls: made concrete even while a jax.jit traces
    with jax.ensure_compile_time_eval():
        for op, static, k in chain:
            step = _NUMPY_STEPS.get(op.name)
            if op.name in STORAGE_STEPS and "in_stride" in dict(static):
                a = dict(static)
                x = strided_positions(a["size"], a["stride"], a["storage_offset"])
                if a.get("root_stride") is not None:  # storage positions -> root elements
                    x = _elements_at(shape, a["root_stride"])[x]
            elif step is not None:
                x = step(x, **dict(static))
            else:  # a step NumPy does not know: its jax forward
                x = np.asarray(jax.jit(functools.partial(op.forward, **dict(static)))(x))
            if k is not None:
                x = x[k]
        idx = jnp.asarray(np.array(x, order="C"))  # (ascontiguousarray makes 0-d 1-d)
    found = _INDEX[key] = (idx, conj)
    return found


# Note [Overlapping windows] in ops/layout_ops.py: PyTorch's in-place kernels update an element
# that several windows of an ``unfold`` view share once per window; leafgrad writes a view's new
# value out of place, once per element, so it refuses rather than give another result.
SHARED_ELEMENTS = (
    "leafgrad: in-place writes through a view whose elements share memory (unfold with step < "
    "size, an overlapping as_strided) are not supported: PyTorch updates a shared element once "
    "per window. Write to a clone() of the view instead."
)
_SHARING: dict = {}


def positions(t) -> np.ndarray:
    """The storage-root positions of ``t``'s elements, in ``t``'s shape."""
    chain = chain_of(t)
    if not chain:
        return np.arange(t._data.size, dtype=np.int64).reshape(t._data.shape)
    return np.asarray(index_map(chain, t.__dict__["_storage"].data.shape)[0])


def shares_elements(chain, shape) -> bool:
    """Whether an ``unfold`` or ``as_strided`` step of ``chain`` gives two elements of the view
    one root position."""
    if not any(op.name == "unfold" or op.name in STORAGE_STEPS for op, _, _ in chain):
        return False
    key = (chain, tuple(shape))
    found = _SHARING.get(key)
    if found is None:
        idx, _ = index_map(chain, shape)
        with jax.ensure_compile_time_eval():
            flat = np.asarray(idx).ravel()
        found = _SHARING[key] = len(np.unique(flat)) < flat.size
    return found


# Note [Dtype views]: ``view(dtype)`` reinterprets memory. Its step turns positions into units of
# the new element (``_np_units``), so the positions of a chain through it index the root's bytes
# read as the chain's last element type (``unit_dtype``): gathers and scatters run on the root
# reinterpreted that way (``reinterpret``), and a write reinterprets it back.
def unit_dtype(chain):
    """The NumPy dtype whose elements a chain with a dtype view positions, else None."""
    unit = None
    for op, static, _ in chain:
        if op.name == "view_dtype":
            unit = np.dtype(dict(static)["dtype"].np)
        elif op.name == "view_as_real" and unit is not None:
            unit = np.dtype(np.float32 if unit == np.complex64 else np.float64)
        elif op.name == "view_as_complex_view":
            unit = np.dtype(dict(static)["dtype"].np)
    return unit


def _to_bytes(x):
    """The bytes of ``x`` as uint8, its last dim times the element size (``x.ndim >= 1``)."""
    if x.dtype == jnp.bool_:
        return x.astype(jnp.uint8)
    if jnp.iscomplexobj(x):
        x = jnp.stack([jnp.real(x), jnp.imag(x)], -1).reshape(x.shape[:-1] + (-1,))
    if x.dtype.itemsize == 1:
        return lax.bitcast_convert_type(x, jnp.uint8)
    b = lax.bitcast_convert_type(x, jnp.uint8)
    return b.reshape(x.shape[:-1] + (-1,))


def _from_bytes(b, dtype):
    """uint8 bytes (last dim) read as ``dtype``: the last dim divided by its size."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return b != 0
    if dtype.kind == "c":
        part = np.dtype(np.float32 if dtype == np.complex64 else np.float64)
        f = _from_bytes(b, part)
        f = f.reshape(f.shape[:-1] + (-1, 2))
        return lax.complex(f[..., 0], f[..., 1])
    if dtype.itemsize == 1:
        return lax.bitcast_convert_type(b, dtype)
    return lax.bitcast_convert_type(b.reshape(b.shape[:-1] + (-1, dtype.itemsize)), dtype)


def reinterpret(x, dtype):
    """``x``'s memory read as ``dtype`` (PyTorch's ``view(dtype)``): the same shape for an
    element of the same size, else the last dim scaled."""
    dtype = np.dtype(dtype)
    if x.dtype == dtype:
        return x
    same = x.dtype.itemsize == dtype.itemsize
    if same and x.dtype.kind not in "bc" and dtype.kind not in "bc":
        return lax.bitcast_convert_type(x, dtype)
    if x.ndim == 0:
        return reinterpret(x.reshape(1), dtype).reshape(())
    return _from_bytes(_to_bytes(x), dtype)


def flat_root(chain, root):
    """The array whose flattened elements ``index_map`` positions: the root, or its real view."""
    unit = unit_dtype(chain)
    if unit is not None:
        return reinterpret(root.reshape(-1), unit)
    return jnp.stack([jnp.real(root), jnp.imag(root)], -1) if is_real_view(chain) else root


def unflat_root(chain, like, flat):
    """The root array from ``flat_root``'s layout (``like``: an array of the root's shape)."""
    if unit_dtype(chain) is not None:
        return reinterpret(flat.reshape(-1), like.dtype).reshape(like.shape)
    flat = flat.reshape(like.shape + (2,) if is_real_view(chain) else like.shape)
    return lax.complex(flat[..., 0], flat[..., 1]) if is_real_view(chain) else flat


def flip_values(chain, value, conj: bool):
    """``value`` conjugated (negated, for a real view) when ``index_map`` says so."""
    if not conj:
        return value
    return -value if is_real_view(chain) else jnp.conj(value)


@jax.jit
def _take(root, idx):
    return root.reshape(-1)[idx]


@jax.jit
def _put(root, idx, value):
    flat = root.reshape(-1).at[idx.reshape(-1)].set(value.reshape(-1).astype(root.dtype))
    return flat.reshape(root.shape)


@jax.jit
def _add_at(root, idx, value):
    flat = root.reshape(-1).at[idx.reshape(-1)].add(value.reshape(-1).astype(root.dtype))
    return flat.reshape(root.shape)


def gather(chain):
    """The root array -> the array of the view reached by ``chain``."""

    def fn(root):
        idx, conj = index_map(chain, root.shape)
        return flip_values(chain, _take(flat_root(chain, root), idx), conj)

    return fn


def scatter(chain):
    """(root array, new view value) -> the root with the view's elements replaced."""

    def fn(root, value):
        idx, conj = index_map(chain, root.shape)
        value = flip_values(chain, value, conj)
        return unflat_root(chain, root, _put(flat_root(chain, root), idx, value))

    return fn


def gather_vjp(chain):
    """(base-shaped ``like``, view cotangent) -> base cotangent (the gather's VJP: a scatter-add
    of the cotangent into zeros)."""

    def fn(like, ct):
        idx, conj = index_map(chain, like.shape)
        zeros = flat_root(chain, jnp.zeros(like.shape, like.dtype))
        return unflat_root(chain, like, _add_at(zeros, idx, flip_values(chain, ct, conj)))

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


def move_retained(t, node) -> None:
    """``t`` (which called ``retain_grad()``) gets a new ``grad_fn``, ``node``: its retained
    gradient is then read from ``node``'s first output, as PyTorch moves its retains-grad hook."""
    old = t._grad_fn
    if t._retains_grad and old is not None and old is not node and old._retained:
        old._retained.pop(t._output_nr, None)
        node._retain(0, t)


# Note [Saved outputs of in-place ops on views]: PyTorch saves the output of an in-place op on a
# view (``v.exp_()``) after giving the view its regenerated grad_fn (AsStridedBackward0 over the
# base's CopySlices), and keeps that grad_fn weakly (``SavedVariable::is_inplace_on_view_``): the
# unpacked output, read by the op's formula under ``create_graph``, reaches the op's node only
# through CopySlices, which runs and releases it. Unpacked with the op's own node instead, a
# second backward would meet that node after CopySlices released it.
_INPLACE_ON_VIEW: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def rebased(node, view_node) -> None:
    """Remember that ``node`` (an in-place op on a view) made ``view_node`` the view's grad_fn."""
    _INPLACE_ON_VIEW[node] = weakref.ref(view_node)


def saved_output_node(node):
    """The grad_fn of ``node``'s own output as its saved copy unpacks (Note [Saved outputs of
    in-place ops on views]): the view's regenerated node while it lives, else ``node``."""
    ref = _INPLACE_ON_VIEW.get(node)
    view_node = ref() if ref is not None else None
    return node if view_node is None else view_node


def as_strided_node(view, base):
    """``AsStridedBackward0``: the view's gradient scattered into the base's shape (the nodes of
    ``_replayed_nodes`` for a view through ``view_as_real`` or ``view_as_complex``)."""
    from .ops.dispatch import _plain_edge

    chain = relative_chain(view, base)
    if any(op.name in _REPLAYED_VIEWS for op, _, _ in chain):
        return _replayed_nodes(chain, base, view)
    shape, dtype = base._data.shape, base._data.dtype
    vjp = gather_vjp(chain)

    def backward(primals, cts):
        return (vjp(jnp.zeros(shape, dtype), cts[0]),)

    node = make_op_node("AsStridedBackward0", (_plain_edge(base),), backward, (), False)
    _save_geometry(node, view)
    return node


def _save_geometry(node, view) -> None:
    """What PyTorch's ``AsStridedBackward0`` saves: the view's geometry."""
    from .autograd.saved import _WRITTEN

    _WRITTEN[node] = {
        "size": tuple(view.shape),
        "stride": tuple(view.stride()),
        "storage_offset": view.storage_offset(),
    }


# PyTorch replays the views that change a tensor's metadata (``view_as_real``,
# ``view_as_complex``) with their own op when it regenerates a view's ``grad_fn``: the steps
# before the first of them become one ``AsStridedBackward0`` of the base, each step after it one
# node of its own (an ``AsStridedBackward0`` of the tensor before it, or the op's node).
_REPLAYED_VIEWS = frozenset({"view_as_real", "view_as_complex_view"})


def _replayed_nodes(chain, base, view):
    """The regenerated ``grad_fn`` of a view whose chain from ``base`` has a replayed view (a
    last ``AsStridedBackward0`` saves the view's geometry; one before a replayed view saves
    nothing here)."""
    from .ops.dispatch import _plain_edge

    first = next(i for i, (op, _, _) in enumerate(chain) if op.name in _REPLAYED_VIEWS)
    segments = ([chain[:first]] if first else []) + [(step,) for step in chain[first:]]
    edge, like = _plain_edge(base), base._data
    node = None
    for seg in segments:
        op = seg[0][0]
        single = len(seg) == 1 and op.name in _REPLAYED_VIEWS
        name = op.node_name(dict(seg[0][1])) if single else "AsStridedBackward0"
        shape, dtype = like.shape, like.dtype
        vjp = gather_vjp(seg)

        def backward(primals, cts, vjp=vjp, shape=shape, dtype=dtype):
            return (vjp(jnp.zeros(shape, dtype), cts[0]),)

        node = make_op_node(name, (edge,), backward, (), False)
        edge = (node, 0)
        like = jax.eval_shape(functools.partial(_apply, seg), like)
    if not single:
        _save_geometry(node, view)
    return node


def stale_view_error(t) -> str | None:
    """The error collecting ``t``'s edge raises (``view_grad_fn``) when ``t`` is a view made in
    no_grad mode whose base was written with grad mode on, else None; changes nothing."""
    if not _written_since(t):
        return None
    from .ops.inplace import view_rebase_error  # the ops import this module

    return view_rebase_error(t, indirect=True)


def _written_since(t) -> bool:
    """Whether the view ``t``'s storage was written since its grad_fn was made, and it has a
    history (or a base with one) to regenerate."""
    meta = t.__dict__.get("_vmeta")
    if meta is None or meta.attr_version == t._version_counter.value:
        return False
    return t._grad_fn is not None or t._base._requires_grad


def view_grad_fn(t):
    """The current ``grad_fn`` of the view ``t``, regenerated when its storage was written."""
    if not _written_since(t):
        return t._grad_fn
    msg = stale_view_error(t)
    if msg is not None:
        raise RuntimeError(msg)
    base = t._base
    t.__dict__["_vmeta"].attr_version = t._version_counter.value
    # as PyTorch: regenerated even when the base stopped requiring grad (``detach_()``); the
    # node's edge to the base is then empty
    regenerated = as_strided_node(t, base)
    move_retained(t, regenerated)
    t._grad_fn = regenerated
    t._output_nr = 0
    t._requires_grad = True
    return t._grad_fn


# --- inference tensors ---------------------------------------------------------------------------

# Note [Inference tensors]: PyTorch's inference tensors have no version counter and no autograd
# dispatch keys, and leafgrad follows what that implies:
# - reading ``_version`` raises; an in-place write outside inference mode writes, then raises
#   (the version bump fails); inside inference mode it bumps nothing. ``detach()`` and ``.data``
#   outside inference mode make inference tensors with a counter of their own (``_counted``),
#   which may be written anywhere;
# - a view of an inference tensor is an inference tensor and not a view (``_base`` is None); a
#   view of a normal tensor made in inference mode is a normal view;
# - ``detach_()`` of an inference tensor, and any ``detach_()`` in inference mode, does nothing;
# - an op whose tensor operands are all inference tensors is not recorded, even outside inference
#   mode and when one requires grad. Its CPU kernel then runs on fresh normal tensors, and each
#   in-place or ``out=`` call it makes on them goes through autograd: it bumps their version
#   (``KERNEL_WRITES``: the result's version), and an ``out=`` call raises in grad mode when an
#   input requires grad. ``clone`` and ``to`` copy with ``copy_`` (``Tensor.clone``).


def kernel_wrote(given, *written) -> bool:
    """Note [Inference tensors]: where every tensor of ``given`` (None skipped) is an inference
    tensor and inference mode is off, PyTorch ran the op's kernel below autograd on fresh normal
    results, and each of its in-place writes counted. ``written`` pairs a result with its version
    (as PyTorch's kernel leaves it; measured); returns whether the writes counted."""
    if grad_mode._state.inference or not all(t._inference for t in given if t is not None):
        return False
    for t, version in written:
        t._version_counter.value = version
    return True


def counts_versions(t) -> bool:
    """Whether ``t`` has a version counter (Note [Inference tensors])."""
    return not t._inference or "_counted" in t.__dict__


def _always(version, out=None):
    return lambda static, shape, dtype: (version, out)


def _is_half(dtype) -> bool:
    return dtype is not None and dtype._kind == "f" and dtype.itemsize == 2


def _is_complex(dtype) -> bool:
    return dtype is not None and dtype._kind == "c"


def _size1_dim(static, shape) -> int:
    """1 where ``static["dim"]`` names a dim of size 1 of a tensor of ``shape``, else 0."""
    dim = static.get("dim")
    return 1 if dim is not None and shape and shape[dim] == 1 else 0


def _max_min_dim(static, shape, dtype):
    return (1 if not shape else 0 if static["keepdim"] else 2), None


def _mean(static, shape, dtype):
    # an ``out=`` sum, then an in-place division; for half inputs one write only (measured)
    return (1 if _is_half(dtype) else 2), "sum"


def _var_std(sqrt: bool):
    def fact(static, shape, dtype):
        if _is_complex(dtype):
            # the variances of the real and imaginary parts are added into the result (std: then
            # its square root is taken in place)
            return (2 if sqrt else 1), None
        # an empty input: the result is filled with NaN
        if not np.prod(shape):
            return 1, None
        if _is_half(dtype):
            return 0, None  # written without autograd (measured)
        # float32 and float64: a one-element result is filled from an ``out=`` sum over all
        # elements; any other result is written without autograd
        dims = static["dim"] or range(len(shape))
        kept = np.prod([s for d, s in enumerate(shape) if d not in dims])
        return (1, "sum") if kept == 1 else (0, None)

    return fact


def _var_std_mean(sqrt: bool):
    def fact(static, shape, dtype):
        if _is_complex(dtype):
            return ((2 if sqrt else 1), 1), None  # (the real var or std, the complex mean)
        return (0 if np.prod(shape) else 1), None

    return fact


def _matrix_exp_writes(shape) -> int:
    """An empty input: one fill; 1x1 matrices: none (an ``exp``); one matrix: two writes into
    the batch of one the kernel computes; a batch: none (measured)."""
    if 0 in shape:
        return 1
    if shape[-1] == 1:
        return 0
    return 2 if len(shape) == 2 else 0


def _fft(kind: str):
    """The FFT kernels' ``_exec_fft`` writes its result twice in place: ``out.resize_`` to the
    batched shape (a batch dim, then the transformed sizes), which counts only when that shape
    is not the result's, and ``out.as_strided_`` back (measured)."""

    def fact(static, shape, dtype):
        dims = tuple(static["dim"])
        if not dims:
            return 0, None  # a clone
        out = list(shape)
        if kind == "r2c" and static["onesided"]:
            out[dims[-1]] = shape[dims[-1]] // 2 + 1
        if kind == "c2r":  # the leading dims go through a c2c of their own first
            out[dims[-1]] = static["last_dim_size"]
            dims = dims[-1:]
        order = (*sorted(dims[:-1]), dims[-1]) if kind == "r2c" else tuple(sorted(dims))
        batch = int(np.prod([n for d, n in enumerate(out) if d not in dims]))
        batched = (batch, *(out[d] for d in order))
        return (1 if batched == tuple(out) else 2), None

    return fact


def _integral(version):
    def fact(static, shape, dtype):
        return (version if dtype is not None and dtype._kind in "biu" else 0), None

    return fact


def _unless_float(version):
    def fact(static, shape, dtype):
        return (0 if dtype is not None and dtype._kind == "f" else version), None

    return fact


def _qr(static, shape, dtype):
    """Q is written once (none in mode "r"); R twice where it is not Q's square's (measured)."""
    m, n = shape[-2], shape[-1]
    mode = static["mode"]
    twice = m < n if mode == "reduced" else m != n if mode == "complete" else m <= n
    return (0 if mode == "r" else 1, 2 if twice else 1), None


# op name -> (static arguments, input shape, input dtype or None) -> (version of the result, or
# one per result; the name of the ``out=`` kernel that refuses an input requiring grad, or None);
# measured against PyTorch 2.13 (CPU)
KERNEL_WRITES = {
    "abs": _always(1, "abs"),
    "sum": _always(1),
    "mean": _mean,
    "prod": _always(1),
    "amax": _always(1),
    # int64's amin takes a kernel of its own that writes no ``out=`` result (measured)
    "amin": lambda static, shape, dtype: (
        0 if dtype is not None and dtype._kind == "i" and dtype.itemsize == 8 else 1,
        None,
    ),
    "all": _always(1),
    "any": _always(1),
    # a dim of size 1 is filled with zeros rather than reduced
    "argmax": lambda static, shape, dtype: (_size1_dim(static, shape), None),
    "argmin": lambda static, shape, dtype: (_size1_dim(static, shape), None),
    "min_all": _always(1),
    "logsumexp": _always(1, "logsumexp"),
    "rpow": _always(1, "pow"),
    "max_dim": _max_min_dim,
    "min_dim": _max_min_dim,
    "cumsum": lambda static, shape, dtype: (0 if shape else 1, None),
    "cumprod": lambda static, shape, dtype: (0 if shape else 1, None),
    "logcumsumexp": lambda static, shape, dtype: (0 if shape else 1, None),
    "pow_scalar": lambda static, shape, dtype: (1 if static["exponent"] == 0 else 0, None),
    "flip": lambda static, shape, dtype: (
        1 if all(shape[d] <= 1 for d in static["dims"]) else 0,
        None,
    ),
    "linalg_vector_norm": lambda static, shape, dtype: (1 if np.prod(shape) == 1 else 0, None),
    "var": _var_std(sqrt=False),
    "std": _var_std(sqrt=True),
    "var_mean": _var_std_mean(sqrt=False),
    "std_mean": _var_std_mean(sqrt=True),
    # products written by their out= kernels (measured); addmm with beta == 0 skips the copy of
    # the input into the result
    "dot": _always(1),
    "vdot": _always(1),
    "mv": _always(1),
    "addmm": lambda static, shape, dtype: (0 if static.get("beta", 1) == 0 else 1, None),
    "baddbmm": _always(1),
    "addbmm": _always(3),
    "diag_embed": _always(2),
    "diagonal_copy": _always(1),  # diag of a matrix too (fuzz seed 184)
    "detach_copy": _always(1),
    "max_all": _always(1),
    "nansum": _always(1),
    # the copy through an alias of the result, skipped when a repeat is 0 (measured)
    "repeat": lambda static, shape, dtype: (0 if 0 in static["repeats"] else 1, None),
    "nn.hardtanh": _always(1, "hardtanh"),  # ATen's ``hardtanh_out`` into a new result
    "adaptive_avg_pool": _always(1),
    "adaptive_avg_pool3d": _always(1),
    # the unbatched input is unsqueezed and the result squeezed in place: one more write
    "im2col": lambda static, shape, dtype: (2 if len(shape) == 3 else 1, None),
    "col2im": lambda static, shape, dtype: (2 if len(shape) == 2 else 1, None),
    "linalg_inv_ex": _always(3),  # linalg_solve_ex's writes into the identity it solves against
    "linalg_det": _always(1),
    "sort": _always((1, 1)),
    # a 0-d input is copied into the values and the indices are zeroed
    "topk": lambda static, shape, dtype: ((0, 0) if shape else (1, 1), None),
    "cummax": _always((1, 1), "cummax"),
    "cummin": _always((1, 1), "cummin"),
    "mode": lambda static, shape, dtype: ((0, 0) if shape and static["keepdim"] else (2, 2), None),
    "median_dim": _always((1, 1)),
    "nanmedian_dim": _always((1, 1)),
    "kthvalue": _always((1, 1)),
    "aminmax": lambda static, shape, dtype: (
        (1, 1) if not static["dim"] else (0, 0) if static["keepdim"] else (2, 2),
        None,
    ),
    # the later op modules' kernels (measured)
    "deg2rad": _always(1),
    "rad2deg": _always(1),
    "renorm": _always(1),
    "rot90": lambda static, shape, dtype: (0 if static["k"] % 4 == 2 else 1, None),
    "polar": _always(1),
    "complex": _always(1),
    "frexp": _always((1, 1)),
    "histc": _always(2),
    "linalg_matrix_exp": lambda static, shape, dtype: (_matrix_exp_writes(shape), None),
    "isin": _always(1),
    "select_scatter": _always(2),
    "slice_scatter": _always(2),
    "diagonal_scatter": _always(2),
    "pdist": lambda static, shape, dtype: (1 if shape[0] > 1 else 0, None),
    # rounding an integer tensor is a clone (``copy_`` into ``empty_like``)
    **{name: _integral(1) for name in ("floor", "ceil", "round", "trunc")},
    # written through ``out=`` kernels or fills of their own (measured)
    **{name: _always(1) for name in ("logical_and", "logical_or", "logical_xor", "logical_not")},
    **{name: _always(1) for name in ("isclose", "fill_out", "fill_tensor_out", "nan_to_num")},
    "mvlgamma": _always(1),
    # the sampling kernels write their draws into a fresh result (normal: then adds, multiplies)
    **{
        name: _always(1)
        for name in (
            "binomial_sample",
            "poisson_sample",
            "bernoulli_sample",
            "bernoulli_p_sample",
            "standard_gamma_sample",
            "sample_dirichlet_sample",
        )
    },
    "isfinite": _unless_float(1),  # ``ones_like``/``zeros_like`` then a fill, or a copy
    "isinf": _unless_float(1),
    "isposinf": _unless_float(1),
    "isneginf": _unless_float(1),
    "signbit": lambda static, shape, dtype: (
        1 if dtype is not None and dtype._kind == "b" else 0,
        None,
    ),
    "angle": lambda static, shape, dtype: (1 if _is_complex(dtype) else 0, None),
    "conj_physical": lambda static, shape, dtype: (1 if _is_complex(dtype) else 0, None),
    "count_nonzero": lambda static, shape, dtype: (
        1 if dtype is not None and dtype._kind == "b" and static.get("dim") is not None else 0,
        None,
    ),
    "nn.norm_dim": _always(1),  # ATen's ``norm``: an ``out=`` linalg_vector_norm
    "nn.norm_all": _always(1),
    "normal_tensor_float": _always(1),
    "normal_float_tensor": _always(2),
    "normal_tensor_tensor": _always(2),
    "geqrf": _always((1, 1)),
    "linalg_qr": _qr,
    "linalg_lu_factor_ex": lambda static, shape, dtype: (
        (0, 0, 1) if 0 in shape else (1, 0, 0),
        None,
    ),
    "histogram": _always((2, 1)),
    "fft_c2c": _fft("c2c"),
    "fft_r2c": _fft("r2c"),
    "fft_c2r": _fft("c2r"),
}


# Note [Wrapped numbers]: PyTorch's parser wraps the number operand of some ops into a (normal)
# tensor, and the Scalar overloads of others run their Tensor overload on a wrapped number once
# their autograd kernel is skipped (all tensor operands are inference tensors): remainder, fmod,
# floor_divide, div with a rounding mode, rsub (as ``sub(wrapped number, x)``). Either way the
# normal wrapped number makes the op recorded. Ops whose Python scalar operands PyTorch wraps:
WRAPS_SCALARS = frozenset(
    {
        "add",
        "sub",
        "mul",
        "div",
        "rsub",
        "where",
        "div_mode",
        "remainder",
        "fmod",
        "floor_divide_self",
        "rfloor_divide_self",
    }
)
# Ops PyTorch runs as compositions that make a normal tensor of their own before the recorded op
# (``mv`` is ``addmv`` into fresh zeros; ``sort`` fills normal values and indices): their autograd
# kernel runs on inference tensors too, so the op is recorded, or raises where it would save an
# inference tensor (measured). Their results' versions are still those of ``KERNEL_WRITES``.
COMPOSITE = frozenset({"mv", "sort"})


def kernel_writes(name: str, static: dict, shape: tuple, requires_grad: bool, dtype=None):
    """The version of the result of op ``name`` on inference tensors outside inference mode, or
    a tuple with one per result (Note [Inference tensors]); raises PyTorch's error for an ``out=``
    kernel where an input ``requires_grad`` (in grad mode). ``shape`` and ``dtype``: the first
    tensor operand's (PyTorch's half and complex inputs take kernels of their own)."""
    fact = KERNEL_WRITES.get(name)
    if fact is None:
        return 0
    version, out = fact(static, shape, dtype)
    if out is not None and requires_grad:
        raise RuntimeError(E.OUT_REQUIRES_GRAD.format(out))
    return version
