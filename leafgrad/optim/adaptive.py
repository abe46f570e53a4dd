"""``leafgrad.optim.Adamax``, ``NAdam``, ``RAdam``, ``Adadelta``, ``Rprop`` and ``ASGD``: PyTorch
2.13's single-tensor kernels (its CPU default), op for op, so trajectories, state and versions are
PyTorch's.

``capturable=True`` (and ``differentiable=True``, and ``leafgrad.compile``, where the step has no
value on the host) takes PyTorch's tensor-step branch; complex parameters raise (they need
``view_as_real``).
"""

from __future__ import annotations

from .. import _compile, _factories
from .._tensor import Tensor
from .optimizer import (
    _CAPTURABLE_DEVICES,
    Optimizer,
    _check_capturable,
    _evaluate,
    _get_scalar_dtype,
    _get_value,
    _to_scalar,
    _use_grad_for_differentiable,
)

__all__ = ["Adamax", "NAdam", "RAdam", "Adadelta", "Rprop", "ASGD"]


def _check_lr(lr) -> None:
    if isinstance(lr, Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")
    if not 0.0 <= lr:
        raise ValueError(f"Invalid learning rate: {lr}")


def _check_common(lr, eps, betas=None, weight_decay=0.0) -> None:
    _check_lr(lr)
    if not 0.0 <= eps:
        raise ValueError(f"Invalid epsilon value: {eps}")
    if betas is not None:
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
    if not 0.0 <= weight_decay:
        raise ValueError(f"Invalid weight_decay value: {weight_decay}")


def _step_tensor(p: Tensor, capturable: bool, value: float = 0.0) -> Tensor:
    """PyTorch keeps ``step`` (and NAdam's ``mu_product``) on the CPU unless capturable."""
    if capturable:
        return _factories.full((), value, dtype=_get_scalar_dtype(), device=p.device)
    return _factories.tensor(value, dtype=_get_scalar_dtype())


def _refuse_complex(name: str, has_complex: bool) -> None:
    if has_complex:
        raise NotImplementedError(
            f"leafgrad.optim.{name} does not support complex parameters yet (needs view_as_real)"
        )


class _Adaptive(Optimizer):
    """What the four share: lazy state, ``__setstate__`` defaults, the per-group loop."""

    _STATE: tuple = ()  # names of the per-parameter buffers, zeros like the parameter
    _SETSTATE_DEFAULTS: tuple = ("foreach", "maximize", "differentiable", "capturable")

    def __setstate__(self, state) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            for key in self._SETSTATE_DEFAULTS:
                group.setdefault(key, None if key == "foreach" else False)
            for p in group["params"]:
                p_state = self.state.get(p, [])
                if len(p_state) != 0 and not isinstance(p_state["step"], Tensor):
                    p_state["step"] = _step_tensor(p, group["capturable"], float(p_state["step"]))

    def _init_group(self, group, params, grads, buffers, steps) -> bool:
        has_complex = False
        for p in group["params"]:
            if p.grad is None:
                continue
            has_complex |= p.is_complex()
            params.append(p)
            grads.append(p.grad)
            state = self.state[p]
            if len(state) == 0:
                self._init_state(state, p, group)
            for name, found in zip(self._STATE, buffers):
                found.append(state[name])
            steps.append(state["step"])
        return has_complex

    def _init_state(self, state: dict, p: Tensor, group: dict) -> None:
        state["step"] = _step_tensor(p, group["capturable"])
        for name in self._STATE:
            state[name] = _factories.zeros_like(p)

    @_use_grad_for_differentiable
    def step(self, closure=None):
        """Perform one optimization step; ``closure`` re-evaluates the loss."""
        loss = _evaluate(closure)
        for group in self.param_groups:
            params: list = []
            grads: list = []
            buffers: list = [[] for _ in self._STATE]
            steps: list = []
            has_complex = self._init_group(group, params, grads, buffers, steps)
            _refuse_complex(type(self).__name__, has_complex)
            self._update(group, params, grads, buffers, steps)
        return loss


def _tensor_step(group) -> bool:
    return group["capturable"] or group["differentiable"] or _compile.is_compiling()


class Adamax(_Adaptive):
    """Adamax (Adam with the infinity norm), as ``torch.optim.Adamax``."""

    _STATE = ("exp_avg", "exp_inf")

    def __init__(
        self,
        params,
        lr: float | Tensor = 2e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        foreach: bool | None = None,
        *,
        maximize: bool = False,
        differentiable: bool = False,
        capturable: bool = False,
    ) -> None:
        _check_common(lr, eps, betas, weight_decay)
        defaults = {
            "lr": lr,
            "betas": betas,
            "eps": eps,
            "weight_decay": weight_decay,
            "foreach": foreach,
            "maximize": maximize,
            "differentiable": differentiable,
            "capturable": capturable,
        }
        super().__init__(params, defaults)

    def _update(self, group, params, grads, buffers, steps) -> None:
        exp_avgs, exp_infs = buffers
        beta1, beta2 = group["betas"]
        lr, eps, weight_decay = _to_scalar(group["lr"]), group["eps"], group["weight_decay"]
        tensor_step = _tensor_step(group)
        for param, grad, exp_avg, exp_inf, step_t in zip(params, grads, exp_avgs, exp_infs, steps):
            grad = grad if not group["maximize"] else -grad
            if group["capturable"] and not _compile.is_compiling():
                _check_capturable(param, step_t)
            step_t += 1
            if weight_decay != 0:
                grad = grad.add(param, alpha=weight_decay)
            exp_avg.lerp_(grad, 1 - beta1)
            if not group["differentiable"]:
                exp_inf.copy_(exp_inf.mul_(beta2).maximum(grad.abs().add_(eps)))
            else:
                from .. import cat

                norm_buf = cat(
                    [exp_inf.mul_(beta2).unsqueeze(0), grad.abs().add_(eps).unsqueeze_(0)], 0
                )
                exp_inf.copy_(norm_buf.amax(0, keepdim=False))
            if tensor_step:
                neg_bias_correction = beta1**step_t - 1
                neg_bias_correction.div_(lr)
                denom = exp_inf * neg_bias_correction
                param.addcdiv_(exp_avg, denom)
            else:
                bias_correction = 1 - beta1 ** _get_value(step_t)
                clr = lr / bias_correction
                param.addcdiv_(exp_avg, exp_inf, value=-_get_value(clr))


class NAdam(_Adaptive):
    """NAdam (Adam with Nesterov momentum), as ``torch.optim.NAdam``."""

    _STATE = ("exp_avg", "exp_avg_sq")
    _SETSTATE_DEFAULTS = (
        "maximize",
        "foreach",
        "capturable",
        "differentiable",
        "decoupled_weight_decay",
    )

    def __init__(
        self,
        params,
        lr: float | Tensor = 2e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        momentum_decay: float = 4e-3,
        decoupled_weight_decay: bool = False,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
    ) -> None:
        _check_common(lr, eps, betas, weight_decay)
        if not 0.0 <= momentum_decay:
            raise ValueError(f"Invalid momentum_decay value: {momentum_decay}")
        defaults = {
            "lr": lr,
            "betas": betas,
            "eps": eps,
            "weight_decay": weight_decay,
            "momentum_decay": momentum_decay,
            "decoupled_weight_decay": decoupled_weight_decay,
            "maximize": maximize,
            "foreach": foreach,
            "capturable": capturable,
            "differentiable": differentiable,
        }
        super().__init__(params, defaults)

    def __setstate__(self, state) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            for p in group["params"]:
                p_state = self.state.get(p, [])
                if len(p_state) != 0 and not isinstance(p_state["mu_product"], Tensor):
                    p_state["mu_product"] = _step_tensor(
                        p, group["capturable"], float(p_state["mu_product"])
                    )

    def _init_state(self, state: dict, p: Tensor, group: dict) -> None:
        state["step"] = _step_tensor(p, group["capturable"])
        state["mu_product"] = _step_tensor(p, group["capturable"], 1.0)
        for name in self._STATE:
            state[name] = _factories.zeros_like(p)

    def _update(self, group, params, grads, buffers, steps) -> None:
        exp_avgs, exp_avg_sqs = buffers
        mu_products = [self.state[p]["mu_product"] for p in params]
        beta1, beta2 = group["betas"]
        lr, eps, weight_decay = _to_scalar(group["lr"]), group["eps"], group["weight_decay"]
        momentum_decay = group["momentum_decay"]
        tensor_step = _tensor_step(group)
        for i, param in enumerate(params):
            grad = grads[i] if not group["maximize"] else -grads[i]
            exp_avg, exp_avg_sq, mu_product, step_t = (
                exp_avgs[i],
                exp_avg_sqs[i],
                mu_products[i],
                steps[i],
            )
            if group["capturable"] and not _compile.is_compiling():
                types = {param.device.type, mu_product.device.type, step_t.device.type}
                if len(types) != 1 or param.device.type not in _CAPTURABLE_DEVICES:
                    raise AssertionError(
                        "If capturable=True, params, mu_products and state_steps must be on "
                        f"supported devices: {_CAPTURABLE_DEVICES}."
                    )
            step_t += 1
            step = step_t if tensor_step else _get_value(step_t)
            bias_correction2 = 1 - beta2**step
            if weight_decay != 0:
                if group["decoupled_weight_decay"]:
                    param.mul_(1 - lr * weight_decay)
                else:
                    grad = grad.add(param, alpha=weight_decay)
            mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * momentum_decay)))
            mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * momentum_decay)))
            mu_product *= mu
            exp_avg.lerp_(grad, 1 - beta1)
            exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
            denom = exp_avg_sq.div(bias_correction2).sqrt()
            if tensor_step:
                denom = denom.add(eps)
                mu_product_next = mu_product * mu_next
                grad = grad * (-lr * (1.0 - mu) / (1.0 - mu_product))
                exp_avg = exp_avg * (-lr * mu_next / (1.0 - mu_product_next))
                param.addcdiv_(grad, denom)
                param.addcdiv_(exp_avg, denom)
            else:
                mu_product_next = _get_value(mu_product) * mu_next
                denom.add_(eps)
                param.addcdiv_(
                    grad, denom, value=_get_value(-lr * (1.0 - mu) / (1.0 - _get_value(mu_product)))
                )
                param.addcdiv_(
                    exp_avg, denom, value=_get_value((-lr * mu_next) / (1.0 - mu_product_next))
                )


class RAdam(_Adaptive):
    """RAdam (Adam with a rectified variance), as ``torch.optim.RAdam``."""

    _STATE = ("exp_avg", "exp_avg_sq")
    _SETSTATE_DEFAULTS = (
        "foreach",
        "maximize",
        "differentiable",
        "decoupled_weight_decay",
        "capturable",
    )

    def __init__(
        self,
        params,
        lr: float | Tensor = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        decoupled_weight_decay: bool = False,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
    ) -> None:
        _check_common(lr, eps, betas, weight_decay)
        defaults = {
            "lr": lr,
            "betas": betas,
            "eps": eps,
            "weight_decay": weight_decay,
            "maximize": maximize,
            "foreach": foreach,
            "capturable": capturable,
            "decoupled_weight_decay": decoupled_weight_decay,
            "differentiable": differentiable,
        }
        super().__init__(params, defaults)

    def _update(self, group, params, grads, buffers, steps) -> None:
        exp_avgs, exp_avg_sqs = buffers
        beta1, beta2 = group["betas"]
        lr, eps, weight_decay = _to_scalar(group["lr"]), group["eps"], group["weight_decay"]
        differentiable = group["differentiable"]
        tensor_step = _tensor_step(group)
        for i, param in enumerate(params):
            grad = grads[i] if not group["maximize"] else -grads[i]
            exp_avg, exp_avg_sq, step_t = exp_avgs[i], exp_avg_sqs[i], steps[i]
            if group["capturable"] and not _compile.is_compiling():
                _check_capturable(param, step_t)
            step_t += 1
            step = step_t if tensor_step else _get_value(step_t)
            if weight_decay != 0:
                if group["decoupled_weight_decay"]:
                    param.mul_(1 - lr * weight_decay)
                else:
                    grad = grad.add(param, alpha=weight_decay)
            exp_avg.lerp_(grad, 1 - beta1)
            exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
            bias_correction1 = 1 - beta1**step
            bias_correction2 = 1 - beta2**step
            bias_corrected_exp_avg = exp_avg / bias_correction1
            rho_inf = 2 / (1 - beta2) - 1
            rho_t = rho_inf - 2 * step * (beta2**step) / bias_correction2

            def rect(rho_t=rho_t, rho_inf=rho_inf):
                return (
                    (rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)
                ) ** 0.5

            def adaptive_lr(exp_avg_sq=exp_avg_sq, bias_correction2=bias_correction2):
                sqrt = exp_avg_sq.sqrt()
                sqrt = sqrt.add(eps) if differentiable else sqrt.add_(eps)
                return (bias_correction2**0.5) / sqrt

            if tensor_step:
                from .. import where

                update = where(rho_t > 5.0, rect() * adaptive_lr(), 1.0)
                param.add_(bias_corrected_exp_avg * lr * update, alpha=-1.0)
            elif rho_t > 5.0:
                param.add_(bias_corrected_exp_avg * lr * adaptive_lr() * rect(), alpha=-1.0)
            else:
                param.add_(bias_corrected_exp_avg * lr, alpha=-1.0)


class Adadelta(_Adaptive):
    """Adadelta, as ``torch.optim.Adadelta``."""

    _STATE = ("square_avg", "acc_delta")

    def __init__(
        self,
        params,
        lr: float | Tensor = 1.0,
        rho: float = 0.9,
        eps: float = 1e-6,
        weight_decay: float = 0,
        foreach: bool | None = None,
        *,
        capturable: bool = False,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        _check_lr(lr)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {
            "lr": lr,
            "rho": rho,
            "eps": eps,
            "weight_decay": weight_decay,
            "maximize": maximize,
            "capturable": capturable,
            "foreach": foreach,
            "differentiable": differentiable,
        }
        super().__init__(params, defaults)

    def _init_state(self, state: dict, p: Tensor, group: dict) -> None:
        if group["capturable"]:
            state["step"] = _factories.zeros((), dtype=_get_scalar_dtype(), device=p.device)
        else:
            state["step"] = _factories.zeros((), dtype=_get_scalar_dtype())
        for name in self._STATE:
            state[name] = _factories.zeros_like(p)

    def _update(self, group, params, grads, buffers, steps) -> None:
        square_avgs, acc_deltas = buffers
        rho, eps, weight_decay = group["rho"], group["eps"], group["weight_decay"]
        lr = _to_scalar(group["lr"])
        if group["capturable"] and not _compile.is_compiling():
            devices = [d for d in _CAPTURABLE_DEVICES if d != "xla"]
            for p, s in zip(params, steps):
                if not (p.device.type == s.device.type and p.device.type in devices):
                    raise AssertionError(
                        "If capturable=True, params and state_steps must be on supported "
                        f"devices: {devices}."
                    )
        for param, grad, square_avg, acc_delta, step in zip(
            params, grads, square_avgs, acc_deltas, steps
        ):
            step += 1
            grad = grad if not group["maximize"] else -grad
            if weight_decay != 0:
                grad = grad.add(param, alpha=weight_decay)
            square_avg.mul_(rho).addcmul_(grad, grad, value=1 - rho)
            std = square_avg.add(eps).sqrt_()
            delta = acc_delta.add(eps).sqrt_()
            if group["differentiable"]:
                delta = delta.clone()
            delta.div_(std).mul_(grad)
            acc_delta.mul_(rho).addcmul_(delta, delta, value=1 - rho)
            param.add_(delta, alpha=-_get_value(lr))


class Rprop(_Adaptive):
    """Rprop (resilient backpropagation: per-element step sizes from gradient signs), as
    ``torch.optim.Rprop``."""

    _STATE = ("prev", "step_size")

    def __init__(
        self,
        params,
        lr: float | Tensor = 1e-2,
        etas: tuple[float, float] = (0.5, 1.2),
        step_sizes: tuple[float, float] = (1e-6, 50),
        *,
        capturable: bool = False,
        foreach: bool | None = None,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        _check_lr(lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = {
            "lr": lr,
            "etas": etas,
            "step_sizes": step_sizes,
            "foreach": foreach,
            "maximize": maximize,
            "differentiable": differentiable,
            "capturable": capturable,
        }
        super().__init__(params, defaults)

    def _init_state(self, state: dict, p: Tensor, group: dict) -> None:
        if group["capturable"]:
            state["step"] = _factories.zeros((), dtype=_get_scalar_dtype(), device=p.device)
        else:
            state["step"] = _factories.zeros((), dtype=_get_scalar_dtype())
        state["prev"] = _factories.zeros_like(p)
        state["step_size"] = _factories.full_like(p.grad, _get_value(_to_scalar(group["lr"])))

    def _update(self, group, params, grads, buffers, steps) -> None:
        from .. import where

        prevs, step_sizes = buffers
        etaminus, etaplus = group["etas"]
        step_size_min, step_size_max = group["step_sizes"]
        capturable = group["capturable"]
        for param, grad, prev, step_size, step in zip(params, grads, prevs, step_sizes, steps):
            grad = grad if not group["maximize"] else -grad
            if capturable and not _compile.is_compiling():
                _check_capturable(param, step)
            step += 1
            if group["differentiable"]:
                sign = grad.mul(prev.clone()).sign()
            else:
                sign = grad.mul(prev).sign()
            if capturable:
                sign.copy_(where(sign.gt(0), etaplus, sign))
                sign.copy_(where(sign.lt(0), etaminus, sign))
                sign.copy_(where(sign.eq(0), 1, sign))
            else:
                sign[sign.gt(0)] = etaplus
                sign[sign.lt(0)] = etaminus
                sign[sign.eq(0)] = 1
            step_size.mul_(sign).clamp_(step_size_min, step_size_max)
            grad = grad.clone()
            if capturable:
                grad.copy_(where(sign.eq(etaminus), 0, grad))
            else:
                grad[sign.eq(etaminus)] = 0
            param.addcmul_(grad.sign(), step_size, value=-1)
            prev.copy_(grad)


class ASGD(_Adaptive):
    """Averaged SGD, as ``torch.optim.ASGD`` (the average is the state's ``ax``)."""

    _STATE = ("ax",)

    def __init__(
        self,
        params,
        lr: float | Tensor = 1e-2,
        lambd: float = 1e-4,
        alpha: float = 0.75,
        t0: float = 1e6,
        weight_decay: float = 0,
        foreach: bool | None = None,
        maximize: bool = False,
        differentiable: bool = False,
        capturable: bool = False,
    ) -> None:
        _check_lr(lr)
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {
            "lr": lr,
            "lambd": lambd,
            "alpha": alpha,
            "t0": t0,
            "weight_decay": weight_decay,
            "foreach": foreach,
            "maximize": maximize,
            "differentiable": differentiable,
            "capturable": capturable,
        }
        super().__init__(params, defaults)

    def __setstate__(self, state) -> None:
        Optimizer.__setstate__(self, state)
        for group in self.param_groups:
            for key in self._SETSTATE_DEFAULTS:
                group.setdefault(key, None if key == "foreach" else False)
            for p in group["params"]:
                p_state = self.state.get(p, [])
                for key in ("step", "eta", "mu"):
                    if len(p_state) != 0 and not isinstance(p_state[key], Tensor):
                        p_state[key] = _factories.tensor(
                            float(p_state[key]), dtype=_get_scalar_dtype(), device=p.device
                        )

    def _init_state(self, state: dict, p: Tensor, group: dict) -> None:
        state["step"] = _factories.zeros((), device=p.device, dtype=_get_scalar_dtype())
        lr = _to_scalar(group["lr"])
        if isinstance(lr, Tensor):
            state["eta"] = lr.to(device=p.device, dtype=_get_scalar_dtype()).clone().detach()
        else:
            state["eta"] = _factories.tensor(lr, device=p.device, dtype=_get_scalar_dtype())
        state["mu"] = _factories.ones((), device=p.device, dtype=_get_scalar_dtype())
        state["ax"] = _factories.zeros_like(p)

    def _update(self, group, params, grads, buffers, steps) -> None:
        from .. import maximum, ones_like

        (axs,) = buffers
        lr = _to_scalar(group["lr"])
        lambd, alpha, t0 = group["lambd"], group["alpha"], group["t0"]
        weight_decay, capturable = group["weight_decay"], group["capturable"]
        for param, grad, ax, step_t in zip(params, grads, axs, steps):
            state = self.state[param]
            mu, eta = state["mu"], state["eta"]
            grad = grad if not group["maximize"] else -grad
            if capturable and not _compile.is_compiling():
                types = {param.device.type, mu.device.type, eta.device.type, step_t.device.type}
                if len(types) != 1 or param.device.type not in _CAPTURABLE_DEVICES:
                    raise AssertionError(
                        "If capturable=True, params, mus, etas, and state_steps must be on "
                        f"supported devices: {_CAPTURABLE_DEVICES}."
                    )
            step_t += 1
            if weight_decay != 0:
                grad = grad.add(param, alpha=weight_decay)
            if capturable:
                param.mul_(1 - lambd * eta)
                param.addcmul_(grad, eta, value=-1)
            else:
                eta_value = _get_value(eta)
                param.mul_(1 - lambd * eta_value)
                param.add_(grad, alpha=-eta_value)
            if capturable or mu.item() != 1:
                ax.add_(param.sub(ax).mul_(mu))
            else:
                ax.copy_(param)
            if capturable:
                eta.copy_(lr / ((1 + lambd * lr * step_t) ** alpha))
                mu.copy_(1 / maximum(step_t - t0, ones_like(step_t)))
            else:
                step = _get_value(step_t)
                eta.copy_(
                    _factories.tensor(
                        _get_value(lr) / ((1 + lambd * _get_value(lr) * step) ** alpha)
                    )
                )
                mu.copy_(_factories.tensor(1 / max(1, step - t0)))
