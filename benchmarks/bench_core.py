"""Core overheads side by side: leafgrad vs PyTorch eager vs hand-written ``jax.jit``.

Run: ``python benchmarks/bench_core.py`` (needs the test extra for torch). Prints the median time
per call of each case for the three and the ratios leafgrad/torch and leafgrad/jit.
"""

from __future__ import annotations

import statistics
import time

import jax
import jax.numpy as jnp
import numpy as np
import torch

import leafgrad


def _time(fn, repeat: int = 7, number: int = 200) -> float:
    fn()  # warm up (compiles)
    fn()
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        samples.append((time.perf_counter() - t0) / number)
    return statistics.median(samples)


def _block(x):
    return x.block_until_ready() if hasattr(x, "block_until_ready") else x


def cases(n: int = 64):
    rng = np.random.default_rng(0)
    a_np = rng.standard_normal((n, n)).astype(np.float32)
    b_np = rng.standard_normal((n, n)).astype(np.float32)

    ta = torch.tensor(a_np, requires_grad=True)
    tb = torch.tensor(b_np)
    la = leafgrad.tensor(a_np, requires_grad=True)
    lb = leafgrad.tensor(b_np)
    ja, jb = jnp.asarray(a_np), jnp.asarray(b_np)

    def loss_j(a, b):
        return jnp.sum(jnp.exp(a @ b * 0.01) + a)

    mul_j = jax.jit(lambda a, b: a * b)
    step_j = jax.jit(jax.value_and_grad(loss_j))

    def torch_step():
        ta.grad = None
        loss = ((ta @ tb * 0.01).exp() + ta).sum()
        loss.backward()
        return ta.grad

    def leaf_step():
        la.grad = None
        loss = ((la @ lb * 0.01).exp() + la).sum()
        loss.backward()
        return _block(la.grad._data)

    with torch.no_grad(), leafgrad.no_grad():
        yield (
            "mul, no grad",
            lambda: ta * tb,
            lambda: _block((la * lb)._data),
            lambda: _block(mul_j(ja, jb)),
        )
    yield (
        "mul, recorded",
        lambda: ta * tb,
        lambda: _block((la * lb)._data),
        lambda: _block(mul_j(ja, jb)),
    )
    yield "fwd+bwd 5 ops", torch_step, leaf_step, lambda: _block(step_j(ja, jb)[1])


def main() -> None:
    print(
        f"{'case':<18}{'torch us':>10}{'leafgrad us':>13}{'jax.jit us':>12}"
        f"{'lg/torch':>10}{'lg/jit':>8}"
    )
    for name, t_fn, l_fn, j_fn in cases():
        t, lg, j = _time(t_fn), _time(l_fn), _time(j_fn)
        print(
            f"{name:<18}{t * 1e6:>10.1f}{lg * 1e6:>13.1f}{j * 1e6:>12.1f}"
            f"{lg / t:>10.2f}{lg / j:>8.2f}"
        )


if __name__ == "__main__":
    main()
