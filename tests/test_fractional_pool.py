"""``F.fractional_max_pool2d``/``3d`` and ``nn.FractionalMaxPool2d``/``3d`` against torch:
window starts from the random samples in every floating dtype (float16 and bfloat16 rounding
as ``c10::Half`` does), the maxima (first maximum, last NaN), indices, gradients and double
backward, samples drawn from the shared generator, modules, saved arguments and errors."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import both, lg


def _case(seed: int):
    rng = np.random.default_rng(seed)
    nd = 2 + seed % 2
    batched = seed % 3 != 0
    kernel = tuple(int(k) for k in rng.integers(1, 4, nd))
    out = tuple(int(o) for o in rng.integers(1, 9, nd))
    spatial = tuple(o + k - 1 + int(rng.integers(0, 12)) for o, k in zip(out, kernel))
    shape = ((2,) if batched else ()) + (int(rng.integers(1, 4)),) + spatial
    x = rng.standard_normal(shape)
    if seed % 4 == 0:
        x = np.round(x)  # ties
    if seed % 5 == 0:
        x.reshape(-1)[rng.integers(0, x.size, 3)] = np.nan
    dtype = ("float32", "float64", "float16", "bfloat16")[seed % 4]
    return nd, x, kernel, out, dtype


@pytest.mark.parametrize("seed", range(40))
def test_random_inputs_values_indices_and_gradients(seed):
    nd, x, kernel, out, dtype = _case(seed)

    def fn(m):
        m.manual_seed(seed)
        t = m.tensor(x, dtype=getattr(m, dtype), requires_grad=True)
        f = getattr(m.nn.functional, f"fractional_max_pool{nd}d")
        y, idx = f(t, kernel, output_size=out, return_indices=True)
        (y.float() * m.arange(y.numel()).reshape(y.shape)).sum().backward()
        return y, idx, t.grad, m.rand(2)

    both(fn)


@pytest.mark.parametrize("nd", [2, 3])
def test_given_samples_extreme_values_and_ratios(nd):
    """Samples of 0, 1 and just below 1 (the starts' rounding edges); ``output_ratio``."""
    rng = np.random.default_rng(nd)
    shape = (3, 2) + (13, 11, 9)[:nd]
    x = rng.standard_normal(shape)
    u = np.array([0.0, 1.0, np.nextafter(1.0, 0.0), 0.5, 0.25, 0.999])[: 3 * 2 * nd]
    u = np.resize(u, (4, 2, nd))  # more samples than batch entries: the first are used

    def fn(m):
        t = m.tensor(x, requires_grad=True)
        f = getattr(m.nn.functional, f"fractional_max_pool{nd}d")
        samples = m.tensor(u)
        a = f(t, 3, output_size=(4, 3, 2)[:nd], _random_samples=samples, return_indices=True)
        b = f(t, 2, output_ratio=(0.5, 0.7, 0.4)[:nd], _random_samples=samples)
        (a[0].sum() + b.pow(2).sum()).backward()
        return a, b, t.grad

    both(fn)


def test_double_backward_nodes_and_values():
    def fn(m):
        m.manual_seed(0)
        x = m.randn(2, 2, 7, 6, requires_grad=True)
        y = m.nn.functional.fractional_max_pool2d(x, 2, output_size=(4, 3))
        (g,) = m.autograd.grad((y * y).sum(), x, create_graph=True)
        names = [type(n).__name__ for n, _ in g.grad_fn.next_functions]
        (gg,) = m.autograd.grad(g.pow(2).sum(), x)
        return g, gg, type(g.grad_fn).__name__, names

    both(fn)


def test_saved_arguments_and_in_place_errors():
    def fn(m):
        m.manual_seed(1)
        x = m.randn(1, 2, 6, 6, 5, requires_grad=True)
        y = m.nn.functional.fractional_max_pool3d(x * 1, (2, 2, 1), output_size=(3, 2, 4))
        node = y.grad_fn
        return (
            node._saved_kernel_size,
            node._saved_output_size,
            node._saved_result1,
            node._saved_self,
            sorted(a for a in dir(node) if a.startswith("_saved_")),
        )

    both(fn)

    def modified(m):
        x = m.randn(1, 1, 5, 5, requires_grad=True)
        h = x * 2
        y = m.nn.functional.fractional_max_pool2d(h, 2, output_size=3)
        h.add_(1)
        y.sum().backward()

    both(modified)


@pytest.mark.parametrize("nd", [2, 3])
def test_modules(nd):
    def fn(m):
        m.manual_seed(2)
        cls = getattr(m.nn, f"FractionalMaxPool{nd}d")
        by_ratio = cls(2, output_ratio=0.5, return_indices=True)
        by_size = cls((2, 1, 2)[:nd], output_size=3)
        fixed = cls(2, output_size=2, _random_samples=m.rand(1, 2, nd))
        x = m.randn((1, 2) + (8, 7, 6)[:nd], requires_grad=True)
        outs = [by_ratio(x), by_size(x), fixed(x), fixed(x)]
        sum(o.sum() for o in (outs[0][0], *outs[1:])).backward()
        attrs = [
            (repr(p), p.kernel_size, p.output_size, p.output_ratio, p.return_indices)
            for p in (by_ratio, by_size, fixed)
        ]
        return outs, x.grad, attrs, list(by_ratio.state_dict()), list(fixed.state_dict())

    both(fn)


def _x(m, shape=(2, 3, 9, 8), dtype=None):
    return m.zeros(shape, dtype=dtype or m.float32)


ERRORS = {
    "no_size": lambda m: m.nn.functional.fractional_max_pool2d(_x(m), 2),
    "no_size_3d": lambda m: m.nn.functional.fractional_max_pool3d(_x(m, (1, 5, 5, 5)), 2),
    "ratio_three": lambda m: m.nn.functional.fractional_max_pool2d(
        _x(m), 2, output_ratio=(0.5, 0.5, 0.5)
    ),
    "ratio_float_2d": lambda m: m.nn.functional.fractional_max_pool2d(_x(m), 2, output_ratio=0.5),
    "kernel_three": lambda m: m.nn.functional.fractional_max_pool2d(_x(m), (2, 2, 2), 3),
    "output_three": lambda m: m.nn.functional.fractional_max_pool2d(_x(m), 2, (3, 3, 3)),
    "kernel_two_3d": lambda m: m.nn.functional.fractional_max_pool3d(
        _x(m, (1, 5, 5, 5)), (2, 2), 3
    ),
    "output_two_3d": lambda m: m.nn.functional.fractional_max_pool3d(
        _x(m, (1, 5, 5, 5)), 2, (3, 3)
    ),
    "five_dims": lambda m: m.nn.functional.fractional_max_pool2d(_x(m, (1, 2, 3, 9, 8)), 2, 3),
    "two_dims": lambda m: m.nn.functional.fractional_max_pool2d(_x(m, (9, 8)), 2, 3),
    "six_dims_3d": lambda m: m.nn.functional.fractional_max_pool3d(_x(m, (1, 1, 1, 5, 5, 5)), 2, 3),
    "three_dims_3d": lambda m: m.nn.functional.fractional_max_pool3d(_x(m, (5, 5, 5)), 2, 3),
    "empty_channels": lambda m: m.nn.functional.fractional_max_pool2d(_x(m, (2, 0, 9, 8)), 2, 3),
    "empty_3d": lambda m: m.nn.functional.fractional_max_pool3d(_x(m, (1, 0, 5, 5, 5)), 2, 3),
    "pool_height": lambda m: m.nn.functional.fractional_max_pool2d(_x(m), 5, 6),
    "pool_width": lambda m: m.nn.functional.fractional_max_pool2d(_x(m), (2, 5), (4, 5)),
    "pool_time": lambda m: m.nn.functional.fractional_max_pool3d(_x(m, (1, 5, 6, 7)), (4, 2, 2), 3),
    "pool_width_3d": lambda m: m.nn.functional.fractional_max_pool3d(
        _x(m, (1, 5, 6, 7)), (2, 2, 7), 3
    ),
    "long_input": lambda m: m.nn.functional.fractional_max_pool2d(_x(m, dtype=m.int64), 2, 3),
    "long_with_samples": lambda m: m.nn.functional.fractional_max_pool2d(
        _x(m, dtype=m.int64), 2, 3, _random_samples=m.zeros(2, 3, 2, dtype=m.int64)
    ),
    "samples_dtype": lambda m: m.nn.functional.fractional_max_pool2d(
        _x(m), 2, 3, _random_samples=m.zeros(2, 3, 2, dtype=m.float64)
    ),
    "samples_dims": lambda m: m.nn.functional.fractional_max_pool2d(
        _x(m), 2, 3, _random_samples=m.zeros(3, 2)
    ),
    "samples_batch": lambda m: m.nn.functional.fractional_max_pool2d(
        _x(m), 2, 3, _random_samples=m.zeros(1, 3, 2)
    ),
    "samples_channels": lambda m: m.nn.functional.fractional_max_pool2d(
        _x(m), 2, 3, _random_samples=m.zeros(2, 2, 2)
    ),
    "samples_last": lambda m: m.nn.functional.fractional_max_pool3d(
        _x(m, (1, 2, 5, 5, 5)), 2, 3, _random_samples=m.zeros(1, 2, 2)
    ),
    "module_no_size": lambda m: m.nn.FractionalMaxPool2d(2),
    "module_both": lambda m: m.nn.FractionalMaxPool3d(2, output_size=2, output_ratio=0.5),
    "module_ratio": lambda m: m.nn.FractionalMaxPool2d(2, output_ratio=(0.5, 1.5)),
    "module_ratio_3d": lambda m: m.nn.FractionalMaxPool3d(2, output_ratio=(0.5, 0.5, 0)),
}


@pytest.mark.every_case
@pytest.mark.parametrize("name", list(ERRORS))
def test_errors(name):
    both(ERRORS[name])


def test_empty_batch_and_empty_output():
    def fn(m):
        m.manual_seed(3)
        x = m.randn(0, 2, 5, 5, requires_grad=True)
        a = m.nn.functional.fractional_max_pool2d(x, 2, output_size=3, return_indices=True)
        y = m.randn(1, 2, 5, 5, requires_grad=True)
        b = m.nn.functional.fractional_max_pool2d(y, 2, output_size=(0, 3), return_indices=True)
        (a[0].sum() + b[0].sum()).backward()
        return a, b, x.grad, y.grad

    both(fn)


def test_compiled_step():
    """Inside ``leafgrad.compile``: with given samples the results equal eager mode's; drawn
    ones come from the traced generator (JAX keys there), new at every call, one trace."""

    def step(x, samples=None):
        return lg.nn.functional.fractional_max_pool2d(
            x, 2, output_ratio=(0.5, 0.5), _random_samples=samples
        ).sum()

    x = lg.randn(2, 3, 9, 9)
    samples = lg.rand(2, 3, 2)
    compiled = lg.compile(step)
    assert compiled(x, samples).item() == step(x, samples).item()
    drawn = lg.compile(step)
    values = {drawn(x).item() for _ in range(4)}
    assert len(values) > 1 and drawn.traces == 1
