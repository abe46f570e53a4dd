"""Lazy modules (``torch.nn.modules.lazy``): layers whose input size is read from the first
input they see.

``LazyModuleMixin`` registers a forward pre-hook that calls ``initialize_parameters`` with the
first input: the placeholders (``UninitializedParameter``/``UninitializedBuffer``, Note
[Uninitialized tensors] in nn/parameter.py) get their shapes, the module's ``reset_parameters``
draws their values (from the generator, as the eager layer's constructor would), and the module
becomes its ``cls_to_become`` (``LazyLinear`` -> ``Linear``). Loading a state dict into a lazy
module gives the placeholders the shapes of the loaded tensors (the module stays lazy). The
``Lazy*`` layers are defined in this file and named as PyTorch's modules name them
(``torch.nn.modules.linear.LazyLinear``).
"""

from __future__ import annotations

import itertools

from .. import parameter as P
from .conv import (
    Conv1d,
    Conv2d,
    Conv3d,
    ConvTranspose1d,
    ConvTranspose2d,
    ConvTranspose3d,
)
from .linear import Linear
from .normalization import (
    BatchNorm1d,
    BatchNorm2d,
    BatchNorm3d,
    InstanceNorm1d,
    InstanceNorm2d,
    InstanceNorm3d,
    _BatchNorm,
    _InstanceNorm,
    _NormBase,
)

__all__ = [
    "LazyLinear",
    "LazyConv1d",
    "LazyConv2d",
    "LazyConv3d",
    "LazyConvTranspose1d",
    "LazyConvTranspose2d",
    "LazyConvTranspose3d",
    "LazyBatchNorm1d",
    "LazyBatchNorm2d",
    "LazyBatchNorm3d",
    "LazyInstanceNorm1d",
    "LazyInstanceNorm2d",
    "LazyInstanceNorm3d",
]


class LazyModuleMixin:
    """A module whose parameters get their shapes from its first input."""

    cls_to_become = None

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._load_hook = self._register_load_state_dict_pre_hook(self._lazy_load_hook)
        self._initialize_hook = self.register_forward_pre_hook(
            self._infer_parameters, with_kwargs=True
        )

    def _save_to_state_dict(self, destination, prefix: str, keep_vars: bool) -> None:
        for name, param in self._parameters.items():
            if param is not None:
                if not (P.is_lazy(param) or keep_vars):
                    param = param.detach()
                destination[prefix + name] = param
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                if not (P.is_lazy(buf) or keep_vars):
                    buf = buf.detach()
                destination[prefix + name] = buf

    def _lazy_load_hook(
        self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs
    ) -> None:
        for name, param in itertools.chain(self._parameters.items(), self._buffers.items()):
            key = prefix + name
            if key in state_dict and param is not None:
                loaded = state_dict[key]
                if P.is_lazy(param) and not P.is_lazy(loaded):
                    with _no_grad():
                        param.materialize(loaded.shape)

    def initialize_parameters(self, *args, **kwargs) -> None:
        """Give the placeholders their shapes from the input (each lazy layer has its own)."""
        raise NotImplementedError(
            f"initialize_parameters is not implemented for {self.__class__.__name__}"
        )

    def has_uninitialized_params(self) -> bool:
        """Whether a parameter or buffer is still a placeholder."""
        return any(
            P.is_lazy(t) for t in itertools.chain(self._parameters.values(), self._buffers.values())
        )

    def _infer_parameters(self, module, args, kwargs=None):
        module.initialize_parameters(*args, **(kwargs or {}))
        if module.has_uninitialized_params():
            raise RuntimeError(f"module {self._get_name()} has not been fully initialized")
        module._initialize_hook.remove()
        module._load_hook.remove()
        delattr(module, "_initialize_hook")
        delattr(module, "_load_hook")
        if module.cls_to_become is not None:
            module.__class__ = module.cls_to_become

    def _replicate_for_data_parallel(self):
        raise RuntimeError(
            "Modules with uninitialized parameters can't be used with `DataParallel`. Run a "
            "dummy forward pass to correctly initialize the modules"
        )


def _no_grad():
    from ...autograd import grad_mode

    return grad_mode.no_grad()


class LazyLinear(LazyModuleMixin, Linear):
    """A ``Linear`` whose ``in_features`` is the last size of its first input."""

    cls_to_become = Linear

    def __init__(self, out_features: int, bias: bool = True, device=None, dtype=None) -> None:
        super().__init__(0, 0, False)
        self.weight = P.UninitializedParameter(device=device, dtype=dtype)
        self.out_features = out_features
        if bias:
            self.bias = P.UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input) -> None:
        if self.has_uninitialized_params():
            with _no_grad():
                self.in_features = input.shape[-1]
                self.weight.materialize((self.out_features, self.in_features))
                if self.bias is not None:
                    self.bias.materialize((self.out_features,))
                self.reset_parameters()


class _LazyConvXdMixin(LazyModuleMixin):
    _spatial = 0

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def initialize_parameters(self, input, *args, **kwargs) -> None:
        if self.has_uninitialized_params():
            self.in_channels = self._get_in_channels(input)
            if self.in_channels % self.groups != 0:
                raise ValueError("in_channels must be divisible by groups")
            if self.transposed:
                shape = (self.in_channels, self.out_channels // self.groups, *self.kernel_size)
            else:
                shape = (self.out_channels, self.in_channels // self.groups, *self.kernel_size)
            self.weight.materialize(shape)
            if self.bias is not None:
                self.bias.materialize((self.out_channels,))
            self.reset_parameters()

    def _get_in_channels(self, input) -> int:
        unbatched = self._spatial + 1
        if input.dim() not in (unbatched, unbatched + 1):
            raise RuntimeError(
                f"Expected {unbatched}D (unbatched) or {unbatched + 1}D (batched) input to "
                f"{self.__class__.__name__}, but got input of size: {input.shape}"
            )
        return input.shape[1] if input.dim() == unbatched + 1 else input.shape[0]


def _lazy_conv(base, spatial: int):
    class LazyConv(_LazyConvXdMixin, base):
        cls_to_become = base
        _spatial = spatial

        def __init__(
            self,
            out_channels: int,
            kernel_size,
            stride=1,
            padding=0,
            dilation=1,
            groups: int = 1,
            bias: bool = True,
            padding_mode: str = "zeros",
            device=None,
            dtype=None,
        ) -> None:
            super().__init__(
                0, 0, kernel_size, stride, padding, dilation, groups, False, padding_mode,
                device=device, dtype=dtype,
            )  # fmt: skip
            self.weight = P.UninitializedParameter(device=device, dtype=dtype)
            self.out_channels = out_channels
            if bias:
                self.bias = P.UninitializedParameter(device=device, dtype=dtype)

    return LazyConv


def _lazy_conv_transpose(base, spatial: int):
    class LazyConvTranspose(_LazyConvXdMixin, base):
        cls_to_become = base
        _spatial = spatial

        def __init__(
            self,
            out_channels: int,
            kernel_size,
            stride=1,
            padding=0,
            output_padding=0,
            groups: int = 1,
            bias: bool = True,
            dilation=1,
            padding_mode: str = "zeros",
            device=None,
            dtype=None,
        ) -> None:
            super().__init__(
                0, 0, kernel_size, stride, padding, output_padding, groups, False, dilation,
                padding_mode, device=device, dtype=dtype,
            )  # fmt: skip
            self.weight = P.UninitializedParameter(device=device, dtype=dtype)
            self.out_channels = out_channels
            if bias:
                self.bias = P.UninitializedParameter(device=device, dtype=dtype)

    return LazyConvTranspose


class _LazyNormBase(LazyModuleMixin, _NormBase):
    def __init__(
        self,
        eps=1e-5,
        momentum=0.1,
        affine=True,
        track_running_stats=True,
        device=None,
        dtype=None,
        *,
        bias=True,
    ) -> None:
        from ... import _dtype as D
        from ... import _factories

        super().__init__(0, eps, momentum, False, False, device=device, dtype=dtype)
        self.affine = affine
        self.track_running_stats = track_running_stats
        if self.affine:
            self.weight = P.UninitializedParameter(device=device, dtype=dtype)
            if bias:
                self.bias = P.UninitializedParameter(device=device, dtype=dtype)
        if self.track_running_stats:
            self.running_mean = P.UninitializedBuffer(device=device, dtype=dtype)
            self.running_var = P.UninitializedBuffer(device=device, dtype=dtype)
            self.num_batches_tracked = _factories.tensor(0, dtype=D.int64, device=device)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input) -> None:
        if self.has_uninitialized_params():
            self.num_features = input.shape[1]
            if self.affine:
                self.weight.materialize((self.num_features,))
                if self.bias is not None:
                    self.bias.materialize((self.num_features,))
            if self.track_running_stats:
                self.running_mean.materialize((self.num_features,))
                self.running_var.materialize((self.num_features,))
            self.reset_parameters()


def _lazy_norm(base, kind):
    class LazyNorm(_LazyNormBase, kind):
        cls_to_become = base
        _check_input_dim = base._check_input_dim
        if kind is _InstanceNorm:
            _no_batch_dim = base._no_batch_dim

    return LazyNorm


def _named(cls, name: str, module: str, doc: str):
    cls.__name__ = cls.__qualname__ = name
    cls.__module__ = f"leafgrad.nn.modules.{module}"
    cls.__doc__ = doc
    return cls


LazyModuleMixin.__module__ = "leafgrad.nn.modules.lazy"
LazyLinear.__module__ = "leafgrad.nn.modules.linear"
_CONV_DOC = "A ``{}`` whose ``in_channels`` is read from its first input."
_NORM_DOC = "A ``{}`` whose ``num_features`` is read from its first input (``input.shape[1]``)."
LazyConv1d = _named(_lazy_conv(Conv1d, 1), "LazyConv1d", "conv", _CONV_DOC.format("Conv1d"))
LazyConv2d = _named(_lazy_conv(Conv2d, 2), "LazyConv2d", "conv", _CONV_DOC.format("Conv2d"))
LazyConv3d = _named(_lazy_conv(Conv3d, 3), "LazyConv3d", "conv", _CONV_DOC.format("Conv3d"))
LazyConvTranspose1d, LazyConvTranspose2d, LazyConvTranspose3d = (
    _named(
        _lazy_conv_transpose(base, n),
        f"LazyConvTranspose{n}d",
        "conv",
        _CONV_DOC.format(f"ConvTranspose{n}d"),
    )
    for n, base in ((1, ConvTranspose1d), (2, ConvTranspose2d), (3, ConvTranspose3d))
)
_NORMS = {
    f"Lazy{kind}{n}d": (
        _lazy_norm(base, _BatchNorm if kind == "BatchNorm" else _InstanceNorm),
        kind.lower(),
        f"{kind}{n}d",
    )
    for kind, bases in (
        ("BatchNorm", (BatchNorm1d, BatchNorm2d, BatchNorm3d)),
        ("InstanceNorm", (InstanceNorm1d, InstanceNorm2d, InstanceNorm3d)),
    )
    for n, base in enumerate(bases, 1)
}
LazyBatchNorm1d, LazyBatchNorm2d, LazyBatchNorm3d = (
    _named(cls, name, module, _NORM_DOC.format(eager))
    for name, (cls, module, eager) in list(_NORMS.items())[:3]
)
LazyInstanceNorm1d, LazyInstanceNorm2d, LazyInstanceNorm3d = (
    _named(cls, name, module, _NORM_DOC.format(eager))
    for name, (cls, module, eager) in list(_NORMS.items())[3:]
)
