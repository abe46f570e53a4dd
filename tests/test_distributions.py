"""``leafgrad.distributions`` against ``torch.distributions`` on the same inputs.

Each case builds one distribution in both libraries from equal parameters and compares what a
user sees: samples after the same seed (bit for bit, and the generator's state after), the
reparameterized sample's graph and gradients, ``log_prob``/``cdf``/``icdf``/``entropy`` and the
moments with their ``grad_fn`` names, ``expand``, ``enumerate_support``, reprs, and the
``ValueError`` texts of argument and support validation.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import torch

import leafgrad

# Note: torch._dynamo turns PyTorch's validation off process-wide (see conftest)
pytestmark = pytest.mark.usefixtures("torch_validates_distributions")

LD = leafgrad.distributions
TD = torch.distributions


def _np(t):
    return t.detach().cpu().numpy() if isinstance(t, torch.Tensor) else t.detach().numpy()


def _pair(values, dtype="float32", requires_grad=True):
    """The same tensor in both libraries, as leaves."""
    arr = np.asarray(values, dtype=dtype)
    t = torch.tensor(arr, requires_grad=requires_grad and arr.dtype.kind == "f")
    lt = leafgrad.tensor(arr, requires_grad=requires_grad and arr.dtype.kind == "f")
    return t, lt


def _same(lt, t, exact=False, rtol=2e-6):
    assert isinstance(lt, leafgrad.Tensor), type(lt)
    assert tuple(lt.shape) == tuple(t.shape)
    assert str(lt.dtype) == str(t.dtype)
    a, b = _np(lt), _np(t)
    if exact:
        np.testing.assert_array_equal(a, b)
    else:
        np.testing.assert_allclose(a, b, rtol=rtol, atol=1e-6, equal_nan=True)
    name = t.grad_fn.name() if t.grad_fn is not None else None
    lname = lt.grad_fn.name() if lt.grad_fn is not None else None
    assert lname == name
    assert lt.requires_grad == t.requires_grad


# name -> (class name, {parameter: values}, value to score, extra constructor arguments)
CASES = {
    "normal": ("Normal", {"loc": [0.5, -1.0, 2.0], "scale": [1.0, 0.5, 3.0]}, [0.1, -2.0, 4.0]),
    "normal_f64": (
        "Normal",
        {"loc": np.array([0.5, -1.0], "float64"), "scale": np.array([1.5, 0.25], "float64")},
        np.array([0.3, 1.0], "float64"),
    ),
    "uniform": ("Uniform", {"low": [0.0, -1.0, 2.0], "high": [1.0, 0.5, 3.0]}, [0.1, 0.0, 2.5]),
    "bernoulli_probs": ("Bernoulli", {"probs": [0.25, 0.5, 0.9]}, [1.0, 0.0, 1.0]),
    "bernoulli_logits": ("Bernoulli", {"logits": [-1.0, 0.0, 2.0]}, [1.0, 0.0, 0.0]),
    "categorical_probs": (
        "Categorical",
        {"probs": [[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]]},
        np.array([2, 0], "int64"),
    ),
    "categorical_logits": (
        "Categorical",
        {"logits": [[0.2, -1.0, 0.5], [1.5, 0.1, 0.0]]},
        np.array([1, 2], "int64"),
    ),
    "onehot_probs": (
        "OneHotCategorical",
        {"probs": [[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]]},
        [[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]],
    ),
    "onehot_st_logits": (
        "OneHotCategoricalStraightThrough",
        {"logits": [[0.2, -1.0, 0.5], [1.5, 0.1, 0.0]]},
        [[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]],
    ),
    "exponential": ("Exponential", {"rate": [0.5, 1.0, 3.0]}, [0.1, 2.0, 0.0]),
    "laplace": ("Laplace", {"loc": [0.5, -1.0, 2.0], "scale": [1.0, 0.5, 3.0]}, [0.1, -2.0, 2.0]),
    "cauchy": ("Cauchy", {"loc": [0.5, -1.0, 2.0], "scale": [1.0, 0.5, 3.0]}, [0.1, -2.0, 4.0]),
    "poisson": ("Poisson", {"rate": [0.5, 4.0, 12.0]}, [0.0, 3.0, 11.0]),
    "geometric_probs": ("Geometric", {"probs": [0.25, 0.5, 1.0]}, [2.0, 0.0, 0.0]),
    "geometric_logits": ("Geometric", {"logits": [-1.0, 0.0, 2.0]}, [2.0, 1.0, 0.0]),
}


def _make(case, seed_value=None):
    cls_name, params, value = CASES[case]
    tparams, lparams = {}, {}
    for k, v in params.items():
        dtype = v.dtype.name if isinstance(v, np.ndarray) else "float32"
        tparams[k], lparams[k] = _pair(v, dtype)
    dtype = value.dtype.name if isinstance(value, np.ndarray) else "float32"
    tv, lv = _pair(value, dtype, requires_grad=False)
    td = getattr(TD, cls_name)(**tparams)
    ld = getattr(LD, cls_name)(**lparams)
    return td, ld, tparams, lparams, tv, lv


def _outcome(fn):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return "ok", fn()
    except Exception as exc:  # noqa: BLE001 - the type and text are compared
        return "error", (type(exc).__name__, str(exc))


def _compare_outcomes(lfn, tfn, exact=False):
    lkind, lres = _outcome(lfn)
    tkind, tres = _outcome(tfn)
    assert lkind == tkind, (lres, tres)
    if tkind == "error":
        assert lres[0] == tres[0]
        if tres[0] != "NotImplementedError":  # texts name the class, <class 'torch...'>
            assert lres[1] == tres[1]
        return None
    if isinstance(tres, torch.Tensor):
        _same(lres, tres, exact=exact)
    else:
        assert lres == tres
    return lres, tres


@pytest.mark.parametrize("case", sorted(CASES))
def test_shapes_repr_and_constraints(case):
    td, ld, *_ = _make(case)
    assert repr(ld) == repr(td)
    assert tuple(ld.batch_shape) == tuple(td.batch_shape)
    assert tuple(ld.event_shape) == tuple(td.event_shape)
    assert type(ld.batch_shape).__name__ == "Size"
    assert ld.has_rsample == td.has_rsample
    assert ld.has_enumerate_support == td.has_enumerate_support
    lcons = {k: repr(v) for k, v in ld.arg_constraints.items()}
    tcons = {k: repr(v) for k, v in td.arg_constraints.items()}
    assert lcons == tcons
    assert repr(ld.support) == repr(td.support)


@pytest.mark.parametrize("case", sorted(CASES))
def test_scores_and_moments(case):
    td, ld, tparams, lparams, tv, lv = _make(case)
    for name in ("log_prob", "cdf", "icdf"):
        if name == "icdf":
            if case.startswith(("categorical", "onehot", "bernoulli", "poisson", "geometric")):
                continue
            tv_, lv_ = _pair(np.full(tuple(td.batch_shape), 0.3, "float32"), requires_grad=False)
            if tparams.get("loc") is not None and tparams["loc"].dtype == torch.float64:
                tv_, lv_ = tv_.double(), lv_.double()
        else:
            tv_, lv_ = tv, lv
        _compare_outcomes(
            lambda n=name, v=lv_: getattr(ld, n)(v), lambda n=name, v=tv_: getattr(td, n)(v)
        )
    for name in ("entropy", "perplexity"):
        _compare_outcomes(lambda n=name: getattr(ld, n)(), lambda n=name: getattr(td, n)())
    for name in ("mean", "mode", "variance", "stddev"):
        _compare_outcomes(lambda n=name: getattr(ld, n), lambda n=name: getattr(td, n))
    # gradients of a loss through log_prob and entropy
    tloss, lloss = td.log_prob(tv).sum(), ld.log_prob(lv).sum()
    if _outcome(td.entropy)[0] == "ok":
        tloss = tloss + td.entropy().sum()
        lloss = lloss + ld.entropy().sum()
    tloss.backward()
    lloss.backward()
    for k in tparams:
        tg, lg = tparams[k].grad, lparams[k].grad
        assert (tg is None) == (lg is None), k
        if tg is not None:
            np.testing.assert_allclose(_np(lg), _np(tg), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("case", sorted(CASES))
def test_sampling_matches_the_generator(case):
    td, ld, tparams, lparams, *_ = _make(case)
    for shape in ((), (2,)):
        torch.manual_seed(7)
        leafgrad.manual_seed(7)
        ts, ls = td.sample(shape), ld.sample(shape)
        _same(ls, ts, exact=True)
        _same(leafgrad.rand(2), torch.rand(2), exact=True)  # the generator's state after
    if not td.has_rsample:
        with pytest.raises(NotImplementedError):
            ld.rsample()
        return
    torch.manual_seed(3)
    leafgrad.manual_seed(3)
    ts, ls = td.rsample((2,)), ld.rsample((2,))
    _same(ls, ts, rtol=1e-6)
    (ts * ts).sum().backward()
    (ls * ls).sum().backward()
    for k in tparams:
        np.testing.assert_allclose(_np(lparams[k].grad), _np(tparams[k].grad), rtol=1e-5)


@pytest.mark.parametrize("case", sorted(CASES))
def test_expand_and_enumerate_support(case):
    td, ld, tparams, lparams, tv, lv = _make(case)
    new_shape = (4,) + tuple(td.batch_shape)
    te, le = td.expand(new_shape), ld.expand(new_shape)
    assert type(le) is type(ld)
    assert repr(le) == repr(te)
    assert tuple(le.batch_shape) == tuple(te.batch_shape)
    _same(le.log_prob(lv), te.log_prob(tv))
    if td.has_enumerate_support:
        for expand in (True, False):
            _same(ld.enumerate_support(expand), td.enumerate_support(expand), exact=True)


# parameter values outside the constraints, and values outside the support
BAD_ARGS = [
    ("Normal", {"loc": [0.0, 1.0], "scale": [1.0, -1.0]}),
    ("Normal", {"loc": [0.0, float("nan")], "scale": [1.0, 1.0]}),
    ("Uniform", {"low": [0.0, 2.0], "high": [1.0, 1.0]}),
    ("Bernoulli", {"probs": [0.5, 1.5]}),
    ("Categorical", {"probs": [[0.5, -0.5]]}),
    ("Exponential", {"rate": [0.0]}),
    ("Laplace", {"loc": [0.0], "scale": [0.0]}),
    ("Poisson", {"rate": [-1.0]}),
    ("Geometric", {"probs": [0.0, 0.5]}),
    ("Geometric", {"probs": [1.5]}),
]


@pytest.mark.parametrize("cls_name,params", BAD_ARGS, ids=lambda x: str(x)[:40])
def test_argument_validation_errors(cls_name, params):
    def build(lib, mod):
        return getattr(mod, cls_name)(
            **{k: lib.tensor(np.asarray(v, "float32")) for k, v in params.items()}
        )

    with pytest.raises(ValueError) as texc:
        build(torch, TD)
    with pytest.raises(ValueError) as lexc:
        build(leafgrad, LD)
    assert str(lexc.value) == str(texc.value)
    # validate_args=False skips the check in both
    tparams = {k: torch.tensor(np.asarray(v, "float32")) for k, v in params.items()}
    lparams = {k: leafgrad.tensor(np.asarray(v, "float32")) for k, v in params.items()}
    getattr(TD, cls_name)(**tparams, validate_args=False)
    getattr(LD, cls_name)(**lparams, validate_args=False)


BAD_VALUES = [
    ("normal", [0.0, float("nan"), 1.0]),
    ("uniform", [0.5, 2.0, 2.5]),
    ("bernoulli_probs", [0.5, 1.0, 0.0]),
    ("exponential", [-1.0, 1.0, 1.0]),
    ("poisson", [1.5, 1.0, 1.0]),
    ("categorical_probs", np.array([3, 0], "int64")),
    ("onehot_probs", [[0.0, 1.0, 1.0], [1.0, 0.0, 0.0]]),
    ("normal", [0.0, 1.0]),  # not broadcastable
]


@pytest.mark.parametrize("case,value", BAD_VALUES, ids=lambda x: str(x)[:30])
def test_support_validation_errors(case, value):
    td, ld, *_ = _make(case)
    dtype = value.dtype.name if isinstance(value, np.ndarray) else "float32"
    tv, lv = _pair(value, dtype, requires_grad=False)
    with pytest.raises(ValueError) as texc:
        td.log_prob(tv)
    with pytest.raises(ValueError) as lexc:
        ld.log_prob(lv)
    assert str(lexc.value) == str(texc.value)


def test_constructor_errors_and_scalars():
    for mod in (TD, LD):
        with pytest.raises(ValueError, match="Either `probs` or `logits`"):
            mod.Bernoulli()
        with pytest.raises(ValueError, match="Either `probs` or `logits`"):
            mod.Categorical(probs=None, logits=None)
    with pytest.raises(ValueError) as texc:
        TD.Categorical(torch.tensor(0.5))
    with pytest.raises(ValueError) as lexc:
        LD.Categorical(leafgrad.tensor(0.5))
    assert str(lexc.value) == str(texc.value)
    with pytest.raises(ValueError) as texc:
        TD.Normal("a", 1.0)
    with pytest.raises(ValueError) as lexc:
        LD.Normal("a", 1.0)
    assert str(lexc.value) == str(texc.value)
    # numbers: an empty batch shape and the default dtype
    td, ld = TD.Normal(0.0, 2.0), LD.Normal(0.0, 2.0)
    assert repr(ld) == repr(td) and tuple(ld.batch_shape) == ()
    torch.manual_seed(1)
    leafgrad.manual_seed(1)
    _same(ld.sample((3,)), td.sample((3,)), exact=True)
    _same(ld.log_prob(leafgrad.tensor(1.0)), td.log_prob(torch.tensor(1.0)))
    td, ld = TD.Exponential(2), LD.Exponential(2)
    assert repr(ld) == repr(td)
    _same(ld.entropy(), td.entropy())


def test_lazy_parameters_and_exponential_family_entropy():
    tp, lp = _pair([0.25, 0.5, 0.9])
    td, ld = TD.Bernoulli(probs=tp), LD.Bernoulli(probs=lp)
    assert "logits" not in ld.__dict__
    _same(ld.logits, td.logits)
    assert "logits" in ld.__dict__
    # ExponentialFamily.entropy (the Bregman form) against the closed forms
    for cls, params in (("Normal", ([0.5, -1.0], [1.0, 2.0])), ("Exponential", ([0.5, 2.0],))):
        tps = [_pair(p)[0] for p in params]
        lps = [_pair(p)[1] for p in params]
        t_ent = TD.ExponentialFamily.entropy(getattr(TD, cls)(*tps))
        l_ent = LD.ExponentialFamily.entropy(getattr(LD, cls)(*lps))
        _same(l_ent, t_ent, rtol=1e-5)
        t_ent.sum().backward()
        l_ent.sum().backward()
        for t, lt in zip(tps, lps):
            assert t.grad is None and lt.grad is None  # the natural parameters are detached


def test_sample_n_warns_and_default_validation_switch():
    ld = LD.Normal(leafgrad.zeros(2), leafgrad.ones(2))
    with pytest.warns(FutureWarning, match=r"`sample_n\(n\)` will be deprecated"):
        assert tuple(ld.sample_n(3).shape) == (3, 2)
    LD.Distribution.set_default_validate_args(False)
    try:
        LD.Normal(leafgrad.zeros(1), -leafgrad.ones(1))  # no check
    finally:
        LD.Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError):
        LD.Distribution.set_default_validate_args("yes")
    with pytest.raises(ValueError, match="to satisfy the constraint GreaterThan"):
        LD.Normal(leafgrad.zeros(1), -leafgrad.ones(1))


def test_score_function_estimator_training_step():
    """REINFORCE with a Categorical policy and a reparameterized Normal: the parameters'
    gradients after one step are PyTorch's."""
    tw, lw = _pair(np.linspace(-1, 1, 6).reshape(2, 3))
    tm, lm = _pair([0.3, -0.2])
    torch.manual_seed(11)
    leafgrad.manual_seed(11)
    losses = []
    for lib, mod, w, m in ((torch, TD, tw, tm), (leafgrad, LD, lw, lm)):
        lib.manual_seed(11)
        policy = mod.Categorical(logits=w)
        action = policy.sample()
        reward = action.float() * 2 - 1
        noise = mod.Normal(m, lib.ones(2)).rsample((4,))
        loss = -(policy.log_prob(action) * reward).sum() + noise.pow(2).mean()
        loss.backward()
        losses.append(loss)
    _same(losses[1], losses[0], rtol=1e-5)
    np.testing.assert_allclose(_np(lw.grad), _np(tw.grad), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(_np(lm.grad), _np(tm.grad), rtol=1e-5, atol=1e-6)
    assert math.isfinite(float(losses[1].detach()))
