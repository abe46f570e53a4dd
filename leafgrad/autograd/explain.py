"""``explain(tensor)``: why a tensor is or is not a leaf, whether backward fills its ``.grad``,
which op and leaves made it, and what to do instead.

Note [Explain from state]: every statement is derived from what autograd can see on the tensor
now, by PyTorch's rules: ``grad_fn`` (``is_leaf`` is exactly ``grad_fn is None``),
``requires_grad``, whether it is a view (its base and the grad mode it was made in), whether it
shares memory and version counter with another tensor (``detach()``), ``retains_grad``, whether it
is an inference tensor, and whether the nodes of its graph freed what they saved. How a tensor was
made is named only where it left a trace in that state; elsewhere the rule is stated with every
way it can come about (a tensor that does not require grad may be a factory result, an op on
tensors none of which requires grad, a result computed under ``no_grad``, or a ``.cuda()`` copy).

Note [Views that inherit requires_grad]: a view made without being recorded (under ``no_grad``,
or before its base required grad) reports ``requires_grad=True`` because its base does, yet it
has no ``AccumulateGrad`` of its own: PyTorch's engine drops a gradient that reaches it, so
neither the view's ``.grad`` nor its base's is filled.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .. import _errors as E
from .graph import AccumulateGrad

__all__ = ["explain", "Explanation", "LeafRef", "Advice"]

# PyTorch's own text for reading ``.grad`` of a non-leaf (what leafgrad warns, byte for byte).
NON_LEAF_GRAD_WARNING = E.NON_LEAF_GRAD_WARNING
_SECOND_BACKWARD = "Trying to backward through the graph a second time"


@dataclass(frozen=True)
class LeafRef:
    """A leaf that requires grad, reached from a tensor's ``grad_fn`` through AccumulateGrad."""

    tensor: Any
    name: str | None
    shape: tuple

    def label(self) -> str:
        return _label(self.tensor, self.name)


@dataclass(frozen=True)
class Advice:
    """One suggestion: ``key`` names it (for programs), ``text`` says it (for people)."""

    key: str
    text: str


@dataclass(frozen=True)
class Explanation:
    """What ``explain`` found; ``str()`` (and a notebook's display) gives the text.

    ``leaf_kind`` names the rule that applies: ``user``, ``parameter``, ``untracked``,
    ``detached``, ``inference``, ``view_no_grad``, ``view_inference``, ``view_untracked`` (leaves);
    ``op``, ``copy``, ``view`` (not leaves); ``unreadable`` (reading ``grad_fn`` raises).
    ``grad_kind``: ``accumulate``, ``retained`` (filled); ``non_leaf``, ``no_requires_grad``,
    ``view_dropped``, ``unreadable`` (not filled). ``graph_freed`` is None for leaves and where it
    cannot be known."""

    name: str | None
    shape: tuple
    device: str
    is_leaf: bool | None
    requires_grad: bool
    leaf_kind: str
    leaf_reason: str
    grad_will_be_filled: bool
    grad_kind: str
    grad_reason: str
    grad_warning: str | None
    created_by: str | None
    from_leaves: tuple[LeafRef, ...]
    graph_freed: bool | None
    advice: tuple[Advice, ...] = field(default=())

    @property
    def advice_keys(self) -> tuple[str, ...]:
        return tuple(a.key for a in self.advice)

    def _lines(self) -> list[tuple[str, str]]:
        rows = [("is_leaf", f"{self.is_leaf}. {self.leaf_reason}")]
        yes = "yes" if self.grad_will_be_filled else "no"
        rows.append((".grad filled by the next backward", f"{yes}. {self.grad_reason}"))
        if self.grad_warning is not None:
            rows.append(("reading .grad now warns", self.grad_warning))
        if self.created_by is not None:
            leaves = ", ".join(leaf.label() for leaf in self.from_leaves) or "none"
            rows.append(("created by", f"{self.created_by}, from the leaves: {leaves}"))
        if self.graph_freed:
            rows.append(("graph", _FREED))
        elif self.graph_freed is None and self.created_by is not None:
            rows.append(("graph", _MAYBE_FREED))
        return rows

    def _title(self) -> str:
        what = f"'{self.name}'" if self.name is not None else "tensor"
        shape = "[" + ", ".join(str(s) for s in self.shape) + "]"
        fn = f", grad_fn=<{self.created_by}>" if self.created_by is not None else ""
        return f"{what} of shape {shape} on {self.device}, requires_grad={self.requires_grad}{fn}"

    def __str__(self) -> str:
        out = [self._title()]
        out += [f"  {key}: {text}" for key, text in self._lines()]
        if self.advice:
            out.append("  what to do instead:")
            out += [f"    - {a.text}" for a in self.advice]
        return "\n".join(out)

    __repr__ = __str__

    def _repr_markdown_(self) -> str:
        out = [f"**{self._title()}**", ""]
        out += [f"- **{key}**: {text}" for key, text in self._lines()]
        if self.advice:
            out += ["- **what to do instead**:"]
            out += [f"    - {a.text}" for a in self.advice]
        return "\n".join(out)


_FREED = (
    "freed: a backward without retain_graph=True already ran through it and freed what its "
    "nodes saved, so another backward through it raises 'Trying to backward through the graph "
    "a second time'. Pass retain_graph=True to the first backward, or recompute the forward."
)
_MAYBE_FREED = (
    "a custom Function in it freed its saved tensors in an earlier backward: another backward "
    "raises if that Function's backward reads ctx.saved_tensors."
)


def explain(tensor, names: dict | None = None) -> Explanation:
    """Explain ``tensor``'s autograd state: leaf or not and why, whether the next backward fills
    its ``.grad``, which op and leaves made it, and what to do instead.

    ``names`` maps names to tensors (``dict(model.named_parameters())``) to name the leaves.

    Example::

        >>> b = leafgrad.rand(10, requires_grad=True).cuda()
        >>> e = leafgrad.autograd.explain(b)
        >>> e.is_leaf, e.created_by, e.grad_will_be_filled
        (False, 'ToCopyBackward0', False)
    """
    by_id = {id(t): n for n, t in (names or {}).items()}
    name = by_id.get(id(tensor))
    try:
        grad_fn = tensor.grad_fn
    except RuntimeError as err:  # a view whose base was written in a mode that forbids it
        return _unreadable(tensor, name, err)
    if grad_fn is None:
        leaf_kind, leaf_reason = _leaf_reason(tensor, by_id)
        created_by, leaves, freed = None, (), None
    else:
        leaves, freed = _walk(grad_fn, by_id)
        created_by = type(grad_fn).__name__
        leaf_kind, leaf_reason = _non_leaf_reason(tensor, grad_fn, by_id)
    grad_kind, filled, grad_reason = _grad_reason(tensor, grad_fn)
    warns = grad_fn is not None and not tensor._retains_grad and tensor._grad is None
    return Explanation(
        name=name,
        shape=tuple(tensor.shape),
        device=str(tensor.device),
        is_leaf=grad_fn is None,
        requires_grad=tensor.requires_grad,
        leaf_kind=leaf_kind,
        leaf_reason=leaf_reason,
        grad_will_be_filled=filled,
        grad_kind=grad_kind,
        grad_reason=grad_reason,
        grad_warning=NON_LEAF_GRAD_WARNING if warns else None,
        created_by=created_by,
        from_leaves=leaves,
        graph_freed=freed,
        advice=tuple(_advice(tensor, grad_fn, leaf_kind, grad_kind, leaves, by_id)),
    )


def _unreadable(tensor, name, err) -> Explanation:
    return Explanation(
        name=name,
        shape=tuple(tensor.shape),
        device=str(tensor.device),
        is_leaf=None,
        requires_grad=tensor.requires_grad,
        leaf_kind="unreadable",
        leaf_reason=f"Reading its grad_fn, and so is_leaf, raises PyTorch's error: {err}",
        grad_will_be_filled=False,
        grad_kind="unreadable",
        grad_reason="A backward through it raises the same error.",
        grad_warning=None,
        created_by=None,
        from_leaves=(),
        graph_freed=None,
        advice=(
            Advice(
                "view_and_write_together",
                "Make the view and the in-place write of its base both inside no_grad (not "
                "tracked) or both outside it (tracked), or make the view after the write.",
            ),
        ),
    )


# --- labels ------------------------------------------------------------------------------------


def _label(t, name: str | None = None) -> str:
    shape = "[" + ", ".join(str(s) for s in t.shape) + "]"
    where = "" if t.device.type == "cpu" else f" on {t.device}"
    if name is not None:
        return f"'{name}' (shape {shape}{where})"
    return f"a tensor of shape {shape}{where}"


def _name_of(t, by_id: dict) -> str:
    return _label(t, by_id.get(id(t)))


# --- the graph ---------------------------------------------------------------------------------


def _walk(grad_fn, by_id: dict) -> tuple[tuple[LeafRef, ...], bool | None]:
    """The leaves below ``grad_fn`` (first reached first, depth first in ``next_functions``
    order, no recursion) and whether a backward through it would hit freed saved values."""
    leaves: list[LeafRef] = []
    seen = {id(grad_fn)}
    stack = [grad_fn]
    freed: bool | None = False
    while stack:
        node = stack.pop()
        if isinstance(node, AccumulateGrad):
            v = node.variable
            if not _inherits_requires_grad(v):  # PyTorch records no edge to it
                leaves.append(LeafRef(v, by_id.get(id(v)), tuple(v.shape)))
            continue
        state = _node_freed(node)
        if state is True:
            freed = True
        elif state is None and freed is False:
            freed = None
        children = [n for n, _ in node.next_functions if n is not None]
        for child in reversed(children):
            if id(child) not in seen:
                seen.add(id(child))
                stack.append(child)
    return tuple(leaves), freed


def _inherits_requires_grad(t) -> bool:
    """Note [Views that inherit requires_grad]: a leaf view whose base requires grad."""
    return t._base is not None and t._base.requires_grad and t._grad_fn is None


def _node_freed(node) -> bool | None:
    """True when ``node`` freed saved tensors a backward would read; None when that depends on
    user code (a custom Function's backward may or may not read ``ctx.saved_tensors``)."""
    if getattr(node, "_released", False):
        return True
    inner = getattr(node, "_fn", None)  # CopySlices runs the in-place op's own node
    if inner is not None and getattr(inner, "_released", False):
        return True
    if getattr(node, "_freed", False):
        return None
    return False


# --- why it is or is not a leaf ----------------------------------------------------------------

_RULE = "is_leaf is exactly grad_fn is None"


def _leaf_reason(t, by_id: dict) -> tuple[str, str]:
    """(kind, text) for a leaf (Note [Explain from state])."""
    from .._storage import INFERENCE_MODE, NO_GRAD_MODE

    base = t._base
    if base is not None:
        meta = t.__dict__.get("_vmeta")
        creation = meta.creation if meta is not None else None
        of = _name_of(base, by_id)
        inherits = (
            " It reports requires_grad=True only because its base requires grad."
            if t.requires_grad
            else ""
        )
        if creation == NO_GRAD_MODE:
            return "view_no_grad", (
                f"It is a view of {of} made under no_grad (or set_grad_enabled(False)), so the "
                f"view op was not recorded and grad_fn is None ({_RULE}).{inherits}"
            )
        if creation == INFERENCE_MODE:
            return "view_inference", (
                f"It is a view of {of} made in inference_mode, where nothing is recorded, so "
                f"grad_fn is None ({_RULE}).{inherits}"
            )
        return "view_untracked", (
            f"It is a view of {of} made while that base did not require grad: a view op is "
            f"recorded only when its base requires grad, so grad_fn is None ({_RULE})."
            f"{inherits}"
        )
    if t._inference:
        return "inference", (
            "It is an inference tensor: it was made in inference_mode, where no op is recorded, "
            f"so grad_fn is None ({_RULE})."
        )
    sibling = _detached_from(t)
    if t.requires_grad:
        from ..nn.parameter import Parameter

        if isinstance(t, Parameter):
            return "parameter", (
                "It is an nn.Parameter: a tensor made by the user that requires grad and that no "
                f"recorded op made ({_RULE})."
            )
        text = (
            "It requires grad and no recorded op made it: requires_grad was set on this very "
            "tensor, by a factory (torch.rand(10, requires_grad=True), also with device='cuda'), "
            "by requires_grad_() (which changes the tensor in place and returns it, not a new "
            f"tensor) or by .requires_grad = True ({_RULE})."
        )
        if sibling is not None:
            text += (
                f" It shares memory and version counter with {_name_of(sibling, by_id)}, which "
                "also requires grad: it was made by detach() and then asked for grad, so it is a "
                "leaf of its own whose gradient is separate from that tensor's."
            )
        return "user", text
    if sibling is not None:
        return "detached", (
            "It is a .detach() result: it shares memory and version counter with "
            f"{_name_of(sibling, by_id)}, which requires grad, but detach() returns a new "
            f"tensor that does not require grad and has no grad_fn ({_RULE})."
        )
    text = (
        "It does not require grad, and a tensor that does not require grad is a leaf: autograd "
        "records an op only in grad mode and only when one of its inputs requires grad. So "
        "factory results, results of ops on tensors none of which requires grad, results "
        "computed under no_grad, and copies made by .cuda()/.to()/.double() of a tensor that "
        f"does not require grad all have no grad_fn ({_RULE})."
    )
    if t.device.type != "cpu":
        text += (
            f" In particular, being on {t.device} does not make it a non-leaf: a .cuda() copy of "
            "a tensor that does not require grad is recorded by nothing."
        )
    return "untracked", text


def _detached_from(t):
    """Another tensor requiring grad that shares ``t``'s memory and version counter and is not
    one of its views: what ``detach()`` leaves behind (``.data`` has a counter of its own)."""
    cell = t.__dict__.get("_storage")
    if cell is None:
        return None
    for m in cell.live():
        if m is t or m._base is t or m._version_counter is not t._version_counter:
            continue
        if m.requires_grad and m._base is None:
            return m
    return None


def _non_leaf_reason(t, grad_fn, by_id: dict) -> tuple[str, str]:
    """(kind, text) for a tensor with a grad_fn."""
    name = type(grad_fn).__name__
    written = (
        f" It was written in place since it was made (version {t._version}); the last recorded "
        "write gave it this grad_fn."
        if t._version > 0 and t._base is None
        else ""
    )
    if name == "ToCopyBackward0":
        src = _source(grad_fn)
        back = f" back to {_name_of(src, by_id)}" if src is not None else ""
        return "copy", (
            f"It is not a leaf: it is a copy to another device or dtype (.cuda(), .to(), "
            f".double(), ...) of a tensor that requires grad, which autograd records as "
            f"{name}; the gradient flows through the copy{back} ({_RULE})."
        )
    if t._base is not None:
        return "view", (
            f"It is not a leaf: it is a view of {_name_of(t._base, by_id)} made in grad mode "
            f"while that base required grad, recorded as {name} ({_RULE})."
        )
    return "op", (
        f"It is not a leaf: it is the result of an op recorded as {name}, because the op ran in "
        f"grad mode and at least one of its inputs required grad ({_RULE}).{written}"
    )


def _source(grad_fn):
    """The tensor a one-input node was made from, when that is a leaf (its AccumulateGrad)."""
    for node, _ in grad_fn.next_functions:
        if isinstance(node, AccumulateGrad):
            return node.variable
    return None


# --- whether the next backward fills .grad -----------------------------------------------------


def _grad_reason(t, grad_fn) -> tuple[str, bool, str]:
    """(kind, filled, text) for ``.grad``."""
    if grad_fn is not None:
        if t._retains_grad:
            text = (
                "retain_grad() was called on it, so backward also stores the gradient that flows "
                "through it in .grad, although it is not a leaf."
            )
            return "retained", True, text
        text = (
            "Only leaves get .grad filled by backward; the gradient flows through this tensor to "
            "the leaves it was made from and is not kept, unless retain_grad() is called before "
            "backward."
        )
        return "non_leaf", False, text
    if not t.requires_grad:
        text = "It does not require grad, so no backward computes a gradient for it."
        if t._inference:
            text += (
                " It is an inference tensor: requires_grad_() on it outside inference_mode raises."
            )
        return "no_requires_grad", False, text
    if _inherits_requires_grad(t):
        text = (
            "It is a view that was not recorded and reports requires_grad=True only through its "
            "base: it has no AccumulateGrad of its own, so a gradient that reaches it is dropped "
            "and neither its .grad nor its base's is filled."
        )
        return "view_dropped", False, text
    text = (
        "It is a leaf that requires grad: backward accumulates (adds) the gradient that reaches "
        "it into .grad, through its AccumulateGrad node."
    )
    if t._grad is not None:
        text += (
            " Its .grad is already filled, so the next backward adds to it: set .grad = None "
            "(optimizer.zero_grad()) first for a fresh gradient."
        )
    if t._inference:
        text += (
            " It is an inference tensor: an op that would save it for backward raises "
            "'Inference tensors cannot be saved for backward'."
        )
    return "accumulate", True, text


# --- what to do instead ------------------------------------------------------------------------


def _advice(t, grad_fn, leaf_kind, grad_kind, leaves, by_id) -> list[Advice]:
    out = []
    if leaf_kind == "copy":
        src = _source(grad_fn)
        moved = src is not None and src.device != t.device
        where = f"device='{t.device}'" if moved or src is None else f"dtype={t.dtype}"
        how = f".to('{t.device}')" if moved or src is None else f".to({t.dtype})"
        out.append(
            Advice(
                "create_on_device",
                f"If you wanted a leaf that requires grad: create it there, "
                f"torch.rand(..., {where}, requires_grad=True); or copy first and ask for grad "
                f"after, x{how}.requires_grad_() with x not requiring grad, or "
                f"x.detach(){how}.requires_grad_(). Then its .grad is filled.",
            )
        )
    if grad_kind == "non_leaf":
        out.append(
            Advice(
                "retain_grad",
                "If you want this intermediate's gradient: call .retain_grad() on it before "
                "backward.",
            )
        )
        out.append(
            Advice(
                "detach",
                "If you only want its values, untracked: .detach() gives a leaf that shares its "
                "memory and does not require grad.",
            )
        )
        updated = [
            leaf.tensor
            for leaf in leaves
            if leaf.tensor._grad is not None and leaf.tensor.shape == t.shape
        ]
        if updated and any(_source_is(n, updated) for n, _ in grad_fn.next_functions):
            out.append(
                Advice(
                    "no_grad_update",
                    f"It was computed directly from {_name_of(updated[0], by_id)}, whose .grad is "
                    "filled: if this is a parameter update (w = w - lr * w.grad), do it in place "
                    "under `with torch.no_grad(): w -= lr * w.grad`, so w stays the same leaf, "
                    "then reset w.grad.",
                )
            )
    elif grad_kind == "accumulate" and t._grad is not None:
        out.append(
            Advice(
                "no_grad_update",
                "To update it (an optimizer step), write in place under `with torch.no_grad(): "
                "w -= lr * w.grad`: outside no_grad an in-place op on a leaf that requires grad "
                "raises, and w = w - lr * w.grad makes a new tensor that is not a leaf.",
            )
        )
    elif grad_kind == "view_dropped":
        out.append(
            Advice(
                "view_in_grad_mode",
                "Make the view in grad mode (outside no_grad) so its gradient reaches the base's "
                ".grad, or take a leaf of its own: v.detach().requires_grad_().",
            )
        )
    elif grad_kind == "no_requires_grad":
        if t._inference:
            out.append(
                Advice(
                    "clone_outside_inference",
                    "To use it with autograd, clone it outside inference_mode: t.clone() is a "
                    "normal tensor, and t.clone().requires_grad_() a leaf that requires grad.",
                )
            )
        elif t.dtype.is_floating_point or t.dtype.is_complex:
            out.append(
                Advice(
                    "requires_grad_",
                    "If you want its gradient: call .requires_grad_() on it before computing with "
                    "it (it changes this tensor in place and returns it).",
                )
            )
        else:
            out.append(
                Advice(
                    "float_dtype",
                    f"Only floating point and complex tensors can require grad; it is {t.dtype}.",
                )
            )
    return out


def _source_is(node, tensors) -> bool:
    return isinstance(node, AccumulateGrad) and any(node.variable is x for x in tensors)
