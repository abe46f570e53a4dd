"""Regressions of reductions against PyTorch: the index ``kthvalue`` picks among ties (PyTorch's
quickselect), ``nanmedian`` of an all-NaN row, a float times a bool mask under IEEE rules,
``amax`` of a 0-d tensor and of a NaN slice under ``create_graph``, and ``dim=[]``."""

from __future__ import annotations

import jax
import numpy as np
import pytest
import torch
from formula_check import check_graph

import leafgrad as lg
from leafgrad.ops import reductions

NAN, INF = float("nan"), float("inf")
U34 = np.random.default_rng(0).uniform(-1, 1, (3, 4))
KTH_ROWS = np.array(
    [
        [3.0, 3, 3, 3, 3],
        [0.0, 0, 0, 1, 1],
        [1.0, 0, 1, 0, 1],
        [2.0, NAN, 2, 1, 2],
        [NAN, 1, NAN, 1, 0],
        [0.5, -1, 0.5, 2, -1],
    ]
)


@pytest.fixture(autouse=True, scope="module")
def _ordinary_samples_first():
    """The module's numerical VJP check (Note [VJP samples] in conftest.py) takes each op's
    first call: an ordinary one here, as ``dim=[]`` follows PyTorch's formula (1 element), not
    the derivative."""
    x = lg.tensor(U34, requires_grad=True)
    for name in ("var", "std", "var_mean", "std_mean"):
        getattr(lg, name)(x, 1)


def _same(t, lt):
    np.testing.assert_array_equal(lt.detach().numpy(), t.detach().numpy())


@pytest.mark.parametrize("k", [2, 4])
def test_kthvalue_tie_index(k):
    grad = k == 2
    t = torch.tensor(KTH_ROWS, requires_grad=grad)
    lt = lg.tensor(KTH_ROWS, requires_grad=grad)
    tv, ti = t.kthvalue(k, 1)
    lv, li = lt.kthvalue(k, 1)
    _same(ti, li)
    np.testing.assert_array_equal(lv.detach().numpy(), tv.detach().numpy())
    if grad:
        tv.sum().backward()
        lv.sum().backward()
        _same(t.grad, lt.grad)


def test_kthvalue_small_rows_keepdim():
    a = np.array([[1.0, 1, 1], [0, 0, 0], [2, 0, 2]])
    t, lt = torch.tensor(a).kthvalue(1, -1, True), lg.tensor(a).kthvalue(1, -1, True)
    _same(t.indices, lt.indices)
    assert tuple(lt.indices.shape) == tuple(t.indices.shape)


def test_kthvalue_forward_jits():
    traced = jax.jit(lambda y: reductions._kthvalue(y, 3, 1, False)[1])(jax.numpy.asarray(KTH_ROWS))
    _same(torch.tensor(KTH_ROWS).kthvalue(3, 1).indices, lg.tensor(np.asarray(traced)))


@pytest.mark.parametrize("n", [4, 7])
def test_median_nanmedian_indices(n):
    rng = np.random.default_rng(n)
    a = rng.integers(0, 3, (5, n)).astype(float)
    a[0] = NAN  # nanmedian: std::nth_element's position among all-equivalent NaNs
    a[1, ::2] = NAN
    a[2, -1] = NAN
    for op in ("median", "nanmedian"):
        t = torch.tensor(a, requires_grad=True)
        lt = lg.tensor(a, requires_grad=True)
        tv, ti = getattr(t, op)(1)
        lv, li = getattr(lt, op)(1)
        _same(ti, li)
        tv.sum().backward()
        lv.sum().backward()
        _same(t.grad, lt.grad)


@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "uint8", "complex128", "bool"])
def test_mul_by_bool_mask(dtype):
    values = {
        "float64": [INF, NAN, -1.0, 0.0, -INF, 2.0],
        "float32": [INF, NAN, -3.0, 1.0, -INF, 0.5],
        "int64": [3, -2, 0, 5, 1, -7],
        "uint8": [3, 0, 7, 1, 2, 9],
        "complex128": [complex(1, INF), complex(NAN, 1), -1 + 2j, 0j, 1j, INF],
        "bool": [True, False, True, True, False, False],
    }[dtype]
    mask = [False, True, False, True, True, False]
    ta, la = (
        torch.tensor(values, dtype=getattr(torch, dtype)),
        lg.tensor(values, dtype=getattr(lg, dtype)),
    )
    tm, lm = torch.tensor(mask), lg.tensor(mask)
    for t, lt in ((ta * tm, la * lm), (tm * ta, lm * la), (torch.mul(ta, tm), lg.mul(la, lm))):
        assert str(lt.dtype) == str(t.dtype)
        got, want = lt.numpy(), t.numpy()
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(np.signbit(got.real), np.signbit(want.real))


def test_mul_by_bool_mask_grad():
    x = [INF, NAN, 1.0, -2.0]
    gout = [NAN, 1.0, INF, 2.0]
    mask = [False, True, False, True]
    grads = []
    for m in (torch, lg):
        t = m.tensor(x, requires_grad=True)
        (t * m.tensor(mask)).backward(m.tensor(gout))
        grads.append(t.grad.numpy())
    np.testing.assert_array_equal(grads[1], grads[0])


WITH_NAN = np.array([[0.5, NAN, 1.5, 0.3], [0.2, 1.1, -0.4, 0.7], [NAN, 0.3, 0.4, -0.6]])
GRAPH_CASES = {
    "amax_nan": (lambda m, a: a.amax(1).sin(), WITH_NAN),
    "amin_nan_all": (lambda m, a: a.amin().sin(), WITH_NAN),
    "amax_0d": (lambda m, a: a.amax(0).sin(), np.array(0.7)),
    "amin_0d_keep": (lambda m, a: a.amin(-1, keepdim=True).sin(), np.array(0.7)),
    "var_empty": (lambda m, a: a.var([]).sin(), U34),
    "std_empty_c2": (lambda m, a: a.std([], correction=2).sin(), U34),
    "var_mean_empty": (
        lambda m, a: (lambda r: r[0] * r[1])(m.var_mean(a, [], correction=0)).sin(),
        U34,
    ),
}


@pytest.mark.parametrize("name", list(GRAPH_CASES))
def test_graph(name):
    fn, *inputs = GRAPH_CASES[name]
    check_graph(fn, *inputs, order=2)


EMPTY_DIM_CALLS = {
    "var": lambda m, a: a.var([]),
    "var_keep_c0": lambda m, a: a.var((), correction=0, keepdim=True),
    "std_c2": lambda m, a: a.std([], correction=2),
    "var_mean": lambda m, a: m.var_mean(a, [])[0],
    "sum": lambda m, a: a.sum([]),
    "mean": lambda m, a: a.mean([]),
    "amax": lambda m, a: a.amax([]),
    "logsumexp_keep": lambda m, a: m.logsumexp(a, [], keepdim=True),
    "logsumexp": lambda m, a: m.logsumexp(a, []),
    "logsumexp_3d": lambda m, a: m.logsumexp(a.reshape(1, 2, 3), ()),
    "count_nonzero": lambda m, a: m.count_nonzero(a, []),
}


@pytest.mark.parametrize("name", list(EMPTY_DIM_CALLS))
def test_empty_dim_list(name):
    a = np.array([[0.5, 0.2, 0.9], [0.1, 0.3, 0.0]])
    out = []
    for m in (torch, lg):
        x = m.tensor(a, requires_grad=True)
        try:
            r = EMPTY_DIM_CALLS[name](m, x)
        except RuntimeError as e:
            out.append(str(e))
            continue
        row = [tuple(r.shape), r.detach().numpy()]
        if r.requires_grad:
            row.append(m.autograd.grad(r.sum(), x)[0].numpy())
        out.append(row)
    if isinstance(out[0], str):
        assert out[1] == out[0]
        return
    assert out[1][0] == out[0][0]
    for got, want in zip(out[1][1:], out[0][1:]):
        np.testing.assert_allclose(got, want, rtol=1e-12)
