"""``leafgrad.autograd``: backward, grad modes and the graph's node types."""

from __future__ import annotations

from .. import _errors as E
from .engine import run_backward
from .grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from .graph import AccumulateGrad, Node

__all__ = [
    "backward",
    "no_grad",
    "enable_grad",
    "set_grad_enabled",
    "inference_mode",
    "is_grad_enabled",
    "is_inference_mode_enabled",
    "Node",
    "AccumulateGrad",
]


def _as_tuple(x):
    if x is None:
        return None
    from .._tensor import Tensor

    if isinstance(x, Tensor):
        return (x,)
    return tuple(x)


def _make_grads(outputs, grads) -> list:
    """PyTorch's ``_make_grads``: check given gradients, make ones for scalar outputs."""
    import jax.numpy as jnp

    from .._tensor import Tensor

    result = []
    for i, (out, grad) in enumerate(zip(outputs, grads)):
        if isinstance(grad, Tensor):
            if grad.shape != out.shape:
                raise RuntimeError(E.GRAD_SHAPE_MISMATCH.format(i, grad.shape, i, out.shape))
            if out.dtype.is_complex != grad.dtype.is_complex:
                raise RuntimeError(E.GRAD_COMPLEX_MISMATCH.format(i, grad.dtype, i, out.dtype))
            data = grad._data
            result.append(data if data.dtype == out._data.dtype else data.astype(out._data.dtype))
        elif grad is None:
            if out.requires_grad:
                if out.numel() != 1:
                    raise RuntimeError(E.IMPLICIT_GRAD)
                if not out.dtype.is_floating_point:
                    raise RuntimeError(E.IMPLICIT_GRAD_REAL.format(out.dtype))
                result.append(jnp.ones(out._data.shape, out._data.dtype))
            else:
                result.append(None)
        else:
            raise TypeError(
                "gradients can be either Tensors or None, but got " + type(grad).__name__
            )
    return result


def backward(
    tensors,
    grad_tensors=None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    grad_variables=None,
    inputs=None,
) -> None:
    """Accumulate into ``.grad`` of the leaves the gradient of ``tensors`` (PyTorch's rules).

    Example::

        >>> x = leafgrad.tensor([1., 2.], requires_grad=True)
        >>> leafgrad.autograd.backward((x * x).sum())
        >>> x.grad
        tensor([2., 4.])
    """
    if create_graph:
        raise NotImplementedError(E.CREATE_GRAPH_TODO)
    if grad_variables is not None:
        grad_tensors = grad_variables
    outputs = _as_tuple(tensors)
    inputs = _as_tuple(inputs)
    if inputs is not None and len(inputs) == 0:
        raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
    grads = _as_tuple(grad_tensors) if grad_tensors is not None else (None,) * len(outputs)
    if retain_graph is None:
        retain_graph = create_graph
    root_grads = _make_grads(outputs, grads)  # zips, as PyTorch: the count is checked after
    if len(grads) != len(outputs):
        raise RuntimeError(f"got {len(outputs)} tensors and {len(grads)} gradients")
    root_edges = []
    for i, out in enumerate(outputs):
        if not out.requires_grad:
            raise RuntimeError(E.NO_GRAD_FN.format(i))
        root_edges.append(_gradient_edge(out))
    input_edges = None
    on_input = None
    if inputs is not None:
        inputs = tuple({id(t): t for t in inputs}.values())  # each input receives its grad once
        input_edges = []
        for t in inputs:
            if not t.requires_grad:
                raise RuntimeError(E.RETAIN_GRAD_NO_GRAD)
            input_edges.append(_gradient_edge(t))

        def on_input(index, grad):
            t = inputs[index]
            if grad is None:
                return
            if t.grad_fn is None:
                t._accumulate_grad(grad)
            else:
                t._retain_grad_update(grad)

    for i, (out, grad) in enumerate(zip(outputs, grads)):
        if grad is not None and grad.device != out.device:
            raise RuntimeError(
                f"invalid gradient at index {i} - expected device {out.device} but got "
                f"{grad.device}"
            )
    run_backward(root_edges, root_grads, bool(retain_graph), input_edges, on_input)


def _gradient_edge(t):
    grad_fn = t.grad_fn
    if grad_fn is not None:
        return (grad_fn, t._output_nr)
    return (t._grad_accumulator(), 0)
