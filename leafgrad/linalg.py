"""``leafgrad.linalg``: PyTorch's ``torch.linalg`` over the op table."""

from __future__ import annotations

from .ops.householder_ops import householder_product
from .ops.linalg_ops import (
    LinAlgError,
    cholesky,
    cholesky_ex,
    cond,
    eig,
    eigh,
    eigvals,
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
from .ops.lu_ops import linalg_lu as lu
from .ops.lu_ops import lstsq, lu_factor, lu_factor_ex, lu_solve, solve_ex
from .ops.tensor_linalg import tensorinv, tensorsolve

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
    "eig",
    "eigh",
    "eigvals",
    "eigvalsh",
    "householder_product",
    "inv",
    "inv_ex",
    "lstsq",
    "lu",
    "lu_factor",
    "lu_factor_ex",
    "lu_solve",
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
    "solve_ex",
    "solve_triangular",
    "svd",
    "svdvals",
    "tensorinv",
    "tensorsolve",
    "vander",
    "vdot",
    "vecdot",
    "vector_norm",
]
