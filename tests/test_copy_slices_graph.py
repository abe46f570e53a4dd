"""CopySlices with ``create_graph=True``, against torch: PyTorch's ``CopySlices::apply`` runs as
recorded ops (``new_empty_strided(...).copy_(grad)``, ``as_strided``, a contiguous ``clone`` for
the in-place op's node, ``copy_`` of its gradient back), so the base's gradient has a
``CopySlices`` node and version 2, and the view's gradient a ``CloneBackward0`` below the op's
formula. The eager backward gives the base's gradient version 2 too."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import both

X = np.random.default_rng(7).standard_normal((3, 4))

VIEWS = {
    "rows": lambda y: y[1:],
    "column": lambda y: y[:, 2],
    "strided": lambda y: y[::2, 1::2],
    "transposed": lambda y: y.t()[1:3],
    "diagonal": lambda y: y.diagonal(),
    "element": lambda y: y[1, 1],
    "flat": lambda y: y.view(-1)[3:9],
}
WRITES = {
    "mul_": lambda m, v, w: v.mul_(w[: v.numel()].reshape(v.shape)),
    "exp_": lambda m, v, w: v.exp_(),
    "copy_": lambda m, v, w: v.copy_(w[: v.numel()].reshape(v.shape) * 2),
    "fill_": lambda m, v, w: v.fill_(1.5),
    "add_scaled": lambda m, v, w: v.add_(w[: v.numel()].reshape(v.shape), alpha=3),
    "clamp_": lambda m, v, w: v.clamp_(-0.5, 0.5),
}
BUILDS = {"clone": lambda x: x.clone(), "product": lambda x: x * 2}


def _tree(fn, depth=0):
    if fn is None or depth > 5:
        return None
    return (type(fn).__name__, [_tree(n, depth + 1) for n, _ in fn.next_functions])


@pytest.mark.parametrize("build", list(BUILDS))
@pytest.mark.parametrize("write", list(WRITES))
@pytest.mark.parametrize("view", list(VIEWS))
def test_copy_slices_backward_as_recorded_ops(view, write, build):
    def fn(m):
        x = m.tensor(X, requires_grad=True)
        w = m.linspace(-1, 1, 12, dtype=m.float64).requires_grad_()
        y = BUILDS[build](x)
        WRITES[write](m, VIEWS[view](y), w)
        out = (y * y).sum()
        gx, gw = m.autograd.grad(out, (x, w), create_graph=True, allow_unused=True)
        found = [(g, g._version, g.stride(), _tree(g.grad_fn)) for g in (gx, gw) if g is not None]
        total = sum((g * g).sum() for g in (gx, gw) if g is not None and g.requires_grad)
        seconds = None
        if not isinstance(total, int):
            seconds = m.autograd.grad(total, (x, w), allow_unused=True)
        return found, seconds

    both(fn)


@pytest.mark.parametrize("view", list(VIEWS))
def test_eager_base_gradient_has_version_two(view):
    def fn(m):
        x = m.tensor(X, requires_grad=True)
        y = x.clone()
        VIEWS[view](y).mul_(3)
        (y * 2).sum().backward()
        return x.grad, x.grad._version, x.grad.stride()

    both(fn)


@pytest.mark.parametrize("part", [0, 1])
def test_copy_slices_through_view_as_real_with_create_graph(part):
    """A view through ``view_as_real`` is replayed, not an ``as_strided`` of the base: its
    CopySlices keeps the recorded view chain (``view_chain_gather``/``view_chain_scatter``).
    The values and second derivatives are PyTorch's; the base gradient's node is still
    ``AsStridedScatterBackward0`` where PyTorch replays the views (``CopySlices``), so the
    gradients are compared detached."""

    def fn(m):
        x = m.tensor([1.0 + 2.0j, -0.5 + 0.25j, 3.0 - 1.0j], requires_grad=True)
        w = m.tensor([0.5, -1.5, 2.0], dtype=m.float32, requires_grad=True)
        y = x.clone()
        m.view_as_real(y)[:, part].mul_(w)
        gx, gw = m.autograd.grad((y * y.conj()).real.sum(), (x, w), create_graph=True)
        seconds = m.autograd.grad((gx.abs() ** 2).sum() + (gw**2).sum(), (x, w))
        return gx.detach(), gw.detach(), gx.requires_grad, gw.requires_grad, seconds

    both(fn)
