"""quantile, nanquantile and index_reduce against PyTorch: values, graphs, gradients, errors."""

from __future__ import annotations

import numpy as np
from conftest import both, lg

NAN = float("nan")
INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _chain(fn) -> list:
    """The names of the graph under ``fn``, depth first."""
    out, stack = [], [(fn, 0)]
    while stack:
        f, depth = stack.pop()
        if f is None:
            continue
        out.append((depth, type(f).__name__))
        stack.extend((g, depth + 1) for g, _ in reversed(f.next_functions))
    return out


def _data(m, dtype="float64"):
    # ties and a NaN row: the sort's indices decide which element gets the gradient
    return m.tensor(
        [[1.0, 3.0, 3.0, 2.0], [0.5, -1.0, 4.0, -1.0], [2.0, NAN, 1.0, NAN]],
        dtype=getattr(m, dtype),
        requires_grad=True,
    )


def test_quantile_values_graphs_and_gradients():
    for fn in ("quantile", "nanquantile"):
        for interp in INTERPOLATIONS:
            for q in (0.3, "tensor", "tensor0"):
                for dim, keepdim in (
                    (None, False),
                    (None, True),
                    (0, False),
                    (1, True),
                    (-1, False),
                ):

                    def run(m, fn=fn, interp=interp, q=q, dim=dim, keepdim=keepdim):
                        x = _data(m)
                        qq = {"tensor": m.tensor([0.0, 0.25, 0.5, 1.0], dtype=m.float64)}.get(q, q)
                        if q == "tensor0":
                            qq = m.tensor(0.75, dtype=m.float64)
                        y = getattr(m, fn)(x, qq, dim=dim, keepdim=keepdim, interpolation=interp)
                        w = m.arange(y.numel(), dtype=m.float64).view(y.shape) + 1
                        (g,) = m.autograd.grad((y * w).sum(), x)
                        return y, g, _chain(y.grad_fn)

                    both(run)


def test_quantile_float32_method_shapes_and_second_backward():
    def run(m):
        x = m.tensor([[0.1, 0.7, 0.3], [0.9, 0.2, 0.2]], requires_grad=True)
        y = x.quantile(m.tensor([0.1, 0.9]), 0, keepdim=True)
        z = x.nanquantile(0.4, dim=1, interpolation="midpoint")
        y.sum().backward(retain_graph=True)
        return y, z, x.grad, _chain(z.grad_fn)

    both(run)

    def second(m):
        x = m.tensor([1.0, 4.0, 2.0], requires_grad=True)
        y = m.quantile(x, 0.5)
        y.backward()
        y.backward()

    both(second)

    def zero_d_and_all_nan(m):
        a = m.tensor(2.5, requires_grad=True)
        b = m.tensor([[NAN, NAN], [1.0, NAN]], requires_grad=True)
        ya = m.quantile(a, 0.3, dim=0, keepdim=True)
        yb = m.nanquantile(b, m.tensor([0.5, 1.0]), dim=1)
        yb.sum().backward()
        return ya, yb, b.grad, m.quantile(b, 0.5), m.quantile(a.detach(), m.tensor([]))

    both(zero_d_and_all_nan)

    def q_requires_grad(m):
        x = m.tensor([1.0, 4.0, 2.0, 8.0])
        q = m.tensor([0.2, 0.7], requires_grad=True)
        y = m.quantile(x, q)
        y.sum().backward()
        return y, q.grad, _chain(y.grad_fn)

    both(q_requires_grad)


def test_quantile_errors():
    x = [[1.0, 2.0], [3.0, 4.0]]
    cases = [
        lambda m: m.quantile(m.tensor(x), 1.5),
        lambda m: m.quantile(m.tensor(x), -0.1),
        lambda m: m.quantile(m.tensor(x), NAN),
        lambda m: m.nanquantile(m.tensor(x), m.tensor([0.5, 1.5])),
        lambda m: m.quantile(m.tensor(x), m.tensor([[0.5]])),
        lambda m: m.quantile(m.tensor(x, dtype=m.float64), m.tensor([0.5])),
        lambda m: m.quantile(m.tensor(x).long(), 0.5),
        lambda m: m.quantile(m.tensor(x).half(), 0.5),
        lambda m: m.quantile(m.tensor(x).long(), 1.5),
        lambda m: m.quantile(m.empty(0), 0.5),
        lambda m: m.quantile(m.empty(3, 0), 0.5, dim=0),
        lambda m: m.quantile(m.empty(0), 0.5, interpolation="foo"),
        lambda m: m.quantile(m.tensor(x), 0.5, interpolation="foo"),
        lambda m: m.quantile(m.tensor(x), 0.5, dim=2),
        lambda m: m.quantile(m.tensor(x), m.tensor([0.5]), dim=-3),
        lambda m: m.quantile(m.tensor(x), 0.5, dim=1.0),
        lambda m: m.quantile(m.tensor(x), [0.1, 0.2]),
        lambda m: m.tensor(x).quantile(0.5, 1, True, "lower"),
        lambda m: m.quantile(m.tensor(x), True),
        lambda m: m.quantile(input=m.tensor(x), q=1, dim=1),
    ]
    for case in cases:
        both(case)


def _reduce_data(m, dtype):
    x = m.tensor([[0.0, 2.0], [3.0, 0.0], [1.0, 1.0], [5.0, 5.0]], dtype=getattr(m, dtype))
    s = m.tensor([[0.0, 3.0], [4.0, 0.0], [0.0, 1.0]], dtype=getattr(m, dtype))
    return x, s


def test_index_reduce_values_and_gradients():
    for reduce in ("prod", "mean", "amax", "amin"):
        for include_self in (True, False):

            def run(m, reduce=reduce, include_self=include_self):
                x, s = _reduce_data(m, "float64")
                x.requires_grad_()
                s.requires_grad_()
                i = m.tensor([0, 0, 2])
                y = x.index_reduce(0, i, s, reduce, include_self=include_self)
                w = m.arange(8.0, dtype=m.float64).view(4, 2)
                gx, gs = m.autograd.grad((y * w).sum(), (x, s))
                z = m.index_reduce(x, 1, m.tensor([1, 1], dtype=m.int32), x * 2, reduce)
                gz = m.autograd.grad(z.sum(), x)
                return y, gx, gs, z, gz

            # PyTorch's backward of prod calls index_reduce, which warns again
            both(run, check_warnings=False)
            for dtype in ("int64", "int32", "bool", "float16", "complex64"):

                def values(m, reduce=reduce, include_self=include_self, dtype=dtype):
                    x, s = _reduce_data(m, dtype)
                    return x.index_reduce(
                        0, m.tensor([0, 0, 2]), s, reduce, include_self=include_self
                    )

                both(values)


def test_index_reduce_inplace_nan_and_empty():
    def inplace(m):
        x, s = _reduce_data(m, "float32")
        s.requires_grad_()
        y = x * 1
        v = y._version
        out = y.index_reduce_(0, m.tensor([3, 1, 3]), s, "amax", include_self=False)
        out.sum().backward()
        return out is y, y._version - v, y, s.grad

    both(inplace)

    def leaf(m):
        x, s = _reduce_data(m, "float32")
        x.requires_grad_()
        x.index_reduce_(0, m.tensor([0, 1, 2]), s, "mean")

    both(leaf)

    def second_backward(m):
        x, s = _reduce_data(m, "float32")
        s.requires_grad_()
        y = x.index_reduce(0, m.tensor([0, 1, 2]), s, "mean")
        y.sum().backward()
        y.sum().backward()

    both(second_backward)

    def nan(m):
        x = m.tensor([NAN, 1.0, 2.0])
        s = m.tensor([NAN, 2.0, 0.5])
        i = m.tensor([1, 1, 2])
        return [
            x.index_reduce(0, i, s, r, include_self=inc)
            for r in ("amax", "amin")
            for inc in (True, False)
        ]

    both(nan)

    def zero_d_and_empty(m):
        a = m.tensor(5.0).index_reduce(0, m.tensor([0]), m.tensor(3.0), "prod")
        b = m.tensor(5.0).index_reduce(0, m.tensor(0), m.tensor(3.0), "amin")
        c = m.empty(0, 2).index_reduce(0, m.tensor([], dtype=m.long), m.empty(0, 2), "amax")
        d = m.ones(3, 2).index_reduce(0, m.tensor([], dtype=m.long), m.empty(0, 2), "mean")
        return a, b, c, d

    both(zero_d_and_empty)


def test_index_reduce_errors():
    x, i, s = "x", "i", "s"

    def case(code):
        def run(m):
            env = {
                x: m.arange(6.0).view(3, 2),
                i: m.tensor([0, 2, 0]),
                s: m.tensor([[2.0, 3], [4, 5], [6, 7]]),
                "m": m,
            }
            return eval(code, env)

        return run

    for code in [
        "x.index_reduce(0, i, s, 'sum')",
        "x.index_reduce(5, i.float(), s, 'sum')",
        "x.index_reduce(0, i.float(), s, 'amax')",
        "x.index_reduce(0, i, s.double(), 'amax')",
        "x.index_reduce(0, m.tensor([0, 3, 0]), s, 'amax')",
        "x.index_reduce(0, m.tensor([0, -1, 0]), s, 'prod')",
        "x.index_reduce(0, m.tensor([[0, 1, 0]]), s, 'amax')",
        "x.index_reduce(0, i[:2], s, 'amax')",
        "x.index_reduce(2, i, s, 'amax')",
        "x.index_reduce(1, i, s, 'amax')",
        "x.index_reduce(0, i, s[:, :1], 'amax')",
        "x.cfloat().index_reduce(0, i, s.cfloat(), 'amax')",
        "x.index_reduce(0, i, s, 'prod', True)",
        "x.index_reduce(0, i, s)",
        "x.index_reduce(0, i, s, 'prod', include_self=1)",
        "x.index_reduce(0, i, 's', 'prod')",
        "m.index_reduce(x, 0, i, s, 'amin', include_self=False)",
    ]:
        both(case(code))


def test_quantile_and_index_reduce_under_compile():
    # the composites read no values under jit (q's range and the index are checked eagerly only)
    x = lg.tensor([[1.0, 3.0, 2.0], [4.0, 0.0, 5.0]])
    q = lg.tensor([0.25, 0.5])
    i = lg.tensor([2, 0])

    def fn(t, q, i):
        return (
            lg.quantile(t, q, dim=1),
            lg.nanquantile(t, q),
            t.index_reduce(1, i, t[:, :2], "amax"),
        )

    for got, want in zip(lg.compile(fn)(x, q, i), fn(x, q, i)):
        np.testing.assert_array_equal(np.asarray(got._data), np.asarray(want._data))
    np.testing.assert_allclose(np.asarray(fn(x, q, i)[0]._data), [[1.5, 2.0], [2.0, 4.0]])
