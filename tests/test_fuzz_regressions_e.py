"""Regressions next to the fuzzer's findings (group E): the reductions whose PyTorch nodes save
their input as well as their result (``max()``, ``amax``, ``prod``, ``logsumexp``, ``std``,
``cummax`` ...), so an in-place write to the input before backward raises the version error,
and the backward of a complex-to-real op differentiated again (the complex convention holds
for an op whose only complex number is an operand)."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import both, lg, same, torch

REDUCTIONS = {
    "max": lambda b: b.max(),
    "min": lambda b: b.min(),
    "amax": lambda b: b.amax(0),
    "amin": lambda b: b.amin(),
    "aminmax": lambda b: b.aminmax()[0],
    "prod": lambda b: b.prod(),
    "prod_dim": lambda b: b.prod(0),
    "logsumexp": lambda b: b.logsumexp(0),
    "cummax": lambda b: b.cummax(0)[0],
    "cummin": lambda b: b.cummin(1)[0],
    "median": lambda b: b.median(),
    "nanmedian": lambda b: b.nanmedian(),
    "std": lambda b: b.std(),
    "std_dim": lambda b: b.std(0),
    "logcumsumexp": lambda b: b.logcumsumexp(0),
    "var_mean": lambda b: b.var_mean()[0] if hasattr(b, "var_mean") else None,
    "norm": lambda b: b.norm(),
    "var": lambda b: b.var(),
    "max_dim": lambda b: b.max(0)[0],
    "sum": lambda b: b.sum(),
}


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
@pytest.mark.parametrize("shape", [(), (2, 3)], ids=["scalar", "matrix"])
def test_reduction_saves_its_input(name, shape):
    if shape == () and name in ("cummin", "amax", "prod_dim", "std_dim", "max_dim"):
        pytest.skip("a dim of a 0-d tensor")

    def f(m):
        x = m.tensor(np.arange(1.0, 1.0 + np.prod(shape)).reshape(shape), requires_grad=True)
        b = x * 1
        y = REDUCTIONS[name](b)
        if y is None:
            y = m.var_mean(b)[0]
        names = sorted(a for a in dir(y.grad_fn) if a in ("_saved_self", "_saved_result"))
        b.add_(1.0)
        y.sum().backward()
        return names, x.grad

    both(f)


def test_amax_of_abs_chain_written_in_place():
    """The fuzzer's program: amax of a 0-d tensor whose input is then written in place."""

    def f(m):
        x = m.tensor(2.0, requires_grad=True)
        b = x.abs().abs()
        d = b.amax()
        b.add_(2.0)
        d.backward()

    both(f)


def test_double_backward_through_a_complex_to_real_op():
    def f(m):
        r = m.tensor([[1.0, -2.0, 0.5, 3.0], [0.2, 0.1, -1.0, 2.0]], requires_grad=True)
        y = (m.fft.rfft(r).abs() ** 2).sum()
        (g,) = m.autograd.grad(y, r, create_graph=True)
        (gg,) = m.autograd.grad((g**2).sum(), r)
        c = r.to(m.complex128)
        (h,) = m.autograd.grad(c.abs().sum() + (c * c).real.sum(), c, create_graph=True)
        (hh,) = m.autograd.grad(h.abs().sum(), r)
        return g, gg, h, hh

    both(f)


VAR_CALLS = [
    lambda m, x: x.std(),
    lambda m, x: x.var(),
    lambda m, x: m.var_mean(x)[0],
    lambda m, x: m.std_mean(x)[0],
    lambda m, x: x.std(unbiased=True),
    lambda m, x: x.std(True),
    lambda m, x: x.std(False),
    lambda m, x: x.std(correction=1),
    lambda m, x: x.std(None),
    lambda m, x: x.std(dim=None, unbiased=False),
    lambda m, x: m.var_mean(x, unbiased=False)[0],
    lambda m, x: x.std([0, 1]),
    lambda m, x: x.std(None, keepdim=True),
    lambda m, x: x.std(dim=None, correction=None),
    lambda m, x: x.std(0, unbiased=False),
    lambda m, x: x.std(0, correction=None),
    lambda m, x: x.std(keepdim=True),
    lambda m, x: m.std(x, 1, True),
    lambda m, x: x.var(correction=0),
    lambda m, x: x.var(0, True, True),
]


def test_saved_correction_follows_the_overload():
    """``_saved_correction`` is None for the correction overload's default, else the number the
    ``unbiased`` overloads turn into; the values do not depend on it."""

    def f(m):
        x = m.tensor([[1.0, 3.0, 2.0], [4.0, 0.0, 5.0]], requires_grad=True)
        out = []
        for call in VAR_CALLS:
            y = call(m, x)
            (g,) = m.autograd.grad(y.sum(), x)
            out.append((y, g, y.grad_fn._saved_correction, y.grad_fn._saved_dim))
        return out

    both(f)


SAVED_INPUTS = {
    "rpow": lambda m, b, c: 2.0**b,
    "masked_select": lambda m, b, c: b.masked_select(c > 0),
    "layer_norm": lambda m, b, c: m.nn.functional.layer_norm(b, (3,)),
    "layer_norm_affine": lambda m, b, c: m.nn.functional.layer_norm(b, (3,), c, c),
    "group_norm": lambda m, b, c: m.nn.functional.group_norm(b.reshape(1, 3, 1), 1),
    "batch_norm": lambda m, b, c: m.nn.functional.batch_norm(
        b.reshape(3, 1), None, None, training=True
    ),
    "solve": lambda m, b, c: m.linalg.solve(b[:2].diag() + 1, c[:2]),
    "ldexp": lambda m, b, c: b.ldexp(m.tensor([1, 2, 3])),
    "conv1d": lambda m, b, c: m.nn.functional.conv1d(b.reshape(1, 1, 3), c.reshape(1, 1, 3)),
}


@pytest.mark.parametrize("target", ["b", "c"])
@pytest.mark.parametrize("name", sorted(SAVED_INPUTS))
def test_inputs_saved_by_pytorchs_nodes(name, target):
    """An in-place write to an input PyTorch's node saves raises at backward; one to an input
    it does not save does not."""

    def f(m):
        x = m.tensor([1.0, 3.0, 2.0], requires_grad=True)
        b = x * 1
        c = m.tensor([0.5, -1.0, 2.0], requires_grad=True) * 1
        y = SAVED_INPUTS[name](m, b, c)
        (b if target == "b" else c).add_(1.0)
        y.sum().backward()
        return x.grad

    both(f)


STALE_VIEW_WRITES = {
    "mul": lambda m, x, v: v * 2,
    "setitem_mask": lambda m, x, v: x.__setitem__(m.tensor(True), v),
    "copy_": lambda m, x, v: m.zeros(2).copy_(v),
    "index_put_": lambda m, x, v: m.zeros(5).index_put_((m.tensor([0]),), v),
    "add_": lambda m, x, v: m.zeros(2).add_(v),
    "copy_into_view": lambda m, x, v: v.copy_(m.ones(5)),
    "copy_shape": lambda m, x, v: m.zeros(3).copy_(m.ones(5)),
    "copy_leaf": lambda m, x, v: m.zeros(3, requires_grad=True).copy_(m.ones(5)),
}


@pytest.mark.parametrize("name", sorted(STALE_VIEW_WRITES))
def test_stale_no_grad_view_raises_before_shape_checks(name):
    """A view made in no_grad mode whose base was then written with grad mode on raises when
    an op's autograd kernel reads it, before the kernel's shape checks (``index_put_``, ``copy_``
    and ``x[mask] = v`` included)."""

    def f(m):
        a = m.ones(3, requires_grad=True) * 1
        with m.no_grad():
            v = a[:2]
        a.add_(1)
        return STALE_VIEW_WRITES[name](m, m.zeros(()), v)

    both(f)


OUTPUT_SAVES = {
    "frexp": lambda m, x: (x * 1).frexp()[0],
    "inv": lambda m, x: m.linalg.inv(x),
    "inv_ex": lambda m, x: m.linalg.inv_ex(x)[0],
    "cholesky": lambda m, x: m.linalg.cholesky(x),
    "cholesky_ex": lambda m, x: m.linalg.cholesky_ex(x)[0],
    "eigh": lambda m, x: m.linalg.eigh(x)[0],
    "svd": lambda m, x: m.linalg.svd(x)[1],
    "qr": lambda m, x: m.linalg.qr(x)[0],
    "aminmax_dim": lambda m, x: m.aminmax(x, dim=0)[0],
    "std_mean": lambda m, x: m.std_mean(x)[0],
    "slogdet": lambda m, x: m.linalg.slogdet(x)[1],
}


@pytest.mark.parametrize("name", sorted(OUTPUT_SAVES))
def test_saved_outputs_named_as_pytorch(name):
    """``grad_fn._saved_<name>`` of the outputs PyTorch's nodes save under their own names
    (``_saved_inverse``, ``_saved_L``, ``_saved_Q``, ``_saved_min`` ...): new tensors with the
    output's value whose grad_fn is the node."""

    def f(m):
        x = m.tensor([[2.0, 1.0], [1.0, 3.0]], requires_grad=True)
        node = OUTPUT_SAVES[name](m, x).grad_fn
        skip = ("_saved_S_sym_argsize_minus_1", "_saved_full_matrices", "_saved_mode")
        skip += ("_saved_LU", "_saved_pivots")  # LAPACK's factors, which leafgrad's op has not
        names = sorted(a for a in dir(node) if a.startswith("_saved") and a not in skip)
        values = [getattr(node, a) for a in names]
        return names, [v.abs() if hasattr(v, "abs") else v for v in values]

    both(f)


ARGUMENT_SAVES = {
    "roll": lambda m, x: x.roll(1, 1),
    "repeat": lambda m, x: x.repeat(2, 1),
    "diagonal": lambda m, x: x.diagonal(1),
    "unfold": lambda m, x: x.unfold(1, 2, 1),
    "pixel_shuffle": lambda m, x: m.nn.functional.pixel_shuffle(x.reshape(1, 4, 1, 2), 2),
    "split": lambda m, x: x.split(1, 1)[0],
    "chunk": lambda m, x: x.chunk(2, 1)[0],
    "squeeze": lambda m, x: x[None].squeeze(0),
    "pad": lambda m, x: m.nn.functional.pad(x, (1, 0, 2, 1)),
    "fft_pad": lambda m, x: m.fft.fft(x, n=6).grad_fn.next_functions[0][0],
    "logit": lambda m, x: x.sigmoid().logit(),
    "logit_eps": lambda m, x: x.logit(0.1),
}


@pytest.mark.parametrize("name", sorted(ARGUMENT_SAVES))
def test_saved_arguments_under_pytorchs_names(name):
    def f(m):
        x = m.ones(2, 4, requires_grad=True) * 1
        y = ARGUMENT_SAVES[name](m, x)
        node = y if not hasattr(y, "grad_fn") else y.grad_fn
        names = sorted(a for a in dir(node) if a.startswith("_saved") and "sym" not in a)
        return names, [getattr(node, a) for a in names if a != "_saved_self"]

    both(f)


@pytest.mark.parametrize("op", ["tril_", "triu_"])
@pytest.mark.parametrize(
    "make",
    [
        lambda m: m.ones(3, requires_grad=True),  # a leaf: the leaf check comes first
        lambda m: m.tensor(2.0, requires_grad=True),
        lambda m: m.ones(3, requires_grad=True) * 1,  # recorded: then the dims
        lambda m: m.ones(3),
        lambda m: m.ones(4, requires_grad=True)[1:],
        lambda m: m.ones(1, 3).expand(3, 3),
    ],
)
def test_triangle_in_place_checks_in_pytorchs_order(op, make):
    both(lambda m: getattr(make(m), op)(1))


EMPTY_SHAPES = [(0, 3), (3, 0), (2, 0, 3), (0, 1, 2), (1, 0), (2, 3, 0)]
EMPTY_OPS = {
    "clone": lambda m, x: x.clone(),
    "sin": lambda m, x: m.sin(x),
    "mul": lambda m, x: x * 1.5,
    "rad2deg": lambda m, x: m.rad2deg(x),
    "deg2rad_int": lambda m, x: m.deg2rad(x.long()),
    "to": lambda m, x: x.to(m.float64),
    "empty_like": lambda m, x: m.empty_like(x),
    "nan_to_num": lambda m, x: m.nan_to_num(x),
}


@pytest.mark.parametrize("shape", EMPTY_SHAPES)
@pytest.mark.parametrize("op", sorted(EMPTY_OPS))
def test_empty_tensors_strides_as_pytorchs_dense_check(shape, op):
    """PyTorch's ``is_non_overlapping_and_dense`` leaves out dims of size 0 as it does size-1
    ones: an empty permuted tensor keeps its strides through clone/empty_like-made results."""
    import itertools

    def f(m):
        out = []
        for perm in itertools.permutations(range(len(shape))):
            x = m.zeros(shape).permute(*perm)
            out.append(EMPTY_OPS[op](m, x).stride())
        return out

    both(f)


@pytest.mark.parametrize("dtype", ["float32", "int64", "bool"])
@pytest.mark.parametrize("op", ["rad2deg", "deg2rad"])
def test_angle_conversions_lay_out_their_result_as_empty_like(dtype, op):
    """rad2deg/deg2rad write into ``empty_like(self)``: a dense input's strides exactly, size-1
    dims included (fuzz seed 40)."""

    def f(m):
        out = []
        for x in (
            m.zeros(3, 1, dtype=getattr(m, dtype)).T,
            m.zeros(1, 3, dtype=getattr(m, dtype)).T,
            m.zeros(4, 6, dtype=getattr(m, dtype)).T[::2],
            m.zeros(4, 6, dtype=getattr(m, dtype))[::2, ::3],
        ):
            y = getattr(m, op)(x)
            out.append((y, y.stride()))
        return out

    both(f)


@pytest.mark.parametrize("first", [2, 2.0, True])
@pytest.mark.parametrize("second", [2, 2.0])
def test_a_number_argument_keeps_its_type_whatever_was_called_before(first, second):
    """2, 2.0 and True are equal dict keys: a plan (and its saved ``exponent``) made for one
    served the other, so ``pow_(2.0)`` after ``pow(2)`` saved 2 (fuzz seed 41)."""

    def f(m):
        x = m.tensor([1.5, -0.5], dtype=m.float64, requires_grad=True).abs()
        a = x.pow(first)
        b = x.clone()
        b.float_power_(second)
        c = x.pow(second)
        return [(y, y.grad_fn._saved_exponent, type(y.grad_fn._saved_exponent)) for y in (a, b, c)]

    both(f)


@pytest.mark.parametrize("op", ["mm", "addmm", "mean"])
def test_saved_sizes_of_an_input_written_in_place(op):
    """An input's ``_sym_sizes`` are numbers in PyTorch's node: they are read without the
    saved input's version check (fuzz seed 40)."""

    def f(m):
        a = m.ones(2, 3, requires_grad=True) * 1
        b = m.ones(3, 1, requires_grad=True)
        y = {"mm": lambda: a.mm(b), "addmm": lambda: m.addmm(m.ones(2, 1), a, b), "mean": a.mean}[
            op
        ]()
        a.add_(2)
        g = y.grad_fn
        names = sorted(n for n in dir(g) if n.startswith("_saved_") and "sym_s" in n)
        return [(n, getattr(g, n)) for n in names]

    both(f)


@pytest.mark.parametrize("call", ["diag", "diag_neg", "diagflat", "diagflat_pos", "method"])
def test_diag_and_diagflat_save_diag_embeds_dims_as_written(call):
    """torch.diag of a vector and diagflat are PyTorch's ``diag_embed(x, offset)``: the node
    saves the default dims as written, -2 and -1 (fuzz seed 42)."""

    def f(m):
        x = m.tensor([1.0, 2.0, 3.0], requires_grad=True) * 1
        y = {
            "diag": lambda: m.diag(x),
            "diag_neg": lambda: m.diag(x, -1),
            "diagflat": lambda: m.diagflat(x.reshape(3, 1)),
            "diagflat_pos": lambda: m.diagflat(x, 2),
            "method": lambda: x.diag(1),
        }[call]()
        g = y.grad_fn
        y.sum().backward()
        return y, [(n, getattr(g, n)) for n in sorted(dir(g)) if n.startswith("_saved_")]

    both(f)


@pytest.mark.parametrize(
    "op",
    [
        "mul_number",
        "mul_tensor",
        "mul_self",
        "div",
        "pow",
        "abs",
        "pow_number",
        "exp",
        "atan2",
        "addcmul",
        "where",
        "hypot",
        "lerp",
    ],
)
def test_an_input_without_an_edge_has_its_formulas_inputs_unsaved(op):
    """A view made under no_grad of a tensor that requires grad requires grad with no edge
    (Note [Views that inherit requires_grad]): PyTorch's node does not compute its gradient,
    so what only its formula reads is not saved (fuzz seed 40); what another formula reads too,
    or the formula of an op's only differentiable input, is saved (fuzz seed 44)."""

    def f(m):
        b = m.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True) * 1
        with m.no_grad():
            v = b.T
        w = m.tensor([[0.5, 1.0], [2.0, 3.0], [4.0, 5.0]], requires_grad=True)
        y = {
            "mul_number": lambda: v * 2.0,
            "mul_tensor": lambda: v * w,
            "mul_self": lambda: v * v,
            "div": lambda: w / v,
            "pow": lambda: v.pow(w),
            # one differentiable input, or a tensor both formulas read: PyTorch saves it
            # whenever it makes the node (fuzz seed 44)
            "abs": lambda: v.abs(),
            "pow_number": lambda: v.pow(2),
            "exp": lambda: v.exp(),
            "atan2": lambda: m.atan2(v, w),
            "addcmul": lambda: m.addcmul(w, v, w),
            "where": lambda: m.where(w > 1, v, w),
            "hypot": lambda: m.hypot(v, w),
            "lerp": lambda: m.lerp(v, w, 0.5),
        }[op]()
        g = y.grad_fn
        saved = [(n, getattr(g, n)) for n in sorted(dir(g)) if n.startswith("_saved_")]
        y.sum().backward()
        return saved, w.grad, v.grad

    both(f)


@pytest.mark.parametrize("name", ["median", "nanmedian"])
def test_median_of_an_expanded_dim_is_the_median_of_its_copy(name):
    """PyTorch 2.13's ``median(dim)`` and ``nanmedian(dim)`` read memory they never wrote along
    a dim of stride 0 (``torch.tensor(0.1875).broadcast_to((2,)).median(0)`` gives a denormal
    and index 1; fuzz seed 43): leafgrad gives what PyTorch gives for the contiguous copy, which
    the fuzz programs compare instead."""

    def f(m, expanded):
        a = m.tensor([[0.5, 0.25, 0.75]], requires_grad=True)
        x = a.expand(4, 3) if expanded else a.expand(4, 3).contiguous()
        values, indices = getattr(x, name)(0)
        values.sum().backward()
        return values, indices, a.grad

    same(f(torch, False), f(lg, True))


@pytest.mark.parametrize(
    ("shape", "expanded", "wrap"),
    [((1,), (2, 1), False), ((1,), (2, 3), False), ((3, 1), (3, 2), False), ((1, 3), (7, 3), True)],
)
def test_fill_diagonal_of_an_expanded_tensor_writes_the_diagonal_memory(shape, expanded, wrap):
    """PyTorch fills the diagonal through an as_strided view with no overlap check: on an
    expanded tensor each diagonal element's memory takes the value, which every element on it
    shows (leafgrad refused the write as overlapping; fuzz seed 45)."""

    def f(m):
        x = m.ones(*shape) * 3
        e = x.expand(*expanded)
        e.fill_diagonal_(2.0, wrap=wrap)
        return x, e, x._version

    both(f)


def test_fuzz_seed_45_program():
    import fuzz_programs

    fuzz_programs.check(
        [
            ("new", "float32", 1, False, 0),
            ("unary", "abs", 0),
            ("view", "diagonal", 0, 0, 0),
            ("view", "expand_as", 0, 0, 0),
            ("inplace", "F_relu_inplace", 0, 0, 2.0),
            ("inplace", "F_relu_inplace", 0, 0, 2.0),
            ("inplace", "F_relu_inplace", 0, 0, 2.0),
            ("grad", 0, (0,), False, False, False),
            ("inplace", "fill_diagonal_", 20, 0, 2.0),
        ]
    )


@pytest.mark.parametrize(
    ("a", "b"), [((3, 2), (4, 2, 5)), ((3, 2), (2, 4, 2, 5)), ((2,), (4, 2, 5))]
)
def test_matmul_transposes_keep_their_dims_as_written(a, b):
    """matmul folding a batched right operand transposes it and the result with ``mT``: the
    nodes keep dims -2, -1 as written (they saved 1, 2; fuzz seed 46)."""

    def f(m):
        x = m.arange(float(np.prod(a))).reshape(a).requires_grad_()
        y = m.arange(float(np.prod(b))).reshape(b).requires_grad_()
        r = m.matmul(x, y)
        nodes, node = [], r.grad_fn
        while node is not None and len(nodes) < 6:
            nodes.append(
                (node.name(), [(n, getattr(node, n)) for n in dir(node) if "_saved_dim" in n])
            )
            node = next((f for f, _ in node.next_functions if f is not None), None)
        r.sum().backward()
        return r, nodes, x.grad, y.grad

    both(f)


@pytest.mark.parametrize("case", ["chunk", "chunk_leaf", "no_grad", "no_grad_leaf", "unbind"])
def test_fill_diagonal_of_a_view_names_its_as_strided_view(case):
    """PyTorch fills the diagonal through an as_strided view of ``self``, which inherits the
    creation of a view made by a multi-output op or under no_grad: its refusal names
    ``AsStrided`` (leafgrad named the view's own op; fuzz seed 47)."""

    def f(m):
        if case == "chunk":
            v = (m.ones(4, 2, requires_grad=True) * 1).chunk(2)[0]
        elif case == "chunk_leaf":
            v = m.ones(4, 2, requires_grad=True).chunk(2)[0]
        elif case == "unbind":
            v = (m.ones(2, 2, requires_grad=True) * 1).unbind(0)[0].unsqueeze(0).expand(2, 2)
        else:
            b = m.ones(2, 2, requires_grad=True)
            b = b * 1 if case == "no_grad" else b
            with m.no_grad():
                v = b[:]
        v.fill_diagonal_(2.0)

    both(f)


@pytest.mark.parametrize("shape", [(0, 1), (2, 0, 1), (1, 0, 1), (0, 2, 1), (0, 3)])
@pytest.mark.parametrize("other", ["tensor_0d", "number", "row", "column", "same"])
def test_empty_results_of_operands_of_other_shapes_are_laid_out_as_pytorch(shape, other):
    """An empty result of contiguous operands of several shapes (a 0-d tensor, a broadcast row)
    is laid out by TensorIterator's dim sort, off its fast path: ``where(c, a, t.sum())`` of
    shape (0, 1) has strides (1, 0) (leafgrad gave contiguous strides; fuzz seed 48)."""

    def f(m):
        a = m.ones(shape)
        o = {
            "tensor_0d": m.tensor(2.0),
            "number": 2.0,
            "row": m.ones(shape[-1:]),
            "column": m.ones((*shape[:-1], 1)),
            "same": m.ones(shape),
        }[other]
        results = [m.where(a > 0, a, o), a + o, a - o]
        if other != "number":
            results += [a * o, m.maximum(a, o), m.atan2(a, o)]
        return [(r.shape, r.stride()) for r in results]

    both(f)


@pytest.mark.parametrize("view", ["real", "imag", "as_real_select", "as_real", "as_real_t"])
def test_regenerated_strided_node_after_a_replayed_view_saves_its_geometry(view):
    """A view through ``view_as_real`` written in place gets a regenerated ``grad_fn``: its
    last ``AsStridedBackward0`` saves the view's size, stride and storage offset (leafgrad's
    saved nothing; fuzz seed 49)."""

    def f(m):
        x = m.tensor([1.5, 2.0, 3.0], requires_grad=True)
        z = m.fft.rfft(x)
        v = {
            "real": lambda: z.real,
            "imag": lambda: z.imag,
            "as_real_select": lambda: m.view_as_real(z)[..., 1],
            "as_real": lambda: m.view_as_real(z),
            "as_real_t": lambda: m.view_as_real(z).T,
        }[view]()
        m.nn.functional.relu(v, inplace=True)
        g = v.grad_fn
        saved = [(n, getattr(g, n)) for n in sorted(dir(g)) if n.startswith("_saved")]
        v.sum().backward()
        return g.name(), saved, x.grad

    both(f)
