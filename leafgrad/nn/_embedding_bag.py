"""``F.embedding_bag`` and ``nn.EmbeddingBag``; ``embedding_renorm_`` (``max_norm``).

``embedding_bag`` is one op (``EmbeddingBagBackward0``, edges to ``weight`` and
``per_sample_weights``), PyTorch's CPU kernel in ``jax.numpy``: the bag of each index comes from
the offsets, ``padding_idx`` entries are left out of sums, means, maxima and bag sizes, an empty
bag gives zeros. Note [Embedding bag gradients]: ``max`` routes each feature's gradient to the
first maximal entry of its bag (PyTorch's ``max_indices``), not shared among ties as
``jnp.max``'s VJP would; ``scale_grad_by_freq`` divides a row's gradient by how often its index
occurs in the whole input, while the values stay as they are (a ``stop_gradient`` split).
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
from jax import lax

from .. import _dtype as D
from .. import _errors as E
from .._tensor import Tensor
from ..autograd import grad_mode
from ..ops.api import register_ops
from ..ops.dispatch import dispatch
from ..ops.table import OPS, OpDef, same

__all__ = ["embedding_bag"]

_MODES = {"sum": 0, "mean": 1, "max": 2}


def scale_by_frequency(rows, divisor):
    """``rows`` whose gradient is divided by ``divisor`` (one per row), values unchanged."""
    scale = (1 / divisor)[..., None]
    return lax.stop_gradient(rows) + (rows - lax.stop_gradient(rows)) * scale


def _bag_divisors(indices, num_weights: int, dtype):
    """The divisor PyTorch's embedding_bag backward gives each position's gradient under
    ``scale_grad_by_freq``: its CPU kernel walks the distinct indices in sorted order and, for
    the g-th of them, divides by the count of the g-th *sorted index* (``counts[indices[i]]``
    with ``i`` the group's number), not of the group's own index; reproduced as it is."""
    counts = jnp.zeros((num_weights,), dtype).at[indices].add(1)
    ranks = jnp.cumsum(counts > 0) - 1
    ordered = jnp.sort(indices)
    return counts[ordered[jnp.clip(ranks, 0, indices.shape[0] - 1)]][indices]


def _bags_of(offsets, n: int, bags: int, last: bool):
    """The bag of each of ``n`` positions; ``bags`` (one past the last) for none."""
    positions = jnp.arange(n)
    bag = jnp.searchsorted(offsets[:bags], positions, side="right") - 1
    if last:  # positions at or after the last offset belong to no bag
        bag = jnp.where(positions < offsets[bags], bag, bags)
    return jnp.where(bag < 0, bags, bag)


def _keep(indices, padding_idx):
    if padding_idx is None:
        return jnp.ones(indices.shape, bool)
    return indices != padding_idx


def _embedding_bag(
    weight,
    indices,
    offsets,
    per_sample_weights,
    *,
    mode,
    bags,
    last,
    padding_idx,
    scale_grad_by_freq=False,
):
    """Sums (mode 0) or means (mode 1) of the bags."""
    n = indices.shape[0]
    bag = _bags_of(offsets, n, bags, last)
    keep = _keep(indices, padding_idx)
    rows = jnp.take(weight, indices, axis=0)
    if scale_grad_by_freq and n:
        rows = scale_by_frequency(rows, _bag_divisors(indices, weight.shape[0], weight.dtype))
    zeros = jnp.zeros((), weight.dtype)
    if per_sample_weights is not None:
        rows = rows * per_sample_weights[:, None]
    rows = jnp.where(keep[:, None], rows, zeros)
    out = jax.ops.segment_sum(rows, bag, num_segments=bags + 1)[:bags]
    if mode == 1:
        size = jax.ops.segment_sum(keep.astype(weight.dtype), bag, num_segments=bags + 1)[:bags]
        out = jnp.where(size[:, None] > 0, out / jnp.maximum(size, 1)[:, None], zeros)
    return out


@functools.partial(jax.jit, static_argnames=("bags", "last", "padding_idx"))
def _max_rows(weight, indices, offsets, *, bags, last, padding_idx):
    """PyTorch's ``max_indices``: per bag and feature the row of the bag's first maximal entry
    (a later entry replaces it only if strictly greater), -1 for an empty bag."""
    n = indices.shape[0]
    if n == 0:
        return jnp.full((bags, weight.shape[1]), -1, indices.dtype)
    bag = _bags_of(offsets, n, bags, last)
    keep = _keep(indices, padding_idx)
    rows = jnp.where(keep[:, None], jnp.take(weight, indices, axis=0), -jnp.inf)
    best = jax.ops.segment_max(rows, bag, num_segments=bags + 1)
    hit = (rows == best[bag]) & keep[:, None]
    first = jax.ops.segment_min(jnp.where(hit, jnp.arange(n)[:, None], n), bag, bags + 1)[:bags]
    return jnp.where(first < n, indices[jnp.clip(first, 0, n - 1)], -1)


def _embedding_bag_max(weight, indices, offsets, per_sample_weights, max_indices):
    """Maxima of the bags: the rows ``max_indices`` names, feature by feature (zeros for -1)."""
    picked = jnp.take_along_axis(weight, jnp.clip(max_indices, 0, None), axis=0)
    return jnp.where(max_indices >= 0, picked, jnp.zeros((), weight.dtype))


_OPERANDS = ("weight", "indices", "offsets", "per_sample_weights")
_SAVES = {
    "weight": ("indices", "offsets", "per_sample_weights"),
    "per_sample_weights": ("weight", "indices", "offsets"),
}
register_ops(
    *(
        OpDef(
            name,
            fwd,
            "EmbeddingBagBackward0",
            _OPERANDS,
            same,
            edges=("weight", "per_sample_weights"),
            saves=_SAVES,
        )
        for name, fwd in (
            ("nn.embedding_bag", _embedding_bag),
            ("nn.embedding_bag_freq", functools.partial(_embedding_bag, scale_grad_by_freq=True)),
        )
    ),
    OpDef(
        "nn.embedding_bag_max",
        _embedding_bag_max,
        "EmbeddingBagBackward0",
        (*_OPERANDS, "max_indices"),
        same,
        edges=("weight", "per_sample_weights"),
        saves={"weight": ("indices", "offsets", "max_indices")},
    ),
)


def _legacy(t: Tensor) -> str:
    return f"torch.{t.dtype._legacy}Tensor"


def embedding_renorm_(weight: Tensor, indices: Tensor, max_norm: float, norm_type: float):
    """``torch.embedding_renorm_``: the rows ``indices`` names whose ``norm_type``-norm exceeds
    ``max_norm`` are scaled to ``max_norm`` (by ``max_norm / (norm + 1e-7)``), in place."""
    data = weight._data
    used = jnp.zeros((data.shape[0],), bool).at[indices._data.reshape(-1)].set(True)
    p = float(norm_type)
    acc = data.astype(jnp.float32) if data.dtype in (jnp.float16, jnp.bfloat16) else data
    if p == float("inf"):
        norms = jnp.max(jnp.abs(acc), axis=1)
    elif p == 0:
        norms = jnp.sum(acc != 0, axis=1).astype(acc.dtype)
    else:
        norms = jnp.sum(jnp.abs(acc) ** p, axis=1) ** (1 / p)
    scale = jnp.where(used & (norms > max_norm), max_norm / (norms + 1e-7), 1)
    new = (acc * scale[:, None]).astype(data.dtype)
    with grad_mode.no_grad():
        weight.copy_(Tensor._make(new, weight.dtype, weight.device))
    return weight


def embedding_bag(
    input: Tensor,
    weight: Tensor,
    offsets: Tensor | None = None,
    max_norm=None,
    norm_type: float = 2,
    scale_grad_by_freq: bool = False,
    mode: str = "mean",
    sparse: bool = False,
    per_sample_weights: Tensor | None = None,
    include_last_offset: bool = False,
    padding_idx: int | None = None,
) -> Tensor:
    """The sums, means or maxima of bags of embedding rows: ``input`` 2-D (each row a bag) or
    1-D with ``offsets`` (where each bag starts)."""
    import warnings

    import leafgrad

    if weight.dtype is D.int64 and input.is_floating_point():
        warnings.warn(
            "Argument order of nn.functional.embedding_bag was changed. Usage "
            "`embedding_bag(weight, input, ...)` is deprecated, and should now be "
            "`embedding_bag(input, weight, ...)`.",
            stacklevel=2,
        )
        weight, input = input, weight
    if per_sample_weights is not None and input.size() != per_sample_weights.size():
        raise ValueError(
            f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is not None, "
            f"then it must have the same shape as the input ({input.shape})"
        )
    if weight.dim() != 2:
        raise ValueError(
            f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.dim()}"
        )
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError(
                "if input is 2D, then offsets has to be None, as input is treated is a mini-batch "
                "of fixed length sequences. However, found offsets of type "
                f"{type(offsets)}".replace("leafgrad._tensor.Tensor", "torch.Tensor")
            )
        offsets = leafgrad.arange(
            0, input.numel(), input.size(1), dtype=input.dtype, device=input.device
        )
        include_last_offset = False
        input = input.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
    elif input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
    else:
        raise ValueError(
            f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.dim()}"
        )
    if mode not in _MODES:
        raise ValueError("mode has to be one of sum, mean or max")
    if mode == "max":
        if scale_grad_by_freq:
            raise ValueError("max mode does not support scaling the gradient by the frequency")
        if sparse:
            raise ValueError("max mode does not support sparse weights")
    if max_norm is not None:
        with grad_mode.no_grad():
            embedding_renorm_(weight, input, max_norm, norm_type)
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(
            "embedding_bag: per_sample_weights was not None. per_sample_weights is only supported "
            f"for mode='sum' (got mode='{mode}'). Please open a feature request on GitHub."
        )
    if sparse:
        raise NotImplementedError("leafgrad has no sparse tensors: embedding_bag(sparse=True)")
    return _embedding_bag_op(
        weight,
        input,
        offsets,
        per_sample_weights,
        mode,
        include_last_offset,
        padding_idx,
        scale_grad_by_freq,
    )


def _embedding_bag_op(weight, indices, offsets, psw, mode, last, padding_idx, scale):
    """``torch.embedding_bag``'s checks (PyTorch's order and texts), then the op."""
    for name, t in (("indices", indices), ("indices", offsets)):
        if t.dtype not in (D.int64, D.int32):
            raise RuntimeError(
                f"Expected tensor for argument #1 '{name}' to have one of the following scalar "
                f"types: Long, Int; but got {_legacy(t)} instead (while checking arguments for "
                "embedding_bag)"
            )
    if weight.dtype not in (D.float16, D.bfloat16, D.float32, D.float64):
        raise RuntimeError(
            "Expected tensor for argument #1 'weight' to have one of the following scalar types: "
            f"Half, BFloat16, Float, Double; but got {_legacy(weight)} instead (while checking "
            "arguments for embedding_bag)"
        )
    if psw is not None and psw.dtype != weight.dtype:
        raise RuntimeError(
            f"expected scalar type {E.scalar_type_name(weight.dtype)} but found "
            f"{E.scalar_type_name(psw.dtype)}"
        )
    num_weights = weight.shape[0]
    n = indices.shape[0]
    if padding_idx is not None:
        if not -num_weights <= padding_idx < num_weights:
            raise RuntimeError(
                f"padding_idx must be within the number of embeddings, -{num_weights} through "
                f"{num_weights - 1}, but got {padding_idx}"
            )
        padding_idx %= num_weights
    # PyTorch's fast CPU path (float32 and half types, sum and mean) checks indices and offsets
    # its own way; the generic one (float64, max) has other texts and no offsets-order check
    fast = weight.dtype is not D.float64 and mode != "max"
    if not isinstance(offsets._data, jax.core.Tracer) and offsets.numel():
        offs = [int(v) for v in offsets.tolist()]
        if offs[0] != 0:
            raise RuntimeError(
                "offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start "
                f"from position 0. However, got {offs[0]}\n[ torch.LongTensor{{}} ]"
            )
        if offs[-1] > n:
            raise RuntimeError(
                f"offsets[-1] can not be greater than input's length {n} but got offsets[-1] of "
                f"{offs[-1]}"
            )
        if any(a > b for a, b in zip(offs, offs[1:])):
            if fast:
                raise RuntimeError(
                    "Expected i < index_size to be true, but got false.  (Could this error "
                    "message be improved?  If so, please report an enhancement request to "
                    "PyTorch.)"
                )
            raise RuntimeError(
                "embedding_bag: offsets must not decrease (PyTorch's kernel for this dtype and "
                f"mode reads such bags without a check; leafgrad refuses them): got {offs}"
            )
    if not isinstance(indices._data, jax.core.Tracer) and n:
        for k, v in enumerate(indices.tolist()):
            if not 0 <= v < num_weights:
                if fast:
                    raise RuntimeError(
                        f"Index {k} of input takes value {v} which is not in the valid range "
                        f"[0, {num_weights})"
                    )
                raise RuntimeError(
                    "embedding_bag: Expected idx >= 0 && idx < num_embeddings but found idx to "
                    f"be {v}"
                )
    bags = offsets.shape[0] - (1 if last else 0)
    static = {"bags": bags, "last": bool(last), "padding_idx": padding_idx}
    if mode == "max":
        rows = _max_rows(weight._data, indices._data, offsets._data, **static)
        max_indices = Tensor._make(rows, indices.dtype, weight.device)
        return dispatch(OPS["nn.embedding_bag_max"], weight, indices, offsets, psw, max_indices)
    op = OPS["nn.embedding_bag_freq" if scale else "nn.embedding_bag"]
    return dispatch(op, weight, indices, offsets, psw, mode=_MODES[mode], **static)
