"""Regressions (group G): ``masked_fill_`` on a tensor whose elements share memory (an expanded
tensor). PyTorch warns that this is deprecated and writes: a memory location takes the value when
any element on it is masked (Note [Writes to expanded tensors] in ``leafgrad/ops/index_put.py``).
"""

from __future__ import annotations

import pytest
from conftest import both


def _expanded(m, dtype=None):
    return m.zeros(3, dtype=dtype).expand(2, 3)


def _through_base(m, fill):
    """The write through an expanded view of a non-leaf: values, nodes, version and backward."""
    x = m.zeros(3, requires_grad=True)
    base = x * 1
    view = base.expand(2, 3)
    fill(m, view)
    out = [view, base, base._version, type(view.grad_fn).__name__]
    try:
        base.sum().backward()
    except RuntimeError as e:  # PyTorch's CopySlices cannot write the gradient into the view
        out.append(str(e))
    return out


_MASKED_FILL = {
    "mask_of_self_shape": lambda m: _expanded(m).masked_fill_(
        m.tensor([[True, False, False], [False, False, False]]), 1.0
    ),
    "broadcast_mask": lambda m: _expanded(m).masked_fill_(m.tensor([True, False, True]), 1.0),
    "tensor_value": lambda m: _expanded(m).masked_fill_(
        m.tensor([[True, False, False], [False, False, True]]), m.tensor(4.0)
    ),
    "integer_self_float_value": lambda m: _expanded(m, m.int64).masked_fill_(
        m.tensor([True, False, True]), 2.7
    ),
    "complex": lambda m: (
        m.zeros(2, dtype=m.complex64).expand(2, 2).masked_fill_(m.tensor([False, True]), 1j)
    ),
    "mask_on_the_same_memory": lambda m: (
        lambda b: b.expand(3, 3).masked_fill_(b.expand(3, 3) > 0.5, 1.0)
    )(m.tensor([1.0, 0.0, 0.0])),
    "view_of_a_slice_base_sees_it": lambda m: (
        lambda b: (b[1:].unsqueeze(0).expand(2, 2).masked_fill_(m.tensor([False, True]), 5.0), b)
    )(m.zeros(3)),
    "no_grad_version": lambda m: (
        lambda b: (b.expand(2, 3).masked_fill_(m.tensor([True, False, False]), 1.0), b._version)
    )(m.zeros(3)),
    "value_requires_grad": lambda m: _expanded(m).masked_fill_(
        m.tensor([True, False, False]), m.tensor(2.0, requires_grad=True)
    ),
    "through_a_base_that_requires_grad": lambda m: _through_base(
        m, lambda m, v: v.masked_fill_(m.tensor([True, False, False]), 1.0)
    ),
    "tensor_value_through_a_base": lambda m: _through_base(
        m,
        lambda m, v: v.masked_fill_(m.tensor([[True, False, False], [False, True, False]]), 3.0),
    ),
    # errors, in PyTorch's order: autograd's checks, the mask's dtype, the value's dimensions,
    # then the warning, then the shapes
    "view_of_a_leaf": lambda m: (
        m.zeros(3, requires_grad=True)
        .expand(2, 3)
        .masked_fill_(m.tensor([True, False, False]), 1.0)
    ),
    "uint8_mask": lambda m: _expanded(m).masked_fill_(m.tensor([1, 0, 0], dtype=m.uint8), 1.0),
    "vector_value": lambda m: _expanded(m).masked_fill_(m.tensor([True, False, False]), m.ones(2)),
    "mask_of_another_size": lambda m: _expanded(m).masked_fill_(m.tensor([True, False]), 1.0),
    "mask_that_broadcasts_self": lambda m: _expanded(m).masked_fill_(
        m.ones(4, 2, 3, dtype=m.bool), 1.0
    ),
    "setitem_with_a_mask": lambda m: (
        lambda v: (v.__setitem__(m.tensor([[True, False, False], [False, False, True]]), 2.0), v)
    )(_expanded(m)),
}


@pytest.mark.parametrize("case", sorted(_MASKED_FILL))
def test_masked_fill_on_an_expanded_tensor(case):
    both(_MASKED_FILL[case])


def _lerp_bool_weight(m, weight, self_grad=True, end_grad=True, inputs=None, create_graph=False):
    """lerp with a 0-d bool weight: PyTorch's formula for self, ``grad * (1 - weight)``, raises
    its bool subtraction error in backward, only when self's gradient is computed."""
    a = m.ones(2, requires_grad=self_grad)
    b = m.full((2,), 3.0, requires_grad=end_grad)
    r = m.lerp(a, b, weight(m))
    out = [r]
    if inputs is None:
        r.sum().backward(create_graph=create_graph)
        return [*out, a.grad, b.grad]
    wanted = [{"self": a, "end": b}[name] for name in inputs]
    return [*out, m.autograd.grad(r.sum(), wanted, create_graph=create_graph)]


_LERP = {
    "true_both": lambda m: _lerp_bool_weight(m, lambda m: m.tensor(True)),
    "false_both": lambda m: _lerp_bool_weight(m, lambda m: m.tensor(False)),
    "self_only": lambda m: _lerp_bool_weight(m, lambda m: m.tensor(True), end_grad=False),
    "end_only": lambda m: _lerp_bool_weight(m, lambda m: m.tensor(True), self_grad=False),
    "grad_of_end": lambda m: _lerp_bool_weight(m, lambda m: m.tensor(True), inputs=["end"]),
    "grad_of_self": lambda m: _lerp_bool_weight(m, lambda m: m.tensor(True), inputs=["self"]),
    "grad_of_end_create_graph": lambda m: _lerp_bool_weight(
        m, lambda m: m.tensor(True), inputs=["end"], create_graph=True
    ),
    "create_graph": lambda m: _lerp_bool_weight(m, lambda m: m.tensor(True), create_graph=True),
    "integer_weight": lambda m: _lerp_bool_weight(m, lambda m: m.tensor(1)),
    "bool_vector_weight": lambda m: _lerp_bool_weight(m, lambda m: m.tensor([True, False])),
}


@pytest.mark.parametrize("case", sorted(_LERP))
def test_lerp_with_a_bool_weight(case):
    both(_LERP[case])


_INF, _NAN = float("inf"), float("nan")
_SELF = [1.5, -2.5, 3.0, _INF, 1.0, -1.0, _NAN, 0.0, -0.0, 5.0]
_OTHER = [_INF, -_INF, 0.0, 2.0, _NAN, -0.0, 1.0, _INF, -_INF, -3.0]


@pytest.mark.parametrize("wanted", ["both", "self", "other"])
@pytest.mark.parametrize("op", ["fmod", "remainder"])
def test_fmod_and_remainder_gradients_of_non_finite_quotients(op, wanted):
    """PyTorch's gradient for other is ``-grad * self.div(other, rounding_mode)``: infinite and
    NaN quotients (a zero or infinite divisor, an infinite dividend) give -inf, NaN and signed
    zeros; the gradient for self is the incoming one, whatever the quotient."""

    def fn(m):
        a = m.tensor(_SELF, requires_grad=wanted != "other")
        b = m.tensor(_OTHER, requires_grad=wanted != "self")
        r = getattr(m, op)(a, b)
        r.backward(m.ones_like(r))
        return [r, a.grad, b.grad]

    both(fn)


def _through_windows(m, write):
    """A fill-like write through unfold windows that share memory, with the base's history."""
    x = m.arange(6.0, requires_grad=True)
    base = x * 1
    view = base.unfold(0, 3, 1)
    write(m, view)
    out = [base, type(view.grad_fn).__name__]
    (base * m.arange(6.0)).sum().backward()
    return [*out, x.grad]


_SHARED_WINDOWS = {
    "masked_fill_unfold": lambda m: (
        lambda x: (x.unfold(0, 3, 1).masked_fill_(m.tensor([True, False, False]), 9.0), x)
    )(m.arange(6.0)),
    "masked_fill_as_strided": lambda m: (
        lambda x: (
            x.as_strided((2, 2), (1, 1)).masked_fill_(
                m.tensor([[True, False], [False, True]]), 9.0
            ),
            x,
        )
    )(m.arange(6.0)),
    "index_fill_unfold": lambda m: (
        lambda x: (x.unfold(0, 3, 1).index_fill_(1, m.tensor([0]), 9.0), x)
    )(m.arange(6.0)),
    "index_put_one_value": lambda m: (
        lambda x: (x.unfold(0, 3, 1).index_put_((m.tensor([0]),), m.tensor(9.0)), x)
    )(m.arange(6.0)),
    "index_put_accumulate": lambda m: (
        lambda x: (
            x.unfold(0, 3, 1).index_put_((m.tensor([0, 1]),), m.tensor(1.0), accumulate=True),
            x,
        )
    )(m.arange(6.0)),
    "setitem_with_a_mask": lambda m: (
        lambda x: (x.unfold(0, 3, 1).__setitem__(m.tensor([True, False, False, True]), 9.0), x)
    )(m.arange(6.0)),
    "masked_fill_with_history": lambda m: _through_windows(
        m, lambda m, v: v.masked_fill_(m.tensor([True, False, False]), 9.0)
    ),
    "index_fill_with_history": lambda m: _through_windows(
        m, lambda m, v: v.index_fill_(1, m.tensor([0]), 9.0)
    ),
    "index_put_with_history": lambda m: _through_windows(
        m, lambda m, v: v.index_put_((m.tensor([0, 1]),), m.tensor(1.0), accumulate=True)
    ),
}


@pytest.mark.parametrize("case", sorted(_SHARED_WINDOWS))
def test_fills_through_windows_that_share_memory(case):
    """A write of one value through unfold or as_strided windows: every memory location an
    element on it was written at gets it (accumulated once per window), as PyTorch's kernels,
    which write each element in turn, leave it; without PyTorch's expanded-tensor warning."""
    both(_SHARED_WINDOWS[case])
