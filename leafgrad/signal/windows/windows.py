"""The window functions of ``torch.signal.windows``, step for step as PyTorch 2.13 writes them:
a ``linspace`` of the window's sample points, then elementwise ops (``general_cosine``: a sum of
weighted cosines). ``sym=False`` gives the periodic window (one of ``M + 1`` points dropped)."""

from __future__ import annotations

import math
from collections.abc import Iterable

import leafgrad as _lg

__all__ = [
    "bartlett",
    "blackman",
    "cosine",
    "exponential",
    "gaussian",
    "general_cosine",
    "general_hamming",
    "hamming",
    "hann",
    "kaiser",
    "nuttall",
]


def _check(name: str, M: int, dtype, layout) -> None:
    if M < 0:
        raise ValueError(f"{name} requires non-negative window length, got M={M}")
    if layout is not _lg.strided:
        raise ValueError(f"{name} is implemented for strided tensors only, got: {layout}")
    if dtype not in (_lg.float32, _lg.float64):
        raise ValueError(f"{name} expects float32 or float64 dtypes, got: {dtype}")


def _start(name, M, dtype, layout, device, requires_grad, one: bool = False):
    """The default dtype and checks; the window itself when ``M`` is 0 (or 1 where ``one``)."""
    dtype = _lg.get_default_dtype() if dtype is None else dtype
    _check(name, M, dtype, layout)
    kw = dict(dtype=dtype, layout=layout, device=device, requires_grad=requires_grad)
    if M == 0:
        return dtype, _lg.empty((0,), **kw)
    if one and M == 1:
        return dtype, _lg.ones((1,), **kw)
    return dtype, None


def _points(start, end, M, dtype, layout, device, requires_grad):
    return _lg.linspace(
        start=start,
        end=end,
        steps=M,
        dtype=dtype,
        layout=layout,
        device=device,
        requires_grad=requires_grad,
    )


def exponential(
    M,
    *,
    center=None,
    tau=1.0,
    sym=True,
    dtype=None,
    layout=_lg.strided,
    device=None,
    requires_grad=False,
):
    """The exponential (Poisson) window ``exp(-|n - center| / tau)``."""
    dtype = _lg.get_default_dtype() if dtype is None else dtype
    _check("exponential", M, dtype, layout)
    if tau <= 0:
        raise ValueError(f"Tau must be positive, got: {tau} instead.")
    if sym and center is not None:
        raise ValueError("Center must be None for symmetric windows")
    if M == 0:
        return _lg.empty(
            (0,), dtype=dtype, layout=layout, device=device, requires_grad=requires_grad
        )
    if center is None:
        center = (M if not sym and M > 1 else M - 1) / 2.0
    constant = 1 / tau
    k = _points(
        -center * constant, (-center + (M - 1)) * constant, M, dtype, layout, device, requires_grad
    )
    return _lg.exp(-_lg.abs(k))


def cosine(M, *, sym=True, dtype=None, layout=_lg.strided, device=None, requires_grad=False):
    """The cosine (sine) window ``sin(pi (n + 1/2) / M)``."""
    dtype, done = _start("cosine", M, dtype, layout, device, requires_grad)
    if done is not None:
        return done
    start = 0.5
    constant = _lg.pi / (M + 1 if not sym and M > 1 else M)
    k = _points(
        start * constant, (start + (M - 1)) * constant, M, dtype, layout, device, requires_grad
    )
    return _lg.sin(k)


def gaussian(
    M, *, std=1.0, sym=True, dtype=None, layout=_lg.strided, device=None, requires_grad=False
):
    """The Gaussian window ``exp(-(n - (M - 1) / 2)^2 / (2 std^2))``."""
    dtype = _lg.get_default_dtype() if dtype is None else dtype
    _check("gaussian", M, dtype, layout)
    if std <= 0:
        raise ValueError(f"Standard deviation must be positive, got: {std} instead.")
    if M == 0:
        return _lg.empty(
            (0,), dtype=dtype, layout=layout, device=device, requires_grad=requires_grad
        )
    start = -(M if not sym and M > 1 else M - 1) / 2.0
    constant = 1 / (std * math.sqrt(2))
    k = _points(
        start * constant, (start + (M - 1)) * constant, M, dtype, layout, device, requires_grad
    )
    return _lg.exp(-(k**2))


def kaiser(
    M, *, beta=12.0, sym=True, dtype=None, layout=_lg.strided, device=None, requires_grad=False
):
    """The Kaiser window ``I0(beta sqrt(1 - (2n / (M - 1) - 1)^2)) / I0(beta)``."""
    dtype = _lg.get_default_dtype() if dtype is None else dtype
    _check("kaiser", M, dtype, layout)
    if beta < 0:
        raise ValueError(f"beta must be non-negative, got: {beta} instead.")
    if M == 0:
        return _lg.empty(
            (0,), dtype=dtype, layout=layout, device=device, requires_grad=requires_grad
        )
    if M == 1:
        return _lg.ones(
            (1,), dtype=dtype, layout=layout, device=device, requires_grad=requires_grad
        )
    beta = _lg.tensor(beta, dtype=dtype, device=device)
    start = -beta
    constant = 2.0 * beta / (M if not sym else M - 1)
    end = _lg.minimum(beta, start + (M - 1) * constant)
    k = _points(start, end, M, dtype, layout, device, requires_grad)
    return _lg.i0(_lg.sqrt(beta * beta - _lg.pow(k, 2))) / _lg.i0(beta)


def hamming(M, *, sym=True, dtype=None, layout=_lg.strided, device=None, requires_grad=False):
    """The Hamming window: ``general_hamming`` with ``alpha=0.54``."""
    return general_hamming(
        M, sym=sym, dtype=dtype, layout=layout, device=device, requires_grad=requires_grad
    )


def hann(M, *, sym=True, dtype=None, layout=_lg.strided, device=None, requires_grad=False):
    """The Hann window: ``general_hamming`` with ``alpha=0.5``."""
    return general_hamming(
        M,
        alpha=0.5,
        sym=sym,
        dtype=dtype,
        layout=layout,
        device=device,
        requires_grad=requires_grad,
    )


def blackman(M, *, sym=True, dtype=None, layout=_lg.strided, device=None, requires_grad=False):
    """The Blackman window: ``general_cosine`` with ``a=[0.42, 0.5, 0.08]``."""
    dtype = _lg.get_default_dtype() if dtype is None else dtype
    _check("blackman", M, dtype, layout)
    return general_cosine(
        M,
        a=[0.42, 0.5, 0.08],
        sym=sym,
        dtype=dtype,
        layout=layout,
        device=device,
        requires_grad=requires_grad,
    )


def bartlett(M, *, sym=True, dtype=None, layout=_lg.strided, device=None, requires_grad=False):
    """The Bartlett (triangular) window ``1 - |2n / (M - 1) - 1|``."""
    dtype, done = _start("bartlett", M, dtype, layout, device, requires_grad, one=True)
    if done is not None:
        return done
    start = -1
    constant = 2 / (M if not sym else M - 1)
    k = _points(start, start + (M - 1) * constant, M, dtype, layout, device, requires_grad)
    return 1 - _lg.abs(k)


def general_cosine(
    M, *, a, sym=True, dtype=None, layout=_lg.strided, device=None, requires_grad=False
):
    """The sum ``sum_i (-1)^i a_i cos(2 pi i n / (M - 1))``."""
    dtype, done = _start("general_cosine", M, dtype, layout, device, requires_grad, one=True)
    if done is not None:
        return done
    if not isinstance(a, Iterable):
        raise TypeError("Coefficients must be a list/tuple")
    if not a:
        raise ValueError("Coefficients cannot be empty")
    constant = 2 * _lg.pi / (M if not sym else M - 1)
    k = _points(0, (M - 1) * constant, M, dtype, layout, device, requires_grad)
    a_i = _lg.tensor(
        [(-1) ** i * w for i, w in enumerate(a)],
        device=device,
        dtype=dtype,
        requires_grad=requires_grad,
    )
    i = _lg.arange(
        a_i.shape[0], dtype=a_i.dtype, device=a_i.device, requires_grad=a_i.requires_grad
    )
    return (a_i.unsqueeze(-1) * _lg.cos(i.unsqueeze(-1) * k)).sum(0)


def general_hamming(
    M, *, alpha=0.54, sym=True, dtype=None, layout=_lg.strided, device=None, requires_grad=False
):
    """``general_cosine`` with ``a=[alpha, 1 - alpha]``."""
    return general_cosine(
        M,
        a=[alpha, 1.0 - alpha],
        sym=sym,
        dtype=dtype,
        layout=layout,
        device=device,
        requires_grad=requires_grad,
    )


def nuttall(M, *, sym=True, dtype=None, layout=_lg.strided, device=None, requires_grad=False):
    """The minimum 4-term Blackman-Harris window of Nuttall: ``general_cosine`` with
    ``a=[0.3635819, 0.4891775, 0.1365995, 0.0106411]``."""
    return general_cosine(
        M,
        a=[0.3635819, 0.4891775, 0.1365995, 0.0106411],
        sym=sym,
        dtype=dtype,
        layout=layout,
        device=device,
        requires_grad=requires_grad,
    )
