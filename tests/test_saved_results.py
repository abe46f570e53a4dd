"""What a node keeps for backward: results where PyTorch keeps results (Note [Saved results] in
leafgrad/ops/table.py), and F.linear's ``weight.t()`` made inside its product, never as a copy
(Note [Views inside ops]). Graphs, gradients (double backward included), version errors, NaN
and infinities are compared with torch; what the nodes hold is checked directly."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from conftest import both

import leafgrad as lg
from leafgrad.autograd import fused
from leafgrad.ops.dispatch import forward_function
from leafgrad.ops.table import OPS


def _structure(fn, depth=4):
    """The graph below ``fn`` as nested (name, children) tuples, ``depth`` levels deep."""
    if fn is None:
        return None
    name = type(fn).__name__
    if depth == 0:
        return name
    return (name, tuple(_structure(f, depth - 1) for f, _ in fn.next_functions))


def _held_arrays(fn) -> list:
    """The arrays the graph below ``fn`` keeps for backward (primals and saved tensors)."""
    held, seen, stack = [], set(), [fn]
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        held += [a for a in getattr(node, "_primals", None) or () if isinstance(a, jax.Array)]
        held += [t._data for t in getattr(node, "_operands", ()) if t is not None]
        stack.extend(f for f, _ in node.next_functions)
    return held


def _data(m, *shape, seed=0, requires_grad=True):
    rng = np.random.default_rng(seed)
    return m.tensor(rng.standard_normal(shape).astype(np.float32), requires_grad=requires_grad)


# --- F.linear: weight.t() inside the product -----------------------------------------------

LINEAR_CASES = [
    ((4, 3), True),
    ((4, 3), False),
    ((3,), True),
    ((3,), False),
    ((5, 4, 3), True),
    ((5, 4, 3), False),
]


@pytest.mark.parametrize("shape, bias", LINEAR_CASES)
def test_linear_records_pytorchs_graph_and_gradients(shape, bias):
    def run(m):
        x = _data(m, *shape, seed=1)
        w = _data(m, 2, 3, seed=2)
        b = _data(m, 2, seed=3) if bias else None
        y = m.nn.functional.linear(x, w, b)
        graph = _structure(y.grad_fn)
        (y * y).sum().backward()
        return y, graph, y._version, x.grad, w.grad, (b.grad if bias else 0)

    both(run)


@pytest.mark.parametrize("shape, bias", LINEAR_CASES)
def test_linear_keeps_the_weight_not_a_transposed_copy(shape, bias):
    x = _data(lg, *shape, seed=1)
    w = _data(lg, 2, 3, seed=2)
    b = _data(lg, 2, seed=3) if bias else None
    y = lg.nn.functional.linear(x, w, b)
    held = _held_arrays(y.grad_fn)
    assert any(a is w._data for a in held), "x needs grad: the product saves the weight"
    assert not any(a.shape == (3, 2) for a in held), [a.shape for a in held]  # no w.t()
    assert all(a is w._data for a in held if a.shape == (2, 3))


def test_linear_with_a_frozen_weight_and_frozen_input():
    def run(m):
        x = _data(m, 4, 3, seed=1)
        w = _data(m, 2, 3, seed=2, requires_grad=False)
        b = _data(m, 2, seed=3)
        y = m.nn.functional.linear(x, w, b)
        z = m.nn.functional.linear(x.detach(), w.detach().requires_grad_(), None)
        graphs = _structure(y.grad_fn), _structure(z.grad_fn)
        (y.sum() + z.sum()).backward()
        return y, z, graphs, x.grad, b.grad

    both(run)


def test_linear_without_grad_computes_the_same_values():
    def run(m):
        x, w, b = _data(m, 4, 3, seed=1), _data(m, 2, 3, seed=2), _data(m, 2, seed=3)
        with m.no_grad():
            return m.nn.functional.linear(x, w, b), m.nn.functional.linear(x[0], w)

    both(run)


LINEAR_CALLS = {
    "bool": lambda m: m.nn.functional.linear(m.ones(2, 3).bool(), m.ones(4, 3).bool()),
    "bool_1d": lambda m: m.nn.functional.linear(m.ones(3).bool(), m.ones(4, 3).bool()),
    "bool_bias": lambda m: m.nn.functional.linear(
        m.ones(2, 3).bool(), m.ones(4, 3).bool(), m.ones(4).bool()
    ),
    "shapes": lambda m: m.nn.functional.linear(m.ones(2, 3), m.ones(4, 5)),
    "shapes_1d": lambda m: m.nn.functional.linear(m.ones(3), m.ones(4, 5)),
    "shapes_3d": lambda m: m.nn.functional.linear(m.ones(6, 2, 3), m.ones(4, 5)),
    "shapes_bias": lambda m: m.nn.functional.linear(m.ones(2, 3), m.ones(4, 5), m.ones(4)),
    "bias_size": lambda m: m.nn.functional.linear(m.ones(2, 3), m.ones(4, 3), m.ones(5)),
    "dtypes": lambda m: m.nn.functional.linear(m.ones(2, 3), m.ones(4, 3).double()),
    "integers": lambda m: m.nn.functional.linear(m.ones(2, 3).long(), m.ones(4, 3).long()),
    "empty_batch": lambda m: m.nn.functional.linear(m.ones(0, 3), m.ones(4, 3).requires_grad_()),
    "empty_lead": lambda m: m.nn.functional.linear(m.ones(2, 0, 3), m.ones(4, 3).requires_grad_()),
}


@pytest.mark.parametrize("name", sorted(LINEAR_CALLS))
def test_linear_errors_and_empty_inputs(name):
    both(LINEAR_CALLS[name])


@pytest.mark.parametrize("bias", [True, False])
def test_weight_written_after_the_forward_raises_pytorchs_error(bias):
    def run(m):
        x = _data(m, 4, 3, seed=1)
        w = _data(m, 2, 3, seed=2)
        y = m.nn.functional.linear(x, w, _data(m, 2, seed=3) if bias else None)
        with m.no_grad():
            w.add_(1)
        y.sum().backward()

    t, g = both(run)
    assert "which is output 0 of AsStrided" in g.text


def test_frozen_weight_written_after_the_forward_raises_pytorchs_error():
    def run(m):
        x = _data(m, 4, 3, seed=1)
        w = _data(m, 2, 3, seed=2, requires_grad=False)
        y = m.nn.functional.linear(x, w)
        w.mul_(2)
        y.sum().backward()

    t, g = both(run)
    assert "[torch.FloatTensor [3, 2]] is at version 1" in g.text


def test_non_leaf_weight_written_in_place_after_the_forward():
    def run(m):
        p = _data(m, 2, 3, seed=2)
        w = p * 2
        y = m.nn.functional.linear(_data(m, 4, 3, seed=1), w)
        w.mul_(3)
        y.sum().backward()

    both(run)


def test_weight_written_before_backward_that_does_not_need_it():
    # x does not require grad: the product does not save the weight, so the write is allowed
    def run(m):
        x = _data(m, 4, 3, seed=1, requires_grad=False)
        w = _data(m, 2, 3, seed=2)
        y = m.nn.functional.linear(x, w, _data(m, 2, seed=3))
        with m.no_grad():
            w.add_(1)
        y.sum().backward()
        return w.grad

    both(run)


def test_hooks_on_the_transpose_node_and_the_weight_see_pytorchs_shapes():
    def run(m):
        x, w, b = _data(m, 4, 3, seed=1), _data(m, 2, 3, seed=2), _data(m, 2, seed=3)
        y = m.nn.functional.linear(x, w, b)
        seen = []
        node = y.grad_fn.next_functions[2][0]
        node.register_prehook(lambda go: seen.append(("pre", tuple(go[0].shape))))
        node.register_hook(
            lambda gi, go: seen.append(("post", tuple(gi[0].shape), tuple(go[0].shape)))
        )
        w.register_hook(lambda g: g * 2)
        y.retain_grad()
        (y * y).sum().backward()
        return seen, w.grad, y.grad

    both(run)


def test_linear_double_backward():
    def run(m):
        x, w, b = _data(m, 4, 3, seed=1), _data(m, 2, 3, seed=2), _data(m, 2, seed=3)
        loss = (m.nn.functional.linear(x, w, b) ** 2).sum()
        gx, gw = m.autograd.grad(loss, (x, w), create_graph=True)
        ((gx**2).sum() + (gw**3).sum()).backward()
        return gx.detach(), gw.detach(), x.grad, w.grad, b.grad

    both(run, rtol=1e-5, atol=1e-5)


def _mlp(m):
    m.manual_seed(0)
    nn = m.nn
    return nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 4))


def _mlp_batch(m):
    rng = np.random.default_rng(5)
    x = m.tensor(rng.standard_normal((7, 6)).astype(np.float32))
    return x, m.tensor(rng.integers(0, 4, 7))


def test_mlp_steps_take_the_fused_backward_and_match_torch(monkeypatch):
    monkeypatch.setattr(fused, "ENABLED", True)
    monkeypatch.setattr(fused, "_COMPILE_FIRST", False)
    compiled = {"runs": 0}
    real = fused._run

    def counting(*args):
        compiled["runs"] += 1
        return real(*args)

    monkeypatch.setattr(fused, "_run", counting)

    def run(m):
        model = _mlp(m)
        opt = m.optim.SGD(model.parameters(), lr=0.1)
        x, y = _mlp_batch(m)
        losses = []
        for _ in range(5):
            opt.zero_grad()
            loss = m.nn.functional.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            losses.append(loss)
        return losses, [p.grad for p in model.parameters()], list(model.parameters())

    both(run, rtol=1e-5, atol=1e-6)
    assert compiled["runs"] > 0


def test_compiled_step_matches_eager_and_torch():
    results = {}
    for kind in ("torch", "eager", "compiled"):
        m = __import__("torch") if kind == "torch" else lg
        model = _mlp(m)
        opt = m.optim.SGD(model.parameters(), lr=0.1)

        def step(x, y, model=model, opt=opt, m=m):
            opt.zero_grad()
            loss = m.nn.functional.log_softmax(model(x), 1).mul(-1).mean()
            loss = loss + m.nn.functional.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            return loss

        if kind == "compiled":
            step = lg.compile(step)
        x, y = _mlp_batch(m)
        losses = [step(x, y).item() for _ in range(4)]
        results[kind] = (losses, [p.detach().numpy() for p in model.parameters()])
    for kind in ("eager", "compiled"):
        np.testing.assert_allclose(results[kind][0], results["torch"][0], rtol=1e-5)
        for a, b in zip(results[kind][1], results["torch"][1]):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


# --- ops differentiated from their result ------------------------------------------------------

RESULT_OPS = {
    "relu": lambda m, x: m.relu(x),
    "exp": lambda m, x: x.exp(),
    "reciprocal": lambda m, x: x.reciprocal(),
    "softmax": lambda m, x: m.softmax(x, 1),
    "log_softmax": lambda m, x: m.nn.functional.log_softmax(x, 1),
    "softmax_dim0": lambda m, x: m.softmax(x, 0),
    "log_softmax_dim0": lambda m, x: m.log_softmax(x, 0),
}


@pytest.mark.parametrize("name", sorted(RESULT_OPS))
def test_the_node_keeps_the_result_array_and_not_the_input(name):
    x = _data(lg, 3, 4) * 1  # a non-leaf input: the graph would keep it if the node did
    y = RESULT_OPS[name](lg, x)
    node = y.grad_fn
    assert node._primals == (y._data,) and node._primals[0] is y._data
    assert not node._operands
    assert all(a is not x._data for a in _held_arrays(node))
    assert not any(isinstance(p, lg.Tensor) for p in node._primals)  # no cycle through y


@pytest.mark.parametrize("name", sorted(RESULT_OPS))
def test_gradients_from_the_result_match_torch(name):
    def run(m):
        x = _data(m, 3, 4)
        y = RESULT_OPS[name](m, x)
        (y * _data(m, 3, 4, seed=9, requires_grad=False)).sum().backward()
        return y, x.grad

    both(run)


@pytest.mark.parametrize("name", sorted(RESULT_OPS))
def test_double_backward_through_the_result(name):
    def run(m):
        x = _data(m, 3, 4)
        y = RESULT_OPS[name](m, x)
        v = _data(m, 3, 4, seed=9, requires_grad=False)
        (g,) = m.autograd.grad((y * y * v).sum(), x, create_graph=True)
        (g * g).sum().backward()
        return g.detach(), x.grad

    both(run, rtol=1e-5, atol=1e-5)


SPECIAL = [float("nan"), float("inf"), float("-inf"), -0.0, 0.0, 1.5, -2.0, 1e-30]


@pytest.mark.parametrize("name", ["relu", "exp", "reciprocal"])
def test_nan_inf_and_signed_zero_gradients_match_torch(name):
    def run(m):
        x = m.tensor(SPECIAL, requires_grad=True)
        y = RESULT_OPS[name](m, x)
        y.backward(m.tensor([1.0, -1.0, 2.0, 3.0, -4.0, 0.5, float("nan"), 1.0]))
        return y, x.grad, [str(v) for v in x.grad.tolist()]  # the sign of each zero too

    both(run)


@pytest.mark.parametrize("name", ["softmax", "log_softmax", "softmax_dim0", "log_softmax_dim0"])
def test_softmax_rows_with_nan_and_infinities_match_torch(name):
    def run(m):
        rows = [
            [0.0, float("-inf"), 1.0, 2.0],
            [float("inf"), 0.0, 1.0, -1.0],
            [float("nan"), 0.0, 1.0, 2.0],
            [float("-inf"), float("-inf"), 3.0, -0.0],
        ]
        x = m.tensor(rows, requires_grad=True)
        y = RESULT_OPS[name](m, x)
        y.backward(m.ones(4, 4))
        return y, x.grad

    both(run)


@pytest.mark.parametrize("dtype", ["float16", "float64"])
def test_result_gradients_in_other_dtypes(dtype):
    def run(m):
        x = _data(m, 3, 4).to(getattr(m, dtype)).detach().requires_grad_()
        y = m.relu(x) + m.log_softmax(x, 1) + x.exp() + m.softmax(x, 0)
        y.sum().backward()
        return y, x.grad

    both(run)


def test_zero_dim_softmax_and_log_softmax():
    def run(m):
        x = m.tensor(0.7, requires_grad=True)
        y = m.softmax(x, 0) * 2 + m.log_softmax(x, 0)
        y.backward()
        return y, x.grad

    both(run)


@pytest.mark.parametrize("name", ["relu", "exp", "softmax", "log_softmax"])
def test_result_written_in_place_raises_pytorchs_error(name):
    def run(m):
        x = _data(m, 3, 4)
        y = RESULT_OPS[name](m, x)
        y.add_(1)
        y.sum().backward()

    both(run)


def test_input_written_in_place_after_relu_is_allowed():
    # PyTorch's relu keeps its result: writing its input later does not break its backward
    def run(m):
        x = _data(m, 3, 4) * 1
        y = m.relu(x)
        x.mul_(2)
        (y * y).sum().backward()
        return y

    both(run)


def test_second_backward_through_a_result_op_raises():
    def run(m):
        x = _data(m, 3, 4)
        y = m.relu(x).sum()
        y.backward()
        y.backward()

    both(run)


@pytest.mark.parametrize("fn", ["torch.relu_", "F.relu_", "method", "inplace=True"])
def test_in_place_relu_records_relu_backward(fn):
    def run(m):
        x = _data(m, 3, 4)
        y = x * 1
        call = {
            "torch.relu_": lambda: m.relu_(y),
            "F.relu_": lambda: m.nn.functional.relu_(y),
            "method": lambda: y.relu_(),
            "inplace=True": lambda: m.nn.functional.relu(y, inplace=True),
        }[fn]
        out = call()
        same = out is y
        name = type(y.grad_fn).__name__
        (y * y).sum().backward()
        return same, name, y._version, y, x.grad

    both(run)


@pytest.mark.parametrize("fn", ["torch.relu_", "F.relu_"])
def test_in_place_relu_errors(fn):
    def leaf(m):
        f = m.relu_ if fn == "torch.relu_" else m.nn.functional.relu_
        f(_data(m, 3))

    def written(m):
        f = m.relu_ if fn == "torch.relu_" else m.nn.functional.relu_
        y = f(_data(m, 3) * 1)
        y.add_(1)
        y.sum().backward()

    both(leaf)
    both(written)


def test_in_place_relu_on_a_view():
    def run(m):
        x = _data(m, 3, 4)
        base = x * 1
        m.relu_(base[1])
        (base * base).sum().backward()
        return base, type(base.grad_fn).__name__, x.grad

    both(run)


def _result_ops():
    return sorted(name for name, op in OPS.items() if op.result_vjp is not None)


def test_result_ops_are_the_expected_ones():
    assert {"exp", "reciprocal", "nn.relu", "nn.softmax", "nn.log_softmax"} <= set(_result_ops())


@pytest.mark.parametrize("name", _result_ops())
def test_result_formula_equals_jaxs_vjp(name):
    """Each ``result_vjp`` against JAX's VJP of the op's forward, in float64 (torch-free)."""
    from leafgrad import _dtype as D

    op = OPS[name]
    rng = np.random.default_rng(0)
    x = jnp.asarray(rng.standard_normal((3, 5)))
    static = {"dim": 1} if "softmax" in name else {}
    f = forward_function(op, (D.float64,), D.float64, static)
    out, vjp = jax.vjp(f, x)
    ct = jnp.asarray(rng.standard_normal((3, 5)))
    np.testing.assert_allclose(op.result_vjp(out, ct, **static), vjp(ct)[0], rtol=1e-12)


# --- outputs PyTorch saves whichever inputs need a gradient ---------------------------------
# PyTorch's node saves an output its formulas read whenever it is made, even where only the
# formulas of other inputs are needed (its saved inputs are saved only for the formulas that
# run): ``copysign(a, b)`` with only ``b`` requiring grad saves the result, so writing the
# result in place breaks its backward, and ``_saved_result`` gives it back.

SAVED_OUTPUT_CASES = {
    "copysign": (lambda m, a, b: m.copysign(a, b), [(3, 4), (3, 4)]),
    "copysign_broadcast": (lambda m, a, b: m.copysign(a, b), [(3, 4), (4,)]),
    "ldexp": (lambda m, a, b: m.ldexp(a, b), [(3, 4), (3, 4)]),
    "pow": (lambda m, a, b: m.pow(a.abs() + 0.5, b), [(3, 4), (3, 4)]),
    "solve_triangular": (
        lambda m, a, b: m.linalg.solve_triangular(a.triu() + 3 * m.eye(3), b, upper=True),
        [(3, 3), (3, 2)],
    ),
    "lu_solve": (
        lambda m, a, b: m.linalg.lu_solve(*m.linalg.lu_factor(a + 3 * m.eye(3)), b),
        [(3, 3), (3, 2)],
    ),
}


def _saved_output_run(name, grads, write):
    fn, shapes = SAVED_OUTPUT_CASES[name]

    def run(m):
        xs = [
            _data(m, *shape, seed=k, requires_grad=g)
            for k, (shape, g) in enumerate(zip(shapes, grads))
        ]
        y = fn(m, *xs)
        saved = (
            y.grad_fn._saved_result.detach().clone()
            if hasattr(y.grad_fn, "_saved_result")
            else None
        )
        if write:
            y.mul_(2)
        y.sum().backward()
        return saved, [x.grad for x in xs]

    return run


@pytest.mark.parametrize("grads", [(True, False), (False, True), (True, True)], ids=str)
@pytest.mark.parametrize("name", sorted(SAVED_OUTPUT_CASES))
def test_saved_output_whichever_inputs_need_a_gradient(name, grads):
    both(_saved_output_run(name, grads, write=False))
    both(_saved_output_run(name, grads, write=True))
