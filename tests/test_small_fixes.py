"""Differential tests of small conformance fixes against PyTorch: ``kl_div`` through
``XlogyBackward0`` (and its dtype checks), the tensor type names of ``expand``'s size error,
``multi_dot``'s dtype message, the column-major strides of ``linalg.cholesky`` and
``linalg.cholesky_ex`` (with its ``info``), ``cdist``'s refused double backward and
``digamma``'s trigamma gradient."""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import torch as torch_module
from conftest import both, call, lg

import leafgrad.ops.linalg_ops as linalg_ops


def _grads(m, out, inputs):
    """The output, then gradients of a weighted sum by autograd.grad and by backward."""
    w = m.arange(1, out.numel() + 1, dtype=out.dtype).reshape(out.shape) / 7
    gs = m.autograd.grad((out * w).sum(), inputs, retain_graph=True)
    (out * w).sum().backward()
    return [out, *gs, *[t.grad for t in inputs]]


def _twice(m, make):
    """A second backward without retain_graph: raises where the node saved tensors."""
    out = make(m)
    out.sum().backward()
    out.sum().backward()
    return out


def _linalg_errors(cases):
    """Both raise torch's ``_LinAlgError`` (a RuntimeError; leafgrad's has the same name) with the
    same text."""
    for fn in cases:
        (t, _), (g, _) = call(fn, torch_module), call(fn, lg)
        assert type(t.exc).__name__ == type(g.exc).__name__ == "_LinAlgError", (t, g)
        assert isinstance(g.exc, RuntimeError) and g.text == t.text, (t, g)


def _errors(cases):
    for fn in cases:
        t, g = both(fn)
        assert type(t).__name__ == "Raised", f"torch did not raise: {t!r}"


# --- kl_div: xlogy(target, target) - target * input ---------------------------------------------


def _kl(m, reduction="none", log_target=False, dtype="float32"):
    dt = getattr(m, dtype)
    target = m.tensor([[0.0, 0.5, 2.0], [1.0, 0.25, 0.0]], dtype=dt, requires_grad=True)
    input = m.tensor([[0.1, -0.2, 0.3], [-1.0, 0.5, 2.0]], dtype=dt, requires_grad=True)
    out = m.nn.functional.kl_div(input, target, reduction=reduction, log_target=log_target)
    return out, input, target


def test_kl_div_xlogy():
    def graph(m):
        out, _, _ = _kl(m)
        xlogy = out.grad_fn.next_functions[0][0]
        return [out, type(xlogy).__name__, [type(f).__name__ for f, _ in xlogy.next_functions]]

    both(graph)
    # the target's gradient is xlogy's: log(target) + 1 (NaN at target = 0, as 0 / 0)
    both(lambda m: _grads(m, *(lambda o, i, t: (o, [i, t]))(*_kl(m))))
    both(lambda m: _grads(m, *(lambda o, i, t: (o, [t]))(*_kl(m, dtype="float64"))))
    for reduction in ("sum", "batchmean", "mean"):
        both(lambda m, r=reduction: _grads(m, *(lambda o, i, t: (o, [i, t]))(*_kl(m, r))))
    both(lambda m: _grads(m, *(lambda o, i, t: (o, [i, t]))(*_kl(m, log_target=True))))
    both(lambda m: _twice(m, lambda m: _kl(m)[0]))
    # torch.xlogy itself: self's gradient at self = 0 is log(other) (masked only for other <= 0)
    both(
        lambda m: _grads(
            m,
            m.xlogy(
                x := m.tensor([0.0, 0.0, 0.0, 1.0, 0.0, 2.0], requires_grad=True),
                y := m.tensor([0.0, 2.0, -1.0, 3.0, math.nan, 0.5], requires_grad=True),
            ),
            [x, y],
        )
    )


def test_kl_div_dtypes_and_shapes():
    def f(m, a, b, **kw):
        input = m.tensor([0.5, 1.0, 2.0]).to(getattr(m, a))
        return m.nn.functional.kl_div(input, m.tensor([0.25, 0.0, 1.5]).to(getattr(m, b)), **kw)

    for a, b in [("float16", "float16"), ("bfloat16", "float64"), ("float32", "float64")]:
        both(lambda m, a=a, b=b: [f(m, a, b, reduction="sum"), f(m, a, b, reduction="none")])
        both(lambda m, a=a, b=b: f(m, a, b, reduction="sum", log_target=True))
    bad = [
        ("int64", "int64"),
        ("float32", "int64"),
        ("int64", "float64"),
        ("bool", "float32"),
        ("complex64", "complex64"),
        ("float32", "complex64"),
        ("complex64", "int64"),
    ]
    for a, b in bad:
        for log_target in (False, True):
            _errors([lambda m, a=a, b=b, lt=log_target: f(m, a, b, reduction="sum", log_target=lt)])
    # the mean warning comes first, then the reduction check, then the dtype checks
    _errors([lambda m: f(m, "int64", "int64", reduction="mean")])
    _errors([lambda m: f(m, "int64", "int64", reduction="bad")])
    both(
        lambda m: [
            m.nn.functional.kl_div(m.tensor(0.5), m.tensor(0.25), reduction="batchmean"),
            m.nn.functional.kl_div(m.ones(0, 3), m.ones(0, 3), reduction="none"),
            m.nn.functional.kl_div(m.ones(0, 3), m.ones(0, 3), reduction="sum"),
            m.nn.KLDivLoss(reduction="sum")(m.ones(2) / 3, m.tensor([0.0, 0.5])),
        ]
    )


# --- expand's size error names the tensor type as Tensor::toString does ---------------------------


def test_expand_type_names():
    names = ["bool", "bfloat16", "complex64", "complex128", "float32", "float64", "float16"]
    names += ["uint8", "int8", "int16", "int32", "int64"]
    for name in names:
        _errors(
            [
                lambda m, name=name: m.ones(2, 3, dtype=getattr(m, name)).expand(3),
                lambda m, name=name: m.ones(2, 3, dtype=getattr(m, name)).expand_as(m.ones(3)),
                lambda m, name=name: m.broadcast_to(m.ones(2, 1, 3, dtype=getattr(m, name)), (3,)),
            ]
        )
    # masked_scatter_ expands its mask: the same message for the mask's type
    _errors(
        [
            lambda m: m.zeros(3).masked_scatter_(m.ones(2, 3, dtype=m.bool), m.ones(6)),
            lambda m: m.zeros(3).masked_scatter_(m.ones(2, 3, dtype=m.uint8), m.ones(6)),
        ]
    )


# --- multi_dot and cholesky -----------------------------------------------------------------------


def test_multi_dot_dtype_message():
    pairs = [
        ("float32", "float64"),
        ("float64", "float32"),
        ("float32", "int64"),
        ("int32", "int16"),
        ("int8", "uint8"),
        ("bool", "complex64"),
        ("bfloat16", "float16"),
        ("complex128", "float32"),
    ]
    for a, b in pairs:
        _errors(
            [
                lambda m, a=a, b=b: m.linalg.multi_dot(
                    [m.ones(2, 2, dtype=getattr(m, a)), m.ones(2, 2, dtype=getattr(m, b))]
                ),
                lambda m, a=a, b=b: m.linalg.multi_dot(
                    [m.ones(2, 2, dtype=getattr(m, a))] * 2 + [m.ones(2, 2, dtype=getattr(m, b))]
                ),
            ]
        )


def _cholesky_ex(m):
    return m.linalg.cholesky_ex


def _spd(m, dtype="float64"):
    return m.tensor([[4.0, 2, 1], [2, 5, 0], [1, 0, 2]], dtype=getattr(m, dtype))


def _not_pd(m):
    return m.tensor([[4.0, 2, 1], [2, -3, 0], [1, 0, 2]], dtype=m.float64)


def _layout(t):
    return (tuple(t.shape), t.stride(), t.is_contiguous())


def test_cholesky_strides():
    def strides(m):
        ex = _cholesky_ex(m)
        a = _spd(m)
        return [
            _layout(t)
            for t in [
                m.linalg.cholesky(a),
                m.linalg.cholesky(a, upper=True),
                m.linalg.cholesky(a.expand(2, 3, 3)),
                m.linalg.cholesky(a.expand(2, 4, 3, 3)),
                m.linalg.cholesky(m.empty(0, 3, 3)),
                m.linalg.cholesky(m.empty(2, 0, 0)),
                m.linalg.cholesky(m.ones(1, 1)),
                ex(a).L,
                ex(a, upper=True).L,
                ex(a.expand(2, 3, 3)).L,
                ex(m.empty(0, 3, 3)).L,
                ex(a).info,
                ex(a.expand(2, 4, 3, 3)).info,
                m.cholesky(a),
                m.cholesky(a.expand(2, 3, 3), upper=True),
            ]
        ]

    both(strides)  # with torch.cholesky's deprecation warning
    # a column-major result: transposing it gives a contiguous tensor, viewable as such
    both(lambda m: m.linalg.cholesky(_spd(m)).mT.view(9))
    both(lambda m: m.linalg.cholesky(_spd(m)).view(9))


def test_cholesky_ex():
    def values(m):
        ex = _cholesky_ex(m)
        r = ex(_spd(m, "float32"))
        return [
            type(r).__name__,
            list(r),
            r.L,
            r.info,
            list(ex(_spd(m), upper=True)),
            list(ex(_spd(m, "complex64"))),
            ex(m.stack([_spd(m), _not_pd(m), -_spd(m)])).info,
            # the upper triangle is read for upper=True: info differs from the lower one's
            ex(m.tensor([[4.0, 2, 1], [7, 1, 0], [1, 0, -2]]), upper=True).info,
            ex(m.tensor([[4.0, 2, 1], [7, 1, 0], [1, 0, -2]])).info,
            ex(m.zeros(2, 0, 0)).info,
            ex(m.zeros(0, 3, 3)).info,
        ]

    both(values)
    both(lambda m: _grads(m, _cholesky_ex(m)(a := _spd(m).requires_grad_()).L, [a]))
    both(lambda m: _cholesky_ex(m)(_spd(m).requires_grad_()).info.requires_grad)
    both(lambda m: _twice(m, lambda m: _cholesky_ex(m)(_spd(m).requires_grad_()).L))
    _errors(
        [
            lambda m: _cholesky_ex(m)(m.ones(3, 3, dtype=m.int64)),
            lambda m: _cholesky_ex(m)(m.ones(2, 3)),
            lambda m: _cholesky_ex(m)(m.ones(3)),
        ]
    )
    _linalg_errors(
        [
            lambda m: _cholesky_ex(m)(_not_pd(m), check_errors=True),
            lambda m: _cholesky_ex(m)(m.stack([_spd(m), -_spd(m)]), check_errors=True),
            lambda m: m.linalg.cholesky(m.tensor([[4.0, 2, 1], [7, 1, 0], [1, 0, -2]]), upper=True),
            lambda m: m.linalg.cholesky(m.stack([_spd(m), _not_pd(m)])),
        ]
    )
    # no error without check_errors; info is LAPACK's, traced under jit as well
    both(lambda m: _cholesky_ex(m)(_not_pd(m)).info)
    batch = jnp.stack([jnp.asarray([[4.0, 2], [2, -1]]), jnp.eye(2) * 2, -jnp.eye(2)])
    traced = jax.jit(lambda a: linalg_ops._cholesky_info(a, False))(batch)
    np.testing.assert_array_equal(np.asarray(traced), [2, 0, 1])


# --- cdist: no derivative of _cdist_backward ------------------------------------------------------


def _cdist_double(m, p, which, mode="use_mm_for_euclid_dist_if_necessary", shift=0.0):
    a = m.tensor([[0.5, -1.0], [2.0, 0.3], [0.0, 0.0]], dtype=m.float64, requires_grad=True)
    rows = [[1.0, 1.0], [0.0, 0.0], [-2, 0.5], [0.5, -1.0]]
    b = m.tensor(rows, dtype=m.float64) + shift
    b.requires_grad_()
    d = m.cdist(a, b, p=p, compute_mode=mode)
    (g,) = m.autograd.grad((d * d).sum() if which else d.sum(), [a, b][which], create_graph=True)
    out = [g.detach(), g.requires_grad]
    g.sum().backward()
    return [*out, a.grad, b.grad]


def test_cdist_double_backward():
    for p in (2.0, 1.0, 0.0, math.inf, 3.0, 0.5):
        for which in (0, 1):
            _errors([lambda m, p=p, w=which: _cdist_double(m, p, w)])
    # the matrix-product path (_euclidean_dist) is a composite with a second derivative
    # (away from coincident rows, where its rounding residues decide the value)
    both(lambda m: _cdist_double(m, 2.0, 0, "use_mm_for_euclid_dist", shift=0.25))
    # first derivatives are unchanged
    both(
        lambda m: _grads(
            m,
            m.cdist(a := m.tensor([[0.5, -1.0], [2.0, 0.3]], requires_grad=True), a * 2),
            [a],
        )
    )


# --- digamma: ATen's trigamma as its derivative ---------------------------------------------------

_DIGAMMA_POINTS = [0.3, 1.0, 2.5, 7.0, 30.0, 1e-3, -0.5, -1.3, -2.7, -10.25, 1e4, -1e-3]


def test_digamma_gradient():
    for dtype in ("float64", "float32"):

        def grads(m, dtype=dtype):
            points = _DIGAMMA_POINTS + [0.0, -0.0, -2.0, math.inf, -math.inf, math.nan]
            x = m.tensor(points, dtype=getattr(m, dtype), requires_grad=True)
            return _grads(m, m.digamma(x), [x])

        both(grads)

        def second(m, dtype=dtype):
            # not at -10.25: polygamma(2, x) for x < 0 is a separate matter (special_ops)
            x = m.tensor(_DIGAMMA_POINTS[:9], dtype=getattr(m, dtype), requires_grad=True)
            (g,) = m.autograd.grad(m.digamma(x).sum(), x, create_graph=True)
            return [g.detach(), *m.autograd.grad(g.sum(), x)]

        both(second)
    # float64 to the last bits (JAX's polygamma(1) was ~5e-10 relative off ATen's trigamma)
    both(
        lambda m: _grads(
            m,
            m.digamma(x := m.tensor(_DIGAMMA_POINTS, dtype=m.float64, requires_grad=True)),
            [x],
        )[1:],
        rtol=1e-15,
        atol=0,
    )
    both(lambda m: _twice(m, lambda m: m.digamma(m.tensor([0.5, 2.0], requires_grad=True))))

    def inplace(m):
        a = m.tensor([0.5, -1.5, 3.0], dtype=m.float64, requires_grad=True)
        b = a * 1
        v = b._version
        b.digamma_()
        return _grads(m, b, [a]) + [b._version - v]

    both(inplace)
    _errors([lambda m: m.tensor([0.5], requires_grad=True).digamma_()])
    both(lambda m: [m.digamma(m.tensor([1, 2])), m.digamma(m.tensor(0.5)), m.digamma(m.ones(0))])
    _errors([lambda m: m.digamma(m.ones(2, dtype=m.complex64))])


def test_fill_and_zero_write_through_expanded_views():
    """``fill_`` and ``zero_`` with a number allow a tensor whose elements share memory (every
    element gets the same value); ``fill_`` with a tensor value and other writes refuse it."""

    def fn(m):
        b = m.zeros(3)
        v = b.expand(2, 3)
        v.fill_(2.5)
        out = [b.clone(), v.clone(), b._version]
        v.zero_()
        out += [b.clone(), v._version]
        w = m.arange(6.0).reshape(3, 2)[:, :1].expand(3, 4)
        w.fill_(1.5)
        return out + [w.clone()]

    both(fn)
    both(lambda m: m.zeros(3).expand(2, 3).fill_(m.tensor(1.5)))
    both(lambda m: m.zeros(3).expand(2, 3).add_(1.0))

    def recorded(m):
        x = m.ones(3, requires_grad=True)
        y = x.clone()
        e = y.expand(2, 3)
        e.fill_(3.0)
        (y * x).sum().backward()
        return y, e.grad_fn.name(), y.grad_fn.name(), x.grad

    both(recorded)


@pytest.mark.parametrize("value", [[1.5], "a", None, np.array([1.5]), np.float64(1.5), True])
def test_searchsorted_and_bucketize_values_that_are_not_tensors(value):
    """A value that is neither a Tensor nor a number gets the parser's "invalid combination"."""
    both(lambda m: m.searchsorted(m.tensor([1.0, 2.0]), value))
    both(lambda m: m.bucketize(value, m.tensor([1.0, 2.0])))


_POLYGAMMA_X = [-100.5, -50.5, -20.25, -10.3, -3.7, -1.5, -0.5, 0.0, -2.0, 1e-5, 0.3, 1.0, 2.5]
_POLYGAMMA_X += [10.0, 1e5, float("nan"), float("inf"), -float("inf")]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_polygamma_and_zeta_follow_atens_series_for_negative_arguments(dtype):
    """ATen's zeta sums the Hurwitz series for a negative non-integer ``q`` (JAX's does not), so
    polygamma(n >= 2) of far negative values; float32 keeps ATen's float steps."""

    def fn(m):
        x = m.tensor(_POLYGAMMA_X, dtype=getattr(m, dtype))
        outs = [m.polygamma(n, x) for n in range(2, 6)]
        y = m.tensor([-10.3, -3.7, -0.5, 0.3, 2.5], dtype=getattr(m, dtype), requires_grad=True)
        m.polygamma(2, y).sum().backward()
        return outs, y.grad

    both(fn)
    q = [0.5, 1.0, 2.0, -0.5, -1.0, -2.5, 0.0, 10.0, 1e3, float("inf"), float("nan"), -float("inf")]
    for s in [1.0, 1.5, 2.0, 3.0, 0.5, -1.0, 4.5, 30.0, float("nan"), float("inf")]:
        both(lambda m, s=s: m.special.zeta(m.tensor(s, dtype=m.float64), m.tensor(q)))
