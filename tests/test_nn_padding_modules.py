"""Padding layers (ZeroPad/ConstantPad/ReflectionPad/ReplicationPad/CircularPad) against torch."""

from __future__ import annotations

import pytest
from conftest import both

CASES = [
    ("ZeroPad1d", (1,), 1),
    ("ZeroPad2d", ((1, 2, 0, 1),), 2),
    ("ZeroPad3d", (1,), 3),
    ("ConstantPad1d", (2, 3.5), 1),
    ("ConstantPad2d", ((1, 0, 2, 1), -1.0), 2),
    ("ConstantPad3d", (1, 0.5), 3),
    ("ReflectionPad1d", (2,), 1),
    ("ReflectionPad2d", (1,), 2),
    ("ReflectionPad3d", ((1, 0, 1, 1, 0, 1),), 3),
    ("ReplicationPad1d", ((3, 1),), 1),
    ("ReplicationPad2d", ((1, 0, 2, 1),), 2),
    ("ReplicationPad3d", (1,), 3),
    ("CircularPad1d", (1,), 1),
    ("CircularPad2d", ((1, 0, 1, 1),), 2),
    ("CircularPad3d", (1,), 3),
]


@pytest.mark.parametrize("name,args,dims", CASES, ids=[c[0] for c in CASES])
def test_padding_module(name, args, dims):
    def fn(m):
        layer = getattr(m.nn, name)(*args)
        shape = (2, 3, 4, 5)[: dims + 1]
        x = m.arange(float(2 * 3 * 4 * 5)).reshape(2, 3, 4, 5)[(0,) * (3 - dims)] + 1
        x = x.reshape(shape).detach().requires_grad_()
        y = layer(x)
        (y * y).sum().backward()
        return repr(layer), y, x.grad

    both(fn)


def test_circular_pad_checks_dims():
    both(lambda m: m.nn.CircularPad1d(1)(m.ones(2, 2, 2, 2)))
