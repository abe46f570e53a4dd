"""``torch.empty_permuted`` (its strides and checks), the function form ``torch.addmv_`` and
``torch.detach_copy``, against torch 2.13."""

from __future__ import annotations

import pytest
from conftest import both

CASES = {
    "channels last": ((2, 3, 4, 5), (0, 2, 3, 1)),
    "reversed": ((2, 3, 4), (2, 1, 0)),
    "identity": ((2, 3), (0, 1)),
    "with a zero size": ((2, 0, 4), (2, 1, 0)),
    "0-d": ((), ()),
    "short layout": ((2, 3, 4), (0, 2)),
    "duplicate": ((2, 3, 4), (0, 0, 1)),
    "out of range": ((2, 3, 4), (0, 3, 1)),
    "negative": ((2, 3, 4), (0, -1, 1)),
    "duplicate after out of range": ((2, 3, 4), (0, 5, 0)),
}


@pytest.mark.parametrize("case", list(CASES))
def test_strides_and_checks(case):
    size, layout = CASES[case]

    def run(m):
        e = m.empty_permuted(size, layout)
        return tuple(e.shape), e.stride(), e.dtype, e.is_contiguous(), e.requires_grad

    both(run)


def test_keywords():
    def run(m):
        e = m.empty_permuted((2, 3), (1, 0), dtype=m.float64, requires_grad=True)
        return e.dtype, e.requires_grad, e.is_leaf, e.stride(), e.grad_fn

    both(run)


def test_addmv_function_form():
    def run(m):
        a = m.zeros(3)
        r = m.addmv_(a, m.ones(3, 2), m.arange(2.0), beta=2, alpha=0.5)
        return r is a, a, a._version

    both(run)


def test_detach_copy():
    """``torch.detach_copy`` has no derivative: on a tensor that requires grad the copy has a
    ``NotImplemented`` node whose backward raises (its layout is contiguous)."""

    def run(m):
        x = m.randn(3, 2, requires_grad=True)
        y = m.detach_copy(x.t())
        meta = (y.grad_fn.name(), y.requires_grad, y.is_leaf, y.stride(), y._version)
        with m.no_grad():
            plain = m.detach_copy(x)
        try:
            y.sum().backward()
        except RuntimeError as e:
            return meta, str(e), plain.requires_grad, x.grad
        return meta

    both(run)
