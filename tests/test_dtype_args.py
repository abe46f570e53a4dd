"""``dtype`` arguments as PyTorch takes them: a ``torch.dtype`` or Python's float/int/bool/complex
(float64, int64, bool, complex128); a str, a number, a tuple are refused with the parser's message
named after the op PyTorch's Python calls (``F.softmin``'s is ``softmax``, ``torch.norm``'s is
``linalg_vector_norm``); ``Tensor.type`` takes a legacy type or its full name only. A dtype a
kernel has no instance for is refused (``arange`` in bool, ``cumsum`` into bool) where leafgrad
computed a result. NumPy dtypes and scalar types are refused too (``np.dtype('float64')``
compares equal to ``float`` but is not it)."""

import numpy as np
import pytest
from conftest import DTYPE_NAMES, both

import leafgrad as lg

CALLS = {
    "ones": lambda m, v: m.ones(2, dtype=v),
    "tensor": lambda m, v: m.tensor([1.0], dtype=v),
    "arange": lambda m, v: m.arange(3, dtype=v),
    "to": lambda m, v: m.ones(2).to(v),
    "to kw": lambda m, v: m.ones(2).to(dtype=v),
    "sum": lambda m, v: m.ones(2).sum(dtype=v),
    "cumsum": lambda m, v: m.ones(2).cumsum(0, dtype=v),
    "softmax": lambda m, v: m.ones(2).softmax(0, dtype=v),
    "F.softmax": lambda m, v: m.nn.functional.softmax(m.ones(2), 0, dtype=v),
    "F.log_softmax": lambda m, v: m.nn.functional.log_softmax(m.ones(2), 0, dtype=v),
    "F.softmin": lambda m, v: m.nn.functional.softmin(m.ones(2), 0, dtype=v),
    "type": lambda m, v: m.ones(2).type(v),
    "new_ones": lambda m, v: m.ones(2).new_ones(2, dtype=v),
    "new_zeros": lambda m, v: m.ones(2).new_zeros((2,), dtype=v),
    "new_full": lambda m, v: m.ones(2).new_full((2,), 1, dtype=v),
    "view": lambda m, v: m.ones(4).view(v),
    "mean": lambda m, v: m.ones(2).mean(dtype=v),
    "vector_norm": lambda m, v: m.linalg.vector_norm(m.ones(2), dtype=v),
    "Tensor.norm": lambda m, v: m.ones(2).norm(dtype=v),
    "norm": lambda m, v: m.norm(m.ones(2), 2, dtype=v),
    "promote_types": lambda m, v: m.promote_types(v, m.float32),
    "promote_types 2": lambda m, v: m.promote_types(m.int8, v),
    "can_cast": lambda m, v: m.can_cast(v, m.float32),
    "can_cast 2": lambda m, v: m.can_cast(m.int64, v),
    "zeros": lambda m, v: m.zeros(2, dtype=v),
    "empty": lambda m, v: m.empty(2, dtype=v).zero_(),
    "full": lambda m, v: m.full((2,), 1, dtype=v),
    "as_tensor": lambda m, v: m.as_tensor([1], dtype=v),
    "asarray": lambda m, v: m.asarray([1], dtype=v),
    "zeros_like": lambda m, v: m.zeros_like(m.ones(2), dtype=v),
    "full_like": lambda m, v: m.full_like(m.ones(2), 2, dtype=v),
    "new_tensor": lambda m, v: m.ones(2).new_tensor([1], dtype=v),
    "empty_strided": lambda m, v: m.empty_strided((2,), (1,), dtype=v).zero_(),
    "randint": lambda m, v: m.randint(3, (2,), dtype=v).zero_(),
    "eye": lambda m, v: m.eye(2, dtype=v),
}

VALUES = {
    "float32": lambda m: m.float32,
    "int8": lambda m: m.int8,
    "float": lambda m: float,
    "int": lambda m: int,
    "bool": lambda m: bool,
    "complex": lambda m: complex,
    "None": lambda m: None,
    "str": lambda m: "float32",
    "torch str": lambda m: "torch.float32",
    "type name": lambda m: "torch.DoubleTensor",
    "bare type name": lambda m: "DoubleTensor",
    "number": lambda m: 5,
    "tuple": lambda m: (1,),
    "object": lambda m: object,
    "numpy float32": lambda m: np.float32,
    "numpy dtype float64": lambda m: np.dtype("float64"),
    "numpy dtype int64": lambda m: np.dtype("int64"),
    "numpy dtype bool": lambda m: np.dtype("bool"),
}


@pytest.mark.parametrize("value", list(VALUES))
@pytest.mark.parametrize("call", list(CALLS))
def test_dtype_argument(call, value):
    if call == "to" and value == "number":
        pytest.skip("a device index: the tests' virtual CUDA device (torch has none)")
    both(lambda m: CALLS[call](m, VALUES[value](m)), check_warnings=False)


KERNELS = {
    "arange": lambda m, d: m.arange(3, dtype=d),
    "arange float step": lambda m, d: m.arange(0, 1, 0.25, dtype=d),
    "arange zero step": lambda m, d: m.arange(0, 1, 0, dtype=d),
    "linspace": lambda m, d: m.linspace(0, 3, 4, dtype=d),
    "linspace negative steps": lambda m, d: m.linspace(0, 3, -1, dtype=d),
    "cumsum": lambda m, d: m.ones(3).cumsum(0, dtype=d),
    "cumprod": lambda m, d: m.ones(3).cumprod(0, dtype=d),
    "cumsum of ints": lambda m, d: m.ones(3, dtype=m.int64).cumsum(0, dtype=d),
    "nansum": lambda m, d: m.ones(3).nansum(dtype=d),
    "nansum dim": lambda m, d: m.ones(2, 3).nansum(1, dtype=d),
    "sum": lambda m, d: m.ones(3).sum(dtype=d),
    "prod": lambda m, d: m.ones(3).prod(dtype=d),
    "eye": lambda m, d: m.eye(2, dtype=d),
    "full": lambda m, d: m.full((2,), 1, dtype=d),
    "tensor": lambda m, d: m.tensor([1.5, -2], dtype=d),
}


@pytest.mark.parametrize("dtype", DTYPE_NAMES)
@pytest.mark.parametrize("call", list(KERNELS))
def test_dtype_a_kernel_has(call, dtype):
    both(lambda m: KERNELS[call](m, getattr(m, dtype)))


@pytest.mark.parametrize("first", ["class", "value"])
def test_a_class_and_a_number_are_different_calls(first):
    """The parser's binding cache keys ``dtype=int`` (a class) apart from ``dtype=5``."""
    order = [int, 5] if first == "class" else [5, int]
    for v in order + order[::-1]:
        both(lambda m, v=v: m.arange(3, dtype=v))
        both(lambda m, v=v: m.ones(2).sum(dtype=v))


class _Index:
    def __index__(self) -> int:
        return 0


DEVICE_VALUES = {
    "np.int64(0)": np.int64(0),
    "np.int32(1)": np.int32(1),
    "np.uint8(0)": np.uint8(0),
    "np.int64(-1)": np.int64(-1),
    "np.bool_": np.bool_(True),
    "np.float64": np.float64(0),
    "np.float32": np.float32(1),
    "np.complex64": np.complex64(1j),
    "np.complex128": np.complex128(1j),
    "__index__": _Index(),
    "list": [0],
    "tuple": (0,),
    "None": None,
}
DEVICE_CALLS = {
    "to": lambda m, v: m.ones(2).to(v),
    "to with dtype": lambda m, v: m.ones(2).to(v, m.float64),
    "to device=": lambda m, v: m.ones(2).to(device=v),
    "cuda": lambda m, v: m.ones(2).cuda(v),
    "device": lambda m, v: m.device(v),
    "device with type": lambda m, v: m.device("cuda", v),
    "zeros": lambda m, v: m.zeros(2, device=v),
}


@pytest.mark.skipif(lg.backends.cuda.is_built(), reason="JAX has a GPU backend here")
@pytest.mark.parametrize("value", list(DEVICE_VALUES))
@pytest.mark.parametrize("call", list(DEVICE_CALLS))
def test_device_argument(call, value, monkeypatch):
    """A device index may be a NumPy integer, as PyTorch's parser reads it (``THPUtils_checkLong``):
    ``x.to(np.int64(0))`` asks for an accelerator (none here, as in torch's CPU build); other
    types are refused by name. ``to`` reads a leading NumPy real or bool as a double (float64)
    and a complex128 as a complex (NumPy warns as a complex64 is read as a double)."""
    monkeypatch.delenv("LEAFGRAD_VIRTUAL_CUDA", raising=False)
    both(lambda m: str(DEVICE_CALLS[call](m, DEVICE_VALUES[value])))
