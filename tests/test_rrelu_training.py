"""``F.rrelu`` / ``nn.RReLU`` in training mode: PyTorch's random slopes, drawn from its CPU stream
(one ``uniform_real_distribution<double>`` draw per non-positive element, in row-major order),
the same values, gradients, graphs (``RreluWithNoiseBackward0/1``, double backward) and errors."""

from __future__ import annotations

import pytest
from conftest import both

_X = [[-1.0, 2.0, -3.0], [0.0, -0.5, 4.0], [float("nan"), -float("inf"), float("inf")]]


def _names(node):
    return [type(f).__name__ if f is not None else None for f, _ in node.next_functions]


def _program(m, inplace, dtype, lower, upper, create_graph, transposed):
    F = m.nn.functional
    m.manual_seed(0)
    x = m.tensor(_X, dtype=getattr(m, dtype), requires_grad=True)
    src = x * 1 if inplace else x
    if transposed:
        src = src.t()
    y = F.rrelu(src, lower, upper, training=True, inplace=inplace)
    out = [y, type(y.grad_fn).__name__, _names(y.grad_fn), m.rand(2)]  # the generator advanced
    if create_graph:
        (g,) = m.autograd.grad(y.pow(2).sum(), x, create_graph=True)
        (g2,) = m.autograd.grad(g.sum(), x, allow_unused=True)
        out += [g, g2]
    else:
        y.sum().backward()
        out.append(x.grad)
    return out


@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("inplace", [False, True])
def test_training_matches_pytorch(inplace, dtype, create_graph, transposed):
    both(lambda m: _program(m, inplace, dtype, 1 / 8, 1 / 3, create_graph, transposed))


@pytest.mark.parametrize("bounds", [(0.2, 0.2), (0.0, 1.0), (-0.5, 0.25), (0.3, 0.1)])
def test_bounds(bounds):
    both(lambda m: _program(m, False, "float32", *bounds, False, False))


def test_double_backward_graph():
    def fn(m):
        m.manual_seed(1)
        x = m.randn(5, requires_grad=True)
        y = m.nn.functional.rrelu(x, training=True)
        (g,) = m.autograd.grad(y.sum(), x, create_graph=True)
        return g, type(g.grad_fn).__name__, _names(g.grad_fn)

    both(fn)


def test_module_trains_then_evaluates():
    def fn(m):
        m.manual_seed(3)
        r = m.nn.RReLU()
        x = m.randn(4, 5, requires_grad=True)
        y = r(x)
        y.pow(2).sum().backward()
        r.eval()
        return y, x.grad, r(x), repr(r), m.randn(2)

    both(fn)


@pytest.mark.parametrize("dtype", ["int64", "bool", "float16"])
def test_dtypes_without_a_kernel(dtype):
    both(lambda m: m.nn.functional.rrelu(m.ones(2, dtype=getattr(m, dtype)), training=True))


def test_a_later_write_to_the_input_is_caught():
    def fn(m):
        x = m.tensor([-1.0, 2.0], requires_grad=True)
        a = x * 1
        y = m.nn.functional.rrelu(a, training=True)
        a.add_(1)
        y.sum().backward()

    both(fn)


def test_empty_input_draws_nothing():
    def fn(m):
        m.manual_seed(0)
        return m.nn.functional.rrelu(m.ones(0), training=True), m.rand(1)

    both(fn)


@pytest.mark.parametrize("op", ["exp_", "leaky_relu_", "rrelu_"])
def test_in_place_on_a_view_then_double_backward(op):
    # the saved output unpacks with the view's grad_fn (Note [Saved outputs of in-place ops on
    # views]): the second backward reaches the op's node through CopySlices only
    def fn(m):
        m.manual_seed(0)
        x = m.tensor([[-1.0, 2.0], [3.0, -4.0]], requires_grad=True)
        v = (x * 1).t()
        if op == "exp_":
            y = v.exp_()
        elif op == "leaky_relu_":
            y = m.nn.functional.leaky_relu(v, 0.1, inplace=True)
        else:
            y = m.nn.functional.rrelu(v, training=True, inplace=True)
        (g,) = m.autograd.grad(y.pow(2).sum(), x, create_graph=True)
        (g2,) = m.autograd.grad(g.sum(), x)
        return g, g2

    both(fn)
