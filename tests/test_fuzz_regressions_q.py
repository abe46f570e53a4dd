"""Regressions of session 63, against torch 2.13: ``cumprod``'s gradient after a zero."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import both

CUMPROD_INPUTS = [
    [1.0, 0.0, 2.0, 3.0],
    [0.0, 0.0, 2.0, 3.0],
    [2.0, 3.0, 0.0, 5.0],
    [0.0, 1.0, 0.0, 2.0],
    [1.5, -2.0, 0.0, 0.0],
    [-1.0, 0.0, -2.0, -3.0],
    [0.0, -4.0, -0.5, 0.0],
]


@pytest.mark.parametrize("values", CUMPROD_INPUTS)
def test_cumprod_gradient_after_a_zero_is_positive_zero(values):
    """PyTorch's masked formula leaves every gradient after the first zero at +0 (a product of
    negative values gave -0 there)."""

    def run(m):
        x = m.tensor(values, dtype=m.float64, requires_grad=True)
        w = m.tensor([1.0, -2.0, 3.0, -4.0], dtype=m.float64)
        (g,) = m.autograd.grad((x.cumprod(0) * w).sum(), x)
        return g, np.signbit(g.detach().numpy()).tolist()

    both(run, exact=True)


def test_cumprod_gradient_after_a_zero_in_a_matrix():
    def run(m):
        x = m.tensor([[1.5, 0.0, -2.0], [0.0, -3.0, -1.0]], dtype=m.float64, requires_grad=True)
        w = m.tensor([[-1.0, 2.0, -3.0], [4.0, -5.0, 6.0]], dtype=m.float64)
        grads = [m.autograd.grad((x.cumprod(d) * w).sum(), x)[0] for d in (0, 1)]
        return grads, [np.signbit(g.detach().numpy()).tolist() for g in grads]

    both(run, exact=True)
