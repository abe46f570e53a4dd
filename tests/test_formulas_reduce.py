"""Gradients of the matrix products and reductions under ``create_graph=True`` (Note [Graph
formulas] in leafgrad/ops/formulas.py): PyTorch's graphs of their derivative formulas, and the
values of the first three derivatives, against PyTorch."""

from __future__ import annotations

import os

import numpy as np
import pytest
from formula_check import check_graph

R = np.random.default_rng(0)


def _u(*shape, lo=-1.0, hi=1.0):
    return R.uniform(lo, hi, shape)


def _const(m, a):
    """An operand that does not require grad."""
    return m.tensor(a)


# Each case: fn(module, *tensors) and its float64 inputs (all require grad). Each case's result is
# followed by a nonlinear op (``sin``), so that the incoming gradient of the op's node itself
# requires grad and its formula's graph is part of the signature; the cases in PLAIN also run
# without it (an incoming gradient without history: PyTorch's graphs then hold None edges).
# Not covered yet (its graph differs from PyTorch's outside these formulas): an mm operand that
# is column-major but not saved (``mm_mat1_backward`` reads strides PyTorch saves and leafgrad's
# node does not keep: it counts as row-major), and matmul's folded 2-d @ 3-d path, whose
# transposed operand loses its strides inside ``linalg_ops._matmul``. ``amax`` of a 0-d tensor
# and of a NaN slice, and ``var(dim=[])``, are in tests/test_reduce_regressions.py.
C23, C34, C3, C24, C234, C523 = _u(2, 3), _u(3, 4), _u(3), _u(2, 4), _u(2, 3, 4), _u(5, 2, 3)
TIES = np.array([[0.5, 0.9, 0.9, -0.2], [0.1, -0.3, 0.4, 0.4], [0.7, 0.2, 0.7, 0.6]])
TIES3 = np.array([[[0.5, 0.9], [0.9, -0.2]], [[0.9, 0.3], [0.4, -0.2]], [[0.7, 0.2], [0.7, 0.6]]])
ZEROS = np.array([[0.5, 0.0, 1.5, 0.3], [0.0, 1.1, 0.0, 0.7], [0.2, 0.3, 0.4, 0.0]])
WITH_NAN = np.array([[0.5, np.nan, 1.5, 0.3], [0.2, 1.1, -0.4, 0.7], [np.nan, 0.3, 0.4, -0.6]])
CASES = {
    # mm, with column-major (transposed) operands: mm_mat1_backward / mm_mat2_backward
    "mm": (lambda m, a, b: a.mm(b), _u(2, 3), _u(3, 4)),
    "mm_t_self": (lambda m, a, b: a.t().mm(b), _u(3, 2), _u(3, 4)),
    "mm_t_both": (lambda m, a, b: a.t() @ b.t(), _u(3, 2), _u(4, 3)),
    "mm_1x1": (lambda m, a, b: a.mm(b), _u(1, 1), _u(1, 3)),
    "mm_self_only": (lambda m, a: a.mm(_const(m, C34)), _u(2, 3)),
    "matmul_bcast_1nm": (lambda m, a, b: a @ b, _u(1, 2, 3), _u(4, 3, 2)),
    "mm_mat2_only": (lambda m, b: _const(m, C23).mm(b), _u(3, 4)),
    "addmm": (lambda m, s, a, b: m.addmm(s, a, b), _u(2, 4), _u(2, 3), _u(3, 4)),
    "addmm_bcast": (
        lambda m, s, a, b: m.addmm(s, a, b, beta=0.5, alpha=2),
        _u(4),
        _u(2, 3),
        _u(3, 4),
    ),
    "addmm_t": (lambda m, s, a, b: m.addmm(s, a.t(), b, alpha=3), _u(2, 4), _u(3, 2), _u(3, 4)),
    "linear": (lambda m, x, w, b: m.nn.functional.linear(x, w, b), _u(2, 3), _u(4, 3), _u(4)),
    # mv, dot, vdot, addmv, addr
    "mv": (lambda m, a, v: a.mv(v), _u(2, 3), _u(3)),
    "mv_t": (lambda m, a, v: a.t().mv(v), _u(3, 2), _u(3)),
    "dot": (lambda m, a, b: a.dot(b), _u(3), _u(3)),
    "vdot": (lambda m, a, b: m.vdot(a, b), _u(3), _u(3)),
    "addmv": (lambda m, s, a, v: m.addmv(s, a, v, beta=0.5, alpha=2), _u(2), _u(2, 3), _u(3)),
    "addr": (lambda m, s, a, b: m.addr(s, a, b, beta=0.5, alpha=2), _u(2, 4), _u(2), _u(4)),
    # bmm, baddbmm, addbmm
    "bmm": (lambda m, a, b: a.bmm(b), _u(2, 2, 3), _u(2, 3, 4)),
    "bmm_t": (lambda m, a, b: a.transpose(1, 2).bmm(b), _u(2, 3, 2), _u(2, 3, 4)),
    "baddbmm": (
        lambda m, s, a, b: m.baddbmm(s, a, b, beta=0.5, alpha=2),
        _u(2, 2, 4),
        _u(2, 2, 3),
        _u(2, 3, 4),
    ),
    "addbmm": (
        lambda m, s, a, b: m.addbmm(s, a, b, beta=0.5, alpha=2),
        _u(2, 4),
        _u(3, 2, 3),
        _u(3, 3, 4),
    ),
    # matmul: a composite of dot, mv, mm and bmm with views around them
    "matmul_1_1": (lambda m, a, b: a @ b, _u(3), _u(3)),
    "matmul_2_1": (lambda m, a, b: a @ b, _u(2, 3), _u(3)),
    "matmul_1_2": (lambda m, a, b: a @ b, _u(3), _u(3, 4)),
    "matmul_3_2": (lambda m, a, b: a @ b, _u(5, 2, 3), _u(3, 4)),
    "matmul_3_1": (lambda m, a, b: a @ b, _u(5, 2, 3), _u(3)),
    "matmul_1_3": (lambda m, a, b: a @ b, _u(3), _u(5, 3, 4)),
    "matmul_3_3": (lambda m, a, b: a @ b, _u(5, 2, 3), _u(5, 3, 4)),
    "matmul_bcast": (lambda m, a, b: a @ b, _u(2, 1, 2, 3), _u(5, 3, 4)),
    "matmul_3_2_one": (lambda m, a: a @ _const(m, C34), _u(5, 2, 3)),
    "matmul_3_2_other": (lambda m, b: _const(m, C523) @ b, _u(3, 4)),
    # reductions
    "trace": (lambda m, a: a.trace(), _u(3, 3)),
    "trace_tall": (lambda m, a: a.trace(), _u(4, 2)),
    "prod": (lambda m, a: a.prod(), _u(3, 4, lo=0.5, hi=1.5)),
    "prod_dim": (lambda m, a: a.prod(1), _u(3, 4, lo=0.5, hi=1.5)),
    "prod_0d": (lambda m, a: a.prod(), _u()),
    "prod_zero": (lambda m, a: a.prod(), np.array([[0.5, 0.0, 1.5], [2.0, 1.1, 0.7]])),
    "prod_zeros_dim": (lambda m, a: a.prod(0), np.array([[0.5, 0.0, 0.0], [0.0, 1.1, 0.7]])),
    "cumsum": (lambda m, a: a.cumsum(1), _u(3, 4)),
    "cumsum_size1": (lambda m, a: a.cumsum(1), _u(3, 1)),
    "cumprod": (lambda m, a: a.cumprod(1), _u(3, 4, lo=0.5, hi=1.5)),
    "logsumexp": (lambda m, a: a.logsumexp(1), _u(3, 4)),
    "logsumexp_all": (lambda m, a: a.logsumexp((0, 1)), _u(3, 4)),
    "var": (lambda m, a: a.var(), _u(3, 4)),
    "var_dim": (lambda m, a: a.var(1), _u(3, 4)),
    "var_dims_keep": (lambda m, a: a.var((0, 2), keepdim=True), _u(2, 3, 4)),
    "std": (lambda m, a: a.std(), _u(3, 4)),
    "std_keep": (lambda m, a: a.std(0, keepdim=True), _u(3, 4)),
    "var_mean": (lambda m, a: m.var_mean(a, 1)[0] * m.var_mean(a, 1)[1], _u(3, 4)),
    "std_mean": (lambda m, a: m.std_mean(a)[0] + m.std_mean(a)[1], _u(3, 4)),
    "norm": (lambda m, a: m.linalg.vector_norm(a), _u(3, 4)),
    "norm_dim": (lambda m, a: a.norm(dim=1), _u(3, 4)),
    "norm_1": (lambda m, a: m.linalg.vector_norm(a, 1), _u(3, 4)),
    "norm_3": (lambda m, a: m.linalg.vector_norm(a, 3, dim=1), _u(3, 4)),
    "norm_1_5": (lambda m, a: m.linalg.vector_norm(a, 1.5, dim=1), _u(3, 4)),
    "norm_0_5": (lambda m, a: m.linalg.vector_norm(a, 0.5), _u(3, 4)),
    "norm_inf_dim": (lambda m, a: m.linalg.vector_norm(a, float("inf"), dim=1), _u(3, 4)),
    "normalize": (lambda m, a: m.nn.functional.normalize(a), _u(3, 4)),
    # amax/amin (scale_grad_by_count of restore_reduced_dims: ties share the gradient), aminmax
    "amax": (lambda m, a: a.amax(1), TIES),
    "amax_all": (lambda m, a: a.amax(), TIES),
    "amin_dims_keep": (lambda m, a: a.amin((0, 2), keepdim=True), TIES3),
    "amin_nd": (lambda m, a: a.amin((2, 0)), TIES3),
    "aminmax": (lambda m, a: (lambda r: r.min * r.max)(m.aminmax(a, dim=1)), TIES),
    "aminmax_all": (lambda m, a: (lambda r: r[0] + r[1].sin())(m.aminmax(a)), TIES),
    # cummax/cummin (cummaxmin_backward: a scatter_add), logcumsumexp
    "cummax": (lambda m, a: a.cummax(1)[0], TIES),
    "cummin": (lambda m, a: a.cummin(-2)[0], TIES),
    "logcumsumexp": (lambda m, a: a.logcumsumexp(1), _u(3, 4)),
    "logcumsumexp_0": (lambda m, a: a.logcumsumexp(0), _u(3, 4)),
    # cumprod with zeros: PyTorch's O(n^2) loop of prods, cumprods and copies into slices
    "cumprod_zeros": (lambda m, a: a.cumprod(1), ZEROS),
    "cumprod_zeros_0": (lambda m, a: a.cumprod(0), ZEROS),
    "cumprod_zeros_1d": (lambda m, a: a.cumprod(0), ZEROS[1]),
    "cumprod_zeros_3": (lambda m, a: a.cumprod(0), np.array([0.6, 0.0, 0.7])),
    # var/std with every dim named (self.mean(dim, True), MeanBackward1) and without a dim
    "var_all_dims": (lambda m, a: a.var((0, 1)), _u(3, 4)),
    "var_1d_dim": (lambda m, a: a.var(0), _u(4)),
    "var_unbiased_arg": (lambda m, a: a.var(False), _u(3, 4)),
    "var_none_keep": (lambda m, a: a.var(None, keepdim=True), _u(3, 4)),
    "std_all_dims": (lambda m, a: a.std((1, 0)), _u(3, 4)),
    "var_mean_all_dims": (lambda m, a: (lambda r: r[0] * r[1])(m.var_mean(a, (0, 1))), _u(3, 4)),
    "std_mean_all_dims": (
        lambda m, a: (lambda r: r[0] * r[1])(m.std_mean(a, (0, 1), keepdim=True)),
        _u(3, 4),
    ),
    # nansum (nansum_backward: sum_backward masked off NaN) and nanmean (nansum over a count)
    "nansum": (lambda m, a: a.nansum(1), WITH_NAN),
    "nansum_all": (lambda m, a: a.nansum(), WITH_NAN),
    "nansum_dims": (lambda m, a: a.nansum((0, 1)), WITH_NAN),
    "nanmean": (lambda m, a: a.nanmean(1, keepdim=True), WITH_NAN),
}

# Each new op and shape compiles JAX programs (about 30 per case), and every table entry a module
# records is checked numerically at its end (conftest.py, Note [VJP samples]), so by default a
# representative set runs; LEAFGRAD_FORMULA_CASES=all runs every case. By default third
# derivatives run for the plain cases in THIRD only; with LEAFGRAD_FORMULA_CASES=all, for all.
CORE = ("mm_t_self", "amax", "var_all_dims")
PLAIN = ("prod_dim", "cumprod_zeros_3", "nansum")
THIRD = ("prod_dim",)
if os.environ.get("LEAFGRAD_FORMULA_CASES") == "all":
    CORE = tuple(CASES)
    PLAIN = (
        "mm_t_self", "addmm_bcast", "mv", "bmm", "matmul_3_2", "trace", "prod_dim", "std",
        "amax_all", "aminmax", "cummin", "logcumsumexp", "cumprod_zeros", "cumprod_zeros_0",
        "cumprod_zeros_3", "var_all_dims", "var_mean_all_dims", "nansum", "nansum_all",
    )  # fmt: skip
    THIRD = PLAIN
PARAMS = [(name, "sin") for name in CORE] + [(name, "plain") for name in PLAIN]


@pytest.mark.parametrize(("name", "wrap"), PARAMS)
def test_graph(name, wrap):
    fn, *inputs = CASES[name]
    # third derivatives for the plain runs in THIRD only: each order compiles more JAX programs
    if wrap == "sin":
        check_graph(lambda m, *xs: fn(m, *xs).sin(), *inputs, order=2)
    else:
        check_graph(fn, *inputs, order=3 if name in THIRD else 2)


SELECTING = {
    "max_dim": lambda m, a: a.max(1)[0],
    "min_dim_keep": lambda m, a: a.min(0, keepdim=True)[0],
    "kthvalue": lambda m, a: a.kthvalue(2, 1)[0],
    "sort": lambda m, a: a.sort(1, descending=True)[0],
    "topk": lambda m, a: a.topk(2, 0)[0],
    "median_dim": lambda m, a: a.median(1)[0],
    "nanmedian_dim_keep": lambda m, a: a.nanmedian(0, keepdim=True)[0],
    "mode": lambda m, a: a.mode(1)[0],
    "max_all": lambda m, a: a.max(),
    "min_all": lambda m, a: a.min(),
    "median_all": lambda m, a: a.median(),
    "nanmedian_all": lambda m, a: a.nanmedian(),
}
SELECTING_CORE = ("max_dim",)
if os.environ.get("LEAFGRAD_FORMULA_CASES") == "all":
    SELECTING_CORE = tuple(SELECTING)


@pytest.mark.parametrize("name", SELECTING_CORE)
def test_value_selecting(name):
    """value_selecting_reduction_backward and evenly_distribute_backward, with ties."""
    check_graph(lambda m, a: SELECTING[name](m, a).sin(), TIES, order=2)


@pytest.mark.skipif(
    os.environ.get("LEAFGRAD_FORMULA_CASES") != "all", reason="LEAFGRAD_FORMULA_CASES=all"
)
def test_evenly_distribute_nan():
    """evenly_distribute_backward of a NaN result: the gradient goes to the NaN elements (median)
    or, for nanmedian, to the elements equal to the median of the rest."""
    a = np.array([[0.3, np.nan], [0.1, 0.3]])
    check_graph(lambda m, x: x.median().sin() + x.nanmedian().sin(), a, order=2)
