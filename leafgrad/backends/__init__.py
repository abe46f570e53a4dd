"""``leafgrad.backends``: the switches of PyTorch's ``torch.backends`` that device-agnostic
scripts read and set (``cudnn``, ``cuda``, ``mps``).

leafgrad's kernels are XLA's: the flags are kept so such scripts run and read back what they
set. ``cudnn.deterministic``/``benchmark`` and ``cuda.matmul.allow_tf32`` change nothing here:
leafgrad's float32 products always run at full float32 precision (no TF32), and XLA picks its
own GPU algorithms."""

from __future__ import annotations

from . import cuda, cudnn, mps

__all__ = ["cuda", "cudnn", "mps"]
