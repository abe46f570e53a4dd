"""Versions of results of ops on inference tensors outside inference mode (Note [Inference
tensors] in ``leafgrad/_storage.py``): PyTorch skips autograd and its ``out=`` kernels leave the
result at the version they wrote it to. Found by the differential fuzzer (``a @ b`` of vectors)."""

from __future__ import annotations

import pytest
from conftest import both


def _inference(m, shape, requires_grad=False):
    with m.inference_mode():
        return m.full(shape, 1.5, requires_grad=requires_grad)


CASES = {
    "dot": lambda m, t: m.dot(t((3,)), t((3,))),
    "dot_empty": lambda m, t: m.dot(t((0,)), t((0,))),
    "vdot": lambda m, t: m.vdot(t((3,)), t((3,))),
    "matmul_vectors": lambda m, t: t((3,)) @ t((3,)),
    "mv": lambda m, t: m.mv(t((2, 3)), t((3,))),
    "mv_empty": lambda m, t: m.mv(t((2, 0)), t((0,))),
    "matmul_matrix_vector": lambda m, t: t((2, 3)) @ t((3,)),
    "addmm": lambda m, t: m.addmm(t((2, 2)), t((2, 3)), t((3, 2))),
    "addmm_broadcast": lambda m, t: m.addmm(t((2,)), t((2, 3)), t((3, 2))),
    "addmm_beta_0": lambda m, t: m.addmm(t((2, 2)), t((2, 3)), t((3, 2)), beta=0),
    "addmv": lambda m, t: m.addmv(t((2,)), t((2, 3)), t((3,))),
    "baddbmm": lambda m, t: m.baddbmm(t((1, 2, 2)), t((1, 2, 3)), t((1, 3, 2))),
    "addbmm": lambda m, t: m.addbmm(t((2, 2)), t((1, 2, 3)), t((1, 3, 2))),
    "bmm": lambda m, t: m.bmm(t((1, 2, 3)), t((1, 3, 2))),
    "max": lambda m, t: t((2, 3)).max(),
    "max_0d": lambda m, t: t(()).max(),
    "nansum": lambda m, t: t((2, 3)).nansum(),
    "nansum_dim": lambda m, t: t((2, 3)).nansum(0),
    "repeat": lambda m, t: t((2, 3)).repeat(2, 1),
    "cummax": lambda m, t: t((2, 3)).cummax(1),
    "cummin": lambda m, t: t((2, 3)).cummin(1),
    "diag_embed": lambda m, t: m.diag_embed(t((2, 3))),
    "sort": lambda m, t: t((2, 3)).sort(),
    # the later op modules (one test, to keep the suite short)
}
LATER = {
    "selections": lambda m, t: [
        *t((2, 3)).mode(1),
        *t((2, 3)).mode(1, keepdim=True),
        *t(()).mode(0, keepdim=True),
        *t((2, 3)).median(1),
        *t((2, 3)).nanmedian(1, keepdim=True),
        *t((1, 3))[:, :1].kthvalue(1, 1),  # (one element: ties pick no index here)
        *t(()).kthvalue(1),
        *t((2, 3)).aminmax(),
        *t((2, 3)).aminmax(dim=1),
        *t((2, 3)).aminmax(dim=0, keepdim=True),
        *t(()).aminmax(dim=0),
    ],
    "deg2rad": lambda m, t: [t((2,)).deg2rad(), m.rad2deg(t(()))],
    "renorm_rot90": lambda m, t: (
        [t((2, 2)).renorm(2, 0, 1.0)] + [t((2, 2)).rot90(k) for k in range(-1, 3)]
    ),
    "block_diag": lambda m, t: [m.block_diag(t((2,))), m.block_diag(t((2,)), t((1, 2)), t(()))],
    "complex_polar_frexp": lambda m, t: (
        [m.polar(t((2,)), t((2,))), m.complex(t((2,)), t(()))] + list(t((2,)).frexp())
    ),
    "histc_isin_isreal": lambda m, t: [t((3,)).histc(), m.isin(t((2,)), t((2,))), t((2,)).isreal()],
    "matrix_exp_pdist": lambda m, t: (
        [t((2, 2)).matrix_exp(), t((1, 1)).matrix_exp()] + [m.pdist(t((2, 2))), m.pdist(t((1, 3)))]
    ),
    "scatters": lambda m, t: [
        m.select_scatter(t((2, 2)), t((2,)), 0, 0),
        m.slice_scatter(t((3,)), t((1,)), 0, 0, 1),
        m.diagonal_scatter(t((2, 2)), t((2,))),
    ],
    "unique": lambda m, t: [
        *t((3,)).unique(return_inverse=True, return_counts=True),
        *t((3,)).unique_consecutive(return_inverse=True, return_counts=True),
        *t((2, 2)).unique(dim=0, return_inverse=True, return_counts=True),
        *t((2, 2)).unique_consecutive(dim=1, return_inverse=True, return_counts=True),
        *t((3,)).unique_consecutive(dim=0, return_inverse=True, return_counts=True),
    ],
    "scans": lambda m, t: [
        f(t(shape), -1) for f in (m.cumsum, m.cumprod, m.logcumsumexp) for shape in [(), (1,), (2,)]
    ],
    "new_filled": lambda m, t: (
        [t((2,)).new_ones(2), t((2,)).new_zeros(()), t(()).new_full((2,), 3)]
        + [t((2,)).new_empty(0)]
    ),
}


def test_later_ops_result_versions():
    def fn(m):
        t = lambda shape: _inference(m, shape)  # noqa: E731
        return {k: [(r, r._version, r.is_inference()) for r in f(m, t)] for k, f in LATER.items()}

    both(fn)


@pytest.mark.parametrize("name", sorted(CASES))
def test_result_version(name):
    def fn(m):
        out = CASES[name](m, lambda shape: _inference(m, shape))
        outs = out if isinstance(out, tuple) else (out,)
        return [(r, r._version, r.is_inference()) for r in outs]

    both(fn)


@pytest.mark.parametrize("name", ["cummax", "nansum", "repeat", "max", "dot"])
def test_requires_grad_input_in_grad_mode(name):
    """An ``out=`` kernel refuses an input that requires grad (cummax); the others run."""

    def fn(m):
        out = CASES[name](m, lambda shape: _inference(m, shape, requires_grad=True))
        outs = out if isinstance(out, tuple) else (out,)
        return [(r, r._version, r.requires_grad) for r in outs]

    both(fn)


FFTS = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "ifft2", "rfft2", "irfft2"]
FFTS += ["fftn", "ifftn", "rfftn", "irfftn", "hfftn", "ihfftn", "fftshift"]


@pytest.mark.parametrize("dtype", ["float32", "complex64"])
@pytest.mark.parametrize("shape", [(4,), (2, 4), (3, 1), (2, 3, 4), (1, 1, 4)])
@pytest.mark.parametrize("name", FFTS)
def test_fft_result_version(name, shape, dtype):
    """The FFT kernels write their result in place twice (``resize_`` to a batched shape, which
    counts only when it changes the shape, then ``as_strided_``); fuzz seed 116."""

    if name in ("irfft", "hfft", "irfft2", "irfftn", "hfftn"):
        dtype = "complex64"  # they take complex input
    if name.startswith(("rfft", "ihfft")):
        dtype = "float32"  # they take real input

    def fn(m):
        with m.inference_mode():
            x = m.full(shape, 1.5, dtype=getattr(m, dtype))
        out = getattr(m.fft, name)(x)
        return out, out._version, out.is_inference(), out.real._version

    both(fn)
