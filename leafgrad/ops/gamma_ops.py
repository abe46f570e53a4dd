"""PyTorch's gamma-family samplers and their gradients: ``_standard_gamma``,
``_standard_gamma_grad``, ``_sample_dirichlet``, ``_dirichlet_grad`` and ``binomial``.

The samplers follow Note [Sampling nodes] (misc_ops.py): each draws on the host, element by
element in C order, from PyTorch's CPU stream, as ATen's CPU kernels do (``sample_gamma``,
``sample_binomial`` in aten/src/ATen/native/Distributions.h, the kernels in Distributions.cpp):
64-bit uniforms and ``normal_distribution<double>`` draws, which share the generator's cached
Box-Muller sample. The arithmetic is done with Python floats and ``math`` (the C library's
``log``/``pow``/``log1p``, as PyTorch calls them), rounding to float32 where ATen computes in
``scalar_t`` (Note [Scalar types in the samplers]).

Note [Reparameterized gamma gradient]: ``_standard_gamma``'s node is StandardGammaBackward0,
whose formula is ``grad * _standard_gamma_grad(self, result)``. The table forward takes the
sample as an operand and returns it; a ``jax.custom_jvp`` makes its tangent
``t * _standard_gamma_grad(alpha, sample)``, linear in ``t``, so JAX's VJP is PyTorch's formula.
The coefficient reads ``alpha`` through ``underivable``, so a derivative of that backward
(create_graph) raises PyTorch's NotImplementedError, as StandardGammaGradBackward0 does.

``_standard_gamma_grad`` and ``_dirichlet_grad`` are ATen's ``standard_gamma_grad_one`` and
``dirichlet_grad_one`` (series, saddle-point and rational approximations) in ``jax.numpy``, every
branch computed and the one ATen takes chosen with ``jnp.where``, so they trace under
``jax.jit``. They round as ATen does where it matters (double accumulation, float32 where ATen
works in ``scalar_t``) but call XLA's ``log``/``pow``/``tan``, so they agree with PyTorch to a few
ulps rather than bit for bit.

``_sample_dirichlet``, ``_dirichlet_grad`` and ``binomial`` have no derivative in PyTorch: their
node is ``NotImplemented`` and its backward raises (``refuse_backward``).
"""

from __future__ import annotations

import functools
import math

import jax
import jax.numpy as jnp
import numpy as np

from .. import _dtype as D
from .. import _errors as E
from .. import _random as R
from .._tensor import Tensor
from .api import refuse_backward, register_ops, tensor_op, underivable
from .dispatch import broadcast_shapes, dispatch
from .elementwise import _kernel_error
from .formulas import formula
from .misc_ops import _generator, _host, _sample_rule, _sample_tensor
from .table import OPS, OpDef

# --- PyTorch's messages ------------------------------------------------------------------------
NO_DERIVATIVE = "derivative for aten::{} is not implemented"
GAMMA_GRAD_NO_DERIVATIVE = "the derivative for '_standard_gamma_grad' is not implemented."
FOUND_DTYPE = "Found dtype {} but expected {}"
BINOMIAL_DTYPE = "binomial only supports floating-point dtypes for {}, got: {}"

_SIGNATURES = {
    "_standard_gamma": "(Tensor input, torch.Generator generator = None)",
    "_standard_gamma_grad": "(Tensor input, Tensor output)",
    "_sample_dirichlet": "(Tensor input, torch.Generator generator = None)",
    "_dirichlet_grad": "(Tensor x, Tensor alpha, Tensor total)",
    "binomial": "(Tensor count, Tensor prob, torch.Generator generator = None)",
}


def _parsed(name: str):
    """Bind calls of ``name`` as PyTorch's argument parser does (its TypeErrors, texts and all)."""

    def wrap(fn):
        @functools.wraps(fn)
        @E.wrapper
        def call(*args, **kwargs):
            from .._arg_check import check_call

            check_call(name, _SIGNATURES[name], args, kwargs)
            if "input" in kwargs:  # the parser's name for ATen's ``self``
                kwargs = dict(kwargs)
                args = (kwargs.pop("input"), *args)
            return fn(*args, **kwargs)

        return call

    return wrap


# --- host samplers (Note [Scalar types in the samplers]) ---------------------------------------
# Note [Scalar types in the samplers]: ATen's samplers take their arguments in the tensor's
# ``scalar_t`` and accumulate in double (``accscalar_t``). Where an expression has only
# ``scalar_t`` operands (``alpha + 1.0f``, ``count * prob``, ``std::sqrt`` of a float) C++ computes
# it in float for a float32 tensor: here each such operation is done in double and rounded to
# float32 (``_f32``), which gives the same bits for +, -, *, / and sqrt. ``1.0f / 3.0f`` and
# ``0.0331f`` are float literals, promoted to double where they meet a double.

_THIRD_F = float(np.float32(1.0) / np.float32(3.0))
_C0331_F = float(np.float32(0.0331))
_STIRLING_TAIL = (
    0.0810614667953272,
    0.0413406959554092,
    0.0276779256849983,
    0.02079067210376509,
    0.0166446911898211,
    0.0138761288230707,
    0.0118967099458917,
    0.0104112652619720,
    0.00925546218271273,
    0.00833056343336287,
)


def _f32(x: float) -> float:
    return float(np.float32(x))


def _same(x: float) -> float:
    return x


def _div(a: float, b: float) -> float:
    """IEEE division (Python raises on a zero divisor)."""
    try:
        return a / b
    except ZeroDivisionError:
        if a != a or a == 0:
            return math.nan
        return math.copysign(math.inf, a) * math.copysign(1.0, b)


def _log(x: float) -> float:
    if x > 0:
        return math.log(x)
    return -math.inf if x == 0 else math.nan


def _sqrt(x: float) -> float:
    return math.sqrt(x) if x >= 0 else math.nan


def _pow(x: float, y: float) -> float:
    """C's ``pow`` for a positive base (Python raises where C overflows)."""
    try:
        return math.pow(x, y)
    except OverflowError:
        return math.inf


def _floor(x: float) -> float:
    return float(math.floor(x)) if math.isfinite(x) else x


def _ceil(x: float) -> float:
    return float(math.ceil(x)) if math.isfinite(x) else x


@functools.cache
def _log1pf():
    """The C library's ``log1pf`` (``std::log1p`` of a float), or a correctly rounded stand-in."""
    import ctypes
    import ctypes.util

    try:
        fn = ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6").log1pf
    except (OSError, AttributeError):
        return lambda x: _f32(math.log1p(x))
    fn.restype, fn.argtypes = ctypes.c_float, [ctypes.c_float]
    return fn


def _gamma_one(uniform, normal, alpha: float, st) -> float:
    """ATen's ``sample_gamma``: Marsaglia and Tsang's rejection, with alpha boosted by one (and
    the sample scaled by ``U ** (1 / alpha)``) below one; ``st`` rounds to ``scalar_t``."""
    scale = 1.0
    if alpha < 1.0:
        if alpha == 0.0:
            return 0.0
        scale = _pow(1.0 - uniform(), st(_div(1.0, alpha)))
        alpha = st(alpha + 1.0)
    d = st(alpha - _THIRD_F)
    c = _div(1.0, _sqrt(9.0 * d))
    while True:
        while True:
            x = normal()
            y = 1.0 + c * x
            if not y <= 0:
                break
        v = y * y * y
        u = 1.0 - uniform()
        xx = x * x
        if u < 1.0 - _C0331_F * xx * xx:
            return scale * d * v
        if _log(u) < 0.5 * xx + d * (1.0 - v + _log(v)):
            return scale * d * v


def _stirling_tail(k: float) -> float:
    if k <= 9:
        return _STIRLING_TAIL[int(k)]
    kp1sq = (k + 1) * (k + 1)
    return (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1)


def _binomial_inversion(uniform, count: float, prob: float, st, log1p) -> float:
    logprob = log1p(-prob)
    geom_sum, num_geom = 0.0, 0.0
    while True:
        geom_sum += _ceil(_div(_log(uniform()), logprob))
        if geom_sum > count:
            return num_geom
        num_geom = st(num_geom + 1)


def _btrs(uniform, count: float, prob: float, st) -> float:
    """Hoermann's transformed rejection with squeeze (BTRS), as ATen adapts it."""
    stddev = st(_sqrt(st(st(count * prob) * st(1.0 - prob))))
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * prob
    c = st(count * prob) + 0.5
    v_r = 0.92 - 4.2 / b
    r = st(_div(prob, st(1.0 - prob)))
    alpha = (2.83 + 5.1 / b) * stddev
    m = _floor(st(st(count + 1) * prob))
    while True:
        u = uniform() - 0.5
        v = uniform()
        us = 0.5 - abs(u)
        k = st(_floor((_div(2 * a, us) + b) * u + c))
        if k < 0 or k > count:
            continue
        if us >= 0.07 and v <= v_r:
            return k
        v = _log(_div(v * alpha, _div(a, us * us) + b))
        rest = st(st(count - k) + 1)
        upperbound = (
            (m + 0.5) * _log(_div(m + 1, r * (count - m + 1)))
            + st(count + 1) * _log(_div(count - m + 1, rest))
            + (k + 0.5) * _log(_div(r * rest, st(k + 1)))
            + _stirling_tail(m)
            + _stirling_tail(count - m)
            - _stirling_tail(k)
            - _stirling_tail(st(count - k))
        )
        if v <= upperbound:
            return k


def _binomial_one(uniform, count: float, prob: float, st, log1p) -> float:
    """ATen's ``sample_binomial``: BTRS from ``count * prob >= 10`` on, inversion below, on the
    smaller of ``prob`` and ``1 - prob``."""
    if count <= 0.0 or prob <= 0.0:
        return 0.0
    if prob >= 1.0:
        return count
    if count != count:
        # PyTorch's inversion never ends for a NaN count (``geom_sum > NaN`` is never true)
        return math.nan
    if prob <= 0.5:
        if st(count * prob) >= 10.0:
            return _btrs(uniform, count, prob, st)
        return _binomial_inversion(uniform, count, prob, st, log1p)
    if prob > 0.5:
        q = st(1.0 - prob)
        if st(count * q) >= 10.0:
            return st(count - _btrs(uniform, count, q, st))
        return st(count - _binomial_inversion(uniform, count, q, st, log1p))
    return math.nan  # a NaN prob


def _streams(gen: R.Generator):
    """The per-draw uniform and standard normal of ATen's samplers (callers hold the lock)."""

    def uniform() -> float:
        return float(gen._uniform64(1)[0])

    def normal() -> float:
        return R.standard_normal_double(gen)

    return uniform, normal


def _clamp_tiny(values: np.ndarray, np_dtype) -> np.ndarray:
    """``std::max(numeric_limits<scalar_t>::min(), (scalar_t) v)`` (NaN gives the minimum)."""
    values = values.astype(np_dtype)
    tiny = np.finfo(np_dtype).tiny
    return np.where(tiny < values, values, tiny).astype(np_dtype)


# --- the gradients in jax.numpy ----------------------------------------------------------------

_PSI_10 = 2.25175258906672110764
_DIGAMMA_A = (
    8.33333333333333333333e-2,
    -2.10927960927960927961e-2,
    7.57575757575757575758e-3,
    -4.16666666666666666667e-3,
    3.96825396825396825397e-3,
    -8.33333333333333333333e-3,
    8.33333333333333333333e-2,
)
_GAMMA_GRAD_UV = (
    (0.16009398, -0.094634809, 0.025146376, -0.0030648343, 1, 0.32668115, 0.10406089, 0.0014179084),
    (
        0.53487893,
        0.1298071,
        0.065735949,
        -0.0015649758,
        0.16639465,
        0.020070113,
        -0.0035938915,
        -0.00058392623,
    ),
    (
        0.040121004,
        -0.0065914022,
        -0.0026286047,
        -0.0013441777,
        0.017050642,
        -0.0021309326,
        0.00085092367,
        -1.5247877e-07,
    ),
)
# dirichlet_grad_one's rational correction: [p or q][power of u][power of a][power of b]
_DIRICHLET_C = (
    (
        (
            (1.003668233, -0.01061107488, -0.0657888334, 0.01201642863),
            (0.6336835991, -0.3557432599, 0.05486251648, -0.001465281033),
            (-0.03276231906, 0.004474107445, 0.002429354597, -0.0001557569013),
        ),
        (
            (0.221950385, -0.3187676331, 0.01799915743, 0.01074823814),
            (-0.2951249643, 0.06219954479, 0.01535556598, 0.001550077057),
            (0.02155310298, 0.004170831599, 0.001292462449, 6.976601077e-05),
        ),
        (
            (-0.05980841433, 0.008441916499, 0.01085618172, 0.002319392565),
            (0.02911413504, 0.01400243777, -0.002721828457, 0.000751041181),
            (0.005900514878, -0.001936558688, -9.495446725e-06, 5.385558597e-05),
        ),
    ),
    (
        (
            (1, -0.02924021934, -0.04438342661, 0.007285809825),
            (0.6357567472, -0.3473456711, 0.05454656494, -0.002407477521),
            (-0.03301322327, 0.004845219414, 0.00231480583, -0.0002307248149),
        ),
        (
            (0.5925320577, -0.1757678135, 0.01505928619, 0.000564515273),
            (0.1014815858, -0.06589186703, 0.01272886114, -0.0007316646956),
            (-0.007258481865, 0.001096195486, 0.0003934994223, -4.12701925e-05),
        ),
        (
            (0.06469649321, -0.0236701437, 0.002902096474, -5.896963079e-05),
            (0.001925008108, -0.002869809258, 0.0008000589141, -6.063713228e-05),
            (-0.0003477407336, 6.959756487e-05, 1.097287507e-05, -1.650964693e-06),
        ),
    ),
)


def _digamma_one(x, st):
    """ATen's ``digamma_one<scalar_t, double>``: ``x`` and its own arithmetic in ``st``, the sums
    in double; the result in ``st``."""
    x = x.astype(st)
    acc = jnp.float64
    zero = x == 0
    negative_integer = (x < 0) & (x == jnp.floor(x))
    negative = x < 0
    pi = np.asarray(math.pi, st)
    extra = jnp.where(negative, (-pi / jnp.tan(pi * x)).astype(acc), 0.0)
    x = jnp.where(negative, 1 - x, x)
    result = jnp.zeros(x.shape, acc)
    for _ in range(10):  # below 10 at most ten steps reach 10 (x > 0 here)
        below = x < 10
        result = jnp.where(below, result - (1 / x).astype(acc), result)
        x = jnp.where(below, x + 1, x)
    z = 1.0 / (x * x).astype(acc)
    poly = jnp.zeros(x.shape, acc)
    for coef in _DIGAMMA_A:
        poly = poly * z + coef
    y = jnp.where(x < float(np.float32(1e17)), z * poly, 0.0)
    value = result + jnp.log(x).astype(acc) - (0.5 / x).astype(acc) - y + extra
    value = jnp.where(x == 10, result + _PSI_10 + extra, value)
    return jnp.where(zero | negative_integer, jnp.inf, value).astype(st)


def _standard_gamma_grad_value(alpha, x):
    """``standard_gamma_grad_one(alpha, x)``: the reparameterized gradient
    ``-(d/dalpha cdf(x; alpha)) / pdf(x; alpha)``, in double, rounded to the inputs' dtype."""
    st = jnp.result_type(alpha, x)
    alpha = jnp.asarray(alpha).astype(jnp.float64)
    x = jnp.asarray(x).astype(jnp.float64)
    # Taylor series for small x
    numer = jnp.ones_like(x)
    denom = alpha
    series1 = numer / denom
    series2 = numer / (denom * denom)
    for i in range(1, 6):
        numer = numer * (-x / i)
        denom = denom + 1
        series1 = series1 + numer / denom
        series2 = series2 + numer / (denom * denom)
    pow_x_alpha = jnp.power(x, alpha)
    gamma_pdf = jnp.power(x, alpha - 1) * jnp.exp(-x)
    gamma_cdf = pow_x_alpha * series1
    gamma_cdf_alpha = (
        jnp.log(x) - _digamma_one(alpha, jnp.float64)
    ) * gamma_cdf - pow_x_alpha * series2
    small = -gamma_cdf_alpha / gamma_pdf
    small = jnp.where(jnp.isnan(small), 0.0, small)
    # Rice saddle point expansion for large alpha
    numer_1 = 1 + 24 * alpha * (1 + 12 * alpha)
    numer_2 = (
        1440 * (alpha * alpha)
        + 6 * x * (53 - 120 * x)
        - 65 * x * x / alpha
        + alpha * (107 + 3600 * x)
    )
    saddle = numer_1 * numer_2 / (1244160 * (alpha * alpha) * (alpha * alpha))
    denom = jnp.sqrt(8 * alpha)
    term2 = denom / (alpha - x)
    term3 = jnp.power(x - alpha - alpha * jnp.log(x / alpha), -1.5)
    term23 = jnp.where(x < alpha, term2 - term3, term2 + term3)
    term1 = jnp.log(x / alpha) * term23 - jnp.sqrt(2 / alpha) * (alpha + x) / (
        (alpha - x) * (alpha - x)
    )
    stirling = 1 + 1 / (12 * alpha) * (1 + 1 / (24 * alpha))
    rice = -stirling * (x * term1) / denom
    near = (float(np.float32(0.9)) * alpha <= x) & (x <= float(np.float32(1.1)) * alpha)
    large = jnp.where(near, saddle, rice)
    # bivariate rational approximation
    u = jnp.log(x / alpha)
    v = jnp.log(alpha)
    coef = [c0 + u * (c1 + u * c2) for c0, c1, c2 in zip(*_GAMMA_GRAD_UV)]
    p = coef[0] + v * (coef[1] + v * (coef[2] + v * coef[3]))
    q = coef[4] + v * (coef[5] + v * (coef[6] + v * coef[7]))
    rational = jnp.exp(p / q)
    out = jnp.where(x < float(np.float32(0.8)), small, jnp.where(alpha > 8.0, large, rational))
    return out.astype(st)


def _beta_grad_alpha_small(x, alpha, beta):
    """Reparameterized gradient of Beta(x; alpha, beta) for alpha, x near 0 (in ``scalar_t``)."""
    st = x.dtype
    factor = _digamma_one(alpha, st) - _digamma_one(alpha + beta, st) - jnp.log(x)
    numer = jnp.ones_like(x)
    series = numer / alpha * (factor + 1 / alpha)
    for i in range(1, 11):
        i = np.asarray(i, st)
        numer = numer * ((i - beta) * x / i)
        denom = alpha + i
        series = series + numer / denom * (factor + 1 / denom)
    result = x * jnp.power(1 - x, -beta) * series
    return jnp.where(jnp.isnan(result), jnp.zeros_like(result), result)


def _beta_grad_beta_small(x, alpha, beta):
    """Reparameterized gradient of Beta(x; alpha, beta) for beta, x near 0 (in ``scalar_t``)."""
    st = x.dtype
    factor = _digamma_one(alpha + beta, st) - _digamma_one(beta, st)
    numer = jnp.ones_like(x)
    betas = jnp.ones_like(x)
    dbetas = jnp.zeros_like(x)
    series = factor / alpha
    for i in range(1, 9):
        i = np.asarray(i, st)
        numer = numer * (-x / i)
        dbetas = dbetas * (beta - i) + betas
        betas = betas * (beta - i)
        series = series + numer / (alpha + i) * (dbetas + factor * betas)
    result = -jnp.power(1 - x, 1 - beta) * series
    return jnp.where(jnp.isnan(result), jnp.zeros_like(result), result)


def _beta_grad_alpha_mid(x, alpha, beta):
    """Rice saddle point expansion for large alpha and beta (in double)."""
    total = alpha + beta
    mean = alpha / total
    std = jnp.sqrt(alpha * beta / (total + 1)) / total
    # near the mean: the singularity at x = mean avoided
    poly = 47 * x * (beta * beta) * (beta * beta) + alpha * (
        (43 + 20 * (16 + 27 * beta) * x) * (beta * beta) * beta
        + alpha
        * (
            3 * (59 + 180 * beta - 90 * x) * (beta * beta)
            + alpha
            * (
                (453 + 1620 * beta * (1 - x) - 455 * x) * beta
                + alpha * (8 * (1 - x) * (135 * beta - 11))
            )
        )
    )
    prefactor_num = (1 + 12 * alpha) * (1 + 12 * beta) / (total * total)
    prefactor_den = 12960 * alpha * alpha * alpha * beta * beta * (1 + 12 * total)
    near = prefactor_num / (1 - x) * poly / prefactor_den
    prefactor = -x / jnp.sqrt(2 * alpha * beta / total)
    stirling = (
        (1 + 1 / (12 * alpha) + 1 / (288 * alpha * alpha))
        * (1 + 1 / (12 * beta) + 1 / (288 * beta * beta))
        / (1 + 1 / (12 * total) + 1 / (288 * total * total))
    )
    term1_num = 2 * (alpha * alpha) * (x - 1) + alpha * beta * (x - 1) - x * (beta * beta)
    axbx = alpha * (x - 1) + beta * x
    term1_den = jnp.sqrt(2 * alpha / beta) * jnp.power(total, 1.5) * axbx * axbx
    term1 = term1_num / term1_den
    term2 = 0.5 * jnp.log(alpha / (total * x))
    term3 = jnp.sqrt(8 * alpha * beta / total) / (beta * x + alpha * (x - 1))
    term4_base = beta * jnp.log(beta / (total * (1 - x))) + alpha * jnp.log(alpha / (total * x))
    term4 = jnp.power(term4_base, -1.5)
    term1234 = term1 + term2 * (term3 + jnp.where(x < mean, term4, -term4))
    far = stirling * prefactor * term1234
    return jnp.where((mean - 0.1 * std <= x) & (x <= mean + 0.1 * std), near, far)


def _dirichlet_grad_value(x, alpha, total):
    """``dirichlet_grad_one(x, alpha, total)``: the scaled reparameterized gradient of
    Beta(x; alpha, total - alpha) for alpha, as Dirichlet's gradient is built from it."""
    x, alpha, total = jnp.broadcast_arrays(x, alpha, total)
    st = x.dtype
    acc = jnp.float64
    x_, alpha_, total_ = x.astype(acc), alpha.astype(acc), total.astype(acc)
    beta = total - alpha
    beta_ = total_ - alpha_
    boundary = total * x * (1 - x)
    near_zero = _beta_grad_alpha_small(x, alpha, beta)
    near_one = -_beta_grad_beta_small(1 - x, beta, alpha)
    mid = _beta_grad_alpha_mid(x_, alpha_, beta_).astype(st)
    # a rational correction to an analytic approximation
    u = jnp.log(x_)
    a = jnp.log(alpha_) - u
    b = jnp.log(total_) - a
    pow_u = (1.0, u, u * u)
    pow_a = (1.0, a, a * a)
    p = jnp.zeros_like(x_)
    q = jnp.zeros_like(x_)
    for i in range(3):
        for j in range(3):
            ua = pow_u[i] * pow_a[j]
            cp, cq = _DIRICHLET_C[0][i][j], _DIRICHLET_C[1][i][j]
            p = p + ua * (cp[0] + b * (cp[1] + b * (cp[2] + b * cp[3])))
            q = q + ua * (cq[0] + b * (cq[1] + b * (cq[2] + b * cq[3])))
    digammas = _digamma_one(total_, st) - _digamma_one(alpha_, st)
    approx = x_ * digammas.astype(acc) / beta_
    rational = (p / q * approx).astype(st)
    return jnp.where(
        (x <= 0.5) & (boundary < 2.5),
        near_zero,
        jnp.where(
            (x >= 0.5) & (boundary < 0.75),
            near_one,
            jnp.where((alpha > 6) & (beta > 6), mid, rational),
        ),
    )


_no_gamma_grad_derivative = underivable("_standard_gamma_grad")


@jax.custom_jvp
def _standard_gamma_sample(alpha, sample):
    return sample


@_standard_gamma_sample.defjvp
def _standard_gamma_sample_jvp(primals, tangents):
    # Note [Reparameterized gamma gradient]
    alpha, sample = primals
    t, _ = tangents
    coef = _standard_gamma_grad_value(_no_gamma_grad_derivative(alpha), sample)
    return sample, (t * coef).astype(sample.dtype)


@formula("standard_gamma_sample")
def _standard_gamma_formula(ctx):
    """derivatives.yaml's ``grad * _standard_gamma_grad(self, result)``, recorded (create_graph:
    a MulBackward0 over a StandardGammaGradBackward0, whose backward raises)."""
    from .formulas_elementwise import _result

    result = _result(ctx, lambda: ctx["sample"])
    return {"self": ctx.grad * _standard_gamma_grad(ctx["self"], result)}


def _first_dtype_rule(meta, static):
    """No casts (the frontend checked that the dtypes agree); the result in the first's dtype."""
    return (None,) * len(meta), meta[0][0]


_OPS = [
    OpDef(
        "standard_gamma_sample",
        _standard_gamma_sample,
        "StandardGammaBackward0",
        ("self", "sample"),
        _sample_rule,
        edges=("self",),
        saves={"self": ("self", "result")},
    ),
    OpDef(
        "standard_gamma_grad",
        _standard_gamma_grad_value,
        "StandardGammaGradBackward0",
        ("self", "output"),
        _first_dtype_rule,
        edges=("self",),
    ),
    OpDef(
        "sample_dirichlet_sample",
        lambda self_, sample: sample,
        "NotImplemented",
        ("self", "sample"),
        _sample_rule,
        edges=("self",),
    ),
    OpDef(
        "dirichlet_grad",
        _dirichlet_grad_value,
        "NotImplemented",
        ("x", "alpha", "total"),
        _first_dtype_rule,
    ),
    OpDef(
        "binomial_sample",
        lambda count, prob, sample: sample,
        "NotImplemented",
        ("count", "prob", "sample"),
        _sample_rule,
        edges=("count", "prob"),
    ),
]

if "standard_gamma_sample" not in OPS:  # importing twice (reload) must not register twice
    register_ops(*_OPS)


# --- argument checks ---------------------------------------------------------------------------

_FLOATING = (D.float32, D.float64)  # AT_DISPATCH_FLOATING_TYPES


def _kernel_dtype(kernel: str, t: Tensor) -> None:
    if t._dtype not in _FLOATING:
        raise _kernel_error(kernel, t._dtype)


def _iterator_shape(out_shape: tuple, *operands: Tensor) -> tuple:
    """TensorIterator's checks for ``out = empty(out_shape)`` over ``operands``: the broadcast
    shape (PyTorch's message where it fails), then every input in the first one's dtype; the
    output is resized to the broadcast shape, with resize_output's warning."""
    shape = tuple(operands[0].shape)
    for t in operands[1:]:
        shape = broadcast_shapes(shape, tuple(t.shape))
    expected = operands[0]._dtype
    for t in operands[1:]:
        if t._dtype is not expected:
            n = E.scalar_type_name
            raise RuntimeError(FOUND_DTYPE.format(n(t._dtype), n(expected)))
    if shape != out_shape and math.prod(out_shape):
        E.warn(E.OUT_RESIZED.format(list(out_shape), list(shape)))
    return shape


def _draw(input: Tensor, generator) -> R.Generator:
    return R._generator(_generator(input._device, generator))


# --- the frontends -----------------------------------------------------------------------------


@tensor_op("_standard_gamma", method=False)
@_parsed("_standard_gamma")
def _standard_gamma(input, generator=None):
    """``torch._standard_gamma``: one Gamma(alpha, 1) draw per element, PyTorch's numbers after
    ``manual_seed`` (StandardGammaBackward0: the reparameterized gradient, Note
    [Reparameterized gamma gradient])."""
    _kernel_dtype("gamma_cpu", input)
    np_dtype = input._dtype.np
    st = _f32 if input._dtype is D.float32 else _same
    shape = tuple(input._data.shape)
    if R.DRAW_CHECK[0] is None:
        alphas = _host(input)
    g = _draw(input, generator)

    def draw(s, alphas):
        alphas = np.broadcast_to(alphas, s).astype(np.float64).reshape(-1).tolist()
        with g._lock, np.errstate(all="ignore"):
            uniform, normal = _streams(g)
            drawn = [_gamma_one(uniform, normal, a, st) for a in alphas]
            return _clamp_tiny(np.asarray(drawn, np.float64), np_dtype).reshape(s)

    values = R.sampled(draw, shape, (input,), _host)  # Note [Randomness in vmap]
    if values is None:
        values = draw(shape, _host(input) if R.DRAW_CHECK[0] is not None else alphas)
    sample = _sample_tensor(values, input._dtype, input._device, (input,))
    return dispatch(OPS["standard_gamma_sample"], input, sample)


@tensor_op("_standard_gamma_grad", method=False)
@_parsed("_standard_gamma_grad")
def _standard_gamma_grad(input, output):
    """``torch._standard_gamma_grad(alpha, x)``: d x / d alpha of a Gamma(alpha, 1) sample ``x``
    (StandardGammaGradBackward0, whose own backward raises)."""
    _iterator_shape(tuple(input.shape), input, output)
    _kernel_dtype("_standard_gamma_grad_cpu", input)
    out = dispatch(OPS["standard_gamma_grad"], input, output)
    return refuse_backward(out, lambda: NotImplementedError(GAMMA_GRAD_NO_DERIVATIVE))


@tensor_op("_sample_dirichlet", method=False)
@_parsed("_sample_dirichlet")
def _sample_dirichlet(input, generator=None):
    """``torch._sample_dirichlet``: Gamma draws in double per element, normalised along the last
    dim and kept inside (0, 1) (a NotImplemented node)."""
    _kernel_dtype("dirichlet", input)
    np_dtype = input._dtype.np
    shape = tuple(input._data.shape)
    if R.DRAW_CHECK[0] is None:
        alphas = _host(input)
    g = _draw(input, generator)

    def draw(s, alphas):
        alphas = np.broadcast_to(alphas, s).astype(np.float64).reshape(-1).tolist()
        with g._lock, np.errstate(all="ignore"):
            uniform, normal = _streams(g)
            drawn = [_gamma_one(uniform, normal, a, _same) for a in alphas]
        gamma = _clamp_tiny(np.asarray(drawn, np.float64), np.float64).reshape(s)
        if gamma.ndim and gamma.size:
            from .reduce import host_sum

            total = host_sum(gamma, -1)
        else:
            total = gamma + 0.0  # the sum of one element (0 + x)
        with np.errstate(all="ignore"):
            ratio = (gamma / total).astype(np_dtype)
        low = np.finfo(np_dtype).tiny
        high = np.nextafter(np.ones((), np_dtype), np.zeros((), np_dtype))
        ratio = np.where(low < ratio, ratio, low)
        return np.where(ratio < high, ratio, high).astype(np_dtype)

    values = R.sampled(draw, shape, (input,), _host)  # Note [Randomness in vmap]
    if values is None:
        values = draw(shape, _host(input) if R.DRAW_CHECK[0] is not None else alphas)
    sample = _sample_tensor(values, input._dtype, input._device, (input,))
    out = dispatch(OPS["sample_dirichlet_sample"], input, sample)
    return refuse_backward(out, lambda: RuntimeError(NO_DERIVATIVE.format("_sample_dirichlet")))


@tensor_op("_dirichlet_grad", method=False)
@_parsed("_dirichlet_grad")
def _dirichlet_grad(x, alpha, total):
    """``torch._dirichlet_grad(x, alpha, total)``: the reparameterized gradient of a Beta(alpha,
    total - alpha) sample ``x`` for alpha, scaled by ``1 / (1 - x)`` (a NotImplemented node)."""
    _iterator_shape(tuple(x.shape), x, alpha, total)
    _kernel_dtype("_dirichlet_grad_cpu", x)
    out = dispatch(OPS["dirichlet_grad"], x, alpha, total)
    return refuse_backward(out, lambda: RuntimeError(NO_DERIVATIVE.format("_dirichlet_grad")))


@tensor_op("binomial", method=False)
@_parsed("binomial")
def binomial(count, prob, generator=None):
    """``torch.binomial``: one Binomial(count, prob) draw per element of the broadcast operands,
    PyTorch's numbers after ``manual_seed`` (a NotImplemented node)."""
    for name, t in (("count", count), ("prob", prob)):
        if not t._dtype.is_floating_point:
            raise ValueError(BINOMIAL_DTYPE.format(name, E.scalar_type_name(t._dtype)))
    shape = _iterator_shape(tuple(count.shape), count, prob)
    _kernel_dtype("binomial_cpu", count)
    np_dtype = count._dtype.np
    st = _f32 if count._dtype is D.float32 else _same
    if R.DRAW_CHECK[0] is None:
        read = (_host(count), _host(prob))
    log1p = _log1pf() if st is _f32 else math.log1p
    g = _draw(count, generator)

    def draw(s, counts, probs):
        counts = np.broadcast_to(counts.astype(np.float64), s).reshape(-1).tolist()
        probs = np.broadcast_to(probs.astype(np.float64), s).reshape(-1).tolist()
        with g._lock, np.errstate(all="ignore"):
            uniform, _ = _streams(g)
            drawn = [_binomial_one(uniform, n, p, st, log1p) for n, p in zip(counts, probs)]
        return np.asarray(drawn, np.float64).astype(np_dtype).reshape(s)

    values = R.sampled(draw, shape, (count, prob), _host)  # Note [Randomness in vmap]
    if values is None:
        if R.DRAW_CHECK[0] is not None:
            read = (_host(count), _host(prob))
        values = draw(shape, *read)
    sample = _sample_tensor(values, count._dtype, count._device, (count, prob))
    out = dispatch(OPS["binomial_sample"], count, prob, sample)
    return refuse_backward(out, lambda: RuntimeError(NO_DERIVATIVE.format("binomial")))
