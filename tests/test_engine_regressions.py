"""Engine regressions against PyTorch: gradients made in inference mode, expanded gradients."""

from __future__ import annotations

import pytest
from conftest import both


def _attempt(fn):
    """``fn()``, or the text of the RuntimeError it raised."""
    try:
        return fn()
    except RuntimeError as exc:
        return str(exc)


# --- Note [Gradients in inference mode] -------------------------------------------------------


def test_backward_through_op_in_inference_mode_gives_an_inference_grad():
    def fn(m):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        y = (x * 2).sum()
        with m.inference_mode():
            y.backward(retain_graph=True)
        inference = x.grad.is_inference()
        error = _attempt(lambda: y.backward())
        return inference, error, x.grad

    both(fn)


def test_accumulation_into_normal_grad_in_inference_mode_keeps_it_normal():
    def fn(m):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        (x * 2).sum().backward()
        grad = x.grad
        z = (x * 3).sum()
        with m.inference_mode():
            z.backward()
        return x.grad is grad, x.grad.is_inference(), x.grad._version, x.grad

    both(fn)


def test_accumulation_into_inference_grad_inside_inference_mode():
    def fn(m):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        y = (x * 2).sum()
        with m.inference_mode():
            y.backward(retain_graph=True)
            y.backward(retain_graph=True)
        return x.grad.is_inference(), x.grad

    both(fn)


@pytest.mark.parametrize("create_graph", [False, True])
def test_accumulation_into_inference_grad_outside_inference_mode_writes_then_raises(
    create_graph,
):
    def fn(m):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        y = (x * x).sum()
        with m.inference_mode():
            y.backward(retain_graph=True)
        error = _attempt(lambda: y.backward(retain_graph=True, create_graph=create_graph))
        return error, x.grad.detach(), x.grad.is_inference()

    both(fn)


def test_autograd_grad_in_inference_mode_gives_inference_tensors():
    def fn(m):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        w = m.tensor([3.0], requires_grad=True)
        y = (x * 2).sum()
        with m.inference_mode():
            gx, gw = m.autograd.grad(y, [x, w], allow_unused=True, materialize_grads=True)
        return gx.is_inference(), gw.is_inference(), gx, gw

    both(fn)


def test_retained_grad_made_in_inference_mode_is_an_inference_tensor():
    def fn(m):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        y.retain_grad()
        z = (y * 3).sum()
        with m.inference_mode():
            z.backward(retain_graph=True)
        inference = y.grad.is_inference(), x.grad.is_inference()
        error = _attempt(lambda: z.backward(retain_graph=True))
        return inference, error, y.grad.is_inference(), y.grad, x.grad.detach()

    both(fn)


def test_hook_arguments_in_inference_mode_are_inference_tensors():
    def fn(m):
        seen = []
        x = m.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        y.register_hook(lambda g: seen.append(g.is_inference()))
        x.register_hook(lambda g: seen.append(g.is_inference()))
        s = y.sum()
        with m.inference_mode():
            s.backward()
        return seen, x.grad.is_inference()

    both(fn)


def test_fused_backward_into_inference_grad_raises_as_the_eager_engine():
    # a graph long enough for Note [Fused backward], run three times so its chunk compiles
    def fn(m):
        x = m.tensor([0.5, 1.0], requires_grad=True)
        errors = []
        for _ in range(3):
            y = x
            for _ in range(6):
                y = (y * 1.5).sin()
            z = y.sum()
            with m.inference_mode():
                z.backward(retain_graph=True)
            errors.append(_attempt(lambda z=z: z.backward()))
        return errors, x.grad.detach()

    both(fn)


# --- Note [Expanded gradients] ----------------------------------------------------------------

_SUMS = {
    "sum": lambda m, x: (x.sum(), None),
    "sum_dim0": lambda m, x: (x.sum(0), m.ones(3)),
    "sum_dim1": lambda m, x: (x.sum(1), m.ones(3)),
    "sum_dim1_keepdim": lambda m, x: (x.sum(1, keepdim=True), m.ones(3, 1)),
    "sum_dims": lambda m, x: (x.sum((0, 1)), None),
    "sum_of_sum": lambda m, x: (x.sum(0).sum(), None),
    "clone_sum": lambda m, x: (x.clone().sum(), None),
    "plus_one_sum": lambda m, x: ((x + 1).sum(), None),
    "plus_leaf_scalar_sum": lambda m, x: ((x + m.tensor(1.0, requires_grad=True)).sum(), None),
    "sub_sum": lambda m, x: ((x - m.ones(3)).sum(), None),
    "given_scalar": lambda m, x: (x.sum(), m.tensor(2.0)),
    # computed gradients: plain tensors
    "mean": lambda m, x: (x.mean(), None),
    "mul_sum": lambda m, x: ((x * 2).sum(), None),
    "neg_sum": lambda m, x: ((-x).sum(), None),
    "sum_to_float64": lambda m, x: (x.sum(dtype=m.float64), None),
    "sum_twice": lambda m, x: (x.sum() + x.sum(), None),
    "nansum": lambda m, x: (x.nansum(), None),
}


@pytest.mark.parametrize("case", sorted(_SUMS))
def test_grad_of_sum_is_expanded_where_pytorch_passes_it_on(case):
    def fn(m):
        x = m.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]], requires_grad=True)
        out, grad = _SUMS[case](m, x)
        (g,) = m.autograd.grad(out, x, grad)
        layout = g.stride(), g.is_contiguous()
        return layout, _attempt(lambda: g.add_(1)), g

    both(fn)


@pytest.mark.parametrize("shape", [(4, 1, 3), (1, 3), (3, 1), ()])
@pytest.mark.parametrize("dims", [None, (0,), (-1,), (0, -1)])
@pytest.mark.parametrize("keepdim", [False, True])
def test_strides_of_sum_gradient(shape, dims, keepdim):
    def fn(m):
        x = m.ones(shape, requires_grad=True)
        if dims is None:
            out = x.sum()
        elif not shape:
            return None
        else:
            out = x.sum(dims, keepdim=keepdim)
        (g,) = m.autograd.grad(out, x, m.ones(out.shape))
        return g.stride(), g.is_contiguous()

    both(fn)


def test_hooks_see_the_expanded_gradient():
    def fn(m):
        seen = []
        x = m.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        x.register_hook(lambda g: seen.append((g.stride(), _attempt(lambda: g.mul_(2)))))
        y = x.clone()
        y.register_hook(lambda g: seen.append((g.stride(), _attempt(lambda: g.mul_(2)))))
        y.sum().backward()
        return seen, x.grad.stride(), x.grad.add_(1)

    both(fn)


def test_hook_result_replaces_the_expanded_gradient():
    def fn(m):
        x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x.clone()
        y.register_hook(lambda g: g * 2)
        (g,) = m.autograd.grad(y.sum(), x)
        return g.stride(), g.add_(1)

    both(fn)


def test_leaf_grad_and_retained_grad_of_sum_are_writable():
    def fn(m):
        x = m.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        y = x * 1
        y.retain_grad()
        y.sum().backward()
        return x.grad.stride(), y.grad.stride(), x.grad.add_(1), y.grad.add_(1)

    both(fn)


def test_given_noncontiguous_gradient_passes_through():
    def fn(m):
        x = m.ones(3, 2, requires_grad=True)
        (g,) = m.autograd.grad(x + 1, x, m.ones(2, 3).t())
        return g.stride(), g.is_contiguous(), g

    both(fn)


def test_given_expanded_gradient_passes_through():
    def fn(m):
        x = m.ones(3, 2, requires_grad=True)
        (g,) = m.autograd.grad(x.clone(), x, m.tensor(2.0).expand(3, 2))
        return g.stride(), _attempt(lambda: g.add_(1))

    both(fn)
