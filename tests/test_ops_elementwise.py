"""Differential tests of the elementwise ops (leafgrad/ops/elementwise.py) against PyTorch.

Each case builds the same inputs in both libraries, runs the op, backpropagates a weighted sum
and compares values, dtypes, ``grad_fn`` names, ``requires_grad``/``is_leaf``, gradients and
error texts through ``conftest.both``.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from conftest import both, grad_fn_name, lg

SPECIAL = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.5, 3.0, 0.25, -1.5, 1.75]
UNIT = [0.0, 0.5, -0.5, 0.25, -0.75, 0.9, -0.9, 0.1, 0.3, -0.2, 0.6, -0.4]
POS = [0.0, 0.5, 1.0, 2.0, 3.5, 0.25, 10.0, 0.1, 7.0, 1.5, 4.0, 0.75]
OPEN_POS = [0.5, 1.0, 2.0, 3.5, 0.25, 10.0, 0.1, 7.0, 1.5, 4.0, 0.75, 5.5]
GE1 = [1.0, 1.5, 2.0, 3.5, 1.25, 10.0, 1.1, 7.0, 1.75, 4.0, 1.05, 5.5]
SHAPES = [(3, 4), (), (0, 2)]


def _values(pool, shape, offset=0):
    n = int(np.prod(shape)) if shape else 1
    vals = [pool[(i + offset) % len(pool)] for i in range(n)]
    return np.array(vals, dtype=np.float64).reshape(shape)


def _tensor(m, arr, dtype, requires_grad=False):
    t = m.tensor(arr.tolist(), dtype=getattr(m, dtype))
    if requires_grad:
        t.requires_grad_(True)
    return t


def _run(m, fn, arrays, dtypes, grad=True):
    """The op's result and the gradients of a weighted sum of it, for module ``m``."""
    ins = [
        _tensor(m, a, d, grad and d.startswith("float")) if isinstance(a, np.ndarray) else a
        for a, d in zip(arrays, dtypes)
    ]
    out = fn(m, *ins)
    results = [out]
    if isinstance(out, m.Tensor) and out.requires_grad:
        w = m.arange(1, out.numel() + 1, dtype=out.dtype).reshape(out.shape) / 7
        (out * w).sum().backward()
        results += [t.grad for t in ins if isinstance(t, m.Tensor) and t.requires_grad]
    return results


def check(fn, arrays, dtypes, grad=True, **kw):
    return both(lambda m: _run(m, fn, arrays, dtypes, grad), **kw)


def _eager(name):
    return lambda m, *a, **k: getattr(m, name)(*a, **k)


# --- unary ops ---------------------------------------------------------------------------------

UNARY = {
    "abs": SPECIAL,
    "absolute": SPECIAL,
    "sign": SPECIAL,
    "square": SPECIAL,
    "sqrt": POS,
    "rsqrt": OPEN_POS,
    "reciprocal": OPEN_POS,
    "exp2": SPECIAL,
    "expm1": SPECIAL,
    "log2": POS,
    "log10": POS,
    "log1p": POS,
    "sin": SPECIAL,
    "cos": SPECIAL,
    "tan": SPECIAL,
    "asin": UNIT,
    "acos": UNIT,
    "atan": SPECIAL,
    "arcsin": UNIT,
    "sinh": SPECIAL,
    "cosh": SPECIAL,
    "tanh": SPECIAL,
    "asinh": SPECIAL,
    "acosh": GE1,
    "atanh": UNIT,
    "sigmoid": SPECIAL,
    "logit": UNIT + [0.0, 1.0, 1.5],
    "erf": SPECIAL,
    "erfc": SPECIAL,
    "erfinv": UNIT,
    "lgamma": OPEN_POS,
    "digamma": OPEN_POS,
    "floor": SPECIAL,
    "ceil": SPECIAL,
    "round": SPECIAL,
    "trunc": SPECIAL,
    "frac": SPECIAL,
    "neg": SPECIAL,
    "exp": SPECIAL,
    "log": POS,
    "nan_to_num": SPECIAL,
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_float(name, dtype):
    exact = name in {"abs", "absolute", "sign", "square", "floor", "ceil", "round"}
    exact = exact or name in {"trunc", "frac", "neg", "nan_to_num"}
    for k, shape in enumerate(SHAPES):
        arr = _values(UNARY[name], shape, k)
        rtol = 1e-5 if dtype == "float32" else 1e-8
        check(_eager(name), [arr], [dtype], exact=exact, rtol=rtol)


@pytest.mark.parametrize("dtype", ["int64", "uint8", "bool"])
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_int_bool(name, dtype):
    arr = np.array([[0, 1, 3], [2, 1, 0]])
    if dtype == "bool":
        arr = arr % 2
    check(_eager(name), [arr], [dtype], rtol=1e-5)


@pytest.mark.parametrize("name", ["isnan", "isinf", "isfinite", "isposinf", "isneginf"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bool"])
def test_predicates(name, dtype):
    arr = np.array([0.0, np.nan, np.inf, -np.inf, 1.5]) if dtype.startswith("float") else None
    if arr is None:
        arr = np.array([0, 1, 1, 0, 1])
    check(_eager(name), [arr], [dtype], exact=True)


def test_special_points_gradients():
    """abs at 0 has gradient 0, sqrt(0) an infinite one, nan_to_num zeros at non-finite values."""
    arr = np.array([0.0, 4.0, np.nan, np.inf, -np.inf])
    for name in ["abs", "sqrt", "nan_to_num", "sign", "frac", "sigmoid", "tanh", "exp"]:
        check(_eager(name), [arr], ["float32"], exact=name != "sigmoid" and name != "tanh")
    check(lambda m, x: x.nan_to_num(nan=1.0, posinf=2.0, neginf=-3.0), [arr], ["float64"])


@pytest.mark.parametrize("decimals", [0, 1, 2, -1])
def test_round_decimals(decimals):
    arr = np.array([1.25, -2.35, 0.5, 1.5, 2.5, 123.456, -0.049, 7.0])
    for dtype in ["float32", "float64"]:
        check(lambda m, x: m.round(x, decimals=decimals), [arr], [dtype], exact=True)
    check(lambda m, x: x.round(decimals=decimals), [np.array([1, 2])], ["int64"])


@pytest.mark.parametrize("eps", [None, 0.1, 0.0])
def test_logit_eps(eps):
    arr = np.array([0.0, 0.05, 0.1, 0.5, 0.9, 0.95, 1.0, -0.5, 1.5])
    check(lambda m, x: m.logit(x, eps), [arr], ["float64"])


# --- binary arithmetic -------------------------------------------------------------------------

A = np.array([[1.5, -2.0, 0.0, 7.0], [-3.5, 2.0, 5.0, -7.0], [0.5, -0.5, 2.0, 9.0]])
B = np.array([0.5, 2.0, -3.0, 2.0])
BINARY_CASES = [
    ("float32", "float32"),
    ("float64", "float64"),
    ("float32", "float64"),
    ("int64", "float32"),
]


def _b(name, **kw):
    return lambda m, x, y: getattr(m, name)(x, y, **kw)


BINARY = {
    "atan2": _b("atan2"),
    "arctan2": _b("arctan2"),
    "hypot": _b("hypot"),
    "logaddexp": _b("logaddexp"),
    "maximum": _b("maximum"),
    "minimum": _b("minimum"),
    "fmax": _b("fmax"),
    "fmin": _b("fmin"),
    "remainder": _b("remainder"),
    "fmod": _b("fmod"),
    "div_trunc": _b("div", rounding_mode="trunc"),
    "div_floor": _b("div", rounding_mode="floor"),
    "true_divide": _b("true_divide"),
    "add_alpha": _b("add", alpha=2),
    "sub_alpha": _b("sub", alpha=-3),
    "rsub": _b("rsub", alpha=2),
    "mul": _b("mul"),
    "pow": lambda m, x, y: m.pow(m.abs(x) + 0.5, y),
}


@pytest.mark.parametrize("dtypes", BINARY_CASES, ids="-".join)
@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary(name, dtypes):
    # Forward values are compared exactly in the tests below; a broadcast operand's gradient is
    # a sum whose order is the engine's, so gradients are compared with a tolerance here.
    check(BINARY[name], [A, B], list(dtypes), rtol=1e-5)
    check(BINARY[name], [A, np.array(2.5)], list(dtypes), rtol=1e-5)
    check(BINARY[name], [np.zeros((0, 4)), B], list(dtypes))


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_int_bool_and_errors(name):
    ints = np.array([[3, -7, 0, 4], [5, 6, -8, 1]]) if name != "pow" else np.array([[3, 2, 0]])
    for dtypes in [("int64", "int64"), ("bool", "bool"), ("uint8", "int64")]:
        divisor = np.array([2, -3, 1, 5]) if name != "pow" else np.array([1, 2, 0])
        if dtypes[0] == "uint8" or dtypes[0] == "bool":
            check(BINARY[name], [np.abs(ints) % 2, np.abs(divisor) % 2], list(dtypes))
        else:
            check(BINARY[name], [ints, divisor], list(dtypes))
    # mismatched shapes
    check(BINARY[name], [A, np.ones(3)], ["float32", "float32"])


def test_integer_division_by_zero():
    for name in ["div_trunc", "div_floor", "remainder", "fmod"]:
        check(BINARY[name], [np.array([1, 2]), np.array([1, 0])], ["int64", "int64"])
    check(lambda m, x: x // 0, [np.array([1, 2])], ["int64"])
    check(lambda m, x: x % 0, [np.array([1, 2])], ["int64"])
    check(lambda m, x: x / 0, [np.array([1, 2])], ["int64"])


def test_division_special_values():
    x = np.array([1.0, -1.0, 0.0, np.inf, -np.inf, np.nan, 5.5, -5.5, 1e30, 7.0])
    y = np.array([0.0, 0.0, 0.0, 2.0, -2.0, 1.0, np.inf, 2.0, 1e-30, -0.5])
    for name in ["div_trunc", "div_floor", "remainder", "fmod", "true_divide"]:
        check(BINARY[name], [x, y], ["float32", "float32"], exact=True, grad=False)
        check(BINARY[name], [x, y], ["float64", "float64"], exact=True, grad=False)


def test_max_min_ties_and_nan():
    x = np.array([1.0, 2.0, np.nan, 3.0, np.nan, -0.5])
    y = np.array([1.0, 3.0, 1.0, np.nan, np.nan, -0.5])
    for name in ["maximum", "minimum", "fmax", "fmin"]:
        check(BINARY[name], [x, y], ["float32", "float32"], exact=True)


@pytest.mark.parametrize("alpha", [2, 0.5, True, -1])
def test_alpha_checks(alpha):
    for dtypes in [("int64", "int64"), ("bool", "bool"), ("float32", "int64")]:
        arrs = [np.array([1, 0, 1]), np.array([0, 1, 1])]
        for name in ["add", "sub", "rsub"]:
            check(_b(name, alpha=alpha), arrs, list(dtypes), rtol=1e-5)
    check(lambda m, x: m.rsub(x, 2), [np.array([1.0, 2.0])], ["float32"], exact=True)


def test_division_operators_and_not_implemented_derivatives():
    x, y = np.array([1.5, -2.0, 0.0, 7.0]), np.array([0.5, 2.0, 3.0, -2.0])

    def fwd(expr):
        def fn(m, a, b):
            out = expr(a, b)
            return [out, grad_fn_name(out), out.requires_grad]

        return fn

    for expr in [
        lambda a, b: a // b,
        lambda a, b: a // 2,
        lambda a, b: 2 // a,
        lambda a, b: a % b,
        lambda a, b: a % 2,
        lambda a, b: 2 % a,
        lambda a, b: 2 / a,
        lambda a, b: a / 2,
        lambda a, b: a.fmod(2.5),
    ]:
        both(
            lambda m, expr=expr: fwd(expr)(
                m, _tensor(m, x, "float32", True), _tensor(m, y, "float32")
            )
        )
        both(lambda m, e=expr: _run(m, lambda m, a, b: e(a, b), [x, y], ["float32", "float32"]))


def test_backward_twice():
    """Whether a second backward raises depends on what PyTorch saves."""
    ops = [
        lambda m, x, y: x.sqrt(),
        lambda m, x, y: x.sign(),
        lambda m, x, y: x.floor(),
        lambda m, x, y: m.remainder(x, 2),
        lambda m, x, y: m.fmod(x, y),
        lambda m, x, y: m.lerp(x, y, 0.3),
        lambda m, x, y: m.lerp(x, y, y),
        lambda m, x, y: m.clamp(x, 0, 1),
        lambda m, x, y: m.clamp(x, min=y),
        lambda m, x, y: m.where(x > 1, x, y),
        lambda m, x, y: m.addcmul(x, x, y),
        lambda m, x, y: m.div(x, y, rounding_mode="floor"),
        lambda m, x, y: m.maximum(x, y),
        lambda m, x, y: x.add(y, alpha=2),
        lambda m, x, y: x.nan_to_num(),
        lambda m, x, y: x.frac(),
    ]

    def run(m, op):
        x = m.tensor([1.5, 2.0, 3.0], requires_grad=True)
        y = m.tensor([0.5, 2.0, 4.0], requires_grad=True)
        out = op(m, x, y).sum()
        out.backward()
        out.backward()
        return x.grad

    for op in ops:
        both(lambda m, op=op: run(m, op))


# --- clamp, lerp, addcmul, addcdiv, where -------------------------------------------------------

X = np.array([[-1.0, 0.0, 0.5, 1.0, 2.0, np.nan], [3.0, -0.5, 0.25, 1.0, 0.0, -3.0]])
LO = np.array([0.0, 0.0, 1.0, 1.0, 3.0, 0.0])
HI = np.array([[1.0], [0.5]])


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_clamp(dtype):
    x = X if dtype != "int64" else np.nan_to_num(X).astype(np.int64)
    lo, hi = LO, HI
    for fn in [
        lambda m, t: t.clamp(0, 1),
        lambda m, t: t.clamp(min=0),
        lambda m, t: t.clamp(max=0.5),
        lambda m, t: m.clip(t, -0.5, 1),
        lambda m, t: m.clamp_min(t, 0),
        lambda m, t: m.clamp_max(t, 1),
        lambda m, t: t.clamp(2, 1),
        lambda m, t: t.clamp(),
        lambda m, t: m.clamp(t, 0, m.tensor(1.0)),
        lambda m, t: m.clamp(t, m.tensor(0.0), 1.0),
    ]:
        check(fn, [x], [dtype], exact=True)
    for fn in [
        lambda m, t, a, b: t.clamp(a, b),
        lambda m, t, a, b: t.clamp(min=a),
        lambda m, t, a, b: t.clamp(max=b),
        lambda m, t, a, b: m.clamp(t, b, a),
        lambda m, t, a, b: m.clamp_min(t, a),
        lambda m, t, a, b: m.clamp_max(t, b),
    ]:
        check(fn, [x, lo.astype(x.dtype), hi.astype(x.dtype)], [dtype] * 3, exact=True)


def test_lerp():
    x, y = A, np.array([2.0, -1.0, 0.5, 10.0])
    for w in [0.3, 0.75, -0.2, 2]:
        for dt in ["float32", "float64"]:
            check(lambda m, a, b, w=w: m.lerp(a, b, w), [x, y], [dt, dt], rtol=1e-5)
    weight = np.array([0.0, 0.25, 0.5, 0.75])
    for dt in ["float32", "float64"]:
        check(lambda m, a, b, c: a.lerp(b, c), [x, y, weight], [dt] * 3, rtol=1e-5)
    check(lambda m, a, b: m.lerp(a, b, 0.5), [x, y], ["float32", "float64"])
    check(lambda m, a, b, c: m.lerp(a, b, c), [x, y, weight], ["float32", "float32", "int64"])
    check(lambda m, a, b: m.lerp(a, b, 0.5), [x, y], ["int64", "int64"])
    check(lambda m, a, b, c: m.lerp(a, b, c), [x, y, weight], ["int32"] * 3)


@pytest.mark.parametrize("name", ["addcmul", "addcdiv"])
def test_addcmul_addcdiv(name):
    t1, t2 = np.array([[1.0], [2.0], [-3.0]]), np.array([0.5, 2.0, -4.0, 1.0])
    for value in [1, 0.5, -2]:
        for dts in [["float32"] * 3, ["float64"] * 3, ["float32", "float64", "float32"]]:
            check(
                lambda m, a, b, c, v=value: getattr(m, name)(a, b, c, value=v),
                [A, t1, t2],
                dts,
                rtol=1e-5,
            )
    check(lambda m, a, b, c: getattr(m, name)(a, b, c, value=2), [A, t1, t2], ["int64"] * 3)
    check(lambda m, a, b, c: getattr(a, name)(b, c), [A, t1, t2], ["float32", "int64", "int64"])
    check(lambda m, a, b: getattr(m, name)(a, b, 2.0), [A, t1], ["float32"] * 2)


def test_where():
    cond = np.array([[True, False, True, False]])
    for fn, dts in [
        (lambda m, c, x, y: m.where(c, x, y), ["bool", "float32", "float32"]),
        (lambda m, c, x, y: m.where(c, x, y), ["bool", "float32", "float64"]),
        (lambda m, c, x, y: m.where(c, x, y), ["bool", "int64", "float32"]),
        (lambda m, c, x, y: x.where(c, y), ["bool", "float64", "float64"]),
        (lambda m, c, x, y: m.where(c, x, 2.5), ["bool", "float32", "float32"]),
        (lambda m, c, x, y: m.where(c, 2, y), ["bool", "float32", "float32"]),
        (lambda m, c, x, y: m.where(c, 1, 2), ["bool", "float32", "float32"]),
        (lambda m, c, x, y: m.where(c, 1.0, 2), ["bool", "float32", "float32"]),
        (lambda m, c, x, y: m.where(c, x, y), ["int64", "float32", "float32"]),
        (lambda m, c, x, y: m.where(c, x), ["bool", "float32", "float32"]),
    ]:
        check(fn, [cond, A, B], dts, exact=True)
    # A uint8 condition warns (PyTorch warns again in backward, which leafgrad does not).
    check(
        lambda m, c, x, y: m.where(c, x, y),
        [cond, A, B],
        ["uint8", "float32", "float32"],
        grad=False,
        exact=True,
    )
    check(lambda m, c, x, y: m.where(c, x, y), [cond, A, np.ones(3)], ["bool", "float32"] * 2)


def test_where_nonzero():
    for arr, dt in [
        (np.array([[1, 0, 2], [0, 0, 3]]), "int64"),
        (np.array([True, False, True]), "bool"),
        (np.array([0.0, 1.5]), "float32"),
        (np.zeros((0, 2)), "float32"),
    ]:
        check(lambda m, c: m.where(c), [arr], [dt], grad=False, exact=True)


# --- comparisons, logic, bitwise --------------------------------------------------------------


CMP = ["eq", "ne", "lt", "le", "gt", "ge", "greater", "greater_equal", "less", "less_equal"]
CMP += ["not_equal"]


@pytest.mark.parametrize("name", CMP)
def test_comparisons(name):
    a = np.array([[1.0, 2.0, np.nan], [3.0, -1.0, 2.0]])
    b = np.array([1.0, 3.0, np.nan])
    for dts in [("float32", "float32"), ("int64", "float64"), ("bool", "int64")]:
        check(_b(name), [a if dts[0] != "bool" else a > 1, b], list(dts), exact=True)
        check(lambda m, x, y: getattr(x, name)(2.5), [a, b], list(dts), exact=True)


@pytest.mark.parametrize("name", ["logical_and", "logical_or", "logical_xor"])
def test_logical(name):
    a, b = np.array([[0.0, 1.5, np.nan], [0.0, 0.0, -2.0]]), np.array([1, 0, 3])
    for dts in [("float32", "int64"), ("bool", "bool"), ("int64", "float64")]:
        check(_b(name), [a, b], list(dts), exact=True)
    check(lambda m, x: getattr(m, name)(x, 1), [a], ["float32"])
    check(lambda m, x: m.logical_not(x), [a], ["float32"], exact=True)


BITWISE = ["bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift", "bitwise_right_shift"]


@pytest.mark.parametrize("name", BITWISE)
def test_bitwise(name):
    a = np.array([[3, -7, 0, 127], [1, 2, -128, 5]])
    b = np.array([1, 2, 70, -1])
    for dts in [("int64", "int64"), ("int8", "int8"), ("int32", "int64"), ("bool", "bool")]:
        check(
            _b(name),
            [a if dts[0] != "bool" else a > 0, b if dts[1] != "bool" else b > 0],
            list(dts),
            exact=True,
        )
    for dts in [("uint8", "uint8")]:
        check(_b(name), [np.abs(a) % 256, np.array([1, 2, 9, 7])], list(dts), exact=True)
    check(_b(name), [a, b], ["float32", "int64"])
    check(lambda m, x: getattr(m, name)(x, 2), [a], ["int64"], exact=True)
    check(lambda m, x: getattr(m, name)(x, 2.5), [a], ["int64"])


def test_operators():
    a, b = np.array([[3, -7, 0, 12], [1, 2, -8, 5]]), np.array([1, 2, 3, 2])
    for op in [
        lambda m, x, y: x & y,
        lambda m, x, y: x | y,
        lambda m, x, y: x ^ y,
        lambda m, x, y: x << y,
        lambda m, x, y: x >> y,
        lambda m, x, y: ~x,
        lambda m, x, y: x // y,
        lambda m, x, y: x % y,
        lambda m, x, y: abs(x),
        lambda m, x, y: 5 & x,
        lambda m, x, y: 5 | x,
        lambda m, x, y: 5 ^ x,
        lambda m, x, y: 2 << y,
        lambda m, x, y: 64 >> y,
        lambda m, x, y: 7 // y,
        lambda m, x, y: 7 % y,
        lambda m, x, y: x & True,
    ]:
        for dts in [("int64", "int64"), ("int32", "int32"), ("bool", "bool"), ("float32",) * 2]:
            arrs = [a, b] if dts[0] != "bool" else [a > 0, b > 1]
            check(op, arrs, list(dts), exact=True)


def test_isclose_allclose_equal():
    a = np.array([1.0, 1.0 + 1e-6, np.nan, np.inf, 2.0, 0.0])
    b = np.array([1.0, 1.0, np.nan, np.inf, 2.1, 1e-9])
    for dt in ["float32", "float64"]:
        check(_b("isclose"), [a, b], [dt, dt], exact=True)
        check(_b("isclose", equal_nan=True), [a, b], [dt, dt], exact=True)
        check(_b("isclose", rtol=0.1, atol=0), [a, b], [dt, dt], exact=True)
        check(_b("isclose", rtol=0, atol=0), [a, b], [dt, dt], exact=True)
        check(_b("allclose"), [a, b], [dt, dt])
        check(_b("allclose", equal_nan=True), [a[:2], b[:2]], [dt, dt])
        check(_b("equal"), [a, a], [dt, dt])
        check(_b("equal"), [a[:2], a[:2]], [dt, dt])
        check(_b("equal"), [a[:2], b[:2]], [dt, dt])
    check(_b("isclose"), [a, b], ["float32", "float64"])
    check(_b("isclose"), [np.array([1, 2]), np.array([1, 3])], ["int64", "int64"], exact=True)
    check(_b("equal"), [a[:2], a[:3]], ["float32", "float32"])
    check(_b("equal"), [a[:2], a[:2]], ["float32", "float64"])


def test_tensor_only_arguments():
    for name in ["atan2", "hypot", "logaddexp", "maximum", "fmin", "logical_and", "isclose"]:
        check(lambda m, x, n=name: getattr(m, n)(x, 2), [A], ["float32"])


def test_jit_elementwise():
    """The forwards and the recorded backward run under jax.jit with tracers."""
    import jax

    def f(data):
        x = lg.Tensor._make(data, lg.float32, lg.device("cpu"), requires_grad=True)
        y = lg.clamp(x, 0, 1) + lg.where(x > 0, x.sqrt(), x) + lg.maximum(x, x * 2)
        y = y + lg.div(x, 2.0, rounding_mode="floor") + x.logit(0.1) + lg.lerp(x, x * 3, 0.3)
        y.sum().backward()
        return y._data, x.grad._data

    data = np.array([0.5, -1.0, 2.0, 0.0], np.float32)
    out, grad = jax.jit(f)(data)
    ref_out, ref_grad = f(data)
    np.testing.assert_allclose(np.asarray(out), np.asarray(ref_out), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(grad), np.asarray(ref_grad), rtol=1e-6)
    t = torch.tensor(data, requires_grad=True)
    ty = torch.clamp(t, 0, 1) + torch.where(t > 0, t.sqrt(), t) + torch.maximum(t, t * 2)
    ty = ty + torch.div(t, 2.0, rounding_mode="floor") + t.logit(0.1) + torch.lerp(t, t * 3, 0.3)
    ty.sum().backward()
    np.testing.assert_allclose(np.asarray(out), ty.detach().numpy(), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(grad), t.grad.numpy(), rtol=1e-5)


@pytest.mark.parametrize("name", ["erf", "erfc", "erfinv", "lgamma", "digamma", "logit", "round"])
def test_real_only_kernels_refuse_complex(name):
    """PyTorch's CPU kernels of these have no complex version; the error names the kernel."""
    both(lambda m: getattr(m, name)(m.ones(2, dtype=m.complex64)))
    both(lambda m: getattr(m.ones(2, dtype=m.complex128), name)())


def test_round_with_decimals_refuses_complex():
    both(lambda m: m.round(m.ones(2, dtype=m.complex64), decimals=1))


@pytest.mark.parametrize("op", ["addcmul", "addcdiv"])
@pytest.mark.parametrize("value", [1.0, 0.3])
def test_addc_formulas_round_in_the_tensors_dtypes(op, value):
    """AddcmulBackward0/AddcdivBackward0 compute ``tensor2 * value`` (``value / tensor2``) in
    the tensor's own dtype: a float32 divisor of a float64 result rounds as float32 (fuzz:
    0-d operands, where the result dtype is float64)."""

    def fn(m):
        x = m.tensor(-0.1875, dtype=m.float32)
        t1 = m.tensor(0.3, dtype=m.float64, requires_grad=True)
        t2 = m.tensor(0.19, dtype=m.float32, requires_grad=True)
        out = getattr(m, op)(x, t1, t2, value=value)
        out.backward()
        return out, t1.grad, t2.grad

    both(fn, rtol=0, atol=0)


def test_nan_to_num_gradient_is_a_product():
    """NanToNumBackward0 is ``grad * isfinite(self)``: a NaN gradient at an infinity stays NaN."""

    def fn(m):
        x = m.tensor([float("nan"), float("inf"), 1.0, -float("inf")], requires_grad=True)
        x.nan_to_num(1.0, 2.0, -2.0).backward(m.tensor([float("nan"), 1.0, float("nan"), 2.0]))
        return x.grad

    both(fn)
