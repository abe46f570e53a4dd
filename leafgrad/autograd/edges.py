"""``torch.autograd.graph``'s edge and hook helpers: ``GradientEdge``, ``get_gradient_edge``,
``increment_version`` and ``register_multi_grad_hook`` (which waits, per backward, for the
gradients the engine will compute: Note [Graph tasks] in engine.py)."""

from __future__ import annotations

import threading
import weakref
from collections import defaultdict
from typing import Any, NamedTuple

GRADIENT_EDGE_NO_GRAD = (
    "It is not possible to get the gradient edge for a Tensor that does not require gradients"
)
CALLED_OUTSIDE = "expected this hook to be called inside a backward call"


class GradientEdge(NamedTuple):
    """An edge of the graph: the node a gradient flows into and which of its outputs it is
    the gradient of. ``autograd.grad`` accepts one as an input."""

    node: Any
    output_nr: int
    ownership_token: Any = None


def get_gradient_edge(tensor) -> GradientEdge:
    """The edge ``tensor``'s gradient flows along: its ``grad_fn`` (or, for a leaf, its
    AccumulateGrad) and output number."""
    if not tensor.requires_grad:
        raise RuntimeError(GRADIENT_EDGE_NO_GRAD)
    from ..ops.dispatch import _edge

    node, nr = _edge(tensor)
    _remember(node, nr, tensor)
    return GradientEdge(node, nr)


# Note [Edge metadata]: PyTorch's nodes keep the shape, dtype and device of each of their outputs
# (``_input_metadata``), which an edge given as an output of ``backward``/``grad`` is checked
# against and given ones from. leafgrad's nodes keep none (dispatch makes one per op, and its
# backward knows its shapes from what it saved), so ``get_gradient_edge`` remembers them here,
# for as long as the node lives; an AccumulateGrad's are its leaf's.
_METADATA: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_METADATA_LOCK = threading.Lock()


def _remember(node, nr: int, tensor) -> None:
    if node is None or type(node).__name__ == "AccumulateGrad":
        return
    with _METADATA_LOCK:
        _METADATA.setdefault(node, {})[nr] = (tuple(tensor.shape), tensor._dtype, tensor._device)


def edge_metadata(edge: GradientEdge):
    """``(shape, dtype, device)`` of the output ``edge`` is the gradient of (Note [Edge
    metadata]); an edge leafgrad cannot know it for raises rather than guess."""
    node = edge.node
    if node is None:
        raise AttributeError("'NoneType' object has no attribute '_input_metadata'")
    if type(node).__name__ == "AccumulateGrad":
        v = node.variable
        return tuple(v.shape), node._meta_dtype, v._device
    with _METADATA_LOCK:
        meta = _METADATA.get(node, {}).get(edge.output_nr)
    if meta is None:
        raise NotImplementedError(
            "leafgrad: a GradientEdge as an output of backward() or grad() must come from "
            "torch.autograd.graph.get_gradient_edge (leafgrad knows the shape of a node's "
            "output only from there)"
        )
    return meta


def increment_version(tensor) -> None:
    """Bump the version counter of ``tensor`` (or of each tensor of an iterable), as an in-place
    write would."""
    from .._tensor import Tensor

    tensors = (tensor,) if isinstance(tensor, Tensor) else tensor
    for t in tensors:
        t._version_counter.value += 1


class _MultiHandle:
    """The handle of ``register_multi_grad_hook``: ``remove()`` removes every hook it made."""

    __slots__ = ("handles",)

    def __init__(self, handles) -> None:
        self.handles = handles

    def remove(self) -> None:
        for handle in self.handles:
            handle.remove()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.remove()


def _grad_fn_or_accumulator(t):
    if t.grad_fn is not None:
        return t.grad_fn
    return t._grad_accumulator() if t.requires_grad else None


def register_multi_grad_hook(tensors, fn, *, mode: str = "all"):
    """Call ``fn`` once per backward: in mode ``"all"`` with the gradients of ``tensors`` (None
    for those this backward does not compute) after the last of them is computed; in mode
    ``"any"`` with the first gradient of one of them."""
    from .engine import current_graph_task_id, will_engine_execute_node

    supported = ("all", "any")
    if mode not in supported:
        raise ValueError(f"Expects mode to be one of {supported} but got {mode}")
    lock = threading.Lock()
    tensors = tuple(tensors)
    if mode == "all":
        count: dict = {}
        buffer: dict = {}
        expected: dict = {}
        grad_fns = [_grad_fn_or_accumulator(t) for t in tensors]

        def inner(index: int):
            def hook(grad) -> None:
                task = current_graph_task_id()
                if task == -1:
                    raise AssertionError(CALLED_OUTSIDE)
                with lock:
                    seen = count.get(task, 0)
                    count[task] = seen + 1
                    if seen == 0:
                        expected[task] = sum(map(will_engine_execute_node, grad_fns))
                        buffer[task] = [None] * len(tensors)
                buffer[task][index] = grad
                if seen == expected[task] - 1:
                    grads = buffer.pop(task)
                    del count[task], expected[task]
                    fn(grads)

            return hook

        handles = tuple(t.register_hook(inner(i)) for i, t in enumerate(tensors))
    else:
        ran: dict = defaultdict(bool)

        def wrapped(grad) -> None:
            task = current_graph_task_id()
            if task == -1:
                raise AssertionError(CALLED_OUTSIDE)
            with lock:
                before, ran[task] = ran[task], True
            if not before:
                fn(grad)

        handles = tuple(t.register_hook(wrapped) for t in tensors if t.requires_grad)
    return _MultiHandle(handles)
