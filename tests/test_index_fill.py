"""``index_fill``, ``index_fill_`` and ``torch.index_fill`` against PyTorch: values, gradients,
nodes, errors and the in-place rules (versions, leaves, views, inference tensors)."""

from __future__ import annotations

import pytest
from conftest import both

X = [[0.5, -1.0, 2.0, 3.5], [4.0, 5.5, -6.0, 7.0], [8.0, 9.0, 10.5, -11.0]]


def _x(m, dtype="float32", requires_grad=True):
    x = m.tensor(X, dtype=getattr(m, dtype))
    return x.requires_grad_() if requires_grad else x


def _i(m, values, dtype="int64"):
    return m.tensor(values, dtype=getattr(m, dtype))


def _names(node):
    """The node's name and its edges' names (None for an absent edge)."""
    return node.name(), [None if f is None else f.name() for f, _ in node.next_functions]


# --- values and gradients ------------------------------------------------------------------------

INDICES = {
    "vector": [0, 2],
    "negative": [-1],
    "repeated": [1, 1, -3],
    "scalar": 2,
    "empty": [],
}


@pytest.mark.parametrize("dim", [0, 1, -1, -2])
@pytest.mark.parametrize("index", sorted(INDICES))
def test_number_value_fills_and_zeroes_the_gradient_there(dim, index):
    def fn(m):
        x = _x(m)
        values = INDICES[index]
        if dim in (1, -1) and values == [1, 1, -3]:
            values = [1, 1, -4]
        out = x.index_fill(dim, _i(m, values), -2.5)
        (out * out).sum().backward()
        return out, x.grad, _names(out.grad_fn)

    both(fn)


@pytest.mark.parametrize("dim", [0, -1])
@pytest.mark.parametrize("index", [[0, 2], [2, 0, 2], 1, []])
def test_tensor_value_gets_the_sum_of_the_gradient_over_filled_positions(dim, index):
    # a repeated index counts once (PyTorch sums over ``unique(index)``)
    def fn(m):
        x = _x(m)
        v = m.tensor(1.5, requires_grad=True)
        out = x.index_fill(dim, _i(m, index), v)
        (out * m.arange(12.0).reshape(3, 4)).sum().backward()
        return out, x.grad, v.grad, _names(out.grad_fn)

    both(fn)


@pytest.mark.parametrize(
    "which", ["value_only", "self_only", "neither", "float64_value", "int_value"]
)
def test_tensor_value_edges_and_dtypes(which):
    def fn(m):
        x = _x(m, requires_grad=which in ("self_only", "float64_value"))
        if which == "int_value":
            v = m.tensor(3)
        elif which == "float64_value":
            v = m.tensor(0.25, dtype=m.float64, requires_grad=True)
        else:
            v = m.tensor(0.25, requires_grad=which == "value_only")
        out = x.index_fill(1, _i(m, [3, 0]), v)
        result = [out]
        if out.requires_grad:
            result.append(_names(out.grad_fn))
            out.sum().backward()
            result += [x.grad, v.grad]
        return result

    both(fn)


@pytest.mark.parametrize(
    "dtype", ["float16", "bfloat16", "float64", "int64", "int32", "uint8", "bool", "complex64"]
)
@pytest.mark.parametrize("value", [2.75, -3, True, 1.5 - 2j, "tensor"])
def test_values_of_every_kind_into_every_dtype(dtype, value):
    def fn(m):
        x = m.tensor(X).abs().to(getattr(m, dtype))
        v = m.tensor(-7.5) if value == "tensor" else value
        return x.index_fill(0, _i(m, [1]), v)

    both(fn)


@pytest.mark.parametrize("index", [[0], [0, 0], 0, []])
def test_zero_dim_self(index):
    def fn(m):
        x = m.tensor(4.0, requires_grad=True)
        v = m.tensor(-1.0, requires_grad=True)
        out = x.index_fill(-1, _i(m, index), v)
        out.backward()
        return out, x.grad, v.grad

    both(fn)


# PyTorch's value gradient is ``grad.index_select(dim, unique(index)).sum()``: index_select refuses
# negative indices, with the message of the kernel it takes (dim 1 and empty gradients have their
# own), and a 0-d gradient takes exactly one index.
VALUE_GRADIENT_ERRORS = {
    "dim0_negative": ((3, 4), 0, [-1]),
    "dim1_negatives": ((3, 4), 1, [-1, 2, -3]),
    "dim1_of_3d": ((2, 3, 4), 1, [-2]),
    "dim2_of_3d": ((2, 3, 4), -1, [1, -1]),
    "vector": ((5,), 0, [-5, 0]),
    "scalar_index": ((5,), 0, -2),
    "zero_dim_two_indices": ((), 0, [0, -1]),
    "zero_dim_negative": ((), 0, [-1]),
    "zero_dim_empty": ((), 0, []),
    "empty_gradient": ((3, 0), 0, [-1]),
    "empty_gradient_past_the_end": ((3, 0), 0, [7]),
    "empty_axis": ((0, 0), 1, [0]),
    "empty_index": ((3, 4), 1, []),
}


@pytest.mark.parametrize("name", sorted(VALUE_GRADIENT_ERRORS))
def test_value_gradient_refuses_negative_indices_as_pytorch(name):
    shape, dim, index = VALUE_GRADIENT_ERRORS[name]

    def fn(m):
        x = m.ones(shape, requires_grad=True)
        v = m.tensor(2.0, requires_grad=True)
        out = x.index_fill(dim, _i(m, index), v)
        try:
            out.sum().backward()
        except (RuntimeError, IndexError) as exc:
            return type(exc).__name__, str(exc), x.grad
        return x.grad, v.grad

    both(fn)


def test_negative_indices_are_fine_when_only_self_needs_grad():
    def fn(m):
        x = _x(m)
        out = x.index_fill(1, _i(m, [-1, -3]), m.tensor(2.0))
        out.sum().backward()
        return out, x.grad

    both(fn)


@pytest.mark.parametrize(
    "shape, dim, index",
    [((3, 0), 1, [-1]), ((0, 3), 0, [0]), ((0, 3), 0, []), ((3, 0), 0, [7]), ((0, 2, 3), 2, [1])],
)
def test_empty_self(shape, dim, index):
    # PyTorch's kernel views self with stride 0 along dim: over an empty storage it may not fit
    both(lambda m: m.zeros(shape, dtype=m.float64).index_fill(dim, _i(m, index), 1.0))


def test_function_form_and_keywords():
    def fn(m):
        x = _x(m)
        a = m.index_fill(x, 1, _i(m, [2]), 9.0)
        b = x.index_fill(dim=0, index=_i(m, [0]), value=m.tensor(1.0))
        c = x.index_fill(m.tensor(1), _i(m, [1]), 2)
        return a, b, c

    both(fn)


def test_second_order_gradient_through_the_value():
    def fn(m):
        x = _x(m)
        v = m.tensor(2.0, requires_grad=True)
        out = x.index_fill(0, _i(m, [0, 2]), v * v)
        (gv,) = m.autograd.grad(out.sum(), v, create_graph=True)
        gv.backward()
        return gv, v.grad

    both(fn)


def test_index_is_saved_and_checked_for_in_place_changes():
    def fn(m):
        x = _x(m)
        index = _i(m, [0, 1])
        out = x.index_fill(0, index, 0.0)
        index.add_(1)
        out.sum().backward()
        return x.grad

    both(fn)


def test_self_is_not_saved():
    def fn(m):
        base = _x(m)
        x = base * 1
        out = x.index_fill(0, _i(m, [0]), 0.0)
        x.mul_(2)
        out.sum().backward()
        return base.grad

    both(fn)


# --- errors --------------------------------------------------------------------------------------

ERRORS = {
    "index_float": lambda m, x: x.index_fill(0, _i(m, [0.0], "float32"), 1.0),
    "index_int32": lambda m, x: x.index_fill(0, _i(m, [0], "int32"), 1.0),
    "index_2d": lambda m, x: x.index_fill(0, _i(m, [[0]]), 1.0),
    "index_high": lambda m, x: x.index_fill(0, _i(m, [0, 3]), 1.0),
    "index_low": lambda m, x: x.index_fill(1, _i(m, [-5]), 1.0),
    "dim_high": lambda m, x: x.index_fill(2, _i(m, [0]), 1.0),
    "dim_low": lambda m, x: x.index_fill(-3, _i(m, [0]), 1.0),
    "value_1d": lambda m, x: x.index_fill(0, _i(m, [0]), m.ones(1)),
    "value_2d": lambda m, x: x.index_fill(0, _i(m, [0]), m.ones(2, 2)),
    "complex_number": lambda m, x: x.index_fill(0, _i(m, [0]), 1 + 0j),
    "complex_tensor": lambda m, x: x.index_fill(0, _i(m, [0]), m.tensor(2j)),
    "value_dim_before_index_dtype": lambda m, x: x.index_fill(
        5, _i(m, [0.0], "float32"), m.ones(2)
    ),
    "index_dtype_before_dim": lambda m, x: x.index_fill(5, _i(m, [0.0], "float32"), 1.0),
    "complex_before_dim": lambda m, x: x.index_fill(5, _i(m, [0]), 1j),
    "dim_before_index_dims": lambda m, x: x.index_fill(5, _i(m, [[0]]), 1.0),
    "zero_dim_self_index": lambda m, x: m.tensor(1.0).index_fill(0, _i(m, [1]), 1.0),
    "zero_dim_self_dim": lambda m, x: m.tensor(1.0).index_fill(1, _i(m, [0]), 1.0),
    "list_index": lambda m, x: x.index_fill(0, [0], 1.0),
    "string_value": lambda m, x: x.index_fill(0, _i(m, [0]), "a"),
    "none_value": lambda m, x: x.index_fill(0, _i(m, [0]), None),
    "float_dim": lambda m, x: x.index_fill(0.5, _i(m, [0]), 1.0),
    "bool_dim": lambda m, x: x.index_fill(True, _i(m, [0]), 1.0),
    "missing_value": lambda m, x: x.index_fill(0, _i(m, [0])),
    "unknown_keyword": lambda m, x: x.index_fill(0, _i(m, [0]), value=1.0, foo=1),
    "function_list_index": lambda m, x: m.index_fill(x, 0, [0], 1.0),
    "in_place_list_index": lambda m, x: x.detach().index_fill_(0, [0], 1.0),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors(name):
    both(lambda m: ERRORS[name](m, _x(m)))


# PyTorch converts the value as a number: c10's range checks name the C++ type.
OVERFLOWS = {
    "uint8_300": ("uint8", 300),
    "uint8_minus_1_wraps": ("uint8", -1),
    "uint8_minus_255_wraps": ("uint8", -255),
    "uint8_minus_256": ("uint8", -256),
    "uint8_negative_float": ("uint8", -1.5),
    "int8_1000": ("int8", 1000),
    "int16_40000": ("int16", 40000),
    "int32_2_40": ("int32", 2**40),
    "int64_inf": ("int64", float("inf")),
    "int64_nan": ("int64", float("nan")),
    "float16_1e6": ("float16", 1e6),
    "float16_inf": ("float16", float("inf")),
    "bfloat16_1e300": ("bfloat16", 1e300),
    "float32_1e300": ("float32", 1e300),
    "float32_nan": ("float32", float("nan")),
    "complex64_1e300": ("complex64", complex(1, 1e300)),
    "bool_nan": ("bool", float("nan")),
    "uint8_tensor_300": ("uint8", "tensor300"),
    "int64_tensor_300": ("int64", "tensor300.5"),
    "empty_index_still_converts": ("float32", "empty"),
}


@pytest.mark.parametrize("name", sorted(OVERFLOWS))
def test_value_range_errors(name):
    dtype, value = OVERFLOWS[name]

    def fn(m):
        x = m.zeros(2, 3, dtype=getattr(m, dtype))
        index = _i(m, [1])
        v = value
        if value == "tensor300":
            v = m.tensor(300)
        elif value == "tensor300.5":
            v = m.tensor(300.5)
        elif value == "empty":
            v, index = 1e300, _i(m, [])
        return x.index_fill(1, index, v)

    both(fn)


def test_out_of_range_index_is_not_checked_when_nothing_is_filled():
    def fn(m):
        return m.zeros(3, 0).index_fill(0, _i(m, [7]), 1.0), m.zeros(0, 2).index_fill(
            1, _i(m, [7]), 1.0
        )

    both(fn)


@pytest.mark.parametrize("mode", ["grad", "no_grad", "inference_mode"])
@pytest.mark.parametrize("index", [[1], [9]])
def test_integer_self_with_a_value_that_requires_grad(mode, index):
    # out of place, PyTorch records the integer result and refuses it (after the kernel's checks)
    def fn(m):
        ctx = {"no_grad": m.no_grad, "inference_mode": m.inference_mode}.get(mode, m.enable_grad)
        v = m.tensor(2.5, requires_grad=True)
        with ctx():
            out = m.arange(4).index_fill(0, _i(m, index), v)
        return out, out.requires_grad

    both(fn)


# --- in place ------------------------------------------------------------------------------------


def test_in_place_bumps_the_version_and_takes_the_node():
    def fn(m):
        leaf = _x(m)
        x = leaf * 2
        v = m.tensor(0.5, requires_grad=True)
        before = x._version
        out = x.index_fill_(1, _i(m, [0, 2]), v)
        after = x._version
        x.sum().backward()
        return out is x, before, after, _names(x.grad_fn), leaf.grad, v.grad

    both(fn)


@pytest.mark.parametrize("value", ["number", "tensor"])
def test_in_place_on_a_leaf_that_requires_grad_raises(value):
    def fn(m):
        x = m.ones(3, requires_grad=True)
        v = 1.0 if value == "number" else m.tensor(1.0)
        x.index_fill_(5, _i(m, [0.0], "float32"), v)  # the leaf check comes first

    both(fn)


def test_in_place_on_a_view_of_a_leaf_raises():
    both(lambda m: _x(m)[0].index_fill_(0, _i(m, [0]), 1.0))


def test_in_place_under_no_grad_on_a_leaf_is_allowed():
    def fn(m):
        x = _x(m)
        with m.no_grad():
            x.index_fill_(0, _i(m, [1]), 0.0)
        return x, x._version

    both(fn)


@pytest.mark.parametrize("dim", [0, 1])
def test_in_place_through_a_view_records_copy_slices(dim):
    def fn(m):
        leaf = _x(m)
        base = leaf.clone()
        view = base[1:]
        v = m.tensor(-4.0, requires_grad=True)
        view.index_fill_(dim, _i(m, [0]), v)
        (base * base).sum().backward()
        return base, view, _names(base.grad_fn), _names(view.grad_fn), leaf.grad, v.grad

    both(fn)


def test_in_place_written_as_a_number_into_an_integer_tensor():
    # Note [Written as a number]: the write is recorded though the result is an integer tensor
    def fn(m):
        x = m.arange(4)
        v = m.tensor(2.5, requires_grad=True)
        x.index_fill_(0, _i(m, [0, 2]), v)
        return x, x.requires_grad, _names(x.grad_fn)

    both(fn)


def test_in_place_refuses_an_index_that_shares_self_memory():
    def fn(m):
        a = m.tensor([0, 1, 2, 3])
        try:
            a.index_fill_(0, a[:2], 5)
        except RuntimeError as exc:
            first = str(exc)
        b = m.tensor([0, 1, 2, 3])
        b[:2].index_fill_(0, b[2:] - 2, 5)  # a copy of the memory is fine
        return first, a, b

    both(fn)


def test_in_place_value_may_share_self_memory():
    def fn(m):
        x = _x(m, requires_grad=False)
        x.index_fill_(1, _i(m, [1, 3]), x[2, 2])
        return x

    both(fn)


@pytest.mark.parametrize("requires_grad", [False, True])
def test_in_place_on_an_expanded_tensor_warns_and_writes(requires_grad):
    def fn(m):
        base = m.zeros(1, 4, requires_grad=requires_grad).clone()
        e = base.expand(3, 4)
        e.index_fill_(1, _i(m, [0, -2]), 2.0)
        e.index_fill_(0, _i(m, [1]), m.tensor(3.0))
        result = [base, e, base._version]
        if requires_grad:
            result.append(_names(base.grad_fn))
            try:
                e.sum().backward()
            except RuntimeError as exc:
                result.append(str(exc))
        return result

    both(fn)


def test_in_place_on_an_expanded_tensor_checks_before_writing():
    def fn(m):
        e = m.zeros(1, 4).expand(3, 4)
        try:
            e.index_fill_(1, _i(m, [4]), 1.0)
        except IndexError as exc:
            return str(exc), e

    both(fn)


# --- inference tensors ---------------------------------------------------------------------------


def _inference(m, fn):
    with m.inference_mode():
        return fn()


def test_in_place_on_an_inference_tensor_outside_inference_mode_raises():
    both(lambda m: _inference(m, lambda: m.ones(3)).index_fill_(0, _i(m, [0]), 2.0))


def test_inference_tensors_inside_inference_mode():
    def fn(m):
        with m.inference_mode():
            x = m.ones(2, 3)
            out = x.index_fill(1, _i(m, [1]), 2.0)
            x.index_fill_(0, _i(m, [0]), 3.0)
        return out, out.is_inference(), x, x.is_inference()

    both(fn)


def test_out_of_place_on_an_inference_tensor_gives_a_normal_tensor():
    def fn(m):
        x = _inference(m, lambda: m.ones(2, 3))
        v = m.tensor(5.0, requires_grad=True)
        out = x.index_fill(1, _i(m, [2]), v)
        out.sum().backward()
        return out, out.is_inference(), v.grad

    both(fn)


@pytest.mark.parametrize("value", ["number", "tensor"])
def test_saving_an_inference_index_raises(value):
    def fn(m):
        index = _inference(m, lambda: _i(m, [0]))
        v = 1.0 if value == "number" else m.tensor(1.0, requires_grad=True)
        return _x(m, requires_grad=value == "number").index_fill(0, index, v)

    both(fn)
