"""Gradients of view, shape, join, split and indexing ops taken with ``create_graph=True``:
PyTorch's derivative formulas (leafgrad/ops/formulas_shape.py), compared with torch by graph
signature and by the values of the first three derivatives."""

from __future__ import annotations

import os

import numpy as np
import pytest
import torch
from formula_check import check_graph, graph_signature

import leafgrad as lg

R = np.random.default_rng(17)


def A(*shape):
    return R.uniform(0.2, 1.2, shape)


def I(m, *values):  # noqa: E743
    return m.tensor(list(values))


X, Y, V, C = A(3, 4), A(2, 3, 4), A(4), A(3, 1)
Y4 = A(3, 4)


def _setitem(y, key, value):
    y[key] = value
    return y


def sq(y):
    return y * y


def cz(m, x, y):
    """A complex tensor with a history, from two real leaves."""
    return m.complex(x, y).sin()


# Each case: fn(module, *tensors) and its float64 inputs (all require grad). The op's result is
# multiplied by itself, so the incoming gradient of its node requires grad and the formula's
# graph is part of the signature. Shapes are shared between cases: each new shape compiles.
CASES = {
    # views
    "view": (lambda m, x: sq(x.sin().view(6, 2)), [X]),
    "view_leaf": (lambda m, x: sq(x.view(2, 6)), [X]),
    # the gradient reaching the view is transposed: reshape copies (Clone, UnsafeView)
    "view_of_transposed_grad": (lambda m, x: sq(x.sin().view(4, 3).t()), [X]),
    "reshape_copy": (lambda m, x: sq(x.sin().t().reshape(12)), [X]),
    "reshape_alias": (lambda m, x: sq(x.sin().t().reshape(1, 4, 3)), [X]),
    "flatten_unflatten": (
        lambda m, x: sq(x.cos().transpose(0, 2).flatten().unflatten(0, (4, 6))),
        [Y],
    ),
    "alias": (lambda m, x: sq(x.sin()[...]), [X]),
    "unsqueeze": (lambda m, x: sq(x.sin().unsqueeze(1)), [X]),
    "squeeze_all": (lambda m, x: sq(x.sin().unsqueeze(1).unsqueeze(0).squeeze()), [X]),
    "squeeze_dim": (lambda m, x: sq(x.sin().unsqueeze(1).squeeze(-2)), [X]),
    "squeeze_dim_noop": (lambda m, x: sq(x.sin().squeeze(0)), [X]),
    "squeeze_dims": (lambda m, x: sq(x.sin().unsqueeze(1).squeeze((0, 1))), [X]),
    "transpose": (lambda m, x: sq(x.sin().transpose(0, 2)), [Y]),
    "t": (lambda m, x: sq(x.sin().t()), [X]),
    "t_1d": (lambda m, x: sq(x.sin().t()), [V]),
    "permute": (lambda m, x: sq(x.sin().permute(2, 0, 1)), [Y]),
    "movedim": (lambda m, x: sq(x.movedim((0, 1), (2, 0))), [Y]),
    "expand": (lambda m, x: sq(x.sin().unsqueeze(0).expand(2, 3, 4)), [X]),
    "expand_same": (lambda m, x: sq(x.sin().expand(3, 4)), [X]),
    "expand_as": (lambda m, x, y: x.sin().expand_as(y) * y, [A(3, 1), X]),
    "expand_0d": (lambda m, x, y: x.sin().expand(3, 4) * y, [A(), X]),
    "nested_views": (
        lambda m, x: sq(x.sin().view(2, 6).t().unsqueeze(0).expand(2, 6, 2).permute(2, 1, 0)),
        [X],
    ),
    # slices, selects, diagonals
    "select": (lambda m, x: sq(x.sin()[1]), [X]),
    "select_dim": (lambda m, x: sq(x.sin().select(1, -1).unsqueeze(0)), [X]),
    "select_leaf": (lambda m, x: x[2] * x[0], [X]),
    "slice": (lambda m, x: sq(x.sin()[1:3]), [X]),
    "slice_step": (lambda m, x: sq(x.sin()[:, ::2]), [X]),
    "slice_mixed": (lambda m, x: sq(x.sin()[1:, 2, None, ::2]), [Y]),
    "narrow": (lambda m, x: sq(x.sin().narrow(1, 1, 2)), [X]),
    "diagonal": (lambda m, x: sq(x.sin().diagonal(1)), [X]),
    "diagonal_dims": (lambda m, x: sq(x.sin().diagonal(-1, 0, 2)), [Y]),
    "diag_embed": (lambda m, x: sq(m.diag_embed(x.sin(), 1, 0, 2)), [X]),
    "unfold": (lambda m, x: sq(x.sin().unfold(1, 2, 1)), [X]),
    # splits and joins
    "split_first": (lambda m, x: sq(x.sin().split(2)[0]), [X]),
    "split_sum": (lambda m, x: sum(sq(p).sum() for p in x.sin().split(2)), [X]),
    "split_with_sizes": (lambda m, x: sq(x.sin().split([1, 2])[1]), [X]),
    "chunk": (lambda m, x: (lambda a, b: a * b)(*x.sin().chunk(2, 1)), [X]),
    "unbind": (lambda m, x: sq(x.sin().unbind(1)[1]), [X]),
    "unbind_two": (lambda m, x: (lambda a, b, c: a * c)(*x.cos().unbind(0)), [X]),
    "cat": (lambda m, x, y: sq(m.cat([x.sin(), y.cos(), x], 1)), [X, A(3, 2)]),
    "cat_empty": (lambda m, x, e: sq(m.cat([x.sin(), e, m.zeros(0, dtype=m.float64)])), [V, A(0)]),
    "stack": (lambda m, x, y: sq(m.stack([x.sin(), y.cos()], -1)), [X, X]),
    # copies
    "repeat": (lambda m, x: sq(x.sin().repeat(2, 1, 3)), [X]),
    "repeat_zero": (lambda m, x: sq(x.sin().repeat(0, 1)) + x.sum(), [X]),
    "flip": (lambda m, x: sq(x.sin().flip(0, -1)), [X]),
    "roll": (lambda m, x: sq(x.sin().roll((1, 2), (0, 1))), [X]),
    "roll_flat": (lambda m, x: sq(x.sin().roll(5)), [X]),
    "tril": (lambda m, x: sq(x.sin().tril(1)), [X]),
    "triu": (lambda m, x: sq(x.sin().triu(-1)), [X]),
    "rot90": (lambda m, x: sq(x.sin().rot90(3, (1, 0))), [X]),
    # indexing
    "index": (lambda m, x: sq(x.sin()[I(m, 0, 2, 2)]), [X]),
    "index_two": (lambda m, x: sq(x.sin()[I(m, 0, 2), I(m, 1, 1)]), [X]),
    "index_dim1": (lambda m, x: sq(x.sin()[:, I(m, 0, 2)]), [X]),
    "index_mask": (lambda m, x: sq(x.sin()[x > 0.6]), [X]),
    "index_select": (lambda m, x: sq(x.sin().index_select(1, I(m, 0, 2, 2))), [X]),
    "gather": (lambda m, x: sq(x.sin().gather(1, I(m, [0, 1], [2, 2], [3, 0]))), [X]),
    "masked_fill": (lambda m, x: sq(x.sin().masked_fill(x > 0.6, 2.0)), [X]),
    "masked_fill_bcast": (
        lambda m, x: sq(x.sin().masked_fill(m.tensor([[True], [False], [True]]), 2.0)),
        [X],
    ),
    "masked_fill_tensor": (lambda m, x, v: sq(x.sin().masked_fill(x > 0.6, v.sum())), [X, V]),
    "masked_select": (lambda m, x: sq(x.sin().masked_select(x > 0.6)), [X]),
    "masked_select_bcast": (
        lambda m, x: sq(x.sin().masked_select(m.tensor([[[True, False, True, True]]] * 2))),
        [X],
    ),
    "take": (lambda m, x: sq(x.sin().take(I(m, 0, 5, 5))), [X]),
    "scatter_src": (lambda m, x, s: sq(x.sin().scatter(1, I(m, [0], [2], [3]), s.cos())), [X, C]),
    "scatter_value": (lambda m, x: sq(x.sin().scatter(1, I(m, [0], [2], [3]), 2.0)), [X]),
    "scatter_add": (
        lambda m, x, s: sq(x.sin().scatter_add(1, I(m, [0], [2], [3]), s.cos())),
        [X, C],
    ),
    "index_add": (
        lambda m, x, s: sq(x.sin().index_add(1, I(m, 0, 2), s.cos(), alpha=2)),
        [X, A(3, 2)],
    ),
    "select_scatter": (lambda m, x, s: sq(m.select_scatter(x.sin(), s.cos(), 0, 2)), [X, V]),
    "slice_scatter": (
        lambda m, x, s: sq(m.slice_scatter(x.sin(), s.cos(), 1, 0, 4, 2)),
        [X, A(3, 2)],
    ),
    "diagonal_scatter": (
        lambda m, x, s: sq(m.diagonal_scatter(x.sin(), s.cos(), 1)),
        [X, A(3)],
    ),
    # writes through indices
    "index_put": (lambda m, x, v: sq(x.sin().index_put((I(m, 0, 2),), v.cos())), [X, V]),
    "setitem_mask": (lambda m, x, v: sq(_setitem(x.sin(), x > 0.6, v.cos().sum())), [X, V]),
    "put": (lambda m, x, v: sq(x.sin().put(I(m, 0, 5), v.cos())), [X, A(2)]),
    "masked_scatter": (lambda m, x, v: sq(x.sin().masked_scatter(x > 0.6, v.cos())), [X, X]),
    "index_copy": (lambda m, x, v: sq(x.sin().index_copy(1, I(m, 0, 2), v.cos())), [X, A(3, 2)]),
    "index_fill": (lambda m, x: sq(x.sin().index_fill(1, I(m, 0, 2), 2.0)), [X]),
    # a tensor value: grad.index_select(dim, unique(index)).sum()
    "index_fill_tensor": (
        lambda m, x, v: sq(x.sin().index_fill(1, I(m, 0, 2, 2), v.cos().sum())),
        [X, V],
    ),
    "index_fill_tensor_0d_index": (
        lambda m, x, v: sq(x.sin().index_fill(0, m.tensor(1), v.cos().sum())),
        [X, V],
    ),
    "index_fill_tensor_0d_self": (
        lambda m, x, v: sq(x.sin().index_fill(0, I(m, 0), v.cos().sum())),
        [A(), V],
    ),
    "diag": (lambda m, x: sq(m.diag(x.sin(), 1)), [X]),
    # scatter_reduce_backward
    "scatter_reduce_sum": (
        lambda m, x, s: sq(x.sin().scatter_reduce(0, I(m, [0, 1, 2, 0]), s.cos(), "sum")),
        [X, A(1, 4)],
    ),
    "scatter_reduce_sum_exclude": (
        lambda m, x, s: sq(
            x.sin().scatter_reduce(0, I(m, [0, 1, 2, 0]), s.cos(), "sum", include_self=False)
        ),
        [X, A(1, 4)],
    ),
    "scatter_reduce_prod": (
        lambda m, x, s: sq(x.scatter_reduce(1, I(m, [0, 1], [0, 0], [3, 3]), s, "prod")),
        [X, A(3, 2)],
    ),
    "scatter_reduce_prod_zero": (
        lambda m, x, s: sq(x.scatter_reduce(1, I(m, [0, 1], [0, 0], [3, 3]), s, "prod")),
        [X, [[0.0, 0.5], [0.3, 0.0], [0.2, 0.4]]],
    ),
    "scatter_reduce_prod_exclude": (
        lambda m, x, s: sq(
            x.scatter_reduce(1, I(m, [0, 1], [0, 0], [3, 3]), s, "prod", include_self=False)
        ),
        [X, A(3, 2)],
    ),
    "scatter_reduce_mean": (
        lambda m, x, s: sq(x.sin().scatter_reduce(0, I(m, [0, 1, 2, 0]), s, "mean")),
        [X, A(1, 4)],
    ),
    "scatter_reduce_mean_exclude": (
        lambda m, x, s: sq(x.scatter_reduce(0, I(m, [0, 1, 2, 0]), s, "mean", include_self=False)),
        [X, A(1, 4)],
    ),
    "scatter_reduce_amax_ties": (
        lambda m, x, s: sq(x.scatter_reduce(1, I(m, [0, 0], [0, 0], [3, 3]), s, "amax")),
        [X, [[2.0, 2.0], [0.1, 0.0], [0.2, 5.0]]],
    ),
    "scatter_reduce_amin_exclude": (
        lambda m, x, s: sq(
            x.scatter_reduce(1, I(m, [0, 1], [0, 0], [3, 3]), s, "amin", include_self=False)
        ),
        [X, A(3, 2)],
    ),
    # complex views of real leaves: view_as_real (view_as_complex(grad.contiguous())), conj
    # (grad.conj()), _neg_view (grad.neg()), real and imag (select of view_as_real)
    "view_as_real": (lambda m, x, y: sq(m.view_as_real(cz(m, x, y))), [X, Y4]),
    "real": (lambda m, x, y: sq(cz(m, x, y).real), [X, Y4]),
    "imag": (lambda m, x, y: sq(cz(m, x, y).imag), [X, Y4]),
    "conj": (lambda m, x, y: sq(m.view_as_real(cz(m, x, y).conj() * m.complex(y, x))), [X, Y4]),
    "imag_of_conj": (lambda m, x, y: sq(cz(m, x, y).conj().imag), [X, Y4]),
    "resolve_neg": (lambda m, x, y: sq(cz(m, x, y).conj().imag.resolve_neg()), [X, Y4]),
    "resolve_conj": (
        lambda m, x, y: sq(m.view_as_real(cz(m, x, y).conj().resolve_conj())),
        [X, Y4],
    ),
}

# deeper signatures for the chains of views
DEPTH = {
    "nested_views": 9,
    "flatten_unflatten": 7,
    "squeeze_all": 6,
    "cat": 5,
    **dict.fromkeys(
        ["view_as_real", "real", "imag", "conj", "imag_of_conj", "resolve_neg", "resolve_conj"], 6
    ),
}
# Each case compiles JAX programs (more for each derivative order), so by default a
# representative set runs, to the second derivative but for the cases whose third derivative
# runs formulas of formulas no other case reaches; LEAFGRAD_FORMULA_CASES=all runs every case to
# the third.
ALL = os.environ.get("LEAFGRAD_FORMULA_CASES") == "all"
CORE = (
    "view_of_transposed_grad", "nested_views", "select_dim", "slice_mixed", "diagonal_dims",
    "unfold", "split_sum", "cat", "index_select", "gather", "masked_fill_tensor",
    "masked_select", "scatter_src", "index_add", "slice_scatter", "index_put", "put",
    "masked_scatter", "index_copy", "index_fill_tensor", "scatter_reduce_prod_zero",
    "scatter_reduce_mean", "view_as_real", "imag", "resolve_neg", "alias", "diag",
)  # fmt: skip
THIRD = ("unfold", "masked_scatter", "index_put", "imag")
if ALL:
    CORE, THIRD = tuple(CASES), tuple(CASES)


@pytest.mark.parametrize("name", CORE)
def test_graph(name):
    fn, inputs = CASES[name]
    check_graph(fn, *inputs, depth=DEPTH.get(name, 4), order=3 if name in THIRD else 2)


def _complex_leaf_derivatives(m, fn, order=3):
    """The gradient's graph and the first ``order`` derivatives of ``|fn(z)|^2`` for a complex
    leaf ``z`` (each next one of the sum of the previous one's absolute values)."""
    z = m.tensor(Z, requires_grad=True)
    out = fn(m, z)
    total = out.abs().pow(2).sum() if out.dtype.is_complex else out.pow(2).sum()
    values, sig = [], None
    for _ in range(order):
        (g,) = m.autograd.grad(total, z, create_graph=True)
        sig = sig or graph_signature(g, 6)
        values.append(np.asarray(g.detach().tolist()))
        total = g.abs().sum()
    return sig, values


Z = A(2, 3) + 1j * A(2, 3)
COMPLEX_LEAF = {
    "real": lambda m, z: z.sin().real.pow(3),
    "imag": lambda m, z: z.sin().imag.pow(3),
    "imag_mul": lambda m, z: z.imag * z.real * z.imag,
    "view_as_real": lambda m, z: m.view_as_real(z.sin()).pow(3),
    "conj_imag": lambda m, z: z.sin().conj().imag.resolve_neg().pow(3),
}


@pytest.mark.parametrize("name", list(COMPLEX_LEAF) if ALL else ["imag"])
def test_complex_leaf(name):
    """The views of a complex leaf as real: PyTorch's graphs and three derivatives (the third
    differentiates view_as_complex's formula, view_as_real of the gradient)."""
    ts, tv = _complex_leaf_derivatives(torch, COMPLEX_LEAF[name])
    ls, lv = _complex_leaf_derivatives(lg, COMPLEX_LEAF[name])
    assert ls == ts, f"graph signatures differ:\n torch    {ts}\n leafgrad {ls}"
    for a, b in zip(tv, lv):
        np.testing.assert_allclose(b, a, rtol=1e-6, atol=1e-9)


def _scatter_prod_zeros(m):
    """Two zeros of src scattered to one position by prod: the gradient of src carries
    PyTorch's ``DelayedError`` node, which raises when differentiated."""
    x = m.tensor([[1.0, 2.0, 3.0]], dtype=m.float64, requires_grad=True)
    s = m.tensor([[0.0, 0.0, 0.5]], dtype=m.float64, requires_grad=True)
    out = x.scatter_reduce(1, m.tensor([[0, 0, 1]]), s, "prod")
    gx, gs = m.autograd.grad((out * out).sum(), [x, s], create_graph=True)
    sig = graph_signature(gs, 5)
    try:
        m.autograd.grad(gs.sum(), [x, s])
    except RuntimeError as e:
        return sig, gx.tolist(), gs.tolist(), str(e)
    raise AssertionError("no error")


def test_scatter_reduce_prod_zeros_delayed_error():
    assert _scatter_prod_zeros(lg) == _scatter_prod_zeros(torch)


def test_index_fill_tensor_negative_index_raises_in_backward():
    # index_select refuses the negative index of the value's gradient, create_graph or not
    def fn(m):
        x = m.ones(3, 4, dtype=m.float64, requires_grad=True)
        v = m.tensor(1.5, dtype=m.float64, requires_grad=True)
        out = x.index_fill(0, m.tensor([-1]), v)
        try:
            m.autograd.grad((out * out).sum(), [x, v], create_graph=True)
        except IndexError as e:
            return str(e)

    assert fn(lg) == fn(torch) is not None


# one operand requiring grad: the other joins as a constant
ONE_SIDED = {
    "cat_const": (lambda m, x: sq(m.cat([x.sin(), m.ones(3, 2, dtype=m.float64)], 1)), [X]),
    "scatter_src_only": (
        lambda m, s: sq(m.ones(3, 4, dtype=m.float64).scatter(1, I(m, [0], [2], [3]), s.cos())),
        [C],
    ),
    "index_fill_value_only": (
        lambda m, v: sq(m.tensor(X).index_fill(1, I(m, 3, 1), v.cos().sum())),
        [V],
    ),
    "select_scatter_self_only": (
        lambda m, x: sq(m.select_scatter(x.sin(), m.ones(4, dtype=m.float64), 0, 2)),
        [X],
    ),
}


@pytest.mark.parametrize("name", list(ONE_SIDED) if ALL else list(ONE_SIDED)[1:])
def test_graph_one_operand(name):
    fn, inputs = ONE_SIDED[name]
    check_graph(fn, *inputs, order=3 if ALL else 2)


def test_float32_input_of_cat():
    # a float32 input of a float64 cat: its gradient is narrowed, then cast (ToCopyBackward0)
    def fn(m, x, y):
        return sq(m.cat([x.float().sin(), y]))

    check_graph(fn, A(3), A(2), rtol=1e-5, atol=1e-6, order=3 if ALL else 2)
