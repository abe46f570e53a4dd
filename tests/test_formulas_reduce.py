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
# Not covered yet (their graphs differ from PyTorch's outside these formulas): an mm operand that
# is column-major but not saved (``mm_mat1_backward`` reads strides PyTorch saves and leafgrad's
# node does not keep: it counts as row-major), and matmul's folded 2-d @ 3-d and broadcast
# ``(1, n, m) @ (b, m, p)`` paths, whose transposed operands lose their strides inside
# ``linalg_ops._matmul``.
C23, C34, C3, C24, C234, C523 = _u(2, 3), _u(3, 4), _u(3), _u(2, 4), _u(2, 3, 4), _u(5, 2, 3)
CASES = {
    # mm, with column-major (transposed) operands: mm_mat1_backward / mm_mat2_backward
    "mm": (lambda m, a, b: a.mm(b), _u(2, 3), _u(3, 4)),
    "mm_t_self": (lambda m, a, b: a.t().mm(b), _u(3, 2), _u(3, 4)),
    "mm_t_both": (lambda m, a, b: a.t() @ b.t(), _u(3, 2), _u(4, 3)),
    "mm_1x1": (lambda m, a, b: a.mm(b), _u(1, 1), _u(1, 3)),
    "mm_self_only": (lambda m, a: a.mm(_const(m, C34)), _u(2, 3)),
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
}

# Each new op and shape compiles JAX programs (about 30 per case), so by default a core set runs;
# LEAFGRAD_FORMULA_CASES=all runs every case.
CORE = (
    "mm_t_self", "addmm_bcast", "bmm", "matmul_3_2", "prod_dim", "logsumexp", "std_keep",
    "norm_3",
)  # fmt: skip
PLAIN = ("mm_t_self", "prod_dim")
if os.environ.get("LEAFGRAD_FORMULA_CASES") == "all":
    CORE, PLAIN = tuple(CASES), ("mm_t_self", "addmm_bcast", "mv", "bmm", "matmul_3_2", "trace",
                                 "prod_dim", "std")  # fmt: skip
PARAMS = [(name, "sin") for name in CORE] + [(name, "plain") for name in PLAIN]


@pytest.mark.parametrize(("name", "wrap"), PARAMS)
def test_graph(name, wrap):
    fn, *inputs = CASES[name]
    # third derivatives for the plain runs only: each order compiles more JAX programs
    if wrap == "sin":
        check_graph(lambda m, *xs: fn(m, *xs).sin(), *inputs, order=2)
    else:
        check_graph(fn, *inputs)


TIES = np.array([[0.5, 0.9, 0.9, -0.2], [0.1, -0.3, 0.4, 0.4], [0.7, 0.2, 0.7, 0.6]])
SELECTING = {
    "max_dim": lambda m, a: a.max(1)[0],
    "min_dim_keep": lambda m, a: a.min(0, keepdim=True)[0],
    "kthvalue": lambda m, a: a.kthvalue(2, 1)[0],
    "sort": lambda m, a: a.sort(1, descending=True)[0],
    "topk": lambda m, a: a.topk(2, 0)[0],
    "max_all": lambda m, a: a.max(),
    "min_all": lambda m, a: a.min(),
}


@pytest.mark.parametrize("name", ["max_dim", "sort", "max_all"])
def test_value_selecting(name):
    """value_selecting_reduction_backward and evenly_distribute_backward, with ties."""
    check_graph(lambda m, a: SELECTING[name](m, a).sin(), TIES, order=2)
