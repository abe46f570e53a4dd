"""PyTorch's derivative formulas for create_graph (Note [Graph formulas] in formulas.py):
activations, softmax, losses, ``F.linear``'s products, norms and embeddings.

Most of these formulas call a backward kernel that is an ATen op with its own derivative
(``tanh_backward``, ``threshold_backward``, ``_softmax_backward_data``, ``mse_loss_backward``...),
recorded as ``<Kernel>Backward0`` nodes (``TanhBackwardBackward0``); the kernels are op-table
entries here (``nn.bwd.*``), with operands in ATen's order and a JAX forward computing the kernel,
so that JAX differentiates them again. The others (``silu``, ``mish``, the logits losses, ``mm``,
the norms) are composites of recorded ops, as in ``FunctionsManual.cpp``, and so are the kernels'
own formulas (``elu_double_backward``, ``batchnorm_double_backward``...). A kernel PyTorch cannot
differentiate (``hardsigmoid_backward``...) is a ``NotImplemented`` node here too, whose
backward raises PyTorch's error.

``native_group_norm``'s create_graph gradient is the composite
``infinitely_differentiable_native_group_norm_backward``, which reads the forward's other results
(the groups' mean and 1 / std): PyTorch's saved outputs, whose ``grad_fn`` is the forward's node.
Here they come from an op of their own (``nn.group_norm_stats``) whose node has that node's name
and edges, and whose derivative JAX gives.
"""

from __future__ import annotations

import functools
import math

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.scipy.special import erf

from .. import _storage as S
from .. import _tensor
from .dispatch import dispatch
from .formulas import (
    _where,
    formula,
    maybe_multiply,
    rdiv_scalar,
    rsub_scalar,
    sadd,
    sdiv,
    smul,
    ssub,
)
from .table import OPS, OpDef

# --- backward kernels as ops ---------------------------------------------------------------------


def _first_dtype(meta, static):
    """No casts; the result has the first tensor operand's dtype (the gradient's)."""
    dt = next(m[0] for m in meta if isinstance(m, tuple))
    return (None,) * len(meta), dt


def _c(value, x):
    return jnp.asarray(value, x.dtype)


def _tanh_bwd(go, out):
    return go * (1 - out * out)


def _sigmoid_bwd(go, out):
    return go * ((1 - out) * out)


def _threshold_bwd(go, x, threshold):
    return jnp.where(x <= _c(threshold, x), jnp.zeros_like(go), go)


def _hardtanh_bwd(go, x, min_val, max_val):
    out = (x <= _c(min_val, x)) | (x >= _c(max_val, x))
    return jnp.where(out, jnp.zeros_like(go), go)


def _leaky_relu_bwd(go, x, negative_slope, self_is_result):
    return jnp.where(x > 0, go, go * _c(negative_slope, go))


def _elu_bwd(go, x, alpha, scale, input_scale, is_result):
    neg, pos, inp = _c(alpha * scale, x), _c(scale, x), _c(input_scale, x)
    if is_result:
        negative = go * inp * (x + neg)
    else:
        negative = go * inp * neg * jnp.exp(x * inp)
    return jnp.where(x <= 0, negative, go * pos)


def _gelu_bwd(go, x, approximate):
    if approximate == "tanh":
        beta = _c(math.sqrt(2.0) * (2.0 / math.sqrt(math.pi)) * 0.5, x)
        kappa = _c(0.044715, x)
        x_sq = x * x
        inner = beta * (x + kappa * x_sq * x)
        t = jnp.tanh(inner)
        left_d = _c(0.5, x) * (1 + t)
        right_d = _c(0.5, x) * x * (1 - t * t) * beta * (1 + _c(3.0, x) * kappa * x_sq)
        return go * (left_d + right_d)
    cdf = _c(0.5, x) * (1 + erf(x * _c(math.sqrt(0.5), x)))
    pdf = jnp.exp(_c(-0.5, x) * x * x) * _c((2.0 / math.sqrt(math.pi)) * math.sqrt(0.5) * 0.5, x)
    return go * (cdf + x * pdf)


def _softplus_bwd(go, x, beta, threshold):
    xb = x * _c(beta, x)
    linear = xb > _c(threshold, x)
    z = jnp.exp(jnp.where(linear, jnp.zeros_like(xb), xb))
    return jnp.where(linear, go, go * z / (z + 1))


def _hardswish_bwd(go, x):
    mid = go * (x / _c(3.0, x) + _c(0.5, x))
    return jnp.where(x < -3, jnp.zeros_like(go), jnp.where(x <= 3, mid, go))


def _log_sigmoid_bwd(go, x):
    neg = x < 0
    max_deriv = jnp.where(neg, jnp.ones_like(x), jnp.zeros_like(x))
    sign = jnp.where(neg, jnp.ones_like(x), -jnp.ones_like(x))
    z = jnp.exp(-jnp.abs(x))
    return go * (max_deriv - sign * (z / (1 + z)))


def _shrink_bwd(go, x, lambd):
    inside = (x >= _c(-lambd, x)) & (x <= _c(lambd, x))
    return jnp.where(inside, jnp.zeros_like(go), go)


def _glu_bwd(go, x, dim):
    a, b = jnp.split(x, 2, axis=dim)
    sb = jax.nn.sigmoid(b)
    return jnp.concatenate([go * sb, go * a * (1 - sb) * sb], axis=dim)


def _softmax_bwd(go, out, dim, input_dtype):
    from ..nn.functional import _softmax_backward

    return _softmax_backward(out, go, dim)


def _log_softmax_bwd(go, out, dim, input_dtype):
    from ..nn.functional import _log_softmax_backward

    return _log_softmax_backward(out, go, dim)


def _norm_of(reduction, x):
    return 1.0 / x.size if reduction == "mean" else 1.0


def _mse_bwd(go, x, t, reduction):
    return _c(2.0 * _norm_of(reduction, x), x) * (x - t) * go


def _smooth_l1_bwd(go, x, t, reduction, beta):
    n = _c(_norm_of(reduction, x), x)
    d = x - t
    b = _c(beta, x)
    inner = n * d * go / b
    return jnp.where(d <= -b, -n * go, jnp.where(d >= b, n * go, inner))


def _huber_bwd(go, x, t, reduction, delta):
    n = _c(_norm_of(reduction, x), x)
    d = x - t
    dl = _c(delta, x)
    return jnp.where(d <= -dl, -n * go * dl, jnp.where(d >= dl, n * go * dl, n * d * go))


def _soft_margin_bwd(go, x, t, reduction):
    n = _c(_norm_of(reduction, x), x)
    z = jnp.exp(-t * x)
    return -n * t * z / (1 + z) * go


def _bce_bwd(go, x, t, weight, reduction):
    g = go * (x - t) / jnp.maximum((1 - x) * x, _c(1e-12, x))
    if weight is not None:
        g = g * weight
    return g / _c(x.size, x) if reduction == "mean" else g


def _nll_bwd(go, x, target, weight, reduction, ignore_index):
    from ..nn.functional import _nll

    _, vjp = jax.vjp(lambda v: _nll(v, target, weight, reduction, ignore_index), x)
    return vjp(go)[0]


def _embedding_bwd(go, indices, num_weights, padding_idx, scale_grad_by_freq=False):
    rows = go.reshape((-1, go.shape[-1]))
    idx = indices.reshape(-1)
    if padding_idx is not None:
        rows = jnp.where((idx == padding_idx)[:, None], jnp.zeros_like(rows), rows)
    if scale_grad_by_freq:
        # each row's gradient divided by its index's count; PyTorch's double backward
        # (embedding_dense_double_backward) does not divide: the division carries no gradient
        counts = jnp.zeros((num_weights,), rows.dtype).at[idx].add(1)
        scaled = rows / counts[idx][:, None]
        rows = rows + lax.stop_gradient(scaled - rows)
    return jnp.zeros((num_weights, go.shape[-1]), go.dtype).at[idx].add(rows)


def _layer_norm_bwd(go, x, mean, rstd, w, b, ndim, eps):
    from ..nn._conv_pool import _layer_norm_forward

    args = (x, w, b)
    live = [i for i, a in enumerate(args) if a is not None]

    def f(*xs):
        full = list(args)
        for i, a in zip(live, xs):
            full[i] = a
        return _layer_norm_forward(*full, ndim, eps)

    grads = jax.vjp(f, *[args[i] for i in live])[1](go.astype(x.dtype))
    out = [jnp.zeros((), x.dtype)] * 3
    for i, g in zip(live, grads):
        out[i] = g
    return tuple(out)


def _group_norm_stats(x, w, b, groups, eps):
    """``native_group_norm``'s mean and rstd results, (N, groups)."""
    from ..nn._conv_pool import _opmath

    v = _opmath(x)
    xg = v.reshape((x.shape[0], groups, -1))
    mean = jnp.mean(xg, axis=2)
    var = jnp.mean(jnp.square(xg - mean[..., None]), axis=2)
    rstd = jax.lax.rsqrt(jnp.maximum(var, 0) + jnp.asarray(eps, v.dtype))
    return mean.astype(x.dtype), rstd.astype(x.dtype)


def _group_norm_stats_rule(meta, static):
    dt = meta[0][0]
    return (None,) * len(meta), (dt, dt)


def _layer_norm_bwd_rule(meta, static):
    dt = meta[1][0]
    return (None,) * len(meta), (dt, dt, dt)


def _batch_norm_bwd(go, x, w, rm, rv, save_mean, save_invstd, training, eps):
    from ..nn._conv_pool import _batch_norm_forward

    args = (x, w)
    live = [i for i, a in enumerate(args) if a is not None]

    def f(*xs):
        full = list(args)
        for i, a in zip(live, xs):
            full[i] = a
        return _batch_norm_forward(full[0], full[1], None, rm, rv, training, eps)

    grads = jax.vjp(f, *[args[i] for i in live])[1](go.astype(x.dtype))
    out = [jnp.zeros((), x.dtype)] * 3
    for i, g in zip(live, grads):
        out[i] = g.astype(x.dtype)
    # the bias's gradient: the incoming gradient summed over all but the channel dim
    out[2] = jnp.sum(go, axis=(0,) + tuple(range(2, go.ndim))).astype(x.dtype)
    return tuple(out)


def _batch_norm_bwd_rule(meta, static):
    dt = meta[1][0]
    return (None,) * len(meta), (dt, dt, dt)


def _refusing(aten, fwd):
    """``fwd`` whose differentiation with respect to any floating operand raises PyTorch's
    error for a kernel without a derivative (its node is ``NotImplemented``)."""
    from .elementwise import _no_derivative

    refuse = _no_derivative(aten)

    def forward(*args, **static):
        args = [
            refuse(a) if a is not None and jnp.issubdtype(a.dtype, jnp.floating) else a
            for a in args
        ]
        return fwd(*args, **static)

    return forward


def _prelu_bwd(go, x, w):
    pos = x > 0
    grad_self = jnp.where(pos, go, w * go)
    grad_weight = jnp.where(pos, jnp.zeros_like(go), x * go)
    shape = jnp.broadcast_shapes(go.shape, x.shape, w.shape)
    return jnp.broadcast_to(grad_self, shape), jnp.broadcast_to(grad_weight, shape)


def _prelu_bwd_rule(meta, static):
    dt = meta[1][0]
    return (None,) * len(meta), (dt, dt)


_SIXTH = float(np.float32(1.0) / np.float32(6.0))


def _hardsigmoid_bwd(go, x):
    # ATen's kernel multiplies by ``scalar_t(1.0f / 6.0f)``: a float32 sixth
    inside = (x > _c(-3.0, x)) & (x < _c(3.0, x))
    return jnp.where(inside, go * _c(_SIXTH, go), jnp.zeros_like(go))


def _multi_margin_bwd(go, x, target, weight, p, margin, reduction):
    from ..nn._functional_extra import _multi_margin

    _, vjp = jax.vjp(lambda v: _multi_margin(v, target, weight, p, margin, reduction), x)
    return vjp(go)[0]


def _multilabel_margin_bwd(go, x, target, reduction):
    from ..nn._functional_extra import _multilabel_margin

    _, vjp = jax.vjp(lambda v: _multilabel_margin(v, target, reduction), x)
    return vjp(go)[0]


def _kernel(name, fwd, node, operands, edges=None):
    edges = operands if edges is None else edges
    return OpDef(
        "nn.bwd." + name,
        fwd,
        node,
        operands,
        _first_dtype,
        edges=edges,
        saves={e: tuple(operands) for e in edges},
    )


_GO_SELF = ("grad_output", "self")
_KERNELS = [
    _kernel("tanh", _tanh_bwd, "TanhBackwardBackward0", ("grad_output", "output")),
    _kernel("sigmoid", _sigmoid_bwd, "SigmoidBackwardBackward0", ("grad_output", "output")),
    _kernel("threshold", _threshold_bwd, "ThresholdBackwardBackward0", _GO_SELF),
    _kernel("hardtanh", _hardtanh_bwd, "HardtanhBackwardBackward0", _GO_SELF),
    _kernel("leaky_relu", _leaky_relu_bwd, "LeakyReluBackwardBackward0", _GO_SELF),
    _kernel("elu", _elu_bwd, "EluBackwardBackward0", ("grad_output", "self_or_result")),
    _kernel("gelu", _gelu_bwd, "GeluBackwardBackward0", _GO_SELF),
    _kernel("softplus", _softplus_bwd, "SoftplusBackwardBackward0", _GO_SELF),
    _kernel("hardswish", _hardswish_bwd, "HardswishBackwardBackward0", _GO_SELF),
    # log_sigmoid_backward's ``buffer`` is not differentiable (no edge) and unused on CPU
    _kernel("log_sigmoid", _log_sigmoid_bwd, "LogSigmoidBackwardBackward0", _GO_SELF),
    _kernel("softshrink", _shrink_bwd, "SoftshrinkBackwardBackward0", _GO_SELF),
    _kernel("hardshrink", _shrink_bwd, "HardshrinkBackwardBackward0", ("grad_out", "self")),
    _kernel("glu", _glu_bwd, "GluBackwardBackward0", _GO_SELF),
    _kernel("softmax", _softmax_bwd, "SoftmaxBackwardDataBackward0", ("grad_output", "output")),
    _kernel(
        "log_softmax",
        _log_softmax_bwd,
        "LogSoftmaxBackwardDataBackward0",
        ("grad_output", "output"),
    ),
    _kernel("mse_loss", _mse_bwd, "MseLossBackwardBackward0", ("grad_output", "self", "target")),
    _kernel(
        "smooth_l1_loss",
        _smooth_l1_bwd,
        "SmoothL1LossBackwardBackward0",
        ("grad_output", "self", "target"),
    ),
    _kernel(
        "huber_loss", _huber_bwd, "HuberLossBackwardBackward0", ("grad_output", "self", "target")
    ),
    _kernel(
        "soft_margin_loss",
        _soft_margin_bwd,
        "SoftMarginLossBackwardBackward0",
        ("grad_output", "self", "target"),
        _GO_SELF,
    ),
    _kernel(
        "binary_cross_entropy",
        _bce_bwd,
        "BinaryCrossEntropyBackwardBackward0",
        ("grad_output", "self", "target", "weight"),
        ("grad_output", "self", "target"),
    ),
    _kernel(
        "nll_loss",
        _nll_bwd,
        "NllLossBackwardBackward0",
        ("grad_output", "self", "target", "weight"),
        _GO_SELF,
    ),
    _kernel(
        "nll_loss2d",
        _nll_bwd,
        "NllLoss2DBackwardBackward0",
        ("grad_output", "self", "target", "weight"),
        _GO_SELF,
    ),
    *(
        _kernel(
            name,
            fwd,
            "EmbeddingDenseBackwardBackward0",
            ("grad_output", "indices"),
            ("grad_output",),
        )
        for name, fwd in (
            ("embedding_dense", _embedding_bwd),
            ("embedding_dense_freq", functools.partial(_embedding_bwd, scale_grad_by_freq=True)),
        )
    ),
    OpDef(
        "nn.group_norm_stats",
        _group_norm_stats,
        "NativeGroupNormBackward0",
        ("input", "weight", "bias"),
        _group_norm_stats_rule,
        differentiable=("input",),
        saves={"input": ("input",)},
        n_out=2,
    ),
    OpDef(
        "nn.bwd.native_layer_norm",
        _layer_norm_bwd,
        "NativeLayerNormBackwardBackward0",
        # mean and rstd (outputs of the forward that never require grad) are recomputed from
        # the input: they are passed as None, which gives their always-empty edges
        ("grad_out", "input", "mean", "rstd", "weight", "bias"),
        _layer_norm_bwd_rule,
        differentiable=("grad_out", "input", "weight"),
        saves={n: ("grad_out", "input", "weight", "bias") for n in ("grad_out", "input", "weight")},
        n_out=3,
    ),
    OpDef(
        "nn.bwd.native_batch_norm",
        _batch_norm_bwd,
        "NativeBatchNormBackwardBackward0",
        # save_mean and save_invstd (outputs of the forward that never require grad) are
        # recomputed from the input: passed as None, they give their always-empty edges
        ("grad_out", "input", "weight", "running_mean", "running_var", "save_mean", "save_invstd"),
        _batch_norm_bwd_rule,
        edges=("grad_out", "input", "weight", "save_mean", "save_invstd"),
        differentiable=("grad_out", "input", "weight"),
        saves={
            n: ("grad_out", "input", "weight", "running_mean", "running_var")
            for n in ("grad_out", "input", "weight")
        },
        n_out=3,
    ),
    OpDef(
        "nn.bwd.prelu",
        _prelu_bwd,
        "PreluKernelBackwardBackward0",
        ("grad_output", "self", "weight"),
        _prelu_bwd_rule,
        saves={n: ("grad_output", "self", "weight") for n in ("grad_output", "self", "weight")},
        n_out=2,
    ),
    _kernel("rrelu_with_noise", _leaky_relu_bwd, "RreluWithNoiseBackwardBackward0", _GO_SELF),
    # in training: ``grad_output * noise`` (the noise has no edge)
    _kernel(
        "rrelu_with_noise_train",
        lambda go, x, noise: go * noise,
        "RreluWithNoiseBackwardBackward0",
        ("grad_output", "self", "noise"),
        edges=_GO_SELF,
    ),
    # Kernels PyTorch has no derivative for: their node is NotImplemented, whose backward
    # raises, with an edge for each operand that requires grad (``..._self``: the incoming
    # gradient does not).
    *[
        _kernel(
            name + suffix,
            _refusing(name + "_backward", fwd),
            "NotImplemented",
            operands,
            edges,
        )
        for name, fwd, operands in (
            ("hardsigmoid", _hardsigmoid_bwd, _GO_SELF),
            ("multi_margin_loss", _multi_margin_bwd, (*_GO_SELF, "target", "weight")),
            ("multilabel_margin_loss", _multilabel_margin_bwd, (*_GO_SELF, "target")),
        )
        for suffix, edges in (("", _GO_SELF), ("_self", ("self",)))
    ],
]
for _op in _KERNELS:
    OPS[_op.name] = _op


def _k(name, *operands, **static):
    return dispatch(OPS["nn.bwd." + name], *operands, **static)


def _real(ctx, *names) -> bool:
    """Whether the gradient and the named operands are real (the kernels here are real-only)."""
    if ctx.grad._dtype.is_complex:
        return False
    return all(not ctx.dtype(n).is_complex for n in names)


def _attach(node, data, like):
    t = _tensor.Tensor._make(data, like._dtype, like._device)
    t._grad_fn, t._output_nr, t._requires_grad = S.saved_output_node(node), 0, True
    return t


def _saved_result(ctx):
    """The op's result as PyTorch's formula reads it: the output tensor, whose ``grad_fn`` is
    the node itself (a saved output unpacks so). The node keeps its input, so the data is
    the op's forward of it; without the node (not expected), the result is recomputed with
    leafgrad ops (same graph names, another node). None where the input was not kept."""
    self = ctx["self"]
    if self is None:
        return None
    node = ctx.node
    if node is None:
        return dispatch(ctx.op, self, **ctx.static)
    return _attach(node, ctx.op.forward(self._data, **ctx.static), self)


def _self(ctx):
    """``self`` as PyTorch's formula reads it. An in-place op whose formula reads its input
    (``silu_``, ``hardtanh_``, ``threshold_``...) saves ``original_self = self.clone()``: the
    saved input is attached to that ``CloneBackward0`` (Note [Original self] in inplace.py)."""
    return ctx["self"]


def _own_result(ctx, fwd, **static):
    """For an in-place activation whose node saves its result (``LeakyReluBackward1``,
    ``EluBackward1``, ``CeluBackward1``): the result, attached to the node itself as PyTorch
    unpacks a saved output; None for the out-of-place node (``...Backward0``)."""
    node = ctx.node
    if node is None or not type(node).__name__.endswith("Backward1"):
        return None
    self = ctx["self"]
    if self is None:
        return NotImplemented
    return _attach(node, fwd(self._data, **static), self)


# --- activations -----------------------------------------------------------------------------


@formula("tanh", "sigmoid")
def _tanh_sigmoid(ctx):
    if ctx._result is not None:  # a node that keeps its result (Note [Result formulas])
        if ctx._result.dtype.is_complex:
            return NotImplemented
        return {"self": _k(ctx.op.name, ctx.grad, ctx._result)}
    if not _real(ctx, "self"):
        return NotImplemented
    result = _saved_result(ctx)
    if result is None:
        return NotImplemented
    return {"self": _k(ctx.op.name, ctx.grad, result)}


@formula("nn.relu")
def _relu(ctx):
    return {"self": _k("threshold", ctx.grad, ctx.result, threshold=0)}


@formula("nn.threshold")
def _threshold(ctx):
    self = _self(ctx)
    if self is None:
        return NotImplemented
    return {"self": _k("threshold", ctx.grad, self, threshold=ctx.static["threshold"])}


@formula("nn.hardtanh")
def _hardtanh(ctx):
    self, s = _self(ctx), ctx.static
    if self is None:
        return NotImplemented
    return {"self": _k("hardtanh", ctx.grad, self, min_val=s["min_val"], max_val=s["max_val"])}


def _slope_act(kernel, forward, key):
    """The formula of a leaky activation with slope ``static[key]`` (leaky_relu, rrelu in eval
    mode): ``<kernel>_backward`` of the result where the op was in place, else of ``self``."""

    def act_formula(ctx):
        slope = ctx.static[key]
        result = _own_result(ctx, forward(), **{key: slope})
        if result is NotImplemented:
            return NotImplemented
        x = ctx["self"] if result is None else result
        if x is None:
            return NotImplemented
        grad = _k(kernel, ctx.grad, x, negative_slope=slope, self_is_result=result is not None)
        return {"self": grad}

    return act_formula


def _leaky_relu_forward():
    from ..nn.functional import _leaky_relu

    return _leaky_relu


def _rrelu_forward():
    from ..nn._functional_extra import _leaky

    return _leaky


formula("nn.leaky_relu")(_slope_act("leaky_relu", _leaky_relu_forward, "negative_slope"))


@formula("nn.elu", "nn.celu")
def _elu(ctx):
    from ..nn.functional import _elu as fwd

    s = ctx.static
    static = {"alpha": s["alpha"], "scale": s["scale"], "input_scale": s["input_scale"]}
    result = _own_result(ctx, fwd, **static)
    # celu's formula takes 1 / alpha from alpha rounded to float
    static["input_scale"] = s.get("grad_input_scale", s["input_scale"])
    if result is NotImplemented:
        return NotImplemented
    x = ctx["self"] if result is None else result
    if x is None:
        return NotImplemented
    return {"self": _k("elu", ctx.grad, x, is_result=result is not None, **static)}


def _unary_kernel(kernel, *keys):
    def rule(ctx):
        self = _self(ctx)
        if self is None:
            return NotImplemented
        return {"self": _k(kernel, ctx.grad, self, **{k: ctx.static[k] for k in keys})}

    return rule


formula("nn.gelu")(_unary_kernel("gelu", "approximate"))
formula("nn.softplus")(_unary_kernel("softplus", "beta", "threshold"))
formula("nn.hardswish")(_unary_kernel("hardswish"))
formula("nn.log_sigmoid")(_unary_kernel("log_sigmoid"))
formula("nn.softshrink")(_unary_kernel("softshrink", "lambd"))
formula("nn.hardshrink")(_unary_kernel("hardshrink", "lambd"))
formula("nn.glu")(_unary_kernel("glu", "dim"))


@formula("nn.silu")
def _silu(ctx):
    # infinitely_differentiable_silu_backward
    x = _self(ctx)
    if x is None:
        return NotImplemented
    sigmoid = x.sigmoid()
    # C++ evaluates the right operand of an operator first (GCC), which orders the nodes
    right = sadd(x * rsub_scalar(1.0, sigmoid), 1.0)
    return {"self": ctx.grad * sigmoid * right}


@formula("nn.mish")
def _mish(ctx):
    # infinitely_differentiable_mish_backward
    x = _self(ctx)
    if x is None:
        return NotImplemented
    sigmoid = x.sigmoid()
    tanh_softplus = x.exp().log1p().tanh()
    # right operands first, as C++ evaluates them (see silu)
    right = rsub_scalar(1.0, tanh_softplus * tanh_softplus)
    inner = x * sigmoid * right
    return {"self": ctx.grad * (tanh_softplus + inner)}


@formula("nn.softmax", "nn.log_softmax")
def _softmax(ctx):
    kernel = "softmax" if ctx.op.name == "nn.softmax" else "log_softmax"
    dim = ctx.static["dim"]
    return {"self": _k(kernel, ctx.grad, ctx.result, dim=dim, input_dtype=ctx.dtype("self"))}


@formula("nn.clamp_min")
def _clamp_min(ctx):
    self = ctx["self"]
    if self is None:
        return NotImplemented
    g = ctx.grad
    return {"self": _where(self >= ctx.static["min"], g, g.new_zeros(()))}


# --- losses ----------------------------------------------------------------------------------


def _pair_loss(kernel, *keys):
    """``<loss>_backward(grad, self, target, ...)`` and, for the target, the same kernel with
    the two swapped (derivatives.yaml's ``target:`` entries)."""

    def rule(ctx):
        self, target = ctx["self"], ctx["target"]
        if self is None or target is None:
            return NotImplemented
        static = {"reduction": ctx.static["reduction"], **{k: ctx.static[k] for k in keys}}
        out = {}
        if ctx.needs("self"):
            out["self"] = _k(kernel, ctx.grad, self, target, **static)
        if ctx.needs("target"):
            out["target"] = _k(kernel, ctx.grad, target, self, **static)
        return out

    return rule


formula("nn.mse_loss")(_pair_loss("mse_loss"))
formula("nn.smooth_l1_loss")(_pair_loss("smooth_l1_loss", "beta"))
formula("nn.huber_loss")(_pair_loss("huber_loss", "delta"))


@formula("nn.soft_margin_loss")
def _soft_margin(ctx):
    self, target = ctx["self"], ctx["target"]
    if self is None or target is None:
        return NotImplemented
    return {"self": _k("soft_margin_loss", ctx.grad, self, target, **ctx.static)}


@formula("nn.nll_loss", "nn.nll_loss2d")
def _nll(ctx):
    self, target = ctx["self"], ctx["target"]
    if self is None or target is None:
        return NotImplemented
    kernel = "nll_loss" if ctx.op.name == "nn.nll_loss" else "nll_loss2d"
    s = ctx.static
    grad = _k(
        kernel,
        ctx.grad,
        self,
        target,
        ctx["weight"],
        reduction=s["reduction"],
        ignore_index=s["ignore_index"],
    )
    return {"self": grad}


@formula("nn.binary_cross_entropy")
def _bce(ctx):
    self, target, weight = ctx["self"], ctx["target"], ctx["weight"]
    if self is None or target is None:
        return NotImplemented
    reduction = ctx.static["reduction"]
    out = {}
    if ctx.needs("self"):
        out["self"] = _k(
            "binary_cross_entropy", ctx.grad, self, target, weight, reduction=reduction
        )
    if ctx.needs("target"):
        # binary_cross_entropy_target_backward: -logit(self) * grad (* weight) (/ numel)
        g = self.logit().neg() * ctx.grad
        if weight is not None:
            g = g * weight
        if reduction == "mean":
            g = sdiv(g, target.numel())
        out["target"] = g
    return out


@formula("nn.bce_with_logits")
def _bce_logits(ctx):
    self, target = ctx["self"], ctx["target"]
    weight, pos_weight = ctx["weight"], ctx["pos_weight"]
    if self is None or target is None:
        return NotImplemented
    reduction, grad, out = ctx.static["reduction"], ctx.grad, {}
    if ctx.needs("self"):
        # binary_cross_entropy_with_logits_backward, as run with grad mode on
        if pos_weight is not None:
            t = pos_weight * target
            g = (sadd(t, 1) - target) * self.sigmoid() - t
        else:
            g = self.sigmoid() - target
        g = g * grad
        if weight is not None:
            g = g * weight
        if reduction == "mean":
            g = sdiv(g, self.numel())
        out["self"] = g
    if ctx.needs("target"):
        # binary_cross_entropy_with_logits_target_backward
        import leafgrad.nn.functional as F

        if pos_weight is not None:
            g = (F.logsigmoid(-self) - F.logsigmoid(self) * pos_weight) * grad
        else:
            g = -self * grad
        if weight is not None:
            g = g * weight
        if reduction == "mean":
            g = sdiv(g, target.numel())
        out["target"] = g
    return out


# --- linear ----------------------------------------------------------------------------------


def _column_major(t, shape) -> bool:
    """``strides[0] == 1 && strides[1] == sizes[0]`` of a matrix (contiguous when not kept)."""
    from .shape import _contiguous_strides, _strides

    strides = _strides(t) if t is not None else _contiguous_strides(tuple(shape))
    return strides[0] == 1 and strides[1] == shape[0]


def _weight_t_column_major(w, shape) -> bool:
    """``mm_mat2_backward``'s check on ``weight.t()`` (``shape`` is the weight's)."""
    from .shape import _contiguous_strides, _strides

    strides = _strides(w) if w is not None else _contiguous_strides(tuple(shape))
    return strides[1] == 1 and strides[0] == shape[1]


def _weight_t(ctx, w):
    """The saved ``mat2``, the view ``weight.t()``: its ``grad_fn`` is the view's node that
    the product's edge leads to (Note [Views inside ops] in table.py), as PyTorch saves the
    view itself, so that gradients reaching it at a higher order meet the first-order ones
    there."""
    from .shape import _set_strides, _strides

    node = ctx.node
    if node is None:
        return w.t()
    k = ctx.op._edge_idx.index(ctx.op._operand_idx["mat2"])
    fn, nr = node._next_functions[k]
    if fn is None or type(fn).__name__ != "TBackward0":
        return w.t()
    t = _attach(fn, w._data.T, w)
    t._output_nr = nr
    return _set_strides(t, tuple(reversed(_strides(w))))


def _mm_grads(ctx, grad, m1_name):
    """``mm_mat1_backward`` / ``mm_mat2_backward`` for ``m1 @ weight.t()`` (alpha 1)."""
    out = {}
    m1, w = ctx[m1_name], ctx["mat2"]
    if ctx.needs(m1_name):
        if w is None:
            return NotImplemented
        mat2 = _weight_t(ctx, w)
        if _column_major(m1, ctx.shape(m1_name)):
            out[m1_name] = mat2.mm(grad.t()).t()
        else:
            out[m1_name] = grad.mm(mat2.t())
    if ctx.needs("mat2"):
        if m1 is None:
            return NotImplemented
        # ``ctx.shape("mat2")`` is that of the view ``weight.t()`` the edge takes
        if _weight_t_column_major(w, tuple(reversed(ctx.shape("mat2")))):
            g = grad.t().mm(m1).t()
        else:
            g = m1.t().mm(grad)
        # the gradient of the view ``weight.t()``; its node (TBackward0) takes it to the weight
        out["mat2"] = g
    return out


@formula("nn.mm")
def _mm(ctx):
    if not _real(ctx, "self", "mat2"):
        return NotImplemented
    return _mm_grads(ctx, ctx.grad, "self")


@formula("nn.addmm")
def _addmm(ctx):
    if not _real(ctx, "self", "mat1", "mat2"):
        return NotImplemented
    out = _mm_grads(ctx, ctx.grad, "mat1")
    if out is NotImplemented:
        return out
    if ctx.needs("self"):
        out["self"] = maybe_multiply(ctx.grad, 1)
    return out


# --- norms -----------------------------------------------------------------------------------


@formula("nn.vector_norm", "nn.norm_dim")
def _norm(ctx):
    # norm_backward; the right operand of a C++ operator is evaluated first (see silu)
    self = ctx["self"]
    if self is None or not _real(ctx, "self"):
        return NotImplemented
    s = ctx.static
    p, dim, keepdim = s["p"], s["dim"], s["keepdim"]
    norm = _saved_result(ctx)
    grad = ctx.grad
    ndim = self.ndim
    if not keepdim and ndim != 0:
        dims = sorted(d % ndim for d in ((dim,) if isinstance(dim, int) else dim))
        for d in dims:
            grad = grad.unsqueeze(d)
        for d in dims:
            norm = norm.unsqueeze(d)
    if p == 1.0:
        return {"self": self.sgn() * grad}
    if p == 2.0:
        return {"self": grad * (self / norm).masked_fill(norm == 0, 0)}
    if p < 1.0:
        right = self.abs().pow(p - 1).masked_fill(self == 0, 0)
        scaled = self.sgn() * right
        right = norm.pow(1 - p)
        return {"self": scaled * grad * right}
    right = self.abs().pow(p - 1 if p < 2.0 else p - 2)
    scaled = (self.sgn() if p < 2.0 else self) * right
    scale = (grad / norm.pow(p - 1)).masked_fill(norm == 0, 0)
    return {"self": scaled * scale}


# --- embedding, layer norm -------------------------------------------------------------------


@formula("nn.embedding", "nn.embedding_freq")
def _embedding(ctx):
    indices = ctx["indices"]
    if indices is None:
        return NotImplemented
    n = ctx.shape("weight")[0]
    kernel = "embedding_dense_freq" if ctx.op.name == "nn.embedding_freq" else "embedding_dense"
    g = _k(kernel, ctx.grad, indices, num_weights=n, padding_idx=ctx.static["padding_idx"])
    return {"weight": g}


@formula("native_layer_norm")
def _layer_norm(ctx):
    x, w, b = ctx["input"], ctx["weight"], ctx["bias"]
    if x is None or ctx.grad is None:
        return NotImplemented
    s = ctx.static
    gi, gw, gb = _k(
        "native_layer_norm", ctx.grad, x, None, None, w, b, ndim=s["ndim"], eps=s["eps"]
    )
    out = {"input": gi}
    if w is not None:
        out["weight"] = gw
    if b is not None:
        out["bias"] = gb
    return out


@formula("native_group_norm")
def _group_norm(ctx):
    # infinitely_differentiable_native_group_norm_backward (the forward's mean and rstd results
    # have no gradients here: leafgrad's group_norm does not return them)
    X, gamma, beta, dY = ctx["input"], ctx["weight"], ctx["bias"], ctx.grad
    if X is None or dY is None:
        return NotImplemented
    G, eps = ctx.static["groups"], ctx.static["eps"]
    shape = tuple(X.shape)
    N, C = shape[0], shape[1]
    HxW = math.prod(shape[2:])
    D = C // G
    s = 1.0 / (D * HxW)
    mean, rstd = dispatch(OPS["nn.group_norm_stats"], X, gamma, beta, groups=G, eps=eps)
    X_t = X.reshape(N, G, D, HxW)
    mean_t = mean.reshape(N, G, 1, 1)
    rstd_t = rstd.reshape(N, G, 1, 1)
    dY_t = dY.reshape(N, G, D, HxW)
    ds = (dY_t * X_t).sum(3).unsqueeze_(-1)
    db = dY_t.sum(3).unsqueeze_(-1)
    out = {}
    if ctx.needs("input"):
        gamma_t = None if gamma is None else gamma.reshape(1, G, D, 1)
        rstd_cube = rstd_t * rstd_t * rstd_t
        a = rstd_t if gamma_t is None else rstd_t * gamma_t
        b = (ds.sum(2) if gamma_t is None else (ds * gamma_t).sum(2)).unsqueeze_(-2)
        c = (db.sum(2) if gamma_t is None else (db * gamma_t).sum(2)).unsqueeze_(-2)
        b = smul((c * mean_t - b) * rstd_cube, s)
        c = -b * mean_t - smul(c * rstd_t, s)
        dX = a * dY_t + b * X_t + c
        out["input"] = dX.reshape(shape)
    if gamma is not None and ctx.needs("weight"):
        out["weight"] = ((ds - db * mean_t) * rstd_t).sum(0).reshape(tuple(gamma.shape))
    if beta is not None and ctx.needs("bias"):
        if gamma is None:  # PyTorch's ``reshape_as`` of the undefined gamma
            raise RuntimeError(f"shape '[0]' is invalid for input of size {C}")
        out["bias"] = db.sum(0).reshape(tuple(gamma.shape))
    return out


@formula("native_batch_norm")
def _batch_norm(ctx):
    x, w = ctx["input"], ctx["weight"]
    if x is None or ctx.grad is None:
        return NotImplemented
    s = ctx.static
    rm, rv = ctx["running_mean"], ctx["running_var"]
    gi, gw, gb = _k(
        "native_batch_norm",
        ctx.grad,
        x,
        w,
        rm,
        rv,
        None,
        None,
        training=s["training"],
        eps=s["eps"],
    )
    out = {"input": gi}
    if w is not None:
        out["weight"] = gw
    if ctx.needs("bias"):
        out["bias"] = gb
    return out


def _refused(kernel, ctx, *operands, **static):
    """A kernel without a derivative (a ``NotImplemented`` node), with an edge for the incoming
    gradient only where it requires grad."""
    name = kernel if ctx.grad.requires_grad else kernel + "_self"
    return _k(name, ctx.grad, *operands, **static)


@formula("nn.hardsigmoid")
def _hardsigmoid(ctx):
    self = _self(ctx)
    if self is None:
        return NotImplemented
    return {"self": _refused("hardsigmoid", ctx, self)}


@formula("nn.multi_margin_loss")
def _multi_margin(ctx):
    self, target = ctx["self"], ctx["target"]
    if self is None or target is None:
        return NotImplemented
    return {"self": _refused("multi_margin_loss", ctx, self, target, ctx["weight"], **ctx.static)}


@formula("nn.multilabel_margin_loss")
def _multilabel_margin(ctx):
    self, target = ctx["self"], ctx["target"]
    if self is None or target is None:
        return NotImplemented
    return {"self": _refused("multilabel_margin_loss", ctx, self, target, **ctx.static)}


# --- the backward kernels' own formulas (their derivatives.yaml entries) ---------------------
# embedding_dense_backward has no entry here: it takes the one-op form (JAX differentiates its
# forward; it is linear in the gradient, so its graphs are PyTorch's). The kernels PyTorch has no
# derivative for (hardsigmoid, multi_margin_loss, multilabel_margin_loss) need none: their
# NotImplemented node raises. The norms' double backwards read the saved statistics (mean and
# 1 / std) as constants, as PyTorch's saved forward outputs that never require grad are.


def _const(data, like):
    """A tensor without history (a saved forward output that never requires grad)."""
    return _tensor.Tensor._make(data, like._dtype, like._device)


def _stats(x, axes, eps):
    """The mean and ``1 / sqrt(var + eps)`` the forward saves, recomputed from the input."""
    from ..nn._conv_pool import _opmath

    v = _opmath(x._data)
    mean = jnp.mean(v, axis=axes)
    var = jnp.mean(jnp.square(v - jnp.expand_dims(mean, axes)), axis=axes)
    invstd = jax.lax.rsqrt(var + jnp.asarray(eps, v.dtype))
    return mean.astype(x._data.dtype), invstd.astype(x._data.dtype)


def _add_opt(a, b):
    return b if a is None else a + b


@formula("nn.bwd.native_layer_norm")
def _layer_norm_double(ctx):
    # layer_norm_double_backward: the saved mean and rstd are constants
    input_t, gamma, go_t = ctx["input"], ctx["weight"], ctx["grad_out"]
    if input_t is None or go_t is None:
        return NotImplemented
    ggI, ggG, ggB = (tuple(ctx.grads) + (None, None, None))[:3]
    ndim = ctx.static["ndim"]
    shape = tuple(input_t.shape)
    axis = len(shape) - ndim
    M, N = math.prod(shape[:axis]), math.prod(shape[axis:])
    mean_d, rstd_d = _stats(input_t, tuple(range(axis, len(shape))), ctx.static["eps"])
    inp = input_t.reshape(M, N)
    gO = go_t.reshape(M, N)
    save_mean = _const(mean_d, input_t).reshape(M, 1)
    save_invstd = _const(rstd_d, input_t).reshape(M, 1)
    affine = gamma is not None
    ggG_e = ggB_e = ggI_e = None
    if affine:
        gamma_e = gamma.reshape(1, N)
        if ggG is not None:
            ggG_e = ggG.reshape(1, N)
        if ggB is not None:
            ggB_e = ggB.reshape(1, N)
    else:
        gamma_e = inp.new_ones((1,))
    if ggI is not None:
        ggI_e = ggI.reshape(M, N)
    input_sub_mu = inp - save_mean
    s1 = save_invstd
    s_neg1 = s1.pow(2)
    s_32 = s1.pow(3)
    gI = None
    in_mu_s32 = input_sub_mu * s_32
    if ggI is not None:
        gxhat = gO * gamma_e
        gxhat_mu_sum = (gxhat * input_sub_mu).sum(1, True)
        gxhat_sum = gxhat.sum(1, True)
        ggI_sum = ggI_e.sum(1, True)
        ggI_mu_sum = (ggI_e * input_sub_mu).sum(1, True)
        all_sub = sdiv(ggI_sum * gxhat_sum, N) - (ggI_e * gxhat).sum(1, True)
        all_sub = all_sub + smul(s_neg1 * gxhat_mu_sum * ggI_mu_sum, 3.0 / N)
        gI_0t = sdiv(in_mu_s32 * all_sub, N)
        gI_1t = sdiv(ggI_mu_sum * s_32, N) * (sdiv(gxhat_sum, N) - gxhat)
        gI_2t = sdiv(gxhat_mu_sum * s_32, N) * (sdiv(ggI_sum, N) - ggI_e)
        gI = gI_0t + gI_1t + gI_2t
    if affine and ggG is not None:
        t0 = gO * ggG_e * s1
        t1 = sdiv(s1 * (gO * ggG_e).sum(1, True), -N)
        t2 = sdiv(in_mu_s32 * (gO * ggG_e * input_sub_mu).sum(1, True), -N)
        gI = _add_opt(gI, t0 + t1 + t2)
    if gI is not None:
        gI = gI.reshape(shape)

    def first_bwd(g, gam):
        h0 = sdiv(gam * s1, N)
        h1 = (
            smul(g, N) - g.sum(1, True) - input_sub_mu.mul(s_neg1) * (g * input_sub_mu).sum(1, True)
        )
        return h0 * h1

    gG = None
    if affine and ggI is not None:
        gG = first_bwd(ggI_e, s1.new_ones(()))
        gG = (gO * gG).sum(0).reshape(tuple(gamma.shape))
    ggO = None
    if ggI is not None:
        ggO = first_bwd(ggI_e, gamma_e)
    if ggG_e is not None:
        ggO = _add_opt(ggO, ggG_e * input_sub_mu * s1)
    if ggB_e is not None:
        ggO = _add_opt(ggO, ggB_e)
    if ggO is not None:
        ggO = ggO.expand(M, N).reshape(shape)
    out = {}
    for name, g in (("grad_out", ggO), ("input", gI), ("weight", gG)):
        if g is not None and ctx.needs(name):
            out[name] = g
    return out


def _sum_exclude_dim1(t, keepdim=True):
    r = t.sum(0, keepdim)
    start = 1 if keepdim else 0
    for d in range(r.ndim - 1, start, -1):
        r = r.sum(d, keepdim)
    return r


def _unsqueeze_dim1(src, ndim):
    while src.ndim < ndim - 1:
        src = src.unsqueeze(1)
    if src.ndim == ndim - 1:
        src = src.unsqueeze(0)
    return src


def _expand_as_dim1(src, target):
    while src.ndim < target.ndim - 1:
        src = src.unsqueeze(1)
    return src.expand_as(target)


@formula("nn.bwd.native_batch_norm")
def _batch_norm_double(ctx):
    # batchnorm_double_backward: the saved mean and invstd (training) are constants
    inp, gamma, gO = ctx["input"], ctx["weight"], ctx["grad_out"]
    if inp is None or gO is None:
        return NotImplemented
    training, eps = ctx.static["training"], ctx.static["eps"]
    rm, rv = ctx["running_mean"], ctx["running_var"]
    if not training and (rm is None or rv is None):
        return NotImplemented
    ggI, ggG, ggB = (tuple(ctx.grads) + (None, None, None))[:3]
    affine = gamma is not None
    ggG_e = ggB_e = None
    if affine:
        gamma_e = _expand_as_dim1(gamma, inp)
        if ggG is not None:
            ggG_e = _expand_as_dim1(ggG, inp)
        if ggB is not None:
            ggB_e = _expand_as_dim1(ggB, inp)
    else:
        gamma_e = inp.new_ones(())
    shape = tuple(inp.shape)
    M = shape[0] * math.prod(shape[2:])
    nd = len(shape)
    if training:
        mean_d, invstd_d = _stats(inp, (0,) + tuple(range(2, nd)), eps)
        mu = _unsqueeze_dim1(_const(mean_d, inp), nd)
    else:
        mu = _unsqueeze_dim1(rm, nd)
    input_sub_mu = inp - mu
    if training:
        s1 = _unsqueeze_dim1(_const(invstd_d, inp), nd)
    else:
        s1 = _unsqueeze_dim1(sadd(rv, eps).pow(-0.5), nd)
    s_neg1 = s1.pow(2)
    s_32 = s1.pow(3)
    in_mu_s32 = input_sub_mu * s_32
    gOinmu_sum = _sum_exclude_dim1(gO * input_sub_mu)
    gO_sum = _sum_exclude_dim1(gO)
    gI = None
    if ggI is not None and training:
        ggI_sum = _sum_exclude_dim1(ggI)
        ggIinmu_sum = _sum_exclude_dim1(ggI * input_sub_mu)
        all_sub = sdiv(ggI_sum * gO_sum, M) - _sum_exclude_dim1(gO * ggI)
        all_sub = all_sub + smul(s_neg1 * gOinmu_sum * ggIinmu_sum, 3.0 / M)
        gI_0t = sdiv(in_mu_s32 * all_sub, M)
        gI_1t = sdiv(ggIinmu_sum * s_32, M) * (sdiv(gO_sum, M) - gO)
        gI_2t = sdiv(gOinmu_sum * s_32, M) * (sdiv(ggI_sum, M) - ggI)
        gI = gamma_e * (gI_0t + gI_1t + gI_2t)
    if affine and ggG is not None:
        if training:
            t0 = gO * s1
            t1 = sdiv(s1 * gO_sum, -M)
            t2 = sdiv(in_mu_s32 * _sum_exclude_dim1(gO * input_sub_mu), -M)
            gI = _add_opt(gI, ggG_e * (t0 + t1 + t2))
        else:
            gI = _add_opt(gI, ggG_e * s1 * gO)

    def first_bwd(g, gam):
        h0 = sdiv(gam * s1, M)
        h1 = smul(g, M) - _sum_exclude_dim1(g)
        h1 = h1 - input_sub_mu.mul(s_neg1) * _sum_exclude_dim1(g * input_sub_mu)
        return h0 * h1

    gG = None
    if affine and ggI is not None:
        if training:
            gG = _sum_exclude_dim1(ggI * first_bwd(gO, s1.new_ones(())), False)
        else:
            gG = _sum_exclude_dim1(ggI * gO * s1, False)
    ggO = None
    if ggI is not None:
        ggO = first_bwd(ggI, gamma_e) if training else ggI * s1 * gamma_e
    if ggG_e is not None:
        ggO = _add_opt(ggO, ggG_e * input_sub_mu * s1)
    if ggB_e is not None:
        ggO = _add_opt(ggO, ggB_e)
    out = {}
    for name, g in (("grad_out", ggO), ("input", gI), ("weight", gG)):
        if g is not None and ctx.needs(name):
            out[name] = g
    return out


def _zeros_like(t):
    return t.new_zeros(t.shape)


def _mask_kernel(kernel, *keys):
    """``grad_output: <kernel>(grad, self, ...)``, ``self: zeros_like(grad)``."""
    go_name = "grad_out" if kernel == "hardshrink" else "grad_output"

    def rule(ctx):
        self = ctx["self"]
        if self is None:
            return NotImplemented
        out = {}
        if ctx.needs(go_name):
            out[go_name] = _k(kernel, ctx.grad, self, **{k: ctx.static[k] for k in keys})
        if ctx.needs("self"):
            out["self"] = _zeros_like(ctx.grad)
        return out

    return rule


formula("nn.bwd.threshold")(_mask_kernel("threshold", "threshold"))
formula("nn.bwd.hardtanh")(_mask_kernel("hardtanh", "min_val", "max_val"))
formula("nn.bwd.softshrink")(_mask_kernel("softshrink", "lambd"))
formula("nn.bwd.hardshrink")(_mask_kernel("hardshrink", "lambd"))


def _slope_kernel(name):
    """The formula of ``<name>_backward(grad_output, self, negative_slope)`` (leaky_relu,
    rrelu_with_noise in eval mode): the kernel again for ``grad_output``, zeros for ``self``."""

    def bwd_formula(ctx):
        self = ctx["self"]
        if self is None:
            return NotImplemented
        out = {}
        if ctx.needs("grad_output"):
            slope = ctx.static["negative_slope"]
            out["grad_output"] = _k(
                name, ctx.grad, self, negative_slope=slope, self_is_result=False
            )
        if ctx.needs("self"):
            out["self"] = _zeros_like(ctx.grad)
        return out

    return bwd_formula


formula("nn.bwd.leaky_relu")(_slope_kernel("leaky_relu"))


@formula("nn.bwd.hardswish")
def _hardswish_bwd_formula(ctx):
    self, go = ctx["self"], ctx["grad_output"]
    if self is None or go is None:
        return NotImplemented
    out = {}
    if ctx.needs("grad_output"):
        out["grad_output"] = _k("hardswish", ctx.grad, self)
    if ctx.needs("self"):
        inside = (self > -3.0).logical_and(self < 3.0)
        out["self"] = _where(inside, sdiv(ctx.grad * go, 3.0), self.new_zeros(()))
    return out


@formula("nn.bwd.tanh", "nn.bwd.sigmoid")
def _tanh_sigmoid_bwd_formula(ctx):
    go, output = ctx["grad_output"], ctx["output"]
    if go is None or output is None or not _real(ctx, "grad_output", "output"):
        return NotImplemented
    kernel = ctx.op.name.rsplit(".", 1)[1]
    out = {}
    if ctx.needs("grad_output"):
        out["grad_output"] = _k(kernel, ctx.grad, output)
    if ctx.needs("output"):
        if kernel == "tanh":
            out["output"] = ctx.grad * (smul(output, -2) * go)
        else:
            right = sadd(smul(output, -2), 1)
            out["output"] = ctx.grad * go * right
    return out


@formula("nn.bwd.softmax")
def _softmax_bwd_formula(ctx):
    go, output = ctx["grad_output"], ctx["output"]
    if go is None or output is None:
        return NotImplemented
    dim, grad, out = ctx.static["dim"], ctx.grad, {}
    if ctx.needs("grad_output"):
        out["grad_output"] = _k("softmax", grad, output, **ctx.static)
    if ctx.needs("output"):
        # softmax_double_backward, right operands first
        c = go * (output * grad).sum(dim, True)
        b = (output * go).sum(dim, True) * grad
        out["output"] = go * grad - b - c
    return out


@formula("nn.bwd.log_softmax")
def _log_softmax_bwd_formula(ctx):
    go, output = ctx["grad_output"], ctx["output"]
    if go is None or output is None:
        return NotImplemented
    dim, grad, out = ctx.static["dim"], ctx.grad, {}
    if ctx.needs("grad_output"):
        out["grad_output"] = grad - (grad * output.exp()).sum(dim, True)
    if ctx.needs("output"):
        e = output.exp()
        out["output"] = -go.sum(dim, True) * e * grad
    return out


def _mean_div(g, reduction, n):
    return sdiv(g, n) if reduction == "mean" else g


@formula("nn.bwd.mse_loss")
def _mse_bwd_formula(ctx):
    go, self, target = ctx["grad_output"], ctx["self"], ctx["target"]
    if go is None or self is None or target is None:
        return NotImplemented
    reduction, out = ctx.static["reduction"], {}
    if ctx.needs("grad_output"):
        out["grad_output"] = _k("mse_loss", ctx.grad, self, target, reduction=reduction)
    if ctx.needs("self") or ctx.needs("target"):
        # mse_loss_double_backward(grad * grad_output, ...)
        gg = ctx.grad * go
        if ctx.needs("self"):
            out["self"] = _mean_div(smul(gg, 2), reduction, self.numel())
        if ctx.needs("target"):
            out["target"] = -_mean_div(smul(gg, 2), reduction, target.numel())
    return out


def _smooth_l1_double(gg, self, target, reduction, beta):
    if beta == 0:
        return gg.new_zeros(gg.shape)
    d = (self - target).abs()
    g = sdiv(gg * (d < beta).to(gg.dtype), beta)
    return _mean_div(g, reduction, self.numel())


def _huber_double(gg, self, target, reduction, delta):
    d = (self - target).abs()
    return _mean_div(gg * (d < delta), reduction, self.numel())


@formula("nn.bwd.smooth_l1_loss", "nn.bwd.huber_loss")
def _smooth_l1_huber_bwd_formula(ctx):
    go, self, target = ctx["grad_output"], ctx["self"], ctx["target"]
    if go is None or self is None or target is None:
        return NotImplemented
    huber = ctx.op.name == "nn.bwd.huber_loss"
    kernel = "huber_loss" if huber else "smooth_l1_loss"
    key = "delta" if huber else "beta"
    reduction, param, out = ctx.static["reduction"], ctx.static[key], {}
    static = {"reduction": reduction, key: param}
    if ctx.needs("grad_output"):
        if huber and reduction != "none":
            # huber_loss_double_backward_grad_output
            r = _k(kernel, go.new_ones(go.shape), self, target, **static)
            out["grad_output"] = (r * ctx.grad).sum()
        else:
            out["grad_output"] = _k(kernel, ctx.grad, self, target, **static)
    if ctx.needs("self") or ctx.needs("target"):
        double = _huber_double if huber else _smooth_l1_double
        g = double(ctx.grad * go, self, target, reduction, param)
        if ctx.needs("self"):
            out["self"] = g
        if ctx.needs("target"):
            out["target"] = -g
    return out


@formula("nn.bwd.soft_margin_loss")
def _soft_margin_bwd_formula(ctx):
    go, self, target = ctx["grad_output"], ctx["self"], ctx["target"]
    if go is None or self is None or target is None:
        return NotImplemented
    reduction, out = ctx.static["reduction"], {}
    if ctx.needs("grad_output"):
        # soft_margin_loss_double_backward_grad_output
        if reduction == "none":
            out["grad_output"] = _k("soft_margin_loss", ctx.grad, self, target, **ctx.static)
        else:
            r = _k("soft_margin_loss", go.new_ones(go.shape), self, target, **ctx.static)
            out["grad_output"] = (r * ctx.grad).sum()
    if ctx.needs("self"):
        # soft_margin_loss_double_backward(grad * grad_output, ...)
        gg = ctx.grad * go
        z = (self * -target).exp()
        zplus1 = sadd(z, 1)
        denom = zplus1 * zplus1
        g = gg * (target * target) * z / denom
        out["self"] = _mean_div(g, reduction, self.numel())
    return out


@formula("nn.bwd.nll_loss", "nn.bwd.nll_loss2d")
def _nll_bwd_formula(ctx):
    target, s, out = ctx["target"], ctx.static, {}
    if target is None:
        return NotImplemented
    if ctx.needs("grad_output"):
        op = "nn.nll_loss" if ctx.op.name == "nn.bwd.nll_loss" else "nn.nll_loss2d"
        out["grad_output"] = dispatch(
            OPS[op],
            ctx.grad,
            target,
            ctx["weight"],
            reduction=s["reduction"],
            ignore_index=s["ignore_index"],
        )
    if ctx.needs("self"):
        out["self"] = _zeros_like(ctx.grad)
    return out


def _kernel_pair(ctx):
    go, self = ctx["grad_output"], ctx[ctx.op.operands[1]]
    if go is None or self is None or not _real(ctx, "grad_output"):
        return None
    return go, self


@formula("nn.bwd.elu")
def _elu_bwd_formula(ctx):
    pair = _kernel_pair(ctx)
    if pair is None:
        return NotImplemented
    go, sor = pair
    s, out = ctx.static, {}
    if ctx.needs("grad_output"):
        out["grad_output"] = _k("elu", ctx.grad, sor, **s)
    if ctx.needs("self_or_result"):
        # elu_double_backward
        negative = (sor < 0).to(ctx.grad.dtype)
        scaled = smul(ctx.grad * go, s["input_scale"])
        if s["is_result"]:
            out["self_or_result"] = scaled * negative
        else:
            out["self_or_result"] = _k("elu", scaled, sor, **s) * negative
    return out


def _gelu_double(ggI, gO, x, approximate):
    """gelu_double_backward; C++ evaluates a binary operator's right operand first."""
    if approximate == "tanh":
        beta = math.sqrt(2.0) * (2.0 / math.sqrt(math.pi)) * 0.5
        kappa = 0.044715
        inner = smul(x + smul(x.pow(3), kappa), beta)
        tanh_inner = inner.tanh()
        sech_inner = rdiv_scalar(1, inner.cosh())
        f = smul(x, 0.5)
        g = rsub_scalar(1, tanh_inner * tanh_inner)
        h = smul(sadd(smul(x, 3 * kappa) * x, 1), beta)
        f_prime_gh = smul(g, 0.5) * h
        g_prime = smul(sech_inner, 2) * (-sech_inner * tanh_inner) * h
        g_prime_fh = f * h * g_prime
        h_prime = smul(smul(x, 6 * kappa), beta)
        h_prime_fg = f * g * h_prime
        return ggI * gO * (smul(f_prime_gh, 2) + g_prime_fh + h_prime_fg)
    k_beta = (2.0 / math.sqrt(math.pi)) * math.sqrt(0.5) * 0.5
    input_sq = x * x
    pdf = smul(smul(input_sq, -0.5).exp(), k_beta)
    return ggI * gO * (smul(pdf, 2) - input_sq * pdf)


@formula("nn.bwd.gelu")
def _gelu_bwd_formula(ctx):
    pair = _kernel_pair(ctx)
    if pair is None:
        return NotImplemented
    go, self = pair
    approximate, out = ctx.static["approximate"], {}
    if ctx.needs("grad_output"):
        out["grad_output"] = _k("gelu", ctx.grad, self, approximate=approximate)
    if ctx.needs("self"):
        out["self"] = _gelu_double(ctx.grad, go, self, approximate)
    return out


@formula("nn.bwd.softplus")
def _softplus_bwd_formula(ctx):
    pair = _kernel_pair(ctx)
    if pair is None:
        return NotImplemented
    go, self = pair
    beta, threshold, out = ctx.static["beta"], ctx.static["threshold"], {}
    if ctx.needs("grad_output"):
        out["grad_output"] = _k("softplus", ctx.grad, self, beta=beta, threshold=threshold)
    if ctx.needs("self"):
        # softplus_double_backward(grad * grad_output, self, beta, threshold)
        x = smul(self, beta)
        g = _k("sigmoid", ctx.grad * go, x.sigmoid()) * (x < threshold).to(ctx.grad.dtype)
        out["self"] = smul(g, beta)
    return out


@formula("nn.bwd.log_sigmoid")
def _log_sigmoid_bwd_formula(ctx):
    pair = _kernel_pair(ctx)
    if pair is None:
        return NotImplemented
    go, self = pair
    out = {}
    if ctx.needs("grad_output"):
        out["grad_output"] = _k("log_sigmoid", ctx.grad, self)
    if ctx.needs("self"):
        # log_sigmoid_double_backward(grad * grad_output, self)
        z = self.sigmoid()
        out["self"] = ctx.grad * go * ssub(z, 1) * z
    return out


@formula("nn.bwd.glu")
def _glu_bwd_formula(ctx):
    pair = _kernel_pair(ctx)
    if pair is None:
        return NotImplemented
    gO, x = pair
    dim = ctx.static["dim"] % x.ndim
    half = x.shape[dim] // 2
    grad, out = ctx.grad, {}
    if ctx.needs("grad_output"):
        # glu_double_backward_grad_output
        sizes = list(x.shape)
        sizes[dim] = half
        tmp = grad * _k("glu", x.new_ones(tuple(sizes)), x, dim=dim)
        out["grad_output"] = tmp.narrow(dim, 0, half) + tmp.narrow(dim, half, half)
    if ctx.needs("self"):
        # glu_double_backward
        first, second = x.narrow(dim, 0, half), x.narrow(dim, half, half)
        sig_second = second.sigmoid()
        one_sub_sig_second = rsub_scalar(1, sig_second)
        sig_one_sub_sig = sig_second * one_sub_sig_second
        ggI_first, ggI_second = grad.narrow(dim, 0, half), grad.narrow(dim, half, half)
        ggI_second_gO = ggI_second * gO
        gI_first = ggI_second_gO * sig_one_sub_sig
        right = ggI_second_gO * sig_one_sub_sig * rsub_scalar(1, smul(sig_second, 2)) * first
        gI_second = ggI_first * gO * sig_one_sub_sig + right
        from .api import FUNCTIONS

        out["self"] = FUNCTIONS["cat"]([gI_first, gI_second], dim)
    return out


@formula("nn.bwd.binary_cross_entropy")
def _bce_bwd_formula(ctx):
    go, self, target = ctx["grad_output"], ctx["self"], ctx["target"]
    if go is None or self is None or target is None or not _real(ctx, "self"):
        return NotImplemented
    weight, reduction, grad, out = ctx["weight"], ctx.static["reduction"], ctx.grad, {}
    eps = 1e-12
    if ctx.needs("self"):
        # binary_cross_entropy_double_backward
        inp_pl_eps = sadd(self, eps)
        one_m_inp_pl_eps = sadd(rsub_scalar(1, self), eps)
        num = self * self - smul(self, 2) * target + target
        gI = num / (inp_pl_eps.pow(2) * one_m_inp_pl_eps.pow(2))
        gI = gI * (grad * go)
        if weight is not None:
            gI = gI * weight
        out["self"] = sdiv(gI, self.numel()) if reduction == "mean" else gI
    if ctx.needs("target"):
        # binary_cross_entropy_double_backward_target
        res = -grad * go
        if weight is not None:
            res = res * weight
        denom = rsub_scalar(1, self) * self
        from ..autograd import grad_mode

        with grad_mode.no_grad():
            denom.clamp_min_(eps)
        res = res / denom
        out["target"] = sdiv(res, target.numel()) if reduction == "mean" else res
    if ctx.needs("grad_output"):
        # binary_cross_entropy_double_backward_grad_output
        ggO = (self - target) / (sadd(self, eps) * sadd(rsub_scalar(1, self), eps))
        ggO = ggO * grad
        if weight is not None:
            ggO = ggO * weight
        if reduction == "mean":
            ggO = sdiv(ggO.sum(), self.numel())
        elif reduction == "sum":
            ggO = ggO.sum()
        out["grad_output"] = ggO
    return out


formula("nn.rrelu_eval")(_slope_act("rrelu_with_noise", _rrelu_forward, "slope"))


formula("nn.bwd.rrelu_with_noise")(_slope_kernel("rrelu_with_noise"))


def _rrelu_train_forward():
    return lambda x, noise: x * noise


@formula("nn.rrelu_train")
def _rrelu_train(ctx):
    noise = ctx["noise"]
    if noise is None:
        return NotImplemented
    result = _own_result(ctx, _rrelu_train_forward(), noise=noise._data)
    if result is NotImplemented:
        return NotImplemented
    x = ctx["self"] if result is None else result
    if x is None:
        return NotImplemented
    return {"self": _k("rrelu_with_noise_train", ctx.grad, x, noise)}


@formula("nn.bwd.rrelu_with_noise_train")
def _rrelu_train_bwd(ctx):
    self, noise = ctx["self"], ctx["noise"]
    if self is None or noise is None:
        return NotImplemented
    out = {}
    if ctx.needs("grad_output"):
        out["grad_output"] = _k("rrelu_with_noise_train", ctx.grad, self, noise)
    if ctx.needs("self"):
        out["self"] = _zeros_like(ctx.grad)
    return out


@formula("nn.prelu")
def _prelu(ctx):
    self, weight = ctx["self"], ctx["weight"]
    if self is None or weight is None or not _real(ctx, "self"):
        return NotImplemented
    gs, gw = _k("prelu", ctx.grad, self, weight)
    return {"self": gs, "weight": gw}


@formula("nn.bwd.prelu")
def _prelu_bwd_formula(ctx):
    # _prelu_kernel_backward's entry in derivatives.yaml
    go, self, weight = ctx["grad_output"], ctx["self"], ctx["weight"]
    if go is None or self is None or weight is None:
        return NotImplemented
    gg0, gg1 = (tuple(ctx.grads) + (None, None))[:2]
    pos, out = self >= 0, {}
    if ctx.needs("grad_output"):
        if gg0 is not None:
            other = gg0 * weight if gg1 is None else gg0 * weight + gg1 * self
            out["grad_output"] = _where(pos, gg0, other)
        elif gg1 is not None:
            out["grad_output"] = _where(pos, go.new_zeros(()), gg1 * self)
    if ctx.needs("self"):
        if gg1 is not None:
            out["self"] = _where(pos, self.new_zeros(()), go * gg1)
        else:
            out["self"] = _zeros_like(self)
    if ctx.needs("weight"):
        if gg0 is not None:
            out["weight"] = _where(pos, go.new_zeros(()), go * gg0)
        else:
            out["weight"] = _zeros_like(self)
    return out


# --- layout ops whose backward is another table op -----------------------------------------


@formula("constant_pad_nd")
def _constant_pad_nd_formula(ctx):
    # constant_pad_nd_backward: the gradient cropped by the negated pads
    pad = tuple((-lo, -hi) for lo, hi in ctx.static["pad"])
    return {"self": dispatch(OPS["constant_pad_nd"], ctx.grad, pad=pad, value=0)}


@formula("nn.pixel_shuffle")
def _pixel_shuffle_formula(ctx):
    return {"self": dispatch(OPS["nn.pixel_unshuffle"], ctx.grad, **ctx.static)}


@formula("nn.pixel_unshuffle")
def _pixel_unshuffle_formula(ctx):
    return {"self": dispatch(OPS["nn.pixel_shuffle"], ctx.grad, **ctx.static)}


@formula("im2col")
def _im2col_formula(ctx):
    # im2col's backward is col2im to the input's spatial size
    size = tuple(ctx.shape("self")[-2:])
    return {"self": dispatch(OPS["col2im"], ctx.grad, output_size=size, **ctx.static)}


@formula("col2im")
def _col2im_formula(ctx):
    static = {k: v for k, v in ctx.static.items() if k != "output_size"}
    return {"self": dispatch(OPS["im2col"], ctx.grad, **static)}
