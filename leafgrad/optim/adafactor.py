"""``leafgrad.optim.Adafactor``: Adafactor (Shazeer & Stern, 2018) as PyTorch 2.13 writes it: a
factored second moment (row and column means of the squared gradient) for parameters of two or
more dims, a full one for vectors, relative step sizes and update clipping by ``d``."""

from __future__ import annotations

from .. import _factories
from .._tensor import Tensor
from ..autograd import grad_mode
from ..ops.tensor_info import finfo
from .optimizer import Optimizer, _evaluate, _get_scalar_dtype, _to_scalar

__all__ = ["Adafactor", "adafactor"]


class Adafactor(Optimizer):
    """Adafactor, as ``torch.optim.Adafactor`` (its for-loop kernel; ``foreach=True`` its
    multi-tensor kernel's order of the last scaling and add).

    >>> opt = leafgrad.optim.Adafactor(model.parameters(), lr=1e-2)
    """

    def __init__(
        self,
        params,
        lr: float | Tensor = 1e-2,
        beta2_decay: float = -0.8,
        eps: tuple = (None, 1e-3),
        d: float = 1.0,
        weight_decay: float = 0.0,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
    ) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 >= beta2_decay:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not 0.0 <= eps[0]:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not 0.0 <= eps[1]:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not 1.0 <= d:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        defaults = {
            "lr": lr,
            "beta2_decay": beta2_decay,
            "eps": eps,
            "d": d,
            "weight_decay": weight_decay,
            "foreach": foreach,
            "maximize": maximize,
        }
        super().__init__(params, defaults)

    def __setstate__(self, state) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("foreach", None)
            for p in group["params"]:
                p_state = self.state.get(p, [])
                if len(p_state) != 0 and not isinstance(p_state["step"], Tensor):
                    p_state["step"] = _factories.tensor(
                        float(p_state["step"]), dtype=_get_scalar_dtype()
                    )

    def _init_group(self, group, params, grads, row_vars, col_vars, variances, steps) -> bool:
        for p in group["params"]:
            if p.grad is None:
                continue
            if p.is_complex():
                raise RuntimeError("Adafactor does not support complex parameters")
            params.append(p)
            grads.append(p.grad)
            state = self.state[p]
            if len(state) == 0:
                state["step"] = _factories.tensor(0.0, dtype=_get_scalar_dtype())
                if p.grad.dim() > 1:
                    row_shape = list(p.grad.shape)
                    row_shape[-1] = 1
                    state["row_var"] = p.grad.new_zeros(row_shape)
                    col_shape = list(p.grad.shape)
                    col_shape[-2] = 1
                    state["col_var"] = p.grad.new_zeros(col_shape)
                else:
                    state["variance"] = _factories.zeros_like(p.grad)
            row_vars.append(state.get("row_var", None))
            col_vars.append(state.get("col_var", None))
            variances.append(state.get("variance", None))
            steps.append(state["step"])
        return False

    def step(self, closure=None):
        """Perform one optimization step; ``closure`` re-evaluates the loss."""
        loss = _evaluate(closure)
        with grad_mode.no_grad():
            for group in self.param_groups:
                params: list[Tensor] = []
                grads: list[Tensor] = []
                row_vars: list = []
                col_vars: list = []
                variances: list = []
                steps: list[Tensor] = []
                eps1, eps2 = group["eps"]
                has_complex = self._init_group(
                    group, params, grads, row_vars, col_vars, variances, steps
                )
                adafactor(
                    params,
                    grads,
                    row_vars,
                    col_vars,
                    variances,
                    steps,
                    d=group["d"],
                    lr=group["lr"],
                    beta2_decay=group["beta2_decay"],
                    weight_decay=group["weight_decay"],
                    eps1=eps1,
                    eps2=eps2,
                    foreach=group["foreach"],
                    maximize=group["maximize"],
                    grad_scale=getattr(self, "grad_scale", None),
                    found_inf=getattr(self, "found_inf", None),
                    has_complex=has_complex,
                )
        return loss


def adafactor(
    params: list[Tensor],
    grads: list[Tensor],
    row_vars: list,
    col_vars: list,
    variances: list,
    state_steps: list[Tensor],
    foreach: bool | None = None,
    grad_scale=None,
    found_inf=None,
    has_complex: bool = False,
    *,
    d: float,
    lr,
    beta2_decay: float,
    weight_decay: float,
    eps1,
    eps2: float,
    maximize: bool,
) -> None:
    """The Adafactor update of ``torch.optim._adafactor``, in place. The multi-tensor kernel
    (``foreach=True``) computes the same numbers in the same order, except that it scales each
    update by its step size before adding it (the for-loop kernel adds with ``alpha``); each
    parameter's update reads only its own state, so the kernels' orders of parameters agree."""
    if not all(isinstance(t, Tensor) for t in state_steps):
        raise RuntimeError("`state_steps` argument must contain a list of singleton tensors")
    if grad_scale is not None or found_inf is not None:
        raise AssertionError("Grad scaling should occur outside of optimizer.step()")
    lr = _to_scalar(lr)
    for i, param in enumerate(params):
        grad = grads[i] if not maximize else -grads[i]
        step_t = state_steps[i]
        if eps1 is None:  # the first parameter's dtype decides, in both kernels
            eps1 = finfo(param.dtype).eps
        step_t += 1
        step_float = step_t.item()
        one_minus_beta2_t = step_float**beta2_decay
        rho_t = min(lr, 1 / (step_float**0.5))
        alpha = max(eps2, param.norm(2).item() / (param.numel() ** 0.5)) * rho_t
        if weight_decay != 0:
            param.mul_(1 - lr * weight_decay)
        if grad.dim() > 1:
            row_mean = grad.norm(dim=-1, keepdim=True).square_().div_(grad.size(-1))
            row_vars[i].lerp_(row_mean, one_minus_beta2_t)
            col_mean = grad.norm(dim=-2, keepdim=True).square_().div_(grad.size(-2))
            col_vars[i].lerp_(col_mean, one_minus_beta2_t)
            var_estimate = row_vars[i] @ col_vars[i]
            var_estimate.div_(row_vars[i].mean(dim=-2, keepdim=True).clamp_(min=eps1))
        else:
            variances[i].lerp_(grad * grad, one_minus_beta2_t)
            var_estimate = variances[i].clone()
        update = var_estimate.clamp_(min=eps1 * eps1).rsqrt_()
        update.mul_(grad)
        denom = max(1.0, update.norm(2).item() / ((update.numel() ** 0.5) * d))
        if foreach:
            param.add_(update.mul_(-alpha / denom))
        else:
            param.add_(update, alpha=-alpha / denom)
