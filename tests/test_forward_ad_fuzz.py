"""Random forward-mode AD programs against PyTorch (Note [Forward views] in
leafgrad/autograd/forward_ad.py): dual and plain tensors, views of them, ops, in-place writes
through views and bases, ``make_dual`` and ``unpack_dual`` inside one dual level. After every
step each tensor the program made is compared: primal values and version, whether it has a
tangent, the tangent's values and strides, and any error raised.

``LEAFGRAD_FUZZ_SEED`` and ``LEAFGRAD_FUZZ_EXAMPLES`` run other and more programs, as for
test_fuzz.py. No tensor requires grad, so every tangent is one leafgrad computes exactly as
PyTorch's formulas do (forward-over-reverse is refused by design)."""

import numpy as np
import torch
from conftest import Raised, call
from fuzz_programs import VIEWS, fuzzed
from hypothesis import given
from hypothesis import strategies as st

import leafgrad as lg

_RNG = np.random.default_rng(0)
_A = _RNG.standard_normal((2, 3))
_TA = _RNG.standard_normal((2, 3))
_B = _RNG.standard_normal(3)
_TB = _RNG.standard_normal(3)
_C = _RNG.standard_normal((2, 3))
# ties, signed zeros, a NaN and an infinity: where PyTorch's forward formulas choose
_D = np.array([[np.nan, 0.0, -0.0], [np.inf, 1.0, 1.0]])
_TD = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]])

UNARY = {
    "sin": lambda x: x.sin(),
    "mul2": lambda x: x * 2,
    "neg": lambda x: -x,
    "clone": lambda x: x.clone(),
    "square": lambda x: x * x,
    "sum0": lambda x: x.sum(0) if x.dim() else x * 1,
    "contiguous": lambda x: x.contiguous(),
    "flip": lambda x: x.flip(0) if x.dim() else x + 0,
    "rsub": lambda x: 1 - x,
    "add_number": lambda x: x + 0.5,
    "exp": lambda x: x.exp(),
    "relu": lambda x: x.relu(),
    "clamp": lambda x: x.clamp(-0.5, 0.5),
    "to": lambda x: x.to(x.dtype),
    "abs": lambda x: x.abs(),
    "amax0": lambda x: x.amax(0),
    "max_all": lambda x: x.max(),
    "min_last": lambda x: x.min(-1)[0] if x.dim() else x.min(),
    "prod0": lambda x: x.prod(0) if x.dim() else x.prod(),
    "norm": lambda x: x.norm(),
    "softmax_last": lambda x: x.softmax(-1),
    "logsumexp_last": lambda x: x.logsumexp(-1),
    "cumsum_last": lambda x: x.cumsum(-1),
    "mean": lambda x: x.mean(),
    "sort_last": lambda x: x.sort(-1)[0],
    "sqrt_abs": lambda x: x.abs().sqrt(),
    "tanh": lambda x: x.tanh(),
    "sigmoid": lambda x: x.sigmoid(),
    "log_abs": lambda x: x.abs().log(),
    "nan_to_num": lambda x: x.nan_to_num(),
    "floor": lambda x: x.floor(),
    "sign": lambda x: x.sign(),
    "pow_half": lambda x: x.pow(0.5),
    "median": lambda x: x.median(),
}
BINARY = {
    "add": lambda a, b: a + b,
    "mul": lambda a, b: a * b,
    "where": lambda a, b: a.where(a > 0, b),
    "sub_alpha": lambda a, b: a.sub(b, alpha=2),
    "div": lambda a, b: a / (b * b + 1),
    "clamp_min": lambda a, b: a.clamp(min=b),
    "lerp": lambda a, b: a.lerp(b, 0.25),
    "addcmul": lambda a, b: a.addcmul(b, b),
    "maximum": lambda a, b: a.maximum(b),
    "minimum": lambda a, b: a.minimum(b),
    "fmax": lambda a, b: a.fmax(b),
    "atan2": lambda a, b: a.atan2(b),
    "copysign": lambda a, b: a.copysign(b),
    "hypot": lambda a, b: a.hypot(b),
    "pow": lambda a, b: a.abs().pow(b),
    "where_nan": lambda a, b: a.where(a != a, b),
    "clamp_max": lambda a, b: a.clamp(max=b),
}
INPLACE = {
    "copy_": lambda a, b: a.copy_(b),
    "add_": lambda a, b: a.add_(b),
    "mul_": lambda a, b: a.mul_(b),
    "sub_alpha_": lambda a, b: a.sub_(b, alpha=0.5),
    "div_": lambda a, b: a.div_(b * b + 1),
    "clamp_min_": lambda a, b: a.clamp_(min=b),
    "addcmul_": lambda a, b: a.addcmul_(b, b, value=0.5),
    "lerp_": lambda a, b: a.lerp_(b, 0.5),
    "copysign_": lambda a, b: a.copysign_(b),
}
FILLS = {
    "zero_": lambda a: a.zero_(),
    "fill_": lambda a: a.fill_(1.5),
    "mul_scalar_": lambda a: a.mul_(3.0),
    "sin_": lambda a: a.sin_(),
    "t_": lambda a: a.t_() if a.dim() <= 2 else a,
    "unsqueeze_": lambda a: a.unsqueeze_(0),
    "squeeze_": lambda a: a.squeeze_(),
    "masked_fill_": lambda a: a.masked_fill_(a > 0, 2.0),
    "clamp_": lambda a: a.clamp_(-0.5, 0.5),
    "setitem_number": lambda a: a.__setitem__(..., 0.5),
}
RESHAPES = {"t_", "unsqueeze_", "squeeze_"}
VIEW_NAMES = sorted(set(VIEWS) - {"reshape_rev", "reshape_flat"})  # reshape may copy

_index = st.integers(0, 15)
steps = st.one_of(
    st.tuples(st.just("view"), _index, st.sampled_from(VIEW_NAMES), _index, _index),
    st.tuples(st.just("unary"), _index, st.sampled_from(sorted(UNARY))),
    st.tuples(st.just("binary"), _index, _index, st.sampled_from(sorted(BINARY))),
    st.tuples(
        st.just("inplace"), _index, _index, st.sampled_from(sorted(INPLACE) + ["setitem_first"])
    ),
    st.tuples(st.just("fill"), _index, st.sampled_from(sorted(FILLS))),
    st.tuples(st.just("make_dual"), _index),
    st.tuples(st.just("primal"), _index),
)
programs = st.lists(steps, min_size=1, max_size=12)


def _broadcasts_into(src, dst) -> bool:
    if src.dim() > dst.dim():
        return False
    return all(s in (1, d) for s, d in zip(reversed(src.shape), reversed(dst.shape)))


def _run(m, program):
    """Run ``program`` with module ``m``; the state after each step (or what it raised)."""
    f = m.autograd.forward_ad
    t = lambda a: m.tensor(a, dtype=m.float64)  # noqa: E731
    states = []
    with f.dual_level():
        pool = [f.make_dual(t(_A), t(_TA)), m.zeros(2, 3, dtype=m.float64), t(_B), t(_C)]
        pool.append(f.make_dual(t(_B), t(_TB)))
        pool += [f.make_dual(t(_D), t(_TD)), t(_D)]
        # the memory each tensor shares: an in-place op whose operand shares its target's is
        # skipped (PyTorch's in-place formulas then read a tangent they already wrote)
        family = [0, 1, 2, 3, 2, 5, 6]
        for step in program:
            kind, i = step[0], step[1] % len(pool)
            x = pool[i]
            size = len(pool)
            shared = lambda j: family[j % size] == family[i]  # noqa: B023, E731
            try:
                if kind == "view":
                    pool.append(VIEWS[step[2]](x, step[3], step[4]))
                elif kind == "unary":
                    pool.append(UNARY[step[2]](x))
                elif kind in ("binary", "inplace"):
                    y = pool[step[2] % len(pool)]
                    if kind == "binary":
                        if not (_broadcasts_into(y, x) or _broadcasts_into(x, y)):
                            continue
                        pool.append(BINARY[step[3]](x, y))
                    elif step[3] == "setitem_first":
                        if not x.dim() or not _broadcasts_into(y, x[0]) or shared(step[2]):
                            continue
                        x[0] = y
                    else:
                        if not _broadcasts_into(y, x) or shared(step[2]):
                            continue
                        INPLACE[step[3]](x, y)
                elif kind == "fill":
                    if step[2] in RESHAPES and family.count(family[i]) > 1:
                        # PyTorch's lazy view tangent may be its base's tangent object itself,
                        # which an in-place shape change then reshapes under the view
                        continue
                    FILLS[step[2]](x)
                elif kind == "make_dual":
                    if f.unpack_dual(x).tangent is not None:
                        continue
                    pool.append(f.make_dual(x, m.ones_like(x) * 0.25))
                else:
                    pool.append(f.unpack_dual(x).primal)
            except Exception as exc:  # compared, and the program ends
                states.append(("raised", type(exc), str(exc).split("\n")[0]))
                break
            for new in pool[size:]:
                shares = kind in ("view", "primal", "make_dual") or new is x
                family.append(family[i] if shares else len(family))
            states.append([_state(f, p) for p in pool])
    return states


def _state(f, x):
    primal, tangent = f.unpack_dual(x)
    values = np.array(primal.detach().numpy())
    if tangent is None:
        return values, x._version, None
    # (not the tangent's version: PyTorch's first tangent of a tensor written in place is its
    # formula's result, or a copy of it where that is laid out otherwise, which bumps it)
    return values, x._version, np.array(tangent.numpy()), tuple(tangent.shape), tangent.stride()


def _same_state(a, b, where):
    assert len(a) == len(b), where
    for k, (s, g) in enumerate(zip(a, b)):
        assert (s[2] is None) == (g[2] is None), f"{where}, tensor {k}: tangent {s[2]} vs {g[2]}"
        np.testing.assert_allclose(g[0], s[0], rtol=1e-12, atol=1e-12, err_msg=f"{where} {k}")
        assert g[1] == s[1], f"{where}, tensor {k}: version {g[1]} vs {s[1]}"
        if s[2] is not None:
            np.testing.assert_allclose(g[2], s[2], rtol=1e-12, atol=1e-12, err_msg=where)
            assert g[3:] == s[3:], f"{where}, tensor {k}: tangent shape/strides"


def check(program):
    ours, _ = call(lambda m: _run(m, program), lg)
    theirs, _ = call(lambda m: _run(m, program), torch)
    assert not isinstance(theirs, Raised), theirs
    assert not isinstance(ours, Raised), ours
    for n, (s, g) in enumerate(zip(theirs, ours)):
        where = f"step {n}: {program[n]}"
        if isinstance(s, tuple) or isinstance(g, tuple):
            if isinstance(g, tuple) and g[2].startswith("leafgrad: "):
                return  # refused by design (Note [Forward AD])
            assert isinstance(s, tuple) and isinstance(g, tuple), f"{where}: {s!r:.200} {g!r:.200}"
            assert g[1:] == s[1:], f"{where}: torch raised {s[1:]}, leafgrad {g[1:]}"
            return
        _same_state(s, g, where)
    assert len(theirs) == len(ours)


@fuzzed(60)
@given(program=programs)
def test_random_forward_ad_programs_match_torch(program):
    check(program)
