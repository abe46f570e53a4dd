"""In-place shape changes: ``t_``, ``transpose_``, ``swapdims_``, ``unsqueeze_``, ``squeeze_``.

PyTorch changes the tensor's sizes and strides in place: the data is untouched, the version goes
up by one, and the tensor takes the view op's node under its in-place name (``TBackward1``,
``TransposeBackward1``, ``UnsqueezeBackward1``, ``SqueezeBackward3/4/5``), also when it is a view
(no ``CopySlices``: nothing was written). leafgrad runs the view op and makes the tensor take the
result's shape, storage chain (Note [Storage]) and node. On an inference tensor outside inference
mode the shape changes, then the version bump raises, as in PyTorch (Note [Inference tensors]).
"""

from __future__ import annotations

from .. import _storage as S
from .._tensor import Tensor, _copy_strides
from ..autograd import forward_ad
from ..autograd.graph import node_class
from .api import tensor_op
from .inplace import bump_version, check_inplace


def _restride(self: Tensor, out: Tensor, name: str) -> Tensor:
    S.share(out, self)
    if forward_ad.ACTIVE[0]:
        forward_ad.restrided(self, out)  # Note [Forward views]
    self._data = out._data
    _copy_strides(out, self)
    if not bump_version(self):
        return self
    node = out._grad_fn
    if node is not None:
        node.__class__ = node_class(name)
        self._grad_fn = node
        self._output_nr = 0
        meta = self.__dict__.get("_vmeta")
        if meta is not None:
            meta.attr_version = self._version_counter.value
    return self


def _meta_inplace(method: str, name, *, function: bool = False):
    def fn(self, *args, **kwargs):
        check_inplace(self, self._requires_grad, writes_first=True)
        try:
            out = getattr(Tensor, method)(self, *args, **kwargs)
        except TypeError as err:  # Python's words for the method: PyTorch's name it
            text = str(err)
            if text.startswith(method + "() "):
                raise TypeError(method + "_" + text[len(method) :]) from None
            raise
        if out is self:  # PyTorch still bumps the version and records the node
            out = Tensor.alias(self) if hasattr(Tensor, "alias") else out
        node_name = name(args, kwargs) if callable(name) else name
        return _restride(self, out, node_name)

    fn.__name__ = fn.__qualname__ = method + "_"
    fn.__doc__ = f"``Tensor.{method}_``: ``{method}`` applied to this tensor's shape in place."
    return fn


def _squeeze_name(args, kwargs) -> str:
    dim = args[0] if args else kwargs.get("dim")
    if dim is None:
        return "SqueezeBackward3"
    return "SqueezeBackward5" if isinstance(dim, (tuple, list)) else "SqueezeBackward4"


for _method, _name in (
    ("t", "TBackward1"),
    ("transpose", "TransposeBackward1"),
    ("swapdims", "TransposeBackward1"),
    ("swapaxes", "TransposeBackward1"),
    ("unsqueeze", "UnsqueezeBackward1"),
    ("squeeze", _squeeze_name),
):
    if hasattr(Tensor, _method):
        tensor_op(_method + "_", function=False)(_meta_inplace(_method, _name))
