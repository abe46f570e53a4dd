"""``torch.utils.data._utils.collate``: turn a list of samples into a batch.

``default_collate`` stacks tensors (``leafgrad.stack`` along a new first dimension, so a batch of
tensors that require grad is recorded as a ``StackBackward0``), makes tensors of Python numbers
(``float`` -> float64, ``int`` -> int64, ``bool`` -> bool, as ``torch.tensor`` of the list), of
NumPy arrays and NumPy scalars (their own dtypes), keeps strings and bytes as lists, and recurses
into mappings, named tuples and sequences (a tuple becomes a list, as in PyTorch). Each type is
looked up in ``default_collate_fn_map``: first the element's exact type, then each key in order
with ``isinstance``. ``default_convert`` (no batching) converts NumPy arrays and scalars only.
"""

from __future__ import annotations

import collections.abc
import copy
import re
from collections.abc import Callable

import numpy as np

from ...._tensor import Tensor

__all__ = [
    "collate",
    "collate_float_fn",
    "collate_int_fn",
    "collate_numpy_array_fn",
    "collate_numpy_scalar_fn",
    "collate_str_fn",
    "collate_tensor_fn",
    "default_collate",
    "default_collate_err_msg_format",
    "default_collate_fn_map",
    "default_convert",
]

# NumPy dtypes whose arrays hold strings or objects: left alone / refused
np_str_obj_array_pattern = re.compile(r"[SaUO]")

default_collate_err_msg_format = (
    "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}"
)
EQUAL_SIZE = "each element in list of batch should be of equal size"
NESTED = (
    "Batches of nested tensors are not currently supported by the default collate_fn; please "
    "provide a custom collate_fn to handle them appropriately."
)
SPARSE = (
    "Batches of sparse tensors are not currently supported by the default collate_fn; please "
    "provide a custom collate_fn to handle them appropriately."
)


def _rebuild_mapping(data, convert):
    """``data`` with each value converted: a copy of the same mapping type where possible."""
    try:
        if isinstance(data, collections.abc.MutableMapping):
            # a copy keeps the mapping type's own attributes
            clone = copy.copy(data)
            clone.update({key: convert(key) for key in data})
            return clone
        return type(data)({key: convert(key) for key in data})
    except TypeError:  # no copy()/update() or no constructor from a dict
        return {key: convert(key) for key in data}


def _rebuild_sequence(data, items):
    """``items`` (``data``'s converted elements) in a copy of ``data``'s sequence type where
    possible, else in a list."""
    try:
        if isinstance(data, collections.abc.MutableSequence):
            clone = copy.copy(data)
            for i, item in enumerate(items):
                clone[i] = item
            return clone
        return type(data)(items)
    except TypeError:  # e.g. range: no copy()/__setitem__ or no constructor from a list
        return items


def default_convert(data):
    """Convert the NumPy arrays (other than string and object arrays) and NumPy scalars in
    ``data`` to tensors, recursing into mappings, named tuples and sequences (a plain tuple
    becomes a list); anything else is returned unchanged."""
    import leafgrad

    elem_type = type(data)
    if isinstance(data, Tensor):
        return data
    if elem_type.__module__ == "numpy" and elem_type.__name__ not in ("str_", "string_"):
        if (
            elem_type.__name__ == "ndarray"
            and np_str_obj_array_pattern.search(data.dtype.str) is not None
        ):
            return data
        return leafgrad.as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        return _rebuild_mapping(data, lambda key: default_convert(data[key]))
    if isinstance(data, tuple) and hasattr(data, "_fields"):  # namedtuple
        return elem_type(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        return _rebuild_sequence(data, [default_convert(d) for d in data])
    return data


def collate(batch, *, collate_fn_map: dict[type | tuple[type, ...], Callable] | None = None):
    """Collate ``batch`` with the functions of ``collate_fn_map`` (keyed by element type), and
    recurse into mappings, named tuples and sequences."""
    elem = batch[0]
    elem_type = type(elem)
    if collate_fn_map is not None:
        if elem_type in collate_fn_map:
            return collate_fn_map[elem_type](batch, collate_fn_map=collate_fn_map)
        for collate_type in collate_fn_map:
            if isinstance(elem, collate_type):
                return collate_fn_map[collate_type](batch, collate_fn_map=collate_fn_map)

    if isinstance(elem, collections.abc.Mapping):
        return _rebuild_mapping(
            elem, lambda key: collate([d[key] for d in batch], collate_fn_map=collate_fn_map)
        )
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # namedtuple
        return elem_type(
            *(collate(samples, collate_fn_map=collate_fn_map) for samples in zip(*batch))
        )
    if isinstance(elem, collections.abc.Sequence):
        it = iter(batch)
        elem_size = len(next(it))
        if not all(len(e) == elem_size for e in it):
            raise RuntimeError(EQUAL_SIZE)
        collated = [collate(samples, collate_fn_map=collate_fn_map) for samples in zip(*batch)]
        if isinstance(elem, tuple):
            return collated  # a list, as in PyTorch
        return _rebuild_sequence(elem, collated)
    raise TypeError(default_collate_err_msg_format.format(elem_type))


def collate_tensor_fn(batch, *, collate_fn_map=None):
    import leafgrad

    elem = batch[0]
    if getattr(elem, "is_nested", False):
        raise RuntimeError(NESTED)
    if elem.layout != leafgrad.strided:
        raise RuntimeError(SPARSE)
    return leafgrad.stack(batch, 0)


def collate_numpy_array_fn(batch, *, collate_fn_map=None):
    import leafgrad

    elem = batch[0]
    if np_str_obj_array_pattern.search(elem.dtype.str) is not None:
        raise TypeError(default_collate_err_msg_format.format(elem.dtype))
    return collate([leafgrad.as_tensor(b) for b in batch], collate_fn_map=collate_fn_map)


def collate_numpy_scalar_fn(batch, *, collate_fn_map=None):
    import leafgrad

    return leafgrad.as_tensor(batch)


def collate_float_fn(batch, *, collate_fn_map=None):
    import leafgrad

    return leafgrad.tensor(batch, dtype=leafgrad.float64)


def collate_int_fn(batch, *, collate_fn_map=None):
    import leafgrad

    return leafgrad.tensor(batch)


def collate_str_fn(batch, *, collate_fn_map=None):
    return batch


default_collate_fn_map: dict[type | tuple[type, ...], Callable] = {
    Tensor: collate_tensor_fn,
    np.ndarray: collate_numpy_array_fn,  # and np.memmap, a subclass
    (np.bool_, np.number, np.object_): collate_numpy_scalar_fn,  # not the string scalars
    float: collate_float_fn,
    int: collate_int_fn,
    str: collate_str_fn,
    bytes: collate_str_fn,
}


def default_collate(batch):
    """Put the samples of ``batch`` together along a new first dimension (see the module's
    docstring for each type); ``DataLoader``'s ``collate_fn`` when it batches."""
    return collate(batch, collate_fn_map=default_collate_fn_map)
