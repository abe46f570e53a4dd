"""leafgrad's random factories and in-place fills draw PyTorch's CPU numbers, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import leafgrad

SEEDS = [0, 1, 20200910, 2**32 + 5, 123456789]
SHAPES = [(), (0,), (1,), (10,), (3, 5), (16,), (17,), (4, 4, 3), (100,)]
FLOATS = ["float32", "float64"]


def _bits(t) -> np.ndarray:
    values = t.detach().numpy()
    return np.ascontiguousarray(values).reshape(-1).view(np.uint8)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("fn", ["rand", "randn"])
def test_rand_and_randn_match_torch(seed, shape, dtype, fn):
    out = []
    for m in (torch, leafgrad):
        m.manual_seed(seed)
        first = getattr(m, fn)(shape, dtype=getattr(m, dtype))
        second = getattr(m, fn)(shape, dtype=getattr(m, dtype), requires_grad=True)
        out.append((first, second))
    (t1, t2), (l1, l2) = out
    assert np.array_equal(_bits(t1), _bits(l1))
    assert np.array_equal(_bits(t2), _bits(l2))
    assert l2.requires_grad and l2.is_leaf and l1.dtype.name == dtype


@pytest.mark.parametrize("seed", SEEDS)
def test_randint_randperm_and_fills_match_torch(seed):
    results = []
    for m in (torch, leafgrad):
        m.manual_seed(seed)
        a = m.randint(0, 10, (5, 3))
        b = m.randint(7, (4,))
        c = m.randperm(12)
        d = m.empty(20).uniform_(-2, 3)
        e = m.zeros(3, 7, dtype=m.float64).normal_(1.5, 0.25)
        f = m.rand_like(m.zeros(6))
        g = m.randn(2, generator=m.Generator().manual_seed(seed + 1))
        results.append([x.numpy() for x in (a, b, c, d, e, f, g)])
    for t, lg in zip(*results):
        assert t.dtype == lg.dtype and np.array_equal(t, lg)


def test_rng_state_round_trip_and_bytes_match_torch():
    torch.manual_seed(7)
    leafgrad.manual_seed(7)
    torch.rand(5)
    leafgrad.rand(5)
    ts, ls = torch.get_rng_state(), leafgrad.get_rng_state()
    assert ls.shape == leafgrad.Size([5056]) and ls.dtype is leafgrad.uint8
    assert np.array_equal(ts.numpy(), ls.numpy())
    a = leafgrad.randn(20)
    leafgrad.set_rng_state(ls)
    assert np.array_equal(a.numpy(), leafgrad.randn(20).numpy())
    assert leafgrad.initial_seed() == torch.initial_seed() == 7


def test_inplace_random_fill_of_leaf_requiring_grad():
    w = leafgrad.zeros(3, requires_grad=True)
    with pytest.raises(RuntimeError) as ours:
        w.uniform_()
    tw = torch.zeros(3, requires_grad=True)
    with pytest.raises(RuntimeError) as theirs:
        tw.uniform_()
    assert str(ours.value) == str(theirs.value)
    with leafgrad.no_grad():
        w.normal_()
    assert w._version == 1 and w.is_leaf and w.requires_grad
