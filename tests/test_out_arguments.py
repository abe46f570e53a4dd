"""``out=`` arguments (Note [out= arguments] in leafgrad/_arg_check.py), against PyTorch: the
result written into the given tensors (resized, in their dtype where a factory makes it), the
tensors themselves returned (a ``torch.return_types.<name>_out`` for functions of several
results), PyTorch's refusals of wrong out tensors, and of ``out=`` where PyTorch takes none."""

from __future__ import annotations

import pytest
import torch
from conftest import both, lg

F32, I64, I32, C64, B, F64 = "float32", "int64", "int32", "complex64", "bool", "float64"

# (call, the out tensors' dtypes: one name, or a tuple for several)
OUT_CALLS = [
    ("m.zeros(2, 3, out=O)", F32),
    ("m.zeros(2, out=O)", I64),
    ("m.ones(2, 3, out=O)", F64),
    ("m.empty(2, 3, out=O).zero_()", F32),
    ("m.full((2, 3), 2.0, out=O)", F32),
    ("m.full((2,), 1.5, out=O)", I64),
    ("m.arange(4.0, out=O)", F32),
    ("m.arange(3, out=O)", F64),
    ("m.arange(3.5, out=O)", I64),
    ("m.linspace(0, 1, 5, out=O)", F32),
    ("m.linspace(0, 1, 3, out=O)", I64),
    ("m.logspace(0, 1, 3, out=O)", F64),
    ("m.eye(3, out=O)", F32),
    ("m.eye(2, out=O)", I64),
    ("m.rand(2, out=O)", F32),
    ("m.rand(2, out=O)", F64),
    ("m.randn(2, out=O)", F64),
    ("m.randint(5, (3,), out=O)", I64),
    ("m.randint(5, (3,), out=O)", F64),
    ("m.randperm(4, out=O)", I64),
    ("m.zeros(2, out=O, requires_grad=True)", F32),
    ("m.fft.fft(x, out=O)", C64),
    ("m.fft.ifft(x, out=O)", C64),
    ("m.fft.rfft(x, out=O)", C64),
    ("m.fft.irfft(x, out=O)", F32),
    ("m.fft.hfft(x, out=O)", F32),
    ("m.fft.ihfft(x, out=O)", C64),
    ("m.fft.fftn(x, out=O)", C64),
    ("m.fft.ifftn(x, out=O)", C64),
    ("m.fft.rfftn(x, out=O)", C64),
    ("m.fft.irfftn(x, out=O)", F32),
    ("m.fft.hfftn(x, out=O)", F32),
    ("m.fft.ihfftn(x, out=O)", C64),
    ("m.fft.fft2(x, out=O)", C64),
    ("m.fft.rfft2(x, out=O)", C64),
    ("m.fft.fftfreq(4, out=O)", F32),
    ("m.fft.fftfreq(4, out=O)", F64),
    ("m.fft.rfftfreq(4, out=O)", F32),
    ("m.searchsorted(v.sort().values, i, out=O)", I64),
    ("m.bucketize(i, v.sort().values, out=O)", I64),
    ("m.polar(v, v, out=O)", C64),
    ("m.complex(v, v, out=O)", C64),
    ("m.frexp(v, out=O)", (F32, I32)),
    ("m.signbit(v, out=O)", B),
    ("m.histogram(v, 3, out=O)", (F32, F32)),
    ("m.triangular_solve(s, s, out=O)", (F32, F32)),
    ("m.linalg.householder_product(s, v[:2], out=O)", F32),
    ("m.orgqr(s, v[:2], out=O)", F32),
    ("m.geqrf(s, out=O)", (F32, F32)),
    ("m.geqrf(s, out=O)", (F64, F32)),
    ("m.chain_matmul(s, s, out=O)", F32),
    ("m.cholesky(s, out=O)", F32),
    ("m.normal(v, 1.0, out=O)", F32),
    ("m.normal(v, v, out=O)", F32),
    ("m.normal(2.0, v, out=O)", F32),
    ("m.normal(0.0, 1.0, (3,), out=O)", F64),
    ("m.bernoulli(v / 4, out=O)", F32),
    ("m.bernoulli(v / 4, out=O)", I64),
    ("m.tensordot(s, s, out=O)", F32),
    ("m.linalg.inv_ex(s, out=O)", (F32, I32)),
    ("m.linalg.cholesky_ex(s, out=O)", (F32, I32)),
    ("m.linalg.qr(s, out=O)", (F32, F32)),
    ("m.linalg.eigh(s, out=O)", (F32, F32)),
    ("m.linalg.eigvalsh(s, out=O)", F32),
    ("m.linalg.svd(s, out=O)", (F32, F32, F32)),
    ("m.linalg.svdvals(s, out=O)", F32),
    ("m.linalg.pinv(s, out=O)", F32),
    ("m.linalg.vecdot(v, v, out=O)", F32),
    ("m.linalg.cond(s, out=O)", F32),
    ("m.qr(s, out=O)", (F32, F32)),
    ("m.svd(s, out=O)", (F32, F32, F32)),
    ("m.linalg.matrix_norm(s, out=O)", F32),
    ("m.norm(s, out=O)", F32),
    ("m.linalg.norm(s, out=O)", F32),
    ("m.linalg.vector_norm(s, out=O)", F32),
    ("m.linalg.multi_dot([s, s], out=O)", F32),
    ("m.linalg.matrix_power(s, 2, out=O)", F32),
    ("m.linalg.lu_factor_ex(s, out=O)", (F32, I32, I32)),
    ("m.linalg.lu_factor(s, out=O)", (F32, I32)),
    ("m.linalg.lu(s, out=O)", (F32, F32, F32)),
    ("m.linalg.solve_ex(s, s, out=O)", (F32, I32)),
    ("m.lu_solve(s, *m.linalg.lu_factor(s), out=O)", F32),
    ("m.lu_unpack(*m.linalg.lu_factor(s), out=O)", (F32, F32, F32)),
    ("m.linalg.solve(s, s, out=O)", F32),
    ("m.linalg.solve_triangular(s, s, upper=True, out=O)", F32),
    ("m.cholesky_solve(s, s, out=O)", F32),
    ("m.cholesky_inverse(s, out=O)", F32),
    ("m.linalg.inv(s, out=O)", F32),
    ("m.linalg.det(s, out=O)", F32),
    ("m.linalg.slogdet(s, out=O)", (F32, F32)),
    ("m.linalg.cross(x, x, out=O)", F32),
    ("m.linalg.matmul(s, s, out=O)", F32),
    ("m.linalg.matrix_rank(s, out=O)", I64),
    ("m.special.erf(x, out=O)", F32),
    ("m.special.xlogy(x, x, out=O)", F32),
    ("m.special.logsumexp(x, 1, out=O)", F32),
    ("m.xlogy(x, 2, out=O)", F32),
    ("m.max(x, 1, out=O)", (F32, I64)),
    ("m.min(x, 1, out=O)", (F32, I64)),
    ("m.sort(x, 1, out=O)", (F32, I64)),
    ("m.sort(x, 1, stable=True, out=O)", (F32, I64)),
    ("m.topk(x, 2, out=O)", (F32, I64)),
    ("m.kthvalue(x, 1, 1, out=O)", (F32, I64)),
    ("m.mode(x, 1, out=O)", (F32, I64)),
    ("m.median(x, 1, out=O)", (F32, I64)),
    ("m.nanmedian(x, 1, out=O)", (F32, I64)),
    ("m.cummax(x, 1, out=O)", (F32, I64)),
    ("m.cummin(x, 1, out=O)", (F32, I64)),
    ("m.aminmax(x, dim=1, out=O)", (F32, F32)),
    ("m.linalg.lstsq(s, s, out=O)", (F32, F32, I64, F32)),
]


def _outs(m, spec):
    if isinstance(spec, tuple):
        return tuple(m.empty(0, dtype=getattr(m, d)) for d in spec)
    return m.empty(0, dtype=getattr(m, spec))


def _run(m, call, spec, out=None):
    m.manual_seed(0)
    space = {
        "m": m,
        "x": m.tensor([[1.0, 3.0, 2.0], [4.0, 0.0, 5.0]]),
        "s": m.tensor([[2.0, 1.0], [1.0, 3.0]]),
        "v": m.tensor([1.0, 3.0, 2.0]),
        "i": m.tensor([1.0, 2.5]),
        "O": _outs(m, spec) if out is None else out,
    }
    return eval(call, space), space["O"]


@pytest.mark.parametrize(("call", "spec"), OUT_CALLS, ids=[c for c, _ in OUT_CALLS])
def test_out_is_written_and_returned(call, spec):
    def f(m):
        result, out = _run(m, call, spec)
        outs = out if isinstance(out, tuple) else (out,)
        returned = result if isinstance(out, tuple) else (result,)
        return (
            outs,
            all(a is b for a, b in zip(returned, outs)),
            type(result).__name__,
            repr(result).split("(")[0],
            [o._version for o in outs],
        )

    both(f, rtol=1e-5, atol=1e-6)


OUT_REFUSALS = [
    # wrong dtypes of a function of several results: each kernel's own words
    ("m.max(x, 1, out=O)", (F64, I64)),
    ("m.max(x, 1, out=O)", (F32, I32)),
    ("m.sort(x, 1, out=O)", (F32, F32)),
    ("m.topk(x, 2, out=O)", (F64, I64)),
    ("m.kthvalue(x, 1, 1, out=O)", (F64, I64)),
    ("m.kthvalue(x, 1, 1, out=O)", (F32, I32)),
    ("m.mode(x, 1, out=O)", (F64, I64)),
    ("m.mode(x, 1, out=O)", (F32, I32)),
    ("m.median(x, 1, out=O)", (F64, I64)),
    ("m.median(x, 1, out=O)", (F64, I32)),
    ("m.nanmedian(x, 1, out=O)", (F32, I32)),
    ("m.cummax(x, 1, out=O)", (F64, I64)),
    ("m.cummin(x, 1, out=O)", (F32, I32)),
    ("m.aminmax(x, dim=1, out=O)", (I64, I64)),
    ("m.frexp(v, out=O)", (F32, I64)),
    ("m.frexp(v, out=O)", (F64, I32)),
    ("m.histogram(v, 3, out=O)", (F64, F32)),
    ("m.linalg.qr(s, out=O)", (F64, F32)),
    ("m.linalg.eigh(s, out=O)", (F32, F64)),
    ("m.linalg.lu_factor(s, out=O)", (F32, I64)),
    ("m.linalg.inv_ex(s, out=O)", (F32, I64)),
    ("m.linalg.slogdet(s, out=O)", (F64, F32)),
    ("m.triangular_solve(s, s, out=O)", (F32, F32, F32)),
    # wrong counts and kinds
    ("m.max(x, 1, out=O)", (F32,)),
    ("m.sort(x, 1, out=O)", (F32, I64, I64)),
    ("m.mode(x, 1, out=O)", F32),
    ("m.linalg.qr(s, out=O)", (F32,)),
    ("m.linalg.lstsq(s, s, out=O)", (F32,)),
    # factories: a dtype other than out's, an out that requires grad
    ("m.zeros(2, dtype=m.float64, out=O)", F32),
    ("m.rand(2, out=O)", I64),
    ("m.zeros(2, out=O.requires_grad_())", F32),
    ("m.fft.fftfreq(4, out=O)", I64),
    # normal: its out is not resized; arguments that require grad
    ("m.normal(v, 1.0, out=O)", F32),
    ("m.normal(v.requires_grad_(), 1.0, out=m.empty(3))", F32),
    ("m.normal(v, v, out=3)", F32),
    # PyTorch's bindings take no out= here, though the operators have out overloads
    ("m.flip(x, [0], out=O)", F32),
    ("m.clone(x, out=O)", F32),
    ("m.zeros_like(x, out=O)", F32),
    ("m.relu(x, out=O)", F32),
    ("m.isnan(x, out=O)", B),
    ("m.trace(s, out=O)", F32),
    ("m.roll(x, 1, out=O)", F32),
    ("m.linalg.matrix_exp(s, out=O)", F32),
    ("m.linalg.vander(v, out=O)", F32),
    # nor do PyTorch's Tensor methods
    ("v.frexp(out=O)", (F32, I32)),
    ("v.signbit(out=O)", B),
    ("s.geqrf(out=O)", (F32, F32)),
    ("s.qr(out=O)", (F32, F32)),
    ("s.svd(out=O)", (F32, F32, F32)),
    ("s.norm(out=O)", F32),
    ("s.lu(out=O)", (F32, I32)),
    ("s.cholesky_inverse(out=O)", F32),
    ("s.type(m.float64, out=O)", F32),
    ("s.type(m.float64, foo=1)", F32),
]


@pytest.mark.parametrize(("call", "spec"), OUT_REFUSALS, ids=[c for c, _ in OUT_REFUSALS])
def test_wrong_out_arguments_are_refused_and_leave_the_outs(call, spec):
    def f(m):
        out = _outs(m, spec)
        try:
            _run(m, call, spec, out)
        except (TypeError, RuntimeError, ValueError, NotImplementedError) as err:
            raised = (type(err).__name__, str(err).split("\n")[0])
        else:
            raised = None
        return raised, out if isinstance(out, tuple) else (out,)

    expected, _ = f(torch)
    got, outs = f(lg)
    assert expected is not None
    assert got == expected
    # and the out tensors are as they were (PyTorch has resized some before its dtype check)
    assert [(tuple(o.shape), o._version) for o in outs] == [((0,), 0)] * len(outs)


def test_out_of_a_function_of_several_results_prints_as_its_out_type():
    def f(m):
        x = m.tensor([[1.0, 3.0, 2.0], [4.0, 0.0, 5.0]])
        r = m.max(x, 1, out=(m.empty(0), m.empty(0, dtype=m.long)))
        return repr(r), type(r).__name__, r.values, r.indices, len(r)

    both(f)


@pytest.mark.parametrize(
    "call",
    [
        "m.normal(v, 1.0, out=m.empty(3))",
        "m.normal(v, 1.0, out=m.empty(2, 3))",
        "m.normal(v, 0.5, out=m.empty(4, 3, dtype=m.float64))",
        "m.normal(v[:1], 2.0, out=m.empty(2, 2))",
        "m.normal(v, 1.0, out=m.empty(3, 2))",
        "m.normal(v, -1.0, out=m.empty(2, 3))",
        "m.normal(v, v, out=m.empty(5))",
    ],
)
def test_normal_draws_into_its_out_as_it_is(call):
    """``normal(tensor mean, number std, out=o)``: PyTorch draws ``o``'s own elements and adds
    the mean broadcast into them (no resize); the other forms resize ``o``."""

    def f(m):
        m.manual_seed(0)
        v = m.tensor([1.0, 3.0, 2.0])
        r = eval(call, {"m": m, "v": v})
        return r, r._version

    both(f)
