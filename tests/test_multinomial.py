"""``multinomial`` draws PyTorch's CPU samples after ``manual_seed`` and raises PyTorch's errors.

With replacement (two or more samples) PyTorch searches each row's running sum with one 64-bit
uniform per sample; otherwise it takes the top of ``probs / exponential_(1)``. After every call the
generator must be where PyTorch's is, so the next draws agree too.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from conftest import Raised, both, host

from leafgrad import _random as R

ROWS = {
    "uniform4": [0.25, 0.25, 0.25, 0.25],
    "unnormalised": [1.0, 2.0, 3.0, 4.0, 0.5],
    "with_zeros": [0.0, 3.0, 0.0, 1.0, 2.0, 0.0],
    "skewed": [1e-6, 0.3, 1e-3, 0.7, 5.0, 1e-8, 2.0],
    "two_rows": [[0.1, 0.2, 0.7, 0.0], [5.0, 1.0, 1.0, 3.0]],
    "many": [float(k % 7 + 1) for k in range(40)],
}


def _draw(m, seed, values, dtype, n, replacement, generator=False):
    """The samples, then a few uniforms: both must agree for the stream to be PyTorch's."""
    m.manual_seed(seed)
    probs = m.tensor(values, dtype=getattr(m, dtype))
    gen = m.Generator().manual_seed(seed + 1) if generator else None
    samples = m.multinomial(probs, n, replacement, generator=gen)
    after = m.rand(3, dtype=m.float64, generator=gen)
    default_after = m.rand(2, dtype=m.float64)
    return samples, after, default_after


@pytest.mark.parametrize("seed", [0, 1, 12345])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("name", list(ROWS))
def test_with_replacement_matches_torch(seed, dtype, name):
    for n in (2, 5, 33):
        both(lambda m, n=n: _draw(m, seed, ROWS[name], dtype, n, True))


@pytest.mark.parametrize("seed", [0, 7, 2024])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", list(ROWS))
def test_without_replacement_matches_torch(seed, dtype, name):
    positive = min(int(np.count_nonzero(row)) for row in np.atleast_2d(ROWS[name]))
    for n in sorted({1, 2, positive}):
        both(lambda m, n=n: _draw(m, seed, ROWS[name], dtype, n, False))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_one_sample_with_replacement_takes_the_exponential_path(dtype):
    both(lambda m: _draw(m, 3, ROWS["two_rows"], dtype, 1, True))


def test_many_categories_and_rows_without_replacement():
    # k * 64 <= categories: PyTorch's topk uses partial_sort here, nth_element above.
    values = (np.arange(3 * 300).reshape(3, 300) % 11 + 1).astype(np.float32).tolist()
    for n in (2, 4, 5, 150):
        both(lambda m, n=n: _draw(m, 9, values, "float32", n, False))


def test_a_generator_is_used_and_the_default_one_is_left_alone():
    both(lambda m: _draw(m, 5, ROWS["unnormalised"], "float32", 6, True, generator=True))


def test_method_and_result_are_as_torch():
    def fn(m):
        m.manual_seed(11)
        p = m.tensor([[0.2, 0.8], [0.6, 0.4]], requires_grad=True)
        out = p.multinomial(4, replacement=True)
        return out, out.requires_grad, out.is_leaf

    both(fn)


def test_empty_rows_give_an_empty_result():
    both(lambda m: m.multinomial(m.ones(0, 3), 2))


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("seed", [0, 4])
def test_tied_keys_are_ordered_as_torch_sorts_them(seed, dtype):
    """Equal keys ``p / q`` (half-precision keys round together; zero probabilities give zero
    keys) are ordered by PyTorch's libstdc++ partial sort (Note [libstdc++ orderings]);
    leafgrad raised NotImplementedError."""

    def fn(m):
        m.manual_seed(seed)
        out = [m.multinomial(m.tensor([0.5, 0.5, 0.0, 0.0]), 3)]
        out.append(m.multinomial(m.ones(3, 30, dtype=getattr(m, dtype)), 20))
        out.append(m.multinomial(m.ones(2, 200, dtype=getattr(m, dtype)), 50))
        return out

    both(fn)


ERRORS = {
    "zero_dim": (lambda m: m.multinomial(m.tensor(0.5), 1)),
    "three_dims": (lambda m: m.multinomial(m.ones(2, 2, 2), 1)),
    "integer_input": (lambda m: m.multinomial(m.tensor([1, 2]), 1)),
    "complex_input": (lambda m: m.multinomial(m.ones(2, dtype=m.complex64), 1)),
    "zero_samples": (lambda m: m.multinomial(m.ones(2), 0)),
    "negative_samples": (lambda m: m.multinomial(m.ones(2), -1)),
    "too_many": (lambda m: m.multinomial(m.ones(2), 3)),
    "empty_1d": (lambda m: m.multinomial(m.ones(0), 1)),
    "empty_rows_one_sample": (lambda m: m.multinomial(m.ones(2, 0), 1, True)),
    "empty_rows_replacement": (lambda m: m.multinomial(m.ones(0), 2, True)),
    "too_many_categories": (lambda m: m.multinomial(m.ones(2**24 + 1), 1)),
    "nan_fast": (lambda m: m.multinomial(m.tensor([0.5, float("nan")]), 1)),
    "inf_fast": (lambda m: m.multinomial(m.tensor([0.5, float("inf")]), 2)),
    "negative_fast": (lambda m: m.multinomial(m.tensor([[0.5, 0.5], [-1.0, 2.0]]), 1, True)),
    "zero_row_fast": (lambda m: m.multinomial(m.tensor([[0.5, 0.5], [0.0, 0.0]]), 1)),
    "nan_kernel": (lambda m: m.multinomial(m.tensor([0.5, float("nan")]), 2, True)),
    "inf_kernel": (lambda m: m.multinomial(m.tensor([0.5, float("inf")]), 2, True)),
    "negative_kernel": (lambda m: m.multinomial(m.tensor([0.5, -0.1]), 2, True)),
    "zero_row_kernel": (lambda m: m.multinomial(m.tensor([[1.0, 0.0], [0.0, 0.0]]), 2, True)),
    "input_not_tensor": (lambda m: m.multinomial([0.5, 0.5], 1)),
    "float_samples": (lambda m: m.multinomial(m.ones(2), 1.5)),
    "bool_samples": (lambda m: m.multinomial(m.ones(2), True)),
    "method_float_samples": (lambda m: m.ones(2).multinomial(1.5)),
    "int_replacement": (lambda m: m.multinomial(m.ones(2), 2, 1)),
    "method_int_replacement": (lambda m: m.ones(2).multinomial(2, 1)),
    "keyword_replacement": (lambda m: m.multinomial(m.ones(2), 2, replacement=1)),
    "bad_generator": (lambda m: m.multinomial(m.ones(2), 2, generator=3)),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_wrong_calls_raise_as_torch(name):
    t, g = both(ERRORS[name])
    assert isinstance(t, Raised) and isinstance(g, Raised)


def test_a_bad_later_row_fails_after_the_earlier_rows_drew():
    # PyTorch's kernel samples row 0 before it reaches row 1's negative entry.
    def fn(m):
        m.manual_seed(4)
        try:
            m.multinomial(m.tensor([[0.3, 0.7], [1.0, -1.0]]), 3, True)
        except RuntimeError as e:
            return str(e), m.rand(4, dtype=m.float64)

    t, g = both(fn)
    assert "< 0" in t[0]


def test_the_numpy_sampler_reproduces_a_recorded_torch_stream():
    gen = R.Generator().manual_seed(2)
    got = R.multinomial(gen, np.array([0.1, 0.2, 0.3, 0.4], np.float32), 6, True)
    torch_gen = torch.Generator().manual_seed(2)
    want = torch.multinomial(torch.tensor([0.1, 0.2, 0.3, 0.4]), 6, True, generator=torch_gen)
    assert got.dtype == np.int64 and got.tolist() == host(want).tolist()
