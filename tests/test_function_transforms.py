"""Custom autograd Functions under ``func`` transforms use their own backward (lowered to
``jax.custom_vjp``, Note [Functions under JAX transforms]), as torch.func does."""

from __future__ import annotations

import pytest
from conftest import both


def _functions(m):
    class ScaledRound(m.autograd.Function):
        @staticmethod
        def forward(x, k):
            return x.round() * k

        @staticmethod
        def setup_context(ctx, inputs, output):
            x, k = inputs
            ctx.save_for_backward(x)
            ctx.k = k

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * ctx.k * x, None

    class TwoOut(m.autograd.Function):
        @staticmethod
        def forward(x, y):
            return x * y, x + y

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(*inputs)

        @staticmethod
        def backward(ctx, ga, gb):
            x, y = ctx.saved_tensors
            return ga * y * 2 + gb, ga * x + gb * 3

    return ScaledRound, TwoOut


@pytest.mark.parametrize(
    "program",
    [
        lambda m, F: m.func.grad(lambda x: F[0].apply(x, 3.0).sum())(m.tensor([0.4, 1.6, -2.5])),
        lambda m, F: m.func.jacrev(lambda x: F[0].apply(x, 2.0))(m.tensor([0.4, 1.6])),
        lambda m, F: m.func.vjp(
            lambda x, y: F[1].apply(x, y), m.tensor([1.0, 2.0]), m.tensor([3.0, -1.0])
        )[1]((m.ones(2), m.ones(2) * 2)),
        lambda m, F: m.func.grad(lambda x: (F[0].apply(x * x, 1.5).sin()).sum())(
            m.tensor([0.3, 1.2])
        ),
        lambda m, F: m.func.grad(
            lambda x: m.func.grad(lambda y: F[1].apply(y, y)[0].sum())(x).sum()
        )(m.tensor([0.5, 2.0])),
    ],
    ids=["grad", "jacrev", "vjp_two_outputs", "composed", "nested_grad"],
)
def test_function_under_func_transforms(program):
    both(lambda m: program(m, _functions(m)))
