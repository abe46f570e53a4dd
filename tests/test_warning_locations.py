"""Warnings point at the user's line, as PyTorch's kernel warnings do: leafgrad's frames
(frontends, the argument checks around them) are skipped whatever their depth."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from conftest import lg, torch

CALLS = {
    "range": lambda m: m.range(0, 3),
    "var_dof": lambda m: m.tensor([1.0]).var(),
    "std_dof_checked_args": lambda m: m.tensor([[1.0, 2.0]]).std(0, True, keepdim=True),
    "mse_target_size": lambda m: m.nn.functional.mse_loss(m.ones(3), m.ones(3, 1)),
    "kl_div_mean": lambda m: m.nn.functional.kl_div(m.ones(3), m.ones(3)),
    "implicit_softmax_dim": lambda m: m.nn.functional.log_softmax(m.ones(3)),
    "list_of_ndarrays": lambda m: m.tensor([np.ones(2), np.ones(2)]),
    "uint8_index": lambda m: m.ones(4)[m.tensor([1, 0, 1, 0], dtype=m.uint8)],
    "non_leaf_grad": lambda m: (m.ones(3, requires_grad=True) * 2).grad,
}


@pytest.mark.parametrize("call", sorted(CALLS))
def test_warnings_point_at_the_callers_line(call):
    def locations(m):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            CALLS[call](m)
        return [(w.filename, w.lineno, str(w.message).split(" (Triggered")[0]) for w in caught]

    got, want = locations(lg), locations(torch)
    assert want and got == want
