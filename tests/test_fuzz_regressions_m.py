"""Regressions found by fuzz seeds 168-175 and the probes they led to, against torch 2.13."""

from __future__ import annotations

import pytest
from conftest import both
from fuzz_programs import check


def test_seed_174_write_to_a_retained_second_output():
    """``aminmax``'s ``max`` (output 1) retains its grad and is written in place (a full slice
    is the tensor itself): PyTorch pops the old node's retains-grad hook at the new output
    number 0, finds none, and its internal assert raises after the write and the new history."""
    check(
        [
            ("new", "float32", 3, True, 0),
            ("unary", "abs", 0),
            ("unary", "abs", 0),
            ("multi", "aminmax", 0, 0, False),
            ("flag", "retain_grad", 4, 0),
            ("setitem", 14, 1, 0, 0, 0, False),
        ]
    )


OPS = {
    "var_mean": lambda m, a: m.var_mean(a, 0),
    "aminmax": lambda m, a: m.aminmax(a, dim=0),
    "qr": lambda m, a: m.linalg.qr(a),
    "max_dim": lambda m, a: a.max(0),
}
WRITES = {
    "mul_": lambda t: t.mul_(2),
    "full slice": lambda t: t.__setitem__(slice(0, None), 1.0),
    "ellipsis": lambda t: t.__setitem__(Ellipsis, 1.0),
    "a view": lambda t: t[0:1].mul_(2),
}


@pytest.mark.parametrize("retain", ["this", "both", "other", "none"])
@pytest.mark.parametrize("k", [0, 1])
@pytest.mark.parametrize("write", list(WRITES))
@pytest.mark.parametrize("op", list(OPS))
def test_in_place_write_to_a_retained_output(op, write, k, retain):
    """The state an in-place write leaves, raised or not, and the backward after it where
    PyTorch's saved values allow one (``var_mean`` saves its input only). With both outputs
    retained, PyTorch moves the other output's hook to the new node (it still writes that
    output's ``.grad``)."""

    def run(m):
        a = m.tensor([[1.0, 2.0, 3.0], [4.0, 6.0, 9.0]], requires_grad=True)
        outs = OPS[op](m, a)
        t = outs[k]
        if retain in ("both", "other"):
            outs[1 - k].retain_grad()
        if retain in ("this", "both"):
            t.retain_grad()
        try:
            WRITES[write](t)
            raised = None
        except RuntimeError as e:
            raised = str(e)
        # the values as a tensor, compared with a tolerance: LAPACK's QR (torch's and jaxlib's)
        # rounds differently on different CPUs
        values = t.detach().clone()
        state = (raised, t._version, t.grad_fn.name(), t.output_nr, t.retains_grad, values)
        if op != "var_mean" or (write == "a view" and k == 1 and retain in ("this", "both")):
            return state  # (torch's backward crashes the process there: a dangling hook)
        (outs[0].sum() + outs[1].sum() * 3).backward()
        grads = [None if not o.retains_grad or o.grad is None else o.grad.tolist() for o in outs]
        return state, a.grad.tolist(), grads

    if op == "max_dim" and k == 1:
        return  # integer indices: no history
    both(run)


def test_retain_grad_on_a_single_output_moves_with_the_write():
    def run(m):
        x = m.ones(3, requires_grad=True)
        y = x * 2
        y.retain_grad()
        y.add_(1)
        y.sum().backward()
        return y.grad, y.grad_fn.name(), x.grad

    both(run)


def test_seed_179_roll_of_an_empty_strided_view():
    """PyTorch's roll clones an empty tensor, which keeps its strides (the flat roll of a 1-d
    one too: its flat view is itself); leafgrad gave contiguous strides."""
    check(
        [
            ("new", "float32", 1, False, 0),
            ("unary", "abs", 0),
            ("unary", "abs", 0),
            ("view", "slice", 0, 0, 1),
            ("shape", "roll", 3, 0, 0),
        ]
    )


@pytest.mark.parametrize(
    "view", ["1d step 2", "2d columns", "2d transposed"], ids=lambda v: v.replace(" ", "_")
)
@pytest.mark.parametrize("dims", [None, 0, 1, -1])
def test_roll_of_empty_views_keeps_strides(view, dims):
    def run(m):
        x = {
            "1d step 2": lambda: m.ones(1)[1::2],
            "2d columns": lambda: m.ones(3, 4)[:, 4:],
            "2d transposed": lambda: m.ones(4, 3).t()[:, :0],
        }[view]()
        if dims is not None and dims >= x.ndim:
            return None
        r = m.roll(x, 1) if dims is None else m.roll(x, 1, dims)
        return tuple(r.shape), r.stride(), r._version, r._base is None

    both(run)
