"""``torch.backends.cudnn``: availability of cuDNN (JAX's GPU backend uses it) and PyTorch's
flags, kept as set."""

from __future__ import annotations

from .. import _device as DEV

enabled = True
deterministic = False
benchmark = False
allow_tf32 = True


def is_available() -> bool:
    """Whether a GPU backend is installed for JAX (its CUDA plugin brings cuDNN)."""
    return DEV.cuda_built()


def version():
    """cuDNN's version as one integer where JAX reports it, else None."""
    if not is_available():
        return None
    try:
        from jax._src.lib import cuda_versions
    except ImportError:
        return None
    if cuda_versions is None:
        return None
    try:
        return int(cuda_versions.cudnn_get_version())
    except Exception:
        return None
