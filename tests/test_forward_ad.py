"""Forward-mode AD (``autograd.forward_ad``, Note [Forward AD] in leafgrad/autograd/forward_ad.py)
against PyTorch: dual tensors, the tangents ops give (values, dtypes, reprs), in-place ops, views,
custom Functions' ``jvp``, the errors, and what leafgrad refuses rather than get wrong."""

import numpy as np
import pytest
from conftest import both, lg

_X = np.array([0.3, -1.2, 2.0, 0.7], dtype=np.float32)
_T = np.array([1.0, 0.5, -0.25, 2.0], dtype=np.float32)
_Y = np.array([1.5, 0.2, -0.6, 1.1], dtype=np.float32)
_M = np.linspace(-1.0, 1.0, 12).reshape(3, 4).astype(np.float32)

# op(m, d, y): ``d`` is a dual (4,) tensor, ``y`` a plain one
OPS = {
    "sin": lambda m, d, y: d.sin(),
    "exp": lambda m, d, y: d.exp(),
    "tanh": lambda m, d, y: d.tanh(),
    "sigmoid": lambda m, d, y: d.sigmoid(),
    "log_abs": lambda m, d, y: d.abs().log(),
    "sqrt_sq": lambda m, d, y: (d * d + 1).sqrt(),
    "pow": lambda m, d, y: d.pow(3),
    "rpow": lambda m, d, y: 2.0**d,
    "mul_plain": lambda m, d, y: d * y,
    "div_plain": lambda m, d, y: y / (d + 3),
    "add_sub": lambda m, d, y: d + y - 2 * d,
    "atan2": lambda m, d, y: m.atan2(d, y),
    "maximum": lambda m, d, y: m.maximum(d, y),
    "where": lambda m, d, y: m.where(d > 0.5, d, y),
    "clamp": lambda m, d, y: d.clamp(-1, 1),
    "relu": lambda m, d, y: m.relu(d),
    "softmax": lambda m, d, y: m.nn.functional.softmax(d, 0),
    "log_softmax": lambda m, d, y: m.nn.functional.log_softmax(d, 0),
    "gelu": lambda m, d, y: m.nn.functional.gelu(d),
    "sum": lambda m, d, y: d.sum(),
    "mean": lambda m, d, y: d.mean(),
    "var": lambda m, d, y: d.var(),
    "norm": lambda m, d, y: d.norm(),
    "prod": lambda m, d, y: d.prod(),
    "max": lambda m, d, y: d.max(),
    "cumsum": lambda m, d, y: d.cumsum(0),
    "sort": lambda m, d, y: d.sort()[0],
    "logsumexp": lambda m, d, y: d.logsumexp(0),
    "dot": lambda m, d, y: d.dot(y),
    "outer": lambda m, d, y: m.outer(d, y),
    "matmul": lambda m, d, y: m.tensor(_M) @ d,
    "linear": lambda m, d, y: m.nn.functional.linear(d[None], m.tensor(_M), m.tensor(_M[:, 0])),
    "stack_cat": lambda m, d, y: m.cat([m.stack([d, y]), d[None]]),
    "index": lambda m, d, y: d[[0, 2, 2]],
    "slice_view": lambda m, d, y: d[1:3],
    "reshape_t": lambda m, d, y: d.reshape(2, 2).t(),
    "expand": lambda m, d, y: d[:1].expand(3),
    "to_double": lambda m, d, y: d.to(m.float64),
    "mse_loss": lambda m, d, y: m.nn.functional.mse_loss(d, y),
    "cross_entropy": lambda m, d, y: m.nn.functional.cross_entropy(d[None], m.tensor([2])),
    "argmax_gather": lambda m, d, y: d.gather(0, d.argsort()),
    "comparison": lambda m, d, y: d > y,
}


def _tangent(m, t):
    return m.autograd.forward_ad.unpack_dual(t).tangent


@pytest.mark.parametrize("op", sorted(OPS))
def test_op_tangents(op):
    def fn(m):
        fwAD = m.autograd.forward_ad
        with fwAD.dual_level():
            d = fwAD.make_dual(m.tensor(_X), m.tensor(_T))
            out = OPS[op](m, d, m.tensor(_Y))
            return out, _tangent(m, out), repr(out).split("tangent=")[0]

    both(fn)


def test_dual_tensors():
    def fn(m):
        fwAD = m.autograd.forward_ad
        x, v = m.tensor(_X), m.tensor(_T)
        out = []
        with fwAD.dual_level() as level:
            d = fwAD.make_dual(x, v)
            out += [level, repr(d), d._base is x, d.is_leaf, d.requires_grad, _tangent(m, d) is v]
            p, t = fwAD.unpack_dual(d)
            out += [type(fwAD.unpack_dual(d)).__name__, p, p._base is x, t is v]
            out += [fwAD.unpack_dual(x), repr(d.detach()), repr(d.argmax())]
            s = fwAD.make_dual(m.tensor(2.0), m.tensor(3.0))
            out += [repr(s), repr(s.exp()), repr(fwAD.make_dual(m.tensor(_M), m.tensor(_M)))]
            with m.no_grad():  # tangents are computed in no_grad too
                y = d.exp() * 2
            out.append(repr(y))
            a = m.tensor(_X, requires_grad=True)
            da = fwAD.make_dual(a, v)
            out += [type(da.grad_fn).__name__, da.requires_grad]
        out += [repr(y), fwAD.unpack_dual(y), repr(d)]  # the level's tangents are gone
        return out

    both(fn)


def test_inplace_ops():
    def fn(m):
        fwAD = m.autograd.forward_ad
        with fwAD.dual_level():
            d = fwAD.make_dual(m.tensor(_X), m.tensor(_T))
            w = d.clone()
            w.mul_(3)
            out = [repr(w)]
            w.exp_()
            out.append(repr(w))
            q = m.zeros(4)
            q.copy_(d)
            out.append(repr(q))
            q.add_(m.tensor(_Y))
            out.append(repr(q))
            q.zero_()
            out.append(repr(q))
            r = m.tensor(_Y)
            r.copy_(m.ones(4))
            out.append(repr(r))
            return out

    both(fn)


def test_module_under_no_grad():
    def fn(m):
        fwAD = m.autograd.forward_ad
        lin = m.nn.Linear(4, 3)
        with m.no_grad():
            lin.weight.copy_(m.tensor(_M))
            lin.bias.fill_(0.1)
        with fwAD.dual_level(), m.no_grad():
            d = fwAD.make_dual(m.tensor(_X)[None], m.tensor(_T)[None])
            out = m.nn.functional.softmax(m.tanh(lin(d)), 1)
            return out, _tangent(m, out)

    both(fn)


def test_custom_function_jvp():
    def fn(m):
        fwAD = m.autograd.forward_ad

        class Square(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * x

            @staticmethod
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return 2 * x * g

        class SquareJvp(Square):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_forward(x)
                return x * x

            @staticmethod
            def jvp(ctx, t):
                (x,) = ctx.saved_tensors
                return 2 * x * t

        out = []
        with fwAD.dual_level():
            d = fwAD.make_dual(m.tensor(_X), m.tensor(_T))
            out.append(repr(SquareJvp.apply(d)))
            out.append(repr(Square.apply(m.tensor(_X))))
            try:
                Square.apply(d)
            except NotImplementedError as err:
                out.append(str(err))
        return out

    both(fn)


ERRORS = {
    "no_level": lambda m: m.autograd.forward_ad.make_dual(m.ones(2), m.ones(2)),
    "nested": lambda m: _nested(m),
    "size": lambda m: _in_level(m, lambda f: f.make_dual(m.ones(2), m.ones(3))),
    "int_primal": lambda m: _in_level(m, lambda f: f.make_dual(m.tensor([1, 2]), m.ones(2))),
    "int_tangent": lambda m: _in_level(m, lambda f: f.make_dual(m.ones(2), m.tensor([1, 2]))),
    "already_dual": lambda m: _in_level(
        m, lambda f: f.make_dual(f.make_dual(m.ones(2), m.ones(2)), m.ones(2))
    ),
}


def _in_level(m, body):
    with m.autograd.forward_ad.dual_level():
        return body(m.autograd.forward_ad)


def _nested(m):
    with m.autograd.forward_ad.dual_level():
        with m.autograd.forward_ad.dual_level():
            pass


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_errors(case):
    both(lambda m: ERRORS[case](m))


REFUSED = {
    # PyTorch's tangent would require grad (its formulas read the primals): leafgrad refuses
    "forward_over_reverse": lambda f: f.make_dual(lg.ones(2, requires_grad=True), lg.ones(2)) * 2,
    "parameter": lambda f: lg.nn.Linear(2, 2)(f.make_dual(lg.ones(1, 2), lg.ones(1, 2))),
    # PyTorch keeps a tangent's own dtype; JAX's JVP computes in the primal's
    "tangent_dtype": lambda f: f.make_dual(lg.ones(2), lg.ones(2, dtype=lg.float64)),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_refused(case):
    with lg.autograd.forward_ad.dual_level():
        with pytest.raises(NotImplementedError, match="leafgrad: "):
            REFUSED[case](lg.autograd.forward_ad)


def test_tangents_equal_jax_jvp():
    """An eager chain's tangent equals ``leafgrad.func.jvp`` of the same function (one JAX
    JVP of the whole)."""

    def f(x):
        return (x.sin() * x.exp()).cumsum(0).softmax(0)

    fwAD = lg.autograd.forward_ad
    with fwAD.dual_level():
        eager = _tangent(lg, f(fwAD.make_dual(lg.tensor(_X), lg.tensor(_T))))
    _, whole = lg.func.jvp(f, (lg.tensor(_X),), (lg.tensor(_T),))
    np.testing.assert_allclose(eager.numpy(), whole.numpy(), rtol=1e-6, atol=1e-7)


def _bad_jvp_function(m):
    class Cube(m.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            ctx.save_for_forward(x)
            return x**3

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 3 * x * x * g

        @staticmethod
        def jvp(ctx, t):
            (x,) = ctx.saved_tensors
            return 2 * x * x * t  # wrong: 3 x^2

    return Cube


GRADCHECKS = {
    "chain": lambda m, x, y: (x.sin() * y.exp()).cumsum(0).softmax(0),
    "two_outputs": lambda m, x, y: (x * y, (x / (y + 3)).sum()),
    "bad_jvp": lambda m, x, y: _bad_jvp_function(m).apply(x) + y,
}


@pytest.mark.parametrize("backward", [True, False])
@pytest.mark.parametrize("fast_mode", [False, True])
@pytest.mark.parametrize("case", sorted(GRADCHECKS))
def test_gradcheck_forward_ad(case, fast_mode, backward):
    if case == "bad_jvp" and backward:
        backward = False  # the backward is right: only forward mode finds the error

    def fn(m):
        x = m.tensor(_X.astype(np.float64), requires_grad=True)
        y = m.tensor(_Y.astype(np.float64), requires_grad=True)
        try:
            return m.autograd.gradcheck(
                lambda a, b: GRADCHECKS[case](m, a, b),
                (x, y),
                check_forward_ad=True,
                check_backward_ad=backward,
                fast_mode=fast_mode,
            )
        except RuntimeError as err:  # GradcheckError: each library has its own class
            return str(err)

    both(fn)


@pytest.mark.parametrize(
    "name",
    ["hessian", "jacobian", "jvp", "jacfwd", "linearize", "func_hessian", "jacrev"],
)
def test_forward_transforms_inside_a_dual_level(name):
    """PyTorch's forward-mode transforms enter a dual level of their own: inside the user's,
    they raise (jacrev does not)."""

    def f(m):
        calls = {
            "hessian": lambda: m.autograd.functional.hessian(
                lambda a: a.sin().sum(),
                m.ones(2),
                outer_jacobian_strategy="forward-mode",
                vectorize=True,
            ),
            "jacobian": lambda: m.autograd.functional.jacobian(
                lambda a: a.sin(), m.ones(2), strategy="forward-mode", vectorize=True
            ),
            "jvp": lambda: m.func.jvp(lambda a: a.sin(), (m.ones(2),), (m.ones(2),)),
            "jacfwd": lambda: m.func.jacfwd(lambda a: a.sin())(m.ones(2)),
            "linearize": lambda: m.func.linearize(lambda a: a.sin(), m.ones(2))[1](m.ones(2)),
            "func_hessian": lambda: m.func.hessian(lambda a: a.sin().sum())(m.ones(2)),
            "jacrev": lambda: m.func.jacrev(lambda a: a.sin())(m.ones(2)),
        }
        with m.autograd.forward_ad.dual_level():
            return calls[name]()

    both(f)


# Note [Forward views]: tangents of views are views of one tangent; in-place ops write into it.
# Each program returns what it prints: unpacked duals, tangent strides, versions and identities.
def _u(f, t):
    primal, tangent = f.unpack_dual(t)
    return (repr(primal), repr(tangent), None if tangent is None else tangent.stride())


def _w_slice_of_plain(m, f, d):
    w = m.zeros(3)
    w[1:] = d[:2]
    return _u(f, w)


def _w_setitem_of_dual_copy(m, f, d):
    y = d.clone()
    y[0] = 0
    return _u(f, y)


def _w_view_mul(m, f, d):
    y = d * 2
    v = y[1:]
    v.mul_(3)
    return _u(f, y), _u(f, v)


def _w_base_then_old_view(m, f, d):
    w = m.zeros(3)
    v = w[:2]
    w.copy_(d)
    return _u(f, v), _u(f, w)


def _w_columns(m, f, d):
    w = m.zeros(3, 2)
    w[:, 0] = d
    first = _u(f, w)
    w[:, 1].add_(d * d)
    return first, _u(f, w), _u(f, w.t())


def _w_rows_and_alias(m, f, d):
    w = m.zeros(2, 3)
    alias = w.detach()
    r0, c1, tr = w[0], w[:, 1], w.t()
    r0.copy_(d)
    first = (_u(f, w), _u(f, c1), _u(f, tr), _u(f, alias))
    c1.mul_(d[:2])
    return first, _u(f, w), _u(f, r0), _u(f, w[1:])


def _w_indexed(m, f, d):
    y = d.exp()
    y.add_(1)
    y[1] += d[0]
    w = m.zeros(3)
    w.index_add_(0, m.tensor([0, 0]), d[:2])
    return _u(f, y), _u(f, w)


def _w_indexed_set(m, f, d):
    # the zeros a write leaves in a base without a tangent are +0.0 (Note [index_put gradients])
    idx, mask = m.tensor([0, 2]), m.tensor([True, False, True])
    writes = (
        lambda w: w.__setitem__(idx, d[:2]),
        lambda w: w.__setitem__(mask, d[1:]),
        lambda w: w.index_copy_(0, idx, d[:2]),
        lambda w: w.scatter_(0, idx, d[:2]),
        lambda w: w.masked_scatter_(mask, d[:2]),
        lambda w: w.index_put_((idx,), d[:2], accumulate=True),
    )
    out = []
    for write in writes:
        w = m.zeros(3)
        write(w)
        out.append(_u(f, w))
    return out


def _w_tangent_identity(m, f, d):
    t = m.ones(3)
    x = m.tensor([1.0, 2.0, 3.0])
    e = f.make_dual(x, t)
    same = f.unpack_dual(e).tangent is t
    e.mul_(2)
    x.add_(1)  # a write to the primal's memory leaves the dual's tangent
    out = [same, repr(t), t._version, _u(f, e), _u(f, x)]
    primal = f.unpack_dual(e).primal
    primal.mul_(f.make_dual(m.ones(3), m.ones(3)))  # the primal is no forward view of the dual
    out += [_u(f, primal), _u(f, e)]
    y = e.clone()
    tangent = f.unpack_dual(y).tangent
    view = y[1:]
    view_tangent = f.unpack_dual(view).tangent
    out += [view_tangent._base is tangent, tangent._version]
    y[0] = 5
    out += [repr(tangent), tangent._version, repr(view_tangent)]
    return out


def _w_dual_view(m, f, d):
    e = d * 1
    v = e[:2]
    v.mul_(3)
    alias = e.detach()
    alias.add_(d)
    return _u(f, e), _u(f, v), _u(f, alias)


def _w_split_unbind(m, f, d):
    e = m.cat([d, d])
    a, b = e.split(3)
    a.mul_(2)
    u = m.zeros(3)
    for i, piece in enumerate(u.unbind()):
        piece.add_(d[i] * i)
    return _u(f, e), _u(f, b), _u(f, u)


def _w_view_as_real(m, f, d):
    z = m.zeros(3, dtype=m.complex64)
    r = m.view_as_real(z)
    r[:, 0] = d
    return _u(f, z)


def _w_diagonal(m, f, d):
    e = m.zeros(3, 3)
    e.diagonal().copy_(d)
    g = m.zeros(4)
    g[1:].add_(d)
    return _u(f, e), _u(f, g)


def _w_inplace_shapes(m, f, d):
    y = d.clone().view(3, 1)
    y.t_()
    first = _u(f, y)
    y.squeeze_()
    second = _u(f, y)
    y.unsqueeze_(1)
    return first, second, _u(f, y), y._version


def _w_view_strides(m, f, d):
    x = m.randn(3, 4).t()
    a = f.make_dual(x, m.ones(4, 3))
    b = f.make_dual(m.ones(4, 3), m.randn(3, 4).t())
    return (_u(f, d.unsqueeze(0).t())[2], _u(f, d.expand(2, 3))[2], _u(f, a)[2], _u(f, b)[2])


def _w_fill_zero_copy(m, f, d):
    out = []
    for write in (
        lambda e: e.copy_(m.ones(3)),
        lambda e: e.zero_(),
        lambda e: e.fill_(2.0),
        lambda e: e.add_(d),
    ):
        e = d.clone()
        write(e)
        out.append(_u(f, e))
    return out


def _w_inference_mode(m, f, d):
    e = d.clone()
    with m.inference_mode():
        e.mul_(2)
        g = e * 2
    return _u(f, e), _u(f, g)


WRITES = {n[3:]: fn for n, fn in dict(globals()).items() if n.startswith("_w_")}


@pytest.mark.parametrize("case", sorted(WRITES))
def test_views_and_writes(case):
    def fn(m):
        f = m.autograd.forward_ad
        with f.dual_level():
            d = f.make_dual(m.tensor([1.0, 2.0, 3.0]), m.tensor([1.0, 0.5, 2.0]))
            return WRITES[case](m, f, d)

    both(fn)


def test_views_of_a_base_written_in_another_level():
    """A view made before a level reads the tangent its base gets inside it, and none after."""

    def fn(m):
        f = m.autograd.forward_ad
        x = m.zeros(3)
        v = x[1:]
        with f.dual_level():
            x.copy_(f.make_dual(m.ones(3), m.ones(3) * 2))
            inside = _u(f, v)
        with f.dual_level():
            again = _u(f, v), _u(f, x)
        return inside, _u(f, v), again

    both(fn)


LEVELS = {
    "make_dual_level_1": lambda f, m: f.make_dual(m.ones(2), m.ones(2), level=1),
    "make_dual_level_neg": lambda f, m: f.make_dual(m.ones(2), m.ones(2), level=-1),
    "unpack_dual_level_1": lambda f, m: f.unpack_dual(f.make_dual(m.ones(2), m.ones(2)), level=1),
    "unpack_dual_level_neg": lambda f, m: _u(
        f, f.unpack_dual(f.make_dual(m.ones(2), m.ones(2)), level=-1).primal
    ),
    "unpack_plain_level_1": lambda f, m: repr(f.unpack_dual(m.ones(2), level=1)),
}


@pytest.mark.parametrize("case", sorted(LEVELS))
def test_levels(case):
    def fn(m):
        f = m.autograd.forward_ad
        with f.dual_level():
            return LEVELS[case](f, m)

    both(fn)


def test_make_dual_level_outside_a_level():
    both(lambda m: m.autograd.forward_ad.make_dual(m.ones(2), m.ones(2), level=0))


# Note [Tangent layouts]: a tangent keeps its formula's strides where they differ from its
# primal's only on size-1 dims; a ``(2, 3, 1)`` unfold has strides ``(3, 1, 3)``, a fresh
# ``(2, 3, 1)`` tensor ``(3, 1, 1)``.
def _layout_cases(m, f):
    d = m.float64
    u = f.make_dual(m.ones(2, 3, dtype=d), m.ones(2, 3, dtype=d)).unfold(0, 1, 1)
    big = f.make_dual(m.ones(4, 3, dtype=d), m.ones(4, 3, dtype=d))[:2].unfold(0, 1, 1)
    t = f.make_dual(m.ones(3, 2, dtype=d).t(), m.ones(3, 2, dtype=d).t())
    s = f.make_dual(m.tensor(1.0, dtype=d), m.tensor(2.0, dtype=d))
    c = f.make_dual(m.zeros(2, 3, 1, dtype=d), m.ones(2, 3, 1, dtype=d))

    def z():  # strides (3, 1, 3)
        return m.zeros(2, 3, dtype=d).unfold(0, 1, 1)

    def k():  # strides (3, 1, 1)
        return m.zeros(2, 3, 1, dtype=d)

    return {
        "add": lambda: u + k(),
        "radd": lambda: k() + u,
        "add_alpha": lambda: z().add(u, alpha=2),
        "sub": lambda: z() - u,
        "add_both": lambda: u + big,
        "add_number": lambda: 2 + u,
        "rsub_number": lambda: 1 - u,
        "add_broadcast_tangent": lambda: z() + c[0],
        "add_0d_tangent": lambda: z() + s,
        "add_broadcast_result": lambda: m.zeros(2, 2, 3, 1, dtype=d) + u,
        "add_transposed": lambda: m.zeros(2, 3, dtype=d) + t,
        "add_bigger_storage": lambda: k() + big,
        "where_self": lambda: u.where(k() > 0, z()),
        "where_other": lambda: k().where(z() > 0, u),
        "where_number": lambda: m.where(k() > 0, 1.0, u),
        "clamp_self": lambda: u.clamp(min=k()),
        "clamp_max": lambda: k().clamp(max=u),
        "clamp_both": lambda: k().clamp(u, u + 1),
        "lerp_end": lambda: m.lerp(z(), u, 0.3),
        "lerp_weight_tensor": lambda: m.lerp(z(), u, k()),
        "addcmul_self": lambda: m.addcmul(u, z(), z()),
        "addcmul_tensor1": lambda: m.addcmul(z(), u, z()),
        "addcdiv_self": lambda: m.addcdiv(u, z(), z() + 1),
        "mul": lambda: u * k(),
        "mul_number": lambda: u * 2,
        "neg": lambda: -u,
        "hardtanh": lambda: m.nn.functional.hardtanh(u),
        "clone": lambda: u.clone(),
        "add_": lambda: z().clone().add_(u),
        "mul_": lambda: k().mul_(u),
        "sub_bigger_storage_": lambda: z().clone().sub_(big),
        "copy_": lambda: k().copy_(u),
        "copy_bigger_storage": lambda: k().copy_(big),
        "copy_transposed": lambda: m.zeros(2, 3, dtype=d).copy_(t),
        "make_dual_size1_strides": lambda: f.make_dual(k(), z()),
        "make_dual_bigger_storage": lambda: f.make_dual(
            m.zeros(2, 3, dtype=d), m.ones(4, 3, dtype=d)[:2]
        ),
    }


def _case_names(cases) -> list:
    """The names of a table of cases that must be built inside a dual level."""
    with lg.autograd.forward_ad.dual_level():
        return sorted(cases(lg, lg.autograd.forward_ad))


@pytest.mark.parametrize("case", _case_names(_layout_cases))
def test_tangent_layouts(case):
    def fn(m):
        f = m.autograd.forward_ad
        with f.dual_level():
            r = _layout_cases(m, f)[case]()
            tangent = f.unpack_dual(r).tangent
            return r.stride(), tangent.stride(), tangent.storage_offset()

    both(fn)


def test_make_dual_keeps_a_tangent_that_differs_on_size1_dims_only():
    def fn(m):
        f = m.autograd.forward_ad
        with f.dual_level():
            given = m.zeros(2, 3, dtype=m.float64).unfold(0, 1, 1)
            kept = f.unpack_dual(f.make_dual(m.zeros(2, 3, 1, dtype=m.float64), given)).tangent
            bigger = m.ones(4, 3, dtype=m.float64)[:2]
            copied = f.unpack_dual(f.make_dual(m.zeros(2, 3, dtype=m.float64), bigger)).tangent
            return kept is given, kept.stride(), copied is bigger, copied._base is None

    both(fn)


# Note [Forward AD not implemented]: what PyTorch refuses (or gives no tangent) in forward mode;
# each case returns the tangent of its result, or raises.
def _support_cases(m, f):
    d64 = m.float64
    F = m.nn.functional

    def d(*shape):
        p = m.linspace(0.6, 1.4, int(np.prod(shape)), dtype=d64).reshape(shape)
        return f.make_dual(p, m.ones_like(p) * 0.5)

    eye = m.eye(2, dtype=d64)
    return {
        "acosh_": lambda: (d(3) + 1).acosh_(),
        "asinh_": lambda: d(3).clone().asinh_(),
        "arctanh_": lambda: (d(3) * 0.5).arctanh_(),
        "igamma_": lambda: d(3).clone().igamma_(d(3)),
        "heaviside_": lambda: d(3).clone().heaviside_(d(3)),
        "floor_divide_": lambda: d(3).clone().floor_divide_(d(3)),
        "bitwise_and_float": lambda: d(3).clone().bitwise_and_(d(3)),
        "index_reduce_": lambda: d(3).clone().index_reduce_(0, m.tensor([0, 1]), d(2), "prod"),
        "rrelu_": lambda: F.rrelu_(d(3).clone()),
        "bernoulli_p": lambda: m.bernoulli(d(3), 0.5),
        "bernoulli_probs": lambda: m.bernoulli(d(3) * 0.5) * 0,
        "binomial": lambda: m.binomial(d(3) * 3, d(3) * 0.5),
        "cdist": lambda: m.cdist(d(2, 3), d(2, 3)),
        "pdist": lambda: F.pdist(d(3, 2)),
        "heaviside": lambda: m.heaviside(d(3), d(3)),
        "igamma": lambda: m.igamma(d(3), d(3)),
        "igammac_plain_other": lambda: m.igammac(d(3), m.ones(3, dtype=d64)),
        "special_zeta": lambda: m.special.zeta(d(3) + 1, 2.0),
        "floor_divide": lambda: m.floor_divide(d(3), d(3)),
        "floor_divide_number": lambda: d(3) // 2,
        "detach_copy": lambda: m.detach_copy(d(3)),
        "histogram": lambda: m.histogram(d(3)).hist,
        "cholesky": lambda: m.cholesky(d(2, 2) @ d(2, 2).mT + eye),
        "geqrf": lambda: m.geqrf(d(3, 3))[0],
        "ormqr": lambda: m.ormqr(d(3, 3), d(3), d(3, 3)),
        "embedding_bag": lambda: F.embedding_bag(m.tensor([[0, 1]]), d(3, 2)),
        "grid_sample": lambda: F.grid_sample(
            d(1, 1, 3, 3), d(1, 2, 2, 2) * 0.5, align_corners=False
        ),
        "multi_margin_loss": lambda: F.multi_margin_loss(d(2, 3), m.tensor([0, 2])),
        "multilabel_margin_loss": lambda: F.multilabel_margin_loss(
            d(2, 3), m.tensor([[0, -1, 1], [2, -1, 0]])
        ),
        "native_channel_shuffle": lambda: m.native_channel_shuffle(d(1, 4, 2), 2),
        "channel_shuffle": lambda: F.channel_shuffle(d(1, 4, 2), 2),
        "ctc_loss": lambda: F.ctc_loss(
            d(5, 1, 3).log_softmax(2), m.tensor([[1, 2]]), [5], [2], reduction="sum"
        ),
        "unique": lambda: m.unique(d(3)),
        "index_reduce": lambda: d(3).index_reduce(0, m.tensor([0, 1]), d(2), "prod"),
        "weight_norm": lambda: m._weight_norm(d(2, 3), d(2, 1)),
        "histc_no_tangent": lambda: m.histc(d(3)),
        "bessel_j0_no_tangent": lambda: m.special.bessel_j0(d(3)),
        "lu_permutation_no_tangent": lambda: m.linalg.lu(d(2, 2) + eye)[0],
        "lu_factor_pivots": lambda: m.linalg.lu_factor(d(2, 2) + eye)[0],
        "max_unpool1d": lambda: F.max_unpool1d(
            *F.max_pool1d(d(1, 1, 4), 2, return_indices=True), 2
        ),
        "max_unpool2d": lambda: F.max_unpool2d(
            *F.max_pool2d(d(1, 1, 2, 2), 2, return_indices=True), 2
        ),
        "t_copy": lambda: m.t_copy(d(2, 3)),
        "diagonal_copy": lambda: m.diagonal_copy(d(2, 3)),
        "unbind_copy": lambda: m.unbind_copy(d(2, 3))[1],
        "slice_copy": lambda: m.slice_copy(d(4), 0, 1, 3),
        "expand_copy": lambda: m.expand_copy(d(3), (2, 3)),
        "squeeze_copy": lambda: m.squeeze_copy(d(1, 3)),
    }


@pytest.mark.parametrize("case", _case_names(_support_cases))
def test_ops_without_forward_formulas(case):
    def fn(m):
        f = m.autograd.forward_ad
        with f.dual_level():
            r = _support_cases(m, f)[case]()
            tangent = f.unpack_dual(r).tangent
            return r, tangent

    both(fn)


@pytest.mark.parametrize("method", ["acosh_", "igamma_", "heaviside_", "floor_divide_"])
def test_inplace_refusals_before_or_after_the_write(method):
    """An in-place op with a backward formula only writes its values (the version moves, the
    tangent stays) before PyTorch refuses; one without a derivative refuses first."""

    def fn(m):
        f = m.autograd.forward_ad
        with f.dual_level():
            x = f.make_dual(m.ones(3, dtype=m.float64) * 2, m.ones(3, dtype=m.float64))
            args = () if method == "acosh_" else (m.full((3,), 0.5, dtype=m.float64),)
            try:
                getattr(x, method)(*args)
            except NotImplementedError as e:
                return str(e), x._version, f.unpack_dual(x)

    both(fn)


# Note [Forward formulas]: PyTorch's forward formulas at ties, bounds and NaNs, where they read
# the points otherwise than its backward formulas do.
_TIE_X = [-2.0, -1.0, -0.5, 0.0, 0.0, 0.5, 1.0, 2.0, float("nan"), -0.0]
_TIE_Y = [-2.0, 0.0, -0.5, 0.0, 1.0, 0.5, -1.0, 3.0, 1.0, 0.0]
_TIES = {
    "clamp_min_tensor": lambda m, x, y: x.clamp(min=y),
    "clamp_max_tensor": lambda m, x, y: x.clamp(max=y),
    "clamp_both": lambda m, x, y: x.clamp(y, y + 0.5),
    "clamp_both_equal": lambda m, x, y: x.clamp(y, y),
    "clamp_inverted": lambda m, x, y: x.clamp(y + 1, y),
    "clamp_min_fn": lambda m, x, y: m.clamp_min(x, y),
    "clamp_max_fn": lambda m, x, y: m.clamp_max(x, y),
    "clamp_plain_bound": lambda m, x, y: x.clamp(min=y.detach()),
    "clamp_scalar": lambda m, x, y: x.clamp(-0.5, 0.5),
    "maximum": lambda m, x, y: m.maximum(x, y),
    "minimum": lambda m, x, y: m.minimum(x, y),
    "max_binary": lambda m, x, y: m.max(x, y),
    "fmax": lambda m, x, y: m.fmax(x, y),
    "fmin": lambda m, x, y: m.fmin(x, y),
    "fmax_plain_other": lambda m, x, y: m.fmax(x, y.detach()),
    "prelu": lambda m, x, y: m.nn.functional.prelu(x, m.tensor([0.25], dtype=m.float64)),
    "softshrink": lambda m, x, y: m.nn.functional.softshrink(x, 0.5),
    "copysign": lambda m, x, y: m.copysign(x, y),
    "hardtanh": lambda m, x, y: m.nn.functional.hardtanh(x, -0.5, 0.5),
    "relu": lambda m, x, y: x.relu(),
    "abs": lambda m, x, y: x.abs(),
    "max_all": lambda m, x, y: x.max(),
    "max_all_without_nan": lambda m, x, y: y.max(),
    "min_all_ties": lambda m, x, y: m.stack([y, y]).min(),
    "fmod_number": lambda m, x, y: m.fmod(x, 0.5),
    "remainder_number": lambda m, x, y: x % 0.3,
    "fmod_plain_other": lambda m, x, y: m.fmod(x, y.detach() + 3),
    "lerp_plain_weight": lambda m, x, y: m.lerp(x, y, m.tensor(_TIE_X).nan_to_num().double()),
    "lerp_number": lambda m, x, y: m.lerp(x, y, 0.25),
    "norm1": lambda m, x, y: x.norm(1),
    "atan2_at_zero": lambda m, x, y: m.atan2(x * 0, y * 0),
    "atan2_plain_other": lambda m, x, y: m.atan2(x, y.detach() + 1),
    "max_pool1d": lambda m, x, y: m.nn.functional.max_pool1d(
        m.stack([x, y]).nan_to_num().unsqueeze(0), 2
    ),
    # an operand without a tangent drops its term: no NaN from a NaN or infinite partial
    "div_plain_other": lambda m, x, y: x / (y.detach() + 5),
    "div_number": lambda m, x, y: x / 2.0,
    "div_dual_other": lambda m, x, y: y / (x + 3),
    "div_plain_self": lambda m, x, y: x.detach() / (y + 3),
    "pow_plain_exponent": lambda m, x, y: x.abs().pow(y.detach()),
    "pow_plain_base": lambda m, x, y: x.detach().abs().pow(y),
    "addcmul_plain_tensors": lambda m, x, y: x.addcmul(y.detach(), x.detach()),
    "addcdiv_plain_tensors": lambda m, x, y: x.addcdiv(y.detach(), x.detach()),
    "copysign_dual_other_only": lambda m, x, y: m.copysign(x.detach(), y),
    "fmax_nan_tangent": lambda m, x, y: m.fmax(x.max(), y),
    "median_nan": lambda m, x, y: x.median(),
    "median_ties": lambda m, x, y: y.median(),
    "nanmedian": lambda m, x, y: x.nanmedian(),
    "nan_to_num_of_nan_tangent": lambda m, x, y: (x.max() + y).nan_to_num(),
}


@pytest.mark.parametrize("case", sorted(_TIES))
def test_forward_formulas_at_ties_and_nans(case):
    def fn(m):
        f = m.autograd.forward_ad
        with f.dual_level():
            x = f.make_dual(m.tensor(_TIE_X, dtype=m.float64), m.arange(1.0, 11.0, dtype=m.float64))
            y = f.make_dual(
                m.tensor(_TIE_Y, dtype=m.float64), m.arange(10.0, 110.0, 10.0, dtype=m.float64)
            )
            r = _TIES[case](m, x, y)
            return r, f.unpack_dual(r).tangent

    both(fn)


@pytest.mark.parametrize(
    "case",
    ["softshrink", "copysign", "prelu", "fmax", "maximum", "max_all", "fmod_number", "norm1"]
    + ["lerp_plain_weight", "clamp_both", "fmod_plain_other"],
)
def test_backward_at_ties_and_nans(case):
    """Reverse mode keeps the backward formulas' reading of the same points."""

    def fn(m):
        x = m.tensor(_TIE_X, dtype=m.float64, requires_grad=True)
        y = m.tensor(_TIE_Y, dtype=m.float64, requires_grad=True)
        r = _TIES[case](m, x, y)
        return r, m.autograd.grad(r.sum(), (x, y), allow_unused=True)

    both(fn)


@pytest.mark.parametrize("case", ["cdist", "acosh_", "heaviside_"])
def test_no_refusal_under_inference_mode(case):
    """PyTorch's inference mode skips forward AD: nothing is refused there."""

    def fn(m):
        f = m.autograd.forward_ad
        with f.dual_level():
            x = f.make_dual(m.ones(2, 3, dtype=m.float64) * 2, m.ones(2, 3, dtype=m.float64))
            with m.inference_mode():
                if case == "cdist":
                    r = m.cdist(x, x)
                elif case == "acosh_":
                    r = x.acosh_()
                else:
                    r = x.heaviside_(m.ones(2, 3, dtype=m.float64))
            return r, x._version, f.unpack_dual(x).tangent

    both(fn)


def test_copysign_of_nan_keeps_the_sign():
    def fn(m):
        x = m.tensor([float("nan"), float("inf"), -0.0, 1.0], dtype=m.float64, requires_grad=True)
        r = m.copysign(x, m.tensor(-1.0, dtype=m.float64))
        (g,) = m.autograd.grad(r.sum(), x)
        return np.signbit(r.detach().numpy()).tolist(), g

    both(fn)


_EIG_A = np.array([[2.0, -1.0, 0.5], [0.3, 1.0, 2.0], [-1.5, 0.7, 0.2]])
_EIG_T = np.array([[0.4, 1.0, -0.2], [0.0, -0.6, 0.9], [1.1, 0.25, -0.3]])


@pytest.mark.parametrize("complex_input", [False, True])
@pytest.mark.parametrize("batch", [(), (2,)])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_eig_tangents(dtype, batch, complex_input):
    """``linalg.eig``'s tangents are PyTorch's ``linalg_eig_jvp`` (complex values and vectors;
    each vector's phase is fixed first, as LAPACK leaves it free); ``eigvals`` and a loss read
    from them carry the values' tangent."""
    A, T = _EIG_A, _EIG_T
    if complex_input:
        A, T = A + 0.5j * A.T, T - 0.25j * T.T
    if batch:
        A, T = np.stack([A, A.T]), np.stack([T, -T])

    def fn(m):
        fwAD = m.autograd.forward_ad
        with fwAD.dual_level():
            dt = getattr(m, dtype).to_complex() if complex_input else getattr(m, dtype)
            d = fwAD.make_dual(m.tensor(A).to(dt), m.tensor(T).to(dt))
            L, V = m.linalg.eig(d)
            phase = V[..., :1, :].conj() / V[..., :1, :].abs()
            vals = m.linalg.eigvals(d)
            loss = vals.abs().sum()
            return (
                L,
                _tangent(m, L),
                V * phase,
                _tangent(m, V) * phase,
                _tangent(m, vals),
                _tangent(m, loss),
            )

    both(fn, atol=1e-4 if dtype == "float32" else 1e-10)


@pytest.mark.parametrize("uplo", ["L", "U"])
@pytest.mark.parametrize("complex_input", [False, True])
def test_eigh_tangents_read_the_whole_tangent(complex_input, uplo):
    """``linalg.eigh``/``eigvalsh``: PyTorch's forward formula reads the whole tangent, where
    the value reads one triangle of the matrix (a tangent that is not Hermitian)."""
    A = _EIG_A + _EIG_A.T
    T = _EIG_T
    if complex_input:
        A, T = A + 0.5j * (_EIG_T - _EIG_T.T), T + 0.25j * T.T

    def fn(m):
        fwAD = m.autograd.forward_ad
        with fwAD.dual_level():
            d = fwAD.make_dual(m.tensor(A), m.tensor(T))
            L, V = m.linalg.eigh(d, UPLO=uplo)
            phase = V[..., :1, :].conj() / V[..., :1, :].abs()
            vals = m.linalg.eigvalsh(d, UPLO=uplo)
            return L, _tangent(m, L), V * phase, _tangent(m, V) * phase, _tangent(m, vals)

    both(fn, atol=1e-12)


def _whole_tangent_cases(m, A, T, B, TB):
    """Each returns the outputs of one call on a dual ``A`` (and ``B`` when ``TB`` is given)."""
    fwAD = m.autograd.forward_ad
    eye = np.eye(A.shape[-1])
    H = np.conj(np.swapaxes(A, -1, -2))
    spd = A @ H + 3 * eye
    tri = A - eye * 1j * np.imag(np.diagonal(A, axis1=-2, axis2=-1))[..., None, :] + 4 * eye
    tri = tri if np.iscomplexobj(A) else np.real(tri)

    def d(a):
        return fwAD.make_dual(m.tensor(a), m.tensor(T[..., : a.shape[-2], :]))

    def b():
        return m.tensor(B) if TB is None else fwAD.make_dual(m.tensor(B), m.tensor(TB))

    cases = {
        "pinv_hermitian": lambda: m.linalg.pinv(d(spd), hermitian=True),
        "pinv": lambda: m.linalg.pinv(d(A)),
        "pinv_wide": lambda: m.linalg.pinv(d(A[..., :2, :])),
        "cholesky_solve": lambda: m.cholesky_solve(b(), d(tri)),
    }
    for up in (False, True):
        cases[f"cholesky_{up}"] = lambda up=up: m.linalg.cholesky(d(spd), upper=up)
        cases[f"cholesky_ex_{up}"] = lambda up=up: m.linalg.cholesky_ex(d(spd), upper=up)[0]
        cases[f"cholesky_inverse_{up}"] = lambda up=up: m.cholesky_inverse(d(tri), upper=up)
        cases[f"eigvalsh_{up}"] = lambda up=up: m.linalg.eigvalsh(d(spd), UPLO="U" if up else "L")
        for tr, unit in [(False, False), (True, False), (False, True), (True, True)]:
            cases[f"triangular_solve_{up}_{tr}_{unit}"] = lambda up=up, tr=tr, unit=unit: tuple(
                m.triangular_solve(b(), d(tri), upper=up, transpose=tr, unitriangular=unit)
            )
    return cases


@pytest.mark.parametrize("dual_b", [False, True])
@pytest.mark.parametrize("batch", [(), (2,)])
@pytest.mark.parametrize("complex_input", [False, True])
def test_whole_tangent_formulas(complex_input, batch, dual_b):
    """Note [Whole tangents]: the decompositions and solves that read one triangle take
    PyTorch's forward formulas, which read the whole tangent (a tangent that is neither
    Hermitian nor triangular here)."""
    rng = np.random.default_rng(7)

    def mk(*shape):
        a = rng.standard_normal(batch + shape)
        return a + 1j * rng.standard_normal(batch + shape) if complex_input else a

    A, T, B, TB = mk(3, 3), mk(3, 3), mk(3, 2), mk(3, 2)
    TB = TB if dual_b else None

    def fn(m):
        results = {}
        with m.autograd.forward_ad.dual_level():
            for name, call in _whole_tangent_cases(m, A, T, B, TB).items():
                outs = call()
                outs = outs if isinstance(outs, tuple) else (outs,)
                results[name] = [(o.detach(), _tangent(m, o)) for o in outs]
        return results

    both(fn, atol=1e-9)


_FUNC_FORWARD = {
    "eigvals": (_EIG_A, lambda m, x: m.linalg.eigvals(x)),
    "eig_vectors_phase_fixed": (
        _EIG_A,
        lambda m, x: (lambda V: V * V[..., :1, :].conj() / V[..., :1, :].abs())(m.linalg.eig(x)[1]),
    ),
    "max_unpool": (_EIG_A, lambda m, x: m.nn.functional.max_unpool1d(x, m.tensor([[0, 2]] * 3), 2)),
    "clamp_tie": (_EIG_A, lambda m, x: m.clamp(x, min=m.tensor(_EIG_A[0]))),
    "atan2_zero": (_EIG_A * 0, lambda m, x: m.atan2(x, x)),
    "cholesky": (_EIG_A @ _EIG_A.T + 3 * np.eye(3), lambda m, x: m.linalg.cholesky(x)),
    "eigh": (_EIG_A + _EIG_A.T, lambda m, x: m.linalg.eigh(x)[0]),
    "pinv_hermitian": (_EIG_A + _EIG_A.T, lambda m, x: m.linalg.pinv(x, hermitian=True)),
    "cholesky_inverse": (_EIG_A + 3 * np.eye(3), lambda m, x: m.cholesky_inverse(x)),
}


@pytest.mark.parametrize("transform", ["jvp", "jacfwd"])
@pytest.mark.parametrize("case", sorted(_FUNC_FORWARD))
def test_func_forward_transforms_take_forward_formulas(case, transform):
    """torch.func's forward-mode transforms give the tangents dual tensors give: PyTorch's forward
    formulas (Note [Forward formulas]), JAX's custom-VJP-only ops included."""
    A, f = _FUNC_FORWARD[case]

    def fn(m):
        x = m.tensor(A)
        if transform == "jvp":
            return m.func.jvp(lambda x: f(m, x), (x,), (m.tensor(_EIG_T),))
        if case.startswith("eig"):  # jacfwd refuses complex outputs: their real parts
            return m.func.jacfwd(lambda x: m.view_as_real(f(m, x)))(x)
        return m.func.jacfwd(lambda x: f(m, x))(x)

    both(fn, atol=1e-10)


def _dual_reads_cases(m, d, p):
    """Ops whose forward formula reads an operand it does not differentiate; ``d(x)`` makes a
    dual, ``p(x)`` a plain tensor."""
    F = m.nn.functional
    x, t, w = [0.5, -1.0, 2.0], [1.0, 0.0, 0.5], [1.0, 2.0, 0.5]
    xs = [[0.5, -1.0, 2.0], [0.3, 0.2, -0.4]]
    return {
        "bce_logits_pos_weight": lambda: F.binary_cross_entropy_with_logits(
            d(x), p(t), pos_weight=d(w)
        ),
        "bce_logits_weight_dual_target": lambda: F.binary_cross_entropy_with_logits(
            p(x), d(t), weight=d(w)
        ),
        "bce_logits_weights_only": lambda: F.binary_cross_entropy_with_logits(
            p(x), p(t), weight=d(w), pos_weight=d(w)
        ),
        "bce_logits_plain_weight": lambda: F.binary_cross_entropy_with_logits(
            d(x), d(t), weight=p(w), pos_weight=p(w)
        ),
        "soft_margin_both": lambda: F.soft_margin_loss(d(x), d([1.0, -1.0, 1.0])),
        "soft_margin_target": lambda: F.soft_margin_loss(p(x), d([1.0, -1.0, 1.0])),
        "batch_norm_eval_dual_mean": lambda: F.batch_norm(d(xs), d(w), p(w)),
        "batch_norm_eval_dual_var_weight": lambda: F.batch_norm(p(xs), p(w), d(w), d(w)),
        "batch_norm_eval_stats_only": lambda: F.batch_norm(p(xs), d(w), d(w)),
        "batch_norm_train_dual_stats": lambda: F.batch_norm(d(xs), d(w), d(w), training=True),
    }


@pytest.mark.parametrize("case", _case_names(lambda m, f: _dual_reads_cases(m, f, f)))
def test_formulas_reading_dual_operands(case):
    """PyTorch's errors where a forward formula reads a dual operand it does not differentiate
    (a nested tangent, ``soft_margin_loss_backward``'s refusal, batch norm's running
    statistics); tangents where it does not."""

    def fn(m):
        fwAD = m.autograd.forward_ad

        def d(v):
            v = m.tensor(v, dtype=m.float64)
            return fwAD.make_dual(v, m.ones_like(v) * 0.3)

        def p(v):
            return m.tensor(v, dtype=m.float64)

        with fwAD.dual_level():
            out = _dual_reads_cases(m, d, p)[case]()
            return out, _tangent(m, out)

    both(fn)


_REVIEWED = {
    # an integer or bool tensor2 meets the Scalar value in the result dtype
    "addcmul_int_tensor2_grad": lambda m: _grad_of(
        m, lambda t: m.addcmul(m.zeros(2), t, m.tensor([2, 4]), value=0.5), [1.0, 2.0]
    ),
    "addcmul_bool_tensor2_grad": lambda m: _grad_of(
        m, lambda t: m.addcmul(m.zeros(2), t, m.tensor([True, False]), value=3), [1.0, 2.0]
    ),
    # forward formulas compute in the result dtype
    "addcmul_mixed_precision_tangent": lambda m: _tangent_of(
        m,
        lambda d: m.addcmul(
            m.zeros(1, dtype=m.float64), d, m.tensor([3.0], dtype=m.float32), value=0.1
        ),
        [1.0],
    ),
    "addcdiv_mixed_precision_tangent": lambda m: _tangent_of(
        m,
        lambda d: m.addcdiv(
            m.zeros(1, dtype=m.float64), d, m.tensor([3.0], dtype=m.float32), value=0.1
        ),
        [1.0],
    ),
    "func_jvp_div_tiny_divisor": lambda m: m.func.jvp(
        m.div, (m.tensor([1.0]), m.tensor([1e-30])), (m.tensor([2.0]), m.tensor([1e-30]))
    ),
    "median_float32_tangent": lambda m: _tangent_of(
        m, lambda d: d.median(), [2.0, 1.0, 2.0, 2.0, 0.0], [5.0, 2.0, 2.0, 3.0, 4.0]
    ),
    "pinv_jvp_inside_grad": lambda m: m.func.grad(
        lambda x: m.func.jvp(lambda a: m.linalg.pinv(a).sum(), (x,), (m.ones(2, 2),))[1]
    )(m.tensor([[2.0, 1.0], [0.5, 3.0]])),
}


def _grad_of(m, f, values):
    t = m.tensor(values, requires_grad=True)
    f(t).sum().backward()
    return t.grad


def _tangent_of(m, f, values, tangent=None):
    fwAD = m.autograd.forward_ad
    with fwAD.dual_level():
        v = m.tensor(values, dtype=m.float64 if tangent is None else m.float32)
        d = fwAD.make_dual(v, m.ones_like(v) if tangent is None else m.tensor(tangent))
        return fwAD.unpack_dual(f(d)).tangent


@pytest.mark.parametrize("case", sorted(_REVIEWED))
def test_mixed_dtypes_and_nested_transforms(case):
    # (pinv's values round otherwise than LAPACK's in float32: the case is that it runs)
    exact = {} if case.startswith("pinv") else {"rtol": 0, "atol": 0}
    both(lambda m: _REVIEWED[case](m), **exact)
