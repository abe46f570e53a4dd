"""The optimizers' group update (Note [Group update]) against torch's for-loop kernels: the same
values bit for bit, the same version counts, state and state dicts, and the per-op path wherever
the group update could behave differently."""

from __future__ import annotations

import importlib

import numpy as np
import pytest
from conftest import both, lg

import leafgrad.optim.sgd as lg_sgd

SHAPES = [(33, 17), (17,), (8, 33), (1,), (5, 4, 3)]

SGD_CONFIGS = [
    {"lr": 0.1},
    {"lr": 0.1, "momentum": 0.9},
    {"lr": 0.05, "momentum": 0.9, "dampening": 0.3},
    {"lr": 0.05, "momentum": 0.8, "weight_decay": 0.01},
    {"lr": 0.05, "momentum": 0.8, "nesterov": True},
    {"lr": 0.07, "momentum": 0.5, "nesterov": True, "weight_decay": 0.02, "maximize": True},
    {"lr": 0.03, "weight_decay": 1e-3, "maximize": True},
    {"lr": 0.1, "momentum": 1, "dampening": 0.5, "weight_decay": 1},  # alpha 1: no multiply
]


@pytest.fixture
def group_updates(monkeypatch):
    """The results of every group-update attempt leafgrad's ``sgd`` makes (True: taken)."""
    taken: list[bool] = []
    real = lg_sgd.sgd_group

    def spy(*args, **kwargs):
        taken.append(real(*args, **kwargs))
        return taken[-1]

    monkeypatch.setattr(lg_sgd, "sgd_group", spy)
    return taken


def _functional_sgd(m):
    return importlib.import_module(m.__name__ + ".optim.sgd").sgd


def _params(m, dtype_name, shapes=SHAPES, seed=0):
    rng = np.random.default_rng(seed)
    dtype = getattr(m, dtype_name)
    return [m.tensor(rng.standard_normal(s), dtype=dtype).requires_grad_() for s in shapes], rng


def _set_grads(m, params, rng, skip=()):
    for i, p in enumerate(params):
        if i in skip:
            p.grad = None
        else:
            p.grad = m.tensor(rng.standard_normal(tuple(p.shape)), dtype=p.dtype)


def _snapshot(opt, params):
    """Values, versions and state of every parameter, gradient and momentum buffer."""
    out = []
    for p in params:
        state = opt.state[p] if p in opt.state else {}
        buf = state.get("momentum_buffer")
        out.append(
            [
                p.detach().clone(),
                p._version,
                None if p.grad is None else (p.grad.clone(), p.grad._version),
                None if buf is None else (buf.clone(), buf._version),
            ]
        )
    return out


@pytest.mark.parametrize("dtype_name", ["float32", "float64"])
@pytest.mark.parametrize("kwargs", SGD_CONFIGS, ids=str)
def test_sgd_group_update_matches_torch_bit_for_bit(kwargs, dtype_name, group_updates):
    def f(m):
        params, rng = _params(m, dtype_name)
        opt = m.optim.SGD(params, **kwargs)
        grads, trajectory = [], []
        for _ in range(5):
            _set_grads(m, params, rng)
            grads.append([p.grad for p in params])
            opt.step()
            # the step leaves .grad as it was: the same objects
            assert all(p.grad is g for p, g in zip(params, grads[-1]))
            trajectory.append(_snapshot(opt, params))
        assert all(opt.param_groups[0]["params"][i] is p for i, p in enumerate(params))
        return trajectory, opt.state_dict()

    both(f, exact=True)
    assert group_updates == [True] * 5


def test_param_groups_with_their_own_settings(group_updates):
    def f(m):
        params, rng = _params(m, "float64")
        opt = m.optim.SGD(
            [
                {"params": params[:2], "momentum": 0.9, "nesterov": True},
                {"params": params[2:4], "lr": 0.3, "weight_decay": 0.1, "maximize": True},
                {"params": params[4:], "momentum": 0.7, "dampening": 0.2},
            ],
            lr=0.05,
        )
        out = []
        for _ in range(4):
            _set_grads(m, params, rng)
            opt.step()
            out.append(_snapshot(opt, params))
        return out, opt.state_dict()

    both(f, exact=True)
    assert group_updates == [True] * 12


def test_params_without_grad_get_their_buffer_when_they_first_have_one(group_updates):
    def f(m):
        params, rng = _params(m, "float32")
        opt = m.optim.SGD(params, lr=0.1, momentum=0.9, weight_decay=0.01)
        out = []
        for skip in [(1, 3), (0,), (), (2, 4), ()]:
            _set_grads(m, params, rng, skip)
            opt.step()
            out.append(_snapshot(opt, params))
        return out, opt.state_dict()

    both(f, exact=True)
    assert group_updates == [True] * 5


def test_a_group_whose_params_all_lack_grads_is_unchanged():
    def f(m):
        params, _ = _params(m, "float32")
        opt = m.optim.SGD(params, lr=0.1, momentum=0.9)
        opt.step()
        return _snapshot(opt, params), opt.state_dict()

    both(f, exact=True)


def test_float32_and_float64_params_in_one_group(group_updates):
    def f(m):
        a, rng = _params(m, "float32", SHAPES[:2])
        b, _ = _params(m, "float64", SHAPES[2:], seed=1)
        params = [a[0], b[0], a[1], b[1], b[2]]
        opt = m.optim.SGD(params, lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.1)
        out = []
        for _ in range(3):
            _set_grads(m, params, rng)
            opt.step()
            out.append(_snapshot(opt, params))
        return out

    both(f, exact=True)
    assert group_updates == [True] * 3


@pytest.mark.parametrize("as_tensor", [False, True])
def test_learning_rate_changes_between_steps(as_tensor, group_updates):
    def f(m):
        params, rng = _params(m, "float32")
        lr = m.tensor(0.1) if as_tensor else 0.1
        opt = m.optim.SGD(params, lr=lr, momentum=0.9)
        sched = m.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.7)
        out = []
        for _ in range(4):
            _set_grads(m, params, rng)
            opt.step()
            sched.step()
            out.append(_snapshot(opt, params))
        return out

    both(f, exact=True)
    assert group_updates == [True] * 4


def test_memory_shared_with_tensors_outside_the_optimizer(group_updates):
    # a parameter that is a view of a base, and one with a detached alias: both see the update
    def f(m):
        rng = np.random.default_rng(3)
        base = m.tensor(rng.standard_normal((4, 6)), dtype=m.float32)
        w = base[1:3]
        w.requires_grad_()
        b = m.tensor(rng.standard_normal(6), dtype=m.float32, requires_grad=True)
        alias = b.detach()
        opt = m.optim.SGD([w, b], lr=0.1, momentum=0.9)
        out = []
        for _ in range(3):
            _set_grads(m, [w, b], rng)
            opt.step()
            out.append([base.clone(), base._version, alias.clone(), alias._version])
            out.append(_snapshot(opt, [w, b]))
        return out

    both(f, exact=True)
    assert group_updates == [True] * 3


def test_a_transposed_param_takes_the_per_op_path(group_updates):
    def f(m):
        rng = np.random.default_rng(5)
        base = m.tensor(rng.standard_normal((4, 6)), dtype=m.float32)
        w = base.t()
        w.requires_grad_()
        opt = m.optim.SGD([w], lr=0.1, momentum=0.9)
        out = []
        for _ in range(2):
            _set_grads(m, [w], rng)
            opt.step()
            out.append([base.clone(), base._version, _snapshot(opt, [w])])
        return out

    both(f, exact=True)
    assert group_updates == [False] * 2


def test_a_detached_alias_sees_the_group_update(group_updates):
    def f(m):
        params, rng = _params(m, "float64")
        aliases = [params[0].detach(), params[2].data]
        opt = m.optim.SGD(params, lr=0.1, momentum=0.5)
        out = []
        for _ in range(3):
            _set_grads(m, params, rng)
            opt.step()
            out.append([[a.clone(), a._version] for a in aliases])
        return out

    both(f, exact=True)
    assert group_updates == [True] * 3


def test_params_sharing_memory_take_the_per_op_path(group_updates):
    # two parameters that are views of one base share its version counter: each add_ bumps both
    def f(m):
        rng = np.random.default_rng(4)
        base = m.tensor(rng.standard_normal((3, 5)), dtype=m.float32)
        p, q = base[0], base[1:]
        p.requires_grad_()
        q.requires_grad_()
        opt = m.optim.SGD([p, q], lr=0.1, momentum=0.9)
        out = []
        for _ in range(3):
            _set_grads(m, [p, q], rng)
            opt.step()
            out.append([base.clone(), base._version, _snapshot(opt, [p, q])])
        return out

    both(f, exact=True)
    assert group_updates == [False] * 3


def test_duplicate_params_take_the_per_op_path(group_updates):
    def f(m):
        params, rng = _params(m, "float32", SHAPES[:2])
        opt = m.optim.SGD([params[0], params[1], params[0]], lr=0.1, momentum=0.9)
        out = []
        for _ in range(3):
            _set_grads(m, params, rng)
            opt.step()
            out.append(_snapshot(opt, params))
        return out

    both(f, exact=True)
    assert group_updates == [False] * 3


def test_grad_aliasing_a_param_takes_the_per_op_path(group_updates):
    def f(m):
        params, rng = _params(m, "float32", SHAPES[:2])
        opt = m.optim.SGD(params, lr=0.1)
        params[0].grad = params[0].detach()
        params[1].grad = m.ones(SHAPES[1])
        opt.step()
        return _snapshot(opt, params)

    both(f, exact=True)
    assert group_updates == [False]


def test_learning_rate_requiring_grad_takes_the_per_op_path(group_updates):
    def f(m):
        params, rng = _params(m, "float32")
        lr = m.tensor(0.1, requires_grad=True)
        opt = m.optim.SGD(params, lr=lr, momentum=0.9)
        out = []
        for _ in range(2):
            _set_grads(m, params, rng)
            opt.step()
            out.append(_snapshot(opt, params))
        return out

    both(f, exact=True)
    assert group_updates == [False] * 2


def test_differentiable_sgd_takes_the_per_op_path(group_updates):
    # in grad mode the in-place write to a leaf that requires grad raises, as in torch
    def f(m):
        params, rng = _params(m, "float32", SHAPES[:2])
        opt = m.optim.SGD(params, lr=0.1, differentiable=True)
        _set_grads(m, params, rng)
        opt.step()

    both(f)
    assert group_updates == [False]


def test_functional_sgd_in_grad_mode_on_plain_tensors(group_updates):
    # not under no_grad: the per-op path records nothing for tensors that do not require grad
    def f(m):
        params, rng = _params(m, "float32", SHAPES[:2])
        params = [p.detach() for p in params]
        grads = [m.ones_like(p) for p in params]
        bufs = [None, None]
        for _ in range(2):
            _functional_sgd(m)(
                params,
                grads,
                bufs,
                weight_decay=0.1,
                momentum=0.9,
                lr=0.1,
                dampening=0.0,
                nesterov=False,
                maximize=False,
            )
        return params, [p._version for p in params], bufs, [b._version for b in bufs]

    both(f, exact=True)
    assert group_updates == [False] * 2


def test_under_no_grad_the_functional_sgd_takes_the_group_update(group_updates):
    def f(m):
        params, rng = _params(m, "float64", SHAPES[:3])
        grads = [m.tensor(rng.standard_normal(tuple(p.shape))) for p in params]
        bufs = [None, None, None]
        with m.no_grad():
            for _ in range(3):
                _functional_sgd(m)(
                    params,
                    grads,
                    bufs,
                    weight_decay=0.0,
                    momentum=0.9,
                    lr=0.2,
                    dampening=0.1,
                    nesterov=True,
                    maximize=True,
                )
        return params, [p._version for p in params], bufs, [b._version for b in bufs]

    both(f, exact=True)
    assert group_updates == [True] * 3


def test_loaded_state_continues_bit_for_bit(group_updates):
    def f(m):
        params, rng = _params(m, "float32")
        opt = m.optim.SGD(params, lr=0.1, momentum=0.9, weight_decay=0.01)
        _set_grads(m, params, rng)
        opt.step()
        twin = [p.detach().clone().requires_grad_() for p in params]
        opt2 = m.optim.SGD(twin, lr=0.1, momentum=0.9, weight_decay=0.01)
        opt2.load_state_dict(opt.state_dict())
        out = []
        for _ in range(2):
            _set_grads(m, twin, rng)
            opt2.step()
            out.append(_snapshot(opt2, twin))
        # torch's loaded buffers are the saved tensors themselves: the first optimizer's change
        out.append(_snapshot(opt, params))
        return out

    both(f, exact=True)
    assert group_updates == [True] * 3


def test_nn_module_training_matches_the_per_op_path_bit_for_bit(group_updates, monkeypatch):
    # the forward and backward match torch to rounding only, so the bit-for-bit comparison of
    # the update is with leafgrad's own per-op path on the same gradients
    def f(m):
        m.manual_seed(0)
        model = m.nn.Sequential(m.nn.Linear(12, 16), m.nn.ReLU(), m.nn.Linear(16, 3))
        opt = m.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, nesterov=True)
        x = m.randn(8, 12)
        y = m.tensor([0, 1, 2, 0, 1, 2, 0, 1])
        for _ in range(4):
            opt.zero_grad()
            m.nn.functional.cross_entropy(model(x), y).backward()
            opt.step()
        params = list(model.parameters())
        return [p.detach() for p in params], [p._version for p in params], opt.state_dict()

    _, fast = both(f)
    assert group_updates == [True] * 4
    monkeypatch.setattr(lg_sgd, "sgd_group", lambda *args, **kwargs: False)
    slow = f(lg)
    for a, b in zip(fast[0], slow[0]):
        np.testing.assert_array_equal(np.asarray(a._data), np.asarray(b._data))
    assert fast[1] == slow[1]
    for i, state in slow[2]["state"].items():
        buf, fast_buf = state["momentum_buffer"], fast[2]["state"][i]["momentum_buffer"]
        np.testing.assert_array_equal(np.asarray(fast_buf._data), np.asarray(buf._data))
        assert fast_buf._version == buf._version


# --- Note [Donated parameters] -------------------------------------------------------------------


def _donation_masks():
    from leafgrad.optim import _group_update as G

    return [key[-2:] for key in G._KERNELS if key[0] == "sgd"]


@pytest.mark.parametrize("momentum", [0.0, 0.9])
def test_arrays_held_only_by_their_tensors_are_donated(momentum):
    from leafgrad.optim import _group_update as G

    G._KERNELS.clear()
    p = lg.ones(4, 3, requires_grad=True)
    q = lg.ones(3, requires_grad=True)
    opt = lg.optim.SGD([p, q], lr=0.1, momentum=momentum)
    for _ in range(3):
        opt.zero_grad()
        (p.sum(0) * q).sum().backward()
        opt.step()
    assert ((True, True), (False, False)) in _donation_masks()
    if momentum:
        assert ((True, True), (True, True)) in _donation_masks()  # the buffers from step 2 on
    expected = torch_values(momentum)
    np.testing.assert_array_equal(p.detach().numpy(), expected[0])
    np.testing.assert_array_equal(q.detach().numpy(), expected[1])


def torch_values(momentum):
    import torch

    p = torch.ones(4, 3, requires_grad=True)
    q = torch.ones(3, requires_grad=True)
    opt = torch.optim.SGD([p, q], lr=0.1, momentum=momentum)
    for _ in range(3):
        opt.zero_grad()
        (p.sum(0) * q).sum().backward()
        opt.step()
    return p.detach().numpy(), q.detach().numpy()


def test_an_array_read_elsewhere_is_not_donated():
    """A NumPy view, a graph kept with retain_graph, or a hold on the array keeps it."""
    p = lg.ones(3, requires_grad=True)
    opt = lg.optim.SGD([p], lr=0.5)
    (p * p).sum().backward(retain_graph=True)  # the graph keeps p's array
    held = p._data
    view = np.asarray(p._data)  # what .numpy() returns: a view of the buffer
    assert "_storage" not in p.__dict__  # p shares memory with no tensor: only the counts keep it
    opt.step()
    assert not held.is_deleted()
    np.testing.assert_array_equal(view, np.ones(3, np.float32))
    np.testing.assert_array_equal(p.detach().numpy(), np.zeros(3, np.float32))
    del held, view
    opt.step()  # now p's array is its own: donated, and the values go on as PyTorch's
    np.testing.assert_array_equal(p.detach().numpy(), np.full(3, -1.0, np.float32))
