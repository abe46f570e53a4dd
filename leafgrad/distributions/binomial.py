"""``Binomial(total_count=1, probs=None, logits=None)``."""

from __future__ import annotations

import leafgrad as torch

from . import constraints
from .bernoulli import PROBS_OR_LOGITS
from .distribution import Distribution
from .utils import broadcast_all, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["Binomial"]


def _clamp_by_zero(x):
    # clamp(x, min=0) whose gradient at 0 is one half
    return (x.clamp(min=0) + x - x.clamp(max=0)) / 2


def _count_and_param(dist, total_count, probs, logits):
    """Broadcast ``total_count`` with the one parameter given, store both (the count in the
    parameter's dtype) and the parameter as ``_param``."""
    if (probs is None) == (logits is None):
        raise ValueError(PROBS_OR_LOGITS)
    name = "probs" if probs is not None else "logits"
    count, param = broadcast_all(total_count, probs if probs is not None else logits)
    dist.total_count = count.type_as(param)
    setattr(dist, name, param)
    dist._param = param


def _expand_count_and_param(new, old, batch_shape):
    new.total_count = old.total_count.expand(batch_shape)
    for name in ("probs", "logits"):
        if name in old.__dict__:
            setattr(new, name, getattr(old, name).expand(batch_shape))
            new._param = getattr(new, name)


class Binomial(Distribution):
    """The number of successes in ``total_count`` independent trials, each a success with
    probability ``probs`` (or log-odds ``logits``); ``total_count`` broadcasts with it.

    Example::

        >>> m = Binomial(100, torch.tensor([0.0, 0.2, 0.8, 1.0]))
        >>> m.sample()  # counts in [0, 100]
    """

    arg_constraints = {
        "total_count": constraints.nonnegative_integer,
        "probs": constraints.unit_interval,
        "logits": constraints.real,
    }
    has_enumerate_support = True

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        _count_and_param(self, total_count, probs, logits)
        super().__init__(self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Binomial, _instance)
        batch_shape = torch.Size(batch_shape)
        _expand_count_and_param(new, self, batch_shape)
        super(Binomial, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _new(self, *args, **kwargs):
        return self._param.new(*args, **kwargs)

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self.total_count)

    @property
    def mean(self):
        return self.total_count * self.probs

    @property
    def mode(self):
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self):
        return self._param.size()

    def sample(self, sample_shape=torch.Size()):
        shape = self._extended_shape(sample_shape)
        with torch.no_grad():
            return torch.binomial(self.total_count.expand(shape), self.probs.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_factorial_n = torch.lgamma(self.total_count + 1)
        log_factorial_k = torch.lgamma(value + 1)
        log_factorial_nmk = torch.lgamma(self.total_count - value + 1)
        # n * log(1 + exp(logits)), computed stably as
        # n * max(logits, 0) + n * log1p(exp(-|logits|))
        normalize_term = (
            self.total_count * _clamp_by_zero(self.logits)
            + self.total_count * torch.log1p(torch.exp(-torch.abs(self.logits)))
            - log_factorial_n
        )
        return value * self.logits - log_factorial_k - log_factorial_nmk - normalize_term

    def entropy(self):
        total_count = int(self.total_count.max())
        if not self.total_count.min() == total_count:
            raise NotImplementedError("Inhomogeneous total count not supported by `entropy`.")
        log_prob = self.log_prob(self.enumerate_support(False))
        return -(torch.exp(log_prob) * log_prob).sum(0)

    def enumerate_support(self, expand=True):
        total_count = int(self.total_count.max())
        if not self.total_count.min() == total_count:
            raise NotImplementedError(
                "Inhomogeneous total count not supported by `enumerate_support`."
            )
        values = torch.arange(1 + total_count, dtype=self._param.dtype, device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + self._batch_shape)
        return values
