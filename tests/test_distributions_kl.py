"""``kl_divergence`` against ``torch.distributions.kl``.

Every pair PyTorch registers among its own classes is registered here too; for each, the
divergence between equal distributions in both libraries has PyTorch's value, ``grad_fn`` name
and gradients in every parameter of ``p`` and ``q``. The lookup's rules (the most specific pair,
the ambiguity warning, the error for a pair with no formula) are checked on classes of the test's
own.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import leafgrad

# Note: torch._dynamo turns PyTorch's validation off process-wide (see conftest)
pytestmark = pytest.mark.usefixtures("torch_validates_distributions")

LIBS = ((torch, torch.distributions), (leafgrad, leafgrad.distributions))


def _np(t):
    return t.detach().numpy()


def _params(seed):
    """Parameter values for every family (shape (3,), or (3, k)), from one seed."""
    r = np.random.RandomState(seed)
    pos = lambda *s: (r.rand(*s) + 0.5).astype("float32")  # noqa: E731
    real = lambda *s: r.randn(*s).astype("float32")  # noqa: E731
    unit = lambda *s: (r.rand(*s) * 0.8 + 0.1).astype("float32")  # noqa: E731
    a = r.randn(3, 2, 2).astype("float32")
    tril = np.tril(a) * 0.3 + 2 * np.eye(2, dtype="float32")
    return {
        "loc": real(3),
        "scale": pos(3),
        "probs": unit(3),
        "rate": pos(3),
        "simplex": unit(3, 4),
        "conc1": pos(3),
        "conc0": pos(3),
        "conc": pos(3, 4),
        # Pareto's alpha on both sides of 1 and 2, where its divergences turn infinite
        "alpha": np.array([0.8, 1.5, 3.0], "float32") + r.rand(3).astype("float32") * 0.1,
        # Uniform bounds inside and outside [0, 1]
        "low": np.array([0.1, -0.5, 0.2], "float32") + r.rand(3).astype("float32") * 0.05,
        "high": np.array([0.6, 0.9, 1.5], "float32") + r.rand(3).astype("float32") * 0.05,
        "mvn_loc": real(3, 2),
        "tril": tril,
        "factor": real(3, 2, 1),
        "diag": pos(3, 2),
    }


# class name -> the parameters it takes (names in ``_params``) and how it is built
FAMILIES = {
    "Bernoulli": (["probs"], lambda d, p: d.Bernoulli(p["probs"])),
    "Beta": (["conc1", "conc0"], lambda d, p: d.Beta(p["conc1"], p["conc0"])),
    "Binomial": (["probs"], lambda d, p: d.Binomial(4, p["probs"])),
    "Categorical": (["simplex"], lambda d, p: d.Categorical(p["simplex"])),
    "Cauchy": (["loc", "scale"], lambda d, p: d.Cauchy(p["loc"], p["scale"])),
    "ContinuousBernoulli": (["probs"], lambda d, p: d.ContinuousBernoulli(p["probs"])),
    "Dirichlet": (["conc"], lambda d, p: d.Dirichlet(p["conc"])),
    "Exponential": (["rate"], lambda d, p: d.Exponential(p["rate"])),
    "Gamma": (["conc1", "rate"], lambda d, p: d.Gamma(p["conc1"], p["rate"])),
    "Geometric": (["probs"], lambda d, p: d.Geometric(p["probs"])),
    "Gumbel": (["loc", "scale"], lambda d, p: d.Gumbel(p["loc"], p["scale"])),
    "HalfNormal": (["scale"], lambda d, p: d.HalfNormal(p["scale"])),
    "Independent": (
        ["mvn_loc", "diag"],
        lambda d, p: d.Independent(d.Normal(p["mvn_loc"], p["diag"]), 1),
    ),
    "Laplace": (["loc", "scale"], lambda d, p: d.Laplace(p["loc"], p["scale"])),
    "LowRankMultivariateNormal": (
        ["mvn_loc", "factor", "diag"],
        lambda d, p: d.LowRankMultivariateNormal(p["mvn_loc"], p["factor"], p["diag"]),
    ),
    "MultivariateNormal": (
        ["mvn_loc", "tril"],
        lambda d, p: d.MultivariateNormal(p["mvn_loc"], scale_tril=p["tril"]),
    ),
    "Normal": (["loc", "scale"], lambda d, p: d.Normal(p["loc"], p["scale"])),
    "OneHotCategorical": (["simplex"], lambda d, p: d.OneHotCategorical(p["simplex"])),
    "Pareto": (["scale", "alpha"], lambda d, p: d.Pareto(p["scale"], p["alpha"])),
    "Poisson": (["rate"], lambda d, p: d.Poisson(p["rate"])),
    # the (TransformedDistribution, TransformedDistribution) pair, through LogNormal
    "TransformedDistribution": (
        ["loc", "scale"],
        lambda d, p: d.LogNormal(p["loc"], p["scale"]),
    ),
    "Uniform": (["low", "high"], lambda d, p: d.Uniform(p["low"], p["high"])),
}

TORCH_PAIRS = sorted(
    (p.__name__, q.__name__)
    for p, q in torch.distributions.kl._KL_REGISTRY
    if p.__module__.startswith("torch.distributions.")
    and q.__module__.startswith("torch.distributions.")
)


def _build(lib, dist, name, seed):
    names, make = FAMILIES[name]
    values = _params(seed)
    leaves = {k: lib.tensor(values[k], requires_grad=True) for k in names}
    return make(dist, leaves), leaves


def test_every_pytorch_pair_whose_classes_exist_is_registered():
    ours = {(p.__name__, q.__name__) for p, q in leafgrad.distributions.kl._KL_REGISTRY}
    assert ours == set(TORCH_PAIRS)
    assert set(leafgrad.distributions.kl.__all__) == {"register_kl", "kl_divergence"}


@pytest.mark.parametrize("pair", [p for p in TORCH_PAIRS if p[0] in FAMILIES and p[1] in FAMILIES])
def test_kl_value_and_gradients(pair):
    p_name, q_name = pair
    results = []
    for lib, dist in LIBS:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            p, p_leaves = _build(lib, dist, p_name, 1)
            q, q_leaves = _build(lib, dist, q_name, 2)
            kl = dist.kl_divergence(p, q)
            name = kl.grad_fn.name() if kl.grad_fn is not None else None
            if kl.requires_grad:
                kl.sum().backward()
        grads = [v.grad for v in list(p_leaves.values()) + list(q_leaves.values())]
        results.append((kl, name, grads))
    (tkl, tname, tgrads), (lkl, lname, lgrads) = results
    assert lname == tname
    assert tuple(lkl.shape) == tuple(tkl.shape) and str(lkl.dtype) == str(tkl.dtype)
    assert lkl.requires_grad == tkl.requires_grad
    np.testing.assert_allclose(_np(lkl), _np(tkl), rtol=2e-5, atol=2e-5, equal_nan=True)
    for tg, lg in zip(tgrads, lgrads):
        assert (tg is None) == (lg is None)
        if tg is not None:
            np.testing.assert_allclose(_np(lg), _np(tg), rtol=2e-4, atol=2e-5, equal_nan=True)


def test_bregman_divergence_of_an_exponential_family():
    """``(ExponentialFamily, ExponentialFamily)``: the divergence from the log-normalizer."""
    out = []
    for lib, dist in LIBS:
        p, p_leaves = _build(lib, dist, "Normal", 1)
        q, q_leaves = _build(lib, dist, "Normal", 2)
        kl = dist.kl._kl_expfamily_expfamily(p, q)
        kl.sum().backward()
        out.append((kl, [v.grad for v in list(p_leaves.values()) + list(q_leaves.values())]))
    (tkl, tg), (lkl, lg) = out
    assert lkl.grad_fn.name() == tkl.grad_fn.name()
    np.testing.assert_allclose(_np(lkl), _np(tkl), rtol=2e-5, atol=2e-6)
    for a, b in zip(tg, lg):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(_np(b), _np(a), rtol=2e-4, atol=2e-6)


def _errors(fn):
    texts = []
    for lib, dist in LIBS:
        with pytest.raises(Exception) as exc:
            fn(lib, dist)
        texts.append((type(exc.value).__name__, str(exc.value)))
    assert texts[1] == texts[0]
    return texts[0]


ERRORS = {
    "no_formula": lambda lib, d: d.kl_divergence(
        d.Cauchy(lib.zeros(2), lib.ones(2)), d.Normal(lib.zeros(2), lib.ones(2))
    ),
    "different_exponential_families": lambda lib, d: d.kl_divergence(
        d.Bernoulli(lib.tensor([0.5])), d.Normal(lib.zeros(1), lib.ones(1))
    ),
    "independent_dims": lambda lib, d: d.kl_divergence(
        d.Independent(d.Normal(lib.zeros(2, 2), lib.ones(2, 2)), 1),
        d.Independent(d.Normal(lib.zeros(2, 2), lib.ones(2, 2)), 2),
    ),
    "mvn_event_shapes": lambda lib, d: d.kl_divergence(
        d.MultivariateNormal(lib.zeros(2), lib.eye(2)),
        d.MultivariateNormal(lib.zeros(3), lib.eye(3)),
    ),
    "lowrank_event_shapes": lambda lib, d: d.kl_divergence(
        d.LowRankMultivariateNormal(lib.zeros(2), lib.ones(2, 1), lib.ones(2)),
        d.LowRankMultivariateNormal(lib.zeros(3), lib.ones(3, 1), lib.ones(3)),
    ),
    "mvn_lowrank_event_shapes": lambda lib, d: d.kl_divergence(
        d.MultivariateNormal(lib.zeros(2), lib.eye(2)),
        d.LowRankMultivariateNormal(lib.zeros(3), lib.ones(3, 1), lib.ones(3)),
    ),
    "lowrank_mvn_event_shapes": lambda lib, d: d.kl_divergence(
        d.LowRankMultivariateNormal(lib.zeros(3), lib.ones(3, 1), lib.ones(3)),
        d.MultivariateNormal(lib.zeros(2), lib.eye(2)),
    ),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_kl_errors(case):
    _errors(ERRORS[case])


def test_transformed_distributions_with_different_transforms():
    def fn(lib, d):
        p = d.LogNormal(lib.zeros(2), lib.ones(2))
        q = d.TransformedDistribution(d.Normal(lib.zeros(2), lib.ones(2)), [])
        return d.kl_divergence(p, q)

    assert _errors(fn) == ("NotImplementedError", "")


def test_lookup_takes_the_most_specific_pair_and_warns_when_ambiguous():
    results = []
    for lib, dist in LIBS:

        def make(name, base):
            return type(name, (base,), {"arg_constraints": {}})

        P = make("P", dist.Distribution)
        P2 = make("P2", P)
        Q = make("Q", dist.Distribution)
        Q2 = make("Q2", Q)
        dist.register_kl(P, Q)(lambda p, q, lib=lib: lib.tensor(0.0))
        dist.register_kl(P2, Q)(lambda p, q, lib=lib: lib.tensor(1.0))
        dist.register_kl(P, Q2)(lambda p, q, lib=lib: lib.tensor(2.0))
        # one most specific pair each: no warning
        found = [float(dist.kl_divergence(P2(), Q())), float(dist.kl_divergence(P(), Q2()))]
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            found.append(float(dist.kl_divergence(P2(), Q2())))
        found.append([(w.category.__name__, str(w.message)) for w in caught])
        # registering the most specific pair settles it (and clears the memo)
        dist.register_kl(P2, Q2)(lambda p, q, lib=lib: lib.tensor(3.0))
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            found.append(float(dist.kl_divergence(P2(), Q2())))
        results.append(found)
    assert results[1] == results[0]
    assert results[0][3] == [
        ("RuntimeWarning", "Ambiguous kl_divergence(P2, Q2). Please register_kl(P2, Q2)")
    ]


def test_register_kl_returns_the_function_and_the_memo_is_reset():
    kl = leafgrad.distributions.kl

    class Mine(leafgrad.distributions.Normal):
        pass

    p = Mine(leafgrad.zeros(1), leafgrad.ones(1))
    before = kl.kl_divergence(p, p)  # through (Normal, Normal)
    assert (Mine, Mine) in kl._KL_MEMOIZE

    def fun(p, q):
        return leafgrad.full((1,), 7.0)

    assert kl.register_kl(Mine, Mine)(fun) is fun
    assert kl._KL_MEMOIZE == {}
    assert float(kl.kl_divergence(p, p)[0]) == 7.0
    assert float(before[0]) == 0.0
