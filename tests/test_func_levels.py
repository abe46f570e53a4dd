"""What tensors report inside torch.func transforms (Note [Requires grad at a level] in func.py):
inside grad, vjp, jacrev and hessian the differentiated inputs are leaves that require grad and
what is computed from them records nodes; a captured tensor that requires grad records nothing
there; at a jvp level nothing records; vmap alone records as outside. Each case runs a body of
probes under a transform in torch and in leafgrad and compares what every probe saw
(``requires_grad``, ``is_leaf``, the ``grad_fn``'s name, or the error) and the results."""

import pytest
from conftest import both


def _seen(t):
    if not hasattr(t, "requires_grad"):
        return repr(t)
    name = None if t.grad_fn is None else type(t.grad_fn).__name__
    return (t.requires_grad, t.is_leaf, name)


def _try(log, tag, fn):
    try:
        log.append((tag, _seen(fn())))
    except Exception as e:  # the error is what is compared
        log.append((tag, type(e).__name__, str(e).split("\n")[0]))


def _probes(m, log, x, w, c, lin):
    """Run the probes on ``x`` (the transform's input), ``w`` (captured, requires grad), ``c``
    (captured) and ``lin`` (a captured module); returns a scalar depending on ``x``."""
    F = m.nn.functional
    for tag, fn in {
        "x": lambda: x,
        "w": lambda: w,
        "c": lambda: c,
        "x*c": lambda: x * c,
        "c*2": lambda: c * 2,
        "w*c": lambda: w * c,
        "x*w": lambda: x * w,
        "w[0]": lambda: w[0],
        "w.t()": lambda: w.unsqueeze(0).t(),
        "x.detach()": lambda: x.detach(),
        "x.data": lambda: x.data,
        "x[0]": lambda: x[0],
        "x.view": lambda: x.view(-1),
        "x.exp": lambda: x.exp(),
        "relu": lambda: F.relu(x),
        "linear": lambda: lin(x),
        "linear.weight": lambda: lin.weight,
        "sum": lambda: x.sum(),
        "stack": lambda: m.stack([x, c]),
        "where": lambda: m.where(c > 0, x, w),
        "cat_captured": lambda: m.cat([w, c]),
        "x.add_": lambda: x.add_(1),
        "clone.add_": lambda: (x * 1).add_(c),
        "clone.mul_w": lambda: (c * 1).mul_(w),
        "to_double": lambda: x.double(),
        "autograd.grad": lambda: m.autograd.grad((x**3).sum(), x, create_graph=True)[0],
        "autograd.grad_plain": lambda: m.autograd.grad((x * c).sum(), x)[0],
    }.items():
        _try(log, tag, fn)
    with m.no_grad():
        _try(log, "no_grad", lambda: x * 2)
    with m.enable_grad():
        _try(log, "enable_grad", lambda: x * 2)
    return (x.sin() * c).sum() + (lin(x) ** 2).sum()


def _setup(m):
    m.manual_seed(0)
    w = m.randn(3, requires_grad=True)
    c = m.randn(3)
    lin = m.nn.Linear(3, 2)
    return w, c, lin


TRANSFORMS = {
    "grad": lambda m, f, x: m.func.grad(f)(x),
    "grad_and_value": lambda m, f, x: m.func.grad_and_value(f)(x),
    "vjp": lambda m, f, x: m.func.vjp(f, x)[1](m.tensor(1.0)),
    "jacrev": lambda m, f, x: m.func.jacrev(f)(x),
    "jvp": lambda m, f, x: m.func.jvp(f, (x,), (m.ones(3),)),
    "jacfwd": lambda m, f, x: m.func.jacfwd(f)(x),
    "hessian": lambda m, f, x: m.func.hessian(f)(x),
    "vmap": lambda m, f, x: m.func.vmap(f)(m.stack([x, x + 1])),
    "vmap_grad": lambda m, f, x: m.func.vmap(m.func.grad(f))(m.stack([x, x + 1])),
    "grad_vmap": lambda m, f, x: m.func.grad(lambda z: m.func.vmap(f)(z.expand(2, 3)).sum())(x),
    "grad_of_grad": lambda m, f, x: m.func.grad(lambda z: m.func.grad(f)(z).sum())(x),
    "jacrev_of_grad": lambda m, f, x: m.func.jacrev(m.func.grad(f))(x),
    "vmap_requires_grad_input": lambda m, f, x: m.func.vmap(f)(
        m.stack([x, x + 1]).requires_grad_()
    ),
}


@pytest.mark.parametrize("transform", sorted(TRANSFORMS))
def test_probes_under_transform(transform):
    def fn(m):
        w, c, lin = _setup(m)
        log = []
        x = m.tensor([0.5, -1.0, 2.0])
        out = TRANSFORMS[transform](m, lambda z: _probes(m, log, z, w, c, lin), x)
        return log, out

    # the results' values; their nodes are one TransformBackward0 (Note [Backward through vmap])
    both(fn, autograd=False, rtol=1e-5, atol=1e-6)


def test_probes_under_grad_over_parameters():
    """functional_call with the module's parameters differentiated: they are the level's
    leaves; the module's own parameters (captured) record nothing there."""

    def fn(m):
        w, c, lin = _setup(m)
        log = []
        params = dict(lin.named_parameters())

        def loss(p, x):
            y = m.func.functional_call(lin, p, (x,))
            _try(log, "y", lambda: y)
            _try(log, "p", lambda: p["weight"])
            _try(log, "lin.weight", lambda: lin.weight * 1)
            _try(log, "p.add_", lambda: p["bias"].add_(1))
            return (y**2).sum()

        return log, m.func.grad(loss)(params, m.tensor([0.5, -1.0, 2.0]))

    # the gradients' node is one TransformBackward0 (the parameters given require grad)
    both(fn, autograd=False)


def _function(m):
    class Cube(m.autograd.Function):
        @staticmethod
        def forward(x):
            return x**3

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0])

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * g * x  # not the derivative: the Function's own backward must be used

    return Cube


@pytest.mark.parametrize("transform", ["grad", "vmap_grad"])
@pytest.mark.parametrize("create_graph", [False, True])
def test_custom_function_node_inside_grad(create_graph, transform):
    """A custom Function's output inside grad has PyTorch's ``<Name>GeneratedBackward`` node;
    ``autograd.grad`` through it inside the level runs the Function's backward, and the
    transform's gradient uses it too; without ``create_graph`` that backward freed the graph,
    so the transform's own backward raises PyTorch's error. Under vmap the Function needs a
    vmap rule."""

    def fn(m):
        Cube = _function(m)
        log = []

        def f(x):
            y = Cube.apply(x)
            _try(log, "y", lambda: y)
            (g,) = m.autograd.grad(y.sum(), x, create_graph=create_graph)
            log.append(("g", _seen(g)))
            return y.sum() + g.sum()

        x = m.tensor([0.5, -1.0, 2.0])
        if transform == "grad":
            return log, m.func.grad(f)(x)
        return log, m.func.vmap(m.func.grad(f))(m.stack([x, 2 * x]))

    both(fn)


def test_outer_parameters_still_get_gradients():
    """A captured parameter records nothing inside the level, but a result of the transform
    still reaches it in the caller's graph (Note [Backward through vmap])."""

    def fn(m):
        w, c, lin = _setup(m)
        x = m.tensor([0.5, -1.0, 2.0])
        g = m.func.grad(lambda z: (lin(z * w) ** 2).sum())(x)
        g.sum().backward()
        return g, w.grad, lin.weight.grad, lin.bias.grad

    # g's node is one TransformBackward0 where PyTorch records the gradient's ops
    both(fn, autograd=False, rtol=1e-5, atol=1e-6)


# Note [Writes to vmap's inputs]: PyTorch's vmap writes the caller's tensor, and returns it
WRITES = {
    "add_": lambda m, r: r.add_(1),
    "mul_returns_none": lambda m, r: (r.mul_(3), None)[1],
    "setitem": lambda m, r: r.__setitem__(0, 5.0),
    "view_write": lambda m, r: r[1:].mul_(2),
    "copy_": lambda m, r: r.copy_(m.arange(3.0)),
    "identity": lambda m, r: r,
    "two_outputs": lambda m, r: (r.add_(1), r * 2),
    "data_read": lambda m, r: r.data,
    "data_set": lambda m, r: setattr(r, "data", m.zeros(3)),
}
INPUTS = {
    "plain": lambda m: m.zeros(2, 3),
    "leaf_requires_grad": lambda m: m.zeros(2, 3, requires_grad=True),
    "expanded": lambda m: m.zeros(3).expand(2, 3),
    "view_of_plain": lambda m: m.zeros(4, 3)[1:3],
}


@pytest.mark.parametrize("write", sorted(WRITES))
@pytest.mark.parametrize("source", sorted(INPUTS))
@pytest.mark.parametrize("in_dims", [0, 1])
def test_writes_to_vmap_inputs(write, source, in_dims):
    def fn(m):
        x = INPUTS[source](m)
        if in_dims == 1:
            x = x.t()
        out = m.func.vmap(lambda r: WRITES[write](m, r), in_dims=in_dims)(x)
        first = out[0] if isinstance(out, tuple) else out
        return x, out, first is x, x._version

    both(fn)


def test_writes_to_a_non_leaf_input_reach_its_graph():
    """The input is written with the vmap's values, and gradients flow through the write to
    what the input was made from (PyTorch records the in-place op, leafgrad a copy: the
    nodes' names differ)."""

    def fn(m):
        a = m.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
        y = a * 2
        out = m.func.vmap(lambda r: r.mul_(3))(y)
        (out.sum() + y.sum()).backward()
        return out is y, y.detach(), a.grad

    both(fn, autograd=False)


# Note [Values inside transforms] and Note [Printing inside transforms]
READS = {
    "item": lambda m, x, c: x.sum().item(),
    "bool": lambda m, x, c: bool(x.sum() > 0),
    "if": lambda m, x, c: 1 if x[0] > 0 else 2,
    "float": lambda m, x, c: float(x[1]),
    "int": lambda m, x, c: int(x[0] * 10),
    "index": lambda m, x, c: [5, 6, 7][(x[0] > 0).long()],
    "tolist": lambda m, x, c: x.tolist(),
    "numpy": lambda m, x, c: x.numpy().tolist(),
    "numpy_detached": lambda m, x, c: x.detach().numpy().tolist(),
    "nonzero": lambda m, x, c: x.nonzero(),
    "nonzero_tuple": lambda m, x, c: x.nonzero(as_tuple=True),
    "where_one": lambda m, x, c: m.where(x > 0),
    "mask_index": lambda m, x, c: x[x > 0],
    "mask_setitem": lambda m, x, c: x.clone().__setitem__(x > 0, 1.0),
    "masked_select": lambda m, x, c: m.masked_select(x, x > 0),
    "masked_select_captured_mask": lambda m, x, c: m.masked_select(x, c > 0),
    "unique": lambda m, x, c: (x > 0).long().unique(),
    "unique_consecutive": lambda m, x, c: (x > 0).long().unique_consecutive(),
    "captured_item": lambda m, x, c: c.sum().item(),
    "repr": lambda m, x, c: repr(x),
    "repr_ops": lambda m, x, c: [repr(x * 2), str(x.sum()), repr(x > 0), repr(x.long())],
    "repr_factories": lambda m, x, c: [repr(m.ones(2)), repr(c * 2), repr(c), repr(x.detach())],
    "repr_like": lambda m, x, c: [
        repr(m.zeros_like(x)),
        repr(x.new_ones(2)),
        repr(x.new_full((2,), 3.0)),
    ],
    "repr_double": lambda m, x, c: repr(x.double() * 3),
    "format": lambda m, x, c: f"{x.sum():.3f}",
}
READ_TRANSFORMS = {
    "grad": lambda m, f, x: m.func.grad(f)(x),
    "vjp": lambda m, f, x: m.func.vjp(f, x)[0],
    "jvp": lambda m, f, x: m.func.jvp(f, (x,), (m.ones(3),)),
    "jacrev": lambda m, f, x: m.func.jacrev(f)(x),
    "jacfwd": lambda m, f, x: m.func.jacfwd(f)(x),
    "hessian": lambda m, f, x: m.func.hessian(f)(x),
    "vmap": lambda m, f, x: m.func.vmap(f)(m.stack([x, -x])),
    "vmap_in_dims_1": lambda m, f, x: m.func.vmap(f, in_dims=1)(m.stack([x, -x], 1)),
    "vmap_grad": lambda m, f, x: m.func.vmap(m.func.grad(f))(m.stack([x, -x])),
    "grad_vmap": lambda m, f, x: m.func.grad(lambda z: m.func.vmap(f)(z.expand(2, 3)).sum())(x),
    "grad_grad": lambda m, f, x: m.func.grad(lambda z: m.func.grad(f)(z).sum())(x),
    "vmap_vmap": lambda m, f, x: m.func.vmap(m.func.vmap(f))(m.stack([x, -x]).expand(2, 2, 3)),
}


@pytest.mark.parametrize("transform", sorted(READ_TRANSFORMS))
@pytest.mark.parametrize("read", sorted(READS))
def test_values_and_printing_inside_transforms(read, transform):
    """What a value read or a print gives inside each transform: the values (grad, vjp, jvp),
    PyTorch's vmap errors for batched tensors, and PyTorch's wrapper reprs."""
    if read in ("repr_ops", "repr_double", "repr_like") and transform == "vmap_in_dims_1":
        pytest.xfail(
            "an op's result is batched at the dim JAX's batching rule gives, which PyTorch's "
            "differs from for some ops with an input batched at dim 1 (a binary op's bdim=0)"
        )

    def fn(m):
        c = m.tensor([1.0, -2.0, 3.0])
        log = []

        def f(x):
            _try(log, read, lambda: READS[read](m, x, c))
            return (x**2).sum()

        out = READ_TRANSFORMS[transform](m, f, m.tensor([0.5, -1.0, 2.0]))
        return log, out

    both(fn, autograd=False)


@pytest.mark.parametrize(
    "make",
    [
        "zeros_like",
        "ones_like",
        "empty_like_fill",
        "full_like",
        "new_zeros",
        "new_ones",
        "new_full",
        "new_empty_fill",
    ],
)
def test_like_factories_under_vmap_are_batched(make):
    """A ``*_like`` or ``new_*`` result made from a batched tensor is batched: batched values
    can be written into it in place."""
    makers = {
        "zeros_like": lambda m, x: m.zeros_like(x),
        "ones_like": lambda m, x: m.ones_like(x, dtype=m.float64),
        "empty_like_fill": lambda m, x: m.empty_like(x).fill_(2.0),
        "full_like": lambda m, x: m.full_like(x, -0.0),
        "new_zeros": lambda m, x: x.new_zeros(2),
        "new_ones": lambda m, x: x.new_ones((2,)),
        "new_full": lambda m, x: x.new_full((2,), 3.0),
        "new_empty_fill": lambda m, x: x.new_empty(2).fill_(1.0),
    }

    def fn(m):
        def f(x):
            z = makers[make](m, x)
            before = z.clone()
            z[0] = x[1]
            z.add_(x[:2].to(z.dtype))
            return before, z

        return m.func.vmap(f)(m.arange(6.0).reshape(3, 2))

    both(fn)


# Note [Known values]: checks that read values run inside transforms, as PyTorch's eager ones
def _five(m, x):
    return (x * 0 + 5).long()


CHECKS = {
    "index": lambda m, x: x[_five(m, x)[:1]],
    "gather": lambda m, x: x.gather(0, _five(m, x)[:1]),
    "index_select": lambda m, x: x.index_select(0, _five(m, x)[:1]),
    "embedding": lambda m, x: m.nn.functional.embedding(_five(m, x)[:1], x.reshape(3, 1)),
    "cross_entropy": lambda m, x: m.nn.functional.cross_entropy(x.reshape(1, 3), _five(m, x)[:1]),
    "nll_loss": lambda m, x: m.nn.functional.nll_loss(x.reshape(1, 3), _five(m, x)[:1]),
    "one_hot": lambda m, x: m.nn.functional.one_hot(_five(m, x)[:1], 3),
    "int_div_zero": lambda m, x: _five(m, x) // (_five(m, x) * 0),
    "scatter": lambda m, x: m.zeros(3).scatter(0, _five(m, x)[:1], x[:1]),
    "index_put": lambda m, x: m.zeros(3).index_put((_five(m, x)[:1],), x[:1]),
    "take": lambda m, x: x.take(_five(m, x)[:1]),
    "index_add": lambda m, x: m.zeros(3).index_add(0, _five(m, x)[:1], x[:1]),
    "bce_range": lambda m, x: m.nn.functional.binary_cross_entropy(x.sigmoid() * 2, m.ones(3)),
    "normal_std": lambda m, x: m.normal(m.zeros(3), -x.abs()),
    "multinomial": lambda m, x: m.multinomial(-x.abs(), 1),
    "in_range": lambda m, x: x.gather(0, (x * 0 + 1).long()),
}
CHECK_TRANSFORMS = {
    "grad": lambda m, f, x: m.func.grad(f)(x),
    "jvp": lambda m, f, x: m.func.jvp(f, (x,), (m.ones(3),)),
    "vmap": lambda m, f, x: m.func.vmap(f)(m.stack([x, -x])),
    "vmap_grad": lambda m, f, x: m.func.vmap(m.func.grad(f))(m.stack([x, -x])),
}


@pytest.mark.parametrize("transform", sorted(CHECK_TRANSFORMS))
@pytest.mark.parametrize("check", sorted(CHECKS))
def test_value_checks_inside_transforms(check, transform):
    """An index out of range (or another value PyTorch's kernels refuse) raises inside the
    transforms as PyTorch's does, with the batched tensor's dim under vmap, where JAX alone
    would clamp the index and give a silently wrong result."""

    def fn(m):
        log = []

        def f(x):
            _try(log, check, lambda: CHECKS[check](m, x))
            return (x**2).sum()

        return log, CHECK_TRANSFORMS[transform](m, f, m.tensor([0.5, -1.0, 2.0]))

    both(fn, autograd=False, check_warnings=False)


@pytest.mark.parametrize("has_aux", [False, True])
def test_backward_through_vjp_outputs(has_aux):
    """vjp's outputs join the caller's graph: backward through them reaches the primals and
    the parameters the function read (their node replays the function)."""

    def fn(m):
        m.manual_seed(0)
        lin = m.nn.Linear(3, 2)
        x = m.randn(4, 3, requires_grad=True)
        if has_aux:
            out, _, aux = m.func.vjp(lambda z: (lin(z).sin(), z.cos()), x, has_aux=True)
            (out.sum() + (aux**2).sum()).backward()
        else:
            out, _ = m.func.vjp(lambda z: lin(z).tanh(), x)
            (out**2).sum().backward()
        return out.detach(), x.grad, lin.weight.grad, lin.bias.grad

    both(fn, rtol=1e-5, atol=1e-6)


# Note [Arguments of a level]: a write to an argument reaches the caller's tensor
ARG_WRITES = {
    "grad_other_arg": lambda m, x, y: m.func.grad(lambda a, b: (a * b.add_(a * 2)).sum())(x, y),
    "grad_argnums_1": lambda m, x, y: m.func.grad(lambda a, b: (a.mul_(b) * b).sum(), argnums=1)(
        x, y
    ),
    "jacrev_other_arg": lambda m, x, y: m.func.jacrev(lambda a, b: a * b.sub_(1))(x, y),
    "jvp_primal": lambda m, x, y: m.func.jvp(lambda a: a.add_(1) * 2 * y, (x,), (m.ones(3),)),
    "jacfwd_primal": lambda m, x, y: m.func.jacfwd(lambda a: a.mul_(2).sin())(x),
    "jacfwd_other_arg": lambda m, x, y: m.func.jacfwd(lambda a, b: a * b.add_(a))(x, y),
    "grad_view_arg": lambda m, x, y: m.func.grad(lambda a, b: (a * b.add_(1)).sum())(x, y[:3]),
    "vjp_primal": lambda m, x, y: m.func.vjp(lambda a: a.add_(1), x)[0],
}


@pytest.mark.parametrize("case", sorted(ARG_WRITES))
@pytest.mark.parametrize("requires_grad", [False, True])
def test_writes_to_transform_arguments(case, requires_grad):
    def fn(m):
        x = m.tensor([0.5, -1.0, 2.0])
        base = m.tensor([1.5, 0.25, -2.0, 4.0])
        y = base if case == "grad_view_arg" else base[:3].clone()
        if requires_grad:
            y.requires_grad_()
        out = ARG_WRITES[case](m, x, y)
        return out, x, y.detach(), base, x._version

    both(fn, autograd=False)


NESTED = {
    "grad": lambda m, z, c: m.func.grad(lambda t: (t * z).sin().sum())(z),
    "vjp": lambda m, z, c: m.func.vjp(lambda t: (t * z).sin(), z)[0],
    "jacrev": lambda m, z, c: m.func.jacrev(lambda t: t * z)(z),
    "vmap": lambda m, z, c: m.func.vmap(lambda t: t * z)(z.expand(2, 3)),
    "jvp": lambda m, z, c: m.func.jvp(lambda t: t * z, (z,), (c,))[1],
    "captured_only": lambda m, z, c: m.func.grad(lambda t: (t * c).sum())(c),
}


@pytest.mark.parametrize("inner", sorted(NESTED))
def test_nested_transform_results_inside_grad(inner):
    """A transform's result inside a grad level requires grad when it depends on the level's
    tensors (its node is leafgrad's TransformBackward0 where PyTorch records the ops)."""

    def fn(m):
        c = m.tensor([1.0, 2.0, -1.0])
        log = []

        def f(z):
            r = NESTED[inner](m, z, c)
            log.append((r.requires_grad, r.is_leaf))
            return (r * r).sum()

        return log, m.func.grad(f)(m.tensor([0.5, -1.0, 2.0]))

    both(fn, rtol=1e-5, atol=1e-6)


# Note [Hooks at a level]
def _hooked(m, kind, calls):
    def f(x):
        if kind == "scale_input":
            x.register_hook(lambda g: calls.append(("x", tuple(g.shape))) or g * 10)
            return (x * x).sum()
        if kind == "intermediate":
            y = x * 2
            y.register_hook(lambda g: calls.append(("y", tuple(g.shape))))
            z = y.sin()
            z.register_hook(lambda g: g.clamp(max=0.5))
            return (z * x).sum()
        if kind == "removed":
            h = x.register_hook(lambda g: g * 0)
            y = (x**2).sum()
            h.remove()
            return y
        if kind == "two_hooks":
            x.register_hook(lambda g: g + 1)
            x.register_hook(lambda g: g * 3)
            return x.exp().sum()
        raise AssertionError(kind)

    return f


HOOK_TRANSFORMS = {
    "grad": lambda m, f, x: m.func.grad(f)(x),
    "vjp": lambda m, f, x: m.func.vjp(f, x)[1](m.tensor(2.0)),
    "vmap_grad": lambda m, f, x: m.func.vmap(m.func.grad(f))(m.stack([x, -x])),
    "jacrev_grad": lambda m, f, x: m.func.jacrev(m.func.grad(f))(x),
    "grad_and_value": lambda m, f, x: m.func.grad_and_value(f)(x),
}


@pytest.mark.parametrize("transform", sorted(HOOK_TRANSFORMS))
@pytest.mark.parametrize("kind", ["scale_input", "intermediate", "removed", "two_hooks"])
def test_hooks_inside_grad_levels(kind, transform):
    """A hook registered inside grad or vjp changes the transform's gradient, and runs with
    the per-sample gradient under vmap, as PyTorch's level backward runs it."""

    def fn(m):
        calls = []
        out = HOOK_TRANSFORMS[transform](m, _hooked(m, kind, calls), m.tensor([0.5, -1.0, 2.0]))
        return out, calls

    both(fn, autograd=False, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("transform", ["grad", "jacrev", "jvp", "vjp", "jacfwd"])
def test_backward_replay_does_not_write_arguments_again(transform):
    """A result's backward replays the call from the arguments as they were before it (the
    call wrote them once: Note [Arguments of a level]); the replay writes nothing."""
    calls = {
        "grad": lambda m, f, x, b: m.func.grad(f)(x, b),
        "jacrev": lambda m, f, x, b: m.func.jacrev(f)(x, b),
        "jvp": lambda m, f, x, b: m.func.jvp(lambda t: f(t, b), (x,), (m.ones(2),))[1],
        "vjp": lambda m, f, x, b: m.func.vjp(lambda t: f(t, b), x)[0],
        "jacfwd": lambda m, f, x, b: m.func.jacfwd(f)(x, b),
    }

    def fn(m):
        w = m.tensor([2.0, 3.0], requires_grad=True)
        base = m.full((2, 2), 10.0)
        buf = base[0]

        def f(x, b):
            b.add_(1)
            return (x * w * b).sum()

        out = calls[transform](m, f, m.tensor([1.0, -2.0]), buf)
        out.sum().backward()
        return w.grad, base, buf._version

    both(fn, autograd=False)


def test_level_walk_stays_in_the_level():
    """The check for a graph freed inside the function looks at the level's nodes only: a
    caller's graph freed earlier is not the transform's business."""

    def fn(m):
        w = m.tensor([1.0, 2.0], requires_grad=True).exp()
        w.sum().backward()  # frees the caller's graph
        x = m.tensor([0.5, 1.0])
        return m.func.grad(lambda t: m.func.vmap(lambda r: r * w)(t.expand(3, 2)).sum())(x)

    both(fn, autograd=False)


def test_repr_of_plain_tensors_inside_transforms():
    """A tensor no level holds prints as it does outside (with requires_grad or grad_fn)."""

    def fn(m):
        w = m.tensor([1.0, 2.0], requires_grad=True)
        v = w * 2
        c = m.tensor([3.0, 4.0])
        seen = []

        def f(x):
            seen.extend([repr(w), repr(v), repr(c)])
            return (x * c).sum()

        m.func.grad(f)(m.tensor([1.0, 1.0]))
        m.func.vmap(f)(m.ones(2, 2))
        return seen

    both(fn)
