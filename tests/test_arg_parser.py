"""PyTorch's argument parser's refusals of arguments of the wrong type, against torch 2.13.

``int`` and int-list arguments (``leafgrad/_arg_check.py``, from the schemas in
``leafgrad/_int_args.py``), spread-out int lists (``x.permute(1.0, 0)``), overloaded ops that
list their signatures (``x.sum(1.5)``), and the ops whose frontends check by hand (``split``,
``view``, ``narrow``, ``F.softmax``, ``F.one_hot``, keyword arguments of binary ops). Each
call runs in both libraries: the same exception type and text, or the same result.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import both, lg

import leafgrad._int_args as table


def x_of(m):
    return m.arange(12.0).reshape(3, 4)


WRONG = {
    "float": 1.0,
    "bool": True,
    "str": "a",
    "none": None,
    "np_float": np.float64(1.0),
    "np_int": np.int64(1),
    "float_tensor": "float_tensor",
    "int_tensor": "int_tensor",
    "int_vector": "int_vector",
}


def value(m, name):
    v = WRONG[name]
    if v == "float_tensor":
        return m.tensor(1.0)
    if v == "int_tensor":
        return m.tensor(1)
    if v == "int_vector":
        return m.tensor([1, 0])
    return v


CALLS = {
    "tril": lambda m, x, v: x.tril(v),
    "triu_fn": lambda m, x, v: m.triu(x, v),
    "triu_kw": lambda m, x, v: x.triu(diagonal=v),
    "transpose": lambda m, x, v: x.transpose(v, 1),
    "transpose_second": lambda m, x, v: m.transpose(x, 0, v),
    "unsqueeze": lambda m, x, v: x.unsqueeze(v),
    "select": lambda m, x, v: x.select(0, v),
    "topk": lambda m, x, v: x.topk(v),
    "kthvalue": lambda m, x, v: x.kthvalue(v),
    "chunk": lambda m, x, v: x.chunk(v),
    "cumsum": lambda m, x, v: x.cumsum(v),
    "cumsum_kw": lambda m, x, v: x.cumsum(dim=v),
    "argmax": lambda m, x, v: x.argmax(v),
    "softmax": lambda m, x, v: x.softmax(v),
    "log_softmax_fn": lambda m, x, v: m.log_softmax(x, v),
    "F_softmax": lambda m, x, v: m.nn.functional.softmax(x, v),
    "F_log_softmax": lambda m, x, v: m.nn.functional.log_softmax(x, dim=v),
    "F_softmin": lambda m, x, v: m.nn.functional.softmin(x, v),
    "one_hot": lambda m, x, v: m.nn.functional.one_hot(m.tensor([1, 2]), v),
    "cat": lambda m, x, v: m.cat([x, x], v),
    "stack": lambda m, x, v: m.stack([x, x], dim=v),
    "gather": lambda m, x, v: x.gather(v, m.tensor([[0]])),
    "index_select": lambda m, x, v: x.index_select(v, m.tensor([0])),
    "unbind": lambda m, x, v: x.unbind(v),
    "flatten": lambda m, x, v: x.flatten(v),
    "diagonal": lambda m, x, v: x.diagonal(v),
    "unfold": lambda m, x, v: x.unfold(0, v, 1),
    "roll": lambda m, x, v: x.roll(v, 0),
    "roll_dims": lambda m, x, v: x.roll(1, dims=v),
    "flip": lambda m, x, v: x.flip(v),
    "repeat": lambda m, x, v: x.repeat(v),
    "permute": lambda m, x, v: x.permute(v),
    "amax": lambda m, x, v: x.amax(v),
    "logsumexp": lambda m, x, v: x.logsumexp(v),
    "sum": lambda m, x, v: x.sum(v),
    "sum_kw": lambda m, x, v: x.sum(dim=v),
    "sum_fn": lambda m, x, v: m.sum(x, v),
    "mean": lambda m, x, v: x.mean(v),
    "std": lambda m, x, v: x.std(v),
    "max": lambda m, x, v: x.max(v),
    "min_kw": lambda m, x, v: x.min(dim=v),
    "squeeze": lambda m, x, v: x.squeeze(v),
    "narrow_start": lambda m, x, v: x.narrow(0, v, 1),
    "narrow_fn": lambda m, x, v: m.narrow(x, v, 0, 1),
    "movedim": lambda m, x, v: x.movedim(v, 1),
    "sort": lambda m, x, v: x.sort(v),
    "argsort_kw": lambda m, x, v: x.argsort(dim=v),
    "split": lambda m, x, v: x.split(v),
    "split_dim": lambda m, x, v: x.split(2, v),
    "view": lambda m, x, v: x.view(v),
}


@pytest.mark.parametrize("wrong", list(WRONG))
@pytest.mark.parametrize("call", list(CALLS))
def test_argument_types_as_torch(call, wrong):
    both(lambda m: CALLS[call](m, x_of(m), value(m, wrong)))


SPREAD = [
    "x.permute(0, 1.0)",
    "x.permute(1.0, 0)",
    "x.permute(True, 0)",
    "x.permute(0, True)",
    "x.expand(3, 4.0)",
    "x.expand(3.0, 4)",
    "x.repeat(2, 1.0)",
    "x.flip(0.0, 1)",
    "x.view(2, 6.0)",
    "x.view(2.0, 6)",
    "x.view((True, 12))",
    "x.view([2.0, 6])",
    "x.view(m.tensor([12]))",
    "x.reshape(2, 6.0)",
    "x.reshape(m.tensor([12]))",
    "x.tile(2.0, 1)",
    "x.new_zeros(2.0, 3)",
    "x.sum((0, 1.0))",
    "x.amax((0, 1.0))",
    "x.amax([1.0])",
    "x.roll((1, 2.0), (0, 1))",
    "x.roll((1, True), (0, 1))",
    "x.sum(m.tensor([0, 1]))",
    "x.std(correction=0.5)",
    "x.std(0, correction=1.0)",
    "x.var(1, unbiased=1.0)",
    "x.movedim((0,), (1,))",
    "x.narrow(0, m.tensor(1), 1)",
    "x.narrow(0, m.tensor([1]), 1)",
    "x.sort(stable=True, dim=1)",
    "x.split(m.tensor(2))",
    "x.split(m.tensor(2.5))",
    "x.split([1, 2.0])",
    "x.split((1, 2), 0.0)",
    "x.split(2, dim=None)",
    "x.max(m.ones(4))",
    "x.mul(x, alpha=2)",
    "m.mul(x, x, out=None)",
    "m.atan2(x, x, out=None)",
    "x.multiply(x, foo=1)",
    "m.sub(x, x, foo=1)",
    # NumPy's keyword names, and spread-out lists given by keyword
    "x.sum(axis=1)",
    "x.sum(1, keepdims=True)",
    "m.sum(x, axis=0, keepdims=True)",
    "x.mean(axis=0)",
    "x.std(axis=0)",
    "x.max(axis=1)",
    "x.squeeze(axis=0)",
    "x.cumsum(axis=1)",
    "x.softmax(axis=1)",
    "x.argmax(axis=1)",
    "x.unsqueeze(axis=0)",
    "x.amax(axis=(0, 1), keepdims=True)",
    "x.flip(dims=(0,))",
    "m.flip(x, dims=[1])",
    "x.permute(dims=(1, 0))",
    "x.repeat(repeats=(2, 1))",
]


@pytest.mark.parametrize("text", SPREAD)
def test_spread_lists_and_overloads_as_torch(text):
    both(lambda m: eval(text, {"m": m, "x": x_of(m)}))


def test_the_tables_list_real_ops():
    """Every op the generated tables name is one leafgrad has, and the checks are installed."""
    for name in table.METHODS:
        fn = getattr(lg.Tensor, name)
        assert getattr(fn, "_leafgrad_int_checked", False), name
    for name in table.FUNCTIONS:
        fn = getattr(lg, name)
        assert getattr(fn, "_leafgrad_int_checked", False), name
    assert {"tril", "topk", "transpose", "softmax", "select"} <= set(table.METHODS)
    assert {"sum", "std", "squeeze", "narrow"} <= set(table.OVERLOADED_METHODS)
    assert {"permute", "repeat", "expand", "flip"} <= table.VARARGS


OTHER = [
    # grad mode's parser takes a bool only
    "m.set_grad_enabled(1)",
    "m.set_grad_enabled(None)",
    "m.set_grad_enabled(np.bool_(True))",
    # a tensor inside a list is one number
    "m.tensor([m.ones(1), m.ones(1)])",
    "m.tensor([m.tensor(1.0), m.tensor(2)])",
    "m.tensor([[m.ones(2)]])",
    "m.tensor([m.ones(2), m.ones(2)])",
    "m.tensor([m.ones(1, 1), m.ones(1)])",
    # Python ints read as C long long, then checked against the dtype
    "m.tensor(2**63)",
    "m.tensor(-(2**63) - 1)",
    "m.tensor([1, 2**64])",
    "m.tensor(2**63, dtype=m.int64)",
    "m.tensor(2**70, dtype=m.int8)",
    "m.tensor(2**40, dtype=m.int32)",
    "m.tensor(-255, dtype=m.uint8)",
    "m.tensor(-256, dtype=m.uint8)",
    "m.tensor([2**63], dtype=m.float32)",
    "m.as_tensor([2**64])",
    # numbers no Scalar holds, as operands
    "m.ones(2) + 2**64",
    "m.ones(2) * (-(2**63) - 1)",
    "m.ones(2) > 2**70",
    "m.ones(2).clamp(max=2**70)",
    "m.where(m.ones(2) > 0, 2**70, 1.0)",
    "m.ones(2).pow(2**70)",
    "m.ones(2) ** (2**64)",
    "m.pow(m.ones(2), -(2**70))",
    "m.ones(2) + (2**63 - 1)",
    "m.ones(2, dtype=m.int64) * (-(2**63))",
]


@pytest.mark.parametrize("text", OTHER)
def test_other_parser_checks_as_torch(text):
    both(lambda m: eval(text, {"m": m, "np": np}))


def test_a_number_only_uint64_holds_is_refused_clearly():
    """PyTorch reads 2**63 as a uint64 Scalar; leafgrad's jitted ops take int64 numbers, so it
    refuses the number with a clear error instead of a wrong or a raw JAX one."""
    with pytest.raises(OverflowError, match="fits only uint64"):
        lg.ones(2) + 2**63


def test_hook_handles_are_torch_utils_hooks_handles():
    x = lg.ones(2, requires_grad=True)
    handle = x.register_hook(lambda g: g)
    assert type(handle) is lg.utils.hooks.RemovableHandle
    assert type(handle).__module__ == "leafgrad.utils.hooks"


# randint's four overloads (high or low, high; with or without a generator): a call binds to one
# or gets the parser's message (a missing argument, a wrong type, a bare int for the size)
RANDINT_CALLS = [
    "randint(low=2, size=(3,))",
    "randint(2, size=(3,), low=1)",
    "randint(low=2)",
    "randint(3)",
    "randint(size=(3,))",
    "randint(low=1, high=3)",
    "randint(1, 3, (2,))",
    "randint(1, 3, 4)",
    "randint(5, (2,), low=1)",
    "randint(high=5, size=(2,), dtype=m.int32)",
    "randint(low=1, high=5, size=[2, 2])",
    "randint(2.5, (2,))",
    "randint(1, 5.5, (2,))",
    "randint(5, 3)",
    "randint(2, size=3)",
    "randint(1, 2, 3, dtype=m.int32)",
    "randint(True, (2,))",
    "randint(5, (2,), generator=None)",
    "randint(5, (2,), generator=m.Generator().manual_seed(3))",
    "randint(5, (2,), device=None, dtype=None, layout=None)",
    "randint(5, m.Size([2]))",
    "randint(m.tensor(5), (2,))",
    "randint(5, (m.tensor(2),))",
    "randint(5, (2,), out=None, requires_grad=False)",
    "randint(5, (2,), foo=1)",
]


@pytest.mark.parametrize("call", RANDINT_CALLS)
def test_randint_overloads_as_torch(call):
    def fn(m):
        m.manual_seed(0)
        return eval("m." + call)

    both(fn)


TENSORS_IN_OTHER_SLOTS = {
    "conv1d stride": lambda m, x, t: m.nn.functional.conv1d(x[None], x[:2, :, None], t, t),
    "conv1d 0-d stride": lambda m, x, t: m.nn.functional.conv1d(
        x[None], x[:2, :, None], t, m.tensor(1)
    ),
    "conv1d float 0-d stride": lambda m, x, t: m.nn.functional.conv1d(
        x[None], x[:2, :, None], t, m.tensor(1.0)
    ),
    "conv1d padding": lambda m, x, t: m.nn.functional.conv1d(
        x[None], x[:2, :, None], t, 1, m.tensor([0, 1])
    ),
    "add three": lambda m, x, t: m.add(x, x, t),
    "sum dim": lambda m, x, t: m.sum(x, t),
    "sum 0-d dim": lambda m, x, t: m.sum(x, m.tensor(1)),
    "cumsum dim": lambda m, x, t: m.cumsum(x, t),
    "clamp": lambda m, x, t: m.clamp(x, x[0], x[1]),
    "where": lambda m, x, t: m.where(x > 0, x, t[0]),
    "lerp": lambda m, x, t: m.lerp(x, x * 2, x),
    "avg_pool1d": lambda m, x, t: m.nn.functional.avg_pool1d(x[None], t),
    "method view": lambda m, x, t: x.view(t),
    "method add": lambda m, x, t: x.add(x, t),
}


@pytest.mark.parametrize("call", list(TENSORS_IN_OTHER_SLOTS))
def test_tensors_in_slots_that_take_other_types(call):
    """A call of tensors only binds without a check as far as the signatures take tensors
    there: a tensor ``stride`` after a tensor ``bias`` is refused as PyTorch's parser refuses it
    (it was read with ``int()``)."""

    def fn(m):
        x = m.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -0.5], [1.0, 2.0, 3.0]])
        t = m.tensor([0.1, 0.2])
        return TENSORS_IN_OTHER_SLOTS[call](m, x, t)

    both(fn)


class _Index:
    """Not an int, but has ``__index__``: a SymInt argument takes it, a plain int one does not."""

    def __index__(self):
        return 0


INT_VALUES = {
    "tensor_0d": lambda m: m.tensor(0),
    "tensor_1d": lambda m: m.tensor([0]),
    "tensor_2d": lambda m: m.tensor([[0]]),
    "uint8_0d": lambda m: m.tensor(0, dtype=m.uint8),
    "numpy": lambda m: np.int64(0),
    "index_object": lambda m: _Index(),
}
INT_CALLS = {  # plain int arguments
    "transpose": lambda x, v: x.transpose(v, 1),
    "unsqueeze": lambda x, v: x.unsqueeze(v),
    "cumsum": lambda x, v: x.cumsum(v),
    "diagonal": lambda x, v: x.diagonal(v),
    "kthvalue_dim": lambda x, v: x.kthvalue(1, v),
    "chunk": lambda x, v: x.chunk(v),
    "tril": lambda x, v: x.tril(v),
    # SymInt arguments take a one-element tensor and an __index__ object too
    "select_index": lambda x, v: x.select(0, v),
    "narrow_length": lambda x, v: x.narrow(0, 1, v),
    "topk_k": lambda x, v: x.topk(v),
}


@pytest.mark.parametrize("value", sorted(INT_VALUES))
@pytest.mark.parametrize("call", sorted(INT_CALLS))
def test_int_and_symint_arguments(call, value):
    """PyTorch's parser takes a 0-d integer tensor for an ``int`` argument but not a tensor of
    more dims or an ``__index__`` object, which a ``SymInt`` argument takes."""
    both(lambda m: INT_CALLS[call](m.ones(3, 3), INT_VALUES[value](m)))


TENSOR_ARG_CALLS = {  # a number where PyTorch's parser takes a Tensor only
    "scatter_add": lambda m, x: x.scatter_add(0, m.tensor([1]), 1.0),
    "scatter_add_": lambda m, x: x.clone().scatter_add_(0, m.tensor([1]), 1.0),
    "scatter_add_index": lambda m, x: x.scatter_add(0, 1, x),
    "allclose": lambda m, x: m.allclose(x, 1.0),
    "cosine_similarity": lambda m, x: m.cosine_similarity(x, 1.0, dim=0),
    "index_add_source": lambda m, x: x.index_add(0, m.tensor([1]), 1.0),
    "masked_select_mask": lambda m, x: x.masked_select(True),
    "dot": lambda m, x: m.dot(x, 1.0),
    "take_index": lambda m, x: x.take(1),
    "gather_index_keyword": lambda m, x: x.gather(0, index=[0]),
    "numpy_array": lambda m, x: x.scatter_add(0, m.tensor([1]), np.ones(1, np.float32)),
    # a tensor is taken
    "tensor_src": lambda m, x: x.scatter_add(0, m.tensor([1]), x[:1]),
}


@pytest.mark.parametrize("call", sorted(TENSOR_ARG_CALLS))
def test_tensor_arguments_refuse_numbers(call):
    both(lambda m: TENSOR_ARG_CALLS[call](m, m.tensor([0.5, -1.0, 2.0])))
