"""``Tensor.__setitem__`` and ``index_put_``: writes through indexing, as PyTorch records them.

``x[index] = value`` follows PyTorch's ``THPVariable_setitem``: the basic part of the index (ints,
slices, ``None``, ``...``) selects a view, exactly as ``__getitem__`` does; then either the value
is copied into that view (``copy_``; ``fill_`` for a 0-d value, after dropping the value's leading
1-sized dims and expanding it, so the nodes are ``CopyBackwards``/``FillBackward3`` and, when the
view is not ``x`` itself, ``CopySlices`` on ``x``), or, with integer/boolean index tensors,
``index_put_`` writes into the view (``IndexPutBackward0``).

Note [index_put as masked_fill]: below autograd, PyTorch's ``index_put_`` (without accumulate)
with one boolean mask and a one-element CPU value runs ``masked_fill_(mask, value.item())``: the
value may then have any dtype and shape (it is converted as a number), and the node is still
``IndexPutBackward0``.

Note [Writes to expanded tensors]: PyTorch warns and writes through each index into memory, so
every element that shares a written location shows the last value written (or the sum of what
was accumulated). This is done here on the storage root. When autograd records the write, the
node is the out-of-place op's as usual (``CopySlices`` on the base), and backward raises PyTorch's
internal-overlap error, as PyTorch's ``CopySlices`` does writing the gradient into the view.

Note [index_put gradients]: with repeated indices PyTorch keeps the last value written, yet its
backward gives every value the gradient at its position (a gather). JAX's VJP of a scattered
``set`` gives it to the surviving value only, so the forward writes the values with their
gradient stopped and adds, at the written positions, exact zeros whose derivative is the
identity. The zeros are ``-(sg(v) - v)`` (-0.0 for finite v), and adding -0.0 leaves every
value, -0.0 included, bit for bit. (Subtracting a scatter of +0.0 instead would also keep the
values, but its forward-mode tangent, where ``self`` has none, is JAX's negated symbolic zero:
-0.0 where PyTorch's ``self_t.index_put_(indices, values_t)`` has +0.0.)
"""

from __future__ import annotations

import dataclasses
import functools

import jax.numpy as jnp
import numpy as np
from jax import lax

from .. import _dtype as D
from .. import _errors as E
from .. import _storage as S
from .. import _zero, func
from .._tensor import Tensor
from ..autograd import forward_ad, grad_mode
from .api import tensor_op
from .dispatch import _edge, broadcast_shapes, dispatch
from .inplace import (
    _overlaps,
    _shares_within,
    check_inplace,
    check_no_overlap,
    commit,
    copy_,
    fill_,
    inplace,
    record_as_number,
)
from .table import OpDef

INDEX_PUT_DTYPE = (
    "Index put requires the source and destination dtypes match, got {} for the destination "
    "and {} for the source."
)
VALUE_SHAPE = (
    "shape mismatch: value tensor of shape {} cannot be broadcast to indexing result of shape {}"
)
ASSIGN_TYPE = "can't assign a {} to a {}"
_ADVANCED_CPP = (
    " (Triggered internally at "
    "/__w/pytorch/pytorch/aten/src/ATen/native/TensorAdvancedIndexing.cpp:{}.)"
)
INDEX_PUT_EXPANDED = (
    "Use of index_put_ on expanded tensors is deprecated. Please clone() the tensor before "
    "performing this operation. This also applies to advanced indexing e.g. tensor[indices] = "
    "tensor" + _ADVANCED_CPP.format(976)
)
MASKED_FILL_EXPANDED = (
    "Use of masked_fill_ on expanded tensors is deprecated. Please clone() the tensor before "
    "performing this operation. This also applies to advanced indexing e.g. tensor[mask] = "
    "scalar" + _ADVANCED_CPP.format(2450)
)
INDEX_FILL_EXPANDED = (
    "Use of index_fill_ on expanded tensors is deprecated. Please clone() the tensor before "
    "performing this operation. This also applies to advanced indexing e.g. tensor[mask] = "
    "scalar" + _ADVANCED_CPP.format(1913)
)


def _list(shape) -> str:
    return "[" + ", ".join(str(s) for s in shape) + "]"


def _key(ndim, positions, indices):
    key = [slice(None)] * ndim
    for p, i in zip(positions, indices):
        key[p] = i
    return tuple(key)


def _as_dtype(values, dtype):
    if jnp.iscomplexobj(values) and not jnp.issubdtype(dtype, jnp.complexfloating):
        values = jnp.real(values)
    return values.astype(dtype)


def _accumulate(at, values):
    """``at.add(values)``; PyTorch's kernel adds bools as ``+=`` on C++ bools does (an or)."""
    if values.dtype == jnp.bool_:
        return at.max(values)
    return at.add(values)


def _index_put_forward(self, values, *indices, positions, accumulate):
    key = _key(self.ndim, positions, indices)
    shape = jnp.zeros(self.shape, jnp.int8)[key].shape
    if values.size == 1:  # a masked fill's value, of any shape (Note [index_put as masked_fill])
        values = values.reshape(())
    values = jnp.broadcast_to(_as_dtype(values, self.dtype), shape)
    if accumulate:
        return _accumulate(self.at[key], values)
    if not jnp.issubdtype(values.dtype, jnp.inexact):  # no gradient (and no bool subtraction)
        return self.at[key].set(values)
    # Note [index_put gradients]
    finite = jnp.where(jnp.isfinite(values), values, jnp.zeros((), values.dtype))
    zeros = lax.stop_gradient(finite) - finite
    written = self.at[key].set(lax.stop_gradient(values))
    return written.at[key].add(-zeros)


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


@functools.cache
def _index_put_at_value_dtype(k: int) -> OpDef:
    """``index_put`` run at the value's dtype: the node of a float value masked-filled into an
    integer tensor (Note [Written as a number] in ``inplace.py``)."""

    def dtypes(meta, static):
        dt = meta[1][0]
        return (dt,) + (None,) * (len(meta) - 1), dt

    op = _index_put_op(k)
    return dataclasses.replace(op, name="index_put_at_value_dtype", dtypes=dtypes)


def _indexed_shape(shape, tensors) -> tuple:
    """The shape of ``x[index tensors]`` (PyTorch's and NumPy's advanced-indexing rule)."""
    return jnp.zeros(shape, jnp.int8)[
        _key(
            len(shape),
            [p for p, _ in tensors],
            [jnp.zeros(t._data.shape, jnp.int32) for _, t in tensors],
        )
    ].shape


def _index_reads_written(self: Tensor, tensors, values: Tensor, shape) -> bool:
    """Note [Order-dependent writes] in inplace.py for ``index_put_``: whether a value is read
    from a position that another element of the write writes (``x[[0, 1]] = x[:, 0]``), where
    PyTorch's kernel, element after element, reads what it has already written."""
    from .._known import known_values

    if values._data.size == 0 or not S.shares_storage(self, values):
        return False
    indices = []
    for _, t in tensors:
        found, levels = known_values(t._data)
        if found is None or levels:
            return False  # not known on the host: the write is computed as it stands
        indices.append(np.asarray(found))
    written = S.positions(self)[_key(self._data.ndim, [p for p, _ in tensors], indices)]
    try:
        read = np.broadcast_to(S.positions(values), tuple(shape))
    except ValueError:
        return False
    return bool(np.any(np.isin(read, written) & (read != written)))


def _check_fill_value(self: Tensor, values: Tensor) -> None:
    """The errors of ``masked_fill_`` converting ``values.item()`` to ``self``'s dtype."""
    from .shape import checked_item

    checked_item(values.reshape(()), self._dtype)


def _write_expanded(self: Tensor, tensors, values: Tensor, accumulate: bool, record=None) -> Tensor:
    """Note [Writes to expanded tensors]: the write scattered into the storage root. ``record``:
    the recorded out-of-place op whose node ``self`` takes, when autograd records the write."""
    check_inplace(self, record is not None, True, (values, *(t for _, t in tensors)))
    if values._data.size == 1:
        values = values.reshape(())
    value = _as_dtype(values._data, self._data.dtype)

    def write(flat, idx, flip):
        where = idx[_key(idx.ndim, [p for p, _ in tensors], [t._data for _, t in tensors])]
        new = flip(jnp.broadcast_to(value, where.shape)).reshape(-1)
        at = flat.at[where.reshape(-1)]
        return _accumulate(at, new) if accumulate else at.set(new)

    return _write_root(self, record, write, values)


def masked_fill_expanded(self: Tensor, mask: Tensor, value: Tensor, record=None) -> Tensor:
    """Note [Writes to expanded tensors] for ``masked_fill_``: a memory location takes the value
    when any element on it is masked (the others are not written). The caller ran the in-place
    checks."""
    new = _as_dtype(value._data.reshape(()), self._data.dtype)

    def write(flat, idx, flip):
        masked = jnp.broadcast_to(mask._data, idx.shape).reshape(-1)
        hit = jnp.zeros(flat.shape, bool).at[idx.reshape(-1)].max(masked)
        return jnp.where(hit, flip(new), flat)

    return _write_root(self, record, write, value)


def _write_root(self: Tensor, record, write, values: Tensor) -> Tensor:
    """Write into ``self``'s storage root: ``write(flat root, index map, flip)`` gives the new
    flat root (``flip`` conjugates or negates values as the view chain does); ``self`` then
    takes the values its elements now see, and ``record()``'s history."""
    if forward_ad.ACTIVE[0] and (
        forward_ad.tangent_of(self) is not None or forward_ad.tangent_of(values) is not None
    ):
        # PyTorch writes the tangent as the values, element by element of the expanded tangent
        raise NotImplementedError(
            "leafgrad: forward-mode AD through a write to an expanded tensor (elements that "
            "share memory) is not supported"
        )
    before = None if record is None else _edge(self)
    out = None if record is None else record()
    cell = self.__dict__.get("_storage")
    root = self._data if cell is None else cell.data
    chain = S.chain_of(self)
    idx, conj = S.index_map(chain, root.shape)
    flat = S.flat_root(chain, root).reshape(-1)
    root = S.unflat_root(chain, root, write(flat, idx, lambda v: S.flip_values(chain, v, conj)))
    # elements that share memory see one value: the write is uniform over them
    commit(self, S.gather(chain)(root) if chain else root, out, before, True)
    return self


def index_put_at(
    self: Tensor,
    tensors,
    values: Tensor,
    accumulate: bool = False,
    one_mask: bool = False,
    out_of_place: bool = False,
    byte_mask: bool = False,
) -> Tensor:
    """``index_put_`` with ``(dim, integer index tensor)`` pairs (after the basic indexing and
    ``_check_write``); ``one_mask``: they came from a single boolean mask (Note [index_put as
    masked_fill]; ``byte_mask``: a uint8 one, which ``masked_fill_`` refuses); ``out_of_place``:
    ``index_put``, a new tensor (Note [Out-of-place index_put])."""
    from .shape import check_index_tensors

    overlaps = not out_of_place and _overlaps(self)
    if overlaps:
        E.warn(INDEX_PUT_EXPANDED)
    # a single value written through unfold or as_strided windows that share memory: each
    # location written gets it, whichever window wrote it last
    shared = not out_of_place and values.numel() == 1 and _shares_within(self)
    fill = one_mask and not accumulate and values.numel() == 1 and values._device.type == "cpu"
    if not (out_of_place or fill):
        # PyTorch's ``assert_no_overlap(self, value)``, before its kernel's dtype and shape
        # checks: the same tensor overlaps fully, even an expanded one
        check_no_overlap(self, (values,), refuse_full=True)
    if fill:
        if byte_mask:
            from .shape import MASK_BOOL

            raise RuntimeError(MASK_BOOL.format(E.c_type_name(D.uint8)))
        if overlaps:
            E.warn(MASKED_FILL_EXPANDED)
        _check_fill_value(self, values)
    elif values._dtype is not self._dtype:
        raise RuntimeError(
            INDEX_PUT_DTYPE.format(
                E.scalar_type_name(self._dtype), E.scalar_type_name(values._dtype)
            )
        )
    check_index_tensors(self, tensors)
    result_shape = _indexed_shape(self._data.shape, tensors)
    try:
        if not fill and broadcast_shapes(result_shape, values._data.shape) != tuple(result_shape):
            raise RuntimeError
    except RuntimeError:
        raise RuntimeError(
            VALUE_SHAPE.format(_list(values._data.shape), _list(result_shape))
        ) from None
    positions = tuple(p for p, _ in tensors)
    op = _index_put_op(len(tensors))
    idx = [t for _, t in tensors]

    def compute():
        return dispatch(op, self, values, *idx, positions=positions, accumulate=bool(accumulate))

    written = compute
    if fill:  # the value is written as a number (Note [Written as a number] in inplace.py)
        if (
            out_of_place
            and values._requires_grad
            and grad_mode._state.grad_enabled
            and self._dtype._kind not in "fc"
        ):
            # the integer result would take the recorded history (Note [Integer results that
            # require grad] in dispatch.py)
            raise RuntimeError(E.AUTOGRAD_DTYPE.format(E.scalar_type_name(self._dtype)))
        recorded = _index_put_at_value_dtype(len(tensors))

        def written():
            return record_as_number(
                self,
                values,
                recorded,
                compute,
                self,
                values,
                *idx,
                positions=positions,
                accumulate=False,
            )

    if out_of_place:
        return written()
    if not fill and _index_reads_written(self, tensors, values, result_shape):
        raise NotImplementedError(E.ORDER_DEPENDENT_WRITE)
    if overlaps or shared:
        recorded = grad_mode._state.grad_enabled and (self._requires_grad or values._requires_grad)
        return _write_expanded(self, tensors, values, accumulate, compute if recorded else None)
    return inplace(
        self,
        written,
        values,
        *idx,
        overlap=None if fill else "any",
    )


_MASKS = (D.bool_, D.uint8)


def _masked_fill_dispatch(self: Tensor, masks, values: Tensor, accumulate, one_mask) -> bool:
    """PyTorch's ``canDispatchToMaskedFill`` (Note [index_put as masked_fill]): one mask on
    ``self``'s device, no accumulation, one CPU value. Otherwise its ``expandTensors`` warns of
    each uint8 mask, before it checks the masks' shapes."""
    fill = (
        one_mask
        and not accumulate
        and values.numel() == 1
        and values._device.type == "cpu"
        and all(m._device == self._device for m in masks)
    )
    if not fill:
        from .shape import UINT8_INDEX

        for m in masks:
            if m._dtype is D.uint8:
                E.warn(UINT8_INDEX)
    return fill


def _check_write(self: Tensor, values: Tensor, indices) -> None:
    """PyTorch's autograd kernel of ``index_put_`` checks the write (``check_inplace``) before
    its kernel expands the masks and checks the indices and the values."""
    requires_grad = self._requires_grad or values._requires_grad
    check_inplace(self, requires_grad, True, (values, *indices))
    if requires_grad and grad_mode._state.grad_enabled and values._requires_grad:
        # its autograd kernel then collects the values' edge: a view made in no_grad mode whose
        # base was written since raises here, before the kernel checks the shapes
        values.grad_fn  # noqa: B018


def _index_operands(tensors, masks, device) -> list:
    """The index tensors PyTorch's ``index_put_`` receives for ``tensors`` (``(dim, index)``
    pairs, masks as host arrays): the masks given, or a new tensor for a list's mask."""
    masks = iter(masks)
    out = []
    for _, t in tensors:
        if isinstance(t, np.ndarray):
            mask = next(masks, None)
            t = Tensor._make(jnp.asarray(t), D.bool_, device) if mask is None else mask
        out.append(t)
    return out


def _expand_index(x: Tensor, tensors, masks) -> list:
    """``_expand_masks``; the index tensors made from an inference mask are inference tensors, as
    PyTorch's ``index_put_`` receives the mask itself (Note [Inference tensors])."""
    from .shape import _expand_masks

    masks = iter(masks)
    out = []
    for dim, t in tensors:
        pairs = _expand_masks(x, [(dim, t)])
        mask = next(masks, None) if isinstance(t, np.ndarray) else None
        if mask is not None and mask._inference:
            for _, made in pairs:
                made._inference = True
        out.extend(pairs)
    return out


TOO_MANY_INDICES = "too many indices for tensor of dimension {} (got {})"


def _index_put(self, indices, values, accumulate: bool, out_of_place: bool) -> Tensor:
    from .shape import _host_mask, keep_indices

    tensors = [(d, t) for d, t in enumerate(indices) if t is not None]
    if not out_of_place:
        _check_write(self, values, [t for _, t in tensors])
    # PyTorch's kernel counts a mask's dims, any other index one (``expandTensors``)
    used = sum(t.ndim if t._dtype in _MASKS else 1 for t in indices if t is not None)
    if used > self.ndim:
        raise IndexError(TOO_MANY_INDICES.format(self.ndim, used))
    one_mask = len(tensors) == 1 and tensors[0][1]._dtype in _MASKS
    masks = [t for _, t in tensors if t._dtype in _MASKS]
    hosts = [
        (d, _host_mask(t, "index_put_ with a boolean mask") if t._dtype in _MASKS else t)
        for d, t in tensors
    ]
    fill = _masked_fill_dispatch(self, masks, values, accumulate, one_mask)
    out = index_put_at(
        self,
        _expand_index(self, hosts, masks),
        values,
        accumulate,
        fill,
        out_of_place,
        byte_mask=fill and masks[0]._dtype is D.uint8,
    )
    if masks:
        keep_indices(out, lambda: tuple(indices), "IndexPutBackward0")  # as given
    if fill:
        _watch_fill_mask(out, masks)
    return out


def _watch_fill_mask(out: Tensor, masks) -> None:
    """A write run as ``masked_fill_``: its MaskedFillBackward0 saves the mask."""
    from .shape import watch_masks

    node = out._grad_fn
    if node is not None and node.name() == "MaskedFillBackward0" and grad_mode.is_grad_enabled():
        watch_masks(node, masks)


def _refuse_none_index(indices, argument: int) -> None:
    """PyTorch's parser reads ``indices`` as a list of tensors: None is refused there."""
    if isinstance(indices, (list, tuple)):
        for i, t in enumerate(indices):
            if t is None:
                raise TypeError(
                    f"expected Tensor as element {i} in argument {argument}, but got NoneType"
                )


@tensor_op("index_put_", function=False)
def index_put_(self, indices, values, accumulate: bool = False) -> Tensor:
    """``Tensor.index_put_(indices, values, accumulate=False)``."""
    _refuse_none_index(indices, 0)
    return _index_put(self, indices, values, accumulate, out_of_place=False)


# Note [Out-of-place index_put]: PyTorch records ``index_put`` as one op: one IndexPutBackward0
# whose edges are the input's and the values' (no CloneBackward0 between), and the result's
# version is 0 (the clone and the write it runs are below autograd).
@tensor_op("index_put", method=False)
def index_put(input, indices, values, accumulate: bool = False) -> Tensor:
    """``index_put``: ``index_put_`` on a copy of ``input``, recorded as one op."""
    _refuse_none_index(indices, 1)
    return _index_put(input, indices, values, accumulate, out_of_place=True)


@tensor_op("index_put", function=False)
def index_put_method(self, indices, values, accumulate: bool = False) -> Tensor:
    """``Tensor.index_put``."""
    _refuse_none_index(indices, 0)
    return _index_put(self, indices, values, accumulate, out_of_place=True)


# Note [Assigned numbers]: PyTorch's ``valueToTensor`` takes Python numbers and the NumPy scalars
# that are Python ints, floats or complexes to it (``np.int*``, ``np.float64``, ``np.complex128``);
# an integer is read as a C ``long long``, then converted as ``fill_`` converts it (into float16
# and bfloat16 through a double, unchecked from there).
_ASSIGNED_NUMBERS = (int, float, complex, np.integer)
LONG_LONG_OVERFLOW = "Overflow when unpacking long long"


def _value_tensor(self: Tensor, value) -> Tensor:
    """PyTorch's ``valueToTensor``: numbers take ``self``'s dtype and device (Note [Assigned
    numbers])."""
    if isinstance(value, Tensor):
        return value
    if isinstance(value, _ASSIGNED_NUMBERS) and not isinstance(value, np.bool_):
        from .._factories import tensor
        from .shape import checked_number

        if isinstance(value, np.integer):
            value = int(value)
        if isinstance(value, int) and not -(1 << 63) <= value < 1 << 63:
            raise ValueError(LONG_LONG_OVERFLOW)
        # c10's conversion, with its errors; half types are reached through a double
        half = self._dtype in (D.float16, D.bfloat16)
        number = checked_number(value, D.float64 if half else self._dtype)
        with np.errstate(over="ignore"):  # a double beyond a half type's range is infinite
            return tensor(number, dtype=self._dtype, device=self._device)
    from .._tensor import _legacy_type_name

    raise TypeError(ASSIGN_TYPE.format(E.py_typename(value), _legacy_type_name(self)))


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
    copy_(dst, src.view(shape[k:]).expand(dst._data.shape))  # expand's errors are PyTorch's


def _indexes(item) -> bool:
    """Whether an index item may select by tensor (not an int, slice, None or Ellipsis)."""
    return not (item is None or item is Ellipsis or isinstance(item, (slice, int)))


def _setitem(self, index, value) -> None:
    """``x[index] = value``."""
    from .shape import apply_slicing

    _zero.check_write(self, copy=True)  # Note [Zero gradients] in _zero.py
    value = _value_tensor(self, value)
    view, tensors = apply_slicing(self, index, setitem=True, expand=False)
    if func.WRITE_GUARD[0] or func.VMAPS[0]:  # Note [Captured tensors]: the op setitem calls
        same = tuple(view._data.shape) == tuple(value._data.shape)
        items = index if isinstance(index, tuple) else (index,)
        # a Python bool indexes as a new dim, not a mask, in PyTorch's setitem
        advanced = tensors and not all(i is True or i is False for i in items if _indexes(i))
        name = "index_put_" if advanced else "copy_" if same or value.ndim else "fill_.Tensor"
        func.refuse_captured_write(self, name)
        if func.VMAPS[0]:
            func.check_input_write(self if advanced else view)
        with func.writing_as(name):
            _write_at(self, view, tensors, index, value)
        return
    _write_at(self, view, tensors, index, value)


def _write_at(self, view, tensors, index, value) -> None:
    from .shape import keep_indices, mask_slots

    if not tensors:
        _copy_to(view, value)
        return
    if value._device != view._device:
        value = value.to(view._device)
    # PyTorch drops the value's leading 1-sized dims first, as a view (``slicePrefix1sDims``)
    shape = value._data.shape
    k = 0
    while k < len(shape) and shape[k] == 1:
        k += 1
    if k:
        value = value.view(shape[k:])
    one_mask = len(tensors) == 1 and isinstance(tensors[0][1], np.ndarray)
    items = index if isinstance(index, (tuple, list)) else (index,)
    masks = [i for i in items if isinstance(i, Tensor) and i._dtype in _MASKS and i.ndim]
    _check_write(view, value, _index_operands(tensors, masks, view._device))
    fill = _masked_fill_dispatch(view, masks, value, False, one_mask)
    index_put_at(
        view,
        _expand_index(view, tensors, masks),
        value,
        one_mask=fill,
        byte_mask=fill and bool(masks) and masks[0]._dtype is D.uint8,
    )
    if fill:
        _watch_fill_mask(view, masks)
    if any(isinstance(t, np.ndarray) for _, t in tensors):  # the masks as given
        slots = lambda: mask_slots(index, tensors, view._device)  # noqa: E731
        keep_indices(view, slots, "IndexPutBackward0")


tensor_op("__setitem__", function=False)(_setitem)
