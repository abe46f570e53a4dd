"""Regressions found by fuzz seed 257 and the probes of session 61, against torch 2.13: the
versions of results computed from inference tensors outside inference mode, the dtype checks of
``binary_cross_entropy_with_logits``, ``dropout`` and ATen's ``norm``, and
``torch.where(condition)``."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest
import torch
from fuzz_programs import check

import leafgrad


def test_seed_257_floor_of_an_inference_integer_tensor():
    """``floor`` of an integer tensor is a clone, whose ``copy_`` bumps the fresh result's version
    when the input is an inference tensor (its autograd kernel is skipped)."""
    check(
        [
            ("new", "int64", 0, False, 0),
            ("new", "float32", 0, False, 0),
            ("new", "float32", 2, False, 0),
            ("unary", "abs", 0),
            ("unary", "abs", 0),
            ("block", "inference_mode", [("unary", "abs", 0), ("multi", "split", 8, 0, False)]),
            ("disc", "floor", 32, 0, 2.0),
        ]
    )


def _inference(m, kind):
    with m.inference_mode():
        if kind == "p":  # non-negative: rates, probabilities, standard deviations
            return m.tensor([[0.5, 0.25, 1.0], [0.0, 0.75, 2.0]])
        if kind == "i":
            return m.tensor([[1, -2, 3], [0, 4, -1]])
        if kind == "f":
            return m.tensor([[1.5, -2.0, 3.0], [0.0, 0.25, -1.0]])
        if kind == "b":
            return m.tensor([[True, False, True], [False, False, True]])
        if kind == "c":
            return m.tensor([[1 + 1j, -2.0, 3j], [0.0, 0.25, -1.0]], dtype=m.complex64)
        if kind == "s":
            return m.tensor(2.5)
        return m.tensor([[2.0, 1.0], [1.0, 3.0]])  # "m": a square matrix


def _versions(r):
    if isinstance(r, (tuple, list)):
        return tuple(_versions(x) for x in r)
    return "inference" if r.is_inference() else r._version


KERNEL_WRITE_CALLS = {
    "floor": lambda m, x: m.floor(x),
    "ceil": lambda m, x: m.ceil(x),
    "round": lambda m, x: m.round(x),
    "trunc": lambda m, x: m.trunc(x),
    "fix": lambda m, x: x.fix(),
    "angle": lambda m, x: m.angle(x),
    "conj_physical": lambda m, x: m.conj_physical(x),
    "isfinite": lambda m, x: m.isfinite(x),
    "isinf": lambda m, x: m.isinf(x),
    "isposinf": lambda m, x: m.isposinf(x),
    "isneginf": lambda m, x: m.isneginf(x),
    "signbit": lambda m, x: m.signbit(x),
    "nan_to_num": lambda m, x: m.nan_to_num(x),
    "logical_not": lambda m, x: m.logical_not(x),
    "logical_and": lambda m, x: m.logical_and(x, x),
    "logical_or": lambda m, x: m.logical_or(x, x),
    "logical_xor": lambda m, x: m.logical_xor(x, x),
    "diff": lambda m, x: m.diff(x),
    "isclose": lambda m, x: m.isclose(x, x),
    "fill": lambda m, x: m.fill(x, 2),
    "mvlgamma": lambda m, x: m.mvlgamma(x, 1),
    "count_nonzero": lambda m, x: m.count_nonzero(x, dim=0),
    "norm_except_dim": lambda m, x: m.norm_except_dim(x, 2, 0),
    "norm_except_dim_all": lambda m, x: m.norm_except_dim(x, 2, -1),
    "where": lambda m, x: m.where(x),
    "vector_norm": lambda m, x: m.linalg.vector_norm(x),
    "geqrf": lambda m, x: m.geqrf(x),
    "lu_factor_ex": lambda m, x: m.linalg.lu_factor_ex(x),
    "bernoulli": lambda m, x: m.bernoulli(x, 0.5),
    "poisson": lambda m, x: m.poisson(x),
    "normal": lambda m, x: m.normal(x),
    "normal_std": lambda m, x: m.normal(2.0, x),
    "normal_both": lambda m, x: m.normal(x, x),
    "multinomial": lambda m, x: m.multinomial(x, 1),
    "multinomial_replaced": lambda m, x: m.multinomial(x, 2, True),
    "histogram": lambda m, x: m.histogram(x),
    "histogram_density": lambda m, x: m.histogram(x, 3, density=True),
    "histogramdd": lambda m, x: m.histogramdd(x, 2),
    "tensor": lambda m, x: m.tensor(x),
    "bce_with_logits": lambda m, x: m.nn.functional.binary_cross_entropy_with_logits(
        x, x, reduction="none"
    ),
}


@pytest.mark.parametrize("kind", ["i", "f", "b", "c", "s", "m", "p"])
@pytest.mark.parametrize("name", sorted(KERNEL_WRITE_CALLS))
def test_versions_of_results_of_inference_tensors(name, kind):
    """Note [Inference tensors]: the writes PyTorch's kernel makes to its fresh result."""
    got = []
    for m in (torch, leafgrad):
        x = _inference(m, kind)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                got.append(_versions(KERNEL_WRITE_CALLS[name](m, x)))
            except Exception as exc:  # noqa: BLE001 (both must refuse alike)
                got.append(type(exc).__name__)
    assert got[1] == got[0]


@pytest.mark.parametrize(
    "shape", [(2, 3), (3, 2), (2, 2), (1, 1), (4, 3, 2), (4, 2, 3), (0, 2), (2, 0)]
)
def test_versions_of_qr_results_of_inference_tensors(shape):
    a = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    got = []
    for m in (torch, leafgrad):
        with m.inference_mode():
            x = m.tensor(a)
        got.append([_versions(m.linalg.qr(x, mode)) for mode in ("reduced", "complete", "r")])
    assert got[1] == got[0]


DTYPES = ["int64", "bool", "float32", "float64", "float16", "complex64", "int32"]


def _bce(m, a, b, key=None, key_dtype=None):
    x = m.tensor([0.3, -1.2, 2.0]).to(getattr(m, a))
    y = m.tensor([0.5, 0.25, 1.0]).to(getattr(m, b))
    extra = {} if key is None else {key: m.tensor([1.5, 2.0, 0.5]).to(getattr(m, key_dtype))}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            r = m.nn.functional.binary_cross_entropy_with_logits(x, y, reduction="none", **extra)
        except Exception as exc:  # noqa: BLE001
            return type(exc).__name__, str(exc)
    return str(r.dtype), r.double().tolist()


@pytest.mark.parametrize("key", [None, "weight", "pos_weight"])
@pytest.mark.parametrize("target", DTYPES)
def test_bce_with_logits_dtypes(target, key):
    """ATen's formula: ``log_sigmoid(input)`` (floating only), then ``(1 - target).mul_(input)``:
    the loss has the target's dtype, and each in-place step refuses what it cannot hold."""
    for a, k in itertools.product(DTYPES, DTYPES if key else [None]):
        want, got = _bce(torch, a, target, key, k), _bce(leafgrad, a, target, key, k)
        assert got[0] == want[0], (a, target, key, k, want, got)
        if want[0].startswith("torch."):
            np.testing.assert_allclose(got[1], want[1], rtol=2e-3, err_msg=str((a, target, k)))
        else:
            assert got[1] == want[1]


@pytest.mark.parametrize("dtype", ["int64", "bool", "int32", "uint8"])
def test_dropout_of_an_integer_tensor(dtype):
    """The noise is drawn, then ``noise.div_(1 - p)`` refuses the integer result; ``p=1``
    multiplies by zeros. The generator advances as PyTorch's does."""
    out = []
    for m in (torch, leafgrad):
        x = m.ones(2, 3, dtype=getattr(m, dtype))
        m.manual_seed(0)
        seen = []
        calls = (
            lambda m, x: m.nn.functional.dropout(x),
            lambda m, x: m.nn.functional.dropout(x, 1.0),
            lambda m, x: m.dropout(x, 0.3, True),
            lambda m, x: m.nn.functional.dropout(x.clone(), inplace=True),
            lambda m, x: m.nn.functional.dropout(x, training=False),
        )
        for f in calls:
            try:
                seen.append(f(m, x).tolist())
            except RuntimeError as exc:
                seen.append(str(exc))
            seen.append(m.rand(2).tolist())
        out.append(seen)
    assert out[1] == out[0]


def test_aten_norm_checks():
    """``frobenius_norm`` and ``norm_except_dim`` are ATen's ``norm``: floating input only, a 0-d
    input takes dim 0, repeated dims are refused, no dims is all of them; warned once."""
    calls = [
        lambda m: m.frobenius_norm(m.tensor([[1, -2, 3], [0, 4, -1]]), dim=0),
        lambda m: m.frobenius_norm(m.tensor(2.5), dim=0),
        lambda m: m.frobenius_norm(m.tensor(2.5), dim=-1, keepdim=True),
        lambda m: m.frobenius_norm(m.ones(2, 3), dim=(0, 0)),
        lambda m: m.frobenius_norm(m.ones(2, 3), dim=()),
        lambda m: m.frobenius_norm(m.ones(2, 3), dim=(0, 1, 1)),
        lambda m: m.norm_except_dim(m.ones(2, 3, dtype=m.int64), 2, 0),
        lambda m: m.norm_except_dim(m.ones(2, 3, dtype=m.int64), 2, -1),
    ]
    for call in calls:
        out = []
        for m in (torch, leafgrad):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    r = call(m)
                    out.append((str(r.dtype), r.shape, r.tolist()))
                except (RuntimeError, IndexError) as exc:
                    out.append((type(exc).__name__, str(exc)))
        assert out[1][:2] == out[0][:2]
        if out[0][0].startswith("torch."):
            np.testing.assert_allclose(out[1][2], out[0][2], rtol=1e-6)
        else:
            assert out[1] == out[0]
    leafgrad.set_warn_always(False)
    leafgrad.frobenius_norm(leafgrad.ones(2), dim=0)  # the first call may warn
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        leafgrad.frobenius_norm(leafgrad.ones(2), dim=0)
        leafgrad.nuclear_norm(leafgrad.ones(2, 2))
        leafgrad.nuclear_norm(leafgrad.ones(2, 2))
    assert [str(w.message)[:22] for w in seen] in ([], ["at::nuclear_norm is de"])


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_norm_except_dim_graph(dim):
    """``Tensor::norm`` in C++: ``NormBackward1`` over dims, ``NormBackward0`` over all."""
    got = []
    for m in (torch, leafgrad):
        x = m.tensor([[1.0, -2, 3], [0, 4, -1]], requires_grad=True)
        y = m.norm_except_dim(x, 2, dim)
        names = [type(y.grad_fn).__name__]
        names += [type(n).__name__ for n, _ in y.grad_fn.next_functions if n is not None]
        (g,) = m.autograd.grad(y.sum(), x)
        got.append((names, y.tolist(), g.tolist()))
    assert got[1][0] == got[0][0]
    np.testing.assert_allclose(got[1][1], got[0][1], rtol=1e-6)
    np.testing.assert_allclose(got[1][2], got[0][2], rtol=1e-6)


def test_where_of_a_condition_is_nonzero_numpy():
    """``torch.where(condition)``: views of one ``nonzero`` result (``unbind(1)``)."""
    for m in (torch, leafgrad):
        x = m.tensor([[1.0, 0.0], [2.0, 3.0]])
        rows, cols = m.where(x)
        assert rows._base is not None and rows._base is cols._base
        assert rows.tolist() == [0, 1, 1] and cols.tolist() == [0, 0, 1]
        assert [t.tolist() for t in m.where(m.tensor(0))] == [[]]


@pytest.mark.parametrize("name", ["hann", "hamming", "blackman", "bartlett", "kaiser"])
def test_window_length_as_the_parser_reads_it(name):
    """A window length is an ``int`` argument: a NumPy int or a 0-d integer tensor is read."""
    out = []
    for m in (torch, leafgrad):
        f = getattr(m, name + "_window")
        seen = []
        for n in (m.tensor(3), np.int64(4), m.tensor([3]), m.tensor(3.0), 2.5, True, None, "3"):
            try:
                seen.append(f(n).tolist())
            except (TypeError, RuntimeError) as exc:
                seen.append((type(exc).__name__, str(exc)))
        out.append(seen)
    assert len(out[1]) == len(out[0])
    for a, b in zip(out[0], out[1]):
        if isinstance(a, tuple):
            assert b == a
        else:
            np.testing.assert_allclose(b, a, rtol=1e-6, atol=1e-7)


def test_histogramdd_needs_bins():
    """``bins`` has no default: PyTorch's parser lists the signatures."""
    for kw in [{}, {"range": [0.0, 1.0] * 3}, {"weight": None}]:
        out = []
        for m in (torch, leafgrad):
            with pytest.raises(TypeError) as info:
                m.histogramdd(m.ones(2, 3), **kw)
            out.append(str(info.value))
        assert out[1] == out[0]


def test_histogramdd_checks_in_pytorchs_order():
    """An int ``bins`` reads ``input.size(-1)`` first; counts are checked after the dtype, edge
    tensors before it."""
    for make in (
        lambda m: m.tensor(2.5),
        lambda m: m.ones(3),
        lambda m: m.tensor([[1, 2]]),
        lambda m: m.ones(2, 0),
        lambda m: m.ones(0, 2),
    ):
        for bins in (lambda m: 2, lambda m: [2], lambda m: [m.tensor([0.0, 1.0])]):
            out = []
            for m in (torch, leafgrad):
                try:
                    r = m.histogramdd(make(m), bins(m))
                    out.append((tuple(r.hist.shape), len(r.bin_edges)))
                except (RuntimeError, IndexError, NotImplementedError) as exc:
                    out.append((type(exc).__name__, str(exc)))
            assert out[1] == out[0]


def _outcome(m, call):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            r = call(m)
        except Exception as exc:  # noqa: BLE001 (both must refuse alike)
            return type(exc).__name__, str(exc).split("\n")[0]
    return str(r.dtype), tuple(r.shape), r.tolist()


def _same_outcomes(calls):
    for k, call in enumerate(calls):
        want, got = _outcome(torch, call), _outcome(leafgrad, call)
        assert got[:2] == want[:2], (k, want, got)
        if want[0].startswith("torch.") and "complex" not in want[0]:
            np.testing.assert_allclose(got[2], want[2], rtol=1e-5, err_msg=str(k))
        elif want[0].startswith("torch."):
            assert np.allclose(np.asarray(got[2]), np.asarray(want[2]), rtol=1e-5), k
        else:
            assert got == want, k


INT_DTYPES = ["int8", "uint8", "int16", "int32", "int64"]


@pytest.mark.parametrize(
    "dtype", INT_DTYPES + ["bool", "float16", "bfloat16", "float32", "float64", "complex64"]
)
def test_numbers_converted_into_a_tensors_dtype_are_checked(dtype):
    """c10's ``checked_convert``: a number a kernel reads in the tensor's (or result's) dtype
    raises where it does not fit, rather than wrapping (``x.clamp(0, 255)`` of int8)."""

    def x(m):
        return m.ones(3, dtype=getattr(m, dtype))

    def idx(m):
        return m.tensor([0])

    calls = [
        lambda m: m.clamp(x(m), 0, 255),
        lambda m: m.clamp(x(m), -200, 3),
        lambda m: m.clamp(x(m), max=70000),
        lambda m: m.clamp(x(m), min=2**40),
        lambda m: x(m).clamp_(0, 300),
        lambda m: m.clamp_min(x(m), 300),
        lambda m: m.clamp_max(x(m), -300),
        lambda m: x(m).clamp(0.5, 2.5),
        lambda m: m.nn.functional.hardtanh(x(m), 0, 255),
        lambda m: m.nn.functional.hardtanh(x(m), -1.0, 1.0),
        lambda m: m.nn.functional.relu6(x(m)),
        lambda m: m.nn.functional.threshold(x(m), 300, 1),
        lambda m: m.nn.functional.threshold(x(m), 1, 300),
        lambda m: m.where(x(m) > 0, x(m), 300),
        lambda m: m.where(x(m) > 0, -300, x(m)),
        lambda m: m.where(x(m) > 0, x(m), 2**40),
        lambda m: m.where(x(m) > 0, x(m), 1e300),
        lambda m: x(m) ** 300,
        lambda m: m.pow(x(m), 70000),
        lambda m: x(m).pow_(300),
        lambda m: x(m).scatter(0, idx(m), 300),
        lambda m: x(m).scatter(0, idx(m), 1e300),
        lambda m: x(m).scatter(0, idx(m), 300, reduce="add"),
    ]
    _same_outcomes(calls)


def test_complex_norms_are_real():
    def c(m):
        return m.tensor([[1 + 1j, -2.0, 3j], [0.0, 0.25, -1.0]], dtype=m.complex64)

    _same_outcomes(
        [
            lambda m: m.frobenius_norm(c(m), dim=0),
            lambda m: m.norm_except_dim(c(m), 2, 0),
            lambda m: m.norm_except_dim(c(m), 2, -1),
            lambda m: m.nn.functional.pairwise_distance(c(m), c(m) * 2),
        ]
    )


def test_kernel_checks_in_pytorchs_order():
    """glu's halving check precedes its dtype refusal; hardtanh refuses bool inputs and
    negative limits of uint8; histogram has no half kernels."""
    calls = [
        lambda m: m.nn.functional.glu(m.ones(2, 3, dtype=m.int64)),
        lambda m: m.nn.functional.glu(m.ones(2, 4, dtype=m.int64)),
        lambda m: m.nn.functional.hardtanh(m.ones(2, dtype=m.bool)),
        lambda m: m.nn.functional.hardtanh(m.ones(2, dtype=m.uint8)),
        lambda m: m.nn.functional.hardtanh(m.ones(2, dtype=m.uint8), 0, 2),
        lambda m: m.histogram(m.ones(3, dtype=m.float16)),
        lambda m: m.histogramdd(m.ones(3, 2, dtype=m.bfloat16), 2),
    ]
    _same_outcomes(calls)


LOSS_DTYPES = ["int64", "bool", "float32", "float64", "float16", "uint8"]


@pytest.mark.parametrize("target", LOSS_DTYPES)
def test_soft_margin_loss_dtypes(target):
    """ATen's ``neg_out(output, input).mul_(target).exp_().log1p_()``: the input's dtype, with
    the in-place steps' refusals (an integer input computed nothing right before)."""
    calls = [
        lambda m, a=a, red=red: m.nn.functional.soft_margin_loss(
            m.tensor([1.0, -2.0, 0.5]).to(getattr(m, a)),
            m.tensor([1.0, -1.0, 1.0]).to(getattr(m, target)),
            reduction=red,
        )
        for a in LOSS_DTYPES
        for red in ("mean", "none")
    ]
    for k, call in enumerate(calls):
        want, got = _outcome(torch, call), _outcome(leafgrad, call)
        assert got[:2] == want[:2], (k, want, got)
        if want[0].startswith("torch."):
            np.testing.assert_allclose(got[2], want[2], rtol=2e-3)


def test_margin_losses_check_their_targets():
    """Class indices out of range raise (they computed a loss from clamped indices before); a
    0-d input is one sample of one class."""

    def f(m):
        return m.nn.functional

    calls = [
        lambda m: f(m).multi_margin_loss(m.ones(2, 3), m.tensor([5, 0])),
        lambda m: f(m).multi_margin_loss(m.ones(2, 3), m.tensor([-1, 0])),
        lambda m: f(m).multi_margin_loss(m.ones(2, 3), m.tensor([2, 0])),
        lambda m: f(m).multi_margin_loss(m.tensor(2.5), m.tensor(0)),
        lambda m: f(m).multi_margin_loss(m.tensor(2.5), m.tensor([0]), reduction="none"),
        lambda m: f(m).multi_margin_loss(m.tensor([2.5, 1.0]), m.tensor([1]), reduction="none"),
        lambda m: f(m).multi_margin_loss(m.tensor(2.5), m.tensor(1)),
        lambda m: f(m).multilabel_margin_loss(m.ones(1, 3), m.tensor([[3, -1, 0]])),
        lambda m: f(m).multilabel_margin_loss(m.ones(1, 3), m.tensor([[-2, 0, 1]])),
        lambda m: f(m).multilabel_margin_loss(m.ones(1, 3), m.tensor([[0, 1, 2]])),
        lambda m: f(m).multilabel_margin_loss(m.ones(1, 3, dtype=m.int64), m.tensor([[0, 1, 5]])),
        lambda m: f(m).multilabel_margin_loss(
            m.ones(1, 3, dtype=m.bool), m.tensor([[0.0, 1.0, 2.0]])
        ),
        lambda m: f(m).multilabel_margin_loss(m.ones(3), m.tensor([2, -1, 0])),
    ]
    _same_outcomes(calls)


def test_nll_loss_checks_in_pytorchs_order():
    """``nll_loss_nd``'s dimension and batch checks, then the kernel's target-dims check (a raw
    JAX error before); a 1-d input takes a 1-d target of one class."""

    def f(m):
        return m.tensor([[1.5, -2.0, 3.0], [0.0, 0.25, -1.0]])

    def i(m):
        return m.tensor([[1, -2, 3], [0, 4, -1]])

    calls = [
        lambda m: m.nn.functional.nll_loss(i(m), i(m)),
        lambda m: m.nn.functional.nll_loss(f(m), i(m)),
        lambda m: m.nn.functional.nll_loss(m.tensor(2.5), m.tensor(0)),
        lambda m: m.nn.functional.nll_loss(f(m), m.tensor([[0, 1], [1, 0]])),
        lambda m: m.nn.functional.nll_loss(f(m), m.tensor([0, 3])),
        lambda m: m.nn.functional.nll_loss(m.tensor([0.5, 1.0]), m.tensor(1)),
        lambda m: m.nn.functional.nll_loss(m.tensor([0.5, 1.0]), m.tensor([1])),
        lambda m: m.nn.functional.nll_loss(m.tensor([0.5, 1.0]), m.tensor([1]), reduction="none"),
        lambda m: m.nn.functional.nll_loss(m.tensor([0.5, 1.0]), m.tensor([1, 0])),
    ]
    _same_outcomes(calls)


def test_huber_loss_mixed_dtypes():
    """The forward promotes into the input's dtype (a forward refusal before); the backward of
    mixed dtypes raises PyTorch's error for the edge whose gradient is needed."""

    def f(m):
        return m.tensor([[1.5, -2.0, 3.0], [0.0, 0.25, -1.0]])

    def i(m):
        return m.tensor([[1, -2, 3], [0, 4, -1]])

    calls = [
        lambda m, a=a, b=b, kw=kw: m.nn.functional.huber_loss(a(m), b(m), **kw)
        for a, b in [
            (i, f),
            (i, i),
            (lambda m: f(m).half(), lambda m: f(m).double()),
            (lambda m: f(m).double(), lambda m: f(m).half()),
            (lambda m: i(m) > 0, f),
            (f, i),
            (lambda m: f(m).to(m.complex64), f),
        ]
        for kw in ({}, {"reduction": "none"})
    ]
    _same_outcomes(calls)
    for target in ("float64", "float16", "float32"):
        for which in (0, 1):
            out = []
            for m in (torch, leafgrad):
                x, t = f(m), f(m).to(getattr(m, target))
                (x if which == 0 else t).requires_grad_()
                y = m.nn.functional.huber_loss(x, t, reduction="none")
                try:
                    y.sum().backward()
                    out.append((x if which == 0 else t).grad.tolist())
                except RuntimeError as exc:
                    out.append(str(exc))
            assert out[1] == out[0]


@pytest.mark.parametrize("name", ["mse_loss", "huber_loss", "smooth_l1_loss", "l1_loss"])
def test_target_gradient_signed_zeros(name):
    """Note [Target gradients of even losses]: where input and target are equal the target's
    gradient is +0, as PyTorch's formula on ``target - input`` gives."""
    out = []
    for m in (torch, leafgrad):
        x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
        t = m.tensor([1.0, 2.5, 3.0], requires_grad=True)
        getattr(m.nn.functional, name)(x, t).backward()
        out.append([np.signbit(g.tolist()).tolist() + g.tolist() for g in (x.grad, t.grad)])
    assert out[1] == out[0]


def test_seed_261_index_put_reading_what_it_writes():
    """``x[[0, 1]] = x[:, 0]``: PyTorch's kernel reads elements of the column it has already
    overwritten, an order-dependent write leafgrad refuses (Note [Order-dependent writes])."""
    check(
        [
            ("new", "float32", 0, False, 0),
            ("unary", "abs", 0),
            ("new", "float32", 7, False, 1),
            ("unary", "abs", 0),
            ("unary", "abs", 0),
            ("unary", "abs", 0),
            ("unary", "abs", 0),
            ("unary", "abs", 0),
            ("index", 2, 2, 0, 0),
            ("setitem", 2, 4, 0, 1, 8, True),
        ]
    )
    x = leafgrad.arange(9.0).reshape(3, 3)
    before = x.tolist()
    with pytest.raises(NotImplementedError, match="Order-dependent writes"):
        x[leafgrad.tensor([0, 1])] = x[:, 0]
    assert x.tolist() == before and x._version == 0
    for m in (torch, leafgrad):  # a view of memory the write does not touch: computed
        z = m.arange(8.0).reshape(4, 2)
        z[m.tensor([0])] = z[2:, 0]
        assert z.tolist() == [[4.0, 6.0], [2.0, 3.0], [4.0, 5.0], [6.0, 7.0]]


def test_copy_variants_keep_their_views_saved_arguments():
    """``slice_copy`` is ATen's slice (SliceBackward0_copy, a full slice too), and the copy
    variants' nodes show the ``_saved_*`` arguments of their views' nodes."""
    seen = []
    for m in (torch, leafgrad):
        x = m.arange(6.0).reshape(3, 2).requires_grad_()
        nodes = [
            m.slice_copy(x, 0, -1).grad_fn,
            m.slice_copy(x).grad_fn,
            m.slice_copy(x, 1).grad_fn,
            m.slice_copy(x, 0, -5, 10, 2).grad_fn,
            m.view_copy(x, (6,)).grad_fn,
            m.select_copy(x, 1, 0).grad_fn,
            m.diagonal_copy(x).grad_fn,
            m.unfold_copy(x, 0, 2, 1).grad_fn,
            m.expand_copy(x[:1], (2, 2)).grad_fn,
        ]
        names = [sorted(a for a in dir(n) if a.startswith("_saved")) for n in nodes]
        seen.append(
            [
                (type(n).__name__, [(a, getattr(n, a)) for a in attrs])
                for n, attrs in zip(nodes, names)
            ]
        )
        for bad in ((m.tensor(2.0),), (x, 0, 0, 3, 0), (x, 5)):
            with pytest.raises((IndexError, RuntimeError)) as info:
                m.slice_copy(*bad)
            seen[-1].append(str(info.value))
    assert seen[1] == seen[0]


def test_complex_outputs_without_derivatives():
    """PyTorch's ``throw_error_for_complex_autograd``: recorded ops whose formulas take no
    complex numbers raise once their complex result is computed; unrecorded ones compute."""

    def x(m):
        return m.tensor(
            [[1 + 1j, -2.0, 3j], [0.5, 0.25, -1.0]], dtype=m.complex64, requires_grad=True
        )

    def F(m):
        return m.nn.functional

    calls = [
        lambda m: m.geqrf(x(m))[0],
        lambda m: m.nan_to_num(x(m)),
        lambda m: m.slice_copy(x(m)),
        lambda m: F(m).silu(x(m)),
        lambda m: m.slice_scatter(x(m), x(m)),
        lambda m: F(m).binary_cross_entropy_with_logits(
            x(m).real.detach().requires_grad_(), x(m).detach()
        ),
        lambda m: m.select_copy(x(m), 0, 0),
        lambda m: m.select_scatter(x(m), x(m)[0], 0, 0),
        lambda m: m.nan_to_num(x(m).detach()),
        lambda m: F(m).silu(x(m).real),
        lambda m: F(m).silu(x(m).clone(), inplace=True).detach(),
    ]
    _same_outcomes(calls)


def test_matrix_norm_dims():
    """``nuclear_norm``'s ``int[2]`` dim: one int fills both; repeated dims are named wrapped."""
    f = [[1.5, -2.0, 3.0], [0.5, 0.25, -1.0]]
    calls = [
        lambda m, d=d: m.nuclear_norm(m.tensor(f), d) for d in (-1, 0, 5, (0, 0), (0, 1, 1))
    ] + [
        lambda m, d=d: m.linalg.matrix_norm(m.tensor(f), dim=d)
        for d in ((-1, -1), (-2, 0), (1, -1))
    ]
    _same_outcomes(calls)


def test_normal_with_a_subnormal_std_keeps_the_sign_of_zero():
    """``val * std + mean`` is one fused multiply-add: a product that underflows keeps its sign
    (hypothesis found ``normal(0.0, 5e-324)`` giving +0 for PyTorch's -0)."""
    out = []
    for m in (torch, leafgrad):
        m.manual_seed(12)
        values = [m.normal(0.0, 5e-324, ()).item() for _ in range(6)]
        out.append([(v, np.signbit(v)) for v in values])
    assert out[1] == out[0]
