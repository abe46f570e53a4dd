"""Differential tests of diff, addr, renorm, dist, cdist and the trapezoid rules against PyTorch."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from conftest import Raised, both, lg, same_tensor

RNG = np.random.default_rng(3)
A = RNG.standard_normal((3, 4))
B = RNG.standard_normal((5, 4))
V3 = RNG.standard_normal(3)
V4 = RNG.standard_normal(4)
BIG1 = RNG.standard_normal((2, 27, 3))
BIG2 = RNG.standard_normal((27, 3))


def graph(fn, depth=8):
    if fn is None or depth == 0:
        return None
    return (type(fn).__name__, tuple(graph(f, depth - 1) for f, _ in fn.next_functions))


def _leaf(m, values, dtype="float64", rg=True):
    return m.tensor(values, dtype=getattr(m, dtype), requires_grad=rg)


def _grads(m, fn, *values, dtype="float64"):
    """``fn(m, *leaves)``, its graph, and the leaves' gradients of a weighted sum."""
    xs = [_leaf(m, v, dtype) for v in values]
    out = fn(m, *xs)
    w = m.tensor(np.linspace(0.5, 1.5, max(out.numel(), 1))[: out.numel()].reshape(out.shape))
    (out * w.to(out.dtype)).sum().backward()
    return [out, graph(out.grad_fn)] + [x.grad for x in xs]


def test_diff():
    for kw in ({"n": 2, "dim": -2}, {"n": 0}, {"n": 9}):
        both(lambda m, kw=kw: _grads(m, lambda m, x: m.diff(x, **kw), A))
    pre, app = RNG.standard_normal((3, 1)), RNG.standard_normal((3, 2))
    both(lambda m: _grads(m, lambda m, x, p: m.diff(x, prepend=p), A, pre))
    both(lambda m: _grads(m, lambda m, x, p, a: m.diff(x, 3, prepend=p, append=a), A, pre, app))
    both(lambda m: m.diff(m.tensor([True, False, False, True]), n=2))
    both(lambda m: m.diff(m.tensor([1, 100, -100], dtype=m.int8)))
    both(lambda m: m.diff(m.tensor([1, 2, 3]), prepend=m.tensor([0.5])))
    both(lambda m: m.diff(m.tensor([True, False]), prepend=m.tensor([2])))
    both(lambda m: m.diff(m.tensor([1 + 1j, 2, 3j])))
    both(lambda m: m.diff(m.zeros(0)))
    both(lambda m: m.diff(m.zeros(3, 0), dim=0))
    x = A.astype(np.float32)
    for fn in (
        lambda m: m.diff(m.tensor(1.0)),
        lambda m: m.diff(m.tensor(x), n=-1),
        lambda m: m.diff(m.tensor(x), dim=5),
        lambda m: m.diff(m.tensor(x), dim=5, prepend=m.tensor(x)),
        lambda m: m.diff(m.tensor(x), prepend=m.zeros(3)),
        lambda m: m.diff(m.tensor(x), prepend=m.zeros(2, 1)),
        lambda m: m.diff(m.tensor(x), append=m.zeros(2, 1)),
        lambda m: m.diff(m.tensor(x), n=1.0),
        lambda m: m.diff(m.tensor(x), 1.5),
        lambda m: m.tensor(x).diff(1.5),
        lambda m: m.diff(m.tensor(x), prepend=1.0),
        lambda m: m.diff(m.arange(3.0), prepend=m.tensor(1.0)),
    ):
        t, g = both(fn)
        assert isinstance(t, Raised)


def test_addr():
    s = RNG.standard_normal((3, 4))
    for kw in ({}, {"beta": 0.5, "alpha": 2}, {"beta": 0}, {"alpha": 0}):
        both(lambda m, kw=kw: _grads(m, lambda m, a, b, c: m.addr(a, b, c, **kw), s, V3, V4))
    both(lambda m: _grads(m, lambda m, a, b, c: a.addr(b, c, beta=2), V4, V3, V4))
    both(lambda m: _grads(m, lambda m, a, b, c: m.addr(a, b, c), 1.5, V3, V4))
    ints = lambda m: (m.ones(2, 3, dtype=m.long), m.tensor([1, 2]), m.tensor([3, 4, 5]))  # noqa: E731
    both(lambda m: m.addr(*ints(m), beta=2, alpha=3))
    bools = lambda m: (  # noqa: E731
        m.tensor([[True, False, False], [False, False, False]]),
        m.tensor([True, False]),
        m.tensor([False, True, True]),
    )
    both(lambda m: m.addr(*bools(m)))
    both(lambda m: m.addr(*bools(m), beta=False))
    both(lambda m: m.addr(*bools(m), alpha=2))
    both(lambda m: m.addr(m.ones(2, 3, dtype=m.long), m.tensor([1.0, 2]), m.tensor([3, 4, 5])))
    both(lambda m: m.addr(m.full((2, 3), float("nan")), m.ones(2), m.ones(3), beta=0))
    both(lambda m: m.addr(m.ones(0, 3), m.ones(0), m.ones(3)))
    both(lambda m: m.addr(m.ones(2, 3, dtype=m.complex64), m.ones(2), m.ones(3), alpha=1j))
    for fn in (
        lambda m: m.addr(*ints(m), beta=0.5),
        lambda m: m.addr(*ints(m), alpha=1j),
        lambda m: m.addr(m.ones(2, 3), m.ones(2), m.ones(3), beta=True),
        lambda m: m.addr(m.ones(2), m.ones(2), m.ones(3)),
        lambda m: m.addr(m.ones(1, 2, 3), m.ones(2), m.ones(3)),
        lambda m: m.addr(m.ones(2, 3), m.ones(2, 1), m.ones(3)),
        lambda m: m.addr(m.ones(2, 3), m.ones(2), m.tensor(1.0)),
        lambda m: m.addr(m.ones(2, 3), m.ones(2), m.ones(3), alpha=1j),
        lambda m: m.addr(*(t.to(m.int8) for t in ints(m)), alpha=1000),
        lambda m: m.ones(3).addr_(m.ones(3), m.ones(1)),
        lambda m: m.ones(2, 1).addr_(m.ones(2), m.ones(3)),
        lambda m: m.ones(2, 3, dtype=m.long).addr_(m.ones(2), m.ones(3)),
    ):
        t, g = both(fn)
        assert isinstance(t, Raised)

    def inplace(m):
        x = m.tensor(s, requires_grad=True).clone()
        v = m.tensor(V3, requires_grad=True)
        x.addr_(v, m.tensor(V4), beta=0.5)
        x.sum().backward()
        return x, x._version, v.grad, graph(x.grad_fn)

    both(inplace)
    both(lambda m: m.tensor(s, requires_grad=True).addr_(m.ones(3), m.ones(4)))
    both(lambda m: m.ones(2, 3).addr_(m.ones(2, dtype=m.long), m.ones(3, dtype=m.long)))

    def twice(m):
        out = m.addr(m.ones(3, 4), m.tensor(V3, dtype=m.float32, requires_grad=True), m.ones(4))
        out.sum().backward()
        out.sum().backward()

    both(twice)


def test_renorm():
    x = np.array([[3.0, -4.0, 0.0], [0.1, 0.2, 0.0], [0.0, 0.0, 0.0]])
    for p, dim, maxnorm in ((2, 0, 1.0), (3, 1, 0.2), (math.inf, 0, 1.0)):
        both(lambda m, a=(p, dim, maxnorm): _grads(m, lambda m, t: m.renorm(t, *a), x))
    both(lambda m: _grads(m, lambda m, t: t.renorm(2, -1, 0.5), A, dtype="float32"))
    both(lambda m: m.renorm(m.ones(2, 2, dtype=m.complex64) * (1 + 1j), 2, 0, 1))
    both(lambda m: m.renorm(m.ones(2, 2, dtype=m.float16) * 3, 2, 0, 1))
    both(lambda m: m.renorm(m.ones(0, 3), 2, 0, 1))
    both(lambda m: m.renorm(m.ones(2, 0), 2, 0, 1))
    both(lambda m: m.renorm(m.ones(2, 2), m.tensor(2.0), 0, m.tensor(1.0)))
    for fn in (
        lambda m: m.renorm(m.ones(2, 3, dtype=m.long), 2, 0, 1),
        lambda m: m.renorm(m.ones(3), 2, 0, 1),
        lambda m: m.renorm(m.tensor(1.0), 2, 0, 1),
        lambda m: m.renorm(m.ones(2, 2), 0, 0, 1),
        lambda m: m.renorm(m.ones(2, 2), -1, 0, 1),
        lambda m: m.renorm(m.ones(2, 2), 1j, 0, 1),
        lambda m: m.renorm(m.ones(2, 2), 2, 0, -1),
        lambda m: m.renorm(m.ones(2, 2), 2, 0, -0.1),
        lambda m: m.renorm(m.ones(2, 2), 2, 0, 1j),
        lambda m: m.renorm(m.ones(2, 2), 2, 2, 1),
        lambda m: m.renorm(m.ones(2, 2), 2, 1.0, 1),
        lambda m: m.renorm(m.ones(2, 2, dtype=m.bool), 2, 0, 1),
    ):
        t, g = both(fn)
        assert isinstance(t, Raised)

    def inplace(m):
        x = m.tensor(A, requires_grad=True).clone()
        x.renorm_(2, 0, 0.5)
        x.sum().backward()
        return x, x._version, graph(x.grad_fn)

    both(inplace)

    def twice(m):
        out = m.renorm(m.tensor(A, requires_grad=True), 2, 0, 1)
        out.sum().backward()
        out.sum().backward()

    both(twice)


def test_dist():
    y = RNG.standard_normal((3, 1))
    z = np.array([0.0, 1.5, -2.0])
    both(lambda m: _grads(m, lambda m, a, b: m.dist(a, b), A, y))
    for p in (0.5, 1.5, 3, math.inf, -1):
        both(lambda m, p=p: _grads(m, lambda m, a: a.dist(m.zeros(3, dtype=m.float64), p), z))
    for p in (2, 3):
        both(lambda m, p=p: _grads(m, lambda m, a, b: m.dist(a, b, p), z, z))  # zero norm

    def zero_order(m):
        a = m.tensor(z, requires_grad=True)
        out = m.dist(a, m.zeros(3), 0)
        out.backward()
        return out, a.grad, graph(out.grad_fn)

    both(zero_order)
    both(lambda m: m.dist(m.ones(3, dtype=m.long), m.zeros(3)))
    both(lambda m: m.dist(m.tensor([1 + 1j, 2]), m.zeros(2, dtype=m.complex64)))
    both(lambda m: m.dist(m.ones(0), m.zeros(0)))
    both(lambda m: m.dist(m.tensor(3.0), m.tensor(1.0), m.tensor(2.0)))
    both(lambda m: m.dist(m.tensor([3.0, 4], dtype=m.float16), m.zeros(2, dtype=m.float16)))
    both(lambda m: _grads(m, lambda m, a, b: m.dist(a, b), 3.0, 1.0))
    for fn in (
        lambda m: m.dist(m.ones(3, dtype=m.long), m.zeros(3, dtype=m.long)),
        lambda m: m.dist(m.ones(3, dtype=m.bool), m.zeros(3, dtype=m.bool)),
        lambda m: m.dist(m.ones(3), m.zeros(4)),
        lambda m: m.dist(m.ones(0), m.zeros(0), math.inf),
        lambda m: m.dist(m.tensor(3.0), 1.0),
        lambda m: m.dist(m.tensor(3.0), m.tensor(1.0), 1j),
        lambda m: m.dist(m.ones(3, dtype=m.long), m.zeros(3, dtype=m.long), 1j),
    ):
        t, g = both(fn)
        assert isinstance(t, Raised)

    def twice(m):
        out = m.dist(m.tensor(A, requires_grad=True), m.zeros(4))
        out.backward()
        out.backward()

    both(twice)


def test_cdist():
    for p in (2, 0, 0.5, 3, math.inf):
        both(lambda m, p=p: _grads(m, lambda m, a, b: m.cdist(a, b, p=p), A, B))
    both(lambda m: _grads(m, lambda m, a, b: m.cdist(a, b), A, B, dtype="float32"))
    # coincident rows: PyTorch's kernels give 0, not NaN
    for p in (2, 1.5, 0.5):
        both(lambda m, p=p: _grads(m, lambda m, a: m.cdist(a, a.detach(), p=p), A[:2]))
    both(lambda m: _grads(m, lambda m, a, b: m.cdist(a, b), BIG1[:, :3], BIG2[:4]))
    # PyTorch's matrix-product form: more than 25 rows, or asked for
    mm = "use_mm_for_euclid_dist"
    both(lambda m: _grads(m, lambda m, a, b: m.cdist(a, b), BIG1, BIG2), rtol=1e-9, atol=1e-9)
    both(lambda m: _grads(m, lambda m, a, b: m.cdist(a, b, compute_mode=mm), A, B), atol=1e-9)
    both(
        lambda m: _grads(
            m, lambda m, a, b: m.cdist(a, b, compute_mode=mm), BIG1, BIG1[::-1].copy()
        ),
        atol=1e-9,
    )
    nomm = "donot_use_mm_for_euclid_dist"
    both(lambda m: _grads(m, lambda m, a, b: m.cdist(a, b, compute_mode=nomm), BIG1[:1], BIG2))
    both(lambda m: _grads(m, lambda m, a, b: m.cdist(a, b), np.ones((0, 4)), B))
    both(lambda m: _grads(m, lambda m, a, b: m.cdist(a, b), np.ones((3, 0)), np.ones((5, 0))))
    both(lambda m: m.cdist(m.ones(2, 1, 3, 4), m.ones(3, 5, 4)))
    both(lambda m: m.cdist(m.tensor(A), m.tensor(B), p=m.tensor(2.0)))
    both(lambda m: m.cdist(m.ones(3, 4).half(), m.ones(5, 4).half(), compute_mode=mm))
    both(lambda m: m.cdist(m.ones(0, 4), m.ones(5, 4, dtype=m.float64)))
    f = A.astype(np.float32)
    for fn in (
        lambda m: m.cdist(m.ones(3), m.ones(5, 4)),
        lambda m: m.cdist(m.ones(3, 4), m.ones(4)),
        lambda m: m.cdist(m.ones(3, 4), m.ones(5, 3)),
        lambda m: m.cdist(m.ones(3, 4, dtype=m.long), m.ones(5, 4, dtype=m.long)),
        lambda m: m.cdist(m.ones(3, 4), m.ones(5, 4, dtype=m.long)),
        lambda m: m.cdist(m.ones(3, 4), m.ones(5, 4, dtype=m.float64)),
        lambda m: m.cdist(m.ones(3, 4), m.ones(5, 4).half()),
        lambda m: m.cdist(m.ones(3, 4, dtype=m.complex64), m.ones(5, 4, dtype=m.complex64)),
        lambda m: m.cdist(m.ones(3, 4).half(), m.ones(5, 4).half()),
        lambda m: m.cdist(m.ones(3, 4), m.ones(5, 4), p=-1),
        lambda m: m.cdist(m.ones(3, 4), m.ones(5, 4), compute_mode="foo"),
        lambda m: m.cdist(m.ones(2, 3, 4), m.ones(3, 5, 4)),
        lambda m: m.cdist(m.ones(3, 4), m.ones(5, 4), p="x"),
        lambda m: m.cdist(m.ones(3, 4), 1.0),
        lambda m: m.cdist(m.tensor(f), m.tensor(f).double(), compute_mode=mm),
        lambda m: m.cdist(m.ones(2, 3, 4), m.ones(2, 5, 4, dtype=m.float64), compute_mode=mm),
    ):
        t, g = both(fn)
        assert isinstance(t, Raised)

    def twice(m):
        out = m.cdist(m.tensor(A, requires_grad=True), m.tensor(B))
        out.sum().backward()
        out.sum().backward()

    both(twice)


def test_trapezoid():
    y = np.array([[1.0, 2, 4], [0, 3, 9]])
    x = np.array([0.0, 1, 3])
    for name in ("trapezoid", "cumulative_trapezoid"):
        both(lambda m, n=name: _grads(m, lambda m, a: getattr(m, n)(a, dx=0.5, dim=0), y))
        both(lambda m, n=name: _grads(m, lambda m, a, b: getattr(m, n)(a, b), y, x))
        both(lambda m, n=name: _grads(m, lambda m, a, b: getattr(m, n)(a, x=b), y, x[None]))
        both(lambda m, n=name: getattr(m, n)(m.tensor([1, 2, 4]), m.tensor([1, 2, 5])))
        both(lambda m, n=name: getattr(m, n)(m.tensor([100, 100, 100], dtype=m.int8), dx=3))
        both(lambda m, n=name: getattr(m, n)(m.tensor(y), dx=m.tensor(2.0)))
        both(lambda m, n=name: getattr(m, n)(m.ones(2, 0)))
        both(lambda m, n=name: getattr(m, n)(m.tensor([1.0])))
        for fn in (
            lambda m, name=name: getattr(m, name)(m.tensor([True, False])),
            lambda m, name=name: getattr(m, name)(m.tensor([1.0, 2]), m.tensor([True, False])),
            lambda m, name=name: getattr(m, name)(m.tensor(y), m.tensor([1.0, 2])),
            lambda m, name=name: getattr(m, name)(m.tensor(y), m.tensor([[1.0, 2, 3, 4]])),
            lambda m, name=name: getattr(m, name)(m.tensor(y), m.tensor(1.0)),
            lambda m, name=name: getattr(m, name)(m.tensor(y), dim=3),
            lambda m, name=name: getattr(m, name)(m.tensor(1.0)),
            lambda m, name=name: getattr(m, name)(m.tensor(1.0), m.tensor([1.0])),
            lambda m, name=name: getattr(m, name)(m.tensor(y), m.ones(3), dx=2),
            lambda m, name=name: getattr(m, name)(m.tensor(y), 2.0),
            lambda m, name=name: getattr(m, name)(m.tensor(y), dx=1j),
        ):
            t, g = both(fn)
            assert isinstance(t, Raised)
    both(lambda m: _grads(m, lambda m, a: m.trapz(a), y))
    both(lambda m: m.trapz(m.tensor(y), m.tensor(x), dim=-1))
    both(lambda m: m.cumulative_trapezoid(m.tensor([1 + 1j, 2j])))
    t, g = both(lambda m: m.trapz(m.tensor(y), dx=1j))
    assert isinstance(t, Raised)
    both(lambda m: m.trapezoid(m.ones(2, 0, dtype=m.long)))
    both(lambda m: m.trapezoid(m.tensor([1, 2, 4]), m.tensor([0.0, 1, 3], dtype=m.float64)))
    both(lambda m: m.trapezoid(m.tensor([1, 2, 4], dtype=m.float16)))


@pytest.mark.parametrize("name", ["diff", "addr", "renorm", "dist"])
def test_methods_exist(name):
    assert hasattr(lg.Tensor, name) == hasattr(torch.Tensor, name)
    for other in ("cdist", "trapezoid", "trapz", "cumulative_trapezoid"):
        assert hasattr(lg.Tensor, other) == hasattr(torch.Tensor, other)
    same_tensor(torch.ones(1), lg.ones(1))
