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


@pytest.mark.parametrize("approximate", ["none", "tanh"])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_gelu_gradient_formula(approximate, dtype):
    """ATen's GeluBackwardKernelImpl, ``dy * (cdf + x * pdf)`` (or the tanh form's
    ``dy * (left_derivative + right_derivative)``): a zero ``dy`` gives the slope's sign."""

    def run(m):
        x = m.tensor([-3.0, -2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0, 3.0], dtype=getattr(m, dtype))
        x.requires_grad_()
        y = m.nn.functional.gelu(x, approximate=approximate)
        dy = m.tensor([0.0, 0.0, 1.0, -0.0, 2.0, 0.0, -1.0, 0.5, 0.0], dtype=getattr(m, dtype))
        (g,) = m.autograd.grad(y, x, dy)
        return g, np.signbit(g.detach().numpy()).tolist()

    both(run)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_silu_gradient_formula(dtype):
    """ATen's silu_backward, ``dy * sigmoid * (1 + x * (1 - sigmoid))`` multiplied in that order
    (JAX's VJP of ``x / (1 + exp(-x))`` rounds apart for most inputs). Bit for bit in float32;
    XLA's double ``exp`` differs from PyTorch's in the last bit for a few of these inputs."""

    def run(m):
        values = np.linspace(-6.0, 6.0, 97)
        x = m.tensor(values, dtype=getattr(m, dtype), requires_grad=True)
        dy = m.tensor(np.cos(values * 3.0), dtype=getattr(m, dtype))
        (g,) = m.autograd.grad(m.nn.functional.silu(x), x, dy)
        return g

    both(run, exact=dtype == "float32")


def test_seed_274_aminmax_nan_gradient_reaches_the_whole_slice():
    """aminmax's gradient is amin's and amax's, ``scale_grad_by_count``: ``(grad / count) *
    mask``, so a NaN gradient reaches every element (leafgrad's gather put it on the chosen
    one only)."""
    from fuzz_programs import check

    check(
        [
            ("new", "float32", 2, True, 0),
            ("unary", "abs", 0),
            ("unary", "abs", 0),
            ("multi", "aminmax", 0, 0, False),
            ("unary", "abs", 0),
            ("unary", "abs", 0),
            ("unary", "abs", 0),
            ("multi", "std_mean", 3, 0, False),
            ("backward", 38, False, 0),
        ]
    )


NAN, INF = float("nan"), float("inf")


@pytest.mark.parametrize(
    "values",
    [[0.1875, 0.875, 0.4375], [1.0, 1.0, 2.0], [2.0, 2.0, 2.0], [1.0, NAN, 2.0], [-INF, 0.0, INF]],
)
@pytest.mark.parametrize("grads", [(NAN, None), (1.0, NAN), (2.0, 3.0), (None, 1.0), (INF, 1.0)])
def test_aminmax_gradient(values, grads):
    def run(m):
        x = m.tensor([values, values[::-1]], requires_grad=True)
        out = []
        for kw in ({}, {"dim": 1}, {"dim": 0, "keepdim": True}):
            mn, mx = m.aminmax(x, **kw)
            pairs = [(o, m.full_like(o, g)) for o, g in zip((mn, mx), grads) if g is not None]
            out.append(m.autograd.grad([o for o, _ in pairs], x, [g for _, g in pairs])[0])
        return out

    both(run, exact=True)


ELU_FORMS = {
    "elu": lambda m, x: m.nn.functional.elu(x),
    "elu_alpha": lambda m, x: m.nn.functional.elu(x, alpha=0.7),
    "selu": lambda m, x: m.nn.functional.selu(x),
    "celu": lambda m, x: m.nn.functional.celu(x, alpha=0.5),
}


@pytest.mark.parametrize("form", list(ELU_FORMS))
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_elu_gradient_formula(form, dtype):
    """elu_backward: ``grad * input_scale * (alpha * scale) * exp(x * input_scale)`` at x <= 0.
    JAX's derivative of ``expm1`` (``expm1(x) + 1``) was 0 below about -37; celu's gradient was
    NaN for large positive inputs (the unused branch's ``exp`` overflowed)."""

    def run(m):
        values = [1000.0, 100.0, 3.0, 0.0, -0.0, -0.5, -1.0, -3.3, -20.0, -40.0, -80.0]
        x = m.tensor(values, dtype=getattr(m, dtype), requires_grad=True)
        dy = m.tensor([0.5, -1.0, 2.0, 1.0, -0.3, 0.7, 1.5, -2.0, 1.0, 0.25, 1.0])
        (g,) = m.autograd.grad(ELU_FORMS[form](m, x), x, dy.to(getattr(m, dtype)))
        return g

    both(run, rtol=1e-6 if dtype == "float32" else 1e-13, atol=0)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("beta, threshold", [(1.0, 20.0), (2.0, 5.0), (0.5, 1.0)])
def test_softplus_gradient_formula(dtype, beta, threshold):
    """softplus_backward: ``grad * z / (z + 1)`` with ``z = exp(x * beta)``, ``grad`` where
    ``x * beta > threshold``."""

    def run(m):
        values = [1000.0, 30.0, 19.9, 20.1, 2.4, 2.6, -1.0, 0.0, -40.0, -800.0, -3.3]
        x = m.tensor(values, dtype=getattr(m, dtype), requires_grad=True)
        dy = m.tensor([0.5, -1.0, 2.0, 1.0, -0.3, 0.7, 1.5, -2.0, 1.0, 0.25, 1.0])
        y = m.nn.functional.softplus(x, beta=beta, threshold=threshold)
        return m.autograd.grad(y, x, dy.to(getattr(m, dtype)))[0]

    both(run, rtol=1e-6 if dtype == "float32" else 1e-13, atol=0)
