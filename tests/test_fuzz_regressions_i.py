"""Regressions found by the differential fuzzer in session 40 (seeds 113-118)."""

import pytest
from conftest import both


@pytest.mark.parametrize("ret", ["int", "self", "other", "other then none", "other then self"])
def test_post_accumulate_grad_hooks_pass_results_on(ret):
    """PyTorch's ``_call_hooks``: a post-accumulate-grad hook's result (a tensor other than its
    argument) is the next hook's argument, and once every hook has run such a result raises
    (seed 118: ``t.grad.mul_(2)`` returned the grad, whose ``.grad`` the next hook read)."""

    def run(m):
        x = m.ones((), requires_grad=True)
        seen = []

        def first(t):
            seen.append("x" if t is x else "other")
            return {"int": 3, "self": t}.get(ret, m.ones(()) if ret != "int" else None)

        def second(t):
            seen.append("x" if t is x else "other")
            return x if ret == "other then self" else None

        x.register_post_accumulate_grad_hook(first)
        x.register_post_accumulate_grad_hook(second)
        try:
            x.backward()
            err = None
        except (TypeError, RuntimeError) as e:
            err = (type(e).__name__, str(e))
        return seen, x.grad, err

    both(run)


def test_post_accumulate_grad_hooks_that_scale_the_grad():
    def run(m):
        x = m.ones((), requires_grad=True)
        x.register_post_accumulate_grad_hook(lambda t: t.grad.mul_(2))
        x.register_post_accumulate_grad_hook(lambda t: t.grad.mul_(3))
        x.backward()

    both(run)


@pytest.mark.parametrize("written", [0, 1])
@pytest.mark.parametrize("fn", ["std_mean", "var_mean", "aminmax"])
def test_saved_outputs_of_two_output_reductions(fn, written):
    """std_mean saves the std (``result0``), not the mean: writing the mean in place leaves
    the std's backward alone (seed 119); aminmax saves both, var_mean neither."""

    def run(m):
        x = m.tensor([1.0, 2.0, 4.0], requires_grad=True)
        r = getattr(m, fn)(x)
        r[written].add_(2.0)
        r[1 - written].backward()
        return x.grad

    both(run)


def test_std_mean_saved_tensor_hooks_pack_the_std_only():
    def run(m):
        x = m.tensor([1.0, 2.0, 4.0], requires_grad=True)
        log = []
        with m.autograd.graph.saved_tensors_hooks(lambda t: log.append(t.shape) or t, lambda t: t):
            s, mu = m.std_mean(x, 0, keepdim=True)
        (s + mu).sum().backward()
        return log, x.grad, s.grad_fn._saved_result0

    both(run)
