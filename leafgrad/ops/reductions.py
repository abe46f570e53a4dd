"""Reductions, scans and selections (sum, max, var, sort, cumsum, ...) as PyTorch computes them.

Every op is a table entry whose forward is pure ``jax.numpy``; its gradient is JAX's VJP of that
forward. Where PyTorch's gradient rule is not the VJP of the obvious forward, the forward is
written so that it is:

- value-selecting ops (``max(dim)``, ``median(dim)``, ``kthvalue``, ``mode``, ``topk``, ``sort``,
  ``cummax``) compute an index first and gather with ``take_along_axis``: the VJP scatters the
  gradient to the selected index, as PyTorch's ``value_selecting_reduction_backward`` does;
- full ``max()``/``min()``/``median()`` spread the gradient evenly over the elements equal to the
  result (Note [Even spread]); ``amax``/``amin`` divide the gradient by the tie count as
  PyTorch's ``scale_grad_by_count`` does (Note [Tie counts]);
- ``var`` centres on a mean behind ``stop_gradient``: the VJP is then ``2 (x - mean) g / dof``,
  PyTorch's ``var_backward`` (the dropped term is a sum of deviations, zero in exact arithmetic);
  ``std`` is 0-gradient where it is 0, as PyTorch masks it.
"""

from __future__ import annotations

import builtins
import functools
import math
import operator

import jax
import jax.numpy as jnp
from jax import lax

from .. import _autocast
from .. import _dtype as D
from .. import _errors as E
from .. import _written_dims as written_dims
from .._storage import view_grad_fn
from .._tensor import Tensor, _wrap_dim
from ..autograd.grad_mode import is_grad_enabled
from . import stl_order
from .api import tensor_op
from .dispatch import dispatch
from .reduce import (
    torch_cumprod,
    torch_cumsum,
    torch_mean,
    torch_prod,
    torch_sum,
    torch_var_stats,
)
from .table import OPS, OpDef, sum_rule

__all__ = ["return_type"]

# --- messages (PyTorch's text) ------------------------------------------------------------------
DOF_WARNING = (
    "{}(): degrees of freedom is <= 0. Correction should be strictly less than the reduction "
    "factor (input numel divided by output numel). (Triggered internally at "
    "/__w/pytorch/pytorch/aten/src/ATen/native/ReduceOps.cpp:1861.)"
)
# var_mean and std_mean name themselves; var and std share one message.
STD_VAR_DTYPE = "{} only support floating point and complex dtypes"
EMPTY_FULL = (
    "{}(): Expected reduction dim to be specified for input.numel() == 0. Specify the reduction "
    "dim with the 'dim' argument."
)
EMPTY_ARG = "{}(): Expected reduction dim to be specified for input.numel() == 0."
EMPTY_DIM = "{}(): Expected reduction dim {} to have non-zero size."
NO_COMPLEX = "{}(): does not support complex input"
NO_BOOL = "{}(): does not support bool input"
NOT_IMPLEMENTED = "\"{}\" not implemented for '{}'"
MEAN_OPT_DTYPE = (
    "mean(): could not infer output dtype. Optional dtype must be either a floating point or "
    "complex dtype. Got: {}"
)
NANMEAN_DTYPE = "nanmean(): expected input to have floating point or complex dtype but got {}"
TOPK_RANGE = "selected index k out of range"
KTH_RANGE = "kthvalue(): selected number k out of range for dimension {}"
SORT_COMPLEX = " Sort does not support complex dtypes on CPU"
AMINMAX_EMPTY = (
    "aminmax(): cannot compute aminmax over an empty dimension as the operation has no identity."
)
INVALID_ARGS = (
    "{}() received an invalid combination of arguments - got ({}), but expected one of:\n{}\n"
)
SUM_SIGNATURES = (
    " * (*, torch.dtype dtype = None)\n"
    " * (tuple of ints dim, bool keepdim = False, *, torch.dtype dtype = None)\n"
)
PROD_SIGNATURES = (
    " * (*, torch.dtype dtype = None)\n"
    " * (int dim, bool keepdim = False, *, torch.dtype dtype = None)\n"
)
MISSING_DIM = '{}() missing 1 required positional arguments: "dim"'
MAXIMUM_MISSING = "torch.{}(input, other): Tensor.{} is not available in leafgrad yet"


# --- named tuples ---------------------------------------------------------------------------------


def return_type(name: str, fields: tuple[str, ...]):
    """A tuple class printing as PyTorch's ``torch.return_types.<name>(...)`` structseq."""

    def __new__(cls, *values):
        return tuple.__new__(cls, values)

    def __repr__(self):
        body = ",\n".join(f"{f}={v!r}" for f, v in zip(fields, self))
        return f"torch.return_types.{name}(\n{body})"

    ns = {"__new__": __new__, "__repr__": __repr__, "__slots__": (), "_fields": fields}
    for i, f in enumerate(fields):
        ns[f] = property(operator.itemgetter(i))
    cls = type(name, (tuple,), ns)
    cls.__module__ = "leafgrad.return_types"
    return cls


_VI = ("values", "indices")
RETURN_TYPES = {
    n: return_type(n, _VI)
    for n in ("max", "min", "median", "nanmedian", "mode", "topk", "sort", "kthvalue")
    + ("cummax", "cummin")
}
RETURN_TYPES["aminmax"] = return_type("aminmax", ("min", "max"))


# --- argument parsing -----------------------------------------------------------------------------


def _type_name(x) -> str:
    return type(x).__name__


def _dims(t: Tensor, dim) -> tuple[int, ...]:
    """``dim`` (int, tuple or list) wrapped and checked; ``()`` for a 0-d tensor."""
    if isinstance(dim, Tensor):  # an integer tensor of one element (the parser took it)
        dim = int(dim)
    elif dim is None:  # the parser's None for an int list with a default: its default, []
        dim = ()
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    wrapped = tuple(_wrap_dim(d, t.ndim) for d in dims)
    for k, d in enumerate(wrapped):
        if d in wrapped[:k]:
            raise RuntimeError(E.DIM_REPEATED.format(d))
    return wrapped if t.ndim else ()


def _all_dims(t: Tensor, dim) -> tuple[int, ...]:
    """Reduced dims where ``None`` or an empty list means every dim."""
    if dim is None:
        return tuple(range(t.ndim))
    dims = _dims(t, dim)
    return dims if dims or not isinstance(dim, (tuple, list)) else tuple(range(t.ndim))


def _one_dim(t: Tensor, dim) -> int:
    return _wrap_dim(dim, t.ndim)


def _size(t: Tensor, dim: int) -> int:
    return t.shape[dim] if t.ndim else 1


def _check_named(name: str, dim, signatures: str) -> None:
    if isinstance(dim, str):
        raise TypeError(INVALID_ARGS.format(name, "str", signatures))


def _real_only(t: Tensor, message: str) -> None:
    if t.dtype.is_complex:
        raise RuntimeError(message)


# --- forwards -------------------------------------------------------------------------------------


def _moved(x, dim):
    """``x`` with ``dim`` last (0-d: as a length-1 vector)."""
    return x.reshape(1) if x.ndim == 0 else jnp.moveaxis(x, dim, -1)


def _restore(y, x, dim, keepdim, width=None):
    """Undo ``_moved`` on a result whose last axis was ``dim`` (``width`` None: reduced)."""
    if x.ndim == 0:
        return y.reshape(())
    if width is None:
        return jnp.expand_dims(y, dim) if keepdim else y
    return jnp.moveaxis(y, -1, dim)


def _gather(x, idx):
    """Values of ``x`` (last axis) at ``idx`` (last axis): the VJP scatters to ``idx``."""
    return jnp.take_along_axis(x, idx, axis=-1)


def _spread(x, m, axes, keepdim):
    """Note [Even spread]: a result equal to ``m`` whose VJP is ``g / count * (x == m)``.

    PyTorch's ``evenly_distribute_backward`` divides the gradient evenly over the elements equal
    to the result (the NaN elements when it is NaN). For a finite ``m``, ``max`` over the ties
    (every other element pushed to ``-inf``) is ``m`` exactly and JAX's VJP of ``max`` divides
    by the tie count; for ``inf``/``NaN`` the sum of the ties over their count is ``m`` too.
    """
    m = lax.stop_gradient(jnp.reshape(m, (1,) * x.ndim))  # a full reduction: keepdims shape
    mask = jnp.where(jnp.isnan(m), jnp.isnan(x), x == m)
    finite = jnp.isfinite(m)
    # the others at -inf: the next value below ``m`` is a subnormal for ``m == 0``, which XLA's
    # CPU flushes to zero, tying it with ``m``
    below = jnp.full_like(x, -jnp.inf)
    ties = jnp.where(finite, jnp.where(mask, x, below), jnp.zeros_like(x))
    exact = jnp.max(ties, axis=axes, keepdims=True)
    count = jnp.maximum(jnp.sum(mask, axis=axes, keepdims=True), 1).astype(x.dtype)
    other = jnp.sum(jnp.where(mask & ~finite, x, jnp.zeros_like(x)), axis=axes, keepdims=True)
    out = jnp.where(finite, exact, other / count)
    return out if keepdim else jnp.squeeze(out, axes)


def _max_all(x, minimum=False):
    if x.dtype == jnp.bool_ or jnp.issubdtype(x.dtype, jnp.integer):
        return jnp.min(x) if minimum else jnp.max(x)
    value = functools.partial(_max_all_value, minimum=minimum)
    return _evenly_read(value, x)


def _evenly_read(value, x):
    """``value(x)``, a full reduction to one of the elements (``max()``, ``median()``), with
    PyTorch's ``evenly_read_jvp`` as its forward formula."""
    from ..autograd import forward_ad

    def evenly_read_jvp(primals, tangents):
        # sum(mask * (t / count)), mask = x == result: a NaN result matches nothing (0 / 0),
        # where the backward spreads the gradient over the NaNs (Note [Forward formulas])
        (x,), (t,) = primals, tangents
        mask = (x == value(x)).astype(t.dtype)
        # (a product XLA would make a select of: Note [Tie counts]; a division by a broadcast
        # count it would make a product with the reciprocal: Note [True division])
        count = jnp.broadcast_to(jnp.sum(mask), t.shape)
        mask, count = lax.optimization_barrier((mask, count))
        return jnp.sum(mask * (t / count))

    return forward_ad.forward_formula(value, evenly_read_jvp, x)


def _max_all_value(x, minimum):
    axes = tuple(range(x.ndim))
    m = jnp.min(x) if minimum else jnp.max(x)
    m = jnp.where(jnp.any(jnp.isnan(x)), jnp.asarray(jnp.nan, x.dtype), m)
    return _spread(x, m, axes, False)


def _argbest(x, minimum):
    """PyTorch's index of max/min along the last axis: the first one; NaN wins.

    The best value, then the least position holding it (a NaN where the best is NaN): two plain
    reductions, about twice as fast on XLA:CPU as ``argmax``'s variadic one, same indices."""
    if x.dtype == jnp.bool_:
        x = x.astype(jnp.int8)
    best = (jnp.min if minimum else jnp.max)(x, axis=-1, keepdims=True)
    hit = x == best
    if jnp.issubdtype(x.dtype, jnp.inexact):
        hit = hit | (jnp.isnan(x) & jnp.isnan(best))
    n = x.shape[-1]
    iota = lax.broadcasted_iota(jnp.int32 if n < 2**31 else jnp.int64, x.shape, x.ndim - 1)
    return jnp.min(jnp.where(hit, iota, n), axis=-1).astype(jnp.int64)


def _max_dim(x, dim, keepdim, minimum=False):
    y = _moved(x, dim)
    idx = _argbest(y, minimum)[..., None]
    values = _gather(y, idx)[..., 0]
    return _restore(values, x, dim, keepdim), _restore(idx[..., 0], x, dim, keepdim)


def _chosen(x, axes, keepdim, minimum):
    return (jnp.min if minimum else jnp.max)(x, axis=axes, keepdims=keepdim)


# Note [Tie counts]: PyTorch's amax/amin gradient is ``scale_grad_by_count``, ``(grad / count) *
# mask``: a product, so a NaN gradient reaches every element of the slice, and a NaN result
# (count 0) makes the slice NaN. JAX's VJP of ``max`` is the same product, but XLA rewrites a
# product with a converted predicate into a select (0 where the mask is), so the tangent here
# multiplies by a mask behind an optimization barrier; ``(t / count) * mask`` transposes to
# ``(g * mask) / count``, bit for bit PyTorch's values.
_spread_ties = jax.custom_jvp(_chosen, nondiff_argnums=(1, 2, 3))


@_spread_ties.defjvp
def _spread_ties_jvp(axes, keepdim, minimum, primals, tangents):
    (x,), (t,) = primals, tangents
    out = _chosen(x, axes, keepdim, minimum)
    kept = out if keepdim else jnp.expand_dims(out, axes)
    mask = (x == kept).astype(x.dtype)
    count = jnp.sum(mask, axis=axes, keepdims=True)
    mask, count = lax.optimization_barrier((mask, count))
    return out, jnp.sum((t / count) * mask, axis=axes, keepdims=keepdim)


def _amax(x, dim, keepdim, minimum=False):
    axes = dim if dim and x.ndim else tuple(range(x.ndim))  # a 0-d tensor keeps dim (0,)
    if not jnp.issubdtype(x.dtype, jnp.inexact):
        return _chosen(x, axes, keepdim, minimum)
    return _spread_ties(x, tuple(axes), keepdim, minimum)


def _aminmax(x, dim, keepdim):
    # each output's gradient is amin's and amax's (Note [Tie counts]), and the two are summed
    return _amax(x, dim, keepdim, True), _amax(x, dim, keepdim)


def _argmax(x, dim, keepdim, minimum=False):
    if dim is None:
        idx = _argbest(x.reshape(-1), minimum)
        return idx.reshape((1,) * x.ndim) if keepdim else idx
    y = _moved(x, dim)
    return _restore(_argbest(y, minimum), x, dim, keepdim)


def _prod(x, dim=None, keepdim=False, dtype=None):
    if not jnp.issubdtype(x.dtype, jnp.inexact):
        axes = tuple(range(x.ndim)) if dim is None else dim
        return jnp.prod(x, axis=axes, keepdims=keepdim)
    return _float_prod(x, dim, keepdim)


# Note [Product gradients]: PyTorch's prod_backward is ``grad * (result / x)`` when no element
# of the whole input is 0, else ``prod_safe_zeros_backward``: the product of each element's
# exclusive cumulative products from both ends (all elements in order for ``dim=None``; there,
# two or more zeros give plain zeros outside create_graph, whose formula is in
# formulas_reduce.py). The derivative below is that weight times the tangent, summed: the same
# roundings and signed zeros as PyTorch's, and its forward-mode formula too. A NaN product with
# no zero gives NaN everywhere, as ``result / x`` does.
@functools.partial(jax.custom_jvp, nondiff_argnums=(1, 2))
def _float_prod(x, dim, keepdim):
    return torch_prod(x, dim, keepdim)


@_float_prod.defjvp
def _float_prod_jvp(dim, keepdim, primals, tangents):
    (x,), (tx,) = primals, tangents
    out = _float_prod(x, dim, keepdim)
    if x.ndim == 0:
        return out, tx
    axes = tuple(range(x.ndim)) if dim is None else dim
    result = out if keepdim else jnp.expand_dims(out, axes)
    zeros = x == 0
    weight = jnp.where(jnp.any(zeros), _prod_safe_zeros(x, dim), result / x)
    if dim is None:
        weight = jnp.where(jnp.sum(zeros) > 1, jnp.zeros_like(weight), weight)
    return out, jnp.sum(weight * tx, axis=axes, keepdims=keepdim)


def _prod_safe_zeros(x, dim):
    """ATen's ``prod_safe_zeros_backward`` weight along ``dim`` (all elements in order for
    ``None``): the product of the exclusive cumulative products from each end."""
    if dim is None:
        return _prod_safe_zeros(x.reshape(-1), (0,)).reshape(x.shape)
    (axis,) = dim
    n = x.shape[axis]
    if n <= 1:
        return jnp.ones_like(x)
    ones = jnp.ones_like(lax.slice_in_dim(x, 0, 1, axis=axis))
    before = jnp.concatenate([ones, lax.slice_in_dim(x, 0, n - 1, axis=axis)], axis)
    reverse = jnp.concatenate([ones, jnp.flip(lax.slice_in_dim(x, 1, n, axis=axis), axis)], axis)
    return torch_cumprod(before, axis) * jnp.flip(torch_cumprod(reverse, axis), axis)


def _nansum(x, dim=(), keepdim=False, dtype=None):
    if jnp.issubdtype(x.dtype, jnp.inexact):
        x = jnp.where(jnp.isnan(x), jnp.zeros_like(x), x)
    return torch_sum(x, dim, keepdim)


def _notnan_count(x, dim=(), keepdim=False):
    axes = dim if dim else tuple(range(x.ndim))
    return jnp.sum(~jnp.isnan(x), axis=axes, keepdims=keepdim, dtype=jnp.int64)


def _var_formula(x, dim, correction, keepdim):
    """PyTorch's variance: squared deviations from the (gradient-free) mean over ``n - c``."""
    axes = dim if dim else tuple(range(x.ndim))
    n = math.prod(x.shape[a] for a in axes)
    correction = 1 if correction is None else correction  # the default of the correction overload
    s = _squared_deviations(x, lax.stop_gradient(torch_mean(x, axes, True)), axes, keepdim)
    dof = n - correction if n > correction else 0
    if dim is None or x.ndim == 0:
        if dof:
            return _divide(s, dof)
        return _var_without_dof(x, axes, keepdim)  # no degrees of freedom
    # PyTorch's var_backward divides by the count of its ``dim`` less the correction, which may
    # be 0 or negative: ``dim=[]`` counts one element
    grad_dof = (1 if dim == () else n) - correction
    if grad_dof == dof:
        return _divide(s, dof)
    return _divide_with_grad(s, dof, grad_dof)


def _squared_deviations(x, mean, axes, keepdim):
    d = x - mean
    sq = (d.real * d.real + d.imag * d.imag) if jnp.iscomplexobj(d) else d * d
    return torch_sum(sq, axes, keepdim)


def _divide(s, dof):
    """``s / dof`` as a division (the barrier keeps XLA from multiplying by ``1 / dof``)."""
    return s / lax.optimization_barrier(jnp.full(s.shape, dof, s.dtype))


@functools.partial(jax.custom_jvp, nondiff_argnums=(1, 2))
def _divide_with_grad(s, dof, grad_dof):
    """``s / dof`` whose derivative is ``ds / grad_dof``."""
    return _divide(s, dof)


@_divide_with_grad.defjvp
def _divide_with_grad_jvp(dof, grad_dof, primals, tangents):
    return _divide(primals[0], dof), _divide(tangents[0], grad_dof)


@functools.partial(jax.custom_jvp, nondiff_argnums=(1, 2))
def _var_without_dof(x, axes, keepdim):
    """A variance without degrees of freedom (``dim=None``): the sum of squared deviations over
    0, with PyTorch's derivative ``where(x == mean, nan, inf)`` (its ``var_backward``)."""
    return _divide(_squared_deviations(x, torch_mean(x, axes, True), axes, keepdim), 0)


@_var_without_dof.defjvp
def _var_without_dof_jvp(axes, keepdim, primals, tangents):
    (x,), (tx,) = primals, tangents
    out = _var_without_dof(x, axes, keepdim)
    weight = jnp.where(x == torch_mean(x, axes, True), jnp.nan, jnp.inf).astype(out.dtype)
    t = weight * (jnp.real(tx) if jnp.iscomplexobj(tx) else tx)  # a real weight: inf + 0j
    return out, jnp.sum(t, axis=axes, keepdims=keepdim)


def _std_formula(x, dim, correction, keepdim):
    v = _var_formula(x, dim, correction, keepdim)
    zero = lax.stop_gradient(v) == 0
    # PyTorch masks the gradient where std is 0; sqrt's VJP there would be 0 * inf.
    return jnp.where(zero, jnp.zeros_like(v), jnp.sqrt(jnp.where(zero, jnp.ones_like(v), v)))


def _var_mean_formula(x, dim, correction, keepdim):
    axes = dim if dim else tuple(range(x.ndim))
    return _var_formula(x, dim, correction, keepdim), _welford_mean(x, tuple(axes), keepdim)


def _std_mean_formula(x, dim, correction, keepdim):
    axes = dim if dim else tuple(range(x.ndim))
    return _std_formula(x, dim, correction, keepdim), _welford_mean(x, tuple(axes), keepdim)


def _exact_stats(formula, sqrt: bool, welford: bool):
    """var/std/var_mean/std_mean: the value of PyTorch's CPU kernels for float32 and float64
    (Note [Variance order]), the derivative of ``formula`` (PyTorch's, written in JAX)."""

    @functools.partial(jax.custom_jvp, nondiff_argnums=(1, 2, 3))
    def op(x, dim, correction, keepdim):
        if x.dtype not in (jnp.float32, jnp.float64) or x.size == 0:
            return formula(x, dim, correction, keepdim)
        axes = tuple(sorted(dim)) if dim else tuple(range(x.ndim))
        correction = 1 if correction is None else correction
        var, mean = torch_var_stats(x, axes, correction, keepdim, sqrt, welford)
        return (var, mean) if welford else var

    @op.defjvp
    def _op_jvp(dim, correction, keepdim, primals, tangents):
        (x,), (tx,) = primals, tangents
        out = op(x, dim, correction, keepdim)
        factor = _var_grad_factor(x, dim, correction)
        if factor is None or x.dtype not in (jnp.float32, jnp.float64):
            _, dot = jax.jvp(lambda x: formula(x, dim, correction, keepdim), primals, tangents)
            return out, dot
        # PyTorch's var_backward, ``(2 / dof) * grad * (x - x.mean(dim))``, as the transpose
        # of this derivative: the same operations in the same order
        axes = tuple(sorted(dim)) if dim else tuple(range(x.ndim))
        # (var_mean's and std_mean's gradients add the mean's to this one, which XLA's CPU
        # compiler fuses into a multiply-add: those may differ from PyTorch's in the last bit)
        deviation = x - torch_mean(x, axes, True)
        dot = jnp.sum(deviation * tx, axis=axes, keepdims=keepdim) * jnp.asarray(factor, x.dtype)
        if sqrt:  # std_backward: grad / (2 * std), 0 where std is 0
            std = out[0] if welford else out
            zero = std == 0
            dot = jnp.where(zero, jnp.zeros_like(dot), dot / jnp.where(zero, 1, std * 2))
        if not welford:
            return out, dot
        _, mean_dot = jax.jvp(lambda v: torch_mean(v, axes, keepdim), (x,), (tx,))
        return out, (dot, mean_dot)

    return op


def _var_grad_factor(x, dim, correction):
    """var_backward's ``2 / dof``, or None where the formula's own derivative is kept (a full
    reduction without degrees of freedom: ``where(x == mean, nan, inf)``)."""
    correction = 1 if correction is None else correction
    axes = dim if dim else tuple(range(x.ndim))
    n = math.prod(x.shape[a] for a in axes)
    if dim is None or x.ndim == 0:
        dof = n - correction
        return 2 / dof if dof > 0 else None
    dof = (1 if dim == () else n) - correction  # ``dim=[]`` counts one element
    return math.inf if dof == 0 else 2 / dof


_var = _exact_stats(_var_formula, sqrt=False, welford=False)
_std = _exact_stats(_std_formula, sqrt=True, welford=False)
_var_mean = _exact_stats(_var_mean_formula, sqrt=False, welford=True)
_std_mean = _exact_stats(_std_mean_formula, sqrt=True, welford=True)


# Note [Welford means]: var_mean and std_mean's mean is the running mean of PyTorch's Welford
# reduction, ``m += (x - m) / n`` over the slice in order: once an infinity made it infinite,
# the next element makes it NaN (``inf - inf``), so it is infinite only where the one infinite
# element comes last (the plain mean: infinite wherever one is). Finite slices give the plain
# mean's value; the derivative is the mean's.
@functools.partial(jax.custom_jvp, nondiff_argnums=(1, 2))
def _welford_mean(x, axes, keepdim):
    mean = torch_mean(x, axes, keepdim)
    if not jnp.issubdtype(x.dtype, jnp.floating) or not axes or x.size == 0:
        return mean
    rest = [d for d in range(x.ndim) if d not in axes]
    moved = jnp.transpose(x, (*rest, *axes))
    last = moved.reshape((*moved.shape[: len(rest)], -1))[..., -1]
    infinite = jnp.sum(jnp.isinf(x), axis=axes, keepdims=keepdim)
    if keepdim:
        last = jnp.expand_dims(last, axes)
    # a NaN anywhere in the slice keeps the running mean NaN
    nan = jnp.any(jnp.isnan(x), axis=axes, keepdims=keepdim)
    only_last = (infinite == 1) & jnp.isinf(last) & ~nan
    running = jnp.where(only_last, last, jnp.full_like(mean, jnp.nan))
    return jnp.where(infinite == 0, mean, running)


@_welford_mean.defjvp
def _welford_mean_jvp(axes, keepdim, primals, tangents):
    _, dot = jax.jvp(lambda x: torch_mean(x, axes, keepdim), primals, tangents)
    return _welford_mean(primals[0], axes, keepdim), dot


def _logsumexp(x, dim, keepdim):
    axes = dim if dim else tuple(range(x.ndim))
    m = lax.stop_gradient(jnp.max(x, axis=axes, keepdims=True)) if x.size else None
    if m is None:
        return jnp.log(torch_sum(jnp.exp(x), axes, keepdim))
    m = jnp.where(jnp.isinf(m), jnp.zeros_like(m), m)  # PyTorch's masked max
    s = jnp.log(torch_sum(jnp.exp(x - m), axes, keepdim))
    return s + (m if keepdim else jnp.squeeze(m, axes))


def _cumsum(x, dim, dtype=None):
    # along a dim of size 1 the input itself, as PyTorch's backward hands the gradient on
    # unchanged there (an expanded gradient stays one)
    return torch_cumsum(x, dim) if x.ndim and x.shape[dim] != 1 else x


def _cumprod(x, dim, dtype=None):
    if x.ndim == 0 or x.size <= 1 or x.shape[dim] == 1:
        return x  # as _cumsum
    if not jnp.issubdtype(x.dtype, jnp.floating):
        return jnp.cumprod(x, axis=dim)
    return _float_cumprod(x, dim)


# Note [Running product gradients]: without a zero anywhere in the input, PyTorch's cumprod
# derivative is ``cumsum(t / x) * result`` forward (cumprod_jvp) and ``reversed_cumsum(result *
# grad) / x`` backward, the transpose of the same steps, so one rule gives both, with PyTorch's
# roundings (Note [Scan order]). With a zero, the derivative of the running product itself is
# taken (PyTorch's masked formulas, same values up to rounding; +0 after the first zero, as
# theirs leaves it). A ``lax.cond`` picks the rule,
# so the other one's transpose adds nothing (a signed zero would be lost in a sum); its operands
# are made safe (ones) for a vmap, which runs both branches.
@functools.partial(jax.custom_jvp, nondiff_argnums=(1,))
def _float_cumprod(x, dim):
    return torch_cumprod(x, dim)


@_float_cumprod.defjvp
def _float_cumprod_jvp(dim, primals, tangents):
    (x,), (tx,) = primals, tangents
    out = _float_cumprod(x, dim)
    zero = jnp.any(x == 0)
    one = jnp.ones_like(x)

    def plain(tx):
        return torch_cumsum(tx / jnp.where(zero, one, x), dim) * jnp.where(zero, one, out)

    def with_zero(tx):
        # PyTorch's masked formula leaves the gradient after the first zero at +0: the tangent
        # is dropped there (its transpose gives +0, not the signed zero of a product)
        nil = x == 0
        after = torch_cumsum(nil.astype(jnp.int32), dim) - nil.astype(jnp.int32) >= 1
        tx = jnp.where(after, jnp.zeros_like(tx), tx)
        return jax.jvp(lambda v: torch_cumprod(v, dim), (jnp.where(zero, x, one),), (tx,))[1]

    return out, lax.cond(zero, with_zero, plain, tx)


def _cumbest(x, dim, minimum=False):
    """cummax/cummin: the running index (ties and NaN take the later index), then a gather."""
    y = _moved(x, dim)
    key = y.astype(jnp.int8) if y.dtype == jnp.bool_ else y
    if minimum:
        key = -key if jnp.issubdtype(key.dtype, jnp.inexact) else ~key  # order-reversing
    idx = jnp.broadcast_to(jnp.arange(y.shape[-1], dtype=jnp.int64), y.shape)

    def pick(a, b):
        (va, ia), (vb, ib) = a, b
        if jnp.issubdtype(va.dtype, jnp.inexact):
            take_b = jnp.isnan(vb) | (~jnp.isnan(va) & (vb >= va))
        else:
            take_b = vb >= va
        return jnp.where(take_b, vb, va), jnp.where(take_b, ib, ia)

    _, best = lax.associative_scan(pick, (key, idx), axis=key.ndim - 1)
    values = _gather(y, best)
    return _restore(values, x, dim, False, 0), _restore(best, x, dim, False, 0)


def _logcumsumexp(x, dim):
    if x.ndim and x.shape[dim] == 1:
        # PyTorch's backward computes a new gradient here (it is not handed on)
        return lax.cumlogsumexp(x, axis=dim) * 1
    return lax.cumlogsumexp(x, axis=dim) if x.ndim else x


def _order_key(y):
    """Integers in the order PyTorch sorts ``y``'s real values: NaN the largest (every NaN
    equal), -0.0 equal to 0.0; a float's bits read as a signed integer, the negative ones with
    their magnitude bits flipped."""
    if y.dtype == jnp.bool_:
        return y.astype(jnp.int8)
    if not jnp.issubdtype(y.dtype, jnp.floating):
        return y
    ints = {2: jnp.int16, 4: jnp.int32, 8: jnp.int64}[y.dtype.itemsize]
    y = jnp.where(y == 0, jnp.zeros((), y.dtype), y)
    y = jnp.where(jnp.isnan(y), jnp.full((), jnp.nan, y.dtype), y)
    bits = lax.bitcast_convert_type(y, ints)
    return jnp.where(bits < 0, bits ^ jnp.array(jnp.iinfo(ints).max, ints), bits)


def _sort_index(y, descending):
    """Stable argsort of the last axis; NaN is the largest value, as in PyTorch; descending,
    equal values stay in index order (NaN first).

    XLA's sort with a float comparator is several times slower on CPU than an integer sort of
    one operand, so the values become order keys (``_order_key``; ``~`` reverses them) and, up
    to 32 bits, each is packed with its index into one int64 (key above, index below), all
    distinct: their sorted order is the stable one. Wider keys sort with the index as a second
    key.
    """
    if jnp.issubdtype(y.dtype, jnp.complexfloating):
        return jnp.argsort(y, axis=-1, stable=True, descending=descending)
    n = y.shape[-1]
    key = _order_key(y)
    index = lax.broadcasted_iota(jnp.int64, y.shape, y.ndim - 1)
    if key.dtype.itemsize <= 4 and key.dtype != jnp.uint32 and n <= 0xFFFFFFFF:
        high = key.astype(jnp.int64)
        if descending:
            high = ~high
        packed = lax.sort(lax.shift_left(high, jnp.int64(32)) | index, dimension=y.ndim - 1)
        order = packed & jnp.int64(0xFFFFFFFF)
    else:
        if descending:
            key = ~key
        order = lax.sort((key, index), dimension=y.ndim - 1, num_keys=2)[1]
    return order.astype(jnp.arange(n).dtype)


def _sort(x, dim, descending, stable=False):
    y = _moved(x, dim)
    idx = _sort_index(y, descending)
    n = y.shape[-1]
    if not stable and n > 16 and y.size:  # std::sort: up to 16 elements an insertion sort
        less = stl_order.nan_first_greater if descending else stl_order.nan_last_less
        need = _ties_among(lax.stop_gradient(y), idx, n)
        row = lambda r: stl_order.sort_row(r, less)[1]  # noqa: E731
        idx = _by_rows(lax.stop_gradient(y), idx, need, row)
    return _restore(_gather(y, idx), x, dim, False, 0), _restore(idx, x, dim, False, 0)


# dtypes whose values float32 holds exactly, in the same order: XLA's CPU ``top_k`` is fast on
# float32 only (a sort elsewhere)
_TOP_K_EXACT = frozenset(
    jnp.dtype(d) for d in (jnp.float32, jnp.float16, jnp.bfloat16, jnp.int8, jnp.uint8, jnp.int16)
)


def _topk(x, k, dim, largest, sorted=True):
    y = _moved(x, dim)
    n = y.shape[-1]
    if k and n > 1 and y.size and y.dtype in _TOP_K_EXACT and (sorted or k < 2 or k * 64 <= n):
        # Note [Top k by values]: without two equivalent values among the first k + 1 nor a
        # NaN in the row, the values alone order the first k: ``lax.top_k`` gives them (ties,
        # NaN and -0.0 / 0.0 it orders its own way, so a row with one takes the sort below).
        # The barrier keeps XLA from fusing the values into their consumers, which turns its
        # CPU top-k (a custom call) back into a whole sort.
        z = lax.stop_gradient(y).astype(jnp.float32)
        head, fast = lax.optimization_barrier(
            lax.top_k(z if largest else -z, builtins.min(k + 1, n))
        )
        odd = jnp.any(head[..., 1:] == head[..., :-1], axis=-1) | jnp.any(jnp.isnan(z), axis=-1)
        idx = lax.cond(
            jnp.any(odd),
            lambda: _topk_index(y, k, largest, sorted),
            lambda: fast[..., :k].astype(jnp.arange(n).dtype),
        )
    else:
        idx = _topk_index(y, k, largest, sorted)
    return _restore(_gather(y, idx), x, dim, False, k), _restore(idx, x, dim, False, k)


def _topk_index(y, k, largest, sorted):
    """``topk``'s indices along the last axis of ``y``, ordered as PyTorch's CPU kernel orders
    them (Note [libstdc++ orderings])."""
    order = _sort_index(y, largest)
    idx = order[..., :k]
    n = y.shape[-1]
    if k and n > 1 and y.size:
        # Without two equivalent values among the first k + 1 the order is fixed by the values
        # alone; otherwise (or with nth_element's own order: sorted=False) libstdc++'s decides
        need = _ties_among(lax.stop_gradient(y), order, builtins.min(k + 1, n))
        if not sorted and k >= 2 and k * 64 > n:
            need = jnp.ones_like(need)
        row = functools.partial(stl_order.topk_row, k=k, largest=largest, sorted=sorted)
        idx = _by_rows(lax.stop_gradient(y), idx, need, row)
    return idx


def _ties_among(y, order, m):
    """Whether each row has two equivalent values (equal, or both NaN) among its first ``m`` in
    sorted ``order``: where PyTorch's unstable CPU algorithms, not the values, order them."""
    head = jnp.take_along_axis(y, order[..., :m], axis=-1)
    same = head[..., 1:] == head[..., :-1]
    if jnp.issubdtype(y.dtype, jnp.inexact):
        same = same | (jnp.isnan(head[..., 1:]) & jnp.isnan(head[..., :-1]))
    return jnp.any(same, axis=-1)


def _by_rows(y, fast, need, row):
    """``fast`` (a stable sort's indices) with the rows where ``need`` holds replaced by
    ``row(values)``, the copy of libstdc++'s algorithms (Note [libstdc++ orderings]), run one
    row at a time (``lax.map``: under ``vmap`` their branches would all run) and only when some
    row needs it."""
    n, m = y.shape[-1], fast.shape[-1]
    rows, need, flat = y.reshape(-1, n), need.reshape(-1), fast.reshape(-1, m)

    def one(args):
        r, nd, f = args
        return lax.cond(nd, lambda: row(r), lambda: f)

    exact = lax.cond(jnp.any(need), lambda: lax.map(one, (rows, need, flat)), lambda: flat)
    return exact.reshape(fast.shape)


def _rank_select(y, pos):
    """Note [Selection by bits]: the index of the value at sorted position ``pos`` (an integer
    array of ``y``'s shape less its last axis) along the last axis of ``y``, and whether it is
    the only value equivalent to it in its row, without sorting.

    ``kthvalue`` and ``median`` need one sorted position of each row, not the whole order: a
    radix select over the order keys (``_order_key``, read as unsigned integers in the same
    order) fixes the selected key one bit at a time from the top, counting the keys below each
    candidate (one comparison and one sum per bit; 32 passes for float32). Where the selected
    value is unique in its row, its position alone is the index PyTorch gives, whatever order
    its algorithm visits the row in; where it is tied (or ``-0.0`` meets ``0.0``, or NaN meets
    NaN), the caller takes its exact path. About 3.5x faster than the whole sort on 512 x 512
    float32."""
    key = _order_key(y)
    bits = key.dtype.itemsize * 8
    unsigned = {8: jnp.uint8, 16: jnp.uint16, 32: jnp.uint32, 64: jnp.uint64}[bits]
    if jnp.issubdtype(key.dtype, jnp.signedinteger):
        key = lax.bitcast_convert_type(key, unsigned) ^ jnp.array(1 << (bits - 1), unsigned)
    pos = pos.astype(jnp.int64)

    def step(i, found):
        shift = (bits - 1 - i).astype(unsigned)
        candidate = found | lax.shift_left(jnp.array(1, unsigned), shift)
        below = jnp.sum(key < candidate[..., None], axis=-1, dtype=jnp.int64)
        return jnp.where(below <= pos, candidate, found)

    found = lax.fori_loop(0, bits, step, jnp.zeros(y.shape[:-1], unsigned))
    hit = key == found[..., None]
    n = y.shape[-1]
    iota = lax.broadcasted_iota(jnp.int64, y.shape, y.ndim - 1)
    idx = jnp.min(jnp.where(hit, iota, n), axis=-1)
    return idx, jnp.sum(hit, axis=-1) == 1


def _unique_or(y, pos, exact):
    """``_rank_select``'s indices (with a trailing axis of 1) where every row's selected value
    is unique, else ``exact()``."""
    fast, unique = _rank_select(lax.stop_gradient(y), pos)
    return lax.cond(jnp.all(unique), lambda: fast[..., None], exact)


def _position_index(y, pos):
    """The index of the stable-sorted position ``pos`` of each row of ``y`` (a trailing axis of
    1): by bits where its value is unique, else from the sort."""

    def exact():
        order = _sort_index(y, False)
        return jnp.take_along_axis(order, pos[..., None], axis=-1)

    return _unique_or(y, pos, exact) if y.size else exact()


def _select_at(x, dim, keepdim, position):
    """Gather of the stable-sorted position ``position(y)`` along ``dim``."""
    y = _moved(x, dim)
    idx = _position_index(y, position(y))
    values = _gather(y, idx)[..., 0]
    return _restore(values, x, dim, keepdim), _restore(idx[..., 0], x, dim, keepdim)


def _nan_count(y):
    if jnp.issubdtype(y.dtype, jnp.inexact):
        return jnp.sum(jnp.isnan(y), axis=-1)
    return jnp.zeros(y.shape[:-1], jnp.int64)


def _median_position(y):
    n = y.shape[-1]
    nans = _nan_count(y)
    # Any NaN makes the median NaN: the first NaN in sorted order.
    return jnp.where(nans > 0, n - nans, (n - 1) // 2)


def _nanmedian_position(y):
    valid = y.shape[-1] - _nan_count(y)
    return jnp.maximum(valid - 1, 0) // 2


def _median_dim(x, dim, keepdim):
    return _select_at(x, dim, keepdim, _median_position)


def _nth_of_equivalent(n):
    """The position libstdc++'s ``std::nth_element(first, first, last)`` leaves at ``first`` when
    every element compares equivalent: PyTorch's ``nanmedian(dim)`` index of an all-NaN row.

    ``__introselect`` moves the middle element to the front (``__move_median_to_first``), swaps
    pairs inwards from both ends (``__unguarded_partition``) and keeps the left part until at
    most 3 remain (an insertion sort, which moves nothing)."""
    p = list(range(n))
    last = n
    while last > 3:
        mid = last // 2
        p[0], p[mid] = p[mid], p[0]
        lo, hi = 1, last
        while True:
            hi -= 1
            if lo >= hi:
                break
            p[lo], p[hi] = p[hi], p[lo]
            lo += 1
        last = lo
    return p[0] if n else 0


def _nanmedian_dim(x, dim, keepdim):
    y = _moved(x, dim)
    idx = _position_index(y, _nanmedian_position(y))
    if jnp.issubdtype(y.dtype, jnp.inexact):
        all_nan = jnp.all(jnp.isnan(y), axis=-1, keepdims=True)
        idx = jnp.where(all_nan, jnp.int64(_nth_of_equivalent(y.shape[-1])), idx)
    values = _gather(y, idx)[..., 0]
    return _restore(values, x, dim, keepdim), _restore(idx[..., 0], x, dim, keepdim)


def _swap(a, idx, c, i, j):
    """Swap positions ``i`` and ``j`` of ``a`` and ``idx`` where ``c`` holds (else a no-op)."""
    j = jnp.where(c, j, i)
    ai, aj, ii, ij = a[i], a[j], idx[i], idx[j]
    return a.at[i].set(aj).at[j].set(ai), idx.at[i].set(ij).at[j].set(ii)


def _quick_select_row(a, k):
    """Note [Quickselect]: the index PyTorch's CPU ``kthvalue`` picks among tied values.

    A step-for-step copy of ``quick_select_template`` (aten/src/ATen/native/SortingUtils.h: a
    median-of-three Hoare partition) as ``lax`` loops, swapping the positions along with the
    values; the result is the original position of the element that lands at ``k``. The inner
    scans carry bounds PyTorch's sentinels make redundant, so a masked-off row (under ``vmap``)
    still terminates.
    """
    n = a.shape[0]
    idx = jnp.arange(n, dtype=jnp.int64)
    gt = stl_order.nan_first_greater  # PyTorch's gt_or_nan: NaN is the largest value

    def outer(s):
        a, idx, lo, hi, _ = s
        small = hi <= lo + 1
        a, idx = _swap(a, idx, small & (hi == lo + 1) & gt(a[lo], a[hi]), lo, hi)
        big = ~small
        lo1 = jnp.minimum(lo + 1, hi)
        a, idx = _swap(a, idx, big, (lo + hi) >> 1, lo1)
        a, idx = _swap(a, idx, big & gt(a[lo1], a[hi]), lo1, hi)
        a, idx = _swap(a, idx, big & gt(a[lo], a[hi]), lo, hi)
        a, idx = _swap(a, idx, big & gt(a[lo1], a[lo]), lo1, lo)
        piv = a[lo]

        def part(p):
            a, idx, i, j, _ = p
            i = lax.while_loop(lambda i: (i < hi) & gt(piv, a[i]), lambda i: i + 1, i + 1)
            j = lax.while_loop(lambda j: (j > lo) & gt(a[j], piv), lambda j: j - 1, j - 1)
            stop = j < i
            a, idx = _swap(a, idx, ~stop, i, j)
            return a, idx, i, j, stop

        a, idx, i, j, _ = lax.while_loop(lambda p: ~p[4], part, (a, idx, lo1, hi, small))
        a, idx = _swap(a, idx, big, lo, j)
        lo = jnp.where(big & (j <= k), i, lo)
        hi = jnp.where(big & (j >= k), j - 1, hi)
        return a, idx, lo, hi, small

    init = (a, idx, jnp.int64(0), jnp.int64(n - 1), jnp.bool_(False))
    return lax.while_loop(lambda s: ~s[4], outer, init)[1][k]


def _quick_select(y, k):
    """``_quick_select_row`` over the last axis of ``y`` (a batch of rows)."""
    rows = lax.stop_gradient(y).reshape(-1, y.shape[-1])
    picked = jax.vmap(lambda r: _quick_select_row(r, k))(rows)
    return picked.reshape(y.shape[:-1])


def _kthvalue(x, k, dim, keepdim):
    y = _moved(x, dim)
    n = y.shape[-1]
    if y.size and n > 1:
        # Where the k-th value in sorted order has no equal, it alone decides the index (found
        # without a sort: Note [Selection by bits]); the rows where it has one take the copy
        # of PyTorch's quickselect (Note [Quickselect])
        def exact():
            order = _sort_index(lax.stop_gradient(y), False)
            lo = builtins.max(k - 2, 0)
            near = order[..., lo : builtins.min(k + 1, n)]
            need = _ties_among(lax.stop_gradient(y), near, near.shape[-1])
            row = lambda r: _quick_select_row(r, k - 1)[None]  # noqa: E731
            return _by_rows(lax.stop_gradient(y), order[..., k - 1 : k], need, row)

        idx = _unique_or(y, jnp.full(y.shape[:-1], k - 1), exact)
    else:
        idx = _quick_select(y, k - 1)[..., None]
    values = _gather(y, idx)[..., 0]
    return _restore(values, x, dim, keepdim), _restore(idx[..., 0], x, dim, keepdim)


def _median_all(x, nan_skip=False):
    if x.size == 0:  # PyTorch: the median of nothing is NaN
        return jnp.full((), jnp.nan, x.dtype)
    if not jnp.issubdtype(x.dtype, jnp.inexact):
        return _median_all_value(x, nan_skip)
    return _evenly_read(functools.partial(_median_all_value, nan_skip=nan_skip), x)


def _median_all_value(x, nan_skip):
    y = x.reshape(-1)
    pos = (_nanmedian_position if nan_skip else _median_position)(y)
    idx = _unique_or(y, pos, lambda: _sort_index(y, False)[pos][None])
    m = y[idx[0]]
    if not jnp.issubdtype(x.dtype, jnp.inexact):
        return m
    return _spread(x, m, tuple(range(x.ndim)), False)


def _insertion_sorted_row(a):
    """The order libstdc++'s ``__insertion_sort`` leaves ``a`` in with ``<`` (what ``std::sort``
    runs on 16 elements or fewer), NaNs included: no comparison with a NaN holds, so a NaN stops
    each insertion where it stands. Returns ``(values, original indices)``."""
    n = a.shape[0]
    k = jnp.arange(n)

    def insert(i, state):
        a, idx = state
        v, vi = a[i], idx[i]
        # v < a[0]: to the front; else after the nearest j < i with !(v < a[j])
        stop = jnp.max(jnp.where(~(v < a) & (k < i), k, -1))
        p = jnp.where(v < a[0], 0, stop + 1)
        moved = (k > p) & (k <= i)
        a = jnp.where(k == p, v, jnp.where(moved, jnp.roll(a, 1), a))
        idx = jnp.where(k == p, vi, jnp.where(moved, jnp.roll(idx, 1), idx))
        return a, idx

    return lax.fori_loop(1, n, insert, (a, k))


def _mode_row(a):
    """PyTorch's CPU mode kernel on one row: ``std::sort`` with ``<``, then the first longest run
    of equal values (a NaN is a run of its own) gives the value and the index of the run's last
    element. Up to 16 elements ``std::sort`` is one insertion sort (done here without a loop per
    element); longer rows take the copy of libstdc++'s introsort (Note [libstdc++
    orderings])."""
    n = a.shape[0]
    a, idx = _insertion_sorted_row(a) if n <= 16 else stl_order.sort_row(a)
    pos = jnp.arange(n)
    ends = jnp.concatenate([a[:-1] != a[1:], jnp.ones((1,), bool)])
    previous = jnp.concatenate([jnp.full((1,), -1), lax.cummax(jnp.where(ends, pos, -1))[:-1]])
    best = jnp.argmax(jnp.where(ends, pos - previous, -1))
    return idx[best]


def _mode(x, dim, keepdim):
    """The most frequent value (the smallest among equals), at the index PyTorch's sort leaves
    last among its occurrences."""
    y = _moved(x, dim)
    n = y.shape[-1]
    rows = lax.stop_gradient(y).reshape(-1, n)
    # the introsort's loops run a row at a time (under vmap every branch would run)
    idx = jax.vmap(_mode_row)(rows) if n <= 16 else lax.map(_mode_row, rows)
    idx = idx.reshape(y.shape[:-1])[..., None]
    values = _gather(y, idx)[..., 0]
    return _restore(values, x, dim, keepdim), _restore(idx[..., 0], x, dim, keepdim)


def _count_nonzero(x, dim):
    axes = dim if dim else tuple(range(x.ndim))  # PyTorch: ``dim=[]`` counts every element
    return jnp.sum(x != 0, axis=axes, dtype=jnp.int64)


def _any(x, dim, keepdim, every=False):
    axes = dim if dim is not None else tuple(range(x.ndim))
    fn = jnp.all if every else jnp.any
    return fn(x != 0, axis=axes, keepdims=keepdim)


# --- dtype rules ----------------------------------------------------------------------------------


def _keep(meta, static):
    return (None,), meta[0][0]


def _keep_pair(meta, static):
    return (None,), (meta[0][0], meta[0][0])


def _with_index(meta, static):
    return (None,), (meta[0][0], D.int64)


def _index(meta, static):
    return (None,), D.int64


def _float_of(meta, static):
    dt = meta[0][0]
    rt = dt if (dt.is_floating_point or dt.is_complex) else D.get_default_dtype()
    return (rt,), rt


def _real_result(meta, static):
    dt = meta[0][0]
    return (None,), dt.to_real() if dt.is_complex else dt


def _real_pair(meta, static):
    dt = meta[0][0]
    return (None,), (dt.to_real() if dt.is_complex else dt, dt)


def _any_rule(meta, static):
    return (None,), D.uint8 if meta[0][0] is D.uint8 else D.bool_


def _nan_count_rule(meta, static):
    return (None,), D.int64


def _name(base):
    return lambda **static: base


def _sort_name(stable=False, **_):
    """SortBackward1 when ``stable=`` is passed, else SortBackward0."""
    return "SortBackward1" if stable else "SortBackward0"


# what PyTorch's nodes save (``derivatives.yaml``): most reductions keep their input and result
_SELF_RESULT = ("self", "result")


def _selected_grad(indices, grad, shape, *, dim, keepdim=True, **_):
    """ATen's ``value_selecting_reduction_backward``: ``grad`` put into zeros of the input's
    ``shape`` at ``indices`` along ``dim`` (Note [Saved indices] in table.py); ``sort`` and
    ``topk`` keep the dim."""
    if not shape:  # a 0-d input: its value is the one selected (``topk(0)`` too, as PyTorch's)
        return grad.reshape(())
    if not keepdim:
        grad, indices = jnp.expand_dims(grad, dim), jnp.expand_dims(indices, dim)
    zeros = jnp.zeros(shape, grad.dtype)
    return jnp.put_along_axis(zeros, indices, grad, axis=dim, inplace=False)


def _op(name, forward, grad_fn, dtypes, saves=("result",), n_out=1, diff_out=None):
    return OpDef(
        name,
        forward,
        grad_fn if callable(grad_fn) else _name(grad_fn),
        ("self",),
        dtypes,
        saves={"self": saves} if saves else {},
        n_out=n_out,
        differentiable_outputs=diff_out,
        # An op without a grad_fn name (argmax, any, ...) has no derivative at all.
        differentiable=None if grad_fn else (),
        indices_vjp=_selected_grad if saves == ("indices",) else None,
    )


_OPS = [
    _op("max_all", _max_all, "MaxBackward1", _keep, saves=_SELF_RESULT),
    _op("min_all", lambda x: _max_all(x, True), "MinBackward1", _keep, saves=_SELF_RESULT),
    _op(
        "max_dim", _max_dim, "MaxBackward0", _with_index, n_out=2, diff_out=(0,), saves=("indices",)
    ),
    _op(
        "min_dim",
        lambda x, dim, keepdim: _max_dim(x, dim, keepdim, True),
        "MinBackward0",
        _with_index,
        n_out=2,
        diff_out=(0,),
        saves=("indices",),
    ),
    _op("amax", _amax, "AmaxBackward0", _keep, saves=_SELF_RESULT),
    _op(
        "amin",
        lambda x, dim, keepdim: _amax(x, dim, keepdim, True),
        "AminBackward0",
        _keep,
        saves=_SELF_RESULT,
    ),
    _op("aminmax", _aminmax, "AminmaxBackward0", _keep_pair, n_out=2, saves=_SELF_RESULT),
    _op("argmax", _argmax, "", _index, saves=()),
    _op("argmin", lambda x, dim, keepdim: _argmax(x, dim, keepdim, True), "", _index, saves=()),
    _op(
        "prod",
        _prod,
        lambda dim=None, **_: "ProdBackward0" if dim is None else "ProdBackward1",
        sum_rule,
        saves=_SELF_RESULT,
    ),
    _op("nansum", _nansum, "NansumBackward0", sum_rule, saves=("self",)),
    _op("notnan_count", _notnan_count, "", _nan_count_rule, saves=()),
    _op("var", _var, "VarBackward0", _real_result, saves=("self",)),
    _op("std", _std, "StdBackward0", _real_result, saves=_SELF_RESULT),
    _op("var_mean", _var_mean, "VarMeanBackward0", _real_pair, saves=("self",)),
    _op("std_mean", _std_mean, "StdMeanBackward0", _real_pair, saves=("self", "result0")),
    _op("logsumexp", _logsumexp, "LogsumexpBackward0", _float_of, saves=_SELF_RESULT),
    _op("cumsum", _cumsum, "CumsumBackward0", sum_rule, saves=()),
    _op("cumprod", _cumprod, "CumprodBackward0", sum_rule, saves=("self", "result")),
    _op(
        "cummax",
        _cumbest,
        "CummaxBackward0",
        _with_index,
        n_out=2,
        diff_out=(0,),
        saves=("self", "indices"),
    ),
    _op(
        "cummin",
        lambda x, dim: _cumbest(x, dim, True),
        "CumminBackward0",
        _with_index,
        n_out=2,
        diff_out=(0,),
        saves=("self", "indices"),
    ),
    _op("logcumsumexp", _logcumsumexp, "LogcumsumexpBackward0", _keep, saves=_SELF_RESULT),
    _op("median_all", _median_all, "MedianBackward0", _keep, saves=_SELF_RESULT),
    _op(
        "nanmedian_all",
        lambda x: _median_all(x, True),
        "NanmedianBackward0",
        _keep,
        saves=_SELF_RESULT,
    ),
    _op(
        "median_dim",
        _median_dim,
        "MedianBackward1",
        _with_index,
        n_out=2,
        diff_out=(0,),
        saves=("indices",),
    ),
    _op(
        "nanmedian_dim",
        _nanmedian_dim,
        "NanmedianBackward1",
        _with_index,
        n_out=2,
        diff_out=(0,),
        saves=("indices",),
    ),
    _op(
        "kthvalue",
        _kthvalue,
        "KthvalueBackward0",
        _with_index,
        n_out=2,
        diff_out=(0,),
        saves=("indices",),
    ),
    _op("mode", _mode, "ModeBackward0", _with_index, n_out=2, diff_out=(0,), saves=("indices",)),
    _op("topk", _topk, "TopkBackward0", _with_index, n_out=2, diff_out=(0,), saves=("indices",)),
    _op("sort", _sort, _sort_name, _with_index, n_out=2, diff_out=(0,), saves=("indices",)),
    _op("count_nonzero", _count_nonzero, "", _index, saves=()),
    _op("any", _any, "", _any_rule, saves=()),
    _op("all", lambda x, dim, keepdim: _any(x, dim, keepdim, True), "", _any_rule, saves=()),
]
for _o in _OPS:  # idempotent on re-import (the table is module state)
    OPS.setdefault(_o.name, _o)
del _o


def _run(name, t, **static):
    return dispatch(OPS[name], t, **static)


def _pair(kind, out):
    return RETURN_TYPES[kind](*out)


# --- frontends ------------------------------------------------------------------------------------


def _dtype_static(dtype, name: str) -> dict:
    """``dtype=`` of a reduction as a static argument, with PyTorch's error for a non-dtype."""
    from .._factories import _dtype_arg

    return {} if dtype is None else {"dtype": _dtype_arg(dtype, name)}


@tensor_op("sum")
def sum(input, dim=None, keepdim=False, *, dtype=None):  # noqa: A001
    """``torch.sum``: all elements, or over ``dim`` (an empty list reduces every dim)."""
    _check_named("sum", dim, SUM_SIGNATURES)
    static = _dtype_static(dtype, "sum")
    if dim is not None:
        static.update(dim=_dims(input, dim), keepdim=bool(keepdim))
    elif keepdim:
        raise TypeError(INVALID_ARGS.format("sum", "keepdim=bool, ", SUM_SIGNATURES))
    return dispatch(OPS["sum"], input, **static)


@tensor_op("mean")
def mean(input, dim=None, keepdim=False, *, dtype=None):
    """``torch.mean``: floating and complex inputs, or an explicit floating ``dtype``."""
    _check_named("mean", dim, SUM_SIGNATURES)
    static = _dtype_static(dtype, "mean")
    if dtype is not None and not (static["dtype"].is_floating_point or static["dtype"].is_complex):
        raise RuntimeError(MEAN_OPT_DTYPE.format(E.scalar_type_name(static["dtype"])))
    if dim is not None:
        static.update(dim=_dims(input, dim), keepdim=bool(keepdim))
    elif keepdim:
        raise TypeError(INVALID_ARGS.format("mean", "keepdim=bool, ", SUM_SIGNATURES))
    return dispatch(OPS["mean"], input, **static)


@tensor_op("nansum")
def nansum(input, dim=None, keepdim=False, *, dtype=None):
    """``torch.nansum``: the sum with NaN counted as zero."""
    # dim=None stays None: nansum_backward then expands the gradient without unsqueezing it
    dims = None if dim is None else _all_dims(input, dim)
    static = _dtype_static(dtype, "nansum")
    if "dtype" in static and static["dtype"].is_complex and not input.dtype.is_complex:
        raise NotImplementedError(E.KERNEL_DTYPE.format("nansum_cpu", static["dtype"]._legacy))
    return _run("nansum", input, dim=dims, keepdim=bool(keepdim), **static)


@tensor_op("nanmean")
def nanmean(input, dim=None, keepdim=False, *, dtype=None):
    """``torch.nanmean``: ``nansum`` divided by the count of non-NaN elements (``DivBackward0``)."""
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise RuntimeError(NANMEAN_DTYPE.format(E.scalar_type_name(input.dtype)))
    _dtype_static(dtype, "nanmean")  # its error names nanmean
    dims = _all_dims(input, dim)
    total = nansum(input, dim, keepdim, dtype=dtype)
    written_dims.note(total, input.ndim, dim=dim)  # PyTorch's nansum takes the dim as given
    count = _run("notnan_count", input, dim=dims, keepdim=bool(keepdim))
    return dispatch(OPS["div"], total, count)


@tensor_op("prod")
@_autocast.policy("fp32")
def prod(input, dim=None, keepdim=False, *, dtype=None):
    """``torch.prod``: all elements, or along one ``dim``."""
    static = _dtype_static(dtype, "prod")
    if dim is not None:
        if not isinstance(dim, int) or isinstance(dim, bool):
            raise TypeError(INVALID_ARGS.format("prod", _type_name(dim), PROD_SIGNATURES))
        static.update(dim=_dims(input, dim), keepdim=bool(keepdim))
    return _run("prod", input, **static)


def _max_min(kind, input, dim=None, keepdim=False, *, other=None, out=None):
    if isinstance(dim, Tensor) or other is not None:
        other = dim if other is None else other
        method = "maximum" if kind == "max" else "minimum"
        fn = getattr(type(input), method, None)
        if fn is None:
            raise NotImplementedError(MAXIMUM_MISSING.format(kind, method))
        return fn(input, other)
    if dim is None:
        if input.numel() == 0:
            raise RuntimeError(EMPTY_FULL.format(kind))
        if input.dtype.is_complex:
            raise NotImplementedError(
                NOT_IMPLEMENTED.format(f"{kind}_all", E.scalar_type_name(input.dtype))
            )
        return _run(f"{kind}_all", input)
    d = _one_dim(input, dim)
    _real_only(input, NO_COMPLEX.format(kind))
    if _size(input, d) == 0:
        raise IndexError(EMPTY_DIM.format(kind, d))
    return _pair(kind, _run(f"{kind}_dim", input, dim=d, keepdim=bool(keepdim)))


@tensor_op("max")
def max(input, dim=None, keepdim=False, *, other=None):  # noqa: A001
    """``torch.max``: the maximum, ``(values, indices)`` along ``dim``, or ``maximum(a, b)``."""
    return _max_min("max", input, dim, keepdim, other=other)


@tensor_op("min")
def min(input, dim=None, keepdim=False, *, other=None):  # noqa: A001
    """``torch.min``: the minimum, ``(values, indices)`` along ``dim``, or ``minimum(a, b)``."""
    return _max_min("min", input, dim, keepdim, other=other)


def _amax_amin(kind, input, dim, keepdim):
    if input.numel() == 0:  # ATen's zero_numel_check_dims, before the dims' own checks
        given = () if dim is None else (dim,) if isinstance(dim, (int, Tensor)) else tuple(dim)
        if not given:
            raise RuntimeError(EMPTY_FULL.format(kind))
        for g in given:  # named as given
            if input.shape[_wrap_dim(g, input.ndim)] == 0:
                raise IndexError(EMPTY_DIM.format(kind, g))
    dims = _dims(input, dim)
    if input.dtype.is_complex:
        raise NotImplementedError(
            NOT_IMPLEMENTED.format(f"{kind[1:]}_values_cpu", E.scalar_type_name(input.dtype))
        )
    if not input.ndim and (isinstance(dim, int) or len(dim)):
        # PyTorch keeps a 0-d tensor's dim 0: its backward restores it (a 1-element gradient)
        dims = (0,)
    return _run(kind, input, dim=dims, keepdim=bool(keepdim))


@tensor_op("amax")
def amax(input, dim=(), keepdim=False):
    """``torch.amax``: the maximum over ``dim`` (all dims when empty); ties share the gradient."""
    return _amax_amin("amax", input, dim, keepdim)


@tensor_op("amin")
def amin(input, dim=(), keepdim=False):
    """``torch.amin``: the minimum over ``dim`` (all dims when empty); ties share the gradient."""
    return _amax_amin("amin", input, dim, keepdim)


@tensor_op("aminmax")
def aminmax(input, *, dim=None, keepdim=False):
    """``torch.aminmax``: ``(min, max)`` over all elements or one ``dim``."""
    if dim is None:
        if input.numel() == 0:
            raise RuntimeError(AMINMAX_EMPTY)
        dims = ()
    else:
        d = _one_dim(input, dim)  # a 0-d tensor takes dim 0 or -1
        dims = (d,) if input.ndim else ()
        if input.ndim and input.shape[d] == 0:
            raise IndexError(f"aminmax: Expected reduction dim {dims[0]} to have non-zero size.")
    return _pair("aminmax", _run("aminmax", input, dim=dims, keepdim=bool(keepdim)))


def _arg(kind, input, dim, keepdim):
    _real_only(input, NO_COMPLEX.format(kind))
    if input.dtype is D.bool_:
        raise RuntimeError(NO_BOOL.format(kind))
    if dim is None:
        if input.numel() == 0:
            raise IndexError(EMPTY_ARG.format(kind))
        return _run(kind, input, dim=None, keepdim=bool(keepdim))
    d = _one_dim(input, dim)
    if _size(input, d) == 0:
        raise IndexError(EMPTY_DIM.format(kind, d))
    return _run(kind, input, dim=d, keepdim=bool(keepdim))


@tensor_op("argmax")
def argmax(input, dim=None, keepdim=False):
    """``torch.argmax``: the first index of the maximum (NaN counts as the maximum)."""
    return _arg("argmax", input, dim, keepdim)


@tensor_op("argmin")
def argmin(input, dim=None, keepdim=False):
    """``torch.argmin``: the first index of the minimum (NaN counts as the minimum)."""
    return _arg("argmin", input, dim, keepdim)


_UNSET = object()


def _correction(name, input, dim, unbiased, correction, keepdim):
    """Parse var/std's overloads into static arguments; warn when dof <= 0 as PyTorch does.

    The correction overload (no ``dim`` or ``unbiased`` given, or ``correction`` given) keeps a
    default correction as None, which its node shows (``_saved_correction``); the others turn
    ``unbiased`` into 1 or 0."""
    if isinstance(dim, bool) and unbiased is None:  # var(unbiased)
        dim, unbiased = _UNSET, dim
    overload_default = correction is None or (
        correction is _UNSET and unbiased is None and dim is _UNSET
    )
    dim = None if dim is _UNSET else dim
    correction = None if correction is _UNSET else correction
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise RuntimeError(STD_VAR_DTYPE.format(name if name.endswith("_mean") else "std and var"))
    if correction is None:
        correction = 1 if unbiased is None or unbiased else 0
    dims = _all_dims(input, dim)
    kept = math.prod(s for d, s in enumerate(input.shape) if d not in dims)
    # PyTorch counts the reduced elements as input numel / output numel, 0 for an empty output
    n = input.numel() // kept if kept else 0
    if n - correction <= 0:
        if input._base is not None and is_grad_enabled():
            # PyTorch's kernel warns after autograd took the input's edge: a stale view's
            # error comes first (``_edge``)
            view_grad_fn(input)
        # a complex input is reduced as its real and imaginary parts: each warns
        for _ in range(2 if input.dtype.is_complex else 1):
            E.warn(DOF_WARNING.format(name))
    # ``dim=None`` stays None: PyTorch's formulas tell it from an explicit list of every dim
    # (``var_backward``: ``self.mean()`` against ``self.mean(dim, True)``)
    # an empty list stays empty: PyTorch reduces every dim but its var_backward counts one element
    static_dim = None if dim is None else () if isinstance(dim, (tuple, list)) and not dim else dims
    saved = None if overload_default else correction
    return {"dim": static_dim, "correction": saved, "keepdim": bool(keepdim)}


def _var_like(name):
    def frontend(input, dim=_UNSET, unbiased=None, keepdim=False, *, correction=_UNSET):
        static = _correction(name, input, dim, unbiased, correction, keepdim)
        out = _run(name, input, **static)
        return tuple(out) if isinstance(out, tuple) else out

    frontend.__name__ = frontend.__qualname__ = name
    frontend.__doc__ = f"``torch.{name}``: with ``correction`` (or ``unbiased``) and ``keepdim``."
    return frontend


var = tensor_op("var")(_var_like("var"))
std = tensor_op("std")(_var_like("std"))
var_mean = tensor_op("var_mean", method=False)(_var_like("var_mean"))
std_mean = tensor_op("std_mean", method=False)(_var_like("std_mean"))


@tensor_op("logsumexp")
def logsumexp(input, dim, keepdim=False):
    """``torch.logsumexp``: ``log(sum(exp(x)))`` over ``dim``, stabilised by the maximum."""
    if isinstance(dim, (tuple, list)) and not dim and input.numel() and input.ndim and not keepdim:
        # PyTorch adds ``maxes.squeeze(dim)`` in place: an empty ``dim`` squeezes nothing
        shape = "[" + ", ".join("1" * input.ndim) + "]"
        raise RuntimeError(E.INPLACE_SHAPE.format("[]", shape))
    return _run("logsumexp", input, dim=_dims(input, dim), keepdim=bool(keepdim))


def _scan(name, input, dim, dtype=None):
    static = _dtype_static(dtype, name)
    if static.get("dtype") is D.bool_ and name in ("cumsum", "cumprod"):
        raise NotImplementedError(E.KERNEL_DTYPE.format(f"{name}_out_cpu", "Bool"))
    return _run(name, input, dim=_one_dim(input, dim), **static)


@tensor_op("cumsum")
def cumsum(input, dim, *, dtype=None):
    """``torch.cumsum``: running sums along ``dim`` (integers and bool sum in int64)."""
    return _scan("cumsum", input, dim, dtype)


@tensor_op("cumprod")
def cumprod(input, dim, *, dtype=None):
    """``torch.cumprod``: running products along ``dim``."""
    return _scan("cumprod", input, dim, dtype)


def _cum_max_min(kind, input, dim):
    if input.ndim == 0:
        if dim not in (0, -1):
            raise IndexError(f"{kind}(): Expected reduction dim -1 or 0 for scalar but got {dim}")
    elif input.numel() == 0:  # PyTorch's kernel reads no dim of an empty tensor
        dim = 0
    return _pair(kind, _scan(kind, input, dim))


@tensor_op("cummax")
def cummax(input, dim):
    """``torch.cummax``: running maxima and their (latest) indices along ``dim``."""
    return _cum_max_min("cummax", input, dim)


@tensor_op("cummin")
def cummin(input, dim):
    """``torch.cummin``: running minima and their (latest) indices along ``dim``."""
    return _cum_max_min("cummin", input, dim)


@tensor_op("logcumsumexp")
def logcumsumexp(input, dim):
    """``torch.logcumsumexp``: running ``log(sum(exp(x)))`` along ``dim`` (floating only)."""
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise NotImplementedError(
            NOT_IMPLEMENTED.format("logcumsumexp_out_cpu", E.scalar_type_name(input.dtype))
        )
    return _scan("logcumsumexp", input, dim)


class _Unset:
    """The default of an argument whose absence matters: ``x.median(keepdim=False)`` is refused
    as PyTorch's parser refuses it (``keepdim`` comes with ``dim``)."""

    def __repr__(self) -> str:
        return "False"


_KEEPDIM_UNSET = _Unset()


def _median(kind, input, dim, keepdim):
    # bool and complex inputs: the kernels' errors (Note [Kernel dtype refusals])
    if dim is None:
        if keepdim is not _KEEPDIM_UNSET:
            raise TypeError(E.missing_args(kind, ["dim"]))
        return _run(f"{kind}_all", input)
    keepdim = False if keepdim is _KEEPDIM_UNSET else keepdim
    d = _one_dim(input, dim)
    if _size(input, d) == 0:  # the CPU kernel of both names itself median()
        raise IndexError(EMPTY_DIM.format("median", d))
    return _pair(kind, _run(f"{kind}_dim", input, dim=d, keepdim=bool(keepdim)))


@tensor_op("median")
def median(input, dim=None, keepdim=_KEEPDIM_UNSET):
    """``torch.median``: the lower median (NaN if any NaN), or ``(values, indices)`` on ``dim``."""
    return _median("median", input, dim, keepdim)


@tensor_op("nanmedian")
def nanmedian(input, dim=None, keepdim=_KEEPDIM_UNSET):
    """``torch.nanmedian``: the lower median of the non-NaN elements."""
    return _median("nanmedian", input, dim, keepdim)


@tensor_op("kthvalue")
def kthvalue(input, k, dim=-1, keepdim=False):
    """``torch.kthvalue``: the ``k``-th smallest value along ``dim`` and its index."""
    d = _one_dim(input, dim)
    if _size(input, d) == 0:
        raise IndexError(EMPTY_DIM.format("kthvalue", d))
    if not 1 <= k <= _size(input, d):
        raise RuntimeError(KTH_RANGE.format(d))
    return _pair("kthvalue", _run("kthvalue", input, k=int(k), dim=d, keepdim=bool(keepdim)))


@tensor_op("mode")
def mode(input, dim=-1, keepdim=False):
    """``torch.mode``: the most frequent value (smallest on ties) and its last index."""
    d = _one_dim(input, dim)
    if _size(input, d) == 0:
        raise IndexError(EMPTY_DIM.format("mode", d))
    return _pair("mode", _run("mode", input, dim=d, keepdim=bool(keepdim)))


@tensor_op("topk")
def topk(input, k, dim=-1, largest=True, sorted=True):  # noqa: A002
    """``torch.topk``: the ``k`` largest (or smallest) values along ``dim``, sorted."""
    d = _one_dim(input, dim)
    if not 0 <= k <= _size(input, d):
        raise RuntimeError(TOPK_RANGE)
    kw = {} if sorted else {"sorted": False}
    return _pair("topk", _run("topk", input, k=int(k), dim=d, largest=bool(largest), **kw))


@tensor_op("sort")
def sort(input, dim=-1, descending=False, *, stable=False):
    """``torch.sort`` along ``dim``: ``stable=True`` keeps equal values in index order; else
    they come in the order PyTorch's CPU ``std::sort`` leaves them (Note [libstdc++
    orderings])."""
    if input.dtype.is_complex:
        raise RuntimeError(SORT_COMPLEX)
    d = _one_dim(input, dim)
    static = {"stable": True} if stable is not None and stable is not False else {}
    return _pair("sort", _run("sort", input, dim=d, descending=bool(descending), **static))


@tensor_op("argsort")
def argsort(input, dim=-1, descending=False, *, stable=False):
    """``torch.argsort``: the indices of ``sort``."""
    return sort(input, dim, descending, stable=stable).indices


@tensor_op("msort")
def msort(input):
    """``torch.msort``: ``sort`` along dim 0, values only."""
    return sort(input, 0).values


@tensor_op("count_nonzero")
def count_nonzero(input, dim=None):
    """``torch.count_nonzero``: the number of non-zero elements (int64)."""
    dims = None if dim is None else _dims(input, dim)
    return _run("count_nonzero", input, dim=dims)


def _any_all(kind, input, dim, keepdim):
    dims = None if dim is None else _dims(input, dim)
    if dims is None and keepdim:
        dims = tuple(range(input.ndim))
    return _run(kind, input, dim=dims, keepdim=bool(keepdim))


@tensor_op("any")
def any(input, dim=None, keepdim=False):  # noqa: A001
    """``torch.any``: whether any element is non-zero (uint8 stays uint8)."""
    return _any_all("any", input, dim, keepdim)


@tensor_op("all")
def all(input, dim=None, keepdim=False):  # noqa: A001
    """``torch.all``: whether every element is non-zero (uint8 stays uint8)."""
    return _any_all("all", input, dim, keepdim)


# --- scatter reductions ---------------------------------------------------------------------------
# Note [Scatter reductions]: ``sum``/``mean`` scatter-add ``src`` (XLA adds the updates in index
# order, as PyTorch's CPU kernel does); ``mean`` then truly divides by the per-position count.
# ``prod``/``amax``/``amin`` reduce densely: along ``dim``, a mask ``(index == j)`` picks, for
# every target ``j``, the src elements written there, and ``jnp.prod``/``jnp.max`` reduce them
# with ``self``. JAX's VJP of that product is the exclusive product (PyTorch's gradient, zeros
# included), and of that max spreads the gradient evenly over the tied candidates, PyTorch's
# ``N_to_distribute``. PyTorch counts ``self`` among the ties even when ``include_self=False``
# (its gradient then goes nowhere): a gradient-free copy of ``self`` joins the candidates there.
SCATTER_REDUCE_ARG = "reduce argument must be either sum, prod, mean, amax or amin, got {}"
SCATTER_OLD_REDUCE = "reduce argument must be either add or multiply."
SCATTER_REDUCE_DEPRECATED = (
    "The reduce argument of torch.scatter with Tensor src is deprecated and will be removed in a "
    "future PyTorch release. Use torch.scatter_reduce instead for more reduction options. "
    "(Triggered internally at /__w/pytorch/pytorch/aten/src/ATen/native/"
    "TensorAdvancedIndexing.cpp:225.)"
)
_SCATTER_REDUCES = ("sum", "prod", "mean", "amax", "amin")


def _scatter_grid(index, dim):
    return tuple(
        index if d == dim else lax.broadcasted_iota(jnp.int64, index.shape, d)
        for d in range(index.ndim)
    )


def _lowest(dtype, minimum):
    """The identity of max (min): -inf (inf), or the integer type's extreme."""
    if jnp.issubdtype(dtype, jnp.inexact):
        return jnp.asarray(jnp.inf if minimum else -jnp.inf, dtype)
    if dtype == jnp.bool_:
        return jnp.asarray(minimum, dtype)
    info = jnp.iinfo(dtype)
    return jnp.asarray(info.max if minimum else info.min, dtype)


def _scatter_reduce(x, index, src, dim, reduce, include_self):
    """``x.scatter_reduce(dim, index, src, reduce, include_self)`` (Note [Scatter reductions])."""
    if x.ndim == 0:
        x, index, src = x.reshape(1), index.reshape(1), src.reshape(1)
        return _scatter_reduce(x, index, src, 0, reduce, include_self).reshape(())
    src = src[tuple(slice(0, s) for s in index.shape)]
    grid = _scatter_grid(index, dim)
    boolean = x.dtype == jnp.bool_
    if reduce in ("sum", "mean"):
        base = x if include_self else x.at[grid].set(jnp.zeros((), x.dtype))
        if boolean:  # bool + bool is logical or
            return base.astype(jnp.int8).at[grid].add(src.astype(jnp.int8)) != 0
        total = base.at[grid].add(src)
        if reduce == "sum":
            return total
        count = jnp.full(x.shape, 1 if include_self else 0, jnp.int64)
        count = count.at[grid].add(jnp.ones(index.shape, jnp.int64))
        count = jnp.maximum(count, 1)
        if jnp.issubdtype(x.dtype, jnp.integer):  # PyTorch's floor division for integers
            return jnp.floor_divide(total, count.astype(x.dtype))
        return total / lax.optimization_barrier(count.astype(x.dtype))
    # prod / amax / amin over the region of x that index covers, with dim last.
    region = tuple(slice(0, s) if d != dim else slice(None) for d, s in enumerate(index.shape))
    xr = jnp.moveaxis(x[region], dim, -1)  # (..., n)
    ir, sr = jnp.moveaxis(index, dim, -1), jnp.moveaxis(src, dim, -1)  # (..., k)
    n = xr.shape[-1]
    mask = ir[..., None, :] == jnp.arange(n, dtype=ir.dtype)[:, None]  # (..., n, k)
    hit = jnp.any(mask, axis=-1)
    if reduce == "prod":
        one = jnp.ones((), x.dtype)
        p = jnp.prod(jnp.where(mask, sr[..., None, :], one), axis=-1)
        if boolean:
            p = jnp.all(jnp.where(mask, sr[..., None, :], True), axis=-1)
            out = (xr & p) if include_self else jnp.where(hit, p, xr)
        else:
            out = xr * p if include_self else jnp.where(hit, p, xr)
    else:
        minimum = reduce == "amin"
        low = _lowest(x.dtype, minimum)
        cands = jnp.where(mask, sr[..., None, :], low)
        best = jnp.min if minimum else jnp.max
        if include_self:
            selfc = xr[..., None]
        else:
            r0 = lax.stop_gradient(best(cands, axis=-1, initial=low))  # (no sources: k = 0)
            selfc = jnp.where(xr == r0, lax.stop_gradient(xr), low)[..., None]
        r = best(jnp.concatenate([selfc, cands], axis=-1), axis=-1)
        out = r if include_self else jnp.where(hit, r, xr)
    return x.at[region].set(jnp.moveaxis(out, -1, dim))


def _scatter_old(x, index, src, dim, reduce):
    """``scatter(..., reduce='add'|'multiply')``: no derivative (its node is NotImplemented)."""
    from .elementwise import _no_derivative

    refuse = _no_derivative("scatter")
    x = refuse(x)
    if x.ndim == 0:
        grid = ()
        src = jnp.reshape(src, ()) if jnp.ndim(src) else src
    else:
        grid = _scatter_grid(index, dim)
        if jnp.ndim(src):
            src = refuse(src)[tuple(slice(0, s) for s in index.shape)]
    ref = x.at[grid]
    if x.dtype == jnp.bool_:
        s = jnp.asarray(src).astype(jnp.int8)
        i8 = x.astype(jnp.int8).at[grid]
        return (i8.add(s) if reduce == "add" else i8.multiply(s)) != 0
    return ref.add(src) if reduce == "add" else ref.multiply(src)


def _scatter_rule(meta, static):
    return (None,) * len(meta), meta[0][0]


def _scatter_value_rule(meta, static):
    return (None, None, meta[0][0]), meta[0][0]


def _scatter_ops():
    ops = [
        OpDef(
            "scatter_reduce",
            _scatter_reduce,
            "ScatterReduceBackward0",
            ("self", "index", "src"),
            _scatter_rule,
            edges=("self", "src"),
            # one formula for both (``scatter_reduce_backward``): it saves all four for either
            saves={
                "self": ("self", "index", "src", "result"),
                "src": ("self", "index", "src", "result"),
            },
        ),
    ]
    for edges in [(), ("self",), ("src",), ("self", "src")]:
        name = "_".join(edges) or "none"
        ops.append(
            OpDef(
                f"scatter_old_{name}",
                _scatter_old,
                "NotImplemented",
                ("self", "index", "src"),
                _scatter_rule,
                edges=edges,
                differentiable=edges if edges else (),
            )
        )
    for edges in [(), ("self",)]:
        name = "_".join(edges) or "none"
        ops.append(
            OpDef(
                f"scatter_old_value_{name}",
                _scatter_old,
                "NotImplemented",
                ("self", "index", "src"),
                _scatter_value_rule,
                edges=edges,
                differentiable=edges if edges else (),
            )
        )
    return ops


for _o in _scatter_ops():
    OPS.setdefault(_o.name, _o)
del _o


def _scatter_checks(input, dim, index, src, name="scatter"):
    """PyTorch's checks of scatter-like arguments (shared messages of ``shape.py``)."""
    from . import shape as S

    S._need_tensor(index, name, "index", 2)
    n = input._data.ndim
    d = _wrap_dim(dim, n)
    if index._dtype not in (D.int32, D.int64):
        raise RuntimeError(S.SCATTER_DTYPE)
    if builtins.max(index._data.ndim, 1) != builtins.max(n, 1):
        raise RuntimeError(S.SCATTER_NDIM)
    size = input._data.shape[d] if n else 1
    if isinstance(src, Tensor):
        if builtins.max(src._data.ndim, 1) != builtins.max(n, 1):
            raise RuntimeError(S.SCATTER_SRC_NDIM)
        if src._dtype is not input._dtype:
            raise RuntimeError(S.SCATTER_SELF_SRC)
        if n:
            S._check_gather_sizes(input, index, d, src)
    elif n:
        S._check_gather_sizes(input, index, d)
    S._nonneg_check(index, size, d, input, *([src] if isinstance(src, Tensor) else []))
    return d


def _requires(t) -> bool:
    from ..autograd import grad_mode

    state = grad_mode._state
    return isinstance(t, Tensor) and t._requires_grad and state.grad_enabled and not state.inference


def scatter_with_reduce(input, dim, index, src, reduce):
    """``scatter(dim, index, src|value, reduce='add'|'multiply')``: PyTorch's older API, which
    has no derivative (backward through it raises)."""
    if isinstance(src, Tensor):
        E.warn_once(SCATTER_REDUCE_DEPRECATED)
    if reduce not in ("add", "multiply"):
        raise RuntimeError(SCATTER_OLD_REDUCE)
    d = _scatter_checks(input, dim, index, src)
    if isinstance(src, Tensor):
        edges = tuple(n for n, t in (("self", input), ("src", src)) if _requires(t))
        name = "scatter_old_" + ("_".join(edges) or "none")
        return dispatch(OPS[name], input, index, src, dim=d, reduce=reduce)
    if hasattr(src, "item"):
        src = src.item()
    name = "scatter_old_value_" + ("self" if _requires(input) else "none")
    return dispatch(OPS[name], input, index, src, dim=d, reduce=reduce)


@tensor_op("scatter_reduce")
def scatter_reduce(input, dim, index, src, reduce, *, include_self=True):
    """``scatter_reduce``: reduce ``src`` into ``input`` at ``index`` along ``dim`` with ``sum``,
    ``prod``, ``mean``, ``amax`` or ``amin`` (Note [Scatter reductions])."""
    from . import shape as S

    S._need_tensor(index, "scatter_reduce", "index", 2)
    if not isinstance(src, Tensor):
        raise TypeError(
            f"scatter_reduce(): argument 'src' (position 3) must be Tensor, not {_type_name(src)}"
        )
    if reduce not in _SCATTER_REDUCES:
        raise RuntimeError(SCATTER_REDUCE_ARG.format(reduce))
    d = _scatter_checks(input, dim, index, src)
    dt = input.dtype
    kernel = f"scatter_gather_tensor_cpu_reduce_{reduce}"
    if (reduce == "mean" and dt is D.bool_) or (reduce in ("amax", "amin") and dt.is_complex):
        raise NotImplementedError(NOT_IMPLEMENTED.format(kernel, E.scalar_type_name(dt)))
    out = dispatch(
        OPS["scatter_reduce"],
        input,
        index,
        src,
        dim=d,
        reduce=reduce,
        include_self=bool(include_self),
    )
    # the sum and mean formulas gather the gradient for src (the others scatter it back)
    return S.src_gradient_check(out, index, src) if reduce in ("sum", "mean") else out
