"""Regressions next to the fuzzer's findings (group G).

A leaf's AccumulateGrad keeps the leaf: after ``detach_()`` or ``requires_grad_(False)`` an
in-place op with an operand that requires grad gives the leaf a history, and a backward that
reaches the old AccumulateGrad raises "leaf variable has been moved into the graph interior"
(fuzz seed 59); one that only stopped requiring grad is skipped silently."""

from __future__ import annotations

import pytest
from conftest import both

STOPS = {
    "detach_": lambda x: x.detach_(),
    "requires_grad_false": lambda x: x.requires_grad_(False),
}
WRITES = {
    "mul_": lambda M, x, w: x.mul_(w),
    "addcdiv_": lambda M, x, w: x.addcdiv_(w, w + 2, value=2.0),
    "copy_": lambda M, x, w: x.copy_(w),
    "index_": lambda M, x, w: x[0:2].add_(w[0:2]),
    "none": lambda M, x, w: None,
}
RUNS = {
    "backward": lambda M, y, x, w: y.backward(),
    "create_graph": lambda M, y, x, w: y.backward(create_graph=True),
    "grad_of_w": lambda M, y, x, w: M.autograd.grad(y, [w], allow_unused=True),
    "inputs_w": lambda M, y, x, w: y.backward(inputs=[w]),
    "retain_twice": lambda M, y, x, w: (y.backward(retain_graph=True), y.backward()),
}


@pytest.mark.parametrize("run", sorted(RUNS))
@pytest.mark.parametrize("write", sorted(WRITES))
@pytest.mark.parametrize("stop", sorted(STOPS))
@pytest.mark.parametrize("view", [False, True])
def test_leaf_moved_into_the_graph_interior(view, stop, write, run):
    def fn(M):
        if view:
            base = M.ones(2, 3)
            x = base[1]
            x.requires_grad_()
        else:
            x = M.ones(3, requires_grad=True)
        y = (x * 2).sum()
        STOPS[stop](x)
        w = M.full((3,), 0.5, requires_grad=True)
        WRITES[write](M, x, w)
        out = RUNS[run](M, y, x, w)
        return out, x.grad, w.grad, x.is_leaf, x.requires_grad

    both(fn)


def test_moved_leaf_raises_on_every_repeat():
    """The fused backward (Note [Fused backward]) leaves such a graph to the eager loop."""

    def fn(M):
        seen = []
        for _ in range(4):
            x = M.ones(3, requires_grad=True)
            y = (x.exp() * 2).sum()
            x.requires_grad_(False)
            w = M.ones(3, requires_grad=True)
            x.mul_(w)
            try:
                y.backward()
            except RuntimeError as e:
                seen.append(str(e))
            seen.append(x.grad)
        return seen

    both(fn)
