"""``leafgrad.nn`` modules: every layer, container, activation and loss as PyTorch names them."""

from . import (
    activation,
    adaptive,
    container,
    conv,
    dropout,
    extra,
    flatten,
    lazy,
    linear,
    linear_cross_entropy,
    loss,
    module,
    normalization,
    padding,
    pooling,
    rnn,
    sparse,
    transformer,
)
from .activation import *  # noqa: F403
from .adaptive import *  # noqa: F403
from .container import *  # noqa: F403
from .conv import *  # noqa: F403
from .dropout import *  # noqa: F403
from .extra import *  # noqa: F403
from .flatten import *  # noqa: F403
from .lazy import *  # noqa: F403
from .linear import *  # noqa: F403
from .linear_cross_entropy import *  # noqa: F403
from .loss import *  # noqa: F403
from .module import *  # noqa: F403
from .normalization import *  # noqa: F403
from .padding import *  # noqa: F403
from .pooling import *  # noqa: F403
from .rnn import *  # noqa: F403
from .sparse import *  # noqa: F403
from .transformer import *  # noqa: F403

__all__ = [
    name
    for m in (
        activation,
        adaptive,
        container,
        conv,
        dropout,
        extra,
        flatten,
        lazy,
        linear,
        linear_cross_entropy,
        loss,
        module,
        normalization,
        padding,
        pooling,
        rnn,
        sparse,
        transformer,
    )
    for name in m.__all__
]
