"""Note [libstdc++ orderings]: the order PyTorch's CPU kernels leave equivalent elements in.

PyTorch's CPU ``sort`` (``stable=False``, ``cpu/SortingKernel.cpp``) runs ``std::sort`` with a
comparison that puts NaN last (first when descending); its ``topk`` (``TopKImpl.h``) runs
``std::partial_sort`` (when ``k * 64 <= n``) or ``std::nth_element`` and then ``std::sort`` of
the first ``k - 1``, on ``(value, index)`` pairs compared by value only; its ``mode``
(``TensorCompareKernel.cpp``) runs ``std::sort`` with ``<`` and takes the last index of the
first longest run. None of these is stable, so which index comes first among equal values (and,
for ``topk(sorted=False)``, the order of the whole selection) is whatever libstdc++'s algorithms
leave: an introsort (median of three pivot, unguarded Hoare partition, heapsort past ``2 *
lg(n)`` levels, a final insertion sort of runs of 16), an introselect over the same partition,
and a heap select with ``__adjust_heap``'s hole-then-push sift.

This module copies those algorithms step for step (``bits/stl_algo.h``, ``bits/stl_heap.h``)
as ``lax`` loops over one row: ``values`` moves with ``index``, every comparison reads values
only, and the result is the row's permutation. The recursion of ``__introsort_loop`` becomes a
stack of ranges (they are disjoint, so the order they are sorted in does not matter; the stack
never holds more than ``2 * lg(n) + 1`` of them). The loops that C++ leaves unguarded (they rely
on a sentinel the pivot choice puts in place) keep a bound here too, so a row that is masked off
under ``vmap``, or a comparison that is no strict weak order (``<`` with NaNs), still ends. Rows
are independent: callers ``vmap`` these functions over a batch.
"""

from __future__ import annotations

import jax.numpy as jnp
from jax import lax

_THRESHOLD = 16  # libstdc++'s _S_threshold


def _lg(n: int) -> int:
    return n.bit_length() - 1


def _get(st, i):
    return st[0][i], st[1][i]


def _put(st, i, e):
    return st[0].at[i].set(e[0]), st[1].at[i].set(e[1])


def _swap(st, i, j):
    ei, ej = _get(st, i), _get(st, j)
    return _put(_put(st, i, ej), j, ei)


def _insert(st, less, i, floor, front):
    """Element ``i`` moves down while ``front`` holds or it is less than its left neighbour,
    no lower than ``floor`` (``__unguarded_linear_insert``; with ``front``, the move of
    ``__insertion_sort`` to the front)."""
    v = _get(st, i)

    def cond(c):
        st, j = c
        return (j > floor) & (front | less(v[0], st[0][j - 1]))

    def shift(c):
        st, j = c
        return _put(st, j, _get(st, j - 1)), j - 1

    st, j = lax.while_loop(cond, shift, (st, i))
    return _put(st, j, v)


def _insertion_sort(st, less, first, last):
    """``__insertion_sort(first, last)``: to the front when less than ``*first``, else an
    (here guarded) linear insert."""

    def insert(i, st):
        return _insert(st, less, i, first, less(st[0][i], st[0][first]))

    return lax.fori_loop(first + 1, jnp.maximum(last, first + 1), insert, st)


def _linear_inserts(st, less, start, last, floor):
    """``__unguarded_insertion_sort(start, last)`` (bounded below by ``floor``)."""
    return lax.fori_loop(start, last, lambda i, st: _insert(st, less, i, floor, False), st)


def _partition_pivot(st, less, first, last):
    """``__unguarded_partition_pivot``: the median of ``first + 1``, the middle and ``last - 1``
    moves to ``first``, then the Hoare partition of ``[first + 1, last)`` around it; returns
    ``(st, cut)``."""
    mid = first + (last - first) // 2
    a, b, c = first + 1, mid, last - 1
    va, vb, vc = st[0][a], st[0][b], st[0][c]
    ab, bc, ac = less(va, vb), less(vb, vc), less(va, vc)
    pick = jnp.where(
        ab,
        jnp.where(bc, b, jnp.where(ac, c, a)),
        jnp.where(ac, a, jnp.where(bc, c, b)),
    )
    st = _swap(st, first, pick)
    pivot = st[0][first]

    def step(c):
        st, lo, hi, _ = c
        lo = lax.while_loop(lambda i: (i < last - 1) & less(st[0][i], pivot), lambda i: i + 1, lo)
        hi = lax.while_loop(lambda j: (j > first) & less(pivot, st[0][j]), lambda j: j - 1, hi - 1)
        done = lo >= hi
        st = lax.cond(done, lambda s: s, lambda s: _swap(s, lo, hi), st)
        return st, jnp.where(done, lo, lo + 1), hi, done

    st, cut, _, _ = lax.while_loop(lambda c: ~c[3], step, (st, first + 1, last, jnp.bool_(False)))
    return st, cut


def _adjust_heap(st, less, base, hole, length, value):
    """``__adjust_heap``: the hole sifts down to a leaf by the larger child, then ``value`` is
    pushed up from there (``__push_heap``) no higher than where the hole started."""
    top = hole

    def down_cond(c):
        return c[2] < (length - 1) // 2

    def down(c):
        st, hole, child = c
        child = 2 * (child + 1)
        child = jnp.where(less(st[0][base + child], st[0][base + child - 1]), child - 1, child)
        return _put(st, base + hole, _get(st, base + child)), child, child

    st, hole, child = lax.while_loop(down_cond, down, (st, hole, hole))
    last_one = ((length & 1) == 0) & (child == (length - 2) // 2)
    child2 = 2 * (child + 1)
    st = lax.cond(
        last_one, lambda s: _put(s, base + hole, _get(s, base + child2 - 1)), lambda s: s, st
    )
    hole = jnp.where(last_one, child2 - 1, hole)

    def up_cond(c):
        st, hole = c
        parent = (hole - 1) // 2
        return (hole > top) & less(st[0][base + parent], value[0])

    def up(c):
        st, hole = c
        parent = (hole - 1) // 2
        return _put(st, base + hole, _get(st, base + parent)), parent

    st, hole = lax.while_loop(up_cond, up, (st, hole))
    return _put(st, base + hole, value)


def _pop_heap(st, less, first, last, result):
    """``__pop_heap(first, last, result)``: ``*result`` takes the top; its value sifts in."""
    value = _get(st, result)
    st = _put(st, result, _get(st, first))
    return _adjust_heap(st, less, first, 0, last - first, value)


def _make_heap(st, less, first, last):
    length = last - first

    def body(i, st):
        parent = (length - 2) // 2 - i
        return _adjust_heap(st, less, first, parent, length, _get(st, first + parent))

    count = jnp.where(length < 2, 0, (length - 2) // 2 + 1)
    return lax.fori_loop(0, count, body, st)


def _heap_select(st, less, first, middle, last):
    """``__heap_select``: a heap of ``[first, middle)``; each later element less than its top
    replaces it."""
    st = _make_heap(st, less, first, middle)

    def body(i, st):
        take = less(st[0][i], st[0][first])
        return lax.cond(take, lambda s: _pop_heap(s, less, first, middle, i), lambda s: s, st)

    return lax.fori_loop(middle, last, body, st)


def _sort_heap(st, less, first, last):
    def body(i, st):
        end = last - 1 - i
        return _pop_heap(st, less, first, end, end)

    return lax.fori_loop(0, jnp.maximum(last - first - 1, 0), body, st)


def _partial_sort(st, less, first, middle, last):
    return _sort_heap(_heap_select(st, less, first, middle, last), less, first, middle)


def std_sort(values, index, less, length: int):
    """``std::sort(first, first + length)`` of the row (``length`` static); returns the
    permuted ``(values, index)``."""
    st = (values, index)
    if length < 2:
        return st
    size = 2 * _lg(length) + 2
    stack = (
        jnp.zeros((size, 3), jnp.int32)
        .at[0]
        .set(jnp.array([0, length, 2 * _lg(length)], jnp.int32))
    )

    def outer(c):
        st, stack, top = c
        first, last, depth = stack[top - 1, 0], stack[top - 1, 1], stack[top - 1, 2]
        top = top - 1

        def inner_cond(c):
            return (c[2] - c[1] > _THRESHOLD) & ~c[6]

        def inner(c):
            st, first, last, depth, stack, top, _ = c

            def heapsort(args):
                st, stack, top = args
                return _partial_sort(st, less, first, last, last), last, stack, top, True

            def split(args):
                st, stack, top = args
                st, cut = _partition_pivot(st, less, first, last)
                stack = stack.at[top].set(jnp.stack([cut, last, depth - 1]))
                return st, cut, stack, top + 1, False

            st, last, stack, top, done = lax.cond(depth == 0, heapsort, split, (st, stack, top))
            return st, first, last, depth - 1, stack, top, jnp.bool_(done)

        init = (st, first, last, depth, stack, top, jnp.bool_(False))
        st, _, _, _, stack, top, _ = lax.while_loop(inner_cond, inner, init)
        return st, stack, top

    st, _, _ = lax.while_loop(lambda c: c[2] > 0, outer, (st, stack, jnp.int32(1)))
    # __final_insertion_sort
    if length > _THRESHOLD:
        st = _insertion_sort(st, less, 0, _THRESHOLD)
        return _linear_inserts(st, less, _THRESHOLD, length, 0)
    return _insertion_sort(st, less, 0, length)


def nth_element(values, index, less, nth: int):
    """``std::nth_element(first, first + nth, last)`` of the row (``nth`` static)."""
    n = values.shape[0]
    st = (values, index)
    if nth >= n or n == 0:
        return st

    def cond(c):
        return (c[2] - c[1] > 3) & ~c[4]

    def body(c):
        st, first, last, depth, _ = c

        def select(st):
            st = _heap_select(st, less, first, nth + 1, last)
            return _swap(st, first, nth), first, last, True

        def split(st):
            st, cut = _partition_pivot(st, less, first, last)
            return st, jnp.where(cut <= nth, cut, first), jnp.where(cut <= nth, last, cut), False

        st, first, last, done = lax.cond(depth == 0, select, split, st)
        return st, first, last, depth - 1, jnp.bool_(done)

    init = (st, jnp.int32(0), jnp.int32(n), jnp.int32(2 * _lg(n)), jnp.bool_(False))
    st, first, last, _, done = lax.while_loop(cond, body, init)
    return lax.cond(done, lambda s: s, lambda s: _insertion_sort(s, less, first, last), st)


def partial_sort(values, index, less, middle: int):
    """``std::partial_sort(first, first + middle, last)`` of the row (``middle`` static)."""
    n = values.shape[0]
    return _partial_sort((values, index), less, 0, middle, n)


def nan_first_greater(x, y):
    """``topk(largest=True)``'s comparison: NaN above everything, then ``>``."""
    if jnp.issubdtype(x.dtype, jnp.inexact):
        return (jnp.isnan(x) & ~jnp.isnan(y)) | (x > y)
    return x > y


def nan_last_less(x, y):
    """``topk(largest=False)``'s comparison: ``<``, NaN after everything."""
    if jnp.issubdtype(x.dtype, jnp.inexact):
        return (~jnp.isnan(x) & jnp.isnan(y)) | (x < y)
    return x < y


def plain_less(x, y):
    """``<`` (``mode``'s comparison: false for any NaN)."""
    return x < y


def topk_row(values, k: int, largest: bool, sorted: bool):  # noqa: A002
    """PyTorch's CPU ``topk_impl_loop`` on one row: the ``k`` positions it returns, in order."""
    n = values.shape[0]
    index = jnp.arange(n, dtype=jnp.int64)
    if k == 0:
        return index[:0]
    less = nan_first_greater if largest else nan_last_less
    if k * 64 <= n:
        return partial_sort(values, index, less, k)[1][:k]
    values, index = nth_element(values, index, less, k - 1)
    if sorted:
        values, index = std_sort(values, index, less, k - 1)
    return index[:k]


def sort_row(values, less=plain_less):
    """``std::sort`` of the whole row: ``(values, original positions)`` in the order left."""
    index = jnp.arange(values.shape[0], dtype=jnp.int64)
    return std_sort(values, index, less, values.shape[0])


__all__ = ["topk_row", "sort_row", "std_sort", "nth_element", "partial_sort"]
