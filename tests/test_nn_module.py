"""nn core against torch: Parameter, Module (registration, traversal, state_dict, conversions,
hooks, repr), containers, ``nn.init`` after ``manual_seed``, and ``nn.utils``."""

from __future__ import annotations

import pytest
import torch
from conftest import both, lg

import leafgrad


def _classes(m):
    """A small two-level model written against ``m.nn`` (the same code for both libraries)."""
    nn = m.nn

    class Sub(nn.Module):
        def __init__(self, n):
            super().__init__()
            self.n = n
            self.b = nn.Parameter(m.arange(float(n)))

        def forward(self, x):
            return x * self.b

        def extra_repr(self):
            return f"n={self.n}"

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(m.linspace(-1.0, 1.0, 6).reshape(3, 2))
            self.register_buffer("running", m.ones(2))
            self.register_buffer("scratch", m.zeros(2), persistent=False)
            self.sub = Sub(2)
            self.seq = nn.Sequential(Sub(2), Sub(2))

        def forward(self, x):
            return self.seq(self.sub(x @ self.w)) + self.running

    return Net, Sub


def _net(m):
    return _classes(m)[0]()


# --- Parameter ------------------------------------------------------------------------------------


def test_parameter_is_a_leaf_requiring_grad_with_its_repr():
    def f(m):
        x = m.ones(3, requires_grad=True)
        p = m.nn.Parameter(x * 3)
        q = m.nn.Parameter(m.ones(2), requires_grad=False)
        return (
            p,
            repr(p),
            repr(q),
            isinstance(p, m.Tensor),
            type(p * 2).__name__,
            repr(m.nn.Parameter()),
        )

    both(f)


def test_parameter_shares_memory_with_its_source():
    def f(m):
        x = m.zeros(3)
        p = m.nn.Parameter(x)
        with m.no_grad():
            p.add_(1)
        return x

    both(f)


def test_parameter_of_integers_cannot_require_grad():
    both(lambda m: m.nn.Parameter(m.ones(2, dtype=m.int64)))


def test_buffer_marker_registers_a_buffer():
    def f(m):
        mod = m.nn.Module()
        mod.a = m.nn.Buffer(m.ones(2))
        mod.b = m.nn.Buffer(m.zeros(1), persistent=False)
        return [k for k, _ in mod.named_buffers()], list(mod.state_dict())

    both(f)


# --- Module: registration, traversal, repr --------------------------------------------------------


def test_traversal_names_and_order():
    def f(m):
        net = _net(m)
        return (
            [k for k, _ in net.named_parameters()],
            [k for k, _ in net.named_buffers()],
            [k for k, _ in net.named_modules()],
            [k for k, _ in net.named_children()],
            [type(c).__name__ for c in net.children()],
            len(list(net.modules())),
            [k for k, _ in net.named_parameters(prefix="model", recurse=False)],
            list(net.parameters(recurse=False)),
        )

    both(f)


def test_shared_parameters_and_modules_listed_once():
    def f(m):
        Net, Sub = _classes(m)
        s = Sub(2)
        seq = m.nn.Sequential(s, s)
        return (
            [k for k, _ in seq.named_parameters()],
            [k for k, _ in seq.named_parameters(remove_duplicate=False)],
            [k for k, _ in seq.named_modules()],
            [k for k, _ in seq.named_modules(remove_duplicate=False)],
        )

    both(f)


def test_nested_repr_layout():
    def f(m):
        nn = m.nn
        net = _net(m)

        class Multi(nn.Module):
            def extra_repr(self):
                return "a=1\nb=2"

        net.multi = Multi()
        net.empty = nn.Module()
        net.none = None
        return repr(net)

    both(f)


def test_forward_and_parameter_gradients():
    def f(m):
        net = _net(m)
        x = m.linspace(0.5, 2.0, 8).reshape(4, 2) @ m.ones(2, 3)
        y = net(x)
        (y * y).sum().backward()
        return y, [p.grad for p in net.parameters()]

    both(f)


def test_forward_is_required():
    both(lambda m: m.nn.Module()(m.ones(1)))


def test_getattr_error_and_delattr():
    def f(m):
        net = _net(m)
        del net.w
        del net.running
        del net.sub
        names = [k for k, _ in net.named_parameters()], list(net.state_dict())
        try:
            net.w
        except AttributeError as e:
            return names, str(e)

    both(f)


@pytest.mark.parametrize(
    "action",
    [
        lambda m, mod: mod.register_parameter("a.b", None),
        lambda m, mod: mod.register_parameter("", None),
        lambda m, mod: mod.register_parameter(3, None),
        lambda m, mod: mod.register_parameter("training", None),
        lambda m, mod: mod.register_parameter("p", m.ones(2)),
        lambda m, mod: mod.register_parameter("p", m.nn.Parameter(m.ones(2)) * 2),
        lambda m, mod: mod.register_buffer("a.b", None),
        lambda m, mod: mod.register_buffer("", None),
        lambda m, mod: mod.register_buffer("x", 3),
        lambda m, mod: mod.add_module("a.b", None),
        lambda m, mod: mod.add_module("", None),
        lambda m, mod: mod.add_module("x", 3),
        lambda m, mod: mod.add_module(1, m.nn.Module()),
        lambda m, mod: setattr(mod, "w", m.ones(3)),
        lambda m, mod: setattr(mod, "sub", m.ones(3)),
        lambda m, mod: setattr(mod, "running", 3),
        lambda m, mod: mod.train("yes"),
    ],
)
def test_registration_errors(action):
    both(lambda m: action(m, _net(m)))


def test_cannot_assign_before_init():
    def f(m):
        class Early(m.nn.Module):
            def __init__(self):
                self.p = m.nn.Parameter(m.ones(1))

        return Early()

    both(f)


def test_init_rejects_arguments():
    both(lambda m: m.nn.Module(3))
    both(lambda m: m.nn.Module(foo=3))


def test_reassignment_moves_between_kinds():
    def f(m):
        net = _net(m)
        net.running = m.nn.Parameter(m.zeros(2))  # buffer -> parameter
        net.w = None  # parameter slot kept as None
        net.sub = None
        net.extra = m.nn.Module()
        return (
            [k for k, _ in net.named_parameters()],
            [k for k, _ in net.named_buffers()],
            list(net.state_dict()),
            net.w is None,
        )

    both(f)


def test_train_eval_recurse():
    def f(m):
        net = _net(m)
        net.eval()
        modes = [mod.training for mod in net.modules()]
        net.seq.train()
        return modes, [mod.training for mod in net.modules()], net.train() is net

    both(f)


def test_dir_lists_members():
    def f(m):
        names = dir(_net(m))
        return [n for n in ("w", "running", "scratch", "sub", "seq", "forward") if n in names]

    both(f)


def test_get_submodule_parameter_buffer():
    def f(m):
        net = _net(m)
        return (
            type(net.get_submodule("seq.0")).__name__,
            net.get_submodule("") is net,
            net.get_parameter("seq.1.b"),
            net.get_buffer("running"),
        )

    both(f)


@pytest.mark.parametrize(
    "target",
    ["seq.5", "w.x", "seq.0.b"],
)
def test_get_submodule_errors(target):
    both(lambda m: _net(m).get_submodule(target))


@pytest.mark.parametrize("target", ["seq.0.c", "running", "sub.n"])
def test_get_parameter_errors(target):
    both(lambda m: _net(m).get_parameter(target))


def test_apply_visits_children_first():
    def f(m):
        seen = []
        _net(m).apply(lambda mod: seen.append(type(mod).__name__))
        return seen

    both(f)


# --- state_dict -----------------------------------------------------------------------------------


def test_state_dict_keys_values_and_detach():
    def f(m):
        net = _net(m)
        sd = net.state_dict()
        kv = net.state_dict(keep_vars=True)
        pre = net.state_dict(prefix="model.")
        return (
            type(sd).__name__,
            list(sd),
            list(sd.values()),
            kv["w"] is net.w,
            sd["w"].requires_grad,
            list(pre),
            dict(sd._metadata),
        )

    both(f)


def test_load_state_dict_copies_in_place():
    def f(m):
        a, b = _net(m), _net(m)
        with m.no_grad():
            for p in a.parameters():
                p.mul_(3)
            a.running.fill_(7)
        w = b.w
        result = b.load_state_dict(a.state_dict())
        return (
            repr(result),
            b.w is w,
            b.w.is_leaf,
            b.w.requires_grad,
            list(b.state_dict().values()),
        )

    both(f)


def test_load_state_dict_strict_errors():
    def f(m):
        net = _net(m)
        sd = net.state_dict()
        del sd["seq.1.b"]
        sd["extra"] = m.ones(1)
        sd["sub.bogus"] = m.ones(1)
        sd["w"] = m.ones(2, 3)
        return net.load_state_dict(sd)

    both(f)


def test_load_state_dict_non_strict_result():
    def f(m):
        net = _net(m)
        sd = net.state_dict()
        del sd["running"]
        sd["extra"] = m.ones(1)
        r = net.load_state_dict(sd, strict=False)
        return repr(r), r.missing_keys, r.unexpected_keys

    both(f)


def test_load_state_dict_rejects_non_mapping_and_non_tensors():
    both(lambda m: _net(m).load_state_dict([1, 2]))

    def f(m):
        net = _net(m)
        sd = net.state_dict()
        sd["w"] = 3
        return net.load_state_dict(sd)

    both(f)


def test_load_state_dict_assign():
    def f(m):
        net = _net(m)
        sd = net.state_dict()
        sd["w"] = m.full((3, 2), 2.0)
        old = net.w
        net.load_state_dict(sd, assign=True)
        return net.w is old, type(net.w).__name__, net.w.requires_grad, net.w

    both(f)


def test_extra_state_round_trip():
    def f(m):
        class WithState(m.nn.Module):
            def __init__(self):
                super().__init__()
                self.state = 5

            def get_extra_state(self):
                return {"s": self.state}

            def set_extra_state(self, state):
                self.state = state["s"]

        a, b = WithState(), WithState()
        a.state = 9
        sd = a.state_dict()
        b.load_state_dict(sd)
        return list(sd), b.state

    both(f)


# --- conversions, grads ---------------------------------------------------------------------------


def test_double_keeps_parameter_identity_and_leafness():
    def f(m):
        net = _net(m)
        net(m.ones(4, 3)).sum().backward()
        w = net.w
        out = net.double()
        return (
            out is net,
            net.w is w,
            net.w.is_leaf,
            net.w.dtype,
            net.w.grad.dtype,
            net.running.dtype,
            net.w,
        )

    both(f)


def test_to_half_float_and_integer_dtype_error():
    def f(m):
        net = _net(m)
        net.register_buffer("count", m.zeros(2, dtype=m.int64))
        net.to(m.float64)
        d1 = [t.dtype for t in net.state_dict().values()]
        net.half()
        d2 = [t.dtype for t in net.state_dict().values()]
        net.to(dtype=m.float32)
        d3 = [t.dtype for t in net.state_dict().values()]
        net.type(m.float64)
        d4 = [t.dtype for t in net.state_dict().values()]
        return d1, d2, d3, d4

    both(f)
    both(lambda m: _net(m).to(m.int32))


def test_to_device_keeps_identity():
    # torch here has no CUDA; leafgrad's virtual cuda device shows what PyTorch documents.
    net = _net(lg)
    w = net.w
    net.to("cuda")
    assert (net.w is w, str(net.w.device), str(net.running.device)) == (True, "cuda:0", "cuda:0")
    assert net.w.is_leaf and net.w.requires_grad
    net.cpu()
    assert net.w is w and str(net.w.device) == "cpu"


def test_zero_grad_and_requires_grad_():
    def f(m):
        net = _net(m)
        net(m.ones(4, 3)).sum().backward()
        net.zero_grad(set_to_none=False)
        zeroed = [p.grad for p in net.parameters()]
        net.zero_grad()
        cleared = [p.grad is None for p in net.parameters()]
        net.requires_grad_(False)
        return zeroed, cleared, [p.requires_grad for p in net.parameters()]

    both(f)


# --- hooks ----------------------------------------------------------------------------------------


def test_forward_hooks_order_results_and_removal():
    def f(m):
        Net, Sub = _classes(m)
        mod = Sub(3)
        log = []

        def pre(mod, args):
            log.append("pre")
            return (args[0] + 1,)

        def pre_first(mod, args):
            log.append("pre_first")

        def post(mod, args, out):
            log.append("post")
            return out * 10

        def pre_kw(mod, args, kwargs):
            log.append(("pre_kw", sorted(kwargs)))

        def post_kw(mod, args, kwargs, out):
            log.append(("post_kw", sorted(kwargs)))

        h1 = mod.register_forward_pre_hook(pre)
        mod.register_forward_pre_hook(pre_first, prepend=True)
        mod.register_forward_pre_hook(pre_kw, with_kwargs=True)
        h2 = mod.register_forward_hook(post)
        mod.register_forward_hook(post_kw, with_kwargs=True)
        y1 = mod(m.ones(3))
        h1.remove()
        h2.remove()
        y2 = mod(m.ones(3))
        return y1, y2, log

    both(f)


def test_forward_pre_hook_with_kwargs_bad_return():
    def f(m):
        mod = _classes(m)[1](2)
        mod.register_forward_pre_hook(lambda mod, a, k: 5, with_kwargs=True)
        return mod(m.ones(2))

    both(f)


def test_state_dict_hooks():
    def f(m):
        net = _classes(m)[1](2)
        log = []
        net.register_state_dict_pre_hook(lambda mod, prefix, kv: log.append(("pre", prefix)))
        net.register_state_dict_post_hook(lambda mod, sd, prefix, meta: log.append(list(sd)))
        net.register_load_state_dict_post_hook(lambda mod, keys: log.append(repr(keys)))
        net.load_state_dict(net.state_dict())
        return log

    both(f)


class _Scale:
    """A two-input module for backward-hook tests (built in either library)."""

    @staticmethod
    def make(m):
        class Scale(m.nn.Module):
            def __init__(self):
                super().__init__()
                self.w = m.nn.Parameter(m.tensor([1.5, -2.0, 0.5]))

            def forward(self, a, b):
                return a * self.w + b.sin(), (a * b).sum()

        return Scale()


@pytest.mark.parametrize("inputs_grad", [True, False])
def test_full_backward_hooks(inputs_grad):
    def f(m):
        mod = _Scale.make(m)
        log = []

        def pre(module, grad_output):
            log.append(("pre", [None if g is None else g.clone() for g in grad_output]))

        def full(module, grad_input, grad_output):
            log.append(
                (
                    "full",
                    [None if g is None else g.clone() for g in grad_input],
                    [None if g is None else g.clone() for g in grad_output],
                )
            )

        mod.register_full_backward_pre_hook(pre)
        mod.register_full_backward_hook(full)
        a = m.tensor([1.0, 2.0, 3.0], requires_grad=inputs_grad)
        b = m.tensor([0.5, 0.25, -1.0], requires_grad=inputs_grad)
        y, s = mod(a, b)
        (y * 2).sum().backward(retain_graph=True)
        names = [type(y.grad_fn).__name__, type(s.grad_fn).__name__]
        return log, names, a.grad, b.grad, mod.w.grad

    both(f)


def test_full_backward_hook_replaces_grad_input():
    def f(m):
        lin = m.nn.Linear(3, 2)
        lin.register_full_backward_hook(lambda mod, gi, go: (gi[0] * 0 + 1,))
        x = m.ones(2, 3, requires_grad=True)
        lin(x).sum().backward()
        return x.grad

    both(f)


# --- containers -----------------------------------------------------------------------------------


def test_sequential_indexing_and_editing():
    def f(m):
        nn = m.nn
        Sub = _classes(m)[1]
        seq = nn.Sequential(Sub(1), Sub(2), Sub(3))
        out = [repr(seq), repr(seq[1]), repr(seq[-1]), repr(seq[1:]), len(seq)]
        seq.append(Sub(4))
        seq.insert(0, Sub(5))
        seq.extend([Sub(6)])
        out.append(repr(seq))
        del seq[1]
        popped = seq.pop(0)
        out += [repr(popped), repr(seq), [type(s).__name__ for s in seq]]
        seq[0] = Sub(9)
        out.append(repr(seq + nn.Sequential(Sub(7))))
        out.append(repr(seq * 2))
        out.append(list(seq.state_dict()))
        return out

    both(f)


def test_sequential_from_ordered_dict_and_forward():
    def f(m):
        from collections import OrderedDict

        Sub = _classes(m)[1]
        seq = m.nn.Sequential(OrderedDict([("first", Sub(2)), ("second", Sub(2))]))
        x = m.ones(2, requires_grad=True)
        y = seq(x).sum()
        y.backward()
        return repr(seq), y, x.grad, [k for k, _ in seq.named_parameters()]

    both(f)


@pytest.mark.parametrize(
    "action",
    [
        lambda m, s: s[5],
        lambda m, s: s[-4],
        lambda m, s: s + 1,
        lambda m, s: s * 0,
        lambda m, s: s.insert(7, m.nn.Module()),
        lambda m, s: s.insert(0, 3),
    ],
)
def test_sequential_errors(action):
    def f(m):
        Sub = _classes(m)[1]
        return action(m, m.nn.Sequential(Sub(1), Sub(2), Sub(3)))

    both(f)


def test_module_list():
    def f(m):
        nn = m.nn
        Sub = _classes(m)[1]
        ml = nn.ModuleList([Sub(2), Sub(2), Sub(2), Sub(3)])
        out = [repr(ml), len(ml), repr(ml[1:3]), repr(nn.ModuleList())]
        ml.append(Sub(4))
        ml.insert(1, Sub(5))
        ml += [Sub(6)]
        del ml[0]
        out += [repr(ml), [k for k, _ in ml.named_parameters()], repr(ml.pop(-1))]
        out.append(repr(ml + nn.ModuleList([Sub(1)])))
        return out

    both(f)
    both(lambda m: m.nn.ModuleList().extend(3))
    both(lambda m: m.nn.ModuleList()[0])


def test_module_dict():
    def f(m):
        nn = m.nn
        Sub = _classes(m)[1]
        md = nn.ModuleDict({"b": Sub(1), "a": Sub(2)})
        md["c"] = Sub(3)
        md.update([("d", Sub(4))])
        out = [repr(md), list(md), list(md.keys()), "a" in md, len(md)]
        md.pop("b")
        out += [repr(md), [k for k, _ in md.named_parameters()]]
        md.clear()
        out.append(repr(md))
        return out

    both(f)
    both(lambda m: m.nn.ModuleDict().update(3))
    both(lambda m: m.nn.ModuleDict().update([(1, 2, 3)]))


def test_parameter_list_and_dict():
    def f(m):
        nn = m.nn
        pl = nn.ParameterList([m.ones(2), nn.Parameter(m.zeros(3, 4)), "x"])
        pl.append(m.ones(1, dtype=m.float64))
        pd = nn.ParameterDict({"b": m.ones(2), "a": m.zeros(1)})
        pd["c"] = nn.Parameter(m.ones(3), requires_grad=False)
        pd.update([("d", 5)])
        mod = nn.Module()
        mod.pl, mod.pd = pl, pd
        return (
            repr(pl),
            repr(pd),
            len(pl),
            list(pd),
            [type(p).__name__ for p in pl],
            [k for k, _ in mod.named_parameters()],
            repr(pl[1:]),
            pd.get("zz", 4),
            pd.pop("d"),
            list(pd.keys()),
        )

    both(f)
    both(lambda m: m.nn.ParameterList()(1))
    both(lambda m: m.nn.ParameterDict()[1])
    both(lambda m: m.nn.ParameterList().extend(m.ones(2)))


# --- nn.init --------------------------------------------------------------------------------------


INITS = {
    "uniform": (lambda m, t: m.nn.init.uniform_(t, -2, 3), (5, 7)),
    "normal": (lambda m, t: m.nn.init.normal_(t, 1, 2), (5, 7)),
    "constant": (lambda m, t: m.nn.init.constant_(t, 0.3), (2, 3)),
    "ones": (lambda m, t: m.nn.init.ones_(t), (2, 3)),
    "zeros": (lambda m, t: m.nn.init.zeros_(t), (2, 3)),
    "eye": (lambda m, t: m.nn.init.eye_(t), (3, 4)),
    "dirac": (lambda m, t: m.nn.init.dirac_(t, 2), (4, 3, 3, 3)),
    "dirac1d": (lambda m, t: m.nn.init.dirac_(t), (2, 3, 5)),
    "xavier_uniform": (lambda m, t: m.nn.init.xavier_uniform_(t, gain=2), (5, 7)),
    "xavier_normal": (lambda m, t: m.nn.init.xavier_normal_(t), (4, 3, 2)),
    "kaiming_uniform": (lambda m, t: m.nn.init.kaiming_uniform_(t, a=5**0.5), (4, 3, 2, 2)),
    "kaiming_normal": (
        lambda m, t: m.nn.init.kaiming_normal_(t, mode="fan_out", nonlinearity="relu"),
        (6, 5),
    ),
    "kaiming_tanh": (lambda m, t: m.nn.init.kaiming_uniform_(t, nonlinearity="tanh"), (6, 5)),
    "trunc_normal": (lambda m, t: m.nn.init.trunc_normal_(t, std=0.02), (50, 40)),
    "trunc_normal_tail": (lambda m, t: m.nn.init.trunc_normal_(t, a=2.0, b=3.0), (20, 10)),
    "trunc_normal_narrow": (
        lambda m, t: m.nn.init.trunc_normal_(t, mean=0.1, std=0.5, a=-0.6, b=0.6),
        (30,),
    ),
    "sparse": (lambda m, t: m.nn.init.sparse_(t, 0.3), (10, 4)),
}


@pytest.mark.parametrize("name", sorted(INITS))
def test_init_matches_torch_after_manual_seed(name):
    fn, shape = INITS[name]

    def f(m):
        m.manual_seed(7)
        p = m.nn.Parameter(m.empty(*shape))
        out = fn(m, p)
        return out is p, p, m.rand(2)  # the stream after the initialiser, too

    both(f, exact=True)


@pytest.mark.parametrize("shape", [(3, 6), (6, 3), (4, 2, 3)])
def test_orthogonal_matches_torch(shape):
    def f(m):
        m.manual_seed(3)
        t = m.empty(*shape)
        m.nn.init.orthogonal_(t, gain=2)
        return t, m.rand(2)

    both(f, atol=1e-6, rtol=1e-5)


def test_init_float64_trunc_normal():
    def f(m):
        m.manual_seed(1)
        t = m.empty(40, dtype=m.float64)
        return m.nn.init.trunc_normal_(t, std=0.5, a=-0.6, b=0.6)

    both(f, exact=True)


def test_calculate_gain_and_fans():
    def f(m):
        init = m.nn.init
        gains = [
            init.calculate_gain(n)
            for n in ("linear", "conv2d", "sigmoid", "tanh", "relu", "leaky_relu", "selu")
        ]
        gains.append(init.calculate_gain("leaky_relu", 0.2))
        gains.append(init.calculate_gain("leaky_relu", 3))
        return gains, init._calculate_fan_in_and_fan_out(m.empty(4, 3, 2, 5))

    both(f)


@pytest.mark.parametrize(
    "action",
    [
        lambda m: m.nn.init.calculate_gain("gelu"),
        lambda m: m.nn.init.calculate_gain("leaky_relu", True),
        lambda m: m.nn.init.xavier_uniform_(m.empty(3)),
        lambda m: m.nn.init.kaiming_uniform_(m.empty(3, 2), mode="fan_avg"),
        lambda m: m.nn.init.kaiming_normal_(m.empty(0, 2)),
        lambda m: m.nn.init.eye_(m.empty(3)),
        lambda m: m.nn.init.dirac_(m.empty(3, 3)),
        lambda m: m.nn.init.dirac_(m.empty(3, 3, 3), groups=2),
        lambda m: m.nn.init.orthogonal_(m.empty(3)),
        lambda m: m.nn.init.sparse_(m.empty(3), 0.1),
        lambda m: m.nn.init.trunc_normal_(m.empty(3), mean=5.0),
        lambda m: m.nn.init.uniform(m.empty(3)),
    ],
)
def test_init_errors_and_warnings(action):
    both(lambda m: (action(m), None)[1])


def test_deprecated_init_warns_future_warning():
    with pytest.warns(FutureWarning, match="nn.init.normal_"):
        leafgrad.nn.init.normal(leafgrad.empty(2))


# --- nn.utils -------------------------------------------------------------------------------------


def _grads(m, scale=1.0):
    net = _net(m)
    (net(m.linspace(-1.0, 2.0, 12).reshape(4, 3)) ** 2).sum().mul(scale).backward()
    return net


@pytest.mark.parametrize("norm_type", [2.0, 1, 3.5, float("inf")])
def test_clip_grad_norm_(norm_type):
    def f(m):
        net = _grads(m)
        total = m.nn.utils.clip_grad_norm_(net.parameters(), 1.5, norm_type=norm_type)
        return total, [p.grad for p in net.parameters()]

    both(f, rtol=1e-5, atol=1e-6)


def test_clip_grad_norm_no_clip_single_tensor_and_empty():
    def f(m):
        net = _grads(m, 1e-4)
        total = m.nn.utils.clip_grad_norm_(net.parameters(), 100.0, foreach=True)
        single = m.nn.utils.clip_grad_norm_(net.w, 1e-3)
        empty = m.nn.utils.clip_grad_norm_([], 1.0)
        return total, single, empty, [p.grad for p in net.parameters()]

    both(f, rtol=1e-5, atol=1e-8)


def test_clip_grad_norm_empty_generator_warns_and_nonfinite_raises():
    both(lambda m: m.nn.utils.clip_grad_norm_((p for p in []), 1.0))

    def f(m):
        net = _grads(m)
        with m.no_grad():
            net.w.grad[0, 0] = float("inf")
        return m.nn.utils.clip_grad_norm_(net.parameters(), 1.0, error_if_nonfinite=True)

    both(f)


def test_clip_grad_value_():
    def f(m):
        net = _grads(m)
        out = m.nn.utils.clip_grad_value_(net.parameters(), 0.5)
        return out, [p.grad for p in net.parameters()]

    both(f)


def test_parameters_to_vector_and_back():
    def f(m):
        net = _net(m)
        vec = m.nn.utils.parameters_to_vector(net.parameters())
        w = net.w
        m.nn.utils.vector_to_parameters(vec * 2, net.parameters())
        return vec, list(net.parameters()), net.w is w, net.w.is_leaf

    both(f)
    both(lambda m: m.nn.utils.vector_to_parameters([1.0], []))


def test_parameters_to_vector_devices_must_agree():
    with pytest.raises(TypeError) as info:
        lg.nn.utils.parameters_to_vector([lg.ones(2), lg.ones(2, device="cuda")])
    assert str(info.value) == (
        "Found two parameters on different devices, this is currently not supported."
    )


def test_torch_is_the_reference():
    # The differential tests above rely on torch being real PyTorch, not leafgrad.
    assert torch.nn.Module is not lg.nn.Module
