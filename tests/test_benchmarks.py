"""Smoke test of benchmarks/bench_suite.py at tiny sizes: every contestant's program computes what
torch computes (the benchmark compares like with like), and the report is a markdown table.

Nothing here is timed: the suite's timings are only run, never asserted on.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import itertools
import sys
from pathlib import Path

import numpy as np
import pytest

_PATH = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_suite.py"
_spec = importlib.util.spec_from_file_location("bench_suite", _PATH)
bench = importlib.util.module_from_spec(_spec)
sys.modules["bench_suite"] = bench  # dataclasses look their module up by name
_spec.loader.exec_module(bench)

TINY = dataclasses.replace(
    bench.QUICK,
    chain_ops=12,
    deep_ops=60,
    warm_chain_ops=6,
    small=(12, 8, 8, 4),
    small_batch=6,
    big=(10, 16, 16, 3),
    big_batch=5,
    repeats=1,
    big_repeats=1,
    sample_s=0.0,
    memory_steps=1,
)
SIZES = TINY.small
OTHERS = [c for c in bench.CONTESTANTS if c != bench.TORCH]


def _runner_or_skip(make, name):
    try:
        return make()
    except bench.NotAvailable as e:
        pytest.skip(f"{name}: {e}")


def _results(make, name, steps=3):
    runner = _runner_or_skip(make, name)
    # Three steps start from updated weights, and cover leafgrad.compile's three ways of running a
    # call: the first eagerly (to see what it touches), the second traced, the third replayed.
    for _ in range(steps):
        runner.step()
    runner.finish()
    return runner.result()


def _assert_same(got, want):
    np.testing.assert_allclose(got["loss"], want["loss"], rtol=1e-5, atol=1e-6)
    assert len(got["grads"]) == len(want["grads"]) and len(got["params"]) == len(want["params"])
    for g, w in zip(got["grads"] + got["params"], want["grads"] + want["params"]):
        assert g.shape == w.shape and g.dtype == w.dtype == np.float32
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-6)


@pytest.fixture(scope="module")
def mlp_data():
    return bench.mlp_data(SIZES, TINY.small_batch, seed=0)


@pytest.fixture(scope="module")
def torch_mlp(mlp_data):
    return _results(lambda: bench.mlp_runner(bench.TORCH, mlp_data, SIZES, 0.1), bench.TORCH)


@pytest.mark.parametrize("name", OTHERS)
def test_mlp_step_of_every_contestant_matches_torch(name, mlp_data, torch_mlp):
    got = _results(lambda: bench.mlp_runner(name, mlp_data, SIZES, 0.1), name)
    _assert_same(got, torch_mlp)


def test_mlp_starts_from_torch_weights_and_trains(mlp_data, torch_mlp):
    w = bench.weights_of(mlp_data)
    assert [a.shape for a in w] == [(8, 12), (8,), (8, 8), (8,), (4, 8), (4,)]
    # after three SGD steps the weights moved away from the shared start by lr * gradients
    assert not np.allclose(torch_mlp["params"][0], w[0])


@pytest.mark.parametrize("name", OTHERS)
def test_chain_of_every_contestant_matches_torch(name):
    want = _results(lambda: bench.chain_runner(bench.TORCH, 12), bench.TORCH, steps=1)
    got = _results(lambda: bench.chain_runner(name, 12), name)
    _assert_same(got, want)
    assert np.all(got["grads"][0] != 0)


def test_suite_runs_and_writes_a_markdown_table():
    rows = bench.run(TINY, [1])
    text = bench.markdown(rows, bench.machine(), TINY, ["a note"])
    lines = text.splitlines()
    runs = itertools.groupby(lines, key=lambda line: line.startswith("|"))
    tables = [len(list(group)) for is_table, group in runs if is_table]
    assert tables == [2 + len(rows)] * 2  # medians, then fastest samples
    start = next(i for i, line in enumerate(lines) if line.startswith("|"))
    table = lines[start : start + 2 + len(rows)]
    assert lines[start + 2 + len(rows) + 1].startswith("Fastest sample")
    head = [c.strip() for c in table[0].strip("|").split("|")]
    assert head == [
        "figure",
        "unit",
        *bench.CONTESTANTS,
        "leafgrad eager / torch eager",
        "leafgrad compiled / jax.jit",
    ]
    assert set(table[1].replace("|", "")) == {"-"}
    assert len(rows) == 2  # figure 1: the chain, and the same per op
    for line in table[2:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        assert len(cells) == len(head)
        float(cells[2])  # torch eager always has a value
        float(cells[5])  # leafgrad eager too
        float(cells[7])  # and their ratio
    for key in ("date", "CPU", "cores", "JAX devices", "jax", "torch", "leafgrad"):
        assert any(line.startswith(f"- {key}: ") for line in lines)
    assert "- a note" in lines


def test_markdown_marks_missing_values_with_their_reason():
    row = bench.Row("x", "ms", values={bench.TORCH: 0.002, bench.LEAF: 0.005})
    row.missing[bench.LEAF_COMPILED] = "leafgrad.compile is absent"
    text = bench.markdown([row], {"date": "today"}, TINY)
    assert "| x | ms | 2 | n/a | n/a | 5 | n/a [1] | 2.50 | n/a |" in text
    assert "- [1] leafgrad.compile is absent" in text


def test_memory_children_report_peak_growth():
    found = bench.memory_in_child(TINY, 5, bench.LEAF)
    assert set(found) == {"first", "steady"}
    assert all(isinstance(v, int) and v >= 0 for v in found.values())
    assert found["first"] > 0  # the first steps compile leafgrad's per-op functions
    with pytest.raises(bench.NotAvailable, match="not run"):
        bench.memory_in_child(TINY, 4, bench.JIT)


def test_peak_growth_sees_a_large_allocation():
    grown = bench.peak_growth(lambda: np.ones(20 * 2**20 // 8).sum())
    assert grown >= 15 * 2**20


# ---------------------------------------------------------------- figure 6: graph memory

F32, I64 = 4, 8


def _torch_saves(sizes, batch):
    """Bytes torch's graph of ``mlp_loss`` keeps, by hand: AddmmBackward0 keeps ``mat1`` (the
    layer's input; its ``mat2``, the weight's transpose, is a view of a parameter), ReluBackward0
    its result (the next addmm's ``mat1``: the same storage), LogSoftmaxBackward0 its result,
    NllLossBackward0 that result, the target and a 0-d ``total_weight``."""
    hidden = sum(batch * h * F32 for h in sizes[1:-1])
    return batch * sizes[0] * F32 + hidden + batch * sizes[-1] * F32 + batch * I64 + F32


def _leafgrad_saves(sizes, batch):
    """Bytes leafgrad's graph keeps, by hand: what torch's keeps (the product takes the weight
    itself, Note [Views inside ops]; ReLU and log_softmax keep their results, the same arrays
    the next node keeps, Note [Saved results]), less NLL's 0-d ``total_weight``, which leafgrad's
    recomputed VJP does not keep."""
    return _torch_saves(sizes, batch) - F32


@pytest.fixture(scope="module")
def graph_rows():
    return bench.run(TINY, [6])


def test_graph_memory_figure_counts_what_each_graph_saves(graph_rows):
    assert [row.label for row in graph_rows] == [
        "6. MLP 12-8-8-4, batch 6: graph after forward",
        "6. the same, peak live bytes during a step",
        "6. the same, graph after backward",
        "6. MLP 10-16-16-3, batch 5: graph after forward",
        "6. the same, peak live bytes during a step",
        "6. the same, graph after backward",
    ]
    for (sizes, batch), rows in zip(
        ((TINY.small, TINY.small_batch), (TINY.big, TINY.big_batch)),
        (graph_rows[:3], graph_rows[3:]),
    ):
        forward, peak, backward = rows
        assert forward.values == {
            bench.TORCH: _torch_saves(sizes, batch),
            bench.LEAF: _leafgrad_saves(sizes, batch),
        }
        # backward without retain_graph releases everything saved, in both
        assert backward.values == {bench.TORCH: 0, bench.LEAF: 0}
        assert set(peak.values) == {bench.TORCH, bench.LEAF}
        assert all(v > 0 for v in peak.values.values())
        for row in rows:
            assert set(row.missing) == {bench.JIT, bench.JAX_EAGER, bench.LEAF_COMPILED}
            assert set(row.missing.values()) == {bench.NOT_GRAPH}


def _trained(M, mlp_data):
    model, opt, step = bench.mlp_program(M, SIZES, bench.weights_of(mlp_data), 0.1, "cpu")
    x, y = M.from_numpy(mlp_data["x"]), M.from_numpy(mlp_data["y"])
    for _ in range(3):  # every per-op function and cached scalar exists before the count
        step(x, y)
    opt.zero_grad()
    return model, x, y


def test_torch_saved_tensor_hooks_see_all_that_torch_keeps(mlp_data):
    import torch

    model, x, y = _trained(torch, mlp_data)
    with bench.TorchSaved(torch, model.parameters()) as saved:
        loss = bench.mlp_loss(torch, model, x, y)
    held = saved.held()
    assert held == _torch_saves(SIZES, TINY.small_batch)
    # without hooks, what the forward leaves allocated is what the graph keeps that was not
    # there before (all but the batch and the target), and the loss
    kept = []
    made = sum(
        bench.torch_allocations(torch, lambda: kept.append(bench.mlp_loss(torch, model, x, y)))
    )
    assert made == held - x.nbytes - y.nbytes + loss.nbytes


def test_leafgrad_graph_walk_sees_all_that_leafgrad_keeps(mlp_data):
    import jax

    import leafgrad

    model, x, y = _trained(leafgrad, mlp_data)
    before = jax.live_arrays()  # held, so that no id of theirs is reused
    known = {id(a) for a in before}
    loss = bench.mlp_loss(leafgrad, model, x, y)
    made = sum(a.nbytes for a in jax.live_arrays() if id(a) not in known)
    held = bench.leaf_graph_bytes(loss, list(model.parameters()))
    assert held == _leafgrad_saves(SIZES, TINY.small_batch)
    assert made == held - x._data.nbytes - y._data.nbytes + loss._data.nbytes
    loss.backward()
    assert bench.leaf_graph_bytes(loss, list(model.parameters())) == 0


def _two_vectors(M):
    a = M.ones(1000)
    b = a + a  # both live here: 2 x 4000 bytes
    del a, b


def test_step_peaks_see_what_lives_at_once():
    import torch

    import leafgrad

    _two_vectors(leafgrad)  # compiles and caches before the measured call
    assert bench.torch_step_peak(torch, lambda: _two_vectors(torch)) == 8000
    assert bench.leaf_step_peak(lambda: _two_vectors(leafgrad)) == 8000


def _load(name):
    spec = importlib.util.spec_from_file_location(name, _PATH.parent / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_selection_benchmark_steps_agree_with_torch():
    """benchmarks/bench_selection.py at n = 8: leafgrad's and the hand-written jax.jit's
    gradients are torch's (distinct values: every contestant picks the same elements)."""
    sel = _load("bench_selection")
    for name, torch_step, leaf_step, jit_step in sel.cases(8):
        want = torch_step().numpy()
        np.testing.assert_array_equal(np.asarray(leaf_step()), want, err_msg=name)
        np.testing.assert_array_equal(np.asarray(jit_step()), want, err_msg=name)
        assert want.sum() > 0, name
