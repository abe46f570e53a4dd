"""``leafgrad.nn``: modules, parameters, initialisers and ``functional``, as ``torch.nn``."""

from . import (
    _unpool_shuffle,
    attention,  # noqa: F401
    functional,
    grad,
    init,
    modules,
    parallel,
    parameter,
    utils,
)
from ._unpool_shuffle import ChannelShuffle, MaxUnpool1d, MaxUnpool2d, MaxUnpool3d
from .modules import *  # noqa: F403
from .modules import __all__ as _modules_all
from .parameter import *  # noqa: F403
from .parameter import __all__ as _parameter_all

for _name in _unpool_shuffle.__all__:  # F's functions of that module
    setattr(functional, _name, getattr(_unpool_shuffle, _name))
functional.grad = grad  # ``F.grad`` is the module ``nn.grad``
functional._parsed.install(vars(functional))  # Note [F's argument errors]
# ``torch.nn.functional`` has no ``__all__``: a star import takes every public name, so F's lists
# all of its public functions (those of ``_functional_extra`` and the module above included)
functional.__all__ = sorted(
    n
    for n in dir(functional)
    if not n.startswith("_")
    and callable(getattr(functional, n))
    and getattr(getattr(functional, n), "__module__", "").startswith("leafgrad.nn")
)

__all__ = [
    "functional",
    "init",
    "modules",
    "parallel",
    "parameter",
    "utils",
    *_modules_all,
    *_parameter_all,
    "ChannelShuffle",
    "MaxUnpool1d",
    "MaxUnpool2d",
    "MaxUnpool3d",
]
