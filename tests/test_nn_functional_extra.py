"""nn.functional extras against torch: shrink/threshold activations, prelu, glu, rrelu, rms_norm,
pixel (un)shuffle, scaled dot-product attention and the margin/NLL-style losses: values,
gradients, graphs (node names all the way down), saved tensors and error texts."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import both


def graph(t, depth: int = 12):
    """The names of ``t``'s graph, node by node (``None`` for absent edges)."""

    def walk(fn, d):
        if fn is None:
            return None
        name = type(fn).__name__
        if d == 0 or name == "AccumulateGrad":
            return name
        return (name, tuple(walk(f, d - 1) for f, _ in fn.next_functions))

    return walk(t.grad_fn, depth)


def _data(shape, dtype, seed=0, scale=1.0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(shape) * scale).astype(dtype)


def run(fn, arrays, *, grads=True, **kw):
    """``fn(F, m, *tensors)`` under both libraries: result, its graph, every input's grad."""

    def f(m):
        ts = [m.tensor(a, requires_grad=grads and a.dtype.kind == "f") for a in arrays]
        out = fn(m.nn.functional, m, *ts)
        g = graph(out)
        if grads and out.requires_grad:
            w = m.arange(out.numel(), dtype=out.dtype).reshape(out.shape) / 7 + 0.5
            (out * w).sum().backward()
        return out, g, [t.grad for t in ts if t.requires_grad]

    return both(f, **kw)


DTYPES = ["float32", "float64"]

# --- activations -------------------------------------------------------------------------------

ACTIVATIONS = {
    "logsigmoid": lambda F, x: F.logsigmoid(x),
    "softshrink": lambda F, x: F.softshrink(x, 0.5),
    "softshrink0": lambda F, x: F.softshrink(x, 0.0),
    "hardshrink": lambda F, x: F.hardshrink(x, 0.5),
    "hardshrink_neg": lambda F, x: F.hardshrink(x, -0.5),
    "tanhshrink": lambda F, x: F.tanhshrink(x),
    "threshold": lambda F, x: F.threshold(x, 0.5, -2.0),
    "glu": lambda F, x: F.glu(x, 0),
    "glu_last": lambda F, x: F.glu(x),
    "rrelu": lambda F, x: F.rrelu(x),
    "rrelu_bounds": lambda F, x: F.rrelu(x, 0.1, 0.6, training=False),
}
EXACT = {"softshrink", "softshrink0", "hardshrink", "hardshrink_neg", "threshold", "rrelu"}


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
@pytest.mark.parametrize(
    "dtype,shape", [("float32", (4, 6)), ("float64", (4, 6)), ("float32", ()), ("float64", (0, 2))]
)
def test_activation(name, dtype, shape):
    if name.startswith("glu") and shape == ():
        both(lambda m: m.nn.functional.glu(m.tensor(1.0)))
        return
    x = _data(shape, dtype)
    if x.size:
        x.flat[:4] = [0.5, -0.5, 0.0, 2.0][: x.size]  # the kinks: gradients at the edges
    run(lambda F, m, t: ACTIVATIONS[name](F, t), [x], exact=name in EXACT)


@pytest.mark.parametrize("name", ["logsigmoid", "softshrink", "hardshrink", "glu", "rrelu"])
@pytest.mark.parametrize("dtype", ["int64", "bool"])
def test_activation_integer_refused(name, dtype):
    both(lambda m: ACTIVATIONS[name](m.nn.functional, m.ones(2, 4, dtype=getattr(m, dtype))))


def test_threshold_integers_and_bool():
    both(lambda m: m.nn.functional.threshold(m.tensor([[0, 1, 2], [3, -1, 5]]), 1.5, 7))
    both(lambda m: m.nn.functional.threshold(m.ones(3, dtype=m.bool), 0.5, 1))
    both(lambda m: m.nn.functional.tanhshrink(m.tensor([0, 1, 2])))
    both(lambda m: m.nn.functional.tanhshrink(m.ones(2, dtype=m.bool)))


def test_activation_errors():
    both(lambda m: m.nn.functional.softshrink(m.ones(3), -1.0))
    both(lambda m: m.nn.functional.softshrink(m.ones(3, dtype=m.float64), -0.25))
    both(lambda m: m.nn.functional.glu(m.ones(2, 3), 1))
    both(lambda m: m.nn.functional.glu(m.ones(2, 3), 5))
    both(lambda m: m.nn.functional.glu(m.ones(2, 3, dtype=m.long), 0))


@pytest.mark.parametrize("name", ["threshold", "rrelu"])
def test_inplace_variants(name):
    x = _data((3, 4), "float32")

    def f(m):
        F = m.nn.functional
        a = m.tensor(x, requires_grad=True)
        b = a.clone()
        if name == "threshold":
            out = F.threshold_(b, 0.1, 3.0)
            out2 = F.threshold(a.clone(), 0.1, 3.0, inplace=True)
        else:
            out = F.rrelu_(b, 0.1, 0.3)
            out2 = F.rrelu(a.clone(), 0.1, 0.3, inplace=True)
        assert out is b
        g = graph(out)
        (out * 2 + out2).sum().backward()
        return out, out2, g, a.grad

    both(f)

    def twice(m):  # the in-place node saves its result: writing it again breaks backward
        F = m.nn.functional
        a = m.tensor(x, requires_grad=True)
        out = F.threshold_(a.clone(), 0.1, 3.0) if name == "threshold" else F.rrelu_(a.clone())
        out.mul_(2)
        out.sum().backward()

    both(twice)


def test_rrelu_training_bfloat16_not_implemented():
    # PyTorch's CPU kernel computes the slopes in float and rounds the noise to bfloat16; the
    # training mode of the other dtypes is in tests/test_rrelu_training.py
    import leafgrad

    with pytest.raises(NotImplementedError, match="bfloat16"):
        leafgrad.nn.functional.rrelu(leafgrad.ones(3, dtype=leafgrad.bfloat16), training=True)


@pytest.mark.parametrize(
    "xshape,wshape",
    [((2, 3, 4), (3,)), ((2, 3), (1,)), ((5,), (1,)), ((), (1,)), ((2, 3, 4), ()), ((0, 3), (3,))],
)
def test_prelu(xshape, wshape):
    dtype = "float64" if len(xshape) == 3 else "float32"
    x = _data(xshape, dtype)
    if x.size:
        x.flat[0] = 0.0
    w = _data(wshape, dtype, seed=1)
    # Values are exact; the weight gradient is a reduction (summation order differs).
    run(lambda F, m, a, b: F.prelu(a, b), [x, w])


def test_prelu_weight_without_grad_and_errors():
    x = _data((2, 3, 4), "float32")

    def f(m):
        a = m.tensor(x, requires_grad=True)
        out = m.nn.functional.prelu(a, m.full((3,), 0.25))
        out.sum().backward()
        return out, graph(out), a.grad

    both(f)
    both(lambda m: m.nn.functional.prelu(m.ones(2, 3, 4), m.ones(4)))
    both(lambda m: m.nn.functional.prelu(m.ones(5), m.ones(5)))
    both(lambda m: m.nn.functional.prelu(m.ones(2, 3), m.ones(1, 3)))
    both(lambda m: m.nn.functional.prelu(m.ones(3), m.ones(1, dtype=m.float64)))
    both(lambda m: m.nn.functional.prelu(m.ones(3, dtype=m.long), m.ones(1, dtype=m.long)))
    both(lambda m: m.nn.functional.prelu(m.ones(()), m.ones(3)))

    def twice(m):
        out = m.nn.functional.prelu(m.tensor(x, requires_grad=True), m.ones(3))
        out.sum().backward()
        out.sum().backward()

    both(twice)


# --- rms_norm, pixel shuffle -------------------------------------------------------------------


@pytest.mark.parametrize(
    "shape,normalized,weighted,eps,dtype",
    [
        ((2, 3, 4), (4,), True, None, "float32"),
        ((2, 3, 4), (3, 4), False, 1e-3, "float64"),
        ((5,), [5], True, 0.1, "float32"),
        ((2, 5), (5,), False, None, "float64"),
    ],
)
def test_rms_norm(shape, normalized, weighted, eps, dtype):
    x = _data(shape, dtype)
    nshape = tuple(normalized)
    arrays = [x, _data(nshape, dtype, seed=3)] if weighted else [x]

    def fn(F, m, a, w=None):
        return F.rms_norm(a, normalized, w, eps)

    run(fn, arrays)


def test_rms_norm_errors():
    both(lambda m: m.nn.functional.rms_norm(m.ones(4, 3), (5,)))
    both(lambda m: m.nn.functional.rms_norm(m.ones(4, 3), [2, 3]))
    both(lambda m: m.nn.functional.rms_norm(m.ones(4, 3), 3))


@pytest.mark.parametrize(
    "shape,r,dtype",
    [((1, 8, 3, 3), 2, "float32"), ((2, 9, 2, 1), 3, "float64"), ((4, 2, 2), 1, "float32")],
)
def test_pixel_shuffle(shape, r, dtype):
    x = _data(shape, dtype)
    run(lambda F, m, a: F.pixel_shuffle(a, r), [x], exact=True)
    y = _data((*shape[:-3], shape[-3] // (r * r), shape[-2] * r, shape[-1] * r), dtype)
    run(lambda F, m, a: F.pixel_unshuffle(a, r), [y], exact=True)
    run(lambda F, m, a: F.pixel_unshuffle(F.pixel_shuffle(a, r), r), [x], exact=True)


def test_pixel_shuffle_integers_and_errors():
    both(lambda m: m.nn.functional.pixel_shuffle(m.arange(32).reshape(2, 4, 2, 2), 2))
    both(lambda m: m.nn.functional.pixel_unshuffle(m.arange(32).reshape(2, 1, 4, 4), 2))
    both(lambda m: m.nn.functional.pixel_shuffle(m.ones(1, 3, 2, 2), 2))
    both(lambda m: m.nn.functional.pixel_shuffle(m.ones(4, 2), 2))
    both(lambda m: m.nn.functional.pixel_shuffle(m.ones(1, 4, 2, 2), 0))
    both(lambda m: m.nn.functional.pixel_unshuffle(m.ones(1, 3, 3, 2), 2))
    both(lambda m: m.nn.functional.pixel_unshuffle(m.ones(1, 1, 4, 3), 2))
    both(lambda m: m.nn.functional.pixel_unshuffle(m.ones(1, 1, 4, 4), 0))
    both(lambda m: m.nn.functional.pixel_unshuffle(m.ones(4, 4), 2))


# --- attention ---------------------------------------------------------------------------------

SDPA_CASES = {
    "plain": ((2, 3, 5, 4), (2, 3, 5, 4), None, {}),
    "causal": ((2, 3, 5, 4), (2, 3, 5, 4), None, {"is_causal": True}),
    "causal_rect": ((1, 2, 3, 4), (1, 2, 6, 4), None, {"is_causal": True}),
    "scale": ((1, 2, 5, 4), (1, 2, 7, 4), None, {"scale": 0.3}),
    "bool_mask": ((2, 3, 5, 4), (2, 3, 5, 4), "bool", {}),
    "float_mask": ((2, 3, 5, 4), (2, 3, 5, 4), "float", {}),
    "gqa": ((2, 4, 5, 4), (2, 2, 5, 4), None, {"enable_gqa": True}),
}


@pytest.mark.parametrize(
    "case,dtype",
    [(c, "float32") for c in sorted(SDPA_CASES)] + [("causal", "float64"), ("gqa", "float64")],
)
def test_sdpa_flash_path(case, dtype):
    qs, ks, mask, kw = SDPA_CASES[case]
    q, k, v = _data(qs, dtype, 0), _data(ks, dtype, 1), _data(ks, dtype, 2)
    lq, lk = qs[-2], ks[-2]
    if mask == "bool":
        mk = np.random.default_rng(4).random((lq, lk)) > 0.3
        mk[:, 0] = True  # no fully masked row
    elif mask == "float":
        mk = _data((2, 1, lq, lk), dtype, 5)

    def fn(F, m, a, b, c):
        am = None if mask is None else m.tensor(mk)
        return F.scaled_dot_product_attention(a, b, c, attn_mask=am, **kw)

    tol = {"rtol": 1e-5, "atol": 1e-5} if dtype == "float32" else {}
    run(fn, [q, k, v], **tol)


def test_sdpa_errors():

    S = "scaled_dot_product_attention"
    both(lambda m: getattr(m.nn.functional, S)(m.ones(4), m.ones(4), m.ones(4)))
    both(
        lambda m: getattr(m.nn.functional, S)(
            m.ones(1, 1, 2, 4), m.ones(1, 1, 2, 4, dtype=m.float64), m.ones(1, 1, 2, 4)
        )
    )
    both(
        lambda m: getattr(m.nn.functional, S)(
            m.ones(1, 1, 2, 4), m.ones(1, 1, 2, 4), m.ones(1, 1, 2, 4), m.ones(2, 2, dtype=m.long)
        )
    )
    both(
        lambda m: getattr(m.nn.functional, S)(
            m.ones(3, 2, 4), m.ones(3, 2, 4), m.ones(3, 2, 4), m.ones(2, 2), is_causal=True
        )
    )


SDPA_MATH = {
    "3d": dict(q=(2, 3, 4), k=(2, 5, 4), v=(2, 5, 6)),
    "2d": dict(q=(3, 4), k=(5, 4), v=(5, 2)),
    "3d_bool_mask": dict(q=(2, 3, 4), k=(2, 5, 4), v=(2, 5, 4), mask=("bool", (3, 5))),
    "4d_mask_3d": dict(q=(1, 2, 3, 4), k=(1, 2, 5, 4), v=(1, 2, 5, 4), mask=("float", (2, 3, 5))),
    "4d_mask_requires_grad": dict(
        q=(1, 2, 3, 4), k=(1, 2, 5, 4), v=(1, 2, 5, 4), mask=("grad", (3, 5))
    ),
    "causal_3d": dict(q=(2, 4, 4), k=(2, 4, 4), v=(2, 4, 4), causal=True),
    "negative_scale": dict(q=(2, 3, 4), k=(2, 5, 4), v=(2, 5, 4), scale=-0.3),
    "dropout": dict(q=(1, 2, 3, 4), k=(1, 2, 5, 4), v=(1, 2, 5, 4), p=0.4),
    "head_sizes_differ": dict(q=(1, 2, 3, 4), k=(1, 2, 5, 4), v=(1, 2, 5, 6)),
    "masked_row": dict(q=(2, 3, 4), k=(2, 5, 4), v=(2, 5, 4), mask=("row", (3, 5))),
    "gqa_3d": dict(q=(4, 3, 4), k=(2, 5, 4), v=(2, 5, 4), gqa=True),
    "transposed_last_dim": dict(q=(1, 2, 4, 3), k=(1, 2, 5, 4), v=(1, 2, 5, 4), swap=True),
}


def _graph(node, depth=0, out=None):
    out = [] if out is None else out
    if node is not None and depth < 14:
        out.append((depth, type(node).__name__))
        for nxt, _ in node.next_functions:
            _graph(nxt, depth + 1, out)
    return out


@pytest.mark.parametrize("case", sorted(SDPA_MATH))
def test_sdpa_math_path(case):
    """Where PyTorch's CPU flash kernel does not apply, its composite
    (``_scaled_dot_product_attention_math``): the same nodes, values and gradients."""
    c = SDPA_MATH[case]
    rng = np.random.default_rng(7)
    q0, k0, v0 = (rng.standard_normal(c[n]) for n in ("q", "k", "v"))
    mask0 = None
    if "mask" in c:
        kind, shape = c["mask"]
        mask0 = np.sin(np.arange(np.prod(shape))).reshape(shape)
        if kind in ("bool", "row"):
            mask0 = mask0 > -0.5
            if kind == "row":
                mask0[0] = False

    def fn(m):
        m.manual_seed(0)
        q = m.tensor(q0, requires_grad=True)
        k, v = m.tensor(k0, requires_grad=True), m.tensor(v0, requires_grad=True)
        query = q.transpose(-2, -1) if c.get("swap") else q
        mask = None
        if mask0 is not None:
            mask = m.tensor(mask0, requires_grad=c["mask"][0] == "grad")
        out = m.nn.functional.scaled_dot_product_attention(
            query,
            k,
            v,
            attn_mask=mask,
            dropout_p=c.get("p", 0.0),
            is_causal=c.get("causal", False),
            scale=c.get("scale"),
            enable_gqa=c.get("gqa", False),
        )
        (out * m.linspace(-1, 1, out.numel(), dtype=out.dtype).reshape(out.shape)).sum().backward()
        grads = [t.grad for t in (q, k, v)] + [None if mask is None else mask.grad]
        return out, grads, _graph(out.grad_fn)

    both(fn)


def test_sdpa_saves_for_backward():
    x = _data((1, 2, 3, 4), "float32")

    def twice(m):
        q = m.tensor(x, requires_grad=True)
        out = m.nn.functional.scaled_dot_product_attention(q, q, q)
        out.sum().backward()
        out.sum().backward()

    both(twice)


# --- losses ------------------------------------------------------------------------------------

REDUCTIONS = ["mean", "sum", "none"]


@pytest.mark.parametrize(
    "reduction,dtype", [("mean", "float32"), ("sum", "float64"), ("none", "float32")]
)
def test_soft_margin_loss(reduction, dtype):
    x = _data((4, 5), dtype)
    y = np.sign(_data((4, 5), dtype, 1)).astype(dtype)

    def f(m):
        a = m.tensor(x, requires_grad=True)
        out = m.nn.functional.soft_margin_loss(a, m.tensor(y), reduction=reduction)
        g = graph(out)
        out.sum().backward()
        return out, g, a.grad

    both(f)


@pytest.mark.parametrize(
    "reduction,p,weighted,dtype",
    [
        ("mean", 1, False, "float32"),
        ("sum", 2, False, "float64"),
        ("none", 1, True, "float64"),
        ("mean", 2, True, "float32"),
        ("none", 2, False, "float32"),
    ],
)
def test_multi_margin_loss(reduction, p, weighted, dtype):
    x = _data((4, 5), dtype)
    x[0, 1] = x[0, 0] - 1.0  # z == 0 exactly: the hinge's kink gets no gradient
    wt = np.abs(_data((5,), dtype, 2))

    def f(m):
        a = m.tensor(x, requires_grad=True)
        w = m.tensor(wt) if weighted else None
        out = m.nn.functional.multi_margin_loss(
            a, m.tensor([0, 2, 4, 1]), p=p, margin=1.0, weight=w, reduction=reduction
        )
        g = graph(out)
        out.sum().backward()
        return out, g, a.grad

    both(f)

    def one(m):
        a = m.tensor(x[1], requires_grad=True)
        out = m.nn.functional.multi_margin_loss(
            a, m.tensor(3), p=p, margin=0.7, reduction=reduction
        )
        out.sum().backward()
        return out, a.grad

    both(one)


def test_multi_margin_loss_errors():
    F = "multi_margin_loss"
    x = lambda m: m.ones(4, 5)  # noqa: E731
    t = lambda m: m.tensor([0, 1, 2, 3])  # noqa: E731
    both(lambda m: getattr(m.nn.functional, F)(x(m), m.tensor([0, 1, 2])))
    both(lambda m: getattr(m.nn.functional, F)(x(m), t(m), p=3))
    both(lambda m: getattr(m.nn.functional, F)(x(m), t(m), weight=m.ones(4)))
    both(lambda m: getattr(m.nn.functional, F)(x(m), t(m), weight=m.ones(5, requires_grad=True)))
    both(lambda m: getattr(m.nn.functional, F)(x(m), t(m).float()))
    both(lambda m: getattr(m.nn.functional, F)(x(m), t(m), reduction="bad"))


@pytest.mark.parametrize(
    "reduction,dtype", [("mean", "float32"), ("sum", "float64"), ("none", "float32")]
)
def test_multilabel_margin_loss(reduction, dtype):
    x = _data((3, 5), dtype)
    x[0, 2] = x[0, 0] - 1.0  # a kink
    tgt = [[0, 3, -1, 1, 1], [4, 1, 2, 3, 0], [-1, 0, 0, 0, 0]]

    def f(m):
        a = m.tensor(x, requires_grad=True)
        out = m.nn.functional.multilabel_margin_loss(a, m.tensor(tgt), reduction=reduction)
        g = graph(out)
        out.sum().backward()
        return out, g, a.grad

    both(f)

    def one(m):
        a = m.tensor(x[1], requires_grad=True)
        out = m.nn.functional.multilabel_margin_loss(
            a, m.tensor([2, 0, -1, 0, 0]), reduction=reduction
        )
        out.sum().backward()
        return out, a.grad

    both(one)
    both(lambda m: m.nn.functional.multilabel_margin_loss(m.ones(4, 5), m.zeros(4, 4).long()))


@pytest.mark.parametrize(
    "reduction,weighted,dtype",
    [("mean", False, "float32"), ("sum", True, "float64"), ("none", True, "float32")],
)
def test_multilabel_soft_margin_loss(reduction, weighted, dtype):
    x, y = _data((4, 5), dtype), (np.abs(_data((4, 5), dtype, 1)) > 0.5).astype(dtype)
    w = np.abs(_data((5,), dtype, 2))

    def fn(F, m, a, b):
        return F.multilabel_soft_margin_loss(
            a, b, weight=m.tensor(w) if weighted else None, reduction=reduction
        )

    run(fn, [x, y])


@pytest.mark.parametrize(
    "reduction,dtype", [("mean", "float32"), ("sum", "float64"), ("none", "float32")]
)
def test_hinge_embedding_loss(reduction, dtype):
    x = _data((4, 5), dtype)
    x[0, 0] = 0.5  # margin - x == 0.5; x[0, 1] below sits on the clamp's edge
    x[0, 1] = 0.5 * 2
    y = np.where(_data((4, 5), dtype, 1) > 0, 1, -1).astype(dtype)

    def fn(F, m, a):
        return F.hinge_embedding_loss(a, m.tensor(y), margin=1.0, reduction=reduction)

    run(fn, [x])


@pytest.mark.parametrize(
    "reduction,log_input,full,dtype",
    [
        ("mean", True, False, "float32"),
        ("sum", False, False, "float64"),
        ("none", True, True, "float64"),
        ("mean", False, True, "float32"),
    ],
)
def test_poisson_nll_loss(reduction, log_input, full, dtype):
    x = np.abs(_data((4, 5), dtype)) + 0.1
    t = np.abs(_data((4, 5), dtype, 1)) * 3

    def fn(F, m, a, b):
        return F.poisson_nll_loss(a, b, log_input=log_input, full=full, reduction=reduction)

    run(fn, [x, t])


@pytest.mark.parametrize(
    "reduction,var_shape,full",
    [
        ("mean", (4, 5), False),
        ("sum", (4,), True),
        ("none", (4, 1), False),
        ("mean", "float", True),
        ("none", "float", False),
    ],
)
def test_gaussian_nll_loss(reduction, var_shape, full):
    dtype = "float64" if full else "float32"
    x, t = _data((4, 5), dtype), _data((4, 5), dtype, 1)
    if var_shape == "float":

        def fn(F, m, a, b):
            return F.gaussian_nll_loss(a, b, 0.7, full=full, reduction=reduction)

        run(fn, [x, t])
        return
    v = np.abs(_data(var_shape, dtype, 2))
    v.flat[0] = 0.0  # clamped at eps

    def fn(F, m, a, b, c):
        return F.gaussian_nll_loss(a, b, c, full=full, reduction=reduction)

    run(fn, [x, t, v])


def test_gaussian_nll_loss_errors():
    g = "gaussian_nll_loss"
    both(lambda m: getattr(m.nn.functional, g)(m.ones(4, 5), m.ones(4, 5), -1.0))
    both(lambda m: getattr(m.nn.functional, g)(m.ones(4, 5), m.ones(4, 5), -m.ones(4, 5)))
    both(lambda m: getattr(m.nn.functional, g)(m.ones(4, 5), m.ones(4, 5), m.ones(3)))
    both(
        lambda m: getattr(m.nn.functional, g)(
            m.ones(4, 5), m.ones(4, 5), m.ones(4, 5), reduction="x"
        )
    )


@pytest.mark.parametrize(
    "reduction,p,swap,dtype",
    [("mean", 2, False, "float32"), ("sum", 1, True, "float64"), ("none", 3, True, "float32")],
)
def test_triplet_margin_loss(reduction, p, swap, dtype):
    a, b, c = _data((4, 5), dtype), _data((4, 5), dtype, 1), _data((4, 5), dtype, 2)

    def fn(F, m, x, y, z):
        return F.triplet_margin_loss(x, y, z, margin=0.8, p=p, swap=swap, reduction=reduction)

    run(fn, [a, b, c])

    def fn2(F, m, x, y, z):
        return F.triplet_margin_with_distance_loss(x, y, z, swap=swap, reduction=reduction)

    run(fn2, [a, b, c])

    def fn3(F, m, x, y, z):
        return F.triplet_margin_with_distance_loss(
            x, y, z, distance_function=lambda u, v: (u - v).abs().sum(-1), margin=2.0
        )

    run(fn3, [a, b, c])


@pytest.mark.parametrize("name", ["triplet_margin_loss", "triplet_margin_with_distance_loss"])
def test_triplet_errors(name):
    both(lambda m: getattr(m.nn.functional, name)(m.ones(4, 5), m.ones(5), m.ones(4, 5)))
    both(
        lambda m: getattr(m.nn.functional, name)(m.ones(4, 5), m.ones(4, 5), m.ones(4, 5), margin=0)
    )
    both(lambda m: getattr(m.nn.functional, name)(m.ones(4), m.ones(4), m.ones(4), reduction="bad"))


@pytest.mark.parametrize("size_average,reduce", [(False, None), (None, False), (True, True)])
def test_legacy_reduction_args(size_average, reduce):
    x = _data((4, 5), "float32")
    y = np.sign(_data((4, 5), "float32", 1)).astype("float32")
    kw = {"size_average": size_average, "reduce": reduce}
    losses = {
        "soft_margin_loss": lambda F, m, a: F.soft_margin_loss(a, m.tensor(y), **kw),
        "hinge": lambda F, m, a: F.hinge_embedding_loss(a, m.tensor(y), **kw),
        "multi_margin": lambda F, m, a: F.multi_margin_loss(a, m.tensor([0, 1, 2, 3]), **kw),
        "multilabel_soft": lambda F, m, a: F.multilabel_soft_margin_loss(a, m.tensor(y), **kw),
        "poisson": lambda F, m, a: F.poisson_nll_loss(a, m.tensor(y).abs(), **kw),
        "triplet": lambda F, m, a: F.triplet_margin_loss(a, a * 2, a * 3, **kw),
    }
    for fn in losses.values():
        run(fn, [x])
