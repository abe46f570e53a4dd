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
