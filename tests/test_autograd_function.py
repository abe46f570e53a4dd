"""Differential tests of custom autograd Functions (``autograd.Function``) against torch.

Each test defines the same Function with ``m.autograd.Function`` for ``m`` in (torch, leafgrad)
and compares values, gradients, ``grad_fn`` names, errors and warnings (``both`` in conftest).
"""

from __future__ import annotations

import warnings

import torch
from conftest import both, lg


def names(t):
    """The grad_fn class name and ``name()`` of a tensor, and whether it is a leaf."""
    fn = t.grad_fn
    return (
        None if fn is None else type(fn).__name__,
        None if fn is None else fn.name(),
        t.is_leaf,
        t.requires_grad,
    )


def edges(fn):
    return tuple(None if n is None else type(n).__name__ for n, _ in fn.next_functions)


def make_mul(m):
    class MulConst(m.autograd.Function):
        @staticmethod
        def forward(ctx, x, k):
            ctx.save_for_backward(x)
            ctx.k = k
            return x * k

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * ctx.k * x.cos(), None

    return MulConst


def test_basic_values_grads_names():
    def f(m):
        x = m.tensor([0.5, 1.0, -2.0], requires_grad=True)
        y = make_mul(m).apply(x, 3.0)
        y.sum().backward()
        fn = y.grad_fn
        return y, x.grad, names(y), edges(fn), fn.needs_input_grad, fn.k

    both(f)


def test_export_names():
    assert lg.autograd.Function is lg.autograd.function.Function
    assert lg.autograd.FunctionCtx is lg.autograd.function.FunctionCtx
    x = lg.ones(2, requires_grad=True)
    y = make_mul(lg).apply(x, 2.0)
    assert isinstance(y.grad_fn, lg.autograd.function.BackwardCFunction)
    assert isinstance(y.grad_fn, lg.autograd.FunctionCtx)
    assert isinstance(y.grad_fn, lg.autograd.Node)


def test_ctx_is_grad_fn_and_attributes():
    def f(m):
        class F(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.tag = "hello"
                return x.exp()

            @staticmethod
            def backward(ctx, g):
                return g * 2

        x = m.ones(2, requires_grad=True)
        y = F.apply(x)
        return y.grad_fn.tag, y.grad_fn is y.grad_fn, y.grad_fn.saved_tensors, names(y)

    both(f)


def test_setup_context_style_and_defaults():
    def f(m):
        class F(m.autograd.Function):
            @staticmethod
            def forward(x, k=2.0, bias=None):
                return x * k + (0 if bias is None else bias)

            @staticmethod
            def setup_context(ctx, inputs, output):
                x, k, bias = inputs
                ctx.k = k
                ctx.save_for_backward(x, output)

            @staticmethod
            def backward(ctx, g):
                x, out = ctx.saved_tensors
                return g * ctx.k + out * 0, None, g if ctx.needs_input_grad[2] else None

        x = m.tensor([1.0, 2.0], requires_grad=True)
        b = m.tensor([0.5, 0.5], requires_grad=True)
        y = F.apply(x, bias=b)
        y.sum().backward()
        saved = y.grad_fn
        return y, x.grad, b.grad, names(y), saved.needs_input_grad, edges(saved)

    both(f)


def test_kwargs_binding():
    def f(m):
        class F(m.autograd.Function):
            @staticmethod
            def forward(ctx, x, k=3.0, w=None):
                return x * k * (1 if w is None else w)

            @staticmethod
            def backward(ctx, g):
                return g, None, g * 2

        x = m.ones(3, requires_grad=True)
        w = m.ones(3, requires_grad=True)
        y = F.apply(x, w=w, k=5.0)
        y.sum().backward()
        return y, x.grad, w.grad, y.grad_fn.needs_input_grad

    both(f)
    for call in (
        lambda F, x: F.apply(x, w=x),
        lambda F, x: F.apply(x, 2.0, x=x),
        lambda F, x: F.apply(x, z=1),
    ):

        def g(m, call=call):
            class F(m.autograd.Function):
                @staticmethod
                def forward(ctx, x, k=3.0, w=None):
                    return x * k

                @staticmethod
                def backward(ctx, g):
                    return g, None, None

            return call(F, m.ones(2, requires_grad=True))

        both(g)


def test_non_tensor_inputs_and_outputs():
    def f(m):
        class F(m.autograd.Function):
            @staticmethod
            def forward(ctx, a, n, b, s):
                return a * n, s + "!", b.clone(), 7

            @staticmethod
            def backward(ctx, ga, gs, gb, g7):
                ctx.got = (gs, g7, ga.shape, gb.shape)
                return ga * 2, None, gb * 3, None

        a = m.ones(2, requires_grad=True)
        b = m.ones(3, requires_grad=True)
        out = F.apply(a, 4, b, "hi")
        (out[0].sum() + out[2].sum()).backward()
        return out, a.grad, b.grad, out[0].grad_fn.got, edges(out[0].grad_fn), names(out[2])

    both(f)


def test_multiple_outputs_none_grads_materialized():
    def f(m):
        class F(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2, x * 3

            @staticmethod
            def backward(ctx, g1, g2):
                ctx.seen = (g1, g2)
                return g1 + g2

        x = m.ones(3, requires_grad=True)
        y1, y2 = F.apply(x)
        y1.sum().backward()
        return x.grad, y1.grad_fn.seen, y1.grad_fn is y2.grad_fn, names(y2)

    both(f, autograd=False)


def test_materialize_grads_false():
    def f(m):
        class F(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.set_materialize_grads(False)
                return x.clone(), x.clone()

            @staticmethod
            def backward(ctx, g1, g2):
                ctx.seen = (g1 is None, g2 is None)
                out = m.zeros_like(g1 if g1 is not None else g2)
                if g1 is not None:
                    out = out + g1
                if g2 is not None:
                    out = out + 10 * g2
                return out

        x = m.ones(3, requires_grad=True)
        a, b = F.apply(x)
        b.sum().backward()
        try:
            a.grad_fn.materialize_grads
        except AttributeError as e:
            err = str(e)
        return x.grad, a.grad_fn.seen, err

    both(f)


def test_non_differentiable_outputs():
    def f(m):
        class F(m.autograd.Function):
            @staticmethod
            def forward(ctx, x, mat):
                ctx.set_materialize_grads(mat)
                idx = m.arange(3)
                nd = x.clone()
                ctx.mark_non_differentiable(nd)
                return x * 2, idx, 7, nd, x * 3

            @staticmethod
            def backward(ctx, g1, g2, g3, g4, g5):
                ctx.seen = (g1, g2, g3, g4, g5)
                return g1 + g5, None

        res = []
        for mat in (True, False):
            x = m.ones(3, requires_grad=True)
            out = F.apply(x, mat)
            out[0].sum().backward()
            kinds = [names(o) for o in out if not isinstance(o, int)]
            res.append((x.grad, out[0].grad_fn.seen, kinds))
        return res

    both(f)


def test_no_grad_and_no_inputs_requiring_grad():
    def f(m):
        F = make_mul(m)
        x = m.ones(3, requires_grad=True)
        with m.no_grad():
            a = F.apply(x, 2.0)
        b = F.apply(m.ones(3), 2.0)
        c = F.apply(x.detach(), 2.0)
        return names(a), names(b), names(c), a

    both(f)


def test_needs_input_grad_in_forward_under_no_grad():
    def f(m):
        class F(m.autograd.Function):
            @staticmethod
            def forward(ctx, x, y, z):
                ctx.fwd = (ctx.needs_input_grad, m.is_grad_enabled(), ctx.saved_tensors)
                return x + y

            @staticmethod
            def backward(ctx, g):
                return g, g, None

        x = m.ones(2, requires_grad=True)
        out = []
        for mode in (True, False):
            with m.set_grad_enabled(mode):
                y = F.apply(x, m.ones(2), 1)
            out.append((names(y), None if y.grad_fn is None else y.grad_fn.fwd))
        return out

    both(f)


def test_input_returned_as_is():
    def f(m):
        class F(m.autograd.Function):
            @staticmethod
            def forward(ctx, x, y):
                return x, y

            @staticmethod
            def backward(ctx, gx, gy):
                return gx * 2, gy * 3

        x = m.ones(2, requires_grad=True)
        z = m.ones(2)
        a, b = F.apply(x, z)
        (a.sum() * 2).backward()
        with m.no_grad():
            c, d = F.apply(x, z)
        return (
            names(a),
            names(b),
            a is x,
            a._base is x,
            b._base is z,
            x.grad,
            names(c),
            c is x,
            c._base is None,
            d._base is z,
            names(d),
        )

    both(f)


def test_output_views_of_inputs():
    def f(m):
        class F(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x[:2], x.view(-1)

            @staticmethod
            def backward(ctx, g1, g2):
                return g2 * 5

        x = m.ones(3, requires_grad=True)
        a, b = F.apply(x)
        b.sum().backward()
        return names(a), names(b), a._base is x, x.grad

    both(f)


def test_single_output_view_of_input():
    def f(m):
        class F(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x[1:]

            @staticmethod
            def backward(ctx, g):
                return m.cat([g.new_zeros(1), g * 4])

        x = m.ones(3, requires_grad=True)
        a = F.apply(x)
        a.sum().backward()
        return names(a), a._base is x, x.grad

    both(f)


def test_inplace_on_output_view_forbidden():
    def f(m):
        class F(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x

            @staticmethod
            def backward(ctx, g):
                return g

        x = m.ones(3, requires_grad=True)
        F.apply(x).add_(1)

    both(f)

    def indirect(m):
        class G(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x[1:]

            @staticmethod
            def backward(ctx, g):
                return m.cat([g[:1] * 0, g])

        x = m.ones(3, requires_grad=True).clone()
        y = G.apply(x)
        x.mul_(2)
        return y.grad_fn

    both(indirect)


def test_multi_output_view_inplace_forbidden():
    def f(m):
        class F(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x[:2], x * 2

            @staticmethod
            def backward(ctx, g1, g2):
                return g2

        x = m.ones(3, requires_grad=True)
        a, _ = F.apply(x)
        a.mul_(2)

    both(f)


def test_saved_input_version_check_and_identity():
    def f(m):
        class F(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * 2

            @staticmethod
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return g * x

        x = m.ones(3, requires_grad=True)
        y = F.apply(x)
        same_obj = y.grad_fn.saved_tensors[0] is x
        x.detach().add_(1)
        y.sum().backward()
        return same_obj

    both(f)

    def g(m):
        class F(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * 2

            @staticmethod
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return g * x

        a = m.ones(3, requires_grad=True)
        x = a * 1
        y = F.apply(x)
        x.mul_(3)
        y.sum().backward()

    both(g)


def test_saved_output():
    def f(m):
        class Exp(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                r = x.exp()
                ctx.save_for_backward(r)
                return r

            @staticmethod
            def backward(ctx, g):
                (r,) = ctx.saved_tensors
                ctx.info = (r is ctx.out, names(r))
                return g * r

        x = m.tensor([0.1, 0.2], requires_grad=True)
        y = Exp.apply(x)
        y.grad_fn.out = y
        y.sum().backward()
        info = y.grad_fn.info
        del y.grad_fn.out
        y2 = Exp.apply(x)
        y2.mul_(2)
        try:
            y2.sum().backward()
        except RuntimeError as e:
            err = str(e)
        return x.grad, info, err

    both(f)


def test_release_and_retain_graph():
    def f(m):
        F = make_mul(m)
        x = m.tensor([1.0, 2.0], requires_grad=True)
        y = F.apply(x, 2.0)
        y.sum().backward(retain_graph=True)
        y.sum().backward()
        g = x.grad.clone()
        try:
            y.grad_fn.saved_tensors
        except RuntimeError as e:
            err1 = str(e)
        try:
            y.sum().backward()
        except RuntimeError as e:
            err2 = str(e)
        return g, err1, err2

    both(f)


def test_backward_twice_without_saved_tensors_is_fine():
    def f(m):
        class F(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g * 2

        x = m.ones(2, requires_grad=True)
        y = F.apply(x)
        y.sum().backward()
        y.sum().backward()
        return x.grad

    both(f)


def test_saved_variables_deprecated():
    for m in (torch, lg):
        F = make_mul(m)
        x = m.ones(2, requires_grad=True)
        y = F.apply(x, 2.0)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            assert y.grad_fn.saved_variables[0] is x
        assert [(c.category, str(c.message)) for c in w] == [
            (DeprecationWarning, "'saved_variables' is deprecated; use 'saved_tensors'")
        ]


def test_wrong_gradients():
    rets = [
        lambda g: (g, g, g),
        lambda g: (g, None, g[:2]),
        lambda g: (g.expand(2, 3), None, None),
        lambda g: (g.double(), None, None),
        lambda g: (g, None, None, None),
        lambda g: (g, None, None, 1),
        lambda g: (1, None, None),
        lambda g: [g, None, None],
        lambda g: (g.long(), None, None),
        lambda g: (g.sum(), None, None),
        lambda g: (g[None], None, None),
        lambda g: (g.new_ones(1), None, None),
        lambda g: g,
    ]
    for ret in rets:

        def f(m, ret=ret):
            class W(m.autograd.Function):
                @staticmethod
                def forward(ctx, x, k, y):
                    return x * 2

                @staticmethod
                def backward(ctx, g):
                    return ret(g)

            x = m.ones(3, requires_grad=True)
            y = W.apply(x, 2, m.ones(2))
            y.sum().backward()
            return x.grad

        both(f)

    def g(m):
        class W(m.autograd.Function):
            @staticmethod
            def forward(ctx, x, k, y):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g, None, g

        W.apply(m.ones(3, requires_grad=True), 2, m.ones(2, requires_grad=True)).sum().backward()

    both(g)


def test_mark_dirty_inplace():
    def make(m):
        class D(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                x.add_(1)
                ctx.mark_dirty(x)
                ctx.save_for_backward(x)
                return x

            @staticmethod
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return g * 2

        return D

    def f(m):
        a = m.ones(3, requires_grad=True)
        b = a.clone()
        y = make(m).apply(b)
        info = (y is b, b._version, names(b), edges(b.grad_fn))
        y.sum().backward(retain_graph=True)
        g = a.grad.clone()
        b.mul_(2)
        try:
            y.sum().backward()
        except RuntimeError as e:
            err = str(e)
        return info, g, err, y

    both(f)

    def leaf(m):
        make(m).apply(m.ones(3, requires_grad=True))

    both(leaf)

    def no_grad(m):
        a = m.ones(3, requires_grad=True)
        with m.no_grad():
            c = a.clone()
            y1 = make(m).apply(c)
            r1 = (y1 is c, c._version, names(y1))
        c = a.clone()
        with m.no_grad():
            y2 = make(m).apply(c)
        return r1, y2 is c, c._version, names(y2), y2._base is c, y2

    both(no_grad)


def test_mark_dirty_view_input():
    def f(m):
        class D(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                x.mul_(3)
                ctx.mark_dirty(x)
                return x

            @staticmethod
            def backward(ctx, g):
                return g * 3

        a = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
        c = a.clone()
        v = c[:2]
        y = D.apply(v)
        c.sum().backward()
        return y is v, names(v), names(c), a.grad, c

    both(f)


def test_mark_dirty_errors_and_warning():
    def not_returned(m):
        class D(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.mark_dirty(x)
                return x.clone()

            @staticmethod
            def backward(ctx, g):
                return g

        D.apply(m.ones(3, requires_grad=True).clone())

    def not_input(m):
        class D(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                y = x.clone()
                ctx.mark_dirty(y)
                return y

            @staticmethod
            def backward(ctx, g):
                return g

        a = m.ones(3, requires_grad=True)
        y = D.apply(a)
        y.sum().backward()
        return names(y), a.grad

    def not_tensor(m):
        class D(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.mark_dirty(x, 1)
                return x

            @staticmethod
            def backward(ctx, g):
                return g

        D.apply(m.ones(3, requires_grad=True).clone())

    def view_multi(m):
        class D(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.mark_dirty(x)
                return x, x * 2

            @staticmethod
            def backward(ctx, g, h):
                return g

        D.apply(m.ones(3, requires_grad=True).clone()[:2])

    for fn in (not_returned, not_input, not_tensor, view_multi):
        both(fn)


def test_ctx_argument_errors():
    def non_diff(m):
        class N(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.mark_non_differentiable(3)
                return x.clone()

            @staticmethod
            def backward(ctx, g):
                return g

        N.apply(m.ones(2, requires_grad=True))

    def save_int(m, grad=True):
        class S(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x, 3)
                return x.clone()

            @staticmethod
            def backward(ctx, g):
                return g

        with m.set_grad_enabled(grad):
            return names(S.apply(m.ones(2, requires_grad=True)))

    def setup_saves_input(m):
        class SC(m.autograd.Function):
            @staticmethod
            def forward(x):
                return x

            @staticmethod
            def setup_context(ctx, inputs, output):
                ctx.save_for_backward(output)

            @staticmethod
            def backward(ctx, g):
                return g

        SC.apply(m.ones(2, requires_grad=True))

    for fn in (non_diff, save_int, lambda m: save_int(m, False), setup_saves_input):
        both(fn)


def test_missing_methods_and_instantiation():
    def no_backward(m):
        class F(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x.clone()

        F.apply(m.ones(2, requires_grad=True)).sum().backward()

    def no_forward(m):
        class F(m.autograd.Function):
            pass

        F.apply(m.ones(2))

    def jvp(m):
        class F(m.autograd.Function):
            pass

        F.jvp(None)

    def both_bw_vjp(m):
        class F(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x.clone()

            @staticmethod
            def backward(ctx, g):
                return g

            @staticmethod
            def vjp(ctx, g):
                return g

        F.apply(m.ones(2, requires_grad=True)).sum().backward()

    def vjp_only(m):
        class F(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x.clone()

            @staticmethod
            def vjp(ctx, g):
                return g * 3

        x = m.ones(2, requires_grad=True)
        y = F.apply(x)
        direct = y.grad_fn.apply(m.ones(2))
        y.sum().backward()
        return x.grad, direct

    def call_instance(m):
        F = make_mul(m)
        F()(m.ones(2))

    for fn in (no_backward, no_forward, jvp, both_bw_vjp, vjp_only, call_instance):
        both(fn)

    for m in (torch, lg):
        F = make_mul(m)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            F()
        assert [c.category for c in w] == [DeprecationWarning]
        assert str(w[0].message) == (
            f"{F} should not be instantiated. Methods on autograd functions are all static, so "
            "you should invoke them on the class itself. Instantiating an autograd function will "
            "raise an error in a future version of PyTorch."
        )


def test_hooks_on_outputs_and_node():
    def f(m):
        F = make_mul(m)
        x = m.tensor([0.3, 0.6], requires_grad=True)
        y = F.apply(x, 2.0)
        log = []
        y.register_hook(lambda g: log.append(("tensor", g.clone())) or g * 10)
        y.grad_fn.register_prehook(lambda go: log.append(("pre", go[0].clone())))
        y.grad_fn.register_hook(lambda gi, go: log.append(("post", gi[0].clone())))
        y.retain_grad()
        y.sum().backward()
        return x.grad, y.grad, log

    both(f)


def test_double_backward_create_graph():
    def f(m):
        class Cube(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x**3

            @staticmethod
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return g * 3 * x**2

        x = m.tensor([1.0, 2.0], requires_grad=True)
        y = Cube.apply(x)
        (g,) = m.autograd.grad(y.sum(), x, create_graph=True)
        (gg,) = m.autograd.grad(g.sum(), x)
        return g, gg, names(g)

    both(f)

    def backward_create_graph(m):
        x = m.tensor([0.5, 1.5], requires_grad=True)
        y = make_mul(m).apply(x, 2.0)
        y.sum().backward(create_graph=True)
        gx = x.grad
        x.grad = None
        gx.sum().backward()
        return gx, x.grad

    both(backward_create_graph)


def test_once_differentiable():
    def f(m):
        class E(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x.clone()

            @staticmethod
            @m.autograd.function.once_differentiable
            def backward(ctx, g):
                ctx.grad_mode = m.is_grad_enabled()
                return g * 2

        x = m.ones(3, requires_grad=True)
        y = E.apply(x)
        (g1,) = m.autograd.grad(y.sum(), x, create_graph=True)  # incoming grad needs no grad
        y = E.apply(x)
        (g2,) = m.autograd.grad((y * y).sum(), x, create_graph=True)
        fn = g2.grad_fn
        info = (names(g1), names(g2), edges(fn), y.grad_fn.grad_mode)
        try:
            g2.sum().backward()
        except RuntimeError as e:
            err = str(e)
        y = E.apply(x)
        (y * y).sum().backward()
        return g1, g2, info, err, x.grad

    both(f)


def test_mark_shared_storage_warns():
    for m in (torch, lg):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            m.autograd.function.FunctionCtx().mark_shared_storage()
        assert [c.category for c in w] == [FutureWarning]


def test_chain_and_mixed_ops():
    def f(m):
        F = make_mul(m)

        class Square(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * x

            @staticmethod
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return 2 * x * g

        x = m.tensor([[0.1, -0.4], [1.2, 0.7]], requires_grad=True)
        z = Square.apply(F.apply(x.sin(), 1.5) + x).mean()
        z.backward()
        return z, x.grad, names(z)

    both(f)


def test_outputs_used_by_later_inplace_ops():
    def f(m):
        F = make_mul(m)
        x = m.tensor([0.2, 0.4], requires_grad=True)
        y = F.apply(x, 2.0)
        y.add_(1)  # MulConst saved its input, not its output: allowed
        z = y.exp()
        info = names(y)
        z.sum().backward()
        return x.grad, info, y

    both(f)


def test_double_backward_setup_context_saved_output():
    def f(m):
        class Exp(m.autograd.Function):
            @staticmethod
            def forward(x):
                return x.exp()

            @staticmethod
            def setup_context(ctx, inputs, output):
                ctx.save_for_backward(output)

            @staticmethod
            def backward(ctx, g):
                (r,) = ctx.saved_tensors
                return g * r

        x = m.tensor([0.3, -0.2], requires_grad=True)
        y = Exp.apply(x)
        (g,) = m.autograd.grad((y * y).sum(), x, create_graph=True)
        (gg,) = m.autograd.grad(g.sum(), x)
        return g, gg

    both(f)


def test_inference_mode():
    def f(m):
        x = m.ones(2, requires_grad=True)
        with m.inference_mode():
            y = make_mul(m).apply(x, 2.0)
        return names(y), y.is_inference(), y

    both(f)


def test_node_repr_is_pythons():
    """A Function's node is a Python object in PyTorch: its repr names its module, where a C++
    node's names only its class."""
    import re

    def fn(M):
        class Double(M.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g * 2

        y = Double.apply(M.ones(2, requires_grad=True))
        texts = [repr(y.grad_fn), str(y.grad_fn), repr(y.grad_fn.next_functions[0][0])]
        texts.append(repr((y * 2).grad_fn))
        return [re.sub("0x[0-9a-f]+", "ADDR", t).replace(M.__name__ + ".", "") for t in texts]

    both(fn)
