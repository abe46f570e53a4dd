"""Differential tests of the reductions, scans and selections against PyTorch 2.13."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from conftest import Raised, both, same_tensor

# Values with ties, a zero and a negative: tie rules and edge gradients show up.
BASE = [[1.5, -2.0, 3.0, 3.0], [0.0, 5.0, 5.0, -1.0], [2.0, 2.0, 2.0, 0.25]]
NAN = [[1.0, math.nan, 2.0], [3.0, 4.0, -1.0]]
DISTINCT = [[0.3, -1.2, 2.5, 0.9, -0.4], [1.1, 0.2, -2.2, 3.3, 0.6]]


def _tensor(m, data, dtype="float32", grad=True):
    t = m.tensor(data, dtype=getattr(m, dtype))
    return t.requires_grad_() if grad and t.dtype.is_floating_point else t


def _check(fn, data, dtype="float32", exact=False, grad=True, out_index=None, **tol):
    """Forward (results, names), then the gradient of a weighted sum of the output(s)."""
    state = {}

    def run(m):
        x = _tensor(m, data, dtype, grad)
        state[m.__name__] = x
        return fn(m, x)

    t, g = both(run, exact=exact, **tol)
    if not grad or isinstance(t, Raised) or not state["torch"].requires_grad:
        return
    for mod, out in (("torch", t), ("leafgrad", g)):
        if out_index is not None:
            outs = [out[out_index]]
        else:
            outs = list(out) if isinstance(out, tuple) else [out]
        outs = [o for o in outs if o.requires_grad]
        if not outs:
            return
        total = 0
        for o in outs:
            w = np.arange(1, o.numel() + 1, dtype=np.float64).reshape(tuple(o.shape)) / 7
            m = __import__(mod)
            total = total + (o * m.tensor(w, dtype=o.dtype)).sum()
        total.backward()
    same_tensor(state["torch"].grad, state["leafgrad"].grad, autograd=False, **tol)


FLOATS = ["float32", "float64"]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize(
    "fn",
    [
        lambda m, x: x.sum(),
        lambda m, x: x.sum(1),
        lambda m, x: x.sum([]),
        lambda m, x: x.sum((0, 1), keepdim=True),
        lambda m, x: m.sum(x, dim=-1, keepdim=True),
        lambda m, x: x.mean(0),
        lambda m, x: x.mean([]),
        lambda m, x: x.nansum(1),
        lambda m, x: x.nansum(),
        lambda m, x: m.nanmean(x, 1),
        lambda m, x: x.nanmean(),
        lambda m, x: x.prod(),
        lambda m, x: x.prod(1, keepdim=True),
        lambda m, x: x.amax(1),
        lambda m, x: x.amax(),
        lambda m, x: x.amin((0, 1)),
        lambda m, x: x.max(),
        lambda m, x: x.min(),
        lambda m, x: x.logsumexp(1),
        lambda m, x: m.logsumexp(x, (0, 1), keepdim=True),
        lambda m, x: x.cumsum(1),
        lambda m, x: x.cumsum(-2),
        lambda m, x: x.logcumsumexp(0),
        lambda m, x: x.nanmedian(),
        lambda m, x: x.var(),
        lambda m, x: x.var(1),
        lambda m, x: x.var(0, unbiased=False, keepdim=True),
        lambda m, x: x.std(),
        lambda m, x: x.std(dim=1, correction=0),
        lambda m, x: x.std(False),
        lambda m, x: m.var(x, 1, correction=2),
    ],
)
def test_single_output(fn, dtype):
    for data in (BASE, NAN):
        _check(fn, data, dtype)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize(
    "fn",
    [
        lambda m, x: x.max(1),
        lambda m, x: m.max(x, dim=0, keepdim=True),
        lambda m, x: x.min(-1),
        lambda m, x: x.cummax(1),
        lambda m, x: x.cummin(0),
        lambda m, x: x.sort(),
        lambda m, x: x.sort(0, descending=True),
        lambda m, x: m.sort(x, dim=1, descending=True, stable=True),
    ],
)
def test_selection_with_ties(fn, dtype):
    for data in (BASE, NAN):
        _check(fn, data, dtype, out_index=0)


@pytest.mark.parametrize(
    "fn",
    [
        lambda m, x: x.cumprod(1),
        lambda m, x: x.median(),
    ],
)
def test_without_nan(fn):
    # With NaN, PyTorch's cumprod gradient and its full median (quickselect) follow no rule
    # leafgrad reproduces: see the module's notes.
    _check(fn, BASE, "float32")
    _check(fn, DISTINCT, "float64")


@pytest.mark.parametrize("fn", [lambda m, x: x.mode(), lambda m, x: x.mode(0, keepdim=True)])
def test_mode(fn):
    _check(fn, BASE, "float64", out_index=0)  # NaN inputs: PyTorch's mode of NaN is not tested


@pytest.mark.parametrize(
    "fn",
    [
        lambda m, x: x.median(1),
        lambda m, x: x.nanmedian(0),
        lambda m, x: x.kthvalue(2),
        lambda m, x: x.kthvalue(1, 0, keepdim=True),
        lambda m, x: x.topk(3),
        lambda m, x: x.topk(2, 0, largest=False),
        lambda m, x: x.aminmax(),
        lambda m, x: x.aminmax(dim=1, keepdim=True),
    ],
)
def test_selection_distinct(fn):
    # PyTorch's quickselect picks among equal values in an order of its own: distinct values.
    _check(fn, DISTINCT, "float64", out_index=0)


@pytest.mark.parametrize(
    "fn",
    [
        lambda m, x: x.var_mean(1) if hasattr(x, "var_mean") else m.var_mean(x, 1),
        lambda m, x: m.var_mean(x),
        lambda m, x: m.std_mean(x, 0, correction=0),
        lambda m, x: m.std_mean(x, keepdim=True, dim=1),
    ],
)
def test_two_outputs(fn):
    _check(fn, DISTINCT, "float64")
    _check(lambda m, x: fn(m, x)[0], BASE, "float32")


@pytest.mark.parametrize(
    "fn",
    [
        lambda m, x: x.argmax(),
        lambda m, x: x.argmax(1),
        lambda m, x: x.argmin(0, keepdim=True),
        lambda m, x: x.argmax(keepdim=True),
        lambda m, x: x.argsort(1),
        lambda m, x: x.argsort(0, descending=True),
        lambda m, x: m.msort(x),
        lambda m, x: x.count_nonzero(),
        lambda m, x: x.count_nonzero((0, 1)),
        lambda m, x: m.count_nonzero(x, dim=1),
        lambda m, x: x.any(),
        lambda m, x: x.all(1),
        lambda m, x: x.any((0, 1)),
        lambda m, x: x.all(0, keepdim=True),
    ],
)
@pytest.mark.parametrize("dtype", ["float32", "int64", "bool"])
def test_nondifferentiable_and_ints(fn, dtype):
    data = [[abs(v) > 1 for v in row] for row in BASE] if dtype == "bool" else BASE
    if dtype in ("int64", "uint8"):
        data = [[int(abs(v)) for v in row] for row in BASE]
    _check(fn, data, dtype, exact=True)


@pytest.mark.parametrize(
    "fn",
    [
        lambda m, x: x.sum(),
        lambda m, x: x.sum(0, dtype=m.float64),
        lambda m, x: x.prod(),
        lambda m, x: x.prod(1),
        lambda m, x: x.nansum(),
        lambda m, x: x.cumsum(1),
        lambda m, x: x.cumprod(0),
        lambda m, x: x.cummax(1),
        lambda m, x: x.cummin(0),
        lambda m, x: x.max(),
        lambda m, x: x.max(1),
        lambda m, x: x.amin(0),
        lambda m, x: x.sort(1, descending=True),
        lambda m, x: x.median(),
        lambda m, x: x.mode(1),
        lambda m, x: x.logsumexp(1),
        lambda m, x: x.mean(dtype=m.float64),
    ],
)
@pytest.mark.parametrize("dtype", ["int64", "int32", "bool"])
def test_integer_inputs(fn, dtype):
    data = [[int(abs(v)) for v in row] for row in BASE]
    if dtype == "bool":
        data = [[v > 1 for v in row] for row in data]
    _check(fn, data, dtype, grad=False)


@pytest.mark.parametrize(
    "fn",
    [
        lambda m, x: x.sum(),
        lambda m, x: x.sum(0),
        lambda m, x: x.max(),
        lambda m, x: x.max(0),
        lambda m, x: x.amax(),
        lambda m, x: x.argmax(),
        lambda m, x: x.median(),
        lambda m, x: x.sort(),
        lambda m, x: x.topk(1),
        lambda m, x: x.cumsum(0),
        lambda m, x: x.cummax(-1),
        lambda m, x: x.prod(),
        lambda m, x: x.logsumexp(0),
        lambda m, x: x.std(0, correction=0),
        lambda m, x: x.kthvalue(1),
    ],
)
def test_zero_dim(fn):
    _check(fn, 2.5, "float32", out_index=None)


@pytest.mark.parametrize(
    "fn",
    [
        lambda m, x: x.sum(0),
        lambda m, x: x.mean(1),
        lambda m, x: x.prod(0),
        lambda m, x: x.amax(1),
        lambda m, x: x.max(1),
        lambda m, x: x.cumsum(0),
        lambda m, x: x.sort(0),
        lambda m, x: x.any(0),
        lambda m, x: x.count_nonzero(),
        lambda m, x: x.median(),
        lambda m, x: x.max(),
        lambda m, x: x.amax(0),
        lambda m, x: x.argmax(),
        lambda m, x: x.max(0),
        lambda m, x: x.aminmax(),
        lambda m, x: x.mode(0),
    ],
)
def test_empty(fn):
    _check(fn, np.zeros((0, 3)).tolist() or [[]] * 0, "float32", grad=False)


def _empty(m):
    return m.zeros(0, 3)


@pytest.mark.parametrize(
    "fn",
    [
        lambda m, x: x.sum(3),
        lambda m, x: x.sum("a"),
        lambda m, x: x.sum((1, 1)),
        lambda m, x: x.mean(keepdim=True),
        lambda m, x: x.long().mean(),
        lambda m, x: x.mean(dtype=m.int64),
        lambda m, x: x.max(2),
        lambda m, x: x.long().var(),
        lambda m, x: x.var(1, correction=4),
        lambda m, x: x.std(dim=(0, 1), correction=12),
        lambda m, x: m.var_mean(x[0:1, 0]),
        lambda m, x: m.std_mean(x[0, 0:1]),
        lambda m, x: x.bool().argmax(),
        lambda m, x: x.to(m.complex64).argmax(),
        lambda m, x: x.to(m.complex64).max(),
        lambda m, x: x.to(m.complex64).min(0),
        lambda m, x: x.to(m.complex64).amax(),
        lambda m, x: x.to(m.complex64).sort(),
        lambda m, x: x.topk(5),
        lambda m, x: x.topk(-1),
        lambda m, x: x.kthvalue(5),
        lambda m, x: x.kthvalue(0),
        lambda m, x: x.prod((0, 1)),
        lambda m, x: x.long().nanmean(),
        lambda m, x: x.long().logcumsumexp(0),
        lambda m, x: x.count_nonzero((1, 1)),
        lambda m, x: _empty(m).max(),
        lambda m, x: _empty(m).amax(0),
        lambda m, x: _empty(m).max(0),
        lambda m, x: _empty(m).argmax(),
        lambda m, x: _empty(m).aminmax(),
        lambda m, x: _empty(m).aminmax(dim=0),
        lambda m, x: _empty(m).aminmax(dim=-1, keepdim=True),
        lambda m, x: _empty(m).reshape(2, 0).aminmax(dim=0),
    ],
)
def test_errors_and_warnings(fn):
    _check(fn, BASE, "float32")


def test_return_types_and_backward_twice():
    def run(m):
        x = _tensor(m, BASE, "float32")
        r = x.max(1)
        values, indices = r
        assert r.values is values and r.indices is indices
        return repr(r).replace("leafgrad", "torch"), repr(x.aminmax(dim=0)), len(r)

    both(run)

    def twice(m):
        x = _tensor(m, BASE, "float32")
        outs = []
        for f in (
            lambda: x.sum(1),
            lambda: x.cumsum(0),
            lambda: x.sort()[0],
            lambda: x.var(),
            lambda: x.max(),
            lambda: x.prod(),
            lambda: x.amax(0),
        ):
            y = f().sum()
            y.backward()
            try:
                y.backward()
                outs.append("ok")
            except RuntimeError as e:
                outs.append(str(e)[:20])
        return outs

    both(twice)


def test_nanmean_graph():
    def run(m):
        x = _tensor(m, NAN, "float32")
        y = x.nanmean(1)
        fns = y.grad_fn.next_functions
        return type(y.grad_fn).__name__, type(fns[0][0]).__name__, fns[1]

    both(run)


def test_spread_ties_full_reductions():
    for data in (
        [[2.0, 2.0, 1.0, 2.0]],
        [[1.0, 2.0, 2.0, 3.0]],
        [[-math.inf, -math.inf, 1.0]],
        [[math.inf, 1.0, math.inf]],
        [[math.nan, 1.0, math.nan]],
    ):
        for fn in (
            lambda m, x: x.max(),
            lambda m, x: x.min(),
            lambda m, x: x.median(),
            lambda m, x: x.amax(),
            lambda m, x: x.nanmedian(),
        ):
            _check(fn, data, "float64")


def test_std_zero_gradient_and_prod_zeros():
    _check(lambda m, x: x.std(), [1.0, 1.0, 1.0], "float64")
    _check(lambda m, x: x.std(1), [[1.0, 1.0], [1.0, 2.0]], "float64")
    for data in ([0.0, 2.0, 0.0, 3.0], [0.0, 2.0, 4.0], [1.0, 2.0, 3.0]):
        _check(lambda m, x: x.prod(), data, "float64")
        _check(lambda m, x: x.cumprod(0), data, "float64")


PROD_DATA = [
    [[0.0, -1.0, 3.0], [2.0, 0.0, -0.0]],
    [[-0.0, 2.0, -3.0], [1.5, -2.5, 4.0]],
    [[math.nan, 0.0, 2.0], [1.0, 2.0, 3.0]],
    [[math.nan, 1.0, 2.0], [1.0, -2.0, 3.0]],
    [[0.0, 0.0, -2.0], [1.0, 1.0, 1.0]],
    [[math.inf, 0.0, 2.0], [1.0, 0.5, -3.0]],
]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("dim", [None, 0, -1])
def test_prod_gradient_bits(dtype, dim):
    """PyTorch's prod_backward, bit for bit: ``grad * (result / x)`` without zeros, else the
    exclusive cumulative products (signed zeros and NaN placement included); two zeros with
    ``dim=None`` give plain zeros (Note [Product gradients])."""
    import torch

    import leafgrad

    rng = np.random.default_rng(3)
    long_rows = 1 + 0.1 * rng.standard_normal((3, 40))
    long_rows[1, 17] = 0.0  # the exclusive cumulative products, rounded as PyTorch's cumprod
    for data in [*PROD_DATA, rng.standard_normal((4, 7)).tolist(), long_rows.tolist()]:
        grads = []
        for m in (torch, leafgrad):
            x = m.tensor(data, dtype=getattr(m, dtype), requires_grad=True)
            y = x.prod() if dim is None else x.prod(dim)
            w = m.arange(1, y.numel() + 1, dtype=x.dtype).reshape(y.shape) / 7
            (g,) = m.autograd.grad((y * w).sum(), x)
            grads.append(np.asarray(g.detach().numpy()))
        t, g = grads
        assert t.tobytes() == g.tobytes(), (data, t, g)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize(
    "shape", [(7,), (33,), (100,), (4, 7), (3, 50), (50, 3), (5, 40, 3), (40000,)]
)
def test_prod_forward_bits(dtype, shape):
    """The product's rounding is PyTorch's CPU order (Note [Product order]): vectorised
    contiguous rows, running products elsewhere, thread ranges for a large full product."""
    import torch

    import leafgrad

    a = (1 + 0.05 * np.random.default_rng(len(shape)).standard_normal(shape)).astype(dtype)
    for dim in [None, *range(len(shape))]:
        t, g = (m.tensor(a) for m in (torch, leafgrad))
        t, g = (x.prod() if dim is None else x.prod(dim) for x in (t, g))
        assert t.numpy().tobytes() == g.numpy().tobytes(), dim


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(7,), (100,), (3, 50), (50, 3), (4, 5, 6)])
def test_scan_bits(dtype, shape):
    """cumsum and cumprod run element after element in PyTorch's accumulate type, forward and
    backward (Note [Scan order]); cumprod's gradient without zeros is PyTorch's formula
    (Note [Running product gradients]). With a zero only the values are compared."""
    import torch

    import leafgrad

    rng = np.random.default_rng(sum(shape))
    for kind in ("plain", "negative", "zero"):
        a = (1 + 0.1 * rng.standard_normal(shape)).astype(dtype)
        if kind == "negative":
            a = -a
        if kind == "zero":
            a.flat[a.size // 3] = 0
        for op in ("cumsum", "cumprod"):
            for dim in range(len(shape)):
                out = []
                for m in (torch, leafgrad):
                    x = m.tensor(a, requires_grad=True)
                    y = getattr(x, op)(dim)
                    w = m.tensor(np.arange(1, y.numel() + 1, dtype=dtype).reshape(shape) / 7)
                    (gx,) = m.autograd.grad((y * w).sum(), x)
                    out.append((y.detach().numpy(), gx.numpy()))
                (ty, tg), (ly, lg) = out
                assert ty.tobytes() == ly.tobytes(), (kind, op, dim)
                if kind == "zero" and op == "cumprod":
                    np.testing.assert_allclose(lg, tg, rtol=1e-5 if dtype == "float32" else 1e-12)
                else:
                    assert tg.tobytes() == lg.tobytes(), (kind, op, dim)


VARIANCE_CASES = [
    ((37,), [None, (), 0], (1, 0), ("var", "std", "var_mean", "std_mean")),
    ((5, 37), [None, 0, 1], (1, 0.5), ("var", "std", "var_mean", "std_mean")),
    ((3, 4, 5), [(), 1, (0, 2)], (1, 0), ("var", "std_mean")),
    ((1, 50), [1], (1, 0), ("var", "var_mean")),
    ((), [None], (1, 0), ("std", "var_mean")),
    ((40000,), [None], (1,), ("var", "var_mean")),  # thread ranges
]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape, dims, corrections, ops", VARIANCE_CASES, ids=lambda v: str(v))
def test_variance_bits(dtype, shape, dims, corrections, ops):
    """var, std, var_mean and std_mean round as PyTorch's CPU kernels (Note [Variance order]);
    var's and std's gradients are var_backward's and std_backward's, bit for bit."""
    import warnings

    import torch

    import leafgrad

    a = np.asarray(np.random.default_rng(len(shape)).standard_normal(shape) * 3 + 1, dtype)
    for dim, correction, op in itertools.product(dims, corrections, ops):
        out = []
        for m in (torch, leafgrad):
            x = m.tensor(a, requires_grad=True)
            kw = {} if dim is None else {"dim": dim}
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # no degrees of freedom
                y = getattr(m, op)(x, correction=correction, **kw)
            ys = y if isinstance(y, tuple) else (y,)
            (g,) = m.autograd.grad(ys[0].sum() * 1.5, x)
            out.append(([o.detach().numpy() for o in ys], g.numpy()))
        (tv, tg), (lv, lg) = out
        for t, g in zip(tv, lv):  # NaN's sign aside
            assert np.array_equal(t, g, equal_nan=True), (dim, correction, op)
            assert np.array_equal(np.signbit(t) | np.isnan(t), np.signbit(g) | np.isnan(g))
        if not op.endswith("mean"):
            assert np.array_equal(tg, lg, equal_nan=True), (dim, correction, op)
            assert np.array_equal(np.signbit(tg) | np.isnan(tg), np.signbit(lg) | np.isnan(lg))


def test_binary_max_delegates():
    import leafgrad

    x = leafgrad.tensor([1.0, 5.0])
    y = leafgrad.tensor([3.0, 2.0])
    if hasattr(leafgrad.Tensor, "maximum"):
        both(
            lambda m: (
                m.max(m.tensor([1.0, 5.0]), m.tensor([3.0, 2.0])),
                m.min(m.tensor([1.0, 5.0]), other=m.tensor([3.0, 2.0])),
            )
        )
    else:
        with pytest.raises(NotImplementedError):
            leafgrad.max(x, y)
