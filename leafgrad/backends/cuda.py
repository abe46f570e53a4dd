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


# Note [SDPA backends]: PyTorch's global switches for scaled_dot_product_attention's kernels
# (``sdpa_kernel`` sets them). On the CPU only two matter: the flash kernel, taken where its
# constraints hold, else the math composite (F.scaled_dot_product_attention reads them).
SDP_ENABLED = {"flash": True, "mem_efficient": True, "math": True, "cudnn": True}


def enable_flash_sdp(enabled: bool) -> None:
    """Allow (or forbid) the flash attention kernel."""
    SDP_ENABLED["flash"] = bool(enabled)


def flash_sdp_enabled() -> bool:
    return SDP_ENABLED["flash"]


def enable_mem_efficient_sdp(enabled: bool) -> None:
    """Allow (or forbid) the memory-efficient attention kernel (a GPU kernel)."""
    SDP_ENABLED["mem_efficient"] = bool(enabled)


def mem_efficient_sdp_enabled() -> bool:
    return SDP_ENABLED["mem_efficient"]


def enable_math_sdp(enabled: bool) -> None:
    """Allow (or forbid) the math composite of scaled_dot_product_attention."""
    SDP_ENABLED["math"] = bool(enabled)


def math_sdp_enabled() -> bool:
    return SDP_ENABLED["math"]


def enable_cudnn_sdp(enabled: bool) -> None:
    """Allow (or forbid) the cuDNN attention kernel (a GPU kernel)."""
    SDP_ENABLED["cudnn"] = bool(enabled)


def cudnn_sdp_enabled() -> bool:
    return SDP_ENABLED["cudnn"]
