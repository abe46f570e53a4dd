"""Gradients of ``nn.functional`` ops taken with ``create_graph=True`` run PyTorch's derivative
formulas (Note [Graph formulas] in leafgrad/ops/formulas.py; leafgrad/ops/formulas_nn.py): the
backward kernels (``TanhBackwardBackward0``, ``ThresholdBackwardBackward0``,
``SoftmaxBackwardDataBackward0``, ``MseLossBackwardBackward0``...) and the composite formulas
(silu, mish, the logits losses, ``F.linear``'s products, norms) have torch's ``grad_fn`` names,
graph shapes and first to third derivatives.

Each new op and shape compiles JAX programs, so by default a representative set of cases runs
(every backward kernel recorded at least once), mostly to the second order;
``LEAFGRAD_FORMULA_CASES=all`` runs every case to the third order, and the numerical VJP check of
the ops this module records first (conftest.py, Note [VJP samples]) at its teardown."""

from __future__ import annotations

import os

import numpy as np
import pytest
import torch
from conftest import both
from formula_check import check_graph, graph_signature

import leafgrad as lg

ALL = os.environ.get("LEAFGRAD_FORMULA_CASES") == "all"


@pytest.fixture(autouse=True, scope="module")
def _vjp_check_module(request):
    """conftest.py's numerical VJP check of the ops this module records first, at its teardown,
    with ``LEAFGRAD_FORMULA_CASES=all`` (or under pytest-xdist) only: the ops' samples stay in
    ``VJP_SAMPLES``, so that in a whole-suite run the next module's teardown or
    tests/test_zz_vjp_numerical.py checks them."""
    if ALL or os.environ.get("PYTEST_XDIST_WORKER"):
        request.getfixturevalue("_vjp_check_module")
    yield


RNG = np.random.default_rng(0)
X = RNG.standard_normal((3, 4))
T = RNG.standard_normal((3, 4))
W54 = RNG.standard_normal((5, 4))
B5 = RNG.standard_normal(5)
V4 = RNG.standard_normal(4)
V4B = RNG.standard_normal(4)
SIGNS = np.sign(RNG.standard_normal((3, 4)))
TARGET = [1, 0, 3]
X3 = RNG.standard_normal((2, 4, 3))


def F(m):
    return m.nn.functional


def _t(m, a, dtype=None):
    return m.tensor(a, dtype=dtype or m.float64)


CASES = {
    # activations with backward kernels
    "tanh": (lambda m, x: x.tanh(), X),
    "tanh_mul": (lambda m, x: x.tanh() * x, X),
    "tanh_inplace": (lambda m, x: (x * 1.0).tanh_() * x, X),
    "sigmoid": (lambda m, x: x.sigmoid(), X),
    "F_tanh_float32": (lambda m, x: F(m).tanh(x.float()), X),
    "relu": (lambda m, x: F(m).relu(x), X),
    "relu_mul": (lambda m, x: F(m).relu(x) * x, X),
    "relu_inplace": (lambda m, x: F(m).relu(x * 1.0, inplace=True) * x, X),
    "hardtanh": (lambda m, x: F(m).hardtanh(x, -0.5, 0.7) * x, X),
    "hardtanh_inplace": (lambda m, x: F(m).hardtanh(x * 1.0, -0.5, 0.5, inplace=True) * x, X),
    "relu6_inplace": (lambda m, x: F(m).relu6(x * 4.0, inplace=True) * x, X),
    "leaky_relu": (lambda m, x: F(m).leaky_relu(x, 0.1) * x, X),
    "leaky_relu_inplace": (lambda m, x: F(m).leaky_relu(x * 1.0, 0.2, inplace=True) * x, X),
    "elu": (lambda m, x: F(m).elu(x, 0.7), X),
    "elu_inplace": (lambda m, x: F(m).elu(x * 1.0, 0.5, inplace=True) * x, X),
    "celu": (lambda m, x: F(m).celu(x, 2.0), X),
    "celu_inplace": (lambda m, x: F(m).celu(x * 1.0, 1.5, inplace=True) * x, X),
    "selu": (lambda m, x: F(m).selu(x), X),
    "gelu": (lambda m, x: F(m).gelu(x), X),
    "gelu_tanh": (lambda m, x: F(m).gelu(x, approximate="tanh"), X),
    "gelu_float32": (lambda m, x: F(m).gelu(x.float()) * x.float(), X),
    "softplus_beta": (lambda m, x: F(m).softplus(x, 2.0, 1.5), X),
    "hardswish": (lambda m, x: F(m).hardswish(x * 3), X),
    "hardswish_inplace": (lambda m, x: F(m).hardswish(x * 3.0, inplace=True), X),
    "logsigmoid": (lambda m, x: F(m).logsigmoid(x * 3), X),
    "softshrink": (lambda m, x: F(m).softshrink(x, 0.3) * x, X),
    "hardshrink": (lambda m, x: F(m).hardshrink(x, 0.3) * x, X),
    "threshold": (lambda m, x: F(m).threshold(x, 0.1, 2.0) * x, X),
    "threshold_inplace": (lambda m, x: F(m).threshold(x * 1.0, 0.1, 2.0, inplace=True) * x, X),
    "glu": (lambda m, x: F(m).glu(x, 1), X),
    # composites
    "silu": (lambda m, x: F(m).silu(x), X),
    "silu_inplace": (lambda m, x: F(m).silu(x * 1.0, inplace=True), X),
    "mish": (lambda m, x: F(m).mish(x), X),
    "mish_inplace": (lambda m, x: F(m).mish(x * 1.0, inplace=True), X),
    "clamp_min": (lambda m, x: x.clamp_min(0.1) * x, X),
    # softmax
    "softmax": (lambda m, x: F(m).softmax(x, 1), X),
    "softmax_dim0": (lambda m, x: F(m).softmax(x, 0) * x, X),
    "softmax_scalar": (lambda m, x: F(m).softmax(x[0, 0], 0) * x[0, 0], X),
    "softmax_float32": (lambda m, x: F(m).softmax(x.float(), -1), X),
    "log_softmax": (lambda m, x: F(m).log_softmax(x, 1), X),
    "log_softmax_3d": (lambda m, x: F(m).log_softmax(x.reshape(3, 2, 2), 1), X),
    # losses
    "mse": (lambda m, x, t: F(m).mse_loss(x, t), X, T),
    "mse_none": (lambda m, x, t: F(m).mse_loss(x, t, reduction="none"), X, T),
    "mse_target_const": (lambda m, x: F(m).mse_loss(x.sin(), _t(m, T)), X),
    "mse_float32": (lambda m, x, t: F(m).mse_loss(x.float(), t.float()), X, T),
    "smooth_l1": (lambda m, x, t: F(m).smooth_l1_loss(x, t, beta=0.5), X, T),
    "huber": (lambda m, x, t: F(m).huber_loss(x, t, delta=0.5), X, T),
    "huber_none": (lambda m, x, t: F(m).huber_loss(x, t, reduction="none"), X, T),
    "huber_sum": (lambda m, x, t: F(m).huber_loss(x, t, reduction="sum", delta=2.0), X, T),
    "soft_margin": (lambda m, x: F(m).soft_margin_loss(x, _t(m, SIGNS)), X),
    "soft_margin_none": (
        lambda m, x: F(m).soft_margin_loss(x, _t(m, SIGNS), reduction="none"),
        X,
    ),
    "nll": (lambda m, x: F(m).nll_loss(x, m.tensor(TARGET)), X),
    "nll_sum": (
        lambda m, x: F(m).nll_loss(F(m).log_softmax(x, 1), m.tensor(TARGET), reduction="sum"),
        X,
    ),
    "nll_ignore": (
        lambda m, x: F(m).nll_loss(F(m).log_softmax(x, 1), m.tensor([1, -100, 3])),
        X,
    ),
    "cross_entropy": (lambda m, x: F(m).cross_entropy(x, m.tensor(TARGET)), X),
    "cross_entropy_weight": (
        lambda m, x: F(m).cross_entropy(x, m.tensor(TARGET), weight=_t(m, [1.0, 2, 3, 4])),
        X,
    ),
    "cross_entropy_4d": (
        lambda m, x: F(m).cross_entropy(x.reshape(1, 3, 2, 2), m.tensor([[[0, 1], [2, 1]]])),
        X,
    ),
    "bce": (lambda m, x, t: F(m).binary_cross_entropy(x.sigmoid(), t.sigmoid()), X, T),
    "bce_weight": (
        lambda m, x, t: F(m).binary_cross_entropy(
            x.sigmoid(), t.sigmoid(), weight=_t(m, np.linspace(0.5, 1, 4))
        ),
        X,
        T,
    ),
    "bce_logits_pos_weight": (
        lambda m, x, t: F(m).binary_cross_entropy_with_logits(
            x, t.sigmoid(), pos_weight=_t(m, np.linspace(0.5, 2, 4))
        ),
        X,
        T,
    ),
    "bce_logits_weight_sum": (
        lambda m, x, t: F(m).binary_cross_entropy_with_logits(
            x, t.sigmoid(), weight=_t(m, np.linspace(0.5, 2, 4)), reduction="sum"
        ),
        X,
        T,
    ),
    "bce_logits_none_both": (
        lambda m, x, t: F(m).binary_cross_entropy_with_logits(
            x,
            t.sigmoid(),
            weight=_t(m, np.linspace(0.5, 2, 4)),
            pos_weight=_t(m, np.linspace(1, 3, 4)),
            reduction="none",
        ),
        X,
        T,
    ),
    # F.linear
    "linear": (lambda m, x, w, b: F(m).linear(x, w, b), X, W54, B5),
    "linear_no_bias": (lambda m, x, w: F(m).linear(x, w), X, W54),
    "linear_3d": (
        lambda m, x, w, b: F(m).linear(x.reshape(3, 2, 2), w, b),
        X,
        W54[:, :2],
        B5,
    ),
    "linear_1d": (lambda m, x, w: F(m).linear(x[0], w), X, W54),
    "linear_weight_t": (lambda m, x, w: F(m).linear(x, w.t()), X, np.ascontiguousarray(W54.T)),
    "linear_input_t": (lambda m, x, w: F(m).linear(x.t(), w), X, W54[:, :3]),
    "linear_input_only": (lambda m, x: F(m).linear(x, _t(m, W54), _t(m, B5)), X),
    "linear_weight_only": (lambda m, w: F(m).linear(_t(m, X), w), W54),
    "mlp": (
        lambda m, x, w1, b1, w2, b2: F(m).cross_entropy(
            F(m).linear(F(m).relu(F(m).linear(x, w1, b1)), w2, b2), m.tensor([1, 0, 2])
        ),
        X,
        RNG.standard_normal((6, 4)),
        RNG.standard_normal(6),
        RNG.standard_normal((3, 6)),
        RNG.standard_normal(3),
    ),
    # norms
    "vector_norm": (lambda m, x: m.linalg.vector_norm(x, dim=1), X),
    "vector_norm_all": (lambda m, x: m.linalg.vector_norm(x), X),
    "vector_norm_p1": (lambda m, x: m.linalg.vector_norm(x, 1, dim=0, keepdim=True), X),
    "vector_norm_p3": (lambda m, x: m.linalg.vector_norm(x, 3, dim=1), X),
    "vector_norm_p1_5": (lambda m, x: m.linalg.vector_norm(x, 1.5, dim=(0, 1)), X),
    "vector_norm_p0_5": (lambda m, x: m.linalg.vector_norm(x, 0.5, dim=1), X),
    "norm_p3_keepdim": (lambda m, x: m.norm(x, p=3, dim=0, keepdim=True), X),
    "normalize": (lambda m, x: F(m).normalize(x), X),
    # embedding, layer norm
    "embedding_padding": (
        lambda m, w, g: (
            F(m).embedding(m.tensor([[1, 0], [3, 3]]), w, padding_idx=3) * g.reshape(2, 2, 4)
        ),
        W54,
        RNG.standard_normal((4, 4)),
    ),
    "embedding": (lambda m, w: F(m).embedding(m.tensor([[1, 0], [3, 3]]), w).sin(), W54),
    # native_layer_norm_backward's own formula (layer_norm_double_backward): the saved mean and
    # rstd are constants of the third derivative
    "layer_norm": (lambda m, x: F(m).layer_norm(x, (4,)), X),
    "layer_norm_2d": (lambda m, x: F(m).layer_norm(x, (3, 4)) * x, X),
    "layer_norm_affine": (lambda m, x, w, b: F(m).layer_norm(x, (4,), w, b), X, V4, V4B),
    "layer_norm_weight": (
        lambda m, x, w: F(m).layer_norm(x.reshape(2, 2, 3), (2, 3), w),
        X,
        X.reshape(-1)[:6].reshape(2, 3),
    ),
    # batch norm: native_batch_norm_backward, and its formula batchnorm_double_backward
    "batch_norm_train": (
        lambda m, x, w, b: F(m).batch_norm(x, None, None, w, b, training=True),
        X,
        V4,
        V4B,
    ),
    "batch_norm_train_3d": (
        lambda m, x, w, b: F(m).batch_norm(x, None, None, w, b, training=True),
        X3,
        V4,
        V4B,
    ),
    "batch_norm_train_no_affine": (lambda m, x: F(m).batch_norm(x, None, None, training=True), X3),
    "batch_norm_train_running": (
        lambda m, x, w, b: F(m).batch_norm(
            x, _t(m, np.zeros(4)), _t(m, np.ones(4)), w, b, training=True
        ),
        X3,
        V4,
        V4B,
    ),
    "batch_norm_eval": (
        lambda m, x, w, b: (
            F(m).batch_norm(x, _t(m, V4 * 0.1), _t(m, np.abs(V4B) + 0.5), w, b, training=False) * x
        ),
        X,
        V4,
        V4B,
    ),
    "batch_norm_2d": (
        lambda m, x, w: F(m).batch_norm(x, None, None, w, training=True).sin(),
        X,
        V4,
    ),
    "instance_norm": (lambda m, x: F(m).instance_norm(x), X3),
    # group norm: infinitely_differentiable_native_group_norm_backward as recorded ops, reading
    # the forward's mean and rstd (NativeGroupNormBackward0 outputs)
    "group_norm_affine": (lambda m, x, w, b: F(m).group_norm(x, 2, w, b), X3, V4, V4B),
    "group_norm": (lambda m, x: F(m).group_norm(x, 4) * x, X3),
    "group_norm_weight_4d": (
        lambda m, x, w: F(m).group_norm(x.reshape(2, 2, 3, 2), 1, w).sin(),
        X3,
        V4[:2],
    ),
    "group_norm_sq": (lambda m, x, w, b: F(m).group_norm(x * x, 2, w, b) ** 2, X3, V4, V4B),
    # the kernels' own formulas: elu_double_backward, gelu_double_backward...
    "elu_mul": (lambda m, x: F(m).elu(x, 0.7) * x, X),
    "selu_mul": (lambda m, x: F(m).selu(x) * x, X),
    "gelu_mul": (lambda m, x: F(m).gelu(x) * x, X),
    "gelu_tanh_mul": (lambda m, x: F(m).gelu(x, approximate="tanh") * x, X),
    "softplus_mul": (lambda m, x: F(m).softplus(x, 2.0, 1.5) * x, X),
    "logsigmoid_mul": (lambda m, x: F(m).logsigmoid(x * 3) * x, X),
    "glu_mul": (lambda m, x: F(m).glu(x, 1) * x[:, :2], X),
    "glu_dim0": (lambda m, x: F(m).glu(x.reshape(4, 3), 0).sin(), X),
    "bce_sq": (lambda m, x, t: F(m).binary_cross_entropy(x.sigmoid(), t.sigmoid()) ** 2, X, T),
    "bce_weight_none_sq": (
        lambda m, x, t: (
            F(m).binary_cross_entropy(
                x.sigmoid(), t.sigmoid(), weight=_t(m, np.linspace(0.5, 1, 4)), reduction="none"
            )
            ** 2
        ),
        X,
        T,
    ),
    "prelu": (lambda m, x, w: F(m).prelu(x, w), X, V4),
    "prelu_one_sq": (lambda m, x, w: F(m).prelu(x, w) ** 2, X, V4[:1]),
    "prelu_3d": (lambda m, x, w: F(m).prelu(x, w).sin(), X3, V4),
    "rrelu_mul": (lambda m, x: F(m).rrelu(x) * x, X),
    "rrelu_inplace": (lambda m, x: F(m).rrelu(x * 1.0, inplace=True) * x, X),
    # composite losses
    "margin_ranking": (
        lambda m, a, b: F(m).margin_ranking_loss(a, b, _t(m, SIGNS[0]), margin=0.1),
        X[0],
        T[0],
    ),
    "hinge_embedding": (lambda m, x: F(m).hinge_embedding_loss(x, _t(m, SIGNS), margin=0.5), X),
    "triplet_margin": (lambda m, a, p, n: F(m).triplet_margin_loss(a, p, n), X, T, X[::-1].copy()),
}

# A representative set (each backward kernel, and each kind of formula), to the second order
# where the third derivative adds nothing; the others with LEAFGRAD_FORMULA_CASES=all.
ORDER3 = ("layer_norm_affine", "group_norm_affine")
CORE = (
    *ORDER3, "batch_norm_train", "batch_norm_eval", "elu_mul", "gelu_tanh_mul", "tanh_mul",
    "relu_mul", "hardtanh", "leaky_relu_inplace", "softplus_mul", "hardswish", "logsigmoid_mul",
    "softshrink", "hardshrink", "glu_mul", "silu", "softmax_dim0", "mse", "huber", "smooth_l1",
    "soft_margin", "cross_entropy_4d", "bce_sq", "prelu_one_sq", "rrelu_mul", "embedding_padding",
)  # fmt: skip
# nll_loss_backward, _log_softmax_backward_data and F.linear's products are in the gradient
# penalty tests below


@pytest.mark.parametrize("name", sorted(CASES) if ALL else CORE)
def test_nn_graph_formulas_match_torch(name):
    fn, *inputs = CASES[name]
    order = 3 if ALL or name in ORDER3 else 2
    check_graph(fn, *inputs, order=order, rtol=1e-5 if "float32" in name else 1e-6)


def _refusing_cases(m):
    f, ints = m.nn.functional, m.tensor([1, 0, 3])
    labels = m.tensor([[1, 0, -1, 2], [2, -1, 0, 0], [3, 1, 0, -1]])
    weight = m.tensor([1.0, 2, 3, 4], dtype=m.float64)
    return {
        "hardsigmoid": lambda x: f.hardsigmoid(x * 3),
        "hardsigmoid_sq": lambda x: f.hardsigmoid(x * 3) ** 2,
        "hardsigmoid_inplace": lambda x: f.hardsigmoid(x * 3, inplace=True) * x,
        "multi_margin": lambda x: f.multi_margin_loss(x, ints),
        "multi_margin_sq": lambda x: (
            f.multi_margin_loss(x * 2, ints, p=2, weight=weight, reduction="sum") ** 2
        ),
        "multilabel_margin": lambda x: f.multilabel_margin_loss(x, labels),
        "multilabel_margin_sq": lambda x: (
            f.multilabel_margin_loss(x, labels, reduction="none") ** 2
        ),
    }


def _refusing(m, name):
    x = m.tensor(X, requires_grad=True)
    (g,) = m.autograd.grad(_refusing_cases(m)[name](x).sum(), x, create_graph=True)
    sig = graph_signature(g, 4)
    try:
        m.autograd.grad(g.sum(), x)
    except RuntimeError as e:
        return sig, _values(g), str(e)
    return sig, _values(g), None


REFUSING_CORE = (
    "hardsigmoid", "hardsigmoid_sq", "hardsigmoid_inplace", "multi_margin", "multilabel_margin",
)  # fmt: skip


@pytest.mark.parametrize("name", sorted(_refusing_cases(lg)) if ALL else REFUSING_CORE)
def test_kernels_without_derivative_refuse_like_torch(name):
    """hardsigmoid_backward, multi_margin_loss_backward and multilabel_margin_loss_backward have
    no derivative: the gradient's node is NotImplemented (an edge for each operand that requires
    grad) and differentiating it raises PyTorch's error."""
    ts, tv, te = _refusing(torch, name)
    ls, lv, le = _refusing(lg, name)
    assert ls == ts
    np.testing.assert_allclose(lv, tv, rtol=1e-12, atol=1e-12)
    assert te is not None and le == te


def test_group_norm_bias_without_weight_raises_like_torch():
    # PyTorch's formula reshapes the bias's gradient as the (undefined) weight
    def fn(m):
        x = m.tensor(X3, requires_grad=True)
        b = m.tensor(V4B, requires_grad=True)
        y = F(m).group_norm(x, 2, None, b)
        m.autograd.grad(y.sum(), (x, b), create_graph=True)

    both(fn)


def test_not_implemented_name():
    x = lg.tensor(X, requires_grad=True)
    (g,) = lg.autograd.grad(lg.nn.functional.hardsigmoid(x).sum(), x, create_graph=True)
    assert g.grad_fn.name() == "torch::autograd::NotImplemented"


def _second_signatures(m, fn, inputs):
    xs = [m.tensor(a, requires_grad=True) for a in inputs]
    out = fn(m, *xs)
    seed = (out * m.tensor(np.linspace(0.5, 1.5, out.numel()).reshape(out.shape))).sum()
    gs = m.autograd.grad(seed, xs, create_graph=True, allow_unused=True)
    gs = [g for g in gs if g is not None and g.requires_grad]
    total = sum((g * m.tensor(np.linspace(-1, 1, g.numel()).reshape(g.shape))).sum() for g in gs)
    second = m.autograd.grad(total, xs, create_graph=True, allow_unused=True)
    return [None if g is None else graph_signature(g, 4) for g in second]


# the kernels' own formulas (their derivatives.yaml entries), seen in second derivatives
SECOND = [
    "tanh_mul",
    "sigmoid",
    "relu_mul",
    "hardtanh",
    "leaky_relu",
    "threshold",
    "softshrink",
    "hardswish",
    "silu",
    "mish",
    "softmax",
    "softmax_dim0",
    "log_softmax",
    "mse",
    "mse_none",
    "smooth_l1",
    "huber",
    "huber_none",
    "soft_margin",
    "soft_margin_none",
    "nll_sum",
    "cross_entropy",
    "bce_logits_weight_sum",
    "linear",
    "mlp",
    "vector_norm",
    "vector_norm_p3",
    "elu_mul",
    "elu_inplace",
    "selu_mul",
    "gelu_mul",
    "gelu_tanh_mul",
    "softplus_mul",
    "logsigmoid_mul",
    "glu_mul",
    "glu_dim0",
    "layer_norm_affine",
    "layer_norm_weight",
    "batch_norm_train",
    "batch_norm_train_3d",
    "batch_norm_train_no_affine",
    "batch_norm_eval",
    "batch_norm_2d",
    "bce",
    "bce_sq",
    "bce_weight_none_sq",
    "prelu",
    "prelu_one_sq",
    "prelu_3d",
    "rrelu_mul",
    "rrelu_inplace",
]
SECOND_CORE = (
    "tanh_mul", "hardswish", "softmax_dim0", "huber", "soft_margin", "gelu_tanh_mul", "glu_mul",
    "layer_norm_affine", "batch_norm_train", "batch_norm_eval",
)  # fmt: skip


@pytest.mark.parametrize("name", SECOND if ALL else SECOND_CORE)
def test_nn_second_derivative_graphs_match_torch(name):
    fn, *inputs = CASES[name]
    inputs = [np.asarray(a, dtype=np.float64) for a in inputs]
    assert _second_signatures(lg, fn, inputs) == _second_signatures(torch, fn, inputs)


def _values(t):
    return None if t is None else np.asarray(t.detach().tolist())


def _mlp_penalty(m, inputs):
    """Gradient-penalty code: the weights' gradients with create_graph, then the gradient of
    their norm."""
    x, w1, b1, w2, b2 = [m.tensor(a, requires_grad=True) for a in inputs]
    f = m.nn.functional
    loss = f.cross_entropy(f.linear(f.relu(f.linear(x, w1, b1)), w2, b2), m.tensor([1, 0, 2]))
    gw1, gw2 = m.autograd.grad(loss, [w1, w2], create_graph=True)
    sigs = [graph_signature(g, 6) for g in (gw1, gw2)]
    norm = (gw1.pow(2).sum() + gw2.pow(2).sum()).sqrt()
    grads = m.autograd.grad(norm, [x, w1, b1, w2, b2], allow_unused=True)
    return sigs, [_values(g) for g in (gw1, gw2)], [_values(g) for g in grads]


def test_mlp_gradient_penalty_matches_torch():
    inputs = [
        RNG.standard_normal((3, 4)),
        RNG.standard_normal((6, 4)),
        RNG.standard_normal(6),
        RNG.standard_normal((3, 6)),
        RNG.standard_normal(3),
    ]
    ts, tv, tg = _mlp_penalty(torch, inputs)
    ls, lv, lgr = _mlp_penalty(lg, inputs)
    assert ls == ts
    for a, b in zip(tv + tg, lv + lgr):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(b, a, rtol=1e-7, atol=1e-10)


def _wgan_penalty(m, inputs, act):
    """WGAN-GP: the critic's gradient at the inputs, ``((|grad|_2 - 1) ** 2).mean()``, and its
    gradients of the critic's parameters."""
    x, w1, b1, w2 = [m.tensor(a, requires_grad=True) for a in inputs]
    f = m.nn.functional
    h = f.linear(x, w1, b1)
    h = f.leaky_relu(h, 0.2, inplace=True) if act == "leaky_relu_" else getattr(f, act)(h)
    score = f.linear(h, w2)
    (gx,) = m.autograd.grad(score.sum(), x, create_graph=True)
    sig = graph_signature(gx, 6)
    penalty = ((m.linalg.vector_norm(gx, 2, dim=1) - 1) ** 2).mean()
    grads = m.autograd.grad(penalty, [w1, b1, w2])
    return sig, _values(gx), [_values(g) for g in grads]


@pytest.mark.parametrize(
    "act, heads", [("leaky_relu_", 2), ("tanh", 1), ("gelu", 1)] if ALL else [("gelu", 1)]
)
def test_wgan_gradient_penalty_matches_torch(act, heads):
    inputs = [
        RNG.standard_normal((3, 4)),
        RNG.standard_normal((6, 4)),
        RNG.standard_normal(6),
        RNG.standard_normal((heads, 6)),  # one head: a weight with a dim of size 1
    ]
    ts, tv, tg = _wgan_penalty(torch, inputs, act)
    ls, lv, lgr = _wgan_penalty(lg, inputs, act)
    assert ls == ts
    for a, b in zip([tv, *tg], [lv, *lgr]):
        np.testing.assert_allclose(b, a, rtol=1e-7, atol=1e-10)
