"""``torch.autocast`` on CPU against PyTorch (Note [Autocast] in ``leafgrad/_autocast.py``).

Each call runs on float32 (and bfloat16) leaves inside ``autocast("cpu")`` in both libraries;
the result's dtype, its graph (node names two levels down), its values (to bfloat16's
precision) and the leaves' gradients after a backward outside the region are compared.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import leafgrad

R = np.random.default_rng(0)


def _arr(*shape):
    return R.standard_normal(shape).astype("float32")


def _np(t):
    return np.asarray(t.detach().float().numpy())


def _graph(t, depth=2):
    """Node names, ``depth`` levels down from ``t.grad_fn``."""
    fn = t.grad_fn
    if fn is None:
        return None

    def walk(node, d):
        if node is None:
            return None
        if d == 0:
            return node.name()
        return (node.name(), tuple(walk(n, d - 1) for n, _ in node.next_functions))

    return walk(fn, depth)


A, B, V = _arr(3, 4), _arr(4, 5), _arr(4)
BATCH1, BATCH2 = _arr(2, 3, 4), _arr(2, 4, 5)
IMG, KERNEL = _arr(1, 2, 5, 5), _arr(3, 2, 3, 3)
SIG, K1 = _arr(1, 2, 6), _arr(3, 2, 2)
SQ = _arr(3, 3) + 3 * np.eye(3, dtype="float32")
SPD = SQ @ SQ.T
TARGET = np.array([1, 0, 3], "int64")
POS = np.abs(_arr(3, 4)) + 0.5

# name -> (function of (lib, *tensors), arrays); the arrays become float32 leaves
CASES = {
    "mm": (lambda L, a, b: L.mm(a, b), (A, B)),
    "matmul_method": (lambda L, a, b: a @ b, (A, B)),
    "matmul_mv": (lambda L, a, v: L.matmul(a, v), (A, V)),
    "bmm": (lambda L, a, b: L.bmm(a, b), (BATCH1, BATCH2)),
    "addmm": (lambda L, c, a, b: L.addmm(c, a, b), (_arr(3, 5), A, B)),
    "baddbmm": (lambda L, c, a, b: L.baddbmm(c, a, b), (_arr(2, 3, 5), BATCH1, BATCH2)),
    "addbmm": (lambda L, c, a, b: L.addbmm(c, a, b), (_arr(3, 5), BATCH1, BATCH2)),
    "linear": (lambda L, x, w, b: L.nn.functional.linear(x, w, b), (A, _arr(5, 4), _arr(5))),
    "conv2d": (lambda L, x, w: L.nn.functional.conv2d(x, w, padding=1), (IMG, KERNEL)),
    "conv1d": (lambda L, x, w: L.conv1d(x, w), (SIG, K1)),
    "conv_transpose2d": (
        lambda L, x, w: L.nn.functional.conv_transpose2d(x, w),
        (IMG, _arr(2, 3, 2, 2)),
    ),
    "prelu": (lambda L, x, w: L.nn.functional.prelu(x, w), (A, np.array([0.25], "float32"))),
    "sdpa": (
        lambda L, q, k, v: L.nn.functional.scaled_dot_product_attention(q, k, v),
        (_arr(2, 3, 4), _arr(2, 3, 4), _arr(2, 3, 4)),
    ),
    "vecdot": (lambda L, a, b: L.linalg.vecdot(a, b), (A, _arr(3, 4))),
    "einsum": (lambda L, a, b: L.einsum("ij,jk->ik", a, b), (A, B)),
    "tensordot": (lambda L, a, b: L.tensordot(a, b, dims=1), (A, B)),
    "linear_then_relu_sum": (
        lambda L, x, w: L.relu(L.nn.functional.linear(x, w)).sum(),
        (A, _arr(5, 4)),
    ),
    # float32 ops: bfloat16 inputs are cast up (the leaves are cast down first)
    "mse_after_mm": (
        lambda L, a, b, t: L.nn.functional.mse_loss(L.mm(a, b), t),
        (A, B, _arr(3, 5)),
    ),
    "cross_entropy_after_linear": (
        lambda L, x, w: L.nn.functional.cross_entropy(
            L.nn.functional.linear(x, w), L.tensor(TARGET)
        ),
        (A, _arr(5, 4)),
    ),
    "softmax_after_mm": (lambda L, a, b: L.softmax(L.mm(a, b), -1), (A, B)),
    "prod": (lambda L, a, b: L.mm(a, b).prod(-1), (A, B)),
    "l1_loss": (lambda L, a, t: L.nn.functional.l1_loss(a, t), (A, _arr(3, 4))),
    "bce_logits": (
        lambda L, a, t: L.nn.functional.binary_cross_entropy_with_logits(a, t.sigmoid()),
        (A, _arr(3, 4)),
    ),
    "kl_div": (lambda L, a, t: L.nn.functional.kl_div(a, t.softmax(-1)), (A, _arr(3, 4))),
    "trace": (lambda L, a: L.trace(a.bfloat16()), (SQ,)),
    "inverse": (lambda L, a: L.inverse(a.bfloat16()), (SQ,)),
    "linalg_inv": (lambda L, a: L.linalg.inv(a), (SQ,)),
    "linalg_solve": (lambda L, a, b: L.linalg.solve(a, b), (SQ, _arr(3, 2))),
    "cholesky": (lambda L, a: L.linalg.cholesky(a.bfloat16()), (SPD,)),
    "cdist": (lambda L, a, b: L.cdist(a.bfloat16(), b), (A, _arr(2, 4))),
    "rfft": (lambda L, a: L.fft.rfft(a.bfloat16()).abs(), (A,)),
    "fft2": (lambda L, a: L.fft.fft2(a).abs(), (A,)),
    "reflect_pad": (
        lambda L, x: L.nn.functional.pad(x.bfloat16(), (1, 1), mode="reflect"),
        (SIG,),
    ),
    "constant_pad": (lambda L, x: L.nn.functional.pad(x.bfloat16(), (1, 1)), (SIG,)),
    "quantile": (lambda L, a: L.quantile(a.bfloat16(), 0.3), (V,)),
    # promote: the widest floating type among the arguments
    "cat_mixed": (lambda L, a, b: L.cat([L.mm(a, b), b[:1]], 0), (A, B)),
    "stack_low": (lambda L, a, b: L.stack([L.mm(a, b), L.mm(a, b)]), (A, B)),
    "index_copy": (
        lambda L, a, b: a.index_copy(0, L.tensor([0, 2]), L.mm(b, L.ones(5, 4))),
        (A, _arr(2, 5)),
    ),
    # not listed: run on what they are given
    "add_mixed": (lambda L, a, b: L.mm(a, b) + b[0], (A, B)),
    "float64_untouched": (lambda L, a, b: L.mm(a.double(), b.double()), (A, B)),
    "layer_norm_after_linear": (
        lambda L, x, w: L.nn.functional.layer_norm(L.nn.functional.linear(x, w), (5,)),
        (A, _arr(5, 4)),
    ),
}


def _run(lib, case, arrays, **autocast):
    fn = CASES[case][0]
    leaves = [lib.tensor(a, requires_grad=True) for a in arrays]
    with lib.autocast("cpu", **autocast):
        out = fn(lib, *leaves)
    if isinstance(out, (tuple, list)):
        out = out[0]
    return out, leaves


@pytest.mark.parametrize("case", sorted(CASES))
def test_autocast_matches_pytorch(case):
    arrays = CASES[case][1]
    t_out, t_leaves = _run(torch, case, arrays)
    l_out, l_leaves = _run(leafgrad, case, arrays)
    assert str(l_out.dtype) == str(t_out.dtype)
    assert tuple(l_out.shape) == tuple(t_out.shape)
    assert _graph(l_out) == _graph(t_out)
    tol = 3e-2 if t_out.dtype in (torch.bfloat16, torch.float16) else 2e-2
    np.testing.assert_allclose(_np(l_out), _np(t_out), rtol=tol, atol=tol)
    if t_out.requires_grad and t_out.dtype.is_floating_point:
        t_out.float().sum().backward()
        l_out.float().sum().backward()
        for t, lt in zip(t_leaves, l_leaves):
            assert (t.grad is None) == (lt.grad is None)
            if t.grad is not None:
                assert str(lt.grad.dtype) == str(t.grad.dtype)
                np.testing.assert_allclose(_np(lt.grad), _np(t.grad), rtol=5e-2, atol=5e-2)


def test_float16_autocast_and_disabled_region():
    for kwargs in ({"dtype": torch.float16}, {"enabled": False}):
        lkwargs = {
            k: getattr(leafgrad, str(v).split(".")[-1]) if k == "dtype" else v
            for k, v in kwargs.items()
        }
        t_out, _ = _run(torch, "linear", CASES["linear"][1], **kwargs)
        l_out, _ = _run(leafgrad, "linear", CASES["linear"][1], **lkwargs)
        assert str(l_out.dtype) == str(t_out.dtype)
        assert _graph(l_out) == _graph(t_out)


def test_weight_cast_is_cached_within_the_region():
    """A float32 leaf used twice is cast once: both uses share one ToCopyBackward0 node, and
    the cache is dropped when the outermost region exits."""
    results = []
    w_, x_ = _arr(4, 4), _arr(2, 4)
    for lib in (torch, leafgrad):
        w = lib.tensor(w_, requires_grad=True)
        x = lib.tensor(x_)
        with lib.autocast("cpu"):
            y1 = lib.mm(x, w)
            y2 = lib.mm(y1, w)
            with lib.autocast("cpu"):  # nested: the cache survives the inner exit
                y3 = lib.mm(x, w)
        with lib.autocast("cpu"):
            y4 = lib.mm(x, w)
        same_12 = y1.grad_fn.next_functions[1][0] is y2.grad_fn.next_functions[1][0]
        same_13 = y1.grad_fn.next_functions[1][0] is y3.grad_fn.next_functions[1][0]
        same_14 = y1.grad_fn.next_functions[1][0] is y4.grad_fn.next_functions[1][0]
        (y2.float().sum() + y4.float().sum()).backward()
        results.append((same_12, same_13, same_14, w.grad))
    assert results[1][:3] == results[0][:3] == (True, True, False)
    np.testing.assert_allclose(_np(results[1][3]), _np(results[0][3]), rtol=5e-2, atol=5e-2)
    # cache_enabled=False casts every time
    for lib in (torch, leafgrad):
        w = lib.tensor(_arr(4, 4), requires_grad=True)
        with lib.autocast("cpu", cache_enabled=False):
            a, b = lib.mm(w, w), lib.mm(w, w)
        assert a.grad_fn.next_functions[0][0] is not b.grad_fn.next_functions[0][0]


def test_state_functions_and_messages(monkeypatch):
    monkeypatch.setenv("LEAFGRAD_VIRTUAL_CUDA", "0")  # as PyTorch here: no CUDA
    for lib in (torch, leafgrad):
        assert lib.is_autocast_enabled("cpu") is False
        assert lib.get_autocast_dtype("cpu") == lib.bfloat16
        assert lib.get_autocast_dtype("cuda") == lib.float16
        with lib.autocast("cpu"):
            assert lib.is_autocast_enabled("cpu")
            assert not lib.is_autocast_enabled()
            with lib.autocast("cpu", enabled=False):
                assert not lib.is_autocast_enabled("cpu")
            assert lib.is_autocast_enabled("cpu")
        assert lib.amp.autocast is lib.autocast

        @lib.autocast("cpu")
        def f(a, b, lib=lib):
            return lib.mm(a, b)

        assert f(lib.ones(2, 2), lib.ones(2, 2)).dtype == lib.bfloat16
    messages = []
    for lib in (torch, leafgrad):
        got = []
        for bad in (
            lambda lib=lib: lib.autocast(1),
            lambda lib=lib: lib.autocast("xyz"),
            lambda lib=lib: lib.autocast("cpu")(3),
        ):
            with pytest.raises(Exception) as exc:
                bad()
            got.append((type(exc.value).__name__, str(exc.value)))
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            a = lib.autocast("cpu", dtype=lib.float32)
            b = lib.autocast("cuda")
            lib.cpu.amp.autocast()
            lib.cuda.amp.autocast()
            lib.is_autocast_cpu_enabled()
            lib.get_autocast_gpu_dtype()
        got.append((a._enabled, b._enabled))
        got.append([(x.category.__name__, str(x.message)) for x in w])
        messages.append(got)
    assert messages[1] == messages[0]


def test_custom_fwd_casts_inputs_and_backward_state():
    results = []
    x_ = _arr(3)
    for lib in (torch, leafgrad):

        class Scale(lib.autograd.Function):
            @staticmethod
            @lib.amp.custom_fwd(device_type="cpu", cast_inputs=lib.float32)
            def forward(ctx, x, lib=lib):
                ctx.seen = (x.dtype, lib.is_autocast_enabled("cpu"))
                return x * 2

            @staticmethod
            @lib.amp.custom_bwd(device_type="cpu")
            def backward(ctx, g, lib=lib):
                ctx.back = lib.is_autocast_enabled("cpu")
                return g * 2

        x = lib.tensor(x_, requires_grad=True)
        with lib.autocast("cpu"):
            y = Scale.apply(x.bfloat16())
        y.sum().backward()
        seen = (str(y.grad_fn.seen[0]), y.grad_fn.seen[1], y.grad_fn.back)
        results.append((str(y.dtype), seen, _graph(y, 3), x.grad))
    assert results[1][:3] == results[0][:3]
    np.testing.assert_allclose(_np(results[1][3]), _np(results[0][3]))


def test_training_step_under_autocast():
    """An MLP step with the forward under autocast: loss, and every parameter's gradient dtype
    and values, as PyTorch's."""
    w1, b1, w2, b2 = _arr(8, 4), _arr(8), _arr(3, 8), _arr(3)
    x, y = _arr(5, 4), np.array([0, 2, 1, 1, 0], "int64")
    out = []
    for lib in (torch, leafgrad):
        params = [lib.tensor(p, requires_grad=True) for p in (w1, b1, w2, b2)]
        with lib.autocast("cpu"):
            h = lib.relu(lib.nn.functional.linear(lib.tensor(x), params[0], params[1]))
            logits = lib.nn.functional.linear(h, params[2], params[3])
            loss = lib.nn.functional.cross_entropy(logits, lib.tensor(y))
        loss.backward()
        out.append((loss, [p.grad for p in params], logits.dtype, _graph(loss, 3)))
    assert str(out[1][0].dtype) == str(out[0][0].dtype)
    assert str(out[1][2]) == str(out[0][2])
    assert out[1][3] == out[0][3]
    np.testing.assert_allclose(_np(out[1][0]), _np(out[0][0]), rtol=2e-2)
    for lg, tg in zip(out[1][1], out[0][1]):
        assert str(lg.dtype) == str(tg.dtype)
        np.testing.assert_allclose(_np(lg), _np(tg), rtol=6e-2, atol=6e-2)


def test_compiled_function_retraces_when_autocast_changes():
    """A compiled step's casts are part of its program: entering autocast retraces it."""
    w = leafgrad.tensor(_arr(4, 4), requires_grad=True)

    @leafgrad.compile
    def step(x):
        return leafgrad.mm(x, w)

    x = leafgrad.tensor(_arr(2, 4))
    assert step(x).dtype == leafgrad.float32
    with leafgrad.autocast("cpu"):
        assert step(x).dtype == leafgrad.bfloat16
        assert step(x).dtype == leafgrad.bfloat16
    assert step(x).dtype == leafgrad.float32
    assert step.traces == 2


def test_warnings_of_wrapped_ops_name_the_callers_line():
    """The autocast wrapper is not a frame of PyTorch's stack: a listed op's warning points at
    the line that called it (and TORCH_WARN_ONCE warnings warn once unless warn_always)."""
    out = []
    for T in (torch, leafgrad):
        T.set_warn_always(True)
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                T.triangular_solve(T.eye(2), T.eye(2))
                T.nn.functional.conv1d(T.ones(1, 1, 4), T.ones(1, 1, 2), padding="same")
        finally:
            T.set_warn_always(False)
        out.append([(w.filename, str(w.message)[:40]) for w in caught])
    assert out[1] == out[0]
    assert all(name == __file__ for name, _ in out[1])
