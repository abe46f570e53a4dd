"""Differential tests of ``einsum`` against PyTorch: values, gradients, graphs, strides, errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from conftest import both, lg, same_tensor

RNG = np.random.default_rng(7)


def graph(fn, depth=12):
    """The nested (name, children) structure of a grad_fn."""
    if fn is None or depth == 0:
        return None
    return (type(fn).__name__, tuple(graph(f, depth - 1) for f, _ in fn.next_functions))


def _values(shape, dtype):
    if dtype in ("int64", "int32"):
        return RNG.integers(-3, 4, size=shape).astype(dtype)
    if dtype == "bool":
        return RNG.integers(0, 2, size=shape).astype(bool)
    return RNG.standard_normal(shape).astype(dtype)


def run(equation, shapes, dtype="float64", *, requires_grad=True, sublist=None):
    """einsum on equal inputs in both libraries: values, dtype, graph, strides and gradients."""
    vals = [_values(s, dtype) for s in shapes]
    grad = requires_grad and dtype.startswith("float")
    ti = [torch.tensor(v, requires_grad=grad) for v in vals]
    gi = [lg.tensor(v, requires_grad=grad) for v in vals]
    if sublist is None:
        tr, gr = torch.einsum(equation, *ti), lg.einsum(equation, *gi)
    else:
        tr, gr = sublist(torch, ti), sublist(lg, gi)
    tol = {"rtol": 1e-5, "atol": 1e-5} if dtype == "float32" else {}
    same_tensor(tr, gr, **tol)
    assert graph(gr.grad_fn) == graph(tr.grad_fn)
    assert gr.stride() == tr.stride()
    if grad:
        w = _values(tuple(tr.shape), dtype)
        (tr * torch.tensor(w)).sum().backward()
        (gr * lg.tensor(w)).sum().backward()
        for t, g in zip(ti, gi):
            same_tensor(t.grad, g.grad, **tol)


CASES = [
    ("ij,jk->ik", [(2, 3), (3, 4)]),  # matmul
    ("ij,jk", [(2, 3), (3, 4)]),  # implicit output
    (" i j , j k -> i k ", [(2, 3), (3, 4)]),  # spaces
    ("ij,jk->ki", [(2, 3), (3, 4)]),  # PyTorch swaps the bmm operands
    ("bij,bjk->bik", [(5, 2, 3), (5, 3, 4)]),  # batch matmul
    ("xaj,xjb->xba", [(3, 2, 3), (3, 3, 4)]),
    ("i,j->ij", [(2,), (3,)]),  # outer: a mul
    ("i,i", [(3,), (3,)]),  # dot
    ("ii", [(3, 3)]),  # trace
    ("ii->i", [(3, 3)]),  # diagonal
    ("iij->j", [(3, 3, 2)]),
    ("iji->ij", [(3, 2, 3)]),
    ("iii->i", [(3, 3, 3)]),
    ("ij->ji", [(2, 3)]),  # transpose
    ("ij->ij", [(2, 3)]),
    ("ij->", [(2, 3)]),  # sum
    ("ij,jk->", [(2, 3), (3, 4)]),
    ("ij,ij->ij", [(2, 3), (2, 3)]),
    ("ij,ji->ij", [(2, 3), (3, 2)]),
    ("ij,j->i", [(1, 3), (3,)]),  # broadcast size-1 dims
    ("ij,jk->ik", [(2, 1), (3, 4)]),
    ("j,ij->i", [(3,), (2, 3)]),
    ("cd,abd->abc", [(2, 3), (4, 5, 3)]),
    ("abj,jc->cab", [(2, 4, 3), (3, 5)]),
    ("ijk,kji->j", [(2, 3, 4), (4, 3, 2)]),
    ("bhqd,bhkd->bhqk", [(2, 3, 4, 5), (2, 3, 6, 5)]),
    ("...ij,...jk", [(2, 1, 2, 3), (4, 3, 2)]),  # ellipsis broadcasting
    ("...,...", [(2, 3), (3,)]),
    ("i...->...", [(3, 2, 4)]),
    ("b...i,b...i->b...", [(2, 3, 4), (2, 3, 4)]),
    ("...ij->...ji", [(2, 3)]),
    ("", [()]),  # 0-d
    (",", [(), ()]),
    ("i,", [(3,), ()]),
    ("ij,jk", [(0, 3), (3, 4)]),  # empty
    ("ij,jk", [(2, 0), (0, 4)]),
    ("bn,anm,bm->ba", [(2, 3), (4, 3, 5), (2, 5)]),  # bilinear, opt_einsum's path
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    ("abc,cd,de->abe", [(2, 3, 4), (4, 5), (5, 6)]),
    ("ai,bi,ci->abc", [(2, 3), (4, 3), (5, 3)]),
    ("ij,ij,ij->", [(2, 3), (2, 3), (2, 3)]),
    ("i,j,k->ijk", [(2,), (3,), (4,)]),
    ("ij,jk,kl,lm->im", [(2, 3), (3, 4), (4, 5), (5, 2)]),  # 4 operands
    ("ij,jk,kl,lm", [(7, 3), (3, 9), (9, 2), (2, 6)]),
    ("ab,cd,ac,bd->", [(2, 3), (4, 5), (2, 4), (3, 5)]),
    ("ij,jk,kl,lm,mn->in", [(2, 8), (8, 3), (3, 9), (9, 2), (2, 6)]),
]


@pytest.mark.parametrize("equation, shapes", CASES)
def test_einsum_float64(equation, shapes):
    run(equation, shapes)


@pytest.mark.parametrize(
    "equation, shapes",
    [
        ("ij,jk->ik", [(2, 3), (3, 4)]),
        ("bn,anm,bm->ba", [(2, 3), (4, 3, 5), (2, 5)]),
        ("ii->i", [(3, 3)]),
    ],
)
def test_einsum_float32(equation, shapes):
    run(equation, shapes, "float32")


@pytest.mark.parametrize(
    "equation, shapes",
    [
        ("ij,jk->ik", [(2, 3), (3, 4)]),
        ("ij->", [(2, 3)]),  # a sum: int64
        ("i,j->ij", [(2,), (3,)]),
        ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    ],
)
@pytest.mark.parametrize("dtype", ["int64", "int32"])
def test_einsum_integers(equation, shapes, dtype):
    run(equation, shapes, dtype)


def test_einsum_forms():
    """The operands as one list, and the sublist format (with Ellipsis and an output list)."""
    run("ij,jk", [(2, 3), (3, 4)], sublist=lambda m, ops: m.einsum("ij,jk", ops))
    run("", [(2, 3), (3, 4)], sublist=lambda m, ops: m.einsum("ij,jk", tuple(ops)))
    run("", [(2, 3), (3, 4)], sublist=lambda m, ops: m.einsum(ops[0], [0, 1], ops[1], [1, 2]))
    run(
        "",
        [(2, 3), (3, 4)],
        sublist=lambda m, ops: m.einsum(ops[0], [0, Ellipsis], ops[1], [Ellipsis, 30], [30, 0]),
    )


def test_einsum_mixed_dtypes_and_bool():
    a = [[1, 2, 3], [4, 5, 6]]
    both(lambda m: m.einsum("ij,jk", m.tensor(a, dtype=m.float32), m.ones(3, 2, dtype=m.float64)))
    both(lambda m: m.einsum("ij,jk", m.tensor(a), m.ones(3, 2, dtype=m.int32)))
    both(lambda m: m.einsum("i,j", m.tensor(a[0]), m.ones(2, dtype=m.int32)))
    # A dim of size 1 in one operand is summed first (int64), then multiplied.
    both(lambda m: m.einsum("ij,jk", m.tensor(a, dtype=m.int32), m.ones(1, 2, dtype=m.int32)))
    both(lambda m: m.einsum("ij,jk", m.tensor(a).bool(), m.ones(3, 2, dtype=m.bool)))
    both(lambda m: m.einsum("i,j->ij", m.tensor(a[0]).bool(), m.ones(2, dtype=m.bool)))


def test_einsum_second_backward_and_no_grad():
    x = lg.randn(2, 3, requires_grad=True)
    y = lg.einsum("ij,jk->ik", x, lg.randn(3, 4))
    y.sum().backward()
    with pytest.raises(RuntimeError):
        y.sum().backward()
    with lg.no_grad():
        z = lg.einsum("ij,jk->ik", x, lg.randn(3, 4))
    assert z.grad_fn is None and not z.requires_grad


@pytest.mark.parametrize(
    "fn",
    [
        lambda m, a, b: m.einsum("ij.,jk", a, b),
        lambda m, a, b: m.einsum("...i...,j", a, b),
        lambda m, a, b: m.einsum("ij,jk,kl", a, b),
        lambda m, a, b: m.einsum("ij", a, b),
        lambda m, a, b: m.einsum("i1,jk", a, b),
        lambda m, a, b: m.einsum("ijk,jk", a, b),
        lambda m, a, b: m.einsum("...ijk,jk", a, b),
        lambda m, a, b: m.einsum("ij,jk->ii", a, b),
        lambda m, a, b: m.einsum("ij,jk->iz", a, b),
        lambda m, a, b: m.einsum("ij,jk->i..", a, b),
        lambda m, a, b: m.einsum("ij,jk->...i...", a, b),
        lambda m, a, b: m.einsum("ij,jk->i1", a, b),
        lambda m, a, b: m.einsum("ij,ik", a, b),
        lambda m, a, b: m.einsum("ii", a),
        lambda m, a, b: m.einsum("...i,...i", m.ones(2, 3), m.ones(4, 3)),
        lambda m, a, b: m.einsum("ij,jk", a, 3),
        lambda m, a, b: m.einsum(3, a),
        lambda m, a, b: m.einsum("i"),
        lambda m, a, b: m.einsum("i", []),
        lambda m, a, b: m.einsum(a, [0, 60]),
        lambda m, a, b: m.einsum("ij,jk,kl->iz", a, b, m.ones(4, 5)),
        lambda m, a, b: m.einsum("ij,jk,kl->", a, b, m.ones(3, 5)),
    ],
)
def test_einsum_errors(fn):
    both(lambda m: fn(m, m.ones(2, 3), m.ones(3, 4)))


def test_einsum_traces_under_jit():
    """Shapes only drive the frontend (and opt_einsum's path): it runs on tracers."""
    import jax
    import jax.numpy as jnp

    vals = [_values(s, "float64") for s in [(2, 3), (4, 3, 5), (2, 5)]]

    def step(*arrays):
        ops = [lg.tensor(a, requires_grad=True) for a in arrays]
        out = lg.einsum("bn,anm,bm->ba", *ops)
        out.sum().backward()
        return (out._data, *(o.grad._data for o in ops))

    jitted = jax.jit(step)(*[jnp.asarray(v) for v in vals])
    eager = step(*vals)
    for j, e in zip(jitted, eager):
        np.testing.assert_allclose(np.asarray(j), np.asarray(e), rtol=1e-12)
