"""The multivariate and composite distributions against ``torch.distributions``.

``MultivariateNormal`` (from a covariance, a precision or a Cholesky factor),
``LowRankMultivariateNormal``, ``Independent``, ``MixtureSameFamily`` and ``Multinomial``: each
case runs the same code in both libraries on equal inputs and compares samples after the same
seed, scores and moments with their ``grad_fn`` names, gradients of ``log_prob(rsample)`` in the
parameters, ``expand``, reprs and the texts of the errors. Results that pass through a
factorization (Cholesky, triangular solves) agree to rounding; elementwise ones bit for bit.
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

_RNG = np.random.RandomState(0)
LOC = _RNG.randn(2, 3)
_A = _RNG.randn(2, 3, 3)
COV = _A @ _A.transpose(0, 2, 1) + 2 * np.eye(3)  # a batch of two 3x3 covariances
TRIL = np.linalg.cholesky(COV)
PREC = np.linalg.inv(COV)
COV_FACTOR = _RNG.randn(2, 3, 2)
COV_DIAG = _RNG.rand(2, 3) + 0.5


def _np(t):
    return t.detach().numpy()


def _name(t):
    return t.grad_fn.name() if t.grad_fn is not None else None


def _run(fn):
    """``fn(lib, distributions)`` for torch, then for leafgrad, each with the same seed first."""
    out = []
    for lib, dist in LIBS:
        lib.manual_seed(5)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out.append(fn(lib, dist))
    return out


def _compare(t, g, exact=False, rtol=1e-10, atol=1e-12):
    """Recursively: tensors by value, dtype, shape, requires_grad and grad_fn name."""
    if isinstance(t, dict):
        assert t.keys() == g.keys()
        for k in t:
            try:
                _compare(t[k], g[k], exact=exact, rtol=rtol, atol=atol)
            except AssertionError as e:
                raise AssertionError(f"{k}: {e}") from e
    elif isinstance(t, (list, tuple)):
        assert len(t) == len(g)
        for a, b in zip(t, g):
            _compare(a, b, exact=exact, rtol=rtol, atol=atol)
    elif isinstance(t, torch.Tensor):
        assert isinstance(g, leafgrad.Tensor), type(g)
        assert tuple(g.shape) == tuple(t.shape)
        assert str(g.dtype) == str(t.dtype)
        assert _name(g) == _name(t)
        assert g.requires_grad == t.requires_grad
        if exact:
            np.testing.assert_array_equal(_np(g), _np(t))
        else:
            np.testing.assert_allclose(_np(g), _np(t), rtol=rtol, atol=atol, equal_nan=True)
    else:
        assert g == t


def _error(fn):
    """The type and text of what ``fn(lib, distributions)`` raises, the same in both."""
    texts = []
    for lib, dist in LIBS:
        with pytest.raises(Exception) as exc:
            fn(lib, dist)
        texts.append((type(exc.value).__name__, str(exc.value)))
    assert texts[1] == texts[0]
    return texts[0]


def _leaf(lib, values, dtype="float64"):
    return lib.tensor(np.asarray(values, dtype), requires_grad=True)


# ---- MultivariateNormal ----

MVN_PARAMS = {
    "scale_tril": TRIL,
    "covariance_matrix": COV,
    "precision_matrix": PREC,
    "unbatched_matrix": COV[0],
}


@pytest.mark.parametrize("param", sorted(MVN_PARAMS))
def test_multivariate_normal(param):
    def fn(lib, dist):
        loc = _leaf(lib, LOC)
        mat = _leaf(lib, MVN_PARAMS[param])
        key = "covariance_matrix" if param == "unbatched_matrix" else param
        m = dist.MultivariateNormal(loc, **{key: mat})
        x = m.rsample((4,))
        lp = m.log_prob(x)
        ent = m.entropy()
        (lp.sum() + ent.sum()).backward()
        out = {
            "x": x,
            "lp": lp,
            "entropy": ent,
            "mean": m.mean,
            "mode": m.mode,
            "variance": m.variance,
            "stddev": m.stddev,
            "grads": [loc.grad, mat.grad],
            "repr": repr(m),
            "shapes": (tuple(m.batch_shape), tuple(m.event_shape)),
        }
        for name in ("scale_tril", "covariance_matrix", "precision_matrix"):
            out[name] = getattr(m, name)
        if param == "scale_tril":  # the same shapes again, through expand
            e = m.expand((4, 2))
            out["expanded"] = (repr(e), tuple(e.batch_shape), e.log_prob(x), e.rsample())
            out["lp_broadcast"] = m.log_prob(x[0, :1])  # a value of a smaller batch
        return out

    t, g = _run(fn)
    _compare(t, g)


def test_multivariate_normal_mahalanobis_broadcasts_the_factor():
    """A factor of batch (2, 1) against values of batch (4, 2, 3): the reshaping of
    Note [mahalanobis batching]."""

    def fn(lib, dist):
        tril = _leaf(lib, TRIL[:, None])
        loc = _leaf(lib, np.zeros((3, 3)))
        m = dist.MultivariateNormal(loc, scale_tril=tril)
        value = lib.tensor(np.linspace(-2, 2, 72).reshape(4, 2, 3, 3))
        lp = m.log_prob(value)
        lp.sum().backward()
        return {"lp": lp, "grads": [tril.grad, loc.grad], "shape": tuple(m.batch_shape)}

    t, g = _run(fn)
    _compare(t, g)


MVN_ERRORS = {
    "scalar_loc": lambda lib, d: d.MultivariateNormal(lib.tensor(0.0), lib.eye(1)),
    "no_matrix": lambda lib, d: d.MultivariateNormal(lib.zeros(2)),
    "two_matrices": lambda lib, d: d.MultivariateNormal(
        lib.zeros(2), lib.eye(2), scale_tril=lib.eye(2)
    ),
    "vector_tril": lambda lib, d: d.MultivariateNormal(lib.zeros(2), scale_tril=lib.ones(2)),
    "vector_cov": lambda lib, d: d.MultivariateNormal(lib.zeros(2), lib.ones(2)),
    "vector_prec": lambda lib, d: d.MultivariateNormal(lib.zeros(2), precision_matrix=lib.ones(2)),
    "not_lower": lambda lib, d: d.MultivariateNormal(
        lib.zeros(2), scale_tril=lib.tensor([[1.0, 1.0], [0.0, 1.0]])
    ),
    "not_positive_definite": lambda lib, d: d.MultivariateNormal(
        lib.zeros(2), lib.tensor([[1.0, 2.0], [2.0, 1.0]])
    ),
    "bad_value_shape": lambda lib, d: d.MultivariateNormal(lib.zeros(2), lib.eye(2)).log_prob(
        lib.zeros(3)
    ),
    "value_not_broadcastable": lambda lib, d: d.MultivariateNormal(
        lib.zeros(2, 2), lib.eye(2)
    ).log_prob(lib.zeros(3, 2)),
    "nan_value": lambda lib, d: d.MultivariateNormal(lib.zeros(2), lib.eye(2)).log_prob(
        lib.tensor([0.0, float("nan")])
    ),
    "custom_init_expand": lambda lib, d: type(
        "Sub", (d.MultivariateNormal,), {"__init__": lambda self: None}
    )().expand((2,)),
}


@pytest.mark.parametrize("case", sorted(MVN_ERRORS))
def test_multivariate_normal_errors(case):
    _error(MVN_ERRORS[case])


def test_multivariate_normal_validate_args_false_skips_the_check():
    def fn(lib, dist):
        tril = lib.tensor([[1.0, 1.0], [0.0, 1.0]])
        m = dist.MultivariateNormal(lib.zeros(2), scale_tril=tril, validate_args=False)
        return m.log_prob(lib.tensor([1.0, 2.0]))

    t, g = _run(fn)
    _compare(t, g, rtol=1e-6)


# ---- LowRankMultivariateNormal ----


@pytest.mark.parametrize("batched_factor", [True, False])
def test_lowrank_multivariate_normal(batched_factor):
    def fn(lib, dist):
        loc = _leaf(lib, LOC)
        factor = _leaf(lib, COV_FACTOR if batched_factor else COV_FACTOR[0])
        diag = _leaf(lib, COV_DIAG)
        m = dist.LowRankMultivariateNormal(loc, factor, diag)
        x = m.rsample((4,))
        lp = m.log_prob(x)
        (lp.sum() + m.entropy().sum()).backward()
        out = {
            "x": x,
            "lp": lp,
            "entropy": m.entropy(),
            "capacitance": m._capacitance_tril,
            "grads": [loc.grad, factor.grad, diag.grad],
            "repr": repr(m),
        }
        for name in (
            "mean",
            "mode",
            "variance",
            "scale_tril",
            "covariance_matrix",
            "precision_matrix",
        ):
            out[name] = getattr(m, name)
        if batched_factor:  # the same shapes again, through expand
            e = m.expand((4, 2))
            out["expanded"] = (repr(e), e.log_prob(x), e.rsample(), e.cov_factor)
        return out

    t, g = _run(fn)
    _compare(t, g)


def test_lowrank_scale_tril_gradient():
    def fn(lib, dist):
        factor = _leaf(lib, COV_FACTOR)
        diag = _leaf(lib, COV_DIAG)
        m = dist.LowRankMultivariateNormal(lib.zeros(2, 3, dtype=lib.float64), factor, diag)
        (m.scale_tril.sum() + m.precision_matrix.sum()).backward()
        return [factor.grad, diag.grad]

    t, g = _run(fn)
    _compare(t, g)


LOWRANK_ERRORS = {
    "scalar_loc": lambda lib, d: d.LowRankMultivariateNormal(
        lib.tensor(0.0), lib.ones(1, 1), lib.ones(1)
    ),
    "vector_factor": lambda lib, d: d.LowRankMultivariateNormal(
        lib.zeros(2), lib.ones(2), lib.ones(2)
    ),
    "factor_rows": lambda lib, d: d.LowRankMultivariateNormal(
        lib.zeros(2), lib.ones(3, 1), lib.ones(2)
    ),
    "diag_size": lambda lib, d: d.LowRankMultivariateNormal(
        lib.zeros(2), lib.ones(2, 1), lib.ones(3)
    ),
    "batch_shapes": lambda lib, d: d.LowRankMultivariateNormal(
        lib.zeros(2, 2), lib.ones(3, 2, 1), lib.ones(2)
    ),
    "negative_diag": lambda lib, d: d.LowRankMultivariateNormal(
        lib.zeros(2), lib.ones(2, 1), lib.tensor([1.0, -1.0])
    ),
}


@pytest.mark.parametrize("case", sorted(LOWRANK_ERRORS))
def test_lowrank_multivariate_normal_errors(case):
    _error(LOWRANK_ERRORS[case])


# ---- Independent ----


def test_independent():
    def fn(lib, dist):
        loc = lib.tensor(LOC.astype("float32"), requires_grad=True)
        scale = lib.tensor(COV_DIAG.astype("float32"), requires_grad=True)
        base = dist.Normal(loc, scale)
        m = dist.Independent(base, 1)
        x = m.rsample((2,))
        lp = m.log_prob(x)
        (lp.sum() + m.entropy().sum()).backward()
        e = m.expand((4, 2))
        m2 = dist.Independent(base, 2)
        return {
            "x": x,
            "lp": lp,
            "entropy": m.entropy(),
            "moments": [m.mean, m.mode, m.variance, m.stddev],
            "grads": [loc.grad, scale.grad],
            "sample": m.sample((3,)),
            "repr": [repr(m), repr(m2), repr(m.support), repr(m2.support), repr(e)],
            "shapes": [tuple(m.batch_shape), tuple(m.event_shape), tuple(m2.event_shape)],
            "flags": [m.has_rsample, m.has_enumerate_support],
            "expanded": (tuple(e.batch_shape), e.log_prob(x[0]), e.sample()),
            "lp2": m2.log_prob(x),
        }

    t, g = _run(fn)
    _compare(t, g, rtol=2e-6, atol=2e-6)
    _compare((t["x"], t["sample"]), (g["x"], g["sample"]), exact=True)


def test_independent_of_discrete_and_zero_dims():
    def fn(lib, dist):
        probs = lib.tensor([[0.2, 0.7], [0.5, 0.9]], requires_grad=True)
        m0 = dist.Independent(dist.Bernoulli(probs), 0)
        m1 = dist.Independent(dist.Bernoulli(probs), 1)
        x = m1.sample((2,))
        lp = m1.log_prob(x)
        lp.sum().backward()
        return {
            "x": x,
            "lp": lp,
            "lp0": m0.log_prob(x),
            "support0": m0.enumerate_support(),
            "flags": [m0.has_enumerate_support, m1.has_enumerate_support, m1.has_rsample],
            "grad": probs.grad,
            "entropy": m1.entropy(),
        }

    t, g = _run(fn)
    _compare(t, g, rtol=2e-6, atol=2e-6)
    _compare(t["x"], g["x"], exact=True)


INDEPENDENT_ERRORS = {
    "too_many_dims": lambda lib, d: d.Independent(d.Normal(lib.zeros(2), lib.ones(2)), 2),
    "enumerate": lambda lib, d: d.Independent(
        d.Bernoulli(lib.tensor([0.5, 0.5])), 1
    ).enumerate_support(),
    "value_outside_support": lambda lib, d: d.Independent(
        d.Bernoulli(lib.tensor([0.5, 0.5])), 1, validate_args=True
    ).log_prob(lib.tensor([0.5, 1.0])),
}


@pytest.mark.parametrize("case", sorted(INDEPENDENT_ERRORS))
def test_independent_errors(case):
    _error(INDEPENDENT_ERRORS[case])


# ---- MixtureSameFamily ----


@pytest.mark.parametrize("component", ["normal", "independent", "batched_mixture"])
def test_mixture_same_family(component):
    def fn(lib, dist):
        logits = lib.tensor([[0.1, -0.3, 0.7], [1.0, 0.2, -0.5]], requires_grad=True)
        loc = lib.tensor(np.linspace(-2, 2, 6).reshape(2, 3).astype("float32"), requires_grad=True)
        scale = lib.tensor(np.linspace(0.5, 1.5, 6).reshape(2, 3).astype("float32"))
        scale.requires_grad_()
        if component == "normal":
            mix = dist.Categorical(logits=logits)
            comp = dist.Normal(loc, scale)
            value = lib.tensor([[0.3, -1.0], [1.5, 0.1], [0.0, 2.0], [-0.5, 0.5]])
        elif component == "independent":
            mix = dist.Categorical(logits=logits[0])
            comp = dist.Independent(dist.Normal(loc.t(), scale.t()), 1)
            value = lib.tensor([[0.3, -1.0], [1.5, 0.1], [0.0, 2.0], [-0.5, 0.5]])
        else:
            mix = dist.Categorical(probs=logits.exp())
            comp = dist.Normal(loc, scale)
            value = lib.tensor([[0.3, -1.0], [1.5, 0.1], [0.0, 2.0], [-0.5, 0.5]])
        m = dist.MixtureSameFamily(mix, comp)
        lp = m.log_prob(value)
        (lp.sum() + m.mean.sum() + m.variance.sum()).backward()
        out = {
            "sample": m.sample(),
            "samples": m.sample((4,)),
            "after": lib.rand(2),  # the generator's state after
            "lp": lp,
            "mean": m.mean,
            "variance": m.variance,
            "grads": [logits.grad, loc.grad, scale.grad],
            "repr": repr(m),
            "support": repr(m.support),
            "shapes": (tuple(m.batch_shape), tuple(m.event_shape)),
        }
        if component != "independent":
            out["cdf"] = m.cdf(value)
        if component == "normal":
            e = m.expand((4, 2))
            out["expanded"] = (tuple(e.batch_shape), e.log_prob(value), e.sample())
        return out

    t, g = _run(fn)
    _compare(t, g, rtol=2e-6, atol=2e-6)
    _compare((t["samples"], t["after"]), (g["samples"], g["after"]), exact=True)


MIXTURE_ERRORS = {
    "not_categorical": lambda lib, d: d.MixtureSameFamily(
        d.Normal(lib.zeros(2), lib.ones(2)), d.Normal(lib.zeros(2), lib.ones(2))
    ),
    "not_distribution": lambda lib, d: d.MixtureSameFamily(
        d.Categorical(lib.ones(2)), lib.zeros(2)
    ),
    "batch_shapes": lambda lib, d: d.MixtureSameFamily(
        d.Categorical(lib.ones(3, 2)), d.Normal(lib.zeros(4, 2), lib.ones(4, 2))
    ),
    "components": lambda lib, d: d.MixtureSameFamily(
        d.Categorical(lib.ones(3)), d.Normal(lib.zeros(2), lib.ones(2))
    ),
    "value_shape": lambda lib, d: d.MixtureSameFamily(
        d.Categorical(lib.ones(2)), d.Independent(d.Normal(lib.zeros(2, 3), lib.ones(2, 3)), 1)
    ).log_prob(lib.zeros(2)),
    # PyTorch's gather fails for a mixture without a batch over batched components
    "unbatched_mixture_sample": lambda lib, d: d.MixtureSameFamily(
        d.Categorical(lib.ones(2)), d.Normal(lib.zeros(3, 2), lib.ones(3, 2))
    ).sample(),
    "rsample": lambda lib, d: d.MixtureSameFamily(
        d.Categorical(lib.ones(2)), d.Normal(lib.zeros(2), lib.ones(2))
    ).rsample(),
}


@pytest.mark.parametrize("case", sorted(MIXTURE_ERRORS))
def test_mixture_same_family_errors(case):
    _error(MIXTURE_ERRORS[case])


# ---- Multinomial ----


@pytest.mark.parametrize("param", ["probs", "logits"])
def test_multinomial(param):
    def fn(lib, dist):
        p = lib.tensor([[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]], requires_grad=True)
        arg = p if param == "probs" else p.log()
        m = dist.Multinomial(5, **{param: arg})
        s = m.sample()
        ss = m.sample((3,))
        value = lib.tensor([[1.0, 2.0, 2.0], [5.0, 0.0, 0.0]])
        lp = m.log_prob(value)
        ent = m.entropy()
        (lp.sum() + ent.sum()).backward()
        e = m.expand((3, 2))
        return {
            "s": s,
            "ss": ss,
            "after": lib.rand(2),
            "lp": lp,
            "entropy": ent,
            "moments": [m.mean, m.variance, m.probs, m.logits],
            "grad": p.grad,
            "repr": [repr(m), repr(m.support), repr(e)],
            "shapes": (tuple(m.batch_shape), tuple(m.event_shape), tuple(m.param_shape)),
            "expanded": (tuple(e.batch_shape), e.log_prob(value), e.sample()),  # as ss
        }

    t, g = _run(fn)
    _compare(t, g, rtol=2e-6, atol=2e-6)
    _compare((t["s"], t["ss"], t["after"]), (g["s"], g["ss"], g["after"]), exact=True)


def test_multinomial_zero_probability_and_counts():
    def fn(lib, dist):
        logits = lib.tensor([0.0, -float("inf"), 1.0], requires_grad=True)
        m = dist.Multinomial(3, logits=logits, validate_args=False)
        lp = m.log_prob(lib.tensor([[1.0, 0.0, 2.0], [0.0, 0.0, 3.0]]))
        lp.sum().backward()
        return {"lp": lp, "grad": logits.grad}

    t, g = _run(fn)
    _compare(t, g, rtol=2e-6, atol=2e-6)


MULTINOMIAL_ERRORS = {
    "tensor_count": lambda lib, d: d.Multinomial(lib.tensor(3), lib.ones(2)),
    "negative_count": lambda lib, d: d.Multinomial(-1, lib.ones(3)),
    "both": lambda lib, d: d.Multinomial(2, lib.ones(2), lib.ones(2)),
    "negative_probs": lambda lib, d: d.Multinomial(2, lib.tensor([0.5, -0.5, 1.0])),
    "bad_counts": lambda lib, d: d.Multinomial(2, lib.ones(3)).log_prob(
        lib.tensor([1.0, 2.0, 0.0])
    ),
}


@pytest.mark.parametrize("case", sorted(MULTINOMIAL_ERRORS))
def test_multinomial_errors(case):
    _error(MULTINOMIAL_ERRORS[case])


# ---- LKJCholesky and Wishart (they sample through Beta and Chi2: gamma variables) ----


@pytest.mark.parametrize("concentration", [0.5, [0.7, 2.0]])
def test_lkj_cholesky(concentration):

    def fn(lib, dist):
        conc = lib.tensor(concentration, dtype=lib.float64, requires_grad=True)
        m = dist.LKJCholesky(3, conc)
        s = m.sample((2,))
        lp = m.log_prob(s)
        lp.sum().backward()
        e = m.expand((4,) + tuple(m.batch_shape))
        return {
            "s": s,
            "lp": lp,
            "grad": conc.grad,
            "expanded": (repr(e), e.sample()),
            "repr": [repr(m), repr(m.support)],
            "shapes": (tuple(m.batch_shape), tuple(m.event_shape)),
        }

    t, g = _run(fn)
    _compare(t, g)


def test_lkj_cholesky_errors():
    _error(lambda lib, d: d.LKJCholesky(1, 1.0))
    _error(lambda lib, d: d.LKJCholesky(2, 1.0).log_prob(lib.tensor([[1.0, 0.0], [2.0, 1.0]])))


@pytest.mark.parametrize("param", ["covariance_matrix", "precision_matrix", "scale_tril"])
def test_wishart(param):

    def fn(lib, dist):
        df = lib.tensor([4.0, 5.5], dtype=lib.float64, requires_grad=True)
        mat = _leaf(
            lib, {"covariance_matrix": COV, "precision_matrix": PREC, "scale_tril": TRIL}[param]
        )
        m = dist.Wishart(df, **{param: mat})
        x = m.rsample((2,))  # PyTorch warns "Singular sample detected." and redraws
        lp = m.log_prob(x.detach())
        ent = m.entropy()
        (lp.sum() + ent.sum()).backward()
        e = m.expand((3, 2))
        return {
            "x": x,
            "after": lib.rand(2),
            "lp": lp,
            "entropy": ent,
            "bregman": dist.ExponentialFamily.entropy(m),
            "moments": [m.mean, m.mode, m.variance],
            "matrices": [m.scale_tril, m.covariance_matrix, m.precision_matrix],
            "grads": [df.grad, mat.grad],
            "repr": repr(m),
            "expanded": (repr(e), e.log_prob(x[0].detach())),
        }

    t, g = _run(fn)
    _compare(t, g, rtol=1e-8, atol=1e-10)


WISHART_ERRORS = {
    "two_matrices": lambda lib, d: d.Wishart(3.0, lib.eye(2), scale_tril=lib.eye(2)),
    "vector": lambda lib, d: d.Wishart(3.0, lib.ones(2)),
    "small_df": lambda lib, d: d.Wishart(0.5, lib.eye(2)),
    "not_positive_definite": lambda lib, d: d.Wishart(3.0, lib.tensor([[1.0, 2.0], [2.0, 1.0]])),
    "value": lambda lib, d: d.Wishart(3.0, lib.eye(2)).log_prob(
        lib.tensor([[1.0, 2.0], [2.0, 1.0]])
    ),
}


@pytest.mark.parametrize("case", sorted(WISHART_ERRORS))
def test_wishart_errors(case):
    _error(WISHART_ERRORS[case])
