"""In-place writes the differential fuzzer got wrong: overlapping operands, writes to expanded
tensors, views made under ``no_grad`` or by multi-output ops, and the ``requires_grad`` of views
whose base changes its flag. Every case runs in torch and in leafgrad (``both``)."""

from __future__ import annotations

import pytest
from conftest import both

# --- operands that share memory with the written tensor (Note [Overlapping operands]) ---------

_OVERLAPS = {
    # elementwise kernels and copy_ refuse a partial overlap
    "add_": lambda m, y: y[1:].add_(y[:5]),
    "mul_": lambda m, y: y[1:].mul_(y[:5]),
    "iadd": lambda m, y: y[1:].__iadd__(y[:5]),
    "sub__alpha": lambda m, y: y[1:].sub_(y[:5], alpha=2),
    "addcmul_": lambda m, y: y[1:].addcmul_(m.ones(5), y[:5]),
    "lerp_": lambda m, y: y[1:].lerp_(y[:5], 0.5),
    "clamp_min_": lambda m, y: y[1:].clamp_min_(y[:5]),
    "eq_": lambda m, y: y[1:].eq_(y[:5]),
    "logical_and_": lambda m, y: y[1:].logical_and_(y[:5]),
    "copy_": lambda m, y: y[1:].copy_(y[:5]),
    "copy__0d": lambda m, y: y[1:3].copy_(y[1]),
    "add__0d": lambda m, y: y[1:3].add_(y[1]),
    "add__shorter": lambda m, y: y[1:3].add_(y[2:3]),
    "add__view_of_view": lambda m, y: y[1:][1:].add_(y[:4]),
    "add__row_of_matrix": lambda m, y: y.view(2, 3)[0].add_(y[2:5]),
    "add__same_range_other_shape": lambda m, y: y.view(2, 3).add_(y[:3]),
    "add__transposed": lambda m, y: y[:4].view(2, 2).add_(y[:4].view(2, 2).t()),
    "setitem_slice": lambda m, y: y.__setitem__(slice(1, None), y[:5]),
    "setitem_indices": lambda m, y: y.__setitem__(m.tensor([1, 2]), y[:2]),
    "setitem_mask": lambda m, y: y[1:].__setitem__(m.tensor([0, 1, 1, 0, 0]).bool(), y[:2]),
    # index_put_ refuses any overlap, a full one too
    "index_put_": lambda m, y: y.index_put_((m.tensor([1, 2]),), y[:2]),
    "index_put__itself": lambda m, y: y.index_put_((m.arange(6),), y),
    "setitem_indices_itself": lambda m, y: y.__setitem__(m.arange(6), y),
    "scatter_": lambda m, y: y[1:].scatter_(0, m.tensor([0, 1]), y[:2]),
    # allowed: the same memory (full overlap), disjoint memory, strided (not dense) operands
    "add__same_view": lambda m, y: y[1:].add_(y[1:]),
    "add__itself": lambda m, y: y.add_(y),
    "copy__same_view": lambda m, y: y[1:].copy_(y[1:]),
    "add__disjoint": lambda m, y: y[1:3].add_(y[:1]),
    "add__0d_disjoint": lambda m, y: y[1:].add_(y[0]),
    "add__strided": lambda m, y: y[1:4].add_(y[::2]),
    "add__to_strided": lambda m, y: y[::2].add_(y[1:4]),
    "add__expanded": lambda m, y: y[1:4].add_(y[:1].expand(3)),
    "add__reshaped_same_memory": lambda m, y: y.view(2, 3).add_(y.view(3, 2).reshape(2, 3)),
    # the same memory with other strides of size-1 dims: a partial overlap, as in PyTorch
    "add__size_1_strides": lambda m, y: y.view(1, 6).add_(y.view(6, 1).t()),
    "add__unsqueezed_transposed": lambda m, y: y.unsqueeze(0).add_(y.unsqueeze(1).t()),
    "copy__size_1_strides": lambda m, y: y.view(1, 6).copy_(y.view(6, 1).t()),
    "add__expanded_leading_1": lambda m, y: y.view(1, 6).add_(y.expand(1, 6)),
    "add__expanded_leading_1s": lambda m, y: y.view(1, 1, 6).add_(y.expand(1, 1, 6)),
    # kernels that do not check
    "masked_fill_": lambda m, y: y[1:].masked_fill_(y[1:] > 2, y[1]),
    "fill_": lambda m, y: y[1:].fill_(y[1]),
    "setitem_0d": lambda m, y: y.__setitem__(slice(1, 3), y[1]),
    "setitem_same_element": lambda m, y: y.__setitem__(1, y[1]),
    "setitem_one_element_mask": lambda m, y: y.__setitem__(y > 2, y[1:2]),
}


@pytest.mark.parametrize("name", sorted(_OVERLAPS))
def test_inplace_write_with_overlapping_operand(name):
    def fn(m):
        y = m.arange(6.0)
        _OVERLAPS[name](m, y)
        return y, y._version

    both(fn)


_EXPANDS = [
    ((), (1,)),
    ((), (3, 1)),
    ((3,), (1, 3)),
    ((3,), (1, 1, 3)),
    ((3,), (2, 1, 3)),
    ((2, 1), (1, 2, 4)),
    ((2, 1), (3, 1, 2, 1)),
    ((1,), (1, 5)),
    ((0,), (2, 1, 0)),
    ((2, 0), (1, 2, 0)),
]


@pytest.mark.parametrize("source, shape", _EXPANDS, ids=[f"{a}->{b}" for a, b in _EXPANDS])
def test_expand_strides_of_new_dims(source, shape):
    # PyTorch's inferExpandGeometry: a new size-1 dim gets the stride of the dims inside it
    def fn(m):
        x = m.ones(source)
        t = m.arange(6.0).view(2, 3).t()[:, :1]  # strides (1, 3): a non-contiguous source
        e = t.expand(1, *t.shape)
        return x.expand(shape).stride(), e.stride(), e.is_contiguous()

    both(fn)


def test_partly_overlapping_operand_checked_after_leaf_check():
    def fn(m):
        x = m.arange(6.0, requires_grad=True)
        x[1:].add_(x[:5])

    both(fn)


def test_partly_overlapping_write_changes_nothing():
    def fn(m):
        y = m.arange(6.0)
        try:
            y[1:].add_(y[:5])
        except RuntimeError:
            pass
        return y, y._version

    both(fn)


# --- writes to expanded tensors with autograd (Note [Writes to expanded tensors]) --------------


@pytest.mark.parametrize("accumulate", [False, True])
@pytest.mark.parametrize("index", ["mask", "indices"])
def test_advanced_write_to_expanded_view_is_recorded(index, accumulate):
    def fn(m):
        a = m.tensor([1.0], requires_grad=True)
        b = a * 1
        x = b.expand(3)
        idx = m.tensor([False, True, False]) if index == "mask" else m.tensor([1])
        x.index_put_((idx,), m.tensor(2.0), accumulate=accumulate)
        return x, b, x._version

    both(fn)


def test_backward_through_write_to_expanded_view_raises():
    def fn(m):
        a = m.tensor([1.0], requires_grad=True)
        x = (a * 1).expand(3)
        x[m.tensor([1])] = 2.0
        x.sum().backward()

    both(fn)


def test_advanced_write_of_tensor_that_requires_grad_to_expanded_view():
    def fn(m):
        x = m.ones(1).expand(3)
        v = m.tensor(2.0, requires_grad=True)
        x[m.tensor([1])] = v
        return x, x._version

    both(fn)


# --- views of views made under no_grad: PyTorch's handle_view_on_rebase message ---------------


def _clone(m):
    return m.ones(4, requires_grad=True).clone()


def _view_of_no_grad_slice(m):
    x = _clone(m)
    with m.no_grad():
        v = x[1:]
    w = v[1:]
    w.add_(1)


def _view_of_no_grad_view(m):
    x = _clone(m)
    with m.no_grad():
        v = x[1:]
    v.view(3).mul_(2)


def _view_of_no_grad_unbind(m):
    x = _clone(m)
    with m.no_grad():
        v = x.unbind(0)[1]
    v.view(()).add_(1)


def _no_grad_view_of_unbind(m):
    x = _clone(m)
    v = x.unbind(0)[1]
    with m.no_grad():
        w = v.view(())
    w.add_(1)


def _both_under_no_grad(m):
    x = _clone(m)
    with m.no_grad():
        w = x[1:][1:]
    w.add_(1)


def _base_written(m):
    x = _clone(m)
    with m.no_grad():
        v = x[1:]
    w = v[1:]
    x.add_(1)
    return w.grad_fn


_NO_GRAD_VIEWS = {
    "view_of_no_grad_slice": _view_of_no_grad_slice,
    "view_of_no_grad_view": _view_of_no_grad_view,
    "view_of_no_grad_unbind": _view_of_no_grad_unbind,
    "no_grad_view_of_unbind": _no_grad_view_of_unbind,
    "both_under_no_grad": _both_under_no_grad,
    "base_written": _base_written,
}


@pytest.mark.parametrize("fn", _NO_GRAD_VIEWS.values(), ids=_NO_GRAD_VIEWS.keys())
def test_inplace_on_view_of_no_grad_view_raises(fn):
    both(fn)


# --- views made under no_grad follow their base's requires_grad --------------------------------


def _base_off(m):
    x = m.ones(3, requires_grad=True)
    with m.no_grad():
        v = x.view(3)
    x.requires_grad_(False)
    return v


def _requires_grad_after_base_off(m):
    return _base_off(m).requires_grad


def _backward_after_base_off(m):
    _base_off(m).sum().backward()


def _result_after_base_off(m):
    return (_base_off(m) * 2).requires_grad


def _inplace_after_base_off(m):
    v = _base_off(m)
    v.add_(1)
    return v, v._version


def _view_of_view_after_base_off(m):
    x = m.ones(3, requires_grad=True)
    with m.no_grad():
        w = x.view(3).view(3)
    x.requires_grad_(False)
    return w.requires_grad


def _base_on_then_off(m):
    x = m.ones(3)
    with m.no_grad():
        v = x.view(3)
    x.requires_grad_(True)
    on = v.requires_grad
    x.requires_grad_(False)
    return on, v.requires_grad


def _base_detached_in_place(m):
    x = m.ones(3, requires_grad=True)
    with m.no_grad():
        v = x.view(3)
    x.detach_()
    return v.requires_grad


def _view_off_while_base_on(m):
    x = m.ones(3, requires_grad=True)
    with m.no_grad():
        v = x.view(3)
    v.requires_grad_(False)
    return v.requires_grad


def _view_off_then_backward(m):
    x = m.ones(3, requires_grad=True)
    with m.no_grad():
        v = x.view(3)
    v.requires_grad_(False)
    y = v * 2
    y.sum().backward()
    return y.requires_grad, type(y.grad_fn).__name__, x.grad, v.is_leaf


def _view_off_then_base_off(m):
    x = m.ones(3, requires_grad=True)
    with m.no_grad():
        v = x.view(3)
    v.requires_grad = False
    x.requires_grad_(False)
    return v.requires_grad


def _view_own_flag_off_while_base_on(m):
    x = m.ones(3)
    with m.no_grad():
        v = x.view(3)
    v.requires_grad_(True)
    x.requires_grad_(True)
    v.requires_grad_(False)
    on = v.requires_grad
    x.requires_grad_(False)
    return on, v.requires_grad


def _grad_mode_view_after_base_off(m):
    x = m.ones(3, requires_grad=True)
    v = x.view(3)
    x.requires_grad_(False)
    return v.requires_grad


def _view_on_then_base_off(m):
    x = m.ones(3)
    with m.no_grad():
        v = x.view(3)
    v.requires_grad_(True)
    x.requires_grad_(True)
    x.requires_grad_(False)
    return v.requires_grad


def _backward_through_no_grad_alias(m):
    x = m.ones(3)
    with m.no_grad():
        v = x.view(3)
    v.sum().backward()


_BASE_FLAG = {
    "requires_grad_after_base_off": _requires_grad_after_base_off,
    "backward_after_base_off": _backward_after_base_off,
    "result_after_base_off": _result_after_base_off,
    "inplace_after_base_off": _inplace_after_base_off,
    "view_of_view_after_base_off": _view_of_view_after_base_off,
    "base_on_then_off": _base_on_then_off,
    "base_detached_in_place": _base_detached_in_place,
    "view_off_while_base_on": _view_off_while_base_on,
    "view_off_then_backward": _view_off_then_backward,
    "view_off_then_base_off": _view_off_then_base_off,
    "view_own_flag_off_while_base_on": _view_own_flag_off_while_base_on,
    "grad_mode_view_after_base_off": _grad_mode_view_after_base_off,
    "view_on_then_base_off": _view_on_then_base_off,
    "backward_through_no_grad_alias": _backward_through_no_grad_alias,
}


@pytest.mark.parametrize("fn", _BASE_FLAG.values(), ids=_BASE_FLAG.keys())
def test_view_requires_grad_follows_base(fn):
    both(fn)


# --- outputs of multi-output view ops (chunk, split, unbind) written in place ------------------


def _chunk_of_plain_tensor_written_with_grad(m):
    x = m.ones(4)
    c = x.chunk(2)[0]
    c.add_(m.ones(2, requires_grad=True))


def _chunk_that_requires_grad_itself(m):
    c = m.ones(4).chunk(2)[0]
    c.requires_grad_()
    c.add_(1)


def _chunk_under_no_grad(m):
    x = m.ones(4, requires_grad=True).clone()
    with m.no_grad():
        c = x.chunk(2)[0]
    c.add_(1)


def _chunk_written_under_no_grad(m):
    x = m.ones(4, requires_grad=True).clone()
    c = x.chunk(2)[0]
    with m.no_grad():
        c.add_(1)
    return x.grad_fn, c.grad_fn


def _chunk_of_plain_tensor(m):
    x = m.ones(4)
    c = x.chunk(2)[0]
    c.add_(1)
    return c, c.grad_fn, x._version


def _view_of_chunk(m):
    x = m.ones(4, requires_grad=True).clone()
    x.chunk(2)[0].view(2).add_(1)


def _second_chunk(m):
    x = m.ones(5, requires_grad=True).clone()
    x.chunk(2)[1].add_(1)


_CHUNKS = {
    "of_plain_tensor_written_with_grad": _chunk_of_plain_tensor_written_with_grad,
    "that_requires_grad_itself": _chunk_that_requires_grad_itself,
    "under_no_grad": _chunk_under_no_grad,
    "written_under_no_grad": _chunk_written_under_no_grad,
    "of_plain_tensor": _chunk_of_plain_tensor,
    "view_of_chunk": _view_of_chunk,
    "second_chunk": _second_chunk,
}


@pytest.mark.parametrize("fn", _CHUNKS.values(), ids=_CHUNKS.keys())
def test_inplace_on_chunk(fn):
    both(fn)


def test_setitem_of_tensor_into_its_own_unsqueezed_view():
    def fn(m):
        x = m.arange(3.0)
        x[None] = x
        return x, x._version

    both(fn)
