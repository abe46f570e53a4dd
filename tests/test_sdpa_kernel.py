"""torch.nn.attention.sdpa_kernel and the torch.backends.cuda SDPA switches against PyTorch:
which kernel scaled_dot_product_attention records under each choice of backends, the warnings
naming why the flash kernel was refused, and the errors when no allowed kernel applies."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import both

RNG = np.random.default_rng(3)
Q = RNG.standard_normal((2, 3, 4, 8)).astype(np.float32)
V6 = RNG.standard_normal((2, 3, 4, 6)).astype(np.float32)
K_B1 = RNG.standard_normal((1, 3, 4, 8)).astype(np.float32)
K_H2 = RNG.standard_normal((2, 2, 4, 8)).astype(np.float32)

INPUTS = {
    "plain": lambda m: ((m.tensor(Q, requires_grad=True),) * 3, {}),
    "causal": lambda m: ((m.tensor(Q, requires_grad=True),) * 3, {"is_causal": True}),
    "dropout": lambda m: ((m.tensor(Q),) * 3, {"dropout_p": 0.5}),
    "3-d": lambda m: ((m.tensor(Q[0]),) * 3, {}),
    "head dims": lambda m: ((m.tensor(Q), m.tensor(Q), m.tensor(V6)), {}),
    "batch": lambda m: ((m.tensor(Q), m.tensor(K_B1), m.tensor(K_B1)), {}),
    "heads": lambda m: ((m.tensor(Q), m.tensor(K_H2), m.tensor(K_H2)), {}),
    "3-d mask": lambda m: ((m.tensor(Q),) * 3, {"attn_mask": m.zeros(2, 4, 4)}),
    "mask requiring grad": lambda m: (
        (m.tensor(Q),) * 3,
        {"attn_mask": m.zeros(4, 4, requires_grad=True)},
    ),
    "stride": lambda m: ((m.tensor(Q).transpose(-1, -2).contiguous().transpose(-1, -2),) * 3, {}),
    "int": lambda m: ((m.tensor(Q).long(),) * 3, {}),
}
BACKENDS = ["default", "MATH", "FLASH_ATTENTION", "EFFICIENT_ATTENTION", "FLASH+MATH", "none"]


@pytest.mark.parametrize("backends", BACKENDS)
@pytest.mark.parametrize("inputs", list(INPUTS))
def test_sdpa_backends(backends, inputs):
    def f(m):
        from importlib import import_module

        attention = import_module(m.__name__ + ".nn.attention")
        B = attention.SDPBackend
        chosen = {
            "MATH": B.MATH,
            "FLASH_ATTENTION": [B.FLASH_ATTENTION],
            "EFFICIENT_ATTENTION": [B.EFFICIENT_ATTENTION],
            "FLASH+MATH": [B.FLASH_ATTENTION, B.MATH],
            "none": [],
        }.get(backends)
        (q, k, v), kw = INPUTS[inputs](m)
        if inputs != "dropout":
            m.manual_seed(0)
        if chosen is None:
            out = m.nn.functional.scaled_dot_product_attention(q, k, v, **kw)
        else:
            with attention.sdpa_kernel(chosen):
                out = m.nn.functional.scaled_dot_product_attention(q, k, v, **kw)
        flags = [
            m.backends.cuda.flash_sdp_enabled(),
            m.backends.cuda.math_sdp_enabled(),
            m.backends.cuda.mem_efficient_sdp_enabled(),
        ]
        return (out if inputs != "dropout" else out.shape), type(out.grad_fn).__name__, flags

    both(f)


def test_backend_enum_and_arguments():
    def f(m):
        from importlib import import_module

        attention = import_module(m.__name__ + ".nn.attention")
        B = attention.SDPBackend
        out = [repr(B.MATH), str(B.FLASH_ATTENTION), int(B.CUDNN_ATTENTION), B.ERROR.name]
        out.append(attention.WARN_FOR_UNFUSED_KERNELS)
        try:
            with attention.sdpa_kernel("math"):
                pass
        except AssertionError as e:
            out.append(str(e))
        m.backends.cuda.enable_math_sdp(False)
        try:
            out.append(m.backends.cuda.math_sdp_enabled())
            with attention.sdpa_kernel(B.MATH):
                out.append(m.backends.cuda.math_sdp_enabled())
            out.append(m.backends.cuda.math_sdp_enabled())
        finally:
            m.backends.cuda.enable_math_sdp(True)
        return out

    both(f)
