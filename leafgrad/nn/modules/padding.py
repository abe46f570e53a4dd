"""``leafgrad.nn`` padding layers: ZeroPad, ConstantPad, ReflectionPad, ReplicationPad and
CircularPad in 1-3 dimensions, over ``F.pad``, with PyTorch's argument handling and reprs."""

from __future__ import annotations

from .. import functional as F
from .conv import _ntuple
from .module import Module

__all__ = [
    f"{kind}Pad{n}d"
    for kind in ("Zero", "Constant", "Reflection", "Replication", "Circular")
    for n in (1, 2, 3)
]


class _ConstantPadNd(Module):
    def __init__(self, value: float) -> None:
        super().__init__()
        self.value = value

    def forward(self, input):
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class _ModePadNd(Module):
    mode = ""

    def forward(self, input):
        return F.pad(input, self.padding, self.mode)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _CircularPadNd(_ModePadNd):
    mode = "circular"
    _dims = (0, 0)

    def forward(self, input):
        if input.dim() not in self._dims:
            low, high = self._dims
            raise ValueError(f"expected {low}D or {high}D input (got {input.dim()}D input)")
        return F.pad(input, self.padding, "circular")


def _make(kind: str, n: int):
    size = _ntuple(2 * n)
    if kind in ("Zero", "Constant"):
        if kind == "Constant":

            def __init__(self, padding, value: float) -> None:
                _ConstantPadNd.__init__(self, value)
                self.padding = size(padding)

            body = {"__init__": __init__}
        else:

            def __init__(self, padding) -> None:
                _ConstantPadNd.__init__(self, 0.0)
                self.padding = size(padding)

            body = {"__init__": __init__, "extra_repr": lambda self: f"{self.padding}"}
        base = _ConstantPadNd
    else:

        def __init__(self, padding) -> None:
            Module.__init__(self)
            self.padding = size(padding)

        body = {"__init__": __init__}
        if kind == "Circular":
            base = _CircularPadNd
            body["_dims"] = (n + 1, n + 2)
        else:
            base = _ModePadNd
            body["mode"] = "reflect" if kind == "Reflection" else "replicate"
    name = f"{kind}Pad{n}d"
    body["__module__"] = __name__
    body["__qualname__"] = name
    body["__doc__"] = f"``nn.{name}``: ``F.pad`` with mode '{kind.lower()}' over {n} dims."
    return type(name, (base,), body)


for _kind in ("Zero", "Constant", "Reflection", "Replication", "Circular"):
    for _n in (1, 2, 3):
        globals()[f"{_kind}Pad{_n}d"] = _make(_kind, _n)
