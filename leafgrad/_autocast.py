"""Autocast: the thread-local state of ``torch.autocast`` and the casting wrappers of the ops
it changes.

Note [Autocast]: PyTorch's autocast is a dispatch key in front of a fixed list of ATen ops
(``aten/src/ATen/autocast_mode.cpp``). On CPU, while ``torch.autocast("cpu")`` is on, an op of
the list casts its floating-point tensor arguments before it runs: the matrix products and
convolutions to the autocast dtype (``lower_precision_fp``), the losses, FFTs and most of linear
algebra to float32 (``fp32``), ``cat``/``stack``/``index_copy`` to the widest floating type among
their arguments (``promote``). float64 tensors and tensors of another device are never cast.
Inside the op autocast is off, so the ops it is made of are not cast again; an op outside the
list runs on what it is given, and a composite outside the list (``einsum``) meets the casts of
the listed ops it is made of. leafgrad puts the wrapper (``policy``) on the functions that
implement the listed ops, so the public names and the composites that call them are cast where
PyTorch casts them. A cast is ``tensor.to(dtype)`` (ToCopyBackward0); the cast of a float32 leaf
that requires grad, not a view, to the autocast dtype is kept (``cache_enabled``) until the
outermost autocast region exits, so a weight used twice is cast once and both uses share the
node, as in PyTorch.
"""

from __future__ import annotations

import functools
import threading
import weakref

from . import _dtype as D
from . import _errors as E

# the autocast dtype of each device type when none is given
_DEFAULT_DTYPES = {"cpu": D.bfloat16, "cuda": D.float16}
DEVICE_TYPES = ("cpu", "cuda", "xpu", "mps", "hpu", "xla", "mtia", "maia", "ipu")


class _State(threading.local):
    def __init__(self):
        self.enabled = {}  # device type -> bool
        self.dtypes = {}  # device type -> dtype
        self.cache_enabled = True
        self.nesting = 0
        self.excluded = False  # inside a listed op: no casts
        self.cache = {}  # id(source) -> (weakref to source, cast)


STATE = _State()
# any thread has turned autocast on: the wrappers look at the thread's state only then
ANY = [False]


def signature():
    """The autocast state a compiled program depends on (part of ``leafgrad.compile``'s key)."""
    if not ANY[0]:
        return None
    state = STATE
    on = tuple(sorted(k for k, v in state.enabled.items() if v))
    if not on:
        return None
    return on, tuple(get_dtype(k).name for k in on), state.cache_enabled


def is_enabled(device_type: str) -> bool:
    return STATE.enabled.get(device_type, False)


def set_enabled(device_type: str, enabled: bool) -> None:
    STATE.enabled[device_type] = bool(enabled)
    if enabled:
        ANY[0] = True


def get_dtype(device_type: str):
    return STATE.dtypes.get(device_type, _DEFAULT_DTYPES.get(device_type, D.float16))


def set_dtype(device_type: str, dtype) -> None:
    STATE.dtypes[device_type] = dtype


def clear_cache() -> None:
    STATE.cache.clear()


def _eligible(t, device_type) -> bool:
    return t._dtype.is_floating_point and t._dtype is not D.float64 and t.device.type == device_type


def cached_cast(to_type, arg, device_type):
    """``arg`` cast to ``to_type`` when autocast casts it (ATen's ``cached_cast``)."""
    from ._tensor import Tensor

    if isinstance(arg, (list, tuple)):
        if any(isinstance(a, Tensor) for a in arg):
            return type(arg)(cached_cast(to_type, a, device_type) for a in arg)
        return arg
    if not isinstance(arg, Tensor) or not _eligible(arg, device_type) or arg._dtype is to_type:
        return arg
    cacheable = (
        STATE.cache_enabled
        and to_type is get_dtype(device_type)
        and arg._dtype is D.float32
        and arg.requires_grad
        and arg.is_leaf
        and not arg._is_view()
    )
    if not cacheable:
        return arg.to(to_type)
    entry = STATE.cache.get(id(arg))
    if entry is not None and entry[0]() is arg:
        return entry[1]
    cast = arg.to(to_type)
    STATE.cache[id(arg)] = (weakref.ref(arg), cast)
    return cast


def _promote_type(lower, values, device_type):
    """The widest floating type among the eligible tensors (ATen's ``promote_type``)."""
    from ._tensor import Tensor

    current = lower
    for value in values:
        for t in value if isinstance(value, (list, tuple)) else (value,):
            if not isinstance(t, Tensor) or not _eligible(t, device_type):
                continue
            if current is D.float32 or t._dtype is D.float32:
                current = D.float32
            elif not (current is lower and t._dtype is lower):
                raise RuntimeError("Unexpected floating ScalarType in at::autocast::prioritize")
    return current


def _device_type(args, kwargs):
    from ._tensor import Tensor

    for value in (*args, *kwargs.values()):
        for t in value if isinstance(value, (list, tuple)) else (value,):
            if isinstance(t, Tensor):
                return t.device.type
    return None


def policy(kind: str):
    """Decorate the function implementing a listed op with autocast's cast (Note [Autocast]);
    ``kind``: ``"lower_precision_fp"``, ``"fp32"`` or ``"promote"``."""

    def decorate(fn):
        @functools.wraps(fn)
        @E.wrapper  # not a frame of PyTorch's stack (warnings name the caller's line)
        def wrapper(*args, **kwargs):
            if not ANY[0]:
                return fn(*args, **kwargs)
            state = STATE
            if state.excluded:
                return fn(*args, **kwargs)
            device_type = _device_type(args, kwargs)
            if device_type is None or not state.enabled.get(device_type, False):
                return fn(*args, **kwargs)
            lower = get_dtype(device_type)
            if kind == "lower_precision_fp":
                to_type = lower
            elif kind == "fp32":
                to_type = D.float32
            else:
                to_type = _promote_type(lower, (*args, *kwargs.values()), device_type)
            args = tuple(cached_cast(to_type, a, device_type) for a in args)
            kwargs = {k: cached_cast(to_type, v, device_type) for k, v in kwargs.items()}
            state.excluded = True
            try:
                return fn(*args, **kwargs)
            finally:
                state.excluded = False

        wrapper.__autocast_policy__ = kind
        return wrapper

    return decorate


# --- the torch-level functions -----------------------------------------------------------------


def _checked(device_type):
    from ._device import device

    return device(device_type).type


def _deprecated(old, new, line):
    import warnings

    warnings.warn(
        f"torch.{old} is deprecated. Please use torch.{new} instead. (Triggered internally at "
        f"/__w/pytorch/pytorch/torch/csrc/autograd/init.cpp:{line}.)",
        DeprecationWarning,
        stacklevel=3,
    )


def _need(fn, name, pos, kind, x) -> None:
    """PyTorch's parser refusal of ``x`` where ``fn`` takes a ``kind`` (bool, str, dtype)."""
    if not _is(kind, x):
        raise TypeError(E.MUST_BE.format(fn, name, pos, kind, E.py_typename(x)))


def _is(kind, x) -> bool:
    if kind == "bool":
        return isinstance(x, bool)
    if kind == "str":
        return isinstance(x, str)
    return isinstance(x, D.dtype)


def _plain(kind, name, x) -> None:
    """The setters that check their one argument themselves ("enabled must be a bool (got
    int)"), before any deprecation warning."""
    if not _is(kind, x):
        what = "a bool" if kind == "bool" else "a torch.dtype"
        raise TypeError(f"{name} must be {what} (got {E.py_typename(x)})")


_ONE = object()  # set_autocast_enabled(enabled): the old one-argument form


def is_autocast_enabled(device_type=None):
    """Whether autocast is on for ``device_type`` (CUDA's when none is given)."""
    if device_type is None:
        return is_enabled("cuda")
    _need("is_autocast_enabled", "device_type", 1, "str", device_type)
    return is_enabled(_checked(device_type))


def set_autocast_enabled(device_type, enabled=_ONE):
    if enabled is _ONE:  # the old one-argument form sets CUDA's
        _need("set_autocast_enabled", "enabled", 1, "bool", device_type)
        device_type, enabled = "cuda", device_type
    else:
        _need("set_autocast_enabled", "device_type", 1, "str", device_type)
        _need("set_autocast_enabled", "enabled", 2, "bool", enabled)
    set_enabled(_checked(device_type), enabled)


def get_autocast_dtype(device_type):
    _need("get_autocast_dtype", "device_type", 1, "str", device_type)
    return get_dtype(_checked(device_type))


def set_autocast_dtype(device_type, dtype):
    _need("set_autocast_dtype", "device_type", 1, "str", device_type)
    _need("set_autocast_dtype", "dtype", 2, "torch.dtype", dtype)
    set_dtype(_checked(device_type), dtype)


def is_autocast_cache_enabled():
    return STATE.cache_enabled


@E.one_argument("torch.set_autocast_cache_enabled")
def set_autocast_cache_enabled(enabled):
    _plain("bool", "enabled", enabled)
    STATE.cache_enabled = enabled


def clear_autocast_cache():
    clear_cache()


def autocast_increment_nesting():
    STATE.nesting += 1
    return STATE.nesting


def autocast_decrement_nesting():
    STATE.nesting -= 1
    return STATE.nesting


def is_autocast_cpu_enabled():
    _deprecated("is_autocast_cpu_enabled()", "is_autocast_enabled('cpu')", 883)
    return is_enabled("cpu")


@E.one_argument("torch.set_autocast_cpu_enabled")
def set_autocast_cpu_enabled(enabled):
    _plain("bool", "enabled", enabled)
    _deprecated("set_autocast_cpu_enabled(enabled)", "set_autocast_enabled('cpu', enabled)", 874)
    set_enabled("cpu", enabled)


def get_autocast_cpu_dtype():
    _deprecated("get_autocast_cpu_dtype()", "get_autocast_dtype('cpu')", 1016)
    return get_dtype("cpu")


@E.one_argument("torch.set_autocast_cpu_dtype")
def set_autocast_cpu_dtype(dtype):
    _plain("dtype", "dtype", dtype)
    _deprecated("set_autocast_cpu_dtype(dtype)", "set_autocast_dtype('cpu', dtype)", 967)
    set_dtype("cpu", dtype)


def get_autocast_gpu_dtype():
    _deprecated("get_autocast_gpu_dtype()", "get_autocast_dtype('cuda')", 1007)
    return get_dtype("cuda")


@E.one_argument("torch.set_autocast_gpu_dtype")
def set_autocast_gpu_dtype(dtype):
    _plain("dtype", "dtype", dtype)
    _deprecated("set_autocast_gpu_dtype(dtype)", "set_autocast_dtype('cuda', dtype)", 952)
    set_dtype("cuda", dtype)


TORCH_FUNCTIONS = (
    "is_autocast_enabled",
    "set_autocast_enabled",
    "get_autocast_dtype",
    "set_autocast_dtype",
    "is_autocast_cache_enabled",
    "set_autocast_cache_enabled",
    "clear_autocast_cache",
    "autocast_increment_nesting",
    "autocast_decrement_nesting",
    "is_autocast_cpu_enabled",
    "set_autocast_cpu_enabled",
    "get_autocast_cpu_dtype",
    "set_autocast_cpu_dtype",
    "get_autocast_gpu_dtype",
    "set_autocast_gpu_dtype",
)
