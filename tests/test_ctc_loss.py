"""``F.ctc_loss``, ``torch.ctc_loss`` and ``nn.CTCLoss`` against torch: losses and PyTorch's own
gradient (Note [CTC gradient] in nn/_ctc_loss.py) over random batches of padded and concatenated
targets, infinite losses with and without ``zero_infinity``, unbatched input, the lengths' forms,
the recorded nodes, saved-tensor rules and errors."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import both, lg, torch


def _case(seed: int):
    """A random batch: log-probabilities (normalized or not), targets with labels that repeat
    and (sometimes) equal the blank, lengths from 0 to the maximum."""
    rng = np.random.default_rng(seed)
    T, N, C = int(rng.integers(1, 9)), int(rng.integers(1, 5)), int(rng.integers(2, 6))
    blank = int(rng.integers(0, C))
    il = [int(v) for v in rng.integers(0, T + 1, N)]
    il[0] = T
    tl = [int(v) for v in rng.integers(0, 5, N)]
    S = max(tl + [1]) + int(rng.integers(0, 2))
    lp = rng.standard_normal((T, N, C)) * 2
    if seed % 3:
        lp = lp - np.log(np.exp(lp).sum(-1, keepdims=True))
    labels = rng.integers(0, C, (N, S))
    if seed % 4 == 0:
        labels[labels == blank] = (blank + 1) % C
    labels[:, 1::3] = labels[:, :-1:3][:, : labels[:, 1::3].shape[1]]  # repeated labels
    return lp, labels, il, tl, blank


@pytest.mark.parametrize("seed", range(32))
def test_random_batches_losses_and_gradients(seed):
    lp, labels, il, tl, blank = _case(seed)
    concatenated = seed % 2 == 1
    reduction = ("none", "mean", "sum")[seed % 3]
    zero_infinity = seed % 5 < 2
    dtype = "float64" if seed % 4 == 1 else "float32"

    def fn(m):
        x = m.tensor(lp, dtype=getattr(m, dtype), requires_grad=True)
        if concatenated:
            targets = m.tensor(np.concatenate([labels[b, : tl[b]] for b in range(len(tl))]))
        else:
            targets = m.tensor(labels)
        out = m.nn.functional.ctc_loss(
            x,
            targets,
            m.tensor(il),
            m.tensor(tl),
            blank=blank,
            reduction=reduction,
            zero_infinity=zero_infinity,
        )
        weights = m.arange(1.0, out.numel() + 1, dtype=out.dtype).view(out.shape)
        (out * weights).sum().backward()
        chain = [type(out.grad_fn).__name__]
        node = out.grad_fn
        while node.next_functions and node.next_functions[-1][0] is not None:
            node = node.next_functions[-1][0]
            chain.append(type(node).__name__)
        return out, x.grad, chain

    both(fn, rtol=1e-4 if dtype == "float32" else 1e-10, atol=1e-5 if dtype == "float32" else 1e-12)


def test_through_log_softmax_and_a_linear_layer():
    rng = np.random.default_rng(1)
    h, w = rng.standard_normal((7, 3, 4)), rng.standard_normal((5, 4))

    def fn(m):
        x = m.tensor(h, requires_grad=True)
        weight = m.tensor(w, requires_grad=True)
        lp = m.nn.functional.log_softmax(x @ weight.T, dim=2)
        loss = m.nn.CTCLoss(blank=4)(
            lp, m.tensor([[0, 1, 1], [2, 0, 3], [1, 0, 0]]), (7, 6, 3), (3, 3, 1)
        )
        loss.backward()
        return loss, x.grad, weight.grad

    both(fn)


def test_labels_equal_to_the_blank_and_one_step():
    """At the last step PyTorch assigns the final states' sums to their labels: a last label
    equal to the blank replaces the blank's sum (not added); a single time step."""

    def fn(m):
        x = m.tensor(np.random.default_rng(2).standard_normal((5, 3, 3)), requires_grad=True)
        targets = m.tensor([[1, 2, 0], [0, 0, 0], [2, 1, 1]])
        out = m.nn.functional.ctc_loss(x, targets, [5, 5, 1], [3, 2, 1], reduction="none")
        out.sum().backward()
        return out, x.grad

    both(fn)


@pytest.mark.parametrize("zero_infinity", [False, True])
def test_infinite_losses_nan_or_zero_gradients_and_empty_inputs(zero_infinity):
    """An impossible alignment: an infinite loss and NaN gradients before the input length, or
    zeros of both under ``zero_infinity``; an empty input with an empty target costs -0."""
    rng = np.random.default_rng(3)
    lp = rng.standard_normal((4, 4, 3))

    def fn(m):
        x = m.tensor(lp, dtype=m.float32, requires_grad=True)
        targets = m.tensor([[1, 1, 2], [1, 2, 1], [2, 0, 0], [1, 0, 0]])
        out = m.nn.functional.ctc_loss(
            x,
            targets,
            [4, 3, 0, 0],
            [3, 3, 0, 1],
            reduction="none",
            zero_infinity=zero_infinity,
        )
        out.sum().backward()
        return out, x.grad, [str(v) for v in out.tolist()]

    both(fn)


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_unbatched_input(reduction):
    def fn(m):
        x = m.tensor(np.random.default_rng(4).standard_normal((6, 4)), requires_grad=True)
        lp = x.log_softmax(1)
        out = m.nn.functional.ctc_loss(
            lp, m.tensor([1, 3, 3]), m.tensor(6), m.tensor(3), reduction=reduction
        )
        out.backward()
        nodes = [type(n).__name__ for n, _ in out.grad_fn.next_functions if n is not None]
        return out, x.grad, nodes

    both(fn)


LENGTHS = {
    "tensors": lambda m: (m.tensor([5, 4]), m.tensor([2, 1])),
    "int32_tensors": lambda m: (m.tensor([5, 4], dtype=m.int32), m.tensor([2, 1], dtype=m.int16)),
    "uint8_tensors": lambda m: (m.tensor([5, 4], dtype=m.uint8), m.tensor([2, 1], dtype=m.uint8)),
    "2d_tensors": lambda m: (m.tensor([[5, 4]]), m.tensor([[2], [1]])),
    "lists": lambda m: ([5, 4], [2, 1]),
    "tuples": lambda m: ((5, 4), (2, 1)),
    "tuple_of_0d_tensors": lambda m: ((m.tensor(5), 4), (2, m.tensor(1))),
}


@pytest.mark.parametrize("form", list(LENGTHS))
def test_forms_of_the_lengths_and_targets(form):
    def fn(m):
        x = m.tensor(np.random.default_rng(5).standard_normal((5, 2, 3)), requires_grad=True)
        il, tl = LENGTHS[form](m)
        out = [
            m.nn.functional.ctc_loss(x, targets, il, tl, reduction="sum")
            for targets in (
                m.tensor([[1, 2], [2, 0]]),
                m.tensor([1, 2, 2]),
                m.tensor([[1.0, 2.0], [2.0, 7.5]]),
                m.tensor([[1, 2], [2, 0]], dtype=m.uint8),
            )
        ]
        sum(out).backward()
        return out, x.grad

    both(fn)


def test_torch_ctc_loss_and_its_reduction_argument():
    """``torch.ctc_loss`` takes the reduction as PyTorch's enum (0 none, 1 mean, 2 sum); without
    it, it does not reduce (its parser reads the printed default as 0)."""

    def fn(m):
        x = m.tensor(np.random.default_rng(6).standard_normal((5, 2, 3)), requires_grad=True)
        args = (x, m.tensor([[1, 2], [2, 0]]), m.tensor([5, 4]), m.tensor([2, 1]))
        outs = [m.ctc_loss(*args)] + [m.ctc_loss(*args, 0, r) for r in (0, 1, 2)]
        outs.append(m.ctc_loss(*args[:2], [5, 4], [2, 1], blank=2, reduction=1))
        outs.append(m.ctc_loss(*args, zero_infinity=True))
        return outs

    both(fn)


def test_module():
    def fn(m):
        loss = m.nn.CTCLoss(blank=2, reduction="sum", zero_infinity=True)
        x = m.tensor(np.random.default_rng(7).standard_normal((4, 2, 3)), requires_grad=True)
        out = loss(x, m.tensor([[0, 1], [1, 1]]), [4, 3], [2, 2])
        out.backward()
        return repr(loss), loss.blank, loss.reduction, loss.zero_infinity, out, x.grad

    both(fn)
    assert repr(lg.nn.CTCLoss()) == "CTCLoss()"


def test_saved_tensors_double_backward_and_a_second_backward():
    x0 = np.random.default_rng(8).standard_normal((4, 2, 3))

    def modified(m):
        x = m.tensor(x0, requires_grad=True)
        y = x * 1
        out = m.nn.functional.ctc_loss(y, m.tensor([[1, 2], [1, 1]]), [4, 4], [2, 2])
        with m.no_grad():
            y.add_(1)
        out.backward()

    def twice(m):
        x = m.tensor(x0, requires_grad=True)
        out = m.nn.functional.ctc_loss(x, m.tensor([[1, 2], [1, 1]]), [4, 4], [2, 2])
        out.backward()
        out.backward()

    def double(m):
        x = m.tensor(x0, requires_grad=True)
        out = m.nn.functional.ctc_loss(x, m.tensor([[1, 2], [1, 1]]), [4, 4], [2, 2])
        (g,) = m.autograd.grad(out, x, create_graph=True)
        g.sum().backward()

    def nodes(m):
        x = m.tensor(x0, requires_grad=True)
        out = m.nn.functional.ctc_loss(x, m.tensor([[1, 2], [1, 1]]), [4, 4], [2, 2], "none")
        (g,) = m.autograd.grad(out.sum(), x, create_graph=True)
        return g, type(g.grad_fn).__name__, [type(n).__name__ for n, _ in g.grad_fn.next_functions]

    for fn in (modified, twice, double, nodes):
        both(fn)


def _args(m, **kw):
    x = kw.pop("x", None)
    if x is None:
        x = m.tensor(np.random.default_rng(9).standard_normal((6, 3, 5)), dtype=m.float32)
    given = {
        "targets": m.tensor([[1, 2, 3, 4], [1, 1, 0, 0], [2, 3, 4, 0]]),
        "input_lengths": m.tensor([6, 4, 5]),
        "target_lengths": m.tensor([4, 2, 3]),
    }
    given.update({k: v(m) if callable(v) else v for k, v in kw.items()})
    return m.nn.functional.ctc_loss(x, **given)


def _x(shape, dtype="float32"):
    return lambda m: m.zeros(shape, dtype=getattr(m, dtype)).log_softmax(-1)


ERRORS = {
    "half": lambda m: _args(m, x=m.zeros(6, 3, 5, dtype=m.float16)),
    "bfloat16": lambda m: _args(m, x=m.zeros(6, 3, 5, dtype=m.bfloat16)),
    "long": lambda m: _args(m, x=m.zeros(6, 3, 5, dtype=m.int64)),
    "empty": lambda m: _args(m, x=m.zeros(0, 3, 5)),
    "empty_4d": lambda m: _args(m, x=m.zeros(0, 1, 3, 5)),
    "4d": lambda m: _args(m, x=m.zeros(1, 6, 3, 5)),
    "1d": lambda m: _args(m, x=m.zeros(6)),
    "targets_3d": lambda m: _args(m, targets=m.zeros(3, 4, 1, dtype=m.int64)),
    "targets_0d": lambda m: _args(m, targets=m.tensor(1)),
    "blank_high": lambda m: _args(m, blank=5),
    "blank_negative": lambda m: _args(m, blank=-1),
    "input_lengths_size": lambda m: _args(m, input_lengths=m.tensor([6, 4])),
    "target_lengths_size": lambda m: _args(m, target_lengths=[4, 2]),
    "input_lengths_float": lambda m: _args(m, input_lengths=m.tensor([6.0, 4, 5])),
    "target_lengths_bool": lambda m: _args(m, target_lengths=m.tensor([True, True, True])),
    "target_length_negative": lambda m: _args(m, target_lengths=m.tensor([4, -2, 3])),
    "input_length_negative": lambda m: _args(m, input_lengths=m.tensor([-1, 4, 5])),
    "input_length_long": lambda m: _args(m, input_lengths=m.tensor([7, 4, 5])),
    "targets_short": lambda m: _args(m, targets=m.tensor([[1, 2], [1, 1], [2, 3]])),
    "targets_rows": lambda m: _args(m, targets=m.tensor([[1, 2, 3, 4]])),
    "concatenated_size": lambda m: _args(m, targets=m.tensor([1, 2, 3, 4, 1, 1, 2, 3])),
    "bad_reduction": lambda m: _args(m, reduction="avg"),
    "int_lengths": lambda m: _args(m, input_lengths=6, target_lengths=4),
    "list_and_tensor": lambda m: _args(m, input_lengths=[6, 4, 5]),
    "float_in_list": lambda m: _args(m, input_lengths=[6.0, 4, 5], target_lengths=[4, 2, 3]),
    "bool_in_list": lambda m: _args(m, input_lengths=[True, 4, 5], target_lengths=[4, 2, 3]),
    "numpy_lengths": lambda m: _args(
        m, input_lengths=np.array([6, 4, 5]), target_lengths=np.array([4, 2, 3])
    ),
    "unbatched_rows": lambda m: _args(m, x=m.zeros(6, 5), input_lengths=[6], target_lengths=[4]),
    "torch_ctc_loss_keyword": lambda m: m.ctc_loss(
        m.zeros(6, 1, 5), m.tensor([[1]]), [6], [1], blanc=0
    ),
}


@pytest.mark.every_case
@pytest.mark.parametrize("name", list(ERRORS))
def test_errors(name):
    both(ERRORS[name])


def test_labels_outside_the_classes_are_refused():
    """PyTorch's kernel reads such labels out of bounds (a value of no meaning); leafgrad raises,
    for the labels it reads only: padding after a target's length may be anything."""
    x = lg.zeros(6, 2, 5).log_softmax(-1)
    with pytest.raises(RuntimeError, match=r"target labels must be in \[0, 5\).* got 7"):
        lg.nn.functional.ctc_loss(x, lg.tensor([[1, 7], [1, 1]]), [6, 6], [2, 1])
    with pytest.raises(RuntimeError, match=r"got -1"):
        lg.nn.functional.ctc_loss(x, lg.tensor([1, -1, 2]), [6, 6], [2, 1])
    padded = lg.tensor([[1, -1], [2, 99]])
    out = lg.nn.functional.ctc_loss(x, padded, [6, 6], [1, 1], reduction="none")
    ref = torch.nn.functional.ctc_loss(
        torch.zeros(6, 2, 5).log_softmax(-1),
        torch.tensor([[1, -1], [2, 99]]),
        [6, 6],
        [1, 1],
        reduction="none",
    )
    np.testing.assert_allclose(out.numpy(), ref.numpy(), rtol=1e-6)


def test_compiled_training_step_equals_eager():
    """Inside ``leafgrad.compile`` the lengths are traced (no host checks): the step gives what
    eager mode gives, for batches of other lengths without a new trace of the kernel's shapes."""
    rng = np.random.default_rng(10)
    data = rng.standard_normal((7, 3, 4)).astype(np.float32)

    def make():
        lg.manual_seed(0)
        model = lg.nn.Linear(4, 5)
        opt = lg.optim.SGD(model.parameters(), lr=0.1)
        return model, opt

    def step(model, opt, x, targets, il, tl):
        opt.zero_grad()
        loss = lg.nn.functional.ctc_loss(model(x).log_softmax(2), targets, il, tl)
        loss.backward()
        opt.step()
        return loss

    batches = [
        (lg.tensor([[1, 2, 2], [3, 0, 0], [4, 4, 1]]), lg.tensor([7, 5, 6]), lg.tensor([3, 1, 3])),
        (lg.tensor([[2, 2, 1], [1, 3, 0], [4, 0, 0]]), lg.tensor([6, 7, 2]), lg.tensor([3, 2, 1])),
    ]
    eager_model, eager_opt = make()
    compiled_model, compiled_opt = make()
    compiled = lg.compile(step)
    x = lg.tensor(data)
    for targets, il, tl in batches * 2:
        a = step(eager_model, eager_opt, x, targets, il, tl)
        b = compiled(compiled_model, compiled_opt, x, targets, il, tl)
        np.testing.assert_allclose(b.detach().numpy(), a.detach().numpy(), rtol=1e-5)
    assert compiled.traces == 1
    np.testing.assert_allclose(
        compiled_model.weight.detach().numpy(), eager_model.weight.detach().numpy(), rtol=1e-5
    )


def test_saved_arguments():
    """``_saved_blank``, ``_saved_zero_infinity``, ``_saved_result0`` and the saved inputs
    (leafgrad has no ``_saved_result1``, the forward variables, which it recomputes)."""

    def fn(m):
        x = m.tensor(np.random.default_rng(11).standard_normal((4, 2, 3)), requires_grad=True)
        targets = m.tensor([[1, 2], [0, 0]], dtype=m.int32)
        out = m.nn.functional.ctc_loss(
            x, targets, [4, 3], [2, 1], blank=2, reduction="none", zero_infinity=True
        )
        node = out.grad_fn.next_functions[1][0]
        return (
            node._saved_blank,
            node._saved_zero_infinity,
            node._saved_result0,
            node._saved_log_probs,
            node._saved_targets,
        )

    both(fn)
