"""``Bernoulli(probs=None, logits=None)``."""

from __future__ import annotations

from math import nan

import leafgrad as torch
from leafgrad.nn.functional import binary_cross_entropy_with_logits

from . import constraints
from .exp_family import ExponentialFamily
from .utils import _NUMBER, broadcast_all, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["Bernoulli"]

PROBS_OR_LOGITS = "Either `probs` or `logits` must be specified, but not both."


def _probs_or_logits(dist, probs, logits):
    """Store the one parameter given (broadcast to a tensor) as ``probs`` or ``logits`` and as
    ``_param``; the other is computed when first read (``lazy_property``)."""
    if (probs is None) == (logits is None):
        raise ValueError(PROBS_OR_LOGITS)
    if probs is not None:
        (dist.probs,) = broadcast_all(probs)
        dist._param = dist.probs
        return probs
    (dist.logits,) = broadcast_all(logits)
    dist._param = dist.logits
    return logits


class Bernoulli(ExponentialFamily):
    """1 with probability ``probs``, 0 otherwise (or parameterized by the log-odds ``logits``)."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True
    _mean_carrier_measure = 0

    def __init__(self, probs=None, logits=None, validate_args=None):
        given = _probs_or_logits(self, probs, logits)
        batch_shape = torch.Size() if isinstance(given, _NUMBER) else self._param.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expand_parameters(Bernoulli, batch_shape, _instance, ("probs", "logits"))
        new._param = new.__dict__["logits" if "logits" in self.__dict__ else "probs"]
        return new

    def _new(self, *args, **kwargs):
        return self._param.new(*args, **kwargs)

    @property
    def mean(self):
        return self.probs

    @property
    def mode(self):
        mode = (self.probs >= 0.5).to(self.probs)
        mode[self.probs == 0.5] = nan
        return mode

    @property
    def variance(self):
        return self.probs * (1 - self.probs)

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
            return torch.bernoulli(self.probs.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -binary_cross_entropy_with_logits(logits, value, reduction="none")

    def entropy(self):
        return binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")

    def enumerate_support(self, expand=True):
        values = torch.arange(2, dtype=self._param.dtype, device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + self._batch_shape)
        return values

    @property
    def _natural_params(self):
        return (torch.logit(self.probs),)

    def _log_normalizer(self, x):
        return torch.log1p(torch.exp(x))
