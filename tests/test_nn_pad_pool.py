"""Differential tests of F.pad, 3-d/adaptive/Lp pooling, local response norm, conv_transpose3d,
channel dropouts and instance_norm with running statistics, against torch."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import both, same

f32, f64 = "float32", "float64"


def F(m):
    return m.nn.functional


def _arr(shape, dtype, seed, kind="randn"):
    rng = np.random.default_rng(seed)
    if kind == "int":
        return rng.integers(-5, 5, size=shape).astype(dtype)
    if kind == "ties":
        return rng.integers(0, 3, size=shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def differential(op, specs, *, exact=False, grads=True, grad_exact=False, rtol=None, atol=None):
    """``op(m, *tensors)`` in both libraries from the same inputs: results, grad_fn names and the
    gradients of a weighted sum of the first output. ``specs``: (shape, dtype, requires_grad
    [, kind]) per input."""

    def fn(m):
        ts = []
        for i, (shape, dt, rg, *kind) in enumerate(specs):
            ts.append(m.tensor(_arr(shape, dt, i, *kind), dtype=getattr(m, dt), requires_grad=rg))
        out = op(m, *ts)
        first = out[0] if isinstance(out, tuple) else out
        result = [out]
        if grads and first.requires_grad:
            w = m.tensor(_arr(tuple(first.shape), str(first.dtype).split(".")[-1], 99))
            (first * w).sum().backward()
            result.append([t.grad for t in ts if t.requires_grad])
        return result

    kw = {} if rtol is None else {"rtol": rtol, "atol": atol}
    t, g = both(fn, compare=False)
    same(t[0], g[0], exact=exact, **kw)
    same(t[1:], g[1:], exact=grad_exact, **kw)


def alternate(cases):
    return [
        pytest.param(c, (f32, f64)[i % 2], id=f"{i}-{(f32, f64)[i % 2]}")
        for i, c in enumerate(cases)
    ]


# --- F.pad ---------------------------------------------------------------------------------------

PAD_CASES = [
    ((2, 3, 5), (1, 2), "constant", 0.5),
    ((2, 3, 4, 5), (1, -2, 0, 3), "constant", None),
    ((4,), (-1, -1), "constant", None),
    ((), (), "constant", None),
    ((2, 0, 3), (1, 1, 0, 1), "constant", 2.0),
    ((2, 3, 5), (2, 3), "reflect", None),
    ((3, 5), (-1, 2), "reflect", None),
    ((2, 3, 4, 5), (1, 2, 3, 1), "reflect", None),
    ((2, 3, 4, 5, 3), (1, 2, 1, 0, 2, 1), "reflect", None),
    ((3, 4, 5), (1, 2, 3, 1), "replicate", None),
    ((2, 3, 4), (3, -1), "replicate", None),
    ((1, 2, 3, 4, 5), (1, 2, 1, 0, 4, 1), "replicate", 0),
    ((2, 3, 5), (1, 2), "circular", None),
    ((2, 3, 4, 5), (2, 1, -1, 3), "circular", None),
    ((2, 3, 2, 3), (1, 2, 1, 0, 2, 1), "circular", None),
    ((0, 3, 4), (1, 1), "reflect", None),
]


@pytest.mark.parametrize(("case", "dt"), alternate(PAD_CASES))
def test_pad(case, dt):
    shape, p, mode, value = case
    differential(lambda m, x: F(m).pad(x, p, mode=mode, value=value), [(shape, dt, True)])


@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
def test_pad_int(mode):
    differential(lambda m, x: F(m).pad(x, (1, 2), mode=mode), [((2, 3, 4), "int64", False, "int")])


def test_pad_int_value_and_bool():
    differential(lambda m, x: F(m).pad(x, (1, 2), value=-2.7), [((2, 4), "int64", False, "int")])
    both(lambda m: F(m).pad(m.tensor([[True, False]]), (1, 1), value=2))


PAD_ERRORS = [
    ((2, 3, 4, 5), (1, 2, 3), "constant", None),
    ((2, 3, 4, 5), (1,) * 10, "constant", None),
    ((2, 3, 4), (1, 1), "foo", None),
    ((2, 3, 4), (1, 1), None, None),
    ((2, 3, 4), (1, 1.5), "constant", None),
    ((2, 3, 4), (1, 1), "reflect", 1.0),
    ((2, 3, 7), (7, 2), "reflect", None),
    ((2, 3, 4, 5), (1, 2, 1, 4), "reflect", None),
    ((2, 3, 3, 4, 5), (1, 1, 1, 1, 3, 1), "reflect", None),
    ((5,), (1, 2), "reflect", None),
    ((3, 3, 3), (1, 1, 1, 1, 1, 1), "replicate", None),
    ((2, 3, 0), (1, 1), "reflect", None),
    ((2, 3, 0, 4), (1, 1, 1, 1), "replicate", None),
    ((2, 3, 3), (-3, -1), "reflect", None),
    ((2, 3, 3, 3), (-3, -1, -3, -1), "replicate", None),
    ((2, 3, 3, 3), (-3, -1, -3, -1), "reflect", None),
    ((2, 3, 3, 3, 3), (-3, -1, -3, -1, -2, -2), "reflect", None),
    ((2, 3, 7), (8, 2), "circular", None),
    ((2, 3, 3), (-2, -2), "circular", None),
    ((2, 3), (-1, -3, 0, 0), "constant", None),
    ((), (1, 1), "constant", None),
]


@pytest.mark.parametrize("case", PAD_ERRORS)
def test_pad_errors(case):
    shape, p, mode, value = case
    both(lambda m: F(m).pad(m.zeros(shape), p, mode, value))


def test_pad_dtype_errors_and_backward_twice():
    x = ((2, 3, 4), "bool", False)
    for mode in ("reflect", "replicate"):
        both(lambda m, mode=mode: F(m).pad(m.zeros(2, 3, 4, dtype=m.bool), (1, 1), mode=mode))
    del x

    def twice(m, mode):
        x = m.ones(2, 3, requires_grad=True)
        y = F(m).pad(x, (1, 1), mode=mode).sum()
        y.backward()
        y.backward()
        return x.grad

    for mode in ("constant", "reflect", "replicate"):
        both(lambda m, mode=mode: twice(m, mode))


def test_pad_circular_graph():
    def fn(m):
        x = m.ones(2, 7, requires_grad=True)
        g = F(m).pad(x, (1, 2), mode="circular").grad_fn
        names = []
        stack = [g]
        while stack:  # the node names, depth first
            n = stack.pop()
            if n is not None:
                names.append(type(n).__name__)
                stack.extend(f for f, _ in n.next_functions)
        return names

    both(fn)


# --- 3-d pooling ---------------------------------------------------------------------------------

MAX3D = [
    ((2, 3, 5, 6, 7), {"kernel_size": 2}, "randn"),
    ((3, 5, 6, 7), {"kernel_size": (3, 2, 2), "stride": (2, 1, 2), "padding": 1}, "ties"),
    ((1, 2, 6, 6, 6), {"kernel_size": 3, "dilation": 2, "ceil_mode": True, "stride": 2}, "ties"),
    ((2, 2, 5, 5, 5), {"kernel_size": 2, "stride": 2, "ceil_mode": True, "padding": 1}, "randn"),
]


@pytest.mark.parametrize(("case", "dt"), alternate(MAX3D))
def test_max_pool3d(case, dt):
    shape, kw, kind = case
    differential(
        lambda m, x: F(m).max_pool3d(x, return_indices=True, **kw),
        [(shape, dt, True, kind)],
        exact=True,
    )


AVG3D = [
    ((2, 3, 5, 6, 7), {"kernel_size": 2}),
    ((3, 5, 6, 7), {"kernel_size": (3, 2, 2), "stride": (2, 1, 2), "padding": 1}),
    ((1, 2, 6, 6, 6), {"kernel_size": 3, "padding": 1, "count_include_pad": False}),
    ((2, 2, 5, 5, 5), {"kernel_size": 2, "stride": 2, "ceil_mode": True, "padding": 1}),
    ((1, 2, 5, 5, 5), {"kernel_size": 3, "stride": 2, "divisor_override": 5}),
]


@pytest.mark.parametrize(("case", "dt"), alternate(AVG3D))
def test_avg_pool3d(case, dt):
    shape, kw = case
    differential(lambda m, x: F(m).avg_pool3d(x, **kw), [(shape, dt, True)])


def test_avg_pool3d_int64():
    differential(
        lambda m, x: F(m).avg_pool3d(x, 2, padding=1), [((1, 2, 4, 4, 4), "int64", False, "int")]
    )


POOL3D_ERRORS = [
    lambda m: F(m).max_pool3d(m.zeros(3, 4, 5), 2),
    lambda m: F(m).max_pool3d(m.zeros(2, 3, 1, 4, 5), 2),
    lambda m: F(m).max_pool3d(m.zeros(2, 3, 4, 4, 5), 2, padding=2),
    lambda m: F(m).max_pool3d(m.zeros(2, 3, 4, 4, 5), 2, dilation=0),
    lambda m: F(m).max_pool3d(m.zeros(2, 3, 4, 4, 5), 2, stride=0),
    lambda m: F(m).max_pool3d(m.zeros(2, 0, 4, 4, 5), 2),
    lambda m: F(m).avg_pool3d(m.zeros(3, 4, 5), 2),
    lambda m: F(m).avg_pool3d(m.zeros(2, 3, 1, 4, 5), 2),
    lambda m: F(m).avg_pool3d(m.zeros(2, 3, 4, 4, 5), 2, divisor_override=0),
    lambda m: F(m).avg_pool3d(m.zeros(2, 0, 4, 4, 5), 2),
    lambda m: F(m).avg_pool3d(m.zeros(2, 3, 4, 4, 5, dtype=m.int32), 2),
    lambda m: F(m).adaptive_avg_pool3d(m.zeros(4, 5), 2),
    lambda m: F(m).adaptive_avg_pool3d(m.zeros(2, 3, 4, 5), (2, -1, 2)),
    lambda m: F(m).adaptive_avg_pool3d(m.zeros(2, 3, 4, 5, dtype=m.int64), 2),
    lambda m: F(m).adaptive_max_pool3d(m.zeros(4, 5), 2),
    lambda m: F(m).adaptive_max_pool3d(m.zeros(2, 3, 4, 5), (2, -1, 2)),
    lambda m: F(m).adaptive_max_pool3d(m.zeros(2, 3, 4, 5, dtype=m.int64), 2),
    lambda m: F(m).adaptive_max_pool3d(m.zeros(2, 0, 4, 5), 2),
    lambda m: F(m).adaptive_max_pool1d(m.zeros(4, 5, 6, 7), 2),
    lambda m: F(m).adaptive_max_pool1d(m.zeros(4, 5, dtype=m.int64), 2),
    lambda m: F(m).local_response_norm(m.zeros(4, 5), 2),
]


@pytest.mark.parametrize("fn", POOL3D_ERRORS)
def test_pool_errors(fn):
    both(fn)


ADAPTIVE = [
    ("adaptive_avg_pool3d", (2, 3, 5, 6, 7), (2, 3, 4)),
    ("adaptive_avg_pool3d", (3, 5, 6, 7), (None, 1, 3)),
    ("adaptive_avg_pool3d", (2, 3, 5, 6, 7), 1),
    ("adaptive_max_pool3d", (2, 3, 5, 6, 7), (2, 3, 4)),
    ("adaptive_max_pool3d", (3, 5, 6, 7), (3, None, 2)),
    ("adaptive_max_pool1d", (2, 3, 7), 3),
    ("adaptive_max_pool1d", (3, 8), 5),
]


@pytest.mark.parametrize(("case", "dt"), alternate(ADAPTIVE))
def test_adaptive(case, dt):
    name, shape, out = case
    kw = {"return_indices": True} if "max" in name else {}
    kind = "ties" if "max" in name else "randn"
    differential(
        lambda m, x: getattr(F(m), name)(x, out, **kw),
        [(shape, dt, True, kind)],
        exact="max" in name,
    )


# --- Lp pooling, local response norm, conv_transpose3d -------------------------------------------

LP = [
    ("lp_pool1d", (2, 3, 7), 2, 3, None, False),
    ("lp_pool1d", (3, 8), 3, 2, 1, True),
    ("lp_pool2d", (2, 3, 6, 5), 2, (2, 3), None, False),
    ("lp_pool2d", (3, 6, 5), 1.5, 2, (1, 2), True),
    ("lp_pool3d", (1, 2, 4, 5, 6), 2, 2, None, False),
    ("lp_pool2d", (2, 3, 6, 5), float("inf"), 2, None, False),
]


@pytest.mark.parametrize(("case", "dt"), alternate(LP))
def test_lp_pool(case, dt):
    name, shape, p, k, s, ceil = case
    kind = "randn" if float(p).is_integer() else "ties"  # fractional powers need x >= 0
    differential(lambda m, x: getattr(F(m), name)(x, p, k, s, ceil), [(shape, dt, True, kind)])


@pytest.mark.parametrize(
    ("case", "dt"), alternate([((2, 5, 7), 3), ((2, 6, 4, 5), 4), ((1, 4, 3, 2, 3), 2)])
)
def test_local_response_norm(case, dt):
    shape, size = case
    differential(
        lambda m, x: F(m).local_response_norm(x, size, 1e-2, 0.75, 2.0), [(shape, dt, True)]
    )


@pytest.mark.parametrize("dt", [f32, f64])
def test_conv_transpose3d(dt):
    differential(
        lambda m, x, w, b: F(m).conv_transpose3d(x, w, b, stride=2, padding=1, output_padding=1),
        [((1, 2, 3, 4, 3), dt, True), ((2, 3, 2, 3, 2), dt, True), ((3,), dt, True)],
        rtol=1e-5 if dt == f32 else 1e-12,
        atol=1e-5 if dt == f32 else 1e-12,
    )


# --- dropouts ------------------------------------------------------------------------------------

DROPOUTS = [
    ("dropout1d", (4, 6, 5), 0.3, {}),
    ("dropout1d", (6, 5), 0.5, {}),
    ("dropout2d", (3, 5, 4, 4), 0.4, {}),
    ("dropout2d", (3, 5, 4), 0.4, {}),
    ("dropout3d", (2, 5, 2, 3, 2), 0.6, {}),
    ("dropout3d", (5, 2, 3, 2), 0.2, {}),
    ("alpha_dropout", (4, 7), 0.3, {"training": True}),
    ("feature_alpha_dropout", (4, 7, 3), 0.3, {"training": True}),
    ("dropout2d", (3, 5, 4, 4), 1.0, {}),
    ("alpha_dropout", (4, 7), 1.0, {"training": True}),
    ("alpha_dropout", (4, 7), 0.3, {}),
]


@pytest.mark.parametrize(("case", "dt"), alternate(DROPOUTS))
def test_dropout_masks(case, dt):
    name, shape, p, kw = case

    def op(m, x):
        m.manual_seed(7)
        return getattr(F(m), name)(x, p, **kw)

    differential(op, [(shape, dt, True)], exact=True, grad_exact=True)


@pytest.mark.parametrize("name", ["dropout2d", "feature_alpha_dropout"])
def test_dropout_inplace(name):
    def fn(m):
        m.manual_seed(3)
        x = m.randn(3, 4, 5)
        y = getattr(F(m), name)(x, 0.5, True, True)
        return x, y is x

    both(fn)


DROPOUT_ERRORS = [
    lambda m: F(m).dropout1d(m.zeros(2, 3, 4, 5), 0.3),
    lambda m: F(m).dropout2d(m.zeros(2, 3), 1.5),
    lambda m: F(m).feature_alpha_dropout(m.zeros(3), 0.3, True),
    lambda m: F(m).alpha_dropout(m.zeros(3, dtype=m.int64), 0.3, True),
    lambda m: F(m).dropout1d(m.zeros(3, 4, dtype=m.int64), 0.3),
    lambda m: F(m).dropout3d(m.zeros(3), 0.3),
    # ATen's shortcuts (p 0 or 1, eval, empty) come before make_feature_noise's dims check
    lambda m: F(m).dropout2d(m.ones(3), 0.0),
    lambda m: F(m).dropout2d(m.ones(3), 1.0),
    lambda m: F(m).feature_alpha_dropout(m.ones(3)),
    lambda m: F(m).feature_alpha_dropout(m.ones(3), 1.0, True),
    lambda m: m.feature_dropout(m.ones(3), 1.0, True),
    lambda m: m.feature_dropout_(m.ones(3), 1.0, True),
    lambda m: F(m).dropout3d(m.ones(0), 0.5),
]


@pytest.mark.parametrize("fn", DROPOUT_ERRORS)
def test_dropout_errors(fn):
    both(fn)


# --- instance_norm with running statistics -------------------------------------------------------


@pytest.mark.parametrize(
    ("case", "dt"),
    alternate(
        [((2, 3, 4, 5), True, True), ((3, 2, 6), False, True), ((2, 3, 4, 2, 2), True, False)]
    ),
)
def test_instance_norm_running(case, dt):
    shape, use_input_stats, affine = case

    def fn(m):
        c = shape[1]
        x = m.tensor(_arr(shape, dt, 0), requires_grad=True)
        rm = m.tensor(_arr((c,), dt, 1))
        rv = m.tensor(np.abs(_arr((c,), dt, 2)) + 0.5)
        w = m.tensor(_arr((c,), dt, 3), requires_grad=True) if affine else None
        b = m.tensor(_arr((c,), dt, 4), requires_grad=True) if affine else None
        y = F(m).instance_norm(x, rm, rv, w, b, use_input_stats, 0.2, 1e-5)
        (y * m.tensor(_arr(shape, dt, 5))).sum().backward()
        grads = [t.grad for t in (x, w, b) if t is not None]
        return y, rm, rv, rm._version, grads

    both(fn)


INSTANCE_ERRORS = [
    lambda m: F(m).instance_norm(m.zeros(2, 3, 4), None, None, use_input_stats=False),
    lambda m: F(m).instance_norm(m.zeros(2, 3, 4), m.zeros(4), m.ones(3)),
    lambda m: F(m).instance_norm(m.zeros(2, 3, 4), m.zeros(3), None),
    lambda m: F(m).instance_norm(m.zeros(2, 3, 1), m.zeros(3), m.ones(3)),
]


@pytest.mark.parametrize("fn", INSTANCE_ERRORS)
def test_instance_norm_errors(fn):
    both(fn)
