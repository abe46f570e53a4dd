"""torch.nn.grad (``F.grad``) against PyTorch: conv{1,2,3}d_input and conv{1,2,3}d_weight values,
their ConvolutionBackwardBackward0 node and its edges, and gradients through them."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import both

RNG = np.random.default_rng(5)
CONFIGS = [
    {},
    {"stride": 2},
    {"padding": 1},
    {"dilation": 2},
    {"groups": 2},
    {"stride": 2, "padding": 1, "dilation": 1, "groups": 2},
]


def _data(dims, cfg):
    groups = cfg.get("groups", 1)
    x = RNG.standard_normal((2, 4) + (7,) * dims)
    w = RNG.standard_normal((4, 4 // groups) + (3,) * dims)
    return x, w


@pytest.mark.parametrize("dims", [1, 2, 3])
@pytest.mark.parametrize("k", range(len(CONFIGS)))
@pytest.mark.parametrize("needs", ["weight", "grad_output", "none"])
def test_conv_gradients(dims, k, needs):
    cfg = CONFIGS[k]
    x_data, w_data = _data(dims, cfg)

    def f(m):
        conv = getattr(m.nn.functional, f"conv{dims}d")
        x = m.tensor(x_data, requires_grad=needs != "none")
        w = m.tensor(w_data, requires_grad=needs == "weight")
        out_shape = conv(x.detach(), w.detach(), None, **cfg).shape
        go = m.tensor(np.linspace(-1, 1, int(np.prod(out_shape))).reshape(out_shape))
        go.requires_grad_(needs == "grad_output")
        gx = getattr(m.nn.grad, f"conv{dims}d_input")(x.shape, w, go, **cfg)
        gw = getattr(m.nn.functional.grad, f"conv{dims}d_weight")(x, w.shape, go, **cfg)
        edges = []
        for r in (gx, gw):
            fn = r.grad_fn
            edges.append(
                None
                if fn is None
                else (
                    type(fn).__name__,
                    [type(e).__name__ if e else None for e, _ in fn.next_functions],
                )
            )
        grads = None
        if needs != "none":
            leaves = [t for t in (x, w, go) if t.requires_grad]
            grads = m.autograd.grad((gx * gx).sum() + (gw * gw).sum(), leaves, allow_unused=True)
        return gx, gw, edges, grads

    both(f)
