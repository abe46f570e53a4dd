"""Regressions found by fuzz seeds 155-156 and the probes they led to, against torch 2.13."""

from __future__ import annotations

import random

import jax
import pytest
from conftest import both

import leafgrad

STALE = {
    "multi-output view": 0,
    "no_grad view": 1,
    "unbind view": 2,
}
CALLS = {
    "fill_diagonal_": lambda c, m: c.fill_diagonal_(2.0),
    "index_fill_": lambda c, m: c.index_fill_(-1, m.tensor([0]), 1.0),
    "masked_fill_": lambda c, m: c.masked_fill_(m.tensor(True), 1.0),
    "zero_": lambda c, m: c.zero_(),
    "mul_": lambda c, m: c.mul_(2),
    "abs": lambda c, m: c.abs(),
    "is_leaf": lambda c, m: c.is_leaf,
    "retain_grad": lambda c, m: (c.retain_grad(), c.retains_grad),
    "requires_grad_": lambda c, m: c.requires_grad_(False).requires_grad,
    "detach_": lambda c, m: c.detach_().requires_grad,
    "add out=": lambda c, m: m.add(m.ones(3), 1, out=c),
    "sort out=": lambda c, m: m.sort(m.ones(3), out=(c, m.zeros(3, dtype=m.long))),
    "mul out= input": lambda c, m: m.mul(c, 2, out=m.zeros(3)),
    "F.relu_": lambda c, m: m.nn.functional.relu_(c),
    "nn.init.zeros_": lambda c, m: repr(m.nn.init.zeros_(c)),  # grad_fn=<Invalid>
}


@pytest.mark.parametrize("call", list(CALLS))
@pytest.mark.parametrize("stale", list(STALE))
def test_calls_on_a_view_whose_base_was_written(stale, call):
    """Seed 156: ``fill_diagonal_`` of a chunk whose base ``relu_`` had written named its
    diagonal's ``AsStrided`` view ("is being modified"); PyTorch first regenerates the stale
    view's grad_fn and raises "its base or another view of its base has been modified". Also
    from the probe: ``retain_grad`` of a no_grad view of a written base raised (PyTorch's C++
    ``is_leaf`` reads the stored grad_fn: a no-op), and ``out=`` calls raised the stale view's
    error before "functions with out=... arguments don't support automatic differentiation"."""

    def run(m):
        x = m.ones(3, 3, requires_grad=True)
        b = x.abs()
        kind = STALE[stale]
        if kind == 0:
            c = b.chunk(3, 0)[0]
            m.nn.functional.relu_(b)
        elif kind == 1:
            with m.no_grad():
                c = b[0]
            b.mul_(2)
        else:
            c = b.unbind(0)[0]
            b.add_(1)
        return CALLS[call](c, m)

    both(run)


def test_code_mappings_are_given_back_past_half_the_limit(monkeypatch):
    """Note [Code mappings]: every 32 compilations the process's memory mappings are counted;
    past half of ``vm.max_map_count`` JAX's compiled executables are dropped at leafgrad's next
    new dispatch plan (a ``kthvalue`` takes ~150 mappings a shape: ~430 new shapes crashed the
    process in LLVM). Here the limit is set below the current count."""
    from leafgrad import _code_memory

    if _code_memory.mappings() == 0:
        pytest.skip("no /proc/self/maps here")
    cleared = []
    monkeypatch.setitem(_code_memory._state, "limit", 2)
    monkeypatch.setitem(_code_memory._state, "pending", False)
    monkeypatch.setattr(_code_memory.jax, "clear_caches", lambda: cleared.append(True))
    x = leafgrad.arange(100.0)
    for n in range(1, 2 * _code_memory._EVERY + 2):  # new shapes: new compilations
        assert x[:n].sum().item() == n * (n - 1) / 2
    assert cleared, "the mappings past the limit did not clear JAX's caches"
    # the loop's last compilation may have counted again: a new plan whose kernels are compiled
    # already (same shapes, now requiring grad) clears what is pending and compiles nothing
    x.requires_grad_()[:1].sum()
    assert not _code_memory._state["pending"]


def test_cleared_caches_recompile_what_is_needed():
    """After ``jax.clear_caches()`` (what the guard calls) cached dispatch plans and backwards
    still run: their jitted functions compile again."""
    x = leafgrad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    (x * x).sum().backward()
    jax.clear_caches()
    y = leafgrad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    (y * y).sum().backward()
    assert y.grad.tolist() == [2.0, 4.0, 6.0]


def _tied_rows(n, pool, seed, rows=3):
    rng = random.Random(seed)
    return [[rng.choice(pool) for _ in range(n)] for _ in range(rows)]


POOLS = {
    "three values": [0.0, 1.0, 2.0],
    "nans": [0.0, 1.0, float("nan")],
    "signed zeros": [0.0, -0.0, 1.0],
    "distinct": [float(i) for i in range(1000)],
}
TOPK = [  # (n, k): k * 64 <= n takes std::partial_sort, else nth_element (+ std::sort)
    (2, 1),
    (5, 2),
    (17, 5),
    (17, 17),
    (40, 13),
    (130, 2),
    (200, 3),
]


@pytest.mark.parametrize("n,k", TOPK)
@pytest.mark.parametrize("largest,sorted_", [(True, True), (False, True), (True, False)])
def test_topk_orders_ties_as_libstdcxx(n, k, largest, sorted_):
    """Seed 149: among equal values PyTorch's CPU topk returns the indices libstdc++'s
    partial_sort / nth_element / sort leave first (and with ``sorted=False`` their whole
    order); leafgrad returned a stable sort's (Note [libstdc++ orderings]). Rows are
    independent: one tensor holds three rows drawn from each pool (one compile a case)."""
    rows = [r for pool in POOLS.values() for r in _tied_rows(n, pool, n * 7 + k)]

    def run(m):
        x = m.tensor(rows, requires_grad=True)
        values, indices = x.topk(k, largest=largest, sorted=sorted_)
        values.sum().backward()
        return values, indices, x.grad

    both(run)


@pytest.mark.parametrize("n", [5, 16, 17, 40, 300])
def test_mode_index_as_libstdcxx_sort(n):
    """``mode``'s index is the last of the winning run in the order ``std::sort`` leaves (an
    introsort past 16 elements); leafgrad took the last occurrence in the input. Three rows of
    each pool in one tensor; the integer copy takes the rows without NaN."""
    rows = _tied_rows(n, POOLS["three values"], n) + _tied_rows(n, POOLS["nans"], n)

    def run(m):
        x = m.tensor(rows)
        return x.mode(1), x[:3].long().mode(1)

    both(run)


@pytest.mark.parametrize("dtype", ["float32", "int64", "bfloat16"])
@pytest.mark.parametrize("n", [16, 17, 90])
@pytest.mark.parametrize("descending", [False, True])
def test_unstable_sort_orders_ties_as_std_sort(n, descending, dtype):
    """PyTorch's CPU ``sort(stable=False)`` (the default) is ``std::sort``: past 16 elements
    equal values leave the introsort in its order, not in index order as leafgrad's stable
    sort left them. ``stable=True`` keeps index order."""
    pool = [0.0, 1.0, 2.0, float("nan")] if dtype != "int64" else [0, 1, 2]
    rows = _tied_rows(n, pool, n + descending)

    def run(m):
        x = m.tensor(rows).to(getattr(m, dtype))
        return (
            x.sort(descending=descending),
            x.sort(descending=descending, stable=True),
            x.t().argsort(0, descending=descending),
        )

    both(run)


EMPTY_WRITES = {
    "add_": lambda x, m: x.add_(m.tensor(1.0), alpha=2),
    "mul_": lambda x, m: x.mul_(2),
    "copy_": lambda x, m: x.copy_(m.ones(2, 0)),
    "exp_": lambda x, m: x.exp_(),
    "normal_": lambda x, m: x.normal_(),
    "add out=": lambda x, m: m.add(m.ones(2, 0), 1, out=x),
    "setitem": lambda x, m: x.__setitem__(..., 1.0),
    "scatter_": lambda x, m: x.scatter_(1, m.zeros(2, 0, dtype=m.long), 1.0),
    "sort out=": lambda x, m: m.sort(m.ones(2, 0), out=(x, m.zeros(2, 0, dtype=m.long))),
}


@pytest.mark.parametrize("call", list(EMPTY_WRITES))
def test_writes_to_an_expanded_empty_tensor(call):
    """Seed 157: an empty tensor expanded (sizes (2, 0), strides (0, 1)) has no elements that
    share memory; PyTorch writes it, leafgrad raised "more than one element of the written-to
    tensor refers to a single memory location"."""

    def run(m):
        x = m.zeros(0).expand(2, 0)
        EMPTY_WRITES[call](x, m)
        return x

    both(run)


RESULT_READERS = {
    "pow(x, x)": lambda m, x, z: m.pow(x, x),
    "pow(z, x)": lambda m, x, z: m.pow(z, x),
    "float_power(x, x)": lambda m, x, z: m.float_power(x, x),
    "2 ** x": lambda m, x, z: 2.0**x,
    "prod": lambda m, x, z: m.stack([x, z]).prod(),
    "cumprod": lambda m, x, z: m.stack([x, z, x]).cumprod(0).sum(),
    "norm": lambda m, x, z: m.stack([x, z]).norm(),
    "logsumexp": lambda m, x, z: m.stack([x, z]).logsumexp(0),
    "exp": lambda m, x, z: x.exp(),
}


@pytest.mark.parametrize("retain", [False, True])
@pytest.mark.parametrize("fn", list(RESULT_READERS))
def test_create_graph_formulas_read_the_saved_result(fn, retain):
    """Seed 157: PyTorch's gradient formulas of pow's exponent, prod, cumprod, norm and
    logsumexp read the node's saved ``result``, whose history is the node itself: after
    ``autograd.grad(create_graph=True, retain_graph=False)`` a backward through the gradient
    reaches the freed node and raises. leafgrad computed the result again (a new node), so it
    ran. With the graph retained both give the same second derivatives."""

    def run(m):
        x = m.tensor(1.5, dtype=m.float64, requires_grad=True)
        z = m.tensor(2.5, dtype=m.float64, requires_grad=True)
        y = RESULT_READERS[fn](m, x, z)
        (g,) = m.autograd.grad(y, (x,), retain_graph=retain, create_graph=True)
        g.clone().backward()
        return x.grad, z.grad

    both(run)


INT_VIEW_WRITES = {
    "setitem": lambda c, x, m: c.__setitem__(0, x[0, 0]),
    "copy_": lambda c, x, m: c.copy_(x[0]),
    "fill_": lambda c, x, m: c.fill_(x[0, 0]),
    "masked_fill_": lambda c, x, m: c.masked_fill_(m.tensor([True, False, True]), x[0, 0]),
    "add_": lambda c, x, m: c.add_(x[0]),
}


@pytest.mark.parametrize("call", list(INT_VIEW_WRITES))
@pytest.mark.parametrize("kind", ["chunk", "no_grad view", "unbind", "stale unbind"])
def test_writes_from_a_tensor_that_requires_grad_into_an_integer_view(kind, call):
    """Seed 159: ``c[0] = x`` (``copy_``) into an int64 view made by ``chunk`` with ``x``
    requiring grad raised the multi-output view error; PyTorch's ``copy_`` checks (and records)
    only a ``self`` of a differentiable dtype. Other in-place ops check whatever the dtype."""

    def run(m):
        x = m.tensor([[1.5, 2.5, 3.5], [0.5, 1.0, 2.0]], requires_grad=True)
        i = m.arange(6).reshape(2, 3)
        if kind == "chunk":
            c = i.flatten().chunk(2)[0]
        elif kind == "no_grad view":
            with m.no_grad():
                c = i[0]
        else:
            c = i.unbind(0)[0]
            if kind == "stale unbind":
                i.add_(1)
        INT_VIEW_WRITES[call](c, x, m)
        return c, c.requires_grad, c.grad_fn, i

    both(run)
