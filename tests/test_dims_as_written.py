"""The arguments PyTorch's nodes keep as the caller wrote them (Note [Dims as written] in
leafgrad/_written_dims.py, Note [Arguments as written] in autograd/saved.py): negative dims,
slice bounds and indices, omitted ends, defaults counted from the end, and the composites whose
inner nodes take them. Each program's whole graph is walked in torch 2.13 and in leafgrad, and
every node's name and every non-tensor ``_saved_<name>`` value (negative ints read back unsigned)
must be equal; the results too."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
from conftest import lg


def _x(m):
    return m.tensor(np.arange(24.0).reshape(2, 3, 4).astype(np.float32) / 7, requires_grad=True)


def _long(m, *shape):
    return m.zeros(*shape, dtype=m.long)


PROGRAMS = {
    # views and indexing
    "getitem_slices": lambda m, x: x[:, 1:3] + x[:, -2:].sum() + x[:, :-1].sum() + x[:, ::2].sum(),
    "getitem_out_of_range": lambda m, x: x[:, 1:100].sum() + x[:, -100:].sum() + x[:, 5:].sum(),
    "getitem_select": lambda m, x: x[-1] + x[:, -1].sum() + x[..., 1].sum() + x[0, 1:2].sum(),
    "select": lambda m, x: x.select(-1, 0) + x.select(-2, -1).sum(),
    "narrow": lambda m, x: x.narrow(-1, 0, 2) + x.narrow(1, -2, 2).sum(),
    "split": lambda m, x: x.split(1, -1)[0] + x.split([1, 3], -1)[0],
    "chunk_unbind": lambda m, x: x.chunk(2, -1)[1] + x.unbind(-1)[0][..., None],
    "tensor_split": lambda m, x: m.cat(m.tensor_split(x, [1, -1], 1), 1),
    "tensor_split_n": lambda m, x: x.tensor_split(2, -1)[1],
    "diagonal_transpose": lambda m, x: x.diagonal(0, -2, -1).sum() + x.transpose(-1, -2).sum(),
    "swapaxes": lambda m, x: x.swapaxes(-1, 0),
    "squeeze_unsqueeze": lambda m, x: x[:, :1].squeeze(-2).unsqueeze(-1),
    "squeeze_inplace": lambda m, x: x[:, :1].clone().squeeze_(-2),
    "unsqueeze_transpose_inplace": lambda m, x: x.clone().unsqueeze_(-1).transpose_(-1, 0),
    "unfold": lambda m, x: x.unfold(-1, 2, 1),
    "flip_roll": lambda m, x: x.flip(-1).roll(1, -1),
    "rot90": lambda m, x: m.rot90(x, 1, [-1, -2]),
    "diag_embed": lambda m, x: x.diag_embed().sum() + m.diag_embed(x, 1, 0, 2).sum(),
    "movedim_flatten": lambda m, x: x.movedim(-1, 0).flatten(-2),
    "unflatten": lambda m, x: x.unflatten(-1, (2, 2)),
    "hsplit_vsplit": lambda m, x: m.cat(m.hsplit(x, 3), -1) + m.vsplit(x, 2)[1].sum(),
    "cat_stack": lambda m, x: m.cat([x, x], -1).sum() + m.stack([x, x], -1).sum(),
    # reductions and scans
    "sum_mean": lambda m, x: x.sum(-1).sum() + x.mean([-1, 0]).sum() + x.sum((-1, -2)).sum(),
    "var_std": lambda m, x: x.var(-1).sum() + m.std(x, dim=-1, correction=0).sum(),
    "std_var_mean": lambda m, x: m.std_mean(x, -1)[0] + m.var_mean(x, dim=-1)[1],
    "prod": lambda m, x: x.prod(-1),
    "max_min": lambda m, x: x.max(-1)[0] + x.min(-1)[0] + x.amax(-1) + x.amin(-1),
    "aminmax": lambda m, x: m.aminmax(x, dim=-1)[0],
    "logsumexp": lambda m, x: x.logsumexp(-1) + m.special.logsumexp(x, -1),
    "nansum_nanmean": lambda m, x: x.nansum(-1) + x.nanmean(-1),
    "cumulative": lambda m, x: x.cumsum(-1) + x.cumprod(-1) + x.logcumsumexp(-1),
    "cummax_cummin": lambda m, x: x.cummax(-1)[0] + m.cummin(x, -1)[0],
    "sort_topk": lambda m, x: x.sort()[0].sum() + x.topk(2)[0].sum() + x.kthvalue(2)[0].sum(),
    "median_mode": lambda m, x: x.median(-1)[0] + x.nanmedian(-1)[0] + x.mode()[0],
    "softmax": lambda m, x: x.softmax(-1) + m.nn.functional.log_softmax(x, dim=-1),
    "special_softmax": lambda m, x: m.special.softmax(x, -1) + m.special.log_softmax(x, -1),
    "softmin_glu": lambda m, x: m.nn.functional.softmin(x, -1).sum() + m.nn.functional.glu(x).sum(),
    # gathers and scatters
    "gather_index_select": lambda m, x: (
        x.gather(-1, _long(m, 2, 3, 1)).sum() + x.index_select(-1, m.tensor([0, 2])).sum()
    ),
    "take_along_dim": lambda m, x: m.take_along_dim(x, _long(m, 2, 3, 1), -1),
    "scatter": lambda m, x: x.scatter(-1, _long(m, 2, 3, 1), 1.0),
    "index_add_fill": lambda m, x: x.index_add(-1, m.tensor([0]), x[..., :1] * 2).index_fill(
        -1, m.tensor([1]), 0.5
    ),
    "repeat_interleave": lambda m, x: x.repeat_interleave(2, dim=-1),
    # norms
    "vector_norms": lambda m, x: (
        m.linalg.vector_norm(x, dim=-1).sum()
        + m.linalg.vector_norm(x, 3.0).sum()
        + x.norm(2.0, dim=-1).sum()
        + m.norm(x, p=1.0)
    ),
    "linalg_norm": lambda m, x: (
        m.linalg.norm(x, dim=-1).sum() + m.linalg.norm(x, dim=(-2, -1)).sum()
    ),
    "matrix_norms": lambda m, x: (
        m.linalg.matrix_norm(x, "fro", dim=(-1, -2)).sum() + m.linalg.norm(x, 1, dim=(-1, -2)).sum()
    ),
    "normalize_cosine": lambda m, x: (
        m.nn.functional.normalize(x, dim=-1).sum()
        + m.nn.functional.cosine_similarity(x, x + 1, -1).sum()
    ),
    "cross": lambda m, x: m.linalg.cross(x[..., :3], x[..., 1:]),
    # composites with inner slices
    "diff": lambda m, x: x.diff() + x.diff(dim=-2, n=1)[..., :3].sum(),
    "trapezoid": lambda m, x: m.trapezoid(x) + m.trapezoid(x, dim=-2).sum(),
    "cumulative_trapezoid": lambda m, x: m.cumulative_trapezoid(x),
    "gradient": lambda m, x: m.gradient(x, dim=-1)[0] + m.gradient(x, spacing=2.0, dim=1)[0],
    "gradient_edge_order_2": lambda m, x: m.gradient(x[0, 0], edge_order=2)[0],
}


def _walk(m, root):
    """Every node of the graph under ``root`` (depth first), its name and saved non-tensors."""
    out, stack, seen = [], [root], set()
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        values = {}
        for name in sorted(a for a in dir(node) if a.startswith("_saved_")):
            v = getattr(node, name)
            if isinstance(v, m.Tensor):
                v = ("tensor", tuple(v.shape))
            elif isinstance(v, tuple) and any(isinstance(e, m.Tensor) for e in v):
                v = tuple(("tensor", tuple(e.shape)) if e is not None else None for e in v)
            values[name] = repr(v)
        out.append((node.name(), values))
        stack.extend(n for n, _ in reversed(node.next_functions))
    return out


def _run(m, program):
    x = _x(m)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        y = PROGRAMS[program](m, x)
    return _walk(m, y.grad_fn), y.detach().numpy()


@pytest.mark.parametrize("program", sorted(PROGRAMS))
def test_saved_arguments_as_written_match_pytorch(program):
    got, value = _run(lg, program)
    want, expected = _run(torch, program)
    assert got == want
    np.testing.assert_allclose(value, expected, rtol=1e-5, atol=1e-6)


def test_positive_dims_are_kept_as_they_are():
    """The same programs with the dims written positive: nothing is recorded against them."""
    for m in (lg, torch):
        x = _x(m)
        node = x.sum(2).grad_fn
        assert node._saved_dim == (2,)
        assert x.select(2, 1).grad_fn._saved_index == 1
        assert x[:, 1:3].grad_fn._saved_end == 3


def test_a_recorded_node_reads_back_unsigned_after_backward():
    def fn(m):
        x = _x(m)
        y = x[:, -2:].softmax(-1)
        slice_node = y.grad_fn.next_functions[0][0]
        y.sum().backward()
        return y.grad_fn._saved_dim, slice_node._saved_start, slice_node._saved_end

    assert fn(lg) == fn(torch)


def test_spectral_norm_takes_the_singular_values_last_dim_as_written():
    """``linalg.norm(A, 2, dims)``: the amax over the singular values keeps dim -1 (its SVD node
    is not compared: leafgrad's svdvals does not save U and Vh)."""

    def fn(m):
        y = m.linalg.norm(_x(m), 2, dim=(-1, -2))
        return y.grad_fn.name(), y.grad_fn._saved_dim, y.grad_fn._saved_keepdim

    assert fn(lg) == fn(torch)


def test_a_tensor_handed_back_as_it_was_keeps_its_nodes_dims():
    """``x.flatten(-1, -1)`` returns ``x``: its SumBackward1 keeps the dim it was given (2)."""

    def fn(m):
        x = _x(m).sum(2)
        y = x.flatten(-1, -1)
        return y is x, y.grad_fn.name(), y.grad_fn._saved_dim

    assert fn(lg) == fn(torch)


ZERO_DIM = {
    "sum": lambda m, x: x.sum(0),
    "sum_negative": lambda m, x: x.sum(-1),
    "mean_tuple": lambda m, x: x.mean((0,)),
    "prod": lambda m, x: x.prod(-1),
    "aminmax": lambda m, x: m.aminmax(x, dim=0)[0],
    "logsumexp": lambda m, x: x.logsumexp(0),
    "var_std": lambda m, x: x.var(0, correction=0) + x.std(-1, correction=0),
    "norm": lambda m, x: x.norm(dim=0) + m.linalg.vector_norm(x, dim=-1),
    "flip": lambda m, x: x.flip(-1),
    "nansum_nanmean": lambda m, x: x.nansum(0) + x.nanmean(-1),
    "lerp_scalar_weight": lambda m, x: m.lerp(x, x * 2, 0.25),
    "parameter": lambda m, x: m.nn.Parameter(x.detach()).sum(0),
}


@pytest.mark.parametrize("program", sorted(ZERO_DIM))
def test_dims_given_to_a_0d_tensor_are_kept(program):
    """A 0-d input's dims vanish from leafgrad's op arguments; its node keeps them as given."""

    def fn(m):
        x = m.tensor(1.5, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            y = ZERO_DIM[program](m, x)
        return _walk(m, y.grad_fn)

    assert fn(lg) == fn(torch)
