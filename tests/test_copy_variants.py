"""The ``*_copy`` variants of the view ops against torch: values in memory of their own (writes
to them leave the input alone), the view's node renamed ``<Node>_copy``, and its gradient."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import both

X = np.arange(12.0).reshape(4, 3) / 7

CASES = {
    "view_copy": lambda m, x: m.view_copy(x, (2, 6)),
    "view_copy_dtype": lambda m, x: m.view_copy(x.detach(), m.int64),
    "permute_copy": lambda m, x: m.permute_copy(x, (1, 0)),
    "t_copy": lambda m, x: m.t_copy(x),
    "transpose_copy": lambda m, x: m.transpose_copy(x, 0, 1),
    "squeeze_copy": lambda m, x: m.squeeze_copy(x[None]),
    "squeeze_copy_dim": lambda m, x: m.squeeze_copy(x[None], 0),
    "squeeze_copy_dims": lambda m, x: m.squeeze_copy(x[None], (0,)),
    "unsqueeze_copy": lambda m, x: m.unsqueeze_copy(x, 1),
    "select_copy": lambda m, x: m.select_copy(x, 1, 2),
    "slice_copy": lambda m, x: m.slice_copy(x, 0, 1, 4, 2),
    "expand_copy": lambda m, x: m.expand_copy(x[:1], (3, 3)),
    "as_strided_copy": lambda m, x: m.as_strided_copy(x, (2, 2), (1, 2), 1),
    "unfold_copy": lambda m, x: m.unfold_copy(x, 0, 2, 1),
    "diagonal_copy": lambda m, x: m.diagonal_copy(x, 1),
    "alias_copy": lambda m, x: m.alias_copy(x),
    "view_as_real_copy": lambda m, x: m.view_as_real_copy(x.to(m.complex128)),
    "split_copy": lambda m, x: m.split_copy(x, 3),
    "split_with_sizes_copy": lambda m, x: m.split_with_sizes_copy(x, [1, 3]),
    "unbind_copy": lambda m, x: m.unbind_copy(x, 1),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_copy_variants(name):
    def fn(m):
        x = m.tensor(X, requires_grad=True)
        out = CASES[name](m, x)
        outs = out if isinstance(out, tuple) else (out,)
        info = [
            (
                None if o.grad_fn is None else type(o.grad_fn).__name__,
                o.is_contiguous(),
                o._base is None,
                o._version,
            )
            for o in outs
        ]
        if outs[0].requires_grad:
            sum((o.float() * (k + 1)).sum() for k, o in enumerate(outs)).backward()
        with m.no_grad():
            outs[0].add_(1)  # memory of its own: the input is unchanged
        return out, info, x.grad, x

    both(fn)
