"""``torch.utils.checkpoint``: trade compute for memory by recomputing a function's activations
in backward instead of keeping them.

Note [Checkpoint]: both of PyTorch's variants, with its graphs:

- ``use_reentrant=True`` (and, with PyTorch 2.13's warning, when ``use_reentrant`` is not given):
  a custom Function, ``CheckpointFunction``, runs ``function`` under ``no_grad`` and keeps only its
  inputs; its backward (``CheckpointFunctionBackward``) runs ``function`` again with grad enabled
  on detached inputs and calls ``backward`` on that graph. As in PyTorch it cannot serve
  ``autograd.grad`` or ``backward(inputs=...)``.
- ``use_reentrant=False``: ``function`` runs normally, recording the graph it records without
  checkpointing, under ``saved_tensors_hooks`` (Note [Saved tensor hooks] in autograd/saved.py)
  whose pack keeps only a position; the first unpack in backward runs ``function`` again under
  hooks that collect what each node saves, in the same order, and every unpack returns its
  recomputed tensor. Recomputed tensors are compared with the originals' shapes, dtypes and
  devices (``determinism_check="default"``).

Both restore the CPU generator's state before recomputing (``preserve_rng_state``), so dropout
draws the same mask, and put the surrounding state back afterwards.
"""

from __future__ import annotations

import contextlib
import warnings

from .. import autograd
from ..autograd import grad_mode
from ..autograd.graph import saved_tensors_hooks

__all__ = [
    "checkpoint",
    "checkpoint_sequential",
    "CheckpointError",
    "CheckpointFunction",
    "set_checkpoint_early_stop",
    "set_checkpoint_debug_enabled",
]

USE_REENTRANT = (
    "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. Starting "
    "in PyTorch 2.9, calling checkpoint without use_reentrant will raise an exception. "
    "use_reentrant=False is recommended, but if you need to preserve the current default "
    "behavior, you can pass use_reentrant=True. Refer to docs for more details on the "
    "differences between the two variants."
)
NO_INPUT_GRAD = "None of the inputs have requires_grad=True. Gradients will be None"
REENTRANT_GRAD = (
    "When use_reentrant=True, torch.utils.checkpoint is incompatible with .grad() or passing an "
    "`inputs` parameter to .backward(). To resolve this error, you can either set "
    "use_reentrant=False, or call .backward() without passing the `inputs` argument."
)
NO_OUTPUT_GRAD = "none of output has requires_grad=True, this checkpoint() is not necessary"
CONTEXT_REENTRANT = "Passing `context_fn` or `debug` is only supported when use_reentrant=False."
METADATA = (
    "torch.utils.checkpoint: Recomputed values for the following tensors have different metadata "
    "than during the forward pass.\n"
)
TOO_FEW = (
    "torch.utils.checkpoint: trying to unpack a tensor that was not saved during recomputation: "
    "the function saved fewer tensors when it ran again"
)


class CheckpointError(RuntimeError):
    pass


class _StopRecomputation(Exception):
    """Raised inside a recomputation once every saved tensor is back (early stop)."""


_EARLY_STOP: list = [None]  # set_checkpoint_early_stop's override of ``early_stop``
_DEBUG: list = [None]  # set_checkpoint_debug_enabled's override of ``debug``


@contextlib.contextmanager
def set_checkpoint_early_stop(enable: bool):
    """Within the block, non-reentrant checkpoints stop recomputing once every tensor the
    forward saved is recomputed (``True``, the default) or run the whole function again
    (``False``), whatever their ``early_stop`` argument says."""
    previous = _EARLY_STOP[0]
    try:
        _EARLY_STOP[0] = enable
        yield
    finally:
        _EARLY_STOP[0] = previous


@contextlib.contextmanager
def set_checkpoint_debug_enabled(enabled: bool | None):
    """Within the block, checkpoints take ``debug=enabled`` whatever their argument says (None:
    their argument)."""
    previous = _DEBUG[0]
    try:
        _DEBUG[0] = enabled
        yield
    finally:
        _DEBUG[0] = previous


def noop_context_fn():
    return contextlib.nullcontext(), contextlib.nullcontext()


def _tensor_cls():
    from .._tensor import Tensor

    return Tensor


def _rng_state():
    import leafgrad

    return leafgrad.get_rng_state()


@contextlib.contextmanager
def _replaying(state):
    """Run with the generator at ``state`` (when given), and put the current state back after."""
    if state is None:
        yield
        return
    import leafgrad

    now = leafgrad.get_rng_state()
    leafgrad.set_rng_state(state)
    try:
        yield
    finally:
        leafgrad.set_rng_state(now)


def check_backward_validity(inputs) -> None:
    Tensor = _tensor_cls()
    if not any(inp.requires_grad for inp in inputs if isinstance(inp, Tensor)):
        warnings.warn(NO_INPUT_GRAD, stacklevel=2)


def detach_variable(inputs: tuple) -> tuple:
    if not isinstance(inputs, tuple):
        raise RuntimeError(
            "Only tuple of tensors is supported. Got Unsupported input type: "
            f"{type(inputs).__name__}"
        )
    Tensor = _tensor_cls()
    out = []
    for inp in inputs:
        if not isinstance(inp, Tensor):
            out.append(inp)
            continue
        x = inp.detach()
        x.requires_grad = inp.requires_grad
        out.append(x)
    return tuple(out)


class CheckpointFunction(autograd.Function):
    """The reentrant checkpoint (Note [Checkpoint])."""

    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        check_backward_validity(args)
        ctx.run_function = run_function
        ctx.fwd_state = _rng_state() if preserve_rng_state else None
        Tensor = _tensor_cls()
        ctx.inputs = []
        ctx.tensor_indices = []
        tensors = []
        for i, arg in enumerate(args):
            if isinstance(arg, Tensor):
                tensors.append(arg)
                ctx.tensor_indices.append(i)
                ctx.inputs.append(None)
            else:
                ctx.inputs.append(arg)
        ctx.save_for_backward(*tensors)
        with grad_mode.no_grad():
            return run_function(*args)

    @staticmethod
    def backward(ctx, *grads):
        if not autograd._is_checkpoint_valid():
            raise RuntimeError(REENTRANT_GRAD)
        inputs = list(ctx.inputs)
        for i, t in zip(ctx.tensor_indices, ctx.saved_tensors):
            inputs[i] = t
        with _replaying(ctx.fwd_state):
            detached = detach_variable(tuple(inputs))
            with grad_mode.enable_grad():
                outputs = ctx.run_function(*detached)
        Tensor = _tensor_cls()
        if isinstance(outputs, Tensor):
            outputs = (outputs,)
        with_grad, their_grads = [], []
        for out, g in zip(outputs, grads):
            if isinstance(out, Tensor) and out.requires_grad:
                with_grad.append(out)
                their_grads.append(g)
        if not with_grad:
            raise RuntimeError(NO_OUTPUT_GRAD)
        autograd.backward(with_grad, their_grads)
        return (None, None) + tuple(
            inp.grad if isinstance(inp, Tensor) else None for inp in detached
        )


class _Frame:
    """One checkpointed call: what its recomputation saved, by position (the saved tensors, and
    the arrays leafgrad's nodes keep beyond them)."""

    def __init__(self, fn, args, kwargs, state, recompute_context, check, early_stop) -> None:
        self.fn, self.args, self.kwargs = fn, args, kwargs
        self.state = state
        self.recompute_context = recompute_context
        self.check = check
        self.early_stop = early_stop
        self.metadata: list = []
        self.n_extra = 0
        self.values: list | None = None
        self.extras: list | None = None

    def hooks(self) -> tuple:
        def pack(t) -> int:
            self.metadata.append((tuple(t.shape), t.dtype, t.device))
            return len(self.metadata) - 1

        def pack_extra(array) -> int:
            self.n_extra += 1
            return self.n_extra - 1

        pack._leafgrad_extra = (pack_extra, self.unpack_extra)
        return pack, self.unpack

    def unpack(self, index: int):
        if self.values is None:
            self._recompute()
        if index >= len(self.values):
            raise CheckpointError(TOO_FEW)
        return self.values[index]

    def unpack_extra(self, index: int):
        if self.extras is None:
            self._recompute()
        if index >= len(self.extras):
            raise CheckpointError(TOO_FEW)
        return self.extras[index]

    def _recompute(self) -> None:
        values: list = []
        extras: list = []

        def done() -> None:  # PyTorch's early stop: every saved tensor is back
            if (
                self.early_stop
                and len(values) == len(self.metadata)
                and len(extras) == self.n_extra
            ):
                raise _StopRecomputation

        def keep(t):
            values.append(t.detach())
            done()

        def keep_extra(array):
            extras.append(array)
            done()

        keep._leafgrad_extra = (keep_extra, None)
        with _replaying(self.state), grad_mode.enable_grad(), self.recompute_context:
            with saved_tensors_hooks(keep, lambda _: None):
                try:
                    self.fn(*self.args, **self.kwargs)
                except _StopRecomputation:
                    pass
        if self.check:
            self._compare(values)
        self.values, self.extras = values, extras

    def _compare(self, values) -> None:
        bad = []
        for i, (meta, t) in enumerate(zip(self.metadata, values)):
            now = (tuple(t.shape), t.dtype, t.device)
            if now != meta:
                bad.append(
                    f"tensor at position {i}:\n"
                    f"saved metadata: {_describe(meta)}\n"
                    f"recomputed metadata: {_describe(now)}\n"
                )
        if bad:
            raise CheckpointError(METADATA + "".join(bad) + ".")


def _describe(meta) -> str:
    shape, dtype, device = meta
    return f"{{'shape': torch.Size({list(shape)}), 'dtype': {dtype}, 'device': {device!r}}}"


def _checkpoint_without_reentrant(
    function, preserve, context_fn, determinism_check, early_stop, args, kwargs
):
    if determinism_check not in ("default", "none"):
        raise ValueError(
            f"determinism_check should be one of ['default', 'none'], but got {determinism_check}"
        )
    forward_context, recompute_context = context_fn()
    frame = _Frame(
        function,
        args,
        kwargs,
        _rng_state() if preserve else None,
        recompute_context,
        determinism_check == "default",
        early_stop if _EARLY_STOP[0] is None else _EARLY_STOP[0],
    )
    with saved_tensors_hooks(*frame.hooks()), forward_context:
        return function(*args, **kwargs)


def checkpoint(
    function,
    *args,
    use_reentrant: bool | None = None,
    context_fn=noop_context_fn,
    determinism_check: str = "default",
    debug: bool = False,
    early_stop: bool = True,
    **kwargs,
):
    """Run ``function(*args, **kwargs)`` without keeping its activations; backward recomputes
    them (Note [Checkpoint])."""
    if use_reentrant is None:
        warnings.warn(USE_REENTRANT, stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs and use_reentrant:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
    if use_reentrant:
        if context_fn is not noop_context_fn or debug is not False:
            raise ValueError(CONTEXT_REENTRANT)
        return CheckpointFunction.apply(function, preserve, *args)
    if debug if _DEBUG[0] is None else _DEBUG[0]:
        raise NotImplementedError("leafgrad: checkpoint(debug=True) is not supported")
    return _checkpoint_without_reentrant(
        function, preserve, context_fn, determinism_check, early_stop, args, kwargs
    )


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """Run a sequence of modules (or functions) in ``segments`` checkpointed chunks; the last
    chunk runs normally."""
    if use_reentrant is None:
        warnings.warn(USE_REENTRANT, stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))

    def run_function(start, end, functions):
        def forward(x):
            for j in range(start, end + 1):
                x = functions[j](x)
            return x

        return forward

    from ..nn import Sequential

    if isinstance(functions, Sequential):
        functions = list(functions.children())
    size = len(functions) // segments
    end = -1
    for start in range(0, size * (segments - 1), size):
        end = start + size - 1
        input = checkpoint(
            run_function(start, end, functions),
            input,
            use_reentrant=use_reentrant,
            preserve_rng_state=preserve,
        )
    return run_function(end + 1, len(functions) - 1, functions)(input)
