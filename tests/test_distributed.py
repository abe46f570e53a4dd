"""leafgrad.distributed: sharded tensors, collectives and data-parallel training on 8 CPU devices.

JAX reads ``XLA_FLAGS`` once, when it starts, and this suite's conftest has started it with one
device; so the multi-device checks run in one subprocess (this file run as a script, with
``--xla_force_host_platform_device_count=8``) that prints its measurements as JSON, and the tests
below assert on them. Each measurement pairs leafgrad on the mesh with the same computation in
PyTorch on one device (or with a per-rank simulation in NumPy, for collectives).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# --- the subprocess ----------------------------------------------------------------------------


def _worker() -> dict:  # noqa: C901 (one script of independent measurements)
    import torch

    import leafgrad as lg
    import leafgrad.distributed as dist
    from leafgrad.distributed.tensor import (
        DTensor,
        Replicate,
        Shard,
        distribute_tensor,
        init_device_mesh,
    )
    from leafgrad.nn.parallel import DistributedDataParallel

    out: dict = {}

    def host(t):
        return np.asarray(t.detach()).tolist()

    def error(fn):
        try:
            fn()
        except Exception as e:  # noqa: BLE001 (recorded and compared by the tests)
            return [type(e).__name__, str(e)]
        return None

    # the process group before and after init (PyTorch on one rank for its texts)
    out["rank_before_init"] = [error(dist.get_rank), error(torch.distributed.get_rank)]
    store = tempfile.mktemp()
    torch.distributed.init_process_group(
        "gloo", init_method=f"file://{store}", rank=0, world_size=1
    )
    dist.init_process_group()
    out["world"] = [
        dist.get_rank(),
        dist.get_world_size(),
        len(lg.distributed.device_mesh.platform_devices("cpu")),
    ]
    out["init_twice"] = [
        error(dist.init_process_group),
        error(lambda: torch.distributed.init_process_group("gloo", rank=0, world_size=1)),
    ]
    from torch.distributed.device_mesh import init_device_mesh as t_init_device_mesh
    from torch.distributed.tensor import Replicate as TR
    from torch.distributed.tensor import Shard as TS
    from torch.distributed.tensor import distribute_tensor as t_distribute

    t_mesh = t_init_device_mesh("cpu", (1,), mesh_dim_names=("dp",))
    out["mesh1_repr"] = [repr(init_device_mesh("cpu", (1,), mesh_dim_names=("dp",))), repr(t_mesh)]
    out["placement_reprs"] = [
        [repr(Shard(0)), str(Shard(1)), repr(Replicate()), str(Replicate()), Shard(0) == Shard(0)],
        [repr(TS(0)), str(TS(1)), repr(TR()), str(TR()), TS(0) == TS(0)],
    ]
    out["mixed"] = [
        error(
            lambda: (
                distribute_tensor(lg.ones(8, 2), init_device_mesh("cpu", (4,)), [Shard(0)])
                + lg.ones(8, 2)
            )
        ),
        error(lambda: t_distribute(torch.ones(8, 2), t_mesh, [TS(0)]) + torch.ones(8, 2)),
    ]
    out["errors"] = [
        [
            error(
                lambda: distribute_tensor(
                    lg.ones(4), init_device_mesh("cpu", (1,)), [Shard(0), Shard(0)]
                )
            ),
            error(
                lambda: distribute_tensor(
                    lg.ones(4, requires_grad=True) * 2, init_device_mesh("cpu", (1,))
                )
            ),
            error(
                lambda: distribute_tensor(
                    lg.ones(4), init_device_mesh("cpu", (1,)), [Replicate()]
                ).redistribute()
            ),
        ],
        [
            error(lambda: t_distribute(torch.ones(4), t_mesh, [TS(0), TS(0)])),
            error(lambda: t_distribute(torch.ones(4, requires_grad=True) * 2, t_mesh)),
            error(lambda: t_distribute(torch.ones(4), t_mesh, [TR()]).redistribute()),
        ],
    ]

    mesh = init_device_mesh("cpu", (8,), mesh_dim_names=("dp",))
    mesh2 = init_device_mesh("cpu", (2, 4), mesh_dim_names=("dp", "tp"))
    out["mesh_reprs"] = [repr(mesh), repr(mesh2), repr(mesh2["tp"]), mesh2.shape, mesh2.size()]

    # sharded leaves: values, gradients and their layouts against PyTorch on one device
    rng = np.random.default_rng(0)
    xv, wv, bv = rng.normal(size=(16, 8)), rng.normal(size=(8, 4)), rng.normal(size=(4,))

    def program(m, x, w, b):
        return ((x @ w + b).tanh() * x.sum(1, keepdim=True)).mean()

    tx, tw, tb = (torch.tensor(v, requires_grad=True) for v in (xv, wv, bv))
    t_loss = program(torch, tx, tw, tb)
    t_loss.backward()
    for name, m, places in (
        ("dp", mesh, ([Shard(0)], [Replicate()], [Replicate()])),
        ("tp", mesh2, ([Shard(0), Replicate()], [Replicate(), Shard(1)], [Replicate(), Shard(0)])),
        (
            "both",
            mesh2,
            ([Shard(0), Shard(1)], [Shard(1), Replicate()], [Replicate(), Replicate()]),
        ),
    ):
        leaves = [
            distribute_tensor(lg.tensor(v, requires_grad=True), m, p)
            for v, p in zip((xv, wv, bv), places)
        ]
        loss = program(lg, *leaves)
        loss.backward()
        out[f"sharded_{name}"] = {
            "loss": [loss.item(), t_loss.item()],
            "grads": [
                [host(g.grad), t.grad.numpy().tolist()] for g, t in zip(leaves, (tx, tw, tb))
            ],
            "leaf": [[g.is_leaf, g.requires_grad, isinstance(g, DTensor)] for g in leaves],
            "placements": [
                [repr(g.placements), repr(g.grad.placements), repr(tuple(p))]
                for g, p in zip(leaves, places)
            ],
            "grad_fn": [loss.grad_fn.name(), t_loss.grad_fn.name()],
            "devices": len(leaves[0]._data.sharding.device_set),
        }

    # redistribute and full_tensor: recorded, differentiable, gradient laid out like the input
    x = distribute_tensor(lg.tensor(xv, requires_grad=True), mesh2, [Shard(0), Shard(1)])
    r = x.redistribute(mesh2, [Replicate(), Shard(0)])
    f = r.full_tensor()
    (f * f).sum().backward()
    out["redistribute"] = {
        "names": [
            type(r.grad_fn).__name__,
            type(f.grad_fn).__name__,
            type(f.grad_fn.next_functions[0][0]).__name__,
        ],
        "placements": [repr(r.placements), repr(x.grad.placements)],
        "full": [isinstance(f, DTensor), hasattr(f, "placements"), isinstance(r, DTensor)],
        "values": [host(f), xv.tolist()],
        "grad": [host(x.grad), (2 * xv).tolist()],
    }
    plain = lg.ones(2)
    out["plain"] = [
        hasattr(plain, "placements"),
        isinstance(plain, DTensor),
        error(lambda: plain.placements),
    ]

    # collectives: leafgrad on the mesh against 8 simulated ranks holding the local shards
    def sharded(values, placements, m=mesh):
        return distribute_tensor(lg.tensor(values), m, placements)

    v = rng.normal(size=(8, 3))
    res = {}
    t = sharded(v, [Shard(0)])
    version = t._version
    dist.all_reduce(t)
    res["sum_shard"] = [host(t), np.tile(v.sum(0), (8, 1)).tolist(), t._version - version]
    t = sharded(v, [Replicate()])
    dist.all_reduce(t, op=dist.ReduceOp.AVG)
    res["avg_replicate"] = [host(t), v.tolist()]
    t = sharded(v, [Replicate()])
    dist.all_reduce(t)
    res["sum_replicate"] = [host(t), (8 * v).tolist()]
    t = sharded(v, [Shard(0)])
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    res["max_shard"] = [host(t), np.tile(v.max(0), (8, 1)).tolist()]
    t = sharded(v, [Shard(0)])
    dist.broadcast(t, src=5)
    res["broadcast"] = [host(t), np.tile(v[5], (8, 1)).tolist()]
    t = sharded(v, [Shard(0)])
    gathered = [lg.zeros(1, 3, dtype=lg.float64) for _ in range(8)]
    dist.all_gather(gathered, t)
    res["all_gather"] = [[host(g) for g in gathered], [v[i : i + 1].tolist() for i in range(8)]]
    inputs = [sharded(v + i, [Shard(0)]) for i in range(8)]
    output = sharded(np.zeros((8, 3)), [Shard(0)])
    dist.reduce_scatter(output, inputs)
    # rank i receives the sum over ranks r of rank r's local part of inputs[i]
    expected = np.stack([(v + i).sum(0) for i in range(8)])
    res["reduce_scatter"] = [host(output), expected.tolist()]
    # a 2-d mesh: the group of one mesh dimension reduces along it only
    v2 = rng.normal(size=(2, 4))
    t = sharded(v2, [Shard(0), Shard(1)], mesh2)
    dist.all_reduce(t, group=mesh2.get_group("tp"))
    res["group_tp"] = [host(t), np.repeat(v2.sum(1, keepdims=True), 4, 1).tolist()]
    # an ordinary tensor on one process: every collective is the identity
    t = lg.tensor([1.0, 2.0])
    dist.all_reduce(t)
    one = [lg.zeros(2)]
    dist.all_gather(one, t)
    res["world_of_one"] = [host(t), host(one[0])]
    res["bad_argument"] = [
        error(lambda: dist.all_reduce([1.0])),
        error(lambda: torch.distributed.all_reduce([1.0])),
    ]
    out["collectives"] = res

    # data-parallel training: DDP over 8 devices (eager and compiled) against PyTorch on one
    torch.manual_seed(1)
    X = rng.normal(size=(64, 10)).astype(np.float32)
    Y = rng.integers(0, 4, size=64)

    def train(m, wrap, compiled=False):
        m.manual_seed(0)
        net = m.nn.Sequential(m.nn.Linear(10, 32), m.nn.ReLU(), m.nn.Linear(32, 4))
        model = wrap(net)
        opt = m.optim.SGD(net.parameters(), lr=0.2, momentum=0.9)

        def step(x, y):
            opt.zero_grad()
            loss = m.nn.functional.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            return loss

        if compiled:
            step = lg.compile(step)
        losses = []
        for i in range(6):
            x, y = m.tensor(X[8 * i : 8 * i + 32]), m.tensor(Y[8 * i : 8 * i + 32])
            if wrap is not _identity:
                x, y = model.distribute(x), model.distribute(y)
            losses.append(step(x, y).item())
        return losses, net

    ddp = lambda net: DistributedDataParallel(net, device_mesh=mesh)  # noqa: E731
    t_losses, _ = train(torch, _identity)
    eager, net = train(lg, ddp)
    compiled, cnet = train(lg, ddp, compiled=True)
    out["ddp"] = {
        "losses": [eager, compiled, t_losses],
        "param": [repr(net[0].weight.placements), repr(net[0].weight.grad.placements)],
        "compiled_param": [
            repr(cnet[0].weight.placements),
            len(cnet[0].weight._data.sharding.device_set),
        ],
    }
    out["namespaces"] = [
        hasattr(lg.distributed.tensor, "DTensor"),
        lg.distributed.device_mesh.init_device_mesh is init_device_mesh,
    ]
    return out


def _identity(net):
    return net


# --- the tests ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def results() -> dict:
    env = dict(os.environ)
    env["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
    env["PYTHONPATH"] = ROOT
    proc = subprocess.run(
        [sys.executable, os.path.abspath(__file__)],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_process_group_needs_init_and_refuses_a_second_one(results):
    before, before_torch = results["rank_before_init"]
    assert before == before_torch
    assert results["init_twice"][0] == results["init_twice"][1]


def test_one_host_is_a_world_of_one_with_eight_devices(results):
    assert results["world"] == [0, 1, 8]


def test_placements_and_meshes_print_as_in_pytorch(results):
    ours, theirs = results["placement_reprs"]
    assert ours == theirs
    assert results["mesh1_repr"][0] == results["mesh1_repr"][1]
    assert results["mesh_reprs"] == [
        "DeviceMesh((dp=8), 'cpu', stride=(1,))",
        "DeviceMesh((dp=2, tp=4), 'cpu', stride=(4, 1))",
        "DeviceMesh((tp=4), 'cpu', stride=(1,))",
        [2, 4],
        8,
    ]


def test_mixing_sharded_and_plain_tensors_raises_pytorchs_error(results):
    ours, theirs = results["mixed"]
    assert ours == theirs and ours[0] == "RuntimeError"


def test_distribute_errors_match_pytorch(results):
    ours, theirs = results["errors"]
    assert ours == theirs


@pytest.mark.parametrize("layout", ["dp", "tp", "both"])
def test_sharded_results_and_gradients_equal_single_device(results, layout):
    r = results[f"sharded_{layout}"]
    np.testing.assert_allclose(*r["loss"], rtol=1e-12)
    for ours, theirs in r["grads"]:
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)
    assert r["grad_fn"][0] == r["grad_fn"][1]
    assert r["devices"] == 8


@pytest.mark.parametrize("layout", ["dp", "tp", "both"])
def test_sharded_leaf_keeps_leaf_rules_and_grad_is_laid_out_like_it(results, layout):
    r = results[f"sharded_{layout}"]
    assert r["leaf"] == [[True, True, True]] * 3
    for leaf, grad, asked in r["placements"]:
        assert leaf == grad == asked


def test_redistribute_and_full_tensor_are_differentiable(results):
    r = results["redistribute"]
    assert r["names"] == ["RedistributeBackward", "_ToTorchTensorBackward", "RedistributeBackward"]
    assert r["placements"] == ["(Replicate(), Shard(dim=0))", "(Shard(dim=0), Shard(dim=1))"]
    assert r["full"] == [False, False, True]
    np.testing.assert_array_equal(*r["values"])
    np.testing.assert_allclose(*r["grad"])


def test_plain_tensors_have_no_placements(results):
    assert results["plain"][:2] == [False, False]
    assert results["plain"][2] == [
        "AttributeError",
        "'Tensor' object has no attribute 'placements'",
    ]


@pytest.mark.parametrize(
    "case",
    [
        "sum_shard",
        "avg_replicate",
        "sum_replicate",
        "max_shard",
        "broadcast",
        "all_gather",
        "reduce_scatter",
        "group_tp",
        "world_of_one",
    ],
)
def test_collectives_act_on_each_device_shard_as_a_rank(results, case):
    ours, expected, *extra = results["collectives"][case]
    np.testing.assert_allclose(ours, expected, rtol=1e-12)
    if extra:
        assert extra == [1]  # written in place: one version bump


def test_collective_argument_error_matches_pytorch(results):
    ours, theirs = results["collectives"]["bad_argument"]
    assert ours == theirs


def test_data_parallel_training_follows_the_single_device_loss_curve(results):
    eager, compiled, reference = results["ddp"]["losses"]
    np.testing.assert_allclose(eager, reference, rtol=2e-5)
    np.testing.assert_allclose(compiled, reference, rtol=2e-5)
    assert reference[-1] < reference[0]


def test_data_parallel_parameters_and_grads_stay_replicated(results):
    assert results["ddp"]["param"] == ["(Replicate(),)", "(Replicate(),)"]
    assert results["ddp"]["compiled_param"] == ["(Replicate(),)", 8]


def test_both_import_paths(results):
    assert results["namespaces"] == [True, True]


if __name__ == "__main__":
    print(json.dumps(_worker()))
