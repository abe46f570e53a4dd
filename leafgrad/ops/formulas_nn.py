"""PyTorch's derivative formulas for create_graph (Note [Graph formulas] in formulas.py):
activations, softmax, losses, ``F.linear``'s products, norms and embeddings.

Most of these formulas call a backward kernel that is an ATen op with its own derivative
(``tanh_backward``, ``threshold_backward``, ``_softmax_backward_data``, ``mse_loss_backward``...),
recorded as ``<Kernel>Backward0`` nodes (``TanhBackwardBackward0``); the kernels are op-table
entries here (``nn.bwd.*``), with operands in ATen's order and a JAX forward computing the kernel,
so that JAX differentiates them again. The others (``silu``, ``mish``, the logits losses, ``mm``,
the norms) are composites of recorded ops, as in ``FunctionsManual.cpp``.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
from jax.scipy.special import erf

from .. import _tensor
from .dispatch import dispatch
from .formulas import _where, formula, maybe_multiply, rsub_scalar, sadd, sdiv, smul
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


def _embedding_bwd(go, indices, num_weights, padding_idx):
    rows = go.reshape((-1, go.shape[-1]))
    idx = indices.reshape(-1)
    if padding_idx is not None:
        rows = jnp.where((idx == padding_idx)[:, None], jnp.zeros_like(rows), rows)
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


def _layer_norm_bwd_rule(meta, static):
    dt = meta[1][0]
    return (None,) * len(meta), (dt, dt, dt)


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
    _kernel(
        "embedding_dense",
        _embedding_bwd,
        "EmbeddingDenseBackwardBackward0",
        ("grad_output", "indices"),
        ("grad_output",),
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
    t._grad_fn, t._output_nr, t._requires_grad = node, 0, True
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
    (``silu_``, ``hardtanh_``, ``threshold_``...) saves ``original_self = self.clone()``,
    recorded as a ``CloneBackward0``; leafgrad's in-place node keeps the input's value
    (``_operands[0]`` is None, ops/inplace.py), so the clone is made here."""
    self = ctx["self"]
    if self is None:
        return None
    node = ctx.node
    ops = getattr(node, "_operands", None) if node is not None else None
    if ops and ops[0] is None:
        return self.clone()
    return self


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


@formula("nn.leaky_relu")
def _leaky_relu(ctx):
    from ..nn.functional import _leaky_relu as fwd

    slope = ctx.static["negative_slope"]
    result = _own_result(ctx, fwd, negative_slope=slope)
    if result is NotImplemented:
        return NotImplemented
    x = ctx["self"] if result is None else result
    if x is None:
        return NotImplemented
    grad = _k("leaky_relu", ctx.grad, x, negative_slope=slope, self_is_result=result is not None)
    return {"self": grad}


@formula("nn.elu", "nn.celu")
def _elu(ctx):
    from ..nn.functional import _elu as fwd

    s = ctx.static
    static = {"alpha": s["alpha"], "scale": s["scale"], "input_scale": s["input_scale"]}
    result = _own_result(ctx, fwd, **static)
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


@formula("nn.embedding")
def _embedding(ctx):
    indices = ctx["indices"]
    if indices is None:
        return NotImplemented
    n = ctx.shape("weight")[0]
    g = _k(
        "embedding_dense", ctx.grad, indices, num_weights=n, padding_idx=ctx.static["padding_idx"]
    )
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


# --- the backward kernels' own formulas (their derivatives.yaml entries) ---------------------
# Kernels without an entry here (elu, gelu, softplus, log_sigmoid, glu, binary_cross_entropy,
# embedding_dense, native_layer_norm) take the one-op form: JAX differentiates their forwards.


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


@formula("nn.bwd.leaky_relu")
def _leaky_relu_bwd_formula(ctx):
    self = ctx["self"]
    if self is None:
        return NotImplemented
    out = {}
    if ctx.needs("grad_output"):
        slope = ctx.static["negative_slope"]
        out["grad_output"] = _k(
            "leaky_relu", ctx.grad, self, negative_slope=slope, self_is_result=False
        )
    if ctx.needs("self"):
        out["self"] = _zeros_like(ctx.grad)
    return out


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
