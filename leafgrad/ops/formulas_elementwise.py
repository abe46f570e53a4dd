"""PyTorch's derivative formulas for create_graph (Note [Graph formulas] in formulas.py).

The elementwise ops of the table: each formula is the one of ``tools/autograd/derivatives.yaml``
(and its helper in ``FunctionsManual.cpp``) written with leafgrad's recorded ops, so the gradient's
graph has PyTorch's nodes. ATen's C++ operators with a number are the Scalar overloads (``smul``,
``sadd``, ``ssub``, ``sdiv``: ``MulBackward1`` ...), and a number minus or over a Tensor fills a
tensor first (``rsub_scalar``, ``rdiv_scalar``). A formula whose result does not depend on any
input that requires grad (``zeros_like(grad)`` of the rounding ops) gives plain zeros.
"""

from __future__ import annotations

import math

import jax.numpy as jnp

from .. import _dtype as D
from .. import _storage as S
from .. import _tensor
from .formulas import (
    _conj,
    _where,
    formula,
    maybe_multiply,
    operand_device,
    rdiv_scalar,
    rsub_scalar,
    sadd,
    sdiv,
    smul,
    ssub,
)

_LN2 = 0.6931471805599453
_LN10 = 2.3025850929940456
_SQRT_PI = math.sqrt(math.pi)


def _fn(name: str):
    from .api import FUNCTIONS

    return FUNCTIONS[name]


def _special(name: str):
    from .. import special

    return getattr(special, name)


def _result(ctx, compute):
    """The op's result as PyTorch's formula reads it: the saved one where the node keeps it,
    else the op's forward of the saved inputs attached to the node itself (a saved output
    unpacks so; for an in-place op the inputs' history is the original self's clone, Note
    [Original self]); without the node, recomputed with leafgrad ops."""
    if ctx._result is not None:
        return ctx._result
    node = ctx.node
    operands = ctx._args[: len(ctx.op.operands)]
    if node is None or not all(isinstance(a, _tensor.Tensor) for a in operands):
        return compute()
    data = ctx.op.forward(*[a._data for a in operands], **ctx.static)
    t = _tensor.Tensor._make(data, D.from_numpy_dtype(data.dtype), operands[0]._device)
    t._grad_fn, t._output_nr, t._requires_grad = S.saved_output_node(node), 0, True
    return t


def _zeros_like(g):
    """``at::zeros_like(grad)``: zeros that do not require grad, laid out as ``grad`` (an
    expanded gradient of one element keeps its zero strides)."""
    from .._factories import zeros_like  # the factories import the ops

    return zeros_like(g)


def _zero(g):
    """``at::scalar_tensor(0., grad.options())``."""
    return g.new_zeros(())


def _zeros_of(ctx, name):
    """``at::zeros_like(<operand name>)`` (on the gradient's device)."""
    return ctx.grad.new_zeros(ctx.shape(name), dtype=ctx.dtype(name))


def _complex(ctx, *names) -> bool:
    return any(ctx.dtype(n) is not None and ctx.dtype(n).is_complex for n in names)


# --- unary: trigonometric and hyperbolic -----------------------------------------------------


@formula("tan")
def _tan(ctx):
    r = _result(ctx, lambda: ctx["self"].tan())
    return {"self": ctx.grad * _conj(sadd(r.pow(2), 1))}


@formula("asin")
def _asin(ctx):
    x = ctx["self"]
    return {"self": ctx.grad * _conj(sadd(-x * x, 1).rsqrt())}


@formula("acos")
def _acos(ctx):
    x = ctx["self"]
    return {"self": ctx.grad * _conj(-sadd(-x * x, 1).rsqrt())}


@formula("atan")
def _atan(ctx):
    x = ctx["self"]
    return {"self": ctx.grad / _conj(sadd(x * x, 1))}


@formula("sinh")
def _sinh(ctx):
    return {"self": ctx.grad * _conj(ctx["self"].cosh())}


@formula("cosh")
def _cosh(ctx):
    return {"self": ctx.grad * _conj(ctx["self"].sinh())}


@formula("asinh")
def _asinh(ctx):
    return {"self": ctx.grad * _conj(sadd(ctx["self"].pow(2), 1).rsqrt())}


@formula("acosh")
def _acosh(ctx):
    x = ctx["self"]
    if _complex(ctx, "self"):
        return {"self": ctx.grad * _conj(sadd(x, 1).rsqrt() * ssub(x, 1).rsqrt())}
    return {"self": ctx.grad * ssub(x * x, 1).rsqrt()}


@formula("atanh")
def _atanh(ctx):
    return {"self": smul(ctx.grad, 1) / _conj(rsub_scalar(1, ctx["self"].pow(2)))}


@formula("deg2rad")
def _deg2rad(ctx):
    return {"self": smul(ctx.grad, 0.017453292519943295769236907684886127134428718885417)}


@formula("rad2deg")
def _rad2deg(ctx):
    return {"self": smul(ctx.grad, 57.295779513082320876798154814105170332405472466564)}


@formula("sinc")
def _sinc(ctx):
    x, g = ctx["self"], ctx.grad
    self_pi = smul(x, math.pi)
    self_squared_pi = smul(x * x, math.pi)
    out = g * _conj((self_pi * self_pi.cos() - self_pi.sin()) / self_squared_pi)
    return {"self": _where(self_squared_pi == 0.0, g.new_zeros(()), out)}


# --- unary: exponential and logarithmic ------------------------------------------------------


@formula("exp2")
def _exp2(ctx):
    r = _result(ctx, lambda: ctx["self"].exp2())
    return {"self": smul(ctx.grad * _conj(r), _LN2)}


@formula("expm1")
def _expm1(ctx):
    r = _result(ctx, lambda: ctx["self"].expm1())
    return {"self": ctx.grad * sadd(_conj(r), 1)}


@formula("log2")
def _log2(ctx):
    return {"self": ctx.grad / smul(_conj(ctx["self"]), _LN2)}


@formula("log10")
def _log10(ctx):
    return {"self": ctx.grad / smul(_conj(ctx["self"]), _LN10)}


@formula("log1p")
def _log1p(ctx):
    return {"self": ctx.grad / _conj(sadd(ctx["self"], 1))}


@formula("logit")
def _logit(ctx):
    # infinitely_differentiable_logit_backward (the formula under grad mode)
    x, g, eps = ctx["self"], ctx.grad, ctx.static.get("eps")
    lo, hi = (0.0, 1.0) if eps is None else (eps, 1.0 - eps)
    inside = _fn("logical_and")(x >= lo, x <= hi)
    other = x.new_zeros(()) if eps is not None else x.new_full((), math.nan)
    return {"self": _where(inside, g / (x * rsub_scalar(1.0, x)), other)}


# --- unary: special functions ----------------------------------------------------------------


@formula("erf")
def _erf(ctx):
    return {"self": smul((-ctx["self"].pow(2)).exp(), 2.0 / _SQRT_PI) * ctx.grad}


@formula("erfc")
def _erfc(ctx):
    return {"self": smul((-ctx["self"].pow(2)).exp(), -2.0 / _SQRT_PI) * ctx.grad}


@formula("erfinv")
def _erfinv(ctx):
    return {"self": smul(ctx["self"].erfinv().pow(2).exp(), 0.5 * _SQRT_PI) * ctx.grad}


@formula("lgamma")
def _lgamma(ctx):
    return {"self": ctx.grad * ctx["self"].digamma()}


@formula("digamma")
def _digamma(ctx):
    return {"self": ctx.grad * _fn("polygamma")(1, ctx["self"])}


@formula("polygamma")
def _polygamma(ctx):
    n = ctx.static["n"]
    return {"self": ctx.grad * _fn("polygamma")(n + 1, ctx["self"])}


@formula("polygamma_inplace")
def _polygamma_inplace(ctx):
    # polygamma_: PyTorch saves a clone of the original self (Note [Original self] in
    # inplace.py: the saved input is attached to it)
    n = ctx.static["n"]
    return {"self": ctx.grad * _fn("polygamma")(n + 1, ctx["self"])}


@formula("i0")
def _i0(ctx):
    return {"self": ctx.grad * _special("i1")(ctx["self"])}


@formula("special_i0e")
def _i0e(ctx):
    x = ctx["self"]
    r = _result(ctx, lambda: _special("i0e")(x))
    return {"self": ctx.grad * (_special("i1e")(x) - x.sgn() * r)}


def _tiny_safe(x):
    """``self.abs() > eps`` and ``where(that, self, eps)`` of i1_backward / i1e_backward."""
    eps = float(jnp.finfo(x._dtype.np).eps)
    not_tiny = x.abs() > eps
    return not_tiny, _where(not_tiny, x, x.new_full((), eps))


@formula("special_i1")
def _i1(ctx):
    x = ctx["self"]
    r = _result(ctx, lambda: _special("i1")(x))
    not_tiny, safe = _tiny_safe(x)
    gradx = safe.i0() - r * safe.reciprocal()
    return {"self": ctx.grad * _where(not_tiny, gradx, x.new_full((), 0.5))}


@formula("special_i1e")
def _i1e(ctx):
    x = ctx["self"]
    r = _result(ctx, lambda: _special("i1e")(x))
    not_tiny, safe = _tiny_safe(x)
    gradx = _special("i0e")(safe) - r * (safe.sgn() + safe.reciprocal())
    return {"self": ctx.grad * _where(not_tiny, gradx, x.new_full((), 0.5))}


@formula("mvlgamma")
def _mvlgamma(ctx):
    from .. import arange

    x, p = ctx["self"], ctx.static["p"]
    args = arange(-p / 2.0 + 0.5, 0.5, 0.5, dtype=x.dtype, device=x.device)
    args = args.add(x.unsqueeze(-1))
    return {"self": ctx.grad * args.digamma().sum(-1)}


@formula("igamma", "igammac")
def _igamma(ctx):
    if ctx.needs("self"):
        return NotImplemented  # not_implemented("igamma: input"): the one-op form raises
    x, y = ctx["self"], ctx["other"]
    g = ctx.grad if ctx.op.name == "igamma" else -ctx.grad
    return {"other": g * ((ssub(x, 1) * y.log() - y) - x.lgamma()).exp()}


@formula("special_entr")
def _entr(ctx):
    return {"self": ctx.grad * (-sadd(ctx["self"].log(), 1))}


@formula("special_erfcx")
def _erfcx(ctx):
    x = ctx["self"]
    r = _result(ctx, lambda: _special("erfcx")(x))
    return {"self": ssub(smul(x, 2.0) * r, 2.0 / _SQRT_PI) * ctx.grad}


@formula("special_ndtri")
def _ndtri(ctx):
    r = _result(ctx, lambda: _special("ndtri")(ctx["self"]))
    return {"self": smul(ctx.grad, math.sqrt(2 * math.pi)) * sdiv(r.pow(2), 2).exp()}


@formula("special_log_ndtr")
def _log_ndtr(ctx):
    x = ctx["self"]
    r = _result(ctx, lambda: _special("log_ndtr")(x))
    inner = (r + sdiv(x.pow(2), 2)).neg().exp()
    return {"self": sdiv(ctx.grad, math.sqrt(2 * math.pi)) * inner}


# --- unary: piecewise constant and others ----------------------------------------------------


@formula("floor", "ceil", "trunc", "round", "round_decimals", "sign")
def _zero_grad(ctx):
    return {"self": _zeros_like(ctx.grad)}


@formula("sgn")
def _sgn(ctx):
    # sgn_backward: an (efficient) zero tensor for real inputs
    if not _complex(ctx, "self"):
        return {"self": _zeros_like(ctx.grad)}
    x, g = ctx["self"], ctx.grad
    sgn = _result(ctx, lambda: x.sgn())
    a = x.abs()
    return {"self": ((g - (sgn * sgn) * g.conj()) / smul(a, 2.0)).masked_fill(a == 0.0, 0.0)}


@formula("angle")
def _angle(ctx):
    # angle_backward
    if not _complex(ctx, "self"):
        return {"self": _zeros_of(ctx, "self")}
    x = ctx["self"]
    zero = _zeros_of(ctx, "self").new_zeros(())
    return {"self": _where(x == 0.0, zero, smul(ctx.grad * x / x.abs().pow(2), 1j))}


@formula("frac", "clone", "remainder_scalar", "fmod_scalar")
def _identity(ctx):
    return {"self": ctx.grad}


@formula("nan_to_num")
def _nan_to_num(ctx):
    return {"self": ctx.grad * _fn("isfinite")(ctx["self"])}


@formula("to_copy")
def _to_copy(ctx):
    # _to_copy_backward: the real part for a real input, then ``to`` its dtype
    g, dtype = ctx.grad, ctx.dtype("self")
    if g._dtype.is_complex and not dtype.is_complex:
        g = g.real
    return {"self": g.to(dtype=dtype, device=operand_device(ctx.node, 0, g.device))}


# --- binary ----------------------------------------------------------------------------------


@formula("atan2")
def _atan2(ctx):
    x, y, g, out = ctx["self"], ctx["other"], ctx.grad, {}
    denom = x * x + y * y
    recip = denom.reciprocal().masked_fill(denom == 0, 0)
    if ctx.needs("self"):
        out["self"] = g * y * recip
    if ctx.needs("other"):
        out["other"] = g * -x * recip
    return out


@formula("polar")
def _polar(ctx):
    # polar_backward(grad, result): real(grad.conj() * sgn(result)) for abs and
    # real(grad.conj() * (result * 1j)) for angle
    g, out = _conj(ctx.grad), {}
    result = _result(ctx, lambda: _fn("polar")(ctx["abs"], ctx["angle"]))
    if ctx.needs("abs"):
        out["abs"] = (g * result.sgn()).real
    if ctx.needs("angle"):
        out["angle"] = (g * smul(result, 1j)).real
    return out


@formula("hypot")
def _hypot(ctx):
    x, y, g, out = ctx["self"], ctx["other"], ctx.grad, {}
    r = _result(ctx, lambda: _fn("hypot")(x, y))
    if ctx.needs("self"):
        out["self"] = g * x / r
    if ctx.needs("other"):
        out["other"] = g * y / r
    return out


def _copysign_self(ctx, compute):
    x = ctx["self"]
    r = _result(ctx, compute)
    ratio = (r / x).masked_fill(x == 0, 0)
    return ctx.grad * ratio


@formula("copysign")
def _copysign(ctx):
    out = {}
    if ctx.needs("self"):
        out["self"] = _copysign_self(ctx, lambda: _fn("copysign")(ctx["self"], ctx["other"]))
    if ctx.needs("other"):
        out["other"] = _zeros_of(ctx, "other")
    return out


@formula("copysign_scalar")
def _copysign_scalar(ctx):
    return {"self": _copysign_self(ctx, lambda: _fn("copysign")(ctx["self"], ctx["other"]))}


@formula("logaddexp")
def _logaddexp(ctx):
    x, y, g, out = ctx["self"], ctx["other"], ctx.grad, {}
    if ctx.needs("self"):
        out["self"] = g / _conj(sadd((y - x).exp(), 1))
    if ctx.needs("other"):
        out["other"] = g / _conj(sadd((x - y).exp(), 1))
    return out


@formula("logaddexp2")
def _logaddexp2(ctx):
    x, y, g, out = ctx["self"], ctx["other"], ctx.grad, {}
    if ctx.needs("self"):
        out["self"] = g / sadd(2 ** (y - x), 1)
    if ctx.needs("other"):
        out["other"] = g / sadd(2 ** (x - y), 1)
    return out


@formula("maximum", "minimum")
def _maximum(ctx):
    x, y, g, out = ctx["self"], ctx["other"], ctx.grad, {}
    lt = ctx.op.name == "maximum"
    half = _where(x == y, sdiv(g, 2), g)
    if ctx.needs("self"):
        out["self"] = half.masked_fill((x < y) if lt else (x > y), 0)
    if ctx.needs("other"):
        out["other"] = half.masked_fill((x > y) if lt else (x < y), 0)
    return out


@formula("fmax", "fmin")
def _fmax(ctx):
    x, y, g, out = ctx["self"], ctx["other"], ctx.grad, {}
    take = ((x >= y) if ctx.op.name == "fmax" else (x <= y)).logical_or(y.isnan())
    if ctx.needs("self"):
        out["self"] = g.masked_fill(take.logical_not(), 0)
    if ctx.needs("other"):
        out["other"] = g.masked_fill(take, 0)
    return out


@formula("clamp_scalar")
def _clamp_scalar(ctx):
    # clamp_backward (clamp), or clamp_min's / clamp_max's where(...)
    x, g, lo, hi = ctx["self"], ctx.grad, ctx["min"], ctx["max"]
    if lo is not None and hi is not None:
        return {"self": _where((x >= lo).logical_and(x <= hi), g, _zero(g))}
    if lo is not None:
        return {"self": _where(x >= lo, g, _zero(g))}
    if hi is not None:
        return {"self": _where(x <= hi, g, _zero(g))}
    return {"self": g}


@formula("clamp_tensor")
def _clamp_tensor(ctx):
    # clamp.Tensor: clamp_backward (one bound) and clamp_backward_min_max (both)
    x, g, lo, hi, out = ctx["self"], ctx.grad, ctx["min"], ctx["max"], {}
    if lo is not None and hi is not None:
        if ctx.needs("self"):
            out["self"] = _where((x >= lo).logical_and(x <= hi), g, _zero(g))
        if ctx.needs("min"):
            out["min"] = _where((x < lo).logical_and(lo < hi), g, _zero(g))
        if ctx.needs("max"):
            out["max"] = _where((x > hi).logical_or(hi < lo), g, _zero(g))
    elif lo is not None:
        out = _clamp_min_tensor(ctx)
    elif hi is not None:
        out = _clamp_max_tensor(ctx)
    elif ctx.needs("self"):
        out["self"] = g
    return out


@formula("clamp_min_tensor")
def _clamp_min_tensor(ctx):
    x, lo, g, out = ctx["self"], ctx["min"], ctx.grad, {}
    if ctx.needs("self"):
        out["self"] = _where(x >= lo, g, _zero(g))
    if ctx.needs("min"):
        out["min"] = _where(x < lo, g, _zero(g))
    return out


@formula("clamp_max_tensor")
def _clamp_max_tensor(ctx):
    x, hi, g, out = ctx["self"], ctx["max"], ctx.grad, {}
    if ctx.needs("self"):
        out["self"] = _where(x <= hi, g, _zero(g))
    if ctx.needs("max"):
        out["max"] = _where(x > hi, g, _zero(g))
    return out


@formula("lerp_scalar")
def _lerp_scalar(ctx):
    w, g, out = ctx["weight"], ctx.grad, {}
    if not isinstance(w, (int, float, complex)):
        return NotImplemented
    if ctx.needs("self"):
        out["self"] = smul(g, 1 - (w.conjugate() if isinstance(w, complex) else float(w)))
    if ctx.needs("end"):
        out["end"] = smul(g, _conj(w))
    return out


@formula("lerp_tensor")
def _lerp_tensor(ctx):
    x, end, w, g, out = ctx["self"], ctx["end"], ctx["weight"], ctx.grad, {}
    if ctx.needs("self"):
        out["self"] = g * _conj(rsub_scalar(1, w))
    if ctx.needs("end"):
        out["end"] = g * _conj(w)
    if ctx.needs("weight"):
        out["weight"] = g * _conj(end - x)
    return out


@formula("addcmul")
def _addcmul(ctx):
    t1, t2, v, g, out = ctx["tensor1"], ctx["tensor2"], ctx["value"], ctx.grad, {}
    if ctx.needs("self"):
        out["self"] = g
    if ctx.needs("tensor1"):
        out["tensor1"] = g * _conj(smul(t2, v))
    if ctx.needs("tensor2"):
        out["tensor2"] = g * _conj(smul(t1, v))
    return out


@formula("addcdiv")
def _addcdiv(ctx):
    t1, t2, v, g, out = ctx["tensor1"], ctx["tensor2"], ctx["value"], ctx.grad, {}
    if ctx.needs("self"):
        out["self"] = g
    if ctx.needs("tensor1"):
        out["tensor1"] = g * _conj(rdiv_scalar(v, t2))
    if ctx.needs("tensor2"):
        out["tensor2"] = -g * _conj(smul(t1, v) / (t2 * t2))
    return out


@formula("where")
def _where_formula(ctx):
    c, g, out = ctx["condition"], ctx.grad, {}
    if ctx.needs("self"):
        out["self"] = _where(c, g, 0)
    if ctx.needs("other"):
        out["other"] = _where(c, 0, g)
    return out


@formula("remainder", "fmod")
def _remainder(ctx):
    g, out = ctx.grad, {}
    mode = "floor" if ctx.op.name == "remainder" else "trunc"
    if ctx.needs("self"):
        out["self"] = g
    if ctx.needs("other"):
        out["other"] = -g * ctx["self"].div(ctx["other"], rounding_mode=mode)
    return out


@formula("div_mode")
def _div_mode(ctx):
    # div_tensor_self_backward / div_tensor_other_backward with a rounding mode: zeros
    if ctx.static.get("rounding_mode") is None:
        return NotImplemented
    g, out = ctx.grad, {}
    for name in ("self", "other"):
        if ctx.needs(name):
            out[name] = _zeros_like(g).to(ctx.dtype(name))
    return out


@formula("rsub_tensor")
def _rsub_tensor(ctx):
    g, out = ctx.grad, {}
    if ctx.needs("self"):
        out["self"] = maybe_multiply(-g, ctx.static.get("alpha", 1))
    if ctx.needs("other"):
        out["other"] = g
    return out


@formula("ldexp")
def _ldexp(ctx):
    x, e, g, out = ctx["self"], ctx["other"], ctx.grad, {}
    if ctx.needs("self"):
        out["self"] = g * _conj(2**e)
    if ctx.needs("other"):
        r = _result(ctx, lambda: _fn("ldexp")(x, e))
        out["other"] = smul(g * _conj(r), _LN2)
    return out


@formula("nextafter")
def _nextafter(ctx):
    x, y, g, out = ctx["self"], ctx["other"], ctx.grad, {}
    if ctx.needs("self"):
        out["self"] = _where(x != y, g, 0)
    if ctx.needs("other"):
        out["other"] = _zeros_of(ctx, "other")
    return out


# --- xlogy, xlog1py, zeta --------------------------------------------------------------------


def _xlogy_family(ctx, fn, shift):
    x, y, g, out = ctx["self"], ctx["other"], ctx.grad, {}
    if ctx.needs("self"):
        out["self"] = fn(g, y).masked_fill((x == 0.0).logical_and(y <= -shift), 0.0)
    if ctx.needs("other"):
        out["other"] = g * x / (y if shift == 0 else sadd(y, 1))
    return out


@formula("xlogy")
def _xlogy(ctx):
    return _xlogy_family(ctx, _fn("xlogy"), 0)


@formula("special_xlog1py")
def _xlog1py(ctx):
    return _xlogy_family(ctx, _special("xlog1py"), 1)


def _xlogy_scalar_self(ctx, shift):
    x, y = ctx["self"], ctx["other"]
    return {"other": smul(ctx.grad, x) / (y if shift == 0 else sadd(y, 1))}


@formula("xlogy_scalar_self")
def _xlogy_ss(ctx):
    return _xlogy_scalar_self(ctx, 0)


@formula("special_xlog1py_scalar_self")
def _xlog1py_ss(ctx):
    return _xlogy_scalar_self(ctx, 1)


def _xlogy_scalar_other(ctx, fn, shift):
    x, y = ctx["self"], ctx["other"]
    out = fn(ctx.grad, y)
    if not y > -shift:
        out = out.masked_fill(x == 0.0, 0.0)
    return {"self": out}


@formula("xlogy_scalar_other")
def _xlogy_so(ctx):
    return _xlogy_scalar_other(ctx, _fn("xlogy"), 0)


@formula("special_xlog1py_scalar_other")
def _xlog1py_so(ctx):
    return _xlogy_scalar_other(ctx, _special("xlog1py"), 1)


@formula("special_zeta")
def _zeta(ctx):
    if ctx.needs("self"):
        return NotImplemented  # not_implemented("zeta"): the one-op form raises as PyTorch does
    x, y = ctx["self"], ctx["other"]
    return {"other": ctx.grad * -x * _special("zeta")(sadd(x, 1.0), y)}


@formula("special_zeta_scalar_self")
def _zeta_ss(ctx):
    x, y = ctx["self"], ctx["other"]
    return {"other": smul(ctx.grad, -x) * _special("zeta")(x + 1.0, y)}


# --- complex parts ---------------------------------------------------------------------------


@formula("complex")
def _complex_formula(ctx):
    g, out = ctx.grad, {}
    if ctx.needs("real"):
        out["real"] = g.real
    if ctx.needs("imag"):
        out["imag"] = g.imag
    return out


@formula("conj_physical", "conj_physical_inplace")
def _conj_physical(ctx):
    return {"self": ctx.grad.conj_physical()}


@formula("frexp")
def _frexp(ctx):
    # grad / exponent.exp2(): the exponent (an integer output) recomputed from self
    g = ctx.grads[0]
    if g is None:
        return {}
    return {"self": g / _fn("frexp")(ctx["self"])[1].exp2()}
