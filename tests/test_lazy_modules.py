"""Lazy modules against torch: placeholders (``UninitializedParameter``/``Buffer``) and their
errors, the first forward giving the shapes, drawing the values from the generator and turning
the module into its eager class, ``load_state_dict`` into a lazy module, conversions before the
first forward, optimizers built before it, hooks and copies."""

from __future__ import annotations

import copy

import numpy as np
import pytest
from conftest import both, lg

LAYERS = {
    "LazyLinear": (lambda m: m.nn.LazyLinear(3), (2, 5)),
    "LazyLinear_no_bias": (lambda m: m.nn.LazyLinear(3, bias=False), (4, 2, 5)),
    "LazyConv1d": (lambda m: m.nn.LazyConv1d(4, 3, padding=1), (2, 3, 7)),
    "LazyConv2d": (lambda m: m.nn.LazyConv2d(4, 2, stride=2, groups=2), (1, 4, 6, 6)),
    "LazyConv2d_unbatched": (lambda m: m.nn.LazyConv2d(2, 3, bias=False), (3, 5, 5)),
    "LazyConv3d": (lambda m: m.nn.LazyConv3d(2, 2, dilation=2), (1, 2, 5, 5, 5)),
    "LazyConvTranspose1d": (lambda m: m.nn.LazyConvTranspose1d(3, 3, stride=2), (2, 4, 5)),
    "LazyConvTranspose2d": (lambda m: m.nn.LazyConvTranspose2d(4, 2, groups=2), (1, 2, 4, 4)),
    "LazyConvTranspose3d": (lambda m: m.nn.LazyConvTranspose3d(2, 2), (1, 3, 3, 3, 3)),
    "LazyBatchNorm1d": (lambda m: m.nn.LazyBatchNorm1d(), (4, 3)),
    "LazyBatchNorm2d": (lambda m: m.nn.LazyBatchNorm2d(affine=False), (4, 3, 2, 2)),
    "LazyBatchNorm3d": (
        lambda m: m.nn.LazyBatchNorm3d(track_running_stats=False, momentum=None),
        (2, 3, 2, 2, 2),
    ),
    "LazyInstanceNorm1d": (lambda m: m.nn.LazyInstanceNorm1d(), (2, 4, 6)),
    "LazyInstanceNorm2d": (lambda m: m.nn.LazyInstanceNorm2d(affine=False), (2, 3, 4, 4)),
    "LazyInstanceNorm3d": (lambda m: m.nn.LazyInstanceNorm3d(eps=1e-3), (2, 2, 3, 3, 3)),
}


@pytest.mark.every_case
@pytest.mark.parametrize("name", list(LAYERS))
def test_first_forward_initializes_and_converts(name):
    build, shape = LAYERS[name]
    data = np.random.default_rng(0).standard_normal(shape)

    def fn(m):
        m.manual_seed(0)
        layer = build(m)
        before = (
            repr(layer),
            type(layer).__name__,
            [(k, repr(v)) for k, v in layer.named_parameters()],
            [(k, repr(v)) for k, v in layer.named_buffers()],
            [(k, repr(v)) for k, v in layer.state_dict().items()],
            layer.has_uninitialized_params(),
        )
        x = m.tensor(data, dtype=m.float32, requires_grad=True)
        y = layer(x)
        (y * m.linspace(-1, 2, y.numel()).reshape(y.shape)).sum().backward()
        after = (repr(layer), type(layer).__name__, hasattr(layer, "_initialize_hook"))
        grads = [p.grad for p in layer.parameters()]
        return before, after, y, x.grad, dict(layer.state_dict()), grads, m.rand(2)

    both(fn)


def test_placeholders_refuse_use_but_give_dtype_device_and_size():
    def fn(m):
        layer = m.nn.LazyLinear(3, dtype=m.float64)
        w = layer.weight
        return (
            repr(w),
            str(w),
            w.dtype,
            w.device,
            w.size(),
            w.requires_grad,
            w.is_leaf,
            w.grad,
            w.is_floating_point(),
            isinstance(w, m.nn.Parameter),
            isinstance(w, m.Tensor),
            type(w).__name__,
            repr(m.nn.UninitializedBuffer()),
            m.nn.UninitializedBuffer().requires_grad,
        )

    both(fn)


ERRORS = {
    "add": lambda m: m.nn.LazyLinear(3).weight + 1,
    "numel": lambda m: m.nn.LazyLinear(3).weight.numel(),
    "dim": lambda m: m.nn.LazyLinear(3).weight.dim(),
    "tolist": lambda m: m.nn.LazyLinear(3).weight.tolist(),
    "buffer_add": lambda m: m.nn.LazyBatchNorm1d().running_mean.add(1),
    "shape": lambda m: m.nn.LazyLinear(3).weight.shape,
    "share_memory": lambda m: m.nn.LazyLinear(3).weight.share_memory_(),
    "conv_dims": lambda m: m.nn.LazyConv2d(2, 3)(m.ones(5, 5)),
    "conv_groups": lambda m: m.nn.LazyConv2d(4, 1, groups=2)(m.ones(1, 3, 5, 5)),
    "instance_unbatched": lambda m: m.nn.LazyInstanceNorm1d()(m.ones(4, 6)),
    "second_input_other_size": lambda m: [
        layer(m.ones(2, k)) for layer in [m.nn.LazyLinear(3)] for k in (4, 5)
    ],
    "missing_keys": lambda m: m.nn.LazyLinear(3).load_state_dict({}),
}


@pytest.mark.every_case
@pytest.mark.parametrize("name", list(ERRORS))
def test_errors(name):
    both(ERRORS[name])


def test_uninitialized_use_names_the_function():
    """PyTorch names the function it was given to (an address for ``torch.add``, which leafgrad
    cannot give)."""
    with pytest.raises(ValueError, match=r"uninitialized parameter in <built-in method add"):
        lg.add(lg.nn.LazyLinear(3).weight, 1)


def test_load_state_dict_materializes_and_the_module_stays_lazy():
    def fn(m):
        m.manual_seed(1)
        source = m.nn.Linear(5, 3)
        layer = m.nn.LazyLinear(3)
        result = layer.load_state_dict(source.state_dict())
        x = m.ones(2, 5)
        return (
            str(result),
            repr(layer),
            type(layer).__name__,
            layer.weight,
            layer.bias,
            layer.has_uninitialized_params(),
            layer(x),
            type(layer).__name__,
        )

    both(fn)


def test_conversions_before_the_first_forward():
    def fn(m):
        m.manual_seed(2)
        layer = m.nn.LazyLinear(3).double()
        mid = (layer.weight.dtype, repr(layer.weight))
        norm = m.nn.LazyBatchNorm1d().to(m.float64)
        buffers = (norm.running_mean.dtype, repr(norm.running_mean))
        x = m.randn(2, 4, dtype=m.float64)
        return mid, buffers, layer(x), norm(x), layer.weight.dtype, norm.running_var.dtype

    both(fn)


def test_optimizer_built_before_the_first_forward_trains_the_materialized_parameters():
    def fn(m):
        m.manual_seed(3)
        model = m.nn.Sequential(m.nn.LazyLinear(4), m.nn.ReLU(), m.nn.LazyLinear(2))
        opt = m.optim.Adam(model.parameters(), lr=0.1)
        x = m.randn(8, 5)
        losses = []
        for _ in range(3):
            opt.zero_grad()
            loss = model(x).pow(2).mean()
            loss.backward()
            opt.step()
            losses.append(loss)
        return repr(model), losses, [p.detach() for p in model.parameters()]

    both(fn)


def test_hooks_and_copies():
    def fn(m):
        m.manual_seed(4)
        layer = m.nn.LazyLinear(2)
        seen = []
        layer.register_forward_pre_hook(lambda mod, args: seen.append(type(mod).__name__))
        twin = copy.deepcopy(layer)
        a = layer(m.ones(1, 3))
        b = twin(m.ones(1, 6))
        layer(m.ones(1, 3))
        return seen, a, b, repr(layer), repr(twin), twin.weight.shape

    both(fn)


def test_materialize_a_placeholder_directly():
    def fn(m):
        p = m.nn.UninitializedParameter(dtype=m.float64)
        p.materialize((2, 3))
        b = m.nn.UninitializedBuffer()
        b.materialize(4, dtype=m.float16)
        return type(p).__name__, p.shape, p.dtype, p.requires_grad, type(b).__name__, b.shape

    both(fn, compare=True)


@pytest.mark.parametrize("cls", ["LazyBatchNorm1d", "LazyInstanceNorm2d", "LazyBatchNorm3d"])
def test_lazy_norms_without_bias(cls):
    """PyTorch 2.13's lazy norms take ``bias=False`` (keyword only): no bias placeholder, none
    after the first forward."""

    def run(m):
        mod = getattr(m.nn, cls)(bias=False)
        before = repr(mod), mod.bias
        shape = {"1": (2, 3, 4), "2": (2, 3, 4, 5), "3": (2, 3, 2, 2, 2)}[cls[-2]]
        y = mod(m.arange(float(np.prod(shape))).reshape(shape))
        names = [n for n, _ in mod.named_parameters()]
        return before, repr(mod), mod.bias, names, y

    both(run)
