"""``leafgrad.optim.Adam``: Adam and AMSGrad, with L2 or decoupled (AdamW) weight decay.

The update is PyTorch's single-tensor kernel operation for operation: ``exp_avg.lerp_``,
``exp_avg_sq.mul_().addcmul_()``, bias corrections in Python doubles from ``step.item()``, then
``param.addcdiv_(exp_avg, denom, value=-step_size)``; so float32 trajectories match PyTorch's
to rounding. ``capturable=True`` takes PyTorch's tensor-step branch (no host reads).
"""

from __future__ import annotations

from .. import _compile, _factories
from .._tensor import Tensor
from .optimizer import (
    Optimizer,
    _check_capturable,
    _check_fused_flags,
    _device_dtype_check_for_fused,
    _evaluate,
    _get_scalar_dtype,
    _get_value,
    _to_scalar,
    _use_grad_for_differentiable,
)

__all__ = ["Adam", "adam"]


def _check_adam_args(lr, betas, eps, weight_decay, foreach, capturable) -> None:
    if isinstance(lr, Tensor):
        if foreach and not capturable:
            raise ValueError(
                "lr as a Tensor is not supported for capturable=False and foreach=True"
            )
        if lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
    if not 0.0 <= lr:
        raise ValueError(f"Invalid learning rate: {lr}")
    if not 0.0 <= eps:
        raise ValueError(f"Invalid epsilon value: {eps}")
    if not 0.0 <= betas[0] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
    if not 0.0 <= betas[1] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
    if not 0.0 <= weight_decay:
        raise ValueError(f"Invalid weight_decay value: {weight_decay}")
    if not (
        (isinstance(betas[0], float) and isinstance(betas[1], float))
        or (isinstance(betas[0], Tensor) and isinstance(betas[1], Tensor))
    ):
        raise ValueError("betas must be either both floats or both Tensors")
    for i in (0, 1):
        if isinstance(betas[i], Tensor):
            if not capturable and foreach:
                raise ValueError(
                    f"betas[{i}] as a Tensor is not supported for capturable=False and foreach=True"
                )
            if betas[i].numel() != 1:
                raise ValueError(f"Tensor betas[{i}] must be 1-element")


class Adam(Optimizer):
    """Adam, as ``torch.optim.Adam`` (its for-loop kernel).

    >>> opt = leafgrad.optim.Adam([p], lr=1e-3, betas=(0.9, 0.999), amsgrad=True)
    """

    def __init__(
        self,
        params,
        lr: float | Tensor = 1e-3,
        betas: tuple = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        amsgrad: bool = False,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
        decoupled_weight_decay: bool = False,
    ) -> None:
        _check_adam_args(lr, betas, eps, weight_decay, foreach, capturable)
        betas = tuple(map(_to_scalar, betas))
        defaults = {
            "lr": lr,
            "betas": betas,
            "eps": eps,
            "weight_decay": weight_decay,
            "amsgrad": amsgrad,
            "maximize": maximize,
            "foreach": foreach,
            "capturable": capturable,
            "differentiable": differentiable,
            "fused": fused,
            "decoupled_weight_decay": decoupled_weight_decay,
        }
        super().__init__(params, defaults)
        _check_fused_flags(self, fused, foreach, differentiable)

    def __setstate__(self, state) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("amsgrad", False)
            group.setdefault("maximize", False)
            group.setdefault("foreach", None)
            group.setdefault("capturable", False)
            group.setdefault("differentiable", False)
            group.setdefault("decoupled_weight_decay", False)
            fused = group.setdefault("fused", None)
            for p in group["params"]:
                p_state = self.state.get(p, [])
                if len(p_state) != 0 and not isinstance(p_state["step"], Tensor):
                    # Older checkpoints stored the step as a Python number.
                    value = float(p_state["step"])
                    if group["capturable"] or group["fused"]:
                        p_state["step"] = _factories.tensor(
                            value, dtype=_get_scalar_dtype(is_fused=fused), device=p.device
                        )
                    else:
                        p_state["step"] = _factories.tensor(value, dtype=_get_scalar_dtype())

    def _init_group(self, group, params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps):
        has_complex = False
        for p in group["params"]:
            if p.grad is None:
                continue
            has_complex |= p.is_complex()
            params.append(p)
            grads.append(p.grad)
            state = self.state[p]
            if len(state) == 0:
                if group["fused"]:
                    _device_dtype_check_for_fused(p)
                # PyTorch keeps the step on the CPU unless capturable or fused.
                if group["capturable"] or group["fused"]:
                    state["step"] = _factories.zeros(
                        (), dtype=_get_scalar_dtype(is_fused=group["fused"]), device=p.device
                    )
                else:
                    state["step"] = _factories.tensor(0.0, dtype=_get_scalar_dtype())
                state["exp_avg"] = _factories.zeros_like(p)
                state["exp_avg_sq"] = _factories.zeros_like(p)
                if group["amsgrad"]:
                    state["max_exp_avg_sq"] = _factories.zeros_like(p)
            exp_avgs.append(state["exp_avg"])
            exp_avg_sqs.append(state["exp_avg_sq"])
            if group["amsgrad"]:
                max_exp_avg_sqs.append(state["max_exp_avg_sq"])
            if group["differentiable"] and state["step"].requires_grad:
                raise RuntimeError(
                    "`requires_grad` is not supported for `step` in differentiable mode"
                )
            if group["foreach"] and isinstance(group["lr"], Tensor) and not group["capturable"]:
                raise RuntimeError(
                    "lr as a Tensor is not supported for capturable=False and foreach=True"
                )
            steps.append(state["step"])
        return has_complex

    @_use_grad_for_differentiable
    def step(self, closure=None):
        """Perform one optimization step; ``closure`` re-evaluates the loss."""
        loss = _evaluate(closure)
        for group in self.param_groups:
            params: list[Tensor] = []
            grads: list[Tensor] = []
            exp_avgs: list[Tensor] = []
            exp_avg_sqs: list[Tensor] = []
            max_exp_avg_sqs: list[Tensor] = []
            steps: list[Tensor] = []
            beta1, beta2 = group["betas"]
            has_complex = self._init_group(
                group, params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps
            )
            adam(
                params,
                grads,
                exp_avgs,
                exp_avg_sqs,
                max_exp_avg_sqs,
                steps,
                capturable=group["capturable"],
                differentiable=group["differentiable"],
                has_complex=has_complex,
                decoupled_weight_decay=group["decoupled_weight_decay"],
                amsgrad=group["amsgrad"],
                beta1=beta1,
                beta2=beta2,
                lr=group["lr"],
                weight_decay=group["weight_decay"],
                eps=group["eps"],
                maximize=group["maximize"],
                fused=group["fused"],
                grad_scale=getattr(self, "grad_scale", None),
                found_inf=getattr(self, "found_inf", None),
            )
        return loss


def adam(
    params: list[Tensor],
    grads: list[Tensor],
    exp_avgs: list[Tensor],
    exp_avg_sqs: list[Tensor],
    max_exp_avg_sqs: list[Tensor],
    state_steps: list[Tensor],
    foreach: bool | None = None,
    capturable: bool = False,
    differentiable: bool = False,
    fused: bool | None = None,
    grad_scale: Tensor | None = None,
    found_inf: Tensor | None = None,
    has_complex: bool = False,
    decoupled_weight_decay: bool = False,
    *,
    amsgrad: bool,
    beta1,
    beta2,
    lr,
    weight_decay: float,
    eps: float,
    maximize: bool,
) -> None:
    """The Adam update of ``torch.optim.adam`` (single-tensor kernel), in place."""
    if not all(isinstance(t, Tensor) for t in state_steps):
        raise RuntimeError(
            "API has changed, `state_steps` argument must contain a list of singleton tensors"
        )
    if has_complex:
        raise NotImplementedError(
            "leafgrad.optim.Adam does not support complex parameters yet (needs view_as_real)"
        )
    lr, beta1, beta2 = _to_scalar(lr), _to_scalar(beta1), _to_scalar(beta2)
    compiling = _compile.is_compiling()
    if fused and not compiling:
        _fused_adam(
            params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, grad_scale,
            found_inf, amsgrad=amsgrad, beta1=beta1, beta2=beta2, lr=lr,
            weight_decay=weight_decay, eps=eps, maximize=maximize,
            adamw=decoupled_weight_decay,
        )  # fmt: skip
        return
    if grad_scale is not None or found_inf is not None:
        raise NotImplementedError(
            "leafgrad: Adam with a GradScaler's grad_scale/found_inf runs only eagerly with "
            "fused=True"
        )
    beta1_by_key: dict = {}
    for i, param in enumerate(params):
        grad = grads[i] if not maximize else -grads[i]
        exp_avg, exp_avg_sq, step_t = exp_avgs[i], exp_avg_sqs[i], state_steps[i]
        if capturable and not compiling:
            _check_capturable(param, step_t)
        step_t += 1
        if weight_decay != 0:
            if decoupled_weight_decay:
                param.mul_(1 - lr * weight_decay)
            elif differentiable and isinstance(weight_decay, Tensor) and weight_decay.requires_grad:
                grad = grad.addcmul_(param.clone(), weight_decay)
            else:
                grad = grad.add(param, alpha=weight_decay)
        if isinstance(beta1, Tensor):
            key = (str(param.device), str(param.dtype))
            if key not in beta1_by_key:
                beta1_by_key[key] = beta1.to(device=param.device, dtype=param.dtype)
            device_beta1 = beta1_by_key[key]
        else:
            device_beta1 = beta1

        exp_avg.lerp_(grad, 1 - device_beta1)
        if differentiable and isinstance(beta2, Tensor) and beta2.requires_grad:
            exp_avg_sq.lerp_(grad.square(), weight=1 - beta2)
        else:
            exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)

        if capturable or differentiable or compiling:
            # Tensor arithmetic throughout: nothing is read back to the host (also inside
            # leafgrad.compile, where the step has no value on the host).
            step = step_t
            bias_correction1 = 1 - beta1**step
            bias_correction2 = 1 - beta2**step
            step_size_neg = (lr / bias_correction1).neg()
            bias_correction2_sqrt = bias_correction2.sqrt()
            if amsgrad:
                current = max_exp_avg_sqs[i].clone() if differentiable else max_exp_avg_sqs[i]
                max_exp_avg_sqs[i].copy_(current.maximum(exp_avg_sq))
                second = max_exp_avg_sqs[i]
            else:
                second = exp_avg_sq
            denom = (second.sqrt() / (bias_correction2_sqrt * step_size_neg)).add_(
                eps / step_size_neg
            )
            param.addcdiv_(exp_avg.clone() if differentiable else exp_avg, denom)
        else:
            step = _get_value(step_t)
            bias_correction1 = 1 - beta1**step
            bias_correction2 = 1 - beta2**step
            step_size = lr / bias_correction1
            bias_correction2_sqrt = bias_correction2**0.5
            if amsgrad:
                max_exp_avg_sqs[i].copy_(max_exp_avg_sqs[i].maximum(exp_avg_sq))
                denom = (max_exp_avg_sqs[i].sqrt() / bias_correction2_sqrt).add_(eps)
            else:
                denom = (exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(eps)
            param.addcdiv_(exp_avg, denom, value=-_get_value(step_size))


# Note [Fused Adam]: PyTorch's ``fused=True`` runs one CPU kernel per parameter
# (``FusedAdamKernel.cpp``) after ``_foreach_add_(steps, 1)``: it writes the parameter and the
# moments through their memory (no version bump), divides the gradient by a GradScaler's
# ``grad_scale`` and stores it back (no bump either), returns at once when ``found_inf`` is 1,
# and PyTorch subtracts ``found_inf`` from the steps after. Its arithmetic is the vectorized
# loop's: the moment update ``exp_avg.lerp_(grad, 1 - beta1)`` as one fused multiply-add, the
# other products rounded on their own (Note [Contracted multiply-add] in _group_update.py),
# bias corrections in doubles; half-precision parameters are computed in float32.
def _fused_math(p, g, m, v, vmax, scale, hyper, zero, *, amsgrad, maximize, adamw, wd):
    import jax.numpy as jnp

    from ._group_update import _rounded

    dt = p.dtype
    op = jnp.float32 if dt in (jnp.float16, jnp.bfloat16) else dt
    lr_wd, c1, c2, beta2, bc2_sqrt, eps, neg_step, wd_v = (h.astype(op) for h in hyper)
    p, g, m, v = p.astype(op), g.astype(op), m.astype(op), v.astype(op)
    if scale is not None:
        g = g / scale.astype(jnp.float32).astype(op)
    g_out = g.astype(dt)
    if maximize:
        g = -g
    if wd:
        if adamw:
            p = _rounded(p * lr_wd, zero)
        else:
            g = g + p * wd_v  # fused, as GCC compiles the kernel
    small = jnp.abs(c1) < 0.5
    coeff = jnp.where(small, c1, c1 - 1)
    base = jnp.where(small, m, g)
    m = coeff * (g - m) + base  # one fused multiply-add, as vec::fmadd
    v = _rounded(v * beta2, zero) + c2 * g * g  # GCC fuses the second product
    if amsgrad:
        vmax = jnp.maximum(vmax.astype(op), v)
        second = vmax
    else:
        second = v
    denom = jnp.sqrt(second) / bc2_sqrt + eps
    p = p + _rounded(neg_step * m, zero) / denom
    cast = (p.astype(dt), g_out, m.astype(dt), v.astype(dt))
    return (*cast, vmax.astype(dt) if amsgrad else None)


_FUSED_JIT: dict = {}


def _fused_adam(
    params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, grad_scale, found_inf,
    *, amsgrad, beta1, beta2, lr, weight_decay, eps, maximize, adamw,
):  # fmt: skip
    """Note [Fused Adam]."""
    import functools

    import jax
    import numpy as np

    from .. import _storage as S
    from ..autograd import grad_mode

    with grad_mode.no_grad():
        for step_t in state_steps:
            step_t += 1
    skip = found_inf is not None and found_inf.item() == 1.0
    lr, wd = float(_get_value(lr)), float(weight_decay)
    for i, param in enumerate(params):
        if skip:
            break
        step = float(np.float32(_get_value(state_steps[i])))
        bias_correction1 = 1 - beta1**step
        bias_correction2 = 1 - beta2**step
        dt = np.dtype(param._data.dtype)
        op = np.float32 if dt.itemsize == 2 else dt
        values = (1 - lr * wd, 1 - beta1, 1 - beta2, beta2, bias_correction2**0.5, eps)
        values += (-(lr / bias_correction1), wd)
        hyper = tuple(np.asarray(x, dtype=op) for x in values)
        zero = np.zeros((), np.int64 if op == np.float64 else np.int32)
        key = (amsgrad, maximize, adamw, wd != 0)
        fn = _FUSED_JIT.get(key)
        if fn is None:
            fn = _FUSED_JIT[key] = jax.jit(
                functools.partial(
                    _fused_math, amsgrad=amsgrad, maximize=maximize, adamw=adamw, wd=wd != 0
                )
            )
        vmax = max_exp_avg_sqs[i]._data if amsgrad else None
        scale = None if grad_scale is None else grad_scale._data
        p, g, m, v, vm = fn(
            param._data, grads[i]._data, exp_avgs[i]._data, exp_avg_sqs[i]._data, vmax, scale,
            hyper, zero,
        )  # fmt: skip
        S.write(param, p)
        if grad_scale is not None:
            S.write(grads[i], g)
        S.write(exp_avgs[i], m)
        S.write(exp_avg_sqs[i], v)
        if amsgrad:
            S.write(max_exp_avg_sqs[i], vm)
    if found_inf is not None:
        with grad_mode.no_grad():
            for step_t in state_steps:
                step_t -= found_inf
