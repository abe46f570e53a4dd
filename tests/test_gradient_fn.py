"""torch.gradient against PyTorch: spacing as a number, a number per dimension or coordinates,
``dim`` and ``edge_order``; values, ``grad_fn`` names, gradients and errors."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import both

CASES = [
    {},
    {"edge_order": 2},
    {"spacing": 2.0},
    {"spacing": 0.5, "edge_order": 2, "dim": 1},
    {"dim": 0},
    {"dim": [1, 0]},
    {"spacing": [1.5, 3.0]},
    {"spacing": (2.0,), "dim": -1, "edge_order": 2},
    {"spacing": "coordinates"},
    {"spacing": "coordinates", "edge_order": 2},
    {"spacing": "coordinates-dim", "dim": 1, "edge_order": 2},
]


def _spacing(m, kwargs):
    kwargs = dict(kwargs)
    if kwargs.get("spacing") == "coordinates":
        kwargs["spacing"] = [
            m.tensor([0.0, 0.5, 1.5, 3.0], dtype=m.float64),
            m.tensor([-1.0, 0.0, 0.25, 1.0, 2.5], dtype=m.float64),
        ]
    elif kwargs.get("spacing") == "coordinates-dim":
        kwargs["spacing"] = [m.tensor([-1.0, 0.0, 0.25, 1.0, 2.5], dtype=m.float64)]
    return kwargs


@pytest.mark.parametrize("kwargs", CASES, ids=str)
def test_gradient_values_and_backward(kwargs):
    data = np.random.default_rng(0).standard_normal((4, 5))

    def f(m):
        x = m.tensor(data, dtype=m.float64, requires_grad=True)
        out = m.gradient(x, **_spacing(m, kwargs))
        sum(((o * (k + 1)) ** 2).sum() for k, o in enumerate(out)).backward()
        return out, x.grad

    both(f)


@pytest.mark.parametrize("dtype", ["int64", "float32"])
def test_gradient_of_other_dtypes(dtype):
    def f(m):
        x = m.tensor([[1, 4, 9, 16], [2, 3, 5, 7]], dtype=getattr(m, dtype))
        return m.gradient(x), m.gradient(x, spacing=2, dim=1, edge_order=2)

    both(f)


def test_gradient_of_coordinates_requiring_grad():
    def f(m):
        x = m.tensor([1.0, 2.5, 2.0, 4.0, 7.0], dtype=m.float64)
        c = m.tensor([0.0, 1.0, 1.5, 3.0, 4.0], dtype=m.float64, requires_grad=True)
        (g,) = m.gradient(x, spacing=[c], edge_order=2)
        g.sum().backward()
        return g, c.grad

    both(f)


@pytest.mark.parametrize(
    "call",
    [
        lambda m, x: m.gradient(x, edge_order=3),
        lambda m, x: m.gradient(x[:2], edge_order=2),
        lambda m, x: m.gradient(x, spacing=[1.0]),
        lambda m, x: m.gradient(x, spacing=[1.0, 2.0], dim=0),
        lambda m, x: m.gradient(x, dim=[0, 0]),
        lambda m, x: m.gradient(x, dim=2),
        lambda m, x: m.gradient(x.to(m.uint8)),
        lambda m, x: m.gradient(x, spacing=[m.ones(2, 3)], dim=0),
    ],
)
def test_gradient_errors(call):
    def f(m):
        call(m, m.arange(12.0).reshape(3, 4))

    both(f)
