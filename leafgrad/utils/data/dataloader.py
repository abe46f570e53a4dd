"""``torch.utils.data.dataloader``: ``DataLoader`` and its iterators.

The constructor checks its arguments as PyTorch 2.13's does, in the same order and with the same
messages, picks the same samplers (``SequentialSampler``, ``RandomSampler`` for ``shuffle=True``,
wrapped in a ``BatchSampler`` when ``batch_size`` is not None) and the same ``collate_fn``
(``default_collate`` when batching, ``default_convert`` without), and has the same ``len()``.

Note [Loading in the main process]: leafgrad starts no worker processes. With ``num_workers > 0``
every batch is still read and collated in the calling process, by an iterator that otherwise
behaves as PyTorch's multi-process one: for a map-style dataset, the same batches in the same
order (PyTorch's ``in_order=True`` order; ``in_order=False`` changes nothing here, since no
worker can be late), the iterator reused across epochs with ``persistent_workers``, and the
arguments (``prefetch_factor``, ``multiprocessing_context``, ``timeout``) checked as PyTorch
checks them. What a worker process would change is not reproduced:

- ``get_worker_info()`` returns None everywhere (each dataset runs as in the main process), and
  ``worker_init_fn`` is not called (there is no worker to set up);
- an ``IterableDataset`` is read once, as with ``num_workers=0``: PyTorch reads one copy per
  worker (yielding duplicates unless each copy shards itself with ``get_worker_info``) and
  interleaves the workers' batches;
- random numbers drawn inside ``__getitem__``/``__iter__``/``collate_fn`` come from the main
  process's generators, not from per-worker generators seeded with ``base_seed + worker_id``;
- changes a dataset makes to itself while loading are seen by the caller (a worker changes its
  own copy).

Note [DataLoader pinning]: ``pin_memory=True`` behaves as in PyTorch on a machine without an
accelerator: the iterator warns ("'pin_memory' argument is set as true but no accelerator is
found, ...") and returns unpinned batches. Where ``leafgrad.accelerator.is_available()`` (a GPU,
or the virtual cuda device) PyTorch would pin each batch; leafgrad has no pinned host memory
(``Tensor.pin_memory`` raises there), so the iterator warns that the batches stay unpinned and
returns them as they are: the same values, where pinning would only have sped up the copies to
the device. A script written for a GPU keeps running; ``batch.is_pinned()`` says False.

Note [Loader random draws]: leafgrad's CPU generator reproduces PyTorch's numbers (``_random.py``),
and the loader consumes it exactly as PyTorch's does, so after the same ``manual_seed`` a shuffled
loader visits the same order as PyTorch's, and the random numbers a training loop draws between
batches (dropout masks, ...) are the same too. Each new iterator draws one ``random_()`` from
``generator`` (or the default generator) for the workers' base seed, even with
``num_workers=0``; a ``RandomSampler`` without a generator then draws its own seed from the
default generator when its pass starts (Note in sampler.py).
"""

from __future__ import annotations

import collections
import math
import multiprocessing as python_multiprocessing
import os
import warnings
from collections.abc import Callable, Iterable
from typing import Any, Generic, TypeVar

from . import _utils
from .dataset import Dataset, IterableDataset
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler

__all__ = ["DataLoader", "get_worker_info", "default_collate", "default_convert"]

_T_co = TypeVar("_T_co", covariant=True)

default_collate = _utils.collate.default_collate
default_convert = _utils.collate.default_convert
get_worker_info = _utils.worker.get_worker_info

# --- PyTorch's messages -------------------------------------------------------------------------
NUM_WORKERS = (
    "num_workers option should be non-negative; use num_workers=0 to disable multiprocessing."
)
TIMEOUT = "timeout option should be non-negative"
PREFETCH_WITHOUT_WORKERS = (
    "prefetch_factor option could only be specified in multiprocessing.let num_workers > 0 to "
    "enable multiprocessing, otherwise set prefetch_factor to None."
)
PREFETCH_NEGATIVE = "prefetch_factor option should be non-negative"
PERSISTENT = "persistent_workers option needs num_workers > 0"
ITERABLE_SHUFFLE = (
    "DataLoader with IterableDataset: expected unspecified shuffle option, but got shuffle={}"
)
ITERABLE_SAMPLER = (
    "DataLoader with IterableDataset: expected unspecified sampler option, but got sampler={}"
)
ITERABLE_BATCH_SAMPLER = (
    "DataLoader with IterableDataset: expected unspecified batch_sampler option, but got "
    "batch_sampler={}"
)
SAMPLER_SHUFFLE = "sampler option is mutually exclusive with shuffle"
BATCH_SAMPLER_EXCLUSIVE = (
    "batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, and drop_last"
)
NO_BATCH_DROP_LAST = (
    "batch_size=None option disables auto-batching and is mutually exclusive with drop_last"
)
CONTEXT_START_METHOD = (
    "multiprocessing_context option should specify a valid start method in {methods!r}, but got "
    "multiprocessing_context={context!r}"
)
CONTEXT_TYPE = (
    "multiprocessing_context option should be a valid context object or a string specifying the "
    "start method, but got multiprocessing_context={context}"
)
CONTEXT_NO_WORKERS = (
    "multiprocessing_context can only be used with multi-process loading (num_workers > 0), but "
    "got num_workers={num_workers}"
)
SET_AFTER_INIT = "{attr} attribute should not be set after {cls} is initialized"
PIN_DEVICE_DEPRECATED = (
    "pin_memory_device is deprecated, the current accelerator will be used as the device,ignore "
    "pin_memory_device='{device}'."
)
PIN_NO_ACCELERATOR = (
    "'pin_memory' argument is set as true but no accelerator is found, then device pinned memory "
    "won't be used."
)
ITERABLE_LENGTH = (
    "Length of IterableDataset {dataset} was reported to be {length}(when accessing "
    "len(dataloader)), but {count} samples have been fetched. "
)
ITERABLE_LENGTH_WORKERS = (
    "For multiprocessing data-loading, this could be caused by not properly configuring the "
    "IterableDataset replica at each worker. Please see "
    "https://pytorch.org/docs/stable/data.html#torch.utils.data.IterableDataset for examples."
)
SINGLE_TIMEOUT = "_SingleProcessDataLoaderIter requires timeout == 0"
SINGLE_WORKERS = "_SingleProcessDataLoaderIter requires num_workers == 0"
WORKERS_WARNING = (
    "This DataLoader will create {created} worker processes in total. {suggestion} Please be "
    "aware that excessive worker creation might get DataLoader running slow or even freeze, lower "
    "the worker number to avoid potential slowness/freeze if necessary."
)
WORKERS_SUGGESTED = (
    "Our suggested max number of worker in current system is {suggest}{cpuset}, which is smaller "
    "than what this DataLoader is going to create."
)
WORKERS_NO_SUGGESTION = (
    "DataLoader is not able to compute a suggested max number of worker in current system."
)
PIN_UNPINNED = (
    "leafgrad: 'pin_memory' is set but leafgrad has no pinned host memory: the batches are given "
    "unpinned (the same values; pinning only speeds up copies to the device)."
)


class _DatasetKind:
    Map = 0
    Iterable = 1

    @staticmethod
    def create_fetcher(kind, dataset, auto_collation, collate_fn, drop_last):
        if kind == _DatasetKind.Map:
            return _utils.fetch._MapDatasetFetcher(dataset, auto_collation, collate_fn, drop_last)
        return _utils.fetch._IterableDatasetFetcher(dataset, auto_collation, collate_fn, drop_last)


class _InfiniteConstantSampler(Sampler):
    """None forever: the sampler of an iterable dataset (its batches are as long as the index
    lists a ``BatchSampler`` makes of these)."""

    def __iter__(self):
        while True:
            yield None


def _cpu_count() -> int | None:
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count()


class DataLoader(Generic[_T_co]):
    """Batches (or single samples) of ``dataset``, in the order of a sampler.

    The arguments are PyTorch's, checked as PyTorch checks them. ``num_workers > 0`` loads in
    the main process, giving the same batches in the same order as PyTorch's workers would for a
    map-style dataset (Note [Loading in the main process]); ``pin_memory=True`` warns and does
    not pin without an accelerator (Note [DataLoader pinning]); ``shuffle=True`` uses a
    ``RandomSampler`` with ``generator``, whose order after a given seed is PyTorch's (Note
    [Loader random draws]).
    """

    __initialized = False

    def __init__(
        self,
        dataset: Dataset[_T_co],
        batch_size: int | None = 1,
        shuffle: bool | None = None,
        sampler: Sampler | Iterable | None = None,
        batch_sampler: Sampler[list] | Iterable[list] | None = None,
        num_workers: int = 0,
        collate_fn: Callable[[list], Any] | None = None,
        pin_memory: bool = False,
        drop_last: bool = False,
        timeout: float = 0,
        worker_init_fn: Callable[[int], None] | None = None,
        multiprocessing_context=None,
        generator=None,
        *,
        prefetch_factor: int | None = None,
        persistent_workers: bool = False,
        pin_memory_device: str = "",
        in_order: bool = True,
    ) -> None:
        if num_workers < 0:
            raise ValueError(NUM_WORKERS)
        if timeout < 0:
            raise ValueError(TIMEOUT)
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError(PREFETCH_WITHOUT_WORKERS)
        elif num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        elif prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError(PREFETCH_NEGATIVE)
        if persistent_workers and num_workers == 0:
            raise ValueError(PERSISTENT)

        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.in_order = in_order

        # the dataset's kind is checked before the samplers (PyTorch's order of errors)
        if isinstance(dataset, IterableDataset):
            self._dataset_kind = _DatasetKind.Iterable
            # shuffle=False was once the default, so only a true value is refused
            if shuffle not in {False, None}:
                raise ValueError(ITERABLE_SHUFFLE.format(shuffle))
            if sampler is not None:
                raise ValueError(ITERABLE_SAMPLER.format(sampler))
            elif batch_sampler is not None:
                raise ValueError(ITERABLE_BATCH_SAMPLER.format(batch_sampler))
        else:
            shuffle = bool(shuffle)
            self._dataset_kind = _DatasetKind.Map

        if sampler is not None and shuffle:
            raise ValueError(SAMPLER_SHUFFLE)

        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError(BATCH_SAMPLER_EXCLUSIVE)
            batch_size = None
            drop_last = False
        elif batch_size is None and drop_last:
            raise ValueError(NO_BATCH_DROP_LAST)

        if sampler is None:
            if self._dataset_kind == _DatasetKind.Iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)

        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)

        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator

        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers

        self.__initialized = True
        self._IterableDataset_len_called = None
        self._iterator = None
        self.check_worker_number_rationality()

    def _get_iterator(self) -> _BaseDataLoaderIter:
        if self.num_workers == 0:
            return _SingleProcessDataLoaderIter(self)
        self.check_worker_number_rationality()
        return _MultiProcessingDataLoaderIter(self)

    @property
    def multiprocessing_context(self):
        return self.__multiprocessing_context

    @multiprocessing_context.setter
    def multiprocessing_context(self, multiprocessing_context) -> None:
        if multiprocessing_context is not None:
            if self.num_workers > 0:
                if isinstance(multiprocessing_context, str):
                    methods = python_multiprocessing.get_all_start_methods()
                    if multiprocessing_context not in methods:
                        raise ValueError(
                            CONTEXT_START_METHOD.format(
                                methods=methods, context=multiprocessing_context
                            )
                        )
                    multiprocessing_context = python_multiprocessing.get_context(
                        multiprocessing_context
                    )
                if not isinstance(
                    multiprocessing_context, python_multiprocessing.context.BaseContext
                ):
                    raise TypeError(CONTEXT_TYPE.format(context=multiprocessing_context))
            else:
                raise ValueError(CONTEXT_NO_WORKERS.format(num_workers=self.num_workers))
        self.__multiprocessing_context = multiprocessing_context

    def __setattr__(self, attr, val) -> None:
        if self.__initialized and attr in (
            "batch_size",
            "batch_sampler",
            "sampler",
            "drop_last",
            "dataset",
            "persistent_workers",
        ):
            raise ValueError(SET_AFTER_INIT.format(attr=attr, cls=self.__class__.__name__))
        super().__setattr__(attr, val)

    def __iter__(self) -> _BaseDataLoaderIter:
        # a new iterator per epoch, except with persistent workers: one, reset each epoch
        if self.persistent_workers and self.num_workers > 0:
            if self._iterator is None:
                self._iterator = self._get_iterator()
            else:
                self._iterator._reset(self)
            return self._iterator
        return self._get_iterator()

    @property
    def _auto_collation(self):
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        # what the fetcher is given each step: a list of keys when batching, else one key
        return self.batch_sampler if self._auto_collation else self.sampler

    def __len__(self) -> int:
        if self._dataset_kind == _DatasetKind.Iterable:
            # the dataset's own length (TypeError without one), remembered so that the iterator
            # warns when the dataset yields more than it said
            length = self._IterableDataset_len_called = len(self.dataset)
            if self.batch_size is not None:
                if self.drop_last:
                    length = length // self.batch_size
                else:
                    length = math.ceil(length / self.batch_size)
            return length
        return len(self._index_sampler)

    def check_worker_number_rationality(self) -> None:
        """PyTorch's warning when ``num_workers`` exceeds the CPUs this process may use."""
        if not self.num_workers:
            return
        suggest = _cpu_count()
        if suggest is None or self.num_workers > suggest:
            if suggest is None:
                suggestion = WORKERS_NO_SUGGESTION
            else:
                cpuset = (
                    ""
                    if hasattr(os, "sched_getaffinity")
                    else " (`cpuset` is not taken into account)"
                )
                suggestion = WORKERS_SUGGESTED.format(suggest=suggest, cpuset=cpuset)
            warnings.warn(
                WORKERS_WARNING.format(created=self.num_workers, suggestion=suggestion),
                stacklevel=2,
            )


class _BaseDataLoaderIter:
    def __init__(self, loader: DataLoader) -> None:
        import leafgrad

        self._dataset = loader.dataset
        self._shared_seed = None
        self._pg = None
        self._dataset_kind = loader._dataset_kind
        self._IterableDataset_len_called = loader._IterableDataset_len_called
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._index_sampler = loader._index_sampler
        self._num_workers = loader.num_workers
        self._world_size, self._rank = 1, 0

        # Note [DataLoader pinning]
        if loader.pin_memory and loader.pin_memory_device:
            warnings.warn(
                PIN_DEVICE_DEPRECATED.format(device=loader.pin_memory_device), stacklevel=2
            )
        available = leafgrad.accelerator.is_available()
        if loader.pin_memory and not available:
            warnings.warn(PIN_NO_ACCELERATOR, stacklevel=2)
        elif loader.pin_memory:
            warnings.warn(PIN_UNPINNED, stacklevel=2)
        self._pin_memory = False  # leafgrad has no pinned host memory
        self._pin_memory_device = None

        self._timeout = loader.timeout
        self._collate_fn = loader.collate_fn
        self._sampler_iter = iter(self._index_sampler)
        # Note [Loader random draws]: PyTorch's workers' base seed, drawn for every iterator
        self._base_seed = (
            leafgrad.empty((), dtype=leafgrad.int64).random_(generator=loader.generator).item()
        )
        self._persistent_workers = loader.persistent_workers
        self._num_yielded = 0

    def __iter__(self):
        return self

    def _reset(self, loader, first_iter=False) -> None:
        self._sampler_iter = iter(self._index_sampler)
        self._num_yielded = 0
        self._IterableDataset_len_called = loader._IterableDataset_len_called

    def _next_index(self):
        return next(self._sampler_iter)  # may raise StopIteration

    def _next_data(self):
        raise NotImplementedError

    def __next__(self) -> Any:
        data = self._next_data()
        self._num_yielded += 1
        if (
            self._dataset_kind == _DatasetKind.Iterable
            and self._IterableDataset_len_called is not None
            and self._num_yielded > self._IterableDataset_len_called
        ):
            msg = ITERABLE_LENGTH.format(
                dataset=self._dataset,
                length=self._IterableDataset_len_called,
                count=self._num_yielded,
            )
            if self._num_workers > 0:
                msg += ITERABLE_LENGTH_WORKERS
            warnings.warn(msg, stacklevel=2)
        return data

    def __len__(self) -> int:
        return len(self._index_sampler)

    def __getstate__(self):
        raise NotImplementedError("{} cannot be pickled", self.__class__.__name__)


class _SingleProcessDataLoaderIter(_BaseDataLoaderIter):
    """One pass over the loader, reading each batch when it is asked for."""

    def __init__(self, loader) -> None:
        super().__init__(loader)
        if self._timeout != 0:
            raise AssertionError(SINGLE_TIMEOUT)
        if self._num_workers != 0:
            raise AssertionError(SINGLE_WORKERS)
        self._dataset_fetcher = self._new_fetcher()

    def _new_fetcher(self):
        return _DatasetKind.create_fetcher(
            self._dataset_kind,
            self._dataset,
            self._auto_collation,
            self._collate_fn,
            self._drop_last,
        )

    def _next_data(self):
        index = self._next_index()  # may raise StopIteration
        data = self._dataset_fetcher.fetch(index)  # may raise StopIteration
        if self._pin_memory:
            data = _utils.pin_memory.pin_memory(data, self._pin_memory_device)
        return data


class _MultiProcessingDataLoaderIter(_SingleProcessDataLoaderIter):
    """The iterator of a loader with ``num_workers > 0``: it loads in the main process, the
    batches of a map-style dataset in PyTorch's order (Note [Loading in the main process])."""

    def __init__(self, loader) -> None:
        _BaseDataLoaderIter.__init__(self, loader)
        self._prefetch_factor = loader.prefetch_factor
        self._in_order = loader.in_order
        self._dataset_fetcher = self._new_fetcher()
        self._prefetch()

    def _prefetch(self) -> None:
        """PyTorch's iterator hands ``prefetch_factor * num_workers`` indices to its workers as
        it starts, so the sampler starts (a ``RandomSampler`` draws its seed) before the first
        batch is asked for (Note [Loader random draws])."""
        self._pending: collections.deque = collections.deque()
        for _ in range(self._prefetch_factor * self._num_workers):
            try:
                self._pending.append(next(self._sampler_iter))
            except StopIteration:
                break

    def _next_index(self):
        if self._pending:
            return self._pending.popleft()
        return next(self._sampler_iter)

    def _reset(self, loader, first_iter=False) -> None:
        super()._reset(loader, first_iter)
        self._dataset_fetcher = self._new_fetcher()  # a new pass over an iterable dataset
        self._prefetch()
