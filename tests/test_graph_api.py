"""``autograd.graph``'s edge and hook helpers (``GradientEdge``, ``get_gradient_edge``,
``increment_version``, ``register_multi_grad_hook``: Note [Graph tasks] in engine.py) and the
``nn.functional`` spellings that wrap other functions (in-place activations, ``*_with_indices``,
the deprecated ``upsample*``), against PyTorch."""

import numpy as np
import pytest
from conftest import both

_A = np.linspace(-1.5, 2.0, 6).reshape(2, 3).astype(np.float32)
_B = np.linspace(0.5, 1.0, 6).reshape(2, 3).astype(np.float32)


def _shapes(grads):
    return [None if g is None else tuple(g.shape) for g in grads]


def test_gradient_edges():
    def fn(m):
        G = m.autograd.graph
        x = m.tensor(_A[0], requires_grad=True)
        y = x * 2
        z = y.sin().sum()
        e = G.get_gradient_edge(y)
        out = [type(e).__name__, type(e.node).__name__, e.output_nr, e.ownership_token]
        out.append(type(G.get_gradient_edge(x).node).__name__)
        out.append(m.autograd.grad(z, e, retain_graph=True))
        out.append(m.autograd.grad(z, (x, e), retain_graph=True))
        out.append(e.node is y.grad_fn)
        try:
            G.get_gradient_edge(m.ones(2))
        except RuntimeError as err:
            out.append(str(err))
        return out

    both(fn)


def _edge_as_output_cases():
    """Programs with a GradientEdge as an output of ``grad``/``backward`` (or a ``backward``
    input): each returns what it computed."""

    def given(m, G, x):  # an explicit gradient, of another float dtype too
        y = x * 2
        e = G.get_gradient_edge(y)
        a = m.autograd.grad(e, x, m.ones(3), retain_graph=True)
        b = m.autograd.grad(e, x, m.ones(3, dtype=m.float64), retain_graph=True)
        c = m.autograd.grad([e, (y * y).sum()], x, [m.ones(3), None])
        return [a, b, c]

    def implicit(m, G, x):  # a one-element output gets ones
        s = (x * x).sum()
        return m.autograd.grad(G.get_gradient_edge(s), x)

    def not_scalar(m, G, x):
        return m.autograd.grad(G.get_gradient_edge(x * 2), x)

    def wrong_shape(m, G, x):
        return m.autograd.grad(G.get_gradient_edge(x * 2), x, m.ones(2))

    def complex_grad(m, G, x):
        return m.autograd.grad(G.get_gradient_edge(x * 2), x, m.ones(3, dtype=m.complex64))

    def backward_edge(m, G, x):  # backward from an edge accumulates; a leaf's edge too
        y = x.exp()
        y.retain_grad()
        h = y.register_hook(lambda g: g * 10)
        m.autograd.backward(G.get_gradient_edge(y), m.ones(3))
        h.remove()
        first = x.grad.clone()
        m.autograd.backward(G.get_gradient_edge(x), m.full((3,), 2.0))
        return [first, x.grad, y.grad]

    def edge_input_of_backward(m, G, x):  # its gradient is computed and kept nowhere
        y = x * 2
        z = (y * y).sum()
        z.backward(inputs=[G.get_gradient_edge(y), x])
        return [x.grad, y.grad]

    def only_edge_input(m, G, x):
        y = x * 2
        (y * y).sum().backward(inputs=[G.get_gradient_edge(y)])
        return x.grad

    def multi_output(m, G, x):  # one output of unbind, of a cast
        a, b, c = x.unbind()
        e = G.get_gradient_edge(b)
        r = [m.autograd.grad(e, x, retain_graph=True), m.autograd.grad(e, x, m.tensor(5.0))]
        y = x.double()
        r.append(m.autograd.grad(G.get_gradient_edge(y), x, m.ones(3, dtype=m.float64)))
        return r

    def create_graph(m, G, x):
        s = (x**3).sum()
        (g,) = m.autograd.grad(G.get_gradient_edge(s), x, create_graph=True)
        return [g, g.grad_fn.name(), m.autograd.grad(g.sum(), x)]

    def after_release(m, G, x):
        y = x.exp()
        e = G.get_gradient_edge(y)
        m.autograd.backward(e, m.ones(3))
        return m.autograd.grad(e, x, m.ones(3))

    def batched(m, G, x):
        e = G.get_gradient_edge(x * 2)
        return m.autograd.grad(e, x, m.ones(4, 3), is_grads_batched=True)

    def batched_wrong(m, G, x):
        e = G.get_gradient_edge(x * 2)
        return m.autograd.grad(e, x, m.ones(3), is_grads_batched=True)

    def no_node(m, G, x):
        return m.autograd.grad(G.GradientEdge(None, 0), x, m.ones(3))

    return [
        given,
        implicit,
        not_scalar,
        wrong_shape,
        complex_grad,
        backward_edge,
        edge_input_of_backward,
        only_edge_input,
        multi_output,
        create_graph,
        after_release,
        batched,
        batched_wrong,
        no_node,
    ]


@pytest.mark.parametrize("case", _edge_as_output_cases(), ids=lambda c: c.__name__)
def test_gradient_edge_as_output(case):
    def fn(m):
        x = m.tensor(_A[0], requires_grad=True)
        return case(m, m.autograd.graph, x)

    both(fn)


def test_gradient_edge_made_by_hand_is_refused():
    """leafgrad's nodes keep no output metadata (Note [Edge metadata]): an edge not made by
    ``get_gradient_edge`` cannot be a root, where PyTorch reads the node's metadata."""
    import leafgrad as lg

    x = lg.tensor(_A[0], requires_grad=True)
    y = x * 2
    with pytest.raises(NotImplementedError, match="get_gradient_edge"):
        lg.autograd.grad(lg.autograd.graph.GradientEdge(y.grad_fn, 0), x, lg.ones(3))
    # the leaf's AccumulateGrad knows its leaf
    edge = lg.autograd.graph.GradientEdge(lg.autograd.graph.get_gradient_edge(x).node, 0)
    lg.autograd.backward(edge, lg.ones(3))
    assert x.grad.tolist() == [1.0, 1.0, 1.0]


def test_increment_version():
    def fn(m):
        v = m.ones(3)
        w = v[1:]
        versions = [v._version]
        m.autograd.graph.increment_version(v)
        versions.append((v._version, w._version))
        m.autograd.graph.increment_version([v, w])
        versions.append((v._version, w._version))
        return versions

    both(fn)


def test_increment_version_trips_the_saved_check():
    def fn(m):
        a = m.tensor(_A, requires_grad=True)
        b = a * 1
        c = b.sin()
        m.autograd.graph.increment_version(b)
        c.sum().backward()

    both(fn)


def test_multi_grad_hook_all():
    def fn(m):
        G = m.autograd.graph
        log = []
        a = m.tensor(_A, requires_grad=True)
        b = m.tensor(_B, requires_grad=True)
        c = a * b
        d = a * b
        h = G.register_multi_grad_hook((a, b, c, d), lambda grads: log.append(_shapes(grads)))
        c.sum().backward(retain_graph=True)
        c.sum().backward(inputs=(a,), retain_graph=True)
        (c + d).sum().backward(retain_graph=True)
        try:
            m.autograd.grad(c.sum(), (b,), retain_graph=True)
        except RuntimeError as err:
            log.append(str(err))
        h.remove()
        c.sum().backward(retain_graph=True)
        log.append("removed")
        h2 = G.register_multi_grad_hook((c, d), lambda grads: log.append(_shapes(grads)))
        m.autograd.grad((c + d).sum(), (a,), retain_graph=True)
        m.autograd.grad(c.sum(), (a,), retain_graph=True)
        h2.remove()
        return log, type(h).__name__, a.grad, b.grad

    both(fn)


def test_multi_grad_hook_any_and_bad_mode():
    def fn(m):
        G = m.autograd.graph
        log = []
        a = m.tensor(_A, requires_grad=True)
        b = m.tensor(_B, requires_grad=True)
        G.register_multi_grad_hook((a, b), lambda g: log.append(g), mode="any")
        (a * b).sum().backward()
        (a * b * b).sum().backward()
        try:
            G.register_multi_grad_hook((a,), print, mode="some")
        except ValueError as err:
            log.append(str(err))
        return log

    both(fn)


_INPLACE = ["elu_", "celu_", "selu_", "hardtanh_", "leaky_relu_"]


@pytest.mark.parametrize("name", _INPLACE)
def test_inplace_activation_spellings(name):
    def fn(m):
        a = m.tensor(_A, requires_grad=True)
        b = a * 1
        r = getattr(m.nn.functional, name)(b)
        out = [r is b, type(r.grad_fn).__name__, r._version, r]
        r.sum().backward()
        return out, a.grad

    both(fn)


@pytest.mark.parametrize("dims", [1, 2, 3])
@pytest.mark.parametrize("adaptive", [False, True])
def test_pool_with_indices(dims, adaptive):
    def fn(m):
        F = m.nn.functional
        x = m.arange(64.0).reshape(1, 1, 4, 4, 4)[(0,) * (3 - dims)].requires_grad_()
        if adaptive:
            out = getattr(F, f"adaptive_max_pool{dims}d_with_indices")(x, 2)
        else:
            out = getattr(F, f"max_pool{dims}d_with_indices")(x, 2)
        out[0].sum().backward()
        return type(out).__name__, out, x.grad

    both(fn)


@pytest.mark.parametrize("name", ["upsample", "upsample_nearest", "upsample_bilinear"])
def test_deprecated_upsample(name):
    def fn(m):
        x = m.arange(32.0).reshape(1, 2, 4, 4).requires_grad_()
        y = getattr(m.nn.functional, name)(x, scale_factor=2)
        y.pow(2).sum().backward()
        return y, x.grad

    both(fn)


# --- autograd.grad(..., is_grads_batched=True) --------------------------------------------------

BATCHED = {
    "jacobian_rows": lambda m, x: m.autograd.grad(
        x * x, x, m.eye(3), is_grads_batched=True, retain_graph=True
    ),
    "two_outputs": lambda m, x: m.autograd.grad(
        (x.sin().exp(), x * x), x, (m.ones(2, 3), m.eye(3)[:2]), is_grads_batched=True
    ),
    "two_inputs": lambda m, x: _two_inputs(m, x),
    "unused_allowed": lambda m, x: m.autograd.grad(
        x * 2,
        (x, m.ones(2, requires_grad=True)),
        m.ones(2, 3),
        is_grads_batched=True,
        allow_unused=True,
    ),
    "unused_materialized": lambda m, x: m.autograd.grad(
        x * 2,
        (x, m.ones(2, requires_grad=True)),
        m.ones(2, 3),
        is_grads_batched=True,
        allow_unused=True,
        materialize_grads=True,
    ),
    "unused_refused": lambda m, x: m.autograd.grad(
        x * 2, (x, m.ones(2, requires_grad=True)), m.ones(2, 3), is_grads_batched=True
    ),
    "unbatched_grad_output": lambda m, x: m.autograd.grad(
        x * x, x, m.ones(3), is_grads_batched=True
    ),
    "implicit_scalar": lambda m, x: m.autograd.grad((x * x).sum(), x, is_grads_batched=True),
    "implicit_non_scalar": lambda m, x: m.autograd.grad(x * x, x, None, is_grads_batched=True),
    "batch_sizes_differ": lambda m, x: m.autograd.grad(
        (x.sin(), x * x), x, (m.ones(2, 3), m.eye(3)), is_grads_batched=True
    ),
    "frees_the_graph": lambda m, x: _frees(m, x),
}


def _two_inputs(m, x):
    w = m.tensor(2.0, requires_grad=True)
    return m.autograd.grad((x * w).sum(), (x, w), m.tensor([1.0, 2.0]), is_grads_batched=True)


def _frees(m, x):
    e = (x * 3).exp()
    r = m.autograd.grad(e, x, m.ones(4, 3), is_grads_batched=True)
    out = [r, r[0]._version, r[0].requires_grad]
    try:
        e.sum().backward()  # the batched grad freed the graph (no retain_graph)
    except RuntimeError as err:
        out.append(str(err))
    return out


@pytest.mark.parametrize("case", sorted(BATCHED))
def test_grads_batched(case):
    def fn(m):
        x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
        return BATCHED[case](m, x)

    both(fn)
