"""In-place ops: PyTorch's semantics on immutable JAX arrays.

An in-place op ``x.op_(...)`` runs the out-of-place op (so values, dtype rules, errors and the
recorded node are those of the table entry), then commits the result into ``x``:

1. PyTorch's checks come first, and nothing is changed when one fails: in-place on an inference
   tensor outside inference mode, the view-creation rules (Note [View metadata] in
   ``_storage.py``), a leaf or a view of a leaf that requires grad in grad mode, then after the
   out-of-place computation the result's shape and dtype against ``x`` and internal overlap.
2. The value is written into ``x``'s memory (Note [Storage]): its base and views see it.
3. The version counter (shared with views) goes up by one.
4. When the op was recorded, ``x`` takes its node (``AddBackward0`` ...). If ``x`` is a view,
   its base takes a ``CopySlices`` node wrapping the op's node instead, and ``x`` gets
   ``AsStridedBackward0`` pointing at it, as PyTorch does.

Note [Original self]: PyTorch's in-place ops that need the original ``self`` in backward save a
copy of it, so the op's own write never trips the version check on ``self``; a saved result,
though, is the tensor after the write. leafgrad's nodes hold arrays (values never change), so only
the version bookkeeping is adjusted: the check on operand 0 is dropped and a saved result is
checked against ``x``'s counter at its new version.
"""

from __future__ import annotations

import jax.numpy as jnp

from .. import _dtype as D
from .. import _errors as E
from .. import _storage as S
from .._tensor import Tensor
from ..autograd import grad_mode
from ..autograd.graph import OpNode
from .api import register_ops, tensor_op
from .dispatch import SavedVersion, _edge, _plain_edge, broadcast_shapes, dispatch
from .table import OPS, OpDef

__all__ = ["inplace", "check_inplace"]

FILL_DIM = "fill_ only supports 0-dimension value tensor but got tensor with {} dimensions."


def _size(shape) -> str:
    return "[" + ", ".join(str(s) for s in shape) + "]"


def check_inplace(self: Tensor, requires_grad: bool) -> None:
    """PyTorch's checks before an in-place op on ``self`` (``check_inplace``)."""
    state = grad_mode._state
    if self._inference and not state.inference:
        raise RuntimeError(E.INFERENCE_INPLACE)
    if not (requires_grad and state.grad_enabled):
        return
    if self._base is not None:
        meta = self.__dict__.get("_vmeta")
        if meta is not None:
            msg = S.rebase_error(meta, indirect=False)
            if msg is not None:
                raise RuntimeError(msg)
        if self._requires_grad and self._base.grad_fn is None:
            raise RuntimeError(E.VIEW_OF_LEAF_INPLACE)
    if self._requires_grad and self.grad_fn is None:
        raise RuntimeError(E.LEAF_INPLACE)


def _overlaps(t: Tensor) -> bool:
    """PyTorch's ``has_internal_overlap``: a stride of 0 over a dimension of size > 1."""
    strides = t.__dict__.get("_strides")
    if strides is None:
        return False
    return any(st == 0 and sz > 1 for st, sz in zip(strides, t._data.shape))


def inplace(self: Tensor, compute, *tensors, check_shape: bool = True) -> Tensor:
    """Run ``compute()`` (the out-of-place op on ``self``) and commit its result into ``self``.

    ``tensors``: the op's other tensor operands (they decide, with ``self``, whether the op is
    recorded and so which checks apply)."""
    requires_grad = self._requires_grad or any(
        isinstance(t, Tensor) and t._requires_grad for t in tensors
    )
    check_inplace(self, requires_grad)
    if _overlaps(self):
        raise RuntimeError(E.INTERNAL_OVERLAP)
    before = _edge(self) if requires_grad and grad_mode._state.grad_enabled else None
    out = compute()
    if check_shape and out._data.shape != self._data.shape:
        raise RuntimeError(E.INPLACE_SHAPE.format(_size(self._data.shape), _size(out._data.shape)))
    value = out._data
    if out._dtype is not self._dtype:
        if not D.can_cast(out._dtype, self._dtype):
            raise RuntimeError(
                E.INPLACE_CAST.format(E.scalar_type_name(out._dtype), E.scalar_type_name(self._dtype))
            )
        value = value.astype(self._dtype.np)
    commit(self, value, out, before)
    return self


def commit(self: Tensor, value, out: Tensor | None = None, before=None) -> None:
    """Write ``value`` into ``self``, bump the version and take over ``out``'s history."""
    S.write(self, value)
    counter = self._version_counter
    counter.value += 1
    node = None if out is None else out._grad_fn
    if node is None:
        return
    if out._dtype is not self._dtype:
        node._ct_dtype = out._dtype.np
    _retarget_checks(node, self)
    if self._base is None:
        if self._retains_grad and self._grad_fn is not None:
            self._grad_fn._retained.pop(self._output_nr, None)
            node._retain(out._output_nr, self)
        self._grad_fn = node
        self._output_nr = out._output_nr
        if not self._requires_grad:
            self._requires_grad = True
            _views_require_grad(self)
        return
    _rebase_view(self, node, out._output_nr, before)


def _retarget_checks(node, self: Tensor) -> None:
    """Note [Original self]."""
    checks = node._saved_checks if isinstance(node, OpNode) else None
    if not checks:
        return
    new = []
    for c in checks:
        if c.operand == 0 and c.tensor is self:
            continue
        if c.tensor is None:
            c = SavedVersion(
                None, self._version_counter, self._version_counter.value, None,
                c.output_nr, c.node, c.meta,
            )
        new.append(c)
    node._saved_checks = tuple(new) or None


class CopySlices(OpNode):
    """The base's node after an in-place op on one of its views: the base's gradient outside the
    view passes through; inside, it goes through the op's node ``fn``."""

    __slots__ = ("_fn", "_chain", "_direct")

    def name(self) -> str:
        return "torch::autograd::CopySlices"

    def _apply(self, grads: list) -> list:
        (g,) = grads
        gv = S.gather(self._chain)(g)
        if self._direct:
            res = self._fn._apply([gv])
            g_self = res[0] if res[0] is not None else jnp.zeros(gv.shape, gv.dtype)
            return [S.scatter(self._chain)(g, g_self.astype(g.dtype)), *res[1:]]
        # the op was a composite: the view's own history is reached through ``fn``'s graph
        return [S.scatter(self._chain)(g, jnp.zeros(gv.shape, gv.dtype)), gv]

    def _release(self) -> None:
        self._fn._release()


CopySlices.__module__ = "builtins"


def _rebase_view(view: Tensor, node, output_nr: int, before) -> None:
    base = view._base
    chain = S.relative_chain(view, base)
    base_edge = _plain_edge(base)
    direct = output_nr == 0 and node._next_functions[:1] == (before,)
    if direct:
        edges = (base_edge, *node._next_functions[1:])
    else:
        edges = (base_edge, (node, output_nr))
    cs = CopySlices(edges)
    cs._fn = node
    cs._chain = chain
    cs._direct = direct
    cs._backward = cs._primals = None
    cs._has_saved = False
    cs._released = False
    cs._n_out = 1
    cs._saved_checks = None
    cs._ct_dtype = None
    base._grad_fn = cs
    base._output_nr = 0
    base._requires_grad = True
    version = view._version_counter.value
    meta = view.__dict__.get("_vmeta")
    view._grad_fn = S.as_strided_node(view, base)
    view._output_nr = 0
    view._requires_grad = True
    if meta is not None:
        meta.attr_version = version
    _views_require_grad(base)


def _views_require_grad(base: Tensor) -> None:
    cell = base.__dict__.get("_storage")
    if cell is not None:
        for m in cell.members:
            if m._base is base:
                m._requires_grad = True


# --- table entries that exist only as in-place ops ---------------------------------------------


def _as_self(meta, static):
    dt = meta[0][0]
    return (None,) + (dt,) * (len(meta) - 1), dt


def _copy_forward(self, src):
    return jnp.broadcast_to(src, self.shape)


def _fill_forward(self, value):
    return jnp.broadcast_to(value, self.shape)


register_ops(
    OpDef("copy", _copy_forward, "CopyBackwards", ("self", "src"), _as_self),
    OpDef("fill_scalar", _fill_forward, "FillBackward2", ("self", "value"), _as_self,
          edges=("self",)),
    OpDef("fill_tensor", _fill_forward, "FillBackward3", ("self", "value"), _as_self),
    OpDef("zero", jnp.zeros_like, "ZeroBackward0", ("self",), _as_self),
)


@tensor_op("copy_", function=False)
def copy_(self, src, non_blocking: bool = False) -> Tensor:
    """``Tensor.copy_(src)``: ``src`` broadcast, cast and moved into ``self``."""
    if not isinstance(src, Tensor):
        raise TypeError(
            f"copy_(): argument 'src' (position 1) must be Tensor, not {type(src).__name__}"
        )
    shape = broadcast_shapes(self._data.shape, src._data.shape)
    if shape != self._data.shape:
        raise RuntimeError(E.INPLACE_SHAPE.format(_size(self._data.shape), _size(shape)))
    if src._device != self._device:
        src = src.to(self._device)
    return inplace(self, lambda: dispatch(OPS["copy"], self, src), src)


@tensor_op("fill_", function=False)
def fill_(self, value) -> Tensor:
    """``Tensor.fill_(value)``: a Python number or a 0-d tensor."""
    if isinstance(value, Tensor):
        if value._data.ndim != 0:
            raise RuntimeError(FILL_DIM.format(value._data.ndim))
        return inplace(self, lambda: dispatch(OPS["fill_tensor"], self, value), value)
    return inplace(self, lambda: dispatch(OPS["fill_scalar"], self, value))


@tensor_op("zero_", function=False)
def zero_(self) -> Tensor:
    """``Tensor.zero_()``."""
    return inplace(self, lambda: dispatch(OPS["zero"], self))


# --- the ``op_`` variants of table ops ---------------------------------------------------------

# Tensor methods whose in-place variant is ``<name>_`` with the same arguments and node.
SAME_NODE = (
    "abs absolute acos arccos acosh arccosh add addcdiv addcmul asin arcsin asinh arcsinh atan "
    "arctan atan2 arctan2 atanh arctanh bitwise_and bitwise_or bitwise_xor bitwise_not "
    "bitwise_left_shift bitwise_right_shift ceil clamp clamp_min clamp_max clip copysign cos cosh "
    "cumsum cumprod deg2rad digamma div divide eq ne lt le gt ge greater greater_equal less "
    "less_equal not_equal erf erfc erfinv exp exp2 expm1 fix float_power floor floor_divide fmod "
    "frac hypot lerp lgamma log log10 log1p log2 logical_and logical_or logical_not logical_xor "
    "logit masked_fill mul multiply mvlgamma nan_to_num neg negative pow rad2deg reciprocal relu "
    "remainder round rsqrt sgn sigmoid sign sin sinc sinh sqrt square sub subtract tan tanh tril "
    "triu true_divide trunc xlogy index_add index_fill index_copy scatter scatter_add "
    "scatter_reduce masked_scatter put renorm heaviside nextafter ldexp i0 polygamma"
).split()


def _make_inplace(name: str):
    def method(self, *args, **kwargs):
        fn = getattr(Tensor, name)
        others = [a for a in (*args, *kwargs.values()) if isinstance(a, Tensor)]
        return inplace(self, lambda: fn(self, *args, **kwargs), *others)

    method.__name__ = method.__qualname__ = name + "_"
    method.__doc__ = f"``Tensor.{name}_``: ``{name}`` written into this tensor."
    return method


def install_inplace_methods() -> None:
    """Give every table op in ``SAME_NODE`` that exists its ``_`` variant (call after all op
    modules are imported)."""
    for name in SAME_NODE:
        if hasattr(Tensor, name) and not hasattr(Tensor, name + "_"):
            setattr(Tensor, name + "_", _make_inplace(name))


_AUGMENTED = {
    "__iadd__": "add",
    "__isub__": "sub",
    "__imul__": "mul",
    "__itruediv__": "div",
    "__ifloordiv__": "floor_divide",
    "__imod__": "remainder",
    "__ipow__": "pow",
    "__iand__": "bitwise_and",
    "__ior__": "bitwise_or",
    "__ixor__": "bitwise_xor",
    "__ilshift__": "bitwise_left_shift",
    "__irshift__": "bitwise_right_shift",
}


def install_augmented() -> None:
    for dunder, name in _AUGMENTED.items():
        if hasattr(Tensor, name):
            setattr(Tensor, dunder, _make_inplace(name))
