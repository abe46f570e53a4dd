"""The numerical VJP check of table entries (inner-product test in float64), shared by
conftest.py (which runs it on every op a test module recorded, at the module's end) and
tests/test_zz_vjp_numerical.py (which reports one result per table entry).

For a recorded sample, with its floating operands moved to float64 and jittered off kinks and
ties: ``<vjp(u), v> == <u, (f(x + e v) - f(x - e v)) / 2e>`` for random ``u`` and ``v``.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from leafgrad import _dtype as D
from leafgrad.ops.dispatch import forward_function

# Entries that cannot be checked by finite differences, with the reason.
_NO_DERIVATIVE = "PyTorch has no derivative for it: its backward raises, as leafgrad's does"
_ONE_TRIANGLE = (
    "reads one triangle of its input; PyTorch's gradient is the symmetric one by design, which is "
    "not the derivative with respect to the unread triangle (checked against torch instead)"
)
SKIP = {
    **{
        name: _NO_DERIVATIVE
        for name in (
            "floor_divide",
            "floor_divide_other",
            "floor_divide_self",
            "floor_divide_self_other",
            "rfloor_divide_other",
            "rfloor_divide_self",
            "rfloor_divide_self_other",
            "rremainder_other",
            "rremainder_self",
            "rremainder_self_other",
            "scatter_old_self",
            "scatter_old_src",
            "scatter_old_self_src",
            "scatter_old_value_self",
            "bincount",
            "histogram",
            "unique",
            "geqrf",
            "detach_copy",
            "standard_gamma_grad",
            "dirichlet_grad",
            *(
                f"nn.bwd.{name}{suffix}"
                for name in (
                    "hardsigmoid",
                    "multi_margin_loss",
                    "multilabel_margin_loss",
                    "ctc_loss",
                )
                for suffix in ("", "_self")
            ),
        )
    },
    "linalg_cholesky_ex": _ONE_TRIANGLE,
    "cholesky_inverse": "reads one triangle of its input; PyTorch's gradient is the derivative of "
    "the product of the whole input, by design (checked against torch instead)",
    "cholesky": _ONE_TRIANGLE,
    "cholesky_solve": "reads one triangle of its factor; PyTorch's gradient is the derivative of "
    "the product of the whole factor, by design (checked against torch instead)",
    **dict.fromkeys(
        ("index_copy", "put"),
        "with a repeated index PyTorch's gradient gives every written value the gradient at its "
        "position, by design, though only one of them is kept (checked against torch instead)",
    ),
    "linalg_eigh": _ONE_TRIANGLE,
    "linalg_svd": "singular vectors have a sign freedom: checked on gauge-invariant losses "
    "against torch instead",
    "linalg_eig": "eigenvectors have a phase freedom, which PyTorch's formula projects out: "
    "checked on gauge-invariant losses against torch instead",
    "as_strided_scatter": "PyTorch's as_strided_scatter_backward is not the derivative: checked "
    "against torch instead",
    "nn.embedding": "padding_idx rows get no gradient in PyTorch, by design, though the output "
    "depends on them",
    **dict.fromkeys(
        ("nn.embedding_freq", "nn.embedding_bag_freq", "nn.bwd.embedding_dense_freq"),
        "scale_grad_by_freq divides each row's gradient by its index's frequency, by design "
        "(checked against torch instead)",
    ),
    "standard_gamma_sample": "the sample is drawn on the host; its gradient is the "
    "reparameterized one, grad * _standard_gamma_grad(alpha, sample), by design (checked against "
    "torch instead)",
    "nn.ctc_loss": "PyTorch's ctc_loss gradient is the gradient with respect to the logits before "
    "a log_softmax (Note [CTC gradient]), by design (checked against torch instead)",
}


def _to64(d):
    if isinstance(d, tuple):
        return tuple(_to64(x) for x in d)
    if d is not None and d.is_floating_point:
        return D.float64
    return d


def _inexact(x) -> bool:
    return hasattr(x, "dtype") and jnp.issubdtype(x.dtype, jnp.floating)


def _check(op, arrays, static, needs, rng) -> None:
    static = {k: _to64(v) if isinstance(v, D.dtype) else v for k, v in static.items()}
    meta = [(D.from_numpy_dtype(a.dtype), a.ndim) if hasattr(a, "dtype") else a for a in arrays]
    cast, rt = op.dtypes(meta, static)
    if any(d is not None and d.is_complex for d in (rt if isinstance(rt, tuple) else (rt,))):
        pytest.skip("complex: PyTorch's conjugate convention is checked against torch instead")
    cast64, rt64 = _to64(cast), _to64(rt)
    f = forward_function(op, cast64, rt64, static)
    # every floating operand in float64 (XLA ops such as convolution want one dtype), the
    # differentiated ones jittered
    primals = [
        jnp.asarray(a, jnp.float64) + 1e-3 * rng.standard_normal(np.shape(a))
        if i in needs and _inexact(a)
        else jnp.asarray(a, jnp.float64)
        if _inexact(a)
        else a
        for i, a in enumerate(arrays)
    ]
    diff = [i for i in needs if _inexact(arrays[i])]
    if not diff:
        pytest.skip("no floating operand")

    def g(*xs):
        args = list(primals)
        for i, x in zip(diff, xs):
            args[i] = x
        out = f(*args)
        outs = out if isinstance(out, tuple) else (out,)
        return tuple(o for o in outs if jnp.issubdtype(o.dtype, jnp.floating))

    xs = [primals[i] for i in diff]
    # one jitted computation per op: one XLA compile instead of one per primitive
    us = tuple(jnp.asarray(rng.standard_normal(o.shape)) for o in jax.eval_shape(g, *xs))
    # each direction scaled by its point's magnitude: a step of 1e-9 vanishes beside 3.5e7 in
    # float64 (f(x + e v) == f(x - e v) there), so the step is relative to each value
    vs = [jnp.asarray(rng.standard_normal(np.shape(x))) * (1 + jnp.abs(x)) for x in xs]
    try:
        sides = jax.jit(_sides, static_argnums=0)(g, xs, vs, us)
    except jax.errors.JAXTypeError:  # a forward that reads values: op by op
        sides = _sides(g, xs, vs, us)
    lhs, rhs, rhs_fine = (float(r) for r in sides)
    if not (np.isfinite(lhs) and np.isfinite(rhs)):
        pytest.skip("non-finite at this sample")
    # Central differences lose digits where the function curves sharply (log near 0).
    if abs(lhs - rhs) > 1e-4 * (1 + abs(lhs)) and abs(rhs - rhs_fine) > 1e-4 * (1 + abs(rhs)):
        # the differences disagree with themselves: a jump lies within the step (fmod of a
        # quotient in the tens of thousands crosses an integer within 1e-9 of the divisor)
        pytest.skip("not smooth within the step at this sample")
    assert abs(lhs - rhs) <= 1e-4 * (1 + abs(lhs)), (op.name, lhs, rhs, rhs_fine)


def _sides(g, xs, vs, us):
    """``<u, J v>`` by the VJP and by central differences at two steps."""
    _, vjp = jax.vjp(g, *xs)
    lhs = sum(jnp.vdot(gr, v) for gr, v in zip(vjp(us), vs))

    # small, so that a kink or tie of a large sample (max_pool after ReLU: many equal zeros) lies
    # within the step only rarely; float64 keeps the rounding far below the tolerance
    def differences(eps):
        plus = g(*[x + eps * v for x, v in zip(xs, vs)])
        minus = g(*[x - eps * v for x, v in zip(xs, vs)])
        return sum(jnp.vdot(u, (p - m) / (2 * eps)) for u, p, m in zip(us, plus, minus))

    # and at a quarter of the step, to tell a jump within it from a wrong VJP
    return lhs, differences(1e-9), differences(2.5e-10)


def check_sample(name: str, samples) -> tuple[str, str]:
    """``("ok" | "skip" | "fail", message)`` for the first sample of op ``name``."""
    if name in SKIP:
        return "skip", SKIP[name]
    rng = np.random.default_rng(0)
    op_, arrays, static, needs = samples[0]
    if not op_.differentiable:
        return "skip", "not differentiable"
    try:
        _check(op_, arrays, static, needs, rng)
    except pytest.skip.Exception as e:
        return "skip", str(e)
    except Exception as e:  # noqa: BLE001 - reported as the op's failure
        return "fail", f"{type(e).__name__}: {e}"
    return "ok", ""
