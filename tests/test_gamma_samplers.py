"""``_standard_gamma``, ``_sample_dirichlet`` and ``binomial`` against PyTorch's CPU generator,
bit for bit (and the generator's state after), their nodes and gradients, and
``_standard_gamma_grad`` / ``_dirichlet_grad`` against ATen's approximations.

Few distinct shapes on purpose: every new shape and dtype compiles XLA kernels.
"""

from __future__ import annotations

import warnings

import jax
import numpy as np
import pytest
import torch

import leafgrad
from leafgrad.ops import gamma_ops

DTYPES = ["float32", "float64"]
# below one (the boosted path), one, large, and the edges: zero, tiny, NaN, negative, infinite
ALPHAS = [0.5, 1.0, 3.0, 0.1, 100.0, 1e-3, 7.5, 2.0, 0.9, 1e4, 0.0, 1e-30]
ALPHAS += [float("nan"), -0.5, -0.2, -2.0, float("inf"), 1 / 3, 4 / 3, 8.5, 0.01, 25.0, 1.0, 0.3]


def _bits_equal(lt, t) -> None:
    a, b = np.asarray(lt._data), t.detach().numpy()
    assert str(lt.dtype) == str(t.dtype)
    assert a.shape == b.shape
    assert a.tobytes() == b.tobytes(), (a, b)


def _seeded(seed: int) -> None:
    torch.manual_seed(seed)
    leafgrad.manual_seed(seed)


def _same_stream_after() -> None:
    """The next draws agree, and so does the generator's state (the cached normal included)."""
    assert np.array_equal(
        leafgrad.default_generator.get_state().numpy(), torch.get_rng_state().numpy()
    )
    _bits_equal(leafgrad.rand(3), torch.rand(3))


def _pair(values, dtype, requires_grad=False):
    arr = np.asarray(values, dtype=dtype)
    return (
        torch.tensor(arr, requires_grad=requires_grad),
        leafgrad.tensor(arr, requires_grad=requires_grad),
    )


# --- _standard_gamma -------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
def test_standard_gamma_samples_are_pytorchs(dtype):
    t, lt = _pair(np.reshape(ALPHAS, (2, 12)), dtype)
    _seeded(20240607)
    for _ in range(3):  # later calls start from the generator state the earlier ones left
        _bits_equal(leafgrad._standard_gamma(lt), torch._standard_gamma(t))
    _same_stream_after()


def test_standard_gamma_uses_the_cached_normal():
    # a randn of fewer than 16 elements leaves the second Box-Muller sample in the generator;
    # the gamma sampler's first normal is that one, and its own odd draws leave one behind
    t, lt = _pair(np.reshape(ALPHAS, (2, 12)), "float32")
    _seeded(7)
    _bits_equal(leafgrad.randn(3, dtype=leafgrad.float64), torch.randn(3, dtype=torch.float64))
    _bits_equal(leafgrad._standard_gamma(lt), torch._standard_gamma(t))
    _bits_equal(leafgrad.randn(3, dtype=leafgrad.float64), torch.randn(3, dtype=torch.float64))
    _same_stream_after()


def test_standard_gamma_with_a_generator_and_empty_and_scalar_inputs():
    g, lg = torch.Generator().manual_seed(11), leafgrad.Generator().manual_seed(11)
    for values in ([], 2.5):
        t, lt = _pair(values, "float32")
        _bits_equal(leafgrad._standard_gamma(lt, lg), torch._standard_gamma(t, g))
    t, lt = _pair(np.reshape(ALPHAS, (2, 12)), "float64")
    _bits_equal(leafgrad._standard_gamma(lt, generator=lg), torch._standard_gamma(t, generator=g))
    assert np.array_equal(lg.get_state().numpy(), g.get_state().numpy())


def test_standard_gamma_backward_is_the_reparameterized_gradient():
    t, lt = _pair([[0.05, 0.5, 1.0], [2.0, 9.0, 150.0]], "float32", requires_grad=True)
    w = np.arange(1, 7, dtype=np.float32).reshape(2, 3)
    _seeded(3)
    y, ly = torch._standard_gamma(t), leafgrad._standard_gamma(lt)
    _bits_equal(ly, y)
    assert ly.grad_fn.name() == y.grad_fn.name() == "StandardGammaBackward0"
    assert [type(n).__name__ for n, _ in ly.grad_fn.next_functions] == ["AccumulateGrad"]
    (y * torch.tensor(w)).sum().backward()
    (ly * leafgrad.tensor(w)).sum().backward()
    np.testing.assert_allclose(lt.grad.numpy(), t.grad.numpy(), rtol=1e-6)
    # create_graph: grad * _standard_gamma_grad(self, result), whose own derivative raises
    g = torch.autograd.grad(torch._standard_gamma(t).sum(), t, create_graph=True)[0]
    lg = leafgrad.autograd.grad(leafgrad._standard_gamma(lt).sum(), lt, create_graph=True)[0]
    names = [n.name() if n else None for n, _ in g.grad_fn.next_functions]
    lnames = [n.name() if n else None for n, _ in lg.grad_fn.next_functions]
    assert (lg.grad_fn.name(), lnames) == (g.grad_fn.name(), names)
    np.testing.assert_allclose(lg.detach().numpy(), g.detach().numpy(), rtol=1e-6)
    with pytest.raises(NotImplementedError) as err:
        lg.sum().backward()
    assert str(err.value) == "the derivative for '_standard_gamma_grad' is not implemented."


def test_standard_gamma_saves_its_result():
    t, lt = _pair([0.5, 2.0], "float32", requires_grad=True)
    y, ly = torch._standard_gamma(t), leafgrad._standard_gamma(lt)
    y.mul_(2)
    ly.mul_(2)
    with pytest.raises(RuntimeError) as expected:
        y.sum().backward()
    with pytest.raises(RuntimeError) as got:
        ly.sum().backward()
    assert str(got.value) == str(expected.value)
    with torch.no_grad(), leafgrad.no_grad():
        assert not leafgrad._standard_gamma(lt).requires_grad


# --- _standard_gamma_grad --------------------------------------------------------------------

GRID_ALPHA = [1e-3, 0.1, 0.5, 1.0, 1.5, 3.0, 7.9, 8.5, 20.0, 100.0, 1e4, 0.0, -1.0, np.nan]
GRID_X = [1e-8, 1e-3, 0.1, 0.5, 0.79, 0.81, 1.0, 5.0, 9.0, 10.0, 18.0, 21.0, 95.0, 1e4]


@pytest.mark.parametrize("dtype", DTYPES)
def test_standard_gamma_grad_matches_aten(dtype):
    a, x = (m.ravel() for m in np.meshgrid(GRID_ALPHA, GRID_X, indexing="ij"))
    (ta, la), (tx, lx) = _pair(a, dtype), _pair(x, dtype)
    expected = torch._standard_gamma_grad(ta, tx).numpy()
    got = leafgrad._standard_gamma_grad(la, lx)
    assert str(got.dtype) == f"torch.{dtype}"
    rtol = 1e-12 if dtype == "float64" else 1e-5
    np.testing.assert_allclose(got.numpy(), expected, rtol=rtol, atol=0)


def test_standard_gamma_grad_node_refuses_backward():
    t, lt = _pair([0.5, 2.0], "float32", requires_grad=True)
    x, lx = _pair([0.3, 2.5], "float32")
    out, lout = torch._standard_gamma_grad(t, x), leafgrad._standard_gamma_grad(lt, lx)
    assert lout.grad_fn.name() == out.grad_fn.name() == "StandardGammaGradBackward0"
    with pytest.raises(NotImplementedError) as err:
        lout.sum().backward()
    assert str(err.value) == "the derivative for '_standard_gamma_grad' is not implemented."
    # ``output`` is not differentiable
    assert not leafgrad._standard_gamma_grad(lx, lt).requires_grad
    assert not torch._standard_gamma_grad(x, t).requires_grad


def test_gradient_approximations_trace_under_jit():
    a = np.array([0.1, 3.0, 50.0, 2.0])
    x = np.array([0.2, 4.0, 52.0, 30.0])
    eager = gamma_ops._standard_gamma_grad_value(a, x)  # op by op: XLA fuses the jitted one
    np.testing.assert_allclose(jax.jit(gamma_ops._standard_gamma_grad_value)(a, x), eager, 1e-13)
    args = (np.array([0.1, 0.5, 0.95, 0.4]), np.array([0.5, 7.0, 2.0, 1.0]), np.full(4, 15.0))
    eager = gamma_ops._dirichlet_grad_value(*args)
    np.testing.assert_allclose(jax.jit(gamma_ops._dirichlet_grad_value)(*args), eager, 1e-13)


# --- _sample_dirichlet and _dirichlet_grad ---------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
def test_sample_dirichlet_is_pytorchs(dtype):
    rows = np.array([[0.5, 1.0, 3.0, 0.1], [1e-3, 2e-3, 1e-2, 5e-3], [50.0, 0.2, 1.0, 7.0]])
    t, lt = _pair(rows, dtype, requires_grad=True)
    _seeded(99)
    out, lout = torch._sample_dirichlet(t), leafgrad._sample_dirichlet(lt)
    _bits_equal(lout, out)
    _same_stream_after()
    assert lout.grad_fn.name() == out.grad_fn.name() == "torch::autograd::NotImplemented"
    with pytest.raises(RuntimeError) as err:
        lout.sum().backward()
    assert str(err.value) == "derivative for aten::_sample_dirichlet is not implemented"


def test_sample_dirichlet_of_a_scalar_and_of_empty_rows():
    for values in (2.0, np.zeros((3, 0))):
        t, lt = _pair(values, "float32")
        _bits_equal(leafgrad._sample_dirichlet(lt), torch._sample_dirichlet(t))


GRID_DX = [1e-4, 0.1, 0.3, 0.5, 0.7, 0.9, 0.9999]
GRID_DALPHA = [0.01, 0.5, 2.0, 7.0, 50.0]
GRID_DTOTAL = [1.0, 3.0, 15.0, 100.0]


@pytest.mark.parametrize("dtype", DTYPES)
def test_dirichlet_grad_matches_aten(dtype):
    x, a, total = (m.ravel() for m in np.meshgrid(GRID_DX, GRID_DALPHA, GRID_DTOTAL, indexing="ij"))
    keep = total > a
    pairs = [_pair(v[keep], dtype) for v in (x, a, total)]
    expected = torch._dirichlet_grad(*(p[0] for p in pairs)).numpy()
    got = leafgrad._dirichlet_grad(*(p[1] for p in pairs)).numpy()
    # float32: ATen works in float near the edges (logf, powf), where cancellation shows
    # XLA's last-ulp differences
    rtol = 1e-12 if dtype == "float64" else 1e-3
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=0)


def test_dirichlet_grad_node_refuses_backward():
    (tx, lx), (ta, la), (tt, lt) = (
        _pair(v, "float32", requires_grad=True) for v in ([0.3, 0.7], [1.0, 2.0], [3.0, 3.0])
    )
    out, lout = torch._dirichlet_grad(tx, ta, tt), leafgrad._dirichlet_grad(lx, la, lt)
    assert lout.grad_fn.name() == out.grad_fn.name() == "torch::autograd::NotImplemented"
    assert len(lout.grad_fn.next_functions) == len(out.grad_fn.next_functions) == 3
    with pytest.raises(RuntimeError) as err:
        lout.sum().backward()
    assert str(err.value) == "derivative for aten::_dirichlet_grad is not implemented"


# --- binomial --------------------------------------------------------------------------------

COUNTS = [0, 1, 5, 10, 19, 30, 100, 1000, 1e5, 2.5e6, 7.5, 25.5, -3.0, 50, 60, 1e9]
PROBS = [0.0, 1.0, 0.5, 0.9, 0.1, 0.3, 0.7, 1e-6, 1 - 1e-6, 0.05, 0.95, 0.6, 0.5, 0.9, 0.4, 0.5]


@pytest.mark.parametrize("dtype", DTYPES)
def test_binomial_samples_are_pytorchs(dtype):
    # small counts by inversion, count * p >= 10 by BTRS, p > 0.5 through 1 - p
    counts = np.array(COUNTS * 4)
    probs = np.array(PROBS + PROBS[::-1] + PROBS[1:] + PROBS[:1] + PROBS[3:] + PROBS[:3])
    (tc, lc), (tp, lp) = _pair(counts, dtype, True), _pair(probs, dtype, True)
    _seeded(5)
    for _ in range(2):
        _bits_equal(leafgrad.binomial(lc, lp), torch.binomial(tc, tp))
    _same_stream_after()
    out, lout = torch.binomial(tc, tp), leafgrad.binomial(lc, lp)
    assert lout.grad_fn.name() == out.grad_fn.name() == "torch::autograd::NotImplemented"
    assert len(lout.grad_fn.next_functions) == len(out.grad_fn.next_functions) == 2
    with pytest.raises(RuntimeError) as err:
        lout.sum().backward()
    assert str(err.value) == "derivative for aten::binomial is not implemented"


def test_binomial_broadcasts_and_warns_as_resize_output_does():
    (tc, lc), (tp, lp) = _pair([[5.0], [40.0]], "float32"), _pair([0.5, 0.9, 0.2], "float32")
    _seeded(8)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        out = torch.binomial(tc, tp)
    with warnings.catch_warnings(record=True) as lseen:
        warnings.simplefilter("always")
        lout = leafgrad.binomial(lc, lp, None)
    _bits_equal(lout, out)
    assert [str(w.message) for w in lseen] == [str(w.message) for w in seen]
    assert [w.category for w in lseen] == [UserWarning]


# --- errors ----------------------------------------------------------------------------------


def _calls(T):
    x, x64, i = T.ones(2), T.ones(2, dtype=T.float64), T.ones(2, dtype=T.int64)
    half = T.ones(2, dtype=T.float16)
    return [
        lambda: T._standard_gamma(i),
        lambda: T._standard_gamma(half),
        lambda: T._standard_gamma(T.ones(2, dtype=T.complex64)),
        lambda: T._standard_gamma(1.0),
        lambda: T._standard_gamma(x, 3),
        lambda: T._standard_gamma(x, generator=3),
        lambda: T._standard_gamma(),
        lambda: T._standard_gamma(x, None, 1),
        lambda: T._standard_gamma(x, foo=1),
        lambda: T._standard_gamma_grad(i, i),
        lambda: T._standard_gamma_grad(x, x64),
        lambda: T._standard_gamma_grad(x64, x),
        lambda: T._standard_gamma_grad(x, T.ones(3)),
        lambda: T._standard_gamma_grad(x, 1.0),
        lambda: T._standard_gamma_grad(x),
        lambda: T._standard_gamma_grad(half, half),
        lambda: T._sample_dirichlet(i),
        lambda: T._sample_dirichlet(x, "a"),
        lambda: T._sample_dirichlet(T.ones(2, dtype=T.bfloat16)),
        lambda: T._dirichlet_grad(x, x, T.ones(3)),
        lambda: T._dirichlet_grad(x, i, x),
        lambda: T._dirichlet_grad(i, i, i),
        lambda: T._dirichlet_grad(x, 1, x),
        lambda: T._dirichlet_grad(x, x),
        lambda: T.binomial(i, x),
        lambda: T.binomial(x, i),
        lambda: T.binomial(T.ones(2, dtype=T.complex64), x),
        lambda: T.binomial(x, T.ones(3)),
        lambda: T.binomial(x64, x),
        lambda: T.binomial(x, 0.5),
        lambda: T.binomial(1, x),
        lambda: T.binomial(half, half),
        lambda: T.binomial(x, x, generator=1),
        lambda: T.binomial(x, x, 1),
        lambda: T.binomial(x),
    ]


@pytest.mark.every_case  # each case is cheap
@pytest.mark.parametrize("case", range(len(_calls(torch))))
def test_errors_are_pytorchs(case):
    with pytest.raises(Exception) as expected:
        _calls(torch)[case]()
    with pytest.raises(Exception) as got:
        _calls(leafgrad)[case]()
    assert (type(got.value), str(got.value)) == (type(expected.value), str(expected.value))


def test_no_tensor_methods():
    for name in ("_standard_gamma", "_sample_dirichlet", "binomial", "_standard_gamma_grad"):
        assert hasattr(leafgrad.Tensor, name) == hasattr(torch.Tensor, name)
