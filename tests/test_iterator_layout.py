"""The layout of elementwise results (Note [Iterator layouts] in leafgrad/ops/iterator_layout.py):
each op on operands laid out in many ways gives PyTorch's strides, contiguity and values, and
what depends on the layout afterwards (``view``, ``contiguous``) behaves as in PyTorch."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import both

_VALUES = np.random.default_rng(11).standard_normal(4 * 5 * 6 * 7).astype(np.float32)


def _base(m, *shape, dtype=None):
    n = int(np.prod(shape))
    t = m.tensor(_VALUES[:n].reshape(shape))
    return t if dtype is None else t.to(dtype)


# Each layout: a tensor of logical shape (2, 3, 4) unless it says otherwise.
LAYOUTS = {
    "contiguous": lambda m: _base(m, 2, 3, 4),
    "reversed": lambda m: _base(m, 4, 3, 2).permute(2, 1, 0),
    "inner_swap": lambda m: _base(m, 2, 4, 3).transpose(1, 2),
    "outer_swap": lambda m: _base(m, 3, 2, 4).transpose(0, 1),
    "strided": lambda m: _base(m, 2, 3, 8)[..., ::2],
    "strided_permuted": lambda m: _base(m, 4, 6, 2)[:, ::2].permute(2, 1, 0),
    "expanded": lambda m: _base(m, 1, 3, 4).expand(2, 3, 4),
    "expanded_permuted": lambda m: _base(m, 4, 1, 2).permute(2, 1, 0).expand(2, 3, 4),
    "size_one_dims": lambda m: _base(m, 4, 1, 2).permute(2, 1, 0)[:, :1].expand(2, 3, 4) * 1,
}

# second operands that broadcast against (2, 3, 4)
OTHERS = {
    "same_layout": None,
    "contiguous": lambda m: _base(m, 2, 3, 4) + 1,
    "row": lambda m: _base(m, 4) + 1,
    "column_transposed": lambda m: _base(m, 1, 3).t() + 1,
    "middle": lambda m: _base(m, 3, 1) + 1,
    "zero_dim": lambda m: m.tensor(1.5),
    "number": lambda m: 1.5,
    "reversed": lambda m: _base(m, 4, 3, 2).permute(2, 1, 0) + 1,
}

UNARY = {
    "exp": lambda m, x: x.exp(),
    "neg": lambda m, x: -x,
    "abs": lambda m, x: x.abs(),
    "sigmoid": lambda m, x: x.sigmoid(),
    "relu": lambda m, x: m.relu(x),
    "gelu": lambda m, x: m.nn.functional.gelu(x),
    "leaky_relu": lambda m, x: m.nn.functional.leaky_relu(x, 0.1),
    "clamp": lambda m, x: x.clamp(min=-0.5, max=0.5),
    "pow_number": lambda m, x: x**2,
    "round": lambda m, x: x.round(),
    "isnan": lambda m, x: x.isnan(),
    "logical_not": lambda m, x: m.logical_not(x),
    "to_double": lambda m, x: x.double(),
    "sign": lambda m, x: x.sign(),
    "frexp": lambda m, x: list(m.frexp(x)),
    "rsub_number": lambda m, x: 1 - x,
}

BINARY = {
    "add": lambda m, x, y: x + y,
    "mul": lambda m, x, y: x * y,
    "sub_alpha": lambda m, x, y: m.sub(x, y, alpha=2) if not isinstance(y, float) else x - y,
    "div": lambda m, x, y: x / y,
    "eq": lambda m, x, y: x == y,
    "maximum": lambda m, x, y: m.maximum(x, y if not isinstance(y, float) else m.tensor(y)),
    "atan2": lambda m, x, y: m.atan2(x, y if not isinstance(y, float) else m.tensor(y)),
    "pow": lambda m, x, y: x.abs() ** y,
    "where": lambda m, x, y: m.where(x > 0, x, y),
    "lerp": lambda m, x, y: m.lerp(x, m.zeros_like(x), y if isinstance(y, float) else y * 0 + 0.3),
    "addcmul": lambda m, x, y: m.addcmul(x, x, y if not isinstance(y, float) else m.tensor(y)),
    "fmod": lambda m, x, y: m.fmod(x, y),
}


def _layout(m, x):
    return [x.stride(), x.is_contiguous(), x]


def _other(m, name, x):
    make = OTHERS[name]
    return make(m) if make is not None else x * 2


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("op", sorted(UNARY))
def test_unary_results_take_pytorchs_layout(op, layout):
    def fn(m):
        out = UNARY[op](m, LAYOUTS[layout](m))
        outs = out if isinstance(out, list) else [out]
        return [_layout(m, o) for o in outs]

    both(fn)


@pytest.mark.parametrize("other", sorted(OTHERS))
@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("op", sorted(BINARY))
def test_binary_results_take_pytorchs_layout(op, layout, other):
    def fn(m):
        x = LAYOUTS[layout](m)
        return _layout(m, BINARY[op](m, x, _other(m, other, x)))

    both(fn, rtol=1e-6)


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_the_number_operand_goes_first(layout):
    both(lambda m: [_layout(m, 2.0 * LAYOUTS[layout](m)), _layout(m, 2.0 - LAYOUTS[layout](m))])


FOUR_D = {
    "channels_last": lambda m: _base(m, 2, 3, 4, 5).contiguous(memory_format=m.channels_last),
    "channels_last_with_ones": lambda m: _base(m, 2, 1, 1, 5).contiguous(
        memory_format=m.channels_last
    ),
    "nhwc_permuted": lambda m: _base(m, 2, 4, 5, 3).permute(0, 3, 1, 2),
    "one_channel_and_contiguous": lambda m: _base(m, 2, 1, 4, 5),
}


@pytest.mark.parametrize("second", ["same", "contiguous", "number", "channel_vector"])
@pytest.mark.parametrize("layout", sorted(FOUR_D))
def test_channels_last_operands(layout, second):
    def fn(m):
        x = FOUR_D[layout](m)
        y = {
            "same": lambda: FOUR_D[layout](m),
            "contiguous": lambda: m.ones(x.shape),
            "number": lambda: 2.0,
            "channel_vector": lambda: m.ones(x.shape[1], 1, 1),
        }[second]()
        return [_layout(m, x + y), _layout(m, x.exp())]

    both(fn)


EDGES = {
    "conversion_keeps_a_size_one_dims_stride": lambda m: _base(m, 1, 3).t().double(),
    "flip_keeps_a_one_element_slices_stride": lambda m: _base(m, 6)[::2][:1].flip(0),
    "flip_of_a_transposed_column": lambda m: _base(m, 1, 3).t().flip(0),
    "unary_op_of_a_transposed_column_is_contiguous": lambda m: _base(m, 1, 3).t().exp(),
    "empty_transposed": lambda m: m.zeros(0, 3).t().exp(),
    "empty_broadcast": lambda m: m.zeros(3, 0).t() + m.ones(1, 3),
    "one_element": lambda m: _base(m, 1, 1).t().exp(),
    "zero_dim": lambda m: m.tensor(2.0).exp(),
    "vector_step": lambda m: _base(m, 8)[::2].exp(),
    "equal_strides_tie": lambda m: _base(m, 1, 4).expand(3, 4).t() + _base(m, 4, 1).expand(4, 3),
    "three_operands": lambda m: m.where(_base(m, 3, 4) > 0, _base(m, 4, 3).t(), _base(m, 4, 1).t()),
}


@pytest.mark.parametrize("case", sorted(EDGES))
def test_edge_layouts(case):
    both(lambda m: _layout(m, EDGES[case](m)))


def _after(m):
    x = _base(m, 3, 4).t().exp()  # laid out as the transposed input: not contiguous
    out = [x.stride(), x.contiguous().stride(), x.reshape(12).stride(), x.t().view(12)]
    try:
        x.view(12)
    except RuntimeError as e:
        out.append(str(e))
    return out


def test_what_depends_on_the_layout_afterwards():
    both(_after)


def test_gradients_and_graph_unchanged():
    def fn(m):
        a = _base(m, 4, 3).requires_grad_()
        y = (a.t().exp() * _base(m, 4) + 1).sigmoid()
        y.sum().backward()
        return [_layout(m, y), a.grad, a.grad.stride()]

    both(fn)


# --- NumPy arrays: the strides PyTorch's tensor has -------------------------------------------

ARRAYS = {
    "fortran": lambda: np.asfortranarray(np.arange(6.0).reshape(2, 3)),
    "sliced": lambda: np.arange(12.0).reshape(3, 4)[:, ::2],
    "transposed": lambda: np.arange(24.0).reshape(2, 3, 4).transpose(2, 0, 1),
    "size_one": lambda: np.arange(3.0).reshape(3, 1)[:, :],
    "negative": lambda: np.arange(6.0)[::-1],
    "contiguous": lambda: np.arange(6.0, dtype=np.float32).reshape(2, 3),
    "empty": lambda: np.zeros((0, 3)),
    "empty_3d": lambda: np.zeros((2, 0, 3), dtype=np.float32),
}
CONVERSIONS = {
    "from_numpy": lambda m, a: m.from_numpy(a),
    "tensor": lambda m, a: m.tensor(a),
    "tensor_float32": lambda m, a: m.tensor(a, dtype=m.float32),
    "as_tensor": lambda m, a: m.as_tensor(a),
    "as_tensor_float32": lambda m, a: m.as_tensor(a, dtype=m.float32),
    "asarray": lambda m, a: m.asarray(a),
}


@pytest.mark.parametrize("conversion", sorted(CONVERSIONS))
@pytest.mark.parametrize("array", sorted(ARRAYS))
def test_numpy_arrays_keep_pytorchs_strides(array, conversion):
    both(lambda m: _layout(m, CONVERSIONS[conversion](m, ARRAYS[array]())))


def test_a_broadcast_array_shares_its_zero_strides_and_read_only_arrays_warn():
    import torch

    import leafgrad as lg

    def fn(m):
        a = np.broadcast_to(np.arange(3.0), (2, 3))  # read-only
        return [_layout(m, m.from_numpy(a)), _layout(m, m.tensor(a)), m.as_tensor(a).stride()]

    torch.set_warn_always(True)
    lg.set_warn_always(True)
    try:
        both(fn)
    finally:
        torch.set_warn_always(False)
        lg.set_warn_always(False)


# --- other ops on laid-out operands: PyTorch's strides ----------------------------------------


def _reversed(m):
    return m.tensor(_VALUES[:24].reshape(4, 3, 2).astype(np.float64)).permute(2, 1, 0)


def _swapped(m):
    return m.tensor(_VALUES[:24].reshape(2, 4, 3).astype(np.float64)).transpose(1, 2)


OTHER_OPS = {
    "sum_keepdim": lambda m, x, y: x.sum(0, keepdim=True),
    "amax_keepdim": lambda m, x, y: x.amax(2, keepdim=True),
    "max_dim": lambda m, x, y: list(x.max(1, keepdim=True)),
    "softmax": lambda m, x, y: x.softmax(1),
    "cumsum": lambda m, x, y: x.cumsum(1),
    "flip": lambda m, x, y: x.flip(0),
    "roll": lambda m, x, y: x.roll(1, 0),
    "sort": lambda m, x, y: list(x.sort(1)),
    "topk": lambda m, x, y: list(x.topk(2, 1)),
    "isclose": lambda m, x, y: m.isclose(x, y),
    "index_fill": lambda m, x, y: x.index_fill(1, m.tensor([0]), 1.0),
    "masked_fill": lambda m, x, y: x.masked_fill(x > 0, 0.0),
    "scatter": lambda m, x, y: x.scatter(1, m.zeros(2, 3, 4, dtype=m.int64), 1.0),
    "mse_none": lambda m, x, y: m.nn.functional.mse_loss(x, y, reduction="none"),
    "huber_none": lambda m, x, y: m.nn.functional.huber_loss(x, y, reduction="none"),
    "bce_none": lambda m, x, y: m.nn.functional.binary_cross_entropy(
        x.sigmoid(), y.sigmoid(), reduction="none"
    ),
    "layer_norm": lambda m, x, y: m.nn.functional.layer_norm(x, (4,)),
    "dropout": lambda m, x, y: (m.manual_seed(0), m.nn.functional.dropout(x, 0.5))[1],
    "rand_like": lambda m, x, y: (m.manual_seed(0), m.rand_like(x))[1],
    "clamp_by_tensor": lambda m, x, y: x.clamp(min=y),
    "integer_floor_divide": lambda m, x, y: (x * 10).long() // 3,
    "matmul": lambda m, x, y: x @ m.ones(4, 2, dtype=m.float64),
    # iterators over the halves, over the input alone, or no iterator at all
    "glu_last": lambda m, x, y: m.nn.functional.glu(x, 2),
    "glu_first": lambda m, x, y: m.nn.functional.glu(x, 0),
    "prelu": lambda m, x, y: m.nn.functional.prelu(x, m.tensor([0.25], dtype=m.float64)),
    "prelu_channels": lambda m, x, y: m.nn.functional.prelu(x, m.full((3,), 0.25).double()),
    "rrelu_eval": lambda m, x, y: m.nn.functional.rrelu(x),
    # a clone of the input (preserve_format), then a write
    "diagonal_scatter": lambda m, x, y: m.diagonal_scatter(x, x.diagonal() * 0),
    "select_scatter": lambda m, x, y: m.select_scatter(x, x.select(1, 0) * 0, 1, 0),
    "slice_scatter": lambda m, x, y: m.slice_scatter(x, x[:, :1] * 0, 1, 0, 1),
    "index_put": lambda m, x, y: x.index_put((m.tensor([1, 0]),), m.tensor(0.0).double()),
    "put": lambda m, x, y: x.put(m.tensor([1, 0]), m.zeros(2, dtype=m.float64)),
    # the transpose of an (ndim, n) tensor
    "nonzero": lambda m, x, y: m.nonzero(x > 0),
    "argwhere": lambda m, x, y: m.argwhere(x > 0),
    "nonzero_of_none": lambda m, x, y: m.nonzero(x > 9),
    "nonzero_1d": lambda m, x, y: m.nonzero(x[0, 0] > 0),
    "nonzero_0d": lambda m, x, y: m.nonzero(x[0, 0, 0] > 0),
}


@pytest.mark.parametrize("first", ["reversed", "swapped"])
@pytest.mark.parametrize("op", sorted(OTHER_OPS))
def test_other_ops_take_pytorchs_layout(op, first):
    def fn(m):
        x = (_reversed if first == "reversed" else _swapped)(m)
        out = OTHER_OPS[op](m, x, _swapped(m) if first == "reversed" else _reversed(m))
        return [_layout(m, o) for o in (out if isinstance(out, list) else [out])]

    both(fn)


LAID_OUT = {
    "permuted_result": lambda m: _base(m, 2, 3, 4).permute(2, 0, 1).exp(),
    "transposed_clone_with_a_size_one_dim": lambda m: _base(m, 1, 6).t().clone(),
    "transposed_view": lambda m: _base(m, 3, 4).t(),
    "negated_transpose": lambda m: -_base(m, 3, 4).t(),
    "made_contiguous": lambda m: _base(m, 3, 4).t().contiguous(),
}


@pytest.mark.parametrize("case", sorted(LAID_OUT))
def test_numpy_arrays_of_laid_out_tensors_have_pytorchs_strides(case):
    def fn(m):
        a = LAID_OUT[case](m).numpy()
        return [a.strides, m.from_numpy(np.ascontiguousarray(a))]

    both(fn)


@pytest.mark.parametrize("case", ["permuted_result", "transposed_clone_with_a_size_one_dim"])
def test_saved_and_loaded_tensors_keep_their_strides(case, tmp_path):
    def fn(m):
        x = LAID_OUT[case](m)
        path = tmp_path / f"{m.__name__}.pt"
        m.save({"x": x, "again": [x]}, path)
        loaded = m.load(path)
        return [_layout(m, loaded["x"]), loaded["again"][0] is loaded["x"]]

    both(fn)


# inputs whose size-1 dims make several layouts equally right: PyTorch's choice depends on how
# the op builds its iterator
SIZE_ONE = {
    "row_of_a_transposed_column": lambda m: m.ones(3, 1).t(),
    "column_of_a_transposed_row": lambda m: m.ones(1, 3).t(),
    "transposed": lambda m: m.arange(6.0).reshape(3, 2).t(),
}
SCALAR_ARGUMENT_OPS = {
    # numbers that are kernel arguments: a unary iterator (fast setup)
    "clamp": lambda m, x: x.clamp(-2.25, 2.25),
    "clamp_min": lambda m, x: x.clamp(min=-1.0),
    "clamp_max": lambda m, x: x.clamp(max=1.0),
    "lerp_number_weight": lambda m, x: m.lerp(x, x, 0.5),
    "addcmul_value": lambda m, x: m.addcmul(x, x, x, value=2.0),
    "addcdiv_value": lambda m, x: m.addcdiv(x, x, x + 2, value=2.0),
    # numbers that are wrapped 0-d operands
    "mul": lambda m, x: x * 2,
    "rsub": lambda m, x: 1 - x,
    "fmod": lambda m, x: m.fmod(x, 1.5),
    # empty_like(input) first
    "hardtanh": lambda m, x: m.nn.functional.hardtanh(x),
    "nan_to_num": lambda m, x: x.nan_to_num(1.0),
    "huber_none": lambda m, x: m.nn.functional.huber_loss(x, x * 0, reduction="none"),
    # contiguous results
    "number_to_the_power": lambda m, x: 2**x,
    "mvlgamma": lambda m, x: m.mvlgamma(x + 2, 1),
}


@pytest.mark.parametrize("source", sorted(SIZE_ONE))
@pytest.mark.parametrize("op", sorted(SCALAR_ARGUMENT_OPS))
def test_number_arguments_and_preserved_layouts(op, source):
    # found by the fuzzer: x.t().clamp(-2.25, 2.25) of a (3, 1) tensor
    both(lambda m: _layout(m, SCALAR_ARGUMENT_OPS[op](m, SIZE_ONE[source](m))))


# Note: on the CPU, TensorIterator first casts an input of another dtype to the common dtype
# (``.to``, preserve_format: a non-dense view becomes contiguous), then lays the result out after
# that copy. A (2, 1) diagonal with strides (3, 4) thus gives (1, 1), not (1, 2).
@pytest.mark.parametrize("shape", [(2, 3, 1), (1, 3, 2), (2, 1, 3), (3, 1), (1, 3), (2, 2, 1)])
def test_promoted_inputs_are_laid_out_as_their_cast_copies(shape):
    def fn(m):
        x = m.arange(float(np.prod(shape))).reshape(shape).to(m.int64)
        d = x.diagonal(0, -1, -2)
        f = m.ones(d.shape)
        results = [
            d.sigmoid(),
            d.exp(),
            d + f,
            f * d,
            d < f,
            m.where(d > 0, d, f),
            m.where(f > 0, f, d),
        ]
        return [(tuple(r.shape), r.stride(), r.dtype) for r in results]

    both(fn)


def test_the_fuzzers_sigmoid_of_an_integer_diagonal():
    def fn(m):
        d = m.tensor(np.arange(6).reshape(2, 1, 3)).diagonal(0, -1, -2)
        return d.stride(), m.nn.functional.sigmoid(d).stride()

    both(fn)
