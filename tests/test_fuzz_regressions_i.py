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
