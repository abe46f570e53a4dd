"""Writes through uint8 and bool masks against torch: PyTorch's ``index_put_`` hands one mask with
one CPU value to ``masked_fill_`` (``canDispatchToMaskedFill``), which refuses a uint8 mask before
writing anything; other writes expand the masks (``expandTensors``), warning once per uint8 mask
before checking its shape; backward through the written tensor warns again."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import both

MASK = [1, 0, 1, 0]


def _mask(m, dtype):
    return m.tensor(MASK, dtype=getattr(m, dtype))


WRITES = {
    "number": lambda m, y, k: y.__setitem__(k, 2.0),
    "int": lambda m, y, k: y.__setitem__(k, 2),
    "0-d": lambda m, y, k: y.__setitem__(k, m.tensor(2.0)),
    "0-d float64": lambda m, y, k: y.__setitem__(k, m.tensor(2.0, dtype=m.float64)),
    "one element": lambda m, y, k: y.__setitem__(k, m.tensor([2.0])),
    "vector": lambda m, y, k: y.__setitem__(k, m.tensor([2.0, 3.0])),
    "tuple": lambda m, y, k: y.__setitem__((k,), 2.0),
    "ellipsis": lambda m, y, k: y.__setitem__((k, ...), 2.0),
    "index_put_ 0-d": lambda m, y, k: y.index_put_((k,), m.tensor(2.0)),
    "index_put_ vector": lambda m, y, k: y.index_put_((k,), m.tensor([2.0, 3.0])),
    "index_put_ accumulate": lambda m, y, k: y.index_put_((k,), m.tensor(2.0), accumulate=True),
    "index_put 0-d": lambda m, y, k: y.index_put((k,), m.tensor(2.0)),
    "index_put vector": lambda m, y, k: y.index_put((k,), m.tensor([2.0, 3.0])),
}


@pytest.mark.parametrize("dtype", ["uint8", "bool"])
@pytest.mark.parametrize("write", sorted(WRITES))
def test_mask_writes(write, dtype):
    def fn(m):
        y = m.zeros(4)
        out = WRITES[write](m, y, _mask(m, dtype))
        return y, y._version, out

    both(fn)


@pytest.mark.parametrize("dtype", ["uint8", "bool"])
@pytest.mark.parametrize("shape", [(4, 3), (4, 1), (2, 4)])
def test_mask_rows_and_wrong_shapes(shape, dtype):
    def fn(m):
        y = m.zeros(shape)
        results = []
        for value in (5.0, m.tensor(5.0), m.ones(2, shape[1])):
            try:
                y[_mask(m, dtype)] = value
                results.append(y.clone())
            except (RuntimeError, IndexError) as e:
                results.append(f"{type(e).__name__}: {e}")
        return results, y._version

    both(fn)


@pytest.mark.parametrize("dtype", ["uint8", "bool"])
@pytest.mark.parametrize("grads", ["both", "self", "values"])
def test_mask_write_backward_twice(dtype, grads):
    """The vector write records IndexPutBackward0, whose formulas (one for self, one for the
    values, each where needed) index with the mask again."""

    def fn(m):
        x = m.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=grads != "values")
        v = m.tensor([5.0, 6.0], requires_grad=grads != "self")
        y = x.clone()
        y[_mask(m, dtype)] = v * 2
        z = (y * y).sum()
        z.backward(retain_graph=True)
        z.backward()
        return x.grad, v.grad, y.grad_fn.name()

    both(fn)


@pytest.mark.parametrize("dtypes", [("uint8", "uint8"), ("uint8", "bool"), ("bool", "bool")])
def test_two_masks_read_and_write(dtypes):
    def fn(m):
        x = m.tensor(np.arange(16.0).reshape(4, 4), requires_grad=True)
        rows = m.tensor([1, 0, 1, 0], dtype=getattr(m, dtypes[0]))
        cols = m.tensor([0, 1, 1, 0], dtype=getattr(m, dtypes[1]))
        y = x[rows, cols]
        w = x.clone()
        w[rows, cols] = m.tensor([7.0, 8.0])
        w[rows, cols] = 9.0
        (y.sum() + (w * w).sum()).backward()
        return y, w, x.grad

    both(fn)


@pytest.mark.parametrize("dtype", ["uint8", "bool"])
def test_mask_read_backward(dtype):
    def fn(m):
        x = m.tensor(np.arange(12.0).reshape(4, 3), requires_grad=True)
        y = x[_mask(m, dtype)]
        y.sum().backward(retain_graph=True)
        y.sum().backward()
        return y, x.grad, y.grad_fn.name()

    both(fn)
