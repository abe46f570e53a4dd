"""``leafgrad.random``: the default generator's functions and ``fork_rng``, restoring the CPU
generator and the cuda devices' generators (the tests' virtual cuda device) on exit."""

from __future__ import annotations

import torch
from conftest import lg


def test_module_functions_are_the_generators():
    lg.random.manual_seed(7)
    assert lg.random.initial_seed() == lg.initial_seed() == 7
    state = lg.random.get_rng_state()
    a = lg.rand(3)
    lg.random.set_rng_state(state)
    assert lg.rand(3).tolist() == a.tolist()
    assert lg.random.default_generator is lg.default_generator
    assert set(lg.random.__all__) <= {n for n in dir(torch.random)}


def test_fork_rng_restores_the_cpu_and_cuda_generators():
    lg.manual_seed(0)
    expected_cpu = lg.rand(4).tolist()
    cuda = lg.cuda.is_available()
    if cuda:
        lg.cuda.manual_seed(0)
        expected_cuda = lg.rand(4, device="cuda").tolist()
    lg.manual_seed(0)
    if cuda:
        lg.cuda.manual_seed(0)
    with lg.random.fork_rng():
        lg.rand(10)
        if cuda:
            lg.rand(10, device="cuda")
    assert lg.rand(4).tolist() == expected_cpu
    if cuda:
        assert lg.rand(4, device="cuda").tolist() == expected_cuda


def test_fork_rng_disabled_and_on_a_device_list():
    lg.manual_seed(1)
    with lg.random.fork_rng(enabled=False):
        lg.rand(2)
    after = lg.rand(2).tolist()
    lg.manual_seed(1)
    lg.rand(2)
    assert lg.rand(2).tolist() == after  # not restored
    lg.manual_seed(1)
    with lg.random.fork_rng(devices=[]):
        lg.rand(5)
    lg.manual_seed(1)
    first = lg.rand(2).tolist()
    lg.manual_seed(1)
    with lg.random.fork_rng(devices=[]):
        lg.rand(5)
    assert lg.rand(2).tolist() == first
