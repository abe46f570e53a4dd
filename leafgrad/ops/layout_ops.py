"""Layout ops: sliding windows (``unfold``), rotations, block matrices, grids and index factories.

``unfold`` is a view; ``rot90``, ``block_diag`` and the deprecated ``cholesky`` are single nodes in
PyTorch (``Rot90Backward0``, ``BlockDiagBackward0``, ``CholeskyBackward0``); the rest are
composites over existing ops, recorded node for node as PyTorch records them.

Note [Overlapping windows]: ``unfold`` with ``step < size`` makes a view whose windows share
elements. PyTorch's in-place kernels on such a view read and write memory element by element, so
a shared element is updated once per window holding it; leafgrad computes the new value of the
view out of place and would write each element of the base once, so such writes raise
(``_storage.write``) instead of giving another result.
"""

from __future__ import annotations

import functools

import jax.numpy as jnp
import numpy as np
from jax import lax

from .. import _autocast
from .. import _dtype as D
from .. import _errors as E
from .. import _factories as F
from .._known import physical_values
from .._storage import kernel_wrote
from .._tensor import Tensor, _wrap_dim
from ..autograd import saved as saved_mod
from .api import register_ops, tensor_op
from .dispatch import dispatch
from .inplace import _dense
from .linalg_ops import LinAlgError, _cholesky_value
from .linalg_ops import multi_dot as _multi_dot
from .reductions import cumprod as _cumprod
from .shape import (
    _atleast,
    _contiguous_strides,
    _lead,
    _list,
    _need_tensor,
    _set_strides,
    _strides,
    _view,
    flatten,
    flip,
    stack,
)
from .table import OPS, OpDef

# --- PyTorch's messages ------------------------------------------------------------------------
UNFOLD_MAX = "maximum size for tensor at dimension {} is {} but size is {}"
UNFOLD_SIZE = "size is {} but must be >= 0"
UNFOLD_STEP = "step is {} but must be > 0"
ROT90_NDIMS = "expected total rotation dims == 2, but got dims = {}"
ROT90_TOTAL = "expected total dims >= 2, but got total dims = {}"
ROT90_SAME = "expected rotation dims to be different, but got dim0 = {} and dim1 = {}"
BLOCK_DIAG_DIMS = (
    "torch.block_diag: Input tensors must have 2 or fewer dimensions. Input {} has {} dimensions"
)
BLOCK_DIAG_DEVICE = (
    "torch.block_diag: input tensors must all be on the same device. Input 0 is on device {} and "
    "input {} is on device {}"
)
MESHGRID_EMPTY = "meshgrid expects a non-empty TensorList"
MESHGRID_DTYPE = "meshgrid expects all tensors to have the same dtype"
MESHGRID_DEVICE = "meshgrid expects all tensors to have the same device"
MESHGRID_INDEXING = 'torch.meshgrid: indexing must be one of "xy" or "ij", but received: {}'
MESHGRID_DIMS = "torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: {}"
MESHGRID_WARNING = (
    "torch.meshgrid: in an upcoming release, it will be required to pass the indexing argument. "
    "(Triggered internally at /__w/pytorch/pytorch/aten/src/ATen/native/TensorShape.cpp:4215.)"
)
EXPECT_1D = "Expect a 1D vector, but got shape {}"
EXPECT_NONNEG = "Expect a non-negative number, but got {}"
TRI_ROW = "row must be non-negative, got{}"
TRI_COL = "col must be non-negative, got{}"
NOT_IMPLEMENTED = "\"{}\" not implemented for '{}'"
VANDER_1D = "x must be a one-dimensional tensor."
VANDER_N = "N must be non-negative."
CHAIN_MATMUL_WARNING = (
    "torch.chain_matmul is deprecated and will be removed in a future PyTorch release. Use "
    "torch.linalg.multi_dot instead, which accepts a list of two or more tensors rather than "
    "multiple parameters. (Triggered internally at "
    "/__w/pytorch/pytorch/aten/src/ATen/native/LinearAlgebra.cpp:1102.)"
)
CHAIN_MATMUL_OUT_WARNING = CHAIN_MATMUL_WARNING.replace(":1102.)", ":1120.)")
CHAIN_MATMUL_EMPTY = "chain_matmul(): Expected one or more matrices"
TENSOR_DIM = "Tensor dimension is {}, expected {} instead."
CHOLESKY_WARNING = (
    "torch.cholesky is deprecated in favor of torch.linalg.cholesky and will be removed in a "
    "future PyTorch release.\nL = torch.cholesky(A)\nshould be replaced with\n"
    "L = torch.linalg.cholesky(A)\nand\nU = torch.cholesky(A, upper=True)\n"
    "should be replaced with\nU = torch.linalg.cholesky(A).mH\nThis transform will produce "
    "equivalent results for all valid (symmetric positive definite) inputs. (Triggered "
    "internally at /__w/pytorch/pytorch/aten/src/ATen/native/BatchLinearAlgebra.cpp:1765.)"
)
CHOLESKY_OUT_WARNING = CHOLESKY_WARNING.replace(":1765.)", ":1800.)")
CHOLESKY_2D = "cholesky: The input tensor A must have at least 2 dimensions."
CHOLESKY_SQUARE = "cholesky: A must be batches of square matrices, but they are {} by {} matrices"
CHOLESKY_PD = (
    "cholesky: {}The factorization could not be completed because the input is not "
    "positive-definite (the leading minor of order {} is not positive-definite)."
)
ATLEAST_SIGNATURES = ("(Tensor input)", "(tuple of Tensors tensors)")


# --- argument parsing --------------------------------------------------------------------------


_REQUIRED = object()


def _bind(fn: str, params: tuple, args: tuple, kwargs: dict, first: int = 1) -> dict:
    """PyTorch's parser binding ``args``/``kwargs`` to ``params`` (``(name, default)`` pairs,
    ``_REQUIRED`` for none): ``{name: (value, position or None for a keyword)}``. ``first``: the
    position of ``params[0]`` in messages."""
    names = [n for n, _ in params]
    if len(args) > len(params):
        least = sum(d is _REQUIRED for _, d in params)
        takes = f"from {least} to {len(params)}" if least != len(params) else f"{len(params)}"
        raise TypeError(
            f"{fn}() takes {takes} positional arguments but {len(args) + first - 1} were given"
        )
    for key in kwargs:
        if key in names[: len(args)]:
            raise TypeError(f"{fn}() got multiple values for argument '{key}'")
        if key not in names:
            raise TypeError(f"{fn}() got an unexpected keyword argument '{key}'")
    bound = {}
    for i, (name, default) in enumerate(params):
        if i < len(args):
            bound[name] = (args[i], i + first)
        elif name in kwargs:
            bound[name] = (kwargs[name], None)
        elif default is _REQUIRED:
            raise TypeError(f'{fn}() missing 1 required positional arguments: "{name}"')
        else:
            bound[name] = (default, 0)  # a default is never checked
    return bound


def _must_be(fn: str, name: str, pos, kind: str, x) -> TypeError:
    if pos is None:
        return TypeError(E.KW_MUST_BE.format(fn, name, kind, E.py_typename(x)))
    return TypeError(E.MUST_BE.format(fn, name, pos, kind, E.py_typename(x)))


def _int_arg(bound: dict, fn: str, name: str) -> int:
    """An ``int`` parameter (a bool is refused, a 0-d integer tensor taken)."""
    x, pos = bound[name]
    if pos == 0 or F._is_int(x):
        return x if pos == 0 else int(x)
    raise _must_be(fn, name, pos, "int", x)


def _bool_arg(bound: dict, fn: str, name: str) -> bool:
    x, pos = bound[name]
    if isinstance(x, (bool, np.bool_)):
        return bool(x)
    raise _must_be(fn, name, pos, "bool", x)


def _tensors(args, what: str = "argument 0") -> list:
    """A ``TensorList`` argument: each element must be a Tensor (PyTorch's parser message)."""
    for i, t in enumerate(args):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in {what}, but got {E.py_typename(t)}")
    return list(args)


def _varargs(tensors) -> list:
    """``f(a, b)`` and ``f([a, b])`` both give ``[a, b]`` (torch/functional.py's convention)."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tensors[0]
    return _tensors(tensors)


# --- unfold ------------------------------------------------------------------------------------


def _unfold(x, dimension, size, step):
    if x.ndim == 0:
        return x.reshape(1)[:size]
    n = (x.shape[dimension] - size) // step + 1
    shape = x.shape[:dimension] + (n,) + x.shape[dimension + 1 :]
    if size == 0:
        return jnp.zeros(shape + (0,), x.dtype)
    # the windows' positions along ``dimension`` (in range: size <= the dim's size); the
    # elements of each window form a new last dim
    idx = jnp.arange(n)[:, None] * step + jnp.arange(size)[None, :]
    return jnp.moveaxis(jnp.take(x, idx, axis=dimension), dimension + 1, -1)


def _rot90(x, k, dims):
    d0, d1 = dims
    if k == 1:
        return jnp.swapaxes(jnp.flip(x, d1), d0, d1)
    if k == 2:
        return jnp.flip(x, (d0, d1))
    if k == 3:
        return jnp.swapaxes(jnp.flip(x, d0), d0, d1)
    return x


def _block_diag(*xs, shapes):
    rows = sum(s[0] for s in shapes)
    cols = sum(s[1] for s in shapes)
    dtype = jnp.result_type(*xs)
    out = jnp.zeros((rows, cols), dtype)
    r = c = 0
    for x, (m, n) in zip(xs, shapes):
        out = lax.dynamic_update_slice(out, jnp.broadcast_to(x, (m, n)).astype(dtype), (r, c))
        r, c = r + m, c + n
    return out


def _same(meta, static):
    return (None,) * len(meta), meta[0][0]


def _promote(meta, static):
    rt = D.result_type_of([m for m in meta if m is not None])
    return (None,) * len(meta), rt


@functools.cache
def _block_diag_op(n: int) -> OpDef:
    names = tuple(f"tensors{i}" for i in range(n))
    # each operand keeps its dtype: its gradient is the block cast back to it
    return OpDef("block_diag", _block_diag, "BlockDiagBackward0", names, _promote)


register_ops(
    OpDef("unfold", _unfold, "UnfoldBackward0", ("self",), _same, view=True),
    OpDef("rot90", _rot90, "Rot90Backward0", ("self",), _same),
    _block_diag_op(1),
    OpDef(
        "cholesky",
        _cholesky_value,
        "CholeskyBackward0",
        ("self",),
        _same,
        saves={"self": ("result",)},
    ),
)


@tensor_op("unfold", function=False)
def unfold(self, *args, **kwargs) -> Tensor:
    """``Tensor.unfold(dimension, size, step)``: a view of the windows of ``size`` elements,
    ``step`` apart, along ``dimension``; the window's elements form a new last dim."""
    params = (("dimension", _REQUIRED), ("size", _REQUIRED), ("step", _REQUIRED))
    bound = _bind("unfold", params, args, kwargs)
    dimension, size, step = (_int_arg(bound, "unfold", n) for n, _ in params)
    n = self._data.ndim
    d = _wrap_dim(dimension, n)
    max_size = self._data.shape[d] if n else 1
    if size > max_size:
        raise RuntimeError(UNFOLD_MAX.format(d + len(_lead(self)), max_size, size))
    if size < 0:
        raise RuntimeError(UNFOLD_SIZE.format(size))
    if step <= 0:
        raise RuntimeError(UNFOLD_STEP.format(step))
    if n == 0:
        strides = (1,)
    else:
        st = list(_strides(self))
        strides = st[:d] + [st[d] * step] + st[d + 1 :] + [st[d]]
    out = _view(self, "unfold", strides, dimension=d, size=size, step=step)
    if dimension != d:  # Note [Dims as written] in _written_dims.py
        saved_mod.keep_written(out, dimension=dimension)
    return out


# --- rot90 -------------------------------------------------------------------------------------


@tensor_op("rot90")
def rot90(input, *args, **kwargs) -> Tensor:
    """``rot90(k=1, dims=[0, 1])``: rotate by 90 degrees ``k`` times in the plane of ``dims``
    (from the first dim towards the second)."""
    bound = _bind("rot90", (("k", 1), ("dims", (0, 1))), args, kwargs, 2)
    k = _int_arg(bound, "rot90", "k")
    dims, pos = bound["dims"]
    if not isinstance(dims, (list, tuple)) or not all(F._is_int(d) for d in dims):
        raise _must_be("rot90", "dims", pos, "tuple of ints", dims)
    dims = tuple(int(d) for d in dims)
    n = input._data.ndim
    if len(dims) != 2:
        raise RuntimeError(ROT90_NDIMS.format(len(dims)))
    if n < 2:
        raise RuntimeError(ROT90_TOTAL.format(n))
    if dims[0] == dims[1] or abs(dims[0] - dims[1]) == n:
        raise RuntimeError(ROT90_SAME.format(*dims))
    d0, d1 = _wrap_dim(dims[0], n), _wrap_dim(dims[1], n)
    written = {"dims": dims, "k": k}  # as given, which Rot90Backward0 keeps
    k = k % 4
    shape = input._data.shape
    # PyTorch: ``flip`` (whose result keeps a non-overlapping and dense input's strides), then
    # ``transpose_`` of it for k = 1, 3; k = 0 is a contiguous clone.
    st = _strides(input)
    flipped = tuple(st) if k and _dense(shape, st) else _contiguous_strides(shape)
    out = dispatch(OPS_ROT90, input, k=k, dims=(d0, d1))
    strides = list(flipped)
    if k in (1, 3):
        strides[d0], strides[d1] = strides[d1], strides[d0]
    if written != {"dims": (d0, d1), "k": k}:  # Note [Dims as written] in _written_dims.py
        saved_mod.keep_written(out, **written)
    return _set_strides(out, strides)


# --- block_diag, cartesian_prod, combinations, meshgrid ----------------------------------------


@tensor_op("block_diag", method=False)
def block_diag(*tensors) -> Tensor:
    """``torch.block_diag``: the tensors (0-d, 1-d as one row, or 2-d) on the diagonal of a
    matrix of zeros (``BlockDiagBackward0``)."""
    tensors = _tensors(tensors)
    if not tensors:
        return F.empty(1, 0)
    device = tensors[0]._device
    for i, t in enumerate(tensors):
        if t._device != device:
            raise RuntimeError(BLOCK_DIAG_DEVICE.format(device, i, t._device))
    shapes = []
    for i, t in enumerate(tensors):
        n = t._data.ndim
        if n > 2:
            raise RuntimeError(BLOCK_DIAG_DIMS.format(i, n))
        shape = t._data.shape
        shapes.append(shape if n == 2 else (1, shape[0]) if n == 1 else (1, 1))
    out = dispatch(_block_diag_op(len(tensors)), *tensors, shapes=tuple(shapes))
    # PyTorch's kernel zero-fills its result, then copies each block in
    kernel_wrote(tensors, (out, len(tensors) + 1))
    return out


def _meshgrid(tensors: list, indexing: str) -> tuple:
    """PyTorch's ``meshgrid``: each tensor viewed along its own dim and expanded (``xy``
    indexing swaps the first two inputs, then the first two outputs)."""
    if not tensors:
        raise RuntimeError(MESHGRID_EMPTY)
    for a, b in zip(tensors, tensors[1:]):
        if a._dtype is not b._dtype:
            raise RuntimeError(MESHGRID_DTYPE)
        if a._device != b._device:
            raise RuntimeError(MESHGRID_DEVICE)
    refs = list(tensors)
    swap = False
    if indexing == "xy":
        swap = len(refs) >= 2
        if swap:
            refs[0], refs[1] = refs[1], refs[0]
    elif indexing != "ij":
        raise RuntimeError(MESHGRID_INDEXING.format(indexing))
    for t in refs:
        if t._data.ndim > 1:
            raise RuntimeError(MESHGRID_DIMS.format(_cpp_str(t)))
    shape = tuple(t.numel() for t in refs)
    grids = []
    for i, t in enumerate(refs):
        view_shape = [1] * len(refs)
        view_shape[i] = -1
        grids.append(t.view(view_shape).expand(shape))
    if swap:
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


@tensor_op("meshgrid", method=False)
def meshgrid(*tensors, indexing: str | None = None) -> tuple:
    """``torch.meshgrid``: coordinate grids (views of the inputs, expanded)."""
    tensors = _varargs(tensors)
    if indexing is None:
        E.warn_once(MESHGRID_WARNING)
        indexing = "ij"
    return _meshgrid(tensors, indexing)


def _check_1d(t: Tensor) -> None:
    if t._data.ndim != 1:
        raise RuntimeError(EXPECT_1D.format(_list(t._data.shape)))


@tensor_op("cartesian_prod", method=False)
def cartesian_prod(*tensors) -> Tensor:
    """``torch.cartesian_prod``: the rows of all combinations of one element of each vector."""
    tensors = _tensors(tensors)  # a list is refused: PyTorch passes ``tensors`` on as they are
    for t in tensors:
        _check_1d(t)
    if len(tensors) == 1:
        return tensors[0]
    grids = [flatten(g) for g in _meshgrid(tensors, "ij")]
    return stack(grids, 1)


@tensor_op("combinations", method=False)
def combinations(input, *args, **kwargs) -> Tensor:
    """``torch.combinations(input, r=2, with_replacement=False)``: the ``r``-element combinations
    of a vector's elements, as rows (masked selections of a meshgrid, as PyTorch computes them)."""
    _need_tensor(input, "combinations", "input", 1)
    bound = _bind("combinations", (("r", 2), ("with_replacement", False)), args, kwargs, 2)
    r = _int_arg(bound, "combinations", "r")
    with_replacement = _bool_arg(bound, "combinations", "with_replacement")
    _check_1d(input)
    if r < 0:
        raise RuntimeError(EXPECT_NONNEG.format(r))
    if r == 0:
        return F.empty(0, dtype=input._dtype, device=input._device)
    n = input.numel()
    grids = _meshgrid([input] * r, "ij")
    # the mask i < j < k < ... (<= with replacement) over the grid's indices: a host constant,
    # as PyTorch builds it from ``arange`` without autograd
    idx = np.indices((n,) * r)
    mask = np.ones((n,) * r, bool)
    for i in range(r - 1):
        mask &= (idx[i] <= idx[i + 1]) if with_replacement else (idx[i] < idx[i + 1])
    mask_t = Tensor._make(jnp.asarray(mask), D.bool_, input._device)
    count = int(mask.sum())  # known from the shape alone: the selection also runs under jit
    return stack([dispatch(OPS["masked_select"], g, mask_t, n=count) for g in grids], 1)


# --- atleast_nd --------------------------------------------------------------------------------


def _atleast_fn(n: int):
    name = f"atleast_{n}d"

    def fn(*tensors):
        if len(tensors) == 1:
            tensors = tensors[0]
        if isinstance(tensors, Tensor):
            return _atleast(tensors, n)
        if not isinstance(tensors, (list, tuple)):
            raise TypeError(E.invalid_arguments(name, ATLEAST_SIGNATURES, (tensors,)))
        return tuple(_atleast(t, n) for t in _tensors(tensors))

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (
        f"``torch.{name}``: a tensor with at least {n} dims (views), or a tuple of them for "
        "several tensors."
    )
    return fn


atleast_1d = tensor_op("atleast_1d", method=False)(_atleast_fn(1))
atleast_2d = tensor_op("atleast_2d", method=False)(_atleast_fn(2))
atleast_3d = tensor_op("atleast_3d", method=False)(_atleast_fn(3))


# --- index factories ---------------------------------------------------------------------------


def _tri_indices(fn, args, kwargs, lower: bool) -> Tensor:
    options = ("dtype", "layout", "device", "pin_memory", "requires_grad")
    factory = {k: kwargs.pop(k) for k in options if k in kwargs}
    params = (("row", _REQUIRED), ("col", _REQUIRED), ("offset", 0))
    bound = _bind(fn, params, args, kwargs)
    row, col, offset = (_int_arg(bound, fn, n) for n, _ in params)
    dtype = factory.get("dtype")
    device = factory.get("device")
    requires_grad = factory.get("requires_grad", False)
    dtype = D.int64 if dtype is None else F._dtype_arg(dtype, fn)
    if row < 0:
        raise RuntimeError(TRI_ROW.format(row))
    if col < 0:
        raise RuntimeError(TRI_COL.format(col))
    if dtype not in (D.int32, D.int64):
        raise NotImplementedError(NOT_IMPLEMENTED.format(fn, E.scalar_type_name(dtype)))
    # row-major order, as PyTorch's kernel
    rows, cols = np.nonzero(
        np.tri(row, col, offset, bool) if lower else ~np.tri(row, col, offset - 1, bool)
    )
    values = np.stack([rows, cols]).astype(dtype.np).reshape(2, -1)
    return F._leaf(values, dtype, device, requires_grad)


@tensor_op("tril_indices", method=False)
def tril_indices(*args, **kwargs) -> Tensor:
    """``torch.tril_indices(row, col, offset=0, *, dtype=torch.long, device=None, ...)``: the
    (row, col) indices of the lower triangle, a 2 x N tensor."""
    return _tri_indices("tril_indices", args, kwargs, True)


@tensor_op("triu_indices", method=False)
def triu_indices(*args, **kwargs) -> Tensor:
    """``torch.triu_indices(row, col, offset=0, *, dtype=torch.long, device=None, ...)``: the
    (row, col) indices of the upper triangle, a 2 x N tensor."""
    return _tri_indices("triu_indices", args, kwargs, False)


# --- vander, chain_matmul, cholesky ------------------------------------------------------------


@tensor_op("vander", method=False)
def vander(x, *args, **kwargs) -> Tensor:
    """``torch.vander(x, N=None, increasing=False)``: columns of powers of ``x``, computed as
    PyTorch does (ones, a copy of ``x`` into columns 1.., their cumulative product, then a flip
    unless ``increasing``)."""
    _need_tensor(x, "vander", "x", 1)
    bound = _bind("vander", (("N", None), ("increasing", False)), args, kwargs, 2)
    N = None if bound["N"][0] is None else _int_arg(bound, "vander", "N")
    increasing = _bool_arg(bound, "vander", "increasing")
    if x._data.ndim != 1:
        raise RuntimeError(VANDER_1D)
    n = x._data.shape[0]
    if N is not None:
        if N < 0:
            raise RuntimeError(VANDER_N)
        n = N
    dtype = D.promote_types(x._dtype, D.int64)
    result = F.empty(x._data.shape[0], n, dtype=dtype, device=x._device)
    if n > 0:
        result.fill_(1)
        if n > 1:
            result[:, 1:].copy_(x.unsqueeze(1))
            result[:, 1:].copy_(_cumprod(result[:, 1:], 1))
    if not increasing:
        return flip(result, 1)
    return result


@tensor_op("chain_matmul", method=False)
def chain_matmul(*matrices, out=None) -> Tensor:
    """``torch.chain_matmul`` (deprecated): ``linalg.multi_dot`` of two or more matrices; one
    matrix is cloned. With ``out=``, PyTorch's ``chain_matmul_out`` warns from its own line."""
    if out is not None:
        from .._arg_check import _call_with_out

        def compute(*matrices):
            return _chain_matmul(matrices, CHAIN_MATMUL_OUT_WARNING)

        return _call_with_out(compute, "chain_matmul", matrices, {"out": out})
    return _chain_matmul(matrices, CHAIN_MATMUL_WARNING)


def _chain_matmul(matrices, warning: str) -> Tensor:
    matrices = _tensors(matrices)
    E.warn_once(warning)
    for m in matrices:
        if m._data.ndim != 2:
            raise RuntimeError(TENSOR_DIM.format(m._data.ndim, 2))
    if not matrices:
        raise RuntimeError(CHAIN_MATMUL_EMPTY)
    if len(matrices) == 1:
        return matrices[0].clone()
    return _multi_dot(matrices)


def _cholesky_frontend(input, args, kwargs, first: int) -> Tensor:
    upper = _bool_arg(
        _bind("cholesky", (("upper", False),), args, kwargs, first), "cholesky", "upper"
    )
    from ..autograd import forward_ad

    if forward_ad.ACTIVE[0]:  # before the kernel warns (Note [Forward AD not implemented])
        forward_ad.refuse_op("cholesky", (input,))
    E.warn_once(CHOLESKY_WARNING)
    n = input._data.ndim
    if n < 2:
        raise RuntimeError(CHOLESKY_2D)
    rows, cols = input._data.shape[-2:]
    if rows != cols:
        raise RuntimeError(CHOLESKY_SQUARE.format(rows, cols))
    if input._dtype not in (D.float32, D.float64, D.complex64, D.complex128):
        raise NotImplementedError(
            NOT_IMPLEMENTED.format("cholesky_cpu", E.scalar_type_name(input._dtype))
        )
    out = dispatch(OPS_CHOLESKY, input, upper=upper)
    _check_positive_definite(input, out, upper)
    if input._data.size == 0:
        return out  # nothing went through LAPACK: a contiguous result
    # LAPACK's result: column-major matrices, one after the other
    n = max(rows, 1)
    batch = _contiguous_strides(input._data.shape[:-2])
    return _set_strides(out, tuple(s * n * n for s in batch) + (1, n))


def _check_positive_definite(A: Tensor, out: Tensor, upper: bool) -> None:
    """LAPACK's error for a matrix that is not positive-definite (eagerly, after a non-finite
    result: values are unknown under jit)."""
    from .linalg_ops import _finite

    if _finite(out):
        return
    data = physical_values(A._data)  # inside vmap: the physical batch, as PyTorch's rule
    if data is None:
        return
    mats = data.reshape(-1, *data.shape[-2:])
    for b, m in enumerate(mats):
        m = m.T if upper else m  # the triangle read, as the lower one
        for k in range(1, m.shape[-1] + 1):
            minor = np.tril(m[:k, :k]) + np.tril(m[:k, :k], -1).conj().T
            if not np.all(np.linalg.eigvalsh(minor) > 0):
                prefix = f"(Batch element {b}): " if data.ndim > 2 else ""
                raise LinAlgError(CHOLESKY_PD.format(prefix, k))


@tensor_op("cholesky", method=False)
@_autocast.policy("fp32")
def cholesky(input, *args, out=None, **kwargs) -> Tensor:
    """``torch.cholesky(input, upper=False)`` (deprecated): the Cholesky factor from the lower
    (or, with ``upper``, the upper) triangle (``CholeskyBackward0``)."""
    _need_tensor(input, "cholesky", "input", 1)
    if out is not None:  # PyTorch's cholesky_out warns, then calls cholesky, which warns too
        from .._arg_check import _call_with_out

        E.warn_once(CHOLESKY_OUT_WARNING)

        def compute(*_, **__):
            return _cholesky_frontend(input, args, kwargs, 2)

        return _call_with_out(compute, "cholesky", (input, *args), {**kwargs, "out": out})
    return _cholesky_frontend(input, args, kwargs, 2)


@tensor_op("cholesky", function=False)
def _cholesky_method(self, *args, **kwargs) -> Tensor:
    """``Tensor.cholesky(upper=False)``."""
    return _cholesky_frontend(self, args, kwargs, 1)


_cholesky_method.__name__ = _cholesky_method.__qualname__ = "cholesky"


# --- C++ printing of a tensor (error messages that include one) --------------------------------


def _cpp_format(values: np.ndarray):
    """PyTorch's ``__printFormat`` (Formatting.cpp): ``(cell width, number formatter)`` for the
    integral and the fixed-point layouts; scaled and scientific layouts print in fixed point."""
    finite = values[np.isfinite(values)]
    int_mode = bool(np.all(finite == np.ceil(finite)))
    exp_max = 1.0
    if finite.size:
        hi = float(np.abs(finite).max())
        exp_max = np.floor(np.log10(hi)) + 1 if hi != 0 else 1.0
    if int_mode and exp_max <= 9:
        return int(exp_max) + 1, lambda v: f"{v:g}" if np.isfinite(v) else _cpp_special(v)
    width = 7 if exp_max <= 0 else int(exp_max) + 6
    return width, lambda v: f"{v:.4f}" if np.isfinite(v) else _cpp_special(v)


def _cpp_special(v: float) -> str:
    return "nan" if np.isnan(v) else ("inf" if v > 0 else "-inf")


def _cpp_matrix(m: np.ndarray, indent: int) -> str:
    width, fmt = _cpp_format(m)
    rows = [" ".join(fmt(float(v)).rjust(width) for v in row) for row in m]
    # PyTorch indents the rows after the first
    return ("\n" + " " * indent).join(rows) + "\n"


def _cpp_str(t: Tensor) -> str:
    """A tensor of 2 or more dims as PyTorch's C++ ``operator<<`` prints it (lines of at most 80
    characters are assumed)."""
    values = np.asarray(t._data).astype(np.complex128 if t._dtype.is_complex else np.float64)
    values = values.real
    shape = values.shape
    name = E.tensor_type_name(t._dtype, t._device)
    dims = ",".join(str(s) for s in shape)
    body = ""
    if values.size:
        if values.ndim == 2:
            body = _cpp_matrix(values, 0)
        else:
            # batch indices counted first-fastest, 1-based (``__printTensor``)
            parts = []
            for idx in np.ndindex(*reversed(shape[:-2])):
                idx = tuple(reversed(idx))
                head = "(" + "".join(f"{i + 1}," for i in idx) + ".,.) = \n"
                parts.append(head + _cpp_matrix(values[idx], 1))
            body = "\n".join(parts)
    return f"{body}[ {name}{{{dims}}} ]"


OPS_ROT90 = OPS["rot90"]
OPS_CHOLESKY = OPS["cholesky"]
