"""torch.cholesky_inverse, torch.linalg.householder_product (torch.orgqr) and torch.geqrf
against PyTorch: values, layouts, nodes, gradients (first and second order) and errors."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import both

RNG = np.random.default_rng(11)
R3 = RNG.standard_normal((3, 3))
RB = RNG.standard_normal((2, 3, 3))
W3 = RNG.standard_normal((3, 3))
A43 = RNG.standard_normal((4, 3))
T2 = RNG.standard_normal(2)
W43 = RNG.standard_normal((4, 3))


def _factor(upper: bool, complex_: bool = False, batch: bool = False):
    base = RB if batch else R3
    if complex_:
        base = base + 1j * np.swapaxes(base, -1, -2)
    diag = np.abs(np.diagonal(R3)) + 1.0
    strict = np.triu(base, 1) if upper else np.tril(base, -1)
    return strict + np.diag(diag)


@pytest.mark.parametrize("batch", [False, True])
@pytest.mark.parametrize("complex_", [False, True])
@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_inverse(upper, complex_, batch):
    def f(m):
        L = m.tensor(_factor(upper, complex_, batch), requires_grad=True)
        y = m.cholesky_inverse(L, upper) if upper else L.cholesky_inverse()
        w = m.tensor(W3).to(y.dtype)
        (g,) = m.autograd.grad((y * w).abs().sum(), L, create_graph=True)
        (gg,) = m.autograd.grad(g.abs().sum(), L)
        return y, y.stride(), sorted(a for a in dir(y.grad_fn) if a.startswith("_saved")), g, gg

    both(f)


@pytest.mark.parametrize(
    "call",
    [
        lambda m: m.cholesky_inverse(m.ones(3)),
        lambda m: m.cholesky_inverse(m.ones(2, 3)),
        lambda m: m.cholesky_inverse(m.ones(2, 2, dtype=m.int64)),
        lambda m: m.cholesky_inverse(m.zeros(2, 2)),
        lambda m: m.cholesky_inverse(m.tensor([[[2.0, 0], [1, 3]], [[1.0, 0], [1, 0]]])),
        lambda m: m.cholesky_inverse(m.zeros(0, 0)),
        lambda m: m.linalg.householder_product(m.ones(2, 3), m.ones(1)),
        lambda m: m.linalg.householder_product(m.ones(3, 2), m.ones(3)),
        lambda m: m.linalg.householder_product(m.ones(3), m.ones(1)),
        lambda m: m.linalg.householder_product(m.ones(3, 2), m.ones(1, dtype=m.float64)),
        lambda m: m.linalg.householder_product(m.ones(2, 3, 2), m.ones(3, 1)),
        lambda m: m.geqrf(m.ones(3)),
        lambda m: m.geqrf(m.ones(3, 3, dtype=m.int64)),
    ],
)
def test_errors(call):
    def f(m):
        try:
            return call(m)
        except RuntimeError as e:  # LinAlgError's class lives elsewhere in each library
            raise RuntimeError(f"{type(e).__name__}: {e}") from None

    both(f)


@pytest.mark.parametrize("complex_", [False, True])
def test_householder_product(complex_):
    def f(m):
        a = A43 + (0.5j * W43 if complex_ else 0)
        t = T2 + (0.3j if complex_ else 0)
        A = m.tensor(a, requires_grad=True)
        tau = m.tensor(t, requires_grad=True)
        q = m.linalg.householder_product(A, tau)
        w = m.tensor(W43).to(q.dtype)
        grads = m.autograd.grad((q * w).abs().sum(), (A, tau), create_graph=True)
        second = m.autograd.grad(sum(g.abs().sum() for g in grads), (A, tau))
        names = sorted(a for a in dir(q.grad_fn) if a.startswith("_saved"))
        # the gradients' own graphs differ (PyTorch's formula is many ops; leafgrad's one)
        return q, q.stride(), names, [g.detach() for g in grads], second

    both(f)


def test_orgqr_batched_and_geqrf_round_trip():
    def f(m):
        A = m.tensor(np.stack([A43, 2 * W43]), requires_grad=True)
        a, tau = m.geqrf(A)
        r = m.geqrf(A)
        q = m.orgqr(a.detach().requires_grad_(), tau.detach())
        q.sum().backward()
        back = q @ a.detach()[..., :3, :].triu()
        try:
            tau.sum().backward()
        except NotImplementedError as e:
            refused = str(e)
        return type(r).__name__, a, tau, a.stride(), q, q.stride(), back, refused

    both(f)
