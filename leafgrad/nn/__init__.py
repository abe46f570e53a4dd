"""``leafgrad.nn``: modules, parameters, initialisers and ``functional``, as ``torch.nn``."""

from . import functional, init, modules, parallel, parameter, utils
from .modules import *  # noqa: F403
from .modules import __all__ as _modules_all
from .parameter import *  # noqa: F403
from .parameter import __all__ as _parameter_all

__all__ = [
    "functional",
    "init",
    "modules",
    "parallel",
    "parameter",
    "utils",
    *_modules_all,
    *_parameter_all,
]
