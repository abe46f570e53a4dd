"""Saving and loading: round trips in both formats, torch.save files read by leafgrad, leafgrad's
torch-format files read by ``torch.load(weights_only=True)``, shared storages, safety."""

from __future__ import annotations

import io
import os
import pickle
import struct
import zipfile
from collections import OrderedDict

import numpy as np
import pytest
import torch
from conftest import DTYPE_NAMES, both, host, lg, same, same_tensor

from leafgrad import serialization as S

FORMATS = ["leafgrad", "torch"]


def _roundtrip(m, obj, fmt="leafgrad", **load_kw):
    """Save ``obj`` with module ``m``'s save (leafgrad: in format ``fmt``) and load it back."""
    buf = io.BytesIO()
    if m is torch:
        torch.save(obj, buf)
        buf.seek(0)
        return torch.load(buf, weights_only=True, **load_kw)
    S.save(obj, buf, format=fmt)
    buf.seek(0)
    return S.load(buf, **load_kw)


def _values(m, name):
    dtype = getattr(m, name)
    if name == "bool":
        return m.tensor([[True, False, True], [False, False, True]])
    return (m.arange(6, dtype=m.float64).reshape(2, 3) * 1.5 + 0.25).to(dtype)


# --- round trips -----------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("name", DTYPE_NAMES)
def test_roundtrip_every_dtype(name, fmt):
    both(lambda m: _roundtrip(m, _values(m, name), fmt), exact=True)


@pytest.mark.parametrize("fmt", FORMATS)
def test_roundtrip_zero_dim_empty_and_requires_grad(fmt):
    def fn(m):
        obj = {
            "scalar": m.tensor(2.5, dtype=m.float64),
            "empty": m.zeros(0, 3),
            "empty_int": m.zeros(0, dtype=m.int64),
            "leaf": m.tensor([1.0, 2.0], requires_grad=True),
            "big": m.tensor([2**40, -(2**40)]),
        }
        return _roundtrip(m, obj, fmt)

    both(fn, exact=True)


def test_roundtrip_float_values_exact_including_nan_inf():
    def fn(m):
        t = m.tensor([float("nan"), float("inf"), -float("inf"), -0.0, 1e-45, 3.4e38])
        return _roundtrip(m, {"t": t, "nan": float("nan"), "inf": float("-inf")})

    t, g = both(fn, compare=False)
    np.testing.assert_array_equal(host(g["t"]), host(t["t"]))
    assert np.signbit(host(g["t"])[3])
    assert g["nan"] != g["nan"] and g["inf"] == float("-inf")


@pytest.mark.parametrize("fmt", FORMATS)
def test_nested_structures_keep_their_types(fmt):
    def fn(m):
        sd = OrderedDict(weight=m.ones(2, 3), bias=m.zeros(2))
        sd._metadata = OrderedDict({"": {"version": 1}})
        opt = {
            "state": {0: {"step": m.tensor(3.0), "exp_avg": m.ones(2)}, 1: {}},
            "param_groups": [{"lr": 0.1, "betas": (0.9, 0.999), "params": [0, 1], "foreach": None}],
        }
        obj = {"model": sd, "opt": opt, "epoch": 7, "name": "run", "flag": True, "c": 1 + 2j}
        obj["dtype"] = m.float16
        obj["size"] = m.Size([2, 3])
        obj["raw"] = b"\x00\xffab"
        out = _roundtrip(m, obj, fmt)
        assert type(out["model"]) is OrderedDict
        assert out["model"]._metadata == {"": {"version": 1}}
        assert list(out["opt"]["state"]) == [0, 1]
        assert type(out["opt"]["param_groups"][0]["betas"]) is tuple
        return out

    both(fn, exact=True)


def test_sets_frozensets_and_bytearrays_in_leafgrad_format():
    obj = {"s": {1, 2}, "fs": frozenset({"a"}), "ba": bytearray(b"xy"), "l": [None, [1.5]]}
    assert _roundtrip(lg, obj) == obj


def test_unsupported_objects_are_refused_when_saving():
    class Thing:
        pass

    for fmt in FORMATS:
        with pytest.raises(TypeError, match="cannot save an object of type"):
            S.save({"x": Thing()}, io.BytesIO(), format=fmt)
    loop: list = []
    loop.append(loop)
    with pytest.raises(ValueError, match="contains itself"):
        S.save(loop, io.BytesIO())


def test_save_and_load_through_paths(tmp_path):
    path = tmp_path / "ckpt.pt"
    S.save({"w": lg.ones(3)}, path)
    same_tensor(torch.ones(3), S.load(str(path))["w"], exact=True)
    S.save({"w": lg.ones(3)}, str(path), format="torch")
    same_tensor(torch.load(path, weights_only=True)["w"], lg.ones(3), exact=True)


# --- shared storages (Note [Shared storages]) -----------------------------------------------


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_tensor_saved_twice_loads_as_one_object(fmt):
    t = lg.ones(3)
    out = _roundtrip(lg, {"a": t, "b": [t, (t,)]}, fmt)
    assert out["a"] is out["b"][0] is out["b"][1][0]


@pytest.mark.parametrize("fmt", FORMATS)
def test_views_load_sharing_their_base_storage(fmt):
    def fn(m):
        x = m.arange(12.0).reshape(3, 4)
        obj = {"x": x, "col": x[:, 1], "tail": x[1:, ::2], "t": x.t(), "d": x.detach()}
        out = _roundtrip(m, obj, fmt)
        strides = {k: v.stride() for k, v in out.items()}
        with m.no_grad():
            out["x"].mul_(10)  # seen through every other tensor of the storage
        out["col"][0] = -1.0  # and a write through a window is seen by the base
        return out, strides, [v._base is None for v in out.values()]

    both(fn, exact=True)


def test_a_view_saved_alone_loads_with_torch_strides():
    def fn(m):
        x = m.arange(24.0).reshape(2, 3, 4)
        return _roundtrip(m, {"v": x.permute(2, 0, 1)[1:3]})["v"].stride()

    both(fn)


def test_loaded_shared_tensors_work_with_autograd_and_in_place_ops():
    def fn(m):
        x = m.arange(6.0).reshape(2, 3)
        out = _roundtrip(m, {"x": x, "row": x[1]}, "leafgrad" if m is lg else None)
        w = out["row"].clone().requires_grad_()
        (w * out["x"][0]).sum().backward()
        out["row"].add_(1)
        return w.grad, out["x"], out["row"]._version, out["x"]._version

    both(fn, exact=True)


def test_conjugate_views_are_saved_as_copies():
    z = lg.tensor([[1 + 2j, 3 - 1j]])
    out = _roundtrip(lg, {"z": z, "h": z.mH})
    same_tensor(torch.tensor([[1 - 2j], [3 + 1j]]), out["h"], exact=True)


@pytest.mark.parametrize("fmt", FORMATS)
def test_parameters_round_trip_as_parameters_when_the_class_exists(fmt):
    cls = S._parameter_class()
    if cls is None:
        pytest.skip("leafgrad.nn.Parameter is not written yet")
    p = cls(lg.ones(2, 3))
    out = _roundtrip(lg, {"p": p, "again": p, "frozen": cls(lg.zeros(2), requires_grad=False)}, fmt)
    assert type(out["p"]) is cls and out["p"] is out["again"]
    assert out["p"].requires_grad and not out["frozen"].requires_grad


# --- PyTorch's files -------------------------------------------------------------------------


def _torch_file(obj) -> io.BytesIO:
    buf = io.BytesIO()
    torch.save(obj, buf)
    buf.seek(0)
    return buf


def test_torch_state_dicts_and_optimizer_state_load_exactly():
    torch.manual_seed(0)
    net = torch.nn.Sequential(
        torch.nn.Conv2d(2, 3, 3), torch.nn.Flatten(), torch.nn.Linear(12, 2)
    ).double()
    opt = torch.optim.Adam(net.parameters(), lr=0.01)
    net(torch.randn(4, 2, 4, 4, dtype=torch.float64)).sum().backward()
    opt.step()
    ckpt = {"model": net.state_dict(), "opt": opt.state_dict(), "epoch": 3}
    out = S.load(_torch_file(ckpt))
    same(ckpt, out, exact=True)
    assert type(out["model"]) is OrderedDict and out["model"]._metadata == ckpt["model"]._metadata
    assert list(out["model"]) == list(ckpt["model"])
    assert out["opt"]["param_groups"] == ckpt["opt"]["param_groups"]


def test_torch_parameters_and_shared_views_load():
    x = torch.arange(10.0)
    obj = {"p": torch.nn.Parameter(torch.ones(2)), "x": x, "w": x[2:8].view(2, 3), "again": x}
    out = S.load(_torch_file(obj))
    assert out["again"] is out["x"]
    assert out["p"].requires_grad and out["p"].is_leaf
    out["x"].add_(1)
    same_tensor(obj["w"] + 1, out["w"], exact=True, autograd=False)


@pytest.mark.parametrize("name", DTYPE_NAMES)
def test_leafgrad_torch_format_loads_in_torch_weights_only(name):
    x = _values(lg, name)
    buf = io.BytesIO()
    S.save_torch({"x": x, "v": x[:, 1:], "i": 1, "seq": [x.reshape(-1)]}, buf)
    buf.seek(0)
    out = torch.load(buf, weights_only=True)
    tx = _values(torch, name)
    same_tensor(out["x"], x, exact=True)
    same_tensor(out["v"], x[:, 1:], exact=True)
    assert out["v"].untyped_storage().data_ptr() == out["x"].untyped_storage().data_ptr()
    assert out["seq"][0].untyped_storage().data_ptr() == out["x"].untyped_storage().data_ptr()
    assert out["x"].dtype == tx.dtype and out["i"] == 1


def test_leafgrad_torch_format_is_read_by_torch_with_every_value_kind():
    buf = io.BytesIO()
    sd = OrderedDict(w=lg.ones(2, requires_grad=True))
    sd._metadata = {"": {"version": 1}}
    obj = {
        "sd": sd,
        0: {"big": 2**70, "neg": -5, "mid": 40000, "f": 0.1, "c": 2 - 1j, "none": None},
        "dt": lg.bfloat16,
        "dev": lg.device("cpu"),
        "size": lg.Size([3]),
        "b": b"\x00\x01",
        "set": {1, 2},
        "many": list(range(1500)),
    }
    S.save(obj, buf, format="torch")
    buf.seek(0)
    out = torch.load(buf, weights_only=True)
    assert out["sd"]._metadata == {"": {"version": 1}} and out["sd"]["w"].requires_grad
    assert out[0] == obj[0] and out["dt"] is torch.bfloat16 and out["dev"] == torch.device("cpu")
    assert out["size"] == torch.Size([3]) and out["b"] == b"\x00\x01" and out["set"] == {1, 2}
    assert out["many"] == obj["many"]


def test_leafgrad_state_dict_round_trips_through_torch():
    torch.manual_seed(0)
    net = torch.nn.Linear(3, 2)
    sd = S.load(_torch_file(net.state_dict()))
    buf = io.BytesIO()
    S.save_torch(sd, buf)
    buf.seek(0)
    back = torch.load(buf, weights_only=True)
    fresh = torch.nn.Linear(3, 2)
    fresh.load_state_dict(back)
    for k, v in net.state_dict().items():
        assert torch.equal(fresh.state_dict()[k], v)


# --- devices ---------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", FORMATS)
def test_map_location_forms(fmt):
    t = lg.ones(2, device="cuda")  # the virtual cuda device of the test suite
    buf = io.BytesIO()
    S.save({"t": t}, buf, format=fmt)

    def load(map_location):
        buf.seek(0)
        return S.load(buf, map_location=map_location)["t"].device

    assert str(load(None)) == "cuda:0"
    assert str(load("cpu")) == "cpu"
    assert str(load(lg.device("cpu"))) == "cpu"
    assert str(load({"cuda:0": "cpu"})) == "cpu"
    assert str(load(lambda storage, loc: storage)) == "cpu"
    assert str(load(lambda storage, loc: storage.cuda(0))) == "cuda:0"
    assert str(load(lambda storage, loc: None)) == "cuda:0"
    with pytest.raises(RuntimeError, match=r"torch.cuda.device_count\(\) is 1"):
        load("cuda:3")
    with pytest.raises(RuntimeError, match="don't know how to restore data location"):
        load("mps")
    with pytest.raises(TypeError, match="map_location should be"):
        load(3)
    with pytest.raises(ZeroDivisionError):  # the callable's own error, unchanged
        load(lambda storage, loc: 1 / 0)


def test_torch_files_tagged_cuda_load_with_map_location():
    def to_cuda(pkl: bytes) -> bytes:
        return pkl.replace(b"X\x03\x00\x00\x00cpu", b"X\x04\x00\x00\x00cuda")

    data = _rezip(_torch_file({"t": torch.ones(2)}).getvalue(), {"data.pkl": to_cuda})
    out = S.load(io.BytesIO(data))
    assert str(out["t"].device) == "cuda:0"
    assert str(S.load(io.BytesIO(data), map_location="cpu")["t"].device) == "cpu"


def _rezip(data: bytes, replace: dict) -> bytes:
    """The zip ``data`` rewritten with some members replaced (bytes, or a function of them);
    names are matched with or without the archive's top folder."""
    src = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        for name in src.namelist():
            new = replace.get(name, replace.get(name.split("/", 1)[-1], None))
            body = src.read(name)
            z.writestr(name, new(body) if callable(new) else body if new is None else new)
    return out.getvalue()


# --- safety and corrupt files ----------------------------------------------------------------


def _torch_zip_with_pickle(payload: bytes) -> io.BytesIO:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("archive/data.pkl", payload)
        z.writestr("archive/byteorder", "little")
        z.writestr("archive/version", "3\n")
    buf.seek(0)
    return buf


class _Evil:
    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (os.system, (f"touch {self.path}",))


def test_malicious_pickles_are_refused_without_running(tmp_path):
    marker = tmp_path / "pwned"
    payloads = [
        pickle.dumps({"a": _Evil(marker)}, protocol=2),
        pickle.dumps({"a": _Evil(marker)}, protocol=4),  # STACK_GLOBAL
        b"\x80\x02cbuiltins\neval\nX\x0b\x00\x00\x00print('hi')\x85R.",
        b"\x80\x02ctorch._utils\n_rebuild_tensor_v2\n)\x81.",  # NEWOBJ: never allowed
        b"\x80\x02}(X\x01\x00\x00\x00a\x82\x01u.",  # EXT1: not in the opcode table
    ]
    for payload in payloads:
        with pytest.raises(pickle.UnpicklingError, match="Weights only load failed"):
            S.load(_torch_zip_with_pickle(payload), weights_only=False)
    # a torch.save file holding an object that would run code is refused the same way
    buf = io.BytesIO()
    torch.save({"a": _Evil(marker)}, buf)
    buf.seek(0)
    with pytest.raises(pickle.UnpicklingError, match="GLOBAL posix.system"):
        S.load(buf)
    assert not marker.exists()


def test_build_is_allowed_on_ordered_dicts_only():
    payload = b"\x80\x02ccollections\nOrderedDict\n)R}X\x01\x00\x00\x00aK\x01sb."
    assert S.load(_torch_zip_with_pickle(payload)).a == 1
    bad = b"\x80\x02]}X\x01\x00\x00\x00aK\x01sb."
    with pytest.raises(pickle.UnpicklingError, match="Can only build OrderedDict"):
        S.load(_torch_zip_with_pickle(bad))


@pytest.mark.parametrize("fmt", FORMATS)
def test_truncated_files_raise(fmt):
    buf = io.BytesIO()
    S.save({"w": lg.arange(1000.0), "b": lg.ones(3)}, buf, format=fmt)
    data = buf.getvalue()
    for n in (0, 3, 10, 100, len(data) // 2, len(data) - 30, len(data) - 1):
        with pytest.raises(RuntimeError):
            S.load(io.BytesIO(data[:n]))


def test_corrupt_files_raise_clear_errors():
    with pytest.raises(RuntimeError, match="not a zip archive"):
        S.load(io.BytesIO(b"hello world garbage"))
    with pytest.raises(RuntimeError, match="failed finding central directory"):
        S.load(io.BytesIO(_torch_file({"a": torch.ones(2)}).getvalue()[:200]))
    buf = io.BytesIO()
    S.save({"w": lg.ones(4)}, buf)
    good = buf.getvalue()
    for manifest in (b"{not json", b'{"format": "leafgrad", "version": 1}', b"[]"):
        z = _rezip(good, {"leafgrad.json": manifest})
        with pytest.raises(RuntimeError, match="truncated or corrupted"):
            S.load(io.BytesIO(z))
    short = _rezip(good, {"data/0": b"\x00" * 7})
    with pytest.raises(RuntimeError, match="storage 0 has wrong size"):
        S.load(io.BytesIO(short))
    newer = _rezip(good, {"leafgrad.json": b'{"format": "leafgrad", "version": 99}'})
    with pytest.raises(RuntimeError, match="format version 99"):
        S.load(io.BytesIO(newer))
    with pytest.raises(RuntimeError, match="legacy format"):
        S.load(io.BytesIO(pickle.dumps({"a": 1}, protocol=2)))


def test_torch_format_records_are_aligned_like_torch():
    buf = io.BytesIO()
    S.save_torch({"a": lg.ones(5), "b": lg.zeros(3, dtype=lg.int8)}, buf)
    data = buf.getvalue()
    for info in zipfile.ZipFile(io.BytesIO(data)).infolist():
        if "/data/" in info.filename:
            extra = struct.unpack("<H", data[info.header_offset + 28 : info.header_offset + 30])[0]
            assert (info.header_offset + 30 + len(info.filename) + extra) % 64 == 0
