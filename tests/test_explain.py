"""``leafgrad.autograd.explain`` against what torch does: every seed experiment, the advice it
gives, and random programs.

explain reads leafgrad's state; each of its answers is checked against torch running the same
program: ``is_leaf``, ``requires_grad`` and ``grad_fn``, the leaves below a ``grad_fn`` (by name
and shape), whether reading ``.grad`` warns (torch's text), whether ``.grad`` is non-None after the
next backward, and whether a backward through the graph raises because an earlier backward freed
it. torch here has no cuda: on its side ``.cuda()`` is ``.double()`` and ``device='cuda'`` is
``dtype=torch.float64``; both are ``ToCopyBackward0`` copies exactly when the source requires grad,
as in tests/test_seeds.py, while leafgrad runs the real ``.cuda()`` on its virtual cuda device.
"""

from __future__ import annotations

import warnings

import hypothesis.strategies as st
import pytest
import torch
from conftest import Raised, both, call, grad_fn_name, lg, same_error
from hypothesis import HealthCheck, given, settings

from leafgrad.autograd import explain

SECOND_TIME = "Trying to backward through the graph a second time"


class Side:
    """One library, with its stand-in for the cuda device (module docstring)."""

    def __init__(self, m) -> None:
        self.m = m
        self.is_torch = m is torch

    def cuda(self, t):
        return t.double() if self.is_torch else t.cuda()

    @property
    def on_cuda(self) -> dict:
        return {"dtype": torch.float64} if self.is_torch else {"device": "cuda"}


# --- what torch does ---------------------------------------------------------------------------


def graph_leaves(t, names: dict) -> list:
    """The AccumulateGrad variables below ``t.grad_fn`` as explain walks them: depth first in
    ``next_functions`` order, each node once; each as (name or None, shape), and the tensors."""
    fn = t.grad_fn
    if fn is None:
        return [], []
    by_id = {id(v): k for k, v in names.items()}
    found, tensors = [], []
    seen = {id(fn)}
    stack = [fn]
    while stack:
        node = stack.pop()
        if type(node).__name__ == "AccumulateGrad":
            found.append((by_id.get(id(node.variable)), tuple(node.variable.shape)))
            tensors.append(node.variable)
            continue
        children = [n for n, _ in node.next_functions if n is not None]
        for child in reversed(children):
            if id(child) not in seen:
                seen.add(id(child))
                stack.append(child)
    return found, tensors


def grad_warning(t) -> str | None:
    """The warning reading ``t.grad`` gives, or None."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        t.grad
    texts = [str(w.message) for w in caught if issubclass(w.category, UserWarning)]
    assert len(texts) <= 1, texts
    return texts[0] if texts else None


def grad_is_filled(t) -> bool:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return t.grad is not None


def graph_freed(m, t, names: dict) -> bool | None:
    """Whether a backward through ``t``'s graph raises because a backward freed it; None when it
    raises another error first. ``autograd.grad`` with ``retain_graph=True`` frees nothing more
    and touches no ``.grad``."""
    _, leaves = graph_leaves(t, names)
    ones = m.ones_like(t)
    try:
        if leaves:
            m.autograd.grad(t, leaves, ones, retain_graph=True, allow_unused=True)
        else:  # only unrecorded views below: nothing to differentiate against, nothing to fill
            t.backward(ones, retain_graph=True)
    except RuntimeError as e:
        return True if str(e).startswith(SECOND_TIME) else None
    return False


def facts(t) -> tuple:
    """(is_leaf, requires_grad, grad_fn name), or what reading them raised."""
    try:
        return (t.is_leaf, t.requires_grad, grad_fn_name(t))
    except RuntimeError as e:
        return (str(e),)


def inherits_requires_grad(t) -> bool:
    """A view that was not recorded and requires grad only through its base (both libraries)."""
    try:
        return t._base is not None and t._base.requires_grad and t.grad_fn is None
    except RuntimeError:
        return False


# --- the check every case goes through ---------------------------------------------------------


def run_both(build):
    """``build(Side(m))`` on torch and on leafgrad, each from the seed of the transcripts; it
    returns ``(named tensors, loss or None)``."""
    out = {}
    for m in (torch, lg):
        m.manual_seed(20200910)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out[m] = build(Side(m))
    return out[torch], out[lg]


def default_loss(tensors: dict):
    """The sum of every distinct named tensor that requires grad (None when there is none)."""
    loss, seen = None, set()
    for t in tensors.values():
        if t.requires_grad and id(t) not in seen:
            seen.add(id(t))
            loss = t.sum() if loss is None else loss + t.sum()
    return loss


def check_against_torch(build) -> dict:
    """explain's answers for every named tensor of ``build`` agree with what torch does before,
    during and after the next backward; returns the explanations (made before that backward)."""
    (tt, t_loss), (gt, g_loss) = run_both(build)
    assert list(tt) == list(gt)
    found = {}
    for name, t in tt.items():
        g = gt[name]
        assert facts(g) == facts(t), name
        e = explain(g, names=gt)
        assert (e.is_leaf, e.requires_grad, e.created_by) == facts(t), name
        assert e.name == name or gt[e.name] is g
        leaves, _ = graph_leaves(t, tt)
        assert [(x.name, x.shape) for x in e.from_leaves] == leaves, name
        assert e.grad_warning == grad_warning(t), name
        assert grad_warning(g) == e.grad_warning, name
        if not e.is_leaf:
            assert e.graph_freed == graph_freed(torch, t, tt), name
            assert graph_freed(lg, g, gt) == e.graph_freed, name
        else:
            assert e.graph_freed is None
        found[name] = e

    if t_loss is None:
        t_loss, g_loss = default_loss(tt), default_loss(gt)
    if t_loss is not None:
        t_raised, _ = call(lambda m: t_loss.backward(), torch)
        g_raised, _ = call(lambda m: g_loss.backward(), lg)
        assert not isinstance(t_raised, Raised), t_raised
        assert not isinstance(g_raised, Raised), g_raised
    for name, t in tt.items():
        e = found[name]
        assert e.grad_will_be_filled == grad_is_filled(t), name
        if e.grad_kind != "view_dropped":  # see test_leafgrad_fills_grad_of_unrecorded_view
            assert grad_is_filled(gt[name]) == grad_is_filled(t), name
        if not t.is_leaf:
            after = explain(gt[name], names=gt)
            assert after.graph_freed == graph_freed(torch, t, tt), name
    return found


def kinds(found: dict) -> dict:
    return {k: (e.leaf_kind, e.grad_kind) for k, e in found.items()}


# --- the seeds (../shared/seeds) ---------------------------------------------------------------

USER = ("user", "accumulate")
UNTRACKED = ("untracked", "no_requires_grad")
OP = ("op", "non_leaf")
COPY = ("copy", "non_leaf")


def seed_is_leaf_doc(s):
    """000: the ``is_leaf`` documentation's examples, as run in the transcript."""
    m = s.m
    named = {
        "a": m.rand(10, requires_grad=True),
        "a_no_grad": m.rand(10, requires_grad=False),
        "b_no_grad": s.cuda(m.rand(10, requires_grad=False)),
        "b": s.cuda(m.rand(10, requires_grad=True)),
        "c": m.rand(10, requires_grad=True) + 2,
        "c_no_grad": m.rand(10, requires_grad=False) + 2,
        "d": s.cuda(m.rand(10)),
        "e": s.cuda(m.rand(10)).requires_grad_(),
        "f": m.rand(10, requires_grad=True, **s.on_cuda),
    }
    return named, None


def seed_retain_grad(s):
    """000: the retain_grad experiment: only ``data_in`` (a leaf) and ``data_2`` (retained) get
    ``.grad``."""
    m = s.m
    data_in = m.randn(3, 5, requires_grad=True)
    data_mean = data_in.mean()
    data_1 = data_mean * 20200910.0
    data_2 = data_1 * 15.0
    data_2.retain_grad()
    data_3 = 2 * (data_2 + 55.0)
    loss = data_3 / 2.0 + 89.2
    named = dict(
        data_in=data_in, data_mean=data_mean, data_1=data_1, data_2=data_2, data_3=data_3, loss=loss
    )
    return named, loss


def seed_question(s):
    """001: the question's b, e, f, and the answer's detach(); the answer's ``e.cuda()`` is a
    leaf after all (its source does not require grad)."""
    m = s.m
    b_source = m.rand(10, requires_grad=True)
    e = s.cuda(m.rand(10))
    kept = m.rand(10, requires_grad=True)
    named = {
        "b_source": b_source,
        "b": s.cuda(b_source),
        "e_cuda": e,
        "b_detached_alone": m.rand(10, requires_grad=True).detach(),
        "kept": kept,
        "kept_detached": kept.detach(),
        "f": m.rand(10, requires_grad=True, **s.on_cuda),
    }
    return named, None


def seed_question_requires_grad_(s):
    """001: ``e = e.requires_grad_()`` changes the tensor in place, it makes no new one."""
    m = s.m
    e = s.cuda(m.rand(10))
    same = e.requires_grad_()
    assert same is e
    return {"e": same}, None


def seed_blog(s):
    """003: requires_grad, grad_fn and leaves; two tensors that do not require grad make a
    leaf."""
    m = s.m
    a = m.tensor([1.0, 2, 3, 4], requires_grad=True)
    b = m.tensor([1.0, 2, 3, 4], requires_grad=False)
    c = m.sum(a * 2)
    c.backward()
    d = m.sum(b + a)
    d.backward()
    a_plus_b = a + b
    x = m.tensor([1.0, 2, 3, 4], requires_grad=False)
    y = m.tensor([1.0, 2, 3, 4], requires_grad=False)
    named = dict(a=a, b=b, c=c, d=d, a_plus_b=a_plus_b, x=x, y=y, x_plus_y=x + y)
    return named, m.sum(b + a)


SEEDS = {
    "is_leaf_doc": (
        seed_is_leaf_doc,
        {
            "a": USER,
            "a_no_grad": UNTRACKED,
            "b_no_grad": UNTRACKED,
            "b": COPY,
            "c": OP,
            "c_no_grad": UNTRACKED,
            "d": UNTRACKED,
            "e": USER,
            "f": USER,
        },
    ),
    "retain_grad": (
        seed_retain_grad,
        {
            "data_in": USER,
            "data_mean": OP,
            "data_1": OP,
            "data_2": ("op", "retained"),
            "data_3": OP,
            "loss": OP,
        },
    ),
    "question": (
        seed_question,
        {
            "b_source": USER,
            "b": COPY,
            "e_cuda": UNTRACKED,
            "b_detached_alone": UNTRACKED,
            "kept": USER,
            "kept_detached": ("detached", "no_requires_grad"),
            "f": USER,
        },
    ),
    "question_requires_grad_": (seed_question_requires_grad_, {"e": USER}),
    "blog": (
        seed_blog,
        {
            "a": USER,
            "b": UNTRACKED,
            "c": OP,
            "d": OP,
            "a_plus_b": OP,
            "x": UNTRACKED,
            "y": UNTRACKED,
            "x_plus_y": UNTRACKED,
        },
    ),
}


@pytest.mark.parametrize("seed", sorted(SEEDS))
def test_seed_explanations_match_torch(seed):
    build, expected = SEEDS[seed]
    found = check_against_torch(build)
    assert kinds(found) == expected


def test_cuda_copy_explanation_names_the_op_the_source_and_the_fix():
    (tt, _), (gt, _) = run_both(seed_is_leaf_doc)
    e = explain(gt["b"])
    assert e.created_by == "ToCopyBackward0" == grad_fn_name(tt["b"])
    assert [x.shape for x in e.from_leaves] == [(10,)]
    assert e.from_leaves[0].tensor.device == lg.device("cpu")
    assert e.advice_keys == ("create_on_device", "retain_grad", "detach")
    assert "device='cuda:0'" in e.advice[0].text
    # a .cuda() copy of a tensor that does not require grad is a leaf, and says why
    d = explain(gt["d"])
    assert d.is_leaf is tt["d"].is_leaf is True
    assert "cuda:0 does not make it a non-leaf" in d.leaf_reason


def test_freed_graph_is_reported_as_torch_raises():
    (tt, t_loss), (gt, g_loss) = run_both(seed_retain_grad)
    assert explain(g_loss).graph_freed is False
    t_loss.backward()
    g_loss.backward()
    assert explain(g_loss).graph_freed is True
    both_raise = [call(lambda m, x=x: x.backward(), m) for m, x in ((torch, t_loss), (lg, g_loss))]
    assert str(both_raise[0][0].text).startswith(SECOND_TIME)
    same_error(both_raise[0][0], both_raise[1][0])
    # with retain_graph=True nothing is freed, and torch can run it again
    (tt, t_loss), (gt, g_loss) = run_both(seed_retain_grad)
    t_loss.backward(retain_graph=True)
    g_loss.backward(retain_graph=True)
    assert explain(g_loss).graph_freed is False
    t_loss.backward()


def test_names_from_named_parameters():
    def build(s):
        m = s.m
        model = m.nn.Sequential(m.nn.Linear(3, 4), m.nn.Tanh(), m.nn.Linear(4, 2))
        named = dict(model.named_parameters())
        x = m.ones(5, 3)
        named["out"] = model(x).sum()
        named["x"] = x
        return named, None

    found = check_against_torch(build)
    out = found["out"]
    assert {x.name for x in out.from_leaves} == {"0.weight", "0.bias", "2.weight", "2.bias"}
    assert "'0.weight' (shape [4, 3])" in str(out)
    assert found["0.weight"].leaf_kind == "parameter"
    assert found["x"].leaf_kind == "untracked"


# --- the advice does what it says, in torch ----------------------------------------------------


def test_advice_create_on_device_gives_a_leaf_whose_grad_is_filled():
    def fn(m):
        s = Side(m)
        x = m.rand(10)
        made_there = m.rand(10, requires_grad=True, **s.on_cuda)
        copied_then_grad = s.cuda(x).requires_grad_()
        detached = s.cuda(m.rand(10, requires_grad=True).detach()).requires_grad_()
        (made_there.sum() + copied_then_grad.sum() + detached.sum()).backward()
        return [(t.is_leaf, t.grad is not None) for t in (made_there, copied_then_grad, detached)]

    t, g = both(fn)
    assert t == [(True, True)] * 3
    made_there = explain(lg.rand(10, requires_grad=True, device="cuda"))
    assert (made_there.leaf_kind, made_there.grad_will_be_filled) == ("user", True)


def test_advice_retain_grad_then_grad_is_filled():
    def fn(m):
        x = m.rand(3, requires_grad=True)
        y = x * 2
        before = explain(y) if m is lg else None
        y.retain_grad()
        after = explain(y) if m is lg else None
        (y * y).sum().backward()
        return y.grad is not None, before, after

    (t_filled, _, _), (g_filled, before, after) = both(fn, compare=False)
    assert "retain_grad" in before.advice_keys and not before.grad_will_be_filled
    assert after.grad_kind == "retained" and after.grad_will_be_filled is t_filled is True
    assert after.grad_warning is None
    assert g_filled is True


def test_advice_detach_gives_an_untracked_leaf():
    def fn(m):
        y = m.rand(3, requires_grad=True) * 2
        d = y.detach()
        return d.is_leaf, d.requires_grad, y.requires_grad

    t, g = both(fn)
    assert t == (True, False, True)
    y = lg.rand(3, requires_grad=True) * 2
    assert "detach" in explain(y).advice_keys
    assert explain(y.detach()).leaf_kind == "detached"


def test_advice_requires_grad_changes_the_tensor_in_place():
    def fn(m):
        e = m.rand(4)
        same = e.requires_grad_()
        (same * 3).sum().backward()
        return same is e, e.is_leaf, e.grad

    t, g = both(fn)
    assert t[:2] == (True, True)
    e = explain(lg.rand(4))
    assert e.advice_keys == ("requires_grad_",) and "in place" in e.advice[0].text


def test_advice_no_grad_update_keeps_the_parameter_a_leaf():
    def step(m, in_place):
        w = m.ones(3, requires_grad=True)
        (w * w).sum().backward()
        if in_place:
            with m.no_grad():
                w -= 0.1 * w.grad
            return w.is_leaf, w.requires_grad
        w2 = w - 0.1 * w.grad
        return w2.is_leaf, grad_fn_name(w2)

    t, _ = both(lambda m: step(m, True))
    assert t == (True, True)
    t, _ = both(lambda m: step(m, False))
    assert t == (False, "SubBackward0")
    both(lambda m: m.ones(3, requires_grad=True).sub_(1.0))  # outside no_grad it raises
    w = lg.ones(3, requires_grad=True)
    assert "no_grad_update" not in explain(w).advice_keys
    (w * w).sum().backward()
    assert "no_grad_update" in explain(w).advice_keys
    assert "no_grad_update" in explain(w - 0.1 * w.grad, names={"w": w}).advice_keys


# --- inference tensors and unrecorded views ----------------------------------------------------


def test_inference_tensor_explanations():
    def fn(m):
        with m.inference_mode():
            plain = m.ones(3)
            trainable = m.ones(3, requires_grad=True)
        (trainable * 2).sum().backward()
        return plain.is_leaf, plain.requires_grad, trainable.is_leaf, trainable.grad is not None

    t, _ = both(fn)
    assert t == (True, False, True, True)
    with lg.inference_mode():
        plain = lg.ones(3)
        trainable = lg.ones(3, requires_grad=True)
    e = explain(plain)
    assert (e.leaf_kind, e.grad_kind, e.advice_keys) == (
        "inference",
        "no_requires_grad",
        ("clone_outside_inference",),
    )
    assert explain(trainable).grad_kind == "accumulate" and explain(trainable).grad_will_be_filled

    def advice(m):  # what the advice says: requires_grad_() raises, clone() works
        with m.inference_mode():
            p = m.ones(3)
        c = p.clone().requires_grad_()
        (c * 2).sum().backward()
        return c.is_leaf, c.grad is not None, call(lambda _: p.requires_grad_(), m)[0].text

    both(advice)


def test_unrecorded_views_match_torch():
    def build(s):
        m = s.m
        x = m.rand(3, requires_grad=True)
        base = m.rand(3)
        with m.no_grad():
            no_grad_view = x.view(3)
        early_view = base.view(3)
        base.requires_grad_()
        untracked_view = m.rand(3).view(3)
        return dict(
            x=x,
            base=base,
            no_grad_view=no_grad_view,
            early_view=early_view,
            untracked_view=untracked_view,
            grad_view=x.view(3),
        ), None

    found = check_against_torch(build)
    assert kinds(found) == {
        "x": USER,
        "base": USER,
        "no_grad_view": ("view_no_grad", "view_dropped"),
        "early_view": ("view_untracked", "view_dropped"),
        "untracked_view": ("view_untracked", "no_requires_grad"),
        "grad_view": ("view", "non_leaf"),
    }


def test_view_whose_grad_fn_cannot_be_read():
    def fn(m):
        x = m.zeros(3)
        with m.no_grad():
            v = x.view(3)
        x.add_(m.ones(3, requires_grad=True))
        return v, call(lambda _: v.is_leaf, m)[0]

    (_, t_err), (v, g_err) = both(fn, compare=False)
    same_error(t_err, g_err)
    e = explain(v)
    assert (e.is_leaf, e.leaf_kind, e.grad_will_be_filled) == (None, "unreadable", False)
    assert e.leaf_reason.endswith(t_err.text)


def test_unrecorded_view_that_inherits_requires_grad_drops_its_gradient():
    def fn(m):
        x = m.rand(3, requires_grad=True)
        with m.no_grad():
            v = x.view(3)
        (v * 2).sum().backward()
        return v.grad is None, x.grad is None

    t, g = both(fn)
    assert t == (True, True)
    assert g == t


# --- display -----------------------------------------------------------------------------------


def test_text_and_notebook_display():
    x = lg.rand(2, requires_grad=True)
    y = x.cuda()
    e = explain(y, names={"x": x, "y": y})
    text = str(e)
    assert repr(e) == text
    assert text.startswith("'y' of shape [2] on cuda:0, requires_grad=True")
    assert "ToCopyBackward0, from the leaves: 'x' (shape [2])" in text
    assert lg._errors.NON_LEAF_GRAD_WARNING in text
    md = e._repr_markdown_()
    assert md.startswith("**'y' of shape [2]") and "- **what to do instead**:" in md


# --- random programs ---------------------------------------------------------------------------

BINARY = ("mul", "add_", "no_grad_mul")
UNARY = (
    "add2",
    "exp",
    "sum",
    "double",
    "detach",
    "requires_grad_",
    "view",
    "no_grad_view",
    "retain_grad",
    "backward",
)


def apply_step(m, pool, step):
    """One step of a random program: may append to ``pool``; may raise as torch raises."""
    kind, *idx = step
    if kind == "new":
        pool.append(m.tensor([1.5, -0.5, 2.0], requires_grad=idx[0]))
        return
    if kind == "scalar":
        pool.append(m.tensor(0.75, requires_grad=idx[0]))
        return
    x = pool[idx[0] % len(pool)]
    y = pool[idx[-1] % len(pool)]
    if kind not in ("requires_grad_", "retain_grad") and (
        inherits_requires_grad(x) or inherits_requires_grad(y)
    ):
        # such a view has no edge in PyTorch's graph; leafgrad gives it one (see
        # test_leafgrad_fills_grad_of_unrecorded_view), so no op uses it here
        return
    if kind in BINARY:
        if kind == "mul":
            pool.append(x * y)
        elif kind == "add_":
            x.add_(y)
        else:
            with m.no_grad():
                pool.append(x * y)
    elif kind == "add2":
        pool.append(x + 2)
    elif kind == "exp":
        pool.append(x.exp())
    elif kind == "sum":
        pool.append(x.sum())
    elif kind == "double":
        pool.append(x.double())
    elif kind == "detach":
        pool.append(x.detach())
    elif kind == "requires_grad_":
        # on tensors that are not views: leafgrad does not record whether a view's own flag or
        # its base's made it require grad (see the report of issue 8)
        if x._base is None and not x.requires_grad:
            assert x.requires_grad_() is x
    elif kind == "view":
        pool.append(x.view(tuple(x.shape)))
    elif kind == "no_grad_view":
        with m.no_grad():
            pool.append(x.view(tuple(x.shape)))
    elif kind == "retain_grad":
        x.retain_grad()
    else:
        x.sum().backward()


def run_program(m, program):
    """The pool of tensors ``program`` made, and what each step raised (None when nothing)."""
    leaf = m.tensor([0.5, 1.0, -2.0], requires_grad=True)
    pool = [leaf, m.tensor([3.0, 1.0, 0.25]), leaf * leaf]
    raised = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for step in program:
            try:
                apply_step(m, pool, step)
                raised.append(None)
            except RuntimeError as e:
                raised.append(Raised(e))
    distinct, seen = [], set()
    for t in pool:
        if id(t) not in seen:
            seen.add(id(t))
            distinct.append(t)
    return distinct, raised


_index = st.integers(0, 40)
_step = st.one_of(
    st.tuples(st.sampled_from(["new", "scalar"]), st.booleans()),
    st.tuples(st.sampled_from(BINARY), _index, _index),
    st.tuples(st.sampled_from(UNARY), _index),
    # the steps that change what backward does with a tensor's graph and grad, more often
    st.tuples(st.sampled_from(["backward", "retain_grad", "no_grad_view"]), _index),
)


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    derandomize=True,
)
@given(program=st.lists(_step, min_size=1, max_size=12))
def test_random_programs_predictions_match_torch(program):
    t_pool, t_raised = run_program(torch, program)
    g_pool, g_raised = run_program(lg, program)
    for a, b in zip(t_raised, g_raised):
        assert (a is None) == (b is None), (a, b)
        if a is not None:
            same_error(a, b)
    assert len(t_pool) == len(g_pool)
    t_names = {str(i): t for i, t in enumerate(t_pool)}
    g_names = {str(i): g for i, g in enumerate(g_pool)}
    predicted = []
    for t, g in zip(t_pool, g_pool):
        assert facts(g) == facts(t)
        e = explain(g, names=g_names)
        if e.is_leaf is None:  # reading grad_fn raises, in torch too
            assert e.leaf_reason.endswith(facts(t)[0])
            predicted.append(e)
            continue
        assert (e.is_leaf, e.requires_grad, e.created_by) == facts(t)
        leaves, _ = graph_leaves(t, t_names)
        assert [(x.name, x.shape) for x in e.from_leaves] == leaves
        if not e.is_leaf:
            freed = graph_freed(torch, t, t_names)
            if freed is not None:  # else torch raised another error first (a modified input)
                assert e.graph_freed == freed
        predicted.append(e)

    t_loss, _ = call(lambda m: default_loss(t_names), torch)
    g_loss, _ = call(lambda m: default_loss(g_names), lg)
    if isinstance(t_loss, Raised):  # summing a view whose grad_fn cannot be read raises
        assert any(e.is_leaf is None for e in predicted)
        same_error(t_loss, g_loss)
        return
    if t_loss is None:
        assert not any(e.grad_will_be_filled for e in predicted)
        return
    loss_freed = explain(g_loss).graph_freed
    t_out, _ = call(lambda m: t_loss.backward(), torch)
    g_out, _ = call(lambda m: g_loss.backward(), lg)
    assert isinstance(t_out, Raised) == isinstance(g_out, Raised), (t_out, g_out)
    if isinstance(t_out, Raised):
        same_error(t_out, g_out)
        if t_out.text.startswith(SECOND_TIME):
            assert loss_freed is True
        return  # a backward that stopped part way fills some grads and not others
    assert loss_freed is False
    for t, g, e in zip(t_pool, g_pool, predicted):
        assert e.grad_will_be_filled == grad_is_filled(t), (e.leaf_kind, e.grad_kind)
        if e.grad_kind != "view_dropped":  # see test_leafgrad_fills_grad_of_unrecorded_view
            assert grad_is_filled(g) == grad_is_filled(t)


@pytest.mark.parametrize(
    "make",
    [
        lambda m: m.autograd.Variable(m.ones(2), requires_grad=True),
        lambda m: m.autograd.Variable(m.ones(2)),
        lambda m: m.autograd.Variable(m.ones(2, requires_grad=True) * 2),
        lambda m: m.autograd.Variable(m.ones(2, dtype=m.long), requires_grad=True),
        lambda m: m.autograd.Variable([1.0]),
    ],
    ids=["requires_grad", "plain", "non_leaf", "long", "list"],
)
def test_variable_as_in_torch(make):
    def run(m):
        v = make(m)
        return v, v.is_leaf, v.requires_grad, isinstance(v, m.autograd.Variable)

    both(run)
