"""Every message a user can see, PyTorch's text byte for byte, kept in one place as named templates.

Where leafgrad adds help of its own, it goes on a line after PyTorch's text (see ``HELP_*``).
"""

from __future__ import annotations

import functools
import os
import sys
import warnings

# --- requires_grad ---------------------------------------------------------------------------
REQUIRES_GRAD_FACTORY = "Only Tensors of floating point and complex dtype can require gradients"
REQUIRES_GRAD_SETTER = "only Tensors of floating point and complex dtype can require gradients"
REQUIRES_GRAD_METHOD = "only Tensors of floating point dtype can require gradients"
REQUIRES_GRAD_NONLEAF_OFF = (
    "you can only change requires_grad flags of leaf variables. If you want to use a computed "
    "variable in a subgraph that doesn't require differentiation use var_no_grad = var.detach()."
)
REQUIRES_GRAD_NONLEAF = "you can only change requires_grad flags of leaf variables."
RETAIN_GRAD_NO_GRAD = "can't retain_grad on Tensor that has requires_grad=False"
RETAIN_GRAD_INFERENCE = "can't retain_grad on Tensor that has requires_grad=False"

# --- .grad -------------------------------------------------------------------------------------
NON_LEAF_GRAD_WARNING = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad "
    "attribute won't be populated during autograd.backward(). If you indeed want the .grad field "
    "to be populated for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. If you "
    "access the non-leaf Tensor by mistake, make sure you access the leaf Tensor instead. See "
    "github.com/pytorch/pytorch/pull/30531 for more information. (Triggered internally at "
    "/__w/pytorch/pytorch/build/aten/src/ATen/core/TensorBody.h:493.)"
)
GRAD_TYPE = "assigned grad expected to be a Tensor or None but got grad of type {}"
GRAD_SIZE = (
    "attempting to assign a gradient of size '{}' to a tensor of size '{}'. Please ensure that "
    "the gradient and the tensor are the same size"
)
GRAD_DTYPE = (
    "attempting to assign a gradient with dtype '{}' to a tensor with grad_dtype '{}'. The "
    "gradient must match the tensor's grad_dtype (defaults to the tensor's dtype). You can set "
    "the tensor's grad_dtype attribute with a specific dtype, or None to allow any dtype. Set "
    "grad_dtype with caution. Diverging the dtypes of a tensor and its gradient may break "
    "downstream systems that assume they match."
)
GRAD_DEVICE = (
    "attempting to assign a gradient with device type '{}' to a tensor with device type '{}'. "
    "Please ensure that the gradient and the tensor are on the same device"
)
GRAD_LAYOUT = "assigned grad has data of a different type"

# --- backward ------------------------------------------------------------------------------------
BACKWARD_TWICE = (
    "Trying to backward through the graph a second time (or directly access saved tensors after "
    "they have already been freed). Saved intermediate values of the graph are freed when you "
    "call .backward() or autograd.grad(). Specify retain_graph=True if you need to backward "
    "through the graph a second time or if you need to access saved tensors after calling "
    "backward."
)
NO_GRAD_FN = "element {} of tensors does not require grad and does not have a grad_fn"
IMPLICIT_GRAD = "grad can be implicitly created only for scalar outputs"
IMPLICIT_GRAD_REAL = "grad can be implicitly created only for real scalar outputs but got {}"
GRAD_SHAPE_MISMATCH = (
    "Mismatch in shape: grad_output[{}] has a shape of {} and output[{}] has a shape of {}."
)
GRAD_COMPLEX_MISMATCH = (
    "For complex Tensors, both grad_output and output are required to have the same dtype. "
    "Mismatch in dtype: grad_output[{}] has a dtype of {} and output[{}] has a dtype of {}."
)
GRAD_TENSORS_LEN = "grad requires non-empty inputs."
CREATE_GRAPH_TODO = (
    "backward(create_graph=True) is not implemented in leafgrad yet; higher-order gradients are "
    "planned. Nothing was computed."
)

# --- numpy / python conversion -------------------------------------------------------------------
NUMPY_REQUIRES_GRAD = (
    "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead."
)
NUMPY_DEVICE = (
    "can't convert {} device type tensor to numpy. Use Tensor.cpu() to copy the tensor to host "
    "memory first."
)
ITEM_NUMEL = "a Tensor with {} elements cannot be converted to Scalar"
SCALAR_NUMEL = "only one element tensors can be converted to Python scalars"
BOOL_AMBIGUOUS = "Boolean value of Tensor with more than one value is ambiguous"
LEN_0D = "len() of a 0-d tensor"
ITER_0D = "iteration over a 0-d tensor"
COPY_CONSTRUCT_WARNING = (
    "To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() or "
    "sourceTensor.detach().clone().requires_grad_(True), rather than torch.tensor(sourceTensor)."
)
SCALAR_REQUIRES_GRAD = (
    "Converting a tensor with requires_grad=True to a scalar may lead to unexpected behavior.\n"
    "Consider using tensor.detach() first. (Triggered internally at "
    "/__w/pytorch/pytorch/torch/csrc/autograd/generated/python_variable_methods.cpp:822.)"
)
COMPLEX_TO_REAL = (
    "Casting complex values to real discards the imaginary part (Triggered internally at "
    "/__w/pytorch/pytorch/aten/src/ATen/native/Copy.cpp:307.)"
)
LIST_OF_NDARRAYS = (
    "Creating a tensor from a list of numpy.ndarrays is extremely slow. Please consider "
    "converting the list to a single numpy.ndarray with numpy.array() before converting to a "
    "tensor. (Triggered internally at /__w/pytorch/pytorch/torch/csrc/utils/tensor_new.cpp:252.)"
)
SEQUENCE_LENGTH = "expected sequence of length {} at dim {} (got {})"
INVALID_DATA_TYPE = "new(): invalid data type '{}'"

# --- devices -------------------------------------------------------------------------------------
DEVICE_TYPES = (
    "cpu, cuda, ipu, xpu, mkldnn, opengl, opencl, ideep, hip, ve, fpga, maia, xla, lazy, vulkan, "
    "mps, meta, hpu, mtia, privateuseone"
)
DEVICE_UNKNOWN = "Expected one of " + DEVICE_TYPES + " device type at start of device string: {}"
DEVICE_INVALID = "Invalid device string: '{}'"
DEVICE_MIXED = (
    "Expected all tensors to be on the same device, but found at least two devices, {} and {}!"
)
NO_CUDA = "No CUDA GPUs are available"
CUDA_NOT_BUILT = "Torch not compiled with CUDA enabled"
CUDA_CTX_NOT_BUILT = "PyTorch was compiled without CUDA support"
HELP_NO_CUDA = (
    "leafgrad: JAX sees no GPU on this machine. Set the environment variable "
    "LEAFGRAD_VIRTUAL_CUDA=1 to run cuda code on a virtual cuda device backed by the CPU."
)
DEVICE_ORDINAL = "CUDA error: invalid device ordinal"
UNSUPPORTED_DEVICE = "leafgrad: device type '{}' is not supported (JAX has no such platform here)"

# --- shapes and dtypes in ops --------------------------------------------------------------------
BROADCAST = (
    "The size of tensor a ({}) must match the size of tensor b ({}) at non-singleton dimension {}"
)
DIM_RANGE = "Dimension out of range (expected to be in range of [{}, {}], but got {})"
DIM_SCALAR = "Dimension specified as {} but tensor has no dimensions"
DIM_REPEATED = "dim {} appears multiple times in the list of dims"
MEAN_DTYPE = (
    "mean(): could not infer output dtype. Input dtype must be either a floating point or complex "
    "dtype. Got: {}"
)
NEG_BOOL = (
    "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert a "
    "mask, use the `~` or `logical_not()` operator instead."
)
SUB_BOOL = (
    "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or "
    "`logical_xor()` operator instead."
)
SUB_BOOL_SCALAR = (
    "Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to "
    "invert a mask, use the `~` or `logical_not()` operator instead."
)
MM_SHAPES = "mat1 and mat2 shapes cannot be multiplied ({}x{} and {}x{})"
MV_DTYPE = "addmv input tensors must have the same dtype, but got {}, {}, and {}"
MM_DTYPE = "expected m1 and m2 to have the same dtype, but got: {} != {}"
DOT_DTYPE = "dot : expected both vectors to have same dtype, but found {} and {}"
DOT_SHAPES = (
    "inconsistent tensor size, expected tensor [{}] and src [{}] to have the same number of "
    "elements, but got {} and {} elements respectively"
)
MV_SHAPES = "size mismatch, got input ({}), mat ({}x{}), vec ({})"
MATMUL_0D = "both arguments to matmul need to be at least 1D, but they are {}D and {}D"
BMM_SHAPES = (
    "Expected size for first two dimensions of batch2 tensor to be: [{}, {}] but got: [{}, {}]."
)
RESULT_CAST = "result type {} can't be cast to the desired output type {}"
INTEGER_POW_NEGATIVE = "Integers to negative integer powers are not allowed."
VIEW_SIZE = "shape '[{}]' is invalid for input of size {}"
UNSUPPORTED_OPERAND = "unsupported operand type(s) for {}: '{}' and '{}'"


_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep


def _caller_level() -> int:
    """The ``stacklevel`` of the first frame outside leafgrad that led to the warning: PyTorch's
    kernel warnings point at the user's line that called into torch."""
    frame = sys._getframe(2)  # the caller of warn / warn_once
    level = 2
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame = frame.f_back
        level += 1
    return level


# the code objects of leafgrad's argument-checking wrappers (``_arg_check``, ``nn._parsed``): a
# frame of one stands for no frame of PyTorch's (``warn_above``)
WRAPPERS: set = set()


def wrapper(fn):
    """Register ``fn``, a wrapper's inner function, in ``WRAPPERS``; returns it."""
    WRAPPERS.add(fn.__code__)
    return fn


def warn_above(message: str, stacklevel: int = 2, category=UserWarning) -> None:
    """``warnings.warn(message, category, stacklevel)`` from the function calling this, its
    stack counted as PyTorch's: the frames of leafgrad's wrappers (``WRAPPERS``) skipped."""
    frame, level, counted = sys._getframe(1), 2, 1
    while counted < stacklevel and frame is not None:
        frame = frame.f_back
        level += 1
        if frame is not None and frame.f_code not in WRAPPERS:
            counted += 1
    warnings.warn(message, category, stacklevel=level)


def warn(message: str, category=UserWarning, stacklevel: int | None = None) -> None:
    """Issue a PyTorch warning with its exact text, at the user's line (or ``stacklevel``)."""
    warnings.warn(message, category, stacklevel=stacklevel or _caller_level())


_warned_once: set[str] = set()
_warn_always = [False]


def warn_once(
    message: str, category=UserWarning, stacklevel: int | None = None, site: str | None = None
) -> None:
    """PyTorch's ``TORCH_WARN_ONCE``: once per process unless ``set_warn_always(True)``; once
    per ``site`` where the message varies (PyTorch's flag is the call site's)."""
    key = message if site is None else site
    if _warn_always[0] or key not in _warned_once:
        _warned_once.add(key)
        warnings.warn(message, category, stacklevel=stacklevel or _caller_level())


def refuse_by_signatures(name: str, *args, **kwargs):
    """Raise the parser's TypeError for ``torch.<name>(*args, **kwargs)``, which none of its
    signatures takes (a method call's own message comes from the table on the error path)."""
    from ._parser_errors import FUNCTIONS

    raise TypeError(invalid_arguments(name, FUNCTIONS[name][1], args, kwargs))


_DEPRECATED_WARNED = [False]


def deprecated_alpha(spell: str, method: bool, args: tuple, kwargs: dict):
    """PyTorch's deprecated ``add(Number alpha, Tensor other)`` overloads (of add, sub and their
    in-place forms; legacy code's ``p.data.add_(-lr, grad)``): ``(other, alpha)`` when ``args``
    (after ``self``/``input``) take that form, after the parser's warning, else None. The warning
    is one ``TORCH_WARN_ONCE`` for all deprecated overloads: once per process."""
    found = alpha_form(args, kwargs)
    if found is None:
        return None
    if method:
        warn_deprecated_overload(spell, True, "(Number alpha, Tensor other)")
    else:
        old = "(Tensor input, Number alpha, Tensor other, *, Tensor out = None)"
        warn_deprecated_overload(spell, False, old)
    return found


def scalar_argument(x):
    """``x`` as PyTorch's ``Scalar`` parameter takes it (a Python number, or a 0-dim tensor
    that does not require grad, read as its number), else None."""
    from ._tensor import Tensor

    if isinstance(x, Tensor):
        return x.item() if x.ndim == 0 and not x.requires_grad else None
    return x if _is_number(x) else None


def alpha_form(args: tuple, kwargs: dict):
    """``(other, alpha)`` where add/sub's deprecated ``(Number alpha, Tensor other)`` form takes
    ``args`` (after ``self``/``input``) and ``kwargs``, else None."""
    from ._tensor import Tensor

    if len(args) != 2 or kwargs:
        return None  # ``out=`` is taken (and popped) by the function's frontend
    alpha = scalar_argument(args[0])
    other = args[1]
    if alpha is None or not (isinstance(other, Tensor) or _is_number(other)):
        return None
    return other, alpha


def warn_deprecated_overload(spell: str, method: bool, signature: str) -> None:
    """The parser's warning for a call bound by a deprecated overload (``signature``), which
    lists the signatures shown instead: one ``TORCH_WARN_ONCE`` for all deprecated overloads,
    so once per process unless ``set_warn_always(True)``."""
    from ._parser_errors import FUNCTIONS, METHODS

    warn_deprecated_signature(spell, signature, (METHODS if method else FUNCTIONS)[spell][1])


def warn_deprecated_signature(spell: str, signature: str, signatures: tuple) -> None:
    """``warn_deprecated_overload`` with the shown ``signatures`` given."""
    if _warn_always[0] or not _DEPRECATED_WARNED[0]:
        _DEPRECATED_WARNED[0] = True
        shown = "".join(f"\n\t{spell}{s}" for s in signatures)
        warn(
            f"This overload of {spell} is deprecated:\n\t{spell}{signature}\nConsider using one "
            f"of the following signatures instead:{shown} (Triggered internally at "
            "/__w/pytorch/pytorch/torch/csrc/utils/python_arg_parser.cpp:1841.)"
        )


def deprecated_alpha_refused(spell: str, method: bool, args: tuple, kwargs: dict) -> str:
    """The parser's message for a call of add/sub (or add_/sub_) that neither the deprecated
    overload nor the shown signature takes: the shown one is all its message considers.
    ``args``: all positional arguments but a method's ``self``."""
    from ._parser_errors import FUNCTIONS, METHODS

    signatures = (METHODS if method else FUNCTIONS)[spell][1]
    return invalid_arguments(spell, signatures, args, kwargs)


def set_warn_always(b: bool) -> None:
    """Make warn-once warnings warn every time (``torch.set_warn_always``)."""
    _warn_always[0] = bool(b)


def is_warn_always_enabled() -> bool:
    return _warn_always[0]


def c_type_name(d) -> str:
    """PyTorch's C++ spelling of a dtype, used in a few messages ('float', 'double', 'long int')."""
    return {
        "float32": "float",
        "float64": "double",
        "float16": "c10::Half",
        "bfloat16": "c10::BFloat16",
        "int64": "long int",
        "int32": "int",
        "int16": "short int",
        "int8": "signed char",
        "uint8": "unsigned char",
        "bool": "bool",
        "complex64": "c10::complex<float>",
        "complex128": "c10::complex<double>",
    }[d.name]


DETACH_VIEW = (
    "Can't detach views in-place. Use detach() instead. If you are using DistributedDataParallel "
    "(DDP) for training, and gradient_as_bucket_view is set as True, gradients are views of DDP "
    "buckets, and hence detach_() cannot be called on these gradients. To fix this error, please "
    "refer to the Optimizer.zero_grad() function in torch/optim/optimizer.py as the solution."
)
POW_BOOL = "\"pow\" not implemented for 'Bool'"


def scalar_type_name(d) -> str:
    """PyTorch's ScalarType name of a dtype ('Float', 'Long', ...)."""
    return d._legacy


AUTOGRAD_DTYPE = "Autograd not support dtype: {}"
INFERENCE_SAVED = (
    "Inference tensors cannot be saved for backward. Please do not use Tensors created in "
    "inference mode in computation tracked by autograd. To work around this, you can make a "
    "clone to get a normal tensor and use it in autograd, or use `torch.no_grad()` instead of "
    "`torch.inference_mode()`."
)
INFERENCE_REQUIRES_GRAD = (
    "Setting requires_grad=True on inference tensor outside InferenceMode is not allowed."
)
INFERENCE_VERSION = "Inference tensors do not track version counter."
# a kernel that PyTorch runs through an ``out=`` variant met an input that requires grad (ops on
# inference tensors outside inference mode skip autograd, but their ``out=`` calls do not)
OUT_REQUIRES_GRAD = (
    "{}(): functions with out=... arguments don't support automatic differentiation, but one of "
    "the arguments requires grad."
)

# at::native::resize_output's warning for an ``out=`` tensor of another, non-empty shape
OUT_RESIZED = (
    "An output with one or more elements was resized since it had shape {}, which does not "
    "match the required output shape {}. This behavior is deprecated, and in a future PyTorch "
    "release outputs will not be resized unless they have zero elements. You can explicitly "
    "reuse an out tensor t by resizing it, inplace, to zero elements with t.resize_(0). "
    "(Triggered internally at /__w/pytorch/pytorch/aten/src/ATen/native/Resize.cpp:30.)"
)

# --- in-place ops and views (issue 4) ---------------------------------------------------------
LEAF_INPLACE = "a leaf Variable that requires grad is being used in an in-place operation."
VIEW_OF_LEAF_INPLACE = (
    "a view of a leaf Variable that requires grad is being used in an in-place operation."
)
INFERENCE_INPLACE = (
    "Inplace update to inference tensor outside InferenceMode is not allowed.You can make a "
    "clone to get a normal tensor before doing inplace update.See "
    "https://github.com/pytorch/rfcs/pull/17 for more details."
)
_VIEW_AMBIGUOUS = (
    " Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify your "
    "code by moving both the view and the inplace either both inside the {} block (if you don't "
    "want the inplace to be tracked) or both outside (if you want the inplace to be tracked)."
)
VIEW_NO_GRAD = (
    "A view was created in no_grad mode and is being modified inplace with grad mode enabled."
    + _VIEW_AMBIGUOUS.format("no_grad")
)
VIEW_NO_GRAD_INDIRECT = (
    "A view was created in no_grad mode and its base or another view of its base has been "
    "modified inplace with grad mode enabled." + _VIEW_AMBIGUOUS.format("no_grad")
)
VIEW_INFERENCE = (
    "A view was created in inference mode and is being modified inplace in normal mode."
    + _VIEW_AMBIGUOUS.format("inference_mode")
)
VIEW_INFERENCE_INDIRECT = (
    "A view was created in inference mode and its base or another view of its base has been "
    "modified inplace in normal mode." + _VIEW_AMBIGUOUS.format("inference_mode")
)
VIEW_MULTI_OUTPUT = (
    "Output {} of {} is a view and {}. This view is the output of a function that returns "
    "multiple views. Such functions do not allow the output views to be modified inplace. You "
    "should replace the inplace operation by an out-of-place one."
)
INPLACE_SHAPE = "output with shape {} doesn't match the broadcast shape {}"
INPLACE_CAST = "result type {} can't be cast to the desired output type {}"
INTERNAL_OVERLAP = (
    "unsupported operation: more than one element of the written-to tensor refers to a single "
    "memory location. Please clone() the tensor before performing the operation."
)
PARTIAL_OVERLAP = (
    "unsupported operation: some elements of the input tensor and the written-to tensor refer to "
    "a single memory location. Please clone() the tensor before performing the operation."
)
SAVED_MODIFIED = (
    "one of the variables needed for gradient computation has been modified by an inplace "
    "operation: [{} {}]{} is at version {}; expected version {} instead. {}"
)
# AccumulateGrad's CHECK_RESULT, a TORCH_WARN_ONCE of each of its two sites (the in-place sum at
# line 252, the out-of-place one under create_graph at 282): a sum into ``.grad`` laid out
# otherwise than the leaf (grad sizes, grad strides, param sizes, param strides, the line)
GRAD_LAYOUT_CONTRACT = (
    "grad and param do not obey the gradient layout contract. This is not an error, but may "
    "impair performance.\ngrad.sizes() = {}, strides() = {}\nparam.sizes() = {}, strides() = {} "
    "(Triggered internally at "
    "/__w/pytorch/pytorch/torch/csrc/autograd/functions/accumulate_grad.h:{}.)"
)

ORDER_DEPENDENT_WRITE = (
    "leafgrad: an in-place write whose operand reads memory that the same write changes at "
    "other elements (a view of the written tensor, such as one of its columns) is not "
    "supported: PyTorch's result depends on its kernel's loop order and the CPU's vector width "
    "(Note [Order-dependent writes]). Pass a clone() of the operand instead."
)

# a saved input that was not a leaf and has lost its history to ``detach_()`` since (PyTorch's
# SavedVariable::unpack; the missing space is PyTorch's)
SAVED_DETACHED = (
    "Trying to use a saved tensor that has been detached in-place, i.e. with .detach_()."
    "This is not supported, please use out-of-place `.detach()` instead"
)


def short_node_name(name: str) -> str:
    """The op name PyTorch prints for a node in the saved-tensor message ('Exp', 'Sum1'); a
    node PyTorch writes by hand keeps its qualified name."""
    if name.startswith("torch::"):
        return name
    if name.endswith("Backward0"):
        return name[: -len("Backward0")]
    return name.replace("Backward", "")


# The scalar types with a legacy tensor class: PyTorch's Python layer rewrites "CPUFloatType" in
# its messages into "torch.FloatTensor" for these only (``processErrorMsg``).
_LEGACY_CLASSES = frozenset("Byte Char Short Int Long Half Float Double".split())


def tensor_type_name(dtype, device) -> str:
    """The type PyTorch's messages name: ``torch.FloatTensor`` / ``torch.cuda.FloatTensor``, or
    ``CPUComplexFloatType`` for a dtype without a legacy class (bool, bfloat16, complex)."""
    if dtype._legacy not in _LEGACY_CLASSES:
        return f"{device.type.upper()}{dtype._legacy}Type"
    prefix = "torch." if device.type == "cpu" else f"torch.{device.type}."
    return f"{prefix}{dtype._legacy}Tensor"


# --- hooks and create_graph (issue 5) ----------------------------------------------------------
HOOK_NO_GRAD = "cannot register a hook on a tensor that doesn't require gradient"
POST_ACC_HOOK_NON_LEAF = "post accumulate grad hooks cannot be registered on non-leaf tensors"
HOOK_TYPE = "expected Variable, but hook returned '{}'"
HOOK_SIZE = "hook '{}' has changed the size of value"
HOOK_NOT_TUPLE = "expected tuple, but hook returned '{}'"
HOOK_COUNT = "hook '{}' has returned an incorrect number of values (got {}, but expected {})"
HOOK_REPLACE_NONE = "can't replace a None gradient with a non-None value"
HOOK_TYPE_CHANGED = "hook '{}' has changed the type of value (was {} got {})"
HOOK_DEVICE_CHANGED = "hook '{}' has changed the device of value (was {} got {})"
BACKWARD_CREATE_GRAPH = (
    "Using backward() with create_graph=True will create a reference cycle between the "
    "parameter and its gradient which can cause a memory leak. We recommend using autograd.grad "
    "when creating the graph to avoid this. If you have to use this function, make sure to reset "
    "the .grad fields of your parameters to None after use to break the cycle and avoid the leak. "
    "(Triggered internally at /__w/pytorch/pytorch/torch/csrc/autograd/engine.cpp:1307.)"
)

MIXED_DTENSOR = (
    "aten.{}.Tensor got mixed torch.Tensor and DTensor, need to convert all torch.Tensor to "
    "DTensor before calling distributed operators!"
)


# --- PyTorch's argument parser: wrong argument types (python_arg_parser.cpp) ------------------
# Note [Argument parser errors]: a call no signature of a function accepts raises, as PyTorch's
# ``PythonArgParser::print_error``: when exactly one signature takes that many arguments, that
# signature's first failing check ("argument 'other' (position 2) must be Tensor, not str");
# otherwise "received an invalid combination of arguments", which lists every signature
# (``format_invalid_args``). Signatures are given as PyTorch prints them, ``"(Tensor input,
# Number other, *, Tensor out = None)"``. Only error paths call this: frontends test their
# operands with a cheap ``isinstance`` first.

MUST_BE = "{}(): argument '{}' (position {}) must be {}, not {}"
KW_MUST_BE = "{}(): argument '{}' must be {}, not {}"
INVALID_ARGUMENTS = "{}() received an invalid combination of arguments - got {}, but expected "

_TORCH_CLASSES = {"dtype", "device", "Size", "layout", "memory_format"}


def torch_module(module: str) -> str:
    """leafgrad's module path as PyTorch's: ``leafgrad.nn.modules.linear`` is
    ``torch.nn.modules.linear``; private modules (``leafgrad._dtype``) are ``torch``."""
    if module == "leafgrad" or module.startswith("leafgrad."):
        parts = ["torch"]
        for p in module.split(".")[1:]:
            if p.startswith("_"):
                break
            parts.append(p)
        return ".".join(parts)
    return module


def typename(obj) -> str:
    """``torch.typename``: a tensor's legacy type (``'torch.FloatTensor'``), else the dotted name
    of the object (a class or function) or of its class, as PyTorch's modules name them."""
    from ._tensor import Tensor  # the Tensor class imports this module

    if isinstance(obj, Tensor):
        return obj.type()
    module = getattr(obj, "__module__", "") or ""
    if hasattr(obj, "__qualname__"):
        qualname = obj.__qualname__
    elif hasattr(obj, "__name__"):
        qualname = obj.__name__
    else:
        module = obj.__class__.__module__ or ""
        qualname = obj.__class__.__qualname__
    module = torch_module(module)
    if module in ("", "builtins"):
        return qualname
    return f"{module}.{qualname}"


def one_argument(qualname: str):
    """A function PyTorch defines in C with one positional argument (``METH_O``): CPython's
    refusals of other calls, under ``qualname`` (``torch._VariableFunctionsClass.from_numpy``)."""

    def decorate(fn):
        @functools.wraps(fn)
        def one(*args, **kwargs):
            if kwargs:
                raise TypeError(f"{qualname}() takes no keyword arguments")
            if len(args) != 1:
                raise TypeError(f"{qualname}() takes exactly one argument ({len(args)} given)")
            return fn(args[0])

        return one

    return decorate


def data_first(name: str, method: bool = False):
    """A factory whose PyTorch signature takes one positional argument, ``data`` (``tensor``,
    ``as_tensor``; ``method``: besides ``self``, ``Tensor.new_tensor``): the parser's refusals
    of other counts."""
    skip = 1 if method else 0

    def decorate(fn):
        @functools.wraps(fn)
        def call(*args, **kwargs):
            n = len(args) - skip
            if n > 1:
                raise TypeError(f"{name}() takes 1 positional argument but {n} were given")
            if n < 1 and "data" not in kwargs:
                raise TypeError(missing_args(name, ["data"]))
            return fn(*args, **kwargs)

        return call

    return decorate


def need_tensor(x, fn: str, name: str = "input", pos: int = 1):
    """``x``, or PyTorch's argument-parser error where ``fn`` wants a Tensor (methods do not count
    ``self`` in ``pos``)."""
    from ._tensor import Tensor  # the Tensor class imports this module

    if not isinstance(x, Tensor):
        raise TypeError(MUST_BE.format(fn, name, pos, "Tensor", py_typename(x)))
    return x


def py_typename(x) -> str:
    """The type name PyTorch prints for ``x`` (CPython's ``tp_name``): a Python class's bare name,
    an extension type's dotted one (``numpy.ndarray``); leafgrad's dtype, device, ... as torch's."""
    cls = type(x)
    if cls.__module__.startswith("leafgrad") and cls.__name__ in _TORCH_CLASSES:
        return f"torch.{cls.__name__}"
    if cls.__flags__ & (1 << 9) or cls.__module__ == "builtins":  # Py_TPFLAGS_HEAPTYPE
        return cls.__name__
    return f"{cls.__module__}.{cls.__name__}"


def _is_number(x) -> bool:
    import numpy as np

    return isinstance(x, (bool, int, float, complex, np.generic))


def float_refused(x) -> bool:
    """Whether PyTorch's parser refuses ``x`` for a ``float`` argument (``THPUtils_checkDouble``):
    it takes a Python int, float or bool, a NumPy scalar, and a 0-d tensor that does not
    require grad (a 0-d JAX array: leafgrad's own calls)."""
    import jax
    import numpy as np

    from ._tensor import Tensor

    if isinstance(x, (int, float, np.integer, np.floating, np.complexfloating, np.bool_)):
        return False
    if isinstance(x, Tensor):
        return x.ndim != 0 or x.requires_grad
    return not (isinstance(x, jax.Array) and x.ndim == 0)


def number_refused(x) -> bool:
    """Whether PyTorch's parser refuses ``x`` for a ``Scalar`` (``Number``) argument: as for a
    ``float`` argument, and a Python complex is taken too."""
    return not isinstance(x, complex) and float_refused(x)


VALUE_OVERFLOW = "value cannot be converted to type {} without overflow"


def real_scalar(x, c_type: str):
    """A ``Scalar`` argument as a kernel that reads it as the real C type ``c_type`` does
    (``Scalar::to<c_type>()``): a complex number (or complex 0-d tensor) with an imaginary part
    is refused with PyTorch's overflow message, one without becomes its real part; anything
    else is returned as given."""
    import numpy as np

    from ._tensor import Tensor

    if isinstance(x, Tensor) and x.ndim == 0 and x.dtype.is_complex:
        x = x.item()
    if isinstance(x, (complex, np.complexfloating)):
        if c_type == "bool":  # no overflow check for bool
            return bool(x)
        if x.imag != 0:
            raise RuntimeError(VALUE_OVERFLOW.format(c_type))
        return float(x.real)
    return x


def kernel_scalar(x, d, c_type: str):
    """``real_scalar`` for a floating kernel on dtype ``d``; on another dtype the kernel's
    dispatch refuses ``d`` first, so the value passes on (its real part, where complex)."""
    if d.is_floating_point:
        return real_scalar(x, c_type)
    return x.real if isinstance(x, complex) else x


def opmath_c_type(d) -> str:
    """The C type a kernel computing in ``at::opmath_type`` of dtype ``d`` reads its Scalars as:
    ``double`` for float64, ``float`` for the other floating dtypes, the integer's own type."""
    if d.is_floating_point:
        return "double" if d.name == "float64" else "float"
    return scalar_c_type(d)


def scalar_c_type(d) -> str:
    """The C type ``scalar_t`` of dtype ``d`` as PyTorch's overflow message spells it."""
    names = {
        "int64": "int64_t",
        "int32": "int",
        "int16": "int16_t",
        "int8": "int8_t",
        "uint8": "uint8_t",
    }
    return names.get(d.name) or c_type_name(d)


def device_refused(x) -> bool:
    """Whether PyTorch's parser refuses ``x`` for a ``torch.device`` argument: it takes a device,
    a str, an index (an int or NumPy integer, not a bool) and None; not a tensor."""
    import numpy as np

    from ._device import device
    from ._tensor import Tensor

    if x is None or isinstance(x, (device, str)):
        return False
    return isinstance(x, (bool, Tensor)) or not isinstance(x, (int, np.integer))


def int_refused(x) -> bool:
    """Whether PyTorch's parser refuses ``x`` for an ``int`` argument: it takes a Python int (not
    a bool), a NumPy integer, an object with ``__index__`` and an integer tensor of one element."""
    import numpy as np

    from ._tensor import Tensor

    if isinstance(x, bool):
        return True
    if isinstance(x, Tensor):
        dtype = x._dtype
        return (
            dtype.is_floating_point
            or dtype.is_complex
            or dtype.name == "bool"
            or (x._data.size != 1)
        )
    if isinstance(x, (np.integer, int)):
        return False
    if isinstance(x, (float, complex, str, bytes, np.generic, np.ndarray)) or x is None:
        return True
    return not hasattr(type(x), "__index__")


def item_refused(x) -> bool:
    """Whether PyTorch's parser refuses ``x`` as an element of an int list (or as a bare int
    where it takes one): ``int_refused``, but a one-element bool tensor is taken as an index
    (``is_int_or_symint``, ``Tensor.__index__``)."""
    from ._tensor import Tensor

    if isinstance(x, Tensor) and x._dtype.name == "bool":
        return x._data.size != 1
    return int_refused(x)


# Note [SymInt lists]: PyTorch's parser reads the elements of a ``SymInt[]`` argument (sizes,
# shapes, pads) through its SymInt caster, which refuses a bool tensor the list check took with
# an internal check's message; an ``int[]`` (dims) takes it as an index.
SYMINT_BOOL = (
    "Expected scalar.isIntegral( false) to be true, but got false.  (Could this error message "
    "be improved?  If so, please report an enhancement request to PyTorch.)"
)


def check_symint_bools(op: str, name: str, x) -> None:
    """Raise PyTorch's error for a bool tensor among the ints of ``op``'s SymInt list ``name``
    (Note [SymInt lists])."""
    from ._int_args import SYMINT_LISTS
    from ._tensor import Tensor

    items = x if isinstance(x, (list, tuple)) else (x,)
    if f"{op}.{name}" in SYMINT_LISTS and any(
        isinstance(item, Tensor) and item._dtype.name == "bool" for item in items
    ):
        raise RuntimeError(SYMINT_BOOL)


def ints_error(op: str, name: str, where: str, x) -> str | None:
    """PyTorch's parser's message for ``x`` given as the ``tuple of ints`` argument ``name`` of
    ``op`` (``where``: " (position n)" or ""), None if it takes it: an int, or a list/tuple of
    ints (bools taken after the first element, which is unpacked as an index). A bool tensor it
    takes raises at once where the list is a SymInt list (Note [SymInt lists])."""
    if type(x) in (list, tuple) and all(type(item) is int for item in x):
        return None
    if isinstance(x, (list, tuple)):
        for k, item in enumerate(x):
            if (k and isinstance(item, bool)) or not item_refused(item):
                continue
            kind = py_typename(item)
            if k == 0 and not where:  # given by keyword: the parser names the list's type
                return f"{op}(): argument '{name}' must be tuple of ints, not {py_typename(x)}"
            if k == 0:
                return (
                    f"{op}(): argument '{name}'{where} must be tuple of ints, but found "
                    f"element of type {kind} at pos 0"
                )
            return (
                f"{op}(): argument '{name}' failed to unpack the object at pos {k + 1} with "
                f'error "type must be tuple of ints,but got {kind}"'
            )
        check_symint_bools(op, name, x)
        return None
    if not item_refused(x):  # an int, or an integer tensor of one element
        return None
    return f"{op}(): argument '{name}'{where} must be tuple of ints, not {py_typename(x)}"


def spread_ints_error(op: str, name: str, items: tuple) -> str | None:
    """The parser's message for an int list given spread out (``x.permute(1.0, 0)``), None if it
    takes it: the first value decides whether the call is read as a spread list at all."""
    first = items[0]
    if isinstance(first, bool) or item_refused(first):
        return f"{op}() takes 1 positional argument but {len(items)} were given"
    return ints_error(op, name, "", tuple(items))


def ints_refused(x) -> bool:
    """Whether the parser refuses ``x`` for a ``tuple of ints`` argument."""
    return ints_error("", "", "", x) is not None


def _matches(type_name: str, x) -> bool:
    """Whether the parser accepts ``x`` for a parameter of ``type_name`` (the types used here)."""
    from . import _dtype
    from ._tensor import Tensor

    if type_name == "Tensor":
        return isinstance(x, Tensor)
    if type_name == "object":  # the parser takes anything there (``Tensor.new(data)``)
        return True
    if type_name == "int":
        return not int_refused(x)
    if type_name == "tuple of ints":
        return not ints_refused(x)
    if type_name == "float":  # a Python or NumPy real number, or a 0-d tensor without grad
        import numpy as np

        if isinstance(x, Tensor):
            return x.ndim == 0 and not x.requires_grad
        return isinstance(x, (int, float, np.integer, np.floating))
    if type_name == "Number":
        return _is_number(x) or isinstance(x, Tensor) and x.ndim == 0
    if type_name == "torch.dtype":
        return isinstance(x, _dtype.dtype) or _dtype.python_number_type(x)
    if type_name == "torch.device":  # an index may be a NumPy integer (``THPUtils_checkLong``)
        return x is not None and not device_refused(x)
    if type_name == "torch.memory_format":
        return type(x).__name__ == "memory_format"
    if type_name == "bool":
        return isinstance(x, bool)
    if type_name == "str":
        return isinstance(x, str)
    if type_name == "torch.Generator":  # PyTorch's generator arguments are all ``Generator?``
        return x is None or py_typename(x) == "Generator"
    if type_name == "torch.layout":
        return type(x).__name__ == "layout"
    if type_name == "tuple of Tensors":
        return isinstance(x, (list, tuple)) and all(isinstance(t, Tensor) for t in x)
    if type_name in ("tuple of floats", "tuple of Scalars"):
        return isinstance(x, (list, tuple)) and all(
            _is_number(v) or isinstance(v, Tensor) and v.ndim == 0 for v in x
        )
    return py_typename(x) == type_name.rsplit(".", 1)[-1]


def _takes(type_name: str, name: str, x, numbers: bool = False) -> bool:
    """``_matches`` for the parameter ``name``: a ``size`` is PyTorch's ``SymInt[]``, which
    (unlike ``int[1] dim``) takes no bare int. ``numbers``: the op's Tensor parameters take
    Python numbers (PyTorch's ``allow_numbers_as_tensors``)."""
    if numbers and type_name == "Tensor" and _is_number(x):
        return True
    if name == "size" and type_name == "tuple of ints" and not isinstance(x, (list, tuple)):
        return False
    return _matches(type_name, x)


@functools.cache
def _parameters(signature: str) -> tuple[tuple[str, str, bool, bool], ...]:
    """``(type, name, default, keyword_only)`` of each parameter of a printed signature; the
    default as printed ("" for none: a parameter takes None where its default is "None")."""
    params, kw_only = [], False
    for part in signature[1:-1].split(", "):
        if part == "*":
            kw_only = True
        elif part:
            decl, _, default = part.partition(" = ")
            type_name, _, name = decl.rpartition(" ")
            params.append((type_name, name, default, kw_only))
    return tuple(params)


def _signature_error(name: str, params, args: tuple, kwargs: dict, numbers: bool = False) -> str:
    """The first check PyTorch's ``FunctionSignature::parse`` fails for the only plausible
    signature: too many positional arguments, a wrong type, an unknown keyword ("" for others:
    the caller then gives the combination message)."""
    positional = sum(not p[3] for p in params)
    if len(args) > positional:
        least = sum(not p[2] for p in params)
        if least != positional:
            takes = f"from {least} to {positional} positional arguments"
        else:
            takes = f"{positional} positional argument{'' if positional == 1 else 's'}"
        return f"{name}() takes {takes} but {len(args)} were given"
    for i, (type_name, pname, optional, _) in enumerate(params):
        if i < len(args):
            x, where = args[i], i
        elif pname in kwargs:
            x, where = kwargs[pname], None
        elif optional:
            continue
        else:
            return missing_args(name, [p[1] for p in params[i:] if not p[2]])
        if x is None and optional == "None" or _takes(type_name, pname, x, numbers):
            continue
        if type_name == "tuple of ints" and isinstance(x, (list, tuple)):
            position = "" if where is None else f" (position {where + 1})"
            message = ints_error(name, pname, position, x)  # the element it refused
            if message is not None:
                return message
        if where is None:
            return KW_MUST_BE.format(name, pname, type_name, py_typename(x))
        return MUST_BE.format(name, pname, where + 1, type_name, py_typename(x))
    names = [p[1] for p in params]
    for key in kwargs:
        if key in names[: len(args)]:
            return f"{name}() got multiple values for argument '{key}'"
        if key not in names:
            return f"{name}() got an unexpected keyword argument '{key}'"
    return ""


def missing_args(name: str, names) -> str:
    """PyTorch's ``missing_args`` message, its plural as PyTorch prints it."""
    s = "s" if len(names) == 1 else ""
    quoted = ", ".join(f'"{n}"' for n in names)
    return f"{name}() missing {len(names)} required positional argument{s}: {quoted}"


def bind(signatures, args: tuple, kwargs: dict, numbers: bool = False, none_ok=frozenset()):
    """``(index, {name: value})`` of the first of ``signatures`` that takes the call, as
    PyTorch's parser tries them; None when none does. ``none_ok``: the parameters that take
    None without showing it (``int[1]? dim`` is printed "tuple of ints dim")."""
    for k, sig in enumerate(signatures):
        params = _parameters(sig)
        if len(args) > sum(not p[3] for p in params):
            continue
        values, used = {}, 0
        for i, (type_name, pname, optional, _) in enumerate(params):
            if i < len(args):
                x = args[i]
            elif pname in kwargs:
                x, used = kwargs[pname], used + 1
            elif optional:
                continue
            else:
                break
            if not (
                x is None
                and (optional == "None" or pname in none_ok)
                or _takes(type_name, pname, x, numbers)
            ):
                break
            values[pname] = x
        else:
            if used == len(kwargs):
                return k, values
    return None


# libstdc++'s std::hash<std::string> (_Hash_bytes, 64-bit): PyTorch collects the keyword
# arguments into an unordered_map, so its message lists them in that map's order.
_M64 = (1 << 64) - 1
_HASH_MUL = (0xC6A4A793 << 32) + 0x5BD1E995


def _shift_mix(v: int) -> int:
    return v ^ (v >> 47)


def _hash_bytes(b: bytes, seed: int = 0xC70F6907) -> int:
    n, aligned = len(b), len(b) & ~7
    h = (seed ^ (n * _HASH_MUL)) & _M64
    for p in range(0, aligned, 8):
        data = (_shift_mix((int.from_bytes(b[p : p + 8], "little") * _HASH_MUL) & _M64)) * _HASH_MUL
        h = ((h ^ (data & _M64)) * _HASH_MUL) & _M64
    if n & 7:
        h = ((h ^ int.from_bytes(b[aligned:], "little")) * _HASH_MUL) & _M64
    return _shift_mix((_shift_mix(h) * _HASH_MUL) & _M64)


def _map_order(keys) -> list:
    """The iteration order of a libstdc++ unordered_map after inserting ``keys``: 13 buckets up
    to 13 keys; a key goes before the first key of its bucket, or to the front of the list."""
    nb = 13 if len(keys) <= 13 else 29
    out: list = []
    bucket = {k: _hash_bytes(k.encode()) % nb for k in keys}
    for k in keys:
        at = next((i for i, o in enumerate(out) if bucket[o] == bucket[k]), 0)
        out.insert(at, k)
    return out


def _described(x) -> str:
    name = py_typename(x)
    if isinstance(x, (tuple, list)):
        items = ", ".join(py_typename(v) for v in x)
        if isinstance(x, tuple):
            return f"{name} of ({items}{',' if len(x) == 1 else ''})"
        return f"{name} of [{items}]"
    return name


def invalid_arguments(
    name: str, signatures, args: tuple = (), kwargs: dict | None = None, numbers: bool = False
) -> str:
    """PyTorch's parser message for a call that matches none of ``signatures`` (Note [Argument
    parser errors])."""
    kwargs = kwargs or {}
    parsed = [_parameters(s) for s in signatures]
    n = len(args) + len(kwargs)
    plausible = [p for p in parsed if sum(not q[2] for q in p) <= n <= len(p)]
    if len(plausible) == 1:
        msg = _signature_error(name, plausible[0], args, kwargs, numbers)
        if msg:
            return msg
    keys = _map_order(list(kwargs))
    got = "".join(f"{py_typename(a)}, " for a in args)
    got += "".join(f"{k}={py_typename(kwargs[k])}, " for k in keys)
    got = f"({got[:-2] if args else got})"  # PyTorch's ``_argDesc`` keeps a last ", " so
    head = f"{name}() received an invalid combination of arguments - got "
    if len(signatures) == 1:  # PyTorch's format for one option
        option = _option(signatures[0])
        unknown = _unknown_keywords(option, keys)
        if unknown:
            return head + "unrecognized keyword arguments: " + ", ".join(unknown)
        if len(option) == n:
            got = _formatted_args(option, args, kwargs)
        return head + f"{got}, but expected {signatures[0]}"
    lines = [INVALID_ARGUMENTS.format(name, got) + "one of:"]
    for sig in signatures:
        lines.append(f" * {sig}")
        option = _option(sig)
        if len(option) != n:
            continue
        unknown = _unknown_keywords(option, keys)
        if unknown:
            lines.append(
                "      didn't match because some of the keywords were incorrect: "
                + ", ".join(unknown)
            )
            continue
        lines.append(
            "      didn't match because some of the arguments have invalid types: "
            + _formatted_args(option, args, kwargs)
        )
    return "\n".join(lines) + "\n"


def _option(signature: str) -> list:
    """``(type, name)`` of each comma-separated part of a printed signature, as PyTorch's
    ``_parseOption`` reads them: the last word is the name (the "*" and a default value too,
    so that a keyword given to a parameter with a default never matches)."""
    return [part.rpartition(" ")[::2] for part in signature[1:-1].split(", ")]


def _unknown_keywords(option: list, keys: list) -> list:
    """PyTorch's ``_tryMatchKwargs``: the keywords given are matched against the option's last
    names, as many as there are keywords."""
    names = [o[1] for o in option][max(len(option) - len(keys), 0) :]
    return [k for k in keys if k not in names]


def _formatted_args(option: list, args: tuple, kwargs: dict) -> str:
    """PyTorch's ``_formattedArgDesc``: each argument given, marked where its type does not
    match the option's (red on a terminal, between "!" otherwise)."""
    tty = _isatty()
    bad, end = ("\33[31;1m", "\33[0m") if tty else ("!", "!")
    good, good_end = ("\33[32;1m", "\33[0m") if tty else ("", "")
    parts = []
    for i, (type_name, pname) in enumerate(option):
        x = args[i] if i < len(args) else kwargs[pname]
        text = ("" if i < len(args) else pname + "=") + _described(x)
        ok = _matches_printed(type_name, x)
        parts.append(f"{good}{text}{good_end}" if ok else f"{bad}{text}{end}")
    # each argument is followed by ", ", the last one taken off only after positional ones
    return f"({', '.join(parts)}{', ' if parts and not args else ''})"


def _matches_printed(type_name: str, x) -> bool:
    """``invalid_arguments``'s looser test: the printed type against ``x``'s type name
    (``Number`` never matches, ``float`` takes ints: PyTorch's ``_buildType``)."""
    name = py_typename(x)
    if type_name == "float":
        return name in ("float", "int", "long")
    if type_name == "int":
        return name in ("int", "long")
    return name == type_name


def _isatty() -> bool:
    import os

    try:
        return os.isatty(1) and os.isatty(2)
    except OSError:
        return False


# AT_DISPATCH's error for a dtype a kernel has no version of (Note [Kernel dtype refusals] in
# ops/kernel_dtypes.py)
KERNEL_DTYPE = "\"{}\" not implemented for '{}'"


# PyTorch's engine casts a root gradient to its integer output's dtype and asserts
ENGINE_GRAD_DTYPE = (
    'isDifferentiableType(grad.scalar_type()) INTERNAL ASSERT FAILED at "/__w/pytorch/pytorch/'
    'torch/csrc/autograd/engine.cpp":998, please report a bug to PyTorch. '
)


def kernel_refusal(err: BaseException) -> bool:
    """Whether ``err`` is ``KERNEL_DTYPE``: raised by the kernel an iterator has chosen, after the
    iterator has checked the operands' shapes (a meta function's dtype checks come before)."""
    text = str(err)
    return (
        type(err) is NotImplementedError
        and text.startswith('"')
        and "\" not implemented for '" in text
    )


# an op given an undefined tensor (PyTorch's formula negating an undefined gradient)
UNDEFINED_ARGUMENT = (
    "Expected a proper Tensor but got None (or an undefined Tensor in C++) for argument #{} '{}'"
)

# PyTorch's ``update_tensor_hooks_on_new_gradfn`` when the old node has no retains-grad hook at
# the tensor's new output number (``inplace.take_history``)
RETAINS_GRAD_HOOK_ASSERT = (
    'out != nullptr INTERNAL ASSERT FAILED at "/__w/pytorch/pytorch/torch/csrc/autograd/'
    'variable.cpp":207, please report a bug to PyTorch. '
)
