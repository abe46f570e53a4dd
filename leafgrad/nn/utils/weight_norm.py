"""Weight normalization: ``torch._weight_norm``, ``torch.norm_except_dim`` and the hook-based
``nn.utils.weight_norm`` / ``remove_weight_norm`` (deprecated in PyTorch in favour of
``nn.utils.parametrizations.weight_norm``, which uses the same op).

``w = v * g / ||v||``, the norm taken over every dimension but ``dim``. As in PyTorch on the CPU,
``dim`` 0 or the last dimension runs the fused kernel (one ``WeightNormInterfaceBackward0`` node
with edges to ``v`` and ``g``, which saves both and the norms); any other ``dim``, and float16,
runs PyTorch's composite ``v * (g / norm_except_dim(v, 2, dim))``.
"""

from __future__ import annotations

import warnings

import jax.numpy as jnp

from ... import _dtype as D
from ..._tensor import Tensor
from ...ops.api import register_ops
from ...ops.dispatch import dispatch
from ...ops.table import OPS, OpDef
from ..functional import _float_kernel_pair
from ..parameter import Parameter

__all__ = ["WeightNorm", "weight_norm", "remove_weight_norm"]


def _interface(v, g, dim):
    """The fused kernel: the norms (in float for bfloat16, its accumulation type) and ``w``."""
    acc = jnp.float32 if v.dtype == jnp.bfloat16 else v.dtype
    axes = tuple(a for a in range(v.ndim) if a != dim)
    norms = jnp.sqrt(jnp.sum(jnp.square(v.astype(acc)), axis=axes, keepdims=True))
    shape = [1] * v.ndim
    shape[dim] = v.shape[dim]
    scale = g.reshape(shape).astype(acc) / norms
    return (v.astype(acc) * scale).astype(v.dtype), norms


register_ops(
    OpDef(
        "nn.weight_norm_interface",
        _interface,
        "WeightNormInterfaceBackward0",
        ("v", "g"),
        # norms in float for bfloat16 (its accumulation type)
        _float_kernel_pair("weight_norm_kernel", lambda dt: D.float32 if dt is D.bfloat16 else dt),
        saves={"v": ("v", "g", "indices"), "g": ("v", "g", "indices")},
        n_out=2,
        differentiable_outputs=(0,),
    )
)


def norm_except_dim(v: Tensor, pow: float = 2, dim: int = 0) -> Tensor:
    """The ``pow``-norm of ``v`` over every dimension but ``dim``, shaped to broadcast against
    ``v`` (``dim=-1``: the norm of all of ``v``), as PyTorch's composite."""
    from ..._aten_functions import aten_norm

    if dim == -1:
        return aten_norm(v, pow)
    n = v.dim()
    if dim == 0:
        shape = [1] * n
        shape[0] = v.size(0)
        return aten_norm(v.contiguous().view(v.size(0), -1), pow, [1]).view(shape)
    if dim == n - 1:
        shape = [1] * n
        shape[n - 1] = v.size(n - 1)
        return aten_norm(v.contiguous().view(-1, v.size(n - 1)), pow, [0]).view(shape)
    return norm_except_dim(v.transpose(0, dim), pow, 0).transpose(0, dim)


def _weight_norm(v: Tensor, g: Tensor, dim: int = 0) -> Tensor:
    """``v * g / norm_except_dim(v, 2, dim)`` (``torch._weight_norm``)."""
    if v.device != g.device:
        raise RuntimeError(
            "weight_norm: expected v_in and g_in to be on the same device, but v_in is on "
            f"{v.device} and g_in is on {g.device}"
        )
    half = D.float16 in (v.dtype, g.dtype)
    if not half and dim in (0, v.dim() - 1):
        if g.numel() != v.size(dim):
            raise RuntimeError(
                f"weight_norm: g has {g.numel()} elements, but v has {v.size(dim)} along dim {dim}"
            )
        return dispatch(OPS["nn.weight_norm_interface"], v, g, dim=dim)[0]
    return v * (g / norm_except_dim(v, 2, dim))


class WeightNorm:
    """The forward pre-hook of ``weight_norm``: recomputes ``module.<name>`` from ``<name>_g``
    and ``<name>_v`` before each call."""

    def __init__(self, name: str, dim: int) -> None:
        if dim is None:
            dim = -1
        self.name = name
        self.dim = dim

    def compute_weight(self, module):
        g = getattr(module, self.name + "_g")
        v = getattr(module, self.name + "_v")
        return _weight_norm(v, g, self.dim)

    @staticmethod
    def apply(module, name: str, dim: int) -> WeightNorm:
        warnings.warn(
            "`torch.nn.utils.weight_norm` is deprecated in favor of "
            "`torch.nn.utils.parametrizations.weight_norm`.",
            FutureWarning,
            stacklevel=3,
        )
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, WeightNorm) and hook.name == name:
                raise RuntimeError(
                    f"Cannot register two weight_norm hooks on the same parameter {name}"
                )
        if dim is None:
            dim = -1
        fn = WeightNorm(name, dim)
        weight = getattr(module, name)
        del module._parameters[name]
        module.register_parameter(name + "_g", Parameter(norm_except_dim(weight, 2, dim).data))
        module.register_parameter(name + "_v", Parameter(weight.data))
        setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module) -> None:
        weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(weight.data))

    def __call__(self, module, inputs) -> None:
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module, name: str = "weight", dim: int = 0):
    """Replace ``module.<name>`` by ``<name>_g * <name>_v / ||<name>_v||`` (two parameters),
    recomputed before every forward."""
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module, name: str = "weight"):
    """Undo ``weight_norm``: ``module.<name>`` becomes a parameter again, with its current value."""
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, WeightNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise ValueError(f"weight_norm of '{name}' not found in {module}")
