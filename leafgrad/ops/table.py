"""The op table: one entry per op, stating facts; JAX's ``jax.vjp`` gives nearly every backward.

An entry says:
- ``forward``: a pure ``jax.numpy`` function of the operands (static arguments as keywords);
- ``grad_fn``: PyTorch's node name (or a function of the static arguments giving it);
- ``operands``: positional operand names; ``edges``: those that are Tensor parameters in ATen
  (each becomes an entry of ``next_functions``, a Python scalar becoming ``(None, 0)``);
- ``differentiable``: operands gradients flow to;
- ``saves``: for each differentiable operand, what PyTorch saves for backward when that operand
  needs grad (operand names and/or ``"result"``); this decides whether a second backward without
  ``retain_graph`` raises, and which primals the recomputed VJP keeps (Note [Saved primals]);
- ``dtypes``: the dtype rule, giving the dtype each operand is cast to and the result dtype;
- ``result_vjp``: PyTorch's formula from the result, for an op PyTorch differentiates so
  (Note [Saved results]); ``indices_vjp``: its formula from the indices output, for a
  value-selecting op (Note [Saved indices]);
- ``inner_views``: operands that are views PyTorch makes just for the op (Note [Views inside ops]).

Note [Saved primals]: backward recomputes the VJP from primals inside one cached jit. A primal
that PyTorch does not save is not needed by the derivative, so it is not kept: the VJP sees
zeros of its shape instead, which holds less memory for linear ops (add, sum, mean, views).

Note [Saved results]: derivatives.yaml differentiates some ops from their ``result`` (relu, exp,
softmax, log_softmax...). Recomputing JAX's VJP would need the operand, which PyTorch does not
keep, while the result is often kept anyway (a ReLU's result is the next layer's input, which
that layer's product saves). So such an entry gives PyTorch's formula, ``result_vjp(result, grad,
**static) -> grad of self``, and its node keeps the result array (the output tensor's own array,
not the tensor, which would make a cycle) and no operand. ``create_graph`` differentiates the
formula with the result attached to the node itself, as PyTorch unpacks a saved output. The
version check of the saved result is the usual one (``saves``).

Note [Saved indices]: the value-selecting ops (``sort``, ``topk``, ``max(dim)``, ``kthvalue``,
``median(dim)``, ``mode``...) have PyTorch's backward ``value_selecting_reduction_backward``: the
gradient scattered into zeros of the input's shape at the saved indices output. Recomputing JAX's
VJP would sort (or select) again; so such an entry gives ``indices_vjp(indices, grad, shape,
**static) -> grad of self`` and its node keeps the indices array (output 1) and no operand, as
PyTorch's node keeps ``indices`` and the input's sizes. The formula is linear in the gradient
with the indices a constant, so ``create_graph`` differentiates it as any formula of the
gradient.

Note [Views inside ops]: ``F.linear`` multiplies by ``weight.t()``, a view in PyTorch. JAX arrays
have no views: dispatching ``t`` copies the weight, and the product's node keeps that copy. An
entry with ``inner_views={"mat2": "t"}`` takes the view's base (the weight) as ``mat2`` and applies
the view op's forward inside its jitted forward and VJP, where XLA folds the transpose into the
product. The graph is PyTorch's: the node's edge for ``mat2`` goes to a node of the view op
(``TBackward0``, made as dispatch makes a view's node, without computing the view) whose edge
leads to the base, and the gradient on that edge has the view's shape. The node keeps the base
(PyTorch's view shares its storage) and checks the base's version counter, which is the view's;
the error names the view as PyTorch does (``_SavedView`` in dispatch.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import jax
import jax.numpy as jnp
from jax import lax

from .. import _dtype as D
from .. import _errors as E
from ..autograd import forward_ad
from .reduce import torch_mean, torch_sum

__all__ = ["OpDef", "OPS"]


# ``saves`` names of outputs: "result" (the differentiable outputs), "result0" (output 0 alone:
# std_mean saves the std, not the mean) and "indices" (output 1 of a values-and-indices op,
# which PyTorch's formula reads: max(dim), sort, topk...)
_OUTPUTS = frozenset({"result", "result0", "indices"})


@dataclass(eq=False, frozen=True)
class OpDef:
    name: str
    forward: Callable
    grad_fn: str | Callable
    operands: tuple[str, ...]
    dtypes: Callable
    edges: tuple[str, ...] | None = None  # default: all operands
    differentiable: tuple[str, ...] | None = None  # default: all edges
    saves: dict[str, tuple[str, ...]] = field(default_factory=dict)
    broadcast: bool = False  # elementwise over broadcast operands: PyTorch's shape check first
    n_out: int = 1
    differentiable_outputs: tuple[int, ...] | None = None  # None: all outputs
    view: bool = False
    result_vjp: Callable | None = None  # Note [Saved results]
    indices_vjp: Callable | None = None  # Note [Saved indices]
    inner_views: dict[str, str] = field(default_factory=dict)  # Note [Views inside ops]
    # the node keeps every operand, beyond what PyTorch's saves: for a formula that asks which
    # optional operands were given (group norm's bias) or reads one PyTorch keeps elsewhere
    # (batch norm's running stats in eval mode)
    keeps_all: bool = False

    def __post_init__(self):
        edges = self.operands if self.edges is None else self.edges
        diff = edges if self.differentiable is None else self.differentiable
        object.__setattr__(self, "edges", edges)
        object.__setattr__(self, "differentiable", diff)
        idx = {n: i for i, n in enumerate(self.operands)}
        object.__setattr__(self, "_operand_idx", idx)
        object.__setattr__(self, "_edge_idx", tuple(idx[n] for n in edges))
        object.__setattr__(self, "_diff_idx", tuple(idx[n] for n in diff))
        # For each differentiable operand index: operand indices PyTorch saves when it needs grad
        # (the result needs every operand to be recomputed).
        # "result" and "indices" name outputs, unless the op has an operand of that name
        # (``indices`` of embedding): then they name the operand
        outputs = _OUTPUTS - set(idx)
        object.__setattr__(self, "_output_names", outputs)
        object.__setattr__(
            self,
            "_pt_saved_idx",
            {
                idx[name]: tuple(idx[n] for n in self.saves.get(name, ()) if n not in outputs)
                for name in diff
            },
        )
        if self.result_vjp is not None and (len(self.operands) != 1 or self.n_out != 1):
            raise ValueError(f"{self.name}: result_vjp is for ops of one operand and one output")
        if self.indices_vjp is not None and (len(self.operands) != 1 or self.n_out != 2):
            raise ValueError(f"{self.name}: indices_vjp is for ops of one operand, values, indices")
        object.__setattr__(
            self, "_inner_idx", tuple((idx[n], view) for n, view in self.inner_views.items())
        )
        saved = {}
        for name in diff:
            names = self.saves.get(name, ())
            if self.result_vjp is not None or self.indices_vjp is not None:
                # the node keeps the result or the indices (Note [Saved results], [Saved indices])
                saved[idx[name]] = ()
            elif self.keeps_all or any(n in outputs for n in names):
                saved[idx[name]] = tuple(range(len(self.operands)))
            else:
                saved[idx[name]] = tuple(idx[n] for n in names)
        object.__setattr__(self, "_saved_idx", saved)

    def node_name(self, static: dict) -> str:
        return self.grad_fn if isinstance(self.grad_fn, str) else self.grad_fn(**static)

    def __repr__(self) -> str:
        return f"<op {self.name}>"


# --- dtype rules -------------------------------------------------------------------------------
# Each takes the operands' metadata (``(dtype, ndim)`` for tensors, the value for Python scalars,
# None for absent operands) and the static arguments, and returns (cast dtypes, result dtype).


def promote(meta, static):
    rt = D.result_type_of([m for m in meta if m is not None])
    return (rt,) * len(meta), rt


def promote_to_float(meta, static):
    rt = D.result_type_of([m for m in meta if m is not None])
    if not (rt.is_floating_point or rt.is_complex):
        rt = D.get_default_dtype()
    return (rt,) * len(meta), rt


def unary_float(meta, static):
    dt = meta[0][0]
    rt = dt if (dt.is_floating_point or dt.is_complex) else D.get_default_dtype()
    return (rt,), rt


def same(meta, static):
    return (None,) * len(meta), meta[0][0]


def no_bool(message):
    def rule(meta, static):
        if meta[0][0] is D.bool_:
            raise RuntimeError(message)
        return same(meta, static)

    return rule


def sub_rule(meta, static):
    kinds = [m[0] is D.bool_ if isinstance(m, tuple) else isinstance(m, bool) for m in meta]
    if all(kinds):
        raise RuntimeError(E.SUB_BOOL)
    if any(kinds):
        raise RuntimeError(E.SUB_BOOL_SCALAR)
    return promote(meta, static)


def sum_rule(meta, static):
    dt = static.get("dtype")
    if dt is not None:
        return (dt,), dt
    dt = meta[0][0]
    rt = D.int64 if dt._kind in "bui" else dt
    return (rt,), rt


def mean_rule(meta, static):
    dt = static.get("dtype")
    if dt is None:
        dt = meta[0][0]
        if not (dt.is_floating_point or dt.is_complex):
            raise RuntimeError(E.MEAN_DTYPE.format(E.scalar_type_name(dt)))
    return (dt,), dt


def same_dtype(message, spell):
    def rule(meta, static):
        a, b = meta[0][0], meta[1][0]
        if a is not b:
            raise RuntimeError(message.format(spell(a), spell(b)))
        return (None, None), a

    return rule


def mul_rule(meta, static):
    """``promote``, except that a bool tensor times a non-bool is left bool for ``_mul``."""
    cast, rt = promote(meta, static)
    if rt is D.bool_:
        return cast, rt
    is_bool = [isinstance(m, tuple) and m[0] is D.bool_ for m in meta]
    return tuple(None if b else c for b, c in zip(is_bool, cast)), rt


def pow_rule(meta, static):
    cast, rt = promote(meta, static)
    base, exponent = meta
    if (
        rt._kind in "ui"
        and not isinstance(exponent, tuple)
        and isinstance(exponent, int)
        and exponent < 0
    ):
        raise RuntimeError(E.INTEGER_POW_NEGATIVE)
    return cast, rt


def mv_rule(meta, static):
    a, v = meta[0][0], meta[1][0]
    if a is not v:
        n = E.scalar_type_name
        raise RuntimeError(E.MV_DTYPE.format(n(v), n(a), n(v)))
    return (None, None), a


def pow_tensor_rule(meta, static):
    if meta[0][0] is D.bool_ and meta[1][0] is D.bool_:
        raise NotImplementedError(E.POW_BOOL)
    return pow_rule(meta, static)


def pow_scalar_rule(meta, static):
    cast, rt = pow_rule((meta[0], static["exponent"]), static)
    return cast[:1], rt


def rpow_rule(meta, static):
    if meta[0][0] is D.bool_ and isinstance(meta[1], bool):
        raise NotImplementedError(E.POW_BOOL)
    return promote(meta, static)


def to_rule(meta, static):
    return (static["dtype"],), static["dtype"]


# --- forwards ----------------------------------------------------------------------------------


def _as_factor(mask, dtype):
    return jnp.where(mask, jnp.ones((), dtype), jnp.zeros((), dtype))


def _mul(x, y):
    """``x * y`` where a bool operand is a 0/1 factor (``mul_rule``), as PyTorch casts it.

    XLA rewrites ``a * convert(mask)`` into ``select(mask, a, 0)``, which loses IEEE's
    ``inf * 0 = nan`` (PyTorch: ``tensor([inf]) * tensor([False])`` is NaN); the factor made by
    ``where`` keeps the product a real multiplication.
    """
    if x.dtype == jnp.bool_ and y.dtype != jnp.bool_:
        x = _as_factor(x, y.dtype)
    elif y.dtype == jnp.bool_ and x.dtype != jnp.bool_:
        y = _as_factor(y, x.dtype)
    return jnp.multiply(x, y)


def _pow(x, y):
    if jnp.issubdtype(x.dtype, jnp.integer) and jnp.issubdtype(y.dtype, jnp.integer):
        return _int_pow(x, y)
    if x.dtype == y.dtype and jnp.issubdtype(x.dtype, jnp.floating):
        return _real_pow(x, y)
    return jnp.power(x, y)


def with_partials(kernel, partials):
    """``kernel`` of two operands, differentiated by PyTorch's formula: ``partials(x, y, out)``
    gives the derivatives with respect to each, whose products with the tangents are summed
    (they are JAX ops, so higher derivatives follow)."""
    fn = jax.custom_jvp(kernel)

    def _jvp(primals, tangents):
        # an operand without a tangent drops its term (no NaN from a zero times an inf partial)
        (x, y), (tx, ty) = primals, forward_ad.given(tangents)
        out = fn(x, y)
        gx, gy = partials(x, y, out)
        terms = (None if tx is None else gx * tx, None if ty is None else gy * ty)
        return out, forward_ad.sum_terms(terms, out)

    fn.defjvp(_jvp, symbolic_zeros=True)
    return fn


def _pow_partials(x, y, out):
    # PyTorch's pow_backward_self and pow_backward_exponent: 0 for self where the exponent is 0,
    # 0 for the exponent where self is 0 and the exponent is not negative (JAX's are NaN and
    # -inf there)
    gx = jnp.where(y == 0, 0, y * _real_pow(x, y - 1))
    gy = jnp.where((x == 0) & (y >= 0), 0, out * jnp.log(x))
    return gx, gy


_real_pow = with_partials(jnp.power, _pow_partials)


def _int_pow(x, y):
    """PyTorch's ``powi``: integer powers wrap around as repeated products do, and a negative
    exponent gives 0 (1 and -1 for the bases 1 and -1), not a float's reciprocal."""
    shape = jnp.broadcast_shapes(x.shape, y.shape)
    x, y = jnp.broadcast_to(x, shape), jnp.broadcast_to(y, shape).astype(x.dtype)

    # Square and multiply over every bit of the exponent: jnp.power stops after 6 of them.
    def step(_, state):
        acc, base, e = state
        acc = jnp.where(e & 1, acc * base, acc)
        return acc, base * base, e >> 1

    e = jnp.maximum(y, 0) if jnp.issubdtype(y.dtype, jnp.signedinteger) else y
    acc = lax.fori_loop(0, 8 * y.dtype.itemsize, step, (jnp.ones_like(x), x, e))[0]
    if not jnp.issubdtype(y.dtype, jnp.signedinteger):
        return acc
    neg = jnp.where(x == 1, 1, jnp.where(x == -1, 1 - 2 * (y & 1), 0)).astype(x.dtype)
    return jnp.where(y < 0, neg, acc)


def _pow_scalar(x, exponent):
    # PyTorch's CPU kernel computes these exponents exactly (products, roots, reciprocals);
    # lax.integer_pow multiplies the same way and differentiates as n * x**(n-1).
    if x.dtype == jnp.bool_:  # bool ** number: computed on integers, as PyTorch's kernel does
        return _pow_scalar(x.astype(jnp.int8), exponent).astype(jnp.bool_)
    if x.dtype in D.HALF_ARRAY_TYPES and not (x.dtype == jnp.bfloat16 and exponent in (3, -2)):
        # Note [Half types in float] in dispatch.py; PyTorch 2.13's bfloat16 cubes and inverse
        # squares multiply in bfloat16, rounding each product
        return _pow_scalar(x.astype(jnp.float32), exponent).astype(x.dtype)
    integral = not isinstance(exponent, complex) and float(exponent).is_integer()
    if integral and (-2 <= exponent <= 3 or jnp.issubdtype(x.dtype, jnp.integer)):
        return lax.integer_pow(x, int(exponent))
    if exponent == 0.5:
        return jnp.sqrt(x)
    if exponent == -0.5:
        return lax.rsqrt(x)
    return jnp.power(x, jnp.asarray(exponent, x.dtype))


def _sum(x, dim=None, keepdim=False, dtype=None):
    # PyTorch's CPU summation order, add for add (Note [Cascade sum order] in reduce.py).
    return torch_sum(x, dim, keepdim)


def _mean(x, dim=None, keepdim=False, dtype=None):
    return torch_mean(x, dim, keepdim)


def _true_divide(x, y):
    # Note [True division] in reduce.py: XLA turns a division by a broadcast divisor into a
    # multiplication by its reciprocal; a full-shaped divisor behind a barrier stays a division.
    shape = jnp.broadcast_shapes(jnp.shape(x), jnp.shape(y))
    if jnp.shape(y) != shape:
        y = lax.optimization_barrier(jnp.broadcast_to(y, shape))
    return _divide(x, y)


# Note [Formula tangents]: JAX's VJP of an op rounds as JAX's differentiation rules compute,
# not as PyTorch's derivatives.yaml formulas do (``x / y``'s gradient of ``y``: JAX's
# ``-g * x * y**-2``, PyTorch's ``-g * ((x / y) / y)``), so the last bits differ. A
# ``jax.custom_jvp`` whose tangent is PyTorch's backward formula, written so that its transpose
# computes it in PyTorch's order (``t * w`` transposes to ``g * w``; a chain of products
# transposes in reverse), gives PyTorch's gradients bit for bit. Forward mode then takes that
# tangent, not PyTorch's forward-mode formula (the same value, rounded otherwise).
def _divide_value(x, y):
    return x / y


def _divide_rule(forward: bool):
    """Division's JVP rule. Backward (DivBackward0): self: grad / other; other: -grad * ((self /
    other) / other). Forward: (self_t - other_t * result) / other. An operand without a tangent
    drops its term (a NaN quotient is no NaN tangent of the other's)."""

    def rule(primals, tangents):
        x, y = primals
        tx, ty = forward_ad.given(tangents)
        q = x / y
        if ty is None:
            return q, tx / y
        if forward:
            product = lax.optimization_barrier(ty * q)
            return q, (-product if tx is None else tx - product) / y
        # XLA's simplifier rewrites (x / y) / y into x / (y * y); a barrier keeps the divisions
        other = ty * -(lax.optimization_barrier(q) / y)
        return q, other if tx is None else tx / y + other

    return rule


# ``x / y`` with PyTorch's backward formula, or its forward formula while an op's forward is
# traced for forward-mode AD (Note [Forward formulas])
_divide = forward_ad.with_rules(_divide_value, _divide_rule(False), _divide_rule(True))


def _sum_name(dim=None, keepdim=False, dtype=None):
    return "SumBackward0" if dim is None else "SumBackward1"


def _mean_name(dim=None, keepdim=False, dtype=None):
    return "MeanBackward0" if dim is None else "MeanBackward1"


def _to(x, dtype):
    return x.astype(dtype.np)


def _one(alpha) -> bool:
    """``alpha`` is the number 1 (a traced one is a lifted number: Note [Lifted numbers])."""
    return type(alpha) in (int, float, bool) and alpha == 1


def _add(x, y, alpha=1):
    return x + y if _one(alpha) else x + alpha * y


def _sub(x, y, alpha=1):
    return x - y if _one(alpha) else x - alpha * y


def _rsub(x, y, alpha=1):
    return y - x if _one(alpha) else y - alpha * x


def compare(meta, static):
    ct = D.result_type_of([m for m in meta if m is not None])
    return (ct,) * len(meta), D.bool_


def unbind_rule(meta, static):
    return (None,), (meta[0][0],) * static["n"]


def _unbind(x, dim, n):
    return tuple(jnp.take(x, i, axis=dim) for i in range(n))


_mm_check = same_dtype(E.MM_DTYPE, E.c_type_name)
_dot_check = same_dtype(E.DOT_DTYPE, E.scalar_type_name)

OPS = {
    op.name: op
    for op in [
        OpDef("add", _add, "AddBackward0", ("self", "other"), promote, broadcast=True),
        OpDef("sub", _sub, "SubBackward0", ("self", "other"), sub_rule, broadcast=True),
        # 2 - x: rsub.Scalar, whose scalar is no edge.
        OpDef("rsub", _rsub, "RsubBackward1", ("self", "other"), sub_rule, edges=("self",)),
        OpDef(
            "mul",
            _mul,
            "MulBackward0",
            ("self", "other"),
            mul_rule,
            saves={"self": ("other",), "other": ("self",)},
            broadcast=True,
        ),
        OpDef(
            "div",
            _true_divide,
            "DivBackward0",
            ("self", "other"),
            promote_to_float,
            saves={"self": ("other",), "other": ("self", "other")},
            broadcast=True,
        ),
        OpDef(
            "pow_tensor",
            _pow,
            "PowBackward1",
            ("self", "exponent"),
            pow_tensor_rule,
            saves={"self": ("self", "exponent"), "exponent": ("self", "exponent", "result")},
            broadcast=True,
        ),
        OpDef(
            "pow_scalar",  # pow(Tensor self, Scalar exponent): the exponent is static
            _pow_scalar,
            "PowBackward0",
            ("self",),
            pow_scalar_rule,
            saves={"self": ("self",)},
        ),
        OpDef(
            "rpow",  # pow(Scalar self, Tensor exponent)
            lambda exponent, base: _pow(jnp.asarray(base, exponent.dtype), exponent),
            "PowBackward2",
            ("exponent", "base"),
            rpow_rule,
            edges=("exponent",),
            saves={"exponent": ("exponent", "result")},
        ),
        OpDef("neg", jnp.negative, "NegBackward0", ("self",), no_bool(E.NEG_BOOL)),
        OpDef(
            "reciprocal",
            lambda x: 1 / x,
            "ReciprocalBackward0",
            ("self",),
            unary_float,
            saves={"self": ("result",)},
            result_vjp=lambda result, grad: -grad * jnp.conj(result * result),
        ),
        OpDef(
            "exp",
            jnp.exp,
            "ExpBackward0",
            ("self",),
            unary_float,
            saves={"self": ("result",)},
            result_vjp=lambda result, grad: grad * jnp.conj(result),
        ),
        OpDef("log", jnp.log, "LogBackward0", ("self",), unary_float, saves={"self": ("self",)}),
        OpDef("sum", _sum, _sum_name, ("self",), sum_rule),
        OpDef("mean", _mean, _mean_name, ("self",), mean_rule),
        OpDef(
            "mm",
            jnp.matmul,
            "MmBackward0",
            ("self", "mat2"),
            _mm_check,
            saves={"self": ("mat2",), "mat2": ("self",)},
        ),
        OpDef(
            "mv",
            jnp.matmul,
            "MvBackward0",
            ("self", "vec"),
            mv_rule,
            saves={"self": ("vec",), "vec": ("self",)},
        ),
        OpDef(
            "dot",
            jnp.dot,
            "DotBackward0",
            ("self", "tensor"),
            _dot_check,
            saves={"self": ("tensor",), "tensor": ("self",)},
        ),
        OpDef(
            "unsqueeze",
            lambda x, dim: jnp.expand_dims(x, dim),
            "UnsqueezeBackward0",
            ("self",),
            same,
            view=True,
        ),
        OpDef(
            "squeeze_dim",
            lambda x, dim, inplace=False: jnp.squeeze(x, dim) if x.shape[dim] == 1 else x,
            lambda dim, inplace=False: "SqueezeBackward4" if inplace else "SqueezeBackward1",
            ("self",),
            same,
            view=True,
        ),
        OpDef("unbind", _unbind, "UnbindBackward0", ("self",), unbind_rule, view=True),
        *[
            OpDef(name, fn, "", ("self", "other"), compare, differentiable=(), broadcast=True)
            for name, fn in [
                ("eq", jnp.equal),
                ("ne", jnp.not_equal),
                ("lt", jnp.less),
                ("le", jnp.less_equal),
                ("gt", jnp.greater),
                ("ge", jnp.greater_equal),
            ]
        ],
        OpDef("to_copy", _to, "ToCopyBackward0", ("self",), to_rule),
        OpDef("clone", lambda x: x, "CloneBackward0", ("self",), same),
    ]
}
