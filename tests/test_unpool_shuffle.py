"""F.channel_shuffle and F.max_unpool1d/2d/3d (and their modules) against PyTorch: values,
grad_fn names, gradients, output sizes, reprs and errors."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import both


def _x(m, shape, seed=0):
    data = np.random.default_rng(seed).standard_normal(shape)
    return m.tensor(data, dtype=m.float64, requires_grad=True)


@pytest.mark.parametrize("shape,groups", [((2, 6, 3), 2), ((1, 6, 2, 2), 3), ((2, 4, 1, 2, 2), 4)])
def test_channel_shuffle(shape, groups):
    def f(m):
        x = _x(m, shape)
        y = m.nn.functional.channel_shuffle(x, groups)
        z = m.nn.ChannelShuffle(groups)(x)
        (y * _x(m, shape, 1).detach()).sum().backward()
        return y, z, x.grad, y.stride(), repr(m.nn.ChannelShuffle(groups))

    both(f)


UNPOOL = [
    (1, {"kernel_size": 2}, (2, 3, 8)),
    (1, {"kernel_size": 3, "stride": 2, "padding": 1}, (3, 9)),
    (2, {"kernel_size": 2}, (2, 3, 4, 6)),
    (2, {"kernel_size": 3, "stride": 2, "padding": 1}, (1, 2, 7, 7)),
    (2, {"kernel_size": (2, 3), "stride": (1, 2)}, (3, 5, 7)),
    (3, {"kernel_size": 2}, (1, 2, 4, 4, 4)),
]


@pytest.mark.parametrize("n,kw,shape", UNPOOL, ids=str)
@pytest.mark.parametrize("given_size", [False, True])
def test_max_unpool_inverts_max_pool(n, kw, shape, given_size):
    def f(m):
        F = m.nn.functional
        x = _x(m, shape)
        pooled, indices = getattr(F, f"max_pool{n}d")(x, return_indices=True, **kw)
        size = None
        if given_size:
            size = list(x.shape[-n:])
        out = getattr(F, f"max_unpool{n}d")(pooled, indices, output_size=size, **kw)
        module = getattr(m.nn, f"MaxUnpool{n}d")(**kw)
        again = module(pooled, indices, output_size=size)
        (out * _x(m, out.shape, 2).detach()).sum().backward()
        return out, again, x.grad, repr(module)

    both(f)


@pytest.mark.parametrize(
    "call",
    [
        lambda m, p, i: m.nn.functional.max_unpool2d(p, i, 2, output_size=(9, 9)),
        lambda m, p, i: m.nn.functional.max_unpool2d(p, i, 2, output_size=(4,)),
        lambda m, p, i: m.nn.functional.max_unpool2d(p, i.int(), 2),
        lambda m, p, i: m.nn.functional.max_unpool2d(p, i[:, :1], 2),
        # one bad value (in several places): with several, PyTorch's threads race to report one
        lambda m, p, i: m.nn.functional.max_unpool2d(p, i.index_fill(-1, m.tensor([1]), 99), 2),
        lambda m, p, i: m.nn.functional.channel_shuffle(p, 0),
        lambda m, p, i: m.nn.functional.channel_shuffle(p, 3),
        lambda m, p, i: m.nn.functional.channel_shuffle(p[0, 0], 1),
    ],
)
def test_errors(call):
    def f(m):
        x = _x(m, (1, 2, 4, 4))
        p, i = m.nn.functional.max_pool2d(x, 2, return_indices=True)
        call(m, p, i)

    both(f)


@pytest.mark.parametrize("hard", [False, True])
@pytest.mark.parametrize("tau,dim", [(1.0, -1), (0.5, 0)])
def test_gumbel_softmax_draws_as_torch(hard, tau, dim):
    def f(m):
        m.manual_seed(3)
        logits = _x(m, (4, 5))
        y = m.nn.functional.gumbel_softmax(logits, tau=tau, hard=hard, dim=dim)
        (y * _x(m, (4, 5), 1).detach()).sum().backward()
        return y, logits.grad

    both(f)


def test_gumbel_softmax_eps_is_deprecated():
    def f(m):
        m.manual_seed(0)
        return m.nn.functional.gumbel_softmax(m.zeros(2, 3), eps=1e-5)

    both(f)
