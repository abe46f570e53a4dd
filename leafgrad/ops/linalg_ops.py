"""Linear algebra: matmul in every rank, the BLAS-like ops and ``torch.linalg``'s table entries.

Ops PyTorch builds from several nodes (matmul's folding and batching, tensordot, kron, the
matrix norms, matrix_power, multi_dot) are composites over table ops, recorded node for node.
Their reshapes follow PyTorch's ``reshape``: a ``view`` when the operand is contiguous, a
``_reshape_alias`` when its strides allow a view, otherwise ``clone`` and ``_unsafe_view``. To
decide this the composites track the strides PyTorch would give the intermediate tensors
(Note [Tracked strides]); leafgrad tensors entering an op are taken as contiguous.
"""

from __future__ import annotations

import functools
import math

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from .. import _autocast
from .. import _dtype as D
from .. import _errors as E
from .. import _written_dims as written_dims
from .._known import physical_values
from .._storage import kernel_wrote
from .._tensor import Tensor, _wrap_dim
from ..autograd import forward_ad, grad_mode
from ..autograd import saved as saved_mod
from . import shape as _shape_ops
from .api import refuse_backward, register_ops, stale_views_first, tensor_op
from .dispatch import broadcast_shapes, dispatch, saved_first
from .elementwise import _checked, kernel_scalar
from .table import OPS, OpDef, _true_divide, promote, same

# --- messages (PyTorch's text) -------------------------------------------------------------------
BMM_DTYPE = "expected scalar type {} but found {}"
NOT_IMPLEMENTED_FOR = "\"{}\" not implemented for '{}'"
BATCH_3D = "{} must be a 3D tensor"
BMM_SIZES = "Incompatible matrix sizes for bmm ({}x{} and {}x{})"
OUTER_1D = "outer: Expected 1-D argument {}, but got {}-D"
DOT_1D = "1D tensors expected, but got {}D and {}D tensors"
EXPAND_SIZE = (
    "The expanded size of the tensor ({}) must match the existing size ({}) at non-singleton "
    "dimension {}.  Target sizes: [{}].  Tensor sizes: [{}]"
)
ADDMM_SELF_DTYPE = "self and mat2 must have the same dtype, but got {} and {}"
ADDMM_MAT_DTYPE = "mat1 and mat2 must have the same dtype, but got {} and {}"
MAT_2D = "{} must be a matrix, got {}-D tensor"
TRACE_2D = "trace: expected a matrix, but got tensor with dim {}"
CROSS_LEN = "linalg.cross: inputs dimension {} must have length 3. Got {} and {}"
CROSS_DIMS = "linalg.cross: inputs must have the same number of dimensions."
CROSS_WARN = (
    "Using torch.cross without specifying the dim arg is deprecated.\nPlease either pass the dim "
    "explicitly or simply use torch.linalg.cross.\nThe default value of dim will change to agree "
    "with that of linalg.cross in a future release. (Triggered internally at "
    "/__w/pytorch/pytorch/aten/src/ATen/native/Cross.cpp:63.)"
)
CROSS_NO_DIM3 = "no dimension of size 3 in input"
AT_LEAST_2D = "{}: The input tensor A must have at least 2 dimensions."
SQUARE = "{}: A must be batches of square matrices, but they are {} by {} matrices"
FLOAT_INPUT = "{}: Expected a floating point or complex tensor as input. Got {}"
INV_SINGULAR = (
    "linalg.inv: {}The diagonal element {} is zero, the inversion could not be completed because "
    "the input matrix is singular."
)
SOLVE_SINGULAR = "torch.linalg.solve: {}The solver failed because the input matrix is singular."
SOLVE_DTYPE = (
    "linalg.solve: Expected A and B to have the same dtype, but found A of type {} and B of type "
    "{} instead"
)
SOLVE_VECTOR_RIGHT = (
    "linalg.solve: Vector broadcasting of the left hand side is not supported for left=False. "
    "In this case linalg.solve is equivalent to B / A.squeeze(-1)"
)
SOLVE_SHAPES = "linalg.solve: Incompatible shapes of A and B for the equation {} ({}x{} and {}x{})"
CHOLESKY_PD = (
    "{}: {}The factorization could not be completed because the input is not "
    "positive-definite (the leading minor of order {} is not positive-definite)."
)
QR_MODE = (
    "qr received unrecognized mode '{}' but expected one of 'reduced' (default), 'r', or 'complete'"
)
QR_R_BACKWARD = (
    "The derivative of linalg.qr depends on Q, which is not computed when mode='r'. Please use "
    "linalg.qr(A, mode='reduced') if you are going to differentiate through linalg.qr."
)
RANK_2D = "torch.linalg.matrix_rank: The input tensor input must have at least 2 dimensions."
RANK_DTYPE = "This function doesn't handle types other than float and double"
RANK_COMPLEX_TOL = "torch.linalg.matrix_rank: {} tensor of complex type is not supported. Got {}"
UPLO_MSG = "Expected UPLO argument to be 'L' or 'U', but got {}"
PINV_INPUT = (
    "linalg.pinv({}{{[{}]}}): expected a tensor with 2 or more dimensions of float, double, "
    "cfloat or cdouble types"
)
NORM_DTYPE_FLOAT = "linalg.vector_norm: dtype should be floating point or complex, but got {}"
NORM_DTYPE_KIND = "linalg.vector_norm: dtype should be {} for {} inputs, but got {}"
NORM_DTYPE_NARROW = (
    "linalg.vector_norm: the dtype of the input ({}) should be convertible without narrowing to "
    "the specified dtype ({})"
)
NORM_EMPTY = (
    "linalg.vector_norm cannot compute the {} norm on an empty tensor because the operation does "
    "not have an identity"
)
NORM_EMPTY_DIM = (
    "linalg.vector_norm cannot compute the {} norm on the dimension {}because this dimension is "
    "empty and the operation does not have an identity"
)
MATRIX_NORM_ORD = "linalg.matrix_norm: Order {} not supported."
MATRIX_NORM_DIM = "linalg.matrix_norm: dim must be a 2-tuple. Got {}"
NORM_DIM_LEN = "linalg.norm: If dim is specified, it must be of length 1 or 2. Got [{}]"
NORM_ORD_NDIM = (
    "linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got {}D."
)
MULTI_DOT_N = "multi_dot(): expected at least 2 tensors but got {}"
MULTI_DOT_END = "multi_dot(): the {} tensor must be 1D or 2D but got {}D"
MULTI_DOT_MID = "multi_dot(): tensor {} must be 2D but got {}D"
MULTI_DOT_DTYPE = (
    "multi_dot(): all tensors must have be the same dtype but tensor 0 is {} and tensor {} {}"
)
MULTI_DOT_SHAPES = "multi_dot(): tensors {} and {} with shapes [{}] and [{}] cannot be multiplied"
TENSORDOT_LEN = "both dimension lists should have same length"
TENSORDOT_DIMS = (
    "tensordot expects dims to be int or tuple[list[int], list[int]] or list[list[int]] "
    "containing two lists, but got dims={}"
)
TENSORDOT_DTYPE = "both inputs should have same dtype"
TENSORDOT_SIZE = (
    "contracted dimensions need to match, but first has size {} in dim {} and second has size {} "
    "in dim {}"
)


class LinAlgError(RuntimeError):
    """PyTorch's ``torch.linalg.LinAlgError`` (``torch._C._LinAlgError``): a data-dependent
    failure of a decomposition, such as inverting a singular matrix."""


LinAlgError.__name__ = "_LinAlgError"
LinAlgError.__qualname__ = "_LinAlgError"


def _sizes(shape) -> str:
    return ", ".join(str(s) for s in shape)


def _name(d) -> str:
    return E.scalar_type_name(d)


# --- dtype rules ---------------------------------------------------------------------------------


def _same_dtype_rule(message, spell=_name, bool_name=None, bool_first=False):
    """All tensor operands must share the first one's dtype (``message`` gets first, other).
    ``bool_first``: the kernel dispatches on the first dtype before it compares them (``bmm``
    refuses a bool ``self`` whatever ``mat2`` is; ``dot`` compares first)."""

    def rule(meta, static):
        first = meta[0][0]
        if bool_first and first is D.bool_:
            raise NotImplementedError(NOT_IMPLEMENTED_FOR.format(bool_name, "Bool"))
        for m in meta[1:]:
            if isinstance(m, tuple) and m[0] is not first:
                raise RuntimeError(message.format(spell(first), spell(m[0])))
        if bool_name is not None and first is D.bool_:
            raise NotImplementedError(NOT_IMPLEMENTED_FOR.format(bool_name, "Bool"))
        return (None,) * len(meta), first

    return rule


def _trace_rule(meta, static):
    dt = meta[0][0]
    if dt is D.bool_:
        raise NotImplementedError(NOT_IMPLEMENTED_FOR.format("trace", "Bool"))
    rt = D.int64 if dt._kind in "ui" else dt
    return (rt,), rt


def _real_of(dt):
    return {"complex64": D.float32, "complex128": D.float64}.get(dt.name, dt)


def _norm_rule(meta, static):
    dt = static.get("dtype") or meta[0][0]
    return (dt,), _real_of(dt)


def _slogdet_rule(meta, static):
    dt = meta[0][0]
    return (None,), (dt, _real_of(dt))


def _eigh_rule(meta, static):
    dt = meta[0][0]
    if static.get("vectors", True):
        return (None,), (_real_of(dt), dt)
    return (None,), _real_of(dt)


def _svd_rule(meta, static):
    dt = meta[0][0]
    if static.get("uv", True):
        return (None,), (dt, _real_of(dt), dt)
    return (None,), _real_of(dt)


def _pair_rule(meta, static):
    dt = meta[0][0]
    return (None,), (dt, dt)


def _solve_rule(meta, static):
    a, b = meta[0][0], meta[1][0]
    if a is not b:
        raise RuntimeError(SOLVE_DTYPE.format(_name(a), _name(b)))
    return (None, None), a


def _cross_rule(meta, static):
    a, b = meta[0][0], meta[1][0]
    if a is not b:
        raise RuntimeError(BMM_DTYPE.format(_name(a), _name(b)))
    return (None, None), a


def _addmm_rule(bool_name):
    def rule(meta, static):
        s, m1, m2 = meta[0][0], meta[1][0], meta[2][0]
        if s is not m2:
            raise RuntimeError(ADDMM_SELF_DTYPE.format(_name(s), _name(m2)))
        if m1 is not m2:
            raise RuntimeError(ADDMM_MAT_DTYPE.format(_name(m1), _name(m2)))
        if s is D.bool_:
            raise NotImplementedError(NOT_IMPLEMENTED_FOR.format(bool_name, "Bool"))
        return (None, None, None), s

    return rule


def _addmv_rule(meta, static):
    s, m, v = meta[0][0], meta[1][0], meta[2][0]
    if not (s is m is v):
        raise RuntimeError(E.MV_DTYPE.format(_name(s), _name(m), _name(v)))
    if s is D.bool_:
        raise NotImplementedError(NOT_IMPLEMENTED_FOR.format("addmv_impl_cpu", "Bool"))
    return (None, None, None), s


def _baddbmm_rule(bool_name):
    def rule(meta, static):
        s, b1, b2 = meta[0][0], meta[1][0], meta[2][0]
        if not (s is b1 is b2):
            raise RuntimeError(BMM_DTYPE.format(_name(b1), _name(b2)))
        if s is D.bool_:
            raise NotImplementedError(NOT_IMPLEMENTED_FOR.format(bool_name, "Bool"))
        return (None, None, None), s

    return rule


# --- forwards ------------------------------------------------------------------------------------

_HIGHEST = lax.Precision.HIGHEST


def _mm(a, b):
    return jnp.matmul(a, b, precision=_HIGHEST)


def _scaled_sum(x, prod, beta, alpha):
    """``beta * x + alpha * prod``; with ``beta == 0`` the input is ignored (NaNs included)."""
    out = prod if alpha == 1 else alpha * prod
    if beta == 0:
        return out
    return (x if beta == 1 else beta * x) + out


def _addmm(x, m1, m2, beta=1, alpha=1):
    return _scaled_sum(x, _mm(m1, m2), beta, alpha)


def _addbmm(x, b1, b2, beta=1, alpha=1):
    return _scaled_sum(x, jnp.sum(_mm(b1, b2), axis=0), beta, alpha)


def _vdot(a, b):
    return jnp.dot(jnp.conj(a), b, precision=_HIGHEST)


def _cross(a, b, dim):
    shape = jnp.broadcast_shapes(a.shape, b.shape)
    a, b = jnp.broadcast_to(a, shape), jnp.broadcast_to(b, shape)
    a0, a1, a2 = (jnp.take(a, i, axis=dim) for i in range(3))
    b0, b1, b2 = (jnp.take(b, i, axis=dim) for i in range(3))
    return jnp.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=dim)


def _mH(a):
    """The conjugate transpose of a batch of matrices."""
    return jnp.conj(jnp.swapaxes(a, -1, -2))


def _hermitian_from(x, lower):
    """The Hermitian matrix LAPACK sees when it reads only one triangle of ``x``."""
    tri = jnp.tril(x) if lower else jnp.triu(x)
    strict = jnp.tril(x, -1) if lower else jnp.triu(x, 1)
    diag = jnp.real(jnp.diagonal(x, axis1=-2, axis2=-1)).astype(x.dtype)
    full = tri + jnp.conj(jnp.swapaxes(strict, -1, -2))
    n = x.shape[-1]
    eye = jnp.eye(n, dtype=bool)
    return jnp.where(eye, diag[..., None, :] * jnp.ones_like(full), full)


# Note [Whole tangents]: PyTorch's forward formulas for the decompositions and solves that read
# one triangle of a matrix (``cholesky``, ``eigh``/``eigvalsh``, ``pinv(hermitian=True)``,
# ``cholesky_inverse``, ``triangular_solve``) read the whole tangent: their precondition is a
# Hermitian (or triangular) tangent, and for another one they give what the formula gives, not
# the derivative of the value. Two are not that derivative even then: ``cholesky_inverse``'s
# ``-X dL X L^H`` (plus its adjoint) and ``triangular_solve(transpose=True)``'s untransposed
# ``dA``. leafgrad's backward formulas stay as they are (the triangle's gradient, as PyTorch's
# backward); forward-mode AD takes PyTorch's forward formula (``forward_ad.forward_formula``), so
# a script gets PyTorch's tangents. tests/test_forward_ad.py checks them against torch.


def _cholesky_value(x, upper=False):
    # PyTorch reads one triangle only (the upper with upper=True), and its backward returns the
    # Hermitian gradient:
    # the value comes from the triangle, the gradient flows through (A + A^H) / 2.
    sym = (x + jnp.conj(jnp.swapaxes(x, -1, -2))) / 2
    a = sym + lax.stop_gradient(_hermitian_from(x, not upper) - sym)
    lo = lax.linalg.cholesky(a, symmetrize_input=False)
    return jnp.conj(jnp.swapaxes(lo, -1, -2)) if upper else lo


def _cholesky_jvp(upper, primals, tangents):
    """PyTorch's ``cholesky_jvp``: ``dL = L Phi(L^-1 dA L^-H)``, ``Phi`` the lower triangle with
    half the diagonal. It reads the whole tangent, where the value reads one triangle."""
    (x,), (dA,) = primals, tangents
    out = _cholesky_value(x, upper)
    lo = _mH(out) if upper else out
    X = lax.linalg.triangular_solve(lo, dA, left_side=True, lower=True)
    X = lax.linalg.triangular_solve(
        lo, X, left_side=False, lower=True, transpose_a=True, conjugate_a=True
    )
    diag = jnp.diagonal(X, axis1=-2, axis2=-1)
    dL = lo @ (jnp.tril(X) - 0.5 * diag[..., None, :] * jnp.eye(X.shape[-1], dtype=X.dtype))
    return _mH(dL) if upper else dL


def _cholesky(x, upper=False):
    """``linalg_cholesky_ex``'s factor; under forward-mode AD with PyTorch's forward formula
    (Note [Whole tangents])."""
    if forward_ad.JVP_TRACING[0]:
        return forward_ad.forward_formula(
            functools.partial(_cholesky_value, upper=upper),
            functools.partial(_cholesky_jvp, upper),
            x,
        )
    return _cholesky_value(x, upper)


def _eigh(x, lower=True, vectors=True):
    # As for cholesky: values from one triangle, PyTorch's Hermitian gradient.
    sym = (x + jnp.conj(jnp.swapaxes(x, -1, -2))) / 2
    a = sym + lax.stop_gradient(_hermitian_from(x, lower) - sym)
    v, w = lax.linalg.eigh(a, lower=lower, symmetrize_input=False)
    return (w, v) if vectors else w


def _eigh_jvp(lower, vectors, primals, tangents):
    """PyTorch's ``linalg_eig_jvp`` (Hermitian): ``dP = V^H dA V``, ``dL = Re(diag(dP))`` and
    ``dV = V ((dP - diag(dP)) / E)``, ``E_ij = L_j - L_i``. It reads the whole tangent, both
    triangles, where the value reads one (its precondition is a Hermitian tangent)."""
    (x,), (dA,) = primals, tangents
    L, V = _eigh(x, lower)
    dP = _mH(V) @ dA @ V
    dL = jnp.real(jnp.diagonal(dP, axis1=-2, axis2=-1)).astype(L.dtype)
    if not vectors:
        return dL
    eye = jnp.eye(L.shape[-1], dtype=bool)
    dV = V @ jnp.where(eye, jnp.zeros((), V.dtype), dP / (L[..., None, :] - L[..., :, None]))
    return dL, dV


def _eigh_op(x, lower=True, vectors=True):
    """``linalg_eigh``'s forward; under forward-mode AD with PyTorch's forward formula (Note
    [Whole tangents])."""
    if forward_ad.JVP_TRACING[0]:
        return forward_ad.forward_formula(
            functools.partial(_eigh, lower=lower, vectors=vectors),
            functools.partial(_eigh_jvp, lower, vectors),
            x,
        )
    return _eigh(x, lower, vectors)


def _eig_values_vectors(x):
    w, v = jnp.linalg.eig(x)  # LAPACK's geev, as PyTorch's CPU kernel: unit-norm vectors
    return w, v


@jax.custom_vjp
def _eig(x):
    """``torch.linalg.eig``: JAX differentiates only the eigenvalues of ``eig``, so the VJP is
    PyTorch's ``linalg_eig_backward`` (non-Hermitian), written out. The residuals come from
    ``_eig`` itself, so a second derivative goes through this rule again."""
    return _eig_values_vectors(x)


def _eig_fwd(x):
    w, v = _eig(x.value)
    return (w, v), (w, v, jnp.iscomplexobj(x.value))


def _eig_bwd(res, cts):
    L, V, complex_input = res
    undefined = [isinstance(c, jax.custom_derivatives.SymbolicZero) for c in cts]
    # JAX's cotangents are the conjugates of PyTorch's gradients (dispatch._backward)
    gL = None if undefined[0] else jnp.conj(cts[0])
    gV = None if undefined[1] else jnp.conj(cts[1])
    Vh = jnp.conj(jnp.swapaxes(V, -1, -2))
    if gV is None:
        if gL is None:
            gA = jnp.zeros_like(V)
        else:
            gA = jnp.linalg.solve(Vh, gL[..., :, None] * Vh)
    else:
        VhgV = Vh @ gV
        diag = jnp.real(jnp.diagonal(VhgV, axis1=-2, axis2=-1))
        VhgV = VhgV - Vh @ (V * diag[..., None, :])
        Lc = jnp.conj(L)
        eye = jnp.eye(L.shape[-1], dtype=bool)
        Econj = jnp.where(eye, jnp.ones((), L.dtype), Lc[..., None, :] - Lc[..., :, None])
        gA = VhgV / Econj
        if gL is not None:
            gA = jnp.where(eye, gL[..., None, :] * jnp.ones_like(gA), gA)
        gA = jnp.linalg.solve(Vh, gA @ Vh)
    return (gA.conj() if complex_input else jnp.real(gA),)


_eig.defvjp(_eig_fwd, _eig_bwd, symbolic_zeros=True)


def _eig_jvp(primals, tangents):
    """PyTorch's ``linalg_eig_jvp`` (non-Hermitian): with ``dP = V^-1 dA V``, ``dL = diag(dP)``
    and ``dV = dX - V Re(diag(V^H dX))``, where ``dX = V ((dP - diag(dP)) / E)`` and
    ``E_ij = L_j - L_i`` (the correction keeps the vectors' unit norm)."""
    (x,), (dA,) = primals, tangents
    L, V = _eig_values_vectors(x)
    dP = jnp.linalg.solve(V, dA.astype(V.dtype) @ V)
    dL = jnp.diagonal(dP, axis1=-2, axis2=-1)
    eye = jnp.eye(L.shape[-1], dtype=bool)
    dX = V @ jnp.where(eye, jnp.zeros((), V.dtype), dP / (L[..., None, :] - L[..., :, None]))
    return dL, dX - V * jnp.real(jnp.diagonal(_mH(V) @ dX, axis1=-2, axis2=-1))[..., None, :]


def _eig_op(x):
    """``linalg_eig``'s forward: the custom VJP above, or under forward-mode AD PyTorch's
    forward formula (JAX has no JVP for the eigenvectors of ``eig``)."""
    if forward_ad.JVP_TRACING[0]:
        return forward_ad.forward_formula(_eig_values_vectors, _eig_jvp, x)
    return _eig(x)


def _eig_rule(meta, static):
    dt = meta[0][0]
    out = dt if dt.is_complex else dt.to_complex()
    return (None,), (out, out)


def _svd(x, full_matrices=True, uv=True):
    if not uv:
        return lax.linalg.svd(x, full_matrices=False, compute_uv=False)
    u, s, vh = lax.linalg.svd(x, full_matrices=False, compute_uv=True)
    m, n = x.shape[-2], x.shape[-1]
    if full_matrices and m != n:
        # PyTorch's backward ignores the completing columns/rows: they carry no gradient.
        uf, _, vhf = lax.linalg.svd(lax.stop_gradient(x), full_matrices=True)
        k = min(m, n)
        u = jnp.concatenate([u, uf[..., :, k:]], axis=-1)
        vh = jnp.concatenate([vh, vhf[..., k:, :]], axis=-2)
    return u, s, vh


def _qr(x, mode="reduced"):
    q, r = jnp.linalg.qr(x, mode="complete" if mode == "complete" else "reduced")
    if mode == "r":  # PyTorch returns an empty Q (and refuses backward: see ``qr``)
        q = jnp.zeros((0,), x.dtype)
    return q, r


def _matrix_rank(x, atol, rtol, hermitian=False):
    """The number of singular values (|eigenvalues| if hermitian) above max(atol, rtol * max)."""
    m, n = x.shape[-2], x.shape[-1]
    if m == 0 or n == 0:
        return jnp.zeros(x.shape[:-2], jnp.int64)
    if hermitian:
        s = jnp.abs(lax.linalg.eigh(x, lower=True, symmetrize_input=False)[1])
    else:
        s = lax.linalg.svd(x, full_matrices=False, compute_uv=False)
    atol = jnp.asarray(atol, s.dtype)[..., None]
    rtol = jnp.asarray(rtol, s.dtype)[..., None]
    tol = jnp.maximum(atol, rtol * jnp.max(s, axis=-1, keepdims=True))
    return jnp.sum(s > tol, axis=-1, dtype=jnp.int64)


def _rank_rule(meta, static):
    return (None,) * len(meta), D.int64


def _solve(a, b, vector=False, left=True):
    if vector:
        return _solve(a, b[..., None], left=left)[..., 0]
    if not left:  # X A = B  <=>  A^T X^T = B^T
        return jnp.swapaxes(_solve(jnp.swapaxes(a, -1, -2), jnp.swapaxes(b, -1, -2)), -1, -2)
    shape = jnp.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a = jnp.broadcast_to(a, shape + a.shape[-2:])
    b = jnp.broadcast_to(b, shape + b.shape[-2:])
    return jnp.linalg.solve(a, b)


def _solve_triangular(a, b, upper, left=True, unitriangular=False):
    """``linalg.solve_triangular``: reads only the ``upper`` (or lower) triangle of ``a``."""
    shape = jnp.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a = jnp.broadcast_to(a, shape + a.shape[-2:])
    b = jnp.broadcast_to(b, shape + b.shape[-2:])
    return lax.linalg.triangular_solve(
        a, b, left_side=bool(left), lower=not upper, unit_diagonal=bool(unitriangular)
    )


def _slogdet(x):
    sign, logabs = jnp.linalg.slogdet(x)
    return sign, logabs


def _pinv_value(x, rtol, hermitian):
    return jnp.linalg.pinv(x, rtol=rtol, hermitian=hermitian)


def _pinv_jvp(rtol, hermitian, primals, tangents):
    """PyTorch's ``pinv_jvp``, in the smaller of the two products; with ``hermitian`` it reads
    the whole tangent, where the value reads one triangle (Note [Whole tangents])."""
    (A,), (dA,) = primals, tangents
    P = _pinv_value(A, rtol, hermitian)
    dAh, Ph = _mH(dA), _mH(P)
    if A.shape[-2] <= A.shape[-1]:
        K = Ph @ dAh
        return P @ (K - _mH(K) - K @ (A @ P)) + (dAh - P @ (A @ dAh)) @ (Ph @ P)
    K = P @ dA
    Kh = _mH(K)
    return (Kh - K - P @ A @ Kh) @ P + (P @ Ph) @ (dAh - (dAh @ A) @ P)


def _pinv(x, rtol, hermitian=False):
    if forward_ad.JVP_TRACING[0]:
        return forward_ad.forward_formula(
            functools.partial(_pinv_value, rtol=rtol, hermitian=hermitian),
            functools.partial(_pinv_jvp, rtol, hermitian),
            x,
        )
    return _pinv_value(x, rtol, hermitian)


def _vector_norm(x, ord=2.0, dim=None, keepdim=False, dtype=None):
    """``linalg.vector_norm`` whose VJP gives PyTorch's gradients, zero at a zero norm."""
    if ord == 2 and not jnp.iscomplexobj(x):
        # ord 2's formula is the one whose rounding matters most (Note [Formula tangents])
        return _norm(x, 2.0, dim, keepdim)
    return _vector_norm_of(x, ord, dim, keepdim)


def _vector_norm_of(x, ord, dim, keepdim):
    # |x| as x * sign(x): PyTorch's gradients use sgn(x), which is 0 at 0 and at a NaN.
    sign = lax.stop_gradient(jnp.where(jnp.isnan(x), 0, jnp.sign(x)).astype(x.dtype))
    a = jnp.abs(x) if jnp.iscomplexobj(x) else x * sign
    if ord == math.inf:
        return jnp.max(a, axis=dim, keepdims=keepdim)
    if ord == -math.inf:
        return jnp.min(a, axis=dim, keepdims=keepdim)
    if ord == 0:
        # Counts non-zeros; its node gives no gradient (Note [Undefined gradients])
        return jnp.sum((a != 0).astype(a.dtype), axis=dim, keepdims=keepdim)
    if ord == 1:
        return jnp.sum(a, axis=dim, keepdims=keepdim)
    if ord == 2:
        s = jnp.sum(a * a, axis=dim, keepdims=keepdim)
    elif ord < 1:
        # PyTorch's norm_backward for p < 1 fills the gradient of zero elements with 0 (here
        # |x|**(p-1) is inf or 0 there: NaN); their value still counts (0, or inf for p < 0)
        nil = a == 0
        powered = jnp.where(nil, lax.stop_gradient(a**ord), jnp.where(nil, 1, a) ** ord)
        s = jnp.sum(powered, axis=dim, keepdims=keepdim)
    else:
        s = jnp.sum(a**ord, axis=dim, keepdims=keepdim)
    zero = s == 0
    safe = jnp.where(zero, jnp.ones_like(s), s)
    root = jnp.sqrt(safe) if ord == 2 else safe ** (1.0 / ord)
    # PyTorch masks the gradient where the norm is 0 (for ord > 0) or where it is inf (ord < 0).
    return jnp.where(zero, jnp.zeros_like(s) if ord > 0 else jnp.full_like(s, jnp.inf), root)


# --- norms with PyTorch's gradients (Note [Norm gradients at zero] in vector_ops.py) -------------


def _norm_weights(x, norm, p, axes):
    """``norm_backward(1, x, p, norm)`` (FunctionsManual.cpp): d norm / d x, ``norm`` kept dims."""
    zero = jnp.zeros((), x.dtype)
    ax = jnp.abs(x)
    sgn = jnp.where(ax == 0, zero, x / jnp.where(ax == 0, jnp.ones_like(ax), ax).astype(x.dtype))
    norm0 = norm == 0
    safe_norm = jnp.where(norm0, jnp.ones_like(norm), norm)
    if p == 0:
        return jnp.zeros_like(x)
    if p == 1:
        return sgn
    if p == 2:
        # a true division by the broadcast norm (Note [True division] in reduce.py)
        return jnp.where(norm0, zero, _true_divide(x, safe_norm.astype(x.dtype)))
    if math.isinf(p):
        mask = (ax == norm) | jnp.isnan(ax)
        count = jnp.sum(mask, axis=axes, keepdims=True).astype(ax.dtype)
        return sgn * (mask / count).astype(x.dtype)
    safe_ax = jnp.where(ax == 0, jnp.ones_like(ax), ax)
    if p < 1:
        scaled = sgn * jnp.where(ax == 0, jnp.zeros_like(ax), safe_ax ** (p - 1)).astype(x.dtype)
        return scaled * (norm ** (1 - p)).astype(x.dtype)
    scale = jnp.where(norm0, jnp.zeros_like(norm), 1 / safe_norm ** (p - 1)).astype(x.dtype)
    if p < 2:
        return sgn * (ax ** (p - 1)).astype(x.dtype) * scale
    return x * (ax ** (p - 2)).astype(x.dtype) * scale


@functools.partial(jax.custom_jvp, nondiff_argnums=(1, 2, 3))
def _norm(x, p, axes, keepdim):
    """The ``p``-norm of ``x`` over ``axes``, differentiated as PyTorch's ``norm_backward``."""
    return _vector_norm_of(x, p, axes, keepdim)


@_norm.defjvp
def _norm_jvp(p, axes, keepdim, primals, tangents):
    (x,), (t,) = primals, tangents
    norm = _vector_norm_of(x, p, axes, True)
    w = _norm_weights(x, norm, p, axes)
    out_t = jnp.sum(jnp.real(jnp.conj(w) * t), axis=axes, keepdims=True)
    if not keepdim:
        norm, out_t = jnp.squeeze(norm, axes), jnp.squeeze(out_t, axes)
    return norm, out_t.astype(norm.dtype)


def _amax(x, dim, keepdim=False):
    return jnp.max(x, axis=dim, keepdims=keepdim)


def _amin(x, dim, keepdim=False):
    return jnp.min(x, axis=dim, keepdims=keepdim)


def _copy_eye(x, src=None):
    # ``clone(A).copy_(eye)``: the eye overwrites every value, so no gradient reaches A.
    eye = jnp.eye(x.shape[-1], dtype=x.dtype)
    return jnp.broadcast_to(eye, x.shape) + lax.stop_gradient(x) * 0


def _saves_cross(a, b):
    return {a: (b,), b: (a,)}


register_ops(
    OpDef(
        "bmm",
        _mm,
        "BmmBackward0",
        ("self", "mat2"),
        _same_dtype_rule(BMM_DTYPE, bool_name="bmm", bool_first=True),
        saves=_saves_cross("self", "mat2"),
    ),
    OpDef(
        "vdot",
        _vdot,
        "VdotBackward0",
        ("self", "other"),
        _same_dtype_rule(E.DOT_DTYPE, bool_name="dot"),
        saves=_saves_cross("self", "other"),
    ),
    OpDef(
        "addmm",
        _addmm,
        "AddmmBackward0",
        ("self", "mat1", "mat2"),
        _addmm_rule("addmm_impl_cpu_"),
        saves={"mat1": ("mat2",), "mat2": ("mat1",)},
    ),
    OpDef(
        "addmv",
        _addmm,
        "AddmvBackward0",
        ("self", "mat", "vec"),
        _addmv_rule,
        saves={"mat": ("vec",), "vec": ("mat",)},
    ),
    OpDef(
        "baddbmm",
        _addmm,
        "BaddbmmBackward0",
        ("self", "batch1", "batch2"),
        _baddbmm_rule("baddbmm"),
        saves={"batch1": ("batch2",), "batch2": ("batch1",)},
    ),
    OpDef(
        "addbmm",
        _addbmm,
        "AddbmmBackward0",
        ("self", "batch1", "batch2"),
        _baddbmm_rule("addbmm"),
        saves={"batch1": ("batch2",), "batch2": ("batch1",)},
    ),
    OpDef("trace", lambda x: jnp.trace(x), "TraceBackward0", ("self",), _trace_rule),
    OpDef(
        "linalg_cross",
        _cross,
        "LinalgCrossBackward0",
        ("self", "other"),
        _cross_rule,
        saves=_saves_cross("self", "other"),
    ),
    OpDef(
        "linalg_inv_ex",
        jnp.linalg.inv,
        "LinalgInvExBackward0",
        ("A",),
        same,
        saves={"A": ("result",)},
    ),
    OpDef(
        "linalg_det",
        jnp.linalg.det,
        "LinalgDetBackward0",
        ("A",),
        same,
        saves={"A": ("A", "result")},
    ),
    OpDef(
        "linalg_slogdet",
        _slogdet,
        "LinalgSlogdetBackward0",
        ("A",),
        _slogdet_rule,
        saves={"A": ("A", "result")},
        n_out=2,
    ),
    OpDef(
        "linalg_solve_ex",
        _solve,
        "LinalgSolveExBackward0",
        ("A", "B"),
        _solve_rule,
        saves={"A": ("A", "result"), "B": ("A", "result")},
    ),
    OpDef(
        "linalg_solve_triangular",
        _solve_triangular,
        "LinalgSolveTriangularBackward0",
        ("self", "B"),
        promote,
        saves={"self": ("self", "result"), "B": ("self",)},
    ),
    OpDef(
        "linalg_cholesky_ex",
        _cholesky,
        "LinalgCholeskyExBackward0",
        ("self",),
        same,
        saves={"self": ("result",)},
    ),
    OpDef(
        "linalg_qr", _qr, "LinalgQrBackward0", ("A",), _pair_rule, saves={"A": ("result",)}, n_out=2
    ),
    OpDef(
        "linalg_eigh", _eigh_op, "LinalgEighBackward0", ("A",), _eigh_rule, saves={"A": ("result",)}
    ),
    OpDef("linalg_svd", _svd, "LinalgSvdBackward0", ("A",), _svd_rule, saves={"A": ("result",)}),
    OpDef(
        "linalg_eig",
        _eig_op,
        "LinalgEigBackward0",
        ("self",),
        _eig_rule,
        saves={"self": ("result",)},
    ),
    OpDef(
        "linalg_pinv",
        _pinv,
        "LinalgPinvBackward0",
        ("self",),
        same,
        saves={"self": ("self", "result")},
    ),
    OpDef(
        "linalg_vector_norm",
        _vector_norm,
        "LinalgVectorNormBackward0",
        ("self",),
        _norm_rule,
        saves={"self": ("self", "result")},
    ),
    OpDef(
        "linalg_amax", _amax, "AmaxBackward0", ("self",), same, saves={"self": ("self", "result")}
    ),
    OpDef(
        "linalg_amin", _amin, "AminBackward0", ("self",), same, saves={"self": ("self", "result")}
    ),
    OpDef("linalg_copy_eye", _copy_eye, "CopyBackwards", ("self", "src"), same),
    OpDef(
        "linalg_matrix_rank",
        _matrix_rank,
        "",
        ("input", "atol", "rtol"),
        _rank_rule,
        differentiable=(),
    ),
)


# --- Note [Tracked strides] ----------------------------------------------------------------------
# PyTorch's composites reshape intermediate tensors whose strides come from expand (stride 0)
# or transpose/permute; whether ``reshape`` is a view, a ``_reshape_alias`` or a copy depends on
# them. ``_S`` pairs a Tensor with the strides PyTorch would give it.


def _is_contiguous(shape, strides) -> bool:
    if math.prod(shape) == 0:
        return True
    expected = 1
    for size, stride in zip(reversed(shape), reversed(strides)):
        if size == 1:
            continue
        if stride != expected:
            return False
        expected *= size
    return True


class _S:
    """A tensor with the strides PyTorch would give it."""

    __slots__ = ("t", "strides")

    def __init__(self, t: Tensor, strides=None) -> None:
        self.t = t
        if strides is None:
            self.strides = tuple(t.stride())
        else:  # the tensor carries them too (backward formulas read them)
            self.strides = tuple(strides)
            _shape_ops._set_strides(t, strides)

    @property
    def shape(self):
        return tuple(self.t._data.shape)

    def contiguous(self) -> bool:
        return _is_contiguous(self.shape, self.strides)


def _reshape(x: _S, shape) -> _S:
    """``Tensor.reshape`` as PyTorch records it (view, _reshape_alias, or clone + _unsafe_view)."""
    shape = tuple(shape)
    if x.contiguous():
        return _S(dispatch(OPS["view"], x.t, shape=shape))
    strides = _shape_ops._compute_stride(x.shape, x.strides, shape)
    if strides is not None:
        return _S(dispatch(OPS["reshape_alias"], x.t, shape=shape), strides)
    copy = dispatch(OPS["clone"], x.t)
    return _S(dispatch(OPS["unsafe_view"], copy, shape=shape))


def _expand(x: _S, shape) -> _S:
    shape = tuple(shape)
    strides = _shape_ops._expand_strides(x.shape, x.strides, shape)
    return _S(dispatch(OPS["expand"], x.t, shape=shape), strides)


def _transpose(x: _S, d0: int, d1: int) -> _S:
    """``transpose(d0, d1)``: PyTorch's ``mT`` keeps -2, -1 as written (Note [Dims as written])."""
    n = x.t.ndim
    written = (d0, d1)
    d0, d1 = d0 % n, d1 % n
    st = list(x.strides)
    st[d0], st[d1] = st[d1], st[d0]
    out = _S(dispatch(OPS["transpose"], x.t, dim0=d0, dim1=d1), st)
    written_dims.note(out.t, n, dim0=written[0], dim1=written[1])
    return out


def _t(x: _S) -> _S:
    st = tuple(reversed(x.strides)) if x.t.ndim == 2 else x.strides
    return _S(dispatch(OPS["t"], x.t), st)


def _permute(x: _S, dims) -> _S:
    dims = tuple(dims)
    return _S(dispatch(OPS["permute"], x.t, dims=dims), [x.strides[d] for d in dims])


def _make_contiguous(x: _S) -> _S:
    if x.contiguous():
        return x
    return _S(dispatch(OPS["clone"], x.t))


def _unsafe_view(t: Tensor, shape, reshape: bool = False) -> Tensor:
    """PyTorch's ``_unsafe_view``: a view's strides (``computeStride``) on a new tensor, and the
    view's error where there are none; ``reshape``: its ``reshape`` instead (a contiguous copy
    there)."""
    strides = None
    if "_strides" in t.__dict__:
        strides = _shape_ops._compute_stride(
            tuple(t._data.shape), tuple(t.__dict__["_strides"]), tuple(shape)
        )
        if strides is None and not reshape:
            raise RuntimeError(_shape_ops.VIEW_STRIDE)
    out = dispatch(OPS["unsafe_view"], t, shape=tuple(shape))
    return out if strides is None else _shape_ops._set_strides(out, strides)


# --- products ------------------------------------------------------------------------------------


def _saved_first(name: str, *operands) -> None:
    saved_first(OPS[name], *operands)


def _vmap_product_error(kind: str, a: Tensor, b: Tensor) -> None:
    """Inside vmap: raise the error PyTorch's batch rule of ``kind`` meets (Note in
    ``func.product_error``)."""
    if isinstance(a._data, jax.core.Tracer) or isinstance(b._data, jax.core.Tracer):
        from ..func import product_error

        error = product_error(kind, a, b)
        if error is not None:
            raise error


@_autocast.policy("lower_precision_fp")
def mm(input, mat2):
    """``torch.mm``: 2-D @ 2-D (MmBackward0)."""
    _saved_first("mm", input, mat2)
    if input.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if mat2.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    if input.shape[1] != mat2.shape[0]:
        _vmap_product_error("mm", input, mat2)
        raise RuntimeError(E.MM_SHAPES.format(*input.shape, *mat2.shape))
    if input.dtype is D.bool_ and mat2.dtype is D.bool_:
        raise NotImplementedError(NOT_IMPLEMENTED_FOR.format("addmm_impl_cpu_", "Bool"))
    out = dispatch(OPS["mm"], input, mat2)
    saved_mod.keep_strides(out, (input, mat2))
    return out


@tensor_op("mv")
def mv(input, vec):
    """``torch.mv``: 2-D @ 1-D (MvBackward0)."""
    _saved_first("mv", input, vec)
    if input.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {input.ndim}, {vec.ndim}")
    if input.shape[1] != vec.shape[0]:
        _vmap_product_error("mv", input, vec)
        raise RuntimeError(
            E.MV_SHAPES.format(input.shape[0], input.shape[0], input.shape[1], vec.shape[0])
        )
    if input.dtype is D.bool_ and vec.dtype is D.bool_:
        raise NotImplementedError(NOT_IMPLEMENTED_FOR.format("addmv_impl_cpu", "Bool"))
    return dispatch(OPS["mv"], input, vec)


def _check_1d_pair(a, b):
    """PyTorch's ``dot_check``: ranks, then dtypes, then sizes."""
    if a.ndim != 1 or b.ndim != 1:
        raise RuntimeError(DOT_1D.format(a.ndim, b.ndim))
    if a.dtype is not b.dtype:
        raise RuntimeError(E.DOT_DTYPE.format(_name(a.dtype), _name(b.dtype)))
    if a.shape[0] != b.shape[0]:
        raise RuntimeError(E.DOT_SHAPES.format(a.shape[0], b.shape[0], a.shape[0], b.shape[0]))


def dot(input, tensor):
    """``torch.dot``: 1-D . 1-D (DotBackward0)."""
    _saved_first("dot", input, tensor)
    if input.ndim == tensor.ndim == 1 and input.shape != tensor.shape:
        _vmap_product_error("dot", input, tensor)
    _check_1d_pair(input, tensor)
    if input.dtype is D.bool_:
        raise NotImplementedError(NOT_IMPLEMENTED_FOR.format("dot", "Bool"))
    return dispatch(OPS["dot"], input, tensor)


@tensor_op("vdot")
def vdot(input, other):
    """``torch.vdot``: conj(input) . other for 1-D tensors (VdotBackward0)."""
    _saved_first("vdot", input, other)
    _check_1d_pair(input, other)
    return dispatch(OPS["vdot"], input, other)


@tensor_op("bmm")
@_autocast.policy("lower_precision_fp")
def bmm(input, mat2):
    """``torch.bmm``: batched 3-D @ 3-D (BmmBackward0)."""
    _saved_first("bmm", input, mat2)
    if input.ndim != 3:
        raise RuntimeError(BATCH_3D.format("batch1"))
    if mat2.ndim != 3:
        raise RuntimeError(BATCH_3D.format("batch2"))
    b, n, m = input.shape
    if mat2.shape[0] != b or mat2.shape[1] != m:
        _vmap_product_error("bmm", input, mat2)
        raise RuntimeError(E.BMM_SHAPES.format(b, m, mat2.shape[0], mat2.shape[1]))
    return dispatch(OPS["bmm"], input, mat2)


def _should_fold(t1: Tensor, t2: Tensor) -> bool:
    """PyTorch's ``should_fold`` (LinearAlgebra.cpp): the larger operand's batch dims must
    fold into one without a copy, read from its strides (a view may not fold)."""
    larger = t1.ndim >= t2.ndim
    big = t1 if larger else t2
    dim_big, dim_small = big.ndim, (t2.ndim if larger else t1.ndim)
    if not (dim_big >= 3 and dim_small <= 2):
        return False
    if (t2 if larger else t1)._requires_grad:
        return True
    if t1.ndim == 2:
        return False
    if big.numel() == 0:
        return True
    shape = tuple(big.shape)
    strides = list(_shape_ops._strides(big))
    if not larger:  # t2.mT
        strides[-1], strides[-2] = strides[-2], strides[-1]
        shape = (*shape[:-2], shape[-1], shape[-2])
    return all(strides[i] == strides[i + 1] * shape[i + 1] for i in range(dim_big - 2))


def _matmul(tensor1: Tensor, tensor2: Tensor) -> Tensor:
    d1, d2 = tensor1.ndim, tensor2.ndim
    if d1 == 0 or d2 == 0:
        raise RuntimeError(E.MATMUL_0D.format(d1, d2))
    if d1 == 1 and d2 == 1:
        return dot(tensor1, tensor2)
    if d1 == 2 and d2 == 1:
        return mv(tensor1, tensor2)
    if d1 == 1 and d2 == 2:
        # PyTorch: unsqueeze, mm, then an in-place squeeze_ (SqueezeBackward4): the result is
        # no view, and its version is 1.
        return mm(tensor1.unsqueeze(0), tensor2).squeeze_(0)
    if d1 == 2 and d2 == 2:
        return mm(tensor1, tensor2)
    if _should_fold(tensor1, tensor2):
        transpose = d2 > d1
        t1 = _transpose(_S(tensor2), -2, -1) if transpose else _S(tensor1)
        if not transpose:
            t2 = tensor2
        elif d1 == 2:
            t2 = _t(_S(tensor1)).t
        else:
            t2 = tensor1
        sizes1 = t1.shape
        output_shape = list(sizes1[:-1])
        folded = math.prod(output_shape)
        if t2.ndim == 2:
            output_shape.append(t2.shape[1])
        t1_folded = _reshape(t1, (folded, sizes1[-1])).t
        if t2.ndim == 2:
            out = _S(_unsafe_view(mm(t1_folded, t2), output_shape))
            if transpose:
                return _make_contiguous(_transpose(out, -2, -1)).t
            return out.t
        return _unsafe_view(mv(t1_folded, t2), output_shape)
    s1, s2 = tensor1.shape, tensor2.shape
    n = s1[-2] if d1 > 1 else 1
    m1 = s1[-1]
    batch1 = tuple(s1[: max(d1 - 2, 0)])
    m2 = s2[-2] if d2 > 1 else s2[0]
    p = s2[-1] if d2 > 1 else 1
    batch2 = tuple(s2[: max(d2 - 2, 0)])
    if d1 == 3 and d2 == 3 and batch1[0] != batch2[0]:
        # the frontend's squeeze: a view that keeps the operand's strides (a transposed one
        # then folds into a row- or column-major mm operand as in PyTorch)
        if batch1[0] == 1 and tensor1._requires_grad:
            return _matmul(tensor1.squeeze(0), tensor2)
        if batch2[0] == 1 and tensor2._requires_grad:
            return _matmul(tensor1, tensor2.squeeze(0))
    output_shape = list(broadcast_shapes(batch1, batch2))
    bprod = math.prod(output_shape)
    e1 = _reshape(_expand(_S(tensor1), (*output_shape, n, m1)), (bprod, n, m1)).t
    vector_rhs = d2 == 1
    if vector_rhs:
        e2 = _reshape(_expand(_S(tensor2), (*output_shape, m2)), (bprod, m2)).t.unsqueeze(2)
    else:
        e2 = _reshape(_expand(_S(tensor2), (*output_shape, m2, p)), (bprod, m2, p)).t
    if d1 > 1:
        output_shape.append(n)
    if d2 > 1:
        output_shape.append(p)
    out = bmm(e1, e2)  # PyTorch's bmm checks the sizes before the dtypes
    if vector_rhs:
        out = dispatch(OPS["squeeze_dim"], out, dim=2)
    return _unsafe_view(out, output_shape)


@_autocast.policy("lower_precision_fp")
def matmul(input, other):
    """``torch.matmul`` in every rank combination, with PyTorch's nodes (fold, expand + bmm)."""
    return _matmul(input, other)


# the products refuse operands that are not tensors with PyTorch's parser messages
_checked("mm", "tensors", mm, other="mat2")
_checked("dot", "tensors", dot, other="tensor")
_checked("matmul", "tensors", matmul)


@tensor_op("__matmul__", function=False)
@stale_views_first("matmul")
@_autocast.policy("lower_precision_fp")
def _dunder_matmul(self, other):
    if not isinstance(other, Tensor):
        return NotImplemented
    return _matmul(self, other)


@tensor_op("__rmatmul__", function=False)
@stale_views_first("matmul")
@_autocast.policy("lower_precision_fp")
def _dunder_rmatmul(self, other):
    if not isinstance(other, Tensor):
        return NotImplemented
    return _matmul(other, self)


def outer(input, vec2):
    """``torch.outer``: ``input.reshape(n, 1) * vec2`` (MulBackward0 over ViewBackward0)."""
    if input.ndim != 1:
        raise RuntimeError(OUTER_1D.format("self", input.ndim))
    if vec2.ndim != 1:
        raise RuntimeError(OUTER_1D.format("vec2", vec2.ndim))
    return dispatch(OPS["mul"], _reshape(_S(input), (input.shape[0], 1)).t, vec2)


def _expand_to(x: Tensor, shape, name: str):
    """PyTorch's ``expand_size`` check for addmm-like ``input`` operands."""
    shape = tuple(shape)
    xs = tuple(x.shape)
    lead = len(shape) - len(xs)
    if lead < 0:
        raise RuntimeError(
            f"The number of sizes provided ({len(shape)}) must be greater or equal to the "
            f"number of dimensions in the tensor ({len(xs)})"
        )
    for i, size in reversed(list(enumerate(xs))):  # expand checks the last dim first
        target = shape[lead + i]
        if size != 1 and size != target:
            raise RuntimeError(
                EXPAND_SIZE.format(target, size, lead + i, _sizes(shape), _sizes(xs))
            )


def _scalar_value(t: Tensor):
    if isinstance(t._data, jax.core.Tracer):
        raise TypeError("leafgrad: beta and alpha must be Python numbers in a traced function")
    return t.item()


def _scaled(name: str, input, a, b, beta, alpha) -> Tensor:
    """Dispatches ``beta * input + alpha * product(a, b)`` with ``beta`` and ``alpha`` as the
    kernel reads them, after the dtype rule's checks: converted to the (opmath) result type, so
    an integer kernel truncates ``beta=0.5`` to 0 (and raises PyTorch's overflow error)."""
    if isinstance(beta, Tensor):  # a 0-d tensor the parser took: PyTorch reads its value
        beta = _scalar_value(beta)
    if isinstance(alpha, Tensor):
        alpha = _scalar_value(alpha)
    if type(beta) is int and type(alpha) is int and beta == alpha == 1:
        return dispatch(OPS[name], input, a, b)  # 1 fits every type the dtype rule accepts
    try:
        _, dt = OPS[name].dtypes([(o._dtype, o.ndim) for o in (input, a, b)], {})
    except RuntimeError:
        return dispatch(OPS[name], input, a, b)  # raises PyTorch's error, in PyTorch's order
    beta, alpha = kernel_scalar(beta, dt, opmath=True), kernel_scalar(alpha, dt, opmath=True)
    static = {"beta": beta, "alpha": alpha} if (beta, alpha) != (1, 1) else {}
    return dispatch(OPS[name], input, a, b, **static)


@tensor_op("addmm")
@_autocast.policy("lower_precision_fp")
def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    """``torch.addmm``: ``beta * input + alpha * (mat1 @ mat2)`` (AddmmBackward0)."""
    _saved_first("addmm", input, mat1, mat2)
    if mat1.ndim != 2:
        raise RuntimeError(MAT_2D.format("mat1", mat1.ndim))
    if mat2.ndim != 2:
        raise RuntimeError(MAT_2D.format("mat2", mat2.ndim))
    if mat1.shape[1] != mat2.shape[0]:
        raise RuntimeError(
            E.MM_SHAPES.format(mat1.shape[0], mat1.shape[1], mat2.shape[0], mat2.shape[1])
        )
    _expand_to(input, (mat1.shape[0], mat2.shape[1]), "addmm")
    out = _scaled("addmm", input, mat1, mat2, beta, alpha)
    saved_mod.keep_strides(out, (input, mat1, mat2))
    return out


@tensor_op("addmv")
def addmv(input, mat, vec, *, beta=1, alpha=1):
    """``torch.addmv``: ``beta * input + alpha * (mat @ vec)`` (AddmvBackward0)."""
    _saved_first("addmv", input, mat, vec)
    if mat.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(
            f"vector + matrix @ vector expected, got {input.ndim}, {mat.ndim}, {vec.ndim}"
        )
    if mat.shape[1] != vec.shape[0] or (input.numel() != 1 and input.shape[-1:] != mat.shape[:1]):
        raise RuntimeError(
            f"size mismatch, got input ({_sizes(input.shape) or ''}), mat "
            f"({mat.shape[0]}x{mat.shape[1]}), vec ({vec.shape[0]})"
        )
    return _scaled("addmv", input, mat, vec, beta, alpha)


def _check_batches(b1, b2):
    if b1.ndim != 3:
        raise RuntimeError(BATCH_3D.format("batch1"))
    if b2.ndim != 3:
        raise RuntimeError(BATCH_3D.format("batch2"))


@tensor_op("baddbmm")
@_autocast.policy("lower_precision_fp")
def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """``torch.baddbmm``: ``beta * input + alpha * bmm(batch1, batch2)`` (BaddbmmBackward0)."""
    _saved_first("baddbmm", input, batch1, batch2)
    _check_batches(batch1, batch2)
    b, n, m = batch1.shape
    _expand_to(input, (b, n, batch2.shape[2]), "baddbmm")
    if batch2.shape[0] != b or batch2.shape[1] != m:
        raise RuntimeError(E.BMM_SHAPES.format(b, m, batch2.shape[0], batch2.shape[1]))
    return _scaled("baddbmm", input, batch1, batch2, beta, alpha)


@tensor_op("addbmm")
@_autocast.policy("lower_precision_fp")
def addbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """``torch.addbmm``: ``beta * input + alpha * sum_b batch1[b] @ batch2[b]``."""
    _saved_first("addbmm", input, batch1, batch2)
    _check_batches(batch1, batch2)
    if batch1.shape[0] != batch2.shape[0]:
        raise RuntimeError(
            f"batch1 and batch2 must have same number of batches, got {batch1.shape[0]} and "
            f"{batch2.shape[0]}"
        )
    if batch1.shape[2] != batch2.shape[1]:
        raise RuntimeError(
            BMM_SIZES.format(batch1.shape[1], batch1.shape[2], batch2.shape[1], batch2.shape[2])
        )
    _expand_to(input, (batch1.shape[1], batch2.shape[2]), "addbmm")
    return _scaled("addbmm", input, batch1, batch2, beta, alpha)


@tensor_op("trace")
@_autocast.policy("fp32")
def trace(input):
    """``torch.trace`` of a matrix (TraceBackward0); integer traces are int64."""
    if input.ndim != 2:
        raise RuntimeError(TRACE_2D.format(input.ndim))
    return dispatch(OPS["trace"], input)


def linalg_cross(input, other, *, dim=-1):
    """``torch.linalg.cross`` with broadcasting (LinalgCrossBackward0)."""
    if input.ndim != other.ndim:
        raise RuntimeError(CROSS_DIMS)
    shape = broadcast_shapes(tuple(input.shape), tuple(other.shape))
    d = _wrap_dim(dim, len(shape))
    if input.shape[d] != 3 or other.shape[d] != 3:
        raise RuntimeError(CROSS_LEN.format(dim, input.shape[d], other.shape[d]))
    return dispatch(OPS["linalg_cross"], input, other, dim=d)


def cross(input, other, dim=None):
    """``torch.cross``: without ``dim``, the first dimension of size 3 (deprecated, warns)."""
    if dim is None:
        E.warn_once(CROSS_WARN)
        shape = broadcast_shapes(tuple(input.shape), tuple(other.shape))
        dim = next((i for i, s in enumerate(shape) if s == 3), None)
        if dim is None:
            raise RuntimeError(CROSS_NO_DIM3)
    return linalg_cross(input, other, dim=dim)


def kron(input, other):
    """``torch.kron``: _unsafe_view of the product of two _unsafe_views."""
    # PyTorch's _unsafe_view of an inference tensor is one too, and the product saves it
    _saved_first("mul", input, other)
    n = max(input.ndim, other.ndim)
    pa, pb = n - input.ndim, n - other.ndim
    a_shape, b_shape, out_shape = [], [], []
    for i in range(n):
        sa = input.shape[i - pa] if i >= pa else 1
        sb = other.shape[i - pb] if i >= pb else 1
        a_shape += [sa, 1]
        b_shape += [1, sb]
        out_shape.append(sa * sb)
    a, b = _unsafe_view(input, a_shape, True), _unsafe_view(other, b_shape, True)
    prod = dispatch(OPS["mul"], a, b)
    return _unsafe_view(prod, out_shape)


@tensor_op("tensordot", method=False)
def tensordot(a, b, dims=2, out=None):
    """``torch.tensordot``: permute, reshape, mm, reshape (PyTorch's node order); ``dims`` read
    as PyTorch's Python function reads it, then its builtin's parser checks."""
    if not isinstance(dims, (tuple, list, Tensor, int)):
        raise RuntimeError(TENSORDOT_DIMS.format(dims))
    dims_a, dims_b = [], []
    if isinstance(dims, (tuple, list)):
        dims_a, dims_b = dims
    if isinstance(dims, Tensor):
        if dims.numel() > 1:
            assert dims.size()[0] == 2
            dims_a, dims_b = dims[0].tolist(), dims[1].tolist()
        else:
            value = int(dims.item())
            if value < 0:
                raise RuntimeError(f"tensordot expects dims >= 0, but got dims={value}")
            dims_a, dims_b = list(range(-value, 0)), list(range(value))
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > min(a.dim(), b.dim()):
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        dims_a, dims_b = list(range(-dims, 0)), list(range(dims))
    from .._arg_check import _list_error, _tensor_error  # the parser's of ``_VF.tensordot``

    for message in (
        _tensor_error("tensordot", "input", " (position 1)", a),
        _tensor_error("tensordot", "other", " (position 2)", b),
        _list_error("tensordot", "dims_self", " (position 3)", dims_a),
        _list_error("tensordot", "dims_other", " (position 4)", dims_b),
    ):
        if message is not None:
            raise TypeError(message)
    return _tensordot(a, b, [int(d) for d in dims_a], [int(d) for d in dims_b])


def _tensordot(input1, input2, dims1, dims2):
    if len(dims1) != len(dims2):
        raise RuntimeError(TENSORDOT_LEN)
    if input1.dtype is not input2.dtype:
        raise RuntimeError(TENSORDOT_DTYPE)
    dims1 = [_wrap_dim(d, input1.ndim) for d in dims1]
    dims2 = [_wrap_dim(d, input2.ndim) for d in dims2]
    t1, t2 = input1, input2
    csize = 1
    for d1, d2 in zip(dims1, dims2):
        s1, s2 = input1.shape[d1], input2.shape[d2]
        if s2 == 1:  # broadcast dimensions are summed right away
            t1 = t1.sum(d1, True, dtype=t1.dtype)
        elif s1 == 1:
            t2 = t2.sum(d2, True, dtype=t2.dtype)
        else:
            if s1 != s2:
                raise RuntimeError(TENSORDOT_SIZE.format(s1, d1, s2, d2))
            csize *= s1
    p1 = [i for i in range(input1.ndim) if i not in dims1]
    p2 = list(dims2)
    rsizes = [t1.shape[i] for i in p1]
    size1 = math.prod(rsizes)
    p1 += dims1
    rest2 = [i for i in range(input2.ndim) if i not in dims2]
    p2 += rest2
    rsizes += [t2.shape[i] for i in rest2]
    size2 = math.prod(t2.shape[i] for i in rest2)
    if size1 == 1 and size2 == 1:  # PyTorch contracts everything with ``dot``
        a, b = _permute(_S(t1), p1), _permute(_S(t2), p2)
        v1 = a.t if a.t.ndim == 1 else _reshape(a, (csize,)).t
        v2 = b.t if b.t.ndim == 1 else _reshape(b, (csize,)).t
        return dispatch(OPS["view"], dot(v1, v2), shape=tuple(rsizes))
    # each operand permuted and reshaped in turn
    m1 = _reshape(_permute(_S(t1), p1), (size1, csize)).t
    m2 = _reshape(_permute(_S(t2), p2), (csize, size2)).t
    return _reshape(_S(mm(m1, m2)), rsizes).t


def inner(input, other):
    """``torch.inner``: a product for 0-d operands, else tensordot over the last dims."""
    if input.ndim == 0 or other.ndim == 0:
        return dispatch(OPS["mul"], input, other)
    if input.shape[-1] != other.shape[-1]:
        raise RuntimeError(
            f"inner() the last dimension must match on both input tensors but got shapes "
            f"[{_sizes(input.shape)}] and [{_sizes(other.shape)}]"
        )
    return _tensordot(input, other, [-1], [-1])


_checked("outer", "tensors", outer, other="vec2")
_checked("ger", "tensors", outer, other="vec2")
_checked("kron", "tensors", kron)
_checked("cross", "tensors", cross)
_checked("inner", "tensors", inner)


# --- einsum --------------------------------------------------------------------------------------
# Note [einsum]: ``torch.einsum`` is Python (torch/functional.py: sublists, operand lists and the
# opt_einsum contraction path for 3+ operands) over ATen's ``einsum`` (Linear.cpp), which aligns
# every operand to one dimension order (diagonal + movedim for repeated labels, unsqueeze for
# missing ones, permute), then contracts pairs with ``sumproduct_pair``: a ``mul`` when nothing
# is summed, else permute, reshape, ``bmm``, view and permute. Both are reproduced step by step
# over the frontends of shape.py, which record PyTorch's strides so that every ``reshape`` is the
# view or the copy PyTorch makes (Note [Strides]); ``mul`` gets TensorIterator's output strides
# (Note [Iterator layouts]).

_LETTERS = 26
_ELLIPSIS = 2 * _LETTERS  # the code of "..." among the 52 subscripts


def _subscript(label: int) -> int:
    """A label byte in [A-Za-z] as a subscript in [0, 52): upper case first."""
    return label - 65 if label < 97 else label - 97 + _LETTERS


def _label(sub: int) -> str:
    return chr(sub + 65) if sub < _LETTERS else chr(sub - _LETTERS + 97)


def _is_alpha(byte: int) -> bool:
    return 65 <= byte <= 90 or 97 <= byte <= 122


def _einsum_mul(a: Tensor, b: Tensor) -> Tensor:
    # laid out as TensorIterator lays a product out (Note [Iterator layouts])
    return dispatch(OPS["mul"], a, b)


def _sumproduct_pair(left: Tensor, right: Tensor, sum_dims) -> Tensor:
    """ATen's ``sumproduct_pair`` with ``keepdim=True``: ``(left * right).sum(sum_dims)``."""
    if not sum_dims:
        return _einsum_mul(left, right)
    dim = left.ndim
    summed = set(sum_dims)
    lro, lo, ro = [], [], []
    lro_size = lo_size = ro_size = sum_size = 1
    for i in range(dim):
        sl, sr = left.shape[i] != 1, right.shape[i] != 1
        if i in summed:
            if sl and sr:
                sum_size *= left.shape[i]
            elif sl:
                left = left.sum(i, True)
            elif sr:
                right = right.sum(i, True)
        elif sl and sr:
            lro.append(i)
            lro_size *= left.shape[i]
        elif sl:
            lo.append(i)
            lo_size *= left.shape[i]
        else:
            ro.append(i)
            ro_size *= right.shape[i]
    if lo and ro and lo[0] > ro[-1]:
        # PyTorch 2.13 swaps the operands when every right-only output dim comes before every
        # left-only one (measured: the bmm's self is then the right operand).
        left, right, lo, ro, lo_size, ro_size = right, left, ro, lo, ro_size, lo_size
    out_size = (
        [left.shape[d] for d in lro]
        + [left.shape[d] for d in lo]
        + [1] * len(sum_dims)
        + [right.shape[d] for d in ro]
    )
    lperm = lro + lo + list(sum_dims) + ro
    rperm = lro + list(sum_dims) + ro + lo
    operm = [-1] * len(out_size)
    for i, d in enumerate(lro + lo + list(sum_dims) + ro):
        operm[d] = i
    left = _shape_ops.reshape(
        _shape_ops._permute(left, tuple(lperm)), (lro_size, lo_size, sum_size)
    )
    right = _shape_ops.reshape(
        _shape_ops._permute(right, tuple(rperm)), (lro_size, sum_size, ro_size)
    )
    result = bmm(left, right)
    return _shape_ops._permute(_shape_ops.view(result, tuple(out_size)), tuple(operm))


def _parse_ellipsis(text: bytes, i: int) -> bool:
    return i + 2 < len(text) and text[i + 1] == 46 and text[i + 2] == 46


def _einsum(equation: str, operands, path=None) -> Tensor:
    """ATen's ``einsum(equation, tensors, path)`` (Note [einsum])."""
    if not operands:
        raise RuntimeError("einsum(): must provide at least one operand")
    num_ops = len(operands)
    if path is not None:
        path_size = 1 if num_ops == 1 else (num_ops - 1) * 2
        if len(path) != path_size:
            raise RuntimeError(
                f"einsum(): expected contraction path given in path parameter to have size "
                f"{path_size} but got {len(path)}"
            )
    eq = equation.encode()  # ATen indexes the equation by bytes
    arrow = eq.find(b"->")
    lhs = eq if arrow < 0 else eq[:arrow]
    op_labels: list[list[int]] = [[] for _ in range(num_ops)]
    ell_in_input = False
    curr = 0
    i = 0
    while i < len(lhs):
        c = lhs[i]
        if c == 32:  # spaces are ignored
            pass
        elif c == 46:
            if ell_in_input:
                raise RuntimeError(
                    f"einsum(): found '.' for operand {curr} for which an ellipsis was already "
                    "found"
                )
            if not _parse_ellipsis(lhs, i):
                raise RuntimeError(
                    f"einsum(): found '.' for operand {curr} that is not part of any ellipsis"
                )
            i += 2
            op_labels[curr].append(_ELLIPSIS)
            ell_in_input = True
        elif c == 44:
            curr += 1
            if curr >= num_ops:
                raise RuntimeError(
                    "einsum(): fewer operands were provided than specified in the equation"
                )
            ell_in_input = False
        else:
            if not _is_alpha(c):
                raise RuntimeError(
                    f"einsum(): invalid subscript given at index {i} in the equation string, "
                    "subscripts must be in [a-zA-Z]"
                )
            op_labels[curr].append(_subscript(c))
        i += 1
    if curr != num_ops - 1:
        raise RuntimeError("einsum(): more operands were provided than specified in the equation")

    label_count = [0] * _ELLIPSIS
    ell_num_dim = 0
    for k, (operand, labels) in enumerate(zip(operands, op_labels)):
        ndims = operand.ndim
        nlabels = len(labels)
        has_ellipsis = False
        for s in labels:
            if s == _ELLIPSIS:
                nlabels -= 1
                has_ellipsis = True
                ell_num_dim = max(ell_num_dim, ndims - nlabels)
            else:
                label_count[s] += 1
        if not (nlabels <= ndims if has_ellipsis else nlabels == ndims):
            verb = "is more than" if has_ellipsis else "does not match"
            tail = "" if has_ellipsis else " and no ellipsis was given"
            raise RuntimeError(
                f"einsum(): the number of subscripts in the equation ({nlabels}) {verb} the "
                f"number of dimensions ({ndims}) for operand {k}{tail}"
            )

    # Every operand is aligned to: output dims, then contraction dims.
    label_perm_index = [-1] * _ELLIPSIS
    perm_index = 0
    ell_index = 0
    ell_in_output = False
    if arrow < 0:  # implicit output: the ellipsis dims, then labels seen once, sorted
        perm_index = ell_num_dim
        ell_in_output = True
        for s in range(_ELLIPSIS):
            if label_count[s] == 1:
                label_perm_index[s] = perm_index
                perm_index += 1
    else:
        rhs = eq[arrow + 2 :]
        i = 0
        while i < len(rhs):
            c = rhs[i]
            if c == 32:
                pass
            elif c == 46:
                if ell_in_output:
                    raise RuntimeError(
                        "einsum(): found '.' for output but an ellipsis (...) was already found"
                    )
                if not _parse_ellipsis(rhs, i):
                    raise RuntimeError(
                        "einsum(): found '.' for output that is not part of any ellipsis (...)"
                    )
                i += 2
                ell_index = perm_index
                perm_index += ell_num_dim
                ell_in_output = True
            else:
                if not _is_alpha(c):
                    raise RuntimeError(
                        f"einsum(): invalid subscript given at index {len(lhs) + 2 + i} in the "
                        "equation string, subscripts must be in [a-zA-Z]"
                    )
                s = _subscript(c)
                if not (label_count[s] > 0 and label_perm_index[s] == -1):
                    why = (
                        "appears more than once in the output"
                        if label_perm_index[s] > -1
                        else "does not appear in the equation for any input operand"
                    )
                    raise RuntimeError(f"einsum(): output subscript {chr(c)} {why}")
                label_perm_index[s] = perm_index
                perm_index += 1
            i += 1
    out_num_dim = perm_index
    if not ell_in_output:
        ell_index = perm_index
        perm_index += ell_num_dim
    for s in range(_ELLIPSIS):
        if label_count[s] > 0 and label_perm_index[s] == -1:
            label_perm_index[s] = perm_index
            perm_index += 1

    label_size = [1] * _ELLIPSIS
    ell_sizes = [1] * ell_num_dim
    dim_counts = [0] * perm_index
    ops = []
    for k, operand in enumerate(operands):
        op = operand
        permutation = [-1] * perm_index
        dim = 0
        for s in op_labels[k]:
            if s == _ELLIPSIS:
                ndim = operand.ndim - (len(op_labels[k]) - 1)
                for j in range(ell_num_dim - ndim, ell_num_dim):
                    size = op.shape[dim]
                    if size != 1:
                        if ell_sizes[j] != 1 and ell_sizes[j] != size:
                            raise RuntimeError(
                                f"einsum(): dimension {dim} covered by ellipsis in operand {k}"
                                f"has size {size} which does not broadcast with previously seen "
                                f"ellipsis with size {ell_sizes[j]} for the respective dimension"
                            )
                        ell_sizes[j] = size
                        dim_counts[ell_index + j] += 1
                    permutation[ell_index + j] = dim
                    dim += 1
            elif permutation[label_perm_index[s]] == -1:
                size = op.shape[dim]
                if size != 1:
                    if label_size[s] != 1 and label_size[s] != size:
                        raise RuntimeError(
                            f"einsum(): subscript {_label(s)} has size {size} for operand {k} "
                            f"which does not broadcast with previously seen size {label_size[s]}"
                        )
                    label_size[s] = size
                    dim_counts[label_perm_index[s]] += 1
                permutation[label_perm_index[s]] = dim
                dim += 1
            else:  # a repeated label: its diagonal
                prev = permutation[label_perm_index[s]]
                if op.shape[dim] != op.shape[prev]:
                    raise RuntimeError(
                        f"einsum(): subscript {_label(s)} is repeated for operand {k} but the "
                        f"sizes don't match, {op.shape[dim]} != {op.shape[prev]}"
                    )
                op = _shape_ops.movedim(_shape_ops.diagonal(op, 0, prev, dim), -1, prev)
        for p, val in enumerate(permutation):
            if val == -1:
                op = _shape_ops.unsqueeze(op, dim)
                permutation[p] = dim
                dim += 1
        ops.append(_shape_ops._permute(op, tuple(permutation)))

    steps = iter(path or ())
    while len(ops) > 1:
        i, j = 0, 1
        if path is not None:
            i, j = next(steps), next(steps)
            if j < i:
                i, j = j, i
            if not (i != j and i >= 0 and j < len(ops)):
                why = (
                    ") cannot contract an operand with itself"
                    if i == j
                    else ") operand index is out of bounds"
                )
                raise RuntimeError(f"einsum(): invalid contraction ({i}, {j}{why}")
        a, b = ops[i], ops[j]
        del ops[j]
        del ops[i]
        sum_dims, a_sum, b_sum = [], [], []
        for d in range(out_num_dim, perm_index):
            if a.shape[d] != 1 and b.shape[d] != 1:
                dim_counts[d] -= 1
                if dim_counts[d] == 1:
                    sum_dims.append(d)
                    dim_counts[d] = 0
            elif dim_counts[d] == 1:
                if a.shape[d] != 1:
                    a_sum.append(d)
                    dim_counts[d] = 0
                elif b.shape[d] != 1:
                    b_sum.append(d)
                    dim_counts[d] = 0
        if a_sum:
            a = a.sum(tuple(a_sum), True)
        if b_sum:
            b = b.sum(tuple(b_sum), True)
        result = _sumproduct_pair(a, b, sum_dims)
        if path is not None:
            ops.append(result)
        else:
            ops.insert(0, result)

    if perm_index - out_num_dim > 0:
        if num_ops > 1:  # contracted dims are all 1 by now: a view drops them
            return _shape_ops.view(ops[0], tuple(ops[0].shape[:out_num_dim]))
        return ops[0].sum(tuple(range(out_num_dim, perm_index)))
    return ops[0]


def _sublist_label(n) -> str:
    if n is Ellipsis:
        return "..."
    if 0 <= n < _LETTERS:
        return chr(65 + n)
    if _LETTERS <= n < 2 * _LETTERS:
        return chr(97 + n - _LETTERS)
    raise ValueError("einsum(): subscript in subscript list is not within the valid range [0, 52)")


@tensor_op("einsum", method=False)
def einsum(*args):
    """``torch.einsum(equation, *operands)`` or the sublist form ``einsum(op0, [0, 1], ...)``.

    The graph is PyTorch's node for node: permutes, diagonals, unsqueezes, sums, ``mul`` or
    ``bmm`` per contracted pair, in opt_einsum's order for three operands or more.
    """
    if len(args) < 2:
        raise ValueError(
            "einsum(): must specify the equation string and at least one operand, "
            "or at least one operand and its subscripts list"
        )
    if isinstance(args[0], Tensor):
        equation = ",".join("".join(_sublist_label(s) for s in sub) for sub in args[1::2])
        if len(args) % 2 == 1:
            equation += "->" + "".join(_sublist_label(s) for s in args[-1])
            operands = args[:-1:2]
        else:
            operands = args[::2]
    else:
        equation, operands = args[0], args[1:]
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        return einsum(equation, *operands[0])  # the old form: the operands as one list
    path = None
    if len(operands) > 2:
        # PyTorch's default backend (torch.backends.opt_einsum, strategy "auto").
        import opt_einsum

        steps = opt_einsum.contract_path(equation, *operands, optimize="auto")[0]
        path = [k for step in steps for k in step]
    if not isinstance(equation, str):
        kind = type(equation).__name__
        raise TypeError(f"einsum(): argument 'equation' (position 1) must be str, not {kind}")
    for k, op in enumerate(operands):
        if not isinstance(op, Tensor):
            raise TypeError(
                f"expected Tensor as element {k} in argument 1, but got {type(op).__name__}"
            )
    return _einsum(equation, list(operands), path)


# --- torch.linalg --------------------------------------------------------------------------------


def _check_square(name: str, A, float_check=True) -> None:
    if A.ndim < 2:
        raise RuntimeError(AT_LEAST_2D.format(name))
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(SQUARE.format(name, A.shape[-2], A.shape[-1]))
    if float_check:
        _check_float(name, A)


def _check_float(name: str, A) -> None:
    if not (A.dtype.is_floating_point or A.dtype.is_complex):
        raise RuntimeError(FLOAT_INPUT.format(name, _name(A.dtype)))


def _check_matrix(name: str, A) -> None:
    if A.ndim < 2:
        raise RuntimeError(AT_LEAST_2D.format(name))
    _check_float(name, A)


def _concrete(x) -> bool:
    return not isinstance(x, jax.core.Tracer)


def _singular_report(A: Tensor):
    """(batch prefix, 1-based index of U's first zero pivot) of LAPACK's getrf, or None.

    Reads values, so it runs only where they are known (not under jit), after a non-finite
    result; inside vmap, on the physical batch, as PyTorch's batch rule does."""
    data = physical_values(A._data)
    if data is None:
        return None
    lu, _, _ = lax.linalg.lu(jnp.asarray(data))
    diag = np.asarray(jnp.diagonal(lu, axis1=-2, axis2=-1))
    zero = diag == 0
    if not zero.any():
        return None
    flat = zero.reshape(-1, zero.shape[-1])
    b = int(np.argmax(flat.any(axis=1)))
    idx = int(np.argmax(flat[b])) + 1
    prefix = f"(Batch element {b}): " if data.ndim > 2 else ""
    return prefix, idx


def _finite(t: Tensor) -> bool:
    """Whether every value is finite (True where they are not known: under jit)."""
    values = physical_values(t._data)
    return values is None or bool(np.isfinite(values).all())


@tensor_op("inverse")
@_autocast.policy("fp32")
def inverse(input):
    """``torch.inverse``: ``torch.linalg.inv``."""
    return inv(input)


@_autocast.policy("fp32")
def inv(A):
    """``torch.linalg.inv`` (LinalgInvExBackward0); a singular input raises LinAlgError."""
    _check_square("linalg.inv", A)
    out = dispatch(OPS["linalg_inv_ex"], A)
    if not _finite(out):
        report = _singular_report(A)
        if report is not None:
            raise LinAlgError(INV_SINGULAR.format(*report))
    return _shape_ops._set_strides(out, _lapack_strides(out.shape))


def _lu_info(data):
    """LAPACK getrf's ``info`` per matrix: the 1-based index of U's first zero pivot, else 0
    (jnp, so that it traces under jit)."""
    return _getrf_info(lax.linalg.lu(data)[0])


def _getrf_info(lu):
    """getrf's ``info`` from a packed factorisation: U's first zero pivot (1-based), else 0."""
    zero = jnp.diagonal(lu, axis1=-2, axis2=-1) == 0
    if not zero.shape[-1]:
        return jnp.zeros(zero.shape[:-1], jnp.int32)
    return jnp.where(zero.any(-1), jnp.argmax(zero, axis=-1) + 1, 0).astype(jnp.int32)


linalg_inv_ex_type = None  # set below, with the other return types


@_autocast.policy("fp32")
def inv_ex(A, *, check_errors=False, out=None):
    """``torch.linalg.inv_ex``: ``(inverse, info)`` (LinalgInvExBackward0), ``info`` LAPACK's
    int32 status per matrix."""
    _check_square("linalg.inv", A)  # PyTorch's checks name linalg.inv
    inverse = dispatch(OPS["linalg_inv_ex"], A)
    if _concrete(inverse._data) and _finite(inverse):
        info = jnp.zeros(A.shape[:-2], jnp.int32)
    else:
        info = _lu_info(A._data)
    values = physical_values(info) if check_errors else None  # inside vmap: the physical batch
    if values is not None:
        for b, k in enumerate(values.reshape(-1)):
            if k > 0:
                prefix = f"(Batch element {b}): " if values.ndim else ""
                msg = INV_SINGULAR.format(prefix, int(k))
                raise LinAlgError(msg.replace("linalg.inv:", "linalg.inv_ex:", 1))
    info = Tensor._make(info, D.int32, A.device, inference=grad_mode.is_inference_mode_enabled())
    kernel_wrote((A,), (info, 1))
    inverse = _shape_ops._set_strides(inverse, _lapack_strides(inverse.shape))
    return linalg_inv_ex_type((inverse, info))


@tensor_op("det")
def det(input):
    """``torch.det``: ``torch.linalg.det``."""
    return linalg_det(input)


def linalg_det(A):
    """``torch.linalg.det`` (LinalgDetBackward0)."""
    _check_square("linalg.det", A)
    return dispatch(OPS["linalg_det"], A)


class _ReturnType(tuple):
    """A ``torch.return_types`` structseq: a tuple with named fields and PyTorch's repr."""

    _fields: tuple[str, ...] = ()
    _type_name = ""

    def __new__(cls, values):
        return tuple.__new__(cls, values)

    def __repr__(self) -> str:
        body = ",\n".join(f"{f}={v!r}" for f, v in zip(self._fields, self))
        return f"torch.return_types.{self._type_name}(\n{body})"

    def __reduce__(self):
        return (type(self), (tuple(self),))


def _return_type(name: str, fields: tuple[str, ...]):
    cls = type(name, (_ReturnType,), {"_fields": fields, "_type_name": name, "__slots__": ()})
    for i, f in enumerate(fields):
        setattr(cls, f, property(lambda self, i=i: tuple.__getitem__(self, i)))
    cls.n_fields = cls.n_sequence_fields = len(fields)
    return cls


linalg_slogdet_type = _return_type("linalg_slogdet", ("sign", "logabsdet"))
slogdet_type = _return_type("slogdet", ("sign", "logabsdet"))
linalg_eigh_type = _return_type("linalg_eigh", ("eigenvalues", "eigenvectors"))
linalg_eig_type = _return_type("linalg_eig", ("eigenvalues", "eigenvectors"))
linalg_qr_type = _return_type("linalg_qr", ("Q", "R"))
linalg_svd_type = _return_type("linalg_svd", ("U", "S", "Vh"))
linalg_inv_ex_type = _return_type("linalg_inv_ex", ("inverse", "info"))


def slogdet(A):
    """``torch.linalg.slogdet``: (sign, logabsdet) (LinalgSlogdetBackward0)."""
    _check_square("linalg.slogdet", A)
    _no_low_precision("linalg.slogdet", A)
    sign, logabsdet = dispatch(OPS["linalg_slogdet"], A)
    node = sign._grad_fn
    if node is not None and not A.dtype.is_complex:
        _undefined_without_logabsdet(node)
    return linalg_slogdet_type((sign, logabsdet))


def _no_low_precision(name: str, A) -> None:
    """linalg's refusal of float16 and bfloat16 (LAPACK has no such kernels)."""
    if A.dtype is D.float16 or A.dtype is D.bfloat16:
        raise RuntimeError(f"{name}: Low precision dtypes not supported. Got {A.dtype._legacy}")


def _undefined_without_logabsdet(node) -> None:
    """PyTorch's ``slogdet_backward`` of a real matrix: the sign's gradient is zero, so with no
    gradient for ``logabsdet`` the gradient of ``A`` is undefined (``.grad`` stays None), not a
    zero tensor."""
    from ..autograd.graph import wrap_backward

    inner = node._backward

    def backward(primals, cts):
        if cts[1] is None:
            return (None,) * len(primals)
        return inner(primals, cts)

    # a create_graph backward runs the op's graph formula, which does the same
    # (``formulas_linalg._slogdet``): the wrapper has nothing to do before it
    wrap_backward(node, backward, lambda primals, grads: None)


@tensor_op("slogdet")
def _torch_slogdet(input):
    """``torch.slogdet``: the same values as ``torch.linalg.slogdet``."""
    return slogdet_type(tuple(slogdet(input)))


@_autocast.policy("fp32")
def solve(A, B, *, left=True, out=None):
    """``torch.linalg.solve`` (LinalgSolveExBackward0); a singular A raises LinAlgError."""
    out = _solve_unchecked(A, B, left)
    if not _finite(out):
        report = _singular_report(A)
        if report is not None:
            raise LinAlgError(SOLVE_SINGULAR.format(report[0]))
    return out


def _solve_unchecked(A, B, left):
    """``linalg.solve``'s checks and result, without reading whether ``A`` was singular."""
    _check_square("linalg.solve", A)
    _check_float("linalg.solve", B)
    if A.dtype is not B.dtype:
        raise RuntimeError(SOLVE_DTYPE.format(_name(A.dtype), _name(B.dtype)))
    # linalg_solve_is_vector_rhs (whatever ``left``: XA = b then fails on b's shape (n, 1))
    vector = B.ndim == 1 or (B.ndim == A.ndim - 1 and B.shape == A.shape[:-1])
    n = A.shape[-1]
    b2 = (B.shape[-1], 1) if vector else (B.shape[-2], B.shape[-1])
    if b2[0 if left else 1] != n:
        eq = "AX = B" if left else "XA = B"
        raise RuntimeError(SOLVE_SHAPES.format(eq, n, n, *b2))
    if vector and not left:
        raise RuntimeError(SOLVE_VECTOR_RIGHT)
    if not vector:
        broadcast_shapes(tuple(A.shape[:-2]), tuple(B.shape[:-2]))
    out = dispatch(OPS["linalg_solve_ex"], A, B, vector=vector, left=bool(left))
    if left and out.ndim > 1:  # LAPACK's column-major result (XA = B gives its transpose)
        _shape_ops._set_strides(out, _lapack_strides(out.shape))
    return out


def solve_triangular(A, B, *, upper, left=True, unitriangular=False, out=None):
    """``torch.linalg.solve_triangular`` (LinalgSolveTriangularBackward0): reads one triangle of
    ``A``."""
    if B.ndim < 2:
        raise RuntimeError(AT_LEAST_2D.format("linalg.solve_triangular").replace(" A ", " B "))
    _check_square("linalg.solve_triangular", A)
    _check_float("linalg.solve_triangular", B)
    broadcast_shapes(tuple(B.shape[:-2]), tuple(A.shape[:-2]))  # PyTorch's order
    static = {"upper": bool(upper), "left": bool(left), "unitriangular": bool(unitriangular)}
    out = dispatch(OPS["linalg_solve_triangular"], A, B, **static)
    return _shape_ops._set_strides(out, _lapack_strides(out.shape))


def _lapack_strides(shape) -> tuple:
    """The strides of LAPACK's results: column-major matrices, stored one after the other."""
    n = max(shape[-1], 1)
    m = max(shape[-2], 1)
    batch = _shape_ops._contiguous_strides(tuple(shape[:-2]))
    return tuple(s * m * n for s in batch) + (1, m)


@functools.partial(jax.jit, static_argnums=1)
def _cholesky_info(x, upper):
    """LAPACK potrf's ``info`` for each matrix of ``x``: the order of the first leading minor
    (of the Hermitian matrix read from one triangle) that is not positive-definite, else 0.

    An unblocked Cholesky tracks the pivots ``a_jj - sum_k |l_jk|^2``; the first one that is not
    positive (or NaN) is where LAPACK stops. Written with jnp so that it traces under jit."""
    h = _hermitian_from(x, not upper)
    n = h.shape[-1]
    rows = jnp.arange(n)

    def step(j, carry):
        lo, bad = carry
        row = jnp.take(lo, j, axis=-2)  # L[j, :], zero from column j on
        d = jnp.real(jnp.take(jnp.take(h, j, axis=-1), j, axis=-1)) - jnp.sum(
            jnp.abs(row) ** 2, axis=-1
        )
        bad = bad.at[..., j].set(~(d > 0))
        ljj = jnp.sqrt(jnp.where(d > 0, d, 1))
        col = jnp.take(h, j, axis=-1) - jnp.einsum("...ik,...k->...i", lo, jnp.conj(row))
        col = jnp.where(rows > j, col / ljj[..., None], jnp.where(rows == j, ljj[..., None], 0))
        return lo.at[..., :, j].set(col.astype(lo.dtype)), bad

    bad = jnp.zeros(h.shape[:-1], bool)
    if n:
        _, bad = lax.fori_loop(0, n, step, (jnp.zeros_like(h), bad))
    first = jnp.argmax(bad, axis=-1) + 1 if n else jnp.zeros(h.shape[:-2], jnp.int32)
    return jnp.where(jnp.any(bad, axis=-1), first, 0).astype(jnp.int32)


def _raise_not_positive_definite(name: str, A: Tensor, info) -> None:
    """LinAlgError for the first matrix whose ``info`` is positive (values known eagerly only;
    inside vmap, the physical batch's)."""
    values = physical_values(info)
    if values is None:
        return
    for b, k in enumerate(values.reshape(-1)):
        if k > 0:
            prefix = f"(Batch element {b}): " if values.ndim else ""
            raise LinAlgError(CHOLESKY_PD.format(name, prefix, int(k)))


@_autocast.policy("fp32")
def cholesky(A, *, upper=False, out=None):
    """``torch.linalg.cholesky`` (LinalgCholeskyExBackward0); not positive-definite raises."""
    _check_square("linalg.cholesky", A)
    out = dispatch(OPS["linalg_cholesky_ex"], A, upper=bool(upper))
    if not _finite(out):
        _raise_not_positive_definite("linalg.cholesky", A, _cholesky_info(A._data, bool(upper)))
    return _shape_ops._set_strides(out, _lapack_strides(out.shape))


linalg_cholesky_ex_type = _return_type("linalg_cholesky_ex", ("L", "info"))


@_autocast.policy("fp32")
def cholesky_ex(A, *, upper=False, check_errors=False, out=None):
    """``torch.linalg.cholesky_ex``: ``(L, info)``, ``info`` LAPACK's int32 status per matrix.

    Where ``info`` is positive PyTorch's ``L`` holds LAPACK's partial factorization (documented
    as unspecified); here it is NaN there."""
    _check_square("linalg.cholesky", A)
    upper = bool(upper)
    L = dispatch(OPS["linalg_cholesky_ex"], A, upper=upper)
    if _concrete(L._data) and _finite(L):  # eagerly: every factorization completed
        info = jnp.zeros(A.shape[:-2], jnp.int32)
    else:
        info = _cholesky_info(A._data, upper)
    if check_errors:
        _raise_not_positive_definite("linalg.cholesky_ex", A, info)
    info = Tensor._make(info, D.int32, A.device, inference=grad_mode.is_inference_mode_enabled())
    L = _shape_ops._set_strides(L, _lapack_strides(L.shape))
    return linalg_cholesky_ex_type((L, info))


@_autocast.policy("fp32")
def qr(A, mode="reduced", *, out=None):
    """``torch.linalg.qr``: (Q, R) for mode 'reduced' or 'complete' (LinalgQrBackward0)."""
    if mode not in ("reduced", "r", "complete"):
        raise RuntimeError(QR_MODE.format(mode))
    _check_matrix("linalg.qr", A)
    q, r = dispatch(OPS["linalg_qr"], A, mode=mode)
    for t in (q, r):  # LAPACK's column-major results
        if t.ndim >= 2:
            _shape_ops._set_strides(t, _lapack_strides(t.shape))
    if mode == "r" and r.grad_fn is not None:
        # PyTorch records the node but its backward raises, as Q was not computed.
        node = r.grad_fn
        node._saved_checks = (*(node._saved_checks or ()), _qr_r_backward)
    if mode == "complete" and A.shape[-2] > A.shape[-1]:
        refuse_backward(q, lambda: RuntimeError(QR_COMPLETE_BACKWARD))  # linalg_qr_backward
    return linalg_qr_type((q, r))


QR_COMPLETE_BACKWARD = (
    "The QR decomposition is not differentiable when mode='complete' and nrows > ncols."
)


def _qr_r_backward():
    raise RuntimeError(QR_R_BACKWARD)


def _rank_tol(t, name):
    if isinstance(t, Tensor) and t.dtype.is_complex:
        raise RuntimeError(RANK_COMPLEX_TOL.format(name, _name(t.dtype)))
    return t


RANK_ARGS = (
    "linalg_matrix_rank() received an invalid combination of arguments - got ({}), but expected "
    "one of:\n"
    " * (Tensor input, *, Tensor atol = None, Tensor rtol = None, bool hermitian = False, Tensor "
    "out = None)\n"
    " * (Tensor input, *, float atol = None, float rtol = None, bool hermitian = False, Tensor "
    "out = None)\n"
    " * (Tensor input, Tensor tol, bool hermitian = False, *, Tensor out = None)\n"
    " * (Tensor input, float tol, bool hermitian = False, *, Tensor out = None)\n"
)


@_autocast.policy("fp32")
def matrix_rank(A, *args, **kwargs):
    """``torch.linalg.matrix_rank``: an int64 count of singular values above the tolerance.

    ``matrix_rank(A, tol, hermitian)`` is the deprecated overload (``atol=tol, rtol=0``).
    Not differentiable.
    """
    atol, rtol = kwargs.get("atol"), kwargs.get("rtol")
    tensors = [isinstance(t, Tensor) and t.ndim > 0 for t in (atol, rtol)]
    numbers = [t is not None and not isinstance(t, Tensor) for t in (atol, rtol)]
    if (tensors[0] and numbers[1]) or (tensors[1] and numbers[0]):
        # PyTorch's argument parser: no overload mixes a tensor and a float tolerance (it lists
        # the keywords last given first).
        got = ["Tensor"] + [
            f"{k}={'Tensor' if isinstance(v, Tensor) else type(v).__name__}"
            for k, v in reversed(kwargs.items())
        ]
        raise TypeError(RANK_ARGS.format(", ".join(got)))
    return _matrix_rank_impl(A, *args, **kwargs)


def _matrix_rank_impl(A, tol=None, hermitian=False, *, atol=None, rtol=None, out=None):
    if A.ndim < 2:
        raise RuntimeError(RANK_2D)
    if A.dtype not in (D.float32, D.float64, D.complex64, D.complex128):
        raise RuntimeError(RANK_DTYPE)
    if hermitian:
        _check_square("linalg.eigh", A)
    if tol is not None:
        atol, rtol = tol, 0.0
    atol = 0.0 if atol is None else _rank_tol(atol, "atol")
    if rtol is None:
        eps = float(np.finfo(_real_of(A.dtype).np).eps) * max(A.shape[-2], A.shape[-1])
        if isinstance(atol, Tensor):
            rtol = (atol <= 0).to(_real_of(A.dtype)) * eps
        else:
            rtol = 0.0 if atol > 0 else eps
    else:
        rtol = _rank_tol(rtol, "rtol")
    out = dispatch(OPS["linalg_matrix_rank"], A, atol, rtol, hermitian=bool(hermitian))
    out._version_counter.value = 1  # ATen's ``sum_out`` into a result it made empty
    return out


@_autocast.policy("fp32")
def eigh(A, UPLO="L", *, out=None):
    """``torch.linalg.eigh``: (eigenvalues, eigenvectors) (LinalgEighBackward0)."""
    if UPLO not in ("L", "U", "l", "u"):
        raise RuntimeError(UPLO_MSG.format(UPLO))
    _check_square("linalg.eigh", A)
    lower = UPLO in "Ll"
    L, V = dispatch(OPS["linalg_eigh"], A, lower=lower, vectors=True)
    if V._dtype.is_complex and V._grad_fn is not None:
        _phase_checked(
            V._grad_fn,
            _eigenvector_phase(
                lambda A, gV: _eigh_phase_terms(A, lower, gV), "linalg_eigh_backward"
            ),
        )
    return linalg_eigh_type((L, _shape_ops._set_strides(V, _lapack_strides(V.shape))))


EIG_NON_FINITE = "torch.linalg.eig: input tensor should not contain infs or NaNs."


def _eig_checked(name: str, A) -> None:
    dt = A.dtype
    vectors = name == "linalg.eig" or (A.requires_grad and grad_mode.is_grad_enabled())
    if not (dt.is_floating_point or dt.is_complex):
        raise RuntimeError(f"Unknown Complex ScalarType for {_name(dt)}")
    if dt in (D.float16, D.bfloat16):
        if dt is D.float16:  # PyTorch makes the complex32 values and vectors first
            from .search_ops import COMPLEX_HALF

            for _ in range(2 if vectors else 1):
                E.warn_once(COMPLEX_HALF)
        raise NotImplementedError(f"\"linalg_eig_out_cpu\" not implemented for '{_name(dt)}'")
    _check_square(name, A)
    if vectors and not _finite(A):  # (eigvals alone runs geev on them)
        raise RuntimeError(EIG_NON_FINITE)


@_autocast.policy("fp32")
def eig(A, *, out=None):
    """``torch.linalg.eig``: complex (eigenvalues, eigenvectors) of a square matrix, as LAPACK's
    ``geev`` gives them (unit-norm vectors, column-major) (LinalgEigBackward0)."""
    _eig_checked("linalg.eig", A)
    L, V = dispatch(OPS["linalg_eig"], A)
    if V._grad_fn is not None:
        _phase_checked(V._grad_fn, _EIG_PHASE)
    return linalg_eig_type((L, _shape_ops._set_strides(V, _lapack_strides(V.shape))))


@_autocast.policy("fp32")
def eigvals(A, *, out=None):
    """``torch.linalg.eigvals``: the eigenvalues of ``linalg.eig`` (its node, when recorded)."""
    _eig_checked("linalg.eigvals", A)
    L, V = dispatch(OPS["linalg_eig"], A)
    if V._grad_fn is not None:
        _phase_checked(V._grad_fn, _EIG_PHASE)
    return L


@jax.jit
def _eig_phase_terms(A, gV):
    return _imag_diag(_eig_values_vectors(A)[1], gV)


# Note [Phase checks]: the eigenvectors of a complex Hermitian matrix (and the singular vectors
# of a complex matrix) are defined up to a phase e^{i phi} per vector, so a loss that depends on
# the phase has no gradient. PyTorch's formulas (``linalg_eig_backward``, ``svd_backward``)
# check that the loss is invariant, ``Im(diag(V^H gV)) == 0`` (for the SVD ``Im(diag(U^H gU)) ==
# -Im(diag(V^H gV))``), with ``allclose(rtol=1e-2, atol=1e-2)``, and raise otherwise. The check
# reads values: the node's backward is wrapped (``graph.wrap_backward``) to run it on concrete
# gradients, in the eager loop and before a ``create_graph`` backward records the formula; the
# fused backward leaves such nodes to the eager loop. Traced (``leafgrad.compile``), it cannot
# be read, and is not made. After a ``create_graph`` backward through the node it is not made
# again: PyTorch's formula keeps the vectors as saved outputs, so its second backward sums at
# this node the gradient through them too, while leafgrad's recorded formula differentiates them
# inside (Note [Graph formulas]) and this node then sees only a part of what PyTorch checks.
EIGENVECTOR_PHASE = (
    "{}: The eigenvectors in the complex case are specified up to multiplication by e^{{i phi}}. "
    "The specified loss function depends on this quantity, so it is ill-defined."
)
SVD_PHASE = (
    "svd_backward: The singular vectors in the complex case are specified up to multiplication "
    "by e^{i phi}. The specified loss function depends on this phase term, making it "
    "ill-defined."
)


def _phase_checked(node, check) -> None:
    """Wrap ``node``'s backward with ``check(A, grads)`` on concrete arrays (Note [Phase
    checks])."""
    from ..autograd.graph import wrap_backward

    inner = node._backward
    recorded = []

    def side_effect(primals, grads):
        if recorded or not primals or primals[0] is None:
            return
        if any(isinstance(g, Tensor) for g in grads):
            # a create_graph backward: the formula it records differentiates the vectors'
            # dependence on A itself, so a later backward brings this node only a part of the
            # gradient PyTorch's node sums (the part through the incoming gradient), which the
            # check must not read
            recorded.append(True)
        arrays = [g._data if isinstance(g, Tensor) else g for g in grads]
        if all(a is None or _concrete(a) for a in (primals[0], *arrays)):
            check(primals[0], arrays)

    def backward(primals, cts):
        side_effect(primals, cts)
        return inner(primals, cts)

    wrap_backward(node, backward, side_effect)


def _imag_diag(X, G):
    """``Im(diag(X^H G))``."""
    return jnp.imag(jnp.sum(jnp.conj(X) * G, axis=-2))


@functools.partial(jax.jit, static_argnums=1)
def _eigh_phase_terms(A, lower, gV):
    return _imag_diag(_eigh(A, lower)[1], gV)


def _eigenvector_phase(terms, name: str):
    """The check of ``linalg_eig_backward`` (``name`` says which, Hermitian or not):
    ``Im(diag(V^H gV))``, computed by ``terms(A, gV)``, allclose to 0."""

    def check(A, grads) -> None:
        gV = grads[1] if len(grads) > 1 else None
        if gV is not None and not np.allclose(np.asarray(terms(A, gV)), 0.0, rtol=1e-2, atol=1e-2):
            raise RuntimeError(EIGENVECTOR_PHASE.format(name))

    return check


_EIG_PHASE = _eigenvector_phase(_eig_phase_terms, "linalg_eig_backward")


@jax.jit
def _svd_phase_terms(A, gU, gVh):
    U, _, Vh = lax.linalg.svd(A, full_matrices=False, compute_uv=True)
    k = U.shape[-1]
    # PyTorch's formula first narrows the full matrices to the k vectors (and their gradients)
    # that the reduced SVD has; skew(X) = X - X^H doubles the imaginary part of the diagonal
    u = 2 * _imag_diag(U, gU[..., :, :k])
    v = 2 * _imag_diag(
        jnp.conj(jnp.swapaxes(Vh, -1, -2)), jnp.conj(jnp.swapaxes(gVh, -1, -2))[..., :, :k]
    )
    return u, v


def _svd_phase(A, grads) -> None:
    gU, gVh = grads[0], grads[2] if len(grads) > 2 else None
    if gU is None and gVh is None:
        return
    *batch, m, n = A.shape
    if gU is None:
        gU = jnp.zeros((*batch, m, min(m, n)), A.dtype)
    if gVh is None:
        gVh = jnp.zeros((*batch, min(m, n), n), A.dtype)
    u, v = (np.asarray(a) for a in _svd_phase_terms(A, gU, gVh))
    if not np.allclose(u, -v, rtol=1e-2, atol=1e-2):
        raise RuntimeError(SVD_PHASE)


@_autocast.policy("fp32")
def eigvalsh(A, UPLO="L", *, out=None):
    """``torch.linalg.eigvalsh`` (LinalgEighBackward0)."""
    if UPLO not in ("L", "U", "l", "u"):
        raise RuntimeError(UPLO_MSG.format(UPLO))
    _check_square("linalg.eigvalsh", A)
    return dispatch(OPS["linalg_eigh"], A, lower=UPLO in "Ll", vectors=False)


@_autocast.policy("fp32")
def svd(A, full_matrices=True, *, driver=None, out=None):
    """``torch.linalg.svd``: (U, S, Vh) (LinalgSvdBackward0)."""
    _check_matrix("linalg.svd", A)
    U, S, Vh = dispatch(OPS["linalg_svd"], A, full_matrices=bool(full_matrices))
    if U._dtype.is_complex and U._grad_fn is not None:
        _phase_checked(U._grad_fn, _svd_phase)
    for t in (U, Vh):  # LAPACK's column-major results
        _shape_ops._set_strides(t, _lapack_strides(t.shape))
    return linalg_svd_type((U, S, Vh))


@_autocast.policy("fp32")
def svdvals(A, *, driver=None, out=None):
    """``torch.linalg.svdvals`` (LinalgSvdBackward0)."""
    _check_matrix("linalg.svd", A)
    return dispatch(OPS["linalg_svd"], A, full_matrices=False, uv=False)


def pinv(A, *, atol=None, rtol=None, hermitian=False, out=None):
    """``torch.linalg.pinv`` with a relative tolerance (LinalgPinvBackward0)."""
    if (
        A.ndim < 2
        or not (A.dtype.is_floating_point or A.dtype.is_complex)
        or A.dtype
        in (
            D.float16,
            D.bfloat16,
        )
    ):
        raise RuntimeError(PINV_INPUT.format(_name(A.dtype), _sizes(A.shape)))
    if atol is not None:
        raise NotImplementedError("leafgrad: linalg.pinv(atol=...) is not implemented yet")
    if rtol is None:
        rtol = max(A.shape[-2], A.shape[-1]) * float(np.finfo(_real_of(A.dtype).np).eps)
    return dispatch(OPS["linalg_pinv"], A, rtol=float(rtol), hermitian=bool(hermitian))


# --- composites of torch.linalg ----------------------------------------------------------------

VECDOT_DTYPES = (
    "linalg.vecdot: Expected x and y to have the same dtype, but found x of type {} and y of type "
    "{} instead"
)


@_autocast.policy("lower_precision_fp")
def vecdot(x, y, *, dim=-1, out=None):
    """``torch.linalg.vecdot``: ``vdot`` for two vectors, else ``(x.conj() * y).sum(dim)``."""
    _check_float("linalg.vecdot", x)
    if x.dtype is not y.dtype:
        raise RuntimeError(VECDOT_DTYPES.format(_name(x.dtype), _name(y.dtype)))
    if x.ndim == 1 and y.ndim == 1:
        return vdot(x, y)
    return (x.conj() * y).sum(dim)


def vander(x, *, N=None):
    """``torch.linalg.vander``: columns ``x**0 .. x**(N-1)``, as PyTorch builds it (a row of ones
    concatenated to the cumulative product of the expanded ``x``)."""
    if x.dtype is D.bool_ or x.dtype is D.float16 or x.dtype is D.bfloat16:
        raise RuntimeError(
            "linalg.vander supports floating point, complex, and integer tensors, but got "
            + _name(x.dtype)
        )
    x_ = x.unsqueeze(-1) if x.ndim == 0 else x
    shape = list(x_.shape)
    n = shape[-1] if N is None else N
    if not n > 1:
        raise RuntimeError("N must be greater than 1.")
    result = x_.unsqueeze(-1).expand(*shape, n - 1).cumprod(-1)
    ones = result.new_ones((*shape, 1))
    return _shape_ops.cat([ones, result], -1)


COND_NORM = "linalg.cond got an invalid norm type: {}"


@_autocast.policy("fp32")
def cond(A, p=None, *, out=None):
    """``torch.linalg.cond``, composed as PyTorch composes it: the ratio of extreme singular
    values for p = None/2/-2; otherwise ``norm(A) * norm(inv(A))`` (infinite where A is
    singular), or the singular values' sum times their reciprocals' sum for 'nuc'."""
    if isinstance(p, str):
        _check_square(f"linalg.cond(ord={p})", A, float_check=False)
        if p not in ("fro", "nuc"):
            raise RuntimeError(COND_NORM.format(p))
    else:
        if A.ndim < 2:
            raise RuntimeError("linalg.cond: The input tensor must have at least 2 dimensions.")
        p = 2 if p is None else p
        if abs(float(p)) not in (1.0, 2.0, math.inf):
            raise RuntimeError(COND_NORM.format(f"{float(p):g}"))
    if A.numel() == 0:
        from .._factories import written_zeros

        return written_zeros(A.shape[:-2], _real_of(A.dtype), A.device)
    if not isinstance(p, str) and abs(float(p)) == 2.0:
        s = svdvals(A)
        top, bottom = s.narrow(-1, 0, 1), s.narrow(-1, s.shape[-1] - 1, 1)
        return (bottom / top if p < 0 else top / bottom).squeeze(-1)
    if not isinstance(p, str):
        # std::to_string of the order: a float's six decimals, an int's digits
        label = f"{float(p):f}" if isinstance(p, float) else str(int(p))
        _check_square(f"linalg.cond(ord={label})", A, float_check=False)
    if p == "nuc":
        s = svdvals(A)
        return s.sum(-1) * s.reciprocal().sum(-1)
    inverse, info = inv_ex(A)
    inverse.masked_fill_(info.unsqueeze(-1).unsqueeze(-1) > 0, math.inf)
    result = matrix_norm(A, p) * matrix_norm(inverse, p)
    return result.nan_to_num_(math.inf, math.inf, -math.inf)


def linalg_diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    """``torch.linalg.diagonal``: ``torch.diagonal`` with the last two dims as defaults."""
    return _shape_ops.diagonal(A, offset, dim1, dim2)


# --- the older torch.* spellings ---------------------------------------------------------------

qr_type = _return_type("qr", ("Q", "R"))
svd_type = _return_type("svd", ("U", "S", "V"))
QR_DEPRECATED = (
    "torch.qr is deprecated in favor of torch.linalg.qr and will be removed in a future PyTorch "
    "release.\nThe boolean parameter 'some' has been replaced with a string parameter 'mode'.\n"
    "Q, R = torch.qr(A, some)\nshould be replaced with\nQ, R = torch.linalg.qr(A, 'reduced' if "
    "some else 'complete') (Triggered internally at "
    "/__w/pytorch/pytorch/aten/src/ATen/native/BatchLinearAlgebra.cpp:2505.)"
)


@tensor_op("qr")
@_autocast.policy("fp32")
def legacy_qr(input, some=True, *, out=None):
    """``torch.qr``: ``linalg.qr`` with mode 'reduced' (``some``) or 'complete'; warns once."""
    E.warn_once(QR_DEPRECATED)
    return qr_type(qr(input, "reduced" if some else "complete"))


@tensor_op("svd")
@_autocast.policy("fp32")
def legacy_svd(input, some=True, compute_uv=True, *, out=None):
    """``torch.svd``: ``(U, S, V)`` with ``V = Vh.mH`` of ``linalg.svd``; without
    ``compute_uv``, ``S`` alone is computed and ``U``, ``V`` are zeros of the full sizes."""
    if compute_uv:
        U, S, Vh = svd(input, full_matrices=not some)
        return svd_type((U, S, Vh.mH))
    from .._factories import written_zeros

    S = svdvals(input)
    *batch, m, n = input.shape
    U = written_zeros((*batch, m, m), input.dtype, input.device)
    V = written_zeros((*batch, n, n), input.dtype, input.device).mT
    return svd_type((U, S, V))


@tensor_op("pinverse")
@_autocast.policy("fp32")
def pinverse(input, rcond=1e-15):
    """``torch.pinverse``: ``linalg.pinv`` with ``rcond`` as the relative tolerance."""
    return pinv(input, rtol=rcond)


def _norm_dtype_check(A, dtype):
    if dtype is None:
        return None
    dtype = D.to_dtype(dtype)
    if not (dtype.is_floating_point or dtype.is_complex):
        raise RuntimeError(NORM_DTYPE_FLOAT.format(_name(dtype)))
    if A.dtype.is_complex != dtype.is_complex:
        kind = "complex" if A.dtype.is_complex else "real"
        raise RuntimeError(NORM_DTYPE_KIND.format(kind, kind, _name(dtype)))
    if D.promote_types(A.dtype, dtype) is not dtype:
        raise RuntimeError(NORM_DTYPE_NARROW.format(_name(A.dtype), _name(dtype)))
    return dtype


def _ord_text(ord) -> str:
    if isinstance(ord, float) and math.isinf(ord):
        return "inf" if ord > 0 else "-inf"
    return str(ord)


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None, out=None):
    """``torch.linalg.vector_norm`` (LinalgVectorNormBackward0)."""
    _check_float("linalg.vector_norm", x)
    if isinstance(ord, complex):
        raise RuntimeError(
            "linalg.vector_norm: Expected a non-complex scalar as the order of norm."
        )
    if isinstance(dim, int):
        dim = (dim,)
    dims = None if dim is None else _shape_ops._check_dims_unique(dim, x.ndim)
    ordf = float(ord)
    if x.numel() == 0 and (ordf < 0 or ordf == math.inf):
        if not dims:
            raise RuntimeError(NORM_EMPTY.format(_ord_text(ord)))
        for d in dims:
            if x.shape[d] == 0:
                raise RuntimeError(NORM_EMPTY_DIM.format(_ord_text(ord), d))
    dtype = _norm_dtype_check(x, dtype)
    if x.ndim == 0:
        dims = None
    static = {"ord": ordf, "dim": dims or None, "keepdim": bool(keepdim)}
    if dims == ():
        static["dim"] = None
    if dtype is not None:
        static["dtype"] = dtype
    out = dispatch(OPS["linalg_vector_norm"], x, **static)
    if x.ndim == 0 and dim is not None:
        # a 0-d inference tensor given a dim takes another kernel, which writes its result
        # without a counted write
        kernel_wrote((x,), (out, 0))
    if type(ord) is float:  # a Scalar made from a double: ``_saved_ord`` reads 2.0, not 2
        saved_mod.keep_written(out, ord=ord)
    return _no_gradient(out) if ordf == 0 else out


# Note [Undefined gradients]: some of PyTorch's derivative formulas return an undefined tensor
# rather than zeros: ``norm_backward`` for ``ord=0`` (which counts non-zeros). The node is
# recorded and takes its edges, but what it hands on is None, as from an edge that needs no
# gradient: ``.grad`` stays None, hooks see None, ``autograd.grad`` wants ``allow_unused``. Its
# route (Note [Pass-through gradients] in graph.py) says so, so its backward never runs.


def _no_gradient(out: Tensor) -> Tensor:
    """``out`` whose node gives no gradient to any edge (Note [Undefined gradients])."""
    node = out._grad_fn
    if node is not None:
        node._route = (None,) * len(node._next_functions)
    return out


def _max_min(x, ord, dim, keepdim):
    op = OPS["linalg_amax"] if ord > 0 else OPS["linalg_amin"]
    out = dispatch(op, x, dim=(_wrap_dim(dim, x.ndim),), keepdim=bool(keepdim))
    if dim < 0:  # PyTorch's amax over the singular values takes dim -1 (Note [Dims as written])
        saved_mod.keep_written(out, dim=(dim,))
    return out


def _backshift(d0, d1, ndim):
    perm = [i for i in range(ndim) if i not in (d0, d1)]
    return [*perm, d0, d1]


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None, out=None):
    """``torch.linalg.matrix_norm``: 'fro', 'nuc', 1, -1, 2, -2, inf, -inf."""
    # the parser's refusals of ``dim`` (a list whose first item is an int selects a signature,
    # then fails to unpack; anything else matches none of the two)
    if not isinstance(dim, (list, tuple)) or (dim and E.item_refused(dim[0])):
        raise TypeError("linalg_matrix_norm() received an invalid combination of arguments")
    message = E.ints_error("linalg_matrix_norm", "dim", "", dim)
    if message is not None:
        raise TypeError(message)
    if ord not in ("fro", "nuc") if isinstance(ord, str) else abs(ord) not in (1, 2, math.inf):
        raise RuntimeError(MATRIX_NORM_ORD.format(ord))  # ATen checks the order first
    if A.ndim < 2:
        raise RuntimeError(AT_LEAST_2D.format("linalg.matrix_norm"))
    _check_float("linalg.matrix_norm", A)
    if len(dim) != 2:
        raise RuntimeError(MATRIX_NORM_DIM.format(" ".join(str(d) for d in dim)))
    d0, d1 = _wrap_dim(dim[0], A.ndim), _wrap_dim(dim[1], A.ndim)
    if d0 == d1:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got ({d0}, {d1})")
    if isinstance(ord, str):
        if ord not in ("fro", "nuc"):
            raise RuntimeError(MATRIX_NORM_ORD.format(ord))
        if ord == "fro":
            return vector_norm(A, 2, (d0, d1), keepdim, dtype=dtype)
        _check_float("linalg.matrix_norm", A)
        _no_low_precision("linalg.matrix_norm", A)
        _norm_dtype_check(A, dtype)
        a = A if dtype is None else A.to(dtype)
        perm = _backshift(d0, d1, A.ndim)
        result = svdvals(_permute(_S(a), perm).t).sum(-1, keepdim)
        return _keepdim_back(result, perm) if keepdim else result
    ordf = float(ord)
    if abs(ordf) not in (1.0, 2.0, math.inf):
        raise RuntimeError(MATRIX_NORM_ORD.format(ord))
    _check_float("linalg.matrix_norm", A)
    if abs(ordf) == 2.0:
        _no_low_precision("linalg.matrix_norm", A)
        _norm_dtype_check(A, dtype)
        a = A if dtype is None else A.to(dtype)
        perm = _backshift(d0, d1, A.ndim)
        result = _max_min(svdvals(_permute(_S(a), perm).t), ordf, -1, keepdim)
        return _keepdim_back(result, perm) if keepdim else result
    if abs(ordf) == math.inf:
        d0, d1 = d1, d0
    if not keepdim and d0 < d1:
        d1 -= 1
    return _max_min(vector_norm(A, 1.0, (d0,), keepdim, dtype=dtype), ordf, d1, keepdim)


def _keepdim_back(result, perm):
    inverse_perm = [0] * len(perm)
    for i, p in enumerate(perm):
        inverse_perm[p] = i
    return _permute(_S(result.unsqueeze(-1)), inverse_perm).t


def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None, out=None):
    """``torch.linalg.norm``: a vector norm or, for two dims, a matrix norm."""
    if isinstance(dim, int):
        dim = (dim,)
    if dim is not None and len(dim) not in (1, 2):
        raise RuntimeError(NORM_DIM_LEN.format(_sizes(dim)))
    if isinstance(ord, str):
        return matrix_norm(A, ord, dim if dim is not None else (0, 1), keepdim, dtype=dtype)
    if dim is None and ord is not None and A.ndim not in (1, 2):
        raise RuntimeError(NORM_ORD_NDIM.format(A.ndim))
    if ord is not None and ((dim is not None and len(dim) == 2) or (dim is None and A.ndim == 2)):
        return matrix_norm(A, ord, dim if dim is not None else (0, 1), keepdim, dtype=dtype)
    # PyTorch passes the default order as a double (``_saved_ord`` 2.0), and the dims as given
    out = vector_norm(A, 2.0 if ord is None else ord, dim, keepdim, dtype=dtype)
    written_dims.note(out, A.ndim, dim=dim)
    return out


# Note [Dims as written]: the matrix norms take the dims wrapped, the vector norm as given
norm._leafgrad_written_dims = True


@tensor_op("norm")
@stale_views_first("norm")
def torch_norm(input, p="fro", dim=None, keepdim=False, out=None, dtype=None):
    """``torch.norm`` (``torch/functional.py``): vector_norm, or matrix_norm for 'nuc'."""
    if not isinstance(input, Tensor):  # its first read of the input
        raise AttributeError(f"'{E.py_typename(input)}' object has no attribute 'layout'")
    _dim = [dim] if isinstance(dim, int) else dim
    if dtype is not None and not E._matches("torch.dtype", dtype):  # passed on by keyword
        fn = "linalg_matrix_norm" if isinstance(p, str) and p != "fro" else "linalg_vector_norm"
        raise TypeError(E.KW_MUST_BE.format(fn, "dtype", "torch.dtype", E.py_typename(dtype)))
    from .. import linalg  # the frontends, with their parsers' errors (the package imports ops)

    if isinstance(p, str):
        if p == "fro" and (dim is None or isinstance(dim, int) or len(dim) <= 2):
            return linalg.vector_norm(input, 2, _dim, keepdim, dtype=dtype)
        if _dim is None:
            _dim = list(range(input.ndim))
        return linalg.matrix_norm(input, p, _dim, keepdim, dtype=dtype)
    p = 2.0 if p is None else p
    if E.number_refused(p):  # torch.norm passes p on by position
        raise TypeError(
            E.MUST_BE.format("linalg_vector_norm", "ord", 2, "Number", E.py_typename(p))
        )
    return linalg.vector_norm(input, p, _dim, keepdim, dtype=dtype)


@tensor_op("norm", function=False)
def _norm_method(self, p="fro", dim=None, keepdim=False, dtype=None):
    """``Tensor.norm`` (PyTorch's Python method: ``dtype`` is its fifth parameter, no ``out``)."""
    return torch_norm(self, p, dim, keepdim, dtype=dtype)


def multi_dot(tensors, *, out=None):
    """``torch.linalg.multi_dot``: mm in the cheapest order, then a view (ViewBackward0)."""
    n = len(tensors)
    if n < 2:
        raise RuntimeError(MULTI_DOT_N.format(n))
    mats = list(tensors)
    out_shape = []
    first, last = tensors[0], tensors[-1]
    if first.ndim == 1:
        mats[0] = first.unsqueeze(0)
    elif first.ndim == 2:
        out_shape.append(first.shape[0])
    else:
        raise RuntimeError(MULTI_DOT_END.format("first", first.ndim))
    if last.ndim == 1:
        mats[-1] = last.unsqueeze(-1)
    elif last.ndim == 2:
        out_shape.append(last.shape[1])
    else:
        raise RuntimeError(MULTI_DOT_END.format("last", last.ndim))
    for i in range(1, n - 1):
        if tensors[i].ndim != 2:
            raise RuntimeError(MULTI_DOT_MID.format(i, tensors[i].ndim))
    for i in range(1, n):
        if mats[i].dtype is not mats[0].dtype:
            raise RuntimeError(
                MULTI_DOT_DTYPE.format(
                    E.c_type_name(mats[0].dtype), i, E.c_type_name(mats[i].dtype)
                )
            )
        if mats[i - 1].shape[-1] != mats[i].shape[0]:
            raise RuntimeError(
                MULTI_DOT_SHAPES.format(
                    i - 1, i, _sizes(tensors[i - 1].shape), _sizes(tensors[i].shape)
                )
            )
    if n == 2:
        result = mm(mats[0], mats[1])
    elif n == 3:
        a, b = mats[0].shape[0], mats[1].shape[0]
        c, d = mats[2].shape[0], mats[2].shape[1]
        if (a * c) * (b + d) > (b * d) * (a + c):
            result = mm(mats[0], mm(mats[1], mats[2]))
        else:
            result = mm(mm(mats[0], mats[1]), mats[2])
    else:
        p = [mats[0].shape[0]] + [m.shape[1] for m in mats]
        cost = [[0] * n for _ in range(n)]
        order = [[0] * n for _ in range(n)]
        for span in range(1, n):
            for i in range(n - span):
                j = i + span
                cost[i][j] = None
                for k in range(i, j):
                    q = cost[i][k] + cost[k + 1][j] + p[i] * p[k + 1] * p[j + 1]
                    if cost[i][j] is None or q < cost[i][j]:
                        cost[i][j], order[i][j] = q, k
        result = _chain(mats, order, 0, n - 1)
    return dispatch(OPS["view"], result, shape=tuple(out_shape))


def _chain(mats, order, i, j):
    if i == j:
        return mats[i]
    k = order[i][j]
    return mm(_chain(mats, order, i, k), _chain(mats, order, k + 1, j))


def matrix_power(A, n, *, out=None):
    """``torch.linalg.matrix_power``: clone, inv and a binary chain of matmuls."""
    _check_square("linalg.matrix_power", A, float_check=False)
    if n == 0:
        # ATen's ``clone().copy_(eye)``: the copy is a write (version 1)
        out = dispatch(OPS["linalg_copy_eye"], dispatch(OPS["clone"], A), None)
        out._version_counter.value = 1
        return out
    if n == 1:
        return dispatch(OPS["clone"], A)
    if n == -1:
        return inv(A)
    a = inv(A) if n < 0 else A
    n = abs(n)
    if n == 2:
        return _matmul(a, a)
    if n == 3:
        return _matmul(_matmul(a, a), a)
    z = result = None
    while n > 0:
        bit = n % 2
        n //= 2
        z = a if z is None else _matmul(z, z)
        if bit == 1:
            result = z if result is None else _matmul(result, z)
    return result


@tensor_op("matrix_power")
def _tensor_matrix_power(input, n):
    """``torch.matrix_power``: ``torch.linalg.matrix_power``."""
    return matrix_power(input, n)
