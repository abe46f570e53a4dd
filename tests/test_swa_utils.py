"""``optim.swa_utils`` against torch 2.13: averaged parameters and buffers, ``n_averaged``, SWALR's
learning rates, ``update_bn``'s statistics, EMA variants, state dicts and errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from conftest import both, host

import leafgrad as lg

X = np.random.default_rng(0).standard_normal((6, 8, 4)).astype(np.float32)


def _model(m):
    m.manual_seed(0)
    net = m.nn.Sequential(m.nn.Linear(4, 5), m.nn.BatchNorm1d(5), m.nn.ReLU(), m.nn.Linear(5, 2))
    if m is lg:  # the same initial weights as torch's
        ref = _model(torch)
        with lg.no_grad():
            for (_, p), (_, q) in zip(net.state_dict().items(), ref.state_dict().items()):
                p.copy_(lg.tensor(q.numpy()))
    return net


def _train(m, averaged_kwargs, strategy="cos", anneal_epochs=3):
    net = _model(m)
    swa = m.optim.swa_utils
    kwargs = {
        k: (getattr(swa, v[0])(*v[1:]) if isinstance(v, tuple) else v)
        for k, v in averaged_kwargs.items()
    }
    avg = swa.AveragedModel(net, **kwargs)
    opt = m.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
    sched = swa.SWALR(opt, swa_lr=0.05, anneal_epochs=anneal_epochs, anneal_strategy=strategy)
    lrs, counts = [], []
    for x in X:
        opt.zero_grad()
        net(m.tensor(x)).pow(2).mean().backward()
        opt.step()
        avg.update_parameters(net)
        sched.step()
        lrs.append(sched.get_last_lr())
        counts.append(int(avg.n_averaged))
    loader = [m.tensor(x) for x in X[:3]] + [(m.tensor(X[3]), 0)]
    swa.update_bn(loader, avg)
    avg.eval()
    out = avg(m.tensor(X[0]))
    state = {k: v for k, v in avg.state_dict().items()}
    return out, state, lrs, counts, sched.state_dict()["_anneal_strategy"], avg.training


AVERAGES = {
    "swa": {},
    "swa with buffers": {"use_buffers": True},
    "ema multi": {"multi_avg_fn": ("get_ema_multi_avg_fn", 0.9)},
    "ema multi with buffers": {"multi_avg_fn": ("get_ema_multi_avg_fn", 0.9), "use_buffers": True},
    "ema": {"avg_fn": ("get_ema_avg_fn", 0.9)},
    "swa fn": {"avg_fn": ("get_swa_avg_fn",)},
    "swa multi": {"multi_avg_fn": ("get_swa_multi_avg_fn",)},
    "swa multi with buffers": {"multi_avg_fn": ("get_swa_multi_avg_fn",), "use_buffers": True},
}


@pytest.mark.parametrize("strategy,anneal_epochs", [("cos", 3), ("linear", 2), ("cos", 0)])
@pytest.mark.parametrize("average", list(AVERAGES))
def test_training_with_averaging_matches_torch(average, strategy, anneal_epochs):
    t, g = both(lambda m: _train(m, AVERAGES[average], strategy, anneal_epochs), compare=False)
    if hasattr(t, "exc"):
        return  # (both raised the same error)
    np.testing.assert_allclose(host(g[0]), host(t[0]), rtol=1e-5, atol=1e-6)
    assert list(g[1]) == list(t[1])
    for k in t[1]:
        assert str(g[1][k].dtype).split(".")[-1] == str(t[1][k].dtype).split(".")[-1], k
        np.testing.assert_allclose(host(g[1][k]), host(t[1][k]), rtol=1e-5, atol=1e-6, err_msg=k)
    np.testing.assert_allclose(np.array(g[2]), np.array(t[2]), rtol=1e-12)
    assert g[3:] == t[3:]


def test_scheduler_state_round_trip_and_get_lr_warning():
    def run(m):
        p = m.nn.Parameter(m.ones(2))
        opt = m.optim.SGD([p], lr=1.0)
        sched = m.optim.swa_utils.SWALR(
            opt, swa_lr=[0.5], anneal_epochs=4, anneal_strategy="linear"
        )
        opt.step()
        sched.step()
        state = sched.state_dict()
        other = m.optim.swa_utils.SWALR(opt, swa_lr=0.1)
        other.load_state_dict(state)
        other.step()
        return sorted(state), other.get_last_lr(), other.anneal_func(0.25), sched.get_lr()

    both(run)


ERRORS = {
    "strategy": lambda m, opt: m.optim.swa_utils.SWALR(opt, 0.1, anneal_strategy="step"),
    "anneal epochs": lambda m, opt: m.optim.swa_utils.SWALR(opt, 0.1, anneal_epochs=-1),
    "float anneal epochs": lambda m, opt: m.optim.swa_utils.SWALR(opt, 0.1, anneal_epochs=2.0),
    "swa_lr list": lambda m, opt: m.optim.swa_utils.SWALR(opt, [0.1, 0.2]),
    "decay": lambda m, opt: m.optim.swa_utils.get_ema_avg_fn(1.5),
    "multi decay": lambda m, opt: m.optim.swa_utils.get_ema_multi_avg_fn(-0.1),
    "both fns": lambda m, opt: m.optim.swa_utils.AveragedModel(
        m.nn.Linear(2, 2),
        avg_fn=m.optim.swa_utils.get_swa_avg_fn(),
        multi_avg_fn=m.optim.swa_utils.get_swa_multi_avg_fn(),
    ),
}


@pytest.mark.parametrize("case", list(ERRORS))
def test_errors(case):
    def run(m):
        opt = m.optim.SGD([m.nn.Parameter(m.ones(2))], lr=1.0)
        return ERRORS[case](m, opt)

    both(run, compare=False)


def test_averaged_model_is_a_module_with_the_copy():
    def run(m):
        net = _model(m)
        avg = m.optim.swa_utils.AveragedModel(net)
        names = [n for n, _ in avg.named_parameters()] + [n for n, _ in avg.named_buffers()]
        return names, avg.n_averaged.dtype, avg.module is net, avg.module[0].weight is net[0].weight

    t, g = both(run, compare=False)
    assert (g[0], str(g[1]).split(".")[-1], g[2:]) == (t[0], str(t[1]).split(".")[-1], t[2:])
