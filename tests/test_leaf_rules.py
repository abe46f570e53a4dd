"""Differential tests of the leaf rules: is_leaf, requires_grad, grad_fn, .grad, conversions."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from conftest import DTYPE_NAMES, FLOAT_NAMES, Raised, both, call, dt, grad_fn_name, lg, same_error


def meta(x):
    """The autograd facts of a tensor as plain Python values (no values compared)."""
    return (x.is_leaf, x.requires_grad, grad_fn_name(x), str(x.dtype), tuple(x.shape))


def signature(fn, leaves=()):
    """The graph below ``fn`` as plain values: names, next_functions (by node index, output_nr)
    and, for AccumulateGrad, the index of its ``.variable`` among ``leaves`` (identity)."""
    order: dict[int, int] = {}
    nodes = []
    todo = [fn]
    while todo:
        n = todo.pop(0)
        if n is None or id(n) in order:
            continue
        order[id(n)] = len(nodes)
        nodes.append(n)
        todo.extend(c for c, _ in n.next_functions)
    rows = []
    for n in nodes:
        name = type(n).__name__
        edges = tuple((None if c is None else order[id(c)], nr) for c, nr in n.next_functions)
        var = None
        if name == "AccumulateGrad":
            var = next((i for i, v in enumerate(leaves) if v is n.variable), -1)
        rows.append((name, edges, var))
    return rows


def leaf(m, values=(1.0, 2.0, 3.0), dtype="float32", requires_grad=True):
    return m.tensor(list(values), dtype=dt(m, dtype), requires_grad=requires_grad)


# --- factories and op results -------------------------------------------------------------------

FACTORIES = {
    "tensor": lambda m, rg: m.tensor([1.0, 2.0], requires_grad=rg),
    "tensor_f64": lambda m, rg: m.tensor([1, 2], dtype=m.float64, requires_grad=rg),
    "tensor_c64": lambda m, rg: m.tensor([1j, 2], requires_grad=rg),
    "zeros": lambda m, rg: m.zeros(2, 3, requires_grad=rg),
    "ones": lambda m, rg: m.ones((2,), requires_grad=rg),
    "full": lambda m, rg: m.full((2, 2), 1.5, requires_grad=rg),
    "empty": lambda m, rg: m.empty(3, requires_grad=rg),
    "arange": lambda m, rg: m.arange(0.0, 3.0, requires_grad=rg),
    "linspace": lambda m, rg: m.linspace(0, 1, 5, requires_grad=rg),
    "eye": lambda m, rg: m.eye(3, requires_grad=rg),
    "zeros_like": lambda m, rg: m.zeros_like(m.ones(2), requires_grad=rg),
    "ones_like": lambda m, rg: m.ones_like(m.ones(2, requires_grad=True), requires_grad=rg),
    "full_like": lambda m, rg: m.full_like(m.ones(2), 3.0, requires_grad=rg),
    "rand": lambda m, rg: m.rand(2, requires_grad=rg),
    "randn": lambda m, rg: m.randn(2, 2, requires_grad=rg),
    "new_zeros": lambda m, rg: m.ones(2).new_zeros(3, requires_grad=rg),
    "new_tensor": lambda m, rg: m.ones(2).new_tensor([1.0], requires_grad=rg),
}


@pytest.mark.parametrize("requires_grad", [False, True])
@pytest.mark.parametrize("name", list(FACTORIES))
def test_factories_are_leaves(name, requires_grad):
    both(lambda m: meta(FACTORIES[name](m, requires_grad)))


@pytest.mark.parametrize("name", list(FACTORIES))
def test_factories_requires_grad_under_no_grad(name):
    def f(m):
        with m.no_grad():
            x = FACTORIES[name](m, True)
        return meta(x), meta(x * 2)

    both(f)


@pytest.mark.parametrize("name", ["zeros", "ones", "full", "empty", "rand", "tensor_f64"])
def test_factories_requires_grad_under_inference_mode(name):
    def f(m):
        with m.inference_mode():
            x = FACTORIES[name](m, True)
        return meta(x), x.is_inference()

    both(f)


UNARY = {
    "add_scalar": lambda x: x + 2,
    "radd": lambda x: 2 + x,
    "sub_scalar": lambda x: x - 2,
    "rsub": lambda x: 2 - x,
    "mul_scalar": lambda x: x * 2,
    "rmul": lambda x: 2 * x,
    "div_scalar": lambda x: x / 2,
    "rdiv": lambda x: 2 / x,
    "pow_2": lambda x: x**2,
    "pow_half": lambda x: x**0.5,
    "rpow": lambda x: 2**x,
    "neg": lambda x: -x,
    "pos": lambda x: +x,
    "exp": lambda x: x.exp(),
    "log": lambda x: x.log(),
    "reciprocal": lambda x: x.reciprocal(),
    "sum": lambda x: x.sum(),
    "sum_dim": lambda x: x.sum(0),
    "sum_keepdim": lambda x: x.sum(0, keepdim=True),
    "mean": lambda x: x.mean(),
    "mean_dim": lambda x: x.mean(-1),
    "unsqueeze": lambda x: x.unsqueeze(0),
    "clone": lambda x: x.clone(),
    "to_f64": lambda x: x.to(torch.float64 if isinstance(x, torch.Tensor) else lg.float64),
    "double": lambda x: x.double(),
    "half": lambda x: x.half(),
    "long": lambda x: x.long(),
    "bool": lambda x: x.bool(),
    "detach": lambda x: x.detach(),
    "eq": lambda x: x == 2,
    "gt": lambda x: x > 1,
    "dot": lambda x: x.dot(x),
    "matmul": lambda x: x @ x,
    "add_self": lambda x: x + x,
    "mul_self": lambda x: x * x,
}


@pytest.mark.parametrize("requires_grad", [False, True])
@pytest.mark.parametrize("name", list(UNARY))
def test_op_results(name, requires_grad):
    """Results of ops on tensors that don't require grad are leaves; others record a node."""
    both(lambda m: UNARY[name](leaf(m, requires_grad=requires_grad)))


@pytest.mark.parametrize("name", list(UNARY))
def test_op_results_under_no_grad(name):
    def f(m):
        x = leaf(m)
        with m.no_grad():
            y = UNARY[name](x)
        return y

    both(f)


@pytest.mark.parametrize("name", list(UNARY))
def test_op_graph_signature(name):
    def f(m):
        x = leaf(m)
        y = UNARY[name](x)
        return signature(y.grad_fn, [x]) if y.grad_fn is not None else None

    both(f)


GRAPHS = {
    "diamond": lambda a, b: (a * b + a).sum(),
    "mixed": lambda a, b: (a - 1) / (b + 2) * a.exp(),
    "scalar_edges": lambda a, b: 3 - a * 2 + 1 / b,
    "pow_tensor": lambda a, b: a**b,
    "rpow": lambda a, b: 2.0**a + b,
    "matmul_1d2d": lambda a, b: a.unsqueeze(0).mm(b.unsqueeze(1)).sum() + a @ b,
    "matmul_vm": lambda a, b: a @ (b.unsqueeze(1) * a),
    "matmul_mv": lambda a, b: (b.unsqueeze(1) * a) @ a,
    "to_copy": lambda a, b: a.double() * b.to(a.dtype),
    "mean_sum": lambda a, b: a.mean() + b.sum(0, keepdim=True),
    "reuse_node": lambda a, b: (lambda c: c * c + c)(a * b),
    "unbind": lambda a, b: a.unbind(0)[1] + b,
    "iter": lambda a, b: list(a)[2] * b,
}


@pytest.mark.parametrize("name", list(GRAPHS))
def test_graph_signatures(name):
    def f(m):
        a = leaf(m, (1.0, 2.0, 3.0))
        b = leaf(m, (0.5, 1.5, 2.5))
        y = GRAPHS[name](a, b)
        return meta(y), signature(y.grad_fn, [a, b])

    both(f)


def test_graph_with_non_requiring_operand():
    def f(m):
        a = leaf(m)
        c = leaf(m, requires_grad=False)
        y = a * c + c
        return signature(y.grad_fn, [a, c])

    both(f)


@pytest.mark.parametrize("name", ["mul", "sum", "to", "accumulate"])
def test_node_name(name):
    def f(m):
        x = leaf(m)
        y = {"mul": x * 2, "sum": x.sum(), "to": x.double(), "accumulate": x * 2}[name]
        node = y.grad_fn.next_functions[0][0] if name == "accumulate" else y.grad_fn
        return node.name(), type(node).__name__

    both(f)


def test_accumulate_grad_shared_while_graph_holds_it():
    def f(m):
        a = leaf(m)
        y, z = a * 2, a * 3
        acc = y.grad_fn.next_functions[0][0]
        return (
            acc is z.grad_fn.next_functions[0][0],
            acc.variable is a,
            type(acc).__name__,
            acc.next_functions,
        )

    both(f)


def test_next_functions_output_nr_of_unbind():
    def f(m):
        a = leaf(m)
        p = a.unbind(0)
        y = p[2] * p[1]
        return [(type(c).__name__, nr) for c, nr in y.grad_fn.next_functions]

    both(f)


# --- requires_grad_ / setter ------------------------------------------------------------------


@pytest.mark.parametrize("value", [True, False])
@pytest.mark.parametrize("requires_grad", [True, False])
def test_requires_grad__returns_same_object(requires_grad, value):
    def f(m):
        x = leaf(m, requires_grad=requires_grad)
        y = x.requires_grad_(value)
        return y is x, meta(x)

    both(f)


def test_requires_grad__default_argument():
    both(lambda m: meta(leaf(m, requires_grad=False).requires_grad_()))


@pytest.mark.parametrize("how", ["setter_true", "setter_false", "method_true", "method_false"])
@pytest.mark.parametrize("nonleaf", ["mul", "to", "unsqueeze"])
def test_requires_grad_on_non_leaf(how, nonleaf):
    def f(m):
        x = leaf(m)
        y = {"mul": lambda: x * 2, "to": lambda: x.double(), "unsqueeze": lambda: x.unsqueeze(0)}[
            nonleaf
        ]()
        if how == "setter_true":
            y.requires_grad = True
        elif how == "setter_false":
            y.requires_grad = False
        elif how == "method_true":
            assert y.requires_grad_(True) is y
        else:
            y.requires_grad_(False)
        return meta(y)

    both(f)


@pytest.mark.parametrize(
    "how", ["factory", "setter", "method", "setter_false", "method_false", "zeros", "full"]
)
@pytest.mark.parametrize("dtype", ["bool", "uint8", "int8", "int16", "int32", "int64"])
def test_requires_grad_integer_messages(how, dtype):
    def f(m):
        d = dt(m, dtype)
        if how == "factory":
            return meta(m.tensor([1, 0], dtype=d, requires_grad=True))
        if how == "zeros":
            return meta(m.zeros(2, dtype=d, requires_grad=True))
        if how == "full":
            return meta(m.full((2,), 1, dtype=d, requires_grad=True))
        x = m.tensor([1, 0], dtype=d)
        if how == "setter":
            x.requires_grad = True
        elif how == "method":
            x.requires_grad_()
        elif how == "setter_false":
            x.requires_grad = False
        else:
            x.requires_grad_(False)
        return meta(x)

    both(f)


@pytest.mark.parametrize("dtype", FLOAT_NAMES + ["complex64", "complex128"])
def test_requires_grad_floating_and_complex(dtype):
    def f(m):
        x = m.tensor([1, 0], dtype=dt(m, dtype))
        x.requires_grad = True
        y = m.zeros(2, dtype=dt(m, dtype)).requires_grad_()
        return meta(x), meta(y), meta(x * y)

    both(f)


def test_requires_grad_setter_truthiness():
    def f(m):
        x = leaf(m, requires_grad=False)
        x.requires_grad = 1
        a = x.requires_grad
        x.requires_grad = 0
        return a, x.requires_grad

    both(f)


# --- detach ----------------------------------------------------------------------------------


@pytest.mark.parametrize("requires_grad", [True, False])
def test_detach(requires_grad):
    def f(m):
        x = leaf(m, requires_grad=requires_grad)
        y = x * 2
        dx, dy = x.detach(), y.detach()
        return meta(dx), meta(dy), dx is x, dy * 3, dx._version == x._version

    both(f)


def test_detach_is_new_leaf_each_time():
    both(lambda m: (lambda x: (x.detach() is x.detach(), x.detach() is x))(leaf(m)))


def test_detach_inplace_non_leaf():
    def f(m):
        x = leaf(m)
        y = x * 2
        z = y.detach_()
        return z is y, meta(y), meta(y * 2)

    both(f)


def test_detach_inplace_leaf():
    both(lambda m: (lambda x: (x.detach_() is x, meta(x)))(leaf(m)))


def test_detach_inplace_view_raises():
    def f(m):
        x = leaf(m)
        v = x.unsqueeze(0)
        v.detach_()
        return meta(v)

    both(f)


def test_detach_inplace_view_of_non_requiring_raises():
    def f(m):
        x = leaf(m, requires_grad=False)
        v = x.unsqueeze(0)
        v.detach_()
        return meta(v)

    both(f)


def test_data_is_a_leaf():
    def f(m):
        x = leaf(m)
        y = x * 2
        return meta(x.data), meta(y.data), x.data is x

    both(f)


# --- .grad of non-leaves, retain_grad -----------------------------------------------------------


@pytest.mark.parametrize("backward", [False, True])
def test_non_leaf_grad_warning(backward):
    def f(m):
        x = leaf(m)
        y = x * 2
        if backward:
            y.sum().backward()
        return y.grad, x.grad

    both(f)


def test_non_leaf_grad_warning_text_with_pytest_warns():
    x = lg.tensor([1.0], requires_grad=True)
    tx = torch.tensor([1.0], requires_grad=True)
    with pytest.warns(UserWarning) as theirs:
        (tx * 2).grad
    with pytest.warns(UserWarning) as ours:
        (x * 2).grad
    assert [str(w.message) for w in ours] == [str(w.message) for w in theirs]


def test_grad_of_leaf_not_requiring_grad_no_warning():
    both(lambda m: leaf(m, requires_grad=False).grad)


def test_grad_of_non_requiring_non_leaf_under_no_grad():
    def f(m):
        x = leaf(m)
        with m.no_grad():
            y = x * 2
        return y.grad

    both(f)


def test_retain_grad():
    def f(m):
        x = leaf(m)
        y = x * 2
        a = y.retains_grad
        y.retain_grad()
        b = y.retains_grad
        y.retain_grad()
        (y * y).sum().backward()
        return a, b, y.retains_grad, y.grad, x.grad, x.retains_grad

    both(f)


def test_retain_grad_on_leaf_is_noop():
    def f(m):
        x = leaf(m)
        x.retain_grad()
        return x.retains_grad

    both(f)


def test_retain_grad_without_requires_grad():
    both(lambda m: leaf(m, requires_grad=False).retain_grad())


def test_retain_grad_accumulates():
    def f(m):
        x = leaf(m)
        y = x * 2
        y.retain_grad()
        z = (y * y).sum()
        z.backward(retain_graph=True)
        g1 = y.grad.clone()
        z.backward()
        return g1, y.grad, x.grad

    both(f)


def test_retain_grad_then_detach_inplace():
    def f(m):
        x = leaf(m)
        y = x * 2
        y.retain_grad()
        y.detach_()
        return y.retains_grad, meta(y)

    both(f)


# --- grad setter --------------------------------------------------------------------------------

GRAD_VALUES = {
    "ok": lambda m: m.zeros(3),
    "none": lambda m: None,
    "list": lambda m: [1.0, 2.0, 3.0],
    "float": lambda m: 1.0,
    "numpy": lambda m: np.zeros(3, np.float32),
    "dtype": lambda m: m.zeros(3, dtype=m.float64),
    "dtype_int": lambda m: m.zeros(3, dtype=m.int64),
    "size": lambda m: m.zeros(2),
    "size_2d": lambda m: m.zeros(3, 1),
    "size_0d": lambda m: m.zeros(()),
    "dtype_and_size": lambda m: m.zeros(2, dtype=m.float64),
    "dtype_and_size_half": lambda m: m.zeros(4, 4, dtype=m.float16),
}


@pytest.mark.parametrize("target", ["leaf", "leaf_no_grad", "non_leaf"])
@pytest.mark.parametrize("name", list(GRAD_VALUES))
def test_grad_setter(name, target):
    def f(m):
        x = leaf(m, requires_grad=target != "leaf_no_grad")
        if target == "non_leaf":
            x = x * 2
        g = GRAD_VALUES[name](m)
        x.grad = g
        return x.grad is g

    both(f)


def test_grad_setter_then_backward_accumulates_into_it():
    def f(m):
        x = leaf(m)
        g = m.ones(3)
        x.grad = g
        (x * x).sum().backward()
        return x.grad is g, x.grad

    both(f)


def test_grad_deleter():
    def f(m):
        x = leaf(m)
        x.sum().backward()
        del x.grad
        return x.grad

    both(f)


def _torch_device_message(grad_dtype=None, grad_shape=(3,)):
    """torch's text for a cpu tensor given a grad on another device type, obtained from torch
    with the meta device standing in for cuda."""
    x = torch.zeros(3, requires_grad=True)
    got, _ = call(
        lambda m: setattr(x, "grad", torch.zeros(grad_shape, dtype=grad_dtype, device="meta")),
        torch,
    )
    assert isinstance(got, Raised)
    got.text = got.text.replace("'meta'", "'cuda'")
    return got


@pytest.mark.parametrize("case", ["device", "device_and_size", "dtype_and_device"])
def test_grad_setter_device_check(case):
    dtype = torch.float64 if case == "dtype_and_device" else None
    shape = (2,) if case == "device_and_size" else (3,)
    expected = _torch_device_message(dtype, shape)
    x = lg.zeros(3, requires_grad=True)
    g = lg.zeros(shape, dtype=lg.float64 if dtype else None, device="cuda")
    got, _ = call(lambda m: setattr(x, "grad", g), lg)
    assert isinstance(got, Raised), "leafgrad accepted a grad on another device"
    same_error(expected, got)


# --- conversions that change nothing, .to ---------------------------------------------------

SAME_OBJECT = {
    "float": lambda m, x: x.float(),
    "to_dtype": lambda m, x: x.to(m.float32),
    "to_dtype_kw": lambda m, x: x.to(dtype=m.float32),
    "to_cpu_str": lambda m, x: x.to("cpu"),
    "to_device": lambda m, x: x.to(m.device("cpu")),
    "to_tensor": lambda m, x: x.to(m.zeros(1)),
    "to_both": lambda m, x: x.to("cpu", m.float32),
    "cpu": lambda m, x: x.cpu(),
    "type_as": lambda m, x: x.type_as(m.zeros(1)),
    "type_str": lambda m, x: x.type("torch.FloatTensor"),
    "type_dtype": lambda m, x: x.type(m.float32),
    "contiguous": lambda m, x: x.contiguous(),
    "to_copy": lambda m, x: x.to(m.float32, copy=True),
    "double": lambda m, x: x.double(),
    "to_float64": lambda m, x: x.to(m.float64),
    "as_tensor": lambda m, x: m.as_tensor(x),
    "as_tensor_dtype": lambda m, x: m.as_tensor(x, dtype=m.float32),
    "as_tensor_f64": lambda m, x: m.as_tensor(x, dtype=m.float64),
}


@pytest.mark.parametrize("requires_grad", [True, False])
@pytest.mark.parametrize("name", list(SAME_OBJECT))
def test_conversion_identity(name, requires_grad):
    def f(m):
        x = leaf(m, requires_grad=requires_grad)
        y = SAME_OBJECT[name](m, x)
        return y is x, y

    both(f)


@pytest.mark.parametrize("target", DTYPE_NAMES)
@pytest.mark.parametrize("source", ["float32", "float64", "complex64"])
def test_to_dtype_of_requires_grad_leaf(source, target):
    def f(m):
        x = m.tensor([1.5, -0.5, 0.0], dtype=dt(m, source), requires_grad=True)
        y = x.to(dt(m, target))
        return y, y is x, signature(y.grad_fn, [x]) if y.grad_fn is not None else None

    both(f)


@pytest.mark.parametrize(
    "method",
    [
        "long",
        "int",
        "short",
        "char",
        "byte",
        "bool",
        "half",
        "bfloat16",
        "double",
        "cfloat",
        "cdouble",
        "float",
    ],
)
def test_conversion_methods(method):
    def f(m):
        x = leaf(m, (1.5, -0.5, 0.0, 2.75))
        y = getattr(x, method)()
        return y, y is x

    both(f)


def test_int_conversion_gives_leaf_that_does_not_require_grad():
    def f(m):
        x = leaf(m)
        y = x.long()
        z = y * 2
        return meta(y), meta(z), y.grad

    both(f)


def test_to_copy_backward_gradient():
    def f(m):
        x = leaf(m)
        (x.double() * 3).sum().backward()
        return x.grad

    both(f)


# --- Python conversions --------------------------------------------------------------------

CONVERSIONS = {
    "numpy": lambda t: t.numpy(),
    "item": lambda t: t.item(),
    "tolist": lambda t: t.tolist(),
    "float": lambda t: float(t),
    "int": lambda t: int(t),
    "bool": lambda t: bool(t),
    "len": lambda t: len(t),
    "iter": lambda t: [v.tolist() for v in t],
    "complex": lambda t: complex(t),
    "index": lambda t: [10, 20, 30, 40][t],
}

SOURCES = {
    "0d": lambda m: m.tensor(2.5),
    "0d_grad": lambda m: m.tensor(2.5, requires_grad=True),
    "0d_int": lambda m: m.tensor(3),
    "0d_bool": lambda m: m.tensor(True),
    "0d_complex": lambda m: m.tensor(1 + 2j),
    "1el": lambda m: m.tensor([1.5]),
    "1el_grad": lambda m: m.tensor([1.5], requires_grad=True),
    "1el_int": lambda m: m.tensor([2]),
    "vec": lambda m: m.tensor([1.0, 2.0]),
    "vec_grad": lambda m: m.tensor([1.0, 2.0], requires_grad=True),
    "vec_int": lambda m: m.tensor([1, 2, 3]),
    "mat": lambda m: m.tensor([[1, 2], [3, 4]]),
    "empty": lambda m: m.zeros(0),
    "empty_2d": lambda m: m.zeros(0, 3),
    "non_leaf": lambda m: m.tensor([1.5], requires_grad=True) * 2,
    "bf16": lambda m: m.tensor([1.5, 2.25], dtype=m.bfloat16),
    "f16_0d": lambda m: m.tensor(1.5, dtype=m.float16),
}


@pytest.mark.parametrize("source", list(SOURCES))
@pytest.mark.parametrize("conv", list(CONVERSIONS))
def test_python_conversions(conv, source):
    def f(m):
        out = CONVERSIONS[conv](SOURCES[source](m))
        if isinstance(out, np.ndarray):
            return str(out.dtype), out.shape, out.tolist()
        return out

    both(f)


def test_numpy_force():
    def f(m):
        out = m.tensor([1.0, 2.0], requires_grad=True).numpy(force=True)
        return str(out.dtype), out.tolist()

    both(f)


# --- tensor(): copy-construct warning, dtype inference, ragged lists ---------------------------


@pytest.mark.parametrize("requires_grad", [True, False])
def test_tensor_of_tensor_warns(requires_grad):
    def f(m):
        x = leaf(m, requires_grad=requires_grad)
        y = m.tensor(x)
        return meta(y), y

    both(f)


def test_tensor_of_tensor_requires_grad_and_dtype():
    def f(m):
        x = leaf(m)
        return m.tensor(x, dtype=m.float64, requires_grad=True)

    both(f)


INFERENCE_DATA = {
    "empty_list": [],
    "nested_empty": [[], []],
    "bool": True,
    "int": 3,
    "float": 2.5,
    "complex": 1 + 2j,
    "bools": [True, False],
    "ints": [1, 2],
    "big_int": [2**40],
    "floats": [1.0, 2.0],
    "bool_int": [True, 2],
    "int_float": [1, 2.5],
    "bool_float": [False, 2.5],
    "int_complex": [1, 2j],
    "float_complex": [[1.5, 2.0], [3j, 1]],
    "nested_ints": [[1, 2], [3, 4]],
    "tuples": ((1, 2), (3, 4.0)),
    "deep": [[[1], [2]], [[3], [4]]],
    "np_f32_scalar": np.float32(1.5),
    "np_f64_scalar": np.float64(1.5),
    "np_i32_scalar": np.int32(3),
    "np_bool_scalar": np.bool_(True),
    "np_c64_scalar": np.complex64(1j),
    "np_f16_scalar": np.float16(1.5),
    "np_u8_scalar": np.uint8(3),
    "list_np_f32": [np.float32(1.5), np.float32(2)],
    "list_np_i8_int": [np.int8(1), 2],
    "list_np_f32_float": [np.float32(1.5), 2.5],
    "list_int_np_f32": [1, np.float32(2.5)],
    "list_np_i16_np_u8": [np.int16(1), np.uint8(2)],
    "np_f32": np.array([1.0, 2.0], np.float32),
    "np_f64": np.array([1.0, 2.0]),
    "np_i32": np.array([[1, 2]], np.int32),
    "np_i64": np.array([1, 2]),
    "np_u8": np.array([1, 2], np.uint8),
    "np_bool": np.array([True]),
    "np_c64": np.array([1j], np.complex64),
    "np_c128": np.array([1j]),
    "np_f16": np.array([1.5], np.float16),
    "np_0d": np.array(2.5),
    "list_of_np": [np.array([1.0, 2.0], np.float32), np.array([3.0, 4.0], np.float32)],
    "np_object": np.array([1, "a"], dtype=object),
    "np_str": np.array(["a"]),
    "string": "abc",
    "list_str": ["a"],
    "none": None,
    "list_none": [None],
}


@pytest.mark.parametrize("default", ["float32", "float64"])
@pytest.mark.parametrize("name", list(INFERENCE_DATA))
def test_tensor_dtype_inference(name, default):
    def f(m):
        m.set_default_dtype(dt(m, default))
        return m.tensor(INFERENCE_DATA[name])

    both(f, exact=True)


def test_tensor_of_list_of_tensors():
    def f(m):
        return m.tensor([m.tensor(1.5), m.tensor(2, dtype=m.int32)])

    both(f, check_warnings=False)


def test_tensor_of_list_of_0d_int_tensors():
    both(lambda m: m.tensor([m.tensor(1, dtype=m.int16), m.tensor(2, dtype=m.int16)]))


@pytest.mark.parametrize("dtype", DTYPE_NAMES)
def test_tensor_explicit_dtype_from_floats(dtype):
    both(lambda m: m.tensor([[1.7, -2.2], [0.0, 3.9]], dtype=dt(m, dtype)), exact=True)


@pytest.mark.parametrize("dtype", DTYPE_NAMES)
def test_tensor_explicit_dtype_from_bools_and_ints(dtype):
    both(lambda m: m.tensor([True, 0, 5, 200], dtype=dt(m, dtype)), exact=True)


RAGGED = {
    "short_row": [[1, 2], [3]],
    "long_row": [[1], [2, 3]],
    "deep_short": [[[1, 2], [3, 4]], [[5, 6], [7]]],
    "scalar_then_list": [1, [2]],
    "list_then_scalar": [[1], 2],
    "empty_then_full": [[], [1]],
    "deep_mixed": [[1, 2], [3, [4]]],
}


@pytest.mark.parametrize("name", list(RAGGED))
def test_ragged_lists(name):
    both(lambda m: m.tensor(RAGGED[name]))


def test_repr_of_leaf_and_non_leaf():
    def f(m):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        return repr(x), repr(x * 2), repr(x.sum()), repr(x.long()), repr(x.detach())

    both(f)


@pytest.mark.parametrize("conv", [float, complex, int, bool])
@pytest.mark.parametrize("mode", ["grad", "no_grad", "inference_mode"])
def test_scalar_conversion_warns_only_with_grad_mode_on(conv, mode):
    """PyTorch warns that a tensor requiring grad becomes a number only while grad mode is on
    (so ``float(loss)`` inside an optimizer's ``no_grad`` step is silent)."""

    def f(m):
        x = m.tensor([1.5], requires_grad=True)
        ctx = {"grad": m.enable_grad, "no_grad": m.no_grad, "inference_mode": m.inference_mode}
        previous = m.is_warn_always_enabled()
        m.set_warn_always(True)
        try:
            with ctx[mode]():
                return conv(x)
        finally:
            m.set_warn_always(previous)

    both(f)
