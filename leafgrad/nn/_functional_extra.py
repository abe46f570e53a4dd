"""More of ``torch.nn.functional``: shrink/threshold activations, prelu, glu, rrelu, rms_norm,
pixel (un)shuffle, scaled dot-product attention and the margin/NLL-style losses.

Single-node ops of PyTorch are op-table entries (``nn.*`` names); ops PyTorch builds from
several nodes are composites over table ops, so graphs carry PyTorch's node names. Star-imported
at the end of ``functional.py``.
"""

from __future__ import annotations

import math
import warnings

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from .. import _autocast
from .. import _dtype as D
from .. import _errors as E
from .._arg_check import SINGLE_SIGNATURES, check_call
from .._tensor import Tensor, _wrap_dim
from ..autograd import forward_ad, grad_mode
from ..autograd import saved as saved_mod
from ..ops.api import register_ops
from ..ops.dispatch import dispatch
from ..ops.table import OPS, OpDef
from .functional import (
    KERNEL_NOT_IMPLEMENTED,
    REDUCTION_INVALID,
    _apply_reduction,
    _c,
    _check_reduction,
    _float_kernel,
    _in_place,
    _no_grad_arg,
    _reduce,
    _tdiv,
    _view,
    first_outside,
    pairwise_distance,
    writes_input,
)

__all__ = [
    "logsigmoid",
    "softshrink",
    "hardshrink",
    "tanhshrink",
    "threshold",
    "threshold_",
    "glu",
    "rrelu",
    "rrelu_",
    "prelu",
    "rms_norm",
    "pixel_shuffle",
    "pixel_unshuffle",
    "scaled_dot_product_attention",
    "soft_margin_loss",
    "multi_margin_loss",
    "multilabel_margin_loss",
    "multilabel_soft_margin_loss",
    "hinge_embedding_loss",
    "poisson_nll_loss",
    "gaussian_nll_loss",
    "triplet_margin_loss",
    "triplet_margin_with_distance_loss",
]

# --- PyTorch's messages ------------------------------------------------------------------------
LEGACY_WARNING = (
    "size_average and reduce args will be deprecated, please use reduction='{}' instead."
)
SOFTSHRINK_LAMBDA = "lambda must be in range [0, {}] for input dtype {}, but found {}"
GLU_SCALAR = "glu does not support scalars because halving size must be even"
GLU_ODD = "Halving dimension must be even, but dimension {} is size {}"
THRESHOLD_BOOL = "\"threshold_cpu\" not implemented for 'Bool'"
PRELU_WEIGHT_DIM = "prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = {}"
PRELU_PROMOTE = "prelu: Type promoting not supported. Got {} and {}"
PRELU_ZERO_DIM = "Not allow zero-dim input tensor."
PRELU_CHANNELS = (
    "Mismatch of parameter numbers and input channel size. Found parameter numbers = {} and "
    "channel size = {}."
)
RMS_SHAPE = "Given normalized_shape={}, expected input with shape [*{}], but got input of size{}"
RMS_INT = "rms_norm(): argument 'normalized_shape' (position 2) must be tuple of ints, not {}"
PS_NDIM = "{} expects input to have at least 3 dimensions, but got input with {} dimension(s)"
PS_FACTOR = "{} expects a positive {}, but got {}"
PS_CHANNELS = (
    "pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of "
    "upscale_factor, but input.size(-3)={} is not divisible by {}"
)
PU_SPATIAL = (
    "pixel_unshuffle expects {} to be divisible by downscale_factor, but input.size({})={} is not "
    "divisible by {}"
)
SDPA_NDIM = (
    "Expected query, key, and value to all be  at least 2 dimensional, but got query.dim: {} "
    "key.dim: {} and value.dim: {} instead."
)
SDPA_DTYPE = (
    "Expected query, key, and value to have the same dtype, but got query.dtype: {} key.dtype: "
    "{} and value.dtype: {} instead."
)
SDPA_MASK_DTYPE = (
    "Expected attn_mask dtype to be bool or float or to match query dtype, but got "
    "attn_mask.dtype: {} and  query.dtype: {} instead."
)
MULTI_MARGIN_P = "only p == 1 and p == 2 supported"
MULTI_MARGIN_TARGET = (
    "multi_margin_loss: target tensor should be 1-D with size equal to the number of input "
    "samples (batch size). Expected target size [{}], but got {}. Input has shape {}."
)
MULTI_MARGIN_WEIGHT = "inconsistent weight size, expected {} but got {}"
MULTILABEL_TARGET = "inconsistent target size: {} for input of size: {}"
SCALAR_TYPE = "expected scalar type {} but found {}"
TRIPLET_MARGIN = "margin must be greater than 0, got {}"
TRIPLET_DIMS = (
    "The anchor, positive, and negative tensors are expected to have the same number of "
    "dimensions, but got: anchor {}D, positive {}D, and negative {}D inputs"
)
GAUSSIAN_NEGATIVE = "var has negative entry/entries"
GAUSSIAN_SIZE = "var is of incorrect size"
NOT_YET = "leafgrad: nn.functional.{} is not implemented yet ({})."

SDPA_FLASH = "ScaledDotProductFlashAttentionForCpuBackward0"


def _dims(shape) -> str:
    return "[" + ", ".join(str(s) for s in shape) + "]"


def _legacy_reduction(size_average, reduce, reduction: str) -> str:
    """PyTorch's ``_Reduction.legacy_get_string``: the deprecated flags decide, with a warning."""
    if size_average is None and reduce is None:
        return reduction
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    if size_average and reduce:
        ret = "mean"
    elif reduce:
        ret = "sum"
    else:
        ret = "none"
    # PyTorch's ``legacy_get_string`` warns at its caller's line: a line of the library
    warnings.warn(LEGACY_WARNING.format(ret), stacklevel=2)
    return ret


# --- forwards ----------------------------------------------------------------------------------


def _log_sigmoid(x):
    # PyTorch's value min(x, 0) - log1p(exp(-|x|)), written per sign so that the VJP at 0 is
    # sigmoid(-0) = 0.5 as in torch; each branch sees only its own sign (no overflow in the VJP).
    zero = jnp.zeros_like(x)
    neg = x < 0
    xn, xp = jnp.where(neg, x, zero), jnp.where(neg, zero, x)
    return jnp.where(neg, xn - jnp.log1p(jnp.exp(xn)), -jnp.log1p(jnp.exp(-xp)))


def _softshrink(x, lambd):
    # PyTorch's kernels: the value with lambd in float (half types computed in float), the
    # gradient 0 where |x| <= lambd rounded to x's type
    f = x.astype(jnp.float32) if x.dtype in D.HALF_ARRAY_TYPES else x
    lam = _c(lambd, f)
    value = jnp.where(f > lam, f - lam, jnp.where(f < -lam, f + lam, jnp.zeros_like(f)))
    # a NaN stays NaN; its gradient passes, as the scalar kernel's (the vectorized one's gives 0)
    value = jnp.where(jnp.isnan(f), f, value)
    lam_x = _c(lambd, x)
    inside = (x >= -lam_x) & (x <= lam_x)
    return jnp.where(inside, lax.stop_gradient(value), value).astype(x.dtype)


def _hardshrink(x, lambd):
    # PyTorch: 0 on [-lambda, lambda] (gradient 0 there too), x elsewhere (NaN passes).
    lam = _c(lambd, x)
    return jnp.where((x >= -lam) & (x <= lam), jnp.zeros_like(x), x)


def _threshold(x, threshold, value):
    # x <= threshold selects value (gradient 0 there, as threshold_backward).
    return jnp.where(x <= _c(threshold, x), _c(value, x), x)


def _glu(x, dim):
    a, b = jnp.split(x, 2, axis=dim)
    return a * (1 / (1 + jnp.exp(-b)))


def _leaky(x, slope):
    return jnp.where(x > 0, x, x * _c(slope, x))


def _prelu(x, w):
    return forward_ad.forward_formula(_prelu_value, _prelu_jvp, x, w)


def _prelu_value(x, w):
    return jnp.where(x > 0, x, w * x)


def _prelu_jvp(primals, tangents):
    # where(self >= 0, self_t, weight * self_t + self * weight_t): at 0 the input's tangent,
    # where backward gives the weight's slope (Note [Forward formulas] in forward_ad.py)
    (x, w), (xt, wt) = primals, tangents
    shape = jnp.broadcast_shapes(x.shape, w.shape)
    slope = [
        t for t in (None if xt is None else w * xt, None if wt is None else x * wt) if t is not None
    ]
    other = slope[0] if len(slope) == 1 else slope[0] + slope[1]
    inside = jnp.zeros(shape, other.dtype) if xt is None else xt
    return jnp.broadcast_to(jnp.where(x >= 0, inside, other), shape)


def _pixel_shuffle(x, r):
    *lead, c, h, w = x.shape
    oc = c // (r * r)
    y = x.reshape(*lead, oc, r, r, h, w)
    n = len(lead)
    y = jnp.transpose(y, (*range(n), n, n + 3, n + 1, n + 4, n + 2))
    return y.reshape(*lead, oc, h * r, w * r)


def _pixel_unshuffle(x, r):
    *lead, c, h, w = x.shape
    y = x.reshape(*lead, c, h // r, r, w // r, r)
    n = len(lead)
    y = jnp.transpose(y, (*range(n), n, n + 2, n + 4, n + 1, n + 3))
    return y.reshape(*lead, c * r * r, h // r, w // r)


def _sdpa(q, k, v, mask, scale, is_causal, groups):
    if groups > 1:  # enable_gqa: each key/value head serves ``groups`` query heads
        k = jnp.repeat(k, groups, axis=-3)
        v = jnp.repeat(v, groups, axis=-3)
    s = jnp.einsum("...ld,...sd->...ls", q, k, precision=lax.Precision.HIGHEST) * _c(scale, q)
    lq, lk = q.shape[-2], k.shape[-2]
    if is_causal:
        keep = jnp.tril(jnp.ones((lq, lk), bool))
        s = jnp.where(keep, s, _c(-jnp.inf, s))
    if mask is not None:
        if mask.dtype == jnp.bool_:
            s = jnp.where(mask, s, _c(-jnp.inf, s))
        else:
            s = s + mask.astype(s.dtype)
    m = lax.stop_gradient(jnp.max(s, axis=-1, keepdims=True))
    m = jnp.where(jnp.isfinite(m), m, jnp.zeros_like(m))
    e = jnp.exp(s - m)
    p = e / jnp.sum(e, axis=-1, keepdims=True)
    return jnp.einsum("...ls,...sd->...ld", p, v, precision=lax.Precision.HIGHEST)


def _soft_margin(x, y, reduction):
    return _reduce(jnp.log1p(jnp.exp(-y * x)), reduction)


def _soft_margin_rule(meta, static):
    """ATen's ``neg_out(output, input).mul_(target).exp_().log1p_()`` into a result of the
    input's dtype: a bool input's negation, and a result type the in-place steps cannot hold,
    are refused."""
    x, t = meta
    if x[0] is D.bool_:
        raise RuntimeError(E.NEG_BOOL)
    found = D.result_type_of([x, t])
    if not D.can_cast(found, x[0]):
        raise RuntimeError(
            E.RESULT_CAST.format(E.scalar_type_name(found), E.scalar_type_name(x[0]))
        )
    if not (x[0].is_floating_point or x[0].is_complex):  # exp_ of an integer result
        raise RuntimeError(E.RESULT_CAST.format("Float", E.scalar_type_name(x[0])))
    return (found, found), x[0]


def _multi_margin(x, target, weight, p, margin, reduction):
    # a 0-d or 1-d input is one sample; its unreduced loss has the target's dims (ATen resizes
    # the result to (1,) only for a 1-d target)
    one = x.ndim <= 1 and target.ndim == 0
    if x.ndim <= 1:
        x, target = x.reshape(1, -1), target.reshape(1)
    n, c = x.shape
    t = target.astype(jnp.int64)
    xy = jnp.take_along_axis(x, t[:, None], axis=1)
    z = _c(margin, x) - xy + x
    # PyTorch's backward counts a class only where z > 0, and never the target class itself.
    other = jnp.arange(c)[None, :] != t[:, None]
    active = other & (z > 0)
    h = jnp.where(active, z if p == 1 else z * z, jnp.zeros_like(z))
    if weight is not None:
        h = h * jnp.take(weight, t, axis=0)[:, None]
    loss = _tdiv(jnp.sum(h, axis=1), c)
    if reduction == "none":
        return loss[0] if one else loss
    return _reduce(loss, reduction)


def _multilabel_margin(x, target, reduction):
    one = x.ndim == 1
    if one:
        x, target = x[None], target[None]
    n, c = x.shape
    t = target.astype(jnp.int64)
    # Targets are read up to the first -1.
    valid = jnp.cumprod((t >= 0).astype(jnp.int32), axis=1).astype(bool)
    safe = jnp.where(valid, t, 0)
    is_target = jnp.zeros((n, c), bool).at[jnp.arange(n)[:, None], safe].max(valid)
    xy = jnp.take_along_axis(x, safe, axis=1)
    z = 1 - xy[:, :, None] + x[:, None, :]
    pairs = valid[:, :, None] & ~is_target[:, None, :] & (z > 0)
    loss = _tdiv(jnp.sum(jnp.where(pairs, z, jnp.zeros_like(z)), axis=(1, 2)), c)
    if reduction == "none":
        return loss[0] if one else loss
    return _reduce(loss, reduction)


def _unary(name, fwd, grad_fn, rule):
    return OpDef("nn." + name, fwd, grad_fn, ("self",), rule, saves={"self": ("self",)})


def _threshold_rule(meta, static):
    if meta[0][0] is D.bool_:
        raise NotImplementedError(THRESHOLD_BOOL)
    return (None,), meta[0][0]


def _sdpa_rule(meta, static):
    return (None,) * len(meta), meta[0][0]


register_ops(
    _unary(
        "log_sigmoid",
        _log_sigmoid,
        "LogSigmoidBackward0",
        _float_kernel("log_sigmoid_cpu"),
    ),
    _unary("softshrink", _softshrink, "SoftshrinkBackward0", _float_kernel("softshrink_check")),
    _unary("hardshrink", _hardshrink, "HardshrinkBackward0", _float_kernel("hardshrink_cpu")),
    _unary("threshold", _threshold, "ThresholdBackward0", _threshold_rule),
    _unary("glu", _glu, "GluBackward0", _float_kernel("glu_cpu")),
    _unary("rrelu_eval", _leaky, "RreluWithNoiseBackward0", _float_kernel("leaky_relu_cpu")),
    OpDef(
        "nn.rrelu_train",
        lambda x, noise: x * noise,  # noise is 1 where x > 0: x itself
        "RreluWithNoiseBackward0",
        ("self", "noise"),
        _float_kernel("rrelu_with_noise_out_cpu"),
        edges=("self",),
        saves={"self": ("self", "noise")},
    ),
    OpDef(
        "nn.prelu",
        _prelu,
        "PreluKernelBackward0",
        ("self", "weight"),
        _float_kernel("prelu_cpu"),
        saves={"self": ("self", "weight"), "weight": ("self", "weight")},
    ),
    OpDef("nn.pixel_shuffle", _pixel_shuffle, "PixelShuffleBackward0", ("self",), _sdpa_rule),
    OpDef("nn.pixel_unshuffle", _pixel_unshuffle, "PixelUnshuffleBackward0", ("self",), _sdpa_rule),
    OpDef(
        "nn.sdpa_flash",
        _sdpa,
        SDPA_FLASH,
        ("query", "key", "value", "attn_mask"),
        _sdpa_rule,
        edges=("query", "key", "value"),
        # The flash kernel saves q, k, v, its output and the logsumexp.
        saves={
            n: ("query", "key", "value", "attn_mask", "result") for n in ("query", "key", "value")
        },
    ),
    OpDef(
        "nn.soft_margin_loss",
        _soft_margin,
        "SoftMarginLossBackward0",
        ("self", "target"),
        _soft_margin_rule,
        edges=("self",),
        saves={"self": ("self", "target")},
    ),
    OpDef(
        "nn.multi_margin_loss",
        _multi_margin,
        "MultiMarginLossBackward0",
        ("self", "target", "weight"),
        _float_kernel("multi_margin_loss_cpu"),
        edges=("self",),
        saves={"self": ("self", "target", "weight")},
    ),
    OpDef(
        "nn.multilabel_margin_loss",
        _multilabel_margin,
        "MultilabelMarginLossBackward0",
        ("self", "target"),
        _float_kernel("multilabel_margin_loss_forward_out_frame"),
        edges=("self",),
        saves={"self": ("self", "target")},
    ),
)


def _op(name):
    return OPS["nn." + name]


# --- activations -------------------------------------------------------------------------------


def logsigmoid(input: Tensor) -> Tensor:
    """``F.logsigmoid``: ``log(sigmoid(x))``, computed stably."""
    return dispatch(_op("log_sigmoid"), input)


_CPP_NAMES = {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16"}


def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """``F.softshrink``: shrink towards 0 by ``lambd``; 0 on ``[-lambd, lambd]``."""
    given, lambd = lambd, E.real_scalar(lambd, "double")  # its check reads a double first
    dt = input.dtype
    if not dt.is_floating_point:
        raise NotImplementedError(
            KERNEL_NOT_IMPLEMENTED.format("softshrink_check", E.scalar_type_name(dt))
        )
    hi = float(jnp.finfo(dt.np).max)
    if not 0 <= lambd <= hi:
        name = _CPP_NAMES.get(str(dt).removeprefix("torch."), E.scalar_type_name(dt))
        raise RuntimeError(SOFTSHRINK_LAMBDA.format(f"{hi:g}", name, f"{lambd:g}"))
    out = dispatch(_op("softshrink"), input, lambd=float(lambd))
    return saved_mod.keep_given(out, lambd=given)


def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """``F.hardshrink``: ``x`` outside ``[-lambd, lambd]``, 0 inside."""
    real = E.kernel_scalar(lambd, input.dtype, E.scalar_c_type(input.dtype))
    out = dispatch(_op("hardshrink"), input, lambd=float(real))
    return saved_mod.keep_given(out, lambd=lambd)


def tanhshrink(input: Tensor) -> Tensor:
    """``F.tanhshrink``: ``x - tanh(x)``, recorded as PyTorch's two nodes."""
    return input - input.tanh()


def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    """``F.threshold``: ``value`` where ``x <= threshold``, else ``x``."""
    name = "threshold_" if inplace else "threshold"  # Note [Single signatures bound]
    check_call(name, SINGLE_SIGNATURES[name], (input, threshold, value))
    if inplace:
        writes_input(input, "threshold_")
        return threshold_(input, threshold, value)
    threshold, value = _threshold_scalars(input, threshold, value)
    return dispatch(_op("threshold"), input, threshold=threshold, value=value)


def _threshold_scalars(input: Tensor, threshold, value):
    """The Scalars as ATen's threshold kernel reads them: the threshold in ``opmath_type``, the
    value in the input's type (complex ones: ``E.real_scalar``); the kernel refuses complex and
    bool inputs first."""
    d = input.dtype
    if d.is_complex or d == D.bool_:
        return (v.real if isinstance(v, complex) else v for v in (threshold, value))
    threshold = E.real_scalar(threshold, E.opmath_c_type(d))
    value = E.real_scalar(value, E.scalar_c_type(d))
    if d._kind in "ui":  # an integer type's own: c10's overflow check
        from ..ops.shape import checked_number

        checked_number(threshold, d)
        checked_number(value, d)
    return threshold, value


def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:
    """``F.threshold_``: in place (``ThresholdBackward1``, which saves its result)."""
    check_call("threshold_", SINGLE_SIGNATURES["threshold_"], (input, threshold, value))
    threshold, value = _threshold_scalars(input, threshold, value)
    return _in_place(
        input,
        lambda: dispatch(_op("threshold"), input, threshold=threshold, value=value),
        "ThresholdBackward1",
        saves_result=False,  # measured: torch 2.13 does not check the result's version here
    )


def glu(input: Tensor, dim: int = -1) -> Tensor:
    """``F.glu``: ``a * sigmoid(b)`` for the two halves ``a, b`` of ``input`` along ``dim``."""
    if input.ndim == 0:
        raise RuntimeError(GLU_SCALAR)
    d = _wrap_dim(dim, input.ndim)
    if input.shape[d] % 2:  # before the kernel's dtype refusal
        raise RuntimeError(GLU_ODD.format(d, input.shape[d]))
    if not input.dtype.is_floating_point:
        n = E.scalar_type_name(input.dtype)
        raise NotImplementedError(KERNEL_NOT_IMPLEMENTED.format("glu_cpu", n))
    return dispatch(_op("glu"), input, dim=d)


RRELU_BOUNDS = "Lower bound should be less than or equal to the upper bound"


def _rrelu_noise(input: Tensor, lower: float, upper: float) -> Tensor:
    """PyTorch's ``_rrelu_with_noise_train`` noise: for each element of the input in row-major
    order (its ``contiguous()``) that is ``<= 0``, one draw of ``uniform_real_distribution<double>
    (lower, upper)`` from the default generator (bounds rounded to the input's dtype first),
    cast to that dtype; 1 elsewhere. How many draws depends on the values: eager only."""
    from .. import _random as R
    from .._compile import is_compiling
    from .._factories import as_tensor

    dt = input._dtype
    if dt not in (D.float32, D.float64):
        if dt is D.bfloat16:
            raise NotImplementedError(NOT_YET.format("rrelu", "training=True on bfloat16"))
        raise NotImplementedError(
            KERNEL_NOT_IMPLEMENTED.format("rrelu_with_noise_out_cpu", E.scalar_type_name(dt))
        )
    if is_compiling() or isinstance(input._data, jax.core.Tracer):
        raise RuntimeError(
            "rrelu(training=True) draws one random number per non-positive element, so how far "
            "it advances the generator depends on tensor values; it cannot run under jax.jit "
            "or leafgrad.compile"
        )
    x = np.asarray(input._data)
    kind = dt.np
    lo, hi = float(kind.type(lower)), float(kind.type(upper))
    negative = x <= 0  # NaN is not
    gen = R.default_generator
    with gen._lock:
        u = gen._uniform64(int(negative.sum()))
    noise = np.ones(x.shape, kind)
    noise[negative] = R._fma64(u, hi - lo, lo).astype(kind)  # GCC fuses u * (to - from) + from
    return as_tensor(noise, device=input.device)


def _rrelu_bounds(lower, upper) -> tuple[float, float, float]:
    """The bounds as ATen's rrelu reads them (doubles) and the eval slope between them."""
    lower, upper = float(E.real_scalar(lower, "double")), float(E.real_scalar(upper, "double"))
    if not lower <= upper:
        raise RuntimeError(RRELU_BOUNDS)
    return lower, upper, (lower + upper) / 2


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False) -> Tensor:
    """``F.rrelu``: in training, each non-positive element times its own slope drawn from
    U(lower, upper) (PyTorch's CPU stream); in eval, ``leaky_relu`` with slope
    ``(lower + upper) / 2``."""
    if inplace:
        writes_input(input, "rrelu_")
        return rrelu_(input, lower, upper, training)
    _refuse_in_vmap("rrelu")
    low, high, slope = _rrelu_bounds(lower, upper)
    if training:
        out = dispatch(_op("rrelu_train"), input, _rrelu_noise(input, low, high))
    else:
        out = dispatch(_op("rrelu_eval"), input, slope=slope)
    return _keep_rrelu(out, input, lower, upper, training)


def _keep_rrelu(out: Tensor, input: Tensor, lower, upper, training: bool) -> Tensor:
    """What ``RreluWithNoiseBackward0``/``1`` keep besides the input or result: the bounds and
    the mode as given, and in eval the noise PyTorch allocates and leaves unwritten
    (``empty_like``: zeros here)."""
    if out._grad_fn is not None:
        saved_mod.keep_scalars(out, lower=lower, upper=upper)
        kept = {"training": bool(training)}
        if not training:
            from .._factories import zeros_like

            kept["noise"] = zeros_like(input)
        saved_mod.keep_written(out, **kept)
    return out


def _refuse_in_vmap(op: str) -> None:
    from .. import _random as R

    if R.DRAW_CHECK[0] is not None:  # a vmap runs (Note [Randomness in vmap])
        from ..func import refuse_in_vmap

        refuse_in_vmap(op)


def _no_generator(generator) -> None:
    if generator is not None:
        raise NotImplementedError(
            "leafgrad: rrelu(generator=...) is not supported; it draws from the default generator"
        )


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None) -> Tensor:
    """``F.rrelu_`` (``RreluWithNoiseBackward1``, which saves its result), also ``torch.rrelu_``."""
    _no_generator(generator)
    _refuse_in_vmap("rrelu_")
    from ..autograd import forward_ad

    if forward_ad.ACTIVE[0]:  # Note [Forward AD not implemented]
        return forward_ad.inplace_refused(
            "rrelu", (input,), lambda: _rrelu_(input, lower, upper, training)
        )
    return _rrelu_(input, lower, upper, training)


def _rrelu_(input, lower, upper, training) -> Tensor:
    low, high, slope = _rrelu_bounds(lower, upper)
    if training:
        noise = _rrelu_noise(input, low, high)
        saves = {"keep": (1,)}

        def compute():
            return dispatch(_op("rrelu_train"), input, noise)
    else:
        # PyTorch's node saves the noise it makes (``empty_like``), unused in eval mode
        saves = {}
        if saved_mod.current() is not None:
            empty = Tensor._make(jnp.zeros_like(input._data), input._dtype, input._device)
            saves["first"] = (empty,)

        def compute():
            return dispatch(_op("rrelu_eval"), input, slope=slope)

    out = _in_place(input, compute, "RreluWithNoiseBackward1", saves_result=True, **saves)
    return _keep_rrelu(out, input, lower, upper, training)


@_autocast.policy("lower_precision_fp")
def prelu(input: Tensor, weight: Tensor) -> Tensor:
    """``F.prelu``: ``max(0, x) + weight * min(0, x)``, one weight per channel (dim 1)."""
    if weight.ndim > 1:
        raise RuntimeError(PRELU_WEIGHT_DIM.format(weight.ndim))
    if input.dtype is not weight.dtype:
        n = E.scalar_type_name
        raise RuntimeError(PRELU_PROMOTE.format(n(input.dtype), n(weight.dtype)))
    nd = input.ndim
    if weight.numel() != 1:
        if nd == 0:
            raise RuntimeError(PRELU_ZERO_DIM)
        channels = input.shape[1] if nd > 1 else 1
        if channels != weight.numel():
            raise RuntimeError(PRELU_CHANNELS.format(weight.numel(), channels))
    if nd != weight.ndim:
        # ATen views the weight as (1, C, 1, ...) so that it broadcasts over the channels.
        shape = [1] * nd
        if nd > 1:
            shape[1] = weight.numel()
        weight = _view(weight, tuple(shape))
    return dispatch(_op("prelu"), input, weight)


# --- normalisation, pixel shuffle ----------------------------------------------------------------


def rms_norm(input: Tensor, normalized_shape, weight=None, eps=None) -> Tensor:
    """``F.rms_norm``: ``x * rsqrt(mean(x**2) + eps) * weight``, as ATen's composite records it."""
    if isinstance(normalized_shape, int):
        raise TypeError(RMS_INT.format(type(normalized_shape).__name__))
    shape = tuple(normalized_shape)
    k = len(shape)
    if k == 0 or tuple(input.shape[input.ndim - k :]) != shape or input.ndim < k:
        raise RuntimeError(
            RMS_SHAPE.format(_dims(shape), ", ".join(str(s) for s in shape), _dims(input.shape))
        )
    dt = input.dtype
    # Half types are computed in float32 (ATen's opmath type) and cast back.
    up = input.to(D.float32) if dt in (D.float16, D.bfloat16) else input
    if eps is None:
        eps = float(np.finfo(jnp.dtype(dt.np)).eps)
    dims = tuple(range(input.ndim - k, input.ndim))
    ms = dispatch(OPS["pow_scalar"], up, exponent=2).mean(dims, keepdim=True)
    r = dispatch(OPS["rsqrt"], dispatch(_op("add_scalar"), ms, float(eps)))
    out = up * r
    if out.dtype is not dt:
        out = out.to(dt)
    return out if weight is None else out * weight


def _check_pixel(input, factor, fn, arg):
    if input.ndim < 3:
        raise RuntimeError(PS_NDIM.format(fn, input.ndim))
    if factor <= 0:
        raise RuntimeError(PS_FACTOR.format(fn, arg, factor))


def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    """``F.pixel_shuffle``: ``(*, C r^2, H, W) -> (*, C, H r, W r)``."""
    r = int(upscale_factor)
    _check_pixel(input, r, "pixel_shuffle", "upscale_factor")
    c = input.shape[-3]
    if c % (r * r):
        raise RuntimeError(PS_CHANNELS.format(c, r * r))
    return dispatch(_op("pixel_shuffle"), input, r=r)


def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:
    """``F.pixel_unshuffle``: ``(*, C, H r, W r) -> (*, C r^2, H, W)``."""
    r = int(downscale_factor)
    _check_pixel(input, r, "pixel_unshuffle", "downscale_factor")
    for name, d in (("height", -2), ("width", -1)):
        if input.shape[d] % r:
            raise RuntimeError(PU_SPATIAL.format(name, d, input.shape[d], r))
    return dispatch(_op("pixel_unshuffle"), input, r=r)


# --- attention ---------------------------------------------------------------------------------


@_autocast.policy("lower_precision_fp")
def scaled_dot_product_attention(
    query,
    key,
    value,
    attn_mask=None,
    dropout_p: float = 0.0,
    is_causal: bool = False,
    *,
    scale=None,
    enable_gqa: bool = False,
) -> Tensor:
    """``F.scaled_dot_product_attention`` as PyTorch's CPU build runs it: its flash kernel
    (``ScaledDotProductFlashAttentionForCpuBackward0``) for 4-D inputs with equal head sizes,
    no dropout and a mask of 2 or 4 dims that does not require grad; otherwise its composite
    (``_sdpa_math``). Values agree with PyTorch to rounding."""
    q, k, v = query, key, value
    if min(q.ndim, k.ndim, v.ndim) < 2:
        raise RuntimeError(SDPA_NDIM.format(q.ndim, k.ndim, v.ndim))
    if not (q.dtype is k.dtype is v.dtype):
        n = E.scalar_type_name
        raise RuntimeError(
            SDPA_DTYPE.format(n(q.dtype).lower(), n(k.dtype).lower(), n(v.dtype).lower())
        )
    if attn_mask is not None and attn_mask.dtype is not D.bool_ and attn_mask.dtype is not q.dtype:
        n = E.c_type_name
        raise RuntimeError(SDPA_MASK_DTYPE.format(n(attn_mask.dtype), n(q.dtype)))
    # None where PyTorch's CPU flash kernel applies; it also takes no empty sequence here
    refusal = _flash_refusal(q, k, v, attn_mask, dropout_p, enable_gqa)
    flash = refusal is None and q.shape[-2] > 0 and k.shape[-2] > 0
    from ..backends.cuda import SDP_ENABLED  # Note [SDPA backends]

    if not (SDP_ENABLED["flash"] or SDP_ENABLED["math"]):
        raise RuntimeError(SDPA_NO_BACKEND)
    if not (flash and SDP_ENABLED["flash"]):
        if SDP_ENABLED["math"]:
            return _sdpa_math(q, k, v, attn_mask, dropout_p, is_causal, scale, enable_gqa)
        if q.shape[-2] and k.shape[-2]:  # PyTorch's flash kernel takes empty sequences
            E.warn(SDPA_FLASH_NOT_USED)
            if refusal:
                E.warn(refusal)
            raise RuntimeError("No available kernel.  Aborting execution.")
        return _sdpa_math(q, k, v, attn_mask, dropout_p, is_causal, scale, enable_gqa)
    if attn_mask is not None:
        attn_mask = attn_mask.detach()
    groups = q.shape[1] // k.shape[1]
    s = 1 / math.sqrt(q.shape[-1]) if scale is None else float(scale)
    return dispatch(
        _op("sdpa_flash"),
        q,
        k,
        v,
        attn_mask,
        scale=s,
        is_causal=bool(is_causal),
        groups=groups,
    )


_SDP_CPP = "(Triggered internally at /__w/pytorch/pytorch/aten/src/ATen/native/transformers/"
SDPA_NO_BACKEND = (
    "No viable backend for scaled_dot_product_attention was found. This is likely due to "
    "turning off both the math kernel and the fused kernels."
)
SDPA_FLASH_NOT_USED = (
    "Flash attention kernel not used because: " + _SDP_CPP + "sdp_utils_cpp.cpp:99.)"
)
_BROADCAST = (
    " instead. To broadcast dense inputs, try using unsqueeze and expand_to before passing them "
    "into the kernel."
)


def _flash_refusal(q, k, v, mask, dropout_p, enable_gqa) -> str | None:
    """The warning of the first constraint of PyTorch's CPU flash kernel that the inputs fail
    (``use_flash_attention_cpp`` with debug on); "" for a constraint that fails silently; None
    where every constraint holds."""

    def sizes(t):
        return "[" + ", ".join(map(str, t.shape)) + "]"

    h = _SDP_CPP + "sdp_utils_cpp.h:{}.)"
    if dropout_p > 0:
        return "Both fused kernels do not support non-zero dropout. " + h.format(241)
    if not q.ndim == k.ndim == v.ndim == 4:
        return (
            "All fused kernels requires query, key and value to be 4 dimensional, but got Query "
            f"dim: {q.ndim}, Key dim: {k.ndim}, Value dim: {v.ndim} instead. " + h.format(327)
        )
    if not q.shape[0] == k.shape[0] == v.shape[0]:
        return (
            "For dense inputs, both fused kernels require query, key and value to have the same "
            f"batch_size. Query.sizes(): {sizes(q)}, Key.sizes(): {sizes(k)}, Value.sizes(): "
            f"{sizes(v)}" + _BROADCAST + " " + h.format(417)
        )
    if not (
        k.shape[1] == v.shape[1]
        and (q.shape[1] == k.shape[1] or (enable_gqa and q.shape[1] % k.shape[1] == 0))
    ):
        return (
            "For dense input, both fused kernels require query, key and value to have the same "
            f"num_heads. Query.sizes(): {sizes(q)}, Key sizes(): {sizes(k)}, Value sizes(): "
            f"{sizes(v)}" + _BROADCAST + " " + h.format(437)
        )
    if not _flash_mask(mask, q, k):
        if mask.requires_grad:
            return ""
        return (
            "Please use the following attn mask shapes: 2d - ({Q_seq_len, 1}  x {KV_seq_len, 1}); "
            "4d - ({Batch, 1} x {Num_heads, 1} x {Q_seq_len, 1}  x {KV_seq_len, 1}) "
            + h.format(314)
        )
    if not q.shape[-1] == k.shape[-1] == v.shape[-1]:
        return (
            "Flash attention requires q,k,v to have the same last dimension. Got "
            f"Query.size(-1): {q.shape[-1]}, Key.size(-1): {k.shape[-1]}, Value.size(-1): "
            f"{v.shape[-1]} instead. " + _SDP_CPP + "sdp_utils_cpp.cpp:21.)"
        )
    if not all(t.stride(-1) == 1 or t.shape[-1] == 1 for t in (q, k, v)):
        return (
            "All fused kernels require the last dimension of the input to have stride 1. Got "
            f"Query.stride(-1): {q.stride(-1)}, Key.stride(-1): {k.stride(-1)}, "
            f"Value.stride(-1): {v.stride(-1)} " + h.format(546)
        )
    if q.dtype.is_floating_point:
        return None
    n = E.c_type_name
    return (
        "Expected query, key and value to all be of dtype: {Float, Double, BFloat16, Half}. Got "
        f"Query dtype: {n(q.dtype)}, Key dtype: {n(k.dtype)}, and Value dtype: {n(v.dtype)} "
        "instead. " + h.format(91)
    )


def _flash_mask(mask, q, k) -> bool:
    """PyTorch's ``check_attn_mask_shape`` for its CPU flash kernel: no mask, or one that does
    not require grad, of 2 dims or 4 broadcastable ones."""
    if mask is None:
        return True
    if mask.requires_grad or mask.ndim < 2:
        return False
    if mask.shape[-2] not in (q.shape[2], 1) or mask.shape[-1] not in (k.shape[2], 1):
        return False
    if mask.ndim == 2:
        return True
    return mask.ndim == 4 and mask.shape[0] in (1, q.shape[0]) and mask.shape[1] in (1, q.shape[1])


def _sdpa_math(q, k, v, attn_mask, dropout_p, is_causal, scale, enable_gqa):
    """PyTorch's ``_scaled_dot_product_attention_math``: the composite its CPU build runs where
    the flash kernel does not apply (other ranks, dropout, masks that require grad or of other
    shapes): ``q`` and ``k`` each scaled by the square root of the scale, a boolean mask as
    ``-inf``/0 added in place, ``_safe_softmax``, dropout, the product with ``v``."""
    from .. import _factories
    from ..ops.formulas import smul
    from .functional import dropout

    origin = q.dtype
    if origin is D.float16 or origin is D.bfloat16:  # computed in float32, as PyTorch does
        q, k, v = q.to(D.float32), k.to(D.float32), v.to(D.float32)
    if attn_mask is not None and attn_mask.dtype is D.bool_:
        filled = _factories.zeros_like(attn_mask, dtype=q.dtype)
        attn_mask = filled.masked_fill_(attn_mask.logical_not(), float("-inf"))
    negative = scale is not None and scale < 0
    factor = math.sqrt(abs(scale) if scale is not None else 1 / math.sqrt(q.shape[-1]))
    query = smul(q, -factor if negative else factor)
    if is_causal:
        if attn_mask is not None:
            raise RuntimeError(
                "_scaled_dot_product_attention: Explicit attn_mask should not be set when "
                "is_causal=True"
            )
        length, source = query.shape[-2], k.shape[-2]
        keep = _factories.ones(length, source, dtype=D.bool_, device=q.device).tril()
        attn_mask = _factories.zeros(length, source, dtype=q.dtype, device=q.device)
        attn_mask = attn_mask.masked_fill_(keep.logical_not(), float("-inf"))
    if enable_gqa and q.ndim >= 3 and q.shape[-3] != k.shape[-3]:
        k = k.repeat_interleave(q.shape[-3] // k.shape[-3], -3)
        v = v.repeat_interleave(q.shape[-3] // v.shape[-3], -3)
    attn = query.matmul(smul(k.transpose(-2, -1), factor))
    if attn_mask is not None:
        attn = attn.add_(attn_mask)
    attn = dispatch(_op("safe_softmax"), attn, dim=attn.ndim - 1)
    if dropout_p > 0.0:
        attn = dropout(attn, dropout_p, True)
    out = attn.matmul(v)
    return out if out.dtype is origin else out.to(origin)


# --- losses ------------------------------------------------------------------------------------


@_autocast.policy("fp32")
def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean") -> Tensor:
    """``F.soft_margin_loss``: ``log(1 + exp(-target * input))`` reduced."""
    reduction = _check_reduction(_legacy_reduction(size_average, reduce, reduction))
    _no_grad_arg(target, "soft_margin_loss", "target")
    # its forward formula calls soft_margin_loss_backward with the target, which has none
    forward_ad.refuse_dual_reads(
        (input,), (target,), forward_ad.refuse("soft_margin_loss_backward", True)
    )
    return dispatch(_op("soft_margin_loss"), input, target, reduction=reduction)


@_autocast.policy("fp32")
def multi_margin_loss(
    input,
    target,
    p: int = 1,
    margin: float = 1.0,
    weight=None,
    size_average=None,
    reduce=None,
    reduction: str = "mean",
) -> Tensor:
    """``F.multi_margin_loss``: multi-class hinge loss (``p`` 1 or 2), optional class weights."""
    reduction = _check_reduction(_legacy_reduction(size_average, reduce, reduction))
    if p not in (1, 2):
        raise ValueError(MULTI_MARGIN_P)
    n = 1 if input.ndim <= 1 else input.shape[0]
    c = input.shape[-1] if input.ndim else 1
    if not ((target.ndim <= 1) and target.numel() == n):
        raise RuntimeError(MULTI_MARGIN_TARGET.format(n, _dims(target.shape), _dims(input.shape)))
    if input.ndim > 2:
        raise NotImplementedError(NOT_YET.format("multi_margin_loss", "input must be 1-D or 2-D"))
    if weight is not None:
        _no_grad_arg(weight, "multi_margin_loss", "weight")
        if weight.ndim != 1 or weight.numel() != c:
            raise RuntimeError(MULTI_MARGIN_WEIGHT.format(c, _dims(weight.shape)))
    if input.dtype not in (D.float32, D.float64):  # AT_DISPATCH_FLOATING_TYPES, then the kernel
        kernel, name = "multi_margin_loss_cpu_kernel", E.scalar_type_name(input.dtype)
        raise NotImplementedError(KERNEL_NOT_IMPLEMENTED.format(kernel, name))
    margin = E.real_scalar(margin, E.scalar_c_type(input.dtype))
    if target.dtype is not D.int64:
        n_ = E.scalar_type_name
        raise RuntimeError(SCALAR_TYPE.format("Long", n_(target.dtype)))
    if first_outside(target, 0, c) is not None:
        raise RuntimeError("target out of range")
    return dispatch(
        _op("multi_margin_loss"),
        input,
        target,
        weight,
        p=int(p),
        margin=float(margin),
        reduction=reduction,
    )


@_autocast.policy("fp32")
def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """``F.multilabel_margin_loss``: hinge loss between each target class (read up to the first
    -1) and each non-target class."""
    reduction = _check_reduction(_legacy_reduction(size_average, reduce, reduction))
    if input.ndim not in (1, 2) or tuple(target.shape) != tuple(input.shape):
        raise RuntimeError(MULTILABEL_TARGET.format(_dims(target.shape), _dims(input.shape)))
    c = input.shape[-1] if input.ndim else 1
    if first_outside(target, -1, c) is not None:
        raise RuntimeError("argument #2 'target' is out of range")
    if not input.dtype.is_floating_point:  # AT_DISPATCH, before the kernel reads the target
        kernel = "multilabel_margin_loss_forward_out_frame"
        raise NotImplementedError(
            KERNEL_NOT_IMPLEMENTED.format(kernel, E.scalar_type_name(input.dtype))
        )
    if target.dtype is not D.int64:
        raise RuntimeError(SCALAR_TYPE.format("Long", E.scalar_type_name(target.dtype)))
    return dispatch(_op("multilabel_margin_loss"), input, target, reduction=reduction)


def multilabel_soft_margin_loss(
    input, target, weight=None, size_average=None, reduce=None, reduction="mean"
) -> Tensor:
    """``F.multilabel_soft_margin_loss``, recorded as PyTorch's Python composite builds it."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    class_dim = input.ndim - 1
    loss = loss.sum(dim=class_dim) / input.shape[class_dim]
    if reduction == "none":
        return loss
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    raise ValueError(reduction + " is not valid")


@_autocast.policy("fp32")
def hinge_embedding_loss(
    input, target, margin: float = 1.0, size_average=None, reduce=None, reduction="mean"
) -> Tensor:
    """``F.hinge_embedding_loss``: ``x`` where target is 1, ``max(0, margin - x)`` where -1."""
    from .._factories import full_like, zeros_like
    from ..ops.api import FUNCTIONS

    reduction = _check_reduction(_legacy_reduction(size_average, reduce, reduction))
    where = FUNCTIONS["where"]
    zeros = zeros_like(input)
    # ATen's ``margin - self``: a filled tensor minus self (SubBackward0 with no first edge).
    with grad_mode.no_grad():
        filled = full_like(input, margin)
    diff = dispatch(OPS["sub"], filled, input)
    clamped = dispatch(_op("clamp_min"), diff, min=0)
    output = where(target != 1, clamped, zeros) + where(target != -1, input, zeros)
    return _apply_reduction(output, reduction)


@_autocast.policy("fp32")
def poisson_nll_loss(
    input,
    target,
    log_input: bool = True,
    full: bool = False,
    size_average=None,
    eps: float = 1e-8,
    reduce=None,
    reduction: str = "mean",
) -> Tensor:
    """``F.poisson_nll_loss``, recorded as ATen's composite builds it."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not a valid value for reduction")
    # PyTorch's compiled operators evaluate their operands right to left: the nodes are made
    # in that order (their sequence numbers order the sums of the gradients)
    if log_input:
        product = target * input
        loss = input.exp() - product
    else:
        loss = input - target * dispatch(_op("add_scalar"), input, float(eps)).log()
    if full:
        two_pi_t = dispatch(_op("mul_scalar"), target, 2 * math.pi)
        half_log = dispatch(_op("mul_scalar"), two_pi_t.log(), 0.5)
        stirling = target * target.log() - target + half_log
        loss = loss + stirling.masked_fill(target <= 1, 0)
    return _apply_reduction(loss, reduction)


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean") -> Tensor:
    """``F.gaussian_nll_loss``, recorded as PyTorch's Python composite builds it.

    The check that ``var`` is non-negative reads the values on the host, as PyTorch does
    (skipped under ``jax.jit``, where the values are not known)."""
    from .._factories import ones_like

    if isinstance(var, float):
        if var < 0:
            raise ValueError(GAUSSIAN_NEGATIVE)
        var = var * ones_like(input)
    elif not isinstance(var._data, jax.core.Tracer) and bool((var < 0).any()):
        raise ValueError(GAUSSIAN_NEGATIVE)
    if tuple(var.shape) != tuple(input.shape):
        if tuple(input.shape[:-1]) == tuple(var.shape):
            var = var.unsqueeze(-1)
        elif (
            input.ndim == var.ndim and sum(y for x, y in zip(input.shape, var.shape) if x != y) == 1
        ):
            pass
        else:
            raise ValueError(GAUSSIAN_SIZE)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    var = var.clone()
    with grad_mode.no_grad():  # PyTorch clamps in place under no_grad: invisible to autograd
        var._set_data(jnp.maximum(var._data, jnp.asarray(eps, var._data.dtype)))
        var._version_counter.value += 1
    loss = 0.5 * (var.log() + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _apply_reduction(loss, reduction)


def _check_triplet_dims(anchor, positive, negative):
    a, p, n = anchor.ndim, positive.ndim, negative.ndim
    if not (a == p == n):
        raise RuntimeError(TRIPLET_DIMS.format(a, p, n))


@_autocast.policy("fp32")
def triplet_margin_loss(
    anchor,
    positive,
    negative,
    margin: float = 1.0,
    p: float = 2,
    eps: float = 1e-6,
    swap: bool = False,
    size_average=None,
    reduce=None,
    reduction: str = "mean",
) -> Tensor:
    """``F.triplet_margin_loss``: ``max(d(a, p) - d(a, n) + margin, 0)`` with p-norm distances."""
    from ..ops.api import FUNCTIONS

    reduction = _legacy_reduction(size_average, reduce, reduction)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(REDUCTION_INVALID.format(reduction))
    if margin <= 0:
        raise ValueError(TRIPLET_MARGIN.format(margin))
    _check_triplet_dims(anchor, positive, negative)
    dist_pos = pairwise_distance(anchor, positive, p, eps)
    dist_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        dist_neg = FUNCTIONS["minimum"](dist_neg, pairwise_distance(positive, negative, p, eps))
    diff = dispatch(_op("add_scalar"), dist_pos, float(margin)) - dist_neg
    return _apply_reduction(dispatch(_op("clamp_min"), diff, min=0), reduction)


def triplet_margin_with_distance_loss(
    anchor,
    positive,
    negative,
    *,
    distance_function=None,
    margin: float = 1.0,
    swap: bool = False,
    reduction: str = "mean",
) -> Tensor:
    """``F.triplet_margin_with_distance_loss`` with any distance (default pairwise_distance)."""
    from ..ops.api import FUNCTIONS

    if reduction not in ("mean", "sum", "none"):
        raise ValueError(REDUCTION_INVALID.format(reduction))
    if margin <= 0:
        raise ValueError(TRIPLET_MARGIN.format(margin))
    _check_triplet_dims(anchor, positive, negative)
    if distance_function is None:
        distance_function = pairwise_distance
    dist_pos = distance_function(anchor, positive)
    dist_neg = distance_function(anchor, negative)
    if swap:
        dist_neg = FUNCTIONS["minimum"](dist_neg, distance_function(positive, negative))
    loss = dispatch(_op("clamp_min"), margin + dist_pos - dist_neg, min=0)
    return _apply_reduction(loss, reduction)
