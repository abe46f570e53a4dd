"""leafgrad keeps working on long loops, huge graphs, several threads and untrusted files.

Deep graphs: a chain of a million recorded ops goes backward, through the graph tools and away
with the recursion limit lowered, so nothing in leafgrad may recurse per node. Memory: with the
cycle collector off, graphs go away as soon as the user drops their tensors (reference counting
alone), and a training loop keeps a flat count of live tensors and nodes. Threads: grad modes are
per thread, independent graphs and compiled functions run side by side. Loading: no file runs code,
and a damaged file raises one clear error.
"""

from __future__ import annotations

import contextlib
import gc
import io
import json
import os
import pickle
import sys
import threading
import weakref
import zipfile

import numpy as np
import pytest
import torch
from conftest import both, host, lg

from leafgrad import viz
from leafgrad.autograd.function import FunctionCtx
from leafgrad.autograd.graph import Node
from leafgrad.ops.dispatch import SavedVersion

# The ``slow`` marker is registered here, not in pyproject.toml or conftest.py; CI runs these too.
_config = getattr(pytest.mark, "_config", None)
if _config is not None:
    _config.addinivalue_line("markers", "slow: a large case (a child process, a huge graph)")

OURS = (lg.Tensor, Node, SavedVersion, FunctionCtx)


@contextlib.contextmanager
def recursion_limit(limit: int):
    """Lower the recursion limit: a walk that recursed once per node would fail under it."""
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(limit)
    try:
        yield
    finally:
        sys.setrecursionlimit(old)


@contextlib.contextmanager
def no_cycle_collector():
    # What earlier tests made is set aside in the permanent generation: the collections below
    # scan only what the test makes (a full collection of the suite's heap takes seconds).
    gc.disable()
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()
        gc.enable()


def ours_in_cycles() -> list[str]:
    """Type names of leafgrad objects that only the cycle collector would free."""
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        gc.collect()
        found = [type(o).__name__ for o in gc.garbage if issubclass(type(o), OURS)]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
    return found


def assert_freed_by_refcount(build) -> None:
    """``build()`` makes a graph and returns weak references into it, dropping every strong one;
    all of them must be dead at once, with the cycle collector off, and no cycle of ours left."""
    with no_cycle_collector():
        refs = build()
        alive = [type(r()).__name__ for r in refs if r() is not None]
        assert alive == [], f"kept alive without the cycle collector: {alive}"
        assert ours_in_cycles() == []


# --- deep graphs --------------------------------------------------------------------------------

DEEP = 1_000_000


def _chain(m, n: int):
    x0 = m.tensor(1.0, requires_grad=True)
    x = x0
    for _ in range(n):
        x = x * 1.0000001
    return x0, x


@pytest.mark.slow
def test_a_million_op_chain_goes_backward_through_the_tools_and_away():
    _chain(lg, 3)[1].backward()  # compile the op and its backward before the limit is lowered
    t0, t = _chain(torch, DEEP)
    t.backward()
    # without the cycle collector: the chain holds no cycles, and collections of the million
    # nodes while the chain grows would only take time
    with recursion_limit(1000), no_cycle_collector():
        x0, x = _chain(lg, DEEP)

        text = viz.print_graph(x, file=io.StringIO(), max_nodes=20)
        assert text.splitlines()[-1] == (
            f"... {DEEP + 1 - 20} more backward nodes not shown (max_nodes=20)"
        )
        dot = viz.make_dot(x, max_nodes=20)
        assert "MulBackward0" in dot.source and "AccumulateGrad" not in dot.source
        e = lg.autograd.explain(x)
        assert (e.is_leaf, e.created_by, len(e.from_leaves)) == (False, "MulBackward0", 1)
        assert e.from_leaves[0].tensor is x0

        x.backward()
        np.testing.assert_allclose(host(x), host(t), rtol=1e-4)
        np.testing.assert_allclose(host(x0.grad), host(t0.grad), rtol=1e-4)

        root, deepest = weakref.ref(x.grad_fn), x.grad_fn
        for _ in range(DEEP // 2):
            deepest = deepest.next_functions[0][0]
        middle = weakref.ref(deepest)
        del deepest, e, dot
        del x  # the last reference to the chain: a million nodes freed without recursion
        assert root() is None and middle() is None
    assert x0.grad is not None


def _deep_case(n: int, fn):
    with recursion_limit(1000):
        fn(lg, 2)  # compile first: JAX's tracing is allowed its own depth
        got = fn(lg, n)
    want = fn(torch, n)
    for g, t in zip(got, want):
        np.testing.assert_allclose(host(g), host(t), rtol=1e-4, atol=1e-6)


def test_a_deep_chain_that_was_never_run_is_freed_without_recursion():
    with recursion_limit(1000), no_cycle_collector():
        x0, x = _chain(lg, 50_000)
        ref = weakref.ref(x.grad_fn)
        del x
        assert ref() is None


def test_deep_chain_of_views_and_in_place_writes():
    def fn(m, n):
        x0 = m.ones(4, requires_grad=True)
        y = x0 * 1
        for _ in range(n):
            v = y.view(2, 2)[0]
            v.mul_(1.0001)  # CopySlices on y, a new version each time
        y.sum().backward()
        return y, x0.grad

    _deep_case(10_000, fn)


def test_deep_graph_with_fan_out_and_hooks():
    def fn(m, n):
        x0 = m.tensor([1.0, 2.0], requires_grad=True)
        x = x0
        seen = []
        for k in range(n):
            x = x * 0.5 + x * 0.5000001  # two edges into every node
            if k % 1000 == 0:
                x.register_hook(lambda g: seen.append(1))
                x.retain_grad()
        x.sum().backward()
        assert len(seen) == -(-n // 1000)  # one hook per thousand nodes
        return x, x0.grad

    _deep_case(10_000, fn)


def test_deep_double_backward_with_create_graph():
    def fn(m, n):
        x0 = m.tensor([0.3, 0.7], requires_grad=True)
        x = x0
        for _ in range(n):
            x = x * x0 * 0.999
        (g,) = m.autograd.grad(x.sum(), x0, create_graph=True)
        (gg,) = m.autograd.grad(g.sum(), x0)
        return g, gg

    _deep_case(2_000, fn)


def test_deep_chain_of_custom_functions_and_autograd_grad_with_inputs():
    def fn(m, n):
        class Scale(m.autograd.Function):
            @staticmethod
            def forward(ctx, x, w):
                ctx.save_for_backward(x, w)
                return x * w

            @staticmethod
            def backward(ctx, g):
                x, w = ctx.saved_tensors
                return g * w, (g * x).sum()

        x0 = m.tensor([1.0, 2.0], requires_grad=True)
        w = m.tensor(1.0001, requires_grad=True)
        x = x0
        for _ in range(n):
            x = Scale.apply(x, w)
        return m.autograd.grad(x.sum(), [w, x0])

    _deep_case(5_000, fn)


# --- memory: freed by reference counting ---------------------------------------------------------


def _ops():
    a = lg.rand(3, requires_grad=True)
    b = lg.rand(3, requires_grad=True)
    y = (a * b + 1).sin().sum()
    y.backward()
    return [weakref.ref(t) for t in (a, b, y, y.grad_fn, a.grad)] + [
        weakref.ref(y.grad_fn.next_functions[0][0])
    ]


def _graph_never_run():
    a = lg.rand(3, requires_grad=True)
    y = (a * 2).pow(2).mean()
    return [weakref.ref(a), weakref.ref(y), weakref.ref(y.grad_fn)]


def _retained_graph():
    a = lg.rand(3, requires_grad=True)
    y = (a * a).sum()
    y.backward(retain_graph=True)
    y.backward(retain_graph=True)
    return [weakref.ref(a), weakref.ref(y), weakref.ref(y.grad_fn)]


def _views_and_in_place():
    a = lg.rand(3, 4, requires_grad=True)
    base = a * 1
    row = base[1]
    row.mul_(2)
    flat = base.view(12)
    parts = flat.unbind()
    s = flat.sum() + parts[0] + a.t()[0, 0]
    s.backward()
    return [weakref.ref(t) for t in (a, base, row, flat, s, s.grad_fn, base.grad_fn, parts[1])]


def _hooks_and_retain_grad():
    a = lg.rand(3, requires_grad=True)
    b = a * 2
    b.register_hook(lambda g: g * 2)
    a.register_hook(lambda g: g)
    b.retain_grad()
    c = b.sum()
    c.grad_fn.register_hook(lambda gi, go: None)
    c.grad_fn.register_prehook(lambda go: None)
    c.backward()
    return [weakref.ref(t) for t in (a, b, c, b.grad, a.grad, c.grad_fn, b.grad_fn)]


class _Mul(lg.autograd.Function):
    @staticmethod
    def forward(ctx, x, y):
        ctx.save_for_backward(x, y)
        return x * y

    @staticmethod
    def backward(ctx, g):
        x, y = ctx.saved_tensors
        return g * y, g * x


class _Exp(lg.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = x.exp()
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return g * y


def _function_saving_inputs():
    a = lg.rand(3, requires_grad=True)
    b = lg.rand(3, requires_grad=True)
    c = _Mul.apply(a, b)
    d = _Mul.apply(c, c).sum()
    d.backward()
    return [weakref.ref(t) for t in (a, b, c, d, c.grad_fn, d.grad_fn)]


def _function_saving_its_output():
    a = lg.rand(3, requires_grad=True)
    c = _Exp.apply(a)
    return [weakref.ref(t) for t in (a, c, c.grad_fn)]


def _create_graph():
    a = lg.rand(3, requires_grad=True)
    y = (a * a * a).sum()
    (g,) = lg.autograd.grad(y, a, create_graph=True)
    g.sum().backward()
    return [weakref.ref(t) for t in (a, y, g, g.grad_fn, a.grad)]


def _saved_output_op():
    a = lg.rand(3, requires_grad=True)
    y = a.exp()  # ExpBackward0 saves its result
    return [weakref.ref(a), weakref.ref(y), weakref.ref(y.grad_fn)]


def _module_and_optimizer():
    model = lg.nn.Sequential(lg.nn.Linear(4, 8), lg.nn.GELU(), lg.nn.Linear(8, 1))
    opt = lg.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    loss = lg.nn.functional.mse_loss(model(lg.ones(2, 4)), lg.zeros(2, 1))
    loss.backward()
    opt.step()
    return [weakref.ref(model), weakref.ref(opt), weakref.ref(loss), weakref.ref(loss.grad_fn)] + [
        weakref.ref(p) for p in model.parameters()
    ]


@pytest.mark.parametrize(
    "build",
    [
        _ops,
        _graph_never_run,
        _retained_graph,
        _views_and_in_place,
        _hooks_and_retain_grad,
        _function_saving_inputs,
        _create_graph,
        _module_and_optimizer,
        _saved_output_op,
        _function_saving_its_output,
    ],
    ids=lambda f: f.__name__.strip("_"),
)
def test_graphs_are_freed_by_reference_counting(build):
    assert_freed_by_refcount(build)


@pytest.mark.parametrize("outcome", ["returns", "raises", "nested"])
@pytest.mark.parametrize("enabled", [True, False])
def test_backward_leaves_the_cycle_collector_as_it_found_it(enabled, outcome):
    """Note [Collector during backward]: paused while the engine runs, restored after (also when
    backward raises, and a backward inside a hook leaves the outer one's pause alone)."""
    seen = []
    x = lg.tensor([1.0, 2.0], requires_grad=True)
    y = x.exp() * 2

    def hook(g):
        seen.append(gc.isenabled())
        if outcome == "raises":
            raise ValueError("from the hook")
        if outcome == "nested":
            z = lg.tensor([3.0], requires_grad=True)
            with lg.enable_grad():
                (z * 2).sum().backward()
            seen.append(gc.isenabled())
        return g

    y.register_hook(hook)
    was = gc.isenabled()
    (gc.enable if enabled else gc.disable)()
    try:
        with pytest.raises(ValueError) if outcome == "raises" else contextlib.nullcontext():
            y.sum().backward()
        assert gc.isenabled() is enabled
    finally:
        (gc.enable if was else gc.disable)()
    assert seen == [False] * (2 if outcome == "nested" else 1)


def test_backward_with_create_graph_warns_of_the_cycle_as_torch():
    def fn(m):
        p = m.tensor([1.0, 2.0], requires_grad=True)
        (p * p).sum().backward(create_graph=True)
        return p.grad

    t, g = both(fn)
    assert g.grad_fn is not None  # p.grad has a graph that leads back to p: the cycle


def test_the_create_graph_cycle_is_collectable_and_breaks_when_grad_is_reset():
    def make():
        p = lg.tensor([1.0, 2.0], requires_grad=True)
        with pytest.warns(UserWarning, match="reference cycle"):
            (p * p).sum().backward(create_graph=True)
        return p

    with no_cycle_collector():
        p = make()
        refs = [weakref.ref(p), weakref.ref(p.grad), weakref.ref(p.grad.grad_fn)]
        del p
        assert refs[0]() is not None  # the cycle PyTorch warns about
        gc.collect()
        assert [r() for r in refs] == [None] * 3  # unlike PyTorch's, the cycle collector frees it

        p = make()
        ref = weakref.ref(p)
        p.grad = None  # what PyTorch's warning advises
        del p
        assert ref() is None


def _live_objects() -> tuple[int, int]:
    """Tensors and nodes made since ``no_cycle_collector`` set the older objects aside."""
    tensors = nodes = 0
    for o in gc.get_objects():
        kind = type(o)  # not isinstance: some modules' objects warn when asked for __class__
        if issubclass(kind, Node):
            nodes += 1
        elif issubclass(kind, lg.Tensor):
            tensors += 1
    return tensors, nodes


def _rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _training_keeps_flat_memory(activation) -> None:
    lg.manual_seed(0)
    model = lg.nn.Sequential(lg.nn.Linear(8, 32), activation(), lg.nn.Linear(32, 1))
    opt = lg.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x, y = lg.randn(16, 8), lg.randn(16, 1)
    losses = []

    def step():
        opt.zero_grad()
        loss = lg.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())

    for _ in range(5):  # compiled functions, optimizer state
        step()
    with no_cycle_collector():
        step()  # the objects a step replaces (.grad) are counted among the new ones from here
        before, rss = _live_objects(), _rss()
        for _ in range(2000):
            step()
        after, grown = _live_objects(), _rss() - rss
    assert losses[-1] < losses[0]
    assert after == before, f"live (tensors, nodes) went from {before} to {after}"
    assert grown < 64 << 20, f"RSS grew by {grown >> 20} MiB"


@pytest.mark.slow
def test_a_training_loop_keeps_a_flat_memory_profile():
    _training_keeps_flat_memory(lg.nn.GELU)  # GeluBackward0 saves its input


@pytest.mark.slow
def test_a_relu_training_loop_keeps_a_flat_memory_profile():
    _training_keeps_flat_memory(lg.nn.ReLU)


# --- threads ------------------------------------------------------------------------------------


def _run_threads(target, n: int) -> list:
    """Run ``target(k)`` in ``n`` threads; their results in order, re-raising the first error."""
    results: list = [None] * n
    errors: list = []

    def run(k):
        try:
            results[k] = target(k)
        except BaseException as e:  # noqa: BLE001 - handed to the main thread
            errors.append(e)

    threads = [threading.Thread(target=run, args=(k,)) for k in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    assert not any(t.is_alive() for t in threads), "a thread hung"
    if errors:
        raise errors[0]
    return results


@pytest.mark.parametrize(
    "mode",
    [
        lambda m: m.no_grad(),
        lambda m: m.set_grad_enabled(False),
        lambda m: m.inference_mode(),
    ],
    ids=["no_grad", "set_grad_enabled", "inference_mode"],
)
def test_grad_modes_are_thread_local_while_threads_overlap(mode):
    barrier = threading.Barrier(2, timeout=60)
    x = lg.ones(2, requires_grad=True)

    def worker(k):
        if k == 0:
            with mode(lg):
                barrier.wait()  # both threads are inside their block now
                inside = (x * 2).requires_grad, lg.is_grad_enabled()
                barrier.wait()
            return inside
        barrier.wait()
        here = (x * 2).requires_grad, lg.is_grad_enabled()
        barrier.wait()
        return here

    assert _run_threads(worker, 2) == [(False, False), (True, True)]
    assert lg.is_grad_enabled() and (x * 2).requires_grad


def test_enable_grad_in_one_thread_does_not_leak_into_another_under_no_grad():
    barrier = threading.Barrier(2, timeout=60)
    x = lg.ones(2, requires_grad=True)

    def worker(k):
        with lg.no_grad():
            if k == 0:
                with lg.enable_grad():
                    barrier.wait()
                    got = (x * 2).requires_grad
                    barrier.wait()
                return got
            barrier.wait()
            got = (x * 2).requires_grad
            barrier.wait()
            return got

    assert _run_threads(worker, 2) == [True, False]


def _train_small(seed: int, steps: int = 30):
    g = np.random.default_rng(seed)
    w = lg.tensor(g.standard_normal((4, 3)).astype(np.float32), requires_grad=True)
    b = lg.zeros(3, requires_grad=True)
    x = lg.tensor(g.standard_normal((8, 4)).astype(np.float32))
    y = lg.tensor(g.standard_normal((8, 3)).astype(np.float32))
    for _ in range(steps):
        h = (x @ w + b).tanh()
        loss = ((h - y) ** 2).mean()
        loss.backward()
        with lg.no_grad():
            w -= 0.1 * w.grad
            b -= 0.1 * b.grad
        w.grad, b.grad = None, None
    return host(w), host(b), loss.item()


def test_independent_graphs_in_threads_match_single_threaded_results():
    want = [_train_small(k) for k in range(4)]
    barrier = threading.Barrier(4, timeout=60)

    def worker(k):
        barrier.wait()
        return _train_small(k)

    got = _run_threads(worker, 4)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g[0], w[0])
        np.testing.assert_array_equal(g[1], w[1])
        assert g[2] == w[2]


def test_concurrent_backward_into_a_shared_leaf_accumulates_every_gradient():
    for _ in range(3):
        w = lg.zeros(1000, requires_grad=True)
        barrier = threading.Barrier(4, timeout=60)

        def worker(k, w=w, barrier=barrier):
            x = lg.ones(1000) * (k + 1)
            barrier.wait()
            for _ in range(100):
                (w * x).sum().backward()

        _run_threads(worker, 4)
        np.testing.assert_array_equal(host(w.grad), np.full(1000, 100.0 * (1 + 2 + 3 + 4)))


def test_one_compiled_function_called_from_threads_at_once():
    scale = lg.tensor([1.0, 2.0, 3.0])

    def f(x):
        return ((x * scale).sin() + x).sum(dim=-1)

    compiled = lg.compile(f)
    inputs = [lg.full((5, 3), float(k)) for k in range(8)]
    barrier = threading.Barrier(8, timeout=120)

    def worker(k):
        barrier.wait()  # the first calls race to trace one signature
        return [host(compiled(inputs[k])) for _ in range(5)]

    got = _run_threads(worker, 8)
    for k, outs in enumerate(got):
        want = host(f(inputs[k]))
        for out in outs:
            np.testing.assert_allclose(out, want, rtol=1e-6)
    assert compiled.traces <= 2  # one signature: one trace, however many threads raced


def test_several_compiled_functions_trace_at_once():
    def make(k):
        w = lg.full((3,), float(k + 1), requires_grad=True)

        def step(x):
            loss = (x * w).pow(2).sum()
            loss.backward()
            return loss

        return w, step

    made = [make(k) for k in range(4)]
    compiled = [lg.compile(step) for _, step in made]
    x = lg.tensor([1.0, -2.0, 0.5])
    barrier = threading.Barrier(4, timeout=120)

    def worker(k):
        barrier.wait()
        return [compiled[k](x).item() for _ in range(3)]

    got = _run_threads(worker, 4)
    for k, (w, _) in enumerate(made):
        c = float(k + 1)
        loss = c * c * (1 + 4 + 0.25)
        assert got[k] == pytest.approx([loss] * 3, rel=1e-6)
        # three steps' gradients accumulated: d/dw sum((x w)^2) = 2 x^2 w
        np.testing.assert_allclose(host(w.grad), 3 * 2 * np.array([1.0, 4.0, 0.25]) * c, rtol=1e-6)


# --- safe loading -------------------------------------------------------------------------------


def _torch_zip(payload: bytes, extra: dict | None = None) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("archive/data.pkl", payload)
        z.writestr("archive/byteorder", "little")
        z.writestr("archive/version", "3\n")
        for name, data in (extra or {}).items():
            z.writestr(name, data)
    return buf.getvalue()


def _global(module: str, name: str) -> bytes:
    return b"c" + module.encode() + b"\n" + name.encode() + b"\n"


def _string(s: str) -> bytes:
    data = s.encode()
    return b"X" + len(data).to_bytes(4, "little") + data


def _evil_payloads(marker: str) -> dict:
    """Pickles that would run ``marker``-creating code if any loader executed them."""
    shell = f"touch {marker}"
    code = f"open({marker!r}, 'w').close()"
    return {
        "os_system_reduce": b"\x80\x02" + _global("os", "system") + _string(shell) + b"\x85R.",
        "posix_system_reduce": b"\x80\x02"
        + _global("posix", "system")
        + _string(shell)
        + b"\x85R.",
        "builtins_eval": b"\x80\x02" + _global("builtins", "eval") + _string(code) + b"\x85R.",
        "builtins_exec_in_dict": b"\x80\x02}"
        + _string("w")
        + _global("builtins", "exec")
        + _string(code)
        + b"\x85Rs.",
        "stack_global": b"\x80\x04"
        + b"\x8c\x08builtins\x94\x8c\x04eval\x94\x93"
        + _string(code)
        + b"\x85R.",
        "inst_opcode": b"(" + _string(code) + b"ibuiltins\neval\n.",
        "obj_opcode": b"(" + _global("builtins", "eval") + _string(code) + b"o.",
        "newobj_opcode": b"\x80\x02" + _global("builtins", "eval") + _string(code) + b"\x85\x81.",
        "getattr_chain": b"\x80\x02"
        + _global("builtins", "getattr")
        + _global("os", "path")
        + _string("exists")
        + b"\x86R.",
        "rebuild_with_evil_storage": b"\x80\x02"
        + _global("torch._utils", "_rebuild_tensor_v2")
        + b"("
        + _global("os", "system")
        + _string(shell)
        + b"\x85R"
        + b"K\x00K\x01\x85K\x01\x85\x89"
        + _global("collections", "OrderedDict")
        + b")Rtr.",
    }


@pytest.mark.filterwarnings("ignore:Detected pickle protocol 4")  # torch's, for stack_global
@pytest.mark.parametrize("name", list(_evil_payloads("x")))
def test_loading_never_runs_code_from_a_file(tmp_path, name):
    marker = tmp_path / "ran"
    data = _torch_zip(_evil_payloads(str(marker))[name])
    for weights_only in (True, False):
        with pytest.raises(pickle.UnpicklingError) as got:
            lg.load(io.BytesIO(data), weights_only=weights_only)
        assert "Weights only load failed" in str(got.value)
        assert not marker.exists()
    # torch's safe loader refuses the same bytes with the same exception type
    with pytest.raises(pickle.UnpicklingError):
        torch.load(io.BytesIO(data), weights_only=True)
    assert not marker.exists()


def test_a_refused_global_is_named_as_torch_names_it(tmp_path):
    data = _torch_zip(_evil_payloads(str(tmp_path / "ran"))["os_system_reduce"])
    with pytest.raises(pickle.UnpicklingError) as t:
        torch.load(io.BytesIO(data), weights_only=True)
    with pytest.raises(pickle.UnpicklingError) as g:
        lg.load(io.BytesIO(data))
    assert "GLOBAL os.system" in str(t.value) and "GLOBAL os.system" in str(g.value)


def _leafgrad_file(obj) -> bytes:
    buf = io.BytesIO()
    lg.save(obj, buf)
    return buf.getvalue()


def _rezip(data: bytes, replace: dict, drop: tuple = ()) -> bytes:
    src = zipfile.ZipFile(io.BytesIO(data))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for info in src.infolist():
            if info.filename in drop:
                continue
            z.writestr(info.filename, replace.get(info.filename, src.read(info.filename)))
    return buf.getvalue()


def _manifest(data: bytes) -> dict:
    return json.loads(zipfile.ZipFile(io.BytesIO(data)).read("leafgrad.json"))


def _edited(data: bytes, edit) -> bytes:
    m = _manifest(data)
    edit(m)
    return _rezip(data, {"leafgrad.json": json.dumps(m).encode()})


def _set(path, value):
    def edit(m):
        obj = m
        for key in path[:-1]:
            obj = obj[key]
        obj[path[-1]] = value

    return edit


GOOD = {"w": [1.0, 2.0, 3.0, 4.0], "n": 3}


def _good() -> bytes:
    return _leafgrad_file({"w": lg.tensor(GOOD["w"]), "n": GOOD["n"]})


MALFORMED = {
    "empty": lambda: b"",
    "random_bytes": lambda: np.random.default_rng(0).bytes(4096),
    "text": lambda: b"hello, I am not a checkpoint\n",
    "truncated_head": lambda: _good()[:40],
    "truncated_half": lambda: _good()[: len(_good()) // 2],
    "truncated_tail": lambda: _good()[:-1],
    "manifest_not_json": lambda: _rezip(_good(), {"leafgrad.json": b"{not json"}),
    "manifest_a_list": lambda: _rezip(_good(), {"leafgrad.json": b"[1, 2]"}),
    "manifest_binary": lambda: _rezip(_good(), {"leafgrad.json": b"\xff\xfe\x00"}),
    "manifest_missing": lambda: _rezip(_good(), {}, drop=("leafgrad.json",)),
    "storage_missing": lambda: _rezip(_good(), {}, drop=("data/0",)),
    "storage_short": lambda: _rezip(_good(), {"data/0": b"\x00" * 7}),
    "no_storages_key": lambda: _edited(_good(), lambda m: m.pop("storages")),
    "no_tensors_key": lambda: _edited(_good(), lambda m: m.pop("tensors")),
    "no_object_key": lambda: _edited(_good(), lambda m: m.pop("object")),
    "shape_too_big": lambda: _edited(_good(), _set(["tensors", 0, "shape"], [5])),
    "shape_negative": lambda: _edited(_good(), _set(["tensors", 0, "shape"], [-4])),
    "shape_not_ints": lambda: _edited(_good(), _set(["tensors", 0, "shape"], ["a"])),
    "stride_negative": lambda: _edited(_good(), _set(["tensors", 0, "stride"], [-1])),
    "stride_rank": lambda: _edited(_good(), _set(["tensors", 0, "stride"], [1, 1])),
    "offset_past_end": lambda: _edited(_good(), _set(["tensors", 0, "offset"], 4)),
    "dtype_unknown": lambda: _edited(_good(), _set(["tensors", 0, "dtype"], "float99")),
    "dtype_differs": lambda: _edited(_good(), _set(["tensors", 0, "dtype"], "int32")),
    "storage_dtype_unknown": lambda: _edited(_good(), _set(["storages", 0, "dtype"], "nope")),
    "numel_wrong": lambda: _edited(_good(), _set(["storages", 0, "numel"], 5)),
    "requires_grad_not_bool": lambda: _edited(_good(), _set(["tensors", 0, "requires_grad"], 1)),
    "tensor_index_past": lambda: _edited(_good(), _set(["object", "v", 0, 1, "i"], 7)),
    "tensor_index_negative": lambda: _edited(_good(), _set(["object", "v", 0, 1, "i"], -1)),
    "storage_index_past": lambda: _edited(_good(), _set(["tensors", 0, "storage"], 3)),
    "unknown_tag": lambda: _edited(_good(), _set(["object", "$"], "pickle")),
    "bad_float": lambda: _edited(_good(), _set(["object", "v", 1, 1], {"$": "float", "v": "x"})),
    # torch.load lets struct.error out of its unpickler here; leafgrad says what happened
    "torch_pickle_truncated": lambda: _rezip(
        _torch_good(), {_torch_record(_torch_good(), "data.pkl"): b"\x80\x02}q\x00(X"}
    ),
    "dunder_attribute": lambda: _edited(
        _good(), _set(["object", "attrs"], [["__class__", {"$": "dict", "v": []}]])
    ),
}


@pytest.mark.every_case
@pytest.mark.parametrize("name", list(MALFORMED))
def test_malformed_files_raise_one_clear_error(name):
    data = MALFORMED[name]()
    with pytest.raises(RuntimeError) as got:
        lg.load(io.BytesIO(data))
    text = str(got.value)
    assert type(got.value) is RuntimeError, f"{type(got.value).__name__}: {text}"
    assert "corrupted" in text or "central directory" in text, text


def test_the_good_file_loads_and_every_damaged_one_fails():
    # the damage above is what breaks each file: the file they start from is fine
    loaded = lg.load(io.BytesIO(_good()))
    assert host(loaded["w"]).tolist() == GOOD["w"] and loaded["n"] == GOOD["n"]


def _torch_file(obj) -> bytes:
    buf = io.BytesIO()
    torch.save(obj, buf)
    return buf.getvalue()


def _torch_good() -> bytes:
    return _torch_file({"w": torch.arange(4.0)})


def _torch_names(data: bytes) -> list[str]:
    return zipfile.ZipFile(io.BytesIO(data)).namelist()


def _torch_record(data: bytes, suffix: str) -> str:
    return next(n for n in _torch_names(data) if n.endswith(suffix))


TORCH_MALFORMED = {
    "truncated_head": lambda: _torch_good()[:200],
    "truncated_tail": lambda: _torch_good()[:-1],
    "storage_missing": lambda: _rezip(
        _torch_good(), {}, drop=(_torch_record(_torch_good(), "data/0"),)
    ),
    "storage_short": lambda: _rezip(
        _torch_good(), {_torch_record(_torch_good(), "data/0"): b"\x00" * 8}
    ),
}


@pytest.mark.parametrize("name", list(TORCH_MALFORMED))
def test_malformed_torch_files_raise_what_torch_load_raises(name):
    data = TORCH_MALFORMED[name]()
    with pytest.raises(Exception) as t:
        torch.load(io.BytesIO(data), weights_only=True)
    with pytest.raises(Exception) as g:
        lg.load(io.BytesIO(data))
    assert type(g.value) is type(t.value), f"torch: {t.value!r}\nleafgrad: {g.value!r}"
