"""``linalg.eig`` and ``linalg.eigvals`` against torch 2.13: LAPACK's eigenpairs (complex,
unit-norm, column-major vectors), LinalgEigBackward0 with PyTorch's ``linalg_eig_backward``
(JAX differentiates only eigenvalues), its errors, and Note [Phase checks]."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import both, host

DTYPES = ["float32", "float64", "complex64", "complex128"]
SHAPES = [(3, 3), (2, 4, 4), (1, 1), (0, 0), (2, 0, 0)]
TOL = {"float32": 2e-4, "complex64": 2e-4, "float64": 1e-9, "complex128": 1e-9}


def _matrix(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape)
    if dtype.startswith("complex"):
        a = a + 1j * rng.standard_normal(shape)
    return a.astype(dtype)


def _close(t, g, dtype):
    tol = TOL[dtype]
    np.testing.assert_allclose(host(g), host(t), rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_values_vectors_and_layout(shape, dtype):
    a = _matrix(shape, dtype)

    def run(m):
        A = m.tensor(a, requires_grad=True)
        w, v = m.linalg.eig(A)
        vals = m.linalg.eigvals(A)
        with m.no_grad():
            plain = m.linalg.eigvals(A)
        meta = [
            (t.dtype, tuple(t.shape), t.stride(), t._version, type(t.grad_fn).__name__)
            for t in (w, v, vals, plain)
        ]
        return meta, type(m.linalg.eig(A)).__name__, w, v, vals

    t, g = both(run, compare=False)
    assert str(g[0]) == str(t[0]) and g[1] == t[1]
    _close(t[2], g[2], dtype)
    _close(t[4], g[4], dtype)
    # each vector is LAPACK's up to its phase (MKL and JAX's LAPACK may return -v for v)
    vt, vg = host(t[3]), host(g[3])
    phase = np.sum(np.conj(vg) * vt, axis=-2, keepdims=True)
    phase = np.where(np.abs(phase) > 0, phase / np.maximum(np.abs(phase), 1e-30), 1)
    tol = TOL[dtype]
    np.testing.assert_allclose(np.abs(phase), np.ones_like(np.abs(phase)), rtol=tol, atol=tol)
    np.testing.assert_allclose(vg * phase, vt, rtol=tol, atol=tol)


LOSSES = {
    "values real": lambda w, v: w.real.sum(),
    "values abs": lambda w, v: w.abs().sum(),
    "vectors abs": lambda w, v: v.abs().sum(),
    "both abs": lambda w, v: (w * 2).abs().sum() + (v * v.conj()).real.sum() * w.abs().sum(),
    "vectors real": lambda w, v: v.real.sum(),  # depends on the phase: raises
    "one vector imag": lambda w, v: v[..., :, 0].imag.sum(),  # raises
}


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("loss", list(LOSSES))
def test_gradients(loss, dtype, create_graph, engine):
    for shape in [(3, 3), (2, 4, 4)]:
        a = _matrix(shape, dtype, seed=len(loss))

        def run(m, a=a):
            A = m.tensor(a, requires_grad=True)
            w, v = m.linalg.eig(A)
            (g,) = m.autograd.grad(LOSSES[loss](w, v), A, create_graph=create_graph)
            assert A.grad is None
            return g, type(g.grad_fn).__name__

        t, g = both(run, compare=False)
        if not hasattr(t, "exc"):
            # (create_graph: PyTorch records its formula's ops, leafgrad one node of the
            # formula, LinalgEigBackwardBackward0; the values agree)
            assert create_graph or g[1] == t[1]
            _close(t[0], g[0], dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_second_order(dtype):
    a = _matrix((3, 3), dtype, seed=3)

    def run(m):
        A = m.tensor(a, requires_grad=True)
        w, v = m.linalg.eig(A)
        (g,) = m.autograd.grad(w.abs().sum() + v.abs().sum(), A, create_graph=True)
        (g.abs().sum() if g.is_complex() else g.sum()).backward()
        return g, A.grad

    t, g = both(run, compare=False)
    for x, y in zip(t, g):
        _close(x, y, dtype)


def test_eigvals_and_repeated_eigenvalues():
    """eigvals' node is eig's; with only the eigenvalues' gradient defined, PyTorch's formula
    solves ``V^H X = diag(gL) V^H`` and never divides by the eigenvalue gaps (the identity has
    one eigenvalue, three times)."""

    def run(m):
        A = m.eye(3, requires_grad=True)
        w = m.linalg.eigvals(A)
        node = w.grad_fn
        w.real.sum().backward(retain_graph=True)
        return A.grad, node._saved_eigenvalues, node._saved_eigenvectors, w.grad_fn.name()

    both(run)


BAD = {
    "long": lambda m: m.ones(3, 3, dtype=m.long),
    "long vector": lambda m: m.ones(3, dtype=m.long),
    "bool": lambda m: m.ones(3, 3, dtype=m.bool),
    "half": lambda m: m.ones(3, 3, dtype=m.half),
    "half requiring grad": lambda m: m.ones(3, 3, dtype=m.half, requires_grad=True),
    "bfloat16": lambda m: m.ones(3, 3, dtype=m.bfloat16),
    "not square": lambda m: m.ones(2, 3),
    "vector": lambda m: m.ones(3),
    "nan": lambda m: m.tensor([[1.0, float("nan")], [0.0, 1.0]]),
    "inf": lambda m: m.tensor([[1.0, 0.0], [float("-inf"), 1.0]], requires_grad=True),
}


@pytest.mark.parametrize("fn", ["eig", "eigvals"])
@pytest.mark.parametrize("bad", list(BAD))
def test_errors(bad, fn):
    if fn == "eigvals" and bad == "nan":
        # without a gradient to compute, eigvals runs geev on the NaN (what it returns then is
        # the LAPACK build's): neither raises
        both(lambda m: getattr(m.linalg, fn)(BAD[bad](m)).shape)
        return
    both(lambda m: getattr(m.linalg, fn)(BAD[bad](m)))
