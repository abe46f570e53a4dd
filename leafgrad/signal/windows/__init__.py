"""``torch.signal.windows``: SciPy-style window functions, composed of leafgrad ops as PyTorch
composes them (so a window made with ``requires_grad=True`` records PyTorch's nodes)."""

from .windows import *  # noqa: F403
from .windows import __all__  # noqa: F401
