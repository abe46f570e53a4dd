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
checked against ``x``'s counter at its new version. The copy's history is a ``CloneBackward0``
node over ``self``'s old history, made after the op's node as PyTorch's generated code makes it:
``_saved_self.grad_fn`` and the graphs ``create_graph`` records through the saved ``self`` reach
``self``'s old history through it (``ORIGINAL_SELF``).

Note [Written as a number]: ``fill_``, ``masked_fill_`` and ``index_fill_`` convert their 0-d value
tensor as a number, so ``self`` may be an integer or bool tensor while the value is a float that
requires grad. PyTorch's autograd kernel records the write anyway (an in-place op's history is not
checked against the dtype): ``self`` then requires grad, with ``FillBackward3`` ... as its node.
leafgrad's dispatch records only results of a differentiable dtype, so the node comes from the op
run at the value's dtype, and the values written from the op at ``self``'s dtype.
"""

from __future__ import annotations

import dataclasses
import functools
import re
import sys
import weakref

import jax
import jax.numpy as jnp
import numpy as np

from .. import _device as DEV
from .. import _dtype as D
from .. import _errors as E
from .. import _random as R
from .. import _storage as S
from .. import _zero, func
from .._tensor import Tensor
from ..autograd import forward_ad, grad_mode
from ..autograd import saved as saved_mod
from ..autograd.graph import OpNode, make_op_node, wrap_backward
from .api import keywords_at, refuse_backward, register_ops, tensor_op
from .dispatch import (
    FORWARD_AD,
    IN_PLACE,
    SavedVersion,
    _edge,
    _plain_edge,
    broadcast_shapes,
    dispatch,
)
from .elementwise import ADDCDIV_INTEGER, check_number_arg, check_operand
from .iterator_layout import non_overlapping_and_dense
from .table import OPS, OpDef

__all__ = ["inplace", "check_inplace"]

FILL_DIM = "fill_ only supports 0-dimension value tensor but got tensor with {} dimensions."


def _size(shape) -> str:
    return "[" + ", ".join(str(s) for s in shape) + "]"


_MULTI_OUTPUT_SUFFIX = (
    " This view is the output of a function that returns multiple views. Such functions do not "
    "allow the output views to be modified inplace. You should replace the inplace operation by "
    "an out-of-place one."
)


def view_rebase_error(view: Tensor, indirect: bool, through: str | None = None) -> str | None:
    """PyTorch's ``handle_view_on_rebase`` message for ``view``, or None when it may be rebased.

    The header depends on the view's stored ``grad_fn``: a view of a view made under ``no_grad``
    (or in inference mode) names its own op; a view without ``grad_fn`` "was created in no_grad
    mode", whatever its creation; the tail names the creation. ``through``: the write goes
    through a recorded view of ``view`` made by that op (``fill_diagonal_``'s ``AsStrided``),
    which inherits its creation and is output 0 of its own node."""
    from ..autograd.function import VIEW_IN_CUSTOM_FUNCTION

    meta = view.__dict__.get("_vmeta")
    if meta is None or meta.creation == S.DEFAULT:
        return None
    c, has_fn = meta.creation, view._grad_fn is not None or through is not None
    what = "its base or another view of its base has been" if indirect else "is being"
    if through is None:
        head = f"Output {meta.output_nr} of {meta.name} is a view"
    else:
        head = f"Output 0 of {through} is a view"
    if c in (S.NO_GRAD_MODE, S.INFERENCE_MODE) or not has_fn:
        prefix = f"{head} of a view which was created in" if has_fn else "A view was created in"
        if c == S.INFERENCE_MODE:
            msg = f"{prefix} inference mode and {what} modified inplace in normal mode."
        else:
            msg = f"{prefix} no_grad mode and {what} modified inplace with grad mode enabled."
    else:
        msg = f"{head} and {what} modified inplace."
    if c == S.MULTI_OUTPUT_NODE:
        return msg + _MULTI_OUTPUT_SUFFIX
    if c == S.IN_CUSTOM_FUNCTION:
        return msg + VIEW_IN_CUSTOM_FUNCTION.split("{}.", 1)[1]
    mode = "no_grad" if c == S.NO_GRAD_MODE else "inference_mode"
    return msg + E._VIEW_AMBIGUOUS.format(mode)


def check_inplace(
    self: Tensor,
    requires_grad: bool,
    writes_first: bool = False,
    operands=(),
    wraps_scalar: bool = False,
) -> None:
    """PyTorch's checks before an in-place op on ``self`` (``check_inplace``). ``writes_first``:
    a write to an inference tensor outside inference mode raises in ``commit``, after writing.
    ``operands``: the op's other tensors; ``wraps_scalar``: PyTorch wraps a number operand into a
    (normal) tensor. With neither a normal tensor, PyTorch skips its autograd kernel on an
    inference ``self``, and with it these checks (Note [Inference tensors] in ``_storage.py``)."""
    state = grad_mode._state
    if not (writes_first or state.inference or S.counts_versions(self)):
        raise RuntimeError(E.INFERENCE_INPLACE)
    if not (requires_grad and state.grad_enabled) or state.inference:
        return  # inference mode runs no autograd kernel, so none of its checks
    if self._inference and not wraps_scalar:
        if all(t._inference for t in operands if isinstance(t, Tensor)):
            return
    if self._base is not None:
        msg = view_rebase_error(self, indirect=False)
        if msg is not None:
            raise RuntimeError(msg)
        if self._requires_grad and self._base.grad_fn is None:
            raise RuntimeError(E.VIEW_OF_LEAF_INPLACE)
    if self._requires_grad and self.grad_fn is None:
        raise RuntimeError(E.LEAF_INPLACE)


def _overlaps(t: Tensor) -> bool:
    """PyTorch's ``has_internal_overlap``: a stride of 0 over a dimension of size > 1 (an
    empty tensor has no elements to share memory)."""
    strides = t.__dict__.get("_strides")
    if strides is None or 0 in t._data.shape:
        return False
    return any(st == 0 and sz > 1 for st, sz in zip(strides, t._data.shape))


# Note [Overlapping operands]: PyTorch compares the memory of the written tensor with each input
# (``get_overlap_status``). Only tensors whose elements are non-overlapping and dense are compared
# (others are "too hard" and pass); two such tensors on one storage overlap fully when they cover
# the same positions with the same strides (or are the same tensor), partly when their ranges
# meet otherwise. Elementwise kernels (TensorIterator) and ``copy_`` refuse a partial overlap
# only; ``index_put_``, ``index_add_``, ``index_copy_``, ``put_`` and the scatters refuse any.
# ``index_fill_`` refuses any overlap with its index only. ``masked_fill_``, ``fill_``,
# ``masked_scatter_`` and the matrix products check nothing. Positions come from the view chain's
# index map (Note [Index maps] in ``_storage.py``).
# The strides compared include those of size-1 dims, as PyTorch's: ``y.view(1, 6)`` and
# ``y.view(6, 1).t()`` cover the same memory with strides (6, 1) and (1, 1), a partial overlap.
NO_OVERLAP, FULL_OVERLAP, PARTIAL_OVERLAP = range(3)

# Note [Order-dependent writes]: for the pairs PyTorch finds too hard to compare (one of them not
# dense: a column, a strided slice, an expanded tensor) its kernel runs anyway, element after
# element, so an element may read what another element of the same write has already written.
# Which one wins depends on the kernel's loop (its order, and its vectorized part, whose width is
# the CPU's: a broadcast operand is read once per vector there, live in the loop's tail), so
# leafgrad cannot give PyTorch's values for every machine: an elementwise write whose operand
# reads a position that another element writes raises NotImplementedError. Operands that read
# only the positions their own element writes (``v.add_(v2)`` with ``v2`` a second view of the
# same strided slice) are computed as usual.


_dense = non_overlapping_and_dense  # PyTorch's ``is_non_overlapping_and_dense``


def _span(t: Tensor):
    """``(first position, end, strides)`` of a non-overlapping and dense ``t``, else None."""
    from .shape import _strides

    shape, strides = t._data.shape, _strides(t)
    if not _dense(shape, strides):
        return None
    chain = S.chain_of(t)
    first = 0
    if chain:
        idx, _ = S.index_map(chain, t.__dict__["_storage"].data.shape)
        first = int(np.asarray(idx).min())
    return first, first + t._data.size, tuple(strides)


def overlap_status(a: Tensor, b: Tensor) -> int:
    """How the memory of ``a`` and ``b`` overlaps (Note [Overlapping operands])."""
    if a is b:
        return FULL_OVERLAP
    if a._data.size == 0 or b._data.size == 0 or not S.shares_storage(a, b):
        return NO_OVERLAP
    sa, sb = _span(a), _span(b)
    if sa is None or sb is None:
        return NO_OVERLAP
    if sa[:2] == sb[:2]:
        return FULL_OVERLAP if sa[2] == sb[2] else PARTIAL_OVERLAP
    return PARTIAL_OVERLAP if sa[0] < sb[1] and sb[0] < sa[1] else NO_OVERLAP


def check_no_overlap(self: Tensor, tensors, refuse_full: bool, refuse_order: bool = True) -> bool:
    """PyTorch's ``assert_no_partial_overlap`` (``assert_no_overlap`` with ``refuse_full``).
    An order-dependent write (Note [Order-dependent writes]) raises, or with ``refuse_order``
    False returns True, for the caller to refuse once the op's own checks passed."""
    for t in tensors:
        if isinstance(t, Tensor):
            status = overlap_status(self, t)
            if status == PARTIAL_OVERLAP or (refuse_full and status == FULL_OVERLAP):
                raise RuntimeError(E.PARTIAL_OVERLAP)
            if status == NO_OVERLAP and not refuse_full and _reads_written(self, t):
                if refuse_order:
                    raise NotImplementedError(E.ORDER_DEPENDENT_WRITE)
                return True
    return False


def _reads_written(self: Tensor, t: Tensor) -> bool:
    """Note [Order-dependent writes]: whether an elementwise write into ``self`` reads ``t`` (as
    broadcast to ``self``'s shape) at a position another element writes."""
    if self._data.size == 0 or t._data.size == 0 or not S.shares_storage(self, t):
        return False
    if _span(self) is not None and _span(t) is not None:
        return False  # both dense: compared (disjoint, or refused) by ``overlap_status``
    written = S.positions(self)
    try:
        read = np.broadcast_to(S.positions(t), written.shape)
    except ValueError:
        return False  # the op's shape error comes instead
    return bool(np.any(np.isin(read, written) & (read != written)))


# in-place ops whose dtype checks (their op's rule) PyTorch makes before refusing an
# overlapping ``self`` (``inplace``'s ``precheck``), by method name
_CHECKED_FIRST = {"sub": "sub", "subtract": "sub", "neg": "neg", "negative": "neg"}


_ZERO_SEEN = _zero.SEEN


def inplace(
    self: Tensor,
    compute,
    *tensors,
    check_shape: bool = True,
    differentiable: bool = True,
    spell=E.scalar_type_name,
    overlap: str | None = "partial",
    wraps_scalar: bool = False,
    uniform: bool = False,
    precheck=None,
) -> Tensor:
    """Run ``compute()`` (the out-of-place op on ``self``) and commit its result into ``self``;
    with saved tensor hooks active, the result the op saves is then packed as ``self`` (Note
    [Packing an in-place result] in saved.py).

    ``tensors``: the op's other tensor operands (they decide, with ``self``, whether the op is
    recorded and so which checks apply). ``differentiable=False``: an op PyTorch never records
    (``logical_not_``), so none of the autograd checks apply. ``spell``: how the cast error names
    ``self``'s dtype (a few kernels print its C++ name, "long int"). ``overlap``: which overlap of
    ``self`` with ``tensors`` is refused, "partial", "any" or None (Note [Overlapping operands]).
    ``wraps_scalar``: a number operand PyTorch wraps into a tensor (``check_inplace``).
    ``uniform``: every element gets the same value (``fill_``, ``zero_``), so PyTorch allows a
    ``self`` whose elements share memory (an expanded tensor) and so does the write.
    ``precheck``: the op's own checks that PyTorch's meta function makes before its iterator
    refuses an overlapping ``self`` (``sub_``'s and ``neg_``'s bool errors)."""
    if _ZERO_SEEN[0]:  # Note [Zero gradients] in _zero.py
        _zero.check_write(self)
    requires_grad = differentiable and (
        self._requires_grad or any(isinstance(t, Tensor) and t._requires_grad for t in tensors)
    )
    check_inplace(self, requires_grad, True, tensors, wraps_scalar)
    if precheck is not None:
        precheck()
    if not uniform and _overlaps(self):
        raise RuntimeError(E.INTERNAL_OVERLAP)
    # PyTorch allows an order-dependent write (leafgrad refuses it) and so runs the op's own
    # checks (sub_'s alpha) before: the refusal waits until the result is computed
    order_dependent = overlap is not None and check_no_overlap(
        self, tensors, refuse_full=overlap == "any", refuse_order=False
    )
    mark = saved_mod.pending_written() if saved_mod.ACTIVE[0] else -1
    committed = None
    try:
        if not (grad_mode._state.inference or S.counts_versions(self)):
            # Note [Inference tensors]: the write raises (in ``commit``), so PyTorch records nothing
            # and saves a copy of ``self``, not the inference tensor
            before = None
            with grad_mode.no_grad():
                out = _computed(self, compute, tensors)
        else:
            before = _edge(self) if requires_grad and grad_mode._state.grad_enabled else None
            IN_PLACE[0] += 1  # Note [Integer results that require grad] (dispatch.py)
            try:
                out = _computed(self, compute, tensors)
            finally:
                IN_PLACE[0] -= 1
        if check_shape and out._data.shape != self._data.shape:
            raise RuntimeError(
                E.INPLACE_SHAPE.format(_size(self._data.shape), _size(out._data.shape))
            )
        value = out._data
        if out._dtype is not self._dtype:
            if not D.can_cast(out._dtype, self._dtype):
                result = E.scalar_type_name(out._dtype)
                raise RuntimeError(E.INPLACE_CAST.format(result, spell(self._dtype)))
            value = value.astype(self._dtype.np)
        if order_dependent:
            raise NotImplementedError(E.ORDER_DEPENDENT_WRITE)
        commit(self, value, out, before, uniform)
        committed = out
    finally:
        if mark >= 0:
            saved_mod.pack_written(mark, committed, None if committed is None else self)
    return self


def _computed(self: Tensor, compute, tensors) -> Tensor:
    """``compute()``; a kernel that refuses the dtype (``"gcd_cpu" not implemented for 'Float'``)
    is chosen after its iterator has checked that ``self`` has the operands' broadcast shape."""
    try:
        return compute()
    except NotImplementedError as err:
        if E.kernel_refusal(err):
            # the iterator's cast check comes first: a complex number makes ``fmod_`` complex
            refused = str(err).rsplit("'", 2)[-2]
            found = next((d for d in D.ALL if d._legacy == refused), None)
            comparison = str(err).startswith(('"lt_', '"le_', '"gt_', '"ge_'))  # any output
            if found is not None and not comparison and not D.can_cast(found, self._dtype):
                cast = E.INPLACE_CAST.format(refused, E.scalar_type_name(self._dtype))
                raise RuntimeError(cast) from None
            shape = self._data.shape
            for t in tensors:
                if isinstance(t, Tensor):
                    shape = broadcast_shapes(shape, t._data.shape)
            if tuple(shape) != tuple(self._data.shape):
                raise RuntimeError(
                    E.INPLACE_SHAPE.format(_size(self._data.shape), _size(shape))
                ) from None
        raise


def commit(
    self: Tensor, value, out: Tensor | None = None, before=None, uniform: bool = False
) -> None:
    """Write ``value`` into ``self``, bump the version and take over ``out``'s history."""
    if isinstance(value, jax.core.Tracer) and not isinstance(self._data, jax.core.Tracer):
        if func.batched_anywhere(value):  # a jvp level's value into its argument: written
            _refuse_unbatched_write(self)
    elif isinstance(self._data, jax.core.Tracer):
        value = func.rebatched(value, self._data)  # a batched tensor stays batched
    S.write(self, value, uniform)
    if FORWARD_AD[0]:
        forward_ad.after_write(self, out)
    if not bump_version(self):
        return
    node = None if out is None else out._grad_fn
    if node is None:
        return
    if not (self._dtype.is_floating_point or self._dtype.is_complex):
        # an integer tensor that requires grad (Note [Integer results that require grad] in
        # dispatch.py) gets this history: PyTorch's engine asserts on a gradient cast for it
        node._route = None  # a pass-through node runs its backward too, and raises
        refuse_backward(out, lambda: RuntimeError(E.ENGINE_GRAD_DTYPE))
    elif out._dtype is not self._dtype:
        node._ct_dtype = out._dtype.np
    _retarget_checks(node, self)
    _keep_original_self(node, self)
    if self._base is None:
        take_history(self, node, out._output_nr)
        return
    _rebase_view(self, node, out._output_nr, before)


GUARD_CODE = "_guarded.<locals>.guarded"  # func's in-place guard: not a caller of a method

VMAP_INPLACE = (
    "vmap: {0}(self, *extra_args) is not possible because there exists a Tensor `other` in "
    "extra_args that has more elements than `self`. This happened due to `other` being vmapped "
    "over but `self` not being vmapped over in a vmap. Please try to use out-of-place operators "
    "instead of {0}. If said operator is being called inside the PyTorch framework, please file "
    "a bug report instead."
)
# the in-place ops PyTorch's vmap names in that error: its own batching rules for fill_ and
# index_put_, its fallback (``aten::`` names) for ops without one; the rest are "inplace
# arithmetic", but for three whose rule raises the iterator's error on the batched shapes
_VMAP_NAMED = {"fill_": "fill_", "index_put_": "index_put_"}
for _op in (
    "masked_fill_ clamp_ lerp_ addcmul_ addcdiv_ pow_ index_copy_ scatter_ masked_scatter_ "
    "hypot_ fmod_ remainder_ xlogy_ floor_divide_ igamma_ igammac_ nextafter_ ldexp_ "
    "heaviside_ float_power_ eq_ ne_ lt_ le_ gt_ ge_ subtract_ put_ index_reduce_"
).split():
    _VMAP_NAMED[_op] = "aten::" + _op
del _op
_VMAP_SHAPE_ERROR = frozenset(["add_", "atan2_", "copysign_"])


def _refuse_unbatched_write(self: Tensor) -> None:
    """Inside ``vmap``, a value that varies over the batch cannot be written into a tensor that
    does not (one made outside the transform, or an unbatched one made inside): PyTorch's
    error, where leafgrad would otherwise leave a traced value in the tensor."""
    from ..func import active_transforms, transform_level, vmap_size, writing

    if "vmap" not in active_transforms():
        return
    op = (writing() or "").split(".")[0]
    if op in _VMAP_SHAPE_ERROR:
        shape = _size(self._data.shape)
        raise RuntimeError(E.INPLACE_SHAPE.format(shape, _size((vmap_size(), *self._data.shape))))
    name = _VMAP_NAMED.get(op, "inplace arithmetic")
    text = VMAP_INPLACE.format(name)
    if name.startswith("aten::"):  # PyTorch's fallback names the vmap's level
        text = text.replace("in a vmap.", f"at level {transform_level()}.")
    raise RuntimeError(text)


def bump_version(self: Tensor) -> bool:
    """The version bump after a write; False where there is none: an inference tensor in
    inference mode. Outside, one without a counter raises (Note [Inference tensors])."""
    if self._inference:
        if grad_mode._state.inference:
            return False
        if not S.counts_versions(self):
            raise RuntimeError(E.INFERENCE_INPLACE)
    self._version_counter.value += 1
    return True


def take_history(t: Tensor, node, output_nr: int) -> None:
    """A tensor (not a view) written in place becomes output ``output_nr`` of ``node``; a
    ``retain_grad()`` moves with it, and its views require grad from now on.

    PyTorch moves the retains-grad hook after the tensor took its new edge: it pops the old
    node's hook at the *new* output number. For an output other than the first of a
    several-output node (``aminmax``'s ``max``, ``qr``'s ``R``) that finds another output's hook
    (which then moves, still writing that output's ``.grad``) or none, and then PyTorch's
    internal assert raises, after the write and the new history (``variable.cpp``)."""
    old = t._grad_fn
    lost = False
    if t._retains_grad and old is not None:
        ref = old._retained.pop(output_nr, None) if old._retained else None
        kept = None if ref is None else ref()
        if kept is not None:
            node._retain(output_nr, kept)
        else:
            lost = True
    t._grad_fn = node
    t._output_nr = output_nr
    if not t._requires_grad:
        t._requires_grad = True
        S.views_require_grad(t)
    if lost:
        raise RuntimeError(E.RETAINS_GRAD_HOOK_ASSERT)


def _keep_original_self(node, self: Tensor) -> None:
    """Note [Original self]: backward reads ``self`` as it was (the saved array), not the tensor
    it has become. PyTorch saves ``self.clone()``, made before the op's node: the saved tensor's
    history is a ``CloneBackward0`` of ``self``'s old one (``_saved_self.grad_fn``, and the
    graphs ``create_graph`` records from it); its generated code makes the clone after the node
    (a higher sequence number)."""
    ops = getattr(node, "_operands", ())
    if ops and ops[0] is self:
        node._operands = (None, *ops[1:])
        edges = node._edge_idx
        if edges and edges[0] == 0 and node._next_functions[0][0] is not None:
            clone = make_op_node("CloneBackward0", (node._next_functions[0],), _identity, (), False)
            ORIGINAL_SELF[node] = clone


def _identity(primals, cts):
    return (cts[0],)


# node of an in-place op -> the CloneBackward0 of its saved original self (Note [Original self])
ORIGINAL_SELF: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


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
                None,
                self._version_counter,
                self._version_counter.value,
                None,
                c.output_nr,
                None if c.node is None else c.node(),
                # the output is ``self`` now, in its dtype (an op that computed in a wider
                # one is cast back, ``node._ct_dtype``)
                (self._dtype, self._device, self._data.shape),
            )
        new.append(c)
    node._saved_checks = tuple(new) or None


class CopySlices(OpNode):
    """The base's node after an in-place op on one of its views: the base's gradient outside the
    view passes through; inside, it goes through the op's node ``fn``."""

    # ``_out_version``: PyTorch's CopySlices gives the base a gradient it made with
    # ``new_empty_strided(...).copy_(grad)`` and then wrote the view's gradient into with
    # ``copy_``: version 2 (Note [Output versions] in graph.py); the op's other gradients keep
    # the versions its node gives them
    __slots__ = ("_fn", "_chain", "_direct", "_overlapping", "_out_version", "_geometry")

    _lays_out = True  # Note [Gradient layouts] in autograd/graph.py: the base's gradient

    def name(self) -> str:
        return "torch::autograd::CopySlices"

    def _base_strides(self):
        """The base's strides, in which PyTorch makes the base's gradient
        (``new_empty_strided``), where they are not contiguous; else None."""
        if self._geometry is None:
            return None
        from .iterator_layout import contiguous_strides

        size, stride = self._geometry[:2]
        return None if tuple(stride) == contiguous_strides(size) else tuple(stride)

    def _check(self) -> None:
        if self._fn is None:  # released: PyTorch's ``TORCH_CHECK(fn, ERR_BACKWARD_TWICE)``
            raise RuntimeError(E.BACKWARD_TWICE)
        # PyTorch copies the gradient into the view's memory: refused for an expanded view
        if self._overlapping:
            raise RuntimeError(E.INTERNAL_OVERLAP)

    def _apply(self, grads: list) -> list:
        self._check()
        (g,) = grads
        gv = S.gather(self._chain)(g)
        if self._direct:
            res = self._fn._apply([gv])
            g_self = res[0] if res[0] is not None else jnp.zeros(gv.shape, gv.dtype)
            return [S.scatter(self._chain)(g, g_self.astype(gv.dtype)), *res[1:]]
        # the op was a composite: the view's own history is reached through ``fn``'s graph
        return [S.scatter(self._chain)(g, jnp.zeros(gv.shape, gv.dtype)), gv]

    def _apply_graph(self, grads: list) -> list:
        self._check()
        (g,) = grads
        chain = self._chain
        if self._direct and self._geometry is not None:
            return self._apply_recorded(g)
        gv = dispatch(OPS["view_chain_gather"], g, chain=chain)
        if self._direct:
            res = self._fn._apply_graph([gv])
            g_self = res[0]
            if g_self is None:
                g_self = Tensor._make(
                    jnp.zeros(gv._data.shape, gv._data.dtype), gv._dtype, gv._device
                )
            return [dispatch(OPS["view_chain_scatter"], g, g_self, chain=chain), *res[1:]]
        zeros = Tensor._make(jnp.zeros(gv._data.shape, gv._data.dtype), gv._dtype, gv._device)
        return [dispatch(OPS["view_chain_scatter"], g, zeros, chain=chain), gv]

    def _apply_recorded(self, g: Tensor) -> list:
        """PyTorch's ``CopySlices::apply`` op by op (create_graph): the base's gradient is a
        copy of ``grad`` laid out as the base (CopyBackwards), the op's node gets a contiguous
        clone of the view's part of it (AsStridedBackward0, CloneBackward0), and its gradient
        for the view is written back there (the base's gradient's node is then a CopySlices)."""
        from .._tensor import contiguous_format

        base_size, base_stride, size, stride, offset = self._geometry
        result = g.new_empty_strided(base_size, base_stride)
        result.copy_(g)
        grad_slice = result.as_strided(size, stride, offset)
        res = self._fn._apply_graph([grad_slice.clone(memory_format=contiguous_format)])
        g_self = res[0]
        if g_self is None:
            g_self = grad_slice.new_zeros(grad_slice.shape)
        grad_slice.copy_(g_self)
        return [result, *res[1:]]

    def _release(self) -> None:
        # as PyTorch's ``release_variables`` (``fn = nullptr``): the op's node goes, and with it
        # what only it holds (the view's grad_fn of that time: Note [Saved outputs of in-place
        # ops on views]); a node still reachable otherwise keeps its saved values until it runs
        # (an output saved after the view's grad_fn went unpacks with the op's own node)
        self._fn = None


CopySlices.__module__ = "builtins"


def _gather_forward(x, chain):
    return S._apply(chain, x)


def _scatter_forward(root, value, chain):
    # the values written through a view chain (CopySlices' backward, recorded for create_graph)
    return S.scatter(chain)(root, value)


def _view_dtype(meta, static):
    """The dtype of the view a chain reaches: real for a real view of a complex root."""
    dt = meta[0][0]
    return dt.to_real() if S.is_real_view(static["chain"]) else dt


register_ops(
    OpDef(
        "view_chain_gather",
        _gather_forward,
        "AsStridedBackward0",
        ("self",),
        # the operand's dtype stated: a complex operand takes PyTorch's gradient convention
        lambda meta, static: ((meta[0][0],), _view_dtype(meta, static)),
    ),
    OpDef(
        "view_chain_scatter",
        _scatter_forward,
        "AsStridedScatterBackward0",
        ("self", "src"),
        lambda meta, static: ((None, _view_dtype(meta, static)), meta[0][0]),
    ),
)


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
    cs._overlapping = _overlaps(view)
    # the geometry PyTorch's CopySlices keeps (a view through view_as_real or view_as_complex
    # is replayed there instead: the recorded chain stands in for it)
    if any(op.name in S._REPLAYED_VIEWS for op, _, _ in chain):
        cs._geometry = None
    else:
        offset = view.storage_offset() - base.storage_offset()
        cs._geometry = (tuple(base.shape), base.stride(), tuple(view.shape), view.stride(), offset)
    inner = (node._out_version or ())[1:] if direct else ()
    cs._out_version = (2, *inner)
    S.move_retained(base, cs)
    base._grad_fn = cs
    base._output_nr = 0
    base._requires_grad = True
    version = view._version_counter.value
    meta = view.__dict__.get("_vmeta")
    regenerated = S.as_strided_node(view, base)
    S.move_retained(view, regenerated)
    view._grad_fn = regenerated
    view._output_nr = 0
    view._requires_grad = True
    if direct:
        S.rebased(node, regenerated)  # Note [Saved outputs of in-place ops on views]
    if meta is not None:
        meta.attr_version = version
    S.views_require_grad(base)


# --- table entries that exist only as in-place ops ---------------------------------------------


def _as_self(meta, static):
    dt = meta[0][0]
    return (None,) + (dt,) * (len(meta) - 1), dt


def _copy_forward(self, src):
    return jnp.broadcast_to(src, self.shape)


def _fill_forward(self, value):
    if jnp.iscomplexobj(value) and not jnp.iscomplexobj(self):
        value = jnp.real(value).astype(self.dtype)  # Copy.cpp's cast (warned in ``fill_``)
    return jnp.broadcast_to(value, self.shape)


def _fill_rule(meta, static):
    dt = meta[0][0]
    value = meta[1][0] if isinstance(meta[1], tuple) else None
    if value is not None and value.is_complex and not dt.is_complex:
        return (None, None), dt  # the forward takes the real part
    return (None, dt), dt


register_ops(
    OpDef("copy", _copy_forward, "CopyBackwards", ("self", "src"), _as_self),
    OpDef(
        "fill_scalar", _fill_forward, "FillBackward2", ("self", "value"), _as_self, edges=("self",)
    ),
    OpDef("fill_tensor", _fill_forward, "FillBackward3", ("self", "value"), _fill_rule),
    # ``torch.fill``: the out-of-place forms (FillBackward0/1)
    OpDef("fill_out", _fill_forward, "FillBackward0", ("self", "value"), _as_self, edges=("self",)),
    OpDef("fill_tensor_out", _fill_forward, "FillBackward1", ("self", "value"), _fill_rule),
    OpDef("zero", jnp.zeros_like, "ZeroBackward0", ("self",), _as_self),
)


@functools.cache
def _at_value_dtype(op: OpDef) -> OpDef:
    """``op`` with the dtype of its last operand (the value), not cast (Note [Written as a
    number])."""

    def dtypes(meta, static):
        casts, _ = op.dtypes(meta, static)
        return (*casts[:-1], None), meta[-1][0]

    return dataclasses.replace(op, name=op.name + "_at_value_dtype", dtypes=dtypes)


def as_number(self: Tensor, value, op: OpDef, compute, *operands, **static):
    """``compute`` (the op on ``self``), or, where PyTorch records a float ``value`` written into
    an integer ``self``, its values with the node of ``op`` on ``operands`` run at the value's
    dtype (Note [Written as a number])."""
    return record_as_number(self, value, _at_value_dtype(op), compute, *operands, **static)


def record_as_number(self: Tensor, value, at_value: OpDef, compute, *operands, **static):
    """``as_number`` with the op already run at the value's dtype (``at_value``), for ops whose
    value is not their last operand."""
    if not (isinstance(value, Tensor) and value._requires_grad and self._dtype._kind not in "fc"):
        return compute()
    exact = compute()
    recorded = dispatch(at_value, *operands, **static)
    node = recorded._grad_fn
    if node is None:
        return exact
    # no gradient reaches it: ``commit`` makes the integer tensor's new history refuse one
    return Tensor._make(exact._data, exact._dtype, exact._device, True, node, recorded._output_nr)


_COPY_SIGNATURE = ("(Tensor other, bool non_blocking = False)",)


@tensor_op("copy_", function=False)
def copy_(self, *args, **kwargs) -> Tensor:
    """``Tensor.copy_(src, non_blocking=False)``: ``src`` (a tensor or a Python number)
    broadcast, cast and moved into ``self``."""
    if len(args) == 1 and not kwargs:
        src = args[0]
    else:  # as PyTorch's parser binds them (``non_blocking`` takes a bool only)
        bound = E.bind(_COPY_SIGNATURE, args, kwargs, numbers=True)
        if bound is None:
            raise TypeError(E.invalid_arguments("copy_", _COPY_SIGNATURE, args, kwargs, True))
        src = bound[1]["other"]
    if isinstance(src, (bool, int, float, complex)):
        src = _number_tensor(src)
    if not isinstance(src, Tensor):
        raise TypeError(
            f"copy_(): argument 'other' (position 1) must be Tensor, not {type(src).__name__}"
        )
    _zero.check_write(self, copy=True)

    def compute():
        # the kernel's iterator checks the shapes, after the autograd checks and the overlap
        shape = broadcast_shapes(self._data.shape, src._data.shape)
        if shape != self._data.shape:
            raise RuntimeError(E.INPLACE_SHAPE.format(_size(self._data.shape), _size(shape)))
        if src._dtype.is_complex and not self._dtype.is_complex and self._dtype is not D.bool_:
            E.warn_once(E.COMPLEX_TO_REAL)  # Copy.cpp's kernel, after autograd's checks
        moved = src if src._device == self._device else src.to(self._device)
        if self._dtype.is_floating_point or self._dtype.is_complex:
            return dispatch(OPS["copy"], self, moved)
        # PyTorch's copy_ records nothing into an integer tensor: one that requires grad (Note
        # [Integer results that require grad] in dispatch.py) keeps its history
        with grad_mode.no_grad():
            return dispatch(OPS["copy"], self, moved)

    # PyTorch's copy kernel returns at once when ``src`` is ``self``'s own memory in the same
    # layout (its overlap check is never reached): the write changes nothing. Its autograd
    # kernel checks (and records) only a ``self`` of a differentiable dtype
    differentiable = self._dtype.is_floating_point or self._dtype.is_complex
    return inplace(
        self, compute, src, uniform=_same_memory(self, src), differentiable=differentiable
    )


def _number_tensor(value) -> Tensor:
    """A Python number as the 0-d tensor PyTorch's argument parser makes of it."""
    from .. import _factories

    dtype = (
        D.bool_
        if isinstance(value, bool)
        else D.int64
        if isinstance(value, int)
        else D.complex128
        if isinstance(value, complex)
        else D.float64
    )
    return _factories.tensor(value, dtype=dtype)


def _same_memory(a: Tensor, b: Tensor) -> bool:
    """``a`` and ``b`` view the same elements of one storage in the same layout."""
    return (
        S.shares_storage(a, b)
        and a._dtype is b._dtype
        and tuple(a._data.shape) == tuple(b._data.shape)
        and a.stride() == b.stride()
        and a.storage_offset() == b.storage_offset()
    )


@tensor_op("fill_", function=False)
def fill_(self, value) -> Tensor:
    """``Tensor.fill_(value)``: a Python number or a 0-d tensor."""
    if isinstance(value, Tensor):
        if value._data.ndim != 0:
            raise RuntimeError(FILL_DIM.format(value._data.ndim))
        op = OPS["fill_tensor"]

        def compute():
            if value._dtype.is_complex and not self._dtype.is_complex:
                E.warn_once(E.COMPLEX_TO_REAL)  # PyTorch copies the value
            return as_number(self, value, op, lambda: dispatch(op, self, value), self, value)

        return inplace(self, compute, value, overlap=None)
    from .shape import checked_number, parsed_number

    value = parsed_number(value)
    # the kernel converts the number after PyTorch's in-place checks
    return inplace(
        self,
        lambda: dispatch(OPS["fill_scalar"], self, checked_number(value, self._dtype)),
        uniform=True,
    )


def fill(input, value) -> Tensor:
    """``torch.fill(input, value)``: a tensor like ``input`` filled with ``value`` (a number or
    a 0-d tensor, whose gradient is the sum of the result's)."""
    if isinstance(value, Tensor):
        if value._data.ndim != 0:
            raise RuntimeError(FILL_DIM.format(value._data.ndim))
        return dispatch(OPS["fill_tensor_out"], input, value)
    from .shape import checked_number, parsed_number

    return dispatch(OPS["fill_out"], input, checked_number(parsed_number(value), input._dtype))


@tensor_op("index_fill_", function=False)
def index_fill_(self, *args, **kwargs) -> Tensor:
    """``Tensor.index_fill_(dim, index, value)``: ``index_fill`` written into this tensor; a 0-d
    tensor value is written as a number (Note [Written as a number])."""
    from . import index_put
    from .shape import index_fill_args, index_fill_checks, refuse_value_gradient

    dim, index, value = index_fill_args("index_fill_", args, kwargs)
    expanded = _overlaps(self)
    shared = expanded or _shares_within(self)
    wrapped = []

    def before_kernel():
        check_no_overlap(self, (index,), refuse_full=True)
        if expanded:
            E.warn(index_put.INDEX_FILL_EXPANDED)

    def compute():
        op, d, written = index_fill_checks(self, dim, index, value, before_kernel)
        wrapped.append(d)
        out = as_number(
            self,
            value,
            op,
            lambda: dispatch(op, self, index, written, dim=d),
            self,
            index,
            value,
            dim=d,
        )
        return refuse_value_gradient(out, self, index, d)

    values = (value,) if isinstance(value, Tensor) else ()
    if not shared:
        return inplace(self, compute, index, *values, overlap=None)
    # Note [Writes to expanded tensors] in ``index_put.py``: PyTorch warns and writes
    recorded = grad_mode._state.grad_enabled and (
        self._requires_grad or any(v._requires_grad for v in values)
    )
    check_inplace(self, recorded, True, (index, *values))
    out = compute() if recorded else None
    if out is None:
        wrapped.append(index_fill_checks(self, dim, index, value, before_kernel)[1])
    if not isinstance(value, Tensor):
        from .shape import checked_number

        array = jnp.asarray(checked_number(value, self._dtype))
        value = Tensor._make(array, D.from_numpy_dtype(array.dtype), self._device)
    record = None if out is None else (lambda: out)
    return index_put._write_expanded(self, [(wrapped[0], index)], value, False, record)


@tensor_op("zero_", function=False)
def zero_(self) -> Tensor:
    """``Tensor.zero_()``."""
    return inplace(self, lambda: dispatch(OPS["zero"], self), uniform=True)


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
    "triu true_divide trunc xlogy scatter scatter_add "
    "scatter_reduce renorm heaviside nextafter ldexp i0 addmm addmv addbmm "
    "baddbmm"
).split()


# PyTorch records none of these, so it skips the autograd checks (a leaf may be written).
NOT_RECORDED = frozenset("logical_and logical_or logical_xor logical_not".split())
# Note [Overlapping operands]: the kernels that are not elementwise.
OVERLAP_RULE = {
    **dict.fromkeys("scatter scatter_add scatter_reduce".split(), "any"),
    **dict.fromkeys("masked_fill addmm addmv addbmm baddbmm".split()),
}
# With number bounds these kernels name dtypes in C++ in the cast error ("long int").
C_SPELLING = frozenset("clamp clip clamp_min clamp_max".split())
_REFUSAL = re.compile(r"derivative for aten::(\w+) is not implemented")


def _refuse_as_inplace(node) -> None:
    """PyTorch's refusal names the in-place op (``aten::floor_divide_``)."""
    inner = node._backward

    def backward(primals, cts):
        try:
            return inner(primals, cts)
        except RuntimeError as e:
            m = _REFUSAL.fullmatch(str(e))
            if m is None or m.group(1).endswith("_"):
                raise
            raise RuntimeError(E_NO_DERIVATIVE.format(m.group(1) + "_")) from None

    wrap_backward(node, backward)


E_NO_DERIVATIVE = "derivative for aten::{} is not implemented"


# Their ``other`` must be a Tensor or a number, or PyTorch's parser names the in-place method.
TENSOR_OTHER = frozenset("add sub mul div".split())
# PyTorch's parser wraps a number ``other`` of these into a tensor (``check_inplace``).
WRAPS_OTHER = frozenset("add sub mul div divide multiply subtract true_divide floor_divide".split())


def _masked_fill_sizes(self: Tensor, mask) -> None:
    """In place, PyTorch checks the mask's dtype, then broadcasts ``self`` with the mask: its
    message names ``self`` first."""
    from .shape import MASK_BOOL

    if isinstance(mask, Tensor):
        if mask._dtype is not D.bool_:
            raise RuntimeError(MASK_BOOL.format(E.c_type_name(mask._dtype)))
        broadcast_shapes(self._data.shape, mask._data.shape)


def _masked_fill_out(self: Tensor, mask, value) -> Tensor:
    """The out-of-place ``masked_fill`` an in-place one records (its value written as a number,
    Note [Written as a number])."""
    from .shape import masked_fill_values

    return as_number(
        self,
        value,
        OPS["masked_fill_tensor"],
        lambda: masked_fill_values(self, mask, value),
        self,
        mask,
        value,
    )


def _shares_within(self: Tensor) -> bool:
    """Whether elements of ``self`` share memory through an ``unfold`` or ``as_strided`` step
    (PyTorch's overlap check cannot tell, and its kernels write each element in turn)."""
    cell = self.__dict__.get("_storage")
    chain = self.__dict__.get("_chain", ())
    return bool(cell is not None and chain and S.shares_elements(chain, cell.data.shape))


def _masked_fill_expanded(self: Tensor, mask: Tensor, value) -> Tensor:
    """``masked_fill_`` on a tensor whose elements share memory (an expanded one): PyTorch
    checks the mask's dtype and the value's dimensions, warns, and writes (Note [Writes to
    expanded tensors] in ``index_put.py``)."""
    from . import index_put
    from .shape import MASK_BOOL, MASK_VALUE_DIM, checked_number

    values = (value,) if isinstance(value, Tensor) else ()
    recorded = grad_mode._state.grad_enabled and (
        self._requires_grad or any(v._requires_grad for v in values)
    )
    check_inplace(self, recorded, True, (mask, *values))
    if mask._dtype is not D.bool_:
        raise RuntimeError(MASK_BOOL.format(E.c_type_name(mask._dtype)))
    if values and value._data.ndim:
        raise RuntimeError(MASK_VALUE_DIM.format(value._data.ndim))
    if _overlaps(self):  # PyTorch cannot tell other sharing (unfold, as_strided): no warning
        E.warn(index_put.MASKED_FILL_EXPANDED)
    shape = broadcast_shapes(self._data.shape, mask._data.shape)
    if tuple(shape) != tuple(self._data.shape):
        raise RuntimeError(E.INPLACE_SHAPE.format(_size(self._data.shape), _size(shape)))

    def record():
        return _masked_fill_out(self, mask, value)

    if not isinstance(value, Tensor):
        array = jnp.asarray(checked_number(value, self._dtype))
        value = Tensor._make(array, D.from_numpy_dtype(array.dtype), self._device)
    return index_put.masked_fill_expanded(self, mask, value, record if recorded else None)


def _triangle_overlapping(self: Tensor, name: str, diagonal: int = 0, **unknown):
    """``tril_``/``triu_`` unrecorded: PyTorch checks the dims first, then its kernel zeroes the
    elements off the triangle one by one, with no overlap check: on a tensor whose elements share
    memory (an expanded one) a location becomes zero when any element on it is zeroed (Note
    [Writes to expanded tensors] in index_put.py). None: the ordinary in-place path applies (a
    recorded write checks the leaf first, then the dims)."""
    from . import index_put
    from .shape import TRIL_DIM

    if unknown:  # Python's words, for PyTorch's method
        raise TypeError(f"{name}_() got an unexpected keyword argument '{next(iter(unknown))}'")
    if grad_mode._state.grad_enabled and self._requires_grad:
        return None
    if self._data.ndim < 2:
        raise RuntimeError(TRIL_DIM.format(name))
    if not (_overlaps(self) or _shares_within(self)):
        return None
    check_inplace(self, False, True, ())
    rows, cols = self._data.shape[-2:]
    i = jnp.arange(rows)[:, None]
    j = jnp.arange(cols)[None, :]
    off = (j - i > int(diagonal)) if name == "tril" else (j - i < int(diagonal))
    mask = Tensor._make(jnp.broadcast_to(off, self._data.shape), D.bool_, self._device)
    zero = Tensor._make(jnp.zeros((), self._data.dtype), self._dtype, self._device)
    return index_put.masked_fill_expanded(self, mask, zero)


def _make_inplace(name: str, parse_errors: bool = True):
    def method(self, *args, **kwargs):
        if FORWARD_AD[0] and name in forward_ad.INPLACE_REFUSED and forward_ad.refusing():
            # Note [Forward AD not implemented] (one frame: the parser errors below read the
            # caller's)
            return forward_ad.inplace_refused(
                name, (self, *args, *kwargs.values()), lambda: method(self, *args, **kwargs)
            )
        try:
            if name in ("add", "sub") and len(args) == 2:
                # the deprecated add_(Number alpha, Tensor other): the parser warns first
                found = E.deprecated_alpha(name + "_", True, args, kwargs)
                if found is None:
                    raise TypeError(E.deprecated_alpha_refused(name + "_", True, args, kwargs))
                args, kwargs = found[:1], {"alpha": found[1]}
            if name in TENSOR_OTHER and args and kwargs.get("rounding_mode") is None:
                check_operand(name + "_", args[0], "other", 1)
            if "alpha" in kwargs and type(kwargs["alpha"]) not in (int, float):
                check_number_arg(name + "_", kwargs["alpha"], "alpha")
            fn = getattr(Tensor, name)
            fn = getattr(fn, "_unparsed", fn)  # this method reports its own parser errors
            others = [a for a in (*args, *kwargs.values()) if isinstance(a, Tensor)]
            other = args[0] if args else kwargs.get("other")
            wraps = name in WRAPS_OTHER and other is not None and not isinstance(other, Tensor)

            if name in ("tril", "triu"):
                written = _triangle_overlapping(self, name, *args, **kwargs)
                if written is not None:
                    return written

            if name == "masked_fill":
                from .shape import parsed_number

                mask = args[0] if args else kwargs.get("mask")
                value = args[1] if len(args) > 1 else kwargs.get("value")
                if not isinstance(value, Tensor) and value is not None:
                    value = parsed_number(value)  # the argument parser's errors come first

                if isinstance(mask, Tensor) and (_overlaps(self) or _shares_within(self)):
                    return _masked_fill_expanded(self, mask, value)

            def compute():
                if name == "masked_fill":
                    _masked_fill_sizes(self, mask)
                    return _masked_fill_out(self, mask, value)
                out = fn(self, *args, **kwargs)
                node = out._grad_fn
                if node is not None and type(node).__name__ == "NotImplemented":
                    _refuse_as_inplace(node)
                return out

            spell = E.scalar_type_name
            # PyTorch's Tensor overload takes bounds that are all tensors (or None), by position or
            # as ``min=``/``max=``; otherwise a 0-d tensor is read as a number (the Scalar overload)
            bounds = [a for a in (*args, *kwargs.values()) if a is not None]
            tensors = bool(bounds) and all(isinstance(a, Tensor) for a in bounds)
            if name in C_SPELLING and not tensors:
                spell = E.c_type_name
            precheck = None
            other = args[0] if args else kwargs.get("other")
            rule = _CHECKED_FIRST.get(name)
            if rule is not None and (
                rule != "sub" or isinstance(other, (Tensor, bool, int, float))
            ):
                # the op's dtype rule raises its bool errors, as PyTorch's meta function does
                meta = [(self._dtype, self._data.ndim)]
                if rule == "sub":
                    tensor = isinstance(other, Tensor)
                    meta.append((other._dtype, other._data.ndim) if tensor else other)

                def precheck():
                    OPS[rule].dtypes(meta, {})

            elif name in C_SPELLING and bounds and not tensors:
                # clamp's meta function refuses a result type of an integral self and its
                # number bounds that is not self's before the iterator refuses an overlapping
                # self
                numbers = [b for b in bounds if isinstance(b, (bool, int, float, complex))]

                def precheck():
                    if self._dtype.is_floating_point or self._dtype.is_complex:
                        return
                    result = D.result_type_of([(self._dtype, self._data.ndim), *numbers])
                    if result is not self._dtype:
                        cast = E.scalar_type_name(result), E.c_type_name(self._dtype)
                        raise RuntimeError(E.INPLACE_CAST.format(*cast))

            elif name == "addcdiv":
                # its meta function refuses integer division before the iterator refuses an
                # overlapping self (fuzz seed 210)
                t1 = args[0] if args else kwargs.get("tensor1")
                t2 = args[1] if len(args) > 1 else kwargs.get("tensor2")

                def precheck():
                    if all(isinstance(t, Tensor) and t._dtype._kind in "bui" for t in (t1, t2)):
                        raise RuntimeError(ADDCDIV_INTEGER)

            return inplace(
                self,
                compute,
                *others,
                differentiable=name not in NOT_RECORDED,
                spell=spell,
                overlap=OVERLAP_RULE.get(name, "partial"),
                wraps_scalar=wraps,
                precheck=precheck,
            )
        except (RuntimeError, TypeError, AttributeError, ValueError, IndexError) as err:
            # Note [Parser errors on the error path]: arguments PyTorch's parser refuses are
            # reported before the leaf check and the kernel's own errors
            from .. import _arg_check

            frame = sys._getframe(1)
            if frame.f_code.co_qualname == GUARD_CODE:  # Note [Captured tensors]: the caller's
                frame = frame.f_back
            message = parse_errors and _arg_check.inplace_message(
                name + "_", self, args, kwargs, frame
            )
            if not message:
                text = str(err)
                if type(err) is TypeError and text.startswith((name + "(): ", name + "() ")):
                    # the out-of-place frontend's parser message: PyTorch's names the method
                    raise TypeError(name + "_" + text[len(name) :]) from None
                raise
        raise TypeError(message)

    method.__name__ = method.__qualname__ = name + "_"
    method.__doc__ = f"``Tensor.{name}_``: ``{name}`` written into this tensor."
    method._parses = parse_errors
    return method


# The in-place ops PyTorch also has as functions, ``torch.abs_(x)`` for ``x.abs_()``.
FUNCTION_FORMS = (
    "abs acos acosh arccos arccosh arcsin arcsinh arctan arctanh asin asinh atan atanh ceil clamp "
    "clamp_max clamp_min clip cos cosh deg2rad erf erfc exp exp2 expm1 fill fix floor frac gcd i0 "
    "index_put lcm ldexp log log10 log1p log2 logit nan_to_num neg negative rad2deg reciprocal "
    "addmv round rsqrt sigmoid sin sinc sinh sqrt square tan tanh trunc xlogy zero"
).split()


def _function_form(method):
    def function(input, *args, **kwargs):
        return method(input, *args, **kwargs)

    function.__name__ = function.__qualname__ = method.__name__
    function.__doc__ = f"``torch.{method.__name__}(input, ...)``: ``input.{method.__name__}(...)``."
    return function


def install_inplace_methods() -> None:
    """Give every table op in ``SAME_NODE`` that exists its ``_`` variant, and the in-place ops
    of ``FUNCTION_FORMS`` their function (call after all op modules are imported)."""
    from .api import FUNCTIONS

    for name in SAME_NODE:
        if hasattr(Tensor, name) and not hasattr(Tensor, name + "_"):
            setattr(Tensor, name + "_", _make_inplace(name))
    for name in FUNCTION_FORMS:
        method = getattr(Tensor, name + "_", None)
        if method is not None and name + "_" not in FUNCTIONS:
            FUNCTIONS[name + "_"] = _function_form(method)


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
            setattr(Tensor, dunder, _make_inplace(name, parse_errors=False))


# --- in-place ops whose node is not the out-of-place op's --------------------------------------
# Found by running torch over every in-place method: comparisons are recorded in place (zero
# gradients, ``EqBackward0`` for a number, ``EqBackward1`` for a tensor) though ``eq`` is not;
# acosh_/asinh_/atanh_ (and polygamma_) get a ``...Backward1`` node whose backward is not
# implemented in PyTorch (derivatives.yaml: ``not_implemented("inplace version of acosh")``).

_COMPARE_ALIASES = {
    "eq": "eq",
    "ne": "ne",
    "lt": "lt",
    "le": "le",
    "gt": "gt",
    "ge": "ge",
    "greater": "gt",
    "greater_equal": "ge",
    "less": "lt",
    "less_equal": "le",
    "not_equal": "ne",
}


def _compare_into_self(name):
    rule = OPS[name].dtypes

    def dtypes(meta, static):
        cast, _ = rule(meta, static)  # the comparison's own checks and common type
        return cast, meta[0][0]

    return dtypes


for _name in ("eq", "ne", "lt", "le", "gt", "ge"):
    _fwd = OPS[_name].forward
    _node = _name.capitalize() + "Backward"
    register_ops(
        OpDef(
            _name + "_scalar_",
            _fwd,
            _node + "0",
            ("self", "other"),
            _compare_into_self(_name),
            edges=("self",),
        ),
        OpDef(
            _name + "_tensor_",
            _fwd,
            _node + "1",
            ("self", "other"),
            _compare_into_self(_name),
            broadcast=True,
        ),
    )


def _compare_inplace(alias: str, name: str):
    def method(self, other) -> Tensor:
        if isinstance(other, Tensor):
            op = OPS[name + "_tensor_"]
        else:
            op = OPS[name + "_scalar_"]
            if hasattr(other, "item") and not isinstance(other, Tensor):
                other = other.item()
        return inplace(self, lambda: dispatch(op, self, other), other)

    method.__name__ = method.__qualname__ = alias + "_"
    method.__doc__ = f"``Tensor.{alias}_``: the comparison written as 0/1 into this tensor."
    return method


for _alias, _name in _COMPARE_ALIASES.items():
    setattr(Tensor, _alias + "_", _compare_inplace(_alias, _name))

INPLACE_NOT_IMPLEMENTED = "the derivative for 'inplace version of {}' is not implemented."


def _raising_backward(what: str):
    def backward(primals, cts):
        raise NotImplementedError(INPLACE_NOT_IMPLEMENTED.format(what))

    return backward


def _not_implemented_inplace(method_name: str, op_name: str):
    node_name = op_name.capitalize() + "Backward1"

    def method(self) -> Tensor:
        if FORWARD_AD[0] and forward_ad.refusing():  # Note [Forward AD not implemented]
            return forward_ad.inplace_refused(method_name, (self,), lambda: method(self))

        def compute():
            out = getattr(Tensor, method_name)(self)
            node = out._grad_fn
            if node is not None:
                # PyTorch's node saves nothing and raises in backward: same edges, new node.
                out._grad_fn = make_op_node(
                    node_name, node._next_functions, _raising_backward(op_name), None, False
                )
            return out

        return inplace(self, compute)

    method.__name__ = method.__qualname__ = method_name + "_"
    method.__doc__ = f"``Tensor.{method_name}_`` (PyTorch does not differentiate it)."
    return method


for _method, _op in [
    ("acosh", "acosh"),
    ("arccosh", "acosh"),
    ("asinh", "asinh"),
    ("arcsinh", "asinh"),
    ("atanh", "atanh"),
    ("arctanh", "atanh"),
]:
    setattr(Tensor, _method + "_", _not_implemented_inplace(_method, _op))


# --- random in-place ops ------------------------------------------------------------------------
# The numbers are drawn on the host from PyTorch's CPU stream (``_random``); the recorded node
# takes them as a non-differentiable operand, so JAX's VJP gives ``self`` (and ``p``) a zero
# gradient, as PyTorch's ``zeros_like(grad)`` formulas do, and nothing is saved.


def _sample(self_, sample):
    return sample


def _sample_p(self_, p, sample):
    return sample


def _random_name(which: int) -> str:
    return f"RandomBackward{which}"


register_ops(
    *[
        OpDef(name + "_sample", _sample, node, ("self", "sample"), _as_self, edges=("self",))
        for name, node in [
            ("uniform", "UniformBackward0"),
            ("normal", "NormalBackward0"),
            ("bernoulli_scalar", "BernoulliBackward2"),
            ("exponential", "ExponentialBackward0"),
            ("geometric", "GeometricBackward0"),
            ("log_normal", "LogNormalBackward0"),
            ("cauchy", "CauchyBackward0"),
        ]
    ],
    OpDef(
        "random_sample",
        lambda self_, sample, which: sample,
        _random_name,
        ("self", "sample"),
        _as_self,
        edges=("self",),
    ),
    OpDef(
        "bernoulli_tensor_sample",
        _sample_p,
        "BernoulliBackward1",
        ("self", "p", "sample"),
        _as_self,
        edges=("self", "p"),
    ),
)


def _fill_with(
    self, op_name: str, draw, *others, order=None, per_sample=None, fresh=None, **static
) -> Tensor:
    """Draw ``draw(shape, dtype)`` after PyTorch's in-place checks and commit it through the
    table entry ``op_name``.

    PyTorch's CPU kernels fill ``self`` in memory order (``R.iteration_order`` of its strides,
    or ``order`` when the caller computed it with more operands), so ``draw`` gets the shape
    with the dims in that order and its values are permuted back to ``self``'s dims. Inside
    vmap see Note [Randomness in vmap]: ``per_sample``: ``(draw, p)`` for an op of a tensor
    ``p``; ``fresh``: the draw of a new contiguous tensor, where ``draw`` differs."""
    from .shape import _strides

    shape = tuple(self._data.shape)
    if order is None:
        order = R.iteration_order(shape, _strides(self))

    def compute():
        if self._device is DEV.META:  # Note [Meta tensors]: nothing is drawn
            sample = Tensor._make(DEV.meta_data(shape, self._dtype.np), self._dtype, DEV.META)
            return dispatch(OPS[op_name], self, *others, sample, **static)
        # Note [Randomness in vmap]: each sample's values, in self's physical layout
        if per_sample is None:
            values = R.sampled(
                lambda s: draw(s, self._dtype.np), shape, like=self, inplace=True, order=order
            )
        else:  # an op of a tensor too (``bernoulli_(p)``): ``(draw(shape, p), p)``
            from .misc_ops import _host

            values = R.sampled(per_sample[0], shape, per_sample[1:], _host, self, True)
        if values is None and R.batched(self._data):  # "same": a new contiguous tensor
            values = (fresh or draw)(shape, self._dtype.np)
        if values is None:
            values = R.fill_in_order(lambda s: draw(s, self._dtype.np), shape, order)
        if not isinstance(values, jax.Array):
            values = np.asarray(values)
        sample = Tensor._make(
            jax.device_put(values, DEV.jax_device(self._device)),
            self._dtype,
            self._device,
        )
        return dispatch(OPS[op_name], self, *others, sample, **static)

    return inplace(self, compute, *[o for o in others if isinstance(o, Tensor)], overlap=None)


def _expanded_strides(t: Tensor, shape) -> tuple:
    """The strides of ``t.expand(shape)``: 0 for the added and the broadcast dims."""
    from .shape import _strides

    own, size = _strides(t), t._data.shape
    lead = len(shape) - len(size)
    return (0,) * lead + tuple(
        0 if sz == 1 and shape[lead + i] != 1 else st for i, (sz, st) in enumerate(zip(size, own))
    )


def _gen(self, generator):
    from .._factories import generator_for

    if self._device is DEV.META:  # Note [Meta tensors]: a fill draws nothing (``_fill_with``)
        return None
    return generator_for(self._device, generator)


@tensor_op("uniform_", function=False)
@keywords_at(1, "from")
def uniform_(self, from_: float = 0.0, to: float = 1.0, *, generator=None) -> Tensor:
    """``Tensor.uniform_``: PyTorch's CPU stream after ``manual_seed`` (UniformBackward0)."""
    g = _gen(self, generator)
    return _fill_with(self, "uniform_sample", lambda s, d: R.uniform(g, s, d, from_, to))


@tensor_op("normal_", function=False)
def normal_(self, mean: float = 0.0, std: float = 1.0, *, generator=None) -> Tensor:
    """``Tensor.normal_`` (NormalBackward0)."""
    from .shape import _is_contiguous, _strides

    g = _gen(self, generator)
    # A tensor that is not contiguous takes normal_kernel's element-by-element path.
    contiguous = _is_contiguous(self._data.shape, _strides(self))
    return _fill_with(
        self,
        "normal_sample",
        lambda s, d: R.normal(g, s, d, mean, std, contiguous),
        fresh=lambda s, d: R.normal(g, s, d, mean, std, True),
    )


@tensor_op("bernoulli_", function=False)
def bernoulli_(self, p=0.5, *, generator=None) -> Tensor:
    """``Tensor.bernoulli_(p)``: ``p`` a number (BernoulliBackward2) or a tensor broadcast to
    this tensor's shape (BernoulliBackward1)."""
    g = _gen(self, generator)
    if isinstance(p, Tensor):
        from .shape import _strides

        shape = tuple(self._data.shape)
        with grad_mode.no_grad():
            p.expand(shape)  # PyTorch expands p to self's shape: its errors
        # One TensorIterator over self and the expanded p: self's strides decide the order.
        order = R.iteration_order(shape, _strides(self), _expanded_strides(p, shape))

        def draw(s, d):
            probs = np.broadcast_to(np.asarray(p._data), shape).transpose(order)
            return R.bernoulli_tensor(g, probs, d)

        def per_sample(s, probs):  # Note [Randomness in vmap]: the batch dims first
            return R.bernoulli_tensor(g, np.broadcast_to(probs, s), self._dtype.np)

        return _fill_with(
            self, "bernoulli_tensor_sample", draw, p, order=order, per_sample=(per_sample, p)
        )
    return _fill_with(self, "bernoulli_scalar_sample", lambda s, d: R.bernoulli(g, s, d, p))


_RANDOM_ARGS = "random_() received an invalid combination of arguments - got ({})"


@tensor_op("random_", function=False)
def random_(self, *args, generator=None, **kwargs) -> Tensor:
    """``random_()`` (RandomBackward2), ``random_(to)`` (RandomBackward1) or
    ``random_(from, to)`` (RandomBackward0; ``to=None``: up to the dtype's largest value)."""
    g = _gen(self, generator)
    if "from" in kwargs:
        args = (kwargs.pop("from"), *args)
    if len(args) == 2 or (args and "to" in kwargs):
        low, high = args[0], args[1] if len(args) == 2 else kwargs.pop("to")
        which = 0
    elif len(args) == 1:
        low, high, which = None, args[0], 1
    elif "to" in kwargs:
        low, high, which = None, kwargs.pop("to"), 1
    else:
        low = high = None
        which = 2
    if kwargs or len(args) > 2:
        raise TypeError(_RANDOM_ARGS.format(", ".join(type(a).__name__ for a in args)))
    return _fill_with(
        self, "random_sample", lambda s, d: R.random_(g, s, d, low, high), which=which
    )


@tensor_op("exponential_", function=False)
def exponential_(self, lambd: float = 1.0, *, generator=None) -> Tensor:
    """``Tensor.exponential_`` (ExponentialBackward0)."""
    g = _gen(self, generator)
    return _fill_with(self, "exponential_sample", lambda s, d: R.exponential(g, s, d, lambd))


@tensor_op("geometric_", function=False)
def geometric_(self, p: float, *, generator=None) -> Tensor:
    """``Tensor.geometric_`` (GeometricBackward0)."""
    g = _gen(self, generator)
    return _fill_with(self, "geometric_sample", lambda s, d: R.geometric(g, s, d, p))


@tensor_op("log_normal_", function=False)
def log_normal_(self, mean: float = 1.0, std: float = 2.0, *, generator=None) -> Tensor:
    """``Tensor.log_normal_`` (LogNormalBackward0)."""
    g = _gen(self, generator)
    return _fill_with(self, "log_normal_sample", lambda s, d: R.log_normal(g, s, d, mean, std))


@tensor_op("cauchy_", function=False)
def cauchy_(self, median: float = 0.0, sigma: float = 1.0, *, generator=None) -> Tensor:
    """``Tensor.cauchy_`` (CauchyBackward0)."""
    g = _gen(self, generator)
    return _fill_with(self, "cauchy_sample", lambda s, d: R.cauchy(g, s, d, median, sigma))
