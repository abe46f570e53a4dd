"""Gradients recorded with ``create_graph=True`` against torch, op by op: whether they require
grad, the node PyTorch records for the backward (``MaxPool2DWithIndicesBackwardBackward0`` for a
backward kernel without a formula of its own here: the gradient first, then the saved inputs) and
its edges, and the second-order gradients (or the error where PyTorch has no derivative)."""

from __future__ import annotations

import math

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


DIST_SHAPES = {"same": ((3, 4), (3, 4)), "broadcast": ((3, 4), (4,)), "0-d": ((), ())}


@pytest.mark.parametrize("wrt", ["self", "other", "both"])
@pytest.mark.parametrize("shapes", list(DIST_SHAPES))
@pytest.mark.parametrize("p", [0, 1, 2, 3, 0.5, 1.5, math.inf, -1.0, -math.inf])
def test_dist_gradients_are_norm_backward_of_the_difference(p, shapes, wrt):
    """``dist``'s gradients are ``norm_backward(grad, self - other, p, result)`` and its
    negation, recorded op by op with create_graph; for ``p = 0`` the gradient of ``self`` is
    undefined, and negating it for ``other`` raises (with or without create_graph)."""
    a_shape, b_shape = DIST_SHAPES[shapes]

    def fn(m, create_graph):
        a = m.tensor(X2[:3].reshape(-1)[: math.prod(a_shape)].reshape(a_shape), requires_grad=True)
        b = m.tensor(np.resize(X2[3], b_shape), requires_grad=True)
        with m.no_grad():  # a tie for the inf norms
            b.view(-1)[0] = a.reshape(-1)[0] - a.abs().max()
        inputs = {"self": [a], "other": [b], "both": [a, b]}[wrt]
        out = m.dist(a, b, p)
        grads = m.autograd.grad(out, inputs, create_graph=create_graph, allow_unused=True)
        found = [
            None if g is None else (g, g.requires_grad, _names(g.grad_fn) if g.grad_fn else None)
            for g in grads
        ]
        if create_graph and all(g is not None for g in grads):
            seconds = m.autograd.grad(sum((g * g).sum() for g in grads), [a, b], allow_unused=True)
            # PyTorch's efficient zeros (sgn's derivative) are zeros
            found.append([s if s is None else s.detach().clone() + 0 for s in seconds])
        return found

    both(lambda m: fn(m, False))
    both(lambda m: fn(m, True), rtol=1e-6, atol=1e-8)


def _tree(fn, depth=0):
    """The node names below ``fn``, six levels deep."""
    if fn is None or depth > 6:
        return None
    return (type(fn).__name__, [_tree(n, depth + 1) for n, _ in fn.next_functions])


@pytest.mark.parametrize("dtype", ["float64", "float32", "complex128"])
@pytest.mark.parametrize("p", [1, 2, 3, 0.5, math.inf])
@pytest.mark.parametrize("dim", [0, -1])
@pytest.mark.parametrize("maxnorm", [1, 0.5, 100.0])
def test_renorm_gradient_is_renorm_backward(dtype, p, dim, maxnorm):
    """``renorm_backward`` op by op: the norms and the gradient's projection in the accumulate
    type (float64 for float32 on the CPU, cast back before the ``where``), ``norm_backward``, and
    the scaled gradient where a slice was renormalized (the maxnorm as written: ``MulBackward1``
    keeps ``1``, not ``1.0``)."""

    def fn(m):
        a = m.tensor(X3[0], dtype=m.float64) * (1 + 0.5j if dtype == "complex128" else 1)
        a = a.to(getattr(m, dtype)).requires_grad_()
        out = a.renorm(p, dim, maxnorm)
        w = m.linspace(-1, 1, out.numel(), dtype=m.float64).reshape(out.shape).to(out.dtype)
        (g,) = m.autograd.grad((out * w).sum().real, a, create_graph=True)
        (gg,) = m.autograd.grad((g * g.conj()).real.sum(), a)
        return g, _tree(g.grad_fn), gg

    both(fn, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("maxnorm", [1, 1.0])
def test_renorm_gradient_keeps_the_maxnorm_as_written(maxnorm):
    def fn(m):
        a = m.tensor([[3.0, 4.0], [0.1, 0.2]], dtype=m.float64, requires_grad=True)
        (g,) = m.autograd.grad(a.renorm(2, 0, maxnorm).sum(), a, create_graph=True)
        factor = g.grad_fn.next_functions[0][0].next_functions[0][0]
        return type(factor).__name__, repr(factor._saved_other)

    both(fn)


@pytest.mark.parametrize("wrt", ["abs", "angle", "both"])
@pytest.mark.parametrize("shapes", [((3,), (3,)), ((2, 3), (3,)), ((), (2,))])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_polar_gradients_are_polar_backward(dtype, shapes, wrt):
    """``polar_backward(grad, result)``: ``real(grad.conj() * sgn(result))`` for ``abs`` and
    ``real(grad.conj() * (result * 1j))`` for ``angle``, recorded op by op."""
    a0 = np.abs(np.resize(X2[0], shapes[0])) + 0.5
    b0 = np.resize(X2[1], shapes[1])

    def fn(m):
        a = m.tensor(a0, dtype=getattr(m, dtype), requires_grad=True)
        b = m.tensor(b0, dtype=getattr(m, dtype), requires_grad=True)
        out = m.polar(a, b)
        w = m.linspace(-1, 1, out.numel(), dtype=m.float64).reshape(out.shape) * (1 - 0.5j)
        inputs = {"abs": [a], "angle": [b], "both": [a, b]}[wrt]
        grads = m.autograd.grad((out * w.to(out.dtype)).real.sum(), inputs, create_graph=True)
        found = [(g, _tree(g.grad_fn)) for g in grads]
        seconds = m.autograd.grad(sum((g * g).sum() for g in grads), [a, b], allow_unused=True)
        return found, seconds

    # the second derivatives in ``abs`` are zero: float32 leaves rounding noise there
    both(fn, rtol=1e-5, atol=1e-5)


_X8 = np.random.default_rng(1).standard_normal((2, 8, 4, 6))
_COLUMNS = np.random.default_rng(2).standard_normal((2, 12, 6))
LAYOUT_CASES = {
    "pad": (_X8, lambda m, x: m.nn.functional.pad(x, (1, 2, 0, 3), value=0.5)),
    "pad_crop": (_X8, lambda m, x: m.nn.functional.pad(x, (-1, 2, 1, -2))),
    "pad_3d": (_X8, lambda m, x: m.nn.functional.pad(x, (1, 1, 1, 1, 1, 1))),
    "pixel_shuffle": (_X8, lambda m, x: m.nn.functional.pixel_shuffle(x, 2)),
    "pixel_unshuffle": (_X8, lambda m, x: m.nn.functional.pixel_unshuffle(x, 2)),
    "unfold": (_X8, lambda m, x: m.nn.functional.unfold(x, (2, 3), padding=1, stride=(1, 2))),
    "unfold_unbatched": (_X8[0], lambda m, x: m.nn.functional.unfold(x, 2)),
    "fold": (_COLUMNS, lambda m, x: m.nn.functional.fold(x, (4, 5), (2, 3), stride=(1, 2))),
    "fold_unbatched": (_COLUMNS[0], lambda m, x: m.nn.functional.fold(x, (4, 5), (2, 3))),
    "conv_padded": (_X8, lambda m, x: m.nn.functional.conv2d(x, x[:2, :, :2, :2], padding=1)),
}


@pytest.mark.parametrize("name", list(LAYOUT_CASES))
def test_layout_op_backwards_are_recorded_as_their_inverse_ops(name):
    """A linear layout op's backward is another table op (``constant_pad_nd`` with negated pads,
    ``pixel_unshuffle``, ``col2im``, ``im2col``), recorded under that op's node; the loss is
    quadratic so that the first gradient depends on the input."""
    x0, f = LAYOUT_CASES[name]

    def fn(m):
        x = m.tensor(x0, requires_grad=True)
        y = f(m, x)
        w = m.linspace(-1, 1, y.numel(), dtype=y.dtype).reshape(y.shape)
        (g,) = m.autograd.grad((y * w * y).sum(), x, create_graph=True)
        tree = _tree(g.grad_fn)
        (gg,) = m.autograd.grad((g * g).sum(), x)
        return g, tree, gg

    both(fn)
