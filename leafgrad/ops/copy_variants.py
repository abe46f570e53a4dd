"""The ``*_copy`` variants of the view ops (``torch.view_copy``, ``torch.permute_copy``,
``torch.split_copy``...): the view's values in memory of their own, recorded by the view's node
renamed ``<Node>_copy`` (``ViewBackward0_copy``), as PyTorch's generated copy variants are; the
gradient is the view's.
"""

from __future__ import annotations

from .. import _tensor
from .._storage import kernel_wrote
from .api import refuse_complex_autograd

__all__ = [
    "alias_copy",
    "as_strided_copy",
    "detach_copy",
    "diagonal_copy",
    "expand_copy",
    "permute_copy",
    "select_copy",
    "slice_copy",
    "split_copy",
    "split_with_sizes_copy",
    "squeeze_copy",
    "t_copy",
    "transpose_copy",
    "unbind_copy",
    "unfold_copy",
    "unsqueeze_copy",
    "view_as_real_copy",
    "view_copy",
]


def _own(view):
    """``view``'s values as a tensor of its own, its node renamed ``<Node>_copy``."""
    from ..autograd.graph import node_class

    node = view._grad_fn
    if node is not None and not type(node).__name__.endswith("_copy"):
        node.__class__ = node_class(type(node).__name__ + "_copy")
    from ..autograd import grad_mode

    inference = grad_mode._state.inference
    out = _tensor.Tensor._make(
        view._data,
        view._dtype,
        view._device,
        requires_grad=view._requires_grad,
        grad_fn=node,
        output_nr=view._output_nr,
        inference=inference,
    )
    kernel_wrote((view,), (out, 1))  # PyTorch's out= kernel writes the copy
    from ..autograd import forward_ad

    if forward_ad.ACTIVE[0] and not inference:
        tangent = forward_ad.tangent_of(view)
        if tangent is not None:  # the copy variant's formula: the same view of the tangent, copied
            forward_ad.set_tangents(
                out, _tensor.Tensor._make(tangent._data, tangent._dtype, tangent._device)
            )
    return out


def _owned(views):
    return tuple(_own(v) for v in views)


def view_copy(input, size):
    """``torch.view_copy(input, size)`` (or a dtype)."""
    return _own(input.view(size))


def diagonal_copy(input, offset=0, dim1=0, dim2=1):
    return _own(input.diagonal(offset, dim1, dim2))


def permute_copy(input, dims):
    return _own(input.permute(dims))


def t_copy(input):
    return _own(input.t())


def transpose_copy(input, dim0, dim1):
    return _own(input.transpose(dim0, dim1))


def squeeze_copy(input, dim=None):
    return _own(input.squeeze() if dim is None else input.squeeze(dim))


def unsqueeze_copy(input, dim):
    return _own(input.unsqueeze(dim))


def select_copy(input, dim, index):
    return refuse_complex_autograd(_own(input.select(dim, index)), "select_copy")


def slice_copy(input, dim=0, start=None, end=None, step=1):
    """ATen's ``slice`` (SliceBackward0_copy), a full slice too (indexing makes an alias)."""
    from .._tensor import _wrap_dim
    from .shape import _clamp_slice, _slice_view

    if input.dim() == 0:
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    d = _wrap_dim(dim, input.dim())
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    begin, stop = _clamp_slice(input.shape[d], start, end, step)
    written = {"dim": dim, "start": start, "end": end}
    out = _own(_slice_view(input, d, begin, stop, int(step), written))
    return refuse_complex_autograd(out, "slice_copy")


def expand_copy(input, size, *, implicit=False):
    return _own(input.expand(size))


def as_strided_copy(input, size, stride, storage_offset=None):
    return _own(input.as_strided(size, stride, storage_offset))


def unfold_copy(input, dimension, size, step):
    return _own(input.unfold(dimension, size, step))


def split_copy(input, split_size, dim=0):
    return _owned(input.split(split_size, dim))


def split_with_sizes_copy(input, split_sizes, dim=0):
    return _owned(input.split(list(split_sizes), dim))


def unbind_copy(input, dim=0):
    return _owned(input.unbind(dim))


def alias_copy(input):
    """``torch.alias_copy``: the values, recorded as ``AliasBackward0_copy``."""
    from .dispatch import dispatch
    from .table import OPS

    return _own(dispatch(OPS["alias"], input))


def view_as_real_copy(input):
    from .. import view_as_real

    return _own(view_as_real(input))


def _detach_copy_forward(x):
    from .elementwise import _no_derivative

    return _no_derivative("detach_copy")(x)


def detach_copy(input):
    """``torch.detach_copy``: the values in memory of their own. PyTorch's generated copy
    variant has no derivative: on a tensor that requires grad the result does too, with a
    ``NotImplemented`` node whose backward raises."""
    from .dispatch import dispatch
    from .table import OPS

    return dispatch(OPS["detach_copy"], input)


def _register() -> None:
    from .api import register_ops
    from .table import OpDef, same

    register_ops(OpDef("detach_copy", _detach_copy_forward, "NotImplemented", ("self",), same))


_register()
