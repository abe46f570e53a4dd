"""``nn.AdaptiveLogSoftmaxWithLoss`` and ``nn.SyncBatchNorm`` against torch: outputs, losses,
log-probabilities, predictions, gradients, module structure and errors."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import both

X = np.random.default_rng(0).standard_normal((6, 8))


@pytest.mark.parametrize("batched", [True, False])
def test_adaptive_log_softmax(batched):
    def fn(m):
        m.manual_seed(0)
        asm = m.nn.AdaptiveLogSoftmaxWithLoss(8, 12, [3, 7], div_value=2.0, head_bias=True)
        x = m.tensor(X, dtype=m.float32, requires_grad=True)
        target = m.tensor([0, 5, 11, 2, 7, 3])
        if not batched:
            x, target = x[1], target[1]
        out, loss = asm(x, target)
        loss.backward()
        grads = [p.grad for p in asm.parameters()]
        with m.no_grad():
            full = asm.log_prob(m.tensor(X, dtype=m.float32))
            predicted = asm.predict(m.tensor(X, dtype=m.float32))
        return out, loss, grads, full, predicted, repr(asm), type(asm(x, target)).__name__

    both(fn, rtol=1e-5, atol=1e-6)


ASM_ERRORS = {
    "no_cutoffs": lambda m: m.nn.AdaptiveLogSoftmaxWithLoss(8, 12, []),
    "unsorted": lambda m: m.nn.AdaptiveLogSoftmaxWithLoss(8, 12, [5, 3]),
    "too_large": lambda m: m.nn.AdaptiveLogSoftmaxWithLoss(8, 12, [3, 12]),
    "batch_sizes": lambda m: m.nn.AdaptiveLogSoftmaxWithLoss(8, 12, [3])(
        m.ones(2, 8), m.tensor([1, 2, 3])
    ),
    "input_dims": lambda m: m.nn.AdaptiveLogSoftmaxWithLoss(8, 12, [3])(
        m.ones(2, 2, 8), m.tensor([1, 2])
    ),
    "target_out_of_range": lambda m: m.nn.AdaptiveLogSoftmaxWithLoss(8, 12, [3])(
        m.ones(2, 8), m.tensor([1, 12])
    ),
    "target_2d": lambda m: m.nn.AdaptiveLogSoftmaxWithLoss(8, 12, [3])(
        m.ones(2, 8), m.tensor([[1, 2]])
    ),
}


@pytest.mark.parametrize("name", sorted(ASM_ERRORS))
def test_adaptive_log_softmax_errors(name):
    both(ASM_ERRORS[name])


def test_sync_batch_norm_without_a_process_group_is_batch_norm():
    def fn(m):
        m.manual_seed(1)
        bn = m.nn.SyncBatchNorm(4, momentum=None)
        x = m.tensor(X[:, :4].reshape(3, 4, 2), dtype=m.float32, requires_grad=True)
        y = bn(x)
        y.pow(3).sum().backward()
        bn.eval()
        z = bn(x.detach())
        model = m.nn.Sequential(m.nn.Linear(4, 4), m.nn.BatchNorm1d(4), m.nn.ReLU())
        converted = m.nn.SyncBatchNorm.convert_sync_batchnorm(model)
        return (
            y,
            x.grad,
            z,
            dict(bn.state_dict()),
            repr(bn),
            repr(converted),
            converted[1].weight is model[1].weight,
        )

    both(fn)
    both(lambda m: m.nn.SyncBatchNorm(4)(m.ones(4)))
    both(lambda m: m.nn.SyncBatchNorm(0)(m.ones(2, 0)))


MIXED = {
    "batch_norm_double_input": lambda m: m.nn.BatchNorm1d(4)(m.ones(3, 4, dtype=m.float64)),
    "batch_norm_double_stats": lambda m: m.nn.functional.batch_norm(
        m.ones(3, 4), m.zeros(4, dtype=m.float64), m.ones(4, dtype=m.float64)
    ),
    "batch_norm_bfloat16_input": lambda m: m.nn.BatchNorm1d(4)(m.ones(3, 4, dtype=m.bfloat16)),
    "instance_norm_double_input": lambda m: m.nn.InstanceNorm1d(4, affine=True)(
        m.ones(3, 4, 5, dtype=m.float64)
    ),
    "layer_norm_double_input": lambda m: m.nn.LayerNorm(4)(m.ones(3, 4, dtype=m.float64)),
    "group_norm_double_input": lambda m: m.nn.GroupNorm(2, 4)(m.ones(3, 4, dtype=m.float64)),
}


@pytest.mark.parametrize("name", sorted(MIXED))
def test_normalization_mixed_dtypes(name):
    both(MIXED[name])
