"""Note [Code mappings]: keeping compiled code under the kernel's limit on memory mappings.

XLA's CPU backend maps the machine code of every executable it compiles into sections of their
own, and JAX keeps thousands of executables alive in its caches (4096 entries each). Linux caps
the mappings of a process at ``vm.max_map_count`` (65530 by default); past it LLVM fails to map
the next kernel ("LLVM compilation error: Cannot allocate memory") and the process dies with a
segmentation fault. Eager code that meets many new shapes compiles a program for each (a test
suite, a notebook trying ops out, a loop over sequence lengths): a ``kthvalue`` (its selection
loops, Note [Quickselect]) takes about 150 mappings a shape, so about 430 shapes were enough.

JAX reports each compilation to its monitoring listeners; every ``_EVERY`` compilations this
module counts the process's mappings, and past half the limit it asks for ``jax.clear_caches()``,
which drops the cached executables (their mappings go with them; what is needed again is
compiled again). The clearing waits for a safe point: leafgrad calls ``relieve()`` where it is
about to make a new dispatch plan or backward, outside any JAX call (clearing JAX's caches from
inside its own compilation, where the listener runs, is not safe).
"""

from __future__ import annotations

import jax
from jax import monitoring

_MAPS = "/proc/self/maps"
_EVERY = 32
_state = {"compiles": 0, "pending": False, "limit": None}


def _limit() -> int:
    try:
        with open("/proc/sys/vm/max_map_count") as f:
            return int(f.read())
    except (OSError, ValueError):
        return 65530


def mappings() -> int:
    """The number of memory mappings of this process (Linux), or 0 where it cannot be read."""
    try:
        with open(_MAPS, "rb") as f:
            return f.read().count(b"\n")
    except OSError:
        return 0


def _listener(event: str, duration: float, **kwargs) -> None:
    if event != "/jax/core/compile/backend_compile_duration":
        return
    _state["compiles"] += 1
    if _state["compiles"] % _EVERY:
        return
    if _state["limit"] is None:
        _state["limit"] = _limit()
    if mappings() > _state["limit"] // 2:
        _state["pending"] = True


def relieve() -> None:
    """Clear JAX's compiled executables if the mappings passed half the limit (a safe point)."""
    if _state["pending"]:
        _state["pending"] = False
        jax.clear_caches()


def install() -> None:
    try:
        open(_MAPS).close()
    except OSError:  # not Linux: no such limit to watch
        return
    monitoring.register_event_duration_secs_listener(_listener)
