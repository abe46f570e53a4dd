"""Random autograd programs for the differential fuzz test: strategies, one interpreter, a checker.

A program is a list of plain tuples (so hypothesis can shrink it and print it). ``Interpreter(m)``
runs it step by step with module ``m`` (torch or leafgrad); every argument that depends on a shape
(a dim, an index, a broadcastable operand) is derived from the tensors' shapes, which the checker
has already compared, so both libraries run the same calls. ``check(program)`` runs both
interpreters in lockstep and, after every step, compares the step's error (type and text), its
warnings, its result, and the state of every tensor in the pool: values, dtype, shape, ``is_leaf``,
``requires_grad``, ``grad_fn`` name, ``.grad``, ``retains_grad``, ``_is_view()`` and ``_version``.
"""

from __future__ import annotations

import contextlib
import warnings

import hypothesis.strategies as st
import numpy as np
import torch
from conftest import Raised, call, host, same_error

import leafgrad as lg

SHAPES = [(), (1,), (3,), (2, 3), (3, 1), (1, 3), (2, 1, 3), (3, 3)]
DTYPES = ["float32", "float64", "int64"]
MODES = ["no_grad", "enable_grad", "inference_mode", "set_grad_enabled_false"]
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
    return d % x.dim() if x.dim() else 0


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


def fits_into(src, dst):
    """``src`` broadcasts to ``dst`` without growing it (in-place operands, setitem values)."""
    if len(src) > len(dst):
        return False
    return all(s in (1, d) for s, d in zip(reversed(tuple(src)), reversed(tuple(dst))))


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

    # -- creation and ops (their results join the pool) ---------------------------------------

    def _new(self, dtype, shape, rg, seed):
        m = self.m
        shape = SHAPES[shape % len(SHAPES)]
        rng = np.random.RandomState(seed)
        if dtype == "int64":
            values = rng.randint(-3, 4, size=shape)
        else:
            values = np.round(rng.uniform(-2, 2, size=shape) * 16) / 16  # exact in float32
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
            raise AssertionError(name)

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
        else:
            x.backward(self.m.full_like(x, 0.5), retain_graph=retain)

    def _grad(self, i, inputs, retain, allow_unused):
        x = self.at(i)
        out = x if x.dim() == 0 else x.sum()
        got = self.m.autograd.grad(
            out, [self.at(j) for j in inputs], retain_graph=retain, allow_unused=allow_unused
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


def state(x):
    """Everything compared about one tensor; ``.grad`` is read with warnings recorded."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        grad = _attr(lambda: x.grad)
    fn = _attr(lambda: x.grad_fn)
    return {
        "is_leaf": _attr(lambda: x.is_leaf),
        "requires_grad": x.requires_grad,
        "grad_fn": fn if isinstance(fn, tuple) else fn and type(fn).__name__,
        "retains_grad": _attr(lambda: x.retains_grad),
        "is_view": x._is_view(),
        "version": _attr(lambda: x._version),
        "is_inference": x.is_inference(),
        "grad": grad,
        "grad_warnings": [str(w.message).split("\n")[0] for w in caught],
    }


def same_result(t, g, what):
    if isinstance(t, torch.Tensor):
        assert isinstance(g, lg.Tensor), f"{what}: torch {t!r}, leafgrad {g!r}"
        same_values(t, g, what)
    elif isinstance(t, Raised):
        assert isinstance(g, Raised), f"{what}: torch raised {t!r}, leafgrad gave {g!r}"
        same_error(t, g)
    elif isinstance(t, list):
        assert isinstance(g, list) and len(g) == len(t), f"{what}: torch {t!r}, leafgrad {g!r}"
        for n, (a, b) in enumerate(zip(t, g)):
            same_result(a, b, f"{what}[{n}]")
    else:
        assert t == g, f"{what}: torch {t!r}, leafgrad {g!r}"


def check(program):
    """Run ``program`` in torch and leafgrad side by side, comparing after every step."""
    steps = flatten(program)
    ti, gi = Interpreter(torch), Interpreter(lg)
    try:
        for n, step in enumerate(steps):
            where = f"step {n} {step!r}"
            t, tw = call(lambda _, s=step: ti.step(s), torch)
            g, gw = call(lambda _, s=step: gi.step(s), lg)
            if isinstance(t, Raised) or isinstance(g, Raised):
                assert isinstance(t, Raised), f"{where}: torch returned, leafgrad raised {g!r}"
                assert isinstance(g, Raised), f"{where}: torch raised {t!r}, leafgrad did not"
                try:
                    same_error(t, g)
                except AssertionError as exc:
                    raise AssertionError(f"{where}: {exc}") from None
            else:
                same_result(t, g, where)
            tw1, gw1 = [w.split("\n")[0] for w in tw], [w.split("\n")[0] for w in gw]
            assert gw1 == tw1, f"{where}: warnings torch {tw}, leafgrad {gw}"
            assert len(gi.pool) == len(ti.pool), f"{where}: pool sizes differ"
            for k, (a, b) in enumerate(zip(ti.pool, gi.pool)):
                what = f"{where}, tensor {k}"
                same_values(a, b, what, ti.f32[k])
                sa, sb = state(a), state(b)
                ga, gb = sa.pop("grad"), sb.pop("grad")
                assert sb == sa, f"{what}:\n torch    {sa}\n leafgrad {sb}"
                if not (isinstance(ga, torch.Tensor) and isinstance(gb, lg.Tensor)):
                    assert gb == ga, f"{what}: grad torch {ga!r}, leafgrad {gb!r}"
                else:
                    same_result(ga, gb, what + " .grad")
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
            ["detach_", "requires_grad_", "retain_grad", "hook", "grad_none", "grad_zero_"]
        ),
        _i,
        _i,
    ),
    st.tuples(st.just("backward"), _i, st.booleans(), st.integers(0, 2)),
    st.tuples(st.just("backward"), _i, st.booleans(), st.integers(0, 2)),
    st.tuples(
        st.just("grad"),
        _i,
        st.lists(_i, min_size=1, max_size=3).map(tuple),
        st.booleans(),
        st.booleans(),
    ),
    new_step,
)

_block1 = st.tuples(st.just("block"), st.sampled_from(MODES), st.lists(_simple, max_size=4))
_block2 = st.tuples(
    st.just("block"), st.sampled_from(MODES), st.lists(_simple | _block1, max_size=4)
)

programs = st.builds(
    lambda first, rest: first + rest,
    st.lists(new_step, min_size=1, max_size=3),
    st.lists(st.one_of(_simple, _simple, _simple, _block2), min_size=1, max_size=14),
)
