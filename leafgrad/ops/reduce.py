"""PyTorch-exact sums and means for JAX: the CPU summation order of PyTorch 2.13, add for add.

``torch_sum(x, axis, keepdims)`` returns, for float32 and float64 (and complex64/128, summed
componentwise), the same bits as ``torch.sum(x, dim=axis, keepdim=keepdims)`` on PyTorch's CPU
build, for a contiguous ``x`` of any shape and any choice of axes; ``torch_mean`` divides that sum
by the count, as PyTorch does. Integer and bool sums are exact in any order, so they use
``jnp.sum``; float16/bfloat16 fall back to ``jnp.sum`` (see the end of this docstring).

Note [Cascade sum order]: PyTorch sums floats with ``cascade_sum`` (aten/src/ATen/native/cpu/
SumKernel.cpp) in the element type (the accumulator of float is float). Four kernels exist:

- ``multi_row_sum`` (here ``_cascade``): running sums of ``S = 2**max(4, CeilLog2(m) // 4)``
  consecutive terms; every ``S`` such chunk sums are summed into level 1, every ``S`` level-1 sums
  into level 2, and level 3 takes everything above; at the end ``tail + l1 + l2 + l3``.
- ``row_sum`` (``_row_sum``): terms ``4i + k`` are four interleaved cascades (ILP factor 4), the
  ``m % 4`` leftovers go onto the first, then ``p0 + p1 + p2 + p3``.
- ``vectorized_inner_sum`` (``_inner_sum``): a contiguous row is cut into vectors of ``L`` lanes;
  ``row_sum`` runs over the vectors, lane by lane; then ``0 + leftover elements + lane 0 + ... +
  lane L-1``. ``L`` is the AVX2 width (8 float, 4 double, 4 complex64, 2 complex128) even on
  AVX512 machines, because the kernel is registered without an AVX512 variant.
- ``vectorized_outer_sum`` / ``scalar_outer_sum``: when the reduced axis is not the contiguous
  one, columns are summed side by side: whole blocks of ``4L`` columns (of 4 columns when a call
  has fewer than ``L``) with ``multi_row_sum`` (no ILP), the remaining columns with ``row_sum``.

Which kernel runs, and on which pieces, is decided by TensorIterator: size-1 dims vanish, reduced
dims are moved first (innermost), neighbouring dims that are contiguous in both operands merge,
and the kernel is called on 2-D slices ``(dim0, dim1)``, each call adding its results into the
output (``out += ...``, starting from a zero fill, which also turns ``-0.0`` into ``+0.0``).
When several reduced groups do not merge, the per-row sums of ``dim0`` are accumulated in
iteration order (``_exact_sum``).

Note [Threads]: with at least ``GRAIN_SIZE`` (32768) elements and more than one thread,
``parallel_reduce`` splits the work. A full reduction is cut into ``nt = min(T, ceil(n / 32768))``
equal ranges (``parallel_for``'s OpenMP chunking; exactly 32768 elements stay one range), each
summed on its own into a buffer of ``T`` zeros, and the buffer is then summed like any array. A
partial reduction splits one kept dimension; that changes the order only for an outer reduction
whose split dimension is the contiguous one (the column blocks restart at every thread's range,
rounded down to 128 bytes). ``T`` is PyTorch's intra-op thread count: ``MKL_NUM_THREADS``, else
``OMP_NUM_THREADS``, else the number of physical cores, as ``at::intraop_default_num_threads``
computes it; ``set_num_threads`` mirrors ``torch.set_num_threads``. It is read when a function is
traced, so pass ``num_threads`` explicitly to functions that are jitted once and kept.

Not bit-exact: float16/bfloat16 sums (``jnp.sum`` in float32, then rounded); forward-mode
tangents of the sum (``jnp.sum`` of the tangents). Reverse mode is exact: the VJP of a sum is a
broadcast and the VJP of a mean divides by ``n``, as PyTorch's ``SumBackward``/``MeanBackward``
do.
"""

from __future__ import annotations

import functools
import glob
import math
import operator
import os

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

__all__ = [
    "GRAIN_SIZE",
    "torch_sum",
    "torch_mean",
    "torch_prod",
    "torch_cumsum",
    "torch_cumprod",
    "torch_var_stats",
    "get_num_threads",
    "set_num_threads",
]

GRAIN_SIZE = 32768  # at::internal::GRAIN_SIZE: below it a reduction runs on one thread
_VEC_BYTES = 32  # AVX2: sum_stub has no AVX512 registration, so AVX512 CPUs run the AVX2 build
_NUM_LEVELS = 4  # multi_row_sum's levels
_ILP = 4  # row_sum's interleaved accumulators; also the column block of the outer kernels
_UNROLL = 64  # sequential folds longer than this run as a loop instead of unrolled adds

_num_threads: int | None = None


# --- thread count --------------------------------------------------------------------------------


def _env_threads(name: str, default: int) -> int:
    try:
        n = int(os.environ.get(name, ""))
    except ValueError:
        return default
    return n if n > 0 else default


def _physical_cores() -> int:
    # cpuinfo's core count (what TaskThreadPoolBase::defaultNumThreads returns): SMT siblings of
    # one core count once.
    cores = set()
    for topo in glob.glob("/sys/devices/system/cpu/cpu[0-9]*/topology"):
        try:
            with open(os.path.join(topo, "physical_package_id")) as f:
                package = f.read().strip()
            with open(os.path.join(topo, "core_id")) as f:
                core = f.read().strip()
        except OSError:
            continue
        cores.add((package, core))
    return len(cores) or os.cpu_count() or 1


def get_num_threads() -> int:
    """The intra-op thread count PyTorch would use here (``torch.get_num_threads()``)."""
    global _num_threads
    if _num_threads is None:
        # MKL_NUM_THREADS overrides OMP_NUM_THREADS, as in at::intraop_default_num_threads.
        n = _env_threads("MKL_NUM_THREADS", _env_threads("OMP_NUM_THREADS", 0))
        _num_threads = n or _physical_cores()
    return _num_threads


def set_num_threads(n: int) -> None:
    """Sum as PyTorch does after ``torch.set_num_threads(n)`` (affects functions traced later)."""
    global _num_threads
    if int(n) <= 0:
        raise ValueError("Expected positive number of threads")
    _num_threads = int(n)


# --- the kernels: each sums axis 1 of an array shaped (batch, m, *rest) -----------------------
# An empty sum is None, so that no "0 +" is ever emitted; the one place where PyTorch's leading
# zero matters (it turns -0.0 into +0.0) is handled once, on the result.


def _fold(terms, op=operator.add):
    """Left-to-right sum (or ``op``) of the non-None terms, or None."""
    acc = None
    for t in terms:
        if t is not None:
            acc = t if acc is None else op(acc, t)
    return acc


def _seq(y, axis: int, op=operator.add):
    """Running sum (or ``op``) along ``axis`` in index order, vectorised over the other axes."""
    m = y.shape[axis]
    if m == 0:
        return None
    if m <= _UNROLL:
        return _fold((lax.index_in_dim(y, k, axis, keepdims=False) for k in range(m)), op)
    ys = jnp.moveaxis(y, axis, 0)
    return lax.fori_loop(1, m, lambda k, acc: op(acc, ys[k]), ys[0], unroll=8)


def _ceil_log2(x: int) -> int:
    return 1 if x <= 2 else (x - 1).bit_length()  # c10's CeilLog2


def _cascade(y):
    """multi_row_sum: chunked running sums on four levels (Note [Cascade sum order])."""
    b, m, rest = y.shape[0], y.shape[1], y.shape[2:]
    s = 1 << max(4, _ceil_log2(m) // _NUM_LEVELS)
    full = m // s
    tail = _seq(y[:, full * s :], 1)
    if full == 0:
        return tail
    chunks = _seq(y[:, : full * s].reshape(b, full, s, *rest), 2)
    levels = [chunks]
    for _ in range(_NUM_LEVELS - 2):  # levels 1 and 2 flush into the next level every s terms
        last = levels[-1]
        groups = last.shape[1] // s
        levels[-1] = last[:, groups * s :]  # the unflushed remainder stays on this level
        if groups == 0:
            break
        levels.append(_seq(last[:, : groups * s].reshape(b, groups, s, *rest), 2))
    # levels[k] now holds the terms still sitting on level k+1; level 3 never flushes.
    return _fold([tail] + [_seq(level, 1) for level in levels])


def _row_sum(y):
    """row_sum: four interleaved cascades (terms 4i+k), leftovers onto the first."""
    b, m, rest = y.shape[0], y.shape[1], y.shape[2:]
    q = m // _ILP
    parts = [None] * _ILP
    if q:
        acc = _cascade(y[:, : q * _ILP].reshape(b, q, _ILP, *rest))
        parts = [acc[:, k] for k in range(_ILP)]
    first = _fold([parts[0]] + [y[:, i] for i in range(q * _ILP, m)])
    return _fold([first] + parts[1:])


def _inner_sum(x, lanes: int):
    """Sum of each contiguous row of ``x`` (batch, n): vectorized_inner_sum, or scalar row_sum."""
    b, n = x.shape
    if n < lanes:
        return _row_sum(x)
    v = n // lanes
    acc = _row_sum(x[:, : v * lanes].reshape(b, v, lanes))
    return _fold([x[:, k] for k in range(v * lanes, n)] + [acc[:, k] for k in range(lanes)])


def _outer_sum(x, lanes: int, ranges):
    """Sums over axis 1 of (a, m, cols), contiguous over cols, one kernel call per column range."""
    pieces = []
    for begin, end in ranges:
        width = end - begin
        block = _ILP * lanes if width >= lanes else _ILP  # vectorized vs scalar outer kernel
        split = begin + width // block * block
        if split > begin:
            pieces.append(_cascade(x[:, :, begin:split]))
        if end > split:
            pieces.append(_row_sum(x[:, :, split:end]))
    return pieces[0] if len(pieces) == 1 else jnp.concatenate(pieces, axis=-1)


# --- TensorIterator and parallel_reduce ---------------------------------------------------------


def _chunks(n: int, threads: int, grain: int) -> list[tuple[int, int]]:
    """at::parallel_for's ranges over [0, n) (OpenMP backend)."""
    if n <= grain or n <= 1 or threads <= 1:  # parallel_for runs f(0, n) on the caller
        return [(0, n)]
    nt = min(threads, -(-n // grain))
    size = -(-n // nt)
    return [(t * size, min(n, (t + 1) * size)) for t in range(nt) if t * size < n]


def _full_sum(x, lanes: int, threads: int):
    """Sum of a 1-D array: one kernel call, or two_pass_reduction across threads."""
    n = x.shape[0]
    if n < GRAIN_SIZE or threads == 1:
        return _inner_sum(x[None], lanes)[0]
    ranges = _chunks(n, threads, GRAIN_SIZE)
    size = ranges[0][1]
    whole = n // size  # ranges of the full length, summed together as a batch
    parts = [_inner_sum(x[: whole * size].reshape(whole, size), lanes)]
    if whole * size < n:
        parts.append(_inner_sum(x[None, whole * size :], lanes))
    # Each thread's sum lands in its slot of a buffer of zeros, which is then summed.
    buffer = jnp.concatenate(parts + [jnp.zeros(threads - len(ranges), x.dtype)])
    return _inner_sum(buffer[None], lanes)[0]


def _groups(shape, axes) -> list[tuple[int, bool]]:
    """(size, reduced) of the dims TensorIterator keeps: size-1 dims vanish, runs merge."""
    groups: list[list] = []
    for d, size in enumerate(shape):
        if size == 1:
            continue
        red = d in axes
        if groups and groups[-1][1] == red:
            groups[-1][0] *= size
        else:
            groups.append([size, red])
    return [(s, r) for s, r in groups]


def _pieces(shape, axes):
    """``_groups``, the indices of the reduced ones, and the count of kept elements."""
    groups = _groups(shape, axes)
    reduced = [i for i, (_, r) in enumerate(groups) if r]
    return groups, reduced, math.prod(s for s, r in groups if not r)


def _outer_ranges(cols: int, outer: int, numel: int, threads: int, itemsize: int):
    """Column ranges of the kernel calls in an outer reduction (Note [Threads])."""
    if numel < GRAIN_SIZE or threads == 1:
        return [(0, cols)]
    # find_split_dim: the outermost kept dim with at least `threads` entries, else the largest.
    dims = [cols] + ([outer] if outer > 1 else [])
    best = len(dims) - 1
    for d in range(len(dims) - 1, -1, -1):
        if dims[d] >= threads:
            best = d
            break
        if dims[d] > dims[best]:
            best = d
    if best != 0:
        return [(0, cols)]  # rows are split among threads: every call still sees all columns
    per = 128 // itemsize  # columns are contiguous, so ranges are rounded down to 128 bytes
    ranges = []
    for begin, end in _chunks(cols, threads, 1):
        begin -= begin % per
        if end != cols:
            end -= end % per
        if begin < end:
            ranges.append((begin, end))
    return ranges


def _exact_sum(x, axes: tuple[int, ...], threads: int, itemsize: int):
    """PyTorch's float sum of a real array over ``axes``, shaped as the kept dims (flattened).

    ``itemsize`` is the element size of the tensor PyTorch sums: it sets the vector lane count
    and the 128-byte rounding of thread ranges (for the parts of a complex array, the complex
    element size).
    """
    lanes = _VEC_BYTES // itemsize
    groups, reduced, kept = _pieces(x.shape, axes)
    if not reduced:
        # Nothing left to reduce: cascade_sum's "not a true reduction" loop, out = 0 + x.
        return x.reshape(kept)
    if len(reduced) == 1:
        i = reduced[0]
        before = math.prod(s for s, _ in groups[:i])
        n = groups[i][0]
        after = math.prod(s for s, _ in groups[i + 1 :])
        if after == 1:  # the reduced dims are the contiguous ones
            if before == 1:
                return _full_sum(x.reshape(n), lanes, threads)[None]
            return _inner_sum(x.reshape(before, n), lanes)
        ranges = _outer_ranges(after, before, x.size, threads, itemsize)
        return _outer_sum(x.reshape(before, n, after), lanes, ranges).reshape(kept)
    # Several reduced groups that do not merge: each kernel call sums rows of the innermost
    # reduced group and adds them into the output one after another, in memory order (a kept
    # dim always sits between two reduced groups, so the thread split never cuts a row).
    sizes = [s for s, _ in groups]
    order = [i for i, (_, r) in enumerate(groups) if not r] + reduced
    n0 = groups[reduced[-1]][0]
    rows = jnp.transpose(x.reshape(sizes), order).reshape(-1, n0)
    if reduced[-1] == len(groups) - 1:
        sums = _inner_sum(rows, lanes)
    else:
        sums = _row_sum(rows)  # strided rows: scalar_inner_sum
    return _seq(sums.reshape(kept, -1), 1)


# --- products ------------------------------------------------------------------------------------
#
# Note [Product order]: PyTorch's CPU prod is binary_kernel_reduce_vec (aten/src/ATen/native/cpu/
# Reduce.h) over the same TensorIterator pieces as the sum, with an output filled with 1. Only a
# contiguous row of at least ``4L`` elements is vectorised (``L`` the AVX2 lane count again:
# prod_stub has no AVX512 registration either): ``count = n // 4L`` chunks of ``4L`` multiply
# lane-wise into four vectors, which combine as ``(a0 * a1) * (a2 * a3)``, whose lanes multiply
# in order into the output; the row's remaining elements then multiply into the output one by
# one. Every other piece (strided rows, outer reductions, short rows) is a running product in
# memory order. A full reduction across threads multiplies each thread's range into its slot of
# a buffer of ones, then reduces the buffer like any array (Note [Threads]). Each output is thus
# a running product of "terms": per row, the vector part's product (if any), then the rest.


def _product(y, axis: int):
    """Running product along ``axis`` in index order (PyTorch's leading 1 changes no bits)."""
    return _seq(y, axis, operator.mul)


def _product_terms(rows, lanes: int, contiguous: bool):
    """The terms each row (..., n) multiplies into its output, in order, shaped (..., k)."""
    n = rows.shape[-1]
    block = 4 * lanes
    if not contiguous or n < block:
        return rows
    count = n // block
    acc = _product(rows[..., : count * block].reshape(*rows.shape[:-1], count, 4, lanes), -3)
    vec = (acc[..., 0, :] * acc[..., 1, :]) * (acc[..., 2, :] * acc[..., 3, :])
    return jnp.concatenate([_product(vec, -1)[..., None], rows[..., count * block :]], -1)


def _full_product(x, lanes: int, threads: int):
    """Product of a 1-D array: one kernel call, or two_pass_reduction across threads."""
    n = x.shape[0]
    if n < GRAIN_SIZE or threads == 1:
        return _product(_product_terms(x, lanes, True), -1)
    ranges = _chunks(n, threads, GRAIN_SIZE)
    parts = [_product(_product_terms(x[b:e], lanes, True), -1)[None] for b, e in ranges]
    buffer = jnp.concatenate(parts + [jnp.ones(threads - len(ranges), x.dtype)])
    return _product(_product_terms(buffer, lanes, True), -1)


def _exact_product(x, axes: tuple[int, ...], threads: int):
    """PyTorch's float product of a real array over ``axes``, as the kept dims (flattened)."""
    lanes = _VEC_BYTES // x.dtype.itemsize
    groups, reduced, kept = _pieces(x.shape, axes)
    if not reduced:
        return x.reshape(kept)
    if len(groups) == 1:
        return _full_product(x.reshape(-1), lanes, threads)[None]
    sizes = [s for s, _ in groups]
    order = [i for i, (_, r) in enumerate(groups) if not r] + reduced
    n0 = groups[reduced[-1]][0]
    rows = jnp.transpose(x.reshape(sizes), order).reshape(kept, -1, n0)
    terms = _product_terms(rows, lanes, reduced[-1] == len(groups) - 1)
    return _product(terms.reshape(kept, -1), -1)


def torch_prod(x: jax.Array, axis, keepdims: bool, num_threads: int | None = None) -> jax.Array:
    """``torch.prod`` of a contiguous ``x`` over ``axis`` with PyTorch's CPU rounding for float32
    and float64 (Note [Product order]); other dtypes use ``jnp.prod`` (exact for integers)."""
    x = jnp.asarray(x)
    axes = _normalize_axes(axis, x.ndim)
    if x.dtype not in (jnp.float32, jnp.float64) or x.size == 0:
        return jnp.prod(x, axis=axes, keepdims=keepdims)
    threads = get_num_threads() if num_threads is None else int(num_threads)
    return _exact_product(x, axes, threads).reshape(_out_shape(x.shape, axes, keepdims))


# --- variances ------------------------------------------------------------------------------------
#
# Note [Variance order]: PyTorch's CPU var and std of float32/float64 work in float64 and round
# once at the end. A single output (a full reduction: std_var_all_cpu) takes the two-pass route:
# ``mean = self.mean()`` (the element type's mean, as a double), then ``(x - mean)**2`` summed
# one element after another per thread range (parallel_reduce: ranges summed in order onto 0).
# Every other output, and var_mean/std_mean always, is Welford's running update in float64 over
# the output's elements in memory order: ``delta = x - mean; mean += delta / n; m2 += delta *
# (x - mean)``, without a fused multiply-add (here each product is added a step later, so that
# LLVM cannot fuse it); a single output of at least GRAIN_SIZE elements is cut into thread
# ranges whose states combine in order (WelfordOps::combine). The result is ``m2 / (n -
# correction)`` (0 when negative), its square root for std, rounded to the element type; the
# mean is Welford's, rounded.


def _sequential_sum(y):
    """Running sum of the rows of ``y`` (k, m) in order, from 0.0."""
    ys = lax.optimization_barrier(jnp.moveaxis(y, -1, 0))
    return lax.fori_loop(
        0, ys.shape[0], lambda i, acc: acc + ys[i], jnp.zeros(ys.shape[1:], y.dtype)
    )


def _welford(y):
    """Welford's (count, mean, m2) of the rows of ``y`` (k, m), in float64, element by element."""
    ys = jnp.moveaxis(y, -1, 0)

    def step(i, state):
        # Each step's product is added in the next one: a loop-carried value, which LLVM cannot
        # fuse into the addition as it would a product of the same step.
        n, mean, m2, product = state
        n = n + 1  # a carried vector: a division by it stays a division
        x = ys[i]
        delta = x - mean
        mean = mean + delta / n
        return n, mean, m2 + product, delta * (x - mean)

    zeros = jnp.zeros(ys.shape[1:], y.dtype)
    n, mean, m2, product = lax.fori_loop(0, ys.shape[0], step, (zeros, zeros, zeros, zeros))
    return n, mean, m2 + product


def _welford_combine(a, b):
    na, ma, sa = a
    nb, mb, sb = b
    delta = mb - ma
    n = na + nb
    ratio = nb / n
    mean = ma + lax.optimization_barrier(delta * ratio)
    m2 = (sa + sb) + lax.optimization_barrier(delta * delta * na * ratio)
    return n, mean, m2


def _full_welford(flat, threads: int):
    n = flat.shape[0]
    if n < GRAIN_SIZE or threads == 1:
        return [p[0] for p in _welford(flat[None])]
    state = None
    for b, e in _chunks(n, threads, GRAIN_SIZE):  # idle threads' states are empty: no change
        part = [p[0] for p in _welford(flat[None, b:e])]
        state = part if state is None else _welford_combine(state, part)
    return state


def torch_var_stats(x, axes, correction: float, keepdims: bool, sqrt: bool, welford: bool):
    """``torch.var``/``torch.std`` (``sqrt``) of a float32/float64 ``x`` over ``axes`` (a
    sorted tuple), and Welford's mean, with PyTorch's CPU rounding (Note [Variance order]).
    ``welford`` takes var_mean's route also for a single output."""
    threads = get_num_threads()
    f64 = x.astype(jnp.float64)
    out_shape = _out_shape(x.shape, axes, keepdims)
    n = math.prod(x.shape[a] for a in axes)
    divisor = max(0.0, n - correction)
    kept = [d for d in range(x.ndim) if d not in axes]
    if math.prod(x.shape[d] for d in kept) == 1 and not welford:
        mean = torch_mean(x, None, False).astype(jnp.float64)
        d = f64.reshape(-1) - mean
        sq = lax.optimization_barrier(d * d)
        total = jnp.zeros((), jnp.float64)
        ranges = _chunks(sq.shape[0], threads, GRAIN_SIZE)
        for b, e in ranges:
            total = total + _sequential_sum(sq[None, b:e])[0]
        m2 = total
    else:
        rows = jnp.transpose(f64, (*kept, *axes)).reshape(-1, n)
        if rows.shape[0] == 1:
            _, mean, m2 = _full_welford(rows[0], threads)
        else:
            _, mean, m2 = _welford(rows)
    # Both routes start from +0.0, so neither m2 nor the mean is ever -0.0 (XLA drops the
    # leading ``0 +`` of a loop it unrolled)
    m2, mean = _positive_zero(m2), _positive_zero(jnp.asarray(mean))
    var = m2 / lax.optimization_barrier(jnp.full(jnp.shape(m2), divisor, jnp.float64))
    if sqrt:
        var = jnp.sqrt(var)
    return var.astype(x.dtype).reshape(out_shape), mean.astype(x.dtype).reshape(out_shape)


# --- scans ---------------------------------------------------------------------------------------
#
# Note [Scan order]: PyTorch's CPU cumsum and cumprod (cpu_cum_base_kernel) run along the dim
# one element after another in ``acc_type<T, false>``, starting from 0 (so a leading -0.0 sums
# to +0.0) or 1, and round each running value to the element type: float32 accumulates in
# float64, float16 and bfloat16 in float32, complex64 in complex128. A ``lax.scan`` in that
# type is the same sequence of roundings; its transpose is the reversed running sum PyTorch's
# cumsum_backward takes (``grad.flip(dim).cumsum(dim).flip(dim)``, accumulated the same way).
_SCAN_ACC = {
    jnp.dtype(jnp.float16): jnp.float32,
    jnp.dtype(jnp.bfloat16): jnp.float32,
    jnp.dtype(jnp.float32): jnp.float64,
    jnp.dtype(jnp.complex64): jnp.complex128,
}


def _scan(x, axis: int, op, start):
    acc = _SCAN_ACC.get(x.dtype, x.dtype)
    # The loop stays a loop (unroll=1): XLA fuses an unrolled one with the operations around
    # it, and LLVM then contracts a product that feeds the running sum (often the cotangent of
    # the transpose) into a fused multiply-add. Barriers alone do not prevent that fusion.
    ys = lax.optimization_barrier(jnp.moveaxis(x, axis, 0).astype(acc))

    def step(carry, y):
        carry = op(carry, y)
        return carry, carry

    init = jnp.full(ys.shape[1:], start, acc)
    _, out = lax.scan(step, init, ys, unroll=1)
    return jnp.moveaxis(lax.optimization_barrier(out).astype(x.dtype), 0, axis)


def torch_cumsum(x: jax.Array, axis: int) -> jax.Array:
    """``torch.cumsum`` along ``axis`` with PyTorch's CPU rounding (Note [Scan order])."""
    x = jnp.asarray(x)
    if not jnp.issubdtype(x.dtype, jnp.inexact) or x.size == 0:
        return jnp.cumsum(x, axis=axis)
    return _scan(x, axis, operator.add, 0)


def torch_cumprod(x: jax.Array, axis: int) -> jax.Array:
    """``torch.cumprod`` along ``axis``, real floats with PyTorch's CPU rounding (Note [Scan
    order]); complex products use ``jnp.cumprod``."""
    x = jnp.asarray(x)
    if not jnp.issubdtype(x.dtype, jnp.floating) or x.size == 0:
        return jnp.cumprod(x, axis=axis)
    return _scan(x, axis, operator.mul, 1)


def _normalize_axes(axis, ndim: int) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (int, np.integer)):
        axis = (axis,)
    axis = tuple(int(a) for a in axis)
    if not axis:  # PyTorch: an empty dim list reduces every dim
        return tuple(range(ndim))
    span = max(ndim, 1)  # a 0-d tensor accepts dim 0 and -1
    out = []
    for a in axis:
        if not -span <= a < span:
            raise ValueError(f"axis {a} is out of range for an array of {ndim} dims")
        a %= span
        if a in out:
            raise ValueError(f"axis {a} appears multiple times")
        out.append(a)
    return tuple(sorted(out)) if ndim else ()


def _out_shape(shape, axes, keepdims: bool) -> tuple[int, ...]:
    if keepdims:
        return tuple(1 if d in axes else s for d, s in enumerate(shape))
    return tuple(s for d, s in enumerate(shape) if d not in axes)


def _positive_zero(r):
    # PyTorch fills the output with +0 and adds into it, so a sum is never -0.0.
    return jnp.where(r == 0, jnp.zeros_like(r), r)


def _sum_primal(x, axes, keepdims, threads):
    shape = _out_shape(x.shape, axes, keepdims)
    if x.size == 0:
        return jnp.zeros(shape, x.dtype)
    itemsize = x.dtype.itemsize
    if jnp.issubdtype(x.dtype, jnp.complexfloating):
        # Complex vectors add componentwise: each part is a real sum with the complex layout.
        re, im = (_positive_zero(_exact_sum(p, axes, threads, itemsize)) for p in (x.real, x.imag))
        return lax.complex(re, im).reshape(shape)
    return _positive_zero(_exact_sum(x, axes, threads, itemsize)).reshape(shape)


@functools.partial(jax.custom_jvp, nondiff_argnums=(1, 2, 3))
def _float_sum(x, axes, keepdims, threads):
    return _sum_primal(x, axes, keepdims, threads)


@_float_sum.defjvp
def _float_sum_jvp(axes, keepdims, threads, primals, tangents):
    (x,), (t,) = primals, tangents
    # jnp.sum is linear and transposes to a broadcast: reverse mode then gives every element the
    # cotangent unchanged, exactly PyTorch's SumBackward (grad.expand(...)).
    return _float_sum(x, axes, keepdims, threads), jnp.sum(t, axis=axes, keepdims=keepdims)


def torch_sum(
    x: jax.Array,
    axis: tuple[int, ...] | int | None,
    keepdims: bool,
    num_threads: int | None = None,
) -> jax.Array:
    """``torch.sum(x, dim=axis, keepdim=keepdims)`` with PyTorch's CPU rounding, bit for bit.

    ``axis`` None or ``()`` reduces every dim (PyTorch's rule for an empty dim list). The result
    has ``x``'s dtype (integer callers cast first, as PyTorch sums ints in int64). ``num_threads``
    defaults to ``get_num_threads()`` at trace time. Pure and jit-traceable with static ``axis``,
    ``keepdims`` and ``num_threads``; for example::

        >>> float(torch_sum(jnp.arange(15, dtype=jnp.float32) / 7, None, False))
        15.0
    """
    x = jnp.asarray(x)
    axes = _normalize_axes(axis, x.ndim)
    threads = get_num_threads() if num_threads is None else int(num_threads)
    dtype = x.dtype
    if dtype == jnp.bool_:
        return jnp.any(x, axis=axes, keepdims=keepdims)  # bool + bool saturates at True
    if jnp.issubdtype(dtype, jnp.integer):
        return jnp.sum(x, axis=axes, keepdims=keepdims, dtype=dtype)  # exact in any order
    if dtype in (jnp.float16, jnp.bfloat16):
        # Not emulated: PyTorch accumulates these in float with its own load/store policies.
        return jnp.sum(x, axis=axes, keepdims=keepdims, dtype=jnp.float32).astype(dtype)
    return _float_sum(x, axes, bool(keepdims), threads)


def host_sum(x: np.ndarray, axis: int) -> np.ndarray:
    """``torch_sum(x, axis, keepdims=True)`` of a float host array, as a host array: the sum a
    random op's draw takes on host values, also while a vmap traces (the rounding is
    ``_float_sum``'s, without its ``custom_jvp``, which a vmap's trace would take up)."""
    axes = _normalize_axes(axis, x.ndim)
    return np.asarray(_sum_primal(jnp.asarray(x), axes, True, get_num_threads()))


def torch_mean(
    x: jax.Array,
    axis: tuple[int, ...] | int | None,
    keepdims: bool,
    num_threads: int | None = None,
) -> jax.Array:
    """``torch.mean(x, dim=axis, keepdim=keepdims)``: ``torch_sum`` divided by the count.

    PyTorch's CPU mean is ``sum(...).div_(n)``, a true division for real types, so the VJP
    (``ct / n``, broadcast) rounds like ``MeanBackward``; complex ones multiply by ``1 / n``
    (Note [Complex division by the count]).
    """
    x = jnp.asarray(x)
    axes = _normalize_axes(axis, x.ndim)
    n = math.prod(x.shape[d] for d in axes)
    s = torch_sum(x, axes, keepdims, num_threads)
    if jnp.iscomplexobj(s) and n:
        # Note [Complex division by the count]: c10::complex divides by (n, 0) as NumPy does
        # (ratio 0 / n = 0, scale 1 / (n + 0 * 0)): (a + b * 0) * scale, (b - a * 0) * scale.
        # A product by the rounded reciprocal, not a true division (nor its NaN and zero signs).
        re, im = jnp.real(s), jnp.imag(s)
        scale = np.ones((), re.dtype) / n
        return lax.complex((re + im * 0) * scale, (im - re * 0) * scale)
    # Note [True division]: XLA's CPU compiler turns a division by a broadcast scalar (constant
    # or not) into a multiplication by its reciprocal, which rounds differently. A full-shaped
    # divisor behind an optimization barrier is no broadcast, so the forward and the VJP
    # (ct / n, taken with the same divisor) stay true divisions.
    count = lax.optimization_barrier(jnp.full(s.shape, n, s.dtype))
    return s / count
