"""Differential tests of the special functions (leafgrad/ops/special_ops.py, leafgrad/special.py)
against PyTorch: values, dtypes, ``grad_fn`` names, gradients (``backward`` and
``autograd.grad``), saved-tensor errors, in-place variants and error texts."""

# ruff: noqa: B023 - the loops' closures are called by ``both`` at once, inside the iteration
from __future__ import annotations

import numpy as np
from conftest import both, lg

POS = [0.5, 1.25, 2.0, 3.5, 0.75, 1.5]
MIXED = [0.5, -1.25, 2.0, 0.0, -0.75, 1.5]
UNIT = [0.1, 0.25, 0.5, 0.75, 0.9, 0.6]


def _t(m, vals, dtype="float32", rg=False, shape=(2, 3)):
    t = m.tensor(vals, dtype=getattr(m, dtype))
    if shape is not None and t.numel() == 6:
        t = t.reshape(shape)
    return t.requires_grad_() if rg else t


def _grads(m, out, inputs):
    """Values, then gradients of a weighted sum by backward and by autograd.grad."""
    if not out.requires_grad or out.is_complex():
        return [out]
    w = m.arange(1, out.numel() + 1, dtype=out.dtype).reshape(out.shape) / 7
    inputs = [t for t in inputs if isinstance(t, m.Tensor) and t.requires_grad]
    gs = m.autograd.grad((out * w).sum(), inputs, retain_graph=True)
    (out * w).sum().backward()
    return [out, *gs, *[t.grad for t in inputs]]


UNARY = {
    # name: (function of (module, x), input values)
    "i0": (lambda m, x: m.i0(x), MIXED),
    "Tensor.i0": (lambda m, x: x.i0(), MIXED),
    "sinc": (lambda m, x: m.sinc(x), MIXED),
    "polygamma0": (lambda m, x: m.polygamma(0, x), POS),
    "polygamma1": (lambda m, x: m.polygamma(1, x), POS),
    "polygamma3": (lambda m, x: x.polygamma(3), POS),
    "mvlgamma": (lambda m, x: m.mvlgamma(x + 1, 3), POS),
    "Tensor.mvlgamma": (lambda m, x: x.mvlgamma(1), POS),
    **{
        "special." + n: (lambda m, x, n=n: getattr(m.special, n)(x), vals)
        for n, vals in [
            ("expit", MIXED),
            ("logit", UNIT),
            ("erf", MIXED),
            ("erfc", MIXED),
            ("erfinv", [v - 0.5 for v in UNIT]),
            ("erfcx", MIXED),
            ("exp2", MIXED),
            ("expm1", MIXED),
            ("log1p", POS),
            ("gammaln", POS),
            ("digamma", POS),
            ("psi", POS),
            ("sinc", MIXED),
            ("round", MIXED),
            ("entr", POS),
            ("ndtr", MIXED),
            ("ndtri", UNIT),
            ("log_ndtr", MIXED),
            ("i0", MIXED),
            ("i0e", MIXED),
            ("i1", MIXED),
            ("i1e", MIXED),
        ]
    },
    "special.logit_eps": (lambda m, x: m.special.logit(x, eps=0.2), UNIT),
    "special.round_dec": (lambda m, x: m.special.round(x * 3.3, decimals=1), MIXED),
    "special.polygamma": (lambda m, x: m.special.polygamma(2, x), POS),
    "special.multigammaln": (lambda m, x: m.special.multigammaln(x + 1, 2), POS),
    "special.softmax": (lambda m, x: m.special.softmax(x, 1), MIXED),
    "special.softmax_dtype": (lambda m, x: m.special.softmax(x, 0, dtype=m.float64), MIXED),
    "special.log_softmax": (lambda m, x: m.special.log_softmax(x, 0), MIXED),
    "special.logsumexp": (lambda m, x: m.special.logsumexp(x, 1, keepdim=True), MIXED),
}


# digamma/psi compared with a looser float64 tolerance (their gradients are checked exactly against
# ATen's trigamma in tests/test_small_fixes.py)
LOOSE64 = {"special.digamma", "special.psi"}


def test_unary_values_names_and_gradients():
    for name, (fn, vals) in UNARY.items():

        def run(m):
            x = _t(m, vals, "float64", rg=True)
            return _grads(m, fn(m, x), [x]), fn(m, _t(m, vals, "float32"))

        both(run, **({"rtol": 1e-9} if name in LOOSE64 else {}))
        # integer and bool inputs: the default float dtype, or PyTorch's kernel error
        ints = [int(abs(v) * 2) + 1 for v in vals]
        both(lambda m: fn(m, _t(m, ints, "int64")))
        both(lambda m: fn(m, _t(m, [v > 0.6 for v in vals], "bool")))
        both(lambda m: fn(m, _t(m, vals, "complex64")))
        if name != "special.round_dec":  # elementwise.py's half-precision rounding with decimals
            both(lambda m: fn(m, _t(m, vals, "float16")), rtol=5e-3, atol=5e-3)


def test_unary_shapes_and_bad_input():
    for name, (fn, vals) in UNARY.items():
        if "softmax" in name or "logsumexp" in name:
            continue
        both(lambda m: _grads(m, fn(m, m.tensor(vals[1], requires_grad=True)), []))
        both(lambda m: fn(m, m.zeros(0, 3)))
    for call in [
        lambda m: m.special.entr("a"),
        lambda m: m.special.expit([1.0]),
        lambda m: m.special.logit(m.ones(2), "a"),
        lambda m: m.special.round(m.ones(2), 2),
        lambda m: m.special.softmax(m.ones(2)),
        lambda m: m.special.polygamma("a", m.ones(2)),
        lambda m: m.special.polygamma(1, "a"),
        lambda m: m.special.multigammaln(m.ones(2), 1.5),
        lambda m: m.polygamma(-1, m.ones(2)),
        lambda m: m.polygamma(1.5, m.ones(2)),
        lambda m: m.ones(2).polygamma("a"),
        lambda m: m.polygamma(m.tensor(2), m.ones(2) * 3),
        lambda m: m.mvlgamma(m.ones(2) * 3, 0),
        lambda m: m.mvlgamma(m.ones(2, dtype=m.bool), 1),
        lambda m: m.ones(2).mvlgamma(1.5),
        lambda m: m.mvlgamma(m.ones(2) * 3, 2.0),
        lambda m: m.i0("a"),
        lambda m: m.sinc(3),
    ]:
        both(call)


def test_special_namespace_aliases_record_torchs_nodes():
    def run(m):
        x = _t(m, UNIT, rg=True)
        S = m.special
        outs = [
            S.expit(x),
            S.gammaln(x),
            S.psi(x),
            S.multigammaln(x + 1, 1),
            S.round(x),
            S.xlogy(x, x),
            S.ndtr(x),
            S.logit(input=x),
        ]
        names = [type(o.grad_fn).__name__ for o in outs]
        chain, node = [], outs[6].grad_fn
        while node is not None and node.next_functions:
            chain.append(node.name())
            node = node.next_functions[0][0]
        return names, chain

    both(run)


def _binary_case(m, fn, a, b, da, db):
    x = _t(m, a, da, rg=da.startswith("float")) if isinstance(a, list) else a
    y = _t(m, b, db, rg=db.startswith("float")) if isinstance(b, list) else b
    return _grads(m, fn(m, x, y), [x, y])


BINARY = {
    "xlogy": (lambda m, a, b: m.xlogy(a, b), [0.0, 1.5, 0.0, 2.0, -1.0, 0.0], MIXED),
    "Tensor.xlogy": (lambda m, a, b: a.xlogy(b), MIXED, POS),
    "special.xlogy": (lambda m, a, b: m.special.xlogy(a, b), MIXED, POS),
    "xlog1py": (
        lambda m, a, b: m.special.xlog1py(a, b),
        [0.0, 1.5, 0.0, 2.0, -1.0, 0.0],
        [0.5, -1.0, -2.0, 0.0, 1.5, -1.0],
    ),
    "nextafter": (lambda m, a, b: m.nextafter(a, b), MIXED, [0.5, 1.0, -3.0, 0.0, 2.0, 1.5]),
    "logaddexp2": (lambda m, a, b: m.logaddexp2(a, b), MIXED, [0.5, 1.0, -3.0, 0.0, 2.0, 1.5]),
    "ldexp": (lambda m, a, b: m.ldexp(a, b), MIXED, [1.0, -2.0, 0.5, 3.0, 0.0, -1.5]),
    "zeta": (lambda m, a, b: m.special.zeta(a, b), [2.0, 3.5, 1.5, 4.0, 2.5, 6.0], POS),
}


def test_binary_values_names_and_gradients():
    # zeta first with only ``other`` requiring grad: PyTorch refuses ``self``'s derivative
    both(lambda m: _binary_case(m, BINARY["zeta"][0], BINARY["zeta"][1], POS, "int64", "float64"))
    for name, (fn, a, b) in BINARY.items():
        pairs = [("float64", "float32"), ("int64", "float64"), ("float32", "int64")]
        pairs += [("int64", "bool"), ("complex64", "float32"), ("float16", "float16")]
        for da, db in pairs:
            if name == "zeta" and da.startswith("float"):
                continue
            tol = {"rtol": 5e-3, "atol": 5e-3} if "float16" in (da, db) else {}
            both(lambda m: _binary_case(m, fn, a, b, da, db), **tol)
        both(lambda m: fn(m, m.ones(2), m.ones(3)))
        both(lambda m: fn(m, m.ones(2), "a"))
        both(lambda m: fn(m, m.zeros(0, 2), m.ones(2)))
        both(lambda m: _grads(m, fn(m, m.tensor(1.5, requires_grad=True), m.tensor(2.0)), []))


def test_number_operands():
    for fn in [
        lambda m, x: m.xlogy(x, 2),
        lambda m, x: m.xlogy(2.5, x),
        lambda m, x: m.xlogy(0, x),
        lambda m, x: x.xlogy(-1.5),
        lambda m, x: m.special.xlogy(x, 0.0),
        lambda m, x: m.special.xlog1py(x, -1),
        lambda m, x: m.special.xlog1py(0.5, x),
        lambda m, x: m.special.zeta(2.0, x + 1),
        lambda m, x: m.xlogy(x, 1j),
        lambda m, x: m.xlogy(x, "a"),
        lambda m, x: m.special.zeta("a", x),
        lambda m, x: x.xlogy("a"),
        lambda m, x: m.nextafter(x, 1.0),
        lambda m, x: m.heaviside(x, 1),
        lambda m, x: x.ldexp(2),
        lambda m, x: x.logaddexp2(2),
    ]:
        for dtype in ("float64", "int64"):

            def run(m):
                x = _t(m, [0.0, 0.5, 1.5, 2.0, 0.0, 3.0], dtype, rg=dtype.startswith("float"))
                return _grads(m, fn(m, x), [x])

            both(run)


def test_refused_derivatives():
    def heaviside(m, a_rg, b_rg, inplace=False):
        x = _t(m, MIXED, rg=a_rg)
        v = _t(m, POS, rg=b_rg)
        out = (x * 1).heaviside_(v) if inplace else m.heaviside(x, v)
        fns = [None if f is None else f.name() for f, _ in out.grad_fn.next_functions]
        out.sum().backward()
        return out, fns

    for a_rg, b_rg in [(True, False), (False, True), (True, True)]:
        both(lambda m: heaviside(m, a_rg, b_rg))
    both(lambda m: heaviside(m, True, False, inplace=True))
    for da, db in [("int64", "int64"), ("bool", "bool"), ("float32", "float64"), ("int64", "bool")]:
        both(lambda m: m.heaviside(_t(m, MIXED, da), _t(m, POS, db)))
    both(lambda m: m.heaviside(_t(m, MIXED, "complex64"), _t(m, POS, "int64")))

    def zeta(m, fn):
        x = _t(m, [2.0, 3.5, 1.5, 4.0, 2.5, 6.0], rg=True)
        q = _t(m, POS, rg=True)
        out = fn(m, x, q)
        return out, out.grad_fn.name(), m.autograd.grad(out.sum(), [x])

    both(lambda m: zeta(m, lambda m, x, q: m.special.zeta(x, q)))
    both(lambda m: zeta(m, lambda m, x, q: m.special.zeta(x, 2.0)))
    both(lambda m: zeta(m, lambda m, x, q: m.special.zeta(x, q.detach())))


def test_saved_tensors_second_backward():
    cases = [
        lambda m, x, y: m.xlogy(x, y),
        lambda m, x, y: m.xlogy(2.0, y),
        lambda m, x, y: m.xlogy(x, 2.0),
        lambda m, x, y: m.xlogy(x.detach(), y),
        lambda m, x, y: m.special.xlog1py(x, 0.5),
        lambda m, x, y: m.special.zeta(2.0, y),
        lambda m, x, y: m.special.zeta(x.detach() + 1, y),
        lambda m, x, y: m.nextafter(x, y.detach()),
        lambda m, x, y: m.nextafter(x.detach(), y),
        lambda m, x, y: m.ldexp(x, m.tensor([1, 2, 3])),
        lambda m, x, y: m.ldexp(x.detach(), y),
        lambda m, x, y: m.logaddexp2(x, y),
        lambda m, x, y: m.i0(x),
        lambda m, x, y: m.sinc(x),
        lambda m, x, y: m.polygamma(1, x),
        lambda m, x, y: m.mvlgamma(x + 1, 2),
        lambda m, x, y: m.special.entr(x),
        lambda m, x, y: m.special.ndtri(x / 3),
        lambda m, x, y: m.special.log_ndtr(x),
        lambda m, x, y: m.special.erfcx(x),
        lambda m, x, y: m.special.i0e(x),
        lambda m, x, y: m.special.i1(x),
        lambda m, x, y: m.special.i1e(x),
        lambda m, x, y: m.special.ndtr(x),
    ]
    for fn in cases:

        def run(m):
            x = m.tensor([0.5, 1.5, 2.0], requires_grad=True)
            y = m.tensor([0.25, 2.0, 3.0], requires_grad=True)
            out = fn(m, x, y)
            out.sum().backward()
            out.sum().backward()
            return x.grad, y.grad

        both(run)


def test_gradients_at_the_edges_of_the_domain():
    # Note [Derivatives at the edges of the domain]: PyTorch's formulas, not JAX's rules
    def run(m):
        x = m.tensor([0.0, 0.0, 0.0, 1.0, -1.0, 0.0], dtype=m.float64, requires_grad=True)
        y = m.tensor([2.0, 0.0, -1.0, -1.0, 0.5, float("inf")], dtype=m.float64, requires_grad=True)
        z = m.tensor([0.0, -1.0, 1e-30, 2.0, -2.0, 0.0], dtype=m.float64, requires_grad=True)
        outs = [m.xlogy(x, y), m.special.xlog1py(x, y - 1), m.i0(z), m.special.entr(z)]
        outs += [m.sinc(z), m.special.i1(z), m.special.i1e(z), m.special.i0e(z)]
        outs += [m.nextafter(z, m.tensor([0.0, 1.0, 1e-30, 2.0, 0.0, 0.0], dtype=m.float64))]
        outs += [m.logaddexp2(z, z.detach())]
        grads = [m.autograd.grad(o.sum(), [x, y, z], allow_unused=True) for o in outs]
        return outs, grads

    both(run)


def test_inplace_variants():
    cases = [
        lambda m, x, y: x.xlogy_(y),
        lambda m, x, y: x.xlogy_(2.0),
        lambda m, x, y: m.xlogy_(x, y),
        lambda m, x, y: m.xlogy_(x, 3),
        lambda m, x, y: x.nextafter_(y),
        lambda m, x, y: x.ldexp_(m.tensor([1, -2, 3])),
        lambda m, x, y: x.ldexp_(y),
        lambda m, x, y: m.ldexp_(x, y),
        lambda m, x, y: x.i0_(),
        lambda m, x, y: m.i0_(x),
        lambda m, x, y: x.sinc_(),
        lambda m, x, y: m.sinc_(x),
        lambda m, x, y: x.mvlgamma_(1),
        lambda m, x, y: x.polygamma_(1),
        lambda m, x, y: x.polygamma_(n=0),
    ]
    for fn in cases:

        def run(m):
            a = m.tensor([0.5, 1.5, 2.0], requires_grad=True)
            b = m.tensor([0.25, 2.0, 3.0], requires_grad=True)
            x = a * 1
            out = fn(m, x, b)
            assert out is x
            return _grads(m, x, [a, b]) + [x._version]

        both(run)

        def leaf(m):
            return fn(m, m.tensor([0.5, 1.5, 2.0], requires_grad=True), m.tensor([1.0, 2, 3]))

        both(leaf)

        def integer(m):
            x = m.tensor([1, 2, 3])
            return fn(m, x, m.tensor([1, 0, 2])), x._version

        both(integer)
    both(lambda m: m.tensor([True, False]).mvlgamma_(1))
    both(lambda m: m.ones(3).heaviside_(m.zeros(3)))
    both(lambda m: m.tensor([1, 0, -2]).heaviside_(m.tensor([5, 5, 5])))
    both(lambda m: m.ones(3).xlogy_(m.ones(2, 3)))


def test_compiled_and_function_transforms():
    # traced by jax.jit: no reads of values in the op paths
    def f(x, y):
        out = lg.xlogy(x, y) + lg.special.entr(y) + lg.logaddexp2(x, y) + lg.special.i1e(x)
        return out.sum()

    x = lg.tensor([0.5, 1.5, 2.0], requires_grad=True)
    y = lg.tensor([0.25, 2.0, 3.0], requires_grad=True)
    compiled = lg.compile(f)
    np.testing.assert_allclose(np.asarray(compiled(x, y)._data), np.asarray(f(x, y)._data), 1e-6)
    # forward mode through the custom derivatives
    import torch

    def g(m):
        def h(a):
            return m.xlogy(a, a + 1) + m.i0(a) + m.special.entr(a)

        a = m.tensor([0.0, 0.5, 2.0], dtype=m.float64)
        return m.func.jvp(h, (a,), (m.ones_like(a),))

    t_out = g(torch)
    g_out = g(lg)
    for t, g_ in zip(t_out, g_out):
        np.testing.assert_allclose(np.asarray(g_._data), t.numpy(), rtol=1e-12)


def test_gammainc_gammaincc_are_igamma_igammac():
    from conftest import both

    def fn(m):
        a = m.tensor([0.5, 1.0, 2.5], dtype=m.float64)
        x = m.tensor([0.3, 2.0, 1.5], dtype=m.float64, requires_grad=True)
        p, q = m.special.gammainc(a, x), m.special.gammaincc(a, x)
        (p * 2 + q).sum().backward()
        return p, q, x.grad

    both(fn)
    both(lambda m: m.special.gammainc(m.ones(2), 2.0))
    both(lambda m: m.special.gammaincc(1.0, m.ones(2)))
    both(lambda m: m.special.gammainc(m.ones(2, requires_grad=True), m.ones(2)).sum().backward())


def test_ldexp_gradient_with_an_integer_exponent():
    """PyTorch's gradient of ``self`` is ``grad * pow(2, other)``, computed in integers for an
    integer exponent: 0 where the exponent is negative (not the derivative 2**other)."""

    def f(m):
        a = m.tensor([0.5, -1.25, 2.0], requires_grad=True)
        y = m.ldexp(a, m.tensor([1, 2, -1]))
        y.backward(m.tensor([1.0, 2.0, 3.0]))
        return y, a.grad

    both(f)
