"""Text form of tensors: PyTorch 2.13's ``torch/_tensor_str.py`` (repr, print options), numpy.

The rules are PyTorch's, copied exactly so that ``repr`` of a leafgrad tensor is byte-identical to
PyTorch's, quirks included:

* Column widths and the number format (integer mode, scientific mode) are chosen from the
  *summarised* data only (the ``edgeitems`` first and last entries along every dimension when the
  tensor has more than ``threshold`` elements), never from the elided middle.
* Only finite non-zero values take part in that choice: ``0``, ``-0.``, ``nan`` and ``inf`` are
  formatted afterwards and may be wider than the column (they are never truncated).
* Floating values of every dtype (float16 and bfloat16 included) are formatted as Python floats,
  i.e. as their exact double value, and the magnitude tests run in double precision.
* When the suffixes (``dtype=``, ``requires_grad=``...) are placed, the running line length starts
  at the tensor's last line plus two (PyTorch's ``rfind`` arithmetic), so the first suffix wraps
  to its own line two characters early; after a wrap the count is exact.
* ``set_printoptions`` always resets ``sci_mode`` to its argument (``None`` when not given).
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
from collections.abc import Iterator
from typing import Any

import numpy as np

from . import _dtype

__all__ = ["format_tensor", "get_printoptions", "printoptions", "set_printoptions"]


@dataclasses.dataclass
class _PrinterOptions:
    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: bool | None = None


PRINT_OPTS = _PrinterOptions()

# profile name -> (precision, threshold, edgeitems, linewidth), as in torch.set_printoptions.
_PROFILES: dict[str, tuple[int, float, int, int]] = {
    "default": (4, 1000, 3, 80),
    "short": (2, 1000, 2, 80),
    "full": (4, math.inf, 3, 80),
}


def set_printoptions(
    precision: int | None = None,
    threshold: float | None = None,
    edgeitems: int | None = None,
    linewidth: int | None = None,
    profile: str | None = None,
    sci_mode: bool | None = None,
) -> None:
    """Set the options for printing tensors, as ``torch.set_printoptions``.

    ``profile`` ("default", "short" or "full"; an unknown name is ignored, as in PyTorch) is
    applied first and the other arguments override it. ``sci_mode`` is always assigned, so any
    call without it goes back to choosing scientific notation automatically.
    """
    if profile is not None and profile in _PROFILES:
        (
            PRINT_OPTS.precision,
            PRINT_OPTS.threshold,
            PRINT_OPTS.edgeitems,
            PRINT_OPTS.linewidth,
        ) = _PROFILES[profile]
    if precision is not None:
        PRINT_OPTS.precision = precision
    if threshold is not None:
        PRINT_OPTS.threshold = threshold
    if edgeitems is not None:
        PRINT_OPTS.edgeitems = edgeitems
    if linewidth is not None:
        PRINT_OPTS.linewidth = linewidth
    PRINT_OPTS.sci_mode = sci_mode


def get_printoptions() -> dict[str, Any]:
    """The current print options, as a dict that can be passed back to ``set_printoptions``."""
    return dataclasses.asdict(PRINT_OPTS)


@contextlib.contextmanager
def printoptions(**kwargs: Any) -> Iterator[None]:
    """Context manager that sets print options (``set_printoptions``'s arguments) temporarily."""
    old = get_printoptions()
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        set_printoptions(**old)


# --- element formatting ------------------------------------------------------------------------


def _kind(dt: _dtype.dtype) -> str:
    """'f' floating, 'c' complex, 'b' bool, 'i' integer: decides how elements become Python."""
    if dt.is_floating_point:
        return "f"
    if dt.is_complex:
        return "c"
    return "b" if dt is _dtype.bool_ else "i"


def _to_python(values: np.ndarray, kind: str) -> list | float | int | bool | complex:
    """``tolist()`` as PyTorch gives it: floats as exact doubles (float16/bfloat16 included)."""
    target = {"f": np.float64, "c": np.complex128, "b": np.bool_, "i": np.int64}[kind]
    return np.asarray(values).astype(target, copy=False).tolist()


class _Formatter:
    """Chooses one column width and number format for a whole (summarised) real tensor."""

    def __init__(self, data: np.ndarray, kind: str) -> None:
        self.floating = kind == "f"
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        if not self.floating:
            for value in _to_python(data.reshape(-1), kind):
                self.max_width = max(self.max_width, len(str(value)))
            return

        flat = data.reshape(-1).astype(np.float64, copy=False)
        vals = flat[np.isfinite(flat) & (flat != 0)]
        if vals.size == 0:
            return  # nothing but zeros/nan/inf: width 1, integer mode, fixed notation
        # Exact in double for every float dtype, like PyTorch's ceil in the tensor's own dtype.
        self.int_mode = bool(np.all(vals == np.ceil(vals)))
        absolute = np.abs(vals)
        lo, hi = float(absolute.min()), float(absolute.max())
        if PRINT_OPTS.sci_mode is None:
            # Python float division: an overflowing ratio is inf (> 1000), without a warning.
            self.sci_mode = hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4
        else:
            self.sci_mode = PRINT_OPTS.sci_mode

        precision = PRINT_OPTS.precision
        if self.sci_mode:
            spec, extra = f".{precision}e", 0
        elif self.int_mode:
            # The "." appended to integral floats is counted here.
            spec, extra = ".0f", 1
        else:
            spec, extra = f".{precision}f", 0
        for value in vals.tolist():
            self.max_width = max(self.max_width, len(format(value, spec)) + extra)

    def width(self) -> int:
        return self.max_width

    def format(self, value: float) -> str:
        """One element, right-aligned to the column width (never truncated)."""
        if self.floating:
            if self.sci_mode:
                ret = format(value, f"{self.max_width}.{PRINT_OPTS.precision}e")
            elif self.int_mode:
                ret = format(value, ".0f")
                if not (math.isinf(value) or math.isnan(value)):
                    ret += "."
            else:
                ret = format(value, f".{PRINT_OPTS.precision}f")
        else:
            ret = str(value)
        return (self.max_width - len(ret)) * " " + ret


class _Printer:
    """Renders nested rows with the formatter(s) of one tensor (two for complex: real, imag)."""

    def __init__(self, kind: str, summarize: bool, real: _Formatter, imag: _Formatter | None):
        self.kind = kind
        self.summarize = summarize
        self.real = real
        self.imag = imag

    def element(self, value: Any) -> str:
        if self.imag is None:
            return self.real.format(value)
        real_str = self.real.format(value.real)
        imag_str = (self.imag.format(value.imag) + "j").lstrip()
        # A sign (from a negative number or -0.) already separates the parts.
        if imag_str[0] in "+-":
            return real_str + imag_str
        return real_str + "+" + imag_str

    def vector(self, row: np.ndarray, indent: int) -> str:
        element_length = self.real.width() + 2  # ", " between elements
        if self.imag is not None:
            element_length += self.imag.width() + 1  # the "j"
        per_line = max(1, math.floor((PRINT_OPTS.linewidth - indent) / element_length))

        edge = PRINT_OPTS.edgeitems
        if self.summarize and not edge:
            data = ["..."]
        elif self.summarize and row.shape[0] > 2 * edge:
            data = (
                [self.element(v) for v in _to_python(row[:edge], self.kind)]
                + [" ..."]
                + [self.element(v) for v in _to_python(row[-edge:], self.kind)]
            )
        else:
            data = [self.element(v) for v in _to_python(row, self.kind)]

        lines = [", ".join(data[i : i + per_line]) for i in range(0, len(data), per_line)]
        return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"

    def render(self, array: np.ndarray, indent: int) -> str:
        dim = array.ndim
        if dim == 0:
            return self.element(_to_python(array, self.kind))
        if dim == 1:
            return self.vector(array, indent)

        edge = PRINT_OPTS.edgeitems
        n = array.shape[0]
        if self.summarize and n > 2 * edge:
            slices = (
                [self.render(array[i], indent + 1) for i in range(edge)]
                + ["..."]
                + [self.render(array[i], indent + 1) for i in range(n - edge, n)]
            )
        else:
            slices = [self.render(array[i], indent + 1) for i in range(n)]
        # Blank lines between blocks grow with the depth of the dimension being joined.
        return "[" + ("," + "\n" * (dim - 1) + " " * (indent + 1)).join(slices) + "]"


def _summarized_data(array: np.ndarray) -> np.ndarray:
    """The entries a summarised print shows, as PyTorch's ``get_summarized_data``.

    Only these are read when the formats are chosen, so printing a huge tensor stays cheap.
    """
    edge = PRINT_OPTS.edgeitems
    if array.ndim == 0:
        return array
    if array.ndim == 1:
        if not edge:
            # PyTorch keeps everything here (its ``a[-0:]``), but a row printed with edgeitems 0
            # is just "[...]", so the formats chosen from it are never used.
            return array[:0]
        if array.shape[0] > 2 * edge:
            return np.concatenate((array[:edge], array[-edge:]))
        return array
    if not edge:
        return array[(slice(0, 0),) * array.ndim]
    if edge < 0:
        # PyTorch stacks an empty list of rows here.
        raise RuntimeError("stack expects a non-empty TensorList")
    # Keeping the edge indices of every axis at once equals PyTorch's recursive stack, and the
    # gather reads only the kept elements.
    keep = [np.r_[0:edge, n - edge : n] if n > 2 * edge else np.arange(n) for n in array.shape]
    return array[np.ix_(*keep)]


def _tensor_str(values: np.ndarray, kind: str, indent: int) -> str:
    """The bracketed contents of a non-empty tensor, as PyTorch's ``_tensor_str``."""
    summarize = values.size > PRINT_OPTS.threshold
    data = _summarized_data(values) if summarize else values
    if kind == "c":
        real = _Formatter(np.real(data), "f")
        imag = _Formatter(np.imag(data), "f")
        return _Printer(kind, summarize, real, imag).render(values, indent)
    return _Printer(kind, summarize, _Formatter(data, kind), None).render(values, indent)


def _add_suffixes(tensor_str: str, suffixes: list[str], indent: int) -> str:
    parts = [tensor_str]
    # PyTorch's count starts two above the last line's length (also for a one-line string).
    last_line_len = len(tensor_str) - tensor_str.rfind("\n") + 1
    for suffix in suffixes:
        if last_line_len + len(suffix) + 2 > PRINT_OPTS.linewidth:
            parts.append(",\n" + " " * indent + suffix)
            last_line_len = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last_line_len += len(suffix) + 2
    parts.append(")")
    return "".join(parts)


def _shows_device(device: str, default_device: str) -> bool:
    """PyTorch's rule: a device is printed unless it is the default type (and CUDA index 0)."""
    kind, _, index = device.partition(":")
    if kind != default_device.partition(":")[0]:
        return True
    # torch.cuda.current_device() is taken to be 0; a CUDA device without an index never matches.
    if kind == "cuda" and index != "0":
        return True
    return kind == "mps"


def format_tensor(
    values: np.ndarray,
    *,
    dtype: _dtype.dtype,
    device: str,
    requires_grad: bool = False,
    grad_fn_name: str | None = None,
    is_inference: bool = False,
    tangent: str | None = None,
    prefix: str = "tensor(",
    indent: int | None = None,
    default_device: str = "cpu",
) -> str:
    """The repr PyTorch 2.13 gives a dense tensor with these values and attributes.

    ``values`` holds the tensor's elements (host numpy array of the tensor's shape); ``dtype`` is
    the leafgrad dtype, which decides the element format and the ``dtype=`` suffix. ``device`` is
    printed as ``device='...'`` unless it is of the ``default_device`` type (a CUDA device also
    needs index 0, the current device). ``grad_fn_name`` gives ``grad_fn=<name>``, otherwise
    ``requires_grad`` gives ``requires_grad=True``. ``is_inference`` is accepted for the Tensor
    class's convenience but, as in PyTorch, changes nothing. ``tangent``: the text of a forward-AD
    tangent (Note [Forward AD]).

    ``prefix`` may span lines (``"Parameter containing:\\ntensor("``): only its last line counts as
    the opening, whose length is the default ``indent`` of continuation lines and suffixes.
    """
    del is_inference  # PyTorch prints inference tensors like any other
    head, newline, opening = prefix.rpartition("\n")
    if indent is None:
        indent = len(opening)
    dt = _dtype.to_dtype(dtype)
    values = np.asarray(values)
    default = _dtype.get_default_dtype()

    suffixes = []
    if _shows_device(device, default_device):
        suffixes.append(f"device='{device}'")
    if values.size == 0:
        # Explicitly print the shape if it is not (0,), and the dtype, which nothing else reveals
        # (so int64 and bool are shown too).
        if values.ndim != 1:
            suffixes.append(f"size={tuple(values.shape)}")
        if dt is not default:
            suffixes.append(f"dtype={dt!r}")
        body = "[]"
    else:
        if not PRINT_OPTS.edgeitems:
            suffixes.append(f"size={tuple(values.shape)}")
        if dt not in (default, _default_complex(), _dtype.int64, _dtype.bool_):
            suffixes.append(f"dtype={dt!r}")
        body = _tensor_str(values, _kind(dt), indent)

    if grad_fn_name is not None:
        suffixes.append(f"grad_fn=<{grad_fn_name}>")
    elif requires_grad:
        suffixes.append("requires_grad=True")
    if tangent is not None:  # forward AD (``f"tangent={tangent}"``: a 0-d one as its number)
        suffixes.append(f"tangent={tangent}")
    return head + newline + _add_suffixes(opening + body, suffixes, indent)


def meta_suffixes(t) -> str:
    """A meta tensor as PyTorch prints it: ``...`` for its values, then its size and, where
    not the default, its dtype (Note [Meta tensors])."""
    suffixes = ["device='meta'", f"size={tuple(t._data.shape)}"]
    if t._dtype is not _dtype.get_default_dtype():
        suffixes.append(f"dtype={t._dtype!r}")
    grad_fn = t._grad_fn
    if grad_fn is not None:
        suffixes.append(f"grad_fn=<{type(grad_fn).__name__}>")
    elif t._requires_grad:
        suffixes.append("requires_grad=True")
    return "tensor(..., " + ", ".join(suffixes) + ")"


def _default_complex():
    try:
        return _dtype.default_complex_dtype()
    except NotImplementedError:  # default float16: complex32, which leafgrad lacks
        return None
