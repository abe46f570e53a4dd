"""Gradients recorded with ``create_graph=True`` against torch, op by op: whether they require
grad, the node PyTorch records for the backward (``MaxPool2DWithIndicesBackwardBackward0`` for a
backward kernel without a formula of its own here: the gradient first, then the saved inputs) and
its edges, and the second-order gradients (or the error where PyTorch has no derivative)."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import both

rng = np.random.default_rng(0)
X4 = rng.standard_normal((2, 3, 6, 6))
X2 = rng.standard_normal((4, 5))
X3 = rng.standard_normal((2, 3, 7))
CASES = {
    "linalg_cross": (
        rng.standard_normal((4, 3)),
        lambda m, x: m.linalg.cross(x, x[:1].detach() * 2 + x.flip(0)),
    ),
    "max_pool2d": (X4, lambda m, x: m.nn.functional.max_pool2d(x, 2)),
    "max_pool2d_idx": (X4, lambda m, x: m.nn.functional.max_pool2d(x, 3, 1, 1)),
    "max_pool1d": (X3, lambda m, x: m.nn.functional.max_pool1d(x, 2)),
    "avg_pool2d": (X4, lambda m, x: m.nn.functional.avg_pool2d(x, 2)),
    "adaptive_avg": (X4, lambda m, x: m.nn.functional.adaptive_avg_pool2d(x, 3)),
    "adaptive_max": (X4, lambda m, x: m.nn.functional.adaptive_max_pool2d(x, 3)),
    "interp_bilinear": (
        X4,
        lambda m, x: m.nn.functional.interpolate(x, scale_factor=2, mode="bilinear"),
    ),
    "interp_nearest": (X4, lambda m, x: m.nn.functional.interpolate(x, scale_factor=2)),
    "conv2d": (X4, lambda m, x: m.nn.functional.conv2d(x, x[:2, :, :3, :3])),
    "batch_norm": (X4, lambda m, x: m.nn.functional.batch_norm(x, None, None, training=True)),
    "layer_norm": (X4, lambda m, x: m.nn.functional.layer_norm(x, (6,))),
    "group_norm": (X4, lambda m, x: m.nn.functional.group_norm(x, 3)),
    "instance_norm": (X4, lambda m, x: m.nn.functional.instance_norm(x)),
    "softmax": (X2, lambda m, x: m.softmax(x, 1)),
    "log_softmax": (X2, lambda m, x: m.log_softmax(x, 1)),
    "cross_entropy": (X2, lambda m, x: m.nn.functional.cross_entropy(x, m.tensor([0, 1, 2, 3]))),
    "gelu": (X2, lambda m, x: m.nn.functional.gelu(x)),
    "silu": (X2, lambda m, x: m.nn.functional.silu(x)),
    "softplus": (X2, lambda m, x: m.nn.functional.softplus(x)),
    "elu": (X2, lambda m, x: m.nn.functional.elu(x)),
    "leaky": (X2, lambda m, x: m.nn.functional.leaky_relu(x)),
    "hardswish": (X2, lambda m, x: m.nn.functional.hardswish(x)),
    "mish": (X2, lambda m, x: m.nn.functional.mish(x)),
    "logsigmoid": (X2, lambda m, x: m.nn.functional.logsigmoid(x)),
    "tanh": (X2, lambda m, x: m.tanh(x)),
    "sigmoid": (X2, lambda m, x: m.sigmoid(x)),
    "norm": (X2, lambda m, x: m.linalg.norm(x)),
    "vector_norm3": (X2, lambda m, x: m.linalg.vector_norm(x, 3, dim=1)),
    "std": (X2, lambda m, x: x.std(1)),
    "var": (X2, lambda m, x: x.var()),
    "logsumexp": (X2, lambda m, x: m.logsumexp(x, 1)),
    "prod": (X2, lambda m, x: x.prod(1)),
    "cumsum": (X2, lambda m, x: x.cumsum(1)),
    "cumprod": (X2, lambda m, x: x.cumprod(1)),
    "sort": (X2, lambda m, x: x.sort(1)[0]),
    "topk": (X2, lambda m, x: x.topk(2, 1)[0]),
    "max_dim": (X2, lambda m, x: x.max(1)[0]),
    "amax": (X2, lambda m, x: x.amax(1)),
    "median": (X2, lambda m, x: x.median(1)[0]),
    "kthvalue": (X2, lambda m, x: x.kthvalue(2, 1)[0]),
    "gather": (X2, lambda m, x: x.gather(1, m.tensor([[0, 1], [2, 2], [4, 0], [1, 1]]))),
    "index_select": (X2, lambda m, x: x.index_select(1, m.tensor([0, 2, 2]))),
    "cdist": (X2, lambda m, x: m.cdist(x, x[:2] * 2)),
    "cosine_sim": (X2, lambda m, x: m.nn.functional.cosine_similarity(x, x.flip(0))),
    "pairwise": (X2, lambda m, x: m.nn.functional.pairwise_distance(x, x.flip(0))),
    "unfold": (X4, lambda m, x: m.nn.functional.unfold(x, 2)),
    "fold": (rng.standard_normal((1, 12, 9)), lambda m, x: m.nn.functional.fold(x, (4, 4), 2)),
    "pad_reflect": (X4, lambda m, x: m.nn.functional.pad(x, (1, 2, 1, 1), mode="reflect")),
    "pad_replicate": (X4, lambda m, x: m.nn.functional.pad(x, (1, 2, 1, 1), mode="replicate")),
    "pad_circular": (X4, lambda m, x: m.nn.functional.pad(x, (1, 2, 1, 1), mode="circular")),
    "grid_sample": (
        X4,
        lambda m, x: m.nn.functional.grid_sample(
            x, x[:, :2].permute(0, 2, 3, 1).tanh(), align_corners=False
        ),
    ),
    "pixel_shuffle": (
        rng.standard_normal((1, 8, 3, 3)),
        lambda m, x: m.nn.functional.pixel_shuffle(x, 2),
    ),
    "embedding_w": (X2, lambda m, x: m.nn.functional.embedding(m.tensor([0, 2, 3]), x)),
    "mse": (X2, lambda m, x: m.nn.functional.mse_loss(x, x.flip(0).detach())),
    "smooth_l1": (X2, lambda m, x: m.nn.functional.smooth_l1_loss(x, x.flip(0).detach())),
    "bce": (
        X2,
        lambda m, x: m.nn.functional.binary_cross_entropy(
            x.sigmoid(), x.flip(0).sigmoid().detach()
        ),
    ),
    "bce_logits": (
        X2,
        lambda m, x: m.nn.functional.binary_cross_entropy_with_logits(
            x, x.flip(0).sigmoid().detach()
        ),
    ),
    "kl_div": (
        X2,
        lambda m, x: m.nn.functional.kl_div(x.log_softmax(1), x.flip(0).softmax(1).detach()),
    ),
    "det": (rng.standard_normal((3, 3)), lambda m, x: m.linalg.det(x)),
    "inv": (rng.standard_normal((3, 3)), lambda m, x: m.linalg.inv(x)),
    "solve": (rng.standard_normal((3, 3)), lambda m, x: m.linalg.solve(x, x.T)),
    "cholesky": (
        rng.standard_normal((3, 3)),
        lambda m, x: m.linalg.cholesky(x @ x.T + m.eye(3, dtype=x.dtype)),
    ),
    "svdvals": (rng.standard_normal((4, 3)), lambda m, x: m.linalg.svdvals(x)),
    "eigvalsh": (rng.standard_normal((3, 3)), lambda m, x: m.linalg.eigvalsh(x + x.T)),
    "fft": (X2, lambda m, x: m.fft.rfft(x).abs()),
    "atan2": (X2, lambda m, x: m.atan2(x, x.flip(0))),
    "clamp": (X2, lambda m, x: x.clamp(-0.5, 0.5)),
    "where": (X2, lambda m, x: m.where(x > 0, x, x * 2)),
    "masked_fill": (X2, lambda m, x: x.masked_fill(x > 0, 1.0)),
    "index_put": (X2, lambda m, x: x.index_put((m.tensor([0, 1]),), x[2:4] * 2)),
    "scatter_add": (
        X2,
        lambda m, x: m.zeros(4, 5, dtype=x.dtype).scatter_add(
            1, m.tensor([[0, 1], [2, 2], [4, 0], [1, 1]]), x[:, :2]
        ),
    ),
    "trace": (rng.standard_normal((3, 3)), lambda m, x: m.trace(x)),
    "diag": (rng.standard_normal((3, 3)), lambda m, x: m.diag(x)),
    "dropout": (X2, lambda m, x: m.nn.functional.dropout(x, 0.3)),
    "glu": (X2[:, :4], lambda m, x: m.nn.functional.glu(x)),
    "hardtanh": (X2, lambda m, x: m.nn.functional.hardtanh(x)),
    "relu6": (X2, lambda m, x: m.nn.functional.relu6(x)),
    "prelu": (X2, lambda m, x: m.nn.functional.prelu(x, m.tensor([0.25], dtype=x.dtype))),
    "erf": (X2, lambda m, x: m.erf(x)),
    "lgamma": (X2, lambda m, x: m.lgamma(x)),
    "pow_t": (np.abs(X2) + 0.5, lambda m, x: x**x),
    "frac_pool": (
        X4,
        lambda m, x: m.nn.functional.fractional_max_pool2d(
            x, 2, output_size=3, _random_samples=m.full((2, 3, 2), 0.3, dtype=x.dtype)
        ),
    ),
}


def _names(node):
    return [None if n is None else type(n).__name__ for n, _ in node.next_functions]


@pytest.mark.parametrize("name", sorted(CASES))
def test_create_graph_nodes_and_second_order_gradients(name):
    x0, f = CASES[name]

    def fn(m):
        m.manual_seed(0)
        x = m.tensor(x0, requires_grad=True)
        y = f(m, x)
        w = m.linspace(-1, 1, y.numel(), dtype=y.dtype).reshape(y.shape)
        (g,) = m.autograd.grad((y * w).sum(), x, create_graph=True)
        node = g.grad_fn
        shape = (type(node).__name__, _names(node)) if node is not None else None
        (gg,) = m.autograd.grad((g * g).sum(), x)
        return g, g.requires_grad, shape, gg

    both(fn, rtol=1e-6, atol=1e-8)


def test_pdist_edges_where_pytorch_also_takes_the_result():
    """``_pdist_backward`` takes the forward's result too (an edge to ``PdistBackward0``);
    leafgrad's kernel node has the gradient's and the input's edges only (the gradient's
    is None here: it does not require grad)."""
    import leafgrad as lg

    x = lg.tensor(X2, requires_grad=True)
    (g,) = lg.autograd.grad(lg.nn.functional.pdist(x).sum(), x, create_graph=True)
    assert type(g.grad_fn).__name__ == "PdistBackwardBackward0"
    assert _names(g.grad_fn) == [None, "AccumulateGrad"]
