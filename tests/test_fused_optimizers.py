"""The optimizers with ``fused=True``. ``Adam``/``AdamW`` as PyTorch's fused CPU kernel
(Note [Fused Adam] in ``leafgrad/optim/adam.py``): the parameter and the moments are written
without a version bump (the steps with one), and the values are the kernel's (bit for bit in
float64 and bfloat16 and over whole vector lanes in float32; its scalar tail loop may differ by
an ulp). SGD and Adagrad keep their versions too, and all take a GradScaler's scale."""

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


@pytest.mark.parametrize(
    "name,kw",
    [
        ("SGD", {"momentum": 0.9}),
        ("SGD", {"momentum": 0.9, "nesterov": True, "weight_decay": 0.1}),
        ("Adagrad", {"weight_decay": 0.1, "lr_decay": 0.01}),
        ("Adam", {"amsgrad": True}),
    ],
    ids=str,
)
def test_fused_optimizers_under_a_grad_scaler(name, kw):
    """SGD, Adagrad and Adam with ``fused=True`` take a GradScaler's scale and inf flag in
    their kernel: the values, the skipped step, the scale and every version are PyTorch's."""
    out = []
    for T in (torch, leafgrad):
        p = T.nn.Parameter(T.tensor(np.linspace(-1, 1, 64, dtype=np.float32)))
        opt = getattr(T.optim, name)([p], lr=0.01, fused=True, **kw)
        scaler = T.amp.GradScaler("cpu", init_scale=4.0)
        for k in range(4):
            opt.zero_grad()
            w = T.tensor(np.cos(np.arange(64) * (k + 1.0)).astype(np.float32))
            loss = (p * w).sum() * (float("inf") if k == 2 else 1.0)
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
        state = opt.state[p]
        versions = (p._version, p.grad._version, {k: v._version for k, v in state.items()})
        values = [p.detach().numpy().copy(), *(state[k].numpy().copy() for k in sorted(state))]
        out.append((versions, scaler.get_scale(), values))
    assert out[1][:2] == out[0][:2]
    for a, b in zip(out[0][2], out[1][2]):
        np.testing.assert_array_equal(b, a)
