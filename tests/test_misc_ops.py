"""Differential tests of leafgrad/ops/misc_ops.py against PyTorch: angle conversions, fix,
float_power, gcd/lcm, igamma/igammac, isin/isreal, logdet, matrix_exp, ravel, sum_to_size, the
directional splits, column_stack, the three scatters, fill_diagonal_, cov/corrcoef, pdist and
its functional aliases, and the samplers normal/bernoulli/poisson (leafgrad draws PyTorch's CPU
stream, so after ``manual_seed`` the values agree too)."""

from __future__ import annotations

import pytest
from conftest import both


def _grads(m, out, inputs):
    """The output, then gradients of a weighted sum by autograd.grad and by backward."""
    w = m.arange(1, out.numel() + 1, dtype=out.dtype).reshape(out.shape) / 7
    gs = m.autograd.grad((out * w).sum(), inputs, retain_graph=True)
    (out * w).sum().backward()
    return [out, *gs, *[t.grad for t in inputs]]


def _x(m, dtype="float32", rg=True):
    vals = [[0.5, -1.25, 2.0], [0.3, 1.5, -0.7]]
    return m.tensor(vals, dtype=getattr(m, dtype), requires_grad=rg)


def _pos(m, dtype="float32", rg=True):
    return m.tensor([[0.5, 1.25, 2.0], [0.3, 1.5, 3.7]], dtype=getattr(m, dtype), requires_grad=rg)


def _twice(m, make):
    """A second backward without retain_graph: raises where the node saved tensors."""
    out = make(m)
    out.sum().backward()
    out.sum().backward()
    return out


CASES = {
    # elementwise
    "deg2rad": lambda m: _grads(m, m.deg2rad(a := _x(m)), [a]),
    "rad2deg": lambda m: _grads(m, (a := _x(m, "float64")).rad2deg(), [a]),
    "deg2rad_int_bool": lambda m: [m.deg2rad(m.tensor([1, 2])), m.rad2deg(m.tensor([True]))],
    "deg2rad_half": lambda m: m.deg2rad(_x(m, "float16", False)),
    "deg2rad_0d_empty": lambda m: [m.deg2rad(m.tensor(90.0)), m.rad2deg(m.ones(0))],
    "deg2rad_complex": lambda m: m.deg2rad(m.ones(2, dtype=m.complex64)),
    "deg2rad_not_tensor": lambda m: m.deg2rad(2.0),
    "fix": lambda m: _grads(m, m.fix(a := _x(m)), [a]) + [m.tensor([3, -2]).fix()],
    "fix_bool": lambda m: m.fix(m.tensor([True])),
    "float_power_scalar": lambda m: _grads(m, m.float_power(a := _x(m), 2), [a]),
    "float_power_tensors": lambda m: _grads(
        m, m.float_power(a := _pos(m), b := _x(m, "float64")), [a, b]
    ),
    "float_power_base": lambda m: _grads(m, m.float_power(2, a := _x(m)), [a]),
    "float_power_kinds": lambda m: [
        m.float_power(_x(m, rg=False), 2j),
        m.float_power(m.tensor([1, 2]), 2),
        m.float_power(m.tensor([True]), m.tensor([2])),
        _x(m, rg=False).float_power(0.5),
        m.float_power(m.tensor(2.0), 3),
    ],
    "float_power_numbers": lambda m: m.float_power(2, 3),
    "gcd_lcm": lambda m: [
        m.gcd(m.tensor([4, -6, 0, 7]), m.tensor([6, 9, 0, 0])),
        m.lcm(m.tensor([4, -6, 0, 7]), m.tensor([6, 9, 0, 0])),
        m.tensor([[4], [10]], dtype=m.int32).gcd(m.tensor([6, 15])),
        m.lcm(m.tensor(4, dtype=m.uint8), m.tensor([6], dtype=m.uint8)),
        m.gcd(m.ones(0, dtype=m.int64), m.ones(0, dtype=m.int64)),
    ],
    "gcd_float": lambda m: m.gcd(m.tensor([4.0]), m.tensor([6.0])),
    "lcm_bool": lambda m: m.lcm(m.tensor([True]), m.tensor([True])),
    "gcd_number": lambda m: m.gcd(m.tensor([4]), 6),
    "gcd_method_number": lambda m: m.tensor([4]).gcd(6),
    "gcd_shapes": lambda m: m.gcd(m.ones(2, dtype=m.int64), m.ones(3, dtype=m.int64)),
    "igamma": lambda m: _grads(m, m.igamma(_pos(m, rg=False), b := _pos(m)), [b]),
    "igammac": lambda m: _grads(m, _pos(m, "float64", False).igammac(b := _pos(m, "float64")), [b]),
    "igamma_values": lambda m: [
        m.igamma(m.tensor([0.5, 2.0, 30.0]), m.tensor([0.0, 1.5, 25.0])),
        m.igammac(m.tensor([0.5, 2.0, 3.0], dtype=m.float64), m.tensor([0.0, 1.5, 2.5])),
    ],
    "igamma_input_grad": lambda m: m.igamma(_pos(m), _pos(m, rg=False)).sum().backward(),
    "igammac_input_grad": lambda m: m.autograd.grad(
        m.igammac(a := _pos(m), b := _pos(m)).sum(), [a, b]
    ),
    "igamma_other_only": lambda m: m.autograd.grad(m.igamma(_pos(m), b := _pos(m)).sum(), [b]),
    "igamma_int": lambda m: m.igamma(m.tensor([1]), m.tensor([2])),
    "igamma_number": lambda m: m.igamma(m.ones(2), 2.0),
    "igamma_twice": lambda m: _twice(m, lambda m: m.igamma(_pos(m, rg=False), _pos(m))),
    "isreal": lambda m: [
        m.isreal(m.tensor([1 + 0j, 1 + 1j, -0j])),
        m.isreal(m.tensor([1, 2])),
        _x(m).isreal(),
        m.isreal(m.tensor(True)),
    ],
    "isin": lambda m: [
        m.isin(m.tensor([[1, 2], [3, 5]]), m.tensor([2, 5])),
        m.isin(m.tensor([1.0, 2.0, float("nan")]), 2.0),
        m.isin(3, m.tensor([3])),
        m.isin(m.tensor([1, 2]), m.tensor([2.0]), invert=True),
        m.isin(_x(m), _x(m, rg=False)[0]),
        m.isin(m.tensor([1, 2]), m.ones(0)),
        m.isin(m.ones(0), m.tensor([1])),
    ],
    "isin_bool": lambda m: m.isin(m.tensor([True]), m.tensor([True])),
    "isin_complex": lambda m: m.isin(m.ones(2), m.ones(2, dtype=m.complex64)),
    "isin_numbers": lambda m: m.isin(2, 3),
    # linear algebra
    "logdet": lambda m: _grads(
        m, m.logdet(a := m.tensor([[2.0, 1], [1, 3]], requires_grad=True)), [a]
    ),
    "logdet_batch": lambda m: _grads(
        m,
        (
            a := m.tensor(
                [[[2.0, 1], [1, 3]], [[0, 1], [1, 0]]], dtype=m.float64, requires_grad=True
            )
        ).logdet(),
        [a],
    ),
    "logdet_special": lambda m: [
        m.logdet(m.tensor([[0.0, 0], [0, 1]])),
        m.logdet(m.ones(0, 0)),
        m.logdet(m.tensor([[1 + 1j, 0], [0, 2]])),
    ],
    "logdet_not_square": lambda m: m.logdet(m.ones(2, 3)),
    "logdet_1d": lambda m: m.logdet(m.ones(2)),
    "logdet_int": lambda m: m.logdet(m.ones(2, 2, dtype=m.int64)),
    "matrix_exp": lambda m: _grads(
        m,
        m.matrix_exp(a := m.tensor([[0.2, 1.0], [-0.5, 0.3]], dtype=m.float64, requires_grad=True)),
        [a],
    ),
    "matrix_exp_batch_empty": lambda m: [
        m.matrix_exp(m.ones(3, 2, 2, dtype=m.float64) * 0.3),
        m.matrix_exp(m.ones(0, 0)),
        m.matrix_exp(m.ones(0, 2, 2)),
        m.tensor([[0.2, 1.0], [-0.5, 0.3]]).matrix_exp(),
        m.matrix_exp(m.tensor([[5.0]])),
    ],
    "matrix_exp_not_square": lambda m: m.matrix_exp(m.ones(2, 3)),
    "matrix_exp_1d": lambda m: m.matrix_exp(m.ones(2)),
    "matrix_exp_int": lambda m: m.matrix_exp(m.ones(2, 2, dtype=m.int64)),
    "matrix_exp_twice": lambda m: _twice(m, lambda m: m.matrix_exp(m.eye(2, requires_grad=True))),
    # shapes
    "ravel": lambda m: [(a := _x(m)).ravel(), m.ravel(a.t()), _grads(m, m.ravel(a.t()), [a])],
    "ravel_0d": lambda m: [m.ravel(m.tensor(3.0)), m.ravel(m.ones(0, 2))],
    "sum_to_size": lambda m: [
        (a := _x(m)).sum_to_size(1, 3),
        a.sum_to_size((3,)),
        a.sum_to_size([2, 1]),
        a.sum_to_size(2, 3) is a,
        a.sum_to_size(1),
        _grads(m, a.sum_to_size(3), [a]),
    ],
    "sum_to_size_bad": lambda m: _x(m).sum_to_size(4, 3),
    "sum_to_size_longer": lambda m: _x(m).sum_to_size(1, 2, 3),
    "splits": lambda m: [
        m.hsplit(a := _x(m), 3),
        m.vsplit(a, 2),
        m.hsplit(a, [1]),
        a.hsplit(3),
        a.vsplit([1]),
        m.hsplit(m.arange(6.0), 2),
        m.dsplit(a.reshape(1, 2, 3), [1]),
        a.reshape(1, 1, 6).dsplit(3),
    ],
    "split_grads": lambda m: _grads(m, m.hsplit(a := _x(m), 3)[1], [a]),
    "hsplit_not_divisible": lambda m: m.hsplit(_x(m), 2),
    "hsplit_zero": lambda m: m.hsplit(_x(m), 0),
    "hsplit_0d": lambda m: m.hsplit(m.tensor(1.0), 1),
    "hsplit_float": lambda m: m.hsplit(_x(m), 2.0),
    "vsplit_1d": lambda m: m.vsplit(m.ones(3), 3),
    "vsplit_not_divisible": lambda m: m.vsplit(_x(m), 3),
    "dsplit_2d": lambda m: m.dsplit(_x(m), 2),
    "column_stack": lambda m: [
        m.column_stack([(a := _x(m))[0], a[1]]),
        m.column_stack((a, a[:, 0])),
        m.column_stack([m.tensor(1.0), m.tensor(2)]),
        _grads(m, m.column_stack([a[0], a.t()]), [a]),
    ],
    "column_stack_empty": lambda m: m.column_stack([]),
    "column_stack_tensor": lambda m: m.column_stack(m.ones(2)),
    "column_stack_sizes": lambda m: m.column_stack([m.ones(2), m.ones(3)]),
    # scatters
    "select_scatter": lambda m: _grads(
        m, m.select_scatter(a := _x(m), s := m.ones(3, requires_grad=True), 0, -1), [a, s]
    ),
    "select_scatter_cast": lambda m: [
        _x(m, rg=False).select_scatter(m.tensor([1, 2]), 1, 2),
        m.select_scatter(m.ones(3), m.tensor(5.0, dtype=m.float64), 0, 1),
    ],
    "slice_scatter": lambda m: _grads(
        m, m.slice_scatter(a := _x(m), s := m.ones(2, 2, requires_grad=True), 1, 0, 3, 2), [a, s]
    ),
    "slice_scatter_defaults": lambda m: [
        _grads(
            m, (a := _x(m)).slice_scatter(s := m.ones(1, 3, requires_grad=True), start=1), [a, s]
        ),
        m.slice_scatter(_x(m, rg=False), m.zeros(2, 1), 1, -1),
        m.slice_scatter(_x(m, rg=False), m.zeros(2, 0), 1, 5, 9),
    ],
    "diagonal_scatter": lambda m: _grads(
        m, m.diagonal_scatter(a := _x(m), s := m.ones(2, requires_grad=True), 1), [a, s]
    ),
    "diagonal_scatter_dims": lambda m: [
        _grads(
            m, (a := _x(m)).diagonal_scatter(s := m.ones(1, requires_grad=True), -1, 1, 0), [a, s]
        ),
        m.diagonal_scatter(m.zeros(2, 3, 4), m.ones(3, 2), 0, -1, 0),
    ],
    "scatters_no_saved": lambda m: _twice(
        m, lambda m: m.select_scatter(_x(m), m.ones(3, requires_grad=True), 0, 0)
    ),
    "select_scatter_size": lambda m: m.select_scatter(_x(m), m.ones(2), 0, 0),
    "select_scatter_index": lambda m: m.select_scatter(_x(m), m.ones(3), 0, 5),
    "select_scatter_dim": lambda m: m.select_scatter(_x(m), m.ones(3), 2, 0),
    "slice_scatter_size": lambda m: m.slice_scatter(_x(m), m.ones(2, 2), 1, 0, 1),
    "slice_scatter_step": lambda m: m.slice_scatter(_x(m), m.ones(2, 1), 1, step=0),
    "diagonal_scatter_size": lambda m: m.diagonal_scatter(_x(m), m.ones(3)),
    "diagonal_scatter_same": lambda m: m.diagonal_scatter(_x(m), m.ones(2), 0, 0, 0),
    "fill_diagonal": lambda m: (
        (y := (a := _x(m)).clone()).fill_diagonal_(2.0),
        y._version,
        _grads(m, y, [a]),
    ),
    "fill_diagonal_kinds": lambda m: [
        (y := m.ones(7, 3)).fill_diagonal_(5, wrap=True),
        y._version,
        m.ones(7, 3).fill_diagonal_(5),
        m.ones(3, 7).fill_diagonal_(5, wrap=True),
        m.zeros(3, 3, 3).fill_diagonal_(1),
        m.ones(3, 3, dtype=m.int64).fill_diagonal_(1.5),
        m.zeros(2, 2).fill_diagonal_(m.tensor(3.0)),
        m.ones(0, 0).fill_diagonal_(1),
    ],
    "fill_diagonal_leaf": lambda m: _x(m).fill_diagonal_(1),
    "fill_diagonal_1d": lambda m: m.ones(3).fill_diagonal_(1),
    "fill_diagonal_unequal": lambda m: m.ones(3, 2, 2).fill_diagonal_(1),
    # statistics
    "cov": lambda m: [
        _grads(m, m.cov(a := _x(m, "float64")), [a]),
        _grads(m, a.cov(correction=0), [a]),
        m.cov(a[0]),
        m.cov(m.tensor([[1, 2, 4], [3, 1, 0]])),
    ],
    "cov_weights": lambda m: _grads(
        m,
        m.cov(
            a := _x(m, "float64"),
            fweights=m.tensor([1, 2, 1]),
            aweights=m.tensor([0.5, 1.0, 2.0], dtype=m.float64),
        ),
        [a],
    ),
    "cov_fweights": lambda m: m.cov(_x(m), correction=2, fweights=m.tensor([1, 2, 1])),
    "cov_dof": lambda m: m.cov(m.ones(2, 1)),
    "cov_3d": lambda m: m.cov(m.ones(2, 2, 2)),
    "cov_bool": lambda m: m.cov(m.ones(2, 2, dtype=m.bool)),
    "cov_fweights_float": lambda m: m.cov(_x(m), fweights=m.ones(3)),
    "cov_fweights_numel": lambda m: m.cov(_x(m), fweights=m.tensor([1, 2])),
    "cov_fweights_negative": lambda m: m.cov(_x(m), fweights=m.tensor([1, -2, 1])),
    "cov_aweights_int": lambda m: m.cov(_x(m), aweights=m.tensor([1, 2, 1])),
    "cov_aweights_2d": lambda m: m.cov(_x(m), aweights=m.ones(1, 3)),
    "cov_weights_zero": lambda m: m.cov(_x(m), aweights=m.zeros(3)),
    "corrcoef": lambda m: [
        _grads(m, m.corrcoef(a := _x(m, "float64")), [a]),
        m.corrcoef(a[0]),
        m.tensor([[1, 2, 4], [3, 1, 0], [5, 5, 1]]).corrcoef(),
    ],
    "corrcoef_3d": lambda m: m.corrcoef(m.ones(2, 2, 2)),
    # distances
    "pdist": lambda m: [
        _grads(
            m,
            m.pdist(a := m.tensor([[0.5, -1.0], [2.0, 0.3], [1.5, -0.7]], requires_grad=True)),
            [a],
        ),
    ],
    "pdist_norms": lambda m: [
        _grads(
            m,
            m.pdist(
                a := m.tensor(
                    [[0.5, -1.0], [2.0, 0.3], [1.5, -0.7], [0.5, -1.0]],
                    dtype=m.float64,
                    requires_grad=True,
                ),
                p,
            ),
            [a],
        )
        for p in (2, 1, 3, 0, float("inf"))
    ],
    "pdist_small": lambda m: [m.pdist(m.ones(1, 3)), m.pdist(m.ones(0, 2)), m.pdist(m.ones(3, 0))],
    "pdist_twice": lambda m: _twice(m, lambda m: m.pdist(_x(m).t())),
    "pdist_1d": lambda m: m.pdist(m.ones(3)),
    "pdist_negative_p": lambda m: m.pdist(m.ones(3, 2), -1),
    "pdist_int": lambda m: m.pdist(m.ones(3, 2, dtype=m.int64)),
    "functional_aliases": lambda m: [
        _grads(m, m.pairwise_distance(a := _x(m), _x(m, rg=False) * 2), [a]),
        _grads(m, m.cosine_similarity(b := _x(m), _x(m, rg=False) + 1), [b]),
    ],
}


@pytest.mark.parametrize("name", list(CASES))
def test_ops(name):
    both(CASES[name])


def test_functional_aliases_are_the_functions():
    import leafgrad

    F = leafgrad.nn.functional
    assert leafgrad.pairwise_distance is F.pairwise_distance
    assert leafgrad.cosine_similarity is F.cosine_similarity


INPLACE = {
    "deg2rad_": lambda m: ((a := _x(m, rg=False)).deg2rad_(), a._version),
    "rad2deg_graph": lambda m: _grads(m, (a := _x(m)).clone().rad2deg_(), [a]),
    "fix_": lambda m: (m.fix_(a := _x(m, rg=False)), a._version),
    "deg2rad_leaf": lambda m: _x(m).deg2rad_(),
    "deg2rad_int": lambda m: m.tensor([1, 2]).deg2rad_(),
    "float_power_": lambda m: ((a := _x(m, "float64", False)).float_power_(2), a._version),
    "float_power_tensor_": lambda m: _grads(
        m, (a := _x(m, "float64")).abs().float_power_(b := _pos(m)), [a, b]
    ),
    "float_power_float": lambda m: _x(m, rg=False).float_power_(2),
    "float_power_complex": lambda m: _x(m, "float64", False).float_power_(2j),
    "gcd_": lambda m: (
        (a := m.tensor([4, 6])).gcd_(m.tensor([6, 9])),
        a._version,
        m.lcm_(a, m.tensor([4, 4])),
        a._version,
    ),
    "igamma_": lambda m: ((a := _pos(m, rg=False)).igamma_(_pos(m, rg=False) * 2), a._version),
    "igammac_": lambda m: _grads(m, _pos(m, rg=False).igammac_(b := _pos(m)), [b]),
}


@pytest.mark.parametrize("name", list(INPLACE))
def test_inplace(name):
    both(INPLACE[name])


def _seeded(f):
    def run(m):
        m.manual_seed(3)
        return f(m)

    return run


SAMPLING = {
    "normal_tensors": lambda m: _grads(m, m.normal(a := _x(m), s := _pos(m, "float64")), [a, s]),
    "normal_tensor_float": lambda m: _grads(
        m, m.normal(a := m.zeros(20, dtype=m.float64, requires_grad=True), 2.0), [a]
    ),
    "normal_tensor_default": lambda m: m.normal(m.zeros(5)),
    "normal_float_tensor": lambda m: _grads(
        m, m.normal(1.0, s := m.ones(5, 4, requires_grad=True)), [s]
    ),
    "normal_numbers": lambda m: [
        m.normal(0.0, 1.0, (2, 3)),
        m.normal(2, 3, size=(20,), dtype=m.float64, requires_grad=True),
        m.normal(0.0, 1.0, size=[0]),
    ],
    "normal_broadcast": lambda m: m.normal(m.zeros(2, 1), m.ones(3)),
    "normal_generator": lambda m: m.normal(m.zeros(3), 1.0, generator=m.Generator().manual_seed(4)),
    "normal_no_size": lambda m: m.normal(0.0, 1.0),
    "normal_negative_std": lambda m: m.normal(m.zeros(3), -1.0),
    "normal_negative_stds": lambda m: m.normal(m.zeros(3), -m.ones(3)),
    "normal_int_mean": lambda m: m.normal(m.zeros(3, dtype=m.int64), 1.0),
    "normal_shapes": lambda m: m.normal(m.zeros(3), m.ones(2)),
    "normal_no_saved": lambda m: _twice(m, lambda m: m.normal(_x(m), 1.0)),
    "bernoulli": lambda m: (
        _grads(m, m.bernoulli(p := m.full((3, 7), 0.5, requires_grad=True)), [p])
        + [p.bernoulli(), m.bernoulli(m.rand(20, dtype=m.float64))]
    ),
    "bernoulli_p_backward": lambda m: (
        m.bernoulli(m.full((3,), 0.5, requires_grad=True), 0.3).sum().backward()
    ),
    "bernoulli_bad_probability": lambda m: m.bernoulli(m.tensor([2.0])),
    "bernoulli_int": lambda m: m.bernoulli(m.tensor([1])),
    "poisson": lambda m: (
        _grads(
            m, m.poisson(r := m.tensor([0.0, 0.5, 3.0, 12.0, 40.0, 100.0], requires_grad=True)), [r]
        )
        + [m.poisson(m.full((2, 3), 4.0, dtype=m.float64)), m.poisson(m.ones(0))]
    ),
    "poisson_negative": lambda m: m.poisson(m.tensor([-1.0])),
    "poisson_int": lambda m: m.poisson(m.tensor([1])),
}


@pytest.mark.parametrize("name", list(SAMPLING))
def test_sampling(name):
    both(_seeded(SAMPLING[name]))


def test_bernoulli_probability_number():
    """``bernoulli(input, p)``: its node is NotImplemented."""
    both(
        _seeded(
            lambda m: [
                m.bernoulli(p := m.full((3, 7), 0.5, requires_grad=True), 0.3),
                p.bernoulli(0.3),
            ]
        )
    )
