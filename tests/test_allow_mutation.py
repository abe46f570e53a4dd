"""``torch.autograd.graph.allow_mutation_on_saved_tensors``: tensors saved for backward inside
the context may be written in place; a backward inside reads them as they were saved, one
outside raises, and the contexts do not nest."""

from __future__ import annotations

import pytest
from conftest import both

PROGRAMS = {
    "pow_then_sin_": lambda M, a: (lambda b: ((b**2).sum(), b.sin_())[0])(a.clone()),
    "view_written": lambda M, a: (lambda b: ((b**2).sum(), b[0].mul_(3))[0])(a.clone()),
    "exp_input_written": lambda M, a: (lambda b: (b.exp().sum(), b.mul_(2))[0])(a.clone()),
    "exp_output_written": lambda M, a: (lambda o: (o.mul_(2), o.sum())[1])(a.clone().exp()),
    "unwritten": lambda M, a: (a.clone() * a).sum(),
    "written_twice": lambda M, a: (lambda b: ((b * b).sum(), b.add_(1), b.mul_(3))[0])(a * 1),
    "leaf_data_written": lambda M, a: (lambda b: ((a * b).sum(), b.data.add_(5))[0])(a * 1),
}


@pytest.mark.parametrize("inside", [True, False])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_allow_mutation_on_saved_tensors(name, inside):
    def fn(M):
        a = M.tensor([0.5, 1.5], requires_grad=True)
        with M.autograd.graph.allow_mutation_on_saved_tensors() as ctx:
            out = PROGRAMS[name](M, a)
            if inside:
                out.backward()
        if not inside:
            out.backward()
        return a.grad, type(ctx).__name__

    both(fn)


def test_contexts_do_not_nest():
    def fn(M):
        with M.autograd.graph.allow_mutation_on_saved_tensors():
            with M.autograd.graph.allow_mutation_on_saved_tensors():
                pass

    def after(M):
        try:
            fn(M)
        except RuntimeError:
            pass
        a = M.ones(2, requires_grad=True)
        with M.autograd.graph.allow_mutation_on_saved_tensors():
            b = a * 1
            out = (b * b).sum()
            b.mul_(2)
            out.backward()
        return a.grad

    both(fn)
    both(after)


# PyTorch's thread-local autograd flags: multithreaded backward (a flag only in leafgrad, whose
# backward runs on the calling thread) and the gradient layout policy (off: a gradient
# AccumulateGrad takes keeps its layout, and the layout-contract warning is not given)
FLAGS = {
    "defaults": lambda M: (
        M.autograd.is_multithreading_enabled(),
        M.autograd.is_view_replay_enabled(),
    ),
    "multithreading_context": lambda M: (
        _in(
            M.autograd.set_multithreading_enabled(False),
            lambda: M.autograd.is_multithreading_enabled(),
        )
        + (M.autograd.is_multithreading_enabled(),)
    ),
    "multithreading_decorator": lambda M: (
        M.autograd.set_multithreading_enabled(False)(M.autograd.is_multithreading_enabled)(),
        M.autograd.is_multithreading_enabled(),
        M.autograd.set_multithreading_enabled(True) and None,
    ),
    "layout_policy_off": lambda M: _in(
        M.autograd.enforce_grad_layout_policy(False), lambda: _permuted_grad(M)
    ),
    "layout_policy_on": lambda M: _in(
        M.autograd.enforce_grad_layout_policy(True), lambda: _permuted_grad(M)
    ),
    "layout_policy_decorator": lambda M: (
        M.autograd.enforce_grad_layout_policy(False)(lambda: _permuted_grad(M))(),
        _permuted_grad(M),
    ),
}


def _in(ctx, fn):
    with ctx:
        return (fn(),)


def _permuted_grad(M):
    p = M.ones(2, 3, 4).permute(2, 0, 1).requires_grad_()
    (p * 2).sum().backward()
    q = M.ones(3, 4, requires_grad=True)
    q.grad = M.ones(4, 3).t()
    (q * 2).sum().backward()
    return p.grad.stride(), q.grad.stride(), q.grad


@pytest.mark.parametrize("name", sorted(FLAGS))
def test_autograd_flags(name):
    both(lambda M: FLAGS[name](M), check_warnings=False)
