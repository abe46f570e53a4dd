"""``leafgrad.optim.swa_utils``: stochastic weight averaging, as ``torch.optim.swa_utils``.

``AveragedModel`` keeps a copy of a model whose parameters are a running (or exponential) average
of the model's, ``SWALR`` anneals each group's learning rate to a fixed ``swa_lr``, and
``update_bn`` recomputes BatchNorm statistics for the averaged weights. The arithmetic is
PyTorch's, step for step: on the CPU its per-parameter ``avg + (p - avg) / (n + 1)`` with ``n``
an int64 tensor, on accelerators its ``foreach`` lerp by ``1 / (n + 1)``.
"""

from __future__ import annotations

import itertools
import math
import warnings
from copy import deepcopy
from typing import Any

from .. import _dtype as D
from .._tensor import Tensor
from ..autograd.grad_mode import no_grad
from ..nn.modules.module import Module
from ..nn.modules.normalization import _BatchNorm
from .lr_scheduler import LRScheduler, _format_param

__all__ = [
    "SWALR",
    "AveragedModel",
    "get_ema_avg_fn",
    "get_ema_multi_avg_fn",
    "get_swa_avg_fn",
    "get_swa_multi_avg_fn",
    "update_bn",
]

# the device types whose foreach kernels PyTorch's AveragedModel uses by default
_FOREACH_DEVICES = ("cuda", "xpu", "privateuseone")


def _check_decay(decay) -> None:
    if decay < 0.0 or decay > 1.0:
        raise ValueError(
            f"Invalid decay value {decay} provided. Please provide a value in [0,1] range."
        )


def _inexact(t: Tensor) -> bool:
    return t.dtype.is_floating_point or t.dtype.is_complex


def get_ema_multi_avg_fn(decay=0.999):
    """An exponential moving average over lists of parameters (``foreach`` lerp by
    ``1 - decay``)."""
    _check_decay(decay)

    @no_grad()
    def ema_update(ema_param_list, current_param_list, _) -> None:
        if _inexact(ema_param_list[0]):
            for p_ema, p_model in zip(ema_param_list, current_param_list):
                p_ema.lerp_(p_model, 1 - decay)
        else:
            for p_ema, p_model in zip(ema_param_list, current_param_list, strict=True):
                p_ema.copy_(p_ema * decay + p_model * (1 - decay))

    return ema_update


def get_swa_multi_avg_fn():
    """The running average over lists of parameters: lerp by ``1 / (n + 1)``."""

    @no_grad()
    def swa_update(averaged_param_list, current_param_list, num_averaged) -> None:
        if _inexact(averaged_param_list[0]):
            weight = 1 / (num_averaged + 1)
            for p_avg, p_model in zip(averaged_param_list, current_param_list):
                p_avg.lerp_(p_model, weight)
        else:
            diffs = [c - a for c, a in zip(current_param_list, averaged_param_list)]
            for p_avg, d in zip(averaged_param_list, diffs):
                if isinstance(num_averaged, Tensor):
                    p_avg.addcdiv_(d, num_averaged + 1)
                else:
                    p_avg.add_(d, alpha=1.0 / (num_averaged + 1))

    return swa_update


def get_ema_avg_fn(decay=0.999):
    """An exponential moving average of one parameter."""
    _check_decay(decay)

    @no_grad()
    def ema_update(ema_param: Tensor, current_param: Tensor, num_averaged):
        return decay * ema_param + (1 - decay) * current_param

    return ema_update


def get_swa_avg_fn():
    """The running average of one parameter."""

    @no_grad()
    def swa_update(averaged_param: Tensor, current_param: Tensor, num_averaged):
        return averaged_param + (current_param - averaged_param) / (num_averaged + 1)

    return swa_update


def _grouped(self_params: list, model_params: list) -> dict:
    """The pairs grouped by the averaged tensor's (device, dtype), in first-seen order."""
    groups: dict = {}
    for a, p in zip(self_params, model_params):
        pair = groups.setdefault((a.device, a.dtype), ([], []))
        pair[0].append(a)
        pair[1].append(p)
    return groups


class AveragedModel(Module):
    """A copy of ``model`` whose parameters ``update_parameters`` averages (SWA by default,
    ``avg_fn`` / ``multi_avg_fn`` for another average such as EMA). ``n_averaged`` is an int64
    buffer; with ``use_buffers`` the buffers are averaged too, else copied from the model."""

    def __init__(
        self, model: Module, device=None, avg_fn=None, multi_avg_fn=None, use_buffers=False
    ) -> None:
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        from .._factories import tensor

        self.register_buffer("n_averaged", tensor(0, dtype=D.int64, device=device))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args, **kwargs):
        """The averaged model's forward."""
        return self.module(*args, **kwargs)

    def update_parameters(self, model: Module) -> None:
        """Average ``model``'s parameters (and buffers, with ``use_buffers``) into this copy."""
        if self.use_buffers:
            self_param = itertools.chain(self.module.parameters(), self.module.buffers())
            model_param = itertools.chain(model.parameters(), model.buffers())
        else:
            self_param, model_param = self.parameters(), model.parameters()
        self_detached, model_detached = [], []
        copy_param = bool(self.n_averaged == 0)
        for p_averaged, p_model in zip(self_param, model_param):
            p_model_ = p_model.detach().to(p_averaged.device)
            self_detached.append(p_averaged.detach())
            model_detached.append(p_model_)
            if copy_param:
                p_averaged.detach().copy_(p_model_)
        if self.n_averaged > 0:
            if self.multi_avg_fn is not None or self.avg_fn is None:
                for (device, _), (self_params, model_params) in _grouped(
                    self_detached, model_detached
                ).items():
                    n_averaged = self.n_averaged.to(device)
                    if self.multi_avg_fn:
                        self.multi_avg_fn(self_params, model_params, n_averaged)
                    elif device is not None and device.type in _FOREACH_DEVICES:
                        get_swa_multi_avg_fn()(self_params, model_params, n_averaged)
                    else:
                        avg_fn = get_swa_avg_fn()
                        for p_averaged, p_model in zip(self_params, model_params, strict=True):
                            p_averaged.copy_(avg_fn(p_averaged, p_model, n_averaged))
            else:
                for p_averaged, p_model in zip(self_detached, model_detached, strict=True):
                    n_averaged = self.n_averaged.to(p_averaged.device)
                    p_averaged.detach().copy_(self.avg_fn(p_averaged.detach(), p_model, n_averaged))
        if not self.use_buffers:
            # the buffers follow the model's
            for b_swa, b_model in zip(self.module.buffers(), model.buffers(), strict=True):
                b_swa.detach().copy_(b_model.detach().to(b_swa.device))
        self.n_averaged += 1


@no_grad()
def update_bn(loader, model: Module, device=None) -> None:
    """Recompute the running statistics of ``model``'s BatchNorm layers in one pass over
    ``loader`` (each batch a tensor, or a list/tuple whose first element is the input), as a
    cumulative average."""
    momenta = {}
    for module in model.modules():
        if isinstance(module, _BatchNorm):
            module.reset_running_stats()
            momenta[module] = module.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None
    for input in loader:
        if isinstance(input, (list, tuple)):
            input = input[0]
        if device is not None:
            input = input.to(device)
        model(input)
    for bn_module in momenta:
        bn_module.momentum = momenta[bn_module]
    model.train(was_training)


class SWALR(LRScheduler):
    """Anneals each group's learning rate from its value to ``swa_lr`` over ``anneal_epochs``
    epochs (``"cos"`` or ``"linear"``), then keeps it there."""

    def __init__(
        self, optimizer, swa_lr, anneal_epochs=10, anneal_strategy="cos", last_epoch=-1
    ) -> None:
        swa_lrs = _format_param("swa_lr", optimizer, swa_lr)
        for lr, group in zip(swa_lrs, optimizer.param_groups, strict=True):
            group["swa_lr"] = lr
        if anneal_strategy not in ["cos", "linear"]:
            raise ValueError(
                f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}"
            )
        self._set_anneal_func(anneal_strategy)
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t):
        return t

    @staticmethod
    def _cosine_anneal(t):
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr, swa_lr, alpha):
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self):
        """The groups' learning rates of this epoch, between ``lr`` and ``swa_lr``."""
        if not self._get_lr_called_within_step:
            warnings.warn(
                "To get the last learning rate computed by the scheduler, please use "
                "`get_last_lr()`.",
                UserWarning,
                stacklevel=2,
            )
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_t = max(0, min(1, (step - 1) / max(1, self.anneal_epochs)))
        prev_alpha = self.anneal_func(prev_t)
        prev_lrs = [
            self._get_initial_lr(group["lr"], group["swa_lr"], prev_alpha)
            for group in self.optimizer.param_groups
        ]
        t = max(0, min(1, step / max(1, self.anneal_epochs)))
        alpha = self.anneal_func(t)
        return [
            group["swa_lr"] * alpha + lr * (1 - alpha)
            for group, lr in zip(self.optimizer.param_groups, prev_lrs, strict=True)
        ]

    def _set_anneal_func(self, anneal_strategy) -> None:
        self._anneal_strategy = anneal_strategy
        if anneal_strategy == "cos":
            self.anneal_func = self._cosine_anneal
        else:
            self.anneal_func = self._linear_anneal

    def state_dict(self) -> dict[str, Any]:
        """Every attribute but the optimizer and the anneal function."""
        return {
            key: value
            for key, value in self.__dict__.items()
            if key not in ("optimizer", "anneal_func")
        }

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore attributes saved by ``state_dict``."""
        self.__dict__.update(state_dict)
        self._set_anneal_func(self._anneal_strategy)
