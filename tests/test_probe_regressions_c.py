"""Mismatches with PyTorch found by probing (issue 9): numbers converted into a tensor's dtype
(``fill_``, ``masked_fill``, ``index_fill``, ``x[i] = v``), complex and requires-grad fill values,
and the type names of the version-counter error."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import both

DTYPES = ["uint8", "int8", "int16", "int32", "int64", "bool", "float16", "bfloat16", "float32"]
NUMBERS = [
    300,
    -1,
    -129,
    -256,
    2**31,
    2**63,
    -(2**63) - 1,
    2**64,
    1e10,
    70000.0,
    1e39,
    -1.0,
    255.5,
    float(2**63),
    float("inf"),
    float("nan"),
    1.5,
    3 + 0j,
    3 + 1j,
    True,
    np.int64(300),
]
MASK = [True, False]


def _zeros(m, dtype):
    return m.zeros(2, dtype=getattr(m, dtype))


# --- numbers converted into the tensor's dtype ----------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "write",
    [
        lambda m, x, v: x.fill_(v),
        lambda m, x, v: x.masked_fill(m.tensor(MASK), v),
        lambda m, x, v: x.masked_fill_(m.tensor(MASK), v),
        lambda m, x, v: m.masked_fill(x, m.tensor(MASK), v),
        lambda m, x, v: x.index_fill(0, m.tensor([0]), v),
        lambda m, x, v: x.index_fill_(0, m.tensor([1]), v),
    ],
    ids=["fill_", "masked_fill", "masked_fill_", "torch.masked_fill", "index_fill", "index_fill_"],
)
def test_filled_number_is_range_checked(write, dtype):
    for v in NUMBERS:
        both(lambda m, v=v: write(m, _zeros(m, dtype), v))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "index",
    [lambda m: 0, lambda m: slice(0, 1), lambda m: m.tensor(MASK), lambda m: m.tensor([0])],
    ids=["int", "slice", "mask", "index"],
)
def test_assigned_number_is_range_checked(index, dtype):
    def fn(m, v):
        x = _zeros(m, dtype)
        x[index(m)] = v
        return x

    for v in NUMBERS:
        both(lambda m, v=v: fn(m, v))


@pytest.mark.parametrize("v", [np.float32(3), np.float16(3), np.complex64(3), np.bool_(True)])
def test_assigned_numpy_scalar_of_no_python_type_is_refused(v):
    def fn(m):
        x = m.zeros(2, dtype=m.uint8)
        x[0] = v

    both(fn)


@pytest.mark.parametrize("dtype", ["uint8", "int32", "int64", "bool", "float16", "complex64"])
@pytest.mark.parametrize(
    "value",
    [(300, "int64"), (1e30, "float32"), (float("nan"), "float32"), (1 + 2j, "complex64")],
    ids=["300", "1e30", "nan", "1+2j"],
)
def test_masked_fill_converts_a_tensor_value_as_a_number(dtype, value):
    v, vdtype = value

    def fn(m, inplace):
        x = _zeros(m, dtype)
        mask = m.tensor(MASK)
        t = m.tensor(v, dtype=getattr(m, vdtype))
        return x.masked_fill_(mask, t) if inplace else x.masked_fill(mask, t)

    both(lambda m: fn(m, False))
    both(lambda m: fn(m, True))


def test_masked_fill_order_of_checks():
    # out of place, PyTorch broadcasts before checking the mask's dtype; in place, the other way
    both(lambda m: m.zeros(2).masked_fill(m.ones(3, dtype=m.int64), 1))
    both(lambda m: m.zeros(2).masked_fill_(m.ones(3, dtype=m.int64), 1))
    both(lambda m: m.zeros(2).masked_fill(m.ones(2, dtype=m.bool), 2**64))
    both(lambda m: m.zeros(2, requires_grad=True).masked_fill_(m.ones(2, dtype=m.bool), 2**64))
    both(lambda m: m.zeros(2, requires_grad=True).fill_(2**64))
    both(lambda m: m.zeros(2, requires_grad=True).fill_(1 + 1j))


# --- complex values and values that require grad -------------------------------------------------


@pytest.mark.parametrize("dtype", ["float32", "int64", "bool", "float16"])
@pytest.mark.parametrize("value", [1 + 2j, 3 + 0j], ids=["1+2j", "3+0j"])
def test_masked_fill_with_complex_value_into_real_tensor(dtype, value):
    def fn(m, wrap, inplace):
        x = _zeros(m, dtype)
        v = m.tensor(value) if wrap else value
        return x.masked_fill_(m.tensor(MASK), v) if inplace else x.masked_fill(m.tensor(MASK), v)

    for wrap in (False, True):
        for inplace in (False, True):
            both(lambda m, w=wrap, i=inplace: fn(m, w, i))


@pytest.mark.parametrize("dtype", ["int64", "bool", "uint8"])
@pytest.mark.parametrize("vdtype", ["float32", "complex64"])
def test_out_of_place_masked_fill_of_integer_tensor_refuses_a_value_requiring_grad(dtype, vdtype):
    def fn(m, form):
        x = _zeros(m, dtype)
        v = m.tensor(1.0, dtype=getattr(m, vdtype), requires_grad=True)
        if form == "method":
            return x.masked_fill(m.tensor(MASK), v)
        if form == "function":
            return m.masked_fill(x, m.tensor(MASK), v)
        if form == "no_grad":
            with m.no_grad():
                return x.masked_fill(m.tensor(MASK), v)
        return x.masked_fill_(m.tensor(MASK), v)  # in place, the write is recorded

    for form in ("method", "function", "no_grad", "inplace"):
        both(lambda m, f=form: fn(m, f))


def test_masked_fill_complex_value_with_grad_into_integer_tensor_raises_the_overflow_first():
    both(
        lambda m: _zeros(m, "int64").masked_fill(
            m.tensor(MASK), m.tensor(1 + 1j, dtype=m.complex64, requires_grad=True)
        )
    )


@pytest.mark.parametrize("dtype", ["float32", "int64", "float16"])
def test_fill_with_complex_tensor_value_warns_as_a_copy(dtype):
    def fn(m):
        m.set_warn_always(True)  # PyTorch warns once per process
        try:
            x = _zeros(m, dtype)
            v = m.tensor(1 + 2j, requires_grad=dtype != "int64")
            x.fill_(v)
            return x
        finally:
            m.set_warn_always(False)

    both(fn)


def test_fill_with_complex_value_requiring_grad_gives_real_gradient():
    def fn(m):
        v = m.tensor(1 + 2j, requires_grad=True)
        x = m.zeros(3).fill_(v)
        (x * m.tensor([1.0, 2.0, 3.0])).sum().backward()
        return x, v.grad

    both(fn)


# --- type names in the version-counter and hook errors --------------------------------------------


@pytest.mark.parametrize(
    "dtype", ["float32", "float64", "float16", "bfloat16", "complex64", "complex128"]
)
def test_version_counter_error_names_the_tensor_type_as_torch(dtype):
    def fn(m):
        a = m.ones(5, dtype=getattr(m, dtype), requires_grad=True)
        b = a * 1
        c = b * b
        b.add_(1)
        (c.sum().abs() if "complex" in dtype else c.sum()).backward()

    both(fn)


@pytest.mark.parametrize("dtype", ["int64", "int32"])
def test_version_counter_error_names_an_index_type(dtype):
    def fn(m):
        x = m.ones(5, requires_grad=True)
        i = m.tensor([0, 1], dtype=getattr(m, dtype))
        y = x[i]
        i.add_(1)
        y.sum().backward()

    both(fn)


def test_version_counter_error_names_a_bool_mask():
    def fn(m):
        x = m.ones(5, requires_grad=True)
        mask = m.tensor([True, False, True, False, True])
        y = m.where(mask, x, 0.0)
        mask.logical_not_()
        y.sum().backward()

    both(fn)


@pytest.mark.parametrize(
    "dtypes",
    [("float32", "complex64"), ("float16", "bfloat16"), ("float64", "complex128")],
)
def test_hook_type_change_error_names_types_as_torch(dtypes):
    old, new = dtypes

    def fn(m):
        a = m.ones(2, dtype=getattr(m, old), requires_grad=True)
        b = a * 1
        b.register_hook(lambda g: g.to(getattr(m, new)))
        b.sum().backward()

    both(fn)


# --- copysign and the function forms of in-place ops ----------------------------------------------


@pytest.mark.parametrize(
    "make",
    [
        lambda m, x, o: m.copysign(x, o),
        lambda m, x, o: x.copysign(o),
        lambda m, x, o: m.copysign(x, o[:1]),
        lambda m, x, o: m.copysign(x, -1.0),
        lambda m, x, o: x.copysign(2),
        lambda m, x, o: (x * 1).copysign_(o),
        lambda m, x, o: (x * 1).copysign_(-1),
    ],
)
def test_copysign_values_nodes_and_gradients(make):
    def fn(m):
        x = m.tensor([1.0, -2.0, 0.0, -0.0, 3.0], requires_grad=True)
        o = m.tensor([-1.0, 2.0, -0.0, 1.0, float("nan")], requires_grad=True)
        y = make(m, x, o)
        y.sum().backward()
        return y, x.grad, o.grad

    both(fn)


@pytest.mark.parametrize(
    "make",
    [
        lambda m: m.copysign(m.tensor([1, 2]), m.tensor([-1, 0])),
        lambda m: m.copysign(m.tensor([1, 2]), -2),
        lambda m: m.copysign(m.tensor([True]), m.tensor([False])),
        lambda m: m.copysign(m.tensor([1, 2], dtype=m.float16), -2.0),
        lambda m: m.copysign(m.tensor([1.0], dtype=m.float16), m.tensor([-2.0], dtype=m.float64)),
        lambda m: m.copysign(m.tensor([1 + 1j]), 1.0),
        lambda m: m.copysign(m.tensor([1.0]), m.tensor([1 + 1j])),
        lambda m: m.copysign(2.0, m.tensor([1.0])),
        lambda m: m.copysign(m.tensor([1.0]), "a"),
        lambda m: m.tensor([1.0]).copysign("a"),
        lambda m: m.tensor([1, -2]).copysign_(-1),
        lambda m: m.tensor([1.0, -2], requires_grad=True).copysign_(-1),
        lambda m: m.ones(2, 3).copysign(m.ones(4)),
    ],
)
def test_copysign_dtypes_and_errors(make):
    both(make)


@pytest.mark.parametrize(
    "name, args",
    [("abs_", ()), ("exp_", ()), ("clamp_", (0.0, 1.0)), ("fill_", (2.0,)), ("zero_", ())],
)
def test_inplace_function_forms(name, args):
    both(lambda m: getattr(m, name)(m.tensor([-1.0, 2.0]), *args))
    both(lambda m: getattr(m, name)(m.tensor([-1.0, 2.0], requires_grad=True), *args))
    both(lambda m: getattr(m, name)(m.tensor([-1.0, 2.0], requires_grad=True) * 1, *args))


def test_abs_function_form_refuses_complex():
    both(lambda m: m.abs_(m.tensor([1 + 1j])))
