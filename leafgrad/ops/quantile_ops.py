"""``quantile`` and ``nanquantile``, recorded as PyTorch 2.13 records them (a composite of sort,
view, gather, lerp_ and in-place squeezes), and ``index_reduce`` with PyTorch's gradients.

Note [quantile's graph]: ATen's ``quantile_compute`` sorts the input (flattened when no dim is
given; otherwise the reduced dim is moved last by ``unsqueeze(-1).transpose(dim, -1)``, skipped
when it is already last), views it to the output's shape with the values last, turns ``q`` into
ranks (``q * (n - 1)``; NaN rows rank last for ``quantile``; ``nanquantile`` ranks among the
non-NaN values), gathers the values at the ranks below (and above, for linear and midpoint, which
``lerp_`` in place), then squeezes in place. The composite below dispatches the same ops in the
same order, so ``grad_fn`` and its ``next_functions`` are PyTorch's, and so are the gradients at
ties and NaNs (the sort's indices decide which element a gathered value came from).
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from .. import _autocast
from .. import _dtype as D
from .. import _errors as E
from .._tensor import Tensor, _wrap_dim
from .api import register_ops, tensor_op
from .dispatch import dispatch
from .inplace import inplace
from .scatter_ops import (
    INDEX_ADD_DIM,
    INDEX_ADD_DTYPE,
    INDEX_ADD_NUMEL,
    INDEX_ADD_RANGE,
    INDEX_ADD_SELF_SOURCE,
    INDEX_ADD_SHAPE,
    INDEX_ADD_VECTOR,
    _along,
    _dim_arg,
    _host,
    _parse,
    _tensor_arg,
)
from .shape import _is_tracer, _list
from .table import OPS, OpDef

# --- PyTorch's texts -----------------------------------------------------------------------------

Q_RANGE = "quantile() q must be in the range [0, 1] but got {:g}"
Q_VALUES_RANGE = "quantile() q values must be in the range [0, 1]"
Q_INTERPOLATION = (
    "quantile() interpolation must be one of linear, lower, higher, midpoint or nearest, but got {}"
)
Q_EMPTY = "quantile() input tensor must be non-empty"
Q_DIM = "quantile() q must be a scalar or 1D tensor"
Q_DTYPE = "quantile() input tensor must be either float or double dtype"
Q_SAME_DTYPE = "quantile() q tensor must be same dtype as the input tensor"
Q_DEVICE = "quantile() q tensor must be on the same device as the input tensor"
Q_TOO_LARGE = "quantile() input tensor is too large"

_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")

_Q_TAIL = 'int dim = None, bool keepdim = False, *, str interpolation = "linear"'
_FUNCTION_SIGNATURES = (
    f"(Tensor input, Tensor q, {_Q_TAIL}, Tensor out = None)",
    f"(Tensor input, float q, {_Q_TAIL}, Tensor out = None)",
)
_METHOD_SIGNATURES = (f"(Tensor q, {_Q_TAIL})", f"(float q, {_Q_TAIL})")


def _bind_quantile(name: str, signatures, args: tuple, kwargs: dict) -> dict:
    """The arguments as PyTorch's parser takes them, or its TypeError. ``float`` takes any real
    number (a bool or an int too), which the binder reads as ``Number``."""
    match = [s.replace("float q", "Number q") for s in signatures]
    bound = E.bind(match, args, kwargs)
    if bound is not None:
        q = bound[1]["q"]
        if bound[0] == 1 and isinstance(q, (Tensor, complex, np.complexfloating)):
            bound = None
    if bound is None:
        raise TypeError(E.invalid_arguments(name, signatures, args, kwargs))
    values = bound[1]
    if values.get("out") is not None:
        raise NotImplementedError(f"{name}(): out= is not supported")
    return values


def _quantile(input: Tensor, q, dim, keepdim: bool, interpolation: str, ignore_nan: bool) -> Tensor:
    import leafgrad as lg

    if not isinstance(q, Tensor):
        q = float(q)
        if not (0 <= q <= 1):
            raise RuntimeError(Q_RANGE.format(q))
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError(Q_INTERPOLATION.format(interpolation))
    if not isinstance(q, Tensor):
        q = lg.scalar_tensor(q, dtype=input._dtype, device=input.device)
    # quantile_checks, in ATen's order
    if input._data.size == 0:
        raise RuntimeError(Q_EMPTY)
    if q._data.ndim > 1:
        raise RuntimeError(Q_DIM)
    if input._dtype not in (D.float32, D.float64):
        raise RuntimeError(Q_DTYPE)
    if q._dtype is not input._dtype:
        raise RuntimeError(Q_SAME_DTYPE)
    if q.device != input.device:
        raise RuntimeError(Q_DEVICE)
    ndim = input._data.ndim
    wrapped = None if dim is None else _wrap_dim(dim, ndim)

    # the output's shape (ATen's quantile_output_shape), with q's dim first
    if wrapped is not None and ndim > 0:
        out_shape = list(input._data.shape)
        if keepdim:
            out_shape[wrapped] = 1
        else:
            del out_shape[wrapped]
    else:
        out_shape = [1] * ndim if keepdim else []
    out_shape.insert(0, q._data.size if q._data.ndim else 1)

    # ATen checks q's values only on the CPU, where reading them costs no device sync
    if input.device.type == "cpu" and not _is_tracer(q._data):
        qs = np.asarray(q._data)
        if not ((qs >= 0) & (qs <= 1)).all():
            raise RuntimeError(Q_VALUES_RANGE)

    # Note [quantile's graph]
    if wrapped is None:
        sorted_ = (input.flatten() if ndim != 1 else input).sort()[0]
    elif wrapped == ndim - 1:
        sorted_ = input.sort()[0]
    else:
        sorted_ = input.unsqueeze(-1).transpose(wrapped, -1).sort()[0]
    n = sorted_.shape[-1]
    sorted_ = sorted_.view(out_shape[1:] + [n])
    if n > 2**24:
        raise RuntimeError(Q_TOO_LARGE)

    if ignore_nan:
        # rank among the non-NaN values; all NaN: rank 0, whose value is NaN
        count = sorted_.isnan().logical_not_().sum(-1, True)
        ranks = q * (count - 1)
        ranks.masked_fill_(ranks < 0, 0)
    else:
        # a row with a NaN ranks last, where the sort put its NaN
        last = n - 1
        scaled = dispatch(OPS["nn.mul_scalar"], q, last)
        nan = sorted_.isnan().any(-1, True)
        shape = tuple(np.broadcast_shapes(scaled.shape, nan.shape))
        scaled = scaled if tuple(scaled.shape) == shape else scaled.expand(shape)
        nan = nan if tuple(nan.shape) == shape else nan.expand(shape)
        ranks = scaled.masked_fill(nan, last)

    if interpolation == "lower":
        ranks.floor_()
    elif interpolation == "higher":
        ranks.ceil_()
    elif interpolation == "nearest":
        ranks.round_()

    ranks_below = ranks.to(D.int64)
    values = sorted_.gather(-1, ranks_below)
    if interpolation in ("linear", "midpoint"):
        if interpolation == "midpoint":
            weights = lg.full_like(ranks, 0.5)
        else:
            weights = ranks - ranks_below
        ranks_above = ranks.ceil_().to(D.int64)
        values_above = sorted_.gather(-1, ranks_above)
        values.lerp_(values_above, weights)

    if q._data.ndim == 0:
        values.squeeze_(-1)
    else:
        values.unsqueeze_(0).transpose_(0, -1).squeeze_(-1)
    return values


def _quantile_frontend(name: str, ignore_nan: bool, method: bool):
    signatures = _METHOD_SIGNATURES if method else _FUNCTION_SIGNATURES

    def frontend(*args, **kwargs) -> Tensor:
        if method:
            self, args = args[0], args[1:]
            values = _bind_quantile(name, signatures, args, kwargs)
        else:
            values = _bind_quantile(name, signatures, args, kwargs)
            self = values["input"]
        return _quantile(
            self,
            values["q"],
            values.get("dim"),
            values.get("keepdim", False),
            values.get("interpolation", "linear"),
            ignore_nan,
        )

    return frontend


quantile_method = tensor_op("quantile", function=False)(
    _autocast.policy("fp32")(_quantile_frontend("quantile", False, method=True))
)
quantile = tensor_op("quantile", method=False)(
    _autocast.policy("fp32")(_quantile_frontend("quantile", False, False))
)
nanquantile_method = tensor_op("nanquantile", function=False)(
    _autocast.policy("fp32")(_quantile_frontend("nanquantile", True, method=True))
)
nanquantile = tensor_op("nanquantile", method=False)(
    _autocast.policy("fp32")(_quantile_frontend("nanquantile", True, False))
)
quantile.__doc__ = """``torch.quantile(input, q, dim=None, keepdim=False, *,
interpolation='linear')``: the ``q``-th quantiles (a number or a 1-D tensor, in [0, 1]) of
``input`` along ``dim`` (of all its values when None); a row with a NaN gives NaN."""
nanquantile.__doc__ = """``torch.nanquantile(...)``: ``quantile`` of the non-NaN values of each
row (NaN where all are NaN)."""


# --- index_reduce --------------------------------------------------------------------------------
#
# Note [index_reduce gradients]: derivatives.yaml gives ``index_reduce_backward``
# (FunctionsManual.cpp), which differs from JAX's VJP of the scatters where values tie or are
# zero: amax/amin split the gradient evenly among all values equal to the result (``self``'s
# included), and prod divides by the other factors with zeros masked so that a single zero
# factor still gets the product of the others. The forward is a ``jax.custom_vjp`` whose backward
# is that formula, written in ``jax.numpy`` so that it is differentiable again (create_graph).

INDEX_REDUCE_REDUCE = (
    "index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got {}."
)
INDEX_REDUCE_BETA = (
    "index_reduce() is in beta and the API may change at any time. (Triggered internally at "
    "/__w/pytorch/pytorch/aten/src/ATen/native/TensorAdvancedIndexing.cpp:1523.)"
)
_REDUCES = ("prod", "mean", "amax", "amin")


def _index_reduce_raw(x, index, source, dim, reduce, include_self):
    """ATen's ``index_reduce_`` kernel, out of place."""
    x, key, source, shape = _along(x, index, source, dim)
    boolean = x.dtype == jnp.bool_
    if boolean:  # products and extrema of bools are ands and ors
        x, source = x.astype(jnp.uint8), source.astype(jnp.uint8)
    if reduce == "mean":
        base = x if include_self else x.at[key].set(0)
        total = base.at[key].add(source)
        counts = (jnp.ones_like(x) if include_self else jnp.zeros_like(x)).at[key].add(1)
        counts = jnp.where(counts == 0, jnp.ones_like(counts), counts)
        if jnp.issubdtype(x.dtype, jnp.inexact):
            out = total / counts
        else:
            out = jnp.floor_divide(total, counts)
    elif reduce == "prod":
        base = x if include_self else x.at[key].set(1)
        out = base.at[key].multiply(source)
    else:
        if include_self:
            base = x
        elif jnp.issubdtype(x.dtype, jnp.floating):
            base = x.at[key].set(-jnp.inf if reduce == "amax" else jnp.inf)
        else:
            info = jnp.iinfo(x.dtype)
            base = x.at[key].set(info.min if reduce == "amax" else info.max)
        # NaN wins, as in ATen's maximum/minimum
        nan = jnp.zeros_like(x, dtype=bool)
        if jnp.issubdtype(x.dtype, jnp.floating):
            nan = nan.at[key].max(jnp.isnan(source)) | (jnp.isnan(x) & include_self)
        out = base.at[key].max(source) if reduce == "amax" else base.at[key].min(source)
        out = jnp.where(nan, jnp.full_like(out, jnp.nan), out)
    if boolean:
        out = out.astype(jnp.bool_)
    return out.reshape(shape)


@functools.partial(jax.custom_vjp, nondiff_argnums=(3, 4, 5))
def _index_reduce_diff(x, index, source, dim, reduce, include_self):
    return _index_reduce_raw(x, index, source, dim, reduce, include_self)


def _index_reduce_fwd(x, index, source, dim, reduce, include_self):
    result = _index_reduce_raw(x, index, source, dim, reduce, include_self)
    return result, (x, index, source, result)


def _index_reduce_bwd(dim, reduce, include_self, res, grad):
    """``index_reduce_backward`` (Note [index_reduce gradients])."""
    x, index, source, result = res
    shape, sshape = x.shape, source.shape
    xv, _, sv, _ = _along(x, index, source, dim)
    g = grad.reshape(xv.shape)
    r = result.reshape(xv.shape)
    idx = index.reshape(-1)

    def select(t):  # t.index_select(dim, index)
        return jnp.take(t, idx, axis=dim)

    def add_at(t, values):  # t.index_add(dim, index, values)
        return t.at[(slice(None),) * dim + (idx,)].add(values)

    one = jnp.ones((), x.dtype)
    if reduce == "prod":
        masked_self = jnp.where(xv == 0, one, xv)
        masked_self_result = _index_reduce_raw(masked_self, index, sv, dim, reduce, include_self)
        grad_self = g * masked_self_result / masked_self
        src_zero = sv == 0
        src_num_zeros = select(add_at(jnp.zeros_like(xv), src_zero.astype(x.dtype)))
        src_single_zero = src_zero & (src_num_zeros == 1)
        masked_src = jnp.where(src_single_zero, one, sv)
        masked_src_result = _index_reduce_raw(xv, index, masked_src, dim, reduce, include_self)
        grad_src = jnp.where(
            src_single_zero,
            select(g * masked_src_result),
            select(g * r) / jnp.where(src_zero, one, sv),
        )
    elif reduce == "mean":
        n = jnp.ones_like(g) if include_self else jnp.zeros_like(g)
        n = add_at(n, jnp.ones_like(sv))
        n = jnp.where(n == 0, one, n)
        grad_self = g / n
        grad_src = select(g) / select(n)
    else:
        self_is_result = (xv == r).astype(x.dtype)
        source_is_result = (sv == select(r)).astype(x.dtype)
        distributed = g / add_at(self_is_result, source_is_result)
        grad_self = self_is_result * distributed
        grad_src = source_is_result * select(distributed)
    if not include_self:
        grad_self = grad_self.at[(slice(None),) * dim + (idx,)].set(0)
    return grad_self.reshape(shape), None, grad_src.reshape(sshape)


_index_reduce_diff.defvjp(_index_reduce_fwd, _index_reduce_bwd)


def _index_reduce_forward(x, index, source, dim, reduce, include_self):
    if jnp.issubdtype(x.dtype, jnp.floating):
        return _index_reduce_diff(x, index, source, dim, reduce, include_self)
    return _index_reduce_raw(x, index, source, dim, reduce, include_self)


register_ops(
    OpDef(
        "index_reduce",
        _index_reduce_forward,
        "IndexReduceBackward0",
        ("self", "index", "source"),
        lambda meta, static: ((None,) * len(meta), meta[0][0]),
        edges=("self", "source"),
        # self, source: index_reduce_backward(grad, self, dim, index, source, reduce,
        # include_self, result)
        saves={
            "self": ("self", "index", "source", "result"),
            "source": ("self", "index", "source", "result"),
        },
    ),
)


def _index_reduce_checks(
    self: Tensor, dim: int, index: Tensor, source: Tensor, reduce, include_self: bool
) -> int:
    """PyTorch's checks of ``index_reduce_`` in its order (the reduction first, then those of
    ``index_add_``, the beta warning, then the kernels'); the wrapped dim."""
    if reduce not in _REDUCES:
        raise RuntimeError(INDEX_REDUCE_REDUCE.format(reduce))
    n = self._data.ndim
    d = _wrap_dim(dim, n)
    name = E.scalar_type_name

    def text(message):
        return message.replace("index_add_()", "index_reduce_()")

    if index._data.ndim > 1:
        raise IndexError(
            text(INDEX_ADD_VECTOR).format(
                index._data.ndim, name(index._dtype), _list(index._data.shape)
            )
        )
    if index._dtype not in (D.int32, D.int64):
        raise RuntimeError(text(INDEX_ADD_DTYPE).format(name(index._dtype)))
    if self._dtype is not source._dtype:
        raise RuntimeError(
            text(INDEX_ADD_SELF_SOURCE).format(name(self._dtype), name(source._dtype))
        )
    sshape = source._data.shape
    if not (d == 0 or d < len(sshape)):
        raise RuntimeError(text(INDEX_ADD_DIM).format(d, len(sshape)))
    numel = index._data.size
    if numel != (sshape[d] if sshape else 1):
        if not sshape:
            raise IndexError(E.DIM_SCALAR.format(d))
        raise RuntimeError(text(INDEX_ADD_NUMEL).format(numel, sshape[d], d))
    a, b = list(self._data.shape), list(sshape)
    if a and b:
        del a[d], b[d]
    if a != b:
        raise RuntimeError(INDEX_ADD_SHAPE.format(_list(self._data.shape), _list(sshape)))
    from ..func import fallback_samples

    for _ in range(fallback_samples()):  # inside vmap, PyTorch runs it once a sample
        E.warn_once(INDEX_REDUCE_BETA)
    kernel_error = "\"{}\" not implemented for '{}'"
    if not include_self and (self._dtype is D.bool_ or self._dtype.is_complex):
        raise NotImplementedError(
            kernel_error.format("index_reduce_func_exclude_input_init", name(self._dtype))
        )
    values = _host(index)
    if values is not None and source._data.size:
        size = self._data.shape[d] if n else 1
        if ((values < 0) | (values >= size)).any():
            raise IndexError(INDEX_ADD_RANGE)
    if reduce in ("amax", "amin") and self._dtype.is_complex:
        kernel = "maximum_cpu" if reduce == "amax" else "minimum_cpu"
        raise NotImplementedError(kernel_error.format(kernel, name(self._dtype)))
    if reduce == "mean" and self._dtype is D.bool_:  # the mean's floor division of the sums
        raise NotImplementedError(kernel_error.format("div_floor_cpu", name(self._dtype)))
    return d


def _index_reduce_args(fn: str, args, kwargs, first: int):
    dim, index, source, reduce, include_self = _parse(
        fn,
        ("dim", "index", "source", "reduce", "include_self"),
        args,
        kwargs,
        {"include_self": (True, True)},
        first,
    )
    dim = _dim_arg(dim, fn, first)
    _tensor_arg(index, fn, "index", first + 1)
    _tensor_arg(source, fn, "source", first + 2)
    if not isinstance(reduce, str):
        raise TypeError(
            f"{fn}(): argument 'reduce' (position {first + 3}) must be str, not "
            f"{type(reduce).__name__}"
        )
    if not isinstance(include_self, (bool, np.bool_)):
        raise TypeError(
            f"{fn}(): argument 'include_self' must be bool, not {type(include_self).__name__}"
        )
    return dim, index, source, reduce, bool(include_self)


def _index_reduce(self: Tensor, dim, index, source, reduce, include_self) -> Tensor:
    from ..autograd import forward_ad

    if forward_ad.ACTIVE[0]:  # before the checks and the beta warning
        forward_ad.refuse_op("index_reduce", (self, source))
    d = _index_reduce_checks(self, dim, index, source, reduce, include_self)
    return dispatch(
        OPS["index_reduce"], self, index, source, dim=d, reduce=reduce, include_self=include_self
    )


@tensor_op("index_reduce", function=False)
def index_reduce_method(self, *args, **kwargs) -> Tensor:
    """``Tensor.index_reduce(dim, index, source, reduce, *, include_self=True)``: the slices of
    ``source`` reduced (prod, mean, amax or amin) into the positions ``index`` along ``dim``,
    with the values already there unless ``include_self`` is False."""
    return _index_reduce(self, *_index_reduce_args("index_reduce", args, kwargs, 1))


@tensor_op("index_reduce", method=False)
def index_reduce(input, *args, **kwargs) -> Tensor:
    """``torch.index_reduce(input, dim, index, source, reduce, *, include_self=True)``."""
    _tensor_arg(input, "index_reduce", "input", 1)
    return _index_reduce(input, *_index_reduce_args("index_reduce", args, kwargs, 2))


@tensor_op("index_reduce_", function=False)
def index_reduce_(self, *args, **kwargs) -> Tensor:
    """``Tensor.index_reduce_(dim, index, source, reduce, *, include_self=True)``."""
    dim, index, source, reduce, include_self = _index_reduce_args("index_reduce_", args, kwargs, 1)
    from ..autograd import forward_ad

    def run():
        return inplace(
            self,
            lambda: _index_reduce(self, dim, index, source, reduce, include_self),
            index,
            source,
            overlap="any",
        )

    if forward_ad.ACTIVE[0]:
        return forward_ad.inplace_refused("index_reduce", (self, source), run)
    return run()
