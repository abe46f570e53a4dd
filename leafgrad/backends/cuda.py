"""``torch.backends.cuda``: whether a GPU backend is installed, and the matmul flags (kept as
set; leafgrad's float32 products never use TF32)."""

from __future__ import annotations

from .. import _device as DEV


def is_built() -> bool:
    """Whether JAX has a GPU backend installed (PyTorch: built with CUDA)."""
    return DEV.cuda_built()


class _MatmulFlags:
    """``torch.backends.cuda.matmul``."""

    def __init__(self) -> None:
        self.allow_tf32 = False
        self.allow_fp16_reduced_precision_reduction = True
        self.allow_bf16_reduced_precision_reduction = True


matmul = _MatmulFlags()
