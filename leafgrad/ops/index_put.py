"""``Tensor.__setitem__`` and ``index_put_``: writes through indexing, as PyTorch records them.

``x[index] = value`` follows PyTorch's ``THPVariable_setitem``: the basic part of the index (ints,
slices, ``None``, ``...``) selects a view, exactly as ``__getitem__`` does; then either the value
is copied into that view (``copy_``; ``fill_`` for a 0-d value, after dropping the value's leading
1-sized dims and expanding it, so the nodes are ``CopyBackwards``/``FillBackward3`` and, when the
view is not ``x`` itself, ``CopySlices`` on ``x``), or, with integer/boolean index tensors,
``index_put_`` writes into the view (``IndexPutBackward0``).

Note [index_put gradients]: with repeated indices PyTorch keeps the last value written, yet its
backward gives every value the gradient at its position (a gather). JAX's VJP of a scattered
``set`` gives it to the surviving value only, so the forward writes the values with their
gradient stopped and subtracts a scatter-add of exact zeros whose derivative is the gather. The
zeros are ``sg(v) - v`` (+0.0 for finite v), and subtracting +0.0 leaves every value, -0.0
included, bit for bit.
"""

from __future__ import annotations

import functools

import jax.numpy as jnp
from jax import lax

from .. import _dtype as D
from .. import _errors as E
from .._tensor import Tensor
from .api import tensor_op
from .dispatch import broadcast_shapes, dispatch
from .inplace import copy_, fill_, inplace
from .table import OpDef

INDEX_PUT_DTYPE = (
    "Index put requires the source and destination dtypes match, got {} for the destination "
    "and {} for the source."
)
VALUE_SHAPE = (
    "shape mismatch: value tensor of shape {} cannot be broadcast to indexing result of shape {}"
)
EXPAND_SIZE = (
    "The expanded size of the tensor ({}) must match the existing size ({}) at non-singleton "
    "dimension {}.  Target sizes: {}.  Tensor sizes: {}"
)
ASSIGN_TYPE = "can't assign a {} to a {}"


def _list(shape) -> str:
    return "[" + ", ".join(str(s) for s in shape) + "]"


def _key(ndim, positions, indices):
    key = [slice(None)] * ndim
    for p, i in zip(positions, indices):
        key[p] = i
    return tuple(key)


def _index_put_forward(self, values, *indices, positions, accumulate):
    key = _key(self.ndim, positions, indices)
    shape = jnp.zeros(self.shape, jnp.int8)[key].shape
    values = jnp.broadcast_to(values, shape)
    if accumulate:
        return self.at[key].add(values)
    # Note [index_put gradients]
    finite = jnp.where(jnp.isfinite(values), values, jnp.zeros((), values.dtype))
    zeros = lax.stop_gradient(finite) - finite
    written = self.at[key].set(lax.stop_gradient(values))
    return written - jnp.zeros_like(self).at[key].add(zeros)


def _as_self(meta, static):
    return (None,) * len(meta), meta[0][0]


@functools.cache
def _index_put_op(k: int) -> OpDef:
    names = ("self", "values", *(f"indices{j}" for j in range(k)))
    return OpDef(
        "index_put",
        _index_put_forward,
        "IndexPutBackward0",
        names,
        _as_self,
        edges=("self", "values"),
        saves={"self": names[2:], "values": names[2:]},
    )


def _indexed_shape(shape, tensors) -> tuple:
    """The shape of ``x[index tensors]`` (PyTorch's and NumPy's advanced-indexing rule)."""
    return jnp.zeros(shape, jnp.int8)[
        _key(
            len(shape),
            [p for p, _ in tensors],
            [jnp.zeros(t._data.shape, jnp.int32) for _, t in tensors],
        )
    ].shape


def index_put_at(self: Tensor, tensors, values: Tensor, accumulate: bool = False) -> Tensor:
    """``index_put_`` with ``(dim, integer index tensor)`` pairs (after the basic indexing)."""
    from .shape import check_index_tensors

    if values._dtype is not self._dtype:
        raise RuntimeError(
            INDEX_PUT_DTYPE.format(
                E.scalar_type_name(self._dtype), E.scalar_type_name(values._dtype)
            )
        )
    check_index_tensors(self, tensors)
    result_shape = _indexed_shape(self._data.shape, tensors)
    try:
        if broadcast_shapes(result_shape, values._data.shape) != tuple(result_shape):
            raise RuntimeError
    except RuntimeError:
        raise RuntimeError(
            VALUE_SHAPE.format(_list(values._data.shape), _list(result_shape))
        ) from None
    positions = tuple(p for p, _ in tensors)
    op = _index_put_op(len(tensors))
    idx = [t for _, t in tensors]
    return inplace(
        self,
        lambda: dispatch(op, self, values, *idx, positions=positions, accumulate=bool(accumulate)),
        values,
    )


@tensor_op("index_put_", function=False)
def index_put_(self, indices, values, accumulate: bool = False) -> Tensor:
    """``Tensor.index_put_(indices, values, accumulate=False)``."""
    from .shape import _expand_masks

    tensors = [(d, t) for d, t in enumerate(indices) if t is not None]
    masks = []
    for d, t in tensors:
        if t._dtype in (D.bool_, D.uint8):
            from .shape import _host_mask

            masks.append((d, _host_mask(t, "index_put_ with a boolean mask")))
        else:
            masks.append((d, t))
    return index_put_at(self, _expand_masks(self, masks), values, accumulate)


@tensor_op("index_put")
def index_put(input, indices, values, accumulate: bool = False) -> Tensor:
    """``index_put``: ``index_put_`` on a clone."""
    return index_put_(input.clone(), indices, values, accumulate)


def _value_tensor(self: Tensor, value) -> Tensor:
    """PyTorch's ``valueToTensor``: numbers take ``self``'s dtype and device."""
    if isinstance(value, Tensor):
        return value
    if (
        isinstance(value, (bool, int, float, complex))
        or hasattr(value, "dtype")
        and not hasattr(value, "__len__")
    ):
        from .._factories import tensor

        return tensor(value, dtype=self._dtype, device=self._device)
    from .._tensor import _legacy_type_name

    raise TypeError(ASSIGN_TYPE.format(type(value).__name__, _legacy_type_name(self)))


def _copy_to(dst: Tensor, src: Tensor) -> None:
    """PyTorch's ``copy_to``: copy, fill from a 0-d CPU value, or strip, expand and copy."""
    if dst._data.shape == src._data.shape:
        copy_(dst, src)
        return
    if src._data.ndim == 0 and src._device.type == "cpu":
        fill_(dst, src)
        return
    shape = src._data.shape
    k = 0
    while k < len(shape) and shape[k] == 1:
        k += 1
    src = src.view(shape[k:])
    target, sizes = dst._data.shape, src._data.shape
    if len(sizes) > len(target):
        raise RuntimeError(E.INPLACE_SHAPE.format(_list(target), _list(sizes)))
    for i in range(1, len(sizes) + 1):
        if sizes[-i] != target[-i] and sizes[-i] != 1:
            raise RuntimeError(
                EXPAND_SIZE.format(
                    target[-i], sizes[-i], len(target) - i, _list(target), _list(sizes)
                )
            )
    copy_(dst, src.expand(target))


def _setitem(self, index, value) -> None:
    """``x[index] = value``."""
    from .shape import apply_slicing

    value = _value_tensor(self, value)
    view, tensors = apply_slicing(self, index, setitem=True)
    if not tensors:
        _copy_to(view, value)
        return
    if value._device != view._device:
        value = value.to(view._device)
    index_put_at(view, tensors, value)


tensor_op("__setitem__", function=False)(_setitem)
