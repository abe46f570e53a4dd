"""``nn.utils.convert_conv{2,3}d_weight_memory_format``: the weights of a module tree's 2-D (3-D)
convolutions copied into ``memory_format`` in place of their data, as PyTorch does."""

from __future__ import annotations

__all__ = ["convert_conv2d_weight_memory_format", "convert_conv3d_weight_memory_format"]


def _convert(module, memory_format, kinds):
    if isinstance(module, kinds):
        weight_data = module.weight.detach().clone(memory_format=memory_format)
        module.weight.data = weight_data.resize_(weight_data.size(), memory_format=memory_format)
    for child in module.children():
        _convert(child, memory_format, kinds)
    return module


def convert_conv2d_weight_memory_format(module, memory_format):
    """Lay out the weights of every ``Conv2d``/``ConvTranspose2d`` in ``module`` (and its
    children) in ``memory_format``; returns ``module``."""
    from ..modules.conv import Conv2d, ConvTranspose2d

    return _convert(module, memory_format, (Conv2d, ConvTranspose2d))


def convert_conv3d_weight_memory_format(module, memory_format):
    """Lay out the weights of every ``Conv3d``/``ConvTranspose3d`` in ``module`` (and its
    children) in ``memory_format``; returns ``module``."""
    from ..modules.conv import Conv3d, ConvTranspose3d

    return _convert(module, memory_format, (Conv3d, ConvTranspose3d))
