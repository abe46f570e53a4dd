"""``func.stack_module_state`` (model ensembling with ``vmap`` over ``functional_call``), against
torch 2.13."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch
from conftest import both, host

import leafgrad as lg

X = np.random.default_rng(0).standard_normal((5, 6)).astype(np.float32)


def _models(m, n=3, frozen=None):
    nets = []
    for i in range(n):
        m.manual_seed(0)
        net = m.nn.Sequential(m.nn.Linear(6, 4), m.nn.BatchNorm1d(4), m.nn.Linear(4, 2))
        rng = np.random.default_rng(i)
        with m.no_grad():
            for p in net.parameters():
                p.copy_(m.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32)))
            net[1].running_mean.copy_(m.tensor(rng.standard_normal(4).astype(np.float32)))
        if frozen is not None and i == frozen:
            net[0].weight.requires_grad_(False)
        nets.append(net)
    return nets


def test_stacked_parameters_buffers_and_ensemble_forward():
    def run(m):
        nets = _models(m)
        for net in nets:
            net.eval()
        params, buffers = m.func.stack_module_state(nets)
        meta = {
            k: (tuple(v.shape), v.requires_grad, v.is_leaf, v.grad_fn, str(v.dtype).split(".")[-1])
            for k, v in {**params, **buffers}.items()
        }
        base = copy.deepcopy(nets[0])

        def fmodel(p, b, x):
            return m.func.functional_call(base, (p, b), (x,))

        with m.no_grad():
            out = m.func.vmap(fmodel, in_dims=(0, 0, None))(params, buffers, m.tensor(X))
        ref = m.stack([net(m.tensor(X)) for net in nets]).detach()
        return meta, params, buffers, out, ref

    t, g = both(run, compare=False)
    assert g[0] == t[0]
    for a, b in zip(t[1:3], g[1:3]):
        assert list(a) == list(b)
        for k in a:
            np.testing.assert_array_equal(host(b[k]), host(a[k]))
    np.testing.assert_allclose(host(g[3]), host(t[3]), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(host(g[3]), host(g[4]), rtol=1e-5, atol=1e-5)


CASES = {
    "no models": lambda m: m.func.stack_module_state([]),
    "train and eval": lambda m: m.func.stack_module_state(
        [_models(m, 1)[0], _models(m, 1)[0].eval()]
    ),
    "two classes": lambda m: m.func.stack_module_state([m.nn.Linear(2, 2), m.nn.Bilinear(2, 2, 2)]),
    "mixed requires_grad": lambda m: m.func.stack_module_state(_models(m, 2, frozen=1)),
    "all frozen": lambda m: {
        k: (v.requires_grad, v.is_leaf)
        for k, v in m.func.stack_module_state(
            [m.nn.Linear(2, 2).requires_grad_(False) for _ in range(2)]
        )[0].items()
    },
}


@pytest.mark.parametrize("case", list(CASES))
def test_checks(case):
    both(CASES[case], compare=case == "all frozen")


def test_is_exported():
    assert "stack_module_state" in lg.func.__all__
    assert hasattr(torch.func, "stack_module_state")
