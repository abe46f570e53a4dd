"""Shape ops and indexing: views, joins, splits, gathers and ``Tensor.__getitem__``.

Every op here moves data without arithmetic, so forwards and gradients are exact.

Note [Strides]: PyTorch decides between a view and a copy (``reshape``, ``flatten``,
``contiguous``) and whether ``view`` is allowed from a tensor's strides. leafgrad arrays have no
strides, so the view ops of this module record the strides PyTorch's result would have on the
tensor (``_strides``); so do elementwise ops (Note [Iterator layouts] in ``iterator_layout.py``),
``clone``, the ``*_like`` factories and conversions of NumPy arrays. Any other tensor is taken as
contiguous.

Note [Eager shapes]: ``nonzero``, ``masked_select``, boolean-mask indexing and tensor repeats of
``repeat_interleave`` have data-dependent result shapes. They read the mask on the host and then
run a jit-friendly op whose size is static; they raise under ``jax.jit``.
"""

from __future__ import annotations

import contextlib
import functools
import math

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from .. import _autocast
from .. import _dtype as D
from .. import _errors as E
from .. import _storage as S
from .. import _tensor as _tensor_mod
from .. import _written_dims as written_dims
from .._arg_check import check_int
from .._factories import INT64_MAX, STORAGE_OVERFLOW, allocating, check_shape
from .._known import known_values
from .._random import torch_check_failed
from .._tensor import Tensor, _wrap_dim
from ..autograd import grad_mode
from ..autograd import saved as saved_mod
from ..autograd.graph import wrap_backward
from .api import keywords_at, refuse_backward, register_ops, stale_views_first, tensor_op
from .dispatch import broadcast_shapes, dispatch, physical_broadcast
from .formulas import formula
from .iterator_layout import contiguous_strides, is_contiguous, iterator_strides
from .table import OPS, OpDef

# --- PyTorch's messages (named here: _errors.py belongs to another module) -------------------
VIEW_STRIDE = (
    "view size is not compatible with input tensor's size and stride (at least one dimension "
    "spans across two contiguous subspaces). Use .reshape(...) instead."
)
INFER_ONE = "only one dimension can be inferred"
INVALID_SHAPE_DIM = "invalid shape dimension {} at index {} of shape {}"
AMBIGUOUS_RESHAPE = (
    "cannot reshape tensor of 0 elements into shape {} because the unspecified dimension size -1 "
    "can be any value and is ambiguous"
)
_SHAPE_CPP = (
    " (Triggered internally at /__w/pytorch/pytorch/aten/src/ATen/native/TensorShape.cpp:{}.)"
)
T_0D_WARNING = (
    "Tensor.T is deprecated on 0-D tensors. This function is the identity in these cases."
    + _SHAPE_CPP.format(4321)
)
T_WARNING = (
    "The use of `x.T` on tensors of dimension other than 2 to reverse their shape is deprecated "
    "and it will throw an error in a future release. Consider `x.mT` to transpose batches of "
    "matrices or `x.permute(*torch.arange(x.ndim - 1, -1, -1))` to reverse the dimensions of a "
    "tensor." + _SHAPE_CPP.format(4314)
)
MT_0D_WARNING = (
    "Tensor.mT is deprecated on 0-D tensors. This function is the identity in these cases."
    + _SHAPE_CPP.format(4373)
)
MH_0D_WARNING = (
    "Tensor.mH is deprecated on 0-D tensors. Consider using x.conj()." + _SHAPE_CPP.format(4382)
)
H_0D_WARNING = (
    "Tensor.H is deprecated on 0-D tensors. Consider using x.conj()." + _SHAPE_CPP.format(4335)
)
MISSING_ARG = '{}() missing 1 required positional arguments: "{}"'
VIEW_NO_ARGS = (
    "view() received an invalid combination of arguments - got (), but expected one of:\n"
    " * (torch.dtype dtype)\n"
    " * (tuple of ints size)\n"
)
_VIEW_SIGNATURES = ("(torch.dtype dtype)", "(tuple of ints size)")
_SPLIT_SIGNATURES = (
    "(Tensor input, int split_size, int dim = 0)",
    "(Tensor input, tuple of ints split_size, int dim = 0)",
)
T_DIM = "t() expects a tensor with <= 2 dimensions, but self is {}D"
MT_DIM = "tensor.{} is only supported on matrices or batches of matrices. Got {}-D tensor."
H_DIM = "tensor.H is only supported on matrices (2-D tensors). Got {}-D tensor."
H_BATCH = " For batches of matrices, consider using tensor.mH"
PERMUTE_LEN = (
    "permute(sparse_coo): number of dimensions in the tensor input does not match the length of "
    "the desired ordering of dimensions i.e. input.dim() = {} is not equal to len(dims) = {}"
)
PERMUTE_REPEATED = "permute(): duplicate dims are not allowed."
EXPAND_FEW = (
    "expand({}{{{}}}, size={}): the number of sizes provided ({}) must be greater or equal to the "
    "number of dimensions in the tensor ({})"
)
EXPAND_FEW_VMAP = (
    "expand: the number of sizes provided ({}) must be greater or equal to the number of "
    "dimensions in the tensor ({})"
)
EXPAND_LEADING = (
    "The expanded size of the tensor ({}) isn't allowed in a leading, non-existing dimension {}"
)
EXPAND_MISMATCH = (
    "The expanded size of the tensor ({}) must match the existing size ({}) at non-singleton "
    "dimension {}.  Target sizes: {}.  Tensor sizes: {}"
)
REPEAT_FEW = (
    "Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor"
)
FLIPLR = "Input must be >= 2-d."
FLIPUD = "Input must be >= 1-d."
ROLL_ALIGN = "shifts and dimensions must align. shifts: {}, dims:{}"
NARROW_START = "start out of range (expected to be in range of [{}, {}], but got {})"
NARROW_LENGTH = "start ({}) + length ({}) exceeds dimension size ({})."
NARROW_NEG = "narrow(): length must be non-negative."
SELECT_RANGE = "select(): index {} out of range for tensor of size {} at dimension {}"
INDEX_RANGE = "index {} is out of bounds for dimension {} with size {}"
CAT_EMPTY = "torch.cat(): expected a non-empty list of Tensors"
CAT_ZERO_DIM = "zero-dimensional tensor (at position {}) cannot be concatenated"
CAT_NDIM = "Tensors must have same number of dimensions: got {} and {}"
CAT_SIZES = (
    "Sizes of tensors must match except in dimension {}. Expected size {} but got size {} for "
    "tensor number {} in the list."
)
STACK_EMPTY = "stack expects a non-empty TensorList"
STACK_SIZES = "stack expects each tensor to be equal size, but got {} at entry 0 and {} at entry {}"
SPLIT_ZERO = "split_size can only be 0 if dimension size is 0, but got dimension size of {}"
SPLIT_NEG = "split expects split_size be non-negative, but got split_size={}"
SPLIT_SIZES_NEG = (
    "split_with_sizes expects split_sizes have only non-negative entries, but got split_sizes={}"
)
SPLIT_SUM = (
    "split_with_sizes expects split_sizes to sum exactly to {} (input tensor's size at dimension "
    "{}), but got split_sizes={}"
)
CHUNK_ZERO = "chunk expects `chunks` to be greater than 0, got: {}"
CHUNK_0D = "chunk expects at least a 1-dimensional tensor"
TENSOR_SPLIT_0D = (
    "tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims"
)
TENSOR_SPLIT_N = "number of sections must be larger than 0, got {}"
TRIL_DIM = "{}: input tensor must have at least 2 dimensions"
DIAG_DIM = "diag(): Supports 1D or 2D tensors. Got {}D"
DIAGONAL_SAME = "diagonal dimensions cannot be identical {}, {}"
MASK_BOOL = "masked_fill_ only supports boolean masks, but got mask with dtype {}"
MASK_VALUE_DIM = (
    "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with {} dimension(s)."
)
MASKED_SELECT_BOOL = "masked_select: expected BoolTensor for mask"
GATHER_DTYPE = "gather(): Expected dtype int32/int64 for index"
SCATTER_DTYPE = "scatter(): Expected dtype int32/int64 for index"
SCATTER_ADD_DTYPE = "scatter_add(): Expected dtype int32/int64 for index"
SCATTER_SELF_SRC = "scatter(): Expected self.dtype to be equal to src.dtype"
SCATTER_ADD_SELF_SRC = "scatter_add(): Expected self.dtype to be equal to src.dtype"
GATHER_NDIM = "Index tensor must have the same number of dimensions as input tensor"
SCATTER_NDIM = "Index tensor must have the same number of dimensions as self tensor"
SCATTER_SRC_NDIM = "Index tensor must have the same number of dimensions as src tensor"
GATHER_SIZE = (
    "Size does not match at dimension {} expected index {} to be no larger than self {} apart "
    "from dimension {}"
)
SCATTER_SIZE = (
    "Expected index {} to be no larger than self {} apart from dimension {} and to be no larger "
    "size than src {}"
)
INDEX_SELECT_VECTOR = "index_select(): Index is supposed to be a vector"
INDEX_SELECT_DTYPE = "index_select(): Expected dtype int32 or int64 for index"
INDEX_SELECT_RANGE = "index out of range in self"
INDEX_SELECT_BOUNDS = "INDICES element is out of DATA bounds, id={} axis_dim={}"
INDEX_SELECT_EMPTY_AXIS = "index_select(): self indexing axis dim should be positive"
SET_STORAGE = (
    "setStorage: sizes {}, strides {}, storage offset 0, and itemsize {} requiring a storage size "
    "of {} are out of bounds for storage of size 0"
)
INDEX_FILL_DTYPE = "index_fill_(): Expected dtype int64 for index."
INDEX_FILL_VECTOR = "Index has to be a vector/scalar"
INDEX_FILL_VALUE_DIM = (
    "index_fill_ only supports a 0-dimensional value tensor, but got tensor with {} dimension(s)."
)
INDEX_FILL_COMPLEX = "index_fill_(): Converting complex Scalar to non-complex type is not supported"
INDEX_FILL_SIGNATURES = (
    "(int dim, Tensor index, Tensor value)",
    "(int dim, Tensor index, Number value)",
)
VALUE_OVERFLOW = E.VALUE_OVERFLOW
AUTOGRAD_DTYPE = "Autograd not support dtype: {}"
TAKE_DTYPE = "take(): Expected a long tensor for index, but got {}"
TAKE_RANGE = "out of range: tried to access index {} on a tensor of {} elements."
TAKE_EMPTY = "take(): tried to take from an empty tensor"
TAD_NDIM = (
    "torch.take_along_dim(): input and indices should have the same number of dimensions, but "
    "got {} dimensions for input, and {} dimensions for indices"
)
TAD_DTYPE = "torch.take_along_dim(): dtype of indices should be Long but got {}"
NO_DIMS = "Dimension specified as {} but tensor has no dimensions"
INDEX_0D = (
    "invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` in C++ "
    "to convert a 0-dim tensor to a number"
)
SLICE_0D = "slice() cannot be applied to a 0-dim tensor."
TOO_MANY_INDICES = "too many indices for tensor of dimension {}"
INDEX_DTYPE = "tensors used as indices must be long, int, byte or bool tensors"
MASK_SHAPE = (
    "The shape of the mask {} at index {} does not match the shape of the indexed tensor {} at "
    "index {}"
)
STEP_POSITIVE = "step must be greater than zero"
STEP_ZERO = "slice step cannot be zero"
NON_TUPLE_INDEX = (
    "Using a non-tuple sequence for multidimensional indexing is deprecated and will be changed "
    "in pytorch 2.9; use x[tuple(seq)] instead of x[seq]. In pytorch 2.9 this will be "
    "interpreted as tensor index, x[torch.tensor(seq)], which will result either in an error or "
    "a different result (Triggered internally at "
    "/__w/pytorch/pytorch/torch/csrc/autograd/python_variable_indexing.cpp:349.)"
)
UINT8_INDEX = (
    "indexing with dtype torch.uint8 is now deprecated, please use a dtype torch.bool instead. "
    "(Triggered internally at /__w/pytorch/pytorch/aten/src/ATen/native/IndexingUtils.h:37.)"
)
RI_REPEATS_0D_1D = "repeats must be 0-dim or 1-dim tensor"
RI_REPEATS_SIZE = "repeats must have the same size as input along dim, but got repeats.size(0) = {} and input.size({}) = {}"  # noqa: E501
RI_REPEATS_NEG = "repeats can not be negative"
RI_INT_NEG = "Repeats must be non-negative"
NUMEL_OVERFLOW = "numel: integer multiplication overflow"
# leafgrad's own line after PyTorch's text: PyTorch's expand() allocates nothing.
EXPAND_COPIES = (
    "\nleafgrad's expand() copies its input (JAX arrays have no stride-0 views), and this result "
    "is too large to be stored"
)
RI_DTYPE = "\"repeat_interleave_cpu\" not implemented for '{}'"
VIEW_AS_REAL_DTYPE = "view_as_real is only supported for complex tensors"
VIEW_AS_REAL_CONJ = (
    "view_as_real doesn't work on unresolved conjugated tensors.  To resolve the conjugate tensor "
    "so you can view it as real, use self.resolve_conj(); however, be warned that the resulting "
    "tensor will NOT alias the original."
)
IMAG_DTYPE = "imag is not implemented for tensors with non-complex dtypes."
EAGER_ONLY = (
    "{}() has a result shape that depends on tensor values; it cannot run under jax.jit "
    "(leafgrad computes it eagerly)"
)


# --- strides (Note [Strides]) ----------------------------------------------------------------


_contiguous_strides = contiguous_strides


def _strides(t: Tensor) -> tuple:
    s = t.__dict__.get("_strides")
    return _contiguous_strides(t._data.shape) if s is None else s


_is_contiguous = is_contiguous  # PyTorch's ``is_contiguous`` of a shape and strides


def _root_laid_out(input: Tensor) -> tuple:
    """``(root, strides)``: the storage root of ``input`` (its array when it has none) and the
    strides its memory is laid out with."""
    from .tensor_info import _root_strides

    cell = input.__dict__.get("_storage")
    root = input._data if cell is None else cell.data
    return root, (_strides(input) if cell is None else _root_strides(cell, root.shape))


def _root_in_order(input: Tensor, op: str):
    """The storage root of ``input`` (its array when it has none), refused when its memory is
    not laid out in the root's order (these ops read positions of that memory)."""
    root, laid = _root_laid_out(input)
    if laid != _contiguous_strides(root.shape):
        raise NotImplementedError(
            f"leafgrad: {op} of a tensor whose storage is not laid out in order "
            "(channels_last, loaded strides) is not supported"
        )
    return root


def _set_strides(t: Tensor, strides) -> Tensor:
    strides = tuple(strides)
    if strides != _contiguous_strides(t._data.shape):
        t.__dict__["_strides"] = strides
    return t


def _compute_stride(oldshape, oldstride, newshape):
    """PyTorch's ``computeStride``: the strides of a view of another shape, or None."""
    if len(oldshape) == 0:
        return (1,) * len(newshape)
    numel = math.prod(oldshape)
    if numel == 0 and tuple(oldshape) == tuple(newshape):
        return tuple(oldstride)
    newstride = [0] * len(newshape)
    if numel == 0:
        for d in range(len(newshape) - 1, -1, -1):
            last = d == len(newshape) - 1
            newstride[d] = 1 if last else max(newshape[d + 1], 1) * newstride[d + 1]
        return tuple(newstride)
    view_d = len(newshape) - 1
    chunk_base = oldstride[-1]
    tensor_numel = view_numel = 1
    for td in range(len(oldshape) - 1, -1, -1):
        tensor_numel *= oldshape[td]
        if td == 0 or (oldshape[td - 1] != 1 and oldstride[td - 1] != tensor_numel * chunk_base):
            while view_d >= 0 and (view_numel < tensor_numel or newshape[view_d] == 1):
                newstride[view_d] = view_numel * chunk_base
                view_numel *= newshape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if td > 0:
                chunk_base = oldstride[td - 1]
                tensor_numel = view_numel = 1
    if view_d != -1:
        return None
    return tuple(newstride)


# --- dtype rules -------------------------------------------------------------------------------


def _same(meta, static):
    return (None,) * len(meta), meta[0][0]


def _promote_all(meta, static):
    rt = D.result_type_of([m for m in meta if m is not None])
    return (rt,) * len(meta), rt


def _split_rule(meta, static):
    return (None,), (meta[0][0],) * len(static["sizes"])


def _masked_fill_rule(meta, static):
    dt = meta[0][0]
    value = meta[2][0] if isinstance(meta[2], tuple) else None
    # a complex value into a real tensor: its real part, taken in the forward (no cast warning)
    if value is not None and value.is_complex and not dt.is_complex:
        return (None, None, None), dt
    return (None, None, dt), dt


# --- forwards ----------------------------------------------------------------------------------


def _slice(x, dim, start, stop, step):
    return lax.slice_in_dim(x, start, stop, step, dim)


def _transpose(x, dim0, dim1):
    # A 0-d tensor takes dims 0 and -1 (both wrapped to 0) and stays as it is.
    return jnp.swapaxes(x, dim0, dim1) if x.ndim else x


def _select(x, index, dim):
    # ``index`` is an operand, not a static argument, so ``x[i]`` for every ``i`` shares one
    # compiled function.
    return lax.dynamic_index_in_dim(x, index, dim, keepdims=False)


def _split(x, dim, sizes, with_sizes=False):
    out, start = [], 0
    for s in sizes:
        out.append(lax.slice_in_dim(x, start, start + s, 1, dim))
        start += s
    return tuple(out)


def _squeeze(x, dims, variant):
    return jnp.squeeze(x, dims) if dims else x


def _diag_embed(x, offset, dim1, dim2):
    n = x.shape[-1] + abs(offset)
    k = jnp.arange(x.shape[-1])
    rows, cols = (k, k + offset) if offset >= 0 else (k - offset, k)
    out = jnp.zeros(x.shape[:-1] + (n, n), x.dtype).at[..., rows, cols].set(x)
    # The two new dims sit last; PyTorch places them at dim1 < dim2 of the result.
    return jnp.moveaxis(out, (-2, -1), (dim1, dim2))


def _repeat(x, repeats):
    if len(repeats) == x.ndim and all(r == 1 for r in repeats):
        return x  # PyTorch's backward hands the gradient on unchanged
    x = x.reshape((1,) * (len(repeats) - x.ndim) + x.shape)
    return jnp.tile(x, repeats)


def _roll(x, shifts, dims):
    if not dims:
        return jnp.roll(x.reshape(-1), shifts[0]).reshape(x.shape)
    return jnp.roll(x, shifts, dims)


def _as_written(value, x):
    """A fill value as written into ``x``: a complex value's real part into a real tensor."""
    if jnp.iscomplexobj(value) and not jnp.iscomplexobj(x):
        return jnp.real(value).astype(x.dtype)
    return value


def _masked_fill(x, mask, value):
    return jnp.where(mask, _as_written(value, x), x)


def _masked_select(x, mask, n):
    shape = jnp.broadcast_shapes(x.shape, mask.shape)
    x, mask = jnp.broadcast_to(x, shape).reshape(-1), jnp.broadcast_to(mask, shape).reshape(-1)
    return x[jnp.nonzero(mask, size=n)[0]]


def _grid(index, dim):
    """Full index tuple for gather/scatter: ``index`` along ``dim``, iotas elsewhere."""
    return tuple(
        index if d == dim else lax.broadcasted_iota(jnp.int64, index.shape, d)
        for d in range(index.ndim)
    )


def _gather(x, index, dim):
    if x.ndim == 0:
        return x.reshape(index.shape)
    return x[_grid(index, dim)]


def _scatter(x, index, src, dim, mode):
    if x.ndim == 0:
        grid, src = (), src.reshape(())
    else:
        grid = _grid(index, dim)
        if not isinstance(src, (int, float, complex, bool)) and jnp.ndim(src):
            src = src[tuple(slice(0, s) for s in index.shape)]
    if mode == "add" and x.dtype == jnp.bool_:  # bool + bool is logical or in PyTorch
        out = x.astype(jnp.int8).at[grid].add(jnp.asarray(src).astype(jnp.int8))
        return out != 0
    ref = x.at[grid]
    return ref.add(src) if mode == "add" else ref.set(src)


def _index_select(x, index, dim):
    if x.ndim == 0:  # a 0-d input stays 0-d, whatever the shape of its one index
        return x
    return jnp.take(x, index.reshape(-1), axis=dim)


def _index_fill(x, index, value, dim):
    # the positions filled along ``dim``, each once (a repeated index adds nothing to the
    # value's gradient, as PyTorch's formula over ``unique(index)``)
    size = x.shape[dim] if x.ndim else 1
    hit = jnp.zeros((size,), jnp.bool_).at[index.reshape(-1)].set(True)
    shape = [1] * x.ndim
    if x.ndim:
        shape[dim] = size
    return jnp.where(hit.reshape(shape), _as_written(value, x), x)


def _take(x, index):
    return x.reshape(-1)[index]


def _index_forward(x, *indices, positions):
    key = [slice(None)] * x.ndim
    for p, i in zip(positions, indices):
        key[p] = i
    return x[tuple(key)]


def _view_op(name, fwd, grad_fn, **kw):
    return OpDef(name, fwd, grad_fn, ("self",), _same, view=True, **kw)


def _squeeze_name(dims, variant):
    """SqueezeBackward0 (no dim), SqueezeBackward1 (one dim), SqueezeBackward2 (dims)."""
    return f"SqueezeBackward{variant}"


def _split_name(dim, sizes, with_sizes=False):
    """SplitBackward0 (split_size), SplitWithSizesBackward0 (split_sizes)."""
    return "SplitWithSizesBackward0" if with_sizes else "SplitBackward0"


def _unsafe_split_name(dim, sizes, with_sizes=False):
    return "Unsafe" + _split_name(dim, sizes, with_sizes)


def _scatter_name(dim, mode):
    """ScatterBackward0 (scatter.src), ScatterAddBackward0 (scatter_add)."""
    return "ScatterAddBackward0" if mode == "add" else "ScatterBackward0"


register_ops(
    _view_op("view", jnp.reshape, "ViewBackward0"),
    _view_op("reshape_alias", jnp.reshape, "ReshapeAliasBackward0"),
    OpDef("unsafe_view", jnp.reshape, "UnsafeViewBackward0", ("self",), _same),
    _view_op("alias", lambda x: x, "AliasBackward0"),
    # mH/H of complex tensors: PyTorch's lazy conjugate view (values conjugated here).
    _view_op("conj_view", jnp.conj, "ConjBackward0"),
    # complex (..., ) -> real (..., 2): the storage's real view (Note [Real views] in _storage.py)
    OpDef(
        "view_as_real",
        lambda x: jnp.stack([jnp.real(x), jnp.imag(x)], -1),
        "ViewAsRealBackward0",
        ("self",),
        # the operand's dtype stated: a complex operand takes PyTorch's gradient convention
        lambda meta, static: ((meta[0][0],), meta[0][0].to_real()),
        view=True,
    ),
    # real (..., 2) -> complex (...): a complex view of real memory (Note [Complex views] in
    # _storage.py); ``dtype`` (the result's) tells the storage the element its positions count
    OpDef(
        "view_as_complex_view",
        lambda x, dtype: lax.complex(x[..., 0], x[..., 1]),
        "ViewAsComplexBackward0",
        ("self",),
        lambda meta, static: ((meta[0][0],), meta[0][0].to_complex()),
        view=True,
    ),
    # PyTorch's lazy negation (``imag`` of a conjugated tensor; values negated here)
    _view_op("neg_view", jnp.negative, "NegViewBackward0"),
    _view_op("squeeze_dims", _squeeze, _squeeze_name),
    _view_op("transpose", _transpose, "TransposeBackward0"),
    _view_op("t", lambda x: x.T, "TBackward0"),
    _view_op("permute", lambda x, dims: jnp.transpose(x, dims), "PermuteBackward0"),
    _view_op("expand", lambda x, shape: jnp.broadcast_to(x, shape), "ExpandBackward0"),
    _view_op("slice", _slice, "SliceBackward0"),
    OpDef(
        "select",
        _select,
        "SelectBackward0",
        ("self", "index"),
        _same,
        edges=("self",),
        view=True,
    ),
    _view_op(
        "diagonal",
        lambda x, offset, dim1, dim2: jnp.diagonal(x, offset, dim1, dim2),
        "DiagonalBackward0",
    ),
    OpDef(
        "split",
        _split,
        _split_name,
        ("self",),
        _split_rule,
        view=True,
    ),
    # unsafe_split: split's pieces, not recorded as views (writing one in place is not checked)
    OpDef("unsafe_split", _split, _unsafe_split_name, ("self",), _split_rule),
    OpDef("narrow_copy", _slice, "NarrowCopyBackward0", ("self",), _same),
    OpDef(
        "diagonal_copy",
        lambda x, offset: jnp.diagonal(x, offset),
        "DiagonalBackward0_copy",
        ("self",),
        _same,
    ),
    OpDef("repeat", _repeat, "RepeatBackward0", ("self",), _same),
    OpDef("flip", lambda x, dims: jnp.flip(x, dims), "FlipBackward0", ("self",), _same),
    OpDef("roll", _roll, "RollBackward0", ("self",), _same),
    OpDef("tril", lambda x, diagonal: jnp.tril(x, diagonal), "TrilBackward0", ("self",), _same),
    OpDef("triu", lambda x, diagonal: jnp.triu(x, diagonal), "TriuBackward0", ("self",), _same),
    OpDef("diag_embed", _diag_embed, "DiagEmbedBackward0", ("self",), _same),
    OpDef(
        "masked_fill_scalar",
        _masked_fill,
        "MaskedFillBackward0",
        ("self", "mask", "value"),
        _masked_fill_rule,
        edges=("self",),
        saves={"self": ("mask",)},
    ),
    OpDef(
        "masked_fill_tensor",
        _masked_fill,
        "MaskedFillBackward1",
        ("self", "mask", "value"),
        _masked_fill_rule,
        edges=("self", "value"),
        saves={"self": ("mask",), "value": ("mask",)},
    ),
    OpDef(
        "masked_select",
        _masked_select,
        "MaskedSelectBackward0",
        ("self", "mask"),
        _same,
        edges=("self",),
        saves={"self": ("self", "mask")},
    ),
    OpDef(
        "gather",
        _gather,
        "GatherBackward0",
        ("self", "index"),
        _same,
        edges=("self",),
        saves={"self": ("self", "index")},  # gather_backward(grad, self, dim, index, sparse_grad)
    ),
    OpDef(
        "scatter_src",
        _scatter,
        _scatter_name,
        ("self", "index", "src"),
        _same,
        edges=("self", "src"),
        saves={"self": ("index",), "src": ("index",)},
    ),
    # scatter_add: self's gradient is the gradient itself, so only src's needs the index
    OpDef(
        "scatter_add_src",
        _scatter,
        _scatter_name,
        ("self", "index", "src"),
        _same,
        edges=("self", "src"),
        saves={"src": ("index",)},
    ),
    OpDef(
        "scatter_value",
        _scatter,
        "ScatterBackward1",
        ("self", "index", "src"),
        lambda meta, static: ((None, None, meta[0][0]), meta[0][0]),
        edges=("self",),
        saves={"self": ("index",)},
    ),
    OpDef(
        "index_select",
        _index_select,
        "IndexSelectBackward0",
        ("self", "index"),
        _same,
        edges=("self",),
        saves={"self": ("index",)},
    ),
    OpDef(
        "index_fill_scalar",
        _index_fill,
        "IndexFillBackward0",
        ("self", "index", "value"),
        _masked_fill_rule,
        edges=("self",),
        saves={"self": ("index",)},
    ),
    OpDef(
        "index_fill_tensor",
        _index_fill,
        "IndexFillBackward1",
        ("self", "index", "value"),
        _masked_fill_rule,
        edges=("self", "value"),
        saves={"self": ("index",), "value": ("index",)},
    ),
    OpDef(
        "take",
        _take,
        "TakeBackward0",
        ("self", "index"),
        _same,
        edges=("self",),
        saves={"self": ("self", "index")},
    ),
)


# Ops over a list of tensors: one entry per list length, made on first use. The table holds the
# one-operand entry of each (named ``cat``, ``stack``, ``index``); longer lists use entries of the
# same facts kept here, so the table does not change with the calls a program happens to make.


def _cat_forward(*xs, dim, keep):
    return jnp.concatenate([xs[i] for i in keep], axis=dim)


def _stack_forward(*xs, dim):
    return jnp.stack(xs, axis=dim)


@functools.cache
def _cat_op(n: int) -> OpDef:
    names = tuple(f"tensors{i}" for i in range(n))
    return OpDef("cat", _cat_forward, "CatBackward0", names, _promote_all)


@functools.cache
def _stack_op(n: int) -> OpDef:
    names = tuple(f"tensors{i}" for i in range(n))
    return OpDef("stack", _stack_forward, "StackBackward0", names, _promote_all)


@functools.cache
def _index_op(k: int) -> OpDef:
    names = ("self", *(f"indices{j}" for j in range(k)))
    return OpDef(
        "index",
        _index_forward,
        "IndexBackward0",
        names,
        _same,
        edges=("self",),
        saves={"self": names[1:]},
    )


register_ops(_cat_op(1), _stack_op(1), _index_op(1))


# --- helpers ----------------------------------------------------------------------------------

_NUMBERS = (bool, int, float, complex, np.generic)


def _is_tracer(x) -> bool:
    return isinstance(x, jax.core.Tracer)


def _ints(args, fn: str, name: str = "size"):
    """``f(2, 3)``, ``f((2, 3))``, ``f([2, 3])`` and ``f(torch.Size)`` all give ``(2, 3)``;
    ``f()`` raises PyTorch's argument-parser error (``f([])`` gives ``()``)."""
    if not args:
        raise TypeError(VIEW_NO_ARGS if fn == "view" else MISSING_ARG.format(fn, name))
    if fn == "view":  # overloaded (a dtype): the parser lists both signatures
        try:
            return _ints(args, "view.size", name)
        except TypeError as err:
            if "failed to unpack" in str(err):  # read as a size already: its element's error
                raise
            raise TypeError(E.invalid_arguments("view", _VIEW_SIGNATURES, args)) from None
    fn = fn.partition(".")[0]
    if len(args) > 1:
        message = E.spread_ints_error(fn, name, args)
    else:
        message = E.ints_error(fn, name, " (position 1)", args[0])
        if isinstance(args[0], (tuple, list)):
            args = tuple(args[0])
    if message is not None:
        raise TypeError(message)
    return tuple(int(a) for a in args)


_need_tensor = E.need_tensor


def _view(t: Tensor, op: str, strides, **static) -> Tensor:
    return _set_strides(dispatch(OPS[op], t, **static), strides)


def _infer_size(shape, numel: int, t=None) -> tuple:
    """PyTorch's ``infer_size``: resolve one -1 in ``shape`` against ``numel`` (of ``t``,
    whose batch dims inside vmap PyTorch's message names)."""
    infer, known = None, 1
    for i, s in enumerate(shape):
        if s == -1:
            if infer is not None:
                raise RuntimeError(INFER_ONE)
            infer = i
        elif s >= 0:
            known *= s
        else:
            raise RuntimeError(INVALID_SHAPE_DIM.format(s, i, _list(shape)))
    if numel == known or (infer is not None and known > 0 and numel % known == 0):
        if infer is None:
            return tuple(shape)
        if known == 0:
            raise RuntimeError(AMBIGUOUS_RESHAPE.format(_list(shape)))
        out = list(shape)
        out[infer] = numel // known
        return tuple(out)
    if t is not None and isinstance(t._data, jax.core.Tracer):
        from ..func import batch_sizes

        lead = batch_sizes(t)  # PyTorch's vmap views the batched tensor with them in front
        shape, numel = (*lead, *shape), numel * math.prod(lead)
    raise RuntimeError(E.VIEW_SIZE.format(", ".join(str(s) for s in shape), numel))


@contextlib.contextmanager
def _storable(shape, t: Tensor, note: str = "", dtype: D.dtype | None = None):
    """Run the block that makes a new array of ``shape`` (``t``'s dtype and device unless
    ``dtype`` is given), with PyTorch's errors for a size that overflows or cannot be allocated
    (plus ``note``). The size is checked with Python ints first: XLA aborts the whole process for
    an element count past int64."""
    numel = 1
    for s in shape:
        numel *= s
        if numel > INT64_MAX:
            raise RuntimeError(STORAGE_OVERFLOW.format(shape=_list(shape)) + note)
    try:
        nbytes = check_shape(tuple(shape), (dtype or t._dtype).itemsize)
    except RuntimeError as e:
        raise RuntimeError(f"{e}{note}") from None
    with allocating(nbytes, t._device, note):
        yield


def _check_dims_unique(dims, ndim):
    wrapped = tuple(_wrap_dim(d, ndim) for d in dims)
    seen = set()
    for d in wrapped:
        if d in seen:
            raise RuntimeError(E.DIM_REPEATED.format(d))
        seen.add(d)
    return wrapped


# --- views -------------------------------------------------------------------------------------


_NO_SIZE = object()  # view's ``size`` keyword not given


@tensor_op("view", function=False)
def view(self, *shape, dtype=None, size=_NO_SIZE) -> Tensor:
    """``Tensor.view(*shape)`` (or ``size=``): a view of another shape, when the strides allow
    it; ``Tensor.view(dtype)``: the memory read as another dtype (Note [Dtype views])."""
    if dtype is not None and not shape:
        shape = (dtype,)
    if size is not _NO_SIZE and not shape:
        shape = (size,)
    if len(shape) == 1 and (
        isinstance(shape[0], D.dtype) or any(shape[0] is t for t in (float, int, bool, complex))
    ):
        return _view_dtype(self, D.to_dtype(shape[0]))  # the parser reads float as float64
    shape = _infer_size(_ints(shape, "view"), self.numel(), self)
    strides = _compute_stride(self._data.shape, _strides(self), shape)
    if strides is None:
        raise RuntimeError(VIEW_STRIDE)
    return _view(self, "view", strides, shape=shape)


# Note [Dtype views] in _storage.py: ``view(dtype)`` is not differentiable in PyTorch
# (``output_differentiability: [False]``): its result shares the storage and version counter but is
# no autograd view (``_base`` is None), does not require grad, and is a leaf.
VIEW_DTYPE_CONJ = (
    "torch.Tensor.view is not supported for conjugate view tensors when converting to a different "
    "dtype."
)
VIEW_DTYPE_NEG = (
    "torch.Tensor.view is not supported for tensors with negative bit set when converting to a "
    "different dtype."
)
_VIEW_DTYPE_TAIL = " to view {} as {} (different element sizes)"


def _view_dtype(self: Tensor, dtype: D.dtype) -> Tensor:
    if _is_conj(self):
        raise RuntimeError(VIEW_DTYPE_CONJ)
    if _is_neg(self):
        raise RuntimeError(VIEW_DTYPE_NEG)
    old, new = self._dtype.itemsize, dtype.itemsize
    shape, strides = self._data.shape, list(_strides(self))
    tail = _VIEW_DTYPE_TAIL.format(E.scalar_type_name(self._dtype), E.scalar_type_name(dtype))
    if old != new and not shape:
        raise RuntimeError("self.dim() cannot be 0" + tail)
    if old > new:
        r = old // new
        if strides[-1] != 1:
            raise RuntimeError(f"self.stride(-1) must be 1{tail}, but got {strides[-1]}")
        strides = [st * r for st in strides[:-1]] + [1]
    elif old < new:
        r = new // old
        if shape[-1] % r:
            raise RuntimeError(f"self.size(-1) must be divisible by {r}{tail}, but got {shape[-1]}")
        offset = _storage_offset(self)
        if offset % r:
            raise RuntimeError(
                f"self.storage_offset() must be divisible by {r}{tail}, but got {offset}"
            )
        if strides[-1] != 1:
            raise RuntimeError(f"self.stride(-1) must be 1{tail}, but got {strides[-1]}")
        for i, st in enumerate(strides[:-1]):
            if st % r:
                raise RuntimeError(f"self.stride({i}) must be divisible by {r}{tail}, but got {st}")
        strides = [st // r for st in strides[:-1]] + [1]
    out = dispatch(OPS["view_dtype"], self, dtype=dtype, from_size=old)
    _set_strides(out, strides)
    if self._inference and not grad_mode.is_inference_mode_enabled():
        out._inference = False  # a normal tensor with a counter of its own (measured)
    else:
        out._inference = self._inference
        out._version_counter = self._version_counter
    S.share(self, out, (OPS["view_dtype"], (("dtype", dtype), ("from_size", old)), None))
    return out


def _storage_offset(t: Tensor) -> int:
    """``t.storage_offset()`` (``ops/tensor_info.py``, which imports this module)."""
    from .tensor_info import storage_offset

    return storage_offset(t)


def _is_neg(t: Tensor) -> bool:
    """PyTorch's negative bit: an odd number of lazy negations from the storage root."""
    return sum(1 for op, _, _ in S.chain_of(t) if op.name == "neg_view") % 2 == 1


def _view_dtype_rule(meta, static):
    return (None,), static["dtype"]


# --- as_strided (Note [Strided views] in _storage.py) ----------------------------------------
AS_STRIDED_NEGATIVE = (
    "as_strided: Negative strides are not supported at the moment, got strides: {}"
)
AS_STRIDED_LENGTH = "mismatch in length of strides and shape"
STORAGE_SIZE_OVERFLOW = "Storage size calculation overflowed with sizes={} and strides={}"
INVALID_OFFSET = "Tensor: invalid storage offset {}"
STORAGE_BOUNDS = (
    "setStorage: sizes {}, strides {}, storage offset {}, and itemsize {} requiring a storage "
    "size of {} are out of bounds for storage of size {}"
)
_NO_STRIDE = object()


def _int_list(value, fn: str, name: str, pos: int) -> tuple:
    """An int list argument (no bare int) as PyTorch's parser reads it."""
    from .._arg_check import _list_error

    message = _list_error(fn, name, f" (position {pos})", value)
    if message is not None:
        raise TypeError(message)
    return tuple(int(a) for a in value)


@functools.lru_cache(maxsize=256)
def _strided_gather(size, stride, storage_offset, in_size, in_stride, in_offset):
    """How ``as_strided`` reads its input: ``("take", index)`` into the input's elements plus one
    zero (positions outside the input), or ``("spread", in positions, counts, out positions)``
    where input elements share memory (each gets its share of the gradient, as PyTorch's
    ``as_strided_backward`` divides by the count)."""
    p_in = S.strided_positions(in_size, in_stride, in_offset).reshape(-1)
    p_out = S.strided_positions(size, stride, storage_offset)
    if len(np.unique(p_in)) == p_in.size:
        where = np.full(int(max(p_in.max(initial=-1), p_out.max(initial=-1))) + 1, p_in.size)
        where[p_in] = np.arange(p_in.size)
        idx = where[p_out]
        return ("take", idx, bool((idx == p_in.size).any()))
    n = int(max(p_in.max(initial=-1), p_out.max(initial=-1))) + 1
    counts = np.bincount(p_in, minlength=n)
    return ("spread", p_in, np.maximum(counts, 1)[p_in], p_out)


def _root_layout(input: Tensor) -> dict:
    """``{"root_stride": ...}`` when the storage root of ``input`` is laid out other than in
    order (a permutation of its dims: ``empty_strided``, a transposed clone), for the view's
    step to map storage positions back to the root's elements (Note [Strided views]); refused
    for a root seen through a dtype or real view."""
    root, laid = _root_laid_out(input)
    if laid == _contiguous_strides(root.shape):
        return {}
    chain = S.chain_of(input)
    if (
        S.unit_dtype(chain) is not None
        or S.is_real_view(chain)
        or not S.dense_layout(root.shape, laid)
    ):
        _root_in_order(input, "as_strided")
    return {"root_stride": tuple(laid)}


def _as_strided_forward(x, size, stride, storage_offset, in_stride, in_offset, root_stride=None):
    # ``root_stride`` is read by the view step's index map (Note [Strided views]), not here
    plan = _strided_gather(
        tuple(size), tuple(stride), storage_offset, x.shape, tuple(in_stride), in_offset
    )
    flat = x.reshape(-1)
    if plan[0] == "take":
        _, idx, outside = plan
        if outside:
            flat = jnp.concatenate([flat, jnp.zeros((1,), flat.dtype)])
        return flat[jnp.asarray(idx)]
    _, p_in, counts, p_out = plan
    n = int(max(p_in.max(initial=-1), p_out.max(initial=-1))) + 1
    if jnp.issubdtype(flat.dtype, jnp.inexact):
        storage = jnp.zeros((n,), flat.dtype).at[p_in].add(flat / counts.astype(flat.dtype))
    else:
        storage = jnp.zeros((n,), flat.dtype).at[p_in].set(flat)
    return storage[jnp.asarray(p_out)]


@tensor_op("as_strided")
def as_strided(input, size, stride=_NO_STRIDE, storage_offset=None) -> Tensor:
    """``as_strided``: a view of the storage's elements at ``storage_offset + sum(i * stride)``
    (Note [Strided views] in _storage.py)."""

    _need_tensor(input, "as_strided", "input", 1)
    size = _int_list(size, "as_strided", "size", 1)
    if stride is _NO_STRIDE:
        raise TypeError(MISSING_ARG.format("as_strided", "stride"))
    stride = _int_list(stride, "as_strided", "stride", 2)
    in_offset = _storage_offset(input)
    offset = in_offset if storage_offset is None else int(storage_offset)
    cell = input.__dict__.get("_storage")
    root = input._data if cell is None else cell.data
    storage_bytes = int(np.prod(root.shape, dtype=np.int64)) * root.dtype.itemsize
    _check_strided(size, stride, offset, input._dtype.itemsize, storage_bytes)
    out = dispatch(
        OPS["as_strided"],
        input,
        size=size,
        stride=stride,
        storage_offset=offset,
        in_stride=tuple(_strides(input)),
        in_offset=in_offset,
        **_root_layout(input),
    )
    _set_strides(out, stride)
    plan = _strided_gather(
        size, stride, offset, input._data.shape, tuple(_strides(input)), in_offset
    )
    if plan[0] == "spread" or plan[2]:
        # elements outside the input (or shared by it) read from the storage (Note [Strided views])
        cell = out.__dict__.get("_storage")
        if cell is not None:
            out._data = S.gather(S.chain_of(out))(cell.data)
    if storage_offset is None:  # AsStridedBackward0 keeps the optional offset as not given
        saved_mod.keep_written(out, storage_offset=None)
    return out


@tensor_op("as_strided_")
def as_strided_(input, size, stride=_NO_STRIDE, storage_offset=None) -> Tensor:
    """``as_strided_``: this tensor takes ``as_strided``'s geometry in place
    (``AsStridedBackward1``; leafgrad/ops/inplace_shape.py)."""
    from .inplace_shape import _meta_inplace

    _need_tensor(input, "as_strided_", "input", 1)
    return _meta_inplace("as_strided", "AsStridedBackward1")(input, size, stride, storage_offset)


AS_STRIDED_SCATTER_SIZE = (
    "expected src to have a size equal to the slice of self. src size = {}, slice size = {}"
)
AS_STRIDED_SCATTER_GRAD = (
    '!self.requires_grad() || self.is_contiguous() INTERNAL ASSERT FAILED at "/__w/pytorch/'
    'pytorch/aten/src/ATen/native/TensorShape.cpp":4754, please report a bug to PyTorch. '
    "as_strided_scatter is currently only supported for contiguous inputs"
)


def _check_strided(size, stride, offset: int, itemsize: int, storage_bytes: int) -> None:
    """PyTorch's ``setStrided`` checks (and ``checkInBoundsForStorage``)."""
    if len(size) != len(stride):
        raise RuntimeError(AS_STRIDED_LENGTH)
    if any(st < 0 for st in stride):
        raise RuntimeError(AS_STRIDED_NEGATIVE.format(_list(stride)))
    if any(n < 0 for n in size):
        raise RuntimeError(STORAGE_SIZE_OVERFLOW.format(_list(size), _list(stride)))
    if math.prod(size):
        need = (1 + sum((n - 1) * st for n, st in zip(size, stride))) * itemsize
        if offset * itemsize + need > storage_bytes:
            raise RuntimeError(
                STORAGE_BOUNDS.format(
                    _list(size),
                    _list(stride),
                    offset,
                    itemsize,
                    offset * itemsize + need,
                    storage_bytes,
                )
            )
    if offset < 0:
        raise RuntimeError(INVALID_OFFSET.format(offset))


@functools.lru_cache(maxsize=256)
def _scatter_positions(in_size, in_stride, in_offset, size, stride, offset):
    """``(input elements written, the src element each gets, whether the written positions
    repeat)``: the input's elements (C order) at the storage positions of the strided layout."""
    p_in = S.strided_positions(in_size, in_stride, in_offset).reshape(-1)
    p_out = S.strided_positions(size, stride, offset).reshape(-1)
    n = int(max(p_in.max(initial=-1), p_out.max(initial=-1))) + 1
    where = np.full(n, -1, np.int64)
    where[p_out] = np.arange(p_out.size)
    j = where[p_in]
    hit = np.nonzero(j >= 0)[0]
    return hit, j[hit], len(np.unique(p_out)) < p_out.size


def _zero_valued(a):
    """``a - stop_gradient(a)``: exactly zero, with the derivative of ``a`` (zero where ``a`` is
    not finite, where the difference is not)."""
    return jnp.where(jnp.isfinite(a), a - lax.stop_gradient(a), jnp.zeros((), a.dtype))


def _as_strided_scatter_forward(
    x, src, size, stride, storage_offset, in_stride, in_offset, grad_offset
):
    # Note [as_strided_scatter gradients]: PyTorch's formulas read the gradient as a contiguous
    # tensor at the positions of ``size``, ``stride`` and the given offset (0 when none):
    # ``as_strided_scatter_backward`` gives ``self`` the gradient there (not elsewhere), and
    # ``src`` gets ``grad.contiguous().as_strided(size, stride, offset)``. The value is the
    # clone with ``src`` written; those derivatives ride on exactly-zero terms.
    hit, j, _ = _scatter_positions(
        x.shape, tuple(in_stride), in_offset, tuple(size), tuple(stride), storage_offset
    )
    flat, src_flat = x.reshape(-1), src.reshape(-1).astype(x.dtype)
    value = flat.at[jnp.asarray(hit)].set(src_flat[jnp.asarray(j)])
    if not jnp.issubdtype(x.dtype, jnp.inexact):
        return value.reshape(x.shape)
    at = jnp.asarray(S.strided_positions(size, stride, grad_offset).reshape(-1))
    written = jnp.zeros(flat.shape, jnp.bool_).at[at].set(True)
    moved = jnp.zeros(flat.shape, x.dtype).at[at].add(src_flat)
    out = lax.stop_gradient(value) + jnp.where(written, _zero_valued(flat), 0)
    return (out + _zero_valued(moved)).reshape(x.shape)


def _as_strided_scatter_rule(meta, static):
    return (None, meta[0][0]), meta[0][0]


@tensor_op("as_strided_scatter")
def as_strided_scatter(input, src, size, stride=_NO_STRIDE, storage_offset=None) -> Tensor:
    """``as_strided_scatter``: a clone of ``input`` and its storage (``clone_preserve_strides``)
    with ``src`` written at the positions ``as_strided`` would view; the result shows the
    input's elements (Note [Strided views] in _storage.py)."""
    from .inplace import _overlaps

    _need_tensor(input, "as_strided_scatter", "input", 1)
    _need_tensor(src, "as_strided_scatter", "src", 2)
    size = _int_list(size, "as_strided_scatter", "size", 3)
    if stride is _NO_STRIDE:
        raise TypeError(MISSING_ARG.format("as_strided_scatter", "stride"))
    stride = _int_list(stride, "as_strided_scatter", "stride", 4)
    shape, in_stride = input._data.shape, tuple(_strides(input))
    if (
        input._requires_grad
        and grad_mode.is_grad_enabled()
        and not _is_contiguous(shape, in_stride)
    ):
        raise RuntimeError(AS_STRIDED_SCATTER_GRAD)
    itemsize = input._dtype.itemsize
    if _overlaps(input):  # PyTorch clones it contiguous
        in_stride, in_offset = _contiguous_strides(shape), 0
        storage_bytes = math.prod(shape) * itemsize
    else:
        root = _root_in_order(input, "as_strided_scatter")
        in_offset = _storage_offset(input)
        storage_bytes = int(np.prod(root.shape, dtype=np.int64)) * root.dtype.itemsize
    offset = in_offset if storage_offset is None else int(storage_offset)
    _check_strided(size, stride, offset, itemsize, storage_bytes)
    if tuple(src._data.shape) != size:
        raise RuntimeError(AS_STRIDED_SCATTER_SIZE.format(_list(src._data.shape), _list(size)))
    if _scatter_positions(shape, in_stride, in_offset, size, stride, offset)[2]:
        raise NotImplementedError(
            "leafgrad: as_strided_scatter into overlapping positions is not supported"
        )
    out = dispatch(
        OPS["as_strided_scatter"],
        input,
        src,
        size=size,
        stride=stride,
        storage_offset=offset,
        in_stride=in_stride,
        in_offset=in_offset,
        grad_offset=0 if storage_offset is None else int(storage_offset),
    )
    # (PyTorch's result keeps the input's storage offset too; leafgrad's starts its storage)
    return _set_strides(out, in_stride)


register_ops(
    OpDef(
        "as_strided_scatter",
        _as_strided_scatter_forward,
        "AsStridedScatterBackward0",
        ("self", "src"),
        _as_strided_scatter_rule,
    ),
    _view_op("as_strided", _as_strided_forward, "AsStridedBackward0"),
    # not recorded (Note [Dtype views]): its result is no autograd view
    OpDef(
        "view_dtype",
        lambda x, dtype, from_size: S.reinterpret(x, dtype.np),
        "",
        ("self",),
        _view_dtype_rule,
        differentiable=(),
    ),
)


@tensor_op("view_as", function=False)
def view_as(self, other: Tensor) -> Tensor:
    """``Tensor.view_as``: ``self.view(other.shape)``."""
    return view(self, tuple(other.shape))


@tensor_op("reshape")
def reshape(self, *shape) -> Tensor:
    """``reshape``: ``view`` when contiguous, ``_reshape_alias`` when the strides allow a view,
    else a copy (``clone`` then ``_unsafe_view``)."""
    shape = _infer_size(_ints(shape, "reshape", "shape"), self.numel(), self)
    old = _strides(self)
    strides = _compute_stride(self._data.shape, old, shape)
    if strides is not None:
        contiguous = _is_contiguous(self._data.shape, old)
        return _view(self, "view" if contiguous else "reshape_alias", strides, shape=shape)
    return dispatch(OPS["unsafe_view"], _clone(self), shape=shape)


@tensor_op("reshape_as", function=False)
def reshape_as(self, other: Tensor) -> Tensor:
    """``Tensor.reshape_as``."""
    return reshape(self, tuple(other.shape))


@tensor_op("flatten")
def flatten(input, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    """``flatten``: ``reshape`` merging dims ``start_dim..end_dim``; itself when nothing merges."""
    n = input._data.ndim
    if n == 0:
        return reshape(input, (1,))
    start, end = _wrap_dim(start_dim, n), _wrap_dim(end_dim, n)
    if start > end:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if start == end:
        return input
    s = input._data.shape
    return reshape(input, s[:start] + (math.prod(s[start : end + 1]),) + s[end + 1 :])


@tensor_op("unflatten", method=False)
def unflatten(input, dim: int, sizes) -> Tensor:
    """``unflatten``: split one dim into ``sizes`` (one may be -1)."""
    return _unflatten(input, dim, sizes, 3)


@tensor_op("unflatten", function=False)
def unflatten_method(self, dim: int, sizes) -> Tensor:
    """``Tensor.unflatten``: its builtin's messages count from ``dim``."""
    return _unflatten(self, dim, sizes, 2)


def _unflatten(input, dim, sizes, position: int) -> Tensor:
    from .._arg_check import _list_error

    message = _list_error("unflatten", "sizes", f" (position {position})", sizes)
    if message is not None:
        raise TypeError(message)
    n = input._data.ndim
    d = _wrap_dim(dim, n)
    sizes = tuple(int(s) for s in sizes)
    if len(sizes) == 0:
        raise RuntimeError("unflatten: sizes must be non-empty")
    inferred = _infer_size(sizes, input._data.shape[d]) if -1 in sizes else sizes
    if math.prod(inferred) != input._data.shape[d]:
        raise RuntimeError(
            f"unflatten: Provided sizes {_list(sizes)} don't multiply up to the size of dim "
            f"{dim} ({input._data.shape[d]}) in the input tensor"
        )
    s = input._data.shape
    return view(input, s[:d] + inferred + s[d + 1 :])


def _list(shape) -> str:
    return "[" + ", ".join(str(s) for s in shape) + "]"


@tensor_op("squeeze")
def squeeze(input, dim=None) -> Tensor:
    """``squeeze``: drop size-1 dims (all, one, or those of a tuple)."""
    n, shape, st = input._data.ndim, input._data.shape, _strides(input)
    if dim is None:
        dims, variant = tuple(d for d in range(n) if shape[d] == 1), 0
    elif isinstance(dim, (tuple, list)):
        dims = tuple(d for d in _check_dims_unique(dim, n) if n and shape[d] == 1)
        variant = 2
    else:
        d = _wrap_dim(dim, n)
        dims, variant = ((d,) if n and shape[d] == 1 else ()), 1
    strides = [s for i, s in enumerate(st) if i not in dims]
    out = _view(input, "squeeze_dims", strides, dims=tuple(sorted(dims)), variant=variant)
    if variant:  # PyTorch's node keeps the dim (or dims) as given, squeezed or not
        saved_mod.keep_written(out, dim=tuple(dim) if variant == 2 else dim)
    return out


@tensor_op("unsqueeze")
def unsqueeze(input, dim: int) -> Tensor:
    """``unsqueeze``: insert a size-1 dim."""
    n = input._data.ndim
    d = _wrap_dim(dim, n + 1)
    st = list(_strides(input))
    st.insert(d, 1 if d >= n else input._data.shape[d] * st[d])
    return _view(input, "unsqueeze", st, dim=d)


@tensor_op("transpose", "swapdims")
def transpose(input, dim0: int, dim1: int) -> Tensor:
    """``transpose``: swap two dims."""
    n = input._data.ndim
    a, b = _wrap_dim(dim0, n), _wrap_dim(dim1, n)
    st = list(_strides(input))
    if n:
        st[a], st[b] = st[b], st[a]
    return _view(input, "transpose", st, dim0=a, dim1=b)


@tensor_op("swapaxes")
def swapaxes(input, axis0: int, axis1: int) -> Tensor:
    """``swapaxes``: ``transpose`` under NumPy's names for the dims."""
    return transpose(input, axis0, axis1)


@tensor_op("t")
def t(input) -> Tensor:
    """``t``: transpose a tensor of at most 2 dims."""
    n = input._data.ndim
    if n > 2:
        raise RuntimeError(T_DIM.format(n))
    return _view(input, "t", tuple(reversed(_strides(input))))


def _permute(t: Tensor, dims) -> Tensor:
    st = _strides(t)
    return _view(t, "permute", [st[d] for d in dims], dims=tuple(dims))


@tensor_op("permute")
def permute(input, *dims) -> Tensor:
    """``permute``: reorder dims."""
    dims = _ints(dims, "permute", "dims")
    n = input._data.ndim
    if len(dims) != n:
        raise RuntimeError(PERMUTE_LEN.format(n, len(dims)))
    wrapped = tuple(_wrap_dim(d, n) for d in dims)
    if len(set(wrapped)) != len(wrapped):
        raise RuntimeError(PERMUTE_REPEATED)
    return _permute(input, wrapped)


def _T(self) -> Tensor:
    n = self._data.ndim
    if n != 2:
        E.warn_once(T_0D_WARNING if n == 0 else T_WARNING)
    return _permute(self, tuple(range(n - 1, -1, -1)))


# On 0-d tensors PyTorch's mT, mH and H warn (once) and return the tensor itself (conjugated
# for mH and H), not a view of it.


def _mT(self) -> Tensor:
    if self._data.ndim == 0:
        E.warn_once(MT_0D_WARNING)
        return self
    if self._data.ndim < 2:
        raise RuntimeError(MT_DIM.format("mT", self._data.ndim))
    out = transpose(self, -2, -1)
    written_dims.note(out, self._data.ndim, dim0=-2, dim1=-1)  # Note [Dims as written]
    return out


def _mH(self) -> Tensor:
    if self._data.ndim == 0:
        E.warn_once(MH_0D_WARNING)
        return _conj(self)
    if self._data.ndim < 2:
        raise RuntimeError(MT_DIM.format("mH", self._data.ndim))
    return _conj(transpose(self, -2, -1))


def _H(self) -> Tensor:
    if self._data.ndim == 0:
        E.warn_once(H_0D_WARNING)
        return _conj(self)
    if self._data.ndim != 2:
        n = self._data.ndim
        raise RuntimeError(H_DIM.format(n) + (H_BATCH if n > 2 else ""))
    return _conj(transpose(self, -2, -1))


def _conj(t: Tensor) -> Tensor:
    return _view(t, "conj_view", _strides(t)) if t._dtype.is_complex else t


def _is_conj(t: Tensor) -> bool:
    """PyTorch's conjugate bit: an odd number of lazy conjugations from the storage root."""
    if not t._dtype.is_complex:
        return False
    return sum(1 for op, _, _ in S.chain_of(t) if op.name == "conj_view") % 2 == 1


def _as_real(t: Tensor) -> Tensor:
    return _view(t, "view_as_real", tuple(2 * s for s in _strides(t)) + (1,))


@tensor_op("view_as_real", method=False)
def view_as_real(input) -> Tensor:
    """``torch.view_as_real``: a complex tensor viewed as real, the parts in a last dim of 2."""
    _need_tensor(input, "view_as_real", "input", 1)
    if not input._dtype.is_complex:
        raise RuntimeError(VIEW_AS_REAL_DTYPE)
    if _is_conj(input):
        raise RuntimeError(VIEW_AS_REAL_CONJ)
    return _as_real(input)


# Note [Complex views] in _storage.py: ``view_as_complex`` views real memory as complex, each
# pair along a last dim of 2 (stride 1) one element. PyTorch's checks, in its order.
VIEW_AS_COMPLEX_DTYPE = (
    "view_as_complex is only supported for half, float and double tensors, but got a tensor of "
    "scalar type: {}"
)
VIEW_AS_COMPLEX_DIM = "Input tensor must have one or more dimensions"
VIEW_AS_COMPLEX_SIZE = "Tensor must have a last dimension of size 2"
VIEW_AS_COMPLEX_STRIDE = "Tensor must have a last dimension with stride 1"
VIEW_AS_COMPLEX_STRIDES = "Tensor must have a stride divisible by 2 for all but last dimension"
VIEW_AS_COMPLEX_OFFSET = "Tensor must have a storage_offset divisible by 2"


@tensor_op("view_as_complex", method=False)
@_autocast.policy("fp32")
def view_as_complex(input) -> Tensor:
    """``torch.view_as_complex``: a real tensor with a last dim of 2 viewed as complex (the view
    shares its memory: Note [Complex views] in _storage.py)."""

    _need_tensor(input, "view_as_complex", "input", 1)
    if input._dtype not in (D.float16, D.float32, D.float64):
        raise RuntimeError(VIEW_AS_COMPLEX_DTYPE.format(E.scalar_type_name(input._dtype)))
    shape, strides = input._data.shape, _strides(input)
    if not shape:
        raise RuntimeError(VIEW_AS_COMPLEX_DIM)
    if shape[-1] != 2:
        raise RuntimeError(VIEW_AS_COMPLEX_SIZE)
    if strides[-1] != 1:
        raise RuntimeError(VIEW_AS_COMPLEX_STRIDE)
    if any(st % 2 for st in strides[:-1]):
        raise RuntimeError(VIEW_AS_COMPLEX_STRIDES)
    if _storage_offset(input) % 2:
        raise RuntimeError(VIEW_AS_COMPLEX_OFFSET)
    dtype = input._dtype.to_complex()  # float16: leafgrad has no complex32 (NotImplementedError)
    _root_in_order(input, "view_as_complex")
    return _view(input, "view_as_complex_view", [st // 2 for st in strides[:-1]], dtype=dtype)


@formula("view_as_complex_view")
def _view_as_complex_formula(ctx):
    # view_as_real(grad.contiguous().resolve_conj())
    return {"self": view_as_real(ctx.grad.contiguous().resolve_conj())}


@tensor_op("real", method=False)
def real(input) -> Tensor:
    """``torch.real``: a view of the real part of a complex tensor; a real tensor itself."""
    _need_tensor(input, "real", "input", 1)
    return _real(input)


@tensor_op("imag", method=False)
def imag(input) -> Tensor:
    """``torch.imag``: a view of the imaginary part of a complex tensor."""
    _need_tensor(input, "imag", "input", 1)
    return _imag(input)


def _real(self: Tensor) -> Tensor:
    if not self._dtype.is_complex:
        return self
    if _is_conj(self):
        self = _conj(self)
    return _select_view(_as_real(self), self._data.ndim, 0)


def _imag(self: Tensor) -> Tensor:
    if not self._dtype.is_complex:
        raise RuntimeError(IMAG_DTYPE)
    conj = _is_conj(self)
    r = _as_real(_conj(self) if conj else self)
    if conj:
        r = _view(r, "neg_view", _strides(r))
    return _select_view(r, self._data.ndim, 1)


def _set_part(part):
    def setter(self: Tensor, value) -> None:
        from .index_put import _value_tensor

        view = part(self)
        view.copy_(_value_tensor(view, value))

    return setter


tensor_op("real", function=False)(property(_real, _set_part(_real)))
tensor_op("imag", function=False)(property(_imag, _set_part(_imag)))


tensor_op("T", function=False)(property(_T))
tensor_op("mT", function=False)(property(_mT))
tensor_op("mH", function=False)(property(_mH))
tensor_op("H", function=False)(property(_H))


def alias(t: Tensor) -> Tensor:
    """A new view of the whole tensor (``AliasBackward0``)."""
    return _view(t, "alias", _strides(t))


@tensor_op("movedim", "moveaxis")
def movedim(input, source, destination) -> Tensor:
    """``movedim``: move dims ``source`` to positions ``destination``."""
    n = input._data.ndim
    src = (source,) if isinstance(source, int) else tuple(source)
    dst = (destination,) if isinstance(destination, int) else tuple(destination)
    if len(src) != len(dst):
        raise RuntimeError(
            f"movedim: Invalid source or destination dims: source ({_list(src)} dims) should "
            f"contain the same number of dims as destination ({_list(dst)} dims)"
        )
    wrapped_src = tuple(_wrap_dim(d, n) for d in src)
    wrapped_dst = tuple(_wrap_dim(d, n) for d in dst)
    for name, given, dims in (("source", src, wrapped_src), ("destination", dst, wrapped_dst)):
        if len(set(dims)) != len(dims):
            raise RuntimeError(f"movedim: repeated dim in `{name}` ({_list(given)})")
    if n == 0:  # PyTorch: a 0-d tensor's movedim is an alias
        return alias(input)
    src, dst = wrapped_src, wrapped_dst
    order = [-1] * n
    for s, d in zip(src, dst):
        order[d] = s
    rest = iter(d for d in range(n) if d not in src)
    order = [next(rest) if o == -1 else o for o in order]
    return _permute(input, tuple(order))


def _lead(*tensors) -> tuple:
    """Inside vmap: the batch sizes PyTorch's batch rules put in front of the physical operands,
    whose shapes and dims its errors name (``func.batch_sizes``); () outside."""
    if not any(isinstance(t._data, jax.core.Tracer) for t in tensors):
        return ()
    from ..func import batch_sizes

    return batch_sizes(*tensors)


def _expand_shape(t: Tensor, sizes) -> tuple:
    """The shape ``t.expand(*sizes)`` has, with PyTorch's errors; inside vmap, those of its batch
    rule, which views the physical tensor with size-1 dims after the batch dims, for the new
    dims, and expands that (so a -1 there means 1)."""
    error = _expand_error(t, t._data.shape, sizes)
    if isinstance(error, tuple):
        return error
    lead = _lead(t)
    if not lead:
        raise error
    shape = t._data.shape
    if len(sizes) < len(shape):
        raise RuntimeError(EXPAND_FEW_VMAP.format(len(sizes), len(shape)))
    physical = (*lead, *(1,) * (len(sizes) - len(shape)), *shape)
    out = _expand_error(t, physical, (*lead, *sizes))
    if isinstance(out, tuple):
        return out[len(lead) :]
    raise out


def _expand_error(t: Tensor, shape, sizes) -> tuple | RuntimeError:
    """The shape ``t`` (of ``shape``) expanded to ``sizes`` has, else the error to raise."""
    n, m = len(sizes), len(shape)
    if n < m:
        return RuntimeError(
            EXPAND_FEW.format(
                E.tensor_type_name(t._dtype, t._device), _list(shape), _list(sizes), n, m
            )
        )
    out = [0] * n
    for i in reversed(range(n)):  # PyTorch's inferExpandGeometry checks the last dim first
        s, j = sizes[i], i - (n - m)
        if j < 0:
            if s == -1:  # another negative size passes, then overflows the numel
                return RuntimeError(EXPAND_LEADING.format(s, i))
            out[i] = s
        elif s == -1:
            out[i] = shape[j]
        elif shape[j] != s and shape[j] != 1:
            return RuntimeError(EXPAND_MISMATCH.format(s, shape[j], i, _list(sizes), _list(shape)))
        else:
            out[i] = s
    if min(out, default=0) < 0 and 0 not in out:
        # a negative size over a size-1 dim passes PyTorch's check; its numel (of the sizes
        # read as unsigned) overflows
        return RuntimeError(NUMEL_OVERFLOW)
    return tuple(out)


def _expand_strides(old_shape, old_strides, shape) -> list:
    """PyTorch's ``inferExpandGeometry``: an expanded dim gets stride 0; a new leading dim of
    size 1 gets the stride of the dims inside it (size times stride of the next dim)."""
    if not old_shape:
        return [0] * len(shape)
    off = len(shape) - len(old_shape)
    strides = [0] * len(shape)
    for i in reversed(range(len(shape))):
        if i >= off:
            size, stride = old_shape[i - off], old_strides[i - off]
        else:
            size, stride = 1, shape[i + 1] * strides[i + 1]
        strides[i] = 0 if size != shape[i] else stride
    return strides


def _expand(t: Tensor, shape, note: str = EXPAND_COPIES) -> Tensor:
    strides = _expand_strides(t._data.shape, _strides(t), shape)
    with _storable(shape, t, note):
        return _view(t, "expand", strides, shape=tuple(shape))


@tensor_op("expand", function=False)
@keywords_at(1, "size")
def expand(self, *sizes, implicit: bool = False) -> Tensor:
    """``Tensor.expand``: broadcast size-1 dims without copying (``implicit`` only marks an
    expand the tracer inserted)."""
    return _expand(self, _expand_shape(self, _ints(sizes, "expand")))


@tensor_op("expand_as", function=False)
def expand_as(self, other: Tensor) -> Tensor:
    """``Tensor.expand_as``."""
    return expand(self, tuple(other.shape))


@tensor_op("broadcast_to")
def broadcast_to(input, size, *more) -> Tensor:
    """``broadcast_to``: ``expand`` to ``size`` (``x.broadcast_to(2, 3)``: the method takes the
    sizes spread out, as PyTorch's parser does; the function's wrapper refuses more)."""
    if more or not isinstance(size, (list, tuple)):
        return expand(input, (size, *more))
    return expand(input, tuple(size))


@tensor_op("broadcast_tensors", method=False)
def broadcast_tensors(*tensors) -> tuple:
    """``torch.broadcast_tensors``: each operand expanded to the common shape (its builtin
    takes the operands as one list: a list given is an element that is not a tensor)."""
    for i, x in enumerate(tensors):
        if not isinstance(x, Tensor):
            raise TypeError(
                f"expected Tensor as element {i} in argument 0, but got {E.py_typename(x)}"
            )
    shape: tuple = ()
    for x in tensors:
        shape = broadcast_shapes(shape, x._data.shape)
    return tuple(x if x._data.shape == shape else _expand(x, shape) for x in tensors)


def _is_contiguous_as(t: Tensor, fmt) -> bool:
    """PyTorch's ``is_contiguous(memory_format)``: the channels-last formats check their own
    dim order (size-1 dims skipped); any other format is the default check."""
    shape, strides = t._data.shape, _strides(t)
    rank = _tensor_mod._CHANNELS_LAST_RANK.get(fmt)
    if rank is None:
        return _is_contiguous(shape, strides)
    if len(shape) != rank:
        return False
    expected = 1
    for d in (1, *range(rank - 1, 1, -1), 0):
        if shape[d] != 1:
            if strides[d] != expected:
                return False
            expected *= shape[d]
    return True


@tensor_op("contiguous", function=False)
def contiguous(self, memory_format=_tensor_mod.contiguous_format) -> Tensor:
    """``Tensor.contiguous``: itself when laid out as ``memory_format``, else a copy
    (``CloneBackward0``)."""
    fmt = _tensor_mod._check_memory_format("contiguous", memory_format, optional=False)
    if _is_contiguous_as(self, fmt):
        return self
    if fmt is _tensor_mod.preserve_format:
        raise RuntimeError("preserve memory format is unsupported by the contiguous operator")
    strides = _tensor_mod._format_strides(self._data.shape, fmt)
    out = _clone(self)
    return out if strides is None else _set_strides(out, strides)


def _clone(x: Tensor) -> Tensor:
    """ATen's ``clone`` inside another op's kernel. Of an inference tensor outside inference
    mode it is ``empty_like`` and ``copy_`` below autograd: counted, and recorded as a copy where
    the input requires grad (Note [Inference tensors] in _storage.py)."""
    if x._inference and not grad_mode._state.inference:
        return _tensor_mod._copy_of_inference(x, x._dtype, x._device)
    return dispatch(OPS["clone"], x)


@tensor_op("is_contiguous", function=False)
def is_contiguous(self, memory_format=_tensor_mod.contiguous_format) -> bool:
    """Whether PyTorch's result would be contiguous (Note [Strides])."""
    return _is_contiguous_as(
        self, _tensor_mod._check_memory_format("is_contiguous", memory_format, optional=False)
    )


DIM_ORDER_AMBIGUOUS = (
    "The tensor does not have unique dim order, or cannot map to exact one of the given memory "
    "formats."
)
DIM_ORDER_CHECK = "The ambiguity_check argument must be a bool or a list of memory formats."


@tensor_op("dim_order", function=False)
def dim_order(self, *, ambiguity_check=False) -> tuple:
    """``Tensor.dim_order``: the dims from outermost to innermost in memory, as PyTorch 2.13's
    ``compute_elementwise_output_logical_to_physical_perm`` orders them (contiguous and
    channels_last first, then an insertion sort by stride); ``ambiguity_check`` raises where
    several orders fit (True), or where not exactly one of the given memory formats does."""
    if not isinstance(ambiguity_check, bool) and not (
        isinstance(ambiguity_check, list)
        and all(isinstance(f, _tensor_mod.memory_format) for f in ambiguity_check)
    ):
        raise TypeError(DIM_ORDER_CHECK)
    shape, strides = tuple(self._data.shape), tuple(_strides(self))
    ndim = len(shape)
    formats = ambiguity_check if isinstance(ambiguity_check, list) else []
    check = ambiguity_check if isinstance(ambiguity_check, bool) else True
    several = any(a == b for a, b in zip(strides, strides[1:])) or 1 in shape
    if check and several and sum(bool(is_contiguous(self, f)) for f in formats) != 1:
        raise RuntimeError(DIM_ORDER_AMBIGUOUS)
    if ndim < 2:
        return tuple(range(ndim))
    dense = _is_contiguous_as(self, _tensor_mod.contiguous_format)
    last = ndim == 4 and _is_contiguous_as(self, _tensor_mod.channels_last)
    if dense and not last:
        return tuple(range(ndim))
    if last and not dense:
        return (0, *range(2, ndim), 1)

    def should_swap(a: int, b: int) -> int:
        sa, sb = strides[a], strides[b]
        if sa == 0 or sb == 0:
            return 0
        if sa == sb:
            return 0 if shape[b] >= shape[a] else 1
        return -1 if sb >= sa else 1

    from .._random import sort_dims

    perm = list(range(ndim - 1, -1, -1))  # innermost first
    sort_dims(perm, should_swap)
    if ambiguity_check and any(should_swap(a, b) != -1 for a, b in zip(perm, perm[1:])):
        raise RuntimeError("The tensor does not have unique dim order.")
    return tuple(reversed(perm))


@tensor_op("stride", function=False)
def stride(self, dim=None):
    """The strides PyTorch's tensor would have (Note [Strides])."""
    st = _strides(self)
    if dim is None:
        return st
    if type(dim) is not int:
        check_int("stride", "dim", dim, 1)
    return st[_wrap_dim(dim, self._data.ndim)]


def _slice_view(t: Tensor, dim: int, start: int, stop: int, step: int, written=None) -> Tensor:
    """``written``: ``start``, ``end`` (and ``dim``) as the caller passed them to PyTorch's
    ``slice`` (an end of None stays None), which SliceBackward0 keeps (Note [Arguments as
    written] in saved.py)."""
    st = list(_strides(t))
    st[dim] *= step
    out = _view(t, "slice", st, dim=dim, start=start, stop=stop, step=step)
    if written is not None:
        normal = {"start": start, "end": stop, "dim": dim}
        if any(normal[k] != v for k, v in written.items()):
            saved_mod.keep_written(out, **written)
    return out


def _clamp_slice(size: int, start, stop, step) -> tuple:
    start = 0 if start is None else int(start)
    stop = size if stop is None else int(stop)
    if start < 0:
        start += size
    if stop < 0:
        stop += size
    start = min(max(start, 0), size)
    stop = min(max(stop, start), size)
    return start, stop


def _select_view(t: Tensor, dim: int, index: int, written=None) -> Tensor:
    """``written``: ``index`` (and ``dim``) as the caller passed them, which SelectBackward0
    keeps (Note [Arguments as written] in saved.py)."""
    st = [s for i, s in enumerate(_strides(t)) if i != dim]
    out = _set_strides(dispatch(OPS["select"], t, int(index), dim=dim), st)
    if written is not None:
        normal = {"index": index, "dim": dim}
        if any(normal[k] != v for k, v in written.items()):
            saved_mod.keep_written(out, **written)
    return out


@tensor_op("select")
def select(input, dim: int, index: int) -> Tensor:
    """``select``: the slice at ``index`` along ``dim``, without that dim."""
    n = input._data.ndim
    if n == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = _wrap_dim(dim, n)
    size = input._data.shape[d]
    index = int(index)
    if not -size <= index < size:
        lead = _lead(input)  # inside vmap: the batch rule selects from the physical tensor
        raise IndexError(
            SELECT_RANGE.format(index, _list((*lead, *input._data.shape)), d + len(lead))
        )
    return _select_view(input, d, index % size, {"index": index, "dim": dim})


@tensor_op("narrow")
def narrow(input, dim: int, start, length: int) -> Tensor:
    """``narrow``: ``length`` elements from ``start`` along ``dim``."""
    n = input._data.ndim
    if n == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    if length < 0:
        raise RuntimeError(NARROW_NEG)
    d = _wrap_dim(dim, n)
    size = input._data.shape[d]
    if isinstance(start, Tensor) and (start._data.ndim or start._dtype._kind not in "iu"):
        raise RuntimeError("start must be an 0-dim integral Tensor.")
    start = int(start)
    if not -size <= start <= size:
        raise IndexError(NARROW_START.format(-size, size, start))
    if start < 0:
        start += size
    if start + length > size:
        raise RuntimeError(NARROW_LENGTH.format(start, length, size))
    return _slice_view(input, d, start, start + length, 1, {"dim": dim})


@tensor_op("diagonal")
def diagonal(input, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    """``diagonal``: a view of a diagonal over two dims, appended as the last dim."""
    n = input._data.ndim
    a, b = _wrap_dim(dim1, n), _wrap_dim(dim2, n)
    if a == b:
        raise RuntimeError(DIAGONAL_SAME.format(dim1, dim2))
    st = _strides(input)
    strides = [s for i, s in enumerate(st) if i not in (a, b)] + [st[a] + st[b]]
    return _view(input, "diagonal", strides, offset=int(offset), dim1=a, dim2=b)


# --- splits ------------------------------------------------------------------------------------


def _split_sizes(t: Tensor, sizes, dim: int, with_sizes: bool, op: str = "split") -> tuple:
    st = _strides(t)
    static = {"dim": dim, "sizes": tuple(sizes), "with_sizes": with_sizes}
    outs = dispatch(OPS[op], t, **static)
    if op == "unsafe_split":
        # the pieces share the input's memory (writes reach each other) but are not views to
        # autograd: no base, a version counter of their own (PyTorch's unsafe_split)
        items = tuple(static.items())
        for k, o in enumerate(outs):
            S.share(t, o, (OPS["split"], items, k))
            if t._inference:  # a piece of an inference tensor is one (Note [Inference tensors])
                o._inference = True
    return tuple(_set_strides(o, st) for o in outs)


@tensor_op("split")
@stale_views_first("split")
def split(tensor, split_size_or_sections, dim: int = 0, *, _op: str = "split") -> tuple:
    """``split``: pieces of ``split_size`` (the last smaller), or of the given sizes."""
    from .._arg_check import check_int, check_ints  # (they import this module's package)

    if not isinstance(tensor, Tensor):  # PyTorch's Python-level split calls ``tensor.split``
        return tensor.split(split_size_or_sections, dim)
    # PyTorch's Tensor.split: a tensor of one element is read as an int; an int goes to
    # ``split``, anything else to ``split_with_sizes`` (their parsers' errors, as functions)
    if isinstance(split_size_or_sections, Tensor) and split_size_or_sections.numel() == 1:
        split_size_or_sections = int(split_size_or_sections)
    if isinstance(split_size_or_sections, int):
        if E.int_refused(split_size_or_sections) or E.int_refused(dim):
            args = (tensor, split_size_or_sections, dim)
            raise TypeError(E.invalid_arguments("split", _SPLIT_SIGNATURES, args))
    else:
        if not isinstance(split_size_or_sections, (list, tuple)):
            raise TypeError(
                "split_with_sizes(): argument 'split_sizes' (position 2) must be tuple of ints, "
                f"not {E.py_typename(split_size_or_sections)}"
            )
        check_ints("split_with_sizes", "split_sizes", split_size_or_sections, 2)
        check_int("split_with_sizes", "dim", dim, 3)
    n = tensor._data.ndim
    if n == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    d = _wrap_dim(dim, n)
    size = tensor._data.shape[d]
    if isinstance(split_size_or_sections, (list, tuple)):
        sizes = tuple(int(s) for s in split_size_or_sections)
        if any(s < 0 for s in sizes):
            raise RuntimeError(SPLIT_SIZES_NEG.format(_list(sizes)))
        if sum(sizes) != size:
            raise RuntimeError(SPLIT_SUM.format(size, d + len(_lead(tensor)), _list(sizes)))
        return _split_sizes(tensor, sizes, d, True, _op)
    k = int(split_size_or_sections)
    if k < 0:
        raise RuntimeError(SPLIT_NEG.format(k))
    if k == 0 and size != 0:
        raise RuntimeError(SPLIT_ZERO.format(size))
    count = max((size + k - 1) // k, 1) if k else 1
    sizes = [k] * (count - 1) + [size - k * (count - 1)]
    outs = _split_sizes(tensor, sizes, d, False, _op)
    if outs and sizes[0] != k:  # SplitBackward0 keeps the split size as given
        saved_mod.keep_written(outs[0], split_size=k)
    return outs


@tensor_op("split", function=False)
def _split_method(self, split_size, dim=0):
    """``Tensor.split`` (PyTorch's Python method names its parameter ``split_size``)."""
    return split(self, split_size, dim)


@tensor_op("split_with_sizes")
def split_with_sizes(input, split_sizes, dim: int = 0) -> tuple:
    """``split_with_sizes``."""
    return split(input, list(split_sizes), dim)


@tensor_op("chunk")
def chunk(input, chunks: int, dim: int = 0, *, _op: str = "split") -> tuple:
    """``chunk``: ``split`` into at most ``chunks`` equal pieces."""
    if input._data.ndim == 0:
        raise RuntimeError(CHUNK_0D)
    if chunks <= 0:
        raise RuntimeError(CHUNK_ZERO.format(chunks))
    d = _wrap_dim(dim, input._data.ndim)
    size = input._data.shape[d]
    k = (size + chunks - 1) // chunks
    if k == 0 and size == 0:
        return _split_sizes(input, [0] * chunks, d, True, _op)
    return split(input, k, d, _op=_op)


@tensor_op("unsafe_split")
def unsafe_split(input, split_size: int, dim: int = 0) -> tuple:
    """``unsafe_split``: ``split`` whose pieces are not views (UnsafeSplitBackward0)."""
    return split(input, split_size, dim, _op="unsafe_split")


@tensor_op("unsafe_split_with_sizes")
def unsafe_split_with_sizes(input, split_sizes, dim: int = 0) -> tuple:
    """``unsafe_split_with_sizes`` (UnsafeSplitWithSizesBackward0)."""
    return split(input, list(split_sizes), dim, _op="unsafe_split")


@tensor_op("unsafe_chunk")
def unsafe_chunk(input, chunks: int, dim: int = 0) -> tuple:
    """``unsafe_chunk``: ``chunk`` through ``unsafe_split``."""
    return chunk(input, chunks, dim, _op="unsafe_split")


@tensor_op("narrow_copy")
def narrow_copy(input, dim: int, start: int, length: int) -> Tensor:
    """``narrow_copy``: ``narrow``'s elements in a new tensor (NarrowCopyBackward0)."""
    if input._data.ndim and dim >= input._data.ndim:
        raise RuntimeError(torch_check_failed("dim < static_cast<int64_t>(self_sizes.size())"))
    with grad_mode.no_grad():
        narrow(input, dim, start, length)  # narrow's checks
    d = _wrap_dim(dim, input._data.ndim)
    start = int(start)
    begin = start + input._data.shape[d] if start < 0 else start
    out = dispatch(OPS["narrow_copy"], input, dim=d, start=begin, stop=begin + length, step=1)
    if start < 0:
        saved_mod.keep_written(out, start=start)  # NarrowCopyBackward0 keeps it as given
    return out


@tensor_op("tensor_split")
@keywords_at(1, "sections", "indices", "tensor_indices_or_sections")
def tensor_split(input, indices_or_sections, dim: int = 0) -> tuple:
    """``tensor_split``: ``n`` nearly equal sections or pieces between indices (slices)."""
    n = input._data.ndim
    if n == 0:
        raise RuntimeError(TENSOR_SPLIT_0D)
    d = _wrap_dim(dim, n)
    size = input._data.shape[d]
    if isinstance(indices_or_sections, Tensor):
        indices_or_sections = indices_or_sections.tolist()
    given = (input, indices_or_sections) + ((dim,) if dim != 0 else ())
    if isinstance(indices_or_sections, (list, tuple)):
        items = indices_or_sections
        if items and E.int_refused(items[0]):
            E.refuse_by_signatures("tensor_split", *given)
        message = E.ints_error("tensor_split", "indices", "", items)
        if message is not None:  # a later element fails as the list is unpacked
            raise TypeError(message)
        bounds = [int(i) for i in items]
    else:
        if E.int_refused(indices_or_sections):
            E.refuse_by_signatures("tensor_split", *given)
        k = int(indices_or_sections)
        if k <= 0:
            raise RuntimeError(TENSOR_SPLIT_N.format(k))
        q, r = divmod(size, k)
        bounds, acc = [], 0
        for i in range(k - 1):
            acc += q + (1 if i < r else 0)
            bounds.append(acc)
    out, prev = [], 0
    for b in [*bounds, size]:
        start, stop = _clamp_slice(size, prev, b, 1)
        out.append(_slice_view(input, d, start, stop, 1, {"start": prev, "end": b}))
        prev = b
    return tuple(out)


@tensor_op("unbind")
def unbind(input, dim: int = 0) -> tuple:
    """``unbind``: the slices along ``dim``, without it."""
    d = _wrap_dim(dim, input._data.ndim)
    if input._data.ndim == 0:
        raise IndexError(NO_DIMS.format(d))
    st = [s for i, s in enumerate(_strides(input)) if i != d]
    outs = dispatch(OPS["unbind"], input, dim=d, n=input._data.shape[d])
    return tuple(_set_strides(o, st) for o in outs)


# --- copies: repeat, flip, roll, triangles, diagonals -----------------------------------------


@tensor_op("repeat", function=False)
def repeat(self, *sizes) -> Tensor:
    """``Tensor.repeat``: tile the tensor ``sizes`` times along each dim."""
    sizes = _ints(sizes, "repeat", "repeats")
    if len(sizes) < self._data.ndim:
        raise RuntimeError(REPEAT_FEW)
    shape = (1,) * (len(sizes) - self._data.ndim) + self._data.shape
    with _storable(tuple(s * r for s, r in zip(shape, sizes)), self):
        out = dispatch(OPS["repeat"], self, repeats=sizes)
    if self._inference and not grad_mode._state.inference and 0 not in sizes:
        # PyTorch's kernel (no repeat of 0) returns an alias of the result it wrote through;
        # below autograd (an inference tensor, Note [Inference tensors]) that view is seen
        return view(out, out._data.shape)
    return out


@tensor_op("tile")
def tile(input, dims, *more) -> Tensor:
    """``tile``: ``repeat`` with ``dims`` padded by leading ones (the method takes them spread
    out, ``x.tile(1, 2)``, as PyTorch's parser does; the function's wrapper refuses more)."""
    dims = (dims, *more) if more or not isinstance(dims, (list, tuple)) else tuple(dims)
    dims = (1,) * (input._data.ndim - len(dims)) + dims
    return repeat(input, dims)


_ABSENT = object()  # an argument not given (``None`` given is refused, as PyTorch's parser does)


@tensor_op("repeat_interleave", method=False)
def repeat_interleave(input=_ABSENT, repeats=_ABSENT, dim=None, *, output_size=None) -> Tensor:
    """``repeat_interleave``: repeat each element (an int or a tensor of repeats); with a tensor
    alone, ``repeat_interleave(repeats)``: each position ``i`` repeated ``repeats[i]`` times."""
    if dim is None and (input is _ABSENT) is not (repeats is _ABSENT):
        alone = repeats if input is _ABSENT else input
        if isinstance(alone, Tensor):
            return _repeat_index(alone, output_size)
    if input is _ABSENT or repeats is _ABSENT:  # the parser's words (Note [Parser errors])
        raise TypeError("repeat_interleave(): no overload matches")
    return _repeat_interleave(input, repeats, dim, output_size=output_size)


@tensor_op("repeat_interleave", function=False)
def _repeat_interleave(input, repeats, dim=None, *, output_size=None) -> Tensor:
    """``Tensor.repeat_interleave``: its repeats are not optional."""
    if dim is None:
        input = flatten(input)
        d = 0
    else:
        d = _wrap_dim(dim, input._data.ndim)
    # A 0-d input with a dim: PyTorch's kernels read its size at ``dim`` (tensor repeats, after
    # their dim check) or unsqueeze it at ``dim + 1`` (int repeats, after their sign check).
    scalar_dim = input._data.ndim == 0 and dim is not None
    if isinstance(repeats, Tensor):
        if repeats._data.ndim > 1:
            raise RuntimeError(RI_REPEATS_0D_1D)
        if scalar_dim:
            raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
        size = input._data.shape[d] if input._data.ndim else 1
        if repeats.numel() == 1:  # PyTorch's ``repeats.reshape({1}).expand({size})``
            repeats = _expand(reshape(repeats, (1,)), (size,), note="")
        elif repeats.numel() != size:
            raise RuntimeError(RI_REPEATS_SIZE.format(repeats.numel(), d, size))
        index = _repeat_index(repeats, output_size)
        shape = input._data.shape
        with _storable(shape[:d] + index._data.shape + shape[d + 1 :], input):
            return index_select(input, d, index)
    if not isinstance(repeats, (int, np.integer)):
        raise TypeError(
            "repeat_interleave() received an invalid combination of arguments - got "
            f"({type(repeats).__name__})"
        )
    r = int(repeats)
    if r < 0:
        raise RuntimeError(RI_INT_NEG)
    if scalar_dim:
        raise IndexError("Dimension out of range (expected to be in range of [-1, 0], but got 1)")
    if input._data.ndim == 0:
        input = reshape(input, (1,))
    shape = input._data.shape
    if math.prod(shape) * r > INT64_MAX:
        raise RuntimeError(NUMEL_OVERFLOW)
    if output_size is not None and output_size != shape[d] * r:
        raise RuntimeError(
            f"repeat_interleave: Invalid output_size, expected {shape[d] * r} but got {output_size}"
        )
    with _storable(shape[:d] + (shape[d] * r,) + shape[d + 1 :], input):
        return _repeat_each(input, d, r)


def _repeat_index(repeats: Tensor, output_size) -> Tensor:
    """ATen's ``repeat_interleave(repeats, output_size)``: position ``i`` written ``repeats[i]``
    times, in ``repeats``' dtype, with its checks in its order. With ``output_size`` and traced
    repeats (under ``jax.jit``) the size is known without reading the values: the index is
    computed in the trace, as PyTorch's GPU kernel does, without the checks that read them."""
    if repeats._dtype not in (D.int32, D.int64):
        raise NotImplementedError(RI_DTYPE.format(repeats._dtype._legacy))
    if repeats._data.ndim != 1:
        raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
    size = repeats._data.shape[0]
    dev, dt = repeats._device, repeats._dtype
    if output_size is not None and _is_tracer(repeats._data):
        total = int(output_size)
        with _storable((total,), repeats):
            index = jnp.repeat(
                jnp.arange(size, dtype=dt.np), repeats._data, total_repeat_length=total
            )
        return Tensor._make(index, dt, dev)
    if size == 0:
        return Tensor._make(jnp.zeros((0,), dt.np), dt, dev)
    reps = _host_mask(repeats, "repeat_interleave", "repeat_interleave").astype(np.int64)
    needed, negative = int(reps.sum()), bool((reps < 0).any())
    # without output_size the sign is checked before the allocation, with it per element after
    if output_size is None and negative:
        raise RuntimeError(RI_REPEATS_NEG)
    total = needed if output_size is None else int(output_size)
    if total < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {total}: [{total}]")
    with _storable((total,), repeats):  # PyTorch allocates the index first
        if total != needed:
            raise RuntimeError("allocated size does not match required size")
        if negative:
            raise RuntimeError(RI_REPEATS_NEG)
        index = jnp.asarray(np.repeat(np.arange(size, dtype=dt.np), reps))
    return Tensor._make(index, dt, dev)


def _repeat_each(input: Tensor, d: int, r: int) -> Tensor:
    """``repeat_interleave`` by an int: expand a new dim after ``d``, copy, flatten."""
    shape = input._data.shape
    x = unsqueeze(input, d + 1)
    x = _expand(x, shape[: d + 1] + (r,) + shape[d + 1 :], note="")
    x = _clone(x)
    return flatten(x, d, d + 1)


@tensor_op("flip")
def flip(input, *dims) -> Tensor:
    """``flip``: reverse the order along ``dims``."""
    dims = _ints(dims, "flip", "dims")
    wrapped = _check_dims_unique(dims, input._data.ndim)
    if input._data.ndim == 0:
        wrapped = ()
    return dispatch(OPS["flip"], input, dims=tuple(sorted(wrapped)))


@tensor_op("fliplr")
def fliplr(input) -> Tensor:
    """``fliplr``: flip dim 1."""
    if input._data.ndim < 2:
        raise RuntimeError(FLIPLR)
    return flip(input, (1,))


@tensor_op("flipud")
def flipud(input) -> Tensor:
    """``flipud``: flip dim 0."""
    if input._data.ndim < 1:
        raise RuntimeError(FLIPUD)
    return flip(input, (0,))


@tensor_op("roll")
def roll(input, shifts, dims=None) -> Tensor:
    """``roll``: rotate elements along ``dims`` (the flattened tensor when none)."""
    shifts = (shifts,) if isinstance(shifts, int) else tuple(int(s) for s in shifts)
    dims = () if dims is None else ((dims,) if isinstance(dims, int) else tuple(dims))
    if not dims and len(shifts) == 1:
        if input._inference and not grad_mode._state.inference:
            # PyTorch's kernel rolls ``self.view(numel)`` and views the result back; without the
            # autograd layer (an inference tensor) that last view is seen: a view of the flat roll
            flat = input.reshape(input.numel())
            rolled = dispatch(OPS["roll"], flat, shifts=shifts, dims=(0,))
            return rolled.view(tuple(input.shape))
        out = dispatch(OPS["roll"], input, shifts=shifts, dims=())
        if input.numel() == 0 and input._data.ndim == 1:
            # the flat view of an empty 1-d tensor keeps its strides, and so does the clone
            _set_strides(out, input.stride())
        return out
    if len(shifts) != len(dims):
        raise RuntimeError(ROLL_ALIGN.format(len(shifts), len(dims)))
    if input.numel() == 0:  # PyTorch's kernel clones an empty tensor (its strides kept)
        out = dispatch(OPS["roll"], input, shifts=shifts, dims=(0,) * len(dims))
        return _set_strides(out, input.stride())
    if input._data.ndim == 0:  # PyTorch reads the size at the first dim
        raise IndexError(f"Dimension specified as {dims[0]} but tensor has no dimensions")
    dims = tuple(_wrap_dim(d, input._data.ndim) for d in dims)
    return dispatch(OPS["roll"], input, shifts=shifts, dims=dims)


def _triangle(name, input, diagonal):
    if input._data.ndim < 2:
        raise RuntimeError(TRIL_DIM.format(name))
    return dispatch(OPS[name], input, diagonal=int(diagonal))


@tensor_op("tril")
def tril(input, diagonal: int = 0) -> Tensor:
    """``tril``: zero the elements above the ``diagonal``-th diagonal."""
    return _triangle("tril", input, diagonal)


@tensor_op("triu")
def triu(input, diagonal: int = 0) -> Tensor:
    """``triu``: zero the elements below the ``diagonal``-th diagonal."""
    return _triangle("triu", input, diagonal)


@tensor_op("diag_embed")
def diag_embed(input, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """``diag_embed``: put the last dim on diagonals of new (dim1, dim2) planes."""
    n = input._data.ndim + 1
    a, b = _wrap_dim(dim1, n), _wrap_dim(dim2, n)
    if a == b:
        raise RuntimeError(DIAGONAL_SAME.format(dim1, dim2))
    if input._data.ndim == 0:
        raise IndexError(E.DIM_RANGE.format(-1, 0, -1))
    if a > b:  # planes are (row, col) = (dim1, dim2); swapping dims transposes the plane
        offset = -offset
        a, b = b, a
    return dispatch(OPS["diag_embed"], input, offset=int(offset), dim1=a, dim2=b)


@tensor_op("diag")
def diag(input, diagonal: int = 0) -> Tensor:
    """``diag``: a diagonal matrix from a vector, or the diagonal of a matrix (a copy)."""
    n = input._data.ndim
    if n == 1:
        return _written_diag_embed(input, diagonal)
    if n == 2:
        return dispatch(OPS["diagonal_copy"], input, offset=int(diagonal))
    raise RuntimeError(DIAG_DIM.format(n))


@tensor_op("diagflat")
def diagflat(input, offset: int = 0) -> Tensor:
    """``diagflat``: ``diag_embed`` of the flattened input."""
    return _written_diag_embed(reshape(contiguous(input), (-1,)), offset)


def _written_diag_embed(input, offset):
    """``diag_embed(input, offset)`` as PyTorch's diag and diagflat call it: its node saves the
    default dims as written (-2, -1), which the public function records (Note [Arguments as
    written])."""
    import leafgrad

    return leafgrad.diag_embed(input, offset)


# --- joins -------------------------------------------------------------------------------------


def _tensor_list(tensors, name):
    if isinstance(tensors, Tensor) or not isinstance(tensors, (list, tuple)):
        raise TypeError(
            f"{name}(): argument 'tensors' (position 1) must be tuple of Tensors, not "
            f"{type(tensors).__name__}"
        )
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(
                f"expected Tensor as element {i} in argument 0, but got {type(t).__name__}"
            )
    return list(tensors)


@tensor_op("cat", "concat", "concatenate", method=False)
@_autocast.policy("promote")
def cat(tensors, dim: int = 0, axis=None) -> Tensor:
    """``torch.cat``: join tensors along an existing dim."""
    tensors = _tensor_list(tensors, "cat")
    if axis is not None:
        dim = axis
    if not tensors:
        raise ValueError(CAT_EMPTY)
    for i, x in enumerate(tensors):
        if x._data.ndim == 0:
            raise RuntimeError(CAT_ZERO_DIM.format(i))
    # PyTorch skips 1-D empty tensors (legacy behaviour) when checking and joining.
    keep = tuple(i for i, x in enumerate(tensors) if x._data.shape != (0,))
    ref = tensors[keep[0]] if keep else tensors[0]
    d = _wrap_dim(dim, ref._data.ndim)
    for i in keep:
        x = tensors[i]
        if x._data.ndim != ref._data.ndim:
            k = len(_lead(*tensors))  # inside vmap: every operand has the batch dims in front
            raise RuntimeError(CAT_NDIM.format(ref._data.ndim + k, x._data.ndim + k))
        for j in range(ref._data.ndim):
            if j != d and x._data.shape[j] != ref._data.shape[j]:
                k = len(_lead(*tensors))
                raise RuntimeError(CAT_SIZES.format(d + k, ref._data.shape[j], x._data.shape[j], i))
    if not keep:
        keep = (0,)
    out = dispatch(_cat_op(len(tensors)), *tensors, dim=d, keep=keep)
    parts = [(tuple(t._data.shape), t.__dict__.get("_strides")) for t in tensors]
    return _mixed_join(tensors, _join_layout(out, parts, tuple(out._data.shape)))


def _join_layout(out: Tensor, parts, cat_shape) -> Tensor:
    """``out`` laid out as PyTorch's ``cat`` of layouts ``parts`` (``(shape, strides)``, strides
    None where contiguous) lays out its result of ``cat_shape``, viewed as ``out``'s shape
    (``stack`` is a ``cat(...).view(...)``): in the memory format every part suggests (its
    ``cat_compute_output_memory_format``; a skipped empty 1-d part suggests contiguous)."""
    fmt = None
    for shape, strides in parts:
        f = _tensor_mod.suggested_format(shape, strides)
        if f is _tensor_mod.contiguous_format or (fmt is not None and f is not fmt):
            return out
        fmt = f
    strides = _tensor_mod._format_strides(cat_shape, fmt)
    if tuple(out._data.shape) != cat_shape:
        strides = _compute_stride(cat_shape, strides, tuple(out._data.shape))
    return _set_strides(out, strides)


def _mixed_join(tensors, out: Tensor) -> Tensor:
    """Note [Inference tensors] in _storage.py: joining inference tensors of several dtypes
    outside inference mode, PyTorch's kernel (below autograd) copies them into the result with
    ``copy_``, which counts as a write: the result is at version 1."""
    if len({t._dtype for t in tensors}) > 1 and out._data.size:
        S.kernel_wrote(tensors, (out, 1))
    return out


@tensor_op("stack", method=False)
@_autocast.policy("promote")
def stack(tensors, dim: int = 0) -> Tensor:
    """``torch.stack``: join equal-shaped tensors along a new dim."""
    tensors = _tensor_list(tensors, "stack")
    if not tensors:
        raise RuntimeError(STACK_EMPTY)
    s0 = tensors[0]._data.shape
    for i, x in enumerate(tensors[1:], 1):
        if x._data.shape != s0:
            lead = _lead(*tensors)  # inside vmap: the batch rule wraps dim first, then stacks
            if lead:  # the operands with the batch dims in front
                _wrap_dim(dim, len(s0) + 1)
            raise RuntimeError(
                STACK_SIZES.format(_list((*lead, *s0)), _list((*lead, *x._data.shape)), i)
            )
    d = _wrap_dim(dim, len(s0) + 1)
    if d < len(s0) and all(t._inference for t in tensors):
        # PyTorch's kernel is ``cat(tensors, d).view(...)``; run below autograd on inference
        # tensors only (Note [Inference tensors] in ``_storage.py``), its view is seen
        return view(cat(tensors, d), *s0[:d], len(tensors), *s0[d:])
    out = dispatch(_stack_op(len(tensors)), *tensors, dim=d)
    if d < len(s0):  # PyTorch's stack is ``cat(tensors, d).view(...)``
        parts = [(s0, t.__dict__.get("_strides")) for t in tensors]
        cat_shape = (*s0[:d], s0[d] * len(tensors), *s0[d + 1 :])
    else:  # else a cat of the tensors unsqueezed at the end (a new last stride of 1)
        parts = [(s0 + (1,), (*_strides(t), 1)) for t in tensors]
        cat_shape = (*s0, len(tensors))
    return _mixed_join(tensors, _join_layout(out, parts, cat_shape))


def _atleast(t: Tensor, n: int) -> Tensor:
    """PyTorch's ``atleast_{n}d``: a 0-d tensor is reshaped, others unsqueezed."""
    d = t._data.ndim
    if d >= n:
        return t
    if d == 0:
        return reshape(t, (1,) * n)
    if n == 2 or d == 2:
        return unsqueeze(t, 0 if n == 2 else -1)
    return unsqueeze(unsqueeze(t, 0), -1)


@tensor_op("hstack", method=False)
def hstack(tensors) -> Tensor:
    """``torch.hstack``: ``cat`` along dim 1 (dim 0 for vectors) after ``atleast_1d``."""
    ts = [_atleast(x, 1) for x in _tensor_list(tensors, "hstack")]
    if not ts:
        raise RuntimeError("hstack expects a non-empty TensorList")
    return cat(ts, 0 if ts[0]._data.ndim == 1 else 1)


@tensor_op("vstack", "row_stack", method=False)
def vstack(tensors) -> Tensor:
    """``torch.vstack``: ``cat`` along dim 0 after ``atleast_2d``."""
    ts = [_atleast(x, 2) for x in _tensor_list(tensors, "vstack")]
    if not ts:
        raise RuntimeError("vstack expects a non-empty TensorList")
    return cat(ts, 0)


@tensor_op("dstack", method=False)
def dstack(tensors) -> Tensor:
    """``torch.dstack``: ``cat`` along dim 2 after ``atleast_3d``."""
    ts = [_atleast(x, 3) for x in _tensor_list(tensors, "dstack")]
    if not ts:
        raise RuntimeError("dstack expects a non-empty TensorList")
    return cat(ts, 2)


# --- masks, gathers, scatters --------------------------------------------------------------------


@tensor_op("masked_fill")
def masked_fill(input, mask, value) -> Tensor:
    """``masked_fill``: ``value`` where ``mask`` is true (a number or a 0-d tensor)."""
    out = masked_fill_values(input, mask, value)
    if (
        isinstance(value, Tensor)
        and value._requires_grad
        and grad_mode._state.grad_enabled
        and input._dtype._kind not in "fc"
    ):
        # PyTorch records the result, then refuses a history on an integer tensor
        raise RuntimeError(AUTOGRAD_DTYPE.format(E.scalar_type_name(input._dtype)))
    return out


def masked_fill_values(input, mask, value) -> Tensor:
    """``masked_fill`` without the refusal of a history on an integer result (``masked_fill_``
    records one, Note [Written as a number] in ``inplace.py``)."""
    if not isinstance(mask, Tensor) or not isinstance(value, (Tensor, *_NUMBERS)):
        raise TypeError(
            "masked_fill() received an invalid combination of arguments - got "
            f"({type(mask).__name__}, {type(value).__name__})"
        )
    if not isinstance(value, Tensor):
        value = parsed_number(value)
    # out of place, PyTorch broadcasts first, then runs ``masked_fill_`` on the result
    try:
        broadcast_shapes(mask._data.shape, input._data.shape)
    except RuntimeError:
        physical_broadcast([mask, input])
        raise
    if mask._dtype is not D.bool_:
        raise RuntimeError(MASK_BOOL.format(E.c_type_name(mask._dtype)))
    if not isinstance(value, Tensor):
        value = checked_number(value, input._dtype)
        return dispatch(OPS["masked_fill_scalar"], input, mask, value)
    if value._data.ndim != 0:
        raise RuntimeError(MASK_VALUE_DIM.format(value._data.ndim))
    checked_item(value, input._dtype)  # the kernel writes ``value.item()``
    return dispatch(OPS["masked_fill_tensor"], input, mask, value)


def _host_mask(mask: Tensor, name: str, what: str = "mask") -> np.ndarray:
    """The values of a mask (or ``nonzero``'s input) on the host; traced ones where a torch.func
    transform knows them (Note [Values inside transforms]); ``what``: for vmap's error."""
    if _is_tracer(mask._data):
        from .. import func

        values = func.traced_values(mask._data, what)
        if values is None:
            raise RuntimeError(EAGER_ONLY.format(name))
        return values
    return np.asarray(mask._data)


@tensor_op("masked_select")
def masked_select(input, mask) -> Tensor:
    """``masked_select``: the elements where the (broadcast) mask is true, as a vector."""
    _need_tensor(mask, "masked_select", "mask", 1)
    if mask._dtype is not D.bool_:
        raise RuntimeError(MASKED_SELECT_BOOL)
    shape = broadcast_shapes(mask._data.shape, input._data.shape)
    n = int(np.broadcast_to(_host_mask(mask, "masked_select", "masked_select"), shape).sum())
    return dispatch(OPS["masked_select"], input, mask, n=n)


def _check_index_values(
    index: Tensor, size: int, dim: int, message=INDEX_RANGE, exc=RuntimeError, others=()
):
    """PyTorch's out-of-range errors, where the values are known (Note [Known values]); inside
    vmap, ``dim`` counts the batch dims put in front of the index and ``others``."""
    if index.numel() == 0:
        return
    values, levels = known_values(index._data)
    if values is None:
        return
    bad = values[(values < -size) | (values >= size)]
    if bad.size:
        levels = max(levels, len(_lead(index, *others)))
        raise exc(message.format(int(bad.reshape(-1)[0]), dim + levels, size))


def _check_gather_sizes(input: Tensor, index: Tensor, dim: int, src: Tensor | None = None):
    """gather's (``src`` None) or scatter's size checks of the index; inside vmap, of the
    physical operands (the batch dims in front of each)."""
    self_shape, index_shape = input._data.shape, index._data.shape
    src_shape = None if src is None else src._data.shape
    for d, s in enumerate(index_shape):
        if (d != dim and s > self_shape[d]) or (src_shape is not None and s > src_shape[d]):
            lead = _lead(input, index) if src is None else _lead(input, index, src)
            k = len(lead)
            shown = _list((*lead, *index_shape)), _list((*lead, *self_shape))
            if src is None:
                raise RuntimeError(GATHER_SIZE.format(d + k, *shown, dim + k))
            raise RuntimeError(SCATTER_SIZE.format(*shown, dim + k, _list((*lead, *src_shape))))


def _nonneg_check(index: Tensor, size: int, dim: int, *others):
    """gather/scatter refuse negative indices too; inside vmap, ``dim`` counts the batch dims
    put in front of the index and ``others`` (the operands of the batch rule)."""
    if index.numel() == 0:
        return
    values, levels = known_values(index._data)
    if values is None:
        return
    bad = values[(values < 0) | (values >= size)]
    if bad.size:
        levels = max(levels, len(_lead(index, *others)))
        raise RuntimeError(INDEX_RANGE.format(int(bad.reshape(-1)[0]), dim + levels, size))


@tensor_op("gather")
def gather(input, dim: int, index, *, sparse_grad: bool = False) -> Tensor:
    """``gather``: ``out[i][j] = input[index[i][j]][j]`` (for dim 0)."""
    _need_tensor(index, "gather", "index", 2)
    n = input._data.ndim
    d = _wrap_dim(dim, n)
    if index._dtype not in (D.int32, D.int64):
        raise RuntimeError(GATHER_DTYPE)
    if max(index._data.ndim, 1) != max(n, 1):
        raise RuntimeError(GATHER_NDIM)
    if n:
        _check_gather_sizes(input, index, d)
    _nonneg_check(index, input._data.shape[d] if n else 1, d, input)
    return dispatch(OPS["gather"], input, index, dim=d)


def _scatter(input, dim, index, src, mode, name):
    _need_tensor(index, name, "index", 2)
    if not isinstance(src, (Tensor, *_NUMBERS)):
        raise TypeError(
            f"{name}() received an invalid combination of arguments - got "
            f"({type(dim).__name__}, {type(index).__name__}, {type(src).__name__})"
        )
    n = input._data.ndim
    d = _wrap_dim(dim, n)
    if index._dtype not in (D.int32, D.int64):
        raise RuntimeError(SCATTER_ADD_DTYPE if name == "scatter_add" else SCATTER_DTYPE)
    if max(index._data.ndim, 1) != max(n, 1):
        raise RuntimeError(SCATTER_NDIM)
    if isinstance(src, Tensor):
        if max(src._data.ndim, 1) != max(n, 1):
            raise RuntimeError(SCATTER_SRC_NDIM)
        if src._dtype is not input._dtype:
            raise RuntimeError(SCATTER_ADD_SELF_SRC if name == "scatter_add" else SCATTER_SELF_SRC)
        if n:
            _check_gather_sizes(input, index, d, src)
        _nonneg_check(index, input._data.shape[d] if n else 1, d, input, src)
        op = OPS["scatter_add_src" if mode == "add" else "scatter_src"]
        out = dispatch(op, input, index, src, dim=d, mode=mode)
        return src_gradient_check(out, index, src)
    if n:
        _check_gather_sizes(input, index, d)
    _nonneg_check(index, input._data.shape[d] if n else 1, d, input)
    if isinstance(src, np.generic):
        src = src.item()
    checked_number(src, input._dtype)  # the kernel's ``value.to<scalar_t>()``
    return dispatch(OPS["scatter_value"], input, index, src, dim=d, mode=mode)


INVALID_GRADIENT = (
    "Function {} returned an invalid gradient at index {} - got {} but expected shape compatible "
    "with {}"
)


def src_gradient_check(out: Tensor, index: Tensor, src: Tensor) -> Tensor:
    """PyTorch's scatter formulas give ``src`` the gradient ``grad.gather(dim, index)``, of the
    index's shape: where ``src`` is larger, its engine refuses that gradient when it is needed."""
    if out._grad_fn is not None and tuple(index.shape) != tuple(src.shape):
        message = INVALID_GRADIENT.format(
            out._grad_fn.name(), 1, list(index.shape), list(src.shape)
        )
        refuse_backward(out, lambda: RuntimeError(message), edge=1)
    return out


@tensor_op("scatter")
def scatter(input, dim: int, index, src=None, value=None, *, reduce=None) -> Tensor:
    """``scatter``: write ``src`` (a tensor or a number) at ``index`` along ``dim``."""
    if src is None:
        src = value
    if reduce is not None:
        if isinstance(src, (int, float, complex)):
            checked_number(src, input._dtype)  # the kernel's ``value.to<scalar_t>()``
        from .reductions import scatter_with_reduce

        return scatter_with_reduce(input, dim, index, src, reduce)
    return _scatter(input, dim, index, src, "set", "scatter")


@tensor_op("scatter_add")
def scatter_add(input, dim: int, index, src) -> Tensor:
    """``scatter_add``: add ``src`` at ``index`` along ``dim``."""
    return _scatter(input, dim, index, src, "add", "scatter_add")


@tensor_op("index_select")
def index_select(input, dim: int, index) -> Tensor:
    """``index_select``: the slices at ``index`` (a vector) along ``dim``."""
    _need_tensor(index, "index_select", "index", 2)
    n = input._data.ndim
    d = _wrap_dim(dim, n)
    if index._data.ndim > 1:
        raise IndexError(INDEX_SELECT_VECTOR)
    if index._dtype not in (D.int32, D.int64):
        raise RuntimeError(INDEX_SELECT_DTYPE)
    size = input._data.shape[d] if n else 1
    if n == 0 and index.numel() != 1:
        raise RuntimeError(
            f"index_select(): Index to scalar can have only 1 value, got {index.numel()} value(s)"
        )
    values, levels = known_values(index._data) if index.numel() else (None, 0)
    if values is not None and ((values < 0) | (values >= size)).any():
        levels = max(levels, len(_lead(input, index)))
        if levels:  # PyTorch's batched index_select gathers from the batched tensor
            bad = values[(values < 0) | (values >= size)].reshape(-1)[0]
            raise RuntimeError(INDEX_RANGE.format(int(bad), d + levels, size))
        raise IndexError(INDEX_SELECT_RANGE)
    return dispatch(OPS["index_select"], input, index, dim=d)


# --- index_fill --------------------------------------------------------------------------------

# c10's names of the types a number is converted to, in its overflow error.
_CONVERT_NAMES = {"uint8": "uint8_t", "int8": "int8_t", "int16": "int16_t", "int64": "int64_t"}


INT_TOO_BIG = "int too big to convert"
NEGATIVE_TO_UNSIGNED = "can't convert negative int to unsigned"


def parsed_number(value):
    """A number as PyTorch's argument parser reads it into a ``Scalar`` (NumPy scalars as Python
    numbers), with its errors for a Python int outside ``[-2**63, 2**64)``."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, int) and not isinstance(value, bool):
        if value >= 1 << 64:
            raise OverflowError(INT_TOO_BIG)
        if value < -(1 << 63):
            raise OverflowError(NEGATIVE_TO_UNSIGNED)
    return value


def checked_number_into(t, *values) -> None:
    """``checked_number`` of each of ``values`` into the result dtype of tensor ``t`` and
    ``values`` (a kernel reading its number operands in that dtype), remembered per signature:
    ``x ** 2`` and ``x.clamp(0, 1)`` sit on hot paths."""
    _checked_into(t._dtype, t._data.ndim == 0, tuple(map(type, values)), values)


@functools.lru_cache(maxsize=4096)
def _checked_into(dtype, zero_dim: bool, kinds, values) -> None:
    # ``kinds``: 1, 1.0 and True are equal keys of the cache but not equal operands
    result = D.result_type_of([(dtype, 0 if zero_dim else 1), *values])
    for value in values:
        checked_number(value, result)


def checked_number(value, dtype: D.dtype):
    """c10's ``checked_convert`` of a Python number to ``dtype``: PyTorch's overflow error for a
    value out of the type's range (NaN and infinities only for integers, imaginary parts only
    for real types). Negative integers wrap into unsigned types down to ``-max``. Returns the
    number as written (a Python number that JAX takes)."""
    value = parsed_number(value)
    if dtype is D.bool_ or isinstance(value, bool):
        return bool(value) if dtype is D.bool_ else value
    name = _CONVERT_NAMES.get(dtype.name) or E.c_type_name(dtype)
    if isinstance(value, complex):
        if not dtype.is_complex and value.imag != 0:
            raise RuntimeError(VALUE_OVERFLOW.format(name))
        parts = (value.real, value.imag)
    else:
        parts = (value,)
    integral = dtype._kind in "ui"
    real = {"complex64": np.float32, "complex128": np.float64}.get(dtype.name, dtype.np)
    info = jnp.iinfo(real) if integral else jnp.finfo(real)
    lo, hi = (int(info.min), int(info.max)) if integral else (float(info.min), float(info.max))
    for p in parts:
        if isinstance(p, int):
            bad = p > hi or p < (-hi if dtype._kind == "u" else lo)
        elif math.isnan(p) or math.isinf(p):
            bad = integral
        else:  # c10 compares in double: 2.0**63 passes for int64
            bad = p < float(lo) or p > float(hi)
        if bad:
            raise RuntimeError(VALUE_OVERFLOW.format(name))
    if dtype.is_complex:
        return complex(value)
    part = parts[0]
    if integral:
        # x86's conversion of an out-of-range double is the type's minimum
        n = int(part)
        n = lo if n > hi else n
        return n % (hi + 1) if dtype._kind == "u" else n
    return float(part) if isinstance(part, int) and part >= 1 << 63 else part


def checked_item(value: Tensor, dtype: D.dtype) -> None:
    """``checked_number`` of a 0-d tensor's ``item()`` (kernels that take it as a number); only
    eagerly, and not where the dtypes agree (the value fits)."""
    if not _is_tracer(value._data) and value._dtype is not dtype:
        checked_number(value.item(), dtype)


def _is_int_arg(x) -> bool:
    if isinstance(x, Tensor):
        return x._dtype._kind in "iu" and x._data.ndim == 0
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def index_fill_args(name: str, args: tuple, kwargs: dict, leading: tuple = ()) -> tuple:
    """``(dim, index, value)`` parsed as PyTorch's argument parser does, with its error.
    ``leading``: the input tensor of the function form, printed in the error."""
    params = ("dim", "index", "value")
    got = dict(zip(params, args))
    ok = len(args) <= 3 and all(k in params and k not in got for k in kwargs)
    got.update(kwargs)
    dim, index, value = (got.get(k) for k in params)
    ok = (
        ok
        and len(got) == 3
        and all(isinstance(t, Tensor) for t in leading)
        and _is_int_arg(dim)
        and isinstance(index, Tensor)
        and isinstance(value, (Tensor, *_NUMBERS))
    )
    if not ok:
        signatures = INDEX_FILL_SIGNATURES
        if leading:
            signatures = tuple("(Tensor input, " + s[1:] for s in signatures)
        raise TypeError(E.invalid_arguments(name, signatures, (*leading, *args), kwargs))
    if not isinstance(value, Tensor):
        value = parsed_number(value)
    return int(dim), index, value


def _restride_empty(self: Tensor, dim: int, count: int) -> None:
    """PyTorch's kernel views ``self`` with ``count`` positions of stride 0 along ``dim``; over
    the empty storage of an empty tensor, that view may need memory (its ``setStorage`` error)."""
    sizes, strides = list(self._data.shape), list(_strides(self))
    sizes[dim], strides[dim] = count, 0
    if 0 in sizes:
        return
    itemsize = self._dtype.itemsize
    nbytes = (sum((sz - 1) * st for sz, st in zip(sizes, strides)) + 1) * itemsize
    raise RuntimeError(SET_STORAGE.format(_list(sizes), _list(strides), itemsize, nbytes))


def index_fill_checks(self: Tensor, dim: int, index: Tensor, value, before_kernel=None) -> tuple:
    """PyTorch's checks of ``index_fill_``, in its order; ``(op, wrapped dim, value as
    written)``.
    ``before_kernel``: the in-place op's own checks, run where PyTorch's kernel runs them."""
    if isinstance(value, Tensor) and value._data.ndim:
        raise RuntimeError(INDEX_FILL_VALUE_DIM.format(value._data.ndim))
    if index._dtype is not D.int64:
        raise IndexError(INDEX_FILL_DTYPE)
    if before_kernel is not None:
        before_kernel()
    is_complex = (
        value._dtype.is_complex if isinstance(value, Tensor) else isinstance(value, complex)
    )
    if is_complex and not self._dtype.is_complex:
        raise RuntimeError(INDEX_FILL_COMPLEX)
    n = self._data.ndim
    d = _wrap_dim(dim, n)
    if index._data.ndim > 1:
        raise RuntimeError(INDEX_FILL_VECTOR)
    if n and self._base is None and self.numel() == 0:
        _restride_empty(self, d, index.numel())
    # the value is converted as a number (``value.item()``), even when nothing is filled
    if not isinstance(value, Tensor):
        value = checked_number(value, self._dtype)
    else:
        checked_item(value, self._dtype)
    size = self._data.shape[d] if n else 1
    others = math.prod(s for i, s in enumerate(self._data.shape) if i != d)
    if others:
        _check_index_values(index, size, d, exc=IndexError, others=(self,))
    op = OPS["index_fill_tensor" if isinstance(value, Tensor) else "index_fill_scalar"]
    return op, d, value


def _value_gradient_error(index: Tensor, shape: tuple, dim: int) -> Exception | None:
    """What PyTorch's ``IndexFillBackward1`` raises computing the value's gradient,
    ``grad.index_select(dim, unique(index)).sum()`` (``grad`` of ``shape``): ``index_select``
    refuses negative indices, with the message of the kernel it takes."""
    if _is_tracer(index._data):
        return None
    values = np.unique(np.asarray(index._data))  # sorted, as PyTorch's CPU ``unique``
    n = len(shape)
    if n == 0 and values.size != 1:
        return RuntimeError(
            f"index_select(): Index to scalar can have only 1 value, got {values.size} value(s)"
        )
    if n > 1 and values.size == 0:
        return None
    size = shape[dim] if n else 1
    bad = values[(values < 0) | (values >= size)]
    if n > 1 and math.prod(shape) == 0 and size == 0:
        return RuntimeError(INDEX_SELECT_EMPTY_AXIS)
    if not bad.size:
        return None
    if n > 1 and (dim == 1 or math.prod(shape) == 0):
        return RuntimeError(INDEX_SELECT_BOUNDS.format(int(bad[0]), size))
    return IndexError(INDEX_SELECT_RANGE)


def refuse_value_gradient(out: Tensor, self: Tensor, index: Tensor, dim: int) -> Tensor:
    """``out`` of ``index_fill`` with a tensor value; its node raises PyTorch's error in backward
    where the value's gradient cannot be computed (``_value_gradient_error``)."""
    node = out._grad_fn
    if node is None or node.name() != "IndexFillBackward1" or node.next_functions[1][0] is None:
        return out
    error = _value_gradient_error(index, self._data.shape, dim)
    if error is not None:
        kind, text = type(error), str(error)

        def backward(primals, cts):
            raise kind(text)

        wrap_backward(node, backward)
    return out


def _index_fill_out(self: Tensor, dim, index: Tensor, value) -> Tensor:
    op, d, value = index_fill_checks(self, dim, index, value)
    out = refuse_value_gradient(dispatch(op, self, index, value, dim=d), self, index, d)
    if (
        isinstance(value, Tensor)
        and value._requires_grad
        and grad_mode._state.grad_enabled
        and self._dtype._kind not in "fc"
    ):
        # PyTorch records the result, then refuses a history on an integer tensor
        raise RuntimeError(AUTOGRAD_DTYPE.format(E.scalar_type_name(self._dtype)))
    written_dims.note(out, self.ndim, dim=dim)
    return out


@tensor_op("index_fill", function=False)
def index_fill(self, *args, **kwargs) -> Tensor:
    """``Tensor.index_fill(dim, index, value)``: ``value`` (a number or a 0-d tensor) at the
    positions ``index`` (a vector or a scalar, int64) along ``dim``."""
    return _index_fill_out(self, *index_fill_args("index_fill", args, kwargs))


@tensor_op("index_fill", method=False)
def _index_fill_function(input, *args, **kwargs) -> Tensor:
    """``torch.index_fill(input, dim, index, value)``."""
    return _index_fill_out(input, *index_fill_args("index_fill", args, kwargs, (input,)))


_index_fill_function.__name__ = _index_fill_function.__qualname__ = "index_fill"


@tensor_op("take")
def take(input, index) -> Tensor:
    """``take``: elements of the flattened input at ``index`` (result has ``index``'s shape)."""
    _need_tensor(index, "take", "index", 1)
    if index._dtype is not D.int64:
        raise RuntimeError(TAKE_DTYPE.format(E.scalar_type_name(index._dtype)))
    numel = input.numel()
    values = known_values(index._data)[0] if index.numel() else None
    if values is not None:
        if numel == 0:
            raise IndexError(TAKE_EMPTY)
        values = values.reshape(-1)
        bad = values[(values < -numel) | (values >= numel)]
        if bad.size:
            raise IndexError(TAKE_RANGE.format(int(bad[0]), numel))
    return dispatch(OPS["take"], input, index)


@tensor_op("take_along_dim")
def take_along_dim(input, indices, dim=None) -> Tensor:
    """``take_along_dim``: ``gather`` after broadcasting input and indices (all but ``dim``)."""
    _need_tensor(indices, "take_along_dim", "indices", 1)
    if indices._dtype is not D.int64:
        raise RuntimeError(TAD_DTYPE.format(E.scalar_type_name(indices._dtype)))
    if dim is None:
        return gather(view(input, -1), 0, view(indices, -1))
    n = input._data.ndim
    if indices._data.ndim != n:
        raise RuntimeError(TAD_NDIM.format(n, indices._data.ndim))
    d = _wrap_dim(dim, n)
    if n == 0:  # PyTorch wraps the dim as for one dimension, then reads the size of none
        raise IndexError(NO_DIMS.format(d))
    s = list(input._data.shape)
    s[d] = indices._data.shape[d]
    shape = list(broadcast_shapes(tuple(s), indices._data.shape))
    idx = _expand(indices, tuple(shape))
    shape[d] = input._data.shape[d]
    return gather(_expand(input, tuple(shape)), d, idx)


@tensor_op("nonzero")
def nonzero(input, *, as_tuple: bool = False):
    """``nonzero``: indices of the non-zero elements (computed eagerly, Note [Eager shapes])."""
    return nonzero_of(input, as_tuple, "nonzero", "nonzero_numpy" if as_tuple else "nonzero")


def nonzero_of(input, as_tuple: bool, name: str, what: str):
    """``nonzero`` for ``name`` (``torch.where(condition)`` is ``nonzero_numpy``); ``name`` and
    ``what``: for the errors of ``_host_mask``."""
    values = _host_mask(input, name, what)
    inference = grad_mode._state.inference  # a result made in inference mode is one
    if as_tuple and values.ndim == 0:
        values = values.reshape(1)  # PyTorch's nonzero_numpy reads a 0-d tensor as 1-d
    idx = np.argwhere(values).astype(np.int64)
    out = Tensor._make(jnp.asarray(idx), D.int64, input._device, inference=inference)
    S.kernel_wrote((input,), (out, 1))  # the kernel's resize of its result
    # PyTorch fills an (ndim, n) tensor and returns its transpose: strides (1, n)
    strides = (1, idx.shape[0])
    if strides != _contiguous_strides(idx.shape):
        out.__dict__["_strides"] = strides
    if as_tuple:  # PyTorch's nonzero_numpy: ``nonzero().unbind(1)``, views of one result
        return unbind(out, 1)
    return out


@tensor_op("argwhere")
def argwhere(input) -> Tensor:
    """``argwhere``: ``nonzero(input)``."""
    return nonzero(input)


# --- __getitem__ ---------------------------------------------------------------------------------


def _treat_as_tuple(index) -> bool:
    """PyTorch's ``treatSequenceAsTuple``: a short list holding slices, sequences or tensors."""
    if isinstance(index, tuple):
        return True
    if not isinstance(index, list) or len(index) >= 32:
        return False
    return any(
        isinstance(i, (Tensor, list, tuple, slice)) or i is None or i is Ellipsis for i in index
    )


def _as_index_tensor(obj, device) -> Tensor:
    arr = np.asarray(obj)
    if arr.dtype == np.bool_:
        return Tensor._make(jnp.asarray(arr), D.bool_, device)
    if arr.size == 0:
        arr = arr.astype(np.int64)
    # PyTorch's ``indexing_tensor_from_data``: numbers become int64 (floats truncated)
    if not (np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)):
        raise IndexError(INDEX_DTYPE)
    return Tensor._make(jnp.asarray(arr.astype(np.int64)), D.int64, device)


def _getitem(self, index):
    """``Tensor.__getitem__``: PyTorch's ``applySlicing`` (views first), then ``index``."""
    result, tensors = apply_slicing(self, index, expand=False)
    if tensors:
        out = _index(result, _expand_masks(result, tensors))
        if any(isinstance(t, np.ndarray) for _, t in tensors):
            keep_indices(out, lambda: mask_slots(index, tensors, out._device), "IndexBackward0")
        return out
    if result is self:
        return alias(self)
    return result


def mask_slots(index, tensors, device) -> tuple:
    """The ``indices`` PyTorch's IndexBackward0 and IndexPutBackward0 save for an indexing with
    ``tensors`` (``(dim, index tensor or host mask)`` pairs of ``apply_slicing``): a boolean
    mask kept whole (the one given), in one slot however many dims it covers."""
    items = index if isinstance(index, tuple) or _treat_as_tuple(index) else (index,)
    # each mask in the order written: the tensor given, or None for one written as a list or
    # an array (made from its host values)
    masks = []
    for i in items:
        if isinstance(i, Tensor):
            if i._dtype in (D.bool_, D.uint8) and i._data.ndim:
                masks.append(i)
        elif isinstance(i, (list, np.ndarray)) and np.asarray(i).dtype == np.bool_:
            masks.append(None)
    slots: list = []
    extra = 0
    for dim, t in tensors:
        slots.extend([None] * (dim - extra - len(slots)))
        if isinstance(t, np.ndarray):
            given = masks.pop(0) if masks else None
            t = given if given is not None else Tensor._make(jnp.asarray(t), D.bool_, device)
            extra += t._data.ndim - 1
        slots.append(t)
    return tuple(slots)


def watch_masks(node, tensors) -> None:
    """The boolean and uint8 masks among ``tensors`` are saved by ``node`` in PyTorch (its
    ``indices``/``mask``): writing one in place before backward raises there. leafgrad's node
    holds the integer positions it made of a mask, so it checks the masks' versions too.
    (Under saved-tensor hooks PyTorch packs the mask instead and checks nothing.)"""
    if saved_mod.current() is not None:
        return
    from .dispatch import SavedVersion

    extra = tuple(
        SavedVersion(t, t._version_counter, t._version_counter.value, -1)
        for t in tensors
        if isinstance(t, Tensor) and (t._dtype is D.bool_ or t._dtype is D.uint8)
    )
    if extra:
        node._saved_checks = (*(node._saved_checks or ()), *extra)


def keep_indices(out: Tensor, make_slots, node_name: str) -> None:
    """Record ``make_slots()`` as the ``indices`` of ``out``'s node (Note [Arguments as written]
    in autograd/saved.py) when it is ``node_name``'s; a uint8 mask warns again in backward,
    where PyTorch's formula indexes with it."""
    node = out._grad_fn
    if node is None or node.name() != node_name or not grad_mode.is_grad_enabled():
        return  # (without grad mode the write records nothing: the node is an earlier one's)
    slots = make_slots()
    saved_mod.keep_written(out, indices=tuple(slots))
    watch_masks(node, slots)
    bytes_ = sum(t is not None and t._dtype is D.uint8 for t in slots)
    if bytes_:
        inner = node._backward
        # each formula that runs indexes with the masks (expandTensors warns once per uint8
        # mask): IndexBackward0's one, IndexPutBackward0's for self and for the values
        formulas = sum(f is not None for f, _ in node.next_functions) if "Put" in node_name else 1

        def warn(*_):
            for _ in range(bytes_ * formulas):
                E.warn(UINT8_INDEX)

        def backward(primals, cts):
            warn()
            return inner(primals, cts)

        wrap_backward(node, backward, warn)


def apply_slicing(self, index, setitem: bool = False, expand: bool = True):
    """PyTorch's ``applySlicing``: the view that ints, slices, ``None`` and ``...`` select, and
    the ``(dim, integer tensor)`` pairs left for advanced indexing (boolean masks expanded, or
    left as ``(dim, host mask)`` with ``expand=False``)."""
    single = not _treat_as_tuple(index)
    if single:
        index = (index,)
    elif isinstance(index, list):
        E.warn(NON_TUPLE_INDEX)
        index = tuple(index)
    items = []
    for i in index:
        if isinstance(i, list):
            i = _as_index_tensor(i, self._device)
        elif isinstance(i, np.ndarray):
            i = _as_index_tensor(i, self._device)
        elif isinstance(i, np.integer):
            i = int(i)
        elif isinstance(i, np.bool_):
            i = bool(i)
        elif isinstance(i, str):
            if single:  # a str is a sequence of sequences to PyTorch's tuple test
                E.warn(NON_TUPLE_INDEX)
            raise TypeError(f"new(): invalid data type '{type(i).__name__}'")
        items.append(i)

    def consumed(i):
        if i is None or i is Ellipsis or isinstance(i, bool):
            return 0
        if isinstance(i, Tensor) and i._dtype in (D.bool_, D.uint8):
            return max(i._data.ndim, 0) if i._data.ndim else 0
        return 1

    specified = sum(consumed(i) for i in items)
    ndim = self._data.ndim
    if single and ndim == 0:
        _check_0d_index(items[0])
    if specified > ndim:
        raise IndexError(TOO_MANY_INDICES.format(ndim))
    result, dim, real_dim = self, 0, 0  # real_dim: the dim of ``self`` (for messages)
    tensors: list = []  # (position in result, index tensor)
    for i in items:
        if i is Ellipsis:
            dim += ndim - specified
            real_dim += ndim - specified
        elif i is None:
            result = unsqueeze(result, dim)
            dim += 1
        elif isinstance(i, bool):
            result = unsqueeze(result, dim)
            idx = jnp.zeros((1 if i else 0,), jnp.int64)
            tensors.append((dim, Tensor._make(idx, D.int64, self._device)))
            dim += 1
        elif isinstance(i, int):
            size = result._data.shape[dim]
            if not -size <= i < size:
                raise IndexError(INDEX_RANGE.format(i, real_dim, size))
            result = _select_view(result, dim, i % size, {"index": i})
            real_dim += 1
        elif isinstance(i, slice):
            step = 1 if i.step is None else int(i.step)
            if step == 0:
                raise ValueError(STEP_ZERO)
            if step < 0:
                raise ValueError(STEP_POSITIVE)
            size = result._data.shape[dim]
            start, stop = _clamp_slice(size, i.start, i.stop, step)
            # Within a tuple PyTorch skips a slice written as the whole dim (start 0 or None, stop
            # None or past the end, step 1: ``x[:, -4:]`` still slices); ``x[:]`` always slices.
            whole = i.start in (None, 0) and (i.stop is None or i.stop >= size) and step == 1
            if (single and not setitem) or not whole:
                # Python's indexing hands PyTorch's slice 0 and INT64_MAX for omitted bounds
                written = {
                    "start": 0 if i.start is None else int(i.start),
                    "end": saved_mod._INT64_MAX if i.stop is None else int(i.stop),
                }
                result = _slice_view(result, dim, start, stop, step, written)
            dim += 1
            real_dim += 1
        elif isinstance(i, Tensor):
            if i._dtype in (D.bool_, D.uint8):
                if i._data.ndim == 0:
                    result = unsqueeze(result, dim)
                    host = _host_mask(i, "__getitem__ with a boolean mask")
                    idx = jnp.zeros((1 if host else 0,), jnp.int64)
                    tensors.append((dim, Tensor._make(idx, D.int64, self._device)))
                    dim += 1
                    continue
                host = _host_mask(i, "__getitem__ with a boolean mask")
                if i._dtype is D.uint8 and not setitem:  # a write warns as it dispatches
                    E.warn(UINT8_INDEX)
                tensors.append((dim, host))  # expanded once all views are applied
                dim += host.ndim
                real_dim += host.ndim
            else:
                if i._dtype._kind in "iu" and i._data.ndim == 0 and not _is_tracer(i._data):
                    v = int(i.item())
                    size = result._data.shape[dim]
                    if not -size <= v < size:
                        raise IndexError(INDEX_RANGE.format(v, real_dim, size))
                    result = _select_view(result, dim, v % size)
                    real_dim += 1
                    continue
                # PyTorch's kernel refuses other dtypes (``_expand_masks``): after the basic
                # indexing and, for a write, after the leaf checks
                tensors.append((dim, i))
                dim += 1
                real_dim += 1
        else:
            raise IndexError(
                "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables "
                f"are valid indices (got {type(i).__name__})"
            )
    if not expand:
        return result, tensors
    return result, _expand_masks(result, tensors) if tensors else []


def _check_0d_index(i) -> None:
    """PyTorch's fast path for a lone int or slice index, whose errors on a 0-d tensor come
    before the count of indices is checked."""
    if isinstance(i, int) and not isinstance(i, bool):
        raise IndexError(INDEX_0D if i == 0 else INDEX_RANGE.format(i, 0, 0))
    if isinstance(i, slice):
        raise IndexError(SLICE_0D)


def _expand_masks(x: Tensor, tensors) -> list:
    """Boolean masks (host arrays) become one integer index tensor per masked dim; the other
    index tensors must be int32 or int64 (PyTorch's ``expandTensors`` order: index by index)."""
    out = []
    for dim, t in tensors:
        if not isinstance(t, np.ndarray):
            if t._dtype not in (D.int32, D.int64):
                raise IndexError(INDEX_DTYPE)
            out.append((dim, t))
            continue
        for k, s in enumerate(t.shape):
            if s != x._data.shape[dim + k]:
                raise IndexError(
                    MASK_SHAPE.format(_list(t.shape), k, _list(x._data.shape), dim + k)
                )
        for k, nz in enumerate(np.nonzero(t)):
            out.append(
                (dim + k, Tensor._make(jnp.asarray(nz.astype(np.int64)), D.int64, x._device))
            )
    return out


def _index(x: Tensor, tensors) -> Tensor:
    """PyTorch's ``index`` with integer tensors at the given dims (``IndexBackward0``)."""
    check_index_tensors(x, tensors)
    positions = tuple(p for p, _ in tensors)
    out = dispatch(_index_op(len(tensors)), x, *(t for _, t in tensors), positions=positions)
    _index_layout(x, tensors, out)
    return out


def _index_layout(x: Tensor, tensors, out: Tensor) -> None:
    """The strides PyTorch's ``index`` gives its result: a ``TensorIterator`` over ``self``
    restrided (the indexed dims, moved to the front when they are not adjacent, replaced by the
    indices' shape with stride 0) and the index tensors viewed with size-1 dims around them
    (``AdvancedIndex``). Only a strided operand can make it other than contiguous."""
    if "_strides" not in x.__dict__ and not any("_strides" in t.__dict__ for _, t in tensors):
        return
    shape, strides = tuple(x._data.shape), _strides(x)
    positions = [p for p, _ in tensors]
    n = len(positions)
    if positions != list(range(positions[0], positions[0] + n)):  # transposeToFront
        order = positions + [d for d in range(len(shape)) if d not in positions]
        shape = tuple(shape[d] for d in order)
        strides = tuple(strides[d] for d in order)
        positions = list(range(n))
    before, after = positions[0], len(shape) - positions[-1] - 1
    index_shape = tuple(out._data.shape[before : out.ndim - after])
    operands = [
        (
            shape[:before] + index_shape + shape[before + n :],
            strides[:before] + (0,) * len(index_shape) + strides[before + n :],
        )
    ]
    for _, t in tensors:
        ts, tst = tuple(t._data.shape), _strides(t)
        lead = len(index_shape) - len(ts)
        core = (0,) * lead + tuple(
            0 if size == 1 and index_shape[lead + i] != 1 else tst[i] for i, size in enumerate(ts)
        )
        outer = core[0] * index_shape[0] if core else 1  # a view's new outer size-1 dims
        operands.append(
            ((1,) * before + index_shape + (1,) * after, (outer,) * before + core + (1,) * after)
        )
    laid = iterator_strides(tuple(out._data.shape), operands)
    if laid is not None:
        out.__dict__["_strides"] = laid


def check_index_tensors(x: Tensor, tensors) -> None:
    """PyTorch's checks of advanced-indexing tensors: they broadcast, and their values are in
    range for their dims (only eagerly; values are unknown under jit)."""
    shapes = [t._data.shape for _, t in tensors]
    try:
        functools.reduce(broadcast_shapes, shapes, ())
    except RuntimeError:
        raise IndexError(
            "shape mismatch: indexing tensors could not be broadcast together with shapes "
            + ", ".join(_list(s) for s in shapes)
        ) from None
    # PyTorch names the offending index by its position among the index tensors.
    for k, (p, t) in enumerate(tensors):
        _check_index_values(t, x._data.shape[p], k, INDEX_RANGE, IndexError)


tensor_op("__getitem__", function=False)(_getitem)
