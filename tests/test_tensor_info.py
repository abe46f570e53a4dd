"""The torch-level API: finfo/iinfo, settings, typename, broadcast_shapes, tensor introspection
(output_nr, storage_offset, data_ptr), the conjugation API and the factories scalar_tensor,
empty_strided, asarray, range, logspace and unravel_index, each against torch."""

# ruff: noqa: B023 (each lambda is called by ``both`` within its loop iteration)

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch
from conftest import Raised, both, dt, lg

FLOATS = ["float16", "bfloat16", "float32", "float64", "complex64", "complex128"]
INTS = ["uint8", "int8", "int16", "int32", "int64"]


def _info(i):
    keys = [k for k in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution")]
    return {k: getattr(i, k) for k in keys if hasattr(i, k)} | {
        "dtype": i.dtype,
        "repr": repr(i),
        "str": str(i),
        "type": type(i).__name__,
    }


def test_finfo_iinfo():
    for name in FLOATS:
        both(lambda m: _info(m.finfo(dt(m, name))))
    for name in INTS:
        both(lambda m: _info(m.iinfo(dt(m, name))))
    for py in (float, complex, int):
        both(lambda m: _info(m.finfo(py)))
        both(lambda m: _info(m.iinfo(py)))
    both(lambda m: _info(m.finfo()))
    both(lambda m: (m.set_default_dtype(m.float64), _info(m.finfo()))[1])
    both(lambda m: _info(m.finfo(type=m.float16)))
    # equality by dtype, unhashable, read-only
    both(lambda m: m.finfo(m.float32) == m.finfo(m.complex64))
    both(lambda m: m.finfo(m.float32) != m.finfo(m.float64))
    both(lambda m: m.finfo(m.float32) == 3)
    both(lambda m: m.iinfo(m.int8) == m.iinfo(m.int8))
    both(lambda m: hash(m.finfo(m.float32)))
    both(lambda m: setattr(m.finfo(m.float32), "eps", 1.0))
    both(lambda m: setattr(m.iinfo(m.int8), "max", 1))
    # errors
    for bad in ("int32", "bool", "int64"):
        both(lambda m: m.finfo(dt(m, bad)))
    for bad in ("float32", "bool", "complex64"):
        both(lambda m: m.iinfo(dt(m, bad)))
    for bad in ("float", 3, None):
        both(lambda m: m.finfo(bad))
        both(lambda m: m.iinfo(bad))
    both(lambda m: m.iinfo())
    both(lambda m: m.finfo(dtype=m.float32))
    both(lambda m: m.finfo(m.float32, 3))
    both(lambda m: m.iinfo(bool))


def test_threads_and_settings():
    both(lambda m: type(m.get_num_threads()))
    both(lambda m: (m.set_num_threads(3), m.get_num_threads())[1])
    for bad in (0, -1, 2.0, "2", True, 2**64):
        both(lambda m: m.set_num_threads(bad))
    both(lambda m: m.set_num_threads())
    both(lambda m: m.set_num_threads(3, 4))
    both(lambda m: (m.set_num_threads(np.int64(2)), m.get_num_threads())[1])
    both(lambda m: type(m.get_num_interop_threads()))
    for bad in (0, -1, 2.0):
        both(lambda m: m.set_num_interop_threads(bad))
    # deterministic algorithms
    for args, kw in [((True,), {}), ((True,), {"warn_only": True}), ((False,), {}),
                     ((False,), {"warn_only": True}), ((1,), {}), (("a",), {}), ((), {}),
                     ((True,), {"warn_only": 1}), ((True, True), {})]:  # fmt: skip
        both(
            lambda m: (
                m.use_deterministic_algorithms(*args, **kw),
                m.are_deterministic_algorithms_enabled(),
                m.is_deterministic_algorithms_warn_only_enabled(),
                m.get_deterministic_debug_mode(),
            )
        )
    for mode in ("warn", "error", "default", 1, 2, 0, "x", 3):
        both(
            lambda m: (
                m.set_deterministic_debug_mode(mode),
                m.are_deterministic_algorithms_enabled(),
                m.is_deterministic_algorithms_warn_only_enabled(),
            )
        )
    both(lambda m: m.use_deterministic_algorithms(False))
    # float32 matmul precision
    both(lambda m: m.get_float32_matmul_precision())
    for p in ("high", "medium", "low", "highest", 3):
        both(lambda m: (m.set_float32_matmul_precision(p), m.get_float32_matmul_precision()))
    # default device
    both(lambda m: m.get_default_device())
    both(lambda m: (m.set_default_device("cpu"), m.get_default_device())[1])
    both(lambda m: (m.set_default_device(None), m.get_default_device())[1])
    both(lambda m: m.set_default_device("foo"))
    with pytest.raises(NotImplementedError, match="set_default_device supports only 'cpu'"):
        lg.set_default_device("cuda")


def test_interop_threads_set_once():
    # PyTorch accepts one call per process: run both libraries in a fresh one
    code = textwrap.dedent(
        """
        import sys
        sys.path.insert(0, ".")
        import torch, leafgrad
        out = []
        for m in (torch, leafgrad):
            r = []
            for n in (3, 4):
                try:
                    m.set_num_interop_threads(n)
                    r.append("ok")
                except RuntimeError as e:
                    r.append(str(e))
            r.append(m.get_num_interop_threads())
            out.append(r)
        print(out[0] == out[1], out)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert done.stdout.startswith("True"), done.stdout


def test_typename_is_inference_broadcast_shapes():
    for name in ("float32", "float64", "int64", "bool", "complex64", "float16", "bfloat16"):
        both(lambda m: m.typename(m.ones(2, dtype=dt(m, name))))
    objects = [
        lambda m: 3,
        lambda m: 2.0,
        lambda m: "a",
        lambda m: None,
        lambda m: [1],
        lambda m: np.ones(2),
        lambda m: m.nn.Linear(2, 2),
        lambda m: m.nn.ReLU(),
        lambda m: m.optim.SGD,
        lambda m: m.Size,
        lambda m: m.device("cpu"),
        lambda m: m.float32,
        lambda m: m.nn.functional.relu,
        lambda m: m.Tensor,
        lambda m: m.autograd.Function,
        lambda m: m.finfo,
    ]
    for make in objects:
        both(lambda m: m.typename(make(m)))
    x = (torch.ones(2), lg.ones(2))
    both(lambda m: m.is_inference(x[m is lg]))
    both(lambda m: m.is_inference(input=x[m is lg]))
    for bad in (3, None, [1]):
        both(lambda m: m.is_inference(bad))
    both(lambda m: m.is_inference())

    def inference(m):
        with m.inference_mode():
            y = m.ones(2)
        return m.is_inference(y), y.is_inference()

    both(inference)
    cases = [
        ((2, 1), (3,)), ((),), (), ((2, 3), (4, 3)), (3, (3,)), ((2,), 4), ((1,), (0,)),
        ((-1,), (2,)), ((2.0,),), (None,), ((1, 2), (3, 1, 1)), (5, 1), ([2, -1],), (-1,),
        ((2, 3), (3, 2)), ([2, 1], [1, 3]),
    ]  # fmt: skip
    for shapes in cases:
        both(lambda m: m.broadcast_shapes(*shapes))
    both(lambda m: m.broadcast_shapes(m.Size([2, 1]), [1, 3]))


def test_predicates():
    for name in ("bool", "uint8", "int8", "int64", "float16", "float32", "complex64"):
        both(lambda m: (m.ones(1, dtype=dt(m, name)).is_signed(), m.is_signed(m.ones(1))))
    values = [0.0, [1.0], [[0]], True, float("nan"), 0j, [1j], [], [1, 2], -0.0]
    for v in values:
        both(lambda m: (m.tensor(v).is_nonzero(), m.is_nonzero(m.tensor(v))))
    both(lambda m: m.zeros(2, 0).is_nonzero())
    for fn in ("is_nonzero", "is_signed", "is_same_size", "is_inference"):
        both(lambda m: getattr(m, fn)(3))
    both(lambda m: m.ones(2, 3).is_same_size(m.ones(2, 3)))
    both(lambda m: m.ones(2, 3).is_same_size(m.ones(3, 2)))
    both(lambda m: m.is_same_size(m.ones(2), m.ones(2, dtype=m.long)))
    for bad in (3, None, [2, 3]):
        both(lambda m: m.ones(2).is_same_size(bad))
        both(lambda m: m.is_same_size(m.ones(2), bad))


def test_output_nr():
    def nrs(m):
        x = m.arange(24.0).reshape(2, 3, 4).requires_grad_()
        mx = x.max(0)
        with m.no_grad():
            v = x[1]
        return (
            x.output_nr,
            [t.output_nr for t in x.unbind(1)],
            [t.output_nr for t in x.split(1, 0)],
            [t.output_nr for t in x.chunk(3, 2)],
            (mx.values.output_nr, mx.indices.output_nr),
            (x * 2).output_nr,
            v.output_nr,
            m.ones(2).output_nr,
            [t.output_nr for t in x.sort(1)],
        )

    both(nrs)


def _views(m):
    x = m.arange(24.0).reshape(2, 3, 4)
    z = m.zeros(3, dtype=m.complex64)
    e = m.empty_strided((2, 3), (1, 2))
    return [
        x,
        x[1, 2],
        x[1:, 1:, 2:],
        x.transpose(0, 2)[3],
        x.diagonal(1, 1, 2),
        x.diagonal(-1, 1, 2),
        x.diagonal(5, 1, 2),
        x[:, 3:],
        x[5:],
        x.view(-1)[7:].view(1, 17)[0, 3:],
        x.unbind(1)[2],
        x.split(1, 0)[1],
        x.split([1, 2], 1)[1],
        x.unfold(2, 2, 1)[1, 1],
        x.expand(2, 2, 3, 4)[1],
        x[..., 1].unsqueeze(0),
        x[:, :1].squeeze(1)[1],
        x.permute(2, 0, 1)[2:],
        x[0].t()[1],
        x[:, ::2, 1::2],
        x.detach()[1],
        m.view_as_real(z[1:]),
        z[1:].imag,
        z[1:].real,
        z.conj()[2:].imag,
        e[1],
        e.t()[2],
    ]


def test_storage_offset_and_data_ptr():
    both(lambda m: [v.storage_offset() for v in _views(m)])
    both(lambda m: [v.stride() for v in _views(m)])

    def pointers(m):
        views = _views(m)
        x = views[0]
        base = x.data_ptr()
        same_storage = [v for v in views[1:21] if v.numel()]
        out = [v.data_ptr() - base for v in same_storage]
        z = m.zeros(3, dtype=m.complex64)
        zb = z.data_ptr()
        out += [z.imag.data_ptr() - zb, z[1:].imag.data_ptr() - zb, z.conj().data_ptr() - zb]
        out += [x.data_ptr() == x.detach().data_ptr(), x.data_ptr() != z.data_ptr()]
        out += [m.empty(0).data_ptr(), m.ones(3)[3:].data_ptr(), m.ones(2, 0).data_ptr()]
        y = m.ones(4)
        out += [y.data_ptr() == y.view(2, 2).data_ptr(), y[1:].data_ptr() - y.data_ptr()]
        out.append(y.untyped_storage().data_ptr() == y[2:].untyped_storage().data_ptr())
        out.append(y.untyped_storage().nbytes())
        out.append(y.data_ptr() % 16)
        return out

    both(pointers)

    def inplace_shape(m):
        x = m.arange(6.0).reshape(2, 3)
        v = x[1]
        v.unsqueeze_(0)
        w = x.detach()
        w.t_()
        return v.storage_offset(), w[2].storage_offset(), w[2].stride()

    both(inplace_shape)


def _show(t):
    """A tensor whose conjugate or negative bit may be set, comparable on both sides."""
    name = None if t.grad_fn is None else type(t.grad_fn).__name__
    return t.resolve_conj().resolve_neg().detach(), name, t.requires_grad, t.is_leaf


def test_conj_api():
    def conj_view(m):
        z = m.tensor([1 + 2j, 3 - 4j], requires_grad=True)
        c = z.conj()
        r = c.resolve_conj()
        p = z.conj_physical()
        p2 = m.conj_physical(c)
        out = [_show(c), r, p, p2, c.is_conj(), r.is_conj(), p.is_conj(), c._base is z]
        out += [c._is_view(), m.is_conj(c), m.conj(z).is_conj(), z.resolve_conj() is z]
        out += [m.resolve_conj(c)]
        im = c.imag
        out += [_show(im), im.is_neg(), m.is_neg(im), im.resolve_neg(), im.resolve_neg().is_neg()]
        out += [z.is_neg(), c.is_neg(), c.real.is_neg(), im[1:].is_neg()]
        out += [im.resolve_neg().grad_fn is not None, m.resolve_neg(z) is z]
        (c * m.tensor([1 + 1j, 2])).real.sum().backward(inputs=[z])
        # (PyTorch's gradient here is itself a lazy conjugate; leafgrad's is resolved)
        out.append(z.grad.resolve_conj())
        return out

    both(conj_view)

    def real_tensors(m):
        x = m.ones(2, requires_grad=True)
        i = m.tensor([1, 2])
        return [
            x.conj() is x,
            x.is_conj(),
            x.resolve_conj() is x,
            x.conj_physical() is x,
            m.conj_physical(i) is i,
            m.conj_physical(m.tensor(True)),
            x.resolve_neg() is x,
        ]

    both(real_tensors)

    # gradients through conj_physical and resolve_conj; second backward without retain_graph
    def grads(m):
        z = m.tensor([1 + 2j, 3 - 4j], requires_grad=True, dtype=m.complex128)
        w = m.tensor([2 - 1j, 1j], dtype=m.complex128)
        loss = (z.conj_physical() * w).abs().sum() + (z.conj().resolve_conj() * w).real.sum()
        g = m.autograd.grad(loss, z, retain_graph=True)
        loss.backward()
        return g, z.grad

    both(grads)

    def twice(m):
        z = m.tensor([1 + 2j], requires_grad=True)
        y = z.conj_physical().sum()
        y.backward()
        y.backward()
        return z.grad

    both(twice)

    # conj_physical_: version, node names, leaf errors, real and integer tensors
    def inplace(m):
        z = m.tensor([1 + 1j, 2 - 1j], requires_grad=True)
        w = z * 2
        r = w.conj_physical_()
        out = [r is w, w, w._version]
        w.abs().sum().backward()
        out.append(z.grad)
        x = m.ones(2, requires_grad=True)
        y = x * 2
        y.conj_physical_()
        out += [y, y._version]
        i = m.tensor([1, 2])
        out += [i.conj_physical_() is i, i._version, m.conj_physical_(m.tensor([1j]))]
        with m.no_grad():
            z.conj_physical_()
        out += [z.detach(), z._version]
        c = m.tensor([1 + 1j]).conj()
        c.conj_physical_()
        out += [_show(c), c.is_conj(), c._base]
        return out

    both(inplace)
    both(lambda m: m.tensor([1 + 1j], requires_grad=True).conj_physical_())
    both(lambda m: m.ones(2, requires_grad=True).conj_physical_())

    # adjoint: a transposed (conjugated) view
    def adjoints(m):
        a = m.tensor([[1 + 1j, 2], [3, 4j]], requires_grad=True)
        v = a.adjoint()
        r = m.ones(2, 3, requires_grad=True).adjoint()
        out = [_show(v), v.is_conj(), v._base is a, v.stride(), r, r.is_conj(), r.stride()]
        out += [m.adjoint(m.ones(2, 3, 4)).shape, m.ones(2, 3).adjoint().grad_fn]
        out += [_show(m.tensor(1 + 1j, requires_grad=True).adjoint()), m.tensor(2.0).adjoint()]
        (v * m.tensor([[1, 2j], [3, 4]])).real.sum().backward()
        return out + [a.grad]

    both(adjoints)
    both(lambda m: m.ones(3).adjoint())
    both(lambda m: m.tensor(2.0, requires_grad=True).adjoint())
    for fn in ("conj", "is_conj", "resolve_conj", "resolve_neg", "is_neg", "conj_physical",
               "conj_physical_", "adjoint"):  # fmt: skip
        both(lambda m: getattr(m, fn)(3))

    # empty and 0-d tensors
    both(lambda m: [m.zeros(0, dtype=m.complex64).conj_physical(), _show(m.tensor(1j).conj())])


def test_scalar_tensor_and_empty_strided():
    cases = [
        ((3,), {}), ((True,), {}), ((2.5,), {"dtype": "int32"}), ((1 + 2j,), {}),
        ((1 + 2j,), {"dtype": "complex128"}), ((3,), {"requires_grad": True}),
        ((3,), {"dtype": "int64", "requires_grad": True}), (("a",), {}), ((None,), {}),
        ((np.float64(3),), {}), ((1e300,), {"dtype": "float32"}), ((300,), {"dtype": "uint8"}),
        ((2**70,), {}), ((), {}), ((1, 2), {}), ((3,), {"dtype": "float"}),
        ((3,), {"device": "cpu"}),
    ]  # fmt: skip
    for args, kw in cases:

        def make(m, args=args, kw=kw):
            kw = dict(kw)
            if kw.get("dtype") not in (None, "float"):
                kw["dtype"] = dt(m, kw["dtype"])
            return m.scalar_tensor(*args, **kw)

        both(make)
    both(lambda m: m.scalar_tensor(m.tensor(3)))
    both(lambda m: m.scalar_tensor(m.tensor([3, 4])))

    def strided(m, *args, **kw):
        t = m.empty_strided(*args, **kw)
        return t.shape, t.stride(), t.dtype, t.requires_grad, t.is_contiguous(), t.is_leaf

    good = [
        (((2, 3), (1, 2)), {}),
        (((2, 3), (3, 1)), {"dtype": "int64"}),
        (((2, 3), (0, 1)), {"requires_grad": True}),
        (([2], [1]), {}),
        (((), ()), {}),
        (((2, 0), (5, 7)), {}),
        (((2, 3), (1, 0)), {}),
    ]
    bad = [
        (((2, 3), (1,)), {}),
        (((2, -3), (1, 2)), {}),
        (((2, 3), (1, -2)), {}),
        ((2, 1), {}),
        (((2, 3), 3), {}),
        (((2, 3),), {}),
        (((2.0, 3), (1, 2)), {}),
        (((2, 3), (1, 2.0)), {}),
        (((2, 3), (1, 2)), {"dtype": "int64", "requires_grad": True}),
        (((2, -3), (1,)), {}),
    ]
    for args, kw in good + bad:

        def make(m, args=args, kw=kw):
            kw = dict(kw)
            if "dtype" in kw:
                kw["dtype"] = dt(m, kw["dtype"])
            return strided(m, *args, **kw)

        both(make)

    # the strides are those of a real layout: views and contiguous() follow them
    def layout(m):
        e = m.empty_strided((2, 3), (1, 2))
        return e.t().stride(), e.contiguous().stride(), e.clone().stride(), e[:, 1].stride()

    both(layout)


def _asarray_cases(m):
    x = m.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    xd = m.tensor([1.0, 2.0])
    i = m.tensor([1, 2])
    return x, y, xd, i


def test_asarray():
    def tensors(m):
        x, y, xd, i = _asarray_cases(m)
        out = []
        for obj, kw in [
            (x, {}), (x, {"requires_grad": True}), (x, {"dtype": m.float64}),
            (x, {"copy": True}), (x, {"copy": False}), (x, {"dtype": m.float32}),
            (y, {}), (y, {"copy": True}), (y, {"copy": False}), (y, {"requires_grad": True}),
            (y, {"requires_grad": False}), (i, {"dtype": m.float32}), (x, {"device": "cpu"}),
            (xd, {}), (xd, {"copy": True}), (x, {"dtype": m.float64, "requires_grad": True}),
            (x, {"copy": True, "requires_grad": True}),
        ]:  # fmt: skip
            r = m.asarray(obj, **kw)
            out.append((r, r is obj, r._base is obj, r._version))
        return out

    both(tensors)

    def mutating(m):
        # PyTorch sets requires_grad on a leaf argument in place
        x, y, xd, i = _asarray_cases(m)
        a = m.asarray(x, requires_grad=False)
        b = m.asarray(xd, requires_grad=True)
        c = m.asarray(y, requires_grad=False)
        v = m.asarray(x[:1], requires_grad=False)
        return [a is x, x.requires_grad, b is xd, xd.requires_grad, c is y, c, v, v._base is x]

    both(mutating)

    def under_no_grad(m):
        x, y, xd, i = _asarray_cases(m)
        with m.no_grad():
            return [m.asarray(y), m.asarray(x, dtype=m.float64), m.asarray(x, copy=True)]

    both(under_no_grad)

    def grads(m):
        x, y, xd, i = _asarray_cases(m)
        a = m.asarray(x, dtype=m.float64)
        b = m.asarray(x, copy=True)
        (a.sum() + (b * b).sum()).backward()
        return x.grad

    both(grads)
    both(lambda m: m.asarray(_asarray_cases(m)[3], requires_grad=True))
    both(lambda m: m.asarray(_asarray_cases(m)[3], dtype=m.float32, copy=False))
    both(lambda m: m.asarray(_asarray_cases(m)[0], dtype=m.float64, copy=False))

    def non_tensors(m):
        return [
            m.asarray([1, 2]),
            m.asarray([1.0, 2], dtype=m.int32),
            m.asarray(3.5),
            m.asarray([1.0, 2], requires_grad=True),
            m.asarray(np.arange(3)),
            m.asarray(np.arange(3), copy=False),
            m.asarray(np.arange(3), dtype=m.float32),
            m.asarray(np.arange(3.0), requires_grad=True),
            m.asarray(np.float32(3)),
            m.asarray([m.tensor(1.0), m.tensor(2.0)]),
            m.asarray((1, 2.5)),
            m.asarray(True),
            m.asarray([1j]),
            m.asarray([1], copy=True),
            m.asarray([], dtype=m.int64),
        ]

    both(non_tensors)
    errors = [
        lambda m: m.asarray([1.0, 2], copy=False),
        lambda m: m.asarray(2.0, copy=False),
        lambda m: m.asarray([1, 2], requires_grad=True),
        lambda m: m.asarray("ab"),
        lambda m: m.asarray(None),
        lambda m: m.asarray([[1], [2, 3]]),
        lambda m: m.asarray([1], m.float32),
        lambda m: m.asarray(),
        lambda m: m.asarray([1], dtype="float"),
        lambda m: m.asarray([1], copy=1),
        lambda m: m.asarray([1.0], requires_grad=1),
        lambda m: m.asarray(np.arange(3), dtype=m.float32, copy=False),
    ]
    for fn in errors:
        both(fn)


def test_range():
    cases = [
        (1, 4), (1, 4, 0.5), (0, 1, 0.3), (4, 1, -1), (1, 1), (0, 0.9, 0.1), (0, 2, 0.1),
        (1, 4, 0), (4, 1), (float("nan"), 4), (0, float("inf")), ("a", 3), (4,),
        (1, 2, 1, 2), (-3, 5, 2), (5, -3, -3),
    ]  # fmt: skip
    for args in cases:
        both(lambda m: m.range(*args))
    for name in ("int64", "int32", "uint8", "float16", "bfloat16", "float64", "bool",
                 "complex64"):  # fmt: skip
        # (a fractional step truncated to 0 for an integer type crashes PyTorch's kernel)
        args = (1.5, 4.2, 0.7) if name[0] in "fbc" else (1.5, 7.9, 2)
        both(lambda m: m.range(*args, dtype=dt(m, name)))
    both(lambda m: m.range(0, 1e-3, 1e-4, dtype=m.float64))
    both(lambda m: m.range(1, 4, requires_grad=True))
    both(lambda m: m.range(m.tensor(1), 3))
    both(lambda m: m.range(start=1, end=3, step=1))
    both(lambda m: m.range(1, 3, dtype=m.int64, requires_grad=True))


def test_logspace():
    cases = [
        ((0, 2, 5), {}), ((0, 2, 5), {"base": 2}), ((0, 2, 5), {"dtype": "int64"}),
        ((-1, 2, 1), {}), ((0, 2, 0), {}), ((0, 2, -1), {}), ((0, 2), {}),
        ((0, 2, 3), {"requires_grad": True}), ((0, 1, 3), {"dtype": "complex64"}),
        ((0, 1j, 3), {}), ((0, 1, 2.0), {}), ((0, 1, 3, 2), {}), ((0, 1, 3), {"base": "a"}),
        ((0, 1, 3), {"dtype": "bool"}), ((0, 1, 3), {"dtype": "float16"}),
        ((0.1, 3.3, 7), {"dtype": "float64"}), ((0, 3, 4), {"dtype": "uint8"}),
        ((0, 1, 3), {"requires_grad": True, "dtype": "int64"}),
        ((0, 1, 3), {"dtype": "int8", "base": 10}), ((0.1, 3.3, 8), {}),
        ((-2.5, 1.3, 6), {"dtype": "bfloat16", "base": 3}), ((1, -1, 9), {"base": 0.5}),
        ((0, 1, 4), {"dtype": "complex128", "base": 2}), ((0, 1, 1), {"dtype": "int8"}),
    ]  # fmt: skip
    for args, kw in cases:

        def make(m, args=args, kw=kw):
            kw = dict(kw)
            if "dtype" in kw:
                kw["dtype"] = dt(m, kw["dtype"])
            return m.logspace(*args, **kw)

        both(make)
    both(lambda m: m.logspace(m.tensor(0), m.tensor(1.0), 3))
    both(lambda m: m.logspace(m.tensor([0]), 1, 3))
    both(lambda m: m.logspace(0, m.tensor([1.0]), 3))
    both(lambda m: m.logspace(0, 1, m.tensor(3)))
    both(lambda m: m.logspace(0, 1, 3, base=m.tensor(2.0)))
    both(lambda m: m.logspace(0, 1, steps=3))


def test_unravel_index():
    cases = [
        (4, (3, 2)), ([4, 1], (3, 2)), ([[4, 1], [0, 5]], (3, 2)), ([-1], (3, 2)),
        ([6], (3, 2)), ([1], 6), ([1], ()), ([1], (3, -2)), ([1], (3, 0)), ([1], [3, 2]),
        ([1], (3.0, 2)), ([1234, 5678], (10, 10, 10, 10)), ([-7], (3, 2)),
    ]  # fmt: skip
    for idx, shape in cases:
        both(lambda m: m.unravel_index(m.tensor(idx), shape))
    both(lambda m: m.unravel_index(m.tensor([1.0]), (3, 2)))
    both(lambda m: m.unravel_index(m.tensor([True]), (3, 2)))
    both(lambda m: m.unravel_index(m.tensor([1], dtype=m.int32), (3, 2)))
    both(lambda m: m.unravel_index(m.tensor([1], dtype=m.uint8), (3, 2)))
    both(lambda m: m.unravel_index(m.tensor([], dtype=m.int64), (3, 2)))
    both(lambda m: m.unravel_index(m.tensor([1]), m.Size([3, 2])))
    both(lambda m: m.unravel_index(m.tensor([1]), m.tensor([3, 2])))
    both(lambda m: m.unravel_index(3, (3, 2)))


def test_raised_is_compared():
    # the differential helper sees errors on both sides (a guard for the tests above)
    t, g = both(lambda m: m.iinfo(m.bool))
    assert isinstance(t, Raised) and isinstance(g, Raised)


def test_set_flush_denormal():
    """Note [Subnormal floats]: leafgrad's CPU kernels always flush subnormals, so ``True`` is
    honoured as PyTorch's is, and ``False`` is answered as PyTorch answers a mode it cannot set.
    The refusals of bad calls are PyTorch's."""
    try:
        both(lambda m: m.set_flush_denormal(True))
        for args in [("x",), (), (1,), (None,), (True, 1)]:
            both(lambda m: m.set_flush_denormal(*args))
        both(lambda m: m.set_flush_denormal(mode=True))
    finally:
        torch.set_flush_denormal(False)
    assert lg.set_flush_denormal(False) is False
    tiny = 3.0e-39  # a float32 subnormal: kept by data and host reads, flushed by arithmetic
    x = lg.tensor([tiny, 1.0])
    assert x.tolist()[0] == np.float32(tiny)
    assert (x * 2).tolist() == [0.0, 2.0]
