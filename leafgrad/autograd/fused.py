"""Fused backward: a graph whose structure was seen before runs its backward as compiled programs.

Note [Fused backward]: without hooks, a backward pass is a fixed dataflow. The engine's order
(the ready node with the highest sequence number first) is then the nodes in decreasing sequence
number, since every node's consumers were recorded after it; which gradients are ``None`` and
which nodes only pass gradients on (Note [Pass-through gradients]) are known without values. So
the engine's loop, run under ``jax.jit`` over a run of nodes with each node's cached VJP, computes
the same sums in the same order as the eager loop, and a graph whose structure repeats (a
training loop) runs its backward as a few XLA programs instead of one dispatch per node.

- *Chunks.* The nodes, in that order, are cut into chunks of at most ``CHUNK`` nodes (XLA's
  compile time, and the run time of one huge fusion, grow faster than linearly). A chunk's
  program takes the partial gradient buffers of its own nodes and of the later nodes and leaves
  it feeds, and returns the latter: sums keep the eager loop's order across chunks too. A
  chunk's schedule names nodes relative to the chunk, so the chunks of a long repeating chain
  share a few programs.
- *When.* A chunk runs compiled from the third time the same schedule (each node's cached
  backward, the edges, which primals are arrays) is seen; the first two sightings run the
  same loop eagerly, so graphs run once or twice never pay for compiling. A backward takes
  this path when every node is a plain recorded op (an ``OpNode`` without hooks,
  ``retain_grad`` or a released graph) or a leaf's AccumulateGrad without hooks, and every saved
  tensor is at its saved version; else the eager engine runs, and nothing was changed. Tracers
  (``leafgrad.compile``, ``leafgrad.func``) never take it: the enclosing trace fuses already.
- *Errors.* A node whose backward raises (a chunk that fails to compile runs eagerly) raises its
  own error after the leaves the eager loop would have accumulated before it are accumulated and
  the nodes it would have released are released.
- *Memory.* Without ``retain_graph``, a chunk's nodes release what they saved as the chunk ends.
  The eager loop frees an activation as soon as the last node that saved it has run; a chunk
  frees it only as it ends, while the gradients it computed are alive. So a chunk also ends
  after a node that lets go of large arrays: once the arrays whose last holder is among the
  chunk's nodes come to ``FREE_AT`` elements (parameters, whose arrays their leaves hold, not
  counted). On a training step that cuts the backward at each layer's activation, and the
  peak memory of a step stays near the eager loop's (and PyTorch's): the last chunk computes the
  first layer's weight gradient after the activations above it are gone. A cut costs one more
  program call; graphs of small arrays (a long chain of tiny ops) are cut by ``CHUNK`` only.
- *Rounding.* A compiled chunk computes the same operations in the same order, but XLA may fuse
  neighbouring ones into one kernel: results equal the eager loop's to a few ulp (as
  ``leafgrad.compile``'s do), not always bit for bit. Python numbers are program arguments, not
  constants, so XLA cannot fold ``x * c * c`` into ``x * c**2``.
- *Leaves.* AccumulateGrad runs after the last chunk, in the order the eager loop would have run
  it, with the summed gradient that reached it.
"""

from __future__ import annotations

import operator
import os
import sys

import jax

from .. import _zero
from . import grad_mode
from .graph import (
    _VERSION_KEEPING,
    COPIED,
    REAL_VIEW_GRADS,
    AccumulateGrad,
    OpNode,
    released_marker,
)
from .graph import add_grads as _add

_REAL_VIEWS = REAL_VIEW_GRADS.data  # its dict: empty unless such nodes exist

CHUNK = 192  # nodes per program: compiles in well under a second, runs at ~0.3 us per node
# a chunk ends once the arrays only its nodes hold come to this many elements (Note [Fused
# backward], *Memory*); arrays under _TRACKED elements are not counted
FREE_AT = 1 << 16
_TRACKED = 1 << 12
_ARRAY_IMPL = type(jax.numpy.zeros(()))
_MIN_CALLS = 4  # a backward with fewer VJP calls gains nothing
# sightings run eagerly before a chunk compiles: a graph run once or twice (a notebook cell run
# again) never pays for compiling, a training loop does once
_EAGER_SIGHTINGS = 2
_SIGHTINGS_LIMIT = 4096
_JIT = type(jax.jit(lambda x: x))
_OP_APPLY = OpNode._apply
_ARRAY = "array"  # a template's mark (_ARRAY, k): argument k of the chunk's program

# LEAFGRAD_FUSED: "0" turns fusing off; "always" compiles every chunk at its first sighting and
# fuses backwards of any size (the tests run the suite's programs through the compiled path so)
_MODE = os.environ.get("LEAFGRAD_FUSED", "1")
ENABLED = _MODE != "0"
_COMPILE_FIRST = _MODE == "always"
if _COMPILE_FIRST:
    _MIN_CALLS = 0

_failed: set = set()  # chunk schedules that did not compile: they run eagerly


class _ChunkFailed(Exception):
    """A node's backward raised while a chunk ran eagerly: how far the chunk got."""

    def __init__(self, index: int, sinks: list) -> None:
        super().__init__(index)
        self.index = index
        self.sinks = sinks


def _program(schedule, own, ext, sinks, primals):
    """One chunk of the engine's loop (Note [Fused backward]): eager, or traced by ``jax.jit``.

    ``own``: the chunk's nodes' input buffers so far; ``ext``/``sinks``: the partial buffers of
    the later nodes and of the leaves this chunk feeds; returns the latter two, updated."""
    entries = schedule.entries
    buffers = [None if b is None else list(b) for b in own]
    extb = [None if b is None else list(b) for b in ext]
    sinks = list(sinks)
    i = 0
    try:
        for i, (backward, route, ct_dtype, edges, template, *_) in enumerate(entries):
            grads = buffers[i]
            buffers[i] = None
            if grads is None or all(g is None for g in grads):
                continue
            if ct_dtype is not None:
                grads = [g if g is None else g.astype(ct_dtype) for g in grads]
            if route is not None:
                outputs = [None if k is None else grads[k] for k in route]
            else:
                p = tuple([primals[x[1]] if type(x) is tuple else x for x in template])
                outputs = backward(p, tuple(grads))
            for (kind, j, nr, n_out), g in zip(edges, outputs):
                if kind == 0:  # a node of this chunk
                    buf = buffers[j]
                    if buf is None:
                        buf = buffers[j] = [None] * n_out
                elif kind == 1:  # a later node
                    buf = extb[j]
                    if buf is None:
                        buf = extb[j] = [None] * n_out
                elif kind == 2:  # a leaf
                    sinks[j] = _add(sinks[j], g)
                    continue
                else:
                    continue
                buf[nr] = _add(buf[nr], g)
    except Exception as err:
        raise _ChunkFailed(i, sinks) from err
    return tuple(None if b is None else tuple(b) for b in extb), tuple(sinks)


_run = jax.jit(_program, static_argnums=0)


def _eligible(order: list):
    """The recorded ops and AccumulateGrads of a backward that Note [Fused backward] may run,
    or None."""
    ops = []
    accs = []
    calls = 0
    counters = set()
    for node in order:
        cls = type(node)
        if cls is AccumulateGrad:
            if node._pre_hooks or node._post_hooks or node._retained is not None:
                return None
            extra = node.variable.__dict__
            if extra.get("_hooks") or extra.get("_post_acc_hooks"):
                return None
            if not node.variable.is_leaf:  # the eager loop raises there
                return None
            grad = node.variable._grad
            if grad is not None and grad._is_zerotensor():
                return None  # the eager loop's accumulation raises (Note [Zero gradients])
            if grad is not None and grad._inference and not grad_mode._state.inference:
                # the eager loop's accumulation into it raises, with the nodes after it unrun
                # (Note [Gradients in inference mode] in engine.py)
                return None
            accs.append(node)
            continue
        if (
            cls._apply is not _OP_APPLY
            or node._tensor_pre_hooks is not None
            or node._retained is not None
            or node._pre_hooks is not None
            or node._post_hooks is not None
            or node._released
            or node._packed is not None  # Note [Saved tensor hooks] in saved.py
        ):
            return None
        if _REAL_VIEWS and node in REAL_VIEW_GRADS:  # Note [Real views of gradients]
            return None
        if cls._strided:  # Note [View gradients]: layouts the tokens do not know
            return None
        if cls._zeros is _zero.SOURCE:  # Note [Zero gradients] in _zero.py
            return None
        if node._route is None:
            if type(node._backward) is not _JIT:
                return None
            calls += 1
        checks = node._saved_checks
        if checks is not None:
            for check in checks:
                counter = getattr(check, "counter", None)
                if counter is None:
                    return None  # a check of another kind: the eager loop runs it
                if (
                    counter.value != check.version
                    or check.interior
                    and check.tensor._grad_fn is None
                ):
                    return None  # the eager loop raises PyTorch's error at this node
                counters.add(id(counter))
        ops.append(node)
    if calls < _MIN_CALLS:
        return None
    if counters:
        # a leaf's .grad saved by a node: the eager loop's in-place accumulation into it may
        # come before that node, which then raises
        for acc in accs:
            grad = acc.variable._grad
            if grad is not None and id(grad._version_counter) in counters:
                return None
    return ops, accs


# Note [Versions of fused sums]: the eager loop counts the in-place sums that reach a leaf's
# ``.grad`` (Note [In-place sums] in engine.py) from which objects hold each gradient. A chunk's
# program has no such objects, so ``_leaf_versions`` runs the chunk's loop once more on tokens
# that stand for the arrays: a route hands on the same token, an expanding node gives an
# expanded one, any other node new ones, and a sum is in place when the token is not expanded and
# only its slot holds it (root gradients are also held by the caller); a leaf whose final token
# is expanded or held twice gets a copy (``COPIED``). The results are a property of the chunks'
# schedules and of which slots the root gradients fill, so they are cached.
# The tokens run through all the chunks of a backward in one pass.


class _Token:
    __slots__ = ("version", "expanded", "view", "__weakref__")

    def __init__(self, expanded: bool = False) -> None:
        self.version = 0
        self.expanded = expanded
        self.view = False  # a view PyTorch never sums into in place (Note [View gradients])


def _fresh_view(token):
    """A routed node's new view of ``token`` (Note [Fresh views] in graph.py)."""
    if token is None:
        return None
    view = _Token(token.expanded)
    view.version = token.version
    view.view = True
    return view


def _token_sum(slots: list, k: int, token) -> None:
    """Add ``token`` into ``slots[k]`` as the eager loop adds arrays (``engine._sum``)."""
    old = slots[k]
    if old is None:
        slots[k] = token
    elif (
        not old.expanded
        and sys.getrefcount(old) <= 3  # the slot, ``old``, the argument
        and not old.view
    ):
        old.version += 1
    else:
        slots[k] = _Token()


def _leaf_versions(plan, pending, leaf_sums) -> dict:
    """Leaf index -> the version its summed gradient has at the end, where not 0 (Note [Versions
    of fused sums]). ``plan``: ``(start, schedule, ext, sinks)`` of each chunk; ``pending`` and
    ``leaf_sums``: the root gradients' buffers, before the first chunk."""
    pattern = (
        tuple(plan),
        tuple(sorted((j, tuple(g is not None for g in b)) for j, b in pending.items())),
        tuple(g is not None for g in leaf_sums),
    )
    found = _versions_cache.get(pattern)
    if found is not None:
        return found
    roots = []  # the caller holds its root gradients
    buffers = {}
    for j, b in pending.items():
        buffers[j] = [None if g is None else _Token() for g in b]
        roots.extend(buffers[j])
    sinks = [None if g is None else _Token() for g in leaf_sums]
    roots.extend(sinks)
    # each leaf's node runs as soon as its last edge is handed on (AccumulateGrad comes first in
    # the ready queue), before the next node
    ready_after = {}
    for c, (_, schedule, _, chunk_sinks) in enumerate(plan):
        for i, entry in enumerate(schedule.entries):
            for kind, j, _, _ in entry[3]:
                if kind == 2:
                    ready_after[chunk_sinks[j]] = (c, i)
    runs_after: dict = {}
    for k, at in ready_after.items():
        runs_after.setdefault(at, []).append(k)
    found = {}
    for c, (start, schedule, ext, chunk_sinks) in enumerate(plan):
        for i, entry in enumerate(schedule.entries):
            _, route, _, edges, _, expands, keeps, changed, views = entry
            grads = buffers.pop(start + i, None)
            if grads is None or all(g is None for g in grads):
                for k in runs_after.get((c, i), ()):
                    _token_accumulate(sinks, k, found)
                continue
            if route is not None:
                outputs = [None if k is None else grads[k] for k in route]
                if keeps:  # Note [Fresh views]: new views of the gradients passed on
                    outputs = [_fresh_view(t) for t in outputs]
            else:
                outputs = [_Token(expands) for _ in edges]
                g = grads[0]
                if keeps and g is not None and outputs:  # a view of its gradient
                    outputs[0].version, outputs[0].expanded = g.version, g.expanded
                g = None
            if views:  # Note [View gradients]
                for t, flag in zip(outputs, views):
                    if flag and t is not None:
                        t.view = True
                t = None  # what holds a token decides Note [In-place sums]
            if changed is not None:
                _token_versions(changed, grads, outputs)
            grads = None  # a node's inputs are gone once it ran
            for n, (kind, j, nr, n_out) in enumerate(edges):
                token = outputs[n]
                outputs[n] = None
                if token is None or kind == 3:
                    continue
                if kind == 2:
                    _token_sum(sinks, chunk_sinks[j], token)
                    token = None
                    continue
                target = start + j if kind == 0 else ext[j]
                buf = buffers.get(target)
                if buf is None:
                    buf = buffers[target] = [None] * n_out
                _token_sum(buf, nr, token)
                token = buf = None  # a buffer popped later must not stay alive through here
            for k in runs_after.get((c, i), ()):
                _token_accumulate(sinks, k, found)
    for k in range(len(sinks)):  # leaves given only root gradients
        _token_accumulate(sinks, k, found)
    del roots
    if len(_versions_cache) >= _SIGHTINGS_LIMIT:
        _versions_cache.clear()
    _versions_cache[pattern] = found
    return found


def _token_versions(changed, grads: list, outputs: list) -> None:
    """A node's tokens as ``engine._Values.out_versions`` gives its arrays versions (Note [Output
    versions] in graph.py). ``changed``: the node's ``(_out_version, _out_version_all)``."""
    versions, only_all = changed
    if only_all and any(g is None for g in grads):
        return
    for k, token in enumerate(outputs):
        if token is None or k >= len(versions) or not versions[k]:
            continue
        if any(token is g for g in grads) or any(token is t for t in outputs[:k]):
            token = outputs[k] = _Token()  # a copy of a gradient passed on unchanged
        token.version = versions[k]


def _token_accumulate(sinks: list, k: int, found: dict) -> None:
    """Leaf ``k``'s AccumulateGrad on tokens: it copies an expanded gradient, or one held
    elsewhere too (the slot, ``t`` and the argument are the only references of one it takes as
    it is), and lets go of it (of two leaves given one gradient the first copies it, the second
    takes it)."""
    t = sinks[k]
    if t is None:
        return
    if t.expanded or sys.getrefcount(t) > 3:
        found[k] = COPIED
    elif t.version:
        found[k] = t.version
    sinks[k] = None


_versions_cache: dict = {}


_NO_EDGE = (3, 0, 0, 0)
_SEQUENCE_NR = operator.attrgetter("_seq_nr")


def _changed(node):
    """A schedule entry's last field: Note [Output versions] in graph.py."""
    if node._out_version is None:
        return None
    return node._out_version, node._out_version_all


def _views(node):
    """A schedule entry's last field: which of the node's gradients are views PyTorch never sums
    into in place (Note [View gradients] in graph.py), one flag per edge, or None."""
    views = node._views
    if views is True or node._slices:
        return (True,) * len(node._next_functions)
    return views or None


class _Schedule:
    """A chunk's schedule, interned: ``jax.jit`` hashes and compares its static argument on
    every call, which for a tuple of hundreds of entries costs more than the program runs."""

    __slots__ = ("entries", "_hash", "seen")

    def __init__(self, key) -> None:
        self.entries = key
        self._hash = hash(key)
        self.seen = 0

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other) -> bool:
        return self is other


_interned: dict = {}  # schedule tuple -> its _Schedule (the first sighting made it)


def _chunk(ops, start, stop, where, arrivals):
    """The schedule of ``ops[start:stop]`` (node indices relative to the chunk), its array
    primals, and where its outside edges lead; None when the order is not topological.
    Appends to ``arrivals`` the leaves its edges reach, in the eager loop's order."""
    entries = []
    primals = []  # the chunk's array arguments, each once
    slots = {}  # id of an array -> its template mark, (_ARRAY, index in primals)
    ext = {}  # global index of a later node -> its slot
    sinks = {}  # leaf index -> its slot
    from ..ops.dispatch import _SCALAR_TYPES as scalars  # dispatch imports the engine
    from ..ops.dispatch import weak_scalar as weak

    for i in range(start, stop):
        node = ops[i]
        edges = []
        for nxt, nr in node._next_functions:
            if nxt is None:
                edges.append(_NO_EDGE)
                continue
            kind, j = where[nxt]
            if kind:
                arrivals.append((i, nxt))
                slot = sinks.get(j)
                if slot is None:
                    slot = sinks[j] = len(sinks)
                edges.append((2, slot, 0, 0))
            elif j <= i:
                return None  # a consumer recorded before its input: leave it to the engine
            elif j < stop:
                edges.append((0, j - start, nr, ops[j]._n_out))
            else:
                slot = ext.get(j)
                if slot is None:
                    slot = ext[j] = len(ext)
                edges.append((1, slot, nr, ops[j]._n_out))
        route = node._route
        if route is None:
            p = node._primals
            if node._operands:
                # saved tensors are read as they are now (OpNode._apply); nothing writes to them
                # during a backward without hooks
                p = [x if t is None else t._data for t, x in zip(node._operands, p)]
            # Python numbers are passed as cached weak arrays (Note [Scalar operands]), not
            # baked in as constants: XLA would fold a chain of products of constants into one
            # (x * c * c -> x * c**2), which rounds differently from the eager loop
            template = []
            for x in p:
                if x is not None and type(x) in scalars:
                    w = weak(x)
                    if w is None:
                        template.append(x)
                        continue
                    x = w
                elif x is None:
                    template.append(None)
                    continue
                # one argument per array (a cached scalar or an activation read by several
                # nodes is passed once: each argument of a jitted call costs about 1 us)
                slot = slots.get(id(x))
                if slot is None:
                    slot = slots[id(x)] = (_ARRAY, len(primals))
                    primals.append(x)
                template.append(slot)
            entries.append(
                (
                    node._backward,
                    None,
                    node._ct_dtype,
                    tuple(edges),
                    tuple(template),
                    node._expands,
                    type(node).__name__ in _VERSION_KEEPING,
                    _changed(node),
                    _views(node),
                )
            )
        else:
            # a routed entry's 7th field: Note [Fresh views]
            entries.append(
                (
                    None,
                    route,
                    node._ct_dtype,
                    tuple(edges),
                    None,
                    node._expands,
                    node._fresh,
                    _changed(node),
                    _views(node),
                )
            )
    return tuple(entries), primals, tuple(ext), tuple(sinks)


def _bounds(ops: list, accs: list) -> list:
    """``(start, stop)`` of each chunk of ``ops`` (Note [Fused backward], *Chunks* and *Memory*)."""
    leaves = {id(acc.variable._data) for acc in accs}
    last = {}  # id of a large saved array -> (index of the last node holding it, its size)
    array = _ARRAY_IMPL
    tracked = _TRACKED
    for i, node in enumerate(ops):
        p = node._primals
        if p is None:  # a routed node saves nothing
            continue
        operands = node._operands
        if operands:
            # saved tensors: a leaf's or an input's (no grad_fn) is held by its owner
            p = [
                x if t is None else (t._data if t._grad_fn is not None else None)
                for t, x in zip(operands, p)
            ]
        for x in p:
            if type(x) is array and x.size >= tracked and id(x) not in leaves:
                last[id(x)] = (i, x.size)
    freed = {}
    for i, n in last.values():
        freed[i] = freed.get(i, 0) + n
    bounds = []
    start = held = 0
    end = len(ops)
    for i in range(end):
        held += freed.get(i, 0)
        if i + 1 - start >= CHUNK or (
            held >= FREE_AT and (i + 1 == end or ops[i + 1]._route is None)
        ):
            # a routed node (a view's backward) stays with the node before it: its gradient,
            # passed out of a program, would be copied to its new layout
            bounds.append((start, i + 1))
            start, held = i + 1, 0
    if start < end:
        bounds.append((start, end))
    return bounds


def try_fused(root_edges, root_grads, deps: dict, order: list, retain_graph: bool) -> bool:
    """Run a backward as Note [Fused backward] says; False when it does not apply, and then
    nothing was changed."""
    if not ENABLED:
        return False
    for g in root_grads:
        if isinstance(g, jax.core.Tracer):
            return False
    found = _eligible(order)
    if found is None:
        return False
    ops, accs = found
    ops.sort(key=_SEQUENCE_NR, reverse=True)
    where = {node: (0, i) for i, node in enumerate(ops)}
    for k, acc in enumerate(accs):
        where[acc] = (1, k)

    chunks = []
    arrivals: list = []  # (node index, leaf's AccumulateGrad) for each edge into a leaf
    for start, stop in _bounds(ops, accs):
        made = _chunk(ops, start, stop, where, arrivals)
        if made is None:
            return False
        chunks.append((start, stop, made))
    # Nothing was changed up to here. From now on the backward is this one: a node whose
    # backward raises raises here, after the steps the eager loop takes before it.

    pending: dict = {}  # global op index -> its input buffer so far
    leaf_sums: list = [None] * len(accs)
    for (node, nr), grad in zip(root_edges, root_grads):
        if node is None:
            continue
        kind, j = where[node]
        if kind == 1:
            leaf_sums[j] = _add(leaf_sums[j], grad)
        else:
            buf = pending.get(j)
            if buf is None:
                buf = pending[j] = [None] * node._n_out
            buf[nr] = _add(buf[nr], grad)
    left = {acc: deps.get(acc, 0) for acc in accs}
    ready = list({n: None for n, _ in root_edges if n in left and left[n] == 0})
    settled = [0]

    def settle(upto: int) -> None:
        """AccumulateGrad of the leaves whose last gradient came from a node before ``upto``,
        in the eager loop's order (as soon as it arrived)."""
        k = settled[0]
        while k < len(arrivals) and arrivals[k][0] < upto:
            acc = arrivals[k][1]
            n = left[acc] - 1
            left[acc] = n
            if n == 0:
                ready.append(acc)
            k += 1
        settled[0] = k

    schedules = []
    for _, _, made in chunks:
        key = made[0]
        schedule = _interned.get(key)
        if schedule is None:
            if len(_interned) >= _SIGHTINGS_LIMIT:
                _interned.clear()
            schedule = _interned[key] = _Schedule(key)
        schedules.append(schedule)
    # Note [Versions of fused sums]
    plan = [(c[0], sch, c[2][2], c[2][3]) for c, sch in zip(chunks, schedules)]
    versions = _leaf_versions(plan, pending, leaf_sums)
    for n, (start, stop, made) in enumerate(chunks):
        chunks[n] = None  # its primals go with its nodes' saved values
        key, primals, ext, sinks = made
        own = tuple([_frozen(pending.pop(j, None)) for j in range(start, stop)])
        ext_in = tuple([_frozen(pending.get(j)) for j in ext])
        sinks_in = tuple([leaf_sums[k] for k in sinks])
        schedule = schedules[n]
        schedule.seen += 1
        compiled = (_COMPILE_FIRST or schedule.seen > _EAGER_SIGHTINGS) and schedule not in _failed
        try:
            if compiled:
                try:
                    ext_out, sinks_out = _run(schedule, own, ext_in, sinks_in, primals)
                except Exception:
                    _failed.add(schedule)
                    compiled = False
            if not compiled:
                ext_out, sinks_out = _program(schedule, own, ext_in, sinks_in, primals)
        except _ChunkFailed as failed:
            at = start + failed.index
            for k, g in zip(sinks, failed.sinks):
                leaf_sums[k] = g
            settle(at)
            _accumulate(ready, leaf_sums, where)
            if not retain_graph:
                _release(ops, start, at)
            raise failed.__cause__  # noqa: B904 - the node's own error, as the eager loop's
        del primals, own, made
        for j, buf in zip(ext, ext_out):
            if buf is not None:
                pending[j] = list(buf)
        for k, g in zip(sinks, sinks_out):
            leaf_sums[k] = g
        buf = g = ext_out = sinks_out = None  # the buffers live on in pending alone
        if not retain_graph:
            _release(ops, start, stop)  # what the chunk's nodes saved is freed as it ends
    settle(len(ops))
    _accumulate(ready, leaf_sums, where, versions)
    return True


def _accumulate(ready, leaf_sums, where, versions=None) -> None:
    """``versions``: leaf index -> the version of its summed gradient, where not 0."""
    for acc in ready:
        k = where[acc][1]
        acc._apply([leaf_sums[k]], versions.get(k, 0) if versions else 0)
    ready.clear()


def _release(ops, start, stop) -> None:
    for i in range(start, stop):
        node = ops[i]
        if node._has_saved:  # OpNode._release
            node._released = released_marker(node._primals, node._packed)
            node._primals = None
            node._operands = ()
            node._packed = None
            node._saved_checks = None


def _frozen(buf):
    return None if buf is None else tuple(buf)
