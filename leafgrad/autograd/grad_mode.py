"""Grad modes (no_grad, enable_grad, set_grad_enabled, inference_mode), kept per thread."""

from __future__ import annotations

import functools
import inspect
import threading

__all__ = [
    "no_grad",
    "enable_grad",
    "set_grad_enabled",
    "inference_mode",
    "is_grad_enabled",
    "is_inference_mode_enabled",
    "is_multithreading_enabled",
    "set_multithreading_enabled",
    "enforce_grad_layout_policy",
]


class _State(threading.local):
    grad_enabled = True
    inference = False
    multithreading = True  # a flag only: leafgrad's backward runs on the calling thread
    layout_policy = True  # AccumulateGrad enforces the gradient layout contract


_state = _State()


def is_grad_enabled() -> bool:
    """Whether operations are recorded for autograd on this thread."""
    return _state.grad_enabled


def is_inference_mode_enabled() -> bool:
    """Whether ``inference_mode`` is active on this thread."""
    return _state.inference


class _DecoratorContextManager:
    """A context manager that also decorates functions (and generators), as in PyTorch."""

    def __call__(self, func):
        if inspect.isclass(func):
            import warnings

            warnings.warn(
                "Decorating classes is deprecated and will be disabled in future versions. You "
                "should only decorate functions or methods. To preserve the current behavior of "
                "class decoration, you can directly decorate the `__init__` method and nothing "
                "else.",
                FutureWarning,
                stacklevel=2,
            )
            cls = func
            func = lambda *args, **kwargs: cls(*args, **kwargs)  # noqa: E731

        if inspect.isgeneratorfunction(func):
            return self._wrap_generator(func)

        @functools.wraps(func)
        def decorate_context(*args, **kwargs):
            with self.clone():
                return func(*args, **kwargs)

        return decorate_context

    def _wrap_generator(self, func):
        @functools.wraps(func)
        def generator_context(*args, **kwargs):
            gen = func(*args, **kwargs)
            try:
                with self.clone():
                    response = gen.send(None)
                while True:
                    try:
                        request = yield response
                    except GeneratorExit:
                        with self.clone():
                            gen.close()
                        raise
                    except BaseException as exc:  # forward throw() into the generator
                        with self.clone():
                            response = gen.throw(exc)
                    else:
                        with self.clone():
                            response = gen.send(request)
            except StopIteration as e:
                return e.value

        return generator_context

    def clone(self):
        return type(self)()


class _NoParamDecorator(_DecoratorContextManager):
    """Allows both ``@no_grad`` and ``@no_grad()``."""

    def __new__(cls, orig_func=None):
        if orig_func is None:
            return super().__new__(cls)
        return cls()(orig_func)


class no_grad(_NoParamDecorator):
    """Disable gradient recording: results of ops are leaves with ``requires_grad=False``.

    Example::

        >>> x = leafgrad.ones(2, requires_grad=True)
        >>> with leafgrad.no_grad():
        ...     y = x * 2
        >>> y.requires_grad
        False
    """

    def __init__(self) -> None:
        self.prev = False

    def __enter__(self) -> None:
        self.prev = _state.grad_enabled
        _state.grad_enabled = False

    def __exit__(self, *exc) -> None:
        _state.grad_enabled = self.prev


class enable_grad(_NoParamDecorator):
    """Enable gradient recording inside a ``no_grad`` block."""

    def __init__(self) -> None:
        self.prev = False

    def __enter__(self) -> None:
        self.prev = _state.grad_enabled
        _state.grad_enabled = True

    def __exit__(self, *exc) -> None:
        _state.grad_enabled = self.prev


class set_grad_enabled(_DecoratorContextManager):
    """Set grad mode now; used as a context manager it restores the previous mode on exit."""

    def __init__(self, mode: bool) -> None:
        if not isinstance(mode, bool):  # torch._C._set_grad_enabled's parser
            from .._errors import py_typename

            raise TypeError(
                "set_grad_enabled(): argument 'enabled' (position 1) must be bool, not "
                + py_typename(mode)
            )
        self.prev = _state.grad_enabled
        self.mode = mode
        _state.grad_enabled = self.mode

    def __call__(self, func):
        _state.grad_enabled = self.prev
        return super().__call__(func)

    def __enter__(self) -> None:
        _state.grad_enabled = self.mode

    def __exit__(self, *exc) -> None:
        _state.grad_enabled = self.prev

    def clone(self):
        return type(self)(self.mode)

    def __str__(self) -> str:
        return f"{type(self).__module__}.{type(self).__qualname__}(mode={self.mode})"

    def __repr__(self) -> str:
        return str(self)


class inference_mode(_DecoratorContextManager):
    """Like ``no_grad``, and tensors made inside are inference tensors (``is_inference()``)."""

    def __new__(cls, mode=True):
        if isinstance(mode, bool):
            return super().__new__(cls)
        return cls()(mode)

    def __init__(self, mode: bool = True) -> None:
        self.mode = mode
        self.prev = (False, True)

    def __enter__(self) -> None:
        self.prev = (_state.inference, _state.grad_enabled)
        # As c10::InferenceMode: inference_mode(False) also turns grad mode back on.
        _state.inference = bool(self.mode)
        _state.grad_enabled = not self.mode

    def __exit__(self, *exc) -> None:
        _state.inference, _state.grad_enabled = self.prev

    def clone(self):
        return type(self)(self.mode)


def is_multithreading_enabled() -> bool:
    """Whether backward may run on device worker threads (PyTorch's flag; leafgrad's backward
    always runs on the calling thread)."""
    return _state.multithreading


class _FlagSetter(_DecoratorContextManager):
    """Set a thread-local flag now; as a context manager, restore it on exit (PyTorch's
    ``set_multithreading_enabled`` and ``enforce_grad_layout_policy``)."""

    _flag = ""
    _decorating_restores = True  # PyTorch's set_multithreading_enabled leaves the flag set

    def __init__(self, mode: bool = True) -> None:
        self.prev = getattr(_state, self._flag)
        setattr(_state, self._flag, mode)
        self.mode = mode

    def __call__(self, func):
        if self._decorating_restores:
            setattr(_state, self._flag, self.prev)
        return super().__call__(func)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc) -> None:
        setattr(_state, self._flag, self.prev)

    def clone(self):
        return type(self)(self.mode)


class set_multithreading_enabled(_FlagSetter):
    """Enable or disable multithreaded backward; a context manager or a function."""

    _flag = "multithreading"
    _decorating_restores = False

    def __init__(self, mode: bool) -> None:
        super().__init__(mode)


class enforce_grad_layout_policy(_FlagSetter):
    """With ``enable=False``, AccumulateGrad keeps a gradient it takes as it is laid out, and the
    layout-contract warning is not given; a context manager or a function."""

    _flag = "layout_policy"
