"""``F.multi_head_attention_forward`` called directly, against torch 2.13."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import both, host

E, H, L, S, N = 8, 2, 3, 4, 2


def _args(m, seed):
    rng = np.random.default_rng(seed)

    def t(*s):
        return m.tensor(rng.standard_normal(s).astype(np.float32))

    return t(L, N, E), t(S, N, E), t(S, N, E), t(3 * E, E), t(3 * E), t(E, E), t(E)


@pytest.mark.parametrize("average", [True, False])
@pytest.mark.parametrize("masked", [False, True])
def test_outputs_weights_and_gradients(masked, average):
    def run(m):
        q, k, v, W, b, Wo, bo = _args(m, 0)
        W.requires_grad_()
        q.requires_grad_()
        mask = m.tensor([[False, False, True, False]] * N) if masked else None
        out, w = m.nn.functional.multi_head_attention_forward(
            q,
            k,
            v,
            E,
            H,
            W,
            b,
            None,
            None,
            False,
            0.0,
            Wo,
            bo,
            training=False,
            key_padding_mask=mask,
            average_attn_weights=average,
        )
        out.sum().backward()
        return out.grad_fn.name(), tuple(w.shape), out, w, W.grad, q.grad

    t, g = both(run, compare=False)
    assert g[:2] == t[:2]
    for x, y in zip(t[2:], g[2:]):
        np.testing.assert_allclose(host(y), host(x), rtol=2e-5, atol=2e-5)


def test_wrong_embedding_dimension():
    def run(m):
        q, k, v, W, b, Wo, bo = _args(m, 1)
        return m.nn.functional.multi_head_attention_forward(
            q, k, v, E + 1, H, W, b, None, None, False, 0.0, Wo, bo
        )

    both(run)
