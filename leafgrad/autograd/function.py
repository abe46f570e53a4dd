"""Custom autograd Functions: ``leafgrad.autograd.Function``, PyTorch's ``torch.autograd.Function``.

A subclass states ``forward`` and ``backward`` (or ``vjp``) as static methods and is called
through ``Fn.apply(*args)``. As in PyTorch, the ``ctx`` that ``forward`` (or ``setup_context``)
fills is the node itself: an instance of ``<Fn>Backward``, a ``Node`` subclass made once per
Function class, and it is what ``y.grad_fn`` returns.

Note [Function outputs]: ``apply`` follows PyTorch's ``THPFunction_apply`` and ``_wrap_outputs``
(``python_function.cpp``, ``custom_function.cpp``) rule for rule: forward runs under ``no_grad``;
an input returned as-is comes back as a view of it (``view_as``); outputs marked dirty take the
node (a view input takes it through ``CopySlices``, as an in-place op on a view does); outputs
marked non-differentiable, or not of a floating or complex dtype, are not recorded.

Note [Function backward]: the engine hands the node its output gradients; ``_apply`` (arrays)
and ``_apply_graph`` (Tensors, ``create_graph=True``) both wrap them as Tensors, materialize the
missing ones as zeros (unless ``set_materialize_grads(False)``), call the user's backward, and
check what it returned as PyTorch's ``PyNode::apply`` and the engine's ``validate_outputs`` do:
the count, None for non-tensor inputs, shapes (a broadcast gradient is summed back), dtypes.
"""

from __future__ import annotations

import functools
import inspect
import warnings

from .. import _errors as E
from . import forward_ad, grad_mode
from . import saved as saved_mod
from .graph import Node, call_node

__all__ = [
    "FunctionCtx",
    "BackwardCFunction",
    "FunctionMeta",
    "Function",
    "once_differentiable",
    "InplaceFunction",
]

# --- PyTorch's texts --------------------------------------------------------------------------
NOT_INSTANTIATE = (
    "{} should not be instantiated. Methods on autograd functions are all static, so you should "
    "invoke them on the class itself. Instantiating an autograd function will raise an error in "
    "a future version of PyTorch."
)
LEGACY_CALL = (
    "Legacy autograd function with non-static forward method is deprecated. Please use new-style "
    "autograd function with static forward method. (Example: "
    "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)"
)
NO_FORWARD = "You must implement the forward function for custom autograd.Function."
NO_BACKWARD = (
    "You must implement either the backward or vjp method for your custom autograd.Function to "
    "use it with backward mode AD."
)
NO_JVP = (
    "You must implement the jvp function for custom autograd.Function to use it with forward mode "
    "AD."
)
NO_SETUP_CONTEXT = "setup_context is not implemented."
BOTH_BACKWARD_VJP = (
    "Implementing both 'backward' and 'vjp' for a custom Function is not allowed. You should only "
    "implement one of them."
)
WRONG_COUNT = "function {} returned an incorrect number of gradients (expected {}, got {})"
NOT_NONE = (
    "function {} returned a gradient different than None at position {}, but the corresponding "
    "forward input was not a Variable"
)
NOT_VARIABLE = "expected Variable or None (got {})"
BAD_SHAPE = (
    "Function {} returned an invalid gradient at index {} - got {} but expected shape compatible "
    "with {}"
)
BAD_DEVICE = (
    "Function {} returned an invalid device for gradient at index {} - expected device {} but got "
    "{}"
)
SAVE_NOT_TENSOR = "save_for_backward can only save variables, but argument {} is of type {}"
SAVE_FOR_FORWARD_NOT_TENSOR = (
    "save_for_forward expects all arguments to be tensors; you should save non-tensors as "
    "attributes on ctx."
)
# PyTorch's own texts stop here (its format drops the rest).
DIRTY_NOT_TENSOR = "mark_dirty can only accept variables, but argument "
NON_DIFF_NOT_TENSOR = "mark_non_differentiable only accepts variable arguments, but got "
DIRTY_LEAF = "a leaf Variable that requires grad has been used in an in-place operation."
DIRTY_NOT_INPUT = (
    "ctx.mark_dirty() received a tensor that was not an input. Only input Tensors that have been "
    "mutated should be passed to ctx.mark_dirty(). (Triggered internally at "
    "/__w/pytorch/pytorch/torch/csrc/autograd/custom_function.cpp:320.)"
)
DIRTY_VIEW_MULTI = (
    "If your Function modifies inplace an input that is a view of another Tensor, your Function "
    "cannot return more than one Tensor. This is not supported by the current autograd engine. "
    "You should either make sure the input is not a view (using .clone() for example) or make "
    "your Function only return one Tensor (potentially splitting it into two Functions: one doing "
    "the inplace that returns a single Tensor and a second one that does the other operations). "
    "You can ask on the forum https://discuss.pytorch.org/ if you need help to do this change."
)
DIRTY_NOT_RETURNED = (
    "Some elements marked as dirty during the forward method were not returned as output. The "
    "inputs that are modified inplace must all be outputs of the Function."
)
INPUT_SAVED_SETUP = (
    "An input that has been returned as-is as output is being saved for backward. This is not "
    "supported if you override setup_context. You should return and save a view of the input "
    "instead, e.g. with x.view_as(x) or setup ctx inside the forward function itself."
)
MATERIALIZE_NOT_READABLE = (
    "attribute 'materialize_grads' of 'torch._C._FunctionBase' objects is not readable"
)
SAVED_VARIABLES = "'saved_variables' is deprecated; use 'saved_tensors'"
SHARED_STORAGE = (
    "`mark_shared_storage` is deprecated. Tensors with shared storages are automatically "
    "tracked. Note that calls to `set_()` are not tracked"
)
ONCE_DIFFERENTIABLE = (
    "trying to differentiate twice a function that was marked with @once_differentiable"
)
# The view-on-rebase message of an output view of a custom Function (PyTorch's
# ``CreationMeta::IN_CUSTOM_FUNCTION``); ``ops.inplace.view_rebase_error`` uses it.
VIEW_IN_CUSTOM_FUNCTION = (
    "Output {} of {} is a view and {}. This view was created inside a custom Function (or because "
    "an input was returned as-is) and the autograd logic to handle view+inplace would override "
    "the custom backward associated with the custom Function, leading to incorrect gradients. "
    "This behavior is forbidden. You can fix this by cloning the output of the custom Function."
)


def _tensor_cls():
    from .._tensor import Tensor

    return Tensor


def _shape_str(shape) -> str:
    return "[" + ", ".join(str(s) for s in shape) + "]"


# --- the ctx ------------------------------------------------------------------------------------


class FunctionCtx:
    """What ``forward`` / ``setup_context`` use to prepare the backward (``ctx``)."""

    def save_for_backward(self, *tensors) -> None:
        """Save tensors (or None) for ``backward``; read them back with ``ctx.saved_tensors``."""
        self.to_save = tensors

    def save_for_forward(self, *tensors) -> None:
        """Save tensors for ``jvp`` (forward AD)."""
        Tensor = _tensor_cls()
        for t in tensors:
            if not (isinstance(t, Tensor) or t is None):
                raise AssertionError(SAVE_FOR_FORWARD_NOT_TENSOR)
        self.saved_for_forward = tensors

    def mark_dirty(self, *args) -> None:
        """Declare inputs that ``forward`` modified in place (they must be returned)."""
        self.dirty_tensors = args

    def mark_shared_storage(self, *pairs) -> None:
        """Deprecated no-op, as in PyTorch."""
        warnings.warn(SHARED_STORAGE, FutureWarning, stacklevel=2)

    def mark_non_differentiable(self, *args) -> None:
        """Declare outputs that are not differentiable (they do not require grad)."""
        self.non_differentiable = args

    def set_materialize_grads(self, value: bool) -> None:
        """Whether missing output gradients reach ``backward`` as zeros (default) or None."""
        self.materialize_grads = value


_ContextMethodMixin = FunctionCtx


class _HookMixin:
    @staticmethod
    def _register_hook(backward_hooks, hook):
        from .graph import RemovableHandle, _HookDict

        if backward_hooks is None:
            backward_hooks = _HookDict()
        handle = RemovableHandle(backward_hooks)
        backward_hooks[handle.id] = hook
        return backward_hooks, handle


class _SavedOutput:
    """An output saved for backward: held by value, not by the tensor, so that the node and its
    output do not keep each other alive (PyTorch's ``SavedVariable`` with ``is_output``)."""

    __slots__ = ("data", "dtype", "device", "output_nr", "counter", "check")

    def __init__(self, t, node) -> None:
        from ..ops.dispatch import SavedVersion

        self.data, self.dtype, self.device = t._data, t._dtype, t._device
        self.output_nr = t._output_nr
        self.counter = t._version_counter
        meta = (t._dtype, t._device, t._data.shape)
        self.check = SavedVersion(
            None, self.counter, self.counter.value, None, t._output_nr, node, meta
        )

    def unpack(self, node):
        self.check()
        Tensor = _tensor_cls()
        t = Tensor._make(
            self.data,
            self.dtype,
            self.device,
            requires_grad=True,
            grad_fn=node,
            output_nr=self.output_nr,
        )
        t._version_counter = self.counter
        return t


class _SavedInput:
    """A saved tensor that is not an output: the tensor itself is returned (PyTorch's
    ``saved_original_``), after the version check."""

    __slots__ = ("tensor", "check")

    def __init__(self, t) -> None:
        from ..ops.dispatch import SavedVersion

        self.tensor = t
        self.check = SavedVersion(t, t._version_counter, t._version_counter.value, 0)

    def unpack(self, node):
        self.check()
        return self.tensor


class BackwardCFunction(Node, FunctionCtx, _HookMixin):
    """The node of one ``Function.apply`` and the ``ctx`` of its forward (Note [Function
    backward]). One subclass per Function, named ``<Function>Backward``."""

    __dir__ = object.__dir__  # a Python object in PyTorch too: every attribute shows
    __repr__ = object.__repr__  # and Python's repr: ``<module.FBackward object at 0x...>``

    _forward_cls = None

    def __init__(self) -> None:
        Node.__init__(self, ())
        self.to_save = None
        self.dirty_tensors = None
        self.non_differentiable = None
        self.saved_for_forward = None
        self._materialize = True
        self.materialize_non_diff_grads = True
        self.needs_input_grad = ()
        self._is_variable_input = ()
        self._input_info = ()  # (shape, dtype, device) of each tensor input
        self._output_info = ()  # (shape, dtype, device) or None, per output
        self._saved = ()
        self._freed = False

    # --- what backward reads -------------------------------------------------------------
    @property
    def materialize_grads(self):
        # write-only in PyTorch (a C attribute without a getter)
        raise AttributeError(MATERIALIZE_NOT_READABLE)

    @materialize_grads.setter
    def materialize_grads(self, value) -> None:
        self._materialize = bool(value)

    @property
    def saved_tensors(self) -> tuple:
        """The tensors given to ``save_for_backward``, version-checked (PyTorch's errors)."""
        if self.saved_for_forward is not None:
            return self.saved_for_forward
        if self._freed:
            raise RuntimeError(E.BACKWARD_TWICE)
        return tuple(None if s is None else s.unpack(self) for s in self._saved)

    @property
    def saved_variables(self) -> tuple:
        warnings.warn(SAVED_VARIABLES, DeprecationWarning, stacklevel=2)
        return self.saved_tensors

    def _get_user_fn(self):
        cls = self._forward_cls
        if cls.backward is not Function.backward and cls.vjp is not Function.vjp:
            raise RuntimeError(BOTH_BACKWARD_VJP)
        return cls.vjp if cls.vjp is not Function.vjp else cls.backward

    def apply(self, *args):
        """Call the user's backward directly (``grad_fn.apply(*grads)``)."""
        return self._get_user_fn()(self, *args)

    def apply_jvp(self, *args):
        return self._forward_cls.jvp(self, *args)

    # --- the engine's side -----------------------------------------------------------------
    def _num_outputs(self) -> int:
        return len(self._output_info)

    def _release(self) -> None:
        # PyTorch's ``release_variables``: later reads of ``saved_tensors`` raise.
        self._saved = ()
        self._freed = True

    def _apply(self, grads: list) -> list:
        Tensor = _tensor_cls()
        device = self._device
        ts = []
        for g, info in zip(grads, self._output_info):
            if g is None:
                ts.append(None)
            else:
                dtype = info[1] if info is not None else _dtype_of(g)
                ts.append(Tensor._make(g, dtype, info[2] if info is not None else device))
        with grad_mode.no_grad():
            outs = self._run(ts)
        return [None if o is None else o._data for o in outs]

    def _apply_graph(self, grads: list) -> list:
        return self._run(list(grads))

    def _run(self, grads: list) -> list:
        """The user's backward on Tensor gradients, its result checked as PyTorch checks it."""
        from .. import _factories as F

        args = []
        for g, info in zip(grads, self._output_info):
            if g is None and self._materialize and info is not None:
                g = F.zeros(info[0], dtype=info[1], device=info[2])
            args.append(g)
        result = self._get_user_fn()(self, *args)
        return self._check_result(result)

    def _check_result(self, result) -> list:
        Tensor = _tensor_cls()
        if not isinstance(result, tuple):
            result = (result,)
        expected = len(self._is_variable_input)
        if len(result) > expected and all(r is None for r in result[expected:]):
            result = result[:expected]
        if len(result) != expected:
            raise RuntimeError(WRONG_COUNT.format(self.name(), expected, len(result)))
        grads = []
        for i, (r, is_var) in enumerate(zip(result, self._is_variable_input)):
            if not is_var:
                if r is not None:
                    raise RuntimeError(NOT_NONE.format(self.name(), i + 1))
                continue
            if r is not None and not isinstance(r, Tensor):
                raise RuntimeError(NOT_VARIABLE.format(type(r).__name__))
            grads.append(r)
        # the engine's ``validate_outputs``, for edges that lead somewhere
        for k, ((nxt, _), g) in enumerate(zip(self._next_functions, grads)):
            if nxt is None or g is None:
                grads[k] = None
                continue
            shape, dtype, device = self._input_info[k]
            if tuple(g._data.shape) != shape:
                if not _expandable(shape, tuple(g._data.shape)):
                    raise RuntimeError(
                        BAD_SHAPE.format(
                            self.name(), k, _shape_str(g._data.shape), _shape_str(shape)
                        )
                    )
                g = _sum_to(g, shape)
            if g._dtype is not dtype:
                g = g.to(dtype)
            if g._device != device:
                if g._data.ndim != 0:
                    raise RuntimeError(BAD_DEVICE.format(self.name(), k, device, g._device))
                g = g.to(device)
            grads[k] = g
        return grads


def _dtype_of(arr):
    from .. import _dtype as D

    return D.from_numpy_dtype(arr.dtype)


def _expandable(shape: tuple, desired: tuple) -> bool:
    """PyTorch's ``is_expandable_to``: ``shape`` broadcasts to ``desired``."""
    if len(shape) > len(desired):
        return False
    for s, d in zip(reversed(shape), reversed(desired)):
        if s != d and s != 1:
            return False
    return True


def _sum_to(g, shape: tuple):
    """PyTorch's ``sum_to``: a broadcast gradient summed back to ``shape``."""
    lead = g._data.ndim - len(shape)
    if lead:
        g = g.sum(tuple(range(lead)))
    dims = tuple(i for i, (s, d) in enumerate(zip(shape, g._data.shape)) if s == 1 and d != 1)
    if dims:
        g = g.sum(dims, keepdim=True)
    return g


class Error(Node):
    """The node PyTorch's ``DelayedError`` gives outputs of a ``once_differentiable`` backward
    under ``create_graph``: differentiating through it raises."""

    __slots__ = ("_msg",)

    def __init__(self, msg: str, next_functions: tuple) -> None:
        super().__init__(next_functions)
        self._msg = msg

    def name(self) -> str:
        return "torch::autograd::Error"

    def _num_outputs(self) -> int:
        return len(self._next_functions)

    def _apply(self, grads: list) -> list:
        raise RuntimeError(self._msg)

    _apply_graph = _apply

    def __call__(self, *grads):
        return call_node(self, grads)


Error.__module__ = "builtins"


class _GeneratedBackward(BackwardCFunction):
    """The node of a Function applied inside a torch.func grad level (PyTorch's
    ``<Function>GeneratedBackward``). JAX differentiates the level through the Function's
    backward (``_lowered``); this node serves ``autograd.grad`` inside the level: its first
    backward runs the forward again on the level's tensors (under no_grad) to make what
    ``ctx`` keeps, since what the lowered forward saved lives in JAX's inner trace."""

    _replay = None

    def _run(self, grads: list) -> list:
        if self._replay is not None:
            args, overridden = self._replay
            self._replay = None
            with grad_mode.no_grad():
                if overridden:
                    raw = self._forward_cls.forward(*args)
                    self._forward_cls.setup_context(self, args, raw)
                else:
                    self._forward_cls.forward(self, *args)
            self._saved = tuple(None if t is None else _SavedInput(t) for t in self.to_save or ())
            self.to_save = None
        return super()._run(grads)


# --- Function -------------------------------------------------------------------------------


class FunctionMeta(type):
    """Gives every Function class its node class, ``<Name>Backward``."""

    def __init__(cls, name, bases, attrs) -> None:
        cls._backward_cls = type(name + "Backward", (BackwardCFunction,), {"_forward_cls": cls})
        # the node under a torch.func grad level, as PyTorch names it (Note [Requires grad at a
        # level] in func.py)
        cls._generated_cls = type(
            name + "GeneratedBackward", (_GeneratedBackward,), {"_forward_cls": cls}
        )
        super().__init__(name, bases, attrs)


class _SingleLevelFunction(FunctionCtx, _HookMixin, metaclass=FunctionMeta):
    @staticmethod
    def forward(*args, **kwargs):
        """``forward(ctx, *args)``, or ``forward(*args)`` with ``setup_context``."""
        raise NotImplementedError(NO_FORWARD)

    @staticmethod
    def setup_context(ctx, inputs: tuple, output):
        """Fill ``ctx`` from the inputs and the output of a ctx-less ``forward``."""
        raise NotImplementedError(NO_SETUP_CONTEXT)

    @staticmethod
    def backward(ctx, *grad_outputs):
        """The gradients of the inputs from those of the outputs."""
        raise NotImplementedError(NO_BACKWARD)

    vjp = backward

    @staticmethod
    def jvp(ctx, *grad_inputs):
        """Forward-mode AD (leafgrad has none; PyTorch's error when not overridden)."""
        raise NotImplementedError(NO_JVP)


class Function(_SingleLevelFunction):
    """Base class of custom autograd Functions; use ``Fn.apply(*args)``.

    Example::

        >>> class Exp(leafgrad.autograd.Function):
        ...     @staticmethod
        ...     def forward(ctx, i):
        ...         result = i.exp()
        ...         ctx.save_for_backward(result)
        ...         return result
        ...     @staticmethod
        ...     def backward(ctx, grad_output):
        ...         (result,) = ctx.saved_tensors
        ...         return grad_output * result
    """

    def __init__(self, *args, **kwargs) -> None:
        warnings.warn(NOT_INSTANTIATE.format(self.__class__), DeprecationWarning, stacklevel=2)

    def __call__(self, *args, **kwargs):
        raise RuntimeError(LEGACY_CALL)

    generate_vmap_rule = False

    @staticmethod
    def vmap(info, in_dims, *args):
        raise NotImplementedError(
            "To use autograd.Function with vmap, you must either override the vmap staticmethod "
            "or set generate_vmap_rule=True."
        )

    @classmethod
    def apply(cls, *args, **kwargs):
        """Run ``forward`` and record the node (Note [Function outputs])."""
        overridden = _is_setup_context_defined(cls.setup_context)
        if overridden:
            bound = inspect.signature(cls.forward).bind(*args, **kwargs)
            bound.apply_defaults()
            args, kwargs = bound.args, bound.kwargs
        if kwargs:
            args = _bind_kwargs(cls.forward, args, kwargs, skip_ctx=not overridden)
        return _apply(cls, tuple(args), overridden)


def _is_setup_context_defined(fn) -> bool:
    return fn != _SingleLevelFunction.setup_context


def _bind_kwargs(forward, args: tuple, kwargs: dict, skip_ctx: bool) -> list:
    """Keyword arguments put in their positions, with the errors of PyTorch's C++ binding."""
    params = [
        p.name
        for p in inspect.signature(forward).parameters.values()
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]
    if skip_ctx:
        params = params[1:]
    placed = {}
    for name, value in kwargs.items():
        if name not in params:
            raise TypeError(f"forward() got an unexpected keyword argument '{name}'")
        idx = params.index(name)
        if idx < len(args):
            raise TypeError(f"forward() got multiple values for argument '{name}'")
        placed[idx] = value
    n = len(args) + len(kwargs)
    out = list(args)
    for p in range(len(args), n):
        if p not in placed:
            raise TypeError(f"forward() missing required argument: '{params[p]}' (position {p})")
        out.append(placed[p])
    return out


def _apply(cls, args: tuple, overridden: bool):
    from ..ops.dispatch import _edge

    Tensor = _tensor_cls()
    ctx = cls._backward_cls()
    inputs = [a for a in args if isinstance(a, Tensor)]
    ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a._requires_grad for a in args)
    ctx._is_variable_input = tuple(isinstance(a, Tensor) for a in args)
    executable = grad_mode._state.grad_enabled and any(t._requires_grad for t in inputs)
    if executable:
        ctx._next_functions = tuple(_edge(t) for t in inputs)
        ctx._input_info = tuple((tuple(t._data.shape), t._dtype, t._device) for t in inputs)
    if inputs:
        ctx._device = inputs[0]._device
    if _under_jax_transform(inputs):
        from .. import func

        out = _lowered(cls, args, overridden, _check_transforms(cls, overridden))
        if executable and "grad" in func.active_transforms():
            # Note [Requires grad at a level] in func.py: the outputs get PyTorch's node; what
            # its backward reads is made when ``autograd.grad`` first runs it inside the level
            node = cls._generated_cls()
            node.needs_input_grad, node._is_variable_input = (
                ctx.needs_input_grad,
                ctx._is_variable_input,
            )
            node._next_functions, node._input_info = ctx._next_functions, ctx._input_info
            node._device = ctx._device
            node._replay = (args, overridden)
            out = _process_outputs(node, inputs, out, True, overridden)
        return out
    tangents = forward_ad.tangents_of(args) if forward_ad.ACTIVE[0] else None
    if tangents is not None and cls.jvp is Function.jvp:
        raise NotImplementedError(NO_JVP)
    with grad_mode.no_grad(), forward_ad.paused(tangents is not None):
        if overridden:
            raw = cls.forward(*args)
            cls.setup_context(ctx, args, raw)
        else:
            raw = cls.forward(ctx, *args)
    for_forward = ctx.saved_for_forward
    out = _process_outputs(ctx, inputs, raw, executable, overridden)
    if tangents is not None:  # Note [Forward AD]: the Function's own jvp
        ctx.saved_for_forward = for_forward  # what ``save_for_forward`` kept, for the jvp only
        try:
            with grad_mode.no_grad(), forward_ad.paused(True):
                found = cls.jvp(ctx, *tangents)
        finally:
            ctx.saved_for_forward = None
        forward_ad.set_tangents(out, found)
    return out


# --- under JAX's transforms: the Function as a jax.custom_vjp -----------------------------------
# Note [Functions under JAX transforms]: inside ``leafgrad.func`` transforms (and any JAX
# transform of leafgrad code) JAX differentiates the arrays, not leafgrad's graph, so a Function
# would be differentiated through its forward's ops and its own backward ignored. There it is
# lowered to ``jax.custom_vjp``: the forward runs the user's forward on the arrays, the VJP re-runs
# it to rebuild ``ctx`` (its saved tensors and attributes) and calls the user's backward. Inside
# ``leafgrad.compile`` leafgrad's own engine runs backward, so nothing is lowered there.


def _under_jax_transform(inputs) -> bool:
    import jax

    from .. import _compile

    return any(isinstance(t._data, jax.core.Tracer) for t in inputs) and not (
        _compile.is_compiling()
    )


NEEDS_SETUP_CONTEXT = (
    "In order to use an autograd.Function with functorch transforms (vmap, grad, jvp, jacrev, "
    "...), it must override the setup_context staticmethod. For more details, please see "
    "https://pytorch.org/docs/main/notes/extending.func.html"
)
NO_VMAP = (
    "You tried to vmap over {}, but it does not have vmap support. Please override and implement "
    "the vmap staticmethod or set generate_vmap_rule=True. For more details, please see "
    "https://pytorch.org/docs/main/notes/extending.func.html"
)


def _check_transforms(cls, overridden: bool) -> bool:
    """What PyTorch's torch.func transforms require of a custom Function (``setup_context``; a
    vmap rule under vmap, checked before the jvp one under forward mode); returns whether a
    forward-mode transform runs it (then its own ``jvp`` gives the tangents)."""
    from .. import func

    active = func.active_transforms()
    if not active:
        return False
    if not overridden:
        raise RuntimeError(NEEDS_SETUP_CONTEXT)
    if "vmap" in active and not (
        getattr(cls, "generate_vmap_rule", False) or cls.vmap is not Function.vmap
    ):
        raise RuntimeError(NO_VMAP.format(cls.__name__))
    if "jvp" in active:
        if cls.jvp is Function.jvp:
            raise NotImplementedError(NO_JVP)
        return True
    return False


def _lowered(cls, args: tuple, overridden: bool, forward_mode: bool = False):
    """``forward_mode``: lowered to ``jax.custom_jvp`` with the Function's ``jvp`` (JAX's
    reverse mode then transposes it), else to ``jax.custom_vjp`` with its ``backward``."""
    import jax
    import jax.numpy as jnp

    Tensor = _tensor_cls()
    positions = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
    metas = [(args[i]._dtype, args[i]._device) for i in positions]
    layout: list = []  # the outputs: ("t", dtype, device) for tensors, ("py", value) otherwise

    def run(arrays):
        full = list(args)
        for i, a, (dtype, device) in zip(positions, arrays, metas):
            full[i] = Tensor._make(a, dtype, device)
        ctx = cls._backward_cls()
        ctx.needs_input_grad = tuple(isinstance(a, Tensor) for a in args)
        ctx._is_variable_input = tuple(isinstance(a, Tensor) for a in args)
        with grad_mode.no_grad():
            if overridden:
                raw = cls.forward(*full)
                cls.setup_context(ctx, tuple(full), raw)
            else:
                raw = cls.forward(ctx, *full)
        if ctx.dirty_tensors:
            raise NotImplementedError(
                "leafgrad: a custom Function that marks inputs dirty cannot run under a JAX "
                "transform (leafgrad.func)"
            )
        # what save_for_backward kept, readable as ctx.saved_tensors in the backward
        ctx._saved = tuple(_SavedInput(t) if t is not None else None for t in ctx.to_save or ())
        ctx.to_save = None
        outs = raw if isinstance(raw, tuple) else (raw,)
        layout[:] = [
            ("t", o._dtype, o._device) if isinstance(o, Tensor) else ("py", o) for o in outs
        ]
        layout.append(isinstance(raw, tuple))
        return tuple(o._data for o in outs if isinstance(o, Tensor)), ctx

    def like(values, arrays):
        """The Function's gradients or tangents as arrays shaped as ``arrays`` (zeros for
        None)."""
        return tuple(
            jnp.zeros(a.shape, a.dtype)
            if v is None
            else jnp.broadcast_to(v._data, a.shape).astype(a.dtype)
            for v, a in zip(values, arrays)
        )

    if forward_mode:

        @jax.custom_jvp
        def f(*arrays):
            return run(arrays)[0]

        @f.defjvp
        def f_jvp(primals, tangents):
            outs, ctx = run(primals)
            tans = [Tensor._make(t, dtype, device) for t, (dtype, device) in zip(tangents, metas)]
            with grad_mode.no_grad():
                found = cls.jvp(ctx, *tans)
            return outs, like(found if isinstance(found, tuple) else (found,), outs)

    else:

        @jax.custom_vjp
        def f(*arrays):
            return run(arrays)[0]

        def f_fwd(*arrays):
            return run(arrays)[0], arrays

        def f_bwd(arrays, cts):
            _, ctx = run(arrays)
            kinds = [x for x in layout[:-1] if x[0] == "t"]
            grads = [Tensor._make(c, k[1], k[2]) for c, k in zip(cts, kinds)]
            with grad_mode.no_grad():
                result = ctx._get_user_fn()(ctx, *grads)
            result = result if isinstance(result, tuple) else (result,)
            return like([result[i] if i < len(result) else None for i in positions], arrays)

        f.defvjp(f_fwd, f_bwd)

    arrays = f(*[args[i]._data for i in positions])
    it = iter(arrays)
    outs = [Tensor._make(next(it), x[1], x[2]) if x[0] == "t" else x[1] for x in layout[:-1]]
    return tuple(outs) if layout[-1] else outs[0]


def _process_outputs(ctx, inputs: list, raw, executable: bool, overridden: bool):
    """PyTorch's ``process_outputs`` (Note [Function outputs])."""
    Tensor = _tensor_cls()
    unpack = not isinstance(raw, tuple)
    outs = (raw,) if unpack else raw

    to_save_setup = set()
    to_save = []
    if ctx.to_save is not None:
        for i, obj in enumerate(ctx.to_save):
            if obj is None:
                to_save.append(None)
            elif isinstance(obj, Tensor):
                if overridden:
                    to_save_setup.add(id(obj))
                if executable:
                    to_save.append(obj)
            elif executable:
                raise TypeError(SAVE_NOT_TENSOR.format(i, type(obj).__name__))

    non_diff = set()
    if ctx.non_differentiable is not None:
        for t in ctx.non_differentiable:
            if not isinstance(t, Tensor):
                raise RuntimeError(NON_DIFF_NOT_TENSOR)
            non_diff.add(id(t))
    dirty = {}
    if ctx.dirty_tensors is not None:
        for t in ctx.dirty_tensors:
            if not isinstance(t, Tensor):
                raise RuntimeError(DIRTY_NOT_TENSOR)
            dirty[id(t)] = t
            t._version_counter.value += 1
        ctx.dirty_tensors = None

    input_ids = {id(t) for t in inputs}
    results = []
    infos = []
    returned = set()
    n_diff = 0
    for i, var in enumerate(outs):
        if not isinstance(var, Tensor):
            infos.append(None)
            results.append(var)
            continue
        returned.add(id(var))
        is_input = id(var) in input_ids
        is_modified = id(var) in dirty
        is_diff = (
            executable
            and id(var) not in non_diff
            and (var._dtype.is_floating_point or var._dtype.is_complex)
        )
        var = _set_history(
            ctx, var, i, len(outs), is_input, is_modified, is_diff, id(var) in to_save_setup
        )
        if not (is_input and is_modified) and var._base is not None:
            _mark_custom_view(ctx, var, i)
        n_diff += is_diff
        infos.append((tuple(var._data.shape), var._dtype, var._device))
        results.append(var)
    if n_diff > 1:
        from .. import _storage as S

        for var in results:
            meta = var.__dict__.get("_vmeta") if isinstance(var, Tensor) else None
            if meta is not None:
                meta.creation = S.MULTI_OUTPUT_NODE
    for t in dirty.values():
        if id(t) not in returned:
            raise RuntimeError(DIRTY_NOT_RETURNED)

    if executable:
        ctx._output_info = tuple(infos)
        ctx._saved = tuple(_saved(ctx, t) for t in to_save)
    else:
        ctx.non_differentiable = None
    ctx.to_save = None
    ctx.saved_for_forward = None
    return results[0] if unpack else tuple(results)


def _saved(ctx, t):
    if t is None:
        return None
    hooks = saved_mod.current()
    if hooks is not None:  # Note [Saved tensor hooks]
        return _PackedSaved(t, ctx, hooks)
    if t._grad_fn is ctx:
        return _SavedOutput(t, ctx)
    return _SavedInput(t)


class _PackedSaved:
    """A tensor saved under ``saved_tensors_hooks``: what ``pack`` returned, unpacked with the
    saved tensor's history (Note [Saved tensor hooks] in saved.py); not version-checked."""

    __slots__ = ("packed", "unpack_hook", "history", "output_nr")

    def __init__(self, t, node, hooks) -> None:
        pack, self.unpack_hook = hooks
        self.output_nr = t._output_nr if t._grad_fn is node else None
        self.history = None if self.output_nr is not None else saved_mod._history(t)
        self.packed = pack(t)

    def unpack(self, node):
        t = saved_mod.unpacked(self.packed, self.unpack_hook)
        if self.output_nr is not None:
            return saved_mod._alias(t, (node, self.output_nr))
        return saved_mod._alias(t, self.history)


def _view_as_self(var):
    with grad_mode.no_grad():
        return var.view_as(var)


def _set_history(ctx, var, i, n_out, is_input, is_modified, is_diff, saved_setup):
    """PyTorch's ``set_history`` in ``_wrap_outputs``: the output tensor that ``apply`` returns."""
    if not is_diff:
        if not var._requires_grad:
            if is_input and not is_modified:
                if saved_setup:
                    raise RuntimeError(INPUT_SAVED_SETUP)
                var = _view_as_self(var)
            return var
        # detached aliases of inputs rather than changing their requires_grad
        if is_input:
            return var.detach()
        if var._base is None:
            var.detach_()
        return var
    if is_modified:
        if var.is_leaf and var._requires_grad:
            raise RuntimeError(DIRTY_LEAF)
        if not is_input:
            E.warn(DIRTY_NOT_INPUT, stacklevel=4)
        if var._base is not None and n_out > 1:
            raise RuntimeError(DIRTY_VIEW_MULTI)
        _rebase_history(ctx, var, i)
        return var
    if is_input:
        if saved_setup:
            raise RuntimeError(INPUT_SAVED_SETUP)
        var = _view_as_self(var)
    _set_gradient_edge(var, ctx, i)
    return var


def _set_gradient_edge(var, node, nr: int) -> None:
    var._grad_fn = node
    var._output_nr = nr
    var._requires_grad = True
    meta = var.__dict__.get("_vmeta")
    if meta is not None:  # the grad_fn is current at this version (Note [View metadata])
        meta.attr_version = var._version_counter.value


def _rebase_history(ctx, var, nr: int) -> None:
    """A dirty output takes the node; a view input through ``CopySlices`` on its base."""
    from ..ops import inplace

    if var._base is not None and var.__dict__.get("_vmeta") is not None:
        # PyTorch's CopySlices sends the view's gradient to the node's first input, always
        before = ctx._next_functions[0] if ctx._next_functions else None
        inplace._rebase_view(var, ctx, nr, before)
        return
    inplace.take_history(var, ctx, nr)


def _mark_custom_view(ctx, var, nr: int) -> None:
    """PyTorch marks output views ``IN_CUSTOM_FUNCTION``: in-place writes to them are errors."""
    from .. import _storage as S

    meta = var.__dict__.get("_vmeta")
    if meta is None:
        return
    name = ctx.name()  # "<Function>Backward": PyTorch names the Function
    meta.name = name[: -len("Backward")] if name.endswith("Backward") else name
    meta.output_nr = nr
    code = getattr(S, "IN_CUSTOM_FUNCTION", None)  # until _storage knows this creation kind
    if code is not None:
        meta.creation = code


# --- once_differentiable ----------------------------------------------------------------------


def once_differentiable(fn):
    """Run ``backward`` without recording; under ``create_graph`` its results carry a node that
    raises when differentiated (PyTorch's ``DelayedError``)."""

    @functools.wraps(fn)
    def wrapper(ctx, *args, **kwargs):
        with grad_mode.no_grad():
            outputs = fn(ctx, *args, **kwargs)
        if not grad_mode.is_grad_enabled():
            return outputs
        Tensor = _tensor_cls()
        if not any(isinstance(a, Tensor) and a._requires_grad for a in args):
            return outputs
        outs = outputs if isinstance(outputs, tuple) else (outputs,)
        fakes = []
        for v in outs:
            if v is not None:
                v = v.detach()
                v.requires_grad = True
            fakes.append(v)
        from ..ops.dispatch import _edge

        node = Error(
            ONCE_DIFFERENTIABLE,
            tuple((None, 0) if v is None else _edge(v) for v in fakes),
        )
        node._device = next((v._device for v in fakes if v is not None), None)
        wrapped = tuple(
            None
            if v is None
            else Tensor._make(
                v._data, v._dtype, v._device, requires_grad=True, grad_fn=node, output_nr=k
            )
            for k, v in enumerate(fakes)
        )
        return wrapped[0] if len(wrapped) == 1 else wrapped

    return wrapper


class InplaceFunction(Function):
    """A Function with an ``inplace`` flag (PyTorch's legacy helper)."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace
