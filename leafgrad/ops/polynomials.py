"""``torch.special``'s orthogonal polynomials: Chebyshev T, U, V, W (and their shifted forms),
Hermite H and He, Laguerre L and Legendre P of degree ``n`` at ``x``; and
``spherical_bessel_j0`` (its Taylor series below 1/2, ``sin(x) / x`` above) and
``modified_bessel_i0``/``i1`` (their frontends; the kernels are in ``bessel.py``).

Each is PyTorch's CPU kernel (``ATen/native/Math.h``) elementwise in ``jax.numpy``: the same
special cases in the same order (negative degrees, the interval's ends, the closed forms it takes
for high degrees inside the interval) and the same three-term recurrence, run for every element
up to the largest degree with the others' steps masked; the degree is read as the result dtype
and truncated to an integer, as PyTorch's ``static_cast<int64_t>(n)``. PyTorch records no
gradient for them (the result never requires grad); Half, BFloat16 and complex inputs are
refused as its CPU kernels refuse them. At a NaN ``x`` most of PyTorch's kernels return an
uninitialized value (their loop stops before its first step); leafgrad gives NaN.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import jax.scipy.special  # noqa: F401
from jax import lax

from .. import _dtype as D
from .. import _errors as E
from .api import register_ops
from .dispatch import dispatch
from .table import OPS, OpDef, promote

__all__ = [
    "chebyshev_polynomial_t",
    "chebyshev_polynomial_u",
    "chebyshev_polynomial_v",
    "chebyshev_polynomial_w",
    "hermite_polynomial_h",
    "hermite_polynomial_he",
    "laguerre_polynomial_l",
    "legendre_polynomial_p",
    "shifted_chebyshev_polynomial_t",
    "shifted_chebyshev_polynomial_u",
    "shifted_chebyshev_polynomial_v",
    "shifted_chebyshev_polynomial_w",
    "spherical_bessel_j0",
    "modified_bessel_i0",
    "modified_bessel_i1",
]


def _recurrence(x, n, p, q, step, count, k_of):
    """``count(n)`` steps of ``r = step(k, p, q)`` (``k = k_of(i)``), each element its own."""
    steps = count(n)
    top = jnp.max(steps, initial=0)

    def body(i, state):
        p, q = state
        r = step(k_of(i).astype(x.dtype), p, q)
        live = i < steps
        return jnp.where(live, q, p), jnp.where(live, r, q)

    _, q = lax.fori_loop(jnp.asarray(0, top.dtype), top, body, (p, q))
    return q


def _cases(default, *cases):
    """The first case whose condition holds (PyTorch's early returns, in order), else
    ``default``."""
    out = default
    for cond, value in reversed(cases):
        out = jnp.where(cond, value, out)
    return out


def _chebyshev(kind: str, shifted: bool):
    def forward(x, n):
        one = jnp.ones((), x.dtype)
        n = n.astype(x.dtype).astype(jnp.int64)
        nf = n.astype(x.dtype)
        y = x + x - one if shifted else x
        even = n % 2 == 0
        odd_sign = jnp.where(even, one, -one)
        acos = jnp.arccos(y)
        if kind == "t":
            first = y
            closed = jnp.cos(nf * acos)
        elif kind == "u":
            first = y + y
            s = jnp.sin(acos)
            closed = jnp.where(
                s != 0,
                jnp.sin((nf + one) * acos) / s,
                (nf + one) * jnp.cos((nf + one) * acos) / y,
            )
        elif kind == "v":
            first = y + y - one
            closed = jnp.where(
                jnp.sin(acos / 2) != one,
                jnp.cos((nf + 0.5) * acos) / jnp.cos(acos / 2),
                odd_sign * (nf + nf + one),
            )
        else:
            first = y + y + one
            limit = jnp.where(y > 0, nf + nf + one, odd_sign) if not shifted else odd_sign
            closed = jnp.where(
                jnp.cos(acos / 2) != one, jnp.sin((nf + 0.5) * acos) / jnp.sin(acos / 2), limit
            )
        loop = _recurrence(
            y, n, jnp.ones_like(y), first, lambda k, p, q: (y + y) * q - p,
            lambda n: n - 1, lambda i: i + 2,
        )  # fmt: skip
        big = {"t": 6, "u": 8, "v": 8, "w": 8}[kind] if not shifted else (4 if kind == "w" else 6)
        if shifted:
            at_one = {"t": one, "u": nf + one, "v": one, "w": nf + nf + one}[kind]
            at_zero = {
                "t": odd_sign,
                "u": odd_sign * (nf + one),
                "v": odd_sign * (nf + nf + one),
                "w": odd_sign,
            }[kind]
            ends = ((x == one, at_one), (x == 0, at_zero))
        else:
            at_end = {
                "t": jnp.where((x > 0) | even, one, -one),
                "u": jnp.where((x > 0) | even, nf + one, -(nf + one)),
                "v": jnp.where(x > 0, one, odd_sign * (nf + nf + one)),
                "w": jnp.where(x > 0, nf + nf + one, odd_sign),
            }[kind]
            ends = ((jnp.abs(x) == one, at_end),)
        return _cases(
            loop,
            (n < 0, jnp.zeros_like(y)),
            *ends,
            ((n > big) & (jnp.abs(y) < one), closed),
            (n == 0, one),
            (n == 1, first),
        )

    return forward


def _hermite(physicists: bool):
    def forward(x, n):
        one = jnp.ones((), x.dtype)
        n = n.astype(x.dtype).astype(jnp.int64)
        limit = {jnp.dtype(jnp.float32): 128, jnp.dtype(jnp.float64): 512}.get(x.dtype, 1024)
        if physicists:
            first = x + x
            loop = _recurrence(
                x, n, jnp.ones_like(x), first, lambda k, p, q: (x + x) * q - k * p,
                lambda n: n - 1, lambda i: 2 * i + 2,
            )  # fmt: skip
        else:
            first = x
            loop = _recurrence(
                x, n, jnp.ones_like(x), first, lambda k, p, q: x * q - k * p,
                lambda n: n - 1, lambda i: i + 1,
            )  # fmt: skip
        return _cases(
            loop,
            (n < 0, jnp.zeros_like(x)),
            (n == 0, one),
            (n == 1, first),
            (n > limit, jnp.full_like(x, jnp.nan)),
        )

    return forward


def _laguerre(x, n):
    one = jnp.ones((), x.dtype)
    n = n.astype(x.dtype).astype(jnp.int64)
    loop = _recurrence(
        x, n, jnp.ones_like(x), one - x,
        lambda k, p, q: (((k + k) + (one - x)) * q - k * p) / (k + one),
        lambda n: n - 1, lambda i: i + 1,
    )  # fmt: skip
    return _cases(
        loop,
        (n < 0, jnp.zeros_like(x)),
        (jnp.abs(x) == 0, one),
        (n == 0, one),
        (n == 1, one - x),
    )


def _legendre(x, n):
    one = jnp.ones((), x.dtype)
    n = n.astype(x.dtype).astype(jnp.int64)
    loop = _recurrence(
        x, n, jnp.ones_like(x), x,
        lambda k, p, q: ((k + k + one) * x * q - k * p) / (k + one),
        lambda n: n - 1, lambda i: i + 1,
    )  # fmt: skip
    return _cases(
        loop,
        (n < 0, jnp.zeros_like(x)),
        (jnp.abs(x) == one, jnp.where((x > 0) | (n % 2 == 0), one, -one)),
        (n == 0, one),
        (n == 1, x),
    )


_FORWARDS = {
    **{f"chebyshev_polynomial_{k}": _chebyshev(k, False) for k in "tuvw"},
    **{f"shifted_chebyshev_polynomial_{k}": _chebyshev(k, True) for k in "tuvw"},
    "hermite_polynomial_h": _hermite(True),
    "hermite_polynomial_he": _hermite(False),
    "laguerre_polynomial_l": _laguerre,
    "legendre_polynomial_p": _legendre,
}


def _rule(kernel: str):
    def rule(meta, static):
        cast, rt = promote(meta, static)
        if rt is D.bool_ or not (rt.is_floating_point or rt.is_complex):
            rt = D.get_default_dtype()
        if rt in (D.float16, D.bfloat16) or rt.is_complex:
            raise NotImplementedError(E.KERNEL_DTYPE.format(kernel, E.scalar_type_name(rt)))
        return tuple(None if m is None else rt for m in meta), rt

    return rule


def _forward(name):
    fwd = _FORWARDS[name]

    def forward(x, n):
        if not hasattr(x, "dtype"):  # a number: the result dtype is the tensor's
            x = jnp.asarray(x, n.dtype)
        n = jnp.asarray(n, x.dtype)
        x, n = jnp.broadcast_arrays(x, n)
        return fwd(x, n)

    return forward


def _spherical_bessel_j0(x):
    one = jnp.ones((), x.dtype)
    z = x * x
    inner = jnp.asarray(1.0 / 6227020800.0, x.dtype)
    for c in (-1.0 / 39916800.0, 1.0 / 362880.0, -1.0 / 5040.0, 1.0 / 120.0, -1.0 / 6.0):
        inner = jnp.asarray(c, x.dtype) + z * inner
    out = jnp.where(jnp.abs(x) < 0.5, one + z * inner, jnp.sin(x) / x)
    return jnp.where(jnp.isinf(x), jnp.zeros((), x.dtype), out)


register_ops(
    *(
        OpDef(
            "special_" + name,
            fwd,
            "",
            ("self",),
            _rule(name + "_cpu"),
            differentiable=(),
        )
        for name, fwd in (("spherical_bessel_j0", _spherical_bessel_j0),)
    ),
    *(
        OpDef(
            "special_" + name,
            _forward(name),
            "",
            ("self", "n"),
            _rule(f"{name}_cpu"),
            differentiable=(),
            broadcast=True,
        )
        for name in _FORWARDS
    ),
)


def _frontend(name: str):
    def fn(input, n, *, out=None):
        from .._tensor import Tensor

        if not isinstance(input, Tensor) and not isinstance(n, Tensor):
            raise TypeError(
                f"special_{name}() received an invalid combination of arguments - got "
                f"({E.py_typename(input)}, {E.py_typename(n)}), but expected one of:\n"
                " * (Tensor x, Tensor n, *, Tensor out = None)\n"
                " * (Number x, Tensor n, *, Tensor out = None)\n"
                " * (Tensor x, Number n, *, Tensor out = None)\n"
            )
        if out is not None:
            raise NotImplementedError(f"leafgrad: special.{name}(out=...) is not supported")
        return dispatch(OPS["special_" + name], input, n)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``torch.special.{name}(input, n)``: PyTorch's kernel; no gradient."
    return fn


chebyshev_polynomial_t = _frontend("chebyshev_polynomial_t")
chebyshev_polynomial_u = _frontend("chebyshev_polynomial_u")
chebyshev_polynomial_v = _frontend("chebyshev_polynomial_v")
chebyshev_polynomial_w = _frontend("chebyshev_polynomial_w")
hermite_polynomial_h = _frontend("hermite_polynomial_h")
hermite_polynomial_he = _frontend("hermite_polynomial_he")
laguerre_polynomial_l = _frontend("laguerre_polynomial_l")
legendre_polynomial_p = _frontend("legendre_polynomial_p")
shifted_chebyshev_polynomial_t = _frontend("shifted_chebyshev_polynomial_t")
shifted_chebyshev_polynomial_u = _frontend("shifted_chebyshev_polynomial_u")
shifted_chebyshev_polynomial_v = _frontend("shifted_chebyshev_polynomial_v")
shifted_chebyshev_polynomial_w = _frontend("shifted_chebyshev_polynomial_w")


def _unary_frontend(name: str, doc: str, arg: str = "input"):
    def fn(input, *, out=None):
        E.need_tensor(input, "special_" + name, arg)
        if out is not None:
            raise NotImplementedError(f"leafgrad: special.{name}(out=...) is not supported")
        return dispatch(OPS["special_" + name], input)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``torch.special.{name}``: {doc}; no gradient."
    return fn


spherical_bessel_j0 = _unary_frontend("spherical_bessel_j0", "``sin(x) / x``", "x")
modified_bessel_i0 = _unary_frontend("modified_bessel_i0", "the modified Bessel function I0")
modified_bessel_i1 = _unary_frontend("modified_bessel_i1", "the modified Bessel function I1")
