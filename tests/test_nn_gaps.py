"""Differential tests of F.bilinear, label-smoothed cross_entropy, interpolate's modes and the
scatter reductions (scatter(reduce=), scatter_reduce) against PyTorch.

Each case builds the same values in both libraries, runs the op, backpropagates a weighted sum
and compares values, dtypes, ``grad_fn`` names, leaf flags, gradients and errors.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as TF
from conftest import both

import leafgrad as lg
import leafgrad.nn.functional as LF

RNG = np.random.default_rng(0)
LOOSE = {"rtol": 1e-5, "atol": 1e-5}


def F(m):
    return TF if m is torch else LF


def _t(m, a, dtype, grad=False):
    t = m.tensor(np.asarray(a), dtype=getattr(m, dtype))
    return t.requires_grad_() if grad else t


def _backward(m, out, leaves):
    """Weighted-sum backward; the gradients of the leaves that require grad."""
    if not out.requires_grad:
        return []
    w = m.tensor(np.linspace(0.5, 1.5, out.numel()).reshape(tuple(out.shape)))
    (out * w.to(out.dtype)).sum().backward()
    return [t.grad for t in leaves if t.requires_grad]


def _names(fn, depth):
    """grad_fn names ``depth`` levels down (PyTorch's next_functions structure)."""
    if fn is None or depth < 0:
        return None
    return (type(fn).__name__, [_names(f, depth - 1) for f, _ in fn.next_functions])


# --- bilinear -------------------------------------------------------------------------------------

BILINEAR = [
    ((4, 3), (4, 2), (5, 3, 2), True),
    ((2, 3, 3), (2, 3, 2), (5, 3, 2), True),  # batch dims (N, *, H)
    ((3,), (2,), (5, 3, 2), False),  # 1-D inputs
    ((0, 3), (0, 2), (5, 3, 2), True),  # empty batch
]


@pytest.mark.parametrize("s1,s2,sw,bias", BILINEAR)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_bilinear(s1, s2, sw, bias, dtype):
    arrays = [RNG.standard_normal(s) for s in (s1, s2, sw, (sw[0],))]

    def fn(m):
        ts = [_t(m, a, dtype, True) for a in arrays]
        out = F(m).bilinear(ts[0], ts[1], ts[2], ts[3] if bias else None)
        return [out, _names(out.grad_fn, 3), *_backward(m, out, ts[: 3 + bias])]

    both(fn, **LOOSE)


def test_bilinear_int_and_saved():
    def fn(m):
        a, b = _t(m, [[1, 2]], "int64"), _t(m, [[3, 4, 5]], "int64")
        w = _t(m, np.arange(12).reshape(2, 2, 3), "int64")
        return F(m).bilinear(a, b, w)

    both(fn, exact=True)

    def twice(m):
        a, b = _t(m, [[1.0, 2]], "float32", True), _t(m, [[3.0, 4, 5]], "float32")
        out = F(m).bilinear(a, b, _t(m, np.ones((2, 2, 3)), "float32"))
        out.sum().backward()
        out.sum().backward()

    both(twice)


@pytest.mark.parametrize(
    "s1,d1,s2,d2,sw,sb,db",
    [
        ((2, 3), "float32", (2, 4), "float64", (5, 3, 4), None, None),
        ((2, 3), "float32", (2, 4), "float32", (5, 3, 4), (5,), "float64"),
        ((2, 3), "float32", (4,), "float32", (5, 3, 4), None, None),
        ((2, 3), "float32", (3, 4), "float32", (5, 3, 4), None, None),
        ((2, 3), "float32", (2, 5), "float32", (5, 3, 4), None, None),
        ((2, 3), "float32", (2, 4), "float32", (5, 3, 4), (4,), "float32"),
        ((2, 4), "float32", (2, 4), "float32", (5, 3, 4), None, None),
        ((2, 3), "float32", (2, 4), "float32", (5, 3), None, None),
        ((), "float32", (), "float32", (5, 3, 4), None, None),
    ],
)
def test_bilinear_errors(s1, d1, s2, d2, sw, sb, db):
    def fn(m):
        bias = None if sb is None else _t(m, np.ones(sb), db)
        a, b, w = _t(m, np.ones(s1), d1), _t(m, np.ones(s2), d2), _t(m, np.ones(sw), "float32")
        return F(m).bilinear(a, b, w, bias)

    both(fn)


# --- cross_entropy with label smoothing ----------------------------------------------------------

CE_CASES = [
    ((4, 3), [0, 2, 1, 2]),
    ((4, 3), [0, -100, 1, 2]),  # ignored target
    ((3,), 1),  # unbatched
    ((2, 3, 2), [[0, 2], [1, -100]]),  # K-dim
    ((2, 3, 2, 2), [[[0, 2], [1, 1]], [[2, 0], [1, -100]]]),
]


@pytest.mark.parametrize("shape,target", CE_CASES)
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True])
def test_cross_entropy_label_smoothing(shape, target, reduction, weighted):
    x = RNG.standard_normal(shape)
    c = shape[0] if len(shape) == 1 else shape[1]
    w = RNG.random(c) + 0.5
    dtype = "float64" if weighted else "float32"

    def fn(m):
        t = _t(m, x, dtype, True)
        weight = _t(m, w, dtype) if weighted else None
        out = F(m).cross_entropy(
            t, _t(m, target, "int64"), weight, reduction=reduction, label_smoothing=0.25
        )
        return [out, _names(out.grad_fn, 3), *_backward(m, out, [t])]

    both(fn, **LOOSE)


def test_cross_entropy_label_smoothing_ignore_index_and_errors():
    x = RNG.standard_normal((3, 4))

    def fn(m):
        t = _t(m, x, "float32", True)
        out = F(m).cross_entropy(t, _t(m, [1, 3, 1], "int64"), ignore_index=1, label_smoothing=0.5)
        return [out, *_backward(m, out, [t])]

    both(fn, **LOOSE)
    both(
        lambda m: F(m).cross_entropy(
            _t(m, np.ones((2, 3)), "float32"), _t(m, [0, 1], "int64"), label_smoothing=1.5
        )
    )


# --- interpolate ----------------------------------------------------------------------------------

INTERP = [
    ("linear", (2, 3, 7)),
    ("bicubic", (1, 2, 6, 5)),
    ("trilinear", (1, 2, 4, 5, 3)),
    ("nearest-exact", (1, 2, 7)),
    ("nearest-exact", (1, 2, 6, 5)),
    ("nearest-exact", (1, 1, 4, 5, 3)),
    ("area", (1, 2, 7)),
    ("area", (1, 2, 6, 5)),
    ("area", (1, 1, 4, 5, 3)),
]
# (keywords, dtype): sizes up and down, scales, equal sizes (PyTorch's copy special cases).
SIZES = [
    ({"size": 3}, "float64"),
    ({"scale_factor": 1.7}, "float64"),
    ({"scale_factor": 1.1}, "float32"),
    ({"scale_factor": 2.3, "recompute_scale_factor": True}, "float32"),
]


@pytest.mark.parametrize("mode,shape", INTERP)
@pytest.mark.parametrize(
    "kw,dtype",
    SIZES,
    ids=lambda k: "-".join(f"{a}={b}" for a, b in k.items()) if isinstance(k, dict) else k,
)
def test_interpolate(mode, shape, kw, dtype):
    x = RNG.standard_normal(shape)
    corners = [None, True, False] if mode in ("linear", "bicubic", "trilinear") else [None]

    def fn(m):
        results = []
        for ac in corners:
            t = _t(m, x, dtype, True)
            out = F(m).interpolate(t, mode=mode, align_corners=ac, **kw)
            results += [out, _names(out.grad_fn, 2), *_backward(m, out, [t])]
        return results

    tol = {"rtol": 1e-5, "atol": 1e-5} if dtype == "float32" else {"rtol": 1e-12, "atol": 1e-12}
    both(fn, **tol)


@pytest.mark.parametrize(
    "mode,shape,dtype,kw",
    [
        ("bicubic", (1, 2, 5), "float32", {"size": 3}),
        ("linear", (1, 2, 5, 4), "float32", {"size": 3}),
        ("trilinear", (1, 2, 5, 4), "float32", {"size": 3}),
        ("linear", (2, 5), "float32", {"size": 3}),
        ("linear", (1, 2, 5), "int64", {"size": 3}),
        ("bicubic", (1, 2, 5, 5), "int64", {"size": 3}),
        ("trilinear", (1, 2, 5, 5, 5), "int64", {"size": 3}),
        ("area", (1, 2, 5, 5), "int64", {"size": 3}),
        ("nearest-exact", (1, 2, 5, 5), "int64", {"size": 3}),
        ("linear", (1, 2, 5), "float32", {"size": 3, "recompute_scale_factor": True}),
        ("nearest-exact", (1, 2, 5), "float32", {"size": 3, "align_corners": True}),
        ("area", (1, 2, 5), "float32", {"size": 3, "align_corners": False}),
    ],
)
def test_interpolate_errors(mode, shape, dtype, kw):
    both(lambda m: F(m).interpolate(_t(m, np.ones(shape), dtype), mode=mode, **kw))


def test_interpolate_antialias_not_implemented():
    with pytest.raises(NotImplementedError, match="antialias"):
        LF.interpolate(lg.ones(1, 1, 4, 4), size=2, mode="bilinear", antialias=True)


# --- scatter_reduce and scatter(reduce=) ----------------------------------------------------------

X = np.round(RNG.standard_normal((3, 4)), 1)
S = np.round(RNG.standard_normal((2, 4)), 1)
X[0, 0] = S[1, 1] = 0.0  # zeros for prod
X[1, 2] = S[0, 2] = S[1, 2] = 0.5  # ties for amax/amin (self and src)
X[0, 3] = S[0, 3] = S[1, 3] = 2.0
INDEX = [[0, 1, 1, 0], [0, 1, 1, 0]]


@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("grads", [(True, True), (False, True)])
def test_scatter_reduce(reduce, include_self, grads):
    def fn(m):
        x, s = _t(m, X, "float64", grads[0]), _t(m, S, "float64", grads[1])
        out = x.scatter_reduce(0, _t(m, INDEX, "int64"), s, reduce, include_self=include_self)
        return [out, _names(out.grad_fn, 1), *_backward(m, out, [x, s])]

    both(fn)


@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("dtype", ["float32", "int32", "int64", "bool"])
def test_scatter_reduce_dtypes(reduce, dtype):
    def fn(m):
        x = _t(m, [[1, 2, 0], [4, 5, 6]], dtype)
        s = _t(m, [[7, 3, 2], [1, 0, 9]], dtype)
        idx = _t(m, [[1, 0, 1], [1, 1, 0]], "int32")
        return [
            x.scatter_reduce(1, idx, s, reduce),
            m.scatter_reduce(x, 0, idx, s, reduce, include_self=False),
        ]

    both(fn)


def test_scatter_reduce_0d_and_twice():
    def fn(m):
        x = _t(m, 1.5, "float32", True)
        out = x.scatter_reduce(0, _t(m, 0, "int64"), _t(m, 3.0, "float32"), "prod")
        return [out, *_backward(m, out, [x])]

    both(fn)

    def twice(m):
        x = _t(m, X, "float32", True)
        out = x.scatter_reduce(0, _t(m, INDEX, "int64"), _t(m, S, "float32"), "amax")
        out.sum().backward()
        out.sum().backward()

    both(twice)


@pytest.mark.parametrize(
    "make",
    [
        lambda m, x, i, s: x.scatter_reduce(0, i, s, "foo"),
        lambda m, x, i, s: x.scatter_reduce(0, i, 2.0, "sum"),
        lambda m, x, i, s: x.scatter_reduce(0, i.float(), s, "sum"),
        lambda m, x, i, s: x.scatter_reduce(0, i, s.double(), "sum"),
        lambda m, x, i, s: x.scatter_reduce(0, i[0], s, "sum"),
        lambda m, x, i, s: x.scatter_reduce(2, i, s, "sum"),
        lambda m, x, i, s: x.scatter_reduce(0, i + 5, s, "sum"),
        lambda m, x, i, s: x.scatter_reduce(0, i - 1, s, "sum"),
        lambda m, x, i, s: x.scatter_reduce(0, m.zeros(1, 5, dtype=m.int64), s, "sum"),
        lambda m, x, i, s: x.bool().scatter_reduce(0, i, s.bool(), "mean"),
        lambda m, x, i, s: x.cfloat().scatter_reduce(0, i, s.cfloat(), "amax"),
        lambda m, x, i, s: x.scatter(0, i, s, reduce="mean"),
        lambda m, x, i, s: x.scatter(0, i, 2.0, reduce="sum"),
    ],
)
def test_scatter_reduce_errors(make):
    both(lambda m: make(m, _t(m, X, "float32"), _t(m, INDEX, "int64"), _t(m, S, "float32")))


@pytest.mark.parametrize("reduce", ["add", "multiply"])
@pytest.mark.parametrize("value", [False, True])
@pytest.mark.parametrize("grads", [(True, True), (True, False), (False, True), (False, False)])
def test_scatter_old_reduce(reduce, value, grads):
    """scatter(reduce=) has no derivative: a NotImplemented node whose backward raises."""

    def fn(m):
        x, s = _t(m, X, "float32", grads[0]), _t(m, S, "float32", grads[1])
        out = x.scatter(0, _t(m, INDEX, "int64"), 2.5 if value else s, reduce=reduce)
        result = [out, _names(out.grad_fn, 1)]
        if out.requires_grad:
            try:
                out.sum().backward()
            except RuntimeError as exc:
                result.append(str(exc))
        return result

    both(fn)


def test_scatter_old_reduce_ints():
    def fn(m):
        x = _t(m, [1, 2, 3], "int64")
        i = _t(m, [0, 0, 1], "int64")
        return [
            x.scatter(0, i, _t(m, [5, 6, 7], "int64"), reduce="multiply"),
            x.scatter(0, i, 3, reduce="add"),
            _t(m, [True, False], "bool").scatter(
                0, i[:2], _t(m, [True, True], "bool"), reduce="add"
            ),
        ]

    both(fn)
