"""Benchmark suite: leafgrad against PyTorch eager, hand-written ``jax.jit`` and plain JAX eager.

Run from the repository root: ``python benchmarks/bench_suite.py`` (all figures, about five
minutes on two cores), ``--quick`` (few repeats, a shorter deep chain), ``--figures 1,2``,
``--out PATH`` (default ``benchmarks/RESULTS.md``), ``--device cuda`` (JAX contestants and
leafgrad on the GPU). Every timing runs in this one process; the RSS figures (4, 5) start one
fresh process per contestant (``--child``), because peak RSS is a property of a whole process.
Figure 6 measures the autograd graph's own memory, in this process.

The programs are written once: ``chain`` is the same text for torch, leafgrad and ``jax.numpy``;
``mlp_program`` is the same text for torch and leafgrad; the JAX MLP is written by hand and run
under ``jax.jit`` and eagerly. See ``benchmarks/README.md`` for what each figure means.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import gc
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
import traceback
import weakref
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # benchmark the checkout this script lives in
    sys.path.insert(0, str(ROOT))

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

TORCH, JIT, JAX_EAGER, LEAF, LEAF_COMPILED = (
    "torch eager",
    "jax.jit",
    "JAX eager",
    "leafgrad eager",
    "leafgrad compiled",
)
CONTESTANTS = (TORCH, JIT, JAX_EAGER, LEAF, LEAF_COMPILED)
# The two ratio columns: (numerator, denominator).
RATIOS = ((LEAF, TORCH), (LEAF_COMPILED, JIT))


@dataclasses.dataclass(frozen=True)
class Config:
    """Sizes and repeat counts of one run."""

    chain_ops: int = 1000
    deep_ops: int = 100_000
    small: tuple[int, ...] = (784, 512, 512, 10)
    small_batch: int = 128
    big: tuple[int, ...] = (784, 2048, 2048, 10)
    big_batch: int = 1024
    lr: float = 0.01
    # steps before timing: leafgrad's fused backward compiles a graph's chunks at their third
    # sighting (Note [Fused backward]), so four reach every contestant's steady state
    warmup: int = 4
    repeats: int = 7
    big_repeats: int = 3
    deep_repeats: int = 3
    jax_eager_deep_repeats: int = 1  # ~0.2 ms per op: one 100,000-op run takes half a minute
    sample_s: float = 0.25  # each timed sample repeats the step for at least this long
    warm_chain_ops: int = 30  # compiles every op kind of the chain before a deep run
    memory_warmup: int = 3  # compile's discovery call, its trace, one replay
    memory_steps: int = 3
    compile_deep: bool = False  # jax.jit / leafgrad.compile of the deep chain (see NOT_RUN_DEEP)
    seed: int = 0
    device: str = "cpu"
    quick: bool = False


FULL = Config()
QUICK = dataclasses.replace(
    FULL,
    deep_ops=10_000,
    repeats=2,
    big_repeats=1,
    deep_repeats=1,
    sample_s=0.05,
    memory_steps=1,
    quick=True,
)
NOT_RUN_DEEP = (
    "not run: compiling a straight-line program of this many ops takes longer than the whole "
    "suite (jax.jit took ~35 s for 10,000 ops here, growing faster than linearly)"
)


def library(name: str, device: str) -> tuple:
    """The module an eager contestant runs (torch or leafgrad) and the device it uses there;
    only that library is imported, so a memory child holds one of them."""
    if name == TORCH:
        import torch

        torch.set_num_threads(os.cpu_count() or 1)
        # The pinned torch is a CPU build; on a GPU run its column stays on the CPU.
        return torch, "cuda" if device == "cuda" and torch.cuda.is_available() else "cpu"
    import leafgrad

    return leafgrad, device


def jax_device(device: str):
    """The JAX device the JAX contestants use (leafgrad maps ``cuda`` to the same one)."""
    return jax.devices("gpu" if device == "cuda" else "cpu")[0]


# ---------------------------------------------------------------- the programs, written once


def chain(M, x, n: int):
    """``n`` tiny elementwise ops in a row; ``M`` is torch, leafgrad or ``jax.numpy``."""
    y = x
    for i in range(n):
        k = i % 3
        if k == 0:
            y = y * 1.01
        elif k == 1:
            y = y + 0.1
        else:
            y = M.tanh(y)
    return y


def chain_input() -> np.ndarray:
    return np.linspace(-1.0, 1.0, 16, dtype=np.float32)


def mlp_model(M, sizes: Sequence[int]):
    """Linear/ReLU layers of the given widths, no ReLU after the last."""
    layers = []
    for i, (n_in, n_out) in enumerate(zip(sizes[:-1], sizes[1:])):
        if i:
            layers.append(M.nn.ReLU())
        layers.append(M.nn.Linear(n_in, n_out))
    return M.nn.Sequential(*layers)


def mlp_program(M, sizes: Sequence[int], weights: Sequence[np.ndarray], lr: float, device: str):
    """The eager training step, the same text for torch and leafgrad: returns (model, opt, step)."""
    model = mlp_model(M, sizes)
    with M.no_grad():
        for p, w in zip(model.parameters(), weights):
            p.copy_(M.from_numpy(w))
    model = model.to(device)
    opt = M.optim.SGD(model.parameters(), lr=lr)

    def step(x, y):
        opt.zero_grad()
        loss = mlp_loss(M, model, x, y)
        loss.backward()
        opt.step()
        return loss

    return model, opt, step


def mlp_loss(M, model, x, y):
    """The forward of the training step."""
    return M.nn.functional.cross_entropy(model(x), y)


def mlp_data(sizes: Sequence[int], batch: int, seed: int) -> dict[str, np.ndarray]:
    """Initial weights (PyTorch's initialisers, seeded) and one batch, as numpy arrays."""
    import torch

    torch.manual_seed(seed)
    model = mlp_model(torch, sizes)
    data = {f"w{i}": p.detach().numpy().copy() for i, p in enumerate(model.parameters())}
    data["x"] = torch.randn(batch, sizes[0]).numpy()
    data["y"] = torch.randint(0, sizes[-1], (batch,)).numpy()
    return data


def weights_of(data: dict[str, np.ndarray]) -> list[np.ndarray]:
    return [data[f"w{i}"] for i in range(sum(k.startswith("w") for k in data))]


def jax_mlp_loss(params, x, y):
    """The same MLP and cross entropy, by hand in ``jax.numpy`` (weights laid out as torch's)."""
    h = x
    for i in range(0, len(params) - 2, 2):
        h = jax.nn.relu(h @ params[i].T + params[i + 1])
    logits = h @ params[-2].T + params[-1]
    logp = jax.nn.log_softmax(logits, axis=-1)
    return -jnp.mean(jnp.take_along_axis(logp, y[:, None], axis=1))


def jax_sgd_step(params, x, y, lr):
    """Value, gradients and the SGD update; gradients are returned as torch keeps ``.grad``."""
    loss, grads = jax.value_and_grad(jax_mlp_loss)(params, x, y)
    return loss, grads, [p - lr * g for p, g in zip(params, grads)]


# ---------------------------------------------------------------- contestants


@dataclasses.dataclass
class Runner:
    """One contestant's program: ``step`` runs it once, ``finish`` waits for queued work (JAX
    dispatch is asynchronous), ``result`` gives the last step's loss, gradients and parameters."""

    step: Callable[[], object]
    finish: Callable[[], None]
    result: Callable[[], dict]


class NotAvailable(Exception):
    """A contestant that cannot run here; the message says why."""


def _np(t) -> np.ndarray:
    return np.asarray(t.detach().cpu().numpy())


def _leaf_arrays(tensors) -> list:
    # leafgrad keeps its jax array in ``_data``; waiting on it is waiting for the step.
    return [t._data for t in tensors if t is not None]


def _compile(leafgrad, fn):
    compile_ = getattr(leafgrad, "compile", None)  # absent from leafgrads before it landed
    if compile_ is None:
        raise NotAvailable("leafgrad.compile is absent")
    return compile_(fn)


def chain_runner(name: str, n: int, device: str = "cpu") -> Runner:
    """Forward and backward through ``chain`` of ``n`` ops, for contestant ``name``."""
    x0 = chain_input()
    if name in (JIT, JAX_EAGER):
        x = jax.device_put(x0, jax_device(device))
        f = jax.value_and_grad(lambda x: chain(jnp, x, n).sum())
        if name == JIT:
            f = jax.jit(f)
        out = {}

        def step():
            out["loss"], out["grad"] = f(x)

        def finish():
            jax.block_until_ready(out["grad"])

        def result():
            return {"loss": float(out["loss"]), "grads": [np.asarray(out["grad"])], "params": []}

        return Runner(step, finish, result)

    M, dev = library(name, device)
    x = M.tensor(x0, device=dev, requires_grad=True)

    def program(x):
        x.grad = None
        loss = chain(M, x, n).sum()
        loss.backward()
        return loss

    fn = _compile(M, program) if name == LEAF_COMPILED else program
    out = {}

    def step():
        out["loss"] = fn(x)

    def finish():
        if name != TORCH:
            jax.block_until_ready(_leaf_arrays([out["loss"], x.grad]))

    def result():
        return {"loss": float(out["loss"].item()), "grads": [_np(x.grad)], "params": []}

    return Runner(step, finish, result)


def mlp_runner(name: str, data: dict[str, np.ndarray], sizes, lr: float, device="cpu") -> Runner:
    """One SGD training step of the MLP on one batch, for contestant ``name``."""
    weights = weights_of(data)
    if name in (JIT, JAX_EAGER):
        dev = jax_device(device)
        state = {"params": [jax.device_put(w, dev) for w in weights]}
        x, y = jax.device_put(data["x"], dev), jax.device_put(data["y"], dev)
        f = jax.jit(jax_sgd_step, donate_argnums=0) if name == JIT else jax_sgd_step

        def step():
            state["loss"], state["grads"], state["params"] = f(state["params"], x, y, lr)

        def finish():
            jax.block_until_ready(state["params"])

        def result():
            return {
                "loss": float(state["loss"]),
                "grads": [np.asarray(g) for g in state["grads"]],
                "params": [np.asarray(p) for p in state["params"]],
            }

        return Runner(step, finish, result)

    M, dev = library(name, device)
    model, _, program = mlp_program(M, sizes, weights, lr, dev)
    x = M.from_numpy(data["x"]).to(dev)
    y = M.from_numpy(data["y"]).to(dev)
    fn = _compile(M, program) if name == LEAF_COMPILED else program
    params = list(model.parameters())
    out = {}

    def step():
        out["loss"] = fn(x, y)

    def finish():
        if name != TORCH:
            jax.block_until_ready(_leaf_arrays([out["loss"], *params]))

    def result():
        return {
            "loss": float(out["loss"].item()),
            "grads": [_np(p.grad) for p in params],
            "params": [_np(p) for p in params],
        }

    return Runner(step, finish, result)


# ---------------------------------------------------------------- timing


def _sample(runner: Runner, number: int) -> float:
    """Seconds per step over ``number`` steps run back to back, queued work included."""
    t0 = time.perf_counter()
    for _ in range(number):
        runner.step()
    runner.finish()
    return (time.perf_counter() - t0) / number


@dataclasses.dataclass
class _Timed:
    runner: Runner
    repeats: int
    number: int = 1
    samples: list[float] = dataclasses.field(default_factory=list)


Plan = Callable[[], tuple[Runner, "Runner | None", int]]  # (runner, warm-up runner, repeats)


def time_interleaved(row: Row, cfg: Config, plans: dict[str, Plan]) -> Row:
    """Median and fastest seconds per step of each contestant. Each one warms up (on its own
    warm-up runner if given), then its samples are taken in rounds, one per contestant per
    round, so that a change in the machine's load falls on all of them alike. A sample repeats
    the step for at least ``cfg.sample_s``; a step slower than that is a sample by itself."""
    timed: dict[str, _Timed] = {}
    for name, plan in plans.items():

        def prepare(name=name, plan=plan):
            runner, warm, repeats = plan()
            for _ in range(cfg.warmup):
                _sample(warm or runner, 1)
            gc.collect()
            once = _sample(runner, 1)
            t = timed[name] = _Timed(runner, repeats)
            t.number = max(1, min(10_000, int(cfg.sample_s / max(once, 1e-9))))
            if t.number == 1:
                t.samples.append(once)

        _guard(row, name, prepare)
    while any(len(t.samples) < t.repeats for t in timed.values()):
        for name, t in list(timed.items()):
            if len(t.samples) < t.repeats:
                if not _guard(row, name, lambda t=t: t.samples.append(_sample(t.runner, t.number))):
                    del timed[name]
    for name, t in timed.items():
        row.values[name], row.best[name] = statistics.median(t.samples), min(t.samples)
    for name in plans:
        _show(row, name)
    return row


@dataclasses.dataclass
class Row:
    """One figure's line of the table: a value per contestant, or the reason there is none."""

    label: str
    unit: str  # "ms", "us", "s" (values in seconds) or "MiB" (values in bytes)
    values: dict[str, float] = dataclasses.field(default_factory=dict)  # medians
    best: dict[str, float] = dataclasses.field(default_factory=dict)  # fastest samples
    missing: dict[str, str] = dataclasses.field(default_factory=dict)

    def cell(self, name: str) -> str:
        value = self.values.get(name)
        return "n/a" if value is None else _fmt(value * _SCALE[self.unit])

    def ratio(self, num: str, den: str) -> str:
        a, b = self.values.get(num), self.values.get(den)
        return "n/a" if a is None or not b else f"{a / b:.2f}"


_SCALE = {"s": 1.0, "ms": 1e3, "us": 1e6, "MiB": 1 / 2**20}


def _fmt(x: float) -> str:
    return f"{x:.3g}" if abs(x) < 1000 else f"{x:,.0f}"


def _why(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0][:120] if text else ''}"


def _guard(row: Row, name: str, work: Callable[[], None]) -> bool:
    """Run ``work``; if it fails, record why in ``row`` (a failing contestant must not lose a
    ten-minute run) and return False."""
    try:
        work()
        return True
    except NotAvailable as e:
        row.missing[name] = str(e)
    except Exception as e:
        traceback.print_exc()
        row.missing[name] = f"raised {_why(e)}"
    return False


def _show(row: Row, name: str) -> None:
    print(f"  {name:<18} {row.cell(name):>10} {row.unit}  {row.missing.get(name, '')}", flush=True)


def _measure_each(row: Row, names, measure: Callable[[str], float]) -> Row:
    """One value per contestant (the memory figures, each measured in its own process)."""
    for name in names:
        _guard(row, name, lambda name=name: row.values.__setitem__(name, measure(name)))
        _show(row, name)
    return row


# ---------------------------------------------------------------- figures


def figure_chain(cfg: Config) -> list[Row]:
    """Figure 1: a chain of tiny ops, forward and backward; also per op."""
    n = cfg.chain_ops
    row = Row(f"1. chain of {n:,} tiny ops, fwd+bwd", "ms")
    print(row.label, flush=True)
    plans = {
        name: lambda name=name: (chain_runner(name, n, cfg.device), None, cfg.repeats)
        for name in CONTESTANTS
    }
    time_interleaved(row, cfg, plans)
    per_op = Row("1. the same, per op", "us", missing=dict(row.missing))
    per_op.values = {k: v / n for k, v in row.values.items()}
    per_op.best = {k: v / n for k, v in row.best.items()}
    return [row, per_op]


def figure_mlp(cfg: Config, big: bool) -> list[Row]:
    """Figures 2 and 3: one SGD training step of an MLP."""
    sizes, batch = (cfg.big, cfg.big_batch) if big else (cfg.small, cfg.small_batch)
    number = 3 if big else 2
    widths = "-".join(map(str, sizes))
    row = Row(f"{number}. MLP {widths}, batch {batch}, SGD step", "ms")
    print(row.label, flush=True)
    data = mlp_data(sizes, batch, cfg.seed)
    repeats = cfg.big_repeats if big else cfg.repeats
    plans = {
        name: lambda name=name: (
            mlp_runner(name, data, sizes, cfg.lr, cfg.device),
            None,
            repeats,
        )
        for name in CONTESTANTS
    }
    return [time_interleaved(row, cfg, plans)]


def figure_deep(cfg: Config) -> list[Row]:
    """Figure 4: a chain of 100,000 tiny ops: time here, peak memory in fresh processes."""
    n = cfg.deep_ops
    row = Row(f"4. chain of {n:,} tiny ops, fwd+bwd", "s")
    print(row.label, flush=True)
    compiled = (JIT, LEAF_COMPILED)

    def plan(name):
        if name in compiled and not cfg.compile_deep:
            raise NotAvailable(NOT_RUN_DEEP)
        repeats = cfg.jax_eager_deep_repeats if name == JAX_EAGER else cfg.deep_repeats
        warm = chain_runner(name, cfg.warm_chain_ops, cfg.device)
        return chain_runner(name, n, cfg.device), warm, repeats

    time_interleaved(row, cfg, {name: lambda name=name: plan(name) for name in CONTESTANTS})
    mem = Row("4. the same, peak RSS growth", "MiB")
    print(mem.label, flush=True)
    names = CONTESTANTS if cfg.compile_deep else (TORCH, JAX_EAGER, LEAF)
    for name in compiled:
        if name not in names:
            mem.missing[name] = NOT_RUN_DEEP
    _measure_each(mem, names, lambda name: memory_in_child(cfg, 4, name)["steady"])
    return [row, mem]


def figure_mlp_memory(cfg: Config) -> list[Row]:
    """Figure 5: peak RSS growth of the small MLP's training steps, a fresh process each: the
    first steps (compiling included), then steady steps."""
    widths = "-".join(map(str, cfg.small))
    first = Row(f"5. MLP {widths} SGD, peak RSS growth, first {cfg.memory_warmup} steps", "MiB")
    steady = Row(f"5. the same, next {cfg.memory_steps} steps", "MiB")
    print(f"{first.label} / {steady.label}", flush=True)
    for name in CONTESTANTS:

        def measure(name=name):
            found = memory_in_child(cfg, 5, name)
            first.values[name], steady.values[name] = found["first"], found["steady"]

        if not _guard(first, name, measure):
            steady.missing[name] = first.missing[name]
        print(f"  {name:<18} {first.cell(name):>10} {steady.cell(name):>10} MiB", flush=True)
    return [first, steady]


def figure_graph_memory(cfg: Config) -> list[Row]:
    """Figure 6: the memory the autograd graph holds, for the MLPs of figures 2 and 3: after the
    forward, its peak during a whole step, and after the backward (``graph_memory``)."""
    return _graph_rows(cfg, cfg.small, cfg.small_batch) + _graph_rows(cfg, cfg.big, cfg.big_batch)


def _graph_rows(cfg: Config, sizes: Sequence[int], batch: int) -> list[Row]:
    widths = "-".join(map(str, sizes))
    held = Row(f"6. MLP {widths}, batch {batch}: graph after forward", "MiB")
    peak = Row("6. the same, peak live bytes during a step", "MiB")
    after = Row("6. the same, graph after backward", "MiB")
    rows = (held, peak, after)
    print(f"{held.label} / peak / after backward", flush=True)
    data = mlp_data(sizes, batch, cfg.seed)
    for name in CONTESTANTS:
        if name not in (TORCH, LEAF):
            for row in rows:
                row.missing[name] = NOT_GRAPH
            continue

        def measure(name=name):
            found = graph_memory(name, data, sizes, cfg.lr, cfg.device)
            for row, key in zip(rows, ("forward", "peak", "backward")):
                row.values[name] = found[key]

        if not _guard(held, name, measure):
            peak.missing[name] = after.missing[name] = held.missing[name]
        cells = " ".join(f"{row.cell(name):>10}" for row in rows)
        print(f"  {name:<18} {cells} MiB  {held.missing.get(name, '')}", flush=True)
    return list(rows)


FIGURES = {
    1: figure_chain,
    2: lambda cfg: figure_mlp(cfg, big=False),
    3: lambda cfg: figure_mlp(cfg, big=True),
    4: figure_deep,
    5: figure_mlp_memory,
    6: figure_graph_memory,
}


# ---------------------------------------------------------------- memory, one process each


def _status_bytes(field: str) -> int | None:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def _peak_bytes() -> int:
    peak = _status_bytes("VmHWM")
    if peak is not None:
        return peak
    import resource  # not Linux: ru_maxrss is KiB on Linux and BSD, bytes on macOS

    scale = 1 if sys.platform == "darwin" else 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale


def _reset_peak() -> bool:
    """Reset the process's peak RSS to its current RSS (Linux's clear_refs); False if refused."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def peak_growth(run: Callable[[], None]) -> int:
    """Bytes the process's peak RSS grows by while ``run`` runs."""
    gc.collect()
    if _reset_peak():
        before = _status_bytes("VmRSS") or _peak_bytes()
    else:  # growth above the peak so far: an underestimate when setup peaked higher
        before = _peak_bytes()
    run()
    return max(0, _peak_bytes() - before)


def memory_of(cfg: Config, figure: int, name: str, data_path: str | None = None) -> dict:
    """Peak RSS growth, in this process, of one contestant's warm-up (``"first"``: compiling,
    first allocations) and of its measured work after it (``"steady"``)."""
    if figure == 4:
        if name in (JIT, LEAF_COMPILED) and not cfg.compile_deep:
            raise NotAvailable(NOT_RUN_DEEP)
        warm = chain_runner(name, cfg.warm_chain_ops, cfg.device)
        runner = chain_runner(name, cfg.deep_ops, cfg.device)
        steps = 1
    else:
        with np.load(data_path) as f:
            data = dict(f)
        runner = warm = mlp_runner(name, data, cfg.small, cfg.lr, cfg.device)
        steps = cfg.memory_steps

    def run(runner, steps):
        for _ in range(steps):
            runner.step()
        runner.finish()

    first = peak_growth(lambda: run(warm, cfg.memory_warmup))
    return {"first": first, "steady": peak_growth(lambda: run(runner, steps))}


def memory_in_child(cfg: Config, figure: int, name: str) -> dict:
    """``memory_of`` in a fresh interpreter running this script with ``--child``."""
    if figure == 4 and name in (JIT, LEAF_COMPILED) and not cfg.compile_deep:
        raise NotAvailable(NOT_RUN_DEEP)
    with tempfile.TemporaryDirectory() as tmp:
        data_path = None
        if figure == 5:  # the child for leafgrad must not import torch to build the weights
            data_path = os.path.join(tmp, "mlp.npz")
            np.savez(data_path, **mlp_data(cfg.small, cfg.small_batch, cfg.seed))
        spec = {"config": dataclasses.asdict(cfg), "figure": figure, "name": name}
        spec["data"] = data_path
        proc = subprocess.run(
            [sys.executable, str(Path(__file__).resolve()), "--child", json.dumps(spec)],
            capture_output=True,
            text=True,
            timeout=1200,
        )
    for line in proc.stdout.splitlines():
        if line.startswith("RESULT "):
            found = json.loads(line[len("RESULT ") :])
            if "missing" in found:
                raise NotAvailable(found["missing"])
            return found["bytes"]
    raise RuntimeError(f"child failed (exit {proc.returncode}): {proc.stderr.strip()[-300:]}")


def _child(spec_json: str) -> None:
    spec = json.loads(spec_json)
    fields = spec["config"]
    for key in ("small", "big"):
        fields[key] = tuple(fields[key])
    cfg = Config(**fields)
    try:
        result = {"bytes": memory_of(cfg, spec["figure"], spec["name"], spec["data"])}
    except NotAvailable as e:
        result = {"missing": str(e)}
    except Exception as e:
        result = {"missing": f"raised {_why(e)}"}
    print("RESULT " + json.dumps(result), flush=True)


# ---------------------------------------------------------------- graph memory (figure 6)

NOT_GRAPH = "not measured: figure 6 is about the autograd graph of an eager training step"
NOTES = {
    6: (
        "figure 6, torch eager and leafgrad eager, after 3 warm-up steps (so leafgrad's backward "
        "takes its default fused path, Note [Fused backward]): *graph after forward/backward* is "
        "the bytes of the distinct storages (torch: `saved_tensors_hooks`) or arrays (leafgrad: "
        "a walk of its nodes' saved arrays) the graph holds, parameters excluded, batch and "
        "target included; *peak* is the most live memory during one whole step (zero_grad, "
        "forward, backward, SGD update) above what was live at its start, old `.grad`s included: "
        "torch's from `torch.profiler` (every allocation and free), leafgrad's the sum of "
        "`jax.live_arrays()` sampled at each return from a leafgrad function, which misses "
        "arrays living only inside one compiled call (XLA's temporaries; a fused backward chunk "
        "is one call). The graph after forward is PyTorch's: `linear` multiplies by the weight "
        "without copying `W.t()` (Note [Views inside ops]) and ReLU/log_softmax keep their results "
        "(Note [Saved results]). The fused backward releases what a chunk's nodes saved as the "
        "chunk ends, and ends a chunk where activations are let go of (Note [Fused backward], "
        "*Memory*), so no activation is alive when the first layer's gradients are made; within "
        "one chunk XLA's temporaries are not seen, while torch's peak counts its own (the "
        "gradient of an activation); SGD donates the parameters' arrays (Note [Donated "
        "parameters]) so the update allocates nothing new"
    ),
}
_MEASURED = "bench_suite.measured_step"


class _Saved:
    """What figure 6's pack hook gives torch to keep: the saved tensor, in a box whose death
    says that the graph let go of it."""

    __slots__ = ("tensor", "__weakref__")

    def __init__(self, tensor) -> None:
        self.tensor = tensor


class TorchSaved:
    """A context in which torch's autograd records what it saves for backward
    (``torch.autograd.graph.saved_tensors_hooks``); ``held()`` is the bytes of the distinct
    storages the graph still holds, parameters' storages excluded."""

    def __init__(self, torch, params) -> None:
        self._hooks = torch.autograd.graph.saved_tensors_hooks(self._pack, self._unpack)
        self._params = {p.untyped_storage().data_ptr() for p in params}
        self._saved: list = []

    def _pack(self, tensor):
        box = _Saved(tensor)
        self._saved.append(weakref.ref(box))
        return box

    @staticmethod
    def _unpack(box):
        return box.tensor

    def __enter__(self) -> TorchSaved:
        self._hooks.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        self._hooks.__exit__(*exc)

    def held(self) -> int:
        storages = {}
        for ref in self._saved:
            box = ref()
            if box is not None:
                storage = box.tensor.untyped_storage()
                if storage.data_ptr() not in self._params:
                    storages[storage.data_ptr()] = storage.nbytes()
        return sum(storages.values())


def leaf_graph_bytes(loss, params) -> int:
    """Bytes of the distinct arrays leafgrad's graph behind ``loss`` holds for backward: each
    recorded op's ``_primals`` and the arrays of its saved tensors (``_operands``), parameters'
    arrays excluded. The walk uses a stack: graphs may be deep."""
    skip = {id(p._data) for p in params}
    arrays: dict[int, int] = {}
    seen = set()
    stack = [loss.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        held = list(getattr(node, "_primals", None) or ())
        held += [t._data for t in getattr(node, "_operands", ()) if t is not None]
        for a in held:
            if isinstance(a, jax.Array) and id(a) not in skip:
                arrays[id(a)] = a.nbytes
        stack.extend(nxt for nxt, _ in node.next_functions)
    return sum(arrays.values())


def _live_bytes() -> int:
    return sum(a.nbytes for a in jax.live_arrays())


def leaf_step_peak(step: Callable[[], object]) -> int:
    """The peak, during ``step()``, of the bytes of live JAX arrays above those live before it,
    sampled each time a function of leafgrad returns (``sys.setprofile``): after every op's
    dispatch, every node or fused chunk of a backward, every optimizer update. Arrays that live
    only inside one compiled call (XLA's temporaries) are not seen."""
    import leafgrad

    where = os.path.dirname(leafgrad.__file__) + os.sep
    gc.collect()
    base = peak = _live_bytes()

    def sample(frame, event, arg):
        nonlocal peak
        if event == "return" and frame.f_code.co_filename.startswith(where):
            peak = max(peak, _live_bytes())

    before = sys.getprofile()
    sys.setprofile(sample)
    try:
        step()
    finally:
        sys.setprofile(before)
    return max(peak, _live_bytes()) - base


def torch_allocations(torch, step: Callable[[], object], device: str = "cpu") -> list[int]:
    """The sizes of torch's allocations (frees negative) during ``step()``, in time order
    (``torch.profiler`` with ``profile_memory``). The step runs twice under the profiler and the
    second is measured, so that frees of what the first allocated (the old ``.grad`` s) are
    seen: the profiler misses frees of memory allocated before it started."""
    from torch._C._profiler import _EventType
    from torch.profiler import ProfilerActivity, profile, record_function

    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        step()
        with record_function(_MEASURED):
            step()
    events = list(prof.profiler.kineto_results.experimental_event_tree())
    window = None
    allocations = []
    while events:
        event = events.pop()
        if event.tag == _EventType.Allocation:
            fields = event.extra_fields
            if str(fields.device).split(":")[0] == device:
                allocations.append((event.start_time_ns, fields.alloc_size))
        elif event.name == _MEASURED:
            window = (event.start_time_ns, event.end_time_ns)
        events.extend(event.children)
    if window is None:
        raise RuntimeError("torch.profiler recorded no measured step")
    return [size for t, size in sorted(allocations) if window[0] <= t <= window[1]]


def torch_step_peak(torch, step: Callable[[], object], device: str = "cpu") -> int:
    """The peak, during ``step()``, of the bytes torch's allocator holds above what it held
    before (``torch_allocations``: every allocation and free is seen)."""
    total = peak = 0
    for size in torch_allocations(torch, step, device):
        total += size
        peak = max(peak, total)
    return peak


def graph_memory(name: str, data, sizes, lr: float, device: str = "cpu", warm: int = 3) -> dict:
    """Figure 6 for torch or leafgrad eager, in bytes: ``forward``, what the graph holds after
    the forward of the training step; ``backward``, what it still holds after ``backward()``
    (no ``retain_graph``); ``peak``, the most live memory above a step's start during a whole
    step (``torch_step_peak``, ``leaf_step_peak``). ``warm`` steps run first (compiling, and
    leafgrad's fused backward, which compiles from the third sighting of a graph)."""
    M, dev = library(name, device)
    model, opt, step = mlp_program(M, sizes, weights_of(data), lr, dev)
    x = M.from_numpy(data["x"]).to(dev)
    y = M.from_numpy(data["y"]).to(dev)
    params = list(model.parameters())
    for _ in range(warm):
        step(x, y)
    opt.zero_grad()
    if name == TORCH:
        with TorchSaved(M, params) as saved:
            loss = mlp_loss(M, model, x, y)
        forward = saved.held()
        loss.backward()
        backward = saved.held()
    else:
        loss = mlp_loss(M, model, x, y)
        forward = leaf_graph_bytes(loss, params)
        loss.backward()
        backward = leaf_graph_bytes(loss, params)
    opt.step()
    del loss
    if name == TORCH:
        peak = torch_step_peak(M, lambda: step(x, y), dev)
    else:
        peak = leaf_step_peak(lambda: step(x, y))
    return {"forward": forward, "peak": peak, "backward": backward}


# ---------------------------------------------------------------- the report


def machine() -> dict[str, str]:
    """CPU model, cores, platform and JAX devices, library versions."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    now = datetime.datetime.now(datetime.timezone.utc)
    info = {
        "date": now.strftime("%Y-%m-%d %H:%M UTC"),
        "CPU": cpu,
        "cores": str(os.cpu_count()),
        "platform": platform.platform(),
        "JAX devices": ", ".join(
            f"{d.platform}:{getattr(d, 'device_kind', d)}" for d in jax.devices()
        ),
        "python": platform.python_version(),
        "jax": jax.__version__,
    }
    torch, _ = library(TORCH, "cpu")
    info["torch"] = f"{torch.__version__} (set_num_threads({torch.get_num_threads()}))"
    import leafgrad

    info["leafgrad"] = leafgrad.__version__ + _git_commit()
    return info


def _git_commit() -> str:
    try:
        out = subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
        )
        return f" (checkout {out.stdout.strip()})" if out.returncode == 0 else ""
    except (OSError, subprocess.TimeoutExpired):
        return ""


def _table(rows: Sequence[Row], reasons: dict[str, str]) -> list[str]:
    """Markdown table lines; each reason for an ``n/a`` gets a footnote mark in ``reasons``."""
    head = ["figure", "unit", *CONTESTANTS, *(f"{a} / {b}" for a, b in RATIOS)]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in rows:
        cells = []
        for name in CONTESTANTS:
            cell = row.cell(name)
            if name in row.missing:
                cell += " " + reasons.setdefault(row.missing[name], f"[{len(reasons) + 1}]")
            cells.append(cell)
        ratios = [row.ratio(a, b) for a, b in RATIOS]
        lines.append("| " + " | ".join([row.label, row.unit, *cells, *ratios]) + " |")
    return lines


def markdown(rows: Sequence[Row], info: dict[str, str], cfg: Config, notes=()) -> str:
    """The results as markdown: the run's facts, one table row per figure (medians), the fastest
    samples of the timed figures, footnotes for what could not be measured."""
    lines = ["# leafgrad benchmark results", ""]
    lines += [f"- {k}: {v}" for k, v in info.items()]
    kind = "quick run (--quick)" if cfg.quick else "full run"
    lines.append(
        f"- settings: {kind}; device {cfg.device}; medians of {cfg.repeats} samples "
        f"({cfg.big_repeats} for figure 3, {cfg.deep_repeats} for figure 4, "
        f"{cfg.jax_eager_deep_repeats} for JAX eager in figure 4) after {cfg.warmup} warm-ups"
    )
    lines += [f"- {note}" for note in notes]
    reasons: dict[str, str] = {}
    lines += ["", *_table(rows, reasons)]
    timed = [dataclasses.replace(row, values=row.best) for row in rows if row.best]
    if timed:
        lines += ["", "Fastest sample of each timing (less disturbed by other load):", ""]
        lines += _table(timed, reasons)
    if reasons:
        lines += ["", "n/a:", ""]
        lines += [f"- {mark} {reason}" for reason, mark in reasons.items()]
    return "\n".join(lines) + "\n"


def run(cfg: Config, figures: Sequence[int]) -> list[Row]:
    """Every requested figure, in this process (memory figures start their own processes)."""
    rows: list[Row] = []
    for number in figures:
        rows += FIGURES[number](cfg)
    return rows


def _cpu_pressure() -> str:
    try:
        with open("/proc/pressure/cpu") as f:
            some = f.readline().split()
    except OSError:
        return ""
    fields = dict(item.split("=") for item in some[1:] if "=" in item)
    return ", ".join(f"{k} {fields[k]}%" for k in ("avg60", "avg300") if k in fields)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="few repeats, shorter deep chain")
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "RESULTS.md"))
    parser.add_argument("--figures", default="1,2,3,4,5,6", help="comma-separated, e.g. 1,2")
    parser.add_argument("--device", default="cpu", choices=("cpu", "cuda"))
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        _child(args.child)
        return
    cfg = dataclasses.replace(QUICK if args.quick else FULL, device=args.device)
    figures = [int(f) for f in args.figures.split(",") if f.strip()]
    unknown = sorted(set(figures) - set(FIGURES))
    if unknown:
        parser.error(f"unknown figures {unknown}; there are {sorted(FIGURES)}")
    info = machine()
    print("\n".join(f"{k}: {v}" for k, v in info.items()), flush=True)
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    start = time.perf_counter()
    rows = run(cfg, figures)
    notes = [f"wall time of the run: {time.perf_counter() - start:.0f} s"]
    notes += [NOTES[number] for number in figures if number in NOTES]
    if load is not None:
        end = os.getloadavg()
        notes.append(
            f"load average (1 min) at start {load[0]:.2f}, at end {end[0]:.2f}: the machine "
            "may be shared, and other work on it adds noise to every figure"
        )
    pressure = _cpu_pressure()
    if pressure:
        notes.append(
            f"CPU pressure at the end (Linux PSI, share of time runnable work waited for a CPU): "
            f"{pressure}"
        )
    text = markdown(rows, info, cfg, notes)
    print("\n" + text)
    Path(args.out).write_text(text)
    print(f"written to {args.out}")


if __name__ == "__main__":
    main()
