"""PyTorch's derivative formula for ``as_strided`` with create_graph (Note [Graph formulas] in
formulas.py): ``as_strided_backward`` (FunctionsManual.cpp), recorded op for op.

The gradient is written into a new "storage" of zeros laid out as the output (``copy_`` into an
``as_strided`` view of it, a ``CopySlices``; ``index_add_`` where output elements share memory),
divided by how often each position appears in the input where input elements share memory
(``div_``), and read back with the input's geometry (``as_strided``, an ``AsStridedBackward0``).
Output dims of size 1 are squeezed away first, and dims of stride 0 summed.
"""

from __future__ import annotations

import jax
import numpy as np

from .. import _storage as S
from .formulas import formula
from .iterator_layout import contiguous_strides as _contiguous

__all__: list = []


def _maybe_overlapping(sizes, strides) -> bool:
    """PyTorch's ``_maybe_overlapping_memory`` (dims of size 1 already dropped)."""
    reach = 0  # the largest position the dims of smaller strides reach
    for i in sorted(range(len(sizes)), key=lambda i: strides[i]):
        if strides[i] <= reach:
            return True
        reach += strides[i] * (sizes[i] - 1)
    return False


def _min_storage_size(sizes, strides, offset: int) -> int:
    return offset + 1 + sum((n - 1) * st for n, st in zip(sizes, strides))


@formula("as_strided")
def _as_strided(ctx):
    if not ctx.needs("self"):
        return {}
    st = ctx.static
    geometry = (ctx.shape("self"), st["in_stride"], st["in_offset"])
    return {
        "self": as_strided_backward(
            ctx.grad, geometry, st["size"], st["stride"], st["storage_offset"]
        )
    }


@formula("view_chain_gather")
def _view_chain_gather(ctx):
    # the view a ``CopySlices`` reads its gradient through: PyTorch's ``as_strided`` of the base
    # with the view's geometry, so its formula is ``as_strided_backward`` (a chain that is no
    # strided layout of the base's elements, or views complex memory as real, keeps the one-op
    # form)
    if not ctx.needs("self"):
        return {}
    chain = ctx.static["chain"]
    base = ctx.shape("self")
    if S.is_real_view(chain) or S.unit_dtype(chain) is not None:
        return NotImplemented
    if any(op.name in ("conj_view", "neg_view") for op, _, _ in chain):
        return NotImplemented
    layout = _strided_layout(chain, base)
    if layout is None:
        return NotImplemented
    size, stride, offset = layout
    geometry = (base, _contiguous(base), 0)
    return {"self": as_strided_backward(ctx.grad, geometry, size, stride, offset)}


def _strided_layout(chain, base_shape):
    """``(size, stride, offset)`` of the view ``chain`` makes of a contiguous base, or None."""
    idx, _ = S.index_map(chain, base_shape)
    with jax.ensure_compile_time_eval():
        idx = np.asarray(idx)
    size = idx.shape
    if idx.size == 0:
        return size, _contiguous(size), 0
    offset = int(idx.reshape(-1)[0])
    stride = []
    for d, n in enumerate(size):
        if n > 1:
            key = [0] * len(size)
            key[d] = 1
            stride.append(int(idx[tuple(key)]) - offset)
        else:
            stride.append(_contiguous(size)[d])
    if min(stride, default=0) < 0 or not np.array_equal(
        S.strided_positions(size, stride, offset), idx
    ):
        return None
    return size, tuple(stride), offset


def as_strided_backward(g, geometry, size, stride, offset: int):
    """PyTorch's ``as_strided_backward(grad, TensorGeometry(self), size, stride, offset)``,
    recorded."""
    in_size, in_stride, in_offset = geometry
    out_sizes, out_strides = [], []
    for i in reversed(range(len(size))):
        if size[i] == 0:
            return g.new_zeros(tuple(in_size))
        if size[i] == 1:
            g = g.squeeze(i)
        elif stride[i] == 0:
            g = g.sum(i)
        else:
            out_sizes.insert(0, size[i])
            out_strides.insert(0, stride[i])
    out_overlap = _maybe_overlapping(out_sizes, out_strides)
    inp_sizes, inp_strides = [], []
    for i in reversed(range(len(in_size))):
        if in_size[i] == 0:
            return g.new_zeros(tuple(in_size))
        if in_size[i] != 1:
            inp_sizes.insert(0, in_size[i])
            inp_strides.insert(0, in_stride[i])
    inp_overlap = _maybe_overlapping(inp_sizes, inp_strides)
    shared = min(in_offset, offset)
    inp_eff, out_eff = in_offset - shared, offset - shared
    base = max(
        _min_storage_size(inp_sizes, inp_strides, inp_eff),
        _min_storage_size(out_sizes, out_strides, out_eff),
    )
    storage = g.new_zeros((base,))
    full = None
    if inp_overlap or out_overlap:
        from .. import _factories as F

        full = F.arange(0, base, device=g.device)
    if out_overlap:
        idx = full.as_strided(tuple(out_sizes), tuple(out_strides), out_eff).reshape(-1)
        storage.index_add_(0, idx, g.reshape(-1))
    else:
        storage.as_strided(tuple(out_sizes), tuple(out_strides), out_eff).copy_(g)
    if inp_overlap:
        count = storage.new_zeros(storage.shape)
        idx = full.as_strided(tuple(inp_sizes), tuple(inp_strides), inp_eff).reshape(-1)
        count.index_add_(0, idx, storage.new_ones((1,)).expand_as(idx))
        storage.div_(count)
    return storage.as_strided(tuple(in_size), tuple(in_stride), inp_eff)
