"""``torch.utils.data._utils.worker``: ``WorkerInfo`` and ``get_worker_info``.

leafgrad's ``DataLoader`` starts no worker processes (Note [Loading in the main process] in
dataloader.py), so code always runs in the main process and ``get_worker_info()`` returns None.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["WorkerInfo", "get_worker_info"]


@dataclass(frozen=True, slots=True)
class WorkerInfo:
    """Information about a DataLoader worker (PyTorch's fields)."""

    id: int
    num_workers: int
    seed: int
    dataset: Any
    rng: Any = None
    worker_method: str | None = "multiprocessing"


_worker_info: WorkerInfo | None = None


def get_worker_info() -> WorkerInfo | None:
    """The current worker's ``WorkerInfo``; None in the main process, which is where leafgrad
    loads all data."""
    return _worker_info
