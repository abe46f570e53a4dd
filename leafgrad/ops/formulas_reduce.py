"""PyTorch's derivative formulas for create_graph (Note [Graph formulas] in formulas.py): matrix
products and reductions.

The formulas follow ``tools/autograd/derivatives.yaml`` and the helpers of
``torch/csrc/autograd/FunctionsManual.cpp`` (``mm_mat1_backward``, ``prod_backward``,
``var_backward``, ``norm_backward``, ``scale_grad_by_count``, ``logcumsumexp_backward``, ...)
and ``aten/src/ATen/native/ReduceOps.cpp`` (``cumprod_backward``, ``cummaxmin_backward``), op for
op, so that each recorded step has PyTorch's node name. ``matmul`` is a composite: it records
``dot``, ``mv``, ``mm`` or ``bmm`` with views around them, whose formulas are here and in
``formulas_shape``.
"""

from __future__ import annotations

import math

import jax

from .. import _tensor
from .formulas import (
    FORMULAS,
    _conj,
    _dims,
    formula,
    maybe_multiply,
    sadd,
    smul,
    sum_backward,
)
from .table import OPS


def _formula_if_free(*names: str):
    """``formula`` for table entries another formula module may already cover (the ``nn.``
    variants of the products and norms): register only the names still free."""

    def register(fn):
        for name in names:
            if name in OPS and name not in FORMULAS:
                FORMULAS[name] = fn
        return fn

    return register


def _fn(name: str):
    import leafgrad

    return getattr(leafgrad, name)


def _concrete(t) -> bool:
    """Whether ``t``'s values can be read (not a JAX tracer): PyTorch's formulas that branch on
    values (``prod_backward``'s zeros) leave traced calls to the one-op form."""
    return not isinstance(t._data, jax.core.Tracer)


def _recompute(ctx, **extra):
    """The op's result, recomputed from its saved input (a node of the op's own name)."""
    from .dispatch import dispatch

    return dispatch(ctx.op, ctx["self"], **{**ctx.static, **extra})


def unsqueeze_multiple(t, dim, ndim: int):
    """ATen's ``unsqueeze_multiple``: one dim as given, several in increasing order."""
    if dim is None:
        dims = list(range(ndim))
    else:
        dims = [dim] if isinstance(dim, int) else list(dim)
    if not dims:
        return t
    if len(dims) == 1:
        return t.unsqueeze(dims[0])
    for d in _dims(dims, ndim):
        t = t.unsqueeze(d)
    return t


# --- matrix products -------------------------------------------------------------------------


def _column_major(t, shape) -> bool:
    """``strides[0] == 1 and strides[1] == sizes[0]`` of a matrix operand. PyTorch saves the
    strides of an operand that requires grad; the node keeps the operand itself only when the
    other operand's gradient reads it, so an unsaved operand counts as row-major."""
    if not isinstance(t, _tensor.Tensor):
        return False
    strides = t.stride()
    return strides[0] == 1 and strides[1] == shape[0]


def mm_mat1_backward(grad, mat2, mat1, shape, alpha):
    if _column_major(mat1, shape):
        return maybe_multiply(_conj(mat2).mm(grad.t()).t(), alpha)
    return maybe_multiply(grad.mm(_conj(mat2.t())), alpha)


def mm_mat2_backward(grad, mat1, mat2, shape, alpha):
    if _column_major(mat2, shape):
        return maybe_multiply(grad.t().mm(_conj(mat1)).t(), alpha)
    return maybe_multiply(_conj(mat1.t()).mm(grad), alpha)


@formula("mm")
@_formula_if_free("nn.mm")
def _mm(ctx):
    g, out = ctx.grad, {}
    if ctx.needs("self"):
        out["self"] = mm_mat1_backward(g, ctx["mat2"], ctx["self"], ctx.shape("self"), 1)
    if ctx.needs("mat2"):
        out["mat2"] = mm_mat2_backward(g, ctx["self"], ctx["mat2"], ctx.shape("mat2"), 1)
    return out


@formula("addmm")
@_formula_if_free("nn.addmm")
def _addmm(ctx):
    g, out = ctx.grad, {}
    beta, alpha = ctx.static.get("beta", 1), ctx.static.get("alpha", 1)
    if ctx.needs("self"):
        out["self"] = maybe_multiply(g, _conj(beta))
    if ctx.needs("mat1"):
        out["mat1"] = mm_mat1_backward(g, ctx["mat2"], ctx["mat1"], ctx.shape("mat1"), alpha)
    if ctx.needs("mat2"):
        out["mat2"] = mm_mat2_backward(g, ctx["mat1"], ctx["mat2"], ctx.shape("mat2"), alpha)
    return out


def _ger(a, b):
    return a.outer(b)


@formula("mv")
def _mv(ctx):
    g, out = ctx.grad, {}
    if ctx.needs("self"):
        out["self"] = _ger(g, _conj(ctx["vec"]))
    if ctx.needs("vec"):
        out["vec"] = _conj(ctx["self"]).t().mv(g)
    return out


@formula("addmv")
def _addmv(ctx):
    g, out = ctx.grad, {}
    beta, alpha = ctx.static.get("beta", 1), ctx.static.get("alpha", 1)
    if ctx.needs("self"):
        out["self"] = maybe_multiply(g, _conj(beta))
    if ctx.needs("mat"):
        out["mat"] = maybe_multiply(_ger(g, _conj(ctx["vec"])), _conj(alpha))
    if ctx.needs("vec"):
        out["vec"] = maybe_multiply(_conj(ctx["mat"].t()).mv(g), _conj(alpha))
    return out


@formula("addr")
def _addr(ctx):
    g, out = ctx.grad, {}
    beta, alpha = ctx.static.get("beta", 1), ctx.static.get("alpha", 1)
    if ctx.needs("self"):
        out["self"] = maybe_multiply(g, _conj(beta))
    if ctx.needs("vec1"):
        out["vec1"] = maybe_multiply(g.mv(_conj(ctx["vec2"])), _conj(alpha))
    if ctx.needs("vec2"):
        out["vec2"] = maybe_multiply(g.t().mv(_conj(ctx["vec1"])), _conj(alpha))
    return out


@formula("dot")
def _dot(ctx):
    g, out = ctx.grad, {}
    if ctx.needs("self"):
        out["self"] = g * _conj(ctx["tensor"])
    if ctx.needs("tensor"):
        out["tensor"] = g * _conj(ctx["self"])
    return out


@formula("vdot")
def _vdot(ctx):
    g, out = ctx.grad, {}
    if ctx.needs("self"):
        out["self"] = _conj(g) * ctx["other"]
    if ctx.needs("other"):
        out["other"] = g * ctx["self"]
    return out


@formula("bmm")
def _bmm(ctx):
    g, out = ctx.grad, {}
    if ctx.needs("self"):
        out["self"] = g.bmm(_conj(ctx["mat2"].transpose(1, 2)))
    if ctx.needs("mat2"):
        out["mat2"] = _conj(ctx["self"].transpose(1, 2)).bmm(g)
    return out


@formula("baddbmm")
def _baddbmm(ctx):
    g, out = ctx.grad, {}
    beta, alpha = ctx.static.get("beta", 1), ctx.static.get("alpha", 1)
    if ctx.needs("self"):
        out["self"] = maybe_multiply(g, _conj(beta))
    if ctx.needs("batch1"):
        b2 = _conj(ctx["batch2"].transpose(1, 2))
        out["batch1"] = maybe_multiply(g.bmm(b2), _conj(alpha))
    if ctx.needs("batch2"):
        b1 = _conj(ctx["batch1"].transpose(1, 2))
        out["batch2"] = maybe_multiply(b1.bmm(g), _conj(alpha))
    return out


@formula("addbmm")
def _addbmm(ctx):
    g, out = ctx.grad, {}
    beta, alpha = ctx.static.get("beta", 1), ctx.static.get("alpha", 1)
    s1, s2 = ctx.shape("batch1"), ctx.shape("batch2")
    size = (s1[0], s1[1], s2[2])
    if ctx.needs("self"):
        out["self"] = maybe_multiply(g, _conj(beta))
    if ctx.needs("batch1"):
        b2 = _conj(ctx["batch2"].transpose(1, 2))
        out["batch1"] = maybe_multiply(g.unsqueeze(0).expand(size).bmm(b2), _conj(alpha))
    if ctx.needs("batch2"):
        b1 = _conj(ctx["batch1"].transpose(1, 2))
        out["batch2"] = maybe_multiply(b1.bmm(g.unsqueeze(0).expand(size)), _conj(alpha))
    return out


# --- reductions ------------------------------------------------------------------------------


@formula("trace")
def _trace(ctx):
    # trace_backward: zeros(n * m).index_fill_(0, diagonal indices, grad).view(sizes)
    g = ctx.grad
    n, m = ctx.shape("self")
    flat = g.new_zeros((n * m,))
    idx = _fn("arange")(0, min(n, m) * (m + 1), m + 1, device=g.device)
    flat.index_fill_(0, idx, g)
    return {"self": flat.view((n, m))}


@formula("cumsum")
def _cumsum(ctx):
    g = ctx.grad
    dtype = ctx.dtype("self")
    if g.dtype is not dtype:
        g = g.to(dtype)
    dim = ctx.static["dim"]
    if g.numel() <= 1 or g.shape[dim] == 1:
        return {"self": g}
    return {"self": g.flip(dim).cumsum(dim).flip(dim)}


@formula("cumprod")
def _cumprod(ctx):
    self, g = ctx["self"], ctx.grad
    if g.dtype is not self.dtype:
        g = g.to(self.dtype)
    if self.numel() <= 1:
        return {"self": g}
    dim = ctx.static["dim"]
    if self.ndim and self.shape[dim] == 1:
        return {"self": g}
    if not _concrete(self):
        return NotImplemented
    if bool((self == 0).any()):
        return {"self": _cumprod_backward_loop(g, _conj(self), dim)}
    result = ctx.saved_result(_recompute(ctx))
    w = _conj(result) * g
    return {"self": w.flip(dim).cumsum(dim).flip(dim).div(_conj(self))}


def _cumprod_backward_loop(g, inp, dim: int):
    """``cumprod_backward`` under grad mode with a zero in the input: for each position ``k``
    along ``dim``, the products that omit ``x_k`` (a ``prod`` of the slice before it times a
    ``cumprod`` of the slice after it), summed against the gradient and copied into
    ``grad_input.select(dim, k)``."""
    n = inp.shape[dim]
    grad_input = _fn("zeros")(tuple(inp.shape), dtype=g.dtype, device=g.device)
    ones_size = list(inp.shape)
    ones_size[dim] = 1
    ones = _fn("ones")((1,), dtype=g.dtype, device=g.device).expand(ones_size)
    cat = _fn("cat")
    for k in range(n):
        if k == 0:
            omitted = cat([ones, inp.narrow(dim, 1, n - 1).cumprod(dim)], dim)
        elif k == n - 1:
            omitted = inp.narrow(dim, 0, k).prod(dim, True)
        else:
            until_k = inp.narrow(dim, 0, k).prod(dim, True)
            from_k_plus_1 = inp.narrow(dim, k + 1, n - k - 1).cumprod(dim)
            omitted = cat([until_k, until_k.expand_as(from_k_plus_1) * from_k_plus_1], dim)
        grad_slice = (g.narrow(dim, k, n - k) * omitted).sum(dim)
        grad_input.select(dim, k).copy_(grad_slice)
    return grad_input


@formula("prod")
def _prod(ctx):
    self, g = ctx["self"], ctx.grad
    if self.dtype is not g.dtype:
        self = self.to(g.dtype)
    if self.ndim == 0:
        return {"self": g}
    if not _concrete(self):
        return NotImplemented
    dim = ctx.static.get("dim")
    result = ctx.saved_result(_recompute(ctx))
    if dim is None:
        if not bool((self == 0).any()):
            return {"self": g * _conj(result / self)}
        return {"self": _prod_safe_zeros(g, self.contiguous().view(-1), 0).view_as(self)}
    (dim,) = _dims(dim, self.ndim)
    if not ctx.static.get("keepdim"):
        g, result = g.unsqueeze(dim), result.unsqueeze(dim)
    if not bool((self == 0).any()):
        return {"self": g * _conj(result / self)}
    return {"self": _prod_safe_zeros(g, self, dim)}


def _prod_safe_zeros(g, inp, dim: int):
    """ATen's ``prod_safe_zeros_backward``: exclusive cumulative products both ways."""
    if inp.numel() == 0:
        return g.expand_as(inp)
    size = inp.shape[dim]
    if size == 1:
        return g
    ones_size = list(inp.shape)
    ones_size[dim] = 1
    ones = _fn("ones")(ones_size, dtype=g.dtype, device=g.device)
    cat = _fn("cat")
    normal = cat([ones, inp.narrow(dim, 0, size - 1)], dim).cumprod(dim)
    reverse = cat([ones, inp.narrow(dim, 1, size - 1).flip(dim)], dim).cumprod(dim).flip(dim)
    return g * _conj(normal * reverse)


@formula("logsumexp")
def _logsumexp(ctx):
    self, g = ctx["self"], ctx.grad
    result = ctx.saved_result(_recompute(ctx))
    dim = ctx.static.get("dim")
    if not ctx.static.get("keepdim") and self.ndim != 0:
        g = unsqueeze_multiple(g, dim, self.ndim)
        result = unsqueeze_multiple(result, dim, self.ndim)
    return {"self": g * _conj((self - result).exp())}


def var_backward(g, self, dim, correction, keepdim):
    """ATen's ``var_backward`` (``dim`` None: PyTorch's ``dim=None``)."""
    correction = 1 if correction is None else correction
    if self.ndim == 0 or dim is None:
        dof = self.numel() - correction
        if dof <= 0:
            mask = self == self.mean()
            nan, inf = self.new_full((), math.nan), self.new_full((), math.inf)
            return g * _fn("where")(mask, nan, inf)
        return smul(g, 2.0 / dof) * (self - self.mean())
    dims = [dim] if isinstance(dim, int) else list(dim)
    if not keepdim and self.ndim > 1:
        g = unsqueeze_multiple(g, dims, self.ndim)
    n = 1
    for d in _dims(dims, self.ndim):
        n *= self.shape[d]
    dof = n - correction  # ``dim=[]`` counts one element: 2 / 0 is C++'s inf
    scale = 2.0 / dof if dof else math.copysign(math.inf, dof)
    return smul(g, scale) * (self - self.mean(dims, keepdim=True))


def _var_dim(ctx, self):
    """PyTorch's ``dim``: None where the call passed none (the table keeps None then), else the
    dims, every dim included (``x.var((0, 1))`` of a matrix reads ``self.mean(dim, True)``)."""
    return ctx.static.get("dim")


def std_backward(result, g, self, dim, correction, keepdim):
    grad_var = (g / smul(result, 2)).masked_fill_(result == 0, 0)
    return var_backward(grad_var, self, dim, correction, keepdim)


def _mean_backward(g, shape, dim, keepdim):
    n = 1
    if dim is None or (not isinstance(dim, int) and not dim):  # all-reduce: numel
        for k in shape:
            n *= k
    else:
        for d in _dims(dim, len(shape)):
            n *= shape[d] if shape else 1
    from .formulas import sdiv

    return sdiv(sum_backward(g, shape, dim, keepdim), n)


@formula("var")
def _var(ctx):
    self, s = ctx["self"], ctx.static
    return {
        "self": var_backward(ctx.grad, self, _var_dim(ctx, self), s["correction"], s["keepdim"])
    }


@formula("std")
def _std(ctx):
    self, s = ctx["self"], ctx.static
    result = _recompute(ctx)
    dim = _var_dim(ctx, self)
    return {"self": std_backward(result, ctx.grad, self, dim, s["correction"], s["keepdim"])}


@formula("var_mean", "std_mean")
def _var_mean(ctx):
    self, s = ctx["self"], ctx.static
    dim = _var_dim(ctx, self)
    gvar, gmean = ctx.grads[0], ctx.grads[1]
    out = None
    if gvar is not None:
        if ctx.op.name == "std_mean":
            std = _recompute(ctx)[0]
            out = std_backward(std, gvar, self, dim, s["correction"], s["keepdim"])
        else:
            out = var_backward(gvar, self, dim, s["correction"], s["keepdim"])
    if gmean is not None:
        aux = _mean_backward(gmean, tuple(self.shape), dim, s["keepdim"])
        out = aux if out is None else out + aux
    return {"self": out}


def norm_backward(g, self, p, norm, dim, keepdim):
    """ATen's ``norm_backward`` (``dim`` a list; empty for all dims)."""
    p = 2.0 if p is None else float(p)
    if not keepdim and self.ndim != 0:
        g = unsqueeze_multiple(g, dim, self.ndim)
        norm = unsqueeze_multiple(norm, dim, self.ndim)
    if p == 0.0:
        return None
    if p == 1.0:
        return self.sgn() * g
    if p == 2.0:
        return g * (self / norm).masked_fill_(norm == 0, 0)
    if math.isinf(p):
        self_abs = self.abs()
        mask = self_abs.eq(norm).logical_or(self_abs.isnan())
        return self.sgn() * ((g / mask.sum(list(dim), True)) * mask)
    if p < 1.0:
        scaled = self.sgn() * self.abs().pow_(p - 1).masked_fill_(self == 0, 0)
        return scaled * g * norm.pow(1 - p)
    if p < 2.0:
        scaled = self.sgn() * self.abs().pow_(p - 1)
    else:
        scaled = self * self.abs().pow_(p - 2)
    scale_v = g / norm.pow(p - 1)
    scale_v.masked_fill_(norm == 0, 0)
    return scaled * scale_v


@formula("linalg_vector_norm")
@_formula_if_free("nn.vector_norm", "nn.norm_dim", "nn.norm_all")
def _vector_norm(ctx):
    s, self = ctx.static, ctx["self"]
    if self.dtype is not ctx.grad.dtype and not self.dtype.is_complex:
        return NotImplemented  # a norm taken in another dtype
    p = s["ord"] if "ord" in s else s.get("p", 2)
    if p is None or not isinstance(p, (int, float)):
        return NotImplemented
    dim = s.get("dim")
    dims = [] if dim is None else ([dim] if isinstance(dim, int) else list(dim))
    norm = ctx.saved_result(_recompute(ctx))
    return {"self": norm_backward(ctx.grad, self, p, norm, dims, bool(s.get("keepdim")))}


@formula("dist")
def _dist(ctx):
    # self: norm_backward(grad, self - other, p, result); other: -norm_backward(...), each
    # computed on its own as PyTorch's generated code does
    self, other, p = ctx["self"], ctx["other"], ctx.static["p"]
    norm = ctx._result if ctx._result is not None else _fn("dist")(self, other, p)
    out = {}
    if ctx.needs("self"):
        out["self"] = norm_backward(ctx.grad, self - other, p, norm, [], False)
    if ctx.needs("other"):
        g = norm_backward(ctx.grad, self - other, p, norm, [], False)
        out["other"] = None if g is None else -g
    return out


def _accumulate_type(dtype, device):
    """ATen's ``toAccumulateType`` of a floating or complex dtype: double (complex double) for
    float32 on the CPU, float32 for half and bfloat16, else the dtype itself."""
    from .. import _dtype as D

    if dtype in (D.float16, D.bfloat16):
        return D.float32
    if device.type == "cpu":
        return {D.float32: D.float64, D.complex64: D.complex128}.get(dtype, dtype)
    return dtype


@formula("renorm")
def _renorm(ctx):
    # renorm_backward (FunctionsManual.cpp): the norms and the gradient's projection in the
    # accumulate type, norm_backward of the projection, and the scaled gradient where a slice
    # was renormalized
    from ..autograd.saved import _WRITTEN

    self, g, s = ctx["self"], ctx.grad, ctx.static
    p, dim = s["p"], s["dim"]
    written = _WRITTEN.get(ctx.node, {}) if ctx.node is not None else {}
    maxnorm = getattr(written.get("maxnorm"), "value", written.get("maxnorm", s["maxnorm"]))
    p_arg = getattr(written.get("p"), "value", written.get("p", p))
    dims = [d for d in range(self.ndim) if d != dim]
    acc = _accumulate_type(self.dtype, self.device)
    real = acc.to_real() if acc.is_complex else acc
    linalg = _fn("linalg")
    if acc is not self.dtype:
        norm = linalg.vector_norm(self, p_arg, dims, True, dtype=acc)
    else:
        norm = linalg.vector_norm(self, p_arg, dims, True)
    projected = _conj(self) * g
    if real is not acc:
        projected = projected.real
    projected = projected.sum(dims, True, dtype=real)
    nb = norm_backward(projected, self, p, norm, dims, True)
    invnorm = sadd(norm, 1e-7).reciprocal()
    factor = smul(invnorm, maxnorm)
    scaled = factor * (g - invnorm * nb)
    return {"self": _fn("where")(norm > maxnorm, scaled.to(g.dtype), g)}


@formula("nansum")
def _nansum(ctx):
    # nansum_backward(grad.to(self.scalar_type()), ...): sum_backward masked where self is NaN
    self, s, g = ctx["self"], ctx.static, ctx.grad
    if g.dtype is not self.dtype:
        g = g.to(self.dtype)
    dim = s.get("dim")
    return {
        "self": sum_backward(g, tuple(self.shape), dim, bool(s.get("keepdim")))
        * self.isnan().logical_not()
    }


# --- value-selecting reductions (Note [Index-reading backwards]: the input is a constant) ----


def value_selecting_reduction_backward(g, dim: int, indices, sizes, keepdim: bool):
    """ATen's ``value_selecting_reduction_backward``: the gradient scattered to the indices."""
    grad_in = g.new_zeros(tuple(sizes))
    if not keepdim and len(sizes):
        g, indices = g.unsqueeze(dim), indices.unsqueeze(dim)
    return grad_in.scatter(dim, indices, g)


@formula("max_dim", "min_dim", "kthvalue", "sort", "topk", "median_dim", "nanmedian_dim", "mode")
def _value_selecting(ctx):
    g = ctx.grads[0]
    if g is None:
        return {"self": None}
    keepdim = ctx.op.name in ("sort", "topk") or bool(ctx.static.get("keepdim"))
    indices = ctx.result  # Note [Saved indices] in table.py
    return {
        "self": value_selecting_reduction_backward(
            g, ctx.static["dim"], indices, ctx.shape("self"), keepdim
        )
    }


@formula("max_all", "min_all", "median_all", "nanmedian_all")
def _evenly_distribute(ctx):
    # evenly_distribute_backward: on the CPU zeros.masked_fill_(mask, grad / mask.sum()), with
    # the mask chosen by whether the result is NaN; elsewhere mask * (grad / mask.sum())
    self, g = ctx["self"], ctx.grad
    value = _recompute(ctx)
    if self.is_cuda:
        both_nan = self.isnan().logical_and_(value.isnan())
        mask = (self == value).logical_or_(both_nan)
        return {"self": mask * (g / mask.sum())}
    if not _concrete(self):
        return NotImplemented
    mask = self.isnan() if bool(value.isnan()) else self == value
    return {"self": g.new_zeros(tuple(self.shape)).masked_fill_(mask, g / mask.sum())}


def restore_reduced_dims(output, dims, keepdim: bool):
    """ATen's ``restore_reduced_dims``: ``output`` reshaped with ones at the reduced ``dims``."""
    if keepdim:
        return output
    total = output.ndim + len(dims)
    target = [0] * total
    for d in dims:
        target[d % total if total else 0] = 1
    j = 0
    for size in output.shape:
        while target[j] > 0:
            j += 1
        target[j] = size
        j += 1
    return output.reshape(target)


def scale_grad_by_count(g, mask, dims):
    """ATen's ``scale_grad_by_count``: ``(grad / mask.sum(dims, True)) * mask``."""
    return (g / mask.sum(list(dims), True)) * mask


def _amaxamin_backward(g, self, result, dims, keepdim):
    mask = restore_reduced_dims(result, dims, keepdim) == self
    return scale_grad_by_count(restore_reduced_dims(g, dims, keepdim), mask, dims)


@formula("amax", "amin")
def _amax_amin(ctx):
    self, s = ctx["self"], ctx.static
    dims = list(s.get("dim") or ())
    keepdim = bool(s.get("keepdim"))
    result = _recompute(ctx)
    # a 0-d self reduced over dim 0: a 1-element gradient, summed by ``_validate`` (SumBackward0)
    return {"self": _amaxamin_backward(ctx.grad, self, result, dims, keepdim)}


@formula("aminmax")
def _aminmax(ctx):
    # aminmax_backward: scale_grad_by_count for each result whose gradient is defined, summed
    self, s = ctx["self"], ctx.static
    dims = list(s.get("dim") or ())
    keepdim = bool(s.get("keepdim"))
    gmin, gmax = ctx.grads[0], ctx.grads[1]
    lo, hi = _recompute(ctx)
    out = None
    if gmin is not None:
        out = _amaxamin_backward(gmin, self, lo, dims, keepdim)
    if gmax is not None:
        part = _amaxamin_backward(gmax, self, hi, dims, keepdim)
        out = part if out is None else out + part
    return {"self": out}


@formula("cummax", "cummin")
def _cummaxmin(ctx):
    # cummaxmin_backward: zeros(sizes).scatter_add_(dim, indices, grad)
    self, g = ctx["self"], ctx.grads[0]
    if g is None:
        return {"self": None}
    if self.numel() == 0:
        return {"self": self}
    indices = _recompute(ctx)[1]
    return {"self": self.new_zeros(tuple(self.shape)).scatter_add_(ctx.static["dim"], indices, g)}


@formula("logcumsumexp")
def _logcumsumexp(ctx):
    # logcumsumexp_backward: the positive and negative parts of the gradient in log space
    self, g = ctx["self"], ctx.grad
    if g.ndim == 0 or g.numel() == 0:
        return {"self": g}
    dim = ctx.static["dim"]
    result = _recompute(ctx)

    def reverse_logcumsumexp(x):
        return x.flip(dim).logcumsumexp(dim).flip(dim)

    if g.dtype.is_complex:
        log_grad = g.conj().log()
        return {"self": (reverse_logcumsumexp(log_grad - result) + self).exp().conj()}
    lowest = float(jax.numpy.finfo(g.dtype.np).min)
    grad_min = _fn("scalar_tensor")(lowest, dtype=g.dtype, device=g.device)
    log_abs_grad = g.abs().log()
    where = _fn("where")
    log_grad_positive = where(g > 0, log_abs_grad, grad_min)
    log_grad_negative = where(g < 0, log_abs_grad, grad_min)
    output_pos = (reverse_logcumsumexp(log_grad_positive - result) + self).exp()
    output_neg = (reverse_logcumsumexp(log_grad_negative - result) + self).exp()
    return {"self": output_pos - output_neg}
