"""``leafgrad.nn.utils.parametrizations``: ``weight_norm``, ``spectral_norm`` and
``orthogonal`` as parametrizations (``nn.utils.parametrize``), as
``torch.nn.utils.parametrizations``."""

from __future__ import annotations

from enum import Enum, auto

from ..._tensor import Tensor
from ...autograd import grad_mode
from .. import functional as F
from ..modules.module import Module
from . import parametrize
from .weight_norm import _weight_norm, norm_except_dim

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]


def _lg():
    import leafgrad

    return leafgrad


def _is_orthogonal(Q, eps=None):
    lg = _lg()
    n, k = Q.size(-2), Q.size(-1)
    Id = lg.eye(k, dtype=Q.dtype, device=Q.device)
    # A reasonable eps, but not too large
    eps = 10.0 * n * lg.finfo(Q.dtype).eps
    return lg.allclose(Q.mH @ Q, Id, atol=eps)


def _make_orthogonal(A):
    """The Q of A's QR decomposition, with the signs that make R's diagonal positive."""
    lg = _lg()
    X, tau = lg.geqrf(A)
    Q = lg.linalg.householder_product(X, tau)
    Q *= X.diagonal(dim1=-2, dim2=-1).sgn().unsqueeze(-2)
    return Q


class _OrthMaps(Enum):
    matrix_exp = auto()
    cayley = auto()
    householder = auto()


class _Orthogonal(Module):
    def __init__(self, weight, orthogonal_map: _OrthMaps, *, use_trivialization=True) -> None:
        super().__init__()
        if weight.is_complex() and orthogonal_map == _OrthMaps.householder:
            raise ValueError("The householder parametrization does not support complex tensors.")
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X):
        lg = _lg()
        n, k = X.size(-2), X.size(-1)
        transposed = n < k
        if transposed:
            X = X.mT
            n, k = k, n
        if self.orthogonal_map in (_OrthMaps.matrix_exp, _OrthMaps.cayley):
            X = X.tril()
            if n != k:
                X = lg.cat([X, X.new_zeros(n, n - k).expand(*X.shape[:-2], -1, -1)], dim=-1)
            A = X - X.mH
            if self.orthogonal_map == _OrthMaps.matrix_exp:
                Q = lg.matrix_exp(A)
            else:
                Id = lg.eye(n, dtype=A.dtype, device=A.device)
                Q = lg.linalg.solve(lg.add(Id, A, alpha=-0.5), lg.add(Id, A, alpha=0.5))
            if n != k:
                Q = Q[..., :k]
        else:
            A = X.tril(diagonal=-1)
            tau = 2.0 / (1.0 + (A * A).sum(dim=-2))
            Q = lg.linalg.householder_product(A, tau)
            Q = Q * X.diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2)
        if hasattr(self, "base"):
            Q = self.base @ Q
        if transposed:
            Q = Q.mT
        return Q

    def right_inverse(self, Q):
        with grad_mode.no_grad():
            return self._right_inverse(Q)

    def _right_inverse(self, Q):
        lg = _lg()
        if Q.shape != self.shape:
            raise ValueError(
                f"Expected a matrix or batch of matrices of shape {self.shape}. "
                f"Got a tensor of shape {Q.shape}."
            )
        Q_init = Q
        n, k = Q.size(-2), Q.size(-1)
        transpose = n < k
        if transpose:
            Q = Q.mT
            n, k = k, n
        if not hasattr(self, "base"):
            if self.orthogonal_map in (_OrthMaps.cayley, _OrthMaps.matrix_exp):
                raise NotImplementedError(
                    "It is not possible to assign to the matrix exponential or the Cayley "
                    "parametrizations when use_trivialization=False."
                )
            A, tau = lg.geqrf(Q)
            A.diagonal(dim1=-2, dim2=-1).sign_()
            A.diagonal(dim1=-2, dim2=-1)[tau == 0.0] *= -1
            return A.mT if transpose else A
        if n == k:
            Q = _make_orthogonal(Q) if not _is_orthogonal(Q) else Q.clone()
        else:
            N = lg.randn(*(Q.size()[:-2] + (n, n - k)), dtype=Q.dtype, device=Q.device)
            Q = _make_orthogonal(lg.cat([Q, N], dim=-1))
        self.base = Q
        neg_Id = lg.zeros_like(Q_init)
        neg_Id.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
        return neg_Id


def orthogonal(
    module, name: str = "weight", orthogonal_map: str | None = None, *, use_trivialization=True
):
    """Keep ``module.<name>`` an orthogonal (unitary) matrix or batch of them."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError(
            f"Expected a matrix or batch of matrices. Got a tensor of {weight.ndim} dimensions."
        )
    if orthogonal_map is None:
        orthogonal_map = (
            "matrix_exp"
            if weight.size(-2) == weight.size(-1) or weight.is_complex()
            else "householder"
        )
    orth_enum = getattr(_OrthMaps, orthogonal_map, None)
    if orth_enum is None:
        raise ValueError(
            'orthogonal_map has to be one of "matrix_exp", "cayley", "householder". '
            f"Got: {orthogonal_map}"
        )
    orth = _Orthogonal(weight, orth_enum, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module


class _WeightNorm(Module):
    def __init__(self, dim: int | None = 0) -> None:
        super().__init__()
        if dim is None:
            dim = -1
        self.dim = dim

    def forward(self, weight_g, weight_v):
        return _weight_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight):
        weight_g = norm_except_dim(weight, 2, self.dim)
        weight_v = weight
        return weight_g, weight_v


def weight_norm(module, name: str = "weight", dim: int = 0):
    """``module.<name> = g * v / ||v||`` with ``original0 = g`` and ``original1 = v``; a state
    dict of the old ``weight_norm`` (``<name>_g``, ``<name>_v``) still loads."""
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)

    def _weight_norm_compat_hook(
        state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs
    ) -> None:
        g_key = f"{prefix}{name}_g"
        v_key = f"{prefix}{name}_v"
        if g_key in state_dict and v_key in state_dict:
            original0 = state_dict.pop(g_key)
            original1 = state_dict.pop(v_key)
            state_dict[f"{prefix}parametrizations.{name}.original0"] = original0
            state_dict[f"{prefix}parametrizations.{name}.original1"] = original1

    module._register_load_state_dict_pre_hook(_weight_norm_compat_hook)
    return module


class _SpectralNorm(Module):
    def __init__(self, weight, n_power_iterations: int = 1, dim: int = 0, eps: float = 1e-12):
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError(
                f"Dimension out of range (expected to be in range of [-{ndim}, {ndim - 1}] but "
                f"got {dim})"
            )
        if n_power_iterations <= 0:
            raise ValueError(
                "Expected n_power_iterations to be positive, but got "
                f"n_power_iterations={n_power_iterations}"
            )
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            weight_mat = self._reshape_weight_to_matrix(weight)
            h, w = weight_mat.size()
            u = weight_mat.new_empty(h).normal_(0, 1)
            v = weight_mat.new_empty(w).normal_(0, 1)
            self.register_buffer("_u", F.normalize(u, dim=0, eps=self.eps))
            self.register_buffer("_v", F.normalize(v, dim=0, eps=self.eps))
            self._power_method(weight_mat, 15)

    def _reshape_weight_to_matrix(self, weight):
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.dim()) if d != self.dim))
        return weight.flatten(1)

    def _power_method(self, weight_mat, n_power_iterations: int) -> None:
        lg = _lg()
        with grad_mode.no_grad():
            for _ in range(n_power_iterations):
                self._u = F.normalize(lg.mv(weight_mat, self._v), dim=0, eps=self.eps, out=self._u)
                self._v = F.normalize(
                    lg.mv(weight_mat.H, self._u), dim=0, eps=self.eps, out=self._v
                )

    def forward(self, weight):
        lg = _lg()
        if weight.ndim == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        weight_mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        u = self._u.clone(memory_format=lg.contiguous_format)
        v = self._v.clone(memory_format=lg.contiguous_format)
        sigma = lg.vdot(u, lg.mv(weight_mat, v))
        return weight / sigma

    def right_inverse(self, value):
        return value


def spectral_norm(
    module, name: str = "weight", n_power_iterations: int = 1, eps: float = 1e-12, dim=None
):
    """Divide ``module.<name>`` by its spectral norm, estimated by power iteration (one step
    per training-mode read)."""
    lg = _lg()
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        transposed = (lg.nn.ConvTranspose1d, lg.nn.ConvTranspose2d, lg.nn.ConvTranspose3d)
        dim = 1 if isinstance(module, transposed) else 0
    parametrize.register_parametrization(
        module, name, _SpectralNorm(weight, n_power_iterations, dim, eps)
    )
    return module
