"""Random in-place fills on views whose memory order is not their logical order.

PyTorch's CPU kernels walk a TensorIterator, which sorts the dims by stride, so
``x.t().uniform_()`` fills ``x`` row by row; ``normal_`` on a tensor that is not contiguous takes
the element-by-element path whatever its size. Each case is compared with PyTorch bit for bit
after ``manual_seed``: the whole base tensor and the generator's next draws.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import leafgrad as lg
from leafgrad import _random as R
from leafgrad.ops.shape import _strides

VIEWS = {
    "t": ((3, 4), lambda x: x.t()),
    "t_normal_16": ((4, 5), lambda x: x.t()),
    "permute3": ((2, 3, 4), lambda x: x.permute(2, 0, 1)),
    "permute3b": ((4, 3, 5), lambda x: x.permute(1, 2, 0)),
    "channels_last": ((2, 4, 5, 3), lambda x: x.permute(0, 3, 1, 2)),
    "nhwc_of_nchw": ((2, 3, 4, 5), lambda x: x.permute(0, 2, 3, 1)),
    "slice_of_t": ((6, 8), lambda x: x.t()[:, ::2]),
    "narrow_of_t": ((6, 8), lambda x: x.t()[1:7, 2:5]),
    "slice_of_permute4": ((3, 4, 5, 6), lambda x: x.permute(3, 1, 0, 2)[1:5, :, ::2, 1:4]),
    "size1_dim": ((3, 1, 4), lambda x: x.permute(2, 1, 0)),
    "unsqueeze_of_t": ((3, 4), lambda x: x.t()[:, None, :]),
    "strided_slice": ((6, 8), lambda x: x[:, ::2]),
    "diagonal": ((5, 5), lambda x: x.diagonal()),
    "contiguous": ((5, 7), lambda x: x),
}

FILLS = {
    "uniform_": (lambda t: t.uniform_(-2, 3), ["float32", "float64", "bfloat16", "complex64"]),
    "normal_": (lambda t: t.normal_(1.5, 2.0), ["float32", "float64", "float16", "complex64"]),
    "bernoulli_": (lambda t: t.bernoulli_(0.3), ["float32", "int64"]),
    "exponential_": (lambda t: t.exponential_(2.0), ["float32"]),
    "random_": (lambda t: t.random_(-5, 50), ["float64", "int16"]),
    "random_full": (lambda t: t.random_(), ["int32"]),
    "geometric_": (lambda t: t.geometric_(0.3), ["int64"]),
    "cauchy_": (lambda t: t.cauchy_(), ["float64"]),
    "log_normal_": (lambda t: t.log_normal_(), ["float32"]),
}


def _np(t) -> np.ndarray:
    if isinstance(t, torch.Tensor):
        t = t.float() if t.dtype == torch.bfloat16 else t
        return t.numpy().copy()
    t = t.float() if t.dtype == lg.bfloat16 else t
    return np.asarray(t._data)


def _fill(lib, shape, view, fill, dtype):
    base = lib.zeros(shape, dtype=getattr(lib, dtype))
    lib.manual_seed(0)
    fill(view(base))
    return _np(base), _np(lib.rand(5, dtype=lib.float64))


# Every fill on a transpose, a channels_last-like permutation and a slice of a transpose, the
# transpose in each of its dtypes; uniform_ and normal_ (whose path depends on contiguity) on
# every view.
CORE = ("t", "channels_last", "slice_of_t")
CASES = sorted(
    {
        (fill_name, view_name, dtypes[0])
        for fill_name, (_, dtypes) in FILLS.items()
        for view_name in CORE
    }
    | {(fill_name, "t", dtype) for fill_name, (_, dtypes) in FILLS.items() for dtype in dtypes}
    | {
        (fill_name, view_name, FILLS[fill_name][1][0])
        for fill_name in ("uniform_", "normal_")
        for view_name in VIEWS
    }
)


@pytest.mark.parametrize(("fill_name", "view_name", "dtype"), CASES)
def test_fill_follows_memory_order(fill_name, view_name, dtype):
    fill = FILLS[fill_name][0]
    shape, view = VIEWS[view_name]
    want, want_next = _fill(torch, shape, view, fill, dtype)
    got, got_next = _fill(lg, shape, view, fill, dtype)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(got_next, want_next)


@pytest.mark.parametrize(
    "make_p",
    [
        lambda L, x: (L.arange(12, dtype=L.float32).reshape(3, 4) / 16).t(),  # both transposed
        lambda L, x: L.arange(12, dtype=L.float64).reshape(4, 3) / 16,  # only self transposed
        lambda L, x: L.arange(4, dtype=L.float32).reshape(4, 1) / 8,  # broadcast p
    ],
)
def test_bernoulli_tensor_p_on_transpose(make_p):
    results = []
    for L in (torch, lg):
        base = L.zeros(3, 4)
        p = make_p(L, base)
        L.manual_seed(0)
        base.t().bernoulli_(p)
        results.append((_np(base), _np(L.rand(5, dtype=L.float64))))
    np.testing.assert_array_equal(results[1][0], results[0][0])
    np.testing.assert_array_equal(results[1][1], results[0][1])


def test_expanded_self_is_refused_like_torch():
    with pytest.raises(RuntimeError) as want:
        torch.zeros(3, 1).expand(3, 4).uniform_()
    with pytest.raises(RuntimeError) as got:
        lg.zeros(3, 1).expand(3, 4).uniform_()
    assert str(got.value) == str(want.value)


@pytest.mark.parametrize(
    ("shape", "strides"),
    [
        ((4, 3), (1, 4)),
        ((4, 2, 3), (1, 12, 4)),
        ((2, 5, 3, 4), (60, 1, 20, 5)),
        ((4, 1, 3), (1, 1, 4)),
        ((3, 3), (1, 3)),
        ((2, 3), (3, 1)),
    ],
)
def test_iteration_order_matches_torch(shape, strides):
    """A fill of ``as_strided`` storage: the storage after it shows PyTorch's order."""
    size = sum((n - 1) * s for n, s in zip(shape, strides)) + 1
    base = torch.zeros(size)
    torch.manual_seed(0)
    base.as_strided(shape, strides).uniform_()
    order = R.iteration_order(shape, strides)
    values = R.fill_in_order(
        lambda s: R.uniform(R.Generator().manual_seed(0), s, np.float32), shape, order
    )
    got = np.zeros(size, np.float32)
    idx = sum(np.indices(shape)[d] * strides[d] for d in range(len(shape)))
    got[idx] = values
    np.testing.assert_array_equal(got, base.numpy())


def test_multinomial_of_transposed_probs():
    """``q = empty_like(probs).exponential_()`` keeps a transposed layout, dense or not."""
    for make in (
        lambda L: ((L.arange(20, dtype=L.float32) + 1) / 256).reshape(4, 5).t(),
        lambda L: ((L.arange(48, dtype=L.float64) + 1) / 256).reshape(6, 8).t()[:, ::2],
    ):
        probs = make(torch)
        torch.manual_seed(0)
        want = torch.multinomial(probs, 2).numpy()
        mine = make(lg)
        order = R.iteration_order(tuple(mine.shape), _strides(mine))
        got = R.multinomial(R.Generator().manual_seed(0), np.asarray(mine._data), 2, False, order)
        np.testing.assert_array_equal(got, want)


# --- *_like factories: empty_like's layout (preserve_format), filled in memory order -------------

LIKE_VIEWS = ("t", "t_normal_16", "channels_last", "slice_of_t", "slice_of_permute4", "diagonal")
LIKES = {
    "rand_like": lambda L, x: L.rand_like(x),
    "randn_like": lambda L, x: L.randn_like(x),
    "randn_like_f64": lambda L, x: L.randn_like(x, dtype=L.float64),
    "randint_like": lambda L, x: L.randint_like(x, 3, 50),
    "randint_like_i16": lambda L, x: L.randint_like(x, 100, dtype=L.int16),
    "empty_like_uniform_": lambda L, x: L.empty_like(x).uniform_(),
    "empty_like_normal_": lambda L, x: L.empty_like(x).normal_(),
    "zeros_like_exponential_": lambda L, x: L.zeros_like(x).exponential_(),
    "ones_like": lambda L, x: L.ones_like(x),
    "full_like": lambda L, x: L.full_like(x, 2.5),
    "rand_like_contiguous": lambda L, x: L.rand_like(x, memory_format=L.contiguous_format),
    "rand_like_preserve": lambda L, x: L.rand_like(x, memory_format=L.preserve_format),
}
LIKE_CASES = [(f, v) for f in LIKES for v in ("t", "slice_of_t")] + [
    (f, v)
    for f in ("rand_like", "randn_like", "empty_like_uniform_")
    for v in LIKE_VIEWS
    if v not in ("t", "slice_of_t")
]


@pytest.mark.parametrize(("like_name", "view_name"), LIKE_CASES)
def test_like_keeps_layout_and_fills_in_memory_order(like_name, view_name):
    shape, view = VIEWS[view_name]
    results = []
    for L in (torch, lg):
        x = view(L.zeros(shape))
        L.manual_seed(0)
        y = LIKES[like_name](L, x)
        results.append((tuple(y.stride()), _np(y), _np(L.rand(5, dtype=L.float64))))
    assert results[1][0] == results[0][0]
    np.testing.assert_array_equal(results[1][1], results[0][1])
    np.testing.assert_array_equal(results[1][2], results[0][2])


def test_like_memory_format_argument():
    results = []
    for L in (torch, lg):
        L.manual_seed(0)
        y = L.randn_like(L.zeros(2, 3, 4, 5), memory_format=L.channels_last)
        errors = []
        for call in (
            lambda L=L: L.rand_like(L.zeros(2, 3, 4), memory_format=L.channels_last),
            lambda L=L: L.zeros_like(L.zeros(2, 3), memory_format=1),
        ):
            with pytest.raises((RuntimeError, TypeError)) as err:
                call()
            errors.append((err.type, str(err.value)))
        results.append((y.stride(), _np(y), errors))
    assert results[1][0] == results[0][0]
    np.testing.assert_array_equal(results[1][1], results[0][1])
    assert results[1][2] == results[0][2]


# --- dropouts: the noise is empty_like(input) (memory order) or new_empty (feature dropouts) ----

DROPOUT_VIEWS = {
    "t": ((6, 8), lambda x: x.t()),
    "slice_of_t": ((6, 8), lambda x: x.t()[:, ::2]),
    "channels_last": ((2, 4, 5, 3), lambda x: x.permute(0, 3, 1, 2)),
    "slice_of_permute": ((2, 3, 4, 5), lambda x: x.permute(0, 3, 1, 2)[:, ::2]),
    "expand": ((3, 1), lambda x: x.expand(3, 4)),
}
DROPOUTS = {
    "dropout": lambda F, x: F.dropout(x, 0.3),
    "dropout_inplace": lambda F, x: F.dropout(x, 0.3, inplace=True),
    "alpha_dropout": lambda F, x: F.alpha_dropout(x, 0.3, True),
    "feature_alpha_dropout": lambda F, x: F.feature_alpha_dropout(x, 0.3, True),
    "dropout2d": lambda F, x: F.dropout2d(x, 0.3),
}


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("view_name", DROPOUT_VIEWS)
@pytest.mark.parametrize("fn_name", DROPOUTS)
def test_dropout_noise_follows_memory_order(fn_name, view_name):
    import torch.nn.functional as TF

    import leafgrad.nn.functional as LF

    if fn_name == "dropout_inplace" and view_name == "expand":
        pytest.skip("in-place on an expanded view: an error, tested elsewhere")
    shape, view = DROPOUT_VIEWS[view_name]
    results = []
    for L, F in ((torch, TF), (lg, LF)):
        base = (L.arange(int(np.prod(shape)), dtype=L.float32) + 1).reshape(shape)
        L.manual_seed(0)
        out = DROPOUTS[fn_name](F, view(base))
        results.append((_np(out), _np(base), _np(L.rand(5, dtype=L.float64))))
    for got, want in zip(results[1], results[0]):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("replacement", [False, True])
def test_multinomial_api_on_transposed_probs(replacement):
    makes = (
        lambda L: ((L.arange(20, dtype=L.float32) + 1) / 256).reshape(4, 5).t(),
        lambda L: ((L.arange(48, dtype=L.float64) + 1) / 256).reshape(6, 8).t()[:, ::2],
    )
    for make in makes:
        for n in (1, 2):
            results = []
            for L in (torch, lg):
                L.manual_seed(0)
                a = L.multinomial(make(L), n, replacement)
                b = make(L).multinomial(n, replacement=replacement)
                results.append([np.asarray(t.tolist()) for t in (a, b, L.rand(3))])
            for got, want in zip(results[1], results[0]):
                np.testing.assert_array_equal(got, want)
