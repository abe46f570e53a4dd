"""``torch.nn.grad``: the input and weight gradients of a convolution given the gradient of its
output (PyTorch's ``convolution_backward`` with one output mask bit set).

leafgrad runs the convolution on a stand-in tensor of the missing operand's shape and takes
that operand's gradient; where the result is itself differentiated (the weight, the input or
``grad_output`` requires grad) it is recorded as PyTorch records it, a
``ConvolutionBackwardBackward0`` whose edges are (``grad_output``, ``input``, ``weight``), the
stand-in's edge empty as PyTorch's expanded ``new_empty`` stand-in has none."""

from __future__ import annotations

from .. import autograd
from ..autograd import grad_mode
from ..autograd.graph import AccumulateGrad
from . import functional as F

__all__ = [
    "conv1d_input",
    "conv1d_weight",
    "conv2d_input",
    "conv2d_weight",
    "conv3d_input",
    "conv3d_weight",
]

_CONV = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}


def _gradient(dims, input, weight, grad_output, stride, padding, dilation, groups, of_input):
    stand_in = grad_output.new_zeros(tuple(input if of_input else weight)).requires_grad_()
    if of_input:
        input = stand_in
    else:
        weight = stand_in
    other = weight if of_input else input
    record = grad_mode.is_grad_enabled() and (other.requires_grad or grad_output.requires_grad)
    with grad_mode.enable_grad():
        out = _CONV[dims](input, weight, None, stride, padding, dilation, groups)
    (result,) = autograd.grad(out, stand_in, grad_output, create_graph=record)
    node = result.grad_fn
    if node is not None:  # the stand-in's edge: none, as PyTorch's
        node._next_functions = tuple(
            (None, 0) if isinstance(fn, AccumulateGrad) and fn.variable is stand_in else (fn, nr)
            for fn, nr in node._next_functions
        )
    return result


def conv1d_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """The gradient of ``conv1d`` with respect to an input of size ``input_size``."""
    return _gradient(1, input_size, weight, grad_output, stride, padding, dilation, groups, True)


def conv1d_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """The gradient of ``conv1d`` with respect to a weight of size ``weight_size``."""
    return _gradient(1, input, weight_size, grad_output, stride, padding, dilation, groups, False)


def conv2d_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """The gradient of ``conv2d`` with respect to an input of size ``input_size``."""
    return _gradient(2, input_size, weight, grad_output, stride, padding, dilation, groups, True)


def conv2d_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """The gradient of ``conv2d`` with respect to a weight of size ``weight_size``."""
    return _gradient(2, input, weight_size, grad_output, stride, padding, dilation, groups, False)


def conv3d_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """The gradient of ``conv3d`` with respect to an input of size ``input_size``."""
    return _gradient(3, input_size, weight, grad_output, stride, padding, dilation, groups, True)


def conv3d_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """The gradient of ``conv3d`` with respect to a weight of size ``weight_size``."""
    return _gradient(3, input, weight_size, grad_output, stride, padding, dilation, groups, False)
