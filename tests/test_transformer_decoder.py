"""nn.TransformerDecoderLayer, nn.TransformerDecoder and nn.Transformer against PyTorch: the same
seed gives the same weights (construction order, Xavier initialisation), outputs, gradients,
masks, reprs, warnings and errors."""

from __future__ import annotations

import pytest
import torch
from conftest import both, lg, same_tensor
from test_nn_layers_b import _compare_grads, _compare_module_params


def _decoder(m, layer_kwargs, masks=False, train=True, dropout=0.0, num_layers=2):
    m.manual_seed(0)
    layer = m.nn.TransformerDecoderLayer(8, 2, dim_feedforward=16, dropout=dropout, **layer_kwargs)
    model = m.nn.TransformerDecoder(layer, num_layers, norm=m.nn.LayerNorm(8))
    if not train:
        model.eval()
    batch_first = layer_kwargs.get("batch_first", False)
    shape_t, shape_m = ((2, 4, 8), (2, 6, 8)) if batch_first else ((4, 2, 8), (6, 2, 8))
    tgt = m.randn(*shape_t, requires_grad=True)
    memory = m.randn(*shape_m, requires_grad=True)
    kw = {}
    if masks:
        kw["tgt_mask"] = m.nn.Transformer.generate_square_subsequent_mask(4)
        kw["tgt_key_padding_mask"] = m.tensor([[False] * 4, [False, False, False, True]])
        kw["memory_key_padding_mask"] = m.tensor([[False] * 6, [False] * 4 + [True] * 2])
    out = model(tgt, memory, **kw)
    if train:
        (out * out).sum().backward()
    return model, out, tgt.grad, memory.grad


DECODERS = [
    ({}, False),
    ({"batch_first": True}, True),
    ({"norm_first": True, "activation": "gelu"}, True),
    ({"bias": False, "batch_first": True}, False),
]


@pytest.mark.parametrize(("layer_kwargs", "masks"), DECODERS)
def test_decoder_matches_torch(layer_kwargs, masks):
    t = _decoder(torch, layer_kwargs, masks)
    g = _decoder(lg, layer_kwargs, masks)
    assert repr(g[0]) == repr(t[0])
    assert list(g[0].state_dict()) == list(t[0].state_dict())
    _compare_module_params(t[0], g[0])
    for a, b in zip(t[1:], g[1:]):
        same_tensor(a, b, autograd=False, rtol=1e-4, atol=1e-5)
    _compare_grads(t[0], g[0], rtol=1e-4, atol=1e-4)


def test_decoder_with_dropout_follows_the_generator():
    t = _decoder(torch, {}, dropout=0.25)
    g = _decoder(lg, {}, dropout=0.25)
    for a, b in zip(t[1:], g[1:]):
        same_tensor(a, b, autograd=False, rtol=1e-4, atol=1e-5)
    _compare_grads(t[0], g[0], rtol=1e-4, atol=1e-4)


def test_decoder_eval_no_grad():
    def f(m):
        model = _decoder(m, {"batch_first": True}, train=False)[0]
        with m.no_grad():
            return model(m.randn(2, 3, 8), m.randn(2, 5, 8))

    both(f, rtol=1e-4, atol=1e-5)


def _transformer(m, kwargs, masks=False):
    m.manual_seed(0)
    model = m.nn.Transformer(
        d_model=8,
        nhead=2,
        num_encoder_layers=2,
        num_decoder_layers=1,
        dim_feedforward=16,
        dropout=0.0,
        **kwargs,
    )
    batch_first = kwargs.get("batch_first", False)
    src = m.randn(*((2, 5, 8) if batch_first else (5, 2, 8)), requires_grad=True)
    tgt = m.randn(*((2, 3, 8) if batch_first else (3, 2, 8)), requires_grad=True)
    kw = {}
    if masks:
        kw["tgt_mask"] = model.generate_square_subsequent_mask(3)
        kw["src_key_padding_mask"] = m.tensor([[False] * 5, [False] * 3 + [True] * 2])
        kw["memory_key_padding_mask"] = kw["src_key_padding_mask"]
    out = model(src, tgt, **kw)
    out.pow(2).mean().backward()
    return model, out, src.grad, tgt.grad


@pytest.mark.parametrize(
    ("kwargs", "masks"),
    [
        ({}, False),
        ({"batch_first": True}, True),
        ({"norm_first": True, "activation": "gelu"}, True),
    ],
)
def test_transformer_matches_torch(kwargs, masks):
    # PyTorch warns that its encoder cannot pack nested tensors: the same warning here
    t, g = both(lambda m: repr(_transformer(m, kwargs, masks)[0]))
    t = _transformer(torch, kwargs, masks)
    g = _transformer(lg, kwargs, masks)
    _compare_module_params(t[0], g[0])
    for a, b in zip(t[1:], g[1:]):
        same_tensor(a, b, autograd=False, rtol=1e-4, atol=1e-5)
    _compare_grads(t[0], g[0], rtol=1e-4, atol=1e-4)


def test_generate_square_subsequent_mask():
    both(
        lambda m: (
            m.nn.Transformer.generate_square_subsequent_mask(4),
            m.nn.Transformer.generate_square_subsequent_mask(3, dtype=m.float64),
        )
    )


@pytest.mark.parametrize(
    "call",
    [
        lambda m, model: model(m.randn(5, 2, 8), m.randn(3, 3, 8)),  # batch sizes differ
        lambda m, model: model(m.randn(5, 2, 8), m.randn(3, 2, 6)),  # feature size
        lambda m, model: m.nn.TransformerDecoderLayer(8, 2, activation="tanh"),
    ],
)
def test_errors(call):
    def f(m):
        m.manual_seed(0)
        model = m.nn.Transformer(8, 2, 1, 1, 16)
        call(m, model)

    both(f)


def test_custom_encoder_and_decoder_are_used_as_given():
    def f(m):
        m.manual_seed(0)
        enc = m.nn.TransformerEncoder(
            m.nn.TransformerEncoderLayer(8, 2, 16, 0.0), 1, enable_nested_tensor=False
        )
        dec = m.nn.TransformerDecoder(m.nn.TransformerDecoderLayer(8, 2, 16, 0.0), 1)
        model = m.nn.Transformer(8, 2, custom_encoder=enc, custom_decoder=dec, dropout=0.0)
        assert model.encoder is enc and model.decoder is dec
        return model(m.randn(4, 1, 8), m.randn(2, 1, 8))

    both(f, rtol=1e-4, atol=1e-5)
