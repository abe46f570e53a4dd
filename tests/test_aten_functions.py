"""``torch.<op>`` forms of the ``F`` functions (``torch.conv2d``, ``torch.batch_norm(input,
weight, bias, ...)``, the losses' ``int`` reductions...) against torch: values, nodes and
gradients with ATen's argument orders."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import both

rng = np.random.default_rng(0)
X4 = rng.standard_normal((2, 4, 6, 6))
X3 = rng.standard_normal((2, 4, 7))
X2 = rng.standard_normal((4, 5))
X5 = rng.standard_normal((1, 2, 4, 4, 4))

CASES = {
    "adaptive_avg_pool1d": (X3, lambda m, x: m.adaptive_avg_pool1d(x, 3)),
    "adaptive_max_pool1d": (X3, lambda m, x: m.adaptive_max_pool1d(x, 3)),
    "affine_grid_generator": (
        rng.standard_normal((2, 2, 3)),
        lambda m, x: m.affine_grid_generator(x, [2, 1, 3, 4], False),
    ),
    "avg_pool1d": (X3, lambda m, x: m.avg_pool1d(x, 2)),
    "avg_pool1d_stride": (X3, lambda m, x: m.avg_pool1d(x, 3, 2, 1, True, False)),
    "batch_norm": (
        X4,
        lambda m, x: m.batch_norm(
            x,
            x[0, :, 0, 0],
            None,
            m.zeros(4, dtype=x.dtype),
            m.ones(4, dtype=x.dtype),
            True,
            0.1,
            1e-5,
            False,
        ),
    ),  # fmt: skip
    "bilinear": (X2, lambda m, x: m.bilinear(x, x.flip(0), m.ones(3, 5, 5, dtype=x.dtype))),
    "bce_logits": (
        X2,
        lambda m, x: m.binary_cross_entropy_with_logits(
            x, x.flip(0).sigmoid().detach(), None, None, 2
        ),
    ),  # fmt: skip
    "celu": (X2, lambda m, x: m.celu(x, 0.7)),
    "celu_": (X2, lambda m, x: m.celu_(x * 1, 0.7)),
    "channel_shuffle": (X4, lambda m, x: m.channel_shuffle(x, 2)),
    "constant_pad_nd": (X4, lambda m, x: m.constant_pad_nd(x, [1, 2, 0, 1], 0.5)),
    "conv1d": (X3, lambda m, x: m.conv1d(x, x[:3, :, :3], None, 2, 1)),
    "conv2d": (X4, lambda m, x: m.conv2d(x, x[:2, :2, :3, :3], x[0, :2, 0, 0], 1, "same", 1, 2)),
    "conv3d": (X5, lambda m, x: m.conv3d(x, x[:, :, :2, :2, :2].expand(3, 2, 2, 2, 2))),
    "conv_transpose1d": (X3, lambda m, x: m.conv_transpose1d(x, x[:4, :2, :3], None, 2)),
    "conv_transpose2d": (X4, lambda m, x: m.conv_transpose2d(x, x[:4, :1, :2, :2], None, 2, 1, 1)),
    "conv_transpose3d": (X5, lambda m, x: m.conv_transpose3d(x, x[:, :, :2, :2, :2])),
    "convolution": (
        X4,
        lambda m, x: m.convolution(
            x, x[:2, :, :3, :3], None, [1, 1], [1, 1], [1, 1], False, [0, 0], 1
        ),
    ),  # fmt: skip
    "convolution_t": (
        X3,
        lambda m, x: m.convolution(x, x[:4, :2, :3], None, [2], [0], [1], True, [1], 1),
    ),
    "cosine_embedding_loss": (
        X2,
        lambda m, x: m.cosine_embedding_loss(x, x.flip(0), m.tensor([1, -1, 1, -1]), 0.2, 0),
    ),
    "dropout": (X2, lambda m, x: m.dropout(x, 0.3, True)),
    "dropout_eval": (X2, lambda m, x: m.dropout(x, 0.3, False)),
    "dropout_": (X2, lambda m, x: m.dropout_(x * 1, 0.3, True)),
    "alpha_dropout": (X2, lambda m, x: m.alpha_dropout(x, 0.3, True)),
    "feature_alpha_dropout": (X4, lambda m, x: m.feature_alpha_dropout(x, 0.3, True)),
    "feature_dropout": (X4, lambda m, x: m.feature_dropout(x, 0.5, True)),
    "feature_dropout_": (X4, lambda m, x: m.feature_dropout_(x * 1, 0.5, True)),
    "embedding": (X2, lambda m, x: m.embedding(x, m.tensor([[0, 2], [3, 0]]))),
    "embedding_padding": (X2, lambda m, x: m.embedding(x, m.tensor([0, 2, 3, 2]), 2, True)),
    "frobenius_norm": (X4, lambda m, x: m.frobenius_norm(x, [1, 2], True)),
    "grid_sampler": (
        X4,
        lambda m, x: m.grid_sampler(x, x[:, :2].permute(0, 2, 3, 1).tanh(), 1, 2, True),
    ),
    "group_norm": (X4, lambda m, x: m.group_norm(x, 2, x[0, :, 0, 0], None, 1e-3)),
    "hardshrink": (X2, lambda m, x: m.hardshrink(x, 0.3)),
    "hardshrink_method": (X2, lambda m, x: x.hardshrink()),
    "hinge_embedding_loss": (X2, lambda m, x: m.hinge_embedding_loss(x, x.sign().detach(), 0.5)),
    "instance_norm": (
        X3,
        lambda m, x: m.instance_norm(x, None, None, None, None, True, 0.1, 1e-5, False),
    ),
    "kl_div": (X2, lambda m, x: m.kl_div(x.log_softmax(1), x.flip(0).softmax(1).detach())),
    "kl_div_mean": (X2, lambda m, x: m.kl_div(x.log_softmax(1), x.flip(0).softmax(1).detach(), 1)),
    "losses_default_not_reduced": (
        X2,
        lambda m, x: m.stack(
            [
                m.binary_cross_entropy_with_logits(x, x.sigmoid().detach()),
                m.hinge_embedding_loss(x, x.sign().detach()),
                m.margin_ranking_loss(x, x.flip(0), x.sign().detach()),
            ]
        ),
    ),
    "kl_div_log_target": (
        X2,
        lambda m, x: m.kl_div(
            x.log_softmax(1), x.flip(0).log_softmax(1).detach(), 2, log_target=True
        ),
    ),  # fmt: skip
    "layer_norm": (X3, lambda m, x: m.layer_norm(x, [7], x[0, 0], None, 1e-3)),
    "margin_ranking_loss": (
        X2,
        lambda m, x: m.margin_ranking_loss(x, x.flip(0), x.sign().detach(), 0.1, 2),
    ),
    "max_pool1d": (X3, lambda m, x: m.max_pool1d(x, 2)),
    "max_pool1d_with_indices": (X3, lambda m, x: m.max_pool1d_with_indices(x, 3, 2, 1)),
    "max_pool2d": (X4, lambda m, x: m.max_pool2d(x, 2, [], 1, 1, True)),
    "max_pool3d": (X5, lambda m, x: m.max_pool3d(x, 2)),
    "nuclear_norm": (X2, lambda m, x: m.nuclear_norm(x)),
    "nuclear_norm_dim": (X3, lambda m, x: m.nuclear_norm(x, [0, 2], True)),
    "pixel_shuffle": (X4, lambda m, x: m.pixel_shuffle(x, 2)),
    "pixel_unshuffle": (X4, lambda m, x: m.pixel_unshuffle(x, 3)),
    "poisson_nll_loss": (
        X2,
        lambda m, x: m.poisson_nll_loss(x, x.abs().detach(), True, True, 1e-8, 1),
    ),
    "prelu": (X3, lambda m, x: m.prelu(x, m.full((4,), 0.2, dtype=x.dtype))),
    "prelu_method": (X3, lambda m, x: x.prelu(m.full((1,), 0.2, dtype=x.dtype))),
    "rms_norm": (X3, lambda m, x: m.rms_norm(x, [7], None, 1e-4)),
    "rrelu": (X2, lambda m, x: m.rrelu(x, 0.1, 0.3, True)),
    "rrelu_eval": (X2, lambda m, x: m.rrelu(x)),
    "rrelu_": (X2, lambda m, x: m.rrelu_(x * 1, 0.1, 0.3, True)),
    "selu": (X2, lambda m, x: m.selu(x)),
    "selu_": (X2, lambda m, x: m.selu_(x * 1)),
    "threshold": (X2, lambda m, x: m.threshold(x, 0.1, -1.0)),
    "threshold_": (X2, lambda m, x: m.threshold_(x * 1, 0.1, -1.0)),
    "triplet_margin_loss": (
        X2,
        lambda m, x: m.triplet_margin_loss(x, x.flip(0), x * 2, 0.5, 1.5, 1e-6, True, 0),
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_aten_forms_match_torch(name):
    x0, f = CASES[name]

    def fn(m):
        m.manual_seed(0)
        x = m.tensor(x0, requires_grad=True)
        out = f(m, x)
        first = out[0] if isinstance(out, tuple) else out
        w = m.linspace(-1, 1, first.numel(), dtype=first.dtype).reshape(first.shape)
        (first * w).sum().backward()
        return out, x.grad

    both(fn)


def test_embedding_renorm_and_detach_():
    def fn(m):
        w = m.tensor(X2)
        out = m.embedding_renorm_(w, m.tensor([0, 2]), 1.0, 2.0)
        y = m.tensor(X2, requires_grad=True) * 2
        z = m.detach_(y)
        return out is w, w, z is y, y.requires_grad, y.grad_fn is None

    both(fn)


def test_reduction_values_other_than_mean_and_sum_do_not_reduce():
    both(lambda m: m.kl_div(m.ones(2), m.ones(2), 3))
    both(lambda m: m.margin_ranking_loss(m.ones(2), m.zeros(2), m.ones(2), 0.5, -1))


NEW = {
    "empty": lambda m, x: x.new(),
    "sizes": lambda m, x: x.new(2, 3).shape,
    "size_object": lambda m, x: x.new(m.Size([3])).shape,
    "zero_sizes": lambda m, x: x.new(2, 0),
    "list": lambda m, x: x.new([1, 2]),
    "tuple_is_data": lambda m, x: x.new((2, 3)),
    "empty_list": lambda m, x: x.new([]),
    "int_tensor_floats": lambda m, x: m.ones(2, dtype=m.int32).new([1.5, 2]),
    "tensor_same_dtype": lambda m, x: x.new(m.ones(3, dtype=m.float64)),
    "tensor_other_dtype": lambda m, x: x.new(m.ones(3)),
    "number": lambda m, x: x.new(2.5),
    "string": lambda m, x: x.new("ab"),
    "none": lambda m, x: x.new(None),
}


@pytest.mark.parametrize("name", sorted(NEW))
def test_legacy_tensor_new(name):
    both(lambda m: NEW[name](m, m.ones(2, dtype=m.float64, requires_grad=True)))


def test_fill():
    def fn(m):
        x = m.tensor([0.5, -1.0, 2.0], requires_grad=True)
        v = m.tensor(2.0, requires_grad=True)
        a, b = m.fill(x, 2.0), m.fill(x, v)
        (a.sum() + (b * m.arange(3.0)).sum()).backward()
        names = [type(t.grad_fn).__name__ for t in (a, b)]
        ints = (
            m.fill(m.ones(2, dtype=m.int64), 2.7),
            m.fill(m.ones(2, dtype=m.int64), m.tensor(2.7)),
        )
        return a, b, x.grad, v.grad, names, ints

    both(fn)
    both(lambda m: m.fill(m.ones(3), m.ones(2)))
