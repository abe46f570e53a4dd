"""PyTorch's module constants, layouts, the factories' ``layout``/``pin_memory`` arguments, the
storage-kind properties, ``new_empty_strided``, and the functions PyTorch removed but still
names (their messages), each against torch 2.13."""

from __future__ import annotations

import math
import pickle

import pytest
import torch
from conftest import both, lg


def test_constants():
    for name in ("pi", "e", "inf", "nan"):
        a, b = getattr(torch, name), getattr(lg, name)
        assert a == b or (math.isnan(a) and math.isnan(b))
    assert lg.newaxis is torch.newaxis is None
    x = lg.arange(3.0)
    assert x[lg.newaxis].shape == (1, 3)


def test_layouts_and_storage_kinds():
    t, g = torch.ones(2), lg.ones(2)
    assert repr(g.layout) == repr(t.layout) == "torch.strided"
    assert g.layout is lg.strided
    for name in ("sparse_coo", "sparse_csr", "sparse_csc", "sparse_bsr", "sparse_bsc"):
        assert repr(getattr(lg, name)) == repr(getattr(torch, name))
    assert pickle.loads(pickle.dumps(lg.strided)) is lg.strided
    for name in (
        "is_sparse is_sparse_csr is_quantized is_meta is_nested is_mkldnn is_xla is_xpu is_mps "
        "is_ipu is_vulkan is_maia is_mtia"
    ).split():
        assert getattr(g, name) is getattr(t, name) is False, name
    assert g.is_pinned() is t.is_pinned() is False


FACTORY_CALLS = {
    "strided": lambda m: m.zeros(2, layout=m.strided),
    "not_a_layout": lambda m: m.ones(2, layout="x"),
    "pin_memory_tensor": lambda m: m.tensor([1.0], pin_memory=True),
    "pin_memory_empty": lambda m: m.empty(2, pin_memory=True),
    "pin_memory_new_zeros": lambda m: m.ones(2).new_zeros(3, pin_memory=True),
    "pin_memory_false": lambda m: m.ones(2, pin_memory=False),
    "pin_memory_method": lambda m: m.ones(2).pin_memory(),
    "new_full_layout": lambda m: m.ones(2).new_full((2,), 3.0, layout=m.strided),
    "new_empty_strided": lambda m: m.ones(2).new_empty_strided((2, 3), (1, 2)).stride(),
    "new_empty_strided_kw": lambda m: (
        lambda r: (r.dtype, r.requires_grad, r.is_leaf, r.stride(), r.shape)
    )(m.ones(2, dtype=m.float64).new_empty_strided([2], [3], dtype=m.int32)),
    "new_empty_strided_grad": lambda m: (lambda r: (r.dtype, r.requires_grad, r.is_leaf))(
        m.ones(2, dtype=m.float64).new_empty_strided((2, 3), (1, 2), requires_grad=True)
    ),
}


@pytest.mark.parametrize("name", sorted(FACTORY_CALLS))
def test_factory_layout_and_pinning(name):
    if "pin_memory" in name and "false" not in name and lg.accelerator.is_available():
        # torch here has no accelerator; leafgrad (a GPU, or the tests' virtual cuda device)
        # has one but no pinned host memory: it refuses rather than return unpinned memory
        with pytest.raises(NotImplementedError, match="pinned host memory"):
            FACTORY_CALLS[name](lg)
        return
    both(lambda m: FACTORY_CALLS[name](m))


@pytest.mark.parametrize("layout", ["sparse_coo", "sparse_csr"])
def test_a_sparse_layout_is_refused_not_ignored(layout):
    with pytest.raises(NotImplementedError, match="only torch.strided"):
        lg.zeros(2, 2, layout=getattr(lg, layout))
    with pytest.raises(NotImplementedError, match="only torch.strided"):
        lg.ones(2).new_ones(2, layout=getattr(lg, layout))


REMOVED = {
    "solve": lambda m: m.solve(m.ones(2, 2), m.ones(2, 2)),
    "solve_method": lambda m: m.ones(2, 2).solve(m.ones(2, 2)),
    "solve_one_argument": lambda m: m.solve(m.ones(2, 2)),
    "lstsq": lambda m: m.lstsq(m.ones(2, 2), m.ones(2, 2)),
    "lstsq_method": lambda m: m.ones(2, 2).lstsq(m.ones(2, 2)),
    "eig": lambda m: m.eig(m.ones(2, 2)),
    "eig_method": lambda m: m.ones(2, 2).eig(True),
    "symeig": lambda m: m.symeig(m.ones(2, 2), eigenvectors=True),
    "symeig_method": lambda m: m.ones(2, 2).symeig(),
    "matrix_rank": lambda m: m.matrix_rank(m.ones(2, 2)),
    "matrix_rank_method": lambda m: m.ones(2, 2).matrix_rank(),
}


@pytest.mark.parametrize("name", sorted(REMOVED))
def test_removed_functions_raise_pytorchs_message(name):
    both(lambda m: REMOVED[name](m))


RANDINT_CALLS = {
    "high_and_size_keywords": lambda m: m.randint(high=5, size=(2,)),
    "size_then_high_keywords": lambda m: m.randint(size=(3,), high=3),
    "all_keywords": lambda m: m.randint(low=1, high=5, size=(2,)),
    "positional": lambda m: m.randint(1, 3, (2,)),
}


@pytest.mark.parametrize("name", sorted(RANDINT_CALLS))
def test_randint_keyword_forms(name):
    def run(m):
        m.manual_seed(0)
        return RANDINT_CALLS[name](m)

    both(run)


SMALL_FUNCTIONS = {
    "get_device": lambda m: m.get_device(m.ones(1)),
    "get_device_not_tensor": lambda m: m.get_device(3),
    "is_storage": lambda m: m.is_storage(m.ones(1)),
    "assert_true": lambda m: m._assert(True, "fine"),
    "assert_false": lambda m: m._assert(False, "boom"),
    "sym": lambda m: (
        m.sym_int(2.7),
        m.sym_int(-2.7),
        m.sym_float(3),
        m.sym_max(2, 3.5),
        m.sym_min(2, 3),
        m.sym_not(True),
    ),
}


@pytest.mark.parametrize("name", sorted(SMALL_FUNCTIONS))
def test_small_module_functions(name):
    both(lambda m: SMALL_FUNCTIONS[name](m))


@pytest.mark.parametrize(
    "call",
    [
        lambda m: m.logspace(0, 1, 3, layout=m.sparse_coo),
        lambda m: m.tril_indices(3, 3, layout=m.sparse_coo),
        lambda m: m.normal(0.0, 1.0, (2,), layout=m.sparse_coo),
    ],
)
def test_factories_parsing_their_own_keywords_refuse_sparse_layouts(call):
    with pytest.raises(NotImplementedError):
        call(torch)  # PyTorch has no sparse kernel for these either
    with pytest.raises(NotImplementedError, match="only torch.strided"):
        call(lg)


@pytest.mark.parametrize(
    "path", ["", "Tensor", "nn.functional", "linalg", "special", "fft"], ids=lambda p: p or "torch"
)
def test_function_names_are_pytorchs(path):
    """Note [Function names]: ``f.__name__`` of every public function both have is PyTorch's
    (``special_erf``, ``absolute`` beside ``abs``, ``log_sigmoid``); aliases stay callable."""
    t_owner, l_owner = torch, lg
    for part in filter(None, path.split(".")):
        t_owner, l_owner = getattr(t_owner, part), getattr(l_owner, part)
    compared = 0
    for name in dir(t_owner):
        ours = getattr(l_owner, name, None)
        theirs = getattr(t_owner, name, None)
        if name.startswith("_") or ours is None or isinstance(theirs, type) or not callable(theirs):
            continue
        if hasattr(theirs, "__name__") and hasattr(ours, "__name__"):
            assert ours.__name__ == theirs.__name__, name
            compared += 1
    assert compared > 20
    x = lg.tensor([-1.5, 2.0])
    assert lg.absolute(x).tolist() == lg.abs(x).tolist() == [1.5, 2.0]
    assert lg.special.erf(x).tolist() == lg.erf(x).tolist()
