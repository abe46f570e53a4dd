"""The memory layout of an elementwise op's result, as PyTorch's ``TensorIterator`` allocates it.

Note [Iterator layouts]: leafgrad arrays have no strides; a tensor records the strides PyTorch's
would have (``_strides``, Note [Strides] in ``shape.py``). PyTorch's elementwise kernels
(``TensorIterator``) lay a new result out after their operands:

- *Fast setup*, when every operand has the result's shape: all contiguous gives a contiguous
  result; all channels-last contiguous (4-d) a channels-last one; all non-overlapping and dense
  with equal strides, those strides.
- *Otherwise* the dims are sorted by the operands' strides (``reorder_dimensions``, the sort of
  ``_random.iteration_order``: broadcast dims have stride 0 and do not vote) and the result is
  dense in that order (``compatible_stride``: a dim's stride is the product of the sizes inside
  it); the order of a contiguous tensor gives a contiguous result.

A Python number operand takes part as PyTorch's wrapped 0-d scalar does. ``lay_out`` runs only
when some operand has recorded strides, so the common case (every operand contiguous) costs one
dictionary lookup per operand.
"""

from __future__ import annotations

import math

from .. import _dtype as D
from .. import _tensor
from .._random import iteration_order

_CHANNELS_LAST_ORDER = (1, 3, 2, 0)  # innermost first: C, W, H, N


def non_overlapping_and_dense(shape, strides) -> bool:
    """PyTorch's ``is_non_overlapping_and_dense``: dims of size 0 and 1 do not count (an empty
    tensor is dense once its other dims are)."""
    expected = 1
    for stride, size in sorted((st, sz) for sz, st in zip(shape, strides) if sz > 1):
        if stride != expected:
            return False
        expected *= size
    return True


def is_contiguous(shape, strides) -> bool:
    """PyTorch's ``is_contiguous``: size-1 dims' strides do not count, nor does an empty tensor's
    layout."""
    if math.prod(shape) == 0:
        return True
    expected = 1
    for size, stride in zip(reversed(shape), reversed(strides)):
        if size != 1:
            if stride != expected:
                return False
            expected *= size
    return True


def _channels_last(shape, strides) -> bool:
    """``is_contiguous(memory_format=torch.channels_last)`` of a 4-d tensor."""
    if len(shape) != 4:
        return False
    expected = 1
    for d in _CHANNELS_LAST_ORDER:
        if shape[d] != 1:
            if strides[d] != expected:
                return False
            expected *= shape[d]
    return True


def memory_order(strides) -> list:
    """The dims of a non-overlapping and dense layout from the outermost in memory to the
    innermost."""
    return sorted(range(len(strides)), key=lambda d: (-strides[d], d))


def dense_in_memory_order(values, strides):
    """``values`` (a NumPy array) copied into memory laid out with ``strides`` (non-overlapping
    and dense): the flat buffer PyTorch's tensor would have, in its memory order."""
    import numpy as np

    return np.ascontiguousarray(values.transpose(memory_order(strides)))


def iterator_strides(shape: tuple, operands: list) -> tuple | None:
    """The strides of a result of ``shape`` from operands ``[(shape, strides), ...]``; None for
    contiguous (Note [Iterator layouts])."""
    if all(s == shape for s, _ in operands):
        if all(is_contiguous(s, st) for s, st in operands):
            return None
        if all(_channels_last(s, st) for s, st in operands):
            return _tensor._format_strides(shape, _tensor.channels_last)
        first = tuple(operands[0][1])
        if all(tuple(st) == first for _, st in operands) and non_overlapping_and_dense(
            shape, first
        ):
            return first
    ndim = len(shape)
    voting = []
    for s, st in operands:
        lead = ndim - len(s)
        voting.append(
            (0,) * lead
            + tuple(0 if s[i] == 1 and shape[lead + i] != 1 else st[i] for i in range(len(s)))
        )
    order = iteration_order(shape, *voting)
    if order == tuple(range(ndim)):
        return None
    strides = [0] * ndim
    step = 1
    for d in reversed(order):
        strides[d] = step
        step *= shape[d]
    return tuple(strides)


# PyTorch's TensorIterator ops (their results are laid out by ``lay_out``)
ITERATOR_OPS = frozenset(
    """abs acos acosh add addcdiv addcmul angle asin asinh atan atan2 atanh bitwise_and
    bitwise_left_shift bitwise_not bitwise_or bitwise_right_shift bitwise_xor ceil
    clamp_max_tensor clamp_min_tensor clamp_scalar clamp_tensor complex conj_physical copysign
    copysign_scalar cos cosh digamma div div_mode eq erf erfc erfinv exp exp2 expm1
    floor floor_divide floor_divide_other floor_divide_self floor_divide_self_other fmax fmin
    fmod fmod_scalar frac gcd ge gt heaviside_self heaviside_self_values heaviside_values
    hypot i0 igamma igammac isclose isfinite isinf isnan isneginf isposinf lcm ldexp le
    lerp_scalar lerp_tensor lgamma log log10 log1p log2 logaddexp logaddexp2 logical_and
    logical_not logical_or logical_xor logit lt maximum minimum mul ne neg nextafter
    formula.sub_scalar nn.add_scalar nn.div_scalar nn.mul_scalar
    nn.binary_cross_entropy nn.celu nn.clamp_min nn.elu nn.gelu nn.glu nn.hardshrink
    nn.hardsigmoid nn.hardswish nn.leaky_relu nn.mish nn.mse_loss nn.prelu nn.relu nn.silu
    nn.smooth_l1_loss nn.softplus nn.softshrink nn.threshold polar polygamma pow_scalar
    pow_tensor reciprocal remainder remainder_scalar rfloor_divide_other
    rfloor_divide_self rfloor_divide_self_other round round_decimals rremainder_other
    rremainder_self rremainder_self_other rsqrt rsub rsub_tensor sgn sigmoid sign signbit sin
    sinc sinh special_entr special_erfcx special_i0e special_i1 special_i1e special_log_ndtr
    special_ndtri special_xlog1py special_xlog1py_scalar_other special_xlog1py_scalar_self
    special_zeta special_zeta_scalar_other special_zeta_scalar_self sqrt sub tan tanh trunc
    where xlogy xlogy_scalar_other xlogy_scalar_self""".split()
)


# ops whose result PyTorch makes as ``self.clone()`` or ``empty_like(self)`` (preserve_format)
# before writing into it: a non-overlapping and dense first operand's strides exactly (also
# those of its size-1 dims), else dense in its stride order
FIRST_OPERAND_OPS = frozenset(
    """as_strided_scatter deg2rad diagonal_scatter flip frexp index_fill_scalar index_fill_tensor
    index_put index_put_at_value_dtype index_put_impl nan_to_num nn.hardtanh nn.huber_loss put
    rad2deg select_scatter slice_scatter sort to_copy""".split()
)

# ops of FIRST_OPERAND_OPS that start from ``clone_preserve_strides(self)``: the first operand's
# strides exactly, dense or not, unless it overlaps itself (then ``clone()``)
EXACT_STRIDES_OPS = frozenset(
    "as_strided_scatter diagonal_scatter select_scatter slice_scatter".split()
)

# TensorIterator ops whose Python numbers are kernel arguments, not wrapped 0-d operands: they
# take no part in the layout (``x.clamp(0, 1)`` is a unary iterator)
NUMBER_ARGUMENT_OPS = frozenset("addcdiv addcmul clamp_scalar lerp_scalar".split())


def _is_number(o) -> bool:
    return o is not None and not isinstance(o, _tensor.Tensor)


def lay_out(
    result,
    operands,
    preserve: bool = False,
    halves: int | None = None,
    only_first=False,
    numbers=True,
    exact=False,
    cast_from: int = 0,
    swapped: bool = False,
) -> None:
    """Record the strides PyTorch gives ``result`` (a tensor or a tuple of them) of an
    elementwise op on ``operands`` (Note [Iterator layouts]); ``preserve``: of an op of
    ``FIRST_OPERAND_OPS`` on ``operands[0]``; ``halves``: glu's dim; ``only_first``: the strides
    of the first operand alone decide (prelu); ``numbers``: Python numbers are operands (wrapped
    0-d tensors) rather than kernel arguments; ``exact``: ``clone_preserve_strides``;
    ``cast_from``: the first operand that takes the common dtype (``where``'s condition does
    not); ``swapped``: the iterator takes the two operands in the other order (``rsub``)."""
    Tensor = _tensor.Tensor
    if swapped:
        operands = (operands[1], operands[0], *operands[2:])
    outs = result if isinstance(result, tuple) else (result,)
    shape = tuple(outs[0]._data.shape)
    for o in operands:
        if isinstance(o, Tensor) and "_strides" in o.__dict__:
            break
    else:
        # every tensor operand is contiguous: so is the result, unless it is empty and a wrapped
        # number or a tensor of another shape (a 0-d operand) keeps TensorIterator off its fast
        # path, whose strides differ
        if 0 not in shape or not any(
            (numbers and _is_number(o)) or (isinstance(o, Tensor) and o._data.shape != shape)
            for o in operands
        ):
            return
    general = halves is None and not only_first and not preserve and not exact
    common = _common_dtype(outs[0], operands[cast_from:]) if general else None
    laid = []
    for k, o in enumerate(operands):
        if isinstance(o, Tensor):
            s = tuple(o._data.shape)
            st = o.__dict__.get("_strides")
            st = tuple(st) if st is not None else contiguous_strides(s)
            if common is not None and k >= cast_from and o._dtype is not common:
                st = _cast_copy_strides(o, s, st)
            laid.append((s, st))
        elif o is not None and numbers:
            laid.append(((), ()))  # a number: PyTorch's wrapped 0-d scalar
    if halves is not None:
        # glu: PyTorch iterates over the input's two halves along dim ``halves`` (narrow views)
        s, st = laid[0]
        laid = [(shape, st)] * 2
    elif only_first:
        laid = laid[:1]  # prelu: the weight is viewed to broadcast over the channel dim
    if exact and laid[0][0] == shape and not any(st == 0 and n > 1 for n, st in zip(*laid[0])):
        strides = laid[0][1] if laid[0][1] != contiguous_strides(shape) else None
    elif preserve and laid[0][0] == shape and (non_overlapping_and_dense(*laid[0]) or 0 in shape):
        # an empty tensor is dense for ``empty_like`` (its flag is set by ``is_contiguous``)
        strides = laid[0][1] if laid[0][1] != contiguous_strides(shape) else None
    else:
        strides = iterator_strides(shape, laid)
    if strides is not None:
        for out in outs:
            out.__dict__["_strides"] = strides


def _common_dtype(out, operands):
    """The dtype TensorIterator casts its CPU inputs to before it lays the result out (its
    ``promote_inputs_to_common_dtype``: each input of another dtype becomes a temporary
    ``.to(common)``); None off the CPU, where the kernels cast as they read."""
    Tensor = _tensor.Tensor
    tensors = [o for o in operands if isinstance(o, Tensor)]
    if not tensors or any(t._device.type != "cpu" for t in tensors):
        return None
    common = D.result_type_of([(t._dtype, t._data.ndim) for t in tensors])
    if common._kind in "biu" and out._dtype._kind in "fc":  # unary float ops promote integers
        return out._dtype
    return common


def _cast_copy_strides(t, shape, strides) -> tuple:
    """The strides of ``t.to(dtype)`` (preserve_format), which are ``empty_like(t)``'s: its own
    where it is non-overlapping and dense (an empty tensor is), else dense ones in its dims'
    stride order (a (2, 1) view of strides (3, 4) gives (1, 2); seed 127)."""
    from .._factories import _like_strides  # the factories import the ops

    return _like_strides(t, None, "to")


def contiguous_strides(shape) -> tuple:
    """The strides of a contiguous tensor of ``shape``."""
    strides, step = [0] * len(shape), 1
    for d in range(len(shape) - 1, -1, -1):
        strides[d] = step
        step *= max(int(shape[d]), 1)
    return tuple(strides)
