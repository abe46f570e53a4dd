"""``GradScaler`` and its two kernels against PyTorch (Note [AMP kernels] in
``leafgrad/ops/amp_ops.py``).

The kernels: values, ``found_inf``, every tensor's ``_version`` after the call, the checks and
their texts, the autograd bookkeeping. The scaler: training loops (SGD, Adam) through
``scale(loss).backward()``, ``unscale_`` with gradient clipping, ``step`` and ``update``, with
steps whose gradients hold an inf or a NaN (skipped, scale backed off) and growth after
``growth_interval`` good steps; parameters, gradients, scale, growth tracker, versions and the
state dict are compared after every step. Then misuse, the disabled scaler, the deprecated
spellings and pickling.
"""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest
import torch
from conftest import both, host

import leafgrad

LIBS = (torch, leafgrad)
R = np.random.default_rng(0)
INF, NAN = float("inf"), float("nan")


def _versions(*tensors):
    return [t._version for t in tensors]


def _foreach(lib, grads, found_inf, inv_scale):
    return lib._amp_foreach_non_finite_check_and_unscale_(grads, found_inf, inv_scale)


# --- _amp_foreach_non_finite_check_and_unscale_ -----------------------------------------------

VALUES = [1.5, 65504.0, -3.0, 1e-3, -7.1, 0.0, -0.0]


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
@pytest.mark.parametrize("inv", [1 / 3, 1.0, 7.3])
@pytest.mark.parametrize("bad", [None, INF, NAN, -INF])
def test_foreach_values_and_versions(dtype, inv, bad):
    def run(lib):
        d = getattr(lib, dtype)
        a = lib.tensor(VALUES if bad is None else [*VALUES[:3], bad], dtype=d)
        b = lib.tensor([[2.0, -4.0], [0.25, 8.0]], dtype=d)
        found_inf, inv_scale = lib.zeros(()), lib.tensor(inv)
        out = _foreach(lib, [a, b], found_inf, inv_scale)
        return out, a, b, found_inf, _versions(a, b, found_inf, inv_scale)

    (t_out, *t_rest), (g_out, *g_rest) = both(run, compare=False)
    assert t_out is None and g_out is None
    for t, g in zip(t_rest[:3], g_rest[:3]):
        np.testing.assert_array_equal(host(g), host(t))
        assert str(g.dtype) == str(t.dtype)
    assert t_rest[3] == g_rest[3] == [0, 0, 0, 0]  # the kernel bumps no version


def test_foreach_keeps_found_inf_and_mixed_lists():
    def run(lib):
        found_inf = lib.full((1,), 3.0)  # not reset by the kernel; one element of any shape
        a, b = lib.ones(2), lib.ones(3, dtype=lib.float64) * 4
        _foreach(lib, [a, b], found_inf, lib.full((1, 1), 0.5))
        same = lib.ones(2)  # the same tensor twice is unscaled twice
        f2 = lib.zeros(())
        _foreach(lib, [same, same], f2, lib.tensor(0.5))
        empty = lib.zeros(())  # an empty list returns before any check
        _foreach(lib, [], empty, lib.ones(2, dtype=lib.int64))
        z, s = lib.ones(0), lib.tensor(INF)
        f3 = lib.zeros(())
        _foreach(lib, [z, s], f3, lib.tensor(0.5))
        return found_inf, a, b, same, f2, empty, z, s, f3

    both(run)


def test_foreach_writes_views_and_autograd_tensors():
    def run(lib):
        base = lib.arange(6.0).reshape(2, 3)
        col = base[:, 1]
        cols = base.t()  # not contiguous
        leaf = lib.ones(2, requires_grad=True)  # written with grad mode on: no check
        y = leaf * 2  # keeps its node
        found_inf = lib.zeros(())
        _foreach(lib, [col], found_inf, lib.tensor(0.5))
        _foreach(lib, [cols], found_inf, lib.tensor(2.0))
        _foreach(lib, [leaf, y], found_inf, lib.tensor(0.5))
        with lib.inference_mode():
            inf_t = lib.ones(2)
        _foreach(lib, [inf_t], found_inf, lib.tensor(0.5))  # no version: no inference error
        return (
            base,
            _versions(base, col, cols),
            leaf.detach(),
            y.detach(),
            y.grad_fn.name(),
            leaf._version,
            y._version,
            inf_t.clone(),
        )

    both(run)


def test_foreach_writes_until_a_refused_tensor():
    for bad_kind in ("int64", "bool", "complex64", "expanded"):

        def run(lib, bad_kind=bad_kind):
            a = lib.tensor([INF, 1.0])
            if bad_kind == "expanded":
                bad = lib.ones(1).expand(3)
            else:
                bad = lib.ones(2, dtype=getattr(lib, bad_kind))
            c = lib.ones(2)
            found_inf = lib.zeros(())
            try:
                _foreach(lib, [a, bad, c], found_inf, lib.tensor(0.5))
            except (RuntimeError, NotImplementedError) as err:
                return type(err).__name__, str(err), a, c, found_inf
            return None

        both(run)


@pytest.mark.parametrize(
    "case",
    [
        "found_inf_double",
        "inv_double",
        "found_inf_numel",
        "inv_numel",
        "found_inf_int",
        "long_grad",
        "not_a_list",
        "element",
        "element_first",
        "found_inf_number",
        "inv_number",
        "missing",
        "missing_one",
        "too_many",
        "keyword",
        "unknown_keyword",
        "multiple",
        "generator",
    ],
)
def test_foreach_errors(case):
    def run(lib):
        g = [lib.ones(2)]
        f, inv = lib.zeros(()), lib.tensor(0.5)
        F = lib._amp_foreach_non_finite_check_and_unscale_
        calls = {
            "found_inf_double": lambda: F(g, f.double(), inv),
            "inv_double": lambda: F(g, f, inv.double()),
            "found_inf_numel": lambda: F(g, lib.zeros(2), inv),
            "inv_numel": lambda: F(g, f, lib.ones(2)),
            "found_inf_int": lambda: F(g, lib.zeros((), dtype=lib.int32), inv),
            "long_grad": lambda: F([lib.ones(2, dtype=lib.int64)], f, inv),
            "not_a_list": lambda: F(g[0], f, inv),
            "element": lambda: F([g[0], None], f, inv),
            "element_first": lambda: F([1.0], f, None),
            "found_inf_number": lambda: F(g, 0.0, inv),
            "inv_number": lambda: F(g, f, 0.5),
            "missing": lambda: F(),
            "missing_one": lambda: F(g, f),
            "too_many": lambda: F(g, f, inv, inv),
            "keyword": lambda: F(self=g, found_inf=f, inv_scale=inv),
            "unknown_keyword": lambda: F(g, f, inv, input=g),
            "multiple": lambda: F(g, f, inv, found_inf=f),
            "generator": lambda: F((t for t in g), f, inv),
        }
        out = calls[case]()
        return out, g[0]

    both(run)


# --- _amp_update_scale_ -----------------------------------------------------------------------


def test_update_scale_steps_and_versions():
    def run(lib):
        scale = lib.full((), 4.0)
        tracker = lib.zeros((), dtype=lib.int32)
        found_inf = lib.zeros(())
        seen = []
        for found in (0.0, 0.0, 0.0, 2.0, NAN, 0.0, -1.0, 0.0, 0.0):
            found_inf.fill_(found)
            out = lib._amp_update_scale_(scale, tracker, found_inf, 2.0, 0.5, 3)
            assert out is scale
            seen.append((scale.item(), tracker.item(), *_versions(scale, tracker, found_inf)))
        return seen

    both(run)


@pytest.mark.parametrize(
    "start, tracker, found, growth, backoff, interval",
    [
        (3e38, 0, 0.0, 2.0, 0.5, 1),  # a grown scale past float32's range is not kept
        (1.0, 0, 0.0, 2.0, 0.5, 0),  # growth_interval 0: never reached
        (1.0, 5, 0.0, 2.0, 0.5, 3),  # a tracker already past the interval keeps counting
        (1.1, 0, 1.0, 2.0, 0.3, 3),  # the product in double, stored as float
        (1.1, 0, 0.0, 1.3, 0.3, 1),
        (1.0, 2**31 - 1, 0.0, 2.0, 0.5, 5),  # the int32 tracker wraps
        (1.0, 2**31 - 1, 0.0, 2.0, 0.5, -(2**31)),
        (1e-45, 0, 1.0, 2.0, 0.5, 3),
    ],
)
def test_update_scale_arithmetic(start, tracker, found, growth, backoff, interval):
    def run(lib):
        s = lib.full((), start)
        t = lib.full((), tracker, dtype=lib.int32)
        lib._amp_update_scale_(s, t, lib.full((), found), growth, backoff, interval)
        return s, t

    both(run)


def test_update_scale_shapes_and_argument_forms():
    def run(lib):
        s, t = lib.ones(1), lib.zeros((1, 1), dtype=lib.int32)
        lib._amp_update_scale_(s, t, lib.zeros(1), 2.0, 0.5, 1)
        u = lib.ones(())
        lib._amp_update_scale_(
            input=u,
            growth_tracker=lib.zeros((), dtype=lib.int32),
            found_inf=lib.zeros(()),
            scale_growth_factor=lib.tensor(3),  # a 0-d tensor for a float
            scale_backoff_factor=True,
            growth_interval=np.int32(1),
        )
        v = lib.ones(())
        lib._amp_update_scale_(v, lib.zeros((), dtype=lib.int32), lib.zeros(()), 2, 0.5, -5)
        return s, t, u, v

    both(run)


@pytest.mark.parametrize(
    "case",
    [
        "scale_double",
        "tracker_long",
        "found_inf_double",
        "scale_numel",
        "tracker_numel",
        "found_inf_numel",
        "all_wrong",
        "interval_float",
        "interval_bool",
        "interval_tensor_1d",
        "interval_float_tensor",
        "interval_overflow",
        "factor_str",
        "factor_complex",
        "factor_none",
        "factor_grad_tensor",
        "factor_1d_tensor",
        "factor_ndarray",
        "found_inf_number",
        "scale_number",
        "missing",
        "missing_keywords",
        "too_many",
        "unknown_keyword",
        "self_keyword",
        "multiple",
    ],
)
def test_update_scale_errors(case):
    def run(lib):
        s, t, f = lib.ones(()), lib.zeros((), dtype=lib.int32), lib.zeros(())
        U = lib._amp_update_scale_
        calls = {
            "scale_double": lambda: U(s.double(), t, f, 2.0, 0.5, 3),
            "tracker_long": lambda: U(s, t.long(), f, 2.0, 0.5, 3),
            "found_inf_double": lambda: U(s, t, f.double(), 2.0, 0.5, 3),
            "scale_numel": lambda: U(lib.ones(2), t, f, 2.0, 0.5, 3),
            "tracker_numel": lambda: U(s, lib.zeros(2, dtype=lib.int32), f, 2.0, 0.5, 3),
            "found_inf_numel": lambda: U(s, t, lib.zeros(2), 2.0, 0.5, 3),
            "all_wrong": lambda: U(lib.ones(2).double(), t.long(), f.long(), 2.0, 0.5, 3),
            "interval_float": lambda: U(s, t, f, 2.0, 0.5, 3.0),
            "interval_bool": lambda: U(s, t, f, 2.0, 0.5, True),
            "interval_tensor_1d": lambda: U(s, t, f, 2.0, 0.5, lib.tensor([3])),
            "interval_float_tensor": lambda: U(s, t, f, 2.0, 0.5, lib.tensor(3.0)),
            "interval_overflow": lambda: U(s, t, f, 2.0, 0.5, 2**70),
            "factor_str": lambda: U(s, t, f, "a", 0.5, 3),
            "factor_complex": lambda: U(s, t, f, 2 + 0j, 0.5, 3),
            "factor_none": lambda: U(s, t, f, 2.0, None, 3),
            "factor_grad_tensor": lambda: U(s, t, f, lib.tensor(2.0, requires_grad=True), 0.5, 3),
            "factor_1d_tensor": lambda: U(s, t, f, lib.tensor([2.0]), 0.5, 3),
            "factor_ndarray": lambda: U(s, t, f, np.array(2.0), 0.5, 3),
            "found_inf_number": lambda: U(s, t, 0.0, 2.0, 0.5, 3),
            "scale_number": lambda: U(1.0, t, f, 2.0, 0.5, 3),
            "missing": lambda: U(),
            "missing_keywords": lambda: U(s, growth_tracker=t, found_inf=f, growth_factor=2.0),
            "too_many": lambda: U(s, t, f, 2.0, 0.5, 3, 4),
            "unknown_keyword": lambda: U(s, t, f, 2.0, 0.5, 3, foo=4),
            "self_keyword": lambda: U(s, t, f, 2.0, 0.5, 3, self=s),
            "multiple": lambda: U(s, t, f, 2.0, 0.5, 3, input=s),
        }
        out = calls[case]()
        return out, s, t, _versions(s, t)

    both(run)


def _names(node):
    return [None if n is None else type(n).__name__ for n, _ in node.next_functions]


def test_update_scale_autograd():
    def run(lib):
        U = lib._amp_update_scale_
        out = []
        leaf = lib.ones((), requires_grad=True)
        try:
            U(leaf.double(), lib.zeros((), dtype=lib.int32), lib.zeros(()), 2.0, 0.5, 3)
        except RuntimeError as err:  # a float64 non-leaf: the kernel's dtype check
            out.append(str(err))
        try:  # the leaf check comes before the kernel's
            U(lib.ones((), dtype=lib.float64, requires_grad=True), lib.ones(2), 0, 2.0, 0.5, 3)
        except TypeError as err:
            out.append(str(err))
        try:
            U(
                lib.ones((), dtype=lib.float64, requires_grad=True),
                lib.zeros((), dtype=lib.int32),
                lib.zeros(()),
                2.0,
                0.5,
                3,
            )
        except RuntimeError as err:
            out.append(str(err))
        with lib.no_grad():
            s = lib.ones((), requires_grad=True)
            U(s, lib.zeros((), dtype=lib.int32), lib.zeros(()), 2.0, 0.5, 1)
        out.append((s.item(), s.requires_grad, s.grad_fn, s._version))
        x = leaf * 1
        U(x, lib.zeros((), dtype=lib.int32), lib.zeros(()), 2.0, 0.5, 3)
        out.append((x.grad_fn.name(), _names(x.grad_fn), x._version))
        try:
            x.backward()
        except RuntimeError as err:
            out.append(str(err))
        f = lib.zeros((), requires_grad=True)
        s2 = lib.ones(())
        U(s2, lib.zeros((), dtype=lib.int32), f, 2.0, 0.5, 3)
        out.append((s2.requires_grad, s2.grad_fn.name(), _names(s2.grad_fn)))
        x2 = leaf * 1
        U(x2, lib.zeros((), dtype=lib.int32), f, 2.0, 0.5, 3)
        out.append(_names(x2.grad_fn))
        b = lib.ones(3, requires_grad=True).clone()
        v = b[1]
        U(v, lib.zeros((), dtype=lib.int32), lib.zeros(()), 2.0, 0.5, 1)
        out.append((v.grad_fn.name(), b.grad_fn.name(), _names(b.grad_fn), b._version))
        out.append(b.detach())
        return out

    both(run)


def test_update_scale_inference_tensors():
    def run(lib):
        with lib.inference_mode():
            s = lib.ones(())
            t = lib.zeros((), dtype=lib.int32)
            d = lib.ones((), dtype=lib.float64)
        g = lib.zeros((), dtype=lib.int32)
        out = []
        for scale, tracker in ((s, g), (d, g), (lib.ones(()), t)):
            try:  # the kernel writes, then the version bump refuses an inference scale
                lib._amp_update_scale_(scale, tracker, lib.zeros(()), 2.0, 0.5, 1)
            except RuntimeError as err:
                out.append(str(err))
            out.append((scale.item(), tracker.item()))
        with lib.inference_mode():
            lib._amp_update_scale_(s, t, lib.zeros(()), 2.0, 0.5, 1)
        out.append((s.item(), t.item()))
        return out

    both(run)


def test_kernels_on_the_virtual_cuda_device():
    """The cuda kernel is chosen when an operand is on cuda; its checks name CUDA (texts of
    ``aten/src/ATen/native/cuda/AmpKernels.cu``; no CUDA here to run PyTorch's)."""
    L = leafgrad
    if not L.cuda.is_available():
        pytest.skip("no cuda device (virtual or real)")
    g, f, inv = L.tensor([2.0, INF]), L.zeros(()), L.tensor(0.5)
    expected = {
        (g, f.cuda(), inv): "inv_scale must be a CUDA tensor.",
        (g, f, inv.cuda()): "found_inf must be a CUDA tensor.",
        (g, f.cuda(), inv.cuda()): "one of scaled_grads was not a CUDA tensor.",
    }
    for (grads, found_inf, inv_scale), text in expected.items():
        with pytest.raises(RuntimeError) as err:
            L._amp_foreach_non_finite_check_and_unscale_([grads], found_inf, inv_scale)
        assert str(err.value) == text
    gc, fc = g.cuda(), f.cuda()
    L._amp_foreach_non_finite_check_and_unscale_([gc], fc, inv.cuda())
    assert gc.tolist() == [1.0, INF] and fc.item() == 1.0 and gc._version == 0
    s, t = L.ones(()), L.zeros((), dtype=L.int32)
    with pytest.raises(RuntimeError, match=r"^growth_tracker must be a CUDA tensor\.$"):
        L._amp_update_scale_(s, t, fc, 2.0, 0.5, 1)
    sc, tc = s.cuda(), t.cuda()
    L._amp_update_scale_(sc, tc, L.zeros(()).cuda(), 2.0, 0.5, 1)
    assert sc.item() == 2.0 and tc.item() == 0 and sc._version == 1


# --- GradScaler: training loops ---------------------------------------------------------------

W1, B1 = R.standard_normal((4, 3)).astype("float32"), R.standard_normal(4).astype("float32")
W2 = R.standard_normal((2, 4)).astype("float32")
X = R.standard_normal((6, 3)).astype("float32")


def _model(lib):
    first = lib.nn.Linear(3, 4)
    second = lib.nn.Linear(4, 2, bias=False)
    with lib.no_grad():
        first.weight.copy_(lib.tensor(W1))
        first.bias.copy_(lib.tensor(B1))
        second.weight.copy_(lib.tensor(W2))
    return lib.nn.Sequential(first, lib.nn.Tanh(), second)


def _optimizer(lib, name, params):
    if name == "sgd":
        return lib.optim.SGD(params, lr=0.1, momentum=0.9)
    if name == "adam":
        return lib.optim.Adam(params, lr=0.05)
    if name == "adam_fused":
        return lib.optim.Adam(params, lr=0.05, fused=True)
    raise ValueError(name)


# (what happens to the loss at that step): inf and nan gradients, a huge loss that overflows
POISON = {2: INF, 5: NAN, 6: 1e38}


def _train(lib, opt_name, explicit_unscale, steps=9):
    model = _model(lib)
    params = list(model.parameters())
    opt = _optimizer(lib, opt_name, params)
    scaler = lib.amp.GradScaler("cpu", init_scale=2.0**8, growth_interval=3)
    x = lib.tensor(X)
    record = []
    for step in range(steps):
        opt.zero_grad()
        loss = model(x).pow(2).mean()
        if step in POISON:
            loss = loss * POISON[step]
        scaled = scaler.scale(loss)
        scaled.backward()
        norm = None
        if explicit_unscale:
            scaler.unscale_(opt)
            norm = lib.nn.utils.clip_grad_norm_(params, max_norm=0.5)
        ret = scaler.step(opt)
        found = {str(d): t.item() for d, t in scaler._found_inf_per_device(opt).items()}
        scaler.update()
        record.append(
            {
                "ret": ret,
                "norm": None if norm is None else norm.item(),
                "found": found,
                "scaled": scaled.detach(),
                "params": [p.detach().clone() for p in params],
                "grads": [p.grad.clone() for p in params],
                "state": scaler.state_dict(),
                "scale": scaler._scale.clone(),
                "versions": (
                    _versions(*params),
                    _versions(*(p.grad for p in params)),
                    _versions(scaler._scale, scaler._growth_tracker),
                ),
                "grad_fn": scaled.grad_fn.name(),
            }
        )
    return record


def _compare_records(t_rec, g_rec):
    for step, (t, g) in enumerate(zip(t_rec, g_rec)):
        where = f"step {step}"
        assert g["ret"] == t["ret"], where
        assert g["state"] == t["state"], where  # the scale and tracker exactly
        assert g["found"] == t["found"], where
        assert g["versions"] == t["versions"], where
        assert g["grad_fn"] == t["grad_fn"], where
        np.testing.assert_array_equal(host(g["scale"]), host(t["scale"]))
        if t["norm"] is None or np.isnan(t["norm"]):
            assert (g["norm"] is None) == (t["norm"] is None), where
        else:
            np.testing.assert_allclose(g["norm"], t["norm"], rtol=1e-5, err_msg=where)
        np.testing.assert_allclose(host(g["scaled"]), host(t["scaled"]), rtol=1e-5, err_msg=where)
        for a, b in zip(t["params"] + t["grads"], g["params"] + g["grads"]):
            np.testing.assert_allclose(host(b), host(a), rtol=1e-5, atol=1e-6, err_msg=where)


@pytest.mark.parametrize("opt_name", ["sgd", "adam"])
@pytest.mark.parametrize("explicit_unscale", [False, True])
def test_training_loop(opt_name, explicit_unscale):
    t_rec = _train(torch, opt_name, explicit_unscale)
    g_rec = _train(leafgrad, opt_name, explicit_unscale)
    _compare_records(t_rec, g_rec)
    scales = [r["state"]["scale"] for r in t_rec]
    assert scales == [256.0, 256.0, 128.0, 128.0, 128.0, 64.0, 32.0, 32.0, 32.0]
    skipped = [r["ret"] is None and r["found"] == {"cpu": 1.0} for r in t_rec]
    assert skipped == [False, False, True, False, False, True, True, False, False]


def test_growth_after_growth_interval():
    def run(lib):
        p = lib.nn.Parameter(lib.tensor([1.0, -2.0]))
        opt = lib.optim.SGD([p], lr=0.01)
        scaler = lib.amp.GradScaler("cpu", init_scale=2.0, growth_factor=3.0, growth_interval=2)
        seen = []
        for _ in range(5):
            opt.zero_grad()
            scaler.scale((p * p).sum()).backward()
            scaler.step(opt)
            scaler.update()
            seen.append((scaler.get_scale(), scaler._get_growth_tracker(), p.detach().clone()))
        return seen

    both(run)


def test_training_loop_fused_adam():
    _compare_records(
        _train(torch, "adam_fused", False, 4), _train(leafgrad, "adam_fused", False, 4)
    )


class _Scaling:
    """An optimizer that unscales and skips itself (``_step_supports_amp_scaling``)."""

    def __init__(self, lib, params, with_kwarg):
        self.lib, self.param_groups, self.with_kwarg = lib, [{"params": params}], with_kwarg
        self._step_supports_amp_scaling = True
        self.seen = []

    def step(self, grad_scaler=None):
        if grad_scaler is not None:
            self.seen.append(("kwarg", grad_scaler.get_scale()))
            return "stepped"
        scale, found = getattr(self, "grad_scale", None), self.found_inf
        self.seen.append((None if scale is None else scale.item(), found.item()))
        return "stepped"


class _NoKwarg(_Scaling):
    def step(self):
        return super().step()


@pytest.mark.parametrize("with_kwarg", [False, True])
@pytest.mark.parametrize("unscale_first", [False, True])
def test_step_supports_amp_scaling(with_kwarg, unscale_first):
    def run(lib):
        p = lib.nn.Parameter(lib.tensor([1.0, 2.0]))
        opt = (_Scaling if with_kwarg else _NoKwarg)(lib, [p], with_kwarg)
        scaler = lib.amp.GradScaler("cpu", init_scale=4.0)
        out = []
        for poison in (1.0, INF):
            p.grad = None
            scaler.scale((p * poison).sum()).backward()
            if unscale_first:
                scaler.unscale_(opt)
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                out.append(scaler.step(opt))
            out.append([(w.category.__name__, str(w.message)) for w in caught])
            out.append((hasattr(opt, "grad_scale"), hasattr(opt, "found_inf")))
            out.append(p.grad.clone())
            scaler.update()
            out.append(scaler.state_dict())
        out.append(opt.seen)
        return out

    both(run)


def test_two_optimizers_share_one_update():
    def run(lib):
        a = lib.nn.Parameter(lib.tensor([1.0, 2.0]))
        b = lib.nn.Parameter(lib.tensor([3.0]))
        opt_a, opt_b = lib.optim.SGD([a], lr=0.1), lib.optim.SGD([b], lr=0.1)
        scaler = lib.amp.GradScaler("cpu", init_scale=8.0, growth_interval=1)
        out = []
        for poison in (1.0, INF, 1.0):
            opt_a.zero_grad()
            opt_b.zero_grad()
            scaler.scale([(a * a).sum(), (b * poison).sum()])[0].backward()
            scaler.scale((b * b * poison).sum()).backward()
            out.append((scaler.step(opt_a), scaler.step(opt_b)))
            scaler.update()
            out.append((a.detach().clone(), b.detach().clone(), scaler.get_scale()))
        return out

    both(run)


def test_fp16_and_mixed_gradients():
    def run(lib):
        h = lib.nn.Parameter(lib.tensor([1.0, 2.0], dtype=lib.float16))
        f = lib.nn.Parameter(lib.tensor([1.0, 2.0], dtype=lib.float64))
        b = lib.nn.Parameter(lib.tensor([1.0, 2.0], dtype=lib.bfloat16))
        out = []
        opt = lib.optim.SGD([f, b], lr=0.5)
        scaler = lib.amp.GradScaler("cpu", init_scale=4.0)
        scaler.scale([(f * f).sum(), (b * 3).sum()])[0].backward()
        scaler.scale((b * 3).sum()).backward()
        out.append(scaler.step(opt))
        found = {str(d): t for d, t in scaler._found_inf_per_device(opt).items()}
        out.extend([f.grad, b.grad, f.detach(), b.detach(), found])
        fp16 = lib.optim.SGD([h], lr=0.5)
        (h * 2).sum().backward()
        try:
            scaler.step(fp16)
        except ValueError as err:
            out.append(str(err))
        return out

    both(run)


# --- GradScaler: scale() ----------------------------------------------------------------------


def test_scale_outputs():
    def run(lib):
        scaler = lib.amp.GradScaler("cpu", init_scale=3.0)
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x.half()
        one = scaler.scale(x)
        many = scaler.scale([x, (y, [x * 2])])
        tup = scaler.scale((x,))
        gen = scaler.scale(t for t in (x, y))
        out = [one, one.grad_fn.name(), many, tup, type(gen).__name__, list(gen)]
        out.append((scaler._scale, scaler._growth_tracker))
        try:
            scaler.scale([x, 3])
        except ValueError as err:
            out.append(str(err))
        try:
            scaler.scale(3)
        except ValueError as err:
            out.append(str(err))
        return out

    both(run)


# --- GradScaler: misuse -----------------------------------------------------------------------


def _one_step(lib, scaler, opt, p):
    opt.zero_grad()
    scaler.scale((p * p).sum()).backward()


@pytest.mark.parametrize(
    "case",
    [
        "unscale_twice",
        "unscale_after_step",
        "step_twice",
        "closure",
        "update_without_scale",
        "step_without_scale",
        "unscale_without_scale",
        "update_without_step",
        "update_bad_new_scale",
        "growth_factor",
        "backoff_factor",
        "load_empty",
        "pickle_mid_iteration",
    ],
)
def test_misuse(case):
    def run(lib):
        p = lib.nn.Parameter(lib.tensor([1.0, 2.0]))
        opt = lib.optim.SGD([p], lr=0.1)
        scaler = lib.amp.GradScaler("cpu")
        fresh = lib.amp.GradScaler("cpu")
        if case == "growth_factor":
            return lib.amp.GradScaler("cpu", growth_factor=1.0)
        if case == "backoff_factor":
            return lib.amp.GradScaler("cpu", backoff_factor=1.0)
        if case == "update_without_scale":
            return fresh.update()
        if case == "step_without_scale":
            return fresh.step(opt)
        if case == "unscale_without_scale":
            return fresh.unscale_(opt)
        if case == "load_empty":
            return scaler.load_state_dict({})
        _one_step(lib, scaler, opt, p)
        if case == "unscale_twice":
            scaler.unscale_(opt)
            return scaler.unscale_(opt)
        if case == "unscale_after_step":
            scaler.step(opt)
            return scaler.unscale_(opt)
        if case == "step_twice":
            scaler.step(opt)
            return scaler.step(opt)
        if case == "closure":
            return scaler.step(opt, closure=lambda: None)
        if case == "update_without_step":
            return scaler.update()
        if case == "update_bad_new_scale":
            out = []
            for bad in (lib.ones(2), lib.ones((), requires_grad=True)):
                try:
                    scaler.update(bad)
                except AssertionError as err:
                    out.append(str(err))
            return out
        if case == "pickle_mid_iteration":
            scaler.step(opt)
            return pickle.dumps(scaler)
        raise ValueError(case)

    both(run)


def test_update_new_scale_and_state_dict():
    def run(lib):
        p = lib.nn.Parameter(lib.tensor([1.0, 2.0]))
        opt = lib.optim.SGD([p], lr=0.1)
        scaler = lib.amp.GradScaler("cpu", init_scale=16.0, growth_interval=5)
        out = [scaler.state_dict(), scaler.get_scale(), scaler._get_growth_tracker()]
        _one_step(lib, scaler, opt, p)
        scaler.step(opt)
        scaler.update(3.0)  # a float fills the scale
        out.append((scaler.state_dict(), scaler._scale._version))
        _one_step(lib, scaler, opt, p)
        scaler.step(opt)
        new = lib.tensor([5.0])
        scaler.update(new)  # a tensor is copied
        new.fill_(7.0)
        out.append((scaler.state_dict(), scaler._scale._version))
        scaler.set_growth_factor(4.0)
        scaler.set_backoff_factor(0.25)
        scaler.set_growth_interval(7)
        out.append(
            (scaler.get_growth_factor(), scaler.get_backoff_factor(), scaler.get_growth_interval())
        )
        state = scaler.state_dict()
        other = lib.amp.GradScaler("cpu")
        other.load_state_dict(state)  # before its first scale(): kept as the initial values
        out.append((other.state_dict(), other._scale))
        _one_step(lib, other, opt, p)
        out.append((other._scale, other._growth_tracker))
        other.load_state_dict({**state, "scale": 2.0, "_growth_tracker": 3})  # fills them
        out.append((other._scale, other._growth_tracker, other._scale._version))
        return out

    both(run)


# --- GradScaler: disabled, no CUDA, deprecated spellings --------------------------------------


def test_disabled_scaler():
    def run(lib):
        p = lib.nn.Parameter(lib.tensor([1.0, 2.0]))
        opt = lib.optim.SGD([p], lr=0.5)
        scaler = lib.amp.GradScaler("cpu", enabled=False, growth_factor=0.5)  # not checked
        loss = (p * p).sum()
        assert scaler.scale(loss) is loss
        loss.backward()
        assert scaler.unscale_(opt) is None
        ret = scaler.step(opt)
        scaler.update()
        scaler.load_state_dict({})
        return (
            ret,
            p.detach(),
            scaler.state_dict(),
            scaler.get_scale(),
            scaler._get_growth_tracker(),
            scaler.is_enabled(),
            sorted(vars(scaler)),
            pickle.loads(pickle.dumps(scaler)).is_enabled(),
        )

    both(run)


def _warned(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = fn()
    return result, [(w.category.__name__, str(w.message)) for w in caught]


@pytest.mark.skipif(leafgrad._device.gpu_count() > 0, reason="leafgrad has a GPU here")
def test_cuda_unavailable_and_deprecated_spellings(monkeypatch):
    monkeypatch.setenv("LEAFGRAD_VIRTUAL_CUDA", "0")  # as PyTorch here: no CUDA
    results = []
    for lib in LIBS:
        got = []
        for make in (
            lambda lib=lib: lib.amp.GradScaler(),
            lambda lib=lib: lib.amp.GradScaler("cuda", enabled=False),
            lambda lib=lib: lib.cuda.amp.GradScaler(init_scale=4.0),
            lambda lib=lib: lib.cpu.amp.GradScaler(init_scale=4.0, growth_interval=3),
            lambda lib=lib: lib.amp.GradScaler("cpu"),
        ):
            scaler, warned = _warned(make)
            got.append((warned, scaler.is_enabled(), scaler._device, scaler.state_dict()))
        got.append(lib.cuda.amp.amp_definitely_not_available())
        got.append(issubclass(lib.cuda.amp.GradScaler, lib.amp.GradScaler))
        got.append(issubclass(lib.cpu.amp.GradScaler, lib.amp.GradScaler))
        results.append(got)
    assert results[1] == results[0]


def test_virtual_cuda_scaler():
    """With the virtual cuda device, a "cuda" scaler is enabled and its tensors live there."""
    L = leafgrad
    if not L.cuda.is_available():
        pytest.skip("no cuda device (virtual or real)")
    p = L.nn.Parameter(L.tensor([1.0, -2.0], device="cuda"))
    opt = L.optim.SGD([p], lr=0.5)
    scaler = L.amp.GradScaler(init_scale=4.0, growth_interval=1)
    for poison in (1.0, INF):
        opt.zero_grad()
        scaler.scale((p * p * poison).sum()).backward()
        scaler.step(opt)
        assert set(map(str, scaler._found_inf_per_device(opt))) == {"cuda:0"}
        scaler.update()
    assert scaler._scale.device.type == "cuda"
    assert scaler.state_dict()["scale"] == 4.0  # grown to 8, backed off to 4
    assert p.tolist() == [0.0, 0.0]


# --- pickling ---------------------------------------------------------------------------------


def test_pickling():
    def run(lib):
        p = lib.nn.Parameter(lib.tensor([1.0, 2.0]))
        opt = lib.optim.SGD([p], lr=0.1)
        scaler = lib.amp.GradScaler("cpu", init_scale=8.0, growth_interval=1)
        fresh = pickle.loads(pickle.dumps(scaler))  # before the first scale()
        _one_step(lib, scaler, opt, p)
        scaler.step(opt)
        scaler.update()
        copy = pickle.loads(pickle.dumps(scaler))
        out = [
            fresh.state_dict(),
            fresh._scale,
            copy.state_dict(),
            copy._scale,
            copy._growth_tracker,
            copy._init_scale,
            copy._init_growth_tracker,
            type(copy._per_optimizer_states).__name__,
            len(copy._per_optimizer_states),
            scaler._scale,  # pickling leaves the original as it was
        ]
        _one_step(lib, copy, opt, p)
        out.append((copy._scale, copy._growth_tracker))
        return out

    both(run)


def test_opt_state_and_exports():
    for lib in LIBS:
        assert [s.name for s in lib.amp.grad_scaler.OptState] == ["READY", "UNSCALED", "STEPPED"]
        assert lib.amp.grad_scaler.__all__ == ["OptState", "GradScaler"]
        assert lib.amp.GradScaler is lib.amp.grad_scaler.GradScaler
        assert "GradScaler" in lib.amp.__all__ and "GradScaler" in lib.cuda.amp.__all__
    assert leafgrad.amp.__all__ == torch.amp.__all__
    assert leafgrad.cuda.amp.__all__ == torch.cuda.amp.__all__
