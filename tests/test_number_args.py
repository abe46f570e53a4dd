"""``float`` and ``Number`` (Scalar) arguments as PyTorch's argument parser takes them: a tuple, a
list, a str, None (where not optional), a tensor that requires grad or has dims are refused with
``<op>(): argument '<name>' (position <n>) must be float|Number, not <type>`` before the op runs;
Python and NumPy numbers and 0-d tensors without grad pass. Also: reductions over an empty dim
name the dim as ATen does, and a complex Python number that makes a modulus complex gets the
kernel's refusal (it was a raw JAX error)."""

import numpy as np
import pytest
from conftest import both

CALLS = {
    "renorm p": lambda m, v: m.renorm(m.ones(3, 3), v, 0, 1.0),
    "renorm maxnorm": lambda m, v: m.ones(3, 3).renorm(2, 0, maxnorm=v),
    "dist": lambda m, v: m.dist(m.ones(3), m.ones(3), v),
    "dist kw": lambda m, v: m.ones(3).dist(m.ones(3), p=v),
    "vector_norm": lambda m, v: m.linalg.vector_norm(m.ones(3), v),
    "vector_norm kw": lambda m, v: m.linalg.vector_norm(m.ones(3), ord=v),
    "norm": lambda m, v: m.norm(m.ones(3), v),
    "Tensor.norm": lambda m, v: m.ones(3).norm(v),
    "Tensor.norm 2d": lambda m, v: m.ones(2, 3).norm(v),
    "normalize": lambda m, v: m.nn.functional.normalize(m.ones(2, 3), v),
    "leaky_relu": lambda m, v: m.nn.functional.leaky_relu(m.ones(3), v),
    "leaky_relu kw": lambda m, v: m.nn.functional.leaky_relu(m.ones(3), negative_slope=v),
    "elu": lambda m, v: m.nn.functional.elu(m.ones(3), v),
    "celu": lambda m, v: m.nn.functional.celu(m.ones(3), v),
    "torch.celu": lambda m, v: m.celu(m.ones(3), v),
    "softplus beta": lambda m, v: m.nn.functional.softplus(m.ones(3), v),
    "softplus threshold": lambda m, v: m.nn.functional.softplus(m.ones(3), 1, threshold=v),
    "hardshrink": lambda m, v: m.nn.functional.hardshrink(m.ones(3), v),
    "softshrink": lambda m, v: m.nn.functional.softshrink(m.ones(3), v),
    "rrelu lower": lambda m, v: m.nn.functional.rrelu(m.ones(3), v),
    "rrelu upper": lambda m, v: m.rrelu(m.ones(3), 0.1, v),
    "threshold": lambda m, v: m.threshold(m.ones(3), v, 0.0),
    "histc min": lambda m, v: m.histc(m.ones(3), 3, v),
    "histc max": lambda m, v: m.ones(3).histc(3, 0, max=v),
    "nan_to_num nan": lambda m, v: m.nan_to_num(m.ones(3), v),
    "nan_to_num posinf": lambda m, v: m.ones(3).nan_to_num(posinf=v),
    "logit": lambda m, v: m.logit(m.ones(3), v),
    "isclose rtol": lambda m, v: m.isclose(m.ones(3), m.ones(3), v),
    "allclose atol": lambda m, v: m.allclose(m.ones(3), m.ones(3), atol=v),
    "pdist": lambda m, v: m.pdist(m.ones(2, 3), v),
    "cdist": lambda m, v: m.cdist(m.ones(2, 3), m.ones(2, 3), v),
    "cdist kw": lambda m, v: m.cdist(m.ones(2, 3), m.ones(2, 3), p=v),
    "addcmul value": lambda m, v: m.addcmul(m.ones(3), m.ones(3), m.ones(3), value=v),
    "addcdiv value": lambda m, v: m.ones(3).addcdiv(m.ones(3), m.ones(3), value=v),
    "addmv beta": lambda m, v: m.addmv(m.ones(2), m.ones(2, 2), m.ones(2), beta=v),
    "addr alpha": lambda m, v: m.addr(m.ones(2, 2), m.ones(2), m.ones(2), alpha=v),
    "index_add alpha": lambda m, v: m.ones(3).index_add(0, m.tensor([0]), m.ones(1), alpha=v),
    "full_like": lambda m, v: m.full_like(m.ones(3), v),
    "new_full": lambda m, v: m.ones(3).new_full((2,), v),
    "dropout p": lambda m, v: m.dropout(m.ones(3), v, False),
    "layer_norm eps": lambda m, v: m.layer_norm(m.ones(2, 3), (3,), None, None, v),
    "pinverse rcond": lambda m, v: m.pinverse(m.ones(2, 2), v),
    "cosine_similarity eps": lambda m, v: m.cosine_similarity(m.ones(2, 3), m.ones(2, 3), 1, v),
    # F functions that pass them on to a builtin (NN_ARGS)
    "F.pad value": lambda m, v: m.nn.functional.pad(m.ones(3), [1, 1], value=v),
    "F.batch_norm momentum": lambda m, v: m.nn.functional.batch_norm(
        m.ones(2, 3), m.zeros(3), m.ones(3), training=True, momentum=v
    ),
    "F.cosine_similarity eps": lambda m, v: m.nn.functional.cosine_similarity(
        m.ones(2, 3), m.ones(2, 3), eps=v
    ),
    "F.pairwise_distance p": lambda m, v: m.nn.functional.pairwise_distance(
        m.ones(2, 3), m.zeros(2, 3), p=v
    ),
    "F.triplet_margin_loss eps": lambda m, v: m.nn.functional.triplet_margin_loss(
        m.ones(2, 3), m.ones(2, 3), m.zeros(2, 3), eps=v
    ),
    "F.multi_margin_loss margin": lambda m, v: m.nn.functional.multi_margin_loss(
        m.ones(2, 3), m.tensor([0, 1]), margin=v
    ),
    "F.rms_norm eps": lambda m, v: m.nn.functional.rms_norm(m.ones(2, 3), (3,), eps=v),
    "F.cosine_embedding_loss margin": lambda m, v: m.nn.functional.cosine_embedding_loss(
        m.ones(2, 3), m.zeros(2, 3) + 0.5, m.tensor([1.0, -1.0]), margin=v
    ),
    "F.hinge_embedding_loss margin": lambda m, v: m.nn.functional.hinge_embedding_loss(
        m.ones(3), m.tensor([1.0, -1.0, -1.0]), v
    ),
    "F.huber_loss delta": lambda m, v: m.nn.functional.huber_loss(m.ones(3), m.zeros(3), delta=v),
    "F.smooth_l1_loss beta": lambda m, v: m.nn.functional.smooth_l1_loss(
        m.ones(3), m.zeros(3), beta=v
    ),
    "F.layer_norm eps": lambda m, v: m.nn.functional.layer_norm(m.ones(2, 3), (3,), eps=v),
    "F.sdpa scale": lambda m, v: m.nn.functional.scaled_dot_product_attention(
        m.ones(1, 2, 3), m.ones(1, 2, 3), m.ones(1, 2, 3), scale=v
    ),
}

BAD = {
    "tuple": lambda m: (1, 2),
    "list": lambda m: [1.0],
    "str": lambda m: "a",
    "None": lambda m: None,
    "tensor with dims": lambda m: m.ones(2),
    "tensor requiring grad": lambda m: m.tensor(1.0, requires_grad=True),
    "ndarray": lambda m: np.array(2.0),
    "object": lambda m: object,
}

GOOD = {
    "int": lambda m: 2,
    "float": lambda m: 0.5,
    "bool": lambda m: True,
    "numpy float": lambda m: np.float32(0.25),
    "numpy int": lambda m: np.int64(1),
    "0-d tensor": lambda m: m.tensor(0.5),
}


@pytest.mark.parametrize("value", list(BAD) + list(GOOD))
@pytest.mark.parametrize("call", list(CALLS))
def test_number_argument(call, value):
    """Refused as PyTorch's parser refuses it, or taken and computed alike."""
    make = {**BAD, **GOOD}[value]
    if value == "0-d tensor" and call in ("full_like", "new_full", "cdist", "cdist kw"):
        pytest.skip("a 0-d tensor there: leafgrad's frontend reads it as a Python number")
    both(lambda m: CALLS[call](m, make(m)), check_warnings=False)


@pytest.mark.parametrize(
    "fn",
    [
        lambda m: m.nn.functional.normalize(m.ones(2, 3), 1j),
        lambda m: m.nn.functional.normalize(m.ones(2, 3), "fro"),
        lambda m: m.nn.functional.normalize(m.ones(2, 3), "nuc"),
        lambda m: m.nn.functional.normalize(m.ones(2, 3), None, 0),
        lambda m: m.norm(m.ones(3), "a"),
        lambda m: m.linalg.matrix_norm(m.ones(3), 3),
        lambda m: m.linalg.matrix_norm(m.ones(3), "nuc"),
        lambda m: m.linalg.matrix_norm(m.ones(3, 3), "a"),
    ],
)
def test_norm_orders_checked_first(fn):
    both(fn)


REDUCTIONS = ["amax", "amin", "max", "min", "argmax", "argmin", "median", "nanmedian", "mode"]


@pytest.mark.parametrize("dim", [-1, -2, 0, 1, (0, -1), [-1], (-2, 1), (), None])
@pytest.mark.parametrize("shape", [(3, 0), (0, 3), (0, 0), (0,)])
@pytest.mark.parametrize("name", [*REDUCTIONS, "kthvalue", "logsumexp", "cummax", "aminmax"])
def test_empty_reduction_dims(name, shape, dim):
    """ATen's zero_numel_check_dims names a dim as it was given (amax, amin); the others wrap."""

    def run(m):
        x = m.zeros(shape)
        if name == "kthvalue":
            return m.kthvalue(x, 1) if dim is None else m.kthvalue(x, 1, dim)
        if name == "aminmax":
            return m.aminmax(x) if dim is None else m.aminmax(x, dim=dim)
        return getattr(m, name)(x) if dim is None else getattr(m, name)(x, dim)

    both(run, check_warnings=False)


@pytest.mark.parametrize(
    "fn",
    [
        lambda m: m.fmod(m.ones(3), 1j),
        lambda m: m.ones(3).fmod_(1j),
        lambda m: m.remainder(m.ones(3), 1j),
        lambda m: m.remainder(1j, m.ones(3)),
        lambda m: m.floor_divide(m.ones(3), 1j),
        lambda m: m.ones(3) // 1j,
        lambda m: 1j // m.ones(3),
        lambda m: 1j % m.ones(3, requires_grad=True),
        lambda m: m.ones(3, requires_grad=True) % 1j,
        lambda m: m.ones(3, requires_grad=True) // 1j,
        lambda m: m.fmod(m.ones(3, dtype=m.complex64), m.ones(3)),
    ],
)
def test_complex_modulus_refused(fn):
    both(fn)


@pytest.mark.parametrize(
    "fn",
    [
        lambda m: m.cummax(m.zeros(()), 5),
        lambda m: m.cummin(m.zeros(()), -2),
        lambda m: m.cummax(m.zeros(2, 0), 5),
        lambda m: m.cummin(m.zeros(0), -3),
        lambda m: m.roll(m.zeros(2, 0), 1, 5),
        lambda m: m.roll(m.zeros(0), (1, 2), (3, -4)),
        lambda m: m.aminmax(m.zeros(()), dim=1),
        lambda m: m.logsumexp(m.zeros(3, 0), ()),
        lambda m: m.logsumexp(m.zeros(0, requires_grad=True), (), True),
    ],
)
def test_dims_of_empty_and_0d(fn):
    """Kernels that read no dim of an empty tensor (cummax, roll), or check a 0-d one's dim with
    their own message."""
    both(fn)


@pytest.mark.parametrize(
    "fn",
    [
        lambda m: m.dropout(m.ones(3), 2, False),
        lambda m: m.dropout_(m.ones(3), -1, True),
        lambda m: m.alpha_dropout(m.ones(3), 1.5, False),
        lambda m: m.feature_dropout(m.ones(3, 3), 2.0, False),
        lambda m: m.feature_alpha_dropout_(m.ones(3, 3), 2.5, True),
        lambda m: m.nn.functional.dropout(m.ones(3), 2),
        lambda m: m.nn.functional.dropout2d(m.ones(3, 3, 3), 1.5),
    ],
)
def test_dropout_probability(fn):
    """ATen's dropout refuses p outside [0, 1] with a RuntimeError (p printed as a C++ double);
    F's with a ValueError."""
    both(fn)


@pytest.mark.parametrize(
    "fn",
    [
        lambda m: m.clamp(m.ones(3), 1 + 2j),
        lambda m: m.clamp(m.ones(3), 2 + 0j),
        lambda m: m.clamp(m.ones(3), max=1j),
        lambda m: m.clip(m.ones(3), np.complex64(1j)),
        lambda m: m.clamp_min(m.ones(3), 1j),
        lambda m: m.clamp_max(m.ones(3), 2 + 0j),
        lambda m: m.ones(3).clamp_(1j),
        lambda m: m.ones(3).clamp_min_(1j),
        lambda m: m.clamp(m.ones(3, dtype=m.int64), 1 + 1j),
        lambda m: m.clamp(m.ones(3, dtype=m.bool), 1j),
        lambda m: m.clamp(m.ones(3, dtype=m.complex64), 1j),
    ],
)
def test_clamp_complex_bounds(fn):
    """A complex bound: refused (it computed a complex clamp), or read as a real double."""
    both(fn)


BINARY = ["lt", "le", "gt", "ge", "eq", "ne", "fmod", "atan2", "remainder", "floor_divide"]
BINARY += ["hypot", "copysign", "xlogy", "bitwise_and", "gcd", "maximum"]


@pytest.mark.parametrize("inplace", [False, True])
@pytest.mark.parametrize("other", ["1j", "0-d complex64", "0-d complex128", "complex64"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bool", "complex64"])
@pytest.mark.parametrize("op", BINARY)
def test_complex_operand_of_a_real_kernel(op, dtype, other, inplace):
    """The kernel runs in the common dtype: a Python complex or a complex 0-d tensor makes it
    complex (the refusal names it: ComplexDouble beside a float64 tensor); in place, comparisons
    write any dtype, the others raise the cast error first."""

    def run(m):
        x = m.ones(3, dtype=getattr(m, dtype))
        o = {
            "1j": 1j,
            "0-d complex64": m.tensor(1j),
            "0-d complex128": m.tensor(1j, dtype=m.complex128),
            "complex64": m.ones(3, dtype=m.complex64),
        }[other]
        return getattr(x, op + "_" * inplace)(o)

    both(run, check_warnings=False)


# Note: a kernel reading a Scalar as a real C type (``Scalar::to<float>()``) refuses a complex
# one with an imaginary part ("... to type <C type> without overflow", the C type the kernel's:
# opmath, scalar_t or double) and takes one without as its real part; a kernel that refuses the
# input's dtype does so first. F's Python functions that pass a float on to a builtin get the
# parser's "must be float" instead.
REAL_KERNELS = {
    "elu": lambda m, x, s: m.nn.functional.elu(x, s),
    "elu_": lambda m, x, s: m.nn.functional.elu_(x.clone(), s),
    "celu": lambda m, x, s: m.nn.functional.celu(x, s),
    "celu_": lambda m, x, s: m.nn.functional.celu_(x.clone(), s),
    "leaky_relu": lambda m, x, s: m.nn.functional.leaky_relu(x, s),
    "leaky_relu_": lambda m, x, s: m.nn.functional.leaky_relu_(x.clone(), s),
    "hardshrink": lambda m, x, s: m.nn.functional.hardshrink(x, s),
    "Tensor.hardshrink": lambda m, x, s: x.hardshrink(s),
    "softshrink": lambda m, x, s: m.nn.functional.softshrink(x, s),
    "rrelu lower": lambda m, x, s: m.nn.functional.rrelu(x, s, 0.5),
    "rrelu upper": lambda m, x, s: m.rrelu(x, 0.0, s),
    "threshold": lambda m, x, s: m.nn.functional.threshold(x, s, 0.0),
    "threshold value": lambda m, x, s: m.threshold(x, 0.5, s),
    "threshold_": lambda m, x, s: m.nn.functional.threshold_(x.clone(), s, 0.0),
    "hardtanh_": lambda m, x, s: m.nn.functional.hardtanh_(x.clone(), s, 2.0),
    "hardtanh_ max": lambda m, x, s: m.nn.functional.hardtanh_(x.clone(), -2.0, s),
    "hardtanh": lambda m, x, s: m.nn.functional.hardtanh(x, s, 2.0),
    "softplus beta": lambda m, x, s: m.nn.functional.softplus(x, s),
    "softplus threshold": lambda m, x, s: m.nn.functional.softplus(x, 1, s),
    "histc": lambda m, x, s: m.histc(x, 4, s, 3),
    "constant_pad_nd": lambda m, x, s: m.constant_pad_nd(x, [1, 1], s),
    "pad": lambda m, x, s: m.nn.functional.pad(x, [1, 1], value=s),
    "hinge_embedding_loss": lambda m, x, s: m.nn.functional.hinge_embedding_loss(x, x, s),
    "huber_loss": lambda m, x, s: m.nn.functional.huber_loss(x, x, delta=s),
    "smooth_l1_loss": lambda m, x, s: m.nn.functional.smooth_l1_loss(x, x, beta=s),
    "margin_ranking_loss": lambda m, x, s: m.nn.functional.margin_ranking_loss(x, x, x, s),
    "layer_norm": lambda m, x, s: m.nn.functional.layer_norm(x, (3,), eps=s),
    "gelu approximate": lambda m, x, s: m.nn.functional.gelu(x, approximate=s),
    "multi_margin_loss": lambda m, x, s: m.nn.functional.multi_margin_loss(
        x.reshape(1, 3), m.tensor([1]), margin=s
    ),
}


@pytest.mark.parametrize("inplace", [False, True])
@pytest.mark.parametrize("dtype", ["float32", "int64"])
def test_hardtanh_crossed_bounds(dtype, inplace):
    """ATen's hardtanh is a clamp (F.hardtanh_ does not compare its bounds): the upper one wins."""

    def run(m):
        x = m.tensor([-3, 0, 1, 3], dtype=getattr(m, dtype))
        x = x.float().requires_grad_() if dtype == "float32" else x
        F = m.nn.functional
        y = F.hardtanh_(x * 1, 2, 1) if inplace else F.hardtanh(x, 2, 1)  # F's Python refuses
        if y.requires_grad:
            y.sum().backward()
            return y, x.grad
        return y

    both(run)


@pytest.mark.parametrize("scalar", [1j, 2 + 0j, 0.5 - 0.25j, 0j])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int64", "int32", "complex64"])
@pytest.mark.parametrize("call", list(REAL_KERNELS))
def test_complex_scalar_of_a_real_kernel(call, dtype, scalar):
    fn = REAL_KERNELS[call]
    both(lambda m: fn(m, m.ones(3, dtype=getattr(m, dtype)), scalar))
