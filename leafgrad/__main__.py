"""``python -m leafgrad``: the seed experiments on leaf tensors, run on leafgrad, explained.

Each line is run as in a Python console with ``import leafgrad as torch``; what it prints is
what PyTorch 2.13 prints. The note beside a line says why. Without a GPU, ``.cuda()`` uses the
virtual cuda device (``LEAFGRAD_VIRTUAL_CUDA=1``), which this demonstration switches on.
"""

from __future__ import annotations

import os
import sys

EXPERIMENTS: list[tuple[str, list[tuple[str, str]]]] = [
    (
        "torch.Tensor.is_leaf: who is a leaf?",
        [
            ("torch.manual_seed(seed=20200910)", "seed PyTorch's CPU generator (MT19937)"),
            ("a = torch.rand(10, requires_grad=True)", ""),
            ("a", "the same numbers as PyTorch, bit for bit"),
            ("a.is_leaf", "created by the user: a leaf"),
            ("a = torch.rand(10, requires_grad=False)", ""),
            ("a", ""),
            ("a.is_leaf", "requires_grad=False: a leaf by convention"),
            ("b = torch.rand(10, requires_grad=False).cuda()", ""),
            ("b.is_leaf", "the copy to cuda was not recorded: nothing required grad"),
            ("b = torch.rand(10, requires_grad=True).cuda()", ""),
            ("b.is_leaf", "made by the recorded copy op from a cpu tensor"),
            ("b.grad_fn", "the op that made b"),
            ("c = torch.rand(10, requires_grad=True) + 2", ""),
            ("c.is_leaf", "made by the addition"),
            ("c = torch.rand(10, requires_grad=False) + 2", ""),
            ("c.is_leaf", "no input required grad, so nothing was recorded"),
            ("d = torch.rand(10).cuda()", ""),
            ("d.is_leaf", "does not require grad: no recorded op created it"),
            ("e = torch.rand(10).cuda().requires_grad_()", ""),
            ("e.is_leaf", "requires_grad_() changes e in place; no op created it"),
            ("f = torch.rand(10, requires_grad=True, device='cuda')", ""),
            ("f.is_leaf", "created directly on the device: a leaf"),
        ],
    ),
    (
        "retain_grad: keeping the gradient of a non-leaf",
        [
            ("torch.manual_seed(seed=20200910)", ""),
            ("data_in = torch.randn(3, 5, requires_grad=True)", ""),
            ("data_in", "PyTorch's normal sampler (fewer than 16 values: Box-Muller in double)"),
            ("data_mean = data_in.mean()", ""),
            ("data_mean", "a non-leaf: its grad_fn is the mean"),
            ("data_in.requires_grad", ""),
            ("data_mean.requires_grad", "computed from a tensor that requires grad"),
            ("data_1 = data_mean * 20200910.0", ""),
            ("data_1", ""),
            ("data_2 = data_1 * 15.0", ""),
            ("data_2", ""),
            ("data_2.retain_grad()", "ask backward() to keep data_2.grad"),
            ("data_3 = 2 * (data_2 + 55.0)", ""),
            ("loss = data_3 / 2.0 + 89.2", ""),
            ("loss", ""),
            ("print(data_in.grad, data_2.grad, loss.grad)", "nothing has run backward yet"),
            ("loss.backward()", ""),
            ("data_in.grad", "d loss / d data_in = 20200910 / 15 * 15, exactly"),
            ("data_2.grad", "kept because of retain_grad()"),
            ("print(data_mean.grad)", "a non-leaf without retain_grad(): None (with a warning)"),
            (
                "print(data_in.is_leaf, data_mean.is_leaf, data_1.is_leaf, data_2.is_leaf, "
                "data_3.is_leaf, loss.is_leaf)",
                "only the tensor the user created is a leaf",
            ),
        ],
    ),
    (
        "Creating leaf tensors (the Q&A, with its two mistakes corrected)",
        [
            ("b = torch.rand(10, requires_grad=True)", "create a leaf node"),
            ("b.is_leaf", ""),
            ("b = b.cuda()", "a recorded copy: b now names the copy"),
            ("b.is_leaf", ""),
            ("e = torch.rand(10)", ""),
            ("e = e.cuda()", "nothing requires grad: the copy is not recorded"),
            ("e.is_leaf", "the answer says False; PyTorch says True"),
            ("e2 = e.requires_grad_()", ""),
            ("e2 is e", "requires_grad_() returns the same tensor, not a new one"),
            ("e.is_leaf, e.requires_grad", ""),
            ("b = torch.rand(10, requires_grad=True).detach()", ""),
            ("b.is_leaf, b.requires_grad", "detach() gives a leaf that does not require grad"),
        ],
    ),
    (
        "requires_grad, grad_fn and leaf variables",
        [
            ("a = torch.tensor([1., 2, 3, 4], requires_grad=True)", ""),
            ("b = torch.tensor([1., 2, 3, 4], requires_grad=False)", ""),
            ("c = torch.sum(a * 2)", ""),
            ("c.backward()", ""),
            ("a.grad", "d sum(2a) / da = 2"),
            ("d = torch.sum(b + a)", ""),
            ("d.backward()", ""),
            ("print(b.grad, b.requires_grad, a.grad)", "b never required grad; a accumulated"),
            ("c = a + b", ""),
            ("print(a.grad_fn, b.grad_fn, c.grad_fn.name())", "leaves have no grad_fn"),
            ("c = b + b", ""),
            ("print(c.is_leaf, c.grad_fn)", "computed only from tensors not requiring grad"),
        ],
    ),
]


def _run_line(code: str, namespace: dict) -> str:
    """Run one console line and return what the console would print."""
    try:
        value = eval(compile(code, "<demo>", "eval"), namespace)
    except SyntaxError:
        exec(compile(code, "<demo>", "exec"), namespace)
        return ""
    if value is None or code.startswith("print("):
        return ""
    return repr(value)


def main(out=sys.stdout) -> None:
    """Print every experiment as a console transcript with a note beside each line."""
    import contextlib
    import io
    import warnings

    os.environ.setdefault("LEAFGRAD_VIRTUAL_CUDA", "1")
    import leafgrad

    namespace: dict = {"torch": leafgrad}
    width = 60
    for title, lines in EXPERIMENTS:
        print(f"\n### {title}\n", file=out)
        for code, note in lines:
            buffer = io.StringIO()
            with contextlib.redirect_stdout(buffer), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                shown = _run_line(code, namespace)
            printed = buffer.getvalue() + (shown + "\n" if shown else "")
            prompt = f">>> {code}"
            pad = " " * max(1, width - len(prompt))
            print(prompt + (pad + "# " + note if note else ""), file=out)
            if printed:
                print(printed, end="", file=out)


if __name__ == "__main__":
    main()
