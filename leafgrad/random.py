"""``torch.random``: the default generator's functions under their module, and ``fork_rng``."""

from __future__ import annotations

import contextlib
import warnings

from ._random import Generator, default_generator

__all__ = [
    "Generator",
    "default_generator",
    "fork_rng",
    "get_rng_state",
    "initial_seed",
    "manual_seed",
    "seed",
    "set_rng_state",
]


def manual_seed(seed) -> Generator:
    from . import manual_seed as _manual_seed

    return _manual_seed(seed)


def seed() -> int:
    return default_generator.seed()


def initial_seed() -> int:
    return default_generator.initial_seed()


def get_rng_state():
    return default_generator.get_state()


def set_rng_state(new_state) -> None:
    default_generator.set_state(new_state)


_warned = False


@contextlib.contextmanager
def fork_rng(
    devices=None, enabled=True, _caller="fork_rng", _devices_kw="devices", device_type=None
):
    """Restore the CPU generator (and the given cuda devices' generators) on exit, as PyTorch's
    ``fork_rng`` does; by default every cuda device's, warning once when there are several."""
    global _warned
    from . import cuda

    if device_type == "meta" or not enabled:
        yield
        return
    device_type = device_type or "cuda"
    if device_type != "cuda":
        raise RuntimeError(
            f"torch has no module of `{device_type}`, you should register "
            "a module by `torch._register_device_module`."
        )
    if devices is None:
        count = cuda.device_count()
        if count > 1 and not _warned:
            name = device_type.upper()
            warnings.warn(
                f"{name} reports that you have {count} available devices, and "
                f"you have used {_caller} without explicitly specifying which devices are being "
                f"used. For safety, we initialize *every* {name} device by default, which can "
                f"be quite slow if you have a lot of {name}s. If you know that you are only"
                f" making use of a few {name} devices, set the environment variable "
                f"{name}_VISIBLE_DEVICES or the '{_devices_kw}' keyword argument of {_caller} "
                "with the set of devices you are actually using. For example, if you are using "
                "CPU only, set device.upper()_VISIBLE_DEVICES= or devices=[]; if you are using "
                f"device 0 only, set {name}_VISIBLE_DEVICES=0 or devices=[0].  To initialize all "
                f"devices and suppress this warning, set the '{_devices_kw}' keyword argument to "
                f"`range(torch.{device_type}.device_count())`.",
                stacklevel=3,
            )
            _warned = True
        devices = list(range(count))
    else:
        devices = list(devices)
    cpu_state = get_rng_state()
    device_states = [cuda.get_rng_state(d) for d in devices]
    try:
        yield
    finally:
        set_rng_state(cpu_state)
        for d, state in zip(devices, device_states):
            cuda.set_rng_state(state, d)
