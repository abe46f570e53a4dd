"""The value-selecting ops' backward from their saved indices (Note [Saved indices] in
leafgrad/ops/table.py): ``sort``, ``topk``, ``max``/``min`` over a dim, ``kthvalue``,
``median``/``nanmedian`` over a dim and ``mode``. Gradients (ties, NaN, signed zeros, 0-d and
empty inputs), saved attributes, saved tensor hooks, version errors, double backward and what the
node keeps are compared with torch."""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest
import torch
from conftest import both, host

import leafgrad as lg

SELECT = {
    "sort": lambda x: x.sort(-1)[0],
    "sort_desc_stable": lambda x: x.sort(dim=0, descending=True, stable=True)[0],
    "topk": lambda x: x.topk(2, -1)[0],
    "topk_smallest_unsorted": lambda x: x.topk(3, 0, largest=False, sorted=False)[0],
    "max": lambda x: x.max(-1)[0],
    "max_keepdim": lambda x: x.max(0, keepdim=True)[0],
    "min": lambda x: x.min(-1)[0],
    "kthvalue": lambda x: x.kthvalue(2, -1)[0],
    "kthvalue_keepdim": lambda x: x.kthvalue(1, 0, keepdim=True)[0],
    "median": lambda x: x.median(-1)[0],
    "nanmedian": lambda x: x.nanmedian(0)[0],
    "mode": lambda x: x.mode(-1)[0],
    "mode_keepdim": lambda x: x.mode(0, keepdim=True)[0],
}

# ties, a NaN, signed zeros and infinities: the indices are PyTorch's (Note [libstdc++
# orderings]), and the gradient goes where they point
_VALUES = np.array(
    [
        [1.0, -0.0, 3.0, 1.0, 0.0],
        [2.0, np.nan, -1.0, 2.0, 5.0],
        [-np.inf, 4.0, 4.0, 0.5, np.inf],
        [7.0, 7.0, 7.0, -2.0, 1.0],
    ],
    np.float32,
)


def _grad_out(shape, seed=0):
    """An upstream gradient with a negative zero in it (``scatter`` keeps its sign)."""
    g = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    g.reshape(-1)[:1] = -0.0
    return g


def _same_bits(t, g):
    a, b = host(t), host(g)
    np.testing.assert_array_equal(b, a)
    np.testing.assert_array_equal(np.signbit(b), np.signbit(a))


@pytest.mark.parametrize("name", sorted(SELECT))
def test_gradient_as_torch(name, engine):
    """The gradient of the selected values, bit for bit, with torch's indices and grad_fn."""
    fn = SELECT[name]
    for values in (_VALUES, _VALUES[:, :3], np.float32(2.5)):
        try:
            shape = fn(torch.tensor(values)).shape
        except RuntimeError:  # k out of range of a 0-d input (the errors: test_ops_reductions)
            continue
        g = _grad_out(tuple(shape))
        grads = []
        for m in (torch, lg):
            x = m.tensor(values, requires_grad=True)
            out = fn(x)
            assert (
                type(out.grad_fn).__name__
                == type(fn(torch.tensor(values, requires_grad=True)).grad_fn).__name__
            )
            (gx,) = m.autograd.grad(out, x, m.tensor(g))
            grads.append(gx)
        _same_bits(*grads)


@pytest.mark.parametrize(
    "dtype",
    ["float64", "bfloat16", "float16"],
)
def test_other_dtypes(dtype):
    for name in ("sort", "topk", "max", "kthvalue", "median"):
        fn = SELECT[name]
        out = []
        for m in (torch, lg):
            x = m.tensor(_VALUES, dtype=getattr(m, dtype), requires_grad=True)
            fn(x).sum().backward()
            out.append(x.grad)
        assert str(out[1].dtype) == str(out[0].dtype)
        _same_bits(*out)


def test_empty_dims():
    """Empty inputs and ``topk(0)``: zeros of the input's shape."""
    cases = [
        ((0, 3), lambda x: x.sort(0)[0]),
        ((0, 3), lambda x: x.max(1)[0]),
        ((2, 3), lambda x: x.topk(0, 1)[0]),
        ((2, 0), lambda x: x.topk(0, 1)[0]),
        ((2, 0), lambda x: x.sort(-1)[0]),
    ]
    for shape, fn in cases:

        def run(m, shape=shape, fn=fn):
            x = m.zeros(shape, requires_grad=True)
            fn(x).sum().backward()
            return x.grad

        both(run)


def test_saved_attributes():
    """``_saved_indices`` is the indices output; the sizes and dim are PyTorch's."""
    for name in ("sort", "topk", "max", "kthvalue_keepdim", "mode"):
        fn = SELECT[name]

        def run(m, fn=fn):
            x = m.tensor(_VALUES, requires_grad=True)
            node = fn(x).grad_fn
            sizes = tuple(node._saved_self_sym_sizes)
            return {"indices": node._saved_indices, "dim": node._saved_dim, "sizes": sizes}

        both(run)


def test_saved_tensor_hooks():
    """The node packs the indices output, as PyTorch's does; backward reads what unpack gives."""
    for name in ("sort", "topk_smallest_unsorted", "max_keepdim", "median"):
        fn = SELECT[name]

        def run(m, fn=fn):
            packed = []

            def pack(t):
                packed.append((tuple(t.shape), str(t.dtype), t.requires_grad))
                return t

            x = m.tensor(_VALUES, requires_grad=True)
            with m.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
                out = fn(x * 1)
            out.sum().backward()
            return packed, x.grad

        both(run)


def test_indices_written_in_place():
    """A write to the indices output after the op: backward raises PyTorch's version error."""

    def run(m):
        x = m.tensor(_VALUES, requires_grad=True)
        values, indices = x.sort(-1)
        indices.add_(0)
        values.sum().backward()

    both(run)


def test_backward_twice():
    def run(m):
        x = m.tensor(_VALUES, requires_grad=True)
        out = x.topk(2, -1)[0].sum()
        out.backward()
        out.backward()

    both(run)


def test_double_backward():
    """``create_graph``: the gradient is a function of the upstream gradient (the indices are
    constants); its graph and second derivatives are torch's."""
    for name in ("sort", "topk", "max", "kthvalue", "median", "mode"):
        fn = SELECT[name]

        def run(m, fn=fn):
            x = m.tensor(_VALUES, requires_grad=True)
            out = fn(x * 2)
            g = m.ones(out.shape, requires_grad=True)
            (gx,) = m.autograd.grad(out, x, g, create_graph=True)
            (gg,) = m.autograd.grad((gx * gx).sum(), g)
            return gx, type(gx.grad_fn).__name__, gg

        both(run)


def test_node_does_not_keep_its_input():
    """The node keeps the indices, not the input (PyTorch's keeps the input's sizes only): an
    intermediate input is freed once nothing else holds it, and backward still works."""
    x = lg.tensor(_VALUES[:, :4] + 10, requires_grad=True)
    y = x + 1  # AddBackward0 keeps nothing
    values = y.sort(-1).values
    ref = weakref.ref(y._data)
    del y
    gc.collect()
    assert ref() is None
    values.sum().backward()
    np.testing.assert_array_equal(np.asarray(x.grad._data), np.ones((4, 4), np.float32))


# --- topk by values (Note [Top k by values] in leafgrad/ops/reductions.py) -------------------

_TOPK_SHAPES = [(2, 1), (7, 7), (130, 2), (700, 10)]  # (n, k); 64 k <= n: sorted


def _distinct(dtype, rows, n, seed):
    """``rows`` x ``n`` values of ``dtype``, all distinct within a row where the dtype allows."""
    rng = np.random.default_rng(seed)
    if dtype in ("int8", "uint8", "int16"):
        low = {"int8": -128, "uint8": 0, "int16": -2000}[dtype]
        width = min(n, 256) if dtype != "int16" else n
        rows_ = [rng.permutation(np.arange(low, low + max(width, n)))[:n] for _ in range(rows)]
        return np.stack(rows_).astype(dtype)
    values = rng.permutation(np.arange(rows * n)).reshape(rows, n) * 0.25 - rows * n / 8
    return values.astype(np.float32)


_TOPK_DTYPES = ["float32", "float16", "bfloat16", "int8", "uint8", "int16"]


@pytest.mark.parametrize(
    "dtype,n,k",
    [
        (d, n, k)
        for d in _TOPK_DTYPES
        for n, k in _TOPK_SHAPES
        if not (d in ("int8", "uint8") and n > 256)
    ],
)
def test_topk_by_values_as_torch(dtype, n, k):
    """Rows without ties (XLA's top-k) and, for two dtypes, rows with a tie at the k-th place,
    a NaN, or -0.0 beside 0.0 (PyTorch's orderings): values and indices as torch's, both
    directions; unsorted where PyTorch's kernel sorts (64 k <= n)."""
    clean = _distinct(dtype, 3, n, seed=n + k)
    cases = [clean]
    if dtype in ("float32", "int16") and k < n:
        odd = clean.copy()
        odd[0, 1] = odd[0, 0]  # a tie
        if dtype == "float32":
            odd[1, :2] = (-0.0, 0.0)
            odd[2, n // 2] = np.nan
        cases.append(odd)
    for values in cases:
        for largest in (True, False):
            for sorted_ in (True, False) if 64 * k <= n else (True,):

                def run(m, values=values, largest=largest, sorted_=sorted_):
                    x = m.tensor(values).to(getattr(m, dtype))
                    out = x.topk(k, -1, largest=largest, sorted=sorted_)
                    return out.values, out.indices

                both(run)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "int32", "uint8"])
def test_best_index_as_torch(dtype):
    """``max``/``min`` over a dim and ``argmax``/``argmin``: the first best position, a NaN before
    any number, ``-0.0`` and ``0.0`` tied (the first kept, with its sign), on 400 random rows of
    few distinct values in one tensor (one kernel per call)."""
    rng = np.random.default_rng(7)
    pool = [0.0, 1.0, 2.0, 3.0]
    if dtype.startswith(("float", "bfloat")):
        pool += [np.nan, -0.0, np.inf, -np.inf, -1.0]
    x = np.array(pool)[rng.integers(0, len(pool), (400, 7))]
    t = torch.tensor(x).to(getattr(torch, dtype))
    lt = lg.tensor(x).to(getattr(lg, dtype))
    for dim in (1, 0):
        for name in ("max", "min"):
            want, got = getattr(t, name)(dim), getattr(lt, name)(dim)
            np.testing.assert_array_equal(host(got.indices), want.indices.numpy())
            a, b = want.values.double().numpy(), host(got.values.double())
            np.testing.assert_array_equal(b, a)
            # a NaN's sign bit after a conversion is the conversion kernel's, not max's
            np.testing.assert_array_equal(np.signbit(b[a == a]), np.signbit(a[a == a]))
            arg = getattr(t, "arg" + name)(dim)
            np.testing.assert_array_equal(host(getattr(lt, "arg" + name)(dim)), arg.numpy())
        assert int(lt.argmax()) == int(t.argmax()) and int(lt.argmin()) == int(t.argmin())


_RANKED = {
    "kthvalue": lambda x: x.kthvalue(3, 1),
    "kthvalue_dim0": lambda x: x.kthvalue(40, 0, keepdim=True),
    "median": lambda x: x.median(1),
    "nanmedian": lambda x: x.nanmedian(1),
    "median_all": lambda x: (x.median(),),
    "nanmedian_all": lambda x: (x.nanmedian(),),
}


@pytest.mark.parametrize("ties", [False, True], ids=["distinct", "ties"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "int16", "uint8"])
def test_rank_select_as_torch(dtype, ties):
    """Note [Selection by bits]: ``kthvalue`` and ``median`` find a sorted position without a
    sort where its value is unique in every row (``distinct``: a permutation, NaN and signed
    zeros where the dtype has them, once per row), else take the exact path (``ties``): values,
    indices and gradients as torch's."""
    rng = np.random.default_rng(3 + ties)
    rows, n = 60, 9
    if ties:
        x = rng.integers(0, 4, (rows, n)).astype(np.float64)
    else:
        x = np.stack([rng.permutation(n) for _ in range(rows)]).astype(np.float64) * 2 - 7
        if dtype == "uint8":
            x += 7
    if dtype.startswith(("float", "bfloat")):
        where = rng.integers(0, n, rows)
        x[np.arange(rows), where] = np.where(np.arange(rows) % 3 == 0, np.nan, x[:, 0] * 0 - 0.0)
        if not ties:  # -0.0 beside a 0.0 would tie: keep the row distinct
            x[x == 0] = np.where(np.signbit(x[x == 0]), -0.0, 0.5)
    t = torch.tensor(x).to(getattr(torch, dtype))
    lt = lg.tensor(x).to(getattr(lg, dtype))
    floating = dtype.startswith(("float", "bfloat"))
    if floating:
        t.requires_grad_()
        lt.requires_grad_()
    for name, fn in _RANKED.items():
        want, got = fn(t), fn(lt)
        a, b = want[0].detach().double().numpy(), host(got[0].detach().double())
        np.testing.assert_array_equal(b, a, err_msg=name)
        np.testing.assert_array_equal(np.signbit(b[a == a]), np.signbit(a[a == a]), err_msg=name)
        if len(want) > 1:
            np.testing.assert_array_equal(host(got[1]), want[1].numpy(), err_msg=name)
        if floating:
            # (a -0.0 gradient of a 0-d median meets a known float16 sign gap of its spread)
            g = _grad_out(tuple(want[0].shape)) if want[0].ndim else np.float32(1.5)
            (gt,) = torch.autograd.grad(want[0], t, torch.tensor(g).to(t.dtype))
            (gl,) = lg.autograd.grad(got[0], lt, lg.tensor(g).to(lt.dtype))
            _same_bits(gt.double(), gl.double())
