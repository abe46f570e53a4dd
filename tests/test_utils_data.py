"""``utils.data`` against PyTorch: datasets, samplers, ``default_collate``/``default_convert``,
``random_split`` and ``DataLoader`` (batches, lengths, argument errors, warnings), a training loop
fed by a loader, and the loader's random draws (Note [Loader random draws] in
leafgrad/utils/data/dataloader.py: leafgrad's generator gives PyTorch's numbers, so shuffled
orders are compared exactly, besides being checked as permutations that a seed reproduces)."""

from __future__ import annotations

import collections

import numpy as np
import pytest
import torch.utils.data  # noqa: F401
from conftest import both, lg, torch

import leafgrad.utils.data  # noqa: F401

Point = collections.namedtuple("Point", ["x", "y"])
_X = np.linspace(-1.0, 1.0, 14).reshape(7, 2).astype(np.float32)
_Y = np.arange(7)


def _tensor_ds(m):
    return m.utils.data.TensorDataset(m.tensor(_X), m.tensor(_Y))


def _batches(loader):
    """Each batch (a list of tensors) and the loader's length."""
    return len(loader), list(loader)


def _stream(m, n, length=None):
    """An iterable dataset of ``n`` numbers, with a ``__len__`` of ``length`` (None: none)."""

    class Stream(m.utils.data.IterableDataset):
        def __iter__(self):
            return iter(range(n))

        def __len__(self):
            if length is None:
                raise TypeError("no length")
            return length

        def __repr__(self):
            return "Stream"

    return Stream()


# --- datasets -----------------------------------------------------------------------------------


def test_tensor_dataset():
    def fn(m):
        ds = _tensor_ds(m)
        return len(ds), ds[3], ds[-1], ds[1:3], ds[[0, 2]]

    both(fn)
    both(lambda m: m.utils.data.TensorDataset(m.zeros(3), m.zeros(4)))  # Size mismatch


def test_concat_dataset_indexing():
    def fn(m):
        D = m.utils.data
        ds = D.ConcatDataset([D.TensorDataset(m.arange(3)), range(10, 14), [20]])
        added = D.TensorDataset(m.arange(2)) + D.TensorDataset(m.arange(5, 7))
        idx = [0, 2, 3, 6, 7, -1, -2, -8]
        return len(ds), ds.cumulative_sizes, [ds[i] for i in idx], type(added).__name__, added[3]

    both(fn)
    for bad in (-9, 8):  # absolute value beyond the length / past the end
        both(lambda m, i=bad: m.utils.data.ConcatDataset([range(3), range(5)])[i])
    both(lambda m: m.utils.data.ConcatDataset([]))
    both(lambda m: m.utils.data.ConcatDataset([range(2), _stream(m, 2)]))
    for m in (torch, lg):
        with pytest.warns(FutureWarning, match="renamed to `cumulative_sizes`"):
            assert m.utils.data.ConcatDataset([range(2)]).cummulative_sizes == [2]


def test_subset_stack_chain():
    def fn(m):
        D = m.utils.data
        base = _tensor_ds(m)
        sub = D.Subset(base, [5, 1, 3])
        stack = D.StackDataset(range(3), ["a", "b", "c"])
        named = D.StackDataset(x=range(3), t=D.Subset(base, [0, 1, 2]))
        chain = D.ChainDataset([_stream(m, 2), _stream(m, 3, length=3)])
        plus = _stream(m, 2) + _stream(m, 1)
        return (
            len(sub),
            sub[1],
            sub.__getitems__([0, 2]),
            stack[1],
            stack.__getitems__([0, 2]),
            named.__getitems__([1]),
            list(chain),
            type(plus).__name__,
            list(plus),
        )

    both(fn)
    both(lambda m: m.utils.data.StackDataset(range(2), range(3)))
    both(lambda m: m.utils.data.StackDataset(range(2), x=range(2)))
    both(lambda m: m.utils.data.StackDataset())
    both(lambda m: len(m.utils.data.ChainDataset([_stream(m, 2, 2), range(3)])))
    both(lambda m: m.utils.data.Dataset()[0])

    def bad_subclass(m):
        class Mine(m.utils.data.Subset):
            def __getitem__(self, idx):
                return idx

        return Mine(range(3), [0])

    both(bad_subclass)


def test_random_split():
    def fn(m):
        g = m.Generator().manual_seed(7)
        parts = m.utils.data.random_split(range(10), [0.3, 0.3, 0.4], generator=g)
        odd = m.utils.data.random_split(range(11), [0.5, 0.25, 0.25], generator=g)
        ints = m.utils.data.random_split(range(5), [2, 3], generator=g)
        return [[list(p) for p in s] for s in (parts, odd, ints)]

    t, g = both(fn)
    for split, n in zip(g, (10, 11, 5)):  # disjoint subsets covering the dataset
        assert sorted(i for part in split for i in part) == list(range(n))
    # a zero-length split warns; fractions out of range and a wrong sum raise
    both(lambda m: [len(p) for p in m.utils.data.random_split(range(2), [0.1, 0.1, 0.8])])
    both(lambda m: m.utils.data.random_split(range(4), [1.5, -0.5]))
    both(lambda m: m.utils.data.random_split(range(4), [1, 2]))
    # the default generator is the default CPU one: the same subsets after manual_seed
    both(lambda m: (m.manual_seed(3), list(m.utils.data.random_split(range(6), [3, 3])[0]))[1])


# --- collation ----------------------------------------------------------------------------------


def test_default_collate():
    def fn(m):
        c = m.utils.data.default_collate
        w = m.tensor([1.0, 2.0], requires_grad=True)
        samples = [
            {
                "x": m.tensor([float(i), 1.0]),
                "meta": {"id": i, "score": i / 2, "ok": i % 2 == 0, "name": f"s{i}"},
                "pair": (np.array([i, i + 1], dtype=np.int16), np.float32(i)),
                "pt": Point(i, [np.float64(i), b"b"]),
            }
            for i in range(3)
        ]
        out = c(samples)
        pt = out["pt"]
        return (
            out["x"],
            out["meta"],
            out["pair"],
            type(pt).__name__,
            pt.x,
            pt.y,
            c([w * 2, w * 3]),
            c([[1, 2], [3, 4]]),
            c([(1.5, "a"), (2.5, "b")]),
            c([np.int64(4), np.int64(5)]),
            c([True, False]),
        )

    both(fn)
    both(lambda m: m.utils.data.default_collate([[1, 2], [3]]))  # ragged
    both(lambda m: m.utils.data.default_collate([object(), object()]).__class__)
    both(lambda m: m.utils.data.default_collate([np.array(["a"]), np.array(["b"])]))
    both(lambda m: m.utils.data.default_collate([m.zeros(2), m.zeros(3)]))  # stack's error


def test_default_convert():
    def fn(m):
        cv = m.utils.data.default_convert
        out = cv({"a": np.array([1.0, 2.0]), "b": (np.int32(3), "s"), "p": Point(np.ones(2), 1)})
        return (
            out["a"],
            out["b"],
            type(out["p"]).__name__,
            out["p"].x,
            out["p"].y,
            cv(7),
            cv([np.array([True])]),
            cv(np.array(["x"])).tolist(),
            cv(m.tensor([1, 2])),
        )

    both(fn)


# --- samplers -----------------------------------------------------------------------------------


def test_batch_sampler():
    def fn(m):
        D = m.utils.data
        seq = D.SequentialSampler(range(10))
        keep, drop = D.BatchSampler(seq, 3, False), D.BatchSampler(seq, 3, True)
        return list(keep), len(keep), list(drop), len(drop), list(D.BatchSampler(range(4), 2, True))

    both(fn)
    for bad in ((0, False), (True, False), (2.0, False), (2, 1), (2, None)):
        both(lambda m, b=bad: m.utils.data.BatchSampler(range(3), *b))


def test_random_samplers_match_torch():
    """The same seed gives PyTorch's indices (Note [Loader random draws])."""

    def fn(m):
        D = m.utils.data
        g = m.Generator().manual_seed(11)
        out = [
            list(D.RandomSampler(range(9), generator=g)),
            list(D.RandomSampler(range(5), num_samples=12, generator=g)),
            list(D.RandomSampler(range(5), replacement=True, num_samples=40, generator=g)),
            list(D.SubsetRandomSampler([10, 20, 30, 40], generator=g)),
            list(D.WeightedRandomSampler([0.1, 0.9, 0.4, 3.0], 6, generator=g)),
            list(D.WeightedRandomSampler([0.1, 0.9, 0.4, 3.0], 3, replacement=False, generator=g)),
        ]
        m.manual_seed(5)  # without a generator: seeded from one draw of the default one
        out.append(list(D.RandomSampler(range(6))))
        out.append(m.rand(2))  # ... which leaves the default generator where PyTorch's is
        return out

    t, g = both(fn)
    assert sorted(g[0]) == list(range(9)) and sorted(g[1][:5]) == list(range(5))
    both(lambda m: m.utils.data.RandomSampler(range(3), replacement=1))
    both(lambda m: m.utils.data.RandomSampler(range(0)))
    both(lambda m: m.utils.data.RandomSampler(range(3), num_samples=2.0))
    both(lambda m: m.utils.data.WeightedRandomSampler([1.0, 2.0], 0))
    both(lambda m: m.utils.data.WeightedRandomSampler([1.0, 2.0], 2, replacement=None))
    both(lambda m: m.utils.data.WeightedRandomSampler([[1.0, 2.0]], 2))


def test_distributed_sampler():
    def fn(m):
        D = m.utils.data
        out = []
        for shuffle, drop_last in ((False, False), (True, False), (True, True)):
            for rank in range(3):
                s = D.DistributedSampler(range(8), 3, rank, shuffle=shuffle, drop_last=drop_last)
                s.set_epoch(2)
                out.append((len(s), list(s)))
        return out

    both(fn)
    both(lambda m: m.utils.data.DistributedSampler(range(4), 2, 2))


# --- DataLoader ---------------------------------------------------------------------------------


def test_loader_batches():
    def fn(m):
        ds = _tensor_ds(m)
        D = m.utils.data
        return (
            _batches(D.DataLoader(ds, batch_size=3)),
            _batches(D.DataLoader(ds, batch_size=3, drop_last=True)),
            _batches(D.DataLoader(ds)),
            _batches(D.DataLoader(ds, batch_size=None)),
            _batches(D.DataLoader(ds, batch_sampler=[[6, 0], [2]])),
            _batches(D.DataLoader(ds, batch_size=4, sampler=[6, 5, 4, 3, 2])),
            _batches(D.DataLoader(range(5), batch_size=2, collate_fn=lambda b: sum(b))),
            _batches(D.DataLoader(np.arange(6.0).reshape(3, 2), batch_size=None)),
        )

    both(fn)


def test_loader_iterable_dataset():
    def fn(m):
        D = m.utils.data
        return (
            _batches(D.DataLoader(_stream(m, 7, 7), batch_size=3)),
            _batches(D.DataLoader(_stream(m, 7, 7), batch_size=3, drop_last=True)),
            _batches(D.DataLoader(_stream(m, 3, 3), batch_size=None)),
            list(D.DataLoader(_stream(m, 3), batch_size=2)),
        )

    both(fn)
    # more samples than the dataset's len() said: PyTorch's warning
    both(lambda m: _batches(m.utils.data.DataLoader(_stream(m, 3, 2))))
    both(lambda m: len(m.utils.data.DataLoader(_stream(m, 3))))


LOADER_ERRORS = [
    {"num_workers": -1},
    {"timeout": -1},
    {"prefetch_factor": 2},
    {"num_workers": 1, "prefetch_factor": -1},
    {"persistent_workers": True},
    {"shuffle": True, "sampler": [0, 1]},
    {"batch_sampler": [[0]], "batch_size": 2},
    {"batch_sampler": [[0]], "drop_last": True},
    {"batch_sampler": [[0]], "shuffle": True},
    {"batch_size": None, "drop_last": True},
    {"batch_size": 0},
    {"multiprocessing_context": "spawn"},
    {"num_workers": 1, "multiprocessing_context": "bogus"},
    {"num_workers": 1, "multiprocessing_context": 3},
]


def test_loader_argument_errors():
    for kw in LOADER_ERRORS:
        both(lambda m, kw=kw: m.utils.data.DataLoader(_tensor_ds(m), **kw))
    for kw in ({"shuffle": True}, {"sampler": [0]}, {"batch_sampler": [[0]]}):
        both(lambda m, kw=kw: m.utils.data.DataLoader(_stream(m, 2), **kw))

    def set_after(m):
        loader = m.utils.data.DataLoader(_tensor_ds(m))
        loader.num_workers = 0  # allowed
        loader.batch_size = 3

    both(set_after)
    both(lambda m: iter(m.utils.data.DataLoader(_tensor_ds(m), timeout=1)))


def test_loader_workers_in_main_process():
    """``num_workers > 0`` gives the batches of ``num_workers=0`` (Note [Loading in the main
    process]); ``get_worker_info()`` is None throughout."""
    seen = []

    def fn(m):
        D = m.utils.data
        ds = _tensor_ds(m)
        plain = list(D.DataLoader(ds, batch_size=2))
        # torch's workers would fork this process, which runs JAX's threads: torch loads here
        # in the main process, and the worker runs are compared in a fresh process below
        workers = 2 if m is lg else 0
        loader = D.DataLoader(ds, batch_size=2, num_workers=workers, collate_fn=_noting(m, seen))
        persistent = D.DataLoader(
            ds, batch_size=3, num_workers=workers // 2, persistent_workers=m is lg
        )
        first = iter(persistent)
        epochs = [list(first), list(persistent)]
        kept.append(iter(persistent) is first)
        return plain, list(loader), len(loader), epochs

    kept = []
    t, g = both(fn)
    assert kept == [False, True]  # torch without workers: a new iterator; leafgrad's persists
    assert seen == [None] * 4
    same_batches = [[x.tolist() for x in b] for b in g[0]]
    assert [[x.tolist() for x in b] for b in g[1]] == same_batches


def _noting(m, seen):
    def collate(batch):
        if m is lg:
            seen.append(m.utils.data.get_worker_info())
        return m.utils.data.default_collate(batch)

    return collate


def test_loader_pin_memory(monkeypatch):
    """Without an accelerator: PyTorch's warning, and batches as they are (Note [DataLoader
    pinning]); with one, leafgrad's warning that the batches stay unpinned, values as without."""
    monkeypatch.setattr(torch.accelerator, "is_available", lambda: False)
    with monkeypatch.context() as patch:
        patch.setattr(lg.accelerator, "is_available", lambda: False)
        both(
            lambda m: [
                (b, b[0].is_pinned())
                for b in m.utils.data.DataLoader(_tensor_ds(m), batch_size=4, pin_memory=True)
            ]
        )
        both(
            lambda m: list(
                m.utils.data.DataLoader(range(2), pin_memory=True, pin_memory_device="x")
            )
        )
    if lg.accelerator.is_available():  # the tests' virtual cuda device
        with pytest.warns(UserWarning, match="no pinned host memory"):
            pinned = list(lg.utils.data.DataLoader(_tensor_ds(lg), batch_size=4, pin_memory=True))
        plain = list(lg.utils.data.DataLoader(_tensor_ds(lg), batch_size=4))
        assert [[t.tolist() for t in b] for b in pinned] == [[t.tolist() for t in b] for b in plain]
        assert not pinned[0][0].is_pinned()


def test_shuffled_loader():
    """A shuffled epoch is a permutation; a seeded generator repeats it; after ``manual_seed`` the
    order, and the numbers drawn after the epoch, are PyTorch's (Note [Loader random draws])."""

    def order(m, **kw):
        return [
            int(y)
            for _, ys in m.utils.data.DataLoader(_tensor_ds(m), batch_size=2, shuffle=True, **kw)
            for y in ys
        ]

    def fn(m):
        m.manual_seed(0)
        first, second = order(m), order(m)
        seeded = [order(m, generator=m.Generator().manual_seed(4)) for _ in range(2)]
        return first, second, seeded, m.rand(2)

    t, g = both(fn)
    first, second, seeded, _ = g
    assert sorted(first) == sorted(second) == list(range(7)) and first != second
    assert seeded[0] == seeded[1] and sorted(seeded[0]) == list(range(7))


def test_training_loop():
    """A tiny model trained from a loader: every batch's loss and the final gradients and weights
    equal PyTorch's, sequential and shuffled."""

    def fn(m, shuffle):
        m.manual_seed(0)
        model = m.nn.Sequential(m.nn.Linear(2, 3), m.nn.Tanh(), m.nn.Linear(3, 1))
        with m.no_grad():
            for i, p in enumerate(model.parameters()):
                p.copy_(m.linspace(-0.5, 0.5 + i, p.numel()).reshape(p.shape))
        opt = m.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        loader = m.utils.data.DataLoader(_tensor_ds(m), batch_size=3, shuffle=shuffle)
        losses = []
        for _ in range(2):
            for x, y in loader:
                opt.zero_grad()
                loss = ((model(x).squeeze(1) - y.float()) ** 2).mean()
                loss.backward()
                opt.step()
                losses.append(loss.detach())
        return losses, [p.grad for p in model.parameters()], list(model.parameters())

    # the gradients sum terms much larger than themselves (0.005 of terms near 1), and float32's
    # tanh and matmul round as XLA's do: the tolerance is relative to the largest magnitude
    for shuffle in (False, True):
        both(lambda m, s=shuffle: fn(m, s), autograd=False, of_largest=True)


_WORKER_PROGRAM = """
import json, sys
import {m} as M
M.manual_seed(0)
it = iter(M.utils.data.DataLoader(list(range(10)), batch_size=2, shuffle=True, num_workers=2))
first = M.rand(1).tolist()
out = [first, [b.tolist() for b in it], M.rand(1).tolist()]
M.manual_seed(0)
dl = M.utils.data.DataLoader(
    list(range(10)), batch_size=3, shuffle=True, num_workers=1, persistent_workers=True
)
out += [[b.tolist() for b in dl], M.rand(1).tolist(), [b.tolist() for b in dl]]
print(json.dumps(out))
"""


def test_loader_with_workers_draws_as_pytorch():
    """With ``num_workers > 0`` PyTorch's iterator starts the sampler as it is made (it hands
    indices to its workers at once): the shuffled order and the numbers drawn around it are
    PyTorch's. torch's run is in a fresh process (its workers fork)."""
    import json
    import subprocess
    import sys

    def run(module):
        done = subprocess.run(
            [sys.executable, "-c", _WORKER_PROGRAM.format(m=module)],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout.strip().splitlines()[-1])

    assert run("leafgrad") == run("torch")
