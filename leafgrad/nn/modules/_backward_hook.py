"""Module backward hooks: PyTorch's ``BackwardHook``, on identity ``autograd.Function`` s.

``register_full_backward_hook`` and ``register_full_backward_pre_hook`` wrap a module's tensor
inputs and outputs in ``BackwardHookFunction`` (an identity Function, so its node is
``BackwardHookFunctionBackward`` as in PyTorch). A post-hook on the outputs' node captures the
gradients of the outputs (and runs the pre-hooks, which may replace them); a post-hook on the
inputs' node then calls the user hooks with the gradients of the inputs and of the outputs.
"""

from __future__ import annotations

import warnings

from ..._tensor import Tensor
from ...autograd import grad_mode
from ...autograd.function import Function


class BackwardHookFunction(Function):
    """The identity, recorded so that its node can carry the module's hooks."""

    @staticmethod
    def forward(ctx, *args):
        ctx.mark_non_differentiable(*[a for a in args if not a.requires_grad])
        return args

    @staticmethod
    def backward(ctx, *args):
        return args


NO_INPUT_GRAD_WARNING = (
    "Full backward hook is firing when gradients are computed with respect to module outputs "
    "since no inputs require gradients. See "
    "https://docs.pytorch.org/docs/main/generated/torch.nn.Module.html"
    "#torch.nn.Module.register_full_backward_hook for more details."
)


class BackwardHook:
    """One forward call's hooks: captures output gradients, then calls the user hooks."""

    def __init__(self, module, user_hooks, user_pre_hooks) -> None:
        self.user_hooks = user_hooks
        self.user_pre_hooks = user_pre_hooks
        self.module = module
        self.grad_outputs = None
        self.n_outputs = -1
        self.output_tensors_index = None
        self.n_inputs = -1
        self.input_tensors_index = None

    @staticmethod
    def _pack_with_none(indices, values, size):
        res = [None] * size
        for idx, val in zip(indices, values):
            res[idx] = val
        return tuple(res)

    @staticmethod
    def _unpack_none(indices, values):
        return tuple(values[idx] for idx in indices)

    def _set_user_hook(self, grad_fn) -> None:
        def hook(grad_input, _):
            if self.grad_outputs is None:
                return None  # the gradient did not pass through the module's outputs
            res = self._pack_with_none(self.input_tensors_index, grad_input, self.n_inputs)
            for user_hook in self.user_hooks:
                out = user_hook(self.module, res, self.grad_outputs)
                if out is None:
                    continue
                if len(out) != len(res):
                    raise RuntimeError(
                        "Backward hook returned an invalid number of grad_input, "
                        f"got {len(out)}, but expected {len(res)}"
                    )
                res = out
            self.grad_outputs = None
            return self._unpack_none(self.input_tensors_index, res)

        grad_fn.register_hook(hook)

    def _apply_on_tensors(self, fn, args):
        tensors_idx, tensors = [], []
        requires_grad = False
        for i, arg in enumerate(args):
            if isinstance(arg, Tensor):
                tensors_idx.append(i)
                tensors.append(arg)
                requires_grad |= arg.requires_grad
        if not (requires_grad and grad_mode.is_grad_enabled()):
            return args, None
        new_tensors = BackwardHookFunction.apply(*tensors)
        if not isinstance(new_tensors, tuple):
            new_tensors = (new_tensors,)
        if len(new_tensors) == 0:
            raise RuntimeError(
                "Cannot set Module backward hook for a Module with no input Tensors."
            )
        grad_fns = [
            t.grad_fn
            for t in new_tensors
            if t.grad_fn is not None and t.grad_fn.name() == "BackwardHookFunctionBackward"
        ]
        if not grad_fns:
            raise RuntimeError(
                "Error while setting up backward hooks. Please open an issue with a code sample "
                "to reproduce this."
            )
        fn(grad_fns[0])
        arg_list = list(args)
        for idx, val in zip(tensors_idx, new_tensors):
            arg_list[idx] = val
        out = tuple(arg_list) if type(args) is tuple else type(args)(*arg_list)
        return out, tensors_idx

    def setup_input_hook(self, args):
        res, input_idx = self._apply_on_tensors(self._set_user_hook, args)
        self.n_inputs = len(args)
        self.input_tensors_index = input_idx
        return res

    def setup_output_hook(self, args):
        def fn(grad_fn) -> None:
            def hook(_, grad_output):
                self.grad_outputs = self._pack_with_none(
                    self.output_tensors_index, grad_output, self.n_outputs
                )
                if self.user_pre_hooks:
                    expected = len(self.grad_outputs)
                    for user_pre_hook in self.user_pre_hooks:
                        new = user_pre_hook(self.module, self.grad_outputs)
                        if new is None:
                            continue
                        if len(new) != expected:
                            raise RuntimeError(
                                "Backward pre hook returned an invalid number of grad_output, "
                                f"got {len(new)}, but expected {expected}"
                            )
                        self.grad_outputs = new
                local = self.grad_outputs
                if self.input_tensors_index is None:
                    warnings.warn(NO_INPUT_GRAD_WARNING, stacklevel=5)
                    grad_inputs = self._pack_with_none([], [], self.n_inputs)
                    for user_hook in self.user_hooks:
                        res = user_hook(self.module, grad_inputs, self.grad_outputs)
                        if res is not None and not (
                            isinstance(res, tuple) and all(el is None for el in res)
                        ):
                            raise RuntimeError(
                                "Backward hook for Modules where no input requires gradient "
                                "should always return None or None for all gradients."
                            )
                    self.grad_outputs = None
                if local is not None:
                    return tuple(local[i] for i in self.output_tensors_index)
                return None

            grad_fn.register_hook(hook)

        is_tuple = isinstance(args, tuple)
        if not is_tuple:
            args = (args,)
        res, output_idx = self._apply_on_tensors(fn, args)
        self.n_outputs = len(args)
        self.output_tensors_index = output_idx
        return res if is_tuple else res[0]


# --- Module.register_backward_hook (deprecated in PyTorch) ----------------------------------


class _WrappedHook:
    """A module's non-full backward hook as a hook of its output's node."""

    def __init__(self, hook, module) -> None:
        self.hook = hook
        self.module = module

    def __call__(self, grad_input, grad_output):
        return self.hook(self.module, grad_input, grad_output)


def setup_non_full_hooks(module, hooks, args, result) -> None:
    """PyTorch's ``_call_impl`` for non-full backward hooks: each hook is registered on the
    ``grad_fn`` of the first tensor of the result, then the deprecation warnings are checked."""
    var = result
    while not isinstance(var, Tensor):
        if isinstance(var, dict):
            var = next(v for v in var.values() if isinstance(v, Tensor))
        else:
            var = var[0]
    grad_fn = var.grad_fn
    if grad_fn is None:
        return
    for hook in hooks:
        grad_fn.register_hook(_WrappedHook(hook, module))
    _maybe_warn_non_full_backward_hook(args, result, grad_fn)


_NON_FULL = "Please use register_full_backward_hook to get the documented behavior."


def _tensor_tuple(x):
    """``x`` as a tuple of tensors (a tensor alone, or a tuple of them), else None."""
    if isinstance(x, Tensor):
        return (x,)
    if isinstance(x, tuple) and all(isinstance(i, Tensor) for i in x):
        return x
    return None


def _maybe_warn_non_full_backward_hook(inputs, result, grad_fn) -> None:
    def warn(message: str) -> None:
        warnings.warn(message, FutureWarning, stacklevel=4)

    result = _tensor_tuple(result)
    if result is None:
        warn(
            "Using non-full backward hooks on a Module that does not return a single Tensor "
            "or a tuple of Tensors is deprecated and will be removed in future versions. This "
            "hook will be missing some of the grad_output. " + _NON_FULL
        )
        return
    inputs = _tensor_tuple(inputs)
    if inputs is None:
        warn(
            "Using non-full backward hooks on a Module that does not take as input a single "
            "Tensor or a tuple of Tensors is deprecated and will be removed in future "
            "versions. This hook will be missing some of the grad_input. " + _NON_FULL
        )
        return
    out_grad_fn = {r.grad_fn for r in result if r.grad_fn is not None}
    if len(out_grad_fn) == 0 or (len(out_grad_fn) == 1 and grad_fn not in out_grad_fn):
        warn(
            "Using a non-full backward hook when outputs are nested in python data structure is "
            "deprecated and will be removed in future versions. This hook will be missing some "
            "grad_output."
        )
    elif len(out_grad_fn) > 1:
        warn(
            "Using a non-full backward hook when outputs are generated by different autograd "
            "Nodes is deprecated and will be removed in future versions. This hook will be "
            "missing some grad_output. " + _NON_FULL
        )
    else:
        inputs_grad_fn = {i.grad_fn for i in inputs if i.grad_fn is not None}
        next_functions = {n[0] for n in grad_fn.next_functions}
        if inputs_grad_fn != next_functions:
            warn(
                "Using a non-full backward hook when the forward contains multiple autograd "
                "Nodes is deprecated and will be removed in future versions. This hook will be "
                "missing some grad_input. " + _NON_FULL
            )
