"""``leafgrad.linalg``: PyTorch's ``torch.linalg`` over the op table."""

from __future__ import annotations

from .ops.linalg_ops import (
    LinAlgError,
    cholesky,
    cholesky_ex,
    cond,
    eigh,
    eigvalsh,
    inv,
    inv_ex,
    linalg_cross,
    linalg_det,
    matmul,
    matrix_norm,
    matrix_power,
    matrix_rank,
    multi_dot,
    norm,
    pinv,
    qr,
    slogdet,
    solve,
    solve_triangular,
    svd,
    svdvals,
    vander,
    vdot,
    vecdot,
    vector_norm,
)
from .ops.linalg_ops import linalg_diagonal as diagonal

cross = linalg_cross
det = linalg_det

__all__ = [
    "LinAlgError",
    "cholesky",
    "cholesky_ex",
    "cond",
    "cross",
    "det",
    "diagonal",
    "eigh",
    "eigvalsh",
    "inv",
    "inv_ex",
    "matmul",
    "matrix_norm",
    "matrix_power",
    "matrix_rank",
    "multi_dot",
    "norm",
    "pinv",
    "qr",
    "slogdet",
    "solve",
    "solve_triangular",
    "svd",
    "svdvals",
    "vander",
    "vdot",
    "vecdot",
    "vector_norm",
]
