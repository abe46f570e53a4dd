"""The gamma family of ``leafgrad.distributions`` against ``torch.distributions``.

``Gamma``, ``Chi2``, ``Beta``, ``Dirichlet``, ``StudentT``, ``InverseGamma``, ``FisherSnedecor``,
``Binomial``, ``NegativeBinomial`` and ``GeneralizedPareto``: each case builds one distribution
in both libraries from equal parameters and compares samples after the same seed (bit for bit,
and the generator's state after), reparameterized samples and their gradients, the scores and
moments with their ``grad_fn`` names, ``expand``, reprs and the ``ValueError`` texts of
validation. Values through ``exp``/``log``/``lgamma``/``digamma`` in float32 may differ by an ulp
(XLA's kernels against Sleef's), so they are compared to ``rtol=1e-5``.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import leafgrad

# Note: torch._dynamo turns PyTorch's validation off process-wide (see conftest)
pytestmark = pytest.mark.usefixtures("torch_validates_distributions")

LD = leafgrad.distributions
TD = torch.distributions
RTOL = 1e-5


def _np(t):
    return t.detach().numpy()


def _name(t):
    return t.grad_fn.name() if t.grad_fn is not None else None


def _pair(values, dtype="float32", requires_grad=True):
    """The same tensor in both libraries, as leaves."""
    arr = np.asarray(values, dtype=dtype)
    rg = requires_grad and arr.dtype.kind == "f"
    return torch.tensor(arr, requires_grad=rg), leafgrad.tensor(arr, requires_grad=rg)


def _same(lt, t, exact=False, rtol=RTOL):
    """Value, shape, dtype, ``requires_grad`` and ``grad_fn`` name."""
    assert isinstance(lt, leafgrad.Tensor), type(lt)
    assert tuple(lt.shape) == tuple(t.shape)
    assert str(lt.dtype) == str(t.dtype)
    if exact:
        np.testing.assert_array_equal(_np(lt), _np(t))
    else:
        np.testing.assert_allclose(_np(lt), _np(t), rtol=rtol, atol=1e-6, equal_nan=True)
    assert _name(lt) == _name(t)
    assert lt.requires_grad == t.requires_grad


def _outcome(fn):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return "ok", fn()
    except Exception as exc:  # noqa: BLE001 - the type and text are compared
        return "error", (type(exc).__name__, str(exc))


def _compare_outcomes(lfn, tfn):
    lkind, lres = _outcome(lfn)
    tkind, tres = _outcome(tfn)
    assert lkind == tkind, (lres, tres)
    if tkind == "error":
        assert lres[0] == tres[0]
        if tres[0] != "NotImplementedError":  # texts name the class, <class 'torch...'>
            assert lres[1] == tres[1]
    elif isinstance(tres, torch.Tensor):
        _same(lres, tres)
    else:
        assert lres == tres


F64 = "float64"
# name -> (class name, {parameter: values}, value to score, a value in (0, 1) for icdf)
CASES = {
    "gamma": (
        "Gamma",
        {"concentration": [0.5, 1.0, 3.0], "rate": [1.0, 2.0, 0.5]},
        [0.3, 1.0, 2.0],
    ),
    "gamma_f64": (
        "Gamma",
        {"concentration": np.array([0.3, 7.5], F64), "rate": np.array([2.0, 0.25], F64)},
        np.array([0.1, 30.0], F64),
    ),
    "chi2": ("Chi2", {"df": [1.0, 2.5, 6.0]}, [0.3, 1.0, 4.0]),
    "beta": (
        "Beta",
        {"concentration1": [0.5, 2.0, 1.0], "concentration0": [0.5, 3.0, 1.0]},
        [0.2, 0.5, 0.9],
    ),
    "dirichlet": (
        "Dirichlet",
        {"concentration": [[0.5, 1.0, 2.0], [0.3, 0.6, 0.9]]},
        [[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]],
    ),
    "student_t": (
        "StudentT",
        {"df": [0.8, 1.5, 5.0], "loc": [0.0, 1.0, -2.0], "scale": [1.0, 0.5, 2.0]},
        [0.3, -1.0, 4.0],
    ),
    "inverse_gamma": (
        "InverseGamma",
        {"concentration": [0.5, 1.5, 3.0], "rate": [1.0, 2.0, 0.5]},
        [0.3, 1.0, 2.0],
    ),
    "fisher_snedecor": (
        "FisherSnedecor",
        {"df1": [1.0, 3.0, 6.0], "df2": [2.0, 5.0, 10.0]},
        [0.3, 1.0, 2.0],
    ),
    "binomial_probs": (
        "Binomial",
        {"total_count": [4.0, 4.0, 4.0], "probs": [0.0, 0.3, 0.9]},
        [0.0, 2.0, 4.0],
    ),
    "binomial_logits": (
        "Binomial",
        {"total_count": [3.0, 5.0, 8.0], "logits": [-1.0, 0.0, 2.0]},
        [1.0, 0.0, 8.0],
    ),
    "negative_binomial_probs": (
        "NegativeBinomial",
        {"total_count": [0.5, 3.0, 10.0], "probs": [0.0, 0.4, 0.8]},
        [0.0, 2.0, 11.0],
    ),
    "negative_binomial_logits": (
        "NegativeBinomial",
        {"total_count": [2.0, 3.0, 0.0], "logits": [-1.0, 0.5, 2.0]},
        [1.0, 2.0, 0.0],
    ),
    "generalized_pareto": (
        "GeneralizedPareto",
        {"loc": [0.0, 1.0, -1.0], "scale": [1.0, 0.5, 2.0], "concentration": [0.0, 0.4, -0.3]},
        [0.5, 2.0, 1.0],
    ),
}
# samples drawn through ops that XLA rounds differently (log1p/expm1, and rsqrt, which PyTorch's
# CPU kernel computes as 1 / sqrt): equal to an ulp
ROUNDED_SAMPLES = {"generalized_pareto", "student_t"}


def _make(case):
    cls_name, params, value = CASES[case]
    tparams, lparams = {}, {}
    for k, v in params.items():
        dtype = v.dtype.name if isinstance(v, np.ndarray) else "float32"
        tparams[k], lparams[k] = _pair(v, dtype, requires_grad=k != "total_count")
    dtype = value.dtype.name if isinstance(value, np.ndarray) else "float32"
    tv, lv = _pair(value, dtype, requires_grad=False)
    return (
        getattr(TD, cls_name)(**tparams),
        getattr(LD, cls_name)(**lparams),
        tparams,
        lparams,
        tv,
        lv,
    )


@pytest.mark.parametrize("case", sorted(CASES))
def test_shapes_repr_and_constraints(case):
    td, ld, *_ = _make(case)
    assert repr(ld) == repr(td)
    assert tuple(ld.batch_shape) == tuple(td.batch_shape)
    assert tuple(ld.event_shape) == tuple(td.event_shape)
    assert ld.has_rsample == td.has_rsample
    assert ld.has_enumerate_support == td.has_enumerate_support
    assert {k: repr(v) for k, v in ld.arg_constraints.items()} == {
        k: repr(v) for k, v in td.arg_constraints.items()
    }
    assert repr(ld.support) == repr(td.support)


@pytest.mark.parametrize("case", sorted(CASES))
def test_scores_and_moments(case):
    td, ld, tparams, lparams, tv, lv = _make(case)
    tu, lu = _pair(np.full(tuple(td.batch_shape), 0.3, tv.numpy().dtype), requires_grad=False)
    for name, tval, lval in (("log_prob", tv, lv), ("cdf", tv, lv), ("icdf", tu, lu)):
        _compare_outcomes(
            lambda n=name, v=lval: getattr(ld, n)(v), lambda n=name, v=tval: getattr(td, n)(v)
        )
    for name in ("entropy", "perplexity"):
        _compare_outcomes(lambda n=name: getattr(ld, n)(), lambda n=name: getattr(td, n)())
    for name in ("mean", "mode", "variance", "stddev"):
        _compare_outcomes(lambda n=name: getattr(ld, n), lambda n=name: getattr(td, n))
    # gradients of a loss through log_prob (and entropy where there is one)
    tloss, lloss = td.log_prob(tv).sum(), ld.log_prob(lv).sum()
    if _outcome(td.entropy)[0] == "ok":
        tloss, lloss = tloss + td.entropy().sum(), lloss + ld.entropy().sum()
    tloss.backward()
    lloss.backward()
    for k in tparams:
        tg, lg = tparams[k].grad, lparams[k].grad
        assert (tg is None) == (lg is None), k
        if tg is not None:
            np.testing.assert_allclose(_np(lg), _np(tg), rtol=1e-4, atol=1e-6, err_msg=k)


@pytest.mark.parametrize("case", sorted(CASES))
def test_sampling_matches_the_generator(case):
    td, ld, tparams, lparams, *_ = _make(case)
    for shape in ((), (2,)):
        torch.manual_seed(7)
        leafgrad.manual_seed(7)
        _same(ld.sample(shape), td.sample(shape), exact=case not in ROUNDED_SAMPLES)
        _same(leafgrad.rand(2), torch.rand(2), exact=True)  # the generator's state after
    if not td.has_rsample:
        with pytest.raises(NotImplementedError):
            ld.rsample()
        return
    torch.manual_seed(3)
    leafgrad.manual_seed(3)
    ts, ls = td.rsample((2,)), ld.rsample((2,))
    _same(ls, ts, rtol=2e-6)
    (ts * ts).sum().backward()
    (ls * ls).sum().backward()
    for k in tparams:
        np.testing.assert_allclose(_np(lparams[k].grad), _np(tparams[k].grad), rtol=1e-4, err_msg=k)


@pytest.mark.parametrize("case", sorted(CASES))
def test_expand(case):
    td, ld, tparams, lparams, tv, lv = _make(case)
    new_shape = (4,) + tuple(td.batch_shape)
    te, le = td.expand(new_shape), ld.expand(new_shape)
    assert type(le) is type(ld)
    assert repr(le) == repr(te)
    assert tuple(le.batch_shape) == tuple(te.batch_shape)
    _same(le.log_prob(lv), te.log_prob(tv))
    torch.manual_seed(2)
    leafgrad.manual_seed(2)
    _same(le.sample(), te.sample(), exact=case not in ROUNDED_SAMPLES)


def test_binomial_enumerate_support_and_entropy():
    for case in ("binomial_probs",):
        td, ld, *_ = _make(case)
        for expand in (True, False):
            _same(ld.enumerate_support(expand), td.enumerate_support(expand), exact=True)
    # an inhomogeneous total count has neither
    td, ld, *_ = _make("binomial_logits")
    _compare_outcomes(ld.enumerate_support, td.enumerate_support)
    _compare_outcomes(ld.entropy, td.entropy)
    # a number of trials and a number of parameters
    td, ld = (
        TD.Binomial(10, torch.tensor([0.25, 0.5])),
        LD.Binomial(10, leafgrad.tensor([0.25, 0.5])),
    )
    assert repr(ld) == repr(td)
    _same(ld.total_count, td.total_count, exact=True)
    _same(ld.entropy(), td.entropy())


def test_dirichlet_rsample_is_a_custom_function():
    """``_Dirichlet``'s node and its backward through ``_dirichlet_grad``, in float64."""
    out = []
    for lib, dist in ((torch, TD), (leafgrad, LD)):
        conc = lib.tensor([[0.4, 1.5, 3.0], [2.0, 2.0, 0.7]], dtype=lib.float64, requires_grad=True)
        lib.manual_seed(0)
        x = dist.Dirichlet(conc).rsample((3,))
        w = lib.tensor([1.0, -2.0, 0.5], dtype=lib.float64)
        (x * w).sum().backward()
        out.append((x, conc.grad, _name(x)))
    (tx, tg, tname), (lx, lg, lname) = out
    assert lname == tname == "_DirichletBackward"
    _same(lx, tx, exact=True)
    np.testing.assert_allclose(_np(lg), _np(tg), rtol=1e-10)


def test_dirichlet_mode_at_a_vertex():
    tc, lc = _pair([[0.5, 0.2, 0.7], [2.0, 3.0, 0.5]])
    _same(LD.Dirichlet(lc).mode, TD.Dirichlet(tc).mode)


def test_numbers_as_parameters():
    """Numbers give an empty batch shape and tensors of the default dtype."""
    builds = [
        lambda d: d.Gamma(2.0, 3.0),
        lambda d: d.Chi2(3.0),
        lambda d: d.Beta(0.5, 2.0),
        lambda d: d.StudentT(3.0),
        lambda d: d.InverseGamma(3.0, 2.0),
        lambda d: d.FisherSnedecor(3.0, 5.0),
        lambda d: d.GeneralizedPareto(0.0, 1.0, 0.2),
        lambda d: d.NegativeBinomial(3.0, 0.5),
    ]
    for i, build in enumerate(builds):
        td, ld = build(TD), build(LD)
        assert repr(ld) == repr(td)
        assert tuple(ld.batch_shape) == tuple(td.batch_shape)
        torch.manual_seed(1)
        leafgrad.manual_seed(1)
        _same(ld.sample((3,)), td.sample((3,)), exact=i < 3)
        v = 2.0 if i == len(builds) - 1 else 0.5  # NegativeBinomial counts
        _same(ld.log_prob(leafgrad.tensor(v)), td.log_prob(torch.tensor(v)))
        _compare_outcomes(ld.entropy, td.entropy)


def test_student_t_and_fisher_snedecor_samples_in_float64():
    for build in (
        lambda lib, d: d.StudentT(lib.tensor([2.0, 9.0], dtype=lib.float64)),
        lambda lib, d: d.FisherSnedecor(
            lib.tensor([2.0, 9.0], dtype=lib.float64), lib.tensor([0.5, 4.0], dtype=lib.float64)
        ),
    ):
        torch.manual_seed(4)
        leafgrad.manual_seed(4)
        _same(build(leafgrad, LD).rsample((3,)), build(torch, TD).rsample((3,)), rtol=1e-12)
        _same(leafgrad.rand(2), torch.rand(2), exact=True)


def test_exponential_family_entropy():
    """The Bregman form of ``ExponentialFamily.entropy`` against the closed forms."""
    for cls, params in (
        ("Gamma", ([0.5, 3.0], [1.0, 2.0])),
        ("Beta", ([0.5, 3.0], [1.5, 2.0])),
        ("Dirichlet", ([[0.5, 3.0, 1.0]],)),
    ):
        tps = [_pair(p)[0] for p in params]
        lps = [_pair(p)[1] for p in params]
        # Beta and Dirichlet have no carrier measure: NotImplementedError in both
        _compare_outcomes(
            lambda c=cls, ps=lps: LD.ExponentialFamily.entropy(getattr(LD, c)(*ps)),
            lambda c=cls, ps=tps: TD.ExponentialFamily.entropy(getattr(TD, c)(*ps)),
        )


def _build(lib, mod, cls_name, params, **kw):
    args = {k: lib.tensor(np.asarray(v, "float32")) for k, v in params.items()}
    return getattr(mod, cls_name)(**args, **kw)


BAD_ARGS = [
    ("Gamma", {"concentration": [1.0, -1.0], "rate": [1.0, 1.0]}),
    ("Gamma", {"concentration": [1.0], "rate": [0.0]}),
    ("Chi2", {"df": [0.0, 1.0]}),
    ("Beta", {"concentration1": [1.0, -1.0], "concentration0": [1.0, 1.0]}),
    ("Dirichlet", {"concentration": [[0.5, 0.0]]}),
    ("StudentT", {"df": [-1.0]}),
    ("StudentT", {"df": [1.0], "scale": [-1.0]}),
    ("InverseGamma", {"concentration": [1.0], "rate": [-2.0]}),
    ("FisherSnedecor", {"df1": [1.0], "df2": [-2.0]}),
    ("Binomial", {"total_count": [2.5], "probs": [0.5]}),
    ("Binomial", {"total_count": [2.0], "probs": [1.5]}),
    ("NegativeBinomial", {"total_count": [-1.0], "probs": [0.5]}),
    ("NegativeBinomial", {"total_count": [1.0], "probs": [1.0]}),
    ("GeneralizedPareto", {"loc": [0.0], "scale": [0.0], "concentration": [0.0]}),
]


@pytest.mark.parametrize("cls_name,params", BAD_ARGS, ids=lambda x: str(x)[:40])
def test_argument_validation_errors(cls_name, params):
    with pytest.raises(ValueError) as texc:
        _build(torch, TD, cls_name, params)
    with pytest.raises(ValueError) as lexc:
        _build(leafgrad, LD, cls_name, params)
    assert str(lexc.value) == str(texc.value)
    # validate_args=False skips the check (StudentT's Chi2 and FisherSnedecor's Gammas still
    # check their own arguments, in both)
    _compare_outcomes(
        lambda: repr(_build(leafgrad, LD, cls_name, params, validate_args=False)),
        lambda: repr(_build(torch, TD, cls_name, params, validate_args=False)),
    )


BAD_VALUES = [
    ("gamma", [-0.5, 1.0, 1.0]),
    ("beta", [0.5, 1.5, 0.5]),
    ("dirichlet", [[0.5, 0.5, 0.5], [0.6, 0.1, 0.3]]),
    ("binomial_probs", [5.0, 1.0, 1.0]),
    ("binomial_logits", [0.5, 1.0, 1.0]),
    ("negative_binomial_probs", [-1.0, 1.0, 1.0]),
    ("generalized_pareto", [-0.5, 2.0, 1.0]),
    ("inverse_gamma", [0.0, 1.0, 1.0]),
    ("gamma", [0.0, 1.0]),  # not broadcastable
]


@pytest.mark.parametrize("case,value", BAD_VALUES, ids=lambda x: str(x)[:30])
def test_support_validation_errors(case, value):
    td, ld, *_ = _make(case)
    tv, lv = _pair(value, requires_grad=False)
    with pytest.raises(ValueError) as texc:
        td.log_prob(tv)
    with pytest.raises(ValueError) as lexc:
        ld.log_prob(lv)
    assert str(lexc.value) == str(texc.value)


def test_constructor_errors():
    for build in (
        lambda lib, d: d.Dirichlet(lib.tensor(1.0)),
        lambda lib, d: d.Binomial(3),
        lambda lib, d: d.NegativeBinomial(3.0, probs=lib.tensor(0.5), logits=lib.tensor(0.0)),
        lambda lib, d: d.Gamma("a", 1.0),
    ):
        texts = []
        for lib, mod in ((torch, TD), (leafgrad, LD)):
            with pytest.raises(ValueError) as exc:
                build(lib, mod)
            texts.append(str(exc.value))
        assert texts[1] == texts[0]


def test_kl_divergences_of_the_family():
    """A few of the registered pairs with the new classes, values and gradients."""
    pairs = [
        lambda lib, d, a, b: (d.Gamma(a, b), d.Gamma(b, a)),
        lambda lib, d, a, b: (d.Beta(a, b), d.Beta(b, a)),
        lambda lib, d, a, b: (d.Gamma(a, b), d.Normal(a, b)),
        lambda lib, d, a, b: (d.Chi2(a), d.Exponential(b)),  # Chi2 through (Gamma, Exponential)
        lambda lib, d, a, b: (d.Binomial(5, a / 2), d.Binomial(5, b / 2)),
    ]
    for make in pairs:
        out = []
        for lib, mod in ((torch, TD), (leafgrad, LD)):
            a = lib.tensor([0.5, 1.5], requires_grad=True)
            b = lib.tensor([1.2, 0.7], requires_grad=True)
            p, q = make(lib, mod, a, b)
            kl = mod.kl_divergence(p, q)
            kl.sum().backward()
            out.append((kl, a.grad, b.grad))
        (tkl, ta, tb), (lkl, la, lb) = out
        _same(lkl, tkl)
        np.testing.assert_allclose(_np(la), _np(ta), rtol=1e-4, atol=1e-6)
        np.testing.assert_allclose(_np(lb), _np(tb), rtol=1e-4, atol=1e-6)


def test_generalized_pareto_in_float64():
    """PyTorch compares a float64 concentration with a float32 zero in ``log_prob``/``cdf``
    (an error) and with a zero of its own dtype in ``icdf``."""

    def build(lib, d):
        f64 = dict(dtype=lib.float64)
        return d.GeneralizedPareto(
            lib.tensor([0.0, 1.0], **f64),
            lib.tensor([1.0, 2.0], **f64),
            lib.tensor([0.0, 0.3], **f64),
        ), lib.tensor([0.5, 1.5], **f64)

    (td, tv), (ld, lv) = build(torch, TD), build(leafgrad, LD)
    for name in ("log_prob", "cdf", "icdf"):
        _compare_outcomes(lambda n=name: getattr(ld, n)(lv), lambda n=name: getattr(td, n)(tv))
    assert repr(ld.support) == repr(td.support)
