"""``torch.autograd._functions``: the autograd Functions PyTorch's Python-level Tensor methods
use (``Tensor.resize``/``resize_as``, whose node is ``ResizeBackward``)."""

from __future__ import annotations

import functools
import operator

from .function import Function


class Resize(Function):
    """A reshape that keeps the element count (autograd's ``resize``), as PyTorch writes it:
    ``sizes`` multiplied as given, so a tuple given as one size is refused."""

    @staticmethod
    def forward(ctx, tensor, sizes):
        ctx.sizes = sizes
        ctx.numel = functools.reduce(operator.mul, sizes, 1)
        if tensor.numel() != ctx.numel:
            raise RuntimeError(
                (
                    "requested resize to {} ({} elements in total), "
                    "but the given tensor has a size of {} ({} elements). "
                    "autograd's resize can only change the shape of a given "
                    "tensor, while preserving the number of elements. "
                ).format(
                    "x".join(map(str, sizes)),
                    ctx.numel,
                    "x".join(map(str, tensor.size())),
                    tensor.numel(),
                )
            )
        ctx.input_sizes = tensor.size()
        if tensor.is_contiguous():
            return tensor.new(tensor).contiguous().view(*sizes)
        return tensor.contiguous().view(*sizes)

    @staticmethod
    def backward(ctx, grad_output):
        assert grad_output.numel() == ctx.numel
        return grad_output.contiguous().view(ctx.input_sizes), None
