"""Mismatches with PyTorch found by probing (issue 9): rsub's node, signed zeros, complex abs,
sign and sgn, angle, and NumPy scalars on the left of an operator."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import both, host

FLOATS = ["float16", "bfloat16", "float32", "float64"]


def _signs(t) -> tuple:
    """The sign bits of a tensor's values (which ``same_tensor`` does not compare)."""
    return tuple(bool(b) for b in np.signbit(host(t)).ravel())


def _with_signs(*tensors):
    return [(t, _signs(t)) for t in tensors]


# --- rsub --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "make",
    [
        lambda m, x: 1 - x,
        lambda m, x: 2.5 - x,
        lambda m, x: np.float64(1) - x,
        lambda m, x: m.rsub(x, 1),
    ],
)
def test_number_minus_tensor_records_rsub_backward(make):
    def fn(m):
        x = m.tensor([1.0, -2.0], requires_grad=True)
        y = make(m, x)
        y.sum().backward()
        return y, [type(n).__name__ for n, _ in y.grad_fn.next_functions], x.grad

    both(fn)


def test_number_minus_inference_tensor_records_sub_with_no_edge_for_the_number():
    def fn(m):
        with m.inference_mode():
            x = m.tensor([1.0, -2.0], requires_grad=True)
        y = 3 - x
        edges = [None if n is None else type(n).__name__ for n, _ in y.grad_fn.next_functions]
        return y, edges, y._version

    both(fn)


def test_number_minus_bool_tensor_raises():
    both(lambda m: 1 - m.tensor([True, False]))


def test_number_minus_non_operand_is_refused():
    both(lambda m: "a" - m.tensor([1.0]))


# --- signed zeros of remainder and fmod --------------------------------------------------------

_DIVIDENDS = [-2.0, 2.0, -4.0, 0.0, -0.0, 3.0, -3.0]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("divisor", [2, -2, 1.5])
@pytest.mark.parametrize(
    "op",
    [
        lambda m, x, d: x % d,
        lambda m, x, d: m.remainder(x, d),
        lambda m, x, d: m.fmod(x, d),
        lambda m, x, d: x.fmod(d),
        lambda m, x, d: x % m.full_like(x, d),
        lambda m, x, d: m.fmod(x, m.full_like(x, d)),
    ],
)
def test_remainder_and_fmod_keep_the_sign_of_zero(op, divisor, dtype):
    def fn(m):
        x = m.tensor(_DIVIDENDS, dtype=getattr(m, dtype))
        return _with_signs(op(m, x, divisor))

    both(fn)


@pytest.mark.parametrize("name", ["remainder_", "fmod_", "__imod__"])
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_remainder_and_fmod_in_place_keep_the_sign_of_zero(name, dtype):
    def fn(m):
        x = m.tensor(_DIVIDENDS, dtype=getattr(m, dtype))
        y = m.tensor([2.0] * len(_DIVIDENDS), dtype=getattr(m, dtype))
        out = []
        for other in (2, -2.0, y):
            z = x.clone()
            getattr(z, name)(other)
            out.append((z, _signs(z)))
        return out

    both(fn)


def test_number_remainder_tensor_keeps_the_sign_of_zero():
    both(lambda m: _with_signs(-2.0 % m.tensor([2.0, -2.0, 1.0]), m.remainder(-4, m.tensor([2.0]))))


@pytest.mark.parametrize("fn_name", ["remainder", "fmod"])
def test_remainder_and_fmod_gradients_are_unchanged_at_signed_zeros(fn_name):
    def fn(m):
        x = m.tensor(_DIVIDENDS, dtype=m.float64, requires_grad=True)
        d = m.tensor([2.0, -2.0, 2.0, 2.0, -2.0, 1.5, 1.5], dtype=m.float64, requires_grad=True)
        a = getattr(m, fn_name)(x, d)
        b = getattr(m, fn_name)(x, -2)
        (a * m.arange(7.0, dtype=m.float64) + b).sum().backward()
        return _with_signs(a, b) + [x.grad, d.grad]

    both(fn)


@pytest.mark.parametrize(
    "op",
    [
        lambda m, x: m.trunc(x),
        lambda m, x: m.round(x),
        lambda m, x: m.round(x, decimals=1),
        lambda m, x: m.ceil(x),
        lambda m, x: x // 3,
        lambda m, x: m.div(x, 3, rounding_mode="trunc"),
        lambda m, x: m.div(x, -3, rounding_mode="floor"),
        lambda m, x: m.sign(x),
        lambda m, x: m.sgn(x),
        lambda m, x: m.abs(x),
        lambda m, x: m.clamp(x, min=0.0),
        lambda m, x: m.frac(x),
        lambda m, x: -x,
    ],
)
def test_signed_zeros_of_rounding_and_sign_ops(op):
    def fn(m):
        x = m.tensor([-0.4, 0.4, -0.0, 0.0, -1.0, 1.0, float("nan")])
        return _with_signs(op(m, x))

    both(fn)


# --- complex abs, sign, sgn, angle -------------------------------------------------------------

_COMPLEX = [3 + 4j, 0j, -1j, 1 + 0j, -2 + 0j]


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("form", ["abs", "absolute", "method", "operator"])
def test_abs_of_complex_is_real_with_sgn_gradient(form, dtype):
    calls = {
        "abs": lambda m, x: m.abs(x),
        "absolute": lambda m, x: m.absolute(x),
        "method": lambda m, x: x.abs(),
        "operator": lambda m, x: abs(x),
    }

    def fn(m):
        x = m.tensor(_COMPLEX, dtype=getattr(m, dtype), requires_grad=True)
        y = calls[form](m, x)
        w = m.tensor([1.0, 2.0, 3.0, 4.0, 5.0], dtype=y.dtype)
        (y * w).sum().backward()
        return y, y.dtype, repr(x.grad), x.grad

    both(fn)


@pytest.mark.parametrize("name", ["abs_", "absolute_"])
def test_abs_in_place_refuses_complex(name):
    def fn(m):
        x = m.tensor(_COMPLEX)
        try:
            getattr(x, name)()
        except RuntimeError as exc:
            return str(exc), x, x._version
        return None

    both(fn)
    both(lambda m: getattr(m.tensor([-1.0, 2.0]), name)())


def test_abs_in_place_on_complex_checks_autograd_first():
    def leaf(m):
        m.tensor(_COMPLEX, requires_grad=True).abs_()

    def non_leaf(m):
        x = m.tensor(_COMPLEX, requires_grad=True).clone()
        try:
            x.abs_()
        except RuntimeError as exc:
            return str(exc), x, x._version
        return None

    def inference(m):
        with m.inference_mode():
            x = m.tensor(_COMPLEX)
        x.abs_()

    for fn in (leaf, non_leaf, inference):
        both(fn)


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize(
    "call",
    [
        lambda m, x: m.sign(x),
        lambda m, x: x.sign(),
        lambda m, x: x.detach().clone().sign_(),
        lambda m, x: x.clone().sign_(),
    ],
)
def test_sign_of_complex_raises(call, dtype):
    both(lambda m: call(m, m.tensor(_COMPLEX, dtype=getattr(m, dtype), requires_grad=True)))


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_sgn_of_complex_matches_values_node_and_gradient(dtype):
    def fn(m):
        x = m.tensor(_COMPLEX, dtype=getattr(m, dtype), requires_grad=True)
        y = x.sgn()
        ct = m.tensor([1.0, 2j, 3.0, 4.0, 1 + 1j], dtype=y.dtype)
        (g,) = m.autograd.grad(m.sgn(x), x, ct)
        return y, repr(y), g, repr(g)

    both(fn)


@pytest.mark.parametrize("dtype", ["bool", "int64", "float32", "float64"])
def test_sgn_of_real_tensors_matches_sign(dtype):
    def fn(m):
        x = m.tensor([-1, 0, 2], dtype=getattr(m, dtype))
        out = [m.sgn(x), x.sgn(), x.clone().sgn_()]
        if x.dtype.is_floating_point:
            x.requires_grad_()
            y = m.sgn(x)
            y.sum().backward()
            out += [y, m.ones_like(x) + x.grad]  # PyTorch's gradient is a ZeroTensor
        return out

    both(fn)


def test_sgn_saves_self_and_result():
    def fn(m):
        # a real tensor: for a complex one PyTorch's message names [CPUComplexFloatType [5]]
        x = m.tensor([1.0, -2.0, 0.0], requires_grad=True)
        z = x.clone()
        y = z.sgn()
        z.mul_(2)  # sgn saved its input: its backward raises
        y.abs().sum().backward()

    both(fn)


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_angle_of_complex_is_real_with_pytorch_gradient(dtype):
    def fn(m):
        x = m.tensor(_COMPLEX, dtype=getattr(m, dtype), requires_grad=True)
        y = m.angle(x)
        (y * m.tensor([1.0, 2.0, 3.0, 4.0, 5.0], dtype=y.dtype)).sum().backward()
        return y, x.angle(), x.grad

    both(fn)


@pytest.mark.parametrize("dtype", ["bool", "int8", "int64", "float16", "float32", "float64"])
def test_angle_of_real_tensors(dtype):
    def fn(m):
        x = m.tensor([1, -2, 0, -0.0], dtype=getattr(m, dtype))
        return _with_signs(m.angle(x))

    both(fn)


def test_angle_of_real_tensor_has_zero_gradient_also_at_nan():
    def fn(m):
        x = m.tensor([float("nan"), -0.0, -1.0, 2.0], requires_grad=True)
        y = m.angle(x)
        y.sum().backward()
        return y, x.grad

    both(fn)


# --- NumPy scalars on the left -----------------------------------------------------------------

_NUMPY_LEFT = {
    "floordiv": lambda x: np.float64(2) // x,
    "mod": lambda x: np.float64(2) % x,
    "sub": lambda x: np.float64(2) - x,
    "sub_f16": lambda x: np.float16(2) - x,
    "mul": lambda x: np.float32(2) * x,
    "add": lambda x: np.float64(2) + x,
    "truediv": lambda x: np.float64(2) / x,
    "pow": lambda x: np.int64(3) ** x,
    "mul_complex": lambda x: np.complex128(1j) * x,
    "lt": lambda x: np.float64(2) < x,
    "eq": lambda x: np.float64(2) == x,
    "ge": lambda x: np.float64(2) >= x,
    "and": lambda x: np.int64(3) & x,
    "xor": lambda x: np.int32(3) ^ x,
    "lshift": lambda x: np.int64(3) << x,
    "matmul": lambda x: np.float64(2) @ x,
    "array": lambda x: np.array([1.0, 2.0]) + x,
    "array_0d": lambda x: np.array(1.0) * x,
}


@pytest.mark.parametrize("kind", ["float_grad", "int", "half"])
@pytest.mark.parametrize("name", sorted(_NUMPY_LEFT))
def test_numpy_scalar_on_the_left_gives_a_tensor(name, kind):
    def fn(m):
        x = {
            "float_grad": lambda: m.tensor([1.0, 4.0], requires_grad=True),
            "int": lambda: m.tensor([1, 2]),
            "half": lambda: m.tensor([1.0, 4.0], dtype=m.float16),
        }[kind]()
        if name == "mul_complex" and kind == "half":
            x = x.float()  # PyTorch's result is complex32, which leafgrad has not
        y = _NUMPY_LEFT[name](x)
        return y, type(y).__name__

    both(fn)
