"""Functions PyTorch removed in 1.9 and still names: calling one raises PyTorch's message,
which says what replaces it (``torch.solve`` -> ``torch.linalg.solve``, and so on)."""

from __future__ import annotations

from ._tensor import Tensor

_MESSAGES = {
    "solve": (
        "This function was deprecated since version 1.9 and is now removed. "
        "`torch.solve` is deprecated in favor of `torch.linalg.solve`. "
        "`torch.linalg.solve` has its arguments reversed and does not return the LU "
        "factorization.\n"
        "\n"
        "To get the LU factorization see `torch.lu`, which can be used with "
        "`torch.lu_solve` or `torch.lu_unpack`.\n"
        "X = torch.solve(B, A).solution should be replaced with:\n"
        "X = torch.linalg.solve(A, B)"
    ),
    "lstsq": (
        "This function was deprecated since version 1.9 and is now removed. "
        "`torch.lstsq` is deprecated in favor of `torch.linalg.lstsq`.\n"
        "`torch.linalg.lstsq` has reversed arguments and does not return the QR "
        "decomposition in the returned tuple (although it returns other information "
        "about the problem).\n"
        "\n"
        "To get the QR decomposition consider using `torch.linalg.qr`.\n"
        "\n"
        "The returned solution in `torch.lstsq` stored the residuals of the solution in "
        "the last m - n columns of the returned value whenever m > n. In "
        "torch.linalg.lstsq, the residuals are in the field 'residuals' of the returned "
        "named tuple.\n"
        "\n"
        "The unpacking of the solution, as in\n"
        "X, _ = torch.lstsq(B, A).solution[:A.size(1)]\n"
        "should be replaced with:\n"
        "X = torch.linalg.lstsq(A, B).solution"
    ),
    "eig": (
        "This function was deprecated since version 1.9 and is now removed. "
        "`torch.linalg.eig` returns complex tensors of dtype `cfloat` or `cdouble` "
        "rather than real tensors mimicking complex tensors.\n"
        "\n"
        "L, _ = torch.eig(A) should be replaced with:\n"
        "L_complex = torch.linalg.eigvals(A)\n"
        "\n"
        "and\n"
        "\n"
        "L, V = torch.eig(A, eigenvectors=True) should be replaced with:\n"
        "L_complex, V_complex = torch.linalg.eig(A)"
    ),
    "symeig": (
        "This function was deprecated since version 1.9 and is now removed. The default "
        "behavior has changed from using the upper triangular portion of the matrix by "
        "default to using the lower triangular portion.\n"
        "\n"
        "L, _ = torch.symeig(A, upper=upper) should be replaced with:\n"
        "L = torch.linalg.eigvalsh(A, UPLO='U' if upper else 'L')\n"
        "\n"
        "and\n"
        "\n"
        "L, V = torch.symeig(A, eigenvectors=True) should be replaced with:\n"
        "L, V = torch.linalg.eigh(A, UPLO='U' if upper else 'L')"
    ),
    "matrix_rank": (
        "This function was deprecated since version 1.9 and is now removed.\n"
        "Please use the `torch.linalg.matrix_rank` function instead. The parameter "
        "'symmetric' was renamed in `torch.linalg.matrix_rank()` to 'hermitian'."
    ),
}


# PyTorch's signatures (torch/_linalg_utils.py, torch/_tensor.py): a call that does not bind
# raises Python's TypeError first


def solve(input, A, *, out=None):
    raise RuntimeError(_MESSAGES["solve"])


def lstsq(input, A, *, out=None):
    raise RuntimeError(_MESSAGES["lstsq"])


def eig(self, eigenvectors=False, *, e=None, v=None):
    raise RuntimeError(_MESSAGES["eig"])


def _symeig(input, eigenvectors=False, upper=True, *, out=None):
    raise RuntimeError(_MESSAGES["symeig"])


symeig = _symeig  # named as PyTorch's Python stub (``torch._linalg_utils._symeig``)


def matrix_rank(input, tol=None, symmetric=False, *, out=None):
    raise RuntimeError(_MESSAGES["matrix_rank"])


def _solve(self, other):
    return solve(self, other)


def _lstsq(self, other):
    return lstsq(self, other)


def _eig(self, eigenvectors=False):
    return eig(self, eigenvectors=eigenvectors)


def _symeig_method(self, eigenvectors=False):
    return symeig(self, eigenvectors=eigenvectors)


Tensor.solve, Tensor.lstsq, Tensor.eig, Tensor.symeig = _solve, _lstsq, _eig, _symeig_method
