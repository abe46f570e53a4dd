"""In-place writes inside torch.func transforms (Note [Captured tensors] in func.py): grad, vjp,
jvp and the transforms built on them refuse an in-place op on a tensor the function captured
(with the op's ATen overload in the message), ``requires_grad_()`` and ``backward()`` inside any
transform; ``vmap`` writes. Each case runs in torch and leafgrad and compares what happens: the
error, or the result and the captured tensor's values afterwards."""

import warnings

import numpy as np
import pytest
import torch
from conftest import both

import leafgrad


def _index(m):
    return m.zeros(1, 4, dtype=m.long)


# the write each case makes to ``c`` (a captured 3x4 float tensor); ``x`` is the transform's input
WRITES = {
    "add_number": lambda m, c, x: c.add_(1.0),
    "add_tensor_alpha": lambda m, c, x: c.add_(m.ones(4), alpha=2),
    "sub_number": lambda m, c, x: c.sub_(1),
    "mul_tensor": lambda m, c, x: c.mul_(m.ones(4)),
    "div_number": lambda m, c, x: c.div_(2),
    "div_mode": lambda m, c, x: c.div_(2, rounding_mode="floor"),
    "pow_number": lambda m, c, x: c.pow_(2),
    "pow_tensor": lambda m, c, x: c.pow_(m.ones(4)),
    "clamp_numbers": lambda m, c, x: c.clamp_(0, 1),
    "clamp_tensors": lambda m, c, x: c.clamp_(m.zeros(4), m.ones(4)),
    "clamp_min_only": lambda m, c, x: c.clamp_(min=0),
    "clamp_max_tensor": lambda m, c, x: c.clamp_max_(c),
    "fill_number": lambda m, c, x: c.fill_(1),
    "fill_tensor": lambda m, c, x: c.fill_(m.tensor(1.0)),
    "fill_traced": lambda m, c, x: c.fill_(x),
    "zero_": lambda m, c, x: c.zero_(),
    "copy_": lambda m, c, x: c.copy_(m.ones(3, 4)),
    "copy_traced": lambda m, c, x: c.copy_(x.expand(3, 4)),
    "setitem_int_number": lambda m, c, x: c.__setitem__(0, 1.0),
    "setitem_int_row": lambda m, c, x: c.__setitem__(0, m.ones(4)),
    "setitem_element": lambda m, c, x: c.__setitem__((0, 1), 2),
    "setitem_ellipsis_row": lambda m, c, x: c.__setitem__(Ellipsis, m.ones(4)),
    "setitem_bool": lambda m, c, x: c.__setitem__(True, 1.0),
    "setitem_none": lambda m, c, x: c.__setitem__(None, 1.0),
    "setitem_list": lambda m, c, x: c.__setitem__([0, 1], 1.0),
    "setitem_mask": lambda m, c, x: c.__setitem__(c > 0, 1.0),
    "setitem_traced": lambda m, c, x: c.__setitem__(0, x),
    "masked_fill_number": lambda m, c, x: c.masked_fill_(c > 0, 1.0),
    "masked_fill_tensor": lambda m, c, x: c.masked_fill_(c > 0, m.tensor(1.0)),
    "index_fill_": lambda m, c, x: c.index_fill_(0, m.tensor([0]), 1.0),
    "index_fill_tensor": lambda m, c, x: c.index_fill_(0, m.tensor([0]), m.tensor(1.0)),
    "index_add_": lambda m, c, x: c.index_add_(0, m.tensor([0]), m.ones(1, 4)),
    "index_copy_": lambda m, c, x: c.index_copy_(0, m.tensor([0]), m.ones(1, 4)),
    "scatter_src": lambda m, c, x: c.scatter_(0, _index(m), m.ones(1, 4)),
    "scatter_value": lambda m, c, x: c.scatter_(0, _index(m), 1.0),
    "scatter_reduce_src": lambda m, c, x: c.scatter_(0, _index(m), m.ones(1, 4), reduce="add"),
    "scatter_reduce_value": lambda m, c, x: c.scatter_(0, _index(m), 2.0, reduce="add"),
    "scatter_add_": lambda m, c, x: c.scatter_add_(0, _index(m), m.ones(1, 4)),
    "scatter_reduce_": lambda m, c, x: c.scatter_reduce_(0, _index(m), m.ones(1, 4), "sum"),
    "index_put_": lambda m, c, x: c.index_put_((m.tensor([0]),), m.ones(4)),
    "masked_scatter_": lambda m, c, x: c.masked_scatter_(c > 0, m.ones(3, 4)),
    "uniform_": lambda m, c, x: c.uniform_(),
    "normal_": lambda m, c, x: c.normal_(0, 2),
    "bernoulli_number": lambda m, c, x: c.bernoulli_(0.5),
    "bernoulli_default": lambda m, c, x: c.bernoulli_(),
    "bernoulli_tensor": lambda m, c, x: c.bernoulli_(m.ones(3, 4) * 0.5),
    "random_from_to": lambda m, c, x: c.random_(0, 3),
    "random_to": lambda m, c, x: c.random_(3),
    "random_": lambda m, c, x: c.random_(),
    "exponential_": lambda m, c, x: c.exponential_(),
    "exp_": lambda m, c, x: c.exp_(),
    "neg_": lambda m, c, x: c.neg_(),
    "relu_": lambda m, c, x: c.relu_(),
    "sigmoid_": lambda m, c, x: c.sigmoid_(),
    "addcmul_": lambda m, c, x: c.addcmul_(c, c),
    "addcdiv_": lambda m, c, x: c.addcdiv_(c, c),
    "lerp_number": lambda m, c, x: c.lerp_(m.ones(3, 4), 0.5),
    "lerp_tensor": lambda m, c, x: c.lerp_(m.ones(3, 4), m.ones(3, 4)),
    "xlogy_number": lambda m, c, x: c.xlogy_(2),
    "copysign_tensor": lambda m, c, x: c.copysign_(c),
    "floor_divide_number": lambda m, c, x: c.floor_divide_(2),
    "fmod_number": lambda m, c, x: c.fmod_(2),
    "lt_number": lambda m, c, x: c.lt_(1),
    "ge_tensor": lambda m, c, x: c.ge_(c),
    "round_decimals": lambda m, c, x: c.round_(decimals=1),
    "nan_to_num_": lambda m, c, x: c.nan_to_num_(),
    "addmm_": lambda m, c, x: c.addmm_(m.ones(3, 2), m.ones(2, 4)),
    "tril_": lambda m, c, x: c.tril_(),
    "renorm_": lambda m, c, x: c.renorm_(2, 0, 1.0),
    "put_": lambda m, c, x: c.put_(m.tensor([0]), m.tensor([1.0])),
    "unsqueeze_": lambda m, c, x: c.unsqueeze_(0),
    "t_": lambda m, c, x: c.t_(),
    "transpose_": lambda m, c, x: c.transpose_(0, 1),
    "as_strided_": lambda m, c, x: c.as_strided_((2,), (1,)),
    "resize_": lambda m, c, x: c.resize_(12),
    "resize_as_": lambda m, c, x: c.resize_as_(m.ones(12)),
    "set_source": lambda m, c, x: c.set_(m.ones(2)),
    "set_empty": lambda m, c, x: c.set_(),
    "detach_": lambda m, c, x: c.detach_(),
    "iadd": lambda m, c, x: c.__iadd__(1),
    "imul_tensor": lambda m, c, x: c.__imul__(m.ones(4)),
    "torch.relu_": lambda m, c, x: m.relu_(c),
    "torch.zero_": lambda m, c, x: m.zero_(c),
    "torch.fill_": lambda m, c, x: m.fill_(c, 2.0),
    "F.relu_inplace": lambda m, c, x: m.nn.functional.relu(c, inplace=True),
    "F.elu_": lambda m, c, x: m.nn.functional.elu_(c),
    "F.hardtanh_inplace": lambda m, c, x: m.nn.functional.hardtanh(c, inplace=True),
    "F.rrelu_inplace_eval": lambda m, c, x: m.nn.functional.rrelu(c, inplace=True),
    "F.silu_inplace": lambda m, c, x: m.nn.functional.silu(c, inplace=True),
    "F.threshold_inplace": lambda m, c, x: m.nn.functional.threshold(c, 0.0, 1.0, inplace=True),
    "F.dropout_inplace": lambda m, c, x: m.nn.functional.dropout(c, 0.5, True, True),
    "F.dropout_inplace_eval": lambda m, c, x: m.nn.functional.dropout(c, 0.5, False, True),
    "F.dropout1d_unbatched": lambda m, c, x: m.nn.functional.dropout1d(c, 0.5, True, True),
    "F.dropout2d_3d_input": lambda m, c, x: m.nn.functional.dropout2d(
        c.unsqueeze(0), 0.5, True, True
    ),
    "init.uniform_": lambda m, c, x: m.nn.init.uniform_(c),
    "init.ones_": lambda m, c, x: m.nn.init.ones_(c),
    "init.constant_": lambda m, c, x: m.nn.init.constant_(c, 2.0),
    "init.xavier_normal_": lambda m, c, x: m.nn.init.xavier_normal_(c),
    "init.orthogonal_": lambda m, c, x: m.nn.init.orthogonal_(c),
    "init.eye_": lambda m, c, x: m.nn.init.eye_(c),
    "view_of_captured": lambda m, c, x: c[0:2].add_(1.0),
    "reshaped_view": lambda m, c, x: c.view(12).add_(1),
    "transposed_view": lambda m, c, x: c.T.add_(1),
    "diagonal_view": lambda m, c, x: c.diagonal().add_(1),
    "unbind_view": lambda m, c, x: c.unbind(0)[0].add_(1),
    "detach_of_captured": lambda m, c, x: c.detach().add_(1.0),
    "data_of_captured": lambda m, c, x: c.data.add_(1.0),
    "under_no_grad": lambda m, c, x: _no_grad_add(m, c),
    "requires_grad_": lambda m, c, x: c.requires_grad_(),
    "requires_grad_bad_arg": lambda m, c, x: c.requires_grad_(3),
    "made_inside": lambda m, c, x: m.zeros(3).add_(1.0),
    "clone_inside": lambda m, c, x: c.clone().mul_(2),
    "view_of_made_inside": lambda m, c, x: (c * 1).view(12).add_(1),
    "backward_inside": lambda m, c, x: (x * 2).backward(),
    "backward_no_grad_inside": lambda m, c, x: m.zeros(3).sum().backward(),
    "autograd_backward_inside": lambda m, c, x: m.autograd.backward([(x * 2)]),
}


def _no_grad_add(m, c):
    with m.no_grad():
        c.add_(1.0)


def _grad(m, f):
    return m.func.grad(f)(m.ones(()))


def _vjp(m, f):
    return m.func.vjp(f, m.ones(()))[0]


def _jvp(m, f):
    return m.func.jvp(f, (m.ones(()),), (m.ones(()),))


def _jacrev(m, f):
    return m.func.jacrev(f)(m.ones(()))


def _hessian(m, f):
    return m.func.hessian(f)(m.ones(()))


def _vmap(m, f):
    return m.func.vmap(f)(m.ones(2))


TRANSFORMS = {"grad": _grad, "vjp": _vjp, "jvp": _jvp, "jacrev": _jacrev, "vmap": _vmap}


def _run(write, transform):
    def fn(m):
        c = m.ones(3, 4) * 0.5

        def f(x):
            write(m, c, x)
            return (x * 3).sum()

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # dropout2d's 3-d warning is compared elsewhere
            m.manual_seed(0)
            out = transform(m, f)
        return out, c

    return fn


@pytest.mark.parametrize("name", sorted(WRITES))
def test_write_inside_grad(name):
    both(_run(WRITES[name], _grad))


@pytest.mark.parametrize("transform", sorted(TRANSFORMS))
@pytest.mark.parametrize(
    "name",
    ["add_number", "setitem_traced", "copy_traced", "made_inside", "requires_grad_", "uniform_"],
)
def test_write_inside_each_transform(transform, name):
    both(_run(WRITES[name], TRANSFORMS[transform]))


def test_hessian_refuses_a_captured_write():
    both(_run(WRITES["add_number"], _hessian))


def _nested(m, inner_transform, made_where):
    c = m.zeros(3)

    def outer(x):
        d = m.zeros(3) if made_where == "outer" else c

        def inner(y):
            d.add_(1)
            return y.sum()

        return inner_transform(m, inner, x).sum()

    return m.func.grad(outer)(m.ones(3)), c


def _inner_grad(m, f, x):
    return m.func.grad(f)(x)


def _inner_vmap(m, f, x):
    return m.func.vmap(f)(x.expand(2, 3))


@pytest.mark.parametrize("made_where", ["outer", "captured"])
@pytest.mark.parametrize("inner", ["grad", "vmap"])
def test_nested_levels(inner, made_where):
    """A tensor made by the outer grad level is captured by an inner grad level, not by an inner
    vmap (PyTorch checks at each grad level whether the tensor is its own)."""
    transform = {"grad": _inner_grad, "vmap": _inner_vmap}[inner]
    both(lambda m: _nested(m, transform, made_where))


def test_results_made_inside_are_writable_after():
    """What an inner grad returns belongs to the outer level: writing it there is allowed."""

    def fn(m):
        def outer(x):
            g = m.func.grad(lambda y: (y * y).sum())(x)
            g.mul_(2)
            return (g * x).sum()

        return m.func.grad(outer)(m.ones(3))

    both(fn)


def test_argument_not_differentiated_is_captured():
    """An argument outside ``argnums`` is not wrapped by PyTorch's grad: writing it raises."""

    def fn(m):
        def f(x, y):
            y.add_(1)
            return x.sum()

        return m.func.grad(f, argnums=0)(m.ones(3), m.ones(3))

    both(fn)


def test_capture_error_leaves_the_tensor_as_it_was():
    c = leafgrad.ones(3)

    def f(x):
        c.mul_(x)
        return x.sum()

    with pytest.raises(RuntimeError, match="mutate a captured Tensor"):
        leafgrad.func.grad(f)(leafgrad.ones(3))
    np.testing.assert_array_equal(c.numpy(), np.ones(3, np.float32))
    assert c._version == 0
    # and the transforms still work afterwards, outside and in
    c.add_(1)
    assert leafgrad.func.grad(lambda x: (x * c).sum())(leafgrad.ones(3)).tolist() == [2.0] * 3


def test_writes_outside_transforms_are_unchecked_after_one_ran():
    leafgrad.func.grad(lambda x: x.sum())(leafgrad.ones(3))
    c = leafgrad.zeros(3)
    c.add_(1.0)
    c[0] = 5.0
    assert c.tolist() == [5.0, 1.0, 1.0]


def test_dropout2d_warns_before_the_capture_error():
    """PyTorch's dropout2d warns about a 3-d input before its ``mul_`` raises."""

    def fn(m):
        c = m.ones(1, 3, 4)

        def f(x):
            m.nn.functional.dropout2d(c, 0.5, True, True)
            return x.sum()

        return m.func.grad(f)(m.ones(()))

    both(fn)


def test_requires_grad_inside_vmap_of_a_captured_tensor():
    def fn(m):
        c = m.zeros(3)
        return m.func.vmap(lambda x: (c.requires_grad_(), x.sum())[1])(m.ones(2, 3))

    both(fn)


def test_torch_module_function_forms_match():
    """Every in-place function form torch has and leafgrad has is guarded by the same name."""
    names = [
        n
        for n in dir(torch)
        if n.endswith("_") and not n.startswith("_") and callable(getattr(torch, n))
    ]
    shared = [n for n in names if hasattr(leafgrad, n)]
    assert len(shared) > 50
    for n in shared:
        assert getattr(getattr(leafgrad, n), "__wrapped__", None) is not None or n in (
            "dropout_",
            "alpha_dropout_",
            "feature_dropout_",
            "feature_alpha_dropout_",
        ), n


# --- random ops inside vmap (Note [Randomness in vmap]) -----------------------------------------

RANDOM_OPS = {
    "rand": lambda m, x: x + m.rand(2),
    "randn_like": lambda m, x: x + m.randn_like(x),
    "dropout": lambda m, x: m.nn.functional.dropout(x, 0.5),
    "bernoulli": lambda m, x: m.bernoulli(x * 0 + 0.5),
    "captured_uniform_": lambda m, x: x + m.zeros(2).uniform_(),
    "randint": lambda m, x: x + m.randint(0, 5, (2,)),
}


@pytest.mark.parametrize("randomness", ["error", "same", "different"])
@pytest.mark.parametrize("name", sorted(RANDOM_OPS))
def test_random_ops_inside_vmap(name, randomness):
    """Under "error", PyTorch's error; under "same", one draw for the whole batch, under
    "different" one per sample, from the same generator stream (``bernoulli`` of batched
    probabilities under "same": PyTorch's error). More in test_vmap_randomness.py."""

    def fn(m):
        m.manual_seed(0)
        out = m.func.vmap(lambda x: RANDOM_OPS[name](m, x), randomness=randomness)(m.ones(3, 2))
        return out, m.rand(2)  # and the generator is where PyTorch's is

    both(fn)


def test_random_op_without_a_per_sample_draw_is_refused():
    """A draw that no per-sample form made raises under "different" rather than give every
    sample the same values (the raw draw checks)."""
    from leafgrad import _random

    def fn(x):
        return x + leafgrad.as_tensor(_random.uniform(None, (2,), np.float32))

    with pytest.raises(NotImplementedError, match="randomness='different'"):
        leafgrad.func.vmap(fn, randomness="different")(leafgrad.ones(3, 2))
    # no random op: "different" is only a flag
    out = leafgrad.func.vmap(lambda x: x * 2, randomness="different")(leafgrad.ones(3, 2))
    assert out.tolist() == [[2.0, 2.0]] * 3


def test_random_op_inside_jacfwd_is_refused():
    both(lambda m: m.func.jacfwd(lambda x: x * m.rand(2))(m.ones(2)))


def test_vmap_outside_random_draws_are_unchecked_after_a_vmap():
    leafgrad.func.vmap(lambda x: x * 2)(leafgrad.ones(3, 2))
    leafgrad.manual_seed(0)
    torch.manual_seed(0)
    assert leafgrad.rand(3).tolist() == torch.rand(3).tolist()


# --- in-place writes of batched values into unbatched tensors inside vmap -----------------------

VMAP_WRITES = {
    "copy_": lambda m, c, x: c.copy_(x),
    "add_": lambda m, c, x: c.add_(x),
    "mul_": lambda m, c, x: c.mul_(x),
    "sub_": lambda m, c, x: c.sub_(x),
    "atan2_": lambda m, c, x: c.atan2_(x),
    "fill_": lambda m, c, x: c.fill_(x.sum()),
    "setitem_element": lambda m, c, x: c.__setitem__(0, x.sum()),
    "setitem_all": lambda m, c, x: c.__setitem__(slice(None), x),
    "index_put_": lambda m, c, x: c.index_put_((m.tensor([0]),), x.sum()),
    "hypot_": lambda m, c, x: c.hypot_(x),
    "clamp_min_": lambda m, c, x: c.clamp_min_(x),
    "subtract_": lambda m, c, x: c.subtract_(x),
    "addcdiv_": lambda m, c, x: c.addcdiv_(x, x),
}


@pytest.mark.parametrize("name", sorted(VMAP_WRITES))
def test_batched_write_into_unbatched_tensor(name):
    def fn(m):
        c = m.ones(3)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # PyTorch's fallback warns of its speed
            return m.func.vmap(lambda x: (VMAP_WRITES[name](m, c, x), x.sum())[1])(m.ones(2, 3))

    both(fn)


@pytest.mark.parametrize("where", ["captured", "made_inside"])
@pytest.mark.parametrize("transform", ["grad", "jvp", "vmap"])
def test_out_of_a_traced_value(transform, where):
    """``out=`` with the transform's values: each transform's refusal of out= functions (leafgrad
    would write the tracer into ``out``)."""

    def fn(m):
        c = m.zeros(3)

        def f(x):
            d = c if where == "captured" and transform != "vmap" else m.zeros(3)
            m.add(x, 1, out=d)
            return (d * x).sum()

        x = m.ones(3)
        if transform == "grad":
            return m.func.grad(f)(x)
        if transform == "jvp":
            return m.func.jvp(f, (x,), (x,))
        return m.func.vmap(f)(m.ones(2, 3))

    both(fn)


@pytest.mark.parametrize("where", ["captured", "made_inside"])
def test_out_of_untraced_values_inside_grad_writes(where):
    """Operands the transform does not trace: PyTorch writes ``out``, captured or not (``out=``
    is no in-place op to functorch)."""

    def fn(m):
        c = m.zeros(3)

        def f(x):
            d = c if where == "captured" else m.zeros(3)
            m.add(m.ones(3), 1, out=d)
            return (d * x).sum()

        return m.func.grad(f)(m.ones(3)), c

    both(fn)


# --- shape errors inside vmap name the batched (physical) tensors, as PyTorch's do -------------

VMAP_SHAPE_ERRORS = {
    "add": lambda m, x: x + m.ones(2),
    "add_batched": lambda m, x: x + x[:2],
    "mul_2d": lambda m, x: x.reshape(3, 1) * m.ones(2, 4),
    "where": lambda m, x: m.where(x > 0, x, m.ones(2)),
    "add_inplace": lambda m, x: x.clone().add_(m.ones(2)),
    "add_unbatched_operands": lambda m, x: m.ones(3) + m.ones(2) + x,
    "view": lambda m, x: x.view(2, 2),
    "reshape": lambda m, x: x.reshape(5),
    "reshape_inferred": lambda m, x: x.reshape(-1, 2),
    "view_unbatched": lambda m, x: m.ones(3).view(2, 2) + x,
    "mm": lambda m, x: x.reshape(1, 3).mm(m.ones(2, 2)),
    "linear": lambda m, x: m.nn.functional.linear(x, m.ones(2, 2)),
    "linear_2d_bias": lambda m, x: m.nn.functional.linear(x.reshape(1, 3), m.ones(2, 2), m.ones(2)),
    "nested_add": lambda m, x: m.func.vmap(lambda r: r + m.ones(2))(x.reshape(3, 1)),
    "nested_view": lambda m, x: m.func.vmap(lambda r: r.view(2))(x.reshape(3, 1)),
}


@pytest.mark.parametrize("name", sorted(VMAP_SHAPE_ERRORS))
def test_shape_errors_inside_vmap(name):
    both(lambda m: m.func.vmap(lambda x: VMAP_SHAPE_ERRORS[name](m, x))(m.ones(4, 3)))
