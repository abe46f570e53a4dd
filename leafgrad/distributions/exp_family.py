"""``ExponentialFamily``: distributions whose entropy follows from their log-normalizer."""

from __future__ import annotations

import leafgrad as torch

from .distribution import Distribution

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    """A distribution of the form ``p(x) = h(x) exp(<t(x), theta> - F(theta))``: its entropy is
    ``F(theta) - <theta, grad F(theta)> - E[log h(x)]`` (a Bregman divergence), with the
    gradient taken by autograd."""

    @property
    def _natural_params(self):
        raise NotImplementedError

    def _log_normalizer(self, *natural_params):
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self):
        raise NotImplementedError

    def entropy(self):
        result = -self._mean_carrier_measure
        nparams = [p.detach().requires_grad_() for p in self._natural_params]
        lg_normal = self._log_normalizer(*nparams)
        gradients = torch.autograd.grad(lg_normal.sum(), nparams, create_graph=True)
        result += lg_normal
        for param, grad in zip(nparams, gradients):
            result -= (param * grad).reshape(self._batch_shape + (-1,)).sum(-1)
        return result
