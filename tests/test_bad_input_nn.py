"""Wrong shapes given to ``F.nll_loss`` / ``F.cross_entropy`` of spatial inputs: PyTorch's
errors (``check_inputs_nll_loss2d``, ``nll_loss_nd``), type and text, never a raw JAX error."""

from __future__ import annotations

import pytest
from conftest import both

CASES = [
    ((1, 2, 3, 1), (1, 3)),  # a 4-D input needs a 3-D target
    ((1, 2, 3, 1), (1, 3, 1, 1)),
    ((2, 2, 3, 1), (1, 3, 1)),  # batch sizes differ
    ((1, 2, 3, 4), (1, 3, 5)),  # spatial sizes differ
    ((1, 2, 3, 1), (1, 2, 1)),
    ((1, 2, 3, 4, 5), (1, 3, 4, 6)),  # other ranks: nll_loss_nd's target size
    ((1, 2, 3), (1, 4)),
    ((2, 3, 4, 5, 6), (2, 4, 5)),
    ((1, 2, 3, 4), (1, 3, 4)),  # a right one
]


@pytest.mark.parametrize(("input_shape", "target_shape"), CASES)
@pytest.mark.parametrize("loss", ["nll_loss", "cross_entropy"])
def test_spatial_target_shapes(loss, input_shape, target_shape):
    def fn(m):
        x = m.ones(*input_shape, requires_grad=True)
        t = m.zeros(*target_shape, dtype=m.long)
        return getattr(m.nn.functional, loss)(x, t, reduction="none")

    both(fn)
