"""Differential check of gradients taken with ``create_graph=True`` (Note [Graph formulas] in
leafgrad/ops/formulas.py): the gradient's graph (``grad_fn`` names and ``next_functions`` to a
depth), its value, and the values of the second and third derivatives, against PyTorch."""

from __future__ import annotations

import numpy as np
import torch

import leafgrad as lg


def graph_signature(t, depth: int = 4):
    """``(requires_grad, nested (name, next_functions))`` of ``t``'s history to ``depth``."""

    def walk(fn, d):
        if fn is None:
            return None
        if d == 0:
            return fn.name()
        return (fn.name(), tuple(walk(f, d - 1) for f, _ in fn.next_functions))

    return t.requires_grad, walk(t.grad_fn, depth)


def _values(t):
    return None if t is None else np.asarray(t.detach().cpu().clone().tolist(), dtype=np.complex128)


def _run(m, fn, inputs, depth, order):
    xs = [m.tensor(a, requires_grad=True) for a in inputs]
    out = fn(m, *xs)
    seed = (out * m.tensor(np.linspace(0.5, 1.5, out.numel()).reshape(out.shape))).sum()
    grads = m.autograd.grad(seed, xs, create_graph=True, allow_unused=True)
    sigs = [None if g is None else graph_signature(g, depth) for g in grads]
    vals = [_values(g) for g in grads]
    higher = []
    level = [g for g in grads if g is not None and g.requires_grad]
    for _ in range(order - 1):
        if not level:
            break
        total = sum(g.sum() for g in level)
        nxt = m.autograd.grad(total, xs, create_graph=True, allow_unused=True)
        higher.append([_values(g) for g in nxt])
        level = [g for g in nxt if g is not None and g.requires_grad]
    return sigs, vals, higher


def check_graph(fn, *inputs, depth: int = 4, order: int = 3, rtol=1e-6, atol=1e-9) -> None:
    """``fn(module, *tensors)`` in torch and leafgrad on float64 ``inputs`` that require grad:
    the first gradients' graph signatures must be equal, and the first to ``order``-th
    derivatives' values close."""
    inputs = [np.asarray(a, dtype=np.float64) for a in inputs]
    ts, tv, th = _run(torch, fn, inputs, depth, order)
    ls, lv, lh = _run(lg, fn, inputs, depth, order)
    assert ls == ts, f"graph signatures differ:\n torch    {ts}\n leafgrad {ls}"
    for a, b in zip(tv, lv):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(b, a, rtol=rtol, atol=atol)
    assert len(lh) == len(th), (len(th), len(lh))
    for lt, tt in zip(lh, th):
        for a, b in zip(tt, lt):
            assert (a is None) == (b is None)
            if a is not None:
                np.testing.assert_allclose(b, a, rtol=rtol, atol=atol)
