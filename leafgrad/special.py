"""``leafgrad.special``: ``torch.special``'s functions.

Where ``torch.special.f`` is another name of a ``torch`` op (``expit`` is ``sigmoid``, ``gammaln``
is ``lgamma``, ``multigammaln`` is ``mvlgamma`` ...), it runs that op, so the recorded node is the
one PyTorch records (``SigmoidBackward0``). The others are table entries of
``ops/special_ops.py`` (``SpecialEntrBackward0`` ...). Each function checks its Tensor argument
first, with PyTorch's message naming ``special_<name>``.
"""

from __future__ import annotations

from . import _errors as E
from ._tensor import Tensor
from .ops import special_ops as _ops
from .ops.elementwise import MUST_BE_TENSOR, _is_number, _kernel_error

__all__ = [
    "digamma",
    "entr",
    "erf",
    "erfc",
    "erfcx",
    "erfinv",
    "exp2",
    "expit",
    "expm1",
    "gammainc",
    "gammaincc",
    "gammaln",
    "i0",
    "i0e",
    "i1",
    "i1e",
    "log1p",
    "log_ndtr",
    "log_softmax",
    "logit",
    "logsumexp",
    "multigammaln",
    "ndtr",
    "ndtri",
    "polygamma",
    "psi",
    "round",
    "sinc",
    "softmax",
    "xlog1py",
    "xlogy",
    "zeta",
]

MUST_BE_FLOAT = "special_{}(): argument '{}' (position {}) must be float, not {}"


def _check(name: str, input, pos: int = 1) -> None:
    if not isinstance(input, Tensor):
        raise TypeError(
            MUST_BE_TENSOR.format("special_" + name, "input", pos, E.py_typename(input))
        )


def _unary(name: str, call, doc: str, real_kernel: str | None = None):
    """``real_kernel``: the CPU kernel that refuses complex inputs, named in PyTorch's error."""

    def fn(input):
        _check(name, input)
        if real_kernel is not None and input.dtype.is_complex:
            raise _kernel_error(real_kernel, input.dtype)
        return call(input)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


expit = _unary("expit", lambda x: x.sigmoid(), "``special.expit``: ``sigmoid`` (SigmoidBackward0).")
erf = _unary("erf", lambda x: x.erf(), "``special.erf``: ``erf``.", "erf_vml_cpu")
erfc = _unary("erfc", lambda x: x.erfc(), "``special.erfc``: ``erfc``.", "erfc_vml_cpu")
erfinv = _unary("erfinv", lambda x: x.erfinv(), "``special.erfinv``: ``erfinv``.", "erfinv_vml_cpu")
exp2 = _unary("exp2", lambda x: x.exp2(), "``special.exp2``: ``exp2``.")
expm1 = _unary("expm1", lambda x: x.expm1(), "``special.expm1``: ``expm1``.")
log1p = _unary("log1p", lambda x: x.log1p(), "``special.log1p``: ``log1p``.")
gammaln = _unary(
    "gammaln",
    lambda x: x.lgamma(),
    "``special.gammaln``: ``lgamma`` (LgammaBackward0).",
    "lgamma_vml_cpu",
)
digamma = _unary("digamma", lambda x: x.digamma(), "``special.digamma``: ``digamma``.", "digamma")
psi = _unary("psi", lambda x: x.digamma(), "``special.psi``: ``digamma``.", "digamma")
sinc = _unary("sinc", _ops.sinc, "``special.sinc``: ``sinc`` (SincBackward0).")
i0 = _unary("i0", _ops.i0, "``special.i0``: ``i0`` (I0Backward0).")
ndtr = _unary("ndtr", _ops.ndtr, "``special.ndtr``: the standard normal CDF (a composite).")
entr = _unary("entr", _ops.unary("special_entr"), "``special.entr``: ``-x log x``.")
erfcx = _unary("erfcx", _ops.unary("special_erfcx"), "``special.erfcx``: ``exp(x^2) erfc(x)``.")
ndtri = _unary("ndtri", _ops.unary("special_ndtri"), "``special.ndtri``: the inverse of ndtr.")
log_ndtr = _unary("log_ndtr", _ops.unary("special_log_ndtr"), "``special.log_ndtr``: log ndtr.")
i0e = _unary("i0e", _ops.unary("special_i0e"), "``special.i0e``: ``exp(-|x|) i0(x)``.")
i1 = _unary("i1", _ops.unary("special_i1"), "``special.i1``: the modified Bessel function I1.")
i1e = _unary("i1e", _ops.unary("special_i1e"), "``special.i1e``: ``exp(-|x|) i1(x)``.")


def logit(input, eps=None):
    """``special.logit``: ``logit`` (LogitBackward0)."""
    _check("logit", input)
    if input.dtype.is_complex:
        raise _kernel_error("logit_cpu", input.dtype)
    if eps is not None and not (_is_number(eps) and not isinstance(eps, complex)):
        raise TypeError(MUST_BE_FLOAT.format("logit", "eps", 2, E.py_typename(eps)))
    return input.logit(eps)


def round(input, *, decimals=0):  # noqa: A001 - Python's own messages name ``special_round``
    """``special.round``: ``round(input, decimals=decimals)`` (RoundBackward1)."""
    _check("round", input)
    if input.dtype.is_complex:
        raise _kernel_error("round_cpu" if decimals else "round_vml_cpu", input.dtype)
    return input.round(decimals=decimals)


def polygamma(n, input):
    """``special.polygamma``: ``polygamma`` (PolygammaBackward0)."""
    return _ops.polygamma_op(n, input, "special_polygamma")


def multigammaln(input, p):
    """``special.multigammaln``: ``mvlgamma`` (MvlgammaBackward0)."""
    return _ops.mvlgamma_op(input, p, "special_multigammaln")


MISSING_DIM = 'special_{}() missing 1 required positional arguments: "dim"'
_MISSING = object()


def softmax(input, dim=_MISSING, dtype=None):
    """``special.softmax``: ``softmax`` over ``dim`` (SoftmaxBackward0)."""
    from .nn import functional as F

    _check("softmax", input)
    if dim is _MISSING:
        raise TypeError(MISSING_DIM.format("softmax"))
    return F.softmax(input, dim, dtype=dtype)


def log_softmax(input, dim=_MISSING, dtype=None):
    """``special.log_softmax``: ``log_softmax`` over ``dim`` (LogSoftmaxBackward0)."""
    from .nn import functional as F

    _check("log_softmax", input)
    if dim is _MISSING:
        raise TypeError(MISSING_DIM.format("log_softmax"))
    return F.log_softmax(input, dim, dtype=dtype)


def logsumexp(input, dim=_MISSING, keepdim=False):
    """``special.logsumexp``: ``logsumexp`` (LogsumexpBackward0)."""
    _check("logsumexp", input)
    if dim is _MISSING:
        raise TypeError(MISSING_DIM.format("logsumexp"))
    return input.logsumexp(dim, keepdim)


xlogy = _ops.binary_scalar_op("xlogy", "special_xlogy")
xlog1py = _ops.binary_scalar_op("special_xlog1py", "special_xlog1py")
zeta = _ops.binary_scalar_op("special_zeta", "special_zeta", _ops._zeta_refusal)
for _f, _doc in [
    (xlogy, "``special.xlogy``: ``xlogy`` (XlogyBackward0/1/2)."),
    (xlog1py, "``special.xlog1py``: ``input * log1p(other)``, 0 where ``input`` is 0."),
    (zeta, "``special.zeta``: the Hurwitz zeta function; no derivative for ``input``."),
]:
    _f.__doc__ = _doc
    _f.__name__ = _f.__qualname__ = _f.__doc__.split("``")[1].split(".")[1]

round.__qualname__ = "special_round"


def _igamma_alias(name: str, method: str):
    def fn(input, other):
        from . import _errors as E

        for arg, pos, value in (("input", 1, input), ("other", 2, other)):
            E.need_tensor(value, f"special_{name}", arg, pos)
        return getattr(input, method)(other)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``special.{name}``: ``{method}`` ({method.capitalize()}Backward0)."
    return fn


from .ops.bessel import *  # noqa: E402, F403
from .ops.bessel import __all__ as _bessel  # noqa: E402
from .ops.polynomials import *  # noqa: E402, F403
from .ops.polynomials import __all__ as _polynomials  # noqa: E402

__all__ += _polynomials + _bessel

gammainc = _igamma_alias("gammainc", "igamma")
gammaincc = _igamma_alias("gammaincc", "igammac")
