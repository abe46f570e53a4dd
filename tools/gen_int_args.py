"""Write ``leafgrad/_int_args.py``: the ``int`` arguments of PyTorch's ops, from its schemas.

PyTorch's argument parser refuses a float, a bool, a str or a float tensor for an ``int``
argument with ``<op>(): argument '<name>' (position <n>) must be int, not <type>``. leafgrad's
frontends are Python functions that would take such values; ``leafgrad/_arg_check.py`` wraps
each op listed here to check them first. Only ops with a single (non-``out``) overload are
listed (overloads over ``Dimname`` aside): an overloaded op answers with its list of signatures
instead.

Run with torch 2.13 installed: ``python tools/gen_int_args.py``. leafgrad never imports torch.
"""

from __future__ import annotations

import inspect
import pprint
import re
import sys
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import leafgrad  # noqa: E402

_BUILTIN = (type(torch.Tensor.add), type(torch.add))


def _params(schema: str) -> list[tuple[str, str, bool]]:
    """``(type, name, keyword_only)`` of each argument of an aten schema string."""
    inner = schema[schema.index("(") + 1 : schema.rindex(") ->")]
    out, kw_only, depth, cur = [], False, 0, ""
    for ch in inner + ",":
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == "," and depth == 0:
            part = cur.strip()
            cur = ""
            if part == "*":
                kw_only = True
                continue
            has_default = "=" in part
            part = part.split("=")[0].strip()
            if " " not in part:  # an unnamed argument (a schema of another kind)
                return []
            kind, name = part.rsplit(" ", 1)
            kind = re.sub(r"\(.*?\)", "", kind)
            if has_default and re.fullmatch(r"(Sym)?[Ii]nt\[\d*\]", kind):
                kind += "?"  # the parser takes None for an int list with a default
            out.append((kind, name, kw_only))
        else:
            cur += ch
    return out


def _overloads(name: str) -> list[list[tuple[str, str, bool]]]:
    found = []
    for s in torch._C._jit_get_schemas_for_operator("aten::" + name):
        text = str(s)
        if s.overload_name.endswith("out") or "Tensor(a!)" in text.split(") ->")[0]:
            continue
        if s.overload_name.endswith("hacked_twin"):  # for TorchScript only
            continue
        params = _params(text)
        if not params or params[0][0] not in ("Tensor", "Tensor[]"):
            continue
        if any("Dimname" in kind for kind, _, _ in params):
            continue  # named tensors: leafgrad has none, and PyTorch's parser reports the other
        found.append(params)
    return found


def _entry(name: str, where: object, schema_name: str | None = None) -> dict | None:
    """For one public name: ``{arg name: (index, keyword_only, kind)}`` of its int and bool
    arguments; ``kind``: ``int``, ``symint`` (PyTorch's SymInt, which its parser takes in more
    forms), ``ints`` (a list of ints of a given length, which takes a bare int too), ``list`` (a
    list of ints, which takes a bare int only where the parser spreads it: a method's one
    positional argument), ``bool``, ``float``, ``number`` or ``tensor`` (a Tensor only), with
    ``?`` where None is taken too."""
    if not isinstance(getattr(where, name, None), _BUILTIN):
        return None  # a Python-level function in PyTorch: its own checks
    overloads = _overloads(schema_name or name)
    if len(overloads) != 1:
        return None
    if where is torch and len(_signatures(getattr(torch, name), (torch.ones(2, 3),)) or ()) > 1:
        return None  # the parser lists an overload of another first type (``Number self``)
    ints = {}
    for i, (kind, pname, kw) in enumerate(overloads[0]):
        optional = kind.endswith("?")
        base = kind.rstrip("?")
        if i == 0:
            continue
        if base == "int":  # a Python or NumPy int, or a 0-d integer tensor
            ints[pname] = (i, kw, "int?" if optional else "int")
        elif base == "SymInt":  # also a one-element integer tensor, an ``__index__`` object
            ints[pname] = (i, kw, "symint?" if optional else "symint")
        elif re.fullmatch(r"(Sym)?[Ii]nt\[\d+\]", base):  # a sized list takes a bare int
            ints[pname] = (i, kw, "ints?" if optional else "ints")
        elif re.fullmatch(r"(Sym)?[Ii]nt\[\]", base):  # one only where it is spread out
            ints[pname] = (i, kw, "list?" if optional else "list")
        elif base in ("Tensor[]", "Tensor?[]"):  # a list or tuple (of tensors)
            ints[pname] = (i, kw, "tensors")
        elif base == "bool":  # a Python bool only (not an int, a NumPy bool or a tensor)
            ints[pname] = (i, kw, "bool?" if optional else "bool")
        elif base == "float":  # a real number or a 0-d tensor without grad
            ints[pname] = (i, kw, "float?" if optional else "float")
        elif base == "Scalar":  # "Number": a real or complex number, or such a tensor
            ints[pname] = (i, kw, "number?" if optional else "number")
        elif base == "Tensor" and not any(k == "Scalar" for k, _, _ in overloads[0]):
            # a tensor only: a Python number is refused (the parser wraps numbers only for the
            # arithmetic ops, which are overloaded), as are NumPy arrays and lists
            ints[pname] = (i, kw, "tensor?" if optional else "tensor")
    return ints or None


def _nn_entry(name: str) -> dict | None:
    """For a ``torch.nn.functional`` name: the float and Number arguments of the builtin it is
    (``F.softplus``) or calls with its own arguments in place (``F.elu`` calls
    ``torch._C._nn.elu(input, alpha)``), kept where PyTorch's F answers a tuple given there
    with that builtin's parser message (``F.hardtanh`` compares its bounds first)."""
    import torch.nn.functional as TF

    fn = getattr(TF, name, None)
    if fn is None:
        return None
    entry = None
    for where in (torch._C._nn, torch):
        if getattr(where, name, None) is not None:
            entry = _entry(name, where)
            break
    if not entry:
        return None
    kept = {}
    for pname, (i, kw, kind) in entry.items():
        if not kind.startswith(("float", "number")):
            continue
        if not isinstance(fn, _BUILTIN):
            params = list(inspect.signature(fn).parameters)
            if i >= len(params) or params[i] != pname:
                continue
        if _refuses_tuple(fn, pname, kind):
            kept[pname] = (i, kw, kind)
    return kept or None


def _refuses_tuple(fn, pname: str, kind: str) -> bool:
    """Whether ``fn`` answers a tuple given as ``pname`` with the builtin's parser message, with
    the other arguments it needs (a target, a shape) in place."""
    x = torch.ones(2, 3, 4, 4)
    wanted = "must be " + ("float" if kind.startswith("float") else "Number")
    for leading in ((), (x,), (x, x), ([4],), ([1, 1],)):
        try:
            fn(x, *leading, **{pname: (1, 2)})
        except TypeError as err:
            if f"argument '{pname}'" in str(err) and wanted in str(err):
                return True
        except Exception:
            pass
    return False


def _varargs(name: str) -> bool:
    """Whether the method's one positional argument is an int list, which PyTorch's parser
    also takes spread out (``x.permute(1, 0)``)."""
    positional = [p for p in _overloads(name)[0][1:] if not p[2]]
    return len(positional) == 1 and bool(re.fullmatch(r"(Sym)?[Ii]nt\[\d*\]", positional[0][0]))


# Overloaded ops over dims and counts: a call no overload takes gets the parser's list of
# signatures, read here from PyTorch's own message.
OVERLOADED = (
    "all any argsort count_nonzero max mean min moveaxis movedim nanmean nansum narrow prod "
    "randint sort squeeze std sum var"
).split()


class _Sentinel:
    pass


def _signatures(fn, first: tuple) -> tuple[str, ...] | None:
    """The signatures PyTorch's parser lists for ``fn`` (called with ``first`` then sentinels)."""
    for extra in range(1, 4):
        try:
            fn(*first, *[_Sentinel()] * extra)
        except TypeError as err:
            text = str(err)
            if "received an invalid combination of arguments" in text:
                return tuple(line[3:] for line in text.splitlines() if line.startswith(" * ("))
    return None


def main() -> None:
    methods, functions, varargs = {}, {}, []
    for name in sorted(dir(leafgrad.Tensor)):
        if name.startswith("_") or not callable(getattr(leafgrad.Tensor, name)):
            continue
        entry = _entry(name, torch.Tensor)
        if entry:
            methods[name] = entry
            if _varargs(name):
                varargs.append(name)
    for name in sorted(dir(leafgrad)):
        if name.startswith("_") or not callable(getattr(leafgrad, name)):
            continue
        entry = _entry(name, torch)
        if entry:
            functions[name] = entry
    overloaded_methods, overloaded_functions, none_ok = {}, {}, {}
    for name in OVERLOADED:
        # the printed signatures do not show which arguments take None (``int[1]? dim``)
        optional = {
            p[1]
            for s in torch._C._jit_get_schemas_for_operator("aten::" + name)
            for p in _params(str(s))
            if p[0].endswith("?")
        }
        if optional:
            none_ok[name] = frozenset(optional)
        if hasattr(leafgrad.Tensor, name) and hasattr(torch.Tensor, name):
            sigs = _signatures(getattr(torch.ones(2, 3), name), ())
            if sigs:
                overloaded_methods[name] = sigs
        if hasattr(leafgrad, name) and hasattr(torch, name):
            sigs = _signatures(getattr(torch, name), (torch.ones(2, 3),))
            if sigs:
                overloaded_functions[name] = sigs
    nn, passed_on = {}, []
    for name in sorted(dir(leafgrad.nn.functional)):
        if not name.startswith("_") and callable(getattr(leafgrad.nn.functional, name)):
            entry = _nn_entry(name)
            if entry:
                nn[name] = entry
                if not isinstance(getattr(torch.nn.functional, name), _BUILTIN):
                    passed_on.append(name)
    for name in set(methods) & set(functions):
        assert methods[name] == functions[name], name
    symint_lists = _symint_lists()
    spaces = {}
    for space in ("linalg", "special", "fft"):
        table = {}
        for name in sorted(dir(getattr(leafgrad, space))):
            if name.startswith("_") or not callable(getattr(getattr(leafgrad, space), name)):
                continue
            entry = _entry(name, getattr(torch, space), f"{space}_{name}")
            if entry:
                table[name] = entry
        spaces[space] = table
    text = (
        '"""The int, int-list, bool, float and Number arguments of PyTorch ops with one overload:\n'
        "``{op: {argument: (index in the schema, keyword-only, kind)}}``, ``self`` at index 0.\n"
        'Written by tools/gen_int_args.py from torch 2.13\'s schemas; do not edit."""\n\n'
        f"INT_ARGS = {pprint.pformat({**methods, **functions}, width=99, sort_dicts=True)}\n\n"
        "# which of them are Tensor methods, which torch functions (most are both)\n"
        f"_BOTH = {pprint.pformat(frozenset(methods) & frozenset(functions), width=99)}\n\n"
        f"METHODS = _BOTH | {pprint.pformat(frozenset(methods) - frozenset(functions))}\n\n"
        f"FUNCTIONS = _BOTH | {pprint.pformat(frozenset(functions) - frozenset(methods))}\n\n"
        "# methods whose one positional argument, an int list, may be spread out\n"
        f"VARARGS = {pprint.pformat(frozenset(varargs), width=99)}\n\n"
        "# overloaded ops: the signatures PyTorch's parser lists (method, function forms)\n"
        f"OVERLOADED_METHODS = {pprint.pformat(overloaded_methods, width=99)}\n\n"
        f"OVERLOADED_FUNCTIONS = {pprint.pformat(overloaded_functions, width=99)}\n\n"
        "# the arguments of the overloaded ops that take None\n"
        f"NONE_OK = {_sorted_sets(none_ok)}\n\n"
        "# torch.nn.functional functions that are (or pass their arguments on to) one of these\n"
        "# builtins: their float and Number arguments, named in the builtin's messages\n"
        f"NN_ARGS = {pprint.pformat(nn, width=99, sort_dicts=True)}\n\n"
        "# those of them that are Python functions passing the arguments on by position: the\n"
        "# messages give the position of an argument given by keyword too\n"
        f"NN_PASSED_ON = {pprint.pformat(frozenset(passed_on), width=99)}\n\n"
        "# the same for torch.linalg/special/fft's builtins (``aten::linalg_cross``...)\n"
        f"NAMESPACE_ARGS = {pprint.pformat(spaces, width=99, sort_dicts=True)}\n\n"
        "# ``op.argument`` of every int list that is a SymInt list in all of the op's schemas\n"
        "# (Note [SymInt lists] in _errors.py)\n"
        f"SYMINT_LISTS = {pprint.pformat(symint_lists, width=99)}\n"
    )
    (ROOT / "leafgrad" / "_int_args.py").write_text(text)
    print(f"{len(methods)} methods, {len(functions)} functions")


def _symint_lists() -> frozenset:
    """``op.argument`` of the int lists of public ops that are ``SymInt[]`` in every schema."""
    kinds: dict = {}
    for s in torch._C._jit_get_all_schemas():
        name = s.name.split("::")[1]
        if name.startswith("_"):
            continue
        text = str(s)
        inner = text[text.index("(") + 1 : text.rindex(") ->")]
        for m in re.finditer(r"((?:Sym)?[Ii]nt)\[\d*\]\??\s+(\w+)", inner):
            kinds.setdefault(f"{name}.{m.group(2)}", set()).add(m.group(1))
    return frozenset(k for k, v in kinds.items() if v == {"SymInt"})


def _sorted_sets(table: dict) -> str:
    """A dict of frozensets written in sorted order (a set's repr follows string hashes, which
    change from run to run)."""
    rows = "".join(
        f"    {k!r}: frozenset({{{', '.join(repr(x) for x in sorted(v))}}}),\n"
        for k, v in sorted(table.items())
    )
    return "{\n" + rows + "}"


if __name__ == "__main__":
    main()
