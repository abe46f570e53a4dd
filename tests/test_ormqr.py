"""``torch.ormqr`` against PyTorch: the product with ``geqrf``'s orthogonal ``Q`` from either
side, with or without its adjoint; values, OrmqrBackward0 and its gradients, strides, errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import leafgrad

RNG = np.random.default_rng(3)


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("transpose", [False, True])
def test_ormqr_values_and_gradients(left, transpose, dtype):
    a = RNG.standard_normal((2, 5, 3))
    c = RNG.standard_normal((2, 5, 4) if left else (2, 4, 5))
    if dtype == "complex128":
        a = a + 1j * RNG.standard_normal(a.shape)
        c = c + 1j * RNG.standard_normal(c.shape)
    h, tau = torch.geqrf(torch.tensor(a))
    tau_n = tau.numpy()
    out = []
    for T in (torch, leafgrad):
        x = T.tensor(h.numpy(), requires_grad=True)
        t = T.tensor(tau_n, requires_grad=True)
        y = T.tensor(c, requires_grad=True)
        r = T.ormqr(x, t, y, left, transpose)
        (r.abs() ** 2).sum().backward()
        out.append(
            (
                r.detach().numpy(),
                r.grad_fn.name(),
                r.stride(),
                x.grad.numpy(),
                t.grad.numpy(),
                y.grad.numpy(),
            )
        )
    (tr, tn, ts, *tg), (lr, ln, ls, *lg) = out
    assert (ln, ls) == (tn, ts)
    np.testing.assert_allclose(lr, tr, rtol=1e-10, atol=1e-12)
    for a_, b_ in zip(tg, lg):
        np.testing.assert_allclose(b_, a_, rtol=1e-8, atol=1e-10)


BAD = [
    lambda T, q, t: T.ormqr(q, t, T.ones(3, 2)),
    lambda T, q, t: T.ormqr(q, t, T.ones(4)),
    lambda T, q, t: T.ormqr(q, t[:2], T.ones(4, 2)),
    lambda T, q, t: T.ormqr(q, t.double(), T.ones(4, 2)),
    lambda T, q, t: T.ormqr(q, t, T.ones(4, 2).double()),
    lambda T, q, t: T.ormqr(q.int(), t.int(), T.ones(4, 2).int()),
    lambda T, q, t: T.ormqr(q, t, T.ones(2, 3), False),
    lambda T, q, t: T.ormqr(q, t[None], T.ones(4, 2)),
    lambda T, q, t: T.ormqr(q[0], t, T.ones(4, 2)),
    lambda T, q, t: T.ormqr(T.ones(2, 4, 3), T.ones(3, 3), T.ones(2, 4, 2)),
    lambda T, q, t: T.ormqr(T.ones(2, 4, 3), T.ones(2, 3), T.ones(3, 4, 2)),
    lambda T, q, t: T.ormqr(q.bfloat16(), t.bfloat16(), T.ones(4, 2).bfloat16()),
]


@pytest.mark.parametrize("k", range(len(BAD)))
def test_ormqr_errors(k):
    h, tau = torch.geqrf(torch.tensor(RNG.standard_normal((4, 3)), dtype=torch.float32))
    out = []
    for T in (torch, leafgrad):
        try:
            BAD[k](T, T.tensor(h.numpy()), T.tensor(tau.numpy()))
            out.append(None)
        except Exception as exc:  # noqa: BLE001 - compared
            out.append((type(exc).__name__, str(exc)))
    assert out[1] == out[0] and out[0] is not None
