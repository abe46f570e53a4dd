"""The dtypes PyTorch's CPU kernels refuse, and how they refuse them.

Note [Kernel dtype refusals]: a PyTorch op whose kernel has no version for an input's dtype raises
(``"kthvalue_cpu" not implemented for 'Bool'``, ``clamp is not supported for complex types``)
where JAX would compute something, or raise its own TypeError. ``REFUSALS`` lists, per table op,
the dtype kinds of its tensor operands that PyTorch refuses (``"b"`` bool, ``"u"``/``"i"``
integer, ``"f"`` floating, ``"c"`` complex, or a set of dtype names such as ``{"float16"}``) with
the exception: a kernel name (AT_DISPATCH's NotImplementedError) or an exception instance's type and
text. Dispatch checks it when it makes an op's plan, so a call costs nothing more; each entry was
read from PyTorch 2.13 on CPU.
"""

from __future__ import annotations

from .._dtype import result_type_of
from .._errors import KERNEL_DTYPE

_CLAMP_COMPLEX = NotImplementedError("clamp is not supported for complex types")


def _complex_minmax(name: str):
    return RuntimeError(f"{name} not implemented for complex tensors.")


_FLOOR_DIVIDES = """floor_divide floor_divide_other floor_divide_self floor_divide_self_other
    rfloor_divide_other rfloor_divide_self rfloor_divide_self_other"""
_REMAINDERS = "remainder remainder_scalar rremainder_other rremainder_self rremainder_self_other"

_LOW = frozenset({"float16", "bfloat16"})


def _low_precision(name: str):
    """linalg's ``checkFloatingOrComplex(..., allow_low_precision_dtypes=false)``."""
    return lambda dt: RuntimeError(f"{name}: Low precision dtypes not supported. Got {dt._legacy}")


REFUSALS: dict[str, tuple] = {
    # LAPACK has no half-precision kernels: PyTorch's linalg refuses float16 and bfloat16
    "linalg_cholesky_ex": ((_LOW, "cholesky_cpu"),),
    "linalg_inv_ex": ((_LOW, _low_precision("linalg.inv")),),
    "linalg_eigh": ((_LOW, "linalg_eigh_cpu"),),
    "linalg_svd": ((_LOW, "linalg_svd_cpu"),),
    "linalg_qr": ((_LOW, "geqrf_cpu"),),
    "linalg_solve_ex": ((_LOW, "lu_cpu"),),
    "linalg_det": ((_LOW, "lu_cpu"),),
    "linalg_slogdet": ((_LOW, _low_precision("linalg.slogdet")),),
    "linalg_lu_factor_ex": ((_LOW, "lu_cpu"),),
    "linalg_lu": ((_LOW, "lu_cpu"),),
    "linalg_lstsq": (
        (_LOW, RuntimeError("This function doesn't handle types other than float and double")),
    ),
    "linalg_solve_triangular": ((_LOW, "triangular_solve_cpu"),),
    "linalg_householder_product": ((_LOW, "orgqr_cpu"),),
    "kthvalue": (("bc", "kthvalue_cpu"),),
    "median_all": (("bc", "median_cpu"),),
    "median_dim": (("bc", "median_out"),),
    "nanmedian_all": (("bc", "median_cpu"),),
    "nanmedian_dim": (("bc", "median_out"),),
    "mode": (("c", "mode_cpu"),),
    "topk": (
        ("b", RuntimeError("topk does not support bool dtypes on CPU")),
        ("c", RuntimeError(" topk does not support complex dtypes on CPU")),
    ),
    "aminmax": (("c", "aminmax_cpu"),),
    "cummax": (("c", "cummax_cpu"),),
    "cummin": (("c", "cummin_cpu"),),
    "floor": (("c", NotImplementedError("floor is not supported for complex inputs")),),
    "ceil": (("c", NotImplementedError("ceil is not supported for complex inputs")),),
    "trunc": (("c", NotImplementedError("trunc is not supported for complex inputs")),),
    "frac": (("c", "frac_cpu"),),
    "atan2": (("c", "atan2_cpu"),),
    "hypot": (("c", "hypot_cpu"),),
    "clamp_scalar": (("c", _CLAMP_COMPLEX),),
    "clamp_tensor": (("c", _CLAMP_COMPLEX),),  # bool: clamp_cpu with both bounds (_clamp)
    "clamp_min_tensor": (("c", _CLAMP_COMPLEX),),
    "clamp_max_tensor": (("c", _CLAMP_COMPLEX),),
    "nn.clamp_min": (("c", _CLAMP_COMPLEX),),
    "nn.relu": (("c", _CLAMP_COMPLEX),),
    "nn.hardtanh": (("c", _CLAMP_COMPLEX),),
    "nn.threshold": (("c", "threshold_cpu"),),
    "minimum": (("c", _complex_minmax("minimum")),),
    "maximum": (("c", _complex_minmax("maximum")),),
    "fmin": (("c", _complex_minmax("fmin")),),
    "fmax": (("c", _complex_minmax("fmax")),),
    "nansum": (("c", RuntimeError("nansum on CPU does not support complex inputs")),),
    "isneginf": (("c", RuntimeError("isneginf does not support complex inputs.")),),
    "isposinf": (("c", RuntimeError("isposinf does not support complex inputs.")),),
    "linalg_cross": (("b", "cross"),),
    "pdist": (({"float16", "bfloat16"}, "pdist"),),
    **{name: (("c", "div_floor_cpu"),) for name in _FLOOR_DIVIDES.split()},
    **{name: (("c", "remainder_cpu"),) for name in _REMAINDERS.split()},
    **{name: (("c", "fmod_cpu"),) for name in ("fmod", "fmod_scalar")},
    **{
        f"{cmp}{suffix}": (("c", f"{cmp}_cpu"),)
        for cmp in ("lt", "le", "gt", "ge")
        for suffix in ("", "_scalar_", "_tensor_")
    },
}


def check(name: str, meta) -> None:
    """Raise PyTorch's error where op ``name``'s kernel refuses a tensor operand's dtype (``meta``:
    dispatch's per-operand ``(dtype, ndim)``, or the number/None of a non-tensor operand)."""
    refusals = REFUSALS.get(name)
    if refusals is None:
        return
    for m in meta:
        if not isinstance(m, tuple):
            continue
        dt = m[0]
        if dt.is_complex and len(meta) > 1:
            # the kernel runs in the operands' common dtype: complex128 for a complex64 0-d
            # tensor with a float64 one
            dt = result_type_of(meta)
        _refuse(refusals, dt)
    if any(isinstance(m, complex) for m in meta):
        # a Python complex makes the iterator's common dtype complex (``x.lt(1j)``)
        common = result_type_of(meta)
        if common.is_complex:
            _refuse(refusals, common)


def _refuse(refusals, dt) -> None:
    for kinds, error in refusals:
        if dt._kind in kinds if isinstance(kinds, str) else dt.name in kinds:
            if isinstance(error, str):
                raise NotImplementedError(KERNEL_DTYPE.format(error, dt._legacy))
            if callable(error) and not isinstance(error, BaseException):
                raise error(dt)
            raise type(error)(*error.args)
