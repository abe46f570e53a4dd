"""Keyword arguments of factories and of the engine as PyTorch's parsers take them.

Factories: ``requires_grad`` and ``pin_memory`` are Python bools (None passes where the schema
has a default, but not for ``torch.tensor``); ``device`` is a device, a str or an index, not a
bool, float, tuple or tensor. The engine (``backward``, ``autograd.grad``) reads
``retain_graph``, ``create_graph`` and ``allow_unused`` as C ``unsigned char`` arguments after
the gradients' checks: a str or a float is a TypeError, -1 an OverflowError; 2 is true.
"""

import numpy as np
import pytest
from conftest import both

FACTORIES = {
    "ones": lambda m, **kw: m.ones(2, **kw),
    "zeros": lambda m, **kw: m.zeros((2, 3), **kw),
    "empty": lambda m, **kw: m.empty(2, **kw).shape,
    "full": lambda m, **kw: m.full((2,), 1.5, **kw),
    "tensor": lambda m, **kw: m.tensor([1.0, 2.0], **kw),
    "arange": lambda m, **kw: m.arange(3.0, **kw),
    "linspace": lambda m, **kw: m.linspace(0, 1, 3, **kw),
    "eye": lambda m, **kw: m.eye(2, **kw),
    "rand": lambda m, **kw: m.rand(2, **kw).shape,
    "randn": lambda m, **kw: m.randn(2, **kw).shape,
    "zeros_like": lambda m, **kw: m.zeros_like(m.ones(2), **kw),
    "ones_like": lambda m, **kw: m.ones_like(m.ones(2), **kw),
    "new_ones": lambda m, **kw: m.ones(2).new_ones(3, **kw),
    "new_zeros": lambda m, **kw: m.ones(2).new_zeros((3,), **kw),
    "new_full": lambda m, **kw: m.ones(2).new_full((3,), 2.0, **kw),
}

VALUES = {
    "True": lambda m: True,
    "False": lambda m: False,
    "None": lambda m: None,
    "0": lambda m: 0,
    "1": lambda m: 1,
    "1.5": lambda m: 1.5,
    "str": lambda m: "cpu",
    "tuple": lambda m: ("cpu",),
    "numpy bool": lambda m: np.bool_(True),
    "tensor": lambda m: m.tensor(True),
}


@pytest.mark.parametrize("value", list(VALUES))
@pytest.mark.parametrize("arg", ["requires_grad", "pin_memory", "device"])
@pytest.mark.parametrize("factory", list(FACTORIES))
def test_factory_keyword(factory, arg, value):
    if arg == "device" and value in ("0", "1"):
        pytest.skip("a device index: the tests' virtual CUDA device (torch has none)")
    if arg == "pin_memory" and value in ("True",):
        pytest.skip("pinned memory: leafgrad has none, PyTorch's CPU build refuses it otherwise")

    def run(m):
        out = FACTORIES[factory](m, **{arg: VALUES[value](m)})
        return (out, out.requires_grad) if hasattr(out, "requires_grad") else out

    both(run, check_warnings=False)


@pytest.mark.parametrize("value", [-1, -3])
def test_negative_device_index(value):
    both(lambda m: m.device(value))
    both(lambda m: m.ones(2, device=value))


FLAGS = {
    "str": "yes",
    "float": 1.5,
    "None": None,
    "-1": -1,
    "256": 256,
    "2": 2,
    "0": 0,
    "numpy int": np.int64(1),
    "tuple": (1,),
}


def _backward(m, **kw):
    x = m.ones(2, requires_grad=True)
    (x * x).sum().backward(**kw)
    return x.grad


def _grad(m, **kw):
    x = m.ones(2, requires_grad=True)
    return m.autograd.grad((x * x).sum(), x, **kw)


def _grad_unused(m, **kw):
    x = m.ones(2, requires_grad=True)
    y = m.ones(2, requires_grad=True)
    return m.autograd.grad((x * x).sum(), (x, y), **kw)


def _grad_not_requiring(m, **kw):
    x = m.ones(2, requires_grad=True)
    return m.autograd.grad((x * x).sum(), m.ones(2), **kw)


def _backward_bad_gradient(m, **kw):
    x = m.ones(2, requires_grad=True)
    (x * x).backward(m.ones(3), **kw)


CALLS = {
    "backward": _backward,
    "grad": _grad,
    "grad unused": _grad_unused,
    "grad of a tensor not requiring grad": _grad_not_requiring,
    "backward with a wrong gradient": _backward_bad_gradient,
}


@pytest.mark.parametrize("value", list(FLAGS))
@pytest.mark.parametrize("flag", ["retain_graph", "create_graph", "allow_unused"])
@pytest.mark.parametrize("call", list(CALLS))
def test_engine_flags(call, flag, value):
    if flag == "allow_unused" and call.startswith("backward"):
        pytest.skip("backward takes no allow_unused")
    both(lambda m: CALLS[call](m, **{flag: FLAGS[value]}), check_warnings=False)


@pytest.mark.parametrize(
    "value", ["cpu", "cpu:1", "meta", "cpux", -1, True, 1.5, ("cpu",), None, "device", "default"]
)
def test_generator_device(value):
    """``Generator(device)`` parses a ``torch.device``; its ``device`` is one (no index on CPU)."""

    def run(m):
        if value == "default":
            g = m.Generator()
        else:
            g = m.Generator(m.device("cpu") if value == "device" else value)
        return repr(g.device)

    both(run)


@pytest.mark.parametrize("value", ["list", "None", "ndarray", "float"])
def test_data_setter_takes_a_tensor_only(value):
    def run(m):
        x = m.ones(2)
        x.data = {"list": [1, 2], "None": None, "ndarray": np.ones(2), "float": 3.0}[value]

    both(run)
