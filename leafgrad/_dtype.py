"""PyTorch's dtype objects, its default dtype and its type-promotion rules, over JAX dtypes."""

from __future__ import annotations

import threading

import jax.numpy as jnp
import numpy as np

__all__ = [
    "dtype",
    "get_default_dtype",
    "set_default_dtype",
    "promote_types",
    "result_type",
    "can_cast",
]


class dtype:
    """A PyTorch dtype: prints as ``torch.float32`` so output can be diffed against PyTorch."""

    __slots__ = ("name", "np", "_kind", "itemsize", "_legacy")

    def __init__(self, name: str, np_dtype, kind: str, legacy: str) -> None:
        self.name = name
        self.np = np.dtype(np_dtype)
        self._kind = kind  # "b" bool, "u"/"i" integer, "f" floating, "c" complex
        self.itemsize = self.np.itemsize
        self._legacy = legacy

    @property
    def is_floating_point(self) -> bool:
        return self._kind == "f"

    @property
    def is_complex(self) -> bool:
        return self._kind == "c"

    @property
    def is_signed(self) -> bool:
        return self._kind in "ifc"

    def to_real(self) -> dtype:
        return {complex64: float32, complex128: float64}.get(self, self)

    def to_complex(self) -> dtype:
        if self._kind == "c":
            return self
        if self is float16:
            raise NotImplementedError("leafgrad has no complex32 (torch.chalf) dtype")
        result = {float32: complex64, float64: complex128, bfloat16: complex64}.get(self)
        if result is None:
            raise RuntimeError(f"Unknown Complex ScalarType for {self._legacy}")
        return result

    def __repr__(self) -> str:
        return f"torch.{self.name}"

    def __reduce__(self):
        return (_by_name, (self.name,))


def _by_name(name: str) -> dtype:
    return _BY_NAME[name]


bool_ = dtype("bool", np.bool_, "b", "Bool")
uint8 = dtype("uint8", np.uint8, "u", "Byte")
int8 = dtype("int8", np.int8, "i", "Char")
int16 = dtype("int16", np.int16, "i", "Short")
int32 = dtype("int32", np.int32, "i", "Int")
int64 = dtype("int64", np.int64, "i", "Long")
float16 = dtype("float16", np.float16, "f", "Half")
bfloat16 = dtype("bfloat16", jnp.bfloat16, "f", "BFloat16")
float32 = dtype("float32", np.float32, "f", "Float")
float64 = dtype("float64", np.float64, "f", "Double")
complex64 = dtype("complex64", np.complex64, "c", "ComplexFloat")
complex128 = dtype("complex128", np.complex128, "c", "ComplexDouble")

ALL = (
    bool_,
    uint8,
    int8,
    int16,
    int32,
    int64,
    float16,
    bfloat16,
    float32,
    float64,
    complex64,
    complex128,
)
_BY_NAME = {d.name: d for d in ALL}
_BY_NP = {d.np: d for d in ALL}
# PyTorch's short names, which are the same objects.
ALIASES = {
    "float": float32,
    "double": float64,
    "half": float16,
    "short": int16,
    "int": int32,
    "long": int64,
    "cfloat": complex64,
    "cdouble": complex128,
}


def from_numpy_dtype(d) -> dtype:
    """The leafgrad dtype of a numpy/JAX dtype; raises TypeError for ones PyTorch lacks."""
    try:
        return _BY_NP[np.dtype(d)]
    except (KeyError, TypeError):
        raise TypeError(
            f"can't convert np.ndarray of type numpy.{np.dtype(d).type.__name__}. The only "
            "supported types "
            "are: float64, float32, float16, complex64, complex128, int64, int32, int16, int8, "
            "uint64, uint32, uint16, uint8, and bool."
        ) from None


def to_dtype(d) -> dtype:
    """Accept a leafgrad dtype (or a numpy/JAX dtype, or Python's float/int/bool/complex)."""
    if isinstance(d, dtype):
        return d
    if d is float:
        return float64
    if d is int:
        return int64
    if d is bool:
        return bool_
    if d is complex:
        return complex128
    return from_numpy_dtype(d)


# --- default dtype -------------------------------------------------------------------------------

_state = threading.local()
_DEFAULT = [float32]  # process-wide, as in PyTorch


def get_default_dtype() -> dtype:
    """The dtype of floating tensors made from Python floats (``torch.float32`` at start)."""
    return _DEFAULT[0]


def set_default_dtype(d: dtype) -> None:
    """Set the default floating dtype (a floating dtype object, as PyTorch requires)."""
    if not isinstance(d, dtype):
        raise TypeError(
            "invalid dtype object: only floating-point types are supported as the default type"
        )
    if d not in (float32, float64, float16, bfloat16):
        raise TypeError("only floating-point types are supported as the default type")
    _DEFAULT[0] = d


def default_complex_dtype() -> dtype:
    """The dtype of complex Python scalars in promotion (PyTorch's default complex dtype)."""
    d = get_default_dtype()
    if d is float16:
        raise NotImplementedError("leafgrad has no complex32 (torch.chalf) dtype")
    return complex128 if d is float64 else complex64


def inferred_complex_dtype() -> dtype:
    """The dtype ``tensor()`` infers for Python complex numbers."""
    d = get_default_dtype()
    if d is bfloat16:
        raise RuntimeError("invalid default scalar type for complex")
    return default_complex_dtype()


# --- promotion ---------------------------------------------------------------------------------

_INT_ORDER = (uint8, int8, int16, int32, int64)
_FLOAT_ORDER = (float16, bfloat16, float32, float64)


def _promote(a: dtype, b: dtype) -> dtype:
    if a is b:
        return a
    if a is bool_:
        return b
    if b is bool_:
        return a
    ka, kb = a._kind, b._kind
    if ka in "ui" and kb in "ui":
        if uint8 in (a, b):
            other = b if a is uint8 else a
            return int16 if other is int8 else other
        return a if _INT_ORDER.index(a) > _INT_ORDER.index(b) else b
    if ka in "ui":
        return b
    if kb in "ui":
        return a
    if ka == "f" and kb == "f":
        if {a, b} == {float16, bfloat16}:
            return float32
        return a if _FLOAT_ORDER.index(a) > _FLOAT_ORDER.index(b) else b
    if ka == "c" and kb == "c":
        return a if a.itemsize > b.itemsize else b
    c, f = (a, b) if ka == "c" else (b, a)
    return complex128 if (f is float64 or c is complex128) else complex64


_PROMOTE = {(a, b): _promote(a, b) for a in ALL for b in ALL}


def promote_types(type1: dtype, type2: dtype) -> dtype:
    """The smallest dtype both can be converted to, as ``torch.promote_types``."""
    return _PROMOTE[to_dtype(type1), to_dtype(type2)]


def _combine_categories(higher: dtype | None, lower: dtype | None) -> dtype | None:
    # PyTorch's at::native::combine_categories: a higher-priority operand wins unless the lower
    # one belongs to a higher category (bool < integer < floating < complex).
    if higher is None:
        return lower
    if lower is None:
        return higher
    if higher.is_complex:
        return higher
    if lower.is_complex:
        return higher.to_complex() if higher.is_floating_point else lower
    if higher.is_floating_point:
        return higher
    if higher is bool_ or lower.is_floating_point:
        return _PROMOTE[higher, lower]
    return higher


def _skip(a: dtype | None, b: dtype) -> dtype:
    return b if a is None else _PROMOTE[a, b]


def scalar_dtype(value) -> dtype:
    """The dtype PyTorch gives a Python scalar operand (a wrapped number) for promotion."""
    if isinstance(value, bool):
        return bool_
    if isinstance(value, int):
        return int64
    if isinstance(value, complex):
        return default_complex_dtype()
    return get_default_dtype()


def result_type_of(operands) -> dtype:
    """Promote operands given as ``(dtype, ndim)`` pairs or Python scalars (ndim ``None``)."""
    dim = zero = wrapped = None
    for op in operands:
        if isinstance(op, tuple):
            d, ndim = op
            if ndim > 0:
                dim = _skip(dim, d)
            else:
                zero = _skip(zero, d)
        else:
            wrapped = _skip(wrapped, scalar_dtype(op))
    return _combine_categories(dim, _combine_categories(zero, wrapped))


def result_type(tensor1, tensor2) -> dtype:
    """``torch.result_type``: the dtype an arithmetic op on the two operands would produce."""
    return result_type_of([_operand(tensor1), _operand(tensor2)])


def _operand(x):
    from ._tensor import Tensor

    if isinstance(x, Tensor):
        return (x.dtype, x.ndim)
    if isinstance(x, (bool, int, float, complex)):
        return x
    raise TypeError(f"result_type(): argument must be Tensor or Number, not {type(x).__name__}")


def can_cast(from_: dtype, to: dtype) -> bool:
    """``torch.can_cast``: whether the cast is allowed under PyTorch's same-kind casting rules."""
    order = "biufc"
    kf, kt = from_._kind, to._kind
    rank = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}
    del order
    return rank[kf] <= rank[kt]


# Note [Float to integer casts]: PyTorch's CPU kernels convert with x86's truncating
# instructions, which give the "integer indefinite" value (the type's minimum) for NaN, infinities
# and values whose truncation is out of range, where JAX saturates or gives 0. int64 and uint8
# results are converted through int64, int32, int16 and int8 results through int32, keeping the
# low bits (measured on PyTorch 2.13, CPU: ``tensor([70000.]).to(int16)`` is 4464,
# ``tensor([inf]).to(int8)`` is 0); half and bfloat16 convert through float32, exactly. Complex
# values lose their imaginary part first, except for bool, which tests both parts.
_WIDE = {np.dtype(np.int64): np.int64, np.dtype(np.uint8): np.int64}


def cast_array(x, to):
    """``x`` (a jax array) converted to the numpy dtype ``to`` as PyTorch's CPU copy kernel does
    (Note [Float to integer casts])."""
    to = np.dtype(to)
    if x.dtype == to:
        return x
    if to == np.bool_:
        return x != 0
    if jnp.iscomplexobj(x) and to.kind != "c":
        x = jnp.real(x)
    if to.kind not in "iu" or not jnp.issubdtype(x.dtype, jnp.floating):
        return x.astype(to)
    if x.dtype.itemsize < 4:
        x = x.astype(np.float32)
    wide = _WIDE.get(to, np.int32)
    bound = float(np.iinfo(wide).max) + 1.0  # a power of two: exact in every float type
    # the truncation is in range: -bound - 1 < x < bound (x = -bound - 0.5 truncates to -bound)
    ok = (x > -bound - 1.0) & (x < bound)
    out = jnp.where(ok, jnp.where(ok, x, 0).astype(wide), np.iinfo(wide).min)
    return out.astype(to)


def host_cast(values: np.ndarray, to) -> np.ndarray:
    """NumPy's ``values.astype(to)`` rounded as PyTorch rounds: a double reaches a half type
    through float (``c10::Half`` and ``c10::BFloat16`` are made from a float), as XLA's convert
    does too, where NumPy rounds once (0.0291213991378954 is 0.02911376953125 in float16, not
    0.0291290283203125)."""
    to = np.dtype(to)
    if to.itemsize == 2 and values.dtype == np.float64 and to in HALF_NP:
        values = values.astype(np.float32)
    return values.astype(to)


# the half types' NumPy dtypes
HALF_NP = (np.dtype(jnp.float16), np.dtype(jnp.bfloat16))

# The half types' JAX array dtypes: PyTorch's CPU kernels compute them in float (Note [Half types
# in float] in ops/dispatch.py)
HALF_ARRAY_TYPES = (jnp.float16, jnp.bfloat16)


# --- the public functions, with PyTorch's argument parser's checks --------------------------------


def python_number_type(d) -> bool:
    """Whether ``d`` is Python's float, int, bool or complex, which PyTorch takes for a dtype
    (by identity: a NumPy dtype compares equal to the Python type it stands for)."""
    return d is float or d is int or d is bool or d is complex


def _parsed(op: str, name: str, position: int, d) -> dtype:
    """A ``torch.dtype`` argument: a dtype, or Python's float/int/bool/complex for theirs."""
    if isinstance(d, dtype):
        return d
    if python_number_type(d):
        return to_dtype(d)
    from ._errors import MUST_BE, py_typename

    raise TypeError(MUST_BE.format(op, name, position, "torch.dtype", py_typename(d)))


def public_promote_types(type1, type2) -> dtype:
    """``torch.promote_types``: the smallest dtype both can be converted to."""
    a = _parsed("promote_types", "type1", 1, type1)
    return promote_types(a, _parsed("promote_types", "type2", 2, type2))


def public_can_cast(from_, to) -> bool:
    """``torch.can_cast``: whether the cast is allowed under PyTorch's same-kind casting rules."""
    a = _parsed("can_cast", "from_", 1, from_)
    return can_cast(a, _parsed("can_cast", "to", 2, to))


public_promote_types.__name__ = public_promote_types.__qualname__ = "promote_types"
public_can_cast.__name__ = public_can_cast.__qualname__ = "can_cast"
