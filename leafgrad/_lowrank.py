"""``torch.svd_lowrank`` and ``torch.pca_lowrank``: randomized low-rank SVD (Halko et al., 2009,
algorithms 4.4 and 5.1), the same steps as PyTorch's, so with the same seed the random
projection, and the result, are PyTorch's (singular vectors up to the sign LAPACK gives)."""

from __future__ import annotations

__all__ = ["get_approximate_basis", "pca_lowrank", "svd_lowrank"]


def _lg():
    import leafgrad

    return leafgrad


def _floating_dtype(A):
    lg = _lg()
    return A.dtype if A.dtype.is_floating_point else lg.float32


def get_approximate_basis(A, q: int, niter: int | None = 2, M=None):
    """A ``(*, m, q)`` matrix ``Q`` with orthonormal columns such that ``Q Q^H A`` (or
    ``Q Q^H (A - M)``) approximates ``A`` (``A - M``)."""
    lg = _lg()
    niter = 2 if niter is None else niter
    dtype = _floating_dtype(A) if not A.is_complex() else A.dtype
    R = lg.randn(A.shape[-1], q, dtype=dtype, device=A.device)
    X = lg.matmul(A, R)
    if M is not None:
        X = X - lg.matmul(M, R)
    Q = lg.linalg.qr(X).Q
    for _ in range(niter):
        X = lg.matmul(A.mH, Q)
        if M is not None:
            X = X - lg.matmul(M.mH, Q)
        Q = lg.linalg.qr(X).Q
        X = lg.matmul(A, Q)
        if M is not None:
            X = X - lg.matmul(M, Q)
        Q = lg.linalg.qr(X).Q
    return Q


def svd_lowrank(A, q: int | None = 6, niter: int | None = 2, M=None):
    """``(U, S, V)``, an approximate rank-``q`` SVD of ``A`` (of ``A - M``), ``A ~ U diag(S)
    V^H``."""
    lg = _lg()
    q = 6 if q is None else q
    m, n = A.shape[-2:]
    if M is not None:
        M = M.broadcast_to(A.size())
    if m < n:  # computed for the tall matrix
        A = A.mH
        if M is not None:
            M = M.mH
    Q = get_approximate_basis(A, q, niter=niter, M=M)
    B = lg.matmul(Q.mH, A)
    if M is not None:
        B = B - lg.matmul(Q.mH, M)
    U, S, Vh = lg.linalg.svd(B, full_matrices=False)
    V = Vh.mH
    U = Q.matmul(U)
    if m < n:
        U, V = V, U
    return U, S, V


def pca_lowrank(A, q: int | None = None, center: bool = True, niter: int = 2):
    """``(U, S, V)``, the principal components of ``A`` (its columns centred unless ``center``
    is False) by ``svd_lowrank``."""
    m, n = A.shape[-2:]
    if q is None:
        q = min(6, m, n)
    elif not (q >= 0 and q <= min(m, n)):
        raise ValueError(
            f"q(={q}) must be non-negative integer and not greater than min(m, n)={min(m, n)}"
        )
    if not (niter >= 0):
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    if not center:
        return svd_lowrank(A, q, niter=niter, M=None)
    C = A.mean(dim=(-2,), keepdim=True)
    return svd_lowrank(A - C, q, niter=niter, M=None)
