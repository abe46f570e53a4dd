"""Search and count ops and complex builders, differentially against torch."""

from __future__ import annotations

import jax
import pytest
from conftest import both

import leafgrad

NAN = float("nan")
INF = float("inf")


def _cases(cases):
    failures = []
    for k, fn in enumerate(cases):
        try:
            both(fn)
        except AssertionError as e:
            failures.append(f"case {k}: {e}")
    assert not failures, "\n".join(failures)


def _backward_twice(m, make):
    """Backward once, then again without retain_graph: the saved-tensor error or not."""
    x = m.tensor([3.0, -1.5, 0.0, 0.25], requires_grad=True)
    out = make(m, x)

    def loss():
        # a complex factor that nothing saves: the error comes from the op's own node
        return (out * (1 - 2j)).real.sum() if out.is_complex() else out.sum()

    loss().backward()
    first = x.grad.clone()
    try:
        loss().backward()
    except RuntimeError as e:
        return first, str(e)
    return first, x.grad


def test_searchsorted_and_bucketize():
    b = [1.0, 2.0, 2.0, 5.0]
    v = [[NAN, 0.0, 1.0, 2.0], [3.0, 5.0, 6.0, -INF]]
    _cases(
        [
            lambda m: m.searchsorted(m.tensor(b), m.tensor(v)),
            lambda m: m.searchsorted(m.tensor(b), m.tensor(v), right=True),
            lambda m: m.searchsorted(m.tensor(b), m.tensor(v), side="right", out_int32=True),
            lambda m: m.searchsorted(m.tensor(b), m.tensor(v), side="left"),
            # unsorted boundaries and NaNs: PyTorch's bisection, step for step
            lambda m: m.searchsorted(m.tensor([1.0, NAN, 2.0, 3.0]), m.tensor(v)),
            lambda m: m.searchsorted(m.tensor([5.0, 1.0, 3.0, 2.0, 0.0]), m.tensor(v), right=True),
            lambda m: m.searchsorted(m.tensor([[1.0, 2.0], [3.0, 4.0]]), m.tensor([[1.5], [3.5]])),
            lambda m: m.searchsorted(
                m.tensor([2.0, 1.0]), m.tensor([1.5, 3.0, 0.0]), sorter=m.tensor([1, 0])
            ),
            lambda m: m.searchsorted(m.tensor([1, 2, 4]), m.tensor([1.5, 4.0])),
            lambda m: m.searchsorted(m.tensor([1, 2, 4]), 1.5),
            lambda m: m.searchsorted(m.tensor([1, 2, 4]), 2, right=True),
            lambda m: m.searchsorted(m.tensor([1.0, 2.0], dtype=m.float64), m.tensor([1.5])),
            lambda m: m.searchsorted(
                m.tensor([1.0, 2.0], dtype=m.float16), m.tensor([1.5], dtype=m.float16)
            ),
            lambda m: m.searchsorted(m.tensor([1.0]), m.tensor([])),
            lambda m: m.searchsorted(m.tensor([]), m.tensor([1.0, 2.0])),
            lambda m: m.searchsorted(m.zeros(2, 0), m.zeros(2, 3)),
            lambda m: m.searchsorted(m.tensor([1.0, 2.0]), m.tensor(1.5)),
            # errors
            lambda m: m.searchsorted(m.tensor(b), m.tensor(v), side="left", right=True),
            lambda m: m.searchsorted(m.tensor(b), m.tensor(v), side="middle"),
            lambda m: m.searchsorted(m.tensor([[1.0, 2.0], [3.0, 4.0]]), m.tensor([[1.5]])),
            lambda m: m.searchsorted(m.tensor([[1.0, 2.0], [3.0, 4.0]]), m.tensor([1.5])),
            lambda m: m.searchsorted(m.tensor([[1.0, 2.0], [3.0, 4.0]]), 1.5),
            lambda m: m.searchsorted(m.tensor(1.0), m.tensor([1.0])),
            lambda m: m.searchsorted(
                m.tensor([2.0, 1.0]), m.tensor([1.0]), sorter=m.tensor([1, 2])
            ),
            lambda m: m.searchsorted(m.tensor([2.0, 1.0]), m.tensor([1.0]), sorter=m.tensor([1])),
            lambda m: m.searchsorted(
                m.tensor([2.0, 1.0]), m.tensor([1.0]), sorter=m.tensor([1, 0], dtype=m.int32)
            ),
            lambda m: m.searchsorted(m.tensor([True, False]), m.tensor([True])),
            lambda m: m.searchsorted(m.tensor([1j]), m.tensor([1j])),
            # bucketize
            lambda m: m.bucketize(m.tensor(v), m.tensor(b)),
            lambda m: m.bucketize(m.tensor(v), m.tensor(b), right=True, out_int32=True),
            lambda m: m.bucketize(2.0, m.tensor(b)),
            lambda m: m.bucketize(m.tensor(2), m.tensor(b)),
            lambda m: m.bucketize(m.tensor([True, False]), m.tensor(b)),
            lambda m: m.bucketize(m.tensor([1.0]), m.ones(2, 2)),
            lambda m: m.bucketize(m.tensor([1.0]), m.tensor(1.0)),
            lambda m: m.bucketize(m.tensor([1j]), m.tensor(b)),
            lambda m: hasattr(m.ones(1), "bucketize") or hasattr(m.ones(1), "searchsorted"),
        ]
    )
    # integer results: never require grad
    _, g = both(lambda m: m.bucketize(m.tensor([1.0, 3.0], requires_grad=True), m.tensor(b)))
    assert not g.requires_grad


def test_searchsorted_under_jit():
    b = leafgrad.tensor([1.0, 2.0, 4.0])
    f = jax.jit(
        lambda v: (
            leafgrad.searchsorted(b, leafgrad.Tensor._make(v, leafgrad.float32, b.device))._data
        )
    )
    out = f(leafgrad.tensor([0.5, 2.0, 9.0])._data)
    assert out.tolist() == [0, 1, 3]


def test_histc():
    x = [1.0, 2.0, 3.0, 2.0, 0.1, 3.9, 4.0]
    _cases(
        [
            lambda m: m.histc(m.tensor(x), 4),
            lambda m: m.histc(m.tensor(x), 4, min=0, max=4),
            lambda m: m.histc(m.tensor(x), bins=3, min=1, max=3),
            lambda m: m.tensor(x).histc(5, 0.5, 3.5),
            lambda m: m.histc(m.tensor(x, dtype=m.float64), 7),
            lambda m: m.histc(m.tensor(x, dtype=m.float16), 4),
            lambda m: m.histc(m.tensor([[1.0, NAN], [2.0, 9.0]]), 4, min=0, max=3),
            lambda m: m.histc(m.tensor([2.0, 2.0]), 4),
            lambda m: m.histc(m.tensor([2.0, 2.0]), 4, min=1, max=1),
            lambda m: m.histc(m.tensor(2.0), 4),
            lambda m: m.histc(m.tensor([]), 4),
            lambda m: m.histc(m.tensor(x, requires_grad=True), 4),
            # errors
            lambda m: m.histc(m.tensor(x), 4, min=3, max=1),
            lambda m: m.histc(m.tensor(x), 0),
            lambda m: m.histc(m.tensor(x), -1),
            lambda m: m.histc(m.tensor([1, 2]), 4),
            lambda m: m.histc(m.tensor([1j]), 4),
            lambda m: m.histc(m.tensor([1.0, INF]), 4),
            lambda m: m.histc(m.tensor(x), 4, min=NAN, max=3),
            lambda m: m.histc(m.tensor(x), 4, min=0, max=INF),
        ]
    )


def test_bincount():
    i = [0, 3, 1, 1, 7]
    w = [0.5, 1.0, 2.0, 4.0, -1.0]
    _cases(
        [
            lambda m: m.bincount(m.tensor(i)),
            lambda m: m.bincount(m.tensor(i), minlength=10),
            lambda m: m.tensor(i).bincount(minlength=2),
            lambda m: m.bincount(m.tensor(i), weights=m.tensor(w)),
            lambda m: m.bincount(m.tensor(i), weights=m.tensor(w, dtype=m.float64)),
            lambda m: m.bincount(m.tensor(i), weights=m.tensor([1, 2, 3, 4, 5])),
            lambda m: m.bincount(m.tensor(i), weights=m.tensor(w, dtype=m.float16)),
            lambda m: m.bincount(m.tensor(i, dtype=m.uint8)),
            lambda m: m.bincount(m.tensor(i, dtype=m.int8)),
            lambda m: m.bincount(m.tensor([], dtype=m.int64)),
            lambda m: m.bincount(m.tensor([], dtype=m.int64), minlength=3),
            # errors
            lambda m: m.bincount(m.tensor(i), weights=m.ones(3)),
            lambda m: m.bincount(m.tensor(i), weights=m.ones(5, 1)),
            lambda m: m.bincount(m.tensor([-1, 0])),
            lambda m: m.bincount(m.tensor([[1]])),
            lambda m: m.bincount(m.tensor(1)),
            lambda m: m.bincount(m.tensor([1.0])),
            lambda m: m.bincount(m.tensor([True])),
            lambda m: m.bincount(m.tensor(i), minlength=-1),
        ]
    )

    def grad(m):
        wt = m.tensor(w, requires_grad=True)
        out = m.bincount(m.tensor(i), weights=wt)
        names = [type(f).__name__ if f is not None else None for f, _ in out.grad_fn.next_functions]
        try:
            out.sum().backward()
        except RuntimeError as e:
            return out, names, str(e)
        return out, names

    both(grad)


def test_unique():
    x = [3.0, 1.0, 2.0, 1.0, 3.0, 3.0]
    rows = [[1, 2], [1, 2], [0, 5], [1, 2]]
    _cases(
        [
            lambda m: m.unique(m.tensor(x)),
            lambda m: m.unique(m.tensor(x), sorted=False, return_inverse=True, return_counts=True),
            lambda m: m.tensor(x).unique(return_counts=True),
            lambda m: m.unique(m.tensor([5, 3, 9, 3, 1, 9, 7]).view(7, 1), return_inverse=True),
            lambda m: m.unique(m.tensor([True, False, True]), return_counts=True),
            lambda m: m.unique(m.tensor([NAN, NAN, 1.0]), return_inverse=True, return_counts=True),
            lambda m: m.unique(m.tensor([-0.0, 0.0]), return_inverse=True, return_counts=True),
            lambda m: m.unique(m.tensor(2.0), return_inverse=True),
            lambda m: m.unique(m.tensor([]), return_inverse=True, return_counts=True),
            lambda m: m.unique(m.tensor(rows), dim=0, return_inverse=True, return_counts=True),
            lambda m: m.unique(m.tensor(rows), dim=1, return_inverse=True, return_counts=True),
            lambda m: m.unique(m.tensor(rows), dim=-1),
            lambda m: m.unique(m.zeros(0, 3), dim=0, return_inverse=True, return_counts=True),
            lambda m: m.unique(m.zeros(2, 3), dim=0),
            lambda m: m.unique(m.zeros(2, 0), dim=0),
            lambda m: m.unique(m.tensor(rows), dim=2),
            lambda m: m.unique(m.tensor(2.0), dim=0),
            lambda m: m.unique(m.tensor([1j])),
            lambda m: m.unique(m.tensor([1j]), dim=0),
            # unique_consecutive
            lambda m: m.unique_consecutive(m.tensor(x), return_inverse=True, return_counts=True),
            lambda m: m.tensor(x).unique_consecutive(),
            lambda m: m.unique_consecutive(m.tensor(x), dim=0, return_counts=True),
            lambda m: m.unique_consecutive(
                m.tensor(rows), dim=0, return_inverse=True, return_counts=True
            ),
            lambda m: m.unique_consecutive(m.tensor(rows), return_inverse=True),
            lambda m: m.unique_consecutive(m.tensor(3.0), return_inverse=True, return_counts=True),
            lambda m: m.unique_consecutive(m.tensor([NAN, NAN, 1.0]), return_counts=True),
            lambda m: m.unique_consecutive(m.tensor([]), return_inverse=True, return_counts=True),
            lambda m: m.unique_consecutive(m.tensor([1j])),
            lambda m: m.unique_consecutive(m.tensor([1, 2]), dim=3),
        ]
    )

    def grad(m, make):
        t = m.tensor(x, requires_grad=True)
        out = make(m, t)
        out = out[0] if isinstance(out, tuple) else out
        try:
            out.sum().backward()
        except NotImplementedError as e:
            return out, str(e)
        return out

    for make in [
        lambda m, t: m.unique(t, return_inverse=True),
        lambda m, t: m.unique(t.view(2, 3), dim=1),
        lambda m, t: m.unique_consecutive(t, return_counts=True),
        lambda m, t: m.unique_consecutive(t.view(3, 2), dim=0),
    ]:
        both(lambda m, make=make: grad(m, make))
    with pytest.raises(RuntimeError, match="cannot run under jax.jit"):
        jax.jit(lambda a: leafgrad.unique(leafgrad.Tensor._make(a, leafgrad.float32, "cpu"))._data)(
            leafgrad.ones(3)._data
        )


def test_polar_and_complex():
    a, b = [3.0, -1.5, 0.0, 0.25], [0.5, 2.0, -1.0, 3.0]
    _cases(
        [
            lambda m: m.polar(m.tensor(a), m.tensor(b)),
            lambda m: m.polar(m.tensor(a, dtype=m.float64), m.tensor(b, dtype=m.float64)),
            lambda m: m.complex(m.tensor(a), m.tensor(b)),
            lambda m: m.complex(m.ones(2, 1), m.tensor([1.0, 2.0, 3.0])),
            lambda m: (
                m.complex(m.tensor(1.0), m.tensor([]))
                if False
                else m.complex(m.tensor(1.0), m.tensor([2.0]))
            ),
            # errors
            lambda m: m.polar(m.tensor([1]), m.tensor([1])),
            lambda m: m.polar(m.tensor([1.0]), m.tensor([1.0], dtype=m.float64)),
            lambda m: m.polar(m.tensor([1.0], dtype=m.float16), m.tensor([1.0], dtype=m.float16)),
            lambda m: m.complex(m.tensor([1.0]), m.tensor([1])),
            lambda m: m.complex(m.tensor([1j]), m.tensor([1j])),
            lambda m: m.complex(
                m.tensor([1.0], dtype=m.bfloat16), m.tensor([1.0], dtype=m.bfloat16)
            ),
            lambda m: m.complex(m.ones(2), m.ones(3)),
            lambda m: m.polar(m.ones(2), m.ones(3)),
            lambda m: m.complex(m.ones(2), 1.0),
            lambda m: m.complex(m.tensor(1.0, dtype=m.float64), m.tensor([1.0])),
            lambda m: hasattr(m.ones(1), "polar") or hasattr(m.ones(1), "complex"),
        ]
    )
    for make in [
        lambda m, x: m.polar(x, x * 2),
        lambda m, x: m.polar(m.tensor([1.0, 2.0, 0.5, 1.0]), x),
        lambda m, x: m.complex(x, x * 3),
        lambda m, x: m.complex(m.ones(4), x),
    ]:
        both(lambda m, make=make: _backward_twice(m, make))

    def grads(m):
        x = m.tensor(a, requires_grad=True)
        y = m.tensor(b, requires_grad=True)
        z = m.polar(x, y) * m.complex(y, x)
        g = m.autograd.grad((z * m.tensor(1.0 - 2.0j)).real.sum(), (x, y))
        return z, g

    both(grads)


def test_frexp_and_signbit():
    v = [0.0, -0.0, INF, -INF, NAN, 1e-40, 8.0, -3.0, 0.75]
    _cases(
        [
            lambda m: tuple(m.frexp(m.tensor(v))),
            lambda m: tuple(m.frexp(m.tensor(v, dtype=m.float64))),
            lambda m: tuple(m.frexp(m.tensor([1e-310, -5e-324, 3.5], dtype=m.float64))),
            lambda m: tuple(m.frexp(m.tensor([3.0, 1e-6, -70000.0], dtype=m.float16))),
            lambda m: tuple(m.frexp(m.tensor([3.0, 1e-39, -1e30], dtype=m.bfloat16))),
            lambda m: tuple(m.tensor(3.0).frexp()),
            lambda m: m.frexp(m.tensor([5.0])).mantissa,
            lambda m: m.frexp(m.tensor([5.0])).exponent,
            lambda m: type(m.frexp(m.ones(1))).__name__,
            lambda m: m.frexp(m.tensor([1])),
            lambda m: m.frexp(m.tensor([1j])),
            # signbit
            lambda m: m.signbit(m.tensor(v)),
            lambda m: m.signbit(m.tensor([1, -2, 0])),
            lambda m: m.signbit(m.tensor([True])),
            lambda m: m.signbit(m.tensor([1, 255], dtype=m.uint8)),
            lambda m: m.tensor([-1.0, 2.0], requires_grad=True).signbit(),
            lambda m: m.signbit(m.tensor([1j])),
        ]
    )
    both(lambda m: _backward_twice(m, lambda m, x: m.frexp(x * 3).mantissa))

    def grad(m):
        x = m.tensor([1e-3, 5.0, -700.0, 1.0], dtype=m.float64, requires_grad=True)
        mant, exp = m.frexp(x)
        return mant, exp, m.autograd.grad(mant.sum(), x)

    both(grad)
