"""``Adam``/``AdamW(fused=True)`` as PyTorch's fused CPU kernel (Note [Fused Adam] in
``leafgrad/optim/adam.py``): the parameter and the moments are written without a version bump
(the steps with one), and the values are the kernel's (bit for bit in float64 and bfloat16 and
over whole vector lanes in float32; its scalar tail loop may differ by an ulp)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import leafgrad

CONFIGS = [
    ("Adam", {}),
    ("Adam", {"weight_decay": 0.1}),
    ("Adam", {"weight_decay": 0.05, "amsgrad": True, "maximize": True}),
    ("AdamW", {"weight_decay": 0.1, "amsgrad": True}),
]


def _run(T, name, kw, n, dtype, steps=4):
    p = T.nn.Parameter(T.tensor(np.linspace(-1, 1, n)).to(getattr(T, dtype)))
    opt = getattr(T.optim, name)([p], lr=0.01, fused=True, **kw)
    for k in range(steps):
        p.grad = T.tensor(np.cos(np.arange(n) * (k + 1.0))).to(getattr(T, dtype))
        opt.step()
    state = opt.state[p]
    values = [p.detach(), *(state[k] for k in sorted(state) if k != "step")]
    versions = (p._version, {k: v._version for k, v in state.items()}, p.grad._version)
    return [v.float().numpy().copy() for v in values], versions


@pytest.mark.parametrize("dtype", ["float64", "bfloat16", "float32"])
@pytest.mark.parametrize("name,kw", CONFIGS, ids=lambda x: str(x))
def test_fused_adam_matches_pytorch(name, kw, dtype):
    n = 64  # whole vector lanes
    t_vals, t_versions = _run(torch, name, kw, n, dtype)
    l_vals, l_versions = _run(leafgrad, name, kw, n, dtype)
    assert l_versions == t_versions
    for a, b in zip(t_vals, l_vals):
        if dtype == "float32" and name == "AdamW":
            np.testing.assert_allclose(b, a, rtol=1e-6, atol=1e-7)
        else:
            np.testing.assert_array_equal(b, a)


def test_fused_adam_tail_elements_to_rounding():
    t_vals, _ = _run(torch, "Adam", {"weight_decay": 0.1}, 37, "float32")
    l_vals, _ = _run(leafgrad, "Adam", {"weight_decay": 0.1}, 37, "float32")
    for a, b in zip(t_vals, l_vals):
        np.testing.assert_allclose(b, a, rtol=1e-6, atol=1e-7)
