"""F.cosine_similarity and F.cosine_embedding_loss against torch: values, gradients, graphs."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import both


@pytest.mark.parametrize(
    "shapes,dim",
    [
        (((4, 5), (4, 5)), 1),
        (((4, 5), (1, 5)), 1),
        (((3, 4), (3, 4)), 0),
        (((2, 3, 4), (2, 3, 4)), -1),
    ],
)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_cosine_similarity(shapes, dim, dtype):
    rng = np.random.default_rng(1)
    a, b = (rng.standard_normal(s).astype(dtype) for s in shapes)
    a[0] = 0.0  # a zero row: the clamped norm

    def f(m):
        x, y = m.tensor(a, requires_grad=True), m.tensor(b, requires_grad=True)
        r = m.nn.functional.cosine_similarity(x, y, dim=dim)
        (r * m.arange(r.numel(), dtype=r.dtype).reshape(r.shape)).sum().backward()
        return r, x.grad, y.grad

    both(f)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("batched", [True, False])
def test_cosine_embedding_loss(reduction, batched):
    rng = np.random.default_rng(2)
    a = rng.standard_normal((4, 5) if batched else (5,)).astype(np.float32)
    b = rng.standard_normal(a.shape).astype(np.float32)
    tgt = [1, -1, 1, -1] if batched else -1

    def f(m):
        x, y = m.tensor(a, requires_grad=True), m.tensor(b, requires_grad=True)
        r = m.nn.functional.cosine_embedding_loss(
            x, y, m.tensor(tgt), margin=-0.2, reduction=reduction
        )
        r.sum().backward()
        return r, x.grad, y.grad

    both(f)


def test_cosine_embedding_loss_shape_errors():
    both(lambda m: m.nn.functional.cosine_embedding_loss(m.ones(2, 3), m.ones(2, 3), m.ones(2, 2)))
    both(lambda m: m.nn.functional.cosine_embedding_loss(m.ones(3), m.ones(3), m.ones(2)))


def test_cosine_similarity_of_integers_refused():
    both(
        lambda m: m.nn.functional.cosine_similarity(
            m.ones(2, 3, dtype=m.int64), m.ones(2, 3, dtype=m.int64)
        )
    )
