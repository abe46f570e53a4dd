"""``leafgrad.nn.parallel``: data parallelism over a device mesh (``DistributedDataParallel``)."""

from .distributed import DistributedDataParallel

__all__ = ["DistributedDataParallel"]
