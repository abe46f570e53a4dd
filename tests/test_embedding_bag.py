"""``F.embedding_bag`` / ``nn.EmbeddingBag`` and ``F.embedding``'s ``max_norm`` and
``scale_grad_by_freq`` against torch: values, gradients (max routed to the first maximum,
frequencies scaling), node names, version counters, reprs and errors."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import both, lg

W = np.random.default_rng(5).standard_normal((6, 3))
W[2, 1] = W[4, 1]  # a tie for max mode


def _w(m, dtype=None):
    return m.tensor(W, dtype=dtype or m.float64, requires_grad=True)


IDX = [0, 2, 4, 1, 1, 2, 5]


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize(
    "offsets, last", [([0, 2, 2, 5], False), ([0, 3, 7], True), ([0], False), ([0, 7], False)]
)
@pytest.mark.parametrize("padding_idx", [None, 1, -4])
def test_bags_values_and_gradients(mode, offsets, last, padding_idx):
    def fn(m):
        w = _w(m)
        out = m.nn.functional.embedding_bag(
            m.tensor(IDX),
            w,
            m.tensor(offsets),
            mode=mode,
            include_last_offset=last,
            padding_idx=padding_idx,
        )
        (out * m.arange(1.0, out.numel() + 1, dtype=m.float64).view(out.shape)).sum().backward()
        return out, w.grad, [type(n).__name__ for n, _ in out.grad_fn.next_functions]

    both(fn)


@pytest.mark.parametrize("mode", ["sum", "mean"])
def test_two_dimensional_input_per_sample_weights_and_frequencies(mode):
    def fn(m):
        w = _w(m)
        psw = m.linspace(0.5, 2.0, 6, dtype=m.float64).view(2, 3).requires_grad_()
        idx = m.tensor([[0, 2, 2], [5, 2, 1]])
        out = m.nn.functional.embedding_bag(
            idx,
            w,
            mode=mode,
            per_sample_weights=psw if mode == "sum" else None,
            scale_grad_by_freq=True,
        )
        out.pow(2).sum().backward()
        return out, w.grad, psw.grad if mode == "sum" else None

    both(fn)


def test_max_norm_renormalizes_the_rows_used_in_place():
    def fn(m):
        w = m.tensor(W * 3)
        v0 = w._version
        out = m.nn.functional.embedding_bag(m.tensor([0, 3, 3]), w, m.tensor([0, 1]), max_norm=1.5)
        e = m.tensor(W * 3)
        out2 = m.nn.functional.embedding(m.tensor([[1, 4]]), e, max_norm=2.0, norm_type=1.0)
        return out, w, w._version - v0, out2, e, e._version

    both(fn)


def test_embedding_scale_grad_by_freq_and_double_backward():
    def fn(m):
        w = _w(m)
        out = m.nn.functional.embedding(
            m.tensor([[0, 2, 2], [2, 5, 0]]), w, scale_grad_by_freq=True
        )
        (g,) = m.autograd.grad(out.pow(2).sum(), w, create_graph=True)
        g.sum().backward()
        return out, g, w.grad

    both(fn)


def test_module_repr_training_and_from_pretrained():
    def fn(m):
        m.manual_seed(0)
        bag = m.nn.EmbeddingBag(10, 4, mode="max", padding_idx=-1)
        pre = m.nn.EmbeddingBag.from_pretrained(m.ones(3, 2), mode="sum", max_norm=1.0)
        opt = m.optim.SGD(bag.parameters(), lr=0.1)
        for _ in range(2):
            opt.zero_grad()
            bag(m.tensor([1, 9, 3, 3, 7]), m.tensor([0, 2])).sum().backward()
            opt.step()
        return repr(bag), repr(pre), bag.weight, pre.weight.requires_grad, pre(m.tensor([[0, 1]]))

    both(fn)


ERRORS = {
    "float_indices": lambda m: m.nn.functional.embedding_bag(
        m.tensor([0.0, 1.0]), _w(m), m.tensor([0])
    ),
    "float_offsets": lambda m: m.nn.functional.embedding_bag(
        m.tensor([0, 1]), _w(m), m.tensor([0.0])
    ),
    "long_weight": lambda m: m.nn.functional.embedding_bag(
        m.tensor([0, 1]), m.ones(3, 2, dtype=m.long), m.tensor([0])
    ),
    "swapped_arguments_warn": lambda m: m.nn.functional.embedding_bag(
        m.ones(3, 2), m.tensor([0, 1]), m.tensor([0])
    ),
    "first_offset": lambda m: m.nn.functional.embedding_bag(m.tensor([0, 1]), _w(m), m.tensor([1])),
    "last_offset": lambda m: m.nn.functional.embedding_bag(
        m.tensor([0, 1]), _w(m), m.tensor([0, 3])
    ),
    "decreasing_offsets": lambda m: m.nn.functional.embedding_bag(
        m.tensor([0, 1, 2, 3, 4]), _w(m, m.float32), m.tensor([0, 3, 2])
    ),
    **{
        f"index_{v}_{dt}_{mode}": (
            lambda m, v=v, dt=dt, mode=mode: m.nn.functional.embedding_bag(
                m.tensor([0, v]), _w(m, getattr(m, dt)), m.tensor([0]), mode=mode
            )
        )
        for v in (9, -1)
        for dt in ("float32", "float64")
        for mode in ("sum", "max")
    },
    "offsets_with_2d": lambda m: m.nn.functional.embedding_bag(
        m.tensor([[0, 1]]), _w(m), m.tensor([0])
    ),
    "no_offsets": lambda m: m.nn.functional.embedding_bag(m.tensor([0, 1]), _w(m)),
    "2d_offsets": lambda m: m.nn.functional.embedding_bag(m.tensor([0, 1]), _w(m), m.tensor([[0]])),
    "3d_input": lambda m: m.nn.functional.embedding_bag(m.tensor([[[0]]]), _w(m)),
    "bad_mode": lambda m: m.nn.functional.embedding_bag(
        m.tensor([0, 1]), _w(m), m.tensor([0]), mode="min"
    ),
    "max_with_frequencies": lambda m: m.nn.functional.embedding_bag(
        m.tensor([0, 1]), _w(m), m.tensor([0]), mode="max", scale_grad_by_freq=True
    ),
    "weights_with_mean": lambda m: m.nn.functional.embedding_bag(
        m.tensor([0, 1]), _w(m), m.tensor([0]), per_sample_weights=m.ones(2, dtype=m.float64)
    ),
    "weights_shape": lambda m: m.nn.functional.embedding_bag(
        m.tensor([0, 1]), _w(m), m.tensor([0]), mode="sum", per_sample_weights=m.ones(3)
    ),
    "weight_1d": lambda m: m.nn.functional.embedding_bag(
        m.tensor([0, 1]), m.ones(3), m.tensor([0])
    ),
    "module_padding_range": lambda m: m.nn.EmbeddingBag(3, 2, padding_idx=3),
}


@pytest.mark.every_case
@pytest.mark.parametrize("name", list(ERRORS))
def test_errors(name):
    both(ERRORS[name])


def test_decreasing_offsets_are_refused_where_pytorch_reads_them_unchecked():
    """float64 and max take PyTorch's generic kernel, which computes something for decreasing
    offsets without a check; leafgrad refuses them there too."""
    for dtype, mode in ((lg.float64, "mean"), (lg.float32, "max")):
        w = lg.ones(6, 3, dtype=dtype)
        with pytest.raises(RuntimeError, match="offsets must not decrease"):
            lg.nn.functional.embedding_bag(
                lg.tensor([0, 1, 2, 3, 4]), w, lg.tensor([0, 3, 2]), mode=mode
            )
