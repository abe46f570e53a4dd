"""Saved tensors: ``grad_fn._saved_<name>``, ``grad_fn._raw_saved_<name>`` and the hooks of
``torch.autograd.graph`` (``saved_tensors_hooks``, ``save_on_cpu``,
``disable_saved_tensors_hooks``).

Note [Saved tensors]: a PyTorch node names what it saved for backward after its derivative
formula's arguments (``_saved_self``, ``_saved_other``, ``_saved_result``) and the non-tensor
arguments it keeps (``_saved_exponent``, ``_saved_dim``). leafgrad's node of a recorded op knows
its op (``dispatch.BACKWARD_INFO``), whose ``saves`` table names the tensors PyTorch saves for
each input's gradient, so the attributes are read from the node, not stored twice:

- An input saved as a tensor is that tensor (``x is y.grad_fn._saved_self``); an input that is a
  Python number is PyTorch's wrapped number (a 0-d int64, float64, complex128 or bool tensor);
  the original ``self`` of an in-place op is its value then, attached to its history then. A
  name the node's class saves only for a gradient that was not needed is None.
- ``_saved_result`` is a new tensor with the output's value whose ``grad_fn`` is the node.
- Once backward released the node (no ``retain_graph``), a saved tensor raises PyTorch's
  ``BACKWARD_TWICE`` error; the non-tensor arguments stay readable.
- Non-tensor arguments are those of the op's static arguments that PyTorch's node saves under
  the same name (``_SAVED_ARGUMENTS``); sizes PyTorch derives (``_saved_self_sym_sizes``) and the
  outputs of ops of several outputs are not exposed (an ``AttributeError``).

Note [Saved tensor hooks]: with ``saved_tensors_hooks(pack, unpack)`` active, every tensor a node
saves goes through ``pack`` as the op is recorded, in the order PyTorch saves them (the saved
inputs in argument order, then the outputs), and the node keeps only what ``pack`` returned;
backward (and ``_saved_<name>``) calls ``unpack`` and computes with the tensor it returns. As
in PyTorch, a hooked tensor is not version-checked. ``_raw_saved_<name>.register_hooks`` does
the same for one saved tensor after the fact. Numbers are not packed. A node keeps
``_packed``: a dict from the operand index (or ``("result", k)``) to ``(packed, unpack,
history)``. The fused backward leaves such nodes to the eager engine. leafgrad's node may keep
more than PyTorch's saves (an input of ``tanh``, whose VJP is recomputed from it): user hooks do
not see those arrays (the calls stay PyTorch's), but a pack hook with a ``_leafgrad_extra``
attribute, ``(pack_array, unpack_array)``, is given them too (keys ``("extra", j)``), so that
the non-reentrant checkpoint keeps nothing of a node (Note [Checkpoint] in utils/checkpoint.py).

Note [Packing an in-place result]: the output an in-place op saves is ``self`` after the write,
and PyTorch's pack hook gets that tensor: a hook that keeps it (``lambda t: t``) sees later
writes, as backward then does (no version check guards a hooked tensor). leafgrad computes the
op out of place and commits the result into ``self`` after ``dispatch`` recorded it, so such a
result is packed at the commit (``pack_written``), with ``self`` written and its history set.
"""

from __future__ import annotations

import math
import threading
import weakref

import jax.numpy as jnp
from jax import lax

from .. import _device as DEV
from .. import _errors as E
from . import grad_mode

__all__ = [
    "saved_tensors_hooks",
    "save_on_cpu",
    "disable_saved_tensors_hooks",
    "allow_mutation_on_saved_tensors",
    "SavedTensor",
]

UNPACK_NOT_TENSOR = (
    "Output of saved tensor unpack_hook expected to be a Tensor but got result of type {}"
)
REGISTER_FREED = (
    "Calling register_hooks on a saved tensor after it has been freed. Saved intermediate values "
    "of the graph are freed when you call .backward() or autograd.grad(). Specify "
    "retain_graph=True if you need to backward through the graph a second time or if you need to "
    "access saved variables after calling backward."
)
REGISTER_TWICE = (
    "Calling register_hooks on a saved tensor whose hooks have already been set. Hint: only one "
    "pair of hooks is allowed at a time."
)
REGISTER_NONE = "Calling register_hooks on a saved tensor with value None is forbidden"
REGISTER_ARGS = (
    "register_hooks(): incompatible function arguments. The following argument types are "
    "supported:\n    1. (self: torch._C._autograd.SavedTensor, arg0: collections.abc.Callable, "
    "arg1: collections.abc.Callable) -> None\n\nInvoked with: {}"
)

# Non-tensor arguments PyTorch's nodes save under the name leafgrad's ops give them
_SAVED_ARGUMENTS = frozenset(
    """dim dim0 dim1 dims keepdim exponent correction negative_slope approximate reduction
    ignore_index label_smoothing alpha beta lambd threshold min_val max_val eps p diagonal
    upper lower unbiased left unitriangular adjoint normalization onesided forward
    accumulate align_corners""".split()
)


# the saved arguments that are Scalars in PyTorch's schemas: read back as given (a negative int
# stays negative), where an int64 argument reads back unsigned
_SCALAR_ARGUMENTS = frozenset(
    """alpha beta exponent negative_slope lambd threshold min_val max_val p correction value
    min max lower upper delta margin""".split()
)


# Sizes, strides and element counts of inputs that PyTorch's nodes save (read from PyTorch 2.13)
_SIZES = {"self_sym_sizes": ("self",)}
_MM = ("mat2_sym_sizes", "mat2_sym_strides", "self_sym_sizes", "self_sym_strides")
# the interpolation nodes: 1-D ones save ``scales``, 2-D and 3-D ones a scale per dim
_UPSAMPLE_SCALES = {
    "1D": ("scales",),
    "2D": ("scales_h", "scales_w"),
    "3D": ("scales_d", "scales_h", "scales_w"),
}
_UPSAMPLE_LINEAR = {"1D": "Linear", "2D": "Bilinear", "3D": "Trilinear"}
_UPSAMPLE = {
    f"Upsample{mode}{nd}Backward0": names
    for nd, names in _UPSAMPLE_SCALES.items()
    for mode in ("Nearest", "NearestExact", _UPSAMPLE_LINEAR[nd])
} | {"UpsampleBicubic2DBackward0": _UPSAMPLE_SCALES["2D"]}
_SAVED_SIZES = {
    **dict.fromkeys(
        """DiagonalBackward0 ExpandBackward0 IndexBackward0 IndexSelectBackward0 MaxBackward0
        MinBackward0 RepeatBackward0 SelectBackward0 SliceBackward0 SplitBackward0 SortBackward1
        SplitWithSizesBackward0 UnsafeSplitBackward0 UnsafeSplitWithSizesBackward0
        NarrowCopyBackward0
        SqueezeBackward0 SqueezeBackward1 SqueezeBackward2 SqueezeBackward3 SqueezeBackward4
        SqueezeBackward5 ReshapeAliasBackward0 SumBackward0 SumBackward1
        TraceBackward0 ViewBackward0 SortBackward0 TopkBackward0 KthvalueBackward0
        ModeBackward0 MedianBackward1 NanmedianBackward1 UnfoldBackward0 UnsafeViewBackward0
        DiagonalBackward0_copy""".split(),
        ("self_sym_sizes",),
    ),
    **dict.fromkeys(_UPSAMPLE, ("self_sym_sizes",)),
    "MaskedScatterBackward0": ("source_sym_sizes",),
    "ConvolutionBackward0": ("bias_sym_sizes_opt",),
    "MeanBackward0": ("self_sym_numel", "self_sym_sizes"),
    "MeanBackward1": ("self_sym_numel", "self_sym_sizes"),
    "MmBackward0": _MM,
    "AddmmBackward0": ("mat1_sym_sizes", "mat1_sym_strides", "mat2_sym_sizes", "mat2_sym_strides"),
    "AddbmmBackward0": ("batch1_sym_argsize_0", "batch1_sym_argsize_1", "batch2_sym_argsize_2"),
    "Im2ColBackward0": ("self_sym_argsize_minus_2", "self_sym_argsize_minus_1"),
    "EmbeddingBackward0": ("weight_sym_argsize_0",),
}
# nodes whose ``_sym_strides`` are an input's own, kept only where its gradient is needed
_NEEDED_STRIDES = frozenset({"MmBackward0", "AddmmBackward0"})
# what PyTorch's nodes save that leafgrad's op does not keep as such, computed when read from
# what it does keep (``_COMPUTED``): node -> (name, the static argument its op must have)
# - ``indices``: the index tensors as one list, None at the dims a slice kept whole;
# - ``total_weight``: nll_loss's second output, the summed weights of the targets not ignored
#   (0 for reduction='none');
# - ``buffer``: log_sigmoid_forward's second output on the CPU, exp(-|x|)
_COMPUTED_NAMES = {
    "IndexBackward0": (("indices", "positions"),),
    "IndexPutBackward0": (("indices", "positions"),),
    "NllLossBackward0": (("total_weight", "ignore_index"),),
    "NllLoss2DBackward0": (("total_weight", "ignore_index"),),
    "LogSigmoidBackward0": (("buffer", None),),
    # the normalizations' mean and rstd outputs (``result1``, ``result2``) and sizes
    "NativeLayerNormBackward0": (
        ("normalized_shape", "ndim"),
        ("result1", "ndim"),
        ("result2", "ndim"),
    ),
    "NativeGroupNormBackward0": (
        *((n, "groups") for n in ("N", "C", "HxW", "group")),
        ("result1", "groups"),
        ("result2", "groups"),
    ),
    "NativeBatchNormBackward0": (
        ("result1", "training"),
        ("result2", "training"),
        ("training", "training"),
    ),
    # the LU factorization PyTorch's det, slogdet and solve compute on the way (getrf)
    **dict.fromkeys(
        ("LinalgDetBackward0", "LinalgSlogdetBackward0", "LinalgSolveExBackward0"),
        (("LU", None), ("pivots", None)),
    ),
    # svdvals and eigvalsh run the full decompositions: their nodes keep the vectors too
    "LinalgSvdBackward0": (("S_sym_argsize_minus_1", None), ("U", "uv"), ("Vh", "uv")),
    "LinalgEighBackward0": (("eigenvectors", "vectors"),),
}
# nodes some of whose ops lack the static argument their derived names read: the
# AsStridedBackward0 of a regenerated view (``view_chain_gather``) has no ``size``
_DERIVED_NEEDS = {"AsStridedBackward0": "size"}
# the ranks of inputs that PyTorch's nodes save: attribute name -> the input, by node
_OPERAND_RANKS = {
    "IndexAddBackward0": {"source_dim": "source"},
    "IndexCopyBackward0": {"source_dim": "source"},
}
# names leafgrad's op records that PyTorch's node saves as something else (its normalization
# nodes save the mean and rstd outputs, ``result1`` / ``result2``; ``squeeze`` saves ``dim``)
_NOT_SAVED = {
    "NativeLayerNormBackward0": {"result", "eps"},
    "NativeBatchNormBackward0": {"result"},
    "NativeGroupNormBackward0": {"result"},
    **{f"SqueezeBackward{k}": {"dims"} for k in range(6)},
    "LinalgEighBackward0": {"lower"},
    "LinalgVectorNormBackward0": {"p"},  # ``F.normalize``'s, saved as ``ord``
    "Unique2Backward0": {"dim"},
    "UniqueConsecutiveBackward0": {"dim"},
}
# inputs of leafgrad's ops that PyTorch's nodes save under another name (outputs there)
# in-place activations whose PyTorch nodes save their result where the out-of-place op's save
# its input (``F.leaky_relu(x, inplace=True)``: LeakyReluBackward1)
_RESULT_FOR_SELF = frozenset(
    "LeakyReluBackward1 EluBackward1 CeluBackward1 RreluWithNoiseBackward1".split()
)
_RENAMED = {
    "FractionalMaxPool2DBackward0": {"indices": "result1"},
    "FractionalMaxPool3DBackward0": {"indices": "result1"},
    "PowBackward2": {"base": "self"},
}
# arguments PyTorch's nodes save that leafgrad's ops keep under another name or form, by node:
# attribute name -> its value from the op's static arguments


def _flat_pad(static) -> tuple:
    return tuple(p for pair in reversed(static["pad"]) for p in pair)


def _pool_arguments(*names) -> dict:
    """The pooling nodes' window arguments, from the op's (``kernel`` is ``kernel_size``)."""
    return {n: (lambda s, k=("kernel" if n == "kernel_size" else n): s[k]) for n in names}


_WINDOW = ("kernel_size", "stride", "padding", "dilation")
_DERIVED_ARGUMENTS = {
    **dict.fromkeys(
        ("MaxPool2DWithIndicesBackward0", "MaxPool3DWithIndicesBackward0"),
        _pool_arguments(*_WINDOW, "ceil_mode"),
    ),
    **dict.fromkeys(
        ("AvgPool2DBackward0", "AvgPool3DBackward0"),
        _pool_arguments(
            "kernel_size", "stride", "padding", "ceil_mode", "count_include_pad", "divisor_override"
        ),
    ),
    **dict.fromkeys(("Im2ColBackward0", "Col2ImBackward0"), _pool_arguments(*_WINDOW)),
    "LinalgQrBackward0": {"mode": lambda s: s["mode"]},
    "LinalgSvdBackward0": {"full_matrices": lambda s: s["full_matrices"]},
    "LinalgLuFactorExBackward0": {"pivot": lambda s: s.get("pivot", True)},
    "RollBackward0": {"shifts": lambda s: s["shifts"]},
    "CtcLossBackward0": {k: (lambda s, k=k: s[k]) for k in ("blank", "zero_infinity")},
    "TriangularSolveBackward0": {"transpose": lambda s: s["transpose"]},
    **dict.fromkeys(
        ("FractionalMaxPool2DBackward0", "FractionalMaxPool3DBackward0"),
        {"kernel_size": lambda s: s["kernel"], "output_size": lambda s: s["output_size"]},
    ),
    "RepeatBackward0": {"repeats": lambda s: s["repeats"]},
    "DiagonalBackward0": {"offset": lambda s: s["offset"], "dim2": lambda s: s["dim2"]},
    "UnfoldBackward0": {k: (lambda s, k=k: s[k]) for k in ("dimension", "size", "step")},
    "PixelShuffleBackward0": {"upscale_factor": lambda s: s["r"]},
    "SplitBackward0": {"split_size": lambda s: s["sizes"][0]},
    "SplitWithSizesBackward0": {"split_sizes": lambda s: s["sizes"]},
    "UnsafeSplitBackward0": {"split_size": lambda s: s["sizes"][0]},
    "UnsafeSplitWithSizesBackward0": {"split_sizes": lambda s: s["sizes"]},
    "NarrowCopyBackward0": {
        "start": lambda s: s["start"],
        "length": lambda s: s["stop"] - s["start"],
    },
    "DiagEmbedBackward0": {"offset": lambda s: s["offset"], "dim2": lambda s: s["dim2"]},
    "SliceBackward0": {
        "start": lambda s: s["start"],
        "end": lambda s: s["stop"],
        "step": lambda s: s["step"],
    },
    # the dims as given are recorded by ``squeeze`` (Note [Arguments as written]); these read
    # what the op kept, for a node made again (a view's regenerated grad_fn)
    **dict.fromkeys(("SqueezeBackward1", "SqueezeBackward4"), {"dim": lambda s: _squeezed_dim(s)}),
    **dict.fromkeys(("SqueezeBackward2", "SqueezeBackward5"), {"dim": lambda s: s["dims"]}),
    "Rot90Backward0": {"k": lambda s: s["k"]},
    **dict.fromkeys(
        ("AsStridedBackward0", "AsStridedBackward1"),
        {k: (lambda s, k=k: s[k]) for k in ("size", "stride", "storage_offset")},
    ),
    # F.pad's flat list, last dim first, from the (lo, hi) pairs of the trailing dims
    "ConstantPadNdBackward0": {"pad": _flat_pad},
    "LogitBackward0": {"eps": lambda s: s.get("eps")},
    # ``elu`` passes its scales as the integer 1, ``selu`` its scale as a float
    **dict.fromkeys(
        ("EluBackward0", "EluBackward1"),
        {
            "scale": lambda s: _scalar(s["scale"]),
            "input_scale": lambda s: _scalar(s["input_scale"]),
        },
    ),
    "HuberLossBackward0": {"delta": lambda s: s["delta"]},
    "MultiMarginLossBackward0": {"margin": lambda s: s["margin"]},
    "ConvolutionBackward0": {
        k: (lambda s, k=k: s[k])
        for k in ("stride", "padding", "dilation", "groups", "transposed", "output_padding")
    },
    "DistBackward0": {"p": lambda s: _scalar(s["p"])},
    "RenormBackward0": {"p": lambda s: _scalar(s["p"]), "maxnorm": lambda s: _scalar(s["maxnorm"])},
    "SelectScatterBackward0": {"index": lambda s: s["index"]},
    "SliceScatterBackward0": {
        "start": lambda s: s["start"],
        "end": lambda s: s["stop"],
        "step": lambda s: s["step"],
    },
    "DiagonalScatterBackward0": {"offset": lambda s: s["offset"], "dim2": lambda s: s["dim2"]},
    "ScatterReduceBackward0": {
        "reduce": lambda s: s["reduce"],
        "include_self": lambda s: s["include_self"],
    },
    **{
        f"{kind}Pad{nd}DBackward0": {"padding": _flat_pad}
        for kind in ("Reflection", "Replication")
        for nd in (1, 2, 3)
    },
    **{
        node: {"output_size": lambda s: s["output_size"]}
        | {n: (lambda s, i=i: s["scales"][i]) for i, n in enumerate(names)}
        for node, names in _UPSAMPLE.items()
    },
    # an integral order is PyTorch's default (2) or one given as an int, as users write them
    # ``F.normalize``'s norm keeps its ``p`` as given
    "LinalgVectorNormBackward0": {"ord": lambda s: _scalar(s["ord"]) if "ord" in s else s["p"]},
    "DiagonalBackward0_copy": {
        "offset": lambda s: s["offset"],
        "dim1": lambda s: 0,
        "dim2": lambda s: 1,
    },
}


# Note [Arguments as written]: where PyTorch's node keeps an argument as the caller wrote it and
# leafgrad's op takes it normalized (``x[:, -2:]``: SliceBackward0 keeps start -2 and end
# INT64_MAX, the op slices 1:3; ``x[-1]``: SelectBackward0 keeps index -1), the frontend records
# the written values against the node here; ``_saved_<name>`` reads them first. Only nodes whose
# arguments differ are recorded, and the table forgets a node with the node.
_WRITTEN: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_INT64_MAX = (1 << 63) - 1


def keep_written(result, **values) -> None:
    """Record ``values`` (argument name -> value as written) for ``result``'s node, if any (an
    in-place write without grad mode made none: the result's node is an earlier op's)."""
    node = getattr(result, "_grad_fn", None)
    if node is not None and grad_mode._state.grad_enabled:
        _WRITTEN[node] = {**_WRITTEN.get(node, {}), **values}


class _Scalar:
    """A number kept as PyTorch keeps a Scalar argument: read back as given (a negative int
    stays negative, unlike a saved int64)."""

    __slots__ = ("value",)

    def __init__(self, value) -> None:
        self.value = value


def keep_scalars(result, **values) -> None:
    """``keep_written`` for Scalar arguments (``lerp``'s weight, ``hardtanh``'s bounds)."""
    keep_written(result, **{k: _Scalar(v) for k, v in values.items()})


def keep_given(result, read=None, **values):
    """``result``, its node keeping those of the Scalar arguments ``values`` that the op recorded
    otherwise: an int (or bool) a frontend made a float, or a float the kernel read rounded to
    its opmath type (``read``: name -> the value the op recorded)."""
    if result._grad_fn is not None:
        read = read or {}
        given = {
            k: v
            for k, v in values.items()
            # (a float read as an int by an integer kernel: an int self that requires grad)
            if type(v) is not float or (k in read and (read[k] != v or type(read[k]) is not float))
        }
        if given:
            keep_scalars(result, **given)
    return result


def _is_tensor(value) -> bool:
    return isinstance(value, _tensor_cls())


def _unsigned(value):
    """PyTorch 2.13 reads a saved negative int64 (a dim counted from the end, ``ignore_index``'s
    -100) back as unsigned."""
    if isinstance(value, int) and not isinstance(value, bool) and value < 0:
        return value % (1 << 64)
    if isinstance(value, tuple) and any(isinstance(v, int) and v < 0 for v in value):
        return tuple(_unsigned(v) for v in value)
    return value


def _squeezed_dim(static):
    if "dim" in static:  # ``squeeze_dim``, recorded with the dim as given
        return static["dim"]
    if static["dims"]:
        return static["dims"][0]
    raise RuntimeError(
        "leafgrad does not keep the dim of a squeeze that dropped no dim (its size was not 1)"
    )


def _scalar(value):
    """A saved Scalar as PyTorch shows it: an integral float as the int it was written as."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


# nodes whose ``dim`` PyTorch saves as one optional int
_ONE_DIM = {"AminmaxBackward0", "ProdBackward1"}
# the outputs PyTorch's nodes save under their own names, by node and number of outputs (the
# node's outputs PyTorch computes but leafgrad's op does not return, ``svdvals``' U, are left out)
_OUTPUT_NAMES = {
    "StdMeanBackward0": {2: {"result0": 0}},
    "CtcLossBackward0": {1: {"result0": 0}},
    "TriangularSolveBackward0": {2: {"solution": 0}},
    "AminmaxBackward0": {2: {"min": 0, "max": 1}},
    "LinalgSlogdetBackward0": {2: {"sign": 0}},
    "FrexpBackward0": {2: {"exponent": 1}},
    "LinalgInvExBackward0": {1: {"inverse": 0}, 2: {"inverse": 0}},
    "LinalgCholeskyExBackward0": {1: {"L": 0}, 2: {"L": 0}},
    "LinalgQrBackward0": {2: {"Q": 0, "R": 1}},
    "LinalgEighBackward0": {1: {"eigenvalues": 0}, 2: {"eigenvalues": 0, "eigenvectors": 1}},
    "LinalgEigBackward0": {2: {"eigenvalues": 0, "eigenvectors": 1}},
    "LinalgSvdBackward0": {1: {"S": 0}, 3: {"U": 0, "S": 1, "Vh": 2}},
    "LinalgLuFactorExBackward0": {3: {"LU": 0, "pivots": 1}},
    **dict.fromkeys(
        """MaxPool2DWithIndicesBackward0 MaxPool3DWithIndicesBackward0 AdaptiveMaxPool2DBackward0
        AdaptiveMaxPool3DBackward0""".split(),
        {2: {"result1": 1}},
    ),
}
_REDUCTIONS = {"none": 0, "mean": 1, "sum": 2}
# PyTorch's saved scalars that leafgrad's ops record only when given (their defaults otherwise)
_ALPHA = {"alpha": 1}
_ALPHA_BETA = {"alpha": 1, "beta": 1}
_DEFAULT_ARGUMENTS = {
    "AddBackward0": _ALPHA,
    "SubBackward0": _ALPHA,
    "RsubBackward1": _ALPHA,
    "LinalgLuSolveBackward0": {"left": True, "adjoint": False},
    "CholeskyInverseBackward0": {"upper": False},
    "CholeskySolveBackward0": {"upper": False},
    "GatherBackward0": {"sparse_grad": False},
    **dict.fromkeys(
        "AddmmBackward0 AddmvBackward0 BaddbmmBackward0 AddbmmBackward0 AddrBackward0".split(),
        _ALPHA_BETA,
    ),
}
# operands PyTorch's nodes save as numbers (``clamp``'s bounds, ``select``'s index), by node
_NUMBER_OPERANDS = {
    "min": {"ClampBackward1", "ClampMinBackward0"},
    "max": {"ClampBackward1", "ClampMaxBackward0"},
    "index": {"SelectBackward0"},
    "value": {"AddcmulBackward0", "AddcdivBackward0"},
    "other": {"MulBackward1", "DivBackward1", "XlogyBackward2", "SpecialXlog1PyBackward2"},
    "self": {"XlogyBackward1", "SpecialXlog1PyBackward1", "SpecialZetaBackward1"},
    "weight": {"LerpBackward0"},
    "base": {"PowBackward2"},
}  # PyTorch saves the enum's value


# numbers that leafgrad's variant of an op takes as a static argument where the table's op takes
# an operand (``F.normalize``'s clamp_min(eps)), saved under the same name by node
_STATIC_NUMBERS = {
    "ClampMinBackward0": ("min",),
    "PolygammaBackward0": ("n",),
    "PolygammaBackward1": ("n",),
}


class _State(threading.local):
    def __init__(self) -> None:
        self.stack: list = []  # (pack, unpack) pairs, innermost last
        self.disabled: str | None = None
        # in-place results to pack at their commit (Note [Packing an in-place result])
        self.written: list = []
        # the op being recorded saves its result and these inputs only (``result_only``)
        self.result_only = None


_state = _State()
ACTIVE = [0]  # hook contexts entered in any thread: dispatch looks no further while 0


def current():
    """The innermost ``(pack, unpack)`` of this thread, or None."""
    if not ACTIVE[0]:
        return None
    stack = _state.stack
    return stack[-1] if stack else None


class saved_tensors_hooks:
    """Context manager: every tensor saved for backward inside goes through ``pack_hook`` when
    saved and ``unpack_hook`` when backward reads it (Note [Saved tensor hooks])."""

    def __init__(self, pack_hook, unpack_hook) -> None:
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        if _state.disabled is not None:
            raise RuntimeError(_state.disabled)
        _state.stack.append((self.pack_hook, self.unpack_hook))
        ACTIVE[0] += 1
        return self

    def __exit__(self, *exc) -> None:
        _state.stack.pop()
        ACTIVE[0] -= 1


class save_on_cpu(saved_tensors_hooks):
    """Saved tensors are kept on the CPU and moved back to their device when backward reads
    them. ``pin_memory`` and ``device_type`` are accepted for PyTorch's signature; JAX has no
    pinned host memory to ask for."""

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda") -> None:
        def pack(t):
            return t.device, t.cpu()

        def unpack(packed):
            device, t = packed
            return t.to(device)

        super().__init__(pack, unpack)


class _AllowMutationOnSavedContext:
    """What ``allow_mutation_on_saved_tensors`` keeps: each saved tensor as it was packed
    (``original``: handle -> (tensor, its array then)); cleared on exit."""

    def __init__(self) -> None:
        self.original: dict = {}

    def clear(self) -> None:
        self.original.clear()


class _Handle:
    __slots__ = ("__weakref__",)


_MUTATION_CONTEXT = [False]
_OUTSIDE_MUTATION_CONTEXT = (
    "Trying to backward outside of the 'allow_mutation_on_saved_tensors' context"
    "in which the graph was originally recorded."
)


class _keep_originals(saved_tensors_hooks):
    """The saved tensor hooks of ``allow_mutation_on_saved_tensors``: a tensor written in place
    since it was saved unpacks as its values then. PyTorch clones it before the write; a JAX
    array is never written, so leafgrad keeps the array the tensor had (no copy)."""

    def __init__(self, ctx: _AllowMutationOnSavedContext) -> None:
        def pack(t):
            handle = _Handle()
            ctx.original[handle] = (t, t._data)
            return handle

        def unpack(handle):
            if not _MUTATION_CONTEXT[0] or handle not in ctx.original:
                raise AssertionError(_OUTSIDE_MUTATION_CONTEXT)
            t, data = ctx.original[handle]
            if t._data is data:  # any write, through ``.data`` too, gives it a new array
                return t
            from .._tensor import Tensor

            return Tensor._make(data, t._dtype, t._device)

        super().__init__(pack, unpack)


class allow_mutation_on_saved_tensors:
    """Context manager: tensors saved for backward inside may be written in place; backward
    (run inside too) reads them as they were saved. Not nestable."""

    def __enter__(self) -> _AllowMutationOnSavedContext:
        self._ctx = _AllowMutationOnSavedContext()
        self._hooks = _keep_originals(self._ctx)
        self._hooks.__enter__()
        if _MUTATION_CONTEXT[0]:
            self._hooks.__exit__(None, None, None)
            raise RuntimeError("allow_mutation_on_saved_tensors contexts cannot be nested")
        _MUTATION_CONTEXT[0] = True
        return self._ctx

    def __exit__(self, *exc) -> None:
        self._ctx.clear()
        _MUTATION_CONTEXT[0] = False
        self._hooks.__exit__(*exc)


class disable_saved_tensors_hooks:
    """Context manager: entering ``saved_tensors_hooks`` inside raises ``error_message``."""

    def __init__(self, error_message: str) -> None:
        self.error_message = error_message

    def __enter__(self):
        self._before = _state.disabled
        _state.disabled = self.error_message
        return self

    def __exit__(self, *exc) -> None:
        _state.disabled = self._before


def _tensor_cls():
    from .._tensor import Tensor

    return Tensor


def unpacked(packed, unpack):
    """``unpack(packed)``, which must be a Tensor."""
    t = unpack(packed)
    if not isinstance(t, _tensor_cls()):
        raise TypeError(UNPACK_NOT_TENSOR.format(type(t).__name__))
    return t


# --- packing as an op is recorded ----------------------------------------------------------


def pack_op(node, saved, saves_result, operands, result, hooks) -> None:
    """Note [Saved tensor hooks] for a node ``dispatch`` just recorded: ``saved`` are the indices
    of the inputs PyTorch saves, ``saves_result`` whether it saves outputs."""
    from ..ops.inplace import IN_PLACE

    pack, unpack = hooks
    result_only = _state.result_only
    if result_only is not None:
        keep, first = result_only
        saved, saves_result = tuple(j for j in saved if j in keep), True
    # the outputs PyTorch's forward saves that leafgrad's node makes from its input (Note
    # [Packed computed outputs]): made now, from the input as the op read it, packed last
    computed = [
        (name, _COMPUTED[name](node, _info(node)))
        for name, where in saved_names(node).items()
        if where == ("computed", name) and name in _PACKED_COMPUTED
    ]
    packed = {}
    kept = list(node._operands) if node._operands else None
    primals = list(node._primals) if node._primals is not None else None
    for j in _save_order(node, saved):
        t = operands[j]
        check = _inner_check(node, j)
        if check is not None:  # PyTorch saved the view the op makes inside
            t = _inner_view(node, j, t, check)
        history = _history(t)
        if j == 0 and IN_PLACE[0]:
            t = _alias(t, history)  # PyTorch packs a copy of the original self
        shape = None
        if primals is not None and j < len(primals) and not _is_number(primals[j]):
            shape = _kept_shape(primals[j], operands[j])
            primals[j] = None
        packed[j] = (pack(t), unpack, history, shape)
        if kept is not None:
            kept[j] = None
    if result_only is not None:
        for k, t in enumerate(first):  # PyTorch saves them before the result
            packed[("computed", f"first{k}")] = (pack(t), unpack, None)
    if saves_result:
        outs = result if isinstance(result, tuple) else (result,)
        if saves_result == "indices":
            picks = [(1, outs[1])]
        else:
            picks = [(k, r) for k, r in enumerate(outs) if r._grad_fn is node]
            if saves_result == "result0":
                picks = picks[:1] if picks and picks[0][0] == 0 else []
        for k, r in picks:
            if IN_PLACE[0]:  # Note [Packing an in-place result]
                _state.written.append((packed, ("result", k), pack, unpack, r))
                packed[("result", k)] = None
                continue
            packed[("result", k)] = (pack(r), unpack, None)
        if node._backward in _from_result():
            primals = [None]
    for name, t in computed:
        history = (node, t._output_nr) if t._grad_fn is node else None
        packed[("computed", name)] = (pack(t), unpack, history)
    extra = getattr(pack, "_leafgrad_extra", None)
    if extra is not None and primals is not None:
        # the arrays leafgrad's node keeps beyond PyTorch's saved tensors (Note [Saved tensor
        # hooks]): a hook that declares ``_leafgrad_extra`` keeps those too
        pack_extra, unpack_extra = extra
        for j, p in enumerate(primals):
            if p is not None and not _is_number(p):
                packed[("extra", j)] = (pack_extra(p), unpack_extra, None)
                primals[j] = None
    if not packed:
        return
    node._packed = packed
    if kept is not None:
        node._operands = tuple(kept)
    if primals is not None:
        node._primals = tuple(primals)
    _drop_checks(node, packed)
    if result_only is not None and node._saved_checks:  # inputs PyTorch's node does not save
        checks = [c for c in node._saved_checks if c.tensor is None or c.operand in keep]
        node._saved_checks = tuple(checks) or None


class result_only:
    """Context manager: the op recorded inside saves its result, not its input (an in-place
    activation's ``Backward1`` node, which leafgrad records from the out-of-place op): with saved
    tensor hooks active, the result is packed as ``self`` (Note [Packing an in-place result]),
    with the operands of indices ``keep`` and, before it, the tensors ``first`` (saved by
    PyTorch's node, not given to leafgrad's op)."""

    def __init__(self, keep=(), first=()) -> None:
        self.facts = (tuple(keep), tuple(first))

    def __enter__(self):
        _state.result_only = self.facts

    def __exit__(self, *exc) -> None:
        _state.result_only = None


def pending_written() -> int:
    """How many in-place results wait to be packed (a mark for ``pack_written``)."""
    return len(_state.written)


def pack_written(mark: int, out, self) -> None:
    """Pack the in-place results recorded since ``mark`` (Note [Packing an in-place result]):
    ``out``, the result an in-place op committed, as ``self`` (None: the op did not commit)."""
    pending = _state.written[mark:]
    del _state.written[mark:]
    for packed, key, pack, unpack, r in pending:
        packed[key] = (pack(self if r is out and self is not None else r), unpack, None)


def _kept_shape(primal, operand) -> tuple | None:
    """The shape of a packed input as its node kept it (its primal's; an input the op views
    inside keeps its base's): the sizes PyTorch's node keeps as numbers stay readable, and a
    released node tells a packed input from one that was not given (``released_marker``)."""
    shape = getattr(primal, "shape", None)
    if shape is None and operand is not None and hasattr(operand, "_data"):
        shape = operand._data.shape
    return None if shape is None else tuple(shape)


def _save_order(node, saved) -> list:
    """PyTorch saves a node's inputs in the order of their names in its derivative formulas
    (``div`` saves ``other``, then ``self``; ``addmm`` ``mat1``, then ``mat2``)."""
    info = _info(node)
    if info is None:
        return list(saved)
    names = info[0].operands
    return sorted(saved, key=lambda j: names[j])


def _inner_check(node, j: int):
    """The check of operand ``j`` where the op viewed it inside, else None."""
    for c in node._saved_checks or ():
        if c.operand == j and getattr(c, "view_shape", None) is not None:
            return c
    return None


def _history(t):
    """Where a saved input's gradient goes: ``(grad_fn, output_nr)``, ``(AccumulateGrad, 0)``,
    or None; an unpacked tensor takes it (PyTorch's ``SavedVariable::unpack``)."""
    from ..ops.dispatch import _edge

    fn, nr = _edge(t)
    return None if fn is None else (fn, nr)


def _alias(t, history):
    """A new tensor with ``t``'s value and the given history."""
    from .graph import AccumulateGrad

    Tensor = _tensor_cls()
    out = Tensor._make(t._data, t._dtype, t._device)
    if history is not None:
        fn, nr = history
        out._requires_grad = True
        if isinstance(fn, AccumulateGrad):
            out._accumulator = weakref.ref(fn)
        else:
            out._grad_fn, out._output_nr = fn, nr
    return out


def _unpacked_entry(node, key, entry):
    """What backward reads for a packed tensor: ``unpack``'s value with the saved tensor's
    history (an output's is the node)."""
    packed, unpack, history = entry[:3]
    t = unpacked(packed, unpack)
    if isinstance(key, tuple) and key[0] == "computed":
        return t if history is None else _as_output(node, t._data, history[1])
    if isinstance(key, tuple):
        return _as_output(node, t._data, key[1])
    return _alias(t, history)


def _from_result():
    from ..ops.dispatch import _FROM_RESULT

    return _FROM_RESULT


def _is_number(x) -> bool:
    return isinstance(x, (bool, int, float, complex))


def _drop_checks(node, packed) -> None:
    """A hooked tensor is not version-checked (PyTorch keeps no tensor to check)."""
    checks = node._saved_checks
    if not checks:
        return
    kept = []
    for c in checks:
        key = c.operand if c.tensor is not None else ("result", c.output_nr)
        if key not in packed:
            kept.append(c)
    node._saved_checks = tuple(kept) or None


def unpack_node(node):
    """``(primals, operands)`` of a node with packed tensors, with what ``unpack`` returns in
    their place (the tensors as operands, their arrays as primals)."""
    primals = list(node._primals)
    operands = list(node._operands) if node._operands else [None] * len(primals)
    for key, entry in node._packed.items():
        if isinstance(key, tuple) and key[0] == "extra":
            primals[key[1]] = entry[1](entry[0])
            continue
        if isinstance(key, tuple) and key[0] == "computed":
            # unpacked as PyTorch's backward unpacks it; leafgrad's backward makes it again
            # from the input (Note [Packed computed outputs])
            _unpacked_entry(node, key, entry)
            continue
        t = _unpacked_entry(node, key, entry)
        if isinstance(key, tuple):  # an output: only a node computed from its result reads it
            if node._backward in _from_result():
                primals[0] = t._data
            continue
        info = _info(node)
        if info is not None and info[0].operands[key] in info[0].inner_views:
            t = t.t()  # the view back to the operand the op views inside (``t`` is its own inverse)
        operands[key] = t
        primals[key] = t._data
    return tuple(primals), tuple(operands)


# --- grad_fn._saved_<name> -----------------------------------------------------------------


def _info(node):
    from ..ops.dispatch import BACKWARD_INFO

    fn = getattr(node, "_backward", None)
    info = BACKWARD_INFO.get(fn)
    while info is None and hasattr(fn, "inner"):  # a wrapper (``graph.wrap_backward``)
        fn = fn.inner
        info = BACKWARD_INFO.get(fn)
    return info


def _kind(node) -> str:
    """The node's name for the tables of saved arguments: a copy variant's node
    (``SliceBackward0_copy``, ops/copy_variants.py) saves what its view's node saves
    (``diag``'s DiagonalBackward0_copy has entries of its own)."""
    name = type(node).__name__
    return name if name == "DiagonalBackward0_copy" else name.removesuffix("_copy")


def saved_names(node) -> dict:
    """``name -> where`` for the ``_saved_<name>`` attributes of a recorded op's node: an operand
    index, ``("result", k)``, or ``("static", key)``."""
    info = _info(node)
    if info is None:
        # a node made outside dispatch (a view's regenerated AsStridedBackward0) saves what
        # was recorded for it (Note [Arguments as written])
        return dict.fromkeys(_WRITTEN.get(node, ()), ("written",))
    op, static, _needs, _ = info
    names: dict = {}
    multi = node._n_out > 1
    for i in op._diff_idx:
        for n in op.saves.get(op.operands[i], ()):
            if n.startswith("indices") and n[7:].isdigit():
                continue  # one of a list PyTorch saves as a whole (``_saved_indices``)
            if n in op._operand_idx:
                names[n] = op._operand_idx[n]
            elif n == "indices" and multi:
                names[n] = ("result", 1)
            elif n == "result" and not multi:
                names[n] = ("result", 0)
    for key in static:
        if key in _SAVED_ARGUMENTS:
            names[key] = ("static", key)
    for key in _DEFAULT_ARGUMENTS.get(_kind(node), ()):
        names[key] = ("static", key)
    cls = _kind(node)
    for key in _STATIC_NUMBERS.get(cls, ()):
        if key in static:
            names[key] = ("static", key)
    for n, nodes in _NUMBER_OPERANDS.items():
        j = op._operand_idx.get(n)
        if j is not None and n not in names and cls in nodes:
            names[n] = ("number", j)
    for name in _SAVED_SIZES.get(cls, ()):
        operand, _, kind = name.partition("_sym_")
        if operand in op._operand_idx:
            names[name] = ("meta", op._operand_idx[operand], kind)
    for name, operand in _OPERAND_RANKS.get(cls, {}).items():
        if operand in op._operand_idx:
            names[name] = ("meta", op._operand_idx[operand], "dim")
    for name, needs_static in _COMPUTED_NAMES.get(cls, ()):
        if needs_static is None or needs_static in static:
            names[name] = ("computed", name)
    needs = _DERIVED_NEEDS.get(cls)
    if needs is None or needs in static:
        for name in _DERIVED_ARGUMENTS.get(cls, ()):
            names[name] = ("derived", name)
    outputs = _OUTPUT_NAMES.get(cls, {}).get(node._n_out)
    if outputs:
        names.pop("result", None)
        names.pop("indices", None)
        names.update((n, ("result", k)) for n, k in outputs.items())
    for name in _NOT_SAVED.get(cls, ()):
        names.pop(name, None)
    for name, pt_name in _RENAMED.get(cls, {}).items():
        if name in names:
            names[pt_name] = names.pop(name)
    if cls in _RESULT_FOR_SELF and names.pop("self", None) is not None:
        names["result"] = ("result", 0)
    for name, value in _WRITTEN.get(node, {}).items():  # arguments only the frontend knew
        names.setdefault(name, ("written_tensor",) if _is_tensor(value) else ("written",))
    return names


def is_tensor(where) -> bool:
    """Whether a ``saved_names`` entry is a saved tensor (an input or an output)."""
    return (
        not isinstance(where, tuple)
        or where[0] in ("result", "written_tensor")
        or where[0] == "computed"
        and where[1] not in _COMPUTED_NUMBERS
        and where[1] != "indices"
    )


def _is_saved(node, info, j: int) -> bool:
    op, _static, needs, _ = info
    users = [i for i in needs if j in op._pt_saved_idx.get(i, ())]
    if not users:
        return False
    if not _guarded(op, j):
        return True
    # a guarded save: only for an input with an edge. An input without one (a leaf view that
    # requires grad only through its base, Note [Views that inherit requires_grad]) is not
    # computed by PyTorch's node, so what only its formula reads is not saved
    edge_of = {i: k for k, i in enumerate(node._edge_idx or ())}
    edges = node._next_functions
    return any(
        i not in edge_of or edge_of[i] >= len(edges) or edges[edge_of[i]][0] is not None
        for i in users
    )


def _guarded(op, j: int) -> bool:
    """Whether PyTorch's generated code saves operand ``j`` only when one input's gradient is
    computed (its ``guard_for``: the op has several differentiable inputs and only one of
    their formulas reads ``j``); other saves are made whenever the node is."""
    saved = op._pt_saved_idx
    return len(saved) > 1 and sum(j in s for s in saved.values()) == 1


def saved_attribute(node, name: str):
    """``node._saved_<name>`` (Note [Saved tensors])."""
    where = saved_names(node).get(name)
    if where is None:
        raise AttributeError(f"'{type(node).__name__}' object has no attribute '_saved_{name}'")
    written = _WRITTEN.get(node)
    if written is not None and name in written:  # Note [Arguments as written]
        value = written[name]
        if type(value) is _Scalar:
            return value.value
        if node._released and (
            _is_tensor(value) or isinstance(value, tuple) and any(map(_is_tensor, value))
        ):
            raise RuntimeError(E.BACKWARD_TWICE)  # saved tensors (a boolean mask index)
        return _unsigned(value)
    value = _saved_value(node, name, where)
    dims = _WRITTEN_DIMS.get(node)
    if dims is not None and name in dims[0]:  # Note [Dims as written] in _written_dims.py
        from .._written_dims import as_written

        one_dim = _kind(node) in _ONE_DIM
        return _unsigned(as_written(dims[0][name], value, dims[1], one_dim))
    return value


# node -> ({saved name: the dim as given}, the input's rank): dims given negative to a frontend,
# read back through ``_written_dims.as_written`` where the node's own value is that dim wrapped
_WRITTEN_DIMS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _nll_total_weight(node, info):
    """``_saved_total_weight`` of nll_loss's node: a 0-d tensor of the input's dtype."""
    from .._tensor import Tensor

    op, static = info[0], info[1]
    self_t = _input_as_read(node, op._operand_idx["self"])
    dtype = self_t._dtype
    if static["reduction"] == "none":
        total = jnp.zeros((), dtype.np)
    else:
        target = _input_as_read(node, op._operand_idx["target"])._data
        weight = _input_as_read(node, op._operand_idx["weight"])
        kept = target != static["ignore_index"]
        if weight is None:
            total = jnp.sum(kept).astype(dtype.np)
        else:
            w = weight._data[jnp.where(kept, target, 0)]
            total = jnp.sum(jnp.where(kept, w, 0)).astype(dtype.np)
    return Tensor._make(total, dtype, self_t._device)


def _log_sigmoid_buffer(node, info):
    """An output of PyTorch's forward, saved as such: an in-place write to the input since does
    not reach it."""
    x = _input_as_read(node, 0)
    return _tensor_cls()._make(jnp.exp(-jnp.abs(x._data)), x._dtype, x._device)


def _index_list(node, info):
    op, static = info[0], info[1]
    positions = static["positions"]
    first = op._operand_idx["indices0"]
    out = [None] * (max(positions) + 1 if positions else 0)
    for k, p in enumerate(positions):
        out[p] = _saved_input(node, first + k)
    return tuple(out)


def _norm_stats(node, info, k: int):
    """A normalization's mean (``k`` 0) or rstd (1) output: over the normalized dims of the
    saved input, in its opmath type, returned in the input's dtype; batch norm in eval mode
    returns empty ones."""
    x = _input_as_read(node, 0)
    op_name, static = info[0].name, info[1]
    data = x._data
    if data.dtype in (jnp.float16, jnp.bfloat16):
        data = data.astype(jnp.float32)
    if op_name == "native_layer_norm":
        axes = tuple(range(data.ndim - static["ndim"], data.ndim))
        keep = True
    elif op_name == "native_group_norm":
        data = data.reshape(data.shape[0], static["groups"], -1)
        axes, keep = (2,), False
    elif static["training"]:
        axes, keep = (0, *range(2, data.ndim)), False
    else:
        return _tensor_cls()._make(jnp.zeros((0,), x._data.dtype), x._dtype, x._device)
    mean = jnp.mean(data, axis=axes, keepdims=True)
    if k == 0:
        out = mean
    else:
        var = jnp.mean(jnp.square(data - mean), axis=axes, keepdims=True)
        out = lax.rsqrt(var + static["eps"])
    if not keep:
        out = jnp.squeeze(out, axes)
    out = out.astype(x._data.dtype)
    if op_name == "native_group_norm":  # outputs of the node that are differentiable
        return _as_output(node, out, k + 1)
    return _tensor_cls()._make(out, x._dtype, x._device)


def _norm_size(node, info, name: str):
    if name == "training":
        return bool(info[1]["training"])
    shape = _operand_meta(node, info, 0, "sizes")
    if name == "normalized_shape":
        return tuple(shape[len(shape) - info[1]["ndim"] :])
    if name == "group":
        return info[1]["groups"]
    return {"N": shape[0], "C": shape[1], "HxW": math.prod(shape[2:])}[name]


def _input_array(node, info, name: str):
    """The array of the op's input ``name`` as the node saw it (saved or kept to recompute)."""
    j = info[0]._operand_idx[name]
    t = _input_as_read(node, j)
    if t is None:
        raise RuntimeError(E.BACKWARD_TWICE)
    return t._data


def _lu_parts(node, info, k: int):
    """``LU`` (``k`` 0) or the 1-based int32 ``pivots`` (1) of the node's ``A``."""
    lu, pivots, _ = lax.linalg.lu(_input_array(node, info, "A"))
    Tensor = _tensor_cls()
    from .. import _dtype as D

    if k == 0:
        return Tensor._make(lu, D.from_numpy_dtype(lu.dtype), node._device or DEV.CPU)
    return Tensor._make((pivots + 1).astype(jnp.int32), D.int32, node._device or DEV.CPU)


def _decomposition_vectors(node, info, name: str):
    """svdvals' ``U``/``Vh`` and eigvalsh's ``eigenvectors``: outputs of the node's full
    decomposition (reduced SVD; eigh of the lower or upper triangle)."""
    a = _input_array(node, info, info[0].operands[0])
    if name == "eigenvectors":
        vectors = jnp.linalg.eigh(a, UPLO="L" if info[1].get("lower", True) else "U")[1]
        return _as_output(node, vectors, 1)
    u, _, vh = jnp.linalg.svd(a, full_matrices=False)
    return _as_output(node, u, 0) if name == "U" else _as_output(node, vh, 2)


def _singular_count(node, info):
    shape = _operand_meta(node, info, 0, "sizes")
    return min(shape[-2], shape[-1])


_COMPUTED = {
    "LU": lambda node, info: _lu_parts(node, info, 0),
    "pivots": lambda node, info: _lu_parts(node, info, 1),
    **{n: (lambda node, info, n=n: _decomposition_vectors(node, info, n)) for n in ("U", "Vh")},
    "eigenvectors": lambda node, info: _decomposition_vectors(node, info, "eigenvectors"),
    "S_sym_argsize_minus_1": _singular_count,
    "total_weight": _nll_total_weight,
    "buffer": _log_sigmoid_buffer,
    "indices": _index_list,
    "result1": lambda node, info: _norm_stats(node, info, 0),
    "result2": lambda node, info: _norm_stats(node, info, 1),
    **{
        n: (lambda node, info, n=n: _norm_size(node, info, n))
        for n in ("normalized_shape", "N", "C", "HxW", "group", "training")
    },
}
# the computed names that are sizes and flags, not saved tensors: readable after backward, and
# without a ``_raw_saved_`` entry (the index list too has none here)
_COMPUTED_NUMBERS = frozenset(
    {"normalized_shape", "N", "C", "HxW", "group", "training", "S_sym_argsize_minus_1"}
)


# Note [Packed computed outputs]: some PyTorch forwards save outputs that leafgrad's node does
# not keep but makes again from its input when asked (log_sigmoid's buffer, a norm's mean and
# rstd, nll_loss's total weight: ``_COMPUTED``). Under saved tensor hooks PyTorch packs those
# too, after the inputs, and unpacks them when read and in backward; so leafgrad makes them as
# the op is recorded, packs them (key ``("computed", name)``), returns what ``unpack`` gives for
# ``_saved_<name>``, and unpacks them in backward, whose formula still reads the input.
# Decompositions (``LU``, ``U``/``Vh``) are left out: PyTorch packs them in place of the input
# leafgrad's node keeps.
_PACKED_COMPUTED = frozenset({"buffer", "total_weight", "result1", "result2"})


def _saved_value(node, name: str, where):
    info = _info(node)
    if isinstance(where, tuple) and where[0] == "computed":
        if node._released and where[1] not in _COMPUTED_NUMBERS:
            raise RuntimeError(E.BACKWARD_TWICE)
        packed = node._packed
        if packed is not None and where in packed:
            return _unpacked_entry(node, where, packed[where])
        return _COMPUTED[where[1]](node, info)
    if isinstance(where, tuple) and where[0] == "static":
        defaults = _DEFAULT_ARGUMENTS.get(_kind(node), {})
        value = info[1].get(where[1], defaults.get(where[1]))
        if where[1] == "reduction" and value in _REDUCTIONS:
            return _REDUCTIONS[value]
        if where[1] == "dim" and _kind(node) in _ONE_DIM:
            return value[0] if value else None  # an optional int, where leafgrad keeps a tuple
        if where[1] in _SCALAR_ARGUMENTS:
            return value
        return _unsigned(value)
    if isinstance(where, tuple) and where[0] == "derived":
        return _unsigned(_DERIVED_ARGUMENTS[_kind(node)][where[1]](info[1]))
    if isinstance(where, tuple) and where[0] == "meta":
        return _operand_meta(node, info, where[1], where[2])
    if isinstance(where, tuple) and where[0] == "number":
        if node._released:
            from .graph import KeptNumber

            kept = node._released[where[1]] if isinstance(node._released, tuple) else None
            if kept is None or type(kept) is KeptNumber:
                return None if kept is None else kept.value
            raise RuntimeError(E.BACKWARD_TWICE)
        value = node._primals[where[1]]
        return value if value is None or _is_number(value) else None
    if isinstance(where, int) and not _is_saved(node, info, where):
        return None
    if (
        isinstance(where, int)
        and isinstance(node._released, tuple)
        and node._released[where] is None
    ):
        return None  # an optional operand that was not given
    if node._released:
        raise RuntimeError(E.BACKWARD_TWICE)
    packed = node._packed
    if packed is not None and where in packed:
        return _unpacked_entry(node, where, packed[where])
    if isinstance(where, tuple):
        _check_version(node, None, where[1])
        array = _output_array(node, info, where[1])
        if node._ct_dtype is not None:  # written in place into a narrower ``self``
            array = _as_written(node, array, where[1])
        return _as_output(node, array, where[1])
    return _saved_input(node, where)


def _as_written(node, array, k: int):
    """Output ``k`` as the in-place write left it: in the dtype of the ``self`` it was cast into
    (its saved-output record says which, ``inplace._retarget_checks``)."""
    for c in node._saved_checks or ():
        if c.tensor is None and c.output_nr == k and c.meta is not None:
            return array.astype(c.meta[0].np)
    return array


# node -> {operand index: strides}: the strides of a non-contiguous input of mm/addmm whose
# gradient is needed, as it was when the op ran (``keep_strides``)
_STRIDES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def keep_strides(result, operands) -> None:
    """Record, for ``result``'s node, the strides of the ``operands`` that require grad and are
    not contiguous: PyTorch's MmBackward0/AddmmBackward0 save an input's ``sym_strides`` when
    its gradient is needed (``mm_mat1_backward`` reads them), ``()`` otherwise."""
    node = getattr(result, "_grad_fn", None)
    if node is None:
        return
    kept = {
        j: t.stride()
        for j, t in enumerate(operands)
        if getattr(t, "_requires_grad", False) and "_strides" in t.__dict__
    }
    if kept:
        _STRIDES[node] = kept


def _needed_strides(node, info, j: int) -> tuple:
    """``<input>_sym_strides`` of MmBackward0/AddmmBackward0: the input's strides when its
    gradient is needed, else ``()``; an inner ``t`` view (F.linear's ``weight.t()``, Note
    [Views inside ops]) has its base's strides reversed."""
    op, needs = info[0], info[2]
    if j not in needs:
        return ()
    recorded = _STRIDES.get(node)
    transposed = op.inner_views.get(op.operands[j]) == "t"
    if recorded is not None and j in recorded:
        strides = recorded[j]  # the base's
    else:
        shape = _operand_meta(node, info, j, "sizes")  # the view's
        from ..ops.iterator_layout import contiguous_strides

        strides = contiguous_strides(shape[::-1] if transposed else shape)
    return strides[::-1] if transposed else strides


def _operand_meta(node, info, j: int, kind: str):
    """The sizes, strides or element count of input ``j`` as the node saw it."""
    if kind == "strides" and _kind(node) in _NEEDED_STRIDES:
        return _needed_strides(node, info, j)
    placeholders = info[3]
    shape = strides = None
    if placeholders is not None and j < len(placeholders) and placeholders[j] is not None:
        shape = tuple(placeholders[j][0])
    if shape is None and kind != "strides" and isinstance(node._released, tuple):
        shape = node._released[j]
    packed = node._packed
    if shape is None and kind != "strides" and packed is not None and j in packed:
        shape = packed[j][3]  # Note [Saved tensor hooks]: the sizes the node kept
    if shape is None and kind != "strides" and not node._released and node._primals is not None:
        # sizes are plain numbers in PyTorch's node: read without the saved input's version
        # check (an input written in place still gives them)
        kept = node._primals[j] if j < len(node._primals) else None
        if kept is not None and hasattr(kept, "shape"):
            shape = tuple(kept.shape)
    if shape is not None and info[0].inner_views.get(info[0].operands[j]) == "t":
        shape = shape[::-1]  # Note [Views inside ops]: the operand was the view's base
    if kind == "sizes_opt":  # an optional operand's sizes, ``(0,)`` when it was not given
        if shape is not None:
            return shape
        if node._primals is not None:
            if node._primals[j] is None:
                return (0,)
        elif isinstance(node._released, tuple) and node._released[j] is None:
            return (0,)
        kind = "sizes"
    if shape is None or kind == "strides":
        if node._released:
            raise RuntimeError(E.BACKWARD_TWICE)
        t = _saved_input(node, j)
        if t is None:
            return None
        shape, strides = tuple(t.shape), t.stride()
    if kind == "sizes":
        return shape
    if kind == "dim":
        return len(shape)
    if kind == "numel":
        n = 1
        for d in shape:
            n *= d
        return n
    if kind.startswith("argsize_"):  # one dim's size (``batch1_sym_argsize_0``, ``_minus_1``)
        k = kind[8:]
        return shape[-int(k[6:]) if k.startswith("minus_") else int(k)]
    return strides


def _check_version(node, operand, output_nr: int = 0) -> None:
    """PyTorch's ``SavedVariable::unpack``: a saved tensor modified in place since raises the
    error backward would raise (``operand`` None: a saved output, by its number)."""
    for c in node._saved_checks or ():
        if getattr(c, "operand", 0) == operand and (
            operand is not None or c.output_nr == output_nr
        ):
            check = getattr(c, "check_version", None)
            check(node) if check is not None else c()


def _input_as_read(node, j: int):
    """Input ``j`` as the op read it, for a value PyTorch's forward made from it and saved as an
    output (a norm's mean, log_sigmoid's buffer, nll_loss's total weight, an LU): a write to the
    input since does not reach it. Else (no array kept) the saved input, with its checks."""
    t = node._operands[j] if node._operands and j < len(node._operands) else None
    prim = node._primals
    if t is not None and prim is not None and j < len(prim) and node._packed is None:
        from ..ops.dispatch import _FROM_RESULT

        p = prim[j]
        fn = node._backward
        if (
            p is not None
            and not _is_number(p)
            and getattr(fn, "inner", fn) not in _FROM_RESULT
            and tuple(p.shape) == tuple(t._data.shape)
        ):
            return _tensor_cls()._make(p, t._dtype, t._device)
    return _saved_input(node, j)


def _saved_input(node, j: int):
    packed = node._packed
    if packed is not None and j in packed:  # Note [Saved tensor hooks]: what unpack returns
        return _unpacked_entry(node, j, packed[j])
    operands = node._operands
    t = operands[j] if operands and j < len(operands) else None
    if t is not None:
        _check_version(node, j)
        check = _inner_check(node, j)
        return t if check is None else _inner_view(node, j, t, check)
    p = node._primals[j] if node._primals is not None and j < len(node._primals) else None
    if p is None:
        return None
    Tensor = _tensor_cls()
    if _is_number(p):
        from .. import _dtype as D

        dtype = (
            D.bool_
            if isinstance(p, bool)
            else D.int64
            if isinstance(p, int)
            else D.complex128
            if isinstance(p, complex)
            else D.float64
        )
        return Tensor._make(jnp.asarray(p, dtype=dtype.np), dtype, node._device or DEV.CPU)
    from ..ops.dispatch import _snapshot

    edge_of = {i: k for k, i in enumerate(node._edge_idx or ())}
    return _snapshot(node, p, edge_of.get(j))  # Note [Original self]: the value it had


def _inner_view(node, j: int, base, check):
    """An operand the op viewed inside (Note [Views inside ops] in ops/table.py), kept as its
    base: the view, with the view node it was recorded with."""
    from ..ops.dispatch import dispatch
    from ..ops.table import OPS

    op = _info(node)[0]
    with grad_mode.no_grad():
        view = dispatch(OPS[op.inner_views[op.operands[j]]], base)
    out = _tensor_cls()._make(view._data, view._dtype, view._device)
    out._strides = view.stride()
    if check.view_node is not None:
        out._grad_fn, out._output_nr, out._requires_grad = check.view_node, 0, True
    return out


def _output_array(node, info, k: int):
    """The value of output ``k``: kept by a node computed from its result, else computed again
    from the saved inputs by the op's cached forward."""
    from ..ops import dispatch

    backward = node._backward
    while hasattr(backward, "inner"):  # a wrapper (``graph.wrap_backward``)
        backward = backward.inner
    if dispatch._FROM_RESULT.get(backward) == k:
        return node._primals[0]
    key = next((fk for fk, fn in list(dispatch._BACKWARD.items()) if fn is backward), None)
    forward = None if key is None else dispatch._FORWARD.get(key[0])
    if forward is None or node._primals is None or any(p is None for p in node._primals):
        raise NotImplementedError(
            f"leafgrad: '{type(node).__name__}' cannot give its saved output back"
        )
    out = forward(*node._primals)
    return out[k] if isinstance(out, (tuple, list)) else out


def _as_output(node, array, k: int):
    """A saved output as PyTorch unpacks it: a new tensor whose ``grad_fn`` is the node."""
    from .. import _dtype as D
    from .. import _storage as S

    Tensor = _tensor_cls()
    t = Tensor._make(array, D.from_numpy_dtype(array.dtype), node._device or DEV.CPU)
    if (
        D.from_numpy_dtype(array.dtype).is_floating_point
        or D.from_numpy_dtype(array.dtype).is_complex
    ):
        t._grad_fn, t._output_nr, t._requires_grad = S.saved_output_node(node), k, True
    return t


# --- grad_fn._raw_saved_<name> -------------------------------------------------------------


class SavedTensor:
    """One tensor a node saved (``torch._C._autograd.SavedTensor``): ``register_hooks`` packs it
    now and unpacks it when backward reads it."""

    __slots__ = ("_node", "_name")

    def __init__(self, node, name: str) -> None:
        self._node = node  # keeps the node alive, as PyTorch's keeps its SavedVariable
        self._name = name

    def register_hooks(self, pack_hook, unpack_hook) -> None:
        if not (callable(pack_hook) and callable(unpack_hook)):
            raise TypeError(REGISTER_ARGS.format(f"{self!r}, {pack_hook!r}, {unpack_hook!r}"))
        node = self._node
        where = saved_names(node)[self._name]
        if node._released:
            raise RuntimeError(REGISTER_FREED)
        packed = node._packed
        if packed is not None and where in packed:
            raise RuntimeError(REGISTER_TWICE)
        value = saved_attribute(node, self._name)
        if value is None:
            raise RuntimeError(REGISTER_NONE)
        # an output is packed as a tensor without history (PyTorch's ``data_``)
        if isinstance(where, tuple):
            entry = (pack_hook(_alias(value, None)), unpack_hook, None)
        else:
            shape = _kept_shape(node._primals[where], value)
            entry = (pack_hook(value), unpack_hook, _history(value), shape)
        packed = dict(packed or {})
        packed[where] = entry
        node._packed = packed
        if isinstance(where, int):
            if node._operands:
                kept = list(node._operands)
                kept[where] = None
                node._operands = tuple(kept)
            primals = list(node._primals)
            primals[where] = None
            node._primals = tuple(primals)
        elif node._backward in _from_result():
            node._primals = (None,)
        _drop_checks(node, packed)

    def unpack(self):
        return saved_attribute(self._node, self._name)

    @property
    def data(self):
        """The saved tensor, None once freed or where nothing was saved."""
        node = self._node
        if node._released:
            return None
        return saved_attribute(node, self._name)


def raw_attribute(node, name: str):
    """``node._raw_saved_<name>``: a ``SavedTensor`` (a new object each time, where PyTorch's
    is the same)."""
    where = saved_names(node).get(name)
    if where is None or not is_tensor(where):
        raise AttributeError(f"'{type(node).__name__}' object has no attribute '_raw_saved_{name}'")
    return SavedTensor(node, name)


def node_getattr(node, attr: str):
    if attr.startswith("_raw_saved_"):
        return raw_attribute(node, attr[len("_raw_saved_") :])
    if attr.startswith("_saved_"):
        return saved_attribute(node, attr[len("_saved_") :])
    raise AttributeError(f"'{type(node).__name__}' object has no attribute '{attr}'")
