"""F.linear_cross_entropy and nn.LinearCrossEntropyLoss against PyTorch 2.13: the reference
path's values, nodes and gradients (class indices and probabilities, K-dimensional weights,
bias, class weights, ignore_index, label smoothing, reductions), the shape errors, the options
fallback warning, and the module's parameters and repr."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import both

import leafgrad as lg

RNG = np.random.default_rng(11)
X = RNG.standard_normal((5, 4))
W = RNG.standard_normal((3, 4))
W_K = RNG.standard_normal((3, 2, 4))
B = RNG.standard_normal(3)
B_K = RNG.standard_normal((3, 2))
T = np.array([0, 2, 1, 1, 0])
T_K = np.array([[0, 2], [1, 1], [2, 0], [1, 2], [0, 0]])
P = RNG.dirichlet(np.ones(3), 5)

CASES = [
    {},
    {"bias": True},
    {"reduction": "sum"},
    {"reduction": "none"},
    {"class_weight": True},
    {"ignore_index": 1},
    {"label_smoothing": 0.2},
    {"probabilities": True},
    {"probabilities": True, "label_smoothing": 0.1, "class_weight": True},
    {"k_dim": True},
    {"k_dim": True, "bias": True, "reduction": "none"},
    {"unbatched": True},
    {"probabilities": True, "ignore_index": 0},
    {"bad_bias": True},
    {"bad_features": True},
    {"bad_input": True},
    {"bad_weight": True},
    {"k_dim": True, "unbatched": True},
    {"options": True, "label_smoothing": 0.1},
]


@pytest.mark.parametrize("k", range(len(CASES)))
def test_linear_cross_entropy(k):
    def f(m):
        case = CASES[k]
        x = m.tensor(X, requires_grad=True)
        w = m.tensor(W_K if case.get("k_dim") else W, requires_grad=True)
        b = None
        if case.get("bias"):
            b = m.tensor(B_K if case.get("k_dim") else B, requires_grad=True)
        if case.get("bad_bias"):
            b = m.tensor(B_K)
        if case.get("bad_features"):
            w = m.tensor(W[:, :3], requires_grad=True)
        if case.get("bad_input"):
            x = m.tensor(X[None], requires_grad=True)
        if case.get("bad_weight"):
            w = m.tensor(B, requires_grad=True)
        t = m.tensor(T_K if case.get("k_dim") else T)
        if case.get("probabilities"):
            t = m.tensor(P)
        if case.get("unbatched"):
            x, t = x[0], t[0]
        kw = {
            key: case[key]
            for key in ("reduction", "ignore_index", "label_smoothing")
            if key in case
        }
        if case.get("class_weight"):
            kw["weight"] = m.tensor([0.5, 1.0, 2.0], dtype=m.float64)
        if case.get("options"):
            kw["options"] = m.nn.LinearCrossEntropyOptions()
        loss = m.nn.functional.linear_cross_entropy(x, w, t, linear_bias=b, **kw)
        inputs = [v for v in (x, w, b) if v is not None]
        grads = m.autograd.grad(loss.sum(), inputs)
        names, g = [], loss.grad_fn
        while g is not None:
            names.append(type(g).__name__)
            g = g.next_functions[0][0] if g.next_functions else None
        return loss, names, grads

    both(f)


def test_chunked_path_is_refused():
    """Options PyTorch would run chunked: leafgrad has no chunked path and says so."""
    x, w = lg.tensor(X), lg.tensor(W)
    with pytest.raises(NotImplementedError, match="chunked path"):
        lg.nn.functional.linear_cross_entropy(
            x, w, lg.tensor(T), options=lg.nn.LinearCrossEntropyOptions()
        )


def test_options_validation():
    def f(m):
        opts = m.nn.LinearCrossEntropyOptions
        out = [repr(opts()), repr(opts(batch_chunk_size=4, chunking_method="aspect_ratio:2"))]
        for bad in (
            {"acc_policy": "fast"},
            {"chunking_method": "square"},
            {"chunking_method": "aspect_ratio:0"},
            {"batch_chunk_size": 0},
            {"acc_dtype": m.int64},
        ):
            try:
                opts(**bad)
            except ValueError as e:
                out.append(str(e))
        return out

    both(f)


@pytest.mark.parametrize(
    "kw",
    [{}, {"bias": True}, {"out_features": (2,), "bias": True, "reduction": "sum"}],
    ids=str,
)
def test_module(kw):
    def f(m):
        m.manual_seed(3)
        mod = m.nn.LinearCrossEntropyLoss(4, 3, dtype=m.float64, **kw)
        x = m.tensor(X, requires_grad=True)
        t = m.tensor(T_K if kw.get("out_features") else T)
        loss = mod(x, t)
        loss.sum().backward()
        params = [(n, p.shape, p.grad) for n, p in mod.named_parameters()]
        return repr(mod), loss, params, x.grad

    both(f)


def test_module_errors():
    def f(m):
        errors = []
        for kw in ({"weight": m.ones(4)}, {"label_smoothing": 1.5}):
            try:
                m.nn.LinearCrossEntropyLoss(4, 3, **kw)
            except RuntimeError as e:
                errors.append(str(e))
        return errors

    both(f)
