"""Factories convert out-of-range floats as PyTorch does: to infinity where PyTorch's
conversion is unchecked (no NumPy warning on the way), with c10's overflow error where it is
checked (``linspace``'s ends, integer results)."""

from __future__ import annotations

import warnings

import numpy as np  # noqa: F401 - the calls below name it
import pytest
from conftest import both

CALLS = [
    "m.tensor([1e10], dtype=m.float16)",
    "m.tensor([1e300], dtype=m.float32)",
    "m.tensor(1e300, dtype=m.float16)",
    "m.tensor([[1e300, 2.0]], dtype=m.bfloat16)",
    "m.tensor(np.array([1e300]), dtype=m.float32)",
    "m.as_tensor(np.array([1e300]), dtype=m.float32)",
    "m.ones(2).new_tensor([1e300])",
    "m.tensor([1e300 + 1j], dtype=m.complex64)",
    "m.arange(0, 1e10, 1e9, dtype=m.float16)",
    "m.linspace(0, 1e10, 3, dtype=m.float16)",
    "m.linspace(1e10, 0, 1, dtype=m.float16)",
    "m.linspace(1e10, 0, 1, dtype=m.uint8)",
    "m.linspace(0, 300, 3, dtype=m.int8)",
    "m.linspace(0, 300, 3, dtype=m.bfloat16)",
    "m.linspace(0, 1e10, 0, dtype=m.int8)",
]


@pytest.mark.parametrize("call", CALLS)
def test_out_of_range_values_as_pytorch(call):
    def fn(m):
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no RuntimeWarning from NumPy's casts
            return eval(call)

    both(fn)
