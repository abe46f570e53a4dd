"""``torch.linalg.tensorinv`` and ``tensorsolve``: PyTorch's composites, which reshape to a
square matrix, invert or solve it (``LinalgInvExBackward0`` / ``LinalgSolveExBackward0``) and
reshape back, so the graphs carry PyTorch's view nodes."""

from __future__ import annotations

import math

import numpy as np

from .. import _autocast
from .._known import physical_values
from .linalg_ops import LinAlgError, inv_ex, solve

__all__ = ["tensorinv", "tensorsolve"]


@_autocast.policy("fp32")
def tensorinv(A, ind: int = 2, *, out=None):
    """The inverse of ``A`` under ``tensordot(A, X, ind)``: shape ``A.shape[ind:] +
    A.shape[:ind]``."""
    if out is not None:
        raise NotImplementedError("leafgrad: linalg.tensorinv(out=) is not supported")
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    shape = tuple(A.shape)
    end, start = shape[ind:], shape[:ind]
    prod_end, prod_start = math.prod(end), math.prod(start)
    if prod_end != prod_start:
        raise RuntimeError(
            "Expected self to satisfy the requirement prod(self.shape[ind:]) == "
            f"prod(self.shape[:ind]), but got {prod_end} != {prod_start}"
        )
    result, info = inv_ex(A.reshape(prod_start, prod_end))
    # at::_linalg_check_errors(info, "inv", is_matrix=true), where the values are known
    values = physical_values(info._data)  # inside vmap: the physical batch
    if values is not None and (values > 0).any():
        b = int(np.argmax(values.reshape(-1) > 0))
        prefix = f"(Batch element {b}): " if values.ndim else ""
        raise LinAlgError(
            f"inv: {prefix}The diagonal element {int(values.reshape(-1)[b])} is zero, the "
            "inversion could not be completed because the input matrix is singular."
        )
    return result.reshape(end + start)


@_autocast.policy("fp32")
def tensorsolve(A, B, dims=None, *, out=None):
    """The ``X`` with ``tensordot(A, X, X.ndim) == B``; ``dims`` of ``A`` are moved to the end
    first."""
    if out is not None:
        raise NotImplementedError("leafgrad: linalg.tensorsolve(out=) is not supported")
    ndim = A.ndim
    if dims is not None:
        dims = tuple(dims)
        A = A.movedim(dims, tuple(range(ndim - len(dims), ndim)))
    result_shape = tuple(A.shape[B.ndim :])
    result_product = math.prod(result_shape)
    other_product = math.prod(B.shape)
    if result_product != other_product:
        raise RuntimeError(
            "Expected self to satisfy the requirement prod(self.shape[other.ndim:]) == "
            f"prod(self.shape[:other.ndim]), but got {result_product} != {other_product}"
        )
    A = A.reshape(result_product, result_product)
    return solve(A, B.flatten()).reshape(result_shape)
