"""Tensor: state only (array, dtype, device, autograd fields); every op forwards to dispatch.

Note [Leaf rules]: ``is_leaf`` is exactly ``grad_fn is None``. A tensor gets a ``grad_fn`` only
when an op records it, which happens only in grad mode and only when an operand requires grad.
So a result computed from tensors that do not require grad is a leaf, and so is every factory
result, even with ``requires_grad=True`` under ``no_grad``. Only leaves that require grad get
``.grad`` filled by backward, unless ``retain_grad()`` was called.
"""

from __future__ import annotations

import collections
import math
import numbers
import threading
import warnings
import weakref
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from . import _device as DEV
from . import _dtype as D
from . import _errors as E
from . import _storage, _zero
from .autograd import grad_mode
from .autograd.graph import AccumulateGrad
from .ops import dispatch as _dispatch_module
from .ops.table import OPS

dispatch = _dispatch_module.dispatch
_SCALARS = (bool, int, float, complex)
_ACCUMULATE_LOCK = threading.Lock()


class Size(tuple):
    """``torch.Size``: a tuple of ints that prints as ``torch.Size([3, 5])``."""

    def __repr__(self) -> str:
        return f"torch.Size([{', '.join(str(s) for s in self)}])"

    def __getitem__(self, key):
        result = tuple.__getitem__(self, key)
        return Size(result) if isinstance(key, slice) else result

    def __add__(self, other):
        return Size(tuple(self) + tuple(other))

    def __radd__(self, other):
        return Size(tuple(other) + tuple(self))

    def numel(self) -> int:
        n = 1
        for s in self:
            n *= s
        return n


class _NamedConstant:
    """A PyTorch constant known by its name: shown as ``torch.<name>``, pickled by name."""

    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        self._name = name

    def __repr__(self) -> str:
        return f"torch.{self._name}"

    def __reduce__(self):
        return self._name


class memory_format(_NamedConstant):
    """``torch.memory_format``: the layout ``clone``, ``contiguous`` and ``empty_like`` give."""

    __slots__ = ()


memory_format.__module__ = "leafgrad"  # pickles by name, as torch's constants do


class layout(_NamedConstant):
    """``torch.layout``: how a tensor's elements are stored. leafgrad's tensors are all
    ``strided`` (dense); the sparse layouts exist as names only."""

    __slots__ = ()


layout.__module__ = "leafgrad"
strided = layout("strided")
sparse_coo = layout("sparse_coo")
sparse_csr = layout("sparse_csr")
sparse_csc = layout("sparse_csc")
sparse_bsr = layout("sparse_bsr")
sparse_bsc = layout("sparse_bsc")
_mkldnn = layout("_mkldnn")
jagged = layout("jagged")
preserve_format = memory_format("preserve_format")
contiguous_format = memory_format("contiguous_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")
_CHANNELS_LAST_RANK = {channels_last: 4, channels_last_3d: 5}


def _check_memory_format(op: str, fmt, optional: bool = True) -> Any:
    """``fmt`` as PyTorch's parser takes it: a ``memory_format``, or ``None`` (preserve) where
    the argument is optional."""
    if not (isinstance(fmt, memory_format) or (optional and fmt is None)):
        kind = E.py_typename(fmt)
        raise TypeError(E.KW_MUST_BE.format(op, "memory_format", "torch.memory_format", kind))
    return fmt


def _format_strides(shape, fmt) -> tuple | None:
    """The strides ``fmt`` gives a new tensor of ``shape`` (None: contiguous); PyTorch's rank
    check for the channels-last formats."""
    rank = _CHANNELS_LAST_RANK.get(fmt)
    if rank is None:
        return None
    if len(shape) != rank:
        raise RuntimeError(f"required rank {rank} tensor to use {fmt._name} format")
    # channels last: C varies fastest, then the spatial dims, then N; unlike contiguous strides,
    # PyTorch's ``get_channels_last_strides_2d/3d`` multiply by a size of 0 as it is
    order = (1, *range(len(shape) - 1, 1, -1), 0)
    strides = [0] * len(shape)
    expected = 1
    for d in order:
        strides[d] = expected
        expected *= shape[d]
    return tuple(strides)


def _suggested_format(t) -> Any:
    """PyTorch's ``suggest_memory_format``: channels_last (3d) where the strides look so (its
    ``is_channels_last_strides_2d/3d``, which reads ambiguous layouts as contiguous), else
    contiguous_format."""
    return suggested_format(tuple(t._data.shape), t.__dict__.get("_strides"))


def suggested_format(shape: tuple, strides) -> Any:
    """``_suggested_format`` of a layout (``strides`` None: contiguous)."""
    if strides is None or len(shape) not in (4, 5):
        return contiguous_format
    lowest = 0
    order = (1, 3, 2, 0) if len(shape) == 4 else (1, 4, 3, 2, 0)
    if strides[1] == 0:
        return contiguous_format
    for d in order:
        if shape[d] == 0 or strides[d] < lowest or (d == 0 and lowest == strides[1]):
            return contiguous_format
        lowest = strides[d] * (shape[d] if shape[d] > 1 else 1)
    return channels_last if len(shape) == 4 else channels_last_3d


def _stopped(data):
    """``detach``'s and ``.data``'s values: inside a torch.func grad or jvp transform no
    gradient or tangent of any level flows through them, as PyTorch's detach cuts every level;
    elsewhere the array itself."""
    from .autograd import forward_ad

    state = forward_ad.FUNC_JVP
    if (state.count or state.stop) and isinstance(data, jax.core.Tracer):
        return jax.lax.stop_gradient(data)
    return data


def _size_str(shape) -> str:
    return "[" + ", ".join(str(s) for s in shape) + "]"


def _negative_size(size) -> bool:
    """Whether a factory's size arguments (ints, or one sequence of them) hold a negative int."""
    flat = size[0] if len(size) == 1 and isinstance(size[0], tuple) else size
    return any(type(s) is int and s < 0 for s in flat)


# while a torch.func vmap runs: func.check_data, PyTorch's refusal of ``.data`` on a batched tensor
DATA_CHECK: list = [None]


class _Version:
    """A version counter, shared by a tensor and its views (Note [Version counter])."""

    __slots__ = ("value",)
    birth = 0  # the grad/jvp level it was made in (Note [Captured tensors] in func.py)

    def __init__(self) -> None:
        self.value = 0


BaseVersion = _Version


VOLATILE_READ = "volatile was removed (Variable.volatile is always False)"
VOLATILE_SET = "volatile was removed and now has no effect. Use `with torch.no_grad():` instead."


class Tensor:
    """A multi-dimensional array with PyTorch's autograd state, backed by a ``jax.Array``."""

    __slots__ = (
        "_data",
        "_dtype",
        "_device",
        "_requires_grad",
        "_grad",
        "_grad_fn",
        "_output_nr",
        "_version_counter",
        "_retains_grad",
        "_accumulator",
        "_inference",
        "_base",
        "__weakref__",
        "__dict__",
    )

    # NumPy scalars and arrays defer their binary operators to ours (``np.float64(2) - x`` is a
    # Tensor, as in PyTorch, which sets the same priority).
    __array_priority__ = 1000

    # ``torch.Tensor(...)``: the legacy constructor (a float tensor of the default dtype).
    def __new__(cls, *args, **kwargs):
        from ._factories import _legacy_new

        return _legacy_new(cls, *args, **kwargs)

    @classmethod
    def _make(
        cls,
        data,
        dtype: D.dtype,
        device: DEV.device,
        requires_grad: bool = False,
        grad_fn=None,
        output_nr: int = 0,
        inference: bool = False,
    ) -> Tensor:
        t = object.__new__(cls)
        t._data = data
        t._dtype = dtype
        t._device = device
        t._requires_grad = requires_grad
        t._grad = None
        t._grad_fn = grad_fn
        t._output_nr = output_nr
        t._version_counter = _Version()
        t._retains_grad = False
        t._accumulator = None
        t._inference = inference
        t._base = None
        return t

    def _set_data(self, data) -> None:
        """Replace the values as a write into this tensor's memory (Note [Storage])."""
        _storage.write(self, data)

    # --- metadata --------------------------------------------------------------------------
    @property
    def shape(self) -> Size:
        return Size(self._data.shape)

    def size(self, dim: int | None = None):
        """The shape, or the size of one dimension."""
        if dim is None:
            return Size(self._data.shape)
        if type(dim) is not int:
            from ._arg_check import check_int

            check_int("size", "dim", dim, 1)
        return self._data.shape[_wrap_dim(dim, self._data.ndim)]

    def dim(self) -> int:
        return self._data.ndim

    ndimension = dim

    @property
    def ndim(self) -> int:
        return self._data.ndim

    def numel(self) -> int:
        return int(self._data.size)

    nelement = numel

    def element_size(self) -> int:
        return self._dtype.itemsize

    @property
    def volatile(self) -> bool:
        """Removed in PyTorch: always False, with its warning."""
        from . import _errors as E

        E.warn(VOLATILE_READ)
        return False

    @volatile.setter
    def volatile(self, value) -> None:
        from . import _errors as E

        E.warn(VOLATILE_SET)

    @property
    def itemsize(self) -> int:
        return self._dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self._dtype.itemsize * self.numel()

    @property
    def dtype(self) -> D.dtype:
        return self._dtype

    @property
    def device(self) -> DEV.device:
        return self._device

    @property
    def is_cuda(self) -> bool:
        return self._device.type == "cuda"

    @property
    def is_cpu(self) -> bool:
        return self._device.type == "cpu"

    @property
    def is_meta(self) -> bool:
        return self._device.type == "meta"

    def get_device(self) -> int:
        return -1 if self._device.type == "cpu" else self._device.index

    @property
    def layout(self) -> layout:
        return strided

    # the storage kinds leafgrad does not have (a JAX array is dense, on a JAX device)
    is_sparse = is_sparse_csr = is_quantized = is_nested = is_mkldnn = property(lambda self: False)
    is_xla = is_xpu = is_mps = is_ipu = is_vulkan = is_maia = is_mtia = property(lambda self: False)

    def is_pinned(self, device=None) -> bool:
        if device is not None:
            DEV.device(device)  # PyTorch parses it (its error for a bad string)
        return False

    def pin_memory(self, device=None) -> Tensor:
        from . import accelerator

        if device is not None:
            DEV.device(device)

        if not accelerator.is_available():
            raise RuntimeError("Cannot access accelerator device when none is available.")
        raise NotImplementedError("leafgrad: pinned host memory is not implemented")

    def is_floating_point(self) -> bool:
        return self._dtype.is_floating_point

    def is_complex(self) -> bool:
        return self._dtype.is_complex

    def is_inference(self) -> bool:
        return self._inference

    @property
    def _version(self) -> int:
        if self._inference and "_counted" not in self.__dict__:  # Note [Inference tensors]
            raise RuntimeError(E.INFERENCE_VERSION)
        return self._version_counter.value

    # --- autograd state --------------------------------------------------------------------
    @property
    def is_leaf(self) -> bool:
        """True for tensors not produced by a recorded op (Note [Leaf rules])."""
        return self.grad_fn is None

    @property
    def grad_fn(self):
        if self._base is not None:  # Note [View metadata]: regenerated after in-place writes
            return _storage.view_grad_fn(self)
        return self._grad_fn

    @grad_fn.setter
    def grad_fn(self, value) -> None:
        raise AttributeError("attribute 'grad_fn' of 'torch._C.TensorBase' objects is not writable")

    @property
    def requires_grad(self) -> bool:
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        if not isinstance(value, bool):
            raise RuntimeError("requires_grad must be a bool")
        if self._grad_fn is not None:
            if value:
                raise RuntimeError(E.REQUIRES_GRAD_NONLEAF)
            raise RuntimeError(E.REQUIRES_GRAD_NONLEAF_OFF)
        if value and not (self._dtype.is_floating_point or self._dtype.is_complex):
            raise RuntimeError(E.REQUIRES_GRAD_SETTER)
        self._set_requires_grad(value)

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        """Set ``requires_grad`` in place and return this same tensor."""
        if type(requires_grad) is not bool:  # the parser takes a Python bool only
            from ._arg_check import check_bool

            check_bool("requires_grad_", "requires_grad", requires_grad, 1)
        from .func import refuse_requires_grad_inside

        refuse_requires_grad_inside()
        if self._grad_fn is not None:
            if not requires_grad:
                raise RuntimeError(E.REQUIRES_GRAD_NONLEAF_OFF)
            return self
        if requires_grad and not (self._dtype.is_floating_point or self._dtype.is_complex):
            raise RuntimeError(E.REQUIRES_GRAD_METHOD)
        self._set_requires_grad(requires_grad)
        return self

    def _set_requires_grad(self, value: bool) -> None:
        if value and self._inference and not grad_mode.is_inference_mode_enabled():
            raise RuntimeError(E.INFERENCE_REQUIRES_GRAD)
        self._requires_grad = value
        self.__dict__.pop("_inherited_rg", None)  # its own flag now (Note [Views that ...])
        if not value:
            self._accumulator = None
        if self._base is None:
            if value:
                _storage.views_require_grad(self)
            else:
                _storage.views_stop_requiring_grad(self)
        elif not value and self._base._requires_grad:
            # PyTorch reads a view's flag as its own or its base's: it still requires grad
            self._requires_grad = True
            self.__dict__["_inherited_rg"] = True

    @property
    def grad(self) -> Tensor | None:
        if self._grad_fn is not None and not self._retains_grad and self._grad is None:
            E.warn(E.NON_LEAF_GRAD_WARNING)
        return self._grad

    @property
    def grad_dtype(self):
        """The dtype gradients reaching this leaf are cast to (its dtype unless set), or None
        for any dtype."""
        if not self.is_leaf:
            raise RuntimeError("grad_dtype can only be accessed on leaf tensors.")
        return self.__dict__.get("_grad_dtype", self._dtype)

    @grad_dtype.setter
    def grad_dtype(self, value) -> None:
        if value is not None and not isinstance(value, D.dtype):
            raise RuntimeError(
                f"grad_dtype must be a torch.dtype or None, but got {type(value).__name__}"
            )
        g = self.grad  # read first, as PyTorch reads it (a non-leaf's read warns)
        if not self.is_leaf:
            raise RuntimeError("grad_dtype can only be set on leaf tensors.")
        if g is not None and value is not None and g._dtype is not value:
            raise RuntimeError(
                f"Cannot set grad_dtype to '{E.scalar_type_name(value)}' because there is already "
                f"a gradient with dtype '{E.c_type_name(g._dtype)}'. Please clear the gradient "
                "(.grad = None) before changing grad_dtype, or ensure the new grad_dtype matches "
                "the existing gradient's dtype."
            )
        self.__dict__["_grad_dtype"] = value
        acc = self._accumulator() if self._accumulator is not None else None
        if acc is not None:  # PyTorch updates the live AccumulateGrad's metadata
            acc._meta_dtype = value

    @grad.setter
    def grad(self, value: Tensor | None) -> None:
        if value is None:
            self._grad = None
            return
        if not isinstance(value, Tensor):
            raise TypeError(E.GRAD_TYPE.format(E.py_typename(value)))
        allowed = self.__dict__.get("_grad_dtype", self._dtype)
        if allowed is not None and value._dtype is not allowed:
            raise RuntimeError(
                E.GRAD_DTYPE.format(E.c_type_name(value._dtype), E.scalar_type_name(allowed))
            )
        if value._device != self._device:
            raise RuntimeError(E.GRAD_DEVICE.format(value._device.type, self._device.type))
        if value._data.shape != self._data.shape:
            raise RuntimeError(
                E.GRAD_SIZE.format(_size_str(value._data.shape), _size_str(self._data.shape))
            )
        self._grad = value

    @grad.deleter
    def grad(self) -> None:
        self._grad = None

    @property
    def retains_grad(self) -> bool:
        return self._retains_grad

    def retain_grad(self) -> None:
        """Keep ``.grad`` of this non-leaf tensor during backward (a no-op on leaves)."""
        if not self._requires_grad:
            raise RuntimeError(E.RETAIN_GRAD_NO_GRAD)
        # PyTorch's C++ is_leaf reads the stored grad_fn: a view made under no_grad whose base
        # was written since is a leaf here (its grad_fn is not regenerated, nothing raises)
        if self._grad_fn is None or self._retains_grad:
            return
        self.grad_fn._retain(self._output_nr, self)
        self._retains_grad = True

    def _grad_accumulator(self) -> AccumulateGrad:
        """The leaf's AccumulateGrad node: one per leaf while any graph holds it."""
        acc = self._accumulator() if self._accumulator is not None else None
        if acc is None:
            acc = AccumulateGrad(self)
            self._accumulator = weakref.ref(acc)
        return acc

    def _accumulate_grad(self, grad, version: int = 0, dtype=None, zero: bool = False) -> None:
        """AccumulateGrad's work: the first gradient becomes ``.grad`` (with ``version``: Note
        [In-place sums] in autograd/engine.py), later ones add in place (under a lock, as
        PyTorch's AccumulateGrad holds a mutex: backward may run in several threads into the same
        leaf). ``dtype``: the gradient's where it is not this tensor's (its AccumulateGrad casts
        to the ``grad_dtype``, or to the dtype the tensor had before a ``.data =``). ``zero``:
        the gradient is a zero tensor, which ``.grad`` takes as it is (Note [Zero gradients] in
        _zero.py)."""
        with _ACCUMULATE_LOCK:
            g = self._grad
            if g is None:
                if grad.shape != self._data.shape:
                    grad = self._grad_of_other_shape(grad, copied=version == -1)
                # made in inference mode, it is an inference tensor (Note [Gradients in
                # inference mode] in autograd/engine.py)
                self._grad = Tensor._make(
                    grad,
                    self._dtype if dtype is None else dtype,
                    self._device,
                    inference=grad_mode._state.inference,
                )
                self._grad_layout(self._grad, copied=version == -1)
                if zero and version != -1:  # taken, not copied
                    _zero.mark(self._grad)
                if version == -1:  # a copy (autograd.graph.COPIED)
                    version = 1 if self._dense_layout() else 0
                if version and not self._grad._inference:
                    self._grad._version_counter.value = version
            else:
                if g._is_zerotensor():  # ``variable_grad += new_grad``
                    raise RuntimeError(_zero.IMMUTABLE)
                if "_strides" in g.__dict__:
                    from .ops.inplace import _overlaps

                    if _overlaps(g):  # PyTorch's ``variable_grad += new_grad`` refuses it
                        raise RuntimeError(E.INTERNAL_OVERLAP)
                if grad.shape != g._data.shape:  # ``.grad += grad``: broadcast into .grad
                    from .ops.dispatch import broadcast_shapes

                    shape = broadcast_shapes(g._data.shape, grad.shape)
                    if shape != g._data.shape:
                        raise RuntimeError(E.INPLACE_SHAPE.format(list(g._data.shape), list(shape)))
                total = g._data + grad
                if total.dtype != g._data.dtype:  # an in-place sum keeps .grad's dtype
                    result = D.from_numpy_dtype(total.dtype)
                    if not D.can_cast(result, g._dtype):
                        raise RuntimeError(
                            f"result type {E.scalar_type_name(result)} can't be cast to the "
                            f"desired output type {E.scalar_type_name(g._dtype)}"
                        )
                    total = total.astype(g._data.dtype)
                g._set_data(total)
                if g._inference:  # written first; outside inference mode the bump raises
                    from .ops.inplace import bump_version

                    bump_version(g)
                else:
                    g._version_counter.value += 1
                self._check_layout_contract(g, 252)
        self._post_accumulate()

    def _grad_of_other_shape(self, grad, copied: bool):
        """The first gradient of a leaf whose ``.data =`` changed its shape: PyTorch's
        AccumulateGrad keeps a gradient that obeys the layout contract (compared dimension by
        dimension with the leaf's strides) in its own shape, and copies any other into an empty
        tensor of the leaf's shape and strides, which broadcasts it or raises copy_'s error."""
        from .ops.dispatch import broadcast_shapes
        from .ops.iterator_layout import contiguous_strides
        from .ops.shape import _strides

        shape = self._data.shape
        if not copied:
            if not self._dense_layout():
                return grad  # a contiguous gradient obeys the contract of a leaf with gaps
            mine, theirs = contiguous_strides(grad.shape), _strides(self)
            if len(mine) <= len(theirs) and all(
                n == 1 or a == b for n, a, b in zip(grad.shape, mine, theirs)
            ):
                return grad
        result = broadcast_shapes(shape, grad.shape)
        if result != shape:
            raise RuntimeError(E.INPLACE_SHAPE.format(list(shape), list(result)))
        return jnp.broadcast_to(grad, shape)

    def _check_layout_contract(self, grad: Tensor, line: int) -> None:
        """AccumulateGrad's check of a sum into ``.grad`` (PyTorch's ``obeys_layout_contract``):
        a dense leaf's strides on every dimension of size other than 1 (and no stride 0 on one
        of size 1), else a contiguous gradient; warns once otherwise."""
        if (
            "_strides" not in grad.__dict__
            and "_strides" not in self.__dict__
            and grad._data.shape == self._data.shape
        ):
            return
        if not grad_mode._state.layout_policy:
            return
        from .ops.iterator_layout import is_contiguous
        from .ops.shape import _strides

        shape = grad._data.shape
        mine = _strides(grad)
        if self._dense_layout():
            theirs = _strides(self)
            obeys = all((a != 0) if n == 1 else a == b for n, a, b in zip(shape, mine, theirs))
        else:
            obeys = is_contiguous(shape, mine)
        if not obeys:
            E.warn_once(
                E.GRAD_LAYOUT_CONTRACT.format(
                    list(shape), list(mine), list(self._data.shape), list(_strides(self)), line
                ),
                site=f"accumulate_grad.h:{line}",
            )

    def _grad_layout(self, grad: Tensor, copied: bool) -> None:
        """``.grad`` laid out as PyTorch's AccumulateGrad lays it out for a dense leaf: a copy
        (``new_empty_strided`` of the leaf's strides) has the leaf's strides, and so does a
        gradient it keeps, which must obey the layout contract (the leaf's strides but on size-1
        dims): leafgrad's computed gradients are contiguous, so the leaf's where it is not
        contiguous. A leaf with gaps or overlaps gets a contiguous ``.grad``."""
        from .ops.iterator_layout import is_contiguous

        strides = self.__dict__.get("_strides")
        if strides is None or not self._dense_layout():
            return
        if not copied and not grad_mode._state.layout_policy:
            return  # ``enforce_grad_layout_policy(False)``: a stolen gradient keeps its layout
        if copied or not is_contiguous(self._data.shape, strides):
            grad.__dict__["_strides"] = strides

    def _dense_layout(self) -> bool:
        """PyTorch's ``is_non_overlapping_and_dense``."""
        from .ops.inplace import _dense
        from .ops.shape import _strides

        return _dense(self._data.shape, _strides(self))

    def _accumulate_grad_graph(self, grad: Tensor) -> None:
        """AccumulateGrad under ``create_graph``: ``.grad`` keeps the gradient's own graph (a
        recorded clone, then recorded additions), as PyTorch's."""
        if self._grad is None:
            empty = Tensor._make(
                jnp.zeros(self._data.shape, grad._data.dtype),
                grad._dtype,
                self._device,
                inference=grad_mode._state.inference,
            )
            self._grad_layout(empty, copied=True)
            self._grad = empty.copy_(grad)
        else:
            self._grad = self._grad + grad
            self._check_layout_contract(self._grad, 282)
        self._post_accumulate()

    def _post_accumulate(self) -> None:
        hooks = self.__dict__.get("_post_acc_hooks")
        if hooks:
            # PyTorch's ``_call_hooks``: a hook's result (a tensor other than its argument)
            # is the next hooks' argument; once all have run, any such result raises
            arg, modified = self, False
            for hook in list(hooks.values()):
                result = hook(arg)
                if result is None or result is arg:
                    continue
                if not isinstance(result, Tensor):
                    raise TypeError(
                        f"expected Variable, but hook returned '{type(result).__name__}'"
                    )
                arg, modified = result, True
            if modified:
                raise RuntimeError("Tensor post accumulate grad hooks should return None.")

    def _retain_grad_update(self, grad, graph: bool = False, inference: bool = False) -> None:
        """``retain_grad``'s hook: a copy of the first gradient, then out-of-place sums, made in
        the backward's mode (``inference``: Note [Gradients in inference mode])."""
        if graph:
            self._grad = grad.clone() if self._grad is None else self._grad + grad
        elif self._grad is None:
            self._grad = Tensor._make(grad, self._dtype, self._device, inference=inference)
        else:
            self._grad = Tensor._make(
                self._grad._data + grad, self._dtype, self._device, inference=inference
            )

    # --- hooks ---------------------------------------------------------------------------
    def register_hook(self, hook):
        """Run ``hook(grad)`` when this tensor's gradient is computed; a returned tensor replaces
        the gradient. Returns a handle with ``remove()``."""
        from .autograd.graph import RemovableHandle, _HookDict

        if not self._requires_grad:
            raise RuntimeError(E.HOOK_NO_GRAD)
        self.__dict__.pop("_hooks_attr", None)
        # As PyTorch's Python ``register_hook``: the tensor's hook dict is registered on its
        # grad_fn with the first hook; later hooks join that dict, without regenerating a view's
        # stale grad_fn, until the grad_fn changes (PyTorch's ``reset_backward_hooks``).
        ref = self.__dict__.get("_hook_node")
        grad_fn = self._grad_fn
        if ref is None or grad_fn is None or ref() is not grad_fn:
            grad_fn = self.grad_fn
            if grad_fn is not None:
                self.__dict__["_hook_node"] = weakref.ref(grad_fn)
        if grad_fn is not None:
            handle = grad_fn._add_tensor_hook(self._output_nr, hook)
        else:
            hooks = self.__dict__.get("_hooks")
            if hooks is None:
                hooks = self.__dict__["_hooks"] = _HookDict()
            handle = RemovableHandle(hooks)
            hooks[handle.id] = hook
        if isinstance(self._data, jax.core.Tracer):
            from . import func

            func.hook_at_level(self, hook, handle)  # Note [Hooks at a level]
        return handle

    def register_post_accumulate_grad_hook(self, hook):
        """Run ``hook(tensor)`` after a gradient was accumulated into this leaf's ``.grad``."""
        from .autograd.graph import RemovableHandle, _HookDict

        if not self._requires_grad:
            raise RuntimeError(E.HOOK_NO_GRAD)
        if self.grad_fn is not None:
            raise RuntimeError(E.POST_ACC_HOOK_NON_LEAF)
        self.__dict__.pop("_post_acc_attr", None)
        hooks = self.__dict__.get("_post_acc_hooks")
        if hooks is None:
            hooks = self.__dict__["_post_acc_hooks"] = _HookDict()
        handle = RemovableHandle(hooks)
        hooks[handle.id] = hook
        return handle

    @property
    def _backward_hooks(self):
        """PyTorch's ``Tensor._backward_hooks``: None until ``register_hook`` was called, then
        the hooks by handle id (a snapshot here: a non-leaf's live on its grad_fn)."""
        if "_hooks_attr" in self.__dict__:
            return self.__dict__["_hooks_attr"]
        ref = self.__dict__.get("_hook_node")
        node = ref() if ref is not None else None
        if node is not None and node is self._grad_fn:
            hooks = node._tensor_pre_hooks or {}
            nr = self._output_nr
            return collections.OrderedDict((k, f) for k, (n, f) in hooks.items() if n == nr)
        hooks = self.__dict__.get("_hooks")
        return None if hooks is None else collections.OrderedDict(hooks)

    @_backward_hooks.setter
    def _backward_hooks(self, hooks) -> None:
        # PyTorch's setter replaces the hooks a leaf runs with the new dict's; a non-leaf's
        # hooks were given to its grad_fn, which keeps running them: only the attribute changes.
        if self._grad_fn is not None:
            self.__dict__["_hooks_attr"] = hooks
            return
        self.__dict__.pop("_hooks", None)
        for hook in (hooks or {}).values():
            self.register_hook(hook)

    @property
    def _post_accumulate_grad_hooks(self):
        """None until ``register_post_accumulate_grad_hook`` was called, then its hooks."""
        if "_post_acc_attr" in self.__dict__:
            return self.__dict__["_post_acc_attr"]
        hooks = self.__dict__.get("_post_acc_hooks")
        return None if hooks is None else collections.OrderedDict(hooks)

    @_post_accumulate_grad_hooks.setter
    def _post_accumulate_grad_hooks(self, hooks) -> None:
        # As PyTorch's: None leaves the hooks that run in place; a dict replaces them.
        if hooks is None:
            self.__dict__["_post_acc_attr"] = None
            return
        self.__dict__.pop("_post_acc_attr", None)
        self.__dict__.pop("_post_acc_hooks", None)
        for hook in hooks.values():
            self.register_post_accumulate_grad_hook(hook)

    def __delitem__(self, key):
        raise TypeError("Tensor does not support deleting items")

    def detach(self) -> Tensor:
        """A new leaf sharing this tensor's memory and version counter, not requiring grad."""
        return self._detach(True)

    def _detach(self, stop: bool) -> Tensor:
        """``detach()``; ``stop=False``: an alias that hides ``requires_grad`` only, whose values
        a torch.func transform still differentiates (``func.hide_captured``)."""
        data = _stopped(self._data) if stop else self._data
        t = Tensor._make(data, self._dtype, self._device, inference=self._inference)
        if data is not self._data:  # still a transform's tensor, without storage (``numpy``)
            t.__dict__["_stopped"] = True
        if self._inference and not grad_mode._state.inference:
            t.__dict__["_counted"] = True  # a counter of its own (Note [Inference tensors])
        else:
            t._version_counter = self._version_counter
        _storage.share(self, t)
        _copy_strides(self, t)
        return t

    def _is_view(self) -> bool:
        return self._base is not None

    def _is_zerotensor(self) -> bool:
        """Whether this is a zero tensor (Note [Zero gradients] in _zero.py)."""
        return _zero.SEEN[0] and _zero.is_zero(self)

    def detach_(self) -> Tensor:
        """Make this tensor a leaf that does not require grad, in place."""
        if self._inference or grad_mode._state.inference:
            return self  # PyTorch's autograd kernel is skipped (Note [Inference tensors])
        if self._base is not None:
            raise RuntimeError(E.DETACH_VIEW)
        self._grad_fn = None
        self._output_nr = 0
        self._requires_grad = False
        self._accumulator = None
        _storage.views_stop_requiring_grad(self)
        return self

    @property
    def data(self) -> Tensor:
        """A leaf sharing this tensor's memory, with a version counter of its own."""
        if DATA_CHECK[0] is not None:
            DATA_CHECK[0](self, None)
        data = _stopped(self._data)
        t = Tensor._make(data, self._dtype, self._device, inference=self._inference)
        if data is not self._data:
            t.__dict__["_stopped"] = True
        if self._inference and not grad_mode._state.inference:
            t.__dict__["_counted"] = True  # Note [Inference tensors]
        _storage.share(self, t)
        _copy_strides(self, t)
        return t

    @data.setter
    def data(self, value: Tensor) -> None:
        if not isinstance(value, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {E.py_typename(value)}")
        if DATA_CHECK[0] is not None:
            DATA_CHECK[0](self, value)
        if value._dtype is not self._dtype or value._device != self._device:
            # PyTorch's set_data forgets the AccumulateGrad: graphs recorded from now on get
            # a new one (with the new dtype), those recorded before keep theirs
            self._accumulator = None
        self._data = value._data
        self._dtype = value._dtype
        self._device = value._device
        _storage.share(value, self)
        _copy_strides(value, self)

    def set_(self, *args, **kwargs) -> Tensor:
        """Make this tensor share ``source``'s memory, shape, dtype and strides (``set_()``: an
        empty tensor of its own), as ``Tensor.set_``. leafgrad has no ``Storage`` objects, so
        the storage forms (offset, size, stride) are refused, and so is a call in grad mode on
        tensors that require grad (PyTorch records a ``NotImplemented`` node there)."""
        from .ops.inplace import check_inplace

        bound = E.bind(_SET_SIGNATURES, args, kwargs)
        if bound is None or bound[0] in (1, 2):
            raise TypeError(E.invalid_arguments("set_", _SET_SIGNATURES, args, kwargs))
        if bound[0] == 4:
            raise NotImplementedError(
                "leafgrad has no Storage objects: set_(source, storage_offset, size, stride) is "
                "not supported; use set_(source) or as_strided"
            )
        source = bound[1].get("source")
        if source is None:
            source = Tensor._make(jnp.zeros((0,), self._dtype.np), self._dtype, self._device)
        elif source._dtype != self._dtype:
            raise RuntimeError(
                f"Could not set tensor of type {E.c_type_name(source._dtype)} to a tensor of "
                f"type {E.c_type_name(self._dtype)}"
            )
        rg = self._requires_grad or source._requires_grad
        check_inplace(self, rg, operands=(source,))
        if rg and grad_mode._state.grad_enabled and not grad_mode._state.inference:
            raise NotImplementedError(
                "leafgrad does not record set_ on tensors that require grad in grad mode "
                "(PyTorch's node has no derivative); call it under torch.no_grad()"
            )
        self._data = source._data
        self._device = source._device
        _storage.share(source, self)
        _copy_strides(source, self)
        self._version_counter.value += 1
        return self

    def resize_(self, *sizes, memory_format=None, **size) -> Tensor:
        """``Tensor.resize_``: a new shape over this tensor's memory (Note [Resized memory]);
        ``size=`` gives it by keyword."""
        from .ops.shape import _ints

        if size:
            if sizes or set(size) != {"size"}:
                bad = next(k for k in size if k != "size" or sizes)
                raise TypeError(f"resize_() got an unexpected keyword argument '{bad}'")
            sizes = (size["size"],)
        shape = _ints(sizes, "resize_") if sizes else None
        if shape is None:
            raise TypeError(E.missing_args("resize_", ["size"]))
        if self.requires_grad:
            raise RuntimeError("cannot resize variables that require grad")
        return _resize(self, shape, memory_format)

    def resize_as_(self, the_template, *, memory_format=None) -> Tensor:
        """``Tensor.resize_as_``: ``resize_`` to ``the_template``'s shape."""
        if not isinstance(the_template, Tensor):
            raise TypeError(
                "resize_as_(): argument 'the_template' (position 1) must be Tensor, not "
                f"{E.py_typename(the_template)}"
            )
        if self.requires_grad:
            raise RuntimeError("cannot resize variables that require grad")
        return _resize(self, tuple(the_template.shape), memory_format)

    def backward(
        self,
        gradient: Tensor | None = None,
        retain_graph: bool | None = None,
        create_graph: bool = False,
        inputs=None,
    ) -> None:
        """Compute the gradient of this tensor w.r.t. the leaves of its graph (PyTorch's rules)."""
        from .autograd import backward

        backward(self, gradient, retain_graph, create_graph, inputs=inputs)

    # --- conversion ------------------------------------------------------------------------
    def _host(self, what: str = "item") -> np.ndarray:
        """The values on the host; ``what``: the read, for vmap's error about a batched tensor
        (Note [Values inside transforms] in func.py)."""
        if self._device is DEV.META:  # Note [Meta tensors]
            raise NotImplementedError(DEV.META_NO_DATA)
        data = self._data
        if isinstance(data, jax.core.Tracer):
            from . import func

            values = func.traced_values(data, what)
            if values is not None:
                return values
        return np.asarray(data)

    def item(self) -> Any:
        """The value of a one-element tensor as a Python number."""
        return self._item("item")

    def _vmap_read(self, what: str) -> None:
        """PyTorch's vmap error for reading a batched tensor's values, which comes before the
        size checks (Note [Values inside transforms] in func.py)."""
        if isinstance(self._data, jax.core.Tracer):
            from . import func

            if func.VMAPS[0]:
                func.traced_values(self._data, what)

    def _item(self, what: str) -> Any:
        self._vmap_read(what)
        n = self.numel()
        if n != 1:
            raise RuntimeError(E.ITEM_NUMEL.format(n))
        if self._device is DEV.META:
            raise RuntimeError("Tensor.item() cannot be called on meta tensors")
        return self._host(what).reshape(()).item()

    def tolist(self):
        if self._is_zerotensor():
            raise RuntimeError(_zero.TOLIST)
        host = self._host("storage")
        if host.dtype == jnp.bfloat16:
            host = host.astype(np.float32)
        return host.tolist()

    def numpy(self, *, force: bool = False) -> np.ndarray:
        """The values as a numpy array (a copy: JAX arrays cannot share memory for writing)."""
        if self._requires_grad and not force:
            raise RuntimeError(E.NUMPY_REQUIRES_GRAD)
        if not force and self._is_zerotensor():
            raise RuntimeError(_zero.NUMPY)
        if self._device.type != "cpu" and not force:
            raise TypeError(E.NUMPY_DEVICE.format(self._device))
        if self._dtype is D.bfloat16:
            raise TypeError("Got unsupported ScalarType BFloat16")
        if isinstance(self._data, jax.core.Tracer) or "_stopped" in self.__dict__:
            from . import func

            if func.transform_level() > 0:  # Note [Values inside transforms]
                raise RuntimeError(func.NO_STORAGE)
        values = np.array(self._data)
        strides = self.__dict__.get("_strides")
        if strides is not None and values.ndim:
            from .ops.iterator_layout import dense_in_memory_order, non_overlapping_and_dense

            if non_overlapping_and_dense(values.shape, strides):
                # laid out in memory as PyTorch's tensor is: the array has its strides
                memory = dense_in_memory_order(values, strides)
                values = np.lib.stride_tricks.as_strided(
                    memory, values.shape, [st * values.itemsize for st in strides]
                )
            elif self._base is None and values.size and all(st > 0 for st in strides):
                # a tensor with gaps in its own memory (``slice_scatter`` of a strided view keeps
                # its strides): the array spans that memory
                span = 1 + sum((n - 1) * st for n, st in zip(values.shape, strides))
                memory = np.zeros(span, values.dtype)
                laid = np.lib.stride_tricks.as_strided(
                    memory, values.shape, [st * values.itemsize for st in strides]
                )
                laid[...] = values
                values = laid
        return values

    def __array__(self, dtype=None, copy=None):
        values = self.numpy()
        return values if dtype is None else values.astype(dtype, copy=False)

    def __jax_array__(self):
        return self._data

    def __float__(self) -> float:
        if self._requires_grad and grad_mode.is_grad_enabled():
            E.warn_once(E.SCALAR_REQUIRES_GRAD)
        if self.numel() != 1:
            raise ValueError(E.SCALAR_NUMEL)
        return float(self._real_item("double"))

    def __int__(self) -> int:
        if self.numel() != 1:
            raise ValueError(E.SCALAR_NUMEL)
        return int(self._real_item("int64_t"))

    def _real_item(self, c_type: str):
        return E.real_scalar(self.item(), c_type)

    def __complex__(self) -> complex:
        if self._requires_grad and grad_mode.is_grad_enabled():
            E.warn_once(E.SCALAR_REQUIRES_GRAD)
        if self.numel() != 1:
            raise ValueError(E.SCALAR_NUMEL)
        return complex(self.item())

    def __index__(self) -> int:
        if self._dtype._kind not in "biu" or self.numel() != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    def __bool__(self) -> bool:
        self._vmap_read("bool")
        n = self.numel()
        if n == 0:
            raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
        if n > 1:
            raise RuntimeError(E.BOOL_AMBIGUOUS)
        return bool(self._item("bool"))

    def __len__(self) -> int:
        if self._data.ndim == 0:
            raise TypeError(E.LEN_0D)
        return self._data.shape[0]

    def __iter__(self):
        if self._data.ndim == 0:
            raise TypeError(E.ITER_0D)
        return iter(self.unbind(0))

    def __reversed__(self):
        """The tensor flipped along dim 0; a 0-d tensor itself."""
        return self if self._data.ndim == 0 else self.flip(0)

    def __contains__(self, element) -> bool:
        """Whether some element equals ``element`` (a tensor or a number), as PyTorch's
        ``(element == self).any().item()``."""
        if isinstance(element, (Tensor, numbers.Number)):
            return bool((element == self).any().item())
        raise RuntimeError(
            "Tensor.__contains__ only supports Tensor or scalar, but you passed in a "
            f"{type(element)}."
        )

    def __rdiv__(self, other):
        return self.reciprocal() * other

    def is_shared(self) -> bool:
        """Whether the storage was moved to shared memory (``share_memory_``); always on an
        accelerator, as PyTorch's CUDA tensors."""
        root = self if self._base is None else self._base
        return self._device.type != "cpu" or root.__dict__.get("_shared_memory", False)

    def share_memory_(self):
        """PyTorch's move of the storage to shared memory; here a mark that ``is_shared`` reads
        (a JAX array's buffer is not placed by the caller)."""
        root = self if self._base is None else self._base
        root.__dict__["_shared_memory"] = True
        return self

    def resize(self, *sizes):
        warnings.warn("non-inplace resize is deprecated", stacklevel=2)
        from .autograd._functions import Resize

        return Resize.apply(self, sizes)

    def resize_as(self, tensor):
        warnings.warn("non-inplace resize_as is deprecated", stacklevel=2)
        from .autograd._functions import Resize

        return Resize.apply(self, tensor.size())

    def __hash__(self) -> int:
        return id(self)

    def __repr__(self, *, tensor_contents=None) -> str:
        from ._tensor_str import format_tensor, meta_suffixes

        if self._device is DEV.META:  # Note [Meta tensors]: the size in place of values
            return meta_suffixes(self)
        from . import func

        if isinstance(self._data, jax.core.Tracer) or func.active_transforms():
            text = func.traced_repr(self)  # Note [Printing inside transforms]
            if text is not None:
                return text
        try:
            grad_fn = self._grad_fn if self._base is None else _storage.view_grad_fn(self)
            name = None if grad_fn is None else type(grad_fn).__name__
        except RuntimeError:  # a view whose base was written in a way its rebase refuses
            name = "Invalid"
        return format_tensor(
            self._repr_values(),
            dtype=self._dtype,
            device=str(self._device),
            requires_grad=self._requires_grad,
            grad_fn_name=name,
            is_inference=self._inference,
            tangent=self._tangent_text(),
        )

    def _tangent_text(self) -> str | None:
        """The forward-AD tangent as PyTorch's repr formats it (Note [Forward AD])."""
        if "_fw_grad" not in self.__dict__:
            return None
        from .autograd.forward_ad import tangent_of

        t = tangent_of(self)
        return None if t is None else format(t, "")

    def _repr_values(self) -> np.ndarray:
        return np.asarray(self._data)

    __str__ = __repr__

    def __format__(self, spec: str) -> str:
        if self._data.ndim == 0:
            return self.item().__format__(spec)
        return object.__format__(self, spec)

    def __reduce_ex__(self, protocol):
        return (
            _rebuild,
            (np.asarray(self._data), self._dtype.name, str(self._device), self._requires_grad),
        )

    def __deepcopy__(self, memo):
        if not self.is_leaf:
            raise RuntimeError(
                "Only Tensors created explicitly by the user (graph leaves) support the deepcopy "
                "protocol at the moment.  If you were attempting to deepcopy a module, this may "
                "be because of a torch.nn.utils.weight_norm usage, see "
                "https://github.com/pytorch/pytorch/pull/103001"
            )
        t = Tensor._make(self._data, self._dtype, self._device, self._requires_grad)
        if self._grad is not None:
            t._grad = self._grad.__deepcopy__(memo)
        memo[id(self)] = t
        return t

    # --- dtype and device conversion -------------------------------------------------------
    def to(self, *args, **kwargs) -> Tensor:
        """Convert dtype and/or device; returns ``self`` when nothing would change."""
        dtype, device, copy, fmt = _parse_to(self, args, kwargs)
        return _to(self, dtype, device, copy, fmt)

    def cuda(self, device=None, non_blocking: bool = False) -> Tensor:
        if device is None:
            device = DEV.device("cuda", 0)
        elif isinstance(device, int):
            device = DEV.device("cuda", device)
        return _to(self, None, DEV.canonical(device), False)

    def cpu(self) -> Tensor:
        return _to(self, None, DEV.CPU, False)

    def float(self) -> Tensor:
        return _to(self, D.float32, None, False)

    def double(self) -> Tensor:
        return _to(self, D.float64, None, False)

    def half(self) -> Tensor:
        return _to(self, D.float16, None, False)

    def bfloat16(self) -> Tensor:
        return _to(self, D.bfloat16, None, False)

    def long(self) -> Tensor:
        return _to(self, D.int64, None, False)

    def int(self) -> Tensor:
        return _to(self, D.int32, None, False)

    def short(self) -> Tensor:
        return _to(self, D.int16, None, False)

    def char(self) -> Tensor:
        return _to(self, D.int8, None, False)

    def byte(self) -> Tensor:
        return _to(self, D.uint8, None, False)

    def bool(self) -> Tensor:
        return _to(self, D.bool_, None, False)

    def cfloat(self) -> Tensor:
        return _to(self, D.complex64, None, False)

    def cdouble(self) -> Tensor:
        return _to(self, D.complex128, None, False)

    def type(self, dtype=None, non_blocking: bool = False, **kwargs):
        """Without arguments, the legacy type name (``'torch.FloatTensor'``); else convert.
        ``async`` is the deprecated spelling of ``non_blocking``; ``memory_format`` is taken."""
        for key in kwargs:
            if key not in ("async", "memory_format"):
                raise TypeError(f"type() got an unexpected keyword argument '{key}'")
        if "async" in kwargs:
            E.warn_deprecated_signature(
                "type",
                "(object dtype = None, bool async = False, *, torch.memory_format memory_format "
                "= None)",
                (
                    "(object dtype = None, bool non_blocking = False, *, torch.memory_format "
                    "memory_format = None)",
                ),
            )
        if dtype is None:
            return _legacy_type_name(self)
        from ._legacy import LegacyType, resolve

        if not isinstance(dtype, (D.dtype, LegacyType, str)):  # PyTorch's type_from_object
            if isinstance(dtype, type):
                mod = dtype.__module__
                name = dtype.__qualname__ if mod == "builtins" else f"{mod}.{dtype.__qualname__}"
                raise ValueError(f"invalid type: '{name}'")
            raise TypeError("dtype must be a type, str, or dtype object")
        dtype, device_type = resolve(dtype)  # a legacy type (or its name) names a device too
        device = None
        if device_type is not None and device_type != self._device.type:
            device = DEV.canonical(device_type)  # checked as ``.to`` checks it
        return _to(self, dtype, device, False)

    def type_as(self, other: Tensor) -> Tensor:
        return _to(self, other._dtype, None, False)

    def clone(self, *, memory_format=None) -> Tensor:
        """A copy recorded as ``CloneBackward0``, laid out as ``memory_format`` asks."""
        from ._factories import _like_strides
        from .ops.shape import _clone, _set_strides

        fmt = _check_memory_format("clone", memory_format)
        strides = _format_strides(self._data.shape, fmt)
        if fmt is None or fmt is preserve_format:
            # PyTorch keeps the strides of a non-overlapping and dense input, and gives another
            # dense strides in its dims' order (``empty_like``'s ``infer_dense_strides``)
            strides = _like_strides(self, None, "clone")
        out = _clone(self)
        return out if strides is None else _set_strides(out, strides)

    # --- new_* factories -------------------------------------------------------------------
    @E.data_first("new_tensor", method=True)
    def new_tensor(self, data, *, dtype=None, device=None, requires_grad=False) -> Tensor:
        from ._factories import _copy_of, _dtype_arg

        dtype = _dtype_arg(dtype, "new_tensor")  # the parser's check, named after the method
        if isinstance(data, Tensor):
            E.warn(
                "To copy construct from a tensor, it is recommended to use "
                "sourceTensor.detach().clone() or sourceTensor.detach().clone()"
                ".requires_grad_(True), rather than tensor.new_tensor(sourceTensor)."
            )
            data = data.detach()
        return _copy_of(
            data,
            self._dtype if dtype is None else dtype,
            self._device if device is None else device,
            requires_grad,
        )

    def _new_like(self, fn, size, dtype, device, requires_grad, *extra):
        from . import _factories as F

        if not size:
            raise TypeError(f'new_{fn}() missing 1 required positional arguments: "size"')
        F._dtype_arg(dtype, f"new_{fn}")  # the parser's check, named after the method
        if len(size) == 1 and isinstance(size[0], (tuple, list, Size)):
            # passed on as one tuple: the factory would read ``*()`` as a missing size
            size = (tuple(size[0]),)
        # PyTorch's ``new_zeros`` zeroes a new ``empty`` tensor: a negative size gets empty's error
        factory = getattr(F, "empty" if fn == "zeros" and _negative_size(size) else fn)
        out = factory(
            *size,
            *extra,
            dtype=self._dtype if dtype is None else dtype,
            device=self._device if device is None else device,
            requires_grad=requires_grad,
        )
        if isinstance(self._data, jax.core.Tracer):
            from . import func

            func.batch_like(out, self._data)  # a batched tensor's ``new_*`` is batched
        return out if fn == "empty" else self._filled_by_kernel(out)

    def _filled_by_kernel(self, out: Tensor) -> Tensor:
        """``new_zeros``/``new_ones``/``new_full`` fill a new empty tensor in place: on an
        inference tensor outside inference mode that write is counted (Note [Inference
        tensors] in _storage.py)."""
        if self._inference and not grad_mode._state.inference and not out._inference:
            out._version_counter.value += 1
        return out

    def new(self, *args, **kwargs) -> Tensor:
        """``Tensor.new``: the legacy constructor in this tensor's dtype (and device): sizes
        (zeros here), a sequence of values, or a tensor of that dtype and device type (an alias
        of it, ``AliasBackward0``)."""
        return _legacy_new(self._dtype, self._device, args, kwargs, LEGACY_NEW_TENSOR_DEVICE)

    def new_zeros(
        self, *size, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False
    ) -> Tensor:
        return self._new_like("zeros", size, dtype, device, requires_grad)

    def new_ones(
        self, *size, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False
    ) -> Tensor:
        return self._new_like("ones", size, dtype, device, requires_grad)

    def new_empty(
        self, *size, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False
    ) -> Tensor:
        return self._new_like("empty", size, dtype, device, requires_grad)

    def new_empty_strided(
        self,
        size,
        stride,
        *,
        dtype=None,
        device=None,
        requires_grad=False,
        layout=None,
        pin_memory=False,
    ) -> Tensor:
        from .ops.tensor_info import empty_strided

        return empty_strided(
            size,
            stride,
            dtype=self._dtype if dtype is None else dtype,
            device=self._device if device is None else device,
            requires_grad=requires_grad,
        )

    def new_full(
        self,
        size,
        fill_value,
        *,
        dtype=None,
        device=None,
        requires_grad=False,
        layout=None,
        pin_memory=False,
    ):
        from ._factories import _dtype_arg, full

        _dtype_arg(dtype, "new_full")
        out = full(
            tuple(size),
            fill_value,
            dtype=self._dtype if dtype is None else dtype,
            device=self._device if device is None else device,
            requires_grad=requires_grad,
        )
        if isinstance(self._data, jax.core.Tracer):
            from . import func

            func.batch_like(out, self._data)  # a batched tensor's ``new_full`` is batched
        return self._filled_by_kernel(out)

    # --- math: every op goes through dispatch ------------------------------------------------
    def pow(self, exponent) -> Tensor:
        if isinstance(exponent, Tensor):
            return dispatch(OPS["pow_tensor"], self, exponent)
        if not isinstance(exponent, (bool, int, float, complex, np.generic)):
            raise TypeError(E.invalid_arguments("pow", POW_METHOD, (exponent,)))
        if type(exponent) is int and not -(1 << 63) <= exponent < 1 << 63:
            from .ops.dispatch import _big_int

            _big_int(exponent)  # a static argument: the operand check does not see it
        if isinstance(exponent, (int, float)) and not isinstance(exponent, bool):
            from .ops.shape import checked_number_into

            # the kernel reads the exponent in the result's dtype (c10's overflow check)
            checked_number_into(self, exponent)
        return dispatch(OPS["pow_scalar"], self, exponent=exponent)

    def neg(self) -> Tensor:
        return dispatch(OPS["neg"], self)

    negative = neg

    def reciprocal(self) -> Tensor:
        return dispatch(OPS["reciprocal"], self)

    def exp(self) -> Tensor:
        return dispatch(OPS["exp"], self)

    def log(self) -> Tensor:
        return dispatch(OPS["log"], self)

    def __add__(self, other):
        if not _is_operand(other):
            return NotImplemented
        return dispatch(OPS["add"], self, other)

    def __radd__(self, other):
        if not _is_operand(other):
            return NotImplemented
        return dispatch(OPS["add"], self, other)

    def __sub__(self, other):
        if not _is_operand(other):
            return NotImplemented
        return dispatch(OPS["sub"], self, other)

    # ``__rsub__``, ``__floordiv__`` and ``__mod__`` and their reflections are installed by
    # ops/elementwise.py, whose frontends record wrapped numbers (Note [Wrapped numbers]).

    def __mul__(self, other):
        if not _is_operand(other):
            return NotImplemented
        return dispatch(OPS["mul"], self, other)

    def __rmul__(self, other):
        if not _is_operand(other):
            return NotImplemented
        return dispatch(OPS["mul"], self, other)

    def __truediv__(self, other):
        if not _is_operand(other):
            return NotImplemented
        return dispatch(OPS["div"], self, other)

    def __rtruediv__(self, other):
        if not _is_operand(other):
            return NotImplemented
        # PyTorch: other / x is reciprocal(x) * other.
        return dispatch(OPS["mul"], dispatch(OPS["reciprocal"], self), other)

    def __pow__(self, other):
        if not _is_operand(other):
            return NotImplemented
        return self.pow(other)

    def __rpow__(self, other):
        if not _is_operand(other):
            return NotImplemented
        return dispatch(OPS["rpow"], self, other)

    def __neg__(self):
        return dispatch(OPS["neg"], self)

    def __pos__(self):
        return self

    def _compare(self, name: str, other):
        if not _is_operand(other):
            return NotImplemented
        return dispatch(OPS[name], self, other)

    def __eq__(self, other):  # type: ignore[override]
        return self._compare("eq", other)

    def __ne__(self, other):  # type: ignore[override]
        return self._compare("ne", other)

    def __lt__(self, other):
        return self._compare("lt", other)

    def __le__(self, other):
        return self._compare("le", other)

    def __gt__(self, other):
        return self._compare("gt", other)

    def __ge__(self, other):
        return self._compare("ge", other)


def _rebuild(values, dtype_name, device, requires_grad):
    from ._factories import tensor

    return tensor(values, dtype=D._BY_NAME[dtype_name], device=device, requires_grad=requires_grad)


def _is_operand(x) -> bool:
    return isinstance(x, (Tensor, bool, int, float, complex, np.generic))


# ``pow``'s signatures as PyTorch's parser prints them (Note [Argument parser errors])
POW_METHOD = ("(Tensor exponent)", "(Number exponent)")
POW_FUNCTION = (
    "(Tensor input, Tensor exponent, *, Tensor out = None)",
    "(Number self, Tensor exponent, *, Tensor out = None)",
    "(Tensor input, Number exponent, *, Tensor out = None)",
)


def _wrap_dim(dim: int, ndim: int) -> int:
    """A dim index in ``[-ndim, ndim)`` made non-negative, with PyTorch's error."""
    if isinstance(dim, Tensor):
        dim = int(dim)
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(E.DIM_RANGE.format(-n, n - 1, dim))
    return dim % n


TO_SIGNATURES = (
    "(torch.device device = None, torch.dtype dtype = None, bool non_blocking = False, "
    "bool copy = False, *, torch.memory_format memory_format = None)",
    "(torch.dtype dtype, bool non_blocking = False, bool copy = False, *, "
    "torch.memory_format memory_format = None)",
    "(Tensor tensor, bool non_blocking = False, bool copy = False, *, "
    "torch.memory_format memory_format = None)",
)


def _parse_to(t: Tensor, args, kwargs):
    """``Tensor.to``'s arguments bound as PyTorch's parser binds them (Note [Argument parser
    errors]): ``(dtype, device, copy, memory_format)``."""
    if len(args) == 1 and not kwargs:  # the common calls, without the parser's loop
        a = args[0]
        if isinstance(a, D.dtype):
            return a, None, False, None
        if isinstance(a, (str, DEV.device)):
            return None, DEV.canonical(a), False, None
        if isinstance(a, Tensor):
            return a._dtype, a._device, False, None
    given = args
    if args and isinstance(args[0], (bool, float, complex, np.bool_, np.inexact)):
        # PyTorch takes a leading Python float, bool or complex for the dtype of its type (a
        # NumPy float64 or complex128 is one); another NumPy number is read as a double (NumPy
        # warns that a complex one loses its imaginary part), a wrapped number of float64
        a = args[0]
        if type(a) is bool:
            kind = bool
        elif isinstance(a, float):
            kind = float
        elif isinstance(a, complex):
            kind = complex
        else:
            float(a)
            kind = float
        args = (kind, *args[1:])
    bound = E.bind(TO_SIGNATURES, args, kwargs)
    if bound is None:
        args = given
        raise TypeError(E.invalid_arguments("to", TO_SIGNATURES, args, kwargs))
    k, values = bound
    dtype, device = values.get("dtype"), values.get("device")
    if k == 2:
        dtype, device = values["tensor"]._dtype, values["tensor"]._device
    return (
        None if dtype is None else D.to_dtype(dtype),
        None if device is None else DEV.canonical(device),
        bool(values.get("copy", False)),
        values.get("memory_format"),
    )


def _to(
    t: Tensor, dtype: D.dtype | None, device: DEV.device | None, copy: bool, fmt=None
) -> Tensor:
    """``Tensor.to``: the same tensor when nothing changes (PyTorch's ``to_will_alias``: a
    ``memory_format`` matching the one its strides suggest changes nothing), else a recorded
    ``ToCopyBackward0`` laid out as ``memory_format`` asks (preserve: as ``t``)."""
    dtype = t._dtype if dtype is None else dtype
    device = t._device if device is None else device
    if fmt is preserve_format:
        fmt = None
    if (
        dtype is t._dtype
        and device == t._device
        and not copy
        and (fmt is None or _suggested_format(t) is fmt)
    ):
        return t
    if fmt is not None:
        strides = _format_strides(t._data.shape, fmt)  # PyTorch's rank check first
        out = _to(t, dtype, device, True)
        if strides is None:
            out.__dict__.pop("_strides", None)
        else:
            out.__dict__["_strides"] = strides
        return out
    if t._dtype.is_complex and not dtype.is_complex and dtype is not D.bool_:
        E.warn_once(E.COMPLEX_TO_REAL)
    if t._inference and not grad_mode._state.inference:
        return _copy_of_inference(t, dtype, device)
    if device != t._device:
        return dispatch(OPS["to_copy"], t, dtype=dtype, _device=device)
    return dispatch(OPS["to_copy"], t, dtype=dtype)


def _copy_of_inference(t: Tensor, dtype: D.dtype, device: DEV.device) -> Tensor:
    """``clone``/``to`` of an inference tensor outside inference mode: PyTorch's kernel fills a
    new normal tensor with ``copy_``, which is recorded (``CopyBackwards``) and bumps its version
    (Note [Inference tensors])."""
    from . import _factories as F

    return F.empty(t._data.shape, dtype=dtype, device=device).copy_(t)


# Tensor.set_'s overloads, as PyTorch's parser prints them
_SET_SIGNATURES = (
    "()",
    "(torch.Storage source)",
    "(torch.Storage source, int storage_offset, tuple of ints size, tuple of ints stride = None)",
    "(Tensor source)",
    "(Tensor source, int storage_offset, tuple of ints size, tuple of ints stride = None)",
)


def _copy_strides(source: Tensor, target: Tensor) -> None:
    strides = source.__dict__.get("_strides")
    if strides is None:
        target.__dict__.pop("_strides", None)
    else:
        target.__dict__["_strides"] = strides


def _options(dtype, device) -> str:
    """``TensorOptions`` as PyTorch prints them in the legacy constructors' type error."""
    return (
        f"TensorOptions(dtype={E.c_type_name(dtype)}, device={device}, layout=Strided, "
        "requires_grad=false (default), pinned_memory=false (default), memory_format=(nullopt))"
    )


LEGACY_NEW_TENSOR_DEVICE = (
    "Legacy tensor new of the form tensor.new(tensor, device=device) is not supported.  Use "
    "torch.as_tensor(...) instead."
)
LEGACY_CTOR_TENSOR_DEVICE = (
    "Legacy tensor constructor of the form torch.Tensor(tensor, device=device) is not "
    "supported.  Use torch.tensor(...) or torch.as_tensor(...) instead."
)


def _legacy_new(dtype, device, args: tuple, kwargs: dict, device_error: str) -> Tensor:
    """PyTorch's ``legacy_tensor_generic_ctor_new`` for ``Tensor.new`` and the legacy types
    (``torch.FloatTensor(...)``): a tensor argument must have the dtype and device type (no
    ``device`` keyword, not even None) and is aliased; otherwise sizes or values on ``device``
    (or the one given)."""
    from .ops.shape import alias

    if len(args) == 1 and isinstance(args[0], Tensor):
        if kwargs:
            if set(kwargs) == {"device"}:
                raise RuntimeError(device_error)
            raise TypeError(f"new() got an unexpected keyword argument '{next(iter(kwargs))}'")
        other = args[0]
        if other._dtype is not dtype or other._device.type != device.type:
            raise TypeError(
                f"expected {_options(dtype, device.type)} "
                f"(got {_options(other._dtype, other._device)})"
            )
        return alias(other)
    unknown = set(kwargs) - {"device"}
    if unknown:
        raise TypeError(f"new() got an unexpected keyword argument '{unknown.pop()}'")
    from ._factories import _leaf, tensor, zeros

    if kwargs.get("device") is not None:
        device = kwargs["device"]
    if len(args) == 1 and not isinstance(args[0], (int, np.integer, Size)):
        data = args[0]
        if isinstance(data, str):
            raise TypeError("new(): invalid data type 'str'")
        if not isinstance(data, (list, tuple, np.ndarray)):
            raise TypeError(f"new(): data must be a sequence (got {E.py_typename(data)})")
        return tensor(data, dtype=dtype, device=device)
    if not args:
        return _leaf(np.zeros((0,), dtype.np), dtype, DEV.device(device), False)
    return zeros(*args, dtype=dtype, device=device)


def _legacy_type_name(t: Tensor) -> str:
    prefix = "torch.cuda." if t._device.type == "cuda" else "torch."
    return f"{prefix}{t._dtype._legacy}Tensor"


def _dtype_from_type_name(name: str) -> D.dtype:
    """The dtype of a legacy tensor type's full name (``'torch.FloatTensor'``,
    ``'torch.cuda.DoubleTensor'``), as PyTorch's ``type_from_string`` reads it."""
    prefix, _, base = name.rpartition(".")
    if prefix in ("torch", "torch.cuda"):
        for d in D.ALL:
            if base == f"{d._legacy}Tensor":
                return d
    raise ValueError(f"invalid type: '{name}'")


# Arrays handed to JAX functions unwrap to their data.
jax.tree_util.register_pytree_node(
    Tensor,
    lambda t: ((t._data,), (t._dtype, t._device)),
    lambda aux, children: Tensor._make(children[0], aux[0], aux[1]),
)


# Note [Resized memory]: PyTorch's ``resize_`` keeps the tensor's storage and reads the new shape
# from it in memory order, growing the storage where the shape needs more (new elements are
# uninitialized; here zeros). A storage never shrinks, so the elements a smaller shape gave up
# come back with a larger one: leafgrad keeps them as ``_resized_tail``. A tensor that shares its
# memory (a view or a base with views) is re-pointed within its storage as ``as_strided_`` does;
# growing that storage is refused, as leafgrad's views read their root's array.
def _resize(t: Tensor, shape: tuple, memory_format) -> Tensor:
    """``resize_`` once its arguments are checked (Note [Resized memory])."""
    from .ops.inplace import bump_version
    from .ops.iterator_layout import memory_order

    if any(d < 0 for d in shape):
        raise RuntimeError("numel: integer multiplication overflow")
    fmt = _check_memory_format("resize_", memory_format)
    if fmt is preserve_format:
        raise RuntimeError("Unsupported memory formatPreserve")
    strides = _format_strides(shape, fmt) if fmt is not None else None
    if tuple(shape) == tuple(t._data.shape) and strides is None:
        return t  # the same shape: nothing changes (no version bump)
    cell = t.__dict__.get("_storage")
    if cell is not None and len(cell.live()) > 1:
        # memory shared with views or a base: within the storage, the tensor is re-pointed at
        # its offset (as ``as_strided_``); growing the shared storage is not supported
        from .ops.iterator_layout import contiguous_strides

        laid = strides if strides is not None else contiguous_strides(tuple(shape))
        offset = t.storage_offset()
        extent = 1 + sum((d - 1) * s for d, s in zip(shape, laid)) if math.prod(shape) else 0
        if offset + extent <= t.untyped_storage().nbytes() // t.element_size():
            return t.as_strided_(tuple(shape), tuple(laid), offset)
        raise NotImplementedError(
            "leafgrad: resize_ beyond the storage of a tensor that shares its memory with "
            "another tensor (a view or its base) is not supported"
        )
    # the memory in order: the tensor's elements in its layout's order, then what an earlier
    # resize_ gave up
    data, old = t._data, t.__dict__.get("_strides")
    if old is not None:
        data = jnp.transpose(data, memory_order(old))
    flat = data.reshape(-1)
    tail = t.__dict__.get("_resized_tail")
    if tail is not None:
        flat = jnp.concatenate([flat, tail])
    n = math.prod(shape)
    if n > flat.shape[0]:
        flat = jnp.concatenate([flat, jnp.zeros((n - flat.shape[0],), flat.dtype)])
    t.__dict__["_resized_tail"] = flat[n:] if n < flat.shape[0] else None
    order = memory_order(strides) if strides is not None else list(range(len(shape)))
    laid = flat[:n].reshape([shape[d] for d in order])
    t._data = jnp.transpose(laid, np.argsort(order)) if strides is not None else laid
    t.__dict__.pop("_strides", None)
    if strides is not None:
        t.__dict__["_strides"] = tuple(strides)
    bump_version(t)
    return t
