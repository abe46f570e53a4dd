"""Gradients taken with ``create_graph=True`` run PyTorch's derivative formulas as recorded ops
(Note [Graph formulas] in leafgrad/ops/formulas.py): their ``grad_fn`` names and graph shapes,
and the values of the first to third derivatives, are torch's."""

from __future__ import annotations

import numpy as np
import pytest
from formula_check import check_graph, graph_signature

import leafgrad as lg

X = np.linspace(0.2, 0.9, 6).reshape(2, 3)
Y = np.linspace(1.1, 1.6, 3)

CASES = {
    "add": lambda m, a, b: a.sin() + b.cos(),
    "add_alpha": lambda m, a, b: m.add(a.sin(), b.cos(), alpha=2.5),
    "sub": lambda m, a, b: a.sin() - b.cos(),
    "sub_alpha": lambda m, a, b: m.sub(a.sin(), b, alpha=0.5),
    "rsub": lambda m, a, b: 2 - a.sin() * b,
    "mul": lambda m, a, b: a * b,
    "mul_self": lambda m, a, b: a * a * b,
    "div": lambda m, a, b: a / b,
    "div_number": lambda m, a, b: 2 / (a * b),
    "pow2": lambda m, a, b: a**2 * b,
    "pow_half": lambda m, a, b: a.pow(0.5),
    "pow0": lambda m, a, b: a**0 * b,
    "square": lambda m, a, b: a.square(),
    "pow_tensor": lambda m, a, b: a**b,
    "rpow": lambda m, a, b: 2**a,
    "rpow_zero": lambda m, a, b: 0**a,
    "neg": lambda m, a, b: -(a * b),
    "reciprocal": lambda m, a, b: a.reciprocal(),
    "exp": lambda m, a, b: a.exp() * b,
    "log": lambda m, a, b: a.log(),
    "sqrt": lambda m, a, b: a.sqrt(),
    "rsqrt": lambda m, a, b: a.rsqrt(),
    "sin": lambda m, a, b: a.sin(),
    "cos": lambda m, a, b: a.cos(),
    "abs": lambda m, a, b: (a - 0.5).abs() * a,
    "sum_dim": lambda m, a, b: a.sin().sum(0) * b,
    "sum_keepdim": lambda m, a, b: a.sin().sum(1, keepdim=True) * a,
    "sum_all": lambda m, a, b: a.sin().sum() * b,
    "mean": lambda m, a, b: a.sin().mean() * b,
    "mean_dims": lambda m, a, b: a.sin().mean((0,)) * b,
    "mean_keepdim": lambda m, a, b: a.cos().mean(-1, keepdim=True) * a,
    "mul_number": lambda m, a, b: (a * 3).sin() * b,
    "div_number_after": lambda m, a, b: (a / 3).sin(),
    "float32_cast": lambda m, a, b: a.float() * a,
    "float32_sin": lambda m, a, b: a.float().sin(),
    "broadcast_cast": lambda m, a, b: a * b.float().sin(),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_graph_formulas_match_torch(name):
    # float32 steps: ATen's and XLA's float32 cos differ by an ulp
    check_graph(CASES[name], X, Y, rtol=1e-5 if "cast" in name or "32" in name else 1e-6)


def test_gradient_of_gradient_penalty_matches_torch():
    """A gradient penalty: the norm of a gradient, differentiated again."""

    def fn(m, a, b):
        (g,) = m.autograd.grad((a.sin() * b).sum(), a, create_graph=True)
        return (g.pow(2).sum() + 1e-12).sqrt() * a

    check_graph(fn, X, Y)


def test_ops_without_formula_keep_the_one_op_form():
    """An op without a formula records its whole backward as one op, named after its node."""
    x = lg.tensor([[0.3, 0.7], [0.1, -0.2]], dtype=lg.float64, requires_grad=True)
    (g,) = lg.autograd.grad(lg.cdist(x, x * 2).sum(), x, create_graph=True)
    requires_grad, sig = graph_signature(g, 1)
    assert "cdist" not in lg.ops.formulas.FORMULAS
    assert requires_grad and sig[1][0] == "CdistBackwardBackward0"
