"""PyTorch's own tutorial programs ("Learning PyTorch with Examples") run unchanged on leafgrad
and give torch's numbers: manual updates under no_grad, a custom autograd.Function, and an
nn.Sequential trained with an optimizer."""

from __future__ import annotations

import math

from conftest import both


def _data(m):
    x = m.linspace(-math.pi, math.pi, 2000)
    return x, m.sin(x)


def test_polynomial_with_manual_updates():
    def fn(m):
        m.manual_seed(0)
        x, y = _data(m)
        a, b, c, d = (m.randn((), requires_grad=True) for _ in range(4))
        losses = []
        for _ in range(300):
            y_pred = a + b * x + c * x**2 + d * x**3
            loss = (y_pred - y).pow(2).sum()
            losses.append(loss.detach())
            loss.backward()
            with m.no_grad():
                for p in (a, b, c, d):
                    p -= 1e-6 * p.grad
                    p.grad = None
        return m.stack(losses), a, b, c, d

    both(fn, rtol=1e-4, atol=1e-4)


def test_polynomial_with_custom_function():
    def fn(m):
        class LegendrePolynomial3(m.autograd.Function):
            @staticmethod
            def forward(ctx, input):
                ctx.save_for_backward(input)
                return 0.5 * (5 * input**3 - 3 * input)

            @staticmethod
            def backward(ctx, grad_output):
                (input,) = ctx.saved_tensors
                return grad_output * 1.5 * (5 * input**2 - 1)

        x, y = _data(m)
        a, b, c, d = (m.full((), v, requires_grad=True) for v in (0.0, -1.0, 0.0, 0.3))
        for _ in range(200):
            y_pred = a + b * LegendrePolynomial3.apply(c + d * x)
            loss = (y_pred - y).pow(2).sum()
            loss.backward()
            with m.no_grad():
                for p in (a, b, c, d):
                    p -= 5e-6 * p.grad
                    p.grad = None
        return loss.detach(), type(y_pred.grad_fn).__name__, a, b, c, d

    both(fn, rtol=1e-4, atol=1e-5)


def test_polynomial_with_nn_and_optim():
    def fn(m):
        m.manual_seed(0)
        x, y = _data(m)
        xx = x.unsqueeze(-1).pow(m.tensor([1, 2, 3]))
        model = m.nn.Sequential(m.nn.Linear(3, 1), m.nn.Flatten(0, 1))
        loss_fn = m.nn.MSELoss(reduction="sum")
        optimizer = m.optim.RMSprop(model.parameters(), lr=1e-3)
        for _ in range(200):
            loss = loss_fn(model(xx), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        return loss.detach(), repr(model), list(model.state_dict()), model[0].weight

    both(fn, rtol=1e-4, atol=1e-4)
