"""``leafgrad.optim.Optimizer``: parameter groups, per-parameter state, state dicts and step hooks.

The base class behaves as ``torch.optim.Optimizer``: the same argument checks and error texts,
the same ``state_dict`` layout (parameters numbered in group order; ``state`` and
``param_groups``), the same ``repr`` and the same hook order around ``step``.

Note [Optimizer updates in place]: every update runs under ``no_grad`` (unless the optimizer is
``differentiable``) with in-place tensor ops, as PyTorch's single-tensor (for-loop) kernels do.
Parameters therefore stay leaves, keep their identity, and their ``_version`` counts the same
in-place writes as PyTorch's. On CPU PyTorch's ``foreach=None`` picks the for-loop kernels, so
their order of float operations is the one reproduced here; ``foreach=True`` and ``fused=True``
are accepted and checked as PyTorch checks them, and also run the for-loop arithmetic. Where a
group needs none of the in-place machinery, SGD runs its for-loop as one jitted call with the same
values, writes and version counts (Note [Group update] in ``_group_update.py``).
"""

from __future__ import annotations

import functools
import warnings
from collections import OrderedDict, defaultdict
from collections.abc import Callable, Hashable, Iterable
from copy import deepcopy
from itertools import chain
from typing import Any

from .. import _dtype
from .. import _errors as E
from .._tensor import Tensor
from ..autograd import grad_mode
from ..autograd.graph import RemovableHandle

__all__ = ["Optimizer", "register_optimizer_step_pre_hook", "register_optimizer_step_post_hook"]

StateDict = dict[str, Any]

_global_optimizer_pre_hooks: OrderedDict[int, Callable] = OrderedDict()
_global_optimizer_post_hooks: OrderedDict[int, Callable] = OrderedDict()

# PyTorch's lists for its CPU build (torch.utils._foreach_utils and optimizer.py).
_FUSED_DEVICES = ["mps", "cuda", "xpu", "hpu", "cpu", "mtia", "privateuseone"]
_CAPTURABLE_DEVICES = ["cuda", "xpu", "hpu", "privateuseone", "xla"]


class _RequiredParameter:
    """Marks an optimizer default that each parameter group must set."""

    def __repr__(self) -> str:
        return "<required parameter>"


required = _RequiredParameter()


_typename = E.typename


def _use_grad_for_differentiable(func: Callable) -> Callable:
    """Run ``step`` with grad mode set to the optimizer's ``differentiable`` flag."""

    @functools.wraps(func)
    def _use_grad(self, *args, **kwargs):
        prev = grad_mode.is_grad_enabled()
        try:
            grad_mode.set_grad_enabled(bool(self.defaults["differentiable"]))
            return func(self, *args, **kwargs)
        finally:
            grad_mode.set_grad_enabled(prev)

    return _use_grad


def _evaluate(closure: Callable | None):
    """``closure()`` with grad mode on (``step`` itself runs under ``no_grad``); None without."""
    if closure is None:
        return None
    with grad_mode.enable_grad():
        return closure()


def _get_value(x):
    """A Python number from a step count or a tensor hyperparameter (``.item()``), as PyTorch
    converts a tensor ``alpha``/``value`` to a Scalar."""
    return x.item() if isinstance(x, Tensor) else x


def _to_scalar(x):
    """A 1-element hyperparameter tensor squeezed to 0-d; Python numbers unchanged."""
    if isinstance(x, Tensor) and x.dim() != 0:
        return x.squeeze()
    return x


def _get_scalar_dtype(is_fused=None):
    """The dtype of a ``step`` tensor: float64 under a float64 default dtype, else float32."""
    if is_fused:
        return _dtype.float32
    return _dtype.float64 if _dtype.get_default_dtype() == _dtype.float64 else _dtype.float32


def _device_dtype_check_for_fused(p: Tensor, cuda_unsupported: bool = False) -> None:
    devices = list(_FUSED_DEVICES)
    if cuda_unsupported:
        devices.remove("cuda")
    if not (p.device.type in devices and p.is_floating_point()):
        raise RuntimeError(
            "`fused=True` requires all the params to be floating point Tensors of "
            f"supported devices: {devices} but {p.dtype} and {p.device.type}"
        )


def _check_capturable(param: Tensor, step: Tensor) -> None:
    if not (param.device.type == step.device.type and param.device.type in _CAPTURABLE_DEVICES):
        raise AssertionError(
            "If capturable=True, params and state_steps must be on supported devices: "
            f"{_CAPTURABLE_DEVICES}."
        )


def fused_kernel_step(optimizer, written, grads, run, steps=()) -> None:
    """An update PyTorch runs as a fused CPU kernel (``fused=True``; SGD, Adagrad): the kernel
    writes the parameters and its state through their memory, so their versions stay (a state
    tensor it creates stays at 0); a GradScaler's ``grad_scale`` divides the gradients in place,
    unversioned, first; with ``found_inf`` set nothing is updated, and ``found_inf`` is taken
    off the steps after. ``run`` does the single-tensor update (the kernel's values) and
    returns the state tensors it created; ``written``: the tensors the kernel writes."""
    from .. import _storage as S
    from ..autograd import grad_mode

    grad_scale = getattr(optimizer, "grad_scale", None)
    found_inf = getattr(optimizer, "found_inf", None)
    if found_inf is not None and found_inf.item() == 1.0:
        with grad_mode.no_grad():
            for step_t in steps:
                step_t += 1
            for step_t in steps:
                step_t -= found_inf
        return
    if grad_scale is not None:
        with grad_mode.no_grad():
            for g in grads:
                low = g.dtype in (_dtype.float16, _dtype.bfloat16)
                unscaled = (g.float() / grad_scale).to(g.dtype) if low else g / grad_scale
                S.write(g, unscaled._data)
    before = [(t, t._version_counter.value) for t in written if t is not None]
    created = run()
    for t, version in before:
        t._version_counter.value = version
    for t in created:
        t._version_counter.value = 0
    if found_inf is not None:
        with grad_mode.no_grad():
            for step_t in steps:
                step_t -= found_inf


def _check_fused_flags(optimizer: Optimizer, fused, foreach, differentiable) -> None:
    """The errors PyTorch's constructors raise for ``fused=True`` with incompatible flags."""
    if fused:
        optimizer._step_supports_amp_scaling = True
        if differentiable:
            raise RuntimeError("`fused` does not support `differentiable`")
        if foreach:
            raise RuntimeError("`fused` and `foreach` cannot be `True` together.")


def register_optimizer_step_pre_hook(hook: Callable) -> RemovableHandle:
    """Register ``hook(optimizer, args, kwargs)`` to run before every optimizer's ``step``."""
    handle = RemovableHandle(_global_optimizer_pre_hooks)
    _global_optimizer_pre_hooks[handle.id] = hook
    return handle


def register_optimizer_step_post_hook(hook: Callable) -> RemovableHandle:
    """Register ``hook(optimizer, args, kwargs)`` to run after every optimizer's ``step``."""
    handle = RemovableHandle(_global_optimizer_post_hooks)
    _global_optimizer_post_hooks[handle.id] = hook
    return handle


def _register(hooks: OrderedDict, hook: Callable, prepend: bool = False) -> RemovableHandle:
    handle = RemovableHandle(hooks)
    hooks[handle.id] = hook
    if prepend:
        hooks.move_to_end(handle.id, last=False)
    return handle


_HOOK_DICTS = (
    "_optimizer_step_pre_hooks",
    "_optimizer_step_post_hooks",
    "_optimizer_state_dict_pre_hooks",
    "_optimizer_state_dict_post_hooks",
    "_optimizer_load_state_dict_pre_hooks",
    "_optimizer_load_state_dict_post_hooks",
)


class Optimizer:
    """Base class of all optimizers: ``params`` (tensors, ``(name, tensor)`` pairs or group
    dicts) and the ``defaults`` each group takes for the options it does not set.

    >>> p = leafgrad.zeros(3, requires_grad=True)
    >>> opt = leafgrad.optim.SGD([p], lr=0.1)
    >>> opt.param_groups[0]["lr"]
    0.1
    """

    def __init__(self, params, defaults: dict[str, Any]) -> None:
        from .. import _compile

        _compile._optimizers.add(self)  # compiled steps guard on its hyperparameters
        self.defaults = defaults
        for name in _HOOK_DICTS:
            setattr(self, name, OrderedDict())
        self._patch_step_function()
        if isinstance(params, Tensor):
            raise TypeError(
                "params argument given to the optimizer should be "
                "an iterable of Tensors or dicts, but got " + _typename(params)
            )
        self.state: defaultdict[Tensor, Any] = defaultdict(dict)
        self.param_groups: list[dict[str, Any]] = []
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for param_group in param_groups:
            self.add_param_group(param_group)
        self._warned_capturable_if_run_uncaptured = True

    def __getstate__(self) -> dict[str, Any]:
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        for name in _HOOK_DICTS:
            if name not in self.__dict__:
                setattr(self, name, OrderedDict())
        self._patch_step_function()
        self.defaults.setdefault("differentiable", False)

    def __repr__(self) -> str:
        text = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):
            text += f"\nParameter Group {i}\n"
            for key in sorted(group.keys()):
                if key != "params":
                    text += f"    {key}: {group[key]}\n"
        return text + ")"

    # --- step and its hooks ------------------------------------------------------------------

    @staticmethod
    def profile_hook_step(func: Callable) -> Callable:
        """Wrap ``step`` so the global and per-optimizer pre/post hooks run around it."""

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            self = args[0]
            for pre_hook in chain(
                _global_optimizer_pre_hooks.values(), self._optimizer_step_pre_hooks.values()
            ):
                result = pre_hook(self, args, kwargs)
                if result is not None:
                    if isinstance(result, tuple) and len(result) == 2:
                        args, kwargs = result
                    else:
                        raise RuntimeError(
                            f"{func} must return None or a tuple of (new_args, new_kwargs), "
                            f"but got {result}."
                        )
            out = func(*args, **kwargs)
            for post_hook in chain(
                self._optimizer_step_post_hooks.values(), _global_optimizer_post_hooks.values()
            ):
                post_hook(self, args, kwargs)
            return out

        return wrapper

    def _patch_step_function(self) -> None:
        # As PyTorch: the class's step is wrapped once, when its first instance is made.
        self._zero_grad_profile_name = f"Optimizer.zero_grad#{self.__class__.__name__}.zero_grad"
        if not getattr(self.__class__.step, "hooked", None):
            self.__class__.step = self.profile_hook_step(self.__class__.step)
            self.__class__.step.hooked = True

    def register_step_pre_hook(self, hook: Callable) -> RemovableHandle:
        """Run ``hook(optimizer, args, kwargs)`` before ``step``; it may return new args."""
        return _register(self._optimizer_step_pre_hooks, hook)

    def register_step_post_hook(self, hook: Callable) -> RemovableHandle:
        """Run ``hook(optimizer, args, kwargs)`` after ``step``."""
        return _register(self._optimizer_step_post_hooks, hook)

    def register_state_dict_pre_hook(self, hook: Callable, prepend: bool = False):
        """Run ``hook(optimizer)`` before ``state_dict``."""
        return _register(self._optimizer_state_dict_pre_hooks, hook, prepend)

    def register_state_dict_post_hook(self, hook: Callable, prepend: bool = False):
        """Run ``hook(optimizer, state_dict)`` after ``state_dict``; it may return a new one."""
        return _register(self._optimizer_state_dict_post_hooks, hook, prepend)

    def register_load_state_dict_pre_hook(self, hook: Callable, prepend: bool = False):
        """Run ``hook(optimizer, state_dict)`` before ``load_state_dict``."""
        return _register(self._optimizer_load_state_dict_pre_hooks, hook, prepend)

    def register_load_state_dict_post_hook(self, hook: Callable, prepend: bool = False):
        """Run ``hook(optimizer)`` after ``load_state_dict``."""
        return _register(self._optimizer_load_state_dict_post_hooks, hook, prepend)

    def step(self, closure: Callable[[], float] | None = None) -> float | None:
        """Perform one optimization step; ``closure`` re-evaluates the loss."""
        raise NotImplementedError

    # --- state dicts -------------------------------------------------------------------------

    def state_dict(self) -> StateDict:
        """``{"state": {index: per-parameter state}, "param_groups": [...]}``, parameters
        numbered in the order they appear across the groups (PyTorch's layout)."""
        for pre_hook in self._optimizer_state_dict_pre_hooks.values():
            pre_hook(self)
        index: dict[int, int] = {}
        start = 0

        def pack_group(group: dict[str, Any]) -> dict[str, Any]:
            nonlocal start
            packed = {k: v for k, v in group.items() if k != "params"}
            for i, p in enumerate(group["params"], start):
                index.setdefault(id(p), i)
            packed["params"] = [index[id(p)] for p in group["params"]]
            start += len(packed["params"])
            return packed

        param_groups = [pack_group(g) for g in self.param_groups]
        packed_state = {
            (index[id(k)] if isinstance(k, Tensor) else k): v for k, v in self.state.items()
        }
        state_dict = {"state": packed_state, "param_groups": param_groups}
        for post_hook in self._optimizer_state_dict_post_hooks.values():
            result = post_hook(self, state_dict)
            if result is not None:
                state_dict = result
        return state_dict

    @staticmethod
    def _process_value_according_to_param_policy(param, value, param_id, param_groups, key=None):
        fused = capturable = False
        for pg in param_groups:
            if param_id in pg["params"]:
                fused = pg.get("fused", False)
                capturable = pg.get("capturable", False)
                break
        if key == "step":
            if capturable or fused:
                return value.to(dtype=_dtype.float32, device=param.device)
            return value
        if param.is_floating_point():
            return value.to(dtype=param.dtype, device=param.device)
        return value.to(device=param.device)

    def load_state_dict(self, state_dict: StateDict) -> None:
        """Load a ``state_dict()``: saved parameters are matched to ours by position."""
        state_dict = state_dict.copy()
        for pre_hook in self._optimizer_load_state_dict_pre_hooks.values():
            result = pre_hook(self, state_dict)
            if result is not None:
                state_dict = result
        groups = self.param_groups
        saved_groups = deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError(
                "loaded state dict contains a parameter group "
                "that doesn't match the size of optimizer's group"
            )
        id_map = dict(
            zip(
                chain.from_iterable(g["params"] for g in saved_groups),
                chain.from_iterable(g["params"] for g in groups),
            )
        )

        def cast(param, value, param_id=None, param_groups=None, key: Hashable = None):
            # Tensors move to the parameter's device (and floating dtype); containers recurse.
            if isinstance(value, Tensor):
                return Optimizer._process_value_according_to_param_policy(
                    param, value, param_id, param_groups, key
                )
            if isinstance(value, dict):
                return {
                    k: cast(param, v, param_id=param_id, param_groups=param_groups, key=k)
                    for k, v in value.items()
                }
            if isinstance(value, Iterable):
                return type(value)(
                    cast(param, v, param_id=param_id, param_groups=param_groups) for v in value
                )
            return value

        state: defaultdict[Any, dict] = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                param = id_map[k]
                state[param] = cast(param, v, param_id=k, param_groups=state_dict["param_groups"])
            else:
                state[k] = v

        def update_group(group: dict[str, Any], new_group: dict[str, Any]) -> dict[str, Any]:
            new_group["params"] = group["params"]
            if "param_names" in group and "param_names" not in new_group:
                new_group["param_names"] = group["param_names"]
            return new_group

        param_groups = [update_group(g, ng) for g, ng in zip(groups, saved_groups)]
        self.__setstate__({"state": state, "param_groups": param_groups})
        for post_hook in self._optimizer_load_state_dict_post_hooks.values():
            post_hook(self)

    # --- gradients and groups ----------------------------------------------------------------

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Set every parameter's ``.grad`` to None (or, with ``set_to_none=False``, zero it)."""
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                if set_to_none:
                    p.grad = None
                else:
                    if p.grad.grad_fn is not None:
                        p.grad.detach_()
                    else:
                        p.grad.requires_grad_(False)
                    p.grad.zero_()

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a group of parameters (a dict with ``"params"`` and optional options)."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError(
                "optimizer parameters need to be organized in ordered collections, but "
                "the ordering of tensors in sets will change between runs. "
                "Please use a list instead."
            )
        else:
            param_group["params"] = list(params)

        tensors, names = [], []
        for param in param_group["params"]:
            if isinstance(param, tuple):
                names.append(param[0])
                tensors.append(param[1])
            else:
                tensors.append(param)
        param_group["params"] = tensors
        if names:
            if len(names) != len(tensors):
                raise ValueError(
                    "all optimizer params should be with/without names. "
                    "Some param names are missing"
                )
            param_group["param_names"] = names

        for param in param_group["params"]:
            if not isinstance(param, Tensor):
                raise TypeError(
                    "optimizer can only optimize Tensors, "
                    "but one of the params is " + _typename(param)
                )
            if not self.defaults.get("differentiable", None) and not (
                param.is_leaf or param.retains_grad
            ):
                raise ValueError("can't optimize a non-leaf Tensor")

        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(
                    "parameter group didn't specify a value of required optimization "
                    f"parameter {name}"
                )
            param_group.setdefault(name, default)

        params = param_group["params"]
        if len(params) != len(set(params)):
            warnings.warn(
                "optimizer contains a parameter group with duplicate parameters; "
                "in future, this will cause an error; "
                "see github.com/pytorch/pytorch/issues/40967 for more information",
                stacklevel=3,
            )
        param_set: set[Tensor] = set()
        for group in self.param_groups:
            param_set.update(set(group["params"]))
            if ("param_names" in param_group) != ("param_names" in group):
                which = "with names" if "param_names" in param_group else "without names"
                raise ValueError(
                    "all optimizer param groups should be with/without names. "
                    f"cannot add param group {which} to the optimizer"
                )
        if not param_set.isdisjoint(set(param_group["params"])):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)
