"""Regressions next to the fuzzer's findings (group F): a kernel that refuses a dtype
(``"lerp_kernel_scalar" not implemented for 'Long'``) is chosen only after TensorIterator has
broadcast the operands, so operands whose shapes do not broadcast (and, in place, a ``self``
that is not the broadcast shape) get the shape error first; the meta function's own dtype
checks (``lerp``'s "expected dtype", ``clamp``'s complex refusal) still come before it."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import both

BINARY = (
    "add sub mul div remainder fmod atan2 hypot copysign xlogy heaviside nextafter maximum "
    "minimum fmax fmin lt le gt ge eq ne bitwise_and bitwise_or bitwise_xor bitwise_left_shift "
    "bitwise_right_shift gcd lcm igamma igammac logaddexp logaddexp2 ldexp floor_divide pow "
    "float_power logical_and true_divide"
).split()
DTYPES = ["bool", "int64", "float32", "complex64"]
# (self's shape, other's shape): not broadcastable; in place, broadcastable to more than self;
# the same shape (the kernel's own refusal, or a result)
SHAPES = {"mismatch": ((2, 3), (2, 2)), "wider": ((1, 3), (2, 3)), "same": ((2, 3), (2, 3))}


@pytest.mark.parametrize("shapes", sorted(SHAPES))
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", BINARY)
def test_binary_shape_errors_come_before_kernel_dtype_errors(name, dtype, shapes):
    a, b = SHAPES[shapes]

    def call(M):
        dt = getattr(M, dtype)
        return getattr(M, name)(M.ones(a, dtype=dt), M.ones(b, dtype=dt))

    def inplace(M):
        dt = getattr(M, dtype)
        return getattr(M.ones(a, dtype=dt), name + "_")(M.ones(b, dtype=dt))

    both(call)
    both(inplace)


TERNARY = {
    "lerp_number": lambda M, x, y, w: M.lerp(x, y, 0.5),
    "lerp_tensor": lambda M, x, y, w: M.lerp(x, y, w),
    "lerp_0d_weight": lambda M, x, y, w: M.lerp(x, y, w.sum()),
    "lerp_number_": lambda M, x, y, w: x.lerp_(y, 0.5),
    "lerp_tensor_": lambda M, x, y, w: x.lerp_(y, w),
    "div_trunc": lambda M, x, y, w: M.div(x, y, rounding_mode="trunc"),
    "div_floor_": lambda M, x, y, w: x.div_(y, rounding_mode="floor"),
    "addcmul": lambda M, x, y, w: M.addcmul(x, y, w),
    "addcdiv_": lambda M, x, y, w: x.addcdiv_(y, w),
    "clamp": lambda M, x, y, w: M.clamp(x, y, w),
    "clamp_": lambda M, x, y, w: x.clamp_(y, w),
    "where": lambda M, x, y, w: M.where(w > 0, x, y),
}
# (x, y, w) shapes: y mismatched, w mismatched, x narrower than the others, all equal
TERNARY_SHAPES = {
    "y": ((2, 3), (2, 2), (3,)),
    "w": ((2, 3), (2, 3), (2,)),
    "x": ((1, 3), (2, 3), (2, 3)),
    "same": ((2, 3), (2, 3), (2, 3)),
}


@pytest.mark.parametrize("shapes", sorted(TERNARY_SHAPES))
@pytest.mark.parametrize("dtypes", ["int64", "bool", "complex64", "int64/int32", "float32"])
@pytest.mark.parametrize("name", sorted(TERNARY))
def test_ternary_shape_errors_come_before_kernel_dtype_errors(name, dtypes, shapes):
    first, _, rest = dtypes.partition("/")
    rest = rest or first

    def fn(M):
        x, y, w = TERNARY_SHAPES[shapes]
        x = M.ones(x, dtype=getattr(M, first))
        y = M.ones(y, dtype=getattr(M, rest))
        w = M.ones(w, dtype=getattr(M, rest))
        return TERNARY[name](M, x, y, w)

    both(fn)


def test_fuzz_seed_50_program():
    """``lerp`` of int64 tensors whose shapes do not broadcast: the shape error, not the
    kernel's dtype refusal (fuzz seed 50)."""
    import fuzz_programs

    fuzz_programs.check(
        [
            ("new", "int64", 0, True, 0),
            ("new", "int64", 3, False, 0),
            ("multi", "aminmax", 0, 0, False),
            ("reduce", "amax", 0, 1, False),
            ("ternary", "lerp", 0, 0, 3, True),
        ]
    )


# Results that ATen's composites write after making them (``at::zeros`` is ``empty`` and
# ``zero_()``, a ``clone`` written by ``copy_``, an ``out=`` kernel into a new tensor, a
# ``squeeze_``): version 1 where the same factory called from Python gives version 0.
WRITTEN_RESULTS = {
    "trapezoid_empty": lambda m: m.trapezoid(m.ones(0), dim=0),
    "trapezoid_empty_dim": lambda m: m.trapezoid(m.ones(2, 0), dim=1),
    "trapezoid_empty_x": lambda m: m.trapezoid(m.ones(2, 0), m.ones(0), dim=1),
    "trapz_empty": lambda m: m.trapz(m.ones(0, 3), dim=0),
    "trapezoid": lambda m: m.trapezoid(m.ones(2, 3)),
    "cond_empty": lambda m: m.linalg.cond(m.ones(2, 0, 0)),
    "cond_empty_fro": lambda m: m.linalg.cond(m.ones(0, 0), "fro"),
    "svd_no_uv": lambda m: m.svd(m.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 7.0]]), compute_uv=False),
    "svd_uv": lambda m: m.svd(m.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 7.0]])),
    "matrix_power_0": lambda m: m.linalg.matrix_power(m.ones(2, 3, 3), 0),
    "matrix_power_0_grad": lambda m: m.ones(3, 3, requires_grad=True).matrix_power(0),
    "matrix_power_1": lambda m: m.linalg.matrix_power(m.ones(3, 3), 1),
    "matrix_rank": lambda m: m.linalg.matrix_rank(m.ones(3, 3)),
    "matrix_rank_hermitian": lambda m: m.linalg.matrix_rank(m.ones(2, 3, 3), hermitian=True),
    "matrix_rank_atol": lambda m: m.linalg.matrix_rank(m.ones(3, 3), atol=m.tensor(0.1)),
    "max_pool1d_unbatched": lambda m: m.nn.functional.max_pool1d(m.ones(3, 4), 2),
    "max_pool1d": lambda m: m.nn.functional.max_pool1d(m.ones(1, 3, 4), 2),
    "max_pool1d_strided": lambda m: m.nn.functional.max_pool1d(m.ones(1, 3, 5)[..., ::2], 2),
    "max_pool1d_grad": lambda m: m.nn.functional.max_pool1d(m.ones(3, 4, requires_grad=True), 2),
    "max_pool1d_indices": lambda m: m.nn.functional.max_pool1d(
        m.ones(3, 4), 2, 2, 0, 1, False, True
    ),
    "MaxPool1d": lambda m: m.nn.MaxPool1d(2)(m.ones(3, 4)),
}


@pytest.mark.parametrize("name", sorted(WRITTEN_RESULTS))
def test_versions_of_results_written_by_the_composite(name):
    def f(m):
        r = WRITTEN_RESULTS[name](m)
        rs = r if isinstance(r, tuple) else (r,)
        return r, [(t._version, t._base is None, t.stride()) for t in rs]

    both(f, rtol=1e-5, atol=1e-6)


def test_fuzz_seed_52_program():
    """``trapezoid`` over an empty dim returns ATen's ``zeros_like_except``: version 1."""
    import fuzz_programs

    fuzz_programs.check(
        [
            ("new", "float32", 1, False, 0),
            ("unary", "abs", 0),
            ("unary", "abs", 0),
            ("unary", "abs", 0),
            ("setitem", 0, 0, 0, 0, 0, False),
            ("multi", "hsplit", 0, 0, False),
            ("shape", "trapezoid", 5, 0, 0),
        ]
    )


@pytest.mark.parametrize("base", ["plain", "view"])
def test_fill_diagonal_node_is_named_as_pytorch_names_copy_slices(base):
    """``fill_diagonal_``'s node is PyTorch's hand-written ``CopySlices``: its ``name()`` and the
    saved-tensor error name it ``torch::autograd::CopySlices`` (fuzz seed 53)."""

    def f(m):
        a = m.ones(3, 3, requires_grad=True)
        b = a.abs()
        target = b if base == "plain" else b[:, :]
        y = a @ b
        target.fill_diagonal_(2.0)
        names = (b.grad_fn.name(), type(b.grad_fn).__name__)
        y.sum().backward()
        return names

    both(f)


def test_fuzz_seed_53_program():
    import fuzz_programs

    fuzz_programs.check(
        [
            ("new", "float32", 7, True, 0),
            ("unary", "abs", 0),
            ("unary", "abs", 0),
            ("unary", "abs", 0),
            ("unary", "abs", 0),
            ("matmul", 0, 2, False),
            ("inplace", "F_relu_inplace", 0, 0, 2.0),
            ("inplace", "fill_diagonal_", 14, 0, 2.0),
        ]
    )


INPLACE_WIDENED = (
    "hypot pow atan2 div mul sub add copysign fmod remainder maximum minimum fmax fmin xlogy "
    "logaddexp logaddexp2 nextafter float_power igamma"
).split()


@pytest.mark.parametrize("other_dtype", ["float64", "float32"])
@pytest.mark.parametrize("other_shape", [(3,), ()], ids=["same", "scalar"])
@pytest.mark.parametrize("name", INPLACE_WIDENED)
def test_saved_result_of_an_in_place_op_computed_wider_is_in_selfs_dtype(
    name, other_shape, other_dtype
):
    """A float32 ``self`` written by an op computed in float64 (a float64 ``other``): the node's
    saved result is the written ``self``, float32; modified again, the error names its type
    (fuzz seed 54)."""

    def f(m):
        x = m.tensor([0.5, 1.5, 2.5], requires_grad=True)
        a = x.abs()
        other = m.full(other_shape, 1.25, dtype=getattr(m, other_dtype))
        try:
            getattr(a, name + "_")(other)
        except Exception as e:  # float_power_ refuses: compared as raised
            return type(e).__name__, str(e)
        g = a.grad_fn
        # read now: PyTorch's saved output shares the memory of the ``self`` written below
        saved = {n: getattr(g, n) for n in sorted(dir(g)) if n.startswith("_saved_")}
        saved = {n: v.detach().clone() if hasattr(v, "dtype") else v for n, v in saved.items()}
        a.sum().backward(retain_graph=True)
        grad = x.grad.clone()
        a.mul_(2)
        try:
            late = getattr(g, "_saved_result", None)
        except RuntimeError as e:
            late = str(e)
        return saved, grad, late

    both(f, rtol=1e-6, atol=1e-6)


def test_fuzz_seed_54_program():
    import fuzz_programs

    fuzz_programs.check(
        [
            ("new", "float32", 0, True, 0),
            ("unary", "abs", 0),
            ("unary", "abs", 0),
            ("view", "chunk", 0, 0, 0),
            ("view", "select", 0, 0, 0),
            ("multi", "unique", 0, 0, True),
            ("inplace", "F_relu_inplace", 0, 0, 2.0),
            ("new", "float64", 0, False, 0),
            ("inplace", "hypot_", 1, 6, 2.0),
        ]
    )


OUT_BINARY = (
    "remainder fmod atan2 hypot copysign xlogy heaviside nextafter maximum minimum fmax fmin lt "
    "le gt ge eq ne bitwise_and bitwise_or bitwise_xor bitwise_left_shift bitwise_right_shift "
    "gcd lcm igamma igammac logaddexp logaddexp2 ldexp floor_divide"
).split()


@pytest.mark.parametrize("out_dtype", DTYPES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", OUT_BINARY)
def test_out_dtype_checks_before_kernel_dtype_refusals(name, dtype, out_dtype):
    """With ``out=``, the iterator checks that its common dtype casts to ``out``'s before the
    kernel refuses that dtype (comparisons' outputs are bool whatever it is); heaviside's meta
    function wants ``out`` of the inputs' dtype and ldexp's composite a floating ``out``."""

    def f(m):
        o = m.zeros(2, 3, dtype=getattr(m, out_dtype))
        x = m.ones(2, 3, dtype=getattr(m, dtype))
        r = getattr(m, name)(x, x, out=o)
        return r is o, o, o._version

    both(f)


# Note [Gradient layouts]: the gradient of a unary elementwise op's transposed input, laid out
# as PyTorch's formula (itself a TensorIterator op) lays it out
GRADIENT_LAYOUT_OPS = (
    "abs acos acosh asin asinh atan atanh cos cosh digamma erf erfc erfinv exp exp2 expm1 frac "
    "lgamma log log10 log1p log2 logit reciprocal relu rsqrt sigmoid sin sinh sqrt square tan "
    "tanh sgn angle i0 nan_to_num F.gelu F.silu F.mish F.elu F.selu F.celu F.softplus F.hardtanh "
    "F.hardswish F.hardsigmoid F.leaky_relu F.relu6 F.softshrink F.hardshrink pow2 pow3 pow05 "
    "clamp"
).split()


@pytest.mark.parametrize("incoming", ["expanded", "contiguous"])
@pytest.mark.parametrize("name", GRADIENT_LAYOUT_OPS)
def test_gradient_of_a_transposed_input_is_laid_out_as_pytorchs_formula_lays_it_out(name, incoming):
    """``autograd.grad`` of ``f(v)`` with respect to a transposed ``v``: the gradient is
    transposed where the formula's first operand that votes is (fuzz seed 55)."""

    def f(m):
        a = m.tensor(np.linspace(0.1, 0.9, 12, dtype=np.float32).reshape(3, 4))
        a.requires_grad_()
        v = (a * 1.0).T
        if name.startswith("F."):
            y = getattr(m.nn.functional, name[2:])(v)
        elif name.startswith("pow"):
            y = v ** {"pow2": 2, "pow3": 3, "pow05": 0.5}[name]
        elif name == "clamp":
            y = v.clamp(0.2, 0.5)
        else:
            y = getattr(m, name)(v)
        if incoming == "expanded":
            (g,) = m.autograd.grad(y.sum(), [v])
        else:
            (g,) = m.autograd.grad(y, [v], m.ones(4, 3))
        # sgn's gradient of a real input is PyTorch's ZeroTensor, which has no values to read
        return g.stride(), g.clone().stride(), None if name == "sgn" else g

    both(f, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("case", ["permute3", "channels_last", "retain_grad", "hook", "chain"])
def test_gradient_layouts_through_strided_inputs(case):
    def f(m):
        a = m.tensor(np.linspace(0.1, 0.9, 24, dtype=np.float32).reshape(2, 3, 4))
        a.requires_grad_()
        if case == "permute3":
            v = (a * 1.0).permute(2, 0, 1)
            (g,) = m.autograd.grad(v.exp().sum(), [v])
            return g.stride()
        if case == "channels_last":
            x = m.tensor(np.linspace(0.1, 0.9, 120, dtype=np.float32).reshape(2, 3, 4, 5))
            x.requires_grad_()
            v = (x * 1.0).contiguous(memory_format=m.channels_last)
            (g,) = m.autograd.grad(v.tanh().sum(), [v])
            return g.stride()
        if case == "retain_grad":
            v = (a * 1.0).transpose(0, 2)
            v.retain_grad()
            v.abs().sum().backward()
            return v.grad.stride(), a.grad.stride()
        if case == "hook":
            v = (a * 1.0).transpose(0, 1)
            seen = []
            v.register_hook(lambda g: seen.append(g.stride()))
            v.sin().sum().backward()
            return seen
        v = (a * 1.0).transpose(0, 2)
        (g,) = m.autograd.grad(v.exp().tanh().sigmoid().sum(), [v])
        return g.stride()

    both(f)


def test_fuzz_seed_55_program():
    import fuzz_programs

    fuzz_programs.check(
        [
            ("new", "float32", 0, False, 0),
            ("new", "float32", 3, True, 0),
            ("view", "T_2d", 1, 0, 0),
            ("unary", "abs", 0),
            ("unary", "abs", 2),
            ("grad", 4, (2,), False, False, False),
        ]
    )


INTEGER_SELF_WRITES = {
    "mul_a": lambda b, a: b.mul_(a),
    "mul_detached": lambda b, a: b.mul_(a.detach()),
    "mul_2": lambda b, a: b.mul_(2),
    "mul_2.0": lambda b, a: b.mul_(2.0),
    "add_a": lambda b, a: b.add_(a),
    "add_1": lambda b, a: b.add_(1),
    "div_a": lambda b, a: b.div_(a),
    "pow_a": lambda b, a: b.pow_(a),
    "atan2_a": lambda b, a: b.atan2_(a),
    "copy_a": lambda b, a: b.copy_(a),
    "neg_": lambda b, a: b.neg_(),
    "zero_": lambda b, a: b.zero_(),
    "abs_": lambda b, a: b.abs_(),
    "mul_itself": lambda b, a: b.mul_(b.detach()),
    "clone": lambda b, a: b.clone(),
    "mul": lambda b, a: b * a,
    "backward_int_grad": lambda b, a: b.backward(b.detach() * 0 + 1),
    "backward_float_grad": lambda b, a: b.backward(a.detach()),
    "backward_implicit": lambda b, a: b[0, 0].backward(),
    "backward_through_asin": lambda b, a: b.asin().sum().backward(),
    "backward_through_mul": lambda b, a: (b * a).sum().backward(),
}


PLAIN_INTEGER_WRITES = {
    "fill_": lambda b, a: b.fill_(a.sum()),
    "masked_fill_": lambda b, a: b.masked_fill_(b == 0, a.sum()),
    "index_fill_": lambda b, a: b.index_fill_(0, b.new_zeros(1, dtype=b.dtype).long(), a.sum()),
    "index_put_": lambda b, a: b.index_put_((b.new_zeros(1).long(),), a.sum()),
}


@pytest.mark.parametrize("then", ["add_1", "neg_", "none"])
@pytest.mark.parametrize("name", sorted(PLAIN_INTEGER_WRITES))
def test_backward_into_an_integer_tensor_written_with_a_value_that_requires_grad(name, then):
    """An int tensor (not a view) written with a 0-d value that requires grad takes the write's
    node, and whatever in-place op follows: a gradient reaching it raises PyTorch's engine
    assert (it was a NumPy ValueError)."""

    def f(m):
        a = m.ones(2, 3, requires_grad=True)
        b = m.zeros(2, 3, dtype=m.int32)
        PLAIN_INTEGER_WRITES[name](b, a)
        if then == "add_1":
            b.add_(1)
        elif then == "neg_":
            b.neg_()
        state = b.requires_grad, b.grad_fn.name()
        b.asin().sum().backward()
        return state, a.grad

    both(f)


@pytest.mark.parametrize("name", sorted(INTEGER_SELF_WRITES))
def test_integer_tensor_that_requires_grad(name):
    """A 0-d value that requires grad written into an int tensor makes it require grad through
    CopySlices (Note [Integer results that require grad]): an in-place op whose node saves the
    original self (a clone) raises "Autograd not support dtype" before its kernel, copy_ records
    nothing, and a backward from it fails as PyTorch's engine does (fuzz seed 56)."""

    def f(m):
        a = m.ones(2, 3, requires_grad=True)
        b = a.int()
        b[0] = a.sum()
        r = INTEGER_SELF_WRITES[name](b, a)
        return r, b, b.requires_grad, b.grad_fn.name(), a.grad

    both(f)


@pytest.mark.parametrize(
    "last",
    [
        [("inplace", "mul_", 1, 0, 2.0)],
        [("backward", 1, False, 2)],
        [("unary", "asin", 1), ("unary", "abs", 0), ("backward", 37, False, 1)],
    ],
    ids=["mul_", "backward", "through_asin"],
)
def test_fuzz_seed_56_programs(last):
    import fuzz_programs

    fuzz_programs.check(
        [
            ("new", "float32", 3, True, 0),
            ("convert", "int", 0),
            ("setitem", 1, 0, 0, 0, 0, True),
            *last,
        ]
    )
