"""Pictures of the autograd graph: ``make_dot`` (Graphviz, torchviz's conventions) and
``print_graph`` (an indented text tree for terminals).

Both walk ``grad_fn.next_functions`` from the outputs with an explicit queue or stack, never by
recursion, so graphs of 10^5 nodes and more are drawn (or summarised) as DESIGN.md requires.

Note [Viz colours] (torchviz's ``make_dot``): backward nodes are grey boxes named
``type(fn).__name__``; leaves whose ``.grad`` backward fills are light blue, named from ``params``,
with their shape; output tensors are dark olive green 1 and the base of an output that is a view
dark olive green 3 (a dotted edge); saved tensors are orange (always for custom Functions, for
built-in nodes with ``show_saved=True``). leafgrad adds: tensors that called ``retain_grad()`` in
light yellow, and one dashed box counting the nodes left out beyond ``max_nodes``.
"""

from __future__ import annotations

import collections
import sys
from typing import IO, Any, NamedTuple

from . import _dtype as D
from ._tensor import Tensor
from .autograd.function import BackwardCFunction
from .autograd.graph import AccumulateGrad, OpNode

__all__ = ["make_dot", "print_graph", "MAX_NODES"]

# Beyond this many backward nodes a picture is unreadable and Graphviz slow: the rest is counted.
MAX_NODES = 2000

GRAPHVIZ_PIP = (
    "leafgrad.viz.make_dot needs the Python package 'graphviz': pip install graphviz\n"
    "(to render it also needs the Graphviz program 'dot': apt-get install graphviz, "
    "brew install graphviz or conda install graphviz)"
)
GRAPHVIZ_DOT = (
    "leafgrad.viz.make_dot: the Graphviz program {!r} was not found on your PATH, so the graph "
    "was built but cannot be rendered.\n"
    "Install Graphviz: apt-get install graphviz (Debian/Ubuntu), brew install graphviz (macOS) "
    "or conda install graphviz; 'pip install graphviz' installs only the Python package.\n"
    "Without it, str(dot) or dot.source gives the DOT text and dot.save() writes it to a file."
)

_NODE_ATTR = dict(
    style="filled",
    shape="box",
    align="left",
    fontsize="10",
    ranksep="0.1",
    height="0.2",
    fontname="monospace",
)
_LEAF, _OUTPUT, _VIEW_BASE, _SAVED, _RETAINED = (
    "lightblue",
    "darkolivegreen1",
    "darkolivegreen3",
    "orange",
    "lightyellow",
)


class _Saved(NamedTuple):
    """What a node saved for backward, as drawn: PyTorch's name (``self``, ``result``...),
    shape and dtype."""

    name: str
    shape: tuple
    dtype: Any


# --- what leafgrad nodes know ------------------------------------------------------------------
def _backward_keys() -> dict:
    """``id(node._backward) -> (forward key, needs, placeholders)`` for dispatch's cached
    backwards: the forward key starts with the op, whose operand names PyTorch's saved names
    follow, and ends with its static arguments."""
    from .ops import dispatch

    return {id(fn): key for key, fn in list(dispatch._BACKWARD.items())}


def _op_key(node, keys: dict):
    key = keys.get(id(getattr(node, "_backward", None)))
    if key is None or not isinstance(key[0], tuple) or not hasattr(key[0][0], "_pt_saved_idx"):
        return None
    return key


def _tensor_meta(t) -> tuple:
    return tuple(t._data.shape), t._dtype


def _saved_tensors(node, keys: dict) -> list[_Saved]:
    """The tensors ``node`` saved for backward (empty once backward freed them)."""
    if isinstance(node, BackwardCFunction):
        if node._freed:
            return []
        out = []
        for s in node._saved:
            if s is None:
                continue
            if hasattr(s, "tensor"):
                out.append(_Saved("", *_tensor_meta(s.tensor)))
            else:
                out.append(_Saved("", tuple(s.data.shape), s.dtype))
        return out
    if not isinstance(node, OpNode) or not node._has_saved or node._released:
        return []
    key = _op_key(node, keys)
    checks = node._saved_checks or ()
    results = [c for c in checks if c.tensor is None and c.meta is not None]
    multi = node._n_out > 1
    out = []
    if key is None:  # an op made outside the table: name by position
        for c in checks:
            if c.tensor is not None:
                out.append(_Saved(f"saved{c.operand}", *_tensor_meta(c.tensor)))
    else:
        (op, *_), needs, _ = key
        indices = sorted({j for i in needs for j in op._pt_saved_idx.get(i, ())})
        operands = node._operands or ()
        primals = node._primals or ()
        # Note [Views inside ops]: a view the op made inside is kept as its base; drawn as the view
        views = {c.operand: c.view_shape for c in checks if hasattr(c, "view_shape")}
        for j in indices:
            t = operands[j] if j < len(operands) else None
            if t is not None:
                shape, dtype = _tensor_meta(t)
                out.append(_Saved(op.operands[j], tuple(views.get(j, shape)), dtype))
            elif j < len(primals) and hasattr(primals[j], "shape"):
                # Note [Original self]: an in-place op keeps the array ``self`` had
                a = primals[j]
                out.append(_Saved(op.operands[j], tuple(a.shape), D.from_numpy_dtype(a.dtype)))
    for c in results:
        dtype, _, shape = c.meta
        name = f"result{c.output_nr}" if multi else "result"
        out.append(_Saved(name, tuple(shape), dtype))
    return out


def _attributes(node, keys: dict, saved: list[_Saved]) -> dict:
    """What ``show_attrs`` prints: saved tensors, the op's static arguments, next functions."""
    attrs = {}
    for s in saved:
        attrs[s.name or "saved"] = f"[saved tensor {_size_str(s.shape)}]"
    key = _op_key(node, keys)
    if key is not None:
        for item in key[0][3:]:  # (name, type, value) of each static argument
            attrs[item[0]] = str(item[-1])
    if isinstance(node, BackwardCFunction):
        attrs["needs_input_grad"] = str(tuple(node.needs_input_grad))
    nexts = ", ".join("None" if f is None else type(f).__name__ for f, _ in node.next_functions)
    if nexts:
        attrs["next_functions"] = f"({nexts})"
    return attrs


def _fn_label(node, show_attrs: bool, max_attr_chars: int, keys: dict, saved) -> str:
    """The node's name, with a table of its attributes under a rule when ``show_attrs``."""
    name = type(node).__name__
    if not show_attrs:
        return name
    attrs = _attributes(node, keys, saved)
    if not attrs:
        return name
    width = max(max_attr_chars, 3)
    col1 = max(len(k) for k in attrs)
    col2 = min(max(len(v) for v in attrs.values()), width)

    def cut(s: str) -> str:
        return s[: col2 - 3] + "..." if len(s) > col2 else s

    rows = "\n".join(f"{k:<{col1}}: {cut(v):>{col2}}" for k, v in attrs.items())
    return f"{name}\n{'-' * max(col1 + col2 + 2, len(name))}\n{rows}"


def _size_str(shape) -> str:
    return "(" + ", ".join(str(int(v)) for v in shape) + ")"


def _var_label(t, names: dict, name: str | None = None) -> str:
    if not name:
        name = names.get(id(t), "")
    return f"{name}\n {_size_str(t.shape)}"


def _saved_label(s: _Saved) -> str:
    return f"{s.name}\n {_size_str(s.shape)}\n {s.dtype}"


def _outputs(var) -> list:
    outs = list(var) if isinstance(var, (tuple, list)) else [var]
    for t in outs:
        if not isinstance(t, Tensor):
            raise TypeError(f"expected a Tensor or a tuple of Tensors, got {type(t).__name__}")
    return outs


def _param_names(params) -> dict:
    if params is None:
        return {}
    for name, p in params.items():
        if not isinstance(p, Tensor):
            raise TypeError(f"params[{name!r}] is a {type(p).__name__}, not a Tensor")
    return {id(p): name for name, p in params.items()}


def _retained(node) -> list:
    kept = getattr(node, "_retained", None)
    if not kept:
        return []
    return [t for t in (ref() for _, ref in sorted(kept.items())) if t is not None]


# --- Graphviz ------------------------------------------------------------------------------
def _graphviz():
    try:
        import graphviz
    except ImportError as e:
        raise ImportError(GRAPHVIZ_PIP) from e
    return graphviz


_DOT_CLASSES: dict = {}


def _digraph_class():
    """A ``graphviz.Digraph`` whose rendering says how to install Graphviz when ``dot`` is
    missing (made on first use: importing leafgrad must not need graphviz)."""
    if _DOT_CLASSES:
        return _DOT_CLASSES["Digraph"]
    graphviz = _graphviz()

    class GraphvizNotFound(graphviz.ExecutableNotFound):
        """Graphviz's ``ExecutableNotFound`` (a RuntimeError), saying how to install it."""

        def __init__(self, program: str) -> None:
            RuntimeError.__init__(self, GRAPHVIZ_DOT.format(program))

    def _explained(method):
        def call(self, *args, **kwargs):
            try:
                return method(self, *args, **kwargs)
            except GraphvizNotFound:
                raise
            except graphviz.ExecutableNotFound as e:
                program = "unflatten" if method.__name__ == "unflatten" else self.engine
                raise GraphvizNotFound(program) from e

        call.__name__, call.__doc__ = method.__name__, method.__doc__
        return call

    class Digraph(graphviz.Digraph):
        """``graphviz.Digraph``; rendering without Graphviz's programs raises
        ``GraphvizNotFound`` saying how to install them."""

        # ``view`` and Jupyter's ``_repr_mimebundle_`` go through ``render`` and ``pipe``.
        pipe = _explained(graphviz.Digraph.pipe)
        render = _explained(graphviz.Digraph.render)
        unflatten = _explained(graphviz.Digraph.unflatten)

    for cls in (Digraph, GraphvizNotFound):
        cls.__module__, cls.__qualname__ = __name__, cls.__name__
    _DOT_CLASSES.update(Digraph=Digraph, GraphvizNotFound=GraphvizNotFound)
    return Digraph


def _resize(dot, size_per_element: float = 0.15, min_size: float = 12) -> None:
    """torchviz's ``resize_graph``: the drawing grows with the number of statements."""
    size = max(min_size, len(dot.body) * size_per_element)
    dot.graph_attr.update(size=f"{size},{size}")


def make_dot(
    var,
    params: dict | None = None,
    show_attrs: bool = False,
    show_saved: bool = False,
    max_attr_chars: int = 50,
    *,
    max_nodes: int | None = MAX_NODES,
):
    """The autograd graph behind ``var`` (a tensor, or a tuple/list of them) as a
    ``graphviz.Digraph``, drawn as torchviz draws PyTorch's (Note [Viz colours]).

    ``params`` names leaves (``dict(model.named_parameters())``); ``show_saved`` adds the tensors
    nodes saved for backward, ``show_attrs`` what each node knows (up to ``max_attr_chars`` per
    value). Beyond ``max_nodes`` backward nodes (None: no bound), the ones farthest from the
    outputs are counted in one box. Building needs the ``graphviz`` package; rendering (Jupyter
    shows it inline, ``.render()``, ``.view()``) needs Graphviz's ``dot`` program.

    Example::

        >>> dot = make_dot(model(x).mean(), params=dict(model.named_parameters()))
        >>> dot.render("graph", format="png")  # doctest: +SKIP
    """
    outputs = _outputs(var)
    names = _param_names(params)
    dot = _digraph_class()(node_attr=dict(_NODE_ATTR), graph_attr=dict(size="12,12"))
    keys = _backward_keys() if (show_saved or show_attrs) else {}
    ids: dict = {}  # id(object) -> node name in the DOT source
    done: set = set()  # id of each tensor drawn
    alive: list = []  # keeps every drawn object alive, so no id() is reused during the walk

    def node_id(obj) -> str:
        name = ids.get(id(obj))
        if name is None:
            name = ids[id(obj)] = f"n{len(ids)}"
            alive.append(obj)
        return name

    def fresh_id() -> str:
        alive.append(None)
        return f"s{len(alive)}"

    drawn: dict = {}  # id(fn) -> True (drawn) or False (counted in the left-out box)
    queue: collections.deque = collections.deque()
    n_drawn = n_left = 0
    left_box = "omitted"
    left_edges: set = set()

    def discover(fn) -> bool:
        nonlocal n_drawn, n_left
        seen = drawn.get(id(fn))
        if seen is not None:
            return seen
        draw = max_nodes is None or n_drawn < max_nodes
        drawn[id(fn)] = draw
        alive.append(fn)
        if draw:
            n_drawn += 1
        else:
            n_left += 1
        queue.append(fn)
        return draw

    # Outputs first, then their view bases, in the order given (torchviz's add_base_tensor).
    tensors = [(t, _OUTPUT) for t in outputs]
    k = 0
    while k < len(tensors):
        t, color = tensors[k]
        k += 1
        if id(t) in done:
            continue
        done.add(id(t))
        dot.node(node_id(t), _var_label(t, names), fillcolor=color)
        fn = t.grad_fn
        if fn is not None:
            draw = discover(fn)
            dot.edge(node_id(fn) if draw else left_box, node_id(t))
        if t._is_view():
            tensors.append((t._base, _VIEW_BASE))
            dot.edge(node_id(t._base), node_id(t), style="dotted")

    while queue:
        fn = queue.popleft()
        if not drawn[id(fn)]:
            for u, _ in fn.next_functions:
                if u is not None:
                    discover(u)
            continue
        me = node_id(fn)
        custom = isinstance(fn, BackwardCFunction)
        # Custom Functions' saved tensors are always drawn, built-in nodes' with show_saved.
        saved = _saved_tensors(fn, keys) if (custom or show_saved or show_attrs) else []
        if custom or show_saved:
            for s in saved:
                sid = fresh_id()
                dot.edge(*((sid, me) if custom else (me, sid)), dir="none")
                dot.node(sid, _saved_label(s), fillcolor=_SAVED)
        if isinstance(fn, AccumulateGrad):
            v = fn.variable
            if id(v) not in done:
                done.add(id(v))
                dot.node(node_id(v), _var_label(v, names), fillcolor=_LEAF)
            dot.edge(node_id(v), me)
        dot.node(me, _fn_label(fn, show_attrs, max_attr_chars, keys, saved))
        for t in _retained(fn):
            if id(t) not in done:
                done.add(id(t))
                dot.node(node_id(t), _var_label(t, names), fillcolor=_RETAINED)
                dot.edge(me, node_id(t))
        for u, _ in fn.next_functions:
            if u is None:
                continue
            if discover(u):
                dot.edge(node_id(u), me)
            elif me not in left_edges:
                left_edges.add(me)
                dot.edge(left_box, me)

    if n_left:
        label = f"{n_left} more backward nodes\nnot drawn (max_nodes={max_nodes})"
        dot.node(left_box, label, style="dashed", fillcolor="white")
    _resize(dot)
    return dot


# --- text ----------------------------------------------------------------------------------
_MAX_INDENT = 32  # deeper lines are not indented further but start with their depth


def print_graph(
    output,
    file: IO[str] | None = None,
    *,
    params: dict | None = None,
    max_nodes: int | None = MAX_NODES,
) -> str:
    """Print the autograd graph behind ``output`` (a tensor or a tuple/list of them) as an
    indented tree, and return the text.

    Each backward node gets a number the first time it is printed; a node reached again (a
    shared subgraph) is printed once more as ``Name #k (see above)``, without its inputs.
    ``AccumulateGrad`` lines name their leaf from ``params`` and give its shape. Beyond
    ``max_nodes`` backward nodes (None: no bound) the rest is counted on a last line.

    Example::

        >>> text = print_graph((a * b).sum(), params={"a": a, "b": b})
        output ()
          SumBackward0 #1
            MulBackward0 #2
              AccumulateGrad #3 <- a (3)
              AccumulateGrad #4 <- b (3)
    """
    outputs = _outputs(output)
    names = _param_names(params)
    numbers: dict = {}  # id(fn) -> its number
    alive: list = []
    lines: list[str] = []
    stack: list = []
    for i in range(len(outputs) - 1, -1, -1):
        stack.append((outputs[i], 0, i))
    truncated = False

    while stack:
        item, depth, index = stack.pop()
        pad = "  " * min(depth, _MAX_INDENT) + (f"[{depth}] " if depth > _MAX_INDENT else "")
        if isinstance(item, Tensor):
            title = names.get(id(item)) or ("output" if len(outputs) == 1 else f"output {index}")
            lines.append(f"{pad}{title} {_size_str(item.shape)}")
            if item.grad_fn is not None:
                stack.append((item.grad_fn, depth + 1, 0))
            continue
        fn = item
        name = type(fn).__name__
        k = numbers.get(id(fn))
        if k is not None:
            lines.append(f"{pad}{name} #{k} (see above)")
            continue
        if max_nodes is not None and len(numbers) >= max_nodes:
            truncated = True
            continue
        k = numbers[id(fn)] = len(numbers) + 1
        alive.append(fn)
        line = f"{pad}{name} #{k}"
        if isinstance(fn, AccumulateGrad):
            v = fn.variable
            line += f" <- {names.get(id(v), 'leaf')} {_size_str(v.shape)}"
        kept = _retained(fn)
        if kept:
            line += " [retains grad: " + ", ".join(_size_str(t.shape) for t in kept) + "]"
        lines.append(line)
        nexts = [u for u, _ in fn.next_functions if u is not None]
        for u in reversed(nexts):
            stack.append((u, depth + 1, 0))

    if truncated:
        left = _count_nodes(outputs) - len(numbers)
        lines.append(f"... {left} more backward nodes not shown (max_nodes={max_nodes})")
    text = "\n".join(lines)
    print(text, file=sys.stdout if file is None else file)
    return text


def _count_nodes(outputs) -> int:
    """How many backward nodes are reachable from ``outputs``."""
    seen: set = set()
    alive: list = []
    stack = [t.grad_fn for t in outputs if t.grad_fn is not None]
    while stack:
        fn = stack.pop()
        if id(fn) in seen:
            continue
        seen.add(id(fn))
        alive.append(fn)
        stack.extend(u for u, _ in fn.next_functions if u is not None)
    return len(seen)
