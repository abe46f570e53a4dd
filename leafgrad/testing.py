"""``torch.testing.assert_close``: the comparison PyTorch's own tests use, for leafgrad tensors.

The same pairing (tensors, Python numbers, ``None``, sequences and mappings taken apart item by
item, NumPy arrays as tensor-likes), the same default tolerances by dtype, the same checks of
shape, device, dtype, layout and (optionally) strides, and the same messages, so that a test
written against PyTorch fails the same way here. The values are compared on the host with NumPy
in the tensors' own dtype (this is a testing function, not an op)."""

from __future__ import annotations

import collections.abc
import math
import warnings
from typing import Any

import numpy as np

from . import _dtype as D
from ._tensor import Tensor

__all__ = ["assert_close", "assert_allclose", "make_tensor"]

# (rtol, atol) by dtype (PyTorch's _DTYPE_PRECISIONS); others compare exactly
_PRECISIONS = {
    "float16": (0.001, 1e-5),
    "bfloat16": (0.016, 1e-5),
    "float32": (1.3e-6, 1e-5),
    "float64": (1e-7, 1e-7),
    "complex64": (1.3e-6, 1e-5),
    "complex128": (1e-7, 1e-7),
}
_ALLCLOSE_PRECISIONS = {"float16": (1e-3, 1e-3), "float32": (1e-4, 1e-5), "float64": (1e-5, 1e-8)}
_NUMBER_DTYPES = {bool: "bool", int: "int64", float: "float64", complex: "complex128"}


class _Mismatch(Exception):
    """A failed comparison: the exception type to raise, its text, and the item it was at."""

    def __init__(self, kind: type, msg: str, suffix: str = "") -> None:
        super().__init__(msg)
        self.kind, self.msg, self.suffix = kind, msg, suffix


def _tolerances(names, rtol, atol) -> tuple[float, float]:
    if (rtol is None) ^ (atol is None):
        raise ValueError(
            f"Both 'rtol' and 'atol' must be either specified or omitted, "
            f"but got no {'rtol' if rtol is None else 'atol'}."
        )
    if rtol is not None:
        return rtol, atol
    pairs = [_PRECISIONS.get(n, (0.0, 0.0)) for n in names]
    return max(p[0] for p in pairs), max(p[1] for p in pairs)


def _mismatch_msg(identifier, extra, abs_diff, abs_idx, atol, rel_diff, rel_idx, rtol) -> str:
    equality = rtol == 0 and atol == 0

    def diff(kind, value, idx, tol):
        text = (
            f"{kind.title()} difference: {value}"
            if idx is None
            else f"Greatest {kind} difference: {value} at index {idx}"
        )
        return text + ("" if equality else f" (up to {tol} allowed)") + "\n"

    msg = f"{identifier} are not {'equal' if equality else 'close'}!\n\n"
    if extra:
        msg += f"{extra.strip()}\n"
    msg += diff("absolute", abs_diff, abs_idx, atol)
    msg += diff("relative", rel_diff, rel_idx, rtol)
    return msg.strip()


def _scalar_msg(actual, expected, rtol, atol) -> str:
    abs_diff = abs(actual - expected)
    rel_diff = float("inf") if expected == 0 else abs_diff / abs(expected)
    extra = f"Expected {expected} but got {actual}."
    return _mismatch_msg("Scalars", extra, abs_diff, None, atol, rel_diff, None, rtol)


def _isclose(a: np.ndarray, b: np.ndarray, rtol, atol, equal_nan) -> np.ndarray:
    if a.dtype.kind in "biu":
        return a == b if rtol == 0 and atol == 0 else np.isclose(a, b, rtol, atol)
    with np.errstate(invalid="ignore", over="ignore"):
        return np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)


def _item(v):
    return v.item() if isinstance(v, np.generic) else v


def _compare_arrays(a: np.ndarray, b: np.ndarray, rtol, atol, equal_nan) -> None:
    matches = _isclose(a, b, rtol, atol, equal_nan)
    if np.all(matches):
        return
    if a.shape == ():
        raise _Mismatch(AssertionError, _scalar_msg(_item(a[()]), _item(b[()]), rtol, atol))
    fa, fb, fm = a.reshape(-1), b.reshape(-1), matches.reshape(-1)
    if fa.dtype.kind in "biu":
        fa, fb = fa.astype(np.int64), fb.astype(np.int64)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        abs_diff = np.abs(fa - fb)
        abs_diff[fm] = 0
        if fa.dtype.kind in "biu":  # PyTorch's true division of integers: the default dtype
            real = D.get_default_dtype().np
            rel_diff = abs_diff.astype(real) / np.abs(fb).astype(real)
        else:
            rel_diff = abs_diff / np.abs(fb)
        rel_diff[fm] = 0
    ai, ri = int(np.argmax(abs_diff)), int(np.argmax(rel_diff))
    total = fm.size - int(np.sum(fm))
    extra = f"Mismatched elements: {total} / {fm.size} ({total / fm.size:.1%})"
    raise _Mismatch(
        AssertionError,
        _mismatch_msg(
            "Tensor-likes",
            extra,
            _item(abs_diff[ai]),
            tuple(int(i) for i in np.unravel_index(ai, a.shape)),
            atol,
            _item(rel_diff[ri]),
            tuple(int(i) for i in np.unravel_index(ri, a.shape)),
            rtol,
        ),
    )


def _attribute(name, a, b) -> None:
    raise _Mismatch(AssertionError, f"The values for attribute '{name}' do not match: {a} != {b}.")


def _compare_tensors(actual, expected, rtol, atol, equal_nan, check) -> None:
    from . import Size, promote_types

    numpy_pair = isinstance(actual, np.ndarray)
    shape_a, shape_b = tuple(actual.shape), tuple(expected.shape)
    if shape_a != shape_b:
        _attribute("shape", Size(shape_a), Size(shape_b))
    if numpy_pair:
        names = [str(actual.dtype), str(expected.dtype)]
        if check["dtype"] and actual.dtype != expected.dtype:
            _attribute("dtype", actual.dtype, expected.dtype)
        a, b = actual, expected
        if a.dtype != b.dtype:
            common = np.result_type(a.dtype, b.dtype)
            a, b = a.astype(common), b.astype(common)
    else:
        if check["device"] and actual.device != expected.device:
            _attribute("device", actual.device, expected.device)
        if check["dtype"] and actual.dtype is not expected.dtype:
            _attribute("dtype", actual.dtype, expected.dtype)
        if check["stride"] and actual.stride() != expected.stride():
            _attribute("stride()", actual.stride(), expected.stride())
        names = [
            str(actual.dtype).removeprefix("torch."),
            str(expected.dtype).removeprefix("torch."),
        ]
        common = promote_types(actual.dtype, expected.dtype)
        a = np.asarray(actual.detach().to(common)._data)
        b = np.asarray(expected.detach().to(common)._data)
    rtol, atol = _tolerances(names, rtol, atol)
    _compare_arrays(a, b, rtol, atol, equal_nan)


def _compare_numbers(actual, expected, rtol, atol, equal_nan, check) -> None:
    if isinstance(actual, bool) and isinstance(expected, bool):
        if actual is not expected:
            raise _Mismatch(AssertionError, f"Booleans mismatch: {actual} is not {expected}")
        return
    if check["dtype"] and type(actual) is not type(expected):
        raise _Mismatch(
            AssertionError, f"The (d)types do not match: {type(actual)} != {type(expected)}."
        )
    rtol, atol = _tolerances(
        [_NUMBER_DTYPES[type(actual)], _NUMBER_DTYPES[type(expected)]], rtol, atol
    )
    if actual == expected:
        return
    if equal_nan and actual != actual and expected != expected:  # both NaN
        return
    a = complex(actual) if isinstance(actual, complex) or isinstance(expected, complex) else actual
    b = complex(expected) if isinstance(a, complex) else expected
    if abs(a - b) <= atol + rtol * abs(b):
        return
    raise _Mismatch(AssertionError, _scalar_msg(actual, expected, rtol, atol))


def _is_number(v) -> bool:
    return type(v) in _NUMBER_DTYPES


def _is_sequence(v) -> bool:
    return isinstance(v, collections.abc.Sequence) and not isinstance(v, str)


def _no_pair(actual, expected):
    def name(v):
        return "<class 'torch.Tensor'>" if isinstance(v, Tensor) else str(type(v))

    return TypeError(
        f"No comparison pair was able to handle inputs of type {name(actual)} and {name(expected)}."
    )


def _compare(actual, expected, where: str, options: dict) -> None:
    rtol, atol, equal_nan, check = (
        options["rtol"],
        options["atol"],
        options["equal_nan"],
        options["check"],
    )
    if _is_sequence(actual) and _is_sequence(expected):
        if len(actual) != len(expected):
            raise _Mismatch(
                AssertionError,
                f"The length of the sequences mismatch: {len(actual)} != {len(expected)}",
                where_suffix(where),
            )
        for i, (a, b) in enumerate(zip(actual, expected)):
            _compare(a, b, f"{where}[{i}]", options)
        return
    if isinstance(actual, collections.abc.Mapping) and isinstance(
        expected, collections.abc.Mapping
    ):
        ka, kb = set(actual.keys()), set(expected.keys())
        if ka != kb:
            msg = "The keys of the mappings do not match:\n"
            missing, extra = kb - ka, ka - kb
            if missing:
                msg += f"Missing keys in the actual mapping: {sorted(missing)}\n"
            if extra:
                msg += f"Additional keys in the actual mapping: {sorted(extra)}"
            raise _Mismatch(AssertionError, msg.strip(), where_suffix(where))
        for key in sorted(ka) if all(isinstance(k, str) for k in ka) else ka:
            _compare(actual[key], expected[key], f"{where}[{key!r}]", options)
        return
    try:
        if actual is None or expected is None:
            if not (actual is None and expected is None):
                raise _Mismatch(AssertionError, f"None mismatch: {actual} is not {expected}")
        elif isinstance(actual, Tensor) and isinstance(expected, Tensor):
            _compare_tensors(actual, expected, rtol, atol, equal_nan, check)
        elif isinstance(actual, np.ndarray) and isinstance(expected, np.ndarray):
            _compare_tensors(actual, expected, rtol, atol, equal_nan, check)
        elif _is_number(actual) and _is_number(expected):
            _compare_numbers(actual, expected, rtol, atol, equal_nan, check)
        else:
            raise _no_pair(actual, expected)
    except _Mismatch as m:
        raise _Mismatch(m.kind, m.msg, where_suffix(where)) from None


def where_suffix(where: str) -> str:
    return f"\n\nThe failure occurred for item {where}" if where else ""


def assert_close(
    actual: Any,
    expected: Any,
    *,
    allow_subclasses: bool = True,
    rtol: float | None = None,
    atol: float | None = None,
    equal_nan: bool = False,
    check_device: bool = True,
    check_dtype: bool = True,
    check_layout: bool = True,
    check_stride: bool = False,
    msg: str | Any = None,
) -> None:
    """Assert that ``actual`` and ``expected`` are close (PyTorch's ``assert_close``)."""
    if (rtol is None) ^ (atol is None):
        _tolerances([], rtol, atol)  # raises PyTorch's ValueError
    options = {
        "rtol": rtol,
        "atol": atol,
        "equal_nan": equal_nan,
        "check": {"device": check_device, "dtype": check_dtype, "stride": check_stride},
    }
    try:
        _compare(actual, expected, "", options)
    except _Mismatch as m:
        text = m.msg + m.suffix
        if callable(msg):
            text = msg(m.msg)
        elif msg is not None:
            text = msg
        raise m.kind(text) from None


def assert_allclose(actual, expected, rtol=None, atol=None, equal_nan=True, msg="") -> None:
    """PyTorch's deprecated ``assert_allclose``: ``assert_close`` without the dtype check, the
    expected value converted to the actual's kind."""
    warnings.warn(
        "`torch.testing.assert_allclose()` is deprecated since 1.12 and will be removed in a "
        "future release. Please use `torch.testing.assert_close()` instead. You can find detailed "
        "upgrade instructions in https://github.com/pytorch/pytorch/issues/61844.",
        FutureWarning,
        stacklevel=2,
    )
    if not isinstance(actual, Tensor):
        from . import tensor

        actual = tensor(actual)
    if not isinstance(expected, Tensor):
        from . import tensor

        expected = tensor(expected, dtype=actual.dtype)
    if rtol is None and atol is None:
        names = [str(t.dtype).removeprefix("torch.") for t in (actual, expected)]
        pairs = [_ALLCLOSE_PRECISIONS.get(n, (0.0, 0.0)) for n in names]
        rtol, atol = max(p[0] for p in pairs), max(p[1] for p in pairs)
    assert_close(
        actual,
        expected,
        rtol=rtol,
        atol=atol,
        equal_nan=equal_nan,
        check_device=True,
        check_dtype=False,
        check_stride=False,
        msg=msg or None,
    )


def _low_high(dtype, low, high, lowest, highest, default_low, default_high, integral):
    """PyTorch's checks and clamping of ``make_tensor``'s ``low`` and ``high``."""
    low = default_low if low is None else low
    high = default_high if high is None else high
    if any(isinstance(v, float) and math.isnan(v) for v in (low, high)):
        raise ValueError(f"`low` and `high` cannot be NaN, but got {low=} and {high=}")
    if low == high and not integral:
        warnings.warn(
            "Passing `low==high` to `torch.testing.make_tensor` for floating or complex types "
            "is deprecated since 2.1 and will be removed in 2.3. Use `torch.full(...)` instead.",
            FutureWarning,
            stacklevel=3,
        )
    elif low >= high:
        raise ValueError(f"`low` must be less than `high`, but got {low} >= {high}")
    elif high < lowest or low >= highest:
        raise ValueError(
            f"The value interval specified by `low` and `high` is [{low}, {high}), "
            f"but {dtype} only supports [{lowest}, {highest})"
        )
    low, high = min(max(low, lowest), highest), min(max(high, lowest), highest)
    if integral:
        return math.ceil(low), math.ceil(high)
    return low, high


def make_tensor(
    *shape,
    dtype,
    device,
    low=None,
    high=None,
    requires_grad: bool = False,
    noncontiguous: bool = False,
    exclude_zero: bool = False,
    memory_format=None,
) -> Tensor:
    """``torch.testing.make_tensor``: values drawn uniformly from ``[low, high)`` (defaults by
    dtype), PyTorch's algorithm step for step, so after the same seed it gives PyTorch's values
    (leafgrad's generator reproduces PyTorch's numbers)."""
    from . import empty, finfo, iinfo, randint, view_as_real

    if len(shape) == 1 and isinstance(shape[0], collections.abc.Sequence):
        shape = shape[0]
    shape = tuple(shape)
    dtype = D.to_dtype(dtype)
    integral = dtype is D.bool_ or dtype._kind in "iu"
    if noncontiguous and memory_format is not None:
        raise ValueError(
            "The parameters `noncontiguous` and `memory_format` are mutually exclusive, "
            f"but got {noncontiguous=} and {memory_format=}"
        )
    if requires_grad and integral:
        raise ValueError(
            "`requires_grad=True` is not supported for boolean and integral dtypes, but got "
            f"dtype={dtype}"
        )
    numel = 1
    for n in shape:
        numel *= n
    noncontiguous = noncontiguous and numel > 1
    if noncontiguous:
        shape = (*shape[:-1], 2 * shape[-1])
    if dtype is D.bool_:
        lo, hi = _low_high(dtype, low, high, 0, 2, 0, 2, True)
        result = randint(lo, hi, shape, device=device, dtype=dtype)
    elif integral:
        info = iinfo(dtype)
        top = info.max + (1 if dtype is not D.int64 else 0)
        lo, hi = _low_high(dtype, low, high, info.min, top, -9, 10, True)
        result = randint(lo, hi, shape, device=device, dtype=dtype)
    elif dtype.is_floating_point or dtype.is_complex:
        info = finfo(dtype)
        lo, hi = _low_high(dtype, low, high, info.min, info.max, -9, 9, False)
        result = empty(shape, device=device, dtype=dtype)
        target = view_as_real(result) if dtype.is_complex else result
        if hi - lo >= finfo(target.dtype).max:
            target.uniform_(lo / 2, hi / 2).mul_(2)
        else:
            target.uniform_(lo, hi)
    else:
        raise TypeError(
            f"The requested dtype '{dtype}' is not supported by torch.testing.make_tensor()."
            " To request support, file an issue at: https://github.com/pytorch/pytorch/issues"
        )
    if noncontiguous:
        result = result[..., 1::2]
    elif memory_format is not None:
        result = result.clone(memory_format=memory_format)
    if exclude_zero:
        result[result == 0] = 1 if integral else finfo(dtype).tiny
    if dtype.is_floating_point or dtype.is_complex:
        result.requires_grad = requires_grad
    return result
