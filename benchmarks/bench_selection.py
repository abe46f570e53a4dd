"""Value-selecting ops side by side: leafgrad vs PyTorch eager vs hand-written ``jax.jit``.

Run: ``python benchmarks/bench_selection.py [n]`` (needs the test extra for torch). Each case
takes an ``n`` x ``n`` float32 matrix that requires grad (default 512) through one op along its
last dim (``sort``, ``topk(10)``, ``kthvalue(n // 4)``, ``median``, ``max``), then ``.sum()`` and
``backward()``, and prints the median time per step of the three and the ratios leafgrad/torch
and leafgrad/jit. The ``jax.jit`` column is ``jax.value_and_grad`` of the same sum written with
``jax.numpy`` / ``lax`` (``jnp.sort``, ``lax.top_k``, ...), jitted: it does not order tied values
as PyTorch's CPU kernels do (leafgrad does, Note [libstdc++ orderings]), so it is the floor a
plain JAX program reaches, not the same computation.
"""

from __future__ import annotations

import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import bench_core  # noqa: E402
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402
from jax import lax  # noqa: E402

import leafgrad  # noqa: E402


def _time(fn, repeat: int = 7, seconds: float = 0.2) -> float:
    """``bench_core._time`` with as many calls a sample as fill about ``seconds``."""
    fn()  # warm up (compiles)
    t0 = time.perf_counter()
    fn()
    number = max(1, int(seconds / max(time.perf_counter() - t0, 1e-6)))
    return bench_core._time(fn, repeat, number)


def ops(n: int) -> dict:
    """name -> (the op on a torch or leafgrad tensor, the same sum in ``jax.numpy``)."""
    k = max(n // 4, 1)
    return {
        "sort": (lambda x: x.sort(-1).values, lambda x: jnp.sort(x, -1)),
        "topk(10)": (
            lambda x: x.topk(min(10, n), -1).values,
            lambda x: lax.top_k(x, min(10, n))[0],
        ),
        f"kthvalue({k})": (lambda x: x.kthvalue(k, -1).values, lambda x: jnp.sort(x, -1)[:, k - 1]),
        "median(dim)": (lambda x: x.median(-1).values, lambda x: jnp.sort(x, -1)[:, (n - 1) // 2]),
        "max(dim)": (lambda x: x.max(-1).values, lambda x: jnp.max(x, -1)),
    }


def cases(n: int = 512):
    """``(name, torch step, leafgrad step, jax.jit step)``: each returns the input's gradient."""
    a_np = np.random.default_rng(0).standard_normal((n, n)).astype(np.float32)
    ta = torch.tensor(a_np, requires_grad=True)
    la = leafgrad.tensor(a_np, requires_grad=True)
    ja = jnp.asarray(a_np)
    for name, (op, jax_op) in ops(n).items():

        def torch_step(op=op):
            ta.grad = None
            op(ta).sum().backward()
            return ta.grad

        def leaf_step(op=op):
            la.grad = None
            op(la).sum().backward()
            return la.grad._data.block_until_ready()

        jit_step = jax.jit(jax.value_and_grad(lambda x, f=jax_op: jnp.sum(f(x))))
        yield name, torch_step, leaf_step, lambda s=jit_step: s(ja)[1].block_until_ready()


def main(n: int = 512) -> list:
    rows = []
    print(f"n = {n}, float32, forward + backward, ms per step")
    print(f"{'op':<16}{'torch':>10}{'leafgrad':>10}{'jax.jit':>10}{'lg/torch':>10}{'lg/jit':>8}")
    for name, t_fn, l_fn, j_fn in cases(n):
        t, lg, j = _time(t_fn), _time(l_fn), _time(j_fn)
        rows.append((name, t, lg, j))
        print(
            f"{name:<16}{t * 1e3:>10.2f}{lg * 1e3:>10.2f}{j * 1e3:>10.2f}"
            f"{lg / t:>10.2f}{lg / j:>8.2f}"
        )
    return rows


if __name__ == "__main__":
    torch.set_num_threads(os.cpu_count() or 1)
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 512)
