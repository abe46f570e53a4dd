"""Regressions found by fuzz seeds 141-146 and the probes they led to, against torch 2.13."""

from __future__ import annotations

import pytest
from conftest import both, lg

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


def _resized(m, make, *sizes, **kw):
    x = make(m)
    out = x.resize_(*sizes, **kw)
    return out is x, x, tuple(x.stride()), x._version


RESIZE = {
    "shrink": lambda m: _resized(m, lambda m: m.arange(6.0), 2, 2),
    "same shape": lambda m: _resized(m, lambda m: m.arange(6.0), 6),
    "list": lambda m: _resized(m, lambda m: m.arange(3.0), [1, 3]),
    "empty dim": lambda m: _resized(m, lambda m: m.ones(3), 2, 0, 3),
    "channels_last": lambda m: _resized(
        m, lambda m: m.arange(16.0), 1, 2, 2, 4, memory_format=m.channels_last
    ),
    "channels_last rank": lambda m: _resized(
        m, lambda m: m.ones(3), 2, 2, memory_format=m.channels_last
    ),
    "preserve_format": lambda m: _resized(
        m, lambda m: m.ones(3), 2, memory_format=m.preserve_format
    ),
    "permuted root": lambda m: _resized(m, lambda m: m.arange(6.0).reshape(2, 3).t().clone(), 6),
    "negative": lambda m: _resized(m, lambda m: m.ones(3), -1),
    "float size": lambda m: _resized(m, lambda m: m.ones(3, requires_grad=True), 1.5),
    "no size": lambda m: _resized(m, lambda m: m.ones(3)),
    "requires grad": lambda m: _resized(m, lambda m: m.ones(3, requires_grad=True), 2),
    "non-leaf": lambda m: _resized(m, lambda m: m.ones(3, requires_grad=True) * 2, 2),
    "resize_as_": lambda m: m.arange(4.0).resize_as_(m.ones(2, 2)),
    "resize_as_ int": lambda m: m.arange(4.0).resize_as_(1),
}


def _resized_view(m, start, *sizes, **kw):
    base = m.arange(8.0)
    view = base[start:]
    out = view.resize_(*sizes, **kw)
    view.mul_(10)  # the view still shares the base's memory
    return out is view, view, base, tuple(view.stride()), view.storage_offset(), view._version


def _resized_base(m, *sizes):
    base = m.arange(6.0)
    view = base[:2]
    base.resize_(*sizes)
    base.add_(1)
    return base, view, base._version, view._version, tuple(base.stride())


RESIZE_SHARED = {
    "view smaller": lambda m: _resized_view(m, 2, 3),
    "view larger within the storage": lambda m: _resized_view(m, 2, 2, 3),
    "view to the storage's end": lambda m: _resized_view(m, 3, 5),
    "view empty": lambda m: _resized_view(m, 3, 0, 4),
    "view channels_last": lambda m: _resized_view(m, 1, 1, 1, 2, 3, memory_format=m.channels_last),
    "transposed": lambda m: _resized(m, lambda m: m.ones(3, 2).t(), 2, 2),
    "base with a view": lambda m: _resized_base(m, 2, 2),
    "base with a view, same size": lambda m: _resized_base(m, 3, 2),
}


@pytest.mark.parametrize("case", list(RESIZE_SHARED))
def test_resize_of_shared_memory(case):
    """``resize_`` of a view, or of a base with views, within the storage: the tensor is laid out
    afresh at its offset over the same memory (leafgrad refused every shared tensor)."""
    both(RESIZE_SHARED[case])


def test_resize_beyond_shared_storage_is_refused():
    """Growing a storage that views share: PyTorch reallocates it; leafgrad says it cannot."""
    base = lg.arange(6.0)
    with pytest.raises(NotImplementedError, match="beyond the storage"):
        base[2:].resize_(5)
    assert base.shape == (6,) and base._version == 0


@pytest.mark.parametrize("case", list(RESIZE))
def test_resize_(case):
    """``resize_`` (leafgrad had none): a new shape over the tensor's memory, in memory order;
    PyTorch's refusals (sizes, tensors that require grad, memory formats)."""
    both(RESIZE[case])


def test_resize_gives_back_the_memory_it_gave_up():
    def run(m):
        x = m.arange(6.0)
        x.resize_(2)
        x.add_(1)
        x.resize_(2, 2)
        kept = x.clone()
        x.resize_(3, 2)
        return kept, x, x._version

    both(run)


def test_volatile_is_gone_with_pytorchs_warnings():
    """``Variable(t, volatile=True)``, ``x.volatile`` and ``x.volatile = True``: no effect,
    with PyTorch's warnings (leafgrad raised AttributeError, or set an attribute)."""

    def run(m):
        v = m.autograd.Variable(m.ones(2), volatile=True)
        x = m.ones(2)
        read = x.volatile
        x.volatile = True
        return v.requires_grad, read, x.volatile, m.autograd.Variable(None, True)

    both(run)
    both(lambda m: m.autograd.Variable(m.ones(2), True, True))
    both(lambda m: m.autograd.Variable(1.0, volatile=True))


REAL_VIEWS = {
    "complex real": lambda m, x: m.complex(x, x * 2).abs().sum(),
    "complex both": lambda m, x: m.complex(x, x.exp()).angle().sum(),
    "fft real": lambda m, x: m.fft.fft(x, dim=0).real.sum(),
    "rfft": lambda m, x: m.fft.rfft(x, dim=0).abs().sum(),
    "ihfft": lambda m, x: m.fft.ihfft(x, dim=0).abs().sum(),
    "rfft2": lambda m, x: m.fft.rfft2(x).abs().sum(),
    "rfft of a transpose": lambda m, x: m.fft.rfft(x.t(), dim=1).abs().sum(),
}


@pytest.mark.parametrize("shape", [(1,), (3,), (1, 2), (3, 2)])
@pytest.mark.parametrize("case", list(REAL_VIEWS))
def test_real_views_of_complex_gradients(case, shape):
    """Seed 148: ``fft_r2c_backward`` and ``complex``'s backward give real views of complex
    gradients (doubled strides): autograd.grad returns them so laid out, and a leaf's
    AccumulateGrad takes one only where its size-1 dims make it dense (Note [Real views of
    gradients])."""
    if (case == "rfft2" or "transpose" in case) and len(shape) == 1:
        pytest.skip("of a matrix")

    def run(m):
        x = m.ones(*shape, requires_grad=True)
        (g,) = m.autograd.grad(REAL_VIEWS[case](m, x), x)
        y = m.ones(*shape, requires_grad=True)
        REAL_VIEWS[case](m, y).backward()
        return g, g.stride(), g._version, y.grad.stride(), y.grad._version

    both(run)


_INF = float("inf")
WELFORD = {
    "inf in the middle": [1.0, _INF, 2.0],
    "inf alone": [_INF],
    "inf last": [1.0, _INF],
    "inf first": [-_INF, 1.0],
    "two infs": [_INF, _INF],
    "both signs": [_INF, -_INF, 3.0],
    "finite": [1.0, 2.0, 3.5],
}


@pytest.mark.parametrize("op", ["var_mean", "std_mean"])
@pytest.mark.parametrize("case", list(WELFORD))
def test_var_mean_mean_is_the_welford_running_mean(case, op):
    """Seed 150: PyTorch's mean of var_mean/std_mean is the running mean of its Welford
    reduction: infinite only where the one infinite element comes last (Note [Welford
    means])."""

    def run(m):
        x = m.tensor(WELFORD[case], requires_grad=True)
        v, mu = getattr(m, op)(x, 0)
        grid = m.tensor([[1.0, _INF], [_INF, 2.0], [3.0, 4.0]])
        (mu * 2).backward()
        return v, mu, x.grad, getattr(m, op)(grid, 1, keepdim=True), getattr(m, op)(grid, 0)

    both(run)


RESULT_OPS = ["sqrt", "rsqrt", "exp2", "expm1", "tan", "sigmoid", "exp"]


@pytest.mark.parametrize("op", RESULT_OPS)
@pytest.mark.parametrize("hook", ["identity", "scaled"])
def test_result_saving_ops_compute_with_the_unpacked_result(op, hook):
    """Seed 152: ops PyTorch differentiates from their result compute with what ``unpack``
    gives: the result as written in place since (identity hooks), or a changed one; leafgrad
    recomputed from the input (Note [Result formulas])."""

    def run(m):
        x = m.tensor([0.25, 0.75], requires_grad=True)
        unpack = (lambda t: t) if hook == "identity" else (lambda t: t * 1.5)
        with m.autograd.graph.saved_tensors_hooks(lambda t: t, unpack):
            y = getattr(x, op)()
            if hook == "identity":
                y.add_(x, alpha=2.0)
        y.sum().backward()
        return x.grad

    both(run)
