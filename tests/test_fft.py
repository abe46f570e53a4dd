"""torch.fft against PyTorch: every transform's values, dtype, layout, recorded nodes and
gradients (first and second order, forward mode), argument errors, saved attributes, the
frequency grids and shifts, and a compiled step."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from conftest import both, host

import leafgrad as lg

RNG = np.random.default_rng(7)
REAL = {(3, 4): RNG.standard_normal((3, 4)), (2, 3, 5): RNG.standard_normal((2, 3, 5))}
CPLX = {k: v + 1j * RNG.standard_normal(v.shape) for k, v in REAL.items()}

ONE_DIM = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"]
N_DIM = ["fft2", "ifft2", "rfft2", "irfft2", "hfft2", "ihfft2"]
N_DIM += ["fftn", "ifftn", "rfftn", "irfftn", "hfftn", "ihfftn"]
KWARGS_1 = [{}, {"norm": "ortho"}, {"norm": "forward"}, {"n": 7}, {"n": 2}, {"dim": 0}]
KWARGS_N = [{}, {"norm": "ortho"}, {"norm": "forward"}, {"s": (4, 6)}, {"dim": (0, -1)}]
KWARGS_N += [{"s": (-1, 3), "dim": (-1, 0)}, {"dim": (1,)}]


def chain(y) -> list:
    """The node names from ``y`` down its first edges."""
    names, f = [], y.grad_fn
    while f is not None:
        names.append(type(f).__name__)
        f = f.next_functions[0][0] if f.next_functions else None
    return names


def _input(m, shape, complex_, dtype):
    data = (CPLX if complex_ else REAL)[shape]
    dt = {"float32": m.complex64, "float64": m.complex128} if complex_ else None
    dt = dt[dtype] if complex_ else getattr(m, dtype)
    return m.tensor(data, dtype=dt, requires_grad=True)


def _transform(fname, shape, complex_, kwargs, dtype):
    def f(m):
        x = _input(m, shape, complex_, dtype)
        y = getattr(m.fft, fname)(x, **kwargs)
        g = m.tensor(RNG_G[: y.numel()].reshape(tuple(y.shape))).to(y.dtype)
        y.backward(g)
        return y.detach(), chain(y), y.stride(), x.grad

    return f


RNG_G = np.random.default_rng(8).standard_normal(400)


CASES = [(f, kw) for f in ONE_DIM for kw in KWARGS_1] + [(f, kw) for f in N_DIM for kw in KWARGS_N]


@pytest.mark.parametrize("shape,dtype", [((3, 4), "float32"), ((2, 3, 5), "float64")], ids=str)
@pytest.mark.parametrize("complex_", [False, True], ids=["real", "complex"])
@pytest.mark.parametrize("fname,kwargs", CASES, ids=[f"{f}-{kw}" for f, kw in CASES])
def test_transforms(fname, kwargs, complex_, shape, dtype):
    both(_transform(fname, shape, complex_, kwargs, dtype))


@pytest.mark.parametrize(
    "layout",
    ["t", "permute", "slice", "expand"],
)
@pytest.mark.parametrize("fname", ["fft", "rfft", "irfft", "fftn", "rfftn", "irfftn", "ihfftn"])
def test_results_take_the_kernels_layout(fname, layout):
    def f(m):
        base = m.tensor(CPLX[(2, 3, 5)] if fname.startswith("ir") else REAL[(2, 3, 5)])
        x = {
            "t": base[0].t(),
            "permute": base.permute(2, 0, 1),
            "slice": base[:, ::2],
            "expand": base[:1].expand(3, 3, 5),
        }[layout]
        out = []
        for kw in ({}, {"dim": 0}) if fname[-1] != "n" else ({}, {"dim": (0, -1)}):
            y = getattr(m.fft, fname)(x, **kw)
            out.append((y, y.stride()))
        return out

    both(f)


ERRORS = [
    lambda m, r, x: m.fft.rfft(x),
    lambda m, r, x: m.fft.ihfft(x),
    lambda m, r, x: m.fft.rfftn(x),
    lambda m, r, x: m.fft.ihfftn(x),
    lambda m, r, x: m.fft.ihfft2(x),
    lambda m, r, x: m.fft.fft(r.half()),
    lambda m, r, x: m.fft.fft(r.bfloat16()),
    lambda m, r, x: m.fft.fft(r, n=0),
    lambda m, r, x: m.fft.fft(r, n=-1, norm="bad"),
    lambda m, r, x: m.fft.fft(r, dim=2),
    lambda m, r, x: m.fft.fft(r, norm="bad"),
    lambda m, r, x: m.fft.irfft(x, n=0),
    lambda m, r, x: m.fft.irfft(x[:, :1]),
    lambda m, r, x: m.fft.fftn(r, s=(2, 3, 4)),
    lambda m, r, x: m.fft.fftn(r, s=(2,), dim=(0, 1)),
    lambda m, r, x: m.fft.fftn(r, dim=(0, -2)),
    lambda m, r, x: m.fft.fftn(r, s=(0, 3)),
    lambda m, r, x: m.fft.irfftn(x, dim=()),
    lambda m, r, x: m.fft.rfftn(r, dim=()),
    lambda m, r, x: m.fft.hfftn(x, dim=()),
    lambda m, r, x: m.fft.ihfftn(r, dim=()),
    lambda m, r, x: m.fft.fft(r[0, 0]),
    lambda m, r, x: m.fft.fft(r, 5.0),
    lambda m, r, x: m.fft.fft(r, n=True),
    lambda m, r, x: m.fft.fft(r, dim=(0,)),
    lambda m, r, x: m.fft.fftn(r, s=(2.0, 3)),
    lambda m, r, x: m.fft.fftn(r, None, (0.0,)),
    lambda m, r, x: m.fft.fftn(r, (3, 2.0)),
    lambda m, r, x: m.fft.fftn(r, "ab"),
    lambda m, r, x: m.fft.fftn(r, s=(2.0, 3)),
    lambda m, r, x: m.fft.fftn(r, s=[3, None]),
    lambda m, r, x: m.fft.fftn(r, (3, 4), (0, 1.5)),
    lambda m, r, x: m.fft.fft(r, norm=1),
    lambda m, r, x: m.fft.fft([1.0, 2.0]),
    lambda m, r, x: m.fft.fft(m.zeros(0)),
    lambda m, r, x: m.fft.fft(m.zeros(3, 0)),
    lambda m, r, x: m.fft.fft(m.zeros(0, 3)),
    lambda m, r, x: m.fft.fft2(r[0]),
    lambda m, r, x: m.fft.fftfreq(-1),
    lambda m, r, x: m.fft.fftfreq(4, dtype=m.int64),
    lambda m, r, x: m.fft.fftfreq(4, dtype=m.complex64),
    lambda m, r, x: m.fft.fftfreq(2.5),
]


@pytest.mark.parametrize("k", range(len(ERRORS)))
def test_errors(k):
    def f(m):
        r = m.tensor(REAL[(3, 4)], dtype=m.float32)
        x = m.tensor(CPLX[(3, 4)], dtype=m.complex64)
        return ERRORS[k](m, r, x)

    both(f)


def test_promotion_and_scalar_inputs():
    def f(m):
        return (
            m.fft.fft(m.arange(4)),
            m.fft.fft(m.tensor([True, False, True])),
            m.fft.rfft(m.arange(6)),
            m.fft.fftn(m.tensor(2.0)),
            m.fft.fftn(m.tensor(REAL[(3, 4)], requires_grad=True), dim=()),
            m.fft.fftn(m.tensor(REAL[(3, 4)]), s=3),
            m.fft.fftn(m.tensor(REAL[(3, 4)]), dim=1),
            m.fft.rfft(m.tensor(REAL[(3, 4)]), n=1),
            m.fft.irfft(m.tensor(CPLX[(3, 4)]), n=1),
        )

    both(f)


def test_default_dtype_float64():
    def f(m):
        m.set_default_dtype(m.float64)
        try:
            return m.fft.fft(m.arange(5)), m.fft.fftfreq(4)
        finally:
            m.set_default_dtype(m.float32)

    both(f)


def test_saved_attributes_and_saved_input():
    def f(m):
        r = m.tensor(REAL[(3, 4)], requires_grad=True)
        ys = [
            m.fft.rfft(r),
            m.fft.fft(r.to(m.complex64)),
            m.fft.irfft(r.to(m.complex64)),
            m.fft.fft(r),
            m.fft.ihfftn(r),
        ]
        out = []
        for y in ys:
            node = y.grad_fn
            names = sorted(a for a in dir(node) if a.startswith("_saved"))
            out.append((names, [getattr(node, a) for a in names]))
        return out

    both(f)


def test_version_and_second_backward_errors():
    def f(m):
        a = m.tensor(REAL[(3, 4)], requires_grad=True).clone()
        y = m.fft.rfft(a)
        a.mul_(2)  # the r2c node saved its input
        try:
            y.abs().sum().backward()
        except RuntimeError as e:
            first = str(e)
        c = m.tensor(REAL[(3, 4)], requires_grad=True).to(m.complex64)
        z = m.fft.fft(c).real.sum()  # the c2c node saves nothing: a second backward runs
        z.backward()
        z.backward()
        w = m.fft.rfft(m.tensor(REAL[(3, 4)], requires_grad=True)).real.sum()
        w.backward()
        w.backward()
        return first

    both(f)


def _walk(f, depth=0, out=None):
    out = [] if out is None else out
    if f is not None and depth < 8:
        out.append("  " * depth + type(f).__name__)
        for n, _ in f.next_functions:
            _walk(n, depth + 1, out)
    return out


DOUBLE = [
    lambda m, r: m.fft.rfft(r),
    lambda m, r: m.fft.fft(r),
    lambda m, r: m.fft.irfft(r.to(m.complex128)),
    lambda m, r: m.fft.fft(r.to(m.complex128)),
    lambda m, r: m.fft.irfftn(r.to(m.complex128)),
    lambda m, r: m.fft.ihfft2(r),
    lambda m, r: m.fft.hfft(r.to(m.complex128), n=5),
]


@pytest.mark.parametrize("k", range(len(DOUBLE)))
def test_double_backward(k):
    def f(m):
        r = m.tensor(REAL[(3, 4)], requires_grad=True)
        y = DOUBLE[k](m, r)
        g0 = m.tensor(RNG_G[: y.numel()].reshape(tuple(y.shape))).to(y.dtype).requires_grad_()
        (g,) = m.autograd.grad(y, r, g0, create_graph=True)
        gg = m.autograd.grad((g**2).sum(), (r, g0), allow_unused=True)
        return _walk(g.grad_fn), g, gg

    both(f)


def test_forward_mode():
    def f(m):
        fw = m.autograd.forward_ad
        with fw.dual_level():
            x = fw.make_dual(m.tensor(REAL[(3, 4)]), m.tensor(REAL[(3, 4)][::-1].copy()))
            ys = [m.fft.irfft(m.fft.rfft(x) * 2, n=4), m.fft.fft2(x), m.fft.hfft(m.fft.ihfft(x))]
            return [fw.unpack_dual(y).tangent for y in ys]

    both(f)


def test_compiled_step_matches_torch():
    w0 = REAL[(3, 4)].astype(np.float32)
    x0 = REAL[(3, 4)][::-1].astype(np.float32).copy()
    w = lg.tensor(w0, requires_grad=True)

    @lg.compile
    def step(x):
        loss = (lg.fft.rfft(x * w).abs() ** 2).sum() + lg.fft.irfft(lg.fft.fft(x * w)).sum()
        loss.backward()
        return loss

    wt = torch.tensor(w0, requires_grad=True)
    xt = torch.tensor(x0)
    lt = (torch.fft.rfft(xt * wt).abs() ** 2).sum() + torch.fft.irfft(torch.fft.fft(xt * wt)).sum()
    lt.backward()
    for _ in range(2):
        w.grad = None
        loss = step(lg.tensor(x0))
        np.testing.assert_allclose(host(loss), host(lt), rtol=1e-5)
        np.testing.assert_allclose(host(w.grad), host(wt.grad), rtol=1e-4, atol=1e-5)


def test_frequencies_and_shifts():
    def f(m):
        r = m.tensor(REAL[(2, 3, 5)], requires_grad=True)
        return (
            m.fft.fftfreq(7, 0.3),
            m.fft.fftfreq(8),
            m.fft.rfftfreq(8, d=0.5, dtype=m.float64),
            m.fft.fftfreq(4, requires_grad=True),
            m.fft.rfftfreq(1),
            m.fft.fftfreq(0),
            m.fft.fftfreq(3, 1e-3),
            m.fft.fftshift(r),
            m.fft.ifftshift(r, dim=0),
            m.fft.fftshift(r, dim=(1, 2)),
            m.fft.ifftshift(m.fft.fftshift(r)),
        )

    both(f)
    assert lg.fft.fftfreq(0).stride() == torch.fft.fftfreq(0).stride()


def test_namespace():
    assert lg.fft.__all__ == [n for n in torch.fft.__all__ if n != "Tensor"]
    public = {n for n in dir(torch.fft) if not n.startswith("_") and n[0].islower()}
    public -= {"torch", "common_args", "factory_common_args"}
    assert public <= set(dir(lg.fft)), public - set(dir(lg.fft))


@pytest.mark.parametrize(
    "name", ["hann_window", "hamming_window", "blackman_window", "bartlett_window", "kaiser_window"]
)
def test_window_functions(name):
    def f(m):
        fn = getattr(m, name)
        out = [fn(n, periodic) for n in (0, 1, 2, 5, 8) for periodic in (True, False)]
        out.append(fn(6, dtype=m.float64))
        out.append(fn(4, requires_grad=True))
        errors = []
        for bad in (lambda: fn(-1), lambda: fn(4, dtype=m.int64), lambda: fn(2.0)):
            try:
                bad()
            except (RuntimeError, TypeError) as e:
                errors.append(f"{type(e).__name__}: {e}")
        return out, [t.stride() for t in out], errors

    both(f)


STFT_CASES = [
    {"n_fft": 8, "return_complex": True},
    {"n_fft": 8, "hop_length": 3, "window": 8, "return_complex": True},
    {"n_fft": 8, "win_length": 5, "window": 5, "return_complex": True},
    {"n_fft": 8, "win_length": 6, "return_complex": True},
    {"n_fft": 8, "center": False, "window": 8, "return_complex": True},
    {"n_fft": 8, "normalized": True, "onesided": False, "return_complex": True},
    {"n_fft": 8, "return_complex": False, "window": 8},
    {"n_fft": 8, "pad_mode": "constant", "return_complex": True},
    {"n_fft": 8, "batch": True, "window": 8, "return_complex": True},
    {"n_fft": 8, "complex": True, "window": 8, "return_complex": True, "onesided": False},
    {"n_fft": 8},
    {"n_fft": 30, "return_complex": True},
    {"n_fft": 8, "hop_length": 0, "return_complex": True},
    {"n_fft": 8, "win_length": 9, "return_complex": True},
    {"n_fft": 8, "window": 5, "return_complex": True},
    {"n_fft": 40, "center": False, "return_complex": True},
    {"n_fft": 8, "complex": True, "return_complex": True, "onesided": True, "window": 8},
]


@pytest.mark.parametrize("k", range(len(STFT_CASES)))
def test_stft(k):
    def f(m):
        kw = dict(STFT_CASES[k])
        batch, complex_ = kw.pop("batch", False), kw.pop("complex", False)
        data = RNG_G[:48].reshape(2, 24) if batch else RNG_G[:20]
        x = m.tensor(data, requires_grad=True)
        if "window" in kw:
            kw["window"] = m.hann_window(kw["window"], dtype=m.float64)
        y = m.stft(x.to(m.complex128) if complex_ else x, **kw)
        (g,) = m.autograd.grad((y.abs() if y.is_complex() else y).sum(), x)
        return y, y.stride(), _walk(y.grad_fn), g

    both(f)


ISTFT_CASES = [
    {},
    {"hop_length": 2},
    {"center": False},
    {"center": False, "window": "ones"},
    {"length": 18},
    {"length": 40},
    {"normalized": True},
    {"onesided": False},
    {"onesided": False, "return_complex": True},
    {"return_complex": True},
    {"win_length": 6, "window": None},
    {"window": None},
    {"batch": True},
    {"conj": True},
    {"real": True},
    {"empty": True},
    {"hop_length": 9},
    {"win_length": 9, "window": None},
    {"window": 7},
    {"n_fft": 10},
    {"onesided": False, "spectrum_onesided": True},
    {"window": "complex", "onesided": False},
    {"window": "complex", "onesided": False, "return_complex": True},
    {"five_dims": True},
]


@pytest.mark.parametrize("k", range(len(ISTFT_CASES)))
def test_istft(k):
    """``istft`` of an ``stft`` (a Hann window, n_fft 8, hop 2 unless a case says): values,
    nodes, gradients of the signal and the window, warnings and PyTorch's argument errors."""

    def f(m):
        kw = dict(ISTFT_CASES[k])
        batch, conj, real = kw.pop("batch", False), kw.pop("conj", False), kw.pop("real", False)
        empty, five = kw.pop("empty", False), kw.pop("five_dims", False)
        spectrum_onesided = kw.pop("spectrum_onesided", False)
        data = RNG_G[:48].reshape(2, 24) if batch else RNG_G[:24]
        x = m.tensor(data, requires_grad=True)
        w = m.hann_window(8, dtype=m.float64).requires_grad_()
        onesided = kw.get("onesided") if not spectrum_onesided else None
        signal = x.to(m.complex128) if kw.get("return_complex") else x
        s = m.stft(
            signal,
            8,
            2,
            window=w,
            center=kw.get("center", True),
            onesided=onesided,
            return_complex=True,
        )
        window = kw.pop("window", w)
        if window == "ones":
            window = m.ones(8, dtype=m.float64)
        elif window == "complex":
            window = w.to(m.complex128)
        elif isinstance(window, int):
            window = m.hann_window(window, dtype=m.float64)
        # a conjugated spectrum laid out contiguously (leafgrad refuses a complex view of a clone
        # laid out transposed: Note [Complex views])
        s = s.contiguous().conj() if conj else s.real if real else s[..., :0] if empty else s
        s = s[None, None] if five else s
        y = m.istft(s, kw.pop("n_fft", 8), kw.pop("hop_length", 2), window=window, **kw)
        loss = (y.abs() if y.is_complex() else y).mul(m.arange(y.shape[-1], dtype=m.float64))
        gx, gw = m.autograd.grad(loss.sum(), (x, w), allow_unused=True)
        return y, y.stride(), _walk(y.grad_fn), gx, gw

    both(f)


def test_istft_compiled():
    """The overlap check reads values only when they are concrete: a compiled ``istft``
    equals eager mode's."""
    x = lg.tensor(RNG_G[:24], requires_grad=True)
    w = lg.hann_window(8, dtype=lg.float64)
    s = lg.stft(x, 8, 2, window=w, return_complex=True)

    @lg.compile
    def step(s):
        return lg.istft(s, 8, 2, window=w)

    np.testing.assert_allclose(
        step(s.detach()).numpy(), lg.istft(s, 8, 2, window=w).detach().numpy()
    )
