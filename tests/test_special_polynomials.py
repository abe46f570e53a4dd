"""``torch.special``'s orthogonal polynomials against torch: every special case (negative and
small degrees, the interval's ends, the closed forms for high degrees, Hermite's degree limit),
the recurrences, float32 and float64, number arguments, truncated float degrees, no gradient,
and the dtypes PyTorch's CPU kernels refuse."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import both

from leafgrad.ops.polynomials import __all__ as POLYNOMIALS

NAMES = [n for n in POLYNOMIALS if "bessel" not in n]
# NaN x is left out: most of PyTorch's kernels return an uninitialized value there
XS = np.array([-2.0, -1.0, -0.7, -0.3, 0.0, 0.2, 0.5, 0.9, 1.0, 1.5, np.inf])
NS = np.array([-1, 0, 1, 2, 3, 5, 7, 9, 12, 20, 130, 600])


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_values(name, dtype):
    X, N = np.meshgrid(XS, NS)

    def fn(m):
        f = getattr(m.special, name)
        x = m.tensor(X, dtype=getattr(m, dtype), requires_grad=True)
        return f(x, m.tensor(N)), f(x[:2], 3.7)

    # float32: the closed forms at degree 600 multiply a one-ulp difference of acos (XLA's or
    # libm's) by 600 before taking sin, about 1e-4 at values near 0.02
    both(fn, rtol=1e-4 if dtype == "float32" else 1e-10, atol=2e-4 if dtype == "float32" else 1e-9)


@pytest.mark.parametrize("name", NAMES)
def test_number_and_integer_arguments(name):
    def fn(m):
        f = getattr(m.special, name)
        return f(0.5, m.tensor([3, 4])), f(m.tensor([1, 2]), 2), f(m.tensor([0.3]), m.tensor([4.9]))

    both(fn, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["chebyshev_polynomial_t", "hermite_polynomial_he"])
def test_errors(name):
    both(lambda m: getattr(m.special, name)(m.ones(2, dtype=m.float16), 2))
    both(lambda m: getattr(m.special, name)(m.ones(2, dtype=m.complex64), 2))


@pytest.mark.parametrize(
    "name", ["spherical_bessel_j0", "modified_bessel_i0", "modified_bessel_i1"]
)
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_unary_bessel_functions(name, dtype):
    def fn(m):
        values = [
            0.0,
            0.3,
            -0.49,
            0.5,
            2.0,
            -7.5,
            1e-8,
            30.0,
            float("inf"),
            -float("inf"),
            float("nan"),
        ]
        if dtype == "int64":
            x = m.tensor([0, 1, -3, 40])
        else:
            x = m.tensor(values, dtype=getattr(m, dtype), requires_grad=True)
        return getattr(m.special, name)(x)

    both(fn, rtol=1e-6 if dtype != "float64" else 1e-14, atol=1e-7 if dtype != "float64" else 1e-15)
    both(lambda m: getattr(m.special, name)(m.ones(2, dtype=m.float16)))
    both(lambda m: getattr(m.special, name)(1.0))
