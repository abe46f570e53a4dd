"""``leafgrad.fft``: ``torch.fft``'s transforms, helpers and frequency grids.

Each transform is PyTorch's composite (Note [FFT kernels] in ``ops/fft_ops.py``), so the graph
holds the nodes PyTorch records: ``torch.fft.fft`` of a real tensor is one ``FftR2CBackward0``,
``ifft`` of it a ``ConjBackward0`` over one, ``fft2`` of a real tensor an ``FftC2CBackward0``
over the promotion's ``ToCopyBackward0``, and ``n``/``s`` crop (``SliceBackward0``) or zero-pad
(``ConstantPadNdBackward0``) the input first. Arguments are checked in PyTorch's order, with its
messages.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Sequence

import jax
import numpy as np

from . import _autocast, _factories
from . import _dtype as D
from . import _errors as E
from ._tensor import Tensor
from .autograd.graph import REAL_VIEW_GRADS
from .ops import fft_ops as K
from .ops import shape as _shape_ops
from .ops.api import tensor_op
from .ops.dispatch import dispatch
from .ops.search_ops import _wrap as _wrap_dim
from .ops.table import OPS

# PyTorch's list (its ``hfft2``, ``ihfft2``, ``hfftn`` and ``ihfftn`` are public but unlisted)
__all__ = [
    "fft",
    "ifft",
    "fft2",
    "ifft2",
    "fftn",
    "ifftn",
    "rfft",
    "irfft",
    "rfft2",
    "irfft2",
    "rfftn",
    "irfftn",
    "hfft",
    "ihfft",
    "fftfreq",
    "rfftfreq",
    "fftshift",
    "ifftshift",
]

INVALID_POINTS = "Invalid number of data points ({}) specified"
UNSUPPORTED_DTYPE = "Unsupported dtype {}"
NOT_FLOATING = "Only supports floating-point dtypes, but found: {}"

_NONE, _BY_ROOT_N, _BY_N = 0, 1, 2


# --- argument checks -----------------------------------------------------------------------------


def _is_int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _type_error(fname, name, position, expected, value):
    where = f" (position {position})" if position else ""
    return TypeError(
        f"{fname}(): argument '{name}'{where} must be {expected}, not {type(value).__name__}"
    )


def _checked(fname: str, ints=(), int_lists=()):
    """Check the argument types PyTorch's parser checks, naming the position of a positional
    argument as its message does."""

    def wrap(fn):
        params = list(inspect.signature(fn).parameters)

        @functools.wraps(fn)
        def checked(*args, **kwargs):
            bound = dict(zip(params, args))
            bound.update(kwargs)
            position = {name: i + 1 for i, name in enumerate(params[: len(args)])}
            x = bound.get("input")
            if not isinstance(x, Tensor):
                raise _type_error(fname, "input", position.get("input"), "Tensor", x)
            for name in ints:
                v = bound.get(name)
                if v is not None and not _is_int(v):
                    raise _type_error(fname, name, position.get(name), "int", v)
            for name in int_lists:
                v = bound.get(name)
                if v is None or _is_int(v):
                    continue
                if not isinstance(v, Sequence) or isinstance(v, str):
                    raise _type_error(fname, name, position.get(name), "tuple of ints", v)
                bad = next((i for i, e in enumerate(v) if not _is_int(e)), None)
                if bad:  # PyTorch's parser: a bad element after the first fails to unpack
                    raise TypeError(
                        f"{fname}(): argument '{name}' failed to unpack the object at pos "
                        f'{bad + 1} with error "type must be tuple of ints,but got '
                        f'{type(v[bad]).__name__}"'
                    )
                if bad == 0 and name in position:
                    raise TypeError(
                        f"{fname}(): argument '{name}' (position {position[name]}) must be "
                        f"tuple of ints, but found element of type {type(v[0]).__name__} at pos 0"
                    )
                if bad == 0:
                    raise _type_error(fname, name, None, "tuple of ints", v)
            v = bound.get("norm")
            if v is not None and not isinstance(v, str):
                raise _type_error(fname, "norm", position.get("norm"), "str", v)
            return fn(*args, **kwargs)

        return checked

    return wrap


def _norm(norm, forward: bool) -> int:
    """``norm_from_string``: numpy's directional names as the kernels' absolute scale."""
    if norm is None or norm == "backward":
        return _NONE if forward else _BY_N
    if norm == "forward":
        return _BY_N if forward else _NONE
    if norm == "ortho":
        return _BY_ROOT_N
    raise RuntimeError(f'Invalid normalization mode: "{norm}"')


def _promote(x: Tensor, require_complex: bool) -> Tensor:
    """``promote_tensor_fft``: integers to the default float, float to complex when required;
    half types raise."""
    dt = x._dtype
    if dt.is_complex:
        return x
    if not dt.is_floating_point:
        dt = D.get_default_dtype()
    if dt not in (D.float32, D.float64):
        raise RuntimeError(UNSUPPORTED_DTYPE.format(dt._legacy))
    if require_complex:
        dt = dt.to_complex()
    return x if dt is x._dtype else x.to(dt)


def _resize(x: Tensor, dims, sizes) -> Tensor:
    """``resize_fft_input``: crop (``slice``) or zero-pad (``constant_pad_nd``) each of ``dims``
    to its size."""
    pad = [(0, 0)] * x.ndim
    must_pad = False
    for d, n in zip(dims, sizes):
        if n == -1:
            continue
        if x.shape[d] < n:
            must_pad = True
            pad[d] = (0, n - x.shape[d])
        if x.shape[d] > n:
            x = x.narrow(d, 0, n)
    return dispatch(OPS["constant_pad_nd"], x, pad=tuple(pad), value=0) if must_pad else x


def _kernel(op: str, x: Tensor, dim, **static) -> Tensor:
    """Run one kernel and give its result the CPU kernel's layout."""
    dim = tuple(dim)
    if x.numel() == 0:  # an empty batch: MKL refuses the plan
        raise RuntimeError(
            "MKL FFT error: Intel oneMKL DFTI ERROR: Inconsistent configuration parameters"
        )
    strides = x.stride()
    if op == "fft_c2r":
        in_sizes = tuple(x.shape)
        if len(dim) > 1:  # a c2c over the leading dims, then a one-dim c2r
            leading = K.sorted_dims(strides, dim[:-1])
            strides = K.result_strides(in_sizes, strides, in_sizes, leading)
        out = dispatch(OPS[op], x, dim=dim, **static)
        layout = K.result_strides(in_sizes, strides, tuple(out.shape), dim[-1:])
    else:
        out = dispatch(OPS[op], x, dim=dim, **static)
        order = K.sorted_dims(strides, dim, exclude_last=op == "fft_r2c")
        layout = K.result_strides(tuple(x.shape), strides, tuple(out.shape), order)
        if op == "fft_r2c" and out._grad_fn is not None:  # Note [Real views of gradients]
            REAL_VIEW_GRADS[out._grad_fn] = ("r2c", dim, static["onesided"], tuple(x.shape))
    return _shape_ops._set_strides(out, layout)


# --- one-dimensional transforms ------------------------------------------------------------------


def _c2c(name, x, n, dim, norm, forward):
    if not x._dtype.is_complex:
        raise RuntimeError(f"{name} expects a complex input tensor, but got {x._dtype._legacy}")
    dim = _wrap_dim(dim, x.ndim)
    n = x.shape[dim] if n is None else n
    if n < 1:
        raise RuntimeError(INVALID_POINTS.format(n))
    x = _resize(x, (dim,), (n,))
    return _kernel("fft_c2c", x, (dim,), normalization=_norm(norm, forward), forward=forward)


def _r2c(name, x, n, dim, norm, forward, onesided):
    if x._dtype.is_complex:
        raise RuntimeError(f"{name} expects a real input tensor, but got {x._dtype._legacy}")
    x = _promote(x, False)
    dim = _wrap_dim(dim, x.ndim)
    n = x.shape[dim] if n is None else n
    if n < 1:
        raise RuntimeError(INVALID_POINTS.format(n))
    x = _resize(x, (dim,), (n,))
    out = _kernel("fft_r2c", x, (dim,), normalization=_norm(norm, forward), onesided=onesided)
    return out if forward else out.conj()


def _c2r(x, n, dim, norm, forward):
    x = _promote(x, True)
    dim = _wrap_dim(dim, x.ndim)
    last = 2 * (x.shape[dim] - 1) if n is None else n
    if last < 1:
        raise RuntimeError(INVALID_POINTS.format(last))
    if n is not None:
        x = _resize(x, (dim,), (last // 2 + 1,))
    normalization = _norm(norm, forward)
    if forward:
        x = x.conj()
    return _kernel("fft_c2r", x, (dim,), normalization=normalization, last_dim_size=last)


@_checked("fft_fft", ints=("n", "dim"))
@_autocast.policy("fp32")
def fft(input, n=None, dim=-1, norm=None, *, out=None):
    """The one-dimensional discrete Fourier transform of ``input`` along ``dim``."""
    if input._dtype.is_complex:
        return _c2c("fft", input, n, dim, norm, True)
    return _r2c("fft", input, n, dim, norm, True, False)


@_checked("fft_ifft", ints=("n", "dim"))
@_autocast.policy("fp32")
def ifft(input, n=None, dim=-1, norm=None, *, out=None):
    """The one-dimensional inverse discrete Fourier transform of ``input`` along ``dim``."""
    if input._dtype.is_complex:
        return _c2c("ifft", input, n, dim, norm, False)
    return _r2c("ifft", input, n, dim, norm, False, False)


@_checked("fft_rfft", ints=("n", "dim"))
@_autocast.policy("fp32")
def rfft(input, n=None, dim=-1, norm=None, *, out=None):
    """The one-sided Fourier transform of a real ``input`` (``n // 2 + 1`` frequencies)."""
    return _r2c("rfft", input, n, dim, norm, True, True)


@_checked("fft_irfft", ints=("n", "dim"))
@_autocast.policy("fp32")
def irfft(input, n=None, dim=-1, norm=None, *, out=None):
    """The inverse of ``rfft``: a real signal of ``n`` points (``2 * (m - 1)`` by default)."""
    return _c2r(input, n, dim, norm, False)


@_checked("fft_hfft", ints=("n", "dim"))
@_autocast.policy("fp32")
def hfft(input, n=None, dim=-1, norm=None, *, out=None):
    """The Fourier transform of a Hermitian-symmetric signal given by its one-sided half."""
    return _c2r(input, n, dim, norm, True)


@_checked("fft_ihfft", ints=("n", "dim"))
@_autocast.policy("fp32")
def ihfft(input, n=None, dim=-1, norm=None, *, out=None):
    """The inverse of ``hfft``: the one-sided half of the inverse transform of a real signal."""
    return _r2c("ihfft", input, n, dim, norm, False, True)


# --- n-dimensional transforms --------------------------------------------------------------------


def _shape_and_dims(x: Tensor, s, dim):
    """``canonicalize_fft_shape_and_dim_args``: the transformed dims and their sizes."""
    ndim = x.ndim
    if dim is not None:
        dim = (dim,) if _is_int(dim) else tuple(dim)
        dims = tuple(_wrap_dim(d, ndim) for d in dim)
        if len(set(dims)) != len(dims):
            raise RuntimeError("FFT dims must be unique")
    if s is not None:
        s = (s,) if _is_int(s) else tuple(s)
        if dim is not None and len(dim) != len(s):
            raise RuntimeError("When given, dim and shape arguments must have the same length")
        if len(s) > ndim:
            raise RuntimeError(
                f"Got shape with {len(s)} values but input tensor only has {ndim} dimensions."
            )
        if dim is None:
            dims = tuple(range(ndim - len(s), ndim))
        shape = tuple(x.shape[d] if n == -1 else n for n, d in zip(s, dims))
    elif dim is None:
        dims = tuple(range(ndim))
        shape = tuple(x.shape)
    else:
        shape = tuple(x.shape[d] for d in dims)
    for n in shape:
        if n <= 0:
            raise RuntimeError(INVALID_POINTS.format(n))
    return shape, dims


def _fftn_c2c(x, s, dim, norm, forward):
    shape, dims = _shape_and_dims(x, s, dim)
    x = _resize(_promote(x, True), dims, shape)
    return _kernel("fft_c2c", x, dims, normalization=_norm(norm, forward), forward=forward)


def _c2r_shape(name, x, s, dim):
    """``canonicalize_fft_c2r_shape_and_dim_args``: the input sizes (the last one halved) and
    the size of the last dim of the result."""
    shape, dims = _shape_and_dims(x, s, dim)
    if not shape:
        raise RuntimeError(f"{name} must transform at least one axis")
    if s is None or (s if _is_int(s) else tuple(s))[-1] == -1:
        last = 2 * (x.shape[dims[-1]] - 1)
    else:
        last = shape[-1]
    if last < 1:
        raise RuntimeError(INVALID_POINTS.format(last))
    return (*shape[:-1], last // 2 + 1), dims, last


def _nd(fname: str):
    return _checked(fname, int_lists=("s", "dim"))


@_nd("fft_fftn")
@_autocast.policy("fp32")
def fftn(input, s=None, dim=None, norm=None, *, out=None):
    """The n-dimensional discrete Fourier transform over ``dim`` (all dims by default)."""
    return _fftn_c2c(input, s, dim, norm, True)


@_nd("fft_ifftn")
@_autocast.policy("fp32")
def ifftn(input, s=None, dim=None, norm=None, *, out=None):
    """The n-dimensional inverse discrete Fourier transform over ``dim``."""
    return _fftn_c2c(input, s, dim, norm, False)


@_nd("fft_rfftn")
@_autocast.policy("fp32")
def rfftn(input, s=None, dim=None, norm=None, *, out=None):
    """The n-dimensional Fourier transform of a real input, one-sided in the last of ``dim``."""
    if input._dtype.is_complex:
        raise RuntimeError(
            f"rfftn expects a real-valued input tensor, but got {input._dtype._legacy}"
        )
    shape, dims = _shape_and_dims(input, s, dim)
    if not shape:
        raise RuntimeError("rfftn must transform at least one axis")
    x = _resize(_promote(input, False), dims, shape)
    return _kernel("fft_r2c", x, dims, normalization=_norm(norm, True), onesided=True)


@_nd("fft_irfftn")
@_autocast.policy("fp32")
def irfftn(input, s=None, dim=None, norm=None, *, out=None):
    """The inverse of ``rfftn``: a real result whose last transformed dim has ``s[-1]``
    points (``2 * (m - 1)`` by default)."""
    shape, dims, last = _c2r_shape("irfftn", input, s, dim)
    x = _resize(_promote(input, True), dims, shape)
    return _kernel("fft_c2r", x, dims, normalization=_norm(norm, False), last_dim_size=last)


@_nd("fft_hfftn")
def hfftn(input, s=None, dim=None, norm=None, *, out=None):
    """The n-dimensional Fourier transform of a Hermitian-symmetric signal given by its
    one-sided half in the last of ``dim``."""
    shape, dims, last = _c2r_shape("hfftn", input, s, dim)
    x = _resize(_promote(input, True), dims, shape)
    normalization = _norm(norm, True)
    if len(dims) > 1:
        x = _kernel("fft_c2c", x, dims[:-1], normalization=normalization, forward=True)
    x = x.conj()
    return _kernel("fft_c2r", x, dims[-1:], normalization=normalization, last_dim_size=last)


@_nd("fft_ihfftn")
def ihfftn(input, s=None, dim=None, norm=None, *, out=None):
    """The inverse of ``hfftn``: the one-sided half of the inverse transform of a real input."""
    shape, dims = _shape_and_dims(input, s, dim)
    if not shape:
        raise RuntimeError("ihfftn must transform at least one axis")
    x = _promote(input, False)
    if x._dtype.is_complex:
        raise RuntimeError(NOT_FLOATING.format(x._dtype._legacy))
    x = _resize(x, dims, shape)
    normalization = _norm(norm, False)
    out = _kernel("fft_r2c", x, dims[-1:], normalization=normalization, onesided=True)
    if len(dims) == 1:
        return out.conj()
    out = out.conj_physical()
    return _kernel("fft_c2c", out, dims[:-1], normalization=normalization, forward=False)


def _two(fname, nd):
    @_nd(fname)
    def two(input, s=None, dim=(-2, -1), norm=None, *, out=None):
        return nd(input, s=s, dim=dim, norm=norm)

    two.__name__ = two.__qualname__ = fname[4:]
    two.__doc__ = f"``{nd.__name__}`` over two dims (the last two by default)."
    return two


fft2 = _two("fft_fft2", fftn)
ifft2 = _two("fft_ifft2", ifftn)
rfft2 = _two("fft_rfft2", rfftn)
irfft2 = _two("fft_irfft2", irfftn)
hfft2 = _two("fft_hfft2", hfftn)
ihfft2 = _two("fft_ihfft2", ihfftn)


# --- helpers -------------------------------------------------------------------------------------


def _freq(name, n, d, dtype, device, requires_grad, count):
    """``arange`` in ``dtype`` times ``1 / (n * d)`` (``mul_`` by a double, as ATen does);
    ``fftfreq``'s upper half counts down from ``-(n // 2)``."""
    if not _is_int(n):
        raise _type_error(f"fft_{name}", "n", 1, "int", n)
    dt = D.get_default_dtype() if dtype is None else dtype
    if not (dt.is_floating_point or dt.is_complex):
        raise RuntimeError(f"{name} requires a floating point or complex dtype")
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    if dt.is_complex:  # ATen's arange has no complex kernel
        raise NotImplementedError(f"\"arange_cpu\" not implemented for '{dt._legacy}'")
    values = np.arange(count(n), dtype=np.int64)
    if name == "fftfreq":
        values[(n + 1) // 2 :] -= n
    values = values.astype(dt.np)
    if n:
        values = values * dt.np.type(1.0 / (n * d))
    # from a list: a tensor made of an empty array would keep the array's strides
    return _factories.tensor(values.tolist(), dtype=dt, device=device, requires_grad=requires_grad)


def fftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """The sample frequencies of a length-``n`` transform with sample spacing ``d``."""
    return _freq("fftfreq", n, d, dtype, device, requires_grad, lambda n: n)


def rfftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """The sample frequencies of ``rfft`` of a length-``n`` signal with sample spacing ``d``."""
    return _freq("rfftfreq", n, d, dtype, device, requires_grad, lambda n: n // 2 + 1)


def _all_dims(dim, x):
    if dim is None:
        return list(range(x.ndim))
    return [dim] if _is_int(dim) else list(dim)


def fftshift(input, dim=None):
    """Rolls the zero frequency to the centre of ``dim`` (all dims by default)."""
    dims = _all_dims(dim, input)
    return input.roll([input.shape[d] // 2 for d in dims], dims)


def ifftshift(input, dim=None):
    """The inverse of ``fftshift``."""
    dims = _all_dims(dim, input)
    return input.roll([(input.shape[d] + 1) // 2 for d in dims], dims)


# --- the short-time Fourier transform ------------------------------------------------------------

STFT_WINDOW_WARNING = (
    "A window was not provided. A rectangular window will be applied,which is known to cause "
    "spectral leakage. Other windows such as torch.hann_window or torch.hamming_window are "
    "recommended to reduce spectral leakage.To suppress this warning and use a rectangular "
    "window, explicitly set `window=torch.ones(n_fft, device=<device>)`. (Triggered internally "
    "at /__w/pytorch/pytorch/aten/src/ATen/native/SpectralOps.cpp:835.)"
)
# the ATen stft's signatures, as its argument parser prints them
STFT_SIGNATURES = (
    "(Tensor input, int n_fft, int hop_length = None, int win_length = None, Tensor window = "
    'None, bool center = True, str pad_mode = "reflect", bool normalized = False, bool onesided '
    "= None, bool return_complex = None, bool align_to_window = None)",
    "(Tensor input, int n_fft, int hop_length = None, int win_length = None, Tensor window = "
    "None, bool normalized = False, bool onesided = None, bool return_complex = None, bool "
    "align_to_window = None)",
)
STFT_RETURN_COMPLEX = (
    "stft requires the return_complex parameter be given for real inputs, and will further "
    "require that return_complex=True in a future PyTorch release."
)
STFT_REAL_DEPRECATED = (
    "stft with return_complex=False is deprecated. In a future pytorch release, stft will return "
    "complex tensors for all inputs, and return_complex=False will raise an error.\nNote: you can "
    "still call torch.view_as_real on the complex output to recover the old return format. "
    "(Triggered internally at /__w/pytorch/pytorch/aten/src/ATen/native/SpectralOps.cpp:874.)"
)


def _sizes(t) -> str:
    return "[" + ", ".join(map(str, t.shape)) + "]"


def _opt(value) -> str:
    return "None" if value is None else str(int(value))


@tensor_op("stft")
@_autocast.policy("fp32")
def stft(
    input,
    n_fft,
    hop_length=None,
    win_length=None,
    window=None,
    center=True,
    pad_mode="reflect",
    normalized=False,
    onesided=None,
    return_complex=None,
    align_to_window=None,
):
    """``torch.stft``: Fourier transforms of windowed frames (``center`` pads the signal by
    ``n_fft // 2`` on each side first), as PyTorch's composite records them: the frames are an
    ``as_strided`` view, the window a ``mul``, the transform one r2c (c2c for complex) kernel,
    then an in-place ``transpose_`` (and ``squeeze_`` of a 1-D signal)."""
    from . import _factories
    from .nn import functional as F

    if center and align_to_window is not None:
        raise RuntimeError("stft align_to_window should only be set when center = false")
    if align_to_window:
        raise NotImplementedError("leafgrad: stft(align_to_window=True) is not supported")
    if center:
        if not isinstance(input, Tensor):  # PyTorch's Python-level stft reads ``input.dim()``
            raise AttributeError(f"'{E.py_typename(input)}' object has no attribute 'dim'")
        signal_dim = input.ndim
        extended = [1] * (3 - signal_dim) + list(input.shape)
        pad = int(n_fft // 2)
        input = F.pad(input.view(extended), [pad, pad], pad_mode)
        input = input.view(tuple(input.shape[-signal_dim:]))
    args = (input, n_fft, hop_length, win_length, window, normalized, onesided, return_complex)
    args += (align_to_window,)  # what it passes on to the ATen stft, by position
    if all(E._signature_error("stft", E._parameters(s), args, {}) for s in STFT_SIGNATURES):
        raise TypeError(E.invalid_arguments("stft", STFT_SIGNATURES, args))
    hop = n_fft // 4 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    if window is None:
        E.warn_once(STFT_WINDOW_WARNING)
    is_complex = input._dtype.is_complex or (window is not None and window._dtype.is_complex)
    out_complex = is_complex if return_complex is None else return_complex
    if not out_complex:
        if return_complex is None:
            raise RuntimeError(STFT_RETURN_COMPLEX)
        E.warn_once(STFT_REAL_DEPRECATED)
    window_text = "None"
    if window is not None:
        window_text = f"{E.tensor_type_name(window._dtype, window._device)}{{{_sizes(window)}}}"
    where = (
        f"stft({E.tensor_type_name(input._dtype, input._device)}{_sizes(input)}, "
        f"n_fft={n_fft}, hop_length={hop}, win_length={win}, window={window_text}, "
        f"normalized={int(normalized)}, onesided={_opt(onesided)}, "
        f"return_complex={_opt(return_complex)}, align_to_window={_opt(align_to_window)}) : "
    )
    if not (input._dtype.is_floating_point or input._dtype.is_complex):
        raise RuntimeError(where + "expected a tensor of floating point or complex values")
    if input.ndim not in (1, 2):
        raise RuntimeError(where + "expected a 1D or 2D tensor")
    x = input.unsqueeze(0) if input.ndim == 1 else input
    length = x.shape[1]
    if n_fft <= 0 or n_fft > length:
        raise RuntimeError(where + f"expected 0 < n_fft < {length}, but got n_fft={win}")
    if hop <= 0:
        raise RuntimeError(where + f"expected hop_length > 0, but got hop_length={hop}")
    if win <= 0 or win > n_fft:
        raise RuntimeError(where + f"expected 0 < win_length <= n_fft, but got win_length={win}")
    if window is not None and (window.ndim != 1 or window.shape[0] != win):
        raise RuntimeError(
            where + f"expected a 1D window tensor of size equal to win_length={win}, but got "
            f"window with size {_sizes(window)}"
        )
    if win < n_fft:  # the window centred in n_fft points
        left = (n_fft - win) // 2
        if window is not None:
            padded = _factories.zeros(n_fft, dtype=window.dtype, device=window.device)
            padded.narrow(0, left, win).copy_(window)
        else:
            padded = _factories.zeros(n_fft, dtype=input.dtype, device=input.device)
            padded.narrow(0, left, win).fill_(1)
        window = padded
    frames = 1 + (length - n_fft) // hop
    s0, s1 = x.stride()
    x = x.as_strided((x.shape[0], frames, n_fft), (s0, hop * s1, s1))
    if window is not None:
        x = x.mul(window)
    fft_complex = x._dtype.is_complex
    one = (not fft_complex) if onesided is None else onesided
    normalization = _BY_ROOT_N if normalized else _NONE
    if fft_complex:
        if one:
            raise RuntimeError("Cannot have onesided output if window or input is complex")
        out = _kernel("fft_c2c", x, (2,), normalization=normalization, forward=True)
    else:
        out = _kernel("fft_r2c", x, (2,), normalization=normalization, onesided=bool(one))
    out.transpose_(1, 2)
    if input.ndim == 1:
        out.squeeze_(0)
    return out if out_complex else _shape_ops.view_as_real(out)


ISTFT_WINDOW_WARNING = (
    "A window was not provided. A rectangular window will be applied.Please provide the same "
    "window used by stft to make the inversion lossless.To suppress this warning and use a "
    "rectangular window, explicitly set `window=torch.ones(n_fft, device=<device>)`. (Triggered "
    "internally at /__w/pytorch/pytorch/aten/src/ATen/native/SpectralOps.cpp:1035.)"
)
ISTFT_LENGTH_WARNING = (
    "The length of signal is shorter than the length parameter. Result is being padded with "
    "zeros in the tail. Please check your center and hop_length settings. (Triggered internally "
    "at /__w/pytorch/pytorch/aten/src/ATen/native/SpectralOps.cpp:1199.)"
)
ISTFT_COMPLEX_INPUT = (
    "istft requires a complex-valued input tensor matching the output from stft with "
    "return_complex=True."
)


@tensor_op("istft")
def istft(
    input,
    n_fft,
    hop_length=None,
    win_length=None,
    window=None,
    center=True,
    normalized=False,
    onesided=None,
    length=None,
    return_complex=False,
):
    """``torch.istft``: the least-squares inverse of ``stft`` by overlap-add, as PyTorch's
    composite records it: the spectrum viewed as real and back as complex frames, one inverse
    kernel (c2r, or c2c for a complex signal), the window a ``mul``, the overlap-add an
    ``unfold_backward``, then a ``slice`` and a ``div`` by the summed squared window (checked
    against 1e-11 on concrete values: the NOLA condition)."""
    from .nn import functional as F

    if E.int_refused(n_fft):  # the ATen istft's parser, before its warning
        raise TypeError(E.MUST_BE.format("istft", "n_fft", 2, "int", E.py_typename(n_fft)))
    if window is None:
        E.warn_once(ISTFT_WINDOW_WARNING)
    hop = n_fft >> 2 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length

    def where() -> str:
        window_text = "None"
        if window is not None:
            window_text = f"{E.tensor_type_name(window._dtype, window._device)}{{{_sizes(window)}}}"
        return (
            f"istft({E.tensor_type_name(input._dtype, input._device)}{_sizes(input)}, "
            f"n_fft={n_fft}, hop_length={hop}, win_length={win}, window={window_text}, "
            f"center={int(center)}, normalized={int(normalized)}, onesided={_opt(onesided)}, "
            f"length={_opt(length)}, return_complex={int(return_complex)}) "
        )

    if window is not None and window._device != input._device:
        raise RuntimeError(
            "istft input and window must be on the same device but got self on "
            f"{input._device} and window on {window._device}"
        )
    if not input._dtype.is_complex:
        raise RuntimeError(ISTFT_COMPLEX_INPUT)
    x = input.resolve_conj()
    root, laid = _shape_ops._root_laid_out(x)
    if laid != _shape_ops._contiguous_strides(root.shape):
        # leafgrad's view_as_complex below reads the memory in its root's order (stft's own
        # result is laid out otherwise): a copy first (a CloneBackward0 PyTorch's graph lacks)
        x = x.contiguous()
    x = _shape_ops.view_as_real(x)
    ndim = x.ndim
    frames, fft_size = x.shape[-2], x.shape[-3]
    signal_len = n_fft + hop * (frames - 1)
    if x.numel() == 0:
        raise RuntimeError(where() + ": input tensor cannot be empty.")
    if ndim not in (3, 4):
        raise RuntimeError(where() + f": expected a tensor with 3 or 4 dimensions, but got {ndim}")
    one = (fft_size != n_fft) if onesided is None else onesided
    if one and n_fft // 2 + 1 != fft_size:
        raise RuntimeError(
            where() + ": expected the frequency dimension (3rd to the last) of the input tensor "
            f"to match n_fft / 2 + 1 when onesided=True, but got {fft_size}"
        )
    if not one and n_fft != fft_size:
        raise RuntimeError(
            where() + ": expected the frequency dimension (3rd to the last) of the input tensor "
            f"to match n_fft when onesided=False, but got {fft_size}"
        )
    if not 0 < hop <= win:
        raise RuntimeError(where() + ": expected 0 < hop_length <= win_length")
    if not 0 < win <= n_fft:
        raise RuntimeError(where() + ": expected 0 < win_length <= n_fft")
    if window is not None and (window.ndim != 1 or window.shape[0] != win):
        raise RuntimeError(
            where() + ": Invalid window shape. window has to be 1D and length of `win_length`"
        )
    w = window if window is not None else _factories.ones(win, dtype=x.dtype, device=x.device)
    if win != n_fft:
        left = (n_fft - win) // 2
        w = F.pad(w, [left, n_fft - win - left], "constant", 0)
    if ndim == 3:
        x = x.unsqueeze(0)
    x = _shape_ops.view_as_complex(x.transpose(1, 2))  # (channel, frames, fft_size)
    normalization = _BY_ROOT_N if normalized else _BY_N
    if return_complex:
        if one:
            raise RuntimeError("Cannot have onesided output if window or input is complex")
        x = _kernel("fft_c2c", x, (x.ndim - 1,), normalization=normalization, forward=False)
    else:
        if window is not None and window._dtype.is_complex:
            raise RuntimeError("Complex windows are incompatible with return_complex=False")
        if not one:
            x = x[..., : n_fft // 2 + 1]
        x = _kernel("fft_c2r", x, (x.ndim - 1,), normalization=normalization, last_dim_size=n_fft)
    y = x * w.view(1, 1, n_fft)
    unfold_backward = OPS["unfold_backward"]
    y = dispatch(
        unfold_backward, y, input_sizes=(y.shape[0], signal_len), dim=1, size=n_fft, step=hop
    )
    envelope = w.pow(2).expand(1, frames, n_fft)
    envelope = dispatch(
        unfold_backward, envelope, input_sizes=(1, signal_len), dim=1, size=n_fft, step=hop
    )
    start = n_fft // 2 if center else 0
    if length is not None:
        end = start + length
    else:
        end = -(n_fft // 2) if center else signal_len
    stop = min(end if end >= 0 else signal_len + end, signal_len)
    stop = max(stop, start)
    y = y.narrow(1, start, stop - start)  # a slice node even when it keeps every element
    envelope = envelope.narrow(1, start, stop - start)
    lowest = envelope.abs().min().lt(1e-11)
    if not isinstance(lowest._data, jax.core.Tracer) and bool(np.asarray(lowest._data)):
        kind = input._device.type.upper()
        raise RuntimeError(where() + f"window overlap add min: 1\n[ {kind}BoolType{{}} ]")
    y = y / envelope
    if ndim == 3:
        y = y.squeeze(0)
    if end > signal_len:
        E.warn_once(ISTFT_LENGTH_WARNING)
        y = F.pad(y, [0, end - signal_len], "constant", 0)
    return y
