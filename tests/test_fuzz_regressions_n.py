"""Regressions found by fuzz seeds 180-182 and the probes of session 49, against torch 2.13."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import torch
from conftest import both
from fuzz_programs import check

import leafgrad


def test_seed_181_bool_matmul_refused_before_the_dtype_comparison():
    """A batched bool @ float: PyTorch's bmm dispatches on ``self``'s dtype first
    ('"bmm" not implemented for 'Bool''); leafgrad compared the dtypes first."""
    check(
        [
            ("new", "float32", 6, False, 0),
            ("unary", "abs", 0),
            ("unary", "abs", 0),
            ("unary", "abs", 0),
            ("disc", "eq", 0, 0, 2.0),
            ("unary", "abs", 0),
            ("view", "unfold", 0, 1, 1),
            ("join", "stack", 0, 0, 3),
            ("unary", "abs", 0),
            ("unary", "abs", 0),
            ("matmul", 40, 24, False),
        ]
    )


@pytest.mark.parametrize(
    "a,b",
    [
        ("bool", "float32"),
        ("float32", "bool"),
        ("bool", "int64"),
        ("int64", "bool"),
        ("bool", "bool"),
    ],
)
def test_bmm_and_dot_dtype_refusals(a, b):
    def outcome(T):
        res = []
        for f in (
            lambda: T.bmm(
                T.zeros(2, 2, 3, dtype=getattr(T, a)), T.zeros(2, 3, 2, dtype=getattr(T, b))
            ),
            lambda: (
                T.zeros(2, 1, 3, dtype=getattr(T, a)) @ T.zeros(2, 1, 3, 2, dtype=getattr(T, b))
            ),
            lambda: T.dot(T.zeros(3, dtype=getattr(T, a)), T.zeros(3, dtype=getattr(T, b))),
        ):
            try:
                res.append(str(f().dtype))
            except Exception as exc:  # noqa: BLE001 - compared
                res.append((type(exc).__name__, str(exc)))
        return res

    assert outcome(leafgrad) == outcome(torch)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_rsqrt_is_one_over_sqrt(dtype):
    """PyTorch's rsqrt is ``1 / sqrt(x)`` rounded twice; XLA's rsqrt differed by an ulp on a
    third of the values."""
    x = np.random.default_rng(0).random(4096) * 10 + 1e-3
    t = torch.rsqrt(torch.tensor(x).to(getattr(torch, dtype))).numpy()
    g = leafgrad.rsqrt(leafgrad.tensor(x).to(getattr(leafgrad, dtype))).numpy()
    np.testing.assert_array_equal(g, t)


def test_seed_184_diag_of_an_inference_matrix_is_written_by_its_out_kernel():
    """``diag``/``diagonal_copy`` of an inference tensor outside inference mode: PyTorch skips
    autograd and its ``out=`` kernel leaves the result at version 1."""
    check(
        [
            ("new", "float32", 3, False, 0),
            ("block", "inference_mode", [("ternary", "addcdiv", 0, 0, 0, False)]),
            ("shape", "diag", 1, 0, 0),
        ]
    )
    out = []
    for T in (torch, leafgrad):
        with T.inference_mode():
            x = T.ones(2, 3)
        out.append([T.diag(x)._version, T.diag(x, 1)._version, T.diagonal_copy(x)._version])
    assert out[1] == out[0] == [1, 1, 1]


@pytest.mark.parametrize(
    "name,call",
    [
        ("view_copy", lambda T, x: T.view_copy(x, (6,))),
        ("permute_copy", lambda T, x: T.permute_copy(x, (1, 0))),
        ("select_copy", lambda T, x: T.select_copy(x, 0, 0)),
        ("unbind_copy", lambda T, x: T.unbind_copy(x)[0]),
        ("as_strided_copy", lambda T, x: T.as_strided_copy(x, (2,), (1,))),
        ("detach_copy", lambda T, x: T.detach_copy(x)),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_copy_variants_of_an_inference_tensor(name, call):
    """Outside inference mode a copy variant of an inference tensor is a normal tensor that
    PyTorch's out= kernel wrote (version 1); leafgrad returned an inference tensor."""
    out = []
    for T in (torch, leafgrad):
        with T.inference_mode():
            x = T.ones(2, 3)
        y = call(T, x)
        out.append((y.is_inference(), y._version))
    assert out[1] == out[0]


@pytest.mark.parametrize("fn", ["var", "std", "var_mean", "std_mean"])
@pytest.mark.parametrize("shape", [(1,), (2, 3)], ids=str)
@pytest.mark.parametrize("dim", [None, 0, (0,), []], ids=str)
@pytest.mark.parametrize("correction", [2, 7])
def test_variance_gradient_without_degrees_of_freedom(fn, shape, dim, correction):
    """A correction at least the reduced count (fuzz seed 185: ``var(dim=0, correction=2)`` of
    one element): PyTorch's var_backward divides by ``n - correction`` when a dim is given (a
    finite gradient of flipped sign, or inf where n equals the correction) and gives
    ``where(x == mean, nan, inf)`` without one; leafgrad's VJP divided by 0 (nan, signed inf)."""
    out = []
    for T in (torch, leafgrad):
        x = T.tensor(np.arange(float(np.prod(shape))).reshape(shape) * 0.5 + 1, requires_grad=True)
        kw = {} if dim is None else {"dim": dim}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            y = getattr(T, fn)(x, correction=correction, **kw)
        (y[0] if isinstance(y, tuple) else y).sum().backward()
        g = x.grad.numpy()
        out.append((g, np.signbit(g)))
    np.testing.assert_array_equal(out[1][0], out[0][0])
    np.testing.assert_array_equal(out[1][1][~np.isnan(out[0][0])], out[0][1][~np.isnan(out[0][0])])


def test_seed_185_program():
    check(
        [
            ("new", "float32", 1, True, 0),
            ("reduce", "var_corr", 0, 2, False),
            ("backward", 1, False, 0),
        ]
    )


@pytest.mark.parametrize("fn", ["std", "var", "std_mean"])
def test_dof_warning_comes_after_a_stale_views_error(fn):
    """``std`` of a view made without grad whose base was then written with grad (fuzz seed
    192): PyTorch takes the view's edge before its kernel warns that dof <= 0, so it raises
    with no warning; leafgrad warned first."""
    out = []
    for T in (torch, leafgrad):
        a = T.tensor(1.0, requires_grad=True)
        b = T.tensor([2.0])
        v = b.unbind(0)[0]
        b[0] = a
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with pytest.raises(RuntimeError) as err:
                getattr(T, fn)(v)
        out.append((str(err.value), [str(w.message) for w in caught]))
    assert out[1] == out[0]
    assert out[0][1] == []


def test_seed_192_program():
    check(
        [
            ("new", "float32", 0, True, 0),
            ("new", "float32", 1, False, 0),
            ("view", "unbind", 1, 0, 0),
            ("setitem", 1, 0, 0, 0, 0, True),
            ("reduce", "std_all", 2, 0, False),
        ]
    )


_PASS_THROUGH_CASES = {
    "sub": lambda m, x: x - x,
    "add_alpha": lambda m, x: x.add(x, alpha=2),
    "addcdiv": lambda m, x: m.addcdiv(x, x, x),
    "addcmul": lambda m, x: m.addcmul(x, x, x),
    "addcdiv_other_operands": lambda m, x: m.addcdiv(x, x * 2, x * 3),
    "add": lambda m, x: x + x,
    "mul_add": lambda m, x: x * x + x,
    "clamp_tensors": lambda m, x: m.clamp(x, x - 1, x + 1),
}
_AFTER = {
    "root": lambda m, y, x: y,
    "scaled": lambda m, y, x: y * 2,
    "exp": lambda m, y, x: y.exp(),
    "plus_leaf": lambda m, y, x: y + x,
}


@pytest.mark.parametrize("after", sorted(_AFTER))
@pytest.mark.parametrize("case", sorted(_PASS_THROUGH_CASES))
def test_gradient_version_through_pass_through_positions(case, after):
    """``addcdiv(x, x, x)`` at the root (fuzz seed 194): PyTorch's ``self: grad`` hands on the
    incoming gradient itself, which the caller holds at the root, so the next gradient is added
    out of place and ``x.grad._version`` is 1; leafgrad's VJP gave a new array, summed into in
    place (2). Five steps each, so the fused backward is checked too."""
    versions = []
    for T in (torch, leafgrad):
        seen = []
        for _ in range(5):
            x = T.tensor(1.5, requires_grad=True)
            _AFTER[after](T, _PASS_THROUGH_CASES[case](T, x), x).backward()
            seen.append((x.grad._version, x.grad.item()))
        versions.append(seen)
    assert versions[1] == versions[0]


def test_seed_194_program():
    check(
        [
            ("new", "float32", 0, True, 0),
            ("ternary", "addcdiv", 0, 0, 0, False),
            ("backward", 1, False, 0),
            ("grad_of", 0),
        ]
    )


def _put_into(m, target, index, value):
    target[index] = value
    return target


_EXPANDED_WRITES = {
    "expanded_self": lambda m, b: _put_into(m, b, m.tensor([0, 0]), b),
    "expanded_self_index_put_": lambda m, b: b.index_put_((m.tensor([0, 0]),), b),
    "expanded_other_view": lambda m, b: _put_into(m, b, m.tensor([0, 0]), b.expand(2)),
    "expanded_number_tensor": lambda m, b: _put_into(m, b, m.tensor([0, 0]), m.tensor(2.0)),
    "expanded_mask_self": lambda m, b: _put_into(m, b, m.tensor([True, False]), b),
    "plain_self_other_shape": lambda m, b: _put_into(m, m.arange(3.0), m.tensor([0]), b),
    "plain_mask_self_shape": lambda m, b: (lambda x: _put_into(m, x, x > 0, x))(m.arange(3.0)),
    "plain_self_other_dtype": lambda m, b: (
        lambda x: _put_into(m, x, m.tensor([0, 1, 2]), x.view(m.int32))
    )(m.arange(3.0)),
}


@pytest.mark.parametrize("case", sorted(_EXPANDED_WRITES))
def test_index_put_of_an_expanded_tensor_into_itself(case):
    """``b[idx] = b`` with ``b`` expanded (fuzz seed 196): PyTorch's ``index_put_`` warns that
    ``self`` is expanded, then refuses a value that is ``self`` itself (a full overlap), while
    another view of it is too hard to compare and passes; leafgrad wrote it."""
    both(lambda m: _EXPANDED_WRITES[case](m, m.tensor(1.5).broadcast_to((2,))))


def test_seed_196_program():
    check(
        [
            ("new", "float32", 0, False, 0),
            ("view", "broadcast_to", 0, 0, 0),
            ("setitem", 1, 4, 0, 0, 1, True),
        ]
    )


@pytest.mark.parametrize("requires_grad", [False, True])
@pytest.mark.parametrize(
    "shape",
    [(3, 3), (2, 3, 3), (1, 1), (2, 1, 1), (0, 3, 3), (2, 0, 0), (0, 0), (4, 2, 2, 2)],
    ids=str,
)
def test_matrix_exp_of_an_inference_tensor_is_a_kernel_view(shape, requires_grad):
    """``matrix_exp`` of an inference tensor outside inference mode (fuzz seed 197): PyTorch's
    kernel runs on normal tensors and returns a view of the batch of matrices it computed (of
    one, unsqueezed, for an unbatched input), with the versions its writes left."""

    def fn(m):
        with m.inference_mode():
            x = m.ones(shape, requires_grad=requires_grad) * 0.1
        r = m.matrix_exp(x)
        base = r._base
        seen = None if base is None else (tuple(base.shape), base._version, base.stride())
        return r, r._is_view(), r._version, seen, r.stride(), r.requires_grad

    both(fn)


def test_seed_197_program():
    check(
        [
            ("new", "float32", 0, False, 0),
            ("new", "float32", 7, False, 0),
            ("unary", "abs", 0),
            ("block", "inference_mode", [("disc", "abs_sub", 0, 1, 2.0)]),
            *[("unary", "abs", 0)] * 6,
            ("shape", "matrix_exp", 23, 0, 0),
        ]
    )


@pytest.mark.parametrize("dtype", ["int64", "uint8", "bool", "float32"])
@pytest.mark.parametrize(
    "bounds",
    [(0, 2.0), (0.5, None), (0, 2), (True, 2.5), (True, False), (0, True), (None, 1j)],
)
@pytest.mark.parametrize("expanded", [True, False])
def test_clamp_number_bounds_result_type_before_overlap(dtype, bounds, expanded):
    """Fuzz seed 204: clamp_'s meta function refuses the result type of an integral tensor and
    number bounds before the iterator refuses an expanded tensor."""

    def fn(m):
        t = m.zeros(1, dtype=getattr(m, dtype))
        t = t.expand(3) if expanded else t.repeat(3)
        return t.clamp_(*bounds)

    both(fn)


@pytest.mark.parametrize("op", ["stack_last", "cat_last"])
def test_seed_206_cat_output_strides_of_size_one_dims(op):
    """Fuzz seed 206: joining tensors whose size-1 dims have strides of their own (an unfold's
    result) along the last dim, the 4-d parts look channels-last to PyTorch, and its cat lays
    the output out so: (4, 1, 2, 1) where leafgrad gave the contiguous (4, 4, 2, 1)."""

    def fn(m):
        a = m.zeros(2).as_strided((1, 1, 2), (2, 1, 1))
        out = m.stack([a, a], 3) if op == "stack_last" else m.cat([a[..., None]] * 2, 3)
        return out.stride()

    both(fn)


ADDCDIV_CALLS = {
    "expanded int": lambda m, y, f: m.tensor(3).expand(2).addcdiv_(y, y),
    "expanded float": lambda m, y, f: m.tensor(3.0).expand(2).addcdiv_(y, y, value=2.0),
    "expanded, one float": lambda m, y, f: m.tensor(3).expand(2).addcdiv_(f, y),
    "expanded, a number": lambda m, y, f: m.tensor(3).expand(2).addcdiv_(y, 2),
    "keywords, bool": lambda m, y, f: m.ones(2).addcdiv_(tensor1=y, tensor2=y.bool()),
    "int self, floats": lambda m, y, f: m.tensor([1, 2]).addcdiv_(f, f),
}


@pytest.mark.parametrize("call", list(ADDCDIV_CALLS))
def test_seed_210_addcdiv_integer_division_before_overlap(call):
    """Fuzz seed 210: addcdiv_'s meta function refuses integer division before the iterator
    refuses an expanded self; the argument parser's errors still come first."""

    def fn(m):
        return ADDCDIV_CALLS[call](m, m.ones(2, dtype=m.long), m.ones(2))

    both(fn)


def test_seed_211_addcmul_float_value_on_an_int_self_that_requires_grad():
    """Fuzz seed 211: an int64 tensor given a history by ``fill_`` from a float that requires
    grad, then ``addcmul_(value=2.0)``: the integer kernel reads 2, but the node keeps the float
    as given (``_saved_value`` 2.0); leafgrad's kept the int."""
    check(
        [
            ("new", "int64", 0, False, 0),
            ("new", "float32", 0, True, 0),
            ("inplace", "fill_t_", 0, 1, 2.0),
            ("inplace", "addcmul_", 0, 0, 2.0),
        ]
    )


def test_seed_215_log_softmax_of_an_empty_int_tensor():
    """Fuzz seed 215: an empty piece of ``hsplit`` of an int64 tensor through ``log_softmax``.
    PyTorch's kernel returns its empty result before it dispatches on the dtype; leafgrad raised
    the dtype refusal a non-empty int tensor gets."""
    check(
        [
            ("new", "int64", 1, False, 0),
            ("unary", "abs", 0),
            ("unary", "abs", 0),
            ("setitem", 0, 0, 0, 0, 0, False),
            ("multi", "hsplit", 0, 0, False),
            ("reduce", "log_softmax", 24, 0, False),
        ]
    )


@pytest.mark.parametrize("dtype", ["int64", "bool", "complex64"])
def test_softmax_of_empty_non_float_tensors(dtype):
    """Empty: a new empty tensor of the input's dtype; non-empty: the kernel's refusal."""
    for shape in [(0,), (2, 0), (0, 3), (3,)]:
        for op in ("softmax", "log_softmax"):

            def fn(m, shape=shape, op=op):
                x = m.zeros(shape, dtype=getattr(m, dtype))
                out = getattr(m.nn.functional, op)(x, 0)
                return out, out.stride(), getattr(x, op)(-1)

            both(fn)


def test_seed_225_repeat_of_an_inference_tensor():
    """Fuzz seed 225: ``tile`` of an inference tensor outside inference mode. PyTorch's
    ``repeat`` kernel returns an alias of the result it wrote through, and with no autograd layer
    (an inference tensor) that alias is seen: the result is a view of a fresh normal tensor, at
    version 1. A repeat of 0 returns the empty result itself, at version 0."""
    check(
        [
            ("new", "float32", 0, False, 0),
            ("unary", "abs", 0),
            ("unary", "abs", 0),
            ("block", "inference_mode", [("unary", "abs", 0)]),
            ("shape", "tile", 3, 0, 0),
        ]
    )


REPEATS = [(2, 1), (1, 1), (3, 2, 1), (0, 1), (1, 0), (2,), ()]


@pytest.mark.parametrize("reps", REPEATS, ids=str)
@pytest.mark.parametrize("mode", ["normal", "inference", "inference_rg", "in_inference_mode"])
def test_repeat_and_tile_of_inference_tensors(reps, mode):
    def fn(m):
        x = m.tensor([[1.5, 2.0], [3.0, -1.0]], requires_grad=mode == "inference_rg")
        with m.inference_mode():
            y = x.abs() if mode != "normal" else None
        y = x if y is None else y
        if mode == "inference_rg":
            y.requires_grad_()
        if mode == "in_inference_mode":
            with m.inference_mode():
                r = y.tile(reps)
        else:
            r = y.repeat(*reps) if len(reps) >= 2 else y.tile(reps)
        base = r._base
        facts = (r._is_view(), r.is_inference(), r.requires_grad, r.is_leaf, r.stride())
        if base is not None:
            facts += (base is y, base.is_inference(), base.shape, base._version, r._version)
            r.add_(1)  # the base sees the write
            facts += (base.clone(), base._version)
        return r, facts

    both(fn)


def test_unsafe_split_pieces_of_an_inference_tensor_are_inference_tensors():
    def fn(m):
        x = m.tensor([[1.5, 2.0], [3.0, -1.0]])
        with m.inference_mode():
            y = x.abs()
        pieces = [*y.unsafe_split(1), *y.unsafe_chunk(2, 1), *y.unsafe_split_with_sizes([1, 1])]
        facts = [(p.is_inference(), p._is_view(), p._base is None) for p in pieces]
        with m.inference_mode():
            pieces[0].add_(1)  # they share the input's memory
        return y.clone(), facts, pieces[0]._version

    both(fn)


REPEATS_ALONE = {
    "int64": lambda m: m.repeat_interleave(m.tensor([2, 1, 0, 3])),
    "int32": lambda m: m.repeat_interleave(m.tensor([2, 1], dtype=m.int32)),
    "keyword": lambda m: m.repeat_interleave(repeats=m.tensor([2, 1])),
    "output_size": lambda m: m.repeat_interleave(m.tensor([2, 1]), output_size=3),
    "output_size wrong": lambda m: m.repeat_interleave(m.tensor([2, 1]), output_size=4),
    "output_size negative": lambda m: m.repeat_interleave(m.tensor([2, 1]), output_size=-2),
    "empty": lambda m: m.repeat_interleave(m.tensor([], dtype=m.int64)),
    "0-d": lambda m: m.repeat_interleave(m.tensor(3)),
    "2-d": lambda m: m.repeat_interleave(m.tensor([[1, 2]])),
    "float": lambda m: m.repeat_interleave(m.tensor([[1.0, 2.0]])),
    "bool": lambda m: m.repeat_interleave(m.tensor([True])),
    "negative": lambda m: m.repeat_interleave(m.tensor([2, -1])),
    "expanded": lambda m: m.repeat_interleave(m.tensor([2, 1]).expand(2, 2)[0]),
    "None second": lambda m: m.repeat_interleave(m.tensor([2, 1]), None),
    "None first": lambda m: m.repeat_interleave(None, m.tensor([2, 1])),
    "nothing": lambda m: m.repeat_interleave(),
    "method refuses": lambda m: m.tensor([2, 1]).repeat_interleave(),
    "input output_size": lambda m: m.repeat_interleave(
        m.ones(3), m.tensor([1, 2, 0]), output_size=3
    ),
    "input output_size wrong": lambda m: m.repeat_interleave(
        m.ones(3), m.tensor([1, 2, 0]), output_size=4
    ),
    "input one repeat output_size": lambda m: m.ones(3).repeat_interleave(
        m.tensor([2]), output_size=5
    ),
    "int output_size": lambda m: m.repeat_interleave(m.ones(3), 2, output_size=6),
    "int output_size wrong": lambda m: m.repeat_interleave(m.ones(3), 2, output_size=7),
    "grad": lambda m: m.repeat_interleave(
        m.tensor([1.0, 2.0, 3.0], requires_grad=True), m.tensor([1, 2, 0]), output_size=3
    ),
}


@pytest.mark.parametrize("case", list(REPEATS_ALONE))
def test_repeat_interleave_of_repeats_alone_and_output_size(case):
    """``repeat_interleave(repeats)`` (positions repeated), and ``output_size`` checked against
    the repeats' sum as PyTorch's kernel does (leafgrad had ignored it)."""
    both(REPEATS_ALONE[case])


def test_repeat_interleave_with_output_size_compiles():
    """With ``output_size`` the result's size is known without reading the repeats: the call
    runs inside ``leafgrad.compile`` (without it, it cannot, and says so)."""

    @leafgrad.compile
    def stretch(x, reps):
        return (x * 2).repeat_interleave(reps, dim=0, output_size=5)

    x = [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]
    for reps in ([2, 0, 3], [1, 1, 3], [0, 0, 5]):  # the first call runs eagerly, then traced
        got = stretch(leafgrad.tensor(x), leafgrad.tensor(reps))
        want = (torch.tensor(x) * 2).repeat_interleave(torch.tensor(reps), dim=0, output_size=5)
        assert got.tolist() == want.tolist()

    @leafgrad.compile
    def unsized(x, reps):
        return x.repeat_interleave(reps, dim=0)

    unsized(leafgrad.tensor(x), leafgrad.tensor([2, 0, 3]))
    with pytest.raises(RuntimeError, match="depends on tensor values"):
        unsized(leafgrad.tensor(x), leafgrad.tensor([2, 0, 3]))


def test_seed_226_scatter_reduce_with_no_sources():
    """Fuzz seed 226: ``scatter_reduce(..., 'amax', include_self=False)`` of an empty tensor
    (``masked_select`` chose nothing). With no sources the reduction over them is empty: JAX's
    max has no identity there, and leafgrad raised its ValueError."""
    check(
        [
            ("new", "float32", 0, False, 0),
            ("unary", "abs", 0),
            ("unary", "abs", 0),
            ("index_op", "masked_select", 0, 0, 0, 1),
            ("unary", "abs", 0),
            ("unary", "abs", 0),
            ("index_op", "scatter_reduce", 39, 0, 0, 13),
        ]
    )


@pytest.mark.parametrize("reduce", ["amax", "amin", "prod", "mean", "sum"])
@pytest.mark.parametrize("shapes", [((0,), (0,)), ((3,), (0,)), ((2, 3), (2, 0)), ((2, 3), (0, 3))])
def test_scatter_reduce_without_sources(reduce, shapes):
    def fn(m):
        x = m.arange(float(m.zeros(shapes[0]).numel())).reshape(shapes[0]).requires_grad_()
        src = m.ones(shapes[1], requires_grad=True)
        out = x.scatter_reduce(
            -1, m.zeros(shapes[1], dtype=m.int64), src, reduce, include_self=False
        )
        out.sum().backward()
        return out, x.grad, src.grad

    both(fn)


@pytest.mark.parametrize("requires_grad", [False, True])
def test_new_tensor_of_a_tensor_warns_once(requires_grad):
    """``x.new_tensor(t)`` gives its own copy-construct warning only (leafgrad also gave
    ``torch.tensor``'s, from the call it made), and a leaf of the dtype asked for."""

    def fn(m):
        source = m.tensor([1.5, -2.0], requires_grad=requires_grad)
        out = m.ones(2, dtype=m.int32).new_tensor(source, dtype=float, requires_grad=True)
        return out, out.is_leaf, m.ones(1).new_tensor(source)

    both(fn)


@pytest.mark.parametrize("randomness", ["error", "different", "same"])
def test_normal_checks_std_after_vmaps_randomness_refusals(randomness):
    """Under vmap, ``normal``'s refusals come in PyTorch's order: the randomness error, the
    complex ``std``, the "same" randomness refusal of a batched operand, then negative values."""
    calls = [
        lambda m, x: m.normal(m.zeros(3), m.ones(3, dtype=m.complex64)),
        lambda m, x: m.normal(m.zeros(3), -x.abs()),
        lambda m, x: m.normal(0.0, -x.abs()),
        lambda m, x: m.normal(m.zeros(3), -m.ones(3)),
        lambda m, x: m.normal(x, -m.ones(3)),
    ]

    def fn(m):
        log = []

        def f(x):
            for call in calls:
                try:
                    call(m, x)
                    log.append("drew")
                except RuntimeError as e:
                    log.append(str(e))
            return x.sum()

        m.func.vmap(f, randomness=randomness)(m.ones(2, 3))
        return log

    both(fn)


def test_seed_228_hardtanh_of_an_inference_tensor():
    """Fuzz seed 228: ``hardtanh`` of an inference tensor outside inference mode. PyTorch's
    kernel writes its result through ``hardtanh_out`` (version 1), which refuses an input that
    requires grad."""
    check(
        [
            ("new", "float32", 0, False, 0),
            ("block", "inference_mode", [("unary", "abs", 0)]),
            ("activation", "hardtanh", 1),
        ]
    )


INFERENCE_KERNEL_WRITES = {
    "hardtanh": lambda m, y: m.nn.functional.hardtanh(y),
    "relu6": lambda m, y: m.nn.functional.relu6(y),
    "one_hot": lambda m, y: m.nn.functional.one_hot((y.abs() * 2).long()),
    "unfold 4d": lambda m, y: m.nn.functional.unfold(y[None, None], 2),
    "unfold 3d": lambda m, y: m.nn.functional.unfold(y[None], 2),
    "fold 3d": lambda m, y: m.nn.functional.fold(y.reshape(1, 1, 6)[:, :, :4], (2, 2), 1),
    "fold 2d": lambda m, y: m.nn.functional.fold(y.reshape(1, 6)[:, :4], (2, 2), 1),
    "adaptive_avg_pool1d": lambda m, y: m.nn.functional.adaptive_avg_pool1d(y[None], 2),
    "adaptive_avg_pool1d mean": lambda m, y: m.nn.functional.adaptive_avg_pool1d(y[None], 1),
    "adaptive_avg_pool2d": lambda m, y: m.nn.functional.adaptive_avg_pool2d(y[None], 2),
    "adaptive_avg_pool3d": lambda m, y: m.nn.functional.adaptive_avg_pool3d(y[None, None], 2),
    "contiguous": lambda m, y: y.t().contiguous(),
    "reshape copy": lambda m, y: y.t().reshape(6),
    "repeat_interleave": lambda m, y: y.repeat_interleave(2, dim=1),
    "nonzero": lambda m, y: (y * 0).nonzero(),
    "nonzero tuple": lambda m, y: y.nonzero(as_tuple=True)[1],
    "inv": lambda m, y: m.linalg.inv(y[:, :2] + 3 * m.eye(2)),
    "inv_ex info": lambda m, y: m.linalg.inv_ex(y[:, :2] + 3 * m.eye(2)).info,
    "det": lambda m, y: m.linalg.det(y[:, :2]),
}


@pytest.mark.parametrize("case", list(INFERENCE_KERNEL_WRITES))
@pytest.mark.parametrize("requires_grad", [False, True])
def test_versions_of_kernels_on_inference_tensors(case, requires_grad):
    """Ops whose kernels write their results through ``out=`` calls or in-place steps: on
    inference tensors outside inference mode those writes are counted (Note [Inference tensors]
    in _storage.py); ``one_hot`` counts its two writes on any input."""

    def fn(m):
        x = m.linspace(-2, 2, 6).reshape(2, 3)
        with m.inference_mode():
            y = (x * 1).requires_grad_(requires_grad)
        out = INFERENCE_KERNEL_WRITES[case](m, y)
        return out, out._version, out._is_view(), out.requires_grad

    both(fn)


ADAPTIVE = ["adaptive_avg_pool1d", "adaptive_max_pool1d", "adaptive_avg_pool2d"]
ADAPTIVE += ["adaptive_max_pool2d", "adaptive_avg_pool3d", "adaptive_max_pool3d"]


@pytest.mark.parametrize("name", ADAPTIVE)
@pytest.mark.parametrize("lead", [(1,), (2, 1), (0,), (2, 0), (0, 2)], ids=str)
@pytest.mark.parametrize("empty_dim", [None, 0, -1])
@pytest.mark.parametrize("size", [1, 2, 0])
def test_adaptive_pools_of_empty_inputs_and_sizes(name, lead, empty_dim, size):
    """The adaptive pools with empty dims and output sizes of 0: PyTorch's refusals of empty
    pooled dims (forward) and of empty gradients (backward), a size of 1 as a mean (also for
    an empty input), and empty results; leafgrad raised raw JAX errors here."""
    nd = int(name[-2])
    spatial = [3] * nd
    if empty_dim is not None:
        spatial[empty_dim] = 0
    shape = (*lead, *spatial)
    if not nd + 1 <= len(shape) <= nd + 2:
        pytest.skip("not an input this pool takes")

    def fn(m):
        x = m.arange(float(math.prod(shape))).reshape(shape).requires_grad_()
        out = getattr(m.nn.functional, name)(x, size)
        out.sum().backward()
        return out, out.grad_fn.name(), x.grad

    both(fn)


PADS = [(1, 1), (2, 0), (0, 0), (-1, 1), (-1, -1), (1, 1, -1, 0), (0, 1, 1, 0), (-1, 0, 2, 2)]


@pytest.mark.parametrize("pads", PADS, ids=str)
@pytest.mark.parametrize("requires_grad", [False, True])
def test_constant_pad_of_an_inference_tensor(pads, requires_grad):
    """``F.pad`` of an inference tensor outside inference mode: PyTorch's kernel runs below
    autograd, so its ``fill_`` and ``copy_`` into the new tensor count (version 2) and the copy
    of an input that requires grad is recorded (``CopySlices``); pads all <= 0 clone."""

    def fn(m):
        x = m.arange(12.0).reshape(3, 4)
        with m.inference_mode():
            y = (x * 1).requires_grad_(requires_grad)
        out = m.nn.functional.pad(y, pads, value=2.5)
        facts = (out._version, out.requires_grad, out.is_leaf, out._is_view(), out.stride())
        if out.requires_grad:
            out.sum().backward()
        return out, facts, out.grad_fn and out.grad_fn.name(), y.grad

    both(fn)


def test_seed_231_copy_into_an_expanded_int_view_made_in_no_grad():
    """Fuzz seed 231: ``copy_`` of a tensor that requires grad into an expanded int64 view made
    under no_grad. PyTorch's ``copy_`` runs ``check_inplace`` only for a differentiable ``self``,
    so the kernel's overlap error comes first; leafgrad raised the no_grad view error."""
    check(
        [
            ("new", "float32", 0, True, 0),
            ("new", "int64", 0, False, 0),
            ("unary", "abs", 0),
            ("view", "expand_as", 1, 0, 0),
            (
                "block",
                "no_grad",
                [("unary", "abs", 0), ("unary", "abs", 0), ("view", "T_2d", 21, 0, 0)],
            ),
            ("inplace", "copy_", 6, 0, 2.0),
        ]
    )


@pytest.mark.parametrize("op", ["add_", "mul_", "copy_", "masked_fill_", "index_put_"])
@pytest.mark.parametrize("expanded", [False, True])
def test_inplace_into_int_views_made_in_no_grad(op, expanded):
    """Only ``copy_`` skips the no_grad view check for an int ``self``; other in-place ops
    raise it where an operand requires grad, as PyTorch's generated kernels do."""

    def fn(m):
        x = m.ones(2, requires_grad=True)
        i = m.ones(2, dtype=m.int64)
        with m.no_grad():
            w = i[None].expand(2, 2) if expanded else i[:]
        calls = {
            "add_": lambda: w.add_(x),
            "mul_": lambda: w.mul_(x),
            "copy_": lambda: w.copy_(x),
            "masked_fill_": lambda: w.masked_fill_(w > 0, x.sum()),
            "index_put_": lambda: w.index_put_((m.tensor([0]),), x[:1].long()),
        }
        return calls[op]()

    both(fn)


def test_seed_236_zeros_like_gradient_keeps_a_dense_expanded_layout():
    """Fuzz seed 236: ``autograd.grad`` of ``floor(x).sum()`` for a one-element ``x``. PyTorch's
    formula is ``zeros_like(grad)`` of the expanded gradient, which is dense (its dims have size
    1), so the zeros keep its strides (0,); leafgrad's were contiguous."""
    check(
        [
            ("new", "float32", 1, True, 0),
            ("unary", "abs", 0),
            ("unary", "abs", 0),
            ("disc", "floor", 0, 0, 2.0),
            ("grad", 3, (0,), False, False, False),
        ]
    )


@pytest.mark.parametrize("op", ["floor", "ceil", "round", "trunc", "sign", "frac", "sgn"])
@pytest.mark.parametrize("shape", [(1,), (1, 1), (2, 1), (), (2, 3)], ids=str)
def test_strides_of_zeros_like_gradients(op, shape):
    def fn(m):
        x = m.ones(shape, requires_grad=True)
        (g,) = m.autograd.grad(getattr(x, op)().sum(), x)
        getattr(x, op)().sum().backward()
        return g.stride(), g.clone().stride(), x.grad.stride(), x.grad._version

    both(fn)


def test_seed_247_welford_mean_with_nan_and_infinity():
    """var_mean's Welford mean of a slice holding a NaN and one infinity (last) is NaN: the NaN
    made the running mean NaN first; leafgrad gave the infinity."""
    check(
        [
            ("new", "float32", 2, False, 58),
            ("activation", "log2", 0),
            ("multi", "var_mean", 1, 0, False),
        ]
    )


@pytest.mark.parametrize("op", ["var_mean", "std_mean"])
def test_welford_mean_nan_and_infinities(op):
    nan, inf = float("nan"), float("inf")
    data = [[nan, 1.0, inf], [1.0, 2.0, inf], [inf, nan, 1.0], [1.0, -inf, 2.0], [inf, 1.0, -inf]]
    both(lambda m: [getattr(m, op)(m.tensor(data), d) for d in (0, 1)])


def test_seed_252_alpha_error_before_the_order_dependent_refusal():
    """An integral ``sub_`` with a float alpha whose operand reads memory the write changes:
    PyTorch allows the write, so its alpha error comes first; leafgrad refused the write."""
    check(
        [
            ("new", "float32", 0, False, 0),
            ("new", "float32", 0, False, 0),
            ("new", "int64", 3, False, 0),
            ("view", "narrow", 26, 1, 0),
            ("inplace", "sub_alpha_", 2, 3, 2.0),
        ]
    )
