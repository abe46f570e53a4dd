"""Regressions found by fuzz seed 266 and the probes of session 62, against torch 2.13: what a
saved tensor hook packs for an in-place op's result, and ``tanh``'s gradient formula."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from fuzz_programs import check

import leafgrad


def test_seed_266_in_place_result_packed_by_an_identity_hook():
    """``exp_`` saves its result, ``self`` after the write: an identity pack hook keeps that
    tensor, so a later ``add_`` changes what backward reads (no version check guards it)."""
    check(
        [
            ("new", "float32", 0, True, 0),
            ("unary", "abs", 0),
            ("block", "saved_identity", [("inplace", "exp_", 1, 0, 2.0)]),
            ("inplace", "add_", 1, 0, 2.0),
            ("backward", 1, False, 0),
        ]
    )


def _functional(m):
    return m.nn.functional


IN_PLACE = {
    "exp_": lambda m, t: t.exp_(),
    "sigmoid_": lambda m, t: t.sigmoid_(),
    "tanh_": lambda m, t: t.tanh_(),
    "relu_": lambda m, t: t.relu_(),
    "sqrt_": lambda m, t: t.sqrt_(),
    "rsqrt_": lambda m, t: t.rsqrt_(),
    "reciprocal_": lambda m, t: t.reciprocal_(),
    "sin_": lambda m, t: t.sin_(),
    "pow_": lambda m, t: t.pow_(2),
    "mul_self": lambda m, t: t.mul_(t),
    "div_": lambda m, t: t.div_(t + 1),
    "addcdiv_": lambda m, t: t.addcdiv_(t, t + 2),
    "copy_": lambda m, t: t.copy_(t * 2),
    "setitem": lambda m, t: t.__setitem__(0, t[1] * 3),
    "masked_scatter_": lambda m, t: t.masked_scatter_(t > 0.4, t * 2),
    "F.relu": lambda m, t: _functional(m).relu(t, inplace=True),
    "F.elu": lambda m, t: _functional(m).elu(t, inplace=True),
    "F.leaky_relu": lambda m, t: _functional(m).leaky_relu(t, 0.1, inplace=True),
    "F.hardtanh": lambda m, t: _functional(m).hardtanh(t, inplace=True),
    "F.threshold": lambda m, t: _functional(m).threshold(t, 0.5, 0.0, inplace=True),
    "F.celu": lambda m, t: _functional(m).celu(t, inplace=True),
    "F.selu": lambda m, t: _functional(m).selu(t, inplace=True),
    "F.silu": lambda m, t: _functional(m).silu(t, inplace=True),
    "F.rrelu": lambda m, t: _functional(m).rrelu(t, training=False, inplace=True),
    "F.rrelu_train": lambda m, t: _functional(m).rrelu(t.sub_(1), training=True, inplace=True),
    "F.hardsigmoid": lambda m, t: _functional(m).hardsigmoid(t, inplace=True),
    "F.hardswish": lambda m, t: _functional(m).hardswish(t, inplace=True),
}

HOOKS = {
    "identity": lambda: (lambda t: t, lambda t: t),
    "clone": lambda: (lambda t: t.clone(), lambda t: t),
}


def _run(m, name, hook):
    """The in-place op under the hooks, a later write, backward: the packed tensors (as
    ``self``, or not) and the gradient, or the error."""
    m.manual_seed(0)
    x = m.tensor([0.3, 0.7, 1.2], requires_grad=True)
    t = x * 1
    packed = []
    pack, unpack = HOOKS[hook]()

    def recording(p):
        packed.append(p is t)
        return pack(p)

    try:
        with m.autograd.graph.saved_tensors_hooks(recording, unpack):
            IN_PLACE[name](m, t)
        t.add_(2.0)
        t.sum().backward()
    except RuntimeError as err:
        return packed, str(err)
    return packed, x.grad.tolist()


@pytest.mark.parametrize("hook", sorted(HOOKS))
@pytest.mark.parametrize("name", sorted(IN_PLACE))
def test_in_place_results_as_pack_hooks_see_them(name, hook):
    """PyTorch packs the result of an in-place op as ``self`` once written (and an in-place
    activation's ``Backward1`` node packs that alone, with no version check)."""
    want_packed, want = _run(torch, name, hook)
    got_packed, got = _run(leafgrad, name, hook)
    assert got_packed == want_packed
    if isinstance(want, str):
        assert got == want
    else:
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)


def _failed_in_place(m):
    x = m.tensor([1, 2], dtype=m.int64)
    w = m.tensor([0.5, 1.5], requires_grad=True)
    with m.autograd.graph.saved_tensors_hooks(lambda t: t.clone(), lambda t: t):
        with pytest.raises(RuntimeError):
            x.mul_(w.exp())
        y = w.exp()
    y.mul_(2)  # the saved result packed as a clone: not version-checked, not changed
    y.sum().backward()
    return w.grad.tolist()


def test_hooks_after_an_in_place_op_that_failed():
    """An in-place op that raises once its op is recorded (a result dtype ``self`` cannot hold)
    leaves nothing to pack later: the next op's result is packed as usual."""
    np.testing.assert_allclose(_failed_in_place(leafgrad), _failed_in_place(torch), rtol=1e-6)


@pytest.mark.parametrize(
    "dtype", ["float32", "float64", "float16", "bfloat16", "complex64", "complex128"]
)
def test_tanh_gradient_is_atens_formula_on_the_result(dtype):
    """``TanhBackward0`` is ATen's ``tanh_backward(grad, result)``, ``grad * conj(1 - r * r)``,
    bit for bit for real types given the same result (JAX's VJP rounds differently); complex
    products round as XLA's do."""
    rs = np.random.RandomState(0)
    x = rs.randn(4000) * 2
    g = rs.randn(4000)
    if dtype.startswith("complex"):
        x = x + 1j * rs.randn(4000)
        g = g + 1j * rs.randn(4000)
    lx = leafgrad.tensor(x, dtype=getattr(leafgrad, dtype), requires_grad=True)
    y = leafgrad.tanh(lx)
    y.backward(leafgrad.tensor(g, dtype=getattr(leafgrad, dtype)))
    wide = leafgrad.complex128 if dtype.startswith("complex") else leafgrad.float64
    ty = torch.tensor(y.detach().to(wide).numpy()).to(getattr(torch, dtype))
    want = torch.ops.aten.tanh_backward(torch.tensor(g, dtype=ty.dtype), ty)
    got = lx.grad.to(wide).numpy()
    want = want.to(getattr(torch, str(wide).split(".")[1])).numpy()
    if dtype.startswith("complex"):
        np.testing.assert_allclose(got, want, rtol=1e-5 if dtype == "complex64" else 1e-13)
    else:
        np.testing.assert_array_equal(got, want)


RANGE_DTYPES = ["float16", "bfloat16", "float32", "float64", "int64", "int32", "uint8"]


@pytest.mark.parametrize("dtype", RANGE_DTYPES)
def test_arange_values_bit_for_bit(dtype):
    """``arange`` with a float step: PyTorch's kernel fuses ``start + step * i`` and builds each
    vector of its loop from its first element (Note [Range kernels]); both, and the split over
    threads of a long range, give other last bits than ``start + i * step``."""
    rs = np.random.RandomState(sum(map(ord, dtype)))
    sizes = [1, 2, 7, 31, 32, 33, 65, 200, 40000, 70001]
    for k in range(60):
        lo = rs.randn() * rs.choice([1, 10, 1000])
        step = (abs(rs.randn()) + 0.1) * rs.choice([1, -1]) * rs.choice([1, 0.01, 10])
        n = sizes[k % len(sizes)]
        if dtype.startswith("int") and abs(step) < 1:  # a step truncated to 0 is refused
            step = 1.5 * np.sign(step)
        if dtype == "uint8":
            lo, step, n = abs(lo) % 50, abs(step), min(n, 100)
        hi = lo + step * n - step / 2
        got = leafgrad.arange(lo, hi, step, dtype=getattr(leafgrad, dtype))
        want = torch.arange(lo, hi, step, dtype=getattr(torch, dtype))
        np.testing.assert_array_equal(got.double().numpy(), want.double().numpy())


@pytest.mark.parametrize("dtype", RANGE_DTYPES)
def test_linspace_values_bit_for_bit(dtype):
    """``linspace``: the two halves fused (float and double), the ends read as the result type
    (integers truncated first; half types through float)."""
    rs = np.random.RandomState(sum(map(ord, dtype)))
    for _ in range(80):
        a, b = rs.randn(2) * rs.choice([1, 10, 1000])
        if dtype == "uint8":
            a, b = abs(a) % 200, abs(b) % 200
        n = int(rs.randint(0, 300))
        got = leafgrad.linspace(a, b, n, dtype=getattr(leafgrad, dtype))
        want = torch.linspace(a, b, n, dtype=getattr(torch, dtype))
        np.testing.assert_array_equal(got.double().numpy(), want.double().numpy())


@pytest.mark.parametrize("fn", ["linspace", "logspace"])
@pytest.mark.parametrize("dtype", ["int64", "float32", "float64", None])
def test_range_of_complex_ends(fn, dtype):
    """A complex end makes the default complex type; a given real type refuses it."""
    for m in (torch, leafgrad):
        dt = None if dtype is None else getattr(m, dtype)
        if dtype is None:
            assert getattr(m, fn)(1 + 0j, 2, 3, dtype=dt).dtype == m.complex64
            continue
        with pytest.raises(RuntimeError) as err:
            getattr(m, fn)(1, 2 + 1j, 3, dtype=dt)
        if m is torch:
            want = str(err.value)
        else:
            assert str(err.value) == want
    with pytest.raises(RuntimeError, match="only supports 0-dimensional start"):
        leafgrad.linspace(leafgrad.tensor([1.0, 2.0]), 3, 4)


def _doubles_that_round_twice(dtype: str) -> np.ndarray:
    """Doubles whose nearest half value differs from that of their nearest float."""
    rs = np.random.RandomState(0)
    x = rs.randn(200000)
    np_half = np.float16 if dtype == "float16" else leafgrad.bfloat16.np.type
    twice = np.asarray(x.astype(np.float32).astype(np_half), np.float64)
    once = np.asarray(x.astype(np_half), np.float64)
    return x[twice != once][:50]


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_doubles_into_half_types_round_through_float(dtype):
    """c10's Half and BFloat16 are made from a float: ``tensor``, ``as_tensor``, ``full``,
    ``fill_``, item assignment and ``linspace`` round a double twice, as PyTorch does."""
    values = _doubles_that_round_twice(dtype)
    assert values.size  # NumPy's astype rounds these once
    calls = {
        "tensor": lambda m, v, d: m.tensor(v, dtype=d),
        "tensor_list": lambda m, v, d: m.tensor(v.tolist(), dtype=d),
        "tensor_scalar": lambda m, v, d: m.stack([m.tensor(float(x), dtype=d) for x in v]),
        "as_tensor": lambda m, v, d: m.as_tensor(v, dtype=d),
        "full": lambda m, v, d: m.stack([m.full((1,), float(x), dtype=d)[0] for x in v]),
        "fill_": lambda m, v, d: m.stack([m.zeros(1, dtype=d).fill_(float(x))[0] for x in v]),
        "linspace": lambda m, v, d: m.stack([m.linspace(float(x), 2.0, 2, dtype=d)[0] for x in v]),
        "to": lambda m, v, d: m.tensor(v).to(d),
    }
    for name, call in calls.items():
        got = call(leafgrad, values, getattr(leafgrad, dtype)).double().numpy()
        want = call(torch, values, getattr(torch, dtype)).double().numpy()
        np.testing.assert_array_equal(got, want, err_msg=name)


def test_seed_267_rsub_lays_out_as_sub_of_other():
    """``rsub(a, b)`` is PyTorch's ``sub(b, a)``: its iterator takes ``b``'s layout first."""
    check(
        [
            ("new", "float32", 7, False, 0),
            ("view", "T_2d", 0, 0, 0),
            ("binary", "rsub_fn", 0, 1, False),
        ]
    )


FORMULA_OPS = {
    "div": lambda m, a, b: a / b,
    "div_broadcast": lambda m, a, b: a.view(100, 200) / b.view(100, 200)[:, :1],
    "addcmul": lambda m, a, b: m.addcmul(a, a, b, value=0.7),
    "addcmul_three": lambda m, a, b: m.addcmul(a * 1, b, a.flip(0), value=-1.3),
    "addcdiv": lambda m, a, b: m.addcdiv(a, a, b, value=0.7),
    "addcdiv_three": lambda m, a, b: m.addcdiv(a * 1, a.flip(0), b, value=3),
    "lerp_scalar": lambda m, a, b: m.lerp(a, b, 0.3),
    "lerp_large": lambda m, a, b: m.lerp(a, b, 0.7),
    "lerp_tensor": lambda m, a, b: m.lerp(a, b, b.flip(0) * 0.25),
}


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64"])
@pytest.mark.parametrize("name", sorted(FORMULA_OPS))
def test_gradients_are_pytorchs_formulas_bit_for_bit(name, dtype):
    """Note [Formula tangents]: the gradients of ``div``, ``addcmul``, ``addcdiv`` and ``lerp``
    are computed as derivatives.yaml writes them (JAX's VJPs round otherwise)."""
    rs = np.random.RandomState(0)
    a, b, g = rs.randn(3, 20000)
    b = np.where(np.abs(b) < 0.1, 0.5, b)
    if dtype.startswith("complex"):
        a, b = a + 1j * rs.randn(20000), b + 1j * rs.randn(20000)

    def run(m):
        x = m.tensor(a, dtype=getattr(m, dtype), requires_grad=True)
        y = m.tensor(b, dtype=getattr(m, dtype), requires_grad=True)
        out = FORMULA_OPS[name](m, x, y)
        cot = m.tensor(g[: out.numel()].reshape(out.shape)).to(out.dtype)
        out.backward(cot)
        return out.detach().numpy(), x.grad.numpy(), y.grad.numpy()

    want, got = run(torch), run(leafgrad)
    if dtype.startswith("complex") or name == "div_broadcast":
        # complex products round as XLA's do; a broadcast operand's gradient is summed in
        # XLA's order, not PyTorch's
        for w, o in zip(want, got):
            np.testing.assert_allclose(o, w, rtol=1e-5, atol=1e-6)
        return
    for w, o in zip(want, got):
        np.testing.assert_array_equal(o, w)


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16", "float16"])
@pytest.mark.parametrize("name", ["hardswish", "hardsigmoid"])
def test_hard_activations_bit_for_bit(name, dtype):
    """``hardswish`` and ``hardsigmoid``: ATen's forward (``x * min(max(x + 3, 0), 6) / 6``) and
    backward kernels (``grad * (1.0f / 6.0f)``, ``grad * (x / 3 + 0.5)``), with their bounds, a
    NaN input and infinite ones."""
    rs = np.random.RandomState(0)
    edges = [-3.0, 3.0, -3.0000001, 2.9999999, np.nan, np.inf, -np.inf, 0.0, -0.0, 1e30]
    x = np.concatenate([rs.randn(5000) * 3, edges])
    g = rs.randn(x.size)
    g[-3] = np.nan

    def run(m):
        t = m.tensor(x, dtype=getattr(m, dtype), requires_grad=True)
        y = getattr(m.nn.functional, name)(t)
        y.backward(m.tensor(g, dtype=getattr(m, dtype)))
        return y.detach().double().numpy(), t.grad.double().numpy()

    for want, got in zip(run(torch), run(leafgrad)):
        np.testing.assert_array_equal(got, want)


def test_seed_266_zero_gradient_laid_out_as_the_gradient():
    """``RoundBackward0``'s ``zeros_like(grad)`` under create_graph keeps the layout of the
    expanded gradient of a one-element sum (strides 0)."""
    check(
        [
            ("new", "float32", 0, False, 0),
            ("new", "float32", 1, True, 0),
            ("disc", "round", 1, 0, 2.0),
            ("grad", 2, (1,), False, False, True),
        ]
    )


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("keepdim", [False, True])
def test_two_norm_gradient_bit_for_bit(dtype, keepdim):
    """``LinalgVectorNormBackward0`` of ord 2 is ``grad * (self / norm)`` (0 at a zero norm),
    bit for bit where the norms agree."""
    rs = np.random.RandomState(1)
    a = rs.randn(60, 50)
    a[3] = 0

    def run(m):
        x = m.tensor(a, dtype=getattr(m, dtype), requires_grad=True)
        n = m.linalg.vector_norm(x, dim=1, keepdim=keepdim)
        n.backward(m.tensor(rs.randn(*n.shape), dtype=getattr(m, dtype)))
        return n.detach().numpy().reshape(-1), x.grad.numpy()

    state = rs.get_state()
    want_norm, want = run(torch)
    rs.set_state(state)
    got_norm, got = run(leafgrad)
    same = got_norm == want_norm
    assert same.sum() > 20
    np.testing.assert_array_equal(got[same], want[same])
