"""Views that alias their base, in-place writes, version counters and setitem, against torch.

Each case runs the same code on torch and leafgrad (``both``) and compares every tensor's values,
``_version``, ``grad_fn``, gradients and errors. The property test at the end runs random programs
of view creation, in-place writes and reads on both libraries and compares after every step.
"""

from __future__ import annotations

import hypothesis.strategies as st
import pytest
import torch
from conftest import both
from hypothesis import HealthCheck, given, settings

import leafgrad as lg


def _leaf(m, shape=(3, 4), dtype="float32"):
    n = 1
    for s in shape:
        n *= s
    return (
        (m.arange(float(n), dtype=getattr(m, dtype)).reshape(shape) + 1).detach().requires_grad_()
    )


def _node(m, t):
    fn = t.grad_fn
    return (
        None
        if fn is None
        else (fn.name(), [None if n is None else n.name() for n, _ in fn.next_functions])
    )


# --- views -------------------------------------------------------------------------------------

VIEWS = {
    "view": lambda x: x.view(4, 3),
    "view_as": lambda x: x.view_as(x.new_zeros(2, 6)) if hasattr(x, "new_zeros") else x.view(2, 6),
    "reshape": lambda x: x.reshape(-1),
    "flatten": lambda x: x.flatten(),
    "unflatten": lambda x: x.unflatten(1, (2, 2)),
    "squeeze": lambda x: x.unsqueeze(0).squeeze(0),
    "unsqueeze": lambda x: x.unsqueeze(1),
    "transpose": lambda x: x.transpose(0, 1),
    "t": lambda x: x.t(),
    "T": lambda x: x.T,
    "mT": lambda x: x.mT,
    "permute": lambda x: x.permute(1, 0),
    "movedim": lambda x: x.movedim(0, 1),
    "expand": lambda x: x[0:1].expand(3, 4),
    "narrow": lambda x: x.narrow(1, 1, 2),
    "select": lambda x: x.select(0, 1),
    "slice_step": lambda x: x[::2, 1::2],
    "int_index": lambda x: x[1],
    "ellipsis_none": lambda x: x[..., None, 1],
    "diagonal": lambda x: x.diagonal(1),
    "unbind": lambda x: x.unbind(1)[2],
    "split": lambda x: x.split(2, 1)[1],
    "chunk": lambda x: x.chunk(2, 0)[1],
    "alias": lambda x: x[...],
    "detach": lambda x: x.detach(),
    "data": lambda x: x.data,
    "view_of_view": lambda x: x.t()[1:].unsqueeze(0),
    "reshape_copy": lambda x: x.t().reshape(-1),
}


@pytest.mark.parametrize("name", sorted(VIEWS))
def test_view_metadata_and_write_through(name):
    make = VIEWS[name]

    def fn(m):
        x = _leaf(m).detach().clone()
        v = make(x)
        info = [v._is_view(), v._base is x, v.is_contiguous(), v.contiguous() is v]
        # writes to the base are seen by the view, writes through the view by the base
        x.add_(100)
        info += [v.clone(), v._version, x._version]
        if not v.is_contiguous() and name == "expand":
            return info
        v.mul_(-1)
        info += [x.clone(), v.clone(), v._version, x._version]
        return info

    both(fn)


@pytest.mark.parametrize("name", sorted(set(VIEWS) - {"detach", "data", "reshape_copy"}))
def test_view_inplace_grad(name):
    """An in-place op on a view of a non-leaf: CopySlices on the base, gradients as torch's."""
    make = VIEWS[name]

    def fn(m):
        a = _leaf(m, dtype="float64")
        w = m.arange(12.0, dtype=m.float64).reshape(3, 4).sin()
        b = a * 1
        v = make(b)
        v.mul_(v.detach() + 2)
        out = [_node(m, b), _node(m, v), b._version, b.clone(), v.clone()]
        (b * w).sum().backward()
        return out + [a.grad]

    both(fn)


def test_sibling_views_see_writes_and_regenerate():
    def fn(m):
        a = _leaf(m)
        b = a.clone()
        v1, v2, v3 = b[0], b[1:], b.t()
        v2.mul_(2)
        return [_node(m, b), _node(m, v1), _node(m, v2), _node(m, v3), v1, v2, v3, b._version]

    both(fn)


# --- in-place ops and their checks -------------------------------------------------------------


def _case_leaf(m):
    _leaf(m).add_(1)


def _case_view_of_leaf(m):
    _leaf(m)[0].add_(1)


def _case_leaf_under_no_grad(m):
    a = _leaf(m)
    with m.no_grad():
        a.add_(1)
        a[0].mul_(2)
    return a, a._version, a.is_leaf


def _case_no_grad_view(m):
    a = _leaf(m).clone()
    with m.no_grad():
        v = a[0]
    v.add_(1)


def _case_no_grad_view_indirect(m):
    a = _leaf(m).clone()
    with m.no_grad():
        v = a[0]
    a.add_(1)
    return v.grad_fn


def _case_multi_output(m):
    _leaf(m).clone().unbind(0)[1].add_(1)


def _case_multi_output_indirect(m):
    a = _leaf(m).clone()
    v = a.split(1)[2]
    a.mul_(2)
    return v.grad_fn


def _case_multi_output_no_grad(m):
    a = _leaf(m).detach().clone()
    v = a.unbind(0)[1]
    v.add_(1)
    return a, v, v.grad_fn


def _case_inference(m):
    with m.inference_mode():
        t = m.ones(3)
    t.add_(1)


def _case_inference_view(m):
    a = _leaf(m).clone()
    with m.inference_mode():
        v = a[0]
    a.add_(1)
    return v.grad_fn


def _case_shape(m):
    m.ones(3).add_(m.ones(2, 3))


def _case_dtype(m):
    m.ones(3, dtype=m.long).add_(1.5)


def _case_dtype_tensor(m):
    m.ones(3, dtype=m.long).mul_(m.tensor(1.5))


def _case_overlap(m):
    m.ones(1).expand(3).add_(1)


def _case_cast(m):
    x = m.ones(3).requires_grad_().clone()
    y = m.arange(3.0, dtype=m.float64).requires_grad_()
    x.add_(y)
    x.sum().backward()
    return x, y.grad


def _case_saved_input(m):
    a = _leaf(m)
    x = a.clone()
    z = x * x
    x.add_(1)
    z.sum().backward()


def _case_saved_output(m):
    a = _leaf(m)
    x = a.clone()
    x.exp_()
    x.add_(1)
    x.sum().backward()


def _case_saved_output_not_input(m):
    a = _leaf(m)
    b = a.clone()
    v = b[1:]
    r = v.exp()
    v.add_(1)
    r.sum().backward()
    return a.grad


def _case_saved_leaf_no_grad(m):
    a = _leaf(m)
    z = a * a
    with m.no_grad():
        a.mul_(2)
    z.sum().backward()


def _case_saved_view(m):
    a = _leaf(m)
    x = a.clone()[1:]
    z = x.sin()
    x.add_(1)
    z.sum().backward()


def _case_mul_self(m):
    x = _leaf(m).clone()
    x.mul_(x)
    x.sum().backward()


def _case_original_self(m):
    a = _leaf(m, dtype="float64")
    y = m.arange(12.0, dtype=m.float64).reshape(3, 4).cos().requires_grad_()
    x = a.clone()
    x.mul_(y)
    x.div_(y + 3)
    x.pow_(2)
    x.sum().backward()
    return x, a.grad, y.grad


def _case_retain_grad(m):
    a = _leaf(m)
    x = a.clone()
    x.retain_grad()
    x.mul_(2)
    x.sum().backward()
    return x.grad, a.grad


def _case_detach_shares(m):
    a = _leaf(m)
    b = a.clone()
    d = b.detach()
    d.zero_()
    return b, b._version, d._version, b.grad_fn.name()


def _case_data_shares(m):
    a = _leaf(m)
    b = a.clone()
    d = b.data
    d.fill_(3)
    return b, b._version, d._version


def _case_copy_into_no_grad(m):
    a = _leaf(m)
    b = m.zeros(3, 4)
    v = b[0:2]
    v.copy_(a[1:] * 2)
    out = [_node(m, b), _node(m, v), b.requires_grad, b.is_leaf, v.requires_grad]
    (b * b).sum().backward()
    return out + [a.grad]


def _case_no_grad_base_becomes_grad(m):
    a = _leaf(m)
    b = m.zeros(3, 4)
    v = b[1]
    b.add_(a)
    return v.requires_grad, _node(m, v), v.is_leaf, v


def _case_fill_tensor(m):
    a = _leaf(m)
    x = m.zeros(3)
    x.fill_(a.sum())
    x.sum().backward()
    return _node(m, x), a.grad


def _case_zero_recorded(m):
    a = _leaf(m)
    b = a * 2
    b[1].zero_()
    c = a.clone()
    c.zero_()
    (b * b + c).sum().backward()
    return _node(m, b), _node(m, c), b, c, a.grad


def _case_augmented(m):
    x = m.arange(6.0).reshape(2, 3)
    y = x
    x += 1
    x -= m.ones(3)
    x *= 2
    x /= 4
    x **= 2
    return x is y, x, x._version


def _case_optimizer_step(m):
    p = _leaf(m)
    (p * p).sum().backward()
    with m.no_grad():
        p -= 0.1 * p.grad
        p.grad.zero_()
    return p, p.grad, p._version, p.is_leaf


def _case_nested_views(m):
    a = _leaf(m, dtype="float64")
    b = a.clone()
    v = b.view(2, 6)[1]
    w = v[2:5]
    w.mul_(3)
    out = [_node(m, b), _node(m, v), _node(m, w), b.clone()]
    (b * b).sum().backward()
    return out + [a.grad]


def _case_error_leaves_state(m):
    x = m.arange(4.0)
    v = x[1:]
    try:
        v.add_(m.ones(2, 3))
    except RuntimeError:
        pass
    return x, v, x._version


def _case_copy_errors(m):
    m.zeros(2, 3).copy_(m.zeros(2, 2))


def _case_copy_broadcast_error(m):
    m.zeros(3).copy_(m.zeros(2, 3))


def _case_fill_dim(m):
    m.zeros(3).fill_(m.zeros(2))


CASES = {k[len("_case_") :]: v for k, v in dict(globals()).items() if k.startswith("_case_")}


@pytest.mark.parametrize("name", sorted(CASES))
def test_inplace_case(name):
    both(CASES[name])


# --- __setitem__ -------------------------------------------------------------------------------


def _v(m):
    return (m.arange(8.0).reshape(2, 4) + 100).requires_grad_()


SETITEM = {
    "int_scalar": (lambda m: 0, lambda m, v: 5.0),
    "int_tensor": (lambda m: 0, lambda m, v: v[0]),
    "column": (lambda m: (slice(None), 1), lambda m, v: v[0, :3]),
    "adv": (lambda m: m.tensor([0, 2]), lambda m, v: v),
    "adv_repeated": (lambda m: m.tensor([0, 0]), lambda m, v: v),
    "adv_pair": (lambda m: (m.tensor([0, 1]), m.tensor([1, 3])), lambda m, v: 7.0),
    "mixed": (lambda m: (0, m.tensor([1, 3])), lambda m, v: v[0, :2]),
    "mixed_slice": (lambda m: (slice(None), m.tensor([1, 3])), lambda m, v: v[0, :2]),
    "ellipsis": (lambda m: Ellipsis, lambda m, v: 3.0),
    "ellipsis_tensor": (lambda m: Ellipsis, lambda m, v: v[0]),
    "all_slice": (lambda m: slice(None), lambda m, v: v[0:1]),
    "mask": (lambda m: m.arange(12.0).reshape(3, 4) > 5, lambda m, v: -1.0),
    "mask_inf": (lambda m: m.arange(12.0).reshape(3, 4) > 5, lambda m, v: float("-inf")),
    "mask_row": (lambda m: m.tensor([True, False, True]), lambda m, v: v[1]),
    "none": (lambda m: (None, 1), lambda m, v: v[1]),
    "ellipsis_mid": (lambda m: (1, Ellipsis, 2), lambda m, v: 9.0),
    "step_slice": (lambda m: (slice(None, None, 2), slice(1, None, 2)), lambda m, v: v[:, :2]),
    "list": (lambda m: [0, 2], lambda m, v: 1.0),
    "out_of_range": (lambda m: m.tensor([5]), lambda m, v: 1.0),
    "bad_shape": (lambda m: 0, lambda m, v: m.ones(3)),
    "bad_value_shape": (lambda m: m.tensor([0, 1]), lambda m, v: m.ones(3, 4)),
    "dtype_adv": (lambda m: m.tensor([0]), lambda m, v: m.ones(1, 4, dtype=m.float64)),
    "dtype_basic": (lambda m: 0, lambda m, v: m.ones(4, dtype=m.float64)),
    "list_value": (lambda m: 0, lambda m, v: [1.0, 2.0, 3.0, 4.0]),
}


@pytest.mark.parametrize("name", sorted(SETITEM))
def test_setitem(name):
    index, value = SETITEM[name]

    def fn(m):
        a = _leaf(m)
        v = _v(m)
        x = a.clone()
        x[index(m)] = value(m, v)
        out = [x.clone(), _node(m, x), x._version]
        (x * m.arange(1.0, 13.0).reshape(3, 4)).sum().backward()
        return out + [a.grad, v.grad]

    both(fn)


@pytest.mark.parametrize("index", [0, (slice(None), 1), "adv"])
def test_setitem_on_leaf_raises(index):
    def fn(m):
        a = m.ones(3, 4, requires_grad=True)
        a[m.tensor([0]) if index == "adv" else index] = 1.0

    both(fn)


def test_setitem_int_dtype_and_views():
    def fn(m):
        x = m.zeros(3, dtype=m.long)
        x[1] = 2.7
        x[m.tensor([2])] = 5
        y = m.zeros(3, 4)
        row = y[1]
        y[1, 2] = 4.0
        row[0] = 3.0
        z = m.zeros(3, 4)
        z.index_put_((m.tensor([0, 0]), m.tensor([1, 1])), m.tensor([1.0, 2.0]), accumulate=True)
        return x, x._version, y, row, y._version, z

    both(fn)


# --- random programs (hypothesis) ----------------------------------------------------------------

VIEW_STEPS = [
    lambda t: t[1:] if t.dim() and t.shape[0] > 1 else t[...],
    lambda t: t[0] if t.dim() else t[...],
    lambda t: t.t() if t.dim() == 2 else t.unsqueeze(0),
    lambda t: t.unsqueeze(-1),
    lambda t: t.reshape(-1) if t.is_contiguous() else t.view(t.shape),
    lambda t: t.diagonal() if t.dim() >= 2 else t[...],
    lambda t: t[::2] if t.dim() else t[...],
    lambda t: t.transpose(0, -1) if t.dim() >= 2 else t.detach(),
]


def _write(m, t, kind, k):
    if kind == 0:
        t.add_(k)
    elif kind == 1:
        t.mul_(-1.5)
    elif kind == 2:
        t.fill_(k)
    elif kind == 3:
        if t.dim():
            t[0] = k
        else:
            t.zero_()
    elif kind == 4:
        t.copy_(t.detach() * 0 + k)
    else:
        t.sub_(t.detach().sin())


def _run(m, program, track_grad):
    a = (m.arange(24.0, dtype=m.float64).reshape(4, 6) / 7).requires_grad_()
    base = a.clone() if track_grad else a.detach().clone()
    tensors = [base]
    trace = []
    for step in program:
        if step[0] == "view":
            _, src, which = step
            t = tensors[src % len(tensors)]
            tensors.append(VIEW_STEPS[which](t))
        else:
            _, dst, kind, k = step
            t = tensors[dst % len(tensors)]
            try:
                _write(m, t, kind, float(k))
            except RuntimeError as e:
                trace.append(("error", str(e)))
        for t in tensors:
            try:
                node = None if t.grad_fn is None else t.grad_fn.name()
            except RuntimeError as e:
                node = ("error", str(e))
            trace.append((t.detach().clone(), t._version, node, t.requires_grad, t.is_leaf))
    if track_grad:
        try:
            (base * base).sum().backward()
            trace.append(a.grad)
        except RuntimeError as e:
            trace.append(("error", str(e)))
    return trace


_step = st.one_of(
    st.tuples(st.just("view"), st.integers(0, 20), st.integers(0, len(VIEW_STEPS) - 1)),
    st.tuples(st.just("write"), st.integers(0, 20), st.integers(0, 5), st.integers(-3, 3)),
)


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    derandomize=True,
)
@given(program=st.lists(_step, min_size=1, max_size=8), track_grad=st.booleans())
def test_random_view_and_inplace_programs(program, track_grad):
    t = _run(torch, program, track_grad)
    g = _run(lg, program, track_grad)
    assert len(t) == len(g)
    for a, b in zip(t, g):
        if isinstance(a, tuple) and a and a[0] == "error":
            assert b == a
        elif isinstance(a, torch.Tensor):
            both_same(a, b)
        else:
            both_same(a[0], b[0])
            assert a[1:] == b[1:], (a[1:], b[1:])


def both_same(t, g):
    import numpy as np

    np.testing.assert_allclose(np.asarray(g._data), t.detach().numpy(), rtol=1e-12, atol=1e-12)


# --- in-place shape changes ----------------------------------------------------------------------

RESTRIDE = {
    "t_": lambda x: x.squeeze_(1).t_(),
    "transpose_": lambda x: x.transpose_(0, 2),
    "swapdims_": lambda x: x.swapdims_(0, 2),
    "swapaxes_": lambda x: x.swapaxes_(0, 2),
    "unsqueeze_": lambda x: x.unsqueeze_(0),
    "squeeze_": lambda x: x.squeeze_(),
    "squeeze_dim": lambda x: x.squeeze_(1),
    "squeeze_dims": lambda x: x.squeeze_((0, 1)),
}


@pytest.mark.parametrize("name", sorted(RESTRIDE))
def test_inplace_shape_change(name):
    def fn(m):
        a = _leaf(m, (3, 1, 4))
        x = a.clone()
        v0 = x._version
        r = RESTRIDE[name](x)
        out = [
            r is x,
            _node(m, x),
            tuple(x.shape),
            x._version - v0,
            x._is_view(),
            x.is_contiguous(),
        ]
        (x * m.arange(12.0).reshape(x.shape)).sum().backward()
        return out + [a.grad]

    both(fn)


def test_inplace_shape_change_then_write():
    def fn(m):
        b = m.zeros(3, 4)
        v = b[0]
        b.t_()
        b[0] = 1
        w = b[1]
        w.add_(2)
        u = m.zeros(3, 4)[0]
        u.unsqueeze_(0)
        return b, v, w, b.is_contiguous(), v._base is b, u.shape, u.is_contiguous()

    both(fn)


def test_inplace_shape_change_on_leaf_raises():
    both(lambda m: m.ones(2, 3, requires_grad=True).t_())
