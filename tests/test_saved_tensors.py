"""Saved tensors against PyTorch: ``grad_fn._saved_<name>`` and ``_raw_saved_<name>`` (Note [Saved
tensors] in leafgrad/autograd/saved.py), and the hooks of ``autograd.graph``
(``saved_tensors_hooks``, ``save_on_cpu``, ``disable_saved_tensors_hooks``, Note [Saved tensor
hooks]): which tensors are packed, in which order, what backward computes with the unpacked ones,
and the errors."""

import numpy as np
import pytest
from conftest import both, lg, torch

_X = np.linspace(-1.5, 2.0, 12).reshape(3, 4).astype(np.float32)
_W = np.linspace(0.5, 1.0, 20).reshape(4, 5).astype(np.float32)
_C = np.linspace(0.1, 1.0, 12).reshape(3, 4).astype(np.float32)


def _inputs(m):
    x = m.tensor(_X, requires_grad=True)
    w = m.tensor(_W, requires_grad=True)
    return x, w, m.tensor(_C)


PROGRAMS = {
    "pow": lambda m, x, w, c: x.pow(2),
    "pow_tensor": lambda m, x, w, c: x.pow(c),
    "mul": lambda m, x, w, c: x * c,
    "mul_number": lambda m, x, w, c: x * 2.5,
    "mul_int": lambda m, x, w, c: x * 2,
    "mul_self": lambda m, x, w, c: x * x,
    "div": lambda m, x, w, c: x / (c + 1),
    "exp": lambda m, x, w, c: x.exp(),
    "tanh": lambda m, x, w, c: x.tanh(),
    "sigmoid": lambda m, x, w, c: x.sigmoid(),
    "sqrt": lambda m, x, w, c: (x * x + 1).sqrt(),
    "log": lambda m, x, w, c: (x * x + 1).log(),
    "sin": lambda m, x, w, c: x.sin(),
    "relu": lambda m, x, w, c: m.nn.functional.relu(x),
    "leaky_relu": lambda m, x, w, c: m.nn.functional.leaky_relu(x, 0.2),
    "gelu": lambda m, x, w, c: m.nn.functional.gelu(x, approximate="tanh"),
    "softmax": lambda m, x, w, c: m.nn.functional.softmax(x, 1),
    "log_softmax": lambda m, x, w, c: m.nn.functional.log_softmax(x, 1),
    "sum": lambda m, x, w, c: x.sum(),
    "sum_dim": lambda m, x, w, c: x.sum(1, keepdim=True),
    "mean": lambda m, x, w, c: x.mean(),
    "mean_dim": lambda m, x, w, c: x.mean(0),
    "max_dim": lambda m, x, w, c: x.max(1)[0],
    "var_dim": lambda m, x, w, c: x.var(1),
    "mm": lambda m, x, w, c: x.mm(w),
    "linear": lambda m, x, w, c: m.nn.functional.linear(x, w.t()),
    "view": lambda m, x, w, c: x.view(4, 3),
    "transpose": lambda m, x, w, c: x.transpose(0, 1),
    "permute": lambda m, x, w, c: x.permute(1, 0),
    "expand": lambda m, x, w, c: x[:1].expand(3, 4),
    "select": lambda m, x, w, c: x[1],
    "where": lambda m, x, w, c: m.where(c > 0.5, x, c),
    "mse_loss": lambda m, x, w, c: m.nn.functional.mse_loss(x, c),
    "cross_entropy": lambda m, x, w, c: m.nn.functional.cross_entropy(x, m.tensor([0, 1, 3])),
    "gather": lambda m, x, w, c: x.gather(1, m.tensor([[0], [1], [2]])),
    "sin_": lambda m, x, w, c: x.clone().sin_(),
    "mul_": lambda m, x, w, c: x.clone().mul_(c),
    "exp_": lambda m, x, w, c: x.clone().exp_(),
    "addmm": lambda m, x, w, c: m.addmm(c[:, :1], x, w),
    "hardtanh": lambda m, x, w, c: m.nn.functional.hardtanh(x),
    "atan2": lambda m, x, w, c: m.atan2(x, c + 1),
    "maximum": lambda m, x, w, c: m.maximum(x, c),
    "add_alpha": lambda m, x, w, c: m.add(x, c, alpha=2),
    "sub": lambda m, x, w, c: x - c,
    "rsub": lambda m, x, w, c: 2 - x,
    "addcdiv": lambda m, x, w, c: m.addcdiv(x, x, c + 1, value=0.5),
    "addr": lambda m, x, w, c: m.addr(c, x[:, 0], w[:, 0], beta=2),
    "clamp_min": lambda m, x, w, c: x.clamp_min(0),
    "clamp_max": lambda m, x, w, c: x.clamp_max(1),
    "clamp_both": lambda m, x, w, c: x.clamp(-1, 1),
    "select_dim1": lambda m, x, w, c: x.select(1, 2),
}


def _saved_names(fn) -> list:
    return sorted(k for k in dir(fn) if k.startswith("_saved_"))


def _describe(v, inputs):
    """A saved value, with which input (if any) it is."""
    for name, t in inputs.items():
        if v is t:
            return ("input", name)
    if hasattr(v, "grad_fn"):
        g = v.grad_fn
        return (v.detach(), v.requires_grad, None if g is None else type(g).__name__)
    return v


@pytest.mark.parametrize("program", sorted(PROGRAMS))
def test_saved_attributes(program):
    """Every ``_saved_<name>`` leafgrad gives is one PyTorch's node has, with PyTorch's value
    (the input itself where PyTorch returns it); for most nodes the lists are equal."""
    names = {}

    def fn(m):
        x, w, c = _inputs(m)
        y = PROGRAMS[program](m, x, w, c)
        names[m] = _saved_names(y.grad_fn)
        return names[m]

    torch_names = both(fn, compare=False)[0]
    lg_names = names[lg]
    assert set(lg_names) <= set(torch_names), lg_names
    assert len(lg_names) >= (len(torch_names) + 1) // 2, (torch_names, lg_names)

    def values(m):
        x, w, c = _inputs(m)
        y = PROGRAMS[program](m, x, w, c)
        inputs = {"x": x, "w": w, "c": c, "y": y}
        return [(n, _describe(getattr(y.grad_fn, n), inputs)) for n in lg_names]

    both(values)


def test_saved_identity_and_release():
    """The autograd-mechanics walk-through: a saved input is the input, a saved output is a new
    tensor with the output's value and node; after backward, saved tensors raise and saved
    numbers stay."""

    def fn(m):
        x = m.tensor(_X[0], requires_grad=True)
        y = x.pow(2)
        e = x.exp()
        r = e.grad_fn._saved_result
        out = [
            y.grad_fn._saved_self is x,
            x.equal(y.grad_fn._saved_self),
            r is e,
            e.equal(r),
            r.grad_fn is e.grad_fn,
            r.requires_grad,
            r.is_leaf,
            r._version,
            y.grad_fn._saved_exponent,
        ]
        y.sum().backward()
        out.append(y.grad_fn._saved_exponent)
        try:
            y.grad_fn._saved_self
        except RuntimeError as err:
            out.append(str(err))
        try:
            y.grad_fn._saved_nothing
        except AttributeError as err:
            out.append(str(err))
        return out

    both(fn)


def test_saved_of_a_retained_graph():
    def fn(m):
        x = m.tensor(_X, requires_grad=True)
        y = x.sin()
        y.sum().backward(retain_graph=True)
        first = y.grad_fn._saved_self is x
        y.sum().backward()
        return first, x.grad

    both(fn)


def _log_hooks(log):
    def pack(t):
        g = None if t.grad_fn is None else type(t.grad_fn).__name__
        log.append(("pack", tuple(t.shape), t.requires_grad, g))
        return ("packed", t)

    def unpack(p):
        log.append(("unpack",))
        return p[1]

    return pack, unpack


HOOKED = {
    "mlp": lambda m, x, w, c: m.nn.functional.mse_loss(
        m.nn.functional.relu(x.mm(w)).log_softmax(1), c[:, :1]
    ),
    "chain": lambda m, x, w, c: ((x * c).exp().sin() / (x.pow(2) + 1)).sum(),
    "shared_input": lambda m, x, w, c: (x * x).tanh().sum(),
    "inplace": lambda m, x, w, c: x.clone().sin_().mul_(c).sigmoid().sum(),
    "views": lambda m, x, w, c: (x.t() @ c).sum(1).pow(3).mean(),
    "linear": lambda m, x, w, c: m.nn.functional.linear(x, w.t(), w[0]).softmax(1)[:, 0].sum(),
}


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("program", sorted(HOOKED))
def test_saved_tensors_hooks(program, create_graph):
    """Which tensors are packed, in PyTorch's order, how often unpack runs, and the gradients
    (also of gradients) computed with the unpacked tensors; run three times, as a training loop
    repeats a graph."""

    def fn(m):
        log = []
        grads = []
        for _ in range(3):
            x, w, c = _inputs(m)
            with m.autograd.graph.saved_tensors_hooks(*_log_hooks(log)):
                loss = HOOKED[program](m, x, w, c)
            log.append("backward")
            gx, gw = m.autograd.grad(loss, (x, w), create_graph=create_graph, allow_unused=True)
            grads += [gx, gw]
            if create_graph:
                log.append("double backward")
                grads.append(m.autograd.grad(gx.pow(2).sum(), x, allow_unused=True)[0])
        return log, grads

    both(fn)


def test_unpack_changes_what_backward_reads():
    def fn(m):
        a = m.tensor(_X[0], requires_grad=True)
        b = a.sin()
        b.grad_fn._raw_saved_self.register_hooks(lambda t: t * 0 + 1, lambda p: p)
        seen = b.grad_fn._saved_self
        b.sum().backward()
        c = m.tensor(_X[1], requires_grad=True)
        with m.autograd.graph.saved_tensors_hooks(lambda t: t, lambda p: p * 2):
            d = (c * c).exp()
        d.sum().backward()
        return seen, a.grad, c.grad

    both(fn)


def test_hooked_tensors_are_not_version_checked():
    def fn(m):
        x = m.tensor(_X[0], requires_grad=True)
        a = x * 1
        with m.autograd.graph.saved_tensors_hooks(lambda t: t, lambda p: p):
            b = a.sin()
        a.add_(1)
        b.sum().backward()  # reads the changed ``a``, as PyTorch's does
        y = m.tensor(_X[1], requires_grad=True)
        z = y * 1
        with m.autograd.graph.saved_tensors_hooks(lambda t: t.clone(), lambda p: p):
            u = z.sin()
        z.add_(1)
        u.sum().backward()
        return x.grad, y.grad

    both(fn)


def test_save_on_cpu_and_custom_functions():
    def fn(m):
        log = []

        class Twice(m.autograd.Function):
            @staticmethod
            def forward(ctx, i):
                ctx.save_for_backward(i)
                out = i * 2
                ctx.save_for_backward(i, out)
                return out

            @staticmethod
            def backward(ctx, g):
                i, out = ctx.saved_tensors
                return g * i * out.detach()

        x = m.tensor(_X, requires_grad=True)
        with m.autograd.graph.save_on_cpu():
            y = (x.exp() * x).sum()
        y.backward()
        with m.autograd.graph.saved_tensors_hooks(*_log_hooks(log)):
            z = Twice.apply(x * 1)
        z.sum().backward()
        return x.grad, log

    both(fn)


ERRORS = {
    "unpack_not_tensor": lambda m, a: _with_hooks(m, a, lambda t: 5, lambda p: p),
    "pack_raises": lambda m, a: _with_hooks(m, a, _boom, lambda p: p),
    "register_twice": lambda m, a: _register(m, a.sin(), 2),
    "register_none": lambda m, a: (a * m.tensor(_X[1])).grad_fn._raw_saved_self.register_hooks(
        lambda t: t, lambda p: p
    ),
    "register_after_backward": lambda m, a: _register_late(m, a),
    "register_not_callable": lambda m, a: a.sin().grad_fn._raw_saved_self.register_hooks(1, 2),
    "register_returns_number": lambda m, a: _raw_number(m, a),
    "disabled": lambda m, a: _disabled(m),
}


def _boom(t):
    raise ValueError("boom")


def _with_hooks(m, a, pack, unpack):
    with m.autograd.graph.saved_tensors_hooks(pack, unpack):
        b = a.sin()
    b.sum().backward()


def _register(m, b, times):
    for _ in range(times):
        b.grad_fn._raw_saved_self.register_hooks(lambda t: t, lambda p: p)


def _register_late(m, a):
    b = a.sin()
    raw = b.grad_fn._raw_saved_self
    b.sum().backward()
    return raw.data, raw.register_hooks(lambda t: t, lambda p: p)


def _raw_number(m, a):
    b = a.sin()
    b.grad_fn._raw_saved_self.register_hooks(lambda t: 1, lambda p: p)
    return b.grad_fn._saved_self


def _disabled(m):
    with m.autograd.graph.disable_saved_tensors_hooks("no hooks in here"):
        with m.autograd.graph.saved_tensors_hooks(lambda t: t, lambda p: p):
            pass


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_saved_tensor_errors(case):
    def fn(m):
        a = m.tensor(_X[0], requires_grad=True)
        ERRORS[case](m, a)

    if case == "register_not_callable":  # pybind's text names the objects' addresses
        texts = []
        for m in (torch, lg):
            with pytest.raises(TypeError) as err:
                fn(m)
            texts.append(str(err.value).split("Invoked with")[0])
        assert texts[0] == texts[1]
        return
    both(fn)


def test_reading_a_saved_tensor_modified_in_place_raises_the_version_error():
    """``SavedVariable::unpack`` checks the version: ``_saved_self`` / ``_saved_result`` of a
    tensor written in place since raise what backward would (fuzz: the saved-attribute step)."""

    def fn(m):
        out = []
        x = m.tensor(1.5, requires_grad=True)
        a = x.abs()
        b = a.abs()
        a.add_(2.0)
        y = x.exp()
        node = y.grad_fn
        y.add_(1)
        w = m.ones(3, requires_grad=True) * 1
        s = w[1:].sin()
        w.mul_(2)
        for read in (
            lambda: b.grad_fn._saved_self,
            lambda: node._saved_result,
            lambda: s.grad_fn._saved_self,
        ):
            try:
                out.append(read())
            except RuntimeError as e:
                out.append(str(e))
        return out

    both(fn)
