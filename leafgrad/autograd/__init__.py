"""``leafgrad.autograd``: backward, grad modes and the graph's node types."""

from __future__ import annotations

import operator
import warnings
from collections.abc import Mapping

from .. import _errors as E
from .. import _zero
from . import anomaly_mode, forward_ad, grad_mode
from .anomaly_mode import detect_anomaly, set_detect_anomaly
from .engine import run_backward
from .explain import explain
from .grad_mode import (
    enable_grad,
    enforce_grad_layout_policy,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    is_multithreading_enabled,
    no_grad,
    set_grad_enabled,
    set_multithreading_enabled,
)
from .graph import AccumulateGrad, GradientEdge, Node, SavedTensor

__all__ = [
    "backward",
    "grad",
    "detect_anomaly",
    "set_detect_anomaly",
    "gradcheck",
    "gradgradcheck",
    "GradcheckError",
    "anomaly_mode",
    "forward_ad",
    "no_grad",
    "enable_grad",
    "set_grad_enabled",
    "inference_mode",
    "is_grad_enabled",
    "is_inference_mode_enabled",
    "is_multithreading_enabled",
    "set_multithreading_enabled",
    "enforce_grad_layout_policy",
    "is_view_replay_enabled",
    "Node",
    "AccumulateGrad",
    "SavedTensor",
    "explain",
    "Variable",
]


def _as_tuple(x):
    if x is None:
        return None
    from .._tensor import Tensor

    if isinstance(x, (Tensor, GradientEdge)):
        return (x,)
    return tuple(x)


def is_view_replay_enabled() -> bool:
    """PyTorch's view-replay flag: off, as leafgrad regenerates a written view's ``grad_fn`` as
    an ``AsStridedBackward0`` (Note [View metadata])."""
    return False


def _inputs_tuple(inputs, where: str):
    """``inputs`` of ``grad()``/``backward()`` as a tuple (a dict's values; other mappings are
    refused, as PyTorch refuses them), or None."""
    if inputs is None:
        return None
    if type(inputs) is dict:
        return tuple(inputs.values())
    if isinstance(inputs, Mapping):
        raise TypeError(
            f"`inputs` argument to `{where}()` must be a dict, not {type(inputs).__name__}. "
            "Other Mapping types are not supported."
        )
    return _as_tuple(inputs)


def _check_inputs(inputs) -> None:
    """The engine's check of the inputs' types (after the outputs' gradients are made)."""
    from .._tensor import Tensor

    for t in inputs:
        if not isinstance(t, (Tensor, GradientEdge)):
            raise RuntimeError(
                "all inputs have to be Tensors or GradientEdges, but got " + type(t).__name__
            )


_ONES: list = []  # a jitted ``ones_like``, made at first use


def _ones_like(array):
    """Ones shaped like ``array``: for an array on one device a cached jitted call on it (an
    eager ``jnp.ones`` costs a whole primitive dispatch, about 150 us here, on every
    ``backward()``); a traced or sharded one (leafgrad.distributed) gets ``jnp.ones``."""
    import jax
    import jax.numpy as jnp

    if isinstance(array, jax.core.Tracer) or len(array.sharding.device_set) != 1:
        return jnp.ones(array.shape, array.dtype)
    if not _ONES:
        _ONES.append(jax.jit(jnp.ones_like))
    return _ONES[0](array)


def _out_info(out):
    """``(shape, dtype, device, requires_grad)`` of an output: a Tensor's, or those a GradientEdge's
    node keeps for it (Note [Edge metadata] in edges.py)."""
    from .._tensor import Tensor

    if isinstance(out, GradientEdge):
        from .edges import edge_metadata

        shape, dtype, device = edge_metadata(out)
        return shape, dtype, device, True
    if not isinstance(out, Tensor):
        raise AssertionError("Expected output to be a torch.Tensor")
    return tuple(out.shape), out._dtype, out._device, out.requires_grad


def _make_grads(outputs, grads) -> list:
    """PyTorch's ``_make_grads``: check given gradients, make ones for scalar outputs."""
    from .._tensor import Tensor

    result = []
    for i, (out, grad) in enumerate(zip(outputs, grads)):
        shape, dtype, device, requires_grad = _out_info(out)
        if device is not None and device.type == "meta":  # Note [Meta tensors]
            raise NotImplementedError("leafgrad: backward through meta tensors is not supported")
        if isinstance(grad, Tensor):
            if tuple(grad.shape) != shape:
                raise RuntimeError(E.GRAD_SHAPE_MISMATCH.format(i, grad.shape, i, _size(shape)))
            if dtype.is_complex != grad.dtype.is_complex:
                raise RuntimeError(E.GRAD_COMPLEX_MISMATCH.format(i, grad.dtype, i, dtype))
            if (
                isinstance(out, Tensor)
                and out._requires_grad
                and not (dtype.is_floating_point or dtype.is_complex)
            ):
                # an integer output that requires grad (Note [Integer results that require
                # grad] in ops/dispatch.py): PyTorch's engine asserts on the gradient it casts
                raise RuntimeError(E.ENGINE_GRAD_DTYPE)
            data = grad._data
            want = out._data.dtype if isinstance(out, Tensor) else dtype.np
            result.append(data if data.dtype == want else data.astype(want))
        elif grad is None:
            if requires_grad:
                if any(n != 1 for n in shape):
                    raise RuntimeError(E.IMPLICIT_GRAD)
                if not dtype.is_floating_point:
                    raise RuntimeError(E.IMPLICIT_GRAD_REAL.format(dtype))
                if isinstance(out, Tensor):
                    result.append(_ones_like(out._data))
                else:
                    result.append(_edge_ones(shape, dtype, device))
            else:
                result.append(None)
        else:
            raise TypeError(
                "gradients can be either Tensors or None, but got " + type(grad).__name__
            )
    return result


def _size(shape):
    from .._tensor import Size

    return Size(shape)


def _edge_ones(shape, dtype, device):
    """The implicit gradient of a one-element GradientEdge: ones on its node's device."""
    from .._factories import ones

    return ones(shape, dtype=dtype, device=device)._data


def _root_grads(outputs, grads, create_graph: bool) -> list:
    """The root gradients: arrays, or Tensors (keeping their graph) under ``create_graph``."""
    arrays = _make_grads(outputs, grads)
    if not create_graph:
        return arrays
    from .._tensor import Tensor

    result = []
    for out, grad, arr in zip(outputs, grads, arrays):
        _, dtype, device, _ = _out_info(out)
        if isinstance(grad, Tensor):
            result.append(grad if grad._dtype is dtype else grad.to(dtype))
        elif arr is None:
            result.append(None)
        else:
            result.append(Tensor._make(arr, dtype, device))
    return result


def _root_strides(grads, root_grads) -> list:
    """The strides of the given root gradients that reach the engine unchanged and are not
    contiguous (Note [Expanded gradients] in graph.py)."""
    from .._tensor import Tensor

    return [
        g.__dict__.get("_strides") if isinstance(g, Tensor) and g._data is arr else None
        for g, arr in zip(grads, root_grads)
    ]


def _check_count(outputs, root_grads) -> None:
    """The engine's count check. It sees the gradients ``_make_grads`` made, which zips them with
    the outputs as PyTorch's does: extra gradients are dropped, too few are an error."""
    if len(root_grads) != len(outputs):
        raise RuntimeError(f"got {len(outputs)} tensors and {len(root_grads)} gradients")


def _check_grad_devices(outputs, grads) -> None:
    for i, (out, grad) in enumerate(zip(outputs, grads)):
        device = _out_info(out)[2]
        if grad is not None and grad.device != device:
            raise RuntimeError(
                f"invalid gradient at index {i} - expected device {device} but got {grad.device}"
            )


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
    if grad_variables is not None:
        warnings.warn(
            "`grad_variables` is deprecated. Use `grad_tensors` instead.",
            FutureWarning,
            stacklevel=2,
        )
        if grad_tensors is not None:
            raise RuntimeError(
                "`grad_tensors` and `grad_variables` (deprecated) arguments both passed to "
                "`backward()`. Please only use `grad_tensors`."
            )
        grad_tensors = grad_variables
    inputs = _inputs_tuple(inputs, "backward")
    outputs = _as_tuple(tensors)
    if inputs is not None and len(inputs) == 0:
        raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
    grads = _as_tuple(grad_tensors) if grad_tensors is not None else (None,) * len(outputs)
    if retain_graph is None:
        retain_graph = create_graph
    root_grads = _root_grads(outputs, grads, create_graph)
    from ..func import refuse_backward_inside

    refuse_backward_inside()  # before the engine looks at the roots, as PyTorch's
    _engine_flags(retain_graph, create_graph)
    if inputs is not None:
        _check_inputs(inputs)
    _check_count(outputs, root_grads)
    root_edges = _root_edges(outputs)
    input_edges = None
    on_input = None
    if inputs is not None:
        inputs = tuple({id(t): t for t in inputs}.values())  # each input receives its grad once
        input_edges = []
        for t in inputs:
            if isinstance(t, GradientEdge):  # its gradient is computed, and goes nowhere
                input_edges.append((t.node, t.output_nr))
                continue
            if not t.requires_grad:
                raise RuntimeError(E.RETAIN_GRAD_NO_GRAD)
            if t.grad_fn is not None:  # as PyTorch: a non-leaf input retains its grad
                t.retain_grad()
            input_edges.append(_gradient_edge(t))

        def on_input(index, grad, strides, version, zero):
            t = inputs[index]
            if grad is None or isinstance(t, GradientEdge) or t.grad_fn is not None:
                return
            if create_graph:
                t._accumulate_grad_graph(grad)
            else:
                t._accumulate_grad(grad, version, zero=zero)

    _check_grad_devices(outputs, grads)
    strides = None if create_graph else _root_strides(grads, root_grads)
    try:
        with grad_mode.set_grad_enabled(bool(create_graph)):
            run_backward(
                root_edges,
                root_grads,
                bool(retain_graph),
                input_edges,
                on_input,
                create_graph,
                strides,
            )
    finally:
        if create_graph:
            # PyTorch's engine warns (TORCH_WARN_ONCE) as it runs the graph, and its Python
            # binding issues the warnings it collected when the run returns or raises: after
            # those that hooks issued while it ran
            E.warn_once(E.BACKWARD_CREATE_GRAPH)


def grad(
    outputs,
    inputs,
    grad_outputs=None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    only_inputs: bool = True,
    allow_unused: bool | None = None,
    is_grads_batched: bool = False,
    materialize_grads: bool = False,
):
    """The gradients of ``outputs`` with respect to ``inputs``, without touching ``.grad``.

    Example::

        >>> x = leafgrad.tensor([1., 2.], requires_grad=True)
        >>> leafgrad.autograd.grad((x ** 3).sum(), x)
        (tensor([ 3., 12.]),)
    """
    if materialize_grads and allow_unused is False:
        raise ValueError(
            "Expected allow_unused to be True or not passed when materialize_grads=True, but "
            "got: allow_unused=False."
        )
    if allow_unused is None:
        allow_unused = materialize_grads
    keys = tuple(inputs) if type(inputs) is dict else None  # gradients by the same keys
    inputs = _inputs_tuple(inputs, "grad")
    if len(inputs) == 0:
        raise RuntimeError("`inputs` argument to `grad()` cannot be empty.")
    if not only_inputs:
        warnings.warn(
            "only_inputs argument is deprecated and is ignored now (defaults to True). To "
            "accumulate gradient for other parts of the graph, please use "
            "torch.autograd.backward.",
            FutureWarning,
            stacklevel=2,
        )
    result = _grad(
        outputs,
        inputs,
        grad_outputs,
        retain_graph,
        create_graph,
        allow_unused,
        is_grads_batched,
        materialize_grads,
    )
    return result if keys is None else dict(zip(keys, result))


def _engine_flags(*flags) -> None:
    """PyTorch's engine reads ``retain_graph``, ``create_graph`` and ``allow_unused`` as C
    ``unsigned char`` arguments (``PyArg_ParseTuple``'s ``b``): an integer from 0 to 255 (a bool,
    a NumPy integer); anything else raises Python's own error, after the gradients' checks."""
    for v in flags:
        if type(v) is bool:
            continue
        try:
            i = operator.index(v)
        except TypeError:
            raise TypeError(
                f"'{E.py_typename(v)}' object cannot be interpreted as an integer"
            ) from None
        if i < 0:
            raise OverflowError("unsigned byte integer is less than minimum")
        if i > 255:
            raise OverflowError("unsigned byte integer is greater than maximum")


def _grad(
    outputs,
    inputs,
    grad_outputs,
    retain_graph,
    create_graph,
    allow_unused,
    is_grads_batched,
    materialize_grads,
):
    from .._tensor import Tensor

    if is_grads_batched:
        return _grad_batched(
            outputs,
            inputs,
            grad_outputs,
            retain_graph,
            create_graph,
            allow_unused,
            materialize_grads,
        )
    outputs = _as_tuple(outputs)
    single_input = isinstance(inputs, Tensor)
    inputs = _as_tuple(inputs)
    if len(inputs) == 0:
        raise RuntimeError("`inputs` argument to `grad()` cannot be empty.")
    grads = _as_tuple(grad_outputs) if grad_outputs is not None else (None,) * len(outputs)
    if retain_graph is None:
        retain_graph = create_graph
    root_grads = _root_grads(outputs, grads, create_graph)
    _engine_flags(retain_graph, create_graph, allow_unused)
    _check_inputs(inputs)
    _check_count(outputs, root_grads)
    root_edges = _root_edges(outputs)
    input_edges = []
    for t in inputs:
        if isinstance(t, GradientEdge):  # the gradient that flows along an edge
            input_edges.append((t.node, t.output_nr))
            continue
        if not t.requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
        input_edges.append(_gradient_edge(t))
    captured = [None] * len(inputs)
    layouts = [None] * len(inputs)
    versions = [0] * len(inputs)
    zeros = [False] * len(inputs)  # Note [Zero gradients] in _zero.py

    def on_input(index, g, strides, version, zero):
        if g is not None:
            if captured[index] is None:
                captured[index], layouts[index], versions[index] = g, strides, version
                zeros[index] = zero
            else:
                captured[index], layouts[index] = captured[index] + g, None
                zeros[index] = zeros[index] and zero

    _check_grad_devices(outputs, grads)
    strides = None if create_graph else _root_strides(grads, root_grads)
    with grad_mode.set_grad_enabled(bool(create_graph)):
        run_backward(
            root_edges,
            root_grads,
            bool(retain_graph),
            input_edges,
            on_input,
            create_graph,
            strides,
            accumulate=False,
        )
    result = []
    inference = grad_mode._state.inference  # Note [Gradients in inference mode]
    for i, (t, g) in enumerate(zip(inputs, captured)):
        node = input_edges[i][0]
        label = None  # the dtype of a leaf's gradient cast to its grad_dtype
        if g is not None and type(node) is AccumulateGrad and node.retyped():
            g, label = node.incoming(g)
        if g is None:
            if not allow_unused:
                raise RuntimeError(
                    f"The differentiated Tensor at index {i} appears to not have been used in "
                    "the graph. Set allow_unused=True if this is the desired behavior."
                )
            result.append(g)
        elif isinstance(g, Tensor):
            result.append(g)
        else:
            if isinstance(t, GradientEdge):
                from .. import _device as DEV
                from .. import _dtype as D

                dtype, device = D.from_numpy_dtype(g.dtype), t.node._device or DEV.CPU
            else:
                dtype, device = label or t._dtype, t._device
            g = Tensor._make(g, dtype, device, inference=inference)
            if layouts[i] is not None:  # an expanded view (Note [Expanded gradients])
                g.__dict__["_strides"] = layouts[i]
            if versions[i] and not inference:  # Note [In-place sums] in engine.py
                g._version_counter.value = versions[i]
            if zeros[i] and label is None:
                _zero.mark(g)
            result.append(g)
    del single_input
    if materialize_grads and None in result:
        if any(g is None and isinstance(t, GradientEdge) for t, g in zip(inputs, result)):
            raise RuntimeError(
                "materialize_grads cannot be used when the given input is a GradientEdge"
            )
        from .._factories import zeros_like

        result = [
            zeros_like(t, requires_grad=bool(create_graph)) if g is None else g
            for t, g in zip(inputs, result)
        ]
    return tuple(result)


BATCHED_SHAPE = (
    "If `is_grads_batched=True`, we interpret the first dimension of each grad_output as the "
    "batch dimension. The sizes of the remaining dimensions are expected to match the shape of "
    "corresponding output, but a mismatch was detected: grad_output[{}] has a shape of {} and "
    "output[{}] has a shape of {}. If you only want some tensors in `grad_output` to be "
    "considered batched, consider using vmap."
)
BATCHED_0D = (
    "vmap(vjp, in_dims=0, ...)(<inputs>): Got in_dim=0 for some input, but that input is a "
    "Tensor of dimensionality 0 so expected in_dim to satisfy 0 <= in_dim < 0."
)
BATCHED_SIZES = (
    "vmap: Expected all tensors to have the same size in the mapped dimension, got sizes {} for "
    "the mapped dimension"
)


def _grad_batched(
    outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused, materialize_grads
):
    """``grad(..., is_grads_batched=True)``: the first dim of each ``grad_output`` is a batch of
    gradients; PyTorch vmaps one backward over it, leafgrad runs one backward per row (same
    values) and stacks the rows. Refused where the two would differ: ``create_graph`` (the
    stacked result's graph) and hooks or ``retain_grad`` in the graph (PyTorch calls them once,
    with the batch)."""
    from .._tensor import Tensor
    from .engine import _collect

    outputs = _as_tuple(outputs)
    grads = _as_tuple(grad_outputs) if grad_outputs is not None else (None,) * len(outputs)
    batch = None
    sizes = []
    for i, (out, g) in enumerate(zip(outputs, grads)):
        shape, _, _, requires_grad = _out_info(out)
        if isinstance(g, Tensor):
            if shape != tuple(g.shape[1:]):
                if isinstance(out, GradientEdge):
                    raise RuntimeError("Batched grads are not supported with GradientEdge")
                raise RuntimeError(BATCHED_SHAPE.format(i, g.shape[1:], i, out.shape))
            sizes.append(g.shape[0])
        elif g is None and requires_grad:
            if any(n != 1 for n in shape):
                raise RuntimeError(E.IMPLICIT_GRAD)
            raise ValueError(BATCHED_0D)
    if len(set(sizes)) > 1:
        raise ValueError(BATCHED_SIZES.format(sizes))
    batch = sizes[0] if sizes else 0
    if create_graph:
        raise NotImplementedError(
            "leafgrad: autograd.grad(is_grads_batched=True, create_graph=True) is not supported"
        )
    _, order = _collect(
        [o.grad_fn if isinstance(o, Tensor) else o.node for o in outputs if o is not None]
    )
    for node in order:
        hooked = node._tensor_pre_hooks or node._pre_hooks or node._post_hooks or node._retained
        if isinstance(node, AccumulateGrad):
            extra = node.variable.__dict__
            hooked = hooked or extra.get("_hooks") or extra.get("_post_acc_hooks")
        if hooked:
            raise NotImplementedError(
                "leafgrad: autograd.grad(is_grads_batched=True) through a graph with hooks or "
                "retain_grad is not supported (PyTorch calls them once, with the batch)"
            )
    if retain_graph is None:
        retain_graph = create_graph
    rows = []
    for k in range(batch):
        rows.append(
            grad(
                outputs,
                inputs,
                tuple(g[k] if isinstance(g, Tensor) else g for g in grads),
                retain_graph=True if k < batch - 1 else retain_graph,
                allow_unused=True,
            )
        )
    single = isinstance(inputs, Tensor)
    inputs = _as_tuple(inputs)
    from .. import stack, zeros

    result = []
    for i, t in enumerate(inputs):
        column = [r[i] for r in rows]
        if not column or all(c is None for c in column):
            if not allow_unused and not materialize_grads:
                raise RuntimeError(
                    f"The differentiated Tensor at index {i} appears to not have been used in "
                    "the graph. Set allow_unused=True if this is the desired behavior."
                )
            if materialize_grads:  # PyTorch's are not batched
                result.append(zeros(tuple(t.shape), dtype=t.dtype, device=t.device))
            else:
                result.append(None)
            continue
        with grad_mode.no_grad():
            result.append(stack(column))
    del single
    return tuple(result)


def _is_checkpoint_valid() -> bool:
    """False while a backward that only some inputs receive (``autograd.grad``,
    ``backward(inputs=...)``) runs: the reentrant checkpoint cannot serve it."""
    from .engine import _tasks

    stack = _tasks.stack
    return not stack or stack[-1].needed is None


def _gradient_edge(t):
    """Where ``t``'s gradient flows: the edge a new op's node would take to ``t``."""
    from ..ops.dispatch import _edge  # dispatch imports the engine

    return _edge(t)


def _root_edges(outputs) -> list:
    """The outputs' edges; an output without a node raises PyTorch's error (a leaf view that
    only inherits requires_grad has none either: Note [Views that inherit requires_grad])."""
    edges = []
    for i, out in enumerate(outputs):
        if isinstance(out, GradientEdge):
            edge = (out.node, out.output_nr)
        else:
            edge = _gradient_edge(out)
        if edge[0] is None:
            raise RuntimeError(E.NO_GRAD_FN.format(i))
        edges.append(edge)
    return edges


# Custom autograd Functions (issue 5); function.py imports nothing from this package's namespace.
from .function import Function, FunctionCtx, once_differentiable  # noqa: E402

__all__ += ["Function", "FunctionCtx", "once_differentiable"]


from .gradcheck import GradcheckError, gradcheck, gradgradcheck  # noqa: E402


class _VariableMeta(type):
    def __instancecheck__(cls, other) -> bool:
        from .._tensor import Tensor

        return isinstance(other, Tensor)


class Variable(metaclass=_VariableMeta):
    """``torch.autograd.Variable``, kept for old code: ``Variable(t, requires_grad)`` is a leaf
    sharing ``t``'s memory (``t.detach()``) that requires grad as asked; every tensor is an
    instance of it."""

    def __new__(cls, data=None, requires_grad: bool = False, volatile: bool = False):
        from .._tensor import Tensor

        if volatile:
            from .. import _errors as E
            from .._tensor import VOLATILE_SET

            E.warn(VOLATILE_SET)
            if requires_grad:
                raise ValueError("Variable can't be volatile and require_grad at the same time!")
        if data is None:  # an empty tensor of the default dtype
            from .._factories import empty

            data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        out = data.detach()
        if requires_grad:
            if not (out.dtype.is_floating_point or out.dtype.is_complex):
                raise RuntimeError(
                    "Only Tensors of floating point and complex dtype can require gradients"
                )
            out.requires_grad_(True)
        return out
