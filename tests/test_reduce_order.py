"""Bit-exact parity of ``leafgrad.ops.reduce`` (sums and means) with PyTorch's CPU kernels.

Every comparison is on raw bits. Inputs mix magnitudes so that any change in the order of the
float additions shows up in the last bits (see Note [Cascade sum order] in the module).
"""

from __future__ import annotations

import itertools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import torch

import leafgrad  # noqa: F401  (switches JAX's x64 mode on)
from leafgrad.ops.reduce import (
    GRAIN_SIZE,
    get_num_threads,
    set_num_threads,
    torch_mean,
    torch_sum,
)

FLOATS = [np.float32, np.float64]
THREADS = torch.get_num_threads()
SIZES = list(range(1, 41)) + [
    63,
    64,
    65,
    127,
    128,
    129,
    255,
    256,
    257,
    1000,
    4096,
    4097,
    10000,
    GRAIN_SIZE,
]
SHAPES = [
    (3, 5),
    (4, 33),
    (33, 4),
    (5, 1, 7),
    (2, 3, 4),
    (6, 40, 9),
    (9, 17, 33),
    (2, 3, 4, 5),
    (70, 1),
]

_sum = jax.jit(torch_sum, static_argnums=(1, 2, 3))


def _inputs(shape, dtype, seed: int) -> list[np.ndarray]:
    """Three draws where the summation order matters in different ways."""
    rng = np.random.default_rng(seed)
    normal = rng.standard_normal(shape)
    # Magnitudes over 16 decades: which partial sums meet decides which small terms survive.
    mixed = rng.standard_normal(shape) * 10.0 ** rng.uniform(-8, 8, shape)
    # Large terms that cancel, with small ones between them.
    cancel = np.where(rng.random(shape) < 0.5, rng.choice([-1e7, 1e7], shape), 1e-3 * normal)
    return [np.ascontiguousarray(a, dtype=dtype) for a in (normal, mixed, cancel)]


def _bits(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    if np.iscomplexobj(a):
        a = a.view(a.real.dtype)
    return a.view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[a.dtype.itemsize])


def assert_bits_equal(expected, got, what="") -> None:
    """``got`` (JAX) has the dtype, shape and bits of ``expected`` (a torch tensor)."""
    e = expected.detach().numpy()
    g = np.asarray(got)
    assert (g.dtype, g.shape) == (e.dtype, e.shape), f"{what}: {g.dtype}{g.shape} vs {e.shape}"
    diff = np.flatnonzero(_bits(e).reshape(-1) != _bits(g).reshape(-1))
    assert diff.size == 0, (
        f"{what}: {diff.size} of {e.size} differ, first at {diff[0]}: "
        f"torch {e.reshape(-1)[diff[0]]!r}, leafgrad {g.reshape(-1)[diff[0]]!r}"
    )


def _torch_sum(x: np.ndarray, axis, keepdims: bool):
    t = torch.from_numpy(x)
    if axis is None:
        return t.sum(dim=tuple(range(t.ndim)), keepdim=True) if keepdims else t.sum()
    return t.sum(dim=axis, keepdim=keepdims)


@pytest.mark.parametrize("dtype", FLOATS)
def test_full_sum_of_every_size(dtype):
    # One compilation for all sizes: jit and vmap keep every add, so each result is per size.
    @jax.jit
    def sums(xs):
        return [jax.vmap(lambda v: torch_sum(v, None, False, THREADS))(x) for x in xs]

    inputs = [np.stack(_inputs((n,), dtype, seed=n)) for n in SIZES]
    for n, x, got in zip(SIZES, inputs, sums(inputs)):
        for k in range(len(x)):
            assert_bits_equal(torch.from_numpy(x[k]).sum(), got[k], f"n={n} draw {k}")


@pytest.mark.parametrize("dtype", FLOATS)
def test_full_sum_jitted_directly(dtype):
    for n in (15, 129, 4097):
        x = _inputs((n,), dtype, seed=7 * n)[1]
        assert_bits_equal(torch.from_numpy(x).sum(), _sum(jnp.asarray(x), None, False, THREADS))


def test_fifteen_elements_follow_the_eight_lane_order():
    # The AVX2 order on this AVX512 machine: lanes x0..x7 start the vector accumulator, x8..x14
    # are added from zero, then the lanes one by one.
    x = _inputs((15,), np.float32, seed=15)[1]
    acc = np.float32(0)
    for v in list(x[8:]) + list(x[:8]):
        acc = np.float32(acc + v)
    assert _bits(np.asarray(torch.from_numpy(x).sum())) == _bits(np.asarray(acc))
    assert _bits(np.asarray(_sum(jnp.asarray(x), None, False, THREADS))) == _bits(np.asarray(acc))


@pytest.mark.parametrize("threads", sorted({1, 2, 3, THREADS}))
@pytest.mark.parametrize("dtype", FLOATS)
def test_full_sum_split_across_threads(dtype, threads):
    # Above GRAIN_SIZE, parallel_reduce cuts the array into one range per thread.
    sizes = (GRAIN_SIZE + 1, 100003, 262144)
    inputs = [_inputs((n,), dtype, seed=n)[1] for n in sizes]
    got = jax.jit(lambda xs: [torch_sum(x, None, False, threads) for x in xs])(inputs)
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        for n, x, g in zip(sizes, inputs, got):
            assert_bits_equal(torch.from_numpy(x).sum(), g, f"n={n} threads={threads}")
    finally:
        torch.set_num_threads(before)


def test_thread_split_changes_the_result():
    # The split is visible: summing 100003 floats in one range gives other bits than in two.
    x = _inputs((100003,), np.float32, seed=3)[1]
    one, two = (np.asarray(_sum(jnp.asarray(x), None, False, t)) for t in (1, 2))
    assert _bits(one) != _bits(two)


def test_default_thread_count_is_torchs():
    assert get_num_threads() == THREADS


def test_set_num_threads_applies_to_later_traces():
    x = jnp.asarray(_inputs((100003,), np.float32, seed=4)[1])
    before = get_num_threads()
    set_num_threads(1)
    try:
        serial = torch_sum(x, None, False)
    finally:
        set_num_threads(before)
    assert _bits(np.asarray(serial)) == _bits(np.asarray(torch_sum(x, None, False, 1)))
    with pytest.raises(ValueError):
        set_num_threads(0)


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", FLOATS)
def test_sum_over_every_axis_choice(shape, dtype):
    nd = len(shape)
    choices = [None] + [ax for r in range(1, nd + 1) for ax in itertools.combinations(range(nd), r)]
    cases = [(ax, keep) for ax in choices for keep in (False, True)]

    @jax.jit
    def sums(x):
        return [torch_sum(x, ax, keep, THREADS) for ax, keep in cases]

    for k, x in enumerate(_inputs(shape, dtype, seed=sum(shape))):
        for (ax, keep), got in zip(cases, sums(jnp.asarray(x))):
            assert_bits_equal(_torch_sum(x, ax, keep), got, f"axis={ax} keepdim={keep} draw {k}")


@pytest.mark.parametrize(
    "shape,axis",
    [
        ((300, 301), (0,)),  # outer reduction, columns split between threads
        ((300, 301), (1,)),
        ((40, 1000), (0,)),
        ((2, 40000), (0,)),  # few rows, many columns
        ((20000, 3), (0,)),  # few columns: scalar outer kernel
        ((20000, 3), (1,)),
        ((50, 20, 70), (1,)),  # middle axis
        ((50, 20, 70), (0, 2)),  # reduced groups that do not merge
        ((3000, 2, 7), (0, 2)),  # many rows accumulated into each output
        ((8, 9, 10, 50), (1, 3)),
    ],
    ids=str,
)
@pytest.mark.parametrize("dtype", FLOATS)
def test_large_partial_sums(shape, axis, dtype):
    x = _inputs(shape, dtype, seed=len(shape))[1]
    assert_bits_equal(_torch_sum(x, axis, False), _sum(jnp.asarray(x), axis, False, THREADS))


@pytest.mark.parametrize("threads", [1, 3])
def test_outer_sum_column_split_follows_thread_count(threads):
    x = _inputs((300, 301), np.float32, seed=301)[1]
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        expected = _torch_sum(x, (0,), False)
    finally:
        torch.set_num_threads(before)
    assert_bits_equal(expected, _sum(jnp.asarray(x), (0,), False, threads))


def test_seeded_three_by_five():
    torch.manual_seed(20200910)
    x = torch.randn(3, 5)
    xj = jnp.asarray(x.numpy())
    assert_bits_equal(x.sum(), torch_sum(xj, None, False))
    assert_bits_equal(x.mean(), torch_mean(xj, None, False))
    assert float(torch_mean(xj, None, False)) == 0.05854148790240288


MEAN_CASES = [
    ((15,), None),
    ((3, 5), None),
    ((3, 5), (0,)),
    ((3, 5), (1,)),
    ((7, 11, 13), (0, 2)),
    ((7, 11, 13), (1,)),
    ((1000,), None),
    ((100, 300), (0,)),
    ((33, 3), (1,)),
    ((40000,), None),
    ((3, 49), (0, 1)),
]


@pytest.mark.parametrize("dtype", FLOATS)
def test_mean_and_its_gradient(dtype):
    cases = [(shape, axis, keep) for shape, axis in MEAN_CASES for keep in (False, True)]
    rng = np.random.default_rng(11)
    xs, cts, expected = [], [], []
    for shape, axis, keep in cases:
        x = _inputs(shape, dtype, seed=len(shape))[1]
        t = torch.from_numpy(x.copy()).requires_grad_()
        m = t.mean(dim=tuple(range(len(shape))) if axis is None else axis, keepdim=keep)
        ct = rng.standard_normal(m.shape).astype(dtype)  # a cotangent XLA cannot constant-fold
        m.backward(torch.from_numpy(ct))
        xs.append(x)
        cts.append(ct)
        expected.append((m, t.grad))

    @jax.jit
    def means_and_vjps(xs, cts):
        out = []
        for (_, axis, keep), x, ct in zip(cases, xs, cts):
            mean, vjp = jax.vjp(lambda v, a=axis, k=keep: torch_mean(v, a, k, THREADS), x)
            out.append((mean, vjp(ct)[0]))
        return out

    for case, (m, grad), (got_m, got_grad) in zip(cases, expected, means_and_vjps(xs, cts)):
        assert_bits_equal(m, got_m, f"mean {case}")
        assert_bits_equal(grad, got_grad, f"grad {case}")


def test_grad_of_mean_divides_by_n():
    x = torch.ones(3, 7, dtype=torch.float32, requires_grad=True)
    x.mean().backward()
    got = jax.jit(jax.grad(lambda v: torch_mean(v, None, False)))(jnp.ones((3, 7), jnp.float32))
    assert_bits_equal(x.grad, got)
    assert np.asarray(got)[0, 0] == np.float32(1) / np.float32(21)


@pytest.mark.parametrize("dtype", FLOATS)
def test_sum_gradient_is_the_cotangent_broadcast(dtype):
    x = _inputs((6, 40, 9), dtype, seed=1)[1]
    ct = np.random.default_rng(2).standard_normal((6, 9)).astype(dtype)
    t = torch.from_numpy(x.copy()).requires_grad_()
    t.sum(1).backward(torch.from_numpy(ct))
    vjp = jax.jit(lambda v, c: jax.vjp(lambda w: torch_sum(w, (1,), False), v)[1](c)[0])
    assert_bits_equal(t.grad, vjp(jnp.asarray(x), jnp.asarray(ct)))


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_sum(dtype):
    for shape, axis in [
        ((15,), None),
        ((7, 11, 13), (1,)),
        ((7, 11, 13), (0, 2)),
        ((300, 301), (0,)),
        ((40000,), None),
    ]:
        re, im = _inputs(shape, np.float64, seed=5)[1:]
        x = (re + 1j * im).astype(dtype)
        assert_bits_equal(_torch_sum(x, axis, False), _sum(jnp.asarray(x), axis, False, THREADS))


def test_complex_mean():
    re, im = _inputs((7, 11, 13), np.float64, seed=5)[1:]
    x = (re + 1j * im).astype(np.complex64)
    assert_bits_equal(torch.from_numpy(x).mean(1), torch_mean(jnp.asarray(x), (1,), False))


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_mean_and_its_gradient(dtype):
    # Note [Complex division by the count]: the sum times the rounded reciprocal of the count
    cases = [(shape, axis, keep) for shape, axis in MEAN_CASES for keep in (False, True)]
    rng = np.random.default_rng(12)
    xs, cts, expected = [], [], []
    for shape, axis, keep in cases:
        re, im = _inputs(shape, np.float64, seed=len(shape))[:2]
        x = (re + 1j * im).astype(dtype)
        t = torch.from_numpy(x.copy()).requires_grad_()
        m = t.mean(dim=tuple(range(len(shape))) if axis is None else axis, keepdim=keep)
        ct = np.asarray(rng.standard_normal(m.shape) + 1j * rng.standard_normal(m.shape), dtype)
        m.backward(torch.from_numpy(ct))
        xs.append(x)
        cts.append(ct)
        expected.append((m, t.grad))

    @jax.jit
    def means_and_vjps(xs, cts):
        out = []
        for (_, axis, keep), x, ct in zip(cases, xs, cts):
            mean, vjp = jax.vjp(lambda v, a=axis, k=keep: torch_mean(v, a, k, THREADS), x)
            out.append((mean, vjp(ct)[0]))
        return out

    for case, (m, grad), (got_m, got_grad) in zip(cases, expected, means_and_vjps(xs, cts)):
        assert_bits_equal(m, got_m, f"mean {case}")
        assert_bits_equal(grad, got_grad, f"grad {case}")


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_mean_of_special_values(dtype):
    inf, nan = np.inf, np.nan
    rows = [
        [complex(inf, 1.0), 1.0, 2.0],
        [complex(1.0, -inf), 1.0, 2.0],
        [complex(nan, 0.0), 1.0, 1.0],
        [complex(-0.0, -0.0)] * 3,
        [complex(-1.0, 0.0), complex(0.0, -0.0), 0.0],
        [complex(0.0, -2.0), 0.0, 1.0],
        [complex(3e38, 3e38)] * 3,
    ]
    x = np.array(rows, dtype=dtype)
    with np.errstate(invalid="ignore", over="ignore"):
        expected = torch.from_numpy(x).mean(1)
    got = jax.jit(lambda v: torch_mean(v, (1,), False, THREADS))(jnp.asarray(x))
    assert_bits_equal(expected, got)
    empty = np.zeros((2, 0), dtype)
    assert_bits_equal(torch.from_numpy(empty).mean(1), torch_mean(jnp.asarray(empty), (1,), False))


SPECIAL_VALUES = [
    [-0.0] * 5,
    [-0.0] * 20,
    [np.inf, -np.inf, 1.0],
    [np.nan, 1.0],
    [np.inf] * 9,
    [3e38] * 12,
    [1e308] * 12,
]


@pytest.mark.parametrize("dtype", FLOATS)
def test_signed_zeros_and_non_finite(dtype):
    # (1,) reduces a size-1 dim only: PyTorch still adds every value onto a +0 output.
    with np.errstate(over="ignore"):  # 1e308 is inf in float32: inf sums are checked as well
        cases = [
            (np.array(v).astype(dtype).reshape(-1, 1), ax)
            for v in SPECIAL_VALUES
            for ax in [None, (0,), (1,)]
        ]
    got = jax.jit(lambda xs: [torch_sum(x, ax, False, THREADS) for x, (_, ax) in zip(xs, cases)])(
        [x for x, _ in cases]
    )
    for (x, ax), g in zip(cases, got):
        assert_bits_equal(_torch_sum(x, ax, False), g, f"{x.ravel()[:3]} axis={ax}")


def test_zero_dim_and_empty():
    for x in [np.array(-0.0, np.float32), np.array(2.5), np.zeros((0, 3)), np.zeros((4, 0))]:
        for axis in [None, (0,)] if x.ndim else [None]:
            assert_bits_equal(_torch_sum(x, axis, False), _sum(jnp.asarray(x), axis, False, 1))


def test_integer_and_bool_sums_keep_the_dtype():
    x = np.arange(-20, 20, dtype=np.int32).reshape(4, 10)
    assert_bits_equal(torch.from_numpy(x).sum(1, dtype=torch.int32), torch_sum(x, (1,), False))
    b = np.array([[True, False], [True, True]])
    assert_bits_equal(torch.from_numpy(b).sum(0, dtype=torch.bool), torch_sum(b, (0,), False))
