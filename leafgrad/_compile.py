"""``leafgrad.compile``: a whole step of stateful PyTorch-style code as one ``jax.jit`` program.

Note [Compile]: the user's function runs once under a JAX trace with the same Tensor, dispatch and
engine code as in eager mode (DESIGN.md: op and engine code never read array values), so its
forward, backward and optimizer update become one XLA program. What makes stateful code fit a
pure program is the bookkeeping around the trace:

- *Lifted tensors.* Tensors the function reads but did not create (parameters, buffers, optimizer
  state, ``.grad`` fields) are inputs of the program and what it leaves in them is an output,
  written back after each call. They are found by watching every read and write of a tensor's
  array and ``.grad`` while the function runs (the ``_data`` and ``_grad`` slots are wrapped in
  properties during a trace only). Memory shared by views is lifted once, as its storage root.
- *Discovery.* The first call runs eagerly and records what the function touched; the second one
  traces with those tensors lifted. A trace that still meets a tensor it did not lift, or that
  leaves a new tensor in Python state (an optimizer's state dict on its first step), is correct for
  that call (the tensor's current value is a constant of the program, and its new value is written
  back) but is not reused: the next call traces again with the set completed.
- *Replay.* A cached program is run only while its guards hold: the arguments' shapes, dtypes and
  flags, grad mode, each lifted tensor's identity, storage, shape, dtype, ``requires_grad`` and
  the ``.grad`` it read, the optimizers' hyperparameters, and modules' structure and training
  mode. After a run, version counters advance as they did in the trace, and a ``.grad`` the trace
  created is a new tensor, as in eager mode. Lifted memory the function rewrote is updated in
  place (Note [Donation]); what it only read is not copied out.
- *Randomness.* Random ops inside draw from JAX keys: each generator the function used gives the
  program a fresh key per call from its own stream (which therefore advances).
- *Data-dependent Python.* ``.item()``, ``bool(t)``, ``.tolist()``... have no value while tracing
  and raise an error that names the call.

Python side effects other than on tensors (counters, prints, appends) happen when the function
is traced, not at every call, as with ``jax.jit``; Python numbers the function reads from its
closure are constants of the program (pass them as arguments to make them part of the cache key).
"""

from __future__ import annotations

import contextlib
import functools
import gc
import sys
import threading
import weakref

import jax
import jax.numpy as jnp
import numpy as np
from jax.extend.core import jaxpr_as_fun

from . import _autocast
from . import _device as DEV
from . import _dtype as D
from . import _random as R
from . import _storage as S
from ._tensor import Tensor
from .autograd import grad_mode
from .autograd.graph import OpNode
from .ops.dispatch import _edge

__all__ = ["compile", "CompileError", "is_compiling"]

_Tracer = jax.core.Tracer
_DATA = Tensor.__dict__["_data"]  # the slots' own descriptors, used while they are wrapped
_GRAD = Tensor.__dict__["_grad"]
_LOCK = threading.RLock()  # one trace at a time: the slot wrappers are process-wide
_ACTIVE = None  # the _Trace in progress


class _Gate:
    """Replays of compiled programs run side by side, but not during a trace: a trace rebinds
    the arrays of the tensors it reads to tracers (which another thread would read) and saves
    their arrays to restore (which a replay could donate)."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._replays = 0
        self._traces = 0

    @contextlib.contextmanager
    def replay(self):
        with self._cond:
            while self._traces:
                self._cond.wait()
            self._replays += 1
        try:
            yield
        finally:
            with self._cond:
                self._replays -= 1
                self._cond.notify_all()

    @contextlib.contextmanager
    def trace(self):
        with self._cond:
            while self._replays:
                self._cond.wait()
            self._traces += 1
        try:
            yield
        finally:
            with self._cond:
                self._traces -= 1
                self._cond.notify_all()


_GATE = _Gate()


class CompileError(RuntimeError):
    """What a compiled function cannot do (leafgrad's own error; PyTorch has none)."""


_DATA_DEPENDENT = (
    "leafgrad.compile: {} needs the value of a tensor, which is not known while the function is "
    "being compiled (data-dependent Python). Move it out of the compiled function, or keep the "
    "value as a tensor (e.g. torch.where instead of an if)."
)


# --- tensor state as units -----------------------------------------------------------------------


def _unit_key(t) -> int:
    cell = t.__dict__.get("_storage")
    return id(cell) if cell is not None else id(t)


def _unit_get(t):
    """The array a tensor's memory holds: its storage root, or its own array."""
    cell = t.__dict__.get("_storage")
    return cell.data if cell is not None else _DATA.__get__(t, Tensor)


def _unit_set(t, value) -> None:
    """Rebind a tensor's memory to ``value`` (the root for a storage), without a version bump."""
    cell = t.__dict__.get("_storage")
    if cell is None:
        _DATA.__set__(t, value)
        return
    cell.data = value
    for m in cell.live():
        chain = m.__dict__.get("_chain", ())
        _DATA.__set__(m, value if not chain else S.gather(chain)(value))


class _Ext:
    """An external tensor's state when the trace first met it."""

    __slots__ = ("t", "unit", "counter", "version", "grad", "requires_grad", "grad_fn")

    def __init__(self, t) -> None:
        self.t = t
        self.unit = _unit_get(t)
        self.counter = t._version_counter
        self.version = t._version_counter.value
        self.grad = _GRAD.__get__(t, Tensor)
        self.requires_grad = t._requires_grad
        self.grad_fn = t._grad_fn


# --- the trace ----------------------------------------------------------------------------------


class _Trace:
    """Bookkeeping of one trace of the user's function (Note [Compile])."""

    def __init__(self, known: dict) -> None:
        self.thread = threading.get_ident()
        self.known = known  # id -> _Ext of the lifted and argument tensors (inputs)
        self.ext: dict = dict(known)  # id -> _Ext, inputs and those discovered
        self.discovered: dict = {}  # id -> _Ext of externals met that are not inputs
        self.created: dict = {}  # id -> weakref of tensors created while tracing
        self.touched: set = set()  # ids of externals whose array was read or written
        self.grad_read: dict = {}  # id -> .grad object read before the trace wrote it
        self.grad_written: set = set()
        self.generators: list = []  # generators used, in order; their keys are inputs
        self.keys: list = []
        self.draws = 0
        self.tracing = True  # False for the eager discovery call

    def _external(self, t):
        i = id(t)
        e = self.ext.get(i)
        if e is None and i not in self.created:
            e = self.ext[i] = self.discovered[i] = _Ext(t)
        return e

    def on_data(self, t, created: bool) -> None:
        if created:
            self.created[id(t)] = weakref.ref(t)
        elif self._external(t) is not None:
            self.touched.add(id(t))

    def on_grad_read(self, t) -> None:
        i = id(t)
        if i in self.created or i in self.grad_written or i in self.grad_read:
            return
        e = self._external(t)
        if e is not None:
            self.grad_read[i] = e.grad

    def on_grad_write(self, t) -> None:
        if id(t) not in self.created and self._external(t) is not None:
            self.grad_written.add(id(t))

    def key_for(self, gen):
        for g, k in zip(self.generators, self.keys):
            if g is gen:
                return k
        raise CompileError(
            "leafgrad.compile: a random generator the function did not use when it was first "
            "called is used now; call the compiled function again to retrace"
        )

    def next_key(self, gen):
        self.draws += 1
        return jax.random.fold_in(self.key_for(gen), self.draws)


def is_compiling() -> bool:
    """True while ``leafgrad.compile`` traces a function in this thread (``torch.compiler``'s
    ``is_compiling``): code that must not read values on the host takes its tensor path."""
    ctx = _active()
    return ctx is not None and ctx.tracing


def _active():
    ctx = _ACTIVE
    if ctx is not None and ctx.thread == threading.get_ident():
        return ctx
    return None


def _get_data(t):
    v = _DATA.__get__(t, Tensor)
    ctx = _active()
    if ctx is not None:
        ctx.on_data(t, False)
    return v


def _set_data(t, v) -> None:
    ctx = _active()
    if ctx is not None:
        try:
            _DATA.__get__(t, Tensor)
            created = False
        except AttributeError:
            created = True
        ctx.on_data(t, created)
    _DATA.__set__(t, v)


def _get_grad(t):
    ctx = _active()
    if ctx is not None:
        ctx.on_grad_read(t)
    return _GRAD.__get__(t, Tensor)


def _set_grad(t, v) -> None:
    ctx = _active()
    if ctx is not None:
        ctx.on_grad_write(t)
    _GRAD.__set__(t, v)


def _data_dependent(name, what):
    def method(self, *args, **kwargs):
        if isinstance(_DATA.__get__(self, Tensor), _Tracer):
            raise CompileError(_DATA_DEPENDENT.format(what))
        return _ORIGINAL_METHODS[name](self, *args, **kwargs)

    return method


_METHODS = {
    "item": "Tensor.item()",
    "tolist": "Tensor.tolist()",
    "__bool__": "bool(tensor)",
    "__float__": "float(tensor)",
    "__int__": "int(tensor)",
    "__index__": "using a tensor as an index (__index__)",
    "__complex__": "complex(tensor)",
    "numpy": "Tensor.numpy()",
    "__array__": "np.asarray(tensor)",
    "__repr__": "printing a tensor (repr)",
    "__str__": "printing a tensor (str)",
    "__format__": "formatting a tensor",
}
_ORIGINAL_METHODS: dict = {}


# --- randomness from JAX keys ------------------------------------------------------------------


def _traced_uniform(gen, shape, dtype, low=0.0, high=1.0):
    R_ORIG["uniform"](gen, (0,), dtype, low, high)  # PyTorch's argument checks, no draw
    gen = R._generator(gen)
    return jax.random.uniform(
        _active().next_key(gen), tuple(shape), jnp.dtype(dtype), float(low), float(high)
    )


def _traced_normal(gen, shape, dtype, mean=0.0, std=1.0):
    R_ORIG["normal"](gen, (0,), dtype, mean, std)
    gen = R._generator(gen)
    z = jax.random.normal(_active().next_key(gen), tuple(shape), jnp.dtype(dtype))
    return z * jnp.asarray(std, z.dtype) + jnp.asarray(mean, z.dtype)


def _traced_bernoulli(gen, shape, dtype, p):
    gen = R._generator(gen)
    p = float(p)
    if not 0 <= p <= 1:
        raise RuntimeError(R.BERNOULLI_P.format(p=R._fmt_double(p)))
    hits = jax.random.bernoulli(_active().next_key(gen), p, tuple(shape))
    return hits.astype(jnp.dtype(dtype))


def _traced_bernoulli_tensor(gen, probs, dtype=None):
    gen = R._generator(gen)
    probs = jnp.asarray(probs)
    dt = probs.dtype if dtype is None else jnp.dtype(dtype)
    u = jax.random.uniform(_active().next_key(gen), probs.shape, jnp.float64)
    return (u < probs.astype(jnp.float64)).astype(dt)


def _traced_randint(gen, low, high, shape, dtype):
    R_ORIG["randint"](gen, low, high, (0,), dtype)
    gen = R._generator(gen)
    return jax.random.randint(_active().next_key(gen), tuple(shape), low, high, jnp.int64).astype(
        jnp.dtype(dtype)
    )


def _traced_randperm(gen, n, dtype):
    gen = R._generator(gen)
    return jax.random.permutation(_active().next_key(gen), n).astype(jnp.dtype(dtype))


def _unsupported_random(name):
    def sample(*args, **kwargs):
        raise CompileError(
            f"leafgrad.compile: random sampling with {name} is not supported inside a compiled "
            "function yet; draw the numbers outside and pass them as an argument"
        )

    return sample


R_TRACED = {
    "uniform": _traced_uniform,
    "normal": _traced_normal,
    "bernoulli": _traced_bernoulli,
    "bernoulli_tensor": _traced_bernoulli_tensor,
    "randint": _traced_randint,
    "randperm": _traced_randperm,
    **{
        name: _unsupported_random(name)
        for name in ("random_", "exponential", "geometric", "log_normal", "cauchy")
    },
}
R_ORIG = {name: getattr(R, name) for name in R_TRACED}


class _RandomProbe:
    """Wraps the samplers during the eager discovery call to learn which generators are used."""

    def __init__(self) -> None:
        self.generators: list = []

    def wrap(self, name):
        orig = R_ORIG[name]

        def sample(*args, **kwargs):
            gen = R._generator(args[0] if args else kwargs.get("gen"))
            if not any(g is gen for g in self.generators):
                self.generators.append(gen)
            return orig(*args, **kwargs)

        return sample


# --- patching, process-wide during a trace ------------------------------------------------------


class _Patched:
    """Wrap the slots, the data-dependent methods and the samplers for the duration of a trace."""

    def __init__(self, ctx: _Trace | None, probe: _RandomProbe | None = None) -> None:
        self.ctx, self.probe = ctx, probe

    def __enter__(self):
        global _ACTIVE
        _ACTIVE = self.ctx
        Tensor._data = property(_get_data, _set_data)
        Tensor._grad = property(_get_grad, _set_grad)
        if self.ctx is not None:
            for name, what in _METHODS.items():
                _ORIGINAL_METHODS[name] = Tensor.__dict__[name]
                setattr(Tensor, name, _data_dependent(name, what))
            for name, fn in R_TRACED.items():
                setattr(R, name, fn)
        elif self.probe is not None:
            for name in R_TRACED:
                setattr(R, name, self.probe.wrap(name))
        return self

    def __exit__(self, *exc) -> None:
        global _ACTIVE
        Tensor._data = _DATA
        Tensor._grad = _GRAD
        for name, fn in _ORIGINAL_METHODS.items():
            setattr(Tensor, name, fn)
        _ORIGINAL_METHODS.clear()
        for name, fn in R_ORIG.items():
            setattr(R, name, fn)
        _ACTIVE = None


# --- guards ---------------------------------------------------------------------------------------

_optimizers: weakref.WeakSet = weakref.WeakSet()  # every Optimizer registers itself


def _is_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _optimizer_state() -> tuple:
    """The optimizers' Python hyperparameters and parameter lists (a compiled step bakes them
    in, except learning rates given as numbers, which are inputs: see ``_lifted_lrs``)."""
    out = []
    for opt in list(_optimizers):
        for g in opt.param_groups:
            items = tuple(
                (k, id(v) if isinstance(v, (list, dict, Tensor)) else v)
                if k != "lr" or not _is_number(v)
                else (k, "number")
                for k, v in g.items()
                if k != "params"
            )
            out.append((id(opt), items, tuple(map(id, g["params"]))))
    return tuple(out)


def _lifted_lrs() -> list:
    """(optimizer, group index) of every learning rate given as a Python number: an input of
    the program, so that a scheduler changing it between steps does not retrace."""
    return [
        (weakref.ref(opt), i)
        for opt in list(_optimizers)
        for i, g in enumerate(opt.param_groups)
        if _is_number(g.get("lr"))
    ]


def _lr_values(lrs) -> list:
    out = []
    for ref, i in lrs:
        opt = ref()
        out.append(np.float64(opt.param_groups[i]["lr"] if opt is not None else 0.0))
    return out


_EPOCH: list = []  # nn's structure epoch counter, imported on first use (nn imports this module)


def _module_epoch() -> int:
    if not _EPOCH:
        from .nn.modules import module

        _EPOCH.append(module._STRUCTURE_EPOCH)
    return _EPOCH[0][0]


def _arg_signature(leaves) -> tuple:
    sig = []
    units: dict = {}
    for x in leaves:
        if isinstance(x, Tensor):
            alias = units.setdefault(_unit_key(x), len(units))
            sig.append(
                (
                    tuple(x._data.shape),
                    x._dtype,
                    x._device,
                    x._requires_grad,
                    x._grad_fn is None,
                    alias,
                    tuple(_unit_get(x).shape),
                    S.chain_of(x),
                )
            )
        else:
            try:
                hash(x)
            except TypeError:
                raise CompileError(
                    "leafgrad.compile: arguments must be tensors or hashable Python values "
                    f"(got {type(x).__name__})"
                ) from None
            sig.append((type(x), x))
    return tuple(sig)


def _distinct(leaves) -> list:
    """The positions of the argument tensors that do not share memory with an earlier one
    (which positions these are is part of the signature)."""
    seen, out = set(), []
    for i, t in enumerate(leaves):
        if isinstance(t, Tensor):
            u = _unit_key(t)
            if u not in seen:
                seen.add(u)
                out.append(i)
    return out


def _key_from(gen):
    """A fresh JAX key from ``gen``'s stream (two 32-bit draws: the generator advances)."""
    with gen._lock:
        words = gen._random32(2)
    return np.asarray(words, np.uint32)


# --- the compiled function ---------------------------------------------------------------------


class CompiledFunction:
    """The callable ``leafgrad.compile(fn)`` returns (Note [Compile]).

    ``traces`` counts the traces made so far; ``retrace_reasons`` says why each retrace happened
    (``explain=True`` also prints it)."""

    def __init__(self, fn, *, explain: bool = False) -> None:
        functools.update_wrapper(self, fn, updated=())
        self._fn = fn
        self._cache: dict = {}  # signature -> _Entry
        self._candidates: dict = {}  # signature -> (weakrefs of tensors to lift, generators)
        self._lock = threading.RLock()
        self.traces = 0
        self.retrace_reasons: list[str] = []
        self._explain = explain

    def __getattr__(self, name):  # compile(module) still reads like the module
        if name.startswith("__") or name in ("_fn", "_orig_mod"):
            raise AttributeError(name)
        return getattr(self._fn, name)

    @property
    def _orig_mod(self):
        return self._fn

    def __get__(self, obj, objtype=None):  # a decorated method binds like a function
        if obj is None:
            return self
        return functools.partial(self.__call__, obj)

    def _note(self, reason: str) -> None:
        self.retrace_reasons.append(reason)
        if self._explain:
            print(f"leafgrad.compile: {getattr(self, '__name__', 'function')} retraces: {reason}")

    def __call__(self, *args, **kwargs):
        if _active() is not None:  # called by a function being compiled: part of its program
            return self._fn(*args, **kwargs)
        leaves, treedef = jax.tree.flatten((args, kwargs), is_leaf=lambda x: isinstance(x, Tensor))
        state = grad_mode._state
        sig = (
            treedef,
            _arg_signature(leaves),
            state.grad_enabled,
            state.inference,
            _autocast.signature(),  # Note [Autocast]: the casts are part of the program
        )
        with self._lock:
            entry = self._cache.get(sig)
            if entry is not None:
                with _GATE.replay():
                    reason = entry.check()
                    if reason is None:
                        return entry.run(leaves)
                del self._cache[sig]
                self._note(reason)
                self._candidates[sig] = entry.candidates()
            elif self._cache and sig not in self._candidates:
                self._note(
                    "the arguments' shapes, dtypes, flags or Python values, or grad mode, "
                    "differ from every earlier call (or autocast's state does)"
                )
            found = self._candidates.get(sig)
            with _LOCK:
                if found is None:
                    return self._discover(sig, args, kwargs)
                return self._trace(sig, leaves, treedef, *found)

    # --- the first call of a signature: eager, watching what the function touches ------------
    def _discover(self, sig, args, kwargs):
        global _ACTIVE
        ctx = _Trace({})
        ctx.tracing = False
        probe = _RandomProbe()
        with _Patched(None, probe):
            _ACTIVE = ctx
            result = self._fn(*args, **kwargs)
        returned = {id(x) for x in jax.tree.leaves(result, is_leaf=lambda x: isinstance(x, Tensor))}
        found = [e.t for e in ctx.ext.values()]
        found.extend(
            t
            for t in (r() for r in ctx.created.values())
            if t is not None and id(t) not in returned
        )
        self._candidates[sig] = ([weakref.ref(t) for t in found], probe.generators)
        return result

    # --- tracing and compiling -------------------------------------------------------------
    def _trace(self, sig, leaves, treedef, candidates, generators):
        self.traces += 1
        gc.collect()  # views in unreachable graphs would be lifted (and re-read every call)
        # Note [Collections while tracing]: what survived that collection is set aside (frozen)
        # until the program is built, so the collections that find the tensors a trace left
        # alive scan only what the trace made, not the whole heap (seconds in a large process).
        # A process that froze objects itself keeps them frozen: its collections are full ones.
        freeze = gc.get_freeze_count() == 0
        if freeze:
            gc.freeze()
        try:
            return self._trace_frozen(sig, leaves, treedef, candidates, generators)
        finally:
            if freeze:
                gc.unfreeze()

    def _trace_frozen(self, sig, leaves, treedef, candidates, generators):
        arg_pick = _distinct(leaves)
        args = [leaves[i] for i in arg_pick]
        seen = {_unit_key(t) for t in args}
        lifted = []
        for r in candidates:
            t = r()
            if t is not None and _unit_key(t) not in seen:
                seen.add(_unit_key(t))
                lifted.append(t)
        with _GATE.trace():  # from saving the inputs' arrays to restoring them
            inputs = args + lifted
            known = {}
            for t in inputs:
                known[id(t)] = _Ext(t)
                cell = t.__dict__.get("_storage")
                if cell is not None:  # every member of a lifted storage reads the traced root
                    for m in cell.live():
                        known.setdefault(id(m), _Ext(m))
            ctx = _Trace(known)
            ctx.generators = list(generators)
            plan: dict = {}
            fn = self._fn

            lrs = _lifted_lrs()
            groups = [(ref().param_groups[i], ref().param_groups[i]["lr"]) for ref, i in lrs]

            def program(arrays, keys, lr_values):
                ctx.keys = list(keys)
                for t, a in zip(inputs, arrays):
                    _unit_set(t, a)
                given = {_unit_key(t): (i, a) for i, (t, a) in enumerate(zip(inputs, arrays))}
                lr_tensors = []
                with _Patched(ctx):
                    for (g, _), v in zip(groups, lr_values):
                        g["lr"] = Tensor._make(v, D.float64, DEV.CPU)
                        lr_tensors.append(g["lr"])
                    a, k = jax.tree.unflatten(treedef, leaves)
                    try:
                        out = fn(*a, **k)
                    except jax.errors.ConcretizationTypeError as err:
                        raise CompileError(_DATA_DEPENDENT.format("a Python conversion")) from err
                    if any(g["lr"] is not t for (g, _), t in zip(groups, lr_tensors)):
                        raise CompileError(
                            "leafgrad.compile: the function changed an optimizer's learning rate; "
                            "step learning-rate schedulers outside the compiled function"
                        )
                    return _collect(ctx, out, plan, given)

            in_arrays = [_unit_get(t) for t in inputs]
            keys = [np.zeros(2, np.uint32) for _ in generators]
            try:
                traced = jax.jit(program).trace(in_arrays, keys, _lr_values(lrs))
            finally:
                _restore(ctx)
                for g, v in groups:
                    g["lr"] = v
        donate = _donated(plan, len(args))
        flat = [*in_arrays, *keys, *_lr_values(lrs)]
        # the traced program again, from its jaxpr (the function is not run twice), with the
        # donated inputs marked so that XLA writes their new values into their buffers
        program_of_jaxpr = jax.jit(jaxpr_as_fun(traced.jaxpr), donate_argnums=donate)
        entry = _Entry(program_of_jaxpr.lower(*flat).compile(), ctx, plan, inputs, len(args))
        entry.donate = donate
        entry.arg_pick = arg_pick
        entry.lrs = lrs
        index = {_unit_key(t): i for i, t in enumerate(args)}
        entry.fn, entry.treedef = fn, treedef
        entry.template = [
            (_ARG, index[_unit_key(x)], S.chain_of(x)) if isinstance(x, Tensor) else x
            for x in leaves
        ]
        if entry.reusable:
            self._cache[sig] = entry
            self._candidates.pop(sig, None)
        else:
            self._candidates[sig] = entry.candidates()
            self._note(entry.why_not)
        return entry.run(leaves)


def _collect(ctx: _Trace, out, plan, given: dict):
    """The program's outputs: the returned tensors, the memory of every external tensor the
    function wrote, created tensors that are now some external's ``.grad``, and the memory of
    created tensors that may have been left in Python state (Note [Compile]). ``given`` maps the
    inputs' units to their position and traced array."""
    out_leaves, out_tree = jax.tree.flatten(out, is_leaf=lambda x: isinstance(x, Tensor))
    arrays = []
    ret = []
    accounted = set()
    for x in out_leaves:
        if isinstance(x, Tensor):
            if id(x) in ctx.ext:
                ret.append(("ext", x))
            else:
                accounted.add(id(x))
                fn = x._grad_fn
                released = fn is not None and bool(getattr(fn, "_released", False))
                ret.append(
                    (
                        "new",
                        len(arrays),
                        x._dtype,
                        x._device,
                        x._requires_grad,
                        fn is not None,
                        released,
                    )
                )
                del fn
                arrays.append(_DATA.__get__(x, Tensor))
        elif isinstance(x, (_Tracer, jax.Array)):
            raise CompileError("leafgrad.compile: the function returned a JAX array")
        else:
            ret.append(("py", x))
    units = []
    donate = []  # (input position, output index) of inputs whose memory the function rewrote
    seen = set()
    for e in ctx.ext.values():
        u = _unit_key(e.t)
        if u in seen:
            continue
        seen.add(u)
        a = _unit_get(e.t)
        i, before = given.get(u, (None, None))
        if a is before:  # not written: the caller's array stays, no copy out of the program
            continue
        if before is not None and (a.shape, a.dtype) == (before.shape, before.dtype):
            donate.append((i, len(arrays)))
        units.append((e.t, len(arrays)))
        arrays.append(a)
    grads = []
    for i in ctx.grad_written:
        t = ctx.ext[i].t
        g = _GRAD.__get__(t, Tensor)
        if g is None or id(g) not in ctx.created:
            grads.append((t, "obj", g))
        else:
            accounted.add(id(g))
            grads.append((t, "new", len(arrays), g._dtype, g._device, g._requires_grad))
            arrays.append(_DATA.__get__(g, Tensor))
    versions = {}
    for e in ctx.ext.values():
        c = e.t._version_counter
        if id(c) not in versions:
            versions[id(c)] = (e.t, c.value - e.version)
    # created tensors alive now may stay alive in Python state: their memory is an output too
    gc.collect()
    escaped = {}
    for r in list(ctx.created.values()):
        t = r()
        if t is None or id(t) in accounted:
            continue
        u = _unit_key(t)
        if u not in seen:
            seen.add(u)
            escaped[u] = len(arrays)
            arrays.append(_unit_get(t))
    del t
    plan.update(
        ret=ret,
        out_tree=out_tree,
        units=units,
        grads=grads,
        versions=versions,
        escaped=escaped,
        donate=donate,
    )
    return arrays


# Note [Donation]: a step that rewrites a lifted tensor (a parameter, optimizer state, a .grad
# accumulated in place) donates its old array to the program, so XLA writes the new value into
# the same buffer instead of allocating another; a lifted tensor the function does not write is
# not an output at all. A donated array is deleted, so it is donated only when nothing can read
# it again: not when an output's CompiledFunctionBackward node keeps the call's inputs (its
# backward recomputes from them), and, at each call, only when the array object is referenced by
# nothing but the tensor's storage and its members (which the write-back rebinds): a user's
# ``jnp.asarray(p)`` or an eager graph that saved it makes that call donate a copy instead.
# Memory shared below Python (a numpy view of the buffer) is refused by XLA itself, which then
# copies. What any alias reads is therefore what it reads in eager mode.


def _donated(plan: dict, n_args: int) -> tuple:
    """The inputs a compiled step donates (Note [Donation]): lifted tensors whose memory the
    function rewrote, when no output keeps a history that would read the old values."""
    diff_out = [x for x in plan["ret"] if x[0] == "new" and x[5]]
    if diff_out and not any(x[6] for x in diff_out):  # their node keeps this call's inputs
        return ()
    return tuple(i for i, _ in plan["donate"] if i >= n_args)


def _sole_holder(t, arrays: list, i: int) -> bool:
    """Whether ``arrays[i]``, the memory of lifted tensor ``t``, is referenced by nothing but
    ``t``'s storage, its members (the write-back rebinds them all) and ``arrays`` (Note
    [Donation])."""
    if t is None:
        return False
    a = arrays[i]
    cell = t.__dict__.get("_storage")
    owners = 1  # the tensor's array, or the storage's root
    if cell is not None:
        for r in cell.members.values():
            m = r()
            if m is not None and _DATA.__get__(m, Tensor) is a:
                owners += 1
    # counted besides the owners: ``arrays``, ``a`` here and getrefcount's own argument
    return sys.getrefcount(a) == owners + 3


def _restore(ctx: _Trace) -> None:
    """Put every external tensor back as it was before the trace (it holds tracers now)."""
    for e in ctx.ext.values():
        _unit_set(e.t, e.unit)
        e.counter.value = e.version
        _GRAD.__set__(e.t, e.grad)


class _Ref:
    """How a replay finds a tensor: an argument by position, a lifted tensor weakly, a tensor
    met once (non-reusable program) strongly."""

    __slots__ = ("index", "ref", "obj")

    def __init__(self, t, positions: dict, weak: bool) -> None:
        self.index = positions.get(id(t))
        self.ref = weakref.ref(t) if weak and self.index is None else None
        self.obj = t if not weak and self.index is None else None

    def get(self, args):
        if self.index is not None:
            return args[self.index]
        if self.ref is not None:
            return self.ref()
        return self.obj


class _Entry:
    """A compiled program, what it assumed (guards) and how to replay its effects."""

    def __init__(self, compiled, ctx: _Trace, plan: dict, inputs: list, n_args: int) -> None:
        self.compiled = compiled
        self.n_args = n_args
        self.generators = list(ctx.generators)
        # created tensors still alive after the trace were left in Python state (graphs hold
        # no reference cycles, so anything else is gone once its garbage is collected)
        gc.collect()
        escaped = [
            t
            for t in (r() for r in ctx.created.values())
            if t is not None and _unit_key(t) in plan["escaped"]
        ]
        for t in escaped:
            if t._grad_fn is not None:
                raise CompileError(
                    "leafgrad.compile: a tensor with a recorded history (grad_fn="
                    f"{t._grad_fn.name()}) was left in Python state (a list, a dict or an "
                    "attribute) by the compiled function; return it instead"
                )
        why = []
        if ctx.discovered:
            why.append(f"met {len(ctx.discovered)} tensor(s) it had not lifted")
        if escaped:
            why.append(f"left {len(escaped)} new tensor(s) in Python state")
        for e in ctx.ext.values():
            t = e.t
            if t._requires_grad != e.requires_grad or t._grad_fn is not e.grad_fn:
                raise CompileError(
                    "leafgrad.compile: the function changed requires_grad or grad_fn of a tensor "
                    "it did not create (a parameter, buffer or argument); do that outside"
                )
        self.reusable = not why
        self.why_not = "its last trace " + " and ".join(why) if why else None
        weak = self.reusable
        positions = {id(t): i for i, t in enumerate(inputs[:n_args])}
        ref = functools.partial(_Ref, positions=positions, weak=weak)
        used = set(ctx.touched) | set(ctx.grad_read) | set(ctx.grad_written)
        self.lifted = [weakref.ref(t) for t in inputs[n_args:]]
        self.lifted_used = [any(id(m) in used for m in _members(t)) for t in inputs[n_args:]]
        self.lifted_meta = [_lift_meta(t) for t in inputs[n_args:]]
        self.placeholders = [
            None if u else jnp.zeros(m[1], m[2]) for u, m in zip(self.lifted_used, self.lifted_meta)
        ]
        self.units = [(ref(t), k) for t, k in plan["units"]]
        self.grads = [
            (ref(g[0]), "obj", g[2]) if g[1] == "obj" else (ref(g[0]), *g[1:])
            for g in plan["grads"]
        ]
        self.versions = [(ref(t), d) for t, d in plan["versions"].values() if d]
        self.ret = [
            ("ext", ref(x[1]))
            if x[0] == "ext"
            else x[:5] + (x[5] is not None,)
            if x[0] == "new"
            else x
            for x in plan["ret"]
        ]
        # outputs with a history get one CompiledFunctionBackward node (Note [Compiled backward])
        self.diff_out = [j for j, x in enumerate(plan["ret"]) if x[0] == "new" and x[5]]
        self.released = any(plan["ret"][j][6] for j in self.diff_out)
        self.diff_in = [
            i
            for i, t in enumerate(inputs)
            if t._requires_grad and any(id(m) in used for m in _members(t))
        ]
        self.n_args = n_args
        self.arg_meta = [(t._dtype, t._device, t._requires_grad) for t in inputs[:n_args]]
        self._backward = None
        self._lr_cache = None
        self.out_tree = plan["out_tree"]
        self.escaped_unit = [(t, plan["escaped"][_unit_key(t)]) for t in escaped]
        self.grad_guards = []
        for i, g in ctx.grad_read.items():
            t = ctx.ext[i].t
            if g is None:
                kind = None
            elif any(id(m) in ctx.touched for m in _members(g)):
                kind = weakref.ref(g)
            else:
                kind = True
            self.grad_guards.append((weakref.ref(t), kind))
        self.module_epoch = _module_epoch()
        self.optimizers = _optimizer_state()
        # what the next trace lifts if this one is not reused (weakly: the cache must not keep
        # a user's tensors alive)
        self._next = [weakref.ref(t) for t in escaped]
        self._next += [weakref.ref(e.t) for e in ctx.discovered.values()]

    def candidates(self):
        """What the next trace of this signature lifts."""
        found = [t for t in (r() for r in self._next) if t is not None]
        found += [t for t in (r() for r in self.lifted) if t is not None]
        return ([weakref.ref(t) for t in found], self.generators)

    def check(self) -> str | None:
        """None while the program may be reused; otherwise why not."""
        for r, used, meta in zip(self.lifted, self.lifted_used, self.lifted_meta):
            t = r()
            if t is None:
                if used:
                    return "a tensor it read was freed"
                continue
            a = _unit_get(t)
            if (t.__dict__.get("_storage"), a.shape, a.dtype, t._requires_grad) != meta:
                return "a tensor it reads changed its storage, shape, dtype or requires_grad"
        for r, kind in self.grad_guards:
            t = r()
            if t is None:
                continue
            g = _GRAD.__get__(t, Tensor)
            if kind is None:
                if g is not None:
                    return "a .grad it read was None and is set now"
            elif g is None:
                return "a .grad it read is None now"
            elif kind is not True and g is not kind():
                return "a .grad it read is another tensor now"
        if _module_epoch() != self.module_epoch:
            return "a module's parameters, buffers, submodules or training mode changed"
        if _optimizer_state() != self.optimizers:
            return "an optimizer's hyperparameters or parameter groups changed"
        return None

    def _lr_arrays(self) -> list:
        """The learning rates as device arrays, reused while they do not change (a host
        number would be transferred at every call)."""
        values = _lr_values(self.lrs)
        cached = self._lr_cache
        if cached is None or cached[0] != values:
            cached = self._lr_cache = (values, [jnp.asarray(v) for v in values])
        return cached[1]

    def run(self, leaves):
        args = [leaves[i] for i in self.arg_pick]
        arrays = [_unit_get(t) for t in args]
        lifted = [r() for r in self.lifted]
        arrays += [p if t is None else _unit_get(t) for t, p in zip(lifted, self.placeholders)]
        keys = [_key_from(g) for g in self.generators]
        n_args = self.n_args
        for i in self.donate:
            if not _sole_holder(lifted[i - n_args], arrays, i):
                arrays[i] = jnp.copy(arrays[i])
        outs = self.compiled(*arrays, *keys, *self._lr_arrays())
        for r, k in self.units:
            t = r.get(args)
            if t is not None:
                _unit_set(t, outs[k])
        for r, delta in self.versions:
            t = r.get(args)
            if t is not None:
                t._version_counter.value += delta
        for g in self.grads:
            t = g[0].get(args)
            if t is None:
                continue
            if g[1] == "obj":
                _GRAD.__set__(t, g[2])
            else:
                _GRAD.__set__(t, Tensor._make(outs[g[2]], g[3], g[4], requires_grad=g[5]))
        for t, k in self.escaped_unit:
            _unit_set(t, outs[k])
        self.escaped_unit = []  # written once: the next call traces again
        node = None
        if self.diff_out:
            node = self._node(args, arrays, keys, outs)
        ret = []
        for j, x in enumerate(self.ret):
            if x[0] == "ext":
                ret.append(x[1].get(args))
            elif x[0] == "new":
                if x[5] and node is not None:
                    k = self.diff_out.index(j)
                    t = Tensor._make(outs[x[1]], x[2], x[3], True, node, k)
                else:
                    t = Tensor._make(outs[x[1]], x[2], x[3], requires_grad=x[4] and not x[5])
                ret.append(t)
            else:
                ret.append(x[1])
        return jax.tree.unflatten(self.out_tree, ret)

    # --- differentiating through a compiled function ----------------------------------------
    def _node(self, args, arrays, keys, outs):
        """The CompiledFunctionBackward node of this call's outputs (Note [Compiled backward])."""
        inputs = list(args) + [r() for r in self.lifted]
        edges = tuple(_edge(inputs[i]) for i in self.diff_in)
        shapes = [(outs[self.ret[j][1]].shape, outs[self.ret[j][1]].dtype) for j in self.diff_out]
        node = _CompiledNode(edges, self._apply_backward, (tuple(arrays), tuple(keys), shapes))
        node._n_out = len(self.diff_out)
        node._device = self.ret[self.diff_out[0]][3]
        if self.released:  # the function ran backward on them already, as in eager mode
            node._release()
        return node

    def _apply_backward(self, primals, cts):
        arrays, keys, shapes = primals
        cts = [jnp.zeros(s, d) if c is None else c for c, (s, d) in zip(cts, shapes)]
        if self._backward is None:
            self._backward = self._compile_backward(arrays, keys, cts)
        return list(self._backward(tuple(arrays), tuple(keys), cts))

    def _compile_backward(self, arrays, keys, cts):
        """Trace the function again with the same inputs and random keys and run leafgrad's own
        engine on its graph (so detach, no_grad, hooks and custom Functions behave as in eager
        mode), then compile that as the backward program."""
        from .autograd import grad as autograd_grad

        lifted = [r() for r in self.lifted]
        if any(t is None for t, u in zip(lifted, self.lifted_used) if u):
            raise CompileError("leafgrad.compile: a tensor the function read was freed")
        # an argument is a leaf of the backward program: its array, read through its view chain
        # from the root array the program takes (arguments sharing memory as different views
        # cannot be told apart here)
        chains = {}
        for x in self.template:
            if isinstance(x, tuple) and x[0] is _ARG and chains.setdefault(x[1], x[2]) != x[2]:
                raise CompileError(
                    "leafgrad.compile: differentiating a compiled function whose arguments are "
                    "different views of one tensor is not supported"
                )
        proxies = []
        for j, (a, m) in enumerate(zip(arrays[: self.n_args], self.arg_meta)):
            chain = chains.get(j, ())
            proxies.append(Tensor._make(S.gather(chain)(a) if chain else a, *m))
        inputs = proxies + lifted
        known = {}
        for t in inputs:
            if t is None:
                continue
            known[id(t)] = _Ext(t)
            for m in _members(t):
                known.setdefault(id(m), _Ext(m))
        ctx = _Trace(known)
        ctx.generators = list(self.generators)
        fn, treedef, template = self.fn, self.treedef, self.template

        def program(arrays, keys, cts):
            ctx.keys = list(keys)
            for j, (t, a) in enumerate(zip(inputs, arrays)):
                if j < len(proxies):
                    chain = chains.get(j, ())
                    _DATA.__set__(t, S.gather(chain)(a) if chain else a)
                elif t is not None:
                    _unit_set(t, a)
            with _Patched(ctx), grad_mode.enable_grad():
                leaves = [
                    proxies[x[1]] if isinstance(x, tuple) and x[0] is _ARG else x for x in template
                ]
                a, k = jax.tree.unflatten(treedef, leaves)
                out = jax.tree.leaves(fn(*a, **k), is_leaf=lambda x: isinstance(x, Tensor))
                outputs = [out[j] for j in self.diff_out]
                wrt = [inputs[i] for i in self.diff_in]
                grads = autograd_grad(
                    outputs,
                    wrt,
                    [Tensor._make(c, o._dtype, o._device) for c, o in zip(cts, outputs)],
                    allow_unused=True,
                )
                return [
                    jnp.zeros(w._data.shape, w._data.dtype) if g is None else g._data
                    for g, w in zip(grads, wrt)
                ]

        with _LOCK, _GATE.trace():
            try:
                traced = jax.jit(program).trace(arrays, keys, cts)
            finally:
                _restore(ctx)
        return traced.lower().compile()


_ARG = object()  # marks an argument tensor's place in a call's leaves


class _CompiledNode(OpNode):
    """The node of a compiled function's outputs; its backward is a compiled program of its own
    (Note [Compiled backward])."""

    __slots__ = ()
    __module__ = "builtins"

    def __init__(self, edges, backward, primals) -> None:
        super().__init__(edges, backward, primals, True, 1)

    def _apply_graph(self, grads: list) -> list:
        raise NotImplementedError(
            "leafgrad.compile: create_graph=True through a compiled function is not supported; "
            "differentiate the function without leafgrad.compile"
        )


_CompiledNode.__name__ = _CompiledNode.__qualname__ = "CompiledFunctionBackward"


def _members(t) -> list:
    cell = t.__dict__.get("_storage")
    return [t] if cell is None else cell.live() + [t]


def _lift_meta(t):
    a = _unit_get(t)
    return (t.__dict__.get("_storage"), a.shape, a.dtype, t._requires_grad)


def compile(
    model=None,
    *,
    fullgraph: bool = False,
    dynamic=None,
    backend=None,
    mode=None,
    options=None,
    disable: bool = False,
    explain: bool = False,
):
    """Compile ``model`` (a function or a Module) into one XLA program per argument signature
    (Note [Compile]); usable as a decorator, with or without arguments. ``explain=True`` prints
    why it retraces. ``torch.compile``'s other arguments are accepted and have no effect."""
    if model is None:
        return lambda fn: compile(fn, disable=disable, explain=explain)
    if disable:
        return model
    return CompiledFunction(model, explain=explain)
