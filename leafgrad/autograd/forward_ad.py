"""``torch.autograd.forward_ad``: forward-mode AD with dual tensors.

Note [Forward AD]: inside ``dual_level()``, ``make_dual(x, t)`` gives a tensor that carries the
tangent ``t``; every op that takes a tensor with a tangent gives its outputs the tangents JAX's
``jax.jvp`` of the op's own forward computes (``propagate``, called by dispatch while a level is
open), and ``unpack_dual`` reads them back. Leaving the level forgets every tangent.

- ``make_dual`` is a view of its primal (``ViewBackward0`` when the primal requires grad) whose
  tangent is the given tangent itself when it has the primal's layout (else a copy laid out as
  the primal); ``unpack_dual`` gives a view of the dual tensor without a tangent and that
  tangent. ``detach()`` drops the tangent; integer and bool outputs have none. Under
  ``inference_mode`` no tangent is made or updated, as in PyTorch.
- Tangents have their primals' layout, and tangents of views are views of one tangent, as in
  PyTorch (Note [Forward views]).
- What leafgrad does not do exactly raises ``NotImplementedError``: a tangent that may require
  grad in PyTorch (forward-over-reverse: grad mode is on and an operand or a tangent requires
  grad; PyTorch's forward formulas read the primals even where a term is zero, so whether its
  tangent requires grad depends on each formula's text); a tangent whose dtype differs from its
  primal's (PyTorch keeps the tangent's dtype, JAX's JVP the primal's); and ops that move
  tensors between devices.

Note [Forward views]: PyTorch's tangent of a view is the same view of its base's tangent, made
when the view is made or, if the base gets its tangent later (an in-place op on the base or on
another of its views), when the view's tangent is first read. An in-place op writes the new
tangent into the tensor's tangent in place (bumping the tangent's version), so the base's
tangent and every view's tangent see it; an in-place op on a view whose base has no tangent gives
the base a zero tangent first. The base of this *forward* view relation is the view's ``_base``,
except that ``make_dual`` and ``unpack_dual`` make views that start a relation of their own
(PyTorch's ``_make_dual`` and ``_fw_primal`` are views only for backward): a view of such a
tensor records it as ``_fw_base``. leafgrad's tangents are tensors with storage (Note [Storage]),
so a tangent of a view shares its base tangent's storage and writes reach all of them through
``_storage.write``.
"""

from __future__ import annotations

import threading
import weakref
from typing import NamedTuple

import jax

__all__ = [
    "dual_level",
    "enter_dual_level",
    "exit_dual_level",
    "make_dual",
    "unpack_dual",
    "UnpackedDualTensor",
]

NO_LEVEL = (
    "Trying to create a dual Tensor for forward AD but no level exists, make sure to "
    "enter_dual_level() first."
)
NESTED = "Nested forward mode AD is not supported at the moment"
SIZE = (
    "Trying to set a forward gradient that has a different size than that of the original "
    "Tensor, this is not supported. Tensor is of size {} while the given forward gradient is of "
    "size {}."
)
ALREADY_DUAL = (
    "Making a dual Tensor based on a Tensor that already has a forward gradient at the same "
    "level {} is not supported."
)
NOT_FLOAT = "Expected {} to be floating point or complex, but got: {}"
BAD_INDEX = (
    "Trying to access a forward AD level with an invalid index. This index was either not "
    "created or is already deleted."
)
FORWARD_OVER_REVERSE = (
    "leafgrad: forward-mode AD where the tangent may require grad (forward-over-reverse, "
    "{}) is not supported; compute the tangents under no_grad() or with detached primals"
)
TANGENT_DTYPE = (
    "leafgrad: a tangent of dtype {} for a primal of dtype {} is not supported (JAX's JVP "
    "computes tangents in the primal's dtype)"
)
DEVICES = "leafgrad: forward-mode AD of an op that moves tensors between devices is not supported"
NO_JVP = "leafgrad: forward-mode AD of {} is not supported"

# Note [Forward AD not implemented]: PyTorch raises NotImplementedError for an op without a
# forward formula when an operand has a tangent: an op with a backward formula only
# (``NOT_IMPLEMENTED``; an in-place op's text ends at "implementation.") and an op with no
# derivative at all (``NOT_SUPPORTED``). leafgrad raises the same where the op would otherwise
# make a tangent. Found by running torch 2.13 over its functions (tests/test_forward_ad.py).
NOT_IMPLEMENTED = (
    "Trying to use forward AD with {} that does not support it because it has not been "
    "implemented yet.\nPlease file an issue to PyTorch at "
    "https://github.com/pytorch/pytorch/issues/new?template=feature-request.yml so that we can "
    "prioritize its implementation{}"
)
_OR_PR = " or submit a PR adding the implementation to derivatives.yaml"
NOT_SUPPORTED = "Trying to use forward AD with aten::{} that does not support it."
# leafgrad's op -> PyTorch's name for it, ops with a backward formula only
_NO_FORWARD_FORMULA = {
    "cdist": "_cdist_forward",
    "pdist": "_pdist_forward",
    "igamma": "igamma",
    "igammac": "igammac",
    "cholesky": "cholesky",
    "geqrf": "geqrf",
    "ormqr": "ormqr",
    "index_reduce": "index_reduce",
    "unique": "_unique2",
    "special_zeta": "special_zeta",
    "special_zeta_scalar_self": "special_zeta",
    "special_zeta_scalar_other": "special_zeta",
    "nn.embedding_bag": "_embedding_bag",
    "nn.embedding_bag_freq": "_embedding_bag",
    "nn.embedding_bag_max": "_embedding_bag",
    "nn.grid_sampler_2d": "grid_sampler_2d",
    "nn.grid_sampler_3d": "grid_sampler_3d",
    "nn.multi_margin_loss": "multi_margin_loss",
    "nn.multilabel_margin_loss": "multilabel_margin_loss_forward",
    "nn.ctc_loss": "_ctc_loss",
    "nn.weight_norm_interface": "_weight_norm_interface",
}
# leafgrad's op -> PyTorch's name for it, ops with no derivative (their other ops without one
# refuse differentiation in their forward, which ``propagate`` turns into this error)
_NO_DERIVATIVE = {
    "bernoulli_p_sample": "bernoulli",  # ``bernoulli(input, p)``; the others' tangent is zeros
    "binomial_sample": "binomial",
    "heaviside_self": "heaviside",
    "heaviside_values": "heaviside",
    "heaviside_self_values": "heaviside",
}
# in-place methods without a forward formula where their out-of-place op has one (or where
# PyTorch refuses before the op checks its dtypes): ``name`` -> (PyTorch's name, has a
# backward formula)
INPLACE_REFUSED = {
    "acosh": ("acosh_", True),
    "arccosh": ("acosh_", True),
    "asinh": ("asinh_", True),
    "arcsinh": ("asinh_", True),
    "atanh": ("atanh_", True),
    "arctanh": ("atanh_", True),
    "igamma": ("igamma_", True),
    "igammac": ("igammac_", True),
    "index_reduce": ("index_reduce_", True),
    "rrelu": ("rrelu_with_noise_", True),
    **{
        n: (n + "_", False)
        for n in (
            "bitwise_and bitwise_or bitwise_xor bitwise_not bitwise_left_shift "
            "bitwise_right_shift floor_divide gcd lcm heaviside"
        ).split()
    },
}
REFUSED_OPS = frozenset(_NO_FORWARD_FORMULA) | frozenset(_NO_DERIVATIVE)
# the operands whose tangents PyTorch's forward formula reads, where it reads fewer than the op
# differentiates: with none of them dual the result has no tangent (``copysign``'s formula reads
# ``self_t`` only; a dual ``other`` alone gives none, not zeros)
_FORWARD_READS = {"copysign": (0,)}


class _Tracing(threading.local):
    """A per-thread count, read as ``JVP_TRACING[0]``: > 0 while this thread traces an op's
    forward for its JVP (Note [Forward formulas]); another thread tracing a reverse-mode
    program meanwhile must not see it."""

    def __init__(self) -> None:
        self.count = 0
        self.stop = False  # (FUNC_JVP) the innermost one is a grad transform: no_grad stops it

    def __getitem__(self, _):
        return self.count

    def __setitem__(self, _, value) -> None:
        self.count = value


JVP_TRACING = _Tracing()
# 1 while the innermost differentiating torch.func transform running on this thread is a
# forward-mode one (``jvp``, ``jacfwd``, ``linearize``; a ``grad``/``vjp`` inside sets it to 0):
# its ops' forwards are traced with PyTorch's forward formulas (``formulas_forward``). Its
# ``stop`` is set while that transform is a reverse-mode one, which respects a ``no_grad``
# inside the function (forward mode ignores it, as PyTorch's).
FUNC_JVP = _Tracing()
_FORMULA_FORWARDS: dict = {}


def formulas_forward(plan):
    """``plan.forward``, jitted afresh with ``JVP_TRACING`` set while it is traced: JAX's JVP of
    it (a torch.func forward-mode transform) takes the op's forward formula (Note [Forward
    formulas]). The ops pick their forward-formula functions while they are traced, so a rule
    that runs later (JAX differentiates the jitted program) is still the forward one; leafgrad's
    own backward never runs this program (a ``grad`` of a ``jvp`` differentiates it in reverse,
    through the forward formulas, as PyTorch's double backward of a jvp does)."""
    fn = _FORMULA_FORWARDS.get(plan)
    if fn is None:
        inner = getattr(plan.forward, "__wrapped__", None)
        if inner is None:  # a meta plan: shapes only
            return plan.forward

        def traced(*args):
            JVP_TRACING.count += 1
            try:
                return inner(*args)
            finally:
                JVP_TRACING.count -= 1

        if len(_FORMULA_FORWARDS) > 4096:
            _FORMULA_FORWARDS.clear()
        fn = _FORMULA_FORWARDS[plan] = jax.jit(traced)
    return fn


def forward_formula(value, jvp, *arrays):
    """``value(*arrays)``; while an op's forward is traced for forward-mode AD
    (``JVP_TRACING``), with PyTorch's forward formula ``jvp(primals, tangents)`` as its JVP.

    Note [Forward formulas]: leafgrad's forward functions are written so that JAX's VJP gives
    PyTorch's backward formulas (ties, bounds, NaNs). Where PyTorch's forward formula for the op
    reads the same points otherwise (``clamp(x, min=t)`` gives ``min``'s tangent at a tie, its
    backward gives ``x`` the gradient), the forward names that formula here; reverse mode never
    sees it."""
    if not JVP_TRACING[0]:
        return value(*arrays)

    def rule(primals, tangents):
        return value(*primals), jvp(primals, given(tangents))

    f = jax.custom_jvp(value)
    f.defjvp(rule, symbolic_zeros=True)
    return f(*arrays)


def with_rules(value, backward_rule, forward_rule):
    """``value`` as two custom-JVP functions (``symbolic_zeros`` rules): one whose JVP is
    PyTorch's backward formula (reverse mode transposes it), one whose JVP is its forward
    formula. The op picks while it is traced (Note [Forward formulas]), so a rule JAX runs later
    (a torch.func jvp of the jitted program) is still the one picked."""
    pair = []
    for rule in (backward_rule, forward_rule):
        fn = jax.custom_jvp(value)
        fn.defjvp(rule, symbolic_zeros=True)
        pair.append(fn)

    def op(*args):
        return pair[1 if JVP_TRACING.count else 0](*args)

    return op


def given(tangents) -> list:
    """The tangents a ``symbolic_zeros`` JVP rule receives, None for an operand without one: as
    PyTorch's undefined (ZeroTensor) tangent, its terms drop out (``NaN * 0`` is no NaN there)."""
    from jax.custom_derivatives import SymbolicZero

    return [None if isinstance(t, SymbolicZero) else t for t in tangents]


def sum_terms(terms, value):
    """The sum of the present terms of a JVP (zeros without any), broadcast as ``value``."""
    import jax.numpy as jnp

    terms = [t for t in terms if t is not None]
    out = terms[0] if terms else jnp.zeros_like(value)
    for t in terms[1:]:
        out = out + t
    return jnp.broadcast_to(out, value.shape).astype(value.dtype)


def _any_tangent(tensors) -> bool:
    from .._tensor import Tensor

    return any(isinstance(t, Tensor) and tangent_of(t) is not None for t in tensors)


def refuse(name: str, formula: bool, inplace: bool = False):
    """PyTorch's NotImplementedError for ``name`` (Note [Forward AD not implemented])."""
    if formula:
        return NotImplementedError(NOT_IMPLEMENTED.format(name, "." if inplace else _OR_PR))
    return NotImplementedError(NOT_SUPPORTED.format(name))


def refuse_op(name: str, tensors) -> None:
    """Raise for the op ``name`` of ``_NO_FORWARD_FORMULA`` or ``_NO_DERIVATIVE`` (leafgrad's
    name) when one of ``tensors`` carries a tangent, before the op runs (as PyTorch's autograd
    kernel refuses before its kernel checks, warns or computes)."""
    if not refusing() or not _any_tangent(tensors):
        return
    if name in _NO_FORWARD_FORMULA:
        raise refuse(_NO_FORWARD_FORMULA[name], True)
    raise refuse(_NO_DERIVATIVE[name], False)


NESTED_TANGENT = (
    "Setting a forward grad that itself has a forward gradient at the same level{} is not "
    "supported."
)


def refuse_dual_reads(differentiated, read, error=None) -> None:
    """PyTorch's error where an op's forward formula reads an operand it does not differentiate
    (``read``: a loss's weights, batch norm's running statistics) that carries a tangent, while
    one of ``differentiated`` carries one: the formula's tangent would carry a tangent of its own
    (PyTorch's RuntimeError), or ``error``, the op's own check of that."""
    if ACTIVE[0] and refusing() and _any_tangent(read) and _any_tangent(differentiated):
        raise error or RuntimeError(NESTED_TANGENT.format(_state.level))


def refusing() -> bool:
    """Whether a refusal applies now: not inside the write an in-place refusal runs first, nor
    under inference mode (PyTorch's skips forward AD)."""
    from . import grad_mode

    return not (_state.untouched or _state.paused or grad_mode._state.inference)


def inplace_refused(name: str, tensors, run):
    """``run()``, the in-place method ``name + "_"`` of ``INPLACE_REFUSED``, where none of
    ``tensors`` carries a tangent. Otherwise PyTorch's error: before the write for an op
    without a derivative; after it for an op with a backward formula only, whose in-place
    kernel writes the values (the version moves, the tangent stays) before its autograd kernel
    refuses."""
    if not refusing() or not _any_tangent(tensors):
        return run()
    torch_name, formula = INPLACE_REFUSED[name]
    if formula:
        with paused(True):
            _state.untouched += 1
            try:
                run()
            finally:
                _state.untouched -= 1
    raise refuse(torch_name, formula, inplace=True)


ACTIVE = [0]  # 1 while a dual level is open (in any thread): dispatch looks no further while 0
_KEY = "_fw_grad"
_ROOT = "_fw_root"  # a view that starts a forward view relation (Note [Forward views])
_BASE = "_fw_base"  # the forward base of a view of such a tensor
_MADE = "_fw_made"  # a tangent leafgrad made (not one the caller gave ``make_dual``)


class _Level(threading.local):
    def __init__(self) -> None:
        self.level: int | None = None
        self.paused = 0  # inside a custom Function's forward, whose own jvp gives the tangents
        self.untouched = 0  # an in-place write that leaves the tangent as it is


_state = _Level()
_duals: dict = {}  # id -> weak reference of every tensor given a tangent at the open level
_lock = threading.Lock()


class UnpackedDualTensor(NamedTuple):
    """``unpack_dual``'s result: the primal (a view without a tangent) and the tangent."""

    primal: object
    tangent: object


def refuse_nesting() -> None:
    """PyTorch's error on entering a dual level inside another (``torch.func.jvp`` and the
    forward-mode jacobians enter one)."""
    if _state.level is not None:
        raise RuntimeError(NESTED)


def enter_dual_level() -> int:
    refuse_nesting()
    _state.level = 0
    with _lock:
        ACTIVE[0] += 1
    return 0


def exit_dual_level(*, level: int | None = None) -> None:
    if _state.level is None:
        raise RuntimeError("Trying to exit a forward AD level that was not the last one created.")
    _state.level = None
    with _lock:
        ACTIVE[0] -= 1
        refs = list(_duals.values())
        if not ACTIVE[0]:
            _duals.clear()
    for ref in refs:
        t = ref()
        if t is not None:
            t.__dict__.pop(_KEY, None)


class dual_level:
    """Context manager of a forward AD level: the tangents made inside are forgotten at exit."""

    def __enter__(self) -> int:
        return enter_dual_level()

    def __exit__(self, *exc) -> None:
        exit_dual_level()


def _level(level):
    if level is None:
        level = _state.level
    return level


def _set_tangent(t, tangent) -> None:
    t.__dict__[_KEY] = tangent
    key = id(t)
    with _lock:
        _duals[key] = weakref.ref(t, lambda ref, key=key: _forget(key, ref))


def _forget(key, ref) -> None:
    with _lock:
        if _duals.get(key) is ref:
            del _duals[key]


def tangent_of(t):
    """The tangent ``t`` carries at the open level, or None (Note [Forward views])."""
    if not ACTIVE[0]:
        return None
    d = t.__dict__
    tangent = d.get(_KEY)
    if tangent is not None or t._base is None:
        return tangent
    base = forward_base(t)
    if base is None:
        return None
    base_tangent = base.__dict__.get(_KEY)
    if base_tangent is None:
        return None
    return _view_tangent(t, base, base_tangent)


def forward_base(t):
    """The tensor whose tangent ``t``'s tangent is a view of, or None (Note [Forward views])."""
    d = t.__dict__
    base = d.get(_BASE)
    if base is not None:
        return base
    return None if _ROOT in d else t._base


def _view_tangent(t, base, base_tangent):
    """The view of ``base_tangent`` that ``t`` is of ``base``, sharing its storage; kept as
    ``t``'s tangent, as PyTorch's lazy view tangent is."""
    from .. import _storage as S
    from .._tensor import Tensor, _copy_strides

    steps = S.relative_chain(t, base)
    tangent = Tensor._make(S._apply(steps, base_tangent._data), t._dtype, t._device)
    tangent.__dict__[_MADE] = True
    _tangent_view(base_tangent, tangent, steps)
    _copy_strides(t, tangent)
    _set_tangent(t, tangent)
    return tangent


def _tangent_view(source, tangent, steps) -> None:
    """Make ``tangent`` the view ``steps`` make of the tangent ``source``: its storage, base and
    version counter (Note [Forward views])."""
    from .. import _storage as S

    S.share(source, tangent)
    chain = S.chain_of(source) + steps
    if chain:
        tangent.__dict__["_chain"] = chain
    tangent._base = source if source._base is None else source._base
    tangent._version_counter = source._version_counter


def _same_layout(a, b) -> bool:
    """PyTorch's ``has_same_meta``, which decides whether a tangent is kept as it is or copied
    into its primal's layout: the same shape, storage size and conj/neg bits, and (with elements)
    the same storage offset and strides, except those of size-1 dims (Note [Tangent
    layouts])."""
    from ..ops.tensor_info import storage_nbytes

    shape = tuple(a.shape)
    if (
        shape != tuple(b.shape)
        or storage_nbytes(a) // a._dtype.itemsize != storage_nbytes(b) // b._dtype.itemsize
        or a.is_conj() != b.is_conj()
        or a.is_neg() != b.is_neg()
    ):
        return False
    if 0 in shape:
        return True
    return a.storage_offset() == b.storage_offset() and all(
        n == 1 or x == y for n, x, y in zip(shape, a.stride(), b.stride())
    )


def _check_level(level, name: str):
    """PyTorch's level checks: none open (or a negative level) and a level other than the
    open one."""
    if level is None:
        level = _state.level
    if level is None or level < 0:
        return None
    if level != _state.level:
        if _state.level is None:
            raise RuntimeError(BAD_INDEX)
        raise RuntimeError(f"Invalid level given to {name}")
    return level


def _alias(tensor):
    """PyTorch's ``_make_dual`` and ``_fw_primal`` views: ``tensor``'s shape and strides, and a
    forward view relation of their own (Note [Forward views])."""
    from .._tensor import _copy_strides

    view = tensor.view_as(tensor)
    _copy_strides(tensor, view)
    view.__dict__.pop(_BASE, None)
    view.__dict__[_ROOT] = True
    return view


def _check_float(tensor, tangent) -> None:
    if not (tensor.dtype.is_floating_point or tensor.dtype.is_complex):
        raise ValueError(NOT_FLOAT.format("primal", tensor.dtype))
    if not (tangent.dtype.is_floating_point or tangent.dtype.is_complex):
        raise ValueError(NOT_FLOAT.format("tangent", tangent.dtype))


def check_dual(tensor, tangent, floats: bool = False) -> None:
    """``make_dual``'s checks of a primal and its tangent (``floats``: their dtypes first, as
    ``torch.func.jvp``'s ``make_dual`` calls run them)."""
    if floats:
        _check_float(tensor, tangent)
    if tuple(tangent.shape) != tuple(tensor.shape):
        raise RuntimeError(SIZE.format(list(tensor.shape), list(tangent.shape)))
    if tangent.dtype is not tensor.dtype:
        raise NotImplementedError(TANGENT_DTYPE.format(tangent.dtype, tensor.dtype))


def _no_level(level) -> bool:
    """No level to work at: none given and none entered, or a negative one."""
    return level is None and _state.level is None or level is not None and level < 0


def make_dual(tensor, tangent, *, level: int | None = None):
    """A view of ``tensor`` that carries ``tangent`` (Note [Forward AD])."""
    if _no_level(level):
        raise RuntimeError(NO_LEVEL)
    _check_float(tensor, tangent)
    level = _check_level(level, "_make_dual")
    if tangent_of(tensor) is not None:
        raise RuntimeError(ALREADY_DUAL.format(level))
    check_dual(tensor, tangent)
    with paused(True):
        dual = _alias(tensor)
    if not _same_layout(tangent, tensor):
        # PyTorch's set_fw_grad: a tangent laid out otherwise is copied into the primal's layout
        # (a copy_ into memory laid out as an expanded primal's is refused)
        from .. import _errors as E
        from .._tensor import Tensor, _copy_strides
        from ..ops.inplace import _overlaps

        if _overlaps(tensor):
            raise RuntimeError(E.INTERNAL_OVERLAP)

        copy = Tensor._make(tangent._data, tangent._dtype, tangent._device)
        _copy_strides(tensor, copy)
        tangent = copy
    _set_tangent(dual, tangent)
    return dual


def unpack_dual(tensor, *, level: int | None = None) -> UnpackedDualTensor:
    """``(primal, tangent)``: a view of ``tensor`` without a tangent, and its tangent (None when
    it has none, or outside a level)."""
    if _no_level(level):
        return UnpackedDualTensor(tensor, None)
    tangent = tangent_of(tensor)
    if tangent is not None:
        _check_level(level, "_fw_primal")
        _settle(tensor, tangent)
    elif level is not None and level != _state.level:
        return UnpackedDualTensor(tensor, None)
    with paused(True):
        primal = _alias(tensor)
    return UnpackedDualTensor(primal, tangent)


# --- custom Functions ----------------------------------------------------------------------------


def tangents_of(args) -> list | None:
    """The tangents of a Function's arguments (None for those without), or None if none has."""
    from .._tensor import Tensor

    found = [tangent_of(a) if isinstance(a, Tensor) else None for a in args]
    return found if any(t is not None for t in found) else None


class paused:
    """While active (``on``), ops give their results no tangents."""

    def __init__(self, on: bool) -> None:
        self.on = on

    def __enter__(self):
        if self.on:
            _state.paused += 1

    def __exit__(self, *exc) -> None:
        if self.on:
            _state.paused -= 1


def set_tangents(outputs, tangents) -> None:
    """A Function's ``jvp`` gave ``tangents`` for its ``outputs``."""
    from .._tensor import Tensor

    outs = outputs if isinstance(outputs, tuple) else (outputs,)
    tans = tangents if isinstance(tangents, tuple) else (tangents,)
    for o, t in zip(outs, tans):
        if isinstance(o, Tensor) and isinstance(t, Tensor):
            o.__dict__.pop(_KEY, None)
            _set_tangent(o, t)


# --- dispatch's side ---------------------------------------------------------------------------

_JVPS: dict = {}


def _jvp_function(plan, positions: tuple):
    """``(duals, tangents, others) -> (out, tangent_out)`` for ``plan``'s forward, jitted."""
    key = (plan, positions)
    fn = _JVPS.get(key)
    if fn is None:
        # the op's own Python forward, traced afresh (not its jitted program, traced already)
        # so that a forward can tell it is being differentiated (``JVP_TRACING``)
        forward = getattr(plan.forward, "__wrapped__", plan.forward)

        def jvp(duals, tangents, others):
            def f(*d):
                args = list(others)
                for i, x in zip(positions, d):
                    args[i] = x
                return forward(*args)

            JVP_TRACING[0] += 1
            try:
                return jax.jvp(f, tuple(duals), tuple(tangents))
            finally:
                JVP_TRACING[0] -= 1

        if len(_JVPS) > 4096:
            _JVPS.clear()
        fn = _JVPS[key] = jax.jit(jvp)
    return fn


def propagate(plan, op, operands, arrays, result) -> None:
    """Give ``result`` the tangents of the op's JVP where an operand has one (Note [Forward
    AD])."""
    from .. import _storage as S
    from .._tensor import Tensor, _copy_strides
    from . import grad_mode

    outs = result if isinstance(result, tuple) else (result,)
    source = operands[0] if operands else None
    view = False
    if isinstance(source, Tensor) and outs and isinstance(outs[0], Tensor):
        r = outs[0]
        if r._base is not None and r is not source and S.shares_storage(r, source):
            view = True  # Note [Forward views]: the view's forward base
            d = source.__dict__
            base = source if _ROOT in d else d.get(_BASE)
            if base is not None:
                for r in outs:
                    r.__dict__[_BASE] = base
    if _state.paused or grad_mode._state.inference:
        return
    positions = []
    tangents = []
    owners = []
    for i, o in enumerate(operands):
        if isinstance(o, Tensor):
            t = tangent_of(o)
            if t is not None:
                positions.append(i)
                tangents.append(t._data)
                owners.append((o, t))
    if not positions:
        return
    diff = getattr(op, "_diff_idx", None)
    if diff is not None:  # no tangent flows into an operand the op does not differentiate
        keep = [k for k, i in enumerate(positions) if i in diff]
        if len(keep) < len(positions):
            positions = [positions[k] for k in keep]
            tangents = [tangents[k] for k in keep]
            owners = [owners[k] for k in keep]
            if not positions:
                return
    reads = _FORWARD_READS.get(op.name)
    if reads is not None and not any(i in reads for i in positions):
        return
    if plan.moves_in or plan.target is not None:
        raise NotImplementedError(DEVICES)
    positions = tuple(positions)
    args = list(arrays)
    if plan.scalars:
        from ..ops.dispatch import _weak_scalars

        args = list(_weak_scalars(args, plan.scalars))
    if grad_mode._state.grad_enabled and (
        any(isinstance(o, Tensor) and o._requires_grad for o in operands)
        or any(t._requires_grad for _, t in owners)
    ):
        # PyTorch's forward formulas read the primals (``other_t * self_p + ...``), so its
        # tangent would require grad: leafgrad cannot give it PyTorch's graph
        raise NotImplementedError(FORWARD_OVER_REVERSE.format(op.name))
    duals = [args[i] for i in positions]
    try:
        _, out_tangent = _jvp_function(plan, positions)(duals, tangents, args)
    except RuntimeError as exc:  # an op without a derivative (``_no_derivative``)
        text = str(exc)
        if text.startswith("derivative for aten::") and text.endswith(" is not implemented"):
            name = text[len("derivative for aten::") : -len(" is not implemented")]
            raise refuse(name, False) from None
        raise
    except TypeError as exc:  # a custom VJP only: JAX cannot push a tangent through it
        if "custom_vjp" in str(exc):
            raise NotImplementedError(NO_JVP.format(op.name)) from None
        raise
    tans = out_tangent if isinstance(result, tuple) else (out_tangent,)
    source_tangent = owners[0][1] if view and positions[0] == 0 else None
    differentiable = getattr(op, "differentiable_outputs", None)
    for k, (r, t) in enumerate(zip(outs, tans)):
        if not isinstance(r, Tensor) or not (r.dtype.is_floating_point or r.dtype.is_complex):
            continue
        if differentiable is not None and k not in differentiable:
            continue  # an output PyTorch does not differentiate (lu's permutation) has none
        if any(r is o for o in operands):
            continue  # the op returned its operand: its tangent stays
        tangent = Tensor._make(t, r._dtype, r._device)
        tangent.__dict__[_MADE] = True
        if source_tangent is not None:
            # Note [Forward views]: the view's tangent is the same view of the source's tangent
            steps = S.chain_of(r)[len(S.chain_of(source)) :]
            _tangent_view(source_tangent, tangent, steps)
        _copy_strides(r, tangent)  # PyTorch lays a tangent out as its primal
        if len(owners) == 1 and source_tangent is None:
            if positions[0] in _COPIES_A_TANGENT.get(op.name, ()):
                o, given = owners[0]
                _settle(o, given)
                tangent.__dict__[_MADE] = (op.name, tuple(given._data.shape), given.stride())
            elif op.name in _ITERATED_TANGENT:
                tangent.__dict__[_MADE] = (op.name,)
        _set_tangent(r, tangent)


# Note [Tangent layouts]: PyTorch keeps a formula's tangent as it was made where it has its
# primal's layout up to the strides of size-1 dims (``has_same_meta``), and copies it into the
# primal's layout only otherwise. So the strides of a tangent's size-1 dims are its formula's.
# leafgrad lays every tangent out as its primal except for these ops: where one operand alone
# has a tangent, PyTorch's formula copies that tangent (``add``'s ZeroTensor kernel is
# ``_to_copy(t.expand(shape))``), keeping the strides its size-1 dims had. Measured on
# torch 2.13 (tests/test_forward_ad.py).
_COPIES_A_TANGENT = {
    "add": (0, 1),
    "sub": (0, 1),
    "where": (1, 2),
    "clamp_tensor": (0, 1, 2),
    "lerp_scalar": (0, 1),
    "lerp_tensor": (0, 1),
    "addcmul": (0,),  # ``self_t + value * (...)``: a copy where only ``self`` has a tangent
    "addcdiv": (0,),
    "copy": (1,),  # ``copy_``'s tangent where ``self`` has none
}
# ops whose tangent is a TensorIterator result of the input's tangent (and primal), where the
# primal is laid out otherwise: ``hardtanh_backward(self_t, ...)`` (the primal is a clone);
# ``number - x``'s ``-self_t`` (the primal is an iterator result with a wrapped number)
_ITERATED_TANGENT = frozenset({"nn.hardtanh", "rsub"})


def _settle(tensor, tangent) -> None:
    """Give a tangent leafgrad made its final strides: its primal's (which an op records after
    its tangents are made), or those of PyTorch's copy of one operand's tangent (Note [Tangent
    layouts])."""
    made = tangent.__dict__.get(_MADE)
    if made is None:
        return
    strides = tensor.__dict__.get("_strides")
    if made is not True:
        from .._factories import preserved_strides
        from ..ops.iterator_layout import contiguous_strides, iterator_strides
        from ..ops.shape import _expand_strides

        shape = tuple(tensor._data.shape)
        primal = strides if strides is not None else contiguous_strides(shape)
        if len(made) == 1:  # _ITERATED_TANGENT: two operands laid out as the primal
            copied = iterator_strides(shape, [(shape, primal)] * 2) or contiguous_strides(shape)
        else:
            copied = preserved_strides(shape, tuple(_expand_strides(made[1], made[2], shape)))
        if all(n <= 1 or a == b for n, a, b in zip(shape, copied, primal)):
            strides = None if copied == contiguous_strides(shape) else copied
    if tangent.__dict__.get("_strides") != strides:
        if strides is None:
            del tangent.__dict__["_strides"]
        else:
            tangent.__dict__["_strides"] = strides


def restrided(self, out) -> None:
    """An in-place shape change made ``self`` ``out``: its tangent is ``out``'s (the same view
    of the old tangent)."""
    tangent = out.__dict__.get(_KEY)
    if tangent is not None:
        _set_tangent(self, tangent)
        tangent._version_counter.value += 1  # PyTorch's formula restrides the tangent in place


def after_write(self, out) -> None:
    """An in-place op wrote ``out``'s value into ``self``: ``out``'s tangent (zeros if none) is
    written into ``self``'s tangent (Note [Forward views])."""
    from .. import _storage as S
    from .._tensor import Tensor, _copy_strides
    from . import grad_mode

    if grad_mode._state.inference or _state.untouched:
        return  # PyTorch's inference mode skips forward AD: the tangent is left as it was
    new = out.__dict__.get(_KEY) if out is not None else None
    old = tangent_of(self)
    if new is None and old is None:
        return
    if old is None:
        base = forward_base(self)
        if base is None:
            if new.__dict__.get(_MADE, True) is not True and new.__dict__[_MADE][0] != "copy":
                # an in-place formula's tangent is laid out as the op's result, not as a copy
                new.__dict__[_MADE] = True
            _settle(out, new)  # the tangent as the op's formula laid it out
            if new._dtype is not self._dtype or not _same_layout(new, self):
                new = Tensor._make(new._data.astype(self._dtype.np), self._dtype, self._device)
                _copy_strides(self, new)
            else:
                new.__dict__.pop(_MADE, None)  # its strides are final
            _set_tangent(self, new)
            return
        # a view whose base has no tangent: the base gets a zero tangent, the view a view of it
        zeros = Tensor._make(jax.numpy.zeros_like(base._data), base._dtype, base._device)
        _copy_strides(base, zeros)
        _set_tangent(base, zeros)
        old = _view_tangent(self, base, zeros)
    if new is None:
        value = jax.numpy.zeros_like(old._data)
    else:
        value = new._data.astype(old._dtype.np)
    with paused(True):
        S.write(old, value, uniform=new is None)
    old._version_counter.value += 1
