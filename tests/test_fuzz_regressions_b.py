"""Regressions next to the fuzzer's findings (group B): index checks, writes into integer tensors,
stack of inference tensors, saved inference operands of products, dot in tensordot."""

from __future__ import annotations

import pytest
from conftest import both


def _inference_ones(m, *shape, requires_grad=False, dtype=None):
    with m.inference_mode():
        return m.ones(*shape, requires_grad=requires_grad, dtype=dtype)


def _chain(fn):
    """The graph below ``fn`` by node names (leaves left out)."""
    if fn is None:
        return None
    below = [f for f, _ in fn.next_functions if f is not None]
    return fn.name(), [_chain(f) for f in below if "AccumulateGrad" not in f.name()]


def _edge_names(t):
    if t.grad_fn is None:
        return None
    return [None if f is None else f.name() for f, _ in t.grad_fn.next_functions]


# --- index checks: the kernel's, after the basic indexing and the leaf checks -------------------

_INDEX_CASES = {
    "get_float_then_int_out_of_range": lambda m, x: x[m.tensor([0.0]), 5],
    "set_float_then_int_out_of_range": lambda m, x: x.__setitem__((m.tensor([0.0]), 5), 1.0),
    "set_float_then_out_of_range_tensor": lambda m, x: x.__setitem__(
        (m.tensor([0.0]), m.tensor([5])), 1.0
    ),
    "set_mask_shape_then_float": lambda m, x: x.__setitem__(
        (m.tensor([True, False, True]), m.tensor([0.0])), 1.0
    ),
    "set_float_then_mask_shape": lambda m, x: x.__setitem__(
        (m.tensor([0.0]), m.tensor([True, False, True])), 1.0
    ),
    "set_float_0d": lambda m, x: x.__setitem__(m.tensor(0.0), 1.0),
    "set_float_list": lambda m, x: x.__setitem__([0.0], 1.0),  # a list's numbers become int64
    "get_float_list": lambda m, x: x[[[1.7, -1.5]]],
    "set_bool_list_shape": lambda m, x: x.__setitem__([True, False, True], 1.0),
    "get_int16": lambda m, x: x[m.tensor([0], dtype=m.int16)],
    "get_int32": lambda m, x: x[m.tensor([1], dtype=m.int32)],
    "index_put_float_then_value_dtype": lambda m, x: x.index_put_(
        (m.tensor([0.0]),), m.tensor(1, dtype=m.int64)
    ),
    "index_put_float_then_value_shape": lambda m, x: x.index_put_(
        (m.tensor([0.0]),), m.ones(3, dtype=m.float32)
    ),
    "index_put_mask_shape": lambda m, x: x.index_put_(
        (m.tensor([True, False, True]),), m.tensor(1.0)
    ),
    "set_mask_shape_then_value_dtype": lambda m, x: x.__setitem__(
        m.tensor([True, False, True]), m.tensor(1, dtype=m.int64)
    ),
}


@pytest.mark.parametrize("requires_grad", [False, True])
@pytest.mark.parametrize("name", sorted(_INDEX_CASES))
def test_index_errors_come_in_pytorch_order(name, requires_grad):
    def fn(m):
        x = m.zeros(2, 2, requires_grad=requires_grad)
        try:
            out = _INDEX_CASES[name](m, x)
        except (RuntimeError, IndexError) as exc:
            return type(exc).__name__, str(exc)
        return out, x

    both(fn)


# --- writes of a float value that requires grad into integer tensors ---------------------------

_NUMBER_WRITES = {
    "fill_": lambda m, x, v: x.fill_(v),
    "setitem_row": lambda m, x, v: x.__setitem__(0, v),
    "setitem_all": lambda m, x, v: x.__setitem__(..., v),
    "masked_fill_": lambda m, x, v: x.masked_fill_(m.tensor([[True, False, True]] * 2), v),
    "copy_": lambda m, x, v: x.copy_(v),  # PyTorch records no copy into an integer tensor
}


@pytest.mark.parametrize("value", [1.5, -2.75])
@pytest.mark.parametrize("dtype", ["int64", "int32", "bool"])
@pytest.mark.parametrize("name", sorted(_NUMBER_WRITES))
def test_write_of_value_that_requires_grad_into_integer_tensor(name, dtype, value):
    def fn(m):
        x = m.full((2, 3), 7, dtype=getattr(m, dtype))
        v = m.tensor(value, requires_grad=True)
        _NUMBER_WRITES[name](m, x, v)
        return x, x.requires_grad, x.is_leaf, _edge_names(x), x._version

    both(fn)


def test_masked_fill_into_large_integers_keeps_the_other_values_exact():
    def fn(m):
        x = m.tensor([2**40 + 1, 3, 2**53 + 1])
        x.masked_fill_(m.tensor([False, True, False]), m.tensor(0.5, requires_grad=True))
        return x, x.grad_fn.name()

    both(fn)


@pytest.mark.parametrize(
    "op", ["mul", "sum", "view", "clone", "add_", "mul_", "gt", "argmax", "to_int", "neg", "float"]
)
def test_ops_on_integer_tensor_that_requires_grad_raise(op):
    def fn(m):
        x = m.zeros(2, 3, dtype=m.int64)
        x.fill_(m.tensor(1.5, requires_grad=True))
        try:
            y = {
                "mul": lambda: x * 2,
                "sum": lambda: x.sum(),
                "view": lambda: x[0],
                "clone": lambda: x.clone(),
                "add_": lambda: x.add_(1),  # in place: recorded (AddBackward0)
                "mul_": lambda: x.mul_(2),
                "gt": lambda: x > 0,  # not differentiable: no error
                "argmax": lambda: x.argmax(),
                "to_int": lambda: x.to(m.int32),
                "neg": lambda: -x,
                "float": lambda: x.float(),  # a floating result: recorded
            }[op]()
        except RuntimeError as exc:  # PyTorch: "Autograd not support dtype: Long"
            return str(exc)
        return y, y.requires_grad, None if y.grad_fn is None else y.grad_fn.name()

    both(fn)


# --- stack of inference tensors: PyTorch's kernel is cat + view ---------------------------------


@pytest.mark.parametrize("mode", ["grad", "no_grad", "inference_mode"])
@pytest.mark.parametrize("requires_grad", [False, True])
@pytest.mark.parametrize("shape_dim", [((2,), 0), ((2,), 1), ((2, 3), 1), ((2, 3), -1)], ids=str)
def test_stack_of_inference_tensors(shape_dim, requires_grad, mode):
    shape, dim = shape_dim

    def fn(m):
        a = _inference_ones(m, *shape, requires_grad=requires_grad)
        ctx = {"no_grad": m.no_grad, "inference_mode": m.inference_mode}.get(mode, m.enable_grad)
        with ctx():
            y = m.stack([a, a * 2], dim)
        base = y._base
        base = None if base is None else (base, base.is_inference(), base._is_view())
        return y, y._is_view(), y.is_inference(), y.requires_grad, y.is_leaf, base

    both(fn)


def test_write_through_stack_of_inference_tensors_reaches_its_base():
    def fn(m):
        a = _inference_ones(m, 2)
        y = m.stack([a, a, a])
        base = y._base
        y.add_(1)
        return y, base, y._version, a

    both(fn)


def test_stack_of_inference_and_normal_tensor_is_not_a_view():
    def fn(m):
        y = m.stack([_inference_ones(m, 2), m.ones(2, requires_grad=True)])
        return y, y._is_view(), y.grad_fn.name()

    both(fn)


# --- products: an inference operand they would save raises before their own checks -------------

_R = "R"  # a normal tensor that requires grad
_I = "I"  # an inference tensor

_PRODUCTS = {
    "mm_rank": ("mm", [(_R, (2, 3)), (_I, (3,))]),
    "mm_self_rank": ("mm", [(_R, (3,)), (_I, (3, 2))]),
    "mm_shape": ("mm", [(_R, (2, 3)), (_I, (2, 3))]),
    "mm_dtype": ("mm", [(_R, (2, 3)), (_I, (3, 2), "float64")]),
    "mm_first_inference": ("mm", [(_I, (2, 3)), (_R, (2, 3))]),
    "mm_inference_requires_grad": ("mm", [(_I, (2, 3), None, True), ("N", (2, 3))]),
    "mv_shape": ("mv", [(_R, (2, 3)), (_I, (2,))]),
    "dot_dtype": ("dot", [(_R, (3,)), (_I, (2,), "float64")]),
    "vdot_shape": ("vdot", [(_R, (3,)), (_I, (2,))]),
    "bmm_rank": ("bmm", [(_R, (2, 2, 3)), (_I, (2, 3))]),
    "addmm_shape": ("addmm", [(_R, (2, 2)), (_R, (2, 3)), (_I, (2, 3))]),
    "addmv_shape": ("addmv", [(_R, (2,)), (_R, (2, 3)), (_I, (2,))]),
    "baddbmm_shape": ("baddbmm", [(_R, (2, 2, 2)), (_R, (2, 2, 3)), (_I, (2, 2, 3))]),
    "addbmm_shape": ("addbmm", [(_R, (2, 2)), (_R, (2, 2, 3)), (_I, (2, 2, 3))]),
    "matmul_1d_2d": ("matmul", [(_R, (3,)), (_I, (2, 3))]),
    "matmul_3d_2d": ("matmul", [(_R, (2, 2, 3)), (_I, (2, 3))]),
    "matmul_2d_3d": ("matmul", [(_R, (2, 3)), (_I, (2, 2, 3))]),
    "matmul_batch": ("matmul", [(_R, (2, 2, 3)), (_I, (3, 3, 2))]),
    "matmul_no_grad_operand": ("matmul", [("N", (2, 3)), (_I, (2, 3), None, True)]),
}


@pytest.mark.parametrize("name", sorted(_PRODUCTS))
def test_product_with_inference_operand_raises_the_saved_error_first(name):
    op, specs = _PRODUCTS[name]

    def make(m, kind, shape, dtype=None, requires_grad=False):
        dtype = getattr(m, dtype) if dtype else None
        if kind == _I:
            return _inference_ones(m, *shape, requires_grad=requires_grad, dtype=dtype)
        return m.ones(*shape, dtype=dtype, requires_grad=kind == _R)

    def fn(m):
        args = [make(m, *spec) for spec in specs]
        try:
            out = getattr(m, op)(*args)
        except RuntimeError as exc:
            return str(exc)
        return out, out.grad_fn.name()

    both(fn)


_KRON_CASES = {
    "grad_inference": lambda m: (m.ones(2, requires_grad=True), _inference_ones(m, 3)),
    "inference_grad": lambda m: (_inference_ones(m, 2, 2), m.ones(3, requires_grad=True)),
    "grad_inference_int": lambda m: (
        m.ones(2, 1, requires_grad=True),
        _inference_ones(m, 3, dtype=m.int64),
    ),
    "plain_inference": lambda m: (m.ones(2), _inference_ones(m, 3)),
    "both_inference": lambda m: (
        _inference_ones(m, 2, requires_grad=True),
        _inference_ones(m, 3),
    ),
}


@pytest.mark.parametrize("mode", ["grad", "no_grad"])
@pytest.mark.parametrize("case", sorted(_KRON_CASES))
def test_kron_with_inference_operand_raises_the_saved_error(case, mode):
    def fn(m):
        a, b = _KRON_CASES[case](m)
        try:
            with m.no_grad() if mode == "no_grad" else m.enable_grad():
                out = m.kron(a, b)
        except RuntimeError as exc:
            return str(exc)
        return out, out.is_inference()

    both(fn)


# --- tensordot contracting everything: PyTorch takes dot ----------------------------------------

_CONTRACTIONS = {
    "inner_1d": lambda m, a, b: m.inner(a(3), b(3)),
    "inner_2d_1d": lambda m, a, b: m.inner(a(2, 3), b(3)),
    "inner_1d_2d": lambda m, a, b: m.inner(a(3), b(2, 3)),
    "inner_3d_1d": lambda m, a, b: m.inner(a(2, 2, 3), b(3)),
    "tensordot_all": lambda m, a, b: m.tensordot(a(2, 3), b(2, 3), dims=2),
    "tensordot_1d": lambda m, a, b: m.tensordot(a(3), b(3), dims=1),
    "tensordot_size_1": lambda m, a, b: m.tensordot(a(1, 3), b(3), dims=([1], [0])),
    "tensordot_mm": lambda m, a, b: m.tensordot(a(2, 3), b(3, 2), dims=1),
}


@pytest.mark.parametrize("dtype", ["float32", "int64", "bool"])
@pytest.mark.parametrize("name", sorted(_CONTRACTIONS))
def test_full_contraction_uses_dot(name, dtype):
    def fn(m):
        rg = dtype == "float32"

        def make(*shape):
            return m.ones(*shape, dtype=getattr(m, dtype), requires_grad=rg)

        try:
            out = _CONTRACTIONS[name](m, make, make)
        except (RuntimeError, NotImplementedError) as exc:
            return type(exc).__name__, str(exc)
        return out, _chain(out.grad_fn)

    both(fn)
