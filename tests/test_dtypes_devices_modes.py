"""Differential tests of dtypes (promotion, defaults), devices (incl. virtual cuda), grad modes."""

from __future__ import annotations

import pickle
import threading

import jax
import pytest
import torch
from conftest import DTYPE_NAMES, Raised, both, call, dt, lg, same_error, same_tensor

# --- promote_types, can_cast, result_type ------------------------------------------------------


@pytest.mark.parametrize("a", DTYPE_NAMES)
def test_promote_types(a):
    for b in DTYPE_NAMES:
        both(lambda m: m.promote_types(dt(m, a), dt(m, b)))  # noqa: B023


@pytest.mark.parametrize("a", DTYPE_NAMES)
def test_can_cast(a):
    for b in DTYPE_NAMES:
        both(lambda m: m.can_cast(dt(m, a), dt(m, b)))  # noqa: B023


SCALARS = {"bool": True, "int": 2, "float": 2.5, "complex": 1 + 1j}


def operand(m, kind, name):
    """A tensor of dtype ``name`` with dim > 0 ("dim") or 0-d ("0d"), or a Python scalar."""
    if kind == "dim":
        return m.full((3,), 2, dtype=dt(m, name)) if name != "bool" else m.ones(3, dtype=m.bool)
    if kind == "0d":
        return m.tensor(2 if name != "bool" else True, dtype=dt(m, name))
    return SCALARS[name]


KIND_PAIRS = [
    ("dim", "dim"),
    ("dim", "0d"),
    ("0d", "dim"),
    ("0d", "0d"),
    ("dim", "scalar"),
    ("scalar", "dim"),
    ("0d", "scalar"),
    ("scalar", "0d"),
]


def names_for(kind):
    return list(SCALARS) if kind == "scalar" else DTYPE_NAMES


def complex32(fn) -> bool:
    """Whether torch's answer is complex32 (ComplexHalf), a dtype leafgrad does not have (or
    torch's error for a kernel that lacks it)."""
    t = call(fn, torch)[0]
    if isinstance(t, Raised):
        return "ComplexHalf" in t.text
    return getattr(t, "dtype", t) == torch.complex32


@pytest.mark.parametrize("kinds", KIND_PAIRS, ids=lambda k: f"{k[0]}-{k[1]}")
def test_result_type(kinds):
    ka, kb = kinds
    for a in names_for(ka):
        for b in names_for(kb):

            def f(m):
                return m.result_type(operand(m, ka, a), operand(m, kb, b))  # noqa: B023

            if not complex32(f):
                both(f)


OPS = {
    "add": lambda x, y: x + y,
    "sub": lambda x, y: x - y,
    "mul": lambda x, y: x * y,
    "div": lambda x, y: x / y,
    "pow": lambda x, y: x**y,
}


@pytest.mark.parametrize("kinds", KIND_PAIRS, ids=lambda k: f"{k[0]}-{k[1]}")
@pytest.mark.parametrize("op", list(OPS))
def test_result_dtypes_of_arithmetic(op, kinds):
    """Every pair of the 12 dtypes (and Python scalars): same dtype, value, or error text."""
    ka, kb = kinds
    failures = []
    with jax.disable_jit():  # thousands of tiny dtype combinations: don't compile each one
        for a in names_for(ka):
            for b in names_for(kb):

                def f(m):
                    return OPS[op](operand(m, ka, a), operand(m, kb, b))  # noqa: B023

                if complex32(f):
                    continue
                try:
                    t, g = both(f, compare=False)
                    if not isinstance(t, Raised):
                        same_tensor(t, g, autograd=False)
                except AssertionError as e:
                    failures.append(f"{a} {op} {b}: {str(e).strip().splitlines()[0][:200]}")
    assert not failures, f"{len(failures)} mismatches:\n" + "\n".join(failures)


@pytest.mark.parametrize("op", list(OPS))
def test_result_dtypes_jitted_sample(op):
    """A few combinations without disabling jit (the path users take)."""
    for a, b in [
        ("int64", "float32"),
        ("uint8", "int8"),
        ("float16", "bfloat16"),
        ("int32", "complex64"),
        ("bool", "float64"),
    ]:
        both(lambda m: OPS[op](operand(m, "dim", a), operand(m, "0d", b)))  # noqa: B023
        both(lambda m: OPS[op](operand(m, "dim", a), 2.5))  # noqa: B023


# --- default dtype -----------------------------------------------------------------------------

DEFAULT_EFFECTS = {
    "tensor_float": lambda m: m.tensor([1.5]),
    "tensor_int": lambda m: m.tensor([1]),
    "tensor_complex": lambda m: m.tensor([1j]),
    "zeros": lambda m: m.zeros(2),
    "ones_int_size": lambda m: m.ones(2, 1),
    "full_float": lambda m: m.full((2,), 1.5),
    "full_int": lambda m: m.full((2,), 1),
    "full_bool": lambda m: m.full((2,), True),
    "arange_int": lambda m: m.arange(3),
    "arange_float": lambda m: m.arange(0.5, 2),
    "linspace": lambda m: m.linspace(0, 1, 3),
    "eye": lambda m: m.eye(2),
    "int_div": lambda m: m.tensor([1, 2]) / 2,
    "int_times_float": lambda m: m.tensor([1, 2]) * 1.5,
    "int_pow_float": lambda m: m.tensor([1, 2]) ** 0.5,
    "f32_times_float": lambda m: m.tensor([1.0], dtype=m.float32) * 1.5,
    "f16_plus_complex": lambda m: m.tensor([1.0], dtype=m.float16) + 1j,
    "int_plus_complex": lambda m: m.tensor([1]) + 1j,
    "mean_int": lambda m: m.tensor([1, 2]).mean(),
    "exp_int": lambda m: m.tensor([1, 2]).exp(),
    "result_type": lambda m: m.result_type(m.tensor([1]), 1.0),
    "get_default": lambda m: m.get_default_dtype(),
}


@pytest.mark.parametrize("default", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("name", list(DEFAULT_EFFECTS))
def test_default_dtype_effects(name, default):
    def f(m):
        m.set_default_dtype(dt(m, default))
        return DEFAULT_EFFECTS[name](m)

    if complex32(f):
        pytest.skip("torch's answer is complex32, a dtype leafgrad does not have")
    both(f)


@pytest.mark.parametrize("value", ["int64", "int32", "bool", "complex64", "complex128", "uint8"])
def test_set_default_dtype_rejects(value):
    both(lambda m: m.set_default_dtype(dt(m, value)))


def test_set_default_dtype_python_float():
    both(lambda m: (m.set_default_dtype(float), m.get_default_dtype())[1])


def test_get_default_dtype_identity():
    def f(m):
        m.set_default_dtype(m.float64)
        return m.get_default_dtype() is m.float64, m.get_default_dtype() is m.double

    both(f)


# --- dtype objects -------------------------------------------------------------------------------

ALIASES = ["float", "double", "half", "short", "int", "long", "cfloat", "cdouble", "bool"]
ALIAS_OF = {
    "float": "float32",
    "double": "float64",
    "half": "float16",
    "short": "int16",
    "int": "int32",
    "long": "int64",
    "cfloat": "complex64",
    "cdouble": "complex128",
    "bool": "bool",
}


@pytest.mark.parametrize("alias", ALIASES)
def test_dtype_aliases(alias):
    both(lambda m: (getattr(m, alias) is getattr(m, ALIAS_OF[alias]), repr(getattr(m, alias))))


@pytest.mark.parametrize("name", DTYPE_NAMES)
def test_dtype_properties(name):
    def f(m):
        d = dt(m, name)
        return (
            repr(d),
            str(d),
            d.is_floating_point,
            d.is_complex,
            d.is_signed,
            d.itemsize,
            pickle.loads(pickle.dumps(d)) is d,
            d == dt(m, name),
            hash(d) == hash(dt(m, name)),
            isinstance(d, m.dtype),
        )

    both(f)


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(n, marks=pytest.mark.skip(reason="leafgrad has no complex32 (chalf)"))
        if n == "float16"
        else n
        for n in DTYPE_NAMES
    ],
)
def test_dtype_to_real_complex(name):
    both(lambda m: (dt(m, name).to_real(), dt(m, name).to_complex()))


@pytest.mark.parametrize("name", DTYPE_NAMES)
def test_tensor_type_names(name):
    both(lambda m: (m.zeros(1, dtype=dt(m, name)).type(), m.zeros(1, dtype=dt(m, name)).dtype))


# --- devices -------------------------------------------------------------------------------------

DEVICE_ARGS = [
    ("cpu",),
    ("cuda",),
    ("cuda:0",),
    ("cuda:1",),
    ("cpu:0",),
    ("cuda", 0),
    ("cuda", 3),
    ("cpu", 0),
    ("meta",),
    ("mps",),
    ("xla",),
    ("tpu",),
    ("gpu",),
    ("cuda:-1",),
    ("cuda:x",),
    ("cuda:0:0",),
    ("CUDA",),
    (" cpu",),
    ("cuda:0", 1),
    ("cuda", -1),
    ("cuda", -2),
    ("",),
    (True,),
    (1.0,),
    (None,),
    ("cuda:01",),
    ("cpu:",),
]


@pytest.mark.parametrize("args", DEVICE_ARGS, ids=repr)
def test_device_parsing(args):
    def f(m):
        d = m.device(*args)
        return (
            repr(d),
            str(d),
            d.type,
            d.index,
            d == m.device(*args),
            hash(d) == hash(m.device(*args)),
        )

    both(f)


@pytest.mark.parametrize(
    "a,b",
    [
        ("cpu", "cpu"),
        ("cuda", "cuda:0"),
        ("cuda:0", "cuda:0"),
        ("cuda:0", "cuda:1"),
        ("cpu", "cuda"),
    ],
)
def test_device_equality(a, b):
    both(lambda m: (m.device(a) == m.device(b), m.device(a) != m.device(b)))


def test_device_compared_with_string():
    both(lambda m: (m.device("cpu") == "cpu", m.device("cuda:0") == "cuda:0"))


def test_tensor_device_of_cpu_tensor():
    def f(m):
        x = m.zeros(2)
        return x.device, repr(x.device), x.is_cuda, x.is_cpu, x.get_device(), x.device == "cpu"

    both(f)


# --- virtual cuda: facts of PyTorch's documentation and the seed transcript ---------------------
# torch cannot run cuda here, so these assert the documented leaf facts against leafgrad.


def test_virtual_cuda_is_available():
    assert lg.cuda.is_available()
    assert lg.cuda.device_count() >= 1


def test_cuda_copy_of_requires_grad_leaf_is_non_leaf():
    a = lg.rand(10, requires_grad=True)
    b = a.cuda()
    assert not b.is_leaf and b.requires_grad
    assert type(b.grad_fn).__name__ == "ToCopyBackward0"
    ((acc, nr),) = b.grad_fn.next_functions
    assert type(acc).__name__ == "AccumulateGrad" and acc.variable is a and nr == 0
    assert b.device == lg.device("cuda", 0) and str(b.device) == "cuda:0"
    assert a.device == lg.device("cpu")


def test_grads_flow_back_to_cpu_leaf():
    x = lg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    tx = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = (x.cuda() * x.cuda()).sum()
    ty = (tx * tx).sum()  # the same math on cpu: the gradient of the cpu leaf does not change
    assert y.device.type == "cuda"
    y.backward()
    ty.backward()
    assert x.grad is not None and x.grad.device == lg.device("cpu")
    same_tensor(tx.grad, x.grad)
    y2 = (x.to("cuda") * 2).sum()
    y2.backward()
    assert x.grad.device.type == "cpu"


def test_cuda_copy_back_to_cpu_records_node():
    x = lg.tensor([1.0, 2.0], requires_grad=True)
    y = x.cuda().cpu()
    assert type(y.grad_fn).__name__ == "ToCopyBackward0"
    assert type(y.grad_fn.next_functions[0][0]).__name__ == "ToCopyBackward0"
    y.sum().backward()
    assert x.grad.tolist() == [1.0, 1.0]


def test_cuda_of_tensor_not_requiring_grad_is_leaf():
    d = lg.rand(10).cuda()
    assert d.is_leaf and not d.requires_grad and d.grad_fn is None
    assert d.is_cuda


def test_requires_grad__on_cuda_copy_is_leaf():
    e = lg.rand(10).cuda().requires_grad_()
    assert e.is_leaf and e.requires_grad and e.device.type == "cuda"
    (e * 2).sum().backward()
    assert e.grad.device == e.device


def test_factory_on_cuda_is_leaf():
    f = lg.rand(10, requires_grad=True, device="cuda")
    assert f.is_leaf and f.requires_grad and f.grad_fn is None
    assert str(f.device) == "cuda:0"
    g = lg.zeros(2, device=lg.device("cuda"), requires_grad=True)
    assert g.is_leaf and repr(g.device) == "device(type='cuda', index=0)"


def test_cuda_result_of_op_without_grad_is_leaf():
    c = lg.rand(10).cuda() + 2
    assert c.is_leaf
    c2 = lg.rand(10, requires_grad=True) + 2
    assert not c2.is_leaf


MIXED = "Expected all tensors to be on the same device, but found at least two devices, "


@pytest.mark.parametrize("order", ["cuda_cpu", "cpu_cuda"])
@pytest.mark.parametrize("op", list(OPS) + ["matmul", "dot"])
def test_mixing_devices_raises(op, order):
    """PyTorch's TensorIterator names the common (non-cpu) device first: 'cuda:0 and cpu!'.
    Its mm/dot kernels append which argument they checked, so only the start is fixed there."""
    x = lg.tensor([1.0, 2.0, 3.0]).cuda()
    c = lg.tensor([1.0, 2.0, 3.0])
    a, b = (x, c) if order == "cuda_cpu" else (c, x)
    fn = OPS.get(op) or (lambda p, q: getattr(p, op)(q))
    got, _ = call(lambda m: fn(a, b), lg)
    assert isinstance(got, Raised), "mixing cpu and cuda tensors did not raise"
    assert got.type is RuntimeError
    if op in OPS and order == "cuda_cpu":
        same_error(Raised(RuntimeError(MIXED + "cuda:0 and cpu!")), got)
    else:
        assert got.text.startswith(MIXED), got.text


@pytest.mark.parametrize("op", list(OPS))
def test_zero_dim_cpu_tensor_mixes_with_cuda(op):
    x = lg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    s = lg.tensor(2.0, requires_grad=True)
    for a, b in [(x.cuda(), s), (s, x.cuda())]:
        y = OPS[op](a, b)
        assert y.device == lg.device("cuda", 0)
        y.sum().backward()
    assert s.grad.device.type == "cpu" and x.grad.device.type == "cpu"
    # the same math on cpu in torch gives the same gradients
    tx = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    ts = torch.tensor(2.0, requires_grad=True)
    OPS[op](tx, ts).sum().backward()
    OPS[op](ts, tx).sum().backward()
    same_tensor(tx.grad, x.grad)
    same_tensor(ts.grad, s.grad)


def test_cuda_repr():
    x = lg.tensor([1.0, 2.0], requires_grad=True)
    t = torch.tensor([1.0, 2.0], requires_grad=True)
    # torch prints device='cuda:0' before requires_grad / grad_fn; derive from the cpu repr
    assert repr(x.cuda()) == repr(t * 1).replace(
        "grad_fn=<MulBackward0>", "device='cuda:0', grad_fn=<ToCopyBackward0>"
    )
    assert repr(lg.tensor([1.0, 2.0]).cuda()) == "tensor([1., 2.], device='cuda:0')"
    assert repr(lg.zeros(2, device="cuda", requires_grad=True)) == (
        "tensor([0., 0.], device='cuda:0', requires_grad=True)"
    )
    assert lg.zeros(1, device="cuda").type() == "torch.cuda.FloatTensor"


def test_cuda_numpy_error():
    x = lg.zeros(2, device="cuda")
    got, _ = call(lambda m: x.numpy(), lg)
    assert isinstance(got, Raised) and got.type is TypeError
    assert got.text == (
        "can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy the tensor "
        "to host memory first."
    )


def test_cuda_to_same_device_is_same_object():
    x = lg.zeros(2, device="cuda", requires_grad=True)
    assert x.cuda() is x and x.to("cuda") is x and x.to("cuda:0") is x
    assert x.to(lg.float32) is x


def test_cuda_grad_setter_wrong_device():
    x = lg.zeros(2, device="cuda", requires_grad=True)
    got, _ = call(lambda m: setattr(x, "grad", lg.zeros(2)), lg)
    assert isinstance(got, Raised) and got.type is RuntimeError


def test_cuda_invalid_ordinal():
    got, _ = call(lambda m: m.zeros(1, device="cuda:7"), lg)
    assert isinstance(got, Raised) and got.type is RuntimeError
    assert got.text.startswith("CUDA error: invalid device ordinal")


# --- grad modes ------------------------------------------------------------------------------


def _meta(x):
    return x.requires_grad, x.is_leaf, None if x.grad_fn is None else type(x.grad_fn).__name__


MODES = {
    "no_grad": lambda m: m.no_grad(),
    "enable_grad": lambda m: m.enable_grad(),
    "set_false": lambda m: m.set_grad_enabled(False),
    "set_true": lambda m: m.set_grad_enabled(True),
    "inference": lambda m: m.inference_mode(),
    "inference_false": lambda m: m.inference_mode(False),
    "inference_true": lambda m: m.inference_mode(True),
}


@pytest.mark.parametrize("outer", [None] + list(MODES))
@pytest.mark.parametrize("inner", list(MODES))
def test_nested_modes(outer, inner):
    def f(m):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        seen = []

        def body():
            with MODES[inner](m):
                y = x * 2
                z = m.ones(2)
                seen.append(
                    (
                        m.is_grad_enabled(),
                        m.is_inference_mode_enabled(),
                        _meta(y),
                        y.is_inference(),
                        z.is_inference(),
                    )
                )
            seen.append((m.is_grad_enabled(), m.is_inference_mode_enabled()))

        if outer is None:
            body()
        else:
            with MODES[outer](m):
                body()
        seen.append((m.is_grad_enabled(), m.is_inference_mode_enabled()))
        return seen

    both(f)


def test_set_grad_enabled_as_function():
    def f(m):
        m.set_grad_enabled(False)
        a = m.is_grad_enabled()
        y = m.tensor([1.0], requires_grad=True) * 2
        m.set_grad_enabled(True)
        return a, m.is_grad_enabled(), _meta(y)

    both(f)


def test_set_grad_enabled_context_restores_previous():
    def f(m):
        with m.no_grad():
            with m.set_grad_enabled(True):
                a = m.is_grad_enabled()
            b = m.is_grad_enabled()
        return a, b, m.is_grad_enabled()

    both(f)


@pytest.mark.parametrize(
    "mode",
    [
        "no_grad",
        "no_grad_call",
        "enable_grad",
        "set_false",
        "set_true",
        "inference",
        "inference_call",
        "inference_false",
    ],
)
def test_decorators(mode):
    def f(m):
        deco = {
            "no_grad": m.no_grad,
            "no_grad_call": m.no_grad(),
            "enable_grad": m.enable_grad(),
            "set_false": m.set_grad_enabled(False),
            "set_true": m.set_grad_enabled(True),
            "inference": m.inference_mode,
            "inference_call": m.inference_mode(),
            "inference_false": m.inference_mode(False),
        }[mode]
        before = m.is_grad_enabled()

        @deco
        def g(x):
            """doc"""
            return x * 2, m.is_grad_enabled(), m.is_inference_mode_enabled()

        x = m.tensor([1.0], requires_grad=True)
        with m.no_grad():
            inside_no_grad = g(x)
        y, enabled, inference = g(x)
        return (
            before,
            m.is_grad_enabled(),
            _meta(y),
            enabled,
            inference,
            inside_no_grad[1:],
            g.__name__,
            g.__doc__,
        )

    both(f)


@pytest.mark.parametrize("mode", ["no_grad", "enable_grad", "set_false", "inference"])
def test_decorated_generator(mode):
    def f(m):
        deco = {
            "no_grad": m.no_grad(),
            "enable_grad": m.enable_grad(),
            "set_false": m.set_grad_enabled(False),
            "inference": m.inference_mode(),
        }[mode]

        @deco
        def gen(x):
            got = yield m.is_grad_enabled(), _meta(x * 2)
            yield got, m.is_grad_enabled(), m.is_inference_mode_enabled()
            return "done"

        x = m.tensor([1.0], requires_grad=True)
        out = []
        with m.no_grad():
            it = gen(x)
            out.append(next(it))
        out.append(m.is_grad_enabled())
        out.append(it.send("sent"))
        out.append(m.is_grad_enabled())
        try:
            next(it)
        except StopIteration as e:
            out.append(e.value)
        return out

    both(f)


def test_decorating_class_runs_constructor_in_mode_with_warning():
    def f(m):
        @m.no_grad()
        class C:
            def __init__(self):
                self.enabled = m.is_grad_enabled()

        return C().enabled, m.is_grad_enabled()

    both(f)


def test_inference_mode_tensors():
    def f(m):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        with m.inference_mode():
            y = x * 2
            z = m.ones(2)
            w = z * 2
        return (
            _meta(y),
            y.is_inference(),
            z.is_inference(),
            w.is_inference(),
            x.is_inference(),
            repr(y),
            repr(z),
        )

    both(f)


@pytest.mark.parametrize(
    "case", ["requires_grad_", "setter", "save_for_backward", "add", "clone_ok", "inside_no_grad"]
)
def test_inference_tensor_used_outside(case):
    def f(m):
        with m.inference_mode():
            z = m.ones(2)
        x = m.tensor([1.0, 2.0], requires_grad=True)
        if case == "requires_grad_":
            z.requires_grad_()
        elif case == "setter":
            z.requires_grad = True
        elif case == "save_for_backward":
            return _meta(x * z)
        elif case == "add":
            return _meta(x + z)
        elif case == "clone_ok":
            return _meta(x * z.clone()), z.clone().is_inference()
        else:
            with m.no_grad():
                return _meta(z * 2), (z * 2).is_inference()
        return _meta(z)

    both(f)


def test_grad_mode_is_thread_local():
    def f(m):
        results = {}

        def worker():
            results["worker_start"] = m.is_grad_enabled()
            with m.no_grad():
                results["worker_inside"] = m.is_grad_enabled()
                ready.set()
                resume.wait(5)
            results["worker_end"] = m.is_grad_enabled()

        ready, resume = threading.Event(), threading.Event()
        with m.no_grad():
            t = threading.Thread(target=worker)
            t.start()
            ready.wait(5)
            results["main_during"] = m.is_grad_enabled()
            resume.set()
            t.join()
        results["main_after"] = m.is_grad_enabled()
        return results

    both(f)


def test_worker_no_grad_does_not_affect_main_recording():
    def f(m):
        x = m.tensor([1.0], requires_grad=True)
        entered, release = threading.Event(), threading.Event()

        def worker():
            with m.no_grad():
                entered.set()
                release.wait(5)

        t = threading.Thread(target=worker)
        t.start()
        entered.wait(5)
        y = x * 2
        release.set()
        t.join()
        return _meta(y)

    both(f)


def test_inference_mode_thread_local():
    def f(m):
        out = {}

        def worker():
            out["worker"] = (m.is_inference_mode_enabled(), m.is_grad_enabled())

        with m.inference_mode():
            t = threading.Thread(target=worker)
            t.start()
            t.join()
            out["main"] = (m.is_inference_mode_enabled(), m.is_grad_enabled())
        return out

    both(f)


NO_GPU = not lg.backends.cuda.is_built()  # JAX has no GPU backend: as the CPU build of torch


@pytest.mark.skipif(not NO_GPU, reason="JAX has a GPU backend here; torch 2.13 is a CPU build")
def test_cuda_without_gpu_or_variable_names_the_variable(monkeypatch):
    """No GPU backend in JAX is PyTorch's CPU build: its AssertionError, then leafgrad's hint."""
    monkeypatch.delenv("LEAFGRAD_VIRTUAL_CUDA", raising=False)
    assert not lg.cuda.is_available()
    for make in [
        lambda m: m.ones(2).cuda(),
        lambda m: m.ones(2, device="cuda"),
        lambda m: m.zeros(2).to("cuda:1"),
        lambda m: m.tensor([1.0], device=m.device("cuda")),
        lambda m: m.cuda.current_device(),
        lambda m: m.cuda.synchronize(),
        lambda m: m.cuda.get_device_name(),
        lambda m: m.cuda.get_device_capability(),
        lambda m: m.cuda.mem_get_info(),
    ]:
        both(make)
    with pytest.raises(AssertionError) as info:
        lg.ones(2).cuda()
    first, help_line = str(info.value).split("\n")
    assert first == "Torch not compiled with CUDA enabled"
    assert "LEAFGRAD_VIRTUAL_CUDA=1" in help_line


@pytest.mark.skipif(not NO_GPU, reason="JAX has a GPU backend here; torch 2.13 is a CPU build")
def test_device_agnostic_queries_without_gpu(monkeypatch):
    """What device-agnostic scripts ask of ``cuda``, ``backends`` and ``accelerator``."""
    monkeypatch.delenv("LEAFGRAD_VIRTUAL_CUDA", raising=False)

    def queries(m):
        return [
            m.cuda.is_available(),
            m.cuda.device_count(),
            m.cuda.is_initialized(),
            m.cuda.is_bf16_supported(),
            m.cuda.memory_allocated(),
            m.cuda.memory_allocated(0),
            m.cuda.max_memory_allocated(),
            m.cuda.memory_reserved(),
            m.cuda.max_memory_reserved(),
            m.cuda.empty_cache(),
            m.backends.cudnn.is_available(),
            m.backends.cudnn.enabled,
            m.backends.cudnn.deterministic,
            m.backends.cudnn.benchmark,
            m.backends.cudnn.allow_tf32,
            m.backends.cudnn.version(),
            m.backends.cuda.is_built(),
            m.backends.cuda.matmul.allow_tf32,
            m.backends.mps.is_available(),
            m.backends.mps.is_built(),
            m.accelerator.is_available(),
            m.accelerator.current_accelerator(),
            m.accelerator.device_count(),
        ]

    both(queries)

    def context(m):
        with m.cuda.device(0):
            pass

    both(context)


def test_virtual_cuda_queries(monkeypatch):
    """The virtual cuda device answers what it can and refuses memory statistics it has not."""
    if lg.cuda.is_available() and not lg.cuda.is_virtual():
        pytest.skip("a real GPU")
    monkeypatch.setenv("LEAFGRAD_VIRTUAL_CUDA", "1")
    assert lg.cuda.is_available() and lg.accelerator.is_available()
    assert lg.accelerator.current_accelerator() == lg.device("cuda")
    assert lg.cuda.current_device() == 0
    assert "virtual" in lg.cuda.get_device_name()
    lg.cuda.synchronize()
    with lg.cuda.device(0):
        assert lg.ones(1, device="cuda").device == lg.device("cuda", 0)
    with pytest.raises(NotImplementedError, match="device 0"):
        with lg.cuda.device(1):
            pass
    for query in (lg.cuda.memory_allocated, lg.cuda.mem_get_info, lg.cuda.get_device_capability):
        with pytest.raises(NotImplementedError, match="virtual cuda device"):
            query()
