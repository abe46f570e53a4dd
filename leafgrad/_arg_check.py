"""PyTorch's argument parser's check of ``int`` arguments, for the ops ``_int_args`` lists.

leafgrad's frontends are Python functions: given ``x.tril(1.5)`` or ``x.topk(2.0)`` they would
compute something, where PyTorch's parser refuses the value before the op runs. ``install``
wraps each listed Tensor method and ``leafgrad`` function with that check:

- accepted: a Python int (not a bool), a NumPy integer, an object with ``__index__``, and an
  integer tensor of one element (PyTorch reads its value);
- refused with ``<op>(): argument '<name>' (position <n>) must be int, not <type>`` (no position
  for a keyword argument; a method counts from its first argument after ``self``, a function
  from ``input``): a float, a bool, a str, None, a float tensor, a tensor of several elements.

The same wrapping checks the ``float`` and ``Number`` (Scalar) arguments of those ops, and of
the ``torch.nn.functional`` functions that are (or call with their own arguments) one of PyTorch's
builtins (``NN_ARGS``): a Python or NumPy number, or a 0-d tensor that does not require grad, is
taken (a Python complex only for a Number); a tuple, a list, a str, None (unless optional) is
refused with ``... must be float|Number, not <type>``.

An int-list argument takes an int or a list/tuple of them (bools after the first element too)
and refuses the rest with the parser's ``must be tuple of ints`` messages; an optional argument
(``int?``, or an int list with a default) takes None. Overloaded ops (``sum``, ``std``,
``squeeze`` ...) refuse a call none of their signatures takes with the parser's list of
signatures (``_overloaded``).
"""

from __future__ import annotations

import dis
import functools
import inspect
import sys
import types

import jax
import numpy as np

from . import _errors as E
from ._dtype import dtype as _dtype_class
from ._int_args import (
    FUNCTIONS,
    INT_ARGS,
    METHODS,
    NAMESPACE_ARGS,
    NN_ARGS,
    NN_PASSED_ON,
    NONE_OK,
    OVERLOADED_FUNCTIONS,
    OVERLOADED_METHODS,
    VARARGS,
)
from ._parser_errors import SHARED_WITH_F

_DONE = "_leafgrad_int_checked"


_refused = E.int_refused


def _int_error(op: str, name: str, where: str, v) -> str | None:
    """The parser's message for ``v`` given as a ``SymInt`` argument, None if it takes it."""
    if not _refused(v):
        return None
    return f"{op}(): argument '{name}'{where} must be int, not {E.py_typename(v)}"


def _strict_int_error(op: str, name: str, where: str, v) -> str | None:
    """The parser's message for ``v`` given as a plain ``int`` argument, which takes a Python or
    NumPy int and a 0-d integer tensor, but not a tensor of more dims or another ``__index__``
    object (a ``SymInt`` takes those: ``_int_error``)."""
    Tensor = _tensor_type()
    if (
        isinstance(v, Tensor)
        and v._data.ndim != 0
        or (not isinstance(v, (int, np.integer, Tensor)) and hasattr(type(v), "__index__"))
    ):
        return f"{op}(): argument '{name}'{where} must be int, not {E.py_typename(v)}"
    return _int_error(op, name, where, v)


_ints_error = E.ints_error


def _bool_error(op: str, name: str, where: str, v) -> str | None:
    """The parser's message for ``v`` given as a ``bool`` argument: a Python bool only."""
    if type(v) is bool:
        return None
    return f"{op}(): argument '{name}'{where} must be bool, not {E.py_typename(v)}"


def _list_error(op: str, name: str, where: str, v) -> str | None:
    """The parser's message for ``v`` given as an ``int[]`` argument (no length), which takes
    no bare int where the parser does not spread it (``torch.flip(x, 0)``)."""
    if not isinstance(v, (list, tuple)) and not _refused(v):
        return f"{op}(): argument '{name}'{where} must be tuple of ints, not {E.py_typename(v)}"
    return _ints_error(op, name, where, v)


def _float_error(op: str, name: str, where: str, v) -> str | None:
    """The parser's message for ``v`` given as a ``float`` argument."""
    if not E.float_refused(v):
        return None
    return f"{op}(): argument '{name}'{where} must be float, not {E.py_typename(v)}"


def _number_error(op: str, name: str, where: str, v) -> str | None:
    """The parser's message for ``v`` given as a ``Scalar`` (``Number``) argument, which also
    takes a complex number."""
    if not E.number_refused(v):
        return None
    return f"{op}(): argument '{name}'{where} must be Number, not {E.py_typename(v)}"


def _dtype_error(op: str, name: str, where: str, v) -> str | None:
    """The parser's message for ``v`` given as a ``torch.dtype`` argument (Python's number
    types are taken for the dtypes they stand for)."""
    if E._matches("torch.dtype", v):
        return None
    return f"{op}(): argument '{name}'{where} must be torch.dtype, not {E.py_typename(v)}"


def _tensor_error(op: str, name: str, where: str, v) -> str | None:
    """The parser's message for ``v`` given as a ``Tensor`` argument (no number is wrapped)."""
    if isinstance(v, _tensor_type()):
        return None
    return f"{op}(): argument '{name}'{where} must be Tensor, not {E.py_typename(v)}"


def _tensors_error(op: str, name: str, where: str, v) -> str | None:
    """The parser's message for ``v`` given as a ``Tensor[]`` argument that is no list or tuple
    (its elements are the frontend's to check)."""
    if isinstance(v, (list, tuple)):
        return None
    return f"{op}(): argument '{name}'{where} must be tuple of Tensors, not {E.py_typename(v)}"


_CHECKS = {
    "dtype": _dtype_error,
    "tensor": _tensor_error,
    "int": _strict_int_error,
    "symint": _int_error,
    "ints": _ints_error,
    "list": _list_error,
    "bool": _bool_error,
    "float": _float_error,
    "number": _number_error,
    "tensors": _tensors_error,
}
# what a check passes at once
_PLAIN = {
    "int": int,
    "symint": int,
    "ints": int,
    "list": list,
    "bool": bool,
    "float": float,
    "number": float,
}
_PLAIN["dtype"] = _dtype_class


class _Never:
    """What no argument's type is: a list argument is always checked, for its elements."""


_PLAIN["ints"] = _PLAIN["list"] = _PLAIN["tensors"] = _Never
# passed on as given (``_as_int``: the int kinds)
_REAL_KINDS = ("float", "number", "dtype", "tensor", "tensors")


def _plain(kind: str) -> type:
    """The type a check of ``kind`` passes at once."""
    kind = kind.rstrip("?")
    return _tensor_type() if kind == "tensor" else _PLAIN[kind]


def check_ints(op: str, name: str, value, position: int | None) -> None:
    """Refuse ``value`` for the int-list argument ``name`` of ``op`` as PyTorch's parser does."""
    if type(value) is not int:
        where = "" if position is None else f" (position {position})"
        message = _ints_error(op, name, where, value)
        if message is not None:
            raise TypeError(message)


def check_int(op: str, name: str, value, position: int | None) -> None:
    """Refuse ``value`` for the ``int`` argument ``name`` of ``op`` as PyTorch's parser does
    (``position`` None: given by keyword)."""
    if type(value) is not int:
        message = _int_error(op, name, "" if position is None else f" (position {position})", value)
        if message is not None:
            raise TypeError(message)


def check_bool(op: str, name: str, value, position: int | None) -> None:
    """Refuse ``value`` for the ``bool`` argument ``name`` of ``op`` as PyTorch's parser does."""
    if type(value) is not bool:
        raise TypeError(
            _bool_error(op, name, "" if position is None else f" (position {position})", value)
        )


def _as_int(v):
    """A value the parser took, as the op reads it: NumPy integers, integer tensors of one
    element and ``__index__`` objects become ints (in lists too); a traced tensor stays."""
    from ._tensor import Tensor

    if isinstance(v, (list, tuple)):
        if type(v) not in (list, tuple) or all(type(item) is int for item in v):
            return v
        return type(v)(_as_int(item) for item in v)
    if isinstance(v, Tensor):
        return v if isinstance(v._data, jax.core.Tracer) else int(v)
    if isinstance(v, bool) or type(v) is int or not hasattr(type(v), "__index__"):
        return v
    return v.__index__()


def _pass(v):
    return v


_NUMPY_NAMES = (("axis", "dim"), ("keepdims", "keepdim"))


def _keyword_fixes(fn, names) -> tuple[dict, str | None]:
    """How a call's keywords reach ``fn`` as PyTorch's parser reads them: NumPy's ``axis`` and
    ``keepdims`` are ``dim`` and ``keepdim`` (where the op has them, ``names``); and the name of
    an int list ``fn`` takes spread out (``*dims``) when given by keyword (``dims=(0,)``)."""
    params = inspect.signature(fn).parameters
    kinds = inspect.Parameter
    named = {
        n for n, p in params.items() if p.kind in (kinds.POSITIONAL_OR_KEYWORD, kinds.KEYWORD_ONLY)
    }
    spread = next((n for n, p in params.items() if p.kind is kinds.VAR_POSITIONAL), None)
    renames = {a: t for a, t in _NUMPY_NAMES if t in names and a not in named}
    return renames, spread


def _fix_keywords(args: tuple, kwargs: dict, renames: dict, spread_name, first: int) -> tuple:
    for alias, target in renames.items():
        if alias in kwargs:
            kwargs[target] = kwargs.pop(alias)
    if spread_name is not None and spread_name in kwargs and len(args) == first:
        args = (*args, kwargs.pop(spread_name))
    return args


# a function's typed arguments by the name its parser messages give it (``linalg_cross``)
_FUNCTION_ARGS = {
    **{n: a for n, a in INT_ARGS.items() if n in FUNCTIONS},
    **{f"{space}_{n}": a for space, table in NAMESPACE_ARGS.items() for n, a in table.items()},
}


_METHOD_ARGS = {n: a for n, a in INT_ARGS.items() if n in METHODS}


def _check_listed(op: str, name: str, v) -> None:
    """Refuse ``v`` given by keyword for the int list ``name`` (no length) of ``op``."""
    if isinstance(v, (list, tuple)):
        message = _ints_error(op, name, "", v)
    else:
        message = f"{op}(): argument '{name}' must be tuple of ints, not {E.py_typename(v)}"
    if message is not None:
        raise TypeError(message)


def _positional_limit(fn) -> int | None:
    """How many positional arguments ``fn`` takes (None: any number)."""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return None
    kinds = inspect.Parameter
    if any(p.kind is kinds.VAR_POSITIONAL for p in params):
        return None
    return sum(p.kind in (kinds.POSITIONAL_ONLY, kinds.POSITIONAL_OR_KEYWORD) for p in params)


def _checked(fn, op: str, ints: dict, method: bool, by_position: bool = False):
    shift = 0 if method else 1  # a function counts ``input`` as position 1
    renames, spread_param = _keyword_fixes(fn, set(ints) | {"keepdim"})
    # the table's int list at the place ``fn`` takes spread out, by its PyTorch name
    spread_name = None
    if spread_param is not None:
        spread_name = next(
            (
                n
                for n, (i, kw, kind) in ints.items()
                if i == 1 and kind.startswith(("ints", "list"))
            ),
            None,
        )
    # an int list without a length given by keyword: a list only (``x.permute(dims=1)``)
    listed = spread_name is not None and ints[spread_name][2].rstrip("?") == "list"
    spread = None
    if method and op in VARARGS:
        spread = next(name for name, (i, kw_only, _) in ints.items() if i == 1 and not kw_only)
        # the parser spreads it: a bare int is a list of one
        ints = {n: (i, kw, "ints" if n == spread else kind) for n, (i, kw, kind) in ints.items()}
    positional = tuple(
        (
            i,
            name,
            _CHECKS[kind.rstrip("?")],
            kind.endswith("?"),
            f" (position {i + shift})",
            _plain(kind),
            _pass if kind.rstrip("?") in _REAL_KINDS else _as_int,
        )
        for name, (i, kw_only, kind) in ints.items()
        if not kw_only
    )
    keywords = tuple(
        (
            name,
            f" (position {i + shift})" if by_position else "",
            _CHECKS[kind.rstrip("?")],
            kind.endswith("?"),
            _plain(kind),
            _pass if kind.rstrip("?") in _REAL_KINDS else _as_int,
        )
        for name, (i, _, kind) in ints.items()
    )

    # a function whose frontend takes the list spread out, which PyTorch's parser does only for
    # a method (``torch.permute(x, 1, 0)`` is refused)
    most = None
    if not method and spread_param is not None:
        from ._parser_errors import FUNCTIONS as _SHOWN

        entry = _SHOWN.get(op)
        if entry is not None and entry[0] == "single" and entry[4] is not None:
            takes = entry[4]
            most = (takes, int(takes.split()[-3 if " to " in takes else 0]))

    # a function's count of positional parameters: more arguments than that are refused by
    # their count before any of their types (Python's words, or the parser's, which are the same)
    limit = None if method else _positional_limit(fn)

    @functools.wraps(fn)
    @E.wrapper
    def checked(*args, **kwargs):
        if kwargs and (renames or spread_name):
            if listed and spread_name in kwargs and len(args) == 1:
                _check_listed(op, spread_name, kwargs[spread_name])
            args = _fix_keywords(args, kwargs, renames, spread_name, 1)
        n = len(args)
        if limit is not None and n > limit:
            return fn(*args, **kwargs)
        if most is not None and n > most[1]:
            raise TypeError(f"{op}() takes {most[0]} but {n} were given")
        if spread is not None and n > 2:
            message = E.spread_ints_error(op, spread, args[1:])
            if message is not None:
                raise TypeError(message)
            return fn(*args, **kwargs)
        for i, name, check, optional, where, plain, convert in positional:
            if i < n:
                v = args[i]
                if type(v) is not plain and not (optional and v is None):
                    message = check(op, name, where, v)
                    if message is not None:
                        raise TypeError(message)
                    args = (*args[:i], convert(v), *args[i + 1 :])
        if kwargs:
            for name, where, check, optional, plain, convert in keywords:
                if name in kwargs:
                    v = kwargs[name]
                    if type(v) is not plain and not (optional and v is None):
                        message = check(op, name, where, v)
                        if message is not None:
                            raise TypeError(message)
                        kwargs[name] = convert(v)
        return fn(*args, **kwargs)

    setattr(checked, _DONE, True)
    return checked


def _unpack_error(op: str, signatures: tuple, args: tuple, kwargs: dict) -> str | None:
    """The error PyTorch's parser raises at once, while it tries the signatures in order, for an
    int list whose first element it took and a later one it cannot (``sum((0, 1.5))``)."""
    for sig in signatures:
        params = E._parameters(sig)
        if len(args) > sum(not p[3] for p in params):
            continue
        for i, (type_name, pname, optional, _) in enumerate(params):
            if i < len(args):
                v = args[i]
            elif pname in kwargs:
                v = kwargs[pname]
            else:
                continue
            if type_name == "tuple of ints" and isinstance(v, (list, tuple)) and v:
                if not E.item_refused(v[0]):
                    message = _ints_error(op, pname, "", v)
                    if message is not None:
                        return message
            if not (v is None and optional or E._matches(type_name, v)):
                break
    return None


def _slot_types(signatures: tuple) -> tuple[dict, dict]:
    """Per position and per keyword: the types some signature takes there."""
    positions: dict = {}
    keywords: dict = {}
    for sig in signatures:
        for i, (type_name, name, _, kw_only) in enumerate(E._parameters(sig)):
            if not kw_only:
                positions.setdefault(i, set()).add(type_name)
            keywords.setdefault(name, set()).add(type_name)
    return positions, keywords


def _plainly_taken(v, types: set, none_ok: bool) -> bool:
    """A quick test that some signature takes ``v`` here (False: let ``E.bind`` decide)."""
    kind = type(v)
    if kind is int:
        return "int" in types or "tuple of ints" in types
    if v is None:
        return none_ok
    if kind is bool:
        return "bool" in types
    if kind is tuple or kind is list:
        return "tuple of ints" in types and all(type(e) is int for e in v)
    if isinstance(v, _CLASSES[0]):
        return "Tensor" in types
    if isinstance(v, _CLASSES[1]):
        return "torch.dtype" in types
    return False


_CLASSES: list = []  # Tensor and dtype, set by ``install``


def _overloaded(fn, op: str, signatures: tuple, method: bool):
    """``fn`` refusing, as PyTorch's parser, a call that none of ``signatures`` takes. A call
    whose arguments each plainly fit some signature passes at once; the others are bound to a
    signature (``E.bind``) or refused, and their NumPy integers and integer tensors become
    ints where the signature takes ints."""
    positions, keywords = _slot_types(signatures)
    # per signature: how many positional arguments it takes, and after n of them the names it
    # takes and those it requires (``x.sort(0, stable=True)`` fits none: ``stable`` comes with a
    # keyword-only ``dim``; ``x.max(keepdim=True)`` neither: ``keepdim`` comes with ``dim``)
    shapes = []
    for sig in signatures:
        params = E._parameters(sig)
        shapes.append((sum(not p[3] for p in params), params))
    fits: dict = {}

    def keywords_fit(rest: tuple, names: frozenset) -> bool:
        """Whether some signature takes these keywords after ``len(rest)`` positional
        arguments, and plainly takes those arguments."""
        n = len(rest)
        key = (n, names)
        candidates = fits.get(key)
        if candidates is None:
            candidates = fits[key] = tuple(
                params
                for positional, params in shapes
                if n <= positional
                and names <= {p[1] for p in params[n:]}
                and all(p[1] in names for p in params[n:] if not p[2])
            )
        return any(
            all(
                _plainly_taken(v, (params[i][0],), params[i][1] in takes_none)
                for i, v in enumerate(rest)
            )
            for params in candidates
        )

    takes_none = NONE_OK.get(op, frozenset())
    none_at = {
        i: any(
            p[1] in takes_none and not p[3]
            for sig in signatures
            for p in E._parameters(sig)[i : i + 1]
        )
        for i in positions
    }
    first = 1 if method else 0  # ``self`` is not in a method's printed signatures
    renames, _ = _keyword_fixes(fn, set(keywords))
    # a function whose signatures start with other than the input tensor (``randint``'s
    # ``high`` or ``low``) is bound each call: its slots' types do not tell its overloads apart
    always_bind = not method and any(
        E._parameters(s)[:1] != E._parameters(signatures[0])[:1]
        or E._parameters(s)[0][0] != "Tensor"
        for s in signatures
    )

    @functools.wraps(fn)
    @E.wrapper
    def checked(*args, **kwargs):
        if kwargs and renames:
            _fix_keywords(args, kwargs, renames, None, 1)
        rest = args[first:]
        plain = not always_bind
        for i in range(0 if method else 1, len(rest) if plain else 0):
            if not _plainly_taken(rest[i], positions.get(i, ()), none_at.get(i, False)):
                plain = False
                break
        if plain and kwargs:
            if not keywords_fit(rest, frozenset(kwargs)):
                plain = False
            else:
                for k, v in kwargs.items():
                    if not _plainly_taken(v, keywords.get(k, ()), k in takes_none):
                        plain = False
                        break
        if plain:
            return fn(*args, **kwargs)
        bound = E.bind(signatures, rest, kwargs)
        if bound is None:
            raise TypeError(
                _unpack_error(op, signatures, rest, kwargs)
                or E.invalid_arguments(op, signatures, rest, kwargs)
            )
        params = E._parameters(signatures[bound[0]])
        types = {p[1]: p[0] for p in params}
        rest = tuple(
            _as_int(v) if i < len(params) and params[i][0] in _INT_TYPES else v
            for i, v in enumerate(rest)
        )
        kwargs = {k: _as_int(v) if types.get(k) in _INT_TYPES else v for k, v in kwargs.items()}
        return fn(*args[:first], *rest, **kwargs)

    setattr(checked, _DONE, True)
    return checked


_INT_TYPES = ("int", "tuple of ints")


def _wrap(owner, name: str, make):
    """Replace ``owner.<name>`` with ``make(it)`` once; the new function, or None."""
    fn = getattr(owner, name, None)
    if fn is None or getattr(fn, _DONE, False):
        return None
    wrapped = make(fn)
    setattr(owner, name, wrapped)
    return wrapped


def install(namespace) -> None:
    """Wrap the listed ``Tensor`` methods and ``namespace`` (``leafgrad``) functions."""
    from ._dtype import dtype
    from ._tensor import Tensor
    from .nn import functional as F

    _CLASSES[:] = [Tensor, dtype]
    for name in METHODS:
        _wrap(Tensor, name, lambda fn, n=name: _checked(fn, n, INT_ARGS[n], True))
    for name in FUNCTIONS:
        fn = getattr(namespace, name, None)
        wrapped = _wrap(namespace, name, lambda fn, n=name: _checked(fn, n, INT_ARGS[n], False))
        if wrapped is not None and name in SHARED_WITH_F and getattr(F, name, None) is fn:
            setattr(F, name, wrapped)  # PyTorch's F has the same function (cosine_similarity)
    for name, args in NN_ARGS.items():
        passed_on = name in NN_PASSED_ON
        _wrap(F, name, lambda fn, n=name, a=args, p=passed_on: _checked(fn, n, a, False, p))
    from . import linalg

    # its Number and dtype arguments (other linalg functions are overloaded over them)
    ords = {**NAMESPACE_ARGS["linalg"]["vector_norm"], "dtype": (4, True, "dtype?")}
    _wrap(linalg, "vector_norm", lambda fn: _checked(fn, "linalg_vector_norm", ords, False))
    for space, table in NAMESPACE_ARGS.items():  # PyTorch names them ``linalg_cross``...
        module = getattr(namespace, space)
        for name, args in table.items():
            op = f"{space}_{name}"
            _wrap(module, name, lambda fn, n=op, a=args: _checked(fn, n, a, False))
    for name, sigs in OVERLOADED_METHODS.items():
        _wrap(Tensor, name, lambda fn, n=name, s=sigs: _overloaded(fn, n, s, True))
    for name, sigs in OVERLOADED_FUNCTIONS.items():
        _wrap(namespace, name, lambda fn, n=name, s=sigs: _overloaded(fn, n, s, False))


# Note [NumPy keyword aliases]: PyTorch's argument parser takes ``axis`` for ``dim`` and
# ``keepdims`` for ``keepdim`` in every op it binds (``x.median(axis=0)``); its Python-level
# functions (``Tensor.norm``, ``split``, ``unique``, ``unique_consecutive``, ``unflatten``) do
# not. ``install_aliases`` wraps the frontends that take a ``dim`` (outermost, last installed);
# a call without those keywords pays one dictionary check.
_PYTHON_LEVEL = frozenset({"norm", "split", "unflatten", "unique", "unique_consecutive"})
_ALIASES = (("axis", "dim"), ("keepdims", "keepdim"))
_ALIASED = "_leafgrad_numpy_aliases"


def _with_aliases(fn):
    @functools.wraps(fn)
    @E.wrapper
    def aliased(*args, **kwargs):
        if kwargs:
            for alias, name in _ALIASES:
                if alias in kwargs and name not in kwargs:
                    kwargs[name] = kwargs.pop(alias)
        return fn(*args, **kwargs)

    setattr(aliased, _ALIASED, True)
    return aliased


# frontends that take their arguments as ``*args``, whose signatures do not show the ``dim``
_VARIADIC_DIM = frozenset({"trapezoid", "cumulative_trapezoid", "index_fill", "index_fill_"})


def frontend_takes(fn, wanted, variadic: frozenset = frozenset()) -> bool:
    """Whether ``wanted(parameter names)`` holds for frontend ``fn``; the frontends named in
    ``variadic`` parse ``*args``/``**kwargs`` themselves and count as taking them."""
    if getattr(fn, "__name__", None) in variadic:
        return True
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
    return wanted(params)


def _takes_dim(fn) -> bool:
    return frontend_takes(
        fn, lambda p: ("dim" in p or "keepdim" in p) and "axis" not in p, _VARIADIC_DIM
    )


def install_aliases(*owners) -> None:
    """Note [NumPy keyword aliases] for the public callables of ``owners`` (``Tensor`` and the
    modules whose functions PyTorch binds in C++: ``torch``, ``linalg``, ``special``, ``fft``)."""
    from .nn import functional as F

    for owner in owners:
        python_level = _PYTHON_LEVEL if owner.__name__ in ("Tensor", "leafgrad") else ()
        for name in list(vars(owner)):
            fn = vars(owner)[name]
            if (
                name.startswith("_")
                or name in python_level
                or isinstance(fn, type)
                or not callable(fn)
                or getattr(fn, _ALIASED, False)
                or not _takes_dim(fn)
            ):
                continue
            wrapped = _with_aliases(fn)
            setattr(owner, name, wrapped)
            if getattr(F, name, None) is fn:  # one function in both (pairwise_distance)
                setattr(F, name, wrapped)


# Note [Python-level methods]: PyTorch writes these Tensor methods in Python (torch/_tensor.py),
# so Python itself reports a wrong keyword or argument count, naming ``Tensor.norm()``; leafgrad's
# frontends for them (some shared with ``leafgrad.<name>``, whose messages name ``norm()``) are
# given a copy with that qualified name.
_TENSOR_PYTHON_METHODS = (
    "dim_order",
    "eig",
    "istft",
    "lstsq",
    "lu",
    "norm",
    "solve",
    "split",
    "stft",
    "symeig",
    "unflatten",
    "unique",
    "unique_consecutive",
)


def _renamed(fn, qualname: str):
    """A copy of ``fn`` named ``qualname``, and of the functions it wraps (``__wrapped__``, held
    in its closure), down to the one whose signature Python checks."""
    inner = getattr(fn, "__wrapped__", None)
    closure = fn.__closure__
    if inner is not None and closure:
        new_inner = _renamed(inner, qualname)
        closure = tuple(
            types.CellType(new_inner) if c.cell_contents is inner else c for c in closure
        )
    copy = types.FunctionType(fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__, closure)
    copy.__kwdefaults__ = fn.__kwdefaults__
    copy.__dict__.update(fn.__dict__)
    if inner is not None and closure is not fn.__closure__:
        copy.__wrapped__ = new_inner
    copy.__doc__, copy.__module__, copy.__qualname__ = fn.__doc__, fn.__module__, qualname
    return copy


# the names Python gives torch.functional's functions: the ones behind a boolean dispatch
_FUNCTION_QUALNAMES = {
    "lu": "_lu_no_infos",
    "norm": "norm",
    "unique": "_return_output",
    "unique_consecutive": "_consecutive_return_output",
}


# and torch.nn.functional's: behind a boolean dispatch, or a builtin of another name
_F_QUALNAMES = {
    **{
        f"{kind}_max_pool{n}d": f"_{kind}_max_pool{n}d" for kind in ("adaptive",) for n in (1, 2, 3)
    },
    **{f"fractional_max_pool{n}d": f"_fractional_max_pool{n}d" for n in (2, 3)},
    **{f"max_pool{n}d": f"_max_pool{n}d" for n in (1, 2, 3)},
    "threshold": "_threshold",
    "logsigmoid": "log_sigmoid",
}


# the Tensor methods PyTorch writes in Python (torch/_tensor.py): Python names them
# ``Tensor.<name>``; its other methods are C methods, named ``<name>`` alone
_TORCH_PYTHON_METHODS = frozenset(
    {
        *_TENSOR_PYTHON_METHODS,
        "backward",
        "index",
        "is_shared",
        "module_load",
        "register_hook",
        "register_post_accumulate_grad_hook",
        "reinforce",
        "resize",
        "resize_as",
        "share_memory_",
        "storage",
        "storage_type",
        "to_sparse_coo",
    }
)


def name_python_methods(tensor_type, module) -> None:
    """Note [Python-level methods]: ``Tensor``'s, ``module``'s (``leafgrad``) and its
    ``nn.functional``'s. Tensor's other methods are named as PyTorch's C methods, so that
    Python's message for a keyword one does not take names ``float()``, not ``Tensor.float()``
    or the frontend's own name (``legacy_qr()``, ``transpose()`` for ``swapaxes``)."""
    for name, fn in list(vars(tensor_type).items()):
        if name.startswith("_") or not isinstance(fn, types.FunctionType):
            continue
        qualname = f"Tensor.{name}" if name in _TORCH_PYTHON_METHODS else name
        if inspect.unwrap(fn).__qualname__ != qualname:
            setattr(tensor_type, name, _renamed(fn, qualname))
    for owner, table in ((module, _FUNCTION_QUALNAMES), (module.nn.functional, _F_QUALNAMES)):
        for name, qualname in table.items():
            fn = getattr(owner, name)
            if isinstance(fn, types.FunctionType) and fn.__qualname__ != qualname:
                setattr(owner, name, _renamed(fn, qualname))


def refuse_method_out(tensor_type) -> None:
    """PyTorch's Tensor methods take no ``out=``; the frontends leafgrad installs as both a
    function and a method take one by their signature (``x.frexp(out=t)`` wrote nothing and
    returned a new tensor): the methods refuse it with Python's words for PyTorch's method."""
    from ._parser_errors import METHODS

    for name, fn in list(vars(tensor_type).items()):
        if name.startswith("_") or not callable(fn) or isinstance(fn, type):
            continue
        try:
            params = inspect.signature(inspect.unwrap(fn)).parameters
        except (TypeError, ValueError):
            continue
        if "out" not in params:
            continue
        entry = METHODS.get(name)
        if entry is not None and entry[0] == "noargs":
            message = f"TensorBase.{name}() takes no keyword arguments"
        else:
            qualname = f"Tensor.{name}" if name in _TENSOR_PYTHON_METHODS else name
            message = f"{qualname}() got an unexpected keyword argument 'out'"
        setattr(tensor_type, name, _out_refused(fn, message))


def _out_refused(fn, message: str):
    @functools.wraps(fn)
    def method(self, *args, **kwargs):
        if "out" in kwargs:
            raise TypeError(message)
        return fn(self, *args, **kwargs)

    return method


# Note [Parser errors on the error path]: PyTorch's argument parser refuses a call that binds to
# none of a function's signatures before any kernel runs (``torch.exp([1.5])``: "exp():
# argument 'input' (position 1) must be Tensor, not list"). leafgrad's frontends are Python
# functions that fail their own way on such calls (an AttributeError on the list); checking every
# call would cost each op, so the check runs only once the frontend has raised: a call the parser
# would have refused gets the parser's TypeError (table: leafgrad/_parser_errors.py, read from
# PyTorch's messages), any other error goes on as raised. Tensor methods are wrapped the same way
# (``install_method_parser_errors``; the in-place ones ``_make_inplace`` makes consult the table
# themselves), so that ``x.abs(1)`` says what Python says of PyTorch's C method, and so are
# torch.linalg/special/fft's functions (PyTorch's messages name them ``linalg_det``...).
def _parser_message(name: str, entry, args: tuple, kwargs: dict, owner=None) -> str | None:
    """``owner``: ``(self, the caller's frame)`` of a method call."""
    kind = entry[0]
    if kind == "noargs":
        if not args and not kwargs:
            return None
        prefix = entry[1] if owner is None else _method_prefix(name, *owner)
        if kwargs:  # Python checks these first
            return f"{prefix}.{name}() takes no keyword arguments"
        return f"{prefix}.{name}() takes no arguments ({len(args)} given)"
    if kind == "tensors":  # ``*tensors`` or one list of them
        items = args[0] if len(args) == 1 and isinstance(args[0], (list, tuple)) else args
        return _non_tensor_element(items)
    if kind == "overloaded":
        # only the parser's plainest refusals: each signature refuses the call by its count of
        # (positional) arguments or by its first parameter's type (leafgrad's own errors stand
        # for the rest)
        signatures, numbers_ok = entry[1], entry[2]
        params = [E._parameters(s) for s in signatures]
        first = args[0] if args else None
        n = len(args) + len(kwargs)

        def refuses(p) -> bool:
            positional = sum(not q[3] for q in p)
            if args and positional and p[0][0] == "tuple of ints":
                if positional == 1 and not E.item_refused(first):
                    return False  # sizes spread out (``x.view(2, 3)``): the parser's varargs
                if isinstance(first, (list, tuple)) and first and not E.item_refused(first[0]):
                    return False  # a list read as ints fails while unpacked, with its own text
            if len(params) > 1 and any(k not in {q[1] for q in p} for k in kwargs):
                return True  # a keyword the signature does not have (none hidden: see below)
            return (
                # one signature shown: others are hidden (``add_(Number alpha, Tensor other)``,
                # a deprecated form), which may take more positional arguments
                len(params) > 1
                and len(args) > positional
                or not sum(not q[2] for q in p) <= n <= len(p)
                or bool(args)
                and bool(p)
                # an int list may take None without showing it (``int[1]? dim`` is printed
                # "tuple of ints dim"); other parameters that take None show a default None
                and (first is not None or p[0][0] != "tuple of ints" and not p[0][2])
                and not p[0][3]
                and not (numbers_ok and E._is_number(first))
                and not E._takes(p[0][0], p[0][1], first)
            )

        refused = all(refuses(p) for p in params)
        if not refused or E.bind(signatures, args, kwargs) is not None:
            return None
        return E.invalid_arguments(name, signatures, args, kwargs)
    _, pname, first_type, numbers_ok, takes, required = entry
    # sizes spread out (``x.reshape(2, 3)``): the parser's varargs, for a lone int list
    spread = first_type == "tuple of ints" and takes == "1 positional argument"
    spread = spread and args and not E.item_refused(args[0])
    if spread:
        takes = None
    if takes is not None and len(args) > int(takes.split()[-3 if " to " in takes else 0]):
        return f"{name}() takes {takes} but {len(args)} {'was' if len(args) == 1 else 'were'} given"
    if args and pname is not None:
        first = args[0]
        refused = False
        if first is None:
            refused = pname in required  # an optional parameter may take None
        elif first_type == "tuple of Tensors":
            if not isinstance(first, (list, tuple)):
                refused = True
            else:
                # index_put's indices are ``Tensor?[]``: None stands for a whole dim
                message = _non_tensor_element(first, name.startswith("index"))
                if message is not None:
                    return message
        elif first_type == "Tensor":
            refused = not (isinstance(first, _tensor_type()) or numbers_ok and E._is_number(first))
        elif first_type == "tuple of ints" and isinstance(first, (list, tuple)):
            message = E.ints_error(name, pname, " (position 1)", first)
            if message is not None:
                return message
        elif not spread:
            refused = not E._takes(first_type, pname, first)
        if refused:
            return E.MUST_BE.format(name, pname, 1, first_type, E.py_typename(first))
    missing = [p for p in required[len(args) :] if p not in kwargs]
    if spread:  # the int list given spread out: its elements were checked above
        typed = None
    elif owner is None:
        typed = _FUNCTION_ARGS.get(name)
    else:  # an in-place method's arguments are its out-of-place form's
        typed = _METHOD_ARGS.get(name)
        if typed is None and name.endswith("_"):
            typed = _METHOD_ARGS.get(name[:-1])
    if typed is not None:
        # the parser takes the parameters in order: the first missing or wrongly typed one
        first = _first_typed_error(name, typed, args, kwargs, shift=0 if owner is None else 1)
        if missing:
            at = typed[missing[0]][0] if missing[0] in typed else required.index(missing[0])
            if first is None or at < first[0]:  # named: every required one from there on
                return E.missing_args(name, required[required.index(missing[0]) :])
        return None if first is None else first[1]
    # a missing argument, unless a keyword argument before it, whose type the parser checks
    # first, was given (the table knows the first parameter's type only)
    if missing and not any(k in required[len(args) : required.index(missing[0])] for k in kwargs):
        # and the positional ones after the first are of types most parameters take
        if all(type(a) in (int, float) or isinstance(a, _tensor_type()) for a in args[1:]):
            return E.missing_args(name, required[required.index(missing[0]) :])
    return None


def inplace_message(name: str, self, args: tuple, kwargs: dict, frame) -> str | None:
    """The parser's message for in-place method ``name`` called on ``self`` with ``args``/
    ``kwargs`` from ``frame``, None when they bind (Note [Parser errors on the error path]):
    the table's, else that of the typed arguments its out-of-place form has (``INT_ARGS``)."""
    from ._parser_errors import METHODS

    entry = METHODS.get(name)
    if entry is not None:
        message = _parser_message(name, entry, args, kwargs, (self, frame))
        if message is not None:
            return message
        if name in ("clamp_", "clip_") and E.bind(entry[1], args, kwargs) is None:
            # bounds of both kinds (``min=t, max=1.0``): neither overload binds
            return E.invalid_arguments(name, entry[1], args, kwargs, entry[2])
    ints = INT_ARGS.get(name[:-1])
    return None if ints is None else _typed_args_message(name, ints, args, kwargs)


def _typed_args_message(op: str, ints: dict, args: tuple, kwargs: dict) -> str | None:
    """The parser's message for the first of a method's ``args``/``kwargs`` (after ``self``)
    that the type of its parameter in ``ints`` refuses, else None."""
    first = _first_typed_error(op, ints, args, kwargs)
    return None if first is None else first[1]


def _first_typed_error(op: str, ints: dict, args: tuple, kwargs: dict, shift: int = 1):
    """``(schema index, message)`` of the first of ``args``/``kwargs`` (a method's after
    ``self``; ``shift`` 0: a function's) that the type of its parameter in ``ints`` refuses,
    else None."""
    for name, (i, kw_only, kind) in sorted(ints.items(), key=lambda item: item[1][0]):
        if not kw_only and i - shift < len(args):
            v, where = args[i - shift], f" (position {i + 1 - shift})"
        elif name in kwargs:
            v, where = kwargs[name], ""
        else:
            continue
        if v is None and kind.endswith("?"):
            continue
        message = _CHECKS[kind.rstrip("?")](op, name, where, v)
        if message is not None:
            return i, message
    return None


def _method_prefix(name: str, self, frame) -> str:
    """How Python names a C method in its "takes no arguments" message: PyTorch's methods are
    descriptors of ``TensorBase``; a call through the descriptor (``x.abs(1)``, which Python
    compiles to a method load, or ``Tensor.abs(x, 1)``) is named ``TensorBase.abs``, a call of a
    bound method object (``f = x.abs; f(1)``) by the class of ``self`` (``Parameter.abs``)."""
    code, lasti = frame.f_code, frame.f_lasti
    call = None
    loads = []
    for ins in dis.get_instructions(code):  # the call: the last instruction up to f_lasti
        if ins.offset > lasti:
            break
        call = ins
        if ins.argval == name and (
            ins.opname == "LOAD_METHOD"  # Python 3.11; from 3.12 a LOAD_ATTR with its low bit
            or ins.opname == "LOAD_ATTR"
            and sys.version_info >= (3, 12)
            and ins.arg & 1
        ):
            loads.append(ins)
    if call is not None and call.positions is not None:
        start = (call.positions.lineno, call.positions.col_offset)
        if any(
            ins.positions is not None and (ins.positions.lineno, ins.positions.col_offset) == start
            for ins in loads
        ):
            return "TensorBase"
    return type(self).__qualname__


def _is_int_tensor(v) -> bool:
    return isinstance(v, _tensor_type()) and v.dtype.is_floating_point is False and v.ndim == 0


def _non_tensor_element(items, none_ok: bool = False) -> str | None:
    for i, t in enumerate(items):
        if not isinstance(t, _tensor_type()) and not (none_ok and t is None):
            return f"expected Tensor as element {i} in argument 0, but got {E.py_typename(t)}"
    return None


def _tensor_type():
    from ._tensor import Tensor

    return Tensor


# Note [out= arguments]: ``torch.add(a, b, out=c)`` computes the result, checks it can be cast
# to ``c``'s dtype, resizes ``c`` if its shape differs (warning when ``c`` had elements) and
# writes the result into it (one version bump), returning ``c``; in grad mode, when any argument
# requires grad and the result is differentiable (floating or complex), PyTorch refuses the
# call (out= functions are not differentiable). A function of several results takes a tuple of
# as many tensors, each of its result's dtype (the kernels word the check differently:
# ``_out_dtypes_error``), and returns them as ``torch.return_types.<name>_out``. A factory
# makes its result in ``out``'s dtype (``factory_out``). Every check runs before anything is
# written: a refused call leaves the out tensors as they were (PyTorch resizes some first).
# Which functions take ``out=`` is PyTorch's bindings' answer (tools/gen_parser_errors.py:
# TAKES_OUT; OUT_PARAMS and FACTORY_OUT below); its Tensor methods take none.
def _needs_grad(x) -> bool:
    tensor = _tensor_type()
    if isinstance(x, tensor):
        return x.requires_grad
    return isinstance(x, (list, tuple)) and any(
        isinstance(t, tensor) and t.requires_grad for t in x
    )


def _call_with_out(fn, name: str, args: tuple, kwargs: dict):
    from .autograd import grad_mode

    out = kwargs.pop("out")
    if out is None:
        return fn(*args, **kwargs)
    tensor = _tensor_type()
    outs = tuple(out) if isinstance(out, (tuple, list)) else (out,)
    if not outs or not all(isinstance(o, tensor) for o in outs):
        raise TypeError(E.KW_MUST_BE.format(name, "out", "Tensor", E.py_typename(out)))
    from .func import refuse_traced_out

    refuse_traced_out(name, (*args, *kwargs.values()))  # Note [Captured tensors]
    refuse = grad_mode.is_grad_enabled() and (
        any(_needs_grad(a) for a in (*args, *kwargs.values())) or any(o.requires_grad for o in outs)
    )
    if name == "ldexp" and outs[0].dtype._kind in "bui":  # the composite's first check
        if refuse:  # its result is floating: the autograd check comes first
            raise RuntimeError(E.OUT_REQUIRES_GRAD.format(name))
        raise RuntimeError(
            f"ldexp can't be cast to the desired output type {E.scalar_type_name(outs[0].dtype)}"
        )
    if name == "heaviside":
        _heaviside_out([a for a in (*args, *kwargs.values()) if isinstance(a, tensor)], outs[0])
    from . import _zero

    for o in outs:  # PyTorch's ZeroTensor fallback refuses an out= op before it runs
        _zero.check_write(o)
    with grad_mode.no_grad():
        try:
            result = fn(*args, **kwargs)
        except NotImplementedError as err:
            if len(outs) == 1 and E.kernel_refusal(err) and name not in _BOOL_OUT:
                _refused_dtype_cast(err, outs[0])
            raise
    if name in _BOOL_OUT and outs[0].dtype._kind not in "bc":
        if any(isinstance(a, tensor) and a.dtype.is_complex for a in args):
            E.warn_once(E.COMPLEX_TO_REAL)  # the comparison of complex inputs is cast to out's
    results = result if isinstance(result, tuple) else (result,)
    if refuse and any(r.dtype.is_floating_point or r.dtype.is_complex for r in results):
        raise RuntimeError(E.OUT_REQUIRES_GRAD.format(name))  # a differentiable result
    if len(results) != len(outs):
        if len(results) > 1 and isinstance(out, (tuple, list)):
            raise TypeError(f"expected tuple of {len(results)} elements but got {len(outs)}")
        raise TypeError(E.KW_MUST_BE.format(name, "out", "tuple of Tensors", E.py_typename(out)))
    if len(results) > 1 and name not in _CAST_OUTS:
        message = _out_dtypes_error(name, results, outs)
        if message is not None:
            raise RuntimeError(message)
    for k, (o, r) in enumerate(zip(outs, results)):
        if name in _CAST_ANY:
            r = r.to(o.dtype)
        write_out(o, r, name)
        if name == "svd" and k == 2:  # PyTorch's svd_out copies V once more
            o._version_counter.value += 1
    return out_result(result, outs, out)


# comparisons: the iterator's outputs are bool whatever the inputs' common dtype
_BOOL_OUT = frozenset("lt le gt ge eq ne greater greater_equal less less_equal not_equal".split())


def _heaviside_out(tensors, out) -> None:
    """heaviside's meta function requires inputs and ``out`` of one real dtype, before its
    iterator checks their shapes."""
    from .ops.special_ops import HEAVISIDE_COMPLEX, HEAVISIDE_DTYPES

    dtypes = {t.dtype for t in (*tensors, out)}
    if any(d.is_complex for d in dtypes):
        raise RuntimeError(HEAVISIDE_COMPLEX)
    if len(dtypes) > 1:
        raise RuntimeError(HEAVISIDE_DTYPES)


def _refused_dtype_cast(err, out) -> None:
    """A kernel refused the iterator's common dtype (the one its message names): the iterator
    has first checked that dtype casts to ``out``'s."""
    from . import _dtype as D

    legacy = str(err).rpartition(" for '")[2].rstrip("'")
    common = next((d for d in D.ALL if d._legacy == legacy), None)
    if common is not None and not D.can_cast(common, out.dtype):
        raise RuntimeError(
            E.RESULT_CAST.format(E.scalar_type_name(common), E.scalar_type_name(out.dtype))
        ) from None


# the functions whose out takes any dtype, the result converted (bernoulli's samples)
_CAST_ANY = frozenset({"bernoulli"})


# the functions of several results whose out tensors take any dtype the results cast to; the
# others' must have the results' dtypes (each kernel words its check)
_CAST_OUTS = frozenset({"geqrf", "linalg_lstsq"})


def _out_dtypes_error(name: str, results: tuple, outs: tuple) -> str | None:
    """PyTorch's message for the first out tensor of a function of several results whose dtype
    is not its result's, None when all match."""
    order = range(len(results))
    if name in ("median", "nanmedian"):
        order = reversed(order)  # the indices are checked first
    for k in order:
        want, got = results[k].dtype, outs[k].dtype
        if want == got:
            continue
        c_want, c_got = E.c_type_name(want), E.c_type_name(got)
        s_want, s_got = E.scalar_type_name(want), E.scalar_type_name(got)
        if name == "kthvalue":
            if k == 0:
                return "output values must be of same type as input"
            return "output indices must be of scalar type Long"
        if name == "mode":
            return f"expected scalar type '{s_want}' but got '{s_got}' for {_VI[k]} output"
        if name in ("median", "nanmedian"):
            cpu = results[k].device
            if k == 1:
                return (
                    "Expected tensor for argument #1 'indices' to have scalar type Long; but got "
                    f"{E.tensor_type_name(got, cpu)} instead (while checking arguments for median)"
                )
            return (
                "Expected tensor for 'values' to have the same type as tensor for argument #2 "
                f"'self'; but type {E.tensor_type_name(got, cpu)} does not equal "
                f"{E.tensor_type_name(want, cpu)} (while checking arguments for median)"
            )
        if name in ("cummax", "cummin"):
            return f"expected scalar_type {s_want} but found {s_got}"
        if name == "frexp":
            if k == 0:
                return f"torch.frexp() expects mantissa to have dtype {c_want} but got {c_got}"
            return f"torch.frexp() expects exponent to have int dtype but got {c_got}"
        if name == "histogram":
            part = ("hist", "bin_edges")[k]
            return (
                f"torch.histogram: input tensor and {part} tensor should have the same dtype, "
                f"but got input {c_want} and {part} {c_got}"
            )
        return f"Expected out tensor to have dtype {c_want}, but got {c_got} instead"
    return None


_VI = ("values", "indices")


def out_param(name: str):
    """Decorate a frontend whose ``out=`` Note [out= arguments] handles: the call computes
    without it, then writes the results into the out tensors (``name``: the function as
    PyTorch's messages name it, ``linalg_qr``)."""

    def wrap(fn):
        @functools.wraps(fn)
        @E.wrapper
        def call(*args, **kwargs):
            if kwargs.get("out") is None:
                kwargs.pop("out", None)
                return fn(*args, **kwargs)
            return _call_with_out(fn, name, args, kwargs)

        return call

    return wrap


_RANDOM_OUT = ("rand", "randn", "randperm", "normal")  # (PyTorch's vmap lets randint's by)


def factory_out(name: str):
    """Decorate a factory whose ``out=`` PyTorch takes (``torch.zeros(2, out=t)``): the result
    is made in ``out``'s dtype (a ``dtype`` that differs is refused), then written into it."""

    def wrap(fn):
        @functools.wraps(fn)
        @E.wrapper
        def call(*args, **kwargs):
            out = kwargs.pop("out", None)
            if out is None:
                return fn(*args, **kwargs)
            if not isinstance(out, _tensor_type()):
                raise TypeError(E.KW_MUST_BE.format(name, "out", "Tensor", E.py_typename(out)))
            dtype = kwargs.get("dtype")
            if dtype is None:
                kwargs["dtype"] = out.dtype
            elif dtype != out.dtype:
                raise RuntimeError(
                    f"dtype {E.scalar_type_name(dtype)} does not match dtype of out parameter "
                    f"({E.scalar_type_name(out.dtype)})"
                )
            from .autograd import grad_mode

            if name in _RANDOM_OUT:
                from . import _random as R

                if R.DRAW_CHECK[0] is not None:  # Note [Randomness in vmap]
                    from .func import refuse_random_out

                    refuse_random_out()
            if out.requires_grad and grad_mode.is_grad_enabled():
                raise RuntimeError(E.OUT_REQUIRES_GRAD.format(f"aten::{name}"))
            requires_grad = kwargs.pop("requires_grad", False)
            result = fn(*args, **kwargs)
            if name == "randn" and tuple(out.shape) != tuple(result.shape):
                out._version_counter.value += 1  # PyTorch's randn_out resizes through resize_
            write_out(out, result, name)
            if requires_grad:
                out.requires_grad_(True)
            return out

        return call

    return wrap


# Note [out= arguments], the frontends that take ``out=`` by their signature and leave it to
# these wrappers (they computed a new tensor and left ``out`` as it was): ``{name: PyTorch's
# name for it}``, ``ns.name`` for torch.linalg and torch.fft
OUT_PARAMS = {
    **{
        name: name
        for name in (
            "searchsorted",
            "bucketize",
            "polar",
            "complex",
            "frexp",
            "signbit",
            "histogram",
            "triangular_solve",
            "orgqr",
            "geqrf",
            "bernoulli",
            "tensordot",
            "qr",
            "svd",
            "norm",
            "lu_solve",
            "lu_unpack",
            "cholesky_solve",
            "cholesky_inverse",
        )
    },
    **{
        f"linalg.{name}": f"linalg_{name}"
        for name in (
            "householder_product",
            "inv_ex",
            "cholesky_ex",
            "qr",
            "eigh",
            "eigvalsh",
            "svd",
            "svdvals",
            "pinv",
            "vecdot",
            "cond",
            "matrix_norm",
            "norm",
            "vector_norm",
            "multi_dot",
            "matrix_power",
            "lu_factor_ex",
            "lu_factor",
            "lu",
            "solve_ex",
            "solve",
            "solve_triangular",
            "lu_solve",
            "cholesky",
            "inv",
            "tensorinv",
            "tensorsolve",
        )
    },
    **{
        f"fft.{kind}{name}{n}": f"fft_{kind}{name}{n}"
        for kind in ("", "i", "r", "ir", "h", "ih")
        for name in ("fft",)
        for n in ("", "2", "n")
    },
}
FACTORY_OUT = {
    **{
        name: name
        for name in (
            "zeros",
            "ones",
            "empty",
            "full",
            "arange",
            "range",
            "linspace",
            "logspace",
            "eye",
            "rand",
            "randn",
            "randint",
            "randperm",
        )
    },
    "fft.fftfreq": "fft_fftfreq",
    "fft.rfftfreq": "fft_rfftfreq",
}


def install_out_params(module) -> None:
    """Note [out= arguments]: wrap the functions of OUT_PARAMS and FACTORY_OUT."""
    for table, wrap in ((OUT_PARAMS, out_param), (FACTORY_OUT, factory_out)):
        for path, name in table.items():
            space, _, attr = path.rpartition(".")
            owner = getattr(module, space) if space else module
            setattr(owner, attr, wrap(name)(getattr(owner, attr)))


_OUT_TYPES: dict = {}


def out_result(result, outs: tuple, out):
    """What an ``out=`` call returns: ``out`` as given, or, where the function returns a
    ``torch.return_types`` structseq, the out tensors as its ``<name>_out`` type
    (``torch.max(x, 1, out=(v, i))`` gives ``torch.return_types.max_out``)."""
    fields = getattr(type(result), "_fields", None)
    if not fields or not isinstance(result, tuple):
        return out
    cls = _OUT_TYPES.get(type(result))
    if cls is None:
        from .ops.reductions import return_type

        cls = _OUT_TYPES[type(result)] = return_type(type(result).__name__ + "_out", fields)
    return cls(*outs)


def write_out(out, result, name: str = ""):
    """Write ``result`` into the ``out=`` tensor (Note [out= arguments]): PyTorch's cast check,
    its resize (warning when ``out`` had elements), one version bump; returns ``out``."""
    from . import _dtype as D
    from .autograd import grad_mode

    if not D.can_cast(result.dtype, out.dtype):
        raise RuntimeError(
            E.RESULT_CAST.format(E.scalar_type_name(result.dtype), E.scalar_type_name(out.dtype))
        )
    from .func import captured_writable

    with grad_mode.no_grad(), captured_writable():  # out= is no in-place op to a transform
        if tuple(out.shape) == tuple(result.shape):
            out.copy_(result)
            return out
        if out._base is not None:
            raise NotImplementedError(
                f"leafgrad: {name}(out=...) cannot resize a view to the result's shape"
            )
        if out.numel():
            E.warn(E.OUT_RESIZED.format(list(out.shape), list(result.shape)))
        out.set_(result.to(out.dtype, copy=True))
    return out


# Note [Stale views before the kernel's checks]: PyTorch's autograd layer collects a
# differentiable op's edges before its kernel checks the arguments, so a view made in no_grad
# mode whose base was then written with grad mode on raises its own error (``view_grad_fn``)
# before a shape or dim error. leafgrad's frontends check arguments before dispatch: on their
# error path, a stale view among the arguments raises first. The composites PyTorch runs in
# Python or before its autograd layer check their arguments first (``_CHECKS_FIRST``); ops
# that record nothing (``differentiable=()``) collect no edges; in-place ops check the written
# tensor first (``check_inplace``) and keep their own errors.
_CHECKS_FIRST = frozenset(
    {
        "narrow",
        "flatten",
        "unflatten",
        "chunk",
        "tensor_split",
        "hsplit",
        "vsplit",
        "dsplit",
        "movedim",
        "moveaxis",
        "dropout",
        "pad",
        "diff",
        "einsum",
        "size",
        "stride",
        "fill_diagonal_",
        "float_power_",
    }
)


# in-place methods that are no kernel's autograd wrapper (no check_inplace): the Python maps
# refuse any tensor that requires grad in their own words
_NOT_KERNELS = frozenset(
    {
        "detach_",
        "requires_grad_",
        "set_",
        "resize_",
        "resize_as_",
        "share_memory_",
        "apply_",
        "map_",
        "map2_",
    }
)


def _stale_view_first(name: str, err, args, kwargs) -> None:
    """Note [Stale views before the kernel's checks]."""
    if type(err) not in (RuntimeError, IndexError) or name in _CHECKS_FIRST:
        return
    if kwargs.get("out") is not None:  # out= kernels record nothing: they collect no edges
        return
    if name.startswith(("new_", "__")) or name.endswith("_like"):  # factories: no edges
        return
    from ._storage import stale_view_error
    from .autograd import grad_mode

    if not grad_mode._state.grad_enabled or grad_mode._state.inference:
        return
    Tensor = _tensor_type()
    tensors = [
        t
        for a in (*args, *kwargs.values())
        for t in (a if isinstance(a, (list, tuple)) else (a,))
        if isinstance(t, Tensor)
    ]
    if name[-1] == "_":  # PyTorch's check_inplace comes first (its version check after)
        if name == "copy_" and args and isinstance(args[0], Tensor):
            if not (args[0]._dtype.is_floating_point or args[0]._dtype.is_complex):
                return  # copy_'s autograd kernel checks only a differentiable ``self``
        if args and isinstance(args[0], Tensor) and name not in _NOT_KERNELS:
            from .ops.inplace import check_inplace

            check_inplace(args[0], any(t._requires_grad for t in tensors), writes_first=True)
        return
    from .ops.table import OPS

    op = OPS.get(name)
    if op is not None and op.differentiable == ():
        return
    for t in tensors:
        if t._base is not None and t._requires_grad:
            msg = stale_view_error(t)
            if msg is not None:
                raise RuntimeError(msg) from None


def _with_parser_errors(fn, name: str, entry, takes_out: bool = False):
    @functools.wraps(fn)
    @E.wrapper
    def parsed(*args, **kwargs):
        try:
            if takes_out and "out" in kwargs:
                return _call_with_out(fn, name, args, dict(kwargs))
            return fn(*args, **kwargs)
        except (TypeError, AttributeError, ValueError, RuntimeError, IndexError) as err:
            message = _parser_message(name, entry, args, kwargs)
            if message is None:
                message = _unexpected_keyword(err, name, kwargs) or _as_given(
                    err, name, entry, args, kwargs
                )
                if message is None:
                    _stale_view_first(name, err, args, kwargs)
                    raise
        raise TypeError(message)

    return parsed


def _as_given(err, name: str, entry, args: tuple, kwargs: dict) -> str | None:
    """An overloaded frontend's own "invalid combination" TypeError, worded for the call as
    given: the method's or the function's signatures, and the keywords as keywords
    (``x.clamp(min=t, max=1.0)``)."""
    if type(err) is not TypeError or entry[0] != "overloaded":
        return None
    if not str(err).startswith(f"{name}() received an invalid combination of arguments"):
        return None
    return E.invalid_arguments(name, entry[1], args, kwargs, entry[2])


def _unexpected_keyword(err, name: str, kwargs: dict) -> str | None:
    """Python's refusal of a keyword the frontend ``fn`` does not take, worded with PyTorch's
    name for the function (``linalg_matrix_exp() got an unexpected keyword argument 'out'``,
    where Python names ``matrix_exp`` or ``Tensor.clone``)."""
    if type(err) is not TypeError or not kwargs:
        return None
    text = str(err)
    sep = "() got an unexpected keyword argument '"
    _, found, key = text.partition(sep)
    if found and key[:-1] in kwargs:
        return f"{name}{sep}{key}"
    if text.endswith("() takes no keyword arguments"):  # a method's refusal, seen by a function
        return f"{name}{sep}{next(iter(kwargs))}'"
    return None


def _spread_size(entry) -> bool:
    """Whether the sizes are the only positional argument, which PyTorch also takes spread."""
    if entry[0] == "single":
        return entry[1] == "size" and entry[5] == ("size",)
    return entry[0] == "overloaded" and any(
        s.startswith(("(tuple of ints size, *", "(tuple of ints size)")) for s in entry[1]
    )


def _method_with_parser_errors(fn, name: str, entry):
    @functools.wraps(fn)
    @E.wrapper
    def parsed(self, *args, **kwargs):
        try:
            return fn(self, *args, **kwargs)
        except (TypeError, AttributeError, ValueError, RuntimeError, IndexError) as err:
            message = _parser_message(name, entry, args, kwargs, (self, sys._getframe(1)))
            if message is None:
                message = _as_given(err, name, entry, args, kwargs)
            if message is None:
                _stale_view_first(name, err, (self, *args), kwargs)
                raise
        raise TypeError(message)

    parsed._parses = True
    parsed._unparsed = fn
    return parsed


def install_method_parser_errors(tensor_type) -> None:
    """Note [Parser errors on the error path] for ``tensor_type``'s (``Tensor``'s) methods: each
    one PyTorch's parser binds, unless its frontend consults the table itself (``_parses``)."""
    from ._parser_errors import METHODS

    for name, entry in METHODS.items():
        for klass in tensor_type.__mro__:
            fn = vars(klass).get(name)
            if fn is not None:
                break
        if isinstance(fn, types.FunctionType) and not getattr(fn, "_parses", False):
            setattr(tensor_type, name, _method_with_parser_errors(fn, name, entry))


def install_parser_errors(module, names=None) -> None:
    """Note [Parser errors on the error path] for ``module``'s (``leafgrad``'s) functions (only
    ``names`` when given: functions set on the module later)."""
    from ._parser_errors import FUNCTIONS, NAMESPACES, TAKES_OUT
    from .nn import functional as F

    for name, entry in FUNCTIONS.items():
        if names is not None and name not in names:
            continue
        fn = getattr(module, name, None)
        if fn is None or isinstance(fn, type) or _spread_size(entry):
            continue  # the factories (``zeros(2, 3)``) parse their sizes themselves
        wrapped = _with_parser_errors(fn, name, entry, name in TAKES_OUT)
        setattr(module, name, wrapped)
        # F's function stays its own unless PyTorch's F and torch share the builtin
        if name in SHARED_WITH_F and getattr(F, name, None) is fn:
            setattr(F, name, wrapped)
    if names is not None:
        return
    for space, table in NAMESPACES.items():  # linalg, special, fft: named linalg_det...
        namespace = getattr(module, space)
        for name, entry in table.items():
            fn = getattr(namespace, name, None)
            if fn is not None and not isinstance(fn, type):
                takes_out = f"{space}.{name}" in TAKES_OUT
                wrapped = _with_parser_errors(fn, f"{space}_{name}", entry, takes_out)
                setattr(namespace, name, wrapped)


# Note [Deprecated overloads]: PyTorch's parser still binds the old forms of the BLAS-like ops,
# with the scalars first: ``addcmul_(value, tensor1, tensor2)`` (legacy Adam's
# ``exp_avg_sq.addcmul_(1 - beta2, grad, grad)``), ``addmm(beta, input, alpha, mat1, mat2)``,
# ``x.addmm(beta, mat1, mat2)``. They compute what the keyword forms compute, after one warn-once
# warning that names the form; they are hidden from its error messages, which show the current
# signatures only. (add and sub's ``(Number alpha, Tensor other)`` live in their frontends.)
# Each form lists the function's parameters; a method's drop ``input`` and the ``out=``.
_MATRIX_FORMS = {
    "addmm": ("mat1", "mat2"),
    "addbmm": ("batch1", "batch2"),
    "baddbmm": ("batch1", "batch2"),
    "addmv": ("mat", "vec"),
    "addr": ("vec1", "vec2"),
}
DEPRECATED_FORMS = {
    **{
        name: ((("input", "T"), ("value", "N"), ("tensor1", "T"), ("tensor2", "T")),)
        for name in ("addcmul", "addcdiv")
    },
    **{
        name: (
            (("beta", "N"), ("input", "T"), ("alpha", "N"), (a, "T"), (b, "T")),
            (("beta", "N"), ("input", "T"), (a, "T"), (b, "T")),
        )
        for name, (a, b) in _MATRIX_FORMS.items()
    },
}


def _deprecated_call(form, method: bool, args: tuple, kwargs: dict):
    """``(tensors, scalars)`` of a call that ``form`` binds, else None."""
    params = [p for p in form if not (method and p[0] == "input")]
    if len(args) != len(params) or any(method or k != "out" for k in kwargs):
        return None
    tensors, scalars = [], {}
    for (pname, kind), x in zip(params, args):
        if kind == "T":
            if not isinstance(x, _tensor_type()):
                return None
            tensors.append(x)
        else:
            value = E.scalar_argument(x)
            if value is None:
                return None
            scalars[pname] = value
    return tensors, scalars


def _printed_form(form, method: bool) -> str:
    kinds = {"T": "Tensor", "N": "Number"}
    parts = [f"{kinds[k]} {p}" for p, k in form if not (method and p == "input")]
    return f"({', '.join(parts)})" if method else f"({', '.join(parts)}, *, Tensor out = None)"


def _with_deprecated_forms(fn, name: str, spell: str, method: bool):
    from ._parser_errors import FUNCTIONS, METHODS

    shown = (METHODS if method else FUNCTIONS)[spell][1]
    numbers = name in ("add", "sub")  # their Tensor ``other`` takes a number

    forms = DEPRECATED_FORMS.get(name, ())

    @functools.wraps(fn)
    @E.wrapper
    def call(*args, **kwargs):
        rest = args[1:] if method else args
        if len(rest) > 2:  # every current form takes at most two tensors by position
            for form in forms:
                found = _deprecated_call(form, method, rest, kwargs)
                if found is not None:
                    E.warn_deprecated_overload(spell, method, _printed_form(form, method))
                    tensors, scalars = found
                    if method:
                        return fn(args[0], *tensors, **scalars)
                    return fn(*tensors, **scalars, **kwargs)  # and ``out=``
        try:
            return fn(*args, **kwargs)
        except (TypeError, AttributeError, ValueError, RuntimeError, IndexError):
            # when neither a hidden form (add/sub's frontends bind theirs) nor the shown
            # signatures take the call, the parser's message is the shown ones' alone
            if E.bind(shown, rest, kwargs, numbers) is not None or (
                name in ("add", "sub")
                and E.alpha_form(rest if method else rest[1:], kwargs) is not None
            ):
                raise
        raise TypeError(E.invalid_arguments(spell, shown, rest, kwargs, numbers))

    return call


def install_deprecated_forms(Tensor, namespace) -> None:
    """Wrap the functions and methods with deprecated forms (Note [Deprecated overloads]),
    outermost: a call in an old form is rewritten before any other check sees it."""
    for name in (*DEPRECATED_FORMS, "add", "sub"):
        setattr(
            namespace, name, _with_deprecated_forms(getattr(namespace, name), name, name, False)
        )
        for spell in (name, name + "_"):
            setattr(
                Tensor, spell, _with_deprecated_forms(getattr(Tensor, spell), name, spell, True)
            )


# Note [Overloads bound before the call]: a function or method with several signatures (or one
# shown with hidden ones) runs only when one of PyTorch's shown signatures binds its arguments,
# as PyTorch's parser binds them: ``torch.std_mean(x, 0, 1)``, ``x.median(0, 1)``,
# ``torch.randint_like(x, 1.5)`` were computed (an int read as a bool, a float as an int). A
# call of tensors alone binds or fails in the frontend as before; others are bound once per
# pattern of argument types (``_bind_key``: what ``E.bind`` reads of each argument).
_ALIAS_OF = dict(_ALIASES)
_NOT_BOUND_FIRST = frozenset(
    {*DEPRECATED_FORMS, *(n + "_" for n in DEPRECATED_FORMS), "add", "sub", "add_", "sub_"}
)
_BOUND: dict = {}
# parameters whose schemas take None wherever they appear, though a printed signature may show
# no default (``div(other, *, str rounding_mode)``, ``rand(..., generator)``)
_NONE_WHEREVER = frozenset(
    {"rounding_mode", "pin_memory", "requires_grad", "generator", "dtype", "spacing"}
    | {"stride", "padding", "dilation"}
)


def _bind_key(a):
    t = type(a)
    if t is int or t is float or a is None or t is bool or t is str:
        return t
    if isinstance(a, _tensor_type()):
        return (_CLASSES[0], a.ndim, a._data.size == 1, a._dtype, a._requires_grad)
    if t is list or t is tuple:
        return (t, tuple([_bind_key(e) for e in a]))
    if t is type:  # a class given as a value (``dtype=int``): not the key of an int (``5``)
        return ("class", a)
    return t


def _call_key(head: tuple, args: tuple, kwargs: dict) -> tuple:
    """A cache key of a call: ``head`` and what binding reads of each argument."""
    return (
        *head,
        tuple([_bind_key(a) for a in args]),
        tuple([(k, _bind_key(v)) for k, v in kwargs.items()]),
    )


def _binds(name: str, entry, method: bool, rest: tuple, kwargs: dict) -> bool:
    key = _call_key((name, method), rest, kwargs)
    found = _BOUND.get(key)
    if found is None:
        signatures, numbers = entry[1], entry[2]
        # the dims the schemas take None for (``int[1]? dim``), which the printed ones hide
        base = name.rstrip("_")
        none_ok = NONE_OK.get(base[:-5] if base.endswith("_mean") else base, frozenset())
        none_ok = none_ok | _NONE_WHEREVER
        found = E.bind(signatures, rest, kwargs, numbers, none_ok) is not None or (
            # the parser's varargs int lists (``x.view(2, 3)``, ``x.permute(1, 0)``)
            bool(rest)
            and not isinstance(rest[0], bool)
            and not E.item_refused(rest[0])
            and E.bind(signatures, (list(rest),), kwargs, numbers, none_ok) is not None
        )
        _remember(key, found)
    return found


def _remember(key: tuple, found: bool) -> None:
    """Cache whether a call pattern binds (``_binds``, ``check_call``), bounded."""
    if len(_BOUND) > 50_000:
        _BOUND.clear()
    _BOUND[key] = found


def _tensor_slots(signatures) -> int:
    """How many leading positional parameters some signature types ``Tensor``: a call of that
    many tensors or fewer binds without a check (``conv1d(x, w, b, stride)`` with a tensor
    ``stride`` does not)."""
    most = 0
    for sig in signatures:
        n = 0
        for type_name, _, _, kw_only in E._parameters(sig):
            if kw_only or type_name.rstrip("?") != "Tensor":
                break
            n += 1
        most = max(most, n)
    return most


def _bound_first(fn, name: str, entry, method: bool):
    tensor = _tensor_type()
    slots = _tensor_slots(entry[1])

    @functools.wraps(fn)
    @E.wrapper
    def call(*args, **kwargs):
        rest = args[1:] if method else args
        if kwargs or len(rest) > slots or any(not isinstance(a, tensor) for a in rest):
            kw = kwargs
            if "axis" in kw or "keepdims" in kw:  # Note [NumPy keyword aliases]
                kw = {_ALIAS_OF.get(k, k): v for k, v in kw.items()}
            if not _binds(name, entry, method, rest, kw):
                message = _unpack_error(name, entry[1], rest, kw) or _spread_error(
                    name, entry[1], rest, method
                )
                raise TypeError(
                    message or E.invalid_arguments(name, entry[1], rest, kwargs, entry[2])
                )
        return fn(*args, **kwargs)

    return call


# torch.median/nanmedian: the table read one of their signatures (the other takes no dim)
_MEDIAN = (
    "overloaded",
    (
        "(Tensor input)",
        "(Tensor input, int dim, bool keepdim = False, *, tuple of Tensors out = None)",
    ),
    False,
)


def _spread_error(name: str, signatures: tuple, rest: tuple, method: bool) -> str | None:
    """The parser's message for an int list given spread out to a method whose signature takes
    it as its one positional argument (``x.view(2, 1.5)``)."""
    if not method or len(rest) < 2 or E.item_refused(rest[0]):
        return None
    for sig in signatures:
        positional = [p for p in E._parameters(sig) if not p[3]]
        if len(positional) == 1 and positional[0][0] == "tuple of ints":
            return E.spread_ints_error(name, positional[0][1], rest)
    return None


def install_bound_first(Tensor, namespace) -> None:
    """Note [Overloads bound before the call]: wrap the overloaded functions and methods,
    outermost."""
    from ._parser_errors import FUNCTIONS, METHODS

    functions = {**FUNCTIONS, "median": _MEDIAN, "nanmedian": _MEDIAN}
    for table, owner, method in ((METHODS, Tensor, True), (functions, namespace, False)):
        for name, entry in table.items():
            fn = getattr(owner, name, None)
            if entry[0] == "overloaded" and callable(fn) and name not in _NOT_BOUND_FIRST:
                wrapped = _bound_first(fn, name, entry, method)
                setattr(owner, name, wrapped)
                if not method and name in SHARED_WITH_F:
                    from .nn import functional as F

                    if getattr(F, name, None) is fn:
                        setattr(F, name, wrapped)


# Note [Single signatures bound]: the parser's error tables keep a single-signature function's
# first argument only, which the frontends check; the functions below took a later argument
# the parser refuses (``torch.dropout_(x, 0.5, 1)``, ``F.threshold(x, t, 2.0)`` with a tensor
# threshold, ``x.fill_diagonal_(1, 2)``, ``torch.pinverse(x, None)``), so their calls are bound
# to PyTorch's signature first (once per pattern of argument types). ``F.dropout`` and the
# other Python-level functions of ``torch.nn.functional`` that call these bind them with
# ``check_call`` where PyTorch's Python calls the native function.
_DROPOUT = "(Tensor input, float p, bool train)"
SINGLE_SIGNATURES = {
    **{
        name + suffix: _DROPOUT
        for name in ("dropout", "alpha_dropout", "feature_dropout", "feature_alpha_dropout")
        for suffix in ("", "_")
    },
    "threshold": "(Tensor input, Number threshold, Number value, *, Tensor out = None)",
    "threshold_": "(Tensor input, Number threshold, Number value)",
    "pairwise_distance": (
        "(Tensor x1, Tensor x2, float p = 2, float eps = 1e-06, bool keepdim = False)"
    ),
    "binary_cross_entropy_with_logits": (
        "(Tensor input, Tensor target, Tensor weight = None, Tensor pos_weight = None, "
        "int reduction = 1)"
    ),
    "is_same_size": "(Tensor input, Tensor other)",
    "pinverse": "(Tensor input, float rcond = 1e-15)",
}
SINGLE_METHOD_SIGNATURES = {
    "fill_diagonal_": "(Number fill_value, bool wrap = False)",
    "is_same_size": "(Tensor other)",
    "pinverse": "(float rcond = 1e-15)",
}


def check_call(name: str, signature: str, args: tuple, kwargs: dict | None = None) -> None:
    """Note [Single signatures bound]: raise the parser's TypeError when ``signature`` (as
    PyTorch prints it) does not take the call ``name(*args, **kwargs)``."""
    kwargs = kwargs or {}
    key = _call_key((name, signature), args, kwargs)
    found = _BOUND.get(key)
    if found is None:
        found = E.bind((signature,), args, kwargs) is not None
        _remember(key, found)
    if not found:
        message = E._signature_error(name, E._parameters(signature), args, kwargs)
        raise TypeError(message or E.invalid_arguments(name, (signature,), args, kwargs, False))


def _single_checked(fn, name: str, signature: str, method: bool):
    @functools.wraps(fn)
    @E.wrapper
    def call(*args, **kwargs):
        check_call(name, signature, args[1:] if method else args, kwargs)
        return fn(*args, **kwargs)

    return call


def install_single_checked(Tensor, namespace) -> None:
    """Note [Single signatures bound]: wrap the functions and methods named there."""
    from .nn import functional as F

    for table, owner, method in (
        (SINGLE_METHOD_SIGNATURES, Tensor, True),
        (SINGLE_SIGNATURES, namespace, False),
    ):
        for name, signature in table.items():
            fn = getattr(owner, name, None)
            if callable(fn):
                wrapped = _single_checked(fn, name, signature, method)
                setattr(owner, name, wrapped)
                if not method and getattr(F, name, None) is fn:
                    setattr(F, name, wrapped)


# Note [Function names]: ``f.__name__`` is PyTorch's (a notebook prints it when it loops over
# functions): the attribute's own name, prefixed for the submodules PyTorch binds in C++
# (``torch.special.erf.__name__ == "special_erf"``), except a few PyTorch names otherwise.
# One function object under two names (``abs`` and ``absolute``) gets a copy for the second.
# ``__qualname__`` is left alone: Python's own argument errors name it (Note [Python-level
# methods]).
_PREFIXES = {"linalg": "linalg_", "fft": "fft_", "special": "special_"}
_OTHER_NAMES = {
    ("leafgrad", "symeig"): "_symeig",
    ("leafgrad.nn.functional", "logsigmoid"): "log_sigmoid",
    ("leafgrad.nn.functional", "threshold"): "_threshold",
}


def name_like_torch(*owners) -> None:
    """Note [Function names] for the public functions of ``owners`` (modules or ``Tensor``), the
    first owner's names winning where one object has several."""
    named = {}
    for owner in owners:
        label = owner.__name__
        prefix = _PREFIXES.get(label.rpartition(".")[2], "") if label != "leafgrad" else ""
        for attr, fn in list(vars(owner).items()):
            if attr.startswith("_") or type(fn) is not types.FunctionType:
                continue
            name = _OTHER_NAMES.get((label, attr), prefix + attr)
            if fn.__name__ == name:
                named.setdefault(id(fn), (fn, name))
                continue
            held = named.get(id(fn))
            if held is not None and held[0] is fn:
                copy = types.FunctionType(
                    fn.__code__, fn.__globals__, name, fn.__defaults__, fn.__closure__
                )
                copy.__kwdefaults__ = fn.__kwdefaults__
                copy.__dict__.update(fn.__dict__)
                copy.__doc__, copy.__module__ = fn.__doc__, fn.__module__
                copy.__qualname__ = fn.__qualname__
                setattr(owner, attr, copy)
            else:
                fn.__name__ = name
                named[id(fn)] = (fn, name)
