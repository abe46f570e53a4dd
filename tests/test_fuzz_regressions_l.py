"""Regressions found by fuzz seeds 159-164 and the probes they led to, against torch 2.13."""

from __future__ import annotations

import pytest
import torch
from fuzz_programs import check

import leafgrad

DTYPES = ["float32", "float64", "float16", "int64", "int32", "uint8", "bool"]
SHAPES = [(), (1,), (3,), (1, 3), (3, 1), (2, 3)]
REDUCTIONS = ["amin", "amax", "all", "any", "argmax", "argmin"]


def _result_versions(T, op, shape, dtype, dim, keepdim):
    x = T.ones(shape, dtype=getattr(T, dtype))
    with T.inference_mode():
        y = x.clone()
    kwargs = {} if dim is None else {"dim": dim, "keepdim": keepdim}
    try:
        out = getattr(T, op)(y, **kwargs)
    except (RuntimeError, IndexError) as e:
        return type(e).__name__
    return tuple(t._version for t in (out if isinstance(out, tuple) else (out,)))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", REDUCTIONS)
def test_versions_of_reductions_of_inference_tensors(op, dtype):
    """Seed 164: outside inference mode the reductions of an inference tensor run their kernels
    without autograd, and the kernels' writes into their results show in the versions: ``amin``
    writes as ``amax`` does (int64's kernel does not), ``all``/``any`` always, ``argmax`` and
    ``argmin`` where the reduced dim has size 1 (leafgrad gave 0 for all of these)."""
    for shape in SHAPES:
        for dim in (None, 0, -1):
            for keepdim in (False, True):
                args = (op, shape, dtype, dim, keepdim)
                assert _result_versions(leafgrad, *args) == _result_versions(torch, *args), args


def test_seed_164_amin_of_an_inference_abs():
    check(
        [
            ("new", "float32", 0, False, 0),
            ("block", "inference_mode", [("unary", "abs", 0)]),
            ("reduce", "amin", 1, 0, False),
        ]
    )


def test_seed_159_matmul_of_a_batch_and_its_transpose():
    """The gradients of ``x @ x.mT`` reach ``x`` through views (``view``, ``transpose``):
    summed into a new tensor, so ``.grad`` has version 0 (Note [View gradients])."""
    check(
        [
            ("new", "float32", 6, True, 0),
            ("matmul", 0, 0, False),
            ("backward", 1, False, 1),
            ("grad_of", 0),
        ]
    )


def test_seed_167_post_accumulate_hooks_of_a_leaf_that_stopped_requiring_grad():
    """PyTorch's AccumulateGrad leaves ``.grad`` alone after ``detach_()`` but still runs the
    leaf's post-accumulate hooks (the fuzz hook ``t.grad.mul_`` then raises on None)."""
    check(
        [
            ("new", "float32", 0, True, 0),
            ("unary", "abs", 0),
            ("flag", "post_acc_hook", 0, 0),
            ("flag", "detach_", 0, 0),
            ("backward", 1, False, 0),
        ]
    )


def test_seed_167_create_graph_warning_comes_after_the_hooks_warnings():
    """The engine's create_graph warning is issued when the run returns (or raises), after the
    warnings hooks issued while it ran (here a non-leaf ``.grad`` read)."""
    check(
        [
            ("new", "float32", 0, True, 0),
            ("unary", "abs", 0),
            ("flag", "post_acc_hook", 0, 0),
            ("flag", "post_acc_hook", 0, 0),
            ("backward", 1, False, 3),
        ]
    )
