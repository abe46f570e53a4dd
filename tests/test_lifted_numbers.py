"""Note [Lifted numbers]: ``alpha`` of add/sub/rsub is a program argument where no node is
recorded, so a loop over ever new values reuses one plan and one compiled forward, with PyTorch's
results."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import both, lg

from leafgrad.ops import dispatch

ALPHAS = [0.3, -1.7, 1e-3, 2.5e10, float("inf"), float("nan")]


def _calls(m, a, b, alpha):
    return [
        m.add(a, b, alpha=alpha),
        m.sub(a, b, alpha=alpha),
        m.rsub(a, b, alpha=alpha),
        m.rsub(a, 2, alpha=alpha),
        a.clone().add_(b, alpha=alpha),
        a.clone().sub_(b, alpha=alpha),
    ]


@pytest.mark.parametrize("dtype_name", ["float32", "float64", "float16", "bfloat16"])
def test_values_match_torch_for_many_alphas(dtype_name):
    rng = np.random.default_rng(0)
    # PyTorch's bfloat16 kernel rounds alpha to bfloat16 in its vectorized loop only, which
    # tensors shorter than one vector skip: 64 elements take it on AVX2 and AVX-512 machines
    x = rng.standard_normal((8, 8))
    y = rng.standard_normal((8, 8))

    def f(m):
        dtype = getattr(m, dtype_name)
        a = m.tensor(x, dtype=dtype)
        b = m.tensor(y, dtype=dtype)
        with m.no_grad():
            return [_calls(m, a, b, alpha) for alpha in ALPHAS]

    both(f, exact=True)


def test_recorded_calls_keep_their_alpha():
    """With a node to record, alpha stays static: gradients and saved attributes are PyTorch's."""

    def f(m):
        a = m.tensor([1.0, -2.0, 3.0], requires_grad=True)
        b = m.tensor([0.5, 0.25, -4.0], requires_grad=True)
        out = []
        for alpha in (0.3, -1.7):
            y = m.sub(a, b, alpha=alpha)
            y.sum().backward()
            out.append((y, y.grad_fn._saved_alpha, a.grad.clone(), b.grad.clone()))
        return out

    both(f, exact=True)


def test_a_loop_of_new_alphas_compiles_once():
    a = lg.randn(5, dtype=lg.float64)
    b = lg.randn(5, dtype=lg.float64)
    with lg.no_grad():
        a.add(b, alpha=0.5)
        plans, programs = len(dispatch._PLANS), len(dispatch._FORWARD)
        results = [a.add(b, alpha=0.5 + k / 7) for k in range(1, 40)]
        assert len(dispatch._FORWARD) == programs
        # one plan per key: the value is not part of it
        assert len(dispatch._PLANS) == plans
    # the same numbers as a program made for each value (alpha static)
    lifted, dispatch._LIFTED = dispatch._LIFTED, {}
    try:
        with lg.no_grad():
            for k, r in enumerate(results, 1):
                static = a.add(b, alpha=0.5 + k / 7)
                np.testing.assert_array_equal(np.asarray(r._data), np.asarray(static._data))
    finally:
        dispatch._LIFTED = lifted


def test_integer_and_bool_alphas_are_unchanged():
    def f(m):
        a = m.tensor([1, 2, 3])
        b = m.tensor([4, 5, 6])
        t = m.tensor([True, False])
        return m.add(a, b, alpha=3), m.sub(a, b, alpha=-2), m.add(t, t, alpha=True)

    both(f)


def test_forward_ad_through_a_lifted_alpha():
    def f(m):
        fwad = m.autograd.forward_ad
        a = m.tensor([1.0, 2.0])
        b = m.tensor([3.0, 4.0])
        out = []
        with fwad.dual_level():
            dual = fwad.make_dual(a, m.tensor([1.0, -1.0]))
            for alpha in (0.5, 0.25):
                for y in (m.add(dual, b, alpha=alpha), m.sub(b, dual, alpha=alpha)):
                    p, t = fwad.unpack_dual(y)
                    out.append((p, t))
        return out

    both(f, exact=True)


def test_compiled_function_with_a_python_alpha():
    a = lg.tensor([1.0, 2.0])
    b = lg.tensor([3.0, 4.0])

    @lg.compile
    def step(x, y):
        return x.sub(y, alpha=0.75).add(y, alpha=0.125)

    np.testing.assert_allclose(np.asarray(step(a, b)._data), [1 - 0.625 * 3, 2 - 0.625 * 4])


def test_an_update_of_a_parameter_under_no_grad_compiles_once():
    """``p.add_(p.grad, alpha=-lr)`` with a decaying ``lr`` (a hand-written SGD step): ``p``
    requires grad, but under no_grad nothing is recorded, so alpha is an argument."""
    p = lg.randn(4, 3, dtype=lg.float64, requires_grad=True)
    (p * p).sum().backward()
    lr = 0.1
    with lg.no_grad():
        p.add_(p.grad, alpha=-lr)
        programs = len(dispatch._FORWARD)
        expected = np.asarray(p._data).copy()
        for _ in range(30):
            lr *= 0.9
            p.add_(p.grad, alpha=-lr)
            expected = expected - lr * np.asarray(p.grad._data)
        assert len(dispatch._FORWARD) == programs
    np.testing.assert_allclose(np.asarray(p._data), expected, rtol=1e-12)
    assert p.is_leaf and p.requires_grad and p._version == 31
