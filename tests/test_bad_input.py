"""The catalogue of wrong calls: each raises in leafgrad exactly what it raises in PyTorch.

Every case runs in torch and in leafgrad (``call`` from conftest): both must raise, with the same
exception type (never a raw JAX, XLA or NumPy error) and the same text, leafgrad's own help only
on lines after PyTorch's, and both must warn the same. Afterwards every tensor the case made is
unchanged: values, ``_version``, ``requires_grad``, ``grad`` and ``grad_fn``.

Mistakes that ask for impossible amounts of memory (``zeros(2**62)``) run in a child process with
an address-space limit, so a library that tried to allocate them fails the test, not the machine.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import torch
from conftest import Raised, call, host, lg, same_error

# The ``slow`` marker is registered here, not in pyproject.toml or conftest.py; CI runs these too.
_config = getattr(pytest.mark, "_config", None)
if _config is not None:
    _config.addinivalue_line("markers", "slow: a large case (a child process, a huge graph)")

# --- the runner -----------------------------------------------------------------------------------


@dataclass
class Case:
    """A wrong call: ``setup(m)`` makes its tensors, ``run(m, *tensors)`` misuses them.

    ``expected``: the ``(type, text)`` PyTorch raises, for a case torch cannot run here (it has
    no CUDA); the torch side is then skipped. ``xfail``: why leafgrad fails it (a known bug)."""

    id: str
    setup: Callable[[Any], tuple]
    run: Callable[..., Any]
    expected: tuple | None = None
    xfail: str | None = None


def _state(t) -> tuple:
    """What a failed call must leave alone on a tensor, in either library."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch warns when a non-leaf's grad is read
        grad = t._grad
    return (
        str(t.dtype),
        tuple(t.shape),
        str(t.device),
        host(t).tobytes(),
        t._version,
        t.requires_grad,
        None if grad is None else host(grad).tobytes(),
        t.grad_fn,
    )


def _same_error(t: Raised, g: Raised) -> None:
    """Builtin exception types must be identical; torch's own (``_LinAlgError``) match by name
    and builtin base class."""
    if t.type.__module__ == "builtins":
        same_error(t, g)
        return
    assert g.type.__name__ == t.type.__name__, f"torch raised {t!r}, leafgrad raised {g!r}"
    base = next(c for c in t.type.__mro__ if c.__module__ == "builtins")
    assert issubclass(g.type, base), f"{g.type} is not a {base.__name__}"
    assert g.text == t.text or g.text.startswith(t.text + "\n"), (
        f"\ntorch:    {t.text!r}\nleafgrad: {g.text!r}"
    )


def _attempt(c: Case, m):
    """Set up and make the wrong call: ``(outcome, warnings, [(tensor, state before)])``."""
    tensors = c.setup(m)
    before = [(t, _state(t)) for t in tensors]
    outcome, warned = call(lambda m: c.run(m, *tensors), m)
    return outcome, warned, before


def check_case(c: Case) -> None:
    g, gw, g_before = _attempt(c, lg)
    if c.expected is None:
        t, tw, t_before = _attempt(c, torch)
    else:
        exc_type, text = c.expected
        t, tw, t_before = Raised(exc_type(text)), gw, []
    assert isinstance(t, Raised), f"torch did not raise: it returned {t!r}"
    assert isinstance(g, Raised), f"torch raised {t!r}, leafgrad returned {g!r}"
    _same_error(t, g)
    assert [w.split("\n")[0] for w in gw] == [w.split("\n")[0] for w in tw], (
        f"\ntorch warned:    {tw}\nleafgrad warned: {gw}"
    )
    for before in (t_before, g_before):
        for k, (tensor, state) in enumerate(before):
            now = _state(tensor)
            assert now[-1] is state[-1], f"tensor {k}: grad_fn changed"
            assert now[:-1] == state[:-1], f"tensor {k} was changed by the failed call"


CASES: list[Case] = []


def case(id: str, setup, run, **kw) -> None:
    CASES.append(Case(id, setup, run, **kw))


def no_tensors(m) -> tuple:
    return ()


def vec(m) -> tuple:
    return (m.arange(6.0),)


def mat(m) -> tuple:
    return (m.arange(6.0).reshape(2, 3),)


def leaf(m) -> tuple:
    return (m.tensor([1.0, 2.0, 3.0], requires_grad=True),)


def leaf_and_result(m) -> tuple:
    x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
    return x, x * 2


def ints(m) -> tuple:
    return (m.arange(6),)


def bools(m) -> tuple:
    return (m.tensor([True, False]),)


def two_mats(m) -> tuple:
    return m.ones(2, 3), m.ones(4, 5)


def probs(values):
    return lambda m: (m.tensor(values),)


# --- construction -------------------------------------------------------------------------------

case("ragged", no_tensors, lambda m: m.tensor([[1, 2], [3]]))
case("ragged_deep", no_tensors, lambda m: m.tensor([[[1.0], [2.0]], [[3.0]]]))
case("ragged_scalar_and_list", no_tensors, lambda m: m.tensor([[1, 2], 3]))
case("as_tensor_ragged", no_tensors, lambda m: m.as_tensor([[1], [2, 3]]))
case("tensor_of_object", no_tensors, lambda m: m.tensor(object()))
case("tensor_of_dict", no_tensors, lambda m: m.tensor({"a": 1}))
case("tensor_of_str", no_tensors, lambda m: m.tensor("abc"))
case("tensor_of_mixed_list", no_tensors, lambda m: m.tensor([1, "a"]))
case("tensor_of_none", no_tensors, lambda m: m.tensor(None))
case("from_numpy_of_list", no_tensors, lambda m: m.from_numpy([1, 2]))
case("tensor_int_requires_grad", no_tensors, lambda m: m.tensor([1, 2], requires_grad=True))
case(
    "zeros_long_requires_grad",
    no_tensors,
    lambda m: m.zeros(3, dtype=m.int64, requires_grad=True),
)
case("requires_grad_on_int", ints, lambda m, i: i.requires_grad_())
case("requires_grad_attr_on_int", ints, lambda m, i: setattr(i, "requires_grad", True))
case("requires_grad_on_bool", bools, lambda m, b: b.requires_grad_())
case("parameter_of_int", ints, lambda m, i: m.nn.Parameter(i))
case("zeros_negative", no_tensors, lambda m: m.zeros(-1))
case("zeros_negative_second", no_tensors, lambda m: m.zeros(2, -3))
case("empty_negative", no_tensors, lambda m: m.empty(-2))
case("ones_tuple_negative", no_tensors, lambda m: m.ones((2, -1)))
case("randn_negative", no_tensors, lambda m: m.randn(-1))
case("new_zeros_negative", vec, lambda m, x: x.new_zeros(-1))  # empty's text, not zeros'
# PyTorch's Python loss frontends compare ``target.size()`` first
case("mse_loss_number_target", vec, lambda m, x: m.nn.functional.mse_loss(x, 1.0))
case("l1_loss_number_input", vec, lambda m, x: m.nn.functional.l1_loss(1.0, x))
case("huber_loss_int_target", vec, lambda m, x: m.nn.functional.huber_loss(x, 2))
case("bce_number_target", vec, lambda m, x: m.nn.functional.binary_cross_entropy(x, 1.0))
case(
    "bce_logits_list_target",
    vec,
    lambda m, x: m.nn.functional.binary_cross_entropy_with_logits(x, [1.0]),
)
case("new_zeros_tuple_negative", vec, lambda m, x: x.new_zeros((2, -3)))
case("new_ones_negative", vec, lambda m, x: x.new_ones(2, -1))
case("new_full_negative", vec, lambda m, x: x.new_full((-2,), 1.0))
case("zeros_float_size", no_tensors, lambda m: m.zeros(2.5))
case("ones_float_size", no_tensors, lambda m: m.ones(2.5))
case("zeros_str_size", no_tensors, lambda m: m.zeros("3"))
case("zeros_float_in_tuple", no_tensors, lambda m: m.zeros((2, 2.5)))
case("arange_zero_step", no_tensors, lambda m: m.arange(0, 10, 0))
case("arange_wrong_sign", no_tensors, lambda m: m.arange(0, 10, -1))
case("linspace_negative_steps", no_tensors, lambda m: m.linspace(0, 1, -1))
case("eye_negative", no_tensors, lambda m: m.eye(-1))
case("full_str_value", no_tensors, lambda m: m.full((2,), "a"))
case("unknown_device", no_tensors, lambda m: m.zeros(2, device="gpu"))
case("bad_device_string", no_tensors, lambda m: m.device("cuda:x"))
case("dtype_as_str", no_tensors, lambda m: m.zeros(2, dtype="float32"))
case("to_str_dtype", vec, lambda m, x: x.to(dtype="a"))
case("to_int_dtype", vec, lambda m, x: x.to(dtype=3))
case("to_object", vec, lambda m, x: x.to(object()))
case("to_list", vec, lambda m, x: x.to([1]))
case("to_two_dtypes", vec, lambda m, x: x.to(m.float64, m.float32))
case("to_device_and_str", vec, lambda m, x: x.to("cpu", "a"))
case("to_tensor_and_dtype", vec, lambda m, x: x.to(x, m.float64))
case("to_unknown_keyword", vec, lambda m, x: x.to(m.float64, foo=1))
case("to_dtype_twice", vec, lambda m, x: x.to(m.float64, dtype=m.float32))
case("to_copy_str", vec, lambda m, x: x.to(m.float64, copy="a"))
case("to_five_positional", vec, lambda m, x: x.to("cpu", m.float64, True, True, True))
case("to_float_and_dtype", vec, lambda m, x: x.to(1.5, dtype=m.float32))
case(  # several keywords: PyTorch lists them in its hash map's order
    "to_keywords_order",
    vec,
    lambda m, x: x.to(device="cpu", dtype="a", copy=False, non_blocking=False),
)
case(  # one signature takes five arguments: its own message
    "to_five_keywords",
    vec,
    lambda m, x: x.to(
        device="cpu", dtype=object(), non_blocking=False, copy=False, memory_format=None
    ),
)
case("randn_of_int", no_tensors, lambda m: m.randn(2, dtype=m.int64))
case("rand_of_bool", no_tensors, lambda m: m.rand(2, dtype=m.bool))
case("default_dtype_int", no_tensors, lambda m: m.set_default_dtype(m.int64))
case("manual_seed_str", no_tensors, lambda m: m.manual_seed("a"))

# --- wrong types --------------------------------------------------------------------------------

case("add_str", vec, lambda m, x: x + "a")
case("radd_str", vec, lambda m, x: "a" + x)
case("add_none", vec, lambda m, x: x + None)
case("mul_list", vec, lambda m, x: x * [1, 2])
case("matmul_scalar", mat, lambda m, x: x @ 3)
case("add_object", vec, lambda m, x: m.add(x, object()))
case("iadd_str", vec, lambda m, x: x.add_("a"))
case("add_method_str", vec, lambda m, x: x.add("a"))
case("add_input_str", vec, lambda m, x: m.add("a", x))
case("add_list", vec, lambda m, x: m.add(x, [1.0]))
case("sub_none", vec, lambda m, x: m.sub(x, None))
case("sub__none", vec, lambda m, x: x.sub_(None))
case("mul__object", vec, lambda m, x: x.mul_(object()))
case("div_method_str", vec, lambda m, x: x.div("a"))
case("div__str", vec, lambda m, x: x.div_("a"))
case("copy__str", vec, lambda m, x: x.copy_("a"))
case("index_with_str", vec, lambda m, x: x["a"])
case("index_with_float", vec, lambda m, x: x[1.5])
case("len_of_0d", lambda m: (m.tensor(1.0),), lambda m, x: len(x))
case("iter_0d", lambda m: (m.tensor(1.0),), lambda m, x: iter(x))
case("item_of_many", vec, lambda m, x: x.item())
case("item_of_empty", lambda m: (m.ones(0),), lambda m, x: x.item())
case("float_of_many", vec, lambda m, x: float(x))
case("int_of_many", vec, lambda m, x: int(x))
case("bool_of_many", vec, lambda m, x: bool(x))
case("numpy_requires_grad", leaf, lambda m, x: x.numpy())
case("reshape_str", vec, lambda m, x: x.reshape("a"))

# --- wrong dtypes -------------------------------------------------------------------------------

case(
    "matmul_int_float",
    lambda m: (m.ones(2, 2, dtype=m.int64), m.ones(2, 2)),
    lambda m, a, b: a @ b,
)
case(
    "mm_float_double",
    lambda m: (m.ones(2, 2), m.ones(2, 2, dtype=m.float64)),
    lambda m, a, b: m.mm(a, b),
)
case(
    "addmm_mixed",
    lambda m: (m.ones(2, 2), m.ones(2, 2, dtype=m.float64)),
    lambda m, a, b: m.addmm(a, a, b),
)
case(
    "dot_int_float",
    lambda m: (m.ones(3, dtype=m.int64), m.ones(3)),
    lambda m, a, b: m.dot(a, b),
)
case(  # the dtypes are checked before the sizes
    "matmul_vectors_dtype_and_size",
    lambda m: (m.ones(3, dtype=m.float64), m.ones(4)),
    lambda m, a, b: a @ b,
)
case(
    "dot_int_float_sizes",
    lambda m: (m.ones(3, dtype=m.int64), m.ones(4)),
    lambda m, a, b: m.dot(a, b),
)
case(
    "vdot_float_half_sizes",
    lambda m: (m.ones(3), m.ones(4, dtype=m.float16)),
    lambda m, a, b: m.vdot(a, b),
)
case(
    "dot_bool_sizes",
    lambda m: (m.ones(3, dtype=m.bool), m.ones(4, dtype=m.bool)),
    lambda m, a, b: m.dot(a, b),
)
case(
    "vdot_bool",
    lambda m: (m.ones(3, dtype=m.bool), m.ones(3, dtype=m.bool)),
    lambda m, a, b: m.vdot(a, b),
)
case(
    "matmul_matrix_vector_dtype_and_size",
    lambda m: (m.ones(2, 3, dtype=m.float64), m.ones(4)),
    lambda m, a, b: a @ b,
)
case(
    "index_with_float_tensor",
    lambda m: (m.arange(6.0), m.tensor([0.0, 1.0])),
    lambda m, x, i: x[i],
)
case(
    "index_select_float_index",
    lambda m: (m.arange(6.0), m.tensor([0.0])),
    lambda m, x, i: m.index_select(x, 0, i),
)
case(
    "gather_float_index",
    lambda m: (m.arange(6.0).reshape(2, 3), m.zeros(2, 3)),
    lambda m, x, i: m.gather(x, 1, i),
)
case("iadd_float_into_int", ints, lambda m, i: i.add_(0.5))
case(
    "imul_float_tensor_into_int",
    lambda m: (m.arange(3), m.ones(3)),
    lambda m, i, x: i.mul_(x),
)
case("iadd_complex_into_float", vec, lambda m, x: x.add_(m.ones(6, dtype=m.complex64)))
case("sub_bool", lambda m: (m.tensor([True]), m.tensor([False])), lambda m, a, b: a - b)
case("neg_bool", bools, lambda m, b: -b)
case("bitwise_and_float", vec, lambda m, x: x & x)
case("int_pow_negative", ints, lambda m, i: i**-1)
case("mean_of_int", ints, lambda m, i: i.mean())
case("softmax_of_int", ints, lambda m, i: m.softmax(i, 0))
case("log_softmax_of_int", ints, lambda m, i: i.log_softmax(0))
case("where_float_condition", lambda m: (m.ones(2),), lambda m, x: m.where(x, x, x))
case(
    "masked_fill_float_mask",
    lambda m: (m.zeros(3), m.zeros(3)),
    lambda m, x, k: x.masked_fill_(k, 1.0),
)
case(
    "int_floor_divide_by_zero",
    lambda m: (m.tensor([1]), m.tensor([0])),
    lambda m, a, b: a // b,
)
case("int_remainder_by_zero", lambda m: (m.tensor([1]), m.tensor([0])), lambda m, a, b: a % b)

# --- impossible shapes --------------------------------------------------------------------------

case("view_7_of_6", vec, lambda m, x: x.view(7))
case("view_two_minus_one", vec, lambda m, x: x.view(-1, -1))
case("reshape_two_minus_one", vec, lambda m, x: x.reshape(-1, -1))
case("reshape_4_by_rest", vec, lambda m, x: x.reshape(4, -1))
case("reshape_negative", vec, lambda m, x: x.reshape(-2, 3))
case("view_non_contiguous", mat, lambda m, x: x.t().view(6))
case("broadcast_mismatch", lambda m: (m.ones(2, 3), m.ones(4)), lambda m, a, b: a + b)
case(
    "iadd_broadcast_grows_self",
    lambda m: (m.ones(3), m.ones(2, 3)),
    lambda m, a, b: a.add_(b),
)
case(
    "masked_fill_mask_shape",
    lambda m: (m.zeros(3), m.tensor([True, False])),
    lambda m, x, k: x.masked_fill_(k, 1.0),
)
case(
    "where_shapes",
    lambda m: (m.tensor([True, False, True]), m.ones(2)),
    lambda m, c, x: m.where(c, x, x),
)
case("matmul_mismatch", two_mats, lambda m, a, b: a @ b)
case("mm_vector", lambda m: (m.ones(3), m.ones(3)), lambda m, a, b: m.mm(a, b))
case("bmm_2d", two_mats, lambda m, a, b: m.bmm(a, b))
case("dot_mismatch", lambda m: (m.ones(3), m.ones(4)), lambda m, a, b: m.dot(a, b))
case("mv_mismatch", lambda m: (m.ones(2, 3), m.ones(4)), lambda m, a, b: m.mv(a, b))
case("outer_of_2d", lambda m: (m.ones(2, 2), m.ones(2)), lambda m, a, b: m.outer(a, b))
case("einsum_sizes", two_mats, lambda m, a, b: m.einsum("ij,jk->ik", a, b))
case("det_not_square", mat, lambda m, x: m.linalg.det(x))
case("cat_ranks", lambda m: (m.ones(2, 3), m.ones(3)), lambda m, a, b: m.cat([a, b]))
case("cat_sizes", two_mats, lambda m, a, b: m.cat([a, b]))
case("cat_empty_list", no_tensors, lambda m: m.cat([]))
case("stack_sizes", lambda m: (m.ones(2), m.ones(3)), lambda m, a, b: m.stack([a, b]))
case("stack_empty_list", no_tensors, lambda m: m.stack([]))
case("expand_smaller", vec, lambda m, x: x.expand(2))
case("expand_new_minus_one", vec, lambda m, x: x.expand(-1, 6))
case("expand_fewer_dims", mat, lambda m, x: x.expand(3))
case("permute_count", mat, lambda m, x: x.permute(0))
case("permute_repeated", mat, lambda m, x: x.permute(0, 0))
case("repeat_fewer_dims", mat, lambda m, x: x.repeat(2))
case("repeat_interleave_negative", vec, lambda m, x: x.repeat_interleave(-1))
case("flatten_start_after_end", mat, lambda m, x: x.flatten(1, 0))
case("chunk_zero", vec, lambda m, x: x.chunk(0))
case("split_negative", vec, lambda m, x: x.split(-1))
case("split_sizes_sum", vec, lambda m, x: x.split([2, 2]))
case("tensor_split_zero", vec, lambda m, x: x.tensor_split(0))
case("narrow_past_end", vec, lambda m, x: x.narrow(0, 4, 3))
case("unflatten_wrong", vec, lambda m, x: x.unflatten(0, (4, 2)))
case("roll_shifts_dims", mat, lambda m, x: x.roll((1, 2), (0,)))
case("flip_repeated", mat, lambda m, x: x.flip(0, 0))
case("tril_of_1d", vec, lambda m, x: x.tril())
case("diag_of_3d", lambda m: (m.ones(2, 2, 2),), lambda m, x: x.diag())
case("clamp_without_bounds", vec, lambda m, x: x.clamp())

# --- out-of-range dims and indices --------------------------------------------------------------

case("sum_dim_5", mat, lambda m, x: x.sum(dim=5))
case("mean_dim_negative", mat, lambda m, x: x.mean(dim=-3))
case("sum_dim_repeated", mat, lambda m, x: x.sum(dim=(0, 0)))
case("sum_dim_of_0d", lambda m: (m.tensor(1.0),), lambda m, x: x.sum(dim=1))
case("cumsum_dim", vec, lambda m, x: x.cumsum(3))
case("sort_dim", vec, lambda m, x: x.sort(dim=2))
case("softmax_dim", mat, lambda m, x: m.softmax(x, dim=2))
case("argmax_dim", mat, lambda m, x: x.argmax(dim=2))
case("transpose_out_of_range", mat, lambda m, x: x.transpose(0, 2))
case("squeeze_out_of_range", mat, lambda m, x: x.squeeze(3))
case("unsqueeze_out_of_range", vec, lambda m, x: x.unsqueeze(3))
case("movedim_out_of_range", vec, lambda m, x: x.movedim(0, 5))
case("movedim_repeated", mat, lambda m, x: x.movedim((0, 1), (0, 0)))
case("select_2_0", mat, lambda m, x: x.select(2, 0))
case("select_index", mat, lambda m, x: x.select(0, 2))
case("index_10", vec, lambda m, x: x[10])
case("index_negative_past", vec, lambda m, x: x[-7])
case("index_second_dim", mat, lambda m, x: x[:, 5])
case("too_many_indices", vec, lambda m, x: x[0, 0])
case(
    "index_tensor_out_of_range",
    lambda m: (m.arange(6.0), m.tensor([0, 9])),
    lambda m, x, i: x[i],
)
case(
    "bool_mask_wrong_shape",
    lambda m: (m.arange(6.0), m.tensor([True, False])),
    lambda m, x, i: x[i],
)
case(
    "setitem_tensor_out_of_range",
    lambda m: (m.arange(6.0), m.tensor([7])),
    lambda m, x, i: x.__setitem__(i, 1.0),
)
case("setitem_int_out_of_range", vec, lambda m, x: x.__setitem__(9, 1.0))
case("setitem_value_of_more_dims", mat, lambda m, x: x.__setitem__(0, m.ones(1, 2, 3)))
case("setitem_element_from_slice", vec, lambda m, x: x.__setitem__(1, x[0:2]))
case(
    "index_put_out_of_range",
    lambda m: (m.arange(6.0), m.tensor([7])),
    lambda m, x, i: x.index_put_((i,), m.tensor(1.0)),
)
case("take_out_of_range", lambda m: (m.arange(6.0), m.tensor([6])), lambda m, x, i: x.take(i))
case(
    "gather_out_of_range",
    lambda m: (m.arange(6.0).reshape(2, 3), m.tensor([[0, 3]])),
    lambda m, x, i: m.gather(x, 1, i),
)
case(
    "gather_rank",
    lambda m: (m.arange(6.0).reshape(2, 3), m.tensor([0])),
    lambda m, x, i: m.gather(x, 1, i),
)
case(
    "index_select_out_of_range",
    lambda m: (m.arange(6.0), m.tensor([6])),
    lambda m, x, i: m.index_select(x, 0, i),
)
case(
    "scatter_out_of_range",
    lambda m: (m.zeros(3), m.tensor([5]), m.ones(1)),
    lambda m, x, i, s: x.scatter_(0, i, s),
)
case(
    "scatter_add_out_of_range",
    lambda m: (m.zeros(3), m.tensor([4]), m.ones(1)),
    lambda m, x, i, s: x.scatter_add_(0, i, s),
)
case("topk_too_many", vec, lambda m, x: x.topk(7))
case("kthvalue_out_of_range", vec, lambda m, x: x.kthvalue(7))
case("max_of_empty", lambda m: (m.ones(0),), lambda m, x: x.max())
case("max_dim_of_empty", lambda m: (m.ones(0, 3),), lambda m, x: x.max(dim=0))
case(
    "embedding_out_of_range",
    lambda m: (m.ones(3, 2), m.tensor([3])),
    lambda m, w, i: m.nn.functional.embedding(i, w),
)
# a number where F's builtin takes a tensor: the parser's TypeError, not an AttributeError
case("linear_number_weight", two_mats, lambda m, x, w: m.nn.functional.linear(x, 1.0))
case("linear_keyword_weight", two_mats, lambda m, x, w: m.nn.functional.linear(x, weight=1.0))
case("linear_list_bias", two_mats, lambda m, x, w: m.nn.functional.linear(x, w, bias=[1.0]))
case("embedding_int_indices", two_mats, lambda m, x, w: m.nn.functional.embedding(1, w))
case("embedding_float_weight", ints, lambda m, i: m.nn.functional.embedding(i.abs(), 2.0))
case("one_hot_int", no_tensors, lambda m: m.nn.functional.one_hot(1))
case(
    "one_hot_negative",
    lambda m: (m.tensor([-1, 0]),),
    lambda m, i: m.nn.functional.one_hot(i),
)
case(
    "cross_entropy_target_out_of_range",
    lambda m: (m.zeros(2, 3), m.tensor([0, 5])),
    lambda m, x, y: m.nn.functional.cross_entropy(x, y),
)
case(
    "nll_loss_float_target",
    lambda m: (m.zeros(2, 3), m.tensor([0.0, 1.0])),
    lambda m, x, y: m.nn.functional.nll_loss(x, y),
)

# --- modules, functional, optimizers ------------------------------------------------------------

case("linear_shape", two_mats, lambda m, x, w: m.nn.functional.linear(x, w))
case("linear_module_shape", no_tensors, lambda m: m.nn.Linear(3, 4)(m.ones(2, 5)))
case(
    "conv2d_rank",
    lambda m: (m.ones(3, 3), m.ones(1, 1, 2, 2)),
    lambda m, x, w: m.nn.functional.conv2d(x, w),
)
case(
    "conv2d_channels",
    lambda m: (m.ones(1, 2, 4, 4), m.ones(1, 3, 2, 2)),
    lambda m, x, w: m.nn.functional.conv2d(x, w),
)
case(
    "conv2d_kernel_too_big",
    lambda m: (m.ones(1, 1, 2, 2), m.ones(1, 1, 3, 3)),
    lambda m, x, w: m.nn.functional.conv2d(x, w),
)
case(
    "max_pool_too_big",
    lambda m: (m.ones(1, 1, 2, 2),),
    lambda m, x: m.nn.functional.max_pool2d(x, 3),
)
case(
    "mse_loss_shapes",  # warns about the sizes first, as torch does
    lambda m: (m.ones(3), m.ones(2)),
    lambda m, a, b: m.nn.functional.mse_loss(a, b),
)
case(
    "batch_norm_running_size",
    lambda m: (m.ones(2, 3), m.ones(4)),
    lambda m, x, r: m.nn.functional.batch_norm(x, r, r),
)
case("layer_norm_shape", mat, lambda m, x: m.nn.functional.layer_norm(x, (4,)))
case("dropout_p_above_one", vec, lambda m, x: m.nn.functional.dropout(x, p=1.5))
case("load_state_dict_missing", no_tensors, lambda m: m.nn.Linear(2, 2).load_state_dict({}))
case(
    "load_state_dict_shape",
    lambda m: (m.ones(3, 3), m.ones(2)),
    lambda m, w, b: m.nn.Linear(2, 2).load_state_dict({"weight": w, "bias": b}),
)
case("module_missing_attribute", no_tensors, lambda m: m.nn.Linear(2, 2).foo)
case("sgd_non_leaf", leaf_and_result, lambda m, x, y: m.optim.SGD([y], lr=0.1))
case("sgd_negative_lr", leaf, lambda m, x: m.optim.SGD([x], lr=-1))
case("sgd_no_parameters", no_tensors, lambda m: m.optim.SGD([], lr=0.1))

# --- devices (torch here has no CUDA: PyTorch's text is given) -----------------------------------

_MIXED = "Expected all tensors to be on the same device, but found at least two devices, {} and {}!"
case(
    "add_cpu_cuda",
    lambda m: (m.ones(3), m.ones(3, device="cuda")),
    lambda m, a, b: a + b,
    expected=(RuntimeError, _MIXED.format("cpu", "cuda:0")),
)
case(
    "add_cuda_cpu",
    lambda m: (m.ones(3, device="cuda"), m.ones(3)),
    lambda m, a, b: a + b,
    expected=(RuntimeError, _MIXED.format("cuda:0", "cpu")),
)
case(
    "matmul_cuda_cpu",
    lambda m: (m.ones(2, 2, device="cuda"), m.ones(2, 2)),
    lambda m, a, b: a @ b,
    expected=(RuntimeError, _MIXED.format("cuda:0", "cpu")),
)
case(
    "cat_cuda_cpu",
    lambda m: (m.ones(2, device="cuda"), m.ones(2)),
    lambda m, a, b: m.cat([a, b]),
    expected=(RuntimeError, _MIXED.format("cuda:0", "cpu")),
)
case(
    "inplace_cpu_from_cuda",
    lambda m: (m.ones(2), m.ones(2, device="cuda")),
    lambda m, a, b: a.mul_(b),
    expected=(RuntimeError, _MIXED.format("cpu", "cuda:0")),
)
case(
    "numpy_of_cuda",
    lambda m: (m.ones(2, device="cuda"),),
    lambda m, a: a.numpy(),
    expected=(
        TypeError,
        "can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy the tensor to "
        "host memory first.",
    ),
)

# --- gradients ----------------------------------------------------------------------------------


def _backward_twice(m, x, y):
    z = (y * y).sum()
    z.backward()
    x.grad = None  # the tensors are compared with their state before the call
    z.backward()


def _modify_saved(m, y):
    z = y.exp()
    z2 = z * 1
    z.mul_(2)  # exp saved its result: backward through it must refuse
    z2.sum().backward()


def _hooked_backward(m, y, hook):
    z = y * 1
    z.register_hook(hook)
    z.sum().backward()


def _no_grad_view_write(m, y):
    with m.no_grad():
        v = y[0:2]
    v.mul_(2)


def _inference_write(m):
    with m.inference_mode():
        x = m.ones(2)
    x.add_(1)


def _function_backward(m, x, backward):
    class Twice(m.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return backward(m, g)

    Twice.apply(x).sum().backward()


case("backward_gradient_shape", leaf_and_result, lambda m, x, y: y.backward(m.ones(2)))
case(
    "grad_outputs_shape",
    leaf_and_result,
    lambda m, x, y: m.autograd.grad(y, x, grad_outputs=m.ones(4)),
)
case(
    "grad_outputs_complex_dtype",
    leaf_and_result,
    lambda m, x, y: m.autograd.grad(y, x, grad_outputs=m.ones(3, dtype=m.complex64)),
)
case("backward_non_scalar", leaf_and_result, lambda m, x, y: y.backward())
case(
    "backward_complex_scalar",
    lambda m: (m.ones(2, dtype=m.complex64, requires_grad=True),),
    lambda m, x: (x * 2).sum().backward(),
)
case("backward_no_grad", vec, lambda m, x: x.sum().backward())
case("backward_empty_inputs", leaf_and_result, lambda m, x, y: y.sum().backward(inputs=[]))
case("backward_twice", leaf_and_result, _backward_twice)
case("grad_of_no_grad", vec, lambda m, x: m.autograd.grad(x.sum(), x))
case(
    "grad_of_unused_input",
    lambda m: (m.ones(2, requires_grad=True), m.ones(2, requires_grad=True)),
    lambda m, a, b: m.autograd.grad((a * 2).sum(), b),
)
case(
    "grad_empty_inputs",
    leaf_and_result,
    lambda m, x, y: m.autograd.grad(y.sum(), []),
)
case("inplace_on_leaf", leaf, lambda m, x: x.add_(1))
case("inplace_on_leaf_view", leaf, lambda m, x: x[0:2].mul_(2))
case("detach_view_in_place", leaf, lambda m, x: x[0:2].detach_())
case("inplace_on_saved_result", leaf_and_result, lambda m, x, y: _modify_saved(m, y))
case(
    "inplace_on_multi_output_view",
    leaf_and_result,
    lambda m, x, y: y.unbind()[0].mul_(2),
)
case("no_grad_view_written", leaf_and_result, lambda m, x, y: _no_grad_view_write(m, y))
case("inference_tensor_in_place", no_tensors, _inference_write)
case("set_grad_wrong_shape", leaf, lambda m, x: setattr(x, "grad", m.zeros(4)))
case("set_grad_wrong_dtype", leaf, lambda m, x: setattr(x, "grad", m.zeros(3, dtype=m.float64)))
case("set_grad_not_tensor", leaf, lambda m, x: setattr(x, "grad", [1.0, 2.0, 3.0]))
case(
    "set_grad_fn",
    leaf_and_result,
    lambda m, x, y: setattr(y, "grad_fn", None),
)
case("hook_on_no_grad", vec, lambda m, x: x.register_hook(lambda g: g))
case("retain_grad_on_no_grad", vec, lambda m, x: x.retain_grad())
case("requires_grad_off_non_leaf", leaf_and_result, lambda m, x, y: y.requires_grad_(False))
case(
    "hook_returns_wrong_shape",
    leaf_and_result,
    lambda m, x, y: _hooked_backward(m, y, lambda g: m.ones(5)),
)
case(
    "hook_returns_wrong_dtype",
    leaf_and_result,
    lambda m, x, y: _hooked_backward(m, y, lambda g: g.double()),
)
case("function_grad_count", leaf, lambda m, x: _function_backward(m, x, lambda m, g: (g, g)))
case("function_grad_shape", leaf, lambda m, x: _function_backward(m, x, lambda m, g: m.ones(5)))

# --- NaN, inf and impossible values --------------------------------------------------------------

for name, values, n in (
    ("nan", [0.5, float("nan")], 1),
    ("inf", [0.5, float("inf")], 1),
    ("negative", [0.5, -0.1], 1),
    ("zero_sum", [0.0, 0.0], 1),
    ("too_many", [0.5, 0.5], 3),
):
    case(
        f"multinomial_{name}",
        probs(values),
        lambda m, p, n=n: m.multinomial(p, n),
    )
case(
    "cholesky_not_pd",
    lambda m: (m.tensor([[1.0, 2.0], [2.0, 1.0]]),),
    lambda m, a: m.linalg.cholesky(a),
)
case(
    "cholesky_nan",
    lambda m: (m.tensor([[float("nan"), 0.0], [0.0, 1.0]]),),
    lambda m, a: m.linalg.cholesky(a),
)
case(
    "inv_singular",
    lambda m: (m.tensor([[1.0, 2.0], [2.0, 4.0]]),),
    lambda m, a: m.linalg.inv(a),
)
case(
    "solve_singular",
    lambda m: (m.zeros(2, 2), m.ones(2)),
    lambda m, a, b: m.linalg.solve(a, b),
)
case("randint_size_int", no_tensors, lambda m: m.randint(5, 2))
case("randint_low_above_high", no_tensors, lambda m: m.randint(5, 2, (3,)))
case("bernoulli_p_above_one", lambda m: (m.zeros(3),), lambda m, x: x.bernoulli_(2.0))
case("normal_negative_std", lambda m: (m.zeros(3),), lambda m, x: x.normal_(0.0, -1.0))
case("uniform_from_above_to", lambda m: (m.zeros(3),), lambda m, x: x.uniform_(2.0, 1.0))
case("randperm_negative", no_tensors, lambda m: m.randperm(-1))
for name, lo, hi in (
    ("bce_input_above_one", [0.5, 1.5], [0.5, 0.5]),
    ("bce_input_nan", [float("nan"), 0.5], [0.5, 0.5]),
    ("bce_target_negative", [0.5, 0.5], [0.5, -0.5]),
):
    case(
        name,
        lambda m, lo=lo, hi=hi: (m.tensor(lo, requires_grad=True), m.tensor(hi)),
        lambda m, x, t: m.nn.functional.binary_cross_entropy(x, t),
    )

# --- keyword arguments of the wrong type ---------------------------------------------------------
for name, alpha in (("tensor", "vector"), ("str", "a"), ("none", None), ("list", [2])):
    for op in ("add", "sub", "add_", "sub_"):

        def run(m, x, op=op, alpha=alpha):
            a = m.ones(2) if alpha == "vector" else alpha
            return getattr(x, op)(x.detach().clone(), alpha=a)

        case(f"{op}_alpha_{name}", lambda m: (m.ones(2),), run)
    case(
        f"rsub_alpha_{name}",
        lambda m: (m.ones(2),),
        lambda m, x, alpha=alpha: m.rsub(x, x, alpha=m.ones(2) if alpha == "vector" else alpha),
    )
case(
    "linear_bias_3d",
    lambda m: (m.ones(3, 4), m.ones(5, 4, requires_grad=True), m.ones(1, 1, 5)),
    lambda m, x, w, b: m.nn.functional.linear(x, w, b),
)
case(
    "linear_bias_dtype_first",
    lambda m: (m.ones(3, 4).double(), m.ones(5, 4), m.ones(2).double()),
    lambda m, x, w, b: m.nn.functional.linear(x, w, b),
)
case(
    "linear_input_dtype_with_bias",
    lambda m: (m.ones(3, 4).double(), m.ones(5, 4), m.ones(5)),
    lambda m, x, w, b: m.nn.functional.linear(x, w, b),
)


def _params():
    for c in CASES:
        marks = [pytest.mark.xfail(strict=True, reason=c.xfail)] if c.xfail else []
        yield pytest.param(c, id=c.id, marks=marks)


@pytest.mark.every_case  # the catalogue of wrong calls runs whole
@pytest.mark.parametrize("c", list(_params()))
def test_wrong_call_raises_as_torch_and_changes_nothing(c: Case):
    check_case(c)


# --- binary ops given an operand of the wrong type (Note [Argument parser errors]) --------------

BINARY = (
    "add sub mul div true_divide subtract multiply divide rsub atan2 arctan2 hypot logaddexp "
    "maximum minimum fmax fmin logical_and logical_or logical_xor remainder fmod floor_divide pow "
    "eq ne lt le gt ge greater greater_equal less less_equal not_equal bitwise_and bitwise_or "
    "bitwise_xor bitwise_left_shift bitwise_right_shift isclose equal dot matmul mm inner outer "
    "cross kron"
).split()
WRONG = {"str": "a", "object": object(), "list": [1.0, 2.0]}
FORMS = {
    "method": lambda m, op, x, w: getattr(x, op)(w),
    "function": lambda m, op, x, w: getattr(m, op)(x, w),
    "function_first": lambda m, op, x, w: getattr(m, op)(w, x),
}


@pytest.mark.every_case
@pytest.mark.parametrize("wrong", list(WRONG))
@pytest.mark.parametrize("form", list(FORMS))
@pytest.mark.parametrize("op", BINARY)
def test_binary_op_with_operand_of_wrong_type(op, form, wrong):
    if op == "rsub" and form == "method":
        pytest.skip("PyTorch has no Tensor.rsub")
    check_case(Case(op, vec, lambda m, x: FORMS[form](m, op, x, WRONG[wrong])))


def test_binary_op_with_wrong_operand_and_keyword():
    check_case(Case("sub_alpha", vec, lambda m, x: m.subtract(x, "a", alpha=2)))
    check_case(Case("div_mode", vec, lambda m, x: x.divide(None, rounding_mode="floor")))


def test_the_catalogue_is_large_and_its_ids_unique():
    ids = [c.id for c in CASES] + list(HUGE)
    assert len(ids) == len(set(ids))
    assert len(ids) >= 80


# --- careless calls torch accepts: leafgrad must too -------------------------------------------


def test_integer_power_with_negative_tensor_exponent():
    t = torch.tensor([2, 1, -1, 3]) ** torch.tensor([-1, -2, -3, 0])
    g = lg.tensor([2, 1, -1, 3]) ** lg.tensor([-1, -2, -3, 0])
    assert host(g).tolist() == t.tolist()


def test_grad_with_extra_grad_outputs_is_accepted():
    def fn(m):
        x = m.ones(2, requires_grad=True)
        return m.autograd.grad((x * 2).sum(), x, grad_outputs=[m.tensor(1.0), m.tensor(1.0)])

    t, _ = call(fn, torch)
    g, _ = call(fn, lg)
    assert not isinstance(g, Raised), g
    assert host(g[0]).tolist() == t[0].tolist()


# --- sizes too large to allocate, in a child process ---------------------------------------------

ROOT = str(Path(__file__).resolve().parents[1])

HUGE = {
    "zeros_2_62": "m.zeros(2**62)",
    "empty_2_31_squared": "m.empty(2**31, 2**31)",
    "rand_2_62": "m.rand(2**62)",
    "full_2_62": "m.full((2**62,), 1.0)",
    "arange_2_62": "m.arange(2**62)",
    "repeat_2_61": "m.ones(2).repeat(2**61)",
    "zeros_8_tib": "m.zeros(2**40, dtype=m.float64)",
}

# One line per case and library, printed before the next starts: when a call kills the process,
# the parent knows which one did and starts a new child for the rest.
_CHILD = """
import json, os, resource, sys
os.environ["LEAFGRAD_VIRTUAL_CUDA"] = "1"
resource.setrlimit(resource.RLIMIT_AS, (16 << 30, 16 << 30))  # a real allocation fails here
import torch
import leafgrad
for name, expr in json.loads(sys.argv[1]):
    for m in (torch, leafgrad):
        print("START", json.dumps([name, m.__name__]), flush=True)
        try:
            r = eval(expr, {"m": m})
            got = ["returned", list(r.shape)]
        except BaseException as e:
            got = [type(e).__module__ + "." + type(e).__qualname__, str(e)]
        print("RESULT", json.dumps([name, m.__name__, got]), flush=True)
"""


def run_in_child(cases: dict) -> dict:
    """``{case: {"torch": [type, text], "leafgrad": [type, text]}}``; a call that killed its
    process gets ``["died", stderr]``."""
    results: dict = {name: {} for name in cases}
    todo = list(cases.items())
    while todo:
        proc = subprocess.run(
            [sys.executable, "-c", textwrap.dedent(_CHILD), json.dumps(todo)],
            capture_output=True,
            text=True,
            timeout=300,
            cwd=ROOT,
        )
        started = None
        for line in proc.stdout.splitlines():
            kind, _, payload = line.partition(" ")
            if kind == "START":
                started = json.loads(payload)
            elif kind == "RESULT":
                name, lib, got = json.loads(payload)
                results[name][lib] = got
                started = None
        if started is None:
            assert proc.returncode == 0, proc.stderr[-2000:]
            break
        name, lib = started
        results[name][lib] = ["died", proc.stderr[-500:]]
        results[name].setdefault("leafgrad", ["not run", ""])
        names = [n for n, _ in todo]
        todo = todo[names.index(name) + 1 :]
    return results


@pytest.fixture(scope="module")
def huge_results():
    return run_in_child(HUGE)


@pytest.mark.slow
@pytest.mark.parametrize("name", list(HUGE))
def test_huge_sizes_raise_as_torch(huge_results, name):
    t_type, t_text = huge_results[name]["torch"]
    g_type, g_text = huge_results[name]["leafgrad"]
    assert t_type != "returned", "torch allocated it"
    assert (g_type, g_text) == (t_type, t_text)


@pytest.mark.slow
@pytest.mark.parametrize("name", list(HUGE))
def test_huge_sizes_fail_without_allocating_or_dying(huge_results, name):
    # Whatever the text: an exception, not an allocation (the child's memory is limited) and not
    # a dead process.
    assert huge_results[name]["leafgrad"][0] not in ("returned", "died"), huge_results[name]


@pytest.mark.slow
def test_a_huge_expand_does_not_kill_the_process():
    results = run_in_child({"expand_2_62": "m.ones(1).expand(2**62)"})["expand_2_62"]
    assert results["torch"] == ["returned", [2**62]]  # a stride-0 view: nothing is allocated
    assert results["leafgrad"][0] in ("returned", "builtins.RuntimeError"), results["leafgrad"]
