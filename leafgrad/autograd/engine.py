"""The backward engine: PyTorch's algorithm, iterative, over raw JAX arrays (or Tensors).

1. Walk the graph from the roots once (no recursion) and count, for every node, how many edges
   lead into it: a node may run only when every gradient it will receive has arrived.
2. Seed the input buffers of the root nodes with the root gradients.
3. Repeatedly pop the ready node with the highest sequence number (the most recently recorded
   op, so a graph runs in reverse order of recording; AccumulateGrad runs as soon as it is ready),
   run its hooks, hand its summed input gradients to its backward, and add what comes out into
   the buffers of its ``next_functions``.
4. Without ``retain_graph`` each node frees what it saved right after it runs.

Note [Engine arrays]: gradients flow as ``jax.Array``; only hooks, AccumulateGrad and
``retain_grad`` see Tensors. With ``create_graph=True`` gradients flow as Tensors instead and every
node runs its backward as recorded leafgrad ops (``Node._apply_graph``), so the gradients have a
graph of their own. With ``inputs=`` the walk is pruned to nodes that lead to an input.

Note [Gradients in inference mode]: a backward run in inference mode makes every tensor it hands
out (hook arguments, ``.grad``, retained gradients, ``autograd.grad`` results) an inference
tensor, as PyTorch's engine runs under the caller's inference mode; a later accumulation into such
a ``.grad`` outside inference mode then writes and raises (``Tensor._accumulate_grad``).

Note [In-place sums]: when a second gradient reaches a buffer, PyTorch's InputBuffer adds it
in place into the first one if that one is dense and nobody else holds it (its use counts are
one), and GradMode is off (no ``create_graph``); otherwise it makes a new sum. The in-place add
bumps the tensor's version, so a leaf used twice (``x * x``) gets a ``.grad`` whose ``_version`` is
1, as do hook arguments and ``autograd.grad`` results. JAX arrays have no versions: ``_Values``
keeps the count per array. "Nobody else holds it" is read from the array's reference count (a
buffer slot is its only holder: a gradient a node passed on to two edges, a root gradient the
caller holds, or one a hook kept are held twice); "dense" is not marked expanded (Note [Expanded
gradients]). PyTorch's backward of a shape view returns a view of the gradient, which shares its
version, so the count follows through those nodes (``_VERSION_KEEPING``). AccumulateGrad takes
the buffer itself as ``.grad`` when nobody else holds it and it is laid out as the leaf (not
expanded); else it copies it (``clone_obey_contract``: ``new_empty_strided(...).copy_(grad)`` for
a dense leaf, so that ``.grad`` has version 1, as after ``x.sum().backward()``; ``COPIED``).
A gradient that a routed ``permute``/``t``/``sum`` node passed on is a new array that shares its
version (Note [Fresh views] in graph.py): its own holder. A gradient PyTorch makes as a view is
never summed into in place: the view holds its base, so the storage is shared (PyTorch's
InputBuffer also asks that the storage be unshared; Note [View gradients] in graph.py).
A formula that changes its result in place gives a gradient whose version is not 0 (Note [Output
versions] in graph.py).

Note [Hook order]: as PyTorch's ``call_function``: the tensor hooks of each output
(``Tensor.register_hook``, in registration order), then ``retain_grad``, then the node's pre-hooks
(``Node.register_prehook``), the backward, and the node's post-hooks (``Node.register_hook``).
"""

from __future__ import annotations

import contextlib
import gc
import heapq
import itertools
import sys
import threading
import weakref

import jax.numpy as jnp

from .. import _zero
from .._zero import SOURCE as _ZERO_SOURCE
from . import anomaly_mode, fused, grad_mode
from . import graph as _graph
from .graph import (
    _GRAD_FIRST,
    _PERMUTING,
    _VERSION_KEEPING,
    COPIED,
    GRAD_LAYOUTS,
    REAL_VIEW,
    REAL_VIEW_GRADS,
    AccumulateGrad,
    Node,
    OpNode,
    expanded_strides,
    output_versions,
    passed_through,
    set_edge_mask,
)
from .graph import add_grads as _add

_NO_ANOMALY = contextlib.nullcontext()  # reusable
_LAYOUTS_KEPT = GRAD_LAYOUTS.data  # its dict: a cheap test per node that it is empty
_REAL_VIEWS_KEPT = REAL_VIEW_GRADS.data
_refs = sys.getrefcount
# Note [In-place sums]: the references of an array that a buffer slot alone holds, as counted in
# ``_sum`` (the slot, the argument, getrefcount's own) and before AccumulateGrad runs
_SOLE_IN_BUFFER = 3


def _collect(roots: list[Node]) -> tuple[dict, list]:
    """Every node reachable from the roots and its number of incoming edges; no recursion."""
    deps: dict[Node, int] = {}
    order: list[Node] = []  # discovery order, used to prune bottom-up
    seen = set()
    stack = []
    for n in roots:  # a root given twice (``grad([y, y], x)``) is walked once
        if n is not None and n not in seen:
            seen.add(n)
            stack.append(n)
    while stack:
        node = stack.pop()
        order.append(node)
        for nxt, _ in node._next_functions:
            if nxt is None:
                continue
            deps[nxt] = deps.get(nxt, 0) + 1
            if nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return deps, order


def _topological(order: list[Node], deps: dict) -> list[Node]:
    """The collected nodes, parents before children (Kahn's algorithm)."""
    remaining = dict(deps)
    topo = [n for n in order if remaining.get(n, 0) == 0]
    for node in topo:  # topo grows while it is walked
        for nxt, _ in node._next_functions:
            if nxt is None:
                continue
            remaining[nxt] -= 1
            if remaining[nxt] == 0:
                topo.append(nxt)
    return topo


def _needed(order: list[Node], deps: dict, targets: set) -> set:
    """Nodes from which a target node can be reached (targets included), in one pass."""
    needed = set()
    for node in reversed(_topological(order, deps)):
        if node in targets or any(
            nxt in needed for nxt, _ in node._next_functions if nxt is not None
        ):
            needed.add(node)
    return needed


# Note [Gradient layouts] in graph.py: formulas whose first operand is made from the saved
# tensor (``2 / sqrt(pi) * exp(-self ** 2) * grad``, ``threshold_backward(grad, result)`` whose
# iterator takes ``result`` first), formulas that change the gradient first (``-grad * ...``),
# and formulas of zeros
_SELF_FIRST = frozenset(
    """ErfBackward0 ErfcBackward0 ErfinvBackward0 ReluBackward0 SincBackward0 AngleBackward0
    LeakyReluBackward0 ClampBackward1""".split()
)
_GRAD_FIRST_CHANGED = frozenset("ReciprocalBackward0 RsqrtBackward0 AtanhBackward0".split())
_ZEROS_FORMULAS = frozenset({"SgnBackward0"})
# formulas that are ``zeros_like(grad)``: laid out as a dense gradient is (preserve_format)
_ZEROS_LIKE_GRAD = frozenset(
    """FloorBackward0 CeilBackward0 RoundBackward0 RoundBackward1 TruncBackward0
    SignBackward0""".split()
)


class _Values:
    """How gradients are held during one backward: arrays, or Tensors under create_graph; which
    arrays are expanded views (Note [Expanded gradients] in graph.py) and whether tensors made
    from them are inference tensors (Note [Gradients in inference mode])."""

    def __init__(self, create_graph: bool) -> None:
        self.graph = create_graph
        self.inference = grad_mode._state.inference
        # id(array) -> (weak reference to it, its strides, whether it views a storage another
        # array holds: an expanded gradient's)
        self._strides: dict = {}
        self._versions: dict = {}  # id(array) -> (weak reference, Note [In-place sums] count)
        # id(array) -> weak reference to it: the gradients PyTorch holds as views of another
        # tensor, never summed into in place (Note [View gradients] in graph.py)
        self._views: dict = {}
        # id(array) -> weak reference to it: the zero tensors (Note [Zero gradients] in _zero.py)
        self._zeros: dict = {}
        self.any_zero = False  # whether a zero tensor was made (under create_graph too)

    def zero(self, g) -> None:
        """Remember that gradient array ``g`` is a zero tensor (Note [Zero gradients])."""
        self.any_zero = True
        try:
            self._zeros[id(g)] = weakref.ref(g)
        except TypeError:  # not weakly referenceable (a tracer)
            pass

    def is_zero(self, g) -> bool:
        if self.graph:
            return _zero.is_zero(g)
        r = self._zeros.get(id(g))
        return r is not None and r() is g

    def made_zero(self, out):
        """A zero tensor in place of gradient ``out`` (PyTorch's ``_efficientzerotensor``): an
        array, or under create_graph a tensor that does not require grad."""
        self.any_zero = True
        if self.graph:
            from .._tensor import Tensor

            t = Tensor._make(_zero.zeros(out._data), out._dtype, out._device)
            _zero.mark(t)
            return t
        z = _zero.zeros(out)
        self.zero(z)
        return z

    def zero_flow(self, node: Node, grads: list, outputs: list) -> None:
        """The gradients of a node that are zero tensors (Note [Zero gradients] in _zero.py):
        those ``sgn``'s backward of a real input makes, and those of a node whose formula keeps
        the zero tensors it was given."""
        rule = node._zeros
        if rule is _zero.SOURCE:
            out = outputs[0] if outputs else None
            if out is not None and not (out.is_complex() if self.graph else _complex(out)):
                outputs[0] = self.made_zero(out)
            return
        if rule is None or not self.any_zero or not grads:
            return
        given = None  # the (defined) gradients must all be zero tensors
        for g in grads:
            if g is not None:
                if not self.is_zero(g):
                    return
                given = g
        if given is None:
            return
        name = type(node).__name__
        route = name in _zero.ROUTES and not self.graph
        elementwise = name in _zero.ELEMENTWISE
        shape, dtype = given.shape, given.dtype
        for k, out in enumerate(outputs):
            keep = True if rule == "all" else rule[k] if k < len(rule) else False
            if out is None or keep is False:
                continue
            if out.dtype != dtype or elementwise and tuple(out.shape) != tuple(shape):
                continue  # cast, or summed to a broadcast operand's shape: ordinary
            if keep is not True:  # an ordinary tensor of zeros
                if not self.graph:
                    outputs[k] = _zero.zeros(out, keep)
                continue
            if any(out is g for g in grads):
                continue  # the gradient handed on as it is
            if name in _zero.MATRIX_ONLY and out.ndim != 2:
                continue
            if route:
                self.zero(out)  # a view of zeros
                base = name[:-5] if name.endswith("_copy") else name
                if base in _PERMUTING and self.strides(out) is None:
                    self._permuted_zero(node, base, given, out)
            else:
                outputs[k] = self.made_zero(out)

    def version(self, g) -> int:
        """The version of gradient array ``g`` (Note [In-place sums])."""
        entry = self._versions.get(id(g))
        return entry[1] if entry is not None and entry[0]() is g else 0

    def set_version(self, g, version: int) -> None:
        if not version:
            self._versions.pop(id(g), None)
            return
        try:
            self._versions[id(g)] = (weakref.ref(g), version)
        except TypeError:  # not weakly referenceable
            pass

    def keep_versions(self, node: Node, grads: list, outputs: list) -> None:
        """A shape view's backward hands on a view of its gradient (Note [In-place sums]): its
        version, or its layout where the gradient is expanded (Note [Expanded gradients]) and
        PyTorch's reshape of it stays a view."""
        if type(node).__name__ in _VERSION_KEEPING and outputs and outputs[0] is not None:
            g = grads[0]
            if g is None:
                return
            strides = self.strides(g)
            if strides is None:
                self.set_version(outputs[0], self.version(g))
                return
            from ..ops.shape import _compute_stride, _is_contiguous  # the ops import the engine

            out = outputs[0]
            view = _compute_stride(g.shape, strides, out.shape)
            if view is not None and not _is_contiguous(out.shape, view):
                self.mark(out, view, self.shared(g))

    def fresh(self, outputs: list) -> None:
        """A routed node's gradients as the new views PyTorch's backward makes (Note [Fresh
        views] in graph.py): new arrays with the version and layout of those passed on."""
        for k, out in enumerate(outputs):
            if out is None:
                continue
            new = jnp.array(out, copy=True)
            self.set_version(new, self.version(out))
            self.mark(new, self.strides(out), self.shared(out))
            self.view(new)
            outputs[k] = new

    def out_versions(self, node: Node, grads: list, outputs: list) -> None:
        """The versions of the gradients a node's PyTorch formula changed in place (Note [Output
        versions] in graph.py); an array passed on unchanged is copied first."""
        versions = output_versions(node, grads)
        if versions is None:
            return
        for k, out in enumerate(outputs):
            if out is None or k >= len(versions) or not versions[k]:
                continue
            if any(out is g for g in grads) or any(out is o for o in outputs[:k]):
                out = outputs[k] = jnp.array(out, copy=True)
            self.set_version(out, versions[k])

    def view(self, g) -> None:
        """Remember that PyTorch holds gradient array ``g`` as a view (Note [View gradients])."""
        try:
            self._views[id(g)] = weakref.ref(g)
        except TypeError:  # not weakly referenceable (a tracer)
            pass

    def shares(self, g) -> bool:
        """Whether gradient array ``g`` is a view in PyTorch (Note [View gradients] in graph.py),
        whose storage its base shares."""
        r = self._views.get(id(g))
        return r is not None and r() is g

    def views(self, node: Node, grads: list, outputs: list) -> None:
        """Remember the gradients a node gave that PyTorch's formula makes as views (Note [View
        gradients] in graph.py). Under create_graph the gradients are recorded tensors, laid out
        by their ops, and no sum is in place."""
        if self.graph:
            return
        if node._views is True:
            name = type(node).__name__
            if name in _PERMUTING and node._route is None and outputs[0] is not None:
                self._permuted_size1(node, name, grads[0], outputs[0])
            if name in _VERSION_KEEPING:
                g, out = grads[0], outputs[0] if outputs else None
                if g is None or out is None:
                    return
                strides = self.strides(g)
                if strides is not None:
                    from ..ops.shape import _compute_stride  # the ops import the engine

                    if _compute_stride(g.shape, strides, out.shape) is None:
                        return  # a reshape that copies: a new tensor
                self.view(out)
                return
            for out in outputs:
                if out is not None:
                    self.view(out)
            if node._strided and outputs[0] is not None and grads[0] is not None:
                self._diagonal(node, grads[0], outputs[0])
            return
        for out, flag in zip(outputs, node._views):
            if flag and out is not None:
                self.view(out)
                if flag == REAL_VIEW:  # ``at::real`` of a complex gradient of its shape
                    from ..ops.iterator_layout import contiguous_strides

                    g = grads[0]
                    strides = self.strides(g) if g is not None and g.shape == out.shape else None
                    strides = strides or contiguous_strides(tuple(out.shape))
                    self.mark(out, tuple(2 * s for s in strides), True)

    def _permuted_zero(self, node: Node, name: str, g, out) -> None:
        """The layout of a permuted zero tensor: AccumulateGrad takes it as ``.grad`` only where
        it is laid out as the leaf (Note [Zero gradients] in _zero.py; other gradients' permuted
        layouts are not followed, as AccumulateGrad's copy of them is the same)."""
        from ..ops.iterator_layout import contiguous_strides

        strides = _permuted_back(node, name, self.strides(g) or contiguous_strides(tuple(g.shape)))
        if strides != contiguous_strides(tuple(out.shape)):
            self.mark(out, strides, False)

    def _permuted_size1(self, node: Node, name: str, g, out) -> None:
        """The layout of a permutation of an unmarked gradient where it differs from contiguous
        only in size-1 dims' strides (``x.t()`` of a ``(3, 1)`` ``x``: ``(1, 3)``), which decide
        no copy and no in-place sum (Note [Gradient layouts] in graph.py: a strided one is not
        followed)."""
        if g is None or self.strides(g) is not None:  # ``carry`` permutes a marked layout
            return
        from ..ops.iterator_layout import contiguous_strides

        shape = tuple(out.shape)
        strides = _permuted_back(node, name, contiguous_strides(tuple(g.shape)))
        natural = contiguous_strides(shape)
        if len(strides) == len(shape) and strides != natural:
            if all(s == c or n == 1 for s, c, n in zip(strides, natural, shape)):
                self.mark(out, strides, False)

    def _diagonal(self, node: Node, g, out) -> None:
        """Mark the diagonal view ``DiagEmbedBackward0`` gives (``grad.diagonal(offset, dim1,
        dim2)``): the other dims' strides, then the two dims' strides summed."""
        from ..ops.iterator_layout import contiguous_strides

        d1, d2 = _saved_dim(node._saved_dim1, g.ndim), _saved_dim(node._saved_dim2, g.ndim)
        strides = self.strides(g) or contiguous_strides(tuple(g.shape))
        kept = [s for d, s in enumerate(strides) if d not in (d1, d2)]
        layout = (*kept, strides[d1] + strides[d2])
        if len(layout) == out.ndim and layout != contiguous_strides(tuple(out.shape)):
            self.mark(out, layout, True)

    def lay_out(self, node: Node, outputs: list) -> None:
        """Mark the layouts a node's PyTorch formula gives its gradients (Note [Gradient layouts]
        in graph.py): ``mm_mat1_backward``/``mm_mat2_backward`` give a column-major input a
        column-major gradient (``mat2.mm(grad.t()).t()``), so that the ``t`` it went through
        (F.linear's ``weight.t()``) gives the weight a contiguous one; CopySlices makes the base's
        gradient with ``new_empty_strided`` in the base's layout."""
        if self.graph:
            return
        if node._mm is None:
            strides = node._base_strides()
            if strides is not None and outputs and outputs[0] is not None:
                self.mark(outputs[0], strides, False)
            return
        for k, name in node._mm:
            out = outputs[k] if k < len(outputs) else None
            if out is None or out.ndim != 2:
                continue
            strides = getattr(node, f"_saved_{name}_sym_strides")
            if len(strides) == 2 and strides[0] == 1 and strides[1] == out.shape[0]:
                self.mark(out, (1, out.shape[0]), False)

    def siblings(self, g, outputs: list) -> None:
        """Mark the gradients a slicing node gave as views of its gradient ``g`` (those of its
        dtype: a cast one is a new tensor, laid out as ``to`` lays out the view)."""
        for o in outputs:
            if o is not None and o.dtype == g.dtype:
                self.view(o)
        strides = self.strides(g)
        if strides is not None:  # views of an expanded gradient (Note [Expanded gradients])
            from .._factories import preserved_strides  # the factories import the engine
            from ..ops.shape import _contiguous_strides

            for out in outputs:
                if out is None or out is g:
                    continue
                # a size-1 dim of stride 0 counts too: the view shares the storage of what was
                # expanded (a root gradient the caller holds), and AccumulateGrad's layout
                # contract copies it
                kept = _sibling_strides(g.shape, strides, out.shape, len(outputs))
                if kept is not None and out.dtype != g.dtype:
                    kept = preserved_strides(tuple(out.shape), kept)
                if kept is not None and kept != tuple(_contiguous_strides(out.shape)):
                    self.mark(out, kept, out.dtype == g.dtype)

    def strides(self, g):
        """The strides of gradient array ``g`` where it is not contiguous, else None."""
        entry = self._strides.get(id(g))
        return entry[1] if entry is not None and entry[0]() is g else None

    def shared(self, g) -> bool:
        """Whether marked gradient array ``g`` views a storage another array holds."""
        entry = self._strides.get(id(g))
        return entry is not None and entry[0]() is g and entry[2]

    def mark(self, g, strides, shared: bool = True) -> None:
        """Mark ``g`` as laid out as ``strides`` (None: contiguous); ``shared``: it views a
        storage another array holds (Note [Expanded gradients]), which is never summed into in
        place."""
        if strides is None:
            self._strides.pop(id(g), None)
            return
        try:
            self._strides[id(g)] = (weakref.ref(g), tuple(strides), shared)
        except TypeError:  # not weakly referenceable (a tracer): taken as contiguous
            pass

    def expand(self, node: Node, grads: list, outputs: list) -> None:
        """Mark what a summing node gave (Note [Expanded gradients])."""
        g = grads[0]
        for out in outputs:
            strides = expanded_strides(node, g, out, self.strides(g))
            if strides is not None:
                self.mark(out, strides)

    def grad_layout(self, node: Node, grads: list, outputs: list) -> None:
        """Lay out the gradient of a unary elementwise op's strided input after the incoming
        gradient and the input (Note [Gradient layouts] in graph.py)."""
        strides = GRAD_LAYOUTS.get(node)
        if strides is None or not outputs or outputs[0] is None or grads[0] is None:
            return
        from ..ops.iterator_layout import contiguous_strides, iterator_strides

        out, g = outputs[0], grads[0]
        shape = tuple(out.shape)
        if tuple(g.shape) != shape or len(strides) != len(shape) or any(out is x for x in grads):
            return
        name = type(node).__name__
        if name in _ZEROS_FORMULAS:
            return  # zeros of their own: contiguous
        incoming = self.strides(g)
        if incoming is None:
            incoming = contiguous_strides(shape)
        elif name in _GRAD_FIRST_CHANGED and 0 in incoming:
            incoming = contiguous_strides(shape)  # an op on the expanded gradient: contiguous
        operands = [(shape, incoming), (shape, strides)]
        if name in _SELF_FIRST:
            operands.reverse()
        self.mark(out, iterator_strides(shape, operands), False)

    def real_views(self, node: Node, grads: list, outputs: list) -> None:
        """Mark the real views of complex gradients a node gives (Note [Real views of
        gradients] in graph.py)."""
        spec = REAL_VIEW_GRADS.get(node)
        g = grads[0] if grads else None
        if spec is None or g is None:
            return
        from ..ops import fft_ops  # the ops import the engine
        from ..ops.iterator_layout import contiguous_strides

        strides = self.strides(g) or contiguous_strides(tuple(g.shape))
        if spec[0] == "complex":  # real(grad), imag(grad): views of one gradient
            for out in outputs[:2]:
                if out is not None and out.shape == g.shape:
                    self.mark(out, tuple(2 * s for s in strides), True)
            return
        _, dim, onesided, shape = spec
        out = outputs[0] if outputs else None
        if out is None or tuple(out.shape) != shape:
            return
        if onesided and shape[dim[-1]] > g.shape[dim[-1]]:
            strides = contiguous_strides(shape)  # zero-filled to the full length first
        order = fft_ops.sorted_dims(strides, dim)
        layout = fft_ops.result_strides(shape, strides, shape, order)
        self.mark(out, tuple(2 * s for s in layout), False)

    def carry(self, node: Node, grads: list, outputs: list) -> None:
        """Mark what a node passed on unchanged from a marked gradient (a node with a route
        hands on the same array, which stays marked)."""
        if node._expands:
            self.expand(node, grads, outputs)
            return
        if not self._strides or getattr(node, "_route", 0) is not None:
            return
        ins = [None if g is None else self.strides(g) for g in grads]
        if not any(s is not None for s in ins):
            return
        out = outputs[0] if outputs else None
        name = type(node).__name__
        if name in _PERMUTING and out is not None and ins[0] is not None:
            # ``grad.t()``, ``grad.transpose(d0, d1)``, ``grad.permute(inverse)``: a view
            strides = _permuted_back(node, name, ins[0])
            if strides is not None and len(strides) == out.ndim:
                self.mark(out, strides, self.shared(grads[0]))
            return
        if (
            name == "ToCopyBackward0"
            and out is not None
            and ins[0] is not None
            and out.dtype != grads[0].dtype
        ):  # ``grad.to(dtype)``: laid out as empty_like
            from .._factories import preserved_strides  # the factories import the engine

            self.mark(out, preserved_strides(tuple(out.shape), ins[0]), False)
            return
        if name in _ZEROS_LIKE_GRAD and out is not None and ins[0] is not None:
            from ..ops.iterator_layout import non_overlapping_and_dense

            g = grads[0]
            if out.shape == g.shape and non_overlapping_and_dense(tuple(g.shape), ins[0]):
                self.mark(out, ins[0], False)  # (an expanded one of size-1 dims is dense)
            return
        if name in _GRAD_FIRST and ins[0] is not None:
            # ``grad * other``, ``-grad * ...``: laid out by TensorIterator after the gradient
            from ..ops.iterator_layout import contiguous_strides, iterator_strides

            g = grads[0]
            shape = tuple(g.shape)
            strides = iterator_strides(shape, [(shape, ins[0])])  # None: contiguous
            if strides is not None and strides != contiguous_strides(shape):
                for out in outputs:
                    if out is None or any(out is x for x in grads):
                        continue  # ``self: grad``: the gradient itself, laid out as it is
                    if tuple(out.shape) == shape and out.dtype == g.dtype:
                        self.mark(out, strides, False)
            return
        for out, j in zip(outputs, passed_through(node, grads)):
            if out is not None and j is not None and ins[j] is not None:
                if out.shape == grads[j].shape and out.dtype == grads[j].dtype:
                    self.mark(out, ins[j], self.shared(grads[j]))

    def tensor(self, node: Node, g):
        """Gradient array ``g`` as the Tensor user code sees."""
        t = node._wrap_grad(g)
        if self.inference:
            t._inference = True
        if self._versions and not self.inference:
            version = self.version(g)
            if version:
                t._version_counter.value = version
        strides = self.strides(g)
        if strides is not None:
            t.__dict__["_strides"] = strides
        if self.any_zero and self.is_zero(g):
            _zero.mark(t)
        return t

    def to_tensors(self, node: Node, grads: list) -> list:
        if self.graph:
            return list(grads)
        return [None if g is None else self.tensor(node, g) for g in grads]

    def from_tensors(self, grads: list) -> list:
        if self.graph:
            return list(grads)
        arrays = []
        for t in grads:
            if t is None:
                arrays.append(None)
                continue
            self.mark(t._data, t.__dict__.get("_strides"))  # a hook's result keeps its layout
            if t._is_zerotensor():
                self.zero(t._data)
            if not t._inference:  # and its version (a hook may write to it)
                self.set_version(t._data, t._version)
            arrays.append(t._data)
        return arrays


def _tensor_pre_hooks(node: Node, grads: list, values: _Values) -> list:
    """Note [Hook order]: tensor hooks, then retain_grad."""
    hooks = node._tensor_hooks()
    if hooks:
        ts = values.to_tensors(node, grads)
        for nr, hook in hooks:
            g = ts[nr]
            new = hook(g)  # PyTorch calls it with None for an undefined gradient too
            if new is not None:
                ts[nr] = new if g is None else node._check_hook_result(new, g, hook)
        grads = values.from_tensors(ts)
    if node._retained is not None:
        _store_retained(node, grads, values)
    return grads


def _check_hook_tuple(node: Node, prev: list, new, hook) -> list:
    """A node hook's result checked as PyTorch's ``check_result`` (python_hook.cpp): a tuple of
    the same length, None or a Tensor of the same type, device and size per slot."""
    from .. import _errors as E

    if not isinstance(new, tuple):
        raise TypeError(E.HOOK_NOT_TUPLE.format(type(new).__name__))
    if len(new) != len(prev):
        name = getattr(hook, "__name__", repr(hook))
        raise RuntimeError(E.HOOK_COUNT.format(name, len(new), len(prev)))
    out = list(new)
    for old, value in zip(prev, out):
        if value is None:
            continue
        if old is None:
            raise RuntimeError(E.HOOK_REPLACE_NONE)
        node._check_hook_result(value, old, hook)
    return out


def _call_node(node: Node, grads: list, values: _Values, held: list) -> list:
    """``held``: the node's input buffer, as the engine popped it."""
    if node._pre_hooks:
        ts = values.to_tensors(node, grads)
        for hook in list(node._pre_hooks.values()):
            new = hook(tuple(ts))
            if new is not None:
                ts = _check_hook_tuple(node, ts, new, hook)
        grads = values.from_tensors(ts)
    if all(g is None for g in grads) and not isinstance(node, AccumulateGrad):
        outputs = [None] * len(node._next_functions)
    elif values.graph:
        outputs = node._apply_graph(grads)
        if values.any_zero or node._zeros is _ZERO_SOURCE:
            values.zero_flow(node, grads, outputs)
    elif type(node) is AccumulateGrad:
        # Note [In-place sums]: ``.grad`` is the buffer itself, with its version, when only the
        # buffer holds it and it is laid out as the leaf; else a copy (COPIED)
        g = grads[0]
        zero = values.any_zero and g is not None and values.is_zero(g)
        marked = None if g is None else values.strides(g)
        if g is None:
            version = 0
        elif marked is not None and not _obeys_layout(g.shape, marked, node.variable):
            version = COPIED
        elif _refs(g) > _SOLE_IN_BUFFER + (grads is not held):
            # held elsewhere too: ``.grad`` gets a copy of its own, as PyTorch's clone, so that
            # the other holder may later take the gradient itself (``x1 + x2``: the first
            # leaf's node copies it, the second takes it)
            version = COPIED
            grads = [jnp.array(g, copy=True)]
        else:
            version = values.version(g)
        g = None
        fresh = marked is not None and version != COPIED and node.variable._grad is None
        outputs = node._apply(grads, version, zero)
        if fresh and node.variable._grad is not None:  # the buffer taken as it is laid out
            node.variable._grad.__dict__["_strides"] = marked
    else:
        outputs = node._apply(grads)
        if node._expands or values._strides:
            values.carry(node, grads, outputs)
        if values._versions or values._strides:
            values.keep_versions(node, grads, outputs)
        if node._fresh and node._route is not None:
            values.fresh(outputs)
        if node._slices and grads[0] is not None:
            values.siblings(grads[0], outputs)
        if node._views:
            values.views(node, grads, outputs)
        if node._lays_out:
            values.lay_out(node, outputs)
        if node._out_version is not None:
            values.out_versions(node, grads, outputs)
        if _LAYOUTS_KEPT:
            values.grad_layout(node, grads, outputs)
        if _REAL_VIEWS_KEPT:
            values.real_views(node, grads, outputs)
        if values.any_zero or node._zeros is _ZERO_SOURCE:
            values.zero_flow(node, grads, outputs)
    anomaly = anomaly_mode._state.enabled
    if node._post_hooks or anomaly:
        mask = getattr(_graph._edges, "mask", None)
        if mask is not None and isinstance(node, OpNode):
            # Note [Needed edges] in graph.py: PyTorch leaves the gradient of an edge it does
            # not need undefined: post-hooks see None there and anomaly mode checks nothing
            # (custom Functions excepted: their backward's results are kept)
            outputs = [o if need else None for o, need in zip(outputs, mask)]
    if node._post_hooks:
        ins = values.to_tensors(node, outputs)
        outs = values.to_tensors(node, grads)
        for hook in list(node._post_hooks.values()):
            new = hook(tuple(ins), tuple(outs))
            if new is not None:
                ins = _check_hook_tuple(node, ins, new, hook)
        outputs = values.from_tensors(ins)
    if anomaly:  # after the post-hooks, as PyTorch
        anomaly_mode.check_outputs(node, outputs, values.graph)
    return outputs


# Note [Graph tasks]: each backward is a graph task (PyTorch's ``GraphTask``) with an id; while it
# runs, hooks may ask for that id (``current_graph_task_id``) and whether it will run a node
# (``will_engine_execute_node``): ``register_multi_grad_hook`` counts the gradients it waits for so.
class _Task:
    __slots__ = ("id", "order", "reachable", "needed", "accumulate")

    def __init__(self, accumulate: bool) -> None:
        self.id = next(_task_ids)
        self.order = self.reachable = self.needed = None
        self.accumulate = accumulate


class _Tasks(threading.local):
    def __init__(self) -> None:
        self.stack: list = []


_tasks = _Tasks()
_task_ids = itertools.count()
WILL_EXECUTE_OUTSIDE = "_will_engine_execute_node should only be called during the backward pass"
WILL_EXECUTE_LEAF = (
    "A leaf node was passed to _will_engine_execute_node but we are currently running "
    "autograd.grad(). This is currently not supported."
)


def current_graph_task_id() -> int:
    """The id of the backward running in this thread, or -1."""
    stack = _tasks.stack
    return stack[-1].id if stack else -1


def will_engine_execute_node(node) -> bool:
    """Whether the backward running in this thread will run ``node`` (Note [Graph tasks])."""
    stack = _tasks.stack
    if not stack:
        raise RuntimeError(WILL_EXECUTE_OUTSIDE)
    task = stack[-1]
    if isinstance(node, AccumulateGrad) and not task.accumulate:
        raise RuntimeError(WILL_EXECUTE_LEAF)
    if task.needed is not None:
        return node in task.needed
    if task.reachable is None:
        task.reachable = set(task.order or ())
    return node in task.reachable


def run_backward(
    root_edges: list[tuple[Node, int]],
    root_grads: list,
    retain_graph: bool,
    input_edges: list | None = None,
    on_input=None,
    create_graph: bool = False,
    root_strides: list | None = None,
    accumulate: bool = True,
) -> None:
    """Propagate ``root_grads`` from ``root_edges`` through the graph.

    ``input_edges``: when given, only these ``(node, output_nr)`` edges receive gradients;
    ``on_input(index, grad, strides)`` is called with the total gradient that reached each of
    them (and its strides where it is not contiguous: Note [Expanded gradients]), and
    AccumulateGrad nodes do not run (``on_input`` accumulates for ``backward``; ``autograd.grad``
    only captures). ``root_strides``: those of the root gradients the caller gave.
    ``accumulate``: False for ``autograd.grad`` (Note [Graph tasks]).
    """
    task = _Task(accumulate)
    stack = _tasks.stack
    stack.append(task)
    paused = gc.isenabled()  # Note [Collector during backward]
    if paused:
        gc.disable()
    try:
        _run(
            task,
            root_edges,
            root_grads,
            retain_graph,
            input_edges,
            on_input,
            create_graph,
            root_strides,
        )
    finally:
        stack.pop()
        if paused:
            gc.enable()


# Note [Collector during backward]: leafgrad's graph is Python objects (nodes, their edge and
# saved tuples), so a deep graph fills the cycle collector's oldest generation, and every full
# collection walks all of it: on a 100,000-op chain the collections the engine's own allocations
# trigger were about half of backward's time. Backward makes no reference cycles of its own and
# frees the graph by reference counting, so the engine pauses the automatic collector while it
# runs (as ``timeit`` does) and restores it after; a backward inside a hook finds it paused and
# leaves it so. Cycles user hooks make are collected at the next collection after backward.


def _run(
    task, root_edges, root_grads, retain_graph, input_edges, on_input, create_graph, root_strides
) -> None:
    values = _Values(create_graph)
    if root_strides is not None:
        for g, strides in zip(root_grads, root_strides):
            if strides is not None:
                values.mark(g, strides)
    roots = [node for node, _ in root_edges]
    deps, order = _collect(roots)
    task.order = order
    if (
        input_edges is None
        and not create_graph
        and not anomaly_mode._state.enabled
        and fused.try_fused(root_edges, root_grads, deps, order, retain_graph)
    ):
        return  # Note [Fused backward]

    targets = None
    captures: dict[tuple[Node, int], list[int]] = {}
    if input_edges is not None:
        for i, edge in enumerate(input_edges):
            captures.setdefault(edge, []).append(i)
        targets = {node for node, _ in input_edges}
        needed = task.needed = _needed(order, deps, targets)
        deps = {}
        for node in order:
            if node in needed:
                for nxt, _ in node._next_functions:
                    if nxt is not None and nxt in needed:
                        deps[nxt] = deps.get(nxt, 0) + 1
    else:
        needed = None

    buffers: dict[Node, list] = {}
    for (node, nr), grad in zip(root_edges, root_grads):
        if node is None:
            continue
        buf = buffers.setdefault(node, [None] * node._num_outputs())
        buf[nr] = _add(buf[nr], grad)

    tie = itertools.count()
    ready: list = []
    for node in buffers:
        if deps.get(node, 0) == 0 and (needed is None or node in needed):
            heapq.heappush(ready, (-node._seq_nr, next(tie), node))

    pop, push = heapq.heappop, heapq.heappush
    plain_ok = not captures and not create_graph and not anomaly_mode._state.enabled
    while ready:
        node = pop(ready)[2]
        grads = buffers.pop(node)
        if plain_ok and _plain(node):
            # Note [Plain nodes]: the steps below without their (empty) hooks
            if grads[0] is not None or any(g is not None for g in grads):
                outputs = node._apply(grads)
                if node._expands or values._strides:
                    values.carry(node, grads, outputs)
                if values._versions or values._strides:
                    values.keep_versions(node, grads, outputs)
                if node._fresh and node._route is not None:
                    values.fresh(outputs)
                if node._slices and grads[0] is not None:
                    values.siblings(grads[0], outputs)
                if node._views:
                    values.views(node, grads, outputs)
                if node._lays_out:
                    values.lay_out(node, outputs)
                if node._out_version is not None:
                    values.out_versions(node, grads, outputs)
                if _LAYOUTS_KEPT:
                    values.grad_layout(node, grads, outputs)
                if _REAL_VIEWS_KEPT:
                    values.real_views(node, grads, outputs)
                if values.any_zero or node._zeros is _ZERO_SOURCE:
                    values.zero_flow(node, grads, outputs)
            else:
                outputs = [None] * len(node._next_functions)
            if not retain_graph:
                node._release()
        else:
            outputs = _run_node(node, grads, values, captures, needed, targets, on_input)
            if outputs is None:
                continue
            if not retain_graph:
                node._release()
        # the node's inputs are gone once it ran, and each output is handed on alone, as
        # PyTorch moves them: what holds a gradient decides Note [In-place sums]
        grads = g = None
        outputs = list(outputs)
        for k, (nxt, nr) in enumerate(node._next_functions):
            if nxt is None or (needed is not None and nxt not in needed):
                continue
            g = outputs[k]
            outputs[k] = None
            buf = buffers.get(nxt)
            if buf is None:
                buf = buffers[nxt] = [None] * nxt._num_outputs()
                buf[nr] = g
            elif buf[nr] is None:
                buf[nr] = g
            else:
                _sum(values, buf, nr, g)
            g = buf = None  # (a buffer popped later must not stay alive through ``buf``)
            left = deps[nxt] - 1
            deps[nxt] = left
            if left == 0:
                push(ready, (-nxt._seq_nr, next(tie), nxt))


def _sibling_strides(shape, strides, view_shape, n: int):
    """The strides of a slice (``narrow``: the gradient's) or of one of ``n`` unbound views
    (the gradient's without the unbound dim) of a gradient laid out as ``strides``; None where
    the dim is ambiguous."""
    shape, view_shape = tuple(shape), tuple(view_shape)
    if len(view_shape) == len(shape):
        return tuple(strides)
    found = {
        tuple(strides[:d]) + tuple(strides[d + 1 :])
        for d in range(len(shape))
        if shape[d] == n and shape[:d] + shape[d + 1 :] == view_shape
    }
    return found.pop() if len(found) == 1 else None


def _saved_dim(d: int, n: int) -> int:
    """A dim a node saved as PyTorch shows it (a negative one as an unsigned 64-bit number),
    wrapped to ``n`` dims."""
    return (d - (1 << 64) if d >= 1 << 63 else d) % max(n, 1)


def _permuted_back(node: Node, name: str, strides: tuple):
    """The strides of the gradient a permuting node gives from one laid out as ``strides``."""
    n = len(strides)
    if name == "TBackward0":
        return tuple(reversed(strides))
    if name == "TransposeBackward0":
        d0, d1 = _saved_dim(node._saved_dim0, n), _saved_dim(node._saved_dim1, n)
        out = list(strides)
        out[d0], out[d1] = out[d1], out[d0]
        return tuple(out)
    dims = [_saved_dim(d, n) for d in node._saved_dims]
    out = [0] * n
    for i, d in enumerate(dims):
        out[d] = strides[i]
    return tuple(out)


def _obeys_layout(shape, strides, variable) -> bool:
    """PyTorch's ``obeys_layout_contract`` of a gradient laid out as ``strides`` for
    ``variable``: the variable's strides where a dim is not of size 1 (a size-1 dim of stride 0
    is a view of something else), or contiguous for a variable that is not dense."""
    from ..ops.iterator_layout import is_contiguous, non_overlapping_and_dense
    from ..ops.shape import _strides

    shape, vstrides = tuple(shape), tuple(_strides(variable))
    if tuple(variable.shape) != shape:
        return False
    if not non_overlapping_and_dense(shape, vstrides):
        return is_contiguous(shape, strides)
    return all((s == v) if n != 1 else s != 0 for n, s, v in zip(shape, strides, vstrides))


def _sum(values: _Values, buf: list, nr: int, g) -> None:
    """Add gradient ``g`` into slot ``nr`` of a buffer (Note [In-place sums]); returns None."""
    if g is None:
        return None
    old = buf[nr]
    kept, other = values.strides(old), values.strides(g)
    in_place = not values.graph and _refs(old) <= _SOLE_IN_BUFFER
    if kept is not None or other is not None:
        from ..ops.iterator_layout import (  # the ops import the engine
            contiguous_strides,
            iterator_strides,
            non_overlapping_and_dense,
        )

        shape = tuple(old.shape)
        if in_place and kept is not None:  # PyTorch's can_accumulate_inplace
            in_place = not values.shared(old) and non_overlapping_and_dense(shape, kept)
    if in_place and values._views:
        in_place = not values.shares(old)
    zero = values.any_zero and values.is_zero(old) and values.is_zero(g)
    buf[nr] = total = old + g
    if zero:  # Note [Zero gradients] in _zero.py
        buf[nr] = total = values.made_zero(total)
    if in_place:
        values.set_version(total, values.version(old) + 1)
        values.mark(total, kept, False)  # ``old.add_(g)``
    elif (kept is not None or other is not None) and tuple(g.shape) == shape:
        # ``old + g``: laid out by TensorIterator
        operands = [(shape, s or contiguous_strides(shape)) for s in (kept, other)]
        values.mark(total, iterator_strides(shape, operands), False)
    return None


def _plain(node: Node) -> bool:
    """Note [Plain nodes]: a recorded op's node with no hooks and no ``retain_grad`` runs its
    backward alone (the common case, worth skipping the general steps for)."""
    return (
        isinstance(node, OpNode)
        and node._tensor_pre_hooks is None
        and node._retained is None
        and node._pre_hooks is None
        and node._post_hooks is None
    )


def _run_node(node, grads, values, captures, needed, targets, on_input):
    """One node's step: captures, hooks, backward; None when the node does not run."""
    held = grads
    with anomaly_mode.evaluating(node) if anomaly_mode._state.enabled else _NO_ANOMALY:
        if captures:
            # A capture target that leads to no other target does not run (AccumulateGrad
            # never does: ``on_input`` accumulates); captured gradients are taken after its
            # tensor hooks, and before them for a node that runs, as in PyTorch.
            runs = node in needed and not _only_target(node, needed, targets)
            if not runs:
                grads = _tensor_pre_hooks(node, grads, values)
            for nr, g in enumerate(grads):
                for i in captures.get((node, nr), ()):
                    if g is None:
                        on_input(i, None, None, 0, False)
                    else:
                        zero = values.any_zero and values.is_zero(g)
                        on_input(i, g, values.strides(g), values.version(g), zero)
            if not runs:
                return None
        grads = _tensor_pre_hooks(node, grads, values)
        if needed is None:
            return _call_node(node, grads, values, held)
        # Note [Needed edges] in graph.py
        mask = tuple(nxt is not None and nxt in needed for nxt, _ in node._next_functions)
        previous = set_edge_mask(mask)
        try:
            return _call_node(node, grads, values, held)
        finally:
            set_edge_mask(previous)


def _only_target(node: Node, needed: set, targets: set) -> bool:
    """A target whose children lead to no other target need not run its backward."""
    return node in targets and not any(
        nxt in needed for nxt, _ in node._next_functions if nxt is not None
    )


def _store_retained(node: Node, grads: list, values: _Values) -> None:
    for nr, ref in node._retained.items():
        tensor = ref()
        grad = grads[nr]
        if tensor is not None and grad is not None:
            tensor._retain_grad_update(grad, values.graph, values.inference)


def _complex(a) -> bool:
    return jnp.iscomplexobj(a)
