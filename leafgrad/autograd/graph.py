"""The recorded graph: ``Node`` (a tensor's ``grad_fn``) and ``AccumulateGrad`` (a leaf's sink).

Note [Node class names]: PyTorch users read ``type(t.grad_fn).__name__`` and ``grad_fn.name()``,
so every node's class is named as PyTorch names it (``MulBackward0``). One subclass per name is
made on first use; they differ only in name (and in ``_expands``, Note [Expanded gradients]).

Note [Expanded gradients]: PyTorch's ``SumBackward0``/``SumBackward1`` return ``grad.expand(sizes)``
(after unsqueezing the summed dims): a view whose summed dims have stride 0, so an in-place write
to it raises. Where such a gradient reaches user code unchanged (an ``autograd.grad`` result, a
hook's argument) it is that view; passing it on unchanged (``x + 1``, ``clone``: the same array,
Note [Pass-through gradients]) keeps it one, and anything that computes (a sum of two gradients,
a cast, any other backward) makes a plain tensor. AccumulateGrad and ``retain_grad`` copy it.
The engine keeps, for one backward, the strides of each gradient array that is such a view
(``expanded_strides`` computes them when a summing node runs); tensors made from that array carry
them (``_strides``, Note [Strides] in ``ops/shape.py``). Not followed: PyTorch's view-making
backwards (``t``, ``view``, ``permute``, ``cat``...) that give views of an expanded gradient, and
``create_graph`` (gradients are recorded ops there).

Note [Fresh views]: PyTorch's backwards of ``permute``, ``transpose``, ``t`` and ``sum`` return a
view of the gradient (``grad.permute(...)``, ``grad.expand(sizes)``) even where it has the
gradient's shape and layout (an identity permutation, a 0-d ``T``, the sum of a 0-d tensor): a
new tensor that shares the gradient's memory and version counter. Only that view holds it, so
AccumulateGrad takes it as ``.grad`` (a caller's root gradient passed on unchanged is copied
instead: Note [In-place sums] in engine.py), while no in-place sum goes into it (Note [View
gradients]). leafgrad routes such a node (Note [Pass-through gradients]); the engine gives the
routed gradient a new array (``_fresh``) with the gradient's version and layout. ``sum_to`` of a
gradient to a 0-d shape (``ExpandBackward0``) is ``grad.sum()``, a new tensor: dispatch leaves
that node unrouted.

Note [View gradients]: a view that a backward formula makes of a tensor (``grad.view(sizes)``,
``grad.narrow(...)``, ``grad.diagonal(...)``, ``sum_to``'s ``view`` after summing away leading
dims) is made under no_grad, and PyTorch's views remember their base even then: the view holds
its base, whose storage it shares, so ``storage().use_count()`` is 2 and InputBuffer never sums
into it in place (``x.view(6)`` and ``x * 2`` both reaching ``x``: ``.grad`` has version 0, not
1). Such gradients come from the shape views (``_VERSION_KEEPING``, where the reshape is a view),
the routed views (Note [Fresh views]), ``cat``/``stack`` (Note [Sibling views]), ``_VIEW_GRADS``,
and ``sum_to`` of a gradient to a shape of fewer (but not zero) dims: ``ExpandBackward0`` and the
broadcasting formulas whose result the engine reduces (``x + b`` with ``b`` of fewer dims: PyTorch's
``validate_outputs``; ``addmm``'s ``self``), unless a cast follows (a new tensor), and
``at::real`` of a complex gradient for a real input. Dispatch reads which edges those are from
the shapes and dtypes once per signature (``SUMMED_TO``, ``view_edges``) and gives its nodes a
variant of the node class that says so (``view_class``: same name); the engine keeps, for one
backward, the arrays that are views (``_Values.views``), the fused backward the tokens (Note
[Versions of fused sums]).

Note [Output versions]: some of PyTorch's backward formulas make their result out of place and
then change it in place (``maximum``: ``at::where(...).masked_fill_(...)``; the value-selecting
reductions ``sort``/``max(dim)``/...: ``at::zeros(...)`` (a ``zero_``) then ``scatter_``), so
the gradient they give has version 1 or 2 where an out-of-place formula's has 0. The table
``_OUTPUT_VERSIONS`` (read from PyTorch 2.13 by calling each node on fresh gradients under
``no_grad``, as its engine runs it) gives, per node name, the version of the gradient of each
edge; a node class carries it as ``_out_version``. The engine gives the arrays a node computed
these versions (an array it passed on unchanged is copied first: it is a new tensor in PyTorch);
the fused backward's tokens do the same (Note [Versions of fused sums] in fused.py).
``AminmaxBackward0`` changes its result in place only when both outputs have gradients
(``_out_version_all``). A gradient that PyTorch's ``validate_outputs`` then sums to a broadcast
input's shape, or casts to its dtype, is a new tensor (version 0): dispatch gives such a
signature's nodes a variant class with those versions (``summed_versions``). Not followed:
versions that depend on a node's arguments (``binary_cross_entropy_with_logits``'s reduction
and weights), and ``create_graph``.
"""

from __future__ import annotations

import itertools
import threading
import weakref

import jax

from .. import _dtype as D
from .. import _errors as E
from .. import _zero
from . import anomaly_mode

__all__ = [
    "Node",
    "AccumulateGrad",
    "node_class",
    "saved_tensors_hooks",
    "save_on_cpu",
    "disable_saved_tensors_hooks",
    "allow_mutation_on_saved_tensors",
    "SavedTensor",
    "GradientEdge",
    "get_gradient_edge",
    "increment_version",
    "register_multi_grad_hook",
]

_sequence = itertools.count()  # next() on a count is atomic under the GIL

# Note [Needed edges]: PyTorch's generated backwards compute a gradient only for the edges the
# engine needs (``should_compute_output``): with ``autograd.grad(y, inputs)`` or
# ``backward(inputs=...)`` an edge that leads to none of the inputs is skipped. JAX's VJP gives
# every gradient at once, so this matters only for a backward that raises for one operand
# (``addcdiv`` with an integer divisor): it asks ``edge_needed`` first. The engine sets the
# running node's mask, per thread (several threads may run backwards at once).
_edges = threading.local()


# backward nodes of shape views, whose PyTorch formula returns a view of the gradient (Note
# [In-place sums] in engine.py)
_VERSION_KEEPING = frozenset(
    """ViewBackward0 UnsafeViewBackward0 ReshapeAliasBackward0 AliasBackward0 UnsqueezeBackward0
    UnsqueezeBackward1 SqueezeBackward0 SqueezeBackward1 SqueezeBackward2 SqueezeBackward3
    SqueezeBackward4""".split()
)
# AccumulateGrad's ``version`` when ``.grad`` is a copy of the gradient (Note [In-place sums] in
# engine.py): 1 for a dense leaf (PyTorch's ``new_empty_strided(...).copy_(grad)``), else 0
COPIED = -1


def edge_needed(i: int) -> bool:
    """Whether the running node's backward must compute the gradient of its edge ``i``."""
    mask = getattr(_edges, "mask", None)
    return True if mask is None else mask[i]


def edge_mask():
    """The running node's mask (None: every valid edge is needed)."""
    return getattr(_edges, "mask", None)


def set_edge_mask(mask):
    """The engine's mask for the node it runs next (None: every valid edge is needed); returns
    the one it replaces (a hook may run a backward of its own inside a node's step)."""
    previous = getattr(_edges, "mask", None)
    _edges.mask = mask
    return previous


# AccumulateGrad runs as soon as it is ready, as in PyTorch (its sequence number is UINT64_MAX).
ACCUMULATE_SEQUENCE_NR = 2**64 - 1


def _next_sequence_nr() -> int:
    return next(_sequence)


class RemovableHandle:
    """What ``register_hook`` returns: ``handle.remove()`` unregisters the hook."""

    _next_id = itertools.count()

    def __init__(self, hooks_dict: dict) -> None:
        self.id = next(RemovableHandle._next_id)
        self._hooks = weakref.ref(hooks_dict) if hooks_dict is not None else None

    def remove(self) -> None:
        hooks = self._hooks() if self._hooks is not None else None
        if hooks is not None:
            hooks.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *args) -> None:
        self.remove()


class _HookDict(dict):
    """A dict of hooks by handle id (a class, so a handle can hold a weak reference to it)."""

    __slots__ = ("__weakref__",)


def add_grads(a, b):
    """Sum two gradients (arrays, or Tensors under create_graph), either of which may be None."""
    if a is None:
        return b
    if b is None:
        return a
    return a + b


# what ``dir()`` of a node shows besides its dunders (Python's own, less leafgrad's)
_NODE_API = (
    "_sequence_nr",
    "_set_sequence_nr",
    "metadata",
    "name",
    "next_functions",
    "register_hook",
    "register_prehook",
    "requires_grad",
)
_HIDDEN_DUNDERS = frozenset({"__getattr__", "__module__", "__slots__", "__weakref__", "__dict__"})


class Node:
    """A backward function: takes the gradients of its outputs, gives those of its inputs."""

    __slots__ = (
        "_next_functions",
        "_seq_nr",
        "_metadata",
        "_retained",
        "_pre_hooks",
        "_post_hooks",
        "_tensor_pre_hooks",
        "_device",
        "_anomaly_trace",
        "__weakref__",
    )

    _expands = False  # Note [Expanded gradients]
    _fresh = False  # Note [Fresh views]
    _slices = False  # Note [Sibling views]
    # Note [View gradients]: True for every edge, or a variant's flags per edge (``view_class``)
    _views = False
    _lays_out = False  # Note [Gradient layouts]: ``engine._Values.lay_out`` marks its gradients
    # Note [View gradients]: it gives strided views (a diagonal, the real view of a complex
    # gradient), whose layouts the eager loop follows
    _strided = False
    _mm = None  # Note [Gradient layouts]: the (edge, input name) of a matrix product's inputs
    _out_version = None  # Note [Output versions]: per edge, or None
    _out_version_all = False  # only when every output has a gradient
    _zeros = None  # Note [Zero gradients] in _zero.py: its rule (``_zero.KEEPS``), or None

    def __init__(self, next_functions: tuple = (), sequence_nr: int | None = None) -> None:
        self._next_functions = next_functions
        # AccumulateGrad and the error nodes take UINT64_MAX without drawing from the counter
        self._seq_nr = _next_sequence_nr() if sequence_nr is None else sequence_nr
        self._metadata = None
        self._retained = None  # {output_nr: weakref to a tensor that called retain_grad()}
        self._pre_hooks = None
        self._post_hooks = None
        self._tensor_pre_hooks = None  # _HookDict: id -> (output_nr, hook)
        self._device = None
        self._anomaly_trace = None
        if anomaly_mode._state.enabled:
            anomaly_mode.record(self)

    def name(self) -> str:
        """PyTorch's name of this node, e.g. ``'MulBackward0'``."""
        return type(self).__name__

    @property
    def next_functions(self) -> tuple:
        """``((node_or_None, output_nr), ...)``: one entry per tensor input of the op."""
        return self._next_functions

    @property
    def metadata(self) -> dict:
        if self._metadata is None:
            self._metadata = {}
        return self._metadata

    def _sequence_key(self) -> int:
        return self._seq_nr

    def __dir__(self):
        """PyTorch's attributes of a node (its dunders, the API, and ``_dir_extra``), not
        leafgrad's internals: what a notebook's completion offers."""
        names = {d for d in object.__dir__(self) if d.startswith("__")} - _HIDDEN_DUNDERS
        names.update(_NODE_API)
        names.update(self._dir_extra())
        return sorted(names)

    def _dir_extra(self) -> list:
        return []

    def _sequence_nr(self) -> int:
        """The order of recording: later nodes run first in backward (PyTorch's method)."""
        return self._seq_nr

    def _set_sequence_nr(self, sequence_nr: int) -> None:
        self._seq_nr = sequence_nr

    @property
    def requires_grad(self) -> bool:
        return True

    def _num_outputs(self) -> int:
        return 1

    def _apply(self, grads: list) -> list:
        """Gradients for ``next_functions`` from the gradients of this node's outputs."""
        raise NotImplementedError

    def _apply_graph(self, grads: list) -> list:
        """``_apply`` on Tensors, recorded, for ``create_graph=True`` (Note [Engine arrays])."""
        raise NotImplementedError(
            f"leafgrad: double backward through {self.name()} is not supported"
        )

    def _release(self) -> None:
        """Free what was saved for backward (PyTorch's ``release_variables``)."""

    def _retain(self, output_nr: int, tensor) -> None:
        if self._retained is None:
            self._retained = {}
        self._retained[output_nr] = weakref.ref(tensor)

    # --- hooks (Note [Hook order] in engine.py) -------------------------------------------
    def register_hook(self, fn) -> RemovableHandle:
        """``fn(grad_inputs, grad_outputs)`` runs after this node; it may return new
        ``grad_inputs``."""
        if self._post_hooks is None:
            self._post_hooks = _HookDict()
        handle = RemovableHandle(self._post_hooks)
        self._post_hooks[handle.id] = fn
        return handle

    def register_prehook(self, fn) -> RemovableHandle:
        """``fn(grad_outputs)`` runs before this node; it may return new ``grad_outputs``."""
        if self._pre_hooks is None:
            self._pre_hooks = _HookDict()
        handle = RemovableHandle(self._pre_hooks)
        self._pre_hooks[handle.id] = fn
        return handle

    def _add_tensor_hook(self, output_nr: int, fn) -> RemovableHandle:
        if self._tensor_pre_hooks is None:
            self._tensor_pre_hooks = _HookDict()
        handle = RemovableHandle(self._tensor_pre_hooks)
        self._tensor_pre_hooks[handle.id] = (output_nr, fn)
        return handle

    def _tensor_hooks(self) -> list:
        if not self._tensor_pre_hooks:
            return []
        return list(self._tensor_pre_hooks.values())

    def _wrap_grad(self, g):
        """A gradient array as a Tensor, for hooks."""
        from .. import _device as DEV
        from .. import _dtype as D
        from .._tensor import Tensor

        device = self._device if self._device is not None else DEV.CPU
        return Tensor._make(g, D.from_numpy_dtype(g.dtype), device)

    def _check_hook_result(self, new, old, hook):
        from .. import _errors as E
        from .._tensor import Tensor

        if not isinstance(new, Tensor):
            raise TypeError(E.HOOK_TYPE.format(type(new).__name__))
        name = getattr(hook, "__name__", repr(hook))
        if new._dtype is not old._dtype:
            raise RuntimeError(
                E.HOOK_TYPE_CHANGED.format(
                    name,
                    E.tensor_type_name(old._dtype, old._device),
                    E.tensor_type_name(new._dtype, new._device),
                )
            )
        if new._device != old._device:
            raise RuntimeError(E.HOOK_DEVICE_CHANGED.format(name, old._device, new._device))
        if new._data.shape != old._data.shape:
            raise RuntimeError(E.HOOK_SIZE.format(name))
        return new

    def __repr__(self) -> str:
        return f"<{type(self).__name__} object at {hex(id(self))}>"


def call_node(node: Node, grads: tuple):
    """PyTorch's ``node(*grads)`` for the nodes it writes in C++ (a custom Function's is not
    callable): the node's backward on these gradients, outside any backward (no hooks run),
    recorded when grad mode is on. One result, or a tuple where the node has other than one."""
    from .._tensor import Tensor

    n = node._num_outputs()
    if len(grads) != n:
        raise TypeError(f"expected {n} arguments, got {len(grads)} instead")
    for i, g in enumerate(grads):
        if g is not None and not isinstance(g, Tensor):
            raise TypeError(f"argument {i} is not a Variable")
    if all(g is None for g in grads) and not isinstance(node, AccumulateGrad):
        outputs = [None] * len(node._next_functions)
    else:
        outputs = node._apply_graph(list(grads))
    return outputs[0] if len(outputs) == 1 else tuple(outputs)


class OpNode(Node):
    """The node of one recorded op; its backward is the op's VJP, recomputed from saved primals.

    ``_backward(primals, cotangents)`` is a cached ``jax.jit`` made by dispatch; ``_primals`` holds
    what it needs (arrays and Python scalars). ``_has_saved`` says whether PyTorch's node for this
    op saved tensors for backward: only then does a second backward without ``retain_graph`` fail.

    Note [Pass-through gradients]: when ``_backward`` only hands incoming gradients on unchanged
    (``x + 1``, ``x - y`` for ``x``: each result is one of its cotangent arguments, as dispatch
    reads from its jaxpr once per call signature), ``_route`` says which cotangent goes to each
    edge and backward skips the call. A route of only None is a node whose PyTorch formula gives
    undefined gradients (Note [Undefined gradients] in ``ops/linalg_ops.py``): nothing is
    computed, with ``create_graph`` too.
    """

    __slots__ = (
        "_backward",
        "_primals",
        "_has_saved",
        "_released",
        "_n_out",
        "_saved_checks",
        "_ct_dtype",
        "_operands",
        "_edge_idx",
        "_structural",
        "_route",
        "_packed",
    )

    def __init__(
        self, next_functions=(), backward=None, primals=None, has_saved=False, n_out=1, seq=None
    ) -> None:
        # Node.__init__ inlined: dispatch makes one of these per recorded op
        self._next_functions = next_functions
        self._seq_nr = next(_sequence) if seq is None else seq
        self._metadata = None
        self._retained = None
        self._pre_hooks = None
        self._post_hooks = None
        self._tensor_pre_hooks = None
        self._device = None
        self._anomaly_trace = None
        self._backward = backward
        self._primals = primals
        self._has_saved = has_saved
        self._released = False
        self._n_out = n_out
        self._saved_checks = None
        self._ct_dtype = None
        self._operands = ()
        self._edge_idx = None
        self._structural = None
        self._route = None
        self._packed = None  # Note [Saved tensor hooks] in saved.py
        if anomaly_mode._state.enabled:
            anomaly_mode.record(self)

    def __getattr__(self, attr: str):
        # only for names the class lacks: ``_saved_<name>``, ``_raw_saved_<name>`` (Note [Saved
        # tensors] in saved.py)
        from . import saved

        return saved.node_getattr(self, attr)

    def _dir_extra(self) -> list:
        from . import saved

        names = saved.saved_names(self)
        extra = [f"_saved_{n}" for n in names]
        extra += [f"_raw_saved_{n}" for n, w in names.items() if saved.is_tensor(w)]
        return extra

    def _num_outputs(self) -> int:
        return self._n_out

    def _check_saved(self) -> None:
        if self._released:
            from .. import _errors as E

            raise RuntimeError(E.BACKWARD_TWICE)
        if self._saved_checks is not None:
            for check in self._saved_checks:
                check()

    def _apply(self, grads: list) -> list:
        self._check_saved()
        if self._ct_dtype is not None:  # an in-place op cast its result to the tensor's dtype
            grads = [g if g is None else g.astype(self._ct_dtype) for g in grads]
        route = self._route
        if route is not None:  # Note [Pass-through gradients]
            return [None if k is None else grads[k] for k in route]
        primals = self._primals
        if self._packed is not None:  # Note [Saved tensor hooks]
            from .saved import unpack_node

            primals, operands = unpack_node(self)
            primals = tuple(p if t is None else t._data for t, p in zip(operands, primals))
        elif self._operands:
            # A saved tensor is read as it is now, as PyTorch's saved tensors alias their memory:
            # the version check guarantees it is unchanged except by unversioned ``.data`` writes.
            primals = tuple(p if t is None else t._data for t, p in zip(self._operands, primals))
        try:
            out = list(self._backward(primals, tuple(grads)))
        except Exception:
            if self._no_valid_edge():
                return [None] * len(self._next_functions)
            raise
        if len(out) > 1:
            # Note [Shared pass-through gradients]: PyTorch's ``self: grad`` hands on the
            # incoming gradient itself (a tensor another holder may share, which then is not
            # summed into in place); JAX's VJP gives a new array of the same value
            for k, j in enumerate(passed_through(self, grads)):
                if j is not None and out[k] is not None:
                    out[k] = grads[j]
        return out

    def _no_valid_edge(self) -> bool:
        """PyTorch's generated backwards compute (and raise) only for edges that lead somewhere
        (``should_compute_output``): a node whose inputs all have no edge (a view that only
        inherits requires_grad) computes nothing, and a formula that raises does not."""
        return type(self).__name__ != "NotImplemented" and all(
            nxt is None for nxt, _ in self._next_functions
        )

    def __call__(self, *grads):
        return call_node(self, grads)

    def _apply_graph(self, grads: list) -> list:
        """The backward as one recorded op of the saved inputs and the incoming gradients, whose
        forward is this node's VJP (DESIGN.md): gradients of gradients come from JAX too."""
        from ..ops.dispatch import backward_as_op

        self._check_saved()
        route = self._route
        if route is not None and not any(k is not None for k in route):
            return [None] * len(route)
        if self._no_valid_edge():
            return [None] * len(self._next_functions)
        if not _reads_indices(self, grads):
            if self._packed is None:
                return backward_as_op(self, grads)
            from .saved import unpack_node

            saved = self._primals, self._operands
            self._primals, self._operands = unpack_node(self)
            try:
                return backward_as_op(self, grads)
            finally:
                self._primals, self._operands = saved
        # Note [Index-reading backwards]: the saved inputs join as constants, so only the incoming
        # gradients are recorded inputs of the gradient.
        saved = self._primals, self._operands, self._edge_idx, self._structural
        if self._packed is not None:  # Note [Saved tensor hooks]
            from .saved import unpack_node

            self._primals, self._operands = unpack_node(self)
        if self._operands:
            self._primals = tuple(
                p if t is None else t._data for t, p in zip(self._operands, self._primals)
            )
        self._operands, self._edge_idx, self._structural = (), None, None
        try:
            return backward_as_op(self, grads)
        finally:
            self._primals, self._operands, self._edge_idx, self._structural = saved

    def _release(self) -> None:
        if self._has_saved:
            self._released = released_marker(self._primals, self._packed)
            self._primals = None
            self._operands = ()
            self._packed = None
            self._saved_checks = None  # a later backward raises before any check is needed


def wrap_backward(node, backward, side_effect=None) -> None:
    """Give ``node`` the backward ``backward`` in place of its own (a refusal, or a check
    around it), keeping what the node saves readable: ``saved.py`` finds the op's record
    through ``backward.inner``. ``side_effect(primals, grads)``: the wrapper only does this (a
    warning, or a check that raises) before the node's own backward, so a ``create_graph``
    backward does it and then records the op's own formula (``dispatch.backward_as_op``)."""
    backward.inner = node._backward
    if side_effect is not None:
        backward.side_effect = side_effect
    node._backward = backward
    node._route = None


def released_marker(primals, packed=None):
    """What a released node's ``_released`` holds: True, or its operands' shapes, None for an
    optional operand that was not given (its ``_saved_<name>`` stays None, as PyTorch's undefined
    saved variables do; saved sizes stay readable). An input packed by saved tensor hooks has
    the shape its entry kept."""
    if not primals:
        return True
    if packed is None:  # the common case, as one comprehension (fused backward: once per node)
        return tuple(
            [
                None
                if p is None
                else KeptNumber(p)
                if type(p) in _NUMBERS
                else getattr(p, "shape", ())
                for p in primals
            ]
        )
    return tuple(
        (packed[j][3] if packed is not None and j in packed else None)
        if p is None
        else KeptNumber(p)
        if type(p) in _NUMBERS
        else getattr(p, "shape", ())
        for j, p in enumerate(primals)
    )


_NUMBERS = frozenset({int, float, complex, bool})


class KeptNumber(tuple):
    """A released node's Python-number operand: its shape ``()``, and the number, which PyTorch
    keeps as a Scalar that stays readable after backward (``_saved_min`` of ClampBackward1)."""

    def __new__(cls, value):
        self = super().__new__(cls)
        self.value = value
        return self


# Note [Index-reading backwards]: PyTorch's formulas for these nodes read their input only
# through indices or comparison masks (``value_selecting_reduction_backward`` scatters the gradient
# by the saved indices; ``amax`` and ``min()`` mask it by ``result == self``), which carry no
# derivative: with ``create_graph`` their gradient depends on the incoming gradient alone.
_INDEX_READING = frozenset(
    {
        "MinBackward0",
        "MinBackward1",
        "MaxBackward0",
        "MaxBackward1",
        "SortBackward0",
        "SortBackward1",
        "TopkBackward0",
        "CummaxBackward0",
        "CumminBackward0",
        "KthvalueBackward0",
        "ModeBackward0",
        "MedianBackward0",
        "MedianBackward1",
        "NanmedianBackward0",
        "NanmedianBackward1",
        "AmaxBackward0",
        "AminBackward0",
        "AminmaxBackward0",
    }
)
# Nodes whose first gradient (of the variance) reads the input; the second (of the mean) does not.
_MEAN_OF_PAIR = frozenset({"VarMeanBackward0", "StdMeanBackward0"})


def _reads_indices(node: Node, grads: list) -> bool:
    """Whether ``node``'s backward, for these incoming gradients, reads its saved inputs only
    where they carry no derivative (Note [Index-reading backwards])."""
    name = type(node).__name__
    return name in _INDEX_READING or (name in _MEAN_OF_PAIR and grads[0] is None)


_node_classes: dict[str, type] = {}


# Note [Gradient layouts]: PyTorch's formula of a unary elementwise op that reads a saved
# tensor (``grad * self.sgn()``, ``tanh_backward(grad, result)``) is itself a TensorIterator op:
# its gradient is laid out after the incoming gradient and that tensor (Note [Iterator layouts]
# in ops/iterator_layout.py), so the gradient of a transposed input is transposed too. Dispatch
# keeps the strides of such an op's strided result here (the input's layout, as the saved
# tensors have it); the eager backward loop marks the gradient it computes with the iterator's
# layout (``engine._Values.grad_layout``). Rare, so kept aside: nodes pay nothing for it.
# Other layouts the loop follows: a binary formula that starts from the gradient lays its result
# out as the gradient (``_GRAD_FIRST``); ``mm`` gives a column-major input a column-major
# gradient (``_MM_INPUTS``); CopySlices makes the base's gradient in the base's layout; a dim
# permutation's backward permutes a marked layout back (``_PERMUTING``). An unmarked gradient is
# taken as contiguous, so the permutation of one is too, but for its size-1 dims' strides: not
# followed are the strided layouts PyTorch gives there (``(x.t() * 3).sum()``: ``x.grad`` is a
# copy, version 1; leafgrad's is the buffer, version 0), as are those of binary formulas that
# read a strided saved operand, and the fused backward's (its tokens know no layouts).
GRAD_LAYOUTS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
# the backward nodes of dim permutations: the gradient is the incoming one's view, its dims
# permuted back
_PERMUTING = frozenset({"TBackward0", "TransposeBackward0", "PermuteBackward0"})
# binary elementwise formulas whose first operand is the gradient (``grad * other``, ``-grad *
# self / (other * other)``): a gradient of the input's shape is laid out as the incoming one
# where the other operand is a number, a 0-d tensor or not strided itself
_GRAD_FIRST = frozenset(
    """MulBackward0 DivBackward0 DivBackward2 SubBackward0 RsubBackward0 AddBackward0
    Atan2Backward0 HypotBackward0 LerpBackward0 LerpBackward1 PowBackward1 XlogyBackward0
    LogaddexpBackward0 Logaddexp2Backward0 AddcmulBackward0 AddcdivBackward0
    NegBackward0""".split()
)
# The matrix products whose formulas give a column-major input a column-major gradient
# (``mm_mat1_backward``, ``mm_mat2_backward``): (edge, input name) of each such input
_MM_INPUTS = {
    "MmBackward0": ((0, "self"), (1, "mat2")),
    "AddmmBackward0": ((1, "mat1"), (2, "mat2")),
}

# Note [Real views of gradients]: PyTorch's ``fft_r2c_backward`` returns ``at::real`` of a c2c
# kernel's complex result, and ``complex``'s backward ``at::real(grad)``/``at::imag(grad)``:
# real views with doubled strides (a leaf's AccumulateGrad copies them, where a size-1 dim does
# not make them dense). Dispatch keeps here, per node, what the layout needs: ``("complex",)`` or
# ``("r2c", dim, onesided, input shape)``; the eager loop marks the gradients
# (``engine._Values.real_views``) and the fused backward leaves such graphs to it.
REAL_VIEW_GRADS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

# Nodes PyTorch writes by hand: ``name()`` is qualified, the class name is not.
_QUALIFIED = {
    "CopyBackwards": "torch::autograd::CopyBackwards",
    "NotImplemented": "torch::autograd::NotImplemented",
    "CopySlices": "torch::autograd::CopySlices",  # fill_diagonal_'s (misc_ops.py)
}
# Nodes whose gradient is ``grad.expand(sizes)`` (Note [Expanded gradients])
_EXPANDING = frozenset({"SumBackward0", "SumBackward1"})
# Nodes whose PyTorch backward returns a view of the gradient also where it has its shape (Note
# [Fresh views])
_FRESH_VIEWS = frozenset(
    """PermuteBackward0 TransposeBackward0 TransposeBackward1 TBackward0 TBackward1 SumBackward0
    SumBackward1""".split()
)
# Note [Sibling views]: PyTorch's ``CatBackward0`` gives each input ``grad.narrow(...)`` and
# ``StackBackward0`` ``grad.unbind(dim)``: views that share the gradient's storage, never summed
# into in place (Note [View gradients]); the engine marks them (``_Values.siblings``).
_SLICING = frozenset({"CatBackward0", "StackBackward0"})
# Note [View gradients]: nodes whose formula returns views of the gradient for every edge
_VIEW_GRADS = frozenset(
    "ViewAsRealBackward0 ViewAsComplexBackward0 AsStridedBackward0 DiagEmbedBackward0".split()
)
# Note [View gradients]: nodes whose gradient for an edge is ``sum_to`` of a larger one: name ->
# whether that holds for every edge (False: only for ``self``, the first)
SUMMED_TO = {
    **dict.fromkeys(
        """AddBackward0 SubBackward0 RsubBackward0 MulBackward0 DivBackward0 DivBackward2
        Atan2Backward0 ClampBackward0 ClampMaxBackward1 ClampMinBackward1 ComplexBackward0
        CopysignBackward0 DistBackward0 FmaxBackward0 FminBackward0 FmodBackward1 HypotBackward0
        IgammaBackward0 IgammacBackward0 LdexpBackward0 LerpBackward0 LerpBackward1
        Logaddexp2Backward0 LogaddexpBackward0 MaximumBackward0 MinimumBackward0
        NextafterBackward0 PolarBackward0 PowBackward1 RemainderBackward1 SpecialXlog1PyBackward0
        SpecialZetaBackward0 WhereBackward0 XlogyBackward0 AddcmulBackward0 AddcdivBackward0
        MaskedFillBackward0 MaskedFillBackward1 ExpandBackward0""".split(),
        True,
    ),
    **dict.fromkeys(
        "AddmmBackward0 AddmvBackward0 AddrBackward0 BaddbmmBackward0 AddbmmBackward0".split(),
        False,
    ),
}


_REAL_OF = {"complex64": "float32", "complex128": "float64"}


def view_edges(name: str, operands, edge_idx, out_shape: tuple, out_dtype):
    """Which edges of a node called ``name`` PyTorch gives a view of a gradient of
    ``out_shape`` and ``out_dtype`` (Note [View gradients]): ``sum_to``'s view after summing
    leading dims, or ``at::real`` of a complex gradient for a real input (``handle_r_to_c``,
    ``_to_copy_backward``). A tuple of flags, or None where none does: 0 (not a view),
    ``VIEW``, or ``REAL_VIEW`` (the real view of a complex tensor: every stride doubled, which
    AccumulateGrad copies). ``operands``: ``(shape, dtype)`` of each tensor operand, None for
    others."""
    every = SUMMED_TO.get(name)
    real_of = _REAL_OF.get(str(out_dtype))
    flags = []
    for k, i in enumerate(edge_idx):
        meta = operands[i] if i < len(operands) else None
        if meta is None:
            flags.append(0)
            continue
        shape, dtype = meta
        if every is not None and (every or k == 0) and shape != out_shape:  # summed to its shape
            kept = str(dtype) in (str(out_dtype), real_of)  # a cast makes a new tensor
            flags.append(VIEW if 0 < len(shape) < len(out_shape) and kept else 0)
        else:
            flags.append(REAL_VIEW if real_of is not None and str(dtype) == real_of else 0)
    return tuple(flags) if any(flags) else None


VIEW, REAL_VIEW = 1, 2  # the flags of ``view_edges``


# Note [Output versions]: node name -> the version of the gradient of each edge
_OUTPUT_VERSIONS = {
    **dict.fromkeys(
        """MaxBackward1 MinBackward1 MedianBackward0 NanmedianBackward0 GatherBackward0
        IndexBackward0 IndexSelectBackward0 MaskedSelectBackward0 TakeBackward0
        AsStridedBackward0 AminmaxBackward0""".split(),
        (1,),
    ),
    **dict.fromkeys(
        """MaxBackward0 MinBackward0 MedianBackward1 NanmedianBackward1 KthvalueBackward0
        ModeBackward0 SortBackward0 SortBackward1 TopkBackward0 CummaxBackward0 CumminBackward0
        TraceBackward0""".split(),
        (2,),
    ),
    "MaximumBackward0": (1, 1),
    "MinimumBackward0": (1, 1),
}
_OUTPUT_VERSION_ALL = frozenset({"AminmaxBackward0"})


def summed_versions(cls: type, operands, edge_idx, out_shape: tuple, out_dtype):
    """The versions of the gradients of a node of class ``cls`` once ``validate_outputs`` has
    fitted them to their inputs (Note [Output versions]): where an input's shape or dtype is
    not the formula's (``sum_to`` of a broadcast, a cast), the gradient is a new tensor, of
    version 0. ``cls._out_version`` where nothing changes; ``operands`` as in ``view_edges``."""
    versions = cls._out_version
    if versions is None or cls.__name__ not in SUMMED_TO:
        return versions
    new = list(versions)
    for k, i in enumerate(edge_idx):
        meta = operands[i] if i < len(operands) else None
        if (
            k < len(new)
            and meta is not None
            and (meta[0], str(meta[1]))
            != (
                out_shape,
                str(out_dtype),
            )
        ):
            new[k] = 0
    return tuple(new) if any(new) else None


def version_class(cls: type, versions) -> type:
    """The variant of node class ``cls`` whose gradients have ``versions`` (``summed_versions``);
    same name, made once."""
    key = (cls, "versions", versions)
    variant = _view_classes.get(key)
    if variant is None:
        body = {"__slots__": (), "__module__": cls.__module__, "_out_version": versions}
        variant = _view_classes[key] = type(cls.__name__, (cls,), body)
    return variant


def output_versions(node: Node, grads: list):
    """The versions of the gradients ``node`` gives for incoming ``grads`` (Note [Output
    versions]), per edge; None where they are all 0."""
    versions = node._out_version
    if versions is None or (node._out_version_all and any(g is None for g in grads)):
        return None
    return versions


def _error_node_init(self, *args, **kwargs) -> None:
    # PyTorch's error nodes (an op without a derivative) take the highest sequence number, as
    # AccumulateGrad does: the engine runs one as soon as it is ready, so it raises before
    # gradients reach leaves through other branches
    OpNode.__init__(self, *args, **kwargs, seq=ACCUMULATE_SEQUENCE_NR)


def node_class(name: str) -> type:
    """The ``OpNode`` subclass called ``name`` (made once)."""
    cls = _node_classes.get(name)
    if cls is None:
        body = {"__slots__": (), "__module__": "builtins"}
        if name in _QUALIFIED:
            qualified = _QUALIFIED[name]
            body["name"] = lambda self: qualified
        if name == "NotImplemented":
            body["__init__"] = _error_node_init
        if name in _EXPANDING:
            body["_expands"] = True
        if name in _FRESH_VIEWS:
            body["_fresh"] = True
        if name in _SLICING:
            body["_slices"] = True
        if name in _VIEW_GRADS or name in _FRESH_VIEWS or name in _VERSION_KEEPING:
            body["_views"] = name != "AliasBackward0"  # whose formula is ``grad`` itself
        if name == "DiagEmbedBackward0":
            body["_strided"] = True
        if name in _MM_INPUTS:
            body["_mm"] = _MM_INPUTS[name]
            body["_lays_out"] = True
        if name in _zero.KEEPS:
            body["_zeros"] = _zero.KEEPS[name]
        if name in _OUTPUT_VERSIONS:
            body["_out_version"] = _OUTPUT_VERSIONS[name]
            body["_out_version_all"] = name in _OUTPUT_VERSION_ALL
        cls = type(name, (OpNode,), body)
        _node_classes[name] = cls
    return cls


def view_class(cls: type, flags: tuple) -> type:
    """The variant of node class ``cls`` whose nodes give ``sum_to``'s views on the edges
    ``flags`` marks (Note [View gradients]); same name, made once."""
    key = (cls, flags)
    variant = _view_classes.get(key)
    if variant is None:
        body = {"__slots__": (), "__module__": cls.__module__, "_views": flags}
        if REAL_VIEW in flags:
            body["_strided"] = True
        variant = _view_classes[key] = type(cls.__name__, (cls,), body)
    return variant


_view_classes: dict = {}


def make_op_node(name, next_functions, backward, primals, has_saved, n_out=1, checks=None):
    """A new recorded node called ``name``."""
    node = node_class(name)(next_functions, backward, primals, has_saved, n_out)
    node._saved_checks = checks
    return node


def _unsqueeze(shape: list, strides: list, dim: int) -> None:
    """PyTorch's ``inferUnsqueezeGeometry``, in place."""
    stride = 1 if dim >= len(shape) else shape[dim] * strides[dim]
    shape.insert(dim, 1)
    strides.insert(dim, stride)


_SUMMED: dict = {}  # (backward, incoming and outgoing shapes and dtypes) -> summed dims


def _summed_dims(node: Node, grad, out) -> tuple:
    """The dims a summing node removed (``keepdim=False``): those its VJP broadcasts over, read
    from its jaxpr once per signature (shapes alone are ambiguous: ``(3, 3)`` summed over 0 or
    1)."""
    key = (node._backward, grad.shape, grad.dtype, out.shape, out.dtype)
    dims = _SUMMED.get(key)
    if dims is None:
        dims = _SUMMED[key] = _read_summed_dims(node, grad, out)
    return dims


def _read_summed_dims(node: Node, grad, out) -> tuple:
    n, kept = len(out.shape), None
    try:
        jaxpr = node._backward.trace(_spec(node._primals), (jax.typeof(grad),)).jaxpr.jaxpr
        made = {id(v): e for e in jaxpr.eqns for v in e.outvars}
        eqn = made.get(id(jaxpr.outvars[0]))
        # a complex or half sum conjugates or converts around the broadcast
        while eqn is not None and eqn.primitive.name in ("conj", "convert_element_type"):
            eqn = made.get(id(eqn.invars[0]))
        if eqn is not None and eqn.primitive.name == "broadcast_in_dim":
            dims = tuple(int(d) for d in eqn.params["broadcast_dimensions"])
            if len(dims) == grad.ndim:
                kept = dims
    except Exception:  # noqa: BLE001 - a backward that cannot be traced: match by shape
        kept = None
    if kept is None:  # the first dims whose sizes match, left to right
        kept, j = [], 0
        for d in range(n):
            if j < grad.ndim and out.shape[d] == grad.shape[j]:
                kept.append(d)
                j += 1
    return tuple(d for d in range(n) if d not in kept)


_PASSED: dict = {}  # (backward, incoming shapes and dtypes) -> passed_through's answer


def passed_through(node: Node, grads: list) -> tuple:
    """For each gradient a recorded node gives, the index of the incoming gradient it is unchanged
    (read from the VJP's jaxpr once per signature), else None: Note [Pass-through gradients]
    for the edges of a node whose other edges compute (``x + y`` with ``y`` broadcast)."""
    backward = getattr(node, "_backward", None)
    if backward is None or not hasattr(backward, "trace") or node._primals is None:
        return ()
    key = (backward, tuple([None if g is None else (g.shape, g.dtype) for g in grads]))
    found = _PASSED.get(key)
    if found is None:
        cts = tuple(None if g is None else jax.typeof(g) for g in grads)
        found = _PASSED[key] = _read_passed(node, cts)
    return found


def _read_passed(node: Node, cts: tuple) -> tuple:
    route = cotangent_routes(node._backward, _spec(node._primals), cts)
    return () if route is None else tuple(None if k == COMPUTED else k for k in route)


COMPUTED = -1  # cotangent_routes' mark of a gradient the backward computes


def cotangent_routes(backward, spec, cts):
    """For each gradient of the jitted ``backward`` at primals ``spec`` and cotangents ``cts``
    (None where absent): None where it is None, the index in ``cts`` of the cotangent it passes
    on unchanged, or ``COMPUTED``; None when the backward cannot be traced (it raises when it
    runs). Read from the jaxpr (Note [Pass-through gradients])."""
    try:
        traced = backward.trace(spec, cts)
    except Exception:  # noqa: BLE001 - a backward that cannot be traced
        return None
    jaxpr = traced.jaxpr.jaxpr
    n_primals = len(jax.tree.leaves(spec))
    ct_vars = {id(v): k for k, v in enumerate(jaxpr.invars[n_primals:])}
    present = [k for k, c in enumerate(cts) if c is not None]
    leaves = iter(jaxpr.outvars)
    route = []
    for g in traced.out_info:
        if g is None:
            route.append(None)
            continue
        k = ct_vars.get(id(next(leaves)))
        route.append(COMPUTED if k is None else present[k])
    return tuple(route)


def _spec(primals) -> tuple:
    return tuple(
        p if p is None or isinstance(p, (bool, int, float, complex)) else jax.typeof(p)
        for p in primals
    )


def expanded_strides(node: Node, grad, out, grad_strides):
    """The strides of ``out``, the gradient an expanding node gave for ``grad`` (Note [Expanded
    gradients]), or None where it is a plain tensor (PyTorch casts it to the input's dtype)."""
    if out is None or grad is None or out.dtype != grad.dtype:
        return None
    from ..ops.shape import _contiguous_strides, _expand_strides  # ops imports this module

    shape = list(grad.shape)
    strides = list(_contiguous_strides(shape) if grad_strides is None else grad_strides)
    # sum(dim, keepdim=False) unsqueezes the summed dims, in order (its ``dim=()``, which sums
    # all without unsqueezing, is taken as every dim listed: only size-1 dims' strides differ)
    if len(shape) < len(out.shape) and type(node).__name__ == "SumBackward1":
        for d in _summed_dims(node, grad, out):
            _unsqueeze(shape, strides, d)
    result = tuple(_expand_strides(shape, strides, out.shape))
    return None if result == _contiguous_strides(out.shape) else result


class AccumulateGrad(Node):
    """The sink of a leaf that requires grad: adds incoming gradients into ``variable.grad``."""

    __slots__ = ("variable", "_meta_dtype")

    def __init__(self, variable) -> None:
        super().__init__((), ACCUMULATE_SEQUENCE_NR)
        self.variable = variable
        # PyTorch's input metadata of the node: the dtype gradients are cast to, the leaf's
        # ``grad_dtype`` (its dtype unless set; None: any) when the node was made or set since
        # (``.data =`` of another dtype makes a new node for new graphs)
        self._meta_dtype = variable.__dict__.get("_grad_dtype", variable._dtype)

    def name(self) -> str:
        return "torch::autograd::AccumulateGrad"

    def _tensor_hooks(self) -> list:
        hooks = self.variable.__dict__.get("_hooks")
        return [(0, h) for h in hooks.values()] if hooks else []

    def _wrap_grad(self, g):
        from .._tensor import Tensor

        g, dtype = self.incoming(g)
        return Tensor._make(g, dtype, self.variable._device)

    def retyped(self) -> bool:
        """Whether gradients reaching this node take another dtype than the leaf's: its
        ``grad_dtype`` was set, or ``.data =`` changed the leaf's dtype since."""
        return self._meta_dtype is not self.variable._dtype

    def incoming(self, g):
        """Gradient ``g`` (an array, or a Tensor under create_graph) as the engine hands it to
        this node: cast to its metadata dtype (the leaf's ``grad_dtype``), with that dtype."""
        from .._tensor import Tensor

        dtype = self._meta_dtype
        tensor = isinstance(g, Tensor)
        current = g._dtype if tensor else D.from_numpy_dtype(g.dtype)
        if dtype is None or dtype is current:
            return g, current
        if dtype._kind not in "fc":  # an integer grad_dtype: PyTorch's engine asserts
            raise RuntimeError(E.ENGINE_GRAD_DTYPE)
        return (g.to(dtype) if tensor else g.astype(dtype.np)), dtype

    def _apply(self, grads: list, version: int = 0, zero: bool = False) -> list:
        """``version``: that of the gradient when ``.grad`` may be the engine's buffer itself
        (Note [In-place sums] in engine.py); ``zero``: the gradient is a zero tensor (Note [Zero
        gradients] in _zero.py)."""
        (grad,) = grads
        if grad is not None:
            if not self._live_leaf():
                # PyTorch's AccumulateGrad leaves ``.grad`` alone for a leaf that stopped
                # requiring grad, and still runs its post-accumulate hooks (measured)
                self.variable._post_accumulate()
            elif self.retyped():
                cast, dtype = self.incoming(grad)
                # a cast gradient is an ordinary tensor
                self.variable._accumulate_grad(cast, version, dtype, zero and cast is grad)
            else:
                self.variable._accumulate_grad(grad, version, zero=zero)
        return []

    def _apply_graph(self, grads: list) -> list:
        (grad,) = grads
        if grad is not None:
            if not self._live_leaf():
                self.variable._post_accumulate()
            else:
                self.variable._accumulate_grad_graph(self.incoming(grad)[0])
        return []

    def __call__(self, *grads):
        return call_node(self, grads)

    def _dir_extra(self) -> list:
        return ["variable"]

    def _live_leaf(self) -> bool:
        """Whether the variable still takes gradients: False once it stopped requiring grad;
        raises once an in-place op (after ``detach_()`` or ``requires_grad_(False)``) gave it a
        history, as PyTorch's AccumulateGrad does."""
        v = self.variable
        if v._grad_fn is not None or v._base is not None and v.grad_fn is not None:
            raise RuntimeError("leaf variable has been moved into the graph interior")
        return v._requires_grad


AccumulateGrad.__module__ = "builtins"

# ``torch.autograd.graph``'s hooks for saved tensors (Note [Saved tensor hooks] in saved.py)
from .edges import (  # noqa: E402
    GradientEdge,
    get_gradient_edge,
    increment_version,
    register_multi_grad_hook,
)
from .saved import (  # noqa: E402
    SavedTensor,
    allow_mutation_on_saved_tensors,
    disable_saved_tensors_hooks,
    save_on_cpu,
    saved_tensors_hooks,
)
