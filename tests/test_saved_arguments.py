"""The non-tensor ``_saved_<name>`` attributes of PyTorch's nodes (numbers, flags, sizes), checked
name for name and value for value against torch 2.13, before and after backward."""

from __future__ import annotations

import warnings

import pytest
import torch
from conftest import lg


def _written_through(base, view_of):
    """A view of ``base`` whose base is then written in place: its grad_fn is regenerated
    (AsStridedBackward0 with the view's geometry)."""
    v = view_of(base)
    base.mul_(2)
    return v


# each program's node saves what PyTorch's does: every name, and every non-tensor value
PROGRAMS = {
    "elu": lambda m, F, x: F.elu(x, alpha=0.5),
    "selu": lambda m, F, x: F.selu(x),
    "huber": lambda m, F, x: F.huber_loss(x, x.detach() * 2, delta=0.7),
    "norm": lambda m, F, x: x.norm(),
    "norm_p1": lambda m, F, x: x.norm(p=1),
    "norm_inf": lambda m, F, x: x.norm(p=float("inf")),
    "vector_norm_dim": lambda m, F, x: m.linalg.vector_norm(x, 3, dim=1),
    "sort": lambda m, F, x: x.sort(1)[0],
    "msort": lambda m, F, x: x.msort(),
    "median_dim": lambda m, F, x: x.median(1)[0],
    "unfold": lambda m, F, x: x.unfold(1, 2, 1),
    "kron": lambda m, F, x: m.kron(x, x),
    "diag": lambda m, F, x: x.diag(1),
    "gather": lambda m, F, x: x.gather(1, m.tensor([[0], [2]])),
    "put": lambda m, F, x: x.put(m.tensor([1]), x[0, :1] * 1, accumulate=True),
    "masked_scatter": lambda m, F, x: x.masked_scatter(x > 0, x * 2),
    "dist": lambda m, F, x: m.dist(x, x.detach().flip(0)),
    "renorm": lambda m, F, x: x.renorm(2, 0, 1),
    "multi_margin": lambda m, F, x: F.multi_margin_loss(x, m.tensor([0, 2]), margin=0.5),
    "avg_pool1d": lambda m, F, x: F.avg_pool1d(x[None], 2),
    "max_pool1d": lambda m, F, x: F.max_pool1d(x[None], 2),
    "squeeze_dim": lambda m, F, x: x[None].squeeze(0),
    "reflect_pad": lambda m, F, x: F.pad(x[None], (1, 2), mode="reflect"),
    "replicate_pad_2d": lambda m, F, x: F.pad(x[None, None], (1, 1, 2, 0), mode="replicate"),
    "nearest_2d": lambda m, F, x: F.interpolate(x[None, None], size=(3, 5)),
    "bilinear": lambda m, F, x: F.interpolate(x[None, None], scale_factor=2.0, mode="bilinear"),
    "bicubic": lambda m, F, x: F.interpolate(
        x[None, None], scale_factor=1.5, mode="bicubic", align_corners=True
    ),
    "linear_1d": lambda m, F, x: F.interpolate(x[None], size=5, mode="linear"),
    "nearest_exact": lambda m, F, x: F.interpolate(x[None], size=4, mode="nearest-exact"),
    "trilinear": lambda m, F, x: F.interpolate(
        x[None, None, None], size=(2, 3, 4), mode="trilinear"
    ),
    "conv1d": lambda m, F, x: F.conv1d(x[None], x[:, None, :2].expand(2, 2, 2) * 1),
    "conv1d_bias": lambda m, F, x: F.conv1d(
        x[None], x[:1, None, :2].expand(4, 2, 2) * 1, x[0, :1].expand(4) * 1, stride=2, padding=1
    ),
    "conv_transpose": lambda m, F, x: F.conv_transpose1d(x[None], x[:, None, :2] * 1, x[0, :1]),
    "regenerated_view": lambda m, F, x: _written_through(x.clone(), lambda b: b.t()[1]),
    "regenerated_slice": lambda m, F, x: _written_through(x.clone(), lambda b: b[:, 1:]),
    "as_strided": lambda m, F, x: x.as_strided((2, 2), (1, 2), 1),
    "as_strided_no_offset": lambda m, F, x: x.as_strided((2, 2), (1, 2)),
    "as_strided_inplace": lambda m, F, x: x.clone().as_strided_((2,), (2,)),
    "index_list": lambda m, F, x: x[[0, 1]],
    "index_mixed": lambda m, F, x: x[:, m.tensor([0, 2])],
    "index_put": lambda m, F, x: x.clone().index_put((m.tensor([0]), m.tensor([1])), x[0, 0]),
    "index_put_accumulate": lambda m, F, x: x.clone().index_put(
        (m.tensor([1]),), x[0] * 2, accumulate=True
    ),
    "nll_loss": lambda m, F, x: F.nll_loss(x, m.tensor([0, 2])),
    "nll_loss_weight_ignore": lambda m, F, x: F.nll_loss(
        x, m.tensor([0, 2]), weight=m.tensor([1.0, 2.0, 3.0], dtype=m.float64), ignore_index=0
    ),
    "nll_loss_none": lambda m, F, x: F.nll_loss(x, m.tensor([1, 2]), reduction="none"),
    "nll_loss_2d": lambda m, F, x: F.cross_entropy(
        x[None, :, :, None], m.tensor([[[0], [1], [1]]])
    ),
    "squeeze_dims": lambda m, F, x: x[None].squeeze((0, -1)),
    "squeeze_none": lambda m, F, x: x[None].squeeze(),
    "squeeze_kept_dim": lambda m, F, x: x.squeeze(1),
    "squeeze_inplace_dim": lambda m, F, x: x[None].clone().squeeze_(0),
    "squeeze_inplace_dims": lambda m, F, x: x[None].clone().squeeze_((0,)),
    "squeeze_inplace_all": lambda m, F, x: x[None].clone().squeeze_(),
    "rot90_k5": lambda m, F, x: m.rot90(x, 5, (0, 1)),
    "rot90_negative": lambda m, F, x: m.rot90(x, -1, (-1, 0)),
    "reshape_alias": lambda m, F, x: x.t().reshape(6),
    "mul_scalar_gradient": lambda m, F, x: m.gradient(x, spacing=2, dim=1)[0],
    "normalize": lambda m, F, x: F.normalize(x, dim=-1),
    "clamp_min_margin": lambda m, F, x: F.margin_ranking_loss(
        x[0], x[1], m.tensor([1.0, -1.0, 1.0], dtype=m.float64), reduction="none"
    ),
    "conv2d_same": lambda m, F, x: F.conv2d(
        x[None, None], x[None, None, :, :1] * 1, padding="same", dilation=(1, 2)
    ),
    # numbers the float32 kernels read rounded: the nodes keep them as given
    "lerp_float32": lambda m, F, x: m.lerp(x.float(), x.detach().float() * 2, 0.1),
    "addcmul_float32": lambda m, F, x: m.addcmul(x.float(), x.float(), x.float(), value=0.1),
    "addcdiv_float32": lambda m, F, x: m.addcdiv(x.float(), x.float(), x.float(), value=0.3),
    "addcmul_int_value": lambda m, F, x: m.addcmul(x.float(), x.float(), x.float(), value=2),
    "rrelu_eval": lambda m, F, x: F.rrelu(x, 0.1, 0.3),
    "rrelu_train": lambda m, F, x: F.rrelu(x, 0.2, 0.4, training=True),
    "rrelu_inplace": lambda m, F, x: F.rrelu(x * 1, 0.1, 0.3, inplace=True),
    "polygamma": lambda m, F, x: m.polygamma(2, x),
    "polygamma_inplace": lambda m, F, x: (x * 1).polygamma_(1),
    # in-place activations whose nodes keep the result (and ELU's scales)
    "leaky_relu_inplace": lambda m, F, x: F.leaky_relu(x * 1, 0.2, inplace=True),
    "elu_inplace": lambda m, F, x: F.elu(x * 1, 0.7, inplace=True),
    "selu_inplace": lambda m, F, x: F.selu(x * 1, inplace=True),
    "celu_inplace": lambda m, F, x: F.celu(x * 1, 0.5, inplace=True),
    # Scalars as given: ints, negative ints
    "relu6": lambda m, F, x: F.relu6(x),
    "relu6_inplace": lambda m, F, x: F.relu6(x * 1, inplace=True),
    "hardtanh_ints": lambda m, F, x: F.hardtanh(x, -2, 1),
    "softplus_negative": lambda m, F, x: F.softplus(x, -2, 3),
    "lerp_negative_int": lambda m, F, x: m.lerp(x, x.detach() * 2, -2),
    "pow_negative_int": lambda m, F, x: x.pow(-2),
    "add_negative_alpha": lambda m, F, x: m.add(x, x, alpha=-2),
    "addmm_negative_alpha": lambda m, F, x: m.addmm(x[:, :2], x, x.t() * 1, beta=2, alpha=-1),
    "addbmm_sizes": lambda m, F, x: m.addbmm(x[:, :2], x[None], x.t()[None] * 1, beta=-1),
    "leaky_relu_int": lambda m, F, x: F.leaky_relu(x, 2),
    "elu_int": lambda m, F, x: F.elu(x, 2),
    "celu_int": lambda m, F, x: F.celu(x, 2),
    "hardshrink_int": lambda m, F, x: F.hardshrink(x, 1),
    "softshrink_int": lambda m, F, x: F.softshrink(x, 1),
    "leaky_relu_inplace_int": lambda m, F, x: F.leaky_relu(x * 1, 2, inplace=True),
    # the normalizations' sizes, flags and statistics
    "layer_norm": lambda m, F, x: F.layer_norm(x, (3,), eps=1e-3),
    "layer_norm_2d": lambda m, F, x: F.layer_norm(x[None], (2, 3)),
    "group_norm": lambda m, F, x: F.group_norm(x[None], 2, eps=1e-3),
    "batch_norm_train": lambda m, F, x: F.batch_norm(
        x[None], m.zeros(2, dtype=m.float64), m.ones(2, dtype=m.float64), training=True
    ),
    "batch_norm_eval": lambda m, F, x: F.batch_norm(
        x[None], m.zeros(2, dtype=m.float64), m.ones(2, dtype=m.float64)
    ),
    "batch_norm_no_stats": lambda m, F, x: F.batch_norm(x, None, None, training=True),
    # pooling windows as given (an omitted stride empty, a one-element list kept) and indices
    "max_pool2d_default_stride": lambda m, F, x: F.max_pool2d(x[None, None], (1, 2)),
    "max_pool2d_list_stride": lambda m, F, x: F.max_pool2d(x[None, None], 2, stride=[1], padding=1),
    "avg_pool2d_arguments": lambda m, F, x: F.avg_pool2d(
        x[None, None], (1, 2), stride=1, count_include_pad=False, divisor_override=3
    ),
    "max_pool3d": lambda m, F, x: F.max_pool3d(x[None, None, None], (1, 1, 2)),
    "avg_pool3d": lambda m, F, x: F.avg_pool3d(x[None, None, None], 1, ceil_mode=True),
    "adaptive_max_pool2d": lambda m, F, x: F.adaptive_max_pool2d(x[None, None], 1),
    "unfold_im2col": lambda m, F, x: F.unfold(x[None, None], (1, 2), padding=(0, 1)),
    "fold_col2im": lambda m, F, x: F.fold(x[None], (3, 2), (1, 2)),
    "embedding_negative_padding": lambda m, F, x: F.embedding(m.tensor([0, 1]), x, padding_idx=-1),
    "embedding_plain": lambda m, F, x: F.embedding(m.tensor([1]), x),
    "embedding_freq": lambda m, F, x: F.embedding(m.tensor([1, 1]), x, scale_grad_by_freq=True),
}


def _values(m, program, backward: bool):
    F = m.nn.functional
    x = m.tensor([[0.5, -1.2, 2.0], [1.5, 0.3, -0.7]], dtype=m.float64, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        y = PROGRAMS[program](m, F, x)
    node = y.grad_fn
    names = sorted(a for a in dir(node) if a.startswith("_saved_"))
    if backward:
        y.sum().backward()
    out = {}
    for name in names:
        try:
            v = getattr(node, name)
        except RuntimeError as e:
            out[name] = ("raised", str(e))
            continue
        out[name] = "tensor" if hasattr(v, "shape") else (type(v).__name__, repr(v))
    return node.name(), out


@pytest.mark.every_case  # each case is one node's own attributes
@pytest.mark.parametrize("program", sorted(PROGRAMS))
def test_saved_arguments_match_pytorch(program):
    for backward in (False, True):
        assert _values(lg, program, backward) == _values(torch, program, backward), backward


@pytest.mark.parametrize("pool", ["avg_pool1d", "max_pool1d", "adaptive_avg_pool1d"])
def test_a_saved_dim_counted_from_the_end_reads_back_unsigned(pool):
    def fn(m):
        x = m.ones(2, 4, requires_grad=True)
        y = getattr(m.nn.functional, pool)(x[None], 2)
        node = y.grad_fn
        y.sum().backward()
        return node.name(), node._saved_dim, node._saved_self_sym_sizes

    assert fn(lg) == fn(torch)


def test_squeeze_that_dropped_nothing_keeps_its_dim():
    def fn(m):
        x = m.ones(2, 3, requires_grad=True)
        return [(n.name(), n._saved_dim) for n in (x.squeeze(1).grad_fn, x.squeeze(-1).grad_fn)]

    assert fn(lg) == fn(torch)


@pytest.mark.parametrize("act", ["elu", "selu", "celu", "leaky_relu"])
def test_inplace_activations_take_the_gradient_from_the_result(act):
    """EluBackward1 (elu_, selu_) and CeluBackward1 read the result: grad * input_scale *
    (result + alpha * scale) below zero (equal to a few ulp: XLA's expm1 is not PyTorch's)."""
    import numpy as np

    values = np.random.default_rng(5).standard_normal(64).astype(np.float32) * 3

    def grad(m):
        x = m.tensor(values, requires_grad=True)
        y = getattr(m.nn.functional, act)(x * 1, inplace=True)
        y.backward(m.ones(64))
        return y.grad_fn.name(), x.grad.detach().numpy()

    (name, got), (want_name, want) = grad(lg), grad(torch)
    assert name == want_name
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=0)


@pytest.mark.parametrize(
    "norm",
    ["layer_norm", "layer_norm_2d", "group_norm", "batch_norm_train", "batch_norm_eval"],
)
def test_normalization_statistics_as_torch(norm):
    """``_saved_result1``/``_saved_result2`` (mean and rstd; empty in batch norm's eval mode) and
    batch norm's ``_saved_running_mean``/``_saved_running_var`` (updated in training)."""
    from conftest import both

    def fn(m):
        x = m.tensor([[0.5, -1.2, 2.0], [1.5, 0.3, -0.7]], dtype=m.float64, requires_grad=True)
        node = PROGRAMS[norm](m, m.nn.functional, x).grad_fn
        names = sorted(a for a in dir(node) if a.startswith(("_saved_result", "_saved_running")))
        raw = sorted(a for a in dir(node) if a.startswith("_raw_saved_"))
        return names, [getattr(node, a) for a in names], raw

    both(fn)


@pytest.mark.parametrize(
    "pool",
    [
        lambda F, x: F.max_pool2d(x, [2], stride=[1], padding=[1], dilation=[1]),
        lambda F, x: F.max_pool2d(x, 2, dilation=(1, 2), stride=[1]),
        lambda F, x: F.avg_pool2d(x, [3], stride=[2], padding=[1]),
        lambda F, x: F.max_pool3d(x[None], [1], stride=[1]),
        lambda F, x: F.avg_pool3d(x[None], [1], stride=[1]),
    ],
)
def test_one_element_window_lists_serve_every_dim(pool):
    from conftest import both

    def fn(m):
        x = m.arange(20.0).reshape(1, 1, 4, 5).requires_grad_()
        y = pool(m.nn.functional, x)
        y.sum().backward()
        return y, x.grad

    both(fn)


LINALG = {
    "det": (lambda m, a: m.linalg.det(a), ("LU", "pivots", "A", "result")),
    "slogdet": (lambda m, a: m.linalg.slogdet(a)[1], ("LU", "pivots", "sign")),
    "solve": (lambda m, a: m.linalg.solve(a, a[:, :1] * 1), ("LU", "pivots", "left")),
    "lu_factor": (lambda m, a: m.linalg.lu_factor(a)[0], ("LU", "pivots", "pivot")),
    "svdvals": (lambda m, a: m.linalg.svdvals(a), ("U", "S", "Vh", "S_sym_argsize_minus_1")),
    "svd": (lambda m, a: m.linalg.svd(a, full_matrices=False)[1], ("full_matrices", "S")),
    "eigvalsh": (lambda m, a: m.linalg.eigvalsh(a + a.mT), ("eigenvalues", "eigenvectors")),
    "qr_complete": (lambda m, a: m.linalg.qr(a, mode="complete")[0], ("mode", "Q", "R")),
}


@pytest.mark.parametrize("op", sorted(LINALG))
def test_linalg_nodes_keep_what_pytorch_computes(op):
    """The factorizations PyTorch's linalg kernels compute on the way (det's LU and pivots,
    svdvals' singular vectors...) are among their nodes' saved values."""
    from conftest import both

    program, names = LINALG[op]

    def fn(m):
        a = m.tensor(
            [[2.0, 0.5, 0.1], [0.5, 3.0, 0.2], [0.1, 0.2, 4.0]], dtype=m.float64, requires_grad=True
        )
        node = program(m, a).grad_fn
        return [getattr(node, "_saved_" + n) for n in names]

    both(fn)
