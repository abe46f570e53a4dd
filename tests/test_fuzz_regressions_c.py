"""Regressions next to the fuzzer's findings (group C): the version of ``.grad`` where the gradient
came through a view-making backward that leafgrad passes on unchanged (Note [Fresh views] in
``leafgrad/autograd/graph.py``), in the eager engine and in the fused backward."""

from __future__ import annotations

import pytest
from conftest import both

# Ops whose PyTorch backward makes a view (or, ``sum_to`` to 0-d, a new tensor) of a gradient of
# the same shape and layout
_IDENTITY_VIEWS = {
    "T_0d": ((), lambda x: x.T),
    "t_0d": ((), lambda x: x.t()),
    "permute_0d": ((), lambda x: x.permute(())),
    "transpose_0d": ((), lambda x: x.transpose(0, 0)),
    "sum_0d": ((), lambda x: x.sum()),
    "sum_dim_0d": ((), lambda x: x.sum(0)),
    "expand_0d": ((), lambda x: x.expand(())),
    "broadcast_to_0d": ((), lambda x: x.broadcast_to(())),
    "permute_identity": ((2, 3), lambda x: x.permute(0, 1)),
    "transpose_same_dim": ((2, 3), lambda x: x.transpose(1, 1)),
    "t_1d": ((3,), lambda x: x.t()),
    "movedim_identity": ((2, 3), lambda x: x.movedim(0, 0)),
    # the gradient passed on as it is (PyTorch's formula returns ``grad``): a copy
    "alias": ((2, 3), lambda x: x[...]),
    "expand_same_shape": ((2, 3), lambda x: x.expand(2, 3)),
    "clone": ((), lambda x: x.clone()),
}


def _leaf(m, shape):
    return m.arange(1.0, 1.0 + max(1, 2 * len(shape) + (len(shape) == 2))).reshape(shape)


@pytest.mark.parametrize("how", ["backward", "ones", "sum"])
@pytest.mark.parametrize("name", sorted(_IDENTITY_VIEWS))
def test_grad_version_through_identity_view_backward(name, how, engine):
    shape, view = _IDENTITY_VIEWS[name]

    def fn(m):
        x = _leaf(m, shape).requires_grad_()
        y = view(x)
        if how == "backward":
            if y.dim():
                return None
            y.backward()
        elif how == "ones":
            y.backward(m.ones_like(y))
        else:
            y.sum().backward()
        return x.grad, x.grad._version, x.grad.is_contiguous()

    both(fn)


def test_fuzz_program_0d_T_then_backward():
    def fn(m):
        m.ones(())
        x = m.tensor(0.5, requires_grad=True)
        v = x.T
        v.backward()
        return x.grad, x.grad._version

    both(fn)


@pytest.mark.parametrize("view", ["T", "sum", "permute"])
def test_fresh_view_keeps_the_version_of_a_gradient_summed_in_place(view, engine):
    def fn(m):
        x = m.tensor(1.5, requires_grad=True)
        y = x * 1
        a = getattr(y, view)() if view != "T" else y.T
        if view == "permute":
            a = y.permute(())
        out = a * 2 + a * 3  # the two products are summed in place into one buffer
        out.backward()
        return x.grad, x.grad._version

    both(fn)


@pytest.mark.parametrize("order", ["view_first", "view_last"])
def test_fresh_view_of_a_held_gradient_is_not_summed_into_in_place(order, engine):
    def fn(m):
        x = m.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        if order == "view_first":
            out = x * 2 + x.permute(0, 1)  # the view's gradient reaches the leaf first
        else:
            out = x.permute(0, 1) + x * 2
        out.backward(m.ones(2, 2))
        return x.grad, x.grad._version

    both(fn)


def test_hook_sees_the_fresh_view_and_may_write_to_it(engine):
    def fn(m):
        x = m.tensor(2.0, requires_grad=True)
        seen = []

        def hook(g):
            seen.append(g._version)
            g.mul_(3)
            seen.append(g._version)

        x.register_hook(hook)
        x.sum().backward()
        return x.grad, x.grad._version, seen

    both(fn)


# --- searchsorted/bucketize of non-contiguous operands warn (once, after the checks) -----------

_SEARCH_CASES = {
    "bucketize_input": lambda m, t: m.bucketize(t, m.tensor([1.0, 2.0, 3.0])),
    "bucketize_boundaries": lambda m, t: m.bucketize(t, m.tensor([1.0, 2.0, 3.0, 4.0])[::2]),
    "searchsorted_boundaries": lambda m, t: m.searchsorted(t, m.tensor([[1.0, 2.0], [3.0, 4.0]])),
    "searchsorted_both": lambda m, t: m.searchsorted(t, t),
    "searchsorted_sorter": lambda m, t: m.searchsorted(
        m.tensor([1.0, 2.0, 3.0]), m.tensor([1.5]), sorter=m.tensor([0, 1, 2, 0, 1, 2])[::2]
    ),
    "searchsorted_dims_error_first": lambda m, t: m.searchsorted(t, m.ones(3)[::2].reshape(1, 2)),
}


@pytest.mark.parametrize("name", sorted(_SEARCH_CASES))
def test_searchsorted_of_non_contiguous_operands_warns(name):
    def fn(m):
        t = m.tensor([[1.0, 2.0], [3.0, 4.0]]).t()
        return _SEARCH_CASES[name](m, t)

    both(fn)


def _lerp_0d_weight(m, dtype, shape):
    a = m.ones(shape, requires_grad=True)
    w = m.tensor(0.25, dtype=getattr(m, dtype))
    if w.dtype.is_floating_point:
        w.requires_grad_()
    r = m.lerp(a, m.zeros(shape), w)
    out = [r, r.grad_fn.name()]
    if not r.dtype.is_complex:
        r.sum().backward()
        out += [a.grad, w.grad]
    return out


@pytest.mark.parametrize("shape", [(2,), ()])
@pytest.mark.parametrize("dtype", ["float64", "float16", "int64", "complex64", "float32"])
def test_lerp_zero_dim_weight_takes_part_in_promotion(dtype, shape):
    """ATen's lerp_Tensor: a 0-d weight of another dtype is promoted with self and end (a CPU
    scalar) instead of refused; a weight with dims must have self's dtype."""
    both(lambda m: _lerp_0d_weight(m, dtype, shape))


@pytest.mark.parametrize("dtype", ["float64", "complex64", "int64"])
def test_lerp_inplace_zero_dim_weight(dtype):
    both(lambda m: m.ones(2).lerp_(m.zeros(2), m.tensor(0.3, dtype=getattr(m, dtype))))


def test_lerp_weight_with_dims_keeps_the_dtype_check():
    both(lambda m: m.lerp(m.ones(2), m.zeros(2), m.tensor([0.5], dtype=m.float64)))
    both(lambda m: m.lerp(m.ones(2, dtype=m.int64), m.ones(2, dtype=m.int64), m.tensor(0.5)))
