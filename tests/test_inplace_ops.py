"""Differential tests of the in-place ops (``x.op_(...)``, ``x += y``, random ``x.uniform_()``...).

Every case runs the same code with torch and leafgrad through ``conftest.both`` and compares the
values written, ``_version``, ``grad_fn`` names, ``requires_grad``/``is_leaf``, the gradients of a
weighted sum backpropagated through a clone (the op's own node) and through a view of a clone
(``CopySlices``), and the errors (a leaf that requires grad, a result that cannot be cast back,
a shape that would change).
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import both, lg

ANY = [0.5, -1.25, 2.0, -0.75, 1.5, -2.0, 0.25, 1.0, -0.5, 3.0, -1.5, 0.75]
POS = [0.5, 1.25, 2.0, 0.75, 1.5, 3.0, 0.25, 1.0, 2.5, 0.6, 1.75, 4.0]
UNIT = [0.5, -0.25, 0.75, -0.6, 0.1, -0.9, 0.3, 0.8, -0.4, 0.2, -0.7, 0.6]
GT1 = [1.5, 2.25, 3.0, 1.75, 2.5, 4.0, 1.25, 2.0, 3.5, 1.6, 2.75, 5.0]
PROB = [0.5, 0.25, 0.75, 0.6, 0.1, 0.9, 0.3, 0.8, 0.4, 0.2, 0.7, 0.35]
SHAPE = (2, 3)
NAN, INF = float("nan"), float("inf")


def _values(pool, shape, offset=0):
    n = int(np.prod(shape)) if shape else 1
    return np.array([pool[(i + offset) % len(pool)] for i in range(n)]).reshape(shape)


class Arg:
    """A tensor operand: values from ``pool``, of the case's dtype (requires grad when floating)."""

    def __init__(self, pool=ANY, shape=(3,), offset=3, grad=True):
        self.pool, self.shape, self.offset, self.grad = pool, shape, offset, grad

    def build(self, m, dtype, grad):
        arr = _values(self.pool, self.shape, self.offset)
        if not dtype.startswith("float"):
            arr = np.round(arr * 2)
            if self.pool is POS or self.pool is GT1:
                arr = np.abs(arr) + 1
        t = m.tensor(arr.tolist(), dtype=getattr(m, dtype))
        return t.requires_grad_() if grad and self.grad and dtype.startswith("float") else t


class Idx:
    """An int64 index tensor."""

    def __init__(self, values):
        self.values = values

    def build(self, m, dtype, grad):
        return m.tensor(self.values)


class Mask:
    def __init__(self, values):
        self.values = values

    def build(self, m, dtype, grad):
        return m.tensor(self.values, dtype=m.bool)


MASK = Mask([[True, False, True], [False, False, True]])
ROW_MASK = Mask([False, True, True])
IDX0 = Idx([[1, 0, 1], [0, 1, 0]])
IDX1 = Idx([[2, 0, 1], [1, 2, 0]])


def _build(m, items, dtype, grad):
    return [x.build(m, dtype, grad) if hasattr(x, "build") else x for x in items]


def C(name, *args, domain=ANY, **kwargs):  # noqa: N802
    ident = name + ("" if not args and not kwargs else f"-{len(CASES)}")
    CASES.append(pytest.param(name, domain, args, kwargs, id=ident))


CASES: list = []
for _n in (
    "abs absolute neg negative ceil floor round trunc frac sign sigmoid tanh sin cos tan sinh "
    "cosh atan arctan exp exp2 expm1 erf erfc square relu nan_to_num asinh arcsinh"
).split():
    C(_n)
for _n in "reciprocal sqrt rsqrt log log10 log1p log2 lgamma digamma".split():
    C(_n, domain=POS)
for _n in "acos asin arccos arcsin erfinv atanh arctanh".split():
    C(_n, domain=UNIT)
for _n in "acosh arccosh".split():
    C(_n, domain=GT1)
C("logit", domain=PROB)
C("logit", 0.2, domain=PROB)
C("round", decimals=1)
_BINARY = "add sub mul div divide true_divide multiply subtract atan2 arctan2 hypot copysign"
for _n in _BINARY.split():
    C(_n, Arg())
for _n in "fmod remainder floor_divide".split():
    C(_n, Arg(POS))
    C(_n, 1.5)
C("pow", Arg(), domain=POS)
C("add", Arg(shape=SHAPE), alpha=2)
C("add", 2.5)
C("copysign", -1.5)
C("sub", Arg(), alpha=0.5)
C("sub", 1.5)
C("mul", 3.0)
C("div", 2.0)
C("div", Arg(POS), rounding_mode="floor")
C("div", Arg(POS), rounding_mode="trunc")
C("pow", 2)
C("pow", 3)
C("pow", 0.5, domain=POS)
C("clamp", -0.5, 0.5)
C("clamp", min=0.0)
C("clamp", max=1.0)
C("clamp", Arg([-1.0, 0.0, 0.5]), Arg([1.0, 1.5, 2.5]))
C("clamp", min=Arg([-1.0, 0.0, 0.5]))
C("clip", -1, 1)
C("clamp_min", 0.1)
C("clamp_max", 0.2)
C("clamp_min", Arg())
C("clamp_max", Arg())
for _n in (
    "eq ne lt le gt ge greater greater_equal less less_equal not_equal logical_and logical_or "
    "logical_xor"
).split():
    C(_n, Arg(offset=0))
    C(_n, Arg(offset=1, shape=SHAPE))
for _n in "eq ne lt le gt ge".split():
    C(_n, 0.5)
C("logical_not")
C("cumsum", 1)
C("cumsum", 0)
C("cumprod", 1)
C("tril")
C("triu", 1)
C("tril", -1)
C("lerp", Arg(), 0.3)
C("lerp", Arg(), Arg(PROB))
C("addcmul", Arg(), Arg(shape=SHAPE), value=0.5)
C("addcdiv", Arg(), Arg(POS, shape=SHAPE), value=2)
C("masked_fill", MASK, 0.5)
C("masked_fill", ROW_MASK, Arg(shape=()))
C("scatter", 0, IDX0, Arg(shape=SHAPE))
C("scatter", 1, IDX1, 2.5)
C("scatter", 0, IDX0, Arg(shape=SHAPE), reduce="add")
C("scatter_add", 0, IDX0, Arg(shape=SHAPE))
C("scatter_reduce", 0, IDX0, Arg(shape=SHAPE), "sum")
C("addmm", Arg(shape=(2, 4)), Arg(shape=(4, 3)))
C("addmm", Arg(shape=(2, 4)), Arg(shape=(4, 3)), beta=0.5, alpha=2)
C("addbmm", Arg(shape=(2, 2, 4)), Arg(shape=(2, 4, 3)))


# XLA's polygamma (digamma's derivative) is good to ~1e-9 in float64, PyTorch's to the last bit.
APPROXIMATE = {"digamma": (1e-8, 1e-8)}


def _tolerance(name, dtype):
    if dtype == "float64" and name in APPROXIMATE:
        rtol, atol = APPROXIMATE[name]
        return {"rtol": rtol, "atol": atol}
    return {}


def _weights(m, t):
    return m.arange(1, t.numel() + 1, dtype=t.dtype).reshape(t.shape) / 7


def _grads(m, leaves):
    return [t.grad for t in leaves if isinstance(t, m.Tensor) and t.requires_grad]


def _clone_path(m, name, domain, args, kwargs, dtype):
    """``x = a.clone(); x.op_(...)``: values, version, node, gradients of every input."""
    a = m.tensor(_values(domain, SHAPE).tolist(), dtype=getattr(m, dtype), requires_grad=True)
    ins = _build(m, args, dtype, True)
    kw = dict(zip(kwargs, _build(m, list(kwargs.values()), dtype, True)))
    x = a.clone()
    r = getattr(x, name + "_")(*ins, **kw)
    out = [r is x, x._version, x]
    (x * _weights(m, x)).sum().backward()
    return out + _grads(m, [a, *ins, *kw.values()])


def _view_path(m, name, domain, args, kwargs, dtype, select):
    """The op on a view of a clone: the base gets ``CopySlices``, the view AsStridedBackward0."""
    base = np.stack([_values(domain, SHAPE, 5), _values(domain, SHAPE)])
    a = m.tensor(base.tolist(), dtype=getattr(m, dtype), requires_grad=True)
    ins = _build(m, args, dtype, True)
    kw = dict(zip(kwargs, _build(m, list(kwargs.values()), dtype, True)))
    b = a.clone()
    v = b[1] if select == 0 else b[:, 1]
    getattr(v, name + "_")(*ins, **kw)
    out = [b._version, b, v]
    (b * _weights(m, b)).sum().backward()
    return out + _grads(m, [a, *ins, *kw.values()])


def _plain(m, name, domain, args, kwargs, dtype):
    """No autograd: the values written (or the error, e.g. a result that cannot be cast)."""
    x = m.tensor(_values(domain, SHAPE).tolist(), dtype=getattr(m, dtype))
    if not dtype.startswith("float"):
        x = m.tensor(Arg(domain, SHAPE, 0).build(m, dtype, False).tolist(), dtype=getattr(m, dtype))
    ins = _build(m, args, dtype, False)
    kw = dict(zip(kwargs, _build(m, list(kwargs.values()), dtype, False)))
    r = getattr(x, name + "_")(*ins, **kw)
    return [r is x, x._version, x]


def _leaf(m, name, domain, args, kwargs, dtype):
    a = m.tensor(_values(domain, SHAPE).tolist(), dtype=getattr(m, dtype), requires_grad=True)
    return getattr(a, name + "_")(*_build(m, args, dtype, True))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(("name", "domain", "args", "kwargs"), CASES)
def test_inplace_through_clone(name, domain, args, kwargs, dtype):
    both(lambda m: _clone_path(m, name, domain, args, kwargs, dtype), **_tolerance(name, dtype))


@pytest.mark.parametrize("select", [0, 1])
@pytest.mark.parametrize(("name", "domain", "args", "kwargs"), CASES)
def test_inplace_on_view(name, domain, args, kwargs, select):
    both(
        lambda m: _view_path(m, name, domain, args, kwargs, "float64", select),
        **_tolerance(name, "float64"),
    )


@pytest.mark.parametrize("dtype", ["float32", "int64"])
@pytest.mark.parametrize(("name", "domain", "args", "kwargs"), CASES)
def test_inplace_values(name, domain, args, kwargs, dtype):
    both(lambda m: _plain(m, name, domain, args, kwargs, dtype))


def _ints(m, *shape, dtype="int64", fill=3):
    return m.full(shape, fill, dtype=getattr(m, dtype))


# The number arguments of these kernels (addcmul's value, addmm's beta and alpha, add's alpha,
# lerp's weight) are converted to the result type, or to float for half types, before use:
# truncated toward zero for integers, and PyTorch's overflow error where they do not fit.
NUMBER_ARGUMENTS = {
    "addcmul_int_value": lambda m: _ints(m, 3).addcmul(
        m.tensor([1, -2, 3]), _ints(m, 3), value=1.5
    ),
    "addcmul_int_negative_value": lambda m: m.addcmul(
        _ints(m, 2), _ints(m, 2), m.tensor([1, 2]), value=-1.5
    ),
    "addcmul__int_value": lambda m: _ints(m, 3).addcmul_(_ints(m, 3), _ints(m, 3), value=2.7),
    "addcmul_int8_value": lambda m: _ints(m, 2, dtype="int8").addcmul(
        _ints(m, 2, dtype="int8"), _ints(m, 2, dtype="int8"), value=2.7
    ),
    "addcmul_int32_value_overflow": lambda m: _ints(m, 2, dtype="int32").addcmul(
        _ints(m, 2, dtype="int32"), _ints(m, 2, dtype="int32"), value=2.0**40
    ),
    "addcmul_int8_value_overflow": lambda m: _ints(m, 2, dtype="int8").addcmul(
        _ints(m, 2, dtype="int8"), _ints(m, 2, dtype="int8"), value=300
    ),
    "addcmul_uint8_negative_float_value": lambda m: _ints(m, 2, dtype="uint8").addcmul(
        _ints(m, 2, dtype="uint8"), _ints(m, 2, dtype="uint8"), value=-1.5
    ),
    "addcmul_uint8_negative_int_value": lambda m: _ints(m, 2, dtype="uint8").addcmul(
        _ints(m, 2, dtype="uint8"), _ints(m, 2, dtype="uint8"), value=-3
    ),
    "addcmul_int_nan_value": lambda m: _ints(m, 2).addcmul(_ints(m, 2), _ints(m, 2), value=NAN),
    "addcmul_int_value_2_63": lambda m: _ints(m, 2).addcmul(
        _ints(m, 2), _ints(m, 2), value=2.0**63
    ),
    "addcmul_int_complex_value": lambda m: _ints(m, 2).addcmul(_ints(m, 2), _ints(m, 2), value=1j),
    "addcmul_int_real_complex_value": lambda m: m.addcmul(
        _ints(m, 2), _ints(m, 2), _ints(m, 2), value=2 + 0j
    ),
    "addcmul_int_tensor_value": lambda m: _ints(m, 2).addcmul(
        _ints(m, 2), _ints(m, 2), value=m.tensor(1.5)
    ),
    "addcmul_int_with_bool_tensors": lambda m: _ints(m, 2).addcmul(
        m.tensor([True, False]), m.tensor([True, True]), value=0.5
    ),
    "addcmul_bool": lambda m: m.tensor([True]).addcmul(m.tensor([True]), m.tensor([True])),
    "addcmul_float_complex_value": lambda m: m.ones(2, requires_grad=True).addcmul(
        m.ones(2), m.ones(2), value=1j
    ),
    "addcmul_float_value_overflow": lambda m: m.ones(2).addcmul(m.ones(2), m.ones(2), value=1e300),
    "addcmul_half_value_in_float_range": lambda m: m.ones(2, dtype=m.float16).addcmul(
        m.ones(2, dtype=m.float16), m.ones(2, dtype=m.float16), value=1e5
    ),
    "addcmul_half_value_overflow": lambda m: m.ones(2, dtype=m.float16).addcmul(
        m.ones(2, dtype=m.float16), m.ones(2, dtype=m.float16), value=1e39
    ),
    "addcmul_complex64_value_overflow": lambda m: m.ones(2, dtype=m.complex64).addcmul(
        m.ones(2, dtype=m.complex64), m.ones(2, dtype=m.complex64), value=1e300
    ),
    "addcmul_shape_error_before_value": lambda m: m.ones(2).addcmul(m.ones(3), m.ones(2), value=1j),
    "addcdiv_float_complex_value": lambda m: m.ones(2).addcdiv(m.ones(2), m.ones(2), value=1j),
    "addmm_int_alpha": lambda m: m.addmm(
        _ints(m, 2, 3, fill=1), _ints(m, 2, 4), _ints(m, 4, 3), alpha=1.7
    ),
    "addmm_int_negative": lambda m: _ints(m, 2, 3, fill=1).addmm(
        _ints(m, 2, 4), _ints(m, 4, 3), beta=-1.5, alpha=-1.7
    ),
    "addmm_int_beta_below_one_drops_input": lambda m: _ints(m, 2, 2, fill=5).addmm(
        _ints(m, 2, 2), _ints(m, 2, 2), beta=0.3, alpha=0.9
    ),
    "addmm__int": lambda m: _ints(m, 2, 3).addmm_(
        _ints(m, 2, 4), _ints(m, 4, 3), beta=1.5, alpha=2.5
    ),
    "addmm_int_complex_beta": lambda m: _ints(m, 2, 2).addmm(
        _ints(m, 2, 2), _ints(m, 2, 2), beta=1j
    ),
    "addmm_int_infinite_beta": lambda m: _ints(m, 2, 2).addmm(
        _ints(m, 2, 2), _ints(m, 2, 2), beta=INF
    ),
    "addmm_int8_beta_overflow": lambda m: _ints(m, 2, 2, dtype="int8").addmm(
        _ints(m, 2, 2, dtype="int8"), _ints(m, 2, 2, dtype="int8"), beta=300
    ),
    "addmm_uint8_negative_beta": lambda m: _ints(m, 2, 2, dtype="uint8").addmm(
        _ints(m, 2, 2, dtype="uint8"), _ints(m, 2, 2, dtype="uint8"), beta=-3, alpha=2.5
    ),
    "addmm_bool_complex_beta": lambda m: m.ones(2, 2, dtype=m.bool).addmm(
        m.ones(2, 2, dtype=m.bool), m.ones(2, 2, dtype=m.bool), beta=1j
    ),
    "addmm_dtype_error_before_beta": lambda m: m.ones(2, 2).addmm(
        m.ones(2, 2, dtype=m.float64), m.ones(2, 2), beta=1j
    ),
    "addmm_float_complex_alpha": lambda m: m.ones(2, 2, requires_grad=True).addmm(
        m.ones(2, 2), m.ones(2, 2), alpha=1j
    ),
    "addmm_float_beta_overflow": lambda m: m.ones(2, 2).addmm(
        m.ones(2, 2), m.ones(2, 2), beta=1e300
    ),
    "addmm_bfloat16_alpha_overflow": lambda m: m.ones(2, 2, dtype=m.bfloat16).addmm(
        m.ones(2, 2, dtype=m.bfloat16), m.ones(2, 2, dtype=m.bfloat16), alpha=1e39
    ),
    "addmm_float_beta_rounding_to_zero_drops_nan": lambda m: m.full((2, 2), NAN).addmm(
        m.ones(2, 2), m.ones(2, 2), beta=1e-50
    ),
    "addmv_int": lambda m: _ints(m, 2, fill=1).addmv(
        _ints(m, 2, 4), _ints(m, 4), beta=0.5, alpha=2.5
    ),
    "addmv__int": lambda m: _ints(m, 2).addmv_(_ints(m, 2, 4), _ints(m, 4), beta=1.5, alpha=2.5),
    "addmv_float_tiny_beta_drops_nan": lambda m: m.full((2,), NAN).addmv(
        m.ones(2, 2), m.ones(2), beta=1e-50
    ),
    "addbmm_int": lambda m: _ints(m, 2, 3).addbmm(
        _ints(m, 2, 2, 4), _ints(m, 2, 4, 3), beta=0.5, alpha=2.5
    ),
    "addbmm__int": lambda m: _ints(m, 2, 3).addbmm_(
        _ints(m, 2, 2, 4), _ints(m, 2, 4, 3), beta=1.5, alpha=-2.5
    ),
    "baddbmm_int": lambda m: _ints(m, 2, 2, 3).baddbmm(
        _ints(m, 2, 2, 4), _ints(m, 2, 4, 3), beta=0.5, alpha=2.5
    ),
    "baddbmm__int": lambda m: _ints(m, 2, 2, 3).baddbmm_(
        _ints(m, 2, 2, 4), _ints(m, 2, 4, 3), beta=-1.5, alpha=2.5
    ),
    "baddbmm_float_complex_beta": lambda m: m.ones(1, 2, 2).baddbmm(
        m.ones(1, 2, 2), m.ones(1, 2, 2), beta=1j
    ),
    "add_float_complex_alpha": lambda m: m.ones(2).add(m.ones(2), alpha=1j),
    "add_float_real_complex_alpha": lambda m: m.ones(2).add(m.ones(2), alpha=2 + 0j),
    "add__float_complex_alpha": lambda m: m.ones(2).add_(m.ones(2), alpha=1j),
    "sub_float_complex_alpha": lambda m: m.ones(2).sub(m.ones(2), alpha=1j),
    "rsub_float_complex_alpha": lambda m: m.rsub(m.ones(2), m.ones(2), alpha=1j),
    "add_complex_alpha": lambda m: m.ones(2, dtype=m.complex64).add(m.ones(2), alpha=1j),
    "add_float_alpha_overflow": lambda m: m.ones(2).add(m.ones(2), alpha=1e300),
    "add_half_alpha_overflow": lambda m: m.ones(2, dtype=m.float16).add(
        m.ones(2, dtype=m.float16), alpha=1e5
    ),
    "add_bfloat16_alpha_overflow": lambda m: m.ones(2, dtype=m.bfloat16).add(
        m.ones(2, dtype=m.bfloat16), alpha=1e39
    ),
    "add_int32_alpha_overflow": lambda m: _ints(m, 2, dtype="int32").add(
        _ints(m, 2, dtype="int32"), alpha=2**40
    ),
    "add_int8_alpha_128": lambda m: _ints(m, 2, dtype="int8").add(
        _ints(m, 2, dtype="int8"), alpha=128
    ),
    "add_int8_alpha_minus_128": lambda m: _ints(m, 2, dtype="int8").add(
        _ints(m, 2, dtype="int8"), alpha=-128
    ),
    # sub's kernel is add's with -alpha: 128 fits int8, -128 does not
    "sub_int8_alpha_128": lambda m: _ints(m, 2, dtype="int8").sub(
        _ints(m, 2, dtype="int8"), alpha=128
    ),
    "sub_int8_alpha_minus_128": lambda m: _ints(m, 2, dtype="int8").sub(
        _ints(m, 2, dtype="int8"), alpha=-128
    ),
    "sub__int8_number_alpha_128": lambda m: _ints(m, 2, dtype="int8").sub_(3, alpha=128),
    "rsub_int8_alpha_128": lambda m: m.rsub(_ints(m, 2, dtype="int8"), 3, alpha=128),
    "rsub_int8_alpha_minus_128": lambda m: m.rsub(
        _ints(m, 2, dtype="int8"), _ints(m, 2, dtype="int8"), alpha=-128
    ),
    "sub_uint8_alpha": lambda m: _ints(m, 2, dtype="uint8").sub(
        _ints(m, 2, dtype="uint8"), alpha=255
    ),
    "sub_uint8_alpha_overflow": lambda m: _ints(m, 2, dtype="uint8").sub(
        _ints(m, 2, dtype="uint8"), alpha=256
    ),
    "add_int_tensor_alpha": lambda m: _ints(m, 2).add(_ints(m, 2), alpha=m.tensor(2)),
    "add_float_tensor_alpha": lambda m: m.ones(2).add(m.ones(2), alpha=m.tensor(2.5)),
    "lerp_float_complex_weight": lambda m: m.ones(2).lerp(m.ones(2), 1j),
    "lerp_float_weight_overflow": lambda m: m.ones(2).lerp(m.ones(2), 1e300),
}


@pytest.mark.parametrize("case", NUMBER_ARGUMENTS)
def test_number_arguments_are_read_as_the_kernel_type(case):
    both(NUMBER_ARGUMENTS[case])


@pytest.mark.parametrize(("name", "domain", "args", "kwargs"), CASES[::7])
def test_inplace_on_leaf_raises(name, domain, args, kwargs):
    both(lambda m: _leaf(m, name, domain, args, kwargs, "float32"))


def test_inplace_on_leaf_under_no_grad():
    def fn(m):
        a = m.tensor([1.0, 2.0], requires_grad=True)
        with m.no_grad():
            a.mul_(2).add_(1)
        return a, a._version

    both(fn)


@pytest.mark.parametrize(
    "name", ["abs", "neg", "exp", "relu", "sigmoid", "eq", "logical_not", "add", "mul", "pow"]
)
def test_zero_dim(name):
    def fn(m):
        a = m.tensor(0.75, requires_grad=True)
        x = a.clone()
        args = {"eq": (m.tensor(0.75),), "add": (m.tensor(2.0),), "mul": (3,), "pow": (2,)}
        getattr(x, name + "_")(*args.get(name, ()))
        (x * 3).backward()
        return x, x._version, a.grad

    both(fn)


@pytest.mark.parametrize(
    "name", "bitwise_and bitwise_or bitwise_xor bitwise_left_shift bitwise_right_shift".split()
)
@pytest.mark.parametrize("dtype", ["int64", "int32", "bool", "float32"])
def test_bitwise(name, dtype):
    def fn(m):
        x = m.tensor([[1, 6, 3], [0, 2, 5]]).to(getattr(m, dtype))
        getattr(x, name + "_")(m.tensor([3, 1, 2]).to(getattr(m, dtype)))
        return x, x._version

    both(fn)


@pytest.mark.parametrize("dtype", ["int64", "bool"])
def test_bitwise_not_logical_not(dtype):
    def fn(m):
        x = m.tensor([[1, 0, 3], [0, 2, 5]]).to(getattr(m, dtype))
        y = x.clone()
        x.bitwise_not_()
        y.logical_not_()
        return x, y, x._version

    both(fn)


@pytest.mark.parametrize(
    ("dunder", "other"),
    [
        ("__iadd__", 2.0),
        ("__isub__", 0.5),
        ("__imul__", 3),
        ("__itruediv__", 4.0),
        ("__ifloordiv__", 2.0),
        ("__imod__", 1.5),
        ("__ipow__", 2),
        ("__iadd__", "tensor"),
        ("__imul__", "tensor"),
        ("__itruediv__", "tensor"),
    ],
)
def test_augmented_assignment(dunder, other):
    def fn(m):
        a = m.tensor(_values(POS, SHAPE).tolist(), requires_grad=True)
        o = m.tensor(_values(POS, (3,), 2).tolist(), requires_grad=True)
        x = a.clone()
        y = getattr(x, dunder)(o if other == "tensor" else other)
        (x * _weights(m, x)).sum().backward()
        return y is x, x, x._version, a.grad, o.grad

    both(fn)


@pytest.mark.parametrize(
    ("dunder", "dtype"),
    [
        ("__iand__", "int64"),
        ("__ior__", "bool"),
        ("__ixor__", "int32"),
        ("__ilshift__", "int64"),
        ("__irshift__", "int64"),
        ("__itruediv__", "int64"),
        ("__iadd__", "int64"),
    ],
)
def test_augmented_assignment_integers(dunder, dtype):
    def fn(m):
        x = m.tensor([[1, 6, 3], [0, 2, 5]]).to(getattr(m, dtype))
        getattr(x, dunder)(m.tensor([3, 1, 2]).to(getattr(m, dtype)))
        return x, x._version

    both(fn)


@pytest.mark.parametrize(
    "fn",
    [
        lambda m: m.zeros(3).add_(m.ones(2, 3)),
        lambda m: m.zeros(3).mul_(m.ones(2, 3)),
        lambda m: m.zeros(3).clamp_(m.ones(2, 3)),
        lambda m: m.zeros(3).lerp_(m.ones(2, 3), 0.5),
        lambda m: m.zeros(1, 3).eq_(m.ones(2, 3)),
        lambda m: m.zeros(3).add_(m.ones(4)),
        lambda m: m.zeros(3, dtype=m.int64).div_(2),
        lambda m: m.zeros(3, dtype=m.int64).sqrt_(),
        lambda m: m.zeros(3, dtype=m.int64).add_(m.ones(3)),
        lambda m: m.zeros(3, dtype=m.bool).add_(1),
        lambda m: m.zeros(3, dtype=m.float32).add_(m.ones(3, dtype=m.complex64)),
        lambda m: m.zeros(3).expand(2, 3).add_(1),
    ],
)
def test_inplace_errors(fn):
    both(fn)


def test_eq_inplace_records_zero_gradient_edges():
    def fn(m):
        a = m.tensor([[0.5, 1.0, 2.0], [1.0, 3.0, 0.5]], requires_grad=True)
        o = m.tensor([1.0, 1.0, 0.5], requires_grad=True)
        x = a.clone()
        x.ge_(o)
        nf = [type(f).__name__ if f is not None else None for f, _ in x.grad_fn.next_functions]
        (x * 2).sum().backward()
        x2 = a.clone()
        x2.lt_(1.5)
        x2.sum().backward()
        x2.sum().backward()  # nothing saved: a second backward is allowed
        return x, nf, a.grad, o.grad

    both(fn)


def test_not_implemented_inplace_backward():
    def fn(m):
        a = m.tensor([0.5, -0.25], requires_grad=True)
        x = a.clone()
        x.atanh_()
        nf = [type(f).__name__ for f, _ in x.grad_fn.next_functions]
        try:
            x.sum().backward()
        except NotImplementedError as e:
            return x, nf, str(e)
        return x, nf

    both(fn)


# --- random in-place ops --------------------------------------------------------------------------

RANDOM = [
    ("uniform_", ()),
    ("uniform_", (-2.0, 3.0)),
    ("normal_", ()),
    ("normal_", (1.5, 0.25)),
    ("bernoulli_", ("ptensor",)),
    ("random_", ()),
    ("random_", (10,)),
    ("random_", (-3, 7)),
    ("exponential_", ()),
    ("exponential_", (2.5,)),
    ("geometric_", (0.3,)),
    ("log_normal_", ()),
    ("log_normal_", (0.5, 0.75)),
    ("cauchy_", ()),
    ("cauchy_", (1.0, 0.5)),
]


def _random_args(m, args, shape):
    if args == ("ptensor",):
        p = m.tensor(_values(PROB, shape[-1:]).tolist(), dtype=m.float64)
        return (p,)
    return args


@pytest.mark.parametrize("shape", [(2, 3), (20,), ()])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(("name", "args"), RANDOM)
def test_random_values(name, args, dtype, shape):
    def fn(m):
        m.manual_seed(7)
        x = m.empty(shape, dtype=getattr(m, dtype))
        r = getattr(x, name)(*_random_args(m, args, shape))
        return r is x, x, x._version

    both(fn, exact=True)


@pytest.mark.parametrize("dtype", ["int64", "uint8", "bool", "float16", "bfloat16"])
@pytest.mark.parametrize(("name", "args"), RANDOM)
def test_random_other_dtypes(name, args, dtype):
    def fn(m):
        m.manual_seed(11)
        x = m.zeros(5, dtype=getattr(m, dtype))
        getattr(x, name)(*_random_args(m, args, (5,)))
        return x

    both(fn, exact=True)


@pytest.mark.parametrize(("name", "args"), RANDOM)
def test_random_autograd(name, args):
    def fn(m):
        m.manual_seed(3)
        a = m.ones(2, 3, requires_grad=True)
        x = a.clone()
        getattr(x, name)(*_random_args(m, args, (2, 3)))
        (x * _weights(m, x)).sum().backward()
        b = a.clone()
        getattr(b[1], name)(*_random_args(m, args, (3,)))
        (b * _weights(m, b)).sum().backward()
        try:
            getattr(a, name)(*_random_args(m, args, (2, 3)))
        except RuntimeError as e:
            err = str(e)
        with m.no_grad():
            getattr(a, name)(*_random_args(m, args, (2, 3)))
        return x, b, b._version, a.grad, err, a, a._version

    both(fn, exact=True)


def test_bernoulli_tensor_p_requires_grad():
    def fn(m):
        m.manual_seed(1)
        p = m.tensor([0.2, 0.7, 0.5], requires_grad=True)
        x = m.zeros(2, 3, requires_grad=True).clone()
        x.bernoulli_(p)
        nf = [type(f).__name__ for f, _ in x.grad_fn.next_functions]
        x.sum().backward()
        return x, nf, p.grad

    both(fn, exact=True)


@pytest.mark.parametrize(
    "fn",
    [
        lambda m: m.empty(3).exponential_(-1.0),
        lambda m: m.empty(3, dtype=m.int64).exponential_(),
        lambda m: m.empty(3, dtype=m.int64).cauchy_(),
        lambda m: m.empty(3).cauchy_(0.0, 0.0),
        lambda m: m.empty(3).log_normal_(0.0, -1.0),
        lambda m: m.empty(3, dtype=m.int32).log_normal_(),
        lambda m: m.empty(3).geometric_(1.5),
        lambda m: m.empty(3).geometric_(0),
        lambda m: m.empty(3, dtype=m.bool).geometric_(0.5),
        lambda m: m.empty(3).random_(5, 2),
        lambda m: m.empty(3).uniform_(2.0, 1.0),
        lambda m: m.empty(3).normal_(0.0, -1.0),
        lambda m: m.empty(3).bernoulli_(m.tensor([0.5, 1.5, 0.2])),
        lambda m: m.empty(3).bernoulli_(m.full((2, 3), 0.5)),
    ],
)
def test_random_errors(fn):
    both(fn)


def test_random_matches_stream_after_other_draws():
    def fn(m):
        m.manual_seed(5)
        a = m.rand(3)
        b = m.empty(5, dtype=m.float64).log_normal_()  # consumes a Box-Muller pair, caches one
        c = m.randn(1, dtype=m.float64)
        d = m.empty(4).geometric_(0.5)
        return a, b, c, d

    both(fn, exact=True)


@pytest.mark.parametrize(
    ("name", "shape", "shapes"),
    [("addmv", (2,), [(2, 3), (3,)]), ("baddbmm", (2, 2, 3), [(2, 2, 4), (2, 4, 3)])],
)
def test_inplace_other_ranks(name, shape, shapes):
    def fn(m):
        a = m.tensor(_values(ANY, shape).tolist(), requires_grad=True)
        ins = [Arg(shape=s).build(m, "float32", True) for s in shapes]
        x = a.clone()
        getattr(x, name + "_")(*ins, beta=0.5, alpha=2)
        (x * _weights(m, x)).sum().backward()
        return [x, x._version, a.grad] + [t.grad for t in ins]

    both(fn)


BITWISE = {
    "bitwise_and",
    "bitwise_or",
    "bitwise_xor",
    "bitwise_left_shift",
    "bitwise_right_shift",
    "bitwise_not",
    "addmv",
    "baddbmm",
}


def test_every_inplace_variant_is_tested():
    """Each ``SAME_NODE`` name leafgrad has is a method of torch and has a case here."""
    from leafgrad.ops.inplace import SAME_NODE

    have = [n for n in SAME_NODE if hasattr(lg.Tensor, n)]
    # sgn of a real tensor: torch's gradient is a ZeroTensor, which cannot be read back to compare;
    # tests/test_probe_regressions.py tests sgn and sgn_ (complex and real values, gradients)
    covered = {p.values[0] for p in CASES} | BITWISE | {"sgn"}
    # tested with their ops' other forms in the files of their modules
    covered |= {"deg2rad", "rad2deg", "fix", "float_power"}  # tests/test_misc_ops.py
    covered |= {"mvlgamma", "sinc", "xlogy", "heaviside", "nextafter", "ldexp", "i0"}  # special
    covered |= {"renorm"}  # tests/test_vector_ops.py
    assert [n for n in have if n not in covered] == []
    assert all(hasattr(lg.Tensor, n + "_") for n in have)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_bernoulli_scalar_p(dtype):
    def fn(m):
        m.manual_seed(9)
        a = m.ones(2, 3, dtype=getattr(m, dtype), requires_grad=True)
        x = a.clone()
        x.bernoulli_(0.3)
        (x * _weights(m, x)).sum().backward()
        return x, x._version, a.grad

    both(fn, exact=True)
