"""Gradients of the elementwise ops under ``create_graph=True`` (Note [Graph formulas] in
leafgrad/ops/formulas.py): PyTorch's graphs of their derivative formulas, and the values of the
first three derivatives, against PyTorch."""

from __future__ import annotations

import os

import numpy as np
import pytest
import torch
from formula_check import check_graph, graph_signature

import leafgrad as lg

R = np.random.default_rng(0)


def _u(*shape, lo=-1.0, hi=1.0):
    return R.uniform(lo, hi, shape)


A = _u(2, 3)  # in (-1, 1)
B = _u(2, 3)
P = _u(2, 3, lo=0.2, hi=0.9)  # in (0, 1)
BIG = _u(2, 3, lo=1.2, hi=3.0)  # > 1
ROW = _u(3)
COL = _u(2, 1)
S = _u()  # a 0-d input

# Each case compiles JAX programs (more for each derivative order), so by default a
# representative set of each table runs, to the second derivative but for the cases in THIRD
# (whose third derivative runs formulas of formulas no other case reaches);
# LEAFGRAD_FORMULA_CASES=all runs every case to the third.
ALL = os.environ.get("LEAFGRAD_FORMULA_CASES") == "all"
THIRD = {"tan", "sinc", "logit_eps", "atan2", "pow", "clamp_t_crossed", "addcdiv", "where3"}


def _order(name):
    return 3 if ALL or name in THIRD else 2


def _pick(cases, core):
    return list(cases) if ALL else list(core)


# The op applied to x, then followed by a nonlinear op, so that the incoming gradient of the op's
# node itself requires grad (its graph is then part of the signature).
UNARY = {
    "tan": (lambda m, x: x.tan(), A),
    "asin": (lambda m, x: x.asin(), A * 0.9),
    "acos": (lambda m, x: x.acos(), A * 0.9),
    "atan": (lambda m, x: x.atan(), A),
    "sinh": (lambda m, x: x.sinh(), A),
    "cosh": (lambda m, x: x.cosh(), A),
    "asinh": (lambda m, x: x.asinh(), A),
    "acosh": (lambda m, x: x.acosh(), BIG),
    "atanh": (lambda m, x: x.atanh(), A * 0.9),
    "exp2": (lambda m, x: x.exp2(), A),
    "expm1": (lambda m, x: x.expm1(), A),
    "log2": (lambda m, x: x.log2(), BIG),
    "log10": (lambda m, x: x.log10(), BIG),
    "log1p": (lambda m, x: x.log1p(), P),
    "erf": (lambda m, x: x.erf(), A),
    "erfc": (lambda m, x: x.erfc(), A),
    "erfinv": (lambda m, x: x.erfinv(), A * 0.8),
    "lgamma": (lambda m, x: x.lgamma(), BIG),
    "digamma": (lambda m, x: x.digamma(), BIG),
    "polygamma": (lambda m, x: m.polygamma(1, x), BIG),
    "deg2rad": (lambda m, x: x.deg2rad(), A),
    "rad2deg": (lambda m, x: x.rad2deg(), A),
    "sinc": (lambda m, x: x.sinc(), A),
    "logit": (lambda m, x: x.logit(), P),
    "logit_eps": (lambda m, x: x.logit(eps=0.3), P),
    "nan_to_num": (lambda m, x: x.nan_to_num(), A),
    "frac": (lambda m, x: (x * 3).frac(), A),
    "floor": (lambda m, x: x.floor() * x, A * 3),
    "ceil": (lambda m, x: x.ceil() + x, A * 3),
    "trunc": (lambda m, x: x.trunc(), A * 3),
    "round": (lambda m, x: x.round() * x, A * 3),
    "round_decimals": (lambda m, x: x.round(decimals=1) * x, A * 3),
    "sign": (lambda m, x: x.sign() * x, A),
    "sgn": (lambda m, x: x.sgn() * x, A),
    "angle": (lambda m, x: x.angle() + x, A),
    "i0": (lambda m, x: m.i0(x), A),
    "i0e": (lambda m, x: m.special.i0e(x), A),
    "entr": (lambda m, x: m.special.entr(x), P),
    "erfcx": (lambda m, x: m.special.erfcx(x), A),
    "ndtri": (lambda m, x: m.special.ndtri(x), P),
    "log_ndtr": (lambda m, x: m.special.log_ndtr(x), A),
    "clone": (lambda m, x: x.clone(), A),
    "to_float32": (lambda m, x: x.float(), A),
    "to_float32_back": (lambda m, x: x.float().sin().double(), A),
    "clamp": (lambda m, x: x.clamp(-0.3, 0.4), A),
    "clamp_min": (lambda m, x: x.clamp(min=-0.3), A),
    "clamp_max": (lambda m, x: x.clamp(max=0.2), A),
    "clamp_min_fn": (lambda m, x: m.clamp_min(x, 0.1), A),
    "clamp_max_fn": (lambda m, x: m.clamp_max(x, 0.1), A),
    "remainder_scalar": (lambda m, x: x.remainder(0.3), A),
    "fmod_scalar": (lambda m, x: x.fmod(0.3), A),
    "copysign_scalar": (lambda m, x: x.copysign(-1.0), A),
    "xlogy_scalar_other": (lambda m, x: m.xlogy(x, 2.5), A),
    "xlogy_scalar_other_neg": (lambda m, x: m.xlogy(x, -2.5), A),
    "xlogy_scalar_self": (lambda m, x: m.xlogy(2.5, x), BIG),
    "xlog1py_scalar_self": (lambda m, x: m.special.xlog1py(2.5, x), P),
    "xlog1py_scalar_other": (lambda m, x: m.special.xlog1py(x, 0.5), A),
    "zeta_scalar_self": (lambda m, x: m.special.zeta(2.5, x), BIG),
    "lerp_scalar_self": (lambda m, x: x.lerp(m.ones(2, 3, dtype=m.float64), 0.3), A),
    # formulas of formulas.py, mixed in
    "sin": (lambda m, x: x.sin(), A),
    "exp_log": (lambda m, x: x.exp().log1p(), A),
    "sqrt": (lambda m, x: x.sqrt(), P),
    "abs": (lambda m, x: x.abs(), A),
}


def _square(y):
    return y * y


UNARY_CORE = (
    "tan", "acosh", "atanh", "exp2", "logit_eps", "erfinv", "sinc", "nan_to_num", "round", "i0e",
    "to_float32_back", "clamp", "copysign_scalar", "xlogy_scalar_other_neg", "lerp_scalar_self",
)  # fmt: skip


@pytest.mark.parametrize("name", _pick(UNARY, UNARY_CORE))
def test_unary(name):
    fn, x = UNARY[name]
    check_graph(lambda m, a: _square(fn(m, a)), x, order=_order(name))


@pytest.mark.parametrize("name", ["tan", "floor"] if ALL else ["floor"])
def test_unary_0d(name):
    fn, x = UNARY[name]
    x0 = np.asarray(x).reshape(-1)[:1].reshape(())
    check_graph(lambda m, a: fn(m, a).exp(), x0, order=_order(name))


def test_unary_plain():
    # the incoming gradient a constant: the formulas' graphs over the saved inputs only
    names = ["tan", "atanh", "erfinv", "digamma", "sinc", "i0", "logit"]
    for name in names if ALL else ["atanh", "digamma", "i0"]:
        fn, x = UNARY[name]
        check_graph(fn, x, order=_order(name))


BINARY = {
    "atan2": (lambda m, x, y: m.atan2(x, y), A, B),
    "hypot_bcast": (lambda m, x, y: m.hypot(x, y), COL, A),
    "copysign": (lambda m, x, y: m.copysign(x, y), A, B),
    "logaddexp": (lambda m, x, y: m.logaddexp(x, y), A, ROW),
    "logaddexp2": (lambda m, x, y: m.logaddexp2(x, y), A, B),
    "maximum": (lambda m, x, y: m.maximum(x, y), A, B),
    "maximum_bcast": (lambda m, x, y: m.maximum(x, y), A, COL),
    "maximum_ties": (lambda m, x, y: m.maximum(x, y), A, np.where(A > 0, A, B)),
    "minimum": (lambda m, x, y: m.minimum(x, y), A, ROW),
    "minimum_ties": (lambda m, x, y: m.minimum(x, y), A, np.where(A > 0, A, B)),
    "fmax": (lambda m, x, y: m.fmax(x, y), A, B),
    "fmin": (lambda m, x, y: m.fmin(x, y), COL, B),
    "remainder": (lambda m, x, y: m.remainder(x, y), A, BIG),
    "fmod": (lambda m, x, y: m.fmod(x, y), A * 3, BIG),
    "xlogy": (lambda m, x, y: m.xlogy(x, y), A, BIG),
    "xlog1py": (lambda m, x, y: m.special.xlog1py(x, y), A, P),
    "ldexp": (lambda m, x, y: m.ldexp(x, y), A, B),
    "lerp_scalar": (lambda m, x, y: m.lerp(x, y, 0.7), A, B),
    "lerp_scalar_bcast": (lambda m, x, y: m.lerp(x, y, 0.2), A, ROW),
    "where": (lambda m, x, y: m.where(x > 0, x, y), A, B),
    "where_bcast": (lambda m, x, y: m.where(x > 0, x, y), A, ROW),
    "clamp_min_t": (lambda m, x, y: x.clamp(min=y), A, B),
    "clamp_max_t": (lambda m, x, y: x.clamp(max=y), A, ROW),
    # clamp_min.Tensor / clamp_max.Tensor: nodes of two edges
    "clamp_min_fn_t": (lambda m, x, y: m.clamp_min(x, y), A, B),
    "clamp_max_fn_t": (lambda m, x, y: m.clamp_max(x, y), A, ROW),
    "clamp_min_inplace_t": (lambda m, x, y: (x * 1).clamp_min_(y), A, COL),
    "div_floor": (lambda m, x, y: m.div(x, y, rounding_mode="floor") * x * y, A, BIG),
    "rsub": (lambda m, x, y: m.rsub(x, y), A, B),
    "rsub_alpha": (lambda m, x, y: m.rsub(x, y, alpha=2), A, ROW),
    "nextafter": (lambda m, x, y: m.nextafter(x, y) * y, A, B),
    "sub_alpha": (lambda m, x, y: m.sub(x, y, alpha=3), A, B),
    "mul_div": (lambda m, x, y: x * y / (y + 2), A, B),
    "pow": (lambda m, x, y: x.pow(y), BIG, B),
}


BINARY_CORE = (
    "atan2", "hypot_bcast", "copysign", "logaddexp", "maximum_ties", "fmin", "remainder",
    "xlogy", "ldexp", "lerp_scalar_bcast", "where_bcast", "clamp_min_t", "clamp_min_fn_t",
    "clamp_max_fn_t", "div_floor", "rsub_alpha", "nextafter", "pow",
)  # fmt: skip


@pytest.mark.parametrize("name", _pick(BINARY, BINARY_CORE))
def test_binary(name):
    fn, x, y = BINARY[name]
    check_graph(lambda m, a, b: fn(m, a, b).pow(2), x, y, order=_order(name))


@pytest.mark.parametrize(
    "name",
    _pick(["atan2", "maximum", "xlogy", "copysign", "where", "remainder"], ["maximum", "xlogy"]),
)
def test_binary_one_operand(name):
    # one operand a constant: only the other's gradient is formed
    fn, x, y = BINARY[name]
    check_graph(lambda m, a: fn(m, a, m.tensor(y)).exp(), x, order=_order(name))
    check_graph(lambda m, b: fn(m, m.tensor(x), b).exp(), y, order=_order(name))


def _clamp_nodes(m):
    """The nodes of clamp with tensor bounds and their edges (PyTorch's ClampMin/MaxBackward1
    take two, ClampBackward0 three)."""
    x = m.tensor(A, requires_grad=True)
    lo = m.tensor(B, requires_grad=True)
    hi = m.tensor(ROW)
    outs = [
        m.clamp_min(x, lo),
        m.clamp_max(x, hi),
        m.clamp_max(x.detach(), lo),
        x.clamp_min(hi),
        (x * 1).clamp_max_(lo),
        x.clamp(min=lo),
        x.clamp(max=hi),
        x.clamp(lo, hi),
        m.clip(x, hi, lo),
    ]
    return [
        (o.grad_fn.name(), [None if f is None else f.name() for f, _ in o.grad_fn.next_functions])
        for o in outs
    ]


def test_clamp_tensor_bounds_nodes():
    assert _clamp_nodes(lg) == _clamp_nodes(torch)


TERNARY = {
    "clamp_t": (lambda m, x, lo, hi: x.clamp(lo, hi), A, -P * 0.5, P * 0.5),
    "clamp_t_crossed": (lambda m, x, lo, hi: x.clamp(lo, hi), A, P * 0.5, -P * 0.5),
    "clamp_t_bcast": (lambda m, x, lo, hi: x.clamp(lo, hi), A, -ROW * ROW, COL * COL),
    "lerp_tensor": (lambda m, x, e, w: x.lerp(e, w), A, B, P),
    "lerp_tensor_bcast": (lambda m, x, e, w: m.lerp(x, e, w), ROW, A, COL),
    "addcmul": (lambda m, x, a, b: m.addcmul(x, a, b), A, B, BIG),
    "addcmul_value": (lambda m, x, a, b: m.addcmul(x, a, b, value=-0.5), ROW, A, COL),
    "addcdiv": (lambda m, x, a, b: m.addcdiv(x, a, b), A, B, BIG),
    "addcdiv_value": (lambda m, x, a, b: m.addcdiv(x, a, b, value=2), COL, A, BIG),
    "where3": (lambda m, c, x, y: m.where(c > 0, x.sin(), y), A, B, ROW),
}


TERNARY_CORE = (
    "clamp_t_crossed", "clamp_t_bcast", "lerp_tensor_bcast", "addcmul_value", "addcdiv", "where3",
)  # fmt: skip


@pytest.mark.parametrize("name", _pick(TERNARY, TERNARY_CORE))
def test_ternary(name):
    fn, x, y, z = TERNARY[name]
    check_graph(lambda m, a, b, c: fn(m, a, b, c).sin(), x, y, z, order=_order(name))


def test_ternary_some_operands():
    order = _order("")
    check_graph(
        lambda m, x: m.addcmul(x, m.tensor(B), m.tensor(BIG), value=3).exp(), A, order=order
    )
    check_graph(lambda m, lo: m.tensor(A).clamp(lo, m.tensor(P)).pow(2), -P, order=order)
    if ALL:
        check_graph(lambda m, b: m.addcdiv(m.tensor(A), m.tensor(B), b, value=3).sin(), BIG)
        check_graph(lambda m, w: m.tensor(A).lerp(m.tensor(B), w).pow(2), P)


def test_float32():
    # float32 ops inside a float64 graph: the casts (ToCopyBackward0) and the formulas in float32
    order = _order("")
    check_graph(
        lambda m, x: x.float().tan().atan().exp2().double().pow(2),
        A,
        rtol=1e-5,
        atol=1e-6,
        order=order,
    )
    if ALL:
        check_graph(
            lambda m, x, y: m.maximum(x.float(), y.float()).lerp(y.float(), 0.25).double().sin(),
            A,
            B,
            rtol=1e-5,
            atol=1e-6,
        )


def test_chains():
    order = _order("")
    check_graph(lambda m, x: x.sinh().asinh().cosh().log10().expm1(), A, order=order)
    check_graph(lambda m, x: float(S) * x + x.atan(), S, order=order)
    # piecewise ops of identity or zero gradients, together
    check_graph(
        lambda m, x: x.fmod(0.3) * x.remainder(0.7) + x.angle() + x.sign() * x.frac(),
        A,
        order=order,
    )
    if ALL:
        check_graph(lambda m, x, y: m.where(x > y, x.erf(), y.erfc()).clamp(0.1, 1.2).log2(), A, B)
        check_graph(lambda m, x: m.special.log_ndtr(x.sinc()) * x.tan(), A)


SPECIAL = {
    "i1": (lambda m, x: _square(m.special.i1(x)), A),
    "i1e": (lambda m, x: _square(m.special.i1e(x)), A),
    "mvlgamma": (lambda m, x: _square(m.mvlgamma(x, 3)), BIG + 1),
    "igamma": (lambda m, y: _square(m.igamma(m.tensor(BIG), y)), P),
    "igammac": (lambda m, y: _square(m.igammac(m.tensor(BIG), y)), P),
    "polygamma_": (lambda m, x: _square((x * 1).polygamma_(1)), BIG),
    "zeta": (lambda m, y: _square(m.special.zeta(m.tensor(BIG + 1), y)), BIG),
}


@pytest.mark.parametrize("name", _pick(SPECIAL, ["i1e", "igamma", "polygamma_"]))
def test_special_more(name):
    fn, x = SPECIAL[name]
    check_graph(fn, x, order=_order(name))


Z = A + 1j * B


def _run_complex(m, fn):
    z = m.tensor(Z, requires_grad=True)
    out = fn(m, z)
    loss = out.abs().pow(2).sum() if out.dtype.is_complex else out.pow(2).sum()
    (g,) = m.autograd.grad(loss, z, create_graph=True)
    (h,) = m.autograd.grad(g.abs().sum(), z, create_graph=True)
    values = [np.asarray(t.detach().tolist()) for t in (g, h)]
    return graph_signature(g), values


def check_complex(fn):
    """A complex leaf: the gradient's graph and the first two derivatives' values."""
    ts, tv = _run_complex(torch, fn)
    ls, lv = _run_complex(lg, fn)
    assert ls == ts, f"graph signatures differ:\n torch    {ts}\n leafgrad {ls}"
    for a, b in zip(tv, lv):
        np.testing.assert_allclose(b, a, rtol=1e-6, atol=1e-9)


COMPLEX = {
    "sgn": lambda m, z: z.sgn(),
    "angle": lambda m, z: z.angle(),
    "lerp_complex_weight": lambda m, z: z.lerp(z.exp(), 0.3 - 0.2j),
    "lerp_tensor": lambda m, z: z.lerp(z.exp(), z.sin()),
    "tan_log1p": lambda m, z: z.tan().log1p(),
    "acosh": lambda m, z: (z + 2).acosh(),
    "atanh_asin": lambda m, z: z.atanh() * z.asin(),
    "exp2_log2": lambda m, z: z.exp2().log2(),
    "addcmul": lambda m, z: m.addcmul(z, z.sin(), z.exp(), value=2),
    "addcdiv": lambda m, z: m.addcdiv(z, z.sin(), z.exp(), value=2),
    "where": lambda m, z: m.where(z.real > 0, z, z * z),
    "to_copy": lambda m, z: z.to(m.complex64).exp().to(m.complex128),
}


@pytest.mark.parametrize(
    "name", _pick(COMPLEX, ["sgn", "lerp_tensor", "atanh_asin", "addcdiv", "to_copy"])
)
def test_complex(name):
    check_complex(COMPLEX[name])


def test_complex_parts():
    # complex(real, imag): the real and imaginary parts of the gradient
    order = _order("")
    check_graph(lambda m, x, y: m.complex(x, y).sgn().real.pow(2), A, B, order=order)
    check_graph(
        lambda m, x, y: (m.complex(x, y).conj_physical() * m.complex(y, x)).real.pow(2),
        A,
        B,
        depth=5,
        order=order,
    )
    if ALL:
        check_graph(lambda m, x, y: m.complex(x, y).tan().log1p().abs(), A, B)


def test_frexp():
    check_graph(lambda m, x: m.frexp(x)[0].pow(2) * x, A * 5, order=_order(""))
