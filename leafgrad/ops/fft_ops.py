"""The three FFT kernels ``torch.fft`` is built from: ``_fft_c2c``, ``_fft_r2c`` and ``_fft_c2r``.

Note [FFT kernels]: PyTorch's ``torch.fft`` functions are composites (``aten/src/ATen/native/
SpectralOps.cpp``): they promote the input (``ToCopyBackward0``), crop or zero-pad it to the
requested size (``SliceBackward0``, ``ConstantPadNdBackward0``), conjugate where a Hermitian
transform needs it (``ConjBackward0``, ``ConjPhysicalBackward0``) and run one of three kernels
whose nodes are ``FftC2CBackward0``, ``FftR2CBackward0`` and ``FftC2RBackward0``. The kernels take
``normalization`` as an absolute scale (0: none, 1: ``1/sqrt(n)``, 2: ``1/n``, ``n`` the
product of the transformed sizes), apart from the direction. Their VJPs are JAX's.

- ``c2c(x, dim, normalization, forward)``: the DFT over ``dim`` (``forward``: ``exp(-2 pi i..)``).
- ``r2c(x, dim, normalization, onesided)``: the forward DFT of a real input; ``onesided`` keeps
  ``n // 2 + 1`` entries of the last of ``dim``.
- ``c2r(x, dim, normalization, last_dim_size)``: the inverse of a onesided transform. As
  PyTorch's CPU kernel does, several dims run as a c2c over the leading ones, then a one-dim c2r
  over the last (numbers of an input that is not Hermitian are those PyTorch gives).

The results' layout is the CPU kernel's (``_exec_fft``): batch dims outermost, in the input's
stride order, then the transformed dims.
"""

from __future__ import annotations

import jax.numpy as jnp

from .api import register_ops
from .dispatch import dispatch
from .formulas import formula
from .table import OPS, OpDef

# normalization -> jnp's ``norm`` for a forward and for an inverse transform (numpy's names are
# directional: "forward" scales the forward transform by 1/n, "backward" the inverse)
_NORM = {0: ("backward", "forward"), 1: ("ortho", "ortho"), 2: ("forward", "backward")}


def _c2c(x, dim, normalization, forward):
    if not dim:
        return x
    norm = _NORM[normalization][0 if forward else 1]
    fn = jnp.fft.fftn if forward else jnp.fft.ifftn
    return fn(x, axes=dim, norm=norm).astype(x.dtype)


def _r2c(x, dim, normalization, onesided):
    norm = _NORM[normalization][0]
    cdt = jnp.result_type(x.dtype, jnp.complex64)
    if onesided:
        return jnp.fft.rfftn(x, axes=dim, norm=norm).astype(cdt)
    return jnp.fft.fftn(x.astype(cdt), axes=dim, norm=norm)


def _c2r(x, dim, normalization, last_dim_size):
    if len(dim) > 1:
        x = _c2c(x, dim[:-1], normalization, False)
    norm = _NORM[normalization][1]
    rdt = jnp.finfo(x.dtype).dtype
    return jnp.fft.irfft(x, n=last_dim_size, axis=dim[-1], norm=norm).astype(rdt)


def _c2c_rule(meta, static):
    return (None,), meta[0][0]


def _r2c_rule(meta, static):
    return (None,), meta[0][0].to_complex()


def _c2r_rule(meta, static):
    return (None,), meta[0][0].to_real()


register_ops(
    OpDef("fft_c2c", _c2c, "FftC2CBackward0", ("self",), _c2c_rule),
    OpDef("fft_r2c", _r2c, "FftR2CBackward0", ("self",), _r2c_rule, saves={"self": ("self",)}),
    OpDef("fft_c2r", _c2r, "FftC2RBackward0", ("self",), _c2r_rule),
)


def result_strides(in_sizes, in_strides, out_sizes, dim):
    """The strides of a kernel's result (``_exec_fft``): the batch dims sorted by the input's
    strides (largest first), then ``dim`` in its order, laid out contiguously in that order."""
    ndim = len(in_sizes)
    batch = [d for d in range(ndim) if d not in dim]
    batch.sort(key=lambda d: -in_strides[d])
    order = batch + list(dim)
    strides = [0] * ndim
    step = 1
    for d in reversed(order):
        strides[d] = step
        step *= max(out_sizes[d], 1)
    return tuple(strides)


def sorted_dims(strides, dim, exclude_last=False):
    """``_sort_dims``: the transformed dims by the input's strides, largest first (the last one
    kept in place for a onesided transform)."""
    head = list(dim[:-1] if exclude_last else dim)
    head.sort(key=lambda d: -strides[d])
    return tuple(head + ([dim[-1]] if exclude_last else []))


# --- derivative formulas (Note [Graph formulas]), as ``FunctionsManual.cpp`` writes them ----------


def _kernel_grad(op, g, **static):
    return dispatch(OPS[op], g, **static)


@formula("fft_c2c")
def _c2c_grad(ctx):
    s = ctx.static
    inverse = not s["forward"]
    g = _kernel_grad(
        "fft_c2c", ctx.grad, dim=s["dim"], normalization=s["normalization"], forward=inverse
    )
    return {"self": g}


@formula("fft_r2c")
def _r2c_grad(ctx):
    """``fft_r2c_backward``: a onesided gradient zero-filled to the full length, an inverse
    c2c, its real part."""
    s = ctx.static
    g = ctx.grad
    last = s["dim"][-1]
    n = ctx.shape("self")[last]
    if s["onesided"] and n > g.shape[last]:
        full = g.new_zeros((*g.shape[:last], n, *g.shape[last + 1 :]))
        full.narrow(last, 0, g.shape[last]).copy_(g)
        g = full
    g = _kernel_grad("fft_c2c", g, dim=s["dim"], normalization=s["normalization"], forward=False)
    return {"self": g.real}


@formula("fft_c2r")
def _c2r_grad(ctx):
    """``fft_c2r_backward``: a onesided r2c of the gradient, the entries whose mirror image is
    outside the onesided range doubled in place."""
    s = ctx.static
    g = ctx.grad
    last = s["dim"][-1]
    grad = _kernel_grad("fft_r2c", g, dim=s["dim"], normalization=s["normalization"], onesided=True)
    double = g.shape[last] - grad.shape[last]
    if double > 0:
        grad.narrow(last, 1, double).mul_(2)
    return {"self": grad}
