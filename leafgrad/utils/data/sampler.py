"""``torch.utils.data.sampler``: the index samplers, with PyTorch 2.13's checks and messages.

The random samplers draw from leafgrad's generator exactly as PyTorch's draw from its own
(Note [Loader random draws] in dataloader.py): ``RandomSampler`` without a generator seeds a fresh
one from one draw of the default generator per pass; with replacement it draws ``randint`` in
chunks of 32, without it one ``randperm`` per pass over the data.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Sequence, Sized
from typing import Generic, TypeVar

__all__ = [
    "BatchSampler",
    "RandomSampler",
    "Sampler",
    "SequentialSampler",
    "SubsetRandomSampler",
    "WeightedRandomSampler",
]

_T_co = TypeVar("_T_co", covariant=True)

REPLACEMENT_BOOL = "replacement should be a boolean value, but got replacement={value}"
NUM_SAMPLES = "num_samples should be a positive integer value, but got num_samples={value}"
WEIGHTS_1D = "weights should be a 1d sequence but given weights have shape {shape}"
BATCH_SIZE = "batch_size should be a positive integer value, but got batch_size={value}"
DROP_LAST = "drop_last should be a boolean value, but got drop_last={value}"


class Sampler(Generic[_T_co]):
    """Base class of samplers: ``__iter__`` yields indices (or lists of indices, for a batch
    sampler); ``__len__`` is optional, and deliberately not defined here (as in PyTorch, so that
    ``len()`` of a sampler without one raises ``TypeError``)."""

    def __iter__(self) -> Iterator[_T_co]:
        raise NotImplementedError


class SequentialSampler(Sampler[int]):
    """``0, 1, ..., len(data_source) - 1``."""

    def __init__(self, data_source: Sized) -> None:
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


def _fresh_generator():
    """A generator seeded with one draw of the default generator (PyTorch's RandomSampler)."""
    import leafgrad

    seed = int(leafgrad.empty((), dtype=leafgrad.int64).random_().item())
    generator = leafgrad.Generator()
    generator.manual_seed(seed)
    return generator


class RandomSampler(Sampler[int]):
    """A shuffled pass over ``data_source`` (``num_samples`` longer than the data takes several
    permutations), or ``num_samples`` indices drawn with ``replacement``."""

    def __init__(
        self,
        data_source: Sized,
        replacement: bool = False,
        num_samples: int | None = None,
        generator=None,
    ) -> None:
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(self.replacement, bool):
            raise TypeError(REPLACEMENT_BOOL.format(value=self.replacement))
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError(NUM_SAMPLES.format(value=self.num_samples))

    @property
    def num_samples(self) -> int:
        # the dataset's size may change after the sampler is made
        if self._num_samples is None:
            return len(self.data_source)
        return self._num_samples

    def __iter__(self) -> Iterator[int]:
        import leafgrad

        n = len(self.data_source)
        generator = _fresh_generator() if self.generator is None else self.generator
        if self.replacement:
            # randint(high=n, ...) in PyTorch: the same draws as randint(0, n, ...)
            for _ in range(self.num_samples // 32):
                yield from leafgrad.randint(
                    0, n, (32,), dtype=leafgrad.int64, generator=generator
                ).tolist()
            yield from leafgrad.randint(
                0, n, (self.num_samples % 32,), dtype=leafgrad.int64, generator=generator
            ).tolist()
        else:
            for _ in range(self.num_samples // n):
                yield from leafgrad.randperm(n, generator=generator).tolist()
            yield from leafgrad.randperm(n, generator=generator).tolist()[: self.num_samples % n]

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler[int]):
    """The given ``indices`` in a random order (one ``randperm`` per pass)."""

    def __init__(self, indices: Sequence[int], generator=None) -> None:
        self.indices = indices
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        import leafgrad

        for i in leafgrad.randperm(len(self.indices), generator=self.generator).tolist():
            yield self.indices[i]

    def __len__(self) -> int:
        return len(self.indices)


class WeightedRandomSampler(Sampler[int]):
    """``num_samples`` indices into ``weights`` drawn with probabilities proportional to them
    (``multinomial`` over the weights as float64)."""

    def __init__(
        self,
        weights: Sequence[float],
        num_samples: int,
        replacement: bool = True,
        generator=None,
    ) -> None:
        import leafgrad

        if not isinstance(num_samples, int) or isinstance(num_samples, bool) or num_samples <= 0:
            raise ValueError(NUM_SAMPLES.format(value=num_samples))
        if not isinstance(replacement, bool):
            raise ValueError(REPLACEMENT_BOOL.format(value=replacement))
        weights_tensor = leafgrad.as_tensor(weights, dtype=leafgrad.double)
        if len(weights_tensor.shape) != 1:
            raise ValueError(WEIGHTS_1D.format(shape=tuple(weights_tensor.shape)))
        self.weights = weights_tensor
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        import leafgrad

        rand_tensor = leafgrad.multinomial(
            self.weights, self.num_samples, self.replacement, generator=self.generator
        )
        yield from iter(rand_tensor.tolist())

    def __len__(self) -> int:
        return self.num_samples


class BatchSampler(Sampler[list[int]]):
    """Lists of ``batch_size`` indices from ``sampler`` (any iterable); the last, shorter one is
    dropped with ``drop_last``."""

    def __init__(
        self, sampler: Sampler[int] | Iterable[int], batch_size: int, drop_last: bool
    ) -> None:
        # no isinstance check of ``sampler``: anything iterable will do
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError(BATCH_SIZE.format(value=batch_size))
        if not isinstance(drop_last, bool):
            raise ValueError(DROP_LAST.format(value=drop_last))
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self) -> Iterator[list[int]]:
        sampler_iter = iter(self.sampler)
        if self.drop_last:
            # batch_size references to one iterator: zip stops at the first short batch
            for batch in zip(*([sampler_iter] * self.batch_size)):
                yield [*batch]
        else:
            batch = [*itertools.islice(sampler_iter, self.batch_size)]
            while batch:
                yield batch
                batch = [*itertools.islice(sampler_iter, self.batch_size)]

    def __len__(self) -> int:
        if self.drop_last:
            return len(self.sampler) // self.batch_size
        return (len(self.sampler) + self.batch_size - 1) // self.batch_size
