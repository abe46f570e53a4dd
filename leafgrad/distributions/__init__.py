"""``torch.distributions``: parameterizable probability distributions and sampling.

Every distribution is plain Python over leafgrad's ops, written as PyTorch 2.13 writes it, so a
``log_prob`` or an ``rsample`` records PyTorch's graph (the same nodes, the same gradients) and a
sample after ``manual_seed`` is PyTorch's sample: the same draws from the same generator stream.
"""

from . import constraints  # noqa: F401
from .distribution import Distribution
from .exp_family import ExponentialFamily

# the simple families
from .bernoulli import Bernoulli
from .categorical import Categorical
from .cauchy import Cauchy
from .exponential import Exponential
from .geometric import Geometric
from .laplace import Laplace
from .normal import Normal
from .one_hot_categorical import OneHotCategorical, OneHotCategoricalStraightThrough
from .poisson import Poisson
from .uniform import Uniform

# --- transformed distributions (transforms.py, transformed_distribution.py) ---
from . import constraint_registry, transforms  # noqa: F401
from .constraint_registry import biject_to, transform_to
from .continuous_bernoulli import ContinuousBernoulli
from .gumbel import Gumbel
from .half_cauchy import HalfCauchy
from .half_normal import HalfNormal
from .kumaraswamy import Kumaraswamy
from .log_normal import LogNormal
from .logistic_normal import LogisticNormal
from .pareto import Pareto
from .relaxed_bernoulli import RelaxedBernoulli
from .relaxed_categorical import RelaxedOneHotCategorical
from .transformed_distribution import TransformedDistribution
from .transforms import (
    AbsTransform,
    AffineTransform,
    CatTransform,
    ComposeTransform,
    CorrCholeskyTransform,
    CumulativeDistributionTransform,
    ExpTransform,
    IndependentTransform,
    LowerCholeskyTransform,
    PositiveDefiniteTransform,
    PowerTransform,
    ReshapeTransform,
    SigmoidTransform,
    SoftmaxTransform,
    SoftplusTransform,
    StackTransform,
    StickBreakingTransform,
    TanhTransform,
    Transform,
    identity_transform,
)
from .von_mises import VonMises
from .weibull import Weibull

# --- multivariate and composite distributions ---
from .independent import Independent
from .lkj_cholesky import LKJCholesky
from .lowrank_multivariate_normal import LowRankMultivariateNormal
from .mixture_same_family import MixtureSameFamily
from .multinomial import Multinomial
from .multivariate_normal import MultivariateNormal
from .wishart import Wishart

# --- gamma family ---
from .beta import Beta
from .binomial import Binomial
from .chi2 import Chi2
from .dirichlet import Dirichlet
from .fishersnedecor import FisherSnedecor
from .gamma import Gamma
from .generalized_pareto import GeneralizedPareto
from .inverse_gamma import InverseGamma
from .negative_binomial import NegativeBinomial
from .studentT import StudentT

# --- KL divergence ---
from . import kl
from .kl import kl_divergence, register_kl

# PyTorch's public names, in its order, as far as leafgrad has them
_TORCH_ALL = [
    "Bernoulli",
    "Beta",
    "Binomial",
    "Categorical",
    "Cauchy",
    "Chi2",
    "ContinuousBernoulli",
    "Dirichlet",
    "Distribution",
    "Exponential",
    "ExponentialFamily",
    "FisherSnedecor",
    "Gamma",
    "GeneralizedPareto",
    "Geometric",
    "Gumbel",
    "HalfCauchy",
    "HalfNormal",
    "Independent",
    "InverseGamma",
    "Kumaraswamy",
    "LKJCholesky",
    "Laplace",
    "LogNormal",
    "LogisticNormal",
    "LowRankMultivariateNormal",
    "MixtureSameFamily",
    "Multinomial",
    "MultivariateNormal",
    "NegativeBinomial",
    "Normal",
    "OneHotCategorical",
    "OneHotCategoricalStraightThrough",
    "Pareto",
    "RelaxedBernoulli",
    "RelaxedOneHotCategorical",
    "StudentT",
    "Poisson",
    "Uniform",
    "VonMises",
    "Weibull",
    "Wishart",
    "TransformedDistribution",
    "biject_to",
    "kl_divergence",
    "register_kl",
    "transform_to",
    "AbsTransform",
    "AffineTransform",
    "CatTransform",
    "ComposeTransform",
    "CorrCholeskyTransform",
    "CumulativeDistributionTransform",
    "ExpTransform",
    "IndependentTransform",
    "LowerCholeskyTransform",
    "PositiveDefiniteTransform",
    "PowerTransform",
    "ReshapeTransform",
    "SigmoidTransform",
    "SoftplusTransform",
    "TanhTransform",
    "SoftmaxTransform",
    "StackTransform",
    "StickBreakingTransform",
    "Transform",
    "identity_transform",
]
__all__ = [name for name in _TORCH_ALL if name in globals()]
