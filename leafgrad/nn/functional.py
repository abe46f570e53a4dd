"""``leafgrad.nn.functional``: activations, losses, convolutions, pooling, normalisation.

Every op is an op-table entry (``nn.*`` names, registered below) or a composite of such entries,
so each result carries PyTorch's ``grad_fn`` and ``next_functions``; ``jax.vjp`` supplies every
backward. Where PyTorch's derivative differs from the VJP of the obvious formula (ties, kinks,
clamps), the forward is written with ``jnp.where`` branches whose VJP gives PyTorch's values.
Convolutions, pooling and normalisation layers live in ``_conv_pool.py`` (re-exported at the end).
"""

from __future__ import annotations

import functools
import inspect
import math

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.scipy.special import erf

from .. import _arg_check, _autocast
from .. import _dtype as D
from .. import _errors as E
from .. import _random as R
from .. import _written_dims as written_dims
from .. import func as _func
from .._arg_check import _DROPOUT, SINGLE_SIGNATURES, _tensor_error, check_call, check_int
from .._known import known_values
from .._storage import kernel_wrote
from .._tensor import Tensor, _wrap_dim
from ..autograd import forward_ad, grad_mode
from ..autograd import saved as saved_mod
from ..ops.api import refuse_backward, refuse_complex_autograd, register_ops, tensor_op
from ..ops.dispatch import broadcast_shapes, dispatch
from ..ops.linalg_ops import ADDMM_MAT_DTYPE, ADDMM_SELF_DTYPE
from ..ops.shape import EXPAND_FEW, INDEX_RANGE, _lead
from ..ops.table import OPS, OpDef, _true_divide, promote, same

__all__ = [
    "relu",
    "relu_",
    "relu6",
    "leaky_relu",
    "elu",
    "selu",
    "celu",
    "gelu",
    "silu",
    "mish",
    "softplus",
    "softsign",
    "hardtanh",
    "hardsigmoid",
    "hardswish",
    "sigmoid",
    "tanh",
    "softmax",
    "log_softmax",
    "softmin",
    "normalize",
    "linear",
    "bilinear",
    "dropout",
    "embedding",
    "one_hot",
    "cosine_similarity",
    "pairwise_distance",
    "mse_loss",
    "l1_loss",
    "smooth_l1_loss",
    "huber_loss",
    "cross_entropy",
    "nll_loss",
    "binary_cross_entropy",
    "binary_cross_entropy_with_logits",
    "kl_div",
    "cosine_embedding_loss",
    "margin_ranking_loss",
]

# --- PyTorch's messages ------------------------------------------------------------------------
KERNEL_NOT_IMPLEMENTED = E.KERNEL_DTYPE
NORM_DTYPE = "linalg.vector_norm: Expected a floating point or complex tensor as input. Got {}"
RELU_BOOL = "Boolean inputs not supported for relu"
HARDTANH_BOOL = "Bool inputs not supported for hardtanh"
HARDTANH_MIN_MAX = "min_val cannot be greater than max_val"
CELU_ALPHA = "ZeroDivisionError: alpha cannot be 0 for CELU"
GELU_APPROXIMATE = "approximate argument must be either none or tanh."
IMPLICIT_DIM = (
    "Implicit dimension choice for {} has been deprecated. Change the call to include dim=X as "
    "an argument."
)
REDUCTION_INVALID = "{} is not a valid value for reduction"
TARGET_SIZE_WARNING = (
    "Using a target size ({}) that is different to the input size ({}). This will likely lead to "
    "incorrect results due to broadcasting. Please ensure they have the same size."
)
NOT_DIFFERENTIABLE = (
    "The function '{}' is not differentiable with respect to argument '{}'. This input cannot "
    "have requires_grad True."
)
LINEAR_0D = "both arguments to linear need to be at least 1D, but they are {}D and {}D"
EXPAND_SIZE = (
    "The expanded size of the tensor ({}) must match the existing size ({}) at non-singleton "
    "dimension {}.  Target sizes: [{}].  Tensor sizes: [{}]"
)
DROPOUT_P = "dropout probability has to be between 0 and 1, but got {}"
EMBEDDING_INDICES = (
    "Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, "
    "Int; but got {} instead (while checking arguments for embedding)"
)
EMBEDDING_WEIGHT_2D = "'weight' must be 2-D"
PADDING_IDX = "Padding_idx must be within num_embeddings"
ONE_HOT_DTYPE = "one_hot is only applicable to index tensor of type LongTensor."
ONE_HOT_EMPTY = "Can not infer total number of classes from empty tensor."
ONE_HOT_NEGATIVE = "Class values must be non-negative."
ONE_HOT_LARGE = "Class values must be smaller than num_classes."
BATCH_MISMATCH = "Expected input batch_size ({}) to match target batch_size ({})."
NLL_TARGET_DTYPE = "expected target dtype to be Long or Byte, but got {}"
NLL_WEIGHT = (
    "weight tensor should be defined either for all {} classes or no classes but got weight "
    "tensor of shape: [{}]"
)
NLL_TARGET_SIZE = "Expected target size {}, got {}"
NLL2D_TARGET_DIM = (
    "only batches of spatial targets supported (3D tensors) but got targets of dimension: {}"
)
NLL2D_SIZE = "size mismatch (got input: {} , target: {}"
NLL_1D_TARGET = "For 1D input, 1D target must have size 1, but got target size: {}"
SCALAR_TYPE = "expected scalar type {} but found {}"
PROB_TARGET_DTYPE = "Expected floating point type for target with class probabilities, got {}"
LABEL_SMOOTHING = "label_smoothing must be between 0.0 and 1.0. Got: {}"
BCE_SIZE = (
    "Using a target size ({}) that is different to the input size ({}) is deprecated. Please "
    "ensure they have the same size."
)
BCE_DTYPE = "Found dtype {} but expected {}"
BCE_LOGITS_SIZE = "Target size ({}) must be the same as input size ({})"
HUBER_DELTA = "huber_loss does not support non-positive values for delta."
SMOOTH_L1_BETA = "smooth_l1_loss does not support negative values for beta."
KL_MEAN_WARNING = (
    "reduction: 'mean' divides the total loss by both the batch size and the support size."
    "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
    "'mean' will be changed to behave the same as 'batchmean' in the next major release."
)
MARGIN_RANKING_DIMS = (
    "margin_ranking_loss : All input tensors should have same dimension but got sizes: "
    "input1: {}, input2: {}, target: {} "
)
TODO = "leafgrad: nn.functional.{} is not implemented yet ({})."
BILINEAR_DTYPE = "All tensors must have the same dtype, got {}"
BILINEAR_NDIM = "bilinear(): input dimensions do not match: got {} and {}"
BILINEAR_BATCH = "bilinear(): input batch dimensions do not match at dim {}: got {} and {}"
BILINEAR_SIZE = "bilinear(): input{} size does not match weight size: got {} but expected {}"
BILINEAR_BIAS = "bilinear(): bias size does not match weight size: got {} but expected {}"


# --- dtype rules -------------------------------------------------------------------------------


def _float_kernel(kernel: str, complex: bool = False):
    """Floating inputs only (and complex ones with ``complex``), else AT_DISPATCH's
    NotImplementedError naming ``kernel``."""

    def rule(meta, static):
        dt = meta[0][0]
        if not (dt.is_floating_point or complex and dt.is_complex):
            raise NotImplementedError(KERNEL_NOT_IMPLEMENTED.format(kernel, E.scalar_type_name(dt)))
        return (None,) * len(meta), dt

    return rule


def _float_kernel_pair(kernel: str, second=None):
    """Two floating operands of one dtype (the second's result dtype ``second(dtype)``, when
    given): AT_DISPATCH's refusal naming ``kernel``, then the kernel's scalar-type check."""

    def rule(meta, static):
        dt, other = meta[0][0], meta[1][0]
        if not dt.is_floating_point:
            raise NotImplementedError(KERNEL_NOT_IMPLEMENTED.format(kernel, E.scalar_type_name(dt)))
        if other != dt:
            raise RuntimeError(
                f"expected scalar type {E.scalar_type_name(dt)} but found "
                f"{E.scalar_type_name(other)}"
            )
        return (None,) * len(meta), dt if second is None else (dt, second(dt))

    return rule


def _softmax_kernel(name: str):
    """Floating inputs only; PyTorch's CPU kernel for the last dimension has its own name."""

    def rule(meta, static):
        dt, ndim = meta[0]
        if not dt.is_floating_point:
            last = static["dim"] == max(ndim, 1) - 1
            kernel = f"{name}_lastdim_kernel_impl" if last else f"{name}_kernel_impl"
            raise NotImplementedError(KERNEL_NOT_IMPLEMENTED.format(kernel, E.scalar_type_name(dt)))
        return (None,) * len(meta), dt

    return rule


def _no_bool(message: str):
    def rule(meta, static):
        if meta[0][0] is D.bool_:
            raise RuntimeError(message)
        return (None,) * len(meta), meta[0][0]

    return rule


def _promote_float_kernel(kernel: str):
    """Promote the tensors; the common dtype must be floating (``mse_cpu`` and friends)."""

    def rule(meta, static):
        cast, rt = promote(meta, static)
        if not rt.is_floating_point:
            raise NotImplementedError(KERNEL_NOT_IMPLEMENTED.format(kernel, E.scalar_type_name(rt)))
        return cast, rt

    return rule


def _huber_rule(meta, static):
    """ATen's huber_loss writes into ``empty_like(input)``: the common dtype, which must be
    floating for ``huber_cpu``, is cast back into the input's."""
    common = D.result_type_of([meta[0], meta[1]])
    if not D.can_cast(common, meta[0][0]):
        n = E.scalar_type_name
        raise RuntimeError(E.RESULT_CAST.format(n(common), n(meta[0][0])))
    if not common.is_floating_point:
        raise NotImplementedError(
            KERNEL_NOT_IMPLEMENTED.format("huber_cpu", E.scalar_type_name(common))
        )
    return (common, common), meta[0][0]


def _first(meta, static):
    """Result has the first operand's dtype; other operands are cast to it (weights, targets)."""
    dt = meta[0][0]
    return tuple(None if m is None else dt for m in meta), dt


# --- forwards ----------------------------------------------------------------------------------


def _c(value, x):
    """A Python number as a constant of ``x``'s dtype (computations stay in that dtype)."""
    return jnp.asarray(value, x.dtype)


def _tdiv(a, b):
    # Note [True division] (ops/reduce.py): a full-shaped divisor behind a barrier stays a true
    # division on XLA's CPU backend, as PyTorch's kernels divide.
    b = jnp.broadcast_to(jnp.asarray(b, a.dtype), a.shape)
    return a / lax.optimization_barrier(b)


def _relu(x):
    # x <= 0 selects 0; NaN passes through.
    return jnp.where(x <= 0, jnp.zeros_like(x), x)


# Backwards from the result (Note [Saved results] in ops/table.py), PyTorch's formulas.


def _relu_backward(result, grad):
    # threshold_backward(grad, result, 0): no gradient where the result is 0 (at 0 too)
    return jnp.where(result <= 0, jnp.zeros_like(grad), grad)


def _sum_dim(x, dim):
    return x if x.ndim == 0 else jnp.sum(x, axis=dim, keepdims=True)


def _softmax_backward(result, grad, dim):
    # _softmax_backward_data: result * (grad - sum(grad * result))
    return result * (grad - _sum_dim(grad * result, dim))


def _log_softmax_backward(result, grad, dim):
    # _log_softmax_backward_data: grad - exp(result) * sum(grad)
    return grad - jnp.exp(result) * _sum_dim(grad, dim)


def _hardtanh(x, min_val, max_val):
    # PyTorch's hardtanh_backward: zero gradient at and beyond the bounds. ATen's hardtanh is a
    # clamp: the upper bound wins when the bounds cross (hardtanh_).
    lo, hi = _c(min_val, x), _c(max_val, x)
    low = jnp.where(x <= lo, lo, x)
    return jnp.where(low >= hi, hi, low)


def _leaky_relu(x, negative_slope):
    return jnp.where(x > 0, x, x * _c(negative_slope, x))


def _elu_value(x, alpha, scale, input_scale):
    # PyTorch takes the negative branch at x <= 0 (gradient alpha * scale * input_scale at 0).
    neg = jnp.expm1(x * _c(input_scale, x)) * (_c(alpha, x) * _c(scale, x))
    return jnp.where(x <= 0, neg, x * _c(scale, x))


@functools.partial(jax.custom_jvp, nondiff_argnums=(1, 2, 3, 4))
def _elu_from_result(x, alpha, scale, input_scale, grad_input_scale):
    return _elu_value(x, alpha, scale, input_scale)


@_elu_from_result.defjvp
def _elu_result_jvp(alpha, scale, input_scale, grad_input_scale, primals, tangents):
    # the in-place nodes (EluBackward1, CeluBackward1) read their result: elu_backward(...,
    # is_result=true), whose kernel computes grad * input_scale * (result + alpha * scale) at
    # result <= 0, grad * scale above
    (x,), (t,) = primals, tangents
    out = _elu_from_result(x, alpha, scale, input_scale, grad_input_scale)
    negcoef = _c(alpha, x) * _c(scale, x)
    neg = t * _c(grad_input_scale, x) * (out + negcoef)
    return out, jnp.where(out <= 0, neg, t * _c(scale, x))


@functools.partial(jax.custom_jvp, nondiff_argnums=(1, 2, 3))
def _elu_of_input(x, alpha, scale, input_scale):
    return _elu_value(x, alpha, scale, input_scale)


@_elu_of_input.defjvp
def _elu_input_jvp(alpha, scale, input_scale, primals, tangents):
    # Note [Formula tangents] in ops/table.py; elu_backward(..., is_result=false): grad *
    # input_scale * (alpha * scale) * exp(x * input_scale) at x <= 0, grad * scale above (JAX's
    # expm1 derivative, expm1(x) + 1, is 0 below about -37). The tangent multiplies in reverse,
    # so that its transpose takes ATen's order; the unused branch's exp stays finite.
    (x,), (t,) = primals, tangents
    out = _elu_of_input(x, alpha, scale, input_scale)
    negipt, negcoef = _c(input_scale, x), _c(alpha, x) * _c(scale, x)
    neg = x <= 0
    e = jnp.exp(jnp.where(neg, x, jnp.zeros_like(x)) * negipt)
    return out, jnp.where(neg, t * e * negcoef * negipt, t * _c(scale, x))


def _elu(x, alpha, scale, input_scale, from_result=False):
    if from_result:
        return _elu_from_result(x, alpha, scale, input_scale, input_scale)
    return _elu_of_input(x, alpha, scale, input_scale)


@functools.partial(jax.custom_jvp, nondiff_argnums=(1, 2, 3))
def _celu_value(x, alpha, input_scale, grad_input_scale):
    return _elu_value(x, alpha, 1.0, input_scale)


@_celu_value.defjvp
def _celu_jvp(alpha, input_scale, grad_input_scale, primals, tangents):
    # PyTorch's formulas: elu_backward(grad, alpha, 1, 1.0 / alpha.toFloat(), is_result, ...),
    # the input scale from alpha rounded to float (the forward's is 1 / alpha in double); in
    # ATen's order as _elu_input_jvp, whose unused branch's exp stays finite
    (x,), (t,) = primals, tangents
    out = _celu_value(x, alpha, input_scale, grad_input_scale)
    s, a = _c(grad_input_scale, x), _c(alpha, x)
    neg = x <= 0
    e = jnp.exp(jnp.where(neg, x, jnp.zeros_like(x)) * s)
    return out, jnp.where(neg, t * e * a * s, t)


def _celu(x, alpha, scale, input_scale, grad_input_scale, from_result=False):
    if from_result:  # CeluBackward1 reads its result, as EluBackward1
        return _elu_from_result(x, alpha, 1.0, input_scale, grad_input_scale)
    return _celu_value(x, alpha, input_scale, grad_input_scale)


def _gelu(x, approximate, onednn=False):
    return _gelu_kernel(x, approximate, onednn)


@functools.partial(jax.custom_jvp, nondiff_argnums=(1, 2))
def _gelu_kernel(x, approximate, onednn):
    if approximate == "tanh":
        inner = _c(math.sqrt(2 / math.pi), x) * (x + _c(0.044715, x) * x * x * x)
        return _c(0.5, x) * x * (1 + jnp.tanh(inner))
    out = x * _c(0.5, x) * (1 + erf(x * _c(math.sqrt(0.5), x)))
    if onednn:  # Note [GELU at infinity]
        out = jnp.where(x == jnp.inf, jnp.asarray(jnp.nan, out.dtype), out)
    return out


@_gelu_kernel.defjvp
def _gelu_jvp(approximate, onednn, primals, tangents):
    # Note [Formula tangents] in ops/table.py: ATen's GeluBackwardKernelImpl, ``dy * slope``
    (x,), (t,) = primals, tangents
    half = _c(0.5, x)
    if approximate == "tanh":
        beta, kappa = _c(math.sqrt(2) * (2 / math.sqrt(math.pi)) * 0.5, x), _c(0.044715, x)
        x_sq = x * x
        tanh_inner = jnp.tanh(beta * (x + kappa * (x_sq * x)))
        left_derivative = half * (1 + tanh_inner)
        inner_derivative = beta * (1 + _c(3, x) * kappa * x_sq)
        right_derivative = half * x * (1 - tanh_inner * tanh_inner) * inner_derivative
        slope = left_derivative + right_derivative
    else:
        beta = _c((2 / math.sqrt(math.pi)) * math.sqrt(0.5) * 0.5, x)
        cdf = half * (1 + erf(x * _c(math.sqrt(0.5), x)))
        pdf = beta * jnp.exp(x * x * _c(-0.5, x))
        slope = cdf + x * pdf
    return _gelu_kernel(x, approximate, onednn), t * slope


def _silu(x):
    if jnp.iscomplexobj(x):
        return x / (1 + jnp.exp(-x))
    return _silu_real(x)


@jax.custom_jvp
def _silu_real(x):
    return x / (1 + jnp.exp(-x))


@_silu_real.defjvp
def _silu_jvp(primals, tangents):
    # Note [Formula tangents] in ops/table.py: ATen's silu_backward kernel, ``dy * sigmoid * (1 +
    # x * (1 - sigmoid))``; the tangent multiplies in the other order, so that its transpose
    # takes ``dy * sigmoid`` first
    (x,), (t,) = primals, tangents
    sigmoid = 1 / (1 + jnp.exp(-x))
    return _silu_real(x), t * (1 + x * (1 - sigmoid)) * sigmoid


def _mish(x):
    # softplus via logaddexp: its VJP stays finite where exp(x) overflows.
    return x * jnp.tanh(jnp.logaddexp(x, jnp.zeros_like(x)))


def _softplus(x, beta, threshold):
    return _softplus_kernel(x, beta, threshold)


@functools.partial(jax.custom_jvp, nondiff_argnums=(1, 2))
def _softplus_kernel(x, beta, threshold):
    xb = x * _c(beta, x)
    linear = xb > _c(threshold, x)
    safe = jnp.where(linear, jnp.zeros_like(xb), xb)  # no overflow in the unused branch
    return jnp.where(linear, x, _tdiv(jnp.log1p(jnp.exp(safe)), beta))


@_softplus_kernel.defjvp
def _softplus_jvp(beta, threshold, primals, tangents):
    # Note [Formula tangents] in ops/table.py; ATen's softplus_backward: z = exp(x * beta),
    # grad * z / (z + 1), grad where x * beta > threshold. The tangent divides first, so that
    # its transpose multiplies first; the unused branch's exp stays finite.
    (x,), (t,) = primals, tangents
    xb = x * _c(beta, x)
    linear = xb > _c(threshold, x)
    z = jnp.exp(jnp.where(linear, jnp.zeros_like(xb), xb))
    return _softplus_kernel(x, beta, threshold), jnp.where(linear, t, t / (z + 1) * z)


@jax.custom_jvp
def _hardsigmoid(x):
    mid = _tdiv(x + _c(3, x), 6)
    return jnp.where(x <= -3, jnp.zeros_like(x), jnp.where(x >= 3, jnp.ones_like(x), mid))


@_hardsigmoid.defjvp
def _hardsigmoid_jvp(primals, tangents):
    # Note [Formula tangents] in ops/table.py; ATen's hardsigmoid_backward: grad * (1.0f / 6.0f)
    # (a float constant, also for double) strictly inside (-3, 3), zero elsewhere (a NaN grad too)
    (x,), (t,) = primals, tangents
    inside = (x > -3) & (x < 3)
    return _hardsigmoid(x), jnp.where(inside, t * _c(np.float32(1.0) / np.float32(6.0), x), 0)


@jax.custom_jvp
def _hardswish(x):
    # ATen's kernel: x * min(max(x + 3, 0), 6) / 6
    return _tdiv(x * jnp.clip(x + _c(3, x), _c(0, x), _c(6, x)), 6)


@_hardswish.defjvp
def _hardswish_jvp(primals, tangents):
    # ATen's hardswish_backward: 0 up to -3, grad * (x / 3 + 0.5) strictly inside (-3, 3),
    # grad from 3 on. A NaN input: NaN in the kernel's vectorized loop (whole blocks of two
    # 512-bit vectors), grad in its scalar tail (measured; the half types, whose blocks are 64
    # elements, reach this in float: Note [Half types in float])
    (x,), (t,) = primals, tangents
    block = 128 // x.dtype.itemsize
    flat = lax.broadcasted_iota(jnp.int32, (max(x.size, 1),), 0)[: x.size].reshape(x.shape)
    vectorized = jnp.isnan(x) & (flat < x.size // block * block)
    inside = (x > -3) & (x < 3) | vectorized
    # the slope is 0 outside: the transposed select multiplies it by zeros there (inf * 0)
    slope = jnp.where(inside, _tdiv(x, 3) + _c(0.5, x), 0)
    return _hardswish(x), jnp.where(x <= -3, 0, jnp.where(inside, t * slope, t))


def _softmax(x, dim):
    if x.ndim == 0:
        return _softmax(x[None], 0)[0]
    m = lax.stop_gradient(jnp.max(x, axis=dim, keepdims=True)) if x.size else x
    e = jnp.exp(x - m)
    return e / jnp.sum(e, axis=dim, keepdims=True)


def _safe_softmax(x, dim):
    """``torch._safe_softmax``: softmax, with zeros for rows that are all ``-inf``."""
    out = _softmax(x, dim)
    if x.ndim == 0:
        return out
    dead = jnp.all(x == -jnp.inf, axis=dim, keepdims=True)
    return jnp.where(dead, jnp.zeros((), out.dtype), out)


def _log_softmax(x, dim):
    if x.ndim == 0:
        return _log_softmax(x[None], 0)[0]
    half = x.dtype in D.HALF_ARRAY_TYPES
    f = x.astype(jnp.float32) if half else x
    if half and math.prod(x.shape[dim % x.ndim + 1 :]) != 1:
        half = False  # over an inner dim PyTorch's kernel keeps everything in float
    m = lax.stop_gradient(jnp.max(f, axis=dim, keepdims=True)) if x.size else f
    s = f - m
    total = jnp.sum(jnp.exp(s), axis=dim, keepdims=True)
    if not half:
        return s - jnp.log(total)
    # over the innermost dim, PyTorch's kernel for half types keeps the sum and its log in the
    # half type, then computes ``x - max - log(sum)`` in float and rounds once
    total = total.astype(x.dtype).astype(jnp.float32)
    return (s - jnp.log(total).astype(x.dtype).astype(jnp.float32)).astype(x.dtype)


def _norm_rule(meta, static):
    """A norm of a complex tensor is real."""
    return (None,), meta[0][0].to_real()


def _safe_norm(x, p, dim, keepdim):
    """The p-norm over ``dim`` with PyTorch's norm_backward: linalg.vector_norm's kernel (zero
    where the norm is zero, and at zero elements for p < 1)."""
    from ..ops.linalg_ops import _vector_norm

    return _vector_norm(x, float(p), dim, keepdim)


def _clamp_min(x, min):
    # PyTorch's clamp_min backward passes the gradient where x >= min (NaN gets none).
    m = _c(min, x)
    return jnp.where(x >= m, x, jnp.where(x < m, m, lax.stop_gradient(x)))


def _addmm_forward(bias, m1, m2):
    return bias + m1 @ m2


def _embedding(weight, indices, padding_idx, scale_grad_by_freq=False):
    rows = jnp.take(weight, indices, axis=0)
    if scale_grad_by_freq:  # Note [Embedding bag gradients] in _embedding_bag.py
        from ._embedding_bag import scale_by_frequency

        flat = indices.reshape(-1)
        counts = jnp.zeros((weight.shape[0],), weight.dtype).at[flat].add(1)
        rows = scale_by_frequency(rows, counts[indices])
    if padding_idx is None:
        return rows
    # The padding row gets no gradient (PyTorch's embedding_backward skips it).
    pad = (indices == padding_idx)[..., None]
    return jnp.where(pad, lax.stop_gradient(rows), rows)


def _reduce(loss, reduction):
    from ..ops.reduce import torch_mean, torch_sum

    if reduction == "mean":
        return torch_mean(loss, None, False)
    if reduction == "sum":
        return torch_sum(loss, None, False)
    return loss


# Note [Target gradients of even losses]: mse, smooth_l1 and huber are even functions of
# ``input - target``, and PyTorch computes the target's gradient with the input's formula on
# ``target - input`` (``mse_loss_backward(grad, target, self)``): where the two are equal that is
# +0, where the chain rule through ``input - target`` negates +0 into -0. ``_even_loss`` gives
# the target that derivative; the input's is the chain rule's, as before.
def _even_loss(f, a, b):
    """``f(a - b)``, elementwise, whose derivative in ``b`` is ``f'(b - a)``."""

    @jax.custom_jvp
    def loss(a, b):
        return f(a - b)

    @loss.defjvp
    def loss_jvp(primals, tangents):
        a, b = primals
        ta, tb = tangents
        out, da = jax.jvp(f, (a - b,), (ta,))
        _, db = jax.jvp(f, (b - a,), (tb,))
        return out, da + db

    return loss(a, b)


def _mse(a, b, reduction):
    return _reduce(_even_loss(lambda d: d * d, a, b), reduction)


def _smooth_l1(a, b, reduction, beta):
    # PyTorch's backward: x / beta inside (-beta, beta), sign(x) outside.
    def elementwise(d):
        z = d * lax.stop_gradient(jnp.sign(d))
        quad = _tdiv(_c(0.5, z) * z * z, beta)
        return jnp.where(z < _c(beta, z), quad, z - _c(0.5 * beta, z))

    return _reduce(_even_loss(elementwise, a, b), reduction)


def _huber(a, b, reduction, delta):
    def elementwise(d):
        z = d * lax.stop_gradient(jnp.sign(d))
        dl = _c(delta, z)
        return jnp.where(z < dl, _c(0.5, z) * z * z, dl * (z - _c(0.5, z) * dl))

    return _reduce(_even_loss(elementwise, a, b), reduction)


def _nll(x, target, weight, reduction, ignore_index):
    """nll_loss of (N, C) or (C,) log-probabilities, or (N, C, H, W) for nll_loss2d."""
    if x.ndim == 1:
        x, target = x[None], target[None]
        one = True
    else:
        one = False
    valid = target != ignore_index
    t = jnp.where(valid, target, 0)
    picked = jnp.take_along_axis(x, t[:, None].astype(jnp.int64), axis=1)[:, 0]
    w = jnp.ones_like(picked) if weight is None else jnp.take(weight, t, axis=0)
    w = jnp.where(valid, w, jnp.zeros_like(w))
    loss = -(picked * w)
    if reduction == "none":
        return loss[0] if one else loss
    total = jnp.sum(loss)
    if reduction == "sum":
        return total
    return total / jnp.sum(w)


def _bce(x, t, weight, reduction):
    # PyTorch clamps each log at -100; the logs of 0 are taken of 1 so that the unused branch
    # of the where has a finite derivative.
    log1m = jnp.log1p(-jnp.where(x < 1, x, jnp.zeros_like(x)))
    logx = jnp.log(jnp.where(x > 0, x, jnp.ones_like(x)))
    floor = _c(-100, x)
    log1m = jnp.where((x < 1) & (log1m > floor), log1m, floor)
    logx = jnp.where((x > 0) & (logx > floor), logx, floor)
    loss = (t - 1) * log1m - t * logx
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


# Note [BCE with logits gradients]: the loss's value is PyTorch's forward (log_sigmoid as
# ``min(x, 0) - log1p(exp(-|x|))``), but the VJP of that expression is not PyTorch's formula:
# at x = 0 the subgradients of min and abs give 1 for log_sigmoid' (PyTorch: sigmoid(0) = 0.5).
# The kernel is a custom JVP whose tangent is ``binary_cross_entropy_with_logits_backward``
# (``(sigmoid(x) - t) * grad * weight / numel``) and its target twin, written so that the
# transpose applies the factors in PyTorch's order.
def _bce_logits_rule(meta, static):
    """ATen's ``binary_cross_entropy_with_logits``: ``log_sigmoid(input)`` (floating inputs
    only), times ``(pos_weight - 1).mul(target).add_(1)`` in place, then ``(1 - target)
    .mul_(input).sub_(...)`` and ``.mul_(weight)``: the loss has ``1 - target``'s dtype, and each
    in-place step refuses a result type its tensor cannot hold. leafgrad computes in the
    promoted type of all operands and rounds the loss once."""
    x, t, weight, pos_weight = meta
    if not x[0].is_floating_point:
        raise NotImplementedError(
            E.KERNEL_DTYPE.format("log_sigmoid_cpu", E.scalar_type_name(x[0]))
        )

    def in_place(into, other) -> None:
        found = D.result_type_of([into, other])
        if not D.can_cast(found, into[0]):
            raise RuntimeError(
                E.RESULT_CAST.format(E.scalar_type_name(found), E.scalar_type_name(into[0]))
            )

    if pos_weight is not None:
        if pos_weight[0] is D.bool_:
            raise RuntimeError(E.SUB_BOOL_SCALAR)
        log_weight = (D.result_type_of([pos_weight, t]), max(pos_weight[1], t[1]))
        in_place(x, log_weight)
    if t[0] is D.bool_:
        raise RuntimeError(E.SUB_BOOL)
    loss = (t[0], t[1])
    in_place(loss, x)
    if weight is not None:
        in_place(loss, weight)
    compute = D.result_type_of([m for m in meta if m is not None])
    return tuple(None if m is None else compute for m in meta), t[0]


@functools.partial(jax.custom_jvp, nondiff_argnums=(4,))
def _bce_logits(x, t, weight, pos_weight, reduction):
    # log_sigmoid as PyTorch computes it: min(x, 0) - log1p(exp(-|x|)).
    log_sig = jnp.minimum(x, jnp.zeros_like(x)) - jnp.log1p(jnp.exp(-jnp.abs(x)))
    if pos_weight is not None:
        log_sig = log_sig * ((pos_weight - 1) * t + 1)
    loss = (1 - t) * x - log_sig
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


@_bce_logits.defjvp
def _bce_logits_jvp(reduction, primals, tangents):
    x, t, weight, pos_weight = primals
    tx, tt = tangents[0], tangents[1]
    out = _bce_logits(x, t, weight, pos_weight, reduction)
    shape = jnp.broadcast_shapes(x.shape, t.shape)
    if pos_weight is not None:
        pt = pos_weight * t
        cx = (pt + 1 - t) * jax.nn.sigmoid(x) - pt
        ct = _log_sigmoid_value(-x) - _log_sigmoid_value(x) * pos_weight
    else:
        cx, ct = jax.nn.sigmoid(x) - t, -x
    n = math.prod(shape)

    def part(c, tangent):
        # the transpose of c * (w * (tangent / n)) is ((c * g) * w) / n
        if reduction == "mean":  # a true division (Note [True division] in ops/reduce.py)
            tangent = _true_divide(tangent, jnp.asarray(n, tangent.dtype))
        if weight is not None:
            tangent = weight * tangent
        return jnp.broadcast_to(c * tangent, shape)

    dot = part(cx, jnp.broadcast_to(tx, shape)) + part(ct, jnp.broadcast_to(tt, shape))
    return out, dot if reduction == "none" else jnp.sum(dot)


def _log_sigmoid_value(x):
    return jnp.minimum(x, jnp.zeros_like(x)) - jnp.log1p(jnp.exp(-jnp.abs(x)))


def _trilinear(i1, i2, i3, expand1, expand2, expand3, sumdim):
    """ATen's ``_trilinear``: each input unsqueezed at its ``expand`` dims, the three multiplied
    (broadcasting) and summed over ``sumdim``; one einsum over the non-expanded dims."""
    n = i1.ndim + len(expand1)
    letters = "abcdefghijklmnopqrstuvwxyz"

    def spec(expand):
        return "".join(letters[d] for d in range(n) if d not in expand)

    out = "".join(letters[d] for d in range(n) if d not in sumdim)
    subs = f"{spec(expand1)},{spec(expand2)},{spec(expand3)}->{out}"
    return jnp.einsum(subs, i1, i2, i3, precision=lax.Precision.HIGHEST)


_SAVES_SELF = {"self": ("self",)}
_SAVES_RESULT = {"self": ("result",)}


def _unary(name, fwd, grad_fn, rule, saves=_SAVES_SELF, result_vjp=None):
    return OpDef("nn." + name, fwd, grad_fn, ("self",), rule, saves=saves, result_vjp=result_vjp)


register_ops(
    _unary("relu", _relu, "ReluBackward0", _no_bool(RELU_BOOL), _SAVES_RESULT, _relu_backward),
    _unary("hardtanh", _hardtanh, "HardtanhBackward0", _no_bool(HARDTANH_BOOL)),
    _unary("leaky_relu", _leaky_relu, "LeakyReluBackward0", _float_kernel("leaky_relu_cpu")),
    _unary("elu", _elu, "EluBackward0", _float_kernel("elu_cpu")),
    _unary("celu", _celu, "CeluBackward0", _float_kernel("elu_cpu")),
    _unary("gelu", _gelu, "GeluBackward0", _float_kernel("GeluKernelImpl")),
    _unary("silu", _silu, "SiluBackward0", _float_kernel("silu_cpu", complex=True)),
    _unary("mish", _mish, "MishBackward0", _float_kernel("mish_cpu")),
    _unary("softplus", _softplus, "SoftplusBackward0", _float_kernel("softplus_cpu")),
    _unary(
        "hardsigmoid",
        _hardsigmoid,
        "HardsigmoidBackward0",
        _float_kernel("hardsigmoid_cpu"),
    ),
    _unary("hardswish", _hardswish, "HardswishBackward0", _float_kernel("hardswish_cpu")),
    _unary(
        "softmax",
        _softmax,
        "SoftmaxBackward0",
        _softmax_kernel("softmax"),
        _SAVES_RESULT,
        _softmax_backward,
    ),
    _unary(
        "safe_softmax",
        _safe_softmax,
        "SafeSoftmaxBackward0",
        _softmax_kernel("softmax"),
        _SAVES_RESULT,
        _softmax_backward,
    ),
    _unary(
        "log_softmax",
        _log_softmax,
        "LogSoftmaxBackward0",
        _softmax_kernel("log_softmax"),
        _SAVES_RESULT,
        _log_softmax_backward,
    ),
    OpDef(
        "nn.vector_norm",
        lambda x, p, dim, keepdim: _safe_norm(x, p, dim, keepdim),
        "LinalgVectorNormBackward0",
        ("self",),
        _norm_rule,
        saves={"self": ("self", "result")},
    ),
    OpDef(
        "nn.norm_dim",
        lambda x, p, dim, keepdim: _safe_norm(x, p, dim, keepdim),
        "NormBackward1",
        ("self",),
        _norm_rule,
        saves={"self": ("self", "result")},
    ),
    # ATen's ``norm(self, p)`` without dims (``Tensor::norm`` in C++: ``norm_except_dim``'s)
    OpDef(
        "nn.norm_all",
        lambda x, p: _safe_norm(x, p, None, False),
        "NormBackward0",
        ("self",),
        _norm_rule,
        saves={"self": ("self", "result")},
    ),
    OpDef("nn.clamp_min", _clamp_min, "ClampMinBackward0", ("self",), same, saves=_SAVES_SELF),
    # F.linear's products with ``weight.t()``: mat2 is the weight (Note [Views inside ops])
    OpDef(
        "nn.addmm",
        _addmm_forward,
        "AddmmBackward0",
        ("self", "mat1", "mat2"),
        promote,
        saves={"mat1": ("mat2",), "mat2": ("mat1",)},
        inner_views={"mat2": "t"},
    ),
    OpDef(
        "nn.mm",
        jnp.matmul,
        "MmBackward0",
        ("self", "mat2"),
        OPS["mm"].dtypes,
        saves={"self": ("mat2",), "mat2": ("self",)},
        inner_views={"mat2": "t"},
    ),
    # Scalar overloads that ATen calls internally (Python's operators record the Tensor ones).
    OpDef(
        "nn.add_scalar",
        lambda x, other: x + other,
        "AddBackward1",
        ("self", "other"),
        promote,
        edges=("self",),
    ),
    OpDef(
        "nn.mul_scalar",
        lambda x, other: x * other,
        "MulBackward1",
        ("self", "other"),
        promote,
        edges=("self",),
    ),
    OpDef(
        "nn.div_scalar",
        lambda x, other: _tdiv(x, other),
        "DivBackward1",
        ("self", "other"),
        promote,
        edges=("self",),
    ),
    *(
        OpDef(
            name,
            fwd,
            "EmbeddingBackward0",
            ("weight", "indices"),
            same,
            edges=("weight",),
            saves={"weight": ("indices",)},
        )
        for name, fwd in (
            ("nn.embedding", _embedding),
            ("nn.embedding_freq", functools.partial(_embedding, scale_grad_by_freq=True)),
        )
    ),
    OpDef(
        "nn.mse_loss",
        _mse,
        "MseLossBackward0",
        ("self", "target"),
        _promote_float_kernel("mse_cpu"),
        saves={"self": ("self", "target"), "target": ("self", "target")},
    ),
    OpDef(
        "nn.smooth_l1_loss",
        _smooth_l1,
        "SmoothL1LossBackward0",
        ("self", "target"),
        _promote_float_kernel("smooth_l1_cpu"),
        saves={"self": ("self", "target"), "target": ("self", "target")},
    ),
    OpDef(
        "nn.huber_loss",
        _huber,
        "HuberLossBackward0",
        ("self", "target"),
        _huber_rule,
        saves={"self": ("self", "target"), "target": ("self", "target")},
    ),
    *[
        OpDef(
            name,
            _nll,
            node,
            ("self", "target", "weight"),
            _float_kernel("nll_loss_out_frame"),
            edges=("self",),
            saves={"self": ("self", "target", "weight")},
        )
        for name, node in [
            ("nn.nll_loss", "NllLossBackward0"),
            ("nn.nll_loss2d", "NllLoss2DBackward0"),
        ]
    ],
    OpDef(
        "nn.binary_cross_entropy",
        _bce,
        "BinaryCrossEntropyBackward0",
        ("self", "target", "weight"),
        _float_kernel("binary_cross_entropy"),
        edges=("self", "target"),
        saves={"self": ("self", "target", "weight"), "target": ("self", "target", "weight")},
    ),
    OpDef(
        "nn.bce_with_logits",
        _bce_logits,
        "BinaryCrossEntropyWithLogitsBackward0",
        ("self", "target", "weight", "pos_weight"),
        _bce_logits_rule,
        edges=("self", "target"),
        saves={
            "self": ("self", "target", "weight", "pos_weight"),
            "target": ("self", "target", "weight", "pos_weight"),
        },
    ),
    OpDef(
        "nn.trilinear",
        _trilinear,
        "TrilinearBackward0",
        ("i1", "i2", "i3"),
        same,
        # derivatives.yaml: each input's gradient needs the other two (wrap_opt_if).
        saves={"i1": ("i2", "i3"), "i2": ("i1", "i3"), "i3": ("i1", "i2")},
    ),
)


# --- argument helpers --------------------------------------------------------------------------


def _op(name):
    return OPS["nn." + name]


def _size(shape) -> str:
    return f"torch.Size({list(shape)})"


def _check_reduction(reduction: str) -> str:
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(REDUCTION_INVALID.format(reduction))
    return reduction


def _legacy(size_average, reduce, reduction: str) -> str:
    """The deprecated ``size_average``/``reduce`` flags decide the reduction where given."""
    if size_average is None and reduce is None:
        return reduction
    from ._functional_extra import _legacy_reduction

    return _legacy_reduction(size_average, reduce, reduction)


def _no_grad_arg(t, fn: str, arg: str) -> None:
    if (
        isinstance(t, Tensor)
        and t.requires_grad
        and grad_mode._state.grad_enabled
        and not grad_mode._state.inference
    ):
        raise RuntimeError(NOT_DIFFERENTIABLE.format(fn, arg))


def _view(t: Tensor, shape) -> Tensor:
    return dispatch(OPS["view"], t, shape=tuple(shape))


def _expand(t: Tensor, shape) -> Tensor:
    shape = tuple(shape)
    return t if tuple(t.shape) == shape else dispatch(OPS["expand"], t, shape=shape)


def _broadcast_pair(a: Tensor, b: Tensor):
    shape = broadcast_shapes(tuple(a.shape), tuple(b.shape))
    return _expand(a, shape), _expand(b, shape)


# --- activations -------------------------------------------------------------------------------


def writes_input(input, op: str) -> None:
    """Note [Captured tensors] (func.py): an ``inplace=True`` activation inside grad or jvp may
    not write a captured tensor (``op``: PyTorch's in-place op, ``relu_``)."""
    if _func.WRITE_GUARD[0]:
        _func.refuse_captured_write(input, op)


def _in_place(
    input: Tensor, compute, node_name=None, saves_result: bool = False, keep=(), first=()
) -> Tensor:
    """``F.<activation>(x, inplace=True)``: the out-of-place op written into ``x``.

    Some in-place activations are different nodes in PyTorch (``LeakyReluBackward1``): they save
    their result, not their input, so a later write to ``x`` trips the version check. ``keep``
    and ``first``: what else their node saves (``saved_mod.result_only``)."""
    from ..autograd.graph import node_class
    from ..ops.dispatch import SavedVersion
    from ..ops.inplace import inplace

    def run():
        hooked = saves_result and saved_mod.current() is not None
        if hooked:
            with saved_mod.result_only(keep, first):
                out = compute()
        else:
            out = compute()
        node = out._grad_fn
        if node is not None and node_name is not None:
            node.__class__ = node_class(node_name)
        if node is not None and saves_result:
            node._has_saved = True
            if not hooked:  # a hooked result is not version-checked
                meta = (out._dtype, out._device, out._data.shape)
                saved = SavedVersion(None, out._version_counter, 0, None, 0, node, meta)
                node._saved_checks = (*(node._saved_checks or ()), saved)
        return out

    return inplace(input, run)


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """``F.relu``: ``max(x, 0)`` (gradient 0 at 0)."""
    if inplace:
        writes_input(input, "relu_")
        return _in_place(input, lambda: relu(input), None, saves_result=False)
    return dispatch(_op("relu"), input)


def _relu_function(input: Tensor) -> Tensor:
    """``torch.relu`` / ``Tensor.relu``: ``F.relu`` without ``inplace``, which PyTorch's
    ``torch.relu`` does not take."""
    return dispatch(_op("relu"), input)


_relu_function.__name__ = _relu_function.__qualname__ = "relu"
tensor_op("relu")(_relu_function)


@tensor_op("relu_", method=False)
def relu_(input: Tensor) -> Tensor:
    """``torch.relu_`` / ``F.relu_``: ``relu`` in place (``ReluBackward0``)."""
    return relu(input, inplace=True)


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0, inplace=False) -> Tensor:
    """``F.hardtanh``: clamp to ``[min_val, max_val]`` (no gradient at the bounds)."""
    if min_val > max_val:
        raise ValueError(HARDTANH_MIN_MAX)
    if inplace:
        writes_input(input, "hardtanh_")
    return _aten_hardtanh(input, min_val, max_val, inplace)


def _aten_hardtanh(input: Tensor, min_val, max_val, inplace: bool) -> Tensor:
    """ATen's ``hardtanh``/``hardtanh_``, which do not compare the bounds (F's Python does);
    a clamp, which reads complex bounds as doubles."""
    if input.dtype.is_complex:
        raise NotImplementedError("clamp is not supported for complex types")
    if input.dtype is D.bool_:
        raise RuntimeError("Bool inputs not supported for hardtanh")
    c_type = "double" if input.dtype.is_floating_point else "int64_t"  # clamp's Scalar types
    low, high = E.real_scalar(min_val, c_type), E.real_scalar(max_val, c_type)
    if input.dtype is D.uint8 and (int(low) < 0 or int(high) < 0):
        raise RuntimeError("cannot do hardtanh on an unsigned type with negative limits")
    if input.dtype._kind in "ui":  # the bounds as int64, then clamp's overflow check
        from ..ops.shape import checked_number

        checked_number(int(low), input.dtype)
        checked_number(int(high), input.dtype)
    if inplace:
        out = _in_place(input, lambda: _aten_hardtanh(input, min_val, max_val, False))
    else:
        out = dispatch(_op("hardtanh"), input, min_val=float(low), max_val=float(high))
    return saved_mod.keep_given(out, min_val=min_val, max_val=max_val)  # relu6's ints 0 and 6


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    """``F.relu6``: ``hardtanh(x, 0, 6)``, as PyTorch records it."""
    if inplace:
        writes_input(input, "relu6_")
    return hardtanh(input, 0, 6, inplace)


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """``F.leaky_relu``."""
    if inplace:
        writes_input(input, "leaky_relu_")
        out = _in_place(
            input,
            lambda: leaky_relu(input, negative_slope),
            "LeakyReluBackward1",
            saves_result=True,
        )
        return saved_mod.keep_given(out, negative_slope=negative_slope)
    slope = _opmath_scalar(negative_slope, input)
    out = dispatch(_op("leaky_relu"), input, negative_slope=float(slope))
    return saved_mod.keep_given(out, negative_slope=negative_slope)


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """``F.elu``."""
    if inplace:
        return _elu_in_place(input, alpha, 1, 1)
    real = float(_opmath_scalar(alpha, input))
    out = dispatch(_op("elu"), input, alpha=real, scale=1.0, input_scale=1.0)
    return saved_mod.keep_given(out, alpha=alpha)


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _opmath_scalar(v, input: Tensor):
    """A Scalar as a floating kernel computing in ``opmath_type`` reads it."""
    return E.kernel_scalar(v, input.dtype, E.opmath_c_type(input.dtype))


def selu(input: Tensor, inplace: bool = False) -> Tensor:
    """``F.selu``: an ELU with PyTorch's constants (recorded as ``EluBackward0``)."""
    if inplace:
        writes_input(input, "selu_")
        return _in_place(
            input,
            lambda: dispatch(
                _op("elu"),
                input,
                alpha=_SELU_ALPHA,
                scale=_SELU_SCALE,
                input_scale=1,
                from_result=True,
            ),
            "EluBackward1",
            saves_result=True,
        )
    return dispatch(_op("elu"), input, alpha=_SELU_ALPHA, scale=_SELU_SCALE, input_scale=1.0)


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """``F.celu``: ``elu`` with input scale ``1 / alpha``."""
    given, alpha = alpha, E.real_scalar(alpha, "double")  # ATen's celu reads it as a double
    if alpha == 0:
        raise RuntimeError(CELU_ALPHA)
    alpha = float(alpha)
    static = {
        "alpha": alpha,
        "scale": 1.0,
        "input_scale": 1.0 / alpha,
        "grad_input_scale": 1.0 / float(np.float32(alpha)),
    }
    if inplace:
        writes_input(input, "celu_")
        out = _in_place(
            input,
            lambda: dispatch(_op("celu"), input, from_result=True, **static),
            "CeluBackward1",
            saves_result=True,
        )
    else:
        out = dispatch(_op("celu"), input, **static)
    return saved_mod.keep_given(out, alpha=given)


def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    """``F.gelu`` with ``approximate='none'`` (erf) or ``'tanh'``."""
    if not isinstance(approximate, str):
        raise TypeError(
            f"gelu(): argument 'approximate' must be str, not {E.py_typename(approximate)}"
        )
    if approximate not in ("none", "tanh"):
        raise RuntimeError(GELU_APPROXIMATE)
    if approximate == "none" and _onednn_gelu(input):
        return dispatch(_op("gelu"), input, approximate=approximate, onednn=True)
    return dispatch(_op("gelu"), input, approximate=approximate)


# Note [GELU at infinity]: PyTorch's CPU erf GELU of a contiguous float32, float16 or bfloat16
# input of two elements or more runs oneDNN's ``eltwise_gelu_erf`` (its ``use_mkldnn``), which
# gives NaN at +inf on a CPU with AVX-512 (its AVX2 and SSE kernels give +inf, as PyTorch 2.13
# does on such a CPU with every ``ONEDNN_MAX_CPU_ISA``); its own kernel (one element, a
# non-contiguous input, float64) gives +inf.
def _onednn_gelu(input: Tensor) -> bool:
    from ..ops.iterator_layout import is_contiguous

    if input._dtype not in (D.float32, D.float16, D.bfloat16) or input._data.size < 2:
        return False
    if not _avx512() or input._device.type != "cpu":
        return False
    strides = input.__dict__.get("_strides")
    return strides is None or is_contiguous(tuple(input._data.shape), strides)


@functools.cache
def _avx512() -> bool:
    """Whether this CPU has AVX-512 (numpy's record of the features it found)."""
    try:
        from numpy._core._multiarray_umath import __cpu_features__
    except ImportError:  # numpy 1.x
        from numpy.core._multiarray_umath import __cpu_features__
    return bool(__cpu_features__.get("AVX512F"))


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """``F.silu``: ``x * sigmoid(x)``."""
    if inplace:
        writes_input(input, "silu_")
        # (silu_ is differentiable for complex numbers in PyTorch, silu is not)
        return _in_place(input, lambda: dispatch(_op("silu"), input), None, saves_result=False)
    return refuse_complex_autograd(dispatch(_op("silu"), input), "silu")


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    """``F.mish``: ``x * tanh(softplus(x))``."""
    if inplace:
        writes_input(input, "mish_")
        return _in_place(input, lambda: mish(input), None, saves_result=False)
    return dispatch(_op("mish"), input)


def softplus(input: Tensor, beta: float = 1, threshold: float = 20) -> Tensor:
    """``F.softplus``: ``log1p(exp(beta * x)) / beta``, linear above ``threshold``."""
    real_beta, real_threshold = _opmath_scalar(beta, input), _opmath_scalar(threshold, input)
    out = dispatch(_op("softplus"), input, beta=float(real_beta), threshold=float(real_threshold))
    # SoftplusBackward0 keeps the Scalars as given (ATen's defaults are the ints 1 and 20)
    return saved_mod.keep_given(out, beta=beta, threshold=threshold)


def softsign(input: Tensor) -> Tensor:
    """``F.softsign``: ``x / (1 + |x|)``, recorded as PyTorch's three nodes."""
    return input / (1 + dispatch(OPS["abs"], input))


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    """``F.hardsigmoid``: ``relu6(x + 3) / 6``."""
    if inplace:
        writes_input(input, "hardsigmoid_")
        return _in_place(input, lambda: hardsigmoid(input), None, saves_result=False)
    return dispatch(_op("hardsigmoid"), input)


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    """``F.hardswish``: ``x * relu6(x + 3) / 6``."""
    if inplace:
        writes_input(input, "hardswish_")
        return _in_place(input, lambda: hardswish(input), None, saves_result=False)
    return dispatch(_op("hardswish"), input)


def sigmoid(input: Tensor) -> Tensor:
    """``F.sigmoid``: ``Tensor.sigmoid`` (elementwise ops)."""
    return input.sigmoid()


def tanh(input: Tensor) -> Tensor:
    """``F.tanh``: ``Tensor.tanh`` (elementwise ops)."""
    return input.tanh()


def _softmax_dim(name: str, ndim: int) -> int:
    E.warn(IMPLICIT_DIM.format(name))
    return 0 if ndim in (0, 1, 3) else 1


def _softmax_dtype(op: str, dtype) -> None:
    """F's softmaxes call ``input.softmax(dim, dtype=dtype)``: the method's parser check."""
    if dtype is not None and not E._matches("torch.dtype", dtype):
        raise TypeError(E.KW_MUST_BE.format(op, "dtype", "torch.dtype", E.py_typename(dtype)))


def _softmax_op(op: str, input: Tensor, dim: int, dtype) -> Tensor:
    check_int(op, "dim", dim, 1)  # F.softmax calls input.softmax(dim): the method's position
    if dtype is not None:
        input = input.to(D.to_dtype(dtype))
    dim = _wrap_dim(dim, input.ndim)
    if not input._dtype.is_floating_point and input.numel() == 0:
        # PyTorch's kernel returns its empty result before it dispatches on the dtype
        return input.new_empty(tuple(input.shape))
    return dispatch(_op(op), input, dim=dim)


def _softmax_function(op: str, method: bool):
    """``torch.<op>(input, dim, dtype=None)`` or ``Tensor.<op>(dim, dtype=None)``: unlike F's,
    ``dim`` is required and ``dtype`` comes second."""

    def function(input, dim, *rest, **kwargs):
        unknown = [k for k in kwargs if k != "dtype"]
        if unknown and len(rest) <= 1:
            raise TypeError(f"{op}() got an unexpected keyword argument '{unknown[0]}'")
        if len(rest) > 1 or set(kwargs) - {"dtype"} or rest and kwargs:
            # more than the parser binds: its message comes from the table (_arg_check)
            raise TypeError(f"{op}(): too many arguments")
        dtype = rest[0] if rest else kwargs.get("dtype")
        if dtype is not None and not E._matches("torch.dtype", dtype):
            where = f" (position {2 if method else 3})" if rest else ""
            raise TypeError(
                f"{op}(): argument 'dtype'{where} must be torch.dtype, not {E.py_typename(dtype)}"
            )
        return _softmax_op(op, input, dim, dtype)

    function.__name__ = function.__qualname__ = op
    function.__doc__ = f"``torch.{op}`` / ``Tensor.{op}``: over ``dim``, in ``dtype`` if given."
    return function


def softmax(input: Tensor, dim=None, _stacklevel: int = 3, dtype=None) -> Tensor:
    """``F.softmax`` over ``dim`` (optionally casting to ``dtype`` first)."""
    if dim is None:
        dim = _softmax_dim("softmax", input.ndim)
    _softmax_dtype("softmax", dtype)
    return _softmax_op("softmax", input, dim, dtype)


def log_softmax(input: Tensor, dim=None, _stacklevel: int = 3, dtype=None) -> Tensor:
    """``F.log_softmax``."""
    if dim is None:
        dim = _softmax_dim("log_softmax", input.ndim)
    _softmax_dtype("log_softmax", dtype)
    return _softmax_op("log_softmax", input, dim, dtype)


for _name in ("softmax", "log_softmax"):
    tensor_op(_name, function=False)(_softmax_function(_name, True))
    tensor_op(_name, method=False)(_softmax_function(_name, False))


def softmin(input: Tensor, dim=None, _stacklevel: int = 3, dtype=None) -> Tensor:
    """``F.softmin``: ``softmax(-x)``."""
    if dim is None:
        dim = _softmax_dim("softmin", input.ndim)
    input = -input
    _softmax_dtype("softmax", dtype)
    return _softmax_op("softmax", input, dim, dtype)


def _check_p(p) -> float:
    return float(p)


def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12, out=None):
    """``F.normalize``: ``x / max(||x||_p, eps)`` over ``dim``; with ``out``, PyTorch's
    ``torch.div(input, denom, out=out)`` (written into ``out``, which is returned)."""
    if out is not None:
        return _normalize_out(input, p, dim, eps, out)
    if p is None or p == "fro":  # PyTorch's ``input.norm(p, dim, True)``: a 2-norm over dim
        p = 2.0 if p is None else 2
    if isinstance(p, (str, complex)) or E.number_refused(p):  # that call's errors
        input.norm(p, dim, keepdim=True)
    p = _check_p(p)
    d = _wrap_dim(dim, input.ndim)
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise RuntimeError(NORM_DTYPE.format(E.scalar_type_name(input.dtype)))
    if input.dtype.is_complex:  # the norm is real: PyTorch's ``input.norm(p, dim, True)``
        norm = input.norm(p, d, keepdim=True)
    else:
        norm = dispatch(
            _op("vector_norm"), input, p=p, dim=(d,) if input.ndim else (), keepdim=True
        )
        if p == 0:  # a count of non-zeros: PyTorch's norm_backward gives no gradient
            from ..ops.linalg_ops import _no_gradient

            norm = _no_gradient(norm)
        written_dims.note(norm, input.ndim, dim=dim)  # PyTorch's norm takes the dim as given
    denom = dispatch(_op("clamp_min"), norm, min=float(eps))
    return input / _expand(denom, tuple(input.shape))


def _normalize_out(input: Tensor, p, dim, eps, out: Tensor) -> Tensor:
    state = grad_mode._state
    if state.grad_enabled and not state.inference and (input.requires_grad or out.requires_grad):
        raise RuntimeError(E.OUT_REQUIRES_GRAD.format("div"))
    with grad_mode.no_grad():
        result = normalize(input, p, dim, eps)
    return _arg_check.write_out(out, result, "normalize")


# --- linear layers, dropout, embeddings ---------------------------------------------------------


def _tensor_params(op: str, *params: str, builtin: bool = True):
    """On the error path of a frontend PyTorch's parser binds (``torch._C._nn.<op>``, or the
    builtin a Python function calls: ``builtin`` False): a non-tensor given for one of
    ``params`` (positional names of the builtin; ``?`` where None is taken; ``name=i`` where the
    frontend's argument ``i`` fills it) raises the parser's TypeError instead of the error the
    frontend met; the parser checks these before it reports a missing argument (Python, for a
    Python function, the other way round)."""

    def wrap(fn):
        signature = inspect.signature(fn)
        names = list(signature.parameters)
        limit = _arg_check._positional_limit(fn)

        @functools.wraps(fn)
        @E.wrapper
        def checked(*args, **kwargs):
            try:
                return fn(*args, **kwargs)
            except (AttributeError, TypeError, RuntimeError):
                if limit is not None and len(args) > limit:
                    raise  # the count is refused first (the parser's words are Python's)
                binds = _parsed._binds(signature, args, kwargs)
                if not binds and not builtin:
                    raise  # Python's refusal of the call comes first
                for pos, spec in enumerate(params, 1):
                    name, _, frontend = spec.rstrip("?").partition("=")
                    at = int(frontend) if frontend else names.index(name)
                    if at < len(args):
                        value, where = args[at], f" (position {pos})"
                    elif names[at] in kwargs:
                        value = kwargs[names[at]]
                        where = f" (position {pos})" if frontend else ""
                    else:
                        continue
                    if value is None and spec.endswith("?"):
                        continue
                    message = _tensor_error(op, name, where, value)
                    if message is not None:
                        raise TypeError(message) from None
                if not binds:
                    required = [n for n, p in signature.parameters.items() if p.default is p.empty]
                    given = set(names[: len(args)]) | set(kwargs)
                    gone = [n for n in required if n not in given]
                    if gone:  # every required one from the first missing on
                        raise TypeError(
                            E.missing_args(op, required[required.index(gone[0]) :])
                        ) from None
                raise

        return checked

    return wrap


@_tensor_params("linear", "input", "weight", "bias?")
@_autocast.policy("lower_precision_fp")
def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``F.linear``: ``x @ w.T + b``, recorded with PyTorch's nodes (addmm / mm / views).

    ``w.T`` is never made: the products take ``w`` and transpose inside (Note [Views inside ops]
    in ops/table.py), recording the ``TBackward0`` node PyTorch's ``w.t()`` has."""
    ishape = input._data.shape
    wshape = weight._data.shape
    ind = len(ishape)
    if ind == 0 or not wshape:
        raise RuntimeError(LINEAR_0D.format(ind, len(wshape)))
    if len(wshape) != 2:
        return _linear_unfused(input, weight, bias)
    if bias is not None:
        # addmm's checks: the bias against the weight, then the input against it
        n = E.scalar_type_name
        if bias.dtype is not weight.dtype:
            raise RuntimeError(ADDMM_SELF_DTYPE.format(n(bias.dtype), n(weight.dtype)))
        if input.dtype is not weight.dtype:
            raise RuntimeError(ADDMM_MAT_DTYPE.format(n(input.dtype), n(weight.dtype)))
    elif input.dtype is not weight.dtype:
        raise RuntimeError(
            E.MM_DTYPE.format(E.c_type_name(input.dtype), E.c_type_name(weight.dtype))
        )
    out_features = wshape[0]
    if bias is None:
        if ind == 1:
            # matmul of 1-D and 2-D: unsqueeze, mm, then an in-place squeeze_ (SqueezeBackward4)
            return _mm_t(input.unsqueeze(0), weight).squeeze_(0)
        if ind == 2:
            return _mm_t(input, weight)
        lead = ishape[:-1]
        flat = _view(input, (math.prod(lead), ishape[-1]))
        return dispatch(OPS["unsafe_view"], _mm_t(flat, weight), shape=(*lead, out_features))
    if ind == 2:
        return _addmm(bias, input, weight, ishape, wshape)
    if _func.transform_level() > 0:
        # inside a torch.func transform PyTorch's tensors are subclass-like: ATen's linear then
        # takes matmul and an out-of-place add (AddBackward0), not its folded addmm
        return input.matmul(weight.t()).add(bias)
    lead = ishape[:-1]
    flat = _view(input, (math.prod(lead), ishape[-1]))
    return _view(_addmm(bias, flat, weight), (*lead, out_features))


def _linear_unfused(input: Tensor, weight: Tensor, bias) -> Tensor:
    """ATen's ``linear`` for a weight that is not a matrix: ``matmul(input, weight.t())`` (a
    1-D weight gives a dot or matrix-vector product; ``t()`` refuses more dims), then
    ``add_(bias)``; a 2-D input with a bias takes ``addmm``, which refuses a 1-D weight."""
    wt = weight.t()
    if bias is not None and input.ndim == 2:
        raise RuntimeError(f"mat2 must be a matrix, got {wt.ndim}-D tensor")
    out = input.matmul(wt)
    return out if bias is None else out.add_(bias)


def _mm_t(m1: Tensor, weight: Tensor) -> Tensor:
    """``m1.mm(weight.t())`` with ``torch.mm``'s checks."""
    if m1.shape[1] != weight.shape[1]:
        from ..func import physical_rows

        rows = physical_rows(m1, weight, m1.shape[0])  # inside vmap: PyTorch's folded rows
        raise RuntimeError(E.MM_SHAPES.format(rows, m1.shape[1], *weight.shape[::-1]))
    if m1.dtype is D.bool_:
        raise NotImplementedError(KERNEL_NOT_IMPLEMENTED.format("addmm_impl_cpu_", "Bool"))
    out = dispatch(_op("mm"), m1, weight)
    saved_mod.keep_strides(out, (m1, weight))
    return out


def _addmm(bias: Tensor, m1: Tensor, weight: Tensor, m1_shape=None, w_shape=None) -> Tensor:
    """``bias.addmm(m1, weight.t())`` with its checks (``m1_shape``/``w_shape``: the operands'
    shapes where the caller has them)."""
    m1_shape = m1._data.shape if m1_shape is None else m1_shape
    w_shape = weight._data.shape if w_shape is None else w_shape
    if m1_shape[1] != w_shape[1]:  # (``linear`` checked the dtypes first, as addmm does)
        from ..func import physical_rows

        rows = physical_rows(m1, weight, m1_shape[0])  # inside vmap: PyTorch's folded rows
        raise RuntimeError(E.MM_SHAPES.format(rows, m1_shape[1], w_shape[1], w_shape[0]))
    bshape = bias._data.shape
    if bshape != (w_shape[0],):  # the common case, a bias of out_features, needs no check
        target = (m1_shape[0], w_shape[0])
        if len(bshape) > 2:
            kind = E.tensor_type_name(bias._dtype, bias._device)
            sizes = ", ".join(str(v) for v in bshape)
            raise RuntimeError(
                EXPAND_FEW.format(kind, f"[{sizes}]", f"[{target[0]}, {target[1]}]", 2, len(bshape))
            )
        padded = (1,) * (2 - len(bshape)) + bshape
        for i, (s, t) in reversed(list(enumerate(zip(padded, target)))):  # the last dim first
            if s != t and s != 1:
                tensor_sizes = ", ".join(str(v) for v in bshape)
                raise RuntimeError(
                    EXPAND_SIZE.format(t, s, i, f"{target[0]}, {target[1]}", tensor_sizes)
                )
    if m1.dtype is D.bool_:
        raise NotImplementedError(KERNEL_NOT_IMPLEMENTED.format("addmm_impl_cpu_", "Bool"))
    out = dispatch(_op("addmm"), bias, m1, weight)
    saved_mod.keep_strides(out, (bias, m1, weight))
    return out


def bilinear(input1, input2, weight, bias=None):
    """``F.bilinear``: ``x1^T W_o x2 + b_o``, recorded as PyTorch's ``bilinear`` builds it:
    reshape both inputs to 2-D, ``_trilinear``, reshape to ``(*, out)``, add the bias."""
    n = E.c_type_name
    dtypes = [input1.dtype, input2.dtype, weight.dtype] + ([bias.dtype] if bias is not None else [])
    if any(d is not input1.dtype for d in dtypes):
        text = f"input1: {n(input1.dtype)}, input2: {n(input2.dtype)}, weight: {n(weight.dtype)}"
        if bias is not None:
            text += f", bias: {n(bias.dtype)}"
        raise RuntimeError(BILINEAR_DTYPE.format(text))
    if input1.ndim != input2.ndim:
        raise RuntimeError(BILINEAR_NDIM.format(input1.ndim, input2.ndim))
    for i in range(input1.ndim - 1):
        if input1.shape[i] != input2.shape[i]:
            raise RuntimeError(BILINEAR_BATCH.format(i, input1.shape[i], input2.shape[i]))
    if input1.ndim == 0:
        raise IndexError("Dimension specified as -1 but tensor has no dimensions")
    k1 = input1.shape[-1]
    if k1 != weight.shape[_wrap_dim(1, weight.ndim)]:
        raise RuntimeError(BILINEAR_SIZE.format(1, k1, weight.shape[1]))
    k2 = input2.shape[-1]
    if k2 != weight.shape[_wrap_dim(2, weight.ndim)]:
        raise RuntimeError(BILINEAR_SIZE.format(2, k2, weight.shape[2]))
    if bias is not None and bias.shape[0] != weight.shape[0]:
        raise RuntimeError(BILINEAR_BIAS.format(bias.shape[0], weight.shape[0]))
    out_size = (*input1.shape[:-1], weight.shape[0])
    flat1 = input1.reshape(-1, k1)
    flat2 = input2.reshape(-1, k2)
    out = dispatch(
        _op("trilinear"),
        flat1,
        weight,
        flat2,
        expand1=(1, 3),
        expand2=(0,),
        expand3=(1, 2),
        sumdim=(2, 3),
    ).reshape(out_size)
    return out if bias is None else out + bias


def _memory_order(t: Tensor) -> list:
    """The dims of ``t`` from outermost to innermost in memory. PyTorch fills a dropout mask made
    by ``empty_like``, which keeps the input's dim order (its strides when dense, else dense
    strides in the same order), in memory order: TensorIterator's order of ``t``'s strides."""
    from ..ops.shape import _strides

    return list(R.iteration_order(tuple(t._data.shape), _strides(t)))


def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False):
    """``F.dropout``: ``x * mask / (1 - p)`` with PyTorch's CPU bernoulli stream."""
    if p < 0.0 or p > 1.0:
        raise ValueError(DROPOUT_P.format(p))
    # Note [Single signatures bound]: PyTorch's Python calls the native dropout here
    check_call("dropout_" if inplace else "dropout", _DROPOUT, (input, p, training))
    if not training or p == 0 or input.numel() == 0:
        return input
    dtype = input.dtype
    if p == 1:
        mask = jnp.zeros(tuple(input.shape), dtype.np)
    else:
        # The mask does not depend on the data, so it is drawn on the host, as PyTorch draws
        # it: bernoulli_(1 - p) in the input's dtype, then divided (in that dtype) by 1 - p.
        perm = _memory_order(input)
        shape = tuple(input.shape)
        drawn = tuple(shape[d] for d in perm)
        # Note [Randomness in vmap]: each sample's mask (PyTorch's vmap draws a new one)
        keep = R.sampled(lambda s: R.bernoulli(None, s, dtype.np, 1 - p), shape)
        if keep is None and R.batched(input._data):  # "same": a new contiguous mask
            keep = R.bernoulli(None, shape, dtype.np, 1 - p)
        if keep is not None:
            pass
        elif input.is_meta:  # Note [Meta tensors]: bernoulli_ of a meta tensor draws nothing
            keep = np.broadcast_to(np.zeros((), dtype.np), drawn)
        else:
            keep = R.bernoulli(None, drawn, dtype.np, 1 - p)
            keep = keep.transpose(tuple(perm.index(d) for d in range(len(perm))))
        if not (dtype.is_floating_point or dtype.is_complex):
            # ATen's ``noise.div_(1 - p)`` on the drawn integer noise
            from ._pad_pool import CAST_ERROR

            raise RuntimeError(CAST_ERROR.format(E.scalar_type_name(dtype)))
        mask = keep / keep.dtype.type(1 - p)
    from .._factories import as_tensor

    mask = as_tensor(mask, dtype=dtype, device=input.device)
    return input.mul_(mask) if inplace else input * mask


@_tensor_params("embedding", "weight=1", "indices=0", builtin=False)
def embedding(
    input: Tensor,
    weight: Tensor,
    padding_idx: int | None = None,
    max_norm=None,
    norm_type: float = 2.0,
    scale_grad_by_freq: bool = False,
    sparse: bool = False,
) -> Tensor:
    """``F.embedding``: rows of ``weight``; the ``padding_idx`` row gets no gradient;
    ``max_norm`` renormalizes the rows used, in place; ``scale_grad_by_freq`` divides a row's
    gradient by its index's count."""
    if sparse:
        raise NotImplementedError(
            TODO.format("embedding", "sparse (leafgrad has no sparse tensors)")
        )
    if padding_idx is not None:
        n = weight.shape[0]
        if padding_idx > 0:
            assert padding_idx < n, PADDING_IDX
        elif padding_idx < 0:
            assert padding_idx >= -n, PADDING_IDX
            padding_idx = n + padding_idx
    if input.dtype not in (D.int64, D.int32):
        legacy = f"torch.{input.dtype._legacy}Tensor"
        raise RuntimeError(EMBEDDING_INDICES.format(legacy))
    if weight.ndim != 2:
        raise RuntimeError(EMBEDDING_WEIGHT_2D)
    _check_in_range(input, weight.shape[0], None, "index out of range in self")
    if max_norm is not None:
        from ._embedding_bag import embedding_renorm_

        with grad_mode.no_grad():
            embedding_renorm_(weight, input, max_norm, norm_type)
    op = _op("embedding_freq" if scale_grad_by_freq else "embedding")
    out = dispatch(op, weight, input, padding_idx=padding_idx)
    # EmbeddingBackward0 keeps the index made non-negative (-1 for none) and the flags
    saved_mod.keep_written(
        out,
        padding_idx=-1 if padding_idx is None else padding_idx,
        scale_grad_by_freq=bool(scale_grad_by_freq),
        sparse=bool(sparse),
    )
    return out


@_tensor_params("one_hot", "input")
def one_hot(input: Tensor, num_classes: int = -1) -> Tensor:
    """``F.one_hot``: int64 indicators; ``num_classes=-1`` reads the largest class on the host."""
    check_int("one_hot", "num_classes", num_classes, 2)
    if input.dtype is not D.int64:
        raise RuntimeError(ONE_HOT_DTYPE)
    data = input._data
    values = data
    if isinstance(data, jax.core.Tracer):
        # Note [Known values]: PyTorch's vmap rule skips the checks; a grad or jvp level reads
        # the values (with ``.item()``, which a batched tensor below it refuses)
        stack = _func.active_transforms()
        if stack and stack[-1] != "vmap" and input.numel():
            _func.traced_values(data, "item")
        values, levels = known_values(data)
        if levels:
            values = None
    if num_classes == -1:
        if input.numel() == 0:
            raise RuntimeError(ONE_HOT_EMPTY)
        num_classes = int(jnp.max(data)) + 1  # PyTorch reads it from the data too
    if values is not None and input.numel():
        if int(np.min(values)) < 0:
            raise RuntimeError(ONE_HOT_NEGATIVE)
        if int(np.max(values)) >= num_classes:
            raise RuntimeError(ONE_HOT_LARGE)
    from .._factories import arange

    classes = arange(num_classes, device=input.device)
    out = (input.unsqueeze(-1) == classes).long()
    if input.numel() and not grad_mode._state.inference:
        out._version_counter.value = 2  # PyTorch's ``zeros`` then ``scatter_`` of ones
    return out


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """``F.cosine_similarity``, recorded as PyTorch builds it (its ``grad_fn`` is SumBackward1).

    PyTorch divides each input by its own norm, clamping the (cloned) norms at ``eps`` in place
    under ``no_grad``, so the clamp is invisible to autograd; leafgrad rebinds the clone's data
    the same way.
    """
    from ..autograd import grad_mode
    from ..ops.linalg_ops import vector_norm

    common = D.result_type(x1, x2)
    if not common.is_floating_point:
        raise RuntimeError(
            f"expected common dtype to be floating point, yet common dtype is "
            f"{E.scalar_type_name(common)}"
        )
    x1 = x1 if x1.dtype is common else x1.to(common)
    x2 = x2 if x2.dtype is common else x2.to(common)
    shape = tuple(jnp.broadcast_shapes(tuple(x1.shape), tuple(x2.shape)))
    if tuple(x1.shape) != shape:
        x1 = x1.expand(shape)
    if tuple(x2.shape) != shape:
        x2 = x2.expand(shape)
    norms = []
    for x in (x1, x2):
        norm = vector_norm(x, 2, dim=dim, keepdim=True)
        written_dims.note(norm, x.ndim, dim=dim)  # Note [Dims as written]
        norms.append(norm.clone())
    n1, n2 = norms
    with grad_mode.no_grad():
        for n in (n1, n2):
            n._set_data(jnp.maximum(n._data, jnp.asarray(eps, n._data.dtype)))
            n._version_counter.value += 1
    return ((x1 / n1) * (x2 / n2)).sum(dim)


def pairwise_distance(x1, x2, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False):
    """``F.pairwise_distance``: ``norm(x1 - x2 + eps, p, -1)``."""
    p = _check_p(p)
    diff = dispatch(_op("add_scalar"), x1 - x2, float(eps))
    dims = (diff.ndim - 1,) if diff.ndim else ()
    out = dispatch(_op("norm_dim"), diff, p=p, dim=dims, keepdim=bool(keepdim))
    if p == 0:  # a count of non-zeros: PyTorch's norm_backward gives no gradient
        from ..ops.linalg_ops import _no_gradient

        out = _no_gradient(out)
    return out


# --- losses ------------------------------------------------------------------------------------


def _warn_target_size(input: Tensor, target: Tensor) -> None:
    # as PyTorch's Python frontends compare: a number given reports its missing ``size``
    if target.size() != input.size():
        E.warn(TARGET_SIZE_WARNING.format(_size(target.shape), _size(input.shape)))


def _weighted(errors, weight, reduction: str, by_weights: bool = True) -> Tensor:
    """PyTorch's Python-level weighted losses: the elementwise ``errors`` times ``weight``,
    then reduced (``mean``: over the weights' sum, or over the elements for ``huber_loss``,
    ``by_weights`` False)."""
    weighted = errors * weight
    if reduction == "none":
        return weighted
    if reduction == "sum":
        return weighted.sum()
    if reduction == "mean":
        return weighted.sum() / weight.sum() if by_weights else weighted.mean()
    raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', 'sum'.")


def _weighted_pair(input, target, weight, size_average, reduce, reduction):
    """The broadcast pair and reduction of a weighted ``mse_loss``/``l1_loss``, with PyTorch's
    check of the weight against the input as given."""
    if size_average is not None or reduce is not None:
        reduction = _legacy(size_average, reduce, reduction)
    expanded = _broadcast_pair(input, target)
    if weight.size() != input.size():
        raise ValueError("Weights and input must have the same size.")
    return (*expanded, reduction)


@_autocast.policy("fp32")
def mse_loss(input, target, size_average=None, reduce=None, reduction: str = "mean", weight=None):
    """``F.mse_loss``: mean/sum/none of ``(input - target) ** 2`` (weighted by ``weight``)."""
    _warn_target_size(input, target)
    if weight is not None:
        a, b, reduction = _weighted_pair(input, target, weight, size_average, reduce, reduction)
        return _weighted((a - b).pow(2), weight, reduction)
    reduction = _check_reduction(_legacy(size_average, reduce, reduction))
    input, target = _broadcast_pair(input, target)
    return dispatch(_op("mse_loss"), input, target, reduction=reduction)


def _apply_reduction(loss: Tensor, reduction: str) -> Tensor:
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


@_autocast.policy("fp32")
def l1_loss(input, target, size_average=None, reduce=None, reduction: str = "mean", weight=None):
    """``F.l1_loss``: ``|input - target|`` (weighted by ``weight``) reduced, recorded as sub,
    abs, mean/sum."""
    _warn_target_size(input, target)
    if weight is not None:
        a, b, reduction = _weighted_pair(input, target, weight, size_average, reduce, reduction)
        return _weighted((a - b).abs(), weight, reduction)
    reduction = _check_reduction(_legacy(size_average, reduce, reduction))
    input, target = _broadcast_pair(input, target)
    return _apply_reduction(dispatch(OPS["abs"], input - target), reduction)


@_autocast.policy("fp32")
def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    """``F.smooth_l1_loss``; ``beta == 0`` is ``l1_loss``, as in PyTorch."""
    _warn_target_size(input, target)
    reduction = _check_reduction(_legacy(size_average, reduce, reduction))
    message = _arg_check._float_error("smooth_l1_loss", "beta", " (position 4)", beta)
    if message is not None and beta != 0:  # F passes it on to the builtin (or to l1_loss)
        raise TypeError(message)
    if beta == 0:  # F's Python compares first
        input, target = _broadcast_pair(input, target)
        return _apply_reduction(dispatch(OPS["abs"], input - target), reduction)
    if beta < 0:
        raise RuntimeError(SMOOTH_L1_BETA)
    input, target = _broadcast_pair(input, target)
    return dispatch(_op("smooth_l1_loss"), input, target, reduction=reduction, beta=float(beta))


@_autocast.policy("fp32")
def huber_loss(input, target, reduction: str = "mean", delta: float = 1.0, weight=None):
    """``F.huber_loss``."""
    _warn_target_size(input, target)
    if weight is not None:  # PyTorch's Python: the unweighted loss, weighted, then reduced
        expanded = _broadcast_pair(input, target)
        if weight.size() != input.size():  # the input as given
            raise ValueError("Weights and input must have the same size.")
        return _weighted(huber_loss(*expanded, "none", delta), weight, reduction, False)
    reduction = _check_reduction(reduction)
    if delta <= 0:
        raise RuntimeError(HUBER_DELTA)
    input, target = _broadcast_pair(input, target)
    out = dispatch(_op("huber_loss"), input, target, reduction=reduction, delta=float(delta))
    if target.dtype is not input.dtype:
        # the forward promotes; PyTorch's huber_loss_backward iterates over tensors of one dtype
        # (the target's gradient is ``huber_loss_backward(grad, target, input)``; the input's
        # is computed first)
        n = E.scalar_type_name
        a, b = n(target.dtype), n(input.dtype)
        if target.requires_grad:
            refuse_backward(out, lambda: RuntimeError(BCE_DTYPE.format(b, a)), edge=1)
        if input.requires_grad:
            refuse_backward(out, lambda: RuntimeError(BCE_DTYPE.format(a, b)), edge=0)
    return out


def first_outside(index: Tensor, low: int, high: int, ignore=None):
    """The first value of ``index`` outside ``[low, high)`` (``ignore`` excepted) and the vmap
    levels of its values, or None: where every value lies within, or where the values are not
    known on the host (Note [Known values]: under ``leafgrad.compile`` ops follow JAX's
    clamping rules)."""
    data = index._data
    if data.size == 0:
        return None
    flat, levels = known_values(data)
    if flat is None:
        return None
    flat = flat.reshape(-1)
    bad = (flat < low) | (flat >= high)
    if ignore is not None:
        bad &= flat != ignore
    if not bad.any():
        return None
    return int(flat[int(np.argmax(bad))]), levels


def _check_in_range(
    index: Tensor, n: int, ignore, message: str, class_dim=None, input: Tensor | None = None
) -> None:
    """PyTorch's bounds check of class or row indices, done on the host where the values are
    known (Note [Known values]; under ``leafgrad.compile`` they are not, and the op follows
    JAX's clamping rules). Under vmap PyTorch's nll_loss gathers along ``class_dim`` of the
    physical ``input`` (batched, or expanded to a batched target), whose error it gives."""
    found = first_outside(index, 0, n, ignore)
    if found is not None:
        value, levels = found
        if class_dim is not None and input is not None:
            levels = max(levels, len(_lead(index, input)))
        if levels and class_dim is not None:
            raise RuntimeError(INDEX_RANGE.format(value, class_dim + levels, n))
        raise IndexError(message.format(value))


def _check_probabilities(input: Tensor, target: Tensor) -> None:
    """The CPU kernel of ``binary_cross_entropy`` checks, element by element (the input first),
    that input and target lie in [0, 1] (NaN does not); done on the host in eager mode only, as
    ``_check_in_range``."""
    if input._data.size == 0:
        return
    x, t = known_values(input._data)[0], known_values(target._data)[0]
    if x is None or t is None:
        return
    x, t = x.reshape(-1), t.reshape(-1)
    if x.shape != t.shape:  # one batched by vmap: the input's elements first
        t = np.concatenate([np.full(x.shape, 0.5, t.dtype), t])
        x = np.concatenate([x, np.full(t.shape[0] - x.shape[0], 0.5, x.dtype)])
    with np.errstate(invalid="ignore"):
        bad_x = ~((x >= 0) & (x <= 1))
        bad = bad_x | ~((t >= 0) & (t <= 1))
    if bad.any():
        which = "input" if bad_x[int(np.argmax(bad))] else "target"
        raise RuntimeError(f"all elements of {which} should be between 0 and 1")


def _check_nll(input: Tensor, target: Tensor, weight) -> None:
    if input.ndim == 0:  # ATen's nll_loss_nd
        raise ValueError("Expected 1 or more dimensions (got 0)")
    if input.ndim == 1:
        if target.ndim == 1 and target.shape[0] != 1:
            raise ValueError(NLL_1D_TARGET.format(target.shape[0]))
    elif input.ndim >= 2 and target.ndim >= 1 and input.shape[0] != target.shape[0]:
        raise ValueError(BATCH_MISMATCH.format(input.shape[0], target.shape[0]))
    if input.ndim <= 2 and target.ndim > 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if target.dtype not in (D.int64, D.uint8):
        raise RuntimeError(NLL_TARGET_DTYPE.format(E.scalar_type_name(target.dtype)))
    if weight is not None:
        n = input.shape[0] if input.ndim == 1 else input.shape[1]
        if weight.numel() != n:
            shape = ", ".join(str(s) for s in weight.shape)
            raise RuntimeError(NLL_WEIGHT.format(n, shape))
        if weight.dtype is not input.dtype:
            n = E.scalar_type_name
            raise RuntimeError(SCALAR_TYPE.format(n(input.dtype), n(weight.dtype)))


@_autocast.policy("fp32")
def nll_loss(
    input,
    target,
    weight=None,
    size_average=None,
    ignore_index: int = -100,
    reduce=None,
    reduction: str = "mean",
):
    """``F.nll_loss`` on (C,), (N, C) or (N, C, d1, ...) log-probabilities.

    Target indices out of range raise PyTorch's IndexError in eager mode (inside
    ``leafgrad.compile`` the values are not known and are not checked)."""
    reduction = _check_reduction(_legacy(size_average, reduce, reduction))
    _check_nll(input, target, weight)
    _check_in_range(
        target,
        input.shape[0] if input.ndim == 1 else input.shape[1],
        int(ignore_index),
        "Target {} is out of bounds.",
        0 if input.ndim == 1 else 1,
        input,
    )
    _no_grad_arg(weight, "nll_loss_forward", "weight")
    static = {"reduction": reduction, "ignore_index": int(ignore_index)}
    if input.ndim == 1 and target.ndim == 1:  # one sample's class, given as a vector of one
        with grad_mode.no_grad():
            target = target.reshape(())
    if input.ndim <= 2:
        return dispatch(_op("nll_loss"), input, target, weight, **static)
    if input.ndim == 4:
        # ATen's check_inputs_nll_loss2d
        if target.ndim != 3:
            raise RuntimeError(NLL2D_TARGET_DIM.format(target.ndim))
        s, t = input.shape, target.shape
        if (s[0], s[2], s[3]) != tuple(t):
            raise RuntimeError(NLL2D_SIZE.format(list(s), list(t)))
        return dispatch(_op("nll_loss2d"), input, target, weight, **static)
    # nll_loss_nd: other ranks are viewed as (N, C, 1, -1), the unreduced loss viewed back.
    n, c = input.shape[0], input.shape[1]
    out_size = (n, *input.shape[2:])
    if tuple(target.shape[1:]) != tuple(input.shape[2:]):
        raise RuntimeError(NLL_TARGET_SIZE.format(list(out_size), list(target.shape)))
    rest = math.prod(input.shape[2:])
    loss = dispatch(
        _op("nll_loss2d"),
        _view(input, (n, c, 1, rest)),
        _view(target, (n, 1, rest)),
        weight,
        **static,
    )
    return _view(loss, out_size) if reduction == "none" else loss


@_autocast.policy("fp32")
def cross_entropy(
    input,
    target,
    weight=None,
    size_average=None,
    ignore_index: int = -100,
    reduce=None,
    reduction: str = "mean",
    label_smoothing: float = 0.0,
):
    """``F.cross_entropy``: ``nll_loss(log_softmax(input, 1), target)`` for class indices, or
    ``-(log_softmax(input) * target).sum(...)`` for class probabilities."""
    reduction = _check_reduction(_legacy(size_average, reduce, reduction))
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(LABEL_SMOOTHING.format(R._fmt_double(label_smoothing)))
    class_dim = 0 if input.ndim == 1 else 1
    if tuple(input.shape) == tuple(target.shape):
        if not target.dtype.is_floating_point:
            raise RuntimeError(PROB_TARGET_DTYPE.format(E.scalar_type_name(target.dtype)))
        if ignore_index >= 0:
            raise RuntimeError("ignore_index is not supported for floating point target")
        return _cross_entropy_probs(input, target, weight, reduction, label_smoothing, class_dim)
    logp = dispatch(_op("log_softmax"), input, dim=class_dim)
    loss = nll_loss(logp, target, weight, None, ignore_index, None, reduction)
    if label_smoothing > 0:
        smoothing = float(label_smoothing)
        return _label_smoothing(logp, loss, target, weight, reduction, ignore_index, smoothing)
    return loss


def _label_smoothing(logp, nll, target, weight, reduction, ignore_index, label_smoothing):
    """ATen's ``cross_entropy_loss_label_smoothing``: ``(1 - s) * nll + s / C * smooth``, where
    ``smooth`` is the (weighted) negative sum of the log-probabilities over the classes."""
    class_dim = 0 if logp.ndim == 1 else 1
    n_classes = logp.shape[class_dim]
    if weight is not None:
        shape = [1] * logp.ndim
        shape[class_dim] = weight.shape[0]
        smooth = -(logp * _view(weight, shape)).sum(class_dim)
    else:
        smooth = -logp.sum(class_dim)
    ignore = target == ignore_index
    smooth = smooth.masked_fill(ignore, 0.0)
    if reduction == "mean":
        if weight is not None:
            # PyTorch sums weight[target] over the targets that are not ignored (a
            # masked_select); the masked sum has the same value and a static shape.
            with grad_mode.no_grad():
                picked = weight.gather(0, target.masked_fill(ignore, 0).flatten())
                total = picked.masked_fill(ignore.flatten(), 0.0).sum()
        else:
            total = (~ignore).sum()
        ret = smooth.sum() / total
    elif reduction == "sum":
        ret = smooth.sum()
    else:
        ret = smooth
    scaled_nll = dispatch(_op("mul_scalar"), nll, 1 - label_smoothing)
    return scaled_nll + dispatch(_op("mul_scalar"), ret, label_smoothing / n_classes)


def _cross_entropy_probs(input, target, weight, reduction, label_smoothing, class_dim):
    n_classes = input.shape[class_dim]
    logp = dispatch(_op("log_softmax"), input, dim=class_dim)
    if label_smoothing > 0:
        target = dispatch(_op("mul_scalar"), target, 1 - label_smoothing)
        target = dispatch(_op("add_scalar"), target, label_smoothing / n_classes)
    prod = logp * target
    if weight is not None:
        if logp.ndim > 1:
            shape = [1] * logp.ndim
            shape[1] = weight.shape[0]
            weight = _view(weight, shape)
        prod = prod * weight
    if reduction == "none":
        return -prod.sum(class_dim)
    if reduction == "mean" and input.numel() == 0:  # ATen fills the empty sum with NaN
        return -prod.sum().fill_(float("nan"))
    total = -prod.sum()
    if reduction == "sum":
        return total
    return dispatch(_op("div_scalar"), total, input.numel() // n_classes)


@_autocast.policy("fp32")
def binary_cross_entropy(
    input, target, weight=None, size_average=None, reduce=None, reduction: str = "mean"
):
    """``F.binary_cross_entropy`` (logs clamped at -100 as in PyTorch).

    Gradients differ from PyTorch's where an input is exactly 0 or 1 (PyTorch divides by
    ``max(x(1-x), 1e-12)``).
    """
    reduction = _check_reduction(_legacy(size_average, reduce, reduction))
    if target.size() != input.size():
        raise ValueError(BCE_SIZE.format(_size(target.shape), _size(input.shape)))
    if target.dtype is not input.dtype:
        n = E.scalar_type_name
        raise RuntimeError(BCE_DTYPE.format(n(target.dtype), n(input.dtype)))
    if weight is not None:
        _no_grad_arg(weight, "binary_cross_entropy", "weight")
        weight = _expand(weight, broadcast_shapes(tuple(weight.shape), tuple(input.shape)))
    _check_probabilities(input, target)
    return dispatch(_op("binary_cross_entropy"), input, target, weight, reduction=reduction)


@_autocast.policy("fp32")
def binary_cross_entropy_with_logits(
    input,
    target,
    weight=None,
    size_average=None,
    reduce=None,
    reduction: str = "mean",
    pos_weight=None,
):
    """``F.binary_cross_entropy_with_logits`` (stable log-sigmoid, optional weights)."""
    reduction = _check_reduction(_legacy(size_average, reduce, reduction))
    if target.size() != input.size():
        raise ValueError(BCE_LOGITS_SIZE.format(_size(target.shape), _size(input.shape)))
    check_call(  # Note [Single signatures bound]: PyTorch's Python calls the native function
        "binary_cross_entropy_with_logits",
        SINGLE_SIGNATURES["binary_cross_entropy_with_logits"],
        (input, target, weight, pos_weight, 1),
    )
    _no_grad_arg(weight, "binary_cross_entropy_with_logits", "weight")
    _no_grad_arg(pos_weight, "binary_cross_entropy_with_logits", "pos_weight")
    forward_ad.refuse_dual_reads((input, target), (weight, pos_weight))
    out = dispatch(_op("bce_with_logits"), input, target, weight, pos_weight, reduction=reduction)
    refuse_complex_autograd(out, "binary_cross_entropy_with_logits")
    given = [t for t in (input, target, weight, pos_weight) if t is not None]
    if reduction == "none":
        # ATen's in-place steps on its fresh loss (``mul_``, ``sub_``, ``mul_(weight)``)
        kernel_wrote(given, (out, 4 + (weight is not None)))
    return out


@_autocast.policy("fp32")
def kl_div(
    input,
    target,
    size_average=None,
    reduce=None,
    reduction: str = "mean",
    log_target: bool = False,
):
    """``F.kl_div``: pointwise ``target * (log target - input)``, then the reduction."""
    batchmean = reduction == "batchmean"  # read from the argument, legacy flags or not
    if size_average is not None or reduce is not None:
        reduction = _legacy(size_average, reduce, reduction)
    else:
        if reduction == "mean":
            E.warn(KL_MEAN_WARNING)
        if reduction not in ("mean", "sum", "none", "batchmean"):
            raise ValueError(REDUCTION_INVALID.format(reduction))
    # ATen's kl_div checks its dtypes itself (complex first), before xlogy could.
    if input.dtype.is_complex or target.dtype.is_complex:
        raise RuntimeError("kl_div: Complex inputs not supported.")
    if not (input.dtype.is_floating_point and target.dtype.is_floating_point):
        raise RuntimeError("kl_div: Integral inputs not supported.")
    # ATen's composite; its compiled operators evaluate their operands right to left, which
    # orders the nodes (and so the sums of the gradients)
    if log_target:
        difference = target - input
        loss = target.exp() * difference
    else:
        # ``xlogy(target, target) - target * input``: the same XlogyBackward0 node (and dtype
        # checks) as torch.xlogy
        product = target * input
        loss = dispatch(OPS["xlogy"], target, target) - product
    reduced = _apply_reduction(loss, "sum" if reduction == "batchmean" else reduction)
    return reduced / input.shape[0] if batchmean and input.ndim else reduced


@_autocast.policy("fp32")
def cosine_embedding_loss(
    input1, input2, target, margin=0.0, size_average=None, reduce=None, reduction="mean"
):
    """``F.cosine_embedding_loss``, recorded as PyTorch's ATen composite builds it."""
    from .._factories import empty_like, zeros_like
    from ..ops.api import FUNCTIONS

    reduction = _check_reduction(_legacy(size_average, reduce, reduction))
    margin = float(margin) if isinstance(margin, (bool, np.bool_)) else margin  # a double in ATen
    d = target.ndim
    if d not in (0, 1):
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if (input1.ndim, input2.ndim) != ((2, 2) if d == 1 else (1, 1)):
        raise RuntimeError(
            f"{d}D target tensor expects {d + 1}D input tensors, but found inputs with sizes "
            f"{list(input1.shape)} and {list(input2.shape)}."
        )
    from ..ops.formulas import sadd, ssub

    # ATen's steps, node for node: ``+ EPSILON`` and ``- margin`` take Scalars (AddBackward1,
    # SubBackward1) and ``1 - cos`` is ``empty_like(cos).fill_(1).sub_(cos)`` (SubBackward0)
    prod_sum = (input1 * input2).sum(d)
    mag_square1 = sadd((input1 * input1).sum(d), 1e-12)
    mag_square2 = sadd((input2 * input2).sum(d), 1e-12)
    cos = prod_sum / (mag_square1 * mag_square2).sqrt()
    zeros = zeros_like(cos)
    positive = empty_like(cos).fill_(1).sub_(cos)
    negative = dispatch(_op("clamp_min"), ssub(cos, margin), min=0)
    where = FUNCTIONS["where"]
    output = where(target == 1, positive, zeros) + where(target == -1, negative, zeros)
    return _apply_reduction(output, reduction)


@_autocast.policy("fp32")
def margin_ranking_loss(
    input1, input2, target, margin: float = 0.0, size_average=None, reduce=None, reduction="mean"
):
    """``F.margin_ranking_loss``: ``max(0, -target * (input1 - input2) + margin)`` reduced."""
    reduction = _check_reduction(_legacy(size_average, reduce, reduction))
    if not (input1.ndim == input2.ndim == target.ndim):
        raise RuntimeError(
            MARGIN_RANKING_DIMS.format(
                _size(input1.shape), _size(input2.shape), _size(target.shape)
            )
        )
    out = dispatch(_op("add_scalar"), -target * (input1 - input2), float(margin))
    return _apply_reduction(dispatch(_op("clamp_min"), out, min=0), reduction)


def multi_head_attention_forward(
    query,
    key,
    value,
    embed_dim_to_check,
    num_heads,
    in_proj_weight,
    in_proj_bias,
    bias_k,
    bias_v,
    add_zero_attn,
    dropout_p,
    out_proj_weight,
    out_proj_bias,
    training=True,
    key_padding_mask=None,
    need_weights=True,
    attn_mask=None,
    use_separate_proj_weight=False,
    q_proj_weight=None,
    k_proj_weight=None,
    v_proj_weight=None,
    static_k=None,
    static_v=None,
    average_attn_weights=True,
    is_causal=False,
):
    """PyTorch's ``F.multi_head_attention_forward`` (sequence-first): what ``nn.MultiheadAttention``
    runs, with its weights given (``(attn_output, attn_weights)``). Its parameters are PyTorch's,
    so Python refuses a call in PyTorch's words; they are passed on as bound."""
    arguments = dict(locals())
    from .modules.activation import _multi_head_attention_forward

    return _multi_head_attention_forward(**arguments)


from ._conv_pool import *  # noqa: E402, F401, F403
from ._ctc_loss import ctc_loss  # noqa: E402, F401
from ._embedding_bag import *  # noqa: E402, F401, F403
from ._fractional_pool import *  # noqa: E402, F401, F403
from ._functional_extra import *  # noqa: E402, F401, F403
from ._grid_sample import *  # noqa: E402, F401, F403
from ._linear_cross_entropy import linear_cross_entropy  # noqa: E402, F401
from ._pad_pool import *  # noqa: E402, F401, F403

# --- in-place spellings, ``*_with_indices`` and the deprecated ``upsample*`` ---------------------


def _elu_in_place(input: Tensor, alpha, scale, input_scale) -> Tensor:
    writes_input(input, "elu_")
    out = _in_place(
        input,
        lambda: dispatch(
            _op("elu"),
            input,
            alpha=float(_opmath_scalar(alpha, input)),
            scale=float(_opmath_scalar(scale, input)),
            input_scale=float(_opmath_scalar(input_scale, input)),
            from_result=True,
        ),
        "EluBackward1",
        saves_result=True,
    )
    return saved_mod.keep_given(out, alpha=alpha, scale=scale, input_scale=input_scale)


def elu_(input: Tensor, alpha: float = 1, scale: float = 1, input_scale: float = 1) -> Tensor:
    """``F.elu_`` (ATen's ``elu_``): ``elu`` in place (``EluBackward1``), with ATen's
    ``scale`` and ``input_scale``."""
    return _elu_in_place(input, alpha, scale, input_scale)


def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """``F.celu_``: ``celu`` in place (``CeluBackward1``)."""
    return celu(input, alpha, inplace=True)


def selu_(input: Tensor) -> Tensor:
    """``F.selu_``: ``selu`` in place (``EluBackward1``)."""
    return selu(input, inplace=True)


def hardtanh_(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    """``F.hardtanh_``: ``hardtanh`` in place (ATen's, which does not compare the bounds)."""
    return _aten_hardtanh(input, min_val, max_val, inplace=True)


def leaky_relu_(input: Tensor, negative_slope: float = 0.01) -> Tensor:
    """``F.leaky_relu_``: ``leaky_relu`` in place (``LeakyReluBackward1``)."""
    return leaky_relu(input, negative_slope, inplace=True)


def max_pool1d_with_indices(
    input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False
):
    """``F.max_pool1d_with_indices``: the values and their indices, whatever ``return_indices``."""
    return max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, True)  # noqa: F405


def max_pool2d_with_indices(
    input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False
):
    """``F.max_pool2d_with_indices``: the values and their indices, whatever ``return_indices``."""
    return max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, True)  # noqa: F405


def max_pool3d_with_indices(
    input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False
):
    """``F.max_pool3d_with_indices``: the values and their indices, whatever ``return_indices``."""
    return max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode, True)  # noqa: F405


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=False):
    """``F.adaptive_max_pool1d_with_indices``: the values and their indices."""
    return adaptive_max_pool1d(input, output_size, True)  # noqa: F405


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=False):
    """``F.adaptive_max_pool2d_with_indices``: the values and their indices."""
    return adaptive_max_pool2d(input, output_size, True)  # noqa: F405


def adaptive_max_pool3d_with_indices(input, output_size, return_indices=False):
    """``F.adaptive_max_pool3d_with_indices``: the values and their indices."""
    return adaptive_max_pool3d(input, output_size, True)  # noqa: F405


def _deprecated(name: str) -> None:
    E.warn_above(
        f"`nn.functional.{name}` is deprecated. Use `nn.functional.interpolate` instead.", 3
    )


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    """``F.upsample``: ``interpolate``, with PyTorch's deprecation warning."""
    _deprecated("upsample")
    return interpolate(input, size, scale_factor, mode, align_corners)  # noqa: F405


def upsample_nearest(input, size=None, scale_factor=None):
    """``F.upsample_nearest``: ``interpolate(..., mode='nearest')``, deprecated."""
    _deprecated("upsample_nearest")
    return interpolate(input, size, scale_factor, mode="nearest")  # noqa: F405


def upsample_bilinear(input, size=None, scale_factor=None):
    """``F.upsample_bilinear``: ``interpolate(..., mode='bilinear', align_corners=True)``,
    deprecated."""
    _deprecated("upsample_bilinear")
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)  # noqa: F405


from . import _parsed  # noqa: E402

_parsed.install(globals())  # Note [F's argument errors]
