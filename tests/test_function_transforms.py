"""Custom autograd Functions under ``func`` transforms use their own backward (lowered to
``jax.custom_vjp``, Note [Functions under JAX transforms]), as torch.func does."""

from __future__ import annotations

import pytest
from conftest import both, lg


def _functions(m):
    class ScaledRound(m.autograd.Function):
        @staticmethod
        def forward(x, k):
            return x.round() * k

        @staticmethod
        def setup_context(ctx, inputs, output):
            x, k = inputs
            ctx.save_for_backward(x)
            ctx.k = k

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * ctx.k * x, None

    class TwoOut(m.autograd.Function):
        @staticmethod
        def forward(x, y):
            return x * y, x + y

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(*inputs)

        @staticmethod
        def backward(ctx, ga, gb):
            x, y = ctx.saved_tensors
            return ga * y * 2 + gb, ga * x + gb * 3

    return ScaledRound, TwoOut


@pytest.mark.parametrize(
    "program",
    [
        lambda m, F: m.func.grad(lambda x: F[0].apply(x, 3.0).sum())(m.tensor([0.4, 1.6, -2.5])),
        lambda m, F: m.func.jacrev(lambda x: F[0].apply(x, 2.0))(m.tensor([0.4, 1.6])),
        lambda m, F: m.func.vjp(
            lambda x, y: F[1].apply(x, y), m.tensor([1.0, 2.0]), m.tensor([3.0, -1.0])
        )[1]((m.ones(2), m.ones(2) * 2)),
        lambda m, F: m.func.grad(lambda x: (F[0].apply(x * x, 1.5).sin()).sum())(
            m.tensor([0.3, 1.2])
        ),
        lambda m, F: m.func.grad(
            lambda x: m.func.grad(lambda y: F[1].apply(y, y)[0].sum())(x).sum()
        )(m.tensor([0.5, 2.0])),
    ],
    ids=["grad", "jacrev", "vjp_two_outputs", "composed", "nested_grad"],
)
def test_function_under_func_transforms(program):
    both(lambda m: program(m, _functions(m)))


# What torch.func's transforms require of a custom Function, in PyTorch's order: setup_context
# (any transform), a vmap rule under vmap (jacfwd and hessian are vmaps of jvp), its own jvp
# under forward mode (lowered to jax.custom_jvp: jvp, jacfwd and hessian run it).
def _functions(M):
    class Sq(M.autograd.Function):
        generate_vmap_rule = True

        @staticmethod
        def forward(x):
            return x**2

        @staticmethod
        def setup_context(ctx, inputs, output):
            (x,) = inputs
            ctx.save_for_backward(x)
            ctx.save_for_forward(x)

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * x * g

        @staticmethod
        def jvp(ctx, tx):
            (x,) = ctx.saved_tensors
            return 2 * x * tx

    class NoSetup(M.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 3

        @staticmethod
        def backward(ctx, g):
            return g * 3

    class NoRules(M.autograd.Function):
        @staticmethod
        def forward(x):
            return x * 3

        @staticmethod
        def setup_context(ctx, inputs, output):
            pass

        @staticmethod
        def backward(ctx, g):
            return g * 3

    return {"Sq": Sq, "NoSetup": NoSetup, "NoRules": NoRules}


TRANSFORMS = {
    "grad": lambda M, F, x: M.func.grad(lambda a: F.apply(a).sum())(x),
    "jacrev": lambda M, F, x: M.func.jacrev(F.apply)(x),
    "jacfwd": lambda M, F, x: M.func.jacfwd(F.apply)(x),
    "jvp": lambda M, F, x: M.func.jvp(F.apply, (x,), (M.ones(2),)),
    "vmap": lambda M, F, x: M.func.vmap(F.apply)(M.ones(2, 2)),
    "vjp": lambda M, F, x: M.func.vjp(F.apply, x)[1](M.ones(2)),
    "hessian": lambda M, F, x: M.func.hessian(lambda a: F.apply(a).sum())(x),
}


@pytest.mark.parametrize("transform", sorted(TRANSFORMS))
@pytest.mark.parametrize("function", ["Sq", "NoSetup", "NoRules"])
def test_custom_function_under_func_transforms(function, transform):
    def fn(M):
        F = _functions(M)[function]
        return TRANSFORMS[transform](M, F, M.tensor([1.0, 2.0]))

    both(fn)


# Note [Transforms and the outer graph]: a transform's floating results require grad (are not
# leaves) as PyTorch's do when an input, or a tensor the function reads from outside, requires
# grad; leafgrad's backward through them raises rather than leaving gradients out, except
# through vmap's (Note [Backward through vmap]).
OUTER_CALLS = {
    "vmap": lambda M, x, w: M.func.vmap(lambda t: (t * w).sin())(x),
    "grad": lambda M, x, w: M.func.grad(lambda t: (t**3 * w).sum())(x),
    "grad_and_value": lambda M, x, w: M.func.grad_and_value(lambda t: (t**3 * w).sum())(x),
    "jacrev": lambda M, x, w: M.func.jacrev(lambda t: t.exp() * w)(x),
    "jacfwd": lambda M, x, w: M.func.jacfwd(lambda t: t.exp() * w)(x),
    "hessian": lambda M, x, w: M.func.hessian(lambda t: (t**3 * w).sum())(x),
    "jvp": lambda M, x, w: M.func.jvp(lambda t: t.sin() * w, (x,), (M.ones(3),)),
    "vjp": lambda M, x, w: M.func.vjp(lambda t: t.sin() * w, x)[0],
    "vjp_fn": lambda M, x, w: M.func.vjp(lambda t: t.sin() * w, x)[1](M.ones(3)),
    "module": lambda M, x, w: M.func.vmap(M.nn.Linear(1, 2))(x.reshape(3, 1)),
    "nested": lambda M, x, w: M.func.vmap(M.func.grad(lambda t: (t**2).sum() * w.sum()))(
        x.reshape(3, 1) * M.ones(3, 2)
    ),
}
OUTER_SOURCES = ["input", "closure", "none"]


@pytest.mark.parametrize("mode", ["grad", "no_grad", "inference_mode"])
@pytest.mark.parametrize("source", OUTER_SOURCES)
@pytest.mark.parametrize("call", sorted(OUTER_CALLS))
def test_results_join_the_callers_graph_as_pytorchs(call, source, mode):
    def fn(M):
        M.manual_seed(0)
        x = M.tensor([0.5, -1.0, 2.0], requires_grad=source == "input")
        w = M.tensor([1.5, 0.25, -2.0], requires_grad=source == "closure")
        ctx = {"grad": M.enable_grad, "no_grad": M.no_grad, "inference_mode": M.inference_mode}
        with ctx[mode]():
            out = OUTER_CALLS[call](M, x, w)
        leaves = out if isinstance(out, tuple) else (out,)
        if call == "module":
            leaves = (out, "parameters require grad")
        # values and flags: the grad_fn names are PyTorch's ops' (leafgrad's is its own node)
        return [
            (t.detach(), t.requires_grad, t.is_leaf) if isinstance(t, M.Tensor) else t
            for t in leaves
        ]

    both(fn)


# Note [Backward through vmap]: results of these transforms recompute the call for backward
VMAP_ROOTED = {"vmap", "module", "nested", "grad", "grad_and_value", "jacrev", "jacfwd"}
VMAP_ROOTED |= {"hessian", "jvp", "vjp"}


@pytest.mark.parametrize("call", sorted(VMAP_ROOTED))
def test_backward_through_a_joined_vmap_result(call):
    def fn(M):
        M.manual_seed(0)
        x = M.tensor([0.5, -1.0, 2.0], requires_grad=True)
        w = M.tensor([1.5, 0.25, -2.0], requires_grad=True)
        out = OUTER_CALLS[call](M, x, w)
        outs = out if isinstance(out, tuple) else (out,)
        sum((o * o).sum() for o in outs).backward()
        return x.grad, w.grad

    both(fn, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("call", sorted(set(OUTER_CALLS) - VMAP_ROOTED))
def test_backward_through_a_joined_result_raises(call):
    x = lg.tensor([0.5, -1.0, 2.0], requires_grad=True)
    out = OUTER_CALLS[call](lg, x, lg.tensor([1.5, 0.25, -2.0]))
    first = out[0] if isinstance(out, tuple) else out
    before = x.grad
    with pytest.raises(NotImplementedError, match="torch.func"):
        first.sum().backward()
    assert before is None and x.grad is None


def test_replace_all_batch_norm_modules():
    """Batch norms in a module tree stop tracking running statistics, in place; a vmapped
    forward then normalizes each example by its own batch's statistics."""

    def f(m):
        m.manual_seed(0)
        net = m.nn.Sequential(
            m.nn.Linear(3, 4),
            m.nn.BatchNorm1d(4),
            m.nn.Sequential(m.nn.BatchNorm1d(4, track_running_stats=False), m.nn.ReLU()),
        )
        root = m.func.replace_all_batch_norm_modules_(net)
        x = m.randn(2, 5, 3)
        out = m.func.vmap(net)(x)
        state = [(k, v.shape) for k, v in net.state_dict().items()]
        out = out.detach()  # vmap records its result as one node (torch: the batched ops)
        return root is net, repr(net), state, net[1].running_mean, net[1].num_batches_tracked, out

    both(f, rtol=1e-5, atol=1e-6)


VMAP_WRITES = {
    "batch norm with running stats": lambda m, buf: m.func.vmap(m.nn.BatchNorm1d(3))(
        m.ones(2, 4, 3) * m.arange(3.0)
    ),
    "batch norm without": lambda m, buf: m.func.vmap(
        m.nn.BatchNorm1d(3, track_running_stats=False)
    )(m.ones(2, 4, 3) * m.arange(3.0)),
    "mul_ of a captured tensor": lambda m, buf: m.func.vmap(lambda x: buf.mul_(x))(m.ones(2, 3)),
    "copy_ into a captured tensor": lambda m, buf: m.func.vmap(lambda x: buf.copy_(x))(
        m.ones(2, 3)
    ),
    "unbatched add_ of a captured tensor": lambda m, buf: m.func.vmap(lambda x: buf.add_(1) + x)(
        m.ones(2, 3)
    ),
    "unbatched tensor made inside": lambda m, buf: m.func.vmap(lambda x: m.zeros(3).mul_(x))(
        m.ones(2, 3)
    ),
    "batched tensor made inside": lambda m, buf: m.func.vmap(lambda x: x.clone().mul_(2))(
        m.ones(2, 3)
    ),
}


@pytest.mark.parametrize("case", list(VMAP_WRITES))
def test_vmap_writes_into_unbatched_tensors(case):
    """A batched value written in place into an unbatched tensor inside vmap raises PyTorch's
    error and leaves the tensor as it was (leafgrad left a traced value in it)."""

    def f(m):
        buf = m.full((3,), 2.0)
        try:
            out = VMAP_WRITES[case](m, buf)
        finally:
            after = buf.clone()
        # detached: vmap's result is one TransformBackward0 node here, PyTorch's the batched ops
        return out.detach(), after, buf._version

    both(f)


def _mlp(m):
    m.manual_seed(0)
    return m.nn.Sequential(m.nn.Linear(3, 4), m.nn.Tanh(), m.nn.Linear(4, 2))


VMAP_BACKWARD = {
    "module over a batch": lambda m, net, x, w: m.func.vmap(net)(x),
    "closure parameter, unmapped argument": lambda m, net, x, w: m.func.vmap(
        lambda a, b: (a * w + b).sin(), in_dims=(0, None)
    )(x, m.ones(3)),
    "two outputs": lambda m, net, x, w: m.func.vmap(lambda a: ((a * w).exp(), a.sum() * w))(x),
    "out_dims 1": lambda m, net, x, w: m.func.vmap(lambda a: a * w, out_dims=1)(x),
    "vmap of grad": lambda m, net, x, w: m.func.vmap(m.func.grad(lambda a: ((a * w) ** 2).sum()))(
        x
    ),
    "nested vmap": lambda m, net, x, w: m.func.vmap(m.func.vmap(lambda v: v * w.sum()))(
        x.view(5, 3, 1)
    ),
}


@pytest.mark.parametrize("case", list(VMAP_BACKWARD))
def test_backward_through_vmap_results(case):
    """Backward from a vmap result reaches the tensors the mapped function read (its inputs,
    module parameters, closures), with PyTorch's gradients (Note [Backward through vmap])."""

    def f(m):
        net = _mlp(m)
        x = m.randn(5, 3, requires_grad=True)
        w = m.randn(3, requires_grad=True)
        out = VMAP_BACKWARD[case](m, net, x, w)
        outs = out if isinstance(out, tuple) else (out,)
        loss = sum((o * o).sum() for o in outs)
        leaves = [x, w, *net.parameters()]
        grads = m.autograd.grad(loss, leaves, allow_unused=True, retain_graph=True)
        again = m.autograd.grad(loss, leaves, allow_unused=True)
        return [o.detach() for o in outs], [o.requires_grad for o in outs], grads, again

    both(f, rtol=1e-5, atol=1e-6)


def test_vmap_backward_replays_random_draws():
    """The recomputation replays the generator: dropout's gradient uses the forward's mask."""
    lg.manual_seed(1)
    w = lg.randn(6, requires_grad=True)
    x = lg.randn(4, 6)
    y = lg.func.vmap(lambda a: lg.nn.functional.dropout(a * w, 0.5), randomness="same")(x)
    y.sum().backward()
    expected = ((y != 0).float() * x * 2).sum(0)
    assert lg.allclose(w.grad, expected)


def test_vmap_result_refuses_create_graph():
    w = lg.randn(3, requires_grad=True)
    y = lg.func.vmap(lambda a: (a * w).exp())(lg.randn(4, 3))
    with pytest.raises(NotImplementedError, match="create_graph=True through the result of a"):
        lg.autograd.grad(y.sum(), w, create_graph=True)


def test_transform_backward_reads_the_forward_values():
    """In-place writes after the forward do not change the recomputed gradients: the node
    keeps the arrays the call read (PyTorch raises where it saved the written tensor)."""
    w = lg.tensor([1.5, 0.25, -2.0], requires_grad=True)
    x = lg.arange(12.0).view(4, 3)
    z = lg.func.vmap(lambda a: (a * w).sin())(x)
    expected = (x * (x * w).cos()).sum(0)
    with lg.no_grad():
        w.mul_(2)
        x.add_(1)
    z.sum().backward()
    assert lg.allclose(w.grad, expected)


def _stop_nograd(m, a):
    with m.no_grad():
        b = a * a
    return (b * a).sum()


def _stop_detach_of_result(m, a):
    c = a * 1
    return (c.detach() * a).sum()


_STOPS = {
    "detach": lambda m, a: (a.detach() * a).sum(),
    "data": lambda m, a: (a.data * a).sum(),
    "detach_of_result": _stop_detach_of_result,
    "detach_squared": lambda m, a: (a.detach() * a * a).sum(),
    "no_grad": _stop_nograd,
}
_STOP_CALLS = {
    "grad": lambda m, f, x: m.func.grad(f)(x),
    "jvp": lambda m, f, x: m.func.jvp(f, (x,), (m.ones_like(x),))[1],
    "jacrev": lambda m, f, x: m.func.jacrev(f)(x),
    "jacfwd": lambda m, f, x: m.func.jacfwd(f)(x),
    "vmap_grad": lambda m, f, x: m.func.vmap(m.func.grad(f))(x.expand(3, 2)),
    "linearize": lambda m, f, x: m.func.linearize(f, x)[1](m.ones_like(x)),
}


@pytest.mark.parametrize("call", sorted(_STOP_CALLS))
@pytest.mark.parametrize("case", sorted(_STOPS))
def test_detach_and_no_grad_inside_transforms(case, call):
    """``detach()`` and ``.data`` cut every level's gradient and tangent; a ``no_grad`` block
    inside the function stops a grad transform, not a forward-mode one (PyTorch's torch.func)."""

    def fn(m):
        x = m.tensor([1.0, 2.0])
        return _STOP_CALLS[call](m, lambda a: _STOPS[case](m, a), x)

    # (torch's linearize warns from its FX constant folding)
    both(fn, check_warnings=call != "linearize")


def test_detached_tensor_has_no_storage_inside_grad():
    def fn(m):
        return m.func.grad(lambda a: (a.sum() + len(a.detach().numpy())) * 1)(m.ones(2))

    both(fn)
