"""PyTorch's derivative formulas, recorded, for gradients taken with ``create_graph=True``.

Note [Graph formulas]: with ``create_graph=True`` a node's backward is itself recorded. PyTorch
runs the node's formula from ``tools/autograd/derivatives.yaml`` with recorded ATen ops: the
gradient of ``x.sin()`` is ``grad * x.cos()``, a ``MulBackward0`` whose inputs are the incoming
gradient and a ``CosBackward0`` of ``x``; that of ``x.tanh()`` is ``tanh_backward(grad, result)``,
a ``TanhBackwardBackward0``. For each op with an entry here leafgrad runs the same formula on
Tensors, so gradients of gradients have PyTorch's ``grad_fn`` names, graph shapes and values (the
same functions, computed in the same order). An op without an entry keeps the one-op form
(``dispatch.backward_as_op``: a node named ``<Node>Backward`` whose forward is the JAX VJP).

A formula takes a ``Ctx`` and returns ``{operand name: gradient}`` for the operands whose
gradient is needed (``ctx.needs(name)``); it may return ``NotImplemented`` for a call it does
not cover, which then takes the one-op form. The engine's checks that PyTorch runs on a
formula's result (``validate_outputs``: ``sum_to`` the input's shape, then a cast to its dtype)
are run here (``_validate``), recorded as PyTorch records them (``SumBackward1``,
``ViewBackward0``, ``ToCopyBackward0``).

ATen's C++ operators on a Tensor and a number call the Scalar overloads (``mul.Scalar``:
``MulBackward1``), and a number minus or over a Tensor fills a tensor and runs ``sub_``/``div_``
on it; ``smul``, ``sadd``, ``sdiv``, ``rsub_scalar`` and ``rdiv_scalar`` record those.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import jax

from .. import _dtype as D
from .. import _tensor
from .table import OPS, OpDef, promote

if TYPE_CHECKING:
    from .._tensor import Tensor

__all__ = ["FORMULAS", "formula", "Ctx", "run"]

# op table name -> formula(ctx) -> {operand name: Tensor or None} (or NotImplemented)
FORMULAS: dict[str, Callable] = {}


def formula(*names: str):
    """Register the decorated function as the formula of the named table entries."""

    def register(fn: Callable) -> Callable:
        for name in names:
            if name in FORMULAS:
                raise ValueError(f"op {name!r} already has a formula")
            FORMULAS[name] = fn
        return fn

    return register


class Ctx:
    """What a formula reads: the node's saved inputs as Tensors carrying their history (or
    Python numbers), the incoming gradients, the op's static arguments, and which operands'
    gradients are needed."""

    __slots__ = ("op", "static", "grads", "node", "_args", "_needs", "_result", "_metas")

    def __init__(self, op, static, args, grads, needs, result, metas, node=None) -> None:
        self.op, self.static, self.grads, self.node = op, static, grads, node
        self._args, self._needs, self._result, self._metas = args, needs, result, metas

    def __getitem__(self, name: str):
        """The operand ``name`` as the node saved it (None where it was not saved)."""
        return self._args[self.op._operand_idx[name]]

    @property
    def grad(self):
        """The gradient of the (first) output."""
        return self.grads[0]

    @property
    def result(self):
        """The op's result, with its history (only for ops that save their result)."""
        if self._result is None:
            raise RuntimeError(f"leafgrad: the node of {self.op.name} did not save its result")
        return self._result

    def saved_result(self, value):
        """``value``, the op's result computed again, as the node's saved output: with the
        node's own history, as PyTorch's formulas read their saved ``result`` (a gradient's
        graph then leads back through the node: backward through it again after the node
        was freed raises, as in PyTorch)."""
        from .. import _storage as S
        from .dispatch import _saves_output

        if self.node is None or _saves_output(self.op) is not True:
            return value
        t = _tensor.Tensor._make(value._data, value._dtype, value._device)
        t._grad_fn, t._requires_grad = S.saved_output_node(self.node), True
        return t

    def needs(self, name: str) -> bool:
        return self.op._operand_idx[name] in self._needs

    def shape(self, name: str) -> tuple:
        """The shape of operand ``name`` (saved or not)."""
        return self._metas[self.op._operand_idx[name]][0]

    def dtype(self, name: str):
        """The dtype of operand ``name`` (saved or not)."""
        return self._metas[self.op._operand_idx[name]][1]


def run(node, info, args: list, grads: list, kept=None):
    """The gradients for ``node``'s edges by its op's formula, or None where it has none.
    ``kept``: which of its own outputs the node keeps instead of its inputs (dispatch's
    ``_FROM_RESULT``), None where it keeps inputs."""
    op, static, needs, placeholders = info
    fn = FORMULAS.get(op.name)
    if fn is None or all(g is None for g in grads):
        return None
    metas = []
    # a node that keeps an output, not its input: its result (Note [Saved results]) or its
    # indices (Note [Saved indices]: ``ctx.result`` is the indices, the input's metadata stands
    # in its placeholder)
    from_result = kept is not None
    result = args[0] if from_result else None
    if kept == 1:
        args = [None] * len(op.operands)
    for i, a in enumerate(args[: len(op.operands)]):
        if isinstance(a, _tensor.Tensor):
            metas.append((tuple(a._data.shape), a._dtype))
        elif placeholders is not None and placeholders[i] is not None:
            shape, dtype = placeholders[i]
            metas.append((tuple(shape), D.from_numpy_dtype(dtype)))
        else:
            metas.append(None)
    for i, view in op._inner_idx:  # the edge takes the inner view (Note [Views inside ops])
        if metas[i] is not None:
            shape, dtype = metas[i]
            found = jax.eval_shape(OPS[view].forward, jax.ShapeDtypeStruct(shape, dtype.np))
            metas[i] = (tuple(found.shape), dtype)
    if from_result:
        args = [None] * len(op.operands)
    ctx = Ctx(op, static, args, grads, needs, result, metas, node)
    out = fn(ctx)
    if out is NotImplemented:
        return None
    edges = [None] * len(node._next_functions)
    for k, i in enumerate(op._edge_idx):
        if i not in needs:
            continue
        g = out.get(op.operands[i])
        if g is not None:
            edges[k] = _validate(g, metas[i])
    return edges


def _validate(g: Tensor, meta) -> Tensor:
    """PyTorch's ``validate_outputs`` on one gradient: ``sum_to`` the input's shape, then the
    input's dtype (``handle_r_to_c`` first for a real input)."""
    shape, dtype = meta
    if tuple(g.shape) != shape:
        g = sum_to(g, shape)
    if g._dtype.is_complex and not dtype.is_complex:
        g = g.real
    if g._dtype is not dtype:
        g = g.to(dtype)
    return g


def sum_to(g: Tensor, shape: tuple) -> Tensor:
    """ATen's ``sum_to``: sum (keeping dims) over broadcast dims, then view off leading ones."""
    if not shape:
        return g.sum()
    lead = g.ndim - len(shape)
    dims = list(range(lead)) + [
        i for i in range(lead, g.ndim) if shape[i - lead] == 1 and g.shape[i] != 1
    ]
    if dims:
        g = g.sum(dims, keepdim=True)
    if lead:
        g = g.view(shape)
    return g


# --- ATen's C++ operators with a number ----------------------------------------------------


def operand_device(node, operand: int, default):
    """The device of the tensor behind ``node``'s edge to operand ``operand`` (an op that moves
    its input gives the gradient back on the input's device): a leaf's, or the device of the
    node that made it."""
    from ..autograd.graph import AccumulateGrad

    edges = None if node is None else node._edge_idx
    if not edges or operand not in edges:
        return default
    fn = node._next_functions[list(edges).index(operand)][0]
    if isinstance(fn, AccumulateGrad):
        return fn.variable.device
    if fn is not None and fn._device is not None:
        return fn._device
    return default


def smul(t: Tensor, s) -> Tensor:
    """``t * s`` (or ``s * t``) in C++: ``mul.Scalar``, ``MulBackward1``."""
    from .dispatch import dispatch

    return dispatch(OPS["nn.mul_scalar"], t, s)


def sadd(t: Tensor, s) -> Tensor:
    """``t + s`` (or ``s + t``) in C++: ``add.Scalar``, ``AddBackward1``."""
    from .dispatch import dispatch

    return dispatch(OPS["nn.add_scalar"], t, s)


def sdiv(t: Tensor, s) -> Tensor:
    """``t / s`` in C++: ``div.Scalar``, ``DivBackward1``."""
    from .dispatch import dispatch

    return dispatch(OPS["nn.div_scalar"], t, s)


def rsub_scalar(s, t: Tensor) -> Tensor:
    """``s - t`` in C++: ``empty_like(t).fill_(s).sub_(t)``, a ``SubBackward0``."""
    return t.new_full(t.shape, s) - t


def rdiv_scalar(s, t: Tensor) -> Tensor:
    """``s / t`` in C++: ``empty_like(t).fill_(s).div_(t)``, a ``DivBackward0``."""
    return t.new_full(t.shape, s) / t


def maybe_multiply(g: Tensor, s) -> Tensor:
    """ATen's ``maybe_multiply``: ``g`` itself for a factor of 1."""
    return g if s == 1 else smul(g, s)


def _dims(dim, ndim: int) -> list:
    dims = [dim] if isinstance(dim, int) else list(dim)
    return sorted(d % ndim if ndim else 0 for d in dims)


def sum_backward(g: Tensor, sizes: tuple, dim, keepdim: bool) -> Tensor:
    """ATen's ``sum_backward``: unsqueeze the reduced dims (``unsqueeze_multiple``), expand."""
    if not keepdim and sizes and dim is not None:
        dims = _dims(dim, len(sizes))
        if dims:
            for d in dims:
                g = g.unsqueeze(d)
    return g.expand(sizes)


# --- arithmetic ------------------------------------------------------------------------------


@formula("add", "sub", "rsub")
def _add_sub(ctx):
    alpha = ctx.static.get("alpha", 1)
    g = ctx.grad
    out = {}
    name = ctx.op.name
    if ctx.needs("self"):
        out["self"] = maybe_multiply(-g, alpha) if name == "rsub" else g
    if name != "rsub" and ctx.needs("other"):
        out["other"] = maybe_multiply(-g if name == "sub" else g, alpha)
    return out


@formula("mul")
def _mul(ctx):
    g, out = ctx.grad, {}
    if ctx.needs("self"):
        out["self"] = g * _conj(ctx["other"])
    if ctx.needs("other"):
        out["other"] = g * _conj(ctx["self"])
    return out


@formula("div")
def _div(ctx):
    g, out = ctx.grad, {}
    other = ctx["other"]
    if ctx.needs("self"):
        out["self"] = g / _conj(other)
    if ctx.needs("other"):
        out["other"] = -g * _conj((ctx["self"] / other) / other)
    return out


@formula("nn.mul_scalar")
def _mul_scalar(ctx):
    return {"self": smul(ctx.grad, _conj(ctx["other"]))}


@formula("nn.div_scalar")
def _div_scalar(ctx):
    return {"self": sdiv(ctx.grad, _conj(ctx["other"]))}


@formula("nn.add_scalar")
def _add_scalar(ctx):
    return {"self": ctx.grad}


@formula("neg")
def _neg(ctx):
    return {"self": ctx.grad.neg()}


@formula("pow_scalar")
def _pow_scalar(ctx):
    self, e = ctx["self"], ctx.static["exponent"]
    if e == 0:
        return {"self": self.new_zeros(self.shape)}
    return {"self": ctx.grad * _conj(smul(self.pow(e - 1), e))}


@formula("pow_tensor")
def _pow_tensor(ctx):
    self, e, g, out = ctx["self"], ctx["exponent"], ctx.grad, {}
    zero = g.new_zeros(())
    if ctx.needs("self"):
        out["self"] = _where(e == 0.0, zero, g * _conj(e * self.pow(ssub(e, 1))))
    if ctx.needs("exponent"):
        cond = (self == 0).logical_and(e >= 0)
        result = ctx.saved_result(self.pow(e))
        out["exponent"] = g * _where(cond, zero, _conj(result * self.log()))
    return out


@formula("rpow")
def _rpow(ctx):
    base, e, g = ctx["base"], ctx["exponent"], ctx.grad
    result = ctx.saved_result(_rpow_call(base, e))
    if base == 0:
        zero = g.new_zeros(())
        return {"exponent": g * _where(e >= 0, zero, _conj(smul(result, _log(base))))}
    return {"exponent": g * _conj(smul(result, _log(base)))}


# --- unary -----------------------------------------------------------------------------------


@formula("reciprocal")
def _reciprocal(ctx):
    r = ctx.result
    return {"self": -ctx.grad * _conj(r * r)}


@formula("exp")
def _exp(ctx):
    return {"self": ctx.grad * _conj(ctx.result)}


@formula("log")
def _log_formula(ctx):
    return {"self": ctx.grad.div(_conj(ctx["self"]))}


@formula("sqrt")
def _sqrt(ctx):
    return {"self": ctx.grad / smul(_conj(ctx.result), 2)}


@formula("rsqrt")
def _rsqrt(ctx):
    return {"self": smul(ctx.grad, -0.5) * _conj(ctx.result.pow(3))}


@formula("sin")
def _sin(ctx):
    return {"self": ctx.grad * _conj(ctx["self"].cos())}


@formula("cos")
def _cos(ctx):
    return {"self": ctx.grad * -_conj(ctx["self"].sin())}


@formula("abs")
def _abs(ctx):
    return {"self": ctx.grad * ctx["self"].sgn()}


# --- reductions ------------------------------------------------------------------------------


@formula("sum")
def _sum(ctx):
    s = ctx.static
    return {"self": sum_backward(ctx.grad, ctx.shape("self"), s.get("dim"), s.get("keepdim"))}


@formula("mean")
def _mean(ctx):
    s, shape = ctx.static, ctx.shape("self")
    dim = s.get("dim")
    n = 1
    if dim is None or (not isinstance(dim, int) and not len(dim)):
        for k in shape:
            n *= k
    else:
        for d in _dims(dim, len(shape)):
            n *= shape[d] if shape else 1
    return {"self": sdiv(sum_backward(ctx.grad, shape, dim, s.get("keepdim")), n)}


# --- helpers ---------------------------------------------------------------------------------


def _conj(t):
    """``t.conj()``: a real tensor (or number) itself."""
    if isinstance(t, _tensor.Tensor):
        return t.conj() if t._dtype.is_complex else t
    return t.conjugate() if isinstance(t, complex) else t


def _where(cond, a, b):
    from .api import FUNCTIONS

    return FUNCTIONS["where"](cond, a, b)


def ssub(t: Tensor, s) -> Tensor:
    """``t - s`` in C++: ``sub.Scalar``, ``SubBackward1``."""
    from .dispatch import dispatch

    return dispatch(OPS["formula.sub_scalar"], t, s)


OPS["formula.sub_scalar"] = OpDef(
    "formula.sub_scalar",
    lambda x, other: x - other,
    "SubBackward1",
    ("self", "other"),
    promote,
    edges=("self",),
)
FORMULAS["formula.sub_scalar"] = _add_scalar


def _log(s):
    """``Scalar::log``: C++'s ``std::log`` (``-inf`` at 0, NaN below)."""
    import numpy as np

    with np.errstate(divide="ignore", invalid="ignore"):
        v = np.log(np.complex128(s) if isinstance(s, complex) else np.float64(s))
    return complex(v) if isinstance(s, complex) else float(v)


def _rpow_call(base, e):
    return base**e
