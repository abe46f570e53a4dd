"""The Tensor methods PyTorch writes in Python (``torch/_tensor.py``): ``in``, ``reversed``,
``__rdiv__``, ``is_shared``/``share_memory_``, the deprecated autograd ``resize``/``resize_as``,
and the names Python gives them in argument errors (Note [Python-level methods])."""

from __future__ import annotations

import types

import pytest
import torch
from conftest import both

import leafgrad as lg


def _matrix(m):
    return m.tensor([[1.0, 2.0], [3.0, 4.0]])


@pytest.mark.parametrize(
    "element",
    [2, 5, 2.0, True, 0, 3 + 0j, "tensor_row", "tensor_missing", "0d", "str", "list", None],
)
def test_contains(element):
    def run(m):
        x = _matrix(m)
        e = {
            "tensor_row": m.tensor([1.0, 2.0]),
            "tensor_missing": m.tensor([9.0, 2.5]),
            "0d": m.tensor(4),
            "str": "a",
            "list": [1.0],
        }.get(element, element)
        return (e in x), (e in m.tensor(3.0))

    both(run)


def test_reversed_and_rdiv():
    def run(m):
        x = m.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        rows = list(reversed(x))
        scalar = m.tensor(3.0)
        r = x.__rdiv__(2)
        (sum(rows).sum() + r.sum()).backward()
        return rows, reversed(scalar) is scalar, r, x.grad

    both(run)


def test_share_memory_marks_the_storage():
    def run(m):
        x = m.ones(4)
        view = x[1:]
        before = (x.is_shared(), view.is_shared())
        out = x.share_memory_()
        return before, out is x, x.is_shared(), view.is_shared(), m.ones(2).is_shared()

    both(run)


@pytest.mark.parametrize(
    "call",
    [
        lambda x, m: x.resize(2, 3),
        lambda x, m: x.resize(6),
        lambda x, m: x.resize((2, 3)),  # PyTorch multiplies the sizes as given: refused
        lambda x, m: x.resize(4),
        lambda x, m: x.resize_as(m.zeros(3, 2)),
        lambda x, m: x.resize_as(m.zeros(2, 2)),
        lambda x, m: x.t().resize(6),
    ],
)
def test_resize_is_an_autograd_reshape(call):
    def run(m):
        base = m.arange(6.0).view(2, 3).requires_grad_()
        x = base * 1
        y = call(x, m)
        (y * m.arange(6.0).view(y.shape)).sum().backward()
        return y, type(y.grad_fn).__name__, base.grad, x._version

    both(run)


_PYTHON_METHODS = [
    n
    for n, v in vars(torch.Tensor).items()
    if isinstance(v, types.FunctionType) and not n.startswith("_") and hasattr(lg.Tensor, n)
]


@pytest.mark.parametrize("name", _PYTHON_METHODS)
def test_python_methods_are_named_in_argument_errors(name):
    """A wrong keyword names ``Tensor.<name>()``, as Python does for PyTorch's methods."""
    both(lambda m: getattr(m.ones(3), name)(not_an_argument=1))


@pytest.mark.parametrize("name", ["norm", "split", "unique", "unique_consecutive", "lu", "stft"])
def test_functional_functions_are_named_in_argument_errors(name):
    both(lambda m: getattr(m, name)(m.ones(3), not_an_argument=1))
