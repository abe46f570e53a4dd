"""``torch.special``'s Bessel functions J0, J1, Y0, Y1, K0, K1 (plain and scaled) and the Airy
function Ai against torch: every branch of PyTorch's Cephes kernels and the points where they
switch, negative, zero, tiny, huge, infinite and NaN arguments, float32 and float64, integer and
bool inputs, no gradient, the dtypes PyTorch's CPU kernels refuse, and tracing under ``jax.jit``.

leafgrad rounds as PyTorch's build does (Note [Rounding as PyTorch's build] in
``leafgrad/ops/bessel.py``): the values below agree to the last bit but for a few ulp from
XLA's float64 ``exp``, so the tolerances are a few ulp, with a floor for results near a zero of
the function; the decaying tails are compared relatively, above the subnormal numbers that
XLA's CPU flushes to zero."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import both, lg, torch

from leafgrad.ops.bessel import __all__ as _BESSEL

# I0 and I1 are PyTorch's kernels from bessel.py too (their frontends are in polynomials.py)
NAMES = [*_BESSEL, "modified_bessel_i0", "modified_bessel_i1"]

# where the kernels switch: J and Y at 5 (J0 also below 1e-5), K at 2 and its I0/I1 at 8, Ai
# at +-2.09, 8.3203353 (a cut that changes nothing) and 103.892
EDGES = [
    0.0, 1e-30, 1e-8, 9.9e-6, 1e-5, 1.1e-5, 0.1, 0.5, 0.9, 1.0, 1.5, 1.9999, 2.0, 2.0001, 2.08,
    2.09, 2.1, 2.5, 3.0, 4.0, 4.9999, 5.0, 5.0001, 6.0, 7.5, 8.0, 8.0001, 8.32, 8.3203353, 8.33,
    10.0, 12.5, 20.0, 25.0, 30.0, 50.0, 100.0, 103.892, 103.9, 200.0, 1e3, 1e4, 1e6,
]  # fmt: skip
POINTS = np.concatenate(
    [EDGES, -np.array(EDGES), np.linspace(-12, 12, 97), [-0.0, np.inf, -np.inf, np.nan]]
)
# a few ulp of each dtype; near a zero of J, Y or Ai a few ulp of its envelope
TOL = {"float32": {"rtol": 1e-6, "atol": 1e-7}, "float64": {"rtol": 1e-13, "atol": 1e-16}}


def _special(m, name):
    return getattr(m.special, name)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_values_across_every_branch(name, dtype):
    def fn(m):
        x = m.tensor(POINTS, dtype=getattr(m, dtype))
        return _special(m, name)(x), _special(m, name)(x.reshape(3, -1)[:, 1:])

    both(fn, **TOL[dtype])


# where K0, K1 and Ai have fallen far below one, but not into the subnormal numbers
TAILS = {
    "modified_bessel_k0": {"float32": (5, 80), "float64": (5, 700)},
    "modified_bessel_k1": {"float32": (5, 80), "float64": (5, 700)},
    "airy_ai": {"float32": (2, 25), "float64": (2, 103.892)},
}


@pytest.mark.parametrize("name", sorted(TAILS))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_decaying_tails_relative(name, dtype):
    lo, hi = TAILS[name][dtype]

    def fn(m):
        x = m.tensor(np.linspace(lo, hi, 301), dtype=getattr(m, dtype))
        return _special(m, name)(x)

    both(fn, rtol=TOL[dtype]["rtol"], atol=0)


@pytest.mark.parametrize("name", NAMES)
def test_dense_grid_float64(name):
    """Many points of each branch, the oscillating J, Y and Ai over many periods."""
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.uniform(-3, 3, 400), rng.uniform(-60, 60, 400), [-2.3381074105]])

    both(lambda m: _special(m, name)(m.tensor(x, dtype=m.float64)), **TOL["float64"])


@pytest.mark.parametrize("name", NAMES)
def test_integer_and_bool_inputs_compute_in_the_default_dtype(name):
    def fn(m):
        f = _special(m, name)
        return (
            f(m.tensor([0, 1, -3, 5, 40])),
            f(m.tensor([2, 7], dtype=m.int8)),
            f(m.tensor([True, False])),
            f(m.tensor(3)),
            f(m.ones(0, 2)),
        )

    both(fn, **TOL["float32"])


def test_integer_input_follows_the_default_dtype():
    def fn(m):
        m.set_default_dtype(m.float64)
        try:
            return [_special(m, n)(m.tensor([1, 3, 6])) for n in NAMES]
        finally:
            m.set_default_dtype(m.float32)

    both(fn, **TOL["float64"])


@pytest.mark.parametrize("name", NAMES)
def test_no_gradient_is_recorded(name):
    def fn(m):
        x = m.tensor([0.5, 1.5, 3.0, 7.0], requires_grad=True)
        y = x.double().detach().requires_grad_()
        out = _special(m, name)(x * 2), _special(m, name)(y)
        return [(r, r.requires_grad, r.grad_fn is None, r.is_leaf) for r in out]

    both(fn, **TOL["float32"])


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "complex64", "complex128"])
def test_refused_dtypes(name, dtype):
    both(lambda m: _special(m, name)(m.ones(2, dtype=getattr(m, dtype))))


@pytest.mark.parametrize("name", NAMES)
def test_non_tensor_argument(name):
    both(lambda m: _special(m, name)(1.5))
    both(lambda m: _special(m, name)([1.5]))


def test_traces_under_jit():
    import jax
    import jax.numpy as jnp

    x = np.concatenate([POINTS, np.linspace(-3, 3, 61)])

    def step(a):
        t = lg.tensor(a)
        return [_special(lg, n)(t)._data for n in NAMES]

    jitted = jax.jit(step)(jnp.asarray(x))
    for name, got, want in zip(NAMES, jitted, step(x)):
        np.testing.assert_allclose(
            np.asarray(got), np.asarray(want), rtol=1e-13, atol=1e-300, err_msg=name
        )


def test_special_namespace_is_torchs():
    """With these, ``leafgrad.special`` has every function of ``torch.special``."""
    assert sorted(lg.special.__all__) == sorted(torch.special.__all__)
    assert all(callable(getattr(lg.special, n)) for n in torch.special.__all__)
