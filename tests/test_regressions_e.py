"""Regressions (group E): the version of gradients whose PyTorch formula changes its result in
place (Note [Output versions] in ``leafgrad/autograd/graph.py``), in the eager engine and in the
fused backward; ``storage_offset``/``stride`` of dtype views and empty ``as_strided`` views."""

from __future__ import annotations

import os

import pytest
from conftest import both


@pytest.fixture(autouse=True, scope="module")
def _vjp_check_module(request):
    """conftest.py's numerical VJP check of the ops this module records first, under
    pytest-xdist only (the ops here are backwards of common reductions, checked by
    tests/test_zz_vjp_numerical.py in a whole-suite run): keeps this module fast alone."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        request.getfixturevalue("_vjp_check_module")
    yield


def _other(m):
    return m.tensor([[0.5, -1.0, 2.0], [0.25, 3.0, -0.5]])


_CHANGED_IN_PLACE = {
    "maximum": lambda m, x: m.maximum(_other(m), x),
    "maximum_self": lambda m, x: m.maximum(x, _other(m)),
    "minimum": lambda m, x: m.minimum(_other(m), x),
    "max_other": lambda m, x: m.max(x, _other(m)),
    "min_other": lambda m, x: m.min(_other(m), x),
    "max_all": lambda m, x: x.max(),
    "min_all": lambda m, x: x.min(),
    "max_dim": lambda m, x: x.max(1)[0],
    "min_dim_keepdim": lambda m, x: x.min(1, keepdim=True)[0],
    "median_all": lambda m, x: x.median(),
    "median_dim": lambda m, x: x.median(1)[0],
    "nanmedian_all": lambda m, x: x.nanmedian(),
    "nanmedian_dim": lambda m, x: x.nanmedian(1)[0],
    "sort": lambda m, x: x.sort(1)[0],
    "sort_stable": lambda m, x: x.sort(stable=True)[0],
    "topk": lambda m, x: x.topk(2)[0],
    "cummax": lambda m, x: x.cummax(1)[0],
    "cummin": lambda m, x: x.cummin(0)[0],
    "gather": lambda m, x: x.gather(1, m.tensor([[0, 1], [2, 0]])),
    "index": lambda m, x: x[m.tensor([0, 1, 1])],
    "index_select": lambda m, x: x.index_select(1, m.tensor([0, 2])),
    "masked_select": lambda m, x: x.masked_select(_other(m) > 0),
    "take": lambda m, x: x.take(m.tensor([0, 4])),
    "as_strided": lambda m, x: x.as_strided((2, 2), (1, 2)),
    "trace": lambda m, x: x.trace(),
    "aminmax_both": lambda m, x: sum(x.aminmax()),
    "aminmax_one": lambda m, x: x.aminmax()[1],
    # formulas without an in-place step: version 0
    "fmax": lambda m, x: m.fmax(x, _other(m)),
    "clamp": lambda m, x: x.clamp(-1, 1),
    "masked_fill": lambda m, x: x.masked_fill(_other(m) > 0, 2.0),
}


def _x(m):
    return m.tensor([[-1.3, 0.4, 1.1], [1.8, -0.2, 0.9]], requires_grad=True)


# the fused backward's tokens read the same table: a few representative nodes
_FUSED = ("maximum", "max_all", "sort", "gather", "aminmax_both", "aminmax_one", "clamp")


@pytest.mark.parametrize(
    "name, engine",
    [(n, "eager") for n in sorted(_CHANGED_IN_PLACE)] + [(n, "fused") for n in _FUSED],
    indirect=["engine"],
)
def test_grad_version_of_a_formula_changed_in_place(name, engine):
    def fn(m):
        x = _x(m)
        _CHANGED_IN_PLACE[name](m, x).sum().backward()
        return x.grad, x.grad._version

    both(fn)


@pytest.mark.parametrize("name", ["maximum", "sort", "max_all", "aminmax_one", "clamp"])
def test_autograd_grad_result_version_of_a_formula_changed_in_place(name):
    def fn(m):
        x = _x(m)
        y = _CHANGED_IN_PLACE[name](m, x)
        (g,) = m.autograd.grad(y, x, m.ones_like(y))
        return g, g._version

    both(fn)


def test_maximum_of_a_scalar_leaf(engine):
    def fn(m):
        x = m.tensor(1.0, requires_grad=True)
        m.maximum(m.tensor(0.0), x).backward()
        return x.grad, x.grad._version

    both(fn)


@pytest.mark.parametrize(
    "case",
    [
        "same_leaf_twice",  # both edges' gradients, summed in place into the first
        "through_view",  # a view's backward keeps the version
        "then_mul",  # a later node makes a new gradient
        "sum_with_other_path",
        "hook",
    ],
)
def test_changed_gradient_flows_on(case, engine):
    def fn(m):
        x = _x(m)
        seen = []
        if case == "same_leaf_twice":
            y = m.maximum(x, x * 0.5)
        elif case == "through_view":
            y = m.maximum(x.view(3, 2), _other(m).view(3, 2))
        elif case == "then_mul":
            y = m.maximum(x * 2, _other(m))
        elif case == "sum_with_other_path":
            y = x.sort(1)[0] + x.max(1, keepdim=True)[0]
        else:
            x.register_hook(lambda g: seen.append(g._version))
            y = x.topk(1)[0]
        y.sum().backward()
        return x.grad, x.grad._version, seen

    both(fn)


# --- storage_offset/stride of dtype views and as_strided views (ops/tensor_info.py _replay) ----

_DTYPE_VIEWS = {
    "f16_slice": lambda m: m.zeros(3, 4).view(m.float16)[2:],
    "f16_slice_cols": lambda m: m.zeros(3, 4).view(m.float16)[1:, 3:],
    "f16_of_slice": lambda m: m.zeros(3, 4)[1:, 1:3].view(m.float16),
    "u8_of_row": lambda m: m.zeros(3, 4)[2].view(m.uint8),
    "bool_row": lambda m: m.zeros(3, 4).view(m.bool)[1],
    "f32_of_f16_row": lambda m: m.zeros(3, 4, dtype=m.float16)[2].view(m.float32)[1:],
    "f64_of_f16": lambda m: m.zeros(3, 8, dtype=m.float16)[1:, 4:].view(m.float64),
    "c64_to_f32": lambda m: m.zeros(3, 4, dtype=m.complex64)[1:].view(m.float32),
    "f32_to_c64_slice": lambda m: m.zeros(3, 4).view(m.complex64)[1:, 1:],
    "f16_t": lambda m: m.zeros(3, 4).view(m.float16).t()[1:],
    "f16_diagonal": lambda m: m.zeros(4, 4).view(m.float16).diagonal(),
    "f16_empty": lambda m: m.zeros(3, 4).view(m.float16)[3:],
    "as_strided_empty": lambda m: m.zeros(10).as_strided((0,), (1,), 5),
    "as_strided_empty_2d": lambda m: m.zeros(3, 4)[1:].as_strided((2, 0), (1, 1), 7),
    "as_strided_slice": lambda m: m.zeros(10).as_strided((3, 2), (2, 1), 1)[1:],
    "as_strided_then_f16": lambda m: m.zeros(10).as_strided((2, 2), (2, 1), 3).view(m.float16),
    "f16_then_as_strided": lambda m: m.zeros(10).view(m.float16).as_strided((2, 2), (2, 1), 3),
}


@pytest.mark.parametrize("name", sorted(_DTYPE_VIEWS))
def test_storage_offset_and_strides_of_dtype_and_strided_views(name):
    def fn(m):
        t = _DTYPE_VIEWS[name](m)
        return tuple(t.shape), t.stride(), t.storage_offset(), t.is_contiguous()

    both(fn)


def test_view_dtype_of_a_view_with_an_odd_offset_raises():
    def fn(m):
        m.zeros(3, 4, dtype=m.float16)[:, 1:].view(m.float32)

    both(fn)
