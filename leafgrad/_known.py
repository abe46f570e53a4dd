"""The values of an array that a running torch.func transform traces, where they are known.

Note [Known values]: leafgrad's torch.func transforms run JAX's transforms eagerly, so their
tracers carry values: ``jax.vjp``'s and ``jax.jvp``'s their primal, ``jax.vmap``'s the whole
batch (``val``, the batch at ``batch_dim``). PyTorch's transforms run eagerly too and make the
checks that read values (an index out of range, a negative weight) inside them; leafgrad makes
them on these values. A batched array's values are every sample's, which is what a check of all
elements needs; its dims are one more per batching level (PyTorch's messages name the dim of
the physical, batched tensor). ``jax.jit``'s tracers (``leafgrad.compile``) carry none.
"""

from __future__ import annotations

import jax
import numpy as np
from jax.extend.core import concrete_or_error


def known_values(data) -> tuple[np.ndarray | None, int]:
    """``(values, batch levels)`` of ``data`` (an array, or a tracer of an eager transform), or
    ``(None, levels)`` where they are not known."""
    levels = 0
    while isinstance(data, jax.core.Tracer):
        if hasattr(data, "batch_dim") and hasattr(data, "val"):
            levels += isinstance(data.batch_dim, int)
            data = data.val
        elif hasattr(data, "primal"):
            data = data.primal
        else:
            try:
                return np.asarray(concrete_or_error(None, data)), levels
            except jax.errors.ConcretizationTypeError:
                return None, levels
    return np.asarray(data), levels


def physical_values(data) -> np.ndarray | None:
    """``known_values`` with the dims of every vmap batching ``data`` in front, the outermost
    first: the physical tensor PyTorch's batch rules run a kernel on (a LAPACK error's "Batch
    element" counts over them); None where the values are not known."""
    found = []
    while isinstance(data, jax.core.Tracer):
        if hasattr(data, "batch_dim") and hasattr(data, "val"):
            if isinstance(data.batch_dim, int):
                found.append(data.batch_dim)
            data = data.val
        elif hasattr(data, "primal"):
            data = data.primal
        else:
            try:
                data = concrete_or_error(None, data)
            except jax.errors.ConcretizationTypeError:
                return None
            break
    values = np.asarray(data)
    dims = list(range(values.ndim))
    front = [dims.pop(d) for d in reversed(found)]  # the outermost batch is a dim of the values
    return np.transpose(values, front + dims)
