"""Dims as the caller wrote them, in the nodes' saved arguments.

Note [Dims as written]: PyTorch's nodes keep a dim argument as it was passed: ``x.sum(-1)`` gives
``SumBackward1`` whose ``_saved_dim`` is ``(-1,)``, which PyTorch 2.13 reads back as unsigned
(``(18446744073709551615,)``); ``x.sum(2)`` on the same tensor keeps ``(2,)``. leafgrad's
frontends wrap a dim before they dispatch (the op's static arguments, its compiled program and its
cache key take the wrapped dim), so ``install`` wraps each frontend that takes a dim (``dim``,
``dims``, ``dim0``/``dim1``/``dim2``, ``dimension``, ``axis0``/``axis1``) with a check that costs
a loop over those arguments: when one was given negative, the node of each output gets the
written value recorded (Note [Arguments as written] in autograd/saved.py), where that node saves
the argument under that name and the value it holds is the written one wrapped (``saved - written``
is the input's rank, or the rank plus one for a dim that inserts one, ``unsqueeze``/``stack``).
A composite whose last node saves a dim of its own computing keeps it.
"""

from __future__ import annotations

import functools
import inspect

from . import _errors as E
from .autograd import saved as saved_mod

# frontend parameter -> the name PyTorch's node saves it under
_SAVED_AS = {
    "dim": "dim",
    "dims": "dims",
    "dim0": "dim0",
    "dim1": "dim1",
    "dim2": "dim2",
    "dimension": "dimension",
    "axis0": "dim0",
    "axis1": "dim1",
}
_DONE = "_leafgrad_written_dims"
# composites whose last node PyTorch gives a dim it wrapped itself
_WRAPPED_BY_PYTORCH = frozenset({"tensor_split", "take_along_dim", "matrix_norm", "gradient"})
_U64 = 1 << 64


def _negative(v) -> bool:
    if type(v) is int:
        return v < 0
    if type(v) in (tuple, list):
        return any(type(e) is int and e < 0 for e in v)
    return False


_TENSOR: list = []  # the Tensor class, set by ``install`` (this module is imported before it)


def _rank(args) -> int | None:
    Tensor = _TENSOR[0]
    for a in args:
        if isinstance(a, Tensor):
            return a._data.ndim
        if isinstance(a, (list, tuple)) and a and isinstance(a[0], Tensor):
            return a[0]._data.ndim
    return None


def _matches(written, held, rank: int) -> bool:
    """``held`` (the node's value) is ``written`` wrapped against ``rank``."""
    if len(written) != len(held):
        return False
    for w, h in zip(written, held):
        if type(w) is not int or type(h) is not int:
            return False
        if w == h or (w < 0 and h % _U64 == w % _U64):
            continue
        if not (w < 0 and 0 <= h and h - w in (rank, rank + 1)):
            return False
    return True


def _record(out, written: dict, rank: int, before=None) -> None:
    """Keep ``written`` against the nodes of ``out`` (not ``before``, the first input's node
    before the call); ``_saved_<name>`` compares it with the node's own value when it is read
    (``as_written``), so a call pays only for the record."""
    Tensor = _TENSOR[0]
    if isinstance(out, Tensor):
        node = out._grad_fn
        if node is not None and node is not before:
            saved_mod._WRITTEN_DIMS[node] = (written, rank)
        return
    if isinstance(out, tuple):
        for t in out:
            node = t._grad_fn if isinstance(t, Tensor) else None
            if node is not None and node is not before:
                saved_mod._WRITTEN_DIMS[node] = (written, rank)


def as_written(value, held, rank: int, one_dim: bool = False):
    """What ``_saved_<name>`` reads for a dim given as ``value``, where the node holds
    ``held``: the value as given when ``held`` is it wrapped against ``rank``, else ``held``.
    ``one_dim``: the node saves one int (an empty ``held`` of a 0-d input is None)."""
    if rank == 0 and held in ((), None):  # a 0-d input: the dims given, as given
        if one_dim:
            return value if type(value) is int else None
        return (value,) if type(value) is int else tuple(value)
    if isinstance(held, tuple):
        w = (value,) if type(value) is int else tuple(value)
        return w if _matches(w, held, rank) else held
    if type(held) is int and type(value) is int and _matches((value,), (held,), rank):
        return value
    return held


def note(out, rank: int, **written) -> None:
    """For a frontend that parses its own arguments: record the dims among ``written`` (saved
    name -> value as given) that were given negative, as ``install``'s wrapper does."""
    given = {k: (tuple(v) if type(v) is list else v) for k, v in written.items() if _negative(v)}
    if given:
        _record(out, given, rank)


def _spots(fn) -> tuple | None:
    """``(position or None, keyword, saved name, spread, negative default or None)`` of
    ``fn``'s dim parameters."""
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return None
    spots = []
    for i, p in enumerate(params):
        saved = _SAVED_AS.get(p.name)
        if saved is None:
            continue
        # a negative default (``sort``'s dim=-1) is a dim written negative too
        default = p.default if _negative(p.default) else None
        if p.kind is p.VAR_POSITIONAL:
            spots.append((i, None, saved, True, None))
        elif p.kind is p.KEYWORD_ONLY:
            spots.append((None, p.name, saved, False, default))
        elif p.kind is p.POSITIONAL_OR_KEYWORD:
            spots.append((i, p.name, saved, False, default))
    return tuple(spots) or None


def _wrapped(fn, spots: tuple):
    @functools.wraps(fn)
    @E.wrapper
    def frontend(*args, **kwargs):
        # a tensor handed back as it was keeps its node's dims (``flatten(-1, -1)``)
        before = getattr(args[0], "_grad_fn", None) if args else None
        out = fn(*args, **kwargs)
        written = None
        n = len(args)
        for i, keyword, saved, spread, default in spots:
            if spread:
                v = args[i:] if i < n else ()
                if len(v) == 1 and type(v[0]) in (tuple, list):
                    v = v[0]
            elif i is not None and i < n:
                v = args[i]
            elif kwargs and keyword in kwargs:
                v = kwargs[keyword]
            elif kwargs and keyword == "dim" and "axis" in kwargs:
                v = kwargs["axis"]
            elif default is not None:
                v = default
            else:
                continue
            if _negative(v) or (
                # a 0-d input's dims vanish from the op's arguments (``x.sum(0)``: dims ())
                v is not None and isinstance(args[0], _TENSOR[0]) and not args[0]._data.ndim
            ):
                if written is None:
                    written = {}
                written[saved] = tuple(v) if type(v) is list else v
        if written is not None:
            rank = _rank(args)
            if rank is not None:
                _record(out, written, rank, before)
        return out

    setattr(frontend, _DONE, True)
    return frontend


def _install_on(owner, names, get, put) -> None:
    for name in names:
        if name.startswith("__"):
            continue
        fn = get(owner, name)
        if not callable(fn) or isinstance(fn, type) or getattr(fn, _DONE, False):
            continue
        if name in _WRAPPED_BY_PYTORCH:
            continue
        spots = _spots(fn)
        if spots is not None:
            put(owner, name, _wrapped(fn, spots))


def install(namespace, names) -> None:
    """Wrap the Tensor methods, the ``namespace`` functions ``names`` and ``nn.functional``'s
    functions that take a dim (Note [Dims as written])."""
    from ._tensor import Tensor
    from .nn import functional as F

    _TENSOR[:] = [Tensor]

    def plain(owner, name):
        fn = owner.__dict__.get(name)
        return fn if inspect.isfunction(fn) else None

    _install_on(Tensor, list(Tensor.__dict__), plain, setattr)
    wrapped = {}

    def put_function(owner, name, new):
        wrapped[getattr(owner, name)] = new
        setattr(owner, name, new)

    _install_on(namespace, names, lambda o, n: getattr(o, n, None), put_function)
    for name in F.__all__ if hasattr(F, "__all__") else dir(F):
        fn = getattr(F, name, None)
        if fn in wrapped:  # the same function as leafgrad's (``F.softmax is torch.softmax``)
            setattr(F, name, wrapped[fn])
    _install_on(F, [n for n in dir(F) if not n.startswith("_")], _function, setattr)
    from . import linalg, special

    # (torch.fft's nodes keep the dims wrapped)
    for module in (linalg, special):
        _install_on(module, [n for n in dir(module) if not n.startswith("_")], _function, setattr)


def _function(owner, name):
    fn = getattr(owner, name, None)
    return fn if inspect.isfunction(fn) else None
