"""Pictures of the graph (leafgrad.viz): ``make_dot`` draws the graph PyTorch records for the same
program, by torchviz's rules (Note [Viz colours]); ``print_graph`` prints it as a text tree.

The expected picture comes from walking torch's ``grad_fn.next_functions`` with torchviz's rules
(``_torch_dot`` below); both pictures are compared as multisets of labelled nodes and edges.
"""

from __future__ import annotations

import collections
import io
import pathlib
import re
import shutil
import subprocess
import sys

import graphviz
import pytest
import torch

import leafgrad
import leafgrad.viz as viz

lg = leafgrad
ROOT = pathlib.Path(__file__).resolve().parent.parent

# --- reading a Digraph back ----------------------------------------------------------------
_ATTR = re.compile(r'(\w+)=("(?:[^"\\]|\\.)*"|\S+)', re.S)
_EDGE = re.compile(r"\t(\S+) -> (\S+)(?: \[(.*)\])?\n?$", re.S)
_NODE = re.compile(r"\t(\S+) \[(.*)\]\n?$", re.S)


def _attrs(text: str | None) -> dict:
    out = {}
    for k, v in _ATTR.findall(text or ""):
        out[k] = v[1:-1].replace('\\"', '"') if v.startswith('"') else v
    return out


def _parse(dot) -> tuple[collections.Counter, collections.Counter]:
    """(nodes, edges) of a Digraph as multisets of (label, fillcolor) and of
    (source node, target node, edge attributes)."""
    nodes, edges = {}, []
    for stmt in dot.body:
        m = _EDGE.match(stmt)
        if m:
            edges.append((m[1], m[2], tuple(sorted(_attrs(m[3]).items()))))
            continue
        m = _NODE.match(stmt)
        assert m, f"unexpected statement {stmt!r}"
        a = _attrs(m[2])
        nodes[m[1]] = (a.get("label", m[1]), a.get("fillcolor"))
    return (
        collections.Counter(nodes.values()),
        collections.Counter((nodes[s], nodes[t], a) for s, t, a in edges),
    )


# --- torchviz's rules over torch's graph (the expected picture) ----------------------------
def _size(shape) -> str:
    return "(" + ", ".join(str(int(v)) for v in shape) + ")"


def _torch_dot(outputs, params=None, show_saved=False, retained=()):
    """torch's graph drawn by torchviz's ``make_dot`` rules, walked without recursion; saved
    tensors are labelled with their dtype and retained tensors drawn as leafgrad draws them."""
    outputs = list(outputs) if isinstance(outputs, (tuple, list)) else [outputs]
    names = {id(p): n for n, p in (params or {}).items()}
    retained_by_fn: dict = {}
    for t in retained:
        retained_by_fn.setdefault(t.grad_fn, []).append(t)
    dot = graphviz.Digraph()
    ids, done, alive = {}, set(), []

    def nid(obj):
        if id(obj) not in ids:
            ids[id(obj)] = f"n{len(ids)}"
            alive.append(obj)
        return ids[id(obj)]

    def fresh():
        alive.append(None)
        return f"s{len(alive)}"

    def var_label(t):
        return f"{names.get(id(t), '')}\n {_size(t.shape)}"

    def saved(fn, sid, name, t, custom):
        if custom:
            dot.edge(sid, nid(fn), dir="none")
        else:
            dot.edge(nid(fn), sid, dir="none")
        dot.node(sid, f"{name}\n {_size(t.shape)}\n {t.dtype}", fillcolor="orange")

    seen, queue = set(), collections.deque()
    tensors = [(t, "darkolivegreen1") for t in outputs]
    for t, color in tensors:
        if id(t) in done:
            continue
        done.add(id(t))
        dot.node(nid(t), var_label(t), fillcolor=color)
        if t.grad_fn is not None:
            if t.grad_fn not in seen:
                seen.add(t.grad_fn)
                queue.append(t.grad_fn)
            dot.edge(nid(t.grad_fn), nid(t))
        if t._is_view():
            tensors.append((t._base, "darkolivegreen3"))
            dot.edge(nid(t._base), nid(t), style="dotted")
    while queue:
        fn = queue.popleft()
        if show_saved:
            for attr in dir(fn):
                if not attr.startswith("_saved_"):
                    continue
                val = getattr(fn, attr)
                vals = val if isinstance(val, tuple) else (val,)
                for i, t in enumerate(vals):
                    if torch.is_tensor(t):
                        name = attr[7:] + (f"[{i}]" if isinstance(val, tuple) else "")
                        saved(fn, fresh(), name, t, False)
        if hasattr(fn, "saved_tensors"):
            for t in fn.saved_tensors:
                saved(fn, fresh(), names.get(id(t), ""), t, True)
        if hasattr(fn, "variable"):
            v = fn.variable
            if id(v) not in done:
                done.add(id(v))
                dot.node(nid(v), var_label(v), fillcolor="lightblue")
            dot.edge(nid(v), nid(fn))
        dot.node(nid(fn), type(fn).__name__)
        for t in retained_by_fn.get(fn, ()):
            if id(t) not in done:
                done.add(id(t))
                dot.node(nid(t), var_label(t), fillcolor="lightyellow")
                dot.edge(nid(fn), nid(t))
        for u, _ in fn.next_functions:
            if u is not None:
                dot.edge(nid(u), nid(fn))
                if u not in seen:
                    seen.add(u)
                    queue.append(u)
    return dot


def _same_picture(program, show_saved=False):
    """Run ``program(module)`` for torch and leafgrad; it returns (outputs, params, retained)."""
    t_out, t_params, t_kept = program(torch)
    l_out, l_params, l_kept = program(lg)
    expected = _parse(_torch_dot(t_out, t_params, show_saved, t_kept))
    got = _parse(viz.make_dot(l_out, params=l_params, show_saved=show_saved))
    assert got[0] == expected[0]
    assert got[1] == expected[1]
    return got


# --- programs ------------------------------------------------------------------------------
def _mlp(m):
    m.manual_seed(0)
    model = m.nn.Sequential()
    model.add_module("W0", m.nn.Linear(8, 16))
    model.add_module("tanh", m.nn.Tanh())
    model.add_module("W1", m.nn.Linear(16, 1))
    x = m.randn(2, 8)
    return model(x).mean(), dict(model.named_parameters()), ()


def _retain(m):
    x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
    w = m.tensor([0.5, -1.0, 2.0], requires_grad=True)
    h = x * w
    h.retain_grad()
    g = h.exp()
    g.retain_grad()
    return (g * x).sum(), {"x": x, "w": w}, (h, g)


def _views_inplace(m):
    a = m.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    b = a.clone()
    v = b[1:3]
    v.mul_(2.0)
    b.exp_()
    return (b.sum(), v), {"a": a}, ()


def _several_outputs(m):
    a = m.tensor([1.0, 2.0], requires_grad=True)
    b = m.tensor([3.0, 4.0], requires_grad=True)
    shared = a * b
    return [shared.sin().sum(), shared.cos(), (a + 1.0).sum()], {"a": a, "b": b}, ()


def _custom_function(m):
    class Cube(m.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            ctx.save_for_backward(x, y)
            return x**3 * y

        @staticmethod
        def backward(ctx, g):
            x, y = ctx.saved_tensors
            return g * 3 * x**2 * y, g * x**3

    a = m.tensor([1.0, 2.0], requires_grad=True)
    b = m.tensor([0.5, 0.25])
    return Cube.apply(a.exp(), b).sum(), {"a": a}, ()


PROGRAMS = [_mlp, _retain, _views_inplace, _several_outputs, _custom_function]


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__[1:])
def test_make_dot_draws_torchs_graph(program):
    nodes, _ = _same_picture(program)
    assert nodes  # the comparison is between non-empty pictures


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__[1:])
def test_make_dot_show_saved_lists_torchs_saved_tensors(program):
    nodes, _ = _same_picture(program, show_saved=True)
    if program is not _several_outputs:
        assert any(color == "orange" for _, color in nodes)


def test_make_dot_mlp_names_parameters_and_uses_torchvizs_styles():
    y, params, _ = _mlp(lg)
    dot = viz.make_dot(y, params=params)
    nodes, _ = _parse(dot)
    leaves = sorted(label for label, color in nodes if color == "lightblue")
    assert leaves == [
        "W0.bias\n (16)",
        "W0.weight\n (16, 8)",
        "W1.bias\n (1)",
        "W1.weight\n (1, 16)",
    ]
    assert nodes[("\n ()", "darkolivegreen1")] == 1
    assert nodes[("AccumulateGrad", None)] == 4
    for key, value in dict(
        style="filled", shape="box", fontname="monospace", fontsize="10"
    ).items():
        assert dot.node_attr[key] == value
    assert isinstance(dot, graphviz.Digraph)


def test_make_dot_without_params_leaves_are_named_by_shape_only():
    y, _, _ = _mlp(lg)
    nodes, _ = _parse(viz.make_dot(y))
    assert sorted(label for label, c in nodes if c == "lightblue") == [
        "\n (1)",
        "\n (1, 16)",
        "\n (16)",
        "\n (16, 8)",
    ]


def test_make_dot_view_output_shows_its_base_dotted():
    (_, v), _, _ = _views_inplace(lg)
    _, edges = _parse(viz.make_dot(v))
    dotted = [e for e in edges if e[2] == (("style", "dotted"),)]
    assert dotted == [(("\n (4)", "darkolivegreen3"), ("\n (2)", "darkolivegreen1"), dotted[0][2])]


def test_make_dot_show_saved_names_follow_torch():
    def program(m):
        a = m.tensor([1.0, 2.0], requires_grad=True)
        b = m.tensor([[3.0], [4.0]], dtype=m.float64)
        return (a * b).exp().sum(), {"a": a}, ()

    nodes, _ = _same_picture(program, show_saved=True)
    saved = sorted(label for label, c in nodes if c == "orange")
    assert saved == ["other\n (2, 1)\n torch.float64", "result\n (2, 2)\n torch.float64"]


def test_make_dot_show_saved_after_backward_shows_nothing_freed():
    x = lg.tensor([1.0, 2.0], requires_grad=True)
    y = x.exp().sum()
    y.backward()
    nodes, _ = _parse(viz.make_dot(y, show_saved=True))
    assert not any(c == "orange" for _, c in nodes)


def test_make_dot_show_attrs_tabulates_what_the_node_knows():
    x = lg.tensor([[1.0, 2.0]], requires_grad=True)
    w = lg.tensor([[3.0, 4.0]])
    y = (x * w).sum(1)
    dot = viz.make_dot(y, show_attrs=True, max_attr_chars=12)
    labels = [label for label, c in _parse(dot)[0] if c is None]
    mul = next(label for label in labels if label.startswith("MulBackward0"))
    name, rule, *rows = mul.split("\n")
    assert set(rule) == {"-"} and len(rule) >= len(name)
    rows = dict(r.split(": ", 1) for r in rows)
    assert rows["other".ljust(len("next_functions"))].strip() == "[saved te..."
    t_mul = (torch.tensor([[1.0, 2.0]], requires_grad=True) * torch.tensor([[3.0, 4.0]])).grad_fn
    assert t_mul._saved_other is not None and t_mul._saved_self is None  # what torch saved too
    assert "self".ljust(len("next_functions")) not in rows
    summed = next(label for label in labels if label.startswith("SumBackward1"))
    assert "dim" in summed and "keepdim" in summed
    assert "AccumulateGrad" in labels  # no attributes: the bare name
    assert all(len(r) <= len("next_functions") + 2 + 12 for r in mul.split("\n")[2:])


def test_make_dot_rejects_non_tensors():
    with pytest.raises(TypeError, match="expected a Tensor"):
        viz.make_dot([lg.ones(1), 3.0])
    with pytest.raises(TypeError, match=r"params\['w'\] is a list"):
        viz.make_dot(lg.ones(1), params={"w": [1.0]})


# --- big graphs ----------------------------------------------------------------------------
def _chain(n: int):
    x = lg.ones(1, requires_grad=True)
    y = x
    for _ in range(n):
        y = y * 1.0
    return x, y


@pytest.fixture(scope="module")
def long_chain():
    return _chain(100_000)


def test_make_dot_100k_nodes_without_recursion(long_chain):
    x, y = long_chain
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(400)  # far below the graph's depth: any recursion would fail
    try:
        full = viz.make_dot(y, params={"x": x}, max_nodes=None)
        summary = viz.make_dot(y)
        text = viz.print_graph(y, file=io.StringIO())
    finally:
        sys.setrecursionlimit(limit)
    nodes, _ = _parse(full)
    assert nodes[("MulBackward0", None)] == 100_000
    assert nodes[("x\n (1)", "lightblue")] == 1
    nodes, edges = _parse(summary)
    assert sum(c for (label, _), c in nodes.items() if label == "MulBackward0") == viz.MAX_NODES
    left = 100_001 - viz.MAX_NODES
    box = (f"{left} more backward nodes\nnot drawn (max_nodes={viz.MAX_NODES})", "white")
    assert nodes[box] == 1
    assert edges[(box, ("MulBackward0", None), ())] == 1
    assert text.endswith(f"... {left} more backward nodes not shown (max_nodes={viz.MAX_NODES})")


def test_make_dot_max_nodes_keeps_the_nodes_nearest_the_outputs():
    x, y = _chain(10)
    y = y.exp()
    nodes, edges = _parse(viz.make_dot(y, max_nodes=3))
    assert nodes[("ExpBackward0", None)] == 1
    assert nodes[("MulBackward0", None)] == 2
    assert nodes[("AccumulateGrad", None)] == 0
    box = ("9 more backward nodes\nnot drawn (max_nodes=3)", "white")
    assert edges[(box, ("MulBackward0", None), ())] == 1


# --- rendering without Graphviz ------------------------------------------------------------
def test_rendering_without_dot_says_how_to_install_graphviz(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))  # no Graphviz program can be found
    y, params, _ = _mlp(lg)
    dot = viz.make_dot(y, params=params)  # building needs no Graphviz program
    assert "AddmmBackward0" in dot.source
    for render in (
        lambda: dot.pipe(format="svg"),
        lambda: dot.render(tmp_path / "g", format="png"),
        lambda: dot._repr_mimebundle_(),
    ):
        with pytest.raises(graphviz.ExecutableNotFound) as info:
            render()
        assert isinstance(info.value, RuntimeError)
        text = str(info.value)
        assert "'dot' was not found" in text
        for hint in ("apt-get install graphviz", "brew install graphviz", "conda install graphviz"):
            assert hint in text


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot program is not installed")
def test_make_dot_renders_with_dot():
    y, params, _ = _mlp(lg)
    svg = viz.make_dot(y, params=params).pipe(format="svg", encoding="utf-8")
    assert "AddmmBackward0" in svg and "W0.weight" in svg


def test_make_dot_without_the_graphviz_package_says_pip_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "graphviz", None)
    monkeypatch.setattr(viz, "_DOT_CLASSES", {})
    with pytest.raises(ImportError, match="pip install graphviz"):
        viz.make_dot(lg.ones(1, requires_grad=True) * 2)


def test_importing_leafgrad_does_not_import_graphviz():
    code = (
        "import sys; sys.modules['graphviz'] = None\n"
        "import leafgrad, leafgrad.viz\n"
        "x = leafgrad.ones(2, requires_grad=True)\n"
        "print(leafgrad.viz.print_graph((x * 2).sum()))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert out.stdout.startswith("output ()\n  SumBackward0 #1\n")


# --- print_graph ---------------------------------------------------------------------------
def test_print_graph_prints_a_tree_with_shared_nodes_once():
    a = lg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    b = lg.tensor([4.0, 5.0, 6.0], requires_grad=True)
    e = (a * b).exp()
    e.retain_grad()
    y = (e * e + a).sum()
    file = io.StringIO()
    text = viz.print_graph(y, file=file, params={"a": a, "b": b})
    assert file.getvalue() == text + "\n"
    assert text == (
        "output ()\n"
        "  SumBackward0 #1\n"
        "    AddBackward0 #2\n"
        "      MulBackward0 #3\n"
        "        ExpBackward0 #4 [retains grad: (3)]\n"
        "          MulBackward0 #5\n"
        "            AccumulateGrad #6 <- a (3)\n"
        "            AccumulateGrad #7 <- b (3)\n"
        "        ExpBackward0 #4 (see above)\n"
        "      AccumulateGrad #6 (see above)"
    )
    t_a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    t_e = (t_a * torch.tensor([4.0, 5.0, 6.0], requires_grad=True)).exp()
    t_add = (t_e * t_e + t_a).sum().grad_fn.next_functions[0][0]
    assert [type(f).__name__ for f, _ in t_add.next_functions] == [
        "MulBackward0",
        "AccumulateGrad",
    ]


def test_print_graph_several_outputs_and_leaves():
    a = lg.tensor([1.0, 2.0], requires_grad=True)
    s = a.sin()
    text = viz.print_graph((s, s.sum(), lg.zeros(2)), file=io.StringIO())
    assert text == (
        "output 0 (2)\n"
        "  SinBackward0 #1\n"
        "    AccumulateGrad #2 <- leaf (2)\n"
        "output 1 ()\n"
        "  SumBackward0 #3\n"
        "    SinBackward0 #1 (see above)\n"
        "output 2 (2)"
    )


def test_print_graph_deep_lines_stop_indenting_and_show_their_depth():
    _, y = _chain(40)
    lines = viz.print_graph(y, file=io.StringIO(), max_nodes=35).split("\n")
    assert lines[33] == "  " * 32 + "[33] MulBackward0 #33"
    assert lines[-1] == "... 6 more backward nodes not shown (max_nodes=35)"
