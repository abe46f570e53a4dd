"""``leafgrad.nn`` dropout layers: active in training mode, the identity in eval mode.

The masks come from ``leafgrad.nn.functional``, which draws them from PyTorch's CPU stream, so
after the same ``manual_seed`` the same elements are dropped.
"""

from __future__ import annotations

from .linear import _functional
from .module import Module

__all__ = [
    "Dropout",
    "Dropout1d",
    "Dropout2d",
    "Dropout3d",
    "AlphaDropout",
    "FeatureAlphaDropout",
]


class _DropoutNd(Module):
    __constants__ = ["p", "inplace"]

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Dropout(_DropoutNd):
    """Zeroes each element with probability ``p`` and scales the rest by ``1 / (1 - p)``.

    >>> leafgrad.nn.Dropout(0.2)
    Dropout(p=0.2, inplace=False)
    """

    def forward(self, input):
        return _functional("dropout")(input, self.p, self.training, self.inplace)


class Dropout1d(_DropoutNd):
    """Zeroes whole channels of (N, C, L) or (C, L) input."""

    def forward(self, input):
        return _functional("dropout1d")(input, self.p, self.training, self.inplace)


class Dropout2d(_DropoutNd):
    """Zeroes whole channels of (N, C, H, W) or (C, H, W) input."""

    def forward(self, input):
        return _functional("dropout2d")(input, self.p, self.training, self.inplace)


class Dropout3d(_DropoutNd):
    """Zeroes whole channels of (N, C, D, H, W) or (C, D, H, W) input."""

    def forward(self, input):
        return _functional("dropout3d")(input, self.p, self.training, self.inplace)


class AlphaDropout(_DropoutNd):
    """Dropout that keeps the mean and variance of SELU activations."""

    def forward(self, input):
        return _functional("alpha_dropout")(input, self.p, self.training)


class FeatureAlphaDropout(_DropoutNd):
    """Alpha dropout of whole channels."""

    def forward(self, input):
        return _functional("feature_alpha_dropout")(input, self.p, self.training)
