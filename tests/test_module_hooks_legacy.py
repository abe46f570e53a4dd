"""Module.register_backward_hook (deprecated in PyTorch, still common in older code): the hook
runs as a hook of the node that made the module's first output tensor, with that node's
gradients, and PyTorch's FutureWarnings say which gradients it misses; it cannot be mixed with
full backward hooks. Also the checks of a post-accumulate-grad hook's result and the name a
custom Function's output view gives in the in-place error."""

from __future__ import annotations

import pytest
from conftest import both


def _shapes(gs):
    return [None if g is None else tuple(g.shape) for g in gs]


CASES = {
    "linear_input_no_grad": lambda M, seen: M.nn.Linear(2, 3),
    "linear_input_grad": lambda M, seen: M.nn.Linear(2, 3),
    "relu": lambda M, seen: M.nn.ReLU(),
    "sequential": lambda M, seen: M.nn.Sequential(M.nn.Linear(2, 2), M.nn.ReLU()),
    "tanh": lambda M, seen: M.nn.Tanh(),
}


@pytest.mark.parametrize("returns", ["none", "scaled"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_register_backward_hook(name, returns):
    def fn(M):
        M.manual_seed(0)
        seen = []
        m = CASES[name](M, seen)

        def hook(mod, gi, go):
            seen.append((_shapes(gi), _shapes(go), mod is m))
            if returns == "scaled":
                return tuple(None if g is None else g * 5 for g in gi)
            return None

        m.register_backward_hook(hook)
        x = M.ones(4, 2, requires_grad=name != "linear_input_no_grad")
        inp = x * 1 if x.requires_grad else x
        out = m(inp)
        out.sum().backward()
        return seen, x.grad, [p.grad for p in m.parameters()], m._is_full_backward_hook

    both(fn)


def test_backward_hooks_do_not_mix():
    def regular_then_full(M):
        m = M.nn.Linear(2, 2)
        m.register_backward_hook(lambda *a: None)
        return m.register_full_backward_hook(lambda *a: None)

    def full_then_regular(M):
        m = M.nn.Linear(2, 2)
        m.register_full_backward_hook(lambda *a: None)
        return m.register_backward_hook(lambda *a: None)

    def removed(M):
        m = M.nn.Linear(2, 2)
        m.register_backward_hook(lambda *a: None).remove()
        return m._is_full_backward_hook, m(M.ones(1, 2)).shape

    both(regular_then_full)
    both(full_then_regular)
    both(removed)


def test_non_full_hook_warnings_for_nested_outputs():
    def fn(M):
        class Pair(M.nn.Module):
            def forward(self, x):
                return {"a": x * 2, "b": x * 3}

        class Two(M.nn.Module):
            def forward(self, x):
                return x * 2, x.exp()

        out = []
        for cls in (Pair, Two):
            m = cls()
            m.register_backward_hook(lambda mod, gi, go: None)
            x = M.ones(2, requires_grad=True)
            r = m(x)
            out.append(sorted(r) if isinstance(r, dict) else len(r))
        return out

    both(fn)


POST_HOOKS = {
    "tensor": lambda t: t.grad.mul_(10),
    "number": lambda t: 5,
    "none": lambda t: None,
}


@pytest.mark.parametrize("name", sorted(POST_HOOKS))
def test_post_accumulate_grad_hook_result(name):
    def fn(M):
        x = M.ones(2, requires_grad=True)
        x.register_post_accumulate_grad_hook(POST_HOOKS[name])
        try:
            (x * 3).sum().backward()
        except (RuntimeError, TypeError) as e:
            return type(e).__name__, str(e), x.grad
        return x.grad

    both(fn)


@pytest.mark.parametrize("name", ["FooBackwardBar", "Ident", "BackwardX", "MyBackward"])
def test_custom_function_view_error_names_the_function(name):
    def fn(M):
        F = type(
            name,
            (M.autograd.Function,),
            {
                "forward": staticmethod(lambda ctx, x: x),
                "backward": staticmethod(lambda ctx, g: g),
            },
        )
        y = F.apply(M.ones(2, requires_grad=True) * 1)
        return y.mul_(2)

    both(fn)


def test_full_backward_hook_on_inplace_module():
    def fn(M):
        m = M.nn.ReLU(inplace=True)
        m.register_full_backward_hook(lambda mod, gi, go: None)
        return m(M.ones(3, requires_grad=True) * 1)

    both(fn)


# Global module hooks (``torch.nn.modules.module.register_module_*``): every module's call runs
# them before its own hooks; registration hooks run in register_buffer / register_parameter /
# add_module and may replace what is registered. Each test removes what it registers.
def _global_calls(M, kind):
    mm = M.nn.modules.module
    seen = []
    handles = []
    if kind == "forward":
        handles.append(
            mm.register_module_forward_pre_hook(lambda m, a: seen.append(("pre", type(m).__name__)))
        )
        handles.append(
            mm.register_module_forward_hook(lambda m, a, o: seen.append(("fwd", type(m).__name__)))
        )
    elif kind == "full_backward":
        handles.append(
            mm.register_module_full_backward_hook(
                lambda m, gi, go: seen.append(("bwd", type(m).__name__, _shapes(gi)))
            )
        )
        handles.append(
            mm.register_module_full_backward_pre_hook(
                lambda m, go: seen.append(("bpre", type(m).__name__))
            )
        )
    elif kind == "backward":
        handles.append(
            mm.register_module_backward_hook(
                lambda m, gi, go: seen.append(("old", type(m).__name__, _shapes(gi)))
            )
        )
    elif kind == "kwargs":
        handles.append(mm.register_module_forward_hook(lambda m, a, kw, o: o * 2, with_kwargs=True))
    try:
        M.manual_seed(0)
        m = M.nn.Sequential(M.nn.Linear(2, 2), M.nn.ReLU())
        m.register_forward_hook(lambda mod, a, o: seen.append(("own", type(mod).__name__)))
        out = m(M.ones(1, 2, requires_grad=True))
        out.sum().backward()
    finally:
        for h in handles:
            h.remove()
    out2 = m(M.ones(1, 2))
    return seen, out, out2


@pytest.mark.parametrize("kind", ["forward", "full_backward", "backward", "kwargs"])
def test_global_module_hooks(kind):
    both(lambda M: _global_calls(M, kind))


def test_global_backward_hooks_do_not_mix():
    def fn(M):
        mm = M.nn.modules.module
        h = mm.register_module_full_backward_hook(lambda *a: None)
        try:
            mm.register_module_backward_hook(lambda *a: None)
        finally:
            h.remove()

    both(fn)


def test_global_always_called_forward_hook():
    def fn(M):
        mm = M.nn.modules.module
        seen = []
        h = mm.register_module_forward_hook(lambda m, a, o: seen.append("always"), always_call=True)

        class Bad(M.nn.Module):
            def forward(self, x):
                raise ValueError("boom")

        try:
            Bad()(1)
        except ValueError:
            pass
        finally:
            h.remove()
        return seen

    both(fn)


def test_global_registration_hooks():
    def fn(M):
        mm = M.nn.modules.module
        seen = []
        handles = [
            mm.register_module_buffer_registration_hook(lambda m, n, b: seen.append(("buf", n))),
            mm.register_module_parameter_registration_hook(lambda m, n, p: seen.append(("par", n))),
            mm.register_module_module_registration_hook(lambda m, n, s: seen.append(("mod", n))),
            mm.register_module_parameter_registration_hook(
                lambda m, n, p: M.nn.Parameter(M.zeros(p.shape)) if n == "bias" else None
            ),
        ]
        try:
            M.manual_seed(0)
            bn = M.nn.BatchNorm1d(2)
            seq = M.nn.Sequential(M.nn.Linear(1, 1))
        finally:
            for h in handles:
                h.remove()
        return seen, bn.bias, seq[0].bias, [n for n, _ in seq.named_parameters()]

    both(fn)


@pytest.mark.parametrize("kind", ["list_output", "number_input", "two_nodes", "one_node"])
def test_non_full_hook_warning_cases(kind):
    def fn(M):
        forwards = {
            "list_output": lambda self, x: [x * 2],
            "number_input": lambda self, x, y: x * y,
            "two_nodes": lambda self, x: (x * 2, x.exp()),
            "one_node": lambda self, x: (x * 2).exp(),
        }
        m = type("C", (M.nn.Module,), {"forward": forwards[kind]})()
        m.register_backward_hook(lambda *a: None)
        x = M.ones(2, requires_grad=True)
        out = m(x, 3) if kind == "number_input" else m(x)
        return type(out).__name__

    both(fn)
