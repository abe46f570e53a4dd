"""Regressions next to the fuzzer's and the tutorial probes' findings (group D): the checks PyTorch
makes on what a node's pre-hook and post-hook return, tensor hooks registered on a view whose
grad_fn is stale, in-place ops on leaves under ``inference_mode`` with ``enable_grad`` inside,
and ``retain_grad()`` on a tensor whose grad_fn an in-place write replaced."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import both

# --- node hooks: PyTorch's check_result (python_hook.cpp) --------------------------------------

_NODE_HOOK_RESULTS = {
    # x * 3: MulBackward0 with two edges, the second None (the wrapped number)
    "post_none_replaced": ("post", "scalar", lambda m, gi, go: (gi[0], gi[0])),
    "post_too_few": ("post", "tensor", lambda m, gi, go: (gi[0],)),
    "post_list": ("post", "scalar", lambda m, gi, go: [gi[0] * 2]),
    "post_int": ("post", "scalar", lambda m, gi, go: 5),
    "post_empty": ("post", "scalar", lambda m, gi, go: ()),
    "post_wrong_size": ("post", "tensor", lambda m, gi, go: (m.ones(3), gi[1])),
    "post_wrong_dtype": ("post", "tensor", lambda m, gi, go: (gi[0].double(), gi[1])),
    "post_not_tensor": ("post", "tensor", lambda m, gi, go: (gi[0], 3.0)),
    "post_ok": ("post", "tensor", lambda m, gi, go: (gi[0] * 10, None)),
    "pre_too_many": ("pre", "scalar", lambda m, go: (go[0], go[0])),
    "pre_empty": ("pre", "scalar", lambda m, go: ()),
    "pre_int": ("pre", "scalar", lambda m, go: 3),
    "pre_list": ("pre", "scalar", lambda m, go: [go[0]]),
    "pre_wrong_size": ("pre", "scalar", lambda m, go: (m.ones(3),)),
    "pre_none": ("pre", "scalar", lambda m, go: (None,)),
    "pre_ok": ("pre", "tensor", lambda m, go: (go[0] * 100,)),
}


@pytest.mark.parametrize("name", sorted(_NODE_HOOK_RESULTS))
def test_node_hook_result_checked(name, engine):
    kind, other, hook = _NODE_HOOK_RESULTS[name]

    def fn(m):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        w = m.tensor([3.0, 4.0], requires_grad=True)
        y = x * 3 if other == "scalar" else x * w
        if kind == "post":
            y.grad_fn.register_hook(lambda gi, go: hook(m, gi, go))
        else:
            y.grad_fn.register_prehook(lambda go: hook(m, go))
        y.sum().backward()
        return x.grad, w.grad

    both(fn)


def test_node_hook_name_in_count_error(engine):
    def fn(m):
        def my_hook(gi, go):
            return (gi[0],)

        x = m.tensor([1.0, 2.0], requires_grad=True)
        y = x * m.tensor([3.0, 4.0], requires_grad=True)
        y.grad_fn.register_hook(my_hook)
        y.sum().backward()

    both(fn)


def test_custom_function_node_hook_result_checked(engine):
    def fn(m):
        class Twice(m.autograd.Function):
            @staticmethod
            def forward(ctx, a, b):
                return a * 2 + b

            @staticmethod
            def backward(ctx, g):
                return g * 2, g

        a = m.tensor([1.0, 2.0], requires_grad=True)
        b = m.tensor([1.0, 2.0], requires_grad=True)
        y = Twice.apply(a, b)
        y.grad_fn.register_hook(lambda gi, go: (gi[0],))
        y.sum().backward()

    both(fn)


# --- tensor hooks on a view whose grad_fn is stale ---------------------------------------------


def test_view_hook_registered_before_regeneration(engine):
    """PyTorch's Python ``register_hook`` adds a second hook to the dict already registered on
    the view's old grad_fn (without regenerating it); the regeneration then drops the dict.
    (With no hook before the base's write, PyTorch 2.13 loses the first hook and later crashes
    in ``register_hook``: not tested.)"""

    def fn(m):
        log = []
        x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x * 1
        v = y[:2]
        v.register_hook(lambda g: log.append(("old", g.tolist())))
        y.mul_(2)
        v.register_hook(lambda g: log.append(("new", g.tolist())))
        (v * v).sum().backward()
        v.register_hook(lambda g: log.append(("after", g.tolist())))
        return log, x.grad

    both(fn)


def test_view_hooks_across_view_inplace(engine):
    def fn(m):
        log = []
        x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x * 1
        v = y[:2]
        v.register_hook(lambda g: log.append(("v_old", g.tolist())))
        y.register_hook(lambda g: log.append(("y_old", g.tolist())))
        v.mul_(2)
        v.register_hook(lambda g: log.append(("v_new", g.tolist())))
        y.register_hook(lambda g: log.append(("y_new", g.tolist())))
        (y * y).sum().backward()
        return log, x.grad

    both(fn)


# --- in-place ops in inference_mode with enable_grad inside ------------------------------------


def _inference_enable_grad(m):
    class Both:
        def __enter__(self):
            self.a, self.b = m.inference_mode(), m.enable_grad()
            self.a.__enter__()
            self.b.__enter__()

        def __exit__(self, *exc):
            self.b.__exit__(*exc)
            self.a.__exit__(*exc)

    return Both()


_INFERENCE_INPLACE = {
    "F_relu_inplace": lambda m, x: m.nn.functional.relu(x, inplace=True),
    "relu_": lambda m, x: x.relu_(),
    "mul_": lambda m, x: x.mul_(2),
    "copy_": lambda m, x: x.copy_(m.zeros(3)),
    "zero_": lambda m, x: x.zero_(),
    "setitem": lambda m, x: x.__setitem__(0, 5.0),
    "clamp_": lambda m, x: x.clamp_(0, 0.5),
    "unsqueeze_": lambda m, x: x.unsqueeze_(0),
    "fill_diagonal_": lambda m, x: x.fill_diagonal_(3.0),
}


@pytest.mark.parametrize("name", sorted(_INFERENCE_INPLACE))
def test_leaf_inplace_inference_enable_grad(name):
    """Fuzzer: ``[new leaf requiring grad, inference_mode[enable_grad[F.relu(x, inplace=True)]]]``:
    inference mode leaves out the autograd kernels whatever the grad mode."""
    op = _INFERENCE_INPLACE[name]

    def fn(m):
        x = m.tensor([[1.0, -2.0, 3.0], [0.5, -1.0, 2.0]], requires_grad=True)
        with _inference_enable_grad(m):
            op(m, x)
        return x, x._version, x.grad_fn, x.is_leaf

    both(fn)


# --- retain_grad() moves with the grad_fn -------------------------------------------------------


def test_retain_grad_moves_on_take_history(engine):
    def fn(m):
        x = m.tensor([[1.0, 2.0, 3.0]], requires_grad=True)
        y = x * 2
        y.retain_grad()
        y.mul_(3)
        y.unsqueeze_(0)  # (``t_()`` then ``mul_`` trips an internal assert in PyTorch 2.13)
        (y * y).sum().backward()
        return y.grad, x.grad, y.retains_grad

    both(fn)


_RETAIN_VIEW = ["view_inplace", "base_then_view_inplace", "view_then_base_inplace", "mark_dirty"]


@pytest.mark.parametrize("case", _RETAIN_VIEW)
def test_retain_grad_moves_with_view_grad_fn(case, engine):
    def fn(m):
        x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x * 2
        v = y[1:]
        v.retain_grad()
        y.retain_grad()
        if case == "view_inplace":
            v.mul_(3)
        elif case == "base_then_view_inplace":
            y.mul_(3)
            v.mul_(2)
        elif case == "view_then_base_inplace":
            y.mul_(3)
        else:

            class Dirty(m.autograd.Function):
                @staticmethod
                def forward(ctx, t):
                    t.mul_(2)
                    ctx.mark_dirty(t)
                    return t

                @staticmethod
                def backward(ctx, g):
                    return g * 2

            Dirty.apply(v)
        (v * v).sum().backward(retain_graph=True)
        (y * y).sum().backward()
        return v.grad, y.grad, x.grad, type(v.grad_fn).__name__, type(y.grad_fn).__name__

    both(fn)


# --- edges the backward does not need (Note [Needed edges] in graph.py) -------------------------


def test_post_hook_sees_none_for_unneeded_edges(engine):
    def fn(m):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        y = m.tensor([1.0, 2.0], requires_grad=True)
        log = []
        z = x * y
        z.grad_fn.register_hook(lambda gi, go: log.append([g is None for g in gi]))
        z.sum().backward(inputs=[x])
        w = x.pow(y)
        w.grad_fn.register_hook(lambda gi, go: log.append([g is None for g in gi]))
        (gy,) = m.autograd.grad(w.sum(), y)
        b = x * 1
        b[:1].mul_(y)
        b.grad_fn.register_hook(lambda gi, go: log.append([g is None for g in gi]))
        b.sum().backward(inputs=[x])
        return log, x.grad, y.grad, gy

    both(fn)


def test_custom_function_post_hook_keeps_unneeded_edges(engine):
    def fn(m):
        class Mul(m.autograd.Function):
            @staticmethod
            def forward(ctx, a, b):
                return a * b

            @staticmethod
            def backward(ctx, g):
                return g * 2, g * 3

        x = m.tensor([1.0, 2.0], requires_grad=True)
        y = m.tensor([1.0, 2.0], requires_grad=True)
        log = []
        z = Mul.apply(x, y)
        z.grad_fn.register_hook(lambda gi, go: log.append([g is None for g in gi]))
        z.sum().backward(inputs=[x])
        return log, x.grad, y.grad

    both(fn)


@pytest.mark.parametrize("how", ["inputs", "grad", "grad_create_graph", "all"])
def test_anomaly_skips_unneeded_edges(how, engine):
    """The gradient for the exponent of a negative base is nan: anomaly mode raises only when
    the backward needs it."""

    def fn(m):
        x = m.tensor([-1.0, 2.0], requires_grad=True)
        y = m.tensor([2.0, 2.0], requires_grad=True)
        with m.autograd.detect_anomaly():
            out = x.pow(y).sum()
            if how == "inputs":
                out.backward(inputs=[x])
                return x.grad, y.grad
            if how == "all":
                out.backward()
                return x.grad
            return m.autograd.grad(out, x, create_graph=how == "grad_create_graph")

    both(fn)


_RETAIN_VIEW_MORE = {
    "view_written_under_no_grad": lambda m, x, y, v: _no_grad_mul(m, v),
    "view_copy_": lambda m, x, y, v: v.copy_(m.tensor([7.0, 8.0])),
    "view_of_view_written": lambda m, x, y, v: v[:1].mul_(5),
    "view_then_base_written": lambda m, x, y, v: (v.add_(1), y.add_(1)),
}


def _no_grad_mul(m, t):
    with m.no_grad():
        t.mul_(2)


@pytest.mark.parametrize("case", sorted(_RETAIN_VIEW_MORE))
def test_retain_grad_on_view_after_writes(case):
    def fn(m):
        x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x * 2
        v = y[:2]
        v.retain_grad()
        y.retain_grad()
        _RETAIN_VIEW_MORE[case](m, x, y, v)
        (v * y[:2]).sum().backward()
        return v.grad, y.grad, x.grad, v.retains_grad

    both(fn)


# --- double backward through a 0-d permute (formulas_shape.py) ---------------------------------


@pytest.mark.parametrize("view", ["T", "permute", "t"], ids=lambda v: v)
def test_create_graph_through_0d_permute(view):
    """Fuzzer: ``x.T`` of a 0-d tensor then ``autograd.grad(..., create_graph=True)`` ran
    ``grad.permute()`` with no dims."""

    def fn(m):
        x = m.tensor(2.0, requires_grad=True)
        y = {"T": lambda: x.T, "permute": lambda: x.permute(()), "t": lambda: x.t()}[view]()
        (g,) = m.autograd.grad(y * x, x, create_graph=True)
        (g2,) = m.autograd.grad(g, x)
        return g, g2

    both(fn)


# --- var_mean / std_mean: the var/std term of an undefined gradient ------------------------------


@pytest.mark.parametrize("op", ["var_mean", "std_mean"])
def test_var_mean_backward_through_mean_only(op):
    """Fuzzer: ``var_mean`` of one element with correction 1 (var is nan), ``backward`` of the
    mean: PyTorch skips the undefined var gradient, leafgrad's 0 * nan gave nan."""

    def fn(m):
        x = m.tensor([2.0], requires_grad=True)
        v, mu = getattr(m, op)(x, 0, correction=1)
        mu.backward()
        return x.grad

    both(fn)


# --- roll of an inference tensor outside inference mode ---------------------------------------


@pytest.mark.parametrize("shape", [(), (3,), (2, 2)], ids=str)
@pytest.mark.parametrize("inference", [False, True])
def test_flat_roll_of_an_inference_tensor(shape, inference):
    """Fuzzer: ``x.roll(k)`` without dims of an inference tensor, outside inference mode, is a
    view of the flat roll (PyTorch's kernel views its result back, and without the autograd
    layer that view is seen); of other tensors it is not a view."""

    def fn(m):
        if inference:
            with m.inference_mode():
                x = m.arange(float(np.prod(shape) or 1)).reshape(shape)
        else:
            x = m.arange(float(np.prod(shape) or 1)).reshape(shape)
        y = x.roll(1)
        base = y._base
        return y, y._is_view(), y.is_inference(), None if base is None else tuple(base.shape)

    both(fn)


# --- clamp of bool tensors: refused only where the kernel computes in bool ---------------------

BOOL_CLAMPS = {
    "clamp_max_tensor": lambda m, a, bb, bi: m.clamp_max(a, bb),
    "clamp_min_only_tensor": lambda m, a, bb, bi: m.clamp(a, min=bb),
    "clamp_0d_max_only": lambda m, a, bb, bi: a.clamp(max=m.tensor(True)),
    "clamp_both_tensors": lambda m, a, bb, bi: m.clamp(a, bb, bb),
    "clamp_promoted_tensors": lambda m, a, bb, bi: m.clamp(a, bb, bi),
    "clamp_bool_scalar_max": lambda m, a, bb, bi: m.clamp(a, max=True),
    "clamp_bool_scalars": lambda m, a, bb, bi: m.clip(a, False, True),
    "clamp_int_scalar": lambda m, a, bb, bi: m.clamp_max(a, 0),
    "clamp_min_bool_scalar_": lambda m, a, bb, bi: a.clone().clamp_min_(True),
    "clamp_tensors_": lambda m, a, bb, bi: a.clone().clamp_(bb, bb),
    "clamp_int_tensor_bool_scalars": lambda m, a, bb, bi: m.clamp(bi, True, True),
    "clamp_0d_and_scalar": lambda m, a, bb, bi: m.clamp(a, m.tensor(True), True),
}


@pytest.mark.parametrize("case", sorted(BOOL_CLAMPS))
def test_bool_clamps(case):
    """Fuzzer: ``clamp_max(bool, bool tensor)`` computes (PyTorch's ``minimum``); the kernels
    refuse bool only where they compute in bool (both bounds tensors, or bool numbers)."""

    def fn(m):
        a, bb, bi = m.tensor([True, False]), m.tensor([False, True]), m.tensor([0, 1])
        return BOOL_CLAMPS[case](m, a, bb, bi)

    both(fn)


# --- a node whose inputs have no edge computes nothing, and so raises nothing ------------------

NO_EDGE_OPS = {
    "unique": lambda v: v.unique(),
    "unique_dim": lambda v: v.unique(dim=0),
    "unique_consecutive": lambda v: v.unique_consecutive(),
    "mul": lambda v: v * 2,
    "sort": lambda v: v.sort()[0],
}


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("op", sorted(NO_EDGE_OPS))
def test_backward_through_a_node_without_edges(op, create_graph):
    """Fuzzer: ``unique`` of a view made under ``no_grad`` of a leaf (it requires grad but has no
    edge): PyTorch's ``Unique2Backward0`` raises its not-implemented error only for an edge it
    must compute (``should_compute_output``); there is none, so backward does nothing."""

    def fn(m):
        x = m.tensor([3.0, 1.0, 3.0, 2.0], requires_grad=True)
        with m.no_grad():
            v = x[:]
        y = NO_EDGE_OPS[op](v)
        y.sum().backward(create_graph=create_graph)
        return type(y.grad_fn).__name__, x.grad

    both(fn, check_warnings=False)


# --- gradients handed on unchanged along dims of size 1 ----------------------------------------

SIZE_ONE = {
    "cumsum0": lambda x: x.cumsum(0),
    "cumsum1": lambda x: x.cumsum(1),
    "cumprod0": lambda x: x.cumprod(0),
    "cumprod1": lambda x: x.cumprod(1),
    "logcumsumexp0": lambda x: x.logcumsumexp(0),
    "logcumsumexp1": lambda x: x.logcumsumexp(1),
    "repeat_ones": lambda x: x.repeat(1, 1),
    "repeat_more": lambda x: x.repeat(1, 1, 1),
}


@pytest.mark.parametrize("shape", [(1, 1), (1, 3), (3, 1)], ids=str)
@pytest.mark.parametrize("op", sorted(SIZE_ONE))
def test_gradient_strides_along_size_one_dims(op, shape):
    """Fuzzer: PyTorch's ``cumsum``/``cumprod`` (and ``repeat`` by ones) backwards return the
    incoming gradient itself along a dim of size 1, so the expanded gradient of a ``sum`` stays
    expanded (strides 0); ``logcumsumexp``'s computes a new one."""

    def fn(m):
        x = m.ones(shape, requires_grad=True)
        (g,) = m.autograd.grad(SIZE_ONE[op](x).sum(), x)
        return g, g.stride(), g._version, g.clone().stride()

    both(fn)


# --- copy_ from a tensor's own memory, and from numbers ------------------------------------------

COPIES = {
    "setitem_base_into_broadcast": lambda m, a, x: x.__setitem__(slice(0, None, 1), a),
    "copy_same_layout": lambda m, a, x: x.copy_(a[None].expand(2, 3)),
    "copy_base_refused": lambda m, a, x: x.copy_(a),
    "copy_clone_refused": lambda m, a, x: x.copy_(a.clone()),
    "copy_float": lambda m, a, x: a.copy_(4.0),
    "copy_int": lambda m, a, x: a.copy_(4),
    "copy_bool": lambda m, a, x: a.copy_(True),
    "copy_complex": lambda m, a, x: a.copy_(2 + 1j),
    "copy_list_refused": lambda m, a, x: a.copy_([1.0, 2.0, 3.0]),
    "copy_none_refused": lambda m, a, x: a.copy_(None),
}


@pytest.mark.parametrize("case", sorted(COPIES))
def test_copy_from_own_memory_and_numbers(case):
    """Fuzzer: ``x[0:] = base`` where ``x`` is ``base`` broadcast: PyTorch's copy kernel returns
    at once for a source that is the destination's own memory in its layout (before its
    overlap check); ``copy_`` takes Python numbers."""

    def fn(m):
        a = m.tensor([1.0, 2.0, 3.0])
        x = a.broadcast_to((2, 3))
        COPIES[case](m, a, x)
        return a, x, a._version

    both(fn)


# --- results computed on the host in inference mode are inference tensors -----------------------

HOST_RESULTS = {
    "unique": lambda x: x.unique(return_inverse=True, return_counts=True),
    "unique_dim": lambda x: x.unique(dim=0, return_inverse=True, return_counts=True),
    "unique_consecutive": lambda x: x.unique_consecutive(return_inverse=True, return_counts=True),
    "nonzero": lambda x: (x.nonzero(),),
    "nonzero_tuple": lambda x: x.nonzero(as_tuple=True),
    "argwhere": lambda x: (x.argwhere(),),
    "bincount_empty": lambda x: (x[:0].long().bincount(minlength=2),),
}


@pytest.mark.parametrize("case", sorted(HOST_RESULTS))
def test_host_results_in_inference_mode(case):
    """Fuzzer: ``unique``'s inverse and counts (and ``nonzero``...) made in inference mode were
    ordinary tensors."""

    def fn(m):
        x = m.tensor([3.0, 1.0, 3.0, 0.0])
        with m.inference_mode():
            out = HOST_RESULTS[case](x)
        return [(t, t.is_inference()) for t in out]

    both(fn)


# --- a saved indices output names the grad_fn it gained from an in-place write -----------------


@pytest.mark.parametrize("op", ["cummax", "cummin", "max", "sort"])
def test_saved_indices_written_through_setitem_name_copy_slices(op):
    """Fuzzer: PyTorch holds a saved output without a grad_fn (an indices tensor) itself, so its
    version error names the CopySlices a later ``indices[0] = value_requiring_grad`` gave it."""

    def fn(m):
        x = m.tensor([[1.0, 3.0, 2.0], [0.5, -1.0, 4.0]], requires_grad=True)
        values, indices = getattr(x, op)(1)
        w = m.tensor(2.0, requires_grad=True)
        indices[0] = w
        return values, indices, indices.grad_fn.name(), values.sum().backward()

    both(fn)


# --- sub_/neg_ on an expanded bool tensor: the bool error comes before the overlap error ---------

EXPANDED_BOOL_WRITES = {
    "sub_tensor": lambda m, b: b.sub_(b),
    "sub_bool": lambda m, b: b.sub_(True),
    "sub_float": lambda m, b: b.sub_(2.0),
    "sub_float_tensor": lambda m, b: b.sub_(m.ones(3)),
    "subtract": lambda m, b: b.subtract_(b),
    "neg": lambda m, b: b.neg_(),
    "negative": lambda m, b: b.negative_(),
    "add": lambda m, b: b.add_(b),
    "float_sub_bool": lambda m, b: m.ones(3).expand(2, 3).sub_(b),
}


@pytest.mark.parametrize("case", sorted(EXPANDED_BOOL_WRITES))
def test_bool_errors_before_overlap(case):
    """Fuzzer: ``sub_`` of an expanded bool tensor raised the overlap error; PyTorch's meta
    function raises its bool error before its iterator refuses the overlapping output."""

    def fn(m):
        b = (m.tensor([1.0]) == 1.0).expand(3)
        EXPANDED_BOOL_WRITES[case](m, b)

    both(fn)


# --- clone (preserve_format) of a tensor that is not dense: strides in its dims' order -----------

CLONE_LAYOUTS = [
    ((2, 3, 2), (0, 1, 3)),  # an expanded transpose: stride-0 dims stay outermost
    ((2, 3, 2), (1, 1, 3)),  # equal strides
    ((4, 3, 2), (0, 1, 3)),
    ((3, 1, 2), (2, 6, 1)),
    ((2, 2), (0, 0)),
    ((3, 4), (1, 3)),
]


@pytest.mark.parametrize("shape,strides", CLONE_LAYOUTS, ids=str)
def test_clone_of_a_non_dense_tensor_infers_dense_strides(shape, strides):
    """Fuzzer: ``x.expand(...).mT.clone()`` was contiguous; PyTorch's ``empty_like`` gives a
    non-dense input dense strides that keep its dims' order (``infer_dense_strides``)."""

    def fn(m):
        t = m.arange(100.0).as_strided(shape, strides)
        a, b = t.clone(), t.clone(memory_format=m.preserve_format)
        return a, b, a.stride(), b.stride(), a.is_contiguous()

    both(fn)


@pytest.mark.parametrize("sizes", [[1, -1, 3], [4, -1], [-1, 4], [2, 2], [3, 0]])
def test_split_sizes_negative_before_sum(sizes):
    """Fuzzer: a negative split size raised the sum error; PyTorch checks each entry first."""
    both(lambda m: m.ones(3).split(sizes))


EMPTY_LAYOUTS = [((0, 1), (1, 1)), ((0, 2), (1, 1)), ((0, 1), (5, 1)), ((3, 0, 2), (1, 1, 3))]


@pytest.mark.parametrize("shape,strides", EMPTY_LAYOUTS, ids=str)
def test_empty_results_with_a_number_and_empty_clones(shape, strides):
    """Fuzzer: ``piece + 2.0`` of an empty contiguous piece was contiguous; PyTorch's wrapped
    number keeps TensorIterator off its fast path, whose empty strides differ. An empty tensor
    is non-overlapping and dense, so its clone keeps its strides."""

    def fn(m):
        t = m.empty_strided(shape, strides)
        outs = [t + 2.0, t * 3, 2 - t, m.where(t > 0, t, 1.0), t.clone(), t.abs()]
        return [o.stride() for o in outs]

    both(fn)


ALPHA_AFTER_BROADCAST = {
    "add": lambda m, a, b: m.add(a, b, alpha=0.5),
    "sub": lambda m, a, b: m.sub(a, b, alpha=0.5),
    "rsub": lambda m, a, b: m.rsub(a, b, alpha=0.5),
    "add_bool_alpha": lambda m, a, b: m.add(a, b, alpha=True),
    "add_": lambda m, a, b: a.add_(b, alpha=0.5),
}


@pytest.mark.parametrize("case", sorted(ALPHA_AFTER_BROADCAST))
def test_alpha_checked_after_broadcasting(case):
    """Fuzzer: ``rsub(int, int, alpha=0.5)`` of shapes that do not broadcast raised the alpha
    error; PyTorch's meta function builds the iterator (the broadcast error) first."""

    def fn(m):
        ALPHA_AFTER_BROADCAST[case](m, m.ones(2, 3, dtype=m.int64), m.ones(2, 2, dtype=m.int64))

    both(fn)
