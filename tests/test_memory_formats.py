"""``Tensor.to(memory_format=...)`` (PyTorch's ``to_will_alias``: a format the strides already
suggest changes nothing), ``nn.Module.to(memory_format=...)`` and ``Tensor.dim_order``."""

from __future__ import annotations

import pytest
from conftest import both

SOURCES = {
    "contiguous": lambda m: m.arange(120.0).reshape(2, 3, 4, 5),
    "permuted": lambda m: m.arange(120.0).reshape(2, 3, 5, 4).permute(0, 1, 3, 2),
    "channels_last": lambda m: (
        m.arange(120.0).reshape(2, 3, 4, 5).contiguous(memory_format=m.channels_last)
    ),
    "n111": lambda m: m.arange(2.0).reshape(2, 1, 1, 1),
    "one_channel": lambda m: m.arange(10.0).reshape(2, 1, 1, 5),
    "matrix": lambda m: m.arange(6.0).reshape(2, 3),
    "five_d": lambda m: m.arange(720.0).reshape(2, 3, 4, 5, 6),
}
CONVERSIONS = {
    "channels_last": lambda m, x: x.to(memory_format=m.channels_last),
    "contiguous": lambda m, x: x.to(memory_format=m.contiguous_format),
    "preserve": lambda m, x: x.to(memory_format=m.preserve_format),
    "dtype_and_channels_last": lambda m, x: x.to(m.float64, memory_format=m.channels_last),
    "device_and_channels_last": lambda m, x: x.to("cpu", memory_format=m.channels_last),
    "channels_last_3d": lambda m, x: x.to(memory_format=m.channels_last_3d),
    "copy": lambda m, x: x.to(m.float32, copy=True, memory_format=m.contiguous_format),
    "a_string": lambda m, x: x.to(memory_format="channels_last"),
}


@pytest.mark.parametrize("conversion", sorted(CONVERSIONS))
@pytest.mark.parametrize("source", sorted(SOURCES))
def test_to_memory_format(source, conversion):
    def fn(m):
        x = SOURCES[source](m).requires_grad_()
        y = CONVERSIONS[conversion](m, x)
        grad_fn = type(y.grad_fn).__name__ if y.grad_fn else None
        out = [y, y.stride(), y is x, grad_fn, y.is_contiguous(), y.dim_order()]
        (y * m.arange(float(y.numel())).reshape(y.shape)).sum().backward()
        return [*out, x.grad]

    both(fn)


def test_module_to_memory_format():
    def fn(m):
        conv = m.nn.Conv2d(3, 4, 2)
        conv.to(memory_format=m.channels_last)
        return conv.weight.stride(), conv.bias.stride(), conv.weight.is_leaf

    both(fn)


LAYOUTS = {
    "contiguous": lambda m: m.ones(2, 3, 4),
    "permuted": lambda m: m.ones(2, 3, 4).permute(2, 0, 1),
    "size_one_dim": lambda m: m.ones(2, 1, 4).permute(1, 0, 2),
    "column": lambda m: m.ones(3, 1),
    "transposed_row": lambda m: m.ones(1, 3).t(),
    "strided_transpose": lambda m: m.ones(2, 3).t()[::2],
    "expanded": lambda m: m.ones(3, 1).expand(3, 4),
    "scalar": lambda m: m.tensor(1.0),
    "channels_last": lambda m: m.ones(2, 3, 4, 5).contiguous(memory_format=m.channels_last),
    "ambiguous_channels_last": lambda m: m.ones(2, 1, 1, 5).contiguous(
        memory_format=m.channels_last
    ),
    "channels_last_3d": lambda m: m.ones(2, 3, 4, 5, 6).contiguous(
        memory_format=m.channels_last_3d
    ),
    "empty": lambda m: m.ones(0, 3).t(),
}
CHECKS = {
    "none": lambda m: {},
    "true": lambda m: {"ambiguity_check": True},
    "formats": lambda m: {"ambiguity_check": [m.contiguous_format, m.channels_last]},
    "not_a_list": lambda m: {"ambiguity_check": "x"},
}


@pytest.mark.parametrize("check", sorted(CHECKS))
@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_dim_order(layout, check):
    both(lambda m: LAYOUTS[layout](m).dim_order(**CHECKS[check](m)))
