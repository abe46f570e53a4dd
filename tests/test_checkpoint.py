"""``utils.checkpoint`` against PyTorch (Note [Checkpoint] in leafgrad/utils/checkpoint.py): both
variants' graphs, gradients (equal to the un-checkpointed ones, dropout masks replayed), warnings
and errors, and that the non-reentrant one keeps no activations."""

import gc

import jax
import numpy as np
import pytest
import torch.utils.checkpoint  # noqa: F401
from conftest import both, lg, torch

import leafgrad.utils.checkpoint  # noqa: F401

_X = np.linspace(-1.0, 1.0, 12).reshape(3, 4).astype(np.float32)
_W = np.linspace(0.5, 1.0, 20).reshape(4, 5).astype(np.float32)


def _block(m):
    def f(t, w):
        return m.nn.functional.dropout((t @ w).tanh(), 0.3).exp()

    return f


def _leaves(m):
    return m.tensor(_X, requires_grad=True), m.tensor(_W, requires_grad=True)


@pytest.mark.parametrize("use_reentrant", [None, True, False])
def test_checkpoint_gradients(use_reentrant):
    def fn(m):
        x, w = _leaves(m)
        m.manual_seed(1)
        kw = {} if use_reentrant is None else {"use_reentrant": use_reentrant}
        y = m.utils.checkpoint.checkpoint(_block(m), x, w, **kw)
        m.manual_seed(5)  # recomputation replays the generator's state of the forward
        y.sum().backward()
        after = m.rand(2)  # ... and puts the surrounding state back
        return type(y.grad_fn).__name__, y, x.grad, w.grad, after

    both(fn)


@pytest.mark.parametrize("use_reentrant", [True, False])
def test_checkpoint_equals_plain_backward(use_reentrant):
    x, w = _leaves(lg)
    lg.manual_seed(1)
    _block(lg)(x, w).sum().backward()
    plain = x.grad.numpy(), w.grad.numpy()
    x.grad = w.grad = None
    lg.manual_seed(1)
    y = lg.utils.checkpoint.checkpoint(_block(lg), x, w, use_reentrant=use_reentrant)
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), plain[0])
    np.testing.assert_array_equal(w.grad.numpy(), plain[1])


def test_non_reentrant_with_grad_and_retain_graph():
    def fn(m):
        x, w = _leaves(m)
        m.manual_seed(2)
        y = m.utils.checkpoint.checkpoint(_block(m), x, w, use_reentrant=False)
        first = m.autograd.grad(y.sum(), (x, w), retain_graph=True)
        second = m.autograd.grad(y.sum(), (x,), retain_graph=True)
        y.sum().backward()
        return first, second, x.grad, w.grad

    both(fn)


def test_checkpoint_sequential():
    def fn(m):
        x, _ = _leaves(m)
        seq = m.nn.Sequential(
            m.nn.Linear(4, 4), m.nn.Tanh(), m.nn.Linear(4, 4), m.nn.Tanh(), m.nn.Linear(4, 2)
        )
        for p in seq.parameters():
            m.nn.init.constant_(p, 0.1)
        out = m.utils.checkpoint.checkpoint_sequential(seq, 2, x, use_reentrant=False)
        out.pow(2).sum().backward()
        return type(out.grad_fn).__name__, out, x.grad, [p.grad for p in seq.parameters()]

    both(fn)


ERRORS = {
    "reentrant_with_grad": lambda m, x, w: m.autograd.grad(
        m.utils.checkpoint.checkpoint(_block(m), x, w, use_reentrant=True).sum(), x
    ),
    "reentrant_with_inputs": lambda m, x, w: (
        m.utils.checkpoint.checkpoint(_block(m), x, w, use_reentrant=True)
        .sum()
        .backward(inputs=(x,))
    ),
    "unexpected_kwargs": lambda m, x, w: m.utils.checkpoint.checkpoint(
        _block(m), x, w, use_reentrant=True, foo=1
    ),
    "context_fn_reentrant": lambda m, x, w: m.utils.checkpoint.checkpoint(
        _block(m), x, w, use_reentrant=True, context_fn=lambda: (None, None)
    ),
    "no_input_requires_grad": lambda m, x, w: (
        m.utils.checkpoint.checkpoint(lambda t: t * 2, m.ones(2), use_reentrant=True).requires_grad
    ),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_checkpoint_errors(case):
    def fn(m):
        x, w = _leaves(m)
        return ERRORS[case](m, x, w)

    both(fn)


def test_recomputation_that_differs():
    def fn(m):
        calls = [0]

        def f(t):
            calls[0] += 1
            return t[: 3 if calls[0] == 1 else 2].sin()

        x = m.tensor(_X[0], requires_grad=True)
        y = m.utils.checkpoint.checkpoint(f, x, use_reentrant=False)
        try:
            y.sum().backward()
        except RuntimeError as err:
            return type(err).__name__, str(err).split("\n.\n")[0].rstrip(".\n")

    both(fn)


def _live_bytes() -> int:
    gc.collect()
    return sum(a.nbytes for a in jax.live_arrays())


def test_non_reentrant_keeps_no_activations():
    """The graph of a checkpointed block of 12 layers holds its input, not its 12 activations:
    they are recomputed in backward."""
    x = lg.randn(256, 256, requires_grad=True)

    def block(t):
        for _ in range(12):
            t = (t * 1.01).tanh()
        return t

    base = _live_bytes()
    plain = block(x).sum()
    held_plain = _live_bytes() - base
    del plain
    base = _live_bytes()
    y = lg.utils.checkpoint.checkpoint(block, x, use_reentrant=False).sum()
    held = _live_bytes() - base
    layer = 256 * 256 * 4
    assert held_plain >= 12 * layer
    assert held < 2 * layer, (held, held_plain)
    y.backward()
    ref = x.grad.numpy()
    x.grad = None
    block(x).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), ref)


def test_module_under_torch_utils():
    assert hasattr(lg.utils, "checkpoint") and hasattr(torch.utils, "checkpoint")


@pytest.mark.parametrize("early_stop", [True, False, None, "context off", "context on"])
def test_early_stop_of_the_recomputation(early_stop):
    """Non-reentrant checkpoints stop recomputing once every saved tensor is back (the code
    after the last saving op does not run again) unless early_stop=False or
    set_checkpoint_early_stop(False) says otherwise."""

    def f(m):
        calls = []

        def fn(x):
            calls.append("start")
            y = x.sin()
            calls.append("after sin")
            z = y.exp()
            calls.append("end")
            return z * 2

        x = m.ones(2, requires_grad=True)
        cp = m.utils.checkpoint
        if isinstance(early_stop, str):
            with cp.set_checkpoint_early_stop(early_stop == "context on"):
                out = cp.checkpoint(
                    fn, x, use_reentrant=False, early_stop=early_stop != "context on"
                )
        else:
            kw = {} if early_stop is None else {"early_stop": early_stop}
            out = cp.checkpoint(fn, x, use_reentrant=False, **kw)
        out.sum().backward()
        return calls, x.grad

    both(f)
