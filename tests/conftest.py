"""Shared helpers for the differential tests: run the same code with torch and leafgrad, compare.

``both(fn)`` calls ``fn(torch)`` and ``fn(leafgrad)``; when one raises, the other must raise the
same exception type with the same text (leafgrad may add help on lines of its own after it), and
the user warnings each side issued must have the same texts. Results are compared by ``same``.
"""

from __future__ import annotations

import os

os.environ["LEAFGRAD_VIRTUAL_CUDA"] = "1"  # before leafgrad is imported: a virtual cuda device

import time  # noqa: E402
import warnings  # noqa: E402

import jax  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

for _ in range(10):  # leafgrad/_random.py may be in the middle of being written
    try:
        import leafgrad  # noqa: E402

        break
    except ImportError:
        time.sleep(30)
else:
    import leafgrad  # noqa: E402, F811

lg = leafgrad
MODULES = (torch, lg)

# Note [VJP samples]: the operands of every op recorded while the suite runs are kept (a few per
# op) so that tests/test_zz_vjp_numerical.py checks JAX's VJP of every table entry numerically.
VJP_SAMPLES: dict[str, list] = {}


def _collect_sample(op, operands, static, needs) -> None:
    if op.name == "linalg_pinv" and static.get("rtol", 0) > 1e-6:
        return  # a pinv that cuts singular values (pinverse(rcond=0.5)) is not smooth there
    if (
        op.name == "upsample_interp"
        and static.get("mode") == "Bicubic"
        and tuple(operands[0].shape[2:]) == tuple(static["output_size"])
    ):
        return  # PyTorch's bicubic backward copies the gradient at equal sizes, by design
    if op.name == "ldexp" and not (
        isinstance(operands[1], lg.Tensor)
        and (operands[1]._dtype.is_floating_point or operands[1]._dtype.is_complex)
    ):
        return  # PyTorch's gradient of self is times pow(2, other) in integers: 0 where other < 0
    if not VJP_SAMPLES.get(op.name):  # one sample per op keeps the numerical check fast
        arrays = tuple(o._data if isinstance(o, lg.Tensor) else o for o in operands)
        if any(isinstance(a, (jax.core.Tracer, jax.ShapeDtypeStruct)) for a in arrays):
            return  # recorded inside a JAX trace (leafgrad.compile, torch.func) or on the meta
            # device: no values
        VJP_SAMPLES[op.name] = [(op, arrays, dict(static), needs)]


leafgrad.ops.dispatch.OBSERVERS.append(_collect_sample)

# The numerical check's result for each sampled op, computed once per process.
VJP_RESULTS: dict[str, tuple[str, str]] = {}


def vjp_result(name: str) -> tuple[str, str]:
    found = VJP_RESULTS.get(name)
    if found is None:
        from vjp_check import check_sample

        found = VJP_RESULTS[name] = check_sample(name, VJP_SAMPLES[name])
    return found


def _claim(name: str) -> bool:
    """Under pytest-xdist, the first worker to reach an op checks it; the others skip it (the
    check is the same inner-product test on another sample)."""
    folder = os.environ.get("LEAFGRAD_VJP_DIR")
    if not folder or not os.path.isdir(folder):
        return True
    try:
        os.close(
            os.open(
                os.path.join(folder, "checked-" + name.replace("/", "_")), os.O_CREAT | os.O_EXCL
            )
        )
    except FileExistsError:
        return False
    return True


@pytest.fixture(params=["eager", "fused"])
def engine(request, monkeypatch):
    """The eager engine, or the fused backward for every graph (Note [Fused backward])."""
    from leafgrad.autograd import fused

    if request.param == "fused":
        monkeypatch.setattr(fused, "ENABLED", True)
        monkeypatch.setattr(fused, "_MIN_CALLS", 0)
        monkeypatch.setattr(fused, "_EAGER_SIGHTINGS", 0)
    else:
        monkeypatch.setattr(fused, "ENABLED", False)
    return request.param


@pytest.fixture(autouse=True, scope="module")
def _vjp_check_module(request):
    """At the end of each test module, check numerically the VJP of every op it recorded first
    (Note [VJP samples]); a wrong VJP fails the module's teardown, naming the op."""
    yield
    if request.module.__name__.endswith("test_zz_vjp_numerical"):
        return
    from leafgrad.ops.table import OPS

    failures = []
    for name in list(VJP_SAMPLES):
        # Table entries only: the ops create_graph makes on the fly (a node's VJP as an op) carry
        # their recorded dtypes and are checked against torch's higher derivatives instead.
        if name in OPS and name not in VJP_RESULTS:
            if not _claim(name):
                VJP_RESULTS[name] = ("skip", "checked by another pytest-xdist worker")
                continue
            status, message = vjp_result(name)
            if status == "fail":
                failures.append(f"{name}: {message}")
    if failures:
        pytest.fail("numerical VJP check failed for: " + "; ".join(failures))


# Note [Test tiers]: a test function parametrized over a large grid (``GRID`` cases or more) runs
# a fixed half of its cases by default, chosen by a hash of each case's id: every run picks the
# same cases, and the whole suite fits in CI's time (a value with one or two cases, such as an op
# of a grid over ops and dtypes, may be left out of a run: its cases run under the full tier).
# ``LEAFGRAD_TEST_FULL=1`` runs every case, and so does a run that names test ids
# (``file.py::test``). A test marked ``every_case`` always runs all of its cases.
FULL = os.environ.get("LEAFGRAD_TEST_FULL") == "1"
GRID = 16
SHARE = 2  # one case in SHARE is kept


def _grid_of(item) -> str | None:
    """The test function a parametrized item is a case of, else None."""
    if getattr(item, "callspec", None) is None:
        return None
    return item.nodeid.split("[")[0]


def pytest_collection_modifyitems(config, items):
    if FULL or any("::" in str(a) for a in config.args):
        return
    import collections
    import zlib

    sizes = collections.Counter(_grid_of(i) for i in items)
    kept, dropped = [], []
    for item in items:
        grid = _grid_of(item)
        if (
            grid is not None
            and sizes[grid] >= GRID
            and item.get_closest_marker("every_case") is None
            and zlib.crc32(item.nodeid.encode()) % SHARE
        ):
            dropped.append(item)
        else:
            kept.append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "every_case: run every case of this parametrized test (Note [Test tiers])"
    )
    if not hasattr(config, "workerinput") and "LEAFGRAD_VJP_DIR" not in os.environ:
        import tempfile

        os.environ["LEAFGRAD_VJP_DIR"] = tempfile.mkdtemp(prefix="leafgrad-vjp-")
        # Note [Test compile cache]: most of the suite's time is XLA compiling kernels for tiny
        # tensors (each new op, shape and dtype compiles once per process). Under pytest-xdist
        # the workers (started after this, importing jax afresh) share one persistent
        # compilation cache: a kernel one worker compiled, the other loads (about 9% of the
        # time). Cheaper XLA flags (LLVM -O0, the older loop emitters) would halve compiling
        # but change the generated arithmetic (FMA contraction, reduction order): leafgrad's
        # bit-for-bit agreements with torch fail under them, so the suite keeps XLA's defaults.
        if getattr(config.option, "numprocesses", None) and "JAX_COMPILATION_CACHE_DIR" not in (
            os.environ
        ):
            os.environ["JAX_COMPILATION_CACHE_DIR"] = tempfile.mkdtemp(prefix="leafgrad-xla-")
            os.environ["JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS"] = "0"
            os.environ["JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES"] = "0"
            os.environ["LEAFGRAD_TEST_XLA_CACHE"] = os.environ["JAX_COMPILATION_CACHE_DIR"]


def pytest_sessionfinish(session, exitstatus):
    """Under pytest-xdist: each worker reports the ops it recorded; the controller checks that
    every differentiable table entry was recorded by some worker when the VJP file ran."""
    folder = os.environ.get("LEAFGRAD_VJP_DIR")
    if not folder:
        return
    worker = getattr(session.config, "workerinput", None)
    if worker is None and os.environ.get("LEAFGRAD_TEST_XLA_CACHE"):
        import shutil

        shutil.rmtree(os.environ.pop("LEAFGRAD_TEST_XLA_CACHE"), ignore_errors=True)
    if worker is not None:
        ran_zz = any("test_zz_vjp_numerical" in item.nodeid for item in session.items)
        with open(os.path.join(folder, worker["workerid"] + ".txt"), "w") as f:
            f.write(("ZZ\n" if ran_zz else "") + "\n".join(VJP_SAMPLES))
        return
    files = [os.path.join(folder, n) for n in os.listdir(folder)] if os.path.isdir(folder) else []
    if not files:
        import shutil

        shutil.rmtree(folder, ignore_errors=True)
        return
    seen, ran_zz = set(), False
    for path in files:
        with open(path) as f:
            lines = f.read().split("\n")
        ran_zz = ran_zz or "ZZ" in lines
        seen.update(lines)
    import shutil

    shutil.rmtree(folder, ignore_errors=True)
    if not ran_zz:
        return
    from vjp_check import SKIP

    from leafgrad.ops.table import OPS

    missing = sorted(
        n for n, op in OPS.items() if op.differentiable and n not in SKIP and n not in seen
    )
    if missing:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.ensure_newline()
            reporter.write_line(
                "FAILED numerical VJP check: no test records op(s) " + ", ".join(missing),
                red=True,
            )
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


DTYPE_NAMES = [
    "bool",
    "uint8",
    "int8",
    "int16",
    "int32",
    "int64",
    "float16",
    "bfloat16",
    "float32",
    "float64",
    "complex64",
    "complex128",
]
FLOAT_NAMES = ["float16", "bfloat16", "float32", "float64"]
TOLERANCE = {  # rtol, atol for values PyTorch and XLA need not compute bit for bit
    "float16": (2e-3, 1e-3),
    "bfloat16": (1e-2, 1e-2),
    "float32": (2e-6, 1e-6),
    "float64": (1e-12, 1e-12),
    "complex64": (2e-6, 1e-6),
    "complex128": (1e-12, 1e-12),
}


@pytest.fixture(autouse=True)
def _restore_state():
    """Each test starts and ends with the default dtype float32 and grad mode on, on both sides.

    torch's warn-once warnings are made to warn every time, so that comparing warnings does not
    depend on which test ran first (leafgrad's warnings are recorded with the "always" filter).
    """
    for m in MODULES:
        m.set_warn_always(True)
        m.set_default_dtype(m.float32)
        m.set_grad_enabled(True)
    yield
    for m in MODULES:
        m.set_default_dtype(m.float32)
        m.set_grad_enabled(True)


class Raised:
    """What a call raised, compared by type and text."""

    def __init__(self, exc: BaseException) -> None:
        self.exc = exc
        self.type = type(exc)
        self.text = str(exc)

    def __repr__(self) -> str:
        return f"Raised({self.type.__name__}: {self.text!r})"


def call(fn, module):
    """``(result or Raised, [user-warning texts])`` of ``fn(module)``."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            out = fn(module)
        except Exception as exc:  # noqa: BLE001
            out = Raised(exc)
    texts = [str(w.message) for w in caught if issubclass(w.category, UserWarning)]
    return out, texts


def same_error(t: Raised, g: Raised) -> None:
    """leafgrad raised what torch raised: same type, same text (extra help only on new lines)."""
    assert g.type is t.type, f"torch raised {t!r}, leafgrad raised {g!r}"
    assert g.text == t.text or g.text.startswith(t.text + "\n"), (
        f"\ntorch:    {t.text!r}\nleafgrad: {g.text!r}"
    )


def both(fn, *, compare=True, check_warnings=True, **same_kw):
    """Run ``fn(torch)`` and ``fn(leafgrad)``; compare errors, warnings and (optionally) results.

    Returns ``(torch_result, leafgrad_result)``; when both raised, these are ``Raised`` objects.
    """
    t, tw = call(fn, torch)
    g, gw = call(fn, lg)
    if isinstance(t, Raised) or isinstance(g, Raised):
        if not isinstance(g, Raised):
            raise AssertionError(f"torch raised {t!r}, leafgrad returned {g!r}")
        if not isinstance(t, Raised):
            raise AssertionError(f"leafgrad raised {g!r}, torch returned {t!r}") from g.exc
        same_error(t, g)
    elif compare:
        same(t, g, **same_kw)
    if check_warnings:
        assert [w.split("\n")[0] for w in gw] == [w.split("\n")[0] for w in tw] or gw == tw, (
            f"\ntorch warned:    {tw}\nleafgrad warned: {gw}"
        )
    return t, g


def host(x) -> np.ndarray:
    """A tensor's values as numpy (bfloat16 as float32), from either library."""
    if isinstance(x, torch.Tensor):
        x = x.detach().cpu().resolve_conj()
        if x.dtype == torch.bfloat16:
            x = x.float()
        return x.numpy(force=x._is_zerotensor())  # (sgn's gradient of a real tensor is one)
    arr = np.asarray(x.detach()._data)
    if arr.dtype.name == "bfloat16":
        arr = arr.astype(np.float32)
    return arr


def grad_fn_name(x) -> str | None:
    return None if x.grad_fn is None else type(x.grad_fn).__name__


def same_tensor(
    t, g, *, exact=False, autograd=True, rtol=None, atol=None, of_largest=False
) -> None:
    """Values, dtype, shape and (with ``autograd``) requires_grad, is_leaf and grad_fn agree.
    ``of_largest``: ``rtol`` is relative to the tensor's largest magnitude, not to each element:
    for values that sum terms much larger than themselves (a training step's gradients and
    optimizer state), which carry those terms' rounding."""
    assert isinstance(g, lg.Tensor), f"expected a leafgrad Tensor, got {type(g)}"
    assert str(g.dtype) == str(t.dtype), f"dtype: torch {t.dtype}, leafgrad {g.dtype}"
    assert tuple(g.shape) == tuple(t.shape), f"shape: torch {t.shape}, leafgrad {g.shape}"
    if autograd:
        assert g.requires_grad == t.requires_grad, "requires_grad differs"
        assert g.is_leaf == t.is_leaf, "is_leaf differs"
        assert grad_fn_name(g) == grad_fn_name(t), (
            f"grad_fn: torch {grad_fn_name(t)}, leafgrad {grad_fn_name(g)}"
        )
    zero = t._is_zerotensor()  # Note [Zero gradients] in leafgrad/_zero.py
    assert g._is_zerotensor() == zero, f"_is_zerotensor: torch {zero}, leafgrad {not zero}"
    a, b = host(t), host(g)
    name = str(t.dtype).removeprefix("torch.")
    if exact or name not in TOLERANCE:
        np.testing.assert_array_equal(b, a)
    else:
        r, at = TOLERANCE[name]
        r, at = (r if rtol is None else rtol), (at if atol is None else atol)
        if of_largest and a.size:
            finite = np.abs(a[np.isfinite(a)])
            at, r = at + r * (float(finite.max()) if finite.size else 0.0), 0.0
        np.testing.assert_allclose(b, a, rtol=r, atol=at)


def same(t, g, **kw) -> None:
    """Compare results of the same code under torch and leafgrad, recursively."""
    if isinstance(t, torch.Tensor):
        same_tensor(t, g, **kw)
    elif isinstance(t, (list, tuple)) and not isinstance(t, torch.Size):
        assert isinstance(g, (list, tuple)) and len(g) == len(t), f"torch {t!r}, leafgrad {g!r}"
        for a, b in zip(t, g):
            same(a, b, **kw)
    elif isinstance(t, dict):
        assert set(t) == set(g)
        for k in t:
            same(t[k], g[k], **kw)
    elif isinstance(t, (torch.dtype, torch.device, torch.Size)):
        assert repr(g) == repr(t) and str(g) == str(t), f"torch {t!r}, leafgrad {g!r}"
    elif isinstance(t, float) and t != t:
        assert isinstance(g, float) and g != g
    else:
        assert type(g) is type(t), f"type: torch {type(t).__name__}, leafgrad {type(g).__name__}"
        assert g == t, f"torch {t!r}, leafgrad {g!r}"


def dt(m, name: str):
    """The dtype called ``name`` in module ``m``."""
    return getattr(m, name)


@pytest.fixture
def torch_validates_distributions():
    """PyTorch's distributions validate by default, but importing ``torch._dynamo`` (any test
    that runs ``torch.compile``) turns validation off for the whole process
    (``Distribution.set_default_validate_args(False)``): tests that compare validation with
    PyTorch turn it on for their duration, as a fresh process has it."""
    import torch.distributions

    previous = torch.distributions.Distribution._validate_args
    torch.distributions.Distribution.set_default_validate_args(True)
    yield
    torch.distributions.Distribution.set_default_validate_args(previous)
