"""Differential tests of nn.functional's convolution, pooling, interpolation and normalisation."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import torch
from conftest import both, lg, same

from leafgrad.nn import _conv_pool


def F(m):
    """``nn.functional`` of either library (leafgrad's layers may not be re-exported yet)."""
    if m is torch:
        return torch.nn.functional

    class _NS:
        def __getattr__(self, name):
            return getattr(lg.nn.functional, name, None) or getattr(_conv_pool, name)

    return _NS()


def _arr(shape, dtype, seed, kind="randn"):
    rng = np.random.default_rng(seed)
    if kind == "int":
        return rng.integers(-5, 5, size=shape).astype(dtype)
    if kind == "ties":  # few distinct values: max-pool ties
        return rng.integers(0, 3, size=shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def differential(op, specs, *, exact=False, grads=True, rtol=None, atol=None, grad_exact=False):
    """Run ``op(m, *tensors)`` in both libraries from the same inputs; compare the results and
    the gradients of a weighted sum of the first output.

    ``specs``: ``(shape, numpy dtype, requires_grad[, kind])`` per input, or None for an absent one.
    ``exact`` asks for bit-equal results; gradients are compared at conftest's tolerance unless
    ``grad_exact``: where several outputs add into one input element (overlapping windows,
    upsampling), XLA's transposed gathers sum them in an order PyTorch's kernels do not share.
    """

    def fn(m):
        ts = []
        for i, s in enumerate(specs):
            if s is None:
                ts.append(None)
                continue
            shape, dt, rg, *kind = s
            # bfloat16 arrays do not convert to torch: make float32 and let tensor() round
            arr = _arr(shape, "float32" if dt in ("float16", "bfloat16") else dt, i, *kind)
            ts.append(m.tensor(arr, dtype=getattr(m, dt), requires_grad=rg))
        out = op(m, *ts)
        first = out[0] if isinstance(out, tuple) else out
        result = [out]
        if grads and first.requires_grad:
            w = m.tensor(_arr(tuple(first.shape), str(first.dtype).split(".")[-1], 99))
            (first * w).sum().backward()
            result.append([t.grad for t in ts if t is not None and t.requires_grad])
        return result

    kw = {} if rtol is None else {"rtol": rtol, "atol": atol}
    t, g = both(fn, compare=False)
    same(t[0], g[0], exact=exact, **kw)
    same(t[1:], g[1:], exact=grad_exact, **kw)


f32, f64 = "float32", "float64"


def alternate(cases):
    """Each case once, in float32 and float64 by turns: every compile costs ~1 s on a busy CPU."""
    return [
        pytest.param(c, (f32, f64)[i % 2], id=f"{i}-{(f32, f64)[i % 2]}")
        for i, c in enumerate(cases)
    ]


# --- convolution ---------------------------------------------------------------------------------

CONV_CASES = [
    # (function, input shape, weight shape, bias, kwargs)
    ("conv1d", (2, 4, 9), (6, 4, 3), True, {}),
    ("conv1d", (4, 9), (6, 2, 3), False, {"groups": 2, "stride": 2, "padding": 1}),
    ("conv1d", (2, 4, 9), (6, 4, 3), True, {"padding": "same", "dilation": 2}),
    ("conv2d", (2, 3, 7, 6), (4, 3, 3, 2), True, {"stride": (2, 1), "padding": (1, 0)}),
    ("conv2d", (3, 7, 6), (4, 3, 3, 3), False, {"padding": "same"}),
    ("conv2d", (2, 4, 7, 6), (4, 2, 3, 3), True, {"groups": 2, "dilation": 2, "padding": "valid"}),
    ("conv2d", (0, 3, 5, 5), (4, 3, 3, 3), True, {}),
    ("conv3d", (1, 2, 4, 5, 5), (3, 2, 2, 3, 3), True, {"padding": 1, "stride": 2}),
    (
        "conv_transpose1d",
        (2, 4, 5),
        (4, 3, 3),
        True,
        {"stride": 2, "padding": 1, "output_padding": 1},
    ),
    (
        "conv_transpose2d",
        (2, 4, 5, 4),
        (4, 2, 3, 2),
        True,
        {"stride": (2, 3), "groups": 2, "dilation": (1, 2)},
    ),
    ("conv_transpose2d", (4, 5, 4), (4, 3, 3, 3), False, {"padding": 1}),
    # XLA's CPU compiler aborted the process on these as base-dilated convolutions
    ("conv_transpose2d", (1, 1, 3, 2), (1, 2, 2, 3), False, {"stride": 2, "padding": 1}),
    ("conv_transpose2d", (1, 1, 1, 2), (1, 2, 3, 3), True, {"stride": 2, "dilation": 2}),
    ("conv_transpose1d", (1, 1, 1), (1, 1, 3), False, {"stride": 3, "output_padding": 2}),
    ("conv_transpose3d", (1, 1, 2, 1, 2), (1, 1, 3, 2, 3), False, {"stride": (2, 1, 3)}),
]


@pytest.mark.every_case
@pytest.mark.parametrize("padding", [0, 1])
@pytest.mark.parametrize("stride", [1, 2, 3])
@pytest.mark.parametrize("shape", [(1, 1), (1, 3), (3, 2), (2, 5)])
@pytest.mark.parametrize("kernel", [(2, 2), (2, 3), (3, 1), (3, 3)])
def test_conv_transpose_small_inputs(padding, stride, shape, kernel):
    """Transposed convolutions of inputs about the size of their kernels, strided: values and
    gradients (XLA's CPU compiler aborted on some as base-dilated convolutions)."""
    if any((n - 1) * stride - 2 * padding + k <= 0 for n, k in zip(shape, kernel)):
        pytest.skip("no output (test_conv_errors has the error)")
    specs = [((1, 2) + shape, f64, True), ((2, 1) + kernel, f64, True)]
    differential(
        lambda m, x, w: F(m).conv_transpose2d(x, w, stride=stride, padding=padding),
        specs,
        rtol=1e-9,
        atol=1e-9,
    )


@pytest.mark.parametrize("case,dtype", alternate(CONV_CASES))
def test_conv(case, dtype):
    name, xs, ws, has_bias, kw = case
    cout = ws[1] * kw.get("groups", 1) if "transpose" in name else ws[0]
    specs = [(xs, dtype, True), (ws, dtype, True), ((cout,), dtype, True) if has_bias else None]
    differential(lambda m, x, w, b: getattr(F(m), name)(x, w, b, **kw), specs, rtol=1e-5, atol=1e-5)


def test_conv_graph():
    def fn(m):
        x = m.ones(3, 5, requires_grad=True)
        w = m.ones(2, 3, 2, requires_grad=True)
        y = F(m).conv1d(x, w)
        inner = y.grad_fn.next_functions[0][0]
        names = [type(n).__name__ for n, _ in inner.next_functions if n is not None]
        return type(y.grad_fn).__name__, type(inner).__name__, names, len(inner.next_functions)

    both(fn)


def test_conv_integer():
    differential(
        lambda m, x, w: F(m).conv2d(x, w, padding=1),
        [((1, 2, 4, 4), "int64", False, "int"), ((3, 2, 3, 3), "int64", False, "int")],
        exact=True,
    )


def test_conv_backward_twice():
    def fn(m):
        x = m.ones(1, 2, 4, requires_grad=True)
        y = F(m).conv1d(x, m.ones(1, 2, 2))
        y.sum().backward()
        y.sum().backward()

    both(fn)


CONV_ERRORS = [
    lambda m, F: F.conv2d(m.randn(3), m.randn(4, 3, 3, 3)),
    lambda m, F: F.conv1d(m.randn(2, 3, 8, 8), m.randn(4, 3, 3)),
    lambda m, F: F.conv2d(m.randn(2, 3, 8, 8), m.randn(4, 2, 3, 3)),
    lambda m, F: F.conv2d(m.randn(2, 3, 8, 8), m.randn(4, 3, 3, 3, dtype=m.float64)),
    lambda m, F: F.conv2d(m.randn(2, 3, 8, 8), m.randn(4, 3, 3, 3), m.randn(4, dtype=m.float64)),
    lambda m, F: F.conv2d(m.randn(2, 3, 8, 8), m.randn(4, 3, 3, 3), m.randn(5)),
    lambda m, F: F.conv2d(m.randn(2, 3, 8, 8), m.randn(4, 3, 3, 3), groups=2),
    lambda m, F: F.conv2d(m.randn(2, 3, 8, 8), m.randn(4, 3, 9, 9)),
    lambda m, F: F.conv2d(m.randn(2, 3, 8, 8), m.randn(4, 3, 3, 3), stride=2, padding="same"),
    lambda m, F: F.conv2d(m.randn(2, 3, 8, 8), m.randn(4, 3, 3, 3), padding="foo"),
    lambda m, F: F.conv2d(m.randn(2, 3, 8, 8), m.randn(4, 3, 3, 3), stride=(1, 1, 1)),
    lambda m, F: F.conv_transpose2d(m.randn(2, 3, 8, 8), m.randn(4, 3, 3, 3)),
    # the output size of transposed ones (JAX's padding error came through), 1-d as 2-d
    lambda m, F: F.conv_transpose1d(m.randn(1, 1, 1), m.randn(1, 2, 1), padding=1),
    lambda m, F: F.conv_transpose1d(m.randn(1, 1, 2), m.randn(1, 2, 1), padding=1),
    lambda m, F: F.conv_transpose2d(m.randn(1, 1, 1, 3), m.randn(1, 2, 1, 1), padding=1),
    lambda m, F: F.conv_transpose3d(m.randn(1, 1, 1, 3, 3), m.randn(1, 2, 1, 1, 1), padding=1),
    lambda m, F: F.conv_transpose2d(m.randn(1, 3), m.randn(1, 2, 1, 1), padding=1),
    lambda m, F: F.conv_transpose2d(m.randn(1, 1, 1, 3), m.randn(1, 2, 1, 1), m.randn(5)),
    lambda m, F: F.conv_transpose1d(m.randn(1, 1, 0), m.randn(1, 2, 1), m.randn(3)),
    # empty inputs other than of zero batch or channels
    lambda m, F: F.conv_transpose2d(m.randn(1, 1, 0, 3), m.randn(1, 2, 1, 1)),
    lambda m, F: F.conv_transpose1d(m.randn(1, 0), m.randn(1, 2, 1)),
    lambda m, F: F.conv_transpose3d(m.randn(1, 1, 0, 3, 3), m.randn(1, 2, 1, 1, 1)),
    lambda m, F: F.conv2d(m.randn(2, 3, 0, 3), m.randn(1, 3, 1, 1), padding=1),
    lambda m, F: F.conv1d(m.randn(1, 1, 0), m.randn(1, 1, 1), padding=1),
    lambda m, F: F.conv2d(m.randn(1, 1, 0, 3), m.randn(1, 1, 1, 1)),
    lambda m, F: F.conv_transpose2d(m.randn(0, 1, 3, 3), m.randn(1, 2, 1, 1), padding=1).shape,
]


@pytest.mark.parametrize("i", range(len(CONV_ERRORS)))
def test_conv_errors(i):
    both(lambda m: CONV_ERRORS[i](m, F(m)))


# --- normalisation -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "case,dtype",
    alternate([((2, 3, 5), (5,), True), ((4, 6), (4, 6), False), ((3, 2, 2, 3), (2, 3), True)]),
)
def test_layer_norm(case, dtype):
    shape, ns, affine = case
    specs = [(shape, dtype, True)] + ([(ns, dtype, True)] * 2 if affine else [None, None])
    differential(
        lambda m, x, w, b: F(m).layer_norm(x, ns, w, b, eps=1e-4), specs, rtol=1e-4, atol=1e-5
    )


@pytest.mark.parametrize("dtype", [f32, f64])
@pytest.mark.parametrize(
    "shape,g,affine", [((2, 6, 5), 3, True), ((3, 4), 2, False), ((2, 4, 3, 3), 1, True)]
)
def test_group_norm(shape, g, affine, dtype):
    c = shape[1]
    specs = [(shape, dtype, True)] + ([((c,), dtype, True)] * 2 if affine else [None, None])
    differential(lambda m, x, w, b: F(m).group_norm(x, g, w, b), specs, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize(
    "case,dtype",
    alternate(
        [
            ((4, 3), True),
            ((2, 3, 5), True),
            ((2, 3, 2, 3), True),
            ((4, 3), False),
            ((2, 3, 2, 3), False),
        ]
    ),
)
def test_batch_norm(case, dtype):
    shape, training = case
    c = shape[1]

    def op(m, x, w, b):
        rm = m.tensor(_arr((c,), dtype, 7))
        rv = m.tensor(np.abs(_arr((c,), dtype, 8)) + 0.5)
        v0 = rm._version
        out = F(m).batch_norm(x, rm, rv, w, b, training=training, momentum=0.3)
        return out, rm, rv, rm._version - v0

    specs = [(shape, dtype, True), ((c,), dtype, True), ((c,), dtype, True)]
    differential(op, specs, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("needed", ["both", "input", "bias"])
@pytest.mark.parametrize("input_rg,bias_rg", [(False, True), (True, False), (True, True)])
def test_group_norm_bias_without_weight(input_rg, bias_rg, needed):
    """PyTorch 2.13's NativeGroupNormBackward0 raises where it needs the bias's gradient and has
    no weight."""

    def fn(m):
        x = m.tensor(_arr((2, 4, 5), f64, 0), requires_grad=input_rg)
        b = m.tensor(_arr((4,), f64, 1), requires_grad=bias_rg)
        y = F(m).group_norm(x, 2, None, b).sum()
        wanted = {"both": [x, b], "input": [x], "bias": [b]}[needed]
        wanted = [t for t in wanted if t.requires_grad]
        return m.autograd.grad(y, wanted) if wanted else None

    both(fn)


def test_batch_norm_no_stats():
    differential(
        lambda m, x: F(m).batch_norm(x, None, None, training=True),
        [((3, 2, 4), f64, True)],
        rtol=1e-9,
        atol=1e-9,
    )


def test_instance_norm():
    def op(m, x, w, b):
        y = F(m).instance_norm(x, weight=w, bias=b)
        return y, type(y.grad_fn.next_functions[0][0]).__name__

    specs = [((2, 3, 5), f64, True), ((3,), f64, True), ((3,), f64, True)]
    differential(op, specs, rtol=1e-9, atol=1e-9)
    differential(
        lambda m, x: F(m).instance_norm(x), [((2, 3, 2, 2), f32, True)], rtol=1e-4, atol=1e-5
    )


NORM_ERRORS = [
    lambda m, F: F.layer_norm(m.randn(2, 3, 8), (7,)),
    lambda m, F: F.group_norm(m.randn(2, 3, 8, 8), 2),
    lambda m, F: F.batch_norm(m.randn(2, 3, 4), m.zeros(4), m.ones(4)),
    lambda m, F: F.batch_norm(m.randn(1, 3), None, None, training=True),
]


@pytest.mark.parametrize("i", range(len(NORM_ERRORS)))
def test_norm_errors(i):
    both(lambda m: NORM_ERRORS[i](m, F(m)))


def test_norm_backward_twice():
    def fn(m):
        x = m.ones(2, 3, requires_grad=True)
        y = F(m).layer_norm(x, (3,))
        y.sum().backward()
        y.sum().backward()

    both(fn)


# --- pooling -------------------------------------------------------------------------------------

MAX_POOL_CASES = [
    ("max_pool2d", (2, 3, 7, 6), {"kernel_size": 3}),
    ("max_pool2d", (3, 7, 6), {"kernel_size": (3, 2), "stride": (2, 1), "padding": 1}),
    ("max_pool2d", (1, 2, 7, 7), {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True}),
    ("max_pool2d", (1, 2, 8, 7), {"kernel_size": 2, "dilation": 2, "return_indices": True}),
    ("max_pool2d", (2, 2, 6, 6), {"kernel_size": 2, "stride": 1, "return_indices": True}),
    (
        "max_pool1d",
        (2, 3, 9),
        {"kernel_size": 3, "stride": 2, "padding": 1, "return_indices": True},
    ),
    ("max_pool1d", (3, 9), {"kernel_size": 4, "ceil_mode": True}),
    ("adaptive_max_pool2d", (2, 3, 7, 6), {"output_size": (3, 4), "return_indices": True}),
    ("adaptive_max_pool2d", (3, 5, 6), {"output_size": (5, None)}),
]


@pytest.mark.parametrize("kind", ["randn", "ties"])
@pytest.mark.parametrize("case,dtype", alternate(MAX_POOL_CASES))
def test_max_pool(case, kind, dtype):
    name, shape, kw = case
    # The max is gathered from the flat input at its index: one scatter-add in output order,
    # PyTorch's order, so even the gradients of overlapping windows are bit-equal.
    differential(
        lambda m, x: getattr(F(m), name)(x, **kw),
        [(shape, dtype, True, kind)],
        exact=True,
        grad_exact=True,
    )


def test_max_pool_integer():
    differential(
        lambda m, x: F(m).max_pool2d(x, 2, return_indices=True),
        [((1, 2, 4, 4), "int64", False, "int")],
        exact=True,
    )


AVG_POOL_CASES = [
    ("avg_pool2d", (2, 3, 7, 6), {"kernel_size": 3}),
    ("avg_pool2d", (3, 7, 6), {"kernel_size": (3, 2), "stride": (2, 1), "padding": 1}),
    (
        "avg_pool2d",
        (1, 2, 7, 7),
        {
            "kernel_size": 3,
            "stride": 2,
            "padding": 1,
            "ceil_mode": True,
            "count_include_pad": False,
        },
    ),
    ("avg_pool2d", (1, 2, 7, 7), {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True}),
    ("avg_pool2d", (1, 2, 6, 6), {"kernel_size": 2, "divisor_override": 3}),
    ("avg_pool1d", (2, 3, 9), {"kernel_size": 3, "stride": 2, "padding": 1}),
    ("avg_pool1d", (3, 9), {"kernel_size": 4, "ceil_mode": True, "count_include_pad": False}),
    ("adaptive_avg_pool2d", (2, 3, 7, 6), {"output_size": (3, 4)}),
    ("adaptive_avg_pool2d", (3, 5, 6), {"output_size": (5, None)}),
    ("adaptive_avg_pool2d", (2, 3, 5, 6), {"output_size": 1}),
    ("adaptive_avg_pool1d", (2, 3, 10), {"output_size": 4}),
    ("fold", (2, 12, 8), {"output_size": (4, 5), "kernel_size": 2, "stride": (2, 1)}),
    (
        "fold",
        (8, 9),
        {
            "output_size": (5, 4),
            "kernel_size": (2, 2),
            "padding": 1,
            "dilation": (2, 1),
            "stride": 2,
        },
    ),
    ("fold", (1, 18, 9), {"output_size": (5, 5), "kernel_size": (3, 3), "padding": 1, "stride": 2}),
]


@pytest.mark.parametrize("case,dtype", alternate(AVG_POOL_CASES))
def test_avg_pool(case, dtype):
    name, shape, kw = case
    differential(
        lambda m, x: getattr(F(m), name)(x, **kw),
        [(shape, dtype, True)],
        exact=True,
        grad_exact=True,
    )


POOL_ERRORS = [
    # torch.max_pool1d's own checks (not the 2-d pool's, which return_indices keeps)
    lambda m, F: F.max_pool1d(m.randn(1, 2, 5), 1, 1, 1, 2),
    lambda m, F: F.max_pool1d(m.randn(1, 2, 5, requires_grad=True), 2, 1, 2, 1),
    lambda m, F: F.max_pool1d(m.randn(1, 2, 5), 3, 1, 1, 0),
    lambda m, F: F.max_pool1d(m.randn(1, 2, 5), 3, 0, 1, 1),
    lambda m, F: F.max_pool1d(m.randn(1, 2, 5, requires_grad=True), 0, 1, 0, 1),
    lambda m, F: F.max_pool1d(m.randn(1, 2, 5), 3, 1, -1, 1),
    lambda m, F: F.max_pool1d(m.randn(1, 2, 1), 3, 1, 0, 1),
    lambda m, F: F.max_pool1d(m.randn(1, 2, 5), 1, 1, 1, 1, return_indices=True),
    lambda m, F: F.max_pool2d(m.randn(2, 3, 8, 8), 2, padding=2),
    lambda m, F: F.max_pool2d(m.randn(3), 2),
    lambda m, F: F.max_pool2d(m.randn(2, 3, 8, 8), 9),
    lambda m, F: F.avg_pool2d(m.randn(2, 3, 8, 8), 2, padding=2),
    lambda m, F: F.adaptive_avg_pool2d(m.randn(3), 2),
]


@pytest.mark.parametrize("i", range(len(POOL_ERRORS)))
def test_pool_errors(i):
    both(lambda m: POOL_ERRORS[i](m, F(m)))


def test_pool_backward_twice():
    def fn(m):
        x = m.ones(1, 2, 4, 4, requires_grad=True)
        y = F(m).max_pool2d(x, 2)
        y.sum().backward()
        y.sum().backward()

    both(fn)


# --- interpolation and unfold --------------------------------------------------------------------

INTERP_CASES = [
    ((2, 3, 4, 5), {"scale_factor": 2}),
    ((2, 3, 4, 5), {"size": (7, 3)}),
    ((1, 2, 5, 3), {"scale_factor": (1.7, 2.5)}),
    ((2, 3, 7), {"size": 10}),
    ((1, 1, 2, 3, 3), {"scale_factor": 1.5}),
    ((2, 3, 4, 5), {"scale_factor": 2, "mode": "bilinear"}),
    ((2, 3, 4, 5), {"size": (7, 3), "mode": "bilinear", "align_corners": True}),
    ((1, 2, 5, 3), {"scale_factor": (1.7, 0.6), "mode": "bilinear"}),
    ((1, 2, 5, 3), {"size": (1, 6), "mode": "bilinear", "align_corners": True}),
]


@pytest.mark.parametrize("case,dtype", alternate(INTERP_CASES))
def test_interpolate(case, dtype):
    shape, kw = case
    exact = kw.get("mode", "nearest") == "nearest"  # bilinear: PyTorch's kernel rounds otherwise
    differential(
        lambda m, x: F(m).interpolate(x, **kw),
        [(shape, dtype, True)],
        exact=exact,
        grad_exact=exact,
    )


@pytest.mark.parametrize("dtype", [f32, f64])
@pytest.mark.parametrize(
    "shape,kw",
    [
        ((2, 3, 5, 4), {"kernel_size": 2}),
        ((3, 5, 4), {"kernel_size": (2, 3), "padding": 1, "stride": 2, "dilation": (2, 1)}),
    ],
)
def test_unfold(shape, kw, dtype):
    differential(
        lambda m, x: F(m).unfold(x, **kw), [(shape, dtype, True)], exact=True, grad_exact=True
    )


INTERP_ERRORS = [
    # the 1-d check's message says "and output", the 2-d and 3-d ones "output"
    lambda m, F: F.interpolate(m.randn(1, 1, 1, 5), scale_factor=0.5),
    lambda m, F: F.interpolate(m.randn(1, 1, 5), scale_factor=0.1, mode="linear"),
    lambda m, F: F.interpolate(m.randn(1, 1, 2, 2, 2), scale_factor=0.4, mode="trilinear"),
    lambda m, F: F.interpolate(m.randn(1, 1, 3, 3), size=(0, 2), mode="bicubic"),
    lambda m, F: F.interpolate(m.randn(2, 3, 4, 4), mode="bilinear"),
    lambda m, F: F.interpolate(m.randn(2, 3, 4, 4), size=3, scale_factor=2),
    lambda m, F: F.interpolate(m.randn(2, 3, 4, 4), size=3, align_corners=True),
    lambda m, F: F.interpolate(m.randn(3, 4), size=3),
]


@pytest.mark.parametrize("i", range(len(INTERP_ERRORS)))
def test_interp_errors(i):
    both(lambda m: INTERP_ERRORS[i](m, F(m)))


# --- dtypes, graphs, padding='same', jit ---------------------------------------------------------

DTYPE_OPS = {
    "conv1d": lambda m, F, x, d: F.conv1d(x[0], m.ones(4, 8, 3).to(d)),
    "conv2d": lambda m, F, x, d: F.conv2d(x, m.ones(4, 3, 3, 3).to(d)),
    "conv_transpose2d": lambda m, F, x, d: F.conv_transpose2d(x, m.ones(3, 3, 3, 3).to(d)),
    "max_pool2d": lambda m, F, x, d: F.max_pool2d(x, 2),
    "avg_pool2d": lambda m, F, x, d: F.avg_pool2d(x, 2, divisor_override=3),
    "adaptive_avg_pool2d": lambda m, F, x, d: F.adaptive_avg_pool2d(x, 3),
    "layer_norm": lambda m, F, x, d: F.layer_norm(x, (8,)),
    "group_norm": lambda m, F, x, d: F.group_norm(x, 3),
    "batch_norm": lambda m, F, x, d: F.batch_norm(x, None, None, training=True),
    "nearest1d": lambda m, F, x, d: F.interpolate(x[0], scale_factor=2),
    "nearest2d": lambda m, F, x, d: F.interpolate(x, scale_factor=2),
    "bilinear": lambda m, F, x, d: F.interpolate(x, size=(3, 5), mode="bilinear"),
    "unfold": lambda m, F, x, d: F.unfold(x, 2),
}


@pytest.mark.parametrize("dtype", ["bool", "int32", "int64"])
@pytest.mark.parametrize("name", list(DTYPE_OPS))
def test_dtypes(name, dtype):
    """Integer and bool inputs: accepted (exact values) or refused with PyTorch's message."""

    def fn(m):
        x = m.tensor(_arr((2, 3, 8, 8), "float32", 3, "int")).to(getattr(m, dtype))
        return DTYPE_OPS[name](m, F(m), x, getattr(m, dtype))

    t, g = both(fn, compare=False)
    if not isinstance(t, BaseException) and hasattr(t, "dtype"):
        same(t, g, exact=True)


def test_conv_same_even_kernel():
    """Asymmetric 'same' padding: PyTorch pads the input on the right first (and warns)."""
    differential(
        lambda m, x, w, b: F(m).conv2d(x, w, b, padding="same"),
        [((2, 3, 5, 6), f64, True), ((4, 3, 2, 4), f64, True), ((4,), f64, True)],
        rtol=1e-9,
        atol=1e-9,
    )


GRAPH_OPS = [
    lambda m, F, x: F.conv1d(x[0], m.ones(2, 3, 2), padding="same"),
    lambda m, F, x: F.max_pool1d(x[0], 2),
    lambda m, F, x: F.max_pool2d(x[0], 2, return_indices=True)[0],
    lambda m, F, x: F.avg_pool1d(x[0], 2),
    lambda m, F, x: F.adaptive_avg_pool1d(x[0], 2),
    lambda m, F, x: F.adaptive_avg_pool2d(x, 1),
    lambda m, F, x: F.batch_norm(x, None, None, m.ones(3, requires_grad=True), training=True),
    lambda m, F, x: F.instance_norm(x, bias=m.ones(3, requires_grad=True)),
    lambda m, F, x: F.layer_norm(x, (4,), m.ones(4, requires_grad=True)),
    lambda m, F, x: F.group_norm(x, 1, None, m.ones(3, requires_grad=True)),
    lambda m, F, x: F.interpolate(x[0], scale_factor=2),
    lambda m, F, x: F.unfold(x[0], 2),
]


def _graph(fn, depth=4):
    """The node names of a graph, breadth first, with their edge counts."""
    out, level = [], [fn]
    for _ in range(depth):
        nxt = []
        for node in level:
            if node is None:
                out.append(None)
                continue
            out.append((type(node).__name__, len(node.next_functions)))
            nxt.extend(n for n, _ in node.next_functions)
        level = nxt
    return out


@pytest.mark.parametrize("i", range(len(GRAPH_OPS)))
def test_graph(i):
    def fn(m):
        x = m.ones(2, 3, 4, 4, requires_grad=True)
        y = GRAPH_OPS[i](m, F(m), x)
        return _graph(y.grad_fn), y.requires_grad, y.is_leaf

    both(fn)


def test_under_jit_matches_eager():
    """The layers trace under ``jax.jit`` (no host reads of array values)."""
    x = _arr((2, 3, 6, 6), f32, 0)
    w = _arr((4, 3, 3, 3), f32, 1)

    def step(x_arr, w_arr):
        x = lg.tensor(x_arr, requires_grad=True)
        wt = lg.tensor(w_arr, requires_grad=True)
        Fl = F(lg)
        y = Fl.batch_norm(Fl.conv2d(x, wt, padding=1), None, None, training=True)
        y = Fl.max_pool2d(y, 2) + Fl.adaptive_avg_pool2d(y, 3)
        y = Fl.layer_norm(Fl.interpolate(y, scale_factor=2, mode="bilinear"), (6,))
        loss = Fl.unfold(y, 2).sum()
        loss.backward()
        return loss._data, x.grad._data, wt.grad._data

    eager = step(x, w)
    traced = jax.jit(step)(jnp.asarray(x), jnp.asarray(w))
    for a, b in zip(eager, traced):
        np.testing.assert_allclose(np.asarray(b), np.asarray(a), rtol=1e-4, atol=1e-5)


EDGE_ERRORS = [
    lambda m, F: F.unfold(m.randn(3, 4), 2),
    lambda m, F: F.unfold(m.randn(1, 1, 3, 4, 4), 2),
    lambda m, F: F.unfold(m.randn(1, 1, 3, 4), 5),
    lambda m, F: F.max_pool2d(m.zeros(2, 0, 4, 4), 2),
    lambda m, F: F.max_pool2d(m.zeros(1, 1, 1, 4, 4), 2),
    lambda m, F: F.max_pool1d(m.zeros(1, 1, 4, 4), 2),
    lambda m, F: F.max_pool1d(m.zeros(4), 2),
    lambda m, F: F.avg_pool2d(m.zeros(4, 4), 2),
    lambda m, F: F.avg_pool1d(m.zeros(4), 2),
    lambda m, F: F.adaptive_avg_pool2d(m.zeros(1, 2, 4, 4), -1),
    lambda m, F: F.adaptive_avg_pool1d(m.zeros(4), 2),
    lambda m, F: F.conv2d(m.tensor(1.0), m.ones(1, 1, 1, 1)),
    lambda m, F: F.conv2d(m.ones(1, 1, 4, 4), m.ones(1, 1, 1)),
    lambda m, F: F.conv2d(m.ones(1, 1, 4, 4), m.ones(1, 1, 1, 1), padding=-1),
    lambda m, F: F.conv2d(m.ones(1, 1, 4, 4), m.ones(1, 1, 1, 1), stride=0),
    lambda m, F: F.conv2d(m.ones(1, 1, 4, 4), m.ones(1, 1, 1, 1), dilation=0),
    lambda m, F: F.conv2d(m.ones(1, 1, 4, 4), m.ones(1, 1, 1, 1), groups=0),
    lambda m, F: F.conv_transpose2d(m.ones(1, 1, 4, 4), m.ones(1, 1, 3, 3), output_padding=1),
    lambda m, F: F.conv_transpose2d(m.ones(1, 1, 4, 4), m.ones(1, 1, 3, 3), output_padding=-1),
    lambda m, F: F.conv_transpose1d(m.ones(1, 1, 4), m.ones(1, 1, 3), output_padding=1),
    lambda m, F: F.conv_transpose2d(m.ones(1, 4, 4, 4), m.ones(4, 1, 3, 3), groups=3),
    lambda m, F: F.layer_norm(m.zeros(2, 4), (4,), m.ones(3)),
    lambda m, F: F.layer_norm(m.zeros(2, 4), (4,), None, m.ones(3)),
    lambda m, F: F.group_norm(m.zeros(4), 2),
    lambda m, F: F.group_norm(m.zeros(2, 4), 2, m.ones(3)),
    lambda m, F: F.batch_norm(m.zeros(4), m.zeros(4), m.ones(4)),
    lambda m, F: F.batch_norm(m.zeros(2, 4), m.zeros(4), m.ones(4), m.ones(3)),
    lambda m, F: F.batch_norm(m.zeros(2, 3), None, None),
    lambda m, F: F.instance_norm(m.randn(3, 4)),
    lambda m, F: F.interpolate(m.zeros(1, 2, 4), scale_factor=2, mode="bilinear"),
    lambda m, F: F.interpolate(m.zeros(1, 2, 4), scale_factor=0.1),
    lambda m, F: F.interpolate(m.zeros(1, 2, 4, 4), size=(2, 2, 2)),
    lambda m, F: F.interpolate(m.zeros(1, 2, 4, 4), scale_factor=(2, 2, 2)),
    lambda m, F: F.interpolate(m.zeros(1, 2, 4, 4), scale_factor=2, mode="foo"),
    lambda m, F: F.adaptive_max_pool2d(m.randn(3), 2),
    lambda m, F: F.adaptive_max_pool2d(m.randn(2, 3, 5, 7), (2, -1)),
    lambda m, F: F.adaptive_max_pool2d(m.randn(2, 3, 5, 7).long(), 2),
    lambda m, F: F.fold(m.randn(1, 12, 5), (3, 3), 2),
    lambda m, F: F.fold(m.randn(1, 10, 4), (3, 3), 2),
    lambda m, F: F.fold(m.randn(12, 4).long(), (3, 3), 2),
    lambda m, F: F.max_pool2d(m.randn(1, 2, 6, 6), 2, stride=0),
    lambda m, F: F.max_pool2d(m.randn(1, 2, 6, 6), 0),
    lambda m, F: F.avg_pool2d(m.randn(1, 2, 6, 6), 2, stride=0),
    lambda m, F: F.max_pool2d(m.randn(1, 2, 6, 6), 2, dilation=0),
    lambda m, F: F.max_pool2d(m.randn(1, 2, 6, 6), 2, padding=-1),
    lambda m, F: F.avg_pool2d(m.randn(1, 2, 6, 6), 2, divisor_override=0),
    # empty batches are allowed
    lambda m, F: F.max_pool2d(m.zeros(0, 2, 4, 4), 2),
    lambda m, F: F.avg_pool2d(m.zeros(0, 2, 4, 4), 2),
    lambda m, F: F.adaptive_avg_pool2d(m.zeros(0, 2, 4, 4), 2),
    lambda m, F: F.layer_norm(m.zeros(0, 4), (4,)),
    lambda m, F: F.conv2d(m.zeros(0, 1, 4, 4), m.ones(2, 1, 3, 3)),
]


@pytest.mark.parametrize("i", range(len(EDGE_ERRORS)))
def test_edge_cases(i):
    both(lambda m: EDGE_ERRORS[i](m, F(m)))


HALF_OPS = [
    lambda m, F, x: F.conv2d(x, m.ones(2, 3, 3, 3, dtype=x.dtype) / 9, padding=1),
    lambda m, F, x: F.layer_norm(x, (5,)),
    lambda m, F, x: F.group_norm(x, 3),
    lambda m, F, x: F.batch_norm(x, None, None, training=True),
    lambda m, F, x: F.max_pool2d(x, 2),
    lambda m, F, x: F.avg_pool2d(x, 2),
    lambda m, F, x: F.adaptive_avg_pool2d(x, 3),
    lambda m, F, x: F.interpolate(x, scale_factor=2, mode="bilinear"),
]


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("i", range(len(HALF_OPS)))
def test_half(i, dtype):
    """Half types: PyTorch computes in float32 and rounds; compared at conftest's tolerance."""
    differential(lambda m, x: HALF_OPS[i](m, F(m), x), [((2, 3, 4, 5), dtype, True)], grads=False)
