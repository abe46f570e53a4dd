"""Dispatch: the one place where arrays are computed and the graph is recorded.

``dispatch(op, *operands, **static)`` checks devices and shapes, applies PyTorch's dtype rules,
runs the op's cached jitted forward and, when grad mode is on and an operand requires grad,
records a node whose backward is a cached jitted VJP recomputed from the saved primals, or
PyTorch's formula from the saved result (DESIGN.md, "Dispatch"; Notes [Saved primals] and
[Saved results] in ``table.py``).
"""

from __future__ import annotations

import functools
import weakref

import jax
import jax.numpy as jnp
import numpy as np

from .. import _code_memory, _tensor, _zero
from .. import _device as DEV
from .. import _dtype as D
from .. import _errors as E
from .. import _storage as S
from ..autograd import forward_ad, grad_mode
from ..autograd import saved as saved_mod
from ..autograd.graph import (
    COMPUTED,
    GRAD_LAYOUTS,
    cotangent_routes,
    edge_mask,
    node_class,
    summed_versions,
    version_class,
    view_class,
    view_edges,
)
from . import formulas
from .iterator_layout import (
    EXACT_STRIDES_OPS,
    FIRST_OPERAND_OPS,
    ITERATOR_OPS,
    NUMBER_ARGUMENT_OPS,
    lay_out,
)
from .kernel_dtypes import check as refuse_kernel_dtypes
from .table import OPS

# Note [Synchronous CPU dispatch]: PyTorch runs CPU ops synchronously, and so does leafgrad. JAX's
# asynchronous CPU dispatch hands each computation to a worker thread: for eager ops that is a
# thread switch per op, which on a small, busy machine (2 cores) costs more than the op itself
# (measured by benchmarks/bench_eager.py: 64x64 elementwise ops 10 us -> 5 us per call, the MLP
# step's SGD updates ~8x faster). Values and compiled programs are unchanged.
jax.config.update("jax_cpu_enable_async_dispatch", False)

_FORWARD: dict = {}
_BACKWARD: dict = {}
# Each cached backward's (op, static arguments, needed operand indices, placeholders), for
# PyTorch's derivative formulas under ``create_graph`` (Note [Graph formulas] in formulas.py).
BACKWARD_INFO: dict = {}
SAVED_HOOKS = saved_mod.ACTIVE  # Note [Saved tensor hooks]
FORWARD_AD = forward_ad.ACTIVE  # Note [Forward AD]
# while a torch.func grad or jvp level runs: func.hide_captured (Note [Requires grad at a level])
HIDE: list = [None]
# Callables ``f(op, operands, static, needs)`` told of every recorded op (tests use this to
# collect samples for the numerical VJP check of every table entry).
OBSERVERS: list = []
_SCALARS = (bool, int, float, complex)


def _cast(x, dt):
    if isinstance(x, _SCALARS):
        return jnp.asarray(x, dt.np)
    # PyTorch's copy kernel (Note [Float to integer casts] in _dtype.py)
    return x if x.dtype == dt.np else D.cast_array(x, dt.np)


def _result(out, rt):
    return out if out.dtype == rt.np else D.cast_array(out, rt.np)


# Note [Half types in float]: PyTorch's CPU kernels compute float16 and bfloat16 in float (their
# "opmath" type) and round each result once: a Python number operand keeps its float value
# (``x * 0.1`` multiplies by float(0.1), not by 0.1 rounded to bfloat16; ``add``/``sub``/``rsub``
# read their number and ``alpha`` rounded to the tensor's type, as their vectorized loops do: a
# tensor shorter than one vector takes a scalar loop that keeps ``alpha`` in float, which leafgrad
# does not follow, since the vector's length depends on the machine), and a formula of several steps
# (``sigmoid``, ``gelu``, ``softmax``, ``lerp``, ``addcmul``, ``hypot``, ``cumsum``'s running sum,
# ``var``) rounds only its result. The ops listed run so: their half operands are cast to float32
# and their results rounded back, and JAX's VJP of that computes their gradients in float too.
# ``OPMATH_DOUBLE``: dtypes an op computes in double instead (special functions whose float32 XLA
# versions are further from the C library's that PyTorch calls: lgamma(1) is 4.8e-7 there, 0 in
# double), chosen by agreement with PyTorch 2.13 over 100,000 samples per dtype. Ops that only move
# or pick values need no cast; forwards that cast themselves (``nn._conv_pool``'s ``_opmath``:
# norms, pools, upsampling) and ops whose kernels round in between (``log_softmax``, ``logit``,
# ``pow`` with a number) are written out in their forwards.
OPMATH_OPS = frozenset(
    """add sub rsub rsub_tensor mul div nn.add_scalar nn.mul_scalar nn.div_scalar pow_tensor rpow
    lerp_scalar lerp_tensor addcmul addcdiv hypot logaddexp logaddexp2 atan2 special_erfcx
    special_i0e special_i1 special_i1e special_log_ndtr special_ndtri i0 sinc polygamma deg2rad
    rad2deg cumsum cumprod logcumsumexp var std var_mean std_mean linalg_vector_norm
    nn.vector_norm nn.norm_dim dist cdist addmm nn.addmm baddbmm addbmm addmv addr nn.glu
    nn.rrelu_eval nn.prelu nn.mse_loss nn.smooth_l1_loss nn.huber_loss nn.soft_margin_loss
    nn.bce_with_logits nn.binary_cross_entropy mean sum prod nansum logsumexp sqrt rsqrt exp2
    expm1 log2 log10 log1p sin cos tan asin acos atan sinh cosh tanh asinh acosh atanh sigmoid
    erf erfc erfinv lgamma digamma nn.leaky_relu nn.elu nn.celu nn.gelu nn.silu nn.mish
    nn.softplus nn.hardsigmoid nn.hardswish nn.softmax nn.log_sigmoid""".split()
)
OPMATH_DOUBLE = {
    "erf": (jnp.float32,),
    "erfinv": (jnp.float32,),
    "erfc": (jnp.float32, jnp.float16),
    "lgamma": (jnp.float32, jnp.float16, jnp.bfloat16),
}
_ROUNDED_NUMBER_OPS = frozenset(("add", "sub", "rsub", "rsub_tensor", "nn.add_scalar"))


def _opmath_cast(a, double):
    dt = getattr(a, "dtype", None)
    if dt in double:
        return a.astype(jnp.float64)
    return a.astype(jnp.float32) if dt in D.HALF_ARRAY_TYPES else a


def forward_function(op, cast, rt, static, views: bool = True):
    """The pure function an op computes, with PyTorch's casts applied (not jitted). ``views``:
    whether it makes the op's inner views of its operands (Note [Views inside ops] in table.py);
    without, those operands are the views."""
    fwd = op.forward
    inner = _inner_views(op) if views else ()
    in_float = op.name in OPMATH_OPS  # Note [Half types in float]
    double = OPMATH_DOUBLE.get(op.name, ())
    if in_float and op.name not in _ROUNDED_NUMBER_OPS:  # numbers too: kept in float
        cast = tuple(D.float32 if c in (D.float16, D.bfloat16) else c for c in cast)

    def f(*args):
        args = [a if c is None or a is None else _cast(a, c) for a, c in zip(args, cast)]
        for i, view in inner:
            args[i] = view(args[i])
        if in_float:
            args = [_opmath_cast(a, double) for a in args]
        out = fwd(*args, **static)
        if isinstance(rt, tuple):
            return tuple(_result(o, r) for o, r in zip(out, rt))
        return _result(out, rt)

    return f


def _inner_views(op) -> tuple:
    """``(operand index, view forward)`` for each of the op's inner views."""
    return tuple((i, OPS[name].forward) for i, name in op._inner_idx)


def _forward(key, op, cast, rt, static):
    fn = _FORWARD.get(key)
    if fn is None:
        fn = _FORWARD[key] = jax.jit(forward_function(op, cast, rt, static))
    return fn


# Note [Lifted numbers]: a static number is part of the compiled forward, so a loop that feeds an
# op ever new values (``p.add_(d, alpha=-t)`` with a step ``t`` found by a line search, a decaying
# learning rate) would compile a program per value. For the ops in ``_LIFTED``, a float among the
# listed static arguments of a call that records no node is passed to the forward as a trailing
# argument instead: the plan and the program serve every value. The program rounds it as it would
# a constant (a weakly typed number meets the tensor's dtype), so results are the same. A
# recorded call keeps its numbers static, since its VJP and saved attributes read them.
_LIFTED = {
    "add": frozenset({"alpha"}),
    "sub": frozenset({"alpha"}),
    "rsub": frozenset({"alpha"}),
    "rsub_tensor": frozenset({"alpha"}),
}


def _lifted_forward(op, cast, rt, static, lifted):
    """The jitted forward of ``op`` taking the ``lifted`` static numbers as trailing arguments."""
    key = (
        op,
        cast,
        rt,
        *((k, float) if k in lifted else (k, type(v), v) for k, v in static.items()),
        lifted,
    )
    fn = _FORWARD.get(key)
    if fn is None:
        n = len(lifted)

        def f(*args):
            values = dict(static)
            values.update(zip(lifted, args[-n:]))
            return forward_function(op, cast, rt, values)(*args[:-n])

        fn = _FORWARD[key] = jax.jit(f)
    return fn


def _zero_cotangent(x):
    if jnp.issubdtype(x.dtype, jnp.inexact):
        return jnp.zeros(x.shape, x.dtype)
    return np.zeros(x.shape, jax.dtypes.float0)


def _backward(key, op, cast, rt, static, needs, placeholders):
    """Cached jit: (primals, cotangents) -> gradients aligned with the op's edges."""
    fn = _BACKWARD.get(key)
    if fn is not None:
        return fn
    f = forward_function(op, cast, rt, static, views=False)
    inner = _inner_views(op)  # differentiated with respect to the views, which the edges take
    edge_pos = {i: k for k, i in enumerate(op._edge_idx)}
    n_edges = len(op._edge_idx)
    is_complex = any(
        d is not None and d.is_complex for d in (rt if isinstance(rt, tuple) else (rt,)) + cast
    )

    def bwd(primals, cts):
        full = [
            jnp.zeros(p[0], p[1]) if p is not None else v for p, v in zip(placeholders, primals)
        ]
        for i, view in inner:
            full[i] = view(full[i])

        # Outputs whose gradient is undefined (None: known when tracing) are left out of the
        # differentiated function, as PyTorch's formulas skip an undefined grad: a zero cotangent
        # would still meet the output's own infinities (var_mean's var of one element).
        keep = [k for k, c in enumerate(cts) if c is not None]
        if len(keep) in (0, len(cts)):
            keep = None

        def g(*diff):
            args = list(full)
            for i, d in zip(needs, diff):
                args[i] = d
            out = f(*args)
            return out if keep is None else tuple(out[k] for k in keep)

        out, vjp = jax.vjp(g, *[full[i] for i in needs])
        if keep is not None:
            ct = tuple(cts[k] for k in keep)
        elif isinstance(out, tuple):
            ct = tuple(_zero_cotangent(o) if c is None else c for o, c in zip(out, cts))
        else:
            ct = cts[0]
        # PyTorch's convention: grad = conj(JAX's VJP of the conjugate), wherever a complex
        # number is involved: a result, a cast, or an operand (a complex-to-real op whose dtype
        # rule casts nothing, such as the backward of a complex op run as an op)
        conj = is_complex or any(
            a is not None and jnp.iscomplexobj(a) for a in (*full, *jax.tree.leaves(ct))
        )
        if conj:
            ct = jax.tree.map(jnp.conj, ct)
        grads = vjp(ct)
        result = [None] * n_edges
        for i, gr in zip(needs, grads):
            result[edge_pos[i]] = jnp.conj(gr) if conj else gr
        return tuple(result)

    _code_memory.relieve()
    fn = _BACKWARD[key] = jax.jit(bwd)
    BACKWARD_INFO[fn] = (op, static, needs, placeholders)
    return fn


# The backwards whose one primal is one of the node's own outputs -> that output's index: the
# result (``_result_backward``, Note [Saved results]) or the indices (``_indices_backward``,
# Note [Saved indices]).
_FROM_RESULT: dict = {}


def _result_backward(key, op, static):
    """Cached jit: ((result,), (cotangent,)) -> (gradient of self,) by the op's ``result_vjp``
    (Note [Saved results] in table.py)."""
    fn = _BACKWARD.get(key)
    if fn is None:
        vjp = op.result_vjp

        def bwd(primals, cts):
            return (vjp(primals[0], cts[0], **static),)

        fn = _BACKWARD[key] = jax.jit(bwd)
        _FROM_RESULT[fn] = 0
        BACKWARD_INFO[fn] = (op, static, key[1], None)
    return fn


def _indices_backward(key, op, static, shape, dtype):
    """Cached jit: ((indices,), (cotangent of values, of indices)) -> (gradient of self,) by the
    op's ``indices_vjp`` (Note [Saved indices] in table.py); ``shape``, ``dtype``: the input's."""
    fn = _BACKWARD.get(key)
    if fn is None:
        vjp = op.indices_vjp

        def bwd(primals, cts):
            if cts[0] is None:
                return (jnp.zeros(shape, dtype),)
            return (vjp(primals[0], cts[0], shape, **static),)

        fn = _BACKWARD[key] = jax.jit(bwd)
        _FROM_RESULT[fn] = 1
        # the input is not kept: its shape and dtype stand in for it (``_saved_self_sym_sizes``,
        # the formula's metadata)
        BACKWARD_INFO[fn] = (op, static, key[1], ((shape, dtype),))
    return fn


def broadcast_shapes(a: tuple, b: tuple) -> tuple:
    """PyTorch's ``infer_size`` with its error message."""
    if a == b:
        return a
    na, nb = len(a), len(b)
    n = max(na, nb)
    out = [0] * n
    for i in range(n - 1, -1, -1):
        offset = n - 1 - i
        da = a[na - 1 - offset] if na - 1 - offset >= 0 else 1
        db = b[nb - 1 - offset] if nb - 1 - offset >= 0 else 1
        if da != db and da != 1 and db != 1:
            raise RuntimeError(E.BROADCAST.format(da, db, i))
        out[i] = db if da == 1 else da
    return tuple(out)


def physical_broadcast(tensors) -> None:
    """Inside vmap, where the tensors' shapes do not broadcast: raise the error PyTorch's batch
    rule meets, of the physical shapes (``func.physical_shapes``)."""
    from ..func import physical_shapes

    physical = physical_shapes(tensors)
    if physical is not None:
        functools.reduce(broadcast_shapes, physical)


def _edge(t):
    """The edge a new node takes to ``t``: its ``grad_fn``, its AccumulateGrad, or none."""
    if t._base is not None:
        S.view_grad_fn(t)  # a view whose storage was written gets its regenerated grad_fn
    fn = t._grad_fn
    if fn is not None:
        return (fn, t._output_nr)
    return _plain_edge(t)


def _plain_edge(t):
    if t._grad_fn is not None:
        return (t._grad_fn, t._output_nr)
    if t._requires_grad:
        if "_inherited_rg" in t.__dict__:
            # Note [Views that inherit requires_grad]: a leaf view that requires grad only
            # because its base does has no AccumulateGrad in PyTorch: its gradient is dropped
            return (None, 0)
        return (t._grad_accumulator(), 0)
    return (None, 0)


class SavedVersion:
    """A tensor a node saved for backward, with the version it had then (PyTorch's
    ``SavedVariable`` check): backward raises if the tensor was modified in place since.

    ``operand``: the op's operand index for a saved input (the tensor is held, as PyTorch holds
    saved inputs), or None for a saved output (only its metadata is held, to avoid a cycle).
    ``interior``: a saved input that had a history (not a view): backward raises once
    ``detach_()`` has taken it (PyTorch's unpack finds no grad_fn to name)."""

    __slots__ = (
        "tensor",
        "counter",
        "version",
        "operand",
        "output_nr",
        "node",
        "meta",
        "weak",
        "interior",
    )

    def __init__(
        self,
        tensor,
        counter,
        version,
        operand,
        output_nr=0,
        node=None,
        meta=None,
        weak=None,
        interior=False,
    ):
        self.tensor = tensor
        self.interior = interior
        # a saved output without a grad_fn (indices), held weakly: PyTorch holds it, so its
        # message names the grad_fn it has gained since (an in-place write's CopySlices)
        self.weak = weak
        self.counter = counter
        self.version = version
        self.operand = operand
        self.output_nr = output_nr
        # the node that saved its own output: held weakly, since the node holds this record
        self.node = None if node is None else weakref.ref(node)
        self.meta = meta

    def _describe(self) -> tuple:
        """``(dtype, device, shape, grad_fn name or None, output_nr)`` of the saved tensor."""
        t = self.tensor
        if t is None and self.weak is not None:
            t = self.weak()
        if t is not None:
            # PyTorch's unpack asks the view for its grad_fn, which raises for a multi-output
            # or no-grad view whose base was written since
            grad_fn = S.view_grad_fn(t) if t._base is not None else t._grad_fn
            name = None if grad_fn is None else grad_fn.name()
            return t._dtype, t._device, t._data.shape, name, t._output_nr
        dtype, device, shape = self.meta
        grad_fn = None if self.node is None else self.node()
        if grad_fn is not None:
            grad_fn = S.saved_output_node(grad_fn)  # Note [Saved outputs of in-place ops on views]
        return dtype, device, shape, None if grad_fn is None else grad_fn.name(), self.output_nr

    def __call__(self) -> None:
        if self.interior and self.tensor._grad_fn is None:
            raise RuntimeError(E.SAVED_DETACHED)
        self.check_version()

    def check_version(self, reader=None) -> None:
        """The version check alone: a ``_saved_*`` getter's (PyTorch's getter hands its node,
        ``reader``, to the unpack, which names it instead of raising for a detached input: an
        input that had a grad_fn when saved and has none now is "output <n> of" that node)."""
        current = self.counter.value
        if current == self.version:
            return
        dtype, device, shape, name, nr = self._describe()
        if name is None and reader is not None and self.interior:
            name, nr = reader.name(), 0  # detach_ set its output_nr to 0
        where = "" if name is None else f", which is output {nr} of {E.short_node_name(name)},"
        from ..autograd import anomaly_mode

        raise RuntimeError(
            E.SAVED_MODIFIED.format(
                E.tensor_type_name(dtype, device),
                "[" + ", ".join(str(s) for s in shape) + "]",
                where,
                current,
                self.version,
                anomaly_mode.hint(),
            )
        )


class _SavedView(SavedVersion):
    """A saved inner view (Note [Views inside ops] in table.py): the check of its base
    ``tensor`` (a view shares its base's counter), described as the view PyTorch saved."""

    __slots__ = ("view_node", "view_shape")

    def __init__(self, tensor, version, operand, view_node, view_shape) -> None:
        super().__init__(tensor, tensor._version_counter, version, operand)
        self.view_node = view_node
        self.view_shape = view_shape

    def _describe(self) -> tuple:
        t = self.tensor
        base = t._base if t._base is not None else t
        vmeta = t.__dict__.get("_vmeta")
        if self.view_node is None and not base._requires_grad:
            name = None
        elif vmeta is not None and vmeta.creation != S.DEFAULT:
            # the view inherits its base's creation mode, so it may not be regenerated
            # (S.view_grad_fn raises, and SavedVersion keeps the node it had)
            name = None if self.view_node is None else self.view_node.name()
        else:
            # the base was written since: PyTorch regenerates the view's grad_fn
            name = "AsStridedBackward0"
        return t._dtype, t._device, self.view_shape, name, 0


def _meta_plan(plan, device, target) -> None:
    """Note [Meta tensors]: the forward gives the shapes and dtypes of its results only."""
    if device is DEV.META and target is not None and target.type != "meta":
        raise NotImplementedError(DEV.META_NO_DATA)
    forward = plan.forward

    def shapes(*args):
        out = jax.eval_shape(forward, *args)
        return jax.tree.map(lambda s: DEV.meta_data(s.shape, s.dtype), out)

    plan.forward = shapes
    plan.target = None
    plan.moves_in = False
    plan.device = DEV.META


def _meta_backward(primals, cts):
    raise NotImplementedError("leafgrad: backward through meta tensors is not supported")


def _devices(tensors) -> DEV.device | None:
    """The device of an op's result; PyTorch lets 0-d CPU tensors join tensors elsewhere."""
    device = None
    for t in tensors:
        d = t._device
        if d is DEV.CPU and t._data.ndim == 0 and len(tensors) > 1:
            continue
        if device is None:
            device = d
        elif d != device:
            if "meta" in (d.type, device.type):
                raise RuntimeError(f"Tensor on device {d} is not on the expected device {device}!")
            raise RuntimeError(E.DEVICE_MIXED.format(device, d))
    if device is None and tensors:
        device = tensors[0]._device
    return device


# Note [Dispatch plans]: everything dispatch decides about a call (checks, dtype promotion, the
# result's device, which operands need grad, the cached jitted forward and VJP, what the node keeps)
# depends only on the op, its static arguments, the grad mode, the default dtype and each operand's
# signature: a tensor's dtype, shape, device, ``requires_grad`` and inference flag, a Python
# scalar's type and value (dtype rules may read it). So it is worked out once per signature into a
# ``_Plan`` and a repeated call does one dict lookup. A plan holds no array, so tracers
# (``leafgrad.compile``) use the same plans. A call whose checks raise leaves no plan, so it raises
# again next time.

_PLANS: dict = {}
_PLAN_LIMIT = 100_000  # a bound for programs that feed ever new scalar values
_SCALAR_TYPES = frozenset(_SCALARS)
_GRAD, _NO_GRAD, _INFERENCE = 0, 1, 2
_CPU = DEV.CPU
_DEFAULT_DTYPE = D._DEFAULT
_NO_EDGE = (None, 0)


class _Plan:
    """What dispatch does for one call signature (Note [Dispatch plans])."""

    __slots__ = (
        "forward",
        "rt",
        "multi",
        "device",
        "source",
        "target",
        "moves_in",
        "inference",
        "needs",
        "node_cls",
        "backward",
        "keep",
        "edges",
        "has_saved",
        "n_out",
        "diff_outputs",
        "route",
        "saved",
        "saves_result",
        "refused",
        "post",
        "scalars",
        "inner",
        "int_grad",
        "layout",
        "empty_layout",
        "layout_first",
        "layout_args",
        "pick_edges",
        "pick_primals",
        "records",
    )


_ZERO_SEEN = _zero.SEEN


def dispatch(op, *operands, **static):
    """Run ``op`` on tensors and Python scalars; record it for autograd when needed."""
    if HIDE[0] is not None:
        operands = HIDE[0](operands)
    if FORWARD_AD[0] and op.name in forward_ad.REFUSED_OPS:
        forward_ad.refuse_op(op.name, operands)  # Note [Forward AD not implemented]
    plan, operands, arrays = _lookup(op, operands, static)
    result = _run(plan, op, operands, static, arrays)
    if _ZERO_SEEN[0]:  # Note [Zero gradients] in _zero.py
        _zero.after_op(op.name, operands, result)
    if FORWARD_AD[0]:  # Note [Forward AD] in autograd/forward_ad.py
        forward_ad.propagate(plan, op, operands, arrays, result)
    return result


def _lookup(op, operands, static) -> tuple:
    """``(plan, operands, arrays)`` of a call (Note [Dispatch plans])."""
    Tensor = _tensor.Tensor
    state = grad_mode._state
    mode = _INFERENCE if state.inference else (_GRAD if state.grad_enabled else _NO_GRAD)
    key = [op, mode, _DEFAULT_DTYPE[0]]  # dtype rules read the default dtype
    arrays = []
    for o in operands:
        if isinstance(o, Tensor):
            data = o._data
            device = o._device
            key.append(
                (
                    o._dtype,
                    data.shape,
                    o._requires_grad,
                    o._inference,
                    None if device is _CPU else device,
                )
            )
            arrays.append(data)
        elif o is None or type(o) in _SCALAR_TYPES:
            if type(o) is int and not -_INT64 <= o < _INT64:
                _big_int(o)
            key.append((type(o), o))
            arrays.append(o)
        else:
            key = None  # NumPy scalars, and errors: the plan is made without the cache
            break
    if key is not None and static:
        if "_device" in static:
            key = None
        elif op.name in _LIFTED and (
            mode != _GRAD or not any(isinstance(o, Tensor) and o._requires_grad for o in operands)
        ):
            items = []
            for name, value in static.items():
                if type(value) is float and name in _LIFTED[op.name]:
                    items.append((name, float))  # Note [Lifted numbers]
                    arrays.append(value)
                else:
                    items.append((name, type(value), value))
            key.append(tuple(items))
        else:
            # with the values' types: 2 == 2.0 == True as keys, and the node keeps the value
            # given (a float exponent is saved as 2.0)
            key.append(tuple([(k, type(v), v) for k, v in static.items()]))
    if key is not None:
        key = tuple(key)
        plan = _PLANS.get(key)
        if plan is None:
            plan = _make_plan(op, operands, static, mode, key)
            if len(_PLANS) >= _PLAN_LIMIT:
                _PLANS.clear()
                _TYPED.clear()
            _PLANS[key] = plan
    else:
        operands = tuple(o.item() if isinstance(o, np.generic) else o for o in operands)
        plan = _make_plan(op, operands, static, mode, None)
        arrays = [o._data if isinstance(o, Tensor) else o for o in operands]
    return plan, operands, arrays


_INT64 = 1 << 63


def _big_int(value: int) -> None:
    """PyTorch's errors for a Python int no Scalar holds; one that only uint64 holds (PyTorch
    reads it so) is refused here: the jitted op takes numbers as int64."""
    if value >= 1 << 64:
        raise OverflowError("int too big to convert")
    if value < 0:
        raise OverflowError("can't convert negative int to unsigned")
    raise OverflowError(
        f"leafgrad: the number {value} fits only uint64, which leafgrad does not take as an "
        "operand; pass float(value) for a floating-point tensor"
    )


def _make_plan(op, operands, static, mode, key) -> _Plan:
    """Check a call and decide what dispatch does for its signature (Note [Dispatch plans]).
    Pops ``_device`` from ``static``. ``key``: the signature, or None (then nothing is shared).
    A call the kernel's checks refuse first collects its operands' edges, as PyTorch's autograd
    layer does before the kernel runs: a view made under no_grad whose base was written with
    grad mode on raises its own error first."""
    _code_memory.relieve()  # Note [Code mappings]
    try:
        return _checked_plan(op, operands, static, mode, key)
    except RuntimeError:
        if mode == _GRAD:
            Tensor = _tensor.Tensor
            for t in operands:
                if isinstance(t, Tensor) and t._base is not None and t._requires_grad:
                    S.view_grad_fn(t)
        raise


def _checked_plan(op, operands, static, mode, key) -> _Plan:
    Tensor = _tensor.Tensor
    meta = []
    tensors = []
    for o in operands:
        if isinstance(o, Tensor):
            tensors.append(o)
            meta.append((o._dtype, o._data.ndim))
        elif o is None or isinstance(o, _SCALARS):
            meta.append(o)
        else:
            raise TypeError(f"{op.name}(): expected Tensor or Number, got {type(o).__name__}")
    target = static.pop("_device", None)
    device = _devices(tensors)
    try:
        refuse_kernel_dtypes(op.name, meta)  # Note [Kernel dtype refusals]
        cast, rt = op.dtypes(meta, static)
    except NotImplementedError as err:
        # a kernel refusing the dtype ("gcd_cpu" not implemented for 'Float') is chosen after
        # the iterator has broadcast the operands: a shape mismatch is reported first
        if op.broadcast and E.kernel_refusal(err):
            functools.reduce(broadcast_shapes, [t._data.shape for t in tensors])
        raise
    if op.broadcast and len(tensors) > 1:
        shape = tensors[0]._data.shape
        try:
            for t in tensors[1:]:
                shape = broadcast_shapes(shape, t._data.shape)
        except RuntimeError:
            # PyTorch's autograd kernel saves the inputs before its kernel checks the shapes
            if _refuses(op, operands, _needs(op, operands, mode, device, rt)):
                raise RuntimeError(E.INFERENCE_SAVED) from None
            physical_broadcast(tensors)
            raise
    lifted = ()
    if key is not None and static and key[-1] and isinstance(key[-1], tuple):
        lifted = tuple(
            item[0]
            for item in key[-1]
            if len(item) == 2 and item[1] is float and type(static.get(item[0])) is float
        )
    if key is not None:
        # Only the dtype rule reads scalar values: a plan made for other values serves when the
        # rule gives the same dtypes (a loop over ever new scalars does not remake plans).
        parts = list(key)
        for i, o in enumerate(operands):
            if o is not None and not isinstance(o, Tensor):
                parts[3 + i] = type(o)
        typed = (tuple(parts), cast, rt)
        plan = _TYPED.get(typed)
        if plan is None:
            plan = _TYPED[typed] = _new_plan(
                op, operands, static, mode, device, target, cast, rt, lifted
            )
        return plan
    return _new_plan(op, operands, static, mode, device, target, cast, rt)


_TYPED: dict = {}


def _new_plan(op, operands, static, mode, device, target, cast, rt, lifted=()) -> _Plan:
    """The plan of a checked call whose dtypes are ``cast`` and ``rt``; ``lifted``: the static
    numbers its forward takes as trailing arguments (Note [Lifted numbers])."""
    Tensor = _tensor.Tensor
    plan = _Plan()
    key = (op, cast, rt, *[(k, type(v), v) for k, v in static.items()])  # 2 and 2.0 differ
    if lifted:
        plan.forward = _lifted_forward(op, cast, rt, static, lifted)
    else:
        plan.forward = _forward(key, op, cast, rt, static)
    plan.rt = rt
    plan.multi = isinstance(rt, tuple)
    plan.source = device
    plan.target = target
    plan.moves_in = device is not None and device.type != "cpu"
    plan.device = device if target is None else target
    if plan.device is not None and plan.device.type == "meta" or device is DEV.META:
        _meta_plan(plan, device, target)
    plan.inference = mode == _INFERENCE
    plan.scalars = tuple(
        i for i, o in enumerate(operands) if o is not None and not isinstance(o, Tensor)
    )
    plan.post = _mark_views if op.view else None
    # Note [Iterator layouts]: the tensor operands whose strides the result's depend on
    plan.layout_first = op.name in FIRST_OPERAND_OPS or (
        # a complex abs writes into ``empty_like(self)`` of the real dtype, not an iterator's
        # output (``unary_op_impl_with_complex_to_float``)
        op.name == "abs" and isinstance(operands[0], Tensor) and operands[0]._dtype.is_complex
    )
    plan.layout_args = _LAYOUT_ARGS.get(op.name, {"preserve": True} if plan.layout_first else {})
    if op.name == "nn.glu":
        plan.layout_args = {"halves": static["dim"]}
    if op.name in ITERATOR_OPS or plan.layout_first:
        plan.layout = tuple(i for i, o in enumerate(operands) if isinstance(o, Tensor))
        if plan.layout_first:
            plan.layout = plan.layout[:1]
    else:
        plan.layout = ()
    plan.empty_layout = _empty_off_fast_path(plan, operands)
    if mode != _INFERENCE and _inference_only(operands):
        first = next(o for o in operands if isinstance(o, Tensor))
        version = S.kernel_writes(
            op.name,
            static,
            first._data.shape,
            mode == _GRAD and any(isinstance(o, Tensor) and o._requires_grad for o in operands),
            first._dtype,
        )
        if version:
            plan.post = _set_version(version)
        if op.name == "linalg_matrix_exp" and first._data.shape[-1] > 1:
            plan.post = _kernel_view(version, first._data.ndim == 2)
    needs = _needs(op, operands, mode, device, rt)
    plan.needs = needs
    plan.refused = False
    plan.int_grad = None
    if not needs:
        plan.int_grad = _integer_history(op, operands, static, mode, device, rt)
        return plan
    if _refuses(op, operands, needs):
        plan.refused = True  # raised after the forward, whose own errors come first
        return plan
    keep = set()
    has_saved = False
    for i in needs:
        keep.update(op._saved_idx[i])
        has_saved = has_saved or bool(op.saves.get(op.operands[i]))
    from_output = (op.result_vjp is not None or op.indices_vjp is not None) and target is None
    if not from_output and _saves_output(op):
        # the node gives its saved output back computed again from the inputs (``_saved_result``
        # of ``copysign(a, b)`` where only ``b`` requires grad): it keeps all of them
        keep.update(range(len(operands)))
        has_saved = True
    if from_output and op.result_vjp is not None:
        # Note [Saved results]: the node keeps the result (``keep`` None), no operand
        backward = _result_backward((key, needs, "result"), op, static)
        plan.keep = None
    elif from_output:
        # Note [Saved indices]: the node keeps the indices output (``keep`` None), no operand
        data = operands[0]._data
        shape, dtype = tuple(data.shape), data.dtype
        backward = _indices_backward(
            (key, needs, "indices", shape, dtype), op, static, shape, dtype
        )
        plan.keep = None
    else:
        placeholders = tuple(
            (o._data.shape, o._data.dtype) if (i not in keep and isinstance(o, Tensor)) else None
            for i, o in enumerate(operands)
        )
        backward = _backward((key, needs, placeholders), op, cast, rt, static, needs, placeholders)
        if (
            target is not None
            and plan.device is not DEV.META
            and (DEV.jax_device(device) != DEV.jax_device(target))
        ):
            backward = _moving_back(backward, device)
        plan.keep = tuple(p is None for p in placeholders)
    plan.backward = _meta_backward if plan.device is DEV.META else backward
    plan.edges = tuple(i if isinstance(operands[i], Tensor) else None for i in op._edge_idx)
    plan.pick_edges = _edge_picker(plan.edges)
    plan.pick_primals = None if plan.keep is None else _primal_picker(plan.keep)
    plan.node_cls = node_class(op.node_name(static))
    plan.has_saved = has_saved
    plan.saved, plan.saves_result = _saved_facts(op, operands, needs)
    plan.records = has_saved and bool(plan.saved or plan.saves_result)
    plan.n_out = len(rt) if plan.multi else 1
    plan.diff_outputs = op.differentiable_outputs
    plan.route = _UNKNOWN
    plan.inner = _inner_plans(op, operands, needs) if op._inner_idx else ()
    return plan


# Note [Plan pickers]: recording an op picks its edges from the operands and its primals from the
# arrays by index; a comprehension over the plan's indices costs about a microsecond per op, so
# each plan keeps a function made for its pattern (the common ones written out).
def _edge_picker(edges):
    """``operands -> edges`` of a node, for the plan's edge indices (None: no edge)."""
    if edges == (0,):
        return lambda ops: (_edge(ops[0]),)
    if edges == (0, None):
        return lambda ops: (_edge(ops[0]), _NO_EDGE)
    if edges == (None, 1):
        return lambda ops: (_NO_EDGE, _edge(ops[1]))
    if edges == (0, 1):
        return lambda ops: (_edge(ops[0]), _edge(ops[1]))
    return lambda ops: tuple([_NO_EDGE if i is None else _edge(ops[i]) for i in edges])


def _primal_picker(keep):
    """``arrays -> primals`` of a node: the kept arrays, None in place of the others."""
    if all(keep):
        return tuple
    if keep == (False, True):
        return lambda a: (None, a[1])
    if keep == (True, False):
        return lambda a: (a[0], None)
    return lambda a: tuple([x if k else None for k, x in zip(keep, a)])


def _inner_plans(op, operands, needs) -> tuple:
    """For each inner view of a recorded op (Note [Views inside ops] in table.py): ``(operand
    index, edge index, view op, the view's plan or None where it gets no node, its shape)``."""
    found = []
    for i, name in op._inner_idx:
        view_op = OPS[name]
        base = operands[i]._data
        view_plan = _lookup(view_op, (operands[i],), {})[0] if i in needs else None
        if view_plan is not None and not view_plan.needs:
            view_plan = None  # not recorded (inference tensors): the edge is empty
        aval = jax.eval_shape(view_op.forward, jax.ShapeDtypeStruct(base.shape, base.dtype))
        found.append((i, op._edge_idx.index(i), view_op, view_plan, aval))
    return tuple(found)


_UNKNOWN = object()


def _all_inference(op, operands) -> bool:
    """Whether PyTorch skips its autograd kernel (Note [Inference tensors] in ``_storage.py``)."""
    Tensor = _tensor.Tensor
    tensors = [o for o in operands if isinstance(o, Tensor)]
    if op.name in S.COMPOSITE or (op.name in S.WRAPS_SCALARS and len(tensors) < len(operands)):
        return False
    return bool(tensors) and all(t._inference for t in tensors)


def saved_first(op, *operands) -> None:
    """PyTorch's autograd kernel saves the operands before its kernel checks them: an inference
    tensor it would save raises first (Note [Inference tensors] in ``_storage.py``). For a
    frontend that checks its arguments itself before dispatching ``op``."""
    state = grad_mode._state
    if state.inference or not state.grad_enabled or _all_inference(op, operands):
        return
    Tensor = _tensor.Tensor
    needs = tuple(
        i for i in op._diff_idx if isinstance(operands[i], Tensor) and operands[i]._requires_grad
    )
    if needs and _refuses(op, operands, needs):
        raise RuntimeError(E.INFERENCE_SAVED)


def _inference_only(operands) -> bool:
    """Whether every tensor operand is an inference tensor (the kernels' versions)."""
    tensors = [o for o in operands if isinstance(o, _tensor.Tensor)]
    return bool(tensors) and all(t._inference for t in tensors)


def _needs(op, operands, mode, device, rt) -> tuple:
    """The differentiable operands that require grad, where the call is recorded; a call on
    inference tensors only is not (Note [Inference tensors] in ``_storage.py``)."""
    Tensor = _tensor.Tensor
    if mode != _GRAD or device is None or _all_inference(op, operands):
        return ()
    if not (_differentiable(rt) or _FORCE[0]):
        return ()
    return tuple(
        i for i in op._diff_idx if isinstance(operands[i], Tensor) and operands[i]._requires_grad
    )


# Note [Integer results that require grad]: an integer tensor can require grad (a write of a
# value that requires grad into it is recorded, as in PyTorch). PyTorch then records every
# differentiable op on it as usual, and setting the history of an integer result raises
# "Autograd not support dtype": out of place, after the kernel ran; an in-place op keeps its
# history (leafgrad leaves such a write unrecorded). An op is differentiable here when the same
# call with the operands that require grad made floating gives a floating result: comparisons,
# ``argmax`` and casts to an integer dtype are not; ops without a derivative (``floor_divide``)
# have no differentiable operands in the table. ``IN_PLACE`` counts the in-place ops running.
IN_PLACE = [0]
_FORCE = [False]  # set while the plan of such an in-place op is made: it records


def _integer_plan(op, operands, static, mode) -> _Plan:
    """The plan of an in-place op's value that records an integer result (not cached)."""
    _FORCE[0] = True
    try:
        return _make_plan(op, operands, dict(static), mode, None)
    finally:
        _FORCE[0] = False


def _saves_original_self(op, operands, needs) -> bool:
    """Whether PyTorch's node of an in-place op saves ``self`` as it was (a clone): some formula
    it computes reads ``self`` (a guarded save only for the input it is computed for)."""
    first = operands[0] if operands else None
    if (
        not isinstance(first, _tensor.Tensor)
        or not first._requires_grad
        or _differentiable(first._dtype)
    ):
        return False
    return any(0 in op._pt_saved_idx.get(i, ()) for i in needs)


def _integer_history(op, operands, static, mode, device, rt):
    """The ScalarType name PyTorch's error names, where an op records an integer result
    (Note [Integer results that require grad]); else None."""
    Tensor = _tensor.Tensor
    if mode != _GRAD or device is None or _differentiable(rt) or _all_inference(op, operands):
        return None
    rg = [i for i in op._diff_idx if isinstance(operands[i], Tensor) and operands[i]._requires_grad]
    if not rg or op.node_name(static) == "NotImplemented":
        return None  # PyTorch's int floor_divide records nothing
    meta = [
        ((D.float32 if i in rg else o._dtype), o._data.ndim) if isinstance(o, Tensor) else o
        for i, o in enumerate(operands)
    ]
    try:
        _, twin = op.dtypes(meta, dict(static))
    except Exception:  # noqa: BLE001 - an op refused for floating operands: an integer op
        return None
    if not _differentiable(twin):
        return None
    return E.scalar_type_name(rt[0] if isinstance(rt, tuple) else rt)


def _refuses(op, operands, needs) -> bool:
    """Whether PyTorch's node would save an inference tensor (it raises); what leafgrad's node
    keeps to recompute the VJP (``_saved_idx``) may be more."""
    Tensor = _tensor.Tensor
    for i in needs:
        if any(
            isinstance(operands[j], Tensor) and operands[j]._inference for j in op._pt_saved_idx[i]
        ):
            return True
    return False


def _kernel_view(version, unbatched: bool):
    """``matrix_exp``'s kernel on inference tensors (Note [Inference tensors] in _storage.py)
    returns a view of the batch of matrices it computed (one for an unbatched input)."""

    def post(op, operands, result, static):
        data = result._data
        n = data.shape[-1]
        base = _tensor.Tensor._make(data.reshape(-1, n, n), result._dtype, result._device)
        base._version_counter.value = version
        return base.squeeze(0) if unbatched else base.view(data.shape)

    return post


def _set_version(version):
    """A plan's last step: the results' versions, as PyTorch's kernel left them (one version for
    all results, or one per result)."""

    def post(op, operands, result, static):
        results = result if isinstance(result, tuple) else (result,)
        versions = version if isinstance(version, tuple) else (version,) * len(results)
        for t, v in zip(results, versions):
            t._version_counter.value = v
        return result

    return post


def _pass_through(backward, primals, out, node_cls=None):
    """Which cotangent each gradient of ``backward`` is, when every one is a cotangent passed on
    unchanged (Note [Pass-through gradients] in graph.py); else None. ``out``: the op's output
    (or its ``jax.ShapeDtypeStruct``); ``node_cls``: the class of the op's node."""
    if not hasattr(backward, "trace") or isinstance(out, tuple):
        return None  # an output without gradient gets zeros from the VJP, not None
    if node_cls is not None and node_cls.__name__ == "ExpandBackward0" and not out.shape:
        # PyTorch's ``sum_to`` of a gradient to a 0-d shape is ``grad.sum()``: a new tensor,
        # which AccumulateGrad takes as ``.grad`` (Note [Fresh views] in graph.py)
        return None

    def abstract(a):
        if a is None or isinstance(a, (jax.ShapeDtypeStruct, *_SCALARS)):
            return a
        aval = jax.typeof(a)
        return jax.ShapeDtypeStruct(aval.shape, aval.dtype, weak_type=aval.weak_type)

    spec = tuple(abstract(p) for p in primals)
    # the jaxpr does not depend on scalar values: one trace per signature of the backward
    key = (backward, tuple(type(a) if isinstance(a, _SCALARS) else a for a in spec), abstract(out))
    if key in _ROUTES:
        return _ROUTES[key]
    route = _ROUTES[key] = _read_route(backward, spec, abstract(out))
    return route


_ROUTES: dict = {}


def _read_route(backward, spec, ct):
    route = cotangent_routes(backward, spec, (ct,))
    return None if route is None or COMPUTED in route else route


# Note [Scalar operands]: a Python number passed to a jitted function is made into an array on
# every call (about 6 us on CPU, more than the op); a weakly typed array of the same value is the
# same abstract value to JAX (same dtype rules, same compiled code) and costs next to nothing to
# pass. So dispatch keeps one per value seen. Nodes keep the Python numbers (their backward and
# create_graph read them as such). Zeros are passed as they are: -0.0 == 0.0 as dict keys.
_WEAK: dict = {}
_WEAK_LIMIT = 10_000


def weak_scalar(v):
    """The cached weakly typed array of Python number ``v`` (Note [Scalar operands]), or None
    where ``v`` must be passed as it is."""
    key = (type(v), v)
    w = _WEAK.get(key)
    if w is None:
        if not v:
            return None
        try:
            w = jnp.asarray(v)
        except (OverflowError, TypeError):
            return None  # the op raises for it as for the number
        if isinstance(w, jax.core.Tracer):
            return None  # made inside a trace (leafgrad.compile): it must not outlive it
        if len(_WEAK) >= _WEAK_LIMIT:
            _WEAK.clear()
        _WEAK[key] = w
    return w


def _weak_scalars(arrays, scalars):
    args = list(arrays)
    for i in scalars:
        w = weak_scalar(args[i])
        if w is not None:
            args[i] = w
    return args


def _run(plan: _Plan, op, operands, static, arrays):
    """Compute an op by its plan; record its node when it is differentiated."""
    if IN_PLACE[0]:
        if plan.int_grad is not None:
            state = grad_mode._state
            mode = _INFERENCE if state.inference else (_GRAD if state.grad_enabled else _NO_GRAD)
            plan = _integer_plan(op, operands, static, mode)
        if plan.needs and _saves_original_self(op, operands, plan.needs):
            # PyTorch's node saves a clone of the integer ``self`` before the kernel runs: the
            # clone's history raises (Note [Integer results that require grad])
            raise RuntimeError(E.AUTOGRAD_DTYPE.format(E.scalar_type_name(operands[0]._dtype)))
    if plan.moves_in:
        arrays = _to_device(arrays, operands, plan.source)
    forward = forward_ad.formulas_forward(plan) if forward_ad.FUNC_JVP.count else plan.forward
    try:
        if plan.scalars:
            out = forward(*_weak_scalars(arrays, plan.scalars))
        else:
            out = forward(*arrays)
    except ValueError as err:
        # a tensor sharded over a mesh (leafgrad.distributed) met one on a single device
        if str(err).startswith("Received incompatible devices for jitted computation"):
            raise RuntimeError(E.MIXED_DTENSOR.format(op.name)) from None
        raise
    if plan.target is not None:
        out = _move(out, plan.source, plan.target)
    device = plan.device
    needs = plan.needs
    make = _tensor.Tensor._make
    if not needs:
        if plan.int_grad is not None and not IN_PLACE[0]:
            raise RuntimeError(E.AUTOGRAD_DTYPE.format(plan.int_grad))
        if forward_ad.FUNC_JVP.stop and not grad_mode._state.grad_enabled and not op.view:
            # a no_grad block inside a torch.func grad transform: its results are constants
            # (not yet its views, which keep their base's storage)
            out = jax.tree.map(jax.lax.stop_gradient, out)
        inference = plan.inference
        if plan.multi:
            result = tuple(make(o, r, device, inference=inference) for o, r in zip(out, plan.rt))
        else:
            result = make(out, plan.rt, device, inference=inference)
        for i in plan.layout:  # Note [Iterator layouts]: only strided operands matter
            if "_strides" in operands[i].__dict__:
                _lay_out(plan, result, operands)
                break
        else:
            if plan.empty_layout:  # Note [Iterator layouts]: an empty result off the fast path
                _lay_out(plan, result, operands)
        post = plan.post  # marks views (Note [Inference tensors]: or sets the version)
        return result if post is None else post(op, operands, result, static)

    if OBSERVERS:
        for observer in OBSERVERS:
            observer(op, operands, static, needs)
    if plan.refused:
        # PyTorch collects the edges (a view's grad_fn is made current, or raises) before it
        # saves the inputs (an inference tensor raises then)
        for o in operands:
            if isinstance(o, _tensor.Tensor) and o._requires_grad:
                _edge(o)
        raise RuntimeError(E.INFERENCE_SAVED)
    edges = plan.pick_edges(operands)  # Note [Plan pickers]
    pick = plan.pick_primals
    if pick is None:  # Note [Saved results], [Saved indices]: an output
        primals = (out[1],) if plan.multi else (out,)
    else:
        primals = pick(arrays)
    views = None
    if plan.inner:
        edges, views = _inner_edges(plan, operands, edges)
    node = plan.node_cls(edges, plan.backward, primals, plan.has_saved, plan.n_out)
    route = plan.route
    if route is _UNKNOWN:
        route = plan.route = _pass_through(plan.backward, primals, out, plan.node_cls)
        plan.node_cls = _view_class(plan.node_cls, operands, op._edge_idx, out)
        node.__class__ = plan.node_cls
    node._route = route
    node._device = device
    node._edge_idx = op._edge_idx
    if plan.multi:
        diff = plan.diff_outputs
        inference = plan.inference
        result = tuple(
            make(o, r, device, True, node, k)
            if diff is None or k in diff
            else make(o, r, device, inference=inference)
            for k, (o, r) in enumerate(zip(out, plan.rt))
        )
    else:
        result = make(out, plan.rt, device, True, node)
    for i in plan.layout:  # Note [Iterator layouts]: only strided operands matter
        if "_strides" in operands[i].__dict__:
            _lay_out(plan, result, operands)
            if plan.records and len(plan.layout) == 1 and not plan.multi:
                strides = result.__dict__.get("_strides")
                if strides is not None:  # Note [Gradient layouts] in autograd/graph.py
                    GRAD_LAYOUTS[node] = strides
            break
    else:
        if plan.empty_layout:  # Note [Iterator layouts]: an empty result off the fast path
            _lay_out(plan, result, operands)
    if plan.records:
        _record_saved(plan.saved, plan.saves_result, operands, node, result, views)
    if op.view:
        return _mark_views(op, operands, result, static)
    post = plan.post  # a recorded op on inference tensors (S.COMPOSITE) sets its version
    return result if post is None else post(op, operands, result, static)


_LAYOUT_ARGS = {
    "nn.prelu": {"only_first": True},
    "where": {"cast_from": 1},
    # ``rsub(self, other)`` is PyTorch's ``sub(other, self)``: its iterator takes other first
    "rsub": {"swapped": True},
    "rsub_tensor": {"swapped": True},
    **{name: {"numbers": False} for name in NUMBER_ARGUMENT_OPS},
    **{name: {"preserve": True, "exact": True} for name in EXACT_STRIDES_OPS},
}


def _empty_off_fast_path(plan, operands) -> bool:
    """Whether TensorIterator lays out an empty result of contiguous operands off its fast
    path: a wrapped number or tensors of several shapes among them (Note [Iterator layouts]).
    An elementwise result is empty where an operand is."""
    if not plan.layout or plan.multi:
        return False
    shapes = {operands[i]._data.shape for i in plan.layout}
    if not any(0 in shape for shape in shapes):
        return False
    return bool(plan.scalars) or len(shapes) > 1


def _lay_out(plan, result, operands) -> None:
    lay_out(result, operands[:1] if plan.layout_first else operands, **plan.layout_args)


def _inner_edges(plan, operands, edges) -> tuple:
    """The edges of a node whose op makes inner views, each through a new node of its view op
    (Note [Views inside ops] in table.py), and ``{operand index: (view node, view shape)}``."""
    edges = list(edges)
    views = {}
    for i, k, view_op, view_plan, aval in plan.inner:
        node = None
        if view_plan is not None:
            base = operands[i]
            if OBSERVERS:
                for observer in OBSERVERS:
                    observer(view_op, (base,), {}, view_plan.needs)
            arrays = (base._data,)
            primals = tuple([a if keep else None for keep, a in zip(view_plan.keep, arrays)])
            node = view_plan.node_cls(
                (_edge(base),), view_plan.backward, primals, view_plan.has_saved, 1
            )
            route = view_plan.route
            if route is _UNKNOWN:
                route = view_plan.route = _pass_through(
                    view_plan.backward, primals, aval, view_plan.node_cls
                )
                view_plan.node_cls = _view_class(view_plan.node_cls, (base,), (0,), aval)
                node.__class__ = view_plan.node_cls
            node._route = route
            node._device = view_plan.device
            node._edge_idx = view_op._edge_idx
            if view_plan.has_saved:
                _record_saved(view_plan.saved, False, (base,), node, None)
            edges[k] = (node, 0)
        views[i] = (node, aval.shape)
    return tuple(edges), views


def _view_class(node_cls, operands, edge_idx, out) -> type:
    """The node class of a signature whose node PyTorch gives views of gradients on some edges
    (Note [View gradients] in graph.py): ``node_cls``, or its variant that says which; read once
    per signature."""
    if node_cls._views is True or isinstance(out, tuple):
        return node_cls
    Tensor = _tensor.Tensor
    meta = [(o._data.shape, o._data.dtype) if isinstance(o, Tensor) else None for o in operands]
    flags = view_edges(node_cls.__name__, meta, edge_idx, tuple(out.shape), out.dtype)
    cls = node_cls if flags is None else view_class(node_cls, flags)
    versions = summed_versions(cls, meta, edge_idx, tuple(out.shape), out.dtype)
    return cls if versions == cls._out_version else version_class(cls, versions)


def _saves_output(op):
    """Whether PyTorch's node saves the op's result (True) or its indices output ("indices").
    PyTorch saves an output its formulas read whenever it makes the node, whichever inputs need
    a gradient (its saved inputs are saved only for the formulas of those that do):
    ``copysign(a, b)`` with only ``b`` requiring grad still saves the result."""
    names = {n for saved in op.saves.values() for n in saved}
    if "result" in names:
        return True
    if "result0" in names:
        return "result0"
    if "indices" in names and "indices" in op._output_names:
        return "indices"
    return False


def _saved_facts(op, operands, needs) -> tuple:
    """Which operands PyTorch's node saves as tensors (their indices) and whether it saves the
    result, for ``_record_saved``."""
    Tensor = _tensor.Tensor
    saved_inputs = set()
    for i in needs:
        saved_inputs.update(op._pt_saved_idx[i])
    saves_result = _saves_output(op)
    saved = tuple(i for i in sorted(saved_inputs) if isinstance(operands[i], Tensor))
    return saved, saves_result


def _record_saved(saved, saves_result, operands, node, result, views=None) -> None:
    """What PyTorch's node saves (its ``SavedVariable`` s): the saved inputs, read live in
    backward (``OpNode._apply``), and a version record of each for the check in backward.
    ``views``: the op's inner views (``_inner_edges``), saved as their bases."""
    checks = []
    if saved:
        kept = [None] * len(operands)
        for j in saved:
            t = kept[j] = operands[j]
            counter = t._version_counter
            if views is not None and j in views:
                checks.append(_SavedView(t, counter.value, j, *views[j]))
            else:
                interior = t._grad_fn is not None and t._base is None
                checks.append(SavedVersion(t, counter, counter.value, j, interior=interior))
        node._operands = tuple(kept)
    if saves_result == "indices":
        # the indices output has no grad_fn: PyTorch's message names only one it gains later
        r = result[1]
        meta = (r._dtype, r._device, r._data.shape)
        weak = weakref.ref(r)
        checks.append(SavedVersion(None, r._version_counter, r._version, None, 1, None, meta, weak))
    elif saves_result:
        for k, r in enumerate(result if isinstance(result, tuple) else (result,)):
            if r._grad_fn is node and (k == 0 or saves_result is True):
                meta = (r._dtype, r._device, r._data.shape)
                checks.append(SavedVersion(None, r._version_counter, 0, None, k, node, meta))
    if checks:
        node._saved_checks = tuple(checks)
    if SAVED_HOOKS[0]:  # Note [Saved tensor hooks] in autograd/saved.py
        hooks = saved_mod.current()
        if hooks is not None:
            saved_mod.pack_op(node, saved, saves_result, operands, result, hooks)


def _mark_views(op, operands, result, static):
    """Views remember their base, share its storage and version counter (Note [Storage]) and how
    they were made (Note [View metadata]); a view of a tensor that requires grad requires grad
    too, even when made under ``no_grad`` (it is then a leaf), as in PyTorch."""
    source = operands[0]
    multi = isinstance(result, tuple)
    items = tuple(static.items()) + tuple(zip(op.operands[1:], operands[1:]))
    if source._inference:  # an inference tensor, not a view (Note [Inference tensors])
        for k, t in enumerate(result if multi else (result,)):
            t._inference = True
            S.share(source, t, (op, items, k if multi else None))
        return result
    base = source._base if source._base is not None else source
    state = grad_mode._state
    if state.inference:
        creation = S.INFERENCE_MODE
    elif not state.grad_enabled:
        creation = S.NO_GRAD_MODE
    elif multi:
        creation = S.MULTI_OUTPUT_NODE
    else:
        creation = S.DEFAULT
    src_meta = source.__dict__.get("_vmeta")
    if src_meta is not None and src_meta.creation != S.DEFAULT:
        # PyTorch's propagate_creation_meta: a view's own mode wins, except over inference mode
        if creation == S.DEFAULT or src_meta.creation == S.INFERENCE_MODE:
            creation = src_meta.creation
    version = source._version_counter.value
    # the chain step holds the scalar operands by name with the static arguments (Note [Storage])
    name = E.short_node_name(op.node_name(static))
    for k, t in enumerate(result if multi else (result,)):
        t._inference = False  # made in inference mode, a view of a normal tensor is normal
        t._base = base
        t._version_counter = source._version_counter
        # a recorded view requires grad by its node; an unrecorded one (no_grad, or a source that
        # does not require grad) reads its root base's flag, as PyTorch's view does (the base may
        # have stopped requiring grad through ``detach_`` while the source still does)
        if t._grad_fn is None and base._requires_grad:  # Note [Views that inherit requires_grad]
            t._requires_grad = True
            t.__dict__["_inherited_rg"] = True
        S.share(source, t, (op, items, k if multi else None))
        t.__dict__["_vmeta"] = S.ViewMeta(creation, version, name, k)
    return result


def _differentiable(rt) -> bool:
    if isinstance(rt, tuple):
        return any(r._kind in "fc" for r in rt)
    return rt._kind in "fc"


def _to_device(arrays, operands, device):
    """Put 0-d CPU operands of an op on another device onto that device (physically)."""
    jdev = DEV.jax_device(device)
    if jdev.platform == "cpu":
        return arrays
    Tensor = _tensor.Tensor
    return [
        jax.device_put(a, jdev) if isinstance(o, Tensor) and o._device.type == "cpu" else a
        for a, o in zip(arrays, operands)
    ]


def _move(out, source, target):
    src, dst = DEV.jax_device(source), DEV.jax_device(target)
    return out if src == dst else jax.device_put(out, dst)


def _moving_back(backward, source):
    dst = DEV.jax_device(source)

    def moved(primals, cts):
        return tuple(None if g is None else jax.device_put(g, dst) for g in backward(primals, cts))

    return moved


# --- create_graph: a node's backward as a recorded op ------------------------------------------

_GRAPH_OPS: dict = {}


def _graph_op(backward, name: str, n: int, edge: int):
    """The table entry whose forward is gradient ``edge`` of ``backward`` (a node's VJP of ``n``
    primals and the cotangents). Its tensor operands are only the arguments that gradient depends
    on; the static ``spec`` stands in for the others (zeros of their shape, Python scalars, None),
    which do not change the result. Recording it gives gradients a graph of their own
    (``create_graph=True``), connected where PyTorch's formulas connect them."""
    key = (backward, name, n, edge)
    op = _GRAPH_OPS.get(key)
    if op is None:

        def forward(*sub, rt, spec):
            full = []
            for s in spec:
                if s is None:
                    full.append(None)
                elif s[0] == "arg":
                    full.append(sub[s[1]])
                elif s[0] == "zeros":
                    full.append(jnp.zeros(s[1], s[2]))
                else:
                    full.append(s[1])
            return (backward(tuple(full[:n]), tuple(full[n:]))[edge],)

        def dtypes(meta, static):
            return (None,) * len(meta), static["rt"]

        names = tuple(f"a{k}" for k in range(64))

        # ``MaxPool2DWithIndicesBackward0`` -> ``MaxPool2DWithIndicesBackwardBackward0``: the node
        # of PyTorch's backward kernel (``max_pool2d_with_indices_backward``)
        kernel = name.rstrip("0123456789") + "Backward0"
        op = _GRAPH_OPS[key] = _GraphOps(forward, dtypes, kernel, names)
    return op


class _GraphOps:
    """One table entry per number of tensor operands (OpDef operands are fixed)."""

    def __init__(self, forward, dtypes, grad_fn, names) -> None:
        self.forward, self.dtypes, self.grad_fn, self.names = forward, dtypes, grad_fn, names
        self.by_count: dict = {}

    def entry(self, count: int):
        op = self.by_count.get(count)
        if op is None:
            from .table import OpDef

            names = self.names[:count]
            op = self.by_count[count] = OpDef(
                "backward_of_" + self.grad_fn,
                self.forward,
                self.grad_fn,
                names,
                self.dtypes,
                saves={x: names for x in names},
            )
        return op


def _snapshot(node, array, edge: int | None):
    """An input as the node recorded it, attached to the history it had then (an in-place op's
    original self to the clone PyTorch saves: Note [Original self] in inplace.py)."""
    from ..autograd.graph import AccumulateGrad
    from .inplace import ORIGINAL_SELF

    t = _tensor.Tensor._make(array, D.from_numpy_dtype(array.dtype), node._device or DEV.CPU)
    if edge is not None:
        fn, nr = node._next_functions[edge]
        if edge == 0 and node._edge_idx and node._edge_idx[0] == 0:
            clone = ORIGINAL_SELF.get(node)
            if clone is not None:
                fn, nr = clone, 0
        if isinstance(fn, AccumulateGrad):
            t._requires_grad = True
            t._accumulator = weakref.ref(fn)
        elif fn is not None:
            t._grad_fn, t._output_nr, t._requires_grad = fn, nr, True
    return t


def _dependencies(fn, args) -> list:
    """For each output of ``fn(*args)``, the indices of the arguments its value depends on and
    of those it is differentiable in, read from the jaxpr (sub-jaxprs of calls are followed;
    other higher-order primitives count as depending on all their inputs). A boolean or integer
    value (a comparison's mask, an argmax) carries no gradient: PyTorch's formulas that read
    inputs only through one (``where(self > max, grad, 0)``) do not depend on them."""
    closed = jax.make_jaxpr(fn)(*args)
    owner = []
    for k, a in enumerate(args):
        owner.extend([k] * len(jax.tree.leaves(a)))
    found = []
    for masks in (False, True):
        env = {v: {k} for v, k in zip(closed.jaxpr.invars, owner)}
        found.append(_walk(closed.jaxpr, env, masks))
    return [(set(v), set(d)) for v, d in zip(*found)]


def _walk(jaxpr, env, masks: bool) -> list:
    from jax.extend import core as jcore

    def read(v):
        return set() if isinstance(v, jcore.Literal) else env.get(v, set())

    for eqn in jaxpr.eqns:
        ins = [read(v) for v in eqn.invars]
        sub = eqn.params.get("jaxpr") or eqn.params.get("call_jaxpr")
        inner = getattr(sub, "jaxpr", sub)
        if inner is not None and hasattr(inner, "eqns") and len(inner.invars) == len(ins):
            outs = _walk(inner, dict(zip(inner.invars, ins)), masks)
        else:
            union = set().union(*ins) if ins else set()
            outs = [union] * len(eqn.outvars)
        for v, d in zip(eqn.outvars, outs):
            env[v] = d if not masks or jnp.issubdtype(v.aval.dtype, jnp.inexact) else set()
    return [read(v) for v in jaxpr.outvars]


_DEPS: dict = {}


def backward_as_op(node, grads: list) -> list:
    """``node``'s backward run on Tensors through ``dispatch``, so it is recorded: one op per
    gradient, taking the inputs that gradient depends on in JAX's VJP (as PyTorch's derivative
    formulas take theirs); a node recorded this way keeps all its inputs when differentiated
    again, as PyTorch's double-backward graphs do."""

    Tensor = _tensor.Tensor
    if node._ct_dtype is not None:
        grads = [g if g is None else g.to(D.from_numpy_dtype(node._ct_dtype)) for g in grads]
    primals = node._primals
    ops = node._operands
    edge_of = {i: k for k, i in enumerate(node._edge_idx or ())}
    fn = node._backward
    side_effect = getattr(fn, "side_effect", None)
    if side_effect is not None:  # a wrapper that only warns or checks (``graph.wrap_backward``)
        side_effect(node._primals, grads)
        fn = fn.inner
    from_result = _FROM_RESULT.get(fn)
    args = []
    for i, p in enumerate(primals):
        t = ops[i] if i < len(ops) else None
        if from_result is not None:
            # the primal is one of the node's own outputs: its result, with its history (Note
            # [Saved results]), or its indices, a constant of the formula (Note [Saved indices])
            t = _tensor.Tensor._make(p, D.from_numpy_dtype(p.dtype), node._device or DEV.CPU)
            if from_result == 0:
                t._grad_fn, t._requires_grad = S.saved_output_node(node), True
        elif t is None and p is not None and not isinstance(p, _SCALARS):
            t = _snapshot(node, p, edge_of.get(i))
        args.append(t if t is not None else p)
    info = BACKWARD_INFO.get(fn)
    if info is not None and info[0].name in formulas.FORMULAS:  # Note [Graph formulas]
        found = formulas.run(node, info, args, grads, from_result)
        if found is not None:
            return found
    args.extend(grads)
    n = len(primals)
    arrays = [a._data if isinstance(a, Tensor) else a for a in args]

    def flat(*xs):
        return fn(tuple(xs[:n]), tuple(xs[n:]))

    key = (
        fn,
        tuple((a.shape, a.dtype) if hasattr(a, "shape") else type(a) for a in arrays),
        # a refusing wrapper (``graph.wrap_backward``) raises only for the edges the call needs
        # (Note [Needed edges]): what it gives depends on them
        edge_mask() if hasattr(fn, "inner") else None,
    )
    found = _DEPS.get(key)
    if found is None:
        # the gradients the node's VJP gives (None for edges it does not need), and what each
        # depends on
        shapes = jax.eval_shape(flat, *arrays)
        it = iter(_dependencies(flat, arrays))
        found = _DEPS[key] = (shapes, [None if sh is None else next(it) for sh in shapes])
    shapes, deps = found
    result = [None] * len(node._next_functions)
    # A node recorded by create_graph computes a derivative formula of its parent; PyTorch's
    # graphs of such formulas keep the parent's saved inputs structurally (``x.pow(0)`` still
    # depends on ``x``), so their gradients keep those inputs too.
    kept = {k for k, f in enumerate(node._structural or ()) if f}
    table_op = info[0] if info is not None else None
    for e, found in enumerate(deps):
        if found is None:
            continue
        values, d = found
        d = d | kept
        if table_op is not None and node._edge_idx is not None and e < len(node._edge_idx):
            # PyTorch's backward kernel takes the inputs its node saved (``avg_pool2d_backward``
            # takes ``self``), so its gradient depends on them even where the values do not
            d = d | set(table_op._pt_saved_idx.get(node._edge_idx[e], ()))
        values = values | d
        spec, sub, flags = [], [], []
        # the kernel's operands as ATen orders them: the gradients first, then the inputs
        order = [*range(n, len(args)), *range(n)]
        used = [k for k in order if isinstance(args[k], Tensor) and k in values]
        at = {k: j for j, k in enumerate(used)}
        for k in order:
            if k in at:
                # an input read only through a mask is a value, not an edge of the gradient
                sub.append(args[k] if k in d else args[k].detach())
                flags.append(k < n)
        for k, a in enumerate(args):
            if k in at:
                spec.append(("arg", at[k]))
            elif isinstance(a, Tensor):
                spec.append(("zeros", a._data.shape, a._data.dtype))
            elif a is None:
                spec.append(None)
            else:
                spec.append(("scalar", a))
        op = _graph_op(node._backward, node.name(), n, e).entry(len(sub))
        rt = (D.from_numpy_dtype(shapes[e].dtype),)
        if not sub:  # a constant gradient
            result[e] = Tensor._make(
                op.forward(rt=rt, spec=tuple(spec))[0], rt[0], node._device or DEV.CPU
            )
            continue
        out = dispatch(op, *sub, rt=rt, spec=tuple(spec))[0]
        if out._grad_fn is not None:  # which of its inputs were this node's saved inputs
            out._grad_fn._structural = tuple(flags)
        result[e] = out
    return result
