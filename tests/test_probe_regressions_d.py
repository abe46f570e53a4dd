"""Mismatches with PyTorch found by probing (issue 9): ``real``/``imag`` views of complex
tensors, ``view_as_real``, the range check of ``full``'s fill value, and float-to-integer and
complex-to-real casts (Note [Float to integer casts] in ``_dtype.py``, Note [Real views] in
``_storage.py``)."""

from __future__ import annotations

import warnings

import pytest
from conftest import both

import leafgrad as lg

C = [[1 + 2j, 3 - 4j, -5j], [0.5, 6 + 1j, -2 - 2j]]


def _leaf(m, dtype="complex64"):
    return m.tensor(C, dtype=getattr(m, dtype), requires_grad=True)


# --- real / imag views --------------------------------------------------------------------------


@pytest.mark.parametrize("part", ["real", "imag"])
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_part_is_a_view_with_pytorch_graph_and_strides(part, dtype):
    def fn(m):
        x = _leaf(m, dtype)
        p = getattr(x, part)
        f = getattr(m, part)(x)
        names = []
        g = p.grad_fn
        while g is not None:
            names.append(type(g).__name__ if m is lg else g.name())
            g = g.next_functions[0][0] if g.next_functions else None
        return p, f, p._base is x, p.stride(), p.is_contiguous(), names[:2]

    both(fn)


@pytest.mark.parametrize("part", ["real", "imag"])
def test_part_gradient(part):
    def fn(m):
        x = _leaf(m)
        w = m.tensor([[1.0, -2.0, 3.0], [0.5, 4.0, -1.0]])
        (getattr(x, part) * w).sum().backward()
        return x.grad

    both(fn)


def test_view_as_real_gradient_and_errors():
    def fn(m):
        x = _leaf(m, "complex128")
        v = m.view_as_real(x)
        (v * m.arange(12.0, dtype=m.float64).reshape(2, 3, 2)).sum().backward()
        return v, v.stride(), x.grad

    both(fn)
    both(lambda m: m.view_as_real(m.ones(2)))
    both(lambda m: m.view_as_real(m.tensor([[1 + 2j, 3j]]).mH))


@pytest.mark.parametrize(
    "write",
    [
        lambda m, y: y.real.add_(1),
        lambda m, y: y.imag.mul_(-3),
        lambda m, y: y.imag.__setitem__((0, 1), 5),
        lambda m, y: y.real[1].fill_(7),
        lambda m, y: y.t().imag[2].zero_(),
        lambda m, y: y.real.copy_(m.tensor([9.0, 8.0, 7.0])),
    ],
)
def test_writes_through_parts_reach_the_base(write):
    def fn(m):
        x = _leaf(m)
        y = x * 1
        r, i = y.real, y.imag
        write(m, y)
        (y.abs() * m.tensor([1.0, 2.0, 3.0])).sum().backward()
        return y, r, i, x.grad, y._version

    both(fn)


def test_parts_of_a_conjugated_view():
    def fn(m):
        x = _leaf(m)
        c = (x * 1).mH
        r, i = c.real, c.imag
        names = []
        g = i.grad_fn
        while g is not None:
            names.append(type(g).__name__ if m is lg else g.name())
            g = g.next_functions[0][0] if g.next_functions else None
        (r * 2 + i * m.tensor([[1.0, 2.0]])).sum().backward()
        y = m.tensor(C).mH
        y.imag.add_(1)
        return r, i + 0, names[:4], x.grad, y + 0

    both(fn)


def test_part_of_real_tensor():
    both(lambda m: (lambda z: (z.real is z, m.real(z) is z))(m.ones(2)))
    both(lambda m: m.ones(2).imag)
    both(lambda m: m.imag(m.ones(2, dtype=m.int64)))
    both(lambda m: m.real(1.0))


@pytest.mark.parametrize(
    "value",
    [
        lambda m: m.tensor([7.0, 8.0, 9.0]),
        lambda m: 3,
        lambda m: 1 + 2j,
        lambda m: [1.0, 2.0, 3.0],
        lambda m: None,
        lambda m: m.tensor([1, 2, 3]),
        lambda m: m.tensor([1.0, 2.0]),
    ],
)
@pytest.mark.parametrize("part", ["real", "imag"])
def test_part_setters(part, value):
    def fn(m):
        y = m.tensor(C[0])
        setattr(y, part, value(m))
        return y

    both(fn)


def test_part_setters_autograd():
    def leaf(m):
        x = _leaf(m)
        x.real = 1.0

    both(leaf)

    def recorded(m):
        x = _leaf(m)
        w = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x[0] * 1
        y.imag = w
        y.abs().sum().backward()
        return y, x.grad, w.grad

    both(recorded)
    both(lambda m: (lambda z: (setattr(z, "real", 3), z)[1])(m.ones(2)))


# --- full's fill value ----------------------------------------------------------------------


FULL_CASES = [
    (300, "uint8"),
    (-1, "uint8"),
    (-256, "uint8"),
    (2**63, "int64"),
    (2**63, None),
    (2**64, None),
    (-(2**63) - 1, None),
    (1e10, "int32"),
    (float("nan"), "int32"),
    (float("inf"), "float16"),
    (1e5, "float16"),
    (65504.9, "float16"),
    (1e39, "float32"),
    (1e39, "bfloat16"),
    (1 + 2j, "float32"),
    (1 + 0j, "float32"),
    (1 + 2j, "int64"),
    (0.5, "bool"),
    (2**40, "int32"),
    (-129.0, "int8"),
    (3.7, "int8"),
    (True, "int8"),
]


@pytest.mark.parametrize("value,dtype", FULL_CASES)
def test_full_checks_the_fill_value(value, dtype):
    def dt(m):
        return None if dtype is None else getattr(m, dtype)

    both(lambda m: m.full((2,), value, dtype=dt(m)))
    both(lambda m: m.zeros(1, dtype=dt(m)).new_full((2,), value))
    both(lambda m: m.full_like(m.zeros(2, dtype=dt(m)), value))


# --- casts ------------------------------------------------------------------------------------

GRID = [
    float("inf"),
    float("-inf"),
    float("nan"),
    1e30,
    -1e30,
    2.0**31,
    -(2.0**31) - 1,
    2.0**31 - 0.5,
    2.0**63,
    -(2.0**63),
    2.0**64,
    -0.5,
    -0.0,
    300.5,
    -129.7,
    65535.9,
    70000.0,
    255.9,
    40000.0,
    3e9,
]
INTS = ["int64", "int32", "int16", "int8", "uint8", "bool"]


@pytest.mark.parametrize("src", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("dst", INTS)
def test_float_to_integer_cast_grid(src, dst):
    def fn(m):
        x = m.tensor(GRID, dtype=m.float64).to(getattr(m, src))
        return x.to(getattr(m, dst))

    both(fn, exact=True)


def test_float_to_integer_cast_everywhere():
    def fn(m):
        x = m.tensor([1e30, float("nan"), 70000.0, -5.5])
        z = m.zeros(4, dtype=m.int16)
        z.copy_(x)
        f = m.zeros(2, dtype=m.int32).fill_(m.tensor(1e30))
        s = m.zeros(4, dtype=m.int8)
        s[:] = x
        return x.int(), x.long(), x.short(), x.char(), x.byte(), x.bool(), z, f, s

    both(fn, exact=True)


def test_complex_to_real_casts_warn_as_pytorch_and_leak_no_jax_warning():
    def fn(m):
        x = m.tensor([1 + 2j, 3.5 - 4j, complex(1e30, 1)])
        y = m.zeros(3)
        y.copy_(x)
        return x.to(m.float32), x.to(m.int32), x.to(m.bool), x.long(), y

    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        both(fn, exact=True)


def test_index_put_through_parts():
    def fn(m):
        y = m.tensor([[1 + 2j, 3 - 4j]])
        e = y.real.expand(3, 2)
        e[m.tensor([0]), m.tensor([1])] = 9.0
        z = m.tensor([1 + 2j, 3 - 4j])
        z.imag[m.tensor([1])] = 7.0
        z.real[m.tensor([True, False])] = -1.0
        return y, z

    both(fn)
