"""PyTorch's derivative formulas for create_graph (Note [Graph formulas] in formulas.py): views,
shape ops, joins, splits and indexing.

Some formulas call ATen backward kernels that are ops of their own, differentiable again:
``select_backward`` (``SelectBackwardBackward0``), ``slice_backward``
(``SliceBackwardBackward0``), ``diagonal_backward`` (``DiagonalBackwardBackward0``),
``unfold_backward`` (``UnfoldBackwardBackward0``) and ``_index_put_impl_`` with accumulate
(``IndexPutImplBackward0``, the gradient of ``index``). Their table entries are here: each
forward writes the gradient into zeros of the input's shape, and each formula reads it back
with the view op, as derivatives.yaml does.

Formulas that write into a new tensor of zeros with an in-place ATen op (``index_add_``,
``scatter_add_``, ``masked_scatter_``, ``put_``) dispatch the out-of-place op on the zeros:
the zeros do not require grad, so the node and its edges are those of the in-place write.
"""

from __future__ import annotations

import dataclasses
import functools

import jax
import jax.numpy as jnp

from .api import FUNCTIONS, register_ops
from .formulas import formula, maybe_multiply, operand_device, sum_to
from .index_put import _index_put_op
from .table import OPS, OpDef

__all__: list = []


def _dispatch(op, *args, **static):
    from .dispatch import dispatch

    return dispatch(op, *args, **static)


def _zeros(g, shape, dtype):
    """``at::zeros(shape, options)``: a new tensor of zeros on ``g``'s device."""
    return g.new_zeros(tuple(shape), dtype=dtype)


def _wrap(dim: int, n: int) -> int:
    return dim % n if n else 0


# --- the backward kernels that are ops -------------------------------------------------------


def _same(meta, static):
    return (None,) * len(meta), meta[0][0]


def _transposed(view):
    """The forward of a view's backward kernel: the gradient written into zeros of the input's
    shape (the transpose of the linear map ``view``; JAX differentiates it again)."""

    def forward(g, input_sizes, **static):
        zeros = jnp.zeros(tuple(input_sizes), g.dtype)
        return jax.vjp(lambda x: view(x, **static), zeros)[1](g)[0]

    return forward


def _select(x, dim, index):
    return jax.lax.index_in_dim(x, index, dim, keepdims=False)


def _slice(x, dim, start, end, step):
    return jax.lax.slice_in_dim(x, start, end, step, dim)


def _diagonal(x, offset, dim1, dim2):
    return jnp.diagonal(x, offset, dim1, dim2)


def _unfold(x, dim, size, step):
    from .layout_ops import _unfold as unfold

    return unfold(x, dim, size, step)


register_ops(
    OpDef(
        "select_backward", _transposed(_select), "SelectBackwardBackward0", ("grad_output",), _same
    ),
    OpDef("slice_backward", _transposed(_slice), "SliceBackwardBackward0", ("grad_output",), _same),
    OpDef(
        "diagonal_backward",
        _transposed(_diagonal),
        "DiagonalBackwardBackward0",
        ("grad_output",),
        _same,
    ),
    OpDef("unfold_backward", _transposed(_unfold), "UnfoldBackwardBackward0", ("grad_in",), _same),
)


@functools.cache
def _index_put_impl_op(k: int) -> OpDef:
    """``_index_put_impl_(self, indices, values, accumulate=True)`` with ``k`` index tensors."""
    return dataclasses.replace(
        _index_put_op(k), name="index_put_impl", grad_fn="IndexPutImplBackward0"
    )


register_ops(_index_put_impl_op(1))


@formula("select_backward")
def _select_backward(ctx):
    s = ctx.static
    return {"grad_output": ctx.grad.select(s["dim"], s["index"])}


@formula("slice_backward")
def _slice_backward(ctx):
    s = ctx.static
    return {"grad_output": _slice_view(ctx.grad, s["dim"], s["start"], s["end"], s["step"])}


@formula("diagonal_backward")
def _diagonal_backward(ctx):
    s = ctx.static
    return {"grad_output": ctx.grad.diagonal(s["offset"], s["dim1"], s["dim2"])}


@formula("unfold_backward")
def _unfold_backward(ctx):
    s = ctx.static
    return {"grad_in": ctx.grad.unfold(s["dim"], s["size"], s["step"])}


@formula("index_put_impl")
def _index_put_impl(ctx):
    s = ctx.static
    if not s["accumulate"]:
        return NotImplemented
    out = {}
    if ctx.needs("self"):
        out["self"] = ctx.grad
    if ctx.needs("values"):
        out["values"] = _index(ctx.grad, _indices(ctx), s["positions"])
    return out


def _slice_view(g, dim, start, end, step):
    """``g.slice(dim, start, end, step)`` as ATen records it (always a ``SliceBackward0``)."""
    from .shape import _slice_view as slice_view

    return slice_view(g, dim, start, end, step)


def _indices(ctx) -> list:
    return [ctx[n] for n in ctx.op.operands if n.startswith("indices")]


def _index(g, indices, positions):
    from .shape import _index_op

    return _dispatch(_index_op(len(indices)), g, *indices, positions=tuple(positions))


# --- views -----------------------------------------------------------------------------------


@formula("view", "reshape_alias", "unsafe_view")
def _view(ctx):
    return {"self": ctx.grad.reshape(ctx.shape("self"))}


@formula("alias")
def _alias(ctx):
    return {"self": ctx.grad}


@formula("conj_view")
def _conj_view(ctx):
    return {"self": ctx.grad.conj()}


@formula("neg_view")
def _neg_view(ctx):
    # _neg_view: grad.neg()
    return {"self": ctx.grad.neg()}


@formula("view_as_real")
def _view_as_real(ctx):
    # view_as_complex(grad.contiguous())
    from .shape import view_as_complex

    return {"self": view_as_complex(ctx.grad.contiguous())}


@formula("unsqueeze")
def _unsqueeze(ctx):
    return {"self": ctx.grad.squeeze(ctx.static["dim"])}


@formula("squeeze_dim")
def _squeeze_dim(ctx):
    # unsqueeze_to(grad, dim, sizes)
    sizes = ctx.shape("self")
    g = ctx.grad
    if sizes:
        d = _wrap(ctx.static["dim"], len(sizes))
        if sizes[d] == 1:
            g = g.unsqueeze(d)
    return {"self": g}


@formula("squeeze_dims")
def _squeeze_dims(ctx):
    # unsqueeze_to(grad, [dims,] sizes): the dims squeezed are those of size 1, in order
    g = ctx.grad
    for d in sorted(ctx.static["dims"]):
        g = g.unsqueeze(d)
    return {"self": g}


@formula("transpose")
def _transpose(ctx):
    s = ctx.static
    return {"self": ctx.grad.transpose(s["dim0"], s["dim1"])}


@formula("t")
def _t(ctx):
    return {"self": ctx.grad.t()}


@formula("permute")
def _permute(ctx):
    # permute_backwards: the inverse permutation
    dims = ctx.static["dims"]
    inverse = [0] * len(dims)
    for i, d in enumerate(dims):
        inverse[_wrap(d, len(dims))] = i
    return {"self": ctx.grad.permute(tuple(inverse))}


@formula("expand")
def _expand(ctx):
    shape = ctx.shape("self")
    g = ctx.grad
    return {"self": g if tuple(g.shape) == shape else sum_to(g, shape)}


@formula("slice", "narrow_copy")
def _slice_formula(ctx):
    s = ctx.static
    return {
        "self": _dispatch(
            OPS["slice_backward"],
            ctx.grad,
            input_sizes=ctx.shape("self"),
            dim=s["dim"],
            start=s["start"],
            end=s["stop"],
            step=s["step"],
        )
    }


@formula("select")
def _select_formula(ctx):
    index = ctx["index"]
    if index is None:
        return NotImplemented
    shape = ctx.shape("self")
    dim = ctx.static["dim"]
    return {
        "self": _dispatch(
            OPS["select_backward"],
            ctx.grad,
            input_sizes=shape,
            dim=dim,
            index=int(index) % shape[dim],
        )
    }


@formula("diagonal", "diagonal_copy")
def _diagonal_formula(ctx):
    # diagonal_copy: ``diag`` of a matrix, the main dims
    s = ctx.static
    return {
        "self": _dispatch(
            OPS["diagonal_backward"],
            ctx.grad,
            input_sizes=ctx.shape("self"),
            offset=s["offset"],
            dim1=s.get("dim1", 0),
            dim2=s.get("dim2", 1),
        )
    }


@formula("unfold")
def _unfold_formula(ctx):
    s = ctx.static
    return {
        "self": _dispatch(
            OPS["unfold_backward"],
            ctx.grad,
            input_sizes=ctx.shape("self"),
            dim=s["dimension"],
            size=s["size"],
            step=s["step"],
        )
    }


# --- splits and joins ------------------------------------------------------------------------


@formula("split", "unsafe_split")
def _split(ctx):
    # split_with_sizes_backward: the gradients joined by cat, zeros for the unused pieces
    s = ctx.static
    shape, dtype, dim = ctx.shape("self"), ctx.dtype("self"), s["dim"]
    defined = next(g for g in ctx.grads if g is not None)
    parts = []
    for g, size in zip(ctx.grads, s["sizes"]):
        if g is None:
            piece = list(shape)
            piece[dim] = size
            g = _zeros(defined, piece, dtype)
        parts.append(g)
    return {"self": FUNCTIONS["cat"](parts, dim)}


@formula("unbind")
def _unbind(ctx):
    # unbind_backward: the gradients stacked, zeros (of a defined one's shape) for the others
    defined = next(g for g in ctx.grads if g is not None)
    parts = [_zeros(defined, defined.shape, defined._dtype) if g is None else g for g in ctx.grads]
    return {"self": FUNCTIONS["stack"](parts, ctx.static["dim"])}


@formula("cat")
def _cat(ctx):
    # cat_tensors_backward: a narrow of the gradient per input; 1-d empty inputs get zeros
    g, dim = ctx.grad, ctx.static["dim"]
    real = g.real if g._dtype.is_complex else None
    out, offset = {}, 0
    for name in ctx.op.operands:
        shape = ctx.shape(name)
        gv = real if real is not None and not ctx.dtype(name).is_complex else g
        if len(shape) == 1 and shape[0] == 0:
            if ctx.needs(name):
                out[name] = _zeros(gv, (0,), gv._dtype)
            continue
        size = shape[dim]
        if ctx.needs(name):
            out[name] = gv.narrow(dim, offset, size)
        offset += size
    return out


@formula("stack")
def _stack(ctx):
    # stack_tensors_backward: a select of the gradient per input
    g, dim = ctx.grad, ctx.static["dim"]
    out = {}
    for i, name in enumerate(ctx.op.operands):
        if ctx.needs(name):
            gi = g.select(dim, i)
            if g._dtype.is_complex and not ctx.dtype(name).is_complex:
                gi = gi.real
            out[name] = gi
    return out


# --- copies ----------------------------------------------------------------------------------


@formula("repeat")
def _repeat(ctx):
    # repeat_backward
    g, repeats, shape = ctx.grad, ctx.static["repeats"], ctx.shape("self")
    if 0 in repeats:
        return {"self": _zeros(g, shape, g._dtype)}
    extra = len(repeats) - len(shape)
    for _ in range(extra):
        g = g.sum(0, False)
    grad_size, sum_dims = [], []
    for d, size in enumerate(shape):
        r = repeats[d + extra]
        if r != 1:
            grad_size.append(r)
            sum_dims.append(len(grad_size) - 1)
        grad_size.append(size)
    if sum_dims:
        g = g.reshape(grad_size).sum(sum_dims)
    return {"self": g}


@formula("flip")
def _flip(ctx):
    return {"self": ctx.grad.flip(ctx.static["dims"])}


@formula("roll")
def _roll(ctx):
    s = ctx.static
    shifts = tuple(-k for k in reversed(s["shifts"]))
    dims = tuple(reversed(s["dims"]))
    return {"self": ctx.grad.roll(shifts, dims if dims else None)}


@formula("tril")
def _tril(ctx):
    return {"self": ctx.grad.tril(ctx.static["diagonal"])}


@formula("triu")
def _triu(ctx):
    return {"self": ctx.grad.triu(ctx.static["diagonal"])}


@formula("rot90")
def _rot90(ctx):
    s = ctx.static
    return {"self": ctx.grad.rot90(-s["k"], s["dims"])}


@formula("diag_embed")
def _diag_embed(ctx):
    s = ctx.static
    return {"self": ctx.grad.diagonal(s["offset"], s["dim1"], s["dim2"])}


# --- indexing --------------------------------------------------------------------------------


@formula("index")
def _index_formula(ctx):
    # index_backward: _index_put_impl_(zeros, indices, grad, accumulate=True)
    indices = _indices(ctx)
    if any(i is None for i in indices):
        return NotImplemented
    g = ctx.grad
    zeros = _zeros(g, ctx.shape("self"), ctx.dtype("self"))
    op = _index_put_impl_op(len(indices))
    positions = tuple(ctx.static["positions"])
    return {"self": _dispatch(op, zeros, g, *indices, positions=positions, accumulate=True)}


@formula("index_select")
def _index_select(ctx):
    # index_select_backward: zeros(self_sizes).index_add_(dim, index, grad)
    index = ctx["index"]
    if index is None:
        return NotImplemented
    g = ctx.grad
    zeros = _zeros(g, ctx.shape("self"), g._dtype)
    return {"self": _dispatch(OPS["index_add"], zeros, index, g, dim=ctx.static["dim"], alpha=1)}


@formula("gather")
def _gather(ctx):
    # gather_backward: grad.new_zeros(self.sizes()).scatter_add_(dim, index, grad)
    index = ctx["index"]
    if index is None:
        return NotImplemented
    g = ctx.grad
    zeros = _zeros(g, ctx.shape("self"), g._dtype)
    return {
        "self": _dispatch(
            OPS["scatter_add_src"], zeros, index, g, dim=ctx.static["dim"], mode="add"
        )
    }


@formula("take")
def _take(ctx):
    # take_backward: grad.new_zeros(self.sizes()).put_(index, grad, accumulate=True)
    index = ctx["index"]
    if index is None:
        return NotImplemented
    g = ctx.grad
    zeros = _zeros(g, ctx.shape("self"), g._dtype)
    return {"self": _dispatch(OPS["put"], zeros, index, g, accumulate=True)}


@formula("masked_fill_scalar", "masked_fill_tensor")
def _masked_fill(ctx):
    mask = ctx["mask"]
    if mask is None:
        return NotImplemented
    g, out = ctx.grad, {}
    if ctx.needs("self"):
        out["self"] = g.masked_fill(mask, 0)
    if ctx.op.name == "masked_fill_tensor" and ctx.needs("value"):
        # masked_fill_backward
        out["value"] = g.masked_select(mask).sum()
    return out


@formula("masked_select")
def _masked_select(ctx):
    # masked_select_backward: zeros of the broadcast shape, masked_scatter_(mask, grad)
    mask = ctx["mask"]
    if mask is None:
        return NotImplemented
    from .dispatch import broadcast_shapes

    g = ctx.grad
    shape = broadcast_shapes(ctx.shape("self"), tuple(mask.shape))
    zeros = _zeros(g, shape, ctx.dtype("self"))
    return {"self": _dispatch(OPS["masked_scatter"], zeros, mask, g)}


@formula("scatter_src", "scatter_add_src")
def _scatter_src(ctx):
    s, g, out = ctx.static, ctx.grad, {}
    add = s["mode"] == "add"
    if add and not ctx.needs("src"):
        return {"self": g}
    index = ctx["index"]
    if index is None:
        return NotImplemented
    if ctx.needs("self"):
        out["self"] = g if add else g.scatter(s["dim"], index, 0)
    if ctx.needs("src"):
        out["src"] = g.gather(s["dim"], index)
    return out


SCATTER_REDUCE_PROD_ZEROS = (
    "scatter_reduce(): Double backward is unsupported for src when >1 zeros in src are "
    "scattered to the same position in self"
)


def _delayed_error(t, msg: str):
    """``DelayedError(msg, 1)`` applied to ``t``: ``t``'s values under a node
    (``torch::autograd::Error``) that raises ``msg`` when differentiated."""
    from .._tensor import Tensor
    from ..autograd.function import Error
    from .dispatch import _edge

    node = Error(msg, (_edge(t),))
    node._device = t._device
    return Tensor._make(t._data, t._dtype, t._device, requires_grad=True, grad_fn=node)


@formula("scatter_reduce")
def _scatter_reduce(ctx):
    # scatter_reduce_backward
    self, index, src = ctx["self"], ctx["index"], ctx["src"]
    if index is None or self is None or src is None or tuple(src.shape) != tuple(index.shape):
        return NotImplemented
    s, g = ctx.static, ctx.grad
    dim, reduce, include_self = s["dim"], s["reduce"], s["include_self"]
    if self._dtype.is_complex:
        return NotImplemented
    if reduce == "sum":
        grad_self, grad_src = g, g.gather(dim, index)
    elif reduce == "prod":
        if any(isinstance(t._data, jax.core.Tracer) for t in (src, index)):
            return NotImplemented
        masked_self = self.masked_fill(self == 0, 1)
        masked_self_result = masked_self.scatter_reduce(
            dim, index, src, reduce, include_self=include_self
        )
        grad_self = g * masked_self_result / masked_self
        src_zero = src == 0
        src_num_zeros = (
            self.new_zeros(self.shape)
            .scatter_add(dim, index, src_zero.to(self.dtype))
            .gather(dim, index)
        )
        several_zeros = bool((src_num_zeros > 1).any())
        src_single_zero = src_zero.bitwise_and(src_num_zeros == 1)
        masked_src = src.masked_fill(src_single_zero, 1)
        masked_src_result = self.scatter_reduce(
            dim, index, masked_src, reduce, include_self=include_self
        )
        result = self.scatter_reduce(dim, index, src, reduce, include_self=include_self)
        grad_src = FUNCTIONS["where"](
            src_single_zero,
            (g * masked_src_result).gather(dim, index),
            (g * result).gather(dim, index) / src.masked_fill(src_zero, 1),
        )
        if several_zeros:
            grad_src = _delayed_error(grad_src, SCATTER_REDUCE_PROD_ZEROS)
    elif reduce == "mean":
        n = g.new_ones(g.shape) if include_self else g.new_zeros(g.shape)
        n = n.scatter_add(dim, index, src.new_ones(src.shape))
        n = n.masked_fill(n == 0, 1)
        grad_self = g / n
        grad_src = g.gather(dim, index) / n.gather(dim, index)
    elif reduce in ("amax", "amin"):
        result = self.scatter_reduce(dim, index, src, reduce, include_self=include_self)
        value = result.gather(dim, index)
        self_is_result = (self == result).to(self.dtype)
        src_is_result = (src == value).to(self.dtype)
        n = self_is_result.scatter_add(dim, index, src_is_result)
        distributed = g / n
        grad_self = (self == result) * distributed
        grad_src = (src == value) * distributed.gather(dim, index)
    else:
        return NotImplemented
    out = {}
    if ctx.needs("self"):
        out["self"] = grad_self if include_self else grad_self.scatter(dim, index, 0)
    if ctx.needs("src"):
        out["src"] = grad_src
    return out


@formula("scatter_value")
def _scatter_value(ctx):
    index = ctx["index"]
    if index is None or ctx.static["mode"] != "set":
        return NotImplemented
    return {"self": ctx.grad.scatter(ctx.static["dim"], index, 0)}


@formula("index_add")
def _index_add(ctx):
    s, g, out = ctx.static, ctx.grad, {}
    if ctx.needs("self"):
        out["self"] = g
    if ctx.needs("source"):
        index = ctx["index"]
        if index is None:
            return NotImplemented
        shape = ctx.shape("source")
        if shape:
            src = g.index_select(s["dim"], index).expand(shape)
        else:
            src = g.index_select(s["dim"], index.squeeze(0))
        out["source"] = maybe_multiply(src, s["alpha"])
    return out


def _scatter_view(name, view):
    """The formula of ``<name>(self, src, **static)``: the op again with zeros for ``self``, the
    view ``view(grad, static)`` that ``src`` was written to for ``src``."""

    def scatter_formula(ctx):
        s, g, out = ctx.static, ctx.grad, {}
        if ctx.needs("self"):
            zeros = _zeros(g, ctx.shape("src"), ctx.dtype("src"))
            out["self"] = _dispatch(OPS[name], g, zeros, **s)
        if ctx.needs("src"):
            out["src"] = view(g, s)
        return out

    return formula(name)(scatter_formula)


_scatter_view("select_scatter", lambda g, s: g.select(s["dim"], s["index"]))
_scatter_view(
    "slice_scatter", lambda g, s: _slice_view(g, s["dim"], s["start"], s["stop"], s["step"])
)
_scatter_view("diagonal_scatter", lambda g, s: g.diagonal(s["offset"], s["dim1"], s["dim2"]))


# --- writes through indices --------------------------------------------------------------------


def _masked_scatter_backward(g, mask, sizes):
    """``masked_scatter_backward``: the masked elements of ``g`` in order, zeros after them, as
    ``sizes``."""
    numel = 1
    for s in sizes:
        numel *= s
    flat = jnp.broadcast_to(mask, g.shape).reshape(-1)
    pos = jnp.cumsum(flat) - 1
    where = jnp.where(flat & (pos < numel), pos, numel)
    out = jnp.zeros((numel,), g.dtype).at[where].add(g.reshape(-1), mode="drop")
    return out.reshape(tuple(sizes))


register_ops(
    OpDef(
        "masked_scatter_backward",
        _masked_scatter_backward,
        "MaskedScatterBackwardBackward0",
        ("grad_output", "mask"),
        _same,
        edges=("grad_output",),
        saves={"grad_output": ("mask",)},
    )
)


@formula("masked_scatter_backward")
def _masked_scatter_backward_formula(ctx):
    mask = ctx["mask"]
    if mask is None:
        return NotImplemented
    zeros = _zeros(ctx.grad, ctx.shape("grad_output"), ctx.dtype("grad_output"))
    return {"grad_output": _dispatch(OPS["masked_scatter"], zeros, mask, ctx.grad)}


@formula("masked_scatter")
def _masked_scatter(ctx):
    mask = ctx["mask"]
    if mask is None:
        return NotImplemented
    g, out = ctx.grad, {}
    if ctx.needs("self"):
        out["self"] = g.masked_fill(mask, 0)
    if ctx.needs("source"):
        out["source"] = _dispatch(
            OPS["masked_scatter_backward"], g, mask, sizes=ctx.shape("source")
        )
    return out


@formula("index_put")
def _index_put(ctx):
    s, g, out = ctx.static, ctx.grad, {}
    indices = _indices(ctx)
    if any(i is None for i in indices):
        return NotImplemented
    positions = tuple(s["positions"])
    if ctx.needs("self"):
        if s["accumulate"]:
            out["self"] = g
        else:
            zeros = _zeros(g, ctx.shape("values"), ctx.dtype("values"))
            op = _index_put_op(len(indices))
            out["self"] = _dispatch(op, g, zeros, *indices, positions=positions, accumulate=False)
    if ctx.needs("values"):
        out["values"] = _index(g, indices, positions)
    return out


@formula("put")
def _put(ctx):
    index = ctx["index"]
    if index is None:
        return NotImplemented
    g, out = ctx.grad, {}
    accumulate = ctx.static["accumulate"]
    if ctx.needs("self"):
        if accumulate:
            out["self"] = g
        else:
            zeros = _zeros(g, ctx.shape("source"), ctx.dtype("source"))
            out["self"] = _dispatch(OPS["put"], g, index, zeros, accumulate=False)
    if ctx.needs("source"):
        out["source"] = g.take(index).reshape(ctx.shape("source"))
    return out


@formula("index_copy")
def _index_copy(ctx):
    index = ctx["index"]
    if index is None:
        return NotImplemented
    dim, g, out = ctx.static["dim"], ctx.grad, {}
    if ctx.needs("self"):
        out["self"] = g.index_fill(dim, index, 0)
    if ctx.needs("source"):
        shape = ctx.shape("source")
        if shape:
            out["source"] = g.index_select(dim, index).expand(shape)
        else:
            out["source"] = g.index_select(dim, index.squeeze(0))
    return out


@formula("index_fill_scalar", "index_fill_tensor")
def _index_fill(ctx):
    index, g, dim, out = ctx["index"], ctx.grad, ctx.static["dim"], {}
    if index is None:
        return NotImplemented
    if ctx.op.name == "index_fill_tensor" and ctx.needs("value"):
        # grad.index_select(dim, std::get<0>(at::_unique(index, false))).sum(); an index whose
        # values are unknown (a tracer) keeps the one-op form, as do the indices PyTorch refuses
        # here (the node's backward raises: shape.refuse_value_gradient)
        if isinstance(index._data, jax.core.Tracer):
            return NotImplemented
        import numpy as np

        unique = np.unique(np.asarray(index._data).reshape(-1))
        out["value"] = g.index_select(dim, index.new_tensor(unique.tolist())).sum()
    if ctx.needs("self"):
        out["self"] = g.index_fill(dim, index, 0)
    return out


@formula("copy")
def _copy(ctx):
    # CopyBackwards: zeros for ``self``; ``grad`` itself for ``src`` (its real part for a
    # real ``src``), ``to`` its options
    g, out = ctx.grad, {}
    if ctx.needs("self"):
        out["self"] = g.new_zeros(g.shape)
    if ctx.needs("src"):
        dtype = ctx.dtype("src")
        if g.dtype.is_complex and not dtype.is_complex:
            g = g.real
        out["src"] = g.to(dtype=dtype, device=operand_device(ctx.node, 1, g.device))
    return out
