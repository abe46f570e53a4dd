"""Data-parallel MLP training step over 1, 2, 4 and 8 devices: time per step and scaling ratios.

The step (forward, cross-entropy, backward, SGD update) of a ``DistributedDataParallel`` MLP runs
on a 1-d ``dp`` mesh over the first N devices, eagerly and compiled by ``leafgrad.compile`` (one
SPMD program for all devices), with the same global batch for every N (strong scaling). Prints a
markdown table; ``speedup`` is the 1-device time over the N-device time.

    python benchmarks/bench_distributed.py                      # 8 host (CPU) devices
    python benchmarks/bench_distributed.py --device cuda        # every GPU of this host
    python benchmarks/bench_distributed.py --device tpu         # every TPU core of this host

On CPU the script asks XLA for 8 host devices (``--xla_force_host_platform_device_count``)
before JAX starts; they share the machine's cores, so CPU ratios measure overhead, not hardware
parallelism. Across hosts, start the same script on every host with ``WORLD_SIZE``, ``RANK``,
``MASTER_ADDR`` and ``MASTER_PORT`` set (``init_process_group`` then calls
``jax.distributed.initialize``) and the mesh spans every host's devices.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu", choices=("cpu", "cuda", "tpu"))
    parser.add_argument("--batch", type=int, default=512)
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--layers", type=int, default=3)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--counts", default="1,2,4,8")
    args = parser.parse_args()
    if args.device == "cpu" and "xla_force_host_platform_device_count" not in os.environ.get(
        "XLA_FLAGS", ""
    ):
        os.environ["XLA_FLAGS"] = (
            os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=8"
        ).strip()
    sys.path.insert(0, ROOT)

    import jax

    if args.device == "cpu":
        # XLA's CPU collectives wait for all 8 virtual devices; with several programs in flight
        # on a few cores they can starve one another, so run CPU programs one at a time
        jax.config.update("jax_cpu_enable_async_dispatch", False)

    import leafgrad as torch
    import leafgrad.distributed as dist
    from leafgrad.distributed.device_mesh import init_device_mesh, platform_devices
    from leafgrad.nn.parallel import DistributedDataParallel

    dist.init_process_group()
    available = len(platform_devices(args.device))
    counts = [n for n in map(int, args.counts.split(",")) if n <= available]
    torch.manual_seed(0)
    x = torch.randn(args.batch, args.hidden)
    y = torch.randint(0, 10, (args.batch,))

    def make_step(n: int, compiled: bool):
        mesh = init_device_mesh(args.device, (n,), mesh_dim_names=("dp",))
        torch.manual_seed(0)
        layers = []
        for _ in range(args.layers - 1):
            layers += [torch.nn.Linear(args.hidden, args.hidden), torch.nn.ReLU()]
        net = torch.nn.Sequential(*layers, torch.nn.Linear(args.hidden, 10))
        if args.device != "cpu":
            net = net.to(args.device)
        model = DistributedDataParallel(net, device_mesh=mesh)
        opt = torch.optim.SGD(net.parameters(), lr=0.01)

        def step(xb, yb):
            opt.zero_grad()
            loss = torch.nn.functional.cross_entropy(model(xb), yb)
            loss.backward()
            opt.step()
            return loss

        batch = model.distribute((x, y))
        return (torch.compile(step) if compiled else step), batch

    def per_step(step, batch) -> float:
        for _ in range(3):  # warm-up: discovery, tracing, compiling
            step(*batch).item()
        best = float("inf")
        for _ in range(3):
            start = time.perf_counter()
            for _ in range(args.steps):
                loss = step(*batch)
            loss.item()  # wait for the devices
            best = min(best, (time.perf_counter() - start) / args.steps)
        return best

    rows = []
    for n in counts:
        eager = per_step(*make_step(n, compiled=False))
        compiled = per_step(*make_step(n, compiled=True))
        rows.append((n, eager, compiled))
        print(
            f"{n} devices: eager {eager * 1e3:.2f} ms, compiled {compiled * 1e3:.2f} ms", flush=True
        )
    print(
        f"Data-parallel MLP step ({args.layers} Linear layers of {args.hidden}, global batch "
        f"{args.batch}) on {args.device}\n"
    )
    print(
        "| devices | eager ms/step | compiled ms/step | eager speedup | compiled speedup "
        "| compiled samples/s |"
    )
    print("| ---: | ---: | ---: | ---: | ---: | ---: |")
    e1, c1 = rows[0][1], rows[0][2]
    for n, e, c in rows:
        print(
            f"| {n} | {e * 1e3:.2f} | {c * 1e3:.2f} | {e1 / e:.2f} | {c1 / c:.2f} "
            f"| {args.batch / c:,.0f} |"
        )


if __name__ == "__main__":
    main()
