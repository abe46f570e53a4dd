"""End to end: the same training runs in torch and leafgrad from the same seed.

The data is scikit-learn's digits set (it ships inside the package: real data, no download).
Both libraries build the model after the same ``manual_seed``, so they start from the same
weights (PyTorch's initialisers on PyTorch's CPU random stream), and take the same steps.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import leafgrad as lg

datasets = pytest.importorskip("sklearn.datasets")


def _digits():
    x, y = datasets.load_digits(return_X_y=True)
    x = (x / 16.0).astype(np.float32)
    return x[:1500], y[:1500].astype(np.int64), x[1500:], y[1500:].astype(np.int64)


def _mlp(m):
    return m.nn.Sequential(m.nn.Linear(64, 32), m.nn.ReLU(), m.nn.Linear(32, 10))


def _cnn(m):
    nn = m.nn
    return nn.Sequential(
        nn.Unflatten(1, (1, 8, 8)),
        nn.Conv2d(1, 8, 3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(8, 16, 3, padding=1),
        nn.ReLU(),
        nn.Flatten(),
        nn.Linear(16 * 4 * 4, 10),
    )


def _train(m, build, steps, batch, lr, momentum=0.9):
    xtr, ytr, xte, yte = _digits()
    m.manual_seed(0)
    model = build(m)
    opt = m.optim.SGD(model.parameters(), lr=lr, momentum=momentum)
    loss_fn = m.nn.CrossEntropyLoss()
    rng = np.random.default_rng(0)  # the same batches for both libraries
    losses = []
    for _ in range(steps):
        idx = rng.choice(len(xtr), batch, replace=False)
        xb, yb = m.tensor(xtr[idx]), m.tensor(ytr[idx])
        opt.zero_grad()
        loss = loss_fn(model(xb), yb)
        loss.backward()
        opt.step()
        losses.append(float(loss.item()))
    with m.no_grad():
        pred = model(m.tensor(xte)).argmax(1)
    accuracy = float((pred == m.tensor(yte)).float().mean().item())
    return np.array(losses), accuracy, model


def test_mlp_same_start_and_same_loss_curve():
    t_losses, t_acc, t_model = _train(torch, _mlp, 40, 64, 0.1)
    g_losses, g_acc, g_model = _train(lg, _mlp, 40, 64, 0.1)
    # same initial weights, bit for bit
    torch.manual_seed(0)
    lg.manual_seed(0)
    for tp, gp in zip(_mlp(torch).parameters(), _mlp(lg).parameters()):
        np.testing.assert_array_equal(np.asarray(gp.detach()._data), tp.detach().numpy())
    np.testing.assert_allclose(g_losses, t_losses, atol=1e-4, rtol=0)
    assert t_losses[-1] < t_losses[0] * 0.5  # it really trains
    assert abs(g_acc - t_acc) < 1e-9


def test_cnn_reaches_torch_accuracy():
    t_losses, t_acc, _ = _train(torch, _cnn, 80, 64, 0.1)
    g_losses, g_acc, _ = _train(lg, _cnn, 80, 64, 0.1)
    np.testing.assert_allclose(g_losses, t_losses, atol=2e-3, rtol=0)
    assert t_acc > 0.8
    assert g_acc == pytest.approx(t_acc, abs=1e-9)
