"""The meta device (Note [Meta tensors] in _device.py): tensors with a shape and a dtype and no
values. Ops on them give PyTorch's shapes, dtypes, reprs and nodes, modules move there and back
(``to('meta')``, ``to_empty``), nothing is drawn from the generator, and reading values raises
PyTorch's errors. Each case runs in torch and leafgrad and compares reprs (which for a meta
tensor are its size, dtype and grad_fn)."""

import copy

import numpy as np
import pytest
from conftest import both

import leafgrad


def _m(m, *shape, **kw):
    return m.empty(*shape, device="meta", **kw)


CASES = {
    "empty": lambda m: _m(m, 2, 3),
    "scalar": lambda m: _m(m),
    "zero_size": lambda m: _m(m, 0),
    "int64": lambda m: m.zeros(2, dtype=m.int64, device="meta"),
    "bool": lambda m: _m(m, 2, dtype=m.bool),
    "complex": lambda m: _m(m, 2, dtype=m.complex64),
    "double": lambda m: _m(m, 2).double(),
    "randn_requires_grad": lambda m: m.randn(2, device="meta", requires_grad=True),
    "mul_records": lambda m: m.randn(2, device="meta", requires_grad=True) * 2,
    "to_meta": lambda m: m.ones(2, 3).to("meta"),
    "to_meta_keeps_grad": lambda m: m.ones(2, 3, requires_grad=True).to("meta"),
    "to_dtype": lambda m: _m(m, 2, 3).to(m.float64),
    "parameter": lambda m: m.nn.Parameter(_m(m, 2)),
    "sum": lambda m: _m(m, 2, 3).sum(),
    "matmul": lambda m: _m(m, 2, 3) @ _m(m, 3, 4),
    "index": lambda m: _m(m, 2, 3)[0],
    "view": lambda m: _m(m, 2, 3).view(6),
    "transpose_contiguous": lambda m: _m(m, 2, 3).T.contiguous(),
    "cat": lambda m: m.cat([_m(m, 2, 3), _m(m, 2, 3)]),
    "softmax": lambda m: _m(m, 2, 3).softmax(0),
    "relu": lambda m: _m(m, 2, 3).relu(),
    "add_cpu_scalar_tensor": lambda m: _m(m, 2, 3) + m.tensor(1.0),
    "add_cpu_tensor": lambda m: _m(m, 2, 3) + m.ones(2, 3),
    "add_": lambda m: (lambda t: (t.add_(1), t._version))(_m(m, 2, 3)),
    "conv2d": lambda m: m.nn.functional.conv2d(_m(m, 1, 3, 8, 8), _m(m, 4, 3, 3, 3)),
    "empty_like": lambda m: m.empty_like(_m(m, 2, 3)),
    "zeros_like_on_cpu": lambda m: m.zeros_like(_m(m, 2, 3), device="cpu"),
    "stride": lambda m: _m(m, 2, 3).T.contiguous().stride(),
    "device": lambda m: (_m(m, 2).device, _m(m, 2).is_meta, m.ones(1).is_meta),
    "cpu": lambda m: _m(m, 2).cpu(),
    "numpy": lambda m: _m(m, 2).numpy(),
    "item_many": lambda m: _m(m, 2).item(),
    "item_one": lambda m: _m(m, 1).item(),
    "tolist": lambda m: _m(m, 2).tolist(),
    "linear_module": lambda m: m.nn.Linear(3, 4).to("meta").weight,
    "linear_made_on_meta": lambda m: m.nn.Linear(3, 4, device="meta").bias,
    "to_empty": lambda m: m.nn.Linear(3, 4, device="meta").to_empty(device="cpu").weight.shape,
    "writes_through_views": lambda m: _writes(m),
    "dropout": lambda m: m.nn.functional.dropout(m.randn(2, 3, device="meta", requires_grad=True)),
    "dropout2d": lambda m: m.nn.functional.dropout2d(_m(m, 2, 3, 4, 4)),
    "alpha_dropout": lambda m: m.nn.functional.alpha_dropout(_m(m, 2, 3), 0.5, True),
    "uniform_": lambda m: _m(m, 2, 3).uniform_(),
    "mixed_with_cpu_first": lambda m: m.ones(2, 3) + _m(m, 2, 3),
}


def _writes(m):
    a = _m(m, 2, 3)
    v = a[0]
    a[0] = 1.0
    v.add_(1)
    a[:, 1] = _m(m, 2)
    return a._version, v._version, repr(v), repr(a.T)


@pytest.mark.parametrize("name", sorted(CASES))
def test_meta_tensors_match_torch(name):
    def fn(m):
        m.manual_seed(0)
        out = CASES[name](m)
        return repr(out), m.rand(2)  # and nothing was drawn where PyTorch draws nothing

    both(fn)


def test_module_forward_on_meta():
    def fn(m):
        m.manual_seed(0)
        net = m.nn.Sequential(
            m.nn.Conv2d(3, 8, 3),
            m.nn.BatchNorm2d(8),
            m.nn.ReLU(),
            m.nn.Flatten(),
            m.nn.Linear(288, 10),
        ).to("meta")
        out = net(m.empty(2, 3, 8, 8, device="meta"))
        with m.no_grad():
            plain = net(m.empty(2, 3, 8, 8, device="meta"))
        return repr(out), repr(plain), repr(net[1].running_mean), m.rand(2)

    both(fn)


def test_model_ensembling_with_a_meta_skeleton():
    """torch.func's ensembling recipe: a meta copy of one model runs the stacked parameters."""

    def fn(m):
        m.manual_seed(0)
        models = [m.nn.Linear(4, 3) for _ in range(5)]
        params, buffers = m.func.stack_module_state(models)
        params = {k: v.detach() for k, v in params.items()}
        base = copy.deepcopy(models[0]).to("meta")

        def fmodel(p, b, x):
            return m.func.functional_call(base, (p, b), (x,))

        x = m.randn(5, 2, 4)
        return m.func.vmap(fmodel)(params, buffers, x), repr(base.weight)

    both(fn, atol=1e-6, rtol=1e-6)


def test_backward_through_meta_tensors_raises():
    x = leafgrad.randn(2, device="meta", requires_grad=True)
    with pytest.raises(NotImplementedError, match="meta"):
        (x * 2).sum().backward()
    assert x.grad is None


def test_meta_tensors_allocate_nothing():
    t = leafgrad.empty(1 << 20, 1 << 20, device="meta")  # 4 TiB if it were allocated
    assert tuple(t.shape) == (1 << 20, 1 << 20)
    assert tuple((t @ t).shape) == (1 << 20, 1 << 20)
    assert np.prod((t.sum(0)).shape) == 1 << 20


@pytest.mark.parametrize(
    "read",
    [
        lambda t: t.nonzero(),
        lambda t: t.unique(),
        lambda t: t[t > 0],
        lambda t: leafgrad.equal(t, t),
        lambda t: leafgrad.allclose(t, t),
        lambda t: t.abs().multinomial(2),
        lambda t: bool(t.sum()),
    ],
)
def test_ops_that_read_values_raise_on_meta(read):
    """PyTorch has no meta kernel for these (NotImplementedError) or reads an item; leafgrad
    reads values on the host, which a meta tensor refuses: it raises, never a made-up result."""
    with pytest.raises((NotImplementedError, RuntimeError)):
        read(leafgrad.empty(2, 3, device="meta"))
