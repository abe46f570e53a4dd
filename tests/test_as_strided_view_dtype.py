"""``as_strided`` and ``view(dtype)`` against PyTorch: values, strides, storage offsets, storage
sharing (writes through either side, the shared version counter), grad_fn names, gradients
(``as_strided_backward``: overlapping layouts accumulate, shared input elements split the
gradient, positions outside the input get none) and error texts."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import leafgrad as lg

MODULES = (torch, lg)


def arr(t):
    if isinstance(t, torch.Tensor):
        t = t.detach()
        if t.dtype == torch.bfloat16:
            t = t.float()
        return t.resolve_conj().numpy()
    t = t.detach()
    if t.dtype == lg.bfloat16:
        t = t.float()
    return np.asarray(t._data)


def meta(t):
    fn = t.grad_fn
    return (
        tuple(t.shape),
        t.stride(),
        t.storage_offset(),
        None if fn is None else type(fn).__name__,
        t.requires_grad,
        t.is_leaf,
        t._base is not None,
    )


def same(fn):
    """``fn(m)`` in both modules: equal metadata and values, or the same error."""
    out = []
    for m in MODULES:
        try:
            out.append(("ok", fn(m)))
        except Exception as e:  # noqa: BLE001 - compared below
            out.append(("err", (type(e).__name__, str(e))))
    (kt, t), (kl, lv) = out
    assert kt == kl, (t, lv)
    if kt == "err":
        assert t == lv
        return None
    ts = t if isinstance(t, tuple) else (t,)
    ls = lv if isinstance(lv, tuple) else (lv,)
    for a, b in zip(ts, ls):
        if isinstance(a, torch.Tensor):
            assert meta(a) == meta(b)
            np.testing.assert_array_equal(arr(b), arr(a))
        else:
            assert a == b
    return t, lv


# --- as_strided -------------------------------------------------------------------------------

# (base -> input, size, stride, storage_offset)
STRIDED = {
    "plain": (lambda b: b, (3, 2), (2, 1), 1),
    "default_offset": (lambda b: b[2:], (2, 2), (3, 1), None),
    "transposed_layout": (lambda b: b, (3, 2), (1, 3), None),
    "overlapping": (lambda b: b, (3, 3), (1, 1), None),
    "stride0": (lambda b: b, (2, 3), (0, 2), 1),
    "outside_input": (lambda b: b[2:5], (4,), (1,), 0),
    "expanded_input": (lambda b: b[:3].expand(2, 3), (4,), (1,), None),
    "of_transpose": (lambda b: b.view(3, 4).t(), (2, 2), (4, 1), 2),
    "chained": (lambda b: b.as_strided((4,), (2,), 1), (3,), (3,), None),
    "scalar": (lambda b: b, (), (), 5),
    "empty": (lambda b: b, (0, 3), (3, 1), 0),
}


@pytest.mark.parametrize("name", STRIDED)
def test_as_strided_forward_backward(name):
    make, size, stride, offset = STRIDED[name]
    grads = []
    for m in MODULES:
        x = m.arange(12.0, dtype=m.float64).requires_grad_()
        base = x * 1
        y = make(base).as_strided(size, stride, offset)
        # gradient with distinct values per element
        g = m.arange(1.0, float(y.numel()) + 1, dtype=m.float64).reshape(size)
        (gx,) = m.autograd.grad(y, x, g)
        grads.append((y, gx, y._base is base))
    (ty, tg, tb), (ly, lgx, lb) = grads
    assert meta(ly) == meta(ty) and lb == tb
    np.testing.assert_array_equal(arr(ly), arr(ty))
    np.testing.assert_allclose(arr(lgx), arr(tg), rtol=1e-12)


def test_as_strided_function_and_keywords():
    same(lambda m: m.as_strided(m.arange(12.0), (2, 2), (1, 1), storage_offset=3))
    same(lambda m: m.arange(12.0).as_strided(size=[2, 2], stride=[1, 1], storage_offset=3))
    same(lambda m: m.arange(12.0).view(3, 4)[1].as_strided((2,), (2,)))


def test_as_strided_shares_storage():
    for m in MODULES:
        z = m.zeros(3, 4)
        v = z.as_strided((2, 2), (1, 4), 1)
        v.add_(m.tensor([[1.0, 2.0], [3.0, 4.0]]))
        z[0, 1] += 10
        w = z.as_strided((2,), (5,))
        w.fill_(7)
        if m is torch:
            ref = (arr(z), arr(v), arr(w), z._version, v._version, w._version)
        else:
            got = (arr(z), arr(v), arr(w), z._version, v._version, w._version)
    for a, b in zip(ref, got):
        np.testing.assert_array_equal(b, a)


def test_as_strided_overlapping_writes():
    # a uniform write through an overlapping view is PyTorch's; others are refused (leafgrad
    # writes a shared element once, PyTorch once per element that refers to it)
    for m in MODULES:
        z = m.zeros(3, 4)
        z.as_strided((2, 2), (1, 1)).fill_(2)
        if m is torch:
            ref = arr(z)
        else:
            np.testing.assert_array_equal(arr(z), ref)
    with pytest.raises(NotImplementedError, match="as_strided"):
        lg.zeros(3, 4).as_strided((2, 2), (1, 1)).mul_(lg.ones(2, 2))
    same(lambda m: m.zeros(3, 4).as_strided((2, 2), (0, 1)).add_(1))


def test_as_strided_inplace_on_view_backward():
    out = []
    for m in MODULES:
        # small values: the sum's sample for the numerical VJP check (conftest.py) stays accurate
        x = (m.arange(12.0, dtype=m.float64) / 12).requires_grad_()
        b = x * 2
        v = b.as_strided((2, 3), (4, 1), 1)
        v.mul_(v.detach() + 1)
        (b * b).sum().backward()
        out.append((arr(x.grad), b.grad_fn.name() if m is lg else b.grad_fn.name(), meta(v)))
    (tg, tn, tm), (lgr, ln, lm) = out
    np.testing.assert_allclose(lgr, tg)
    assert ln == tn and lm == tm


def test_as_strided_base_written_regenerates_grad_fn():
    out = []
    for m in MODULES:
        x = m.arange(6.0, dtype=m.float64).requires_grad_()
        b = x * 1
        v = b.as_strided((2,), (2,), 1)
        b.mul_(3)
        (gx,) = m.autograd.grad(v.sum(), x)
        out.append((meta(v), arr(v), arr(gx)))
    assert out[0][0] == out[1][0]
    np.testing.assert_array_equal(out[1][1], out[0][1])
    np.testing.assert_array_equal(out[1][2], out[0][2])


@pytest.mark.parametrize(
    "args",
    [
        ((2, 3), (1, -1), None),
        ((2, 3), (1,), None),
        ((2, -3), (1, 1), None),
        ((2, 3), (1, 1), -1),
        ((4, 4), (4, 1), None),
        ((4, 4), (4, 1), 1),
        ((2, 2), (1, 1), 11),
    ],
)
def test_as_strided_errors(args):
    same(lambda m: m.randn(12).as_strided(*args))


def test_as_strided_argument_errors():
    same(lambda m: m.randn(12).as_strided(2, 1))
    same(lambda m: m.randn(12).as_strided((2, 2)))
    same(lambda m: m.randn(12).as_strided((2.0, 2), (1, 1)))


def test_as_strided_complex_and_real_views():
    def fn(m):
        c = m.tensor([1 + 2j, 3 - 4j, 5 + 6j], dtype=m.complex64)
        r = m.view_as_real(c).as_strided((2,), (1,), 1)
        r.mul_(10)
        k = c.conj().as_strided((2,), (1,))
        return r, c, k, k.is_conj()

    same(fn)


def test_as_strided_views_of_result():
    def fn(m):
        x = m.arange(6.0).reshape(2, 3)
        a = x.as_strided((3, 2), (1, 3))
        return a, a.t(), a.contiguous().view(6), a.is_contiguous(), a.t().is_contiguous()

    same(fn)


# --- view(dtype) -------------------------------------------------------------------------------

DTYPES = ["float32", "float64", "float16", "bfloat16", "int32", "int8", "uint8", "int64",
          "complex64", "bool", "int16"]  # fmt: skip


@pytest.mark.parametrize("to", DTYPES)
def test_view_dtype_values(to):
    def fn(m):
        x = m.tensor([[1.5, -2.0, 3.25, 0.0], [7.0, -0.5, 1e-3, 2.0]])
        return x.view(getattr(m, to))

    same(fn)


def test_view_dtype_from_other_dtypes():
    same(lambda m: m.tensor([1 + 2j, 3 - 4j], dtype=m.complex64).view(m.float32))
    same(lambda m: m.tensor([1 + 2j, 3 - 4j], dtype=m.complex64).view(m.float64))
    same(lambda m: m.tensor([True, False, True, True]).view(m.int8))
    same(lambda m: m.tensor([1, 0, 1], dtype=m.uint8).view(m.bool))
    same(lambda m: m.tensor(1.0).view(m.int32))
    same(lambda m: m.zeros(0).view(m.float64))
    same(lambda m: m.zeros(4).view(dtype=m.int32))
    same(lambda m: m.arange(8.0)[2:6].view(m.float64))
    same(lambda m: m.arange(16.0).view(4, 4)[:, :2].view(m.float64))
    same(lambda m: m.arange(8.0).view(2, 4)[:, 1:].view(m.float16))
    same(lambda m: m.arange(9.0).view(3, 3).t().view(m.int32))


@pytest.mark.parametrize(
    "fn",
    [
        lambda m: m.zeros(3, 3).view(m.float64),
        lambda m: m.zeros(3, 3).t().view(m.float16),
        lambda m: m.zeros(3, 3)[:, :2].view(m.float64),
        lambda m: m.zeros(3, 3)[:, 1:3].view(m.float64),
        lambda m: m.zeros(16)[1::2][:4].view(m.float64),
        lambda m: m.zeros(8)[::2].view(m.float64),
        lambda m: m.zeros(2, 0).view(m.float64),
        lambda m: m.tensor(1.0).view(m.float16),
        lambda m: m.tensor(1.0).view(m.float64),
        lambda m: m.tensor([1j], dtype=m.complex64).conj().view(m.float32),
        lambda m: m.tensor([1j], dtype=m.complex64).conj().view(m.complex64),
        lambda m: m.tensor([1j], dtype=m.complex64).conj().imag.view(m.int32),
    ],
)
def test_view_dtype_errors(fn):
    same(fn)


def test_view_dtype_not_differentiable():
    def fn(m):
        x = m.randn(2, 4, requires_grad=True)
        b = x * 1
        return x.view(m.int32), x.view(m.float32), b.view(m.float16), b.view(m.float64)

    same(lambda m: tuple(meta(t) for t in fn(m)))


def test_view_dtype_shares_storage_and_version():
    out = []
    for m in MODULES:
        y = m.zeros(2, 4)
        u = y.view(m.float16)
        u[0, 1] = 1.0
        y[1] = 3.0
        i = y.view(m.int32)
        i.add_(1)
        w = u[1].view(m.float32)
        out.append((arr(y), arr(u), arr(i), arr(w), y._version, u._version, i._version, w._version))
    for a, b in zip(*out):
        np.testing.assert_array_equal(b, a)


def test_view_dtype_inplace_breaks_saved_base():
    out = []
    for m in MODULES:
        x = m.ones(4, requires_grad=True)
        b = x.exp()
        b.view(m.int32).add_(1)
        with pytest.raises(RuntimeError) as info:
            b.sum().backward()
        out.append(str(info.value))
        b2 = x * 2
        b2.view(m.float16).mul_(2)
        b2.sum().backward()
        out.append(arr(x.grad).tolist())
    assert out[:2] == out[2:]


def test_view_dtype_of_inference_tensor():
    def fn(m):
        with m.inference_mode():
            i = m.ones(4)
            inner = i.view(m.int32).is_inference()
        v = i.view(m.int32)
        return inner, v.is_inference(), v._version

    same(fn)


# --- roots laid out other than in order: storage positions name the elements laid out there ---

PERMUTED_ROOTS = {
    "permute_clone": lambda m: m.arange(24.0).reshape(2, 3, 4).permute(2, 0, 1).clone(),
    "empty_strided": lambda m: m.empty_strided((3, 4), (1, 3)).copy_(m.arange(12.0).reshape(3, 4)),
    "transpose_clone": lambda m: m.arange(24.0).reshape(2, 3, 4).transpose(1, 2).clone(),
    "size_one_dims": lambda m: m.arange(6.0).reshape(1, 2, 3).transpose(0, 2).clone(),
}


@pytest.mark.parametrize("graph", [False, True])
@pytest.mark.parametrize("root", PERMUTED_ROOTS)
def test_as_strided_of_a_root_laid_out_permuted(root, graph):
    """Reads, writes through the view (CopySlices when the root has a graph), views of views of
    such a root and the root's gradient."""

    def fn(m):
        leaf = PERMUTED_ROOTS[root](m).requires_grad_()
        b = leaf * 1 if graph else leaf.detach().clone()
        v = b.as_strided((2, 3), (2, 1), 1)
        vv = b.transpose(0, -1).as_strided((2, 2), (1, 5), 3)
        read = v.detach().clone(), vv.detach().clone()
        b.as_strided((3,), (4,), 2).mul_(10)
        out = (*read, b, v, vv, b.stride(), v.stride(), vv.storage_offset())
        if graph:
            ((v * v).sum() + 2 * (vv * vv * vv).sum() + (b * b).sum()).backward()
            out += (leaf.grad,)
        return out

    same(fn)


def test_copy_slices_create_graph_of_a_permuted_view():
    """Fuzz seed 133: a base laid out as a transposed tensor, written through a view, backward
    with create_graph (CopySlices makes the base's gradient with ``new_empty_strided`` in the
    base's layout and ``as_strided``-s the view's part out of it)."""

    def fn(m):
        x = m.tensor([[1.0, -2, 3], [-4, 5, -6]], requires_grad=True)
        y = x.T.abs()
        y[0] = 1.5
        (g,) = m.autograd.grad(y.pow(2).sum(), x, create_graph=True)
        (gg,) = m.autograd.grad(g.pow(2).sum(), x)
        # (PyTorch's gradients here are views of transposed gradients; leafgrad's are not)
        return g.detach().clone(), gg.clone(), type(g.grad_fn).__name__, g.stride()

    same(fn)


# --- create_graph: PyTorch's as_strided_backward, recorded ---------------------------------------

X12 = np.random.default_rng(5).uniform(0.2, 1.2, (12,))


def _sq(y):
    return y * y


GRAPH_CASES = {
    "overlapping_output": lambda m, x: _sq(x.sin().as_strided((3, 3), (1, 1))),
    "stride0_size1": lambda m, x: _sq(x.sin().as_strided((2, 1, 3), (0, 5, 2), 1)),
    "overlapping_input": lambda m, x: _sq(x.sin()[:3].expand(2, 3).as_strided((4,), (1,))),
    "outside_input": lambda m, x: _sq(x.sin()[2:5].as_strided((4,), (1,), 0)),
}


@pytest.mark.parametrize("name", GRAPH_CASES)
def test_as_strided_create_graph(name):
    from formula_check import check_graph

    check_graph(GRAPH_CASES[name], X12, order=2)


def _strided_mul(m, x):
    b = x * 2
    b.as_strided((2, 2), (4, 1), 1).mul_(x[:2, :2])
    return (b * b * b).sum()


def test_copy_slices_higher_derivatives():
    # the base's gradient reads the view through ``view_chain_gather``, whose formula is
    # as_strided_backward: first and second derivatives against torch
    x0 = np.random.default_rng(1).uniform(0.2, 1.2, (3, 4))
    out = []
    for m in MODULES:
        x = m.tensor(x0, requires_grad=True)
        (g,) = m.autograd.grad(_strided_mul(m, x), x, create_graph=True)
        (h,) = m.autograd.grad((g * g).sum(), x)
        out.append([arr(t) for t in (g, h)])
    for a, b in zip(*out):
        np.testing.assert_allclose(b, a, rtol=1e-9)


def test_under_jit():
    import jax
    import jax.numpy as jnp

    def step(m, a):
        x = m.tensor(a, requires_grad=True)
        b = x * 1
        y = b.as_strided((3, 3), (1, 1), 2)  # overlapping, outside nothing
        b.view(m.int32).view(m.float32)[0] = 5.0  # written through a dtype view
        loss = (y * y).sum() + b.sum()
        loss.backward()
        return loss, x.grad, b.view(m.int32)

    a = np.linspace(0.1, 1.2, 12, dtype=np.float32)

    def traced(arr):
        loss, grad, bits = step(lg, arr)
        return loss._data, grad._data, bits._data

    eager = [arr(t) for t in step(lg, a)]  # (eagerly first: the VJP check's samples are eager)
    got = jax.jit(traced)(jnp.asarray(a))
    ref = [arr(t) for t in step(torch, a)]
    for g, e, r in zip(got, eager, ref):
        np.testing.assert_allclose(np.asarray(g), r, rtol=1e-6)
        np.testing.assert_allclose(e, r, rtol=1e-6)


# --- as_strided_scatter ------------------------------------------------------------------------

# Note [as_strided_scatter gradients] in leafgrad/ops/shape.py: PyTorch's gradient for ``self``
# is not the derivative (it is the gradient at the written positions), so the numerical VJP check
# of conftest.py cannot apply; it is checked against torch here.


@pytest.mark.parametrize(
    "args",
    [((3, 2), (3, 1), 1), ((4,), (1,), None), ((2, 2), (1, 4), 2), ((), (), 7)],
)
def test_as_strided_scatter(args):
    size = args[0]
    out = []
    for m in MODULES:
        x = m.arange(12.0, dtype=m.float64).requires_grad_()
        s = (m.arange(float(np.prod(size, dtype=int))) + 100).to(m.float64).requires_grad_()
        y = m.as_strided_scatter(x * 1, s.view(size), *args)
        g = m.arange(1.0, 13.0, dtype=m.float64)
        gx, gs = m.autograd.grad(y, (x, s), g)
        out.append((meta(y), arr(y), arr(gx), arr(gs)))
    assert out[0][0] == out[1][0]
    for a, b in zip(out[0][1:], out[1][1:]):
        np.testing.assert_array_equal(b, a)


def test_as_strided_scatter_offset_input_gradients():
    # PyTorch's backward reads the contiguous gradient at the given offset (0 when none), not at
    # the input's own storage offset
    def fn(m, off):
        x = m.arange(12.0, dtype=m.float64, requires_grad=True)
        s = m.tensor([100.0, 200.0], dtype=m.float64, requires_grad=True)
        y = m.as_strided_scatter((x * 1)[2:], s, (2,), (3,), off)
        g = m.autograd.grad(y, (x, s), m.arange(1.0, 11.0, dtype=m.float64))
        return y.tolist(), [t.tolist() for t in g]

    for off in (None, 4):
        assert fn(lg, off) == fn(torch, off)


@pytest.mark.parametrize(
    "fn",
    [
        lambda m: m.as_strided_scatter(m.arange(12.0), m.zeros(3), (4,), (1,)),
        lambda m: m.arange(12.0).as_strided_scatter(m.zeros(4), (4,), (1,), 10),
        lambda m: m.arange(12.0).as_strided_scatter(m.zeros(4, dtype=m.float64), (4,), (1,)),
        lambda m: m.arange(12.0).view(3, 4).t().as_strided_scatter(m.zeros(4), (4,), (1,)),
        # (values only: PyTorch's result keeps the input's storage offset, leafgrad's is 0)
        lambda m: m.arange(12.0)[2:].as_strided_scatter(m.zeros(4), (4,), (1,)).tolist(),
        lambda m: m.arange(12.0)[2:].as_strided_scatter(m.zeros(4), (2,), (3,), 1).tolist(),
        lambda m: m.arange(12.0)[::2].as_strided_scatter(m.zeros(3), (3,), (3,)).tolist(),
        lambda m: m.arange(3.0).expand(2, 3).as_strided_scatter(m.zeros(2), (2,), (2,), 1),
        lambda m: m.arange(12.0).as_strided_scatter(m.zeros(2, 2), (4,), (1,)),
        lambda m: m.arange(12.0).as_strided_scatter(m.zeros(2, 3), (2, 3), (1, -1)),
        lambda m: (
            (m.arange(12.0, requires_grad=True) * 1)
            .view(3, 4)
            .t()
            .as_strided_scatter(m.zeros(4), (4,), (1,))
        ),
    ],
)
def test_as_strided_scatter_values_and_errors(fn):
    same(fn)


def test_as_strided_inplace():
    def fn(m):
        x = m.arange(12.0, requires_grad=True)
        b = x * 1
        r = b.as_strided_((2, 2), (1, 3), 1)
        b.sum().backward()
        v = (x * 1)[2:]
        v.as_strided_((2,), (1,), 0)
        z = m.zeros(6)
        w = z[1:]
        m.as_strided_(w, (2,), (2,))
        w.add_(1)
        return r is b, b, b._version, x.grad, v, z, w, z._version

    same(fn)
    same(lambda m: m.arange(12.0, requires_grad=True).as_strided_((2,), (1,)))
