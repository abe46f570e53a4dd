"""``torch.<op>`` functions for ATen ops that ``torch.nn.functional`` wraps: ``torch.conv2d``,
``torch.dropout(input, p, train)``, ``torch.batch_norm(input, weight, bias, ...)``,
``torch.embedding(weight, indices)``, the losses with their ``int`` reduction (0 none, 1 mean,
2 sum)... Each takes ATen's signature (its argument order and defaults) and runs the same
leafgrad function as its ``F`` form, so it records the same nodes.
"""

from __future__ import annotations

from . import _errors as E
from .nn import functional as F

__all__ = [
    "adaptive_avg_pool1d",
    "adaptive_max_pool1d",
    "affine_grid_generator",
    "alpha_dropout",
    "alpha_dropout_",
    "avg_pool1d",
    "batch_norm",
    "bilinear",
    "binary_cross_entropy_with_logits",
    "celu",
    "celu_",
    "channel_shuffle",
    "constant_pad_nd",
    "conv1d",
    "conv2d",
    "conv3d",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv_transpose3d",
    "convolution",
    "cosine_embedding_loss",
    "detach_",
    "dropout",
    "dropout_",
    "embedding",
    "embedding_renorm_",
    "feature_alpha_dropout",
    "feature_alpha_dropout_",
    "feature_dropout",
    "feature_dropout_",
    "fill",
    "frobenius_norm",
    "grid_sampler",
    "group_norm",
    "hardshrink",
    "hinge_embedding_loss",
    "instance_norm",
    "kl_div",
    "layer_norm",
    "margin_ranking_loss",
    "max_pool1d",
    "max_pool1d_with_indices",
    "max_pool2d",
    "max_pool3d",
    "native_channel_shuffle",
    "nuclear_norm",
    "pixel_shuffle",
    "pixel_unshuffle",
    "poisson_nll_loss",
    "prelu",
    "rms_norm",
    "rrelu",
    "rrelu_",
    "selu",
    "selu_",
    "threshold",
    "threshold_",
    "triplet_margin_loss",
]

# Note [Reduction defaults]: the losses' ``int reduction=at::Reduction::Mean`` default reads as 0
# in PyTorch's Python bindings, so ``torch.kl_div(a, b)`` does not reduce; any value other than 1
# (mean) and 2 (sum) does not reduce either (ATen's ``apply_loss_reduction``).
_REDUCTIONS = {1: "mean", 2: "sum"}
_DEPRECATED = (
    "at::{0} is deprecated and it is just left for JIT compatibility. It will be removed in a "
    "future PyTorch release. Please use `linalg.{1}` instead (Triggered internally at "
    "/__w/pytorch/pytorch/aten/src/ATen/native/LinearAlgebra.cpp:{2}.)"
)


def _reduction(value: int) -> str:
    return _REDUCTIONS.get(value, "none")


def _stride(stride):
    """ATen's ``stride=[]``: the kernel size."""
    return None if stride is None or (isinstance(stride, (list, tuple)) and not stride) else stride


def adaptive_max_pool1d(input, output_size):
    """The pooled values and their indices (a tuple, as ATen returns them)."""
    return F.adaptive_max_pool1d(input, output_size, return_indices=True)


def affine_grid_generator(theta, size, align_corners):
    return F.affine_grid(theta, size, align_corners=align_corners)


def batch_norm(
    input, weight, bias, running_mean, running_var, training, momentum, eps, cudnn_enabled
):
    return F.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None, reduction=0):
    return F.binary_cross_entropy_with_logits(
        input, target, weight, reduction=_reduction(reduction), pos_weight=pos_weight
    )


def celu(input, alpha=1.0):
    return F.celu(input, alpha)


def constant_pad_nd(input, pad, value=0):
    from .nn._pad_pool import _pad

    if not input.dtype.is_complex:  # the kernel fills with the value as the input's type
        value = E.real_scalar(value, E.scalar_c_type(input.dtype))
    return _pad(input, tuple(pad), "constant", value)


# Note [Shared with F]: where PyTorch's ``torch.X`` and ``F.X`` are one builtin (the convolutions,
# avg_pool1d, bilinear, prelu, hardshrink, the shuffles, the in-place selu_/celu_/rrelu_/
# threshold_), leafgrad's are one function too.
adaptive_avg_pool1d = F.adaptive_avg_pool1d
avg_pool1d = F.avg_pool1d
bilinear = F.bilinear
celu_ = F.celu_
channel_shuffle = F.channel_shuffle
native_channel_shuffle = F.native_channel_shuffle
conv1d, conv2d, conv3d = F.conv1d, F.conv2d, F.conv3d
conv_transpose1d, conv_transpose2d, conv_transpose3d = (
    F.conv_transpose1d,
    F.conv_transpose2d,
    F.conv_transpose3d,
)
hardshrink = F.hardshrink
pixel_shuffle, pixel_unshuffle = F.pixel_shuffle, F.pixel_unshuffle
prelu = F.prelu
rrelu_ = F.rrelu_
selu_ = F.selu_
threshold_ = F.threshold_


def convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups):
    """``torch.convolution``: the convolution of as many dims as ``weight`` has beyond two."""
    nd = weight.dim() - 2
    if transposed:
        fn = getattr(F, f"conv_transpose{nd}d")
        return fn(input, weight, bias, stride, padding, output_padding, groups, dilation)
    return getattr(F, f"conv{nd}d")(input, weight, bias, stride, padding, dilation, groups)


def cosine_embedding_loss(input1, input2, target, margin=0.0, reduction=0):
    return F.cosine_embedding_loss(input1, input2, target, margin, reduction=_reduction(reduction))


def detach_(input):
    return input.detach_()


def _native_p(p) -> None:
    """ATen's dropout checks ``p`` (a C++ double, printed as such) with a RuntimeError, where
    ``F.dropout`` raises a ValueError."""
    from .nn._pad_pool import DROPOUT_P

    if p < 0 or p > 1:
        raise RuntimeError(DROPOUT_P.format(f"{float(p):g}"))


def dropout(input, p, train):
    _native_p(p)
    return F.dropout(input, p, train)


def dropout_(input, p, train):
    _native_p(p)
    return F.dropout(input, p, train, inplace=True)


def alpha_dropout(input, p, train):
    _native_p(p)
    return F.alpha_dropout(input, p, train)


def alpha_dropout_(input, p, train):
    _native_p(p)
    return F.alpha_dropout(input, p, train, inplace=True)


def feature_alpha_dropout(input, p, train):
    _native_p(p)
    return F.feature_alpha_dropout(input, p, train)


def feature_alpha_dropout_(input, p, train):
    _native_p(p)
    return F.feature_alpha_dropout(input, p, train, inplace=True)


def feature_dropout(input, p, train):
    """Dropout of whole channels (dims 2 on), what ``F.dropout1d``/``2d``/``3d`` call."""
    from .nn._pad_pool import _dropout_impl

    _native_p(p)
    return _dropout_impl(input, p, train, True, False, False)


def feature_dropout_(input, p, train):
    from .nn._pad_pool import _dropout_impl

    _native_p(p)
    return _dropout_impl(input, p, train, True, False, True)


def fill(input, value):
    from .ops.inplace import fill as fill_op

    return fill_op(input, value)


def embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    """``torch.embedding(weight, indices, ...)``: ATen's order; a negative ``padding_idx`` is
    none."""
    padding = None if padding_idx is None or padding_idx < 0 else padding_idx
    return F.embedding(
        indices, weight, padding, scale_grad_by_freq=scale_grad_by_freq, sparse=sparse
    )


def embedding_renorm_(input, indices, max_norm, norm_type):
    from .nn._embedding_bag import embedding_renorm_ as renorm

    return renorm(input, indices, max_norm, norm_type)


def frobenius_norm(input, dim, keepdim=False):
    """Deprecated by PyTorch: ``norm(input, 2, dim, keepdim)`` (``NormBackward1``)."""
    E.warn_once(_DEPRECATED.format("frobenius_norm", "vector_norm(A, 2., dim, keepdim)", 3175))
    dims = [dim] if isinstance(dim, int) else list(dim)
    if len(dims) > 2:
        raise RuntimeError(
            f"Expected at most 2 dimensions, but got {len(dims)} dimensions instead."
        )
    return aten_norm(input, 2.0, dims, keepdim)


def aten_norm(input, p, dim=None, keepdim=False):
    """ATen's ``norm(input, p, dim, keepdim)`` (``Tensor::norm`` in C++, ``NormBackward1``;
    ``dim=None``: ``norm(input, p)``, ``NormBackward0``): a floating or complex input only;
    ``dim`` wrapped, without repeats, empty for all dims."""
    from ._tensor import _wrap_dim
    from .ops.dispatch import dispatch
    from .ops.table import OPS

    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise RuntimeError(
            "norm(): input dtype should be either floating point or complex. Got "
            f"{E.scalar_type_name(input.dtype)} instead."
        )
    if dim is None:
        return dispatch(OPS["nn.norm_all"], input, p=float(p))
    dims = [_wrap_dim(d, input.ndim) for d in dim]
    for k, d in enumerate(dims):
        if d in dims[:k]:
            raise RuntimeError(E.DIM_REPEATED.format(d))
    if input.ndim == 0:
        dims = []
    elif not dims:
        dims = range(input.ndim)
    return dispatch(
        OPS["nn.norm_dim"], input, p=float(p), dim=tuple(sorted(dims)), keepdim=bool(keepdim)
    )


def grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners):
    modes = ("bilinear", "nearest", "bicubic")
    paddings = ("zeros", "border", "reflection")
    return F.grid_sample(
        input, grid, modes[interpolation_mode], paddings[padding_mode], align_corners
    )


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5, cudnn_enabled=True):
    return F.group_norm(input, num_groups, weight, bias, eps)


def hinge_embedding_loss(input, target, margin=1.0, reduction=0):
    return F.hinge_embedding_loss(input, target, margin, reduction=_reduction(reduction))


def instance_norm(
    input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps, cudnn_enabled
):
    return F.instance_norm(
        input, running_mean, running_var, weight, bias, use_input_stats, momentum, eps
    )


def kl_div(input, target, reduction=0, *, log_target=False):
    """``torch.kl_div``: ATen's kernel, whose mean is over every element (without ``F.kl_div``'s
    warning about it); not reduced by default (Note [Reduction defaults])."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return F.kl_div(input, target, reduction=_reduction(reduction), log_target=log_target)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5, cudnn_enable=True):
    return F.layer_norm(input, normalized_shape, weight, bias, eps)


def margin_ranking_loss(input1, input2, target, margin=0.0, reduction=0):
    return F.margin_ranking_loss(input1, input2, target, margin, reduction=_reduction(reduction))


def max_pool1d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return F.max_pool1d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)


def max_pool1d_with_indices(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return F.max_pool1d(
        input, kernel_size, _stride(stride), padding, dilation, ceil_mode, return_indices=True
    )


def max_pool2d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return F.max_pool2d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)


def max_pool3d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return F.max_pool3d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)


def nuclear_norm(input, dim=None, keepdim=False):
    """``torch.nuclear_norm(input, keepdim=False)`` or ``(input, dim, keepdim=False)``."""
    from . import linalg

    E.warn_once(_DEPRECATED.format("nuclear_norm", "matrix_norm(A, 'nuc', dim, keepdim)", 3229))
    if isinstance(dim, bool):  # the first form, keepdim given positionally
        dim, keepdim = None, dim
    elif isinstance(dim, int):  # an ``int[2]`` argument: one int fills both
        dim = (dim, dim)
    return linalg.matrix_norm(input, "nuc", (-2, -1) if dim is None else dim, keepdim)


def poisson_nll_loss(input, target, log_input, full, eps, reduction):
    return F.poisson_nll_loss(
        input, target, log_input, full, eps=eps, reduction=_reduction(reduction)
    )


def rms_norm(input, normalized_shape, weight=None, eps=None):
    return F.rms_norm(input, normalized_shape, weight, eps)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
    from .nn._functional_extra import _no_generator

    _no_generator(generator)
    return F.rrelu(input, lower, upper, training)


def selu(input):
    return F.selu(input)


def threshold(input, threshold, value):
    return F.threshold(input, threshold, value)


def triplet_margin_loss(
    anchor, positive, negative, margin=1.0, p=2.0, eps=1e-6, swap=False, reduction=0
):
    return F.triplet_margin_loss(
        anchor, positive, negative, margin, p, eps, swap, reduction=_reduction(reduction)
    )


def _methods() -> None:
    """``Tensor.hardshrink`` and ``Tensor.prelu``, as PyTorch's methods."""
    from ._tensor import Tensor

    def hardshrink_method(self, lambd=0.5):
        return F.hardshrink(self, lambd)

    def prelu_method(self, weight):
        return F.prelu(self, weight)

    hardshrink_method.__name__ = hardshrink_method.__qualname__ = "hardshrink"
    prelu_method.__name__ = prelu_method.__qualname__ = "prelu"
    Tensor.hardshrink = hardshrink_method
    Tensor.prelu = prelu_method


_methods()
