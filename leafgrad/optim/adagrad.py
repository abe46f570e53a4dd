"""``leafgrad.optim.Adagrad``: Adagrad with learning-rate decay and an initial accumulator."""

from __future__ import annotations

from .. import _compile, _factories
from .._tensor import Tensor
from .optimizer import (
    Optimizer,
    _check_fused_flags,
    _device_dtype_check_for_fused,
    _evaluate,
    _get_scalar_dtype,
    _get_value,
    _to_scalar,
    _use_grad_for_differentiable,
    fused_kernel_step,
)

__all__ = ["Adagrad", "adagrad"]


class Adagrad(Optimizer):
    """Adagrad, as ``torch.optim.Adagrad`` (its for-loop kernel). Its state is created in the
    constructor (``step`` 0 and ``sum`` filled with ``initial_accumulator_value``).

    >>> opt = leafgrad.optim.Adagrad([p], lr=1e-2, lr_decay=1e-3)
    """

    def __init__(
        self,
        params,
        lr: float | Tensor = 1e-2,
        lr_decay: float = 0,
        weight_decay: float = 0,
        initial_accumulator_value: float = 0,
        eps: float = 1e-10,
        foreach: bool | None = None,
        *,
        maximize: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= lr_decay:
            raise ValueError(f"Invalid lr_decay value: {lr_decay}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= initial_accumulator_value:
            raise ValueError(
                f"Invalid initial_accumulator_value value: {initial_accumulator_value}"
            )
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        defaults = {
            "lr": lr,
            "lr_decay": lr_decay,
            "eps": eps,
            "weight_decay": weight_decay,
            "initial_accumulator_value": initial_accumulator_value,
            "foreach": foreach,
            "maximize": maximize,
            "differentiable": differentiable,
            "fused": fused,
        }
        super().__init__(params, defaults)
        if fused:
            self._need_device_dtype_check_for_fused = True
        _check_fused_flags(self, fused, foreach, differentiable)
        for group in self.param_groups:
            for p in group["params"]:
                self._init_state(self.state[p], p, group)

    def _init_state(self, state: dict, p: Tensor, group: dict) -> None:
        # PyTorch fills ``sum`` with the constructor's value even for groups that set their own.
        if group["fused"]:
            state["step"] = _factories.zeros(
                (), dtype=_get_scalar_dtype(is_fused=True), device=p.device
            )
        else:
            state["step"] = _factories.tensor(0.0, dtype=_get_scalar_dtype())
        init = self.defaults["initial_accumulator_value"]
        if p.is_complex():
            init = complex(init, init)
        state["sum"] = _factories.full_like(p, init)

    def __setstate__(self, state) -> None:
        super().__setstate__(state)
        fused = None
        for group in self.param_groups:
            group.setdefault("foreach", None)
            group.setdefault("maximize", False)
            group.setdefault("differentiable", False)
            fused = group.setdefault("fused", None)
            for p in group["params"]:
                p_state = self.state.get(p, [])
                if len(p_state) != 0 and not isinstance(p_state["step"], Tensor):
                    device = p.device if group["fused"] else None
                    p_state["step"] = _factories.tensor(
                        float(p_state["step"]),
                        dtype=_get_scalar_dtype(is_fused=fused if device else None),
                        device=device,
                    )

    def share_memory(self) -> None:
        """PyTorch moves the ``sum`` buffers to shared memory; here they already are shareable."""

    def _init_group(self, group, params, grads, state_sums, steps):
        has_sparse_grad = has_complex = False
        for p in group["params"]:
            if p.grad is None:
                continue
            if group["fused"] and getattr(self, "_need_device_dtype_check_for_fused", True):
                _device_dtype_check_for_fused(p)
                self._need_device_dtype_check_for_fused = False
            has_complex |= p.is_complex()
            params.append(p)
            grads.append(p.grad)
            state = self.state[p]
            if len(state) == 0:
                if group["fused"]:
                    _device_dtype_check_for_fused(p)
                self._init_state(state, p, group)
            state_sums.append(state["sum"])
            steps.append(state["step"])
        return has_sparse_grad, has_complex

    @_use_grad_for_differentiable
    def step(self, closure=None):
        """Perform one optimization step; ``closure`` re-evaluates the loss."""
        loss = _evaluate(closure)
        for group in self.param_groups:
            params: list[Tensor] = []
            grads: list[Tensor] = []
            state_sums: list[Tensor] = []
            steps: list[Tensor] = []
            _, has_complex = self._init_group(group, params, grads, state_sums, steps)

            def run(
                group=group,
                params=params,
                grads=grads,
                sums=state_sums,
                steps=steps,
                cx=has_complex,
            ):
                adagrad(
                    params,
                    grads,
                    sums,
                    steps,
                    lr=group["lr"],
                    weight_decay=group["weight_decay"],
                    lr_decay=group["lr_decay"],
                    eps=group["eps"],
                    maximize=group["maximize"],
                    differentiable=group["differentiable"],
                    has_complex=cx,
                )
                return []

            if group["fused"] and not _compile.is_compiling():
                fused_kernel_step(self, [*params, *state_sums], grads, run, steps)
            else:
                run()
        return loss


def adagrad(
    params: list[Tensor],
    grads: list[Tensor],
    state_sums: list[Tensor],
    state_steps: list[Tensor],
    fused: bool | None = None,
    grad_scale: Tensor | None = None,
    found_inf: Tensor | None = None,
    has_sparse_grad: bool = False,
    foreach: bool | None = None,
    differentiable: bool = False,
    has_complex: bool = False,
    *,
    lr: float,
    weight_decay: float,
    lr_decay: float,
    eps: float,
    maximize: bool,
) -> None:
    """The Adagrad update of ``torch.optim.adagrad`` (single-tensor kernel), in place."""
    if not all(isinstance(t, Tensor) for t in state_steps):
        raise RuntimeError(
            "API has changed, `state_steps` argument must contain a list of singleton tensors"
        )
    if has_complex:
        raise NotImplementedError(
            "leafgrad.optim.Adagrad does not support complex parameters yet (needs view_as_real)"
        )
    lr = _to_scalar(lr)
    for param, grad, state_sum, step_t in zip(params, grads, state_sums, state_steps):
        step_t += 1
        grad = grad if not maximize else -grad
        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)
        state_sum.addcmul_(grad, grad, value=1)
        std = state_sum.sqrt() + eps if differentiable else state_sum.sqrt().add_(eps)
        if _compile.is_compiling():
            # inside leafgrad.compile the step has no host value: the same update as tensors
            clr = lr / (1 + (step_t.double() - 1) * lr_decay)
            param.sub_(grad.div(std).mul(clr))
            continue
        step = _get_value(step_t)
        clr = lr / (1 + (step - 1) * lr_decay)
        param.addcdiv_(grad, std, value=-_get_value(clr))
