"""PyTorch's CPU random number generator, reproduced bit for bit on the host with numpy.

``Generator`` holds the same state as PyTorch's ``CPUGeneratorImpl`` (an mt19937 engine seeded
with ``init_with_uint32`` plus the cached second Box-Muller sample) and serialises it to the same
5056 bytes. The sampling functions consume that state exactly as PyTorch 2.13's CPU kernels do
(``aten/src/ATen/native/cpu/DistributionTemplates.h``, ``core/DistributionsHelper.h``,
``core/TransformationHelper.h``, ``native/TensorFactories.cpp``) and return numpy arrays; the
caller wraps them into tensors.

Where PyTorch's numbers depend on the machine, this module follows PyTorch's x86-64 Linux
wheels (GCC, which fuses ``a * b + c`` into one FMA wherever it can):

- float32/float16/bfloat16 ``normal`` of 16 or more elements runs the AVX2 kernel
  (``avx_mathfun.h``'s polynomial ``log``/``sincos``); it is emulated here operation by
  operation in numpy, so these numbers are the same on every host (PyTorch itself computes
  them differently on ARM and on x86 CPUs without AVX2).
- float64 ``normal`` and every ``normal`` of fewer than 16 elements call the C library's
  ``log``/``log1p``/``sin``/``cos``; they are called here through Python's ``math`` module, so
  they match PyTorch on the same machine (glibc on Linux).
- ``bernoulli`` with a scalar ``p`` and ``exponential_`` run the same mt19937 kernels on every
  CPU. Older x86 builds (up to 2.4) drew them from an MKL stream on Intel CPUs; PyTorch 2.13's
  wheels have no MKL random-number path (no VSL stream functions are linked in), and on Intel
  hosts they give exactly the default kernels' numbers, which is what is reproduced here.
"""

from __future__ import annotations

import functools
import math
import operator
import os
import threading
import warnings
from collections.abc import Sequence
from fractions import Fraction
from typing import Any, NamedTuple

import ml_dtypes
import numpy as np

__all__ = [
    "DEFAULT_SEED",
    "STATE_SIZE",
    "Generator",
    "bernoulli",
    "bernoulli_tensor",
    "cauchy",
    "default_generator",
    "exponential",
    "fill_in_order",
    "geometric",
    "iteration_order",
    "log_normal",
    "multinomial",
    "normal",
    "randint",
    "random_",
    "randperm",
    "uniform",
]

DEFAULT_SEED = 67280421310721  # what ``torch.Generator()`` starts with (c10's default_rng_seed_val)
STATE_SIZE = 5056  # sizeof(CPUGeneratorImplState)
INT64_MIN = -(1 << 63)
INT64_MAX = (1 << 63) - 1
_MASK64 = (1 << 64) - 1
_MT_N = 624
# randperm switches to a 64-bit inside-out shuffle from this n on (TensorFactories.cpp).
_RANDPERM_SMALL_LIMIT = 0xFFFFFFFF // 20
# uniform_int_from_to_distribution draws 64 bits once the range reaches 2**28.
_RANGE_64BIT = 1 << 28

# --- PyTorch's messages, byte for byte ----------------------------------------------------------
MANUAL_SEED_TYPE = "manual_seed expected a long, but got {type_name}"
INTEGER_REQUIRED = "an integer is required"
LONG_OVERFLOW = "Overflow when unpacking long long"
STATE_NOT_BYTES = "RNG state must be a torch.ByteTensor"
STATE_SIZE_MISMATCH = (
    "Expected a CPUGeneratorImplState of size {expected} but found the input RNG state size to "
    "be {got}"
)
STATE_INVALID = "Invalid mt19937 state"
NEGATIVE_DIMENSION = "Trying to create tensor with negative dimension {dim}: {shape}"
KERNEL_NOT_IMPLEMENTED = "\"{kernel}\" not implemented for '{dtype}'"
OUT_OF_BOUNDS = "{name} is out of bounds for {dtype}"
OUT_OF_BOUNDS_WARNING = (
    "{name} is out of bounds [-(2^{digits}), 2^{digits}]. Due to precision limitations {dtype} "
    "can support discrete uniform distribution only within this range. This warning will become "
    "an error in version 1.7 release, please fix the code in advance (Triggered internally at "
    "/__w/pytorch/pytorch/aten/src/ATen/native/DistributionTemplates.h:{line}.)"
)
RANDOM_FROM_TO = "random_ expects 'from' to be less than 'to', but got from={frm} >= to={to}"
RANDOM_FROM_TO_CASTED = (
    "random_ expects 'from' casted to dtype to be less than 'to' casted to dtype, but got "
    "from={frm} >= to={to}"
)
RANDOM_FROM_TO_INC_CASTED = (
    "random_ expects 'from' casted to dtype to be less than or equal to 'to_inc' casted to "
    "dtype, but got from={frm} > to_inc={to_inc}"
)
RANDOM_BOUNDS_TYPES = "check_random_bounds handles only integral, floating-point and boolean types"
RANDOM_FROM_TO_TYPES = "random_from_to_impl handles only integral, floating-point and boolean types"
RANDOM_FULL_RANGE_TYPES = (
    "random_full_64_bits_range_kernel_cpu handles only int64, double, float and bfloat16"
)
NORMAL_STD = "normal expects std >= 0.0, but found std {std}"
UNIFORM_RANGE = "uniform_ expects to return a [from, to) range, but found from={frm} > to={to}"
UNIFORM_SPAN = (
    "uniform_ expects to-from <= std::numeric_limits<{scalar}>::max(), but found to={to} and "
    "from={frm} which result in to-from to exceed the limit"
)
TORCH_CHECK_FAILED = (
    "Expected {condition} to be true, but got false.  (Could this error message be improved?  "
    "If so, please report an enhancement request to PyTorch.)"
)
RANDPERM_OVERFLOW = "value cannot be converted to type {ctype} without overflow"
RANDPERM_PRECISION = "n cannot be greater than {limit} for {name} type."
BERNOULLI_P = "bernoulli_ expects p to be in [0, 1], but got p={p}"
BERNOULLI_P_TENSOR_CONDITION = "p_in >= 0 && p_in <= 1"
EXPONENTIAL_LAMBDA = "exponential_ expects lambda > 0.0, but found lambda={lambd}"
GEOMETRIC_P = "geometric_ expects p to be in (0, 1), but got p={p}"
LOG_NORMAL_STD = "log_normal_ expects std > 0.0, but found std={std}"
CAUCHY_SIGMA = "cauchy_ expects sigma > 0.0, but found sigma={sigma}"
MULTINOMIAL_DIM = "prob_dist must be 1 or 2 dim"
MULTINOMIAL_DTYPE = "multinomial only supports floating-point dtypes for input, got: {dtype}"
MULTINOMIAL_N = "cannot sample n_sample <= 0 samples"
MULTINOMIAL_TOO_MANY = "cannot sample n_sample > prob_dist.size(-1) samples without replacement"
MULTINOMIAL_CATEGORIES = "number of categories cannot exceed 2^24"
MULTINOMIAL_INVALID = "probability tensor contains either `inf`, `nan` or element < 0"
MULTINOMIAL_ZERO_SUM = "invalid multinomial distribution (sum of probabilities <= 0)"
MULTINOMIAL_NEGATIVE = "invalid multinomial distribution (encountering probability entry < 0)"
MULTINOMIAL_NOT_FINITE = (
    "invalid multinomial distribution (encountering probability entry = infinity or NaN)"
)
AMINMAX_EMPTY = (
    "aminmax(): cannot compute aminmax over an empty dimension as the operation has no identity."
)
CONTINUOUS_DTYPE = (
    "{name} distribution is a continuous probability distribution. dtype must be a floating "
    "point but you specified {dtype}"
)

# --- leafgrad's own messages (for what is not reproduced) ----------------------------------------
UNSUPPORTED_DTYPE = "leafgrad's random functions do not support dtype {dtype}"
RANDPERM_TOO_LARGE = (
    "randperm(n) for n >= {limit} uses PyTorch's 64-bit inside-out shuffle, which leafgrad does "
    "not reproduce"
)
STATE_OUT_OF_RANGE = (
    "this mt19937 state (left={left}, next={next}) makes PyTorch read past the end of its state "
    "array (undefined behaviour); leafgrad does not reproduce it"
)


def _fmt_double(x: float) -> str:
    """A double as C++'s ``operator<<`` prints it (``%g``, with glibc's ``-nan``)."""
    if math.isnan(x):
        return "-nan" if math.copysign(1.0, x) < 0 else "nan"
    return f"{x:g}"


def not_implemented_for(kernel: str, dtype_name: str) -> str:
    """``AT_DISPATCH``'s message for a dtype the kernel was not compiled for."""
    return KERNEL_NOT_IMPLEMENTED.format(kernel=kernel, dtype=dtype_name)


def torch_check_failed(condition: str) -> str:
    """``TORCH_CHECK(condition)``'s message when it has no text of its own."""
    return TORCH_CHECK_FAILED.format(condition=condition)


# --- dtypes ---------------------------------------------------------------------------------------
class _DType(NamedTuple):
    np: np.dtype
    torch_name: str  # c10::ScalarType name, as in "not implemented for 'Float'"
    cpp_name: str  # caffe2::TypeMeta name, as in "to - 1 is out of bounds for float"
    kind: str  # "float", "int", "bool" or "complex"
    digits: int  # std::numeric_limits<T>::digits (mantissa bits for floats, value bits for ints)
    lowest: float | int
    max: float | int


_BF16 = np.dtype(ml_dtypes.bfloat16)
_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)
_DTYPES = {
    d.np: d
    for d in (
        _DType(np.dtype(np.float16), "Half", "c10::Half", "float", 11, -65504.0, 65504.0),
        _DType(
            _BF16,
            "BFloat16",
            "c10::BFloat16",
            "float",
            8,
            -float(ml_dtypes.finfo(_BF16).max),
            float(ml_dtypes.finfo(_BF16).max),
        ),
        _DType(
            _F32,
            "Float",
            "float",
            "float",
            24,
            -float(np.finfo(np.float32).max),
            float(np.finfo(np.float32).max),
        ),
        _DType(
            _F64,
            "Double",
            "double",
            "float",
            53,
            -float(np.finfo(np.float64).max),
            float(np.finfo(np.float64).max),
        ),
        _DType(np.dtype(np.int64), "Long", "long int", "int", 63, INT64_MIN, INT64_MAX),
        _DType(np.dtype(np.int32), "Int", "int", "int", 31, -(1 << 31), (1 << 31) - 1),
        _DType(np.dtype(np.int16), "Short", "short int", "int", 15, -(1 << 15), (1 << 15) - 1),
        _DType(np.dtype(np.int8), "Char", "signed char", "int", 7, -128, 127),
        _DType(np.dtype(np.uint8), "Byte", "unsigned char", "int", 8, 0, 255),
        _DType(np.dtype(np.bool_), "Bool", "bool", "bool", 1, 0, 1),
        _DType(np.dtype(np.complex64), "ComplexFloat", "c10::complex<float>", "complex", 24, 0, 0),
        _DType(
            np.dtype(np.complex128), "ComplexDouble", "c10::complex<double>", "complex", 53, 0, 0
        ),
    )
}
# The C++ type names PyTorch's scalar conversion check prints (randperm's n - 1 overflow).
_CONVERT_NAMES = {
    "Long": "int64_t",
    "Int": "int",
    "Short": "int16_t",
    "Char": "int8_t",
    "Byte": "uint8_t",
}


def _dtype_info(dtype: Any) -> _DType:
    try:
        return _DTYPES[np.dtype(dtype)]
    except (KeyError, TypeError):
        raise NotImplementedError(UNSUPPORTED_DTYPE.format(dtype=dtype)) from None


def _opmath(info: _DType) -> np.dtype:
    """``at::opmath_type``: half and bfloat16 kernels compute in float32."""
    return _F64 if info.np == _F64 else _F32


def _real_of(info: _DType) -> _DType:
    """The dtype ``view_as_real`` gives a complex tensor."""
    return _DTYPES[_F32 if info.np == np.complex64 else _F64]


def _from_float32(x: np.ndarray, info: _DType) -> np.ndarray:
    """``static_cast<scalar_t>(float)`` (round to nearest even for half and bfloat16)."""
    return x if info.np == _F32 else x.astype(info.np)


def _from_float64(x: np.ndarray, info: _DType) -> np.ndarray:
    """``static_cast<scalar_t>(double)``: c10::Half and BFloat16 only have a float constructor,
    so a double goes through float first (two roundings, as in PyTorch)."""
    if info.np in (_F64, _F32):
        return x.astype(info.np)
    return x.astype(np.float32).astype(info.np)


def _from_int64(x: np.ndarray, info: _DType) -> np.ndarray:
    """``static_cast<scalar_t>(int64_t)``."""
    if info.kind == "bool":
        return x != 0
    if info.np.itemsize == 2 and info.kind == "float":  # via float, like c10::Half(float)
        return x.astype(np.float32).astype(info.np)
    return x.astype(info.np)  # integers wrap, float and double round to nearest even


def _scalar_to_int64(value: float) -> int:
    """``static_cast<int64_t>(float)`` as x86-64 does it: truncation, and INT64_MIN ("integer
    indefinite") for NaN, infinities and values out of range."""
    if not math.isfinite(value) or not (-(2.0**63) <= value < 2.0**63):
        return INT64_MIN
    return int(value)


def _round_to(value: int, info: _DType) -> float:
    """``static_cast<scalar_t>(int64_t)`` of one value, as a Python float."""
    return float(_from_int64(np.array([value], np.int64), info)[0])


# --- exact fused multiply-add ---------------------------------------------------------------------
_LOW29 = np.uint64((1 << 29) - 1)
_HALF29 = np.uint64(1 << 28)
_F32_MIN_NORMAL = 2.0**-126
_SPLIT = 134217729.0  # 2**27 + 1, Veltkamp's splitter for doubles


def _two_sum(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``s + e == a + b`` exactly, ``s`` the rounded sum (Knuth)."""
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _round_odd_sum(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a + b`` rounded to odd: an inexact sum gets the neighbour whose last bit is 1."""
    s, e = _two_sum(a, b)
    fix = (e != 0) & ((s.view(np.uint64) & np.uint64(1)) == 0)
    if fix.any():
        s = np.where(fix, np.nextafter(s, np.where(e > 0, np.inf, -np.inf)), s)
    return s


def _fma32(a: Any, b: Any, c: Any) -> np.ndarray:
    """float32 ``a * b + c`` with a single rounding, like the FMA instruction.

    The product of two floats is exact in a double, so only the double addition can round; that
    first rounding matters only when it lands exactly halfway between two floats (or in float's
    subnormal range), and those few elements are redone with round-to-odd, which makes the final
    rounding to float exact.
    """
    a, b, c = np.broadcast_arrays(
        np.asarray(a, np.float32), np.asarray(b, np.float32), np.asarray(c, np.float32)
    )
    shape = a.shape
    a, b, c = a.reshape(-1), b.reshape(-1), c.reshape(-1)
    p = np.multiply(a, b, dtype=np.float64)
    s = p + c
    risky = ((s.view(np.uint64) & _LOW29) == _HALF29) | ((np.abs(s) < _F32_MIN_NORMAL) & (s != 0))
    if risky.any():
        s[risky] = _round_odd_sum(p[risky], c[risky].astype(np.float64))
    return s.astype(np.float32).reshape(shape)


def _two_prod(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``p + e == a * b`` exactly (Dekker), valid away from overflow and underflow."""
    p = a * b
    t = _SPLIT * a
    ah = t - (t - a)
    al = a - ah
    t = _SPLIT * b
    bh = t - (t - b)
    bl = b - bh
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


def _exact_fma(a: float, b: float, c: float) -> float:
    if not (math.isfinite(a) and math.isfinite(b) and math.isfinite(c)):
        return a * b + c
    exact = Fraction(a) * Fraction(b) + Fraction(c)
    try:
        return float(exact)  # int / int true division rounds correctly
    except OverflowError:
        return math.copysign(math.inf, exact)


def _fma64(a: Any, b: Any, c: Any) -> np.ndarray:
    """float64 ``a * b + c`` with a single rounding, like the FMA instruction GCC emits.

    Boldo and Melquiond's emulation: the exact product ``uh + ul``, the exact sum ``th + tl`` of
    ``c`` and ``uh``, then ``th + round_to_odd(tl + ul)`` rounds correctly. Elements where the
    splitting could overflow or underflow are computed exactly with fractions instead.
    """
    a, b, c = np.broadcast_arrays(
        np.asarray(a, np.float64), np.asarray(b, np.float64), np.asarray(c, np.float64)
    )
    shape = a.shape
    a, b, c = a.reshape(-1), b.reshape(-1), c.reshape(-1)
    with np.errstate(all="ignore"):
        uh, ul = _two_prod(a, b)
        th, tl = _two_sum(c, uh)
        out = th + _round_odd_sum(tl, ul)
        bad = ~(
            (np.abs(a) < 2.0**995)
            & (np.abs(b) < 2.0**995)
            & np.isfinite(c)
            # a product that underflowed to zero keeps its sign only in the exact path
            & ((np.abs(uh) > 2.0**-969) | (a == 0) | (b == 0))
            & np.isfinite(out)
        )
    if bad.any():
        out[bad] = [
            _exact_fma(x, y, z)
            for x, y, z in zip(a[bad].tolist(), b[bad].tolist(), c[bad].tolist())
        ]
    return out.reshape(shape)


# --- the generator --------------------------------------------------------------------------------
def _type_name(obj: Any) -> str:
    """CPython's ``tp_name``: bare for builtins, ``module.name`` otherwise (``numpy.float64``)."""
    t = type(obj)
    return t.__name__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__name__}"


def _init_genrand_key(seed32: int) -> np.ndarray:
    """mt19937's ``init_genrand`` key, the fallback if numpy loses ``_legacy_seeding``."""
    key = [seed32]
    for j in range(1, _MT_N):
        prev = key[-1]
        key.append((1812433253 * (prev ^ (prev >> 30)) + j) & 0xFFFFFFFF)
    return np.array(key, np.uint32)


def _generator_device(dev):
    """``torch.Generator(device)``'s device: parsed as the parser's ``torch.device`` (a str, a
    device or an index); a CPU generator's has no index; an accelerator's must exist."""
    from . import _device as DEV
    from . import _errors as E

    if dev is None:
        return DEV.device("cpu")
    if E.device_refused(dev):
        raise TypeError(
            E.MUST_BE.format("Generator", "device", 1, "torch.device", E.py_typename(dev))
        )
    d = dev if isinstance(dev, DEV.device) else DEV.device(dev)
    if d.type == "cpu":
        return DEV.device("cpu")
    if d.type == "meta":
        raise RuntimeError("META device type not an accelerator.")
    return DEV.canonical(d)


class Generator:
    """PyTorch's CPU generator: mt19937 plus the cached second Box-Muller sample.

    The mt19937 key and position live in numpy's ``MT19937`` bit generator, whose
    ``random_raw`` gives the engine's tempered 32-bit outputs fast; PyTorch's ``left``/``next``
    counters are tracked alongside so ``get_state_bytes`` can write them back exactly.
    """

    def __init__(self, device: Any = "cpu") -> None:
        self.device = _generator_device(device)
        self._lock = threading.RLock()
        self._bitgen = np.random.MT19937(0)
        self._set_current_seed(DEFAULT_SEED)

    def __repr__(self) -> str:
        return f"<torch._C.Generator object at {hex(id(self))}>"

    # -- seeding ---------------------------------------------------------------------------------
    def _set_current_seed(self, seed: int) -> None:
        """``CPUGeneratorImpl::set_current_seed``: a fresh engine, and no cached normals."""
        seed32 = seed & 0xFFFFFFFF
        try:
            self._bitgen._legacy_seeding(seed32)  # init_genrand, as at::mt19937's init_with_uint32
        except AttributeError:
            self._set_key(_init_genrand_key(seed32), _MT_N)
        self._seed = seed
        # A fresh at::mt19937 has left = 1, next = 0: the first draw twists the key.
        self._left = 1
        self._next = 0
        self._next_double: float | None = None
        self._next_float: np.float32 | None = None

    def manual_seed(self, seed: int) -> Generator:
        """Seed like ``torch.Generator.manual_seed``: any int in [-2**63, 2**64); negative seeds
        wrap to uint64."""
        if isinstance(seed, np.integer):
            # PyTorch accepts numpy integers in its type check, then fails to unpack them.
            raise TypeError(INTEGER_REQUIRED)
        if not isinstance(seed, int) or isinstance(seed, bool):
            raise RuntimeError(MANUAL_SEED_TYPE.format(type_name=_type_name(seed)))
        seed = int(seed)
        if not INT64_MIN <= seed <= _MASK64:
            raise ValueError(LONG_OVERFLOW)
        with self._lock:
            self._set_current_seed(seed & _MASK64)
        return self

    def seed(self) -> int:
        """Seed from the OS's entropy (PyTorch reads /dev/urandom) and return the seed."""
        value = int.from_bytes(os.urandom(8), "little")
        with self._lock:
            self._set_current_seed(value)
        return value

    def initial_seed(self) -> int:
        """The seed the generator was last seeded with, as an unsigned 64-bit int."""
        return self._seed

    # -- state -----------------------------------------------------------------------------------
    def _key(self) -> np.ndarray:
        return np.asarray(self._bitgen.state["state"]["key"], np.uint32)

    def _set_key(self, key: np.ndarray, pos: int) -> None:
        self._bitgen.state = {
            "bit_generator": "MT19937",
            "state": {"key": np.asarray(key, np.uint32), "pos": int(pos)},
        }

    def get_state_bytes(self) -> np.ndarray:
        """The 5056 bytes ``torch.Generator.get_state()`` returns for the same history.

        Layout (``CPUGeneratorImplState``, little-endian x86-64): uint64 seed, int32 left,
        int32 seeded, uint64 next, uint64 key[624], double normal_x (unused, 0), double
        normal_y (the cached double sample), double normal_rho (unused, 0), int32
        normal_is_valid, 4 padding bytes, float next_float_normal_sample, bool its validity,
        3 padding bytes. PyTorch zero-fills the struct before copying, so padding is 0.
        """
        with self._lock:
            buf = np.zeros(STATE_SIZE, np.uint8)
            buf[0:8] = np.array([self._seed], "<u8").view(np.uint8)
            buf[8:16] = np.array([self._left, 1], "<i4").view(np.uint8)
            buf[16:24] = np.array([self._next], "<u8").view(np.uint8)
            buf[24:5016] = self._key().astype("<u8").view(np.uint8)
            if self._next_double is not None:
                buf[5024:5032] = np.array([self._next_double], "<f8").view(np.uint8)
                buf[5040:5044] = np.array([1], "<i4").view(np.uint8)
            if self._next_float is not None:
                buf[5048:5052] = np.array([self._next_float], "<f4").view(np.uint8)
                buf[5052] = 1
            return buf

    def get_state(self):
        """The state as a uint8 tensor of PyTorch's 5056-byte layout."""
        from ._factories import from_numpy

        return from_numpy(self.get_state_bytes())

    def set_state(self, new_state) -> Generator:
        """Restore a state from ``get_state()`` (or from PyTorch's bytes)."""
        data = getattr(new_state, "_data", new_state)
        return self.set_state_bytes(np.asarray(data))

    def set_state_bytes(self, state: Any) -> Generator:
        """Restore a state from ``get_state_bytes`` or from PyTorch's ``get_state().numpy()``."""
        arr = np.asarray(state)
        if arr.dtype != np.uint8:
            raise TypeError(STATE_NOT_BYTES)
        if arr.size != STATE_SIZE:
            raise RuntimeError(STATE_SIZE_MISMATCH.format(expected=STATE_SIZE, got=arr.size))
        raw = np.ascontiguousarray(arr).reshape(-1)
        seed = int(raw[0:8].view("<u8")[0])
        left, seeded = (int(v) for v in raw[8:16].view("<i4"))
        # CPUGeneratorImpl::set_state narrows ``next`` to uint32 and each key word to uint32.
        nxt = int(raw[16:24].view("<u8")[0]) & 0xFFFFFFFF
        key = raw[24:5016].view("<u8").astype(np.uint32)
        if not (seeded != 0 and 0 < left <= _MT_N and nxt <= _MT_N):
            raise RuntimeError(STATE_INVALID)
        normal_y = float(raw[5024:5032].view("<f8")[0])
        double_valid = int(raw[5040:5044].view("<i4")[0]) != 0
        next_float = raw[5048:5052].view("<f4")[0]
        float_valid = raw[5052] != 0
        with self._lock:
            # numpy's MT19937 twists when pos reaches 624, PyTorch when ``left`` reaches 1.
            self._set_key(key, _MT_N if left == 1 else nxt)
            self._seed = seed
            self._left = left
            self._next = nxt
            self._next_double = normal_y if double_valid else None
            self._next_float = np.float32(next_float) if float_valid else None
        return self

    # -- raw draws (callers hold the lock) -------------------------------------------------------
    def _random32(self, n: int) -> np.ndarray:
        """``n`` calls of ``CPUGeneratorImpl::random()``, as uint64 values below 2**32."""
        if DRAW_CHECK[0] is not None:  # Note [Randomness in vmap] in func.py
            DRAW_CHECK[0](True)
        if n <= 0:
            return np.empty(0, np.uint64)
        left, nxt = self._left, self._next
        if left > 1 and nxt + left != _MT_N + 1:
            return self._random32_irregular(n)
        out = self._bitgen.random_raw(n)
        avail = left - 1  # outputs left before PyTorch twists the key again
        if n <= avail:
            self._left, self._next = left - n, nxt + n
        else:
            pos = (n - avail - 1) % _MT_N + 1
            self._left, self._next = _MT_N + 1 - pos, pos
        return out

    def _random32_irregular(self, n: int) -> np.ndarray:
        """Draws from a state set by ``set_state_bytes`` whose ``left`` and ``next`` disagree:
        PyTorch reads ``key[next:]`` for ``left - 1`` outputs, then twists."""
        k = min(n, self._left - 1)
        if self._next + k > _MT_N:
            raise NotImplementedError(STATE_OUT_OF_RANGE.format(left=self._left, next=self._next))
        first = self._bitgen.random_raw(k)
        self._left -= k
        self._next += k
        if self._left == 1:  # PyTorch twists at the next draw: make numpy do the same
            self._set_key(self._key(), _MT_N)
        if k == n:
            return first
        return np.concatenate([first, self._random32(n - k)])

    def _random64(self, n: int) -> np.ndarray:
        """``n`` calls of ``random64()``: two 32-bit draws, the first one the high half."""
        raw = self._random32(2 * n)
        return (raw[0::2] << np.uint64(32)) | raw[1::2]

    def _uniform32(self, n: int) -> np.ndarray:
        """``uniform_real_distribution<float>(0, 1)``: the low 24 bits of a draw times 2**-24."""
        bits = self._random32(n) & np.uint64(0xFFFFFF)
        return bits.astype(np.float32) * np.float32(2.0**-24)

    def _uniform64(self, n: int) -> np.ndarray:
        """``uniform_real_distribution<double>(0, 1)``: the low 53 bits of ``random64()``."""
        bits = self._random64(n) & np.uint64((1 << 53) - 1)
        return bits.astype(np.float64) * 2.0**-53


# What every draw calls first while a vmap runs: its randomness check (func.py), else None
DRAW_CHECK: list = [None]


def sampled(draw, shape, tensors=(), host=None, like=None, inplace=False, order=None):
    """A random op's per-sample values inside vmap, or None where it draws as outside: see
    ``func.sampled`` (Note [Randomness in vmap] in func.py)."""
    if DRAW_CHECK[0] is None:
        return None
    from . import func

    return func.sampled(draw, shape, tensors, host, like, inplace, order)


def batched(data) -> bool:
    """Whether a running vmap batches this array: under randomness="same" PyTorch fills a new
    contiguous tensor of one sample's shape for an in-place fill or a dropout mask of it."""
    if DRAW_CHECK[0] is None:
        return False
    from . import func

    return func.batched_anywhere(data)


def _generator(gen: Generator | None) -> Generator:
    if DRAW_CHECK[0] is not None:  # Note [Randomness in vmap]: before any value is read
        DRAW_CHECK[0]()
    if gen is None:
        return default_generator
    if not isinstance(gen, Generator):
        raise TypeError(f"expected a leafgrad Generator, got {type(gen).__name__}")
    return gen


def _shape(shape: Any) -> tuple[int, ...]:
    """A shape tuple, with PyTorch's error for a negative size."""
    dims = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    dims = tuple(operator.index(d) for d in dims)
    for d in dims:
        if d < 0:
            shown = "[" + ", ".join(str(x) for x in dims) + "]"
            raise RuntimeError(NEGATIVE_DIMENSION.format(dim=d, shape=shown))
    return dims


def _numel(shape: tuple[int, ...]) -> int:
    return math.prod(shape)


def iteration_order(shape: Sequence[int], *strides: Sequence[int]) -> tuple[int, ...]:
    """The dims of ``shape`` from outermost to innermost, in the order PyTorch's CPU kernels
    visit the elements of tensors with these strides (the output's first).

    ``cpu_serial_kernel`` walks a ``TensorIterator``, which sorts the dims by stride
    (``reorder_dimensions``: an insertion sort whose comparison goes through the operands in
    turn, skips a zero (broadcast) stride, decides on the first unequal pair, and between equal
    strides puts the larger dim outside). A random fill therefore draws its numbers in memory
    order, not in the view's logical order: ``x.t().uniform_()`` fills ``x`` row by row.
    """
    ndim = len(shape)
    perm = list(range(ndim - 1, -1, -1))  # innermost first, as TensorIterator's perm_

    def should_swap(dim0: int, dim1: int) -> int:
        for st in strides:
            s0, s1 = st[dim0], st[dim1]
            if s0 == 0 or s1 == 0:
                continue
            if s0 < s1:
                return -1
            if s0 > s1:
                return 1
            if shape[dim0] > shape[dim1]:
                return 1
        return 0

    sort_dims(perm, should_swap)
    return tuple(reversed(perm))


def sort_dims(perm: list, should_swap) -> None:
    """TensorIterator's ``reorder_dimensions`` insertion sort of ``perm`` (innermost first), in
    place: ``should_swap(a, b)`` > 0 swaps, < 0 stops, 0 leaves the pair as it is."""
    for i in range(1, len(perm)):
        dim1 = i
        for dim0 in range(i - 1, -1, -1):
            cmp = should_swap(perm[dim0], perm[dim1])
            if cmp > 0:
                perm[dim0], perm[dim1] = perm[dim1], perm[dim0]
                dim1 = dim0
            elif cmp < 0:
                break


def fill_in_order(draw: Any, shape: Sequence[int], order: Sequence[int]) -> np.ndarray:
    """``draw(shape)`` for a tensor whose elements are filled in ``order`` (outermost dim
    first, see ``iteration_order``): the values are drawn for the permuted shape and
    permuted back."""
    shape, order = tuple(shape), tuple(order)
    if order == tuple(range(len(shape))):
        return draw(shape)
    values = draw(tuple(shape[d] for d in order))
    return values.transpose(tuple(order.index(d) for d in range(len(shape))))


def _check_int64(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{what} must be an int, got {type(value).__name__}")
    value = int(value)
    if not INT64_MIN <= value <= INT64_MAX:
        raise ValueError(LONG_OVERFLOW)
    return value


# --- uniform --------------------------------------------------------------------------------------
def uniform(
    gen: Generator | None,
    shape: Sequence[int],
    dtype: Any,
    low: float = 0.0,
    high: float = 1.0,
) -> np.ndarray:
    """``torch.rand`` / ``Tensor.uniform_(low, high)``: samples in [low, high).

    Each element takes one 32-bit draw (float, half, bfloat16: its low 24 bits) or one 64-bit
    draw (double: its low 53 bits) and computes ``fma(x, to - from, from)`` in float (double for
    float64), then casts; a value that rounds to ``high`` becomes ``low``, as in PyTorch.
    """
    shape = _shape(shape)
    info = _dtype_info(dtype)
    gen = _generator(gen)
    n = _numel(shape)
    low, high = float(low), float(high)
    if info.kind == "complex":
        # uniform_ fills view_as_real(self), both parts from the same stream.
        if n == 0:
            return np.zeros(shape, info.np)
        real = uniform(gen, shape + (2,), _real_of(info).np, low, high)
        return real.view(info.np).reshape(shape)
    if info.kind != "float":
        raise NotImplementedError(not_implemented_for("check_uniform_bounds", info.torch_name))
    if not info.lowest <= low <= info.max:
        raise RuntimeError(OUT_OF_BOUNDS.format(name="from", dtype=info.cpp_name))
    if not info.lowest <= high <= info.max:
        raise RuntimeError(OUT_OF_BOUNDS.format(name="to", dtype=info.cpp_name))
    if not low <= high:
        raise RuntimeError(UNIFORM_RANGE.format(frm=_fmt_double(low), to=_fmt_double(high)))
    if not high - low <= info.max:
        raise RuntimeError(
            UNIFORM_SPAN.format(scalar=info.torch_name, to=_fmt_double(high), frm=_fmt_double(low))
        )
    if n == 0:
        return np.zeros(shape, info.np)
    op = _opmath(info)
    frm, to = op.type(low), op.type(high)
    with np.errstate(over="ignore"):
        span = to - frm
    if not span <= np.finfo(op).max:  # uniform_real_distribution's own check, in opmath
        raise RuntimeError(torch_check_failed("to - from <= std::numeric_limits<T>::max()"))
    with gen._lock:
        x = gen._uniform64(n) if op == _F64 else gen._uniform32(n)
    fma = _fma64 if op == _F64 else _fma32
    if frm == 0 and span == 1:
        value = x
    elif frm == 0:
        value = x * span  # fma(x, span, 0) is a plain product
    elif span == 1:
        value = x + frm
    else:
        value = fma(x, span, frm)  # GCC fuses x * (to - from) + from
    value = value.astype(info.np) if op == _F64 else _from_float32(value, info)
    # The kernel maps a value that the cast rounded up to ``to`` back to ``from``.
    to_scalar = _from_float64(np.array([high]), info)[0]
    from_scalar = _from_float64(np.array([low]), info)[0]
    value = np.where(value == to_scalar, from_scalar, value)
    return value.astype(info.np, copy=False).reshape(shape)


# --- normal ---------------------------------------------------------------------------------------
_LOG_P = [
    np.float32(v)
    for v in (
        7.0376836292e-2,
        -1.1514610310e-1,
        1.1676998740e-1,
        -1.2420140846e-1,
        1.4249322787e-1,
        -1.6668057665e-1,
        2.0000714765e-1,
        -2.4999993993e-1,
        3.3333331174e-1,
    )
]
_F = np.float32


def _log256_ps(x: np.ndarray) -> np.ndarray:
    """avx_mathfun.h's ``log256_ps`` for x in (0, 1], as GCC compiles it with FMA contraction."""
    x = np.maximum(x, np.array(0x00800000, np.int32).view(np.float32))  # cut off denormals
    bits = x.view(np.int32)
    exponent = (bits.view(np.uint32) >> 23).astype(np.int32) - 127
    # Keep only the mantissa, as a number in [0.5, 1).
    x = ((bits & np.int32(~0x7F800000)) | np.array(0.5, np.float32).view(np.int32)).view(np.float32)
    e = exponent.astype(np.float32) + _F(1)
    mask = x < _F(0.707106781186547524)
    tmp = np.where(mask, x, _F(0))
    x = x - _F(1)
    e = e - np.where(mask, _F(1), _F(0))
    x = x + tmp
    z = x * x
    y = np.full_like(x, _LOG_P[0])
    for coeff in _LOG_P[1:]:
        y = _fma32(y, x, coeff)  # y * x + p: fused
    y = y * x
    # ``y = y * z; y = y + e * q1``: GCC fuses the first product into the add.
    y = _fma32(y, z, e * _F(-2.12194440e-4))
    y = y - z * _F(0.5)  # z * 0.5 is exact: fused or not, the same
    x = x + y
    return x + e * _F(0.693359375)  # e * q2 is exact (e is a small integer)


def _sincos256_ps(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """avx_mathfun.h's ``sincos256_ps`` for x >= 0, as GCC compiles it with FMA contraction."""
    y = x * _F(1.27323954473516)  # scale by 4 / pi
    j = y.astype(np.int32)  # cvttps: truncation
    j = (j + 1) & ~1
    y = j.astype(np.float32)
    sign_sin = ((j & 4) << 29).astype(np.uint32)
    poly_mask = (j & 2) == 0
    sign_cos = ((~(j - 2) & 4) << 29).astype(np.uint32)
    # Extended precision modular arithmetic: x - y * (DP1 + DP2 + DP3), each step fused.
    x = _fma32(y, _F(-0.78515625), x)
    x = _fma32(y, _F(-2.4187564849853515625e-4), x)
    x = _fma32(y, _F(-3.77489497744594108e-8), x)
    z = x * x
    c = np.full_like(x, _F(2.443315711809948e-5))
    c = _fma32(c, z, _F(-1.388731625493765e-3))
    c = _fma32(c, z, _F(4.166664568298827e-2))
    c = c * z
    c = _fma32(c, z, -(z * _F(0.5)))  # ``y * z - z * 0.5``: the first product is fused
    c = c + _F(1)
    s = np.full_like(x, _F(-1.9515295891e-4))
    s = _fma32(s, z, _F(8.3321608736e-3))
    s = _fma32(s, z, _F(-1.6666654611e-1))
    s = s * z
    s = _fma32(s, x, x)
    sin_part = np.where(poly_mask, s, _F(0)) + np.where(poly_mask, _F(0), c)
    cos_part = np.where(poly_mask, c, _F(0)) + np.where(poly_mask, _F(0), s)
    sin_out = (sin_part.view(np.uint32) ^ sign_sin).view(np.float32)
    cos_out = (cos_part.view(np.uint32) ^ sign_cos).view(np.float32)
    return sin_out, cos_out


def _normal_fill16_avx2(blocks: np.ndarray, mean: np.float32, std: np.float32) -> np.ndarray:
    """``NormalFill16<float>`` (AVX2) on rows of 16 uniforms: the first 8 of a row give radii,
    the last 8 angles; cosines go to the first half, sines to the second."""
    u1 = _F(1) - blocks[:, :8]
    u2 = blocks[:, 8:]
    radius = np.sqrt(_F(-2) * _log256_ps(u1))
    theta = _F(2 * math.pi) * u2
    sin_t, cos_t = _sincos256_ps(theta)
    if std == 1:  # fma(x, 1, mean) is x + mean (which also turns radius -0.0 into +0.0)
        first, second = radius * cos_t + mean, radius * sin_t + mean
    else:
        first = _fma32(radius * cos_t, std, mean)  # _mm256_fmadd_ps
        second = _fma32(radius * sin_t, std, mean)
    return np.concatenate([first, second], axis=1)


def _libm(fn: Any, x: np.ndarray) -> np.ndarray:
    """The C library's ``fn`` element by element (numpy's own log differs from glibc's)."""
    return np.fromiter(map(fn, x.ravel().tolist()), np.float64, x.size).reshape(x.shape)


def _normal_fill16_double(blocks: np.ndarray, mean: float, std: float) -> np.ndarray:
    """The scalar ``NormalFill16<double>``: libm log/cos/sin and an explicit ``std::fma``."""
    u1 = 1.0 - blocks[:, :8]
    u2 = blocks[:, 8:]
    radius = np.sqrt(-2.0 * _libm(math.log, u1))
    theta = (2.0 * math.pi) * u2
    first = radius * _libm(math.cos, theta)
    second = radius * _libm(math.sin, theta)
    if std == 1:  # fma(x, 1, mean) is x + mean (which also turns radius -0.0 into +0.0)
        first, second = first + mean, second + mean
    else:
        first, second = _fma64(first, std, mean), _fma64(second, std, mean)
    return np.concatenate([first, second], axis=1)


def _normal_serial(gen: Generator, n: int, mean: float, std: float) -> np.ndarray:
    """``normal_distribution<double>`` element by element (the path for fewer than 16).

    Each fresh pair takes two 64-bit uniforms ``u1`` (angle) and ``u2`` (radius); the sine
    sample is cached in the generator and used first by the next draw, from any call.
    """
    raw = np.empty(n, np.float64)
    i = 0
    if n and gen._next_double is not None:
        raw[0] = gen._next_double
        gen._next_double = None
        i = 1
    rest = n - i
    pairs = (rest + 1) // 2
    if pairs:
        u = gen._uniform64(2 * pairs)
        u1, u2 = u[0::2].tolist(), u[1::2].tolist()
        seq = []
        sine = 0.0
        for a, b in zip(u1, u2):
            r = math.sqrt(-2.0 * math.log1p(-b))
            theta = 2.0 * math.pi * a
            sine = r * math.sin(theta)
            seq += (r * math.cos(theta), sine)
        raw[i:] = seq[:rest]
        if rest % 2:
            gen._next_double = sine
    return _fma64(raw, std, mean)  # ``val * std + mean``, fused by GCC


def standard_normal_double(gen: Generator) -> float:
    """One ``at::normal_distribution<double>(0, 1)`` draw, as ATen's per-element samplers
    (``_standard_gamma``, ``_sample_dirichlet``) take them: the cached sine sample first, else a
    fresh Box-Muller pair (angle ``u1``, radius ``u2``) whose sine is cached. Callers hold the
    lock."""
    cached = gen._next_double
    if cached is not None:
        gen._next_double = None
        return cached + 0.0  # ``ret * 1 + 0``: ATen's transformation of a cached sample too
    u1, u2 = gen._uniform64(2).tolist()
    r = math.sqrt(-2.0 * math.log1p(-u2))
    theta = 2.0 * math.pi * u1
    gen._next_double = r * math.sin(theta)
    return r * math.cos(theta) + 0.0


def normal(
    gen: Generator | None,
    shape: Sequence[int],
    dtype: Any,
    mean: float = 0.0,
    std: float = 1.0,
    contiguous: bool = True,
) -> np.ndarray:
    """``torch.randn`` / ``Tensor.normal_(mean, std)``.

    Fewer than 16 elements: Box-Muller in double from 64-bit uniforms, one cached sample carried
    between calls. 16 or more: 16 at a time from uniforms drawn up front (float32, float16 and
    bfloat16 through the float32 AVX2 kernel; float64 through libm), and when the size is not a
    multiple of 16 the last 16 values are redrawn from 16 fresh uniforms and recomputed.

    ``contiguous=False`` is ``normal_`` on a tensor that is not contiguous: PyTorch's
    ``normal_kernel`` then takes the element-by-element path whatever the size (the values are
    in the order of ``iteration_order``, which the caller applies).
    """
    shape = _shape(shape)
    info = _dtype_info(dtype)
    gen = _generator(gen)
    mean, std = float(mean), float(std)
    if not std >= 0.0:
        raise RuntimeError(NORMAL_STD.format(std=_fmt_double(std)))
    n = _numel(shape)
    if n == 0:
        return np.zeros(shape, info.np)
    if info.kind == "complex":
        # normal_ fills view_as_real(self) with std / sqrt(2) for each part.
        real = normal(gen, shape + (2,), _real_of(info).np, mean, std / math.sqrt(2), contiguous)
        return real.view(info.np).reshape(shape)
    if info.kind != "float":
        raise NotImplementedError(not_implemented_for("normal_kernel_cpu", info.torch_name))
    with gen._lock:
        if n < 16 or not contiguous:
            return _from_float64(_normal_serial(gen, n, mean, std), info).reshape(shape)
        full = n // 16 * 16
        if info.np == _F64:
            data = gen._uniform64(n)
            out = _normal_fill16_double(data[:full].reshape(-1, 16), mean, std).reshape(-1)
            if n % 16:
                tail = _normal_fill16_double(gen._uniform64(16).reshape(1, 16), mean, std)
                out = np.concatenate([out[: n - 16], tail.reshape(-1)])
            return out.reshape(shape)
        # float32 draws all n uniforms before the tail's 16; half and bfloat16 draw 16 per
        # block into a float buffer, so their tail follows the last full block.
        data = gen._uniform32(n if info.np == _F32 else full)
        m, s = _F(mean), _F(std)
        out = _normal_fill16_avx2(data[:full].reshape(-1, 16), m, s).reshape(-1)
        if n % 16:
            tail = _normal_fill16_avx2(gen._uniform32(16).reshape(1, 16), m, s)
            out = np.concatenate([out[: n - 16], tail.reshape(-1)])
    return _from_float32(out, info).reshape(shape)


# --- integers -------------------------------------------------------------------------------------
def _update_from(frm: int, info: _DType) -> int:
    """DistributionTemplates.h's ``update_from``: move ``from`` up to the closest int64 that
    stays >= from after the cast to the floating dtype."""
    from_plus_1 = _scalar_to_int64(_round_to(frm + 1, info))
    if from_plus_1 < frm:
        n = abs(frm + 1).bit_length() - 1
        frm = from_plus_1 + (1 << (n - info.digits + 1))
    return frm


def _update_to(to: int, info: _DType) -> int:
    """``update_to``: move ``to`` down likewise."""
    to_minus_1 = _scalar_to_int64(_round_to(to - 1, info))
    if to_minus_1 >= to:
        n = abs(to - 1).bit_length() - 1
        to = to_minus_1 - (1 << (n - info.digits + 1))
    return to


def _check_from_to_in_range(frm: int, to_inc: int, info: _DType) -> None:
    if info.kind == "float":
        for value, name in ((frm, "from"), (to_inc, "to - 1")):
            if not info.lowest <= value <= info.max:
                raise RuntimeError(OUT_OF_BOUNDS.format(name=name, dtype=info.cpp_name))
        bound = 1 << info.digits
        for value, name, line in ((frm, "from", 110), (to_inc, "to - 1", 111)):
            if value < -bound or value > bound:
                text = OUT_OF_BOUNDS_WARNING.format(
                    name=name, digits=info.digits, dtype=info.cpp_name, line=line
                )
                warnings.warn(text, UserWarning, stacklevel=4)
    elif info.kind in ("int", "bool"):
        for value, name in ((frm, "from"), (to_inc, "to - 1")):
            if not info.lowest <= value <= info.max:
                raise RuntimeError(OUT_OF_BOUNDS.format(name=name, dtype=info.cpp_name))
    else:
        raise RuntimeError(RANDOM_BOUNDS_TYPES)


def _from_to_values(gen: Generator, n: int, span: int, base: int, info: _DType) -> np.ndarray:
    """``uniform_int_from_to_distribution``: ``(draw % span) + base`` in uint64 arithmetic."""
    draws = gen._random64(n) if span >= _RANGE_64BIT else gen._random32(n)
    values = (draws % np.uint64(span)) + np.uint64(base & _MASK64)
    return _from_int64(values.view(np.int64), info)


def _random_default(gen: Generator, n: int, info: _DType) -> np.ndarray:
    """``uniform_int_distribution`` (``random_()`` without bounds)."""
    if info.kind == "bool":
        return (gen._random32(n) & np.uint64(1)) != 0
    if info.np in (np.dtype(np.int64), _F64):
        draws = gen._random64(n)
    else:
        draws = gen._random32(n)
    if info.kind == "float":
        modulus = (1 << info.digits) + 1  # [0, 2**mantissa]
    else:
        modulus = int(info.max) + 1
    return _from_int64((draws % np.uint64(modulus)).view(np.int64), info)


def random_(
    gen: Generator | None,
    shape: Sequence[int],
    dtype: Any,
    low: int | None = None,
    high: int | None = None,
) -> np.ndarray:
    """``Tensor.random_``: ``random_()`` when both bounds are None, ``random_(low, high)``
    for [low, high), ``random_(low, None)`` for [low, the dtype's largest integer] (the full
    int64 range when ``low`` is -2**63), and ``random_(to=high)`` when only ``high`` is given.
    """
    shape = _shape(shape)
    info = _dtype_info(dtype)
    gen = _generator(gen)
    n = _numel(shape)
    if low is None and high is None:
        if n == 0:
            return np.zeros(shape, info.np)
        if info.kind == "complex":
            raise NotImplementedError(not_implemented_for("random_kernel_cpu", info.torch_name))
        with gen._lock:
            return _random_default(gen, n, info).reshape(shape)
    frm = 0 if low is None else _check_int64(low, "from")
    if high is not None:
        to = _check_int64(high, "to")
        if not frm < to:
            raise RuntimeError(RANDOM_FROM_TO.format(frm=frm, to=to))
        if info.kind == "float":
            frm, to = _update_from(frm, info), _update_to(to, info)
            if not frm < to:
                raise RuntimeError(RANDOM_FROM_TO_CASTED.format(frm=frm, to=to))
        _check_from_to_in_range(frm, to - 1, info)
        span = (to - frm) & _MASK64
    elif frm != INT64_MIN:
        if info.kind == "float":
            to_inc = min(1 << info.digits, INT64_MAX)
            frm = _update_from(frm, info)
            if not frm < to_inc:
                raise RuntimeError(RANDOM_FROM_TO_INC_CASTED.format(frm=frm, to_inc=to_inc))
        elif info.kind in ("int", "bool"):
            to_inc = int(info.max)
        else:
            raise RuntimeError(RANDOM_FROM_TO_TYPES)
        _check_from_to_in_range(frm, to_inc, info)
        span = (to_inc - frm + 1) & _MASK64
    else:
        if n == 0:
            return np.zeros(shape, info.np)
        if info.kind in ("bool", "complex") or info.np == np.float16:
            kernel = "random_full_64_bits_range_kernel_cpu"
            raise NotImplementedError(not_implemented_for(kernel, info.torch_name))
        if info.np not in (np.dtype(np.int64), _F64, _F32, _BF16):
            raise RuntimeError(RANDOM_FULL_RANGE_TYPES)
        with gen._lock:
            return _from_int64(gen._random64(n).view(np.int64), info).reshape(shape)
    if n == 0:
        return np.zeros(shape, info.np)
    with gen._lock:
        return _from_to_values(gen, n, span, frm, info).reshape(shape)


def randint(
    gen: Generator | None,
    low: int,
    high: int,
    shape: Sequence[int],
    dtype: Any = np.int64,
) -> np.ndarray:
    """``torch.randint(low, high, shape)``: integers in [low, high) (``random_(low, high)``)."""
    return random_(gen, shape, dtype, low, high)


def randperm(gen: Generator | None, n: int, dtype: Any = np.int64) -> np.ndarray:
    """``torch.randperm(n)``: a forward Fisher-Yates shuffle of 0..n-1, swapping element ``i``
    with ``i + random() % (n - i)``. The draws are vectorised; the swaps are a Python loop."""
    n = operator.index(n)
    if n < 0:
        raise RuntimeError(NEGATIVE_DIMENSION.format(dim=n, shape=f"[{n}]"))
    info = _dtype_info(dtype)
    gen = _generator(gen)
    top = n - 1 if n > 0 else n
    if info.kind == "int" and top > info.max:
        raise RuntimeError(RANDPERM_OVERFLOW.format(ctype=_CONVERT_NAMES[info.torch_name]))
    limits = {
        "Half": ((1 << 11) + 1, "2049"),
        "Float": ((1 << 24) + 1, "2^24+1"),
        "Double": ((1 << 53) + 1, "2^53+1"),
    }
    if info.torch_name in limits and n > limits[info.torch_name][0]:
        limit, shown = limits[info.torch_name]
        raise RuntimeError(RANDPERM_PRECISION.format(limit=shown, name=info.torch_name))
    if info.kind in ("bool", "complex"):
        raise NotImplementedError(not_implemented_for("randperm", info.torch_name))
    if n >= _RANDPERM_SMALL_LIMIT:
        raise NotImplementedError(RANDPERM_TOO_LARGE.format(limit=_RANDPERM_SMALL_LIMIT))
    with gen._lock:
        draws = gen._random32(n - 1) if n > 1 else np.empty(0, np.uint64)
    steps = np.arange(max(n - 1, 0), dtype=np.uint64)
    targets = (draws % (np.uint64(n) - steps) + steps).astype(np.int64).tolist()
    perm = np.arange(n, dtype=np.int64)
    for i, j in enumerate(targets):
        perm[i], perm[j] = perm[j], perm[i]
    return _from_int64(perm, info)


# --- bernoulli ------------------------------------------------------------------------------------
def bernoulli(gen: Generator | None, shape: Sequence[int], dtype: Any, p: float) -> np.ndarray:
    """``Tensor.bernoulli_(p)`` / ``torch.bernoulli(input, p)`` with a scalar ``p``: one 64-bit
    uniform per element, 1 where it is below ``p``.

    This is PyTorch 2.13's kernel on every CPU, Intel ones included (see the module docstring).
    """
    shape = _shape(shape)
    info = _dtype_info(dtype)
    gen = _generator(gen)
    p = float(p)
    if not 0 <= p <= 1:
        raise RuntimeError(BERNOULLI_P.format(p=_fmt_double(p)))
    n = _numel(shape)
    if n == 0:
        return np.zeros(shape, info.np)
    if info.kind == "complex":
        raise NotImplementedError(not_implemented_for("bernoulli_scalar_cpu_", info.torch_name))
    with gen._lock:
        hits = gen._uniform64(n) < p
    return hits.astype(info.np).reshape(shape)


def bernoulli_tensor(gen: Generator | None, probs: Any, dtype: Any = None) -> np.ndarray:
    """``torch.bernoulli(probs)``: one draw per element in C order; float64 probabilities take
    a 64-bit uniform, float32/float16/bfloat16 ones a 24-bit float uniform. The result has
    ``probs``' shape and ``dtype`` (default: ``probs``' dtype)."""
    probs = np.asarray(probs)
    info = _dtype_info(probs.dtype if dtype is None else dtype)
    gen = _generator(gen)
    if probs.size == 0:
        return np.zeros(probs.shape, info.np)
    if info.kind == "complex":
        raise NotImplementedError(
            not_implemented_for("bernoulli_tensor_cpu_self_", info.torch_name)
        )
    p_info = _dtype_info(probs.dtype)
    if p_info.kind != "float":
        raise NotImplementedError(not_implemented_for("bernoulli_tensor_cpu_p_", p_info.torch_name))
    double = p_info.np == _F64
    flat = probs.reshape(-1).astype(np.float64 if double else np.float32)
    valid = (flat >= 0) & (flat <= 1)
    with gen._lock:
        if not valid.all():
            # PyTorch checks each p as it reaches it: the earlier elements still draw.
            k = int(np.argmin(valid))
            gen._uniform64(k) if double else gen._uniform32(k)
            raise RuntimeError(torch_check_failed(BERNOULLI_P_TENSOR_CONDITION))
        u = gen._uniform64(flat.size) if double else gen._uniform32(flat.size)
    return (u < flat).astype(info.np).reshape(probs.shape)


# --- exponential, geometric, log_normal, cauchy ------------------------------------------------
# PyTorch's CPU kernels (``cpu/DistributionTemplates.h``) draw these element by element in C order
# with the ``<double>`` distributions of ``core/DistributionsHelper.h`` and cast the double to the
# tensor's dtype; the transformations call libm, so they are computed here with ``math``.


def _float_only(info: _DType, name: str, spell: str) -> None:
    if info.kind != "float":
        raise RuntimeError(CONTINUOUS_DTYPE.format(name=name, dtype=spell))


def _uniform_doubles(gen: Generator, n: int) -> list[float]:
    with gen._lock:
        return gen._uniform64(n).tolist()


def exponential(gen: Generator | None, shape: Sequence[int], dtype: Any, lambd: float = 1.0):
    """``Tensor.exponential_(lambd)``: ``-1 / lambd * log1p(-u)`` for a 64-bit uniform ``u``,
    on every CPU (see the module docstring)."""
    shape = _shape(shape)
    info = _dtype_info(dtype)
    gen = _generator(gen)
    lambd = float(lambd)
    if not lambd > 0.0:
        raise RuntimeError(EXPONENTIAL_LAMBDA.format(lambd=_fmt_double(lambd)))
    _float_only(info, "Exponential", info.torch_name)
    n = _numel(shape)
    if n == 0:
        return np.zeros(shape, info.np)
    scale = -1.0 / lambd
    values = [scale * math.log1p(-u) for u in _uniform_doubles(gen, n)]
    return _from_float64(np.array(values, np.float64), info).reshape(shape)


def geometric(gen: Generator | None, shape: Sequence[int], dtype: Any, p: float):
    """``Tensor.geometric_(p)``: ``ceil(log(u) / log1p(-p))`` for a 64-bit uniform ``u``."""
    shape = _shape(shape)
    info = _dtype_info(dtype)
    gen = _generator(gen)
    p = float(p)
    if not 0 < p < 1:
        raise RuntimeError(GEOMETRIC_P.format(p=_fmt_double(p)))
    n = _numel(shape)
    if n == 0:
        return np.zeros(shape, info.np)
    if info.kind in ("bool", "complex"):
        raise NotImplementedError(not_implemented_for("geometric_cpu", info.torch_name))
    denom = math.log1p(-p)
    values = []
    for u in _uniform_doubles(gen, n):
        q = (math.log(u) if u > 0 else -math.inf) / denom
        values.append(math.ceil(q) if math.isfinite(q) else q)
    out = np.array(values, np.float64)
    if info.kind == "int":
        return _from_int64(out.astype(np.int64), info).reshape(shape)
    return _from_float64(out, info).reshape(shape)


def log_normal(
    gen: Generator | None, shape: Sequence[int], dtype: Any, mean: float = 1.0, std: float = 2.0
):
    """``Tensor.log_normal_(mean, std)``: ``exp`` of ``normal_distribution<double>`` samples
    (Box-Muller from 64-bit uniforms, sharing the generator's cached sample)."""
    shape = _shape(shape)
    info = _dtype_info(dtype)
    gen = _generator(gen)
    mean, std = float(mean), float(std)
    if not std > 0.0:
        raise RuntimeError(LOG_NORMAL_STD.format(std=_fmt_double(std)))
    n = _numel(shape)
    if n == 0:
        return np.zeros(shape, info.np)
    if info.kind != "float":
        raise NotImplementedError(not_implemented_for("log_normal_cpu", info.torch_name))
    with gen._lock:
        raw = _normal_serial(gen, n, mean, std)
    return _from_float64(_libm(math.exp, raw), info).reshape(shape)


def cauchy(
    gen: Generator | None, shape: Sequence[int], dtype: Any, median: float = 0.0, sigma: float = 1.0
):
    """``Tensor.cauchy_(median, sigma)``: ``median + sigma * tan(pi * (u - 0.5))``."""
    shape = _shape(shape)
    info = _dtype_info(dtype)
    gen = _generator(gen)
    median, sigma = float(median), float(sigma)
    if not sigma > 0.0:
        raise RuntimeError(CAUCHY_SIGMA.format(sigma=_fmt_double(sigma)))
    _float_only(info, "Cauchy", info.cpp_name)
    n = _numel(shape)
    if n == 0:
        return np.zeros(shape, info.np)
    values = [median + sigma * math.tan(math.pi * (u - 0.5)) for u in _uniform_doubles(gen, n)]
    return _from_float64(np.array(values, np.float64), info).reshape(shape)


# --- multinomial ----------------------------------------------------------------------------------
def multinomial(
    gen: Generator | None,
    probs: Any,
    num_samples: int,
    replacement: bool = False,
    order: Sequence[int] | None = None,
) -> np.ndarray:
    """``torch.multinomial(probs, num_samples, replacement)`` on CPU (``Distributions.cpp``,
    ``cpu/MultinomialKernel.cpp``): int64 category indices, ``[num_samples]`` for 1-d
    ``probs`` and ``[rows, num_samples]`` for 2-d.

    Without replacement, or for one sample, PyTorch draws ``q = exponential_(1)`` for every
    element (C order) and takes the top ``num_samples`` of ``probs / q`` (the Gumbel trick). With
    replacement each row's normalised running sum is searched with one 64-bit uniform per
    sample. Equal keys are ordered as PyTorch's C++ partial sort orders them.

    ``q`` is ``empty_like(probs)``, which keeps the layout of ``probs`` (its dims' order in
    memory, even when it is not dense), and ``exponential_`` fills it in memory order: pass
    ``order=iteration_order(probs.shape, probs' strides)`` for a 2-d ``probs`` whose memory
    order is not its logical order (a transposed matrix).
    """
    probs = np.asarray(probs)
    gen = _generator(gen)
    if not 1 <= probs.ndim <= 2:
        raise RuntimeError(MULTINOMIAL_DIM)
    info = _dtype_info(probs.dtype)
    if info.kind != "float":
        raise RuntimeError(MULTINOMIAL_DTYPE.format(dtype=info.torch_name))
    n = operator.index(num_samples)
    if n <= 0:
        raise RuntimeError(MULTINOMIAL_N)
    categories = probs.shape[-1]
    if not replacement and n > categories:
        raise RuntimeError(MULTINOMIAL_TOO_MANY)
    if categories > 1 << 24:
        raise RuntimeError(MULTINOMIAL_CATEGORIES)
    rows = probs.reshape(probs.shape[0] if probs.ndim == 2 else 1, categories)
    out_shape = (n,) if probs.ndim == 1 else (rows.shape[0], n)
    if rows.shape[0] == 0:
        return np.zeros(out_shape, np.int64)
    if not replacement or n == 1:
        if order is None or probs.ndim != 2:
            order = tuple(range(rows.ndim))
        return _multinomial_top(gen, rows, n, info, order).reshape(out_shape)
    return _multinomial_search(gen, rows, n, info).reshape(out_shape)


def _multinomial_top(
    gen: Generator, rows: np.ndarray, n: int, info: _DType, order: Sequence[int]
) -> np.ndarray:
    """The fast path: ``topk(probs / exponential_(1), n)`` (``argmax`` for one sample)."""
    if rows.size == 0:
        raise RuntimeError(AMINMAX_EMPTY)
    wide = rows.astype(np.float64)
    if not (np.isfinite(wide).all() and (wide >= 0).all()):
        raise RuntimeError(MULTINOMIAL_INVALID)
    if (wide.sum(axis=1) == 0).any():
        raise RuntimeError(MULTINOMIAL_ZERO_SUM)
    q = fill_in_order(lambda s: exponential(gen, s, info.np, 1.0), rows.shape, order)
    with np.errstate(divide="ignore", invalid="ignore"):
        keys = (rows / q).astype(info.np)  # div_out(q, self, q), in the input's dtype
    keys = keys.astype(np.float64)  # exact: only for comparing
    if n == 1:  # the first largest, as PyTorch's argmax (a NaN, from 0 / 0, first of all)
        return np.argmax(keys, axis=1)
    return np.asarray(_top_keys(n)(keys), np.int64)


@functools.lru_cache(maxsize=64)
def _top_keys(n: int):
    """``topk(keys, n).indices`` as leafgrad's topk computes it: equal keys (or a NaN: 0 / 0
    from an exponential draw of exactly 0) in the order PyTorch's C++ partial sort leaves them
    (Note [libstdc++ orderings])."""
    import jax

    from .ops.reductions import _topk

    return jax.jit(lambda keys: _topk(keys, n, 1, True)[1])


def _multinomial_search(gen: Generator, rows: np.ndarray, n: int, info: _DType) -> np.ndarray:
    """``multinomial_with_replacement_apply``: row by row, check and accumulate the row in
    ``scalar_t`` (float for half and bfloat16), normalise, then binary-search each uniform."""
    acc = np.float64 if info.np == _F64 else np.float32
    out = np.empty((rows.shape[0], n), np.int64)
    with gen._lock:
        for i, row in enumerate(rows.astype(acc)):
            bad = ~(row >= 0) | ~np.isfinite(row)
            if bad.any():  # PyTorch checks each entry as it adds it: the first bad one decides
                first = row[int(np.argmax(bad))]
                raise RuntimeError(
                    MULTINOMIAL_NEGATIVE if not first >= 0 else MULTINOMIAL_NOT_FINITE
                )
            cum = np.cumsum(row, dtype=acc)  # sequential, in acc: PyTorch's loop
            total = cum[-1] if cum.size else acc(0)
            if not total > 0:
                raise RuntimeError(MULTINOMIAL_ZERO_SUM)
            cum = cum / total
            cum[-1] = 1
            u = gen._uniform64(n)
            # The kernel's loop is a lower bound: the first slot whose running sum reaches u.
            out[i] = np.searchsorted(cum.astype(np.float64), u, side="left")
    return out


# PyTorch seeds its default CPU generator from /dev/urandom when it is created (in 2.13
# ``torch.initial_seed()`` differs in every fresh process); ``Generator()`` starts at
# DEFAULT_SEED.
default_generator = Generator()
default_generator.seed()
