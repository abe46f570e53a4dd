"""Eager-mode speed: leafgrad against PyTorch eager (and hand-written ``jax.jit``), in one process.

Run from the repository root (so the working tree's leafgrad is imported):
``python -m benchmarks.bench_eager [case ...]`` (needs torch). Prints, for each case, the best time
of one iteration (per op or per step) for torch, leafgrad and ``jax.jit``, and the ratio
leafgrad/torch:

- ``chain16`` / ``chain4096``: 1000 tiny alternating ops (``x * 1.01``, ``x + 0.5``, ``x - y``
  ...) on a 16-element or 64x64 tensor that requires grad, forward and backward; the ratio is the
  per-op ratio;
- ``mlp``: one training step of a 784-512-512-10 MLP, batch 128, ``F.cross_entropy`` and
  ``optim.SGD(lr=0.01)``;
- ``mul``: one recorded ``a * b`` (16 elements), and the same under ``no_grad``.

It also checks that backward without ``retain_graph`` releases what the graph saved at once.
Samples of the three are interleaved and the best of each is kept: on a shared 2-core machine,
another process's load stalls torch's two intra-op threads far more than it slows a step.
"""

from __future__ import annotations

import argparse
import gc
import time

import jax
import jax.numpy as jnp
import numpy as np
import torch

import leafgrad

N_OPS = 1000


def _chain(lib, x, y):
    # 4 ops per round: mul by a scalar, add a scalar, sub a tensor, mul a tensor
    for _ in range(N_OPS // 4):
        x = x * 1.01
        x = x + 0.5
        x = x - y
        x = x * y
    return x.sum()


def _chain_jax(x, y):
    for _ in range(N_OPS // 4):
        x = x * 1.01
        x = x + 0.5
        x = x - y
        x = x * y
    return x.sum()


def chain_case(shape):
    rng = np.random.default_rng(0)
    x_np = rng.uniform(0.5, 1.0, shape).astype(np.float32)
    y_np = rng.uniform(0.5, 1.0, shape).astype(np.float32) * 0.5
    tx, ty = torch.tensor(x_np, requires_grad=True), torch.tensor(y_np)
    lx, ly = leafgrad.tensor(x_np, requires_grad=True), leafgrad.tensor(y_np)
    jx, jy = jnp.asarray(x_np), jnp.asarray(y_np)
    jstep = jax.jit(jax.grad(_chain_jax))

    def t_fn():
        tx.grad = None
        _chain(torch, tx, ty).backward()
        return tx.grad

    def l_fn():
        lx.grad = None
        _chain(leafgrad, lx, ly).backward()
        return lx.grad._data.block_until_ready()

    def j_fn():
        return jstep(jx, jy).block_until_ready()

    return t_fn, l_fn, j_fn


def _mlp_params(rng):
    sizes = [(784, 512), (512, 512), (512, 10)]
    params = []
    for fan_in, fan_out in sizes:
        bound = 1 / np.sqrt(fan_in)
        params.append(rng.uniform(-bound, bound, (fan_out, fan_in)).astype(np.float32))
        params.append(rng.uniform(-bound, bound, (fan_out,)).astype(np.float32))
    return params


def _mlp_model(lib, params):
    nn = lib.nn
    model = nn.Sequential(
        nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 10)
    )
    with lib.no_grad():
        for p, v in zip(model.parameters(), params):
            p.copy_(lib.tensor(v))
    return model


def mlp_case():
    rng = np.random.default_rng(0)
    params = _mlp_params(rng)
    x_np = rng.standard_normal((128, 784)).astype(np.float32)
    y_np = rng.integers(0, 10, (128,))

    def make_step(lib, block):
        model = _mlp_model(lib, params)
        opt = lib.optim.SGD(model.parameters(), lr=0.01)
        x, y = lib.tensor(x_np), lib.tensor(y_np)
        F = lib.nn.functional
        last = list(model.parameters())[-1]

        def step():
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            return block(last)

        return step

    def jloss(ps, x, y):
        h = x
        for k in range(0, 6, 2):
            h = h @ ps[k].T + ps[k + 1]
            if k < 4:
                h = jax.nn.relu(h)
        logp = jax.nn.log_softmax(h, axis=1)
        return -jnp.mean(jnp.take_along_axis(logp, y[:, None], axis=1))

    @jax.jit
    def jstep(ps, x, y):
        grads = jax.grad(jloss)(ps, x, y)
        return [p - 0.01 * g for p, g in zip(ps, grads)]

    jps = [jnp.asarray(p) for p in params]
    jx, jy = jnp.asarray(x_np), jnp.asarray(y_np)

    def j_fn():
        return jstep(jps, jx, jy)[-1].block_until_ready()

    t_fn = make_step(torch, lambda p: p)
    l_fn = make_step(leafgrad, lambda p: p._data.block_until_ready())
    return t_fn, l_fn, j_fn


def mul_case(grad: bool):
    a_np = np.ones(16, np.float32)
    ta, tb = torch.tensor(a_np, requires_grad=True), torch.tensor(a_np)
    la, lb = leafgrad.tensor(a_np, requires_grad=True), leafgrad.tensor(a_np)
    ja, jb = jnp.asarray(a_np), jnp.asarray(a_np)
    mul = jax.jit(jnp.multiply)
    tctx = torch.enable_grad if grad else torch.no_grad
    lctx = leafgrad.enable_grad if grad else leafgrad.no_grad

    def t_fn():
        with tctx():
            for _ in range(100):
                ta * tb

    def l_fn():
        with lctx():
            for _ in range(100):
                la * lb

    def j_fn():
        for _ in range(100):
            mul(ja, jb)

    return t_fn, l_fn, j_fn


def _best_times(fns, repeat: int, clock=time.perf_counter) -> list[float]:
    for fn in fns:  # warm up: compiles
        fn()
        fn()
    samples = [[] for _ in fns]
    for _ in range(repeat):
        for k, fn in enumerate(fns):
            gc.collect()
            t0 = clock()
            fn()
            samples[k].append(clock() - t0)
    return [min(s) for s in samples]


def check_release() -> str:
    """After ``backward()`` without ``retain_graph``, no node holds a saved array."""
    x = leafgrad.tensor(np.ones(16, np.float32), requires_grad=True)
    y = x
    for _ in range(50):
        y = (y * 1.01).exp()
    loss = y.sum()
    loss.backward()
    held = 0
    stack, seen = [loss.grad_fn], set()
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        primals = getattr(node, "_primals", None) or ()
        held += sum(1 for p in primals if hasattr(p, "shape"))
        held += sum(1 for t in getattr(node, "_operands", ()) or () if t is not None)
        stack.extend(n for n, _ in node.next_functions)
    return f"saved arrays held after backward: {held} (nodes: {len(seen)})"


CASES = {
    "chain16": lambda: chain_case((16,)),
    "chain4096": lambda: chain_case((64, 64)),
    "mlp": mlp_case,
    "mul": lambda: mul_case(True),
    "mul_nograd": lambda: mul_case(False),
}
PER = {"chain16": N_OPS, "chain4096": N_OPS, "mlp": 1, "mul": 100, "mul_nograd": 100}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cases", nargs="*", default=list(CASES))
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument(
        "--cpu",
        action="store_true",
        help="time by this process's CPU time (all threads): steadier on a loaded machine",
    )
    parser.add_argument(
        "--torch-threads", type=int, default=0, help="torch's intra-op threads (0: its default)"
    )
    args = parser.parse_args()
    clock = time.process_time if args.cpu else time.perf_counter
    if args.torch_threads:
        torch.set_num_threads(args.torch_threads)
    print(f"{'case':<12}{'torch us':>11}{'leafgrad us':>13}{'jax.jit us':>12}{'lg/torch':>10}")
    for name in args.cases:
        t, lg, j = _best_times(CASES[name](), args.repeat, clock)
        per = PER[name]
        print(
            f"{name:<12}{t / per * 1e6:>11.2f}{lg / per * 1e6:>13.2f}{j / per * 1e6:>12.2f}"
            f"{lg / t:>10.2f}"
        )
    print(check_release())


if __name__ == "__main__":
    main()
