"""Dtypes PyTorch's CPU kernels refuse (Note [Kernel dtype refusals] in ops/kernel_dtypes.py), and
the ones they accept where leafgrad used to refuse: each call raises PyTorch's exception type and
text, or gives PyTorch's result, for bool, integer, half and complex inputs."""

import pytest
from conftest import both

OPS = {
    "kthvalue": lambda m, x: m.kthvalue(x, 2, 1),
    "median": lambda m, x: m.median(x),
    "median_dim": lambda m, x: m.median(x, 1),
    "nanmedian": lambda m, x: m.nanmedian(x),
    "nanmedian_dim": lambda m, x: m.nanmedian(x, 1),
    "mode": lambda m, x: m.mode(x, 1),
    "topk": lambda m, x: m.topk(x, 2, 1),
    "aminmax": lambda m, x: m.aminmax(x),
    "cummax": lambda m, x: m.cummax(x, 1),
    "cummin": lambda m, x: m.cummin(x, 1),
    "floor": lambda m, x: m.floor(x),
    "ceil": lambda m, x: m.ceil(x),
    "trunc": lambda m, x: m.trunc(x),
    "frac": lambda m, x: m.frac(x),
    "floor_divide": lambda m, x: x // x,
    "div_trunc": lambda m, x: m.div(x, x, rounding_mode="trunc"),
    "remainder": lambda m, x: x % x,
    "fmod": lambda m, x: m.fmod(x, x),
    "atan2": lambda m, x: m.atan2(x, x),
    "hypot": lambda m, x: m.hypot(x, x),
    "clamp": lambda m, x: m.clamp(x, 0, 1),
    "clamp_tensors": lambda m, x: m.clamp(x, x, x),
    "clamp_min": lambda m, x: m.clamp_min(x, 0),
    "relu": lambda m, x: m.relu(x),
    "hardtanh": lambda m, x: m.nn.functional.hardtanh(x),
    "threshold": lambda m, x: m.nn.functional.threshold(x, 0.5, 1),
    "minimum": lambda m, x: m.minimum(x, x),
    "maximum": lambda m, x: m.max(x, x),
    "fmax": lambda m, x: m.fmax(x, x),
    "nansum": lambda m, x: m.nansum(x),
    "nanmean": lambda m, x: m.nanmean(x),
    "lt": lambda m, x: x < x,
    "le_number": lambda m, x: x <= 1,
    "ge": lambda m, x: m.ge(x, x),
    "isneginf": lambda m, x: m.isneginf(x),
    "cross": lambda m, x: m.linalg.cross(x, x),
    "histc": lambda m, x: m.histc(x),
    "pdist": lambda m, x: m.nn.functional.pdist(x),
    "silu": lambda m, x: m.nn.functional.silu(x),
    "normalize": lambda m, x: m.nn.functional.normalize(x),
    "reflect_pad": lambda m, x: m.nn.functional.pad(x[None], (1, 1), mode="reflect"),
    "replicate_pad": lambda m, x: m.nn.functional.pad(x[None], (1, 1), mode="replicate"),
    "max_pool1d": lambda m, x: m.nn.functional.max_pool1d(x[None], 2),
    "max_pool1d_indices": lambda m, x: m.nn.functional.max_pool1d(x[None], 2, return_indices=True),
    "isin": lambda m, x: m.isin(x, x[0]),
    "index_put_accumulate": lambda m, x: x.index_put((m.tensor([0, 0]),), x[:1], accumulate=True),
}


@pytest.mark.parametrize("dtype", ["bool", "int64", "float16", "bfloat16", "complex64"])
@pytest.mark.parametrize("name", sorted(OPS))
def test_kernel_dtypes_match_pytorch(name, dtype):
    def run(m):
        x = m.tensor([[3, 0, 2], [1, 0, 5]]).to(getattr(m, dtype))
        return OPS[name](m, x)

    both(run)
