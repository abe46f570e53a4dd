"""``F.ctc_loss``, ``torch.ctc_loss`` and ``nn.CTCLoss``: connectionist temporal classification.

``ctc_loss`` is one op (``CtcLossBackward0``, one edge, to ``log_probs``), PyTorch's CPU kernel
in ``jax.numpy``: the forward variables ``alpha`` of Graves et al. (2006) over the extended
target (a blank between labels and at both ends) by a ``lax.scan`` over time, each step PyTorch's
``log(exp(a - m) + exp(b - m) + exp(c - m)) + m`` with ``m`` the largest of the three (0 when all
are ``-inf``); the loss of a sequence is minus the log of the sum of its last two alphas.
Reductions, ``zero_infinity``'s ``where`` and the unbatched ``squeeze`` are composites around it,
so the recorded graph has PyTorch's nodes (``MeanBackward0`` over ``DivBackward0``, ...).

Note [CTC gradient]: PyTorch's backward (``ctc_loss_backward_cpu_template``) is not the
derivative of the loss: for each time step below the input length it gives
``exp(lp) - exp(log(sum of alpha * beta over the states of label c) + nll - lp)``, the gradient
with respect to the *logits* when ``log_probs`` came from ``log_softmax`` (the extra
``exp(lp)`` cancels in ``log_softmax``'s backward, whose inputs sum to one). Training code
relies on it, and ``log_probs.grad`` shows it, so the op is a ``jax.custom_jvp`` whose tangent is
that formula, with the backward variables ``beta`` computed as PyTorch does (at the last step
the two final states are assigned, not added, to their labels). Infinite losses give NaN
gradients, or zeros under ``zero_infinity``; time steps at and after a sequence's input length
get zeros. PyTorch has no derivative of this backward (double backward raises) and no forward-AD
formula; leafgrad raises on the first and gives the formula's tangent for the second.

The lengths are read on the host for PyTorch's checks (it copies them to the CPU); the kernel
takes them as arrays, so batches of other lengths reuse one compiled kernel, and inside
``leafgrad.compile`` the checks that need their values are skipped. Target values outside
``[0, num_labels)`` in the used part of ``targets`` are read out of bounds by PyTorch's kernel;
leafgrad refuses them. The node has PyTorch's ``_saved_blank``, ``_saved_zero_infinity``,
``_saved_result0`` and saved inputs; not ``_saved_input_lengths``/``_saved_target_lengths`` (the
lengths are operands here, not tuples) nor ``_saved_result1`` (the forward variables, which the
backward recomputes).
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
from jax import lax

from .. import _autocast
from .. import _dtype as D
from .. import _errors as E
from .._tensor import Tensor
from ..ops.api import register_ops, underivable
from ..ops.dispatch import dispatch
from ..ops.formulas import formula
from ..ops.table import OPS, OpDef, same

__all__ = ["ctc_loss", "torch_ctc_loss"]

_SIGNATURES = (
    "(Tensor log_probs, Tensor targets, tuple of ints input_lengths, tuple of ints "
    "target_lengths, int blank = 0, int reduction = at::Reduction::Mean, bool zero_infinity = "
    "False)",
    "(Tensor log_probs, Tensor targets, Tensor input_lengths, Tensor target_lengths, int blank "
    "= 0, int reduction = at::Reduction::Mean, bool zero_infinity = False)",
)
_WHERE = " (while checking arguments for ctc_loss_allocate_outputs)"
_NEG = -jnp.inf


# --- the kernel --------------------------------------------------------------------------------


def _log_add3(a, b, c):
    """``log(exp(a) + exp(b) + exp(c))`` as PyTorch's kernel computes it."""
    m = jnp.maximum(jnp.maximum(a, b), c)
    m = jnp.where(m == _NEG, jnp.zeros((), m.dtype), m)
    return jnp.log(jnp.exp(a - m) + jnp.exp(b - m) + jnp.exp(c - m)) + m


def _shift(x, k: int):
    """``x`` along its last axis moved ``k`` places up (``k > 0``) or down, ``-inf`` filled in."""
    fill = jnp.full((*x.shape[:-1], abs(k)), _NEG, x.dtype)
    if k > 0:
        return jnp.concatenate([fill, x[..., :-k]], axis=-1)
    return jnp.concatenate([x[..., -k:], fill], axis=-1)


def _extended(targets, target_lengths, width: int, blank: int):
    """The extended targets, ``(N, 2 * width + 1)``: blank, label 1, blank, label 2, ..., blank,
    from padded ``(N, S)`` or concatenated 1-D targets."""
    n = target_lengths.shape[0]
    if targets.ndim == 1:
        starts = jnp.cumsum(target_lengths) - target_lengths
        where = starts[:, None] + jnp.arange(width)[None]
        labels = targets[jnp.clip(where, 0, max(targets.shape[0] - 1, 0))]
        if targets.shape[0] == 0:
            labels = jnp.zeros((n, width), targets.dtype)
    else:
        labels = targets[:, :width]
        if labels.shape[1] < width:
            labels = jnp.pad(labels, ((0, 0), (0, width - labels.shape[1])))
    ext = jnp.full((n, 2 * width + 1), blank, targets.dtype)
    return ext.at[:, 1::2].set(labels)


def _alphas(lp, ext, il, tl):
    """The losses ``(N,)`` and the log forward variables ``(T, N, 2W + 1)``."""
    T, N, C = lp.shape
    s = jnp.arange(ext.shape[1])
    lp_ext = jnp.take_along_axis(lp, jnp.clip(ext, 0, C - 1)[None], axis=2)
    skip = (s >= 2) & (ext != jnp.roll(ext, 2, axis=1))  # the s - 2 -> s transition
    neg = jnp.full((), _NEG, lp.dtype)
    first = jnp.where((s == 0) | ((s == 1) & (tl[:, None] > 0)), lp_ext[0], neg)

    def step(prev, lpt):
        new = _log_add3(prev, _shift(prev, 1), jnp.where(skip, _shift(prev, 2), neg)) + lpt
        return new, new

    _, rest = lax.scan(step, first, lp_ext[1:])
    alphas = jnp.concatenate([first[None], rest], axis=0)
    last = alphas[jnp.clip(il - 1, 0, T - 1), jnp.arange(N)]
    l1 = jnp.take_along_axis(last, (2 * tl)[:, None], axis=1)[:, 0]
    l2 = jnp.take_along_axis(last, jnp.clip(2 * tl - 1, 0, None)[:, None], axis=1)[:, 0]
    m = jnp.maximum(l1, l2)
    m = jnp.where(m == _NEG, jnp.zeros((), m.dtype), m)
    ll = jnp.where(tl == 0, last[:, 0], jnp.log(jnp.exp(l1 - m) + jnp.exp(l2 - m)) + m)
    ll = jnp.where(il == 0, jnp.where(tl == 0, jnp.zeros((), ll.dtype), neg), ll)
    return -ll, alphas


def _gradient(lp, ext, il, tl, nll, alphas, zero_infinity: bool):
    """PyTorch's gradient of each loss with respect to ``lp`` (Note [CTC gradient])."""
    T, N, C = lp.shape
    S2 = ext.shape[1]
    s = jnp.arange(S2)
    idx = jnp.clip(ext, 0, C - 1)
    lp_ext = jnp.take_along_axis(lp, idx[None], axis=2)
    neg = jnp.full((), _NEG, lp.dtype)
    live = s[None] <= 2 * tl[:, None]
    up1 = s[None] < 2 * tl[:, None]
    up2 = (s[None] < 2 * tl[:, None] - 1) & (ext != jnp.roll(ext, -2, axis=1))
    final = (s[None] == 2 * tl[:, None]) | ((s[None] == 2 * tl[:, None] - 1) & (tl[:, None] > 0))

    def step(nxt, inputs):
        t, lpt = inputs
        rec = _log_add3(
            nxt, jnp.where(up1, _shift(nxt, -1), neg), jnp.where(up2, _shift(nxt, -2), neg)
        )
        rec = jnp.where(live, rec + lpt, neg)
        beta = jnp.where(
            (t == il - 1)[:, None],
            jnp.where(final, lpt, neg),
            jnp.where((t < il - 1)[:, None], rec, neg),
        )
        return beta, beta

    init = jnp.full((N, S2), _NEG, lp.dtype)
    _, betas = lax.scan(step, init, (jnp.arange(T), lp_ext), reverse=True)
    ab = alphas + betas
    # at the last step PyTorch assigns the final two states' sums to their labels: a label equal
    # to the blank replaces the blank state's sum instead of adding to it
    t = jnp.arange(T)[:, None, None]
    replaced = (
        (t == (il - 1)[None, :, None])
        & (s[None, None] == 2 * tl[None, :, None])
        & (tl[None, :, None] > 0)
        & (jnp.take_along_axis(ext, jnp.clip(2 * tl - 1, 0, None)[:, None], axis=1) == ext)[None]
    )
    ab = jnp.where(replaced, neg, ab)
    where = (jnp.arange(T)[:, None, None], jnp.arange(N)[None, :, None], idx[None])
    top = jnp.full((T, N, C), _NEG, lp.dtype).at[where].max(ab)
    top = jnp.where(top == _NEG, jnp.zeros((), top.dtype), top)
    total = jnp.zeros((T, N, C), lp.dtype).at[where].add(jnp.exp(ab - top[where]))
    lcab = jnp.log(total) + top
    grad = jnp.exp(lp) - jnp.exp(lcab + nll[None, :, None] - lp)
    keep = jnp.arange(T)[:, None] < il[None]
    if zero_infinity:
        keep = keep & (nll != jnp.inf)[None]
    return jnp.where(keep[..., None], grad, jnp.zeros((), grad.dtype))


_no_double_backward = underivable("_ctc_loss_backward")


@functools.partial(jax.custom_jvp, nondiff_argnums=(4,))
def _ctc_nll(lp, ext, il, tl, zero_infinity):
    return _alphas(lp, ext, il, tl)[0]


@_ctc_nll.defjvp
def _ctc_nll_jvp(zero_infinity, primals, tangents):
    lp, ext, il, tl = primals
    lp = _no_double_backward(lp)
    nll, alphas = _alphas(lp, ext, il, tl)
    grad = _gradient(lp, ext, il, tl, nll, alphas, zero_infinity)
    return nll, jnp.sum(grad * tangents[0], axis=(0, 2))


def _ctc_loss(log_probs, targets, input_lengths, target_lengths, *, blank, zero_infinity, width):
    ext = _extended(targets, target_lengths, width, blank)
    return _ctc_nll(log_probs, ext, input_lengths, target_lengths, zero_infinity)


def _refuse_dtype(dt) -> None:
    """PyTorch's CPU kernel exists for float and double only."""
    if dt not in (D.float32, D.float64):
        raise NotImplementedError(E.KERNEL_DTYPE.format("ctc_loss_cpu", E.scalar_type_name(dt)))


def _ctc_dtypes(meta, static):
    _refuse_dtype(meta[0][0])
    return same(meta, static)


def _ctc_backward(grad_output, log_probs, targets, input_lengths, target_lengths, result, **s):
    """``_ctc_loss_backward`` (Note [CTC gradient]), a kernel PyTorch cannot differentiate: the
    node create_graph records for it is ``NotImplemented``, whose backward raises."""
    from ..ops.elementwise import _no_derivative

    refuse = _no_derivative("_ctc_loss_backward")
    lp, go = refuse(log_probs), refuse(grad_output)
    ext = _extended(targets, target_lengths, s["width"], s["blank"])
    nll, alphas = _alphas(lp, ext, input_lengths, target_lengths)
    nll = refuse(result) + lax.stop_gradient(nll - result)  # the saved result, as PyTorch's
    grad = _gradient(lp, ext, input_lengths, target_lengths, nll, alphas, s["zero_infinity"])
    return grad * go[None, :, None]


_BACKWARD_OPERANDS = (
    "grad_output",
    "log_probs",
    "targets",
    "input_lengths",
    "target_lengths",
    "result",
)


register_ops(
    *(
        OpDef(
            "nn.bwd.ctc_loss" + suffix,
            _ctc_backward,
            "NotImplemented",
            _BACKWARD_OPERANDS,
            same,
            edges=edges,
            saves={e: _BACKWARD_OPERANDS for e in edges},
        )
        for suffix, edges in (
            ("", ("grad_output", "log_probs", "result")),
            ("_self", ("log_probs", "result")),
        )
    ),
    OpDef(
        "nn.ctc_loss",
        _ctc_loss,
        "CtcLossBackward0",
        ("log_probs", "targets", "input_lengths", "target_lengths"),
        _ctc_dtypes,
        edges=("log_probs",),
        saves={"log_probs": ("log_probs", "targets", "result")},
    ),
)


# --- the frontends -----------------------------------------------------------------------------


def _host(values) -> list[int] | None:
    """A lengths tensor's values, None inside a trace."""
    if isinstance(values._data, jax.core.Tracer):
        return None
    return [int(v) for v in values._data.reshape(-1).tolist()]


def _check(log_probs, targets, il, tl, blank: int) -> tuple[bool, int]:
    """PyTorch's checks in its order (``ctc_loss_impl``, then the CPU kernel's); the dtype and
    emptiness ones are the op's. Returns whether the input is batched and the kernel's target
    width (the longest target)."""
    _refuse_dtype(log_probs.dtype)
    if log_probs.numel() == 0:
        raise RuntimeError("log_probs tensor must not be empty")
    batched = log_probs.dim() == 3
    ndim = log_probs.dim() + (0 if batched else 1)
    if ndim != 3:
        raise RuntimeError(
            f"Expected 3-dimensional tensor, but got {ndim}-dimensional tensor for argument #1 "
            f"'log_probs'{_WHERE}"
        )
    if not 1 <= targets.dim() <= 2:
        raise RuntimeError(
            f"Expected 1 to 2 dimensions, but got {targets.dim()}-dimensional tensor for "
            f"argument #2 'targets'{_WHERE}"
        )
    T, N, C = log_probs.shape if batched else (log_probs.shape[0], 1, log_probs.shape[1])
    if not 0 <= blank < C:
        raise RuntimeError("blank must be in label range")
    if il.numel() != N:
        raise RuntimeError("input_lengths must be of size batch_size")
    if tl.numel() != N:
        raise RuntimeError("target_lengths must be of size batch_size")
    ils, tls = _host(il), _host(tl)
    if tls is not None:
        for v in tls:
            if v < 0:
                raise RuntimeError(
                    f"Expected target_lengths to have value at least 0, but got value {v}{_WHERE}"
                )
        size = sum(tls) if targets.dim() == 1 else N
        if targets.shape[0] != size:
            raise RuntimeError(
                f"Expected tensor to have size {size} at dimension 0, but got size "
                f"{targets.shape[0]} for argument #2 'targets'{_WHERE}"
            )
        longest = max(tls, default=0)
        if targets.dim() == 2 and targets.shape[1] < longest:
            raise RuntimeError(
                f"Expected tensor to have size at least {longest} at dimension 1, but got size "
                f"{targets.shape[1]} for argument #2 'targets'{_WHERE}"
            )
    if ils is not None:
        for v in ils:
            if v < 0:
                raise RuntimeError(
                    f"Expected input_lengths to have value at least 0, but got value {v}{_WHERE}"
                )
            if v > T:
                raise RuntimeError(
                    f"Expected input_lengths to have value at most {T}, but got value {v}{_WHERE}"
                )
    if tls is not None and not isinstance(targets._data, jax.core.Tracer):
        _check_labels(targets, tls, C)
    if targets.dim() == 2:
        return batched, targets.shape[1]
    if tls is None:  # inside a trace: room for the longest possible target
        return batched, targets.shape[0]
    # concatenated targets: the longest one, rounded up to a power of two (fewer kernels)
    return batched, 1 << max(max(tls, default=0) - 1, 0).bit_length()


def _check_labels(targets, tls: list[int], C: int) -> None:
    """The labels the kernel reads must be classes: PyTorch reads others out of bounds."""
    import numpy as np

    data = np.asarray(targets._data)
    if targets.dim() == 1:
        used = data[: sum(tls)]
    else:
        used = np.concatenate([data[b, :n] for b, n in enumerate(tls)]) if tls else data[:0]
    bad = used[(used < 0) | (used >= C)]
    if bad.size:
        raise RuntimeError(
            f"ctc_loss: target labels must be in [0, {C}) (the number of classes of log_probs), "
            f"but got {bad.reshape(-1)[0].item()}: PyTorch's kernel reads such a label out of "
            "bounds; leafgrad refuses it"
        )


def _lengths(values, device) -> Tensor:
    import leafgrad

    if isinstance(values, Tensor):
        return values.reshape(-1).to(D.int64)
    return leafgrad.tensor([int(v) for v in values], dtype=D.int64, device=device)


def _ctc(log_probs, targets, input_lengths, target_lengths, blank, reduction, zero_infinity):
    """``ctc_loss_impl``: the op, then ``zero_infinity``'s ``where`` and the reduction."""
    import leafgrad

    il = _lengths(input_lengths, log_probs.device)
    tl = _lengths(target_lengths, log_probs.device)
    batched, width = _check(log_probs, targets, il, tl, blank)
    lp = log_probs if batched else log_probs.unsqueeze(1)
    tg = Tensor._make(targets._data.astype(jnp.int64), D.int64, targets.device)
    res = dispatch(
        OPS["nn.ctc_loss"],
        lp,
        tg,
        il,
        tl,
        blank=blank,
        zero_infinity=bool(zero_infinity),
        width=width,
    )
    if zero_infinity:
        res = leafgrad.where(
            res == float("inf"), leafgrad.zeros((), dtype=res.dtype, device=res.device), res
        )
    if reduction == 1:
        lengths = tl.to(res.dtype).clamp_min(1)
        return (res / lengths).mean()
    if reduction == 2:
        return res.sum()
    return res if batched else res.squeeze(0)


@_autocast.policy("fp32")
def torch_ctc_loss(*args, **kwargs) -> Tensor:
    """``torch.ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0,
    reduction=..., zero_infinity=False)``, lengths as tensors or as sequences of ints. Called
    without ``reduction`` it does not reduce: PyTorch's parser reads the printed default
    ``at::Reduction::Mean`` as 0 (``Reduction::None``)."""
    bound = E.bind(_SIGNATURES, args, kwargs)
    # a bare int is no ``int[]`` here (only sized lists such as ``int[2]`` take one)
    lengths = [*args[2:4], kwargs.get("input_lengths"), kwargs.get("target_lengths")]
    if any(v is not None and not isinstance(v, (Tensor, list, tuple)) for v in lengths):
        bound = None
    if bound is None:
        raise TypeError(E.invalid_arguments("ctc_loss", _SIGNATURES, args, kwargs))
    k, values = bound
    if k == 1:
        for name in ("input_lengths", "target_lengths"):
            dt = values[name].dtype
            if dt.is_floating_point or dt.is_complex or dt is D.bool_:
                raise RuntimeError(f"{name} must be integral")
    return _ctc(
        values["log_probs"],
        values["targets"],
        values["input_lengths"],
        values["target_lengths"],
        values.get("blank", 0),
        values.get("reduction", 0),
        values.get("zero_infinity", False),
    )


@_autocast.policy("fp32")
def ctc_loss(
    log_probs: Tensor,
    targets: Tensor,
    input_lengths,
    target_lengths,
    blank: int = 0,
    reduction: str = "mean",
    zero_infinity: bool = False,
) -> Tensor:
    """The connectionist temporal classification loss of ``log_probs`` ``(T, N, C)`` (or
    ``(T, C)``) against ``targets``, padded ``(N, S)`` or concatenated 1-D."""
    from .functional import _check_reduction

    enum = {"none": 0, "mean": 1, "sum": 2}[_check_reduction(reduction)]
    return torch_ctc_loss(
        log_probs, targets, input_lengths, target_lengths, blank, enum, zero_infinity
    )


@formula("nn.ctc_loss")
def _ctc_formula(ctx):
    """create_graph: the backward as the kernel PyTorch records (``NotImplemented``)."""
    lp = ctx["log_probs"]
    if lp is None or ctx.grad is None:
        return NotImplemented
    from .. import _storage

    name = "nn.bwd.ctc_loss" + ("" if ctx.grad.requires_grad else "_self")
    targets, il, tl = ctx["targets"], ctx["input_lengths"], ctx["target_lengths"]
    # the saved loss (PyTorch's ``result0``): its values again, as the node's output
    data = _ctc_loss(lp._data, targets._data, il._data, tl._data, **ctx.static)
    result = Tensor._make(data, lp.dtype, lp.device, requires_grad=True)
    result._grad_fn = _storage.saved_output_node(ctx.node)
    operands = (targets, il, tl, result)
    return {"log_probs": dispatch(OPS[name], ctx.grad, lp, *operands, **ctx.static)}
