"""``leafgrad.optim.AdamW``: Adam with decoupled weight decay (``param.mul_(1 - lr * wd)``)."""

from __future__ import annotations

from .._tensor import Tensor
from .adam import Adam, adam

__all__ = ["AdamW", "adamw"]


class AdamW(Adam):
    """AdamW, as ``torch.optim.AdamW``: an Adam whose groups have ``decoupled_weight_decay``.

    >>> opt = leafgrad.optim.AdamW([p], lr=1e-3, weight_decay=1e-2)
    """

    def __init__(
        self,
        params,
        lr: float | Tensor = 1e-3,
        betas: tuple = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 1e-2,
        amsgrad: bool = False,
        *,
        maximize: bool = False,
        foreach: bool | None = None,
        capturable: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        super().__init__(
            params,
            lr,
            betas,
            eps,
            weight_decay,
            amsgrad,
            foreach=foreach,
            maximize=maximize,
            capturable=capturable,
            differentiable=differentiable,
            fused=fused,
            decoupled_weight_decay=True,
        )

    def __setstate__(self, state) -> None:
        super().__setstate__(state)
        # Loading any state into AdamW keeps its weight decay decoupled, as in PyTorch.
        for group in self.param_groups:
            group["decoupled_weight_decay"] = True


def adamw(
    params,
    grads,
    exp_avgs,
    exp_avg_sqs,
    max_exp_avg_sqs,
    state_steps,
    foreach=None,
    capturable=False,
    differentiable=False,
    fused=None,
    grad_scale=None,
    found_inf=None,
    has_complex=False,
    *,
    amsgrad,
    beta1,
    beta2,
    lr,
    weight_decay,
    eps,
    maximize,
) -> None:
    """The AdamW update: ``adam`` with ``decoupled_weight_decay=True``."""
    adam(
        params,
        grads,
        exp_avgs,
        exp_avg_sqs,
        max_exp_avg_sqs,
        state_steps,
        foreach=foreach,
        capturable=capturable,
        differentiable=differentiable,
        fused=fused,
        grad_scale=grad_scale,
        found_inf=found_inf,
        has_complex=has_complex,
        amsgrad=amsgrad,
        beta1=beta1,
        beta2=beta2,
        lr=lr,
        weight_decay=weight_decay,
        eps=eps,
        maximize=maximize,
        decoupled_weight_decay=True,
    )
