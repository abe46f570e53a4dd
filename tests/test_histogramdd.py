"""torch.histogramdd against PyTorch: counts, weights, densities, ranges, bin edges (counts or
tensors), the NotImplemented nodes and their backward errors, and the argument errors."""

from __future__ import annotations

import pytest
from conftest import both

POINTS = [[0.0, 1.0], [1.0, 0.0], [2.0, 0.0], [2.0, 2.0], [0.5, 1.5]]
WEIGHTS = [1.0, 2.0, 3.0, 4.0, 5.0]

CASES = [
    {},
    {"bins": 3},
    {"bins": [2, 3]},
    {"bins": (3, 1)},
    {"bins": "tensors"},
    {"bins": "decreasing"},
    {"bins": 2, "density": True},
    {"bins": [3, 2], "weight": True},
    {"bins": 2, "range": [0.0, 1.0, 0.0, 1.0]},
    {"bins": [2, 2], "range": [0.0, 1.0, 0.0, 1.0], "density": True, "weight": True},
    {"bins": 2, "requires_grad": True},
    {"bins": "tensors", "requires_grad": True},
    {"bins": 2, "shape": (0, 2)},
    {"bins": [2, 2, 1], "shape": (2, 3, 3)},
    {"bins": 2, "constant": True},
    {"bins": 2, "dtype": "float64"},
]
ERRORS = [
    {"bins": [2, 0]},
    {"bins": 0},
    {"bins": [2, 3, 4]},
    {"bins": "one tensor"},
    {"bins": "2-d tensor"},
    {"bins": "double tensor"},
    {"bins": "empty tensor"},
    {"bins": 2, "weight": "short"},
    {"bins": 2, "weight": "double"},
    {"bins": 2, "range": [1.0, 0.0, 0.0, 1.0]},
    {"bins": 2, "range": [0.0, float("inf"), 0.0, 1.0]},
    {"bins": 2, "range": [0.0, 1.0]},
    {"bins": 2, "shape": (2,)},
    {"bins": [2, 2], "dtype": "int64"},
    {"bins": 2, "nan": True},
]


def _run(case):
    def f(m):
        case_ = dict(case)
        dtype = getattr(m, case_.pop("dtype", "float32"))
        x = m.tensor(POINTS, dtype=dtype)
        if "shape" in case_:
            x = m.ones(*case_.pop("shape"), dtype=dtype)
        if case_.pop("constant", False):
            x = m.ones(4, 2)
        if case_.pop("nan", False):
            x = m.tensor([[float("nan"), 1.0]])
        if case_.pop("requires_grad", False):
            x.requires_grad_()
        bins = case_.pop("bins", 10)
        edges = {
            "tensors": lambda: [m.tensor([0.0, 1.0, 2.0]), m.tensor([0.0, 0.5, 2.5])],
            "decreasing": lambda: [m.tensor([2.0, 1.0, 0.0]), m.tensor([0.0, 2.0])],
            "one tensor": lambda: [m.tensor([0.0, 1.0])],
            "2-d tensor": lambda: [m.tensor([0.0, 1.0]), m.tensor([[0.0, 1.0]])],
            "double tensor": lambda: [m.tensor([0.0, 1.0]), m.tensor([0.0, 1.0], dtype=m.float64)],
            "empty tensor": lambda: [m.tensor([0.0, 1.0]), m.tensor([])],
        }
        if isinstance(bins, str):
            bins = edges[bins]()
        weight = case_.pop("weight", None)
        if weight is not None:
            weight = {
                True: lambda: m.tensor(WEIGHTS),
                "short": lambda: m.tensor(WEIGHTS[:3]),
                "double": lambda: m.tensor(WEIGHTS, dtype=m.float64),
            }[weight]()
        h = m.histogramdd(x, bins=bins, weight=weight, **case_)
        out = [h.hist, tuple(h.bin_edges), type(h.hist.grad_fn).__name__]
        out.append([(e.requires_grad, type(e.grad_fn).__name__) for e in h.bin_edges])
        out.append(isinstance(bins, list) and all(a is b for a, b in zip(h.bin_edges, bins)))
        if x.requires_grad:
            for y in (h.hist, h.bin_edges[0]):
                try:
                    y.sum().backward()
                except RuntimeError as e:
                    out.append(str(e))
        return out

    return f


@pytest.mark.parametrize("k", range(len(CASES)))
def test_histogramdd(k):
    both(_run(CASES[k]))


@pytest.mark.parametrize("k", range(len(ERRORS)))
def test_histogramdd_errors(k):
    both(_run(ERRORS[k]))
