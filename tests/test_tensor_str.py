"""Differential tests: leafgrad._tensor_str must print exactly what PyTorch 2.13's repr prints."""

from __future__ import annotations

import math
import time

import ml_dtypes
import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from leafgrad import _dtype as D
from leafgrad import _tensor_str as S
from leafgrad._tensor_str import format_tensor, get_printoptions, printoptions, set_printoptions

TORCH_TO_LG = {
    torch.bool: D.bool_,
    torch.uint8: D.uint8,
    torch.int8: D.int8,
    torch.int16: D.int16,
    torch.int32: D.int32,
    torch.int64: D.int64,
    torch.float16: D.float16,
    torch.bfloat16: D.bfloat16,
    torch.float32: D.float32,
    torch.float64: D.float64,
    torch.complex64: D.complex64,
    torch.complex128: D.complex128,
}
ALL_DTYPES = list(TORCH_TO_LG)
FLOAT_DTYPES = [torch.float16, torch.bfloat16, torch.float32, torch.float64]
NAN, INF = math.nan, math.inf


@pytest.fixture(autouse=True)
def _restore_defaults():
    """Every test starts and ends with default print options and default dtype on both sides."""
    torch.set_printoptions(profile="default")
    set_printoptions(profile="default")
    yield
    torch.set_printoptions(profile="default")
    set_printoptions(profile="default")
    torch.set_default_dtype(torch.float32)
    D.set_default_dtype(D.float32)


def host(t: torch.Tensor) -> np.ndarray:
    """The tensor's values as the numpy array leafgrad's Tensor would hand over."""
    t = t.detach()
    if t.dtype == torch.bfloat16:
        # Exact both ways: every bfloat16 is a float32.
        return t.float().numpy().astype(ml_dtypes.bfloat16)
    return t.numpy()


def ours(t: torch.Tensor, **kwargs) -> str:
    grad_fn = type(t.grad_fn).__name__ if t.grad_fn is not None else None
    kwargs.setdefault("device", "cpu")
    return format_tensor(
        host(t),
        dtype=TORCH_TO_LG[t.dtype],
        requires_grad=t.requires_grad,
        grad_fn_name=grad_fn,
        **kwargs,
    )


def check(t: torch.Tensor) -> None:
    assert ours(t) == repr(t)


def both_options(**kwargs) -> None:
    torch.set_printoptions(**kwargs)
    set_printoptions(**kwargs)


def random_tensor(shape, dtype, scale: float = 1.0, seed: int = 0) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(shape, generator=g, dtype=torch.float64) * scale
    if dtype.is_complex:
        y = torch.randn(shape, generator=g, dtype=torch.float64) * scale
        return torch.complex(x, y).to(dtype)
    if dtype == torch.bool:
        return x > 0
    if not dtype.is_floating_point:
        info = torch.iinfo(dtype)
        return x.round().clamp(info.min, info.max).to(dtype)
    return x.to(dtype)


# --- known outputs -------------------------------------------------------------------------------


def test_seed_outputs():
    vals = [0.9817, 0.9880, 0.8879, 0.3911, 0.8532, 0.2367, 0.6074, 0.6374, 0.7830, 0.1322]
    assert format_tensor(
        np.array(vals, np.float32), dtype=D.float32, device="cpu", requires_grad=True
    ) == (
        "tensor([0.9817, 0.9880, 0.8879, 0.3911, 0.8532, 0.2367, 0.6074, 0.6374, 0.7830,\n"
        "        0.1322], requires_grad=True)"
    )
    kw = {"dtype": D.float32, "device": "cpu", "requires_grad": True}
    assert (
        format_tensor(np.float32(0.0585), grad_fn_name="MeanBackward0", **kw)
        == "tensor(0.0585, grad_fn=<MeanBackward0>)"
    )
    assert (
        format_tensor(np.array(1182591.0, np.float32), grad_fn_name="MulBackward0", **kw)
        == "tensor(1182591., grad_fn=<MulBackward0>)"
    )
    assert (
        format_tensor(np.array(17738864.0, np.float32), grad_fn_name="MulBackward0", **kw)
        == "tensor(17738864., grad_fn=<MulBackward0>)"
    )


# --- dtypes x shapes x magnitudes ----------------------------------------------------------------

SHAPES = [(), (0,), (0, 3), (5,), (3, 5), (2, 3, 4), (2, 0, 3), (30,), (1, 1, 1, 7)]
BIG_SHAPES = [(2000,), (40, 40), (3, 400, 2), (1001,), (7, 7, 7, 7)]


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
@pytest.mark.parametrize("shape", SHAPES + BIG_SHAPES, ids=str)
def test_dtype_shape(dtype, shape):
    for i, scale in enumerate([1e-6, 1.0, 1e3, 1e10]):
        check(random_tensor(shape, dtype, scale, seed=i))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES + [torch.complex64, torch.complex128], ids=str)
@pytest.mark.parametrize(
    "values",
    [
        [0.0],
        [-0.0],
        [-0.0, 1.0],
        [-0.0, 0.5],
        [NAN],
        [INF, -INF, NAN],
        [1.0, NAN],
        [100.0, -INF],
        [0.0, 1e-5],
        [1e-4, 1.0],
        [1e-5, 1.0],
        [999.0, 1.0],
        [1001.0, 1.0],
        [0.1, 100.0],
        [0.1, 100.1],
        [1e8],
        [1.5e8],
        [123456789.0],
        [1182591.0, -3.0],
        [1e20, NAN],
        [-1e-30, 3.0, 0.0, INF],
        [0.00012345, 0.0004],
        [65504.0, -65504.0, 6e-8],
        [1.0, 2.0, 3.0, 1e5],
        [0.5, 0.25, -0.125],
        [9.99995, 1.0],
        [-9.99995e-5, 1.0],
        [1e300, 1e-300],
        [5e-324, 1.0],
    ],
    ids=str,
)
def test_special_values(dtype, values):
    t = torch.tensor(values, dtype=torch.float64)
    with np.errstate(over="ignore"):
        t = t.to(dtype)
    check(t)
    check(t[0])
    check(t.reshape(1, -1))
    if dtype.is_complex:
        check(torch.complex(t.real, t.real.flip(0)).to(dtype))
        check(t * 1j)


def test_complex_signs():
    check(torch.tensor([1 + 2j, complex(-0.0, -0.0), complex(0.0, -0.0), complex(1, NAN)]))
    check(torch.tensor([complex(INF, -INF), complex(-1.5, 2.25), 3j]))
    check(torch.tensor(complex(-0.0, -1.0), dtype=torch.complex128))
    check(torch.tensor([[1e-8 + 1j, 5 - 1e9j]], dtype=torch.complex64))


@pytest.mark.parametrize("dtype", [torch.int8, torch.int64, torch.uint8, torch.bool], ids=str)
def test_integers_and_bools(dtype):
    info_vals = {
        torch.int8: [-128, 127, 0, 5],
        torch.int64: [-(2**63), 2**63 - 1, 0],
        torch.uint8: [0, 255, 7],
        torch.bool: [True, False, True],
    }[dtype]
    t = torch.tensor(info_vals, dtype=dtype)
    check(t)
    check(t.repeat(40))
    check(t.repeat(500))
    check(torch.ones(3, 4, dtype=dtype))


def test_wrapping_rows():
    check(torch.linspace(-50, 50, 97))
    check(torch.arange(120.0).reshape(2, 60) / 7)
    check(torch.arange(300).reshape(3, 100))
    check(torch.arange(64, dtype=torch.float64).reshape(2, 2, 16) * 1e-7)
    check((torch.arange(60.0) * (1 + 1j)).reshape(2, 30))


# --- suffixes ------------------------------------------------------------------------------------


def test_grad_suffixes():
    a = torch.linspace(0.1, 3.3, 10, requires_grad=True)
    b = torch.arange(24.0).reshape(4, 6).requires_grad_()
    c = torch.randn(5, 5, dtype=torch.float64, requires_grad=True)
    for t in [
        a,
        a.mean(),
        a * 3,
        a + a,
        a.sum(),
        a.pow(2),
        a.exp(),
        a.reshape(2, 5),
        b.t(),
        b[1:3],
        b @ b.t(),
        c,
        c.sin(),
        c.sum(0).to(torch.float32),
        torch.nn.functional.relu(c),
    ]:
        check(t)


def test_suffix_wrapping():
    # Rows that end near the line width push dtype/grad suffixes onto their own lines.
    for n in range(5, 14):
        for dtype in [torch.float64, torch.float16, torch.int32, torch.complex128]:
            t = (torch.arange(n, dtype=torch.float64) * 3).to(dtype)
            check(t)
            if dtype.is_floating_point or dtype.is_complex:
                check(t.requires_grad_())
                check(t * 2)
    for width in [40, 50, 60, 70, 74, 75, 76, 77, 78, 79, 81]:
        both_options(linewidth=width)
        check(torch.arange(9, dtype=torch.float64).requires_grad_() * 1.5)
        check(torch.tensor(1.0, dtype=torch.float16, requires_grad=True))
        check(torch.arange(4.0).reshape(2, 2).double().requires_grad_() + 1)


def test_empty_tensors():
    for dtype in ALL_DTYPES:
        for shape in [(0,), (0, 3), (2, 0, 3), (3, 0)]:
            check(torch.zeros(shape, dtype=dtype))
    check(torch.zeros(0, 2, requires_grad=True))
    check(torch.zeros(0, 2, requires_grad=True) * 2)


def test_default_dtype_float64():
    torch.set_default_dtype(torch.float64)
    D.set_default_dtype(D.float64)
    for dtype in [torch.float32, torch.float64, torch.complex64, torch.complex128, torch.int64]:
        check(random_tensor((3,), dtype))
        check(torch.zeros(0, dtype=dtype))


def torch_with_suffixes(t: torch.Tensor, suffixes: list[str]) -> str:
    """PyTorch's own layout code for suffixes it cannot produce here (no CUDA in this build)."""
    body = torch._tensor_str._tensor_str(t.detach(), 7)
    return torch._tensor_str._add_suffixes("tensor(" + body, suffixes, 7, False)


def test_device_suffix():
    t = torch.arange(12.0).reshape(3, 4) / 3
    assert ours(t, device="cuda:0") == torch_with_suffixes(t, ["device='cuda:0'"])
    long = torch.arange(9, dtype=torch.float64) / 7
    expected = torch_with_suffixes(
        long, ["device='cuda:1'", "dtype=torch.float64", "requires_grad=True"]
    )
    assert ours(long.requires_grad_(), device="cuda:1") == expected
    # The device suffix comes before size/dtype, also for empty tensors.
    empty = format_tensor(np.zeros((0, 3), np.int32), dtype=D.int32, device="cuda:0")
    assert empty == "tensor([], device='cuda:0', size=(0, 3), dtype=torch.int32)"
    # Rule of torch._tensor_str._str_intern: printed unless it is the default device type (and,
    # for CUDA, the current device).
    assert S._shows_device("cpu", "cpu") is False
    assert S._shows_device("cuda:0", "cpu") is True
    assert S._shows_device("cuda:0", "cuda") is False
    assert S._shows_device("cuda:1", "cuda") is True
    assert S._shows_device("mps:0", "cpu") is True
    assert S._shows_device("cpu", "cuda") is True


def test_parameter_prefix_and_inference():
    for t in [torch.arange(30.0) / 7, torch.ones(2, 3), torch.tensor(2.5)]:
        p = torch.nn.Parameter(t.clone())
        got = ours(p, prefix="Parameter containing:\ntensor(")
        assert got == repr(p)
    with torch.inference_mode():
        t = torch.arange(5.0) * 0.3
    assert t.is_inference()
    assert ours(t, is_inference=True) == repr(t)


# --- print options -------------------------------------------------------------------------------

OPTION_SETS = [
    {"precision": 2},
    {"precision": 8},
    {"precision": 0},
    {"sci_mode": True},
    {"sci_mode": False},
    {"linewidth": 40},
    {"linewidth": 120},
    {"threshold": 5},
    {"threshold": 0},
    {"edgeitems": 1, "threshold": 10},
    {"edgeitems": 0},
    {"profile": "short"},
    {"profile": "full"},
    {"profile": "short", "precision": 6, "sci_mode": True},
]


@pytest.mark.parametrize("opts", OPTION_SETS, ids=str)
def test_printoptions_effects(opts):
    both_options(**opts)
    assert get_printoptions() == torch._tensor_str.get_printoptions()
    for dtype in [torch.float32, torch.float16, torch.int64, torch.complex64, torch.bool]:
        for shape in [(), (7,), (3, 5), (2000,), (3, 400, 2)]:
            for i, scale in enumerate([1e-6, 1.0, 1e10]):
                check(random_tensor(shape, dtype, scale, seed=i))
    check(torch.tensor([1.0, NAN, -0.0, INF]))


def test_set_get_printoptions_semantics():
    assert get_printoptions() == {
        "precision": 4,
        "threshold": 1000,
        "edgeitems": 3,
        "linewidth": 80,
        "sci_mode": None,
    }
    calls = [
        {"sci_mode": True},
        {"precision": 3},  # resets sci_mode to None, as PyTorch does
        {"profile": "full"},
        {"profile": "short", "linewidth": 100},
        {"profile": "nonsense"},
        {"threshold": 7, "edgeitems": 1},
        {"profile": "default"},
    ]
    for kwargs in calls:
        both_options(**kwargs)
        assert get_printoptions() == torch._tensor_str.get_printoptions()

    both_options(precision=6, sci_mode=False)
    with (
        printoptions(precision=2, sci_mode=True),
        torch._tensor_str.printoptions(precision=2, sci_mode=True),
    ):
        assert get_printoptions() == torch._tensor_str.get_printoptions()
        check(torch.tensor([1.2345, 6.789]))
    assert get_printoptions()["precision"] == 6
    assert get_printoptions()["sci_mode"] is False
    with pytest.raises(RuntimeError), printoptions(precision=1):
        raise RuntimeError
    assert get_printoptions()["precision"] == 6


# --- size and speed ------------------------------------------------------------------------------


def test_huge_tensor_reads_only_summarised_data():
    # A broadcast view of 10^8 elements: converting or scanning it all would take seconds.
    row = np.arange(10_000, dtype=np.float32) / 3
    values = np.broadcast_to(row, (10_000, 10_000))
    start = time.perf_counter()
    got = format_tensor(values, dtype=D.float32, device="cpu")
    assert time.perf_counter() - start < 0.5
    assert got == repr(torch.from_numpy(row).expand(10_000, 10_000))

    t = random_tensor((1_000_000,), torch.float32)
    start = time.perf_counter()
    got = ours(t)
    assert time.perf_counter() - start < 0.5
    assert got == repr(t)


# --- property test -------------------------------------------------------------------------------


@st.composite
def tensors(draw):
    dtype = draw(st.sampled_from(ALL_DTYPES))
    ndim = draw(st.integers(0, 4))
    shape = tuple(draw(st.lists(st.integers(0, 9), min_size=ndim, max_size=ndim)))
    if draw(st.booleans()) and ndim:
        axis = draw(st.integers(0, ndim - 1))
        shape = shape[:axis] + (draw(st.integers(10, 1500)),) + shape[axis + 1 :]
    exponent = draw(st.integers(-12, 12))
    seed = draw(st.integers(0, 2**16))
    t = random_tensor(shape, dtype, 10.0**exponent, seed)
    if (t.dtype.is_floating_point or t.dtype.is_complex) and t.numel():
        mode = draw(st.sampled_from(["plain", "round", "specials", "mixed"]))
        flat = t.reshape(-1)
        if mode == "round":
            flat = flat.round() if t.dtype.is_floating_point else flat.real.round() * (1 + 1j)
        elif mode == "specials":
            idx = torch.randint(
                0, flat.numel(), (3,), generator=torch.Generator().manual_seed(seed)
            )
            flat = flat.clone()
            flat[idx] = torch.tensor([NAN, -INF, -0.0], dtype=torch.float64).to(flat.dtype)
        elif mode == "mixed":
            scales = 10.0 ** torch.linspace(-8, 8, flat.numel(), dtype=torch.float64)
            flat = flat.to(torch.complex128 if t.dtype.is_complex else torch.float64) * scales
            flat = flat.to(t.dtype)
        t = flat.reshape(shape)
    if draw(st.booleans()) and (t.dtype.is_floating_point or t.dtype.is_complex):
        t = t.requires_grad_() * 1 if draw(st.booleans()) else t.requires_grad_()
    return t


@st.composite
def option_sets(draw):
    return {
        "precision": draw(st.sampled_from([None, 0, 1, 2, 4, 8])),
        "threshold": draw(st.sampled_from([None, 0, 10, 100, 1000])),
        "edgeitems": draw(st.sampled_from([None, 0, 1, 2, 3, 5])),
        "linewidth": draw(st.sampled_from([None, 20, 40, 80, 120])),
        "sci_mode": draw(st.sampled_from([None, True, False])),
    }


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(t=tensors(), opts=option_sets())
def test_property_matches_torch(t, opts):
    try:
        both_options(**opts)
        check(t)
    finally:
        both_options(profile="default")
