"""``index_add``, ``index_copy``, ``masked_scatter``, ``put`` and their in-place variants against
PyTorch: values, dtypes, gradients, nodes, saved tensors, errors and the in-place rules."""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
from conftest import both

import leafgrad

X = [[0.5, -1.0, 2.0, 3.5], [4.0, 5.5, -6.0, 7.0], [8.0, 9.0, 10.5, -11.0]]


def _x(m, dtype="float32", requires_grad=True):
    x = m.tensor(X, dtype=getattr(m, dtype))
    return x.requires_grad_() if requires_grad else x


def _i(m, values, dtype="int64"):
    return m.tensor(values, dtype=getattr(m, dtype))


def _names(node):
    """The node's name and its edges' names (None for an absent edge)."""
    return node.name(), [None if f is None else f.name() for f, _ in node.next_functions]


def _seq(m, shape, scale=1.0, offset=0.0, requires_grad=False):
    """``arange`` of ``shape``, scaled and shifted, made as a leaf (no recorded ops)."""
    values = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape) * scale + offset
    return m.tensor(values, requires_grad=requires_grad)


def _weights(m, shape):
    return _seq(m, shape, offset=-2.5)


def _backward(m, out, *inputs):
    """Gradients of a weighted sum through ``backward`` and through ``autograd.grad``."""
    loss = (out * _weights(m, tuple(out.shape))).sum()
    grads = m.autograd.grad(loss, inputs, retain_graph=True)
    loss.backward()
    return [out, _names(out.grad_fn), list(grads), [t.grad for t in inputs]]


# --- values and gradients ------------------------------------------------------------------------


def _index_add_case(shape, dim, index, sshape, alpha, m):
    x = _seq(m, shape, 0.5, requires_grad=True)
    s = _seq(m, sshape, offset=1.0, requires_grad=True)
    out = x.index_add(dim, _i(m, index), s, alpha=alpha)
    return _backward(m, out, x, s)


def test_index_add_values_and_gradients():
    # (self shape, dim, index, source shape, alpha)
    cases = [
        ((3, 4), 0, [2, 0], (2, 4), 1),
        ((3, 4), 1, [3, 0, 3], (3, 3), 1),  # repeated positions add up
        ((3, 4), -1, 2, (3, 1), 2.5),  # a 0-d index
        ((2, 3, 4), 1, [2, 2], (2, 2, 4), -1),
        ((), -1, [0], (), 3),
        ((0, 4), 1, [1], (0, 1), 1),
    ]
    for case in cases:
        both(partial(_index_add_case, *case))


def _index_add_dtype(dtype, alpha, m):
    x = m.tensor([[1, 0, 3], [200, 1, 0]], dtype=getattr(m, dtype))
    s = m.tensor([[100, 1, 0], [90, 0, 1]], dtype=getattr(m, dtype))
    return x.index_add(0, _i(m, [1, 1]), s, alpha=alpha)


def test_index_add_dtypes():
    for dtype in ["float16", "int64", "uint8", "bool"]:
        for alpha in [1, 2] if dtype != "bool" else [1, 0]:
            both(partial(_index_add_dtype, dtype, alpha))

    def complex_fn(m):
        x = m.tensor([1 + 2j, 3j, -1.0], requires_grad=True)
        s = m.tensor([2 - 1j, 0.5j], requires_grad=True)
        out = x.index_add(0, _i(m, [2, 0]), s, alpha=1 - 2j)
        loss = (out * m.tensor([1j, 2.0, 1 - 1j])).sum().abs()
        loss.backward()
        return out, x.grad, s.grad

    both(complex_fn)
    # an int32 index, and alpha as a 0-d tensor (a Number to the parser)
    both(lambda m: _x(m, requires_grad=False).index_add(1, _i(m, [3], "int32"), m.ones(3, 1)))
    both(
        lambda m: m.index_add(
            _x(m, requires_grad=False), 0, _i(m, [0]), m.ones(1, 4), alpha=m.tensor(2.0)
        )
    )


def _index_copy_case(shape, dim, index, sshape, m):
    x = _seq(m, shape, 0.5, requires_grad=True)
    s = _seq(m, sshape, offset=1.0, requires_grad=True)
    out = x.index_copy(dim, _i(m, index), s)
    return _backward(m, out, x, s)


def _index_copy_dtype(dtype, m):
    return m.zeros(2, 3, dtype=getattr(m, dtype)).index_copy(
        1, _i(m, [2, 0]), m.ones(2, 2, dtype=getattr(m, dtype))
    )


def test_index_copy_values_and_gradients():
    cases = [
        ((3, 4), 0, [2, 0], (2, 4)),
        ((3, 4), -1, [3, 1], (3, 2)),
        ((4,), 0, 2, ()),  # a scalar source into a vector
        ((), 0, [0], (1,)),
        ((3, 4), 0, [], (0, 4)),
    ]
    for case in cases:
        both(partial(_index_copy_case, *case))
    for dtype in ["float64", "int64", "uint8", "bool", "complex64"]:
        both(partial(_index_copy_dtype, dtype))


def _masked_scatter_case(shape, mask, sshape, m):
    x = _seq(m, shape, 0.5, requires_grad=True)
    s = _seq(m, sshape, offset=1.0, requires_grad=True)
    out = x.masked_scatter(m.tensor(mask), s)
    return _backward(m, out, x, s)


def _masked_scatter_dtype(dtype, m):
    return m.zeros(2, 3, dtype=getattr(m, dtype)).masked_scatter(
        m.tensor([[True, False, True], [False, False, True]]),
        m.ones(5, dtype=getattr(m, dtype)),
    )


def test_masked_scatter_values_and_gradients():
    cases = [  # (self shape, mask, source shape)
        ((3, 4), [True, False, True, False], (12,)),
        ((3, 4), [[True], [False], [True]], (3, 3)),  # more source than needed
        ((3, 4), [[[True, False, False, True]], [[False, True, True, True]]], (30,)),
        ((), [True, False], (3,)),  # the mask broadcasts self
        ((), False, (0,)),
        ((0, 4), [True, False, True, False], (0,)),
    ]
    for case in cases:
        both(partial(_masked_scatter_case, *case))
    for dtype in ["int64", "bool", "complex128", "float16"]:
        both(partial(_masked_scatter_dtype, dtype))
    both(lambda m: m.masked_scatter(m.zeros(2), m.tensor([False, True]), m.tensor([5.0])))


def _put_case(shape, index, sshape, accumulate, m):
    x = _seq(m, shape, 0.5, requires_grad=True)
    s = _seq(m, sshape, offset=1.0, requires_grad=True)
    out = x.put(_i(m, index), s, accumulate)
    return _backward(m, out, x, s)


def _put_dtype(dtype, m):
    return m.zeros(4, dtype=getattr(m, dtype)).put(
        _i(m, [1, 1]), m.tensor([200, 100], dtype=getattr(m, dtype)), accumulate=True
    )


def test_put_values_and_gradients():
    cases = [  # (self shape, index, source shape, accumulate)
        ((3, 4), [0, 5, -1], (3,), False),
        ((3, 4), [[11, 2]], (2, 1), False),
        ((3, 4), [0, 0, 5, -12], (4,), True),
        ((), [0, -1, 0], (3,), True),
        ((), 0, (), False),
        ((3, 4), [], (0,), False),
        ((0,), [], (0,), True),
    ]
    for case in cases:
        both(partial(_put_case, *case))
    for dtype in ["int64", "uint8", "bool", "complex64"]:
        both(partial(_put_dtype, dtype))
    both(lambda m: m.put(m.zeros(4), _i(m, [3]), m.tensor([2.0]), True))


def test_repeated_index_gradients_follow_pytorch_formulas():
    # which value survives a repeated index is not defined, but the gradients are: every value
    # takes the gradient at its position, and no gradient reaches self there
    def copy(m):
        x = _x(m)
        s = m.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]], requires_grad=True)
        out = x.index_copy(1, _i(m, [2, 0, 2]), s)
        (out * _weights(m, (3, 4))).sum().backward()
        return x.grad, s.grad

    def put(m):
        x = _x(m)
        s = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
        out = x.put(_i(m, [5, -7, 1]), s)
        (out * _weights(m, (3, 4))).sum().backward()
        return x.grad, s.grad

    both(copy)
    both(put)


def test_edges_when_only_one_input_requires_grad():
    def fn(m):
        out = []
        for rg_self in (True, False):
            x = _x(m, requires_grad=rg_self)
            s2 = m.ones(3, 2, requires_grad=not rg_self)
            s1 = m.ones(2, requires_grad=not rg_self)
            s12 = m.ones(12, requires_grad=not rg_self)
            for r in (
                x.index_add(1, _i(m, [0, 2]), s2),
                x.index_copy(1, _i(m, [0, 2]), s2),
                x.masked_scatter(m.tensor([True, False, True, True]), s12),
                x.put(_i(m, [0, 2]), s1),
            ):
                out.append(_names(r.grad_fn))
        x = _x(m, requires_grad=False)
        out.append(x.index_add(0, _i(m, [1]), m.ones(1, 4)).requires_grad)
        return out

    both(fn)


def test_second_order_gradients():
    def fn(m):
        x = _x(m)
        s = m.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], requires_grad=True)
        out = x.index_add(1, _i(m, [1, 3]), s * s, alpha=2)
        (g,) = m.autograd.grad((out * out).sum(), s, create_graph=True)
        g.sum().backward()
        return g, s.grad, x.grad

    both(fn)


# --- saved tensors -------------------------------------------------------------------------------

SECOND_BACKWARD = {
    # name: (call, which input requires grad)
    "index_add_self": (lambda m, x, s: x.index_add(1, _i(m, [0, 2]), s), "self"),
    "index_add_source": (lambda m, x, s: x.index_add(1, _i(m, [0, 2]), s), "source"),
    "index_copy_self": (lambda m, x, s: x.index_copy(1, _i(m, [0, 2]), s), "self"),
    "index_copy_source": (lambda m, x, s: x.index_copy(1, _i(m, [0, 2]), s), "source"),
    "masked_scatter_self": (
        lambda m, x, s: x.masked_scatter(m.tensor([True, False, True, False]), s.repeat(2, 1)),
        "self",
    ),
    "masked_scatter_source": (
        lambda m, x, s: x.masked_scatter(m.tensor([True, False, True, False]), s.repeat(2, 1)),
        "source",
    ),
    "put_self": (lambda m, x, s: x.put(_i(m, [0, 1, 5, 7, 8, 11]), s), "self"),
    "put_source": (lambda m, x, s: x.put(_i(m, [0, 1, 5, 7, 8, 11]), s), "source"),
    "put_accumulate_self": (lambda m, x, s: x.put(_i(m, [0, 0, 5, 7, 8, 1]), s, True), "self"),
}


def _backward_twice(call, which, m):
    x = _x(m, requires_grad=which == "self")
    s = m.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], requires_grad=which == "source")
    loss = call(m, x, s).sum()
    loss.backward()
    loss.backward()
    return x.grad if which == "self" else s.grad


def test_second_backward_without_retain_graph():
    for call, which in SECOND_BACKWARD.values():
        both(partial(_backward_twice, call, which))


def _index_changed(call, m):
    x = m.zeros(3, requires_grad=True)
    s = m.ones(2, requires_grad=True)
    i = _i(m, [0, 2])
    out = call(m, x, s, i)
    i.add_(0)
    out.sum().backward()
    return x.grad, s.grad


def test_saved_index_is_checked_for_in_place_changes():
    for call in (
        lambda m, x, s, i: x.index_add(0, i, s),
        lambda m, x, s, i: x.detach().index_add(0, i, s),
        lambda m, x, s, i: x.index_copy(0, i, s.detach()),
        lambda m, x, s, i: x.put(i, s.detach(), True),
    ):
        both(partial(_index_changed, call))


# --- errors --------------------------------------------------------------------------------------

ERRORS = [
    # index_add
    lambda m: _x(m).index_add(1, _i(m, [0, 2]).float(), m.ones(3, 2)),
    lambda m: _x(m).index_add(1, _i(m, [0, 2], "int16"), m.ones(3, 2, dtype=m.float64)),
    lambda m: _x(m).index_add(1, _i(m, [[0], [2]]), m.ones(3, 2)),
    lambda m: _x(m).index_add(2, _i(m, [0, 2]), m.ones(3, 2)),
    lambda m: _x(m).index_add(-3, _i(m, [0, 2]), m.ones(3, 2)),
    lambda m: _x(m).index_add(1, _i(m, [0, 2]), m.ones(3, 2, dtype=m.float64)),
    lambda m: _x(m).index_add(1, _i(m, [0, 2]), m.ones(3, 3)),
    lambda m: _x(m).index_add(1, _i(m, [0, 2]), m.ones(2, 2)),
    lambda m: _x(m).index_add(1, _i(m, [0, 2]), m.ones(6)),
    lambda m: _x(m).index_add(0, _i(m, [0, 2]), m.tensor(1.0)),
    lambda m: m.zeros(4).index_add(0, _i(m, 1), m.tensor(3.0)),
    lambda m: m.tensor(1.0).index_add(0, _i(m, [0]), m.tensor([2.0])),
    lambda m: m.zeros(4).index_add(0, _i(m, [0, 4]), m.ones(2)),
    lambda m: m.zeros(4).index_add(0, _i(m, [0, -1]), m.ones(2)),
    lambda m: m.tensor(1.0).index_add(0, _i(m, [1]), m.tensor(1.0)),
    lambda m: _x(m).index_add(0, _i(m, [0, 3]), m.ones(2, 4)),
    lambda m: _x(m).index_add(-1, _i(m, [1, -5]), m.ones(3, 2)),
    lambda m: _x(m).index_add(0, _i(m, [0, 3], "int32"), m.ones(2, 4)),
    lambda m: _x(m).index_add(0, _i(m, [0, 3]), m.ones(2, 4), alpha=2),
    lambda m: m.zeros(2, 3, 4).index_add(1, _i(m, [3]), m.ones(2, 1, 4)),
    lambda m: m.zeros(3, 0).index_add(0, _i(m, [5]), m.ones(1, 0)),
    lambda m: m.zeros(0).index_add(0, _i(m, [0]), m.ones(1)),
    lambda m: m.zeros(4).index_add(0, _i(m, [0]), m.ones(1), alpha=1 + 2j),
    lambda m: m.zeros(4, dtype=m.float16).index_add(0, _i(m, [0]), m.ones(1).half(), alpha=1e6),
    lambda m: m.zeros(4).index_add(0, _i(m, [0]), m.ones(1), alpha=None),
    lambda m: m.zeros(4).index_add(0, _i(m, [0]), m.ones(1), alpha=m.tensor([2.0])),
    lambda m: m.zeros(4).index_add(0, _i(m, [0]), m.ones(1), beta=2),
    lambda m: m.zeros(4).index_add(0, _i(m, [0]), m.ones(1), 3),
    lambda m: m.zeros(4).index_add(0, [0], m.ones(1)),
    lambda m: m.zeros(4).index_add(0, _i(m, [0])),
    lambda m: m.zeros(4).index_add(0, _i(m, [0]), m.ones(1), dim=0),
    lambda m: m.put(m.zeros(4)),
    lambda m: m.zeros(4).index_add(0.0, _i(m, [0]), m.ones(1)),
    lambda m: m.index_add(m.zeros(4), 0, _i(m, [0]), 1.0),
    lambda m: m.zeros(4).index_add_(0, _i(m, [0]), 1.0),
    # index_copy
    lambda m: _x(m).index_copy(1, _i(m, [0, 2], "int32"), m.ones(3, 2)),
    lambda m: _x(m).index_copy(1, _i(m, [0, 4]), m.ones(3, 2)),
    lambda m: m.zeros(4).index_copy(0, _i(m, [0, -1]), m.ones(2)),
    lambda m: m.tensor(0.0).index_copy(0, _i(m, [1]), m.ones(1)),
    lambda m: _x(m).index_copy(2, _i(m, [0, 2]), m.ones(3, 2)),
    lambda m: _x(m).index_copy(1, _i(m, [0, 2]), m.ones(3, 3)),
    lambda m: _x(m).index_copy(1, _i(m, [0, 2]), m.ones(2, 2)),
    lambda m: m.zeros(2, 3, 4).index_copy(1, _i(m, [0]), m.ones(2, 1, 3)),
    lambda m: _x(m).index_copy(1, _i(m, [0]), m.tensor(1.0)),
    lambda m: _x(m).index_copy(1, _i(m, [0, 1]), m.tensor(1.0)),
    lambda m: _x(m).index_copy(1, _i(m, [0, 2]), m.ones(6)),
    lambda m: _x(m).index_copy(1, _i(m, [0, 2]), m.ones(3, 2, dtype=m.float64)),
    lambda m: _x(m).index_copy(1, _i(m, [[0, 2]], "int32"), m.ones(3, 2, dtype=m.float64)),
    lambda m: m.zeros(4).index_copy(0, _i(m, [0, 2], "int32"), m.ones(3)),
    lambda m: m.zeros(4, 0).index_copy(0, _i(m, [0, 5]), m.ones(2, 0)),
    lambda m: m.index_copy(m.zeros(4), 0, [0], m.ones(1)),
    lambda m: m.zeros(4).index_copy_(0, _i(m, [0]), 1.0),
    # masked_scatter
    lambda m: _x(m).masked_scatter(m.tensor([True, False, True, False]), m.arange(5.0)),
    lambda m: _x(m).masked_scatter(m.tensor([True, False, True, False]), m.arange(12)),
    lambda m: _x(m).masked_scatter(m.tensor([1, 0, 1, 0], dtype=m.int32), m.arange(12.0)),
    lambda m: _x(m).masked_scatter(m.tensor([1, 0, 1, 0], dtype=m.uint8), m.arange(12.0)),
    lambda m: _x(m).masked_scatter(m.tensor([True, False, True]), m.arange(12.0)),
    lambda m: _x(m).masked_scatter(m.ones(3, dtype=m.int32), m.arange(12)),
    lambda m: _x(m, requires_grad=False).masked_scatter_(m.ones(3, dtype=m.int32), m.arange(12)),
    lambda m: _x(m, requires_grad=False).masked_scatter_(m.ones(3, dtype=m.bool), m.arange(12.0)),
    lambda m: _x(m, requires_grad=False).masked_scatter_(m.ones(2, 3, 4, dtype=m.bool), m.ones(24)),
    lambda m: _x(m, requires_grad=False).masked_scatter_(
        m.ones(2, 3, 4, dtype=m.uint8), m.ones(24)
    ),
    lambda m: _x(m, requires_grad=False).masked_scatter_(m.ones(4, dtype=m.uint8), m.arange(2.0)),
    lambda m: _x(m, requires_grad=False).masked_scatter_(m.ones(4, dtype=m.bool), m.arange(2.0)),
    lambda m: m.tensor(1.0).masked_scatter_(m.tensor([True, False]), m.tensor([5.0, 6.0])),
    lambda m: _x(m).masked_scatter([True], m.ones(3)),
    lambda m: m.masked_scatter(_x(m), m.tensor(True), 2.0),
    # put
    lambda m: _x(m).put(_i(m, [0, 12]), m.tensor([1.0, 2.0])),
    lambda m: _x(m).put(_i(m, [0, -13]), m.tensor([1.0, 2.0])),
    lambda m: _x(m).put(_i(m, [15, 0, 16]), m.tensor([1.0, 2, 3]), accumulate=True),
    lambda m: _x(m).put(_i(m, [[0, 5]], "int32"), m.tensor([1.0, 2, 3], dtype=m.float64)),
    lambda m: _x(m).put(_i(m, [[0, 5]]), m.tensor([1.0, 2, 3], dtype=m.float64)),
    lambda m: _x(m).put(_i(m, [[0, 15]]), m.tensor([1.0, 2, 3])),
    lambda m: m.zeros(0).put(_i(m, [0]), m.tensor([1.0])),
    lambda m: m.zeros(0).put(_i(m, []), m.tensor([1.0])),
    lambda m: m.zeros(4).put(_i(m, [0]), 2.0),
    lambda m: m.zeros(4).put(_i(m, [0]), m.ones(1), 1),
    lambda m: m.zeros(4).put_(_i(m, [0]), m.ones(1), None),
    lambda m: m.put(m.zeros(4), [0], m.ones(1)),
    lambda m: m.put(m.zeros(4), _i(m, [0]), m.ones(1), 1),
]


def test_errors():
    for fn in ERRORS:
        both(fn)


# --- in place ------------------------------------------------------------------------------------

IN_PLACE = {
    "index_add_": lambda m, x, s: x.index_add_(1, _i(m, [3, 0]), s, alpha=-2),
    "index_copy_": lambda m, x, s: x.index_copy_(1, _i(m, [3, 0]), s),
    "masked_scatter_": lambda m, x, s: x.masked_scatter_(m.tensor([True, False, False, True]), s),
    "put_": lambda m, x, s: x.put_(_i(m, [3, 0, 5, 6, 7, 11]), s.reshape(-1)),
    "put_accumulate": lambda m, x, s: x.put_(_i(m, [3, 3, 5, 6, 7, 11]), s.reshape(-1), True),
}


def _source(m, requires_grad=True):
    return m.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], requires_grad=requires_grad)


def _in_place(call, m):
    leaf = _x(m)
    s = _source(m)
    x = leaf * 1
    v = x._version
    out = call(m, x, s)
    result = [out is x, x._version - v, _names(x.grad_fn), x]
    (x * _weights(m, (3, 4))).sum().backward()
    return [*result, leaf.grad, s.grad]


def test_in_place_versions_nodes_and_gradients():
    for call in IN_PLACE.values():
        both(partial(_in_place, call))


def _on_leaf(call, m):
    return call(m, _x(m), _source(m, False))


def _on_view_of_leaf(call, m):
    return call(m, _x(m)[:, :], _source(m, False))


def _under_no_grad(call, m):
    x = _x(m)
    with m.no_grad():
        call(m, x, _source(m))
    return x, x._version


def _through_view(call, m):
    leaf = m.zeros(2, 3, 4, requires_grad=True)
    base = leaf * 1
    view = base[1]
    call(m, view, _source(m))
    (base * _weights(m, (2, 3, 4))).sum().backward()
    return _names(base.grad_fn), view.grad_fn.name(), base, leaf.grad


def _on_expanded(call, m):
    return call(m, m.zeros(1, 4).expand(3, 4), _source(m, False))


def test_in_place_rules():
    # a leaf that requires grad and a view of one refuse; no_grad allows it; through a view of a
    # non-leaf the base takes CopySlices; an expanded tensor refuses
    for call in IN_PLACE.values():
        for case in (_on_leaf, _on_view_of_leaf, _under_no_grad, _through_view, _on_expanded):
            both(partial(case, call))


def test_in_place_overlap_of_source_with_self():
    def index_add(m):
        x = m.arange(4.0)
        return x.index_add_(0, _i(m, [0, 1, 2, 3]), x)

    def index_copy(m):
        x = m.arange(4.0)
        return x.index_copy_(0, _i(m, [0, 1]), x[2:])

    def put(m):
        x = m.arange(4.0)
        return x.put_(_i(m, [0, 1]), x[1:3])

    def put_index(m):
        x = m.arange(4)
        return x.put_(x[:2], x[2:])

    def masked_scatter(m):  # not checked by PyTorch
        x = m.arange(4.0)
        return x.masked_scatter_(m.tensor([True, False, True, False]), x[1:3])

    for fn in (index_add, index_copy, put, put_index, masked_scatter):
        both(fn)


def test_integer_in_place_and_leaf_without_grad():
    def fn(m):
        x = m.zeros(3, 4, dtype=m.int64)
        x.index_add_(0, _i(m, [1, 1]), m.ones(2, 4, dtype=m.int64), alpha=3)
        x.index_copy_(1, _i(m, [2]), m.full((3, 1), 7))
        x.put_(_i(m, [0]), _i(m, [-5]), accumulate=True)
        x.masked_scatter_(m.tensor([True, False, False, False]), m.arange(3))
        return x, x._version

    both(fn)


def test_under_jit_matches_eager():
    def step(xa, sa, ia):
        x = leafgrad.Tensor._make(xa, leafgrad.float32, leafgrad.device("cpu"))
        x.requires_grad_()
        s = leafgrad.Tensor._make(sa, leafgrad.float32, leafgrad.device("cpu"))
        s.requires_grad_()
        i = leafgrad.Tensor._make(ia, leafgrad.int64, leafgrad.device("cpu"))
        mask = (x > 0).detach()
        out = (
            x.index_add(1, i, s)
            + x.index_copy(1, i, s * 2)
            + x.put(i, s[0], accumulate=True)
            + x.masked_scatter(mask, s.repeat(2, 2))
        )
        (out * out).sum().backward()
        return out._data, x.grad._data, s.grad._data

    xa = jnp.asarray(X, jnp.float32)
    sa = jnp.asarray([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], jnp.float32)
    ia = jnp.asarray([3, 1], jnp.int64)
    eager = step(xa, sa, ia)
    traced = jax.jit(step)(xa, sa, ia)
    for a, b in zip(eager, traced):
        np.testing.assert_allclose(np.asarray(b), np.asarray(a), rtol=1e-6)
