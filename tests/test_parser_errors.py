"""Calls PyTorch's argument parser refuses (Note [Parser errors on the error path]): every
``torch.<function>`` in leafgrad's parser table, called with arguments no signature takes, raises
PyTorch's TypeError and text."""

from __future__ import annotations

import pytest
import torch
from conftest import both

import leafgrad as lg
from leafgrad._parser_errors import FUNCTIONS, METHODS, NAMESPACES

ARGSETS = {"str": ("a",), "nine_nones": (None,) * 9, "float_list": ([1.5],)}

# where leafgrad's answer still differs: none at present
KNOWN: set = set()
_SKIP = {"manual_seed", "set_default_dtype", "set_num_threads", "set_num_interop_threads"}

CASES = [
    pytest.param(
        name,
        key,
        marks=[pytest.mark.xfail(strict=True, reason="known gap")] if (name, key) in KNOWN else [],
    )
    for name in sorted(FUNCTIONS)
    if name not in _SKIP and hasattr(torch, name)
    for key in ARGSETS
]


@pytest.mark.parametrize(("name", "key"), CASES)
def test_refused_calls_raise_the_parsers_type_error(name, key):
    t, g = both(lambda m: getattr(m, name)(*ARGSETS[key]), check_warnings=False)


def test_errors_the_parser_does_not_raise_pass_through():
    """A call that binds keeps leafgrad's own error (a shape mismatch is not an argument
    error)."""
    both(lambda m: m.add(m.ones(2), m.ones(3)))
    both(lambda m: m.exp(m.ones(2), out=m.ones(3, dtype=m.int64)))
    both(lambda m: m.cat([m.ones(2), m.ones(2, 2)]))


@pytest.mark.parametrize(
    "call",
    [
        lambda m: m.exp(2.0),
        lambda m: m.exp([1.0, 2.0]),
        lambda m: m.sum("a"),
        lambda m: m.matmul(m.ones(2)),
        lambda m: m.cat(m.ones(2)),
        lambda m: m.cat([m.ones(2), "a"]),
        lambda m: m.stack((m.ones(2), 1.0)),
        lambda m: m.add(1.0, 2.0),
        lambda m: m.transpose(m.ones(2, 2)),
        lambda m: m.zeros([2.5]),
        lambda m: m.get_default_dtype(1),
        lambda m: m.where(1, m.ones(2), m.ones(2)),
    ],
)
def test_common_mistakes(call):
    both(call)


@pytest.mark.parametrize(
    "call",
    [
        lambda m, o: m.add(m.ones(2), m.ones(2) * 2, out=o),
        lambda m, o: m.exp(m.ones(2), out=o),
        lambda m, o: m.mul(m.ones(2), 3, out=o),
        lambda m, o: m.eq(m.ones(2), 1, out=o),
    ],
)
@pytest.mark.parametrize(
    "out", ["same", "float64", "int64", "bool", "bigger", "empty", "view", "strided", "grad"]
)
def test_out_arguments(call, out):
    """Note [out= arguments]: cast check, resize (with its warning), the write and its version,
    the refusal when an argument requires grad."""

    def run(m):
        made = {
            "same": lambda: m.zeros(2),
            "float64": lambda: m.zeros(2, dtype=m.float64),
            "int64": lambda: m.zeros(2, dtype=m.int64),
            "bool": lambda: m.zeros(2, dtype=m.bool),
            "bigger": lambda: m.zeros(3),
            "empty": lambda: m.zeros(0),
            "view": lambda: m.zeros(4)[1:3],
            "strided": lambda: m.zeros(2, 2)[:, 0],
            "grad": lambda: m.zeros(2, requires_grad=True),
        }[out]()
        version = made._version
        r = call(m, made)
        return r is made, made, made._version - version, made.requires_grad, made.grad_fn

    both(run)


def test_out_refused_when_an_argument_requires_grad_unless_no_grad():
    def run(m):
        a = m.ones(2, requires_grad=True)
        with m.no_grad():
            r = m.mul(a, 2, out=m.zeros(2))
        return r, r.requires_grad, m.mul(a, 2, out=m.zeros(2))

    both(run)


INPLACE_ARGS = {
    "none": (),
    "str": ("a",),
    "two_ints": (0, 1),
    "five": (1, 2, 3, 4, 5),
    "tuple": ((0,),),
}


@pytest.mark.parametrize("name", ["add_", "mul_", "sin_", "clamp_", "pow_", "xlogy_", "lerp_"])
@pytest.mark.parametrize("key", sorted(INPLACE_ARGS))
@pytest.mark.parametrize("leaf", [True, False])
def test_inplace_argument_errors_come_before_the_leaf_check(name, key, leaf):
    """A leaf that requires grad, written with arguments the parser refuses: PyTorch's TypeError,
    not the leaf error (the parser runs first); a call that binds gets the leaf error."""

    def run(m):
        x = m.ones(2, 3, requires_grad=leaf)
        getattr(x, name)(*INPLACE_ARGS[key])
        return x

    # x.add_(0, 1) binds PyTorch's deprecated add_(Number alpha, Tensor other), whose warning
    # the parser gives before the leaf check
    both(run)


# Tensor methods (PyTorch's C ones: its Python-level methods, such as unique or norm, are not in
# the table): where leafgrad's answer still differs
KNOWN_METHODS = {
    ("cuda", "nine_nones"),
}
# methods whose probe would act beyond the tensor (a new process group, a pinned copy...)
_SKIP_METHODS = {"map_", "apply_", "record_stream", "share_memory_", "backward"}
METHOD_ARGSETS = {**ARGSETS, "keyword": ((), {"bogus": 1})}

METHOD_CASES = [
    pytest.param(
        name,
        key,
        marks=[pytest.mark.xfail(strict=True, reason="known gap")]
        if (name, key) in KNOWN_METHODS
        else [],
    )
    for name in sorted(METHODS)
    if name not in _SKIP_METHODS
    for key in METHOD_ARGSETS
    if key != "keyword" or METHODS[name][0] == "noargs"
]


@pytest.mark.parametrize(("name", "key"), METHOD_CASES)
def test_refused_method_calls_raise_the_parsers_type_error(name, key):
    args, kwargs = METHOD_ARGSETS[key] if key == "keyword" else (METHOD_ARGSETS[key], {})
    both(lambda m: getattr(m.ones(2, 3), name)(*args, **kwargs), check_warnings=False)


def test_how_python_names_the_method_in_takes_no_arguments():
    """``x.abs(1)`` calls PyTorch's method descriptor (``TensorBase.abs``); a bound method object
    is named by its tensor's class (``Tensor.abs``, ``Parameter.abs``)."""

    def run(m):
        x = m.ones(2)
        p = m.nn.Parameter(m.ones(2))
        bound, bound_p = x.abs, p.abs
        return [
            lambda: x.abs(1),
            lambda: (x + 1).sin_(1, 2),
            lambda: m.Tensor.abs(x, 1),
            lambda: p.abs(1),
            lambda: bound(1),
            lambda: bound_p(1),
            lambda: x.exp(2),  # noqa: B009 (a bound method object)
            lambda: x.abs(*[1]),
            lambda: x.abs(dim=0),
            lambda: x.abs(
                1,
            ),
        ]

    for k in range(10):
        both(lambda m, k=k: run(m)[k]())


@pytest.mark.parametrize(
    "call",
    [
        lambda m: m.relu(m.ones(2), True),
        lambda m: m.ones(2).relu(True),
        lambda m: m.ones(2).relu_(True),
        lambda m: m.nn.functional.relu(m.ones(2) - 2, True),
        lambda m: m.ones(2, 3).view(6, 1.0),
        lambda m: m.ones(2, 3).reshape(-1, 2),
        lambda m: m.ones(2, 3).reshape(-2, 3),
        lambda m: m.ones(2, 3).sum((0, 1.0)),
        lambda m: m.ones(2, 3).mean(None),
        lambda m: m.ones(2, 3).transpose(None),
        lambda m: m.ones(2, 3).transpose(0),
        lambda m: m.ones(2, 3).as_strided(2),
        lambda m: m.ones(2, 3).logit(1),
        lambda m: m.ones(2, 3).median("a"),
        lambda m: m.ones(2, 3).squeeze_("a"),
        lambda m: m.ones(2, 3).aminmax(0),
        lambda m: m.ones(2, 3).scatter_add_(0, dim=0),
        lambda m: m.ones(2, 3).renorm_(2, 0),
        lambda m: m.ones(2, 3, requires_grad=True).transpose_(0.5, 1),
        lambda m: m.ones(2, 3).requires_grad_("a"),
        lambda m: m.ones(2, 3).requires_grad_(1),
        lambda m: m.ones(2, 3).size(True),
        lambda m: m.ones(2, 3).stride(1.0),
        lambda m: m.ones(2, 3).is_pinned("a"),
        lambda m: m.ones(2, 3).median(keepdim=True),
        lambda m: m.ones(2, 3).nanmedian(keepdim=False),
        lambda m: m.median(m.ones(2, 3), keepdim=True),
        lambda m: m.ones(2, 3).max(keepdim=True),
        lambda m: m.max(m.ones(2, 3), keepdim=True),
        lambda m: m.ones(2, 3).prod(keepdim=True),
        lambda m: m.ones(2, 3).std(True, keepdim=True),
        lambda m: m.std(m.ones(2, 3), 0, keepdim=True),
        lambda m: m.ones(2, 3).std(None, keepdim=True),
        lambda m: m.ones(2, 3).max(dim=1, keepdim=True),
        lambda m: m.ones(2, 3).clamp_max(None),
        lambda m: m.ones(2, 3).clamp_min_(None),
        lambda m: m.clamp_min(m.ones(2, 3), None),
        lambda m: m.ones(4, 4).hsplit(),
        lambda m: m.hsplit(m.ones(4, 4), [1.5]),
        lambda m: m.ones(4, 4).vsplit(1, 3),
        lambda m: m.ones(3).unique(0),
        lambda m: m.unique(m.ones(3), dim=0, sorted=1),
        lambda m: m.ones(3).unique_consecutive(1),
        lambda m: m.ones(2, 2).lu(1),
        lambda m: m.ones(4).tensor_split([1.5]),
        lambda m: m.ones(4).tensor_split([1, 1.5]),
        lambda m: m.ones(4).tensor_split(2.5),
        lambda m: m.tensor_split(m.ones(4), 2.5),
        lambda m: m.tensor_split(m.ones(4), [1.5]),
    ],
)
def test_method_mistakes(call):
    both(call)


@pytest.mark.parametrize(
    "call",
    [
        lambda m: m.ones(2, 3).amax(0, 1),
        lambda m: m.amax(m.ones(2, 3), 0, 1),
        lambda m: m.ones(2, 3).amax(0, keepdim=1),
        lambda m: m.ones(2, 3).argmax(0, 1),
        lambda m: m.ones(2, 3).logsumexp(0, 1),
        lambda m: m.ones(2, 3).nansum(0, 1),
        lambda m: m.ones(2, 3).mode(0, 1),
        lambda m: m.ones(3, 3).qr(0),
        lambda m: m.ones(2, 3).amax(0, m.tensor(True)),
        lambda m: m.ones(2, 3).amax(0, keepdim=True),
        lambda m: m.isclose(m.ones(2), m.ones(2), equal_nan=1),
    ],
)
def test_bool_arguments_take_python_bools_only(call):
    """A ``bool`` parameter of PyTorch's parser takes a Python bool: not an int (``keepdim=1``
    would silently reduce otherwise), a NumPy bool or a tensor."""
    both(call)


@pytest.mark.parametrize(
    "call",
    [
        lambda m: m.softmax(m.ones(2, 3)),
        lambda m: m.ones(2, 3).softmax(),
        lambda m: m.ones(2, 3).softmax(0, 3),
        lambda m: m.softmax(m.ones(2, 3), 0, m.float64),
        lambda m: m.ones(2, 3).log_softmax(0, m.float64),
        lambda m: m.ones(2, 3).softmax(dim=1, dtype=m.float64),
        lambda m: m.nn.functional.softmax(m.ones(2, 3), 0, 3, m.float64),
        lambda m: m.softmax(m.ones(2, 3), 0, dtype=3),
        lambda m: m.log_softmax(m.ones(2, 3), 0, m.float32, 1),
    ],
)
def test_softmax_of_torch_and_tensor_takes_dim_then_dtype(call):
    """``torch.softmax(input, dim, dtype)`` and ``Tensor.softmax(dim, dtype)``: ``dim``
    required and ``dtype`` second; F's has ``_stacklevel`` before ``dtype``."""
    both(call)


@pytest.mark.parametrize(
    "call",
    [
        lambda m: m.ones(2, 3).add_(0.5, m.ones(3)),
        lambda m: m.ones(2, 3).sub(2, m.ones(3)),
        lambda m: m.add(m.ones(2, 3), 2, m.ones(3)),
        lambda m: m.sub(m.ones(2, 3), 2, 1),
        lambda m: m.add(m.ones(2, 3), 2, m.ones(3), out=m.zeros(2, 3)),
        lambda m: m.ones(2, requires_grad=True).add_(2, m.ones(2)),
        lambda m: m.ones(2, 3).mul(2, 3),
        # a 0-dim tensor without grad is a Number to the parser
        lambda m: m.ones(2, 3).add(m.tensor(2.0), m.ones(3)),
        lambda m: m.add(m.ones(2, 3), m.tensor(2.0), m.ones(3)),
        lambda m: m.ones(2, 3).sub_(m.tensor(2), m.ones(3)),
        lambda m: m.ones(2, 3).add(m.tensor([2.0]), m.ones(3)),
    ],
)
def test_deprecated_alpha_overloads_of_add_and_sub(call):
    """Legacy ``p.data.add_(-lr, grad)``: PyTorch's deprecated ``(Number alpha, Tensor other)``
    overloads compute ``self + alpha * other`` after the parser's (warn-once) warning."""
    both(call)


REFUSED_ALPHA_CALLS = [
    "torch.add(x, 2, y, alpha=3)",
    "torch.add(x, 2, y, 4)",
    "torch.add(x, y, 2)",
    "torch.sub(x, 2, 'a')",
    "torch.add(x, y, 2, 3)",
    "x.add(y, 2)",
    "x.add(2, y, 4)",
    "x.sub_(2, y, 4)",
    "x.add_(y, 2)",
    "x.add(2, 'a')",
    "x.sub_(2, 'a')",
    "x.add(2, y, alpha=3)",
    "x.add_(2, y, alpha=3)",
    "x.add(2, y, out=y)",
    "x.add_(2, y, out=y)",
    "x.add(y, alpha=2, beta=3)",
    "x.add(other=y, alpha=2, beta=3)",
    "x.add_(y, alpha=2, beta=3)",
    "x.add(y, beta=3)",
]


@pytest.mark.parametrize("call", REFUSED_ALPHA_CALLS)
def test_calls_neither_add_overload_takes(call):
    """What neither the deprecated ``(Number alpha, Tensor other)`` overload nor the shown one
    takes gets the parser's message for the shown signature alone: "takes 1 positional
    argument", "unrecognized keyword arguments" (PyTorch reads a keyword with a default as
    never matching), or the arguments marked where their types differ."""
    both(lambda m: eval(call, {"torch": m, "x": m.ones(2, 3), "y": m.ones(2, 3)}))


DEPRECATED_FORM_CALLS = [
    "x.addcmul(2, x, y)",
    "x.addcmul_(-0.5, y, y)",
    "torch.addcmul(x, 2, x, y)",
    "torch.addcmul(x, 2, x, y, out=torch.zeros(2, 2))",
    "x.addcdiv(2, x, y)",
    "x.addcdiv_(0.5, y, y + 1)",
    "torch.addcdiv(x, 2, x, y + 1)",
    "x.addmm(2, 3, x, y)",
    "x.addmm(2, x, y)",
    "x.addmm_(2, y, y)",
    "torch.addmm(2, x, 3, x, y)",
    "torch.addmm(2, x, x, y)",
    "torch.addmm(2, x, 3, x, y, out=torch.zeros(2, 2))",
    "x.addbmm(2, 3, b, b)",
    "x.addbmm_(2, b, b)",
    "torch.addbmm(2, x, b, b)",
    "b.baddbmm(2, 3, b, b)",
    "torch.baddbmm(2, b, 3, b, b)",
    "v.addmv(2, 3, x, v)",
    "v.clone().addmv_(2, x, v)",
    "torch.addmv(2, v, x, v)",
    "x.addr(2, 3, v, v)",
    "x.addr_(2, v, v)",
    "torch.addr(2, x, 3, v, v)",
    "x.addcmul(torch.tensor(2.0), x, y)",
    "x.addcmul(True, x, y)",
    # refused: no form takes them, and the message shows the current signatures only
    "x.addcmul(2, 3, x)",
    "x.addmm(2, 3, x, y, out=x)",
    "torch.addmm(2, x, 3, x, y, beta=2)",
    "x.addcmul(x, y, 2)",
    "x.addcdiv(1.5, 'b')",
    "x.addmm(x, foo=1)",
    "x.addmv_(x)",
    "x.addr(1, bar=2)",
]


@pytest.mark.parametrize("call", DEPRECATED_FORM_CALLS)
def test_deprecated_forms_of_blas_like_ops(call):
    """PyTorch's parser binds the old scalars-first forms (``addcmul_(value, t1, t2)``,
    ``addmm(beta, input, alpha, mat1, mat2)``) after its warn-once warning, which names the form
    and lists the current signatures (Note [Deprecated overloads] in _arg_check.py)."""

    def run(m):
        m.set_warn_always(True)
        try:
            x = m.tensor([[1.0, 2.0], [3.0, 4.0]])
            y = m.tensor([[0.5, -1.0], [2.0, 0.25]])
            v, b = m.tensor([1.0, -2.0]), m.ones(1, 2, 2)
            return eval(call, {"torch": m, "x": x, "y": y, "v": v, "b": b})
        finally:
            m.set_warn_always(False)

    both(run)


@pytest.mark.parametrize(
    "call",
    [
        "x.copy_(1.5, 'b')",
        "x.copy_(y, 1)",
        "x.copy_(y, None)",
        "x.copy_(y, non_blocking=1)",
        "x.copy_(foo=1)",
        "x.copy_(y, True, 3)",
        "x.copy_(other=y, non_blocking=True)",
        "x.copy_(src=y)",
        "x.copy_(2.5)",
    ],
)
def test_copy_takes_a_bool_non_blocking(call):
    """``copy_``'s ``non_blocking`` is a ``bool``: an int or a string was taken (and ignored)."""
    both(lambda m: eval(call, {"x": m.ones(2, 3), "y": m.zeros(2, 3)}))


OVERLOAD_CALLS = [
    # refused: no shown signature binds them (they were computed, an int read as a bool...)
    "torch.std_mean(x, 0, 1)",
    "torch.var_mean(x, 0, keepdim=1)",
    "x.median(0, 1)",
    "x.nanmedian(0, 1.5)",
    "x.median(None)",
    "torch.randint_like(x, 1.5)",
    "torch.randint_like(x, 0, True)",
    "x.repeat_interleave(True)",
    "torch.histogram(x, 1.5)",
    "torch.normal(x, None)",
    "x.bernoulli(None)",
    "torch.subtract(x, 2, y)",
    "torch.squeeze_copy(x, None)",
    "torch.nuclear_norm(x, None)",
    "x.random_(None)",
    "torch.median(x, 0, 1)",
    "torch.median(x, None)",
    "torch.nanmedian(x, True)",
    "x.cumsum(0, dtype='float')",
    "x.cumsum_(0, dtype='float')",
    "x.cumprod_(0, dtype='float')",
    "x.nanmean(0, dtype='f')",
    "torch.nansum(x, dtype='double')",
    # taken: the parser binds them
    "x.view(3, 2)",
    "x.view(-1)",
    "x.permute(1, 0)",
    "x.repeat(2, 1)",
    "x.expand(2, 2, 3)",
    "x.std(0, keepdim=True)",
    "torch.std_mean(x, 0, True)",
    "torch.std_mean(x, dim=0, correction=0)",
    "x.max(1)",
    "torch.max(x, y)",
    "x.median(0, True)",
    "x.sum(dtype=torch.float64)",
    "x.cumsum(0, dtype=float)",
    "x.to(torch.float64)",
    "x.to('cpu', torch.float16)",
    "torch.where(x > 1, x, 0.0)",
    "x.repeat_interleave(2, dim=0)",
    "torch.histogram(x, 3)",
    "torch.normal(x, 0.5).shape",
    "torch.linspace(0, 1, 5)",
    "x.index_select(0, torch.tensor([1]))",
    "x.split(1)",
    "x.transpose(0, 1)",
    "x.flatten(0)",
    "torch.squeeze_copy(x, 0)",
    "torch.median(x, 0, True)",
    "torch.nanmedian(x, dim=1)",
    "torch.arange(3, layout=torch.strided)",
    "torch.histogram(x, 3, range=(0.0, 2.0))",
    "torch.gradient(x, spacing=[1.0, 2.0])",
    "torch.gradient(x, spacing=2.0)",
]


@pytest.mark.parametrize("call", OVERLOAD_CALLS)
def test_overloads_bind_before_the_call(call):
    """Note [Overloads bound before the call] in _arg_check.py: a call runs only when one of
    PyTorch's shown signatures binds it; what none binds gets the parser's message."""

    def run(m):
        m.manual_seed(0)
        x = m.tensor([[1.0, 2.0, 3.0], [4.0, 0.5, 6.0]])
        y = m.tensor([[0.5, 2.5, 1.0], [3.0, 5.0, 7.0]])
        return eval(call, {"torch": m, "x": x, "y": y})

    both(run)


INT_LIST_CALLS = [
    # ``int[]`` (no length) takes a bare int only where the parser spreads it: a method's one
    # positional argument; ``int[1]`` takes one anywhere
    "torch.flip(x, 0)",
    "torch.permute(x, 0)",
    "torch.permute(x, 1, 0)",
    "torch.reshape(x, -1)",
    "torch.reshape(x, 3, 2)",
    "torch.tile(x, 2)",
    "torch.tile(x, 1, 2)",
    "torch.broadcast_to(x, 3)",
    "torch.broadcast_to(x, 2, 3)",
    "torch.layer_norm(x, 3)",
    "torch.nn.functional.layer_norm(x, 3)",
    "torch.nn.functional.pad(x, 1)",
    "torch.split_with_sizes(x, 2)",
    "torch.unflatten(x, 1, 3)",
    "torch.as_strided(x, 2, 1)",
    "x.rot90(1, 1)",
    "x.split_with_sizes(2)",
    "x.flip(0)",
    "x.flip(0, 1)",
    "x.permute(1, 0)",
    "x.reshape(-1)",
    "x.tile(2)",
    "x.tile(1, 2)",
    "x.broadcast_to(2, 3)",
    "x.broadcast_to(3)",
    "x.new_zeros(2)",
    "torch.flip(x, [0])",
    "torch.permute(x, (1, 0))",
    "torch.broadcast_to(x, (2, 3))",
    "torch.tile(x, (1, 2))",
    "torch.nn.functional.layer_norm(x, (3,))",
    "torch.sum(x, 0)",
    "torch.amax(x, 1)",
]


@pytest.mark.parametrize("call", INT_LIST_CALLS)
def test_int_lists_take_a_bare_int_only_where_pytorch_does(call):
    both(lambda m: eval(call, {"torch": m, "x": m.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])}))


def test_deprecated_forms_record_the_ops_graph():
    def run(m):
        a = m.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        w = m.tensor([[0.5, -1.0], [2.0, 0.25]], requires_grad=True)
        s = m.ones(2, 2).addcmul(0.5, a, w)
        t = m.addmm(2.0, s, -1.0, a, w)
        u = t.clone().addcdiv_(3, a, w + 2)
        u.sum().backward()
        return s.grad_fn.name(), t.grad_fn.name(), u.grad_fn.name(), a.grad, w.grad

    both(run)


def test_deprecated_alpha_gradients():
    def run(m):
        a = m.ones(3, requires_grad=True)
        b = m.arange(3.0, requires_grad=True)
        y = a.add(-0.5, b).sub(2, b * b)
        y.sum().backward()
        return y, y.grad_fn.name(), a.grad, b.grad

    both(run)


@pytest.mark.parametrize(
    ("space", "name"), [(space, name) for space in sorted(NAMESPACES) for name in NAMESPACES[space]]
)
@pytest.mark.parametrize("key", sorted(ARGSETS))
def test_refused_linalg_special_fft_calls_raise_the_parsers_type_error(space, name, key):
    """torch.linalg/special/fft functions: the parser's TypeError, naming ``linalg_det``..."""
    both(lambda m: getattr(getattr(m, space), name)(*ARGSETS[key]), check_warnings=False)


SINGLE_SIGNATURE_CALLS = [
    # refused: a later argument the parser does not take (they were computed)
    "x.fill_diagonal_(1, wrap=2)",
    "x.fill_diagonal_(0, 1.5)",
    "torch.pinverse(x, None)",
    "torch.pinverse(x, rcond=None)",
    "x.pinverse(None)",
    "x.pinverse(1e-3, 2)",
    "torch.dropout_(x, 0.5, 1)",
    "torch.alpha_dropout_(x, 0.5, 1.5)",
    "torch.feature_dropout_(x[None], 0.5, 1)",
    "torch.feature_alpha_dropout_(x[None], 0.5, 0)",
    "F.dropout(x, 0.5, 1)",
    "F.dropout(x, 0.5, training=1)",
    "F.dropout(x, 0.5, 1, True)",
    "F.alpha_dropout(x, 0.5, 1)",
    "F.feature_alpha_dropout(x, 0.5, 1)",
    "F.dropout2d(x[None], 0.5, 1)",
    "F.dropout1d(x, 0.5, 1, True)",
    "F.threshold(x, y, 2.0)",
    "F.threshold(x, 1, y)",
    "F.threshold(x, 1, None)",
    "F.threshold_(x, y, 2)",
    "F.threshold(x, y, 2.0, True)",
    "torch.threshold_(x, 1, y)",
    "F.pairwise_distance(x, 1)",
    "F.pairwise_distance(x, y, None)",
    "torch.pairwise_distance(x, y, 2, 1e-6, 1)",
    "torch.pairwise_distance(x, y, keepdim=1)",
    "x.is_same_size(y, 2)",
    "torch.is_same_size(x, 1)",
    "torch.is_same_size(x, y, y)",
    "F.binary_cross_entropy_with_logits(x, y, weight=2)",
    "F.binary_cross_entropy_with_logits(x, y, pos_weight=2)",
    "torch.binary_cross_entropy_with_logits(x, y, 1)",
    "torch.binary_cross_entropy_with_logits(x, y, None, None, 1.5)",
    # taken, as PyTorch takes them
    "x.fill_diagonal_(1, True)",
    "torch.pinverse(x, 1)",
    "x.pinverse(torch.tensor(0.5))",
    "F.threshold(x, torch.tensor(1.0), 2)",
    "F.threshold(x, True, 2)",
    "F.dropout(x, 0.5, True, 1)",
    "F.dropout(x, 0, False)",
    "torch.pairwise_distance(x, y, 1, 0)",
    "torch.is_same_size(x, y)",
]


@pytest.mark.parametrize("call", SINGLE_SIGNATURE_CALLS)
def test_single_signatures_bind_before_the_call(call):
    """Note [Single signatures bound] in _arg_check.py: a later argument PyTorch's parser
    refuses raises its message, and leaves the tensors as they were."""

    def run(m):
        m.manual_seed(0)
        x = m.tensor([[1.0, 2.0, 3.0], [4.0, 0.5, 6.0]])
        y = m.tensor([[0.5, 2.5, 1.0], [3.0, 5.0, 7.0]])
        space = {"torch": m, "F": m.nn.functional, "x": x, "y": y}
        try:
            result = eval(call, space)
        except TypeError as err:
            result = str(err)
        return result, x, x._version, tuple(x.shape)

    both(run)


UNKNOWN_KEYWORD_CALLS = [
    # Python's words for a keyword the function does not take, with PyTorch's name for it
    "torch.exp(x, foo=1)",
    "torch.acos_(x, foo=1)",
    "torch.neg(x, foo=1)",
    "torch.negative(x, foo=1)",
    "torch.detach(x, foo=1)",
    "torch.is_inference(x, foo=1)",
    "torch.is_inference(x, x)",
    "torch.is_inference(input=x, foo=2)",
    "torch.is_signed(x, input=x)",
    "torch.is_nonzero(x, foo=1)",
    "torch.softmax(x, 0, foo=1)",
    "x.softmax(0, foo=1)",
    "torch.log_softmax(x, 0, torch.float64, foo=1)",
    "torch.linalg.det(x[:, :2], foo=1)",
    "torch.linalg.matrix_exp(x[:, :2], out=y)",
    "torch.fft.fft2(x, foo=1)",
    "torch.fft.ihfft2(x, foo=1)",
    "F.max_pool1d(x[None], 2, foo=1)",
    "F.max_pool2d(x[None], 2, foo=1)",
    "F.adaptive_max_pool1d(x[None], 2, foo=1)",
    "F.fractional_max_pool2d(x[None, None], 2, output_size=1, foo=1)",
    "F.threshold(x, 1, 2, foo=1)",
    "F.logsigmoid(x, foo=1)",
    "torch.clone(x, out=y)",
    "torch.flip(x, [0], out=y)",
    # and the methods: PyTorch's C methods are named alone, its Python ones Tensor.<name>
    "x.float(foo=1)",
    "x.clone(foo=1)",
    "x.new_zeros(2, foo=1)",
    "x.requires_grad_(foo=1)",
    "x.size(foo=1)",
    "x.type_as(y, foo=1)",
    "x.qr(foo=1)",
    "x.svd(foo=1)",
    "x.swapaxes(0, 1, foo=1)",
    "x.swapaxes_(0, 1, foo=1)",
    "x.transpose_(0, 1, foo=1)",
    "x.unsqueeze_(0, foo=1)",
    "x.tril_(foo=1)",
    "x.triu_(1, foo=1)",
    "x.polygamma(1, foo=1)",
    "x.matrix_power(2, foo=1)",
    "x.norm(foo=1)",
    "x.split(1, foo=1)",
    "x.backward(foo=1)",
    "x.register_hook(print, foo=1)",
]


@pytest.mark.parametrize("call", UNKNOWN_KEYWORD_CALLS)
def test_unknown_keywords_are_named_as_pytorch_names_them(call):
    def run(m):
        x = m.tensor([[1.0, 2.0, 3.0], [4.0, 0.5, 6.0]])
        y = m.tensor([[0.5, 2.5, 1.0], [3.0, 5.0, 7.0]])
        return eval(call, {"torch": m, "F": m.nn.functional, "x": x, "y": y})

    t, _ = both(run)
    assert type(t).__name__ == "Raised"


# PyTorch's Python-level functions (torch/functional.py, its stubs), which pass their arguments
# on to a C function whose parser refuses them (``unique`` -> ``_unique2``), or read an
# attribute first (``norm``: ``input.layout``); and C functions leafgrad defines in Python later
# than the parser table is installed (the autocast ones) or with one positional argument
FRONTENDS = (
    "as_tensor from_numpy istft lu norm split stft sym_max sym_min symeig tensor unique "
    "unique_consecutive is_autocast_enabled set_autocast_enabled get_autocast_dtype "
    "set_autocast_dtype set_autocast_cache_enabled clear_autocast_cache "
    "autocast_increment_nesting autocast_decrement_nesting is_autocast_cpu_enabled "
    "set_autocast_cpu_enabled get_autocast_cpu_dtype set_autocast_cpu_dtype "
    "get_autocast_gpu_dtype set_autocast_gpu_dtype"
).split()
FRONTEND_ARGS = {
    **ARGSETS,
    "none": (),
    "one": (1,),
    "device_int": ("cpu", 1),
    "device_str": ("cpu", "a"),
    "device_none": ("cpu", None),
}


@pytest.mark.parametrize("key", sorted(FRONTEND_ARGS))
@pytest.mark.parametrize("name", FRONTENDS)
def test_python_level_frontends_refuse_as_torch(name, key):
    if key == "none" and name.startswith("autocast_"):
        pytest.skip("binds: it changes the autocast nesting count")
    both(lambda m: getattr(m, name)(*FRONTEND_ARGS[key]), check_warnings=False)


def test_python_level_frontends_keywords_and_numbers():
    both(lambda m: m.from_numpy(ndarray=None))
    both(lambda m: m.tensor(data=[1.0, 2.0]))
    both(lambda m: m.as_tensor(data=[1, 2]))
    both(lambda m: m.as_tensor([1, 2], m.float32))
    both(lambda m: m.sym_max(3, 2.5))
    both(lambda m: m.sym_min(2, 7))
    both(lambda m: m.unique("a", dim=0))
    both(lambda m: m.stft(None, 4))
    both(lambda m: m.stft(m.ones(8), 4, center=False, return_complex=True, normalized=1))


# Tensor methods PyTorch defines in Python (torch/_tensor.py: ``norm``, ``split``, ``lu``) or in C
# with their own parser words (``new_tensor``, ``nonzero_static``, ``istft``)
METHOD_FRONTENDS = ("istft", "lu", "new_tensor", "nonzero_static", "norm", "split")


@pytest.mark.parametrize("key", sorted(FRONTEND_ARGS))
@pytest.mark.parametrize("name", METHOD_FRONTENDS)
def test_python_level_methods_refuse_as_torch(name, key):
    both(
        lambda m: getattr(m.tensor([[1.0, 2.0], [3.0, 4.0]]), name)(*FRONTEND_ARGS[key]),
        check_warnings=False,
    )


@pytest.mark.parametrize(
    "call",
    [
        lambda m, x: x.norm(2, None, False, m.float64),  # dtype is the fifth parameter
        lambda m, x: x.norm(2, 1, True, m.float64, None),
        lambda m, x: x.norm(p=1, dtype=m.float64),
        lambda m, x: x.split(split_size=1),
        lambda m, x: x.split([1, 1], dim=1),
        lambda m, x: x.split(1, out=None),
        lambda m, x: x.lu(True, True)[2],
        lambda m, x: x.new_tensor(data=[1, 2]),
        lambda m, x: x.new_tensor([1, 2], m.float64),
        lambda m, x: x.nonzero_static(size=3, fill_value="a"),
        lambda m, x: x.nonzero_static(size=3, fill_value=-2),
    ],
)
def test_python_level_methods_as_torch(call):
    both(lambda m: call(m, m.tensor([[1.0, 0.0], [3.0, 4.0]])), check_warnings=False)


# nn.functional: Python functions and the parser's builtins alike refuse a wrong count of
# positional arguments before any argument's type
F_KNOWN = {
    ("triplet_margin_loss", "nine_nones"): "the parser's type checks run before its margin check",
}
F_CASES = [
    pytest.param(
        name,
        key,
        marks=[pytest.mark.xfail(strict=True, reason=F_KNOWN[name, key])]
        if (name, key) in F_KNOWN
        else [],
    )
    for name in sorted(dir(torch.nn.functional))
    if not name.startswith("_")
    and hasattr(lg.nn.functional, name)
    and callable(getattr(torch.nn.functional, name))
    and not isinstance(getattr(torch.nn.functional, name), type)
    for key in ARGSETS
]


@pytest.mark.parametrize(("name", "key"), F_CASES)
def test_functional_refuses_as_torch(name, key):
    both(
        lambda m: getattr(m.nn.functional, name)(*ARGSETS[key]),
        check_warnings=False,
    )


MATRIX_NORM_DIMS = [0, "a", 1.5, None, ("a", 0), (0, "a"), [0, 1.0], [0, True], (), [0, 1, 1]]


@pytest.mark.parametrize("dim", MATRIX_NORM_DIMS, ids=repr)
@pytest.mark.parametrize("ord", ["fro", "nuc", "cpu", 2])
def test_matrix_norm_dims_refused_by_the_parser(ord, dim):
    """``linalg.matrix_norm``'s parser refuses a ``dim`` that is not a list of ints before
    its kernel checks the order; ``Tensor.norm`` passes its ``dim`` on to ``vector_norm`` or
    ``matrix_norm`` by position, and their parsers word the refusal."""
    x = [[1.0, 2.0], [3.0, 4.0]]
    both(lambda m: m.linalg.matrix_norm(m.tensor(x), ord, dim))
    both(lambda m: m.tensor(x).norm(ord, dim), check_warnings=False)
