"""``torch.utils.data``: datasets, samplers, collation and ``DataLoader``, in pure Python over
leafgrad tensors, with PyTorch 2.13's behaviour, checks and messages.

leafgrad starts no worker processes: ``DataLoader(num_workers=N)`` loads in the main process
(Note [Loading in the main process] in dataloader.py), and ``pin_memory=True`` pins only where an
accelerator is there (Note [DataLoader pinning]). The random samplers and ``random_split`` draw
from leafgrad's generator as PyTorch's draw from its own (Note [Loader random draws]).
PyTorch's DataPipes (``IterDataPipe``, ``MapDataPipe``, ``functional_datapipe``, ...) are not
provided.
"""

from . import _utils
from .dataloader import (
    DataLoader,
    _DatasetKind,
    default_collate,
    default_convert,
    get_worker_info,
)
from .dataset import (
    ChainDataset,
    ConcatDataset,
    Dataset,
    IterableDataset,
    StackDataset,
    Subset,
    TensorDataset,
    random_split,
)
from .distributed import DistributedSampler
from .sampler import (
    BatchSampler,
    RandomSampler,
    Sampler,
    SequentialSampler,
    SubsetRandomSampler,
    WeightedRandomSampler,
)

__all__ = [
    "BatchSampler",
    "ChainDataset",
    "ConcatDataset",
    "DataLoader",
    "Dataset",
    "DistributedSampler",
    "IterableDataset",
    "RandomSampler",
    "Sampler",
    "SequentialSampler",
    "StackDataset",
    "Subset",
    "SubsetRandomSampler",
    "TensorDataset",
    "WeightedRandomSampler",
    "_DatasetKind",
    "_utils",
    "default_collate",
    "default_convert",
    "get_worker_info",
    "random_split",
]
