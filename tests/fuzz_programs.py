"""Random autograd programs for the differential fuzz test: strategies, one interpreter, a checker.

A program is a list of plain tuples (so hypothesis can shrink it and print it). ``Interpreter(m)``
runs it step by step with module ``m`` (torch or leafgrad); every argument that depends on a shape
(a dim, an index, a broadcastable operand) is derived from the tensors' shapes, which the checker
has already compared, so both libraries run the same calls. ``check(program)`` runs both
interpreters in lockstep and, after every step, compares the step's error (type and text), its
warnings, its result, and the state of every tensor in the pool: values, dtype, shape, ``is_leaf``,
``requires_grad``, ``grad_fn`` name, ``.grad``, ``retains_grad``, ``_is_view()``, ``stride()`` and
``_version``.
"""

from __future__ import annotations

import contextlib
import os
import warnings

import hypothesis.strategies as st
import numpy as np
import torch
from conftest import Raised, call, host, same_error

import leafgrad as lg

SEED = os.environ.get("LEAFGRAD_FUZZ_SEED")
# LEAFGRAD_FUZZ_SPECIAL=1: a third of the float tensors made hold NaN, infinities and signed zeros
SPECIAL = os.environ.get("LEAFGRAD_FUZZ_SPECIAL") == "1"
_SPECIAL = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0])


def fuzzed(default_examples: int):
    """The hypothesis settings of a fuzz test: ``LEAFGRAD_FUZZ_EXAMPLES`` programs (else
    ``default_examples``), CI's derandomized ones unless ``LEAFGRAD_FUZZ_SEED`` names others."""
    from hypothesis import HealthCheck, seed, settings

    examples = int(os.environ.get("LEAFGRAD_FUZZ_EXAMPLES", str(default_examples)))

    def wrap(test):
        test = settings(
            max_examples=examples,
            deadline=None,
            derandomize=SEED is None,
            database=None,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
        )(test)
        return test if SEED is None else seed(int(SEED))(test)

    return wrap


SHAPES = [(), (1,), (3,), (2, 3), (3, 1), (1, 3), (2, 1, 3), (3, 3)]
DTYPES = ["float32", "float64", "int64"]
MODES = ["no_grad", "enable_grad", "inference_mode", "set_grad_enabled_false"]
# blocks under saved tensor hooks (Note [Saved tensor hooks] in leafgrad/autograd/saved.py)
SAVED_HOOK_MODES = ["saved_identity", "saved_clone", "save_on_cpu"]
SCALARS = [2.0, -1.5, 0.5, 3.0, 0.0, -1.0]
POWERS = [2, 3, 0.5, -1, 0, 1.5]
HOOK_SCALES = [2.0, 0.5, -1.0]

# Discontinuous ops (floor, round, sign, comparisons) are left out of the chains: one ulp of
# float32 rounding difference upstream flips their result, which is not a semantic difference.
UNARY = {
    "neg": lambda m, x: x.neg(),
    "exp": lambda m, x: x.exp(),
    "log": lambda m, x: m.log(x),
    "sin": lambda m, x: x.sin(),
    "cos": lambda m, x: m.cos(x),
    "tanh": lambda m, x: x.tanh(),
    "sigmoid": lambda m, x: m.sigmoid(x),
    "relu": lambda m, x: x.relu(),
    "sqrt": lambda m, x: x.sqrt(),
    "abs": lambda m, x: x.abs(),
    "square": lambda m, x: x.square(),
    "reciprocal": lambda m, x: x.reciprocal(),
    "log1p": lambda m, x: x.log1p(),
    "expm1": lambda m, x: x.expm1(),
    "rsqrt": lambda m, x: x.rsqrt(),
    "atan": lambda m, x: x.atan(),
    "erf": lambda m, x: x.erf(),
    "sinh": lambda m, x: x.sinh(),
    "asin": lambda m, x: x.asin(),
    "clone": lambda m, x: x.clone(),
    "contiguous": lambda m, x: x.contiguous(),
    "flip": lambda m, x: x.flip(0) if x.dim() else x.flip(()),
    # Fourier transforms (a 0-d input has no dim to transform: negated instead)
    "fft_real": lambda m, x: m.fft.fft(x).real if x.dim() else x.neg(),
    "rfft_irfft": lambda m, x: m.fft.irfft(m.fft.rfft(x), x.shape[-1]) if x.dim() else x.neg(),
    "fftn_abs": lambda m, x: m.fft.fftn(x, norm="ortho").abs(),
    "hfft_ihfft": lambda m, x: m.fft.hfft(m.fft.ihfft(x), x.shape[-1]) if x.dim() else x.neg(),
}

SCALAR_OPS = {
    "add": lambda x, k: x + k,
    "radd": lambda x, k: k + x,
    "mul": lambda x, k: x * k,
    "div": lambda x, k: x / k,
    "rsub": lambda x, k: k - x,
    "rdiv": lambda x, k: k / x,
    "pow": lambda x, k: x ** POWERS[int(abs(k) * 2) % len(POWERS)],
    "rpow": lambda x, k: 2.0**x,
    "clamp_min": lambda x, k: x.clamp(min=k),
    "clamp_max": lambda x, k: x.clamp(max=k),
    "clamp": lambda x, k: x.clamp(-abs(k) - 0.25, abs(k) + 0.25),
}

BINARY = {
    "add": lambda m, a, b: a + b,
    "sub": lambda m, a, b: m.sub(a, b),
    "mul": lambda m, a, b: a * b,
    "div": lambda m, a, b: a / b,
    "add_alpha": lambda m, a, b: m.add(a, b, alpha=2),
    "maximum": lambda m, a, b: m.maximum(a, b),
    "minimum": lambda m, a, b: m.minimum(a, b),
    "atan2": lambda m, a, b: m.atan2(a, b),
    "pow": lambda m, a, b: a.pow(b),
}


def _dim(x, d):
    """Dim ``d`` of ``x``, counted from the end for odd ``d`` (PyTorch's nodes keep a dim as it
    was given: Note [Dims as written])."""
    if not x.dim():
        return 0
    return d % x.dim() - (x.dim() if d % 2 else 0)


REDUCE = {
    "sum": lambda m, x, d, k: x.sum(),
    "sum_dim": lambda m, x, d, k: x.sum(_dim(x, d), keepdim=k),
    "mean": lambda m, x, d, k: x.mean(_dim(x, d), keepdim=k),
    "mean_all": lambda m, x, d, k: x.mean(),
    "prod": lambda m, x, d, k: x.prod(_dim(x, d), keepdim=k),
    "amax": lambda m, x, d, k: x.amax(_dim(x, d), keepdim=k),
    "max_dim": lambda m, x, d, k: x.max(_dim(x, d), keepdim=k)[0],
    "min_all": lambda m, x, d, k: x.min(),
    "norm": lambda m, x, d, k: x.norm(),
    "logsumexp": lambda m, x, d, k: x.logsumexp(_dim(x, d), keepdim=k),
    "var": lambda m, x, d, k: x.var(_dim(x, d), keepdim=k),
    "std_all": lambda m, x, d, k: x.std(),
    "cumsum": lambda m, x, d, k: x.cumsum(_dim(x, d)),
    "cumprod": lambda m, x, d, k: x.cumprod(_dim(x, d)),
    "softmax": lambda m, x, d, k: x.softmax(_dim(x, d)),
    "log_softmax": lambda m, x, d, k: x.log_softmax(_dim(x, d)),
}


def _sizes(method, sizes, q):
    """``method(sizes)`` or ``method(*sizes)``: on a 0-d tensor the second passes no sizes."""
    return method(*sizes) if q % 2 else method(sizes)


def _size(x, d):
    return x.shape[_dim(x, d)] if x.dim() else 1


VIEWS = {
    "view_flat": lambda x, p, q: x.view(-1),
    "view_lead": lambda x, p, q: x.view(1, *x.shape),
    "reshape_rev": lambda x, p, q: x.reshape(tuple(reversed(x.shape))),
    "reshape_flat": lambda x, p, q: x.reshape(-1),
    "transpose": lambda x, p, q: x.transpose(_dim(x, p), _dim(x, q)),
    "permute": lambda x, p, q: _sizes(x.permute, [(i + p) % x.dim() for i in range(x.dim())], q),
    "select": lambda x, p, q: x.select(_dim(x, p), q % _size(x, p)),
    "slice": lambda x, p, q: x[(slice(None),) * _dim(x, p) + (slice(q % 2, None, 1 + q % 2),)],
    "narrow": lambda x, p, q: x.narrow(_dim(x, p), 0, 1 + q % _size(x, p)),
    "expand_lead": lambda x, p, q: x.expand(2, *x.shape),
    "expand_ones": lambda x, p, q: _sizes(x.expand, [3 if s == 1 else s for s in x.shape], q),
    "squeeze": lambda x, p, q: x.squeeze(),
    "squeeze_dim": lambda x, p, q: x.squeeze(_dim(x, p)),
    "unsqueeze": lambda x, p, q: x.unsqueeze(p % (x.dim() + 1)),
    "t": lambda x, p, q: x.t(),
    "mT": lambda x, p, q: x.mT,
    "diagonal": lambda x, p, q: x.diagonal(q % 3 - 1, _dim(x, p), _dim(x, p + 1)),
    "split": lambda x, p, q: x.split(1 + q % 2, _dim(x, p))[-1],
    "chunk": lambda x, p, q: x.chunk(2, _dim(x, p))[0],
    "unbind": lambda x, p, q: x.unbind(_dim(x, p))[q % _size(x, p)],
    "detach": lambda x, p, q: x.detach(),
    "alias": lambda x, p, q: x[...],
}


NORM_PS = [1, 2, 3, float("inf"), 0.5]


def _unexpanded(x):
    """``x``, or a contiguous copy where it is expanded: PyTorch 2.13's ``median(dim)`` reads
    memory it never wrote for a dim of stride 0 (``t.broadcast_to((2,)).median(0)`` gives a
    denormal and index 1); leafgrad's answer is the copy's (test_fuzz_regressions_e)."""
    return x.contiguous() if 0 in x.stride() else x


def _dims(x, d):
    """Every other dim of ``x`` (from 0 or 1): a tuple of dims, empty for a 0-d tensor."""
    return tuple(range(x.dim()))[d % 2 :: 2] if x.dim() > 1 else tuple(range(x.dim()))


MORE_REDUCE = {
    "prod_all": lambda m, x, d, k: x.prod(),
    "amin": lambda m, x, d, k: x.amin(_dim(x, d), keepdim=k),
    "amax_dims": lambda m, x, d, k: x.amax(_dims(x, d), keepdim=k),
    "sum_dims": lambda m, x, d, k: x.sum(_dims(x, d), keepdim=k),
    "mean_dims": lambda m, x, d, k: x.mean(_dims(x, d), keepdim=k),
    "norm_p": lambda m, x, d, k: x.norm(NORM_PS[d % len(NORM_PS)], _dim(x, d), keepdim=k),
    "norm_p_all": lambda m, x, d, k: m.norm(x, NORM_PS[d % len(NORM_PS)]),
    "logsumexp_dims": lambda m, x, d, k: m.logsumexp(x, _dims(x, d), keepdim=k),
    "nansum": lambda m, x, d, k: x.nansum(_dim(x, d), keepdim=k),
    "nanmean": lambda m, x, d, k: x.nanmean(_dim(x, d), keepdim=k),
    "var_corr": lambda m, x, d, k: x.var(_dim(x, d), correction=d % 3, keepdim=k),
    "std_corr": lambda m, x, d, k: x.std(_dim(x, d), correction=d % 3, keepdim=k),
    "std_dims": lambda m, x, d, k: x.std(_dims(x, d), correction=0, keepdim=k),
    "logcumsumexp": lambda m, x, d, k: x.logcumsumexp(_dim(x, d)),
    "cumsum_rev": lambda m, x, d, k: m.cumsum(x, -1 if x.dim() else 0),
}
REDUCE.update(MORE_REDUCE)

# Ops with several results (values and indices, pieces): every result joins the pool. Indices
# of exact ties are compared too: PyTorch's choice among equal values is what it documents.
MULTI = {
    "sort": lambda m, x, d, k: x.sort(_dim(x, d), descending=k),
    "sort_stable": lambda m, x, d, k: m.sort(x, dim=_dim(x, d), stable=True, descending=k),
    "topk": lambda m, x, d, k: x.topk(1 + d % _size(x, d), _dim(x, d), largest=k),
    "max_dim": lambda m, x, d, k: x.max(_dim(x, d), keepdim=k),
    "min_dim": lambda m, x, d, k: m.min(x, _dim(x, d), keepdim=k),
    "median_dim": lambda m, x, d, k: _unexpanded(x).median(_dim(x, d), keepdim=k),
    "median_all": lambda m, x, d, k: (x.median(),),
    "mode": lambda m, x, d, k: x.mode(_dim(x, d), keepdim=k),
    "kthvalue": lambda m, x, d, k: x.kthvalue(1 + d % _size(x, d), _dim(x, d), keepdim=k),
    "cummax": lambda m, x, d, k: x.cummax(_dim(x, d)),
    "cummin": lambda m, x, d, k: m.cummin(x, _dim(x, d)),
    "aminmax": lambda m, x, d, k: m.aminmax(x, dim=_dim(x, d), keepdim=k),
    "aminmax_all": lambda m, x, d, k: x.aminmax(),
    "var_mean": lambda m, x, d, k: m.var_mean(x, _dim(x, d), correction=d % 2, keepdim=k),
    "std_mean": lambda m, x, d, k: m.std_mean(x, _dims(x, d), keepdim=k),
}
# Pieces that are views of their input (they share its storage family).
MULTI_VIEWS = {
    "unbind": lambda m, x, d, k: x.unbind(_dim(x, d)),
    "split": lambda m, x, d, k: x.split(1 + d % 2, _dim(x, d)),
    "split_sizes": lambda m, x, d, k: x.split([1, _size(x, d) - 1], _dim(x, d)),
    "chunk": lambda m, x, d, k: m.chunk(x, 2, _dim(x, d)),
    "tensor_split": lambda m, x, d, k: x.tensor_split(3, _dim(x, d)),
}
# Selections of their input's values: exact inputs give exact results.
EXACT_MULTI = {"sort", "sort_stable", "topk", "max_dim", "min_dim", "median_dim", "median_all"}
EXACT_MULTI |= {"mode", "kthvalue", "cummax", "cummin", "aminmax", "aminmax_all"}

# Continuous elementwise ops beyond UNARY (nn.functional activations and friends).
ACTIVATIONS = {
    "softplus": lambda m, x: m.nn.functional.softplus(x),
    "softplus_beta": lambda m, x: m.nn.functional.softplus(x, beta=2.0, threshold=1.0),
    "gelu": lambda m, x: m.nn.functional.gelu(x),
    "gelu_tanh": lambda m, x: m.nn.functional.gelu(x, approximate="tanh"),
    "silu": lambda m, x: m.nn.functional.silu(x),
    "elu": lambda m, x: m.nn.functional.elu(x, alpha=0.5),
    "leaky_relu": lambda m, x: m.nn.functional.leaky_relu(x, 0.1),
    "logsigmoid": lambda m, x: m.nn.functional.logsigmoid(x),
    "mish": lambda m, x: m.nn.functional.mish(x),
    "softsign": lambda m, x: m.nn.functional.softsign(x),
    "hardtanh": lambda m, x: m.nn.functional.hardtanh(x, -0.75, 1.25),
    "F_sigmoid": lambda m, x: m.nn.functional.sigmoid(x),
    "F_tanh": lambda m, x: m.nn.functional.tanh(x),
    "logit": lambda m, x: x.sigmoid().logit(),
    "cosh": lambda m, x: x.cosh(),
    "acos": lambda m, x: (x * 0.25).acos(),
    "asinh": lambda m, x: x.asinh(),
    "log2": lambda m, x: x.log2(),
    "exp2": lambda m, x: x.exp2(),
    "tan": lambda m, x: (x * 0.5).tan(),
    "erfc": lambda m, x: x.erfc(),
    "lgamma": lambda m, x: (x.abs() + 0.5).lgamma(),
    "digamma": lambda m, x: (x.abs() + 0.5).digamma(),
}

# Binary ops over two continuous operands (added to BINARY).
MORE_BINARY = {
    "hypot": lambda m, a, b: m.hypot(a, b),
    "logaddexp": lambda m, a, b: m.logaddexp(a, b),
    "lerp_scalar": lambda m, a, b: m.lerp(a, b, 0.25),
    "true_divide": lambda m, a, b: m.true_divide(a, b),
    "rsub_fn": lambda m, a, b: m.rsub(a, b, alpha=0.5),
    "sub_alpha": lambda m, a, b: a.sub(b, alpha=1.5),
    "clamp_min_t": lambda m, a, b: a.clamp(min=b),
    "clamp_max_t": lambda m, a, b: m.clamp(a, max=b),
    "fmax": lambda m, a, b: m.fmax(a, b),
    "dot_like": lambda m, a, b: (a * b).sum(),
}
BINARY.update(MORE_BINARY)

# Three operands: (a, b, c) broadcast together.
TERNARY = {
    "addcmul": lambda m, a, b, c: m.addcmul(a, b, c, value=0.5),
    "addcdiv": lambda m, a, b, c: a.addcdiv(b, c.abs() + 1, value=-2),
    "lerp": lambda m, a, b, c: m.lerp(a, b, c),
    "clamp_t": lambda m, a, b, c: a.clamp(b, c),
    "where_t": lambda m, a, b, c: m.where(mask_like(m, a, 1), b, c) + a,
}

# Discontinuous ops: run only on exact tensors (``Interpreter.exact``), where both libraries
# hold the same values bit for bit, so a rounding boundary cannot be crossed by one of them.
DISCONT = {
    "floor": lambda m, x, b, k: x.floor(),
    "ceil": lambda m, x, b, k: m.ceil(x),
    "round": lambda m, x, b, k: x.round(),
    "round_decimals": lambda m, x, b, k: x.round(decimals=1),
    "trunc": lambda m, x, b, k: x.trunc(),
    "frac": lambda m, x, b, k: x.frac(),
    "sign": lambda m, x, b, k: x.sign(),
    "sgn": lambda m, x, b, k: x.sgn(),
    "remainder_k": lambda m, x, b, k: x.remainder(k),
    "fmod_k": lambda m, x, b, k: m.fmod(x, k),
    "floordiv_k": lambda m, x, b, k: x // k,
    "bool": lambda m, x, b, k: x.bool(),
    "gt_k": lambda m, x, b, k: x > k,
    "copysign": lambda m, x, b, k: m.copysign(x, b),
    "copysign_k": lambda m, x, b, k: x.copysign(k),
    "remainder": lambda m, x, b, k: m.remainder(x, b),
    "fmod": lambda m, x, b, k: x.fmod(b),
    "floor_divide": lambda m, x, b, k: m.floor_divide(x, b),
    "eq": lambda m, x, b, k: x == b,
    "maximum": lambda m, x, b, k: m.maximum(x, b),
    "relu_sub": lambda m, x, b, k: (x - b).relu(),
    "abs_sub": lambda m, x, b, k: (x - b).abs(),
    "clamp_exact": lambda m, x, b, k: x.clamp(min=b, max=b + 0.5),
    "max_all": lambda m, x, b, k: x.max(),
    "amax_ties": lambda m, x, b, k: x.amax(),
    "norm_inf": lambda m, x, b, k: x.norm(float("inf")),
    "median": lambda m, x, b, k: x.median(),
    "nan_to_num": lambda m, x, b, k: x.log().nan_to_num(0.5, 3.0, -3.0),
}
# Of these, the ones whose result is not exact (a quotient may round).
INEXACT_DISCONT = {"remainder_k", "fmod_k", "floordiv_k", "remainder", "fmod", "floor_divide"}
INEXACT_DISCONT |= {"nan_to_num"}

SHAPE_OPS = {
    "roll": lambda m, x, p, q: x.roll(1 + q % 2, _dim(x, p)),
    "roll_flat": lambda m, x, p, q: m.roll(x, q % 3 - 1),
    "roll_dims": lambda m, x, p, q: x.roll((1, -1), (0, -1)) if x.dim() else x.roll(1, 0),
    "repeat": lambda m, x, p, q: _sizes(x.repeat, [1 + q % 2] * x.dim() + [1] * (p % 2), 1),
    "repeat_list": lambda m, x, p, q: x.repeat([2] + [1] * x.dim()),
    "tile": lambda m, x, p, q: m.tile(x, (1 + q % 2,)),
    "movedim": lambda m, x, p, q: m.movedim(x, _dim(x, p), _dim(x, q)),
    "tril": lambda m, x, p, q: x.tril(q % 3 - 1),
    "triu": lambda m, x, p, q: m.triu(x, q % 3 - 1),
    "flatten": lambda m, x, p, q: x.flatten(),
    "flatten_dims": lambda m, x, p, q: m.flatten(x, _dim(x, p)),
    "flip_all": lambda m, x, p, q: x.flip(tuple(range(x.dim()))),
    "fliplr": lambda m, x, p, q: x.fliplr(),
    "clone_format": lambda m, x, p, q: x.mT.clone(
        memory_format=(m.preserve_format, m.contiguous_format)[q % 2]
    ),
    "contiguous_t": lambda m, x, p, q: x.mT.contiguous(),
    "repeat_interleave": lambda m, x, p, q: x.repeat_interleave(2, _dim(x, p)),
    "cat_self": lambda m, x, p, q: m.cat([x, x.flip(0) if x.dim() else x], _dim(x, p)),
    "diag_embed": lambda m, x, p, q: m.diag_embed(x),
    "diag": lambda m, x, p, q: x.diag(q % 3 - 1),
    "trace": lambda m, x, p, q: x.trace(),
    "outer": lambda m, x, p, q: m.outer(x.flatten(), x.flatten()[:2]),
}

# More views (added to VIEWS): each shares its input's storage.
MORE_VIEWS = {
    "swapaxes": lambda x, p, q: x.swapaxes(_dim(x, p), _dim(x, q)),
    "movedim_v": lambda x, p, q: x.movedim(_dim(x, p), 0),
    "view_as": lambda x, p, q: x.view_as(x.detach()),
    "expand_as": lambda x, p, q: x.expand_as(x.detach().expand(2, *x.shape)),
    "broadcast_to": lambda x, p, q: x.broadcast_to((2, *x.shape)),
    "squeeze_dims": lambda x, p, q: x.squeeze(tuple(range(x.dim()))),
    "unflatten": lambda x, p, q: x.flatten().unflatten(0, (1, -1)),
    "narrow_end": lambda x, p, q: x.narrow(_dim(x, p), _size(x, p) - 1, 1),
    "diagonal_neg": lambda x, p, q: x.diagonal(0, -1, -2),
    "T_2d": lambda x, p, q: x.T if x.dim() <= 2 else x.permute(2, 1, 0),
    "view_dims": lambda x, p, q: x.view(-1, 1) if q % 2 else x.view(x.numel()),
    "as_reshape": lambda x, p, q: x.reshape(x.shape),
}
VIEWS.update(MORE_VIEWS)

CONVERT = {
    "double": lambda m, x: x.double(),
    "float": lambda m, x: x.float(),
    "long": lambda m, x: x.long(),
    "int": lambda m, x: x.int(),
    "to_float64": lambda m, x: x.to(m.float64),
    "to_same": lambda m, x: x.to(x.dtype),
    "to_copy": lambda m, x: x.to(m.float32, copy=True),
    "type": lambda m, x: x.type(m.float64),
    "type_as": lambda m, x: x.type_as(m.ones((), dtype=m.float32)),
    "new_tensor_like": lambda m, x: x.new_zeros(x.shape) + x,
}


def _positions(x, d, p):
    """An index tensor of ``x``'s shape whose entries along ``d`` are positions in that dim:
    a permutation (``p`` even, no repeats) or with repeats (``p`` odd)."""
    n = _size(x, d)
    shape = tuple(x.shape) or (1,)
    grid = np.indices(shape)[_dim(x, d)] if x.dim() else np.zeros(shape, dtype=int)
    pos = (grid + p) % n if p % 2 == 0 else (grid * (p % 3 + 1) + p) % n
    return pos.reshape(tuple(x.shape))


INDEX_OPS = {
    "index_select": lambda m, x, b, d, p: x.index_select(_dim(x, d), m.tensor(_pair(x, d, p))),
    "gather": lambda m, x, b, d, p: x.gather(_dim(x, d), m.tensor(_positions(x, d, p))),
    "take": lambda m, x, b, d, p: x.take(m.tensor([p % x.numel(), (p * 7 + 1) % x.numel()])),
    "take_along_dim": lambda m, x, b, d, p: m.take_along_dim(
        x, m.tensor(_positions(x, d, p)), _dim(x, d)
    ),
    "masked_select": lambda m, x, b, d, p: x.masked_select(mask_like(m, x, p)),
    "masked_fill": lambda m, x, b, d, p: x.masked_fill(mask_like(m, x, p), SCALARS[p % 6]),
    "masked_fill_t": lambda m, x, b, d, p: x.masked_fill(mask_like(m, x, p), b.sum()),
    "index_fill": lambda m, x, b, d, p: x.index_fill(
        _dim(x, d), m.tensor(_pair(x, d, p)), SCALARS[p % 6]
    ),
    "scatter": lambda m, x, b, d, p: x.scatter(_dim(x, d), m.tensor(_positions(x, d, 2 * p)), b),
    "scatter_value": lambda m, x, b, d, p: x.scatter(
        _dim(x, d), m.tensor(_positions(x, d, 2 * p)), SCALARS[p % 6]
    ),
    "scatter_add": lambda m, x, b, d, p: x.scatter_add(
        _dim(x, d), m.tensor(_positions(x, d, p)), b
    ),
    "scatter_reduce": lambda m, x, b, d, p: x.scatter_reduce(
        _dim(x, d),
        m.tensor(_positions(x, d, p)),
        b,
        ["sum", "prod", "mean", "amax", "amin"][p % 5],
        include_self=bool(d % 2),
    ),
    "index_put_acc": lambda m, x, b, d, p: x.index_put(
        (m.tensor(_pair(x, 0, p)),), b.sum(), accumulate=True
    ),
}


def _pair(x, d, p):
    """Two positions in dim ``d`` of ``x`` (equal when ``p`` makes them so)."""
    n = _size(x, d)
    return [p % n, (p // 2) % n]


def index_of(m, x, kind, p, q):
    """An index for ``x[...]`` built from ``x``'s shape (kind 4 and 5 are advanced indexing)."""
    n = x.dim()
    s0 = x.shape[0] if n else 1
    if kind == 0:
        return p % s0
    if kind == 1:
        return slice(p % s0, None, 1 + q % 2)
    if kind == 2:
        return (Ellipsis, p % (x.shape[-1] if n else 1))
    if kind == 3:
        return None
    if kind == 4:
        return m.tensor([p % s0, q % s0])
    if kind == 5:
        return mask_like(m, x, p)
    if kind == 6:
        return (slice(None), p % x.shape[1]) if n >= 2 else (Ellipsis,)
    return Ellipsis


def mask_like(m, x, p):
    """A fixed bool pattern of ``x``'s shape, made from integers (no rounding involved)."""
    return (m.arange(x.numel()) % 2 == p % 2).reshape(x.shape)


def broadcastable(a, b):
    for x, y in zip(reversed(tuple(a)), reversed(tuple(b))):
        if x != y and x != 1 and y != 1:
            return False
    return True


def _well_posed(m, x):
    """``x @ x.mT + I`` (eigenvalues at least 1) for a batch of square matrices, else ``x``."""
    if x.dim() >= 2 and x.shape[-1] == x.shape[-2] and x.dtype.is_floating_point:
        return x @ x.mT + m.eye(x.shape[-1], dtype=x.dtype)
    return x


def fits_into(src, dst):
    """``src`` broadcasts to ``dst`` without growing it (in-place operands, setitem values)."""
    if len(src) > len(dst):
        return False
    return all(s in (1, d) for s, d in zip(reversed(tuple(src)), reversed(tuple(dst))))


def _full(x, other):
    """``other`` expanded to ``x``'s shape (it already fits into it), in ``x``'s dtype."""
    return other.to(x.dtype).expand(x.shape)


MORE_INPLACE = {
    "masked_fill_": lambda m, x, o, k: x.masked_fill_(mask_like(m, x, int(abs(k) * 2)), k),
    "masked_fill_t_": lambda m, x, o, k: x.masked_fill_(mask_like(m, x, 1), o.sum()),
    "index_fill_": lambda m, x, o, k: x.index_fill_(0, m.tensor(_pair(x, 0, int(k * 2))), k),
    "scatter_": lambda m, x, o, k: x.scatter_(
        -1, m.tensor(_positions(x, -1, 2 * int(abs(k)))), _full(x, o)
    ),
    "scatter_add_": lambda m, x, o, k: x.scatter_add_(
        0, m.tensor(_positions(x, 0, 1 + 2 * int(abs(k)))), _full(x, o)
    ),
    "index_put_acc_": lambda m, x, o, k: x.index_put_(
        (m.tensor(_pair(x, 0, int(abs(k) * 2))),), o.sum().to(x.dtype), accumulate=True
    ),
    "lerp_": lambda m, x, o, k: x.lerp_(o, 0.25),
    "addcmul_": lambda m, x, o, k: x.addcmul_(o, o, value=k),
    "addcdiv_": lambda m, x, o, k: x.addcdiv_(o, o.abs() + 1, value=k),
    "clamp_t_": lambda m, x, o, k: x.clamp_(min=o),
    "tril_": lambda m, x, o, k: x.tril_(),
    "triu_": lambda m, x, o, k: x.triu_(1),
    "neg_": lambda m, x, o, k: x.neg_(),
    "abs_": lambda m, x, o, k: x.abs_(),
    "relu_": lambda m, x, o, k: x.relu_(),
    "sqrt_": lambda m, x, o, k: x.sqrt_(),
    "tanh_": lambda m, x, o, k: x.tanh_(),
    "log_": lambda m, x, o, k: x.log_(),
    "hypot_": lambda m, x, o, k: x.hypot_(o),
    "atan2_": lambda m, x, o, k: x.atan2_(o),
    "sub_": lambda m, x, o, k: x.sub_(o),
    "div_scalar_": lambda m, x, o, k: x.div_(k),
    "pow_t_": lambda m, x, o, k: x.pow_(o),
    "fill_t_": lambda m, x, o, k: x.fill_(o.sum()),
    "F_relu_inplace": lambda m, x, o, k: m.nn.functional.relu(x, inplace=True),
    "iadd": lambda m, x, o, k: x.__iadd__(o),
    "imul_scalar": lambda m, x, o, k: x.__imul__(k),
}


def _rows(x):
    """``x`` as a matrix: its first dim as rows (one row for a 0-d tensor)."""
    return x.reshape(x.shape[0] if x.dim() else 1, -1)


# The ops of the later op modules (special, misc, vector, layout, search, scatter).
ACTIVATIONS.update(
    {
        "deg2rad": lambda m, x: x.deg2rad(),
        "rad2deg": lambda m, x: m.rad2deg(x),
        "sinc": lambda m, x: x.sinc(),
        "i0": lambda m, x: m.i0(x),
        "expit": lambda m, x: m.special.expit(x),
        "entr": lambda m, x: m.special.entr(x.abs() + 0.25),
        "ndtr": lambda m, x: m.special.ndtr(x),
        "log_ndtr": lambda m, x: m.special.log_ndtr(x),
        "i0e": lambda m, x: m.special.i0e(x),
        "i1": lambda m, x: m.special.i1(x),
        "ravel": lambda m, x: x.ravel(),
        "conj_physical": lambda m, x: x.conj_physical(),
        "xlogy_number": lambda m, x: m.xlogy(x, 2.0),
    }
)
BINARY.update(
    {
        "xlogy": lambda m, a, b: m.xlogy(a, b.abs() + 0.5),
        "xlog1py": lambda m, a, b: m.special.xlog1py(a, b.abs()),
        "logaddexp2": lambda m, a, b: m.logaddexp2(a, b),
        "float_power": lambda m, a, b: m.float_power(a.abs() + 0.5, b),
        "dist": lambda m, a, b: m.dist(a, b),
    }
)
SHAPE_OPS.update(
    {
        "rot90": lambda m, x, p, q: m.rot90(x, 1 + q % 3, (0, x.dim() - 1)),
        "diff": lambda m, x, p, q: x.diff(dim=_dim(x, p)),
        "diff_prepend": lambda m, x, p, q: m.diff(x, prepend=x, dim=-1),
        "atleast_2d": lambda m, x, p, q: m.atleast_2d(x),
        "vander": lambda m, x, p, q: m.vander(x.flatten(), 1 + q % 3),
        "kron": lambda m, x, p, q: m.kron(x, x),
        "block_diag": lambda m, x, p, q: m.block_diag(_rows(x), x.reshape(1, -1)),
        "cartesian_prod": lambda m, x, p, q: m.cartesian_prod(x.flatten(), x.flatten()[:2]),
        "column_stack": lambda m, x, p, q: m.column_stack([x, x]),
        "trapezoid": lambda m, x, p, q: m.trapezoid(x, dim=_dim(x, p)),
        "cumulative_trapezoid": lambda m, x, p, q: m.cumulative_trapezoid(x, dim=_dim(x, p)),
        "renorm": lambda m, x, p, q: x.renorm(1 + q % 2, _dim(x, p), 1.0),
        "addr": lambda m, x, p, q: m.addr(x.flatten()[:1], x.flatten(), x.flatten(), alpha=2),
        "cov": lambda m, x, p, q: m.cov(_rows(x)),
        "cdist": lambda m, x, p, q: m.cdist(_rows(x), _rows(x) + 1, p=1.0 + q % 2),
        "pdist": lambda m, x, p, q: m.pdist(_rows(x)),
        "matrix_exp": lambda m, x, p, q: m.matrix_exp(x),
        # a square matrix made well-conditioned first: the logdet of a singular one is the
        # LU's rounding (-inf in one LAPACK build, -19.7 in another: fuzz seed 64); others
        # keep their errors
        "logdet": lambda m, x, p, q: (_well_posed(m, x)).logdet(),
        "select_scatter": lambda m, x, p, q: m.select_scatter(
            x, x.select(_dim(x, p), 0) * 2, _dim(x, p), 0
        ),
        "slice_scatter": lambda m, x, p, q: m.slice_scatter(
            x, x.narrow(_dim(x, p), 0, 1) * 2, _dim(x, p), 0, 1
        ),
        "diagonal_scatter": lambda m, x, p, q: m.diagonal_scatter(x, x.diagonal() * 2),
        "unfold_sum": lambda m, x, p, q: x.unfold(_dim(x, p), 1 + q % 2, 1).sum(-1),
    }
)
# windows that share elements only where nothing writes to them (test_unfold_overlapping_...)
VIEWS.update({"unfold": lambda x, p, q: x.unfold(_dim(x, p), 1 + q % 2, 1 + q % 2)})
# hsplit's results are views of its input: they share its family (writes reach them)
MULTI_VIEWS.update({"hsplit": lambda m, x, d, k: m.hsplit(x, [1])})
MULTI.update(
    {
        "unique": lambda m, x, d, k: x.unique(return_inverse=True, return_counts=k),
        "unique_consecutive": lambda m, x, d, k: x.unique_consecutive(return_counts=True),
        "frexp": lambda m, x, d, k: x.frexp(),
    }
)
INDEX_OPS.update(
    {
        "index_add": lambda m, x, b, d, p: x.index_add(
            _dim(x, d),
            m.tensor(_pair(x, d, p)),
            x.index_select(_dim(x, d), m.tensor(_pair(x, d, p))) * b.sum(),
            alpha=2,
        ),
        "index_copy": lambda m, x, b, d, p: x.index_copy(
            _dim(x, d),
            m.tensor([p % _size(x, d)]),
            x.index_select(_dim(x, d), m.tensor([0])) * b.sum(),
        ),
        "put": lambda m, x, b, d, p: x.put(
            m.tensor([p % x.numel()]), b.sum().to(x.dtype).reshape(1)
        ),
        "put_acc": lambda m, x, b, d, p: x.put(
            m.tensor([p % x.numel(), p % x.numel()]),
            (x.flatten()[:2] * b.sum()).to(x.dtype).expand(2),
            accumulate=True,
        ),
        "masked_scatter": lambda m, x, b, d, p: x.masked_scatter(
            mask_like(m, x, p), (x * 2 + b.sum()).flatten()
        ),
        "searchsorted": lambda m, x, b, d, p: m.searchsorted(
            x.flatten().sort()[0], b, right=bool(p % 2)
        ),
        "bucketize": lambda m, x, b, d, p: m.bucketize(b, x.flatten().sort()[0]),
    }
)
MORE_INPLACE.update(
    {
        "index_add_": lambda m, x, o, k: x.index_add_(0, m.tensor([0]), _full(x, o)[:1]),
        "index_copy_": lambda m, x, o, k: x.index_copy_(0, m.tensor([0]), _full(x, o)[:1]),
        "put_": lambda m, x, o, k: x.put_(m.tensor([0]), o.sum().to(x.dtype).reshape(1)),
        # a source sharing x's memory raises (test_masked_scatter_from_its_own_memory_raises)
        "masked_scatter_": lambda m, x, o, k: x.masked_scatter_(
            mask_like(m, x, 1), _full(x, o).flatten().clone()
        ),
        "deg2rad_": lambda m, x, o, k: x.deg2rad_(),
        "xlogy_": lambda m, x, o, k: x.xlogy_(o.abs() + 0.5),
        "renorm_": lambda m, x, o, k: x.renorm_(2, 0, 1.0),
        "fill_diagonal_": lambda m, x, o, k: x.fill_diagonal_(k),
        "float_power_": lambda m, x, o, k: x.float_power_(2),
        "sinc_": lambda m, x, o, k: x.sinc_(),
    }
)


# In-place writes that keep exact values exact (``Interpreter.exact``).
EXACT_INPLACE = {"add_", "add_scalar_", "mul_", "mul_scalar_", "copy_", "zero_", "fill_"}
EXACT_INPLACE |= {"clamp_", "masked_fill_", "masked_fill_t_", "index_fill_", "scatter_"}
EXACT_INPLACE |= {"tril_", "triu_", "neg_", "abs_", "relu_", "sub_", "fill_t_", "F_relu_inplace"}
EXACT_INPLACE |= {"iadd", "imul_scalar"}


_EXACT_STEPS = {"new", "view", "index", "join", "where", "shape", "convert", "setitem"}
_EXACT_OPS = {
    "unary": {"neg", "abs", "clone", "contiguous", "flip", "relu"},
    "scalar": {"add", "radd", "rsub", "clamp_min", "clamp_max", "clamp"},
    "binary": {"add", "sub", "maximum", "minimum", "fmax", "clamp_min_t", "clamp_max_t"},
    "reduce": {"amax", "max_dim", "min_all", "amin", "amax_dims"},
    "multi": EXACT_MULTI | set(MULTI_VIEWS),
    "ternary": {"clamp_t", "where_t"},
    "index_op": set(INDEX_OPS) - {"scatter_reduce", "searchsorted", "bucketize"},
    "disc": set(DISCONT) - INEXACT_DISCONT,
    "inplace": EXACT_INPLACE,
}


def keeps_exact(step):
    """Whether ``step`` turns exact operands into exact results (``Interpreter.exact``)."""
    return step[0] in _EXACT_STEPS or len(step) > 1 and step[1] in _EXACT_OPS.get(step[0], ())


class Interpreter:
    """Runs program steps with one module; ``pool`` holds every tensor the program made."""

    def __init__(self, m):
        self.m = m
        self.pool = []
        # Which storage each pool tensor may share (views inherit their source's family).
        self.family = []
        # Whether each pool tensor's values went through float32 arithmetic (a float64 result
        # of float32 operands carries their rounding): compared with float32's tolerance.
        self.f32 = []
        # Whether each pool tensor holds values both libraries compute bit for bit (made from
        # the program's exact inputs by selections, sign changes and exact sums): only these
        # reach discontinuous ops (DISCONT), whose results one ulp upstream could change.
        self.exact = []
        self.touched = set()  # pool positions the current step read
        self.modes = []  # open grad-mode blocks, innermost last

    def close(self):
        while self.modes:
            self.modes.pop().__exit__(None, None, None)

    def at(self, i):
        self.touched.add(i % len(self.pool))
        return self.pool[i % len(self.pool)]

    def step(self, step):
        """Run one step; its return value is compared between the libraries."""
        self.touched = set()
        try:
            return getattr(self, "_" + step[0])(*step[1:])
        finally:
            for t in self.pool[len(self.family) :]:
                same = [f for u, f in zip(self.pool, self.family) if u is t]
                self.family.append(same[0] if same else len(self.family))
            f32 = any(
                str(self.pool[k].dtype).endswith("float32") or k < len(self.f32) and self.f32[k]
                for k in self.touched
            )
            self.f32.extend([f32] * (len(self.pool) - len(self.f32)))
            if f32 and step[0] in ("inplace", "setitem"):  # the write reaches the whole storage
                written = {self.family[k] for k in self.touched}
                self.f32 = [t or f in written for t, f in zip(self.f32, self.family)]
            exact = keeps_exact(step) and all(self.exact[k] for k in self.touched)
            self.exact.extend([exact] * (len(self.pool) - len(self.exact)))
            if not exact and step[0] in ("inplace", "setitem"):
                written = {self.family[k] for k in self.touched}
                self.exact = [e and f not in written for e, f in zip(self.exact, self.family)]

    # -- creation and ops (their results join the pool) ---------------------------------------

    def _new(self, dtype, shape, rg, seed):
        m = self.m
        shape = SHAPES[shape % len(SHAPES)]
        rng = np.random.RandomState(seed)
        if dtype == "int64":
            values = rng.randint(-3, 4, size=shape)
        else:
            values = np.round(rng.uniform(-2, 2, size=shape) * 16) / 16  # exact in float32
            if SPECIAL and seed % 3 == 0:
                values = np.where(
                    rng.uniform(size=shape) < 0.3, rng.choice(_SPECIAL, shape), values
                )
        self.pool.append(m.tensor(values.tolist(), dtype=getattr(m, dtype), requires_grad=rg))

    def _unary(self, name, i):
        self.pool.append(UNARY[name](self.m, self.at(i)))

    def _scalar(self, name, i, k):
        self.pool.append(SCALAR_OPS[name](self.at(i), k))

    def _operand(self, a, j, raw):
        """``pool[j]``, or its sum where it would not broadcast with ``a`` (unless ``raw``)."""
        b = self.at(j)
        return b if raw or broadcastable(a.shape, b.shape) else b.sum()

    def _binary(self, name, i, j, raw):
        a = self.at(i)
        self.pool.append(BINARY[name](self.m, a, self._operand(a, j, raw)))

    def _reduce(self, name, i, d, keepdim):
        self.pool.append(REDUCE[name](self.m, self.at(i), d, keepdim))

    def _view(self, name, i, p, q):
        self.pool.append(VIEWS[name](self.at(i), p, q))
        self.family.append(self.family[i % len(self.family)])

    def _index(self, i, kind, p, q):
        x = self.at(i)
        self.pool.append(x[index_of(self.m, x, kind, p, q)])
        self.family.append(self.family[i % len(self.family)])

    def _join(self, name, i, j, d):
        a, b = self.at(i), self.at(j)
        if a.shape != b.shape:
            b = a
        if name == "cat":
            self.pool.append(self.m.cat([a, b], _dim(a, d)))
        else:
            self.pool.append(self.m.stack([a, b], d % (a.dim() + 1)))

    def _where(self, i, j, p):
        a = self.at(i)
        self.pool.append(self.m.where(mask_like(self.m, a, p), a, self._operand(a, j, False)))

    def _matmul(self, i, j, raw):
        a, b = self.at(i), self.at(j)
        if not raw:
            ok = a.dim() >= 1 and b.dim() >= 1 and a.shape[-1] == b.shape[-2 if b.dim() > 1 else 0]
            if not ok:
                b = a.mT if a.dim() >= 2 else a
        self.pool.append(a @ b)

    def _multi(self, name, i, d, keepdim):
        x = self.at(i)
        if name in MULTI_VIEWS:
            out = MULTI_VIEWS[name](self.m, x, d, keepdim)
            self.pool.extend(out)
            self.family.extend([self.family[i % len(self.family)]] * len(out))
        else:
            out = MULTI[name](self.m, x, d, keepdim)
            self.pool.extend(out)
        return [type(out).__name__, len(out)]

    def _activation(self, name, i):
        self.pool.append(ACTIVATIONS[name](self.m, self.at(i)))

    def _ternary(self, name, i, j, n, raw):
        a = self.at(i)
        b = self._operand(a, j, raw)
        c = self.at(n)
        if not raw and not broadcastable(np.broadcast_shapes(a.shape, b.shape), c.shape):
            c = c.sum()
        self.pool.append(TERNARY[name](self.m, a, b, c))

    def _exact_at(self, i):
        """The ``i``-th exact tensor of the pool (there is one unless writes spoiled them all)."""
        exact = [n for n, e in enumerate(self.exact) if e]
        return self.at(exact[i % len(exact)]) if exact else None

    def _disc(self, name, i, j, k):
        x, b = self._exact_at(i), self._exact_at(j)
        if x is None:
            return None
        if not broadcastable(x.shape, b.shape):
            b = b.sum()
        self.pool.append(DISCONT[name](self.m, x, b, k))

    def _shape(self, name, i, p, q):
        self.pool.append(SHAPE_OPS[name](self.m, self.at(i), p, q))

    def _convert(self, name, i):
        x = self.at(i)
        if (
            name in ("long", "int")
            and x.dtype.is_floating_point
            and not self.exact[i % len(self.pool)]
        ):
            # truncation is discontinuous: one ulp of an inexact value can change it (seed 193:
            # a matmul's 0.99999994 against torch's 1.0), so it reads an exact tensor, as DISCONT
            x = self._exact_at(i)
            if x is None:
                return None
        self.pool.append(CONVERT[name](self.m, x))

    def _index_op(self, name, i, j, d, p):
        x, b = self.at(i), self.at(j)
        if name in ("scatter", "scatter_add", "scatter_reduce") and (
            b.shape != x.shape or b.dtype != x.dtype
        ):
            b = _full(x, b.sum())
        self.pool.append(INDEX_OPS[name](self.m, x, b, d, p))

    # -- in-place writes ---------------------------------------------------------------------

    def _inplace(self, name, i, j, k):
        x = self.at(i)
        other = self.at(j)
        if not fits_into(other.shape, x.shape):
            other = other.sum()
        if name == "add_":
            x.add_(other)
        elif name == "add_scalar_":
            x.add_(k)
        elif name == "sub_alpha_":
            x.sub_(other, alpha=k)
        elif name == "mul_":
            x.mul_(other)
        elif name == "mul_scalar_":
            x.mul_(k)
        elif name == "div_":
            x.div_(other)
        elif name == "copy_":
            x.copy_(other)
        elif name == "zero_":
            x.zero_()
        elif name == "fill_":
            x.fill_(k)
        elif name == "clamp_":
            x.clamp_(-abs(k) - 0.25, abs(k) + 0.25)
        elif name == "exp_":
            x.exp_()
        elif name == "sin_":
            x.sin_()
        elif name == "sigmoid_":
            x.sigmoid_()
        elif name == "pow_":
            x.pow_(2)
        else:
            MORE_INPLACE[name](self.m, x, other, k)

    def _setitem(self, i, kind, p, q, j, use_tensor):
        m = self.m
        x = self.at(i)
        idx = index_of(m, x, kind, p, q)
        if use_tensor:
            value = self.at(j)
            with contextlib.suppress(Exception):  # an index error is raised by the write itself
                if not fits_into(value.shape, x.detach()[idx].shape):
                    value = value.sum()
        else:
            value = SCALARS[j % len(SCALARS)]
        x[idx] = value

    # -- autograd state ----------------------------------------------------------------------

    def _flag(self, name, i, k):
        x = self.at(i)
        if name == "detach_":
            x.detach_()
        elif name == "requires_grad_":
            x.requires_grad_(bool(k % 2))
        elif name == "retain_grad":
            x.retain_grad()
        elif name == "hook":
            scale = HOOK_SCALES[k % len(HOOK_SCALES)]
            x.register_hook(lambda g: g * scale)
        elif name == "post_acc_hook":
            scale = HOOK_SCALES[k % len(HOOK_SCALES)]
            x.register_post_accumulate_grad_hook(lambda t: t.grad.mul_(scale))
        elif name == "node_prehook":
            scale = HOOK_SCALES[k % len(HOOK_SCALES)]
            x.grad_fn.register_prehook(
                lambda gos: tuple(None if g is None else g * scale for g in gos)
            )
        elif name == "node_hook":
            scale = HOOK_SCALES[k % len(HOOK_SCALES)]
            x.grad_fn.register_hook(
                lambda gis, gos: tuple(None if g is None else g * scale for g in gis)
            )
        elif name == "grad_none":
            x.grad = None
        elif name == "grad_zero_":
            if x.grad is not None:
                x.grad.zero_()
        else:
            raise AssertionError(name)

    def _backward(self, i, retain, kind):
        x = self.at(i)
        if kind == 0:
            x.backward(retain_graph=retain)  # raises unless x has one element
        elif kind == 1:
            x.sum().backward(retain_graph=retain)
        elif kind == 2:
            x.backward(self.m.full_like(x, 0.5), retain_graph=retain)
        else:  # the gradients get graphs of their own (double backward through ``grad_of``)
            x.sum().backward(retain_graph=retain, create_graph=True)

    def _grad_of(self, i):
        """``x.grad`` itself joins the pool (with a graph after a create_graph backward): its
        version shows the engine's in-place sums (test_grad_summed_in_place_by_the_engine...)."""
        g = self.at(i).grad
        if g is not None:
            self.pool.append(g)

    def _grad(self, i, inputs, retain, allow_unused, create_graph=False):
        x = self.at(i)
        out = x if x.dim() == 0 else x.sum()
        got = self.m.autograd.grad(
            out,
            [self.at(j) for j in inputs],
            retain_graph=retain,
            allow_unused=allow_unused,
            create_graph=create_graph,
        )
        # PyTorch returns some gradients as views of the gradient it expanded (writes to them
        # raise: test_grad_of_sum_is_an_expanded_view); leafgrad marks them expanded but not as
        # views (``_is_view()``), and does not follow view-making backwards (``t``, ``view``)
        # that keep them expanded in PyTorch: cloned before they join the pool.
        self.pool.extend(g.clone() for g in got if g is not None)
        return list(got)

    # -- grad-mode blocks --------------------------------------------------------------------

    def _enter(self, mode):
        m = self.m
        ctx = {
            "no_grad": m.no_grad,
            "enable_grad": m.enable_grad,
            "inference_mode": m.inference_mode,
            "set_grad_enabled_false": lambda: m.set_grad_enabled(False),
            "saved_identity": lambda: m.autograd.graph.saved_tensors_hooks(
                lambda t: t, lambda t: t
            ),
            "saved_clone": lambda: m.autograd.graph.saved_tensors_hooks(
                lambda t: t.clone(), lambda t: t
            ),
            "save_on_cpu": lambda: m.autograd.graph.save_on_cpu(),
        }[mode]()
        ctx.__enter__()
        self.modes.append(ctx)

    def _exit(self):
        self.modes.pop().__exit__(None, None, None)


def flatten(program):
    """The steps of ``program`` with each grad-mode block opened and closed by steps of its own."""
    out = []
    for step in program:
        if step[0] == "block":
            out.append(("enter", step[1]))
            out.extend(flatten(step[2]))
            out.append(("exit",))
        else:
            out.append(step)
    return out


# -- comparison -------------------------------------------------------------------------------

# Float32 chains of transcendental ops need not match bit for bit (XLA and PyTorch use different
# polynomial approximations and summation orders); the error can grow along a chain, so the
# tolerance is relative to the largest value of the tensor compared.
TOL = {"float32": (1e-4, 1e-5), "float64": (1e-9, 1e-10)}


def same_values(t, g, what, f32=False):
    """``f32``: ``t`` went through float32 arithmetic (``Interpreter.f32``)."""
    a, b = host(t), host(g)
    assert str(g.dtype) == str(t.dtype), f"{what}: dtype torch {t.dtype}, leafgrad {g.dtype}"
    assert a.shape == b.shape, f"{what}: shape torch {a.shape}, leafgrad {b.shape}"
    name = str(t.dtype).removeprefix("torch.")
    if f32 and name == "float64":
        name = "float32"
    if name not in TOL:
        np.testing.assert_array_equal(b, a, err_msg=what)
        return
    rtol, atol = TOL[name]
    finite = np.abs(a[np.isfinite(a)])
    scale = max(1.0, float(finite.max())) if finite.size else 1.0
    np.testing.assert_allclose(b, a, rtol=rtol, atol=atol * scale, err_msg=what)


def _attr(fn):
    """``fn()``, or what it raised as ``(type name, text)``."""
    try:
        return fn()
    except Exception as exc:  # noqa: BLE001
        return (type(exc).__name__, str(exc).split("\n")[0])


# Every node's ``_saved_<name>`` attributes are compared after every step too (names, numbers,
# tensors by shape and dtype, the errors reading them raises); LEAFGRAD_FUZZ_SAVED=0 turns that
# off (to look at other mismatches first).
COMPARE_SAVED = os.environ.get("LEAFGRAD_FUZZ_SAVED", "1") != "0"


def _saved_value(v):
    if isinstance(v, (torch.Tensor, lg.Tensor)):
        return ("tensor", tuple(v.shape), str(v.dtype))
    if isinstance(v, tuple) and any(isinstance(e, (torch.Tensor, lg.Tensor)) for e in v):
        return tuple(_saved_value(e) for e in v)
    return repr(v)


def _saved(fn):
    """A node's ``_saved_<name>`` attributes: every name, and each value (tensors by shape and
    dtype; their values are compared through the results and gradients)."""
    if fn is None or isinstance(fn, tuple):
        return None
    names = sorted(a for a in dir(fn) if a.startswith("_saved_"))
    return {n: _attr(lambda n=n: _saved_value(getattr(fn, n))) for n in names}


TENSORS = (torch.Tensor, lg.Tensor)


def state(x):
    """Everything compared about one tensor; ``.grad`` is read with warnings recorded."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        grad = _attr(lambda: x.grad)
    fn = _attr(lambda: x.grad_fn)
    return {
        "saved": _saved(fn) if COMPARE_SAVED else None,
        "is_leaf": _attr(lambda: x.is_leaf),
        "requires_grad": x.requires_grad,
        "grad_fn": fn if isinstance(fn, tuple) else fn and type(fn).__name__,
        "retains_grad": _attr(lambda: x.retains_grad),
        "is_view": x._is_view(),
        "stride": _attr(lambda: x.stride()),
        "version": _attr(lambda: x._version),
        "is_inference": x.is_inference(),
        # Note [Zero gradients] in leafgrad/_zero.py
        "is_zero": _attr(lambda: x._is_zerotensor()),
        "grad_is_zero": _attr(lambda: isinstance(grad, TENSORS) and grad._is_zerotensor()),
        "grad": grad,
        "grad_warnings": [str(w.message).split("\n")[0] for w in caught],
    }


def same_result(t, g, what, f32=False):
    """``f32``: the step read tensors that went through float32 arithmetic."""
    if isinstance(t, torch.Tensor):
        assert isinstance(g, lg.Tensor), f"{what}: torch {t!r}, leafgrad {g!r}"
        same_values(t, g, what, f32)
    elif isinstance(t, Raised):
        assert isinstance(g, Raised), f"{what}: torch raised {t!r}, leafgrad gave {g!r}"
        same_error(t, g)
    elif isinstance(t, list):
        assert isinstance(g, list) and len(g) == len(t), f"{what}: torch {t!r}, leafgrad {g!r}"
        for n, (a, b) in enumerate(zip(t, g)):
            same_result(a, b, f"{what}[{n}]", f32)
    else:
        assert t == g, f"{what}: torch {t!r}, leafgrad {g!r}"


def refused_by_design(t, g) -> bool:
    """Whether leafgrad refused, by design, a step whose PyTorch value depends on the machine
    (Note [Order-dependent writes] in leafgrad/ops/inplace.py): the program ends there."""
    return (
        isinstance(g, Raised)
        and not isinstance(t, Raised)
        and isinstance(g.exc, NotImplementedError)
        and str(g.exc) == lg._errors.ORDER_DEPENDENT_WRITE
    )


def check(program):
    """Run ``program`` in torch and leafgrad side by side, comparing after every step."""
    steps = flatten(program)
    ti, gi = Interpreter(torch), Interpreter(lg)
    try:
        for n, step in enumerate(steps):
            where = f"step {n} {step!r}"
            t, tw = call(lambda _, s=step: ti.step(s), torch)
            g, gw = call(lambda _, s=step: gi.step(s), lg)
            if refused_by_design(t, g):
                return
            if isinstance(t, Raised) or isinstance(g, Raised):
                assert isinstance(t, Raised), f"{where}: torch returned, leafgrad raised {g!r}"
                assert isinstance(g, Raised), f"{where}: torch raised {t!r}, leafgrad did not"
                try:
                    same_error(t, g)
                except AssertionError as exc:
                    raise AssertionError(f"{where}: {exc}") from None
            else:
                same_result(t, g, where, any(ti.f32[k] for k in ti.touched))
            tw1, gw1 = [w.split("\n")[0] for w in tw], [w.split("\n")[0] for w in gw]
            assert gw1 == tw1, f"{where}: warnings torch {tw}, leafgrad {gw}"
            assert len(gi.pool) == len(ti.pool), f"{where}: pool sizes differ"
            # A float64 gradient may have flowed through float32 arithmetic (a float64 0-d
            # operand of a float32 op gets its gradient cast back up): float32's tolerance then.
            grads_f32 = any(str(t.dtype) == "torch.float32" and t.requires_grad for t in ti.pool)
            for k, (a, b) in enumerate(zip(ti.pool, gi.pool)):
                what = f"{where}, tensor {k}"
                same_values(a, b, what, ti.f32[k])
                sa, sb = state(a), state(b)
                ga, gb = sa.pop("grad"), sb.pop("grad")
                assert sb == sa, f"{what}:\n torch    {sa}\n leafgrad {sb}"
                if not (isinstance(ga, torch.Tensor) and isinstance(gb, lg.Tensor)):
                    assert gb == ga, f"{what}: grad torch {ga!r}, leafgrad {gb!r}"
                else:
                    same_result(ga, gb, what + " .grad", grads_f32)
    finally:
        ti.close()
        gi.close()


# -- strategies -------------------------------------------------------------------------------

_i = st.integers(0, 40)
_k = st.sampled_from(SCALARS)

new_step = st.tuples(
    st.just("new"),
    st.sampled_from(DTYPES[:2]) | st.sampled_from(DTYPES),
    st.integers(0, len(SHAPES) - 1),
    st.booleans(),
    st.integers(0, 2**16),
)

_simple = st.one_of(
    st.tuples(st.just("unary"), st.sampled_from(sorted(UNARY)), _i),
    st.tuples(st.just("scalar"), st.sampled_from(sorted(SCALAR_OPS)), _i, _k),
    st.tuples(st.just("binary"), st.sampled_from(sorted(BINARY)), _i, _i, st.booleans()),
    st.tuples(st.just("reduce"), st.sampled_from(sorted(REDUCE)), _i, _i, st.booleans()),
    st.tuples(st.just("view"), st.sampled_from(sorted(VIEWS)), _i, _i, _i),
    st.tuples(st.just("view"), st.sampled_from(sorted(VIEWS)), _i, _i, _i),
    st.tuples(st.just("index"), _i, st.integers(0, 7), _i, _i),
    st.tuples(st.just("join"), st.sampled_from(["cat", "stack"]), _i, _i, _i),
    st.tuples(st.just("where"), _i, _i, _i),
    st.tuples(st.just("matmul"), _i, _i, st.booleans()),
    st.tuples(
        st.just("inplace"),
        st.sampled_from(
            [
                "add_",
                "add_scalar_",
                "sub_alpha_",
                "mul_",
                "mul_scalar_",
                "div_",
                "copy_",
                "zero_",
                "fill_",
                "clamp_",
                "exp_",
                "sin_",
                "sigmoid_",
                "pow_",
            ]
        ),
        _i,
        _i,
        _k,
    ),
    st.tuples(st.just("setitem"), _i, st.integers(0, 7), _i, _i, _i, st.booleans()),
    st.tuples(
        st.just("flag"),
        st.sampled_from(
            [
                "detach_",
                "requires_grad_",
                "retain_grad",
                "hook",
                "grad_none",
                "grad_zero_",
                "post_acc_hook",
                "node_prehook",
                "node_hook",
            ]
        ),
        _i,
        _i,
    ),
    st.tuples(st.just("backward"), _i, st.booleans(), st.integers(0, 3)),
    st.tuples(st.just("backward"), _i, st.booleans(), st.integers(0, 3)),
    st.tuples(
        st.just("grad"),
        _i,
        st.lists(_i, min_size=1, max_size=3).map(tuple),
        st.booleans(),
        st.booleans(),
        st.booleans(),
    ),
    st.tuples(st.just("grad_of"), _i),
    new_step,
)

# The broader ops: one branch, so the steps above keep most of each program.
_more = st.one_of(
    st.tuples(
        st.just("multi"),
        st.sampled_from(sorted(MULTI) + sorted(MULTI_VIEWS)),
        _i,
        _i,
        st.booleans(),
    ),
    st.tuples(st.just("activation"), st.sampled_from(sorted(ACTIVATIONS)), _i),
    st.tuples(st.just("ternary"), st.sampled_from(sorted(TERNARY)), _i, _i, _i, st.booleans()),
    st.tuples(st.just("disc"), st.sampled_from(sorted(DISCONT)), _i, _i, _k),
    st.tuples(st.just("shape"), st.sampled_from(sorted(SHAPE_OPS)), _i, _i, _i),
    st.tuples(st.just("convert"), st.sampled_from(sorted(CONVERT)), _i),
    st.tuples(st.just("index_op"), st.sampled_from(sorted(INDEX_OPS)), _i, _i, _i, _i),
    st.tuples(st.just("inplace"), st.sampled_from(sorted(MORE_INPLACE)), _i, _i, _k),
)
_simple = _simple | _more

_modes = st.sampled_from(MODES) | st.sampled_from(SAVED_HOOK_MODES)
_block1 = st.tuples(st.just("block"), _modes, st.lists(_simple, max_size=4))
_block2 = st.tuples(st.just("block"), _modes, st.lists(_simple | _block1, max_size=4))

programs = st.builds(
    lambda first, rest: first + rest,
    st.lists(new_step, min_size=1, max_size=3),
    st.lists(st.one_of(_simple, _simple, _simple, _block2), min_size=1, max_size=14),
)
