"""leafgrad: PyTorch's autograd, rule for rule, over JAX arrays.

Use it as ``import leafgrad as torch``. JAX's 64-bit mode is switched on at import, because
PyTorch's default integer type is int64 and float64 tensors must stay float64.
"""

from __future__ import annotations

import builtins
import sys

import jax as _jax

_jax.config.update("jax_enable_x64", True)

from . import _code_memory, _random  # noqa: E402
from . import autograd, cuda  # noqa: E402
from ._device import device  # noqa: E402
from ._dtype import (  # noqa: E402
    bfloat16,
    complex64,
    complex128,
    dtype,
    float16,
    float32,
    float64,
    get_default_dtype,
    int8,
    int16,
    int32,
    int64,
    result_type,
    set_default_dtype,
    uint8,
)
from ._dtype import bool_ as bool  # noqa: E402, A001
from ._dtype import public_can_cast as can_cast  # noqa: E402
from ._dtype import public_promote_types as promote_types  # noqa: E402
from ._factories import (  # noqa: E402
    arange,
    as_tensor,
    empty,
    empty_like,
    eye,
    from_numpy,
    full,
    full_like,
    is_complex,
    is_floating_point,
    is_tensor,
    linspace,
    manual_seed,
    numel,
    ones,
    ones_like,
    rand,
    rand_like,
    randint,
    randint_like,
    randn,
    randn_like,
    randperm,
    tensor,
    zeros,
    zeros_like,
)
from ._errors import is_warn_always_enabled, set_warn_always  # noqa: E402
from ._random import Generator, default_generator  # noqa: E402
from ._tensor import (  # noqa: E402
    Size,
    Tensor,
    channels_last,
    channels_last_3d,
    contiguous_format,
    jagged,
    layout,
    memory_format,
    preserve_format,
    sparse_bsc,
    sparse_bsr,
    sparse_coo,
    sparse_csc,
    sparse_csr,
    strided,
)
from ._tensor_str import get_printoptions, printoptions, set_printoptions  # noqa: E402
from .autograd import (  # noqa: E402
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from .ops.functions import *  # noqa: E402, F403
from .ops.functions import __all__ as _op_functions  # noqa: E402
from .ops import elementwise, reductions, shape, linalg_ops  # noqa: E402, F401
from . import linalg, nn, optim  # noqa: E402
from .nn.utils.weight_norm import _weight_norm, norm_except_dim  # noqa: E402
from .nn._ctc_loss import torch_ctc_loss as ctc_loss  # noqa: E402
from ._aten_functions import *  # noqa: E402, F403
from ._aten_functions import __all__ as _aten_functions  # noqa: E402
from .ops.copy_variants import *  # noqa: E402, F403
from .ops.copy_variants import __all__ as _copy_variants  # noqa: E402
from ._lowrank import pca_lowrank, svd_lowrank  # noqa: E402
from . import distributed  # noqa: E402
from .ops import inplace as _inplace  # noqa: E402
from .serialization import load, save  # noqa: E402

_code_memory.install()  # Note [Code mappings]
from . import func  # noqa: E402
from .autograd import functional as _autograd_functional  # noqa: E402, F401
from .autograd.anomaly_mode import (  # noqa: E402
    is_anomaly_check_nan_enabled,
    is_anomaly_enabled,
    set_anomaly_enabled,
)
from .ops import index_put as _index_put  # noqa: E402, F401
from .ops import inplace_shape as _inplace_shape  # noqa: E402, F401
from .ops import scatter_ops, special_ops, vector_ops, layout_ops, search_ops  # noqa: E402, F401
from .ops import misc_ops, tensor_info, quantile_ops, lu_ops, householder_ops  # noqa: E402, F401
from .ops import python_maps  # noqa: E402, F401
from .ops import formulas_elementwise, formulas_shape, formulas_nn  # noqa: E402, F401
from .ops import formulas_reduce  # noqa: E402, F401
from .ops import formulas_strided  # noqa: E402, F401
from .ops import formulas_linalg  # noqa: E402, F401
from . import special  # noqa: E402
from . import fft  # noqa: E402
from . import _windows  # noqa: E402, F401
from . import signal  # noqa: E402, F401
from . import storage  # noqa: E402, F401
from .storage import TypedStorage, UntypedStorage  # noqa: E402, F401
from . import utils  # noqa: E402, F401
from . import accelerator, backends  # noqa: E402, F401
from . import random  # noqa: E402, F401
from . import testing  # noqa: E402, F401

_inplace.install_inplace_methods()
_inplace.install_augmented()
from .ops.api import FUNCTIONS as _FUNCTIONS  # noqa: E402

globals().update(_FUNCTIONS)
# the same functions under PyTorch's other names for them
linalg.matrix_exp = misc_ops.matrix_exp
vmap = func.vmap
nn.functional.pdist = misc_ops.pdist
nn.functional.__all__.append("pdist")
_op_functions = [*_op_functions, *_FUNCTIONS]

from ._compile import CompileError, compile  # noqa: E402, A004

float = float32  # noqa: A001
double = float64
half = float16
short = int16
int = int32  # noqa: A001
long = int64
cfloat = complex64
cdouble = complex128

__version__ = "0.1.0"

# PyTorch's constants
from math import e, inf, nan, pi  # noqa: E402

newaxis = None


def get_device(input) -> int:
    """``torch.get_device``: -1 on the CPU, else the device's index."""
    if not isinstance(input, Tensor):
        raise TypeError(
            "get_device(): argument 'input' (position 1) must be Tensor, not "
            f"{type(input).__name__}"
        )
    return input.get_device()


def is_storage(obj) -> bool:
    """leafgrad has no storage objects (a tensor's memory is a JAX array)."""
    return False


def _assert(condition, message):
    """``torch._assert``: ``assert`` that symbolic tracing can see."""
    assert condition, message


# PyTorch's symbolic-int helpers, on plain Python numbers (leafgrad has no symbolic shapes)
def sym_int(a):
    return builtins.int(a)  # (``int`` and ``float`` name dtypes here)


def sym_float(a):
    return builtins.float(a)


def _sym_numbers(a, b) -> bool:
    """PyTorch's checks of ``sym_max``/``sym_min``'s arguments; whether either is a float."""
    import numpy as np

    all_types = (np.integer, np.floating, builtins.int, builtins.float)
    for x in (a, b):
        if not isinstance(x, all_types):
            raise AssertionError(f"expected {all_types}, got {type(x)}")
    return builtins.any(isinstance(x, (np.floating, builtins.float)) for x in (a, b))


def sym_max(a, b):
    """``max`` of two numbers, a float if either is one."""
    if _sym_numbers(a, b):
        return builtins.float(builtins.max(a, b))
    return builtins.max(a, b)


def sym_min(a, b):
    """``min`` of two numbers, a float if either is one."""
    if _sym_numbers(a, b):
        return builtins.float(builtins.min(a, b))
    return builtins.min(a, b)


def sym_not(a):
    return not a


from ._removed import eig, lstsq, matrix_rank, solve, symeig  # noqa: E402
from ._legacy import CPU_TYPES as _CPU_TYPES, CUDA_TYPES as _CUDA_TYPES  # noqa: E402
from ._legacy import set_default_tensor_type  # noqa: E402

globals().update(_CPU_TYPES)
for _name, _cls in _CUDA_TYPES.items():
    setattr(cuda, _name, _cls)


def seed() -> int:
    """Seed the CPU generator non-deterministically; returns the seed."""
    return default_generator.seed()


def initial_seed() -> int:
    """The seed the CPU generator was last seeded with."""
    return default_generator.initial_seed()


def get_rng_state() -> Tensor:
    """The CPU generator's state as a uint8 tensor (PyTorch's 5056-byte layout)."""
    return default_generator.get_state()


def set_rng_state(new_state: Tensor) -> None:
    """Restore the CPU generator's state from ``get_rng_state()``."""
    default_generator.set_state(new_state)


__all__ = [
    "Tensor",
    "Size",
    "memory_format",
    "preserve_format",
    "contiguous_format",
    "channels_last",
    "channels_last_3d",
    "device",
    "dtype",
    "Generator",
    "autograd",
    "cuda",
    "tensor",
    "as_tensor",
    "from_numpy",
    "zeros",
    "ones",
    "full",
    "empty",
    "arange",
    "linspace",
    "eye",
    "zeros_like",
    "ones_like",
    "full_like",
    "empty_like",
    "rand",
    "randn",
    "randint",
    "randperm",
    "rand_like",
    "randn_like",
    "randint_like",
    "manual_seed",
    "seed",
    "initial_seed",
    "get_rng_state",
    "set_rng_state",
    "default_generator",
    "is_tensor",
    "is_floating_point",
    "is_complex",
    "numel",
    "no_grad",
    "enable_grad",
    "set_grad_enabled",
    "inference_mode",
    "is_grad_enabled",
    "is_inference_mode_enabled",
    "get_default_dtype",
    "set_default_dtype",
    "promote_types",
    "result_type",
    "can_cast",
    "set_printoptions",
    "get_printoptions",
    "printoptions",
    "set_warn_always",
    "is_warn_always_enabled",
    "set_anomaly_enabled",
    "is_anomaly_enabled",
    "is_anomaly_check_nan_enabled",
    "save",
    "load",
    "func",
    "nn",
    "optim",
    "linalg",
    "norm_except_dim",
    "ctc_loss",
    *_aten_functions,
    *_copy_variants,
    "pca_lowrank",
    "svd_lowrank",
    *_op_functions,
]

# PyTorch's parser checks of int arguments, around the frontends installed above
from . import _arg_check  # noqa: E402

_arg_check.install(sys.modules[__name__])

# Note [Factory layouts]: the factories refuse the layouts and pinning leafgrad does not have
from . import _layouts  # noqa: E402

_layouts.install(sys.modules[__name__])

# Note [Dims as written]: outermost, around every frontend that takes a dim
from . import _written_dims  # noqa: E402

_written_dims.install(sys.modules[__name__], __all__)

# Note [NumPy keyword aliases]: axis= and keepdims= wherever PyTorch's parser takes them
_arg_check.install_aliases(Tensor, sys.modules[__name__], linalg, special, fft)

# Note [Captured tensors] (func.py): under the parser's errors, which PyTorch raises first
func.guard_captured_writes(Tensor, _inplace._AUGMENTED)
func.guard_captured_functions(sys.modules[__name__], nn.functional)
func.warn_fallback_ops(sys.modules[__name__], Tensor, nn.functional)

# Note [Parser errors on the error path]: a call PyTorch's parser refuses gets its TypeError
_arg_check.install_out_params(sys.modules[__name__])  # Note [out= arguments]
_arg_check.install_parser_errors(sys.modules[__name__])
_arg_check.install_method_parser_errors(Tensor)

# Note [Python-level methods]: Tensor.norm, split, unique... are named as PyTorch's Python ones
_arg_check.name_python_methods(Tensor, sys.modules[__name__])
_arg_check.refuse_method_out(Tensor)  # PyTorch's methods take no out=

# Note [Deprecated overloads]: addcmul_(value, tensor1, tensor2) and the other old forms
_arg_check.install_deprecated_forms(Tensor, sys.modules[__name__])

# Note [Overloads bound before the call]: what no shown signature binds raises the parser's error
_arg_check.install_bound_first(Tensor, sys.modules[__name__])

# Note [Single signatures bound]: a later argument the parser refuses raises its error
_arg_check.install_single_checked(Tensor, sys.modules[__name__])

# torch.distributions: plain Python over the ops above, so it is imported last
from . import distributions  # noqa: E402

# Note [Autocast]: torch.autocast, torch.amp, torch.cpu.amp and torch.cuda.amp
from . import _autocast  # noqa: E402
from .ops import amp_ops  # noqa: E402, F401
from . import amp, cpu  # noqa: E402
from . import _cuda_amp  # noqa: E402
from .amp import autocast  # noqa: E402

for _name in _autocast.TORCH_FUNCTIONS:
    globals()[_name] = getattr(_autocast, _name)
# Note [Parser errors on the error path]: the autocast functions are PyTorch's C functions too
_arg_check.install_parser_errors(sys.modules[__name__], _autocast.TORCH_FUNCTIONS)
cuda.amp = _cuda_amp
del _name

# Note [Function names]: last, over every wrapper installed above
_arg_check.name_like_torch(sys.modules[__name__], Tensor, nn.functional, linalg, special, fft)
