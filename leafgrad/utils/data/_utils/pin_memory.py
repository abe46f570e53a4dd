"""``torch.utils.data._utils.pin_memory``: pin every tensor of a batch (Note [DataLoader pinning]
in dataloader.py: each tensor's own ``pin_memory`` decides what happens)."""

from __future__ import annotations

import collections.abc
import copy

from ...._tensor import Tensor


def pin_memory(data, device=None):
    """``data`` with each tensor (and each object with a ``pin_memory`` method) pinned, through
    mappings, tuples and sequences."""
    if isinstance(data, Tensor) or hasattr(data, "pin_memory"):
        return data.pin_memory()
    if isinstance(data, (str, bytes)):
        return data
    if isinstance(data, collections.abc.Mapping):
        try:
            if isinstance(data, collections.abc.MutableMapping):
                clone = copy.copy(data)
                clone.update({k: pin_memory(sample, device) for k, sample in data.items()})
                return clone
            return type(data)({k: pin_memory(sample, device) for k, sample in data.items()})
        except TypeError:
            return {k: pin_memory(sample, device) for k, sample in data.items()}
    if isinstance(data, tuple):
        if hasattr(data, "_fields"):  # namedtuple
            return type(data)(*(pin_memory(sample, device) for sample in data))
        return type(data)(pin_memory(sample, device) for sample in data)
    if isinstance(data, collections.abc.Sequence):
        try:
            if isinstance(data, collections.abc.MutableSequence):
                clone = copy.copy(data)
                for i, item in enumerate(data):
                    clone[i] = pin_memory(item, device)
                return clone
            return type(data)([pin_memory(sample, device) for sample in data])
        except TypeError:
            return [pin_memory(sample, device) for sample in data]
    return data
