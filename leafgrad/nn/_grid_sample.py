"""``F.affine_grid`` and ``F.grid_sample``: one op each, PyTorch's CPU kernels written in
``jax.numpy`` (``AffineGridGeneratorBackward0``; ``GridSampler2DBackward0`` /
``GridSampler3DBackward0``), whose VJPs JAX derives.

Note [Grid sampler gradients]: PyTorch's backward kernel treats a coordinate exactly on the
border as outside when it clips (``clip_coordinates_set_grad``: gradient 0 there) and reflects
with multiplier 1 at 0; ``jnp.clip`` would split a tie's gradient in halves and ``abs`` gives 0
at 0, so both are written with ``where``, whose branches carry PyTorch's gradients.
"""

from __future__ import annotations

import functools

import jax.numpy as jnp

from .. import _autocast
from .. import _errors as E
from .._tensor import Tensor
from ..ops.api import register_ops
from ..ops.dispatch import dispatch
from ..ops.table import OPS, OpDef, same
from .functional import _float_kernel_pair

__all__ = ["affine_grid", "grid_sample"]

_ALIGN_WARNING = (
    "Default grid_sample and affine_grid behavior has changed to align_corners=False since "
    "1.3.0. Please specify align_corners=True if the old behavior is desired. See the "
    "documentation of grid_sample for details."
)


# --- affine_grid --------------------------------------------------------------------------------


def _linspace_from_neg_one(steps: int, align_corners: bool, dtype):
    if steps <= 1:
        return jnp.zeros((1,), dtype)
    r = jnp.linspace(-1.0, 1.0, steps, dtype=dtype)
    return r if align_corners else r * (steps - 1) / steps


def _affine_grid(theta, size, align_corners):
    """``affine_grid_generator``: the base grid ``[x, y(, z), 1]`` times ``theta`` transposed."""
    dt = theta.dtype
    spatial = size[2:]
    axes = [_linspace_from_neg_one(s, align_corners, dt) for s in spatial]  # D?, H, W
    mesh = jnp.meshgrid(*axes, indexing="ij")
    coords = [*reversed(mesh), jnp.ones(tuple(spatial), dt)]  # x, y(, z), 1
    base = jnp.stack(coords, axis=-1).reshape(1, -1, len(spatial) + 1)
    base = jnp.broadcast_to(base, (size[0],) + base.shape[1:])
    grid = jnp.matmul(base, jnp.swapaxes(theta, 1, 2))
    return grid.reshape((size[0], *spatial, len(spatial)))


# --- grid_sample --------------------------------------------------------------------------------


def _unnormalize(coord, size: int, align_corners: bool):
    if align_corners:
        return (coord + 1) / 2 * (size - 1)
    return ((coord + 1) * size - 1) / 2


def _clip(coord, size: int):
    """``clip_coordinates``: PyTorch's vectorized max(in, 0) gives 0 for NaN; only strictly
    inside does the gradient pass (Note [Grid sampler gradients])."""
    limit = size - 1
    return jnp.where(coord > 0, jnp.where(coord < limit, coord, float(limit)), 0.0).astype(
        coord.dtype
    )


def _reflect(coord, twice_low: int, twice_high: int):
    if twice_low == twice_high:
        return jnp.zeros_like(coord)
    low = twice_low / 2
    span = (twice_high - twice_low) / 2
    shifted = coord - low
    shifted = jnp.where(shifted < 0, -shifted, shifted)
    extra = jnp.fmod(shifted, span)
    flips = jnp.floor(shifted / span)
    return jnp.where(jnp.fmod(flips, 2) == 0, extra + low, span - extra + low).astype(coord.dtype)


def _pad_coordinates(coord, size: int, padding_mode: str, align_corners: bool):
    """``compute_coordinates``: border clips, reflection reflects then clips."""
    if padding_mode == "border":
        return _clip(coord, size)
    if padding_mode == "reflection":
        if align_corners:
            coord = _reflect(coord, 0, 2 * (size - 1))
        else:
            coord = _reflect(coord, -1, 2 * size - 1)
        return _clip(coord, size)
    return coord


def _gather(x, idx, sizes):
    """``x[n, :, i_1, ..., i_k]`` for integer index arrays ``idx`` (each of the grid's shape
    ``(N, *out)``), zero where an index is out of bounds; result ``(N, C, *out)``."""
    inside = jnp.ones(idx[0].shape, bool)
    clamped = []
    for i, s in zip(idx, sizes):
        inside = inside & (i >= 0) & (i < s)
        clamped.append(jnp.clip(i, 0, s - 1))
    n = jnp.arange(x.shape[0]).reshape((-1,) + (1,) * (idx[0].ndim - 1))
    vals = x[(n, slice(None), *clamped)]  # (N, *out, C): advanced indices first
    vals = jnp.moveaxis(vals, -1, 1)
    return jnp.where(inside[:, None], vals, jnp.zeros((), x.dtype))


def _cubic_coefficients(t):
    a = -0.75
    x1 = t
    c0 = ((a * (x1 + 1) - 5 * a) * (x1 + 1) + 8 * a) * (x1 + 1) - 4 * a
    c1 = ((a + 2) * x1 - (a + 3)) * x1 * x1 + 1
    x2 = 1 - t
    c2 = ((a + 2) * x2 - (a + 3)) * x2 * x2 + 1
    c3 = ((a * (x2 + 1) - 5 * a) * (x2 + 1) + 8 * a) * (x2 + 1) - 4 * a
    return (c0, c1, c2, c3)


def _grid_sample(x, grid, mode, padding_mode, align_corners):
    sizes = x.shape[2:][::-1]  # W, H(, D): the order of the grid's last axis
    coords = [grid[..., k] for k in range(grid.shape[-1])]
    if mode == "bicubic":
        w, h = sizes
        ix = _unnormalize(coords[0], w, align_corners)
        iy = _unnormalize(coords[1], h, align_corners)
        x0, y0 = jnp.floor(ix), jnp.floor(iy)
        cx, cy = _cubic_coefficients(ix - x0), _cubic_coefficients(iy - y0)
        out = 0
        for j in range(4):
            row = 0
            for i in range(4):
                px = _pad_coordinates(x0 - 1 + i, w, padding_mode, align_corners)
                py = _pad_coordinates(y0 - 1 + j, h, padding_mode, align_corners)
                v = _gather(x, [py.astype(jnp.int32), px.astype(jnp.int32)], (h, w))
                row = row + v * cx[i][:, None]
            out = out + row * cy[j][:, None]
        return out
    src = [
        _pad_coordinates(_unnormalize(c, s, align_corners), s, padding_mode, align_corners)
        for c, s in zip(coords, sizes)
    ]
    dims = sizes[::-1]  # H, W or D, H, W: x's spatial order
    if mode == "nearest":
        rounded = [jnp.round(c) for c in src]
        # a NaN or infinite coordinate is out of bounds (PyTorch compares it as a float)
        finite = functools.reduce(jnp.logical_and, [jnp.isfinite(c) for c in rounded])
        idx = [jnp.where(finite, c, -1).astype(jnp.int32) for c in rounded][::-1]
        return _gather(x, idx, dims)
    lows = [jnp.floor(c) for c in src]
    out = 0
    k = len(src)
    for corner in range(2**k):
        weight = 1
        idx = []
        for a in range(k):
            hi = corner >> a & 1
            base = lows[a] + hi
            weight = weight * (src[a] - lows[a] if hi else lows[a] + 1 - src[a])
            idx.append(base.astype(jnp.int32))
        out = out + _gather(x, idx[::-1], dims) * weight[:, None]
    return out


register_ops(
    OpDef(
        "nn.affine_grid",
        _affine_grid,
        "AffineGridGeneratorBackward0",
        ("theta",),
        same,
        saves={"theta": ()},
    ),
    *(
        OpDef(
            f"nn.grid_sampler_{k}d",
            _grid_sample,
            f"GridSampler{k}DBackward0",
            ("input", "grid"),
            _float_kernel_pair(
                "grid_sampler_2d_cpu_kernel_impl" if k == 2 else "grid_sampler3d_cpu"
            ),
            saves={"input": ("input", "grid"), "grid": ("input", "grid")},
        )
        for k in (2, 3)
    ),
)


def affine_grid(theta: Tensor, size, align_corners=None) -> Tensor:
    """The sampling grid of the affine maps ``theta`` (``(N, 2, 3)`` or ``(N, 3, 4)``) for an
    output of ``size`` (``(N, C, H, W)`` or ``(N, C, D, H, W)``), in ``[-1, 1]`` coordinates."""
    if align_corners is None:
        E.warn_above(_ALIGN_WARNING)
        align_corners = False
    if not theta.is_floating_point():
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    given, size = size, tuple(int(s) for s in size)
    if len(size) == 4:
        if theta.dim() != 3 or theta.shape[-2] != 2 or theta.shape[-1] != 3:
            raise ValueError(
                "Expected a batch of 2D affine matrices of shape Nx2x3 for size "
                f"{_size_text(given)}. Got {theta.shape}."
            )
        spatial = size[-2:]
    elif len(size) == 5:
        if theta.dim() != 3 or theta.shape[-2] != 3 or theta.shape[-1] != 4:
            raise ValueError(
                "Expected a batch of 3D affine matrices of shape Nx3x4 for size "
                f"{_size_text(given)}. Got {theta.shape}."
            )
        spatial = size[-3:]
    else:
        raise NotImplementedError(
            "affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
            f"respectively. Got size {_size_text(given)}."
        )
    if align_corners and min(spatial) == 1:
        E.warn_above(
            "Since version 1.3.0, affine_grid behavior has changed for unit-size grids when "
            "align_corners=True. This is not an intended use case of affine_grid. See the "
            "documentation of affine_grid for details."
        )
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {_size_text(given)}")
    if theta.shape[0] != size[0]:  # the bmm of the base grid with theta^T
        k = len(spatial) + 1
        raise RuntimeError(
            "Expected size for first two dimensions of batch2 tensor to be: "
            f"[{size[0]}, {k}] but got: [{theta.shape[0]}, {k}]."
        )
    return dispatch(OPS["nn.affine_grid"], theta, size=size, align_corners=bool(align_corners))


def _size_text(size) -> str:
    """The size as PyTorch's f-string prints what it was given (a list, tuple or Size)."""
    return str(size)


@_autocast.policy("fp32")
def grid_sample(
    input: Tensor,
    grid: Tensor,
    mode: str = "bilinear",
    padding_mode: str = "zeros",
    align_corners=None,
) -> Tensor:
    """Sample ``input`` (``(N, C, H, W)`` or ``(N, C, D, H, W)``) at the ``[-1, 1]``
    coordinates of ``grid`` (``(N, H_out, W_out, 2)`` or ``(N, D_out, H_out, W_out, 3)``)."""
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError(
            "nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or "
            f"'bicubic', but got: '{mode}'"
        )
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError(
            "nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
            f"'reflection', but got: '{padding_mode}'"
        )
    if align_corners is None:
        E.warn_above(_ALIGN_WARNING)
        align_corners = False
    if input.device != grid.device:
        raise RuntimeError(
            "grid_sampler(): expected input and grid to be on same device, but input is on "
            f"{input.device} and grid is on {grid.device}"
        )
    isz, gsz = list(input.shape), list(grid.shape)
    if isz[0] != gsz[0]:
        raise RuntimeError(
            "grid_sampler(): expected grid and input to have same batch size, but got input "
            f"with sizes {isz} and grid with sizes {gsz}"
        )
    if gsz[-1] != input.dim() - 2:
        raise RuntimeError(
            f"grid_sampler(): expected grid to have size {input.dim() - 2} in last dimension, "
            f"but got grid with sizes {gsz}"
        )
    if input.dim() != grid.dim() or input.dim() not in (4, 5):
        raise RuntimeError(
            f"grid_sampler(): expected {4 if input.dim() == 4 else 5}D input and grid with same "
            f"number of dimensions, but got input with sizes {isz} and grid with sizes {gsz}"
        )
    for d in range(2, input.dim()):
        if isz[d] <= 0:
            raise RuntimeError(
                "grid_sampler(): expected input to have non-empty spatial dimensions, but input "
                f"has sizes {isz} with dimension {d} being empty"
            )
    if mode == "bicubic" and input.dim() != 4:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    op = OPS[f"nn.grid_sampler_{input.dim() - 2}d"]
    return dispatch(
        op, input, grid, mode=mode, padding_mode=padding_mode, align_corners=bool(align_corners)
    )
