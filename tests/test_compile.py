"""leafgrad.compile: compiled steps give eager mode's results and keep its state rules.

Every test runs the same program twice from the same seed, once eagerly and once compiled, and
compares losses, parameters, gradients, optimizer state, version counters and flags; the training
loops are also compared with real PyTorch.
"""

from __future__ import annotations

import re
import threading

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import torch

import leafgrad as lg
import leafgrad.nn as lnn
import leafgrad.nn.functional as LF


def _np(t):
    return np.asarray(t.detach().numpy())


def _model(mod, bn=False, drop=0.0, seed=0):
    mod.manual_seed(seed)
    nn = mod.nn
    layers = [nn.Linear(8, 16)]
    if bn:
        layers.append(nn.BatchNorm1d(16))
    layers.append(nn.Tanh())
    if drop:
        layers.append(nn.Dropout(drop))
    layers.append(nn.Linear(16, 3))
    return nn.Sequential(*layers)


OPTIMIZERS = {
    "sgd": lambda m, p: m.optim.SGD(p, lr=0.1),
    "sgd_momentum": lambda m, p: m.optim.SGD(
        p, lr=0.1, momentum=0.9, nesterov=True, weight_decay=1e-3
    ),
    "adam": lambda m, p: m.optim.Adam(p, lr=0.01),
    "adamw": lambda m, p: m.optim.AdamW(p, lr=0.01, amsgrad=True),
    "rmsprop": lambda m, p: m.optim.RMSprop(p, lr=0.01, momentum=0.5, centered=True),
    "adagrad": lambda m, p: m.optim.Adagrad(p, lr=0.1, lr_decay=0.01),
}


def _data(mod, n=12, seed=1):
    rng = np.random.default_rng(seed)
    x = mod.tensor(rng.standard_normal((n, 8)).astype(np.float32))
    y = mod.tensor(rng.integers(0, 3, n))
    return x, y


def _step(mod, model, opt):
    def step(x, y):
        opt.zero_grad()
        loss = mod.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss

    return step


def _close(a, b, tol=1e-5):
    np.testing.assert_allclose(_np(a), _np(b), rtol=tol, atol=tol)


@pytest.mark.parametrize("opt_name", sorted(OPTIMIZERS))
def test_training_step_matches_eager_and_torch(opt_name):
    results = {}
    for kind in ("torch", "eager", "compiled"):
        mod = torch if kind == "torch" else lg
        model = _model(mod)
        opt = OPTIMIZERS[opt_name](mod, model.parameters())
        step = _step(mod, model, opt)
        if kind == "compiled":
            step = lg.compile(step)
        x, y = _data(mod)
        losses = [step(x, y).item() for _ in range(5)]
        results[kind] = (model, opt, losses, step)
    np.testing.assert_allclose(results["compiled"][2], results["eager"][2], rtol=1e-5)
    np.testing.assert_allclose(results["compiled"][2], results["torch"][2], rtol=1e-4)
    (me, oe, _, _), (mc, oc, _, step) = results["eager"], results["compiled"]
    assert step.traces == 1 and step.retrace_reasons == []
    for pe, pc in zip(me.parameters(), mc.parameters()):
        _close(pe, pc)
        _close(pe.grad, pc.grad)
        assert pc.is_leaf and pc.requires_grad and pc.grad_fn is None
        assert pc.grad.is_leaf and not pc.grad.requires_grad
        assert pc._version == pe._version
        state_e, state_c = oe.state[pe], oc.state[pc]
        assert sorted(state_e) == sorted(state_c)
        for k in state_e:
            if isinstance(state_e[k], lg.Tensor):
                _close(state_e[k], state_c[k])
                assert state_c[k].dtype == state_e[k].dtype


def test_grads_are_new_tensors_each_step_and_accumulate_in_place_without_zero_grad():
    model = _model(lg)
    x, y = _data(lg)

    @lg.compile
    def step_new(x, y):
        model.zero_grad()
        LF.cross_entropy(model(x), y).backward()

    grads = []
    for _ in range(3):
        step_new(x, y)
        grads.append(model[0].weight.grad)
    assert len({id(g) for g in grads}) == 3  # set_to_none: a new .grad each step, as eagerly
    _close(grads[0], grads[2])

    model2 = _model(lg)

    @lg.compile
    def accumulate(x, y):
        LF.cross_entropy(model2(x), y).backward()

    accumulate(x, y)
    first = model2[0].weight.grad
    kept = _np(first).copy()
    for _ in range(3):
        accumulate(x, y)
    assert model2[0].weight.grad is first  # accumulated in place, the same object
    np.testing.assert_allclose(_np(first), 4 * kept, rtol=1e-5, atol=1e-7)
    assert first._version == 3
    assert accumulate.traces == 1


def test_zero_grad_outside_and_set_to_none_false():
    model = _model(lg)
    opt = lg.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    eager = _model(lg)
    opt_e = lg.optim.SGD(eager.parameters(), lr=0.05, momentum=0.9)
    x, y = _data(lg)

    @lg.compile
    def step(x, y):
        loss = LF.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss

    for _ in range(4):
        opt.zero_grad(set_to_none=False)
        opt_e.zero_grad(set_to_none=False)
        lc = step(x, y)
        le = LF.cross_entropy(eager(x), y)
        le.backward()
        opt_e.step()
        assert abs(lc.item() - le.item()) < 1e-5
    for pe, pc in zip(eager.parameters(), model.parameters()):
        _close(pe, pc)
        assert pc.grad._version == pe.grad._version
    assert step.traces == 1


def test_retraces_when_what_it_assumed_changes():
    model = _model(lg)
    opt = lg.optim.SGD(model.parameters(), lr=0.1)
    step = lg.compile(_step(lg, model, opt))
    x, y = _data(lg)
    for _ in range(3):
        step(x, y)
    assert step.traces == 1
    x2, y2 = _data(lg, n=5)
    step(x2, y2)  # new shapes: a new signature, discovered eagerly then traced
    step(x2, y2)
    assert step.traces == 2
    opt.param_groups[0]["lr"] = 0.01  # an input: no retrace
    step(x, y)
    assert step.traces == 2
    opt.param_groups[0]["momentum"] = 0.5
    step(x, y)
    assert step.traces == 3
    assert "hyperparameters" in step.retrace_reasons[-2]
    # that trace made the momentum buffers (Python state): it ran once, the next one is kept
    assert "left 4 new tensor(s) in Python state" in step.retrace_reasons[-1]
    step(x, y)
    step(x, y)
    assert step.traces == 4
    model.eval()
    step(x, y)
    assert "training mode" in step.retrace_reasons[-1]
    model[0].bias.requires_grad_(False)
    step(x, y)
    assert "requires_grad" in step.retrace_reasons[-1]


def test_lr_scheduler_between_compiled_steps_matches_eager():
    losses = {}
    for kind in ("eager", "compiled"):
        model = _model(lg)
        opt = lg.optim.SGD(model.parameters(), lr=0.2, momentum=0.5)
        sched = lg.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
        step = _step(lg, model, opt)
        if kind == "compiled":
            step = lg.compile(step)
        x, y = _data(lg)
        out = []
        for _ in range(6):
            out.append(step(x, y).item())
            sched.step()
        losses[kind] = out
    np.testing.assert_allclose(losses["compiled"], losses["eager"], rtol=1e-5)
    assert step.traces == 1  # learning rates are inputs of the program, not constants


def test_batchnorm_buffers_are_written_back():
    out = {}
    for kind in ("eager", "compiled"):
        model = _model(lg, bn=True)
        opt = lg.optim.SGD(model.parameters(), lr=0.1)
        step = _step(lg, model, opt)
        if kind == "compiled":
            step = lg.compile(step)
        x, y = _data(lg)
        for _ in range(4):
            step(x, y)
        out[kind] = model
    bn_e, bn_c = out["eager"][1], out["compiled"][1]
    _close(bn_e.running_mean, bn_c.running_mean)
    _close(bn_e.running_var, bn_c.running_var)
    assert bn_c.num_batches_tracked.item() == 4
    assert bn_c.running_mean._version == bn_e.running_mean._version


@pytest.mark.parametrize(
    "body, what",
    [
        (lambda t: t.sum().item(), "Tensor.item()"),
        (lambda t: bool(t.sum() > 0), "bool(tensor)"),
        (lambda t: t.tolist(), "Tensor.tolist()"),
        (lambda t: float(t.sum().detach()), "float(tensor)"),
        (lambda t: print(t), "printing a tensor"),
        (lambda t: t.detach().numpy(), "Tensor.numpy()"),
    ],
    ids=["item", "bool", "tolist", "float", "print", "numpy"],
)
def test_data_dependent_python_raises_a_clear_error(body, what):
    w = lg.ones(3, requires_grad=True)
    buf = lg.zeros(3)

    @lg.compile
    def f(x):
        buf.add_(1)
        y = x * w
        body(y)
        return y

    x = lg.arange(3.0)
    f(x)  # the first call runs eagerly
    before = (_np(buf).copy(), buf._version)
    with pytest.raises(lg.CompileError, match=re.escape("leafgrad.compile: " + what)):
        f(x)
    # a failed trace leaves every tensor as it was
    np.testing.assert_array_equal(_np(buf), before[0])
    assert buf._version == before[1]
    assert w.grad is None and w.is_leaf


def test_dropout_draws_from_the_generator_and_backward_uses_the_same_mask():
    lg.manual_seed(3)
    w = lg.ones(64, requires_grad=True)

    @lg.compile
    def f(x):
        return LF.dropout(x * w, 0.5)

    x = lg.full((64,), 2.0)
    f(x)
    outs = [f(x) for _ in range(3)]
    masks = [_np(o) != 0 for o in outs]
    assert not np.array_equal(masks[0], masks[1])  # a fresh key per call
    assert 10 < masks[0].sum() < 54
    np.testing.assert_allclose(_np(outs[0])[masks[0]], 4.0)
    outs[0].sum().backward()
    # d out / d w = x * mask / (1 - p): the backward replays the forward's mask
    np.testing.assert_allclose(_np(w.grad), np.where(masks[0], 4.0, 0.0))
    # the generator advanced: the next eager draw differs from a run without the calls
    lg.manual_seed(3)
    plain = _np(lg.rand(4))
    lg.manual_seed(3)
    f(x)
    assert not np.array_equal(_np(lg.rand(4)), plain)


def test_compiled_module_outputs_are_differentiable():
    for mod in (torch, lg):
        mod.manual_seed(0)
    model = _model(lg)
    eager = _model(lg)
    cm = lg.compile(model)
    x = lg.randn(5, 8)
    xi = lg.randn(5, 8, requires_grad=True)
    for k in range(3):
        out = cm(xi * 2)
        # the first call of a signature runs eagerly to find what to lift (Note [Compile])
        name = "AddmmBackward0" if k == 0 else "CompiledFunctionBackward"
        assert type(out.grad_fn).__name__ == name
        assert out.requires_grad and not out.is_leaf
        (out * x[:, :3]).sum().backward()
    ref = eager(xi * 2)
    g_in = _np(xi.grad).copy()
    xi.grad = None
    for _ in range(3):
        (eager(xi * 2) * x[:, :3]).sum().backward()
    _close(ref, out)
    np.testing.assert_allclose(g_in, _np(xi.grad), rtol=1e-5, atol=1e-6)
    for pc, pe in zip(model.parameters(), eager.parameters()):
        _close(pc.grad, pe.grad)
    assert cm.traces == 1
    # backward twice without retain_graph: PyTorch's error
    out = cm(xi)
    out.sum().backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        out.sum().backward()
    # a compiled Module still reads like the module
    assert cm.training and len(list(cm.parameters())) == 4


def test_loss_returned_after_backward_in_the_step_behaves_as_in_eager_mode():
    model = _model(lg)
    opt = lg.optim.SGD(model.parameters(), lr=0.1)
    step = lg.compile(_step(lg, model, opt))
    x, y = _data(lg)
    for _ in range(3):
        loss = step(x, y)
    assert loss.requires_grad and loss.grad_fn is not None
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        loss.backward()


def test_no_grad_inference_is_compiled_without_history():
    model = _model(lg)
    cm = lg.compile(model)
    x = lg.randn(4, 8)
    with lg.no_grad():
        for _ in range(3):
            out = cm(x)
    assert out.grad_fn is None and not out.requires_grad
    with lg.no_grad():
        _close(out, model(x))


def test_custom_function_uses_its_own_backward():
    class Round(lg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.round()

        @staticmethod
        def backward(ctx, g):
            return g * 3  # not round's derivative: a straight-through estimator, scaled

    w = lg.tensor([0.4, 1.6, -2.2], requires_grad=True)

    @lg.compile
    def step():
        w.grad = None
        (Round.apply(w) * lg.tensor([1.0, 2.0, 3.0])).sum().backward()
        return w.grad.clone()

    for _ in range(3):
        g = step()
    np.testing.assert_allclose(_np(g), [3.0, 6.0, 9.0])

    @lg.compile
    def fwd(x):
        return Round.apply(x * w)

    x = lg.ones(3)
    for _ in range(3):
        w.grad = None
        fwd(x).sum().backward()
    np.testing.assert_allclose(_np(w.grad), [3.0, 3.0, 3.0])


def test_in_place_writes_through_views_of_lifted_tensors():
    def program(mod, compile_):
        buf = mod.zeros(4, 3)
        view = buf[1]  # a view held outside the compiled function
        w = mod.ones(3)

        def f(i):
            buf[i] += w
            buf[:, 2].mul_(2)
            return buf.sum()

        f = compile_(f)
        sums = [f(0).item() for _ in range(4)]
        return buf, view, sums, f

    tb, tv, ts, _ = program(torch, lambda f: f)
    lb, lv, ls, f = program(lg, lg.compile)
    np.testing.assert_array_equal(_np(lb), tb.numpy())
    np.testing.assert_array_equal(_np(lv), tv.numpy())
    assert ls == ts
    assert lb._version == lv._version == tb._version
    assert f.traces == 1


def test_state_left_in_python_structures_is_written_then_retraced():
    store = []
    w = lg.ones(2)

    @lg.compile
    def f(x):
        if not store:  # Python control flow on Python state: runs when traced
            store.append(x * 2)
        return (w + x).sum()

    x = lg.ones(2)
    f(x)  # eager
    store.clear()
    f(x)  # traced: the new tensor in store gets its value
    np.testing.assert_array_equal(_np(store[0]), [2.0, 2.0])
    assert "left 1 new tensor(s) in Python state" in f.retrace_reasons[-1]
    f(x)
    f(x)
    assert f.traces == 2


def test_arguments_may_alias_and_results_may_be_lifted_tensors():
    p = lg.zeros(3, requires_grad=True)

    @lg.compile
    def f(a, b):
        with lg.no_grad():
            p.add_(a + b)
        return p, a

    x = lg.ones(3)
    for _ in range(3):
        r, a = f(x, x)
    assert r is p and a is x
    np.testing.assert_array_equal(_np(p), [6.0, 6.0, 6.0])
    assert p.is_leaf and p._version == 3


def test_explain_prints_why_it_retraces(capsys):
    w = lg.ones(2)

    @lg.compile(explain=True)
    def f(x):
        return x * w

    f(lg.ones(2))
    f(lg.ones(2))
    w.requires_grad_()
    out = f(lg.ones(2))
    printed = capsys.readouterr().out
    assert "retraces: a tensor it reads changed its storage, shape, dtype or requires_grad" in (
        printed
    )
    assert out.requires_grad
    w.data = lg.full((2,), 3.0)
    np.testing.assert_array_equal(_np(f(lg.ones(2))), [3.0, 3.0])


def test_compiled_method_and_decorator_forms():
    class Model(lnn.Module):
        def __init__(self):
            super().__init__()
            self.lin = lnn.Linear(3, 2)

        @lg.compile
        def forward(self, x):
            return self.lin(x).relu()

    m = Model()
    x = lg.randn(4, 3)
    outs = [m(x) for _ in range(3)]
    _close(outs[-1], m.lin(x).relu())
    assert lg.compile(disable=True)(len) is len


def test_threads_run_independent_compiled_steps():
    models = [_model(lg, seed=s) for s in range(4)]  # the generator is global: seed first

    def run(seed, out):
        model = models[seed]
        opt = lg.optim.SGD(model.parameters(), lr=0.1)
        step = lg.compile(_step(lg, model, opt))
        x, y = _data(lg, seed=seed)
        out[seed] = [step(x, y).item() for _ in range(4)]

    got: dict = {}
    threads = [threading.Thread(target=run, args=(s, got)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for s in range(4):
        model = _model(lg, seed=s)
        opt = lg.optim.SGD(model.parameters(), lr=0.1)
        step = _step(lg, model, opt)
        x, y = _data(lg, seed=s)
        np.testing.assert_allclose(got[s], [step(x, y).item() for _ in range(4)], rtol=1e-5)


def test_a_shared_compiled_function_is_safe_under_threads():
    w = lg.zeros(3)

    @lg.compile
    def f(x):
        w.add_(x)
        return w.sum()

    x = lg.ones(3)
    f(x)

    def work():
        for _ in range(25):
            f(x)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    np.testing.assert_array_equal(_np(w), [101.0] * 3)
    assert w._version == 101


def test_a_compiled_function_called_by_another_is_inlined():
    w = lg.ones(3, requires_grad=True)
    inner = lg.compile(lambda x: (x * w).sum())

    @lg.compile
    def outer(x):
        w.grad = None
        inner(x * 2).backward()
        return w.grad.clone()

    for _ in range(3):
        g = outer(lg.arange(3.0))
    np.testing.assert_array_equal(_np(g), [0.0, 2.0, 4.0])
    assert outer.traces == 1 and inner.traces == 0


def test_compiled_module_output_node_is_named_as_in_torch_compile():
    def run(mod, compile_):
        mod.manual_seed(0)
        cm = compile_(mod.nn.Linear(3, 2))
        x = mod.ones(4, 3)
        outs = [cm(x) for _ in range(3)]  # leafgrad's first call of a signature runs eagerly
        return type(outs[-1].grad_fn).__name__, outs[-1].requires_grad, outs[-1].is_leaf

    ours = run(lg, lg.compile)
    theirs = run(torch, lambda m: torch.compile(m, backend="aot_eager"))
    assert ours == theirs == ("CompiledFunctionBackward", True, False)


# --- donation: a compiled step updates lifted memory in place (Note [Donation]) ---------------


def _sgd_run(mod, compile_, hold=None, steps=(2, 3)):
    """SGD steps on a small model; ``hold(param)`` takes an alias of the first weight between
    the two runs of steps. Returns the alias as numpy, the weights and the compiled step."""
    model = _model(mod)
    opt = mod.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    step = compile_(_step(mod, model, opt))
    x, y = _data(mod)
    for _ in range(steps[0]):
        step(x, y)
    held = hold(model[0].weight) if hold is not None else None
    for _ in range(steps[1]):
        step(x, y)
    if held is not None:
        held = np.asarray(held) if isinstance(held, (np.ndarray, jax.Array)) else _np(held)
    return held, [_np(p) for p in model.parameters()], step


def test_lifted_tensors_are_updated_in_place_and_unwritten_ones_are_not_copied():
    model = _model(lg)
    opt = lg.optim.SGD(model.parameters(), lr=0.1)
    step = lg.compile(_step(lg, model, opt))
    x, y = _data(lg)
    for _ in range(2):  # discovery, then the trace
        step(x, y)
    params = list(model.parameters())
    buffers = [p._data.unsafe_buffer_pointer() for p in params]
    x_array = x._data
    for _ in range(3):
        step(x, y)
    # parameters are donated: XLA writes their new values into the old buffers
    assert [p._data.unsafe_buffer_pointer() for p in params] == buffers
    assert x._data is x_array  # an argument it only reads is not an output of the program
    assert step.traces == 1


HOLDERS = {
    "detach": lambda p: p.detach(),
    "data": lambda p: p.data,
    "view": lambda p: p.detach().view(-1),
    "clone": lambda p: p.clone(),
    "tensor": lambda p: torch.tensor(p) if isinstance(p, torch.Tensor) else lg.tensor(p),
    "numpy": lambda p: p.detach().numpy(),
    "jax": lambda p: jnp.asarray(p),  # __jax_array__: the tensor's own array object
}


@pytest.mark.filterwarnings("ignore:To copy construct from a tensor")
@pytest.mark.parametrize("holder", sorted(HOLDERS))
def test_aliases_of_a_donated_parameter_read_as_in_eager_mode(holder):
    hold = HOLDERS[holder]
    eager, we, _ = _sgd_run(lg, lambda f: f, hold)
    compiled, wc, step = _sgd_run(lg, lg.compile, hold)
    # shared memory follows the update; copies and numpy arrays keep the old values
    np.testing.assert_allclose(compiled, eager, rtol=1e-6, atol=1e-7)
    for a, b in zip(wc, we):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    assert step.traces == 1
    if holder not in ("numpy", "jax"):  # torch's numpy() shares memory, leafgrad's is a copy
        theirs, _, _ = _sgd_run(torch, lambda f: f, hold)
        np.testing.assert_allclose(compiled, theirs, rtol=1e-5, atol=1e-6)


def test_an_eager_graph_over_old_parameters_raises_the_version_error_after_compiled_steps():
    def run(mod, compile_):
        model = _model(mod)
        opt = mod.optim.SGD(model.parameters(), lr=0.1)
        step = compile_(_step(mod, model, opt))
        x, y = _data(mod)
        step(x, y)
        out = model(x).sum()  # its graph saved the current weights
        for _ in range(3):
            step(x, y)
        with pytest.raises(RuntimeError) as err:
            out.backward()
        return str(err.value), [_np(p) for p in model.parameters()]

    theirs, wt = run(torch, lambda f: f)
    eager, we = run(lg, lambda f: f)
    compiled, wc = run(lg, lg.compile)
    assert compiled == eager == theirs
    for a, b, c in zip(wc, we, wt):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(a, c, rtol=1e-4, atol=1e-5)


def test_outputs_with_history_keep_the_inputs_they_need_across_calls():
    # BatchNorm in training mode writes its running stats; the output keeps a history, so its
    # node must still read this call's inputs after later calls wrote new ones
    results = {}
    for kind in ("eager", "compiled"):
        model = _model(lg, bn=True)
        f = lg.compile(model) if kind == "compiled" else model
        x = lg.randn(6, 8, generator=lg.Generator().manual_seed(3))
        outs = [f(x * (k + 1)) for k in range(4)]
        for k in (1, 2):
            (outs[k] * outs[k]).sum().backward()
        bn = model[1]
        results[kind] = [_np(o) for o in outs] + [_np(bn.running_mean), _np(bn.running_var)]
        results[kind] += [_np(p.grad) for p in model.parameters()]
    for a, b in zip(results["compiled"], results["eager"]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_backward_of_an_earlier_call_reads_the_values_that_call_was_given():
    def run(compile_):
        buf = lg.arange(3.0)
        x = lg.ones(3, requires_grad=True)

        def f(x):
            y = (x * buf.clone()).sum()  # backward needs the value buf had at this call
            buf.add_(1)
            return y

        f = compile_(f)
        outs = [f(x) for _ in range(4)]
        for out in outs:
            out.backward()
        return _np(x.grad), _np(buf)

    eager, compiled = run(lambda f: f), run(lg.compile)
    np.testing.assert_array_equal(compiled[0], eager[0])
    np.testing.assert_array_equal(compiled[0], [6.0, 10.0, 14.0])
    np.testing.assert_array_equal(compiled[1], eager[1])


def test_donated_state_stays_readable_across_retraces_and_other_compiled_functions():
    def run(compile_):
        model = _model(lg)
        opt = lg.optim.SGD(model.parameters(), lr=0.1)
        step = compile_(_step(lg, model, opt))
        evaluate = compile_(lambda x: model(x).sum())
        x, y = _data(lg)
        w = model[0].weight
        seen = []
        for k in range(8):
            if k == 3:
                opt.param_groups[0]["momentum"] = 0.5  # retraces; momentum buffers appear
            if k == 5:
                model.eval()
            if k == 6:
                model.train()
            held = (w.detach(), w.clone(), w.detach().numpy())
            step(x, y)
            with lg.no_grad():
                seen.append(evaluate(x).item())
            seen.extend(_np(h) if isinstance(h, lg.Tensor) else h for h in held)
            seen.append(_np(opt.state[w]["momentum_buffer"]) if opt.state[w] else None)
        return seen, step

    eager, _ = run(lambda f: f)
    compiled, step = run(lg.compile)
    assert step.traces >= 3
    for a, b in zip(compiled, eager):
        if b is None:
            assert a is None
        else:
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
