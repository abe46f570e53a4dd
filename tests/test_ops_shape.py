"""Differential tests of shape ops and indexing (leafgrad/ops/shape.py) against PyTorch 2.13.

Every case runs the same code under torch and leafgrad and compares values (exactly: these ops
only move data), dtypes, shapes, ``grad_fn`` names with their ``next_functions``, views, the
gradients of a weighted sum of the outputs and what a second ``backward`` does.
"""

from __future__ import annotations

import random
import warnings

import jax
import numpy as np
import pytest
import torch
from conftest import Raised, call, lg, same, same_error

FLOATS = ["float32", "float64"]


def _values(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    v = rng.integers(-9, 10, size=shape)
    if dtype == "bool":
        return v > 0
    if dtype.startswith(("float", "complex")):
        return v / 4
    if dtype == "uint8":
        return np.abs(v)
    return v


def _leaf(m, shape, dtype="float32", seed=0, grad=True):
    t = m.tensor(_values(shape, dtype, seed), dtype=getattr(m, dtype))
    return t.requires_grad_() if grad and dtype.startswith("float") else t


def _signature(out):
    """grad_fn name and its next_functions' names, per output; and which outputs are views."""
    outs = out if isinstance(out, (tuple, list)) else (out,)
    sig = []
    for o in outs:
        f = o.grad_fn
        if f is None:
            sig.append((None, o._base is not None))
            continue
        nxt = tuple((None if g is None else type(g).__name__, i) for g, i in f.next_functions)
        sig.append((type(f).__name__, nxt, o._base is not None))
    return sig


def _run(fn, shapes, dtype, grad):
    def run(m):
        xs = [_leaf(m, s, dtype, i, grad) for i, s in enumerate(shapes)]
        out = fn(m, *xs)
        outs = out if isinstance(out, (tuple, list)) else (out,)
        result = {"out": out, "sig": _signature(out)}
        diff = [o for o in outs if o.requires_grad]
        if diff:
            total = 0
            for o in diff:
                w = np.arange(1, o.numel() + 1, dtype=np.float64).reshape(tuple(o.shape)) / 8
                total = total + (o * m.tensor(w, dtype=o.dtype)).sum()
            total.backward()
            result["grads"] = [x.grad for x in xs]
            try:
                total.backward()
                result["second"] = "ok"
            except RuntimeError as e:
                result["second"] = str(e).split("\n")[0]
        return result

    return run


def _strip(texts):
    # PyTorch's C++ warnings end with " (Triggered internally at <build path>)"; leafgrad's stop
    # before it.
    return [w.split(" (Triggered internally at")[0] for w in texts]


def both(fn):
    """conftest's ``both`` (values compared exactly), with warnings compared as ``_strip`` says."""
    t, tw = call(fn, torch)
    g, gw = call(fn, lg)
    if isinstance(t, Raised) or isinstance(g, Raised):
        assert isinstance(g, Raised), f"torch raised {t!r}, leafgrad returned {g!r}"
        assert isinstance(t, Raised), f"leafgrad raised {g!r}, torch returned {t!r}"
        same_error(t, g)
    else:
        same(t, g, exact=True)
    assert _strip(gw) == _strip(tw), f"\ntorch warned:    {tw}\nleafgrad warned: {gw}"
    return t, g


def check(fn, *shapes, dtype="float32", grad=True):
    """Compare ``fn(module, *leaves)`` and the gradients of its outputs under both libraries."""
    return both(_run(fn, shapes, dtype, grad))


def _plan(cases, every):
    """Case x dtype parameters: dtype ``d`` runs every ``every[d]``-th case (offset by ``d``'s
    position), so each dtype covers the list spread out while the file stays fast."""
    params = []
    for k, (dtype, step) in enumerate(every.items()):
        for case in cases[k % step :: step]:
            name, rest = case[0], case[1:]
            params.append(pytest.param(*rest, dtype, id=f"{name}-{dtype}"))
    return params


FLOAT_PLAN = {"float32": 1, "float64": 4}
INT_PLAN = {"int64": 2, "bool": 3, "int32": 7, "uint8": 7}


def _idx(m, data):
    return m.tensor(data, dtype=m.int64)


def _mask(m, data):
    return m.tensor(data, dtype=m.bool)


# --- views and reshapes ------------------------------------------------------------------------

VIEW_CASES = [
    ("view", lambda m, x: x.view(6, 4), [(2, 3, 4)]),
    ("view_-1", lambda m, x: x.view(-1), [(2, 3, 4)]),
    ("view_tuple", lambda m, x: x.view((3, -1)), [(2, 3, 4)]),
    ("view_0d", lambda m, x: x.view(1, 1), [()]),
    ("view_to_0d", lambda m, x: x.view(()), [(1,)]),
    ("view_empty", lambda m, x: x.view(0, -1), [(0, 3)]),
    ("view_t_ok", lambda m, x: x.t().view(4, 3), [(3, 4)]),
    ("view_t_split", lambda m, x: x.t().view(2, 2, 3), [(3, 4)]),
    ("view_as", lambda m, x, y: x.view_as(y), [(2, 6), (3, 4)]),
    ("reshape", lambda m, x: x.reshape(4, 6), [(2, 3, 4)]),
    ("reshape_same", lambda m, x: x.reshape(2, 3, 4), [(2, 3, 4)]),
    ("reshape_copy", lambda m, x: x.transpose(0, 1).reshape(-1), [(2, 3, 4)]),
    ("reshape_fn", lambda m, x: m.reshape(x, (4, 3)), [(3, 4)]),
    ("reshape_as", lambda m, x, y: x.reshape_as(y), [(2, 6), (3, 4)]),
    ("flatten", lambda m, x: x.flatten(), [(2, 3, 4)]),
    ("flatten_1d", lambda m, x: x.flatten(), [(4,)]),
    ("flatten_0d", lambda m, x: x.flatten(), [()]),
    ("flatten_range", lambda m, x: m.flatten(x, 1, -1), [(2, 3, 4)]),
    ("flatten_noop", lambda m, x: x.flatten(1, 1), [(2, 3, 4)]),
    ("flatten_t", lambda m, x: x.t().flatten(), [(3, 4)]),
    ("unflatten", lambda m, x: x.unflatten(1, (2, -1)), [(2, 6)]),
    ("unflatten_fn", lambda m, x: m.unflatten(x, -1, (3, 2)), [(2, 6)]),
    ("squeeze", lambda m, x: x.squeeze(), [(1, 3, 1)]),
    ("squeeze_dim", lambda m, x: x.squeeze(-1), [(1, 3, 1)]),
    ("squeeze_noop", lambda m, x: x.squeeze(1), [(1, 3, 1)]),
    ("squeeze_dims", lambda m, x: m.squeeze(x, (0, 1)), [(1, 3, 1)]),
    ("squeeze_0d", lambda m, x: x.squeeze(0), [()]),
    ("unsqueeze", lambda m, x: x.unsqueeze(-1), [(3, 4)]),
    ("unsqueeze_fn", lambda m, x: m.unsqueeze(x, 1), [(3, 4)]),
    ("transpose", lambda m, x: x.transpose(0, 2), [(2, 3, 4)]),
    ("swapaxes", lambda m, x: m.swapaxes(x, -1, 0), [(2, 3, 4)]),
    ("swapdims", lambda m, x: x.swapdims(1, 0), [(2, 3)]),
    ("t", lambda m, x: x.t(), [(3, 4)]),
    ("t_1d", lambda m, x: m.t(x), [(4,)]),
    ("T", lambda m, x: x.T, [(3, 4)]),
    ("mT", lambda m, x: x.mT, [(2, 3, 4)]),
    ("mH", lambda m, x: x.mH, [(3, 4)]),
    ("H", lambda m, x: x.H, [(3, 4)]),
    ("permute", lambda m, x: x.permute(2, 0, 1), [(2, 3, 4)]),
    ("permute_tuple", lambda m, x: m.permute(x, (-1, 0, 1)), [(2, 3, 4)]),
    ("movedim", lambda m, x: x.movedim(0, -1), [(2, 3, 4)]),
    ("movedim_seq", lambda m, x: m.moveaxis(x, (0, 1), (2, 0)), [(2, 3, 4)]),
    ("expand", lambda m, x: x.expand(2, 3, 4), [(3, 1)]),
    ("expand_-1", lambda m, x: x.expand(-1, 5), [(3, 1)]),
    ("expand_same", lambda m, x: x.expand(3, 1), [(3, 1)]),
    ("expand_0d", lambda m, x: x.expand(2, 2), [()]),
    ("expand_as", lambda m, x, y: x.expand_as(y), [(4,), (3, 4)]),
    ("broadcast_to", lambda m, x: m.broadcast_to(x, (2, 4)), [(4,)]),
    ("broadcast_tensors", lambda m, x, y: m.broadcast_tensors(x, y), [(3, 1), (4,)]),
    ("broadcast_same", lambda m, x, y: m.broadcast_tensors(x, y), [(3, 4), (4,)]),
    ("contiguous", lambda m, x: x.contiguous(), [(3, 4)]),
    ("contiguous_t", lambda m, x: x.t().contiguous(), [(3, 4)]),
    ("narrow", lambda m, x: x.narrow(1, 1, 2), [(3, 4)]),
    ("narrow_neg", lambda m, x: m.narrow(x, 0, -2, 2), [(3, 4)]),
    ("select", lambda m, x: x.select(1, -1), [(3, 4)]),
    ("select_fn", lambda m, x: m.select(x, 0, 2), [(3, 4)]),
    ("diagonal", lambda m, x: x.diagonal(), [(3, 4)]),
    ("diagonal_off", lambda m, x: m.diagonal(x, 1, 2, 0), [(3, 4, 5)]),
    ("diagonal_neg", lambda m, x: x.diagonal(-1), [(3, 4)]),
    ("diagonal_far", lambda m, x: x.diagonal(7), [(3, 4)]),
    ("split", lambda m, x: x.split(2), [(5, 3)]),
    ("split_dim", lambda m, x: m.split(x, 2, dim=1), [(2, 3)]),
    ("split_sizes", lambda m, x: x.split([1, 0, 4]), [(5, 3)]),
    ("split_empty", lambda m, x: x.split(0), [(0, 3)]),
    ("split_with_sizes", lambda m, x: x.split_with_sizes([2, 1], 1), [(2, 3)]),
    ("chunk", lambda m, x: x.chunk(3), [(5, 3)]),
    ("chunk_dim", lambda m, x: m.chunk(x, 2, -1), [(2, 3)]),
    ("chunk_more", lambda m, x: x.chunk(8), [(5,)]),
    ("tensor_split", lambda m, x: x.tensor_split(3), [(7, 2)]),
    ("tensor_split_idx", lambda m, x: m.tensor_split(x, [1, 5, 3, 9], dim=0), [(7, 2)]),
    ("tensor_split_dim", lambda m, x: x.tensor_split(2, dim=1), [(2, 3)]),
    ("unbind", lambda m, x: x.unbind(1), [(2, 3)]),
    ("unbind_fn", lambda m, x: m.unbind(x), [(2, 3)]),
    # Chains through views: the recorded strides decide copies further down.
    ("chain_view_of_slice", lambda m, x: x[:, 1:].reshape(-1), [(3, 4)]),
    ("chain_view_of_row", lambda m, x: x[1:].reshape(-1), [(3, 4)]),
    ("chain_expand_reshape", lambda m, x: x.expand(2, 3).reshape(6), [(3,)]),
    ("chain_permute_view", lambda m, x: x.permute(1, 0, 2).flatten(1), [(2, 3, 4)]),
    ("chain_unsqueeze_t", lambda m, x: x.t().unsqueeze(0).reshape(12), [(3, 4)]),
    ("chain_diag_is_contig", lambda m, x: x.diagonal().is_contiguous(), [(3, 3)]),
    ("chain_reshape_alias", lambda m, x: x.t().reshape(4, 3, 1), [(3, 4)]),
    ("chain_reshape_alias_same", lambda m, x: x.t().reshape_as(x.t()), [(3, 4)]),
    ("chain_reshape_alias_step", lambda m, x: x[:, ::2].reshape(3, 2, 1), [(3, 4)]),
    ("chain_flatten_expand", lambda m, x: x.expand(2, 3, 4).flatten(1), [(3, 4)]),
    ("chain_unflatten_t", lambda m, x: x.t().unflatten(0, (2, 2)), [(3, 4)]),
    ("chain_stride", lambda m, x: x.transpose(0, 1)[::2].stride(), [(3, 4)]),
]


@pytest.mark.parametrize("fn,shapes,dtype", _plan(VIEW_CASES, FLOAT_PLAN))
def test_views(fn, shapes, dtype):
    check(fn, *shapes, dtype=dtype)


@pytest.mark.parametrize("fn,shapes,dtype", _plan(VIEW_CASES, INT_PLAN))
def test_views_integer(fn, shapes, dtype):
    check(fn, *shapes, dtype=dtype)


@pytest.mark.parametrize("prop", ["mH", "H", "mT"])
def test_complex_adjoints(prop):
    check(lambda m, x: getattr(x.to(m.complex64) * (1 + 2j), prop), (3, 4))


@pytest.mark.parametrize("shape", [(), (4,), (3, 4), (2, 3, 4)])
def test_T_warning(shape):
    check(lambda m, x: x.T, shape)


def test_views_share_version_counter():
    def fn(m):
        x = _leaf(m, (3, 4))
        views = [x.view(-1), x[0], x.t(), x.expand(2, 3, 4), x.split(2)[1], x[...], x.T]
        return [(v._version, v._base is x) for v in views]

    both(fn)


def test_view_of_requires_grad_under_no_grad():
    def fn(m):
        x = _leaf(m, (3, 4))
        with m.no_grad():
            v = x[0]
        return v.requires_grad, v.is_leaf, v.grad_fn is None

    both(fn)


VIEW_ERRORS = [
    lambda m, x: x.view(5, -1),
    lambda m, x: x.view(-1, -1),
    lambda m, x: x.view(-2, 6),
    lambda m, x: x.t().view(-1),
    lambda m, x: x.reshape(7),
    lambda m, x: x.flatten(2, 0),
    lambda m, x: x.flatten(0, 3),
    lambda m, x: x.unflatten(1, (3, 3)),
    lambda m, x: x.squeeze(3),
    lambda m, x: x.squeeze((0, 0)),
    lambda m, x: x.unsqueeze(4),
    lambda m, x: x.transpose(0, 3),
    lambda m, x: x.permute(0),
    lambda m, x: x.permute(0, 0, 1),
    lambda m, x: x.permute(0, 1, 2),
    lambda m, x: x.unsqueeze(0).t(),
    lambda m, x: x[0].mT,
    lambda m, x: x[0].mH,
    lambda m, x: x[0].H,
    lambda m, x: x.unsqueeze(0).H,
    lambda m, x: x.expand(4),
    lambda m, x: x.expand(3, 5),
    lambda m, x: x.expand(-1, 3, 4),
    lambda m, x: x.narrow(0, 2, 2),
    lambda m, x: x.narrow(0, 4, 0),
    lambda m, x: x.narrow(0, -4, 1),
    lambda m, x: x.select(0, 3),
    lambda m, x: x.select(2, 0),
    lambda m, x: x.diagonal(0, 1, 1),
    lambda m, x: x.split(0),
    lambda m, x: x.split(-1),
    lambda m, x: x.split([1, 1]),
    lambda m, x: x.chunk(0),
    lambda m, x: x.tensor_split(0),
    lambda m, x: x[0, 0].tensor_split(2),
    lambda m, x: x.movedim(0, 5),
    lambda m, x: x.movedim((0, 1), (0,)),
    lambda m, x: x.unbind(2),
    lambda m, x: m.broadcast_tensors(x, x[:, :2]),
    lambda m, x: x.reshape((2.0, 6)),
    lambda m, x: x.flip(0.0),
]


@pytest.mark.parametrize("fn", VIEW_ERRORS)
def test_view_errors(fn):
    t, _ = both(lambda m: fn(m, _leaf(m, (3, 4))))
    assert t.__class__.__name__ == "Raised", t


# --- copies: repeat, flip, roll, triangles, diagonals, joins --------------------------------

COPY_CASES = [
    ("repeat", lambda m, x: x.repeat(2, 1), [(3, 4)]),
    ("repeat_more", lambda m, x: x.repeat((2, 1, 3)), [(3, 4)]),
    ("repeat_0d", lambda m, x: x.repeat(3), [()]),
    ("repeat_zero", lambda m, x: x.repeat(0, 2), [(3, 4)]),
    ("tile", lambda m, x: x.tile((2,)), [(3, 4)]),
    ("tile_more", lambda m, x: m.tile(x, (2, 1, 2)), [(4,)]),
    ("repeat_interleave", lambda m, x: x.repeat_interleave(2), [(2, 3)]),
    ("repeat_interleave_dim", lambda m, x: m.repeat_interleave(x, 3, dim=1), [(2, 3)]),
    ("repeat_interleave_0d", lambda m, x: x.repeat_interleave(2), [()]),
    (
        "repeat_interleave_tensor",
        lambda m, x: x.repeat_interleave(_idx(m, [1, 0, 2]), dim=1),
        [(2, 3)],
    ),
    ("repeat_interleave_tensor1", lambda m, x: x.repeat_interleave(_idx(m, [2])), [(2, 3)]),
    ("flip", lambda m, x: x.flip(0), [(3, 4)]),
    ("flip_dims", lambda m, x: m.flip(x, (0, -1)), [(2, 3, 4)]),
    ("flip_0d", lambda m, x: x.flip(()), [()]),
    ("fliplr", lambda m, x: x.fliplr(), [(3, 4)]),
    ("flipud", lambda m, x: m.flipud(x), [(4,)]),
    ("roll", lambda m, x: x.roll(5), [(3, 4)]),
    ("roll_dim", lambda m, x: m.roll(x, -1, 0), [(3, 4)]),
    ("roll_dims", lambda m, x: x.roll((1, 2), (1, 0)), [(3, 4)]),
    ("roll_empty", lambda m, x: x.roll(1, 0), [(0, 2)]),
    ("tril", lambda m, x: x.tril(), [(3, 4)]),
    ("tril_k", lambda m, x: m.tril(x, -1), [(2, 3, 4)]),
    ("triu", lambda m, x: x.triu(1), [(3, 4)]),
    ("triu_far", lambda m, x: m.triu(x, diagonal=-5), [(3, 4)]),
    ("diag_vec", lambda m, x: x.diag(), [(3,)]),
    ("diag_vec_k", lambda m, x: m.diag(x, -2), [(3,)]),
    ("diag_mat", lambda m, x: x.diag(), [(3, 4)]),
    ("diag_mat_k", lambda m, x: m.diag(x, 1), [(3, 4)]),
    ("diag_embed", lambda m, x: x.diag_embed(), [(2, 3)]),
    ("diag_embed_k", lambda m, x: m.diag_embed(x, 1, 0, 2), [(2, 3)]),
    ("diag_embed_swap", lambda m, x: x.diag_embed(-1, 2, 0), [(2, 3)]),
    ("diagflat", lambda m, x: x.diagflat(), [(2, 2)]),
    ("diagflat_k", lambda m, x: m.diagflat(x, -1), [(3,)]),
    ("cat", lambda m, x, y: m.cat([x, y]), [(2, 3), (1, 3)]),
    ("cat_dim", lambda m, x, y: m.cat((x, y), dim=-1), [(2, 3), (2, 1)]),
    ("cat_one", lambda m, x: m.cat([x]), [(2, 3)]),
    ("cat_legacy_empty", lambda m, x, y: m.cat([x, y], 1), [(2, 3), (0,)]),
    ("concat", lambda m, x, y: m.concat([x, y], 0), [(2, 3), (1, 3)]),
    ("concatenate", lambda m, x, y: m.concatenate([x, y], axis=0), [(2, 3), (1, 3)]),
    ("stack", lambda m, x, y: m.stack([x, y]), [(2, 3), (2, 3)]),
    ("stack_last", lambda m, x, y: m.stack((x, y), -1), [(2, 3), (2, 3)]),
    ("stack_0d", lambda m, x, y: m.stack((x, y)), [(), ()]),
    ("hstack", lambda m, x, y: m.hstack([x, y]), [(2, 3), (2, 1)]),
    ("hstack_1d", lambda m, x, y: m.hstack([x, y]), [(2,), (3,)]),
    ("hstack_0d", lambda m, x, y: m.hstack([x, y]), [(), ()]),
    ("vstack", lambda m, x, y: m.vstack([x, y]), [(3,), (3,)]),
    ("vstack_2d", lambda m, x, y: m.vstack([x, y]), [(2, 3), (1, 3)]),
    ("dstack", lambda m, x, y: m.dstack([x, y]), [(3,), (3,)]),
    ("dstack_2d", lambda m, x, y: m.dstack([x, y]), [(2, 3), (2, 3)]),
    ("dstack_0d", lambda m, x, y: m.dstack([x, y]), [(), ()]),
]


@pytest.mark.parametrize("fn,shapes,dtype", _plan(COPY_CASES, FLOAT_PLAN))
def test_copies(fn, shapes, dtype):
    check(fn, *shapes, dtype=dtype)


@pytest.mark.parametrize("fn,shapes,dtype", _plan(COPY_CASES, INT_PLAN))
def test_copies_integer(fn, shapes, dtype):
    check(fn, *shapes, dtype=dtype)


def test_cat_promotes_dtypes():
    def fn(m):
        a = _leaf(m, (2,), "float32")
        b = _leaf(m, (2,), "int64", 1)
        c = _leaf(m, (2,), "float64", 2)
        return m.cat([a, b]), m.cat([b, a, c]), m.stack([b, a])

    both(fn)


COPY_ERRORS = [
    lambda m, x: x.repeat(2),
    lambda m, x: x.flip(0, 0),
    lambda m, x: x.flip(2),
    lambda m, x: x[0].fliplr(),
    lambda m, x: x[0, 0].flipud(),
    lambda m, x: x.roll((1, 2), 0),
    lambda m, x: x.roll(1, 2),
    lambda m, x: x[0].tril(),
    lambda m, x: x[0].triu(),
    lambda m, x: x.unsqueeze(0).diag(),
    lambda m, x: x.diag_embed(0, 0, 0),
    lambda m, x: x.repeat_interleave(-1),
    lambda m, x: x.repeat_interleave(_idx(m, [1, 2]), dim=0),
    lambda m, x: x.repeat_interleave(_idx(m, [1, -1, 1]), dim=0),
    lambda m, x: x.repeat_interleave(m.tensor([1.0, 2.0, 1.0]), dim=0),
    lambda m, x: m.cat([]),
    lambda m, x: m.cat([x, x[0]]),
    lambda m, x: m.cat([x, x[:, :2]]),
    lambda m, x: m.cat([x, x[0, 0]]),
    lambda m, x: m.cat([x, x], 2),
    lambda m, x: m.stack([]),
    lambda m, x: m.stack([x, x[0]]),
    lambda m, x: m.stack([x, x[:, :2]]),
    lambda m, x: m.stack([x, x], 3),
]


@pytest.mark.parametrize("fn", COPY_ERRORS)
def test_copy_errors(fn):
    t, _ = both(lambda m: fn(m, _leaf(m, (3, 4))))
    assert t.__class__.__name__ == "Raised", t


# --- masks, gathers, scatters ------------------------------------------------------------

MASK = [[True, False, True, False], [False, False, False, False], [True, True, True, True]]

GATHER_CASES = [
    ("masked_fill", lambda m, x: x.masked_fill(_mask(m, MASK), -1.5), [(3, 4)]),
    ("masked_fill_int", lambda m, x: m.masked_fill(x, _mask(m, MASK), 2), [(3, 4)]),
    ("masked_fill_bcast_mask", lambda m, x: x.masked_fill(_mask(m, MASK[0]), 0.5), [(3, 4)]),
    ("masked_fill_bcast_self", lambda m, x: x.masked_fill(_mask(m, MASK), 0.5), [(4,)]),
    ("masked_fill_tensor", lambda m, x, v: x.masked_fill(_mask(m, MASK), v), [(3, 4), ()]),
    ("masked_fill_const", lambda m, x: x.masked_fill(_mask(m, MASK), m.tensor(3.0)), [(3, 4)]),
    ("masked_fill_0d", lambda m, x: x.masked_fill(_mask(m, True), 1.0), [()]),
    ("masked_select", lambda m, x: x.masked_select(_mask(m, MASK)), [(3, 4)]),
    ("masked_select_bcast", lambda m, x: m.masked_select(x, _mask(m, MASK)), [(4,)]),
    ("masked_select_none", lambda m, x: x.masked_select(_mask(m, MASK[1])), [(3, 4)]),
    ("gather", lambda m, x: x.gather(0, _idx(m, [[0, 1, 2, 0], [2, 2, 1, 0]])), [(3, 4)]),
    ("gather_dup", lambda m, x: m.gather(x, 1, _idx(m, [[0, 0], [3, 3], [1, 0]])), [(3, 4)]),
    ("gather_small", lambda m, x: x.gather(1, _idx(m, [[1]])), [(3, 4)]),
    ("gather_0d", lambda m, x: x.gather(0, _idx(m, 0)), [()]),
    ("gather_empty", lambda m, x: x.gather(0, m.zeros(0, 4, dtype=m.int64)), [(3, 4)]),
    (
        "scatter_src",
        lambda m, x, s: x.scatter(0, _idx(m, [[0, 1, 2, 0], [2, 0, 1, 1]]), s),
        [(3, 4), (2, 4)],
    ),  # noqa: E501
    (
        "scatter_src_dim1",
        lambda m, x, s: m.scatter(x, 1, _idx(m, [[3, 1], [0, 2]]), s),
        [(3, 4), (2, 2)],
    ),  # noqa: E501
    ("scatter_value", lambda m, x: x.scatter(1, _idx(m, [[3, 1], [0, 2]]), 2.5), [(3, 4)]),
    ("scatter_value_kw", lambda m, x: m.scatter(x, 0, _idx(m, [[1]]), value=-1.0), [(3, 4)]),
    (
        "scatter_add",
        lambda m, x, s: x.scatter_add(0, _idx(m, [[0, 0, 2, 0], [0, 1, 1, 1]]), s),
        [(3, 4), (2, 4)],
    ),  # noqa: E501
    (
        "scatter_add_fn",
        lambda m, x, s: m.scatter_add(x, 1, _idx(m, [[3, 3, 3]]), s),
        [(3, 4), (1, 3)],
    ),  # noqa: E501
    ("index_select", lambda m, x: x.index_select(0, _idx(m, [2, 0, 2])), [(3, 4)]),
    (
        "index_select_int32",
        lambda m, x: m.index_select(x, 1, m.tensor([3, 1], dtype=m.int32)),
        [(3, 4)],
    ),  # noqa: E501
    ("index_select_0d_idx", lambda m, x: x.index_select(1, _idx(m, 2)), [(3, 4)]),
    ("index_select_0d", lambda m, x: x.index_select(0, _idx(m, [0, 0])), [()]),
    ("take", lambda m, x: x.take(_idx(m, [[0, 11], [-1, 5]])), [(3, 4)]),
    ("take_fn", lambda m, x: m.take(x, _idx(m, [1, 1])), [(2, 3)]),
    ("take_along_dim", lambda m, x: x.take_along_dim(_idx(m, [[0, 1, 2, 0]]), 0), [(3, 4)]),
    (
        "take_along_dim_bcast",
        lambda m, x: m.take_along_dim(x, _idx(m, [[2], [0], [1]]), dim=1),
        [(3, 4)],
    ),  # noqa: E501
    ("take_along_dim_none", lambda m, x: x.take_along_dim(_idx(m, [0, 11, 5])), [(3, 4)]),
]


@pytest.mark.parametrize("fn,shapes,dtype", _plan(GATHER_CASES, FLOAT_PLAN))
def test_gathers(fn, shapes, dtype):
    check(fn, *shapes, dtype=dtype)


@pytest.mark.parametrize("fn,shapes,dtype", _plan(GATHER_CASES, INT_PLAN))
def test_gathers_integer(fn, shapes, dtype):
    check(fn, *shapes, dtype=dtype)


def test_nonzero_argwhere():
    def fn(m):
        x = _leaf(m, (3, 4))
        z = _leaf(m, (), "int64", 3)
        e = m.zeros(0, 2)
        return [
            x.nonzero(),
            m.nonzero(x, as_tuple=True),
            m.argwhere(x),
            x[1].nonzero(),
            z.nonzero(),
            m.nonzero(z, as_tuple=True),
            e.nonzero(),
            e.nonzero(as_tuple=True),
            _mask(m, MASK).argwhere(),
        ]

    both(fn)


GATHER_ERRORS = [
    lambda m, x: x.masked_fill(_idx(m, MASK), 1.0),
    lambda m, x: x.masked_fill(_mask(m, MASK), m.ones(2)),
    lambda m, x: x.masked_fill(_mask(m, [True, False]), 1.0),
    lambda m, x: x.masked_select(_idx(m, MASK)),
    lambda m, x: x.masked_select(_mask(m, [True, False])),
    lambda m, x: x.gather(0, _idx(m, [0, 1])),
    lambda m, x: x.gather(0, m.tensor([[0, 1]], dtype=m.int16)),
    lambda m, x: x.gather(0, _idx(m, [[3, 1]])),
    lambda m, x: x.gather(0, _idx(m, [[-1, 1]])),
    lambda m, x: x.gather(0, _idx(m, [[0, 0, 0, 0, 0]])),
    lambda m, x: x.gather(2, _idx(m, [[0]])),
    lambda m, x: x.scatter(0, _idx(m, [[5]]), 1.0),
    lambda m, x: x.scatter(0, _idx(m, [[0]]), x.double()),
    lambda m, x: x.scatter(0, _idx(m, [[0, 0, 0, 0, 0]]), x),
    lambda m, x: x.scatter(0, m.tensor([[0]], dtype=m.int16), x),
    lambda m, x: x.scatter(0, _idx(m, [0]), x),
    lambda m, x: x.index_select(0, _idx(m, [[0]])),
    lambda m, x: x.index_select(0, _idx(m, [3])),
    lambda m, x: x.index_select(0, m.tensor([0.0])),
    lambda m, x: x.take(_idx(m, [12])),
    lambda m, x: x.take(m.tensor([1], dtype=m.int32)),
    lambda m, x: x.take_along_dim(_idx(m, [0]), 0),
    lambda m, x: x.take_along_dim(m.tensor([[0]], dtype=m.int32), 0),
    lambda m, x: x.gather(0, [0]),
    lambda m, x: x.masked_select([True]),
    lambda m, x: x.index_select(0, [0]),
    lambda m, x: x.take([0]),
    lambda m, x: x.take_along_dim([0]),
    lambda m, x: x.scatter_add(0, [[0]], x),
    lambda m, x: m.cat(x),
    lambda m, x: m.stack(x),
    lambda m, x: m.cat([x, 1]),
]


@pytest.mark.parametrize("fn", GATHER_ERRORS)
def test_gather_errors(fn):
    t, _ = both(lambda m: fn(m, _leaf(m, (3, 4))))
    assert t.__class__.__name__ == "Raised", t


# --- __getitem__ ---------------------------------------------------------------------------------

INDEXES = [
    0,
    -1,
    np.int64(1),
    slice(1, None),
    slice(None),
    slice(None, None, 2),
    slice(-2, None),
    slice(1, 100),
    slice(-100, 2),
    slice(3, 1),
    None,
    Ellipsis,
    True,
    False,
    [0, 2],
    [[0, 1], [1, 2]],
    [True, False, True],
    (0, 1),
    (slice(None), 0),
    (slice(None), slice(None)),
    (Ellipsis,),
    (slice(None),),
    [slice(None), 1],
    (Ellipsis, None),
    (None, Ellipsis, 0),
    (Ellipsis, 1),
    (slice(None, None, 2), slice(1, 3)),
    (slice(None), [0, 2]),
    ([0, 2], 1),
    ([0, 2], [1, 3]),
    ([[0], [2]], [1, 3]),
    (0, slice(None), [0, 1]),
    ([0, 1], slice(None), [0, 1]),
    ([0, 1], slice(None), 2),
    (slice(None), [1, 0], [0, 1]),
    (None, [0, 1]),
    ([1, 0], None, [2, 1]),
    (slice(1, None), [[0], [1]], slice(None, None, -1) if False else slice(None, 2)),
    (True, 0),
    (0, False),
    (Ellipsis, [1, 0]),
    ([], slice(None)),
    (Ellipsis, Ellipsis),
]


def _tensor_index(m, idx):
    if isinstance(idx, tuple):
        return tuple(_tensor_index(m, i) for i in idx)
    if isinstance(idx, list) and not any(isinstance(i, slice) for i in idx):
        arr = np.asarray(idx)
        return m.tensor(arr, dtype=m.bool if arr.dtype == bool else m.int64)
    return idx


INDEX_CASES = [(repr(i), i) for i in INDEXES]


@pytest.mark.parametrize("index,dtype", _plan(INDEX_CASES, {"float32": 1, "float64": 5}))
def test_getitem(index, dtype):
    check(lambda m, x: x[index], (3, 4, 5), dtype=dtype)


@pytest.mark.parametrize("index", INDEXES, ids=[repr(i) for i in INDEXES])
def test_getitem_tensor_indices(index):
    check(lambda m, x: x[_tensor_index(m, index)], (3, 4, 5))


@pytest.mark.parametrize("index,dtype", _plan(INDEX_CASES, {"int64": 3, "bool": 4}))
def test_getitem_integer(index, dtype):
    check(lambda m, x: x[index], (3, 4, 5), dtype=dtype)


GETITEM_CASES = [
    ("mask", lambda m, x: x[x > 0]),
    ("mask_row", lambda m, x: x[_mask(m, [True, False, True])]),
    ("mask_2d_then", lambda m, x: x[x[:, :, 0] > 0, 1]),
    ("mask_middle", lambda m, x: x[:, _mask(m, [True, False, False, True])]),
    ("mask_0d", lambda m, x: x[_mask(m, True)]),
    ("mask_0d_false", lambda m, x: x[_mask(m, False), 0]),
    ("tensor_0d_int", lambda m, x: x[_idx(m, 1)]),
    ("tensor_0d_int_mixed", lambda m, x: x[0, _idx(m, 1)]),
    ("tensor_int32", lambda m, x: x[m.tensor([2, 0], dtype=m.int32)]),
    ("neg_tensor", lambda m, x: x[_idx(m, [-1, -3])]),
    ("dup_tensor", lambda m, x: x[:, _idx(m, [1, 1, 1])]),
    ("empty_tensor", lambda m, x: x[_idx(m, [])]),
    ("0d_ellipsis", lambda m, x: x[0, 0, 0][...]),
    ("0d_none", lambda m, x: x[0, 0, 0][None]),
    ("0d_true", lambda m, x: x[0, 0, 0][True]),
    ("chain", lambda m, x: x[1:][:, 0][None, ::2]),
]


@pytest.mark.parametrize("name,fn", GETITEM_CASES, ids=[c[0] for c in GETITEM_CASES])
def test_getitem_more(name, fn):
    check(fn, (3, 4, 5))


def test_getitem_uint8_mask_warns():
    # PyTorch warns again in backward; leafgrad's backward does not (forward compared).
    check(lambda m, x: x[m.tensor([1, 0, 1], dtype=m.uint8)], (3, 2), grad=False)


def test_scatter_src_larger_than_index():
    # PyTorch's own backward rejects this gradient shape; the forward is compared.
    check(lambda m, x, s: x.scatter(1, _idx(m, [[3, 1], [0, 2]]), s), (3, 4), (3, 5), grad=False)


GETITEM_ERRORS = [
    5,
    -4,
    (0, 4),
    (0, 0, 0, 0),
    (Ellipsis, 0, 0, 0, 0),
    [0, 3],
    (slice(None), [4]),
    slice(None, None, -1),
    slice(None, None, 0),
    1.5,
    "a",
    ([0, 1], [0, 1, 2]),
    [True, False],
]


@pytest.mark.parametrize("index", GETITEM_ERRORS, ids=[repr(i) for i in GETITEM_ERRORS])
def test_getitem_errors(index):
    t, _ = both(lambda m: _leaf(m, (3, 4, 5))[index])
    assert t.__class__.__name__ == "Raised", t


def test_getitem_float_tensor_index_error():
    """A float index tensor is refused with PyTorch's IndexError."""
    both(lambda m: _leaf(m, (3, 4))[m.tensor([0.0])])


# --- under jax.jit --------------------------------------------------------------------------------


def test_jit_traces_shape_ops():
    """Static-shape ops run with tracers; data-dependent ones raise a clear error."""
    x = lg.tensor(np.arange(12.0).reshape(3, 4), dtype=lg.float64)
    idx = lg.tensor([[0, 2, 1, 0]])

    def f(a, i):
        y = a.t().reshape(-1)[2:9].view(7, 1).expand(7, 2)
        z = lg.cat([y, a[i[0, :3]].t()[:, :2]], 0).gather(0, i[:, :2])
        w = a[i, 1:].flip(0).roll(1, 1).tril().diagonal(0, -2, -1)
        return (z.sum() + w.sum() + a.masked_fill(a > 5, 0.0).sum())._data

    eager = f(x, idx)
    traced = jax.jit(
        lambda a, i: f(
            lg.Tensor._make(a, lg.float64, x.device), lg.Tensor._make(i, lg.int64, x.device)
        )
    )(x._data, idx._data)
    np.testing.assert_array_equal(np.asarray(traced), np.asarray(eager))

    with pytest.raises(RuntimeError, match="jax.jit"):
        jax.jit(lambda a: lg.Tensor._make(a, lg.float64, x.device).nonzero()._data)(x._data)


def test_no_warnings_from_jax():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        x = lg.ones(2, 3, requires_grad=True)
        (x[lg.tensor([1, 0])].sum() + x.split(1)[0].sum()).backward()


def _random_index(rng, shape):
    """A random mixture of ints, slices, None, Ellipsis, lists, masks and Python bools."""
    items, d = [], 0
    for _ in range(rng.randrange(1, 5)):
        size = shape[d] if d < len(shape) else 0
        k = rng.randrange(8)
        if size == 0 or k == 0:
            item = None if size == 0 else rng.randrange(-size, size)
        elif k == 1:
            item = slice(
                rng.choice([None, -7, -1, 0, 1, 2, 9]),
                rng.choice([None, -7, -1, 0, 2, 9]),
                rng.choice([None, 1, 2, 3]),
            )
        elif k == 2:
            item = None
        elif k == 3:
            item = [rng.randrange(-size, size) for _ in range(rng.randrange(4))]
        elif k == 4:
            item = [[rng.randrange(-size, size)] for _ in range(2)]
        elif k == 5:
            item = [rng.random() < 0.5 for _ in range(size)]
        elif k == 6:
            item = True
        else:
            item = slice(None)
        items.append(item)
        d += item is not None and not isinstance(item, bool)
    if rng.random() < 0.2:
        items.insert(rng.randrange(len(items) + 1), Ellipsis)
    return tuple(items)


@pytest.mark.parametrize("seed", range(24))
def test_getitem_random_mixtures(seed):
    rng = random.Random(seed)
    index = _random_index(rng, (3, 4, 5))
    as_tensors = seed % 2 == 1
    check(lambda m, x: x[_tensor_index(m, index) if as_tensors else index], (3, 4, 5))
