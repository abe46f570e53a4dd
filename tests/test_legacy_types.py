"""PyTorch's legacy tensor types (``torch.FloatTensor``, ``torch.cuda.LongTensor``, ...): their
construction, ``isinstance``, reprs, ``Tensor.type`` with them, and the deprecated
``set_default_tensor_type``, against torch 2.13."""

from __future__ import annotations

import warnings

import pytest
from conftest import both, lg

CASES = {
    "values": lambda m: m.FloatTensor([1, 2]),
    "sizes": lambda m: m.FloatTensor(2, 3).shape,
    "empty": lambda m: m.FloatTensor(),
    "size_object": lambda m: m.FloatTensor(m.Size([2])).shape,
    "tuple_values": lambda m: m.FloatTensor((1, 2)),
    "other_dtype_tensor": lambda m: m.FloatTensor(m.ones(2, dtype=m.float64)),
    "same_dtype_tensor": lambda m: m.FloatTensor(m.ones(2)),
    "long_tensor_of_long": lambda m: m.FloatTensor(m.tensor([1, 2])),
    "isinstance": lambda m: [
        isinstance(m.ones(2, dtype=d), m.FloatTensor) for d in (m.float32, m.float64)
    ],
    "isinstance_int": lambda m: [
        isinstance(m.ones(2, dtype=d), m.IntTensor) for d in (m.int32, m.int64)
    ],
    "dtype": lambda m: [getattr(m, n).dtype for n in ("FloatTensor", "LongTensor", "BoolTensor")],
    "repr": lambda m: [repr(m.FloatTensor), repr(m.cuda.FloatTensor), repr(m.HalfTensor)],
    "long_truncates": lambda m: m.LongTensor([1.5, 2]),
    "type_with_class": lambda m: m.ones(2).type(m.LongTensor),
    "type_with_name": lambda m: m.ones(2).type("torch.IntTensor"),
    "type_with_dtype": lambda m: m.ones(2).type(m.float64),
    "bool": lambda m: m.BoolTensor([1, 0]),
    "byte": lambda m: m.ByteTensor([1, 2]),
    "half": lambda m: m.HalfTensor([1]),
    "string": lambda m: m.FloatTensor("a"),
    "number": lambda m: m.FloatTensor(2.5),
    "negative_size": lambda m: m.FloatTensor(-1),
    "negative_second_size": lambda m: m.FloatTensor(1, -2),
    "not_a_subclass": lambda m: issubclass(m.FloatTensor, m.Tensor),
    "is_cuda": lambda m: (m.FloatTensor.is_cuda, m.cuda.FloatTensor.is_cuda),
    "fill": lambda m: m.DoubleTensor(2).fill_(1),
    "requires_grad_": lambda m: m.FloatTensor([1, 2]).requires_grad_(),
    "strides": lambda m: m.FloatTensor(2, 3).stride(),
    "device_keyword": lambda m: (lambda x: (x.shape, x.device, x.dtype))(
        m.FloatTensor(2, 3, device="cpu")
    ),
    "leaf_and_grad": lambda m: (lambda x: ((x * x).sum().backward(), x.grad, x.is_leaf))(
        m.DoubleTensor([1.0, 3.0]).requires_grad_()
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_legacy_types_match_torch(name):
    both(lambda m: CASES[name](m))


@pytest.mark.parametrize(
    "arg", ["DoubleTensor", "torch.DoubleTensor", "LongTensor", "float64", "torch.HalfTensor"]
)
def test_set_default_tensor_type(arg):
    def run(m):
        t = getattr(m, arg) if arg in ("DoubleTensor", "LongTensor", "float64") else arg
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # deprecated; PyTorch warns once a process
                m.set_default_tensor_type(t)
            return m.ones(1).dtype, m.get_default_dtype()
        finally:
            m.set_default_dtype(m.float32)

    both(run, check_warnings=False)


def test_set_default_tensor_type_warns_once():
    lg.set_default_tensor_type(lg.FloatTensor)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        lg.set_default_tensor_type(lg.FloatTensor)
    assert caught == []  # the first call (here or earlier in the process) warned


def test_cuda_types_move_to_the_cuda_device():
    if not lg.cuda.is_available():
        pytest.skip("no cuda device (real or virtual)")
    x = lg.ones(2).type(lg.cuda.DoubleTensor)
    assert x.device.type == "cuda" and x.dtype is lg.float64
    assert isinstance(x, lg.cuda.DoubleTensor) and not isinstance(x, lg.DoubleTensor)
    assert x.type() == "torch.cuda.DoubleTensor"
    back = x.type(lg.FloatTensor)
    assert back.device.type == "cpu" and back.dtype is lg.float32
    y = lg.cuda.LongTensor([1, 2])
    assert y.device.type == "cuda" and y.dtype is lg.int64


# a tensor given to a legacy constructor or Tensor.new is aliased (AliasBackward0, a view of it)
# when its dtype and device type are the constructor's; a device keyword with it is refused
LEGACY_TENSOR_CALLS = [
    "m.ones(2).new(x)",
    "m.FloatTensor(x)",
    "m.DoubleTensor(x)",
    "m.ones(2, dtype=m.float64).new(x)",
    "m.ones(2).new(m.ones(2), device=None)",
    "m.FloatTensor(m.ones(2), device='cpu')",
    "m.FloatTensor(m.ones(2), device=None)",
    "m.ones(2).new(m.ones(2, dtype=m.int32))",
    "m.LongTensor(m.ones(2))",
    "m.FloatTensor([1, 2])",
    "m.FloatTensor([1, 2], device='cpu')",
    "m.FloatTensor()",
    "m.ones(2).new([3, 4])",
    "m.ones(2).new()",
    "m.FloatTensor('a')",
    "m.FloatTensor(2.5)",
]


@pytest.mark.parametrize("call", LEGACY_TENSOR_CALLS)
def test_legacy_constructors_of_a_tensor(call):
    def fn(m):
        x = m.ones(2, requires_grad=True)
        r = eval(call)
        out = [r, r.requires_grad, r.is_leaf, r._base is x]
        if r.requires_grad:
            r.sum().backward()
            out.append(x.grad)
        return out

    both(fn)


def test_cuda_legacy_types_of_a_tensor_check_the_device_type():
    if not lg.cuda.is_available():
        pytest.skip("no cuda device (real or virtual)")
    options = (
        "TensorOptions(dtype=float, device={}, layout=Strided, requires_grad=false (default), "
        "pinned_memory=false (default), memory_format=(nullopt))"
    )
    with pytest.raises(TypeError) as err:
        lg.cuda.FloatTensor(lg.ones(2))
    assert str(err.value) == f"expected {options.format('cuda')} (got {options.format('cpu')})"
    with pytest.raises(TypeError) as err:
        lg.FloatTensor(lg.ones(2, device="cuda"))
    assert str(err.value) == f"expected {options.format('cpu')} (got {options.format('cuda:0')})"
    x = lg.ones(2, device="cuda", requires_grad=True)
    y = lg.cuda.FloatTensor(x)
    assert y._base is x and y.device == x.device and y.grad_fn.name() == "AliasBackward0"
