"""``torch.utils.data.dataset``: map-style and iterable-style datasets, their compositions and
``random_split``, with PyTorch 2.13's checks and messages.

``random_split`` draws one ``randperm`` from the generator (the default CPU generator unless one
is given), as PyTorch does; leafgrad's generator reproduces PyTorch's numbers (Note [Loader random
draws] in dataloader.py), so the same seed gives the same subsets.
"""

from __future__ import annotations

import bisect
import itertools
import math
import warnings
from collections.abc import Sequence
from typing import Generic, Iterable, TypeVar  # noqa: UP035 (Iterable is a Generic base here)

from ..._random import default_generator

__all__ = [
    "Dataset",
    "IterableDataset",
    "TensorDataset",
    "StackDataset",
    "ConcatDataset",
    "ChainDataset",
    "Subset",
    "random_split",
]

_T = TypeVar("_T")
_T_co = TypeVar("_T_co", covariant=True)

SIZE_MISMATCH_TENSORS = "Size mismatch between tensors"
SIZE_MISMATCH_DATASETS = "Size mismatch between datasets"
STACK_BOTH = (
    "Supported either ``tuple``- (via ``args``) or``dict``- (via ``kwargs``) like input/output, "
    "but both types are given."
)
STACK_NONE = "At least one dataset should be passed"
NESTED_SIZE = "Nested dataset's output size mismatch. Expected {expected}, got {got}"
CONCAT_EMPTY = "datasets should not be an empty iterable"
CONCAT_ITERABLE = "ConcatDataset does not support IterableDataset"
CONCAT_NEGATIVE = "absolute value of index should not exceed dataset length"
CUMMULATIVE = "`cummulative_sizes` attribute is renamed to `cumulative_sizes`"
CHAIN_ITERABLE = "ChainDataset only supports IterableDataset"
SUBSET_GETITEMS = (
    "{name} overrides __getitem__ but not __getitems__. When subclassing Subset and overriding "
    "__getitem__, you must also override __getitems__ to ensure DataLoader works correctly with "
    "your custom logic. A simple implementation:\n\n"
    "def __getitems__(self, indices):\n"
    "    return [self.__getitem__(idx) for idx in indices]"
)
SPLIT_FRACTION = "Fraction at index {i} is not between 0 and 1"
SPLIT_EMPTY = "Length of split at index {i} is 0. This might result in an empty dataset."
SPLIT_SUM = "Sum of input lengths does not equal the length of the input dataset!"


class Dataset(Generic[_T_co]):
    """A map from keys to samples: subclasses define ``__getitem__`` (and usually ``__len__``;
    optionally ``__getitems__``, a list of samples for a list of keys, which ``DataLoader`` then
    calls once per batch)."""

    def __getitem__(self, index) -> _T_co:
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    # No __getitems__ here: DataLoader's fetcher calls it whenever a dataset has one.
    # No __len__ either (as in PyTorch): len() of a dataset without one raises TypeError.

    def __add__(self, other: Dataset[_T_co]) -> ConcatDataset[_T_co]:
        return ConcatDataset([self, other])


class IterableDataset(Dataset[_T_co], Iterable[_T_co]):
    """A stream of samples: subclasses define ``__iter__``. ``DataLoader`` reads it in the main
    process (Note [Loading in the main process] in dataloader.py)."""

    def __add__(self, other: Dataset[_T_co]):
        return ChainDataset([self, other])


class TensorDataset(Dataset[tuple]):
    """Samples are the rows of ``tensors`` (indexed along their first dimension)."""

    def __init__(self, *tensors) -> None:
        if any(tensors[0].size(0) != tensor.size(0) for tensor in tensors):
            raise AssertionError(SIZE_MISMATCH_TENSORS)
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(tensor[index] for tensor in self.tensors)

    def __len__(self) -> int:
        return self.tensors[0].size(0)


class StackDataset(Dataset[_T_co]):
    """The samples of several datasets of one length side by side: a tuple for positional
    datasets, a dict for keyword ones."""

    def __init__(self, *args: Dataset[_T_co], **kwargs: Dataset[_T_co]) -> None:
        if args:
            if kwargs:
                raise ValueError(STACK_BOTH)
            self._length = len(args[0])
            if any(self._length != len(dataset) for dataset in args):
                raise ValueError(SIZE_MISMATCH_DATASETS)
            self.datasets = args
        elif kwargs:
            values = list(kwargs.values())
            self._length = len(values[0])
            if any(self._length != len(dataset) for dataset in values):
                raise ValueError(SIZE_MISMATCH_DATASETS)
            self.datasets = kwargs
        else:
            raise ValueError(STACK_NONE)

    def __getitem__(self, index):
        if isinstance(self.datasets, dict):
            return {k: dataset[index] for k, dataset in self.datasets.items()}
        return tuple(dataset[index] for dataset in self.datasets)

    @staticmethod
    def _column(dataset, indices: list) -> list:
        """``dataset``'s samples at ``indices``, batched where the dataset batches."""
        if callable(getattr(dataset, "__getitems__", None)):
            items = dataset.__getitems__(indices)
            if len(items) != len(indices):
                raise ValueError(NESTED_SIZE.format(expected=len(indices), got=len(items)))
            return list(items)
        return [dataset[idx] for idx in indices]

    def __getitems__(self, indices: list):
        if isinstance(self.datasets, dict):
            batch: list[dict] = [{} for _ in indices]
            for k, dataset in self.datasets.items():
                for sample, data in zip(batch, self._column(dataset, indices)):
                    sample[k] = data
            return batch
        columns = [self._column(dataset, indices) for dataset in self.datasets]
        return [tuple(row) for row in zip(*columns)]

    def __len__(self) -> int:
        return self._length


class ConcatDataset(Dataset[_T_co]):
    """The datasets one after another; a negative index counts from the end."""

    @staticmethod
    def cumsum(sequence):
        r, s = [], 0
        for e in sequence:
            n = len(e)
            r.append(n + s)
            s += n
        return r

    def __init__(self, datasets: Iterable[Dataset]) -> None:
        super().__init__()
        self.datasets = list(datasets)
        if len(self.datasets) == 0:
            raise AssertionError(CONCAT_EMPTY)
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise AssertionError(CONCAT_ITERABLE)
        self.cumulative_sizes = self.cumsum(self.datasets)

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx):
        if idx < 0:
            if -idx > len(self):
                raise ValueError(CONCAT_NEGATIVE)
            idx = len(self) + idx
        dataset_idx = bisect.bisect_right(self.cumulative_sizes, idx)
        if dataset_idx == 0:
            sample_idx = idx
        else:
            sample_idx = idx - self.cumulative_sizes[dataset_idx - 1]
        return self.datasets[dataset_idx][sample_idx]

    @property
    def cummulative_sizes(self):
        warnings.warn(CUMMULATIVE, FutureWarning, stacklevel=2)
        return self.cumulative_sizes


class ChainDataset(IterableDataset):
    """Iterable datasets one after another, chained as they are read."""

    def __init__(self, datasets: Iterable[Dataset]) -> None:
        super().__init__()
        self.datasets = datasets

    def __iter__(self):
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError(CHAIN_ITERABLE)
            yield from d

    def __len__(self) -> int:
        total = 0
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError(CHAIN_ITERABLE)
            total += len(d)
        return total


class Subset(Dataset[_T_co]):
    """The samples of ``dataset`` at ``indices``. A subclass that overrides ``__getitem__`` must
    override ``__getitems__`` too (PyTorch's check)."""

    def __init__(self, dataset: Dataset[_T_co], indices: Sequence[int]) -> None:
        self.dataset = dataset
        self.indices = indices
        if (
            type(self).__getitem__ is not Subset.__getitem__
            and type(self).__getitems__ is Subset.__getitems__
        ):
            raise NotImplementedError(SUBSET_GETITEMS.format(name=type(self).__name__))

    def __getitem__(self, idx):
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices: list[int]) -> list[_T_co]:
        if callable(getattr(self.dataset, "__getitems__", None)):
            return self.dataset.__getitems__([self.indices[idx] for idx in indices])
        return [self.dataset[self.indices[idx]] for idx in indices]

    def __len__(self) -> int:
        return len(self.indices)


def random_split(
    dataset: Dataset[_T], lengths: Sequence[int | float], generator=default_generator
) -> list[Subset[_T]]:
    """Split ``dataset`` into non-overlapping ``Subset``s of the given ``lengths``, or of the
    given fractions of its length (summing to 1): each gets ``floor(fraction * len)`` and what is
    left is handed out one by one, round-robin from the first split."""
    import leafgrad

    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        subset_lengths: list[int] = []
        for i, frac in enumerate(lengths):
            if frac < 0 or frac > 1:
                raise ValueError(SPLIT_FRACTION.format(i=i))
            subset_lengths.append(math.floor(len(dataset) * frac))
        remainder = len(dataset) - sum(subset_lengths)
        for i in range(remainder):
            subset_lengths[i % len(subset_lengths)] += 1
        lengths = subset_lengths
        for i, length in enumerate(lengths):
            if length == 0:
                warnings.warn(SPLIT_EMPTY.format(i=i), stacklevel=2)
    if sum(lengths) != len(dataset):
        raise ValueError(SPLIT_SUM)
    indices = leafgrad.randperm(sum(lengths), generator=generator).tolist()
    return [
        Subset(dataset, indices[offset - length : offset])
        for offset, length in zip(itertools.accumulate(lengths), lengths)
    ]
