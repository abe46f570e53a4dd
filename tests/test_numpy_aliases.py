"""Note [NumPy keyword aliases]: ``axis=`` for ``dim`` and ``keepdims=`` for ``keepdim`` wherever
PyTorch's argument parser binds the op, and not in its Python-level functions."""

from __future__ import annotations

import pytest
from conftest import both

CALLS = [
    "x.sum(axis=0)", "x.mean(axis=1, keepdims=True)", "m.cat([x, x], axis=0)", "x.max(axis=0)",
    "x.std(axis=0)", "x.argmax(axis=0)", "m.stack([x, x], axis=1)", "x.softmax(axis=0)",
    "x.cumsum(axis=0)", "x.median(axis=0)", "x.nanmedian(axis=0)", "x.mode(axis=0)",
    "x.kthvalue(1, axis=0)", "m.trapezoid(x, axis=0)", "m.cumulative_trapezoid(x, axis=0)",
    "x.cummax(axis=0)", "x.logcumsumexp(axis=0)", "m.var_mean(x, axis=0)", "m.std_mean(x, axis=0)",
    "x.aminmax(axis=0)", "x.unbind(axis=0)", "x.select(axis=0, index=1)",
    "x.narrow(axis=0, start=0, length=1)", "x.index_select(axis=0, index=m.tensor([0]))",
    "x.gather(axis=0, index=m.tensor([[0, 1, 0]]))",
    "x.scatter(axis=0, index=m.tensor([[0, 1, 0]]), value=1.0)", "x.diff(axis=1)",
    "x.repeat_interleave(2, axis=0)", "x.index_fill(axis=0, index=m.tensor([0]), value=1.0)",
    "x.squeeze(axis=(0,))", "m.linalg.norm(x, axis=0)", "m.linalg.vector_norm(x, axis=0)",
    "m.fft.fft(x, axis=0)", "m.special.log_softmax(x, axis=0)",
    # PyTorch's Python-level functions and F take no aliases
    "x.norm(axis=0)", "x.split(1, axis=0)", "m.unique(x, axis=0)",
    "m.nn.functional.softmax(x, axis=0)",
    "x.unflatten(axis=1, sizes=(3, 1))",
]  # fmt: skip


@pytest.mark.every_case
@pytest.mark.parametrize("call", CALLS)
def test_numpy_keyword_aliases_as_pytorch(call):
    def fn(m):
        x = m.arange(6.0).reshape(2, 3)  # noqa: F841 - the calls name it
        try:
            return eval(call)
        except TypeError as e:  # the qualified name differs where leafgrad shares a function
            return "TypeError: " + str(e).split("() ", 1)[-1]

    both(fn)
