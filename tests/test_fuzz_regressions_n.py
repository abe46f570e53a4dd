"""Regressions found by fuzz seeds 180-182 and the probes of session 49, against torch 2.13."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from fuzz_programs import check

import leafgrad


def test_seed_181_bool_matmul_refused_before_the_dtype_comparison():
    """A batched bool @ float: PyTorch's bmm dispatches on ``self``'s dtype first
    ('"bmm" not implemented for 'Bool''); leafgrad compared the dtypes first."""
    check(
        [
            ("new", "float32", 6, False, 0),
            ("unary", "abs", 0),
            ("unary", "abs", 0),
            ("unary", "abs", 0),
            ("disc", "eq", 0, 0, 2.0),
            ("unary", "abs", 0),
            ("view", "unfold", 0, 1, 1),
            ("join", "stack", 0, 0, 3),
            ("unary", "abs", 0),
            ("unary", "abs", 0),
            ("matmul", 40, 24, False),
        ]
    )


@pytest.mark.parametrize(
    "a,b",
    [
        ("bool", "float32"),
        ("float32", "bool"),
        ("bool", "int64"),
        ("int64", "bool"),
        ("bool", "bool"),
    ],
)
def test_bmm_and_dot_dtype_refusals(a, b):
    def outcome(T):
        res = []
        for f in (
            lambda: T.bmm(
                T.zeros(2, 2, 3, dtype=getattr(T, a)), T.zeros(2, 3, 2, dtype=getattr(T, b))
            ),
            lambda: (
                T.zeros(2, 1, 3, dtype=getattr(T, a)) @ T.zeros(2, 1, 3, 2, dtype=getattr(T, b))
            ),
            lambda: T.dot(T.zeros(3, dtype=getattr(T, a)), T.zeros(3, dtype=getattr(T, b))),
        ):
            try:
                res.append(str(f().dtype))
            except Exception as exc:  # noqa: BLE001 - compared
                res.append((type(exc).__name__, str(exc)))
        return res

    assert outcome(leafgrad) == outcome(torch)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_rsqrt_is_one_over_sqrt(dtype):
    """PyTorch's rsqrt is ``1 / sqrt(x)`` rounded twice; XLA's rsqrt differed by an ulp on a
    third of the values."""
    x = np.random.default_rng(0).random(4096) * 10 + 1e-3
    t = torch.rsqrt(torch.tensor(x).to(getattr(torch, dtype))).numpy()
    g = leafgrad.rsqrt(leafgrad.tensor(x).to(getattr(leafgrad, dtype))).numpy()
    np.testing.assert_array_equal(g, t)
