"""How op modules publish their frontends as Tensor methods and ``leafgrad`` functions.

An op module states its table entries (``OpDef``) and, for each user-facing name, one small
frontend that parses PyTorch's arguments and calls ``dispatch``. ``@tensor_op("name")`` installs
the frontend as ``Tensor.name`` and as ``leafgrad.name``, so no op touches the Tensor class file.
"""

from __future__ import annotations

from collections.abc import Callable

from .. import _errors as E
from .._tensor import Tensor
from ..autograd.graph import edge_needed, wrap_backward
from .table import OPS, OpDef

__all__ = [
    "FUNCTIONS",
    "tensor_op",
    "register_ops",
    "refuse_backward",
    "stale_views_first",
    "keywords_at",
]

# Functions of the ``leafgrad`` namespace, filled by op modules; ``leafgrad/__init__`` exports them.
FUNCTIONS: dict[str, Callable] = {}


def tensor_op(*names: str, method: bool = True, function: bool = True):
    """Install the decorated frontend as ``Tensor.<name>`` and/or ``leafgrad.<name>``."""

    def install(fn: Callable) -> Callable:
        for name in names:
            if method:
                setattr(Tensor, name, fn)
            if function:
                FUNCTIONS[name] = fn
        return fn

    return install


def keywords_at(slot: int, *names: str):
    """A frontend that also takes its argument at position ``slot`` (``self``/``input`` is 0) by
    one of PyTorch's keyword ``names`` for it: an overload's own name (``tensor_split(x,
    sections=2)``), a spread list's (``x.expand(size=(2, 3))``) or a Python keyword
    (``x.uniform_(**{"from": 0})``)."""
    import functools

    def wrap(fn: Callable) -> Callable:
        @functools.wraps(fn)
        def call(*args, **kwargs):
            if len(args) == slot:
                for name in names:
                    if name in kwargs:
                        args = (*args, kwargs.pop(name))
                        break
            return fn(*args, **kwargs)

        return call

    return wrap


def stale_views_first(name: str):
    """A frontend PyTorch runs through its autograd layer but leafgrad's parser tables do not
    wrap: on its error path a stale view among the arguments raises first (Note [Stale views
    before the kernel's checks] in _arg_check.py)."""
    import functools

    def wrap(fn: Callable) -> Callable:
        @functools.wraps(fn)
        @E.wrapper
        def checked(*args, **kwargs):
            try:
                return fn(*args, **kwargs)
            except (RuntimeError, IndexError) as err:
                from .._arg_check import _stale_view_first

                _stale_view_first(name, err, args, kwargs)
                raise

        return checked

    return wrap


def register_ops(*ops: OpDef) -> None:
    """Add entries to the op table (names must be new)."""
    for op in ops:
        if op.name in OPS:
            raise ValueError(f"op {op.name!r} is already in the table")
        OPS[op.name] = op


def underivable(function: str):
    """The identity whose derivative raises PyTorch's NotImplementedError for ``function``, a
    backward kernel without a formula: wrapped around the primals inside an op's custom JVP
    rule, it lets the first backward run and refuses the double backward (create_graph)."""
    import jax

    @jax.custom_jvp
    def identity(x):
        return x

    @identity.defjvp
    def _jvp(primals, tangents):
        raise NotImplementedError(f"the derivative for '{function}' is not implemented.")

    return identity


def refuse_complex_autograd(out, name: str):
    """PyTorch's ``throw_error_for_complex_autograd``: a recorded op whose derivative PyTorch
    has not written for complex numbers raises when its result is complex (after computing
    it, so the forward's own errors come first)."""
    for o in out if isinstance(out, tuple) else (out,):
        if isinstance(o, Tensor) and o._grad_fn is not None and o._dtype.is_complex:
            raise RuntimeError(
                f"{name} does not support automatic differentiation for outputs with complex dtype."
            )
    return out


def refuse_backward(out: Tensor, error, edge: int | None = None) -> Tensor:
    """Make ``out``'s node raise ``error()`` when its backward runs, where PyTorch's formula is
    ``not_implemented``; with ``edge``, only when that edge's gradient is needed (Note [Needed
    edges] in autograd/graph.py), as PyTorch computes only the needed ones."""
    node = out._grad_fn
    if node is None:
        return out
    inner = node._backward

    def backward(primals, cts):
        if edge is not None and not edge_needed(edge):
            return inner(primals, cts)
        raise error()

    wrap_backward(node, backward)
    return out
