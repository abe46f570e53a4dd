"""Zero gradients (PyTorch's ``ZeroTensor``, Note [Zero gradients] in leafgrad/_zero.py), against
torch 2.13: which gradients are zero tensors, where the mark travels, and what refuses one."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import both


def _leaf(m, shape=(2, 3), dtype="float64"):
    values = np.array([[1.0, -2.0, 0.0], [3.0, 0.5, -1.0]])[: shape[0], : shape[1]]
    return m.tensor(values.reshape(shape), dtype=getattr(m, dtype), requires_grad=True)


def _sgn_grad(m, shape=(3,)):
    x = _leaf(m, (1, 3) if shape == (3,) else shape).reshape(shape).detach().requires_grad_()
    x.sgn().sum().backward()
    return x


def _flags(*ts):
    return tuple(None if t is None else t._is_zerotensor() for t in ts)


def _seen(t):
    """A gradient as compared: a zero tensor by its mark, shape, dtype and strides (PyTorch's
    ``numpy(force=True)`` of a strided view of one reads memory it never wrote)."""
    if t is None or not t._is_zerotensor():
        return t
    return "zero tensor", tuple(t.shape), str(t.dtype).split(".")[-1], t.stride()


# --- where a gradient is a zero tensor ----------------------------------------------------------

# Each expression of ``x`` feeds ``sgn``: its gradient, through ``autograd.grad`` (as the node
# gives it) and through ``.grad`` (as AccumulateGrad takes it: a copy where it is not laid out as
# the leaf or is held twice), with its values and strides.
EXPRESSIONS = [
    "x * float('inf')",
    "x.log()",
    "x / 0.",
    "x.sqrt()",
    "(x * 2).exp()",
    "x.view(-1)",
    "x.reshape(3, 2)",
    "x.t()",
    "x.permute(1, 0)",
    "x.transpose(0, 1)",
    "x.movedim(0, 1)",
    "x.unsqueeze(0)",
    "x.expand(2, 2, 3)",
    "x.expand_as(x)",
    "x[0]",
    "x[:, 1:]",
    "x[[0, 1]]",
    "x.clone()",
    "x.to(m.float32)",
    "x.float()",
    "x.double()",
    "x.narrow(1, 0, 2)",
    "x.select(0, 1)",
    "x.flip(0)",
    "x.diagonal()",
    "x.unbind(0)[0]",
    "x.split(1)[0]",
    "x.flatten()",
    "x.masked_fill(x > 0, 1.0)",
    "x.where(x > 0, x)",
    "x / 2",
    "2 / x",
    "x - 1",
    "1 - x",
    "x ** 2",
    "2 ** x",
    "-x",
    "abs(x)",
    "x.mean()",
    "x.sum(0)",
    "x.sum()",
    "x.prod()",
    "x.cumsum(0)",
    "x.max()",
    "x.amax(0)",
    "x.relu()",
    "x.tanh()",
    "x.sin()",
    "x @ x.t()",
    "m.cat([x, x])",
    "m.stack([x, x])",
    "x.tril()",
    "m.nn.functional.linear(x, x)",
    "m.nn.functional.softmax(x, 0)",
    "m.nn.functional.mse_loss(x, x.detach() * 0)",
    "x.lerp(x.detach(), 0.3)",
    "x.addcmul(x, x)",
    "x.clamp(-1, 1)",
    "x.atan2(x.detach())",
    "x.norm()",
    "x.var()",
    "x.logsumexp(0)",
    "x + x.detach()",
    "x + m.ones(3, dtype=m.float64)",
    "x * m.ones(1, 3, dtype=m.float64)",
    "x.float() * m.ones(3, dtype=m.float64)",
    "x.sgn() * 2",
    "x.sgn().exp()",
    "x.sgn().t().exp()",
    "x.sgn() + x.t().t()",
    "x.exp() + x.t().t()",
    "m.where(x > 0, x, x * 2)",
    "x.sgn().sum(0).exp()",
    "x.abs().sgn()",
    "x.sinh().sgn().cosh()",
    "m.addmm(x, x, x.t()[:, :3].t().t())",
    "m.mv(x, x[0])",
    "m.block_diag(x, x)",
    "m.block_diag(x[0])",
    "m.diag_embed(x)",
    "x.aminmax()[0]",
    "m.var_mean(x)[0]",
]


@pytest.mark.parametrize("expr", EXPRESSIONS)
def test_gradient_of_an_expression_of_sgn(expr, engine):
    def run(m):
        x = _leaf(m)
        y = eval(expr)
        (g,) = m.autograd.grad(y.sgn().sum(), [x], allow_unused=True)
        x2 = _leaf(m)
        x = x2
        eval(expr).sgn().sum().backward()
        return _flags(g, x2.grad), _seen(g), _seen(x2.grad), x2.grad.stride()

    both(run, exact=True)


# Every function of one or two tensors that both libraries have, as a sweep finds them.
def _sweep_cases():
    import torch

    names = sorted(n for n in dir(torch._C._VariableFunctions) if not n.startswith("_"))
    return [n for n in names if "save" not in n and "load" not in n]


@pytest.mark.parametrize("name", _sweep_cases())
def test_sweep_of_functions(name):
    """The first argument pattern each function takes; every gradient's mark and values."""
    import torch

    import leafgrad

    if not callable(getattr(leafgrad, name, None)):
        pytest.skip("not in leafgrad")

    def run(m, shape, args):
        rng = np.random.default_rng(0)
        xs = [m.tensor(rng.standard_normal(shape), dtype=m.float64, requires_grad=True)]
        call = [xs[0]]
        for k in args:
            if k == "t":
                xs.append(m.tensor(rng.standard_normal(shape), dtype=m.float64, requires_grad=True))
                call.append(xs[-1])
            else:
                call.append(0.5 if k == "s" else 0)
        y = getattr(m, name)(*call)
        if isinstance(y, (tuple, list)):
            y = y[0]
        if not isinstance(y, m.Tensor) or not y.requires_grad or not y.dtype.is_floating_point:
            return None
        gs = m.autograd.grad(y.sgn().sum(), xs, allow_unused=True)
        return _flags(*gs), [_seen(g) for g in gs]

    for shape in ((3,), (2, 3)):
        for args in ((), ("t",), ("s",), ("t", "t"), ("i",)):
            try:
                found = run(torch, shape, args)
            except Exception:  # noqa: BLE001 (this pattern is not the function's)
                continue
            if found is None:
                return
            both(lambda m, shape=shape, args=args: run(m, shape, args), exact=True)
            return


# --- what a zero tensor refuses, and what keeps the mark ------------------------------------------

USES = {
    "repr": lambda m, g: repr(g),
    "second backward": lambda m, g: None,  # run by the test
    "zero_": lambda m, g: g.zero_(),
    "add_": lambda m, g: g.add_(1),
    "mul_ of a view": lambda m, g: g[1:].mul_(2),
    "copy_": lambda m, g: g.copy_(m.ones(3)),
    "setitem": lambda m, g: g.__setitem__(0, 1.0),
    "out=": lambda m, g: m.add(m.ones(3), 1, out=g),
    "numpy": lambda m, g: g.numpy(),
    "numpy force": lambda m, g: g.numpy(force=True).tolist(),
    "tolist": lambda m, g: g.tolist(),
    "item": lambda m, g: g[0].item(),
    "clone": lambda m, g: _flags(g.clone()),
    "+ 1": lambda m, g: (g + 1, _flags(g + 1)),
    "* 2": lambda m, g: (g * 2, _flags(g * 2)),
    "* tensor": lambda m, g: _flags(g * m.ones(3), m.ones(3) * g),
    "* nan": lambda m, g: (g * float("nan"), _flags(g * float("nan"))),
    "/ 0": lambda m, g: (g / 0.0, _flags(g / 0.0)),
    "+ itself": lambda m, g: _flags(g + g, g - g),
    "neg": lambda m, g: (-g, _flags(-g)),
    "views": lambda m, g: _flags(g.detach(), g.data, g.view(3), g[1:], g.expand(2, 3), g.t()),
    "reductions": lambda m, g: _flags(g.sum(), g.abs(), g.exp(), m.zeros_like(g)),
    "casts": lambda m, g: _flags(g.to(m.float64), g.float()),
    "matmul": lambda m, g: _flags(g @ m.ones(3)),
    "requires_grad_": lambda m, g: _flags(g.requires_grad_()),
    "sum of a clone": lambda m, g: g.clone().add_(1),
}


@pytest.mark.parametrize("use", list(USES))
def test_uses_of_a_zero_gradient(use):
    def run(m):
        x = _sgn_grad(m)
        if use == "second backward":
            x.sgn().sum().backward()
            return x.grad
        g = x.grad
        out = USES[use](m, g)
        return out, g, _flags(g)

    both(run, exact=True)


def test_accumulation_order():
    """Into a zero ``.grad`` any gradient raises; a zero gradient adds into an ordinary one."""

    def zero_first(m):
        x = _sgn_grad(m)
        (x * 2).sum().backward()
        return x.grad

    def ordinary_first(m):
        x = _leaf(m, (1, 3))
        (x * 2).sum().backward()
        x.sgn().sum().backward()
        return x.grad, _flags(x.grad)

    both(zero_first)
    both(ordinary_first, exact=True)


def test_optimizers_and_zero_grad():
    def step(m, momentum):
        x = _sgn_grad(m)
        opt = m.optim.SGD([x], lr=0.1, momentum=momentum)
        opt.step()
        return x, _flags(x.grad)

    def zero_grad(m, set_to_none):
        x = _sgn_grad(m)
        m.optim.SGD([x], lr=0.1).zero_grad(set_to_none=set_to_none)
        return x.grad

    for momentum in (0.0, 0.9):
        both(lambda m, momentum=momentum: step(m, momentum), exact=True)
    both(lambda m: zero_grad(m, True))
    both(lambda m: zero_grad(m, False))


def test_hooks_retain_grad_and_create_graph():
    def hook_sees(m):
        x = _leaf(m, (1, 3))
        seen = []
        x.register_hook(lambda g: seen.append(_flags(g)))
        x.sgn().sum().backward()
        return seen, _flags(x.grad)

    def hook_returns(m, make):
        x = _leaf(m, (1, 3))
        y = x.exp()
        y.register_hook(make)
        (g,) = m.autograd.grad(y.sgn().sum(), x)
        return g, _flags(g)

    def retained(m):
        x = _leaf(m, (1, 3))
        y = x * 1
        y.retain_grad()
        y.sgn().sum().backward()
        return _flags(y.grad, x.grad)

    def create_graph(m, chain):
        x = _leaf(m, (1, 3))
        (g,) = m.autograd.grad(chain(x).sum(), x, create_graph=True)
        return g, _flags(g)

    def create_graph_backward(m):
        x = _leaf(m, (1, 3))
        x.sgn().sum().backward(create_graph=True)
        x.sgn().sum().backward(create_graph=True)
        return x.grad, _flags(x.grad)

    both(hook_sees)
    both(lambda m: hook_returns(m, lambda g: g * 2), exact=True)
    both(lambda m: hook_returns(m, lambda g: g.clone()), exact=True)
    both(lambda m: hook_returns(m, lambda g: g + 1))  # exp's kernels round apart
    both(retained)
    both(lambda m: create_graph(m, lambda x: x.sgn()), exact=True)
    both(lambda m: create_graph(m, lambda x: (x.sgn() * 3).exp()), exact=True)
    both(lambda m: create_graph(m, lambda x: x.sgn() + x * x), exact=True)
    both(create_graph_backward, exact=True, check_warnings=False)


def test_two_zero_gradients_sum_to_one():
    def run(m, inputs):
        x = _leaf(m, (1, 3))
        y = (x.sgn() + x.sgn()).sum()
        if inputs:
            (g,) = m.autograd.grad(y, x)
            return g, _flags(g)
        y.backward()
        return x.grad, _flags(x.grad)

    both(lambda m: run(m, True), exact=True)
    both(lambda m: run(m, False), exact=True)


def test_backward_inputs_and_complex_sgn():
    def inputs(m):
        x = _leaf(m, (1, 3))
        x.sgn().sum().backward(inputs=[x])
        return x.grad, _flags(x.grad)

    def complex_sgn(m):
        x = m.tensor([1 + 1j, -2.0, 0.0], requires_grad=True)
        (g,) = m.autograd.grad(x.sgn().abs().sum(), x)
        return g, _flags(g)

    both(inputs, exact=True)
    both(complex_sgn)
