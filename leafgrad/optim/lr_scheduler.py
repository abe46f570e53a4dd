"""``leafgrad.optim.lr_scheduler``: learning-rate schedules, as ``torch.optim.lr_scheduler``.

Each scheduler updates ``group["lr"]`` with PyTorch's chainable (recursive) formulas, so the
sequence of learning rates is the same float for float; ``step(epoch)`` uses the closed forms
and warns as PyTorch does. Construction wraps ``optimizer.step`` to notice when
``scheduler.step()`` is called before ``optimizer.step()`` (PyTorch's warning).
"""

from __future__ import annotations

import math
import types
import warnings
from bisect import bisect_right
from collections import Counter
from functools import wraps
from typing import Any
from weakref import ref

from .._tensor import Tensor
from .optimizer import Optimizer, _to_scalar

__all__ = [
    "LambdaLR",
    "MultiplicativeLR",
    "StepLR",
    "MultiStepLR",
    "ConstantLR",
    "LinearLR",
    "ExponentialLR",
    "CosineAnnealingLR",
    "ReduceLROnPlateau",
    "OneCycleLR",
    "PolynomialLR",
    "LRScheduler",
    "CosineAnnealingWarmRestarts",
    "CyclicLR",
    "SequentialLR",
    "ChainedScheduler",
]

EPOCH_DEPRECATION_WARNING = (
    "The epoch parameter in `scheduler.step()` was not necessary and is being "
    "deprecated where possible. Please use `scheduler.step()` to step the "
    "scheduler. During the deprecation, if epoch is different from None, the "
    "closed form is used instead of the new chainable form, where available. "
    "Please open an issue if you are unable to replicate your use case: "
    "https://github.com/pytorch/pytorch/issues/new/choose."
)
_OVERRIDDEN_WARNING = (
    "Seems like `optimizer.step()` has been overridden after learning rate scheduler "
    "initialization. Please, make sure to call `optimizer.step()` before "
    "`lr_scheduler.step()`. See more details at "
    "https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate"
)
_ORDER_WARNING = (
    "Detected call of `lr_scheduler.step()` before `optimizer.step()`. "
    "In PyTorch 1.1.0 and later, you should call them in the opposite order: "
    "`optimizer.step()` before `lr_scheduler.step()`.  Failure to do this "
    "will result in PyTorch skipping the first value of the learning rate schedule. "
    "See more details at "
    "https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate"
)


def _format_param(name: str, optimizer: Optimizer, param) -> list:
    """One value per parameter group (a list of the right length, or one value repeated)."""
    if isinstance(param, (list, tuple)):
        if len(param) != len(optimizer.param_groups):
            raise ValueError(
                f"{name} must have the same length as optimizer.param_groups. "
                f"{name} has {len(param)} values, "
                f"param_groups has {len(optimizer.param_groups)}."
            )
    else:
        param = [param] * len(optimizer.param_groups)
    return [p.clone() if isinstance(p, Tensor) else p for p in param]


def _param_groups_val_list(optimizer: Optimizer, key: str) -> list:
    return [
        g[key].clone() if isinstance(g[key], Tensor) else g[key] for g in optimizer.param_groups
    ]


def _update_param_group_val(param_group: dict, key: str, val) -> None:
    # A tensor lr is updated in place, so compiled steps holding it see the new value.
    if isinstance(param_group[key], Tensor):
        param_group[key].fill_(_to_scalar(val))
    else:
        param_group[key] = val


def _warn_get_lr_called_within_step(scheduler: LRScheduler) -> None:
    if not scheduler._get_lr_called_within_step:
        warnings.warn(
            "To get the last learning rate computed by the scheduler, please use `get_last_lr()`.",
            UserWarning,
            stacklevel=2,
        )


class _Flag:
    """Set one boolean attribute of a scheduler for the duration of a ``with`` block."""

    def __init__(self, scheduler: LRScheduler, name: str) -> None:
        self.scheduler, self.name = scheduler, name

    def __enter__(self):
        setattr(self.scheduler, self.name, True)
        return self

    def __exit__(self, *exc) -> None:
        setattr(self.scheduler, self.name, False)


def _wrap_optimizer_step(scheduler: LRScheduler, opt: Optimizer) -> None:
    """Make ``opt.step`` record that it ran (``opt._opt_called``), once per optimizer."""
    if hasattr(opt.step, "_wrapped_by_lr_sched"):
        return
    opt_ref = ref(opt)
    func = opt.step.__func__

    @wraps(func)
    def wrapper(*args, **kwargs):
        o = opt_ref()
        o._opt_called = True
        return func.__get__(o, o.__class__)(*args, **kwargs)

    wrapper._wrapped_by_lr_sched = True
    opt.step = wrapper


class LRScheduler:
    """Base class of the schedulers: ``step()`` sets each group's ``lr`` from ``get_lr()``.

    >>> sched = leafgrad.optim.lr_scheduler.StepLR(opt, step_size=30, gamma=0.1)
    >>> opt.step(); sched.step(); sched.get_last_lr()
    """

    _get_lr_called_within_step: bool = False
    _is_initial: bool = False

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                initial_lr = group["lr"]
                if isinstance(initial_lr, Tensor):
                    initial_lr = initial_lr.clone()
                group.setdefault("initial_lr", initial_lr)
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(
                        f"param 'initial_lr' is not specified in param_groups[{i}] when "
                        "resuming scheduler with last_epoch >= 0.\n"
                        "This typically happens when:\n"
                        "1. You're trying to resume training from a checkpoint but haven't "
                        "properly loaded the optimizer state\n"
                        "2. You're using last_epoch >= 0 for a fresh training run "
                        "(not recommended)"
                    )
        self.base_lrs: list = _param_groups_val_list(optimizer, "initial_lr")
        self.last_epoch = last_epoch
        _wrap_optimizer_step(self, self.optimizer)
        self._initial_step()

    def _initial_step(self) -> None:
        self._step_count = 0
        with _Flag(self, "_is_initial"):
            self.step()

    def state_dict(self) -> dict[str, Any]:
        """Every attribute but the optimizer."""
        return {k: v for k, v in self.__dict__.items() if k != "optimizer"}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore attributes saved by ``state_dict``."""
        self.__dict__.update(state_dict)

    def get_last_lr(self) -> list:
        """The learning rates the last ``step`` set, one per group."""
        return self._last_lr

    def get_lr(self) -> list:
        """The learning rates of the current epoch (called by ``step``)."""
        raise NotImplementedError

    def step(self, epoch: int | None = None) -> None:
        """Advance one epoch (or, deprecated, jump to ``epoch``) and set the groups' ``lr``."""
        if self._step_count == 1:
            if not hasattr(self.optimizer.step, "_wrapped_by_lr_sched"):
                warnings.warn(_OVERRIDDEN_WARNING, UserWarning, stacklevel=2)
            elif not getattr(self.optimizer, "_opt_called", False):
                warnings.warn(_ORDER_WARNING, UserWarning, stacklevel=2)
        self._step_count += 1
        if epoch is not None:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
        self._update_lr(epoch)

    def _update_lr(self, epoch: int | None = None) -> None:
        with _Flag(self, "_get_lr_called_within_step"):
            if epoch is None:
                self.last_epoch += 1
                values = self.get_lr()
            else:
                self.last_epoch = epoch
                if hasattr(self, "_get_closed_form_lr"):
                    values = self._get_closed_form_lr()
                else:
                    values = self.get_lr()
        for group, lr in zip(self.optimizer.param_groups, values):
            _update_param_group_val(group, "lr", lr)
        self._last_lr = _param_groups_val_list(self.optimizer, "lr")


class _LRScheduler(LRScheduler):
    """The old name of ``LRScheduler``, kept as PyTorch keeps it."""


class _LambdaScheduler(LRScheduler):
    """Shared by LambdaLR and MultiplicativeLR: one function per group, saved by ``__dict__``."""

    def __init__(self, optimizer: Optimizer, lr_lambda, last_epoch: int = -1) -> None:
        self.optimizer = optimizer
        if not isinstance(lr_lambda, (list, tuple)):
            self.lr_lambdas = [lr_lambda] * len(optimizer.param_groups)
        else:
            if len(lr_lambda) != len(optimizer.param_groups):
                raise ValueError(
                    f"Expected {len(optimizer.param_groups)} lr_lambdas, but got {len(lr_lambda)}"
                )
            self.lr_lambdas = list(lr_lambda)

    def state_dict(self) -> dict[str, Any]:
        """Attributes, with each callable object's ``__dict__`` (plain functions as None)."""
        state = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "lr_lambdas")}
        state["lr_lambdas"] = [
            None if isinstance(fn, types.FunctionType) else fn.__dict__.copy()
            for fn in self.lr_lambdas
        ]
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore attributes and the callable objects' ``__dict__``."""
        lr_lambdas = state_dict.pop("lr_lambdas")
        self.__dict__.update(state_dict)
        state_dict["lr_lambdas"] = lr_lambdas
        for idx, fn in enumerate(lr_lambdas):
            if fn is not None:
                self.lr_lambdas[idx].__dict__.update(fn)


class LambdaLR(_LambdaScheduler):
    """``lr = initial_lr * lr_lambda(epoch)``."""

    def __init__(self, optimizer: Optimizer, lr_lambda, last_epoch: int = -1) -> None:
        super().__init__(optimizer, lr_lambda, last_epoch)
        LRScheduler.__init__(self, optimizer, last_epoch)

    def get_lr(self) -> list:
        _warn_get_lr_called_within_step(self)
        return [base * fn(self.last_epoch) for fn, base in zip(self.lr_lambdas, self.base_lrs)]


class MultiplicativeLR(_LambdaScheduler):
    """``lr *= lr_lambda(epoch)`` at every step after the first."""

    def __init__(self, optimizer: Optimizer, lr_lambda, last_epoch: int = -1) -> None:
        super().__init__(optimizer, lr_lambda, last_epoch)
        for fn in self.lr_lambdas:
            if not callable(fn):
                raise TypeError(f"lr_lambda should be a function, but got {type(fn).__name__}")
        LRScheduler.__init__(self, optimizer, last_epoch)

    def get_lr(self) -> list:
        _warn_get_lr_called_within_step(self)
        if self._is_initial:
            return _param_groups_val_list(self.optimizer, "lr")
        return [
            g["lr"] * fn(self.last_epoch)
            for fn, g in zip(self.lr_lambdas, self.optimizer.param_groups)
        ]


class StepLR(LRScheduler):
    """Multiply the lr by ``gamma`` every ``step_size`` epochs."""

    def __init__(
        self, optimizer: Optimizer, step_size: int, gamma: float = 0.1, last_epoch: int = -1
    ) -> None:
        self.step_size = step_size
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        _warn_get_lr_called_within_step(self)
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return _param_groups_val_list(self.optimizer, "lr")
        return [g["lr"] * self.gamma for g in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list:
        return [b * self.gamma ** (self.last_epoch // self.step_size) for b in self.base_lrs]


class MultiStepLR(LRScheduler):
    """Multiply the lr by ``gamma`` at each milestone (repeated milestones multiply again)."""

    def __init__(
        self, optimizer: Optimizer, milestones, gamma: float = 0.1, last_epoch: int = -1
    ) -> None:
        self.milestones = Counter(milestones)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        _warn_get_lr_called_within_step(self)
        if self.last_epoch not in self.milestones:
            return _param_groups_val_list(self.optimizer, "lr")
        return [
            g["lr"] * self.gamma ** self.milestones[self.last_epoch]
            for g in self.optimizer.param_groups
        ]

    def _get_closed_form_lr(self) -> list:
        milestones = sorted(self.milestones.elements())
        return [b * self.gamma ** bisect_right(milestones, self.last_epoch) for b in self.base_lrs]


class ConstantLR(LRScheduler):
    """Scale the lr by ``factor`` until ``total_iters`` epochs have passed."""

    def __init__(
        self,
        optimizer: Optimizer,
        factor: float = 1.0 / 3,
        total_iters: int = 5,
        last_epoch: int = -1,
    ) -> None:
        if factor > 1.0 or factor < 0:
            raise ValueError("Constant multiplicative factor expected to be between 0 and 1.")
        self.factor = factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        _warn_get_lr_called_within_step(self)
        if self.last_epoch == 0:
            return [g["lr"] * self.factor for g in self.optimizer.param_groups]
        if self.last_epoch != self.total_iters:
            return _param_groups_val_list(self.optimizer, "lr")
        return [g["lr"] * (1.0 / self.factor) for g in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list:
        return [
            b * (self.factor + (self.last_epoch >= self.total_iters) * (1 - self.factor))
            for b in self.base_lrs
        ]


class LinearLR(LRScheduler):
    """Scale the lr linearly from ``start_factor`` to ``end_factor`` over ``total_iters``."""

    def __init__(
        self,
        optimizer: Optimizer,
        start_factor: float = 1.0 / 3,
        end_factor: float = 1.0,
        total_iters: int = 5,
        last_epoch: int = -1,
    ) -> None:
        if start_factor > 1.0 or start_factor <= 0:
            raise ValueError(
                "Starting multiplicative factor expected to be greater than 0 and less or "
                "equal to 1."
            )
        if end_factor > 1.0 or end_factor < 0:
            raise ValueError("Ending multiplicative factor expected to be between 0 and 1.")
        self.start_factor = start_factor
        self.end_factor = end_factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        _warn_get_lr_called_within_step(self)
        if self.last_epoch == 0:
            return [g["lr"] * self.start_factor for g in self.optimizer.param_groups]
        if self._is_initial or self.last_epoch > self.total_iters:
            return _param_groups_val_list(self.optimizer, "lr")
        delta = self.end_factor - self.start_factor
        ratio = 1.0 + delta / (self.total_iters * self.start_factor + (self.last_epoch - 1) * delta)
        return [g["lr"] * ratio for g in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list:
        delta = self.end_factor - self.start_factor
        return [
            b
            * (
                self.start_factor
                + delta * min(self.total_iters, self.last_epoch) / self.total_iters
            )
            for b in self.base_lrs
        ]


class ExponentialLR(LRScheduler):
    """Multiply the lr by ``gamma`` every epoch."""

    def __init__(self, optimizer: Optimizer, gamma: float, last_epoch: int = -1) -> None:
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        _warn_get_lr_called_within_step(self)
        if self._is_initial:
            return _param_groups_val_list(self.optimizer, "lr")
        return [g["lr"] * self.gamma for g in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list:
        return [b * self.gamma**self.last_epoch for b in self.base_lrs]


class PolynomialLR(LRScheduler):
    """Decay the lr polynomially (``power``) to zero over ``total_iters`` epochs."""

    def __init__(
        self,
        optimizer: Optimizer,
        total_iters: int = 5,
        power: float = 1.0,
        last_epoch: int = -1,
    ) -> None:
        self.total_iters = total_iters
        self.power = power
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        _warn_get_lr_called_within_step(self)
        if self._is_initial or self.last_epoch > self.total_iters:
            return _param_groups_val_list(self.optimizer, "lr")
        decay = (
            (1.0 - self.last_epoch / self.total_iters)
            / (1.0 - (self.last_epoch - 1) / self.total_iters)
        ) ** self.power
        return [g["lr"] * decay for g in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list:
        return [
            b * (1.0 - min(self.total_iters, self.last_epoch) / self.total_iters) ** self.power
            for b in self.base_lrs
        ]


class CosineAnnealingLR(LRScheduler):
    """Anneal the lr along a cosine from its initial value to ``eta_min`` over ``T_max``.

    The chainable form is PyTorch's: each step rescales the current lr, so the sequence
    matches PyTorch's bit for bit (it differs from the closed form in the last ulps).
    """

    def __init__(
        self, optimizer: Optimizer, T_max: int, eta_min: float = 0.0, last_epoch: int = -1
    ) -> None:
        self.T_max = T_max
        self.eta_min = eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        _warn_get_lr_called_within_step(self)
        groups = self.optimizer.param_groups
        if self._is_initial:
            return _param_groups_val_list(self.optimizer, "lr")
        if self._step_count == 1 and self.last_epoch > 0:
            return [
                self.eta_min
                + (b - self.eta_min) * (1 + math.cos(self.last_epoch * math.pi / self.T_max)) / 2
                for b in self.base_lrs
            ]
        if (self.last_epoch - 1 - self.T_max) % (2 * self.T_max) == 0:
            return [
                g["lr"] + (b - self.eta_min) * (1 - math.cos(math.pi / self.T_max)) / 2
                for b, g in zip(self.base_lrs, groups)
            ]
        return [
            (1 + math.cos(math.pi * self.last_epoch / self.T_max))
            / (1 + math.cos(math.pi * (self.last_epoch - 1) / self.T_max))
            * (g["lr"] - self.eta_min)
            + self.eta_min
            for g in groups
        ]

    def _get_closed_form_lr(self) -> list:
        return [
            self.eta_min
            + (b - self.eta_min) * (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
            for b in self.base_lrs
        ]


class ReduceLROnPlateau(LRScheduler):
    """Multiply the lr by ``factor`` when a metric passed to ``step(metric)`` stops improving
    for more than ``patience`` epochs."""

    def __init__(
        self,
        optimizer: Optimizer,
        mode: str = "min",
        factor: float = 0.1,
        patience: int = 10,
        threshold: float = 1e-4,
        threshold_mode: str = "rel",
        cooldown: int = 0,
        min_lr: list[float] | float = 0,
        eps: float = 1e-8,
    ) -> None:
        if factor >= 1.0:
            raise ValueError("Factor should be < 1.0.")
        self.factor = factor
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        if isinstance(min_lr, (list, tuple)):
            if len(min_lr) != len(optimizer.param_groups):
                raise ValueError(
                    f"expected {len(optimizer.param_groups)} min_lrs, got {len(min_lr)}"
                )
            self.default_min_lr = None
            self.min_lrs = list(min_lr)
        else:
            self.default_min_lr = min_lr
            self.min_lrs = [min_lr] * len(optimizer.param_groups)
        self.patience = patience
        self.cooldown = cooldown
        self.eps = eps
        self.last_epoch = 0
        self._last_lr = _param_groups_val_list(self.optimizer, "lr")
        self._init_is_better(mode=mode, threshold=threshold, threshold_mode=threshold_mode)
        self._reset()

    def _reset(self) -> None:
        self.best = self.mode_worse
        self.cooldown_counter = 0
        self.num_bad_epochs = 0

    def step(self, metrics, epoch=None) -> None:  # type: ignore[override]
        """Record ``metrics`` for this epoch; reduce the lr after a plateau."""
        current = float(metrics)
        if epoch is None:
            epoch = self.last_epoch + 1
        else:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
        self.last_epoch = epoch
        if self._is_better(current, self.best):
            self.best = current
            self.num_bad_epochs = 0
        else:
            self.num_bad_epochs += 1
        if self.in_cooldown:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0  # bad epochs in cooldown do not count
        if self.num_bad_epochs > self.patience:
            self._reduce_lr(epoch)
            self.cooldown_counter = self.cooldown
            self.num_bad_epochs = 0
        self._last_lr = _param_groups_val_list(self.optimizer, "lr")

    def _reduce_lr(self, epoch) -> None:
        if len(self.optimizer.param_groups) != len(self.min_lrs):
            if self.default_min_lr is None:
                raise RuntimeError(
                    "The number of param groups in the `optimizer` "
                    f"({len(self.optimizer.param_groups)}) differs "
                    "from when `ReduceLROnPlateau` was initialized "
                    f"({len(self.min_lrs)}), usually due to a new "
                    "param group being added to the optimizer. Please "
                    "modify the `min_lrs` field to match the length "
                    "of the `optimizer` param groups."
                )
            self.min_lrs = [self.default_min_lr] * len(self.optimizer.param_groups)
        for i, group in enumerate(self.optimizer.param_groups):
            old_lr = float(group["lr"])
            new_lr = max(old_lr * self.factor, self.min_lrs[i])
            if old_lr - new_lr > self.eps:
                _update_param_group_val(group, "lr", new_lr)

    @property
    def in_cooldown(self) -> bool:
        return self.cooldown_counter > 0

    def _is_better(self, a, best) -> bool:
        if self.mode == "min" and self.threshold_mode == "rel":
            return a < best * (1.0 - self.threshold)
        if self.mode == "min" and self.threshold_mode == "abs":
            return a < best - self.threshold
        if self.mode == "max" and self.threshold_mode == "rel":
            return a > best * (self.threshold + 1.0)
        return a > best + self.threshold

    def _init_is_better(self, mode, threshold, threshold_mode) -> None:
        if mode not in {"min", "max"}:
            raise ValueError("mode " + mode + " is unknown!")
        if threshold_mode not in {"rel", "abs"}:
            raise ValueError("threshold mode " + threshold_mode + " is unknown!")
        self.mode_worse = math.inf if mode == "min" else -math.inf
        self.mode = mode
        self.threshold = threshold
        self.threshold_mode = threshold_mode

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore attributes saved by ``state_dict``."""
        self.__dict__.update(state_dict)
        self._init_is_better(
            mode=self.mode, threshold=self.threshold, threshold_mode=self.threshold_mode
        )


class OneCycleLR(LRScheduler):
    """The 1cycle policy: lr up to ``max_lr`` then down to ``initial_lr / final_div_factor``,
    with momentum (or Adam's beta1) cycled the opposite way."""

    def __init__(
        self,
        optimizer: Optimizer,
        max_lr,
        total_steps: int | None = None,
        epochs: int | None = None,
        steps_per_epoch: int | None = None,
        pct_start: float = 0.3,
        anneal_strategy: str = "cos",
        cycle_momentum: bool = True,
        base_momentum=0.85,
        max_momentum=0.95,
        div_factor: float = 25.0,
        final_div_factor: float = 1e4,
        three_phase: bool = False,
        last_epoch: int = -1,
    ) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        if total_steps is not None:
            if total_steps <= 0 or not isinstance(total_steps, int):
                raise ValueError(f"Expected positive integer total_steps, but got {total_steps}")
            self.total_steps = total_steps
        elif epochs is not None and steps_per_epoch is not None:
            if not isinstance(epochs, int) or epochs <= 0:
                raise ValueError(f"Expected positive integer epochs, but got {epochs}")
            if not isinstance(steps_per_epoch, int) or steps_per_epoch <= 0:
                raise ValueError(
                    f"Expected positive integer steps_per_epoch, but got {steps_per_epoch}"
                )
            self.total_steps = epochs * steps_per_epoch
        else:
            raise ValueError("You must define either total_steps OR (epochs AND steps_per_epoch)")

        def phase(end_step, start_lr, end_lr, start_momentum, end_momentum) -> dict:
            return {
                "end_step": end_step,
                "start_lr": start_lr,
                "end_lr": end_lr,
                "start_momentum": start_momentum,
                "end_momentum": end_momentum,
            }

        warmup_end = float(pct_start * self.total_steps) - 1
        if three_phase:
            self._schedule_phases = [
                phase(warmup_end, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                phase(
                    float(2 * pct_start * self.total_steps) - 2,
                    "max_lr",
                    "initial_lr",
                    "base_momentum",
                    "max_momentum",
                ),
                phase(self.total_steps - 1, "initial_lr", "min_lr", "max_momentum", "max_momentum"),
            ]
        else:
            self._schedule_phases = [
                phase(warmup_end, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                phase(self.total_steps - 1, "max_lr", "min_lr", "base_momentum", "max_momentum"),
            ]
        if pct_start < 0 or pct_start > 1 or not isinstance(pct_start, float):
            raise ValueError(f"Expected float between 0 and 1 pct_start, but got {pct_start}")
        if anneal_strategy not in ["cos", "linear"]:
            raise ValueError(
                f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}"
            )
        self._anneal_func_type = anneal_strategy
        max_lrs = _format_param("max_lr", self.optimizer, max_lr)
        if last_epoch == -1:
            for idx, group in enumerate(self.optimizer.param_groups):
                group["initial_lr"] = max_lrs[idx] / div_factor
                group["max_lr"] = max_lrs[idx]
                group["min_lr"] = group["initial_lr"] / final_div_factor
        self.cycle_momentum = cycle_momentum
        if self.cycle_momentum:
            if "momentum" not in self.optimizer.defaults and "betas" not in self.optimizer.defaults:
                raise ValueError(
                    "optimizer must support momentum or beta1 with `cycle_momentum` option enabled"
                )
            self.use_beta1 = "betas" in self.optimizer.defaults
            max_momentums = _format_param("max_momentum", optimizer, max_momentum)
            base_momentums = _format_param("base_momentum", optimizer, base_momentum)
            if last_epoch == -1:
                for m_mom, b_mom, group in zip(
                    max_momentums, base_momentums, optimizer.param_groups
                ):
                    if self.use_beta1:
                        group["betas"] = (m_mom, *group["betas"][1:])
                    else:
                        group["momentum"] = m_mom
                    group["max_momentum"] = m_mom
                    group["base_momentum"] = b_mom
        super().__init__(optimizer, last_epoch)

    def _anneal_func(self, *args, **kwargs):
        if self._anneal_func_type == "cos":
            return self._annealing_cos(*args, **kwargs)
        return self._annealing_linear(*args, **kwargs)

    @staticmethod
    def _annealing_cos(start, end, pct):
        """Cosine from ``start`` to ``end`` as ``pct`` goes from 0 to 1."""
        cos_out = math.cos(math.pi * pct) + 1
        return end + (start - end) / 2.0 * cos_out

    @staticmethod
    def _annealing_linear(start, end, pct):
        """Line from ``start`` to ``end`` as ``pct`` goes from 0 to 1."""
        return (end - start) * pct + start

    def get_lr(self) -> list:
        _warn_get_lr_called_within_step(self)
        lrs = []
        step_num = self.last_epoch
        if step_num > self.total_steps:
            raise ValueError(
                f"Tried to step {step_num} times. "
                f"The specified number of total steps is {self.total_steps}"
            )
        last = len(self._schedule_phases) - 1
        for group in self.optimizer.param_groups:
            start_step = 0.0
            for i, ph in enumerate(self._schedule_phases):
                end_step = ph["end_step"]
                if step_num <= end_step or i == last:
                    pct = (step_num - start_step) / (end_step - start_step)
                    lr = self._anneal_func(group[ph["start_lr"]], group[ph["end_lr"]], pct)
                    if self.cycle_momentum:
                        momentum = self._anneal_func(
                            group[ph["start_momentum"]], group[ph["end_momentum"]], pct
                        )
                    break
                start_step = ph["end_step"]
            lrs.append(lr)
            if self.cycle_momentum:
                if self.use_beta1:
                    group["betas"] = (momentum, *group["betas"][1:])
                else:
                    group["momentum"] = momentum
        return lrs


class CosineAnnealingWarmRestarts(LRScheduler):
    """Cosine annealing restarted every ``T_i`` epochs (``T_0``, then times ``T_mult``)."""

    def __init__(
        self,
        optimizer: Optimizer,
        T_0: int,  # noqa: N803 - PyTorch's names
        T_mult: int = 1,  # noqa: N803
        eta_min: float = 0.0,
        last_epoch: int = -1,
    ) -> None:
        if T_0 <= 0 or not isinstance(T_0, int):
            raise ValueError(f"Expected positive integer T_0, but got {T_0}")
        if T_mult < 1 or not isinstance(T_mult, int):
            raise ValueError(f"Expected integer T_mult >= 1, but got {T_mult}")
        if not isinstance(eta_min, (float, int)):
            raise ValueError(
                f"Expected float or int eta_min, but got {eta_min} of type {type(eta_min)}"
            )
        self.T_0 = T_0
        self.T_i = T_0
        self.T_mult = T_mult
        self.eta_min = eta_min
        self.T_cur = last_epoch
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        _warn_get_lr_called_within_step(self)
        return [
            self.eta_min
            + (base_lr - self.eta_min) * (1 + math.cos(math.pi * self.T_cur / self.T_i)) / 2
            for base_lr in self.base_lrs
        ]

    def step(self, epoch=None) -> None:
        """Advance one epoch, or (fractional epochs allowed) jump to ``epoch``."""
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur = self.T_cur + 1
            if self.T_cur >= self.T_i:
                self.T_cur = self.T_cur % self.T_i
                self.T_i = self.T_i * self.T_mult
        else:
            if epoch < 0:
                raise ValueError(f"Expected non-negative epoch, but got {epoch}")
            if epoch >= self.T_0:
                if self.T_mult == 1:
                    self.T_cur = epoch % self.T_0
                else:
                    n = int(math.log((epoch / self.T_0 * (self.T_mult - 1) + 1), self.T_mult))
                    self.T_cur = epoch - self.T_0 * (self.T_mult**n - 1) / (self.T_mult - 1)
                    self.T_i = self.T_0 * self.T_mult ** (n)
            else:
                self.T_i = self.T_0
                self.T_cur = epoch
        self.last_epoch = math.floor(epoch)
        with _Flag(self, "_get_lr_called_within_step"):
            for group, lr in zip(self.optimizer.param_groups, self.get_lr()):
                _update_param_group_val(group, "lr", lr)
        self._last_lr = _param_groups_val_list(self.optimizer, "lr")


class CyclicLR(LRScheduler):
    """The learning rate (and momentum, inversely) cycled between bounds, ``triangular``,
    ``triangular2``, ``exp_range`` or a ``scale_fn``."""

    def __init__(
        self,
        optimizer: Optimizer,
        base_lr,
        max_lr,
        step_size_up: int = 2000,
        step_size_down: int | None = None,
        mode: str = "triangular",
        gamma: float = 1.0,
        scale_fn=None,
        scale_mode: str = "cycle",
        cycle_momentum: bool = True,
        base_momentum: float = 0.8,
        max_momentum: float = 0.9,
        last_epoch: int = -1,
    ) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        base_lrs = _format_param("base_lr", optimizer, base_lr)
        if last_epoch == -1:
            for lr, group in zip(base_lrs, optimizer.param_groups):
                _update_param_group_val(group, "lr", lr)
        self.max_lrs = _format_param("max_lr", optimizer, max_lr)
        step_size_up = float(step_size_up)
        step_size_down = float(step_size_down) if step_size_down is not None else step_size_up
        self.total_size = step_size_up + step_size_down
        self.step_ratio = step_size_up / self.total_size
        if mode not in ["triangular", "triangular2", "exp_range"] and scale_fn is None:
            raise ValueError("mode is invalid and scale_fn is None")
        self.mode = mode
        self.gamma = gamma
        self._scale_fn_custom = scale_fn
        self.scale_mode = scale_mode
        self._init_scale_fn()
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
                raise ValueError(
                    "optimizer must support momentum or beta1 with `cycle_momentum` option enabled"
                )
            self.use_beta1 = "betas" in self.optimizer.defaults
            self.base_momentums = _format_param("base_momentum", optimizer, base_momentum)
            self.max_momentums = _format_param("max_momentum", optimizer, max_momentum)
            if last_epoch == -1:
                for m_momentum, b_momentum, group in zip(
                    self.max_momentums, self.base_momentums, optimizer.param_groups
                ):
                    if self.use_beta1:
                        group["betas"] = (m_momentum, *group["betas"][1:])
                    else:
                        group["momentum"] = m_momentum
                    group["max_momentum"] = m_momentum
                    group["base_momentum"] = b_momentum
        super().__init__(optimizer, last_epoch)
        self.base_lrs = base_lrs

    def _init_scale_fn(self) -> None:
        if self._scale_fn_custom is not None:
            return
        if self.mode == "triangular":
            self._scale_fn_ref = self._triangular_scale_fn
            self.scale_mode = "cycle"
        elif self.mode == "triangular2":
            self._scale_fn_ref = self._triangular2_scale_fn
            self.scale_mode = "cycle"
        elif self.mode == "exp_range":
            gamma = self.gamma
            self._scale_fn_ref = lambda x: self._exp_range_scale_fn(gamma, x)
            self.scale_mode = "iterations"

    def scale_fn(self, x) -> float:
        """The amplitude's scale at cycle (or iteration) ``x``."""
        if self._scale_fn_custom is not None:
            return self._scale_fn_custom(x)
        return self._scale_fn_ref(x)

    @staticmethod
    def _triangular_scale_fn(x: float) -> float:
        return 1.0

    @staticmethod
    def _triangular2_scale_fn(x: float) -> float:
        return 1 / (2.0 ** (x - 1))

    @staticmethod
    def _exp_range_scale_fn(gamma: float, x: float) -> float:
        return gamma**x

    def get_lr(self) -> list:
        _warn_get_lr_called_within_step(self)
        cycle = math.floor(1 + self.last_epoch / self.total_size)
        x = 1.0 + self.last_epoch / self.total_size - cycle
        if x <= self.step_ratio:
            scale_factor = x / self.step_ratio
        else:
            scale_factor = (x - 1) / (self.step_ratio - 1)
        at = cycle if self.scale_mode == "cycle" else self.last_epoch
        lrs = []
        for base_lr, max_lr in zip(self.base_lrs, self.max_lrs):
            base_height = (max_lr - base_lr) * scale_factor
            lrs.append(base_lr + base_height * self.scale_fn(at))
        if self.cycle_momentum:
            momentums = []
            for base_momentum, max_momentum in zip(self.base_momentums, self.max_momentums):
                base_height = (max_momentum - base_momentum) * scale_factor
                momentums.append(max_momentum - base_height * self.scale_fn(at))
            for group, momentum in zip(self.optimizer.param_groups, momentums):
                if self.use_beta1:
                    group["betas"] = (momentum, *group["betas"][1:])
                else:
                    group["momentum"] = momentum
        return lrs

    def state_dict(self) -> dict[str, Any]:
        """The attributes without the scale function (a custom callable object's own
        attributes are kept)."""
        state = super().state_dict()
        state.pop("_scale_fn_ref", None)
        fn = state.pop("_scale_fn_custom")
        state["_scale_fn_custom"] = None
        if fn is not None and not isinstance(fn, types.FunctionType):
            state["_scale_fn_custom"] = fn.__dict__.copy()
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        fn = state_dict.pop("_scale_fn_custom")
        super().load_state_dict(state_dict)
        if fn is not None:
            self._scale_fn_custom.__dict__.update(fn)
        self._init_scale_fn()


def _check_schedulers(name: str, optimizer, schedulers) -> None:
    for i, scheduler in enumerate(schedulers):
        if not hasattr(scheduler, "optimizer"):
            raise TypeError(f"{name} at index {i} should have `optimizer` as its attribute.")
        if isinstance(scheduler, ReduceLROnPlateau):
            raise ValueError(
                f"{name} does not support `ReduceLROnPlateau` scheduler as it requires "
                "additional kwargs to be specified when calling `step`, but got one at index "
                f"{i} in the given schedulers sequence."
            )
        if optimizer != scheduler.optimizer:
            raise ValueError(
                f"{name} expects all schedulers to belong to the same optimizer, but got "
                f"scheduler {scheduler.__class__.__name__} at index {i} has "
                f"{scheduler.optimizer}, which is different from "
                f"{optimizer.__class__.__name__}."
            )


class _Composite(LRScheduler):
    """The state dict of a scheduler made of schedulers: theirs, nested."""

    def state_dict(self) -> dict[str, Any]:
        state = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "_schedulers")}
        state["_schedulers"] = [s.state_dict() for s in self._schedulers]
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        schedulers = state_dict.pop("_schedulers")
        self.__dict__.update(state_dict)
        state_dict["_schedulers"] = schedulers
        for s, sd in zip(self._schedulers, schedulers):
            s.load_state_dict(sd)


class SequentialLR(_Composite):
    """``schedulers`` in turn, switching at the ``milestones``."""

    def __init__(self, optimizer: Optimizer, schedulers, milestones, last_epoch: int = -1) -> None:
        name = type(self).__name__
        if len(schedulers) < 1:
            raise ValueError(f"{name} expects at least one scheduler, but got no scheduler.")
        _check_schedulers(name, optimizer, schedulers)
        if len(milestones) != len(schedulers) - 1:
            raise ValueError(
                "Sequential Schedulers expects number of schedulers provided to be one more "
                f"than the number of milestone points, but got number of schedulers "
                f"{len(schedulers)} and the number of milestones to be equal to {len(milestones)}"
            )
        self._schedulers = schedulers
        self._milestones = milestones
        self.last_epoch = last_epoch + 1
        self.optimizer = optimizer
        for group in self.optimizer.param_groups:
            _update_param_group_val(group, "lr", group["initial_lr"])
        self.recursive_undo()
        idx = bisect_right(self._milestones, 0)
        self._schedulers[idx]._initial_step()
        self._last_lr = schedulers[idx].get_last_lr()

    def recursive_undo(self, sched=None) -> None:
        """Take back the step each scheduler took when it was made."""
        scheds = self if sched is None else sched
        if hasattr(scheds, "_schedulers"):
            for s in scheds._schedulers:
                self.recursive_undo(s)
        elif hasattr(scheds, "last_epoch"):
            scheds.last_epoch -= 1

    def step(self) -> None:  # type: ignore[override]
        """Advance one epoch with the scheduler of this epoch."""
        self.last_epoch += 1
        idx = bisect_right(self._milestones, self.last_epoch)
        scheduler = self._schedulers[idx]
        if idx > 0 and self._milestones[idx - 1] == self.last_epoch:
            scheduler._update_lr(0)
        else:
            scheduler.step()
        self._last_lr = scheduler.get_last_lr()


class ChainedScheduler(_Composite):
    """Every scheduler of ``schedulers`` stepped at each ``step()``, in order."""

    def __init__(self, schedulers, optimizer: Optimizer | None = None) -> None:
        name = type(self).__name__
        if len(schedulers) < 1:
            raise ValueError(
                f"{name} expects at least one scheduler to be chained, but got no scheduler."
            )
        optimizer = optimizer or schedulers[0].optimizer
        _check_schedulers(name, optimizer, schedulers)
        self._schedulers = schedulers
        self.optimizer = optimizer
        self._last_lr = _param_groups_val_list(self._schedulers[-1].optimizer, "lr")

    def step(self) -> None:  # type: ignore[override]
        """Step every scheduler."""
        for scheduler in self._schedulers:
            scheduler.step()
        self._last_lr = _param_groups_val_list(self._schedulers[-1].optimizer, "lr")
