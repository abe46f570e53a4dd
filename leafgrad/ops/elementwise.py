"""Elementwise ops: unary math, arithmetic with rounding modes, comparisons, logic, where, clamp.

Every op is an ``OpDef`` (a pure ``jax.numpy`` forward plus facts) and a frontend installed by
``@tensor_op`` as a ``Tensor`` method and a ``leafgrad`` function. Where PyTorch's gradient differs
from JAX's VJP of the obvious forward (ties, bounds, NaNs), the forward is written with
``jnp.where`` branches so that its VJP gives PyTorch's values; no derivative is written by hand.
"""

from __future__ import annotations

import functools
import math

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from .. import _dtype as D
from .. import _errors as E
from .._known import known_values
from .._tensor import Tensor, _is_operand
from ..autograd import forward_ad
from ..autograd import saved as saved_mod
from ..autograd.graph import edge_needed, wrap_backward
from .api import refuse_backward, refuse_complex_autograd, register_ops, tensor_op
from .dispatch import broadcast_shapes, dispatch, saved_first
from .table import (
    OPS,
    OpDef,
    _rsub,
    _true_divide,
    promote,
    promote_to_float,
    unary_float,
    with_partials,
)

# --- PyTorch's messages (not yet in _errors.py) -----------------------------------------------
KERNEL_DTYPE = E.KERNEL_DTYPE
MUST_BE_TENSOR = "{}(): argument '{}' (position {}) must be Tensor, not {}"
ALPHA_BOOL = "Boolean alpha only supported for Boolean results."
ALPHA_FLOAT = "For integral input tensors, argument alpha must not be a floating point number."
ALPHA_COMPLEX = "For non-complex input tensors, argument alpha must not be a complex number."
ROUNDING_MODE = "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '{}'"
ZERO_DIVISION = "ZeroDivisionError"
INVERT_FLOAT = "~ (operator.invert) is only implemented on integer and Boolean-type tensors"
POSITIVE_BOOL = "The `+` operator, on a bool tensor is not supported."
CLAMP_NONE = "torch.clamp: At least one of 'min' or 'max' must not be None"
CLAMP_COMBINATION = (
    "clamp() received an invalid combination of arguments - got ({}), but expected one of:\n"
    " * (Tensor input, Tensor min = None, Tensor max = None, *, Tensor out = None)\n"
    " * (Tensor input, Number min = None, Number max = None, *, Tensor out = None)\n"
)
WHERE_CONDITION = "where expected condition to be a boolean tensor, but got a tensor with dtype {}"
WHERE_UINT8 = (
    "where received a uint8 condition tensor. This behavior is deprecated and will be removed in "
    "a future version of PyTorch. Use a boolean condition instead. (Triggered internally at "
    "/__w/pytorch/pytorch/aten/src/ATen/native/TensorCompare.cpp:621.)"
)
WHERE_COMBINATION = (
    "where() received an invalid combination of arguments - got ({}), but expected one of:\n"
    " * (Tensor condition)\n"
    " * (Tensor condition, Tensor input, Tensor other, *, Tensor out = None)\n"
    " * (Tensor condition, Number self, Tensor other)\n"
    " * (Tensor condition, Tensor input, Number other)\n"
    " * (Tensor condition, Number self, Number other)\n"
)
LERP_DTYPE = "expected dtype {} for `{}` but got dtype {}"
ADDCDIV_INTEGER = (
    "Integer division with addcdiv is no longer supported, and in a future  release addcdiv will "
    "perform a true division of tensor1 and tensor2. The historic addcdiv behavior can be "
    "implemented as (input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer "
    "inputs and as (input + value * tensor1 / tensor2) for float inputs. The future addcdiv "
    "behavior is just the latter implementation: (input + value * tensor1 / tensor2), for all "
    "dtypes."
)
ISCLOSE_DTYPE = "{} did not match {}"
NO_DERIVATIVE = "derivative for aten::{} is not implemented"
SIGN_COMPLEX = (
    "Unlike NumPy, torch.sign is not intended to support complex numbers. Please use torch.sgn "
    "instead."
)
ABS_INPLACE_COMPLEX = "In-place abs is not supported for complex tensors."


def _kernel_error(kernel: str, dt) -> NotImplementedError:
    return NotImplementedError(KERNEL_DTYPE.format(kernel, dt._legacy))


# --- dtype rules -------------------------------------------------------------------------------


def _refuse(kinds: str, kernel: str, rule=None):
    """A dtype rule refusing result kinds (``"b"``, ``"ui"``, ...) with PyTorch's kernel error."""

    def check(meta, static):
        cast, rt = (rule or _same)(meta, static)
        if rt._kind in kinds:
            raise _kernel_error(kernel, rt)
        return cast, rt

    return check


def _same(meta, static):
    return (None,) * len(meta), meta[0][0]


def _to_bool(meta, static):
    return (None,) * len(meta), D.bool_


def _first_dtype(meta, static):
    """Every operand cast to the first operand's dtype (lerp, nan_to_num's scalars)."""
    dt = meta[0][0]
    return (dt,) * len(meta), dt


def _round_decimals_rule(meta, static):
    kernel = "round_cpu" if static["decimals"] else "round_vml_cpu"
    return _refuse("buic", kernel)(meta, static)


def _sign_rule(meta, static):
    if meta[0][0].is_complex:
        raise NotImplementedError(SIGN_COMPLEX)
    return _same(meta, static)


def _to_real(rule):
    """``rule``, with a complex operand giving a real result of its precision (abs, angle).

    The operand is cast to its own dtype: the cast names the complex dtype, so dispatch's
    backward applies PyTorch's complex convention though the result is real."""

    def check(meta, static):
        dt = meta[0][0]
        if dt.is_complex:
            return (dt,), dt.to_real()
        return rule(meta, static)

    return check


def _where_rule(meta, static):
    cast, rt = promote(meta[1:], static)
    return (None, *cast), rt


# --- forwards ----------------------------------------------------------------------------------


def _is_float(x) -> bool:
    return jnp.issubdtype(x.dtype, jnp.inexact)


def _full(y, shape, dtype):
    """``y`` broadcast to ``shape`` behind a barrier: XLA then divides instead of multiplying by
    a reciprocal (Note [True division] in reduce.py)."""
    y = jnp.asarray(y, dtype)
    return y if y.shape == shape else lax.optimization_barrier(jnp.broadcast_to(y, shape))


def _div_trunc(x, y):
    if not _is_float(x):
        return lax.div(*jnp.broadcast_arrays(x, y))  # C's truncating integer division
    return lax.stop_gradient(jnp.trunc(_true_divide(x, y)))  # DivBackward2: zero gradients


def _div_floor(x, y):
    if not _is_float(x):
        return jnp.floor_divide(x, y)  # Python's floor division, as c10::div_floor_integer
    # ATen's div_floor_floating_vec, step by step; its gradient is zero.
    shape = jnp.broadcast_shapes(x.shape, y.shape)
    x, y = jnp.broadcast_to(x, shape), _full(y, shape, x.dtype)
    basic = x / y
    mod = lax.rem(x, y)
    inf = jnp.inf
    floor = jnp.where((jnp.abs(basic) == inf) & (jnp.abs(x) != inf), x, x - mod)
    div = floor / y
    div = jnp.where((mod != 0) & ((y < 0) ^ (mod < 0)), div - 1, div)
    floordiv = jnp.floor(div)
    floordiv = jnp.where(div - floordiv > 0.5, floordiv + 1, floordiv)
    floordiv = jnp.where(div == 0, jnp.copysign(jnp.zeros_like(basic), basic), floordiv)
    floordiv = jnp.where(y == 0, basic, floordiv)
    return lax.stop_gradient(floordiv)


def _div_mode(x, y, rounding_mode):
    return _div_trunc(x, y) if rounding_mode == "trunc" else _div_floor(x, y)


def _remainder_value(x, y):
    # ATen: mod = fmod(a, b); mod += b where mod != 0 and its sign differs from b's.
    mod = lax.rem(*jnp.broadcast_arrays(x, y))
    return jnp.where((mod != 0) & ((y < 0) != (mod < 0)), mod + y, mod)


def _with_quotient(value, x, y, quotient):
    # PyTorch's derivative of x - q * y for a rounded quotient q: 1 for x and -q for y, while
    # JAX's VJP of rem is 0 for x where the result is 0. The value stays ATen's exactly: the
    # subtracted term is +0 (+0 plus a signed zero), and v - (+0) is v, also for v = -0.0 (adding
    # a +0 would turn ATen's -0.0 into +0.0).
    # The derivative for ``x`` is the tangent itself (PyTorch's formula ``grad``), so its
    # gradient is the incoming one passed on (Note [Pass-through gradients] in graph.py).
    if not _is_float(value):
        return value
    q = lax.stop_gradient(quotient)
    return _rounded_rest(x, y, lax.stop_gradient(value), q)


@jax.custom_jvp
def _rounded_rest(x, y, value, q):
    return value


def _rounded_rest_jvp(primals, tangents):
    # an operand without a tangent drops its term, as PyTorch's undefined (ZeroTensor) tangent
    # does: ``fmod(nan, 2.0)``'s tangent is the input's, not ``t - nan * 0``
    x, y, value, q = primals
    tx, ty, _, _ = forward_ad.given(tangents)
    terms = [
        None if tx is None else tx.astype(value.dtype),
        None if ty is None else -(q * ty.astype(value.dtype)),  # (t - a is t + -a exactly)
    ]
    return value, forward_ad.sum_terms(terms, value)


_rounded_rest.defjvp(_rounded_rest_jvp, symbolic_zeros=True)


def _remainder(x, y):
    return _with_quotient(_remainder_value(x, y), x, y, _div_floor(x, y))


def _fmod(x, y):
    return _with_quotient(lax.rem(*jnp.broadcast_arrays(x, y)), x, y, _div_trunc(x, y))


def _no_derivative(aten: str):
    """The identity, whose differentiation raises PyTorch's error for ops without a derivative
    (their node is ``NotImplemented``); this is no derivative formula, only the refusal."""

    @jax.custom_jvp
    def identity(x):
        return x

    @identity.defjvp
    def _refuse_jvp(primals, tangents):
        raise RuntimeError(NO_DERIVATIVE.format(aten))

    return identity


_FLOOR_DIVIDE_NO_GRAD = _no_derivative("floor_divide")
_REMAINDER_NO_GRAD = _no_derivative("remainder")


# The refusal wraps the operands: differentiating with respect to any of them raises.
def _floor_divide_fwd(x, y):
    return _div_floor(_FLOOR_DIVIDE_NO_GRAD(x), _FLOOR_DIVIDE_NO_GRAD(y))


def _rremainder_fwd(x, y):
    return _remainder_value(_REMAINDER_NO_GRAD(y), _REMAINDER_NO_GRAD(x))


def _rfloor_divide_fwd(x, y):
    return _div_floor(_FLOOR_DIVIDE_NO_GRAD(y), _FLOOR_DIVIDE_NO_GRAD(x))


def _sign(x):
    if x.dtype == jnp.bool_:
        return x
    if _is_float(x):  # ATen: (0 < x) - (x < 0), so sign(NaN) and sign(-0.0) are +0.0
        return jnp.where(x > 0, 1, jnp.where(x < 0, -1, 0)).astype(x.dtype)
    return jnp.sign(x)


def _sgn(x):
    if not jnp.iscomplexobj(x):
        return _sign(x)
    # ATen: x / |x|, and 0 at 0; the safe divisor keeps the gradient at 0 finite (PyTorch's is 0).
    # Written conj(sgn(conj(x))), the same value, for PyTorch's signed zeros in the gradient (as
    # in _abs).
    c = jnp.conj(x)
    a = jnp.abs(c)
    safe = jnp.where(a == 0, 1, a)
    return jnp.where(a == 0, 0, jnp.conj(lax.complex(c.real / safe, c.imag / safe)))


def _atan2(y, x):
    if not (_is_float(y) and _is_float(x)):
        return _atan2_value(y, x)
    return forward_ad.forward_formula(_atan2_value, _atan2_jvp, y, x)


def _atan2_jvp(primals, tangents):
    # (-self * other_t + other * self_t) / (self^2 + other^2), NaN at 0 / 0 where the backward
    # gives 0 (Note [Forward formulas]); an operand without a tangent drops its term
    # (LLVM may fuse a product into the sum: about a third of the tangents differ from
    # PyTorch's in the last bit, half of them with JAX's own atan2 rule)
    (y, x), (yt, xt) = primals, tangents
    num = None if xt is None else -y * xt
    if yt is not None:
        num = x * yt if num is None else num + x * yt
    return jnp.broadcast_to(num / (y * y + x * x), jnp.broadcast_shapes(y.shape, x.shape))


def _atan2_value(y, x):
    # PyTorch's gradient is 0 where y*y + x*x is 0 (its atan2_backward masks the reciprocal);
    # JAX's is NaN there.
    zero = y * y + x * x == 0
    at_zero = lax.stop_gradient(jnp.arctan2(y, x))
    return jnp.where(zero, at_zero, jnp.arctan2(jnp.where(zero, 1, y), x))


def _angle(x):
    if not jnp.iscomplexobj(x):
        # ATen: NaN stays NaN, pi below 0, else 0; PyTorch's gradient for real inputs is 0.
        pi = jnp.asarray(np.pi, x.dtype)
        return lax.stop_gradient(jnp.where(jnp.isnan(x), x, jnp.where(x < 0, pi, 0)))
    # atan2(imag, real), whose gradient PyTorch sets to 0 at 0 (JAX's is NaN there).
    zero = x == 0
    safe = jnp.where(zero, 1, x)
    at_zero = lax.stop_gradient(jnp.arctan2(x.imag, x.real))
    return jnp.where(zero, at_zero, jnp.arctan2(safe.imag, safe.real))


def _round(x, decimals=0):
    if not _is_float(x):
        return x
    if decimals == 0:
        return jnp.round(x)
    # ATen: nearbyint(x * 10^d) / 10^d, or nearbyint(x / 10^-d) * 10^-d for negative decimals.
    ten = float(10 ** abs(decimals))
    opmath = jnp.float32 if x.dtype in (jnp.float16, jnp.bfloat16) else x.dtype
    a = x.astype(opmath)
    t = _full(ten, a.shape, opmath)
    out = jnp.round(a / t) * t if decimals < 0 else jnp.round(a * t) / t
    return out.astype(x.dtype)


def _int_identity(fn):
    return lambda x: x if not _is_float(x) else fn(x)


def _logit(x, eps=None):
    if eps is not None:
        # ATen clamps to [eps, 1 - eps]; the gradient passes at the bounds and is 0 outside.
        lo = jnp.asarray(eps, x.dtype)
        hi = jnp.asarray(1, x.dtype) - lo
        return _logit_kernel(jnp.where(x < lo, lo, jnp.where(x > hi, hi, x)).astype(x.dtype))
    # Without eps, PyTorch's gradient is NaN outside [0, 1]: add NaN * x there (the value is NaN
    # already) and 0 * x inside.
    nan_outside = jnp.where((x < 0) | (x > 1), jnp.nan, 0).astype(x.dtype)
    return _logit_kernel(x) + lax.stop_gradient(nan_outside) * x


@jax.custom_jvp
def _logit_kernel(x):
    """PyTorch's ``log(x / (1 - x))``, each step rounded to the dtype as its vectorized kernel
    rounds (half types too), with its derivative ``1 / (x (1 - x))`` (JAX's VJP of the formula
    is NaN at 0, where PyTorch's gradient is inf)."""
    if x.dtype not in D.HALF_ARRAY_TYPES:
        return jnp.log(x / (1 - x))
    dt = x.dtype
    f = x.astype(jnp.float32)
    ratio = (f / (1 - f).astype(dt).astype(jnp.float32)).astype(dt).astype(jnp.float32)
    return jnp.log(ratio).astype(dt)


@_logit_kernel.defjvp
def _logit_kernel_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    f = x.astype(jnp.float32) if x.dtype in D.HALF_ARRAY_TYPES else x
    return _logit_kernel(x), (t.astype(f.dtype) / (f * (1 - f))).astype(x.dtype)


def _digamma(x):
    # ATen: digamma(+-0) = -+inf (JAX gives NaN there).
    pole = lax.stop_gradient(jnp.copysign(jnp.full_like(x, jnp.inf), -x))
    return jnp.where(x == 0, pole, lax.digamma(x))


def _digamma_trigamma(x):
    """digamma whose derivative is ATen's trigamma (JAX's own rule, polygamma(1, x), is a few
    1e-10 off in double precision and far off at some negative non-integers)."""
    from .special_ops import _digamma_exact  # special_ops imports this module

    return _digamma_exact(x)


def _abs(x):
    # PyTorch's gradient is sgn(x) * grad: 0 at 0 and at NaN (JAX's abs gives 1 at 0).
    if jnp.iscomplexobj(x):
        # |conj(x)|: the same value, and JAX's VJP in PyTorch's convention (Note in dispatch's
        # _backward) is then grad * sgn(x) with PyTorch's signed zeros (|x|'s gives 1-0j at 1).
        return jnp.abs(jnp.conj(x))
    if not _is_float(x):
        return jnp.abs(x)
    # x * sgn(x): the gradient is grad * sgn(x) as PyTorch computes it, so an infinite
    # gradient at 0 gives NaN as PyTorch's does (0 at NaN, where sgn is taken as 0)
    return x * lax.stop_gradient(jnp.where(jnp.isnan(x), 0, jnp.sign(x)).astype(x.dtype))


def _erfinv(x):
    return lax.erf_inv(x)


def _nan_to_num(x, nan=0.0, posinf=None, neginf=None):
    if not _is_float(x):
        return x
    info = jnp.finfo(x.dtype)
    pos = info.max if posinf is None else posinf
    neg = info.min if neginf is None else neginf
    if jnp.iscomplexobj(x):
        return _replaced(x, nan, pos, neg)
    return _finite_replaced(x, nan, pos, neg)


def _replaced(x, nan, pos, neg):
    out = jnp.where(jnp.isnan(x), jnp.asarray(nan, x.dtype), x)
    out = jnp.where(x == jnp.inf, jnp.asarray(pos, x.dtype), out)
    return jnp.where(x == -jnp.inf, jnp.asarray(neg, x.dtype), out)


_finite_replaced = jax.custom_jvp(_replaced, nondiff_argnums=(1, 2, 3))


@_finite_replaced.defjvp
def _finite_replaced_jvp(nan, pos, neg, primals, tangents):
    # NanToNumBackward0: grad * isfinite(self), a product (a NaN gradient stays NaN: Note [Tie
    # counts] in reductions.py)
    (x,), (t,) = primals, tangents
    mask = lax.optimization_barrier(jnp.isfinite(x).astype(t.dtype))
    return _replaced(x, nan, pos, neg), t * mask


# PyTorch's hypot_backward: grad * self / result (NaN where both are 0; JAX's gives 0.5)
_hypot = with_partials(jnp.hypot, lambda x, y, out: (x / out, y / out))


def _copysign(x, y):
    if not _is_float(x):
        return jnp.copysign(x, y)
    return _copysign_float(x, y)


@jax.custom_jvp
def _copysign_float(x, y):
    return jnp.copysign(x, y)


@_copysign_float.defjvp
def _copysign_jvp(primals, tangents):
    # copysign_tensor_self_backward: grad * (result / self), 0 where self is 0 (so NaN at a NaN
    # or an infinity); ``other`` gets none
    x, y = primals
    tx, _ = tangents
    out = jnp.copysign(x, y)
    ratio = jnp.where(x == 0, jnp.zeros_like(out), out / x)
    return out, jnp.broadcast_to(tx * ratio, out.shape).astype(out.dtype)


def _logaddexp(x, y):
    # ATen: a if both are the same infinity, else max + log1p(exp(-|a - b|)).
    # -|a - b| is written min - max, whose VJP splits ties half and half as PyTorch's
    # grad / (1 + exp(b - a)) does (JAX's abs has derivative 1 at 0).
    hi, lo = jnp.maximum(x, y), jnp.minimum(x, y)
    same_inf = jnp.isinf(x) & (x == y)
    safe = jnp.where(same_inf, 0, lo - hi)
    return jnp.where(same_inf, x, hi + jnp.log1p(jnp.exp(safe)))


def _maximum(x, y, minimum=False):
    if x.dtype == jnp.bool_:
        return (x & y) if minimum else (x | y)
    pick = jnp.minimum(x, y) if minimum else jnp.maximum(x, y)
    if not _is_float(x):
        return pick
    return forward_ad.forward_formula(
        functools.partial(_maximum_value, minimum=minimum),
        functools.partial(_maximum_jvp, minimum=minimum),
        x,
        y,
    )


def _zeros_for_none(primals, tangents) -> list:
    """Zeros for the tangents ``forward_formula`` gives as None (terms that select, not scale)."""
    return [jnp.zeros_like(p) if t is None else t for p, t in zip(primals, tangents)]


def _maximum_value(x, y, minimum):
    # JAX splits ties half and half, as PyTorch does; a NaN propagates and both inputs get the
    # whole gradient in PyTorch (neither "self < other" nor "self > other" holds).
    pick = jnp.minimum(x, y) if minimum else jnp.maximum(x, y)
    nan = jnp.isnan(x) | jnp.isnan(y)
    return jnp.where(nan, x + y, pick)


def _maximum_jvp(primals, tangents, minimum):
    # other_t + where(self == other, 0.5, self > other) * (self_t - other_t): a NaN gives
    # other's tangent (Note [Forward formulas])
    (x, y), (xt, yt) = primals, _zeros_for_none(primals, tangents)
    wins = (x < y) if minimum else (x > y)
    share = jnp.where(x == y, 0.5, wins.astype(xt.dtype))
    return yt + lax.optimization_barrier(share.astype(xt.dtype)) * (xt - yt)


def _fmax(x, y, minimum=False):
    if not (_is_float(x) and _is_float(y)):
        return _fmax_value(x, y, minimum)
    return forward_ad.forward_formula(
        functools.partial(_fmax_value, minimum=minimum),
        functools.partial(_fmax_jvp, minimum=minimum),
        x,
        y,
    )


def _fmax_value(x, y, minimum):
    # PyTorch: self gets the gradient where self >= other (<= for fmin) or other is NaN.
    take_x = ((x <= y) if minimum else (x >= y)) | (jnp.isnan(y) if _is_float(y) else False)
    return jnp.where(take_x, x, y)


def _fmax_jvp(primals, tangents, minimum):
    # fmax: other_t + (self > other | other.isnan()) * (self_t - other_t), a tie giving other's
    # tangent; fmin's reads self <= other (Note [Forward formulas])
    (x, y), (xt, yt) = primals, _zeros_for_none(primals, tangents)
    take_x = ((x <= y) if minimum else (x > y)) | jnp.isnan(y)
    # a product, NaN tangents reaching through a 0 (Note [Tie counts] in reductions.py)
    return yt + lax.optimization_barrier(take_x.astype(xt.dtype)) * (xt - yt)


def _clamp_value(x, lo, hi):
    # ATen's clamp: min(max(x, lo), hi), a NaN propagating.
    if lo is not None:
        x = jnp.maximum(x, lo)
    if hi is not None:
        x = jnp.minimum(x, hi)
    return x


def _clamp_scalar(x, lo, hi):
    # The gradient passes where lo <= x <= hi (bounds included), else 0 (NaN too).
    if x.dtype == jnp.bool_ or not _is_float(x):
        return _clamp_value(x, lo, hi)
    inside = jnp.ones(x.shape, bool)
    if lo is not None:
        inside = inside & (x >= lo)
    if hi is not None:
        inside = inside & (x <= hi)
    return jnp.where(inside, x, lax.stop_gradient(_clamp_value(x, lo, hi)))


def _clamp_tensor(x, lo, hi, one_bound=False):
    value = _clamp_value(x, lo, hi)
    if not _is_float(value):
        return value
    bounds = [b for b in (lo, hi) if b is not None]

    def clamp(x, *b):
        return _clamp_tensor_value(x, *_bounds(b))

    def jvp(primals, tangents):
        # clamp_jvp (Note [Forward formulas]): a tie or a NaN reads the bound's tangent with
        # one bound, the input's with both
        (x, *b), (xt, *bt) = primals, _zeros_for_none(primals, tangents)
        (lo, hi), (lot, hit) = _bounds(b), _bounds(bt)
        shape = jnp.broadcast_shapes(*(jnp.shape(a) for a in primals))
        if lo is not None and hi is not None:
            inner = jnp.where(x < lo, lot, jnp.where(x > hi, hit, xt))
            out = jnp.where(lo > hi, hit, inner)
        elif one_bound:  # clamp_min.Tensor / clamp_max.Tensor: a tie reads the input's
            out = jnp.where(x >= lo, xt, lot) if lo is not None else jnp.where(x <= hi, xt, hit)
        elif lo is not None:
            out = jnp.where(x > lo, xt, lot)
        else:
            out = jnp.where(x < hi, xt, hit)
        return jnp.broadcast_to(out, shape).astype(value.dtype)

    def _bounds(b):
        b = list(b)
        return (b.pop(0) if lo is not None else None), (b.pop(0) if hi is not None else None)

    return forward_ad.forward_formula(clamp, jvp, x, *bounds)


def _clamp_tensor_value(x, lo, hi):
    # clamp_backward_min_max: self where lo <= x <= hi; min where x < lo (and lo < hi); max where
    # x > hi (or hi < lo); nothing elsewhere (NaNs).
    value = _clamp_value(x, lo, hi)
    shape = value.shape
    x = jnp.broadcast_to(x, shape)
    inside = jnp.ones(shape, bool)
    out = lax.stop_gradient(value)
    if lo is not None and hi is not None:
        inside = (x >= lo) & (x <= hi)
        # hi < lo: PyTorch's max gets the gradient even where x (or lo) is NaN, and x > hi
        # gives it where lo is NaN; the value stays NaN there.
        hi_b = jnp.broadcast_to(hi, shape)
        hi_b = jnp.where(jnp.isnan(value), hi_b + lax.stop_gradient(value - hi_b), hi_b)
        out = jnp.where((x > hi) | (hi < lo), hi_b, out)
        out = jnp.where((x < lo) & (lo < hi), jnp.broadcast_to(lo, shape), out)
    elif lo is not None:
        inside = x >= lo
        out = jnp.where(x < lo, jnp.broadcast_to(lo, shape), out)
    else:
        inside = x <= hi
        out = jnp.where(x > hi, jnp.broadcast_to(hi, shape), out)
    return jnp.where(inside, x, out)


@jax.custom_jvp
def _lerp(x, end, weight):
    # ATen: small weights (|w| < 0.5) interpolate from self, others from end.
    diff = end - x
    small = jnp.abs(weight) < 0.5
    return jnp.where(small, x + weight * diff, end - diff * (1 - weight))


def _lerp_jvp(primals, tangents):
    # Note [Formula tangents] in table.py; LerpBackward0/1: self: grad * (1 - weight), end:
    # grad * weight, weight: grad * (end - self). An operand without a tangent drops its term,
    # as PyTorch's undefined (ZeroTensor) tangent does (a NaN input times no weight tangent)
    x, end, w = primals
    value = _lerp(x, end, w)
    factors = (lambda: 1 - w, lambda: w, lambda: end - x)
    terms = [None if t is None else t * f() for t, f in zip(forward_ad.given(tangents), factors)]
    return value, forward_ad.sum_terms(terms, value)


_lerp.defjvp(_lerp_jvp, symbolic_zeros=True)


def _addc_rule(meta, static):
    """addcmul/addcdiv: ``self`` in the result dtype, the tensors and ``value`` as given: the
    kernel computes in the result dtype, PyTorch's formulas in the tensors' own (``tensor2 *
    value`` rounds in tensor2's dtype)."""
    rt = D.result_type_of([m for m in meta if m is not None])
    return (rt, None, None, None), rt


def _own(value, t, rt):
    """``(t, value)`` as PyTorch's backward formula meets them: a floating ``t`` in its own dtype
    with the Scalar ``value`` in it, else both in the result dtype ``rt``."""
    if not hasattr(value, "astype"):
        return (t, value) if jnp.issubdtype(t.dtype, jnp.inexact) else (t.astype(rt), value)
    if not jnp.issubdtype(t.dtype, jnp.inexact):
        return t.astype(rt), value.astype(rt)
    if jnp.iscomplexobj(value) and not jnp.iscomplexobj(t):  # a complex Scalar makes it complex
        return t, value.astype(jnp.result_type(t.dtype, jnp.complex64))
    return t, value.astype(t.dtype)


def _promoted(x, t1, t2, value):
    rt = x.dtype
    return t1.astype(rt), t2.astype(rt), value.astype(rt) if hasattr(value, "astype") else value


def _addcmul_value(x, t1, t2, value):
    t1, t2, value = _promoted(x, t1, t2, value)
    return x + value * t1 * t2


def _addcmul_jvp(primals, tangents):
    # AddcmulBackward0: self: grad, tensor1: grad * (tensor2 * value), tensor2: grad * (tensor1
    # * value), each product in its tensor's dtype; an operand without a tangent drops its term
    x, t1, t2, value = primals
    tx, tt1, tt2, _ = forward_ad.given(tangents)
    out = _addcmul_value(x, t1, t2, value)
    terms = [tx, None, None]
    if tt1 is not None:
        a, v = _own(value, t2, x.dtype)
        terms[1] = tt1 * (a * v)
    if tt2 is not None:
        a, v = _own(value, t1, x.dtype)
        terms[2] = tt2 * (a * v)
    return out, forward_ad.sum_terms(terms, out)


def _addcmul_forward_jvp(primals, tangents):
    # the forward formula: self_t + tensor1_t * tensor2 * value + tensor2_t * tensor1 * value,
    # in the result dtype
    x, t1, t2, value = primals
    tx, tt1, tt2, _ = forward_ad.given(tangents)
    p1, p2, v = _promoted(x, t1, t2, value)
    terms = (
        tx,
        None if tt1 is None else tt1.astype(x.dtype) * p2 * v,
        None if tt2 is None else tt2.astype(x.dtype) * p1 * v,
    )
    out = _addcmul_value(x, t1, t2, value)
    return out, forward_ad.sum_terms(terms, out)


def _addcdiv_value(x, t1, t2, value):
    t1, t2, value = _promoted(x, t1, t2, value)
    return x + _true_divide(value * t1, t2)


def _addcdiv_jvp(primals, tangents):
    # AddcdivBackward0: self: grad, tensor1: grad * (value / tensor2), tensor2: -grad * (value *
    # tensor1 / (tensor2 * tensor2)), in the tensors' own dtypes; an operand without a tangent
    # drops its term
    x, t1, t2, value = primals
    tx, tt1, tt2, _ = forward_ad.given(tangents)
    out = _addcdiv_value(x, t1, t2, value)
    terms = [tx, None, None]
    if tt1 is not None:
        d, v = _own(value, t2, x.dtype)
        shape = jnp.broadcast_shapes(jnp.shape(t1), jnp.shape(t2))
        terms[1] = tt1 * _true_divide(jnp.broadcast_to(v, shape), d)
    if tt2 is not None:
        n, v = _own(value, t1, x.dtype)
        d = _own(value, t2, x.dtype)[0]
        terms[2] = tt2 * -_true_divide(v * n, d * d)
    return out, forward_ad.sum_terms(terms, out)


def _addcdiv_forward_jvp(primals, tangents):
    # the forward formula: self_t + tensor1_t / tensor2 * value - tensor2_t * (tensor1 /
    # tensor2) / tensor2 * value, in the result dtype
    x, t1, t2, value = primals
    tx, tt1, tt2, _ = forward_ad.given(tangents)
    p1, p2, v = _promoted(x, t1, t2, value)
    terms = [tx, None, None]
    if tt1 is not None:
        terms[1] = _true_divide(tt1.astype(x.dtype), p2) * v
    if tt2 is not None:
        terms[2] = -(_true_divide(tt2.astype(x.dtype) * _true_divide(p1, p2), p2) * v)
    out = _addcdiv_value(x, t1, t2, value)
    return out, forward_ad.sum_terms(terms, out)


_addcmul = forward_ad.with_rules(_addcmul_value, _addcmul_jvp, _addcmul_forward_jvp)
_addcdiv = forward_ad.with_rules(_addcdiv_value, _addcdiv_jvp, _addcdiv_forward_jvp)


def _isclose(a, b, rtol, atol, equal_nan, default):
    close = a == b
    if equal_nan and _is_float(a):
        close = close | (jnp.isnan(a) & jnp.isnan(b))
    if rtol == 0 and atol == 0:
        return close
    if a.dtype == jnp.bool_:
        a, b = a.astype(default), b.astype(default)
    ft = a.dtype if _is_float(a) else default
    allowed = atol + jnp.abs(rtol * b.astype(ft))
    actual = jnp.abs(a - b)
    return close | (jnp.isfinite(actual) & (actual.astype(ft) <= allowed))


def _bits(x) -> int:
    return jnp.iinfo(x.dtype).bits


def _lshift(x, y):
    x, y = jnp.broadcast_arrays(x, y)
    out_of_range = (y.astype(_signed(y.dtype)) < 0) | (y >= _bits(x))
    return jnp.where(out_of_range, 0, lax.shift_left(x, y)).astype(x.dtype)


def _rshift(x, y):
    x, y = jnp.broadcast_arrays(x, y)
    signed = jnp.issubdtype(x.dtype, jnp.signedinteger)
    max_shift = _bits(x) - signed
    out_of_range = (y.astype(_signed(y.dtype)) < 0) | (y >= max_shift)
    shift = jnp.where(out_of_range, max_shift, y).astype(x.dtype)
    if signed:
        return lax.shift_right_arithmetic(x, shift)
    return jnp.where(shift >= _bits(x), 0, lax.shift_right_logical(x, shift)).astype(x.dtype)


def _signed(dt):
    return {np.dtype(np.uint8): jnp.int8}.get(np.dtype(dt), dt)


def _rsqrt(x):
    """``1 / sqrt(x)``, as PyTorch's CPU kernel computes it (XLA's ``rsqrt`` differs by an ulp
    on a third of the values); the barrier keeps XLA from folding it back into ``rsqrt``."""
    if x.dtype in (jnp.float16, jnp.bfloat16):  # computed in float32, rounded once
        return (1 / lax.optimization_barrier(jnp.sqrt(x.astype(jnp.float32)))).astype(x.dtype)
    return 1 / lax.optimization_barrier(jnp.sqrt(x))


# --- the table entries -------------------------------------------------------------------------

_UNARY_FLOAT = [
    # name, forward, grad_fn, what PyTorch saves
    ("sqrt", jnp.sqrt, "SqrtBackward0", "result"),
    ("rsqrt", _rsqrt, "RsqrtBackward0", "result"),
    ("exp2", jnp.exp2, "Exp2Backward0", "result"),
    ("expm1", jnp.expm1, "Expm1Backward0", "result"),
    ("log2", jnp.log2, "Log2Backward0", "self"),
    ("log10", jnp.log10, "Log10Backward0", "self"),
    ("log1p", jnp.log1p, "Log1PBackward0", "self"),
    ("sin", jnp.sin, "SinBackward0", "self"),
    ("cos", jnp.cos, "CosBackward0", "self"),
    ("tan", jnp.tan, "TanBackward0", "result"),
    ("asin", jnp.arcsin, "AsinBackward0", "self"),
    ("acos", jnp.arccos, "AcosBackward0", "self"),
    ("atan", jnp.arctan, "AtanBackward0", "self"),
    ("sinh", jnp.sinh, "SinhBackward0", "self"),
    ("cosh", jnp.cosh, "CoshBackward0", "self"),
    ("tanh", jnp.tanh, "TanhBackward0", "result"),
    ("asinh", jnp.arcsinh, "AsinhBackward0", "self"),
    ("acosh", jnp.arccosh, "AcoshBackward0", "self"),
    ("atanh", jnp.arctanh, "AtanhBackward0", "self"),
    ("sigmoid", jax.nn.sigmoid, "SigmoidBackward0", "result"),
    ("erf", lax.erf, "ErfBackward0", "self"),
    ("erfc", lax.erfc, "ErfcBackward0", "self"),
    ("erfinv", _erfinv, "ErfinvBackward0", "self"),
    ("lgamma", lax.lgamma, "LgammaBackward0", "self"),
    ("digamma", _digamma_trigamma, "DigammaBackward0", "self"),
]

# PyTorch's CPU kernels of these have no complex version: the kernel named refuses
_REAL_ONLY = {
    "erf": "erf_vml_cpu",
    "erfc": "erfc_vml_cpu",
    "erfinv": "erfinv_vml_cpu",
    "lgamma": "lgamma_vml_cpu",
    "digamma": "digamma",
}

_ROUNDING = [
    ("floor", jnp.floor, "FloorBackward0", "floor_vml_cpu"),
    ("ceil", jnp.ceil, "CeilBackward0", "ceil_vml_cpu"),
    ("trunc", jnp.trunc, "TruncBackward0", "trunc_vml_cpu"),
]

_PREDICATES = [
    ("isnan", lambda x: jnp.isnan(x) if _is_float(x) else jnp.zeros(x.shape, bool)),
    ("isinf", lambda x: jnp.isinf(x) if _is_float(x) else jnp.zeros(x.shape, bool)),
    ("isfinite", lambda x: jnp.isfinite(x) if _is_float(x) else jnp.ones(x.shape, bool)),
    ("isposinf", lambda x: x == jnp.inf if _is_float(x) else jnp.zeros(x.shape, bool)),
    ("isneginf", lambda x: x == -jnp.inf if _is_float(x) else jnp.zeros(x.shape, bool)),
    ("logical_not", jnp.logical_not),
]

_LOGICAL = [
    ("logical_and", jnp.logical_and),
    ("logical_or", jnp.logical_or),
    ("logical_xor", jnp.logical_xor),
]

_BITWISE = [
    ("bitwise_and", jnp.bitwise_and, "bitwise_and_cpu", "f"),
    ("bitwise_or", jnp.bitwise_or, "bitwise_or_cpu", "f"),
    ("bitwise_xor", jnp.bitwise_xor, "bitwise_xor_cpu", "f"),
    ("bitwise_left_shift", _lshift, "lshift_cpu", "fb"),
    ("bitwise_right_shift", _rshift, "rshift_cpu", "fb"),
]


# Note [Result formulas]: derivatives.yaml differentiates these from their ``result``, which is
# all their nodes keep (Note [Saved results] in table.py): under saved tensor hooks backward
# computes with the tensor ``unpack`` gives (a recomputation from the input would not see it),
# and the factors come in the order of PyTorch's formulas and CPU kernels (Python numbers are
# weakly typed: they take the result's dtype). (tanh keeps JAX's VJP from its input: its
# create_graph nodes and its float32 trajectories in training loops follow PyTorch's more
# closely so.)
_RESULT_FORMULAS = {
    "sqrt": lambda r, g: g / (2 * jnp.conj(r)),
    "rsqrt": lambda r, g: (-0.5 * g) * jnp.conj(r * r * r),
    "exp2": lambda r, g: (g * jnp.conj(r)) * math.log(2.0),
    "expm1": lambda r, g: g * (jnp.conj(r) + 1),
    "tan": lambda r, g: g * jnp.conj(1 + r * r),
    "sigmoid": lambda r, g: g * jnp.conj((1 - r) * r) if jnp.iscomplexobj(r) else (g * (1 - r)) * r,
    "tanh": lambda r, g: _tanh_backward(r, g),
}


def _tanh_backward(r, g):
    """ATen's ``tanh_backward``, ``g * conj(1 - r * r)`` (half types computing in float): JAX's
    VJP, ``g * (1 + r) * (1 - r)``, rounds differently."""
    if r.dtype in (jnp.float16, jnp.bfloat16):
        r32 = r.astype(jnp.float32)
        return (g.astype(jnp.float32) * (1 - r32 * r32)).astype(r.dtype)
    return g * jnp.conj(1 - r * r)


def _ops():
    nograd = {"differentiable": ()}
    ops = []
    for name, fwd, node, saved in _UNARY_FLOAT:
        kernel = _REAL_ONLY.get(name)
        rule = unary_float if kernel is None else _refuse("c", kernel, unary_float)
        extra = {"result_vjp": _RESULT_FORMULAS[name]} if name in _RESULT_FORMULAS else {}
        ops.append(OpDef(name, fwd, node, ("self",), rule, saves={"self": (saved,)}, **extra))
    for name, fwd, node, kernel in _ROUNDING:
        ops.append(OpDef(name, _int_identity(fwd), node, ("self",), _refuse("b", kernel)))
    for name, fwd in _PREDICATES:
        ops.append(OpDef(name, fwd, "", ("self",), _to_bool, **nograd))
    for name, fwd in _LOGICAL:
        ops.append(OpDef(name, fwd, "", ("self", "other"), _to_bool, broadcast=True, **nograd))
    for name, fwd, kernel, kinds in _BITWISE:
        rule = _refuse(kinds + "c", kernel, promote)
        ops.append(OpDef(name, fwd, "", ("self", "other"), rule, broadcast=True, **nograd))
    b2 = {"broadcast": True}
    ops += [
        OpDef(
            "abs",
            _abs,
            "AbsBackward0",
            ("self",),
            _to_real(_refuse("b", "abs_cpu")),
            saves={"self": ("self",)},
        ),
        OpDef("sign", _sign, "SignBackward0", ("self",), _sign_rule),
        OpDef("sgn", _sgn, "SgnBackward0", ("self",), _same, saves={"self": ("self", "result")}),
        OpDef(
            "angle",
            _angle,
            "AngleBackward0",
            ("self",),
            _to_real(unary_float),
            saves={"self": ("self",)},
        ),
        OpDef(
            "round",
            _round,
            "RoundBackward0",
            ("self",),
            _refuse("bc", "round_vml_cpu"),
        ),
        OpDef("round_decimals", _round, "RoundBackward1", ("self",), _round_decimals_rule),
        OpDef(
            "frac",
            lambda x: x - jnp.trunc(x),
            "FracBackward0",
            ("self",),
            _refuse("bui", "frac_cpu"),
        ),
        OpDef(
            "logit",
            _logit,
            "LogitBackward0",
            ("self",),
            _refuse("c", "logit_cpu", unary_float),
            saves={"self": ("self",)},
        ),
        OpDef(
            "nan_to_num",
            _nan_to_num,
            "NanToNumBackward0",
            ("self",),
            _same,
            saves={"self": ("self",)},
        ),
        OpDef(
            "bitwise_not",
            lambda x: jnp.logical_not(x) if x.dtype == jnp.bool_ else jnp.bitwise_not(x),
            "",
            ("self",),
            _refuse("fc", "bitwise_not_cpu"),
            differentiable=(),
        ),
        OpDef(
            "div_mode",
            _div_mode,
            "DivBackward2",
            ("self", "other"),
            promote,
            saves={"self": ("other",), "other": ("self", "other")},
            **b2,
        ),
        OpDef(
            "floor_divide",
            _floor_divide_fwd,
            "NotImplemented",
            ("self", "other"),
            _refuse("bc", "div_floor_cpu", promote),
            **b2,
        ),
        OpDef(
            "remainder",
            _remainder,
            "RemainderBackward1",
            ("self", "other"),
            _refuse("bc", "remainder_cpu", promote),
            saves={"other": ("self", "other")},
            **b2,
        ),
        OpDef(
            "remainder_scalar",
            _remainder,
            "RemainderBackward0",
            ("self", "other"),
            _refuse("bc", "remainder_cpu", promote),
            edges=("self",),
        ),
        OpDef(
            "fmod",
            _fmod,
            "FmodBackward1",
            ("self", "other"),
            _refuse("bc", "fmod_cpu", promote),
            saves={"other": ("self", "other")},
            **b2,
        ),
        OpDef(
            "fmod_scalar",
            _fmod,
            "FmodBackward0",
            ("self", "other"),
            _refuse("bc", "fmod_cpu", promote),
            edges=("self",),
        ),
        OpDef(
            "atan2",
            _atan2,
            "Atan2Backward0",
            ("self", "other"),
            promote_to_float,
            saves={"self": ("self", "other"), "other": ("self", "other")},
            **b2,
        ),
        OpDef(
            "hypot",
            _hypot,
            "HypotBackward0",
            ("self", "other"),
            _refuse("bui", "hypot_cpu", promote),
            saves={"self": ("self", "result"), "other": ("other", "result")},
            **b2,
        ),
        OpDef(
            "copysign",
            _copysign,
            "CopysignBackward0",
            ("self", "other"),
            _refuse("c", "copysign_cpu", promote_to_float),
            saves={"self": ("self", "result")},
            **b2,
        ),
        OpDef(
            "copysign_scalar",
            _copysign,
            "CopysignBackward1",
            ("self", "other"),
            _refuse("c", "copysign_cpu", promote_to_float),
            edges=("self",),
            saves={"self": ("self", "result")},
        ),
        OpDef(
            "logaddexp",
            _logaddexp,
            "LogaddexpBackward0",
            ("self", "other"),
            _refuse("bui", "logaddexp_cpu", promote),
            saves={"self": ("self", "other"), "other": ("self", "other")},
            **b2,
        ),
        OpDef(
            "maximum",
            _maximum,
            "MaximumBackward0",
            ("self", "other"),
            promote,
            saves={"self": ("self", "other"), "other": ("self", "other")},
            **b2,
        ),
        OpDef(
            "minimum",
            lambda x, y: _maximum(x, y, minimum=True),
            "MinimumBackward0",
            ("self", "other"),
            promote,
            saves={"self": ("self", "other"), "other": ("self", "other")},
            **b2,
        ),
        OpDef(
            "fmax",
            _fmax,
            "FmaxBackward0",
            ("self", "other"),
            promote,
            saves={"self": ("self", "other"), "other": ("self", "other")},
            **b2,
        ),
        OpDef(
            "fmin",
            lambda x, y: _fmax(x, y, minimum=True),
            "FminBackward0",
            ("self", "other"),
            promote,
            saves={"self": ("self", "other"), "other": ("self", "other")},
            **b2,
        ),
        OpDef(
            "clamp_scalar",  # clamp(Tensor, Scalar? min, Scalar? max): the bounds are no edges
            lambda x, lo, hi, kind: _clamp_scalar(x, lo, hi),
            lambda kind: {"both": "ClampBackward1", "min": "ClampMinBackward0"}.get(
                kind, "ClampMaxBackward0"
            ),
            ("self", "min", "max"),
            promote,
            edges=("self",),
            saves={"self": ("self",)},
        ),
        OpDef(
            "clamp_tensor",
            lambda x, lo, hi, kind: _clamp_tensor(x, lo, hi),
            "ClampBackward0",
            ("self", "min", "max"),
            promote,
            saves={
                "self": ("self", "min", "max"),
                "min": ("self", "min", "max"),
                "max": ("self", "min", "max"),
            },
            **b2,
        ),
        # clamp_min.Tensor / clamp_max.Tensor: two operands, so two edges (ClampMin/MaxBackward1)
        OpDef(
            "clamp_min_tensor",
            lambda x, lo: _clamp_tensor(x, lo, None, one_bound=True),
            "ClampMinBackward1",
            ("self", "min"),
            promote,
            saves={"self": ("self", "min"), "min": ("self", "min")},
            **b2,
        ),
        OpDef(
            "clamp_max_tensor",
            lambda x, hi: _clamp_tensor(x, None, hi, one_bound=True),
            "ClampMaxBackward1",
            ("self", "max"),
            promote,
            saves={"self": ("self", "max"), "max": ("self", "max")},
            **b2,
        ),
        OpDef(
            "lerp_scalar",
            _lerp,
            "LerpBackward0",
            ("self", "end", "weight"),
            _first_dtype,
            edges=("self", "end"),
            **b2,
        ),
        OpDef(
            "lerp_tensor",
            _lerp,
            "LerpBackward1",
            ("self", "end", "weight"),
            promote,
            saves={
                "self": ("weight",),
                "end": ("weight",),
                "weight": ("self", "end", "weight"),  # (PyTorch 2.13 keeps weight too)
            },
            **b2,
        ),
        OpDef(
            "addcmul",
            _addcmul,
            "AddcmulBackward0",
            ("self", "tensor1", "tensor2", "value"),
            _addc_rule,
            edges=("self", "tensor1", "tensor2"),
            saves={"tensor1": ("tensor2",), "tensor2": ("tensor1",)},
            **b2,
        ),
        OpDef(
            "addcdiv",
            _addcdiv,
            "AddcdivBackward0",
            ("self", "tensor1", "tensor2", "value"),
            _addc_rule,
            edges=("self", "tensor1", "tensor2"),
            # PyTorch 2.13 saves tensor2 for self too (its node always holds the divisor)
            saves={
                "self": ("tensor2",),
                "tensor1": ("tensor2",),
                "tensor2": ("tensor1", "tensor2"),
            },
            **b2,
        ),
        OpDef(
            "where",
            lambda c, x, y: jnp.where(c, x, y),
            "WhereBackward0",
            ("condition", "self", "other"),
            _where_rule,
            edges=("self", "other"),
            saves={"self": ("condition",), "other": ("condition",)},
            **b2,
        ),
        OpDef(
            "isclose",
            _isclose,
            "",
            ("self", "other"),
            lambda meta, static: ((None, None), D.bool_),
            differentiable=(),
            **b2,
        ),
        OpDef(
            "rsub_tensor",  # rsub(Tensor self, Tensor other, alpha): other - alpha * self
            lambda x, y, alpha=1: _rsub(x, y, alpha),
            "RsubBackward0",
            ("self", "other"),
            OPS["rsub"].dtypes,
            **b2,
        ),
    ]
    return ops


def _not_implemented_ops():
    """``NotImplemented`` nodes have an edge for each operand requiring grad (and no other)."""
    ops = []
    for base, fwd, kernel in [
        ("floor_divide", _floor_divide_fwd, "div_floor_cpu"),
        ("rfloor_divide", _rfloor_divide_fwd, "div_floor_cpu"),
        ("rremainder", _rremainder_fwd, "remainder_cpu"),
    ]:
        for edges in [("self",), ("other",), ("self", "other")]:
            ops.append(
                OpDef(
                    f"{base}_{'_'.join(edges)}",
                    fwd,
                    "NotImplemented",
                    ("self", "other"),
                    _refuse("bc", kernel, promote),
                    edges=edges,
                    broadcast=True,
                )
            )
    return ops


if "sqrt" not in OPS:  # importing twice (reload) must not register twice
    register_ops(*_ops(), *_not_implemented_ops())


# --- frontend helpers --------------------------------------------------------------------------


_need_tensor = E.need_tensor


def _is_number(x) -> bool:
    return isinstance(x, (bool, int, float, complex, np.generic)) and not isinstance(x, Tensor)


def check_operand(fn: str, x, arg: str, pos: int) -> None:
    """PyTorch's parser error for an operand of ``fn`` that is neither a Tensor nor a number."""
    if not isinstance(x, Tensor) and not _is_number(x):
        raise TypeError(MUST_BE_TENSOR.format(fn, arg, pos, E.py_typename(x)))


def check_number_arg(fn: str, value, arg: str) -> None:
    """PyTorch's parser error for a ``Number`` keyword argument (``alpha``) that is not one: a
    number or a 0-d tensor."""
    if E._matches("Number", value):
        return
    raise TypeError(f"{fn}(): argument '{arg}' must be Number, not {E.py_typename(value)}")


def _operands(fn: str, input, other) -> None:
    check_operand(fn, input, "input", 1)
    check_operand(fn, other, "other", 2)


def _binary_method(name: str, fn):
    """``fn`` as ``Tensor.<name>``: PyTorch counts a method's arguments from 1, not from
    ``input``, in its messages."""

    def method(self, other, *deprecated, **kwargs):
        if deprecated and name in ("add", "sub"):
            other, alpha = _deprecated_alpha(name, True, (other, *deprecated), kwargs)
            kwargs = {"alpha": alpha}
        elif deprecated:
            raise TypeError(
                f"{name}() takes 2 positional arguments but {2 + len(deprecated)} were given"
            )
        if kwargs.get("rounding_mode") is None:  # with one, PyTorch lists its signatures
            check_operand(name, other, "other", 1)
        return fn(self, other, **kwargs)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = fn.__doc__
    return method


def _number(x):
    return x.item() if isinstance(x, np.generic) else x


# Signatures as PyTorch's parser prints them, for its messages (Note [Argument parser errors]
# in _errors.py): one list for the Tensor method, one for the function.
_OUT = "*, Tensor out = None"
_SIGS = {
    "tensors": (("(Tensor other)",), (f"(Tensor input, Tensor other, {_OUT})",)),
    # a number is taken too, by an overload PyTorch hides from its messages
    "hidden_number": (("(Tensor other)",), (f"(Tensor input, Tensor other, {_OUT})",)),
    "or_number": (
        ("(Tensor other)", "(Number other)"),
        (f"(Tensor input, Tensor other, {_OUT})", f"(Tensor input, Number other, {_OUT})"),
    ),
    "or_number_no_out": (
        ("(Tensor other)", "(Number other)"),
        (f"(Tensor input, Tensor other, {_OUT})", "(Tensor input, Number other)"),
    ),
    "either": (
        ("(Tensor other)", "(Number other)"),
        (
            f"(Tensor input, Tensor other, {_OUT})",
            "(Number self, Tensor other)",
            f"(Tensor input, Number other, {_OUT})",
        ),
    ),
    "subtract": (
        ("(Tensor other, *, Number alpha = 1)", "(Number other, Number alpha = 1)"),
        (
            "(Tensor input, Tensor other, *, Number alpha = 1, Tensor out = None)",
            "(Tensor input, Number other, Number alpha = 1)",
        ),
    ),
    "rsub": (
        (),
        (
            "(Tensor input, Tensor other, *, Number alpha = 1)",
            "(Tensor input, Number other, Number alpha = 1)",
        ),
    ),
    "divide": (
        (
            "(Tensor other)",
            "(Tensor other, *, str rounding_mode)",
            "(Number other)",
            "(Number other, *, str rounding_mode)",
        ),
        (
            f"(Tensor input, Tensor other, {_OUT})",
            "(Tensor input, Tensor other, *, str rounding_mode, Tensor out = None)",
            "(Tensor input, Number other)",
            "(Tensor input, Number other, *, str rounding_mode)",
        ),
    ),
}


def _accepts(kind: str, a, b) -> bool:
    """Whether PyTorch's parser takes ``(a, b)`` for a binary op of signature kind ``kind``."""
    if kind == "tensors":
        return isinstance(a, Tensor) and isinstance(b, Tensor)
    if isinstance(a, Tensor):
        return isinstance(b, Tensor) or _is_number(b)
    return kind == "either" and _is_number(a) and isinstance(b, Tensor)


def _checked(
    name: str, kind: str, fn, *, other: str = "other", method: bool = True, function: bool = True
):
    """Install ``fn(input, other, **kwargs)`` as ``Tensor.<name>`` and ``leafgrad.<name>``, each
    refusing operands of the wrong type with PyTorch's parser message for that form (``other``:
    the name PyTorch gives the second operand)."""
    method_sigs, function_sigs = (
        tuple(sig.replace(" other", f" {other}") for sig in sigs) for sigs in _SIGS[kind]
    )

    code = fn.__code__
    accepted = set(code.co_varnames[: code.co_argcount + code.co_kwonlyargcount])

    def unexpected(kwargs, sigs, args) -> None:
        """PyTorch's parser's error for a keyword argument no signature takes (``out`` of a
        function: leafgrad writes no results into given tensors)."""
        for key, value in kwargs.items():
            if key in accepted:
                continue
            if key == "out" and any("Tensor out" in sig for sig in sigs):
                if value is None:
                    continue
                raise NotImplementedError(f"leafgrad: {name}(): out= is not supported")
            if len(sigs) > 1:
                raise TypeError(E.invalid_arguments(name, sigs, args, kwargs))
            raise TypeError(f"{name}() got an unexpected keyword argument '{key}'")

    def as_method(self, other, *args, **kwargs):
        if kwargs:
            unexpected(kwargs, method_sigs, (other, *args))
            kwargs.pop("out", None)
        if not _accepts(kind, self, other):
            raise TypeError(E.invalid_arguments(name, method_sigs, (other, *args), kwargs))
        return fn(self, other, *args, **kwargs)

    def as_function(input, other, *args, **kwargs):
        if kwargs:
            unexpected(kwargs, function_sigs, (input, other, *args))
            kwargs.pop("out", None)
        if not _accepts(kind, input, other):
            raise TypeError(E.invalid_arguments(name, function_sigs, (input, other, *args), kwargs))
        return fn(input, other, *args, **kwargs)

    for f in (as_method, as_function):
        f.__name__ = f.__qualname__ = name
        f.__doc__ = fn.__doc__ or f"``torch.{name}``: elementwise over two broadcast operands."
    if method:
        tensor_op(name, function=False)(as_method)
    if function:
        tensor_op(name, method=False)(as_function)


def _meta(x):
    return (x._dtype, x.ndim) if isinstance(x, Tensor) else x


def _result_dtype(*xs):
    return D.result_type_of([_meta(x) for x in xs if x is not None])


def _concrete(t) -> bool:
    return isinstance(t, Tensor) and not isinstance(t._data, jax.core.Tracer)


def _check_int_zero_division(self, other):
    """PyTorch's integer division by zero raises; checked on concrete (non-traced) values only."""
    if _result_dtype(self, other)._kind not in "ui":
        return
    if isinstance(other, Tensor):
        values = known_values(other._data)[0]  # Note [Known values]
        if values is not None and bool(np.any(values == 0)):
            raise RuntimeError(ZERO_DIVISION)
    elif isinstance(other, (int, float)) and other == 0:
        raise RuntimeError(ZERO_DIVISION)


_FLOAT_MAX = {d: float(jnp.finfo(d.np).max) for d in (D.float16, D.bfloat16, D.float32, D.float64)}


def kernel_scalar(value, dtype, opmath: bool = False):
    """A number as a CPU kernel reads it: c10's checked conversion to ``dtype`` (its overflow
    error; floats truncated toward zero for integer types), rounded to that type. ``opmath``:
    the kernel computes half and bfloat16 in float. A traced 0-d tensor is returned as is."""
    if isinstance(value, Tensor):
        if isinstance(value._data, jax.core.Tracer):
            return value
        value = value.item()  # PyTorch's parser reads a 0-d tensor as a Scalar
    if opmath and dtype in (D.float16, D.bfloat16):
        dtype = D.float32
    # fast paths (optimizer steps pass alpha=-lr): numbers that fit, as checked_number finds
    kind = type(value)
    if kind is int and -(1 << 63) <= value < 1 << 63:
        if dtype is D.int64 or (dtype._kind in "fc" and dtype is not D.float16):
            return value
    elif kind is float:
        top = _FLOAT_MAX.get(dtype)
        if top is not None and not abs(value) > top:  # NaN fits a floating type
            return value if dtype is D.float64 else dtype.np.type(value).item()
    from .shape import checked_number  # shape.py registers its ops after this module

    value = checked_number(value, dtype)
    if dtype._kind in "fc" and not isinstance(value, bool):
        # rounded as the kernel holds it: a float32 beta of 1e-50 is 0 and drops a NaN input
        value = dtype.np.type(value).item()
    return value


def _alpha_check(dtype, alpha, negated: bool = False):
    """PyTorch's alpha_check; returns alpha as the kernel sees it (a bool for bool results).
    ``negated``: sub's kernel is add's with ``-alpha``, which is what must fit the type."""
    alpha = _number(alpha)
    if _concrete(alpha):
        alpha = alpha.item()  # PyTorch's parser reads a 0-d tensor as a Scalar
    if isinstance(alpha, bool) and dtype is not D.bool_:
        raise RuntimeError(ALPHA_BOOL)
    if not (dtype.is_floating_point or dtype.is_complex) and not isinstance(alpha, (bool, int)):
        raise RuntimeError(ALPHA_FLOAT)
    if not dtype.is_complex and isinstance(alpha, complex):
        raise RuntimeError(ALPHA_COMPLEX)
    if dtype is D.bool_:
        return bool(alpha)
    if dtype is D.float32 and type(alpha) is float:
        kernel_scalar(-alpha if negated else alpha, dtype)  # its overflow error
        # The program rounds a float to float32 as the kernel does; the node's saved ``alpha``
        # is the number given, as PyTorch's Scalar is.
        return alpha
    if not negated:
        return kernel_scalar(alpha, dtype)
    alpha = -kernel_scalar(-alpha, dtype)
    if dtype._kind in "ui":  # back into the type's range, which JAX needs: equal modulo 2**bits
        info = np.iinfo(dtype.np)
        alpha = (alpha - int(info.min)) % (int(info.max) - int(info.min) + 1) + int(info.min)
    return alpha


# --- unary frontends ---------------------------------------------------------------------------


def _install_unary(name: str, *aliases: str):
    op = OPS[name]

    def fn(input):
        return dispatch(op, input)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``torch.{name}``: elementwise, recorded as PyTorch records it."
    tensor_op(name, *aliases)(fn)


for _name, *_ in _UNARY_FLOAT:
    _install_unary(_name)
for _name, *_ in _ROUNDING:
    _install_unary(_name)
for _name, _ in _PREDICATES:
    _install_unary(_name)
_install_unary("abs", "absolute")
_install_unary("sign")
_install_unary("sgn")
_install_unary("angle")
_install_unary("frac")
_install_unary("bitwise_not")
tensor_op("arcsin")(Tensor.asin)
tensor_op("arccos")(Tensor.acos)
tensor_op("arctan")(Tensor.atan)
tensor_op("arcsinh")(Tensor.asinh)
tensor_op("arccosh")(Tensor.acosh)
tensor_op("arctanh")(Tensor.atanh)


@tensor_op("square")
def square(input):
    """``torch.square``: ``pow(input, 2)`` (PowBackward0)."""
    return dispatch(OPS["pow_scalar"], input, exponent=2)


@tensor_op("round")
def round(input, *, decimals=None):  # noqa: A001
    """``torch.round``: half to even; with ``decimals``, ATen's scaled rounding (RoundBackward1)."""
    if decimals is not None:
        return dispatch(OPS["round_decimals"], input, decimals=int(decimals))
    return dispatch(OPS["round"], input)


@tensor_op("logit")
def logit(input, eps=None):
    """``torch.logit``: log(p / (1 - p)), with p clamped to [eps, 1 - eps] when eps is given."""
    if eps is None:
        return dispatch(OPS["logit"], input)
    return dispatch(OPS["logit"], input, eps=float(eps))


@tensor_op("nan_to_num")
def nan_to_num(input, nan=0.0, posinf=None, neginf=None):
    """``torch.nan_to_num``: NaN and infinities replaced by finite values."""
    static = {"nan": 0.0 if nan is None else float(nan)}
    if posinf is not None:
        static["posinf"] = float(posinf)
    if neginf is not None:
        static["neginf"] = float(neginf)
    return refuse_complex_autograd(dispatch(OPS["nan_to_num"], input, **static), "nan_to_num")


@tensor_op("positive")
def positive(input):
    """``torch.positive``: the tensor itself; refused for bool."""
    if input._dtype is D.bool_:
        raise RuntimeError(POSITIVE_BOOL)
    return input


def _invert(self):
    if self._dtype._kind not in "bui":
        raise TypeError(INVERT_FLOAT)
    return dispatch(OPS["bitwise_not"], self)


def _abs_operator(self):
    return dispatch(OPS["abs"], self)


def _abs_inplace(name: str):
    def method(self):
        from .inplace import inplace  # imported here: inplace.py imports this module

        def compute():
            # ATen's abs_ refuses complex below autograd: after the in-place checks on ``self``.
            if self._dtype.is_complex:
                raise RuntimeError(ABS_INPLACE_COMPLEX)
            return dispatch(OPS["abs"], self)

        return inplace(self, compute)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"``Tensor.{name}``: ``abs`` written into this tensor (not for complex)."
    return method


Tensor.__invert__ = _invert
Tensor.__abs__ = _abs_operator
Tensor.abs_ = _abs_inplace("abs_")
Tensor.absolute_ = _abs_inplace("absolute_")


# --- arithmetic frontends ----------------------------------------------------------------------


@tensor_op("add", method=False)
def add(input, other, *deprecated, alpha=1):
    """``torch.add``: ``input + alpha * other`` (or PyTorch's deprecated
    ``add(input, alpha, other)``)."""
    if deprecated:
        kwargs = {} if alpha == 1 else {"alpha": alpha}
        other, alpha = _deprecated_alpha("add", False, (other, *deprecated), kwargs, input)
    _operands("add", input, other)
    if type(alpha) not in (int, float):
        check_number_arg("add", alpha, "alpha")
    if alpha != 1 or isinstance(alpha, bool):
        _broadcast_first(input, other)
        alpha = _alpha_check(_result_dtype(input, other), alpha)
        if alpha == 1 and not isinstance(alpha, bool) or alpha is True:
            return dispatch(OPS["add"], input, other)
        return dispatch(OPS["add"], input, other, alpha=alpha)
    return dispatch(OPS["add"], input, other)


def _broadcast_first(a, b) -> None:
    """PyTorch's add/sub meta functions build the iterator (its broadcast error) before they
    check ``alpha``."""
    if isinstance(a, Tensor) and isinstance(b, Tensor):
        broadcast_shapes(tuple(a.shape), tuple(b.shape))


def _deprecated_alpha(spell: str, method: bool, args: tuple, kwargs: dict, *input) -> tuple:
    """``(other, alpha)`` of a call in the deprecated ``(Number alpha, Tensor other)`` form, or
    the parser's TypeError for a call no overload takes. ``args``: after ``self``/``input``;
    ``input``: a function's first argument."""
    found = E.deprecated_alpha(spell, method, args, kwargs)
    if found is None:
        raise TypeError(E.deprecated_alpha_refused(spell, method, (*input, *args), kwargs))
    return found


@tensor_op("sub", method=False)
def sub(input, other, *deprecated, alpha=1):
    """``torch.sub``: ``input - alpha * other`` (or PyTorch's deprecated
    ``sub(input, alpha, other)``)."""
    if deprecated:
        kwargs = {} if alpha == 1 else {"alpha": alpha}
        other, alpha = _deprecated_alpha("sub", False, (other, *deprecated), kwargs, input)
    _operands("sub", input, other)
    if type(alpha) not in (int, float):
        check_number_arg("sub", alpha, "alpha")
    if alpha != 1 or isinstance(alpha, bool):
        OPS["sub"].dtypes([_meta(input), _meta(other)], {})  # the bool messages come first
        _broadcast_first(input, other)
        alpha = _alpha_check(_result_dtype(input, other), alpha, negated=True)
        return dispatch(OPS["sub"], input, other, alpha=alpha)
    return dispatch(OPS["sub"], input, other)


def rsub(input, other, *, alpha=1):
    """``torch.rsub``: ``other - alpha * input``."""
    if type(alpha) not in (int, float):
        try:
            check_number_arg("rsub", alpha, "alpha")
        except TypeError:  # rsub is overloaded: the parser lists its signatures
            args, kw = (input, other), {"alpha": alpha}
            raise TypeError(E.invalid_arguments("rsub", _SIGS["rsub"][1], args, kw)) from None
    static = {}
    if alpha != 1 or isinstance(alpha, bool):
        OPS["sub"].dtypes([_meta(input), _meta(other)], {})
        _broadcast_first(other, input)
        static["alpha"] = _alpha_check(_result_dtype(input, other), alpha, negated=True)
    if isinstance(other, Tensor):
        # PyTorch computes other - alpha * input: its broadcast message names other first.
        broadcast_shapes(tuple(other.shape), tuple(input.shape))
        return dispatch(OPS["rsub_tensor"], input, other, **static)
    if input._inference:  # Note [Wrapped numbers] in _storage.py: sub(wrapped number, input)
        return dispatch(OPS["sub"], _number(other), input, **static)
    return dispatch(OPS["rsub"], input, other, **static)


_checked("rsub", "rsub", rsub, method=False)
tensor_op("rsub", function=False)(rsub)  # a leafgrad extra: PyTorch has no ``Tensor.rsub``


@tensor_op("div", method=False)
def div(input, other, *, rounding_mode=None):
    """``torch.div``: true division, or rounded with ``rounding_mode`` 'trunc' or 'floor'."""
    if rounding_mode is None:
        _operands("div", input, other)
        return dispatch(OPS["div"], input, other)
    if rounding_mode not in ("trunc", "floor"):
        raise RuntimeError(ROUNDING_MODE.format(rounding_mode))
    kernel = "div_trunc_cpu" if rounding_mode == "trunc" else "div_floor_cpu"
    result = _result_dtype(input, other)
    if result is D.bool_ or result.is_complex:
        _broadcast_shape(input, other)  # the iterator's shape check comes first
        raise _kernel_error(kernel, result)
    _check_int_zero_division(input, other)
    return dispatch(OPS["div_mode"], input, other, rounding_mode=rounding_mode)


tensor_op("add", function=False)(_binary_method("add", add))
tensor_op("sub", function=False)(_binary_method("sub", sub))
tensor_op("div", function=False)(_binary_method("div", div))
_checked("subtract", "subtract", sub)
_checked("divide", "divide", div)


def _mul(input, other):
    """``torch.mul``: ``input * other``."""
    return dispatch(OPS["mul"], input, other)


def true_divide(input, other):
    """``torch.true_divide``: the same as ``div`` without a rounding mode."""
    return dispatch(OPS["div"], input, other)


_checked("mul", "hidden_number", _mul)
_checked("multiply", "or_number_no_out", _mul)
_checked("true_divide", "or_number_no_out", true_divide)


def _edges_requiring_grad(base: str, a, b):
    names = [
        n for n, t in (("self", a), ("other", b)) if isinstance(t, Tensor) and t._requires_grad
    ]
    return OPS[f"{base}_{'_'.join(names or ['self'])}"]


def floor_divide(input, other):
    """``torch.floor_divide``: floor division; not differentiable (a ``NotImplemented`` node)."""
    if _result_dtype(input, other) is not D.bool_:
        _check_int_zero_division(input, other)
    return dispatch(_edges_requiring_grad("floor_divide", input, other), input, other)


def remainder(input, other):
    """``torch.remainder``: Python's modulus (the sign of the divisor)."""
    if _is_number(input):
        return _rmod(other, input)
    if _result_dtype(input, other) is not D.bool_:
        _check_int_zero_division(input, other)
    if isinstance(other, Tensor) or input._inference:  # Note [Wrapped numbers] in _storage.py
        return dispatch(OPS["remainder"], input, _number(other))
    return dispatch(OPS["remainder_scalar"], input, _number(other))


def fmod(input, other):
    """``torch.fmod``: C's fmod (the sign of the dividend)."""
    if _result_dtype(input, other) is not D.bool_:
        _check_int_zero_division(input, other)
    if isinstance(other, Tensor) or input._inference:  # Note [Wrapped numbers] in _storage.py
        return dispatch(OPS["fmod"], input, _number(other))
    return dispatch(OPS["fmod_scalar"], input, _number(other))


_checked("floor_divide", "or_number_no_out", floor_divide)
_checked("remainder", "either", remainder)
_checked("fmod", "or_number", fmod)


def copysign(input, other) -> Tensor:
    """``torch.copysign``: the magnitude of ``input`` with the sign of ``other``."""
    if isinstance(other, Tensor):
        return dispatch(OPS["copysign"], input, other)
    return dispatch(OPS["copysign_scalar"], input, _number(other))


_checked("copysign", "or_number", copysign)


def _rfloordiv(self, other):
    if not _is_operand(other):
        return NotImplemented
    if _result_dtype(self, other) is not D.bool_:
        _check_int_zero_division(other, self)
    return dispatch(_edges_requiring_grad("rfloor_divide", self, None), self, _number(other))


def _rmod(self, other):
    if not _is_operand(other):
        return NotImplemented
    if _result_dtype(self, other) is not D.bool_:
        _check_int_zero_division(other, self)
    if self._inference:  # Note [Wrapped numbers] in _storage.py: its node saves ``self``
        return dispatch(OPS["remainder"], _number(other), self)
    return dispatch(_edges_requiring_grad("rremainder", self, None), self, _number(other))


def _binary_operator(fn):
    def operator(self, other):
        if not _is_operand(other):
            return NotImplemented
        return fn(self, other)

    return operator


Tensor.__rsub__ = _binary_operator(rsub)
Tensor.__floordiv__ = _binary_operator(floor_divide)
Tensor.__rfloordiv__ = _rfloordiv
Tensor.__mod__ = _binary_operator(remainder)
Tensor.__rmod__ = _rmod


def _tensor_binary(name: str, op_name: str | None = None) -> None:
    op = OPS[op_name or name]

    def fn(input, other):
        return dispatch(op, input, other)

    fn.__doc__ = f"``torch.{name}``: elementwise over two broadcast tensors."
    _checked(name, "tensors", fn)


for _name in (
    "atan2 hypot logaddexp maximum minimum fmax fmin logical_and logical_or logical_xor"
).split():
    _tensor_binary(_name)
_tensor_binary("arctan2", "atan2")


def _bitwise(name: str) -> None:
    op = OPS[name]

    def fn(input, other):
        if _is_number(input):  # a Python number on the left: reflected
            input, other = other, input
            return dispatch(op, _scalar_tensor(other, input), input)
        return dispatch(op, input, _number(other))

    fn.__doc__ = f"``torch.{name}``: on integer and bool tensors."
    _checked(name, "either", fn)


def _scalar_tensor(value, like):
    """A Python number on the left of a bitwise op becomes a 0-d tensor of its own dtype."""
    dt = D.scalar_dtype(value)
    return Tensor._make(jnp.asarray(value, dt.np), dt, like._device)


for _name, *_ in _BITWISE:
    _bitwise(_name)


def _reflected(name: str):
    op = OPS[name]

    def fn(self, other):
        if not _is_operand(other):
            return NotImplemented
        return dispatch(op, _scalar_tensor(_number(other), self), self)

    return fn


Tensor.__and__ = _binary_operator(lambda a, b: dispatch(OPS["bitwise_and"], a, _number(b)))
Tensor.__or__ = _binary_operator(lambda a, b: dispatch(OPS["bitwise_or"], a, _number(b)))
Tensor.__xor__ = _binary_operator(lambda a, b: dispatch(OPS["bitwise_xor"], a, _number(b)))
Tensor.__lshift__ = _binary_operator(
    lambda a, b: dispatch(OPS["bitwise_left_shift"], a, _number(b))
)
Tensor.__rshift__ = _binary_operator(
    lambda a, b: dispatch(OPS["bitwise_right_shift"], a, _number(b))
)
Tensor.__rand__ = _binary_operator(lambda a, b: dispatch(OPS["bitwise_and"], a, _number(b)))
Tensor.__ror__ = _binary_operator(lambda a, b: dispatch(OPS["bitwise_or"], a, _number(b)))
Tensor.__rxor__ = _binary_operator(lambda a, b: dispatch(OPS["bitwise_xor"], a, _number(b)))
Tensor.__rlshift__ = _reflected("bitwise_left_shift")
Tensor.__rrshift__ = _reflected("bitwise_right_shift")


# --- comparisons -------------------------------------------------------------------------------


def _comparison(name: str):
    op = OPS[name]

    def fn(input, other):
        return dispatch(op, input, other)

    fn.__doc__ = f"``torch.{name}``: elementwise comparison, a bool tensor."
    return fn


for _alias, _name in [
    ("greater", "gt"),
    ("greater_equal", "ge"),
    ("less", "lt"),
    ("less_equal", "le"),
    ("not_equal", "ne"),
    ("eq", "eq"),
    ("ne", "ne"),
    ("gt", "gt"),
    ("ge", "ge"),
    ("lt", "lt"),
    ("le", "le"),
]:
    _checked(_alias, "or_number", _comparison(_name))


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """``torch.isclose``: ``|a - b| <= atol + rtol * |b|``, elementwise (same dtypes only)."""
    if input._dtype is not other._dtype:
        raise RuntimeError(ISCLOSE_DTYPE.format(input._dtype._legacy, other._dtype._legacy))
    static = {
        "rtol": float(rtol),
        "atol": float(atol),
        "equal_nan": bool(equal_nan),
        "default": D.get_default_dtype().np,
    }
    return dispatch(OPS["isclose"], input, other, **static)


@tensor_op("allclose")
def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False) -> bool:
    """``torch.allclose``: whether ``isclose`` holds everywhere (a Python bool: reads values)."""
    return bool(np.all(np.asarray(isclose(input, other, rtol, atol, equal_nan)._data)))


def equal(input, other) -> bool:
    """``torch.equal``: same shape and the same values (a Python bool: reads values)."""
    if tuple(input.shape) != tuple(other.shape):
        return False
    return bool(np.all(np.asarray(dispatch(OPS["eq"], input, other)._data)))


_checked("isclose", "tensors", isclose)
_checked("equal", "tensors", equal)


# --- clamp, lerp, addcmul, addcdiv, where ------------------------------------------------------


def _clamp_args_name(args) -> str:
    names = []
    for a in args:
        names.append("Tensor" if isinstance(a, Tensor) else E.py_typename(a))
    return ", ".join(names)


def _clamp(input, min, max, name):  # noqa: A002
    lo_t, hi_t = isinstance(min, Tensor), isinstance(max, Tensor)
    if (lo_t or hi_t) and min is not None and max is not None and not (lo_t and hi_t):
        # PyTorch's parser takes a 0-d tensor for a Number: (Tensor, Number, Number) applies.
        bound = min if lo_t else max
        if bound.ndim == 0:
            min, max = (bound.item(), max) if lo_t else (min, bound.item())  # noqa: A001
            lo_t = hi_t = False
    if (lo_t or hi_t) and not ((min is None or lo_t) and (max is None or hi_t)):
        given = [input] + [a for a in (min, max) if a is not None]
        raise TypeError(CLAMP_COMBINATION.format(_clamp_args_name(given)).replace("clamp", name, 1))
    if min is None and max is None:
        raise RuntimeError(CLAMP_NONE)
    if lo_t or hi_t:
        if lo_t and hi_t and input._dtype is min._dtype is max._dtype is D.bool_:
            _broadcast_shape(input, min, max)  # the iterator's shape check comes first
            raise NotImplementedError(E.KERNEL_DTYPE.format("clamp_cpu", "Bool"))
        out = dispatch(OPS["clamp_tensor"], input, min, max, kind="clamp")
        if lo_t and hi_t:
            _refuse_clamp_backward(out, input, min, max)
        return out
    min, max = _real_bounds(input, "both", min, max)  # noqa: A001
    _refuse_bool_clamp(input, min, max)
    _fitting_bounds(input, min, max)
    return dispatch(OPS["clamp_scalar"], input, _number(min), _number(max), kind="both")


def _real_bounds(input, kind: str, *bounds) -> tuple:
    """Complex number bounds as PyTorch's scalar clamps take them: ``clamp_min``/``clamp_max``
    refuse one, and so does ``clamp`` where it makes the result complex (an integer tensor);
    on a floating tensor ``clamp``'s kernel reads it as a double, which takes no imaginary part."""
    if any(isinstance(b, np.complexfloating) for b in bounds):  # the parser reads a double
        bounds = tuple(float(b) if isinstance(b, np.complexfloating) else b for b in bounds)
    if not any(isinstance(b, complex) for b in bounds):
        return bounds
    if kind != "both" or not input._dtype.is_floating_point:
        raise NotImplementedError("clamp is not supported for complex types")
    return tuple(E.real_scalar(b, "double") for b in bounds)


def _fitting_bounds(input, *bounds) -> None:
    """The clamp kernel converts each number bound into the result's dtype with c10's overflow
    check (``x.clamp(0, 300)`` of int8 raises rather than wrapping)."""
    if input._dtype is D.bool_:
        return
    from .shape import checked_number_into  # registered after this module

    checked_number_into(input, *(b for b in bounds if b is not None))


def _refuse_bool_clamp(input, min, max) -> None:  # noqa: A002
    """PyTorch's scalar clamp kernels refuse a bool result (a bool tensor, bool bounds); with
    one tensor bound or a number bound the computation is not in bool (Note [Kernel dtype
    refusals] in kernel_dtypes.py)."""
    if input._dtype is not D.bool_:
        return
    bounds = [b for b in (min, max) if b is not None]
    if all(isinstance(b, bool) for b in bounds):
        kernel = (
            "clamp_scalar_cpu"
            if len(bounds) == 2
            else ("clamp_min_scalar_cpu" if max is None else "clamp_max_scalar_cpu")
        )
        raise NotImplementedError(E.KERNEL_DTYPE.format(kernel, "Bool"))


def _refuse_clamp_backward(out, input, min, max) -> None:  # noqa: A002
    """PyTorch's formulas for clamp with both bounds combine two comparison masks in place
    (``(self >= min).logical_and_(self <= max)`` for self, ``(self < min).logical_and_(min <
    max)`` for min, ``(self > max).logical_or_(max < min)`` for max): the backward raises where
    the second mask broadcasts to more than the first's shape."""
    s, lo, hi = input._data.shape, min._data.shape, max._data.shape
    for edge, first, second in (  # wrapped last to first: checked self, min, max
        (2, (s, hi), (hi, lo)),
        (1, (s, lo), (lo, hi)),
        (0, (s, lo), (s, hi)),
    ):
        a = broadcast_shapes(*first)
        full = broadcast_shapes(a, broadcast_shapes(*second))
        if full != a and (input, min, max)[edge]._requires_grad:
            message = E.INPLACE_SHAPE.format(list(a), list(full))
            refuse_backward(out, lambda message=message: RuntimeError(message), edge=edge)


@tensor_op("clamp")
def clamp(input, min=None, max=None):  # noqa: A002
    """``torch.clamp``: ``min(max(input, min), max)``; bounds are numbers or tensors."""
    return _clamp(input, min, max, "clamp")


@tensor_op("clip")
def clip(input, min=None, max=None):  # noqa: A002
    """``torch.clip``: alias of ``clamp``."""
    return _clamp(input, min, max, "clip")


@tensor_op("clamp_min")
def clamp_min(input, min):  # noqa: A002
    """``torch.clamp_min``: ``max(input, min)`` (ClampMinBackward0/1)."""
    if isinstance(min, Tensor):
        return dispatch(OPS["clamp_min_tensor"], input, min)
    if min is None:  # the parser's (a method call's own comes from its table)
        E.refuse_by_signatures("clamp_min", input, min)
    (min,) = _real_bounds(input, "min", min)  # noqa: A001
    _refuse_bool_clamp(input, min, None)
    _fitting_bounds(input, min)
    return dispatch(OPS["clamp_scalar"], input, _number(min), None, kind="min")


@tensor_op("clamp_max")
def clamp_max(input, max):  # noqa: A002
    """``torch.clamp_max``: ``min(input, max)`` (ClampMaxBackward0/1)."""
    if isinstance(max, Tensor):
        return dispatch(OPS["clamp_max_tensor"], input, max)
    if max is None:  # the parser's (a method call's own comes from its table)
        E.refuse_by_signatures("clamp_max", input, max)
    (max,) = _real_bounds(input, "max", max)  # noqa: A001
    _refuse_bool_clamp(input, None, max)
    _fitting_bounds(input, max)
    return dispatch(OPS["clamp_scalar"], input, None, _number(max), kind="max")


@tensor_op("lerp")
def lerp(input, end, weight):
    """``torch.lerp``: ``input + weight * (end - input)``, as ATen computes it."""
    _need_tensor(end, "lerp", "end", 2)
    if isinstance(weight, Tensor):
        saved_first(OPS["lerp_tensor"], input, end, weight)
    dt = input._dtype
    if end._dtype is not dt:
        raise RuntimeError(LERP_DTYPE.format(E.c_type_name(dt), "end", E.c_type_name(end._dtype)))
    if isinstance(weight, Tensor):
        # ATen's lerp_Tensor: a 0-d weight takes part in type promotion (a CPU scalar), any
        # other weight must have self's dtype
        if weight._data.ndim:
            if weight._dtype is not dt:
                raise RuntimeError(
                    LERP_DTYPE.format(E.c_type_name(dt), "weight", E.c_type_name(weight._dtype))
                )
        else:
            dt = D.result_type_of([(t._dtype, t._data.ndim) for t in (input, end, weight)])
        if not (dt.is_floating_point or dt.is_complex):
            _broadcast_shape(input, end, weight)  # the iterator's shape check comes first
            raise _kernel_error("lerp_kernel_tensor", dt)
        out = dispatch(OPS["lerp_tensor"], input, end, weight)
        if weight._dtype is D.bool_ and not weight._data.ndim and input._requires_grad:
            # PyTorch's formula for self, ``grad * (1 - weight)``, subtracts the bool weight
            # from a bool 1
            refuse_backward(out, lambda: RuntimeError(E.SUB_BOOL), edge=0)
        return out
    if not (dt.is_floating_point or dt.is_complex):
        _broadcast_shape(input, end)  # the iterator's shape check comes first
        raise _kernel_error("lerp_kernel_scalar", dt)
    number = weight
    if _broadcasts(input, end):
        weight = kernel_scalar(weight, dt, opmath=True)
    out = dispatch(OPS["lerp_scalar"], input, end, _number(weight))
    return saved_mod.keep_given(out, {"weight": weight}, weight=_number(number))


def _broadcast_shape(*tensors) -> tuple:
    """The shape the tensors broadcast to, or PyTorch's error, as TensorIterator finds it:
    a running shape (tensor a) against each operand in turn (tensor b)."""
    shapes = [tuple(t._data.shape) for t in tensors if isinstance(t, Tensor)]
    return functools.reduce(broadcast_shapes, shapes, ())


def _broadcasts(*tensors) -> bool:
    """Whether the shapes broadcast. PyTorch's kernels read their number arguments only after
    the shape check: where it fails, dispatch raises PyTorch's error."""
    try:
        _broadcast_shape(*tensors)
    except RuntimeError:
        return False
    return True


def _pointwise3(name, input, tensor1, tensor2, value):
    """Checks ``addcmul``/``addcdiv`` arguments; returns ``value`` as the kernel reads it:
    converted to the result type (truncated for integers, PyTorch's overflow error)."""
    _need_tensor(tensor1, name, "tensor1", 2)
    _need_tensor(tensor2, name, "tensor2", 3)
    if name == "addcdiv" and tensor1._dtype._kind in "bui" and tensor2._dtype._kind in "bui":
        raise RuntimeError(ADDCDIV_INTEGER)
    if not _broadcasts(input, tensor1, tensor2):
        return _number(value)
    dt = _result_dtype(input, tensor1, tensor2)
    if dt is D.bool_:
        raise _kernel_error(name + "_cpu_out", dt)
    return kernel_scalar(value, dt, opmath=True)


@tensor_op("addcmul")
def addcmul(input, tensor1, tensor2, *, value=1):
    """``torch.addcmul``: ``input + value * tensor1 * tensor2``."""
    number = value
    value = _pointwise3("addcmul", input, tensor1, tensor2, value)
    out = dispatch(OPS["addcmul"], input, tensor1, tensor2, value)
    return saved_mod.keep_given(out, {"value": value}, value=_number(number))


@tensor_op("addcdiv")
def addcdiv(input, tensor1, tensor2, *, value=1):
    """``torch.addcdiv``: ``input + value * tensor1 / tensor2`` (floating types only)."""
    number = value
    value = _pointwise3("addcdiv", input, tensor1, tensor2, value)
    out = dispatch(OPS["addcdiv"], input, tensor1, tensor2, value)
    saved_mod.keep_given(out, {"value": value}, value=_number(number))
    if tensor2._dtype._kind in "bui":
        _refuse_integer_divisor(out, tensor2._dtype, number)
    return out


def _refuse_integer_divisor(out: Tensor, dtype: D.dtype, value) -> None:
    """Note [Integer divisors of addcdiv]: PyTorch's gradient for ``tensor1`` is
    ``grad * (value / tensor2)``, and ``value / tensor2`` is
    ``empty_like(tensor2).fill_(value).div_(tensor2)``: with an integer ``tensor2`` the true
    quotient cannot be written back, so backward raises when ``tensor1`` requires grad (after
    ``fill_``'s overflow check of ``value``). The quotient's type is the default dtype at that
    time."""
    node = out._grad_fn
    if node is None or node.next_functions[1][0] is None:
        return
    from .shape import checked_number  # shape.py registers its ops after this module

    inner = node._backward

    def backward(primals, cts):
        if not edge_needed(1):  # Note [Needed edges] in graph.py: tensor1's is not computed
            return inner(primals, cts)
        checked_number(value, dtype)
        quotient = E.scalar_type_name(D.get_default_dtype())
        raise RuntimeError(E.RESULT_CAST.format(quotient, E.scalar_type_name(dtype)))

    wrap_backward(node, backward)


@tensor_op("where", method=False)
def where(condition, input=None, other=None):
    """``torch.where``: ``input`` where ``condition`` holds, else ``other``; with only the
    condition, the indices of its nonzero elements (``nonzero(as_tuple=True)``)."""
    if input is None and other is None:
        from .shape import nonzero_of

        return nonzero_of(condition, True, "where", "where")
    if input is None or other is None:
        given = [condition, input if input is not None else other]
        raise TypeError(WHERE_COMBINATION.format(_clamp_args_name(given)))
    return _where(condition, input, other)


def _where(condition, input, other):
    if condition._dtype is not D.bool_:
        if condition._dtype is D.uint8:
            E.warn_once(WHERE_UINT8)
        else:
            raise RuntimeError(WHERE_CONDITION.format(condition._dtype._legacy))
    for tensor, number in ((input, other), (other, input)):
        if isinstance(tensor, Tensor) and isinstance(number, (int, float, complex)):
            # the number is converted into the result's dtype (c10's overflow check), but for
            # half types, which convert unchecked (measured)
            from .shape import checked_number_into  # shape.py registers its ops after this

            if tensor._dtype not in (D.float16, D.bfloat16):
                checked_number_into(tensor, number)
    return dispatch(OPS["where"], condition, _number(input), _number(other))


def _where_method(self, condition, other):
    """``Tensor.where(condition, other)``: ``torch.where(condition, self, other)``."""
    return _where(condition, self, other)


Tensor.where = _where_method
