"""Assorted math, shape, scatter, statistics and sampling ops of the ``torch`` namespace.

Most are PyTorch composites and are written over existing ops, so the recorded graph has
PyTorch's nodes (``float_power`` is ``pow`` of a cast, ``logdet`` a ``where`` over ``slogdet``,
``cov`` and ``corrcoef`` ATen's arithmetic step by step, the splits ``tensor_split``). The others
are table entries: ``deg2rad``/``rad2deg``, ``gcd``/``lcm``, ``igamma``/``igammac``, ``isin``,
``matrix_exp``, ``pdist``, the three ``*_scatter`` ops and the samplers' nodes.

Note [Sampling nodes]: ``normal``, ``bernoulli`` and ``poisson`` draw their numbers on the host
from PyTorch's CPU stream (``_random``), as the in-place samplers do; the node takes the numbers as
a non-differentiable operand, so JAX's VJP gives its tensor operands zero gradients, which is
PyTorch's ``zeros_like`` formula, and nothing is saved.
"""

from __future__ import annotations

import functools
import math

import jax
import jax.numpy as jnp
import jax.scipy.special as jss
import numpy as np
from jax import lax

from .. import _dtype as D
from .. import _errors as E
from .. import _random as R
from .. import _storage as S
from .._known import known_values
from .._tensor import Tensor, _wrap_dim
from ..autograd import grad_mode
from ..autograd import saved as saved_mod
from .api import (
    FUNCTIONS,
    keywords_at,
    refuse_backward,
    refuse_complex_autograd,
    register_ops,
    tensor_op,
    underivable,
)
from .dispatch import broadcast_shapes, dispatch
from .elementwise import MUST_BE_TENSOR, _is_number, _kernel_error, _number, kernel_scalar
from .shape import _lead
from .table import OPS, OpDef, promote, unary_float

# --- PyTorch's messages ------------------------------------------------------------------------
DEG2RAD_COMPLEX = "{} is not supported for complex tensors."
FLOAT_POWER_INPLACE = (
    "the base given to float_power_ has dtype {} but the operation's result requires dtype {}"
)
IGAMMA_INPUT = "the derivative for '{}: input' is not implemented."
ISIN_DTYPE = "Unsupported input type encountered for isin(): {}"
SPLIT_DIMS = (
    "torch.{} requires a tensor with at least {} dimension, but got a tensor with {} dimensions!"
)
SPLIT_DIVISIBLE = (
    "torch.{} attempted to split along dimension {}, but the size of the dimension {} is not "
    "divisible by the split_size {}!"
)
COLUMN_STACK_EMPTY = "column_stack expects a non-empty TensorList"
TUPLE_OF_TENSORS = "{}(): argument 'tensors' (position 1) must be tuple of Tensors, not {}"
NOT_EXPANDABLE = "size {{{}}} is not expandable to size {{{}}}."
SCATTER_SIZE = (
    "expected src to have a size equal to the slice of self. src size = {}, slice size = {}"
)
SLICE_STEP = "slice step must be positive"
FILL_DIAGONAL_DIMS = "dimensions must larger than 1"
FILL_DIAGONAL_EQUAL = "all dimensions of input must be of equal length"
COV_DIMS = (
    "cov(): expected input to have two or fewer dimensions but got an input with {} dimensions"
)
COV_BOOL = "cov(): bool dtype is not supported for input"
COV_WEIGHT_DIMS = (
    "cov(): expected {0} to have one or fewer dimensions but got {0} with {1} dimensions"
)
COV_FWEIGHTS_DTYPE = (
    "cov(): expected fweights to have integral dtype but got fweights with {} dtype"
)
COV_AWEIGHTS_DTYPE = (
    "cov(): expected aweights to have floating point dtype but got aweights with {} dtype"
)
COV_WEIGHT_NUMEL = (
    "cov(): expected {0} to have the same numel as there are observations in the input but got "
    "{1} != {2}"
)
COV_NEGATIVE = "cov(): {} cannot be negative"
COV_ZERO_SUM = "cov(): weights sum to zero, can't be normalized"
COV_DOF = (
    "cov(): degrees of freedom is <= 0. Correction should be strictly less than the number of "
    "observations. (Triggered internally at "
    "/__w/pytorch/pytorch/aten/src/ATen/native/Correlation.cpp:129.)"
)
CORRCOEF_DIMS = (
    "corrcoef(): expected input to have two or fewer dimensions but got an input with {} dimensions"
)
NORMAL_TENSOR_STD = "normal expects all elements of std >= 0.0"
NORMAL_COMPLEX_STD = "normal expects standard deviation to be non-complex"
POISSON_RATE = "invalid Poisson rate, expected rate to be non-negative"
NO_DERIVATIVE = "derivative for aten::{} is not implemented"
PDIST_2D = "pdist only supports 2D tensors, got: {}D"
PDIST_P = "pdist only supports non-negative p values"
PDIST_DTYPE = "pdist only supports floating-point dtypes"

_OUT = "Tensor out = None"
_NORMAL_SIGS = (
    f"(Tensor mean, Tensor std, *, torch.Generator generator = None, {_OUT})",
    f"(Tensor mean, float std = 1, *, torch.Generator generator = None, {_OUT})",
    f"(float mean, Tensor std, *, torch.Generator generator = None, {_OUT})",
    "(float mean, float std, tuple of ints size, *, torch.Generator generator = None, "
    f"{_OUT}, torch.dtype dtype = None, torch.layout layout = None, torch.device device = None, "
    "bool pin_memory = False, bool requires_grad = False)",
)
_FLOAT_POWER_SIGS = (
    f"(Tensor input, Tensor exponent, *, {_OUT})",
    f"(Number self, Tensor exponent, *, {_OUT})",
    f"(Tensor input, Number exponent, *, {_OUT})",
)
_ISIN_SIGS = tuple(
    f"({a}, {b}, *, bool assume_unique = False, bool invert = False, {_OUT})"
    for a, b in [
        ("Tensor elements", "Tensor test_elements"),
        ("Number element", "Tensor test_elements"),
        ("Tensor elements", "Number test_element"),
    ]
)


def _shape_text(shape) -> str:
    return "[" + ", ".join(str(s) for s in shape) + "]"


_need_tensor = E.need_tensor


def _lg():
    import leafgrad  # the namespace's functions (where, ones_like, ...) after import

    return leafgrad


# --- dtype rules -------------------------------------------------------------------------------


def _angle_rule(name: str):
    def rule(meta, static):
        if meta[0][0].is_complex:
            raise RuntimeError(DEG2RAD_COMPLEX.format(name))
        return unary_float(meta, static)

    return rule


def _integer_only(kernel: str):
    def rule(meta, static):
        cast, rt = promote(meta, static)
        if rt._kind not in "ui":
            raise _kernel_error(kernel, rt)
        return cast, rt

    return rule


def _igamma_rule(kernel: str):
    def rule(meta, static):
        cast, rt = promote(meta, static)
        if rt._kind in "buic":
            raise _kernel_error(kernel, rt)
        return cast, rt

    return rule


def _isin_rule(meta, static):
    cast, _ = promote(meta, static)
    return cast, D.bool_


def _like_self(meta, static):
    """Every operand written into ``self``'s dtype (the scatters, the samples)."""
    dt = meta[0][0]
    return (None,) + (dt,) * (len(meta) - 1), dt


def _pdist_rule(meta, static):
    dt = meta[0][0]
    if not dt.is_floating_point:
        raise RuntimeError(PDIST_DTYPE)
    return (None,), dt


def _sample_rule(meta, static):
    """The sample operand (last) holds the result, already in the result's dtype."""
    return (None,) * len(meta), meta[-1][0]


# --- forwards ----------------------------------------------------------------------------------


def _scaled(factor: float):
    def fwd(x):
        # ATen multiplies by the double constant wrapped as a scalar of the tensor's type;
        # half types compute in float (their opmath type)
        if x.dtype in (jnp.float16, jnp.bfloat16):
            return (x.astype(jnp.float32) * jnp.float32(factor)).astype(x.dtype)
        return x * jnp.asarray(factor, x.dtype)

    return fwd


def _lcm(x, y):
    g = jnp.gcd(x, y)
    safe = jnp.where(g == 0, 1, g)
    return jnp.where(g == 0, 0, jnp.abs(x // safe * y))


def _isin(elements, test, invert=False):
    flat = jnp.reshape(test, (-1,))
    hit = jnp.any(jnp.reshape(elements, (-1, 1)) == flat, axis=-1) if flat.size else None
    if hit is None:
        hit = jnp.zeros((elements.size,), bool)
    hit = jnp.reshape(hit, jnp.shape(elements))
    return jnp.logical_not(hit) if invert else hit


def _matrix_exp(x):
    if x.shape[-1] == 0:
        return x
    batch = x.shape[:-2]
    # JAX's single-precision Pade approximant is a relative 1e-5 off (exp(5)); ATen's float
    # kernel is not: computed in double and rounded
    wide = jnp.complex128 if jnp.iscomplexobj(x) else jnp.float64
    flat = jnp.reshape(x, (-1, *x.shape[-2:])).astype(wide)
    out = jax.vmap(jax.scipy.linalg.expm)(flat).astype(x.dtype)
    return jnp.reshape(out, (*batch, *x.shape[-2:]))


def _in_double(fn):
    # JAX's float32 series lose several digits (a relative 1e-5 at a = 30, x = 25) where ATen's
    # float kernel keeps float's precision: computed in double and rounded instead
    def fwd(a, x):
        if a.dtype == jnp.float64:
            return fn(a, x)
        return fn(a.astype(jnp.float64), x.astype(jnp.float64)).astype(a.dtype)

    return fwd


def _select_scatter(x, src, dim, index):
    where = (slice(None),) * dim + (index,)
    return x.at[where].set(src)


def _slice_scatter(x, src, dim, start, stop, step):
    where = (slice(None),) * dim + (slice(start, stop, step),)
    return x.at[where].set(src)


def _diagonal_scatter(x, src, offset, dim1, dim2):
    moved = jnp.moveaxis(x, (dim1, dim2), (-2, -1))
    i = np.arange(src.shape[-1])
    rows, cols = (i, i + offset) if offset >= 0 else (i - offset, i)
    moved = moved.at[..., rows, cols].set(src)
    return jnp.moveaxis(moved, (-2, -1), (dim1, dim2))


def _fill_positions(x, value, positions):
    flat = jnp.reshape(x, (-1,)).at[np.asarray(positions, np.int64)].set(value)
    return jnp.reshape(flat, x.shape)


_no_pdist_double_backward = underivable("_pdist_backward")


@functools.partial(jax.custom_jvp, nondiff_argnums=(1,))
def _pdist(x, p):
    return _pdist_value(x, p)


@_pdist.defjvp
def _pdist_jvp(p, primals, tangents):
    # The rule's primal is differentiated only by a derivative of the backward (create_graph),
    # where PyTorch's ``_pdist_backward`` has no formula (PdistBackwardBackward0 raises).
    (x,), (t,) = primals, tangents
    x = _no_pdist_double_backward(x)
    if p == 0:
        # zeros that still read x: the gradient keeps x as an input, as PyTorch's
        # PdistBackwardBackward0 does (its own backward then raises)
        i, j = np.triu_indices(x.shape[0], 1)
        diff = x[i] - x[j]
        zero = jnp.zeros((), x.dtype)
        return _pdist_value(x, p), jnp.sum(jnp.where(diff == diff, zero, zero) * (t[i] - t[j]), -1)
    return jax.jvp(lambda y: _pdist_value(y, p), (x,), (t,))


def _pdist_value(x, p):
    n = x.shape[0]
    i, j = np.triu_indices(n, 1)
    diff = x[i] - x[j]
    if p == 0:
        return lax.stop_gradient(jnp.sum(diff != 0, axis=-1).astype(x.dtype))
    a = jnp.abs(diff)
    # |diff| whose derivative is sign(diff), 0 at 0 as in ATen's backward (JAX's abs gives 1)
    t = diff * lax.stop_gradient(jnp.sign(diff))
    if p == 1:
        return jnp.sum(t, axis=-1)
    if p == math.inf:
        # ATen's backward gives every element equal to the maximum the full gradient
        top = jnp.max(a, axis=-1, initial=0.0, keepdims=True)
        tied = lax.stop_gradient((a == top).astype(x.dtype))
        moving = jnp.sum((t - lax.stop_gradient(t)) * tied, axis=-1)
        return lax.stop_gradient(top[..., 0]) + moving
    # ATen's backward is 0 where a distance is 0: the root is taken away from 0 only
    if p == 2:
        s = jnp.sum(diff * diff, axis=-1)
    else:
        # ATen's backward is 0 where an element's difference is 0 (for p < 1 too, where the
        # power's own derivative there is infinite)
        nonzero = a != 0
        s = jnp.sum(jnp.where(nonzero, jnp.where(nonzero, t, 1) ** p, 0), axis=-1)
    zero = s == 0
    root = jnp.where(zero, 1, s) ** (1 / p) if p != 2 else jnp.sqrt(jnp.where(zero, 1, s))
    return jnp.where(zero, 0, root)


def _normal_values(sample: np.ndarray, mean, std) -> np.ndarray:
    """ATen's ``output.mul_(std).add_(mean)`` after ``normal_``: each in-place step computes in
    the operands' common type and rounds to the output's (host arrays, as the draws are)."""
    out = sample.dtype
    if std is not None:
        sample = (sample * std).astype(out)
    return (sample + mean).astype(out)


_OPS = [
    OpDef("deg2rad", _scaled(math.pi / 180), "Deg2RadBackward0", ("self",), _angle_rule("deg2rad")),
    OpDef("rad2deg", _scaled(180 / math.pi), "Rad2DegBackward0", ("self",), _angle_rule("rad2deg")),
    OpDef(
        "gcd",
        jnp.gcd,
        "",
        ("self", "other"),
        _integer_only("gcd_cpu"),
        differentiable=(),
        broadcast=True,
    ),
    OpDef(
        "lcm",
        _lcm,
        "",
        ("self", "other"),
        _integer_only("lcm_cpu"),
        differentiable=(),
        broadcast=True,
    ),
    OpDef(
        "igamma",
        _in_double(jss.gammainc),
        "IgammaBackward0",
        ("self", "other"),
        _igamma_rule("igamma_cpu"),
        saves={"self": ("self", "other"), "other": ("self", "other")},
        broadcast=True,
    ),
    OpDef(
        "igammac",
        _in_double(jss.gammaincc),
        "IgammacBackward0",
        ("self", "other"),
        _igamma_rule("igammac_cpu"),
        saves={"self": ("self", "other"), "other": ("self", "other")},
        broadcast=True,
    ),
    OpDef("isin", _isin, "", ("elements", "test_elements"), _isin_rule, differentiable=()),
    OpDef(
        "linalg_matrix_exp",
        _matrix_exp,
        "LinalgMatrixExpBackward0",
        ("self",),
        lambda meta, static: ((None,), meta[0][0]),
        saves={"self": ("self",)},
    ),
    OpDef("select_scatter", _select_scatter, "SelectScatterBackward0", ("self", "src"), _like_self),
    OpDef("slice_scatter", _slice_scatter, "SliceScatterBackward0", ("self", "src"), _like_self),
    OpDef(
        "diagonal_scatter",
        _diagonal_scatter,
        "DiagonalScatterBackward0",
        ("self", "src"),
        _like_self,
    ),
    # fill_diagonal_ fills an as_strided view of self: PyTorch's node is CopySlices (its
    # fill_ gives the written elements a zero gradient), with an edge to self's history
    OpDef(
        "fill_diagonal",
        _fill_positions,
        "CopySlices",
        ("self", "value"),
        _like_self,
        edges=("self",),
    ),
    OpDef(
        "pdist",
        _pdist,
        "PdistBackward0",
        ("self",),
        _pdist_rule,
        saves={"self": ("self", "result")},
    ),
    OpDef(
        "normal_tensor_tensor",
        lambda mean, std, sample: sample,
        "NormalBackward3",
        ("mean", "std", "sample"),
        _sample_rule,
        edges=("mean", "std"),
    ),
    OpDef(
        "normal_tensor_float",
        lambda mean, sample: sample,
        "NormalBackward1",
        ("mean", "sample"),
        _sample_rule,
        edges=("mean",),
    ),
    OpDef(
        "normal_float_tensor",
        lambda std, sample: sample,
        "NormalBackward2",
        ("std", "sample"),
        _sample_rule,
        edges=("std",),
    ),
    OpDef(
        "bernoulli_sample",
        lambda self_, sample: sample,
        "BernoulliBackward0",
        ("self", "sample"),
        _sample_rule,
        edges=("self",),
    ),
    OpDef(
        "bernoulli_p_sample",
        lambda self_, sample: sample,
        "NotImplemented",
        ("self", "sample"),
        _sample_rule,
        edges=("self",),
    ),
    OpDef(
        "poisson_sample",
        lambda self_, sample: sample,
        "PoissonBackward0",
        ("self", "sample"),
        _sample_rule,
        edges=("self",),
    ),
]

if "deg2rad" not in OPS:  # importing twice (reload) must not register twice
    register_ops(*_OPS)


# --- elementwise -------------------------------------------------------------------------------


@tensor_op("deg2rad")
def deg2rad(input):
    """``torch.deg2rad``: degrees to radians (Deg2RadBackward0)."""
    _need_tensor(input, "deg2rad", "input", 1)
    return dispatch(OPS["deg2rad"], input)


@tensor_op("rad2deg")
def rad2deg(input):
    """``torch.rad2deg``: radians to degrees (Rad2DegBackward0)."""
    _need_tensor(input, "rad2deg", "input", 1)
    return dispatch(OPS["rad2deg"], input)


@tensor_op("fix")
def fix(input):
    """``torch.fix``: an alias of ``trunc`` (TruncBackward0)."""
    return Tensor.trunc(input)


def _float_power_dtype(*complex_flags) -> D.dtype:
    return D.complex128 if any(complex_flags) else D.float64


@tensor_op("float_power", method=False)
def float_power(input, exponent):
    """``torch.float_power``: ``pow`` in double precision (the operands cast to float64, or
    complex128 where one is complex), so the node is ``pow``'s (PowBackward0/1/2)."""
    if isinstance(input, Tensor) and isinstance(exponent, Tensor):
        dt = _float_power_dtype(input._dtype.is_complex, exponent._dtype.is_complex)
        return Tensor.pow(input.to(dt), exponent.to(dt))
    if isinstance(input, Tensor) and _is_number(exponent):
        exponent = _number(exponent)
        dt = _float_power_dtype(input._dtype.is_complex, isinstance(exponent, complex))
        return Tensor.pow(input.to(dt), complex(exponent) if dt.is_complex else float(exponent))
    if _is_number(input) and isinstance(exponent, Tensor):
        input = _number(input)
        dt = _float_power_dtype(exponent._dtype.is_complex, isinstance(input, complex))
        return _lg().pow(complex(input) if dt.is_complex else float(input), exponent.to(dt))
    raise TypeError(E.invalid_arguments("float_power", _FLOAT_POWER_SIGS, (input, exponent)))


@tensor_op("float_power", function=False)
def _float_power_method(self, exponent):
    if not isinstance(exponent, Tensor) and not _is_number(exponent):
        raise TypeError(
            MUST_BE_TENSOR.format("float_power", "exponent", 1, E.py_typename(exponent))
        )
    return float_power(self, exponent)


@tensor_op("float_power_", function=False)
def float_power_(self, exponent):
    """``Tensor.float_power_``: ``self`` must already have the double result dtype."""
    if isinstance(exponent, Tensor):
        dt = _float_power_dtype(self._dtype.is_complex, exponent._dtype.is_complex)
    else:
        exponent = _number(exponent)
        dt = _float_power_dtype(self._dtype.is_complex, isinstance(exponent, complex))
    if self._dtype is not dt:
        n = E.scalar_type_name
        raise RuntimeError(FLOAT_POWER_INPLACE.format(n(self._dtype), n(dt)))
    if isinstance(exponent, Tensor):
        return self.pow_(exponent.to(dt))
    return self.pow_(complex(exponent) if dt.is_complex else float(exponent))


def _tensor_pair(name: str, op_name: str | None = None, refused: str | None = None):
    """``torch.<name>(input, other)`` and ``Tensor.<name>(other)`` over two tensors.
    ``refused``: the operand name whose derivative PyTorch does not implement (``input``)."""
    op = OPS[op_name or name]

    def compute(input, other):
        out = dispatch(op, input, other)
        if refused is not None and input._requires_grad:
            message = IGAMMA_INPUT.format(name)
            refuse_backward(out, lambda: NotImplementedError(message), edge=0)
        return out

    def function(input, other):
        _need_tensor(input, name, "input", 1)
        _need_tensor(other, name, "other", 2)
        return compute(input, other)

    def method(self, other):
        _need_tensor(other, name, "other", 1)
        return compute(self, other)

    for f in (function, method):
        f.__name__ = f.__qualname__ = name
        f.__doc__ = f"``torch.{name}``: elementwise over two broadcast tensors."
    tensor_op(name, method=False)(function)
    tensor_op(name, function=False)(method)


_tensor_pair("gcd")
_tensor_pair("lcm")
_tensor_pair("igamma", refused="input")
_tensor_pair("igammac", refused="input")


def _install_inplace(*names: str) -> None:
    # the in-place forms of ops not in inplace.SAME_NODE (same machinery)
    from .inplace import _make_inplace

    for name in names:
        if not hasattr(Tensor, name + "_"):
            setattr(Tensor, name + "_", _make_inplace(name))


_install_inplace("gcd", "lcm", "igamma", "igammac")


@tensor_op("isreal")
def isreal(input):
    """``torch.isreal``: True where the imaginary part is 0 (everywhere for real dtypes)."""
    _need_tensor(input, "isreal", "input", 1)
    if not input._dtype.is_complex:
        # PyTorch fills a new tensor in place (``Tensor._filled_by_kernel``)
        return input._filled_by_kernel(_lg().ones_like(input, dtype=D.bool_))
    return input.imag == 0


def _isin_check(x) -> None:
    if isinstance(x, Tensor):
        dt = x._dtype
    else:
        dt = D.bool_ if isinstance(x, bool) else D.int64 if isinstance(x, int) else None
        dt = D.complex128 if isinstance(x, complex) else dt or D.float64
    if dt in (D.bool_, D.complex64, D.complex128):
        raise RuntimeError(ISIN_DTYPE.format(E.scalar_type_name(dt)))


@tensor_op("isin", method=False)
def isin(elements, test_elements, *, assume_unique=False, invert=False):
    """``torch.isin``: whether each element is among ``test_elements`` (not differentiable)."""
    a, b = _number(elements), _number(test_elements)
    if not (
        isinstance(a, Tensor)
        and (isinstance(b, Tensor) or _is_number(b))
        or _is_number(a)
        and isinstance(b, Tensor)
    ):
        raise TypeError(E.invalid_arguments("isin", _ISIN_SIGS, (elements, test_elements)))
    _isin_check(a)
    _isin_check(b)
    if not isinstance(a, Tensor):
        a = _lg().tensor(a, device=b.device)
    return dispatch(OPS["isin"], a, b, invert=bool(invert))


# --- linear algebra ----------------------------------------------------------------------------


@tensor_op("logdet")
def logdet(input):
    """``torch.logdet``: ``slogdet``'s log, NaN where the determinant is negative (a ``where``
    over LinalgSlogdetBackward0, as PyTorch's composite)."""
    from .linalg_ops import _check_square, _no_low_precision

    _check_square("logdet", input)
    _no_low_precision("logdet", input)
    sign, logabs = dispatch(OPS["linalg_slogdet"], input)
    if input._dtype.is_complex:
        return sign.log() + logabs
    return _lg().where(sign == -1.0, math.nan, logabs)


@tensor_op("matrix_exp")
def matrix_exp(input):
    """``torch.matrix_exp``: ``linalg.matrix_exp`` (LinalgMatrixExpBackward0)."""
    from .linalg_ops import _check_square

    _check_square("linalg.matrix_exp", input)
    return dispatch(OPS["linalg_matrix_exp"], input)


# --- shapes ------------------------------------------------------------------------------------


@tensor_op("ravel")
def ravel(input):
    """``torch.ravel``: ``contiguous().view(-1)``."""
    _need_tensor(input, "ravel", "input", 1)
    return input.contiguous().view(-1)


def _size_args(size, fn: str) -> tuple:
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    return tuple(int(s) for s in size)


@tensor_op("sum_to_size", function=False)
def sum_to_size(self, *size):
    """``Tensor.sum_to_size``: ``self`` summed down to ``size`` (PyTorch's ``sum_to``)."""
    if not size:
        raise TypeError('sum_to_size() missing 1 required positional arguments: "size"')
    shape = _size_args(size, "sum_to_size")
    sizes = tuple(self._data.shape)
    lead = len(sizes) - len(shape)
    if lead < 0 or any(s != t and s != 1 for s, t in zip(shape, sizes[lead:])):
        raise RuntimeError(NOT_EXPANDABLE.format(_shape_text(shape), _shape_text(sizes)))
    if not shape:
        return self.sum()
    dims = list(range(lead)) + [
        i for i in range(lead, len(sizes)) if shape[i - lead] == 1 and sizes[i] != 1
    ]
    out = self.sum(dims, keepdim=True) if dims else self
    return out.view(shape) if lead > 0 else out


def _directional_split(name: str, dim: int, min_dims: int):
    sigs_f = ("(Tensor input, int sections)", "(Tensor input, tuple of ints indices)")
    sigs_m = ("(int sections)", "(tuple of ints indices)")

    def split(input, indices_or_sections, *, _method=False):
        sections = indices_or_sections
        if isinstance(sections, Tensor) or not (
            isinstance(sections, (list, tuple))
            and all(not E.int_refused(i) for i in sections)
            or isinstance(sections, (int, np.integer))
            and not isinstance(sections, bool)
        ):
            sigs, args = (sigs_m, (sections,)) if _method else (sigs_f, (input, sections))
            raise TypeError(E.invalid_arguments(name, sigs, args))
        n = input._data.ndim
        if n < min_dims:
            raise RuntimeError(SPLIT_DIMS.format(name, min_dims, n))
        d = 0 if name == "hsplit" and n == 1 else dim
        if isinstance(sections, (list, tuple)):
            return input.tensor_split([int(i) for i in sections], d)
        size = input._data.shape[d]
        k = int(sections)
        if k == 0 or size % k:
            raise RuntimeError(SPLIT_DIVISIBLE.format(name, d, size, k))
        return input.tensor_split(k, d)

    def function(input, indices_or_sections):
        _need_tensor(input, name, "input", 1)
        return split(input, indices_or_sections)

    def method(self, *indices_or_sections):
        arg = indices_or_sections
        if not arg:
            raise TypeError(E.invalid_arguments(name, sigs_m, ()))
        if len(arg) == 1:
            arg = arg[0]
        return split(self, arg, _method=True)

    for f in (function, method):
        f.__name__ = f.__qualname__ = name
        f.__doc__ = f"``torch.{name}``: ``tensor_split`` along dim {dim}."
    tensor_op(name, method=False)(keywords_at(1, "sections", "indices")(function))
    tensor_op(name, function=False)(keywords_at(1, "sections", "indices")(method))


_directional_split("hsplit", 1, 1)
_directional_split("vsplit", 0, 2)
_directional_split("dsplit", 2, 3)


NO_COLUMN_STACK_RULE = (
    "Batching rule not implemented for aten::column_stack. We could not generate a fallback."
)


@tensor_op("column_stack", method=False)
def column_stack(tensors):
    """``torch.column_stack``: 0-d and 1-d tensors made columns, then ``hstack``."""
    if not isinstance(tensors, (list, tuple)):
        raise TypeError(TUPLE_OF_TENSORS.format("column_stack", E.py_typename(tensors)))
    if not tensors:
        raise RuntimeError(COLUMN_STACK_EMPTY)
    if _lead(*(t for t in tensors if isinstance(t, Tensor))):
        raise RuntimeError(NO_COLUMN_STACK_RULE)  # PyTorch's vmap has no rule for it
    cols = [t.reshape(t.numel(), 1) if t.ndim <= 1 else t for t in tensors]
    return _lg().hstack(cols)


# --- scatters ----------------------------------------------------------------------------------


def _scatter_check(src, slice_shape) -> None:
    if tuple(src._data.shape) != tuple(slice_shape):
        raise RuntimeError(
            SCATTER_SIZE.format(_shape_text(src._data.shape), _shape_text(slice_shape))
        )


@tensor_op("select_scatter")
def select_scatter(input, src, dim, index):
    """``torch.select_scatter``: ``input`` with ``src`` written at ``select(dim, index)``."""
    _need_tensor(input, "select_scatter", "input", 1)
    _need_tensor(src, "select_scatter", "src", 2)
    with grad_mode.no_grad():
        view = input.select(dim, index)  # PyTorch's checks of dim and index
    d = _wrap_dim(dim, input._data.ndim)
    _scatter_check(src, view.shape)
    written = {"dim": dim, "index": int(index)}  # as given, which the node keeps
    index = int(index) % input._data.shape[d]
    out = refuse_complex_autograd(
        dispatch(OPS["select_scatter"], input, src, dim=d, index=index), "select_scatter"
    )
    saved_mod.keep_written(out, **written)
    return out


@tensor_op("slice_scatter")
def slice_scatter(input, src, dim=0, start=None, end=None, step=1):
    """``torch.slice_scatter``: ``input`` with ``src`` written at ``[start:end:step]`` of dim."""
    _need_tensor(input, "slice_scatter", "input", 1)
    _need_tensor(src, "slice_scatter", "src", 2)
    d = _wrap_dim(dim, input._data.ndim)
    step = int(step)
    if step <= 0:
        raise RuntimeError(SLICE_STEP)
    size = input._data.shape[d] if input._data.ndim else 1
    begin, stop, _ = slice(start, end, step).indices(size)
    stop = max(stop, begin)
    shape = list(input._data.shape)
    if shape:
        shape[d] = (stop - begin + step - 1) // step
    _scatter_check(src, shape)
    out = dispatch(OPS["slice_scatter"], input, src, dim=d, start=begin, stop=stop, step=step)
    refuse_complex_autograd(out, "slice_scatter")
    saved_mod.keep_written(out, dim=dim, start=start, end=end, step=step)  # as given
    return out


@tensor_op("diagonal_scatter")
def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    """``torch.diagonal_scatter``: ``input`` with ``src`` written on a diagonal."""
    _need_tensor(input, "diagonal_scatter", "input", 1)
    _need_tensor(src, "diagonal_scatter", "src", 2)
    with grad_mode.no_grad():
        view = input.diagonal(offset, dim1, dim2)  # PyTorch's checks of the dims
    _scatter_check(src, view.shape)
    n = input._data.ndim
    out = dispatch(
        OPS["diagonal_scatter"],
        input,
        src,
        offset=int(offset),
        dim1=_wrap_dim(dim1, n),
        dim2=_wrap_dim(dim2, n),
    )
    saved_mod.keep_written(out, offset=int(offset), dim1=dim1, dim2=dim2)  # as given
    return out


@tensor_op("fill_diagonal_", function=False)
def fill_diagonal_(self, fill_value, wrap=False):
    """``Tensor.fill_diagonal_``: PyTorch fills the main diagonal through an ``as_strided`` view
    (and, with ``wrap``, a tall matrix's later diagonals through a second one)."""
    from .inplace import bump_version, inplace

    shape = tuple(self._data.shape)
    n = len(shape)
    if n < 2:
        raise RuntimeError(FILL_DIAGONAL_DIMS)
    if n > 2 and any(s != shape[0] for s in shape[1:]):
        raise RuntimeError(FILL_DIAGONAL_EQUAL)
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()  # PyTorch's parser reads a 0-d tensor as a Scalar
    value = kernel_scalar(_number(fill_value), self._dtype)
    height, width = shape[0], shape[1]
    step = sum(math.prod(shape[i + 1 :]) for i in range(n))
    positions = [k * step for k in range(min(height, width))]
    wraps = bool(wrap) and n == 2 and height > width + 1
    if wraps:
        count = (math.prod(shape) + width) // (width + 1) - len(positions)
        positions += [width * (width + 1) + k * step for k in range(count)]
    if self._requires_grad and self._grad_fn is None and self._base is None:
        # PyTorch's autograd kernel of the diagonal view's fill_; inference mode skips it
        if grad_mode.is_grad_enabled() and not grad_mode._state.inference:
            raise RuntimeError(E.VIEW_OF_LEAF_INPLACE)
    from . import index_put
    from .inplace import _overlaps, _shares_within, check_inplace

    recorded = grad_mode.is_grad_enabled() and self._requires_grad
    if recorded and self._base is not None and not grad_mode._state.inference:
        # the fill goes through the diagonal's as_strided view, which inherits the creation of
        # a view made by a multi-output op or under no_grad: PyTorch's message names it
        from .inplace import view_rebase_error

        S.view_grad_fn(self)  # a stale view raises its own error first (making the view reads it)
        message = view_rebase_error(self, indirect=False, through="AsStrided")
        if message is not None:
            raise RuntimeError(message)
    if not recorded and (_overlaps(self) or _shares_within(self)):
        # elements that share memory (an expanded tensor): PyTorch's fill_ of the diagonal's
        # as_strided view writes the memory of each diagonal element, which every element on it
        # then shows (Note [Writes to expanded tensors] in index_put.py)
        check_inplace(self, False, True, ())
        mask = np.zeros(math.prod(shape), bool)
        mask[positions] = True
        mask = Tensor._make(jnp.asarray(mask.reshape(shape)), D.bool_, self._device)
        fill = Tensor._make(jnp.asarray(value, self._data.dtype), self._dtype, self._device)
        index_put.masked_fill_expanded(self, mask, fill)
    else:
        inplace(
            self,
            lambda: dispatch(OPS["fill_diagonal"], self, value, positions=tuple(positions)),
            overlap=None,
        )
    if wraps:
        bump_version(self)  # the second view's fill_
    return self


# --- statistics --------------------------------------------------------------------------------


def _concrete(t) -> bool:
    """Whether ``t``'s values can be read: not traced, or traced by grad or jvp, which know
    them, and not batched (Note [Known values])."""
    if not isinstance(t, Tensor):
        return False
    if not isinstance(t._data, jax.core.Tracer):
        return True
    values, levels = known_values(t._data)
    return values is not None and not levels


@tensor_op("cov")
def cov(input, *, correction=1, fweights=None, aweights=None):
    """``torch.cov``: ATen's composite, step by step (its graph ends in ``squeeze``)."""
    lg = _lg()
    if input.ndim > 2:
        raise RuntimeError(COV_DIMS.format(input.ndim))
    if input._dtype is D.bool_:
        raise RuntimeError(COV_BOOL)
    x = input.view(1, -1) if input.ndim < 2 else input
    n_obs = x.shape[1]
    w = None
    if fweights is not None:
        if fweights.ndim > 1:
            raise RuntimeError(COV_WEIGHT_DIMS.format("fweights", fweights.ndim))
        if fweights._dtype._kind not in "ui":
            raise RuntimeError(COV_FWEIGHTS_DTYPE.format(E.scalar_type_name(fweights._dtype)))
        if fweights.numel() != n_obs:
            raise RuntimeError(COV_WEIGHT_NUMEL.format("fweights", fweights.numel(), n_obs))
        if n_obs and _concrete(fweights) and not bool(fweights.min() >= 0):
            raise RuntimeError(COV_NEGATIVE.format("fweights"))
        w = fweights
    if aweights is not None:
        if aweights.ndim > 1:
            raise RuntimeError(COV_WEIGHT_DIMS.format("aweights", aweights.ndim))
        if not aweights._dtype.is_floating_point:
            raise RuntimeError(COV_AWEIGHTS_DTYPE.format(E.scalar_type_name(aweights._dtype)))
        if aweights.numel() != n_obs:
            raise RuntimeError(COV_WEIGHT_NUMEL.format("aweights", aweights.numel(), n_obs))
        if n_obs and _concrete(aweights) and not bool(aweights.min() >= 0):
            raise RuntimeError(COV_NEGATIVE.format("aweights"))
        w = aweights if w is None else w * aweights
    if w is None:
        w_sum = lg.tensor(n_obs, dtype=D.int64, device=x.device)
    else:
        w_sum = w.sum()
        if _concrete(w_sum) and not bool(w_sum != 0):
            raise RuntimeError(COV_ZERO_SUM)
    avg = (x if w is None else x * w).sum(1) / w_sum
    if w is not None and correction != 0:
        if aweights is None:
            norm = w_sum - correction
        else:
            from .formulas import smul

            # ``correction * tensor`` in C++: mul.Scalar (MulBackward1)
            norm = w_sum - smul((w * aweights).sum(), correction) / w_sum
    else:
        norm = w_sum - correction
    if _concrete(norm) and bool(norm <= 0):
        E.warn(COV_DOF)
        norm = lg.zeros_like(norm)
    x = x - avg.unsqueeze(1)
    xt = (x if w is None else x * w).t()
    if xt._dtype.is_complex:
        from .shape import _conj

        xt = _conj(xt)
    c = x.mm(xt)
    return lg.true_divide(c, norm).squeeze()


@tensor_op("corrcoef")
def corrcoef(input):
    """``torch.corrcoef``: ``cov`` normalized by the standard deviations, clipped to [-1, 1]."""
    if input.ndim > 2:
        raise RuntimeError(CORRCOEF_DIMS.format(input.ndim))
    c = cov(input)
    if c.ndim == 0:
        return c / c
    d = c.diagonal()
    stddev = (d.real if d.is_complex() else d).sqrt()
    c = c / stddev.view(-1, 1)
    c = c / stddev.view(1, -1)
    if c.is_complex():
        return _lg().complex(c.real.clip(-1, 1), c.imag.clip(-1, 1))
    return c.clip(-1, 1)


# --- sampling (Note [Sampling nodes]) ----------------------------------------------------------


def _sample_tensor(values, dtype: D.dtype, device, inputs=()) -> Tensor:
    """The drawn values as the operand of a sampling op; an inference tensor where all of
    ``inputs`` are, so that the op is PyTorch's kernel on inference tensors (Note [Inference
    tensors] in _storage.py: its result's version)."""
    from .. import _device as DEV

    inference = bool(inputs) and all(t._inference for t in inputs)
    data = jax.device_put(values, DEV.jax_device(device))
    return Tensor._make(data, dtype, device, inference=inference)


def _generator(device, generator):
    from .._factories import generator_for

    return generator_for(device, generator)


def _host(t: Tensor) -> np.ndarray:
    """A random op's tensor argument read on the host, where its draws are made; a traced one
    where its values are known and not batched (inside grad, jvp: Note [Known values])."""
    values, levels = known_values(t._data)
    if values is None or levels:
        if R.DRAW_CHECK[0] is not None:  # vmap's randomness error comes first
            R.DRAW_CHECK[0]()
        raise NotImplementedError(TRACED_RANDOM)
    return values


TRACED_RANDOM = (
    "leafgrad: this random op reads its tensor arguments (probabilities, rates, means) on the "
    "host, where it draws from PyTorch's generator stream, and cannot read values traced by a "
    "transform (vmap, grad, leafgrad.compile); draw outside the transform"
)


def _check_std_tensor(std: Tensor, *tensors: Tensor) -> None:
    """``normal``'s checks of a tensor ``std``, after vmap's randomness refusals (of the op's
    ``tensors`` under randomness="same": after the complex check, as PyTorch's order is)."""
    if R.DRAW_CHECK[0] is not None:  # vmap's randomness error comes first
        R.DRAW_CHECK[0]()
    if std._dtype.is_complex:
        raise RuntimeError(NORMAL_COMPLEX_STD)
    if R.DRAW_CHECK[0] is not None:
        from .. import func

        func.refuse_same_batched(tensors)
    if std.numel():
        values = known_values(std._data)[0]  # every sample's under vmap (Note [Known values])
        if values is not None and not bool(np.all(values >= 0)):
            raise RuntimeError(NORMAL_TENSOR_STD)


def _is_float_number(x) -> bool:
    return isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, bool)


@tensor_op("normal", method=False)
def normal(mean=None, std=None, size=None, *, generator=None, out=None, **options):
    """``torch.normal``: tensor mean and/or std (NormalBackward1/2/3, zero gradients), or
    numbers with a ``size`` (a new leaf); PyTorch's draws after ``manual_seed``."""
    if out is None:
        return _normal(mean, std, size, generator, options)
    from .._arg_check import _call_with_out, factory_out

    if not isinstance(out, Tensor):
        args = tuple(a for a in (mean, std, size) if a is not None)
        kwargs = {**options, "out": out}
        raise TypeError(E.invalid_arguments("normal", _NORMAL_SIGS, args, kwargs))
    if size is not None:  # numbers and a size: a factory, in out's dtype
        return factory_out("normal")(_normal_factory)(
            mean, std, size, generator, out=out, **options
        )
    # a tensor mean and a number std: PyTorch draws into out as it is (normal_, then the mean
    # added in place), where the other forms resize it
    if isinstance(mean, Tensor) and not isinstance(std, Tensor) and not options:
        shape, target = tuple(mean.shape), tuple(out.shape)
        if target != shape:
            if broadcast_shapes(shape, target) != target:  # PyTorch's error where they do not
                raise RuntimeError(
                    f"output with shape {list(target)} doesn't match the broadcast shape "
                    f"{list(broadcast_shapes(shape, target))}"
                )
            return _call_with_out(
                lambda *_: _normal_into(mean, std, target, out._dtype, generator),
                "normal",
                (mean,),
                {"out": out},
            )
    return _call_with_out(
        lambda *_: _normal(mean, std, size, generator, options), "normal", (mean, std), {"out": out}
    )


def _normal_into(mean, std, shape, dtype, generator):
    """``normal(mean, std, out=o)`` with ``mean`` broadcast into ``o``'s ``shape``: ``o``'s own
    draws, in its dtype, then the mean added."""
    std = 1.0 if std is None else float(std)
    values = R.normal(_generator(mean._device, generator), shape, dtype.np, 0.0, std)
    mean_values = np.broadcast_to(_host(mean), shape)
    return _sample_tensor(_normal_values(values, mean_values, None), dtype, mean._device)


def _normal_factory(mean, std, size, generator, **options):
    return _normal(mean, std, size, generator, options)


def _normal(mean, std, size, generator, options):
    args = (mean, std) if size is None else (mean, std, size)
    args = tuple(a for a in args if a is not None) if std is None else args
    if isinstance(mean, Tensor) and isinstance(std, Tensor) and size is None and not options:
        _check_std_tensor(std, mean, std)
        shape = broadcast_shapes(tuple(mean._data.shape), tuple(std._data.shape))
        g = _generator(mean._device, generator)

        def draw(s, m, sd):
            return _normal_values(R.normal(g, s, mean._dtype.np, 0.0, 1.0), m, sd)

        values = R.sampled(draw, shape, (mean, std), _host)  # Note [Randomness in vmap]
        if values is None:
            values = draw(shape, _host(mean), _host(std))
        sample = _sample_tensor(values, mean._dtype, mean._device, (mean, std))
        return dispatch(OPS["normal_tensor_tensor"], mean, std, sample)
    if isinstance(mean, Tensor) and (std is None or _is_float_number(std)) and size is None:
        if not options:
            std = 1.0 if std is None else float(std)
            g = _generator(mean._device, generator)
            shape = tuple(mean._data.shape)

            def draw(s, m):
                return _normal_values(R.normal(g, s, mean._dtype.np, 0.0, std), m, None)

            values = R.sampled(draw, shape, (mean,), _host)  # Note [Randomness in vmap]
            if values is None:
                values = draw(shape, _host(mean))
            sample = _sample_tensor(values, mean._dtype, mean._device, (mean,))
            return dispatch(OPS["normal_tensor_float"], mean, sample)
    if _is_float_number(mean) and isinstance(std, Tensor) and size is None and not options:
        _check_std_tensor(std, std)
        g = _generator(std._device, generator)
        shape = tuple(std._data.shape)
        m = np.asarray(float(mean), std._dtype.np)

        def draw(s, sd):
            return _normal_values(R.normal(g, s, std._dtype.np, 0.0, 1.0), m, sd)

        values = R.sampled(draw, shape, (std,), _host)  # Note [Randomness in vmap]
        if values is None:
            values = draw(shape, _host(std))
        sample = _sample_tensor(values, std._dtype, std._device, (std,))
        return dispatch(OPS["normal_float_tensor"], std, sample)
    if _is_float_number(mean) and _is_float_number(std) and size is not None:
        from .. import _device as DEV
        from .._factories import _dtype_or_default, _leaf, _size

        allowed = {"dtype", "layout", "device", "pin_memory", "requires_grad"}
        if set(options) <= allowed:
            shape = _size((size,), "normal", 3)
            dtype = _dtype_or_default(options.get("dtype"), "normal")
            device = DEV.canonical(options.get("device"))
            g = _generator(device, generator)
            values = R.sampled(lambda s: R.normal(g, s, dtype.np, float(mean), float(std)), shape)
            if values is None:
                values = R.normal(g, shape, dtype.np, float(mean), float(std))
            return _leaf(values, dtype, device, bool(options.get("requires_grad", False)))
    kwargs = dict(options)
    if generator is not None:
        kwargs["generator"] = generator
    raise TypeError(E.invalid_arguments("normal", _NORMAL_SIGS, args, kwargs))


def _bernoulli(input, p, generator):
    g = _generator(input._device, generator)
    shape = tuple(input._data.shape)
    if p is None:

        def draw(s, probs):
            return R.bernoulli_tensor(g, np.broadcast_to(probs, s), input._dtype.np)

        values = R.sampled(draw, shape, (input,), _host)  # Note [Randomness in vmap]
        if values is None:
            values = R.bernoulli_tensor(g, _host(input), input._dtype.np)
        sample = _sample_tensor(values, input._dtype, input._device, (input,))
        return dispatch(OPS["bernoulli_sample"], input, sample)
    values = R.sampled(
        lambda s, _: R.bernoulli(g, s, input._dtype.np, float(p)), shape, (input,), _host
    )
    if values is None:
        values = R.bernoulli(g, shape, input._dtype.np, float(p))
    sample = _sample_tensor(values, input._dtype, input._device, (input,))
    out = dispatch(OPS["bernoulli_p_sample"], input, sample)
    return refuse_backward(out, lambda: RuntimeError(NO_DERIVATIVE.format("bernoulli")))


@tensor_op("bernoulli", method=False)
def bernoulli(input, p=None, *, generator=None, out=None):
    """``torch.bernoulli(input)``: 1 with probability ``input`` (BernoulliBackward0, a zero
    gradient); ``bernoulli(input, p)``: probability ``p`` (its node is NotImplemented)."""
    _need_tensor(input, "bernoulli", "input", 1)
    return _bernoulli(input, p, generator)


@tensor_op("bernoulli", function=False)
def _bernoulli_method(self, p=None, *, generator=None):
    return _bernoulli(self, p, generator)


def _poisson_one(gen, lam: float) -> float:
    """ATen's ``sample_poisson``: transformed rejection (Hoermann, 1993) from 10 on, products
    of uniforms below; each uniform a ``uniform_real_distribution<double>`` draw."""
    if lam >= 10:
        slam = math.sqrt(lam)
        loglam = math.log(lam)
        b = 0.931 + 2.53 * slam
        a = -0.059 + 0.02483 * b
        invalpha = 1.1239 + 1.1328 / (b - 3.4)
        vr = 0.9277 - 3.6224 / (b - 2)
        while True:
            u = gen._uniform64(1)[0] - 0.5
            v = gen._uniform64(1)[0]
            us = 0.5 - abs(u)
            k = math.floor((2 * a / us + b) * u + lam + 0.43)
            if us >= 0.07 and v <= vr:
                return float(k)
            if k < 0 or (us < 0.013 and v > us):
                continue
            if (math.log(v) + math.log(invalpha) - math.log(a / (us * us) + b)) <= (
                -lam + k * loglam - math.lgamma(k + 1)
            ):
                return float(k)
    if lam == 0:
        return 0.0
    enlam = math.exp(-lam)
    x, prod = 0, 1.0
    while True:
        prod *= gen._uniform64(1)[0]
        if prod > enlam:
            x += 1
        else:
            return float(x)


@tensor_op("poisson", method=False)
def poisson(input, generator=None):
    """``torch.poisson``: one Poisson draw per rate, in C order (PoissonBackward0, a zero
    gradient)."""
    _need_tensor(input, "poisson", "input", 1)
    if not input._dtype.is_floating_point:
        raise _kernel_error("poisson_cpu", input._dtype)
    g = R._generator(_generator(input._device, generator))

    def draw(s, rates):
        rates = np.broadcast_to(rates, s).astype(np.float64).reshape(-1)
        drawn = []
        with g._lock:
            for lam in rates.tolist():
                if not lam >= 0:
                    raise RuntimeError(POISSON_RATE)
                drawn.append(_poisson_one(g, lam))
        return np.asarray(drawn, np.float64).reshape(s).astype(input._dtype.np)

    shape = tuple(input._data.shape)
    values = R.sampled(draw, shape, (input,), _host)  # Note [Randomness in vmap]
    if values is None:
        values = draw(shape, _host(input))
    sample = _sample_tensor(values, input._dtype, input._device, (input,))
    return dispatch(OPS["poisson_sample"], input, sample)


# --- distances ---------------------------------------------------------------------------------


@tensor_op("pdist", method=False)
def pdist(input, p=2):
    """``torch.pdist``: the p-norm distances between the rows of a matrix, upper triangle
    (PdistBackward0)."""
    _need_tensor(input, "pdist", "input", 1)
    if input._data.ndim != 2:
        raise RuntimeError(PDIST_2D.format(input._data.ndim))
    p = float(p)
    if p < 0:
        raise RuntimeError(PDIST_P)
    return dispatch(OPS["pdist"], input, p=p)


def _install_functional_aliases() -> None:
    from ..nn import functional as F

    for name in ("pairwise_distance", "cosine_similarity"):
        if name not in FUNCTIONS:
            FUNCTIONS[name] = getattr(F, name)


_install_functional_aliases()

# the gamma-family samplers build on the sampling helpers above
from . import gamma_ops  # noqa: E402, F401
