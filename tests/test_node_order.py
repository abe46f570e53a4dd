"""The order in which composite functions make their nodes, against torch: PyTorch's engine runs
ready nodes by sequence number (the later-made first), so this order decides the order in which
gradients reach a tensor read twice, and so the order of their sums (``AddBackward0``'s operands
with ``create_graph=True``, and the last bits of float sums). ATen's compiled operators evaluate
their operands right to left: ``at::exp(input) - target * input`` makes the product first."""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import both

_RNG = np.random.default_rng(4)
A = _RNG.standard_normal((3, 4))
B = _RNG.standard_normal((3, 4))
S = _RNG.standard_normal((3, 3))
S = S @ S.T + 3 * np.eye(3)


def _f(m):
    return m.nn.functional


def _t3(m):
    return m.tensor([0, 1, 3])


CASES = {
    "poisson_nll": lambda m, a, b, s: _f(m).poisson_nll_loss(a, b.abs(), full=True),
    "poisson_nll_linear": lambda m, a, b, s: _f(m).poisson_nll_loss(
        a.abs(), b.abs(), log_input=False, full=True
    ),
    "gaussian_nll": lambda m, a, b, s: _f(m).gaussian_nll_loss(
        a, b, s[:, :1].abs() + 0.1, full=True
    ),
    "kl_div": lambda m, a, b, s: _f(m).kl_div(a, b.softmax(1), reduction="batchmean"),
    "kl_div_log_target": lambda m, a, b, s: _f(m).kl_div(a, b, reduction="sum", log_target=True),
    "triplet_swap": lambda m, a, b, s: _f(m).triplet_margin_loss(a, b, a.flip(0), swap=True),
    "cosine_embedding": lambda m, a, b, s: _f(m).cosine_embedding_loss(
        a, b, m.tensor([1, -1, 1]), margin=0.2
    ),
    "margin_ranking": lambda m, a, b, s: _f(m).margin_ranking_loss(
        a[0], b[0], m.tensor([1.0, -1, 1, 1], dtype=a.dtype)
    ),
    "hinge_embedding": lambda m, a, b, s: _f(m).hinge_embedding_loss(a, b.sign()),
    "multilabel_soft_margin": lambda m, a, b, s: _f(m).multilabel_soft_margin_loss(
        a, (b > 0).to(a.dtype)
    ),
    "cross_entropy_smoothing": lambda m, a, b, s: _f(m).cross_entropy(
        a, _t3(m), weight=b[0].abs(), label_smoothing=0.2
    ),
    "cross_entropy_probabilities": lambda m, a, b, s: _f(m).cross_entropy(
        a, b.softmax(1), label_smoothing=0.1
    ),
    "bce_logits_pos_weight": lambda m, a, b, s: _f(m).binary_cross_entropy_with_logits(
        a, b.sigmoid(), weight=b.abs(), pos_weight=b[0].abs()
    ),
    "huber": lambda m, a, b, s: _f(m).huber_loss(a, b, delta=0.5),
    "cosine_similarity": lambda m, a, b, s: _f(m).cosine_similarity(a, b),
    "pairwise_distance": lambda m, a, b, s: _f(m).pairwise_distance(a, b, p=3),
    "normalize": lambda m, a, b, s: _f(m).normalize(a, p=3, dim=0),
    "group_norm": lambda m, a, b, s: _f(m).group_norm(a[None], 3, s[0], s[1]),
    "instance_norm": lambda m, a, b, s: _f(m).instance_norm(a[None], weight=s[0], bias=s[1]),
    "instance_norm_running": lambda m, a, b, s: _f(m).instance_norm(
        a.t()[None], m.zeros(4, dtype=a.dtype), m.ones(4, dtype=a.dtype), b[0], b[1]
    ),
    "local_response_norm": lambda m, a, b, s: _f(m).local_response_norm(a[None], 2),
    "rms_norm": lambda m, a, b, s: _f(m).rms_norm(a, (4,), b[0]),
    "softmin": lambda m, a, b, s: _f(m).softmin(a, 1),
    "var_mean": lambda m, a, b, s: sum(m.var_mean(a, 1)),
    "cov": lambda m, a, b, s: m.cov(a, correction=2, aweights=b[0].abs()),
    "cov_fweights": lambda m, a, b, s: m.cov(
        a, fweights=m.tensor([1, 2, 1, 1]), aweights=b[0].abs()
    ),
    "corrcoef": lambda m, a, b, s: m.corrcoef(a),
    "trapezoid": lambda m, a, b, s: m.trapezoid(a, b),
    "cumulative_trapezoid": lambda m, a, b, s: m.cumulative_trapezoid(a, b),
    "diff": lambda m, a, b, s: m.diff(a, 2, prepend=b, append=b[:, :1]),
    "kron": lambda m, a, b, s: m.kron(a, b),
    "tensordot": lambda m, a, b, s: m.tensordot(a, b.t(), 1),
    "tensordot_outer": lambda m, a, b, s: m.tensordot(a, b, 0),
    "tensordot_full": lambda m, a, b, s: m.tensordot(a, b, 2),
    "inner": lambda m, a, b, s: m.inner(a, b),
    "einsum": lambda m, a, b, s: m.einsum("ij,kj,il->kl", a, b, s),
    "block_diag": lambda m, a, b, s: m.block_diag(a, b),
    "cartesian_prod": lambda m, a, b, s: m.cartesian_prod(a[0], b[0]),
    "pinv": lambda m, a, b, s: m.linalg.pinv(a),
    "cond": lambda m, a, b, s: m.linalg.cond(s),
    "matrix_norm_2": lambda m, a, b, s: m.linalg.matrix_norm(a, 2),
    "norm_inf": lambda m, a, b, s: m.linalg.norm(a, math.inf),
    "matrix_power": lambda m, a, b, s: m.linalg.matrix_power(s, -2),
    "multi_dot": lambda m, a, b, s: m.linalg.multi_dot([s, a, b.t()]),
    "addbmm": lambda m, a, b, s: m.addbmm(a, s[None].expand(2, 3, 3), b[None].expand(2, 3, 4)),
    "lerp": lambda m, a, b, s: m.lerp(a, b, b.sigmoid()),
    "logaddexp2": lambda m, a, b, s: m.logaddexp2(a, b),
    "float_power": lambda m, a, b, s: m.float_power(a.abs(), b),
    "cdist_mm": lambda m, a, b, s: m.cdist(a, b, compute_mode="use_mm_for_euclid_dist"),
    "aminmax": lambda m, a, b, s: sum(m.aminmax(a, dim=1)),
    "interpolate_area": lambda m, a, b, s: _f(m).interpolate(
        a[None, None], size=(2, 2), mode="area"
    ),
    "lp_pool": lambda m, a, b, s: _f(m).lp_pool1d(a[None].abs() + 0.1, 2, 2),
    "affine_grid": lambda m, a, b, s: _f(m).affine_grid(a[None, :2, :3], (1, 1, 2, 2), False),
    "sdpa_causal": lambda m, a, b, s: _f(m).scaled_dot_product_attention(
        a[None], b[None], b[None], is_causal=True, scale=0.3
    ),
    "complex_product": lambda m, a, b, s: m.view_as_real(m.complex(a, b) * m.complex(b, a)),
    "complex_angle": lambda m, a, b, s: m.complex(a, b).angle(),
}


def _order(m, fn):
    """The names of the nodes behind ``fn``'s result, by sequence number."""
    leaves = [m.tensor(v, dtype=m.float64, requires_grad=True) for v in (A, B, S)]
    out = fn(m, *leaves)
    seen, nodes, stack = set(), [], [out.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        if type(node).__name__ != "AccumulateGrad":
            nodes.append((node._sequence_nr(), type(node).__name__))
        stack.extend(n for n, _ in node.next_functions)
    return [name for _, name in sorted(nodes)]


@pytest.mark.parametrize("name", list(CASES))
def test_composites_make_their_nodes_in_pytorchs_order(name):
    both(lambda m: _order(m, CASES[name]))


@pytest.mark.parametrize("name", ["poisson_nll", "kl_div_log_target", "diff", "tensordot"])
def test_gradient_sums_follow_the_node_order(name):
    """With create_graph=True the sums of the gradients are nodes of their own, operands in the
    order the gradients arrived."""

    def fn(m):
        leaves = [m.tensor(v, dtype=m.float64, requires_grad=True) for v in (A, B, S)]
        out = CASES[name](m, *leaves)
        w = m.linspace(-1, 1, out.numel(), dtype=out.dtype).reshape(out.shape)
        grads = m.autograd.grad((out * w).sum(), leaves, create_graph=True, allow_unused=True)
        return [
            None
            if g is None or g.grad_fn is None
            else [None if f is None else type(f).__name__ for f, _ in g.grad_fn.next_functions]
            for g in grads
        ]

    both(fn)


def test_sequence_numbers_are_drawn_only_by_recorded_ops():
    """AccumulateGrad (made again for each graph once the last one is gone) and the error nodes
    of ops without a derivative take UINT64_MAX without drawing a number: consecutive ops have
    consecutive sequence numbers."""

    def fn(m):
        a = m.rand(3, 4, requires_grad=True)
        b = (m.rand(3, 4) * 3).requires_grad_()
        seqs = [(b * a).grad_fn._sequence_nr() for _ in range(3)]
        seqs += [(a * 2).grad_fn._sequence_nr() for _ in range(2)]
        h = m.heaviside(a, b)
        seqs.append((a + b).grad_fn._sequence_nr())
        acc = (a * 1).grad_fn.next_functions[0][0]
        return [s - seqs[0] for s in seqs], h.grad_fn._sequence_nr(), acc._sequence_nr()

    both(fn)
