"""PyTorch's first error for an ``F`` function given a non-tensor or a wrongly typed argument.

Note [F's argument errors]: most of ``torch.nn.functional`` is either a builtin bound by
PyTorch's argument parser (``F.relu6`` is ``torch._C._nn.relu6``) or Python that soon calls one
with its arguments in place (``F.cross_entropy`` calls ``cross_entropy_loss``). Given a number
or a list where a tensor goes, PyTorch raises that builtin's parser error ("relu6(): argument
'input' (position 1) must be Tensor, not float"), or the Python code fails first on the
attribute it reads (``F.softmax(1.0)``: "'float' object has no attribute 'dim'"). leafgrad's
frontends fail their own way on such calls; ``install`` wraps each function listed here so that
its error path raises PyTorch's error instead (a check costs nothing until the frontend raised),
and checks first the few arguments a frontend would take where PyTorch refuses them (a float
``kernel_size``).

A parameter spec is ``name`` (a Tensor), ``name?`` (a Tensor or None) or ``name:kind`` with a kind
of ``_arg_check``'s checks (``ints``, ``int``, ``float``, ``str``); ``builtin=name`` where the
builtin calls the frontend's argument ``name`` otherwise; ``pair`` kinds are read through
``_pair`` as PyTorch's Python does (``ints2``). Positions are the builtin's.
"""

from __future__ import annotations

import functools
import inspect

from .. import _arg_check
from .. import _errors as E
from .._tensor import Tensor

_ERRORS = (TypeError, AttributeError, RuntimeError, ValueError, IndexError)

# F name -> (the builtin PyTorch's message names, its parameters in order, checked-first ones)
_ACTIVATIONS = """celu elu elu_ gelu hardsigmoid hardswish hardtanh hardtanh_ leaky_relu
leaky_relu_ mish relu relu6 rrelu selu silu softplus softshrink""".split()
BUILTINS: dict = {
    **{name: (name, ("input",), ()) for name in _ACTIVATIONS},
    "logsigmoid": ("log_sigmoid", ("input",), ()),
    "bilinear": ("bilinear", ("input1", "input2", "weight", "bias?"), ()),
    "cross_entropy": ("cross_entropy_loss", ("input", "target", "weight?"), ()),
    "nll_loss": ("nll_loss_nd", ("input", "target", "weight?"), ()),
    "kl_div": ("kl_div", ("input", "target"), ()),
    "pad": ("pad", ("input", "pad:ints"), ()),
    "layer_norm": ("layer_norm", ("input", "normalized_shape:ints"), ()),
    "hinge_embedding_loss": ("hinge_embedding_loss", ("input", "target"), ()),
    "multi_margin_loss": ("multi_margin_loss", ("input", "target"), ()),
    "multilabel_margin_loss": ("multilabel_margin_loss", ("input", "target"), ()),
    "poisson_nll_loss": ("poisson_nll_loss", ("input", "target"), ("target",)),
    "soft_margin_loss": ("soft_margin_loss", ("input", "target"), ("target",)),
    "grid_sample": ("grid_sampler", ("input", "grid"), ()),
    "scaled_dot_product_attention": (
        "scaled_dot_product_attention",
        ("query", "key", "value", "attn_mask?"),
        (),
    ),
    "avg_pool2d": ("avg_pool2d", ("input", "kernel_size:ints"), ("kernel_size",)),
    "avg_pool3d": ("avg_pool3d", ("input", "kernel_size:ints"), ("kernel_size",)),
    "max_pool1d": ("max_pool1d", ("input", "kernel_size:ints"), ("kernel_size",)),
    "max_pool2d": ("max_pool2d", ("input", "kernel_size:ints"), ("kernel_size",)),
    "max_pool3d": ("max_pool3d", ("input", "kernel_size:ints"), ("kernel_size",)),
    "max_pool1d_with_indices": (
        "max_pool1d_with_indices",
        ("input", "kernel_size:ints"),
        ("kernel_size",),
    ),
    "max_pool2d_with_indices": (
        "max_pool2d_with_indices",
        ("input", "kernel_size:ints"),
        ("kernel_size",),
    ),
    "max_pool3d_with_indices": (
        "max_pool3d_with_indices",
        ("input", "kernel_size:ints"),
        ("kernel_size",),
    ),
    "adaptive_max_pool1d": (
        "adaptive_max_pool1d",
        ("input", "output_size:ints"),
        ("output_size",),
    ),
    "adaptive_max_pool1d_with_indices": (
        "adaptive_max_pool1d",
        ("input", "output_size:ints"),
        ("output_size",),
    ),
    "group_norm": ("group_norm", ("input", "num_groups:int"), ("num_groups",)),
    "rms_norm": ("rms_norm", ("input", "normalized_shape:ints"), ("normalized_shape",)),
    "unfold": ("im2col", ("input", "kernel_size:ints2"), ("kernel_size",)),
    "glu": ("glu", ("input", "dim:int"), ("dim",)),
}

# the F functions that are builtins: PyTorch's parser checks their types before it reports a
# missing argument (the others are Python functions: Python reports it first)
PARSER_BOUND = frozenset(
    """avg_pool2d avg_pool3d bilinear elu_ gelu hardtanh_ leaky_relu_ logsigmoid
    scaled_dot_product_attention softplus softshrink""".split()
)
# the names Python gives PyTorch's functions in that report (``boolean_dispatch`` calls these)
PYTHON_NAMES = {
    **{f"max_pool{n}d": f"_max_pool{n}d" for n in (1, 2, 3)},
    **{f"adaptive_max_pool{n}d": f"_adaptive_max_pool{n}d" for n in (1, 2, 3)},
}

# F builtins whose later parameters are keyword-only: how many they take by position
POSITIONAL = {"gelu": 1}

# F name -> the attribute of its first argument PyTorch's Python reads first (a callable: of the
# call's bound arguments)
ATTRIBUTE_FIRST = {
    "dropout1d": "dim",
    "dropout2d": "dim",
    "dropout3d": "dim",
    "glu": "dim",
    "group_norm": "dim",
    "instance_norm": "size",
    "interpolate": "dim",
    "upsample": "dim",
    "upsample_nearest": "dim",
    "upsample_bilinear": "dim",
    "normalize": "norm",
    "softsign": "abs",
    "softmax": lambda a: "dim" if a.get("dim") is None else "softmax",
    "softmin": "dim",
    "log_softmax": lambda a: "dim" if a.get("dim") is None else "log_softmax",
    "adaptive_avg_pool2d": "size",
    "adaptive_avg_pool3d": "size",
    "adaptive_max_pool2d": "size",
    "adaptive_max_pool3d": "size",
    "adaptive_max_pool2d_with_indices": "size",
    "adaptive_max_pool3d_with_indices": "size",
}

# F name -> (its output size argument): PyTorch's ``_list_with_default`` takes ``len`` of what
# is not an int
LISTED_SIZES = {
    "adaptive_avg_pool2d": "output_size",
    "adaptive_avg_pool3d": "output_size",
    "adaptive_max_pool2d": "output_size",
    "adaptive_max_pool3d": "output_size",
    "adaptive_max_pool2d_with_indices": "output_size",
    "adaptive_max_pool3d_with_indices": "output_size",
    "affine_grid": "size",
}

# F name -> the builtin whose parser names its first argument (``F.gumbel_softmax`` starts from
# ``empty_like(logits)``)
FIRST_CALL = {"gumbel_softmax": "empty_like"}


def _spec(text: str) -> tuple:
    """``(name, kind, optional)`` of a parameter spec."""
    optional = text.endswith("?")
    name, _, kind = text.rstrip("?").partition(":")
    return name, kind or "tensor", optional


def _argument_error(op: str, params: tuple, bound: dict, only=None) -> str | None:
    """The parser's message for the first of ``params`` (of builtin ``op``) that ``bound``
    (the frontend's arguments by name) gives a value of the wrong type; ``only``: the names to
    check."""
    for position, text in enumerate(params, 1):
        name, kind, optional = _spec(text)
        if (only is not None and name not in only) or name not in bound:
            continue
        value = bound[name]
        if value is None and optional:
            continue
        if kind == "ints2":  # ``_pair(v)``: an int list as given, else two of it
            kind = "ints"
            if not isinstance(value, (list, tuple)):
                value = (value, value)
        check = _arg_check._CHECKS.get(kind)
        message = check(op, name, f" (position {position})", value)
        if message is not None:
            return message
    return None


def _attribute_error(x, attribute: str) -> AttributeError:
    return AttributeError(f"'{E.py_typename(x)}' object has no attribute '{attribute}'")


def _binds(signature, args, kwargs) -> bool:
    try:
        signature.bind(*args, **kwargs)
    except TypeError:
        return False
    return True


def _wrap(fn, name: str):
    signature = inspect.signature(fn)
    builtin = BUILTINS.get(name)
    attribute = ATTRIBUTE_FIRST.get(name)
    listed = LISTED_SIZES.get(name)
    first_call = FIRST_CALL.get(name)
    first_checked = builtin[2] if builtin is not None else ()
    first_param = next(iter(signature.parameters))
    most = POSITIONAL.get(name)

    def bind(args, kwargs) -> dict | None:
        try:
            return signature.bind_partial(*args, **kwargs).arguments
        except TypeError:
            return None

    @functools.wraps(fn)
    @E.wrapper
    def parsed(*args, **kwargs):
        if most is not None and len(args) > most:
            raise TypeError(
                f"{name}() takes {most} positional argument{'s' * (most != 1)} but {len(args)} "
                "were given"
            )
        if first_checked:
            bound = bind(args, kwargs)
            if bound is not None and isinstance(bound.get(first_param), Tensor):
                message = _argument_error(builtin[0], builtin[1], bound, first_checked)
                if message is not None:
                    raise TypeError(message)
        try:
            return fn(*args, **kwargs)
        except _ERRORS as err:
            bound = bind(args, kwargs)
            if bound is None:
                raise
            if name not in PARSER_BOUND and not _binds(signature, args, kwargs):
                # Python refuses the call before PyTorch's function runs
                own, text = f"{fn.__name__}()", str(err)
                if type(err) is TypeError and name in PYTHON_NAMES and text.startswith(own):
                    raise TypeError(f"{PYTHON_NAMES[name]}(){text[len(own) :]}") from None
                raise
            first = bound.get(first_param)
            if attribute is not None and first_param in bound and not isinstance(first, Tensor):
                attr = attribute(bound) if callable(attribute) else attribute
                raise _attribute_error(first, attr) from None
            if listed is not None and listed in bound:
                size = bound[listed]
                if not isinstance(size, int) and not hasattr(size, "__len__"):
                    raise TypeError(
                        f"object of type '{E.py_typename(size)}' has no len()"
                    ) from None
            if first_call is not None and not isinstance(first, Tensor):
                raise TypeError(
                    _arg_check._tensor_error(first_call, "input", " (position 1)", first)
                ) from None
            if builtin is not None:
                message = _argument_error(builtin[0], builtin[1], bound)
                if message is not None:
                    raise TypeError(message) from None
            raise

    return parsed


def install(namespace: dict) -> None:
    """Wrap the functions of ``namespace`` (``F``'s globals) listed here."""
    for name in sorted({*BUILTINS, *ATTRIBUTE_FIRST, *LISTED_SIZES, *FIRST_CALL}):
        fn = namespace.get(name)
        if fn is not None and not getattr(fn, "_f_parsed", False):
            namespace[name] = _wrap(fn, name)
            namespace[name]._f_parsed = True
