"""Hooks, ``autograd.grad`` and ``create_graph`` (gradients of gradients), against torch."""

from __future__ import annotations

import pytest
from conftest import both


def _x(m, dtype="float64"):
    return m.tensor([0.5, -1.0, 2.0], dtype=getattr(m, dtype), requires_grad=True)


# --- hooks -------------------------------------------------------------------------------------


def test_hook_order_and_replacement():
    def fn(m):
        x = _x(m)
        log = []
        y = x * 2
        y.register_hook(lambda g: log.append(("y1", g.clone())))
        y.register_hook(lambda g: g * 10)
        y.retain_grad()
        y.register_hook(lambda g: log.append(("y3", g.clone())))
        x.register_hook(lambda g: log.append(("x", g.clone())))
        x.register_post_accumulate_grad_hook(lambda t: log.append(("post", t.grad.clone())))
        y.grad_fn.register_prehook(lambda go: log.append(("pre", go[0].clone())))
        y.grad_fn.register_hook(lambda gi, go: log.append(("node", gi[0].clone(), go[0].clone())))
        (y * y).sum().backward()
        return log, y.grad, x.grad

    both(fn)


def test_hook_removed_and_used_twice():
    def fn(m):
        x = _x(m)
        log = []
        h = x.register_hook(lambda g: log.append(("removed", g.clone())))
        x.register_hook(lambda g: log.append(("kept", g.clone())))
        h.remove()
        (x * x + x.sin()).sum().backward()  # x used three times: its hook fires once
        return log, x.grad

    both(fn)


def test_leaf_hook_sees_incoming_not_accumulated():
    def fn(m):
        x = _x(m)
        seen = []
        x.register_hook(lambda g: seen.append(g.clone()))
        (x * 3).sum().backward()
        (x * 5).sum().backward()
        return seen, x.grad

    both(fn)


def test_leaf_hook_replaces_gradient():
    def fn(m):
        x = _x(m)
        x.register_hook(lambda g: g * 0 + 7)
        (x * 3).sum().backward()
        return x.grad

    both(fn)


def test_node_post_hook_replaces_grad_inputs():
    def fn(m):
        x = _x(m)
        y = x.exp()
        y.grad_fn.register_hook(lambda gi, go: (gi[0] * 2,))
        y.sum().backward()
        return x.grad

    both(fn)


def test_retain_grad_called_after_hooks_still_stores_hooked_value():
    def fn(m):
        x = _x(m)
        y = x * 2
        y.register_hook(lambda g: g + 1)
        y.retain_grad()
        y.sum().backward()
        return y.grad, x.grad

    both(fn)


@pytest.mark.parametrize(
    "case",
    ["no_grad_tensor", "post_acc_non_leaf", "post_acc_no_grad", "bad_type", "bad_size"],
)
def test_hook_errors(case):
    def fn(m):
        x = _x(m)
        if case == "no_grad_tensor":
            m.ones(2).register_hook(lambda g: g)
        elif case == "post_acc_non_leaf":
            (x * 2).register_post_accumulate_grad_hook(lambda t: None)
        elif case == "post_acc_no_grad":
            m.ones(2).register_post_accumulate_grad_hook(lambda t: None)
        elif case == "bad_type":
            y = x * 2
            y.register_hook(lambda g: 3)
            y.sum().backward()
        else:
            y = x * 2

            def grow(g):
                return m.ones(4)

            y.register_hook(grow)
            y.sum().backward()

    both(fn)


def test_hooks_with_autograd_grad_and_inputs():
    def fn(m):
        x = _x(m)
        log = []
        y = x.sin()
        y.register_hook(lambda g: log.append(("y", g.clone())))
        x.register_hook(lambda g: log.append(("x", g.clone())))
        (g,) = m.autograd.grad((y * y).sum(), x)
        return log, g, x.grad

    both(fn)


# --- autograd.grad -----------------------------------------------------------------------------

GRAD_ERRORS = {
    "input_no_grad": lambda m, x, y: m.autograd.grad(y, [m.ones(3)]),
    "unused": lambda m, x, y: m.autograd.grad(y, [_x(m)]),
    "allow_unused": lambda m, x, y: m.autograd.grad(y, [_x(m)], allow_unused=True),
    "materialize": lambda m, x, y: m.autograd.grad(y, [x, _x(m)], materialize_grads=True),
    "materialize_bad": lambda m, x, y: m.autograd.grad(
        y, [x], allow_unused=False, materialize_grads=True
    ),
    "bad_grad_shape": lambda m, x, y: m.autograd.grad(y, [x], grad_outputs=[m.ones(3)]),
    "output_no_grad": lambda m, x, y: m.autograd.grad(m.ones(2).sum(), [x]),
    "count": lambda m, x, y: m.autograd.grad([y, y], [x], grad_outputs=[None]),
    "single_input": lambda m, x, y: m.autograd.grad(y, x),
    "grad_outputs": lambda m, x, y: m.autograd.grad(x * 2, x, grad_outputs=m.arange(3.0) + 1),
    "leaves_grad_untouched": lambda m, x, y: (m.autograd.grad(y, x), x.grad),
    "non_leaf_input": lambda m, x, y: m.autograd.grad(y, [x * 1]),
}


@pytest.mark.parametrize("name", sorted(GRAD_ERRORS))
def test_autograd_grad(name):
    def fn(m):
        x = _x(m)
        y = (x * x).sum()
        return GRAD_ERRORS[name](m, x, y)

    both(fn)


def test_grad_of_intermediate_input():
    def fn(m):
        x = _x(m)
        h = x.exp()
        y = (h * h).sum()
        return m.autograd.grad(y, [h, x])

    both(fn)


def test_backward_inputs_non_leaf_retains():
    def fn(m):
        x = _x(m)
        h = x * 3
        (h * h).sum().backward(inputs=[h])
        return h.grad, x.grad, h.retains_grad

    both(fn, check_warnings=False)


# --- create_graph ------------------------------------------------------------------------------

FUNCS = {
    "pow": lambda m, x: (x**4).sum(),
    "sin_exp": lambda m, x: (x.sin() * x.exp()).sum(),
    "tanh_mm": lambda m, x: (m.outer(x, x).tanh() @ x).sum(),
    "softmax": lambda m, x: (x.softmax(0) * m.arange(3.0, dtype=x.dtype)).sum(),
    "norm": lambda m, x: x.norm() ** 3,
    "div_log": lambda m, x: (x / (x * x + 1)).sum() + (x * x + 1).log().sum(),
    "reduction_views": lambda m, x: (x[1:] * x[:2]).sum() + x.t().sum() ** 2,
}


@pytest.mark.parametrize("name", sorted(FUNCS))
def test_second_and_third_derivatives(name):
    def fn(m):
        x = _x(m)
        y = FUNCS[name](m, x)
        (g,) = m.autograd.grad(y, x, create_graph=True)
        (g2,) = m.autograd.grad((g * m.arange(1.0, 4.0, dtype=x.dtype)).sum(), x, create_graph=True)
        (g3,) = m.autograd.grad(g2.sum(), x, allow_unused=True)
        return g.detach(), g2.detach(), g3, g.requires_grad, g2.requires_grad

    both(fn)


def test_hessian_vector_product_and_gradient_penalty():
    def fn(m):
        w = m.tensor([[1.0, 2.0, 0.0], [0.0, 1.0, 3.0]], dtype=m.float64, requires_grad=True)
        x = _x(m)
        out = (w @ x).tanh().sum()
        (gx,) = m.autograd.grad(out, x, create_graph=True)
        penalty = (gx.norm() - 1) ** 2
        penalty.backward()
        v = m.tensor([1.0, 0.0, -1.0], dtype=m.float64)
        y = (x**3).sum() * (x.sin()).sum()
        (g,) = m.autograd.grad(y, x, create_graph=True)
        (hv,) = m.autograd.grad(g, x, grad_outputs=v)
        return w.grad, x.grad, hv

    both(fn)


def test_backward_create_graph_accumulates_with_graph():
    def fn(m):
        a = _x(m)
        (a * a * a).sum().backward(create_graph=True)
        first = [a.grad.detach().clone(), type(a.grad.grad_fn).__name__]
        (a * a).sum().backward(create_graph=True)
        second = [a.grad.detach().clone(), type(a.grad.grad_fn).__name__]
        g = a.grad
        a.grad = None
        g.sum().backward()
        return first, second, a.grad

    both(fn)


def test_create_graph_through_inplace_and_views():
    def fn(m):
        a = m.tensor([1.0, 2.0, 3.0, 4.0], dtype=m.float64, requires_grad=True)
        b = a * 1
        b[1:3].mul_(b[0:2].detach() + a[2:4])
        (g,) = m.autograd.grad((b**2).sum(), a, create_graph=True)
        (g2,) = m.autograd.grad(g.sum(), a)
        x = a.clone()
        x.mul_(a)
        x.sin_()
        x.add_(a)
        x.div_(a + 1)
        (h,) = m.autograd.grad(x.sum(), a, create_graph=True)
        (h2,) = m.autograd.grad(h.sum(), a)
        return g.detach(), g2, h.detach(), h2

    both(fn)


def test_double_backward_needs_retain_graph():
    def fn(m):
        x = _x(m)
        (g,) = m.autograd.grad((x**3).sum(), x, create_graph=True)
        g.sum().backward()
        g.sum().backward()

    both(fn)


def test_hooks_on_accumulate_grad_node():
    def fn(m):
        a = m.tensor([1.0, 2.0], requires_grad=True)
        y = a * 3
        acc = y.grad_fn.next_functions[0][0]
        log = []
        acc.register_prehook(lambda go: log.append(("pre", go[0].clone())))
        acc.register_hook(lambda gi, go: log.append(("post", gi, go[0].clone())))
        y.sum().backward()
        return acc.name(), log, a.grad, acc.variable is a

    both(fn)


def _hook_dict_state(hooks):
    return None if hooks is None else (type(hooks).__name__, len(hooks))


@pytest.mark.parametrize("leaf", [True, False])
@pytest.mark.parametrize("assign", ["none", "dict", "keep"])
def test_backward_hooks_attribute(leaf, assign):
    """``Tensor._backward_hooks``: None before any hook, the hooks by id after, and PyTorch's
    setter (a leaf's hooks are replaced; a non-leaf's keep running on its grad_fn)."""
    from collections import OrderedDict

    def fn(m):
        x = _x(m)
        y = x if leaf else x * 2
        states = [_hook_dict_state(y._backward_hooks)]
        handle = y.register_hook(lambda g: g * 10)
        states.append(_hook_dict_state(y._backward_hooks))
        if assign == "none":
            y._backward_hooks = None
        elif assign == "dict":
            y._backward_hooks = OrderedDict([(0, lambda g: g * 3)])
        else:
            handle.remove()
        states.append(_hook_dict_state(y._backward_hooks))
        (y * 1).sum().backward()
        return states, x.grad

    both(fn)


@pytest.mark.parametrize("assign", ["none", "dict"])
def test_post_accumulate_grad_hooks_attribute(assign):
    from collections import OrderedDict

    def fn(m):
        x = _x(m)
        log = []
        states = [_hook_dict_state(x._post_accumulate_grad_hooks)]
        x.register_post_accumulate_grad_hook(lambda t: log.append("first"))
        states.append(_hook_dict_state(x._post_accumulate_grad_hooks))
        new = None if assign == "none" else OrderedDict([(0, lambda t: log.append("second"))])
        x._post_accumulate_grad_hooks = new
        states.append(_hook_dict_state(x._post_accumulate_grad_hooks))
        (x * 2).sum().backward()
        return states, log, x.grad

    both(fn)


def test_tensor_does_not_delete_items():
    both(lambda m: m.ones(3).__delitem__(0))
