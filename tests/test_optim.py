"""leafgrad.optim against torch.optim: trajectories, state, state dicts, errors, schedules."""

from __future__ import annotations

import copy
import importlib

import pytest
import torch
from conftest import both, lg

OPTIMIZERS = [
    ("SGD", {"lr": 0.1}),
    ("SGD", {"lr": 0.1, "momentum": 0.9}),
    ("SGD", {"lr": 0.05, "momentum": 0.9, "dampening": 0.3, "weight_decay": 0.01}),
    ("SGD", {"lr": 0.05, "momentum": 0.8, "nesterov": True, "maximize": True}),
    ("Adam", {}),
    ("Adam", {"lr": 0.05, "amsgrad": True}),
    ("Adam", {"lr": 0.02, "betas": (0.8, 0.9), "weight_decay": 0.1, "maximize": True}),
    ("Adam", {"lr": 0.05, "weight_decay": 0.1, "decoupled_weight_decay": True}),
    ("Adam", {"lr": 0.05, "foreach": False, "fused": None}),
    ("AdamW", {"lr": 0.05}),
    ("AdamW", {"lr": 0.05, "amsgrad": True, "weight_decay": 0.3}),
    ("RMSprop", {}),
    ("RMSprop", {"lr": 0.01, "centered": True, "momentum": 0.9, "weight_decay": 0.01}),
    ("RMSprop", {"lr": 0.01, "alpha": 0.9, "maximize": True}),
    ("Adagrad", {}),
    ("Adagrad", {"lr": 0.1, "lr_decay": 0.01, "initial_accumulator_value": 0.1}),
    ("Adagrad", {"lr": 0.1, "weight_decay": 0.1, "eps": 1e-6, "maximize": True}),
    ("Adamax", {}),
    ("Adamax", {"lr": 0.05, "betas": (0.8, 0.95), "weight_decay": 0.1, "maximize": True}),
    ("NAdam", {}),
    ("NAdam", {"lr": 0.05, "weight_decay": 0.1, "momentum_decay": 0.01}),
    ("NAdam", {"lr": 0.05, "weight_decay": 0.1, "decoupled_weight_decay": True}),
    ("RAdam", {}),
    ("RAdam", {"lr": 0.05, "betas": (0.5, 0.6), "weight_decay": 0.1}),
    ("RAdam", {"lr": 0.05, "weight_decay": 0.1, "decoupled_weight_decay": True, "maximize": True}),
    ("Adadelta", {}),
    ("Adadelta", {"lr": 0.5, "rho": 0.8, "weight_decay": 0.1, "maximize": True}),
    ("Rprop", {}),
    ("Rprop", {"lr": 0.05, "etas": (0.3, 1.5), "step_sizes": (1e-3, 0.2), "maximize": True}),
    ("ASGD", {}),
    ("ASGD", {"lr": 0.05, "lambd": 0.01, "alpha": 0.5, "t0": 3, "weight_decay": 0.1}),
    ("Adafactor", {}),
    (
        "Adafactor",
        {
            "lr": 0.05,
            "beta2_decay": -0.5,
            "eps": (1e-6, 1e-3),
            "d": 2.0,
            "weight_decay": 0.1,
            "maximize": True,
        },
    ),
    ("Adafactor", {"lr": 0.05, "foreach": True, "weight_decay": 0.01}),
]


def _problem(m, dtype_name="float32"):
    """Two leaf parameters and a small nonlinear loss, the same numbers in both libraries."""
    dtype = getattr(m, dtype_name)
    m.manual_seed(0)
    w = m.randn(3, 4, dtype=dtype, requires_grad=True)
    b = m.randn(4, dtype=dtype, requires_grad=True)
    x = m.randn(5, 3, dtype=dtype)

    def loss_fn():
        return ((x @ w + b).tanh() - 0.5).pow(2).mean() + 0.01 * w.abs().sum()

    return w, b, loss_fn


def _train(opt, loss_fn, steps):
    for _ in range(steps):
        opt.zero_grad()
        loss_fn().backward()
        opt.step()


def _state_tensors(opt, params):
    return [[v for v in opt.state[p].values()] for p in params]


@pytest.mark.parametrize("dtype_name", ["float32", "float64"])
@pytest.mark.parametrize("name,kwargs", OPTIMIZERS, ids=lambda v: str(v))
def test_trajectory_matches_torch(name, kwargs, dtype_name):
    tol = {"rtol": 1e-5, "atol": 1e-6} if dtype_name == "float32" else {}

    def f(m):
        w, b, loss_fn = _problem(m, dtype_name)
        opt = getattr(m.optim, name)([w, b], **kwargs)
        trajectory = []
        for _ in range(7):
            opt.zero_grad()
            loss_fn().backward()
            opt.step()
            trajectory.append([w.detach().clone(), b.detach().clone()])
        # parameters stay the same leaves, with PyTorch's count of in-place writes
        assert opt.param_groups[0]["params"][0] is w
        return trajectory, w, b, w._version, b._version, _state_tensors(opt, [w, b])

    both(f, **tol)


@pytest.mark.parametrize(
    "name,kwargs",
    [
        ("SGD", {"lr": 0.1, "momentum": 0.9}),
        ("Adam", {"lr": 0.01}),
        ("AdamW", {"lr": 0.01, "weight_decay": 0.1}),
        ("RMSprop", {"lr": 0.01, "momentum": 0.5}),
        ("Adagrad", {"lr": 0.1}),
        ("Adamax", {"lr": 0.01}),
        ("NAdam", {"lr": 0.01}),
        ("RAdam", {"lr": 0.01}),
        ("Adadelta", {"lr": 0.5}),
        ("Rprop", {"lr": 0.05}),
        ("ASGD", {"lr": 0.05, "t0": 2}),
        ("Adafactor", {"lr": 0.01}),
    ],
    ids=lambda v: str(v),
)
def test_tensor_learning_rate(name, kwargs):
    def f(m):
        w, b, loss_fn = _problem(m)
        opt = getattr(m.optim, name)([w, b], **{**kwargs, "lr": m.tensor(kwargs["lr"])})
        _train(opt, loss_fn, 4)
        return w, b, _state_tensors(opt, [w, b])

    # the state sums terms much larger than itself (RMSprop's momentum buffer of about 10 holds
    # 0.3), and float32's tanh and matmul round as XLA's do: rtol of the largest magnitude
    both(f, rtol=1e-5, atol=1e-6, of_largest=True)


@pytest.mark.parametrize(
    "name,kwargs",
    [
        ("Adam", {"fused": True}),
        ("AdamW", {"fused": True, "amsgrad": True}),
        ("Adam", {"foreach": True}),
        ("SGD", {"fused": True, "momentum": 0.9}),
        ("Adagrad", {"fused": True}),
        ("Adam", {"capturable": True}),  # CPU parameters: PyTorch's device check fails
        ("RMSprop", {"capturable": True}),
        ("Adam", {"differentiable": True}),  # in-place update of a leaf that requires grad
        ("Adamax", {"capturable": True}),
        ("NAdam", {"capturable": True}),
        ("RAdam", {"differentiable": True}),
        ("Adadelta", {"capturable": True}),
        ("Rprop", {"capturable": True}),
        ("ASGD", {"capturable": True}),
    ],
    ids=lambda v: str(v),
)
def test_implementation_flags(name, kwargs):
    # foreach/fused run PyTorch's for-loop arithmetic here, equal to its kernels to rounding
    def f(m):
        w, b, loss_fn = _problem(m)
        opt = getattr(m.optim, name)([w, b], **kwargs)
        _train(opt, loss_fn, 4)
        return w, b, _state_tensors(opt, [w, b])

    both(f, rtol=1e-5, atol=1e-6)


def test_deepcopy_of_optimizer():
    def f(m):
        w, b, loss_fn = _problem(m)
        opt = m.optim.Adam([w, b])
        _train(opt, loss_fn, 2)
        twin = copy.deepcopy(opt)
        return repr(twin), twin.state_dict()["state"]

    both(f)


def test_step_tensor_dtype_follows_default_dtype():
    def f(m):
        m.set_default_dtype(m.float64)
        w, b, loss_fn = _problem(m, "float64")
        opt = m.optim.Adam([w, b])
        _train(opt, loss_fn, 2)
        return opt.state[w]["step"], m.optim.Adagrad([w]).state[w]["step"]

    both(f)


def test_param_groups_with_their_own_options():
    def f(m):
        w, b, loss_fn = _problem(m)
        opt = m.optim.SGD([{"params": [w]}, {"params": b, "lr": 0.5}], lr=0.1, momentum=0.9)
        _train(opt, loss_fn, 4)
        return w, b, [g["lr"] for g in opt.param_groups], repr(opt)

    both(f)


def test_params_without_grad_are_skipped_and_get_no_state():
    def f(m):
        w, b, loss_fn = _problem(m)
        c = m.zeros(2, requires_grad=True)
        opt = m.optim.Adam([w, c, b], lr=0.1)
        _train(opt, loss_fn, 2)
        return c, len(opt.state), c in opt.state, sorted(opt.state[w])

    both(f)


def test_closure_is_evaluated_with_grad_enabled():
    def f(m):
        w, b, loss_fn = _problem(m)
        opt = m.optim.SGD([w, b], lr=0.1)

        def closure():
            opt.zero_grad()
            loss = loss_fn()
            loss.backward()
            return loss

        with m.no_grad():
            loss = opt.step(closure)
        return loss, w

    both(f)


def test_zero_grad_set_to_none_false_zeroes_in_place():
    def f(m):
        w, b, loss_fn = _problem(m)
        opt = m.optim.SGD([w, b])
        loss_fn().backward()
        g = w.grad
        opt.zero_grad(set_to_none=False)
        kept = w.grad is g
        opt.zero_grad()
        return kept, g, w.grad is None

    both(f)


@pytest.mark.parametrize("name,kwargs", OPTIMIZERS[1::2], ids=lambda v: str(v))
def test_state_dict_layout_and_round_trip(name, kwargs):
    def f(m):
        w, b, loss_fn = _problem(m)
        opt = getattr(m.optim, name)([{"params": [w]}, {"params": [b], "lr": 0.02}], **kwargs)
        _train(opt, loss_fn, 3)
        saved = copy.deepcopy(opt.state_dict())
        w2, b2 = w.detach().clone().requires_grad_(), b.detach().clone().requires_grad_()
        opt2 = getattr(m.optim, name)([{"params": [w2]}, {"params": [b2]}], **kwargs)
        opt2.load_state_dict(saved)
        # saved groups' options (lr 0.02) replace the new optimizer's; state is keyed by w2, b2
        return saved, opt2.state_dict(), sorted(opt2.state[w2]), opt2.param_groups[1]["lr"]

    both(f)


def test_loaded_state_continues_the_trajectory():
    def f(m):
        w, b, loss_fn = _problem(m)
        opt = m.optim.Adam([w, b], lr=0.05, amsgrad=True)
        _train(opt, loss_fn, 3)
        saved = copy.deepcopy(opt.state_dict())
        opt2 = m.optim.Adam([w, b], lr=0.05, amsgrad=True)
        opt2.load_state_dict(saved)
        _train(opt2, loss_fn, 3)
        return w, b, opt2.state_dict()["state"]

    both(f, rtol=1e-5, atol=1e-6)


def test_load_state_dict_errors():
    def groups(m):
        w, b, _ = _problem(m)
        return m.optim.SGD([w, b]), m.optim.SGD([{"params": [w]}, {"params": [b]}]), w, b

    def different_group_count(m):
        one, two, _, _ = groups(m)
        one.load_state_dict(two.state_dict())

    def different_group_size(m):
        one, _, w, _ = groups(m)
        m.optim.SGD([w]).load_state_dict(one.state_dict())

    both(different_group_count)
    both(different_group_size)


def test_reprs():
    def f(m):
        w, b, _ = _problem(m)
        return [
            repr(m.optim.SGD([w], lr=0.1, momentum=0.9, nesterov=True)),
            repr(m.optim.Adam([w, b])),
            repr(m.optim.AdamW([{"params": [w]}, {"params": [b], "lr": 3e-4}])),
            repr(m.optim.RMSprop([w])),
            repr(m.optim.Adagrad([w])),
            repr(m.optim.Adamax([w])),
            repr(m.optim.NAdam([w], decoupled_weight_decay=True)),
            repr(m.optim.RAdam([w, b])),
            repr(m.optim.Adadelta([w], rho=0.5)),
            repr(m.optim.Rprop([w])),
            repr(m.optim.ASGD([w, b])),
            repr(m.optim.Adafactor([w, b], d=2.0)),
            repr(m.optim.Muon([w], nesterov=False)),
        ]

    both(f)


def _bad(fn):
    return lambda m: fn(m, *_problem(m)[:2])


@pytest.mark.parametrize(
    "fn",
    [
        lambda m, w, b: m.optim.SGD([]),
        lambda m, w, b: m.optim.SGD(w),
        lambda m, w, b: m.optim.SGD([{"params": {w, b}}]),
        lambda m, w, b: m.optim.SGD([w * 2]),
        lambda m, w, b: m.optim.SGD([w, 3]),
        lambda m, w, b: m.optim.SGD([{"params": [w]}, {"params": [w, b]}]),
        lambda m, w, b: m.optim.SGD([("w", w), b]),
        lambda m, w, b: m.optim.SGD([{"params": [("w", w)]}, {"params": [b]}]),
        lambda m, w, b: m.optim.SGD([w], lr=-1),
        lambda m, w, b: m.optim.SGD([w], momentum=-0.5),
        lambda m, w, b: m.optim.SGD([w], weight_decay=-1),
        lambda m, w, b: m.optim.SGD([w], nesterov=True),
        lambda m, w, b: m.optim.SGD([w], momentum=0.9, dampening=0.1, nesterov=True),
        lambda m, w, b: m.optim.SGD([w], fused=True, foreach=True),
        lambda m, w, b: m.optim.SGD([w], fused=True, differentiable=True),
        lambda m, w, b: m.optim.Adam([w], lr=-1e-3),
        lambda m, w, b: m.optim.Adam([w], eps=-1.0),
        lambda m, w, b: m.optim.Adam([w], betas=(1.0, 0.999)),
        lambda m, w, b: m.optim.Adam([w], betas=(0.9, -0.1)),
        lambda m, w, b: m.optim.Adam([w], betas=(0.9, 1)),
        lambda m, w, b: m.optim.Adam([w], weight_decay=-1),
        lambda m, w, b: m.optim.AdamW([w], fused=True, foreach=True),
        lambda m, w, b: m.optim.RMSprop([w], alpha=-1),
        lambda m, w, b: m.optim.Adamax([w], betas=(0.9, 1.0)),
        lambda m, w, b: m.optim.NAdam([w], momentum_decay=-1),
        lambda m, w, b: m.optim.RAdam([w], eps=-1),
        lambda m, w, b: m.optim.Adadelta([w], rho=1.5),
        lambda m, w, b: m.optim.Rprop([w], etas=(1.2, 0.5)),
        lambda m, w, b: m.optim.ASGD([w], weight_decay=-0.1),
        lambda m, w, b: m.optim.Adadelta([w], lr=m.tensor([0.1, 0.2])),
        lambda m, w, b: m.optim.RMSprop([w], momentum=-1),
        lambda m, w, b: m.optim.Adagrad([w], lr_decay=-1),
        lambda m, w, b: m.optim.Adagrad([w], initial_accumulator_value=-1),
        lambda m, w, b: m.optim.Adafactor([w], lr=-1),
        lambda m, w, b: m.optim.Adafactor([w], beta2_decay=0.5),
        lambda m, w, b: m.optim.Adafactor([w], eps=(-1.0, 1e-3)),
        lambda m, w, b: m.optim.Adafactor([w], eps=(None, -1.0)),
        lambda m, w, b: m.optim.Adafactor([w], d=0.5),
        lambda m, w, b: m.optim.Adafactor([w], weight_decay=-1),
        lambda m, w, b: m.optim.Adafactor([w], lr=m.tensor([0.1, 0.2])),
        lambda m, w, b: m.optim.Muon([w, b]),
        lambda m, w, b: m.optim.Muon([w], lr=-1),
        lambda m, w, b: m.optim.Muon([w], momentum=-0.5),
        lambda m, w, b: m.optim.Muon([w], weight_decay=-1),
        lambda m, w, b: m.optim.Muon([w], adjust_lr_fn="sqrt"),
        lambda m, w, b: m.optim.Muon([w], ns_steps=100).step(),
        lambda m, w, b: m.optim.SGD([w]).add_param_group([b]),
        lambda m, w, b: m.optim.Optimizer([w], {}).step(),
    ],
)
def test_errors(fn):
    both(_bad(fn))


def test_duplicate_parameters_warn():
    def f(m):
        w, b, _ = _problem(m)
        return len(m.optim.SGD([w, b, w]).param_groups[0]["params"])

    both(f)


def test_non_leaf_that_retains_grad_is_accepted():
    def f(m):
        w, _, _ = _problem(m)
        y = w * 2
        y.retain_grad()
        return len(m.optim.SGD([y]).param_groups[0]["params"])

    both(f)


def test_named_parameters_and_add_param_group():
    def f(m):
        w, b, loss_fn = _problem(m)
        opt = m.optim.Adam([("w", w)], lr=0.1)
        opt.add_param_group({"params": [("b", b)], "lr": 0.01})
        _train(opt, loss_fn, 2)
        sd = opt.state_dict()
        return [g["param_names"] for g in sd["param_groups"]], w, b

    both(f)


def test_step_hooks_run_in_order_and_can_be_removed():
    def f(m):
        w, b, loss_fn = _problem(m)
        opt = m.optim.SGD([w, b], lr=0.1)
        calls = []
        h1 = opt.register_step_pre_hook(lambda o, a, k: calls.append(("pre", len(a), k)))
        opt.register_step_post_hook(lambda o, a, k: calls.append(("post", len(a), k)))
        module = importlib.import_module(m.__name__ + ".optim.optimizer")
        g = module.register_optimizer_step_pre_hook(lambda o, a, k: calls.append("g"))
        try:
            _train(opt, loss_fn, 1)
            h1.remove()
            _train(opt, loss_fn, 1)
        finally:
            g.remove()
        return calls

    both(f)


def test_state_dict_hooks():
    def f(m):
        w, _, _ = _problem(m)
        opt = m.optim.SGD([w])
        calls = []
        opt.register_state_dict_pre_hook(lambda o: calls.append("pre"))
        opt.register_state_dict_post_hook(lambda o, sd: {**sd, "extra": 1})
        opt.register_load_state_dict_pre_hook(lambda o, sd: calls.append("lpre"))
        opt.register_load_state_dict_post_hook(lambda o: calls.append("lpost"), prepend=True)
        sd = opt.state_dict()
        opt.load_state_dict(sd)
        return calls, sorted(sd)

    both(f)


# --- learning-rate schedulers ---------------------------------------------------------------

SCHEDULERS = [
    ("StepLR", {"step_size": 3, "gamma": 0.5}),
    ("MultiStepLR", {"milestones": [2, 5, 5, 11], "gamma": 0.3}),
    ("ExponentialLR", {"gamma": 0.9}),
    ("CosineAnnealingLR", {"T_max": 7}),
    ("CosineAnnealingLR", {"T_max": 10, "eta_min": 0.01}),
    ("LambdaLR", {"lr_lambda": lambda e: 0.95**e + 0.1 * (e % 3)}),
    ("MultiplicativeLR", {"lr_lambda": lambda e: 0.9}),
    ("ConstantLR", {"factor": 0.5, "total_iters": 4}),
    ("LinearLR", {"start_factor": 0.25, "total_iters": 6}),
    ("PolynomialLR", {"total_iters": 12, "power": 2.0}),
    ("OneCycleLR", {"max_lr": 1.0, "total_steps": 26}),
    ("OneCycleLR", {"max_lr": [1.0, 0.5], "total_steps": 30, "anneal_strategy": "linear"}),
    ("OneCycleLR", {"max_lr": 0.3, "epochs": 3, "steps_per_epoch": 10, "three_phase": True}),
    ("CosineAnnealingWarmRestarts", {"T_0": 4}),
    ("CosineAnnealingWarmRestarts", {"T_0": 3, "T_mult": 2, "eta_min": 0.01}),
    ("CyclicLR", {"base_lr": 0.01, "max_lr": 0.1, "step_size_up": 4}),
    (
        "CyclicLR",
        {
            "base_lr": [0.01, 0.02],
            "max_lr": 0.1,
            "step_size_up": 3,
            "step_size_down": 5,
            "mode": "triangular2",
        },
    ),
    (
        "CyclicLR",
        {
            "base_lr": 0.01,
            "max_lr": 0.1,
            "step_size_up": 3,
            "mode": "exp_range",
            "gamma": 0.9,
            "cycle_momentum": False,
        },
    ),
    (
        "CyclicLR",
        {
            "base_lr": 0.01,
            "max_lr": 0.1,
            "step_size_up": 3,
            "scale_fn": lambda x: 0.5**x,
            "scale_mode": "iterations",
        },
    ),
]


def _composite(m, kind, steps=20):
    w, b, _ = _problem(m)
    opt = m.optim.SGD([{"params": [w]}, {"params": [b], "lr": 0.2}], lr=0.1, momentum=0.9)
    L = m.optim.lr_scheduler
    if kind == "sequential":
        sched = L.SequentialLR(
            opt, [L.LinearLR(opt, 0.1, total_iters=3), L.ExponentialLR(opt, 0.8)], milestones=[4]
        )
    else:
        sched = L.ChainedScheduler(
            [L.ConstantLR(opt, 0.5, total_iters=5), L.ExponentialLR(opt, 0.9)]
        )
    lrs = [sched.get_last_lr()]
    for _ in range(steps):
        opt.step()
        sched.step()
        lrs.append(sched.get_last_lr())
    state = sched.state_dict()
    return lrs, [g["lr"] for g in opt.param_groups], sorted(state), len(state["_schedulers"])


@pytest.mark.parametrize("kind", ["sequential", "chained"])
def test_composite_schedulers(kind):
    both(lambda m: _composite(m, kind))


@pytest.mark.parametrize(
    "make",
    [
        lambda m, opt: m.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=0),
        lambda m, opt: m.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=2, T_mult=0),
        lambda m, opt: m.optim.lr_scheduler.CyclicLR(opt, 0.01, 0.1, mode="sine"),
        lambda m, opt: m.optim.lr_scheduler.CyclicLR(
            m.optim.Adagrad(opt.param_groups[0]["params"]), 0.01, 0.1
        ),
        lambda m, opt: m.optim.lr_scheduler.SequentialLR(opt, [], milestones=[]),
        lambda m, opt: m.optim.lr_scheduler.SequentialLR(
            opt, [m.optim.lr_scheduler.ExponentialLR(opt, 0.9)], milestones=[3]
        ),
        lambda m, opt: m.optim.lr_scheduler.ChainedScheduler([]),
    ],
)
def test_new_scheduler_errors(make):
    def fn(m):
        w, b, _ = _problem(m)
        make(m, m.optim.SGD([w, b], lr=0.1, momentum=0.9))

    both(fn)


def test_warm_restarts_with_fractional_epochs():
    def fn(m):
        w, b, _ = _problem(m)
        opt = m.optim.SGD([w], lr=0.1)
        sched = m.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=3, T_mult=2)
        out = []
        for epoch in [0.5, 1.25, 3.0, 4.5, 9.1, 20.0]:
            sched.step(epoch)
            out.append((sched.get_last_lr(), sched.T_i, sched.T_cur, sched.last_epoch))
        return out

    both(fn)


def _schedule(m, name, kwargs, opt_name="SGD", steps=25):
    w, b, loss_fn = _problem(m)
    opt = getattr(m.optim, opt_name)([{"params": [w]}, {"params": [b], "lr": 0.2}], lr=0.1)
    sched = getattr(m.optim.lr_scheduler, name)(opt, **kwargs)
    lrs = [sched.get_last_lr()]
    momenta = []
    for _ in range(steps):
        opt.step()
        sched.step()
        lrs.append(sched.get_last_lr())
        momenta.append([g.get("momentum", g.get("betas")) for g in opt.param_groups])
    return lrs, momenta, [g["lr"] for g in opt.param_groups], sched.last_epoch


def _scheduler_id(v) -> str:
    # ids must not contain object addresses: pytest-xdist workers must collect the same names
    if isinstance(v, dict):
        return "-".join(f"{k}={getattr(x, '__name__', x)}" for k, x in v.items())
    return str(v)


@pytest.mark.parametrize("name,kwargs", SCHEDULERS, ids=_scheduler_id)
def test_scheduler_lr_sequence(name, kwargs):
    both(lambda m: _schedule(m, name, kwargs))


def test_one_cycle_cycles_adam_beta1():
    both(lambda m: _schedule(m, "OneCycleLR", {"max_lr": 0.01, "total_steps": 25}, "Adam"))


def test_one_cycle_past_total_steps_raises():
    both(lambda m: _schedule(m, "OneCycleLR", {"max_lr": 0.01, "total_steps": 5}, steps=6))


@pytest.mark.parametrize(
    "kwargs",
    [
        {"max_lr": 0.1},
        {"max_lr": 0.1, "total_steps": 0},
        {"max_lr": 0.1, "epochs": 0, "steps_per_epoch": 3},
        {"max_lr": 0.1, "total_steps": 10, "pct_start": 1},
        {"max_lr": 0.1, "total_steps": 10, "anneal_strategy": "exp"},
        {"max_lr": [0.1], "total_steps": 10},
    ],
)
def test_one_cycle_errors(kwargs):
    both(lambda m: _schedule(m, "OneCycleLR", kwargs, steps=1))


def test_one_cycle_needs_momentum():
    def f(m):
        w, _, _ = _problem(m)
        m.optim.lr_scheduler.OneCycleLR(m.optim.Adagrad([w]), max_lr=0.1, total_steps=5)

    both(f)


def test_scheduler_step_before_optimizer_step_warns():
    def f(m):
        w, _, _ = _problem(m)
        opt = m.optim.SGD([w], lr=0.1)
        sched = m.optim.lr_scheduler.StepLR(opt, step_size=1)
        sched.step()
        return sched.get_last_lr()

    both(f)


def test_optimizer_step_overridden_warns():
    def f(m):
        w, _, _ = _problem(m)
        opt = m.optim.SGD([w], lr=0.1)
        sched = m.optim.lr_scheduler.ExponentialLR(opt, gamma=0.5)
        opt.step = lambda: None
        sched.step()
        return sched.get_last_lr()

    both(f)


def test_get_lr_outside_step_and_epoch_argument_warn():
    def f(m):
        w, _, _ = _problem(m)
        opt = m.optim.SGD([w], lr=0.1)
        sched = m.optim.lr_scheduler.MultiStepLR(opt, milestones=[2, 4])
        opt.step()
        direct = sched.get_lr()
        sched.step(5)  # closed form
        return direct, sched.get_last_lr()

    both(f)


@pytest.mark.parametrize("name,kwargs", SCHEDULERS[:5] + SCHEDULERS[7:10], ids=lambda v: str(v))
def test_scheduler_closed_form_with_epoch(name, kwargs):
    def f(m):
        w, _, _ = _problem(m)
        opt = m.optim.SGD([w], lr=0.1)
        sched = getattr(m.optim.lr_scheduler, name)(opt, **kwargs)
        out = []
        for e in [3, 1, 7, 12]:
            opt.step()
            sched.step(e)
            out.append(sched.get_last_lr())
        return out

    both(f)


def test_scheduler_state_dict_and_resume():
    def f(m):
        w, _, _ = _problem(m)
        opt = m.optim.SGD([w], lr=0.1)
        sched = m.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=10)
        for _ in range(4):
            opt.step()
            sched.step()
        sd = sched.state_dict()
        resumed = m.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=10, last_epoch=sd["last_epoch"])
        resumed.load_state_dict(sd)
        lrs = []
        for _ in range(6):
            opt.step()
            resumed.step()
            lrs.append(resumed.get_last_lr())
        return sorted(sd), {k: v for k, v in sd.items() if k != "_last_lr"}, lrs

    both(f)


def test_lambda_scheduler_state_dict():
    class Halving:
        def __init__(self):
            self.factor = 0.5

        def __call__(self, epoch):
            return self.factor**epoch

    def f(m):
        w, _, _ = _problem(m)
        opt = m.optim.SGD([{"params": [w]}, {"params": [m.zeros(1, requires_grad=True)]}])
        sched = m.optim.lr_scheduler.LambdaLR(opt, [Halving(), lambda e: 1.0])
        return sched.state_dict()["lr_lambdas"], sorted(sched.state_dict())

    both(f)


def test_resume_without_initial_lr_raises():
    def f(m):
        w, _, _ = _problem(m)
        m.optim.lr_scheduler.StepLR(m.optim.SGD([w]), step_size=2, last_epoch=3)

    both(f)


def test_scheduler_needs_an_optimizer():
    both(lambda m: m.optim.lr_scheduler.StepLR(object(), step_size=2))
    both(lambda m: m.optim.lr_scheduler.ReduceLROnPlateau(object()))


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"mode": "max", "patience": 1, "factor": 0.5},
        {"patience": 0, "threshold": 0.1, "threshold_mode": "abs", "cooldown": 2},
        {"patience": 1, "min_lr": [0.05, 0.0], "factor": 0.2},
        {"mode": "max", "threshold_mode": "abs", "patience": 0, "eps": 0.05},
    ],
)
def test_reduce_lr_on_plateau(kwargs):
    metrics = [1.0, 0.9, 0.95, 0.95, 0.96, 0.89, 0.9, 0.9, 0.91, 0.92, 0.5, 0.6, 0.7, 0.8]

    def f(m):
        w, b, _ = _problem(m)
        opt = m.optim.SGD([{"params": [w]}, {"params": [b], "lr": 0.2}], lr=0.1)
        sched = m.optim.lr_scheduler.ReduceLROnPlateau(opt, **kwargs)
        out = []
        for metric in metrics * 2:
            opt.step()
            sched.step(m.tensor(metric) if metric > 0.9 else metric)
            out.append((sched.get_last_lr(), sched.num_bad_epochs, sched.best))
        return out, sorted(sched.state_dict())

    both(f)


@pytest.mark.parametrize(
    "kwargs",
    [{"factor": 1.0}, {"mode": "up"}, {"threshold_mode": "pct"}, {"min_lr": [0.1, 0.2]}],
)
def test_reduce_lr_on_plateau_errors(kwargs):
    def f(m):
        w, _, _ = _problem(m)
        m.optim.lr_scheduler.ReduceLROnPlateau(m.optim.SGD([w]), **kwargs)

    both(f)


def test_namespace():
    missing = set(torch.optim.lr_scheduler.__all__) - set(lg.optim.lr_scheduler.__all__)
    assert missing == set()
    missing = set(torch.optim.__all__) - set(lg.optim.__all__)
    not_yet = {"SparseAdam"}
    assert missing <= not_yet | {"swap_in_optimizer_params_and_state"}, missing
    for name in ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Optimizer", "NAdam", "ASGD"]:
        assert hasattr(lg.optim, name)


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"nesterov": False, "adjust_lr_fn": "match_rms_adamw", "lr": 0.02},
        {"lr": 0.01, "weight_decay": 0.0, "momentum": 0.8, "ns_steps": 3},
        {"adjust_lr_fn": "original", "ns_coefficients": (3.0, -3.2, 1.2)},
    ],
    ids=str,
)
@pytest.mark.parametrize("shape", [(3, 5), (6, 4)], ids=str)
def test_muon_trajectory(kwargs, shape):
    """Muon's bfloat16 Newton-Schulz iteration and update, wide and tall matrices."""

    def f(m):
        m.manual_seed(0)
        w = m.randn(*shape, requires_grad=True)
        x = m.randn(7, shape[0])
        opt = m.optim.Muon([w], **kwargs)
        trajectory = []
        for _ in range(5):
            opt.zero_grad()
            ((x @ w).tanh() ** 2).mean().backward()
            opt.step()
            trajectory.append(w.detach().clone())
        return trajectory, w._version, opt.state_dict()

    both(f, rtol=1e-5, atol=1e-6)
