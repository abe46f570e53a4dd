"""``torch.cholesky_solve`` / ``Tensor.cholesky_solve`` against torch: values, result strides,
gradients (PyTorch's formula in the whole factor, whatever lies in its other triangle), batch
broadcasting, complex input, second-order gradients and errors."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import both


def _factor(rng, n, batch=(), upper=False, junk=False, complex_=False):
    a = rng.standard_normal(batch + (n, n))
    if complex_:
        a = a + 1j * rng.standard_normal(batch + (n, n))
    spd = a @ np.conj(np.swapaxes(a, -1, -2)) + n * np.eye(n)
    L = np.linalg.cholesky(spd)
    if upper:
        L = np.conj(np.swapaxes(L, -1, -2))
    if junk:  # LAPACK reads one triangle; PyTorch's gradient differentiates the whole matrix
        other = np.triu(np.ones((n, n)), 1) if not upper else np.tril(np.ones((n, n)), -1)
        L = L + 0.5 * other
    return L


CASES = {
    "lower": dict(b=(3, 2), n=3),
    "upper": dict(b=(3, 2), n=3, upper=True),
    "junk_lower": dict(b=(4, 1), n=4, junk=True),
    "junk_upper": dict(b=(4, 3), n=4, upper=True, junk=True),
    "batched": dict(b=(2, 3, 2), n=3, batch=(2,)),
    "broadcast": dict(b=(2, 1, 3, 2), n=3, batch=(3,)),
    "complex": dict(b=(3, 2), n=3, complex_=True),
    "complex_upper": dict(b=(2, 3, 1), n=3, batch=(2,), upper=True, complex_=True),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_values_strides_and_gradients(case):
    c = CASES[case]
    rng = np.random.default_rng(0)
    L0 = _factor(rng, c["n"], c.get("batch", ()), c.get("upper", False), c.get("junk", False),
                 c.get("complex_", False))  # fmt: skip
    B0 = rng.standard_normal(c["b"]) + (
        1j * rng.standard_normal(c["b"]) if c.get("complex_") else 0
    )

    def fn(m):
        L = m.tensor(L0, requires_grad=True)
        B = m.tensor(B0, requires_grad=True)
        X = m.cholesky_solve(B, L, upper=c.get("upper", False))
        w = m.linspace(-1, 1, X.numel(), dtype=m.float64).reshape(X.shape)
        (X * w).sum().abs().backward()
        return X, X.stride(), B.grad, L.grad, B.cholesky_solve(L, c.get("upper", False))

    both(fn, rtol=1e-10, atol=1e-12)


def test_second_order_gradients():
    rng = np.random.default_rng(1)
    L0, B0 = _factor(rng, 3), rng.standard_normal((3, 2))

    def fn(m):
        L = m.tensor(L0, requires_grad=True)
        B = m.tensor(B0, requires_grad=True)
        X = m.cholesky_solve(B, L)
        gB, gL = m.autograd.grad(X.pow(2).sum(), (B, L), create_graph=True)
        gg = m.autograd.grad(gB.sum() + gL.pow(2).sum(), (B, L))
        return gB, gL, gg, X.grad_fn._saved_upper

    both(fn, rtol=1e-10, atol=1e-12)


ERRORS = {
    "b_1d": lambda m: m.cholesky_solve(m.ones(3), m.eye(3)),
    "u_1d": lambda m: m.cholesky_solve(m.ones(3, 2), m.ones(3)),
    "not_square": lambda m: m.cholesky_solve(m.ones(3, 2), m.ones(3, 2)),
    "sizes": lambda m: m.cholesky_solve(m.ones(4, 2), m.eye(3)),
    "batches": lambda m: m.cholesky_solve(m.ones(2, 3, 2), m.eye(3).expand(4, 3, 3)),
    "dtypes": lambda m: m.cholesky_solve(m.ones(3, 2, dtype=m.float64), m.eye(3)),
    "long": lambda m: m.cholesky_solve(m.ones(3, 2, dtype=m.int64), m.eye(3, dtype=m.int64)),
    "half": lambda m: m.cholesky_solve(m.ones(3, 2, dtype=m.float16), m.eye(3, dtype=m.float16)),
    "upper_int": lambda m: m.cholesky_solve(m.ones(3, 2), m.eye(3), 1),
    "empty": lambda m: m.cholesky_solve(m.ones(0, 2), m.ones(0, 0)),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_and_edge_cases(name):
    both(ERRORS[name])
