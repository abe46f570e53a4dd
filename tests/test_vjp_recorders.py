"""One small differential test for each op that the larger test grids reach only in some of their
cases, so that the numerical VJP check (Note [VJP samples] in conftest.py) sees every op of the
table whichever cases run (Note [Test tiers])."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import both

_RNG = np.random.default_rng(5)
_X = _RNG.standard_normal((3, 4))
_SQUARE = _RNG.standard_normal((3, 3)) * 0.3


def _leaf(m, values, dtype=None):
    return m.tensor(values, dtype=dtype or m.float64, requires_grad=True)


def _second_order(m, fn, *values):
    """The gradient of the gradient: the first backward recorded (``create_graph``)."""
    leaves = [_leaf(m, v) for v in values]
    out = fn(m, *leaves)
    grads = m.autograd.grad(out.sum(), leaves, create_graph=True)
    sum(g.pow(2).sum() for g in grads).backward()
    return [out, *grads, *(t.grad for t in leaves)]


def _first_order(m, fn, *values):
    leaves = [_leaf(m, v) for v in values]
    out = fn(m, *leaves)
    out.sum().backward()
    return [out, *(t.grad for t in leaves)]


CASES = {
    "bernoulli": lambda m: (
        m.manual_seed(3),
        _first_order(m, lambda m, p: m.bernoulli(p), np.full((2, 3), 0.4)),
    )[1],
    "normal_of_a_mean_tensor": lambda m: (
        m.manual_seed(3),
        _first_order(m, lambda m, mean: m.normal(mean, 2.0), _X),
    )[1],
    "fill_diagonal_": lambda m: _first_order(
        m, lambda m, x: x * 1 + x.clone().fill_diagonal_(2.0), _X
    ),
    "index_with_repeats_second_order": lambda m: _second_order(
        m, lambda m, x: x[m.tensor([0, 2, 0])].pow(3), _X
    ),
    "matrix_exp": lambda m: _first_order(m, lambda m, a: m.linalg.matrix_exp(a), _SQUARE),
    "unfold_second_order": lambda m: _second_order(m, lambda m, x: x.unfold(1, 2, 1).pow(2), _X),
    "binary_cross_entropy_second_order": lambda m: _second_order(
        m,
        lambda m, p: m.nn.functional.binary_cross_entropy(
            p.sigmoid(), m.tensor([[1.0, 0.0, 1.0, 0.0]] * 3, dtype=m.float64)
        ),
        _X,
    ),
    "embedding_second_order": lambda m: _second_order(
        m, lambda m, w: m.nn.functional.embedding(m.tensor([0, 2, 2]), w).pow(2), _X
    ),
    "leaky_relu_second_order": lambda m: _second_order(
        m, lambda m, x: m.nn.functional.leaky_relu(x * x, 0.2) * x, _X
    ),
    "log_sigmoid_second_order": lambda m: _second_order(
        m, lambda m, x: m.nn.functional.logsigmoid(x), _X
    ),
    "prelu_second_order": lambda m: _second_order(
        m, lambda m, x, w: m.nn.functional.prelu(x * x - 0.5, w) * x, _X, np.array([0.25])
    ),
    "sigmoid_second_order": lambda m: _second_order(m, lambda m, x: x.sigmoid(), _X),
    "softplus_second_order": lambda m: _second_order(
        m, lambda m, x: m.nn.functional.softplus(x, beta=2.0), _X
    ),
    "nll_loss2d_second_order": lambda m: _second_order(
        m,
        lambda m, x: m.nn.functional.nll_loss(
            m.log_softmax(x.reshape(1, 3, 2, 2), 1), m.tensor([[[0, 1], [2, 0]]]), reduction="none"
        ).pow(2),
        _X,
    ),
    "comparisons_in_place_with_numbers": lambda m: _first_order(
        m, lambda m, x: x + (x * 1).ge_(0.1) + (x * 1).le_(0.2) + (x * 1).ne_(0.3), _X
    ),
}


@pytest.mark.every_case  # each case records ops other tests may leave out
@pytest.mark.parametrize("case", sorted(CASES))
def test_op_against_torch(case):
    both(CASES[case], rtol=1e-6)
