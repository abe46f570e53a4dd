"""Tensor.storage() and Tensor.untyped_storage() against PyTorch: sizes, addresses, bytes and
elements in memory order (views, permuted roots, resized tensors, complex, bool, half and
bfloat16), prints, index errors and the deprecation warning."""

from __future__ import annotations

import pytest
import torch
from conftest import both

import leafgrad
import leafgrad.storage


def _storages(m):
    out = []
    x = m.arange(3.0)
    s = x.storage()
    out += [
        str(x.untyped_storage()),
        len(x.untyped_storage()),
        x.untyped_storage()[4],
        x.untyped_storage().tolist()[:8],
    ]
    out += [
        repr(s),
        type(s[0]).__name__,
        s[-1],
        s.type(),
        s.element_size(),
        s.nbytes(),
        s.is_cuda,
        str(s.device),
        s.size(),
    ]
    for bad in (5, -4, 1.5, slice(0, 1)):
        try:
            out.append(s[bad])
        except Exception as e:
            out.append(f"{type(e).__name__}: {e}".replace(m.__name__ + ".storage", "X"))
    c = m.tensor([1 + 2j])
    out += [str(m.view_as_real(c).storage()), c.storage().tolist(), str(c.storage())]
    out += [str(m.tensor([True, False]).storage()), str(m.tensor([0.1], dtype=m.float16).storage())]
    out += [str(m.ones(0).storage()), m.ones(0).storage().data_ptr()]
    y = m.arange(6.0).view(2, 3).t().clone()
    out += [y.storage().tolist(), y.stride()]
    b = m.arange(6.0)
    v = b[2:4]
    out += [
        v.storage().tolist(),
        v.storage().data_ptr() == b.storage().data_ptr(),
        v.untyped_storage().nbytes(),
    ]
    r = m.arange(6.0)
    r.resize_(2)
    out += [r.storage().size(), r.storage().tolist()]
    i = m.arange(3, dtype=m.int16)
    out += [str(i.storage()), i.untyped_storage().tolist()]
    bf = m.tensor([1.5, -2.25], dtype=m.bfloat16)
    out += [str(bf.storage()), bf.untyped_storage().tolist()]
    u = x.untyped_storage()
    for bad in (12, -13):
        try:
            out.append(u[bad])
        except Exception as e:
            out.append(f"{type(e).__name__}: {e}")
    sl = u[4:8]
    out += [str(sl), sl.data_ptr() - u.data_ptr(), len(sl)]
    b.mul_(2)
    out.append(v.storage().tolist())
    return out


def test_storages():
    torch.storage._warn_typed_storage_removal.__dict__["has_warned"] = False
    leafgrad.storage._WARNED[0] = False
    both(_storages)


def test_writing_through_a_storage_is_refused():
    x = leafgrad.arange(3.0)
    for write in (
        lambda: x.untyped_storage().__setitem__(0, 1),
        lambda: x.storage().fill_(1.0),
        lambda: x.untyped_storage().copy_(x.untyped_storage()),
    ):
        with pytest.raises(NotImplementedError, match="write to the tensor"):
            write()
    assert x.tolist() == [0.0, 1.0, 2.0] and x._version == 0
