"""``leafgrad.func``: torch.func's transforms (grad, vjp, jvp, jacrev, jacfwd, hessian, vmap),
run by JAX's own transforms.

Note [Transforms through JAX]: a transform unwraps its input Tensors to arrays and hands JAX a
function of arrays. Inside it, JAX's tracers are wrapped as leafgrad Tensors (leaves that do not
require grad), the user's function runs on them, and its output Tensors are unwrapped again. The
leafgrad ops it calls go through ``dispatch`` as usual, whose cached jitted forwards accept
tracers, so JAX sees the whole computation. Results are wrapped back as plain Tensors. Because
every transform is an array function to JAX, they nest (``vmap(grad(f))``, ``jacfwd(jacrev(f))``)
and run under ``jax.jit``.

Pytrees follow ``torch.utils._pytree`` (tuples, lists, dicts in insertion order, namedtuples;
everything else, ``None`` included, is a leaf), not JAX's, so structures and errors are torch's.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import itertools
import threading
import warnings
from collections import OrderedDict
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from . import _dtype as D
from . import _errors as E
from . import _random
from . import _tensor as _tensor_module
from ._known import known_values
from ._tensor import Tensor
from .autograd import grad_mode
from .autograd.graph import Node, _next_sequence_nr

__all__ = [
    "grad",
    "grad_and_value",
    "vjp",
    "jvp",
    "linearize",
    "jacrev",
    "jacfwd",
    "hessian",
    "vmap",
    "functional_call",
    "stack_module_state",
    "replace_all_batch_norm_modules_",
]

JVP_STR = "jvp(f, primals, tangents)"
GRAD_NOT_TENSOR = "grad_and_value(f)(*args): Expected f(*args) to return a Tensor, got {}"
GRAD_NOT_SCALAR = (
    "grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, got tensor with "
    "{} dims. Maybe you wanted to use the vjp or jacrev APIs instead?"
)
GRAD_AUX = (
    "grad_and_value(f)(*args): output of function f should be a tuple: (output, aux) "
    "if has_aux is True"
)
VJP_AUX = (
    "vjp(f, *primals): output of function f should be a tuple: (output, aux) if has_aux is True"
)
NOT_FLOAT_REQUIRES_GRAD = "only Tensors of floating point dtype can require gradients"
RANDOMNESS = "Only allowed values for randomness are 'error', 'different', or 'same'. Got {}"


# --- which transforms run the user's function (for custom autograd.Functions) -------------------
class _Vmap(NamedTuple):
    """A running vmap: its randomness flag, batch size, JAX axis name and JAX trace (Note
    [Randomness in vmap])."""

    randomness: str
    size: int
    axis: str
    trace: object


class _Active(threading.local):
    def __init__(self) -> None:
        self.stack: list = []
        self.levels: list = []  # the running grad and jvp levels (``_new_level``)
        self.vmaps: list[_Vmap] = []  # the running vmaps, innermost last
        self.writing: str | None = None  # the in-place op running (``writing_as``)
        self.exempt = 0  # transforms that are no functorch transform in PyTorch (not_functorch)
        self.readers: list = []  # the dicts of the running ``_outer_reads``
        # beside ``stack``: each transform's JAX trace (``_trace_of``) and level serial
        self.traces: list = []
        self.replaying = 0  # transform results' backward replaying their call (no write-back)
        self.per_sample = 0  # random ops drawing each sample's values (``sampled``)
        self.samples = 1  # the calls PyTorch's vmap fallback makes of the op now running
        self.fallback = False  # a function of ``FALLBACK_OPS`` is running


_ACTIVE = _Active()
_HOOKS_LOCK = threading.Lock()  # counts the running transforms, installs and clears the hooks


def active_transforms() -> list:
    """The kinds ("grad", "jvp", "vmap") of the torch.func transforms now running the user's
    code on this thread, outermost first (a custom Function checks what it supports)."""
    return _ACTIVE.stack


@contextlib.contextmanager
def _running(
    kind: str,
    level: int | None = None,
    randomness: str | None = None,
    size=None,
    arrays=(),
    axis=None,
):
    """Run the user's function as a ``kind`` transform; ``level``: the grad or jvp level made
    for it by ``_new_level`` (Note [Captured tensors]); ``randomness``, ``size`` and ``axis``:
    a vmap's flag (Note [Randomness in vmap]), batch size and axis name; ``arrays``: the
    transform's tracers."""
    from .autograd import forward_ad
    from .ops import dispatch

    state = forward_ad.FUNC_JVP
    formulas = state.count, state.stop  # Note [Forward formulas]: the innermost one decides
    if kind in ("jvp", "grad"):
        state.count, state.stop = int(kind == "jvp"), kind == "grad"
    _ACTIVE.stack.append(kind)
    _ACTIVE.traces.append((_trace_of(arrays), level))
    if level is not None:
        _ACTIVE.levels.append(level)
    if randomness is not None:
        _ACTIVE.vmaps.append(_Vmap(randomness, size, axis, _trace_of(arrays)))
    with _HOOKS_LOCK:  # the counters and hooks are shared by threads
        if level is not None:
            WRITE_GUARD[0] += 1
            dispatch.HIDE[0] = hide_captured  # Note [Requires grad at a level]
        if randomness is not None:
            VMAPS[0] += 1
            _random.DRAW_CHECK[0] = _check_draw
            dispatch.HIDE[0] = hide_captured
            _tensor_module.DATA_CHECK[0] = check_data
    try:
        yield
    finally:
        state.count, state.stop = formulas
        _ACTIVE.stack.pop()
        _ACTIVE.traces.pop()
        if level is not None:
            _ACTIVE.levels.pop()
        if randomness is not None:
            _ACTIVE.vmaps.pop()
        with _HOOKS_LOCK:
            if level is not None:
                WRITE_GUARD[0] -= 1
            if randomness is not None:
                VMAPS[0] -= 1
                if not VMAPS[0]:
                    _random.DRAW_CHECK[0] = None
                    _tensor_module.DATA_CHECK[0] = None
            if level is not None or randomness is not None:
                if not (WRITE_GUARD[0] or VMAPS[0]):
                    dispatch.HIDE[0] = None


# Note [Randomness in vmap]: PyTorch's vmap refuses a random op under randomness="error" (the
# default), draws once for the whole batch under "same" and once per sample under "different".
# leafgrad's random ops draw on the host from PyTorch's generator stream, and every draw first
# asks the running vmaps (``_random.DRAW_CHECK``): "error" at any of them raises PyTorch's
# error. Under "different" PyTorch draws the batch's values at once, as the op run on the
# batched (physical) tensors: a factory (``randn(3)``) draws ``randn(B, 3)``; an op of tensors
# (``bernoulli(p)``, ``normal(mean, std)``, ``poisson``, ``multinomial``, dropout's mask) draws
# with each batch dim moved to the front, a tensor the vmap does not batch expanded to it;
# ``*_like`` and the in-place fills (``normal_``) draw in the tensor's physical layout, and an
# in-place fill of a tensor the vmap does not batch raises PyTorch's error. Nested vmaps each
# add their dim, the outermost first. ``sampled`` does this for an op: it draws those values on
# the host and picks each sample's out of them by the vmaps' ``axis_index`` (each vmap is given
# an axis name), so the op gets a batched value that holds PyTorch's values bit for bit. Under
# "same" an op of a batched tensor raises PyTorch's error. A random op that has no per-sample
# form here raises NotImplementedError under "different" (the raw draw checks that ``sampled``
# is drawing) rather than give every sample the same values.
VMAPS = [0]  # how many vmaps run on any thread
RANDOM_IN_VMAP = (
    "vmap: called random operation while in randomness error mode. Please either use the "
    "'same' or 'different' randomness flags on vmap or perform the randomness operation out of "
    "vmap"
)
SAME_BATCHED = (
    "Vmap does not currently support same randomness with a batched tensor input. Please file "
    "an issue with functorch"
)
INPLACE_UNBATCHED = (
    "vmap: Cannot ask for different inplace randomness on an unbatched tensor. This will appear "
    "like same randomness. If this is necessary for your usage, please file an issue with "
    "functorch."
)
INPLACE_BATCHED_OTHER = (
    "vmap: inplace bernoulli(self, *extra_args) is not possible because there exists a Tensor "
    "`other` in extra_args that has more elements than `self`. This happened due to `other` "
    "being vmapped over but `self` not being vmapped over in a vmap. Please try to use "
    "out-of-place operators instead of inplace bernoulli. If said operator is being called "
    "inside the PyTorch framework, please file a bug report instead."
)
DIFFERENT_IN_VMAP = (
    "leafgrad: this random op has no per-sample draw under vmap(randomness='different'); use "
    "randomness='same', or draw the batch's random values outside vmap"
)


def _axis_name() -> str:
    """The axis name of a vmap about to run: unique among the vmaps running on this thread."""
    return f"leafgrad_vmap{len(_ACTIVE.vmaps)}"


RANDOM_OUT_IN_VMAP = (
    "vmap: We do not support calling out variants of random operations inside of vmap. Please "
    "use non-out variants as a workaround"
)
NO_BATCH_RULE = "vmap: we do not yet support aten::{}. Please file an issue"


def refuse_random_out() -> None:
    """A random factory's ``out=`` form inside vmap: PyTorch's error, before any draw."""
    if _ACTIVE.vmaps:
        raise RuntimeError(RANDOM_OUT_IN_VMAP)


def refuse_in_vmap(op: str) -> None:
    """An op PyTorch's vmap has no rule for (``rrelu``): its error inside vmap."""
    if _ACTIVE.vmaps:
        raise RuntimeError(NO_BATCH_RULE.format(op))


def _check_draw(raw: bool = False) -> None:
    """Before a random op reads its generator (and, ``raw``, before each raw draw)."""
    flags = [v.randomness for v in _ACTIVE.vmaps]
    if "error" in flags:
        raise RuntimeError(RANDOM_IN_VMAP)
    if raw and "different" in flags and not _ACTIVE.per_sample:
        raise NotImplementedError(DIFFERENT_IN_VMAP)


def _batch_axes(data) -> tuple:
    """``(values, shape, where)`` of a tensor's array inside vmaps: its physical values (None
    where no host values are known) and shape, and ``where[i]``: the dim of them the running
    vmap ``i`` batches (a batch of no running vmap's is under key None)."""
    traces = [v.trace for v in _ACTIVE.vmaps]
    found = []
    while isinstance(data, jax.core.Tracer):
        if hasattr(data, "batch_dim") and hasattr(data, "val"):
            if isinstance(data.batch_dim, int):
                trace = getattr(data, "_trace", None)
                level = next((i for i, t in enumerate(traces) if t is trace), None)
                found.append((level, data.batch_dim))
            data = data.val
        elif hasattr(data, "primal"):
            data = data.primal
        else:
            break
    shape = tuple(data.shape)
    values = known_values(data)[0]
    dims = list(range(len(shape)))
    where = {}
    for level, d in reversed(found):  # the outermost batch is a dim of the values themselves
        where[level] = dims.pop(d)
    return values, shape, where


def _front(values, where: dict, diff: list, sizes: list, ndim: int) -> np.ndarray:
    """``values`` (batched at ``where``) with the dims of the vmaps ``diff`` first (expanded
    where they do not batch it), then the sample's dims aligned to ``ndim`` of them."""
    batched = [where[i] for i in diff if i in where]
    arr = np.moveaxis(values, batched, range(len(batched)))
    for j, i in enumerate(diff):
        if i not in where:
            arr = np.expand_dims(arr, j)
    k = len(diff)
    rest = arr.shape[k:]
    arr = arr.reshape(arr.shape[:k] + (1,) * (ndim - len(rest)) + rest)
    return np.broadcast_to(arr, tuple(sizes) + arr.shape[k:])


def _refuse_same(flags, peeled) -> None:
    for _, _, where in peeled:
        if any(i is not None and flags[i] == "same" for i in where):
            raise RuntimeError(SAME_BATCHED)


def refuse_same_batched(tensors) -> None:
    """PyTorch's refusal of a random op of tensors a vmap with randomness="same" batches
    (before a kernel's checks of their values)."""
    flags = [v.randomness for v in _ACTIVE.vmaps]
    if "same" in flags:
        _refuse_same(flags, [_batch_axes(t._data) for t in tensors])


def sampled(draw, shape, tensors=(), host=None, like=None, inplace=False, order=None):
    """A random op's values inside vmap (Note [Randomness in vmap]), or None where the op draws
    as outside (no vmap here, or "same" alone). ``draw(shape, *arrays)``: the op's numpy draw
    of ``shape`` given the host values of ``tensors`` (broadcastable to it); ``shape``: one
    sample's; ``host(t)``: the op's own reader of a tensor no vmap batches (its errors);
    ``like``: the tensor whose physical layout a ``*_like`` or in-place (``inplace``) draw
    follows (with ``tensors``, the in-place ``bernoulli_(p)``, the batch dims come first), and
    ``order`` the memory order of ``like``'s dims (``iteration_order``), which it fills in
    memory order, its batch dims where the vmaps put them."""
    flags = [v.randomness for v in _ACTIVE.vmaps]
    if not flags:
        return None
    if "error" in flags:
        raise RuntimeError(RANDOM_IN_VMAP)
    diff = [i for i, f in enumerate(flags) if f == "different"]
    peeled = [_batch_axes(t._data) for t in tensors]
    _refuse_same(flags, peeled)
    if like is not None:
        _, lshape, lwhere = _batch_axes(like._data)
        if inplace and any(i in w and i not in lwhere for _, _, w in peeled for i in diff):
            raise RuntimeError(INPLACE_BATCHED_OTHER)
        if inplace and any(i not in lwhere for i in diff):
            raise RuntimeError(INPLACE_UNBATCHED)
        peeled.append((None, lshape, lwhere))
    if not diff:
        return None
    if any(None in where for _, _, where in peeled):
        raise NotImplementedError(DIFFERENT_IN_VMAP)  # batched by a vmap leafgrad did not run
    sizes = [_ACTIVE.vmaps[i].size for i in diff]
    _ACTIVE.per_sample += 1
    try:
        if like is None or tensors:
            arrays = [
                _front(host(t) if v is None else v, where, diff, sizes, len(shape))
                for t, (v, _, where) in zip(tensors, peeled)
            ]
            values = draw(tuple(sizes) + tuple(shape), *arrays)
            at = list(range(len(diff)))
        else:
            # like's physical dims, less those of "same" vmaps; the vmaps that do not batch
            # it in front
            front = [i for i in diff if i not in lwhere]
            dropped = {d for i, d in lwhere.items() if i not in diff}
            kept = [d for d in range(len(lshape)) if d not in dropped]
            drawn = kept
            if order is not None:  # the sample's dims in memory order, the batch dims kept
                dims = [d for d in range(len(lshape)) if d not in lwhere.values()]
                slots = iter([dims[j] for j in order])
                drawn = [next(slots) if d in dims else d for d in kept]
            draw_shape = tuple(_ACTIVE.vmaps[i].size for i in front)
            draw_shape += tuple(lshape[d] for d in drawn)
            values = draw(draw_shape)
            n = len(front)
            values = np.transpose(values, [*range(n), *(n + drawn.index(d) for d in kept)])
            at = [
                front.index(i) if i in front else len(front) + kept.index(lwhere[i]) for i in diff
            ]
    finally:
        _ACTIVE.per_sample -= 1
    out = jnp.asarray(values)
    for i, d in sorted(zip(diff, at), key=lambda p: -p[1]):  # the last dims first
        index = jax.lax.axis_index(_ACTIVE.vmaps[i].axis)
        out = jax.lax.dynamic_index_in_dim(out, index, d, keepdims=False)
    return out


def _batch_rule() -> bool:
    """Whether an op now runs under one of PyTorch's batch rules, whose errors name physical
    tensors: inside vmap, but not in an op its fallback runs sample by sample (Note [vmap's
    fallback])."""
    return bool(_ACTIVE.vmaps) and _ACTIVE.writing not in FALLBACK_WRITES


def batch_sizes(*tensors) -> tuple:
    """The sizes of the running vmaps that batch any of ``tensors``, the outermost first: the
    dims PyTorch's batch rules put in front of the physical tensors (an operand those vmaps do
    not batch is expanded to them), whose shapes and dims its errors name; () outside them."""
    if not _batch_rule():
        return ()
    levels = set()
    for t in tensors:
        levels.update(_batch_axes(t._data)[2])
    return tuple(v.size for i, v in enumerate(_ACTIVE.vmaps) if i in levels)


def batch_layout(*tensors) -> tuple | None:
    """Inside vmap: ``(B, batched)``, the product of the sizes of the running vmaps that batch
    any of ``tensors`` and whether each is batched; None outside vmap, where none is batched,
    or where the batched ones are batched by different vmaps (their errors stay logical)."""
    if not _batch_rule():
        return None
    levels = [frozenset(i for i in _batch_axes(t._data)[2] if i is not None) for t in tensors]
    found = {lv for lv in levels if lv}
    if len(found) != 1:
        return None
    (union,) = found
    size = int(np.prod([v.size for i, v in enumerate(_ACTIVE.vmaps) if i in union]))
    return size, [bool(lv) for lv in levels]


def product_error(kind: str, a: Tensor, b: Tensor) -> RuntimeError | None:
    """Inside vmap, the error of the product ``kind`` ("mm", "mv", "dot", "bmm") of operands
    whose sizes do not fit, as PyTorch's batch rules meet it on the physical tensors: a batched
    left operand alone folds the batch into its rows (mm, mv; dot runs as mv), a batched right
    one alone runs as an ``mm`` with the batch as columns (mv, dot) or a ``bmm`` (mm), both run
    as a ``bmm``; ``bmm`` folds the batch into its batch dim. None: the logical error stands."""
    layout = batch_layout(a, b)
    if layout is None:
        return None
    n, (left, right) = layout
    sa, sb = a.shape, b.shape
    if kind == "bmm":
        return RuntimeError(E.BMM_SHAPES.format(n * sa[0], sa[2], n * sb[0], sb[1]))
    inner = sa[-1]  # the contracted size of ``a``
    if left and right:
        return RuntimeError(E.BMM_SHAPES.format(n, inner, n, sb[0]))
    if kind == "mm":
        if left:
            return RuntimeError(E.MM_SHAPES.format(n * sa[0], inner, *sb))
        return RuntimeError(E.BMM_SHAPES.format(n, inner, n, sb[0]))
    if left:
        rows = n * (sa[0] if kind == "mv" else 1)
        return RuntimeError(E.MV_SHAPES.format(rows, rows, inner, sb[0]))
    return RuntimeError(E.MM_SHAPES.format(sa[0] if kind == "mv" else 1, inner, sb[0], n))


def physical_rows(mat1: Tensor, mat2: Tensor, rows: int) -> int:
    """The rows of ``mat1`` in an ``mm`` error inside vmap: PyTorch's batch rule folds the
    batch dims of a batched ``mat1`` into its rows when ``mat2`` is not batched."""
    if not _batch_rule() or batch_sizes(mat2):
        return rows
    return rows * int(np.prod(batch_sizes(mat1)))


def physical_shapes(tensors) -> list | None:
    """The shapes a broadcasting op's operands have in PyTorch's vmap, whose errors name them
    (None outside vmap): at each vmap, innermost first, that batches one of them, each batched
    operand is padded to the operands' largest rank and given the batch dim in front (its
    binary batch rules' ``maybePadToLogicalRank``); the others are as they are."""
    if not _batch_rule():
        return None
    shapes = [tuple(t._data.shape) for t in tensors]
    wheres = [_batch_axes(t._data)[2] for t in tensors]
    for level in reversed(range(len(_ACTIVE.vmaps))):
        batched = [level in w for w in wheres]
        if any(batched):
            rank = max(len(s) for s in shapes)
            size = _ACTIVE.vmaps[level].size
            shapes = [
                (size,) + (1,) * (rank - len(s)) + s if b else s for s, b in zip(shapes, batched)
            ]
    return shapes


# --- writes into captured tensors --------------------------------------------------------------

# Note [Captured tensors]: inside grad, vjp, jvp (and the transforms made of them) PyTorch refuses
# an in-place op on a tensor the function did not make at that level: one it captured from
# outside (a closure, a module's buffer), or a view, ``detach()`` or ``.data`` of one
# (functorch's ``checkForInvalidMutationOnCaptures``). leafgrad would write the JAX tracer into
# the outer tensor, or change it silently, so it raises the same error.
# A tensor's birth is its version counter's: ``Tensor._make`` makes counters of the class
# ``_tensor._Version`` names, and each new level points that name at a subclass whose ``birth``
# is the level's serial (the base class's is 0), so tensors made before a level are born before
# it and nothing is paid outside transforms. Views and ``detach()`` share their base's counter;
# ``.data`` shares its storage, which is searched. ``vmap`` makes no level (PyTorch writes).
# The check sits on every in-place method (``guard_captured_writes``, under the parser's errors),
# on ``x[i] = v``, on the function forms (``torch.relu_``) and on the activations given
# ``inplace=True`` (``nn.functional.writes_input``).

WRITE_GUARD = [0]  # how many grad/jvp levels run on any thread: 0 skips the check
# serials only grow, across a reload of this module too: each new level's is above every birth
_SERIALS = itertools.count(_tensor_module._Version.birth + 1)
CAPTURED_WRITE = (
    "During a grad (vjp, jvp, grad, etc) transform, the function provided attempted to call "
    "in-place operation (aten::{}) that would mutate a captured Tensor. This is not supported; "
    "please rewrite the function being transformed to explicitly accept the mutated Tensor(s) "
    "as inputs."
)
REQUIRES_GRAD_INSIDE = (
    "You are attempting to call Tensor.requires_grad_() (or perhaps using "
    "torch.autograd.functional.* APIs) inside of a function being transformed by a functorch "
    "transform. This is unsupported, please attempt to use the functorch transforms (e.g. grad, "
    "vjp, jacrev, jacfwd, hessian) or call requires_grad_() outside of a function being "
    "transformed instead."
)
BACKWARD_INSIDE = (
    "backward() called inside a functorch transform. This is not supported, please use "
    "functorch.grad or functorch.vjp instead or call backward() outside of functorch transforms."
)


def _new_level() -> int:
    """A new grad or jvp level, its serial: tensors made from now on are born in it. The
    call's arguments are given to the function as aliases born in it (Note [Arguments of a
    level])."""
    serial = next(_SERIALS)
    born = {"__slots__": (), "birth": serial}
    _tensor_module._Version = type("_Version", (_tensor_module.BaseVersion,), born)
    return serial


def _captured(t: Tensor, serial: int) -> bool:
    """Whether ``t`` (or a tensor on its storage) was born before the level ``serial``."""

    def before(m) -> bool:
        return m._version_counter.birth < serial

    if before(t):
        return True
    cell = t.__dict__.get("_storage")
    return cell is not None and any(before(m) for m in cell.live())


# Note [Requires grad at a level]: inside grad and vjp (and jacrev, hessian) PyTorch's tensors
# track gradients for the innermost grad or jvp level only: the differentiated inputs are leaves
# that require grad, what is computed from them records nodes (``MulBackward0``), and a captured
# tensor that requires grad (a module's parameter) records nothing there (``(w * c).grad_fn`` is
# None) though ``w.requires_grad`` stays True; at a jvp level nothing records. leafgrad marks the
# inputs so and, while a level runs, dispatch hands each op an alias that does not require grad
# (``detach()``) in place of a captured tensor that does (``hide_captured``). The gradients
# themselves come from JAX; the recorded graph gives PyTorch's ``requires_grad``, ``grad_fn``,
# leaf checks and ``autograd.grad`` inside the function.


_BATCHED: set = set()  # the classes of JAX's tracers in vmap (the inputs' data show them)


def batch_like(out: Tensor, source) -> Tensor:
    """A factory's result made from a batched tensor (``zeros_like(x)``, ``x.new_ones(2)``): a
    batched tensor in PyTorch's vmap, so in-place writes of batched values into it work."""
    out._data = rebatched(out._data, source)
    return out


def batched_anywhere(data) -> bool:
    while isinstance(data, jax.core.Tracer):
        if type(data) in _BATCHED:
            return True
        data = getattr(data, "primal", None)
    return False


def rebatched(value, source):
    """``value`` batched as ``source`` is (a factory's values, or what ``fill_`` writes into a
    batched tensor, which stays batched in PyTorch). JAX batches only what depends on a batched
    value, so ``value`` is selected by a batched flag that is always false: its values stay,
    bit for bit."""
    if not (VMAPS[0] and source.size and batched_anywhere(source)) or batched_anywhere(value):
        return value
    # of the source's shape, the flag keeps its batch dim (``zeros_like`` keeps it in PyTorch)
    same = value.shape == source.shape
    first = source if same else source.reshape(-1)[0]
    flag = jnp.logical_and(first != first, False)
    return jnp.where(flag, value, value)


def _trace_of(arrays):
    """The JAX trace of a transform's tracers (``Tracer._trace``), or None."""
    for a in arrays:
        if isinstance(a, jax.core.Tracer):
            return getattr(a, "_trace", None)
    return None


# Note [Printing inside transforms]: PyTorch prints a tensor inside a transform as the wrappers
# it is made of, one per level that holds it, the outermost first: ``GradTrackingTensor(lvl=1,
# value=`` (grad, vjp, jvp) or ``BatchedTensor(lvl=1, bdim=0, value=`` (vmap), the value
# indented beneath, down to the plain tensor. A grad or jvp level wraps every tensor an op
# makes while it runs (a factory's too); a vmap only the batched ones. leafgrad's tracers nest
# the same way: a batched one (JAX's ``val`` and ``batch_dim``) or a differentiated one (its
# ``primal``), each of the trace a running transform recorded (``_running``), whose place on
# the stack is the level; a tensor born in a grad or jvp level (Note [Captured tensors]) that
# holds no tracer of it (an integer result, a factory's) is wrapped at it all the same.


def traced_repr(t: Tensor) -> str | None:
    """PyTorch's repr of ``t`` inside transforms, or None where its tracers are not theirs."""
    from ._tensor_str import format_tensor

    birth = t._version_counter.birth
    levels = _ACTIVE.traces

    def render(data, top: int) -> str | None:
        for i in range(top, -1, -1):
            trace, serial = levels[i]
            if isinstance(data, jax.core.Tracer) and getattr(data, "_trace", None) is trace:
                if hasattr(data, "batch_dim") and hasattr(data, "val"):
                    bdim = data.batch_dim
                    if not isinstance(bdim, int):  # not mapped: the value itself
                        return render(data.val, i - 1)
                    # JAX's batching rules place an op's batch dim; PyTorch's mostly agree (a
                    # unary op keeps it), though a binary one moves it first
                    inner = data.val
                    head = f"BatchedTensor(lvl={i + 1}, bdim={bdim}, value="
                elif hasattr(data, "primal"):
                    head, inner = f"GradTrackingTensor(lvl={i + 1}, value=", data.primal
                else:
                    return None
            elif serial is not None and birth >= serial:
                head, inner = f"GradTrackingTensor(lvl={i + 1}, value=", data
            else:
                continue
            body = render(inner, i - 1)
            if body is None:
                return None
            lines = ("    " + line if line.strip() else line for line in body.split("\n"))
            return head + "\n" + "\n".join(lines) + "\n)"
        if isinstance(data, jax.core.Tracer) or top == len(levels) - 1:
            return None  # a tensor no level holds: its own repr
        return format_tensor(np.asarray(data), dtype=t._dtype, device=str(t._device))

    return render(t._data, len(levels) - 1)


def hide_captured(operands: tuple) -> tuple:
    """``operands`` with each tensor captured by the innermost level that requires grad as a
    ``detach()`` alias (Note [Requires grad at a level]). Under a vmap, an op on a batched
    tensor hides every tensor that no enclosing level made: PyTorch's batched results track
    gradients only for the levels inside the vmap's."""
    if _ACTIVE.exempt:
        return operands
    level = next((lv for lv in reversed(_ACTIVE.levels) if lv), None)
    batched = any(isinstance(o, Tensor) and _batched(o) for o in operands)
    if level is None and not batched:
        return operands
    hidden = None
    for i, o in enumerate(operands):
        if isinstance(o, Tensor) and o._requires_grad and (level is None or _captured(o, level)):
            if hidden is None:
                hidden = list(operands)
            hidden[i] = o._detach(False)
            for found, born in _ACTIVE.readers:  # it is still read from outside
                if _requiring_grad((o,), born):
                    found[id(o)] = o
    return operands if hidden is None else tuple(hidden)


def _batched(t) -> bool:
    """Whether ``t`` is batched by the innermost transform, a vmap."""
    return bool(_ACTIVE.stack) and _ACTIVE.stack[-1] == "vmap" and type(t._data) in _BATCHED


def check_data(t: Tensor, value) -> None:
    """PyTorch's errors for reading (``value`` None) or setting ``.data`` of a batched tensor."""
    if value is None:
        if _batched(t):
            raise RuntimeError("accessing `data` under vmap transform is not allowed")
    elif _batched(t) or _batched(value):
        raise RuntimeError("mutating directly with `.data` under vmap transform is not allowed.")


# Note [Values inside transforms]: PyTorch's transforms run eagerly, so inside grad, vjp, jvp
# (and the transforms built on them) ``.item()``, ``bool(t)``, ``.tolist()`` and the ops whose
# result shape depends on values (``nonzero``, a boolean mask) read the values; under vmap a
# batched tensor has one value per sample and they raise PyTorch's vmap errors. leafgrad's
# tracers of JAX's eager vjp and jvp carry their values (Note [Known values]); a
# batched one has none, and neither has one of ``jax.jit`` (``leafgrad.compile``).
VMAP_ITEM = (
    "vmap: It looks like you're calling .item() on a Tensor. We don't support vmap over calling "
    ".item() on a Tensor, please try to rewrite what you're doing with other operations. If "
    "error is occurring somewhere inside PyTorch internals, please file a bug report."
)
VMAP_BOOL = (
    "vmap: It looks like you're attempting to use a Tensor in some data-dependent control flow. "
    "We don't support that yet, please file an issue at https://github.com/pytorch/pytorch/issues ."
)
NO_STORAGE = "Cannot access data pointer of Tensor that doesn't have storage"
VMAP_DYNAMIC = (
    "vmap: We do not support batching operators that can output dynamic shape. Attempted to vmap "
    "over aten::{}. Please file an issue at https://github.com/pytorch/pytorch/issues if you need "
    "this feature."
)
VMAP_MASK = (
    "vmap: We do not support batching operators that can support dynamic shape. Attempting to "
    "batch over indexing with a boolean mask."
)
VMAP_MASKED_SELECT = (
    "vmap: Attempted to vmap over `mask` in torch.masked_select(self, mask) We cannot support "
    "this because for each batch this would return a differently shaped Tensor. Please file an "
    "issue at https://github.com/pytorch/pytorch/issues if you need this feature."
)
VMAP_READS = {
    "item": VMAP_ITEM,
    "bool": VMAP_BOOL,
    "storage": NO_STORAGE,
    "nonzero": VMAP_DYNAMIC.format("nonzero"),
    "unique": VMAP_DYNAMIC.format("_unique2"),
    "unique_dim": VMAP_DYNAMIC.format("unique_dim"),
    "unique_consecutive": VMAP_DYNAMIC.format("unique_consecutive"),
    "where": VMAP_DYNAMIC.format("where"),
    "nonzero_numpy": "Batching rule not implemented for aten::nonzero_numpy. We could not "
    "generate a fallback.",
    "mask": VMAP_MASK,
    "masked_select": VMAP_MASKED_SELECT,
}
# under a grad or jvp level inside the vmap, the read reaches the batched tensor indirectly
VMAP_BELOW = (
    "vmap: It looks like you're either (1) calling .item() on a Tensor or (2) attempting to use "
    "a Tensor in some data-dependent control flow or (3) encountering this error in PyTorch "
    "internals. For (1): we don't support vmap over calling .item() on a Tensor, please try to "
    "rewrite what you're doing with other operations. For (2): we don't support data-dependent "
    "control flow in vmap yet, please file an issue at https://github.com/pytorch/pytorch/issues "
    ". For (3): please file an issue."
)
VMAP_READS_BELOW = {
    "item": VMAP_BELOW,
    "bool": VMAP_BELOW,
    "nonzero_numpy": VMAP_DYNAMIC.format("nonzero"),
    "where": VMAP_DYNAMIC.format("nonzero"),
}
VMAP_VALUES = (
    "leafgrad: {}() reads tensor values, which a tensor batched by vmap has one of per sample; "
    "compute it outside vmap"
)


def traced_values(data, what: str):
    """The values of traced ``data`` (Note [Values inside transforms]) as a numpy array, or
    None where none are known outside vmap (``jax.jit``: the caller raises its own error).
    ``what``: the read (``item``, ``bool``, ``storage``) or op, naming PyTorch's vmap error."""
    values, levels = known_values(data)
    if values is not None and not levels:
        return values
    if VMAPS[0] and "vmap" in _ACTIVE.stack:
        message = VMAP_READS.get(what)
        if _ACTIVE.stack[-1] != "vmap":
            message = VMAP_READS_BELOW.get(what, message)
        raise RuntimeError(VMAP_VALUES.format(what) if message is None else message)
    return None


# Note [Hooks at a level]: inside grad and vjp PyTorch's backward of the level runs the hooks
# registered on the level's tensors, which may change the gradient. JAX computes it: a hook
# puts an identity with a custom VJP on the tensor's data, whose backward calls it (if its
# handle is still registered) on the cotangent and passes on what it returns; uses of the
# tensor after the hook go through it. The recorded graph keeps the hook too, for
# ``autograd.grad`` inside the level.


def hook_at_level(t: Tensor, hook, handle) -> None:
    stack = _ACTIVE.stack
    if not stack or stack[-1] != "grad" or _ACTIVE.exempt:
        return
    known = t.__dict__.get("_level_hooks")
    if known is not None and known[1] is t._data:  # run in the order they were registered
        known[0].append((hook, handle))
        return
    dtype, device = t._dtype, t._device
    complex_ = dtype.is_complex
    hooks_here = [(hook, handle)]

    @jax.custom_vjp
    def through(a):
        return a

    def forward(a):
        return a, None

    def backward(_, g):
        grad = Tensor._make(jnp.conj(g) if complex_ else g, dtype, device)  # PyTorch's
        for fn, h in hooks_here:
            registered = h._hooks() if h._hooks is not None else None
            if registered is not None and h.id in registered:
                out = fn(grad)
                if out is not None:
                    grad = out
        new = grad._data.astype(g.dtype)
        return (jnp.conj(new) if complex_ else new,)

    through.defvjp(forward, backward)
    t._data = through(t._data)
    t.__dict__["_level_hooks"] = (hooks_here, t._data)


def refuse_captured_write(t, name: str) -> None:
    """PyTorch's error for the in-place op ``name`` (``add_.Tensor``) on a tensor captured by
    the innermost grad or jvp level running on this thread (Note [Captured tensors])."""
    levels = _ACTIVE.levels
    if levels and isinstance(t, Tensor) and _captured(t, levels[-1]):
        raise RuntimeError(CAPTURED_WRITE.format(name))


# PyTorch's overload names in the error: arithmetic takes a number as a Tensor; elsewhere the
# operand at (position, keyword) picks the number or the Tensor overload (read from torch 2.13)
_TENSOR_OVERLOAD = frozenset("add sub mul div true_divide multiply subtract floor_divide".split())
_BY_OPERAND = {
    "pow": (0, "exponent", ".Scalar", ".Tensor"),
    "float_power": (0, "exponent", ".Scalar", ".Tensor"),
    "fill": (0, "value", ".Scalar", ".Tensor"),
    "masked_fill": (1, "value", ".Scalar", ".Tensor"),
    "lerp": (1, "weight", ".Scalar", ".Tensor"),
    "xlogy": (0, "other", ".Scalar_Other", ".Tensor"),
    "bernoulli": (0, "p", ".float", ".Tensor"),
    "clamp_min": (0, "min", "", ".Tensor"),
    "clamp_max": (0, "max", "", ".Tensor"),
    "index_fill": (2, "value", ".int_Scalar", ".int_Tensor"),
}
for _name in (
    "fmod remainder copysign eq ne lt le gt ge greater greater_equal less less_equal not_equal"
).split():
    _BY_OPERAND[_name] = (0, "other", ".Scalar", ".Tensor")
del _name


# Note [vmap's fallback]: PyTorch's vmap runs an op without a batch rule sample by sample (its
# BatchedFallback), with a warning; its errors then name the logical tensors. The in-place ops
# it runs so (found by calling each in-place method under torch 2.13's vmap), by the overload
# names the warning gives:
FALLBACK_WRITES = frozenset(
    """scatter_.value scatter_.src scatter_.value_reduce scatter_.reduce index_copy_
    masked_scatter_ put_ index_reduce_ addcdiv_ addcmul_ addmm_ clamp_ clamp_.Tensor clip_
    clip_.Tensor conj_physical_ fill_diagonal_ fix_ floor_divide_.Tensor heaviside_ hypot_
    igamma_ igammac_ ldexp_ lerp_.Scalar lerp_.Tensor negative_ nextafter_ polygamma_
    pow_.Tensor remainder_.Scalar remainder_.Tensor fmod_.Scalar fmod_.Tensor resize_as_ set_
    set_.source_Tensor square_ subtract_.Tensor tril_ triu_ xlogy_.Scalar_Other xlogy_.Tensor
    eq_.Scalar eq_.Tensor ne_.Scalar ne_.Tensor lt_.Scalar lt_.Tensor le_.Scalar le_.Tensor
    gt_.Scalar gt_.Tensor ge_.Scalar ge_.Tensor greater_.Scalar greater_.Tensor
    greater_equal_.Scalar greater_equal_.Tensor less_.Scalar less_.Tensor less_equal_.Scalar
    less_equal_.Tensor not_equal_.Scalar not_equal_.Tensor""".split()
)
FALLBACK_WARNING = (
    "There is a performance drop because we have not yet implemented the batching rule for "
    "aten::{}. Please file us an issue on GitHub so that we can prioritize its implementation. "
    "(Triggered internally at /__w/pytorch/pytorch/aten/src/ATen/functorch/BatchedFallback.cpp:"
    "82.)"
)


def _arg(args: tuple, kwargs: dict, pos: int, key: str):
    return args[pos] if len(args) > pos else kwargs.get(key)


def _by_type(pos: int, key: str, number: str, tensor: str):
    """An overload chosen by whether an argument is a tensor."""
    return lambda a, k: tensor if isinstance(_arg(a, k, pos, key), Tensor) else number


def _isin_overload(a: tuple, k: dict) -> str:
    left = "Tensor" if isinstance(_arg(a, k, 0, "elements"), Tensor) else "Scalar"
    right = "Tensor" if isinstance(_arg(a, k, 1, "test_elements"), Tensor) else "Scalar"
    return f".{left}_{right}"


def _squeeze_overload(a: tuple, k: dict) -> str:
    dim = _arg(a, k, 1, "dim")
    return "" if dim is None else ".dims" if isinstance(dim, (tuple, list)) else ".dim"


# The functions and methods PyTorch's vmap runs with its fallback (found by calling each under
# torch 2.13's vmap), with the overload its warning names (from the arguments, input first).
FALLBACK_OPS = {
    **dict.fromkeys(
        """detach_copy diagflat histc isclose kl_div margin_ranking_loss norm_except_dim pdist
        t_copy unsqueeze_copy triplet_margin_loss""".split(),
        lambda a, k: "",
    ),
    "transpose_copy": lambda a, k: ".int",
    "select_copy": lambda a, k: ".int",
    "slice_copy": lambda a, k: ".Tensor",
    "fill": _by_type(1, "value", ".Scalar", ".Tensor"),
    "quantile": _by_type(1, "q", ".scalar", ""),
    "nanquantile": _by_type(1, "q", ".scalar", ""),
    "histogram": _by_type(1, "bins", ".bin_ct", ".bins_tensor"),
    "isin": _isin_overload,
    "squeeze_copy": _squeeze_overload,
}


def _fallback_warned(fn, name: str):
    overload = FALLBACK_OPS[name]

    @functools.wraps(fn)
    def warned(*args, **kwargs):
        if not VMAPS[0] or _ACTIVE.writing is not None or _ACTIVE.fallback:
            return fn(*args, **kwargs)
        tensors = [t for t in (*args, *kwargs.values()) if isinstance(t, Tensor)]
        if tensors and batch_sizes(*tensors):
            warnings.warn(FALLBACK_WARNING.format(name + overload(args, kwargs)), stacklevel=2)
        _ACTIVE.fallback = True  # the ops it runs are the fallback's kernel: no more warnings
        try:
            return fn(*args, **kwargs)
        finally:
            _ACTIVE.fallback = False

    return warned


def warn_fallback_ops(*namespaces) -> None:
    """Put PyTorch's fallback warning (Note [vmap's fallback]) on the ``FALLBACK_OPS`` that
    ``namespaces`` (modules, the Tensor class) hold; one object several name stays one."""
    done: dict = {}
    for ns in namespaces:
        for name in FALLBACK_OPS:
            value = vars(ns).get(name)
            if value is None or not callable(value):
                continue
            if id(value) not in done:
                done[id(value)] = _fallback_warned(value, name)
            setattr(ns, name, done[id(value)])


def _overload(name: str, args: tuple, kwargs: dict) -> str:
    """``name_`` with the overload PyTorch's parser picks for these arguments."""
    if name in _TENSOR_OVERLOAD:
        mode = name == "div" and (len(args) > 1 or "rounding_mode" in kwargs)
        return f"{name}_.Tensor_mode" if mode else f"{name}_.Tensor"
    rule = _BY_OPERAND.get(name)
    if rule is not None:
        pos, key, number, tensor = rule
        operand = args[pos] if len(args) > pos else kwargs.get(key)
        return name + "_" + (tensor if isinstance(operand, Tensor) else number)
    if name in ("clamp", "clip"):
        bounds = [a for a in (*args[:2], kwargs.get("min"), kwargs.get("max")) if a is not None]
        tensors = bool(bounds) and all(isinstance(b, Tensor) for b in bounds)
        return name + ("_.Tensor" if tensors else "_")
    if name == "scatter":
        src = args[2] if len(args) > 2 else kwargs.get("src", kwargs.get("value"))
        kind = ".src" if isinstance(src, Tensor) else ".value"
        if len(args) > 3 or kwargs.get("reduce") is not None:
            kind = ".reduce" if kind == ".src" else ".value_reduce"
        return "scatter_" + kind
    if name == "random":
        n = len(args) + ("from" in kwargs) + ("to" in kwargs)
        return "random_" + ("" if not n else ".to" if n == 1 and "from" not in kwargs else ".from")
    if name == "round":
        return "round_.decimals" if "decimals" in kwargs else "round_"
    if name == "set":
        return "set_.source_Tensor" if args or kwargs else "set_"
    if name == "scatter_reduce":
        return "scatter_reduce_.two"
    return name + "_"


def _guarded(method, name: str):
    @functools.wraps(method)
    def guarded(self, *args, **kwargs):
        if WRITE_GUARD[0]:
            refuse_captured_write(self, _overload(name, args, kwargs))
        if VMAPS[0]:
            check_input_write(self)
            return _vmap_write(method, name, self, args, kwargs)
        return method(self, *args, **kwargs)

    return guarded


def _vmap_write(fn, name: str, self: Tensor, args: tuple, kwargs: dict):
    """Run the in-place op ``name`` inside vmap, named for vmap's errors; one PyTorch runs with
    its fallback warns, as its fallback does, and its kernel's warnings come once a sample
    (Note [vmap's fallback])."""
    op = _overload(name, args, kwargs)
    if op in FALLBACK_WRITES and _ACTIVE.writing is None and not _ACTIVE.fallback:
        tensors = [t for t in (self, *args, *kwargs.values()) if isinstance(t, Tensor)]
        sizes = batch_sizes(*tensors)
        if sizes:
            warnings.warn(FALLBACK_WARNING.format(op), stacklevel=3)
            outer = _ACTIVE.samples
            _ACTIVE.samples = int(np.prod(sizes))
            try:
                with writing_as(op):
                    return fn(self, *args, **kwargs)
            finally:
                _ACTIVE.samples = outer
    with writing_as(op):
        return fn(self, *args, **kwargs)


def check_input_write(t: Tensor) -> None:
    """An in-place op on a vmap input (or a view of one): PyTorch writes the caller's tensor, so
    its checks of that tensor apply (Note [Writes to vmap's inputs])."""
    root = t if t._base is None else t._base
    outer = root.__dict__.get("_vmap_outer")
    if outer is None:
        return
    from .ops.inplace import _overlaps, check_inplace

    if outer._requires_grad:
        if t is root:
            check_inplace(outer, True)
        elif (outer if outer._base is None else outer._base).grad_fn is None:
            if grad_mode._state.grad_enabled:
                raise RuntimeError(E.VIEW_OF_LEAF_INPLACE)
    if _overlaps(outer):
        raise RuntimeError(E.INTERNAL_OVERLAP)


@contextlib.contextmanager
def writing_as(op: str):
    """Name the in-place op now running (``fill_.Tensor``) for vmap's error about it; an op
    another one calls keeps the outer name."""
    outer = _ACTIVE.writing
    if outer is None:
        _ACTIVE.writing = op
    try:
        yield
    finally:
        _ACTIVE.writing = outer


def transform_level() -> int:
    """The functorch level of the innermost transform running (the outermost is 1)."""
    return len(_ACTIVE.stack) - _ACTIVE.exempt


def fallback_samples() -> int:
    """How many times PyTorch's vmap fallback runs the in-place op now running, one sample at a
    time (Note [vmap's fallback]); 1 elsewhere. Its kernel's warnings come once a sample."""
    return _ACTIVE.samples


def vmap_size() -> int | None:
    """The batch size of the innermost vmap running on this thread."""
    vmaps = _ACTIVE.vmaps
    return vmaps[-1].size if vmaps else None


def writing() -> str | None:
    """The in-place op a vmap'd function is running (``writing_as``), or None."""
    return _ACTIVE.writing


_NOT_WRITES = frozenset(["requires_grad_", "share_memory_"])


def guard_captured_writes(cls, augmented: dict) -> None:
    """Put the check of Note [Captured tensors] on each in-place method of ``cls`` and on its
    augmented assignments (``augmented``: ``__iadd__`` to ``add``)."""
    for attr, value in list(vars(cls).items()):
        if attr.endswith("_") and attr[0].isalpha() and attr not in _NOT_WRITES:
            if callable(value):
                setattr(cls, attr, _guarded(value, attr[:-1]))
    for dunder, name in augmented.items():
        if dunder in vars(cls):
            setattr(cls, dunder, _guarded(vars(cls)[dunder], name))


def _guarded_function(fn, name: str):
    """A function form (``torch.relu_(x)``, ``F.elu_(x)``) that writes its first argument."""

    @functools.wraps(fn)
    def guarded(input, *args, **kwargs):
        if WRITE_GUARD[0]:
            refuse_captured_write(input, _overload(name, args, kwargs))
        if VMAPS[0] and isinstance(input, Tensor):
            return _vmap_write(fn, name, input, args, kwargs)
        return fn(input, *args, **kwargs)

    return guarded


# the dropouts write with ``mul_`` (or ``unsqueeze_``) after drawing their masks, as PyTorch's
_SELF_GUARDED = frozenset(
    (
        "dropout alpha_dropout feature_alpha_dropout feature_dropout dropout1d dropout2d dropout3d"
    ).split()
)


def guard_captured_functions(module, functional) -> None:
    """Note [Captured tensors] on ``module``'s in-place function forms and on ``functional``'s
    (``F.relu_``); its functions that take ``inplace`` check for themselves (``writes_input``),
    so that they stay the objects modules compare with (``activation is F.relu``)."""
    done: dict = {}  # a function both modules name stays one object (``torch.selu_``)
    for mod in (module, functional):
        for attr, value in list(vars(mod).items()):
            if attr.endswith("_") and attr[0].isalpha() and inspect.isfunction(value):
                if attr[:-1] not in _SELF_GUARDED and not attr.startswith("set_"):
                    if id(value) not in done:
                        done[id(value)] = _guarded_function(value, attr[:-1])
                    setattr(mod, attr, done[id(value)])


@contextlib.contextmanager
def not_functorch(n: int):
    """The innermost ``n`` transforms running are leafgrad's way of computing something that
    is no functorch transform in PyTorch (``autograd.functional.jacobian``'s forward mode)."""
    _ACTIVE.exempt += n
    try:
        yield
    finally:
        _ACTIVE.exempt -= n


@contextlib.contextmanager
def captured_writable():
    """Writes that PyTorch makes as no in-place op (an ``out=`` result), which may write a
    captured tensor: a level of serial 0, before which nothing is born."""
    _ACTIVE.levels.append(0)
    try:
        yield
    finally:
        _ACTIVE.levels.pop()


def refuse_traced_out(name: str, operands) -> None:
    """An ``out=`` call on values a transform traces: the error of the innermost transform
    (PyTorch's autograd, forward AD and vmap each refuse ``out=`` functions); leafgrad would
    write the tracer into the ``out`` tensor."""
    stack = _ACTIVE.stack
    if len(stack) <= _ACTIVE.exempt:
        return
    tensors = []
    for a in operands:
        tensors.extend(a if isinstance(a, (list, tuple)) else (a,))
    if not any(isinstance(t, Tensor) and isinstance(t._data, jax.core.Tracer) for t in tensors):
        return
    kind = stack[-1]
    if kind == "grad":
        raise RuntimeError(E.OUT_REQUIRES_GRAD.format(name))
    if kind == "jvp":
        raise NotImplementedError(
            f"Trying to use forward AD with {name}_out that does not support it because it is "
            "an out= function"
        )
    raise RuntimeError(
        f"Batching rule not implemented for aten::{name}.out; the fallback path doesn't work on "
        "out= or view ops."
    )


def refuse_requires_grad_inside() -> None:
    """``requires_grad_()`` inside any transform: PyTorch's error."""
    if len(_ACTIVE.stack) > _ACTIVE.exempt:
        raise RuntimeError(REQUIRES_GRAD_INSIDE)


def refuse_backward_inside() -> None:
    """``backward()`` inside any transform: PyTorch's error."""
    if len(_ACTIVE.stack) > _ACTIVE.exempt:
        raise RuntimeError(BACKWARD_INSIDE)


# --- the outer graph --------------------------------------------------------------------------

# Note [Transforms and the outer graph]: PyTorch runs a transform's ops on the caller's tensors
# too, so a result of ``vmap(f)(x)`` or ``grad(f)(x)`` joins the caller's graph when ``x`` (or a
# tensor ``f`` reads from outside, such as a module's parameters) requires grad, and a later
# backward reaches them. leafgrad computes a transform as one JAX computation, so it cannot
# give that graph's nodes; rather than hand back results cut from the graph (whose gradients
# would be silently missing), the outermost transform gives its floating results PyTorch's
# ``requires_grad`` and a node, ``TransformBackward0``, whose backward raises, except for the
# transforms that recompute their call for its VJP (Note [Backward through vmap]). Values, and
# backward through anything else, are unaffected.
OUTER_BACKWARD = (
    "leafgrad: backward through the result of torch.func.{} to tensors outside it that require "
    "grad is not supported (PyTorch records the transform's ops in the caller's graph; "
    "leafgrad computes the transform as one JAX computation). Detach the inputs, or pass "
    "parameters explicitly (torch.func.functional_call) and differentiate with torch.func."
)


class TransformBackward0(Node):
    """The node of a transform's results that depend on tensors requiring grad (Note
    [Transforms and the outer graph]): differentiating through it raises, except where the node
    recomputes the transform as a JAX function of those tensors and takes its VJP (Note
    [Backward through vmap])."""

    __slots__ = ("_msg", "_n", "_recompute")

    def __init__(self, msg: str, next_functions: tuple, n: int, recompute=None) -> None:
        super().__init__(next_functions)
        self._msg = msg
        self._n = n
        self._recompute = recompute

    def _num_outputs(self) -> int:
        return self._n

    def _apply(self, grads: list) -> list:
        if self._recompute is None:
            raise NotImplementedError(self._msg)
        return self._recompute(grads)

    def _apply_graph(self, grads: list) -> list:
        if self._recompute is None:
            raise NotImplementedError(self._msg)
        raise NotImplementedError(VMAP_CREATE_GRAPH)

    def __call__(self, *grads):
        raise NotImplementedError(self._msg)


# Note [Backward through vmap]: ``vmap(f)(x)`` (likewise ``grad``, ``jacrev``, ``jacfwd``,
# ``hessian``, ``jvp``: the transforms in REPLAYED) runs as one JAX computation, so its results
# get one node. Its backward runs the call again (the generator at the state it had, so the same
# random draws) with the data of the tensors it read that require grad (its sources: inputs,
# parameters) replaced by JAX's tracers, and applies JAX's VJP of that function: the gradients
# PyTorch's graph of the transform's ops gives, to rounding. PyTorch records those ops
# (``ReluBackward0``...); leafgrad's node is one ``TransformBackward0``, and ``create_graph``
# through it is refused. ``vjp``'s outputs replay the function; the gradients its ``vjp_fn``
# gives still raise (they come from JAX's VJP, computed at the outer values once).
REPLAYED = {"vmap", "grad", "jacrev", "jacfwd", "jvp"}
VMAP_CREATE_GRAPH = (
    "leafgrad: create_graph=True through the result of a torch.func transform is not supported "
    "(its backward recomputes the transform as one JAX computation)"
)


def _vmap_recompute(call, args, kwargs, sources: list, positions: list, state, before=None):
    """The backward of a transform result's node (Note [Backward through vmap]). The tensors
    the call read (its sources, its tensor arguments) are read as they were in the forward:
    their arrays are kept (as PyTorch keeps saved tensors), so a later in-place write to one
    does not change the gradients; ``before``: the arguments' arrays before the call (by id),
    which the call may have written (Note [Arguments of a level]). The replay writes nothing
    back to them."""
    before = before or {}
    read = {id(t): t for t in [*sources, *_flatten((args, kwargs))[0]] if isinstance(t, Tensor)}
    frozen = [(t, before.get(id(t), t._data)) for t in read.values()]
    primals = [before.get(id(t), t._data) for t in sources]

    def function(*arrays):
        from .utils.checkpoint import _replaying

        now = [t._data for t, _ in frozen]
        try:
            for t, a in frozen:
                t._data = a
            for t, a in zip(sources, arrays):
                t._data = a
            _ACTIVE.replaying += 1
            with _replaying(state), grad_mode.no_grad():
                out = call(*args, **kwargs)
        finally:
            _ACTIVE.replaying -= 1
            for (t, _), a in zip(frozen, now):
                t._data = a
        leaves, _ = _flatten(out)
        return [leaves[i]._data for i in positions]

    def recompute(grads: list) -> list:
        outs, pullback = jax.vjp(function, *primals)
        cts = [jnp.zeros_like(o) if g is None else g.astype(o.dtype) for g, o in zip(grads, outs)]
        return list(pullback(cts))

    return recompute


def _requiring_grad(leaves, born=None) -> list:
    """The tensors of ``leaves`` that require grad from outside the transform: not traced, or
    (``born``: the transform runs inside a grad level) born before it (Note [Requires grad at
    a level])."""
    if born is not None:
        return [
            t
            for t in leaves
            if isinstance(t, Tensor) and t._requires_grad and t._version_counter.birth <= born
        ]
    return [
        t
        for t in leaves
        if isinstance(t, Tensor) and t._requires_grad and not isinstance(t._data, jax.core.Tracer)
    ]


@contextlib.contextmanager
def _outer_reads(born=None):
    """The tensors from outside the transform that require grad and that recorded ops read
    while it runs on this thread (by id); ``born`` as ``_requiring_grad`` takes it."""
    from .ops.dispatch import OBSERVERS

    found: dict = {}
    me = threading.get_ident()

    def observer(op, operands, static, needs) -> None:
        if threading.get_ident() == me:
            for t in _requiring_grad(operands, born):
                found[id(t)] = t

    OBSERVERS.append(observer)
    reader = (found, born)
    _ACTIVE.readers.append(reader)  # and those a grad level hides (``hide_captured``)
    try:
        yield found
    finally:
        OBSERVERS.remove(observer)
        readers = _ACTIVE.readers
        del readers[next(i for i, r in enumerate(readers) if r is reader)]


def _mark(out, sources: list, api: str, replay=None, nested: bool = False):
    """Give the floating Tensors of ``out`` a node with edges to ``sources``; ``replay``:
    ``(call, args, kwargs, generator state, arrays before)`` of a transform whose node can
    run backward (``_vmap_recompute``);
    ``nested``: the transform ran inside a grad level, whose tensors are traced."""
    from .ops.dispatch import _edge

    leaves, _ = _flatten(out)
    positions = [
        i
        for i, t in enumerate(leaves)
        if isinstance(t, Tensor)
        and _inexact(t)
        and not t._requires_grad
        and (nested or not isinstance(t._data, jax.core.Tracer))
    ]
    marked = [leaves[i] for i in positions]
    if not marked:
        return
    unique = list({id(t): t for t in sources}.values())
    recompute = None
    if replay is not None:
        call, args, kwargs, state, before = replay
        recompute = _vmap_recompute(call, args, kwargs, unique, positions, state, before)
    node = TransformBackward0(
        OUTER_BACKWARD.format(api), tuple(_edge(t) for t in unique), len(marked), recompute
    )
    for k, t in enumerate(marked):
        t._requires_grad, t._grad_fn, t._output_nr = True, node, k


def _outer_graph(api: str):
    """Decorate a transform's call: its results join the caller's graph as Note [Transforms
    and the outer graph] says. Returns ``(result, sources)`` when ``sources=True`` is asked."""

    def decorate(call):
        @functools.wraps(call)
        def run(*args, **kwargs):
            state = grad_mode._state
            if not state.grad_enabled or state.inference:
                return call(*args, **kwargs)
            born = None
            stack = _ACTIVE.stack
            if stack:
                # inside a grad level its tensors require grad (Note [Requires grad at a
                # level]), and so do the results of a transform of them, as PyTorch's
                if stack[-1] != "grad" or _ACTIVE.exempt:
                    return call(*args, **kwargs)
                born = _tensor_module._Version.birth  # the tensors made so far
            state = None
            if api in REPLAYED:  # Note [Backward through vmap]
                from .utils.checkpoint import _rng_state

                state = _rng_state()
            given = _flatten((args, kwargs))[0]
            before = {id(t): t._data for t in given if isinstance(t, Tensor)}
            with _outer_reads(born) as found:
                out = call(*args, **kwargs)
            sources = _requiring_grad(given, born) + list(found.values())
            if sources:
                replay = (call, args, kwargs, state, before) if api in REPLAYED else None
                _mark(out, sources, api, replay, born is not None)
            return out

        return run

    return decorate


# --- torch-style pytrees -------------------------------------------------------------------


def _is_namedtuple(x) -> bool:
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


def _flatten(tree):
    """``(leaves, spec)`` as ``torch.utils._pytree.tree_flatten`` makes them."""
    leaves: list = []
    return leaves, _flatten_into(tree, leaves)


def _is_structseq(cls) -> bool:
    """A ``torch.return_types`` class (``linalg_svd``): a node of its own in torch's pytrees."""
    return hasattr(cls, "n_sequence_fields")


def _flatten_into(tree, leaves):
    # A spec is ("*",) for a leaf or (kind, context, children).
    if _is_namedtuple(tree) and _is_structseq(type(tree)):
        return ("structseq", type(tree), [_flatten_into(c, leaves) for c in tree])
    if _is_namedtuple(tree):
        return ("namedtuple", type(tree), [_flatten_into(c, leaves) for c in tree])
    if isinstance(tree, tuple):
        return ("tuple", None, [_flatten_into(c, leaves) for c in tree])
    if isinstance(tree, list):
        return ("list", None, [_flatten_into(c, leaves) for c in tree])
    if isinstance(tree, OrderedDict):
        keys = list(tree)
        return ("OrderedDict", keys, [_flatten_into(tree[k], leaves) for k in keys])
    if isinstance(tree, dict):
        keys = list(tree)
        return ("dict", keys, [_flatten_into(tree[k], leaves) for k in keys])
    leaves.append(tree)
    return ("*",)


def _unflatten(leaves, spec):
    it = iter(leaves)
    return _build(it, spec)


def _build(it, spec):
    if spec[0] == "*":
        return next(it)
    kind, ctx, children = spec
    values = [_build(it, c) for c in children]
    if kind == "tuple":
        return tuple(values)
    if kind == "list":
        return values
    if kind == "namedtuple":
        return ctx(*values)
    if kind == "structseq":
        return ctx(values)
    if kind == "OrderedDict":
        return OrderedDict(zip(ctx, values))
    return dict(zip(ctx, values))


def _spec_pprint(spec) -> str:
    """``torch.utils._pytree.treespec_pprint``."""
    if spec[0] == "*":
        return "*"
    kind, ctx, children = spec
    parts = [_spec_pprint(c) for c in children]
    if kind == "tuple":
        return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"
    if kind == "list":
        return "[" + ", ".join(parts) + "]"
    if kind in ("dict", "OrderedDict"):
        inner = ", ".join(f"{k!r}: {p}" for k, p in zip(ctx, parts))
        return "{" + inner + "}" if kind == "dict" else f"OrderedDict({{{inner}}})"
    if kind == "structseq":  # the class's repr, its values "*"
        body = ",\n".join(f"{f}={p}" for f, p in zip(ctx._fields, parts))
        return f"torch.return_types.{ctx._type_name}(\n{body})"
    return f"{ctx.__name__}(" + ", ".join(parts) + ")"


def _spec_repr(spec, indent: int = 0) -> str:
    """``repr`` of a torch ``TreeSpec``."""
    if spec[0] == "*":
        return "*"
    kind, ctx, children = spec
    names = {"namedtuple": "namedtuple", "OrderedDict": "OrderedDict"}
    context = "None" if kind in ("tuple", "list", "structseq") else repr(ctx)
    inner_indent = indent + 2
    parts = [_spec_repr(c, inner_indent) for c in children]
    body = (",\n" + " " * inner_indent).join(parts)
    name = ctx._type_name if kind == "structseq" else names.get(kind, kind)
    return f"TreeSpec({name}, {context}, [{body}])"


def _broadcast_to_and_flatten(prefix, spec):
    """Flatten ``prefix`` (a pytree prefix of ``spec``) to one entry per leaf, or None."""
    if spec[0] == "*":
        return None if _is_container(prefix) else [prefix]
    if not _is_container(prefix):
        return [prefix] * _num_leaves(spec)
    p_leaves, p_spec = prefix, _flatten_into(prefix, [])
    kind, ctx, children = spec
    if p_spec[0] != kind or (kind != "tuple" and kind != "list" and p_spec[1] != ctx):
        return None
    if len(p_spec[2]) != len(children):
        return None
    sub = p_leaves.values() if isinstance(p_leaves, dict) else p_leaves
    out: list = []
    for p, c in zip(sub, children):
        r = _broadcast_to_and_flatten(p, c)
        if r is None:
            return None
        out.extend(r)
    return out


def _is_container(x) -> bool:
    return isinstance(x, (tuple, list, dict))


def _num_leaves(spec) -> int:
    if spec[0] == "*":
        return 1
    return sum(_num_leaves(c) for c in spec[2])


# --- wrapping arrays as Tensors ---------------------------------------------------------------


def _wrap(array, like: Tensor) -> Tensor:
    """``array`` as a Tensor on ``like``'s device, its dtype from the array."""
    dt = like._dtype if array.dtype == like._data.dtype else D.from_numpy_dtype(array.dtype)
    return Tensor._make(array, dt, like._device)


def _input_leaf(array, like: Tensor) -> Tensor:
    """A differentiated input inside a grad level: a leaf that requires grad (Note [Requires
    grad at a level])."""
    t = _wrap(array, like)
    t._requires_grad = True
    return t


def _inexact(t: Tensor) -> bool:
    return t._dtype.is_floating_point or t._dtype.is_complex


# --- argnums -------------------------------------------------------------------------------------


def _validate_and_wrap_argnum(argnum, num_args: int) -> int:
    if not isinstance(argnum, int):
        raise RuntimeError(f"argnum must be int, got: {type(argnum)}")
    if 0 <= argnum < num_args:
        return argnum
    if -num_args <= argnum < 0:
        return argnum + num_args
    raise RuntimeError(f"Got argnum={argnum}, but only {num_args} positional inputs")


def _wrap_argnums(argnums, num_args: int):
    if not isinstance(argnums, (int, tuple)):
        raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")
    if isinstance(argnums, int):
        return _validate_and_wrap_argnum(argnums, num_args)
    argnums = tuple(_validate_and_wrap_argnum(a, num_args) for a in argnums)
    if len(argnums) == 0:
        raise RuntimeError("argnums must be non-empty")
    if len(set(argnums)) != len(argnums):
        raise RuntimeError(f"argnums elements must be unique, got {argnums}")
    return argnums


def _slice(args, argnums):
    return args[argnums] if isinstance(argnums, int) else tuple(args[i] for i in argnums)


# Note [Arguments of a level]: PyTorch wraps every argument of grad, vjp and jvp at the level,
# so an in-place write to one inside the function is no write to a captured tensor: it writes
# through the wrapper to the caller's tensor (the primal values: a gradient or tangent stays at
# the level). A differentiated input of grad or vjp is a leaf that requires grad, which refuses
# the write. leafgrad gives the function aliases born at the level (``_aliased``); the values
# an alias was given come out of JAX's transform beside the outputs, as primal values, and are
# copied into the caller's tensor after it (``_write_back``): before, the tracer was written
# into the caller's tensor, which broke it.


def _aliased(tree, pairs: list):
    """``tree`` with each tensor replaced by an alias born in the running level; ``pairs``
    gets ``(caller's tensor, alias)`` for each."""
    from ._tensor import _copy_strides

    leaves, spec = _flatten(tree)
    new = []
    for t in leaves:
        if isinstance(t, Tensor):
            alias = _wrap(t._data, t)
            _copy_strides(t, alias)
            pairs.append((t, alias, alias._data))
            t = alias
        new.append(t)
    return _unflatten(new, spec)


def _written(pairs: list) -> list:
    """``(index, array)`` of each alias the function wrote."""
    return [
        (k, alias._data) for k, (_, alias, first) in enumerate(pairs) if alias._data is not first
    ]


def _write_back(pairs: list, written: list, arrays) -> None:
    """Copy what the function wrote into its arguments' aliases into the caller's tensors
    (not when a result's backward replays the call: that wrote them already)."""
    if _ACTIVE.replaying:
        return
    for (k, _), array in zip(written, arrays):
        t = pairs[k][0]
        t.copy_(_wrap(array, t))


def _replace(args, new, argnums):
    if isinstance(argnums, int):
        return tuple(new if i == argnums else a for i, a in enumerate(args))
    return tuple(new[argnums.index(i)] if i in argnums else a for i, a in enumerate(args))


def _differentiable_leaves(tree):
    """The leaves of a differentiated argument: Tensors of a floating or complex dtype."""
    leaves, spec = _flatten(tree)
    for x in leaves:
        if not isinstance(x, Tensor):
            raise ValueError(f"Thing passed to transform API must be Tensor, got {type(x)}")
        if not _inexact(x):
            raise RuntimeError(NOT_FLOAT_REQUIRES_GRAD)
    return leaves, spec


def _aux_arrays(aux):
    """Aux outputs must be Tensors (torch's ``_undo_create_differentiable``)."""
    leaves, spec = _flatten(aux)
    for x in leaves:
        if not isinstance(x, Tensor):
            raise RuntimeError(f"Expected tensors, got unsupported type {type(x)}")
    return [x._data for x in leaves], (leaves, spec)


def _wrap_aux(arrays, info):
    leaves, spec = info
    return _unflatten([_wrap(a, t) for a, t in zip(arrays, leaves)], spec)


def _check_not_freed(outputs, first: int) -> None:
    """PyTorch's grad transform runs autograd backward through the graph the level recorded
    (Note [Requires grad at a level]): a node whose saved values an ``autograd.grad`` inside
    the function freed (no ``retain_graph``) raises there, as it does here. ``first``: the
    sequence number of the level's first node; older nodes (the caller's graph) are not its."""
    seen = set()
    todo = [t.grad_fn for t in outputs if isinstance(t, Tensor) and t.grad_fn is not None]
    while todo:
        node = todo.pop()
        if node is None or id(node) in seen or node._sequence_key() < first:
            continue
        seen.add(id(node))
        if getattr(node, "_released", None) or getattr(node, "_freed", False):
            raise RuntimeError(E.BACKWARD_TWICE)
        todo.extend(n for n, _ in node.next_functions)


def _is_complex_array(a) -> bool:
    return jnp.issubdtype(a.dtype, jnp.complexfloating)


def _torch_vjp(vjp_fn, cts, primals):
    """PyTorch's convention for complex numbers: conj(JAX's VJP of the conjugate cotangent)."""
    complex_ = any(_is_complex_array(c) for c in cts) or any(_is_complex_array(p) for p in primals)
    if not complex_:
        return vjp_fn(tuple(cts))
    grads = vjp_fn(tuple(jnp.conj(c) for c in cts))
    return tuple(jnp.conj(g) for g in grads)


# --- grad / grad_and_value ------------------------------------------------------------------


def grad_and_value(func, argnums=0, has_aux: bool = False):
    """``(gradient, value)`` of a scalar function; ``(gradient, (value, aux))`` with has_aux."""

    @functools.wraps(func)
    @_outer_graph("grad")
    def wrapper(*args, **kwargs):
        nums = _wrap_argnums(argnums, len(args))
        flat_diff, spec = _differentiable_leaves(_slice(args, nums))
        box: dict = {}

        def f(*arrays):
            level = _new_level()
            first = _next_sequence_nr()
            new = _unflatten([_input_leaf(a, t) for a, t in zip(arrays, flat_diff)], spec)
            pairs: list = []  # Note [Arguments of a level]
            call_args = _replace(_aliased(args, pairs), new, nums)
            box["pairs"] = pairs
            with grad_mode.enable_grad(), _running("grad", level, arrays=arrays):
                output = func(*call_args, **kwargs)
            aux = None
            if has_aux:
                if not (isinstance(output, tuple) and len(output) == 2):
                    raise RuntimeError(GRAD_AUX)
                output, aux = output
            if not isinstance(output, Tensor):
                raise RuntimeError(GRAD_NOT_TENSOR.format(type(output)))
            if output.dim() != 0:
                raise RuntimeError(GRAD_NOT_SCALAR.format(output.dim()))
            _check_not_freed([output], first)
            box["out"] = output
            aux_arrays = None
            if has_aux:
                aux_arrays, box["aux"] = _aux_arrays(aux)
            box["written"] = written = _written(pairs)
            return output._data, (aux_arrays, [a for _, a in written])

        primals = [t._data for t in flat_diff]
        out, vjp_fn, (aux_arrays, writes) = jax.vjp(f, *primals, has_aux=True)
        _write_back(box["pairs"], box["written"], writes)
        if jnp.issubdtype(out.dtype, jnp.inexact):
            grads = _torch_vjp(lambda c: vjp_fn(c[0]), [jnp.ones_like(out)], primals)
        else:  # an output that cannot require grad: torch fills the gradient with zeros
            grads = [jnp.zeros_like(p) for p in primals]
        grad_tree = _unflatten([_wrap(g, t) for g, t in zip(grads, flat_diff)], spec)
        value = _wrap(out, box["out"])
        if has_aux:
            return grad_tree, (value, _wrap_aux(aux_arrays, box["aux"]))
        return grad_tree, value

    return wrapper


def grad(func, argnums=0, has_aux: bool = False):
    """The gradient of a scalar function with respect to the arguments at ``argnums``."""
    gv = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        g, value = gv(*args, **kwargs)
        return (g, value[1]) if has_aux else g

    return wrapper


# --- vjp / jvp -------------------------------------------------------------------------------


def _check_outputs(flat_out, api: str) -> None:
    if (len(flat_out) == 1 and flat_out[0] is None) or len(flat_out) < 1:
        raise RuntimeError(
            f"{api}: Expected f to be a function that has non-empty output (got output = "
            f"{flat_out})"
        )
    for o in flat_out:
        if not isinstance(o, Tensor):
            raise RuntimeError(
                f"{api}: expected f(*primals) to return only tensors, got unsupported type "
                f"{type(o)}"
            )


def _vjp_core(func, args, argnums, has_aux, arrays=False):
    """JAX's vjp of ``func`` at ``args`` for the arguments at ``argnums`` (None: all)."""
    if argnums is None:
        diff = args
    else:
        argnums = _wrap_argnums(argnums, len(args))
        diff = _slice(args, argnums)
    flat_diff, spec = _differentiable_leaves(diff)
    box: dict = {}

    def f(*arrays):
        level = _new_level()
        first = _next_sequence_nr()
        new = _unflatten([_input_leaf(a, t) for a, t in zip(arrays, flat_diff)], spec)
        pairs: list = []  # Note [Arguments of a level]
        call_args = new if argnums is None else _replace(_aliased(args, pairs), new, argnums)
        box["pairs"] = pairs
        with grad_mode.enable_grad(), _running("grad", level, arrays=arrays):
            output = func(*call_args)
        aux_arrays = None
        if has_aux:
            if not (isinstance(output, tuple) and len(output) == 2):
                raise RuntimeError(VJP_AUX)
            output, aux = output
            aux_arrays, box["aux"] = _aux_arrays(aux)
        flat_out, out_spec = _flatten(output)
        _check_outputs(flat_out, "vjp(f, *primals)")
        for o in flat_out:
            if not _inexact(o):
                raise RuntimeError(
                    "vjp(f, ...): All outputs of f must be floating-point or complex Tensors, "
                    f"got Tensor with dtype {o.dtype}"
                )
        box["out"] = (flat_out, out_spec)
        try:
            _check_not_freed(flat_out, first)
        except RuntimeError as err:
            box["freed"] = err  # raised when the vjp is applied, as PyTorch's backward is
        box["written"] = written = _written(pairs)
        return [o._data for o in flat_out], (aux_arrays, [a for _, a in written])

    primals = [t._data for t in flat_diff]
    out, vjp_fn, (aux_arrays, writes) = jax.vjp(f, *primals, has_aux=True)
    _write_back(box["pairs"], box["written"], writes)
    flat_out, out_spec = box["out"]
    outputs = [_wrap(a, t) for a, t in zip(out, flat_out)]

    def apply_arrays(*cts):
        if "freed" in box:
            raise box["freed"]
        cts = [c if c.dtype == o.dtype else c.astype(o.dtype) for c, o in zip(cts, out)]
        # vjp_fn takes the cotangent of f's whole output: (list of arrays,)
        return _torch_vjp(lambda c: vjp_fn(list(c)), cts, primals)

    def apply(flat_cts):
        grads = apply_arrays(*[c._data for c in flat_cts])
        return _unflatten([_wrap(g, t) for g, t in zip(grads, flat_diff)], spec)

    aux = _wrap_aux(aux_arrays, box["aux"]) if has_aux else None
    return outputs, out_spec, apply_arrays if arrays else apply, aux, (flat_diff, spec)


def vjp(func, *primals, has_aux: bool = False):
    """``(output, vjp_fn)`` (``(output, vjp_fn, aux)`` with has_aux); ``vjp_fn(cotangents)``
    returns a tuple with one gradient per primal."""
    state = grad_mode._state
    stack = _ACTIVE.stack
    outer = state.grad_enabled and not state.inference
    born = None
    if outer and stack:  # inside a grad level, as _outer_graph
        outer = stack[-1] == "grad" and not _ACTIVE.exempt
        born = _tensor_module._Version.birth
    rng = None
    if outer:  # Note [Backward through vmap]: the outputs' node replays the call
        from .utils.checkpoint import _rng_state

        rng = _rng_state()
    given = _flatten(primals)[0]
    before = {id(t): t._data for t in given if isinstance(t, Tensor)}
    with _outer_reads(born) if outer else contextlib.nullcontext({}) as found:
        outputs, out_spec, apply, aux, _ = _vjp_core(func, primals, None, has_aux)
    sources = _requiring_grad(_flatten(primals)[0], born) + list(found.values()) if outer else []

    @_outer_graph("vjp")
    def gradients(cotangents):
        result = apply(cotangents)
        if sources and not _ACTIVE.stack:  # Note [Transforms and the outer graph]
            _mark(result, sources, "vjp")
        return result

    def vjp_fn(cotangents, retain_graph: bool = True, create_graph=None):
        flat_cts, ct_spec = _flatten(cotangents)
        if ct_spec != out_spec:
            raise RuntimeError(
                "Expected pytree structure of cotangents to be the same as pytree structure of "
                f"outputs to the function. cotangents: {_spec_pprint(ct_spec)}, primal output: "
                f"{_spec_pprint(out_spec)}"
            )
        for i, (c, o) in enumerate(zip(flat_cts, outputs)):
            if c.shape != o.shape:
                raise RuntimeError(E.GRAD_SHAPE_MISMATCH.format(i, c.shape, i, o.shape))
        return gradients(flat_cts)

    result = _unflatten(outputs, out_spec)
    if sources:

        def call(*args):
            outs, spec, _, extra, _ = _vjp_core(func, args, None, has_aux)
            return _unflatten(outs, spec), extra

        replay = (call, primals, {}, rng, before)
        _mark((result, aux), sources, "vjp", replay, born is not None)
    return (result, vjp_fn, aux) if has_aux else (result, vjp_fn)


def _check_tensor_list(leaves, argname: str) -> None:
    if len(leaves) == 0:
        raise RuntimeError(f"{JVP_STR}: Expected {argname} to contain at least one Tensor.")
    for x in leaves:
        if not isinstance(x, Tensor):
            raise RuntimeError(
                f"{JVP_STR}: Expected {argname} to only contain Tensors, got {type(x)}"
            )


def _jvp_core(func, args, tangents, argnums, has_aux, strict=False, deferred=None):
    """JAX's jvp of ``func``; ``deferred``: a list that gets the writes to the arguments
    (``(pairs, written, arrays)``, Note [Arguments of a level]) for the caller to make (jacfwd
    makes them outside its vmap), else they are made here."""
    if not isinstance(args, tuple):
        raise RuntimeError(
            f"{JVP_STR}: Expected primals to be a tuple. E.g. it should be valid to call "
            "f(*primals)."
        )
    if argnums is not None:
        argnums = _wrap_argnums(argnums, len(args))
    diff = (
        args
        if argnums is None
        else _slice(args, (argnums,) if isinstance(argnums, int) else argnums)
    )
    flat_p, p_spec = _flatten(diff)
    flat_t, t_spec = _flatten(tangents)
    if p_spec != t_spec:
        raise RuntimeError(
            f"{JVP_STR}: Expected primals and tangents to have the same python structure. For "
            "example, if primals is a tuple of 3 tensors, tangents also must be. Got primals "
            f"with structure {_spec_repr(p_spec)} and tangents with structure {_spec_repr(t_spec)}"
        )
    _check_tensor_list(flat_p, "primals")
    _check_tensor_list(flat_t, "tangents")
    from .autograd import forward_ad

    forward_ad.refuse_nesting()  # PyTorch's outermost jvp enters a dual level of its own
    for p, t in zip(flat_p, flat_t):  # its make_dual's checks
        forward_ad.check_dual(p, t, floats=True)
    box: dict = {}

    def f(*arrays):
        level = _new_level()
        new = _unflatten([_wrap(a, t) for a, t in zip(arrays, flat_p)], p_spec)
        # Note [Arguments of a level]: a jvp's inputs are written through too
        pairs: list = [(t, n, n._data) for t, n in zip(flat_p, _flatten(new)[0])]
        if argnums is None:
            call_args = new
        else:
            others = _aliased(args, pairs)
            call_args = _replace(others, new[0] if isinstance(argnums, int) else new, argnums)
        box["pairs"] = pairs
        with _running("jvp", level, arrays=arrays):
            output = func(*call_args)
        aux_arrays = None
        if has_aux:
            if not (isinstance(output, tuple) and len(output) == 2):
                raise RuntimeError(
                    f"{JVP_STR}: output of function f should be a tuple: (output, aux) if "
                    "has_aux is True"
                )
            output, aux = output
            aux_arrays, box["aux"] = _aux_arrays(aux)
        flat_out, out_spec = _flatten(output)
        _check_outputs(flat_out, JVP_STR)
        box["out"] = (flat_out, out_spec)
        box["written"] = written = _written(pairs)
        return [o._data for o in flat_out], (aux_arrays, [a for _, a in written])

    primals = tuple(t._data for t in flat_p)
    tans = tuple(
        t._data if t._data.dtype == p.dtype else t._data.astype(p.dtype)
        for t, p in zip(flat_t, primals)
    )
    out, tan_out, (aux_arrays, writes) = jax.jvp(f, primals, tans, has_aux=True)
    if deferred is None:
        _write_back(box["pairs"], box["written"], writes)
    else:
        deferred.append((box["pairs"], box["written"], writes))
    flat_out, out_spec = box["out"]
    outs = _unflatten([_wrap(a, t) for a, t in zip(out, flat_out)], out_spec)
    touts = _unflatten([_wrap(a, t) for a, t in zip(tan_out, flat_out)], out_spec)
    aux = _wrap_aux(aux_arrays, box["aux"]) if has_aux else None
    return outs, touts, aux


@_outer_graph("jvp")
def jvp(func, primals, tangents, *, strict: bool = False, has_aux: bool = False):
    """``(func(*primals), J @ tangents)`` by forward mode (``(..., aux)`` with has_aux)."""
    outs, touts, aux = _jvp_core(func, primals, tangents, None, has_aux, strict)
    return (outs, touts, aux) if has_aux else (outs, touts)


# --- jacobians -------------------------------------------------------------------------------


def _error_if_complex(name: str, leaves, is_input: bool) -> None:
    for idx, a in enumerate(leaves):
        if isinstance(a, Tensor) and a._dtype.is_complex:
            which = "inputs" if is_input else "outputs"
            raise RuntimeError(
                f"{name}: Expected all {which} to be real but received complex tensor at "
                f"flattened input idx: {idx}"
            )


def _basis(numels, dtypes):
    """torch's standard basis: an identity of size sum(numels), split by columns per tensor."""
    total = sum(numels)
    eye = jnp.eye(total)
    chunks, start = [], 0
    for n, dt in zip(numels, dtypes):
        chunks.append(eye[:, start : start + n].astype(dt))
        start += n
    return chunks


def jacrev(
    func, argnums=0, *, has_aux: bool = False, chunk_size=None, _preallocate_and_copy: bool = False
):
    """The Jacobian of ``func`` with respect to the arguments at ``argnums``, by reverse mode.

    ``chunk_size`` is accepted; the whole basis is always mapped at once (same values)."""
    if not (chunk_size is None or chunk_size > 0):
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")

    @functools.wraps(func)
    @_outer_graph("jacrev")
    def wrapper(*args):
        _error_if_complex("jacrev", _flatten(args)[0], True)
        outputs, out_spec, apply_arrays, aux, (flat_p, p_spec) = _vjp_core(
            func, args, argnums, has_aux, arrays=True
        )
        _error_if_complex("jacrev", outputs, False)
        numels = [o.numel() for o in outputs]
        basis = [
            b.reshape((b.shape[0],) + o.shape)
            for b, o in zip(_basis(numels, [o._data.dtype for o in outputs]), outputs)
        ]
        # the rows of the Jacobian: the vjp of every basis vector, under one vmap (as torch)
        flat_rows = jax.vmap(apply_arrays)(*basis)
        per_input = []
        for r, p in zip(flat_rows, flat_p):
            splits, start = [], 0
            for n, o in zip(numels, outputs):
                splits.append(_wrap(r[start : start + n].reshape(o.shape + p.shape), p))
                start += n
            per_input.append(splits)
        per_output = [
            _unflatten([per_input[j][i] for j in range(len(flat_p))], p_spec)
            for i in range(len(outputs))
        ]
        result = _unflatten(per_output, out_spec)
        return (result, aux) if has_aux else result

    return wrapper


def jacfwd(func, argnums=0, has_aux: bool = False, *, randomness: str = "error"):
    """The Jacobian of ``func`` with respect to the arguments at ``argnums``, by forward mode."""

    @functools.wraps(func)
    @_outer_graph("jacfwd")
    def wrapper(*args):
        _check_randomness(randomness)  # torch checks it when its inner vmap is built
        _error_if_complex("jacfwd", _flatten(args)[0], True)
        nums = _wrap_argnums(argnums, len(args))
        flat_p, p_spec = _flatten(_slice(args, (nums,) if isinstance(nums, int) else nums))
        _check_tensor_list(flat_p, "primals")
        numels = [p.numel() for p in flat_p]
        basis = _basis(numels, [p._data.dtype for p in flat_p])
        box: dict = {}

        def push(*cols):
            tangents = _unflatten(
                [
                    Tensor._make(c.reshape(p.shape), p._dtype, p._device)
                    for c, p in zip(cols, flat_p)
                ],
                p_spec,
            )
            # PyTorch's jacfwd: vmap(jvp(f))
            deferred: list = []
            with _running("vmap", randomness=randomness, size=sum(numels), arrays=cols, axis=axis):
                outs, touts, aux = _jvp_core(func, args, tangents, nums, has_aux, False, deferred)
            flat_o = _flatten(outs)[0]
            _error_if_complex("jacfwd", flat_o, False)
            flat_t, t_spec = _flatten(touts)
            box["out"] = (flat_o, t_spec)
            aux_arrays = None
            if has_aux:
                aux_arrays, box["aux"] = _aux_arrays(aux)
            pairs, written, writes = deferred[0]
            box["writes"] = (pairs, written)
            return [t._data for t in flat_t], aux_arrays, writes

        # basis columns: basis[k][:, j] is input k's part of the j-th basis vector; the
        # primal values written into arguments are the same for each (Note [Arguments of a
        # level])
        axis = _axis_name()
        jac, aux_arrays, writes = jax.vmap(push, out_axes=(0, 0, None), axis_name=axis)(*basis)
        _write_back(*box["writes"], writes)
        flat_o, o_spec = box["out"]
        per_output = []
        for j_arr, o in zip(jac, flat_o):
            moved = jnp.moveaxis(j_arr, 0, -1)
            parts, start = [], 0
            for n, p in zip(numels, flat_p):
                part = moved[..., start : start + n].reshape(o.shape + p.shape)
                parts.append(_wrap(part, o))
                start += n
            tree = _unflatten(parts, p_spec)
            per_output.append(tree[0] if isinstance(nums, int) else tree)
        result = _unflatten(per_output, o_spec)
        if has_aux:
            aux = _wrap_aux([a[0] for a in aux_arrays], box["aux"])
            return result, aux
        return result

    return wrapper


def hessian(func, argnums=0):
    """The Hessian of ``func``: ``jacfwd(jacrev(func, argnums), argnums)``."""
    return jacfwd(jacrev(func, argnums), argnums)


# --- vmap -------------------------------------------------------------------------------------


def _check_randomness(randomness) -> None:
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(RANDOMNESS.format(randomness))


_TORCH_NAMES: dict = {}


def _torch_name(func) -> str:
    """The ``__name__`` PyTorch's function has: ``linalg_svd`` for ``torch.linalg.svd`` (its
    submodules' functions are named with their prefix), where leafgrad's object is that
    function's alone."""
    if not _TORCH_NAMES:
        import leafgrad

        for module, prefix in (("linalg", "linalg_"), ("fft", "fft_"), ("special", "special_")):
            for n, obj in vars(getattr(leafgrad, module)).items():
                if (
                    callable(obj)
                    and not n.startswith("_")
                    and getattr(leafgrad, n, None) is not obj
                ):
                    _TORCH_NAMES[id(obj)] = (obj, prefix + n)
        _TORCH_NAMES[None] = None
    found = _TORCH_NAMES.get(id(func))
    return found[1] if found is not None and found[0] is func else func.__name__


def _name(func) -> str:
    if hasattr(func, "__name__"):
        return _torch_name(func)
    if isinstance(func, functools.partial):
        return f"functools.partial({_name(func.func)}, ...)"
    return repr(func)


# Note [Writes to vmap's inputs]: PyTorch's vmap runs the function on the caller's tensors
# (batched views of them), so an in-place op on an input writes the caller's tensor, and an
# output that is an input comes back as the caller's tensor itself (``vmap(f)(x) is x`` for
# ``f = lambda r: r.add_(1)``). leafgrad's function runs on JAX's tracers: the inputs it wrote
# come out of ``jax.vmap`` beside its outputs and are copied into the caller's tensors
# (``copy_``: a ``CopyBackwards`` node where PyTorch records the op, the same gradients), and an
# output that is an input is replaced by the caller's tensor (``movedim``'d when the dims
# differ). The checks PyTorch makes of the caller's tensor come first (``check_input_write``):
# a leaf (or a view of one) that requires grad, or memory that overlaps itself (an expanded
# tensor), refuses the write.


def vmap(func, in_dims=0, out_dims=0, randomness: str = "error", *, chunk_size=None):
    """``func`` mapped over a dimension of its inputs, by ``jax.vmap``.

    Random ops inside raise under ``randomness="error"`` and draw once for the whole batch
    under "same", once per sample under "different" (Note [Randomness in vmap]);
    ``chunk_size`` is accepted and the whole batch is mapped at once (same values)."""
    _check_randomness(randomness)
    if not (chunk_size is None or chunk_size > 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        # Note [Writes to vmap's inputs]
        meta: dict = {}
        result, news = _outer_graph("vmap")(functools.partial(mapped, meta))(*args, **kwargs)
        flat_args, written, returned = meta["inputs"]
        for i, new in zip(written, news):
            flat_args[i].copy_(new)
        if not returned:
            return result
        leaves, out_spec = _flatten(result)
        for pos, i, d_in, d_out in returned:
            outer = flat_args[i]
            leaves[pos] = outer if d_in == d_out else outer.movedim(d_in, d_out)
        return _unflatten(leaves, out_spec)

    def mapped(meta, *args, **kwargs):
        name = _name(func)
        _check_out_dims(out_dims, func)
        if not isinstance(in_dims, (int, tuple)):
            raise ValueError(
                f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): expected `in_dims` to be int "
                "or a (potentially nested) tuple matching the structure of inputs, got: "
                f"{type(in_dims)}."
            )
        if len(args) == 0:
            raise ValueError(
                f"vmap({name})(<inputs>): got no inputs. Maybe you forgot to add inputs, or you "
                "are trying to vmap over a function with no inputs. The latter is unsupported."
            )
        flat_args, spec = _flatten(args)
        flat_in = _broadcast_to_and_flatten(in_dims, spec)
        if flat_in is None:
            raise ValueError(
                f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): in_dims is not compatible "
                f"with the structure of `inputs`. in_dims has structure "
                f"{_spec_repr(_flatten(in_dims)[1])} but inputs has structure {_spec_repr(spec)}."
            )
        for i, (arg, d) in enumerate(zip(flat_args, flat_in)):
            if not isinstance(d, int) and d is not None:
                raise ValueError(
                    f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for an "
                    "input but in_dim must be either an integer dimension or None."
                )
            if isinstance(d, int) and not isinstance(arg, Tensor):
                raise ValueError(
                    f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for an "
                    f"input but the input is of type {type(arg)}. We cannot vmap over "
                    "non-Tensor arguments, please use None as the respective in_dim"
                )
            if d is not None and (d < -arg.dim() or d >= arg.dim()):
                raise ValueError(
                    f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for some "
                    f"input, but that input is a Tensor of dimensionality {arg.dim()} so "
                    f"expected in_dim to satisfy -{arg.dim()} <= in_dim < {arg.dim()}."
                )
            if d is not None and d < 0:
                flat_in[i] = d % arg.dim()
        sizes = [a.size(d) for a, d in zip(flat_args, flat_in) if d is not None]
        if not sizes:
            raise ValueError("vmap: Expected at least one Tensor to vmap over")
        if any(s != sizes[0] for s in sizes):
            raise ValueError(
                "vmap: Expected all tensors to have the same size in the mapped dimension, got "
                f"sizes {sizes} for the mapped dimension"
            )
        tensor_pos = [i for i, a in enumerate(flat_args) if isinstance(a, Tensor)]
        box: dict = {}

        def f(*arrays):
            leaves = list(flat_args)
            for i, a in zip(tensor_pos, arrays):
                leaves[i] = _wrap(a, flat_args[i])
                leaves[i].__dict__["_vmap_outer"] = flat_args[i]  # check_input_write
                if isinstance(a, jax.core.Tracer):
                    _BATCHED.add(type(a))
            with _running("vmap", randomness=randomness, size=sizes[0], arrays=arrays, axis=axis):
                out = func(*_unflatten(leaves, spec), **kwargs)
            flat_out, out_spec = _flatten(out)
            flat_od = _flat_out_dims(out, out_spec, out_dims, name)
            # the inputs the function wrote in place, and its outputs that are inputs
            written = [i for i, a in zip(tensor_pos, arrays) if leaves[i]._data is not a]
            inputs = {id(leaves[i]): i for i in tensor_pos}
            box["inputs"] = (written, [inputs.get(id(o)) for o in flat_out])
            mapped, unmapped = [], []
            for i in written:
                (unmapped if flat_in[i] is None else mapped).append(leaves[i]._data)
            for o, d in zip(flat_out, flat_od):
                if d is None:
                    unmapped.append(o._data if isinstance(o, Tensor) else None)
                else:
                    if not isinstance(o, Tensor):
                        raise ValueError(
                            f"vmap({name}, ...): `{name}` must only return Tensors, got type "
                            f"{type(o)}. Did you mean to set out_dims= to None for output?"
                        )
                    mapped.append(o._data)
            box["out"] = (flat_out, out_spec, flat_od)
            return mapped, unmapped

        in_axes = tuple(flat_in[i] for i in tensor_pos)
        axis = _axis_name()
        try:
            mapped, unmapped = jax.vmap(f, in_axes=in_axes, out_axes=(0, None), axis_name=axis)(
                *[flat_args[i]._data for i in tensor_pos]
            )
        except ValueError as exc:
            if "out_axes" not in str(exc) or "None" not in str(exc):
                raise
            raise ValueError(
                f"vmap({name}, ...): `{name}` can not return a BatchedTensor when out_dim is None"
            ) from None
        flat_out, out_spec, flat_od = box["out"]
        written, sources = box["inputs"]
        results, mi, ui = [], iter(mapped), iter(unmapped)
        news = []
        for i in written:
            d = flat_in[i]
            a = next(ui) if d is None else jnp.moveaxis(next(mi), 0, d)
            news.append(_wrap(a, flat_args[i]))
        returned = []
        for pos, (o, d, i) in enumerate(zip(flat_out, flat_od, sources)):
            if d is None:
                a = next(ui)
                results.append(o if a is None else _wrap(a, o))
            else:
                a = next(mi)
                results.append(_wrap(jnp.moveaxis(a, 0, d % a.ndim), o))
            if i is not None and flat_in[i] is not None and d is not None:
                returned.append((pos, i, flat_in[i], d % a.ndim))
        meta["inputs"] = (flat_args, written, returned)
        return _unflatten(results, out_spec), news

    return wrapped


def _check_out_dims(out_dims, func) -> None:
    if isinstance(out_dims, int):
        return
    for x in _flatten(out_dims)[0]:
        if not (isinstance(x, int) or x is None):
            raise ValueError(
                f"vmap({_name(func)}, ..., out_dims={out_dims}): `out_dims` must be an int, None "
                "or a python collection of ints representing where in the outputs the vmapped "
                "dimension should appear."
            )


def _flat_out_dims(out, out_spec, out_dims, name):
    """One out_dim per output leaf, as torch's ``_unwrap_batched`` broadcasts them."""
    flat = None
    if isinstance(out, Tensor):
        if isinstance(out_dims, int) or out_dims is None:
            flat = [out_dims]
        elif isinstance(out_dims, tuple) and len(out_dims) == 1:
            flat = list(out_dims)
    else:
        flat = _broadcast_to_and_flatten(out_dims, out_spec)
    if flat is None:
        od_spec = _spec_repr(_flatten(out_dims)[1])
        raise ValueError(
            f"vmap({name}, ..., out_dims={out_dims})(<inputs>): out_dims is not compatible with "
            f"the structure of `outputs`. out_dims has structure {od_spec} but outputs has "
            f"structure {_spec_repr(out_spec)}."
        )
    return flat


# --- functional_call ------------------------------------------------------------------------


def functional_call(
    module,
    parameter_and_buffer_dicts,
    args=None,
    kwargs=None,
    *,
    tie_weights: bool = True,
    strict: bool = False,
):
    """Call ``module`` with the tensors of ``parameter_and_buffer_dicts`` in place of its own
    attributes (dotted names reach submodules); the originals are restored afterwards."""
    if isinstance(parameter_and_buffer_dicts, dict):
        values = parameter_and_buffer_dicts
    elif isinstance(parameter_and_buffer_dicts, (list, tuple)):
        if not all(isinstance(d, dict) for d in parameter_and_buffer_dicts):
            raise ValueError(
                "Expected all elements of parameter_and_buffer_dicts to be dictionaries"
            )
        counts: dict = {}
        for d in parameter_and_buffer_dicts:
            for k in d:
                counts[k] = counts.get(k, 0) + 1
        repeated = [k for k, n in counts.items() if n > 1]
        if repeated:
            raise ValueError(
                f"{repeated} appeared in multiple dictionaries; behavior of functional call is "
                "ambiguous"
            )
        values = {k: v for d in parameter_and_buffer_dicts for k, v in d.items()}
    else:
        raise ValueError(
            "Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of dicts, but got "
            f"{type(parameter_and_buffer_dicts)}"
        )
    if tie_weights:
        values = _untie(module, values)
    if strict:
        _check_keys(module, values)
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    kwargs = {} if kwargs is None else kwargs
    saved = []
    try:
        for key, value in values.items():
            *path, attr = key.split(".")
            owner = module
            for p in path:
                owner = getattr(owner, p)
            missing = not hasattr(owner, attr)
            saved.append((owner, attr, None if missing else getattr(owner, attr), missing))
            _set_attr(owner, attr, value)
        return module(*args, **kwargs)
    finally:
        for owner, attr, old, missing in reversed(saved):
            if missing:
                delattr(owner, attr)
            else:
                _set_attr(owner, attr, old)


def _named_tensors(module) -> list:
    if not hasattr(module, "named_parameters"):  # a plain object: no tensors it declares
        return []
    named = list(module.named_parameters(remove_duplicate=False))
    return named + list(module.named_buffers(remove_duplicate=False))


def _untie(module, values: dict) -> dict:
    """``tie_weights``: a tensor given for one name of a tensor the module holds under several
    is given for all of them (PyTorch's ``_untie_named_tensors_map``, and its error for two
    different values)."""
    names_of: dict = {}
    for name, t in dict(_named_tensors(module)).items():
        names_of.setdefault(id(t), set()).add(name)
    tied = {name: names for names in names_of.values() if len(names) > 1 for name in names}
    given = {name for name in values if name in tied}
    for name in given:
        names = tied[name]
        if len(names & given) > 1 and len({id(values[n]) for n in names}) != 1:
            raise ValueError(
                f"functional_call got multiple values for keys {sorted(names)}, which are tied. "
                "Consider using tie_weights=False"
            )
    untied = dict(values)
    for name in given:
        for other in tied[name]:
            untied[other] = values[name]
    return untied


def _check_keys(module, values: dict) -> None:
    """``functional_call(strict=True)``: PyTorch's errors for names that are not the module's
    parameters and buffers, and for those left out."""
    valid = {name for name, _ in _named_tensors(module)}
    keys = set(values)
    errors = []
    unexpected, missing = sorted(keys - valid), sorted(valid - keys)
    if unexpected:
        errors.append(f"Unexpected key(s): {', '.join(map(repr, unexpected))}.")
    if missing:
        errors.append(f"Missing key(s): {', '.join(map(repr, missing))}.")
    if errors:
        raise RuntimeError(
            f"Error(s) in reparametrizing for {module._get_name()}:\n\t" + "\n\t".join(errors)
        )


def _set_attr(owner, attr, value) -> None:
    # nn.Module keeps parameters in dictionaries; plain objects in their __dict__
    for store in ("_parameters", "_buffers"):
        d = getattr(owner, store, None)
        if isinstance(d, dict) and attr in d:
            d[attr] = value
            return
    object.__setattr__(owner, attr, value)


def stack_module_state(models) -> tuple[dict, dict]:
    """``(params, buffers)``: each named parameter and buffer of ``models`` (modules of one
    class, all training or all in eval mode) stacked along a new first dim, for ``vmap`` over
    ``functional_call``; stacked parameters are new leaves that require grad."""
    if len(models) == 0:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or all(not m.training for m in models)):
        raise RuntimeError(
            "stack_module_state: Expected all models to have the same training/eval mode."
        )
    cls = type(models[0])
    if not all(type(m) is cls for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")
    all_params = [dict(model.named_parameters()) for model in models]
    params = {k: _stacked_leaf([p[k] for p in all_params], k) for k in all_params[0]}
    all_buffers = [dict(model.named_buffers()) for model in models]
    buffers = {k: _stacked_leaf([b[k] for b in all_buffers], k) for k in all_buffers[0]}
    return params, buffers


def _stacked_leaf(tensors: list, name: str) -> Tensor:
    from .ops.shape import stack

    requiring = [t.requires_grad for t in tensors]
    if any(requiring) and not all(requiring):
        raise RuntimeError(f"Expected {name} from each model to have the same .requires_grad")
    result = stack(tensors)
    if all(requiring):
        result = result.detach().requires_grad_()
    return result


def linearize(func, *primals):
    """``(func(*primals), jvp_fn)``: ``jvp_fn(*tangents)`` is the Jacobian of ``func`` at
    ``primals`` applied to ``tangents`` (forward mode), linearized once by ``jax.linearize`` and
    compiled. ``func(*primals)`` runs eagerly and records its graph as any call does; the
    tangents ``jvp_fn`` gives join the caller's graph as Note [Transforms and the outer graph]
    says."""
    output = func(*primals)
    _, output_spec = _flatten(output)
    flat_p, p_spec = _flatten(primals)
    for p in flat_p:
        if not isinstance(p, Tensor):
            raise AttributeError(f"'{type(p).__name__}' object has no attribute 'new_empty'")
    from .autograd import forward_ad

    forward_ad.refuse_nesting()  # PyTorch traces the jvp in a dual level of its own
    box: dict = {}

    def f(*arrays):
        level = _new_level()
        new = _unflatten([_wrap(a, t) for a, t in zip(arrays, flat_p)], p_spec)
        with _running("jvp", level, arrays=arrays):
            out = func(*new)
        flat_out, _ = _flatten(out)
        box["like"] = flat_out
        return [o._data if isinstance(o, Tensor) else o for o in flat_out]

    _, f_jvp = jax.linearize(f, *[t._data for t in flat_p])
    f_jvp = jax.jit(f_jvp)
    like = box["like"]
    metas = [(t.shape, t.device, t.dtype) for t in flat_p]
    sources = _requiring_grad(flat_p)

    def jvp_fn(*tangents):
        flat_t, t_spec = _flatten(tangents)
        if t_spec != p_spec:
            raise RuntimeError(
                f"Expected the tangents {_spec_repr(t_spec)} to have the same argspec as the "
                f"primals {_spec_repr(p_spec)}"
            )
        for idx, (t, (shape, device, dtype)) in enumerate(zip(flat_t, metas)):
            for what, got, want in (
                ("shape", t.shape, shape),
                ("device", t.device, device),
                ("dtype", t.dtype, dtype),
            ):
                if got != want:
                    raise RuntimeError(
                        f"tangent:{idx} with {what} {got} in flattened pytree doesn't match the "
                        f"{what} {want} of the corresponding primal."
                    )
        outs = f_jvp(*[t._data for t in flat_t])
        result = _unflatten([_wrap(a, o) for a, o in zip(outs, like)], output_spec)
        state = grad_mode._state
        outer = sources + _requiring_grad(flat_t)
        if outer and state.grad_enabled and not state.inference:
            _mark(result, outer, "linearize")
        return result

    return output, jvp_fn


def replace_all_batch_norm_modules_(root):
    """``torch.func.replace_all_batch_norm_modules_``: every batch norm module in ``root`` (in
    place) stops tracking running statistics (its running mean, variance and batch count set to
    None), so it normalizes by the batch's own statistics, as ``vmap`` over a batch needs."""
    from .nn.modules.normalization import _BatchNorm

    for module in (root, *root.modules()):
        if isinstance(module, _BatchNorm) and module.track_running_stats:
            module.running_mean = None
            module.running_var = None
            module.num_batches_tracked = None
            module.track_running_stats = False
    return root
