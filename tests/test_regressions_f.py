"""Regressions (group F): ``view_as_complex`` as a view of real memory (Note [Complex views] in
``leafgrad/_storage.py``), its regenerated ``grad_fn`` after in-place writes, and the version of
``fmod``/``remainder`` gradients for ``self`` (passed on unchanged, as PyTorch's ``grad``)."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import both


def _real(m, *shape, dtype=None):
    n = int(np.prod(shape))
    a = (np.arange(n, dtype=np.float32).reshape(shape) * 0.5 - 1.25).astype(np.float32)
    t = m.tensor(a)
    return t if dtype is None else t.to(dtype)


_ERRORS = {
    "size": lambda m: m.view_as_complex(_real(m, 3, 3)),
    "last_stride": lambda m: m.view_as_complex(_real(m, 2, 3).t()),
    "strides": lambda m: m.view_as_complex(_real(m, 3, 5)[:, :2]),
    "offset": lambda m: m.view_as_complex(_real(m, 7)[1:].view(3, 2)),
    "zero_dim": lambda m: m.view_as_complex(_real(m, 1).reshape(())),
    "bfloat16": lambda m: m.view_as_complex(_real(m, 3, 2, dtype=m.bfloat16)),
    "int": lambda m: m.view_as_complex(_real(m, 3, 2, dtype=m.int32)),
    "complex": lambda m: m.view_as_complex(_real(m, 3, 2, dtype=m.complex64)),
    "empty_last": lambda m: m.view_as_complex(m.zeros(3, 0)),
    "not_tensor": lambda m: m.view_as_complex([1.0, 2.0]),
    "leaf_view_inplace": lambda m: m.view_as_complex(_real(m, 3, 2).requires_grad_()).mul_(2),
}


@pytest.mark.parametrize("case", sorted(_ERRORS))
def test_view_as_complex_errors(case):
    both(_ERRORS[case])


def test_view_as_complex_half_refused():
    import leafgrad as lg

    with pytest.raises(NotImplementedError, match="complex32"):
        lg.view_as_complex(_real(lg, 3, 2, dtype=lg.float16))


def _geometry(t):
    return (t, tuple(t.shape), t.dtype, t.stride(), t.storage_offset(), t.is_contiguous())


def test_view_as_complex_shares_memory():
    def fn(m):
        b = _real(m, 4, 3, 2)
        c = m.view_as_complex(b[1:])
        first = _geometry(c) + (c._base is b, c._is_view(), c._version)
        c[0, 1] = 5 + 7j
        b.mul_(2)
        t = c.transpose(0, 1)[1]
        r = m.view_as_real(c)
        r[0, 0, 0] = 100.0
        return (
            first,
            b.clone(),
            _geometry(c),
            c._version,
            b._version,
            _geometry(t),
            _geometry(r) + (r._base is b,),
        )

    both(fn)


def test_view_as_complex_even_strides_and_dtypes():
    def fn(m):
        c = m.view_as_complex(_real(m, 3, 2, 2).transpose(0, 1))
        d = m.view_as_complex(_real(m, 3, 2, dtype=m.float64))
        e = m.view_as_complex(m.zeros(0, 2))
        return _geometry(c), _geometry(d), _geometry(e)

    both(fn)


def test_view_as_complex_round_trip():
    def fn(m):
        z = m.view_as_complex(_real(m, 3, 2)) * 1
        w = m.view_as_complex(m.view_as_real(z))
        w[1] = 3j
        w.conj()[0] = 1 + 1j
        x = _real(m, 2, 2)
        back = m.view_as_real(m.view_as_complex(x))
        back[1, 0] = 9.0
        return _geometry(w) + (w._base is z,), z, x, _geometry(back) + (back._base is x,)

    both(fn)


def test_view_as_complex_autograd():
    def fn(m):
        x = _real(m, 3, 2).requires_grad_()
        c = m.view_as_complex(x)
        info = (c.grad_fn.name(), c.requires_grad, c.is_leaf, c._version)
        (c * (2 - 1j)).abs().sum().backward()
        with m.no_grad():
            n = m.view_as_complex(x)
        return info, x.grad, (n.requires_grad, n.grad_fn is None, n.is_leaf)

    both(fn)


def test_view_as_complex_double_backward():
    def fn(m):
        x = _real(m, 3, 2, dtype=m.float64).requires_grad_()
        c = m.view_as_complex(x)
        (g,) = m.autograd.grad((c * c).abs().sum(), x, create_graph=True)
        return g, g.grad_fn.name(), m.autograd.grad((g * g).sum(), x)

    both(fn)


def _names(node, depth=3):
    out = []
    while node is not None and depth:
        out.append(node.name())
        node = node.next_functions[0][0] if node.next_functions else None
        depth -= 1
    return out


def test_view_as_complex_inplace_and_regenerated_grad_fn():
    def fn(m):
        w = _real(m, 3, 2) + 0.5
        x = w.clone().requires_grad_()
        y = x * 1
        c = m.view_as_complex(y)
        c.mul_(2j)
        first = (_names(c.grad_fn), y.grad_fn.name(), y._version, c._version)
        (y * w).sum().backward()
        out = [first, x.grad]
        for make in (
            lambda y: m.view_as_complex(y),
            lambda y: m.view_as_complex(y)[1:],
            lambda y: m.view_as_complex(y[1:3]),
        ):
            x = _real(m, 4, 2).requires_grad_()
            y = x * 1
            v = make(y)
            y.mul_(2)
            out.append(_names(v.grad_fn))
            (v * (1 + 2j)).real.sum().backward()
            out.append(x.grad)
        z = m.ones(3, dtype=m.complex64, requires_grad=True)
        r = m.view_as_real(z * 1)
        r.mul_(2)
        out.append(_names(r.grad_fn, 2))
        return out

    both(fn)


_MOD = {
    "fmod": lambda m, a, b: m.fmod(a, b),
    "fmod_scalar": lambda m, a, b: m.fmod(a, 0.7),
    "remainder": lambda m, a, b: m.remainder(a, b),
    "remainder_scalar": lambda m, a, b: m.remainder(a, 0.7),
    "mod_operator": lambda m, a, b: a % b,
    "fmod_broadcast": lambda m, a, b: m.fmod(a.unsqueeze(0).expand(2, 3), b),
}


@pytest.mark.parametrize("case", sorted(_MOD))
def test_fmod_remainder_grad_version(case):
    def fn(m):
        a = m.tensor([0.3, -1.7, 2.9], requires_grad=True)
        b = m.tensor([0.7, 0.6, -1.1], requires_grad=True)
        _MOD[case](m, a, b).sum().backward()
        return a.grad, a.grad._version, b.grad, None if b.grad is None else b.grad._version

    both(fn)


def test_fmod_grad_of_infinite_self():
    def fn(m):
        a = m.tensor([float("inf"), -2.5], requires_grad=True)
        m.fmod(a, m.tensor([2.0, 3.0])).sum().backward()
        return a.grad

    both(fn)
