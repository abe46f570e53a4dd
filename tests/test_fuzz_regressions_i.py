"""Regressions found by the differential fuzzer in session 40 (seeds 113-118)."""

import pytest
from conftest import both


@pytest.mark.parametrize("ret", ["int", "self", "other", "other then none", "other then self"])
def test_post_accumulate_grad_hooks_pass_results_on(ret):
    """PyTorch's ``_call_hooks``: a post-accumulate-grad hook's result (a tensor other than its
    argument) is the next hook's argument, and once every hook has run such a result raises
    (seed 118: ``t.grad.mul_(2)`` returned the grad, whose ``.grad`` the next hook read)."""

    def run(m):
        x = m.ones((), requires_grad=True)
        seen = []

        def first(t):
            seen.append("x" if t is x else "other")
            return {"int": 3, "self": t}.get(ret, m.ones(()) if ret != "int" else None)

        def second(t):
            seen.append("x" if t is x else "other")
            return x if ret == "other then self" else None

        x.register_post_accumulate_grad_hook(first)
        x.register_post_accumulate_grad_hook(second)
        try:
            x.backward()
            err = None
        except (TypeError, RuntimeError) as e:
            err = (type(e).__name__, str(e))
        return seen, x.grad, err

    both(run)


def test_post_accumulate_grad_hooks_that_scale_the_grad():
    def run(m):
        x = m.ones((), requires_grad=True)
        x.register_post_accumulate_grad_hook(lambda t: t.grad.mul_(2))
        x.register_post_accumulate_grad_hook(lambda t: t.grad.mul_(3))
        x.backward()

    both(run)


@pytest.mark.parametrize("written", [0, 1])
@pytest.mark.parametrize("fn", ["std_mean", "var_mean", "aminmax"])
def test_saved_outputs_of_two_output_reductions(fn, written):
    """std_mean saves the std (``result0``), not the mean: writing the mean in place leaves
    the std's backward alone (seed 119); aminmax saves both, var_mean neither."""

    def run(m):
        x = m.tensor([1.0, 2.0, 4.0], requires_grad=True)
        r = getattr(m, fn)(x)
        r[written].add_(2.0)
        r[1 - written].backward()
        return x.grad

    both(run)


def test_std_mean_saved_tensor_hooks_pack_the_std_only():
    def run(m):
        x = m.tensor([1.0, 2.0, 4.0], requires_grad=True)
        log = []
        with m.autograd.graph.saved_tensors_hooks(lambda t: log.append(t.shape) or t, lambda t: t):
            s, mu = m.std_mean(x, 0, keepdim=True)
        (s + mu).sum().backward()
        return log, x.grad, s.grad_fn._saved_result0

    both(run)


SIBLINGS = {
    "cat x x": lambda m, x: m.cat([x, x]).sum(),
    "cat x x x": lambda m, x: m.cat([x, x, x]).sum(),
    "stack x x": lambda m, x: m.stack([x, x]).sum(),
    "cat x 2x": lambda m, x: m.cat([x, x * 2]).sum(),
    "cat 2x x": lambda m, x: m.cat([x * 2, x]).sum(),
    "cat h h": lambda m, x: (lambda h: m.cat([h, h]).sum())(x.exp()),
    "cat h h.exp": lambda m, x: (lambda h: m.cat([h, h.exp()]).sum() + h.sum())(x * 3),
    "stack h h mean": lambda m, x: (lambda h: m.stack([h, h], 1).mean())(x.sin()),
    "cat x x.double": lambda m, x: m.cat([x, x.double()]).sum(),
    # a cast slice of an expanded gradient is laid out as ``to`` lays out the view: stride 0
    # where that is dense (a size-1 dim), and summed into in place
    "cat x.double x.double x": lambda m, x: m.cat([x.double(), x.double(), x]).sum(),
    "cat 2x x.double": lambda m, x: m.cat([x * 2, x.double()]).sum(),
    "stack x.double x x.double": lambda m, x: m.stack([x.double(), x, x.double()]).sum(),
    "cat x.double 2x.double": lambda m, x: m.cat([x.double(), (x * 2).double()]).sum(),
    "cat x x weighted": lambda m, x: (
        m.cat([x, x]) * m.arange(2 * x.numel()).reshape(-1, *x.shape[1:])
    ).sum(),
    "cat of cat": lambda m, x: m.cat([m.cat([x, x]), x]).sum(),
}


@pytest.mark.parametrize("shape", [(1,), (2, 3)])
@pytest.mark.parametrize("case", list(SIBLINGS))
def test_sibling_views_are_not_summed_into(case, shape, engine):
    """CatBackward0's narrow and StackBackward0's unbind give views sharing the gradient's
    storage: PyTorch's InputBuffer does not sum into one in place while another lives (seed
    121: ``cat([x, x]).sum().backward()`` leaves ``x.grad`` at version 0)."""

    def run(m):
        x = m.ones(*shape, requires_grad=True)
        seen = []
        x.register_hook(lambda g: seen.append((g._version, g.stride())))
        SIBLINGS[case](m, x).backward()
        y = m.ones(*shape, requires_grad=True)
        (g,) = m.autograd.grad(SIBLINGS[case](m, y), y)
        return x.grad, x.grad._version, seen, g, g._version

    both(run)


@pytest.mark.parametrize("op", ["sin", "mul", "mm", "abs"])
def test_saved_input_detached_since_names_the_reading_node(op):
    """A ``_saved_*`` getter of a node whose input (an op's output when saved) was written and
    then ``detach_``-ed names that node: "output 0 of Sin" (seed 122)."""

    def run(m):
        x = m.ones(2, 2, requires_grad=True)
        a = x.exp()
        b = {"sin": a.sin, "mul": lambda: a * a, "mm": lambda: a @ a, "abs": a.abs}[op]()
        a.mul_(2)
        a.detach_()
        name = {"mul": "_saved_other", "mm": "_saved_mat2"}.get(op, "_saved_self")
        return getattr(b.grad_fn, name)

    both(run)


def test_saved_second_output_detached_since():
    """The output number is the saved tensor's when it was saved (var_mean's mean: 1)."""

    def run(m):
        x = m.tensor([1.0, 2.0, 4.0], requires_grad=True)
        _, mean = m.var_mean(x)
        b = mean.sin()
        mean.mul_(2)
        mean.detach_()
        return b.grad_fn._saved_self

    both(run)


FREXP_INPUTS = {
    "contiguous": lambda x: x,
    "T": lambda x: x.T,
    "T of (3, 1)": lambda x: x.reshape(6, 1)[:3].T,
    "strided": lambda x: x[:, ::2],
    "permuted": lambda x: x.reshape(1, 2, 3).permute(2, 0, 1),
    "expanded": lambda x: x[:1].expand(2, 3),
}


@pytest.mark.parametrize("layout", list(FREXP_INPUTS))
def test_frexp_results_are_laid_out_as_empty_like(layout):
    """frexp's results are ``empty_like(self)`` (preserve_format), not an iterator's: a
    transposed (3, 1) input gives strides (1, 1), as its own (seed 123)."""

    def run(m):
        mantissa, exponent = m.frexp(FREXP_INPUTS[layout](m.arange(6.0).reshape(2, 3)))
        return mantissa.stride(), exponent.stride(), mantissa, exponent

    both(run)


EMPTY_VIEWS = {
    "diagonal (2, 0)": lambda m, t: m.ones(2, 1, 3, dtype=t).diagonal(-1, 1, 2),
    "t of (3, 0)": lambda m, t: m.ones(3, 0, dtype=t).t(),
    "transposed (0, 2, 4)": lambda m, t: m.ones(4, 2, 0, dtype=t).transpose(0, 2),
    "sliced (0, 3)": lambda m, t: m.ones(4, 6, dtype=t)[4:, ::2],
}
EMPTY_CALLS = {
    "+ 2.0": lambda m, v: v + 2.0,
    "+ 2": lambda m, v: v + 2,
    "* itself": lambda m, v: v * v,
    "abs": lambda m, v: v.abs(),
    "to float32": lambda m, v: v.to(m.float32),
    "float()": lambda m, v: v.float(),
    "double()": lambda m, v: v.double(),
    "clone": lambda m, v: v.clone(),
    "empty_like": lambda m, v: m.empty_like(v),
    "exp": lambda m, v: v.exp(),
}


@pytest.mark.parametrize("dtype", ["int64", "float32"])
@pytest.mark.parametrize("view", list(EMPTY_VIEWS))
def test_empty_views_keep_their_strides_through_casts(view, dtype):
    """An empty tensor is non-overlapping and dense for PyTorch (its ``is_contiguous`` sets the
    flag): ``to(dtype)`` keeps an empty view's strides, and so does the cast TensorIterator makes
    of it, which then lays the result out (the (2, 0) diagonal of strides (3, 4) plus 2.0 gives
    (1, 2); seed 127)."""

    def run(m):
        v = EMPTY_VIEWS[view](m, getattr(m, dtype))
        return [(name, call(m, v).stride()) for name, call in EMPTY_CALLS.items()]

    both(run)


NON_DENSE_VIEWS = {
    "diagonal (2, 1) of strides (3, 4)": lambda m, t: m.ones(2, 1, 3, dtype=t).diagonal(0, -1, -2),
    "every other column": lambda m, t: m.ones(3, 6, dtype=t)[:, ::2],
    "every other row, transposed": lambda m, t: m.ones(6, 3, dtype=t)[::2].t(),
    "permuted and sliced": lambda m, t: m.ones(2, 4, 6, dtype=t).permute(2, 0, 1)[::2],
    "expanded": lambda m, t: m.ones(3, 1, dtype=t).expand(3, 4),
    "expanded, transposed": lambda m, t: m.ones(1, 3, dtype=t).expand(4, 3).t(),
    "channels_last, sliced": lambda m, t: m.ones(2, 4, 6, 6, dtype=t).to(
        memory_format=m.channels_last
    )[:, :, ::2],
    "channels_last, channels sliced": lambda m, t: m.ones(2, 4, 6, 6, dtype=t).to(
        memory_format=m.channels_last
    )[:, ::2],
}
CAST_CALLS = {
    "+ 2.0": lambda m, v: v + 2.0,
    "* 0.5": lambda m, v: v * 0.5,
    "+ float64 tensor": lambda m, v: v + m.ones(v.shape, dtype=m.float64),
    "float64 tensor +": lambda m, v: m.ones(v.shape, dtype=m.float64) + v,
    "exp": lambda m, v: v.exp(),
    "to float32": lambda m, v: v.to(m.float32),
    "empty_like": lambda m, v: m.empty_like(v),
}


@pytest.mark.parametrize("view", list(NON_DENSE_VIEWS))
def test_casts_of_non_dense_views_are_laid_out_as_to(view):
    """TensorIterator's cast of an int64 operand is ``to(common dtype)``: a view that is not
    dense gets dense strides in its dims' stride order, which then lay the result out (seed
    127: the (2, 1) diagonal of strides (3, 4) plus 2.0 gives (1, 2))."""

    def run(m):
        v = NON_DENSE_VIEWS[view](m, m.int64)
        return [(name, call(m, v).stride()) for name, call in CAST_CALLS.items()]

    both(run)


MASKED_GRADIENTS = {
    "clamp(a, a, b)": lambda m, a, b: a.clamp(a, b),
    "clamp(a, b, a)": lambda m, a, b: a.clamp(b, a),
    "clamp(b, a, a)": lambda m, a, b: b.clamp(a, a),
    "clamp(a, min=b)": lambda m, a, b: a.clamp(min=b),
    "maximum(a, b)": lambda m, a, b: m.maximum(a, b),
    "fmin(a, b)": lambda m, a, b: m.fmin(a, b),
    "where(a > b, a, b)": lambda m, a, b: m.where(a > b, a, b),
}


@pytest.mark.parametrize("shapes", [((), (1,)), ((), (3,)), ((2, 1), (3,)), ((3,), (3,))])
@pytest.mark.parametrize("wrt", ["a", "b", "ab"])
@pytest.mark.parametrize("name", list(MASKED_GRADIENTS))
def test_create_graph_gradients_through_masks_depend_on_no_input(name, wrt, shapes):
    """A gradient that reads its inputs only through a comparison's mask (clamp's gradient for
    ``max`` is ``where(self > max, grad, 0)``) does not depend on them: with create_graph=True
    and a gradient that requires no grad it is a leaf that requires no grad (seed 129: the
    recorded backward of ``clamp(a, a, b)`` with a 0-d ``a`` required grad)."""

    def run(m):
        a = m.full(shapes[0], 0.25, dtype=m.float64, requires_grad=True)
        b = m.tensor([0.25, -1.0, 2.0][: (shapes[1] or (1,))[0]], dtype=m.float64)
        b = b.reshape(shapes[1]).requires_grad_()
        inputs = [{"a": a, "b": b}[k] for k in wrt]
        out = MASKED_GRADIENTS[name](m, a, b)
        grads = m.autograd.grad(out.sum(), inputs, create_graph=True)
        return [(g, g.requires_grad, g.grad_fn is None) for g in grads]

    both(run)


@pytest.mark.parametrize(
    "values",
    [
        [0.0, -0.125, 0.0],
        [-0.0, -0.5, 0.0, 0.25],
        [0.0, 0.0],
        [1.0, -0.125, 1.0],
        [-2.0, 0.0, -2.0],
    ],
)
@pytest.mark.parametrize("reduction", ["max", "min", "median", "nanmedian"])
def test_even_spread_over_ties_at_zero(values, reduction):
    """Seed 131: the gradient of ``max()`` over ``[0, -0.125, 0]`` is spread over the two ties
    (0.5 each); the elements that are not ties were pushed to the value just below 0, a
    subnormal that XLA's CPU flushes to zero, so they tied too (1/3 each)."""

    def fn(m):
        x = m.tensor(values, requires_grad=True)
        getattr(x, reduction)().backward()
        return x.grad

    both(fn)


STALE_VIEW_CALLS = {
    "add": lambda m, v: v + m.ones(3, 2),
    "mul": lambda m, v: m.ones(3, 2) * v,
    "sub_scalar_shape": lambda m, v: v - m.ones(4),
    "maximum": lambda m, v: m.maximum(v, m.ones(3, 2)),
    "atan2": lambda m, v: m.atan2(v, m.ones(5)),
    "matches": lambda m, v: v + m.ones(2, 3),
}


@pytest.mark.parametrize("call", list(STALE_VIEW_CALLS))
def test_stale_no_grad_view_is_refused_before_the_shape_check(call):
    """Seed 132: PyTorch's autograd layer collects the operands' edges before the kernel checks
    the shapes, so a view made under no_grad whose base was then written with grad mode on
    raises its own error, not the broadcasting one."""

    def fn(m):
        b = m.ones(3, 2, requires_grad=True) * 1
        with m.no_grad():
            v = b.t()
        b.add_(1)
        return STALE_VIEW_CALLS[call](m, v)

    both(fn)


def test_float64_gradient_through_float32_arithmetic():
    """Seed 131: a float64 leaf summed to 0-d meets a float32 tensor in ``where``; its gradient
    comes back through float32 ops (sigmoid of -5.125 is one float32 ulp apart between XLA's
    and PyTorch's CPU kernels) and is cast up, so it is compared at float32's tolerance."""
    from fuzz_programs import check

    check(
        [
            ("new", "float32", 0, False, 178),
            ("new", "float64", 3, True, 334),
            ("new", "float32", 4, False, 0),
            ("unary", "asin", 0),
            ("where", 2, 1, 0),
            ("unary", "abs", 0),
            ("disc", "remainder", 0, 18, 2.0),
            ("inplace", "sigmoid_", 6, 0, 2.0),
            ("backward", 6, False, 1),
        ]
    )


def test_zero_tensor_gradients_are_compared():
    """Seed 136: PyTorch's gradient of ``sgn`` of a real tensor is a ZeroTensor, which its
    ``numpy()`` refuses without ``force``; the harness reads it as zeros."""
    from fuzz_programs import check

    check([("new", "float32", 0, True, 0), ("disc", "sgn", 0, 0, 2.0), ("backward", 1, False, 0)])


# Note [Stale views before the kernel's checks] in leafgrad/_arg_check.py: a differentiable op
# collects its edges before its kernel checks; composites check first; in-place ops check the
# written tensor (check_inplace) first.
STALE_VIEW_FRONTENDS = {
    "view": lambda m, v: v.view(5),
    "sum_dim": lambda m, v: v.sum(4),
    "reshape": lambda m, v: v.reshape(7),
    "expand": lambda m, v: v.expand(3, 3),
    "permute": lambda m, v: v.permute(1, 0),
    "transpose": lambda m, v: v.transpose(0, 3),
    "unsqueeze": lambda m, v: v.unsqueeze(5),
    "select": lambda m, v: v.select(0, 9),
    "squeeze": lambda m, v: v.squeeze(3),
    "mean": lambda m, v: v.mean(3),
    "softmax": lambda m, v: v.softmax(2),
    "cat": lambda m, v: m.cat([v, m.ones(2, 2)]),
    "stack": lambda m, v: m.stack([v, m.ones(3)]),
    "split": lambda m, v: v.split(1, 4),
    "unbind": lambda m, v: v.unbind(3),
    "repeat": lambda m, v: v.repeat(()),
    "view_as": lambda m, v: v.view_as(m.ones(3)),
    "matmul": lambda m, v: v @ m.ones(3),
    "mm": lambda m, v: m.mm(v, m.ones(2)),
    "index_select": lambda m, v: v.index_select(0, m.tensor([5])),
    "max_dim": lambda m, v: v.max(3),
    "norm": lambda m, v: v.norm(dim=3),
    "topk": lambda m, v: v.topk(5),
    "masked_fill": lambda m, v: v.masked_fill(m.ones(3, dtype=m.bool), 0.0),
    "scatter": lambda m, v: v.scatter(0, m.tensor([5]), 1.0),
    "take": lambda m, v: v.take(m.tensor([5])),
    "clone_channels_last": lambda m, v: v.clone(memory_format=m.channels_last),
    # PyTorch checks these before its autograd layer
    "getitem": lambda m, v: v[5],
    "narrow": lambda m, v: v.narrow(0, 0, 9),
    "flatten": lambda m, v: v.flatten(2),
    "unflatten": lambda m, v: v.unflatten(0, (3, 3)),
    "chunk": lambda m, v: v.chunk(2, 3),
    "movedim": lambda m, v: v.movedim(0, 4),
    "diff": lambda m, v: v.diff(dim=3),
    "einsum": lambda m, v: m.einsum("ij", v),
    "argmax": lambda m, v: v.argmax(3),
    "count_nonzero": lambda m, v: v.count_nonzero(3),
    "new_zeros": lambda m, v: v.new_zeros(-1),
    "size": lambda m, v: v.size(3),
    # in place: the written view's own check
    "fill_": lambda m, v: v.fill_(m.ones(2)),
    "add_": lambda m, v: v.add_(m.ones(3)),
}


@pytest.mark.parametrize("call", sorted(STALE_VIEW_FRONTENDS))
def test_stale_no_grad_view_before_frontend_checks(call):
    """Seed 132: the frontends' own argument checks (dims, sizes, indices) come after the
    autograd layer's edge collection where PyTorch's do."""

    def fn(m):
        x = m.randn(4, requires_grad=True)
        y = x.clone()
        with m.no_grad():
            v = y[:2]
        y.mul_(2)
        return STALE_VIEW_FRONTENDS[call](m, v)

    both(fn)


LEAF_INPLACE_CALLS = {
    "fill_tensor": lambda m, x: x.fill_(m.ones(2)),
    "add_shape": lambda m, x: x.add_(m.ones(2)),
    # composites that check their arguments before the in-place op they call (seed 138)
    "fill_diagonal_1d": lambda m, x: x.fill_diagonal_(2.0),
    "fill_diagonal_0d": lambda m, x: x.sum().fill_diagonal_(2.0),
    "float_power_": lambda m, x: x.float_power_(2),
}


@pytest.mark.parametrize("call", sorted(LEAF_INPLACE_CALLS))
def test_leaf_inplace_error_before_frontend_checks(call):
    def fn(m):
        x = m.ones(3, requires_grad=True)
        return LEAF_INPLACE_CALLS[call](m, x)

    both(fn)
