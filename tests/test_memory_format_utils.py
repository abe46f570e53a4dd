"""nn.utils.convert_conv2d_weight_memory_format / convert_conv3d_weight_memory_format against
PyTorch: which weights change layout, in place of their data (same Parameter objects, version
bumped), and the layouts of later gradients."""

from __future__ import annotations

from conftest import both


def test_convert_conv_weight_memory_formats():
    def f(m):
        m.manual_seed(0)
        net = m.nn.Sequential(
            m.nn.Conv2d(3, 4, 3),
            m.nn.Sequential(m.nn.ConvTranspose2d(4, 2, 2)),
            m.nn.Conv3d(2, 2, 1),
            m.nn.ConvTranspose3d(2, 2, 1),
            m.nn.Linear(2, 2),
        )
        weight = net[0].weight
        same = m.nn.utils.convert_conv2d_weight_memory_format(net, m.channels_last) is net
        layouts = [p.stride() for p in net.parameters()]
        m.nn.utils.convert_conv3d_weight_memory_format(net, m.channels_last_3d)
        layouts += [p.stride() for p in net.parameters()]
        y = net[0](m.randn(1, 3, 5, 5))
        y.sum().backward()
        return (
            same,
            net[0].weight is weight,
            weight._version,
            weight.is_leaf,
            layouts,
            net[0].weight.grad.stride(),
            y,
        )

    both(f, rtol=1e-5, atol=1e-6)
