"""torch.signal.windows against PyTorch: every window's values, dtype, nodes and gradient flag
for symmetric and periodic windows of several lengths, and the argument errors."""

from __future__ import annotations

import pytest
import torch
from conftest import both

import leafgrad as lg

NAMES = torch.signal.windows.__all__
EXTRA = {
    "general_cosine": {"a": [0.5, 0.3, 0.2]},
    "general_hamming": {"alpha": 0.6},
    "exponential": {"tau": 2.5},
    "gaussian": {"std": 0.7},
    "kaiser": {"beta": 5.0},
}


def test_namespace():
    assert lg.signal.windows.__all__ == NAMES
    assert lg.signal.__all__ == ["windows"]


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_window(name, dtype):
    def f(m):
        fn = getattr(m.signal.windows, name)
        out = []
        for M in (0, 1, 2, 5, 8):
            for sym in (True, False):
                kw = dict(EXTRA.get(name, {}), sym=sym, dtype=getattr(m, dtype))
                out.append(fn(M, **kw))
                w = fn(M, **kw, requires_grad=True)
                out.append((w, w.requires_grad, w.is_leaf, type(w.grad_fn).__name__))
        return out

    both(f)


@pytest.mark.parametrize("name", NAMES)
def test_window_errors(name):
    def f(m):
        fn = getattr(m.signal.windows, name)
        extra = EXTRA.get(name, {})
        errors = []
        for bad in (
            lambda: fn(-1, **extra),
            lambda: fn(4, dtype=m.float16, **extra),
            lambda: fn(4, dtype=m.int64, **extra),
        ):
            try:
                bad()
            except (ValueError, TypeError, RuntimeError) as e:
                errors.append(f"{type(e).__name__}: {e}")
        return errors

    both(f)


def test_window_parameter_errors():
    def f(m):
        w = m.signal.windows
        errors = []
        for bad in (
            lambda: w.exponential(4, tau=0),
            lambda: w.exponential(4, center=1.0),
            lambda: w.gaussian(4, std=-1.0),
            lambda: w.kaiser(4, beta=-1.0),
            lambda: w.general_cosine(4, a=3),
            lambda: w.general_cosine(4, a=[]),
        ):
            try:
                bad()
            except (ValueError, TypeError) as e:
                errors.append(f"{type(e).__name__}: {e}")
        return errors, w.exponential(5, center=1.0, sym=False)

    both(f)


def test_window_gradient():
    """A window made with requires_grad is a graph of PyTorch's nodes down to the linspace."""

    def f(m):
        w = m.signal.windows.general_cosine(6, a=[0.5, 0.5], requires_grad=True, dtype=m.float64)
        (w * m.arange(6.0, dtype=m.float64)).sum().backward()
        names, g = [], w.grad_fn
        while g is not None:
            names.append(type(g).__name__)
            g = g.next_functions[0][0] if g.next_functions else None
        return w, names

    both(f)
