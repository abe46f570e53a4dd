"""Differential tests of the layout ops (leafgrad/ops/layout_ops.py) against PyTorch 2.13.

``unfold`` (a view), ``rot90``, ``block_diag``, ``meshgrid``, ``cartesian_prod``, ``combinations``,
``atleast_{1,2,3}d``, ``tril_indices``/``triu_indices``, ``vander``, ``chain_matmul`` and the
deprecated ``cholesky``: values, dtypes, strides, views, ``grad_fn`` graphs, gradients (backward
and ``autograd.grad``), a second backward, in-place writes and PyTorch's errors and warnings.
"""

from __future__ import annotations

import jax
import numpy as np
import pytest
import torch
from conftest import Raised, both, call, lg


def _values(shape, dtype, seed=0):
    v = np.random.default_rng(seed).integers(-9, 10, size=shape)
    if dtype == "bool":
        return v > 0
    if dtype.startswith(("float", "complex")):
        return v / 4
    return v


def _t(m, shape, dtype="float32", seed=0, grad=True):
    if 0 in shape:  # (torch.tensor gives an empty array strides of 0)
        t = m.zeros(shape, dtype=getattr(m, dtype))
    else:
        t = m.tensor(_values(shape, dtype, seed), dtype=getattr(m, dtype))
    if dtype.startswith("complex"):
        t = t * (1 + 0.5j)
    return t.requires_grad_() if grad and dtype.startswith(("float", "complex")) else t


def _graph(t, depth=8):
    """The names of the graph under ``t.grad_fn``, depth first (``None`` edges kept)."""
    out = []

    def walk(f, d):
        if f is None:
            out.append((d, None))
            return
        out.append((d, f.name()))
        if d < depth:
            for g, _ in f.next_functions:
                walk(g, d + 1)

    if t.grad_fn is not None:
        walk(t.grad_fn, 0)
    return out


def _facts(t):
    return (tuple(t.shape), t.stride(), t.is_contiguous(), t._base is not None, _graph(t))


def _grads(m, fn, *xs):
    """Output, its facts, the gradients of a weighted sum (backward and autograd.grad) and what
    a second backward without retain_graph does."""
    out = fn(m, *xs)
    outs = out if isinstance(out, (tuple, list)) else (out,)
    res = {"out": out, "facts": [_facts(o) for o in outs]}
    diff = [o for o in outs if o.requires_grad]
    if not diff:
        return res
    total = 0
    for o in diff:
        w = m.arange(1, o.numel() + 1, dtype=m.float64).reshape(tuple(o.shape)) / 8
        weighted = o * w.to(o.dtype)
        total = total + (weighted.real if o.is_complex() else weighted).sum()
    leaves = [x for x in xs if isinstance(x, m.Tensor) and x.requires_grad]
    res["agrad"] = m.autograd.grad(total, leaves, retain_graph=True, allow_unused=True)
    total.backward()
    res["grads"] = [x.grad for x in leaves]
    try:
        total.backward()
        res["second"] = "ok"
    except RuntimeError as e:
        res["second"] = str(e).split("\n")[0]
    return res


# --- unfold ------------------------------------------------------------------------------------


def _unfold_case(m, shape, d, size, step, dtype):
    return _grads(m, lambda m, x: x.unfold(d, size, step), _t(m, shape, dtype))


def test_unfold_values_strides_views():
    cases = [
        ((3, 4), 1, 2, 1),
        ((3, 4), 0, 2, 1),
        ((3, 4), -1, 3, 2),
        ((5,), 0, 2, 2),
        ((10,), 0, 3, 3),
        ((2, 3, 4), 1, 2, 1),
        ((0, 3), 0, 0, 1),
        ((), 0, 1, 1),
        ((), -1, 0, 1),
    ]
    for shape, d, size, step in cases:
        both(lambda m, c=(shape, d, size, step): _unfold_case(m, *c, "float32"))
    for dtype in ("float64", "int64", "bool", "complex64"):
        both(lambda m, dtype=dtype: _unfold_case(m, (3, 4), 1, 2, 1, dtype))
    # non-contiguous inputs and a window of windows
    both(lambda m: _grads(m, lambda m, x: x.t().unfold(0, 2, 1), _t(m, (3, 4))))
    both(lambda m: _grads(m, lambda m, x: x[:, ::2].unfold(1, 2, 2), _t(m, (3, 8))))
    both(lambda m: _grads(m, lambda m, x: x.unfold(1, 2, 1).unfold(0, 2, 1), _t(m, (3, 4))))
    both(lambda m: _grads(m, lambda m, x: x.expand(3, 4).unfold(1, 2, 2), _t(m, (4,))))
    both(lambda m: _grads(m, lambda m, x: (x * 2).unfold(0, 2, 1).sum(-1), _t(m, (5,))))
    both(lambda m: _t(m, (3, 4)).unfold(0, 2, 1).unfold(2, 1, 1).reshape(-1).shape)


def test_unfold_writes_and_versions():
    def write_no_grad(m):
        x = m.arange(12.0).reshape(3, 4)
        u = x.unfold(1, 2, 2)
        u[1, 0, 1] = 100.0
        u.mul_(2)
        return x, u, x._version, u._version, u._base is x

    def write_grad(m):
        a = _t(m, (3, 4))
        y = a * 1
        u = y.unfold(1, 2, 2)
        u.mul_(3)
        return _grads(m, lambda m, a: y * a, a), u.grad_fn.name(), y._version

    def leaf_view_inplace(m):
        return _t(m, (6,)).unfold(0, 2, 2).mul_(2)

    def saved_then_written(m):
        a = _t(m, (6,))
        y = a.exp()
        u = y.unfold(0, 3, 3)
        z = u.sum()
        y.add_(1)  # exp saved its result: the write is seen through the view's base
        z.backward()
        return a.grad

    def no_grad_view(m):
        a = _t(m, (6,))
        with m.no_grad():
            u = a.unfold(0, 2, 2)
        return u.requires_grad, u.grad_fn, u._base is a

    for fn in (write_no_grad, write_grad, leaf_view_inplace, saved_then_written, no_grad_view):
        both(fn)


def test_unfold_errors():
    bad = [
        lambda x: x.unfold(0, 4, 1),
        lambda x: x.unfold(1, 5, 1),
        lambda x: x.unfold(0, 2, 0),
        lambda x: x.unfold(0, 2, -1),
        lambda x: x.unfold(0, -1, 1),
        lambda x: x.unfold(2, 1, 1),
        lambda x: x.unfold(-3, 1, 1),
        lambda x: x.unfold(0, 2.0, 1),
        lambda x: x.unfold(0, 2, True),
        lambda x: x[0, 0].unfold(0, 2, 1),
        lambda x: x[0, 0].unfold(1, 1, 1),
        lambda x: x[0, 0].unfold(0, 1, 0),
    ]
    for f in bad:
        both(lambda m, f=f: f(_t(m, (3, 4))))
    both(lambda m: hasattr(m, "unfold"))


# --- rot90 -------------------------------------------------------------------------------------


def test_rot90():
    for k, dims in ((0, [0, 1]), (1, (1, 0)), (2, [-1, 0]), (3, [0, 2]), (-1, [2, 1]), (6, [0, 1])):
        both(lambda m, c=(k, dims): _grads(m, lambda m, x: m.rot90(x, *c), _t(m, (2, 3, 4))))
    # strides: PyTorch's flip keeps a dense input's strides, then transposes them for odd k
    for k in (0, 1, 2, -5):
        both(lambda m, k=k: _facts(_t(m, (3, 4)).t().rot90(k)))
        both(lambda m, k=k: _facts(_t(m, (3, 1)).expand(3, 4).rot90(k)))
    for dtype in ("int64", "bool", "complex64", "float64"):
        both(lambda m, dtype=dtype: _facts(_t(m, (3, 4), dtype).rot90()))
    both(lambda m: _grads(m, lambda m, x: m.rot90(x, dims=(1, 2)), _t(m, (0, 3, 4))))
    both(lambda m: (lambda r: (r._version, r is None))(m.rot90(_t(m, (2, 2)), 1)))
    bad = [
        lambda m, x: m.rot90(x, 1, [0]),
        lambda m, x: m.rot90(x, 1, [0, 1, 2]),
        lambda m, x: m.rot90(x, 1, [0, 0]),
        lambda m, x: m.rot90(x, 1, [0, -3]),
        lambda m, x: m.rot90(x, 1, [0, 5]),
        lambda m, x: m.rot90(x, 0, [5, -5]),
        lambda m, x: m.rot90(x, 1, [-4, 0]),
        lambda m, x: m.rot90(x[0, 0], 1),
        lambda m, x: m.rot90(x[0, 0, 0], 1),
        lambda m, x: m.rot90(x, 1.5),
        lambda m, x: m.rot90(x, 1, 0),
    ]
    for f in bad:
        both(lambda m, f=f: f(m, _t(m, (2, 3, 4))))


# --- block_diag ----------------------------------------------------------------------------------


def test_block_diag():
    both(
        lambda m: _grads(
            m,
            lambda m, a, b, c: m.block_diag(a, b, c),
            _t(m, (2, 3)),
            _t(m, (3,), seed=1),
            _t(m, (), seed=2),
        )
    )
    both(lambda m: _grads(m, lambda m, a: m.block_diag(a), _t(m, (2, 3))))
    both(lambda m: _grads(m, lambda m, a: m.block_diag(a.t()), _t(m, (2, 3))))
    # mixed dtypes: the result promotes, each gradient keeps its input's dtype
    both(
        lambda m: _grads(
            m,
            lambda m, a, b, c: m.block_diag(a, b, c),
            _t(m, (2, 2)),
            _t(m, (3,), "float64", 1),
            _t(m, (1, 2), "int64", 2),
        )
    )
    both(lambda m: m.block_diag(_t(m, (2, 2), "int64"), _t(m, (2,), "bool")))
    both(lambda m: m.block_diag(_t(m, (2,), "bool"), _t(m, (1,), "bool", 1)))
    both(lambda m: m.block_diag(_t(m, (2,), "complex64"), _t(m, (1, 2))))
    both(lambda m: m.block_diag(m.zeros(0, 3), m.ones(2, 0), m.zeros(0)))
    both(lambda m: _grads(m, lambda m, a: m.block_diag(a, m.zeros(0, 2)), _t(m, (2, 1))))
    both(lambda m: m.block_diag())
    both(lambda m: (m.set_default_dtype(m.float64), m.block_diag())[1])
    both(lambda m: m.block_diag(_t(m, (2, 2)))._version)
    both(lambda m: m.block_diag(_t(m, (2, 2)), _t(m, (2, 2, 2))))
    both(lambda m: m.block_diag([_t(m, (2, 2))]))
    both(lambda m: m.block_diag(_t(m, (2, 2)), 1.0))
    # torch here has no CUDA: leafgrad's virtual cuda device gives PyTorch's message
    with pytest.raises(RuntimeError) as e:
        lg.block_diag(_t(lg, (2, 2)), _t(lg, (2,)).to("cuda"))
    assert str(e.value) == (
        "torch.block_diag: input tensors must all be on the same device. Input 0 is on device cpu "
        "and input 1 is on device cuda:0"
    )


# --- meshgrid, cartesian_prod, combinations ----------------------------------------------------


def test_meshgrid():
    def grids(indexing, *shapes, dtype="float32"):
        def run(m):
            xs = [_t(m, s, dtype, i) for i, s in enumerate(shapes)]
            kw = {} if indexing is None else {"indexing": indexing}
            return _grads(m, lambda m, *xs: m.meshgrid(*xs, **kw), *xs)

        return run

    for indexing in (None, "ij", "xy"):
        both(grids(indexing, (2,), (3,)))
    both(grids("xy", (), (2,), (3,)))
    both(grids("ij", (2,)))
    both(grids("xy", (2,)))
    both(grids("xy", (2,), (0,), (3,), dtype="int64"))
    both(lambda m: m.meshgrid([_t(m, (2,)), _t(m, (3,))], indexing="xy"))
    both(lambda m: m.meshgrid((_t(m, (2,)), _t(m, (3,))), indexing="ij"))
    both(lambda m: m.meshgrid(_t(m, (2,)), indexing=None))
    both(lambda m: [g.stride() for g in m.meshgrid(_t(m, (2,)), _t(m, (3,)), indexing="xy")])
    bad = [
        lambda m: m.meshgrid(indexing="xy"),
        lambda m: m.meshgrid(_t(m, (2,)), _t(m, (2,), "float64"), indexing="ij"),
        lambda m: m.meshgrid(_t(m, (2,)), indexing="foo"),
        lambda m: m.meshgrid(_t(m, (2,)), m.zeros(2, 2), indexing="ij"),
        lambda m: m.meshgrid(m.arange(6).reshape(2, 3) - 2, indexing="xy"),
        lambda m: m.meshgrid(m.tensor([[1.5, 2.25], [3.0, 40.0]]), indexing="ij"),
        lambda m: m.meshgrid(m.ones(2, 3, 1, 2, dtype=m.bool), indexing="ij"),
        lambda m: m.meshgrid(m.ones(2, 2, 2, dtype=m.float64), indexing="ij"),
        lambda m: m.meshgrid(m.zeros(2, 0), indexing="ij"),
        lambda m: m.meshgrid(_t(m, (2,)), 1.0, indexing="ij"),
    ]
    for f in bad:
        both(f)
    with pytest.raises(
        RuntimeError, match="^meshgrid expects all tensors to have the same device$"
    ):
        lg.meshgrid(_t(lg, (2,)), _t(lg, (2,)).to("cuda"), indexing="ij")


def test_cartesian_prod_and_combinations():
    both(
        lambda m: _grads(
            m, lambda m, a, b: m.cartesian_prod(a, b), _t(m, (2,)), _t(m, (3,), seed=1)
        )
    )
    both(
        lambda m: _grads(
            m, lambda m, a, b, c: m.cartesian_prod(a, b, c), _t(m, (2,)), _t(m, (1,)), _t(m, (3,))
        )
    )
    both(lambda m: (lambda a: m.cartesian_prod(a) is a)(_t(m, (3,))))
    both(lambda m: m.cartesian_prod([_t(m, (2,), "int64"), _t(m, (0,), "int64")]))
    both(lambda m: m.cartesian_prod(_t(m, (2,), "bool"), _t(m, (2,), "bool", 1)))
    for r, rep in ((2, False), (3, True), (1, False), (5, False)):
        both(lambda m, c=(r, rep): _grads(m, lambda m, x: m.combinations(x, *c), _t(m, (4,))))
    both(lambda m: m.combinations(_t(m, (3,), "int64")))
    both(lambda m: m.combinations(_t(m, (3,), "bool"), with_replacement=True))
    both(lambda m: m.combinations(_t(m, (0,)), 2))
    both(lambda m: m.combinations(_t(m, (0,)), 0))
    bad = [
        lambda m: m.cartesian_prod(_t(m, (2,)), m.tensor([1, 2])),
        lambda m: m.cartesian_prod(m.zeros(2, 2)),
        lambda m: m.cartesian_prod(),
        lambda m: m.cartesian_prod(m.tensor(1.0)),
        lambda m: m.combinations(_t(m, (3,)), -1),
        lambda m: m.combinations(m.ones(2, 2)),
        lambda m: m.combinations(m.tensor(1.0)),
        lambda m: m.combinations(_t(m, (3,)), 2.0),
    ]
    for f in bad:
        both(f)


# --- atleast_nd --------------------------------------------------------------------------------


def test_atleast():
    for n in (1, 2, 3):
        name = f"atleast_{n}d"
        for shape in ((), (2,), (2, 3), (2, 1, 3), (0,)):
            both(
                lambda m, name=name, shape=shape: _grads(
                    m, lambda m, x: getattr(m, name)(x), _t(m, shape)
                )
            )
            both(
                lambda m, name=name, shape=shape: (lambda x: getattr(m, name)(x) is x)(
                    _t(m, shape, "int64")
                )
            )
        both(lambda m, name=name: getattr(m, name)(_t(m, ()), _t(m, (2,))))
        both(lambda m, name=name: getattr(m, name)([_t(m, ()), _t(m, (2, 2))]))
        both(lambda m, name=name: getattr(m, name)((_t(m, (2,)),)))
        both(lambda m, name=name: getattr(m, name)())
        both(lambda m, name=name: getattr(m, name)(1.0))
        both(lambda m, name=name: getattr(m, name)([1.0]))
        both(lambda m, name=name: getattr(m, name)(_t(m, (2,)), 1.0))


# --- tril_indices, triu_indices ----------------------------------------------------------------


def test_tri_indices():
    for args in ((3, 3), (3, 3, 1), (3, 4, -1), (0, 0), (4, 3, 10), (4, 3, -10), (1, 5, 2)):
        both(lambda m, args=args: (m.tril_indices(*args), m.triu_indices(*args)))
    both(lambda m: m.tril_indices(3, 3, dtype=m.int32))
    both(lambda m: m.triu_indices(3, 2, offset=1, dtype=m.int32, device="cpu"))
    assert str(lg.triu_indices(3, 2, device="cuda").device) == "cuda:0"
    for name in ("tril_indices", "triu_indices"):
        bad = [
            lambda f: f(-1, 3),
            lambda f: f(3, -1),
            lambda f: f(-1, -1),
            lambda f: f(3, 3, 1.5),
            lambda f: f(3.0, 3),
            lambda f: f(3),
        ]
        for f in bad:
            both(lambda m, f=f, name=name: f(getattr(m, name)))
        for dtype in ("float32", "int16", "uint8", "bool"):
            both(lambda m, dtype=dtype, name=name: getattr(m, name)(3, 3, dtype=getattr(m, dtype)))
        both(lambda m, name=name: getattr(m, name)(3, 3, requires_grad=True))


# --- vander ------------------------------------------------------------------------------------


def test_vander():
    kws = ({}, {"N": 2, "increasing": True}, {"N": 4}, {"increasing": True}, {"N": 1}, {"N": 0})
    for kw in kws:
        both(lambda m, kw=kw: (lambda v: (v, _facts(v), v._version))(m.vander(_t(m, (3,)), **kw)))
    # Without a cumulative product (N <= 1) the gradient flows. With one, PyTorch's backward
    # raises: cumprod saved its input, a view that vander's next copy_ writes.
    for kw in ({"N": 1}, {"N": 0, "increasing": True}):
        both(lambda m, kw=kw: _grads(m, lambda m, x: m.vander(x, **kw), _t(m, (3,))))
    both(lambda m: _facts(m.vander(_t(m, (3,), "float64"), 2)))
    for dtype in ("int64", "int32", "bool", "complex64", "float16"):
        both(lambda m, dtype=dtype: m.vander(_t(m, (3,), dtype, grad=False)))
    both(lambda m: m.vander(m.zeros(0)))
    both(lambda m: m.vander(m.zeros(0), N=2))
    both(lambda m: _grads(m, lambda m, x: m.vander(x), _t(m, (0,))))
    for f in (
        lambda m: m.vander(_t(m, (3,)), N=-1),
        lambda m: m.vander(m.ones(2, 2)),
        lambda m: m.vander(m.tensor(2.0)),
        lambda m: m.vander(_t(m, (3,)), increasing=1),
        lambda m: m.vander(_t(m, (3,)), 2.0),
    ):
        both(f)


# --- chain_matmul, cholesky --------------------------------------------------------------------


def test_chain_matmul():
    def mats(m, *shapes, dtype="float32"):
        return [_t(m, s, dtype, i) for i, s in enumerate(shapes)]

    both(lambda m: _grads(m, lambda m, *xs: m.chain_matmul(*xs), *mats(m, (2, 3), (3, 4), (4, 2))))
    both(lambda m: _grads(m, lambda m, *xs: m.chain_matmul(*xs), *mats(m, (2, 3), (3, 4))))
    both(
        lambda m: _grads(
            m, lambda m, *xs: m.chain_matmul(*xs), *mats(m, (2, 3), (3, 4), (4, 2), (2, 5))
        )
    )
    both(lambda m: _grads(m, lambda m, x: m.chain_matmul(x), _t(m, (2, 3))))
    both(lambda m: (lambda a: m.chain_matmul(a.t()).stride())(_t(m, (2, 3))))
    both(lambda m: m.chain_matmul(*mats(m, (2, 3), (3, 2), dtype="int32")))
    both(lambda m: m.chain_matmul(m.ones(2, 0), m.ones(0, 3)))
    for f in (
        lambda m: m.chain_matmul(),
        lambda m: m.chain_matmul(m.ones(3)),
        lambda m: m.chain_matmul(_t(m, (2, 3)), m.ones(3)),
        lambda m: m.chain_matmul(_t(m, (2, 3)), _t(m, (2, 3))),
        lambda m: m.chain_matmul([_t(m, (2, 3)), _t(m, (3, 2))]),
    ):
        both(f)


def _cholesky_case(m, spd, upper, shape, dtype):
    return _grads(m, lambda m, a: m.cholesky(a, upper), spd(m, shape, dtype))


def test_cholesky():
    def spd(m, shape, dtype="float64", upper_junk=True):
        a = m.tensor(_values(shape, "float64", 3), dtype=getattr(m, dtype))
        a = a @ a.mT + 4 * m.eye(shape[-1], dtype=a.dtype)
        if upper_junk:  # the triangle not read does not matter to the value
            a = a + m.ones(shape, dtype=a.dtype).triu(1) * 0.25
        return a.requires_grad_()

    for upper, shape, dtype in ((False, (3, 3), "float64"), (True, (2, 3, 3), "float32")):
        both(lambda m, c=(upper, shape, dtype): _cholesky_case(m, spd, *c))
    both(lambda m: _grads(m, lambda m, a: a.cholesky(upper=True), spd(m, (2, 2))))
    both(lambda m: _grads(m, lambda m, a: m.cholesky(a, upper=False), spd(m, (0, 0))))
    both(lambda m: m.cholesky(m.eye(2, dtype=m.complex64) * 2))
    both(lambda m: m.cholesky(spd(m, (3, 3), upper_junk=False)).grad_fn.name())
    # not positive-definite: torch's ``_LinAlgError`` (a RuntimeError), matched by name and text
    for f in (
        lambda m: m.cholesky(m.tensor([[1.0, 2], [2, 1]])),
        lambda m: m.cholesky(m.tensor([[1.0, 2], [2, 1]]), upper=True),
        lambda m: m.cholesky(m.tensor([[4.0, 100.0], [2.0, 3.0]]), upper=True),
        lambda m: m.cholesky(m.tensor([[float("nan"), 2], [2, 1]])),
        lambda m: m.cholesky(m.eye(2).expand(3, 2, 2) * m.tensor([1.0, -1, 1]).view(3, 1, 1)),
    ):
        t, g = call(f, torch), call(f, lg)
        assert isinstance(t[0], Raised) and isinstance(g[0], Raised), (t, g)
        assert type(g[0].exc).__name__ == type(t[0].exc).__name__ == "_LinAlgError"
        assert isinstance(g[0].exc, RuntimeError) and g[0].text == t[0].text, (t, g)
        assert g[1] == t[1]
    for f in (
        lambda m: m.cholesky(m.ones(2, 3)),
        lambda m: m.cholesky(m.ones(3)),
        lambda m: m.cholesky(m.ones(2, 3, dtype=m.int64)),
        lambda m: m.cholesky(m.eye(2, dtype=m.int64)),
        lambda m: m.cholesky(m.eye(2, dtype=m.float16)),
        lambda m: m.cholesky(m.eye(2), upper=1),
        lambda m: m.eye(2).cholesky(1),
        lambda m: m.cholesky([[1.0]]),
    ):
        both(f)


# --- under jax.jit -------------------------------------------------------------------------------


def test_jit_traces_layout_ops():
    x = lg.tensor(np.arange(12.0).reshape(3, 4), dtype=lg.float64)

    def f(a):
        a = lg.Tensor._make(a, lg.float64, x.device)
        u = a.unfold(1, 2, 1).sum() + a.rot90(1).sum()
        b = lg.block_diag(a, a[0]).sum() + lg.cartesian_prod(a[0], a[1]).sum()
        c = lg.combinations(a[0], 2).sum() + lg.vander(a[1], 3).sum()
        g = lg.meshgrid(a[0], a[1, :2], indexing="xy")[1].sum()
        h = lg.chain_matmul(a, a.t(), a).sum() + lg.atleast_3d(a).sum()
        s = a @ a.t() + 100 * lg.eye(3, dtype=lg.float64)
        return (u + b + c + g + h + lg.cholesky(s).sum() + lg.tril_indices(3, 3).sum())._data

    np.testing.assert_allclose(np.asarray(jax.jit(f)(x._data)), np.asarray(f(x._data)))


@pytest.mark.parametrize(
    "call",
    [
        "m.empty(2, 3, 4, 5, memory_format=m.channels_last)",
        "m.empty(2, 3, 4, 5, 6, memory_format=m.channels_last_3d)",
        "m.empty(2, 3, memory_format=m.contiguous_format)",
        "m.empty(2, 3, 4, 5, memory_format=m.channels_last, requires_grad=True)",
        "m.empty(2, memory_format=m.channels_last)",
        "m.empty(2, memory_format=m.preserve_format)",
        "m.empty(2, memory_format=3)",
    ],
)
def test_empty_is_laid_out_as_its_memory_format_asks(call):
    """``torch.empty(..., memory_format=...)`` (the format was ignored: contiguous strides)."""

    def f(m):
        t = eval(call, {"m": m})
        return t.zero_() if not t.requires_grad else t.detach().zero_(), t.stride(), t.is_leaf

    both(f)
