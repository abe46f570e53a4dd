"""``leafgrad.optim.Muon``: momentum orthogonalized by Newton-Schulz, for 2-D parameters, as
PyTorch 2.13 writes it (the iteration runs in bfloat16: ``addmm`` of the Gram matrices)."""

from __future__ import annotations

import math

from .. import _factories
from .._tensor import Tensor
from ..autograd import grad_mode
from ..ops.linalg_ops import addmm
from .optimizer import Optimizer, _evaluate, _to_scalar

__all__ = ["Muon"]

EPS = 1e-7
DEFAULT_A = 3.4445
DEFAULT_B = -4.7750
DEFAULT_C = 2.0315
DEFAULT_NS_STEPS = 5


def _zeropower_via_newtonschulz(grad, ns_coefficients, ns_steps: int, eps: float):
    """The orthogonal factor of ``grad`` approximated by ``ns_steps`` quintic Newton-Schulz
    iterations in bfloat16 (``grad`` normalised first; transposed when taller than wide)."""
    if ns_steps >= 100:
        raise ValueError("Number of steps must be less than 100 for computational efficiency")
    if len(grad.shape) != 2:
        raise ValueError("Input tensor gradient must be a 2D matrix")
    if len(ns_coefficients) != 3:
        raise ValueError("Coefficients must be a tuple of exactly 3 values")
    a, b, c = ns_coefficients
    ortho = grad.bfloat16()
    tall = grad.size(0) > grad.size(1)
    if tall:
        ortho = ortho.T
    ortho.div_(ortho.norm().clamp(min=eps))
    for _ in range(ns_steps):
        gram = ortho @ ortho.T
        gram_update = addmm(gram, gram, gram, beta=b, alpha=c)
        ortho = addmm(ortho, gram_update, ortho, beta=a)
    return ortho.T if tall else ortho


def _adjust_lr(lr, adjust_lr_fn, param_shape):
    rows, cols = param_shape[:2]
    if adjust_lr_fn is None or adjust_lr_fn == "original":
        ratio = math.sqrt(max(1, rows / cols))
    elif adjust_lr_fn == "match_rms_adamw":
        ratio = 0.2 * math.sqrt(max(rows, cols))
    else:
        ratio = 1.0
    return lr * ratio


class Muon(Optimizer):
    """Muon, as ``torch.optim.Muon``: every parameter must be a matrix.

    >>> opt = leafgrad.optim.Muon([layer.weight], lr=1e-3)
    """

    def __init__(
        self,
        params,
        lr: float = 1e-3,
        weight_decay: float = 0.1,
        momentum: float = 0.95,
        nesterov: bool = True,
        ns_coefficients: tuple = (DEFAULT_A, DEFAULT_B, DEFAULT_C),
        eps: float = EPS,
        ns_steps: int = DEFAULT_NS_STEPS,
        adjust_lr_fn: str | None = None,
    ) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 <= momentum:
            raise ValueError(f"momentum should be >= 0 but is: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight decay should be >= 0 but is: {weight_decay}")
        if adjust_lr_fn is not None and adjust_lr_fn not in ["original", "match_rms_adamw"]:
            raise ValueError(f"Adjust learning rate function {adjust_lr_fn} is not supported")
        defaults = {
            "lr": lr,
            "weight_decay": weight_decay,
            "momentum": momentum,
            "nesterov": nesterov,
            "ns_coefficients": ns_coefficients,
            "eps": eps,
            "ns_steps": ns_steps,
            "adjust_lr_fn": adjust_lr_fn,
        }
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                if p.ndim != 2:
                    raise ValueError(
                        "Muon only supports 2D parameters whereas we found a parameter with "
                        f"size: {p.size()}"
                    )

    def _init_group(self, group, params, grads, bufs) -> bool:
        for p in group["params"]:
            if p.grad is None:
                continue
            if p.is_complex():
                raise RuntimeError("Muon does not support complex parameters")
            params.append(p)
            grads.append(p.grad)
            state = self.state[p]
            if "momentum_buffer" not in state:
                state["momentum_buffer"] = _factories.zeros_like(p.grad)
            bufs.append(state["momentum_buffer"])
        return False

    def step(self, closure=None):
        """Perform one optimization step; ``closure`` re-evaluates the loss."""
        loss = _evaluate(closure)
        with grad_mode.no_grad():
            for group in self.param_groups:
                params: list[Tensor] = []
                grads: list[Tensor] = []
                bufs: list[Tensor] = []
                has_complex = self._init_group(group, params, grads, bufs)
                muon(
                    params,
                    grads,
                    bufs,
                    lr=group["lr"],
                    weight_decay=group["weight_decay"],
                    momentum=group["momentum"],
                    nesterov=group["nesterov"],
                    ns_coefficients=group["ns_coefficients"],
                    eps=group["eps"],
                    ns_steps=group["ns_steps"],
                    adjust_lr_fn=group["adjust_lr_fn"],
                    has_complex=has_complex,
                )
        return loss


def muon(
    params,
    grads,
    muon_momentum_bufs,
    *,
    foreach=None,
    lr,
    weight_decay,
    momentum,
    nesterov,
    ns_coefficients,
    ns_steps,
    eps,
    adjust_lr_fn,
    has_complex=False,
) -> None:
    """The Muon update of ``torch.optim._muon`` (its for-loop kernel), in place."""
    if foreach:
        raise RuntimeError("Foreach is not supported for Muon yet")
    lr = _to_scalar(lr)
    if has_complex:
        raise ValueError("Complex parameters are not supported")
    for i, param in enumerate(params):
        grad = grads[i]
        if grad.ndim != 2:
            raise ValueError("Param gradient must be a 2D matrix")
        buf = muon_momentum_bufs[i]
        buf.lerp_(grad, 1 - momentum)
        update = grad.lerp(buf, momentum) if nesterov else buf
        update = _zeropower_via_newtonschulz(update, ns_coefficients, ns_steps, eps)
        param.mul_(1 - lr * weight_decay)
        param.add_(update, alpha=-_adjust_lr(lr, adjust_lr_fn, param.shape))
