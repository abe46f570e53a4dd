"""Flatten parameters into one vector and back, as ``torch.nn.utils.convert_parameters``."""

from __future__ import annotations

from collections.abc import Iterable

from ..._tensor import Tensor
from ...ops.shape import cat

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def _check_param_device(param: Tensor, old_param_device: int | None) -> int:
    """The device index all parameters must share (-1 for the CPU), with PyTorch's error."""
    on_gpu = param.device.type == "cuda"
    if old_param_device is None:
        return param.get_device() if on_gpu else -1
    warn = param.get_device() != old_param_device if on_gpu else old_param_device != -1
    if warn:
        raise TypeError(
            "Found two parameters on different devices, this is currently not supported."
        )
    return old_param_device


def parameters_to_vector(parameters: Iterable[Tensor]) -> Tensor:
    """One 1-D tensor of all parameters' values, in order (recorded: gradients flow back)."""
    param_device = None
    vec = []
    for param in parameters:
        param_device = _check_param_device(param, param_device)
        vec.append(param.view(-1))
    return cat(vec)


def vector_to_parameters(vec: Tensor, parameters: Iterable[Tensor]) -> None:
    """Set each parameter's ``.data`` to its slice of ``vec`` (the inverse of
    ``parameters_to_vector``)."""
    if not isinstance(vec, Tensor):
        from ..modules.module import _typename

        raise TypeError(f"expected torch.Tensor, but got: {_typename(vec)}")
    param_device = None
    pointer = 0
    for param in parameters:
        param_device = _check_param_device(param, param_device)
        num_param = param.numel()
        param.data = vec[pointer : pointer + num_param].view_as(param).data
        pointer += num_param
