"""Index-writing ops: ``index_add``, ``index_copy``, ``masked_scatter`` and ``put``, out of place
and in place, with PyTorch's checks in PyTorch's order.

Note [Gradients of written values]: with a repeated index, ``index_copy`` and ``put`` keep one of
the values written there, yet PyTorch's backward gives every value the gradient at its position
(``grad.index_select(dim, index)``, ``grad.take(index)``). JAX's VJP of a scattered ``set`` gives
it to the surviving value only, so the forward writes the values with their gradient stopped and
subtracts a scatter-add of zeros whose derivative is the identity (``_ghost``): its VJP is the
gather. Subtracting +0.0 leaves every written value, -0.0 and infinities included, bit for bit.

Note [index_add kernels]: PyTorch's CPU ``index_add_`` takes one of three kernels, and each
refuses an index out of range with its own error: a tensor of at most one dimension loops over
the index ("index out of range in self", an IndexError); a tensor of more dimensions, added
along its first or last dim with ``alpha == 1`` and an int64 index, runs ``scatter_add_`` (whose
error names the value, the dim and the size); any other adds slice by slice (the IndexError
again). With an empty index or an empty tensor of more dimensions nothing is checked.

Note [index_add with a complex alpha]: derivatives.yaml gives the source the gradient
``grad.index_select(dim, index) * alpha``, where the derivative of ``alpha * source`` is
``conj(alpha)`` times it (``add``'s formula has ``alpha.conj()``). To give PyTorch's result, the
forward adds ``alpha * source`` with its gradient stopped and zeros whose derivative is
``conj(alpha) * source`` (``_ghost``).
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from .. import _autocast
from .. import _dtype as D
from .. import _errors as E
from .. import _storage as S
from .. import _written_dims as written_dims
from .._known import known_values
from .._tensor import Tensor, _wrap_dim
from .api import register_ops, tensor_op
from .dispatch import broadcast_shapes, dispatch
from .inplace import inplace
from .shape import (
    INDEX_RANGE,
    MASK_BOOL,
    _expand_shape,
    _is_tracer,
    _lead,
    _list,
    checked_number,
)
from .table import OPS, OpDef

# --- PyTorch's texts -----------------------------------------------------------------------------

INDEX_ADD_VECTOR = (
    "index_add_(): Index is supposed to be a vector, but got dim: {} with type: {} and size: {}"
)
INDEX_ADD_DTYPE = "index_add_(): Expected dtype int32/int64 for index but got: {}"
INDEX_ADD_SELF_SOURCE = "index_add_(): self ({}) and source ({}) must have the same scalar type"
INDEX_ADD_DIM = "index_add_(): Indexing dim {} is out of bounds of the source tensor with dim {}"
INDEX_ADD_NUMEL = (
    "index_add_(): Number of indices ({}) should be equal to source.size(dim): ({}), for dim: {}"
)
INDEX_ADD_SHAPE = (
    "source tensor shape must match self tensor shape, excluding the specified dimension. "
    "Got self.shape = {} source.shape = {}"
)
INDEX_ADD_RANGE = "index out of range in self"
INDEX_COPY_VECTOR = "index_copy_(): Index should have dimension 1 or 0 (got {})"
INDEX_COPY_SCALAR = "index_copy_(): When source is scalar, index should have one element (got {})"
INDEX_COPY_NDIM = (
    "index_copy_(): When source and destination are not scalars, their dimensionality must "
    "match. Source dimensionality ({}), destination dimensionality ({})"
)
INDEX_COPY_DTYPE = "index_copy_(): Expected a long tensor for index, but got {}"
INDEX_COPY_SELF_SOURCE = (
    "index_copy_(): self and source expected to have the same dtype, but got (self) {} and "
    "(source) {}"
)
INDEX_COPY_SLICES = (
    "index_copy_(): Source/destination tensor must have same slice shapes. Destination slice "
    "shape: {} at dimension {} and source slice shape: {} at dimension 0."
)
INDEX_COPY_NUMEL = "index_copy_(): Number of indices ({}) should be equal to source.size(dim) ({})"
INDEX_COPY_RANGE = "index_copy_(): " + INDEX_RANGE
MASKED_SCATTER_DTYPE = (
    "masked_scatter: expected self and source to have same dtypes but got{} and {}"
)
MASKED_SCATTER_BOOL = MASK_BOOL.replace("masked_fill_", "masked_scatter_")
MASKED_SCATTER_UINT8 = (
    "masked_scatter_ received a mask with dtype torch.uint8, this behavior is now deprecated,"
    "please use a mask with dtype torch.bool instead. (Triggered internally at "
    "/__w/pytorch/pytorch/aten/src/ATen/native/TensorAdvancedIndexing.cpp:3130.)"
)
MASKED_SCATTER_SOURCE = "Number of elements of source < number of ones in mask"
PUT_DTYPE = "put_(): Expected a long tensor for index, but got {}"
PUT_SELF_SOURCE = (
    "put_(): self and source expected to have the same dtype, but got self.dtype = {} and "
    "source.dtype = {}"
)
PUT_NUMEL = (
    "put_(): Expected source and index to have the same number of elements, but got "
    "source.numel() = {}, index.numel() = {}"
)
PUT_EMPTY = "put_(): Tried to put elements into an empty tensor"
PUT_RANGE = "out of range: tried to access index {} on a tensor of {} elements."

_NUMBER = (bool, int, float, complex, np.bool_, np.number)


# --- forwards ------------------------------------------------------------------------------------


@jax.custom_jvp
def _ghost(v):
    """Zeros whose derivative is the identity (Note [Gradients of written values])."""
    return jnp.zeros_like(v)


@_ghost.defjvp
def _ghost_jvp(primals, tangents):
    return jnp.zeros_like(primals[0]), tangents[0]


def _write(x, key, values):
    """``x.at[key].set(values)`` whose VJP gives each value the gradient at its position."""
    if not jnp.issubdtype(values.dtype, jnp.inexact):
        return x.at[key].set(values)
    written = x.at[key].set(lax.stop_gradient(values))
    # zeros of derivative 1, added where written: -0.0 leaves every written value as it is
    # (Note [index_put gradients] in index_put.py says why not a subtraction)
    return written.at[key].add(-_ghost(-values))


def _add(x, key, values):
    """``x.at[key].add(values)``; into a bool tensor an addition is a logical or."""
    if x.dtype == jnp.bool_:
        return x.astype(jnp.uint8).at[key].max(values.astype(jnp.uint8)).astype(jnp.bool_)
    return x.at[key].add(values)


def _along(x, index, source, dim):
    """``(x, key, source)`` for writing ``source`` at ``index`` along ``dim``: a 0-d ``x`` or
    ``source`` is seen as a vector (PyTorch's kernels do)."""
    shape = x.shape
    if x.ndim == 0:
        x = x.reshape(1)
    if source.ndim == 0:
        source = source.reshape((1,) * x.ndim)
    return x, (slice(None),) * dim + (index.reshape(-1),), source, shape


def _index_add_forward(x, index, source, dim, alpha):
    x, key, source, shape = _along(x, index, source, dim)
    if x.dtype == jnp.bool_:
        source = source & bool(alpha)
    elif isinstance(alpha, complex) and alpha.imag:
        # Note [index_add with a complex alpha]
        source = lax.stop_gradient(source) * jnp.asarray(alpha, source.dtype) + _ghost(
            source * jnp.asarray(alpha.conjugate(), source.dtype)
        )
    elif alpha != 1:
        source = source * jnp.asarray(alpha, source.dtype)
    return _add(x, key, source).reshape(shape)


def _index_copy_forward(x, index, source, dim):
    x, key, source, shape = _along(x, index, source, dim)
    return _write(x, key, source).reshape(shape)


def _masked_scatter_forward(x, mask, source):
    shape = jnp.broadcast_shapes(x.shape, mask.shape)
    flat = jnp.broadcast_to(mask, shape).reshape(-1)
    x = jnp.broadcast_to(x, shape).reshape(-1)
    if source.size == 0:  # then no element is masked (checked eagerly)
        return x.reshape(shape)
    # the k-th masked position takes the k-th element of ``source``
    taken = source.reshape(-1)[jnp.clip(jnp.cumsum(flat) - 1, 0, source.size - 1)]
    return jnp.where(flat, taken, x).reshape(shape)


def _put_forward(x, index, source, accumulate):
    flat, key, values = x.reshape(-1), index.reshape(-1), source.reshape(-1)
    out = _add(flat, key, values) if accumulate else _write(flat, key, values)
    return out.reshape(x.shape)


def _same(meta, static):
    return (None,) * len(meta), meta[0][0]


register_ops(
    OpDef(
        "index_add",
        _index_add_forward,
        "IndexAddBackward0",
        ("self", "index", "source"),
        _same,
        edges=("self", "source"),
        # source: grad.index_select(dim, index).expand_as(source)
        saves={"source": ("index", "source")},
    ),
    OpDef(
        "index_copy",
        _index_copy_forward,
        "IndexCopyBackward0",
        ("self", "index", "source"),
        _same,
        edges=("self", "source"),
        # self: grad.index_fill(dim, index, 0); source as index_add's
        saves={"self": ("index",), "source": ("index", "source")},
    ),
    OpDef(
        "masked_scatter",
        _masked_scatter_forward,
        "MaskedScatterBackward0",
        ("self", "mask", "source"),
        _same,
        edges=("self", "source"),
        # self: grad.masked_fill(mask, 0); source: masked_scatter_backward(grad, mask, sizes)
        saves={"self": ("mask",), "source": ("mask",)},
    ),
    OpDef(
        "put",
        _put_forward,
        "PutBackward0",
        ("self", "index", "source"),
        _same,
        edges=("self", "source"),
        # self: accumulate ? grad : grad.put(index, zeros_like(source)) (source's geometry only);
        # source: grad.take(index).reshape_as(source)
        saves={"self": ("index",), "source": ("index", "source")},
    ),
)


# --- argument parsing ----------------------------------------------------------------------------


def _parse(fn: str, names: tuple, args: tuple, kwargs: dict, defaults: dict, first: int) -> list:
    """The arguments ``names`` (positional or keyword; those in ``defaults`` are keyword-only
    when they follow a ``*``), with PyTorch's parser errors for extra or missing ones.
    ``first``: the position printed for the first name (2 for the function form)."""
    positional = [n for n in names if n not in defaults or not defaults[n][1]]
    if len(args) > len(positional):
        raise TypeError(
            f"{fn}() takes {len(positional) + first - 1} positional arguments but "
            f"{len(args) + first - 1} were given"
        )
    got = dict(zip(positional, args))
    for k, v in kwargs.items():
        if k not in names:
            raise TypeError(f"{fn}() got an unexpected keyword argument '{k}'")
        if k in got:
            raise TypeError(f"{fn}() got multiple values for argument '{k}'")
        got[k] = v
    missing = [n for n in names if n not in got and n not in defaults]
    if missing:
        # PyTorch's parser words it so: "arguments" for one, "argument" for more
        word = "arguments" if len(missing) == 1 else "argument"
        quoted = ", ".join(f'"{n}"' for n in missing)
        raise TypeError(f"{fn}() missing {len(missing)} required positional {word}: {quoted}")
    return [got[n] if n in got else defaults[n][0] for n in names]


_tensor_arg = E.need_tensor


def _dim_arg(x, fn: str, pos: int) -> int:
    if isinstance(x, Tensor) and x._dtype._kind in "iu" and x._data.ndim == 0:
        return int(x)
    if not isinstance(x, (int, np.integer)) or isinstance(x, (bool, np.bool_)):
        raise TypeError(
            f"{fn}(): argument 'dim' (position {pos}) must be int, not {type(x).__name__}"
        )
    return int(x)


def _number_arg(x, fn: str, name: str):
    """A ``Scalar`` argument: a number, or a 0-d tensor that does not require grad."""
    if isinstance(x, Tensor) and x._data.ndim == 0 and not x._requires_grad:
        return x.item()
    if not isinstance(x, _NUMBER):
        raise TypeError(f"{fn}(): argument '{name}' must be Number, not {type(x).__name__}")
    return x.item() if isinstance(x, np.generic) else x


def _bool_arg(x, fn: str, name: str, pos: int) -> bool:
    if not isinstance(x, (bool, np.bool_)):
        raise TypeError(
            f"{fn}(): argument '{name}' (position {pos}) must be bool, not {type(x).__name__}"
        )
    return bool(x)


def _host(index: Tensor):
    """The index values, or None where they are unknown (under ``jax.jit``, Note [Known
    values]) or absent."""
    if index._data.size == 0:
        return None
    values = known_values(index._data)[0]
    return None if values is None else values.reshape(-1)


# --- index_add -----------------------------------------------------------------------------------


def _index_add_lead(self: Tensor, index: Tensor, source: Tensor) -> tuple:
    """Inside vmap: the batch dims in front of the physical operands of PyTorch's index_add
    batch rule (one index for the whole batch); a batched index is run sample by sample, whose
    errors are of the logical tensors."""
    return () if _lead(index) else _lead(self, index, source)


def _index_add_checks(self: Tensor, dim: int, index: Tensor, source: Tensor, alpha) -> tuple:
    """PyTorch's checks of ``index_add_`` in its order; ``(wrapped dim, alpha as written)``."""
    n = self._data.ndim
    d = _wrap_dim(dim, n)
    name = E.scalar_type_name
    if index._data.ndim > 1:
        raise IndexError(
            INDEX_ADD_VECTOR.format(index._data.ndim, name(index._dtype), _list(index._data.shape))
        )
    if index._dtype not in (D.int32, D.int64):
        raise RuntimeError(INDEX_ADD_DTYPE.format(name(index._dtype)))
    if self._dtype is not source._dtype:
        raise RuntimeError(INDEX_ADD_SELF_SOURCE.format(name(self._dtype), name(source._dtype)))
    sshape = source._data.shape
    if not (d == 0 or d < len(sshape)):
        raise RuntimeError(INDEX_ADD_DIM.format(d, len(sshape)))
    numel = index._data.size
    if numel != (sshape[d] if sshape else 1):
        if not sshape:  # PyTorch's message reads ``source.size(0)`` of a 0-d tensor
            raise IndexError(E.DIM_SCALAR.format(d))
        raise RuntimeError(INDEX_ADD_NUMEL.format(numel, sshape[d], d))
    a, b = list(self._data.shape), list(sshape)
    if a and b:
        del a[d], b[d]
    if a != b:
        lead = _index_add_lead(self, index, source)
        raise RuntimeError(
            INDEX_ADD_SHAPE.format(_list((*lead, *self._data.shape)), _list((*lead, *sshape)))
        )
    alpha = checked_number(alpha, self._dtype)
    values = _host(index)
    if values is None or (n > 1 and self._data.size == 0):
        return d, alpha
    size = self._data.shape[d] if n else 1
    bad = values[(values < 0) | (values >= size)]
    if bad.size:
        # Note [index_add kernels]; inside vmap, of the physical operands (batch dims in front)
        k = len(_index_add_lead(self, index, source))
        if n + k > 1 and d + k in (0, n + k - 1) and alpha == 1 and index._dtype is D.int64:
            raise RuntimeError(INDEX_RANGE.format(int(bad[0]), d + k, size))
        raise IndexError(INDEX_ADD_RANGE)
    return d, alpha


def _index_add_args(fn: str, args, kwargs, first: int):
    dim, index, source, alpha = _parse(
        fn, ("dim", "index", "source", "alpha"), args, kwargs, {"alpha": (1, True)}, first
    )
    dim = _dim_arg(dim, fn, first)
    _tensor_arg(index, fn, "index", first + 1)
    _tensor_arg(source, fn, "source", first + 2)
    return dim, index, source, _number_arg(alpha, fn, "alpha")


def _index_add(self: Tensor, dim, index, source, alpha) -> Tensor:
    d, alpha = _index_add_checks(self, dim, index, source, alpha)
    out = dispatch(OPS["index_add"], self, index, source, dim=d, alpha=alpha)
    written_dims.note(out, self.ndim, dim=dim)
    return out


@tensor_op("index_add", function=False)
def index_add_method(self, *args, **kwargs) -> Tensor:
    """``Tensor.index_add(dim, index, source, *, alpha=1)``: ``alpha * source`` added at the
    positions ``index`` (a vector or a scalar) along ``dim``; repeated positions add up."""
    return _index_add(self, *_index_add_args("index_add", args, kwargs, 1))


@tensor_op("index_add", method=False)
def index_add(input, *args, **kwargs) -> Tensor:
    """``torch.index_add(input, dim, index, source, *, alpha=1)``."""
    _tensor_arg(input, "index_add", "input", 1)
    return _index_add(input, *_index_add_args("index_add", args, kwargs, 2))


@tensor_op("index_add_", function=False)
def index_add_(self, *args, **kwargs) -> Tensor:
    """``Tensor.index_add_(dim, index, source, *, alpha=1)``."""
    dim, index, source, alpha = _index_add_args("index_add_", args, kwargs, 1)
    return inplace(
        self, lambda: _index_add(self, dim, index, source, alpha), index, source, overlap="any"
    )


# --- index_copy ----------------------------------------------------------------------------------


def _index_copy_checks(self: Tensor, dim: int, index: Tensor, source: Tensor) -> int:
    """PyTorch's checks of ``index_copy_`` in its order; the wrapped dim."""
    n = self._data.ndim
    d = _wrap_dim(dim, n)
    if index._data.ndim > 1:
        raise IndexError(INDEX_COPY_VECTOR.format(index._data.ndim))
    numel = index._data.size
    sshape = source._data.shape
    if not sshape and numel != 1:
        raise IndexError(INDEX_COPY_SCALAR.format(numel))
    if sshape and n and len(sshape) != n:
        raise IndexError(INDEX_COPY_NDIM.format(len(sshape), n))
    name = E.scalar_type_name
    if index._dtype is not D.int64:
        raise RuntimeError(INDEX_COPY_DTYPE.format(name(index._dtype)))
    if self._dtype is not source._dtype:
        raise RuntimeError(INDEX_COPY_SELF_SOURCE.format(name(self._dtype), name(source._dtype)))
    a, b = list(self._data.shape), list(sshape)
    if a:
        del a[d]
    if b:
        del b[d]
    if a != b:
        # c10 prints a vector as its elements separated by spaces
        raise RuntimeError(
            INDEX_COPY_SLICES.format(" ".join(map(str, a)), d, " ".join(map(str, b)))
        )
    if sshape and numel != sshape[d]:
        raise IndexError(INDEX_COPY_NUMEL.format(numel, sshape[d]))
    values = _host(index)
    # the kernel iterates over the source's elements: none, nothing checked
    if values is not None and source._data.size:
        size = self._data.shape[d] if n else 1
        bad = values[(values < 0) | (values >= size)]
        if bad.size:
            k = len(_lead(self, index, source))
            if k:  # PyTorch's batch rule writes with index_put_, whose error this is
                raise RuntimeError(INDEX_RANGE.format(int(bad[0]), d + k, size))
            raise IndexError(INDEX_COPY_RANGE.format(int(bad[0]), d, size))
    return d


def _index_copy_args(fn: str, args, kwargs, first: int):
    dim, index, source = _parse(fn, ("dim", "index", "source"), args, kwargs, {}, first)
    dim = _dim_arg(dim, fn, first)
    _tensor_arg(index, fn, "index", first + 1)
    _tensor_arg(source, fn, "source", first + 2)
    return dim, index, source


def _index_copy(self: Tensor, dim, index, source) -> Tensor:
    d = _index_copy_checks(self, dim, index, source)
    out = dispatch(OPS["index_copy"], self, index, source, dim=d)
    written_dims.note(out, self.ndim, dim=dim)  # Note [Dims as written]
    return out


@tensor_op("index_copy", function=False)
@_autocast.policy("promote")
def index_copy_method(self, *args, **kwargs) -> Tensor:
    """``Tensor.index_copy(dim, index, source)``: the slices of ``source`` written at the
    positions ``index`` (int64, a vector or a scalar) along ``dim``."""
    return _index_copy(self, *_index_copy_args("index_copy", args, kwargs, 1))


@tensor_op("index_copy", method=False)
@_autocast.policy("promote")
def index_copy(input, *args, **kwargs) -> Tensor:
    """``torch.index_copy(input, dim, index, source)``."""
    _tensor_arg(input, "index_copy", "input", 1)
    return _index_copy(input, *_index_copy_args("index_copy", args, kwargs, 2))


@tensor_op("index_copy_", function=False)
def index_copy_(self, *args, **kwargs) -> Tensor:
    """``Tensor.index_copy_(dim, index, source)``."""
    dim, index, source = _index_copy_args("index_copy_", args, kwargs, 1)
    return inplace(
        self, lambda: _index_copy(self, dim, index, source), index, source, overlap="any"
    )


# --- masked_scatter ------------------------------------------------------------------------------


def _masked_scatter_checks(self: Tensor, mask: Tensor, source: Tensor, shape: tuple) -> None:
    """The checks of PyTorch's ``masked_scatter_`` kernel on ``self`` of ``shape`` (the mask
    expanded to it): dtypes, the mask expanded, the mask's dtype, then the source's size."""
    name = E.scalar_type_name
    if self._dtype is not source._dtype:
        raise RuntimeError(MASKED_SCATTER_DTYPE.format(name(self._dtype), name(source._dtype)))
    if mask._data.ndim > len(shape):
        kind = E.tensor_type_name(mask._dtype, mask._device)
        raise RuntimeError(
            f"expand({kind}{{{_list(mask._data.shape)}}}, "
            f"size={_list(shape)}): the number of sizes provided ({len(shape)}) must be greater "
            f"or equal to the number of dimensions in the tensor ({mask._data.ndim})"
        )
    _expand_shape(mask, shape)
    if mask._dtype is D.uint8:
        E.warn(MASKED_SCATTER_UINT8)
    if mask._dtype is not D.bool_:
        raise RuntimeError(MASKED_SCATTER_BOOL.format(name(mask._dtype)))
    if _is_tracer(mask._data):
        return
    ones = int(np.broadcast_to(np.asarray(mask._data), shape).sum())
    if ones > source._data.size:
        raise RuntimeError(MASKED_SCATTER_SOURCE)


def _masked_scatter_args(fn: str, args, kwargs, first: int):
    mask, source = _parse(fn, ("mask", "source"), args, kwargs, {}, first)
    _tensor_arg(mask, fn, "mask", first)
    _tensor_arg(source, fn, "source", first + 1)
    return mask, source


def _masked_scatter(self: Tensor, mask: Tensor, source: Tensor) -> Tensor:
    # out of place, PyTorch expands the mask and ``self`` together, then writes into a copy
    shape = broadcast_shapes(mask._data.shape, self._data.shape)
    _masked_scatter_checks(self, mask, source, shape)
    return dispatch(OPS["masked_scatter"], self, mask, source)


@tensor_op("masked_scatter", function=False)
def masked_scatter_method(self, *args, **kwargs) -> Tensor:
    """``Tensor.masked_scatter(mask, source)``: the elements of ``source``, in order, written
    where the mask (broadcast with this tensor) is true."""
    return _masked_scatter(self, *_masked_scatter_args("masked_scatter", args, kwargs, 1))


@tensor_op("masked_scatter", method=False)
def masked_scatter(input, *args, **kwargs) -> Tensor:
    """``torch.masked_scatter(input, mask, source)``."""
    _tensor_arg(input, "masked_scatter", "input", 1)
    return _masked_scatter(input, *_masked_scatter_args("masked_scatter", args, kwargs, 2))


# PyTorch's kernel copies source elements into self one at a time, in order, so where ``source``
# shares memory with ``self`` it may read an element it has already overwritten. leafgrad
# writes the result out of place: it refuses exactly when that read happens (a source element
# whose memory was the target of an earlier copy), and where the mask cannot be read (a trace).
MASKED_SCATTER_ALIAS = (
    "leafgrad: masked_scatter_ whose source reads elements of self it has already written is "
    "not supported (PyTorch copies one element at a time); pass source.clone() instead."
)


def _reads_what_it_writes(self: Tensor, mask: Tensor, source) -> bool:
    if not isinstance(source, Tensor) or source._data.size == 0:
        return False
    if source is not self and not S.shares_storage(self, source):
        return False
    if not source.is_contiguous():
        return False  # PyTorch's kernel reads a contiguous copy of it
    if isinstance(mask._data, jax.core.Tracer):
        return True
    chosen = np.broadcast_to(np.asarray(mask._data).astype(bool), self._data.shape).ravel()
    targets = S.positions(self).ravel()[chosen]
    first = {}
    for m, p in enumerate(targets.tolist()):
        first.setdefault(p, m)
    reads = S.positions(source).ravel()[: len(targets)].tolist()
    return any(first.get(p, k) < k for k, p in enumerate(reads))


@tensor_op("masked_scatter_", function=False)
def masked_scatter_(self, *args, **kwargs) -> Tensor:
    """``Tensor.masked_scatter_(mask, source)``: the mask is expanded to this tensor's shape."""
    mask, source = _masked_scatter_args("masked_scatter_", args, kwargs, 1)
    if _reads_what_it_writes(self, mask, source):
        raise NotImplementedError(MASKED_SCATTER_ALIAS)

    def compute():
        _masked_scatter_checks(self, mask, source, self._data.shape)
        return dispatch(OPS["masked_scatter"], self, mask, source)

    return inplace(self, compute, mask, source, overlap=None)


# --- put -----------------------------------------------------------------------------------------


def _put_checks(self: Tensor, index: Tensor, source: Tensor) -> None:
    """PyTorch's checks of ``put_`` in its order."""
    name = E.scalar_type_name
    if index._dtype is not D.int64:
        raise RuntimeError(PUT_DTYPE.format(name(index._dtype)))
    if self._dtype is not source._dtype:
        raise RuntimeError(PUT_SELF_SOURCE.format(name(self._dtype), name(source._dtype)))
    if source._data.size != index._data.size:
        raise IndexError(PUT_NUMEL.format(source._data.size, index._data.size))
    if index._data.size == 0:
        return
    numel = math.prod(self._data.shape)
    if numel == 0:
        raise IndexError(PUT_EMPTY)
    values = _host(index)
    if values is not None:
        bad = values[(values < -numel) | (values >= numel)]
        if bad.size:
            raise IndexError(PUT_RANGE.format(int(bad[0]), numel))


def _put_args(fn: str, args, kwargs, first: int):
    index, source, accumulate = _parse(
        fn, ("index", "source", "accumulate"), args, kwargs, {"accumulate": (False, False)}, first
    )
    _tensor_arg(index, fn, "index", first)
    _tensor_arg(source, fn, "source", first + 1)
    return index, source, _bool_arg(accumulate, fn, "accumulate", first + 2)


def _put(self: Tensor, index: Tensor, source: Tensor, accumulate: bool) -> Tensor:
    _put_checks(self, index, source)
    return dispatch(OPS["put"], self, index, source, accumulate=accumulate)


@tensor_op("put", function=False)
def put_method(self, *args, **kwargs) -> Tensor:
    """``Tensor.put(index, source, accumulate=False)``: ``source`` written at the positions
    ``index`` of the flattened tensor (added up with ``accumulate``)."""
    return _put(self, *_put_args("put", args, kwargs, 1))


@tensor_op("put", method=False)
def put(input, *args, **kwargs) -> Tensor:
    """``torch.put(input, index, source, accumulate=False)``."""
    _tensor_arg(input, "put", "input", 1)
    return _put(input, *_put_args("put", args, kwargs, 2))


@tensor_op("put_", function=False)
def put_(self, *args, **kwargs) -> Tensor:
    """``Tensor.put_(index, source, accumulate=False)``."""
    index, source, accumulate = _put_args("put_", args, kwargs, 1)
    return inplace(
        self, lambda: _put(self, index, source, accumulate), index, source, overlap="any"
    )
