"""``apply_``, ``map_``, ``map2_``, ``nonzero_static``, ``to_dense`` and ``is_set_to`` against
PyTorch: values, versions (the Python maps write through memory: no bump), texts of errors."""

from __future__ import annotations

import pytest
import torch

import leafgrad

CALLS = {
    "map_": lambda T: T.tensor([1.0, 2.0, 3.0]).map_(T.tensor([1.0, 1.0, 1.0]), lambda a, b: a + b),
    "map2_": lambda T: T.tensor([1.0, 2.0, 3.0]).map2_(
        T.ones(3), T.ones(3) * 2, lambda a, b, c: a + b + c
    ),
    "apply_int": lambda T: T.tensor([1, 2, 3]).apply_(lambda v: v * 2.7),
    "apply_bool": lambda T: T.tensor([True, False]).apply_(lambda v: not v),
    "map_broadcast": lambda T: T.ones(2, 3).map_(T.tensor([1.0, 2.0, 3.0]), lambda a, b: a * b),
    "map_too_many_dims": lambda T: T.ones(2, 3).map_(T.ones(2, 1, 3), lambda a, b: a),
    "map_requires_grad": lambda T: T.ones(3, requires_grad=True).map_(T.ones(3), lambda a, b: a),
    "map_other_requires_grad": lambda T: T.ones(3).map_(
        T.ones(3, requires_grad=True), lambda a, b: a
    ),
    "map_dtype": lambda T: T.ones(3).map_(T.ones(3, dtype=T.float64), lambda a, b: a),
    "apply_str": lambda T: T.ones(3).apply_(lambda v: "x"),
    "map2_dtype_x": lambda T: T.ones(3).map2_(
        T.ones(3, dtype=T.float64), T.ones(3), lambda a, b, c: a
    ),
    "map2_dtype_y": lambda T: T.ones(3).map2_(
        T.ones(3), T.ones(3, dtype=T.int64), lambda a, b, c: a
    ),
    "map_not_callable": lambda T: T.ones(3).map_(T.ones(3), 3),
    "apply_not_callable": lambda T: T.ones(3).apply_(3),
    "apply_int_str": lambda T: T.ones(3, dtype=T.int64).apply_(lambda v: "a"),
    "apply_overflow": lambda T: T.ones(3, dtype=T.int64).apply_(lambda v: 2**70),
    "apply_complex": lambda T: T.ones(3, dtype=T.complex64).apply_(lambda v: v * 1j),
    "apply_uint8_wraps": lambda T: T.ones(3, dtype=T.uint8).apply_(lambda v: -1),
    "apply_half": lambda T: T.ones(3, dtype=T.float16).apply_(lambda v: v / 3),
    "nonzero_static_pad": lambda T: T.nonzero_static(
        T.tensor([[0, 1], [2, 0]]), size=4, fill_value=-7
    ),
    "nonzero_static_cut": lambda T: T.tensor([0, 1, 2]).nonzero_static(size=1),
    "nonzero_static_negative": lambda T: T.nonzero_static(T.tensor([1]), size=-1),
    "nonzero_static_scalar": lambda T: T.nonzero_static(T.tensor(3.0), size=2),
    "nonzero_static_float_size": lambda T: T.nonzero_static(T.tensor([1]), size=1.5),
    "nonzero_static_nan_zero_signs": lambda T: T.nonzero_static(
        T.tensor([[float("nan"), 0.0], [-0.0, 2.0]]), size=3
    ),
    "nonzero_static_complex": lambda T: T.nonzero_static(T.tensor([0j, 1j, 0j, 2.0]), size=2),
    "nonzero_static_bool_3d": lambda T: T.nonzero_static(T.ones(2, 1, 2, dtype=T.bool), size=5),
    "nonzero_static_empty": lambda T: T.nonzero_static(T.ones(0, 3), size=2, fill_value=9),
    "to_dense_dtype": lambda T: T.ones(2, 3).to_dense(dtype=T.float64),
}


def _outcome(T, name):
    try:
        r = CALLS[name](T)
    except Exception as exc:  # noqa: BLE001 - compared
        return type(exc).__name__, str(exc)
    return r.tolist(), str(r.dtype), r._version, tuple(r.shape)


@pytest.mark.parametrize("name", sorted(CALLS))
def test_matches_pytorch(name):
    assert _outcome(leafgrad, name) == _outcome(torch, name)


def test_writes_reach_the_base_and_identity_checks():
    out = []
    for T in (torch, leafgrad):
        v = T.ones(4)
        w = v[::2]
        w.apply_(lambda x: 5.0)
        a = T.ones(4)
        x = T.ones(2, 3)
        same = (a.is_set_to(a), a.is_set_to(a.view(4)), a.is_set_to(a.view(2, 2)))
        same += (a.is_set_to(a[:2]), a.is_set_to(T.ones(4)), a.is_set_to(a.detach()))
        out.append((v.tolist(), v._version, w._version, x.to_dense() is x, same))
    assert out[1] == out[0]


def test_nonzero_static_compiles():
    """``nonzero_static`` has a fixed size, so it reads nothing back to the host: it runs inside
    ``leafgrad.compile`` and gives eager mode's rows there."""

    @leafgrad.compile
    def rows(x):
        return leafgrad.nonzero_static(x * 2, size=4, fill_value=-3)

    for data in ([[0.0, 1.5], [2.0, 0.0], [0.0, 3.0]], [[0.0] * 2] * 3, [[1.0] * 2] * 3):
        got = rows(leafgrad.tensor(data))  # the first call runs eagerly, the next ones traced
        want = torch.nonzero_static(torch.tensor(data) * 2, size=4, fill_value=-3)
        assert got.tolist() == want.tolist()
        assert str(got.dtype) == str(want.dtype)

    @leafgrad.compile
    def unsized(x):
        return x.nonzero()

    unsized(leafgrad.ones(3))
    with pytest.raises(RuntimeError, match="depends on tensor values"):
        unsized(leafgrad.ones(3))
