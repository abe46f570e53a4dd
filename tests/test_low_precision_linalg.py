"""float16 and bfloat16 matrices given to linear algebra: PyTorch's CPU build refuses most of
them (LAPACK has no half-precision kernels) with its own exception and text; leafgrad raised
JAX's ``Unsupported dtype`` or computed a result. Each call is compared with PyTorch's."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import leafgrad

A = np.eye(3, dtype="float32") * 2 + 0.1

CALLS = {
    "linalg.cholesky": lambda L, a: L.linalg.cholesky(a),
    "cholesky": lambda L, a: L.cholesky(a),
    "linalg.cholesky_ex": lambda L, a: L.linalg.cholesky_ex(a),
    "linalg.inv": lambda L, a: L.linalg.inv(a),
    "linalg.inv_ex": lambda L, a: L.linalg.inv_ex(a),
    "inverse": lambda L, a: L.inverse(a),
    "linalg.eigh": lambda L, a: L.linalg.eigh(a),
    "linalg.eigvalsh": lambda L, a: L.linalg.eigvalsh(a),
    "linalg.svd": lambda L, a: L.linalg.svd(a),
    "linalg.svdvals": lambda L, a: L.linalg.svdvals(a),
    "svd": lambda L, a: L.svd(a),
    "linalg.qr": lambda L, a: L.linalg.qr(a),
    "linalg.solve": lambda L, a: L.linalg.solve(a, a),
    "linalg.det": lambda L, a: L.linalg.det(a),
    "det": lambda L, a: L.det(a),
    "logdet": lambda L, a: L.logdet(a),
    "linalg.slogdet": lambda L, a: L.linalg.slogdet(a),
    "linalg.lu_factor": lambda L, a: L.linalg.lu_factor(a),
    "linalg.lu": lambda L, a: L.linalg.lu(a),
    "lu": lambda L, a: L.lu(a),
    "linalg.eig": lambda L, a: L.linalg.eig(a),
    "linalg.lstsq": lambda L, a: L.linalg.lstsq(a, a),
    "linalg.matrix_exp": lambda L, a: L.linalg.matrix_exp(a),
    "linalg.pinv": lambda L, a: L.linalg.pinv(a),
    "linalg.matrix_rank": lambda L, a: L.linalg.matrix_rank(a),
    "linalg.matrix_norm_2": lambda L, a: L.linalg.matrix_norm(a, 2),
    "linalg.matrix_norm_nuc": lambda L, a: L.linalg.matrix_norm(a, "nuc"),
    "linalg.matrix_norm_fro": lambda L, a: L.linalg.matrix_norm(a),
    "linalg.cond": lambda L, a: L.linalg.cond(a),
    "linalg.matrix_power_-1": lambda L, a: L.linalg.matrix_power(a, -1),
    "linalg.solve_triangular": lambda L, a: L.linalg.solve_triangular(a, a, upper=True),
    "triangular_solve": lambda L, a: L.triangular_solve(a, a),
    "cholesky_solve": lambda L, a: L.cholesky_solve(a, a),
    "cholesky_inverse": lambda L, a: L.cholesky_inverse(a),
    "geqrf": lambda L, a: L.geqrf(a),
    "linalg.householder_product": lambda L, a: L.linalg.householder_product(a, a[0]),
    "orgqr": lambda L, a: L.orgqr(a, a[0]),
    "linalg.tensorinv": lambda L, a: L.linalg.tensorinv(a, 1),
    "linalg.vander": lambda L, a: L.linalg.vander(a[0]),
    "linalg.multi_dot": lambda L, a: L.linalg.multi_dot([a, a, a]),
}


def _outcome(lib, name, dtype):
    a = lib.tensor(A).to(getattr(lib, dtype))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = CALLS[name](lib, a)
    except Exception as exc:  # noqa: BLE001 - the type and text are compared
        return type(exc).__name__, str(exc)
    result = result[0] if isinstance(result, tuple) else result
    return "ok", str(result.dtype)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("name", sorted(CALLS))
def test_low_precision_linalg_matches_pytorch(name, dtype):
    assert _outcome(leafgrad, name, dtype) == _outcome(torch, name, dtype)
