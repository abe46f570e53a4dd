"""Regressions found by fuzz seeds 141-146 and the probes they led to, against torch 2.13."""

from __future__ import annotations

import pytest
from conftest import both

AMAX = {
    "amax all": lambda x: x.amax(),
    "amax dim": lambda x: x.amax(1),
    "amax dims keepdim": lambda x: x.amax((0, 1), keepdim=True),
    "amin all": lambda x: x.amin(),
    "amin dim keepdim": lambda x: x.amin(0, keepdim=True),
}
INCOMING = {
    "asin of 2": lambda m, y: y.asin(),  # the incoming gradient is NaN
    "times nan": lambda m, y: y * float("nan"),
    "plain": lambda m, y: y * 1.5,
}


@pytest.mark.parametrize("incoming", list(INCOMING))
@pytest.mark.parametrize("reduce", list(AMAX))
@pytest.mark.parametrize("nan_input", [False, True])
def test_amax_amin_gradient_is_a_product_with_the_tie_mask(reduce, incoming, nan_input):
    """Seed 143: PyTorch's ``(grad / count) * mask`` gives NaN to every element of the slice
    when the gradient is NaN; XLA had rewritten the product into a select (0 off the ties).
    A NaN result (tie count 0) makes its slice NaN too (Note [Tie counts])."""

    def run(m):
        rows = [[2.0, 1.0, 2.0], [-2.0, 0.5, -2.0]]
        if nan_input:
            rows[1][1] = float("nan")
        x = m.tensor(rows, requires_grad=True)
        INCOMING[incoming](m, AMAX[reduce](x)).sum().backward()
        return x.grad

    both(run)


def test_amax_tie_gradient_divides_as_pytorch():
    """``(grad / count) * mask``, bit for bit: count 3 of a float64 gradient."""

    def run(m):
        x = m.tensor([[0.1, 0.1, 0.1]], dtype=m.float64, requires_grad=True)
        (x.amax() * 0.7).backward()
        return x.grad

    both(run, exact=True)


BCE = {
    "mean": {},
    "sum": {"reduction": "sum"},
    "none": {"reduction": "none"},
    "weight": {"weight": True},
    "pos_weight": {"pos_weight": True},
    "both weights, sum": {"weight": True, "pos_weight": True, "reduction": "sum"},
}


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("case", list(BCE))
def test_bce_with_logits_gradient_is_pytorchs_formula(case, create_graph):
    """``binary_cross_entropy_with_logits_backward``: ``(sigmoid(x) - t) * grad`` (leafgrad's
    VJP of the stable forward gave ``-t`` at x = 0: Note [BCE with logits gradients])."""

    def run(m):
        kw = dict(BCE[case])
        x = (m.arange(6.0).reshape(2, 3) / 2 - 1).requires_grad_()  # holds 0 exactly
        t = (m.arange(6.0).reshape(2, 3) / 7).requires_grad_()
        if kw.pop("weight", False):
            kw["weight"] = m.tensor([0.25, 0.75, 1.25])
        if kw.pop("pos_weight", False):
            kw["pos_weight"] = m.tensor([0.5, 1.5, 2.5])
        out = m.nn.functional.binary_cross_entropy_with_logits(x, t, **kw)
        gx, gt = m.autograd.grad(out.sum() * 1.7, (x, t), create_graph=create_graph)
        found = [out, gx, gt]
        if create_graph:
            found.append(m.autograd.grad((gx * gx).sum(), x)[0])
        return found

    both(run)
