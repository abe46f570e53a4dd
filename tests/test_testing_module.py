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


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "uint8", "bool", "complex64"])
def test_make_tensor(dtype):
    d = getattr(lg, dtype)
    x = lg.testing.make_tensor(3, 4, dtype=d, device="cpu", low=-2, high=3)
    assert x.shape == (3, 4) and x.dtype is d
    if dtype not in ("bool", "complex64"):
        assert float(x.min()) >= (0 if dtype == "uint8" else -2) and float(x.max()) < 3 + 1e-6
    y = lg.testing.make_tensor((2, 3), dtype=d, device="cpu", noncontiguous=True)
    assert y.shape == (2, 3) and (not y.is_contiguous() or dtype == "bool")
    z = lg.testing.make_tensor(5, dtype=d, device="cpu", exclude_zero=True)
    if dtype != "bool":
        assert bool((z != 0).all())
