"""``leafgrad.optim.RMSprop``: RMSprop with optional centering and momentum."""

from __future__ import annotations

from .. import _compile, _factories
from .._tensor import Tensor
from .optimizer import (
    Optimizer,
    _check_capturable,
    _evaluate,
    _get_scalar_dtype,
    _get_value,
    _to_scalar,
    _use_grad_for_differentiable,
)

__all__ = ["RMSprop", "rmsprop"]


class RMSprop(Optimizer):
    """RMSprop, as ``torch.optim.RMSprop`` (its for-loop kernel).

    >>> opt = leafgrad.optim.RMSprop([p], lr=1e-2, alpha=0.99, centered=True)
    """

    def __init__(
        self,
        params,
        lr: float | Tensor = 1e-2,
        alpha: float = 0.99,
        eps: float = 1e-8,
        weight_decay: float = 0,
        momentum: float = 0,
        centered: bool = False,
        capturable: bool = False,
        foreach: bool | None = None,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= momentum:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= alpha:
            raise ValueError(f"Invalid alpha value: {alpha}")
        defaults = {
            "lr": lr,
            "momentum": momentum,
            "alpha": alpha,
            "eps": eps,
            "centered": centered,
            "weight_decay": weight_decay,
            "capturable": capturable,
            "foreach": foreach,
            "maximize": maximize,
            "differentiable": differentiable,
        }
        super().__init__(params, defaults)

    def __setstate__(self, state) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("momentum", 0)
            group.setdefault("centered", False)
            group.setdefault("foreach", None)
            group.setdefault("maximize", False)
            group.setdefault("differentiable", False)
            group.setdefault("capturable", False)
            for p in group["params"]:
                p_state = self.state.get(p, [])
                if len(p_state) != 0 and not isinstance(p_state["step"], Tensor):
                    device = p.device if group["capturable"] else None
                    p_state["step"] = _factories.tensor(
                        float(p_state["step"]), dtype=_get_scalar_dtype(), device=device
                    )

    def _init_group(self, group, params, grads, square_avgs, momentum_bufs, grad_avgs, steps):
        has_complex = False
        for p in group["params"]:
            if p.grad is None:
                continue
            has_complex |= p.is_complex()
            params.append(p)
            grads.append(p.grad)
            state = self.state[p]
            if len(state) == 0:
                device = p.device if group["capturable"] else None
                state["step"] = _factories.zeros((), dtype=_get_scalar_dtype(), device=device)
                state["square_avg"] = _factories.zeros_like(p)
                if group["momentum"] > 0:
                    state["momentum_buffer"] = _factories.zeros_like(p)
                if group["centered"]:
                    state["grad_avg"] = _factories.zeros_like(p)
            square_avgs.append(state["square_avg"])
            steps.append(state["step"])
            if group["momentum"] > 0:
                momentum_bufs.append(state["momentum_buffer"])
            if group["centered"]:
                grad_avgs.append(state["grad_avg"])
        return has_complex

    @_use_grad_for_differentiable
    def step(self, closure=None):
        """Perform one optimization step; ``closure`` re-evaluates the loss."""
        loss = _evaluate(closure)
        for group in self.param_groups:
            params: list[Tensor] = []
            grads: list[Tensor] = []
            square_avgs: list[Tensor] = []
            grad_avgs: list[Tensor] = []
            momentum_bufs: list[Tensor] = []
            steps: list[Tensor] = []
            has_complex = self._init_group(
                group, params, grads, square_avgs, momentum_bufs, grad_avgs, steps
            )
            rmsprop(
                params,
                grads,
                square_avgs,
                grad_avgs,
                momentum_bufs,
                steps,
                lr=group["lr"],
                alpha=group["alpha"],
                eps=group["eps"],
                weight_decay=group["weight_decay"],
                momentum=group["momentum"],
                centered=group["centered"],
                maximize=group["maximize"],
                differentiable=group["differentiable"],
                capturable=group["capturable"],
                has_complex=has_complex,
            )
        return loss


def rmsprop(
    params: list[Tensor],
    grads: list[Tensor],
    square_avgs: list[Tensor],
    grad_avgs: list[Tensor],
    momentum_buffer_list: list[Tensor],
    state_steps: list[Tensor],
    foreach: bool | None = None,
    maximize: bool = False,
    differentiable: bool = False,
    capturable: bool = False,
    has_complex: bool = False,
    *,
    lr: float,
    alpha: float,
    eps: float,
    weight_decay: float,
    momentum: float,
    centered: bool,
) -> None:
    """The RMSprop update of ``torch.optim.rmsprop`` (single-tensor kernel), in place."""
    if not all(isinstance(t, Tensor) for t in state_steps):
        raise RuntimeError(
            "API has changed, `state_steps` argument must contain a list of singleton tensors"
        )
    if has_complex:
        raise NotImplementedError(
            "leafgrad.optim.RMSprop does not support complex parameters yet (needs view_as_real)"
        )
    lr = _to_scalar(lr)
    for i, param in enumerate(params):
        step = state_steps[i]
        if capturable:
            _check_capturable(param, step)
        grad = grads[i] if not maximize else -grads[i]
        square_avg = square_avgs[i]
        step += 1
        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)
        square_avg.mul_(alpha).addcmul_(grad, grad, value=1 - alpha)
        if centered:
            grad_avg = grad_avgs[i]
            grad_avg.lerp_(grad, 1 - alpha)
            avg = square_avg.addcmul(grad_avg, grad_avg, value=-1).sqrt_()
        else:
            avg = square_avg.sqrt()
        # differentiable keeps avg out of place so autograd can record it.
        avg = avg.add(eps) if differentiable else avg.add_(eps)
        if momentum > 0:
            buf = momentum_buffer_list[i]
            buf.mul_(momentum).addcdiv_(grad, avg)
            if isinstance(lr, Tensor) and _compile.is_compiling():
                param.sub_(buf * lr)  # the same numbers, with no host read of lr
            else:
                param.add_(buf, alpha=-_get_value(lr))
        elif isinstance(lr, Tensor) and _compile.is_compiling():
            param.sub_(grad.div(avg) * lr)
        else:
            param.addcdiv_(grad, avg, value=-_get_value(lr))
