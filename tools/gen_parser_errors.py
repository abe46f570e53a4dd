"""Write ``leafgrad/_parser_errors.py``: what PyTorch's argument parser answers when a
``torch.<function>`` call does not bind, read from PyTorch's own messages.

For an overloaded function the parser lists its signatures ("received an invalid combination of
arguments ... expected one of:"); those signature lines are kept, and ``leafgrad._errors`` binds a
call against them as the parser does. For a function with one signature the parser names the
first check that fails; kept are the three it meets first: how many positional arguments it
takes, the required ones (``missing ... required positional argument``), and the type of the
first (``argument 'input' (position 1) must be Tensor``), with whether a Python number passes
for that tensor. ``leafgrad/_arg_check.py`` consults the table only on the error path: when a
leafgrad frontend raised, a call the parser would have refused gets the parser's message.

Run with torch 2.13 installed: ``python tools/gen_parser_errors.py``. leafgrad never imports torch.
"""

from __future__ import annotations

import inspect
import pprint
import re
import sys
import warnings
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import leafgrad  # noqa: E402

_BUILTIN = type(torch.add)
_METHOD = type(torch.Tensor.add_)


class _Sentinel:
    pass


class _Fresh:
    """Calls ``get()(...)``: an in-place method probed with valid arguments writes a new
    tensor."""

    def __init__(self, get) -> None:
        self.get = get

    def __call__(self, *args, **kwargs):
        return self.get()(*args, **kwargs)


def _message(fn, *args) -> str | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fn(*args)
    except TypeError as err:
        return str(err)
    except Exception:
        return None
    return None


def _out_message(fn) -> str | None:
    try:
        fn(out=_Sentinel())
    except TypeError as err:
        return str(err)
    except Exception:
        return None
    return None


def _numbers_ok(fn) -> bool:
    """Whether a number passes for the first tensor (``torch.mul(2, x)``), which shows once the
    rest of the call binds."""
    return any(_message(fn, 1.5, *[torch.ones(1)] * k) is None for k in range(4))


def _entry(name: str, get=None, prefix: str = "torch", printed: str | None = None):
    """The table entry for ``get()`` (a fresh callable each call: ``torch.<name>`` or a new
    tensor's ``<name>`` method); ``printed``: the name PyTorch's messages give it
    (``linalg_det`` for ``torch.linalg.det``)."""
    get = get or (lambda: getattr(torch, name))
    name = printed or name
    fn = _Fresh(get)
    for extra in range(1, 4):
        text = _message(fn, *[_Sentinel()] * extra)
        if text and "received an invalid combination of arguments" in text:
            sigs = tuple(line[3:] for line in text.splitlines() if line.startswith(" * ("))
            if not sigs:  # one signature shown (others hidden): "but expected (...)"
                sigs = (text.split("but expected ", 1)[1],)
            return ("overloaded", sigs, _numbers_ok(fn))
    first = _message(fn, _Sentinel())
    if first == f"{prefix}.{name}() takes no arguments (1 given)":
        return ("noargs", prefix)
    if first == "expected Tensor as element 0 in argument 0, but got _Sentinel":
        return ("tensors",)
    if first and re.fullmatch(rf"{name}\(\) takes 0 positional arguments but 1 was given", first):
        return ("single", None, None, False, "0 positional arguments", ())
    m = first and re.fullmatch(
        rf"{name}\(\): argument '(\w+)' \(position 1\) must be (.+), not _Sentinel", first
    )
    if not m:
        return None
    pname, kind = m.groups()
    missing = _message(fn) or ""
    required = tuple(re.findall(r'"(\w+)"', missing)) if "required positional" in missing else ()
    many = _message(fn, *[_Sentinel()] * 20) or ""
    takes = re.fullmatch(rf"{name}\(\) takes (.+) but 20 were given", many)
    numbers_ok = _numbers_ok(fn)
    return ("single", pname, kind, numbers_ok, takes.group(1) if takes else None, required)


def main() -> None:
    table = {}
    for name in sorted(dir(leafgrad)):
        if name.startswith("_") or not isinstance(getattr(torch, name, None), _BUILTIN):
            continue
        if not callable(getattr(leafgrad, name)) or isinstance(getattr(leafgrad, name), type):
            continue
        entry = _entry(name)
        if entry:
            table[name] = entry
    shared = frozenset(
        name for name in table if getattr(torch.nn.functional, name, None) is getattr(torch, name)
    )
    methods = {}
    for name in sorted(dir(leafgrad.Tensor)):
        if name.startswith("_"):
            continue
        if not isinstance(getattr(torch.Tensor, name, None), _METHOD):
            continue
        entry = _entry(name, lambda n=name: getattr(torch.ones(2, 3), n), "Tensor")
        if entry:
            methods[name] = entry
    namespaces = {}
    for ns in ("linalg", "special", "fft"):
        found = {}
        for name in sorted(dir(getattr(leafgrad, ns))):
            fn = getattr(getattr(torch, ns), name, None)
            if name.startswith("_") or not isinstance(fn, _BUILTIN):
                continue
            entry = _entry(
                name, lambda n=name, ns=ns: getattr(getattr(torch, ns), n), ns, f"{ns}_{name}"
            )
            if entry:
                found[name] = entry
        namespaces[ns] = found
    takes_out = sorted(
        name
        for name in table
        if any(
            s.overload_name.endswith("out") or s.overload_name.startswith("out")
            for s in torch._C._jit_get_schemas_for_operator("aten::" + name)
        )
        and "out" not in inspect.signature(getattr(leafgrad, name)).parameters
        and "keyword argument 'out'" not in (_out_message(getattr(torch, name)) or "")
    )
    text = (
        "# ruff: noqa: E501\n"
        '"""What PyTorch\'s argument parser answers for ``torch.<function>`` calls that do not\n'
        'bind: ``("overloaded", signatures)`` or ``("single", first argument\'s name, its type,\n'
        "whether a Python number passes for it, the positional count as the parser words it, the\n"
        "required arguments)``. Written by tools/gen_parser_errors.py from torch 2.13; do not\n"
        'edit."""\n\n'
        f"FUNCTIONS = {pprint.pformat(table, width=99, sort_dicts=True)}\n\n"
        "# the Tensor methods (the arguments after ``self``; Note [Parser errors on the error\n"
        "# path])\n"
        f"METHODS = {pprint.pformat(methods, width=99, sort_dicts=True)}\n\n"
        "# torch.linalg, torch.special and torch.fft: ``{namespace: {name: entry}}``, the\n"
        "# messages naming ``<namespace>_<name>``\n"
        f"NAMESPACES = {pprint.pformat(namespaces, width=99, sort_dicts=True)}\n\n"
        "# the functions torch.nn.functional shares with torch (one builtin)\n"
        f"SHARED_WITH_F = {pprint.pformat(shared, width=99)}\n\n"
        "# the functions with an ``out=`` overload whose leafgrad frontend takes no ``out``\n"
        f"TAKES_OUT = {pprint.pformat(frozenset(takes_out), width=99)}\n"
    )
    (ROOT / "leafgrad" / "_parser_errors.py").write_text(text)
    kinds = [v[0] for v in table.values()]
    print(f"{kinds.count('overloaded')} overloaded, {kinds.count('single')} single")


if __name__ == "__main__":
    main()
