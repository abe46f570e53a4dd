"""Activation, loss, recurrent, attention and transformer modules against torch.nn.

After the same ``manual_seed`` both libraries must build the same parameters (exactly), print the
same reprs, and compute the same outputs and gradients (to float32 rounding; recurrent layers run
as fused kernels in PyTorch, so their graphs are compared by values and gradients only).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from conftest import both, host, lg, same_tensor

ACTIVATIONS = [
    ("ReLU", (), {}),
    ("ReLU", (True,), {}),
    ("ReLU6", (), {"inplace": True}),
    ("LeakyReLU", (0.2,), {}),
    ("LeakyReLU", (), {"inplace": True}),
    ("ELU", (0.5,), {}),
    ("ELU", (), {"inplace": True}),
    ("SELU", (), {}),
    ("CELU", (1.5,), {}),
    ("GELU", (), {}),
    ("GELU", ("tanh",), {}),
    ("SiLU", (), {}),
    ("Mish", (), {}),
    ("Softplus", (2.0, 5.0), {}),
    ("Softsign", (), {}),
    ("Hardtanh", (-0.5, 0.7), {}),
    ("Hardtanh", (), {"inplace": True}),
    ("Hardsigmoid", (), {}),
    ("Hardsigmoid", (True,), {}),
    ("Hardswish", (), {}),
    ("Sigmoid", (), {}),
    ("Tanh", (), {}),
    ("Tanhshrink", (), {}),
    ("Softmax", (1,), {}),
    ("LogSoftmax", (-1,), {}),
    ("Softmin", (0,), {}),
    ("Softmax2d", (), {}),
]


@pytest.mark.parametrize(("name", "args", "kwargs"), ACTIVATIONS)
def test_activation_module_matches_torch(name, args, kwargs):
    def fn(m):
        mod = getattr(m.nn, name)(*args, **kwargs)
        m.manual_seed(0)
        x = m.randn(2, 3, 4, requires_grad=True)
        y = mod(x * 1.0)  # a non-leaf, so inplace=True is allowed
        (y * m.arange(24.0).reshape(2, 3, 4)).sum().backward()
        return repr(mod), y, x.grad

    both(fn, rtol=1e-5, atol=1e-5)


def test_softmax_without_dim_warns_as_torch():
    both(lambda m: m.nn.Softmax()(m.ones(2, 3)))
    both(lambda m: m.nn.Softmax2d()(m.ones(2, 3)))


def test_activation_argument_errors():
    both(lambda m: m.nn.Hardtanh(1.0, 0.5))
    both(lambda m: m.nn.GELU("cubic")(m.ones(2)))
    both(lambda m: m.nn.CELU(0.0)(m.ones(2)))


# --- losses ------------------------------------------------------------------------------------


def _pair(m, shape=(3, 4)):
    m.manual_seed(1)
    return m.randn(*shape, requires_grad=True), m.randn(*shape)


def _loss(m, name, make, *args, **kwargs):
    mod = getattr(m.nn, name)(*args, **kwargs)
    inputs = make(m)
    out = mod(*inputs)
    out.sum().backward()
    grads = [t.grad for t in inputs if t.requires_grad]
    return repr(mod), out, grads, list(mod.state_dict())


def _probs(m):
    m.manual_seed(2)
    return m.rand(3, 4, requires_grad=True), m.rand(3, 4).round()


def _logits_targets(m):
    m.manual_seed(3)
    return m.randn(5, 4, requires_grad=True), m.tensor([0, 3, 1, 1, 2])


def _embeddings(m):
    m.manual_seed(4)
    return m.randn(3, 5, requires_grad=True), m.randn(3, 5), m.tensor([1.0, -1.0, 1.0])


def _ranking(m):
    m.manual_seed(5)
    return m.randn(4, requires_grad=True), m.randn(4), m.tensor([1.0, -1.0, -1.0, 1.0])


LOSSES = [
    ("MSELoss", _pair, (), {}),
    ("MSELoss", _pair, (), {"reduction": "sum"}),
    ("L1Loss", _pair, (), {"reduction": "none"}),
    ("SmoothL1Loss", _pair, (), {"beta": 0.5}),
    ("HuberLoss", _pair, (), {"delta": 0.3}),
    ("BCELoss", _probs, (), {}),
    ("BCELoss", _probs, (lg.tensor([1.0, 2.0, 0.5, 1.0]),), {}),
    ("BCEWithLogitsLoss", _pair, (), {}),
    ("CrossEntropyLoss", _logits_targets, (), {}),
    ("CrossEntropyLoss", _logits_targets, (), {"label_smoothing": 0.1, "ignore_index": 1}),
    ("NLLLoss", _logits_targets, (), {"reduction": "sum"}),
    ("KLDivLoss", _pair, (), {"reduction": "batchmean", "log_target": True}),
    ("CosineEmbeddingLoss", _embeddings, (), {"margin": 0.2}),
    ("MarginRankingLoss", _ranking, (), {"margin": 0.1}),
]


@pytest.mark.parametrize(("name", "make", "args", "kwargs"), LOSSES)
def test_loss_module_matches_torch(name, make, args, kwargs):
    def fn(m):
        margs = tuple(m.tensor(host(a).tolist()) if isinstance(a, lg.Tensor) else a for a in args)
        return _loss(m, name, make, *margs, **kwargs)

    both(fn)


def test_weighted_losses_keep_weight_buffers():
    def fn(m):
        w = m.tensor([1.0, 2.0, 0.5, 3.0])
        ce = m.nn.CrossEntropyLoss(weight=w)
        bce = m.nn.BCEWithLogitsLoss(pos_weight=m.tensor([2.0, 1.0, 1.0, 0.5]))
        x, t = _logits_targets(m)
        a, b = _pair(m, (5, 4))
        return ce(x, t), bce(a, b.sigmoid()), list(ce.state_dict()), list(bce.state_dict())

    both(fn)


@pytest.mark.parametrize(
    ("size_average", "reduce"), [(False, None), (None, False), (True, True), (False, True)]
)
def test_legacy_reduction_args_warn_and_map(size_average, reduce):
    def fn(m):
        mod = m.nn.MSELoss(size_average=size_average, reduce=reduce)
        return mod.reduction, mod(*_pair(m))

    both(fn)


def test_loss_errors_are_torch_errors():
    both(lambda m: m.nn.MSELoss(reduction="avg")(*_pair(m)))
    both(lambda m: m.nn.HuberLoss(delta="1"))
    both(lambda m: m.nn.MSELoss()(m.ones(3, 1), m.ones(3)))


# --- recurrent layers --------------------------------------------------------------------------


def _params(mod):
    return [(n, p) for n, p in mod.named_parameters()]


def _compare_module_params(t_mod, g_mod):
    tp, gp = _params(t_mod), _params(g_mod)
    assert [n for n, _ in gp] == [n for n, _ in tp]
    for (_, a), (_, b) in zip(tp, gp):
        same_tensor(a, b, exact=True)


def _compare_grads(t_mod, g_mod, rtol=1e-5, atol=1e-6):
    for (n, a), (_, b) in zip(_params(t_mod), _params(g_mod)):
        np.testing.assert_allclose(host(b.grad), host(a.grad), rtol=rtol, atol=atol, err_msg=n)


def _close(t, g, rtol=1e-5, atol=1e-6):
    same_tensor(t, g, autograd=False, rtol=rtol, atol=atol)


RNNS = [
    ("RNN", {}),
    ("RNN", {"nonlinearity": "relu", "num_layers": 2}),
    ("RNN", {"bidirectional": True, "bias": False}),
    ("LSTM", {}),
    ("LSTM", {"num_layers": 2, "bidirectional": True, "batch_first": True}),
    ("LSTM", {"proj_size": 3, "num_layers": 2}),
    ("GRU", {}),
    ("GRU", {"num_layers": 3, "bidirectional": True}),
    ("GRU", {"batch_first": True, "bias": False}),
]


def _run_rnn(m, name, kwargs, with_state=False, unbatched=False, dropout=0.0):
    m.manual_seed(0)
    mod = getattr(m.nn, name)(4, 5, dropout=dropout, **kwargs)
    shape = (3, 4) if unbatched else (2, 3, 4)
    x = m.randn(*shape, requires_grad=True)
    hx = None
    if with_state:
        d = (2 if kwargs.get("bidirectional") else 1) * kwargs.get("num_layers", 1)
        batch = () if unbatched else (2 if kwargs.get("batch_first") else 3,)
        hsize = kwargs.get("proj_size") or 5
        h = m.randn(d, *batch, hsize, requires_grad=True)
        hx = (h, m.randn(d, *batch, 5, requires_grad=True)) if name == "LSTM" else h
    out, h = mod(x, hx)
    hs = h if isinstance(h, tuple) else (h,)
    loss = (out * out).sum() + sum((t * t.cos()).sum() for t in hs)
    loss.backward()
    states = () if hx is None else (hx if isinstance(hx, tuple) else (hx,))
    return mod, out, hs, x.grad, [s.grad for s in states]


@pytest.mark.parametrize(("name", "kwargs"), RNNS)
@pytest.mark.parametrize("with_state", [False, True])
def test_rnn_matches_torch(name, kwargs, with_state):
    t = _run_rnn(torch, name, kwargs, with_state)
    g = _run_rnn(lg, name, kwargs, with_state)
    assert repr(g[0]) == repr(t[0])
    assert list(g[0].state_dict()) == list(t[0].state_dict())
    with torch.no_grad(), lg.no_grad():
        _compare_module_params(t[0], g[0])
    _close(t[1], g[1])
    for a, b in zip(t[2], g[2]):
        _close(a, b)
    _close(t[3], g[3])
    for a, b in zip(t[4], g[4]):
        _close(a, b)
    _compare_grads(t[0], g[0])


@pytest.mark.parametrize("name", ["RNN", "LSTM", "GRU"])
def test_rnn_unbatched_input(name):
    for with_state in (False, True):
        t = _run_rnn(torch, name, {}, with_state, unbatched=True)
        g = _run_rnn(lg, name, {}, with_state, unbatched=True)
        _close(t[1], g[1])
        for a, b in zip(t[2], g[2]):
            _close(a, b)
        _close(t[3], g[3])


def test_rnn_dropout_between_layers_uses_torch_stream():
    t = _run_rnn(torch, "LSTM", {"num_layers": 3}, dropout=0.5)
    g = _run_rnn(lg, "LSTM", {"num_layers": 3}, dropout=0.5)
    _close(t[1], g[1])
    _compare_grads(t[0], g[0])


def test_rnn_constructor_warnings_and_errors():
    both(lambda m: repr(m.nn.GRU(3, 4, dropout=0.2)))
    both(lambda m: m.nn.LSTM(3, 4, dropout=1.5))
    both(lambda m: m.nn.RNN(3, 4, nonlinearity="sigmoid"))
    both(lambda m: m.nn.GRU(3, 4, proj_size=2))
    both(lambda m: m.nn.LSTM(3, 4, proj_size=4))
    both(lambda m: m.nn.LSTM(0, 4))
    both(lambda m: m.nn.RNN(3, 4, bias=1))


def test_rnn_forward_errors():
    both(lambda m: m.nn.RNN(3, 4)(m.ones(2, 3, 5)))
    both(lambda m: m.nn.GRU(3, 4)(m.ones(2, 3, 3), m.ones(1, 2, 4)))
    both(lambda m: m.nn.LSTM(3, 4)(m.ones(2, 3, 3), (m.ones(1, 3, 4), m.ones(1, 3, 5))))
    both(lambda m: m.nn.LSTM(3, 4)(m.ones(2, 3, 3), (m.ones(3, 4), m.ones(3, 4))))
    both(lambda m: m.nn.RNN(3, 4)(m.ones(2, 2, 3, 3)))
    both(lambda m: m.nn.GRU(3, 4)(m.ones(2, 3, 3, dtype=m.float64)))


CELLS = [("RNNCell", {}), ("RNNCell", {"nonlinearity": "relu"}), ("LSTMCell", {}), ("GRUCell", {})]


@pytest.mark.parametrize(("name", "kwargs"), CELLS)
@pytest.mark.parametrize("batched", [True, False])
def test_cells_match_torch(name, kwargs, batched):
    def run(m):
        m.manual_seed(0)
        cell = getattr(m.nn, name)(4, 3, **kwargs)
        x = m.randn(*((2, 4) if batched else (4,)), requires_grad=True)
        hshape = (2, 3) if batched else (3,)
        h = m.randn(*hshape, requires_grad=True)
        hx = (h, m.randn(*hshape)) if name == "LSTMCell" else h
        out = cell(x, hx)
        outs = out if isinstance(out, tuple) else (out,)
        sum((o * o).sum() for o in outs).backward()
        return cell, outs, x.grad, h.grad

    t, g = run(torch), run(lg)
    assert repr(g[0]) == repr(t[0])
    with torch.no_grad(), lg.no_grad():
        _compare_module_params(t[0], g[0])
    for a, b in zip(t[1], g[1]):
        _close(a, b)
    _close(t[2], g[2])
    _close(t[3], g[3])
    _compare_grads(t[0], g[0])


def test_cell_errors():
    both(lambda m: m.nn.RNNCell(4, 3)(m.ones(2, 5)))
    both(lambda m: m.nn.GRUCell(4, 3)(m.ones(2, 4), m.ones(3, 3)))
    both(lambda m: m.nn.LSTMCell(4, 3)(m.ones(2, 4), (m.ones(2, 3), m.ones(2, 4))))
    both(lambda m: m.nn.RNNCell(4, 3)(m.ones(1, 2, 4)))
    both(lambda m: m.nn.RNNCell(4, 3, nonlinearity="gelu")(m.ones(2, 4)))


# --- multi-head attention ----------------------------------------------------------------------


def _run_mha(m, mha_kwargs, call_kwargs, self_attention=True, train=True, shape=(4, 2, 8)):
    m.manual_seed(0)
    mha = m.nn.MultiheadAttention(8, 2, **mha_kwargs)
    if not train:
        mha.eval()
    q = m.randn(*shape, requires_grad=True)
    kdim, vdim = mha_kwargs.get("kdim", 8), mha_kwargs.get("vdim", 8)
    if self_attention:
        k = v = q
    else:
        k = m.randn(*shape[:-2], 5, shape[-1], requires_grad=True) if len(shape) == 3 else None
        src = (5, 2) if len(shape) == 3 else (5,)
        if mha_kwargs.get("batch_first"):
            src = src[::-1]
        k = m.randn(*src, kdim, requires_grad=True)
        v = m.randn(*src, vdim, requires_grad=True)
    kw = {}
    for name, make in call_kwargs.items():
        kw[name] = make(m)
    out, w = mha(q, k, v, **kw)
    loss = (out * out).sum() + (0 if w is None else (w * w).sum())
    loss.backward()
    return mha, out, w, q.grad


MHA_CASES = [
    ({}, {}, True),
    ({"batch_first": True}, {}, True),
    ({"bias": False}, {"average_attn_weights": lambda m: False}, True),
    ({"kdim": 6, "vdim": 3}, {}, False),
    ({}, {}, False),
    ({"add_bias_kv": True, "add_zero_attn": True}, {}, True),
    ({}, {"need_weights": lambda m: False}, True),
    (
        {"batch_first": True},
        {"key_padding_mask": lambda m: m.tensor([[False] * 4, [False, False, True, True]])},
        True,
        (2, 4, 8),
    ),
    ({}, {"attn_mask": lambda m: m.ones(4, 4, dtype=m.bool).triu(1)}, True),
    (
        {},
        {
            "attn_mask": lambda m: m.ones(4, 4).triu(1) * -1e9,
            "need_weights": lambda m: False,
            "key_padding_mask": lambda m: m.tensor([[0.0] * 4, [0.0, 0.0, -1e9, -1e9]]),
        },
        True,
    ),
    ({"dropout": 0.3}, {}, True),
    ({"dropout": 0.3}, {"need_weights": lambda m: False}, True),
]


@pytest.mark.parametrize("case", MHA_CASES)
def test_multihead_attention_matches_torch(case):
    mha_kwargs, call_kwargs, self_attention, *shape = case
    shape = shape[0] if shape else (4, 2, 8)
    t = _run_mha(torch, mha_kwargs, call_kwargs, self_attention, shape=shape)
    g = _run_mha(lg, mha_kwargs, call_kwargs, self_attention, shape=shape)
    assert repr(g[0]) == repr(t[0])
    assert list(g[0].state_dict()) == list(t[0].state_dict())
    with torch.no_grad(), lg.no_grad():
        _compare_module_params(t[0], g[0])
    _close(t[1], g[1])
    assert (t[2] is None) == (g[2] is None)
    if t[2] is not None:
        _close(t[2], g[2])
    _close(t[3], g[3], rtol=1e-4, atol=1e-5)
    _compare_grads(t[0], g[0], rtol=1e-4, atol=1e-5)


def test_multihead_attention_unbatched_and_eval_fast_path():
    for train in (True, False):
        t = _run_mha(torch, {}, {}, True, train=train, shape=(4, 8))
        g = _run_mha(lg, {}, {}, True, train=train, shape=(4, 8))
        _close(t[1], g[1])
        _close(t[2], g[2])

    def fast(m):  # eval, batch_first, self-attention, no grad: PyTorch's fused fast path
        m.manual_seed(0)
        mha = m.nn.MultiheadAttention(8, 2, batch_first=True).eval()
        x = m.randn(2, 4, 8)
        with m.no_grad():
            return mha(x, x, x, key_padding_mask=m.tensor([[False] * 4, [False] * 3 + [True]]))

    both(fast, rtol=1e-5, atol=1e-6)


def test_multihead_attention_errors():
    both(lambda m: m.nn.MultiheadAttention(8, 3))
    both(lambda m: m.nn.MultiheadAttention(0, 2))
    mha = {}
    for m in (torch, lg):  # the same weights in both (the last call compares values)
        m.manual_seed(0)
        mha[m] = m.nn.MultiheadAttention(8, 2)
    both(lambda m: mha[m](m.ones(4, 2, 8), m.ones(4, 8), m.ones(4, 8)))
    both(
        lambda m: mha[m](m.ones(4, 2, 8), m.ones(5, 2, 8), m.ones(5, 2, 8), attn_mask=m.ones(4, 4))
    )
    both(
        lambda m: mha[m](
            m.ones(4, 2, 8), m.ones(4, 2, 8), m.ones(4, 2, 8), key_padding_mask=m.ones(2, 4).long()
        )
    )
    both(
        lambda m: mha[m](
            m.ones(4, 2, 8),
            m.ones(4, 2, 8),
            m.ones(4, 2, 8),
            key_padding_mask=m.zeros(2, 4, dtype=m.bool),
            attn_mask=m.zeros(4, 4),
        )
    )


# --- transformer -------------------------------------------------------------------------------


def _run_encoder(m, layer_kwargs, num_layers=2, train=True, kpm=False, dropout=0.0, **enc):
    m.manual_seed(0)
    layer = m.nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=dropout, **layer_kwargs)
    model = m.nn.TransformerEncoder(layer, num_layers, norm=m.nn.LayerNorm(8), **enc)
    if not train:
        model.eval()
    x = m.randn(2, 5, 8, requires_grad=True)
    mask = None
    if kpm:
        mask = m.tensor([[False] * 5, [False, False, False, True, True]])
    out = model(x, src_key_padding_mask=mask)
    if train:
        (out * out).sum().backward()
    return model, out, x.grad


ENCODERS = [
    ({}, False),
    ({"batch_first": True}, True),
    ({"norm_first": True, "activation": "gelu", "batch_first": True}, True),
    ({"activation": lg.nn.functional.gelu}, False),
]


@pytest.mark.parametrize(("layer_kwargs", "kpm"), ENCODERS)
def test_transformer_encoder_matches_torch(layer_kwargs, kpm):
    kw_t = dict(layer_kwargs)
    if kw_t.get("activation") is lg.nn.functional.gelu:
        kw_t["activation"] = torch.nn.functional.gelu
    t = both(lambda m: repr(_run_encoder(m, kw_t if m is torch else layer_kwargs)[0]))[0]
    assert "TransformerEncoder" in t
    t = _run_encoder(torch, kw_t, kpm=kpm)
    g = _run_encoder(lg, layer_kwargs, kpm=kpm)
    with torch.no_grad(), lg.no_grad():
        _compare_module_params(t[0], g[0])
    assert list(g[0].state_dict()) == list(t[0].state_dict())
    _close(t[1], g[1], rtol=1e-4, atol=1e-5)
    _close(t[2], g[2], rtol=1e-4, atol=1e-5)
    _compare_grads(t[0], g[0], rtol=1e-4, atol=1e-4)


def test_transformer_encoder_dropout_trajectory():
    t = _run_encoder(torch, {}, dropout=0.2)
    g = _run_encoder(lg, {}, dropout=0.2)
    _close(t[1], g[1], rtol=1e-4, atol=1e-5)
    _compare_grads(t[0], g[0], rtol=1e-4, atol=1e-4)


def test_transformer_encoder_eval_nested_fast_path_zeroes_padding():
    def fn(m):
        model, out, _ = _run_encoder(m, {"batch_first": True}, train=False, kpm=True)
        with m.no_grad():
            x = m.randn(2, 5, 8)
            return model(x, src_key_padding_mask=m.tensor([[False] * 5, [False] * 3 + [True] * 2]))

    both(fn, rtol=1e-4, atol=1e-5)


def test_transformer_errors():
    both(lambda m: m.nn.TransformerEncoderLayer(8, 2, activation="tanh"))
