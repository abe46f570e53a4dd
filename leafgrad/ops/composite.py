"""Ops that PyTorch builds from several graph nodes, written over table ops so graphs match."""

from __future__ import annotations

from .. import _errors as E
from .dispatch import dispatch
from .table import OPS


def mm(a, b):
    """``torch.mm``: 2-D @ 2-D, with PyTorch's shape message."""
    if a.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if b.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    if a.shape[1] != b.shape[0]:
        raise RuntimeError(E.MM_SHAPES.format(a.shape[0], a.shape[1], b.shape[0], b.shape[1]))
    return dispatch(OPS["mm"], a, b)


def mv(a, v):
    """``torch.mv``: 2-D @ 1-D."""
    if a.ndim != 2 or v.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {a.ndim}, {v.ndim}")
    if a.shape[1] != v.shape[0]:
        raise RuntimeError(E.MV_SHAPES.format(a.shape[0], a.shape[0], a.shape[1], v.shape[0]))
    return dispatch(OPS["mv"], a, v)


def dot(a, b):
    """``torch.dot``: 1-D . 1-D."""
    if a.ndim != 1 or b.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {a.ndim}D and {b.ndim}D tensors")
    if a.shape[0] != b.shape[0]:
        raise RuntimeError(E.DOT_SHAPES.format(a.shape[0], b.shape[0], a.shape[0], b.shape[0]))
    return dispatch(OPS["dot"], a, b)


def matmul(a, b):
    """``torch.matmul`` for 1-D and 2-D operands, recorded with PyTorch's nodes."""
    da, db = a.ndim, b.ndim
    if da == 0 or db == 0:
        raise RuntimeError(E.MATMUL_0D.format(da, db))
    if da == 1 and db == 1:
        return dot(a, b)
    if da == 2 and db == 1:
        return mv(a, b)
    if da == 1 and db == 2:
        # PyTorch: unsqueeze, mm, then an in-place squeeze_ (SqueezeBackward4).
        return dispatch(OPS["squeeze_dim"], mm(a.unsqueeze(0), b), dim=0, inplace=True)
    if da == 2 and db == 2:
        return mm(a, b)
    raise NotImplementedError(
        "matmul of operands with more than 2 dimensions is not implemented in leafgrad yet"
    )
