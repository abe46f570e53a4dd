"""Differential tests of ``leafgrad.func`` and ``leafgrad.autograd.functional`` against
``torch.func`` and ``torch.autograd.functional``: values, tuple conventions, requires_grad and
grad_fn of results, errors; plus compositions and ``jax.jit`` for ``leafgrad.func``."""

from __future__ import annotations

import importlib

import jax
import numpy as np
import pytest
import torch
import torch.autograd.functional
import torch.func
from conftest import both, lg, same

import leafgrad.autograd.functional as lg_functional
import leafgrad.func as lg_func

RS = np.random.RandomState(0)
X3 = RS.randn(3).astype(np.float32)
Y3 = RS.randn(3).astype(np.float32)
W23 = RS.randn(2, 3).astype(np.float32)
B4 = RS.randn(4, 3).astype(np.float32)
TOL = {"rtol": 1e-5, "atol": 1e-6}


def F(m):
    """The module's torch.func."""
    return torch.func if m is torch else lg_func


def AF(m):
    """The module's autograd.functional."""
    return torch.autograd.functional if m is torch else lg_functional


def same_graph(t_res, g_res):
    """Values as torch's, and requires_grad / ``grad_fn is None`` as torch's. The grad_fn *names*
    of create_graph results are not compared: leafgrad records each node's whole backward as one
    op (``MulBackward0Backward``) where PyTorch records its formula's ops (``MulBackward0``)."""
    if isinstance(t_res, torch.Tensor):
        same(t_res, g_res, autograd=False, **TOL)
        assert g_res.requires_grad == t_res.requires_grad, "requires_grad differs"
        assert (g_res.grad_fn is None) == (t_res.grad_fn is None), "grad_fn presence differs"
    else:
        assert type(g_res) is type(t_res) and len(g_res) == len(t_res)
        for a, b in zip(t_res, g_res):
            same_graph(a, b)


def both_graph(fn):
    t_res, g_res = both(fn, compare=False)
    same_graph(t_res, g_res)


def t(m, a, **kw):
    return m.tensor(a, **kw)


# functions used by both libraries
def elementwise(x):
    return (x.sin() * x.exp()).sum()


def matmul_tanh(w, x):
    return (w @ x).tanh()


def reduce_mean(x):
    return (x**2).mean(0)


def two_out(x, y):
    return x * y, (x + y).sum()


def pytree_fn(p):
    return (p["w"] @ p["x"]).sum() + p["b"][0].pow(3).sum()


# --- leafgrad.func ---------------------------------------------------------------------------


@pytest.mark.parametrize("argnums", [0, 1, (0, 1), -1])
def test_grad_argnums(argnums):
    both(
        lambda m: F(m).grad(lambda w, x: matmul_tanh(w, x).sum(), argnums)(t(m, W23), t(m, X3)),
        **TOL,
    )


def test_grad_and_value_has_aux_kwargs():
    def f(x, scale=1.0):
        y = elementwise(x) * scale
        return y, {"aux": x.cos()}

    both(lambda m: F(m).grad_and_value(f, has_aux=True)(t(m, X3), scale=2.0), **TOL)
    both(lambda m: F(m).grad(f, has_aux=True)(t(m, X3), scale=0.5), **TOL)


def test_grad_pytree_input():
    def run(m):
        p = {"w": t(m, W23), "x": t(m, X3), "b": [t(m, B4)]}
        return F(m).grad(pytree_fn)(p)

    both(run, **TOL)


def test_grad_float64_and_int_output():
    both(lambda m: F(m).grad(elementwise)(t(m, X3, dtype=m.float64)))
    both(lambda m: F(m).grad(lambda x: (x.sum() > 0).float())(t(m, X3)))


@pytest.mark.parametrize(
    "fn",
    [
        lambda m: F(m).grad(lambda x: x * 2)(t(m, X3)),
        lambda m: F(m).grad(lambda x: 1.0)(t(m, X3)),
        lambda m: F(m).grad(elementwise)(1.0),
        lambda m: F(m).grad(lambda x: x.sum())(t(m, [1, 2])),
        lambda m: F(m).grad(elementwise, has_aux=True)(t(m, X3)),
        lambda m: F(m).grad(lambda x: (x.sum(), 1.0), has_aux=True)(t(m, X3)),
        lambda m: F(m).grad(elementwise, argnums=2)(t(m, X3)),
        lambda m: F(m).grad(elementwise, argnums=(0, 0))(t(m, X3)),
        lambda m: F(m).grad(elementwise, argnums=())(t(m, X3)),
        lambda m: F(m).grad(elementwise, argnums=[0])(t(m, X3)),
        lambda m: F(m).grad(elementwise, argnums=0.5)(t(m, X3)),
    ],
)
def test_grad_errors(fn):
    both(fn)


def test_vjp():
    def run(m):
        out, fn = F(m).vjp(matmul_tanh, t(m, W23), t(m, X3))
        return out, fn(t(m, [1.0, -2.0]))

    both(run, **TOL)

    def run_tree(m):
        out, fn, aux = F(m).vjp(
            lambda x, y: (two_out(x, y), x.exp()), t(m, X3), t(m, Y3), has_aux=True
        )
        return out, fn((t(m, [1.0, 2.0, 3.0]), t(m, 0.5))), aux

    both(run_tree, **TOL)


@pytest.mark.parametrize(
    "fn",
    [
        lambda m: F(m).vjp(matmul_tanh, t(m, W23), t(m, X3))[1]((t(m, [1.0, 2.0]),)),
        lambda m: F(m).vjp(matmul_tanh, t(m, W23), t(m, X3))[1](t(m, [1.0, 2.0, 3.0])),
        lambda m: F(m).vjp(lambda x: x.long(), t(m, X3)),
        lambda m: F(m).vjp(lambda x: [x, 1.0], t(m, X3)),
        lambda m: F(m).vjp(elementwise, t(m, X3), has_aux=True),
    ],
)
def test_vjp_errors(fn):
    both(fn)


def test_jvp():
    both(lambda m: F(m).jvp(elementwise, (t(m, X3),), (t(m, Y3),)), **TOL)
    both(lambda m: F(m).jvp(two_out, (t(m, X3), t(m, Y3)), (t(m, Y3), t(m, X3))), **TOL)
    both(
        lambda m: F(m).jvp(lambda x: (x.sin(), x.cos()), (t(m, X3),), (t(m, Y3),), has_aux=True),
        **TOL,
    )


@pytest.mark.parametrize(
    "fn",
    [
        lambda m: F(m).jvp(elementwise, t(m, X3), (t(m, Y3),)),
        lambda m: F(m).jvp(elementwise, (t(m, X3),), [t(m, Y3)]),
        lambda m: F(m).jvp(elementwise, (t(m, X3),), (1.0,)),
        lambda m: F(m).jvp(lambda x: 1.0, (t(m, X3),), (t(m, Y3),)),
        # make_dual's checks, pair by pair (JAX's own error came through)
        lambda m: F(m).jvp(elementwise, (t(m, X3),), (t(m, Y3[:2]),)),
        lambda m: F(m).jvp(elementwise, (m.tensor([1, 2]),), (t(m, Y3[:2]),)),
        lambda m: F(m).jvp(elementwise, (t(m, X3),), (m.tensor([1, 2, 3]),)),
        lambda m: F(m).jvp(two_out, (t(m, X3), t(m, Y3)), (t(m, Y3), t(m, X3[:1]))),
    ],
)
def test_jvp_errors(fn):
    both(fn)


def test_jvp_tangent_dtype_refused():
    """PyTorch keeps a tangent's own dtype; JAX's JVP computes in the primal's: refused (it was
    cast silently)."""
    with pytest.raises(NotImplementedError, match="leafgrad: a tangent of dtype"):
        lg_func.jvp(elementwise, (lg.tensor(X3),), (lg.tensor(Y3, dtype=lg.float64),))


@pytest.mark.parametrize(
    "read",
    [
        lambda t: t.item(),
        lambda t: bool(t),
        lambda t: float(t),
        lambda t: t[:0].item(),
        lambda t: bool(t[:0]),
    ],
)
def test_vmap_reads_of_many_elements(read):
    """vmap's error for reading a batched tensor comes before the size checks."""
    both(lambda m: F(m).vmap(read)(m.ones(2, 3)))


@pytest.mark.parametrize("name", ["jacrev", "jacfwd"])
def test_jacobians(name):
    def jac(m, *a, **k):
        return getattr(F(m), name)(*a, **k)

    both(lambda m: jac(m, matmul_tanh)(t(m, W23), t(m, X3)), **TOL)
    both(lambda m: jac(m, matmul_tanh, argnums=(0, 1))(t(m, W23), t(m, X3)), **TOL)
    both(lambda m: jac(m, two_out, argnums=1)(t(m, X3), t(m, Y3)), **TOL)
    both(lambda m: jac(m, reduce_mean)(t(m, B4)), **TOL)
    both(lambda m: jac(m, lambda x: (x.sin(), x.cos()), has_aux=True)(t(m, X3)), **TOL)
    both(lambda m: jac(m, pytree_fn)({"w": t(m, W23), "x": t(m, X3), "b": [t(m, B4)]}), **TOL)
    both(lambda m: jac(m, matmul_tanh)(t(m, W23, dtype=m.complex64), t(m, X3)))


def test_hessian_and_compositions():
    both(lambda m: F(m).hessian(elementwise)(t(m, X3)), **TOL)
    both(
        lambda m: F(m).hessian(lambda w, x: matmul_tanh(w, x).sum(), argnums=(0, 1))(
            t(m, W23), t(m, X3)
        ),
        rtol=1e-5,
        atol=1e-5,
    )
    both(lambda m: F(m).jacrev(F(m).jacrev(elementwise))(t(m, X3)), **TOL)
    both(lambda m: F(m).jacfwd(F(m).jacrev(elementwise))(t(m, X3)), **TOL)
    both(
        lambda m: (
            F(m).grad(F(m).grad(lambda x: x.sin().sum().pow(2).sin()))
            if False
            else F(m).grad(lambda x: F(m).grad(elementwise)(x).sum())(t(m, X3))
        ),
        **TOL,
    )
    both(lambda m: F(m).vmap(F(m).grad(elementwise))(t(m, B4)), **TOL)
    both(
        lambda m: F(m).vmap(F(m).jacrev(matmul_tanh, argnums=1), in_dims=(None, 0))(
            t(m, W23), t(m, B4)
        ),
        **TOL,
    )
    both(lambda m: F(m).vmap(F(m).hessian(elementwise))(t(m, B4)), rtol=1e-5, atol=1e-5)


def test_vmap():
    both(lambda m: F(m).vmap(matmul_tanh, in_dims=(None, 0))(t(m, W23), t(m, B4)), **TOL)
    both(
        lambda m: F(m).vmap(lambda a, b: a * b, in_dims=(1, None), out_dims=1)(
            t(m, B4.T.copy()), t(m, X3)
        )
    )
    both(lambda m: F(m).vmap(two_out, out_dims=(0, -1))(t(m, B4), t(m, B4)), **TOL)
    both(lambda m: F(m).vmap(lambda x, s: x * s, in_dims=(0, None))(t(m, B4), 2.0))
    both(
        lambda m: F(m).vmap(lambda d: d["a"] + d["b"], in_dims=({"a": 0, "b": None},))(
            {"a": t(m, B4), "b": t(m, X3)}
        )
    )
    both(lambda m: F(m).vmap(lambda x: (x.sum(), "tag"), out_dims=(0, None))(t(m, B4)))
    both(lambda m: F(m).vmap(lambda x: x.sum(), chunk_size=2, randomness="same")(t(m, B4)))
    both(
        lambda m: F(m).vmap(F(m).vmap(lambda x, y: x @ y, in_dims=(0, None)), in_dims=(None, 1))(
            t(m, B4), t(m, W23.T.copy())
        ),
        **TOL,
    )


@pytest.mark.parametrize(
    "fn",
    [
        lambda m: F(m).vmap(elementwise, in_dims=[0])(t(m, B4)),
        lambda m: F(m).vmap(elementwise)(),
        lambda m: F(m).vmap(lambda a, b: a + b)(t(m, B4), t(m, W23)),
        lambda m: F(m).vmap(lambda a, s: a * s)(t(m, B4), 2.0),
        lambda m: F(m).vmap(elementwise, in_dims=2)(t(m, B4)),
        lambda m: F(m).vmap(elementwise, in_dims=(0, 0))(t(m, B4)),
        lambda m: F(m).vmap(elementwise, in_dims=None)(t(m, B4)),
        lambda m: F(m).vmap(lambda x: x * 2, out_dims=None)(t(m, B4)),
        lambda m: F(m).vmap(lambda x: 1.0)(t(m, B4)),
        lambda m: F(m).vmap(lambda x: x * 2, out_dims="a")(t(m, B4)),
        lambda m: F(m).vmap(lambda x: x * 2, out_dims=(0, 0))(t(m, B4)),
        lambda m: F(m).vmap(elementwise, randomness="sometimes"),
        lambda m: F(m).vmap(elementwise, chunk_size=0),
        lambda m: F(m).jacrev(elementwise, chunk_size=0),
        lambda m: F(m).jacfwd(elementwise, randomness="x")(t(m, X3)),
    ],
)
def test_vmap_errors(fn):
    both(fn)


def test_vmap_unbatched_output_broadcasts():
    both(lambda m: F(m).vmap(lambda x: m.ones(2), in_dims=0)(t(m, B4)))


class Affine:
    """A hand-written stand-in for an nn.Module: parameters as attributes, a submodule."""

    def __init__(self, m, w, b):
        self.weight = t(m, w)
        self.inner = type("Inner", (), {})()
        self.inner.bias = t(m, b)

    def __call__(self, x, shift=0.0):
        return x @ self.weight.T + self.inner.bias + shift


def test_functional_call():
    def run(m):
        if m is torch:
            mod = torch.nn.Linear(3, 2)
            with torch.no_grad():
                mod.weight.copy_(torch.tensor(W23))
                mod.bias.copy_(torch.tensor(X3[:2]))
            keys = ("weight", "bias")
        else:
            mod = Affine(m, W23, X3[:2])
            keys = ("weight", "inner.bias")
        params = {keys[0]: t(m, W23 * 2), keys[1]: t(m, Y3[:2])}
        out = F(m).functional_call(mod, params, (t(m, B4),))
        after = F(m).functional_call(mod, ({keys[0]: t(m, W23)}, {keys[1]: t(m, X3[:2])}), t(m, B4))
        g = F(m).grad(lambda p, x: F(m).functional_call(mod, p, (x,)).sum())(params, t(m, B4))
        return out, after, [g[k] for k in keys]

    both(run, autograd=False, **TOL)
    mod = Affine(lg, W23, X3[:2])
    lg_func.functional_call(mod, {"weight": lg.zeros(2, 3)}, (lg.ones(1, 3),))
    np.testing.assert_array_equal(np.asarray(mod.weight._data), W23)  # restored
    with pytest.raises(ValueError, match="appeared in multiple dictionaries"):
        lg_func.functional_call(mod, ({"weight": lg.ones(1)}, {"weight": lg.ones(1)}), ())


def _tied(m):
    """A module whose second layer's weight is the first's."""
    m.manual_seed(0)
    mod = m.nn.Sequential(m.nn.Linear(2, 2), m.nn.Linear(2, 2))
    mod[1].weight = mod[0].weight
    mod.register_buffer("buf", m.ones(2))
    return mod


@pytest.mark.parametrize(
    "call",
    [
        lambda m, f, x, e: f(_tied(m), {"1.weight": e * 2}, x),  # reaches "0.weight" too
        lambda m, f, x, e: f(_tied(m), {"0.weight": e, "1.weight": e}, x),
        lambda m, f, x, e: f(_tied(m), {"0.weight": e, "1.weight": e * 3}, x, tie_weights=False),
        lambda m, f, x, e: f(_tied(m), {"0.weight": e, "1.weight": e * 3}, x),
        lambda m, f, x, e: f(_tied(m), {"0.weight": e}, x, strict=True),
        lambda m, f, x, e: f(_tied(m), {"0.weight": e, "zz": e, "0.bais": e}, x, strict=True),
        lambda m, f, x, e: f(
            _tied(m), {"0.weight": e, "0.bias": e[0], "1.bias": e[1], "buf": e[0]}, x, strict=True
        ),
        lambda m, f, x, e: f(
            _tied(m),
            {"0.weight": e, "0.bias": e[0], "1.bias": e[1], "buf": e[0]},
            x,
            strict=True,
            tie_weights=False,
        ),
    ],
)
def test_functional_call_tied_and_strict(call):
    both(lambda m: call(m, F(m).functional_call, m.ones(1, 2), m.eye(2)), autograd=False, **TOL)


def test_func_under_jax_jit():
    """The transforms run under jax.jit and give the eager values."""

    def program(w, x, b):
        W, xx, bb = (lg.Tensor._make(a, lg.float32, lg.device("cpu")) for a in (w, x, b))
        g = lg_func.grad(lambda w, x: matmul_tanh(w, x).sum(), argnums=(0, 1))(W, xx)
        h = lg_func.hessian(elementwise)(xx)
        j = lg_func.jacfwd(lg_func.jacrev(elementwise))(xx)
        v = lg_func.vmap(lg_func.grad(elementwise))(bb)
        out, tan = lg_func.jvp(elementwise, (xx,), (xx,))
        return tuple(r._data for r in (*g, h, j, v, out, tan))

    args = (W23, X3, B4)
    eager = program(*args)
    jitted = jax.jit(program)(*args)
    for a, b in zip(eager, jitted):
        np.testing.assert_allclose(np.asarray(b), np.asarray(a), rtol=1e-6, atol=1e-6)


# --- leafgrad.autograd.functional ----------------------------------------------------------------


def _inputs(m, rg=False):
    return t(m, X3, requires_grad=rg), t(m, Y3, requires_grad=rg)


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("rg", [False, True])
def test_af_vjp_jvp(create_graph, rg):
    kw = {"create_graph": create_graph}
    both_graph(lambda m: AF(m).vjp(elementwise, t(m, X3, requires_grad=rg), **kw))
    both_graph(lambda m: AF(m).vjp(two_out, _inputs(m, rg), (t(m, X3), t(m, 2.0)), **kw))
    both_graph(
        lambda m: AF(m).vjp(
            matmul_tanh, (t(m, W23, requires_grad=rg), t(m, X3)), t(m, [1.0, 2.0]), **kw
        )
    )
    if not create_graph:  # see test_af_jvp_linear_output_create_graph
        both_graph(lambda m: AF(m).jvp(two_out, _inputs(m, rg), (t(m, X3), t(m, Y3)), **kw))
    both_graph(lambda m: AF(m).jvp(lambda x: x.exp(), t(m, X3, requires_grad=rg), t(m, Y3), **kw))
    both_graph(lambda m: AF(m).jvp(lambda x, y: (x * y, x.sin()), _inputs(m, rg), _inputs(m), **kw))


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("vectorize", [False, True])
def test_af_jacobian_hessian(create_graph, vectorize):
    kw = {"create_graph": create_graph, "vectorize": vectorize}
    both_graph(lambda m: AF(m).jacobian(matmul_tanh, (t(m, W23), t(m, X3)), **kw))
    both_graph(lambda m: AF(m).jacobian(two_out, _inputs(m, True), **kw))
    both_graph(lambda m: AF(m).jacobian(lambda x: x.exp(), t(m, X3), **kw))
    both_graph(lambda m: AF(m).jacobian(lambda x, y: x * 2, _inputs(m), **kw))
    both_graph(lambda m: AF(m).hessian(elementwise, t(m, X3), **kw))
    both_graph(lambda m: AF(m).hessian(lambda x, y: (x**2 * y.exp()).sum(), _inputs(m, True), **kw))


@pytest.mark.parametrize("create_graph", [False, True])
def test_af_hvp_vhp(create_graph):
    kw = {"create_graph": create_graph}
    for name in ("hvp", "vhp"):
        both_graph(lambda m: getattr(AF(m), name)(elementwise, t(m, X3), t(m, Y3), **kw))  # noqa: B023
        both_graph(
            lambda m: getattr(AF(m), name)(  # noqa: B023
                lambda x, y: (x * y.exp()).sum(), _inputs(m, True), _inputs(m), **kw
            )
        )


def test_af_hessian_block_independent_of_input():
    both_graph(
        lambda m: AF(m).hessian(
            lambda x, y: (x * y.exp()).sum(), _inputs(m, True), create_graph=True
        )
    )


def test_af_jvp_linear_output_create_graph():
    both_graph(lambda m: AF(m).jvp(lambda x: x.sum(), t(m, X3), t(m, Y3), create_graph=True))


def test_af_forward_mode():
    both(
        lambda m: AF(m).jacobian(
            matmul_tanh, (t(m, W23), t(m, X3)), vectorize=True, strategy="forward-mode"
        ),
        **TOL,
    )
    both(
        lambda m: AF(m).jacobian(
            lambda x: x.exp(), t(m, X3), vectorize=True, strategy="forward-mode"
        ),
        **TOL,
    )
    # torch's forward-over-reverse Hessian leaks a grad_fn of its dual tensors; values agree
    both(
        lambda m: AF(m).hessian(
            elementwise, t(m, X3), vectorize=True, outer_jacobian_strategy="forward-mode"
        ),
        autograd=False,
        **TOL,
    )


def test_af_second_order_through_create_graph():
    """Results of create_graph=True are differentiable: gradient of the Hessian's trace."""

    def run(m):
        x = t(m, X3, requires_grad=True)
        h = AF(m).hessian(lambda x: (x**4).sum(), x, create_graph=True)
        (g,) = m.autograd.grad(h.diagonal().sum(), x)
        return h, g

    both(run, **TOL)


@pytest.mark.parametrize(
    "fn",
    [
        lambda m: AF(m).vjp(lambda x: x * 2, t(m, X3)),
        lambda m: AF(m).vjp(elementwise, 1.0),
        lambda m: AF(m).vjp(elementwise, (t(m, X3), 1.0)),
        lambda m: AF(m).vjp(lambda x: 1.0, t(m, X3)),
        lambda m: AF(m).vjp(lambda x: x * 2, t(m, X3), t(m, [1.0, 2.0])),
        lambda m: AF(m).vjp(lambda x, y: x * 2, _inputs(m), (t(m, X3), t(m, X3))),
        lambda m: AF(m).vjp(lambda x: t(m, X3) * 2, t(m, X3), t(m, X3), strict=True),
        lambda m: AF(m).vjp(lambda x, y: x * 2, _inputs(m), t(m, X3), strict=True),
        lambda m: AF(m).jvp(lambda x: x * 2, t(m, X3)),
        lambda m: AF(m).jvp(lambda x: x * 2, t(m, X3), t(m, X3), strict=True),
        lambda m: AF(m).jacobian(lambda x: x * 2, t(m, X3), strict=True),
        lambda m: AF(m).jacobian(lambda x, y: x * 2, _inputs(m), strict=True),
        lambda m: AF(m).jacobian(lambda x: x.exp(), t(m, X3), strict=True, vectorize=True),
        lambda m: AF(m).jacobian(lambda x: x.exp(), t(m, X3), strategy="sideways"),
        lambda m: AF(m).jacobian(lambda x: x.exp(), t(m, X3), strategy="forward-mode"),
        lambda m: AF(m).jacobian(
            lambda x: x.exp(), t(m, X3), strategy="forward-mode", create_graph=True
        ),
        lambda m: AF(m).jacobian(lambda x: x.exp(), t(m, X3), strategy="forward-mode", strict=True),
        lambda m: AF(m).hessian(lambda x: x * 2, t(m, X3)),
        lambda m: AF(m).hessian(lambda x: (x, x), t(m, X3)),
        lambda m: AF(m).hessian(lambda x: x.sum() * 2, t(m, X3), strict=True),
        lambda m: AF(m).hessian(elementwise, t(m, X3), outer_jacobian_strategy="up"),
        lambda m: AF(m).hvp(lambda x: x * 2, t(m, X3), t(m, X3)),
        lambda m: AF(m).hvp(lambda x: x.sum() * 2, t(m, X3), t(m, X3), strict=True),
        lambda m: AF(m).vhp(lambda x: (x, x), t(m, X3), t(m, X3)),
        lambda m: AF(m).vhp(lambda x: x.sum() * 2, t(m, X3), t(m, X3), strict=True),
        lambda m: AF(m).vhp(elementwise, t(m, X3)),
    ],
)
def test_af_errors(fn):
    both(fn)


def test_modules_importable_fresh():
    assert importlib.reload(lg_func).grad is not None
    assert set(lg_functional.__all__) == set(torch.autograd.functional.__all__)
    same(
        torch.func.grad(elementwise)(torch.tensor(X3)),
        lg_func.grad(elementwise)(lg.tensor(X3)),
        **TOL,
    )
