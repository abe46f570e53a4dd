"""PyTorch's ``slogdet_backward`` of a real matrix returns an undefined gradient when only the
sign has one (the sign's gradient is zero): ``.grad`` stays None and ``autograd.grad`` finds the
input unused; leafgrad gave a zero tensor. Complex matrices have a defined sign gradient."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import both

A = np.array([[2.0, 1.0], [1.0, 3.0]])

CASES = {
    "sign backward": lambda m, X: (m.linalg.slogdet(X)[0].sum().backward(), X.grad)[1],
    "torch.slogdet": lambda m, X: (m.slogdet(X)[0].sum().backward(), X.grad)[1],
    "both": lambda m, X: (sum(m.linalg.slogdet(X)).sum().backward(), X.grad)[1],
    "grad unused": lambda m, X: m.autograd.grad(m.linalg.slogdet(X)[0].sum(), X),
    "grad allow_unused": lambda m, X: m.autograd.grad(
        m.linalg.slogdet(X)[0].sum(), X, allow_unused=True
    ),
    "create_graph": lambda m, X: m.autograd.grad(
        m.linalg.slogdet(X)[0].sum(), X, create_graph=True, allow_unused=True
    ),
    "through sign and another op": lambda m, X: (
        (m.linalg.slogdet(X)[0] * X.sum()).backward(),
        X.grad,
    )[1],
    "logabsdet then sign": lambda m, X: (
        m.linalg.slogdet(X)[1].backward(retain_graph=True),
        X.grad.clone(),
        X.grad,
    ),
}


@pytest.mark.parametrize("dtype", ["float64", "float32", "complex128"])
@pytest.mark.parametrize("case", list(CASES))
def test_sign_gradient(case, dtype, engine):
    def run(m):
        X = m.tensor(A.astype(dtype) * (1 + 1j if dtype == "complex128" else 1), requires_grad=True)
        return CASES[case](m, X)

    both(run)
