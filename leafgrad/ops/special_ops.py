"""Special functions: ``xlogy``, ``heaviside``, ``nextafter``, ``ldexp``, ``logaddexp2``, ``i0``,
``sinc``, ``polygamma``, ``mvlgamma``, and the entries of ``torch.special`` that are ops of their
own (``xlog1py``, ``zeta``, ``entr``, ``ndtri``, ``log_ndtr``, ``erfcx``, ``i0e``, ``i1``,
``i1e``). ``leafgrad/special.py`` is the namespace; it aliases the ops of this module and of
``elementwise.py`` that ``torch.special`` shares with ``torch``.

Note [Derivatives at the edges of the domain]: JAX's VJP of the plain formula differs from
PyTorch's gradient in a few places: ``xlogy(0, y)`` (PyTorch: ``log(y)`` for ``self``, 0 where also
``y <= 0``), ``i0`` at 0 (JAX's rule gives 1, PyTorch's ``i1(0)`` is 0), ``entr`` below 0 (PyTorch's
``-(1 + log(x))`` is NaN there) and ``nextafter`` (JAX has no rule; PyTorch passes the gradient to
``self`` where ``self != other``). These forwards carry PyTorch's formula from derivatives.yaml as
a ``jax.custom_jvp`` whose tangent is linear in the input tangents, so reverse mode (the VJP),
forward mode (``leafgrad.func.jvp``) and higher derivatives all follow from it. One difference
remains: ``at::xlogy(grad, other)`` is 0 where the incoming gradient is 0 even where ``log(other)``
is infinite, while a linear map gives ``0 * inf = NaN`` there.

Note [Refused derivatives]: ``heaviside`` has no derivative (a ``NotImplemented`` node, with an
edge for each operand that requires grad) and ``zeta``'s derivative for ``self`` is
``not_implemented("zeta")``. The table forwards are the true functions (so the numerical VJP check
holds for them); the node's backward is replaced by PyTorch's refusal where PyTorch's node
refuses (``refuse_backward`` in ``api.py``). As PyTorch, zeta refuses only when the gradient of
``self`` is needed by the backward call (Note [Needed edges] in autograd/graph.py):
``autograd.grad`` of ``zeta(x, q)`` for ``q`` alone works when ``x`` requires grad too.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import jax.scipy.special as jss
import numpy as np
from jax import lax
from jax.custom_derivatives import SymbolicZero

from .. import _dtype as D
from .. import _errors as E
from .._tensor import Tensor
from .api import refuse_backward, register_ops, tensor_op
from .dispatch import dispatch
from .elementwise import _digamma, _is_number, _kernel_error, _number
from .table import OPS, OpDef, promote, promote_to_float, unary_float

# --- PyTorch's messages ------------------------------------------------------------------------
HEAVISIDE_COMPLEX = "heaviside is not yet implemented for complex tensors."
HEAVISIDE_DTYPES = "heaviside is not yet implemented for tensors with different dtypes."
NO_DERIVATIVE = "derivative for aten::{} is not implemented"
ZETA_NO_DERIVATIVE = "the derivative for 'zeta' is not implemented."
POLYGAMMA_NEGATIVE = "polygamma(n, x) does not support negative n."
MVLGAMMA_P = "p has to be greater than or equal to 1"
MVLGAMMA_BOOL = "The input tensor may not be a boolean tensor."
MUST_BE_INT = "{}(): argument '{}' (position {}) must be int, not {}"
LDEXP_INPLACE_CAST = "ldexp can't be cast to the desired output type {}"
MVLGAMMA_INPLACE_CAST = "mvlgamma: result type {} can't be cast to the desired output type {}"


# --- dtype rules -------------------------------------------------------------------------------


def _refusing(kernel, kinds: str = "c", half: bool = False, rule=unary_float):
    """``rule``, refusing result kinds (``"c"``, ``"bui"`` ...) and, with ``half``, float16 and
    bfloat16 with PyTorch's kernel error (``kernel``: its name, or a function of the static
    arguments giving it)."""

    def check(meta, static):
        cast, rt = rule(meta, static)
        if rt._kind in kinds or (half and rt in (D.float16, D.bfloat16)):
            raise _kernel_error(kernel(**static) if callable(kernel) else kernel, rt)
        return cast, rt

    return check


def _heaviside_rule(meta, static):
    a, b = meta[0][0], meta[1][0]
    if a.is_complex or b.is_complex:
        raise RuntimeError(HEAVISIDE_COMPLEX)
    if a is not b:
        raise RuntimeError(HEAVISIDE_DTYPES)
    return (None, None), a


def _ldexp_rule(meta, static):
    # ATen's kernel takes a real floating ``self`` with an integer exponent as it is (ldexp,
    # dispatched over the exponent's integer types, so a bool exponent is refused); every other
    # pair is ``self * pow(2, other)`` in the promoted floating type.
    # ``pow(2, other)`` is computed in the exponent's own floating type.
    cast, rt = promote_to_float(meta, static)
    a, b = meta[0][0], meta[1][0]
    if b.is_floating_point or b.is_complex:
        return (rt, None), rt
    if a.is_floating_point:
        if b is D.bool_:
            raise _kernel_error("ldexp_cpu_exp", b)
        return (rt, None), rt
    return cast, rt


def _polygamma_kernel(n):
    return "digamma" if n == 0 else "trigamma" if n == 1 else "polygamma"


def _mvlgamma_rule(meta, static):
    dt = meta[0][0]
    if dt.is_complex:  # ATen's arange in the input's type comes first
        raise _kernel_error("arange_cpu", dt)
    return unary_float(meta, static)


# --- forwards ----------------------------------------------------------------------------------


def _with_jvp(value, *coefficients):
    """``value`` whose derivative is ``sum(tangent_i * coefficients[i](*primals))``: PyTorch's
    formula (Note [Derivatives at the edges of the domain]). A coefficient of None: no
    derivative for that operand (its tangent is dropped)."""
    f = jax.custom_jvp(value)

    def rule(primals, tangents):
        out = value(*primals)
        total = None
        for t, coef in zip(tangents, coefficients):
            if coef is None or isinstance(t, SymbolicZero):
                continue
            term = t * coef(*primals)
            total = term if total is None else total + term
        if total is None:
            total = jnp.zeros_like(out)
        return out, jnp.broadcast_to(total, out.shape).astype(out.dtype)

    f.defjvp(rule, symbolic_zeros=True)
    return f


def _xlog_value(log):
    def value(x, y):
        # ATen: NaN for a NaN y, then 0 where x is 0 (whatever y is), then x * log(y)
        out = jnp.where(x == 0, jnp.zeros_like(x), x * log(y))
        return jnp.where(jnp.isnan(y), y, out)

    return value


_xlogy = _with_jvp(
    _xlog_value(jnp.log),
    # at::xlogy(grad, other).masked_fill((self == 0.) & (other <= 0.), 0.)
    lambda x, y: jnp.where((x == 0) & (y <= 0), 0, jnp.log(y)),
    lambda x, y: x / y,  # grad * self / other
)
_xlog1py = _with_jvp(
    _xlog_value(jnp.log1p),
    lambda x, y: jnp.where((x == 0) & (y <= -1), 0, jnp.log1p(y)),
    lambda x, y: x / (y + 1),
)


def _entr_value(x):
    # ATen: NaN stays NaN, -x log x above 0, 0 at 0, -inf below
    out = jnp.where(x > 0, -x * jnp.log(jnp.where(x > 0, x, 1)), jnp.where(x == 0, 0, -jnp.inf))
    return jnp.where(jnp.isnan(x), x, out).astype(x.dtype)


_entr = _with_jvp(_entr_value, lambda x: -(1 + jnp.log(x)))  # grad * (-(1 + log(self)))
_i0 = _with_jvp(jss.i0, jss.i1)  # grad * at::special_i1(self)
# self: at::where(self != other, grad, 0); other: zeros_like(other)
_nextafter = _with_jvp(jnp.nextafter, lambda x, y: (x != y).astype(x.dtype), None)


def _exp2(e):
    """``2 ** e`` exact at integers, as ``std::pow(2, e)`` is (XLA's exp2 is not): the integer part
    scales by ``ldexp``. Complex exponents use ``exp2``."""
    if jnp.iscomplexobj(e):
        return jnp.exp2(e)
    n = jnp.floor(e)
    finite = jnp.isfinite(n)
    n_safe = jnp.where(finite, n, 0)
    scaled = jnp.ldexp(jnp.exp2(e - n_safe), lax.stop_gradient(n_safe).astype(jnp.int32))
    return jnp.where(finite, scaled, jnp.exp2(e))


def _int_pow2_coefficient(x, e):
    # PyTorch's ``grad * pow(2, other)`` with an integer ``other`` is an integer power: 0 for
    # negative exponents
    e = e.astype(jnp.int32)
    return jnp.where(e >= 0, jnp.ldexp(jnp.ones_like(x), e), 0).astype(x.dtype)


_ldexp_int = _with_jvp(lambda x, e: jnp.ldexp(x, e.astype(jnp.int32)), _int_pow2_coefficient, None)


def _ldexp(x, e):
    if not (jnp.issubdtype(e.dtype, jnp.inexact)):
        return _ldexp_int(x, e)
    return x * _exp2(e).astype(x.dtype)


def _logaddexp2(x, y):
    # ATen: a if both are the same infinity, else max + log1p(2^-|a - b|) / ln 2. The min - max
    # form splits the gradient half and half at ties, as PyTorch's grad / (1 + 2^(b - a)) does.
    hi, lo = jnp.maximum(x, y), jnp.minimum(x, y)
    same_inf = jnp.isinf(x) & (x == y)
    safe = jnp.where(same_inf, 0, lo - hi)
    return jnp.where(same_inf, x, hi + jnp.log1p(jnp.exp2(safe)) / math.log(2))


def _heaviside(x, values):
    # ``values`` where x is 0; elsewhere x > 0 (NaN: 0). Its node refuses to differentiate (Note
    # [Refused derivatives]).
    return jnp.where(x == 0, values, (x > 0).astype(x.dtype))


def _polygamma_value(x, n):
    # ATen: (-1)^(n+1) n! zeta(n + 1, x) for n >= 2 (JAX's polygamma is a few 1e-10 off in
    # double precision)
    # ATen's calc_polygamma computes n! as exp(lgamma(n + 1)) in the input's type
    # (C's expf is correctly rounded: exp in double, rounded to the type)
    t = np.dtype(x.dtype).type
    sign_factorial = t(1.0 if n % 2 else -1.0) * t(math.exp(float(t(math.lgamma(n + 1.0)))))
    return jnp.asarray(sign_factorial, x.dtype) * _zeta_value(jnp.asarray(n + 1.0, x.dtype), x)


def _trigamma_value(x):
    # ATen's calc_trigamma (its values differ from zeta(2, x) by a few 1e-10 in double precision):
    # reflection below 1/2, six steps of the recurrence, then the asymptotic series
    reflect = x < 0.5
    sin_pi_x = jnp.sin(math.pi * x)
    result = jnp.where(reflect, -(math.pi * math.pi) / (sin_pi_x * sin_pi_x), 0).astype(x.dtype)
    x = jnp.where(reflect, 1 - x, x)
    for _ in range(6):
        result = result + 1 / (x * x)
        x = x + 1
    ixx = 1 / (x * x)
    series = 1 + 1 / (2 * x) + ixx * (1 / 6 - ixx * (1 / 30 - ixx * (1 / 42)))
    return jnp.where(reflect, -1, 1).astype(x.dtype) * (result + series / x)


# grad * polygamma(n + 1, self); digamma's derivative likewise (JAX's rule uses its polygamma)
_trigamma = _with_jvp(_trigamma_value, lambda x: _polygamma_of(2)(x))
_digamma_exact = _with_jvp(_digamma, _trigamma)


_POLYGAMMAS: dict = {}


def _polygamma_of(n: int):
    """polygamma(n, .) for n >= 2, differentiated as polygamma(n + 1, .) (ATen's formula)."""
    f = _POLYGAMMAS.get(n)
    if f is None:
        f = _POLYGAMMAS[n] = _with_jvp(
            lambda x: _polygamma_value(x, n), lambda x: _polygamma_of(n + 1)(x)
        )
    return f


def _polygamma(x, n):
    if n == 0:
        return _digamma_exact(x)
    return _trigamma(x) if n == 1 else _polygamma_of(n)(x)


def _mvlgamma(x, p):
    # ATen: sum over j < p of lgamma(x - j / 2), plus p (p - 1) / 4 * log(pi)
    args = np.arange(-p * 0.5 + 0.5, 0.5, 0.5)
    terms = lax.lgamma(x[..., None] + jnp.asarray(args, x.dtype))
    return jnp.sum(terms, axis=-1) + jnp.asarray(p * (p - 1) * math.log(math.pi) * 0.25, x.dtype)


# ATen's zeta (Cephes): direct summation of (q + i)^-x while i < 9 or q + i <= 9, then the
# Euler-Maclaurin tail with these coefficients, each stage stopping when a term falls below MACHEP
# relative to the sum; computed in double (ATen's acc_type on CPU). JAX's zeta differs for q < 0
# (ATen sums the series there: polygamma(2, -10.3) = 68.83) and at q = 0, -1, ... (ATen: inf).
_ZETA_A = (
    12.0,
    -720.0,
    30240.0,
    -1209600.0,
    47900160.0,
    -1.8924375803183791606e9,
    7.47242496e10,
    -2.950130727918164224e12,
    1.1646782814350067249e14,
    -4.5979787224074726105e15,
    1.8152105401943546773e17,
    -7.1661652561756670113e18,
)
_MACHEP = 1.11022302462515654042e-16


def _zeta_value(x, q):
    dtype = jnp.result_type(x, q)
    # the first term is C++'s pow in the input's type (std::pow(float, float) is a float)
    s = jnp.power(jnp.asarray(q, dtype), -jnp.asarray(x, dtype)).astype(jnp.float64)
    x, q = jnp.broadcast_arrays(jnp.asarray(x, jnp.float64), jnp.asarray(q, jnp.float64))
    s = jnp.broadcast_to(s, x.shape)

    def active(state):
        i, a, _, s, done = state
        return ~done & ((i < 9) | (a <= 9.0))

    def body(state):
        i, a, b, s, done = state
        on = active(state)
        a = jnp.where(on, a + 1.0, a)
        b = jnp.where(on, jnp.power(a, -x), b)
        s = jnp.where(on, s + b, s)
        done = done | (on & (-_MACHEP * s < b) & (b < _MACHEP * s))
        return i + on, a, b, s, done

    pole = (q <= 0) & (q == jnp.floor(q))
    special = (x <= 1.0) | pole | ((q <= 0) & (x != jnp.floor(x))) | jnp.isnan(x) | jnp.isnan(q)
    zero = jnp.zeros_like(x)
    state = (jnp.zeros(x.shape, jnp.int32), q, zero, s, special)
    _, a, b, s, done = lax.while_loop(lambda st: jnp.any(active(st)), body, state)
    w = a
    tail = s + b * w / (x - 1.0) - 0.5 * b
    s = jnp.where(done, s, tail)
    a, k = jnp.ones_like(x), zero
    for coefficient in _ZETA_A:
        a = a * (x + k)
        b = b / w
        t = a * b / coefficient
        s = jnp.where(done, s, s + t)
        done = done | (jnp.abs(t / s) < _MACHEP)
        k = k + 1.0
        a = a * (x + k)
        b = b / w
        k = k + 1.0
    # ATen's checks, last first: x == 1, x < 1, a pole, a negative q with non-integer x
    s = jnp.where(jnp.isnan(x) | jnp.isnan(q), jnp.nan, s)
    s = jnp.where((q <= 0) & ~pole & (x != jnp.floor(x)), jnp.nan, s)
    s = jnp.where(pole, jnp.inf, s)
    s = jnp.where(x == 1.0, jnp.inf, jnp.where(x < 1.0, jnp.nan, s))
    return s.astype(dtype)


def _zeta_dx(x, q):
    # JAX's derivative in x (PyTorch refuses it: only the numerical check reads it)
    return jax.jvp(lambda a: jss.zeta(a, q), (x,), (jnp.ones_like(x),))[1]


# other: grad * -self * special_zeta(self + 1., other) (JAX's rule is NaN where zeta is infinite)
_zeta = _with_jvp(_zeta_value, _zeta_dx, lambda x, q: -x * _zeta_value(x + 1, q))


_SQRT_2PI = math.sqrt(2 * math.pi)


def _ndtri_backward(result, grad):
    # grad * std::sqrt(2 * M_PI) * (result.square() / 2).exp()
    return grad * _SQRT_2PI * jnp.exp(result * result / 2)


# --- the table entries -------------------------------------------------------------------------

_BOTH = {"self": ("self", "other"), "other": ("self", "other")}


def _binary_family(name, fwd, node, kernel, saves_other, **extra):
    """The Tensor-Tensor entry (``...Backward0``) and the two Scalar overloads: a number ``self``
    (``...Backward1``, its operands ``(other, self)``) and a number ``other`` (``...Backward2``)."""
    rule = _refusing(kernel, "c", rule=promote_to_float, **extra)
    return [
        OpDef(name, fwd, node + "0", ("self", "other"), rule, saves=_BOTH, broadcast=True),
        OpDef(
            name + "_scalar_self",
            lambda other, x: fwd(x, other),
            node + "1",
            ("other", "self"),
            rule,
            edges=("other",),
            saves={"other": saves_other},
        ),
        OpDef(
            name + "_scalar_other",
            fwd,
            node + "2",
            ("self", "other"),
            rule,
            edges=("self",),
            saves={"self": ("self",)},
        ),
    ]


def _ops():
    unary = [
        # name, forward, grad_fn, dtype rule, saves
        ("i0", _i0, "I0Backward0", _refusing("i0_vml_cpu"), ("self",)),
        ("sinc", jnp.sinc, "SincBackward0", unary_float, ("self",)),
        ("special_entr", _entr, "SpecialEntrBackward0", _refusing("entr_cpu"), ("self",)),
        (
            "special_log_ndtr",
            jss.log_ndtr,
            "SpecialLogNdtrBackward0",
            _refusing("log_ndtr_cpu", half=True),
            ("self", "result"),
        ),
        (
            "special_erfcx",
            jss.erfcx,
            "SpecialErfcxBackward0",
            _refusing("erfcx_cpu", half=True),
            ("self", "result"),
        ),
        ("special_i0e", jss.i0e, "SpecialI0EBackward0", _refusing("i0e_cpu"), ("self", "result")),
        ("special_i1", jss.i1, "SpecialI1Backward0", _refusing("i1_cpu"), ("self", "result")),
        ("special_i1e", jss.i1e, "SpecialI1EBackward0", _refusing("i1e_cpu"), ("self", "result")),
    ]
    ops = [
        OpDef(name, fwd, node, ("self",), rule, saves={"self": saves})
        for name, fwd, node, rule, saves in unary
    ]
    polygamma_rule = _refusing(_polygamma_kernel)
    ops += [
        OpDef(
            "special_ndtri",
            jss.ndtri,
            "SpecialNdtriBackward0",
            ("self",),
            _refusing("ndtri_cpu", half=True),
            saves={"self": ("result",)},
            result_vjp=_ndtri_backward,
        ),
        OpDef(
            "polygamma",
            _polygamma,
            "PolygammaBackward0",
            ("self",),
            polygamma_rule,
            saves={"self": ("self",)},
        ),
        # polygamma_(n): its own node, which reads the original self (Note [Original self])
        OpDef(
            "polygamma_inplace",
            _polygamma,
            "PolygammaBackward1",
            ("self",),
            polygamma_rule,
            saves={"self": ("self",)},
        ),
        OpDef(
            "mvlgamma",
            _mvlgamma,
            "MvlgammaBackward0",
            ("self",),
            _mvlgamma_rule,
            saves={"self": ("self",)},
        ),
        OpDef(
            "nextafter",
            _nextafter,
            "NextafterBackward0",
            ("self", "other"),
            _refusing("nextafter_cpu", "buic", rule=promote),
            saves={"self": ("self", "other")},
            broadcast=True,
        ),
        OpDef(
            "ldexp",
            _ldexp,
            "LdexpBackward0",
            ("self", "other"),
            _ldexp_rule,
            saves={"self": ("other",), "other": ("result",)},
            broadcast=True,
        ),
        OpDef(
            "logaddexp2",
            _logaddexp2,
            "Logaddexp2Backward0",
            ("self", "other"),
            _refusing("logaddexp2_cpu", "buic", rule=promote),
            saves=_BOTH,
            broadcast=True,
        ),
    ]
    ops += _binary_family("xlogy", _xlogy, "XlogyBackward", "xlogy_cpu", ("other",))
    ops += _binary_family(
        "special_xlog1py", _xlog1py, "SpecialXlog1PyBackward", "xlog1py_cpu", ("other",)
    )
    # zeta's derivative for self is refused (Note [Refused derivatives]): nothing saved for it
    zeta = _binary_family(
        "special_zeta", _zeta, "SpecialZetaBackward", "zeta_cpu", ("other",), half=True
    )
    zeta[0] = OpDef(
        "special_zeta",
        _zeta,
        "SpecialZetaBackward0",
        ("self", "other"),
        zeta[0].dtypes,
        saves={"other": ("self", "other")},
        broadcast=True,
    )
    zeta[2] = OpDef(
        "special_zeta_scalar_other",
        _zeta,
        "SpecialZetaBackward2",
        ("self", "other"),
        zeta[2].dtypes,
        edges=("self",),
    )
    ops += zeta
    # NotImplemented nodes have an edge for each operand that requires grad, and no other
    for edges in [("self",), ("values",), ("self", "values")]:
        ops.append(
            OpDef(
                "heaviside_" + "_".join(edges),
                _heaviside,
                "NotImplemented",
                ("self", "values"),
                _heaviside_rule,
                edges=edges,
                broadcast=True,
            )
        )
    return ops


if "special_entr" not in OPS:  # importing twice (reload) must not register twice
    register_ops(*_ops())


# --- refusals (Note [Refused derivatives]) -----------------------------------------------------


def _zeta_refusal():
    return NotImplementedError(ZETA_NO_DERIVATIVE)


def _heaviside_refusal():
    return RuntimeError(NO_DERIVATIVE.format("heaviside"))


# --- argument checks ---------------------------------------------------------------------------


_need_tensor = E.need_tensor


def _int_arg(fn: str, x, arg: str, pos: int) -> int:
    """An ``int`` argument as PyTorch's parser reads it (a 0-d integer tensor is taken)."""
    if isinstance(x, Tensor) and x.ndim == 0 and x._dtype._kind in "ui":
        return int(x.item())
    if isinstance(x, (int, np.integer)) and not isinstance(x, bool):
        return int(x)
    raise TypeError(MUST_BE_INT.format(fn, arg, pos, E.py_typename(x)))


_XLOGY_FUNCTION_SIGS = (
    "(Tensor input, Tensor other, *, Tensor out = None)",
    "(Number self, Tensor other, *, Tensor out = None)",
    "(Tensor input, Number other, *, Tensor out = None)",
)
_XLOGY_METHOD_SIGS = ("(Tensor other)", "(Number other)")


def binary_scalar_op(base: str, name: str, refusal=None):
    """The frontend of an op with Tensor-Tensor and Scalar overloads (``xlogy``, ``xlog1py``,
    ``zeta``); ``name`` is how PyTorch's parser names it in its messages."""

    def fn(input, other):
        if isinstance(input, Tensor) and isinstance(other, Tensor):
            out = dispatch(OPS[base], input, other)
            refused = refusal is not None and input._requires_grad
        elif _is_number(input) and isinstance(other, Tensor):
            return dispatch(OPS[base + "_scalar_self"], other, _number(input))
        elif isinstance(input, Tensor) and _is_number(other):
            out = dispatch(OPS[base + "_scalar_other"], input, _number(other))
            refused = refusal is not None
        else:
            raise TypeError(E.invalid_arguments(name, _XLOGY_FUNCTION_SIGS, (input, other)))
        return refuse_backward(out, refusal, 0) if refused else out

    fn.__name__ = fn.__qualname__ = base
    return fn


_xlogy_function = binary_scalar_op("xlogy", "xlogy")


@tensor_op("xlogy", method=False)
def xlogy(input, other):
    """``torch.xlogy``: ``input * log(other)``, 0 where ``input`` is 0 (NaN for a NaN other)."""
    return _xlogy_function(input, other)


@tensor_op("xlogy", function=False)
def _xlogy_method(self, other):
    if not (isinstance(other, Tensor) or _is_number(other)):
        raise TypeError(E.invalid_arguments("xlogy", _XLOGY_METHOD_SIGS, (other,)))
    return _xlogy_function(self, other)


def _tensor_binary(name: str, second: str = "other"):
    """Install ``torch.<name>(input, <second>)`` and its method, for Tensor operands only."""

    def install(compute):
        def function(input, *args, **kwargs):
            (other,) = _second(args, kwargs)
            _need_tensor(input, name, "input", 1)
            _need_tensor(other, name, second, 2)
            return compute(input, other)

        def method(self, *args, **kwargs):
            (other,) = _second(args, kwargs)
            _need_tensor(other, name, second, 1)
            return compute(self, other)

        def _second(args, kwargs):
            """The second operand, by position or by PyTorch's keyword for it only."""
            if len(args) + len(kwargs) == 1 and (args or second in kwargs):
                return args or (kwargs[second],)
            for key in kwargs:
                if key != second:
                    raise TypeError(f"{name}() got an unexpected keyword argument '{key}'")
            if not args and not kwargs:
                raise TypeError(f"{name}() missing 1 required positional argument: '{second}'")
            if len(args) == 1:
                raise TypeError(f"{name}() got multiple values for argument '{second}'")
            raise TypeError(f"{name}() takes 2 positional arguments but {len(args) + 1} were given")

        for f in (function, method):
            f.__name__ = f.__qualname__ = name
            f.__doc__ = compute.__doc__
        tensor_op(name, method=False)(function)
        tensor_op(name, function=False)(method)
        return compute

    return install


@_tensor_binary("heaviside", "values")
def heaviside(input, values):
    """``torch.heaviside``: 0 below 0, 1 above, ``values`` at 0; not differentiable."""
    rg = [n for n, t in (("self", input), ("values", values)) if t._requires_grad]
    op = OPS["heaviside_" + "_".join(rg or ["self"])]
    return refuse_backward(dispatch(op, input, values), _heaviside_refusal)


@_tensor_binary("nextafter")
def nextafter(input, other):
    """``torch.nextafter``: the next representable value after ``input`` towards ``other``."""
    return dispatch(OPS["nextafter"], input, other)


@_tensor_binary("ldexp")
def ldexp(input, other):
    """``torch.ldexp``: ``input * 2 ** other``."""
    return dispatch(OPS["ldexp"], input, other)


@_tensor_binary("logaddexp2")
def logaddexp2(input, other):
    """``torch.logaddexp2``: ``log2(2 ** input + 2 ** other)``, computed stably."""
    return dispatch(OPS["logaddexp2"], input, other)


@tensor_op("ldexp_", function=False)
def ldexp_(self, other):
    """``Tensor.ldexp_``: ``ldexp`` written into this (floating or complex) tensor."""
    from .inplace import inplace  # inplace.py imports the op modules

    _need_tensor(other, "ldexp_", "other", 1)
    if self._dtype._kind in "bui":
        raise RuntimeError(LDEXP_INPLACE_CAST.format(E.scalar_type_name(self._dtype)))
    return inplace(self, lambda: ldexp(self, other), other)


@tensor_op("i0")
def i0(input):
    """``torch.i0``: the modified Bessel function of the first kind, order 0."""
    _need_tensor(input, "i0", "input", 1)
    return dispatch(OPS["i0"], input)


@tensor_op("sinc")
def sinc(input):
    """``torch.sinc``: ``sin(pi x) / (pi x)``, 1 at 0."""
    _need_tensor(input, "sinc", "input", 1)
    return dispatch(OPS["sinc"], input)


def polygamma_op(n, input, fn: str = "polygamma", op: str = "polygamma"):
    n = _int_arg(fn, n, "n", 1)
    _need_tensor(input, fn, "input", 2)
    if n < 0:
        raise RuntimeError(POLYGAMMA_NEGATIVE)
    return dispatch(OPS[op], input, n=n)


@tensor_op("polygamma", method=False)
def polygamma(n, input):
    """``torch.polygamma``: the ``n``-th derivative of the digamma function."""
    return polygamma_op(n, input)


@tensor_op("polygamma", function=False)
def _polygamma_method(self, n):
    return polygamma_op(n, self)


@tensor_op("polygamma_", function=False)
def polygamma_(self, n):
    """``Tensor.polygamma_(n)`` (PolygammaBackward1)."""
    from .inplace import inplace

    n = _int_arg("polygamma_", n, "n", 1)
    return inplace(self, lambda: polygamma_op(n, self, "polygamma_", "polygamma_inplace"))


def mvlgamma_op(input, p, fn: str = "mvlgamma", p_pos: int = 2):
    _need_tensor(input, fn, "input", 1)
    p = _int_arg(fn, p, "p", p_pos)
    if input._dtype is D.bool_:
        raise RuntimeError(MVLGAMMA_BOOL)
    if p < 1:
        raise RuntimeError(MVLGAMMA_P)
    return dispatch(OPS["mvlgamma"], input, p=p)


@tensor_op("mvlgamma", method=False)
def mvlgamma(input, p):
    """``torch.mvlgamma``: the multivariate log-gamma function of dimension ``p``."""
    return mvlgamma_op(input, p)


@tensor_op("mvlgamma", function=False)
def _mvlgamma_method(self, p):
    return mvlgamma_op(self, p, p_pos=1)


@tensor_op("mvlgamma_", function=False)
def mvlgamma_(self, p):
    """``Tensor.mvlgamma_(p)``: on floating tensors only."""
    from .inplace import inplace

    p = _int_arg("mvlgamma_", p, "p", 1)
    if self._dtype._kind in "ui":
        name = E.scalar_type_name
        raise RuntimeError(
            MVLGAMMA_INPLACE_CAST.format(name(self._dtype), name(D.get_default_dtype()))
        )
    return inplace(self, lambda: mvlgamma_op(self, p, p_pos=1))


def unary(op: str):
    """The dispatching function of a unary table op (for ``leafgrad.special``)."""
    entry = OPS[op]

    def fn(input):
        return dispatch(entry, input)

    return fn


def ndtr(input):
    """``special.ndtr``: ``(1 + erf(x / sqrt(2))) * 0.5``, recorded as PyTorch's composite."""
    mul, add = OPS["nn.mul_scalar"], OPS["nn.add_scalar"]
    if input._dtype.is_complex:  # erf refuses complex; the product before it runs first
        raise _kernel_error("erf_vml_cpu", input._dtype)
    scaled = dispatch(mul, input, math.sqrt(0.5))
    return dispatch(mul, dispatch(add, scaled.erf(), 1), 0.5)
