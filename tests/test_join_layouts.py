"""The strides of ``cat`` and ``stack`` results, and of channels-last tensors with a dim of size
0, against torch 2.13.

PyTorch's ``cat`` allocates its result in the memory format every operand suggests
(``cat_compute_output_memory_format``: channels-last where all parts' strides look so, else
contiguous), and ``stack`` is a ``cat`` (of the parts, viewed after; or, stacking at the end, of
the parts unsqueezed there). A channels-last tensor's strides multiply by its sizes as they are,
0 included (``get_channels_last_strides_2d/3d``), where contiguous strides count a 0 as 1.
"""

from __future__ import annotations

import itertools
import math

import pytest
from conftest import both

SHAPES = [(2, 2, 3, 3), (2, 1, 3, 3), (1, 2, 1, 3), (2, 3, 1, 1), (1, 1, 2, 1), (2, 2, 3, 2, 2)]


def _laid_out(m, shape, order):
    """A tensor of ``shape`` whose dims lie in memory in ``order`` (outermost first)."""
    base = m.arange(float(math.prod(shape))).reshape([shape[d] for d in order])
    return base.permute(*[order.index(d) for d in range(len(shape))])


def _orders(shape):
    n = len(shape)
    last = (0, *range(2, n), 1)  # channels-last
    return [tuple(range(n)), last, (0, 1, *range(n - 1, 1, -1)), tuple(range(n - 1, -1, -1))]


CASES = [
    (shape, a, b)
    for shape in SHAPES
    for a, b in itertools.product(_orders(shape), repeat=2)
    if a <= b
]


@pytest.mark.parametrize("shape,first,second", CASES)
def test_cat_and_stack_strides(shape, first, second):
    def fn(m):
        a, b = _laid_out(m, shape, list(first)), _laid_out(m, shape, list(second))
        out = []
        for d in range(len(shape)):
            for r in (m.cat([a, b], d), m.stack([a, b], d), m.cat([a, b, a], d)):
                out.append((r.stride(), r.is_contiguous(), r))
        r = m.stack([a, b], len(shape))
        out.append((r.stride(), r))
        return out

    both(fn)


def test_a_skipped_empty_part_makes_cat_contiguous():
    def fn(m):
        a = m.zeros(2, 2, 3, 3).to(memory_format=m.channels_last)
        return [
            m.cat(p).stride()
            for p in ([a, a], [a, m.zeros(0)], [m.zeros(0), a], [a, a.contiguous()])
        ]

    both(fn)


def test_stacking_3d_parts_at_the_end_can_suggest_channels_last():
    """Fuzz seed 206's parts: an unsqueezed (1, 1, 2) of strides (2, 1, 1) looks channels-last."""

    def fn(m):
        a = m.zeros(2).as_strided((1, 1, 2), (2, 1, 1))
        b = m.zeros(2, 2, 3)
        return [m.stack([a, a], 3).stride(), m.stack([b, b], 3).stride(), m.stack([a, a]).stride()]

    both(fn)


EMPTY = [(2, 0, 3, 3), (0, 2, 3, 3), (2, 3, 0, 3), (2, 3, 3, 0), (1, 0, 1, 1)]
EMPTY += [(2, 0, 3, 3, 2), (2, 3, 0, 3, 2), (2, 3, 3, 3, 0)]


@pytest.mark.parametrize("shape", EMPTY)
def test_channels_last_strides_of_empty_tensors(shape):
    def fn(m):
        f = m.channels_last if len(shape) == 4 else m.channels_last_3d
        z = m.zeros(*shape)
        made = [
            m.empty(*shape, memory_format=f),
            z.to(memory_format=f),
            z.contiguous(memory_format=f),
            m.empty_like(z, memory_format=f),
            z.clone(memory_format=f),
            m.zeros_like(z, memory_format=f),
            z.to(m.float64, memory_format=f),
        ]
        return [t.stride() for t in made], z.is_contiguous(memory_format=f)

    both(fn)
