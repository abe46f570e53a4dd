"""The recorded graph: ``Node`` (a tensor's ``grad_fn``) and ``AccumulateGrad`` (a leaf's sink).

Note [Node class names]: PyTorch users read ``type(t.grad_fn).__name__`` and ``grad_fn.name()``,
so every node's class is named as PyTorch names it (``MulBackward0``). One subclass per name is
made on first use; they differ only in name.
"""

from __future__ import annotations

import itertools
import weakref

__all__ = ["Node", "AccumulateGrad", "node_class"]

_sequence = itertools.count()  # next() on a count is atomic under the GIL
# AccumulateGrad runs as soon as it is ready, as in PyTorch (its sequence number is UINT64_MAX).
ACCUMULATE_SEQUENCE_NR = 2**64 - 1


def _next_sequence_nr() -> int:
    return next(_sequence)


class Node:
    """A backward function: takes the gradients of its outputs, gives those of its inputs."""

    __slots__ = (
        "_next_functions",
        "_sequence_nr",
        "_metadata",
        "_retained",
        "_pre_hooks",
        "_post_hooks",
        "__weakref__",
    )

    def __init__(self, next_functions: tuple = ()) -> None:
        self._next_functions = next_functions
        self._sequence_nr = _next_sequence_nr()
        self._metadata = None
        self._retained = None  # {output_nr: weakref to a tensor that called retain_grad()}
        self._pre_hooks = None
        self._post_hooks = None

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
        return self._sequence_nr

    def _num_outputs(self) -> int:
        return 1

    def _apply(self, grads: list) -> list:
        """Gradients for ``next_functions`` from the gradients of this node's outputs."""
        raise NotImplementedError

    def _release(self) -> None:
        """Free what was saved for backward (PyTorch's ``release_variables``)."""

    def _retain(self, output_nr: int, tensor) -> None:
        if self._retained is None:
            self._retained = {}
        self._retained[output_nr] = weakref.ref(tensor)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} object at {hex(id(self))}>"


class OpNode(Node):
    """The node of one recorded op; its backward is the op's VJP, recomputed from saved primals.

    ``_backward(primals, cotangents)`` is a cached ``jax.jit`` made by dispatch; ``_primals`` holds
    what it needs (arrays and Python scalars). ``_has_saved`` says whether PyTorch's node for this
    op saved tensors for backward: only then does a second backward without ``retain_graph`` fail.
    """

    __slots__ = (
        "_backward",
        "_primals",
        "_has_saved",
        "_released",
        "_n_out",
        "_saved_checks",
        "_ct_dtype",
    )

    def _num_outputs(self) -> int:
        return self._n_out

    def _apply(self, grads: list) -> list:
        if self._released:
            from .. import _errors as E

            raise RuntimeError(E.BACKWARD_TWICE)
        if self._saved_checks is not None:
            for check in self._saved_checks:
                check()
        if self._ct_dtype is not None:  # an in-place op cast its result to the tensor's dtype
            grads = [g if g is None else g.astype(self._ct_dtype) for g in grads]
        return list(self._backward(self._primals, tuple(grads)))

    def _release(self) -> None:
        if self._has_saved:
            self._released = True
            self._primals = None


_node_classes: dict[str, type] = {}


# Nodes PyTorch writes by hand: ``name()`` is qualified, the class name is not.
_QUALIFIED = {"CopyBackwards": "torch::autograd::CopyBackwards"}


def node_class(name: str) -> type:
    """The ``OpNode`` subclass called ``name`` (made once)."""
    cls = _node_classes.get(name)
    if cls is None:
        body = {"__slots__": (), "__module__": "builtins"}
        if name in _QUALIFIED:
            qualified = _QUALIFIED[name]
            body["name"] = lambda self: qualified
        cls = type(name, (OpNode,), body)
        _node_classes[name] = cls
    return cls


def make_op_node(name, next_functions, backward, primals, has_saved, n_out=1, checks=None):
    """A new recorded node called ``name``."""
    node = node_class(name)(next_functions)
    node._backward = backward
    node._primals = primals
    node._has_saved = has_saved
    node._released = False
    node._n_out = n_out
    node._saved_checks = checks
    node._ct_dtype = None
    return node


class AccumulateGrad(Node):
    """The sink of a leaf that requires grad: adds incoming gradients into ``variable.grad``."""

    __slots__ = ("variable",)

    def __init__(self, variable) -> None:
        super().__init__(())
        self._sequence_nr = ACCUMULATE_SEQUENCE_NR
        self.variable = variable

    def name(self) -> str:
        return "torch::autograd::AccumulateGrad"

    def _apply(self, grads: list) -> list:
        (grad,) = grads
        if grad is not None:
            self.variable._accumulate_grad(grad)
        return []


AccumulateGrad.__module__ = "builtins"
