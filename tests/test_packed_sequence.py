"""``nn.utils.rnn`` (packed and padded sequences) and RNN modules over packed input, against
torch.nn.utils.rnn: values, gradients, grad_fn names, batch sizes, index tensors, reprs, errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from conftest import both, lg, same

RNG = np.random.default_rng(7)


def _rnn(m):
    return m.nn.utils.rnn


@pytest.mark.parametrize(
    "kind, bidirectional, batch_first, enforce_sorted",
    [
        ("LSTM", False, False, True),
        ("LSTM", True, True, False),
        ("GRU", True, False, False),
        ("GRU", False, True, True),
        ("RNN", False, False, False),
        ("RNN", True, True, True),
    ],
)
def test_rnn_modules_over_packed_input(kind, bidirectional, batch_first, enforce_sorted):
    """Two stacked layers over a packed batch: the packed output, the final states (in the
    input's batch order) and every gradient equal PyTorch's fused packed kernels'."""
    lens = [5, 3, 3, 1] if enforce_sorted else [3, 5, 1, 3]
    x = RNG.standard_normal((4, 5, 3) if batch_first else (5, 4, 3)).astype(np.float32)

    def run(m):
        m.manual_seed(0)
        layer = getattr(m.nn, kind)(
            3, 4, num_layers=2, bidirectional=bidirectional, batch_first=batch_first
        )
        xi = m.tensor(x, requires_grad=True)
        packed = _rnn(m).pack_padded_sequence(
            xi, lens, batch_first=batch_first, enforce_sorted=enforce_sorted
        )
        out, h = layer(packed)
        padded, lengths = _rnn(m).pad_packed_sequence(out, batch_first=batch_first, total_length=6)
        hh = h[0] * 2 + h[1] if kind == "LSTM" else h
        (padded.sum() + (padded**2).sum() + hh.pow(2).sum()).backward()
        return out, padded, lengths, hh, xi.grad, [p.grad for p in layer.parameters()]

    both(run, rtol=1e-4, atol=1e-5)


def test_lstm_projections_and_given_states_over_packed_input():
    def run(m):
        m.manual_seed(0)
        layer = m.nn.LSTM(2, 4, proj_size=2, bidirectional=True)
        seqs = [m.ones(1, 2), m.arange(6.0).view(3, 2), m.ones(2, 2) * 2]
        packed = _rnn(m).pack_sequence(seqs, enforce_sorted=False)
        h0 = m.arange(12.0).view(2, 3, 2).div(10).requires_grad_()
        c0 = m.arange(24.0).view(2, 3, 4).div(30).requires_grad_()
        out, (h, c) = layer(packed, (h0, c0))
        (out.data.sum() + h.sum() + c.sum()).backward()
        return out, h, c, h0.grad, c0.grad, [p.grad for p in layer.parameters()]

    both(run, rtol=1e-4, atol=1e-5)


CASES = {
    "pad_sequence": lambda m: _rnn(m).pad_sequence(
        [m.arange(3.0), m.arange(5.0).requires_grad_(), m.ones(1)], padding_value=-1
    ),
    "pad_sequence_left_batch_first": lambda m: _rnn(m).pad_sequence(
        [m.arange(6.0).view(3, 2).requires_grad_(), m.ones(1, 2)],
        batch_first=True,
        padding_side="left",
    ),
    "pad_sequence_of_a_tensor": lambda m: _rnn(m).pad_sequence(m.arange(6.0).view(2, 3)),
    "pad_sequence_generator": lambda m: _rnn(m).pad_sequence(x for x in [m.ones(2), m.ones(3)]),
    "pad_sequence_first_dtype": lambda m: _rnn(m).pad_sequence([m.arange(3), m.ones(2)]),
    "pad_sequence_trailing_mismatch": lambda m: _rnn(m).pad_sequence([m.ones(2, 3), m.ones(2, 4)]),
    "pad_sequence_bad_side": lambda m: _rnn(m).pad_sequence([m.ones(2)], padding_side="up"),
    "pad_sequence_0d": lambda m: _rnn(m).pad_sequence([m.tensor(1.0)]),
    "pad_sequence_empty": lambda m: _rnn(m).pad_sequence([]),
    "pad_sequence_not_iterable": lambda m: _rnn(m).pad_sequence(5),
    "pack_sequence": lambda m: _rnn(m).pack_sequence(
        [m.arange(3.0), m.arange(4.0).requires_grad_(), m.ones(1)], enforce_sorted=False
    ),
    "pack_sequence_unsorted": lambda m: _rnn(m).pack_sequence([m.arange(3.0), m.arange(4.0)]),
    "unpack_sequence": lambda m: _rnn(m).unpack_sequence(
        _rnn(m).pack_sequence([m.arange(3.0), m.arange(4.0), m.ones(1)], enforce_sorted=False)
    ),
    "unpad_sequence_transposes_in_place": lambda m: (
        lambda x: (_rnn(m).unpad_sequence(x, m.tensor([3, 1])), x.shape, x._version)
    )(m.arange(6.0).view(3, 2)),
    "unpad_sequence_batch_first": lambda m: _rnn(m).unpad_sequence(
        m.arange(6.0).view(2, 3), m.tensor([3, 1]), batch_first=True
    ),
    "invert_permutation": lambda m: (
        _rnn(m).invert_permutation(m.tensor([2, 0, 3, 1])),
        _rnn(m).invert_permutation(None),
    ),
    "lengths_tensor": lambda m: _rnn(m).pack_padded_sequence(m.ones(3, 2), m.tensor([3, 2])),
    "lengths_float_tensor": lambda m: _rnn(m).pack_padded_sequence(
        m.ones(3, 2), m.tensor([3.0, 2.0])
    ),
    "lengths_2d": lambda m: _rnn(m).pack_padded_sequence(m.ones(3, 2), m.tensor([[3, 2]])),
    "lengths_zero_unsorted": lambda m: _rnn(m).pack_padded_sequence(
        m.ones(3, 2), [0, 2], enforce_sorted=False
    ),
    "lengths_too_many": lambda m: _rnn(m).pack_padded_sequence(m.ones(3, 2), [3, 2, 1]),
    "pack_empty": lambda m: _rnn(m).pack_padded_sequence(m.ones(0, 2), [1, 1]),
    "pack_1d": lambda m: _rnn(m).pack_padded_sequence(m.ones(3), [1, 1, 1]),
    "pack_batch_first": lambda m: _rnn(m).pack_padded_sequence(
        m.arange(12.0).view(3, 4).requires_grad_(), [4, 2, 1], batch_first=True
    ),
    "pack_under_no_grad": lambda m: (
        lambda ctx: (
            ctx.__enter__(),
            _rnn(m).pack_sequence([m.ones(2, requires_grad=True), m.ones(1)]),
            ctx.__exit__(None, None, None),
        )
    )(m.no_grad()),
    "total_length_too_short": lambda m: _rnn(m).pad_packed_sequence(
        _rnn(m).pack_sequence([m.ones(3), m.ones(2)]), total_length=2
    ),
    "pad_packed_batch_first": lambda m: _rnn(m).pad_packed_sequence(
        _rnn(m).pack_sequence([m.ones(3, 2).requires_grad_(), m.ones(2, 2)]),
        batch_first=True,
        padding_value=7,
    ),
    "pad_packed_int": lambda m: _rnn(m).pad_packed_sequence(
        _rnn(m).pack_sequence([m.arange(3), m.arange(2)])
    ),
    "to_and_casts": lambda m: (
        lambda p: (p.to(m.float32) is p, p.double(), p.cpu() is p, p.is_cuda, p.float() is p)
    )(_rnn(m).pack_sequence([m.ones(3), m.ones(2)])),
    "constructor_without_sizes": lambda m: _rnn(m).PackedSequence(m.ones(3)),
    "constructor_from_pair": lambda m: _rnn(m).PackedSequence((m.ones(3), m.tensor([2, 1]))),
    "second_backward_frees_batch_sizes": lambda m: (
        lambda p: (p.data.sum().backward(), p.data.sum().backward())
    )(_rnn(m).pack_sequence([m.ones(2, requires_grad=True), m.ones(1)])),
    "rnn_wrong_hidden_batch": lambda m: (m.manual_seed(0), m.nn.GRU(2, 4))[1](
        _rnn(m).pack_sequence([m.ones(3, 2), m.ones(2, 2)]), m.zeros(1, 3, 4)
    ),
    "rnn_wrong_input_size": lambda m: (m.manual_seed(0), m.nn.GRU(2, 4))[1](
        _rnn(m).pack_sequence([m.ones(3, 3), m.ones(2, 3)])
    ),
}


@pytest.mark.every_case
@pytest.mark.parametrize("name", list(CASES))
def test_packed_sequence_api(name):
    both(CASES[name])


def test_reprs_and_types():
    t = torch.nn.utils.rnn.pack_sequence([torch.ones(2), torch.ones(1)], enforce_sorted=False)
    g = lg.nn.utils.rnn.pack_sequence([lg.ones(2), lg.ones(1)], enforce_sorted=False)
    assert repr(g) == repr(t)
    assert isinstance(g, tuple) and g._fields == t._fields
    assert type(g).__name__ == "PackedSequence"
    assert repr(lg.set_grad_enabled(True)) == repr(torch.set_grad_enabled(True)).replace(
        "torch.", "leafgrad."
    )


def test_padded_round_trip_gradient_is_a_mask():
    """Packing then padding keeps the valid steps: the gradient is 1 on them, 0 on padding."""
    x = lg.ones(4, 3, 2, requires_grad=True)
    packed = lg.nn.utils.rnn.pack_padded_sequence(x, [4, 2, 1])
    padded, lengths = lg.nn.utils.rnn.pad_packed_sequence(packed)
    padded.sum().backward()
    mask = (np.arange(4)[:, None] < np.array([4, 2, 1])[None, :]).astype(np.float32)
    np.testing.assert_array_equal(np.asarray(x.grad._data), np.repeat(mask[..., None], 2, -1))
    same(torch.tensor([4, 2, 1]), lengths)


def test_lengths_longer_than_the_input_raise():
    """PyTorch reads past the input for a length above its steps; leafgrad refuses."""
    with pytest.raises(RuntimeError, match="larger than the number of time steps"):
        lg.nn.utils.rnn.pack_padded_sequence(lg.ones(3, 2), [4, 2])
