"""Fused backward (Note [Fused backward] in leafgrad/autograd/fused.py): a graph whose structure
repeats runs its backward as compiled chunks of the engine's loop. Each test runs the same program
three times with fusing on (the first sighting eager, then compiled), and compares every gradient
with the eager engine (equal up to the rounding of XLA's fusions within a program: a few ulp) and,
within float tolerance, with torch. Small chunks force
programs to hand partial gradient sums across chunk boundaries."""

from __future__ import annotations

import jax
import numpy as np
import pytest
import torch
from conftest import both
from fuzz_programs import check, programs
from hypothesis import HealthCheck, given, settings

import leafgrad as lg
from leafgrad.autograd import fused


@pytest.fixture
def fusing(monkeypatch):
    """Fusing on, compiling from the second sighting; counts the compiled chunk runs."""
    monkeypatch.setattr(fused, "ENABLED", True)
    monkeypatch.setattr(fused, "_COMPILE_FIRST", False)
    monkeypatch.setattr(fused, "_EAGER_SIGHTINGS", 1)
    runs = {"compiled": 0}
    real = fused._run

    def counting(*args):
        runs["compiled"] += 1
        return real(*args)

    monkeypatch.setattr(fused, "_run", counting)
    return runs


def _grads(program, m, seed=0):
    """Run ``program`` (building its graph afresh) three times; the grads of each run."""
    out = []
    for _ in range(3):
        leaves = program(m, seed)
        out.append([None if t.grad is None else t.grad.detach().numpy().copy() for t in leaves])
    return out


def _chain(m, seed):
    x = m.tensor(np.linspace(-1.0, 1.0, 16, dtype=np.float32), requires_grad=True)
    y = x
    for i in range(60):
        y = [lambda v: v * 1.01, lambda v: v + 0.1, m.tanh][i % 3](y)
    y.sum().backward()
    return [x]


def _branches(m, seed):
    """Fan-out, fan-in, multi-output nodes, views, mixed float dtypes."""
    rng = np.random.default_rng(seed)
    a = m.tensor(rng.standard_normal((4, 6)), requires_grad=True)
    b = m.tensor(rng.standard_normal((6,)).astype(np.float32), requires_grad=True)
    c = m.tensor(rng.standard_normal((4, 6)), requires_grad=False)
    h = a * b + c
    p, q = h.split(3, dim=1)
    r = p.exp() * q.sin() + p * p
    s = r.t().clone() * 2.0
    v, i = h.max(dim=1)
    loss = s.sum() + (v * v).mean() + h.softmax(-1)[:, 0].sum() + (a @ a.t()).trace()
    loss = loss + (a.sigmoid() * 3).pow(2).sum() + b.cumsum(0).sum()
    loss.backward()
    return [a, b]


def _mlp(m, seed):
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Linear(20, 32),
        torch.nn.ReLU(),
        torch.nn.Linear(32, 32),
        torch.nn.Tanh(),
        torch.nn.Linear(32, 5),
    )
    params = [p.detach().numpy() for p in model.parameters()]
    lin = [m.nn.Linear(20, 32), m.nn.Linear(32, 32), m.nn.Linear(32, 5)]
    with m.no_grad():
        for layer, (w, bias) in zip(lin, zip(params[::2], params[1::2])):
            layer.weight.copy_(m.tensor(w))
            layer.bias.copy_(m.tensor(bias))
    rng = np.random.default_rng(seed)
    x = m.tensor(rng.standard_normal((8, 20)).astype(np.float32))
    y = m.tensor(rng.integers(0, 5, 8))
    out = lin[2](m.tanh(lin[1](m.relu(lin[0](x)))))
    m.nn.functional.cross_entropy(out, y).backward()
    return [p for layer in lin for p in (layer.weight, layer.bias)]


def _shared(m, seed):
    """One activation read by many nodes and one Python number in many: a chunk's program takes
    each array once, and the nodes read it from there."""
    rng = np.random.default_rng(seed)
    x = m.tensor(rng.standard_normal((3, 5)), requires_grad=True)
    w = m.tensor(rng.standard_normal((5,)).astype(np.float32), requires_grad=True)
    h = (x * w).tanh()
    acc = h * 0.5
    for _ in range(12):
        acc = acc + h * 0.5 + (h * h) * 2 + h.exp() * 2.0 + h.exp() * 2
    (acc * acc).sum().backward()
    return [x, w]


PROGRAMS = {"chain": _chain, "branches": _branches, "mlp": _mlp, "shared": _shared}


@pytest.mark.parametrize("chunk", [192, 7, 1, "memory"])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_fused_equals_eager_and_torch(name, chunk, fusing, monkeypatch):
    if chunk == "memory":  # cut wherever a node is the last to hold an array (Note *Memory*)
        monkeypatch.setattr(fused, "FREE_AT", 1)
        monkeypatch.setattr(fused, "_TRACKED", 1)
    else:
        monkeypatch.setattr(fused, "CHUNK", chunk)
    program = PROGRAMS[name]
    got = _grads(program, lg)
    assert fusing["compiled"] > 0, "the later runs must take the compiled path"
    monkeypatch.setattr(fused, "ENABLED", False)
    eager = _grads(program, lg)
    want = _grads(program, torch)
    for run_got, run_eager, run_want in zip(got, eager, want):
        for g, e, w in zip(run_got, run_eager, run_want):
            assert g.dtype == e.dtype
            # 16 ULP of the array's largest element: a compiled chunk may sum a matmul's
            # products in another order, which moves an element that cancelled to near zero by
            # the rounding of the terms it summed, many of its own ULPs (CPU-dependent)
            scale = np.spacing(np.abs(e).max()) if e.size else 0
            np.testing.assert_allclose(g, e, rtol=0, atol=16 * scale)
            np.testing.assert_allclose(g, w, rtol=2e-5, atol=1e-6)


def test_a_chunk_takes_each_array_once(fusing, monkeypatch):
    """The chain's 20 tanh results are its program's only arrays besides the number 1.01, which
    its 20 products read (its sums read nothing): one argument each (a jitted call pays about
    1 us per argument)."""
    taken = []
    real = fused._run

    def spy(schedule, own, ext, sinks, primals):
        taken.append(list(primals))
        return real(schedule, own, ext, sinks, primals)

    monkeypatch.setattr(fused, "_run", spy)
    _grads(_chain, lg)
    assert taken
    for primals in taken:
        assert len({id(a) for a in primals}) == len(primals) == 20 + 1


def test_a_graph_compiles_only_when_it_repeats(monkeypatch):
    monkeypatch.setattr(fused, "ENABLED", True)
    monkeypatch.setattr(fused, "_COMPILE_FIRST", False)
    monkeypatch.setattr(fused, "_interned", {})
    runs = []
    real = fused._run
    monkeypatch.setattr(fused, "_run", lambda *a: runs.append(1) or real(*a))
    for k in range(4):
        _chain(lg, 0)
        assert len(runs) == (0 if k < fused._EAGER_SIGHTINGS else k - fused._EAGER_SIGHTINGS + 1)


def test_in_place_writes_through_views_take_the_eager_loop(fusing):
    # CopySlices and regenerated view nodes are not fused: the whole backward runs eagerly
    def fn(m):
        out = []
        for _ in range(3):
            x = m.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -2.0]], requires_grad=True)
            s = (x.exp() * x.sin()).cos() * x.tanh()
            s[:, 1:] *= 2.0
            v = s[0]
            (v.sin() * s.sum(0)).sum().backward()
            out.append(x.grad)
        return out

    both(fn)


def test_grads_accumulate_across_fused_backwards(fusing):
    def fn(m):
        x = m.tensor([0.5, -1.0, 2.0], requires_grad=True)
        for _ in range(4):
            y = x
            for _ in range(6):
                y = m.sin(y) * y
            y.sum().backward()
        return x.grad

    both(fn)
    assert fusing["compiled"] > 0


def test_retain_graph_then_second_backward(fusing):
    def fn(m):
        x = m.tensor([0.5, -1.0, 2.0], requires_grad=True)
        outs = []
        for _ in range(2):
            y = (x.exp() * x.sin()).cos() * x.tanh()
            y.sum().backward(retain_graph=True)
            y.sum().backward()
            outs.append(x.grad.clone())
            try:
                y.sum().backward()
            except RuntimeError as e:
                outs.append(str(e).split("\n")[0])
        return outs

    both(fn)
    assert fusing["compiled"] > 0


def test_saved_tensor_modified_raises_as_eager(fusing):
    def fn(m):
        msgs = []
        for _ in range(3):
            x = m.tensor([0.5, -1.0, 2.0], requires_grad=True)
            a = x * 2
            y = (a.exp() * a.sin()).cos() * a.tanh()
            if len(msgs) == 2:
                a.add_(1)
            try:
                y.sum().backward()
                msgs.append(x.grad)
            except RuntimeError as e:
                msgs.append(str(e).split("\n")[0])
        return msgs

    both(fn)


def test_hooks_and_retain_grad_take_the_eager_loop(fusing):
    def fn(m):
        seen = []
        for k in range(3):
            x = m.tensor([0.5, -1.0, 2.0], requires_grad=True)
            a = (x * 2).sin()
            b = a.exp() * a.cos() * a
            if k == 1:
                a.register_hook(lambda g: g * 3)
            if k == 2:
                a.retain_grad()
                x.register_post_accumulate_grad_hook(lambda t: seen.append(t.grad.sum()))
            b.sum().backward()
            seen.append(x.grad)
            if k == 2:
                seen.append(a.grad)
        return seen

    both(fn)


@pytest.mark.parametrize("chunk", [192, 2])
def test_a_backward_that_raises_leaves_what_the_eager_loop_leaves(chunk, fusing, monkeypatch):
    # floor_divide has no derivative: its node raises, after w's gradient was accumulated and
    # the nodes before it were released
    monkeypatch.setattr(fused, "CHUNK", chunk)

    def fn(m):
        out = []
        for _ in range(3):
            x = m.tensor([0.5, -1.0, 2.0], requires_grad=True)
            w = m.tensor([1.5, 2.0, -0.5], requires_grad=True)
            t = x // 1.5
            y = (w.exp() * w).sin()
            z = (t.sin() * y).cos() * y.tanh()
            try:
                z.sum().backward()
            except RuntimeError as e:
                out.append(str(e).split("\n")[0])
            out.extend([w.grad, x.grad])
            try:
                z.sum().backward()
            except RuntimeError as e:
                out.append(str(e).split("\n")[0])
        return out

    both(fn)


@pytest.mark.parametrize("chunk", [192, 3, 1])
def test_a_node_that_raises_mid_chunk_leaves_what_the_eager_loop_leaves(chunk, monkeypatch):
    # a recorded node whose backward raises (none in the op table does after its checks):
    # the leaves accumulated and the nodes released before it must be the eager loop's
    def boom(primals, cts):
        raise ValueError("boom")

    def run():
        x = lg.tensor([0.5, -1.0, 2.0], requires_grad=True)
        w = lg.tensor([1.5, 2.0, -0.5], requires_grad=True)
        a = x.sin() * 2.0
        y = (w.exp() * w).sin()
        z = (a.cos() * y).tanh() * y
        a.grad_fn._backward, a.grad_fn._route = jax.jit(boom), None
        out = []
        for _ in range(2):
            try:
                z.sum().backward()
            except (ValueError, RuntimeError) as e:
                out.append(str(e).split("\n")[0])
        return out, w.grad.tolist(), x.grad

    monkeypatch.setattr(fused, "CHUNK", chunk)
    monkeypatch.setattr(fused, "_COMPILE_FIRST", True)
    monkeypatch.setattr(fused, "_MIN_CALLS", 0)
    monkeypatch.setattr(fused, "ENABLED", True)
    got = run()
    monkeypatch.setattr(fused, "ENABLED", False)
    want = run()
    assert got[0] == want[0] and got[2] is want[2] is None
    np.testing.assert_array_max_ulp(np.float32(got[1]), np.float32(want[1]), maxulp=16)
    assert want[0][0] == "boom" and want[0][1].startswith("Trying to backward through the graph")


def test_leaf_grad_saved_by_the_graph(fusing):
    # the leaf's .grad is saved by the graph being differentiated: accumulating into it in place
    # in the eager order changes its version before the node that saved it runs
    def fn(m):
        out = []
        for _ in range(3):
            x = m.tensor([0.5, -1.0, 2.0], requires_grad=True)
            (x * x).sum().backward()
            g = x.grad
            y = (x * g).sin().exp() * x.cos() * (x + 1).tanh()
            try:
                y.sum().backward()
                out.append(x.grad)
            except RuntimeError as e:
                out.append(str(e).split("\n")[0])
        return out

    both(fn)


def test_several_roots_and_a_leaf_root(fusing):
    def fn(m):
        grads = []
        for _ in range(3):
            x = m.tensor([0.5, -1.0, 2.0], requires_grad=True)
            a = x.sin() * x.exp()
            b = a.cos() * a
            c = (b * a).tanh()
            m.autograd.backward([c.sum(), b, x], [None, m.ones(3), m.full((3,), 0.5)])
            grads.append(x.grad)
        return grads

    both(fn)


def test_backward_with_inputs_and_autograd_grad_are_unaffected(fusing):
    def fn(m):
        out = []
        for _ in range(3):
            x = m.tensor([0.5, -1.0, 2.0], requires_grad=True)
            w = m.tensor([1.5, 2.0, -0.5], requires_grad=True)
            y = ((x * w).sin() * x.exp()).cos().sum()
            out.extend(m.autograd.grad(y, [w], retain_graph=True))
            y.backward(inputs=[x])
            out.append(x.grad)
            out.append(w.grad)
        return out

    both(fn)


@settings(
    max_examples=12,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(program=programs)
def test_random_programs_match_torch_with_every_backward_compiled(program):
    # the fuzzer's programs (tests/test_fuzz.py), every backward compiled at its first sighting
    # in chunks of 3 nodes
    saved = fused.ENABLED, fused._COMPILE_FIRST, fused._MIN_CALLS, fused.CHUNK
    fused.ENABLED, fused._COMPILE_FIRST, fused._MIN_CALLS, fused.CHUNK = True, True, 0, 3
    try:
        check(program)
    finally:
        fused.ENABLED, fused._COMPILE_FIRST, fused._MIN_CALLS, fused.CHUNK = saved


def _reused_leaves(m, seed):
    """Leaves used several times: the engine sums their gradients in place (Note [In-place
    sums]), through shape views and pass-through nodes too."""
    rng = np.random.default_rng(seed)
    a = m.tensor(rng.standard_normal((3, 4)), requires_grad=True)
    b = m.tensor(rng.standard_normal(4), requires_grad=True)
    c = m.tensor(rng.standard_normal(12), requires_grad=True)
    v = c.view(3, 4)
    y = (a * a).sum() + (a.exp() + a.sin() + a.cos()).sum() + (b + b).sum() + (b * 2).sum()
    y = y + (v * v + v.tanh()).sum() + (c + 0).mul(c).sum()
    y.backward()
    return [a, b, c]


@pytest.mark.parametrize("chunk", [192, 3])
def test_fused_grads_have_the_versions_of_eager_sums(chunk, fusing, monkeypatch):
    """Note [Versions of fused sums]: ``.grad._version`` as torch's, eager and compiled."""
    monkeypatch.setattr(fused, "CHUNK", chunk)
    want = [t.grad._version for t in _reused_leaves(torch, 0)]
    for _ in range(3):
        got = [t.grad._version for t in _reused_leaves(lg, 0)]
        assert got == want
    assert fusing["compiled"] > 0
    monkeypatch.setattr(fused, "ENABLED", False)
    assert [t.grad._version for t in _reused_leaves(lg, 0)] == want


_FIRST_GRADS = [
    lambda m, x: x.sum().backward(),  # expanded: copied, version 1
    lambda m, x: (x * 2).exp().sin().sum().backward(),  # taken as it is: 0
    lambda m, x: (x + 1).exp().tanh().sum().backward(),  # passed on unchanged: 0
    lambda m, x: (x * x).exp().sin().sum().backward(),  # summed in place: 1
    lambda m, x: x.view(3, 1).exp().sin().cos().sum().backward(),
    lambda m, x: (x + 0).exp().sin().cos().backward(m.ones(3)),
    lambda m, x: (x.exp() + x.sin() + x.cos()).sum().backward(),
    lambda m, x: ((x + 1) * 2 + (x + 1)).exp().sum().backward(),
    lambda m, x: x.view(3, 1).sum().backward(),  # a view of an expanded gradient: copied
    lambda m, x: x.backward(m.full_like(x, 0.5)),  # the caller's gradient: copied
]


@pytest.mark.parametrize("mode", ["eager", "fused"])
def test_first_grad_versions(mode, monkeypatch):
    """Note [In-place sums]: ``.grad`` is the engine's gradient itself (its version: the in-place
    sums) or a copy (version 1), as PyTorch's AccumulateGrad decides."""
    monkeypatch.setattr(fused, "ENABLED", mode == "fused")
    monkeypatch.setattr(fused, "_COMPILE_FIRST", mode == "fused")
    monkeypatch.setattr(fused, "_MIN_CALLS", 0)

    def fn(m):
        out = []
        for f in _FIRST_GRADS:
            for _ in range(2):
                x = m.ones(3, requires_grad=True)
                f(m, x)
                out.append(x.grad._version)
        return out

    both(fn)


def _shared_gradient_leaves(m, seed):
    """Leaves given one gradient object (``x1 + x2`` hands its gradient to both): the first
    leaf's node copies it, the next takes it; and mixes with leaves summed in place."""
    rng = np.random.default_rng(seed)
    xs = [m.tensor(rng.standard_normal(4), requires_grad=True) for _ in range(5)]
    c = m.tensor(rng.standard_normal(4))
    y = ((xs[0] + xs[1]) * c).sum() + ((xs[2] + xs[3] + xs[4]) * c.exp()).sum()
    y = y + (xs[4] * xs[4]).sum()
    y.backward()
    return xs


@pytest.mark.parametrize("chunk", [192, 3])
def test_leaves_sharing_one_gradient_get_torch_versions(chunk, fusing, monkeypatch):
    monkeypatch.setattr(fused, "CHUNK", chunk)
    want = [t.grad._version for t in _shared_gradient_leaves(torch, 0)]
    for _ in range(3):
        got = [t.grad._version for t in _shared_gradient_leaves(lg, 0)]
        assert got == want
    assert fusing["compiled"] > 0
    monkeypatch.setattr(fused, "ENABLED", False)
    xs = _shared_gradient_leaves(lg, 0)
    assert [t.grad._version for t in xs] == want
    ts = _shared_gradient_leaves(torch, 0)
    for a, b in zip(ts, xs):
        np.testing.assert_allclose(b.grad.numpy(), a.grad.numpy(), rtol=1e-12)


def _live_bytes() -> int:
    return sum(a.nbytes for a in jax.live_arrays())


@pytest.mark.parametrize("free_at", ["default", "never"])
def test_activations_are_freed_before_the_first_layers_gradient(free_at, fusing, monkeypatch):
    """Note [Fused backward], *Memory*: the chunks end where activations are let go of, so that
    (as in the eager loop and in PyTorch) no activation is alive when the last gradients are
    made. The live arrays are sampled at each return from a leafgrad function during backward;
    with the cuts turned off the activations show up in the peak (the test can fail)."""
    import os
    import sys

    if free_at == "never":
        monkeypatch.setattr(fused, "FREE_AT", 1 << 60)
    widths = [64, 256, 256, 256, 4]
    rng = np.random.default_rng(0)
    layers = [lg.nn.Linear(a, b) for a, b in zip(widths[:-1], widths[1:])]
    x = lg.tensor(rng.standard_normal((256, 64)).astype(np.float32))
    y = lg.tensor(rng.integers(0, 4, 256))
    params = [p for layer in layers for p in layer.parameters()]
    grad_bytes = sum(p.numel() * 4 for p in params)
    activation = 256 * 256 * 4  # each of the three hidden activations
    where = os.path.dirname(lg.__file__)
    for _ in range(3):  # the third backward runs compiled
        for p in params:
            p.grad = None
        h = x
        for layer in layers[:-1]:
            h = lg.relu(layer(h))
        loss = lg.nn.functional.cross_entropy(layers[-1](h), y)
        del h
        base = peak = _live_bytes()

        def sample(frame, event, arg):
            nonlocal peak
            if event == "return" and frame.f_code.co_filename.startswith(where):
                peak = max(peak, _live_bytes())

        sys.setprofile(sample)
        try:
            loss.backward()
        finally:
            sys.setprofile(None)
    assert fusing["compiled"] > 0
    # before backward the three activations are alive; after it, all the gradients are. At
    # most one activation-sized gradient (the last layer's input gradient, made while the
    # activations it flows to are alive, as in PyTorch) and the last layer's small gradients
    # come on top; with every activation alive until the end, all the gradients would
    grown = peak - base
    if free_at == "default":
        assert grown <= activation + 16384, (grown, grad_bytes)
    else:
        assert grown > grad_bytes, (grown, grad_bytes)
    for layer in layers:  # and the values are the eager engine's
        assert layer.weight.grad is not None
