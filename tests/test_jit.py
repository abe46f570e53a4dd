"""The same leafgrad code runs eagerly and inside ``jax.jit`` (tracers flow through dispatch)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import torch

import leafgrad


def _step(m, w_arr, x_arr):
    w = m.tensor(w_arr, requires_grad=True)
    x = m.tensor(x_arr)
    loss = ((x @ w).exp() * 0.5 - w.sum() / 3).mean()
    loss.backward()
    return loss, w.grad


def test_forward_and_backward_trace_under_jit_and_match_torch():
    rng = np.random.default_rng(0)
    w = rng.standard_normal((3, 2)).astype(np.float32) * 0.1
    x = rng.standard_normal((4, 3)).astype(np.float32)

    def traced(w_arr, x_arr):
        loss, grad = _step(leafgrad, w_arr, x_arr)
        return loss._data, grad._data

    jit_loss, jit_grad = jax.jit(traced)(jnp.asarray(w), jnp.asarray(x))
    eager_loss, eager_grad = _step(leafgrad, w, x)
    t_loss, t_grad = _step(torch, w, x)
    assert np.array_equal(np.asarray(jit_loss), eager_loss.detach().numpy())
    np.testing.assert_allclose(np.asarray(jit_grad), eager_grad.numpy(), rtol=1e-6)
    np.testing.assert_allclose(eager_loss.item(), t_loss.item(), rtol=1e-6)
    np.testing.assert_allclose(eager_grad.numpy(), t_grad.numpy(), rtol=1e-6)
