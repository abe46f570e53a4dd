"""torch.histogram against PyTorch: equal-width and given edges, range, weights, density, edge
cases, the NotImplemented node and errors."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import both

DATA = np.random.default_rng(0).standard_normal((3, 7))


@pytest.mark.parametrize(
    "kwargs",
    [
        {"bins": 4},
        {"bins": 10, "range": (-1.0, 1.0)},
        {"bins": 3, "density": True},
        {"bins": 5, "weight": True},
        {"bins": 5, "weight": True, "density": True, "range": (-2.0, 0.5)},
        {"bins": "edges"},
        {"bins": "edges", "density": True, "weight": True},
    ],
    ids=str,
)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_histogram_values(kwargs, dtype):
    def f(m):
        dt = getattr(m, dtype)
        x = m.tensor(DATA, dtype=dt)
        kw = dict(kwargs)
        if kw.get("weight"):
            kw["weight"] = m.tensor(np.abs(DATA) + 0.5, dtype=dt)
        if kw["bins"] == "edges":
            kw["bins"] = m.tensor([-2.0, -0.5, 0.0, 0.1, 1.0, 3.0], dtype=dt)
        r = m.histogram(x, **kw)
        return r, type(r).__name__, r.hist, r.bin_edges

    both(f)


def test_histogram_edge_cases():
    def f(m):
        return (
            m.histogram(m.tensor([2.0, 2.0]), 2),  # one value: the range is widened
            m.histogram(m.tensor([]), 2),
            m.histogram(m.tensor([0.0, 1.0, 2.0, 3.0]), bins=3),  # the last edge counts
            m.histogram(m.tensor([float("inf"), 1.0]), 2, range=(0.0, 2.0)),
            m.tensor([1.0, 5.0, 3.0]).histogram(2),
        )

    both(f)


def test_histogram_of_a_tensor_requiring_grad():
    def f(m):
        x = m.tensor([1.0, 2.0, 1.0, 2.5, 4.0], requires_grad=True)
        r = m.histogram(x, 4)
        names = type(r.hist.grad_fn).__name__, type(r.bin_edges.grad_fn).__name__
        r.hist.sum().backward()
        return names

    both(f)


@pytest.mark.parametrize(
    "call",
    [
        lambda m: m.histogram(m.tensor([1, 2]), 2),
        lambda m: m.histogram(m.tensor([1.0, 2.0]), bins=m.tensor([0.0, 3.0], dtype=m.float64)),
        lambda m: m.histogram(m.tensor([1.0, float("nan")]), 2),
        lambda m: m.histogram(m.tensor([1.0, 2.0]), 0),
        lambda m: m.histogram(m.tensor([1.0, 2.0]), 2, range=(3.0, 1.0)),
        lambda m: m.histogram(m.tensor([1.0, 2.0]), 2, weight=m.ones(3)),
    ],
)
def test_histogram_errors(call):
    both(call)
