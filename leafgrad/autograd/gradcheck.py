"""``gradcheck`` and ``gradgradcheck``: gradients from autograd against finite differences.

A port of PyTorch 2.13's ``torch/autograd/gradcheck.py`` for dense tensors, same algorithm, same
checks in the same order, same messages (``GradcheckError`` texts print the Jacobians with
leafgrad's PyTorch-identical tensor formatting):

- numerical Jacobian: central differences, perturbing each element of ``input.data`` in place
  (``x.data[idx].copy_(orig -/+ eps)``), so ``func`` sees the perturbed values through the very
  tensors it was given;
- analytical Jacobian: one ``autograd.grad`` per output element with a one-hot ``grad_output``,
  computed twice to check reentrancy;
- fast mode: ``v^T J u`` with torch's random vectors (a fresh ``Generator()``, whose default seed
  and stream leafgrad reproduces), so even its failure messages agree.

- forward AD (``check_forward_ad``): the Jacobian from dual tensors with one-hot tangents (fast
  mode: ``J u``), and the undefined-tangent check.

Not ported, because leafgrad has no such machinery: sparse and MKLDNN layouts, forward-over-reverse
(``gradgradcheck``'s ``check_fwd_over_rev``) and vmap (``check_batched_grad``,
``check_batched_forward_grad``); those options raise ``NotImplementedError``. Complex outputs need
``real``/``imag``, which leafgrad lacks so far.
"""

from __future__ import annotations

import functools
import warnings
from itertools import product

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]


class GradcheckError(RuntimeError):
    """Error raised by :func:`gradcheck` and :func:`gradgradcheck`."""


FAILED_NONDET_MSG = """\n
NOTE: If your op relies on non-deterministic operations i.e., it is listed here:
https://pytorch.org/docs/stable/generated/torch.use_deterministic_algorithms.html
this failure might be expected.

If you are adding a new operator, please file an issue and then use one of the
workarounds. The workaround depends on how your test invokes gradcheck/gradgradcheck.
If the test
- manually invokes gradcheck/gradgradcheck, then call gradcheck/gradgradcheck
  with `nondet_tol=<tol>` as a keyword argument.
- is OpInfo-based (e.g., in test_ops_gradients.py), then modify the OpInfo for the test
  to have `gradcheck_nondet_tol=<tol>`.
- is a Module test (e.g., in common_nn.py), then modify the corresponding
  module_test entry to have `gradcheck_nondet_tol=<tol>`
"""

FAST_FAIL_SLOW_OK_MSG = """
Fast gradcheck failed but element-wise differences are small. This means that the
test might've passed in slow_mode!

If you are adding a new operator, please file an issue and then use one of the
workarounds. The workaround depends on how your test invokes gradcheck/gradgradcheck:

If the test
- manually invokes gradcheck/gradgradcheck, then call gradcheck/gradgradcheck
  with `fast_mode=False` as a keyword argument.
- is OpInfo-based (e.g., in test_ops_gradients.py), then modify the OpInfo for the test
  to have `gradcheck_fast_mode=False`
- is a Module test (e.g., in common_nn.py), then modify the corresponding
  module_test entry to have `gradcheck_fast_mode=False`
""".strip()

NOT_DOUBLE = (
    "Input #{} requires gradient and is not a double precision floating point or complex. This "
    "check will likely fail if all the inputs are not of double precision floating point or "
    "complex. "
)
STRIDE_ZERO = (
    "The {}th input has a dimension with stride 0. gradcheck only supports inputs that are "
    "non-overlapping to be able to compute the numerical gradients correctly. You should call "
    ".contiguous on the input before passing it to gradcheck."
)
NO_INPUT_REQUIRES_GRAD = (
    "gradcheck expects at least one input tensor to require gradient, but none of them have "
    "requires_grad=True."
)
COMPLEX_OUTPUT = (
    "Expected output to be non-complex. get_numerical_jacobian no longer supports functions that "
    "return complex outputs."
)
BC_BREAKING = (
    "Backwards compatibility: New undefined gradient support checking feature is enabled by "
    "default, but it may break existing callers of this function. If this is true for you, you "
    'can call this function with "check_undefined_grad=False" to disable the feature'
)
UNDEFINED_RAISED = (
    "Expected backward function to handle undefined output grads. Please look at "
    '"Notes about undefined output gradients" in "tools/autograd/derivatives.yaml"'
)
UNDEFINED_NONZERO = (
    "Expected all input grads to be undefined or zero when all output grads are undefined or "
    'zero. Please look at "Notes about undefined output gradients" in '
    '"tools/autograd/derivatives.yaml"'
)
NOT_SUPPORTED = "leafgrad: {}(..., {}=True) is not supported: leafgrad has no {}"


def _lg():
    import leafgrad

    return leafgrad


def _is_tensor(x) -> bool:
    from .._tensor import Tensor

    return isinstance(x, Tensor)


def _is_float_or_complex_tensor(obj) -> bool:
    return _is_tensor(obj) and (obj.is_floating_point() or obj.is_complex())


def _as_tuple(x):
    if isinstance(x, tuple):
        return x
    if isinstance(x, list):
        return tuple(x)
    return (x,)


def _iter_tensors(x, only_requiring_grad: bool = False):
    if _is_tensor(x):
        if x.requires_grad or not only_requiring_grad:
            yield x
    elif isinstance(x, (list, tuple)):
        for elem in x:
            yield from _iter_tensors(elem, only_requiring_grad)


def _differentiable_outputs(x):
    return tuple(o for o in _as_tuple(x) if o.requires_grad)


# --- numerical Jacobian ------------------------------------------------------------------------


def _iter_tensor(x_tensor):
    """``(x.data, index, flat index)`` for every element: ``.data`` gets around the version
    check, as in torch."""
    data = x_tensor.data
    for d_idx, x_idx in enumerate(product(*[range(m) for m in data.size()])):
        yield data, x_idx, d_idx


def _check_outputs_same_dtype_and_shape(output1, output2, eps, idx=None) -> None:
    on_index = f"on index {idx} " if idx is not None else ""
    if output1.shape != output2.shape:
        raise AssertionError(
            f"Expected `func` to return outputs with the same shape"
            f" when inputs are perturbed {on_index}by {eps}, but got:"
            f" shapes {output1.shape} and {output2.shape}."
        )
    if output1.dtype != output2.dtype:
        raise AssertionError(
            f"Expected `func` to return outputs with the same dtype"
            f" when inputs are perturbed {on_index}by {eps}, but got:"
            f" dtypes {output1.dtype} and {output2.dtype}."
        )


def _compute_numerical_gradient(fn, entry, v, norm_v, nbhd_checks_fn):
    """Central difference of ``fn`` at ``entry`` (written in place) in the direction ``v``."""
    orig = entry.clone()
    entry.copy_(orig - v)
    outa = fn()
    entry.copy_(orig + v)
    outb = fn()
    entry.copy_(orig)

    def compute(a, b):
        nbhd_checks_fn(a, b)
        ret = (b - a) / (2 * norm_v)
        return ret.detach().reshape(-1)

    return tuple(compute(a, b) for (a, b) in zip(outa, outb))


def _compute_numerical_jvps_wrt_specific_input(jvp_fn, delta, input_is_complex):
    jvps = []
    ds_dx_tup = jvp_fn(delta[0] if isinstance(delta, tuple) else delta)
    if input_is_complex:  # C -> R: the conjugate Wirtinger derivative
        ds_dy_tup = jvp_fn(delta[1] * 1j) if isinstance(delta, tuple) else jvp_fn(delta * 1j)
        for ds_dx, ds_dy in zip(ds_dx_tup, ds_dy_tup):
            if ds_dx.is_complex():
                raise AssertionError("Expected ds_dx to be real-valued, not complex")
            jvps.append(ds_dx + ds_dy * 1j)
    else:
        for ds_dx in ds_dx_tup:
            if ds_dx.is_complex():
                raise AssertionError("Expected ds_dx to be real-valued, not complex.")
            jvps.append(ds_dx)
    return jvps


def _with_prepare_inputs(fn, inputs):
    """``fn`` on the (perturbed in place) inputs, outputs cloned."""

    def wrapped_fn():
        return tuple(a.clone() for a in _as_tuple(fn(*_as_tuple(inputs))))

    return wrapped_fn


def _get_numerical_jvp_fn(wrapped_fn, input_to_perturb, eps, nbhd_checks_fn):
    def jvp_fn(delta):
        return _compute_numerical_gradient(wrapped_fn, input_to_perturb, delta, eps, nbhd_checks_fn)

    return jvp_fn


def _combine_jacobian_cols(jacobian_cols, outputs, input, numel):
    dtype = input.dtype if input.dtype.is_complex else None
    jacobians = tuple(
        t.new_zeros((numel, t.numel()), dtype=dtype)
        for t in outputs
        if _is_float_or_complex_tensor(t)
    )
    for i, jacobian in enumerate(jacobians):
        for k, v in jacobian_cols.items():
            jacobian[k] = v[i]
    return jacobians


def get_numerical_jacobian_wrt_specific_input(fn, input_idx, inputs, outputs, eps, input=None):
    """The numerical Jacobians of every output with respect to one input (one column per
    perturbed element)."""
    jacobian_cols = {}
    input = inputs[input_idx] if input is None else input
    if not input.requires_grad:
        raise AssertionError("Expected input to have requires_grad=True")
    for x, idx, d_idx in _iter_tensor(input):
        wrapped_fn = _with_prepare_inputs(fn, inputs)
        input_to_perturb = x[idx]
        nbhd_checks_fn = functools.partial(_check_outputs_same_dtype_and_shape, idx=idx, eps=eps)
        jvp_fn = _get_numerical_jvp_fn(wrapped_fn, input_to_perturb, eps, nbhd_checks_fn)
        jacobian_cols[d_idx] = _compute_numerical_jvps_wrt_specific_input(
            jvp_fn, eps, x.is_complex()
        )
    return _combine_jacobian_cols(jacobian_cols, outputs, input, input.numel())


def _get_numerical_jacobian(fn, inputs, outputs=None, target=None, eps=1e-3):
    """M x N Jacobians: for each input requiring grad, one per non-integral output."""
    jacobians = []
    if outputs is None:
        outputs = _as_tuple(fn(*_as_tuple(inputs)))
    if any(o.is_complex() for o in outputs):
        raise ValueError(COMPLEX_OUTPUT)
    if target is None:
        target = inputs
    inp_indices = [i for i, a in enumerate(target) if _is_tensor(a) and a.requires_grad]
    for inp, inp_idx in zip(_iter_tensors(target, True), inp_indices):
        jacobians += [
            get_numerical_jacobian_wrt_specific_input(fn, inp_idx, inputs, outputs, eps, input=inp)
        ]
    return jacobians


# --- analytical Jacobian -----------------------------------------------------------------------


def _compute_analytical_jacobian_rows(vjp_fn, sample_output):
    """Row ``j`` of the Jacobian is ``vjp_fn(e_j)``."""
    lg = _lg()
    grad_out_base = lg.zeros_like(sample_output)
    flat_grad_out = grad_out_base.view(-1)
    jacobians_rows = []
    for j in range(flat_grad_out.numel()):
        flat_grad_out.zero_()
        flat_grad_out[j] = 1.0
        grad_inputs = vjp_fn(grad_out_base)
        for i, d_x in enumerate(grad_inputs):
            if j == 0:
                jacobians_rows.append([])
            jacobians_rows[i] += [d_x.clone() if _is_tensor(d_x) else None]
    return jacobians_rows


def _get_analytical_vjps_wrt_specific_output(vjp_fn, sample_output, v):
    grad_inputs = vjp_fn(v.reshape(sample_output.shape))
    return [[vjp.clone() if _is_tensor(vjp) else None] for vjp in grad_inputs]


def _stack_and_check_tensors(list_of_list_of_tensors, inputs, numel_outputs):
    out_jacobians = tuple(
        t.new_zeros((t.numel(), numel_outputs))
        for t in inputs
        if _is_float_or_complex_tensor(t) and t.requires_grad
    )
    diff_input_list = list(_iter_tensors(inputs, True))
    correct_grad_sizes = True
    correct_grad_types = True
    for i, tensor_list in enumerate(list_of_list_of_tensors):
        inp = diff_input_list[i]
        out_jacobian = out_jacobians[i]
        for j, tensor in enumerate(tensor_list):
            if tensor is not None and tensor.size() != inp.size():
                correct_grad_sizes = False
            elif tensor is not None and tensor.dtype != inp.dtype:
                correct_grad_types = False
            if tensor is None:
                out_jacobian[:, j].zero_()
            else:
                if out_jacobian[:, j].numel() != tensor.numel():
                    raise AssertionError(
                        f"Expected out_jacobian column to have {tensor.numel()} elements, "
                        f"but got {out_jacobian[:, j].numel()}"
                    )
                out_jacobian[:, j] = tensor.reshape(-1)
    return out_jacobians, correct_grad_sizes, correct_grad_types


def _check_jacobians_equal(j1, j2, atol) -> bool:
    for j1_x, j2_x in zip(j1, j2):
        if j1_x.numel() != 0 and (j1_x - j2_x).abs().max() > atol:
            return False
    return True


def _check_analytical_jacobian_attributes(
    inputs, output, nondet_tol, check_grad_dtypes, fast_mode=False, v=None
):
    """The analytical Jacobian (rows from ``autograd.grad``), computed twice for reentrancy."""
    lg = _lg()
    diff_input_list = list(_iter_tensors(inputs, True))

    def vjp_fn(grad_output):
        return lg.autograd.grad(
            output, diff_input_list, grad_output, retain_graph=True, allow_unused=True
        )

    if fast_mode:
        vjps1 = _get_analytical_vjps_wrt_specific_output(vjp_fn, output.clone(), v)
        vjps2 = _get_analytical_vjps_wrt_specific_output(vjp_fn, output.clone(), v)
    else:
        vjps1 = _compute_analytical_jacobian_rows(vjp_fn, output.clone())
        vjps2 = _compute_analytical_jacobian_rows(vjp_fn, output.clone())

    output_numel = output.numel() if not fast_mode else 1
    # torch names these two the other way round; the checks below follow torch's behaviour
    jacobians1, types_ok, sizes_ok = _stack_and_check_tensors(vjps1, inputs, output_numel)
    jacobians2, _, _ = _stack_and_check_tensors(vjps2, inputs, output_numel)
    reentrant = _check_jacobians_equal(jacobians1, jacobians2, nondet_tol)

    if not types_ok and check_grad_dtypes:
        raise GradcheckError("Gradient has dtype mismatch")
    if not sizes_ok:
        raise GradcheckError("Analytical gradient has incorrect size")
    if not reentrant:
        raise GradcheckError(
            "Backward is not reentrant, i.e., running backward with "
            "same input and grad_output multiple times gives different values, "
            "although analytical gradient matches numerical gradient."
            f"The tolerance for nondeterminism was {nondet_tol}." + FAILED_NONDET_MSG
        )
    return jacobians1


def _get_analytical_jacobian(inputs, outputs, input_idx, output_idx):
    jacobians = _check_analytical_jacobian_attributes(
        inputs, outputs[output_idx], nondet_tol=float("inf"), check_grad_dtypes=False
    )
    return jacobians[input_idx]


# --- checks ------------------------------------------------------------------------------------


def _check_inputs(tupled_inputs) -> bool:
    lg = _lg()
    any_input_requiring_grad = False
    for idx, inp in enumerate(tupled_inputs):
        if _is_tensor(inp) and inp.requires_grad:
            if not (inp.dtype == lg.float64 or inp.dtype == lg.complex128):
                warnings.warn(NOT_DOUBLE.format(idx), stacklevel=2)
            if not all(st > 0 or sz <= 1 for st, sz in zip(inp.stride(), inp.size())):
                raise RuntimeError(STRIDE_ZERO.format(idx))
            any_input_requiring_grad = True
    if not any_input_requiring_grad:
        raise ValueError(NO_INPUT_REQUIRES_GRAD)
    return True


def _check_no_differentiable_outputs(func, inputs, func_out, eps) -> bool:
    lg = _lg()
    for jacobians in _get_numerical_jacobian(func, inputs, func_out, eps=eps):
        for jacobian in jacobians:
            if lg.ne(jacobian, 0).sum() > 0:
                raise GradcheckError("Numerical gradient for function expected to be zero")
    return True


def _check_no_differentiable_outputs_fast(
    func, func_out, all_inputs, inputs_indices, all_u, eps, nondet_tol
):
    lg = _lg()
    for inp_idx, u in zip(inputs_indices, all_u):
        jvps = _get_numerical_jvp_wrt_specific_input(func, inp_idx, all_inputs, u, eps)
        for jvp in jvps:
            if jvp.numel() == 0:
                continue
            if (jvp - lg.zeros_like(jvp)).abs().max() > nondet_tol:
                raise GradcheckError("Numerical gradient for function expected to be zero")
    return True


def _allclose_with_type_promotion(a, b, rtol, atol) -> bool:
    lg = _lg()
    promoted_type = lg.promote_types(a.dtype, b.dtype)
    return lg.allclose(a.to(dtype=promoted_type), b.to(dtype=promoted_type), rtol, atol)


def _get_notallclose_msg(
    analytical,
    numerical,
    output_idx,
    input_idx,
    complex_indices,
    test_imag=False,
    is_forward_ad=False,
) -> str:
    out_is_complex = (not is_forward_ad) and complex_indices and output_idx in complex_indices
    inp_is_complex = is_forward_ad and complex_indices and input_idx in complex_indices
    part = "imaginary" if test_imag else "real"
    element = "inputs" if is_forward_ad else "outputs"
    prefix = ""
    if out_is_complex or inp_is_complex:
        prefix = f"While considering the {part} part of complex {element} only, "
    mode = "computed with forward mode " if is_forward_ad else ""
    return (
        prefix + f"Jacobian {mode}mismatch for output {output_idx:d} with respect to input "
        f"{input_idx:d},\nnumerical:{numerical}\nanalytical:{analytical}\n"
    )


def _test_backward_mul_by_grad_output(outputs, inputs, masked) -> bool:
    """A zero ``grad_output`` must give zero gradients of the inputs' type, device and size."""
    lg = _lg()
    diff_input_list = list(_iter_tensors(inputs, True))
    if not diff_input_list:
        raise GradcheckError("no Tensors requiring grad found in input")
    grads_input = lg.autograd.grad(
        outputs, diff_input_list, [lg.zeros_like(o) for o in outputs], allow_unused=True
    )
    for gi, di in zip(grads_input, diff_input_list):
        if gi is None:
            continue
        if masked:
            if not lg.allclose(gi, lg.zeros_like(gi)):
                raise GradcheckError("backward not multiplied by grad_output")
        elif not gi.eq(0).all():
            raise GradcheckError("backward not multiplied by grad_output")
        if gi.dtype != di.dtype:
            raise GradcheckError("grad is incorrect type")
        if gi.device != di.device:
            raise GradcheckError("grad is incorrect device")
        if gi.size() != di.size():
            raise GradcheckError("grad is incorrect size")
    return True


_UNDEFINED_NODE = []


def _undefined_grad_node_class():
    """A node whose backward gives an undefined (None) gradient (made once, on first use)."""
    if not _UNDEFINED_NODE:
        from .graph import Node

        class UndefinedGradBackward(Node):
            __slots__ = ()

            def _apply(self, grads):
                return [None]

            def _apply_graph(self, grads):
                return [None]

        UndefinedGradBackward.__module__ = "builtins"
        _UNDEFINED_NODE.append(UndefinedGradBackward)
    return _UNDEFINED_NODE[0]


def _undefined_grad(t):
    """``t`` through torch's ``torch._C._functions.UndefinedGrad()``."""
    from .._tensor import Tensor
    from ..ops.dispatch import _edge

    node = _undefined_grad_node_class()((_edge(t),))
    node._device = t._device
    return Tensor._make(t._data, t._dtype, t._device, requires_grad=True, grad_fn=node)


def _test_undefined_backward_mode(func, outputs, inputs) -> bool:
    lg = _lg()
    diff_input_list = list(_iter_tensors(inputs, True))
    if not diff_input_list:
        raise GradcheckError("no Tensors requiring grad found in input")

    def check_undefined_grad_support(output_to_check):
        grads_output = [lg.zeros_like(o) for o in output_to_check]
        try:
            grads_input = lg.autograd.grad(
                output_to_check, diff_input_list, grads_output, allow_unused=True
            )
        except RuntimeError as e:
            warnings.warn(BC_BREAKING, stacklevel=2)
            raise GradcheckError(UNDEFINED_RAISED) from e
        for gi in grads_input:
            if (gi is not None) and (not gi.eq(0).all()):
                warnings.warn(BC_BREAKING, stacklevel=2)
                raise GradcheckError(UNDEFINED_NONZERO)
        return True

    outputs_to_check = [
        [_undefined_grad(o) for o in _differentiable_outputs(func(*inputs)) if _is_tensor(o)]
    ]
    if len(outputs_to_check[0]) > 1:
        for undef_grad_idx in range(len(outputs)):
            output_to_check = _differentiable_outputs(func(*inputs))
            outputs_to_check.append(
                [
                    _undefined_grad(o) if idx == undef_grad_idx else o
                    for idx, o in enumerate(output_to_check)
                ]
            )
    return all(check_undefined_grad_support(output) for output in outputs_to_check)


# --- slow and fast gradcheck -------------------------------------------------------------------


def _transpose(matrix_of_tensors):
    return list(zip(*matrix_of_tensors))


def _slow_gradcheck(
    func,
    func_out,
    tupled_inputs,
    outputs,
    eps,
    rtol,
    atol,
    check_grad_dtypes,
    nondet_tol,
    *,
    use_forward_ad=False,
    complex_indices=None,
    test_imag=False,
    masked=False,
):
    func_out = _as_tuple(func_out)
    if not outputs:
        return _check_no_differentiable_outputs(func, tupled_inputs, func_out, eps=eps)
    numerical = _transpose(_get_numerical_jacobian(func, tupled_inputs, func_out, eps=eps))
    # the numerical path has Jacobians for every output, the analytical one only for
    # differentiable outputs (torch's Note [numerical vs analytical output length])
    numerical = [nj for o, nj in zip(func_out, numerical) if o.requires_grad]
    if use_forward_ad:
        analytical_forward = _get_analytical_jacobian_forward_ad(
            func, tupled_inputs, func_out, check_grad_dtypes=check_grad_dtypes
        )
        for i, n_per_out in enumerate(numerical):
            for j, n in enumerate(n_per_out):
                a = analytical_forward[j][i]
                if not _allclose_with_type_promotion(a, n.to(a.device), rtol, atol):
                    raise GradcheckError(
                        _get_notallclose_msg(a, n, i, j, complex_indices, test_imag, True)
                    )
        return True
    for i, o in enumerate(outputs):
        analytical = _check_analytical_jacobian_attributes(
            tupled_inputs, o, nondet_tol, check_grad_dtypes
        )
        for j, (a, n) in enumerate(zip(analytical, numerical[i])):
            if not _allclose_with_type_promotion(a, n.to(a.device), rtol, atol):
                raise GradcheckError(_get_notallclose_msg(a, n, i, j, complex_indices, test_imag))
    return True


def _vec_from_tensor(x, generator, downcast_complex=False):
    """A random unit vector with ``x.numel()`` elements (torch's stream, so torch's values)."""
    lg = _lg()
    dtype = _to_real_dtype(x.dtype) if downcast_complex else x.dtype
    vec = lg.rand(x.numel(), generator=generator).to(dtype=dtype, device=x.device)
    vec /= vec.norm()
    return vec


def _to_real_dtype(dtype):
    lg = _lg()
    if dtype == lg.complex128:
        return lg.float64
    if dtype == lg.complex64:
        return lg.float32
    return dtype


def _get_inp_tensors(tupled_inputs):
    inp_idx_tup = [(i, t) for i, t in enumerate(tupled_inputs) if _is_tensor(t) and t.requires_grad]
    return [tup[0] for tup in inp_idx_tup], [tup[1] for tup in inp_idx_tup]


def _make_vectors(inp_tensors, outputs, use_forward_ad=False):
    g_cpu = _lg().Generator()  # its own generator: the user's RNG state is left alone
    all_u = []
    for inp in inp_tensors:
        ur = _vec_from_tensor(inp, g_cpu, True)
        if inp.is_complex():
            ui = _vec_from_tensor(inp, g_cpu, True)
            all_u.append((ur, ui))
        else:
            all_u.append(ur)
    all_v = None if use_forward_ad else [_vec_from_tensor(out, g_cpu) for out in outputs]
    return all_v, all_u, list(all_u)


def _adjusted_atol(atol, u, v):
    """atol scaled by ``v^T M u`` (M all ones): the tolerance of ``v^T J u``."""
    sum_v = 1.0 if v is None else v.sum()
    if isinstance(u, tuple):
        ur, ui = u
        return atol * (float(ur.sum()) + float(ui.sum())) * float(sum_v)
    return atol * float(u.sum()) * float(sum_v)


def _get_numerical_jvp_wrt_specific_input(fn, input_idx, inputs, u, eps):
    input = inputs[input_idx]
    input_to_perturb = input.data
    wrapped_fn = _with_prepare_inputs(fn, inputs)
    nbhd_checks_fn = functools.partial(_check_outputs_same_dtype_and_shape, eps=eps)
    jvp_fn = _get_numerical_jvp_fn(wrapped_fn, input_to_perturb, eps, nbhd_checks_fn)
    if isinstance(u, tuple):
        u = (u[0].reshape(input_to_perturb.shape), u[1].reshape(input_to_perturb.shape))
        u = (eps * u[0], eps * u[1])
    else:
        u = eps * u.reshape(input_to_perturb.shape)
    return _compute_numerical_jvps_wrt_specific_input(jvp_fn, u, input.is_complex())


def _get_numerical_vJu(fn, inputs, inp_indices, func_out, all_u, all_v, eps):
    reduced_jacobians = []
    for inp_idx, u in zip(inp_indices, all_u):
        all_Ju = _get_numerical_jvp_wrt_specific_input(fn, inp_idx, inputs, u, eps)
        func_out = _as_tuple(func_out)
        if len(all_Ju) != len(func_out):
            raise AssertionError(
                f"Expected all_Ju and func_out to have the same length, "
                f"but got {len(all_Ju)} and {len(func_out)}"
            )
        filtered_Ju = [Ju for Ju, o in zip(all_Ju, func_out) if _is_float_or_complex_tensor(o)]
        if all_v is not None:
            reduced_jacobians.append([(v * Ju).sum() for v, Ju in zip(all_v, filtered_Ju)])
        else:
            reduced_jacobians.append(filtered_Ju)
    return reduced_jacobians


def _get_analytical_vJu_backward_mode(inputs, outputs, nondet_tol, check_grad_dtypes, all_v, all_u):
    reduced_jacobians = []
    for output, v in zip(outputs, all_v):
        all_vJ = _check_analytical_jacobian_attributes(
            inputs, output, nondet_tol, check_grad_dtypes, fast_mode=True, v=v
        )
        jacobian_scalars = []
        for vJ, u in zip(all_vJ, all_u):
            vJ = vJ.T.squeeze(0)
            if vJ.is_complex():
                raise NotImplementedError(
                    "leafgrad: gradcheck(fast_mode=True) of complex inputs needs view_as_real"
                )
            jacobian_scalars.append(vJ.dot(u))
        reduced_jacobians.append(jacobian_scalars)
    return reduced_jacobians


def _run_slow_mode_and_get_error(
    func, tupled_inputs, outputs, input_idx, output_idx, rtol, atol, eps, is_forward_ad=False
):
    lg = _lg()
    slow_numerical = _get_numerical_jacobian(func, tupled_inputs, outputs, eps=eps)[input_idx][
        output_idx
    ]
    if is_forward_ad:

        def new_fn(inp):
            # the other inputs detached: their tangents are not asked for, and leafgrad refuses
            # tangents that may require grad (Note [Forward AD])
            new_inputs = [t.detach() if _is_tensor(t) else t for t in tupled_inputs]
            new_inputs[input_idx] = inp
            return _as_tuple(func(*new_inputs))[output_idx]

        slow_analytical = _get_analytical_jacobian_forward_ad(
            new_fn, (tupled_inputs[input_idx],), (outputs[output_idx],)
        )[0][0]
    else:
        slow_analytical = _get_analytical_jacobian(tupled_inputs, outputs, input_idx, output_idx)
    slow_max_diff = (slow_numerical - slow_analytical).abs().max()
    slow_allclose = lg.allclose(slow_analytical, slow_numerical, rtol, atol)
    msg = (
        "\nThe above quantities relating the numerical and analytical jacobians are computed \n"
        "in fast mode. See: https://github.com/pytorch/pytorch/issues/53876 for more background \n"
        "about fast mode. Below, we recompute numerical and analytical jacobians in slow mode:\n\n"
        f"Numerical:\n {slow_numerical}\n"
        f"Analytical:\n{slow_analytical}\n\n"
        f"The max per-element difference (slow mode) is: {slow_max_diff}.\n"
    )
    if slow_allclose:
        msg += FAST_FAIL_SLOW_OK_MSG
    return msg


def _check_analytical_numerical_equal(
    all_analytical,
    all_numerical,
    complex_indices,
    tupled_inputs,
    outputs,
    func,
    all_v,
    all_u,
    rtol,
    atol,
    eps,
    test_imag,
    is_forward_ad=False,
):
    for i, all_numerical_for_input_i in enumerate(all_numerical):
        for j, n in enumerate(all_numerical_for_input_i):
            # forward AD gives the transpose of what the backward path gives
            a = all_analytical[i][j] if is_forward_ad else all_analytical[j][i]
            n = n.to(device=a.device)
            updated_atol = _adjusted_atol(atol, all_u[i], all_v[j] if all_v else None)
            if not _allclose_with_type_promotion(a, n.to(a.device), rtol, updated_atol):
                jacobians_str = _run_slow_mode_and_get_error(
                    func, tupled_inputs, outputs, i, j, rtol, atol, eps, is_forward_ad
                )
                raise GradcheckError(
                    _get_notallclose_msg(a, n, j, i, complex_indices, test_imag, is_forward_ad)
                    + jacobians_str
                )


def _fast_gradcheck(
    func,
    func_out,
    inputs,
    outputs,
    eps,
    rtol,
    atol,
    check_grad_dtypes,
    nondet_tol,
    *,
    use_forward_ad=False,
    complex_indices=None,
    test_imag=False,
    masked=False,
):
    # see https://github.com/pytorch/pytorch/issues/53876: compare v^T (J u) from finite
    # differences with (v^T J) u from autograd, for random unit vectors u and v (forward AD:
    # J u from finite differences with J u from dual tensors)
    inp_tensors_idx, inp_tensors = _get_inp_tensors(inputs)
    all_v, all_u, all_u_dense = _make_vectors(inp_tensors, outputs, use_forward_ad)
    numerical_vJu = _get_numerical_vJu(func, inputs, inp_tensors_idx, func_out, all_u, all_v, eps)
    if use_forward_ad:
        analytical_vJu = _get_analytical_jacobian_forward_ad(
            func, inputs, _as_tuple(func_out), all_u=all_u, check_grad_dtypes=check_grad_dtypes
        )
    else:
        if not outputs:
            _check_no_differentiable_outputs_fast(
                func, func_out, inputs, inp_tensors_idx, all_u, eps, nondet_tol
            )
        analytical_vJu = _get_analytical_vJu_backward_mode(
            inputs, outputs, nondet_tol, check_grad_dtypes, all_v, all_u_dense
        )
    _check_analytical_numerical_equal(
        analytical_vJu,
        numerical_vJu,
        complex_indices,
        inputs,
        outputs,
        func,
        all_v,
        all_u,
        rtol,
        atol,
        eps,
        test_imag,
        use_forward_ad,
    )
    return True


def _allocate_jacobians_with_outputs(output_tensors, numel_input):
    """A zero ``(numel_input, t.numel())`` tensor per floating or complex output."""
    return tuple(
        t.new_zeros((numel_input, t.numel()))
        for t in output_tensors
        if _is_float_or_complex_tensor(t)
    )


def _get_analytical_jacobian_forward_ad(
    fn, inputs, outputs, *, check_grad_dtypes=False, all_u=None
):
    """The Jacobians of ``fn`` from forward AD, column by column with one-hot tangents (or, with
    ``all_u``, ``J u`` for each input's vector), as PyTorch's: N x M for N inputs that require
    grad and M floating outputs."""
    lg = _lg()
    fwAD = lg.autograd.forward_ad
    tensor_inputs = tuple(i for i in inputs if _is_tensor(i) and i.requires_grad)
    if any(i.is_complex() for i in tensor_inputs):
        raise ValueError(
            "Expected inputs to be non-complex for _get_analytical_jacobian_forward_ad."
        )
    if all_u:
        jacobians = tuple(_allocate_jacobians_with_outputs(outputs, 1) for i in tensor_inputs)
    else:
        jacobians = tuple(
            _allocate_jacobians_with_outputs(outputs, i.numel()) for i in tensor_inputs
        )
    with fwAD.dual_level():
        fw_grads = []
        dual_inputs = []
        for inp in inputs:
            if _is_tensor(inp) and inp.requires_grad:
                inp = fwAD.make_dual(inp.detach(), lg.zeros_like(inp))
                fw_grads.append(fwAD.unpack_dual(inp)[1])
            dual_inputs.append(inp)

        def read(index_o, d_o, target):
            val, res = fwAD.unpack_dual(d_o)
            if check_grad_dtypes and res is not None and val.is_complex() != res.is_complex():
                raise GradcheckError("Forward AD gradient has dtype mismatch.")
            if res is None:
                target.zero_()
            else:
                target.copy_(res.reshape(-1))

        if all_u:
            for i, (fw_grad, u) in enumerate(zip(fw_grads, all_u)):
                fw_grad.copy_(u.view_as(fw_grad))
                raw_outputs = _as_tuple(fn(*dual_inputs))
                dual_outputs = filter(_is_float_or_complex_tensor, raw_outputs)
                for index_o, d_o in enumerate(dual_outputs):
                    jacobians[i][index_o].squeeze_(0)
                    read(index_o, d_o, jacobians[i][index_o])
                fw_grad.zero_()
        else:
            for i, fw_grad in enumerate(fw_grads):
                for lin_idx, grad_idx in enumerate(product(*[range(m) for m in fw_grad.size()])):
                    fw_grad[grad_idx] = 1.0
                    raw_outputs = _as_tuple(fn(*dual_inputs))
                    dual_outputs = filter(_is_float_or_complex_tensor, raw_outputs)
                    for index_o, d_o in enumerate(dual_outputs):
                        read(index_o, d_o, jacobians[i][index_o][lin_idx])
                    fw_grad[grad_idx] = 0.0
    return jacobians


def _test_undefined_forward_mode(func, outputs, inputs) -> bool:
    """An input's tangent left undefined (a plain tensor) gives the tangents a zero tangent
    gives."""
    lg = _lg()
    fwAD = lg.autograd.forward_ad
    _, inp_tensors = _get_inp_tensors(inputs)
    _, all_u, _ = _make_vectors(inp_tensors, outputs, use_forward_ad=True)
    with fwAD.dual_level():
        fw_grads = []
        dual_inputs = []
        tensor_indices = set()
        for i, inp in enumerate(inputs):
            if _is_tensor(inp) and inp.requires_grad:
                inp = fwAD.make_dual(inp.detach(), lg.zeros_like(inp))
                fw_grads.append(fwAD.unpack_dual(inp)[1])
                tensor_indices.add(i)
            dual_inputs.append(inp)
        for fw_grad, u in zip(fw_grads, all_u):
            fw_grad.copy_(u.view_as(fw_grad))
        for idx, inp in enumerate(inputs):
            if idx not in tensor_indices:
                continue
            dual_inp_obj = dual_inputs[idx]
            dual_inputs[idx] = fwAD.make_dual(inp.detach(), lg.zeros_like(inp))
            dual_outputs1 = filter(_is_float_or_complex_tensor, _as_tuple(func(*dual_inputs)))
            dual_inputs[idx] = inp.detach()
            dual_outputs2 = filter(_is_float_or_complex_tensor, _as_tuple(func(*dual_inputs)))
            dual_inputs[idx] = dual_inp_obj
            for index_o, (d_o1, d_o2) in enumerate(zip(dual_outputs1, dual_outputs2)):
                _, res1 = fwAD.unpack_dual(d_o1)
                _, res2 = fwAD.unpack_dual(d_o2)
                if not (res1 is None or res2 is None) and not lg.allclose(res1, res2):
                    raise GradcheckError(
                        "Mismatch in tangent values for output with index: ",
                        index_o,
                        " when input: ",
                        inp,
                        " has an undefined tangent value. ",
                        " Got: ",
                        res1,
                        " but expected: ",
                        res2,
                    )
    return True


def _real_and_imag_output(fn):
    lg = _lg()
    if not hasattr(lg, "real"):
        raise NotImplementedError("leafgrad: gradcheck of complex outputs needs real and imag")

    def apply_to_c_outs(fn, fn_to_apply):
        def wrapped_fn(*inputs):
            outs = _as_tuple(fn(*inputs))
            return tuple(fn_to_apply(o) if o.is_complex() else o for o in outs)

        return wrapped_fn

    return apply_to_c_outs(fn, lg.real), apply_to_c_outs(fn, lg.imag)


def _gradcheck_real_imag(
    gradcheck_fn,
    func,
    func_out,
    tupled_inputs,
    outputs,
    eps,
    rtol,
    atol,
    check_grad_dtypes,
    check_backward_ad,
    nondet_tol,
):
    complex_out_indices = [i for i, o in enumerate(outputs) if o.is_complex()]
    has_any_complex_output = any(o.is_complex() for o in _as_tuple(func_out))
    if not check_backward_ad:
        return
    if has_any_complex_output:
        real_fn, imag_fn = _real_and_imag_output(func)
        imag_func_out = imag_fn(*tupled_inputs)
        imag_outputs = _differentiable_outputs(imag_func_out)
        gradcheck_fn(
            imag_fn,
            imag_func_out,
            tupled_inputs,
            imag_outputs,
            eps,
            rtol,
            atol,
            check_grad_dtypes,
            nondet_tol,
            complex_indices=complex_out_indices,
            test_imag=True,
        )
        real_func_out = real_fn(*tupled_inputs)
        real_outputs = _differentiable_outputs(real_func_out)
        gradcheck_fn(
            real_fn,
            real_func_out,
            tupled_inputs,
            real_outputs,
            eps,
            rtol,
            atol,
            check_grad_dtypes,
            nondet_tol,
            complex_indices=complex_out_indices,
        )
    else:
        gradcheck_fn(
            func, func_out, tupled_inputs, outputs, eps, rtol, atol, check_grad_dtypes, nondet_tol
        )


def gradcheck(
    func,
    inputs,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
    nondet_tol: float = 0.0,
    check_undefined_grad: bool = True,
    check_grad_dtypes: bool = False,
    check_batched_grad: bool = False,
    check_batched_forward_grad: bool = False,
    check_forward_ad: bool = False,
    check_backward_ad: bool = True,
    fast_mode: bool = False,
    masked: bool | None = None,
) -> bool:
    """Check the analytical gradients of ``func`` at ``inputs`` (the tensors that require grad)
    against finite differences, with ``allclose(analytical, numerical, rtol, atol)``.

    Returns True, or raises ``GradcheckError`` (returns False with ``raise_exception=False``).

    Example::

        >>> x = leafgrad.rand(3, dtype=leafgrad.float64, requires_grad=True)
        >>> leafgrad.autograd.gradcheck(lambda x: (x * x).sum(), (x,))
        True
    """
    if not (check_forward_ad or check_backward_ad):
        raise AssertionError(
            "Expected at least one of check_forward_ad or check_backward_ad to be True"
        )
    if check_batched_grad and not check_backward_ad:
        raise AssertionError(
            "Setting check_batched_grad=True requires check_backward_ad to be True"
        )
    if check_batched_forward_grad and not check_forward_ad:
        raise AssertionError(
            "Setting check_batched_forward_grad=True requires check_forward_ad to be True"
        )
    args = dict(
        func=func,
        inputs=inputs,
        eps=eps,
        atol=atol,
        rtol=rtol,
        nondet_tol=nondet_tol,
        check_undefined_grad=check_undefined_grad,
        check_grad_dtypes=check_grad_dtypes,
        check_batched_grad=check_batched_grad,
        check_batched_forward_grad=check_batched_forward_grad,
        check_forward_ad=check_forward_ad,
        check_backward_ad=check_backward_ad,
        fast_mode=fast_mode,
        masked=masked,
    )
    if not raise_exception:
        try:
            return _gradcheck_helper(**args)
        except GradcheckError:
            return False
    return _gradcheck_helper(**args)


def _gradcheck_helper(
    func,
    inputs,
    eps,
    atol,
    rtol,
    nondet_tol,
    check_undefined_grad,
    check_grad_dtypes,
    check_batched_grad,
    check_batched_forward_grad,
    check_forward_ad,
    check_backward_ad,
    fast_mode,
    masked,
):
    tupled_inputs = _as_tuple(inputs)
    _check_inputs(tupled_inputs)
    func_out = func(*tupled_inputs)
    outputs = _differentiable_outputs(func_out)
    gradcheck_fn = functools.partial(
        _fast_gradcheck if fast_mode else _slow_gradcheck, masked=masked
    )
    _gradcheck_real_imag(
        gradcheck_fn,
        func,
        func_out,
        tupled_inputs,
        outputs,
        eps,
        rtol,
        atol,
        check_grad_dtypes,
        check_backward_ad,
        nondet_tol,
    )
    if check_forward_ad:
        if any(_is_tensor(i) and i.is_complex() for i in tupled_inputs):
            raise NotImplementedError(
                "leafgrad: gradcheck(check_forward_ad=True) of complex inputs needs real and imag"
            )
        gradcheck_fn(
            func,
            func_out,
            tupled_inputs,
            outputs,
            eps,
            rtol,
            atol,
            check_grad_dtypes,
            nondet_tol,
            use_forward_ad=True,
        )
        if check_undefined_grad:
            _test_undefined_forward_mode(func, outputs, tupled_inputs)
    if check_batched_forward_grad:
        raise NotImplementedError(
            NOT_SUPPORTED.format("gradcheck", "check_batched_forward_grad", "vmap")
        )
    if not check_backward_ad:
        return True
    if check_batched_grad and outputs:
        raise NotImplementedError(NOT_SUPPORTED.format("gradcheck", "check_batched_grad", "vmap"))
    _test_backward_mul_by_grad_output(outputs, tupled_inputs, masked)
    if check_undefined_grad and check_backward_ad:
        _test_undefined_backward_mode(func, outputs, tupled_inputs)
    return True


def _make_grad_output(x, noncontiguous: bool):
    """torch.testing.make_tensor(x.shape, low=-1, high=1, requires_grad=True): uniform values
    from the global generator, drawn as torch draws them."""
    lg = _lg()
    dtype = x.dtype if x.is_floating_point() or x.is_complex() else lg.float64
    shape = tuple(x.shape)
    numel = 1
    for s in shape:
        numel *= s
    noncontiguous = noncontiguous and numel > 1
    if noncontiguous:
        shape = shape[:-1] + (2 * shape[-1],)
    if dtype.is_complex:
        raise NotImplementedError("leafgrad: random complex grad_outputs need view_as_real")
    result = lg.empty(shape, dtype=dtype, device=x.device).uniform_(-1, 1)
    if noncontiguous:
        result = result[..., 1::2]
    return result.requires_grad_(True)


def gradgradcheck(
    func,
    inputs,
    grad_outputs=None,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    gen_non_contig_grad_outputs: bool = False,
    raise_exception: bool = True,
    nondet_tol: float = 0.0,
    check_undefined_grad: bool = True,
    check_grad_dtypes: bool = False,
    check_batched_grad: bool = False,
    check_fwd_over_rev: bool = False,
    check_rev_over_rev: bool = True,
    fast_mode: bool = False,
    masked: bool = False,
) -> bool:
    """``gradcheck`` of the gradients of ``func`` (computed with ``create_graph=True``) with
    respect to ``inputs`` and ``grad_outputs`` (random in [-1, 1) when not given)."""
    if not (check_fwd_over_rev or check_rev_over_rev):
        raise AssertionError(
            "Expected at least one of check_fwd_over_rev or check_rev_over_rev to be True"
        )
    if check_undefined_grad and not check_rev_over_rev:
        raise AssertionError(
            "Setting check_undefined_grad=True requires check_rev_over_rev to be True"
        )
    if check_batched_grad and not check_rev_over_rev:
        raise AssertionError(
            "Setting check_batched_grad=True requires check_rev_over_rev to be True"
        )
    lg = _lg()
    tupled_inputs = _as_tuple(inputs)
    if grad_outputs is None:
        outputs = _differentiable_outputs(func(*tupled_inputs))
        tupled_grad_outputs = tuple(
            _make_grad_output(x, gen_non_contig_grad_outputs) for x in outputs
        )
    else:
        tupled_grad_outputs = _as_tuple(grad_outputs)
    num_outputs = len(tupled_grad_outputs)
    diff_input_args_indices = {
        i for i, x in enumerate(tupled_inputs) if _is_tensor(x) and x.requires_grad
    }
    diff_grad_output_indices = {i for i, x in enumerate(tupled_grad_outputs) if x.requires_grad}

    def new_func(*args):
        input_args = tuple(
            x.requires_grad_() if i in diff_input_args_indices else x
            for i, x in enumerate(args[:-num_outputs])
        )
        outputs = _differentiable_outputs(func(*input_args))
        grad_outputs = tuple(
            x.requires_grad_() if i in diff_grad_output_indices else x
            for i, x in enumerate(args[-num_outputs:])
        )
        diff_input_args = tuple(x for i, x in enumerate(input_args) if i in diff_input_args_indices)
        grad_inputs = lg.autograd.grad(
            outputs, diff_input_args, grad_outputs, create_graph=True, allow_unused=True
        )
        return tuple(g for g in grad_inputs if g is not None)

    return gradcheck(
        new_func,
        tupled_inputs + tupled_grad_outputs,
        eps=eps,
        atol=atol,
        rtol=rtol,
        raise_exception=raise_exception,
        nondet_tol=nondet_tol,
        check_undefined_grad=check_undefined_grad,
        check_grad_dtypes=check_grad_dtypes,
        check_batched_grad=check_batched_grad,
        fast_mode=fast_mode,
        check_forward_ad=check_fwd_over_rev,
        check_backward_ad=check_rev_over_rev,
        masked=masked,
    )
