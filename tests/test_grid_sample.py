"""``F.affine_grid`` and ``F.grid_sample`` against torch: every mode, padding mode and
``align_corners`` in 2-D and 3-D, values and gradients for the input, the grid and the affine
matrices (also for coordinates exactly on the border), node names, warnings and errors."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import both

RNG = np.random.default_rng(3)

COMBOS = [
    (dims, mode, pad, ac)
    for dims in (2, 3)
    for mode in ("bilinear", "nearest", "bicubic")
    for pad in ("zeros", "border", "reflection")
    for ac in (False, True)
    if not (dims == 3 and mode == "bicubic")
]


@pytest.mark.parametrize("dims, mode, pad, align_corners", COMBOS)
def test_sampling_values_and_gradients(dims, mode, pad, align_corners):
    spatial = (3, 4) if dims == 2 else (2, 3, 4)
    x = RNG.standard_normal((2, 2) + spatial)
    grid = RNG.uniform(-1.4, 1.4, (2,) + ((3, 5) if dims == 2 else (2, 3, 2)) + (dims,))
    grid.reshape(-1)[:4] = [-1, 1, 1, -1]  # coordinates exactly on the border
    theta = np.tile(np.eye(dims, dims + 1), (2, 1, 1)) * 1.2
    theta = theta + RNG.standard_normal(theta.shape) * 0.1

    def fn(m):
        F = m.nn.functional
        xi, gi = m.tensor(x, requires_grad=True), m.tensor(grid, requires_grad=True)
        th = m.tensor(theta, requires_grad=True)
        size = (2, 2) + grid.shape[1:-1]
        affine = F.affine_grid(th, size, align_corners=align_corners)
        out = F.grid_sample(xi, gi, mode=mode, padding_mode=pad, align_corners=align_corners)
        out2 = F.grid_sample(xi, affine, mode=mode, padding_mode=pad, align_corners=align_corners)
        w = m.tensor(np.linspace(-1, 2, out.numel()).reshape(out.shape))
        ((out * w).sum() + (out2**2).sum()).backward()
        return affine, out, out2, xi.grad, gi.grad, th.grad

    both(fn, rtol=1e-9, atol=1e-10)


def test_float32_sampling_and_module_use():
    """An STN-style use: float32, identity-plus-noise affine grids, bilinear sampling."""

    def fn(m):
        m.manual_seed(0)
        F = m.nn.functional
        x = m.randn(3, 1, 6, 6, requires_grad=True)
        theta = (m.eye(2, 3).expand(3, 2, 3) + 0.05 * m.randn(3, 2, 3)).requires_grad_()
        out = F.grid_sample(
            x, F.affine_grid(theta, x.size(), align_corners=False), align_corners=False
        )
        out.pow(2).mean().backward()
        return out, x.grad, theta.grad

    both(fn, rtol=1e-5, atol=1e-6)


def _g(m, *shape):
    return m.zeros(*shape)


ERRORS = {
    "default_align_corners_warns": lambda m: m.nn.functional.grid_sample(
        m.ones(1, 1, 2, 2), _g(m, 1, 1, 1, 2)
    ),
    "bad_mode": lambda m: m.nn.functional.grid_sample(
        m.ones(1, 1, 2, 2), _g(m, 1, 1, 1, 2), mode="area", align_corners=False
    ),
    "bad_padding": lambda m: m.nn.functional.grid_sample(
        m.ones(1, 1, 2, 2), _g(m, 1, 1, 1, 2), padding_mode="wrap", align_corners=False
    ),
    "dtype_mismatch": lambda m: m.nn.functional.grid_sample(
        m.ones(1, 1, 2, 2), _g(m, 1, 1, 1, 2).double(), align_corners=False
    ),
    "batch_mismatch": lambda m: m.nn.functional.grid_sample(
        m.ones(1, 1, 2, 2), _g(m, 2, 1, 1, 2), align_corners=False
    ),
    "last_dim": lambda m: m.nn.functional.grid_sample(
        m.ones(1, 1, 2, 2), _g(m, 1, 1, 1, 3), align_corners=False
    ),
    "ranks": lambda m: m.nn.functional.grid_sample(
        m.ones(1, 1, 2, 2), _g(m, 1, 1, 2), align_corners=False
    ),
    **{
        f"rank_{len(a)}_{len(b)}_{b[-1]}": (
            lambda m, a=a, b=b: m.nn.functional.grid_sample(
                m.zeros(*a), m.zeros(*b), align_corners=False
            )
        )
        for a, b in [
            ((2, 4, 5), (2, 3, 1)),
            ((2, 4, 5), (2, 3, 2)),
            ((1, 1, 2, 2, 2, 2), (1, 1, 1, 1, 1, 4)),
            ((1, 1, 2, 2, 2, 2), (1, 1, 1, 1, 1, 2)),
            ((1, 2, 3, 4, 5), (1, 2, 2, 2)),
        ]
    },
    "empty_spatial": lambda m: m.nn.functional.grid_sample(
        m.ones(1, 1, 0, 2), _g(m, 1, 1, 1, 2), align_corners=False
    ),
    "bicubic_3d": lambda m: m.nn.functional.grid_sample(
        m.ones(1, 1, 2, 2, 2), _g(m, 1, 1, 1, 1, 3), mode="bicubic", align_corners=False
    ),
    "long_input": lambda m: m.nn.functional.grid_sample(
        m.ones(1, 1, 2, 2, dtype=m.long), _g(m, 1, 1, 1, 2).long(), align_corners=False
    ),
    "affine_default_align_corners_warns": lambda m: m.nn.functional.affine_grid(
        m.eye(2, 3)[None], (1, 1, 2, 3)
    ),
    "affine_int_theta": lambda m: m.nn.functional.affine_grid(
        m.ones(1, 2, 3, dtype=m.long), (1, 1, 2, 3), align_corners=False
    ),
    "affine_wrong_theta": lambda m: m.nn.functional.affine_grid(
        m.ones(1, 3, 3), (1, 1, 2, 3), align_corners=False
    ),
    "affine_wrong_theta_3d": lambda m: m.nn.functional.affine_grid(
        m.ones(1, 2, 3), (1, 1, 2, 3, 4), align_corners=False
    ),
    "affine_3d_size": lambda m: m.nn.functional.affine_grid(
        m.ones(1, 2, 3), (1, 1, 3), align_corners=False
    ),
    "affine_unit_size_warns": lambda m: m.nn.functional.affine_grid(
        m.eye(2, 3)[None], (1, 1, 1, 4), align_corners=True
    ),
    "affine_unit_size": lambda m: m.nn.functional.affine_grid(
        m.eye(2, 3)[None], [1, 1, 1, 3], align_corners=False
    ),
    "affine_empty_size": lambda m: m.nn.functional.affine_grid(
        m.eye(2, 3)[None], (1, 1, 0, 4), align_corners=False
    ),
    "affine_empty_size_list": lambda m: m.nn.functional.affine_grid(
        m.eye(2, 3)[None], [1, 1, 0, 3], align_corners=False
    ),
    "affine_empty_size_Size": lambda m: m.nn.functional.affine_grid(
        m.eye(2, 3)[None], m.Size([1, 1, 0, 3]), align_corners=False
    ),
    "long_input_3d": lambda m: m.nn.functional.grid_sample(
        m.ones(1, 1, 2, 2, 2, dtype=m.long), _g(m, 1, 1, 1, 1, 3).long(), align_corners=False
    ),
    "affine_batch_mismatch": lambda m: m.nn.functional.affine_grid(
        m.ones(2, 2, 3), (1, 1, 3, 4), align_corners=False
    ),
}


@pytest.mark.every_case
@pytest.mark.parametrize("name", list(ERRORS))
def test_errors_and_warnings(name):
    both(ERRORS[name])


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -float("inf")])
def test_non_finite_coordinates(value):
    """PyTorch's vectorized clip takes a NaN coordinate to 0 (border, reflection) and compares
    it as a float (out of bounds for nearest with zeros)."""

    def fn(m):
        x = m.arange(12.0).reshape(1, 1, 3, 4)
        g = m.tensor([[[[value, 0.0]]]])
        out = []
        for mode in ("nearest", "bilinear"):
            for pad in ("zeros", "border", "reflection"):
                if mode == "bilinear" and pad == "zeros":
                    continue
                if value != value or pad != "zeros":
                    out.append(
                        m.nn.functional.grid_sample(
                            x, g, mode=mode, padding_mode=pad, align_corners=False
                        )
                    )
        return out

    both(fn)
