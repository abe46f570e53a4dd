"""Efficient zero gradients: PyTorch's ``ZeroTensor``.

Note [Zero gradients]: the backward of ``sgn`` of a real tensor is PyTorch's only formula that
gives ``at::_efficientzerotensor``: a tensor of zeros with no memory, marked as such
(``_is_zerotensor()``). The mark travels on:

- through the backward nodes whose formulas keep it (``grad * other``, ``grad / other``, views of
  ``grad``, ``grad.expand(...)``): their gradients are zero tensors too, whatever the other
  operands hold (``grad * inf`` is 0, not NaN). Formulas that call another op on ``grad``
  (``-grad``, ``sum_to`` of a broadcast operand, ``grad.to(dtype)``, ``index``, ``mm``) make
  ordinary tensors of zeros. ``KEEPS`` lists the nodes, measured on PyTorch 2.13;
- in the engine's input buffers: two zero tensors sum to one; any other sum is ordinary;
- into ``.grad``, where AccumulateGrad takes the gradient as it is (laid out as the leaf and held
  by nobody else), into ``autograd.grad``'s results and into hooks. A clone (AccumulateGrad's copy,
  ``retain_grad``, ``create_graph``'s accumulation) is ordinary;
- to views, ``detach()`` and ``.data`` of a zero tensor (which share its storage, Note [Storage]),
  and through ``*``, ``/``, ``+``, ``-`` and matrix products of zero tensors (``ON_ZEROS``).

A zero tensor is immutable: in-place ops on it or its views (a second accumulation into such a
``.grad``, ``zero_()``, an optimizer's ``zero_grad(set_to_none=False)``) raise ``IMMUTABLE``;
``copy_`` and item assignment raise ``IMMUTABLE_COPY``; ``numpy()`` and ``tolist()`` raise too.

The mark is the ``zero`` flag of the tensor's ``Storage`` (``_storage.py``); in a backward, the
engine keeps its gradient arrays' marks (``engine._Values.zero_flow``). Nothing is marked until a
real ``sgn`` is differentiated (``SEEN``): until then the ops' and writes' checks are one flag
read, and the engine's one class attribute per node.
"""

from __future__ import annotations

import jax.numpy as jnp

IMMUTABLE = (
    "ZeroTensors are immutable. Please use the materialized zero tensor obtained using .clone() "
    "if you want a mutable tensor."
)
IMMUTABLE_COPY = (
    "ZeroTensors are immutable. Please materialize the tensor using `.clone()`, if you want a "
    "mutable zero tensor."
)
NUMPY = " Cannot convert a ZeroTensor to numpy. Set force=True if you need the zero array."
TOLIST = "tolist() shouldn't be called on a tensor with unallocated storage"

# True once a zero tensor was made: until then nothing checks for one
SEEN = [False]

# the node whose backward makes zero tensors (of a real input)
SOURCE = "source"

# Backward nodes that keep a zero gradient (every incoming gradient a zero tensor), measured on
# PyTorch 2.13: per output edge, whether its gradient is a zero tensor, or for an ordinary one
# that a formula makes of a zero tensor's product, its value: +0 ("0": ``at::where(...,
# zeros, grad * ...)``) or -0 ("-0": ``-norm_backward(...)``). ``ROUTES``: their
# gradients are views (or expansions) of the zero gradient, exact zeros as they are; the others'
# formulas compute from other operands and are replaced by zeros. ``ELEMENTWISE``: a broadcast
# operand's gradient goes through ``sum_to``, which makes an ordinary tensor.
_ONE = (True,)
KEEPS: dict = {
    **dict.fromkeys(
        (
            "AbsBackward0 AcosBackward0 AcoshBackward0 AsinBackward0 AsinhBackward0 AtanBackward0 "
            "AtanhBackward0 CosBackward0 CoshBackward0 Deg2RadBackward0 DigammaBackward0 "
            "ErfBackward0 ErfcBackward0 ErfinvBackward0 ExpBackward0 Exp2Backward0 "
            "Expm1Backward0 FracBackward0 I0Backward0 LgammaBackward0 LogBackward0 "
            "Log10Backward0 Log1PBackward0 Log2Backward0 NanToNumBackward0 Rad2DegBackward0 "
            "RsqrtBackward0 SinBackward0 SinhBackward0 SqrtBackward0 TanBackward0 PowBackward0 "
            "PowBackward2 LerpBackward0 AmaxBackward0 AminBackward0 ProdBackward0 "
            "LogsumexpBackward0 NansumBackward0 NormBackward0 NormBackward1 VarBackward0 "
            "LinalgVectorNormBackward0 AminmaxBackward0 VarMeanBackward0 FrexpBackward0"
        ).split(),
        _ONE,
    ),
    **dict.fromkeys(
        (
            "CloneBackward0 AliasBackward0 ViewBackward0 UnsafeViewBackward0 TBackward0 "
            "TransposeBackward0 PermuteBackward0 UnsqueezeBackward0 UnsqueezeBackward1 "
            "SqueezeBackward0 SqueezeBackward1 SqueezeBackward2 SumBackward0 SumBackward1 "
            "ExpandBackward0 CatBackward0 StackBackward0 DiagEmbedBackward0 BlockDiagBackward0"
        ).split(),
        "all",
    ),
    "AddBackward0": (True, True),
    "AddBackward1": _ONE,
    "SubBackward0": (True, False),
    "SubBackward1": _ONE,
    "RsubBackward0": (False, True),
    "RsubBackward1": (False,),
    "MulBackward0": (True, True),
    "MulBackward1": _ONE,
    "DivBackward0": (True, False),
    "DivBackward1": _ONE,
    "PowBackward1": ("0", True),
    "Atan2Backward0": (True, True),
    "HypotBackward0": (True, True),
    "CopysignBackward0": (True, False),
    "CopysignBackward1": _ONE,
    "FmodBackward1": (True, False),
    "RemainderBackward1": (True, False),
    "LdexpBackward0": (True, True),
    "LogaddexpBackward0": (True, True),
    "Logaddexp2Backward0": (True, True),
    "XlogyBackward0": ("0", True),
    "LerpBackward1": (True, True, True),
    "AddcmulBackward0": (True, True, True),
    "AddcdivBackward0": (True, True, False),
    "DistBackward0": (True, "-0"),
    "DotBackward0": (True, True),
    "VdotBackward0": (True, True),
    "LinalgCrossBackward0": (True, True),
    "BinaryCrossEntropyWithLogitsBackward0": (True, True),
    "MvBackward0": (True, False),
    "AddmmBackward0": (True, False, False),
    "SliceScatterBackward0": (False, True),
    "SgnBackward0": SOURCE,
}
# the ``*_copy`` ops' nodes (``t_copy``) are their views' nodes
KEEPS.update({name + "_copy": keep for name, keep in KEEPS.items() if keep == "all"})
ROUTES = frozenset(name for name, keep in KEEPS.items() if keep == "all")
# block_diag's gradient of a 1-d input is not a view of the gradient
MATRIX_ONLY = frozenset({"BlockDiagBackward0"})
# a broadcast operand's gradient is summed (``sum_to``): an ordinary tensor
ELEMENTWISE = frozenset(
    (
        "AddBackward0 AddBackward1 SubBackward0 SubBackward1 RsubBackward0 RsubBackward1 "
        "MulBackward0 MulBackward1 DivBackward0 DivBackward1 PowBackward1 Atan2Backward0 "
        "HypotBackward0 CopysignBackward0 CopysignBackward1 FmodBackward1 RemainderBackward1 "
        "LdexpBackward0 LogaddexpBackward0 Logaddexp2Backward0 XlogyBackward0 LerpBackward0 "
        "LerpBackward1 AddcmulBackward0 AddcdivBackward0 AddmmBackward0 ExpandBackward0"
    ).split()
)

# Ops whose result is a zero tensor when their operands are (PyTorch's ZeroTensor kernels):
# "any": one zero tensor operand suffices (a product); "first": ``self`` (a quotient); "all":
# every tensor operand, and no number other than 0 (a sum)
ON_ZEROS = {
    "mul": "any",
    "div": "first",
    "add": "all",
    "sub": "all",
    "mm": "any",
    "mv": "any",
    "bmm": "any",
    "dot": "any",
    "vdot": "any",
}


def is_zero(t) -> bool:
    """Whether tensor ``t`` is a zero tensor (or a view of one)."""
    cell = t.__dict__.get("_storage")
    return cell is not None and cell.zero


def mark(t) -> None:
    """Make tensor ``t`` (of zeros, sharing memory with nobody) a zero tensor."""
    from ._storage import Storage

    SEEN[0] = True
    cell = t.__dict__.get("_storage")
    if cell is None:
        cell = t.__dict__["_storage"] = Storage(t._data)
        cell.add(t)
    cell.zero = True


def check_write(t, copy: bool = False) -> None:
    """Refuse a write into a zero tensor (PyTorch's ZeroTensor fallback, or ``copy_``'s)."""
    if SEEN[0] and is_zero(t):
        raise RuntimeError(IMMUTABLE_COPY if copy else IMMUTABLE)


def zeros(out, value: str = "0"):
    """Fresh zeros in place of gradient array ``out`` (PyTorch's ``_efficientzerotensor``), or
    those of ``value`` ("-0")."""
    if value == "-0":
        return jnp.full(out.shape, -0.0, out.dtype)
    return jnp.zeros(out.shape, out.dtype)


def after_op(name: str, operands, result) -> None:
    """Make ``result`` of op ``name`` a zero tensor where PyTorch's ZeroTensor kernels give one
    (``ON_ZEROS``); its history stays."""
    rule = ON_ZEROS.get(name)
    if rule is None or isinstance(result, tuple):
        return
    from ._tensor import Tensor

    tensors = [o for o in operands if isinstance(o, Tensor)]
    if rule == "any":
        keep = any(is_zero(t) for t in tensors)
    elif rule == "first":
        keep = isinstance(operands[0], Tensor) and is_zero(operands[0])
    else:  # a number operand is wrapped into an ordinary tensor
        keep = len(tensors) == len(operands) and all(is_zero(t) for t in tensors)
    if keep and "_storage" not in result.__dict__:
        result._data = zeros(result._data)
        mark(result)
