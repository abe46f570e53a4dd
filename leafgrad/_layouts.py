"""Note [Factory layouts]: PyTorch's factories take ``layout=`` and ``pin_memory=``. leafgrad's
tensors are all dense (``torch.strided``) JAX arrays and it has no pinned host memory, so a
factory given another layout or ``pin_memory=True`` must raise rather than hand back a dense,
unpinned tensor as if it had done what was asked. ``install`` wraps every frontend that names
either argument (found by signature, once, at import), checking only the keywords given."""

from __future__ import annotations

import functools
import inspect

from . import _errors as E
from ._tensor import Tensor, layout, strided

_ARGS = ("layout", "pin_memory")  # what marks a factory
_CHECKED = frozenset({"layout", "pin_memory", "device", "requires_grad"})
NO_PINNING = (
    "pin_memory=True requires a CUDA or other accelerator backend; no pinned memory allocator is "
    "available on this system."
)


def _bool_arg(name: str, kwargs: dict, arg: str) -> None:
    """The parser's ``bool`` (a Python bool; None where the schema's default is taken)."""
    v = kwargs[arg]
    if type(v) is not bool and not (v is None and name != "tensor"):
        raise TypeError(f"{name}(): argument '{arg}' must be bool, not {E.py_typename(v)}")


def check(name: str, kwargs: dict) -> None:
    """PyTorch's parser errors for a ``layout``, ``device``, ``requires_grad`` or
    ``pin_memory`` of the wrong type; leafgrad's refusal of the layouts and pinning it does not
    have."""
    if "device" in kwargs and E.device_refused(kwargs["device"]):
        v = kwargs["device"]
        raise TypeError(f"{name}(): argument 'device' must be torch.device, not {E.py_typename(v)}")
    if "requires_grad" in kwargs:
        _bool_arg(name, kwargs, "requires_grad")
    if "pin_memory" in kwargs:
        _bool_arg(name, kwargs, "pin_memory")
    lay = kwargs.get("layout")
    if lay is not None and lay is not strided:
        if not isinstance(lay, layout):
            raise TypeError(
                f"{name}(): argument 'layout' must be torch.layout, not {E.py_typename(lay)}"
            )
        raise NotImplementedError(f"leafgrad: {name}() with layout={lay!r}: only torch.strided")
    if kwargs.get("pin_memory"):
        from . import accelerator

        if not accelerator.is_available():
            raise RuntimeError(NO_PINNING)
        raise NotImplementedError("leafgrad: pinned host memory is not implemented")


def _wrap(fn, name: str):
    @functools.wraps(fn)
    def checked(*args, **kwargs):
        if kwargs and not _CHECKED.isdisjoint(kwargs):
            check(name, kwargs)
        return fn(*args, **kwargs)

    return checked


# factories that parse their own ``**kwargs`` (their signatures do not name the arguments)
_PARSING = frozenset({"logspace", "tril_indices", "triu_indices", "normal"})


def _takes(fn) -> bool:
    from ._arg_check import frontend_takes

    return frontend_takes(fn, lambda params: any(a in params for a in _ARGS), _PARSING)


def install(module) -> None:
    """Wrap the module's functions and Tensor's ``new_*`` methods that take the arguments."""
    for name in dir(module):
        fn = getattr(module, name)
        if inspect.isfunction(fn) and _takes(fn):
            setattr(module, name, _wrap(fn, name))
    for name in dir(Tensor):
        if name.startswith("new_"):
            fn = getattr(Tensor, name)
            if inspect.isfunction(fn) and _takes(fn):
                setattr(Tensor, name, _wrap(fn, name))
