"""Regressions from differential fuzzing, session of 2026-12-01: each test runs in torch and in
leafgrad and compares."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from conftest import both

_SHAPES = [(), (1,), (3,), (2, 3)]
_GRADS = [(True, False, False), (False, True, False), (False, False, True), (True, True, True)]


@pytest.mark.parametrize("grads", _GRADS)
@pytest.mark.parametrize("shapes", list(itertools.product(_SHAPES, repeat=3)))
def test_clamp_by_tensors_backward_raises_where_pytorchs_masks_do_not_broadcast(
    shapes, grads, engine
):
    # PyTorch combines two comparison masks in place in clamp's formulas: found as
    # x.abs().clamp(x.abs(), y) with a 0-d x and a [1] y
    s, lo, hi = shapes

    def fn(m):
        x = m.linspace(-1, 1, 6)[: int(np.prod(s))].reshape(s).requires_grad_(grads[0])
        low = m.full(lo, -0.3).requires_grad_(grads[1])
        high = m.full(hi, 0.4).requires_grad_(grads[2])
        r = m.clamp(x * 1, low, high)
        r.sum().backward()
        return r, x.grad, low.grad, high.grad

    both(fn)


@pytest.mark.parametrize("inplace", [False, True])
def test_clamp_by_tensors_error_leaves_gradients_unset(inplace):
    def fn(m):
        x = m.tensor(0.5, requires_grad=True)
        y = m.tensor([0.7])
        a = x.abs()
        r = a.clamp_(a * 1, y) if inplace else m.clamp(a, a * 1, y)
        try:
            r.sum().backward()
        except RuntimeError as e:
            return str(e), x.grad
        return r, x.grad

    both(fn)


@pytest.mark.parametrize("dim", [None, 0, -1])
def test_aminmax_of_an_empty_dim(dim):
    def fn(m):
        x = m.ones(0)
        return x.aminmax() if dim is None else x.aminmax(dim=dim)

    both(fn)


_ROWS = [[0.0, 1.0], [2.0, 3.5], [1.0, -1.0], [0.0, 1.0], [2.0, -1.0]]  # rows 0 and 3 equal


@pytest.mark.parametrize("p", [0, 0.5, 1, 1.5, 2, 3, float("inf")])
def test_pdist_gradients_where_distances_or_differences_are_zero(p):
    def fn(m):
        x = m.tensor(_ROWS, dtype=m.float64, requires_grad=True)
        y = m.pdist(x, p)
        (y * y.detach().add(1)).sum().backward()
        return y, x.grad

    both(fn)


@pytest.mark.parametrize("p", [0, 0.5, 1, 2, 3, float("inf")])
def test_pdist_double_backward_raises_as_pytorchs_pdist_backward(p):
    def fn(m):
        x = m.tensor(_ROWS, requires_grad=True)
        y = m.pdist(x, p)
        (g,) = m.autograd.grad(y.pow(2).sum() + y.sum(), x, create_graph=True)
        out = [y, g, g.requires_grad]
        g.sum().backward()
        return out

    both(fn)


_SOURCES = {
    "column": lambda b: b[:, 1],
    "transposed": lambda b: b.t(),
    "every_other_column": lambda b: b[:, ::2],
    "expanded": lambda b: b[:, :1].expand(3, 4),
    "transposed_every_other": lambda b: b.t()[::2],
}
_SCATTERS = {
    "select_scatter": lambda m, x: m.select_scatter(x, x.select(0, 0) * 0, 0, 0),
    "slice_scatter": lambda m, x: m.slice_scatter(x, x[:1] * 0, 0, 0, 1),
    "diagonal_scatter": lambda m, x: m.diagonal_scatter(x, x.diagonal() * 0),
    "as_strided_scatter": lambda m, x: m.as_strided_scatter(x, m.zeros(1), (1,), (1,)),
}


@pytest.mark.parametrize("source", sorted(_SOURCES))
@pytest.mark.parametrize("op", sorted(_SCATTERS))
def test_scatters_keep_the_inputs_exact_strides(op, source):
    # PyTorch's clone_preserve_strides; found as select_scatter of a strided column
    def fn(m):
        b = m.arange(12.0).reshape(3, 4).requires_grad_()
        x = _SOURCES[source](b * 1)
        if op == "diagonal_scatter" and x.ndim < 2:
            x = x.unsqueeze(1)
        r = _SCATTERS[op](m, x)
        (r * m.arange(float(r.numel())).reshape(r.shape)).sum().backward()
        a = r.detach().numpy()
        return r, r.stride(), r.is_contiguous(), a.strides, b.grad

    both(fn)


_NAN = float("nan")
_MODE_ROWS = [
    [_NAN, _NAN, _NAN],  # found as mode(asin(x)) of three values beyond [-1, 1]
    [_NAN, 1.0, _NAN],
    [_NAN, _NAN, 1.0],
    [2.0, _NAN, 2.0, _NAN],
    [_NAN, 1.0, 1.0, _NAN],
    [3.0, 1.0, 2.0, 1.0, 3.0],
] + np.random.default_rng(5).choice([0.0, 1.0, 2.0, _NAN, -1.0], size=(24, 16)).tolist()


@pytest.mark.parametrize("row", range(len(_MODE_ROWS)))
def test_mode_with_nans_sorts_as_pytorchs_insertion_sort(row):
    # a NaN compares false both ways: std::sort leaves it where it stands, and it is a run of
    # its own when PyTorch counts runs of equal values
    def fn(m):
        x = m.tensor(_MODE_ROWS[row], requires_grad=True)
        values, indices = x.mode(0)
        values.backward()
        return values, indices, x.grad

    both(fn)


def test_mode_with_nans_over_a_batch_of_rows():
    x = np.random.default_rng(6).choice([0.0, 1.0, 2.0, _NAN], size=(3, 5, 4))
    both(lambda m: [m.tensor(x).mode(d, keepdim=k) for d in (0, 1, -1) for k in (False, True)])


_KRON = {
    "transposed": lambda m: m.arange(6.0).reshape(2, 3).t(),
    "permuted_3d": lambda m: m.arange(24.0).reshape(2, 3, 4).permute(2, 0, 1),
    "contiguous": lambda m: m.arange(6.0).reshape(2, 3),
    "vector": lambda m: m.arange(3.0),
    "strided": lambda m: m.arange(12.0).reshape(3, 4)[:, ::2],
    "expanded": lambda m: m.ones(3, 1).expand(3, 2),
}


@pytest.mark.parametrize("b", sorted(_KRON))
@pytest.mark.parametrize("a", sorted(_KRON))
def test_kron_layouts(a, b):
    # found as kron(x.t(), x.t()): the product's layout survives the final _unsafe_view, which
    # raises PyTorch's view error where the layout cannot be viewed
    def fn(m):
        x = _KRON[a](m).requires_grad_()
        r = m.kron(x, _KRON[b](m) * 2)
        r.sum().backward()
        return r, r.stride(), type(r.grad_fn).__name__, x.grad

    both(fn)
