"""Layers against PyTorch: initial weights after ``manual_seed``, forward, gradients, reprs, state.

Each case builds the same layer with both libraries after the same seed (Note [Layer init order]),
so parameters must agree bit for bit; forward values and gradients agree within float32
tolerance; ``repr`` and ``state_dict`` keys are compared as text.
"""

from __future__ import annotations

import pytest
from conftest import MODULES, both, call, lg, same

# (id, constructor, input shapes, forward kwargs); inputs come from randn after manual_seed(1).
LAYERS = [
    ("identity", lambda m: m.nn.Identity(3, unused=1), [(2, 3)], {}),
    ("linear", lambda m: m.nn.Linear(5, 3), [(4, 5)], {}),
    ("linear_nobias_3d", lambda m: m.nn.Linear(5, 3, bias=False), [(2, 4, 5)], {}),
    ("linear_f64", lambda m: m.nn.Linear(4, 2, dtype=m.float64), [], {}),
    ("bilinear", lambda m: m.nn.Bilinear(3, 4, 2), [(5, 3), (5, 4)], {}),
    ("conv1d", lambda m: m.nn.Conv1d(2, 4, 3), [(2, 2, 7)], {}),
    ("conv1d_unbatched", lambda m: m.nn.Conv1d(2, 4, 3, stride=2, dilation=2), [(2, 9)], {}),
    (
        "conv2d",
        lambda m: m.nn.Conv2d(2, 4, 3, stride=2, padding=1, bias=False),
        [(2, 2, 7, 6)],
        {},
    ),
    (
        "conv2d_same_groups",
        lambda m: m.nn.Conv2d(2, 4, (3, 2), padding="same", dilation=2, groups=2),
        [(2, 2, 7, 6)],
        {},
    ),
    ("conv2d_valid", lambda m: m.nn.Conv2d(3, 2, 2, padding="valid"), [(1, 3, 4, 4)], {}),
    (
        "conv2d_reflect",
        lambda m: m.nn.Conv2d(2, 4, 3, padding=2, padding_mode="reflect"),
        [(2, 2, 7, 6)],
        {},
    ),
    (
        "conv2d_replicate",
        lambda m: m.nn.Conv2d(2, 4, 3, padding=(1, 2), padding_mode="replicate"),
        [(2, 2, 7, 6)],
        {},
    ),
    (
        "conv1d_circular",
        lambda m: m.nn.Conv1d(2, 4, 3, padding=2, padding_mode="circular"),
        [(2, 2, 7)],
        {},
    ),
    (
        "conv2d_same_reflect",
        lambda m: m.nn.Conv2d(2, 3, 4, padding="same", padding_mode="reflect"),
        [(1, 2, 6, 6)],
        {},
    ),
    ("conv3d", lambda m: m.nn.Conv3d(2, 4, 2, padding=(0, 1, 0)), [(1, 2, 4, 4, 3)], {}),
    ("convT1d", lambda m: m.nn.ConvTranspose1d(2, 4, 3, stride=2), [(2, 2, 5)], {}),
    (
        "convT2d",
        lambda m: m.nn.ConvTranspose2d(2, 4, 3, stride=2, output_padding=1, groups=2),
        [(2, 2, 5, 4)],
        {},
    ),
    (
        "convT2d_output_size",
        lambda m: m.nn.ConvTranspose2d(2, 4, 3, stride=2, padding=1),
        [(2, 2, 5, 4)],
        {"output_size": [10, 8]},
    ),
    ("convT3d", lambda m: m.nn.ConvTranspose3d(2, 3, 2, stride=2), [(1, 2, 3, 2, 2)], {}),
    ("maxpool1d", lambda m: m.nn.MaxPool1d(3, stride=2, padding=1), [(2, 3, 9)], {}),
    ("maxpool2d", lambda m: m.nn.MaxPool2d(2), [(2, 3, 6, 6)], {}),
    (
        "maxpool2d_ceil_dilation",
        lambda m: m.nn.MaxPool2d((3, 2), stride=(2, 1), dilation=(1, 2), ceil_mode=True),
        [(1, 2, 7, 7)],
        {},
    ),
    ("avgpool1d", lambda m: m.nn.AvgPool1d(3, stride=2, padding=1), [(2, 3, 9)], {}),
    (
        "avgpool2d",
        lambda m: m.nn.AvgPool2d(3, stride=2, padding=1, count_include_pad=False),
        [(2, 3, 7, 7)],
        {},
    ),
    ("avgpool2d_divisor", lambda m: m.nn.AvgPool2d(2, divisor_override=3), [(1, 2, 4, 4)], {}),
    ("adaptiveavg1d", lambda m: m.nn.AdaptiveAvgPool1d(4), [(2, 3, 9)], {}),
    ("adaptiveavg2d", lambda m: m.nn.AdaptiveAvgPool2d((3, None)), [(2, 3, 7, 5)], {}),
    ("adaptiveavg2d_1", lambda m: m.nn.AdaptiveAvgPool2d(1), [(2, 3, 7, 5)], {}),
    ("adaptivemax2d", lambda m: m.nn.AdaptiveMaxPool2d((2, 3)), [(2, 3, 7, 5)], {}),
    ("batchnorm1d", lambda m: m.nn.BatchNorm1d(3), [(4, 3)], {}),
    ("batchnorm1d_3d", lambda m: m.nn.BatchNorm1d(3, affine=False), [(4, 3, 5)], {}),
    ("batchnorm2d", lambda m: m.nn.BatchNorm2d(3, momentum=None), [(2, 3, 4, 4)], {}),
    (
        "batchnorm3d_untracked",
        lambda m: m.nn.BatchNorm3d(2, track_running_stats=False, bias=False),
        [(2, 2, 3, 3, 3)],
        {},
    ),
    ("instancenorm1d", lambda m: m.nn.InstanceNorm1d(3, affine=True), [(2, 3, 6)], {}),
    ("instancenorm2d", lambda m: m.nn.InstanceNorm2d(3), [(2, 3, 4, 4)], {}),
    ("instancenorm2d_unbatched", lambda m: m.nn.InstanceNorm2d(3), [(3, 4, 4)], {}),
    ("instancenorm3d", lambda m: m.nn.InstanceNorm3d(2, eps=1e-3), [(1, 2, 3, 3, 3)], {}),
    ("layernorm", lambda m: m.nn.LayerNorm(5), [(2, 3, 5)], {}),
    ("layernorm_2d_nobias", lambda m: m.nn.LayerNorm([3, 5], bias=False), [(2, 3, 5)], {}),
    ("layernorm_noaffine", lambda m: m.nn.LayerNorm(5, elementwise_affine=False), [(4, 5)], {}),
    ("groupnorm", lambda m: m.nn.GroupNorm(2, 4), [(2, 4, 3, 3)], {}),
    ("groupnorm_noaffine", lambda m: m.nn.GroupNorm(1, 4, affine=False), [(2, 4, 5)], {}),
    ("dropout", lambda m: m.nn.Dropout(0.3), [(4, 6)], {}),
    ("dropout_p0", lambda m: m.nn.Dropout(0.0), [(4, 6)], {}),
    ("flatten", lambda m: m.nn.Flatten(), [(2, 3, 4)], {}),
    ("flatten_dims", lambda m: m.nn.Flatten(0, 1), [(2, 3, 4)], {}),
    ("unflatten", lambda m: m.nn.Unflatten(1, (2, 3)), [(4, 6)], {}),
    ("unflatten_neg", lambda m: m.nn.Unflatten(-1, [3, -1]), [(4, 6)], {}),
]


def _run_layer(m, ctor, shapes, kwargs, train=True):
    """Initial parameters, output, input and parameter gradients, repr and state_dict keys."""
    m.manual_seed(0)
    layer = ctor(m)
    layer.train(train)
    init = {k: v.detach().clone() for k, v in layer.named_parameters()}
    out = {"repr": repr(layer), "keys": list(layer.state_dict()), "init": init}
    if not shapes:
        return out
    m.manual_seed(1)
    xs = [m.randn(*s, requires_grad=True) for s in shapes]
    y = layer(*xs, **kwargs)
    # A random cotangent: the gradient of y.sum() through a normalisation is ~0.
    (y * m.randn(*y.shape)).sum().backward()
    out["y"] = y
    out["x_grads"] = [x.grad for x in xs]
    out["p_grads"] = {k: p.grad for k, p in layer.named_parameters()}
    out["buffers"] = {k: b.clone() for k, b in layer.named_buffers()}
    return out


def _compare(t, g):
    assert g["repr"] == t["repr"]
    assert g["keys"] == t["keys"]
    same(t["init"], g["init"], exact=True)
    if "y" in t:
        same(t["y"], g["y"], rtol=1e-5, atol=1e-5)
        same(t["x_grads"], g["x_grads"], rtol=1e-5, atol=1e-5)
        same(t["p_grads"], g["p_grads"], rtol=1e-5, atol=1e-5)
        same(t["buffers"], g["buffers"], rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("ctor,shapes,kwargs", [c[1:] for c in LAYERS], ids=[c[0] for c in LAYERS])
def test_layer_matches_torch_train_mode(ctor, shapes, kwargs):
    t, g = both(lambda m: _run_layer(m, ctor, shapes, kwargs), compare=False)
    _compare(t, g)


@pytest.mark.parametrize(
    "name", ["batchnorm1d", "batchnorm2d", "dropout", "instancenorm1d", "linear", "conv2d"]
)
def test_layer_matches_torch_eval_mode(name):
    (ctor, shapes, kwargs) = next(c[1:] for c in LAYERS if c[0] == name)
    t, g = both(lambda m: _run_layer(m, ctor, shapes, kwargs, train=False), compare=False)
    _compare(t, g)


def test_batchnorm_running_stats_over_steps_then_eval():
    def run(m):
        m.manual_seed(0)
        bn = m.nn.BatchNorm2d(3)
        seen = []
        for step in range(4):
            x = m.randn(4, 3, 2, 2) * (step + 1) + step
            bn(x)
            seen.append((bn.running_mean.clone(), bn.running_var.clone()))
        bn.eval()
        y = bn(m.randn(2, 3, 2, 2))
        return seen, bn.num_batches_tracked, y, bn.running_mean._version

    t, g = both(run, compare=False)
    same(t[:3], g[:3], rtol=1e-5, atol=1e-6)
    assert t[3] == g[3]


def test_batchnorm_cumulative_average_with_momentum_none():
    def run(m):
        m.manual_seed(0)
        bn = m.nn.BatchNorm1d(2, momentum=None)
        for _ in range(3):
            bn(m.randn(5, 2))
        return bn.running_mean, bn.running_var, bn.num_batches_tracked

    same(*both(run, compare=False), rtol=1e-6, atol=1e-6)


def test_batchnorm_untracked_uses_batch_stats_in_eval_and_reset():
    def run(m):
        m.manual_seed(0)
        bn = m.nn.BatchNorm1d(2, track_running_stats=False).eval()
        y = bn(m.randn(5, 2))
        tracked = m.nn.BatchNorm1d(2)
        tracked(m.randn(5, 2))
        tracked.reset_running_stats()
        state = tracked.state_dict()
        return y, state["running_mean"], state["running_var"], state["num_batches_tracked"]

    same(*both(run, compare=False), rtol=1e-6, atol=1e-6)


def test_batchnorm_load_state_dict_round_trip():
    def run(m):
        m.manual_seed(0)
        a = m.nn.BatchNorm1d(3)
        a(m.randn(4, 3))
        b = m.nn.BatchNorm1d(3)
        b.load_state_dict(a.state_dict())
        return b.running_mean, b.running_var, b.num_batches_tracked

    same(*both(run, compare=False))


def test_dropout_masks_follow_the_seed_and_inplace():
    def run(m):
        m.manual_seed(3)
        x = m.ones(3, 8)
        y = m.nn.Dropout(0.25)(x)
        z = m.ones(3, 8)
        m.nn.Dropout(0.5, inplace=True)(z)
        return y, z

    same(*both(run, compare=False))


def test_embedding_init_padding_idx_and_gradients():
    def run(m):
        m.manual_seed(0)
        emb = m.nn.Embedding(6, 3, padding_idx=-2)
        init = emb.weight.detach().clone()
        idx = m.tensor([[0, 4, 2], [4, 4, 1]])
        y = emb(idx)
        (y * m.arange(18.0).reshape(2, 3, 3)).sum().backward()
        return repr(emb), init, y, emb.weight.grad, list(emb.state_dict())

    t, g = both(run, compare=False)
    assert t[0] == g[0] and t[4] == g[4]
    same(t[1], g[1], exact=True)
    same(t[2:4], g[2:4])


def test_embedding_from_pretrained_and_repr():
    def run(m):
        w = m.arange(12.0).reshape(4, 3)
        frozen = m.nn.Embedding.from_pretrained(w)
        free = m.nn.Embedding.from_pretrained(w, freeze=False, padding_idx=1, max_norm=2.0)
        return (
            repr(frozen),
            repr(free),
            frozen.weight.requires_grad,
            free.weight.requires_grad,
            frozen(m.tensor([3, 0])),
            repr(m.nn.Embedding(3, 2, norm_type=1.0, scale_grad_by_freq=True, sparse=True)),
        )

    t, g = both(run, compare=False)
    assert t[:4] == g[:4] and t[5] == g[5]
    same(t[4], g[4])


REPRS = [
    lambda m: m.nn.Conv1d(16, 33, 3, stride=2),
    lambda m: m.nn.Conv2d(1, 2, (3, 5), stride=(2, 1), padding=(4, 2), dilation=(3, 1)),
    lambda m: m.nn.Conv2d(4, 4, 3, padding="same", groups=4, bias=False, padding_mode="circular"),
    lambda m: m.nn.Conv3d(1, 1, 3, padding="valid"),
    lambda m: m.nn.ConvTranspose2d(2, 4, 3, output_padding=(0, 1), stride=2, dilation=2),
    lambda m: m.nn.ConvTranspose3d(2, 2, (1, 2, 3)),
    lambda m: m.nn.MaxPool1d(2),
    lambda m: m.nn.MaxPool2d((3, 2), stride=1, return_indices=True),
    lambda m: m.nn.MaxPool3d(2, padding=1, ceil_mode=True),
    lambda m: m.nn.AvgPool1d(3),
    lambda m: m.nn.AvgPool2d((2, 3), padding=1),
    lambda m: m.nn.AvgPool3d(2, stride=1),
    lambda m: m.nn.AdaptiveAvgPool1d(3),
    lambda m: m.nn.AdaptiveAvgPool2d((None, 7)),
    lambda m: m.nn.AdaptiveAvgPool3d(2),
    lambda m: m.nn.AdaptiveMaxPool1d(3, return_indices=True),
    lambda m: m.nn.AdaptiveMaxPool2d(2),
    lambda m: m.nn.AdaptiveMaxPool3d((1, 2, 3)),
    lambda m: m.nn.LPPool1d(2, 3),
    lambda m: m.nn.LPPool2d(1.5, (2, 2), stride=1, ceil_mode=True),
    lambda m: m.nn.LPPool3d(3, 2),
    lambda m: m.nn.BatchNorm1d(4, eps=1e-3, momentum=None, affine=False),
    lambda m: m.nn.BatchNorm2d(4, track_running_stats=False, bias=False),
    lambda m: m.nn.InstanceNorm1d(3),
    lambda m: m.nn.InstanceNorm3d(3, affine=True, track_running_stats=True),
    lambda m: m.nn.LayerNorm((2, 3), eps=1e-6, elementwise_affine=False),
    lambda m: m.nn.GroupNorm(3, 6, affine=False),
    lambda m: m.nn.LocalResponseNorm(2),
    lambda m: m.nn.RMSNorm([4], eps=1e-6),
    lambda m: m.nn.Dropout(),
    lambda m: m.nn.Dropout1d(0.1),
    lambda m: m.nn.Dropout2d(p=0.2, inplace=True),
    lambda m: m.nn.Dropout3d(),
    lambda m: m.nn.AlphaDropout(0.2),
    lambda m: m.nn.FeatureAlphaDropout(),
    lambda m: m.nn.Flatten(2, 3),
    lambda m: m.nn.Unflatten(1, m.Size([2, 5])),
    lambda m: m.nn.Identity(),
    lambda m: m.nn.Bilinear(2, 3, 4, bias=False),
]


@pytest.mark.parametrize("ctor", REPRS)
def test_repr_state_dict_keys_and_init(ctor):
    def run(m):
        m.manual_seed(0)
        layer = ctor(m)
        params = {k: v.detach() for k, v in layer.named_parameters()}
        buffers = dict(layer.named_buffers())
        return repr(layer), str(layer), list(layer.state_dict()), params, buffers

    t, g = both(run, compare=False)
    assert t[:3] == g[:3]
    same(t[3:], g[3:], exact=True)


ERRORS = [
    lambda m: m.nn.Conv2d(3, 4, 3, groups=0),
    lambda m: m.nn.Conv2d(3, 4, 3, groups=2),
    lambda m: m.nn.Conv2d(4, 3, 3, groups=2),
    lambda m: m.nn.Conv2d(4, 4, 3, padding="full"),
    lambda m: m.nn.Conv2d(4, 4, 3, stride=2, padding="same"),
    lambda m: m.nn.ConvTranspose2d(4, 4, 3, padding_mode="reflect"),
    lambda m: m.nn.ConvTranspose2d(2, 2, 3, stride=2)(m.zeros(1, 2, 4, 4), output_size=[20, 20]),
    lambda m: m.nn.ConvTranspose1d(2, 2, 3)(m.zeros(1, 2, 4), output_size=[1, 2, 3, 4]),
    lambda m: m.nn.Conv2d(3, 4, 3)(m.zeros(1, 2, 5, 5)),
    lambda m: m.nn.Linear(3, 2)(m.zeros(4, 5)),
    lambda m: m.nn.Bilinear(0, 2, 3),
    lambda m: m.nn.GroupNorm(3, 4),
    lambda m: m.nn.BatchNorm2d(3)(m.zeros(2, 3, 4)),
    lambda m: m.nn.BatchNorm1d(3)(m.zeros(2)),
    lambda m: m.nn.BatchNorm3d(3)(m.zeros(1, 3, 2, 2)),
    lambda m: m.nn.BatchNorm1d(3)(m.zeros(1, 3)),
    lambda m: m.nn.InstanceNorm1d(3)(m.zeros(2, 3, 4, 5)),
    lambda m: m.nn.InstanceNorm2d(3, affine=True)(m.zeros(2, 4, 4, 4)),
    lambda m: m.nn.LayerNorm(4)(m.zeros(2, 5)),
    lambda m: m.nn.Embedding(4, 2, padding_idx=4),
    lambda m: m.nn.Embedding(4, 2, padding_idx=-5),
    lambda m: m.nn.Embedding(4, 2, _weight=m.zeros(3, 2)),
    lambda m: m.nn.Embedding.from_pretrained(m.zeros(3)),
    lambda m: m.nn.Embedding(4, 2)(m.tensor([1.0])),
    lambda m: m.nn.Dropout(1.5),
    lambda m: m.nn.Dropout2d(-0.1),
    lambda m: m.nn.Unflatten(1, 6),
    lambda m: m.nn.Unflatten(1, (2, 3.0)),
    lambda m: m.nn.Unflatten(1, (2, 3))(m.zeros(2, 5)),
    lambda m: m.nn.MaxPool2d(2)(m.zeros(2, 3)),
]


@pytest.mark.parametrize("fn", ERRORS)
def test_bad_arguments_raise_torch_errors(fn):
    t, _ = both(fn, compare=False)
    assert type(t).__name__ == "Raised"


def test_bad_padding_mode_lists_the_valid_modes():
    # PyTorch prints a set: its order follows string hashes, so compare the sets' contents.
    (t, _), (g, _) = (call(lambda m: m.nn.Conv1d(4, 4, 3, padding_mode="m"), m) for m in MODULES)
    assert t.type is g.type is ValueError
    assert sorted(t.text.replace("}", "{").split("{")[1].split(", ")) == sorted(
        g.text.replace("}", "{").split("{")[1].split(", ")
    )
    assert g.text.split("}")[1] == t.text.split("}")[1]


def test_instancenorm_num_features_mismatch_warns():
    def fn(m):
        m.manual_seed(0)  # the same input in both, whatever ran before
        return m.nn.InstanceNorm1d(4)(m.randn(2, 3, 5))

    both(fn, rtol=1e-5, atol=1e-5)


def test_layers_move_with_dtype_argument_and_double():
    def run(m):
        m.manual_seed(0)
        conv = m.nn.Conv1d(2, 3, 2, dtype=m.float64)
        bn = m.nn.BatchNorm1d(3).double()
        y = bn(conv(m.randn(2, 2, 5, dtype=m.float64)))
        return y, bn.running_mean, bn.num_batches_tracked

    same(*both(run, compare=False))


def test_missing_functionals_raise_not_implemented_on_call_only():
    # Layers whose nn.functional function leafgrad lacks can be built and printed (compared
    # above); calling them says which functional is missing.
    layer = lg.nn.LPPool2d(2, 2)
    if hasattr(lg.nn.functional, "lp_pool2d"):
        pytest.skip("lp_pool2d exists now")
    with pytest.raises(NotImplementedError, match="lp_pool2d"):
        layer(lg.zeros(1, 1, 4, 4))
