"""Errors inside ``torch.func.vmap`` name the tensors PyTorch's batch rules see: the physical
ones, with the batch dims in front (an operand the vmap does not batch expanded to them), and
dims counted among them; products fold the batch as their rules do; ops PyTorch runs sample by
sample (its fallback) warn and keep the logical names. Each case runs under torch and leafgrad
and compares the error type, text and the warnings (``conftest.both``)."""

from __future__ import annotations

import pytest
import torch
from conftest import Raised, both, call, same

import leafgrad


def _vmap(m, fn, *args, **kwargs):
    return m.func.vmap(fn, **kwargs)(*args)


def _x(m):
    return m.ones(4, 2, 2)


def _i(m, value=9):
    return m.tensor([[value]])


CASES = {
    # joins: every operand with the batch dims in front
    "cat_sizes": lambda m: _vmap(m, lambda x: m.cat([x, m.ones(2, 3)]), _x(m)),
    "cat_sizes_dim1": lambda m: _vmap(m, lambda x: m.cat([x, m.ones(3, 2)], 1), _x(m)),
    "cat_sizes_negative_dim": lambda m: _vmap(m, lambda x: m.cat([x, m.ones(2, 3)], -1), _x(m)),
    "cat_both_batched": lambda m: _vmap(
        m, lambda x, y: m.cat([x, y]), m.ones(4, 2, 2), m.ones(4, 2, 3)
    ),
    "cat_ranks": lambda m: _vmap(m, lambda x: m.cat([x, m.ones(3)]), _x(m)),
    "cat_ranks_vector": lambda m: _vmap(m, lambda x: m.cat([x[:, 0], m.ones(3, 2)]), _x(m)),
    "cat_ranks_dim1": lambda m: _vmap(m, lambda x: m.cat([x, m.ones(2, 2, 2)], 1), _x(m)),
    "cat_empty_vector": lambda m: _vmap(m, lambda x: m.cat([x, m.ones(0)]), _x(m)),
    "cat_empty_vector_first": lambda m: _vmap(m, lambda x: m.cat([m.ones(0), x]), _x(m)),
    "cat_unbatched_operands": lambda m: _vmap(
        m, lambda x: m.cat([m.ones(3, 2), m.ones(3, 3)]) + x, _x(m)
    ),
    "cat_one_unbatched_between": lambda m: _vmap(
        m, lambda x: m.cat([m.ones(3, 2), m.ones(3, 3), x]), _x(m)
    ),
    "cat_dim_range": lambda m: _vmap(m, lambda x: m.cat([x, m.ones(2, 3)], 5), _x(m)),
    "hstack": lambda m: _vmap(m, lambda x: m.hstack([x, m.ones(3, 3)]), _x(m)),
    "vstack": lambda m: _vmap(m, lambda x: m.vstack([x, m.ones(3, 3)]), _x(m)),
    "dstack": lambda m: _vmap(m, lambda x: m.dstack([x, m.ones(3, 3)]), _x(m)),
    "concat": lambda m: _vmap(m, lambda x: m.concat([x, m.ones(3, 3)], 1), _x(m)),
    "column_stack_batched": lambda m: _vmap(m, lambda x: m.column_stack([x, x]), _x(m)),
    "column_stack_one": lambda m: _vmap(m, lambda x: m.column_stack([x]), _x(m)),
    "column_stack_unbatched": lambda m: _vmap(
        m, lambda x: m.column_stack([m.ones(2), m.ones(2)]) + x, _x(m)
    ),
    "stack_sizes": lambda m: _vmap(m, lambda x: m.stack([x, m.ones(2, 3)]), _x(m)),
    "stack_unbatched_first": lambda m: _vmap(m, lambda x: m.stack([m.ones(2, 3), x], 0), _x(m)),
    "stack_both_batched": lambda m: _vmap(
        m, lambda x, y: m.stack([x, y]), m.ones(4, 2, 2), m.ones(4, 2, 3)
    ),
    "stack_dim_before_sizes": lambda m: _vmap(m, lambda x: m.stack([x, m.ones(2, 3)], 5), _x(m)),
    "nested_cat": lambda m: _vmap(
        m, lambda x: m.func.vmap(lambda y: m.cat([x, y]))(m.ones(5, 3, 3)), m.ones(4, 2, 2)
    ),
    "nested_stack": lambda m: _vmap(
        m, lambda x: m.func.vmap(lambda y: m.stack([x, y]))(m.ones(5, 3, 3)), m.ones(4, 2, 2)
    ),
    "nested_cat_fits": lambda m: _vmap(
        m, m.func.vmap(lambda x: m.cat([x, m.ones(3)])), m.ones(4, 5, 2)
    ),
    # dims of one tensor: counted after the batch dims
    "select": lambda m: _vmap(m, lambda x: x.select(0, 5), _x(m)),
    "select_negative_dim": lambda m: _vmap(m, lambda x: x.select(-1, 7), _x(m)),
    "select_transposed": lambda m: _vmap(m, lambda x: x.t().select(1, 9), _x(m)),
    "narrow": lambda m: _vmap(m, lambda x: x.narrow(1, 1, 7), _x(m)),
    "split_sizes": lambda m: _vmap(m, lambda x: m.split(x, [1, 5])[0], m.ones(4, 2, 3)),
    "split_sizes_dim1": lambda m: _vmap(m, lambda x: m.split(x, [1, 5], 1)[0], _x(m)),
    "unfold": lambda m: _vmap(m, lambda x: x.unfold(1, 7, 1), _x(m)),
    "unfold_negative_dim": lambda m: _vmap(m, lambda x: x.unfold(-1, 7, 1), _x(m)),
    "chunk_dim": lambda m: _vmap(m, lambda x: x.chunk(2, 9)[0], _x(m)),
    "layer_norm": lambda m: _vmap(m, lambda x: m.nn.functional.layer_norm(x, (3,)), _x(m)),
    # expand: the batch dims, then size-1 dims for the new ones
    "expand_mismatch": lambda m: _vmap(m, lambda x: x.expand(3, 3), _x(m)),
    "expand_new_dims": lambda m: _vmap(m, lambda x: x.expand(3, 2, 3), _x(m)),
    "expand_vector": lambda m: _vmap(m, lambda x: x.expand(2, 3), m.ones(4, 2)),
    "expand_few": lambda m: _vmap(m, lambda x: x.expand(3), _x(m)),
    "expand_minus_one_new_dim": lambda m: _vmap(m, lambda x: x.expand(-1, 2, 2), _x(m)),
    "expand_minus_ones_new_dims": lambda m: _vmap(m, lambda x: x.expand(-1, -1, 2, 2), _x(m)),
    "expand_negative_new_dim": lambda m: _vmap(m, lambda x: x.expand(-2, 2, 2), _x(m)),
    "expand_negative_existing": lambda m: _vmap(m, lambda x: x.expand(2, -2, 2), _x(m)),
    "expand_negative_size_one": lambda m: _vmap(m, lambda x: x.expand(-3, 2, 2), m.ones(4, 1, 2)),
    "expand_minus_one_then_mismatch": lambda m: _vmap(m, lambda x: x.expand(-1, 3, 2), _x(m)),
    "expand_fits": lambda m: _vmap(m, lambda x: x.expand(1, -1, -1), _x(m)),
    "expand_as": lambda m: _vmap(m, lambda x: x.expand_as(m.ones(3, 3)), m.ones(4, 2)),
    "broadcast_to": lambda m: _vmap(m, lambda x: x.broadcast_to((3, 3)), m.ones(4, 2)),
    "broadcast_to_few": lambda m: _vmap(m, lambda x: m.broadcast_to(x, (3,)), _x(m)),
    "expand_source_of_index_add": lambda m: _vmap(
        m,
        lambda s: m.zeros(2, 2).index_add(1, m.tensor([0]), s[:, :1].expand(3, 1)),
        m.ones(4, 2, 1),
    ),
    # gathers and scatters: the index's dim after the batch dims
    "gather_range": lambda m: _vmap(m, lambda x: m.gather(x, 0, m.tensor([[5]])), _x(m)),
    "gather_negative": lambda m: _vmap(m, lambda x: x.gather(1, _i(m, -7)), _x(m)),
    "gather_batched_index": lambda m: _vmap(
        m, lambda x, i: x.gather(1, i), _x(m), m.full((4, 1, 1), 9)
    ),
    "gather_batched_index_only": lambda m: _vmap(
        m, lambda i: m.ones(2, 2).gather(1, i), m.full((4, 1, 1), 9)
    ),
    "gather_sizes": lambda m: _vmap(m, lambda x: m.gather(x, 1, m.tensor([[0], [0], [0]])), _x(m)),
    "scatter_value": lambda m: _vmap(m, lambda x: x.scatter(1, _i(m), 1.0), _x(m)),
    "scatter_value_dim0": lambda m: _vmap(m, lambda x: x.scatter(0, m.tensor([[5]]), 1.0), _x(m)),
    "scatter_reduce_arg": lambda m: _vmap(
        m, lambda x: x.scatter(1, _i(m), m.ones(1, 1), reduce="add"), _x(m)
    ),
    "scatter_add": lambda m: _vmap(m, lambda x: x.scatter_add(1, _i(m), m.ones(1, 1)), _x(m)),
    "scatter_add_into_unbatched": lambda m: _vmap(
        m, lambda x: m.ones(2, 2).scatter_add(1, _i(m), x), _x(m)
    ),
    "scatter_add_inplace": lambda m: _vmap(
        m, lambda x: x.scatter_add_(1, _i(m), m.ones(1, 1)), _x(m)
    ),
    "scatter_reduce": lambda m: _vmap(
        m, lambda x: x.scatter_reduce(1, _i(m), m.ones(1, 1), "sum"), _x(m)
    ),
    "index_select": lambda m: _vmap(m, lambda x: m.index_select(x, 1, m.tensor([5])), _x(m)),
    "index_select_negative": lambda m: _vmap(m, lambda x: x.index_select(0, m.tensor([-1])), _x(m)),
    "index_fill": lambda m: _vmap(m, lambda x: x.index_fill(0, m.tensor([9]), 1.0), _x(m)),
    "index_fill_inplace": lambda m: _vmap(m, lambda x: x.index_fill_(1, m.tensor([9]), 1.0), _x(m)),
    "index_copy": lambda m: _vmap(m, lambda x: x.index_copy(0, m.tensor([9]), m.ones(1, 2)), _x(m)),
    "index_add_range": lambda m: _vmap(
        m, lambda x: x.index_add(0, m.tensor([9]), m.ones(1, 2)), _x(m)
    ),
    "index_add_range_last_dim": lambda m: _vmap(
        m, lambda x: x.index_add_(1, m.tensor([9]), m.ones(2, 1)), _x(m)
    ),
    "index_add_range_batched_source": lambda m: _vmap(
        m, lambda s: m.zeros(2, 2).index_add(1, m.tensor([9]), s), m.ones(4, 2, 1)
    ),
    "index_add_range_batched_index": lambda m: _vmap(
        m, lambda s: m.zeros(3).index_add(0, m.tensor([5]), s[0, :1]), m.ones(4, 2, 1)
    ),
    "index_add_shape": lambda m: _vmap(
        m, lambda x: x.index_add(0, m.tensor([0]), m.ones(1, 3)), _x(m)
    ),
    "index_add_shape_rank": lambda m: _vmap(
        m, lambda x: x.index_add(0, m.tensor([0]), m.ones(1, 2, 2)), _x(m)
    ),
    "index_add_shape_batched_source": lambda m: _vmap(
        m, lambda s: m.ones(2, 2).index_add(0, m.tensor([0]), s), m.ones(4, 1, 3)
    ),
    "masked_fill_broadcast": lambda m: _vmap(
        m, lambda x: x.masked_fill(m.ones(3, dtype=m.bool), 0), _x(m)
    ),
    "cross_entropy_target": lambda m: _vmap(
        m, lambda x: m.nn.functional.cross_entropy(x, m.tensor([5, 0])), m.ones(4, 2, 3)
    ),
    "cross_entropy_negative_target": lambda m: _vmap(
        m, lambda x: m.nn.functional.cross_entropy(x, m.tensor([-5, 0])), m.ones(4, 2, 3)
    ),
    "cross_entropy_one_sample": lambda m: _vmap(
        m, lambda x: m.nn.functional.cross_entropy(x, m.tensor(5)), m.ones(4, 3)
    ),
    "nll_loss_target": lambda m: _vmap(
        m, lambda x: m.nn.functional.nll_loss(x, m.tensor([5, 0])), m.ones(4, 2, 3)
    ),
    "nll_loss_unreduced": lambda m: _vmap(
        m,
        lambda x: m.nn.functional.nll_loss(x, m.tensor([5, 0]), reduction="none"),
        m.ones(4, 2, 3),
    ),
    # products: the batch folded as each rule does
    "mv_batched_matrix": lambda m: _vmap(m, lambda x: m.mv(x, m.ones(3)), _x(m)),
    "mv_batched_vector": lambda m: _vmap(m, lambda v: m.mv(m.ones(2, 2), v), m.ones(4, 3)),
    "mv_both": lambda m: _vmap(m, lambda x, v: m.mv(x, v), _x(m), m.ones(4, 3)),
    "dot_batched_left": lambda m: _vmap(m, lambda x: m.dot(x, m.ones(3)), m.ones(4, 2)),
    "dot_batched_right": lambda m: _vmap(m, lambda x: m.dot(m.ones(3), x), m.ones(4, 2)),
    "dot_both": lambda m: _vmap(m, lambda x, y: m.dot(x, y), m.ones(4, 2), m.ones(4, 3)),
    "mm_batched_right": lambda m: _vmap(m, lambda x: m.mm(m.ones(3, 3), x), _x(m)),
    "mm_both": lambda m: _vmap(m, lambda x, y: m.mm(x, y), _x(m), m.ones(4, 3, 3)),
    "bmm_batched_left": lambda m: _vmap(m, lambda x: m.bmm(x, m.ones(2, 3, 3)), m.ones(4, 2, 2, 2)),
    "bmm_batched_right": lambda m: _vmap(
        m, lambda x: m.bmm(m.ones(2, 3, 3), x), m.ones(4, 2, 2, 2)
    ),
    "bmm_both": lambda m: _vmap(
        m, lambda x, y: m.bmm(x, y), m.ones(4, 2, 2, 2), m.ones(4, 2, 3, 3)
    ),
    "matmul_matrix_vector": lambda m: _vmap(m, lambda x: m.matmul(x, m.ones(3)), _x(m)),
    "matmul_vector_matrix": lambda m: _vmap(m, lambda x: m.matmul(m.ones(3), x), _x(m)),
    "matmul_matrices": lambda m: _vmap(m, lambda x: m.matmul(x, m.ones(3, 3)), _x(m)),
    "matmul_matrices_right": lambda m: _vmap(m, lambda x: m.matmul(m.ones(3, 3), x), _x(m)),
    "matmul_broadcast_batch": lambda m: _vmap(m, lambda x: m.matmul(x, m.ones(5, 3, 3)), _x(m)),
    "matmul_folded_vector": lambda m: _vmap(
        m, lambda x: m.matmul(x, m.ones(3)), m.ones(4, 5, 2, 2)
    ),
    "matmul_both": lambda m: _vmap(m, lambda x, y: m.matmul(x, y), _x(m), m.ones(4, 3, 3)),
    "matmul_vectors": lambda m: _vmap(m, lambda x: x @ m.ones(3), m.ones(4, 2)),
    # convolutions: the batch into N, into the output channels, or into the groups
    "conv2d_batched_input": lambda m: _vmap(
        m, lambda x: m.nn.functional.conv2d(x, m.ones(2, 3, 1, 1)), m.ones(4, 1, 2, 5, 5)
    ),
    "conv2d_batched_weight": lambda m: _vmap(
        m, lambda w: m.nn.functional.conv2d(m.ones(1, 2, 5, 5), w), m.ones(4, 2, 3, 1, 1)
    ),
    "conv2d_both": lambda m: _vmap(
        m,
        lambda x, w: m.nn.functional.conv2d(x, w),
        m.ones(4, 1, 2, 5, 5),
        m.ones(4, 2, 3, 1, 1),
    ),
    "conv1d_batched_input": lambda m: _vmap(
        m, lambda x: m.nn.functional.conv1d(x, m.ones(2, 3, 1)), m.ones(4, 1, 2, 5)
    ),
    "conv2d_unbatched_sample": lambda m: _vmap(
        m, lambda x: m.nn.functional.conv2d(x, m.ones(2, 3, 1, 1)), m.ones(4, 2, 5, 5)
    ),
    "conv2d_groups": lambda m: _vmap(
        m, lambda x: m.nn.functional.conv2d(x, m.ones(2, 3, 1, 1), groups=2), m.ones(4, 1, 2, 5, 5)
    ),
    # in-place ops PyTorch runs sample by sample: its warning, the logical tensors' errors
    "scatter_inplace_value": lambda m: _vmap(m, lambda x: x.scatter_(1, _i(m), 1.0), _x(m)),
    "scatter_inplace_src": lambda m: _vmap(m, lambda x: x.scatter_(1, _i(m), m.ones(1, 1)), _x(m)),
    "scatter_inplace_fits": lambda m: _vmap(m, lambda x: x.scatter_(1, _i(m, 1), 1.0), _x(m)),
    "scatter_inplace_value_reduce": lambda m: _vmap(
        m, lambda x: x.scatter_(1, _i(m, 1), 1.0, reduce="add"), _x(m)
    ),
    "scatter_inplace_into_unbatched": lambda m: _vmap(
        m, lambda x: m.ones(2, 2).scatter_(1, _i(m, 1), x[:1, :1]), _x(m)
    ),
    "index_copy_inplace": lambda m: _vmap(
        m, lambda x: x.index_copy_(1, m.tensor([9]), m.ones(2, 1)), _x(m)
    ),
    "index_copy_inplace_fits": lambda m: _vmap(
        m, lambda x: x.index_copy_(1, m.tensor([1]), m.ones(2, 1)), _x(m)
    ),
    "index_copy_inplace_into_unbatched": lambda m: _vmap(
        m, lambda x: m.ones(2, 2).index_copy_(1, m.tensor([1]), x[:, :1]), _x(m)
    ),
    "put_inplace": lambda m: _vmap(m, lambda x: x.put_(m.tensor([1]), m.tensor([1.0])), _x(m)),
    "put_inplace_into_unbatched": lambda m: _vmap(
        m, lambda x: m.ones(2, 2).put_(m.tensor([1]), x[0, :1]), _x(m)
    ),
    "index_reduce_inplace": lambda m: _vmap(
        m, lambda x: x.index_reduce_(1, m.tensor([1]), m.ones(2, 1), "prod"), _x(m)
    ),
    "masked_scatter_into_unbatched": lambda m: _vmap(
        m, lambda x: m.ones(2, 2).masked_scatter_(m.ones(2, 2) > 0, x), _x(m)
    ),
    "scatter_unbatched_inplace": lambda m: _vmap(
        m, lambda x: m.ones(2, 2).scatter_(1, _i(m, 1), 1.0) + x, _x(m)
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_errors_inside_vmap(name):
    both(CASES[name], autograd=False)


# Outside vmap too, PyTorch's expand checks the last dim first (``inferExpandGeometry``), and
# a negative size over a size-1 dim passes the check, then overflows the numel.
EXPAND = {
    "expand_two_mismatches": lambda m: m.ones(2, 2).expand(3, 3),
    "expand_new_negative_and_mismatch": lambda m: m.ones(2, 2).expand(-2, 3, 3),
    "expand_negative_over_one": lambda m: m.ones(1, 2).expand(-2, 2),
    "expand_negative_over_one_and_mismatch": lambda m: m.ones(1, 2).expand(-2, 3),
    "expand_two_negatives": lambda m: m.ones(1, 2).expand(-2, -2),
    "expand_negative_new_dim": lambda m: m.ones(2, 2).expand(-2, 2, 2),
    "addmm_self": lambda m: m.addmm(m.ones(2, 2), m.ones(3, 2), m.ones(2, 3)),
    "addr_self": lambda m: m.addr(m.ones(2, 2), m.ones(3), m.ones(3)),
    "linear_bias": lambda m: m.nn.functional.linear(m.ones(3, 2), m.ones(3, 2), m.ones(2, 2)),
    "baddbmm_self": lambda m: m.baddbmm(m.ones(2, 2, 2), m.ones(3, 3, 2), m.ones(3, 2, 3)),
    "addbmm_self": lambda m: m.addbmm(m.ones(2, 2), m.ones(3, 3, 2), m.ones(3, 2, 3)),
}


@pytest.mark.parametrize("name", sorted(EXPAND))
def test_expand_errors(name):
    both(EXPAND[name])


def _pair(m, second):
    return m.tensor([[[1.0, 0.0], [0.0, 1.0]], second])


SINGULAR = [[1.0, 2.0], [2.0, 4.0]]

# LAPACK's errors inside vmap: the batch rule runs the kernel on the physical batch, whose
# "Batch element" they name (the values are read from the batch, never silently NaN).
LINALG = {
    "inv": lambda m: _vmap(m, m.linalg.inv, _pair(m, SINGULAR)),
    "inverse": lambda m: _vmap(m, m.inverse, _pair(m, SINGULAR)),
    "inverse_method": lambda m: _vmap(m, lambda x: x.inverse(), _pair(m, SINGULAR)),
    "inv_nested": lambda m: _vmap(
        m,
        m.func.vmap(m.linalg.inv),
        m.stack([_pair(m, [[1.0, 0.0], [0.0, 1.0]]), _pair(m, SINGULAR)]),
    ),
    "inv_batched_sample": lambda m: _vmap(m, m.linalg.inv, m.stack([_pair(m, SINGULAR)] * 3)),
    "inv_in_dims_1": lambda m: _vmap(
        m, m.linalg.inv, _pair(m, SINGULAR).transpose(0, 1), in_dims=1
    ),
    "inv_ex_check_errors": lambda m: _vmap(
        m, lambda x: m.linalg.inv_ex(x, check_errors=True).inverse, _pair(m, SINGULAR)
    ),
    "inv_ex_info": lambda m: _vmap(m, lambda x: m.linalg.inv_ex(x).info, _pair(m, SINGULAR)),
    "matrix_power_negative": lambda m: _vmap(
        m, lambda x: m.linalg.matrix_power(x, -1), _pair(m, SINGULAR)
    ),
    "tensorinv": lambda m: _vmap(m, lambda x: m.linalg.tensorinv(x, 1), _pair(m, SINGULAR)),
    "solve": lambda m: _vmap(m, m.linalg.solve, _pair(m, SINGULAR), m.ones(2, 2)),
    "solve_matrix": lambda m: _vmap(
        m, lambda x: m.linalg.solve(x, m.ones(2, 3)), _pair(m, SINGULAR)
    ),
    "solve_ex_check_errors": lambda m: _vmap(
        m, lambda x: m.linalg.solve_ex(x, m.ones(2), check_errors=True).result, _pair(m, SINGULAR)
    ),
    "cholesky": lambda m: _vmap(m, m.linalg.cholesky, _pair(m, SINGULAR)),
    "cholesky_function": lambda m: _vmap(m, m.cholesky, _pair(m, SINGULAR)),
    "cholesky_ex_check_errors": lambda m: _vmap(
        m, lambda x: m.linalg.cholesky_ex(x, check_errors=True).L, _pair(m, SINGULAR)
    ),
    "cholesky_inverse": lambda m: _vmap(m, m.cholesky_inverse, _pair(m, [[0.0, 0.0], [0.0, 0.0]])),
    "lu_factor": lambda m: _vmap(m, lambda x: m.linalg.lu_factor(x).LU, _pair(m, SINGULAR)),
    "lu_factor_ex_check_errors": lambda m: _vmap(
        m, lambda x: m.linalg.lu_factor_ex(x, check_errors=True).LU, _pair(m, SINGULAR)
    ),
    "grad_of_inv": lambda m: m.func.grad(lambda x: m.linalg.inv(x).sum())(m.tensor(SINGULAR)),
    # outside vmap: a batched solve names its batch element
    "solve_batched": lambda m: m.linalg.solve(_pair(m, SINGULAR), m.ones(2, 2, 1)),
    "tensorinv_outside": lambda m: m.linalg.tensorinv(m.tensor(SINGULAR), 1),
    # structseq results come back as their torch.return_types class
    "svd_result": lambda m: tuple(_vmap(m, m.linalg.svd, m.eye(3).expand(4, 3, 3))),
    "svd_type": lambda m: type(_vmap(m, m.linalg.svd, m.eye(3).expand(4, 3, 3))).__name__,
    "svd_out_dims": lambda m: _vmap(m, m.linalg.svd, m.eye(3).expand(4, 3, 3), out_dims=(0, 0)),
    "slogdet": lambda m: tuple(_vmap(m, m.linalg.slogdet, m.eye(3).expand(4, 3, 3))),
    "qr": lambda m: tuple(_vmap(m, m.linalg.qr, m.eye(3).expand(4, 3, 3))),
    "sort": lambda m: tuple(_vmap(m, m.sort, m.tensor([[3.0, 1.0, 2.0]] * 4))),
    "max_dim": lambda m: _vmap(m, lambda x: m.max(x, 0), m.tensor([[3.0, 1.0, 2.0]] * 4)).indices,
}


@pytest.mark.parametrize("name", sorted(LINALG))
def test_linalg_inside_vmap(name):
    """As ``both``, with LinAlgError matched by name (each library has its own class)."""
    t, tw = call(LINALG[name], torch)
    g, gw = call(LINALG[name], leafgrad)
    assert isinstance(t, Raised) == isinstance(g, Raised), f"torch {t!r}, leafgrad {g!r}"
    if isinstance(t, Raised):
        assert (g.type.__name__, g.text) == (t.type.__name__, t.text)
    else:
        same(t, g, autograd=False)
    assert gw == tw


def _x5(m):
    return m.ones(4, 3, 3) * 0.5


# Note [vmap's fallback] (func.py): the ops PyTorch runs sample by sample warn, in-place or not,
# method or function; the ops they run inside do not warn again.
FALLBACK = {
    "clamp_": lambda m: _vmap(m, lambda x: x.clamp_(0), _x5(m)),
    "clamp_tensor": lambda m: _vmap(m, lambda x: x.clamp_(m.zeros(3)), _x5(m)),
    "clamp_function": lambda m: _vmap(m, lambda x: m.clamp_(x, 0), _x5(m)),
    "clip_": lambda m: _vmap(m, lambda x: x.clip_(0, 1), _x5(m)),
    "square_function": lambda m: _vmap(m, lambda x: m.square_(x), _x5(m)),
    "fix_": lambda m: _vmap(m, lambda x: x.fix_(), _x5(m)),
    "lerp_scalar": lambda m: _vmap(m, lambda x: x.lerp_(x, 0.5), _x5(m)),
    "lerp_tensor": lambda m: _vmap(m, lambda x: x.lerp_(x, x), _x5(m)),
    "eq_scalar": lambda m: _vmap(m, lambda x: x.eq_(1), _x5(m)),
    "greater_tensor": lambda m: _vmap(m, lambda x: x.greater_(x), _x5(m)),
    "not_equal_scalar": lambda m: _vmap(m, lambda x: x.not_equal_(1), _x5(m)),
    "xlogy_scalar": lambda m: _vmap(m, lambda x: x.xlogy_(2.0), _x5(m)),
    "pow_tensor": lambda m: _vmap(m, lambda x: x.pow_(x), _x5(m)),
    "pow_scalar_has_a_rule": lambda m: _vmap(m, lambda x: x.pow_(2), _x5(m)),
    "addcmul_": lambda m: _vmap(m, lambda x: x.addcmul_(x, x), _x5(m)),
    "tril_": lambda m: _vmap(m, lambda x: x.tril_(), _x5(m)),
    "unbatched_inplace_no_warning": lambda m: _vmap(m, lambda x: m.ones(3).clamp_(0) + x, _x5(m)),
    "quantile_scalar": lambda m: _vmap(m, lambda x: m.quantile(x, 0.5), _x5(m)),
    "quantile_tensor": lambda m: _vmap(m, lambda x: x.quantile(m.tensor([0.5])), _x5(m)),
    "nanquantile": lambda m: _vmap(m, lambda x: m.nanquantile(x, 0.5, dim=0), _x5(m)),
    "isin_tensors": lambda m: _vmap(m, lambda x: m.isin(x, x), _x5(m)),
    "isin_scalar": lambda m: _vmap(m, lambda x: m.isin(x, 0.5), _x5(m)),
    "isclose": lambda m: _vmap(m, lambda x: m.isclose(x, x), _x5(m)),
    "histc": lambda m: _vmap(m, lambda x: m.histc(x, 4, 0, 1), _x5(m)),
    "diagflat": lambda m: _vmap(m, m.diagflat, m.ones(4, 3)),
    "fill_scalar": lambda m: _vmap(m, lambda x: m.fill(x, 2.0), _x5(m)),
    "pdist": lambda m: _vmap(m, m.pdist, _x5(m)),
    "squeeze_copy_dim": lambda m: _vmap(m, lambda x: m.squeeze_copy(x, 0), m.ones(4, 1, 3)),
    "t_copy": lambda m: _vmap(m, m.t_copy, _x5(m)),
    "kl_div": lambda m: _vmap(m, lambda x: m.nn.functional.kl_div(x, x, reduction="sum"), _x5(m)),
    "margin_ranking_loss": lambda m: _vmap(
        m, lambda x: m.nn.functional.margin_ranking_loss(x, x, x), _x5(m)
    ),
    "unbatched_no_warning": lambda m: _vmap(m, lambda x: m.quantile(m.ones(3), 0.5) + x, _x5(m)),
    "index_reduce_warnings_per_sample": lambda m: _vmap(
        m, lambda x: x.index_reduce_(1, m.tensor([1]), m.ones(3, 1), "prod"), _x5(m)
    ),
    # histogram's bins: one dim (outside vmap too); a count of bins reads values
    "histogram_bins_2d": lambda m: m.histogram(m.ones(3, 3), m.ones(3, 3)),
    "histogram_bins_0d": lambda m: m.histogram(m.ones(3, 3), m.ones(())),
    "histogram_range_inside_vmap": lambda m: _vmap(
        m, lambda x: m.histogram(x, 3, range=(0.0, 2.0)).hist, _x5(m)
    ),
}


@pytest.mark.parametrize("name", sorted(FALLBACK))
def test_fallback_warnings(name):
    both(FALLBACK[name], autograd=False)


def test_histogram_count_of_bins_inside_vmap_refused():
    """Each sample would need its own edges: leafgrad refuses (PyTorch loops over samples)."""
    with pytest.raises(NotImplementedError, match="histogram with a count of bins"):
        leafgrad.func.vmap(leafgrad.histogram)(leafgrad.ones(4, 3))
