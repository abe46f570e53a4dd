"""Arguments in the forms PyTorch's argument parser takes or refuses, against torch 2.13.

- int lists: a one-element bool tensor is an index in an ``int[]`` (dims), and PyTorch's SymInt
  caster refuses it in a ``SymInt[]`` (sizes) with its internal check's text; a one-element
  integer tensor is a size; a NumPy bool is not an index after the first element;
- int lists and sizes given by keyword (``torch.zeros(size=(2, 3))``, ``x.view(size=...)``):
  a list only, and an element refused at once names the list's type;
- function forms name the positions a function has (``torch.flip(x, [1.0])``: position 2);
- a number, list or array where a tensor goes (``torch.linalg.cross``, ``broadcast_tensors``,
  ``index_put``, ``bucketize``, ``tensordot``, ``F.*``), the in-place methods' argument errors
  before the leaf check, and the parser's missing-argument report after the types it checked;
- the deprecated ``size_average``/``reduce`` flags of the losses, ``F.linear`` with a 1-D weight,
  ``F.huber_loss`` with a weight, ``F.cross_entropy`` of an empty input with probabilities;
- the warnings F's Python functions issue point at the caller's line through leafgrad's
  argument-checking wrappers.
Each call runs in both libraries: the same exception type and text, or the same result.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
from conftest import both, lg, same

VALUES = {
    "bool 0-d": lambda m: m.tensor(True),
    "bool 1-elem": lambda m: m.tensor([True]),
    "int 1-elem": lambda m: m.tensor([1]),
    "int 2-elem": lambda m: m.tensor([1, 0]),
    "float 0-d": lambda m: m.tensor(1.0),
    "numpy bool": lambda m: np.bool_(True),
    "python bool": lambda m: True,
}

INT_LISTS = {  # int[] / int[N] (dims) and SymInt[] (sizes), alone, first, later, spread
    "sum": lambda m, x, v: x.sum(v),
    "sum first": lambda m, x, v: x.sum([v]),
    "sum later": lambda m, x, v: x.sum([0, v]),
    "amax": lambda m, x, v: x.amax(v),
    "flip spread": lambda m, x, v: x.flip(v),
    "flip later": lambda m, x, v: x.flip([0, v]),
    "torch.flip": lambda m, x, v: m.flip(x, [v]),
    "permute spread": lambda m, x, v: x.permute(v, 0),
    "permute later": lambda m, x, v: x.permute([0, v]),
    "roll": lambda m, x, v: x.roll(v, 0),
    "roll later": lambda m, x, v: x.roll([1, v], [0, 1]),
    "std later": lambda m, x, v: x.std([0, v]),
    "reshape later": lambda m, x, v: x.reshape([6, v]),
    "torch.reshape": lambda m, x, v: m.reshape(x, [6, v]),
    "view spread": lambda m, x, v: x.view(6, v),
    "view first": lambda m, x, v: x.view(v, 6),
    "repeat spread": lambda m, x, v: x.repeat(1, v),
    "expand": lambda m, x, v: x[:1].expand(2, v),
    "tile": lambda m, x, v: x.tile([1, v]),
    "zeros list": lambda m, x, v: m.zeros([2, v]),
    "zeros spread": lambda m, x, v: m.zeros(2, v),
    "zeros first": lambda m, x, v: m.zeros(v, 2),
    "empty": lambda m, x, v: m.empty(2, v).shape,
    "new_zeros": lambda m, x, v: x.new_zeros([2, v]),
    "as_strided": lambda m, x, v: x.as_strided([2, v], [1, 1]),
    "pad": lambda m, x, v: m.nn.functional.pad(x, [1, v]),
    "unflatten": lambda m, x, v: x.unflatten(1, [2, v]),
    "split": lambda m, x, v: x.split([2, v]),
    "movedim": lambda m, x, v: x.movedim([0, v], [1, 0]),
}


@pytest.mark.parametrize("value", list(VALUES))
@pytest.mark.parametrize("call", list(INT_LISTS))
def test_int_list_elements(call, value):
    both(lambda m: INT_LISTS[call](m, m.ones(3, 2), VALUES[value](m)))


KEYWORDS = {
    **{
        f"{fn} {form}": (lambda m, fn=fn, v=v: getattr(m, fn)(size=v(m)).shape)
        for fn in ("zeros", "ones", "empty", "rand", "randn")
        for form, v in {
            "tuple": lambda m: (2,),
            "list": lambda m: [2, 3],
            "Size": lambda m: m.Size([2]),
            "int": lambda m: 2,
            "float first": lambda m: [1.0],
            "float later": lambda m: [2, 1.0],
            "None": lambda m: None,
        }.items()
    },
    "zeros both": lambda m: m.zeros(2, size=(2,)),
    "zeros dtype": lambda m: m.zeros(size=[2, 3], dtype=m.float64),
    "rand dtype": lambda m: m.rand(size=[2, 3], dtype=m.float64).dtype,
    "new_zeros int": lambda m: m.ones(1).new_zeros(size=2),
    "new_ones tuple": lambda m: m.ones(1).new_ones(size=(2,)),
    "new_empty float": lambda m: m.ones(1).new_empty(size=[2, 1.0]),
    "view tuple": lambda m: m.ones(2, 2).view(size=(4,)),
    "view int": lambda m: m.ones(2, 2).view(size=4),
    "view float": lambda m: m.ones(2, 2).view(size=[1.0]),
    "view both": lambda m: m.ones(2, 2).view(4, size=(4,)),
    "permute int": lambda m: m.ones(2, 2).permute(dims=1),
    "permute float": lambda m: m.ones(2, 2).permute(dims=[1.0, 0]),
    "reshape int": lambda m: m.ones(2, 2).reshape(shape=4),
    "reshape float": lambda m: m.ones(2, 2).reshape(shape=[1.0]),
    "repeat int": lambda m: m.ones(2, 2).repeat(repeats=2),
    "flip int": lambda m: m.ones(2, 2).flip(dims=0),
    "torch.flip float": lambda m: m.flip(m.ones(2), dims=[1.0]),
    "amax float": lambda m: m.ones(2, 2).amax(dim=[1.0]),
    "sum later float": lambda m: m.sum(m.ones(2, 2), dim=[0, 1.0]),
}


@pytest.mark.parametrize("call", list(KEYWORDS))
def test_int_lists_by_keyword(call):
    both(lambda m: KEYWORDS[call](m))


POSITIONS = {
    "flip": lambda m: m.flip(m.ones(2), [1.0]),
    "permute": lambda m: m.permute(m.ones(2, 2), [1.0, 0]),
    "tile": lambda m: m.tile(m.ones(2), [1.0]),
    "reshape": lambda m: m.reshape(m.ones(2), [1.0]),
    "rot90": lambda m: m.rot90(m.ones(2, 2), 1, [1.0, 0]),
    "F.pad": lambda m: m.nn.functional.pad(m.ones(2), [1.0]),
    "F.pad later": lambda m: m.nn.functional.pad(m.ones(2), [1, "3"]),
    "expand_copy": lambda m: m.expand_copy(m.ones(2), [1.0]),
}


@pytest.mark.parametrize("call", list(POSITIONS))
def test_function_forms_count_input_as_position_one(call):
    both(lambda m: POSITIONS[call](m))


def _a(m):
    return m.ones(2, 3)


TENSOR_SLOTS = {
    "linalg.cross": lambda m: m.linalg.cross(_a(m), 1.0),
    "linalg.cross list": lambda m: m.linalg.cross(_a(m), [1.0, 2.0, 3.0]),
    "linalg.cross dim": lambda m: m.linalg.cross(_a(m), _a(m), dim=1.0),
    "linalg.solve": lambda m: m.linalg.solve(m.eye(2), 1.0),
    "linalg.lu_solve": lambda m: m.linalg.lu_solve(m.eye(2), 1.5),
    "linalg.lu_solve missing": lambda m: m.linalg.lu_solve(m.eye(2), B="a"),
    "linalg.solve_triangular": lambda m: m.linalg.solve_triangular(m.eye(2), upper="a"),
    "linalg.vector_norm keepdim": lambda m: m.linalg.vector_norm(_a(m), keepdim="a"),
    "linalg.vector_norm dim": lambda m: m.linalg.vector_norm(_a(m), dim="a"),
    "fft.fft n": lambda m: m.fft.fft(_a(m), 1.5),
    "special.logit eps": lambda m: m.special.logit(_a(m), "a"),
    "broadcast_tensors number": lambda m: m.broadcast_tensors(_a(m), 1.0),
    "broadcast_tensors list": lambda m: m.broadcast_tensors([_a(m), _a(m)]),
    "broadcast_tensors none": lambda m: m.broadcast_tensors(None),
    "broadcast_tensors array": lambda m: m.broadcast_tensors(_a(m), np.ones(3)),
    "index_put number": lambda m: _a(m).index_put((m.tensor([0]),), 1.0),
    "torch.index_put number": lambda m: m.index_put(_a(m), (m.tensor([0]),), 1.0),
    "index_put tensor indices": lambda m: _a(m).index_put(m.tensor([0]), m.tensor(1.0)),
    "index_put accumulate int": lambda m: _a(m).index_put((m.tensor([0]),), m.tensor(1.0), 1),
    "index_put_ number": lambda m: _a(m).index_put_((m.tensor([0]),), 1.0),
    "index_put_ none index": lambda m: _a(m).index_put_((None, m.tensor([0])), m.tensor(2.0)),
    "bucketize number": lambda m: m.bucketize(_a(m), 1.0),
    "bucketize keyword": lambda m: m.bucketize(_a(m), boundaries=1.0),
    "bucketize numbers": lambda m: m.bucketize(1.0, 2.0),
    "one_hot input=": lambda m: m.nn.functional.one_hot(input=m.tensor([1]), num_classes=3),
    "one_hot tensor=": lambda m: m.nn.functional.one_hot(tensor=m.tensor([1])),
    "linear missing": lambda m: m.nn.functional.linear(1.0),
    "embedding missing": lambda m: m.nn.functional.embedding(m.tensor([0])),
    "clamp method keywords": lambda m: _a(m).clamp(min=_a(m), max=1.0),
    "clamp method": lambda m: _a(m).clamp(_a(m), 1.0),
    "clamp function keywords": lambda m: m.clamp(_a(m), min=_a(m), max=1.0),
    "clip_ keywords": lambda m: _a(m).clip_(min=1.0, max=_a(m)),
    "view keyword types": lambda m: _a(m).view(size=1.0),
}


@pytest.mark.parametrize("call", list(TENSOR_SLOTS))
def test_tensor_slots_and_typed_arguments(call):
    both(lambda m: TENSOR_SLOTS[call](m))


TENSORDOT = {
    "number b": lambda m: m.tensordot(_a(m), 1.0, 1),
    "number a": lambda m: m.tensordot(1.0, _a(m), 1),
    "number b, list dims": lambda m: m.tensordot(_a(m), 1.0, ([1], [0])),
    "list a": lambda m: m.tensordot([1.0], _a(m), ([0], [0])),
    "dims too many": lambda m: m.tensordot(_a(m), _a(m).T, 3),
    "dims negative": lambda m: m.tensordot(_a(m), _a(m).T, -1),
    "dims float": lambda m: m.tensordot(_a(m), _a(m).T, 1.0),
    "dims str": lambda m: m.tensordot(_a(m), _a(m).T, "a"),
    "dims None": lambda m: m.tensordot(_a(m), _a(m).T, None),
    "dims numpy": lambda m: m.tensordot(_a(m), _a(m).T, np.int64(1)),
    "dims tensor": lambda m: m.tensordot(_a(m), _a(m).T, m.tensor(1)),
    "dims tensor negative": lambda m: m.tensordot(_a(m), _a(m).T, m.tensor(-1)),
    "dims tensor pairs": lambda m: m.tensordot(_a(m), _a(m).T, m.tensor([[1], [0]])),
    "dims floats": lambda m: m.tensordot(_a(m), _a(m).T, ([1.0], [0])),
    "dims ints": lambda m: m.tensordot(_a(m), _a(m).T, (1, 0)),
    "dims three": lambda m: m.tensordot(_a(m), _a(m).T, ([1], [0], [0])),
    "ok": lambda m: m.tensordot(_a(m), _a(m).T, dims=([0, 1], [1, 0])),
}


@pytest.mark.parametrize("call", list(TENSORDOT))
def test_tensordot_reads_dims_as_pytorch(call):
    both(lambda m: TENSORDOT[call](m))


def _leaf(m):
    return m.ones(3, requires_grad=True)


def _plain(m):
    return m.ones(3) * 1


IN_PLACE = {  # on a leaf that requires grad: the parser refuses the call before the leaf check
    "scatter_add_": lambda m: _leaf(m).scatter_add_(0, m.tensor([0]), 1.0),
    "scatter_add_ index list": lambda m: _plain(m).scatter_add_(0, [0], _plain(m)),
    "index_add_": lambda m: _leaf(m).index_add_(0, m.tensor([0]), 1.0),
    "index_add_ dim": lambda m: _plain(m).index_add_(0.5, m.tensor([0]), _plain(m)),
    "renorm_": lambda m: _leaf(m).renorm_(1, 0.5, 1),
    "clamp_ keywords": lambda m: _leaf(m).clamp_(min=_plain(m), max=1.0),
    "clamp_ numbers": lambda m: _leaf(m).clamp_(min=1.0),
    "clip_ tensors": lambda m: _plain(m).clip_(_plain(m), _plain(m)),
    "atan2_": lambda m: _leaf(m).atan2_(1.0),
    "baddbmm_": lambda m: _leaf(m).baddbmm_(1.0, _plain(m)),
}


@pytest.mark.parametrize("call", list(IN_PLACE))
def test_in_place_argument_errors_before_the_leaf_check(call):
    both(lambda m: IN_PLACE[call](m))


def _f_calls():
    import torch.nn.functional as TF

    from leafgrad.nn import _parsed

    names = sorted(
        {*_parsed.BUILTINS, *_parsed.ATTRIBUTE_FIRST, *_parsed.LISTED_SIZES, *_parsed.FIRST_CALL}
    )
    return [n for n in names if hasattr(TF, n)]


def _f_cases():
    # gumbel_softmax draws its noise: only its refusals compare
    return [
        (name, form)
        for name in _f_calls()
        for form in F_FORMS
        if not (name == "gumbel_softmax" and form == "tensor, number")
    ]


F_FORMS = {
    "number": lambda m, f: f(1.0),
    "list": lambda m, f: f([1.0, 2.0]),
    "tensor, number": lambda m, f: f(m.ones(2, 3), 1.5),
}


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("name, form", _f_cases())
def test_functional_argument_errors(name, form):
    """Note [F's argument errors]: a non-tensor or a wrongly typed argument gets PyTorch's
    error: its builtin's parser message, the attribute its Python reads first, or Python's own
    missing-argument report."""
    both(lambda m: F_FORMS[form](m, getattr(m.nn.functional, name)), check_warnings=False)


LOSSES = {
    "mse": lambda m, x, t, **k: m.nn.functional.mse_loss(x, t, **k),
    "l1": lambda m, x, t, **k: m.nn.functional.l1_loss(x, t, **k),
    "smooth_l1": lambda m, x, t, **k: m.nn.functional.smooth_l1_loss(x, t, **k),
    "bce_logits": lambda m, x, t, **k: m.nn.functional.binary_cross_entropy_with_logits(x, t, **k),
    "kl_div": lambda m, x, t, **k: m.nn.functional.kl_div(x, t, **k),
    "soft_margin": lambda m, x, t, **k: m.nn.functional.soft_margin_loss(x, t, **k),
}
FLAGS = {
    "size_average False": {"size_average": False},
    "reduce False": {"reduce": False},
    "both True": {"size_average": True, "reduce": True},
    "kl batchmean, reduce": {"reduction": "batchmean", "reduce": True},
}


@pytest.mark.parametrize("flags", list(FLAGS))
@pytest.mark.parametrize("loss", list(LOSSES))
def test_deprecated_reduction_flags(loss, flags):
    """The deprecated flags decide the reduction, with PyTorch's warning (leafgrad raised
    NotImplementedError for most losses); kl_div warns of 'mean' only without them."""

    def run(m):
        x = (m.arange(6.0).reshape(2, 3) / 7).requires_grad_()
        t = m.ones(2, 3) / 3
        out = LOSSES[loss](m, x, t, **FLAGS[flags])
        out.sum().backward()
        return out, x.grad

    both(run)


LINEAR = {
    "1-D input, 1-D weight": ((3,), (3,), None),
    "1-D weight, bias": ((3,), (3,), ()),
    "3-D input, 1-D weight, bias": ((4, 2, 3), (3,), ()),
    "3-D input, 1-D weight": ((4, 2, 3), (3,), None),
    "2-D input, 1-D weight": ((2, 3), (3,), None),
    "2-D input, 1-D weight, bias": ((2, 3), (3,), ()),
    "3-D weight": ((2, 3), (2, 3, 3), None),
}


@pytest.mark.parametrize("case", list(LINEAR))
def test_linear_of_a_weight_that_is_not_a_matrix(case):
    """ATen's linear: ``matmul(input, weight.t())`` then ``add_(bias)`` (leafgrad raised
    NotImplementedError)."""
    ishape, wshape, bshape = LINEAR[case]

    def run(m):
        x = m.ones(*ishape).requires_grad_()
        w = m.arange(float(np.prod(wshape))).reshape(wshape).requires_grad_()
        b = None if bshape is None else m.full(bshape, 0.5, requires_grad=True)
        y = m.nn.functional.linear(x, w, b)
        y.sum().backward()
        names = [type(n).__name__ for n, _ in y.grad_fn.next_functions]
        return y, type(y.grad_fn).__name__, names, x.grad, w.grad

    both(run)


HUBER = {
    "mean": {},
    "sum": {"reduction": "sum"},
    "none": {"reduction": "none"},
    "bad reduction": {"reduction": "x"},
    "weight shape": {"weight": "short"},
    "broadcast target": {"target": "row"},
    "broadcast input": {"input": "row"},
    "legacy flags": {"size_average": False},
}


@pytest.mark.parametrize("case", list(HUBER))
@pytest.mark.parametrize("loss", ["huber_loss", "mse_loss", "l1_loss"])
def test_losses_with_a_weight(loss, case):
    """PyTorch's Python-level weighted losses: the weight checked against the input as given,
    the reduction after (``mean``: over the weights' sum for mse and l1)."""

    def run(m):
        kw = dict(HUBER[case])
        x = m.arange(6.0).reshape(2, 3) - 2
        x = (x[0] if kw.pop("input", None) == "row" else x).requires_grad_()
        w = m.ones(3) if kw.pop("weight", None) == "short" else m.arange(6.0).reshape(2, 3)
        w.requires_grad_()
        t = m.zeros(3) if kw.pop("target", None) == "row" else m.zeros(2, 3)
        if loss == "huber_loss":
            if "size_average" in kw:
                return None
            kw["delta"] = 1.5
        out = getattr(m.nn.functional, loss)(x, t, weight=w, **kw)
        out.sum().backward()
        return out, type(out.grad_fn).__name__, x.grad, w.grad

    both(run)


@pytest.mark.parametrize("case", ["probabilities", "weight", "smoothing", "spatial", "classes"])
def test_cross_entropy_mean_of_an_empty_input(case):
    """ATen fills the empty sum with NaN: NegBackward0 over FillBackward2."""

    def run(m):
        shape = (2, 3, 0) if case == "spatial" else (0, 3)
        x = m.ones(*shape, requires_grad=True)
        target = m.ones(0).long() if case == "classes" else m.ones(*shape)
        kw = {"weight": {"weight": m.ones(3)}, "smoothing": {"label_smoothing": 0.1}}
        out = m.nn.functional.cross_entropy(x, target, **kw.get(case, {}))
        names = [type(n).__name__ for n, _ in out.grad_fn.next_functions]
        out.backward()
        return out, type(out.grad_fn).__name__, names, x.grad

    both(run)


WARNING_CALLS = {
    "grid_sample": lambda m: m.nn.functional.grid_sample(m.ones(1, 1, 2, 2), m.zeros(1, 2, 2, 2)),
    "affine_grid": lambda m: m.nn.functional.affine_grid(m.zeros(1, 2, 3), [1, 1, 2, 2]),
    "dropout2d 3-D": lambda m: m.nn.functional.dropout2d(m.ones(2, 3, 4)),
    "dropout3d 2-D": lambda m: m.nn.functional.dropout3d(m.ones(2, 3)),
    "gumbel_softmax eps": lambda m: m.nn.functional.gumbel_softmax(m.ones(2, 3), eps=0.1),
    "upsample": lambda m: m.nn.functional.upsample(m.ones(1, 1, 2, 2), scale_factor=2),
    "upsample_nearest": lambda m: m.nn.functional.upsample_nearest(m.ones(1, 1, 2, 2), None, 2),
    "kl_div mean": lambda m: m.nn.functional.kl_div(m.ones(2, 3), m.ones(2, 3)),
    "softmax implicit dim": lambda m: m.nn.functional.softmax(m.ones(2, 3)),
}


@pytest.mark.parametrize("call", list(WARNING_CALLS))
def test_functional_warnings_point_at_the_caller(call):
    """F's Python warnings name the line that called F (leafgrad's argument-checking wrappers
    in between are not counted: ``E.warn_above``)."""

    def where(m):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            WARNING_CALLS[call](m)
        return [(str(w.message), w.filename == __file__) for w in caught]

    same(where(torch), where(lg))


@pytest.mark.parametrize("args", [(), (1.0,), (2.0, 1.5, 0.5), (1, 2, 3)], ids=str)
def test_elu_in_place_scales(args):
    """``F.elu_`` is ATen's ``elu_(input, alpha=1, scale=1, input_scale=1)``: values,
    gradients and ``EluBackward1``'s saved Scalars as given."""

    def run(m):
        x = m.tensor([-1.0, 0.5, -2.0, 3.0], requires_grad=True)
        z = m.nn.functional.elu_(x * 1, *args)
        node = z.grad_fn
        z.sum().backward()
        saved = node._saved_alpha, node._saved_scale, node._saved_input_scale
        return z, type(node).__name__, saved, [type(v).__name__ for v in saved], x.grad

    both(run)


KEYWORD_FORMS = {
    "heaviside values": lambda m, x: x.heaviside(values=m.ones(4)),
    "torch.heaviside values": lambda m, x: m.heaviside(x, values=m.ones(4)),
    "heaviside other refused": lambda m, x: x.heaviside(other=m.ones(4)),
    "torch.heaviside other refused": lambda m, x: m.heaviside(x, other=m.ones(4)),
    "heaviside values twice": lambda m, x: x.heaviside(x, values=x),
    "torch.heaviside input values": lambda m, x: m.heaviside(input=x, values=x),
    "nextafter other": lambda m, x: x.nextafter(other=x + 1),
    "torch.ldexp values refused": lambda m, x: m.ldexp(x, values=x),
    "swapaxes axis0 axis1": lambda m, x: x.reshape(2, 2).swapaxes(axis0=0, axis1=1),
    "torch.swapaxes axis0 axis1": lambda m, x: m.swapaxes(x.reshape(2, 2), axis0=1, axis1=0),
    "torch.swapaxes dim0 refused": lambda m, x: m.swapaxes(x.reshape(2, 2), dim0=0, dim1=1),
    "swapaxes node": lambda m, x: x.reshape(2, 2).requires_grad_().swapaxes(0, 1).grad_fn.name(),
    "expand size": lambda m, x: x[:1].expand(size=(3,)),
    "expand implicit": lambda m, x: x[:1].expand(3, implicit=True),
    "tensor_split sections": lambda m, x: x.tensor_split(sections=2),
    "tensor_split indices": lambda m, x: x.tensor_split(indices=[1]),
    "tensor_split tensor": lambda m, x: x.tensor_split(tensor_indices_or_sections=m.tensor(2)),
    "torch.tensor_split sections dim": lambda m, x: m.tensor_split(x, sections=2, dim=0),
    "hsplit sections": lambda m, x: x.hsplit(sections=2),
    "torch.hsplit indices": lambda m, x: m.hsplit(x, indices=[1]),
    "vsplit sections": lambda m, x: x.reshape(2, 2).vsplit(sections=2),
    "dsplit indices": lambda m, x: x.reshape(1, 1, 4).dsplit(indices=[1]),
    "where other": lambda m, x: x.where(x > 1, other=m.zeros(4)),
    "uniform_ from to": lambda m, x: x.clone().uniform_(**{"from": 0, "to": 0}),
    "resize_ size": lambda m, x: x.clone().resize_(size=(2,)),
}


@pytest.mark.parametrize("case", list(KEYWORD_FORMS))
def test_keyword_forms(case):
    """PyTorch's keyword names for arguments leafgrad's frontends take positionally or under
    another name (an overload's own name, NumPy's axis names, a Python keyword)."""
    both(lambda m: KEYWORD_FORMS[case](m, m.tensor([1.0, 2.0, 3.0, 4.0])))
