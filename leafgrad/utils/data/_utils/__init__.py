"""``torch.utils.data._utils``: collation, fetching, pinning and worker information for
``DataLoader``, at PyTorch's module paths (``..._utils.collate.default_collate_fn_map`` is the
registry users extend)."""

from . import collate, fetch, pin_memory, worker

__all__ = ["collate", "fetch", "pin_memory", "worker"]
