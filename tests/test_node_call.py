"""Calling a node: PyTorch's C++ nodes are callable (``y.grad_fn(torch.ones(2))`` runs the node's
backward on that gradient, no hooks, recorded when grad mode is on; one result, or a tuple where
the node has other than one); a custom Function's node is not. Also the node's sequence number
methods."""

from __future__ import annotations

import pytest
from conftest import both

# name -> (the node, made in grad mode; the arguments of the call)
CALLS = {
    "exp": (lambda M, x: x.exp().grad_fn, lambda M: (M.ones(2),)),
    "exp_none": (lambda M, x: x.exp().grad_fn, lambda M: (None,)),
    "exp_wrong_size": (lambda M, x: x.exp().grad_fn, lambda M: (M.ones(3),)),
    "exp_two_args": (lambda M, x: x.exp().grad_fn, lambda M: (M.ones(2), M.ones(2))),
    "exp_no_args": (lambda M, x: x.exp().grad_fn, lambda M: ()),
    "exp_number": (lambda M, x: x.exp().grad_fn, lambda M: (3,)),
    "exp_grad_requires_grad": (
        lambda M, x: x.exp().grad_fn,
        lambda M: (M.ones(2, requires_grad=True),),
    ),
    "unbind_one": (lambda M, x: x.unbind()[0].grad_fn, lambda M: (M.tensor(1.0),)),
    "unbind_none": (lambda M, x: x.unbind()[0].grad_fn, lambda M: (M.tensor(1.0), None)),
    "unbind_both": (
        lambda M, x: x.unbind()[0].grad_fn,
        lambda M: (M.tensor(1.0), M.tensor(2.0)),
    ),
    "sum": (lambda M, x: x.sum().grad_fn, lambda M: (M.tensor(2.0),)),
    "mul_number": (lambda M, x: (x * 2).grad_fn, lambda M: (M.ones(2),)),
    "mul_tensors": (
        lambda M, x: (x * x.detach().requires_grad_()).grad_fn,
        lambda M: (M.ones(2),),
    ),
    "dot": (lambda M, x: (x @ x).grad_fn, lambda M: (M.tensor(1.0),)),
    "sin": (lambda M, x: x.sin().grad_fn, lambda M: (M.ones(2),)),
    "tanh": (lambda M, x: x.tanh().grad_fn, lambda M: (M.ones(2),)),
    "view": (lambda M, x: x.view(2, 1).grad_fn, lambda M: (M.ones(2, 1),)),
    "select": (lambda M, x: x[0].grad_fn, lambda M: (M.tensor(3.0),)),
    "clone_mul_": (lambda M, x: x.clone().mul_(2).grad_fn, lambda M: (M.ones(2),)),
    "copy_slices": (lambda M, x: x.clone()[0].mul_(2).grad_fn, lambda M: (M.tensor(1.0),)),
    "accumulate": (lambda M, x: x.sum().grad_fn.next_functions[0][0], lambda M: (M.ones(2),)),
    "released": (
        lambda M, x: (lambda y: (y.sum().backward(), y.grad_fn)[1])(x.exp()),
        lambda M: (M.ones(2),),
    ),
}


@pytest.mark.parametrize("grad_mode", [True, False])
@pytest.mark.parametrize("name", sorted(CALLS))
def test_calling_a_node(name, grad_mode):
    make, args = CALLS[name]

    def fn(M):
        x = M.tensor([0.5, 2.0], requires_grad=True)
        node = make(M, x)
        grads = args(M)
        with M.set_grad_enabled(grad_mode):
            out = node(*grads)
        return out, x.grad

    both(fn)


def test_node_methods():
    def fn(M):
        x = M.ones(2, requires_grad=True)
        a, b = x.exp().grad_fn, x.sin().grad_fn
        return callable(a), a._sequence_nr() < b._sequence_nr(), a.requires_grad

    both(fn)


def test_set_sequence_nr():
    def fn(M):
        x = M.ones(2, requires_grad=True)
        node = x.exp().grad_fn
        node._set_sequence_nr(5)
        return node._sequence_nr()

    both(fn)


def test_custom_function_node_is_not_callable():
    def fn(M):
        class Double(M.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g * 3

        x = M.ones(2, requires_grad=True)
        node = Double.apply(x).grad_fn
        return callable(node), node.apply(M.ones(2))

    both(fn)


def test_dir_of_nodes_shows_pytorch_attributes():
    """What completion offers in a notebook: PyTorch's node API and saved values, not
    leafgrad's internals (PyTorch's ``_input_metadata`` and ``_register_hook_dict`` aside)."""

    def fn(M):
        x = M.ones(2, requires_grad=True)
        nodes = [
            x.exp().grad_fn,
            x.sum().grad_fn.next_functions[0][0],
            (x * x).grad_fn,
            x.clone()[0].mul_(2).grad_fn,
            x.pow(2).grad_fn,
        ]
        hidden = {"_input_metadata", "_register_hook_dict"}
        return [[n for n in dir(node) if n not in hidden] for node in nodes]

    both(fn)
