"""``Tensor.grad_dtype`` (PyTorch 2.9+): the dtype the engine casts a leaf's incoming gradients
to (its dtype unless set; None allows any), read and set on leaves only, checked against an
assigned ``.grad`` and an existing one; a live AccumulateGrad follows a new value, one that
``.data =`` of another dtype left behind does not."""

from __future__ import annotations

import pytest
from conftest import both


def _set(x, dtype):
    x.grad_dtype = dtype
    return x


PROGRAMS = {
    "default": lambda M, x: ((x * 2).sum().backward(), x.grad)[1],
    "float64": lambda M, x: (_set(x, M.float64), (x * 2).sum().backward(), x.grad)[2],
    "float16": lambda M, x: (_set(x, M.float16), (x * 2).sum().backward(), x.grad)[2],
    "int64": lambda M, x: (_set(x, M.int64), (x * 2).sum().backward(), x.grad)[2],
    "twice": lambda M, x: (
        _set(x, M.float64),
        (x * 2).sum().backward(),
        (x * 3).sum().backward(),
        x.grad,
    )[3],
    "autograd_grad": lambda M, x: (_set(x, M.float64), M.autograd.grad((x * 2).sum(), x))[1],
    "autograd_grad_edge": lambda M, x: M.autograd.grad(
        (x * 2).sum(), M.autograd.graph.get_gradient_edge(x)
    ),
    "autograd_grad_edge_float64": lambda M, x: (
        _set(x, M.float64),
        M.autograd.grad((x * 2).sum(), M.autograd.graph.get_gradient_edge(x)),
    )[1],
    "autograd_grad_none": lambda M, x: (_set(x, None), M.autograd.grad((x * 2).sum(), x))[1],
    "create_graph": lambda M, x: (
        _set(x, M.float64),
        (x * 2).sum().backward(create_graph=True),
        x.grad,
        x.grad.grad_fn,
    )[2:],
    "set_after_recording": lambda M, x: (lambda y: (_set(x, M.float64), y.backward(), x.grad)[2])(
        (x * 2).sum()
    ),
    "set_twice": lambda M, x: (lambda y: (_set(x, M.float16), y.backward(), x.grad)[2])(
        (_set(x, M.float64) * 2).sum()
    ),
    "hook_sees_cast": lambda M, x: (
        _set(x, M.float64),
        x.register_hook(lambda g: g * 10),
        (x * 2).sum().backward(),
        x.grad,
    )[3],
    "assign_mismatch": lambda M, x: (_set(x, M.float64), setattr(x, "grad", M.ones(2)), x.grad),
    "assign_match": lambda M, x: (
        _set(x, M.float64),
        setattr(x, "grad", M.ones(2, dtype=M.float64)),
        (x * 3).sum().backward(),
        x.grad,
    )[3],
    "assign_any": lambda M, x: (
        _set(x, None),
        setattr(x, "grad", M.ones(2, dtype=M.float64)),
        (x * 3).sum().backward(),
        x.grad,
    )[3],
    "assign_int_then_sum": lambda M, x: (
        _set(x, None),
        setattr(x, "grad", M.ones(2, dtype=M.int64)),
        (x * 3).sum().backward(),
        x.grad,
    )[3],
    "existing_grad": lambda M, x: (
        (x * 2).sum().backward(),
        _set(x, M.float64),
    ),
    "bad_type": lambda M, x: _set(x, 5),
    "bad_type_str": lambda M, x: _set(x, "float64"),
    "non_leaf_get": lambda M, x: (x * 2).grad_dtype,
    "non_leaf_set": lambda M, x: _set(x * 2, M.float64),
    "non_leaf_bad_type": lambda M, x: _set(x * 2, 5),
    "detach": lambda M, x: (_set(x, M.float64).detach().grad_dtype, x.float().grad_dtype),
    "data_changed": lambda M, x: (
        lambda y: (
            setattr(x, "data", M.zeros(2, dtype=M.float64)),
            x.grad_dtype,
            y.backward(),
            x.grad,
        )[1:]
    )((x * 2).sum()),
    "data_changed_then_set": lambda M, x: (
        lambda y: (
            setattr(x, "data", M.zeros(2, dtype=M.float64)),
            _set(x, M.float64),
            y.backward(),
            x.grad,
        )[3]
    )((x * 2).sum()),
    "not_requiring_grad": lambda M, x: (
        lambda z: (_set(z, M.float64), z.requires_grad_(), (z * 2).sum().backward(), z.grad)[3]
    )(M.ones(2)),
    "float64_leaf_to_float32": lambda M, x: (
        lambda z: (_set(z, M.float32), (z * 2).sum().backward(), z.grad)[2]
    )(M.ones(2, dtype=M.float64, requires_grad=True)),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_grad_dtype(name):
    def fn(M):
        x = M.ones(2, requires_grad=True)
        return PROGRAMS[name](M, x)

    both(fn, check_warnings=name not in ("create_graph",))


def test_grad_dtype_fused_backward():
    def fn(M):
        x = M.ones(3, requires_grad=True)
        x.grad_dtype = M.float64
        out = []
        for _ in range(4):
            x.grad = None
            (x * 0.5).exp().tanh().sum().backward()
            out.append(x.grad)
        return out

    both(fn)
