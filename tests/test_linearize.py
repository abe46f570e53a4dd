"""``func.linearize`` against torch 2.13: the eager output and its graph, the tangents ``jvp_fn``
gives (equal to ``func.jvp``'s), whether they require grad, and ``jvp_fn``'s checks. (torch's
``make_fx`` trace warns about a ``get_attr`` node of its own graph module: an artifact of its
implementation, which leafgrad has no counterpart of, so warnings are not compared.)"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import both, host

X = np.random.default_rng(0).standard_normal((2, 3)).astype(np.float32)
T = np.random.default_rng(1).standard_normal((2, 3)).astype(np.float32)

FUNCS = {
    "sin": lambda m: lambda a: a.sin() * 2,
    "pytree out": lambda m: lambda a: (a.exp(), {"k": a.cos().sum(0)}),
    "matmul": lambda m: lambda a: a @ a.mT,
    "softmax": lambda m: lambda a: m.nn.functional.softmax(a, dim=-1),
    "norm": lambda m: lambda a: m.linalg.vector_norm(a, dim=1),
}


@pytest.mark.parametrize("requires_grad", [False, True])
@pytest.mark.parametrize("fn", list(FUNCS))
def test_outputs_and_tangents(fn, requires_grad):
    def run(m):
        x = m.tensor(X, requires_grad=requires_grad)
        f = FUNCS[fn](m)
        out, jvp_fn = m.func.linearize(f, x)
        tangent = jvp_fn(m.tensor(T))
        again = jvp_fn(m.tensor(T * 2))
        _, ref = m.func.jvp(f, (x.detach(),), (m.tensor(T),))
        flat = [out, tangent, again, ref]
        flat = [t if isinstance(t, tuple) else (t,) for t in flat]
        graph = [
            (type(t.grad_fn).__name__ if t.grad_fn is not None else None, t.requires_grad)
            for t in (flat[0][0], flat[1][0])
        ]
        return graph[0], graph[1][1], flat

    t, g = both(run, compare=False, check_warnings=False)
    assert g[:2] == t[:2]
    for a, b in zip(t[2], g[2]):
        for x, y in zip(a, b):
            x, y = (x["k"], y["k"]) if isinstance(x, dict) else (x, y)
            np.testing.assert_allclose(host(y), host(x), rtol=1e-5, atol=1e-6)


BAD = {
    "shape": lambda m, fn: fn(m.ones(3)),
    "dtype": lambda m, fn: fn(m.ones(2, 3, dtype=m.float64)),
    "two tangents": lambda m, fn: fn(m.ones(2, 3), m.ones(2, 3)),
    "a list": lambda m, fn: fn([m.ones(2, 3)]),
    "a number": lambda m, fn: fn(1.0),
}


@pytest.mark.parametrize("bad", list(BAD))
def test_jvp_fn_checks(bad):
    def run(m):
        _, fn = m.func.linearize(lambda a: a * 2, m.tensor(X))
        return BAD[bad](m, fn)

    both(run, check_warnings=False)


def test_number_primal():
    both(lambda m: m.func.linearize(lambda a: a, 3.0), check_warnings=False)


def test_two_primals_and_a_tangent_that_requires_grad():
    def run(m):
        y = m.ones(2)
        out, fn = m.func.linearize(lambda a, b: a * b, y, y * 3)
        r = fn(m.ones(2, requires_grad=True), m.ones(2))
        return out, r.detach(), r.requires_grad, fn(m.ones(2), m.ones(2)).requires_grad

    both(run, check_warnings=False)
