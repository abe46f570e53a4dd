"""Regressions next to the fuzzer's findings (group H).

Batch and group norm do not save their output in PyTorch: an in-place write to it (a
``ReLU(inplace=True)`` after ``BatchNorm2d``, as ResNets are written) leaves backward free to
run, where leafgrad's node checked the output's version. Under saved tensor hooks PyTorch packs
the outputs its forward saves beside the input (log_sigmoid's buffer, a norm's mean and rstd,
nll_loss's total weight): leafgrad packs them too, in PyTorch's order (Note [Packed computed
outputs] in autograd/saved.py; fuzz seed 113)."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import both

# not evenly spaced: a normalized middle of three evenly spaced values is 0 up to rounding,
# where ReLU's gradient is decided by that rounding
_X = (2 * np.sin(1.3 * np.arange(2 * 3 * 2 * 2)) + 0.2).reshape(2, 3, 2, 2).astype(np.float32)
_T = np.array([0, 2, 1, 1], dtype=np.int64)

NORMS = {
    "batch_norm_train": lambda M, x, w, b: M.nn.functional.batch_norm(
        x, None, None, w, b, training=True
    ),
    "batch_norm_running": lambda M, x, w, b: M.nn.functional.batch_norm(
        x, M.zeros(3), M.ones(3), w, b, training=True
    ),
    "batch_norm_eval": lambda M, x, w, b: M.nn.functional.batch_norm(
        x, M.full((3,), 0.5), M.full((3,), 2.0), w, b, training=False
    ),
    "group_norm": lambda M, x, w, b: M.nn.functional.group_norm(x, 3, w, b),
    "group_norm_one_group": lambda M, x, w, b: M.nn.functional.group_norm(x, 1, w, b),
    "layer_norm": lambda M, x, w, b: M.nn.functional.layer_norm(x.transpose(1, 3), (3,), w, b),
    "instance_norm": lambda M, x, w, b: M.nn.functional.instance_norm(x, weight=w, bias=b),
}
WRITES = {
    "relu_": lambda M, y: M.nn.functional.relu(y, inplace=True),
    "mul_": lambda M, y: y.mul_(2),
    "slice_add_": lambda M, y: y[:1].add_(1),
}


@pytest.mark.parametrize("affine", [False, True])
@pytest.mark.parametrize("write", sorted(WRITES))
@pytest.mark.parametrize("norm", sorted(NORMS))
def test_writing_a_norms_output_in_place(norm, write, affine):
    def fn(M):
        x = M.tensor(_X, requires_grad=True)
        w = M.linspace(0.5, 1.5, 3).requires_grad_() if affine else None
        b = M.linspace(-0.2, 0.3, 3).requires_grad_() if affine else None
        y = NORMS[norm](M, x * 1, w, b)
        name = y.grad_fn.name()
        y = WRITES[write](M, y)
        # not the sum of squares: a normalized output's is nearly constant (a gradient of noise)
        (y * M.tensor(np.cos(np.arange(y.numel())).reshape(tuple(y.shape)))).sum().backward()
        return [name, y, x.grad, None if w is None else w.grad, None if b is None else b.grad]

    both(fn, atol=1e-5, rtol=1e-4)


def test_writing_batch_norms_running_stats_before_backward():
    """PyTorch saves them (its training update does not bump their versions)."""

    def fn(M):
        bn = M.nn.BatchNorm1d(3)
        x = M.tensor(_X.reshape(8, 3), requires_grad=True)
        out = []
        for train in (True, False):
            bn.train(train)
            y = bn(x)
            bn(x)  # a second update in training
            y.sum().backward(retain_graph=True)
            out += [x.grad, bn.running_mean._version, y.grad_fn._saved_running_mean._version]
            bn.running_mean.add_(1)
            try:
                y.sum().backward()
            except RuntimeError as e:
                out.append(str(e))
        return out

    both(fn)


@pytest.mark.parametrize("train", [True, False])
def test_resnet_block_with_inplace_relu(train):
    """Conv, BatchNorm2d, ReLU(inplace=True), as torchvision's ResNet writes them."""

    def fn(M):
        M.manual_seed(0)
        block = M.nn.Sequential(
            M.nn.Conv2d(3, 4, 3, padding=1, bias=False),
            M.nn.BatchNorm2d(4),
            M.nn.ReLU(inplace=True),
            M.nn.Conv2d(4, 4, 3, padding=1, bias=False),
            M.nn.GroupNorm(2, 4),
            M.nn.ReLU(inplace=True),
        )
        with M.no_grad():
            for k, p in enumerate(block.parameters()):
                p.copy_(M.tensor(np.cos(np.arange(p.numel()) + k).reshape(tuple(p.shape))))
        block.train(train)
        x = M.tensor(_X, requires_grad=True)
        out = block(x)
        (out * M.tensor(np.cos(np.arange(out.numel())).reshape(tuple(out.shape)))).sum().backward()
        return [x.grad] + [p.grad for p in block.parameters()]

    both(fn, atol=1e-5, rtol=1e-4)


def _log(calls):
    def pack(t):
        calls.append(("pack", tuple(t.shape), str(t.dtype), t.requires_grad))
        return t

    def unpack(t):
        calls.append(("unpack", tuple(t.shape)))
        return t

    return pack, unpack


HOOKED = {
    "logsigmoid": (lambda M, x: M.nn.functional.logsigmoid(x), ["buffer", "self"]),
    "layer_norm": (
        lambda M, x: M.nn.functional.layer_norm(x, (2, 2)),
        ["result1", "result2", "input"],
    ),
    "group_norm": (lambda M, x: M.nn.functional.group_norm(x, 3), ["result1", "result2"]),
    "batch_norm_train": (
        lambda M, x: M.nn.functional.batch_norm(x, None, None, training=True),
        ["result1", "result2"],
    ),
    "batch_norm_eval": (
        lambda M, x: M.nn.functional.batch_norm(x, M.zeros(3), M.ones(3), training=False),
        ["result1", "result2", "running_var"],
    ),
    "batch_norm_running": (
        lambda M, x: M.nn.functional.batch_norm(
            x, M.zeros(3), M.ones(3), M.linspace(0.5, 1.5, 3), training=True
        ),
        ["result1", "result2", "running_mean", "weight"],
    ),
    "nll_loss": (
        lambda M, x: M.nn.functional.nll_loss(x.reshape(4, 6), M.tensor(_T)),
        ["total_weight", "target"],
    ),
    "nll_loss_weighted_sum": (
        lambda M, x: M.nn.functional.nll_loss(
            x.reshape(4, 6), M.tensor(_T), M.linspace(0.5, 1.0, 6), reduction="sum"
        ),
        ["total_weight", "weight"],
    ),
    "nll_loss_none": (
        lambda M, x: M.nn.functional.nll_loss(x.reshape(4, 6), M.tensor(_T), reduction="none"),
        ["total_weight"],
    ),
}


@pytest.mark.parametrize("mode", ["identity", "clone", "save_on_cpu"])
@pytest.mark.parametrize("op", sorted(HOOKED))
def test_saved_outputs_go_through_the_hooks(op, mode):
    fn_, names = HOOKED[op]

    def fn(M):
        calls = []
        pack, unpack = _log(calls)
        if mode == "clone":
            inner = pack

            def pack(t):  # noqa: F811 - the logging pack, then a copy
                return inner(t).clone()

        hooks = (
            M.autograd.graph.save_on_cpu()
            if mode == "save_on_cpu"
            else M.autograd.graph.saved_tensors_hooks(pack, unpack)
        )
        x = M.tensor(_X, requires_grad=True)
        with hooks:
            y = fn_(M, x * 1)
        out = [list(calls)]
        out += [getattr(y.grad_fn, f"_saved_{n}") for n in names]
        out.append(list(calls))
        y.sum().backward()
        out += [x.grad, list(calls)]
        try:
            getattr(y.grad_fn, f"_saved_{names[0]}")
        except RuntimeError as e:
            out.append(str(e))
        return out

    both(fn, atol=1e-5, rtol=1e-4)
