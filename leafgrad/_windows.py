"""Window functions: ``hann_window``, ``hamming_window``, ``blackman_window``,
``bartlett_window`` and ``kaiser_window``, computed as ATen computes them (an ``arange`` in the
requested dtype, scaled and transformed in that dtype) and made as factory tensors."""

from __future__ import annotations

import math

import numpy as np

from . import _dtype as D
from . import _errors as E
from . import _factories
from .ops.api import tensor_op

__all__ = ["hann_window", "hamming_window", "blackman_window", "bartlett_window", "kaiser_window"]

_CPP_NAMES = {"int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char"}
_CPP_NAMES.update({"uint8": "unsigned char", "bool": "bool"})


def _check(name, window_length, dtype):
    """The window's dtype; ``window_length`` is an ``int`` of PyTorch's parser (a NumPy int or a
    0-d integer tensor too, which ``_length`` reads)."""
    from ._arg_check import _strict_int_error

    message = None
    if isinstance(window_length, bool) or not hasattr(type(window_length), "__index__"):
        message = (
            f"{name}(): argument 'window_length' (position 1) must be int, not "
            f"{E.py_typename(window_length)}"
        )
    else:
        message = _strict_int_error(name, "window_length", " (position 1)", window_length)
    if message is not None:
        raise TypeError(message)
    window_length = _length(window_length)
    if window_length < 0:
        raise RuntimeError(
            f"{name} requires non-negative window_length, got window_length={window_length}"
        )
    dt = D.get_default_dtype() if dtype is None else dtype
    if dt.is_complex:
        raise NotImplementedError(f"\"arange_cpu\" not implemented for '{E.scalar_type_name(dt)}'")
    if not dt.is_floating_point:
        raise RuntimeError(
            f"{name} expects floating point dtypes, got: TensorOptions(dtype="
            f"{_CPP_NAMES.get(dt.name, dt.name)}, device=cpu, layout=Strided (default), "
            "requires_grad=false (default), pinned_memory=false, memory_format=(nullopt))"
        )
    return dt


def _make(values, dt, device, requires_grad):
    # from a list: a tensor made of an empty array would keep the array's strides
    return _factories.tensor(
        np.asarray(values, dt.np).tolist(), dtype=dt, device=device, requires_grad=requires_grad
    )


def _length(window_length) -> int:
    from ._arg_check import _as_int

    return _as_int(window_length)


def _window(name, n, periodic, dtype, device, requires_grad, body):
    dt = _check(name, n, dtype)
    n = _length(n)
    if n == 0:
        return _make([], dt, device, requires_grad)
    if n == 1:
        return _make([1.0], dt, device, requires_grad)
    m = n + 1 if periodic else n
    np_dt = np.float32 if dt.itemsize <= 4 else np.float64  # half types compute in float
    w = body(np.arange(m, dtype=np_dt), m, np_dt)
    return _make(w[:-1] if periodic else w, dt, device, requires_grad)


@tensor_op("hamming_window", method=False)
def hamming_window(
    window_length,
    periodic=True,
    alpha=0.54,
    beta=0.46,
    *,
    dtype=None,
    layout=None,
    device=None,
    pin_memory=False,
    requires_grad=False,
):
    """``torch.hamming_window``: ``alpha - beta cos(2 pi k / (N - 1))``."""

    def body(k, m, f):
        return np.cos(k * f(math.pi * 2.0 / (m - 1))) * f(-beta) + f(alpha)

    return _window("hamming_window", window_length, periodic, dtype, device, requires_grad, body)


@tensor_op("hann_window", method=False)
def hann_window(
    window_length,
    periodic=True,
    *,
    dtype=None,
    layout=None,
    device=None,
    pin_memory=False,
    requires_grad=False,
):
    """``torch.hann_window``: ``hamming_window`` with ``alpha = beta = 0.5``."""
    _check("hann_window", window_length, dtype)
    return hamming_window(
        window_length, periodic, 0.5, 0.5, dtype=dtype, device=device, requires_grad=requires_grad
    )


@tensor_op("blackman_window", method=False)
def blackman_window(
    window_length,
    periodic=True,
    *,
    dtype=None,
    layout=None,
    device=None,
    pin_memory=False,
    requires_grad=False,
):
    """``torch.blackman_window``: ``0.42 - 0.5 cos(2 pi k / (N-1)) + 0.08 cos(4 pi k / (N-1))``."""

    def body(k, m, f):
        w = k * f(math.pi / (m - 1))
        return np.cos(w * f(4)) * f(0.08) - np.cos(w * f(2)) * f(0.5) + f(0.42)

    return _window("blackman_window", window_length, periodic, dtype, device, requires_grad, body)


@tensor_op("bartlett_window", method=False)
def bartlett_window(
    window_length,
    periodic=True,
    *,
    dtype=None,
    layout=None,
    device=None,
    pin_memory=False,
    requires_grad=False,
):
    """``torch.bartlett_window``: a triangle, ``2k / (N - 1)`` rising then falling."""

    def body(k, m, f):
        w = k * f(2.0 / (m - 1))
        first = ((m - 1) >> 1) + 1
        w[first:] = w[first:] * f(-1) + f(2)
        return w

    return _window("bartlett_window", window_length, periodic, dtype, device, requires_grad, body)


@tensor_op("kaiser_window", method=False)
def kaiser_window(
    window_length,
    periodic=True,
    beta=12.0,
    *,
    dtype=None,
    layout=None,
    device=None,
    pin_memory=False,
    requires_grad=False,
):
    """``torch.kaiser_window``: ``I0(beta sqrt(1 - ((k - a) / a)^2)) / I0(beta)``,
    ``a = (N - 1) / 2``."""

    def body(k, m, f):
        alpha = f((m - 1) / 2.0)
        ratio = (k - alpha) / alpha
        inner = f(beta) * np.sqrt(np.maximum(f(1) - ratio * ratio, f(0)))
        return (np.i0(inner) / np.i0(f(beta))).astype(k.dtype)

    return _window("kaiser_window", window_length, periodic, dtype, device, requires_grad, body)
