"""``leafgrad.testing.assert_close`` (and the deprecated ``assert_allclose``): the same verdicts,
exception types and messages as ``torch.testing`` on the same inputs; ``make_tensor``'s shapes,
dtypes and ranges."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
from conftest import lg


def _cases(m):
    T, t = m.testing.assert_close, m.tensor
    return {
        "middle": lambda: T(t([1.0, 2.0, 3.0]), t([1.0, 2.5, 3.0])),
        "2d": lambda: T(t([[1.0, 2.0], [3.0, 4.0]]), t([[1.0, 2.0], [3.0, 4.1]])),
        "0d": lambda: T(t(1.0), t(1.1)),
        "ints": lambda: T(t([1, 2]), t([1, 3])),
        "ints_2d": lambda: T(t([[1, 2], [3, 4]]), t([[1, 2], [5, 4]])),
        "dtype": lambda: T(t([1.0, 2.0]), t([1.0, 2.0], dtype=m.float64)),
        "shape": lambda: T(t([1.0, 2.0]), t([1.0, 2.0, 3.0])),
        "nan": lambda: T(t([1.0, float("nan")]), t([1.0, float("nan")])),
        "nan_equal": lambda: T(t([1.0, float("nan")]), t([1.0, float("nan")]), equal_nan=True),
        "inf": lambda: T(t([1.0, float("inf")]), t([1.0, float("inf")])),
        "floats": lambda: T(1.0, 1.1),
        "float_close": lambda: T(1.0, 1.0 + 1e-9),
        "float_nan": lambda: T(float("nan"), float("nan")),
        "float_nan_equal": lambda: T(float("nan"), float("nan"), equal_nan=True),
        "int_float": lambda: T(1, 1.0),
        "int_int": lambda: T(1, 2),
        "bools": lambda: T(True, False),
        "complex_numbers": lambda: T(1 + 2j, 1 + 2.5j),
        "list": lambda: T([t(1.0), t(2.0)], [t(1.0), t(2.2)]),
        "nested": lambda: T([[1.0, 2.0], [3.0, 4.0]], [[1.0, 2.0], [3.0, 4.5]]),
        "tuple_list": lambda: T((1.0,), [1.0]),
        "lengths": lambda: T([1.0, 2.0], [1.0, 2.0, 3.0]),
        "dict": lambda: T({"a": t(1.0)}, {"a": t(1.5)}),
        "dict_keys": lambda: T({"a": 1.0}, {"b": 1.0}),
        "dict_nested": lambda: T(
            {"a": [t(1.0), {"b": t([1.0, 2.0])}]}, {"a": [t(1.0), {"b": t([1.0, 2.5])}]}
        ),
        "none": lambda: T(None, None),
        "none_number": lambda: T(None, 1.0),
        "tensor_list": lambda: T(t([1.0, 2.0]), [1.0, 2.0]),
        "tensor_number": lambda: T(t([1.0]), 1.0),
        "tensor_numpy": lambda: T(t([1.0]), np.ones(1)),
        "numpy": lambda: T(np.ones(2), np.ones(2) * 1.1),
        "strings": lambda: T("a", "a"),
        "tolerances": lambda: T(t([1.0, 2.0]), t([1.0, 2.1]), rtol=0, atol=0.2),
        "rtol_only": lambda: T(t([1.0, 2.0]), t([1.0, 2.1]), rtol=0.1),
        "msg": lambda: T(t([1.0, 2.0]), t([1.0, 2.1]), msg="custom"),
        "msg_callable": lambda: T(m.ones(2), m.ones(2) * 2, msg=lambda s: "X" + s[:5]),
        "bool_tensors": lambda: T(t([True, False]), t([True, True])),
        "check_dtype_off": lambda: T(
            t([1.0, 2.0]), t([1.0, 2.0], dtype=m.float64), check_dtype=False
        ),
        "check_dtype_off_mismatch": lambda: T(
            t([1.0, 2.0], dtype=m.float64), t([1.0, 2.5]), check_dtype=False
        ),
        "requires_grad": lambda: T(t([1.0, 2.0], requires_grad=True), t([1.0, 2.0])),
        "zeros": lambda: T(t([0.0, 0.0]), t([0.0, 1e-3])),
        "tiny": lambda: T(t([1e-9, 0.0]), t([0.0, 1e-9])),
        "stride": lambda: T(m.ones(2, 2), m.ones(2, 2).t(), check_stride=True),
        "complex_tensors": lambda: T(t([1 + 1j]), t([1 + 2j])),
        "int32_int64": lambda: T(t([1, 2], dtype=m.int32), t([1, 2])),
        "uint8_promoted": lambda: T(t([5]), t([5], dtype=m.uint8), check_dtype=False),
        "half": lambda: T(t([1.0, 2.0], dtype=m.float16), t([1.0, 2.01], dtype=m.float16)),
        "bfloat16": lambda: T(t([1.0, 2.0], dtype=m.bfloat16), t([1.0, 2.1], dtype=m.bfloat16)),
        "allclose": lambda: m.testing.assert_allclose(t([1.0, 2.0]), [1.0, 2.5]),
        "allclose_ok": lambda: m.testing.assert_allclose(t([1.0, 2.0]), [1.0, 2.0001]),
    }


def _run(m, name):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            _cases(m)[name]()
            out = "passed"
        except Exception as exc:  # noqa: BLE001
            out = (type(exc).__name__, str(exc))
    return out, [(w.category.__name__, str(w.message)) for w in caught]


@pytest.mark.parametrize("name", sorted(_cases(torch)))
def test_assert_close_matches_torch(name):
    assert _run(lg, name) == _run(torch, name)


MAKE_TENSOR = {
    "float32": dict(dtype="float32"),
    "float64_range": dict(dtype="float64", low=-1, high=1),
    "complex64": dict(dtype="complex64"),
    "int64": dict(dtype="int64"),
    "uint8": dict(dtype="uint8"),
    "bool": dict(dtype="bool"),
    "int8_clamped": dict(dtype="int8", low=-200),
    "float32_clamped": dict(dtype="float32", low=-1e40),
    "noncontiguous": dict(dtype="float32", noncontiguous=True),
    "exclude_zero_float": dict(dtype="float32", exclude_zero=True, low=0, high=1),
    "exclude_zero_int": dict(dtype="int32", exclude_zero=True),
    "low_above_high": dict(dtype="float32", low=5, high=2),
    "nan_low": dict(dtype="float32", low=float("nan")),
    "int_requires_grad": dict(dtype="int64", requires_grad=True),
    "requires_grad": dict(dtype="float32", requires_grad=True),
    "channels_last": dict(dtype="float32", memory_format="channels_last"),
    "low_equals_high": dict(dtype="float16", low=2, high=2),
}


@pytest.mark.parametrize("name", sorted(MAKE_TENSOR))
def test_make_tensor_gives_pytorchs_values(name):
    def run(m):
        kw = dict(MAKE_TENSOR[name])
        kw["dtype"] = getattr(m, kw["dtype"])
        if "memory_format" in kw:
            kw["memory_format"] = getattr(m, kw["memory_format"])
        shape = (2, 3, 2, 2) if "memory_format" in kw else (3, 4)
        m.manual_seed(0)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                r = m.testing.make_tensor(*shape, device="cpu", **kw)
                out = (r.tolist(), str(r.dtype), r.stride(), r.requires_grad)
            except Exception as exc:  # noqa: BLE001
                out = (type(exc).__name__, str(exc))
        return out, [w.category.__name__ for w in caught]

    assert run(lg) == run(torch)
