"""Differential tests of ``leafgrad.nn.functional`` against ``torch.nn.functional``.

Each case builds inputs from the same numpy values in both libraries, runs the op, backpropagates
a weighted sum and compares values, dtypes, ``grad_fn`` names, leaf flags, gradients, errors and
warnings (``conftest.both``).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as TF
from conftest import both, same_tensor

import leafgrad as lg
import leafgrad.nn.functional as LF

FLOATS = ["float32", "float64"]
# (reduction, dtype) pairs for the losses: every reduction, both dtypes, without the full product.
RD = [("mean", "float32"), ("sum", "float64"), ("none", "float32")]
LOOSE = {"rtol": 2e-5, "atol": 2e-6}  # transcendental kernels: PyTorch's and XLA's differ in ulps

# Values with PyTorch's edge points: 0, the hardtanh / hardsigmoid / relu6 bounds, large |x|.
EDGE = np.array([-30.0, -3.0, -1.0, -0.5, 0.0, 0.25, 1.0, 3.0, 6.0, 25.0])
RNG = np.random.default_rng(0)
MAT = RNG.standard_normal((3, 4))


def F(m):
    return TF if m is torch else LF


def _tensor(m, a, dtype, grad):
    t = m.tensor(np.asarray(a), dtype=getattr(m, dtype))
    return t.requires_grad_() if grad else t


def run(make, arrays, dtypes, grads, *, backward=True):
    """A function of the module: build tensors, call ``make(m, *tensors)``, backprop."""

    def fn(m):
        ts = [_tensor(m, a, d, g) for a, d, g in zip(arrays, dtypes, grads)]
        out = make(m, *ts)
        result = [out]
        if backward and out.requires_grad:
            w = m.tensor(np.linspace(0.5, 1.5, out.numel()).reshape(tuple(out.shape)))
            (out * w.to(out.dtype)).sum().backward()
            result += [t.grad for t, g in zip(ts, grads) if g]
        return result

    return fn


ACTIVATIONS = {
    "relu": lambda f, x: f.relu(x),
    "relu6": lambda f, x: f.relu6(x),
    "leaky_relu": lambda f, x: f.leaky_relu(x, 0.2),
    "elu": lambda f, x: f.elu(x, 0.7),
    "selu": lambda f, x: f.selu(x),
    "celu": lambda f, x: f.celu(x, 1.5),
    "gelu": lambda f, x: f.gelu(x),
    "gelu_tanh": lambda f, x: f.gelu(x, approximate="tanh"),
    "silu": lambda f, x: f.silu(x),
    "mish": lambda f, x: f.mish(x),
    "softplus": lambda f, x: f.softplus(x),
    "softplus_beta": lambda f, x: f.softplus(x, beta=2.0, threshold=5.0),
    "softsign": lambda f, x: f.softsign(x),
    "hardtanh": lambda f, x: f.hardtanh(x),
    "hardtanh_bounds": lambda f, x: f.hardtanh(x, -0.5, 3.0),
    "hardsigmoid": lambda f, x: f.hardsigmoid(x),
    "hardswish": lambda f, x: f.hardswish(x),
}
EXACT = {"relu", "relu6", "leaky_relu", "hardtanh", "hardtanh_bounds"}


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
@pytest.mark.parametrize(
    "shape,dtype",
    [("edge", "float32"), ("edge", "float64"), ("0d", "float32"), ("empty", "float64")],
)
def test_activation(name, dtype, shape):
    x = {"edge": EDGE.reshape(2, 5), "0d": np.array(0.0), "empty": np.zeros((0, 3))}[shape]
    op = ACTIVATIONS[name]
    kw = {"exact": True} if name in EXACT else LOOSE
    both(run(lambda m, t: op(F(m), t), [x], [dtype], [True]), **kw)


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
@pytest.mark.parametrize("dtype", ["int64", "bool"])
def test_activation_integer_inputs(name, dtype):
    x = np.array([1, -2, 0]) if dtype == "int64" else np.array([True, False])
    both(run(lambda m, t: ACTIVATIONS[name](F(m), t), [x], [dtype], [False]))


def test_backward_twice_raises():
    for op in ACTIVATIONS.values():

        def fn(m, op=op):
            y = op(F(m), m.tensor([0.5, -1.0], requires_grad=True)).sum()
            y.backward()
            y.backward()

        both(fn)


def test_argument_errors():
    x = MAT
    for make in [
        lambda f, t: f.gelu(t, approximate="foo"),
        lambda f, t: f.hardtanh(t, 2.0, 1.0),
        lambda f, t: f.celu(t, 0.0),
        lambda f, t: f.softmax(t, 5),
        lambda f, t: f.dropout(t, 1.5),
    ]:
        both(run(lambda m, t, make=make: make(F(m), t), [x], ["float32"], [True]))


# --- softmax family --------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["softmax", "log_softmax", "softmin"])
@pytest.mark.parametrize(
    "case",
    [
        ("mat", 0, "float32"),
        ("mat", -1, "float64"),
        ("0d", 0, "float64"),
        ("empty", 1, "float32"),
        ("mat", None, "float32"),
    ],
)
def test_softmax(name, case):
    kind, dim, dtype = case
    x = {"mat": MAT * 3, "0d": np.array(1.5), "empty": np.zeros((0, 3))}[kind]
    both(run(lambda m, t: getattr(F(m), name)(t, dim), [x], [dtype], [True]), **LOOSE)


def test_softmax_dtype_method_and_namespace():
    make = [
        lambda m, t: F(m).softmax(t, 1, dtype=m.float64),
        lambda m, t: t.softmax(0),
        lambda m, t: t.log_softmax(-1),
        lambda m, t: m.softmax(t, 1),
        lambda m, t: m.log_softmax(t, 0),
        lambda m, t: m.relu(t),
        lambda m, t: t.relu(),
        lambda m, t: F(m).softmin(t, 1, dtype=m.float64),
    ]
    for mk in make:
        both(run(mk, [MAT], ["float32"], [True]), **LOOSE)
    both(run(lambda m, t: F(m).softmax(t, 0), [[1, 2]], ["int64"], [False]))


# --- normalize, linear, distance ----------------------------------------------------------------


@pytest.mark.parametrize("dtype", FLOATS)
def test_normalize(dtype):
    x = MAT.copy()
    x[1] = 0.0  # a zero row: the norm is clamped to eps and its gradient is masked
    for kw in [{}, {"dim": 0}, {"p": 1.0}, {"p": 3.0, "dim": -1}]:
        both(run(lambda m, t, kw=kw: F(m).normalize(t, **kw), [x], [dtype], [True]), **LOOSE)


@pytest.mark.parametrize("in_shape", [(3, 4), (2, 3, 4), (4,), (0, 4)])
@pytest.mark.parametrize("with_bias,dtype", [(True, "float32"), (False, "float64")])
def test_linear(in_shape, with_bias, dtype):
    x = RNG.standard_normal(in_shape)
    w = RNG.standard_normal((5, 4))
    b = RNG.standard_normal(5)
    arrays, grads = [x, w] + ([b] if with_bias else []), [True, True, True]
    both(
        run(lambda m, *ts: F(m).linear(*ts), arrays, [dtype] * 3, grads),
        rtol=1e-5 if dtype == "float32" else 1e-12,
        atol=1e-5 if dtype == "float32" else 1e-12,
    )


def test_linear_errors():
    cases = [
        (lambda m, x, w: F(m).linear(x, w.double()), [(3, 4), (5, 4)]),
        (lambda m, x, w: F(m).linear(x, w), [(3, 4), (5, 3)]),
        (lambda m, x, w: F(m).linear(x, w, m.zeros(4)), [(3, 4), (5, 4)]),
        (lambda m, x, w: F(m).linear(x.sum(), w), [(3, 4), (5, 4)]),
        # a bias with more dims than the product: expand's error, not a broadcast result
        (lambda m, x, w: F(m).linear(x, w, m.zeros(1, 1, 5)), [(3, 4), (5, 4)]),
        (lambda m, x, w: F(m).linear(x, w, m.zeros(1, 1, 5).double()), [(3, 4), (5, 4)]),
        # with a bias, addmm's dtype checks: the bias against the weight, then the input
        (lambda m, x, w: F(m).linear(x.double(), w, m.zeros(5)), [(3, 4), (5, 4)]),
        (lambda m, x, w: F(m).linear(x.double(), w, m.zeros(5).double()), [(3, 4), (5, 4)]),
        (lambda m, x, w: F(m).linear(x.long(), w, m.zeros(5)), [(2, 3, 4), (5, 4)]),
        (lambda m, x, w: F(m).linear(x, w.double(), m.zeros(5)), [(4,), (5, 4)]),
        (lambda m, x, w: F(m).linear(x, w.half(), m.zeros(5).half()), [(4,), (5, 4)]),
    ]
    for make, shapes in cases:
        arrays = [np.ones(s) for s in shapes]
        both(run(make, arrays, ["float32"] * 2, [True, True]))


@pytest.mark.parametrize("dtype", FLOATS)
def test_pairwise_distance(dtype):
    a, b = MAT, MAT[::-1].copy()
    for kw in [{}, {"keepdim": True}, {"p": 1.0}]:
        both(
            run(
                lambda m, x, y, kw=kw: F(m).pairwise_distance(x, y, **kw),
                [a, b],
                [dtype] * 2,
                [True, True],
            ),
            **LOOSE,
        )


# --- dropout, embedding, one_hot ---------------------------------------------------------------


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("p", [0.0, 0.3, 0.5, 1.0])
def test_dropout(p, dtype):
    def make(m, t):
        m.manual_seed(7)
        return F(m).dropout(t, p)

    both(run(make, [RNG.standard_normal((4, 5))], [dtype], [True]), exact=True)


def test_dropout_identity():
    def fn(m):
        x = m.ones(3, requires_grad=True)
        return [F(m).dropout(x, training=False) is x, F(m).dropout(x, 0.0) is x]

    both(fn)


@pytest.mark.parametrize("padding_idx", [None, 1, -1])
def test_embedding(padding_idx):
    idx = np.array([[0, 1, 3], [1, 1, 0]])
    w = RNG.standard_normal((4, 3))

    def fn(m):
        weight = m.tensor(w, dtype=m.float32, requires_grad=True)
        out = F(m).embedding(m.tensor(idx), weight, padding_idx=padding_idx)
        out.sum().backward(retain_graph=True)
        return [out, weight.grad]

    both(fn, exact=True)


def test_embedding_errors():
    for make in [
        lambda m, w: F(m).embedding(m.tensor([0.0, 1.0]), w),
        lambda m, w: F(m).embedding(m.tensor([0, 1]), w[0]),
        lambda m, w: F(m).embedding(m.tensor([0, 1]), w, padding_idx=5),
        lambda m, w: F(m).embedding(m.tensor([0, 1], dtype=m.int32), w),
    ]:
        both(run(make, [MAT], ["float32"], [True]), exact=True)


def test_one_hot():
    for make in [
        lambda m: F(m).one_hot(m.tensor([0, 2, 1])),
        lambda m: F(m).one_hot(m.tensor([[0, 2], [1, 1]]), 4),
        lambda m: F(m).one_hot(m.tensor([], dtype=m.int64), 3),
        lambda m: F(m).one_hot(m.tensor([], dtype=m.int64)),
        lambda m: F(m).one_hot(m.tensor([0, 1], dtype=m.int32)),
        lambda m: F(m).one_hot(m.tensor([0, 3]), 2),
        lambda m: F(m).one_hot(m.tensor([0, -1]), 2),
    ]:
        both(make)


# --- losses --------------------------------------------------------------------------------------

REDUCTIONS = ["mean", "sum", "none"]
A, B = RNG.standard_normal((3, 4)), RNG.standard_normal((3, 4))
B[0, 0] = A[0, 0]  # a zero difference
B[0, 1] = A[0, 1] - 1.0  # exactly at the smooth_l1 / huber kink


@pytest.mark.parametrize("reduction,dtype", RD)
@pytest.mark.parametrize(
    "name,kw",
    [
        ("mse_loss", {}),
        ("l1_loss", {}),
        ("smooth_l1_loss", {}),
        ("smooth_l1_loss", {"beta": 0.5}),
        ("smooth_l1_loss", {"beta": 0.0}),
        ("huber_loss", {}),
        ("huber_loss", {"delta": 2.0}),
    ],
)
def test_pointwise_losses(name, kw, reduction, dtype):
    make = lambda m, x, y: getattr(F(m), name)(x, y, reduction=reduction, **kw)  # noqa: E731
    both(run(make, [A, B], [dtype] * 2, [True, True]), **LOOSE)
    both(run(make, [A, B], [dtype] * 2, [True, False]), **LOOSE)


def test_pointwise_loss_broadcast_and_errors():
    for name in ["mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss"]:
        f = lambda m, x, y, name=name: getattr(F(m), name)(x, y)  # noqa: E731
        both(run(f, [A, B[0]], ["float32"] * 2, [True, True]), **LOOSE)
        both(run(f, [A, B], ["float32", "float64"], [True, False]), **LOOSE)
        both(run(lambda m, x, y, f=f: f(m, x, y), [[1, 2]] * 2, ["int64"] * 2, [False] * 2))
        g = lambda m, x, y, name=name: getattr(F(m), name)(x, y, reduction="foo")  # noqa: E731
        both(run(g, [A, B], ["float32"] * 2, [True, True]))
    both(run(lambda m, x, y: F(m).huber_loss(x, y, delta=0.0), [A, B], ["float32"] * 2, [1, 0]))
    both(run(lambda m, x, y: F(m).smooth_l1_loss(x, y, beta=-1.0), [A, B], ["float32"] * 2, [1, 0]))


TARGET = np.array([0, 3, 1])


@pytest.mark.parametrize("reduction,dtype", RD)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("ignore", [-100, 3])
def test_nll_and_cross_entropy(reduction, weighted, ignore, dtype):
    weight = np.array([0.5, 1.0, 2.0, 1.5])

    def make(name):
        def f(m, x, w):
            kw = {"weight": w} if weighted else {}
            return getattr(F(m), name)(
                x, m.tensor(TARGET), reduction=reduction, ignore_index=ignore, **kw
            )

        return f

    for name in ["nll_loss", "cross_entropy"]:
        both(run(make(name), [A, weight], [dtype] * 2, [True, False]), **LOOSE)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_nll_shapes(reduction):
    x4 = RNG.standard_normal((2, 3, 2, 2))
    t4 = np.array([[[0, 1], [2, 1]], [[1, 1], [0, 2]]])
    x3 = RNG.standard_normal((2, 3, 4))
    t3 = np.array([[0, 1, 2, 1], [2, 2, 0, 1]])
    cases = [
        (RNG.standard_normal(4), np.array(2)),
        (x4, t4),
        (x3, t3),
    ]
    for x, t in cases:
        for name in ["nll_loss", "cross_entropy"]:

            def f(m, xt, name=name, t=t):
                return getattr(F(m), name)(xt, m.tensor(t), reduction=reduction)

            both(run(f, [x], ["float64"], [True]), **LOOSE)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("smoothing", [0.0, 0.2])
@pytest.mark.parametrize("weighted", [False, True])
def test_cross_entropy_probabilities(reduction, smoothing, weighted):
    probs = np.abs(B) / np.abs(B).sum(1, keepdims=True)

    def f(m, x, p, w):
        kw = {"weight": w} if weighted else {}
        return F(m).cross_entropy(x, p, reduction=reduction, label_smoothing=smoothing, **kw)

    weight = np.array([0.5, 1.0, 2.0, 1.5])
    both(run(f, [A, probs, weight], ["float64"] * 3, [True, True, False]), **LOOSE)


def test_nll_errors():
    x = A
    for make in [
        lambda m, t: F(m).nll_loss(t, m.tensor([0, 1])),
        lambda m, t: F(m).nll_loss(t, m.tensor([0, 1, 2], dtype=m.int32)),
        lambda m, t: F(m).nll_loss(t, m.tensor([0.0, 1, 2])),
        lambda m, t: F(m).nll_loss(t, m.tensor([0, 1, 2]), weight=m.ones(3)),
        lambda m, t: F(m).nll_loss(t[0], m.tensor([0, 1, 2])),
        lambda m, t: F(m).nll_loss(t.double(), m.tensor([0, 1, 2]), weight=m.ones(4)),
        lambda m, t: F(m).nll_loss(t, m.tensor([0, 1, 2]), weight=m.ones(4, requires_grad=True)),
        lambda m, t: F(m).cross_entropy(t, m.zeros(3, 4, dtype=m.int64)),
        lambda m, t: F(m).cross_entropy(t, m.tensor([0, 1, 2]), label_smoothing=1.5),
        lambda m, t: F(m).cross_entropy(t, m.tensor([0, 1])),
        lambda m, t: F(m).nll_loss(t, m.tensor([0, 1, 2]), reduction="foo"),
    ]:
        both(run(make, [x], ["float32"], [True]))

    def twice(m):
        loss = F(m).cross_entropy(m.tensor(A, requires_grad=True), m.tensor(TARGET))
        loss.backward()
        loss.backward()

    both(twice)


PROBS = 1 / (1 + np.exp(-A))
TARGETS = np.clip(np.abs(B) / 3, 0, 1)


@pytest.mark.parametrize("reduction,dtype", RD)
@pytest.mark.parametrize("weighted", [False, True])
def test_binary_cross_entropy(reduction, weighted, dtype):
    def f(m, x, t, w):
        kw = {"weight": w} if weighted else {}
        return F(m).binary_cross_entropy(x, t, reduction=reduction, **kw)

    arrays = [PROBS, TARGETS, np.linspace(0.5, 2, 4)]
    both(run(f, arrays, [dtype] * 3, [True, True, False]), **LOOSE)


@pytest.mark.parametrize("reduction,dtype", RD)
@pytest.mark.parametrize("weights", ["none", "weight", "pos_weight", "both"])
def test_bce_with_logits(reduction, weights, dtype):
    def f(m, x, t, w, pw):
        kw = {}
        if weights in ("weight", "both"):
            kw["weight"] = w
        if weights in ("pos_weight", "both"):
            kw["pos_weight"] = pw
        return F(m).binary_cross_entropy_with_logits(x, t, reduction=reduction, **kw)

    x = A * 10
    x[0, 0] = 40.0  # large logits: the stable log-sigmoid
    arrays = [x, TARGETS, np.linspace(0.5, 2, 4), np.array([1.0, 2.0, 0.5, 3.0])]
    both(run(f, arrays, [dtype] * 4, [True, True, False, False]), **LOOSE)


def test_bce_errors():
    for make in [
        lambda m, x, t: F(m).binary_cross_entropy(x, t[0]),
        lambda m, x, t: F(m).binary_cross_entropy(x, t.double()),
        lambda m, x, t: F(m).binary_cross_entropy(x, t, weight=m.ones(4, requires_grad=True)),
        lambda m, x, t: F(m).binary_cross_entropy_with_logits(x, t[0]),
        lambda m, x, t: F(m).binary_cross_entropy_with_logits(
            x, t, pos_weight=m.ones(4, requires_grad=True)
        ),
    ]:
        both(run(make, [PROBS, TARGETS], ["float32"] * 2, [True, False]))


@pytest.mark.parametrize(
    "x,t",
    [
        ([0.5, 2.0], [3.0, 0.5]),  # element by element, the target of the first element
        ([2.0] + [0.5] * 40, [0.5] * 40 + [3.0]),
        ([0.5] * 20 + [2.0], [0.5] * 19 + [3.0, 0.5]),
        ([float("nan"), 0.5], [0.5, 0.5]),  # NaN is not in [0, 1]
        ([float("inf")], [1.0]),
        ([-0.0, 1.0], [0.0, 1.0]),  # the ends are allowed
        ([0.25, 0.75], [-1e-8, 0.5]),
    ],
)
@pytest.mark.parametrize("dtype", FLOATS)
def test_bce_checks_values_in_unit_interval(x, t, dtype):
    def make(m, a, b):
        return F(m).binary_cross_entropy(a, b)

    # (no gradient at the ends 0 and 1: PyTorch's formula divides by max(x(1-x), 1e-12) there,
    # leafgrad's does not; see F.binary_cross_entropy)
    ends = any(v in (0.0, 1.0) for v in x)
    both(run(make, [np.array(x), np.array(t)], [dtype] * 2, [not ends, False]), **LOOSE)
    both(lambda m: m.nn.BCELoss()(m.tensor(x), m.tensor(t)), **LOOSE)


@pytest.mark.parametrize("reduction,dtype", RD + [("batchmean", "float32")])
@pytest.mark.parametrize("log_target", [False, True])
def test_kl_div(reduction, log_target, dtype):
    t = TARGETS.copy()
    t = np.log(t + 0.1) if log_target else t

    def f(m, x, y):
        return F(m).kl_div(x, y, reduction=reduction, log_target=log_target)

    both(run(f, [np.log(PROBS), t], [dtype] * 2, [True, True]), **LOOSE)
    if not log_target:
        t[0, 0] = 0.0  # xlogy(0, 0) = 0 (target without grad: PyTorch's target grad is NaN there)
    both(run(f, [np.log(PROBS), t], [dtype] * 2, [True, False]), **LOOSE)


@pytest.mark.parametrize("reduction,dtype", RD)
def test_margin_ranking_loss(reduction, dtype):
    target = np.sign(B)

    def f(m, x, y, t):
        return F(m).margin_ranking_loss(x, y, t, margin=0.1, reduction=reduction)

    both(run(f, [A, B, target], [dtype] * 3, [True, True, False]), **LOOSE)
    both(run(f, [A, B, target], [dtype] * 3, [True, True, True]), **LOOSE)
    both(run(f, [A, B, target[0]], [dtype] * 3, [True, True, False]))


INPLACE_ACTIVATIONS = {
    "relu": lambda F, x: F.relu(x, inplace=True),
    "hardtanh": lambda F, x: F.hardtanh(x, -0.5, 0.5, inplace=True),
    "relu6": lambda F, x: F.relu6(x, inplace=True),
    "leaky_relu": lambda F, x: F.leaky_relu(x, 0.2, inplace=True),
    "elu": lambda F, x: F.elu(x, inplace=True),
    "selu": lambda F, x: F.selu(x, inplace=True),
    "celu": lambda F, x: F.celu(x, 0.5, inplace=True),
    "silu": lambda F, x: F.silu(x, inplace=True),
    "mish": lambda F, x: F.mish(x, inplace=True),
    "hardsigmoid": lambda F, x: F.hardsigmoid(x, inplace=True),
    "hardswish": lambda F, x: F.hardswish(x, inplace=True),
    "dropout_eval": lambda F, x: F.dropout(x, 0.5, training=False, inplace=True),
}


@pytest.mark.parametrize("name", sorted(INPLACE_ACTIVATIONS))
def test_inplace_activations(name):
    """``inplace=True``: the same tensor back, PyTorch's node (``LeakyReluBackward1`` ...), its
    gradient, and the version check on a later write exactly when PyTorch saved the result."""

    def fn(m):
        a = (m.arange(12.0, dtype=m.float64).reshape(3, 4) - 5.5).requires_grad_()
        x = a.clone()
        v = x._version
        r = INPLACE_ACTIVATIONS[name](F(m), x)
        out = [r is x, type(r.grad_fn).__name__, x._version - v, r.clone()]
        (r * m.arange(12.0, dtype=m.float64).reshape(3, 4)).sum().backward(retain_graph=True)
        out.append(a.grad)
        a.grad = None
        x.add_(1)
        try:
            r.sum().backward()
            out.append(a.grad)
        except RuntimeError as e:
            out.append(str(e))
        return out

    both(fn, **LOOSE)


def test_inplace_activation_on_leaf_and_dropout():
    both(lambda m: F(m).relu(m.ones(2, requires_grad=True), inplace=True))

    def drop(m):
        m.manual_seed(0)
        x = m.arange(12.0).reshape(3, 4).requires_grad_().clone()
        r = F(m).dropout(x, 0.5, inplace=True)
        return r is x, r, x._version, type(r.grad_fn).__name__

    both(drop)


def test_graph_structure():
    """The chain of first non-leaf ``next_functions`` of composite graphs matches PyTorch's."""

    def chain(t):
        names, g = [], t.grad_fn
        while g is not None:
            names.append(type(g).__name__)
            nxt = [f for f, _ in g.next_functions if f is not None]
            nxt = [f for f in nxt if type(f).__name__ != "AccumulateGrad"]
            g = nxt[0] if nxt else None
        return names

    def fn(m):
        x = m.tensor(A, dtype=m.float32, requires_grad=True)
        w = m.ones(5, 4, requires_grad=True)
        b = m.zeros(5, requires_grad=True)
        f = F(m)
        return [
            chain(f.linear(x, w, b)),
            chain(f.linear(x.unsqueeze(0), w)),
            chain(f.linear(x.unsqueeze(0), w, b)),
            chain(f.linear(x, w)),
            chain(f.cross_entropy(x, m.tensor(TARGET))),
            chain(f.softsign(x)),
            chain(f.normalize(x)),
            chain(f.margin_ranking_loss(x, x, m.ones(3, 4))),
            chain(f.pairwise_distance(x, x)),
            chain(f.l1_loss(x, x)),
            chain(f.softmin(x, 1)),
        ]

    t, g = both(fn, compare=False)
    assert t == g


def test_jit_friendly():
    """The single-node activations and losses trace under ``jax.jit``."""
    import jax

    def step(a, b):
        x = lg.Tensor._make(a, lg.float32, lg.device("cpu"))
        y = lg.Tensor._make(b, lg.float32, lg.device("cpu"))
        out = LF.mse_loss(LF.gelu(x), y) + LF.cross_entropy(LF.softmax(x, 1), lg.tensor(TARGET))
        return out._data

    got = jax.jit(step)(A.astype(np.float32), B.astype(np.float32))
    ta, tb = torch.tensor(A, dtype=torch.float32), torch.tensor(B, dtype=torch.float32)
    want = TF.mse_loss(TF.gelu(ta), tb) + TF.cross_entropy(TF.softmax(ta, 1), torch.tensor(TARGET))
    np.testing.assert_allclose(np.asarray(got), want.numpy(), rtol=1e-5)


def test_relu_gradient_at_zero():
    t, g = both(run(lambda m, x: F(m).relu(x), [[-1.0, 0.0, 2.0]], ["float32"], [True]))
    same_tensor(t[1], g[1], exact=True)
    assert g[1].tolist() == [0.0, 0.0, 1.0 + 1.0 / 4 * 0 + 0.5]  # weights 0.5, 1.0, 1.5


@pytest.mark.parametrize("layout", ["t", "permute", "step_slice", "transpose_unit", "plain"])
def test_dropout_mask_follows_memory_order(layout):
    """PyTorch fills the mask of a dense permuted input (a transposed view) in memory order."""
    make = {
        "t": lambda m: m.ones(2, 3).t(),
        "permute": lambda m: m.ones(2, 3, 4).permute(2, 0, 1),
        "step_slice": lambda m: m.ones(4, 6)[::2],
        "transpose_unit": lambda m: m.ones(3, 1, 4).transpose(0, 2),
        "plain": lambda m: m.ones(5),
    }[layout]

    def fn(m):
        m.manual_seed(0)
        return F(m).dropout(make(m), 0.5)

    both(fn)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("layout", ["contiguous", "one", "strided", "transposed", "expanded"])
def test_gelu_at_infinity_follows_pytorchs_two_kernels(dtype, layout):
    """Note [GELU at infinity]: oneDNN's GELU (contiguous, two elements or more, not float64)
    gives NaN at +inf on a CPU with AVX-512, PyTorch's own kernel +inf; compared with the
    PyTorch of the machine the test runs on."""

    def fn(m):
        inf = float("inf")
        base = m.tensor([[inf, 1.0, -inf], [0.5, inf, -2.0]], dtype=getattr(m, dtype))
        x = {
            "contiguous": base,
            "one": base[:1, :1],
            "strided": base[:, ::2],
            "transposed": base.t(),
            "expanded": base[:1, :1].expand(3, 2),
        }[layout]
        return m.nn.functional.gelu(x), m.nn.functional.gelu(x, approximate="tanh")

    both(fn)


def test_functions_torch_and_F_share_are_one_object():
    """Where ``torch.X`` is ``F.X`` (the convolutions, avg_pool1d, bilinear, prelu, the
    shuffles, selu_...), leafgrad's two names are one function; where PyTorch's differ (F's
    Python wrapper over the ATen builtin), each leafgrad name exists as PyTorch's does."""
    shared = [
        n
        for n in dir(TF)
        if not n.startswith("_")
        and callable(getattr(TF, n))
        and getattr(torch, n, None) is getattr(TF, n)
    ]
    assert {"conv2d", "bilinear", "pdist", "selu_"} <= set(shared)
    missing = [n for n in shared if not (hasattr(lg, n) and hasattr(LF, n))]
    assert set(missing) <= {"conv_tbc"}, missing  # leafgrad has no conv_tbc
    assert [n for n in shared if n not in missing and getattr(lg, n) is not getattr(LF, n)] == []
