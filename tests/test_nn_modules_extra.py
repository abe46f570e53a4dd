"""Modules over the extra ``nn.functional`` ops (activations, distances, losses), against torch."""

from __future__ import annotations

import pytest
from conftest import both

ACT = {
    "Threshold": lambda nn: nn.Threshold(0.1, 20.0),
    "Threshold_inplace": lambda nn: nn.Threshold(0.1, -2.0, inplace=True),
    "GLU": lambda nn: nn.GLU(),
    "PReLU": lambda nn: nn.PReLU(),
    "PReLU_channels": lambda nn: nn.PReLU(3, init=0.1),
    "LogSigmoid": lambda nn: nn.LogSigmoid(),
    "Softshrink": lambda nn: nn.Softshrink(0.3),
    "Hardshrink": lambda nn: nn.Hardshrink(),
    "RReLU_eval": lambda nn: nn.RReLU().eval(),
    "PixelShuffle": lambda nn: nn.PixelShuffle(2),
    "PixelUnshuffle": lambda nn: nn.PixelUnshuffle(2),
}


@pytest.mark.parametrize("name", sorted(ACT))
def test_activation_modules(name):
    def fn(m):
        layer = ACT[name](m.nn)
        shape = (2, 12, 4, 4) if "Pixel" in name else (2, 3, 4)
        x = m.arange(float(2 * 12 * 16)).reshape(-1)[: _numel(shape)].reshape(shape) / 50 - 1.5
        x = x.detach().requires_grad_()
        y = layer(x.clone() if "inplace" in name else x)
        (y * y).sum().backward()
        return repr(layer), y, x.grad, [p.grad for p in layer.parameters()]

    both(fn, rtol=1e-5, atol=1e-6)


def _numel(shape):
    n = 1
    for s in shape:
        n *= s
    return n


LOSSES = {
    "PoissonNLLLoss": (lambda nn: nn.PoissonNLLLoss(), "pos"),
    "PoissonNLLLoss_full": (lambda nn: nn.PoissonNLLLoss(log_input=False, full=True), "pos"),
    "GaussianNLLLoss": (lambda nn: nn.GaussianNLLLoss(), "var"),
    "HingeEmbeddingLoss": (lambda nn: nn.HingeEmbeddingLoss(margin=0.5), "sign"),
    "SoftMarginLoss": (lambda nn: nn.SoftMarginLoss(reduction="sum"), "sign"),
    "MultiLabelMarginLoss": (lambda nn: nn.MultiLabelMarginLoss(), "labels"),
    "MultiLabelSoftMarginLoss": (lambda nn: nn.MultiLabelSoftMarginLoss(), "multi"),
    "MultiMarginLoss": (lambda nn: nn.MultiMarginLoss(p=2, margin=0.7), "class"),
    "TripletMarginLoss": (lambda nn: nn.TripletMarginLoss(margin=0.5, swap=True), "triplet"),
    "TripletMarginWithDistanceLoss": (
        lambda nn: nn.TripletMarginWithDistanceLoss(margin=0.3),
        "triplet",
    ),
}


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_loss_modules(name):
    make, kind = LOSSES[name]

    def fn(m):
        loss = make(m.nn)
        x = (m.arange(12.0).reshape(3, 4) / 7 - 0.6).requires_grad_()
        if kind == "triplet":
            p = (m.arange(12.0).reshape(3, 4) / 5 - 1).requires_grad_()
            n = (m.arange(12.0).reshape(3, 4).flip(0) / 9).requires_grad_()
            out = loss(x, p, n)
            out.backward()
            return repr(loss), out, x.grad, p.grad, n.grad
        if kind == "pos":
            out = loss(x.exp() if "full" in name else x, m.arange(12.0).reshape(3, 4) % 4)
        elif kind == "var":
            out = loss(x, m.zeros(3, 4), m.ones(3, 4) * 0.5)
        elif kind == "sign":
            out = loss(x, m.tensor([[1.0, -1.0, 1.0, -1.0]] * 3))
        elif kind == "labels":
            out = loss(x, m.tensor([[3, 0, -1, 1], [0, 1, 2, 3], [1, -1, 0, 0]]))
        elif kind == "multi":
            out = loss(x, m.tensor([[1.0, 0.0, 1.0, 0.0]] * 3))
        else:
            out = loss(x, m.tensor([0, 3, 1]))
        out.backward()
        return repr(loss), out, x.grad

    both(fn, rtol=1e-5, atol=1e-6)


def test_distance_modules():
    def fn(m):
        a = (m.arange(12.0).reshape(3, 4) / 5).requires_grad_()
        b = m.arange(12.0).reshape(3, 4).flip(1) / 3
        d = m.nn.PairwiseDistance(p=1.5, keepdim=True)(a, b)
        c = m.nn.CosineSimilarity(dim=0)(a, b)
        (d.sum() + c.sum()).backward()
        return d, c, a.grad

    both(fn, rtol=1e-5, atol=1e-6)


def test_constructor_errors():
    both(lambda m: m.nn.MultiMarginLoss(p=3))
    both(lambda m: m.nn.TripletMarginLoss(margin=0))


RESAMPLING = {
    "upsample_nearest": lambda nn: nn.Upsample(scale_factor=2),
    "upsample_bilinear_size": lambda nn: nn.Upsample(size=(3, 5), mode="bilinear"),
    "upsample_bilinear_corners": lambda nn: nn.Upsample(
        scale_factor=(2, 1.5), mode="bilinear", align_corners=True
    ),
    "upsampling_nearest2d": lambda nn: nn.UpsamplingNearest2d(scale_factor=2),
    "upsampling_bilinear2d": lambda nn: nn.UpsamplingBilinear2d(size=6),
    "unfold": lambda nn: nn.Unfold(2),
    "unfold_padded": lambda nn: nn.Unfold((2, 3), dilation=1, padding=1, stride=2),
}


@pytest.mark.parametrize("name", sorted(RESAMPLING))
def test_resampling_modules(name):
    def fn(m):
        module = RESAMPLING[name](m.nn)
        x = m.arange(32.0).reshape(1, 2, 4, 4).requires_grad_()
        y = module(x)
        y.pow(2).sum().backward()
        return repr(module), y, type(y.grad_fn).__name__, x.grad

    both(fn)


def test_fold_module():
    def fn(m):
        cols = m.arange(24.0).reshape(1, 4, 6).requires_grad_()
        fold = m.nn.Fold(output_size=(3, 4), kernel_size=2)
        out = fold(cols)
        out.pow(2).sum().backward()
        return repr(fold), out, type(out.grad_fn).__name__, cols.grad

    both(fn)
