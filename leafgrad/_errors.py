"""Every message a user can see, PyTorch's text byte for byte, kept in one place as named templates.

Where leafgrad adds help of its own, it goes on a line after PyTorch's text (see ``HELP_*``).
"""

from __future__ import annotations

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


def warn(message: str, category=UserWarning, stacklevel: int = 3) -> None:
    """Issue a PyTorch warning with its exact text."""
    warnings.warn(message, category, stacklevel=stacklevel)


_warned_once: set[str] = set()
_warn_always = [False]


def warn_once(message: str, category=UserWarning, stacklevel: int = 3) -> None:
    """PyTorch's ``TORCH_WARN_ONCE``: once per process unless ``set_warn_always(True)``."""
    if _warn_always[0] or message not in _warned_once:
        _warned_once.add(message)
        warnings.warn(message, category, stacklevel=stacklevel)


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


def short_node_name(name: str) -> str:
    """The op name PyTorch prints for a node in the saved-tensor message ('Exp', 'Sum1')."""
    if name.endswith("Backward0"):
        return name[: -len("Backward0")]
    return name.replace("Backward", "")


def tensor_type_name(dtype, device) -> str:
    """``torch.FloatTensor`` / ``torch.cuda.FloatTensor``: PyTorch's legacy type string."""
    prefix = "torch." if device.type == "cpu" else f"torch.{device.type}."
    return f"{prefix}{dtype._legacy}Tensor"


# --- hooks and create_graph (issue 5) ----------------------------------------------------------
HOOK_NO_GRAD = "cannot register a hook on a tensor that doesn't require gradient"
POST_ACC_HOOK_NON_LEAF = "post accumulate grad hooks cannot be registered on non-leaf tensors"
HOOK_TYPE = "expected Variable, but hook returned '{}'"
HOOK_SIZE = "hook '{}' has changed the size of value"
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
