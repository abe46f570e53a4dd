"""``nn.utils`` parametrizations, weight and spectral norm (both APIs), batch-norm fusion,
``skip_init``, ``stateless`` and ``Tensor.set_`` against torch: parameter names, reprs, values,
gradients, grad_fn names, state dicts and errors."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch
from conftest import both, lg, same


def _linear(m, *shape):
    m.manual_seed(0)
    return m.nn.Linear(*shape)


def _names(module):
    return [n for n, _ in module.named_parameters()] + [n for n, _ in module.named_buffers()]


def _train_step(m, module, x):
    out = module(x)
    (out**2).sum().backward()
    return out, [p.grad for p in module.parameters()]


class _Symmetric:
    """A parametrization (built per library): X -> triu(X) + triu(X, 1)^T."""

    @staticmethod
    def make(m):
        class Symmetric(m.nn.Module):
            def forward(self, X):
                return X.triu() + X.triu(1).transpose(-1, -2)

            def right_inverse(self, A):
                return A.triu()

        return Symmetric()


def _scale(m, k):
    class Scale(m.nn.Module):
        def forward(self, X):
            return X * k

    return Scale()


CASES = {
    "weight_norm_parametrization": lambda m: (
        lambda lin: (
            repr(lin),
            _names(lin),
            lin.weight,
            lin.parametrizations.weight.original0,
            _train_step(m, lin, m.ones(2, 4)),
            list(lin.state_dict()),
            type(lin).__name__,
            m.nn.utils.parametrize.is_parametrized(lin),
            m.nn.utils.parametrize.is_parametrized(lin, "bias"),
            m.nn.utils.parametrize.type_before_parametrizations(lin).__name__,
        )
    )(m.nn.utils.parametrizations.weight_norm(_linear(m, 4, 3))),
    "weight_norm_dims": lambda m: [
        (lambda c: (c.weight, _names(c)))(
            m.nn.utils.parametrizations.weight_norm(
                (m.manual_seed(1), m.nn.Conv1d(2, 3, 2))[1], dim=d
            )
        )
        for d in (0, 1, 2, -1, None)
    ],
    "weight_norm_hook_api": lambda m: (
        lambda lin: (
            repr(lin),
            _names(lin),
            lin.weight,
            lin.weight_g,
            _train_step(m, lin, m.ones(2, 4)),
            list(lin.state_dict()),
            _names(m.nn.utils.remove_weight_norm(lin)),
            lin.weight,
        )
    )(m.nn.utils.weight_norm(_linear(m, 4, 3))),
    "weight_norm_hook_twice": lambda m: m.nn.utils.weight_norm(
        m.nn.utils.weight_norm(_linear(m, 4, 3))
    ),
    "remove_weight_norm_missing": lambda m: m.nn.utils.remove_weight_norm(_linear(m, 4, 3)),
    "weight_norm_old_state_dict_loads": lambda m: (
        lambda old, new: (new.load_state_dict(old.state_dict()), new.weight, _names(new))
    )(
        m.nn.utils.weight_norm(_linear(m, 4, 3)),
        m.nn.utils.parametrizations.weight_norm(_linear(m, 4, 3)),
    ),
    "weight_norm_ops": lambda m: (
        m._weight_norm(m.arange(1.0, 13.0).view(3, 4), m.ones(3, 1) * 2, 0),
        m._weight_norm(m.arange(1.0, 13.0).view(3, 4), m.ones(1, 4) * 2, 1),
        m._weight_norm(m.arange(1.0, 25.0).view(2, 3, 4), m.ones(1, 3, 1) * 2, 1),
        m._weight_norm(m.arange(1.0, 13.0).view(3, 4), m.ones(()) * 2, -1),
        m.norm_except_dim(m.arange(24.0).view(2, 3, 4), 2, 1),
        m.norm_except_dim(m.arange(24.0).view(2, 3, 4), 3, 2),
        m.norm_except_dim(m.arange(24.0).view(2, 3, 4), 2, -2),
    ),
    "weight_norm_op_graph": lambda m: (
        lambda v, g: (
            lambda w: (
                w,
                [type(n).__name__ for n, _ in w.grad_fn.next_functions],
                w.sum().backward(),
                v.grad,
                g.grad,
            )
        )(m._weight_norm(v, g, 0))
    )(m.arange(1.0, 13.0).view(3, 4).requires_grad_(), m.ones(3, 1).requires_grad_()),
    "weight_norm_op_second_backward": lambda m: (
        lambda w: (w.sum().backward(), w.sum().backward())
    )(m._weight_norm(m.ones(3, 4, requires_grad=True), m.ones(3, 1), 0)),
    "weight_norm_op_dtype_mismatch": lambda m: m._weight_norm(
        m.ones(3, 4), m.ones(3, 1, dtype=m.float64), 0
    ),
    "weight_norm_op_long": lambda m: m._weight_norm(
        m.ones(3, 4, dtype=m.long), m.ones(3, 1, dtype=m.long), 0
    ),
    "weight_norm_op_bad_dim": lambda m: m._weight_norm(m.ones(2, 3, 4), m.ones(1, 3, 1), 5),
    "weight_norm_op_double_backward": lambda m: (
        lambda v: (lambda gv: (gv, gv.sum().backward(), v.grad))(
            m.autograd.grad(
                m._weight_norm(v, m.ones(3, 1) * 2, 0).pow(2).sum(), v, create_graph=True
            )[0]
        )
    )(m.arange(1.0, 13.0, dtype=m.float64).view(3, 4).requires_grad_()),
    "spectral_norm_parametrization": lambda m: (
        lambda lin: (
            repr(lin),
            _names(lin),
            lin.parametrizations.weight[0]._u,
            lin.weight,
            _train_step(m, lin, m.ones(2, 4)),
            lin.parametrizations.weight[0]._v,
            list(lin.state_dict()),
            lin.eval().weight,
        )
    )(m.nn.utils.parametrizations.spectral_norm(_linear(m, 4, 3))),
    "spectral_norm_conv_transpose": lambda m: (
        lambda c: (c.weight, c.parametrizations.weight[0].dim)
    )(
        m.nn.utils.parametrizations.spectral_norm(
            (m.manual_seed(2), m.nn.ConvTranspose2d(2, 3, 2))[1]
        )
    ),
    "spectral_norm_bad_args": lambda m: m.nn.utils.parametrizations.spectral_norm(
        _linear(m, 4, 3), n_power_iterations=0
    ),
    "spectral_norm_bad_dim": lambda m: m.nn.utils.parametrizations.spectral_norm(
        _linear(m, 4, 3), dim=3
    ),
    "spectral_norm_hook_api": lambda m: (
        lambda lin: (
            _names(lin),
            lin.weight,
            _train_step(m, lin, m.ones(2, 4)),
            lin.weight_u,
            list(lin.state_dict()),
            lin.state_dict()._metadata[""]["spectral_norm"],
            _names(m.nn.utils.remove_spectral_norm(lin)),
            lin.weight,
            len(lin._state_dict_hooks),
        )
    )(m.nn.utils.spectral_norm(_linear(m, 4, 3))),
    "spectral_norm_hook_state_dict_round_trip": lambda m: (
        lambda a, b: (b.load_state_dict(a.state_dict()), b.weight_orig, b.weight_v)
    )(m.nn.utils.spectral_norm(_linear(m, 4, 3)), m.nn.utils.spectral_norm(_linear(m, 4, 3))),
    "orthogonal_square": lambda m: (
        lambda lin: (
            _names(lin),
            lin.weight,
            lin.weight @ lin.weight.T,
            _train_step(m, lin, m.ones(2, 3)),
        )
    )(m.nn.utils.parametrizations.orthogonal(_linear(m, 3, 3))),
    "orthogonal_householder": lambda m: (lambda lin: (lin.weight, lin.weight.T @ lin.weight))(
        m.nn.utils.parametrizations.orthogonal(_linear(m, 2, 4))
    ),
    "orthogonal_cayley_no_trivialization": lambda m: (lambda lin: (lin.weight, _names(lin)))(
        m.nn.utils.parametrizations.orthogonal(
            _linear(m, 3, 3), orthogonal_map="cayley", use_trivialization=False
        )
    ),
    "orthogonal_bad_map": lambda m: m.nn.utils.parametrizations.orthogonal(
        _linear(m, 3, 3), orthogonal_map="qr"
    ),
    "orthogonal_1d": lambda m: m.nn.utils.parametrizations.orthogonal(_linear(m, 3, 3), "bias"),
    "register_custom": lambda m: (
        lambda lin: (
            repr(lin),
            lin.weight,
            lin.parametrizations.weight.original,
            _train_step(m, lin, m.ones(2, 3)),
            (setattr(lin, "weight", m.arange(9.0).view(3, 3)), lin.weight)[1],
            lin.parametrizations.weight.original,
        )
    )(
        m.nn.utils.parametrize.register_parametrization(
            _linear(m, 3, 3), "weight", _Symmetric.make(m)
        )
    ),
    "register_two_and_remove": lambda m: (
        lambda lin: (
            repr(m.nn.utils.parametrize.register_parametrization(lin, "weight", _scale(m, 2.0))),
            lin.weight,
            repr(m.nn.utils.parametrize.remove_parametrizations(lin, "weight")),
            type(lin).__name__,
            _names(lin),
            lin.weight,
            hasattr(lin, "parametrizations"),
        )
    )(
        m.nn.utils.parametrize.register_parametrization(
            _linear(m, 3, 3), "weight", _Symmetric.make(m)
        )
    ),
    "remove_keeping_original": lambda m: (
        lambda lin: (
            repr(
                m.nn.utils.parametrize.remove_parametrizations(
                    lin, "weight", leave_parametrized=False
                )
            ),
            lin.weight,
        )
    )(m.nn.utils.parametrize.register_parametrization(_linear(m, 3, 3), "weight", _scale(m, 3.0))),
    "register_buffer_target": lambda m: (
        lambda bn: (
            repr(
                m.nn.utils.parametrize.register_parametrization(bn, "running_var", _scale(m, 2.0))
            ),
            bn.running_var,
            _names(bn),
        )
    )((m.manual_seed(0), m.nn.BatchNorm1d(3))[1]),
    "register_missing_name": lambda m: m.nn.utils.parametrize.register_parametrization(
        _linear(m, 3, 3), "nothing", _scale(m, 2.0)
    ),
    "register_shape_change": lambda m: (
        lambda P: m.nn.utils.parametrize.register_parametrization(_linear(m, 3, 3), "weight", P)
    )(type("Flat", (m.nn.Module,), {"forward": lambda self, X: X.flatten()})()),
    "register_shape_change_unsafe": lambda m: (
        lambda P: (
            m.nn.utils.parametrize.register_parametrization(
                _linear(m, 3, 3), "weight", P, unsafe=True
            ).weight
        )
    )(type("Flat", (m.nn.Module,), {"forward": lambda self, X: X.flatten()})()),
    "remove_not_parametrized": lambda m: m.nn.utils.parametrize.remove_parametrizations(
        _linear(m, 3, 3), "weight"
    ),
    "cached": lambda m: (
        lambda lin: (
            lambda ctx: (
                ctx.__enter__(),
                lin.weight is lin.weight,
                ctx.__exit__(None, None, None),
                lin.weight is lin.weight,
            )
        )(m.nn.utils.parametrize.cached())
    )(m.nn.utils.parametrize.register_parametrization(_linear(m, 3, 3), "weight", _scale(m, 2.0))),
    "pickle_refused": lambda m: m.nn.utils.parametrize.register_parametrization(
        _linear(m, 3, 3), "weight", _scale(m, 2.0)
    ).__getstate__(),
    "deepcopy": lambda m: (lambda c: (type(c).__name__, c.weight, _names(c)))(
        copy.deepcopy(
            m.nn.utils.parametrize.register_parametrization(
                _linear(m, 3, 3), "weight", _scale(m, 2.0)
            )
        )
    ),
    "fuse_conv_bn": lambda m: (
        lambda conv, bn: (
            lambda f: (f.weight, f.bias, f(m.ones(1, 2, 4, 4)), bn(conv(m.ones(1, 2, 4, 4))))
        )(m.nn.utils.fuse_conv_bn_eval(conv.eval(), bn.eval()))
    )(
        (m.manual_seed(0), m.nn.Conv2d(2, 3, 3))[1],
        (lambda b: (b.running_mean.add_(0.5), b.running_var.mul_(2.0), b)[2])(m.nn.BatchNorm2d(3)),
    ),
    "fuse_linear_bn": lambda m: (
        lambda lin, bn: (lambda f: (f.weight, f.bias))(
            m.nn.utils.fuse_linear_bn_eval(lin.eval(), bn.eval())
        )
    )(_linear(m, 4, 3), (lambda b: (b.running_mean.add_(0.5), b)[1])(m.nn.BatchNorm1d(3))),
    "fuse_training_refused": lambda m: m.nn.utils.fuse_linear_bn_eval(
        _linear(m, 4, 3), m.nn.BatchNorm1d(3)
    ),
    "skip_init": lambda m: (lambda mod: (mod.weight.shape, mod.weight.dtype, m.rand(2)))(
        (m.manual_seed(0), m.nn.utils.skip_init(m.nn.Linear, 4, 3, dtype=m.float64))[1]
    ),
    "skip_init_not_module": lambda m: m.nn.utils.skip_init(int, 3),
    "normalize_out": lambda m: (
        lambda o, e: (
            m.nn.functional.normalize(m.arange(6.0).view(2, 3), dim=1, out=o),
            o,
            m.nn.functional.normalize(m.arange(3.0), dim=0, out=e),
            e,
        )
    )(m.ones(2, 3), m.ones(2)),
    "normalize_out_requires_grad": lambda m: m.nn.functional.normalize(
        m.ones(3, requires_grad=True), dim=0, out=m.empty(3)
    ),
    "normalize_out_int": lambda m: m.nn.functional.normalize(
        m.ones(3), dim=0, out=m.empty(3, dtype=m.long)
    ),
    "stateless": lambda m: (
        lambda lin: m.nn.utils.stateless.functional_call(
            lin, {"weight": m.ones(3, 4)}, (m.ones(2, 4),)
        )
    )(_linear(m, 4, 3)),
}


@pytest.mark.every_case
@pytest.mark.parametrize("name", list(CASES))
def test_nn_utils(name):
    both(CASES[name], rtol=1e-5, atol=1e-6)


def _set_cases():
    def under_no_grad(m):
        with m.no_grad():
            p = m.nn.Parameter(m.ones(2))
            s = m.zeros(3)
            p.set_(s)
            s.add_(1)
        return p, p._version, s._version, p.is_leaf, p.requires_grad, p.shape

    def no_grad_source_requires_grad(m):
        y = m.ones(2, requires_grad=True)
        with m.no_grad():
            z = m.ones(3)
            z.set_(y)
        z.mul_(2)
        return y, z

    def inference(m):
        with m.inference_mode():
            i = m.ones(2)
        x = m.ones(2)
        x.set_(i)
        return x, x.is_inference()

    def inference_self(m):
        with m.inference_mode():
            i = m.ones(2)
        i.set_(m.ones(2))

    def strided(m):
        c = m.ones(2)
        c.set_(m.arange(6.0).view(2, 3).t())
        return c, c.stride(), c._version, c.is_contiguous()

    def emptied(m):
        e = m.ones(2)
        e.set_()
        return e, e._version

    return {
        "under_no_grad": under_no_grad,
        "no_grad_source_requires_grad": no_grad_source_requires_grad,
        "inference": inference,
        "inference_self": inference_self,
        "strided": strided,
        "emptied": emptied,
        "dtype": lambda m: m.ones(2).set_(m.zeros(3, dtype=m.float64)),
        "int_dtype": lambda m: m.ones(2).set_(m.zeros(2, dtype=m.int64)),
        "not_a_tensor": lambda m: m.ones(2).set_(5),
        "keyword": lambda m: m.ones(2).set_(source=m.zeros(1)),
        "leaf_requiring_grad": lambda m: m.ones(2, requires_grad=True).set_(m.zeros(3)),
    }


SET_CASES = _set_cases()


@pytest.mark.every_case
@pytest.mark.parametrize("name", list(SET_CASES))
def test_set_(name):
    both(SET_CASES[name])


def test_set_in_grad_mode_on_tensors_that_require_grad_refuses():
    """PyTorch records a NotImplemented node there; leafgrad raises rather than record it."""
    x = lg.ones(2, requires_grad=True) * 2
    with pytest.raises(NotImplementedError, match="set_"):
        x.set_(lg.zeros(3))
    assert x.shape == (2,) and x._version == 0


def test_spectral_norm_power_iteration_matches_over_training_steps():
    """Several training-mode forwards run one power iteration each, as PyTorch's."""

    def run(m):
        lin = m.nn.utils.parametrizations.spectral_norm(_linear(m, 5, 4), n_power_iterations=2)
        opt = m.optim.SGD(lin.parameters(), lr=0.1)
        outs = []
        for _ in range(3):
            opt.zero_grad()
            loss = lin(m.ones(2, 5)).pow(2).sum()
            loss.backward()
            opt.step()
            outs.append(loss.detach())
        return outs, lin.parametrizations.weight.original, lin.parametrizations.weight[0]._u

    both(run, rtol=1e-5, atol=1e-6)


def test_weight_norm_parametrization_trains_like_torch():
    def run(m):
        m.manual_seed(0)
        net = m.nn.Sequential(
            m.nn.utils.parametrizations.weight_norm(m.nn.Linear(4, 8)),
            m.nn.Tanh(),
            m.nn.utils.parametrizations.weight_norm(m.nn.Linear(8, 2), dim=None),
        )
        opt = m.optim.Adam(net.parameters(), lr=0.01)
        x = m.tensor(np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4))
        for _ in range(3):
            opt.zero_grad()
            net(x).pow(2).mean().backward()
            opt.step()
        return net(x), dict(net.state_dict())

    same(*[run(m) for m in (torch, lg)], rtol=1e-5, atol=1e-6)
