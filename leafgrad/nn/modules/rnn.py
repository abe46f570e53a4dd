"""``leafgrad.nn`` recurrent layers (RNN, LSTM, GRU and their cells), as ``torch.nn.modules.rnn``.

Parameters, their names, their order and their initialisation are PyTorch's, so the same
``manual_seed`` gives the same weights. The forward pass is PyTorch's CPU algorithm written with
leafgrad ops: the input projection of a whole layer is computed at once, then each time step
adds the hidden projection and applies the gates (LSTM: i, f, g, o; GRU: r, z, n). PyTorch runs
this as fused kernels, so values and gradients agree to rounding but the recorded ``grad_fn``
nodes differ (PyTorch shows e.g. ``StackBackward0``/``MkldnnRnnLayerBackward0``).

A ``PackedSequence`` input runs PyTorch's packed layers: each step takes the rows of the
sequences still running; as sequences end, their hidden rows are set aside as final states (in
reverse, the shortest sequences start and the others' initial states join as they begin). The
output is a ``PackedSequence`` with the input's batch sizes and indices.
"""

from __future__ import annotations

import math
import numbers
import warnings

from ... import _autocast
from ... import _errors as E
from .. import functional as F
from ..parameter import Parameter
from ..utils.rnn import PackedSequence
from .module import Module

# PyTorch's CPU LSTM goes through oneDNN for float32, which has no projections, and says so.
_ONEDNN_PROJ = (
    "LSTM with projections is not supported with oneDNN. Using default implementation. "
    "(Triggered internally at /__w/pytorch/pytorch/aten/src/ATen/native/RNN.cpp:1512.)"
)

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]


def _lg():
    # The package namespace (empty, zeros, stack, cat); imported late because leafgrad imports nn.
    import leafgrad

    return leafgrad


def _uniform_(tensor, a: float, b: float) -> None:
    """``nn.init.uniform_`` (the same draws as ``Tensor.uniform_`` under ``no_grad``)."""
    from .. import init

    init.uniform_(tensor, a, b)


# --- one time step, from the pre-computed input projection ``ig`` ------------------------------
# Note [RNN step order]: PyTorch's CPU cells add the hidden projection to the input projection
# (linear_hh(h) + ig) and chunk the gates along dim 1; the same order is kept here.


def _tanh_step(ig, h, w_hh, b_hh):
    return (F.linear(h, w_hh, b_hh) + ig).tanh()


def _relu_step(ig, h, w_hh, b_hh):
    return (F.linear(h, w_hh, b_hh) + ig).relu()


def _lstm_step(ig, hc, w_hh, b_hh, w_hr=None):
    h, c = hc
    i, f, g, o = (F.linear(h, w_hh, b_hh) + ig).chunk(4, 1)
    cy = f.sigmoid() * c + i.sigmoid() * g.tanh()
    hy = o.sigmoid() * cy.tanh()
    if w_hr is not None:
        hy = hy.matmul(w_hr.t())
    return hy, cy


def _gru_step(ig, h, w_hh, b_hh):
    i_r, i_z, i_n = ig.chunk(3, 1)
    h_r, h_z, h_n = F.linear(h, w_hh, b_hh).chunk(3, 1)
    r = (h_r + i_r).sigmoid()
    z = (h_z + i_z).sigmoid()
    n = (i_n + h_n * r).tanh()
    return (h - n) * z + n


_STEPS = {"RNN_TANH": _tanh_step, "RNN_RELU": _relu_step, "GRU": _gru_step}


def _cell(mode, ig, state, params):
    """One step of any mode over a state tuple (``(h,)`` or ``(h, c)``)."""
    _, w_hh, _, b_hh, w_hr = params
    if mode == "LSTM":
        return _lstm_step(ig, state, w_hh, b_hh, w_hr)
    return (_STEPS[mode](ig, state[0], w_hh, b_hh),)


def _packed_layer(mode, ig, sizes, hidden, params):
    """PyTorch's ``PackedLayer``: forward over packed rows ``ig`` (the input projection) with
    batch sizes ``sizes``; returns (output rows, final state)."""
    lg = _lg()
    outputs, finished = [], []
    offset, last = 0, sizes[0]
    for size in sizes:
        step = ig.narrow(0, offset, size)
        offset += size
        if size < last:  # sequences that ended: their states are final
            finished.append(tuple(h.narrow(0, size, last - size) for h in hidden))
            hidden = tuple(h.narrow(0, 0, size) for h in hidden)
        last = size
        hidden = _cell(mode, step, hidden, params)
        outputs.append(hidden[0])
    finished.append(hidden)
    finished.reverse()
    final = tuple(lg.cat([f[k] for f in finished], 0) for k in range(len(hidden)))
    return lg.cat(outputs, 0), final


def _reversed_packed_layer(mode, ig, sizes, initial, params):
    """PyTorch's ``ReversedPackedLayer``: from the last step back; a sequence's initial state
    joins when its last step is reached."""
    lg = _lg()
    outputs = []
    offset, last = ig.size(0), sizes[-1]
    hidden = tuple(h.narrow(0, 0, last) for h in initial)
    for size in reversed(sizes):
        if size > last:
            hidden = tuple(
                lg.cat([h, h0.narrow(0, last, size - last)], 0) for h, h0 in zip(hidden, initial)
            )
        step = ig.narrow(0, offset - size, size)
        offset -= size
        last = size
        hidden = _cell(mode, step, hidden, params)
        outputs.append(hidden[0])
    outputs.reverse()
    return lg.cat(outputs, 0), hidden


def _mini_batch(rnn, input, batch_sizes) -> int:
    if batch_sizes is not None:
        return int(batch_sizes[0])
    return input.size(0) if rnn.batch_first else input.size(1)


class RNNBase(Module):
    """The shared parameters, checks and layer loop of ``RNN``, ``LSTM`` and ``GRU``."""

    __constants__ = [
        "mode",
        "input_size",
        "hidden_size",
        "num_layers",
        "bias",
        "batch_first",
        "dropout",
        "bidirectional",
        "proj_size",
    ]

    def __init__(
        self,
        mode: str,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        bias: bool = True,
        batch_first: bool = False,
        dropout: float = 0.0,
        bidirectional: bool = False,
        proj_size: int = 0,
        device=None,
        dtype=None,
    ) -> None:
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__()
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        num_directions = 2 if bidirectional else 1
        if (
            not isinstance(dropout, numbers.Number)
            or not 0 <= dropout <= 1
            or isinstance(dropout, bool)
        ):
            raise ValueError(
                "dropout should be a number in range [0, 1] representing the probability of an "
                "element being zeroed"
            )
        if dropout > 0 and num_layers == 1:
            warnings.warn(
                "dropout option adds dropout after all but last recurrent layer, so non-zero "
                "dropout expects num_layers greater than 1, but got "
                f"dropout={dropout} and num_layers={num_layers}",
                stacklevel=2,
            )
        if not isinstance(bias, bool):
            raise TypeError(f"bias should be of type bool, got: {type(bias).__name__}")
        if not isinstance(batch_first, bool):
            raise TypeError(
                f"batch_first should be of type bool, got: {type(batch_first).__name__}"
            )
        if not isinstance(input_size, int):
            raise TypeError(f"input_size should be of type int, got: {type(input_size).__name__}")
        if input_size <= 0:
            raise ValueError("input_size must be greater than zero")
        if not isinstance(hidden_size, int):
            raise TypeError(f"hidden_size should be of type int, got: {type(hidden_size).__name__}")
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError(
                "proj_size should be a positive integer or zero to disable projections"
            )
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        gates = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}
        if mode not in gates:
            raise ValueError("Unrecognized RNN mode: " + mode)
        gate_size = gates[mode] * hidden_size

        empty = _lg().empty
        self._flat_weights_names: list[str] = []
        self._all_weights: list[list[str]] = []
        real_hidden_size = proj_size if proj_size > 0 else hidden_size
        for layer in range(num_layers):
            for direction in range(num_directions):
                layer_input_size = input_size if layer == 0 else real_hidden_size * num_directions
                params = [
                    empty((gate_size, layer_input_size), **factory_kwargs),
                    empty((gate_size, real_hidden_size), **factory_kwargs),
                ]
                names = ["weight_ih_l{}{}", "weight_hh_l{}{}"]
                if bias:
                    params += [
                        empty(gate_size, **factory_kwargs),
                        empty(gate_size, **factory_kwargs),
                    ]
                    names += ["bias_ih_l{}{}", "bias_hh_l{}{}"]
                if proj_size > 0:
                    params.append(empty((proj_size, hidden_size), **factory_kwargs))
                    names.append("weight_hr_l{}{}")
                suffix = "_reverse" if direction == 1 else ""
                names = [n.format(layer, suffix) for n in names]
                for name, p in zip(names, params):
                    setattr(self, name, Parameter(p))
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    @property
    def _flat_weights(self) -> list:
        return [getattr(self, n, None) for n in self._flat_weights_names]

    def flatten_parameters(self) -> None:
        """A no-op: there is no cuDNN weight buffer to compact."""

    def reset_parameters(self) -> None:
        """Every parameter, in registration order, from ``U(-1/sqrt(hidden), 1/sqrt(hidden))``."""
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            _uniform_(weight, -stdv, stdv)

    @property
    def all_weights(self) -> list:
        return [[getattr(self, w) for w in weights] for weights in self._all_weights]

    def check_input(self, input, batch_sizes) -> None:
        w = self._flat_weights[0]
        if input.dtype != w.dtype:
            raise ValueError(
                f"RNN input dtype ({input.dtype}) does not match weight dtype ({w.dtype}). "
                f"Convert input: input.to({w.dtype}), or convert model: model.to({input.dtype})"
            )
        expected_input_dim = 2 if batch_sizes is not None else 3
        if input.dim() != expected_input_dim:
            raise RuntimeError(
                f"input must have {expected_input_dim} dimensions, got {input.dim()}"
            )
        if self.input_size != input.size(-1):
            raise RuntimeError(
                "input.size(-1) must be equal to input_size. Expected "
                f"{self.input_size}, got {input.size(-1)}"
            )

    def get_expected_hidden_size(self, input, batch_sizes) -> tuple[int, int, int]:
        mini_batch = _mini_batch(self, input, batch_sizes)
        num_directions = 2 if self.bidirectional else 1
        size = self.proj_size if self.proj_size > 0 else self.hidden_size
        return (self.num_layers * num_directions, mini_batch, size)

    def check_hidden_size(self, hx, expected_hidden_size, msg="Expected hidden size {}, got {}"):
        if tuple(hx.size()) != expected_hidden_size:
            raise RuntimeError(msg.format(expected_hidden_size, list(hx.size())))

    def check_forward_args(self, input, hidden, batch_sizes) -> None:
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden, self.get_expected_hidden_size(input, batch_sizes))

    def permute_hidden(self, hx, permutation):
        return hx if permutation is None else hx.index_select(1, permutation)

    def extra_repr(self) -> str:
        s = "{input_size}, {hidden_size}"
        if self.proj_size != 0:
            s += ", proj_size={proj_size}"
        if self.num_layers != 1:
            s += ", num_layers={num_layers}"
        if self.bias is not True:
            s += ", bias={bias}"
        if self.batch_first is not False:
            s += ", batch_first={batch_first}"
        if self.dropout != 0:
            s += ", dropout={dropout}"
        if self.bidirectional is not False:
            s += ", bidirectional={bidirectional}"
        return s.format(**self.__dict__)

    def _layer_params(self, layer: int, direction: int):
        names = self._all_weights[layer * (2 if self.bidirectional else 1) + direction]
        params = {n.split("_l")[0]: getattr(self, n) for n in names}
        return (
            params["weight_ih"],
            params["weight_hh"],
            params.get("bias_ih"),
            params.get("bias_hh"),
            params.get("weight_hr"),
        )

    def _run(self, input, hidden):
        """The stacked layers over a sequence-first ``input``; ``hidden`` is a list per state
        (``[h]`` or ``[h, c]``), each ``(layers * directions, batch, size)``."""
        lg = _lg()
        lstm = self.mode == "LSTM"
        num_directions = 2 if self.bidirectional else 1
        states = [h.unbind(0) for h in hidden]
        finals: list[list] = [[] for _ in hidden]
        layer_input = input
        for layer in range(self.num_layers):
            outputs = []
            for direction in range(num_directions):
                w_ih, w_hh, b_ih, b_hh, w_hr = self._layer_params(layer, direction)
                index = layer * num_directions + direction
                state = tuple(s[index] for s in states)
                steps = F.linear(layer_input, w_ih, b_ih).unbind(0)
                if direction == 1:
                    steps = steps[::-1]
                out = []
                for ig in steps:
                    if lstm:
                        state = _lstm_step(ig, state, w_hh, b_hh, w_hr)
                        out.append(state[0])
                    else:
                        state = (_STEPS[self.mode](ig, state[0], w_hh, b_hh),)
                        out.append(state[0])
                if direction == 1:
                    out = out[::-1]
                outputs.append(lg.stack(out, 0))
                for k, s in enumerate(state):
                    finals[k].append(s)
            layer_output = outputs[0] if len(outputs) == 1 else lg.cat(outputs, 2)
            if self.dropout != 0 and self.training and layer < self.num_layers - 1:
                layer_output = F.dropout(layer_output, self.dropout, True)
            layer_input = layer_output
        return layer_input, [lg.stack(f, 0) for f in finals]

    def _run_packed(self, data, batch_sizes, hidden):
        """The stacked layers over packed rows ``data``; as ``_run``."""
        lg = _lg()
        sizes = [int(b) for b in batch_sizes.tolist()]
        num_directions = 2 if self.bidirectional else 1
        states = [h.unbind(0) for h in hidden]
        finals: list[list] = [[] for _ in hidden]
        layer_input = data
        for layer in range(self.num_layers):
            outputs = []
            for direction in range(num_directions):
                params = self._layer_params(layer, direction)
                index = layer * num_directions + direction
                state = tuple(s[index] for s in states)
                ig = F.linear(layer_input, params[0], params[2])
                run = _packed_layer if direction == 0 else _reversed_packed_layer
                out, state = run(self.mode, ig, sizes, state, params)
                outputs.append(out)
                for k, s in enumerate(state):
                    finals[k].append(s)
            layer_output = outputs[0] if len(outputs) == 1 else lg.cat(outputs, -1)
            if self.dropout != 0 and self.training and layer < self.num_layers - 1:
                layer_output = F.dropout(layer_output, self.dropout, True)
            layer_input = layer_output
        return layer_input, [lg.stack(f, 0) for f in finals]

    def _packed_zeros(self, data, batch_sizes, size: int):
        num_directions = 2 if self.bidirectional else 1
        return _lg().zeros(
            self.num_layers * num_directions,
            int(batch_sizes[0]),
            size,
            dtype=data.dtype,
            device=data.device,
        )

    def _prepare(self, input, name: str):
        """Check the input's rank; return (input made batched, is_batched, batch size)."""
        if input.dim() not in (2, 3):
            if name == "RNN":
                raise ValueError(
                    f"RNN: Expected input to be 2D or 3D, got {input.dim()}D tensor instead"
                )
            raise ValueError(f"{name}: Expected input to be 2D or 3D, got {input.dim()}D instead")
        is_batched = input.dim() == 3
        if not is_batched:
            input = input.unsqueeze(0 if self.batch_first else 1)
        return input, is_batched, input.size(0) if self.batch_first else input.size(1)

    def _zeros(self, input, batch: int, size: int):
        num_directions = 2 if self.bidirectional else 1
        return _lg().zeros(
            self.num_layers * num_directions, batch, size, dtype=input.dtype, device=input.device
        )

    def _forward_seq(self, input, hidden):
        if self.batch_first:
            input = input.transpose(0, 1)
        output, hidden = self._run(input, hidden)
        if self.batch_first:
            output = output.transpose(0, 1)
        return output, hidden


class _SingleStateRNN(RNNBase):
    """``RNN`` and ``GRU``: one hidden state ``h``."""

    _name = "RNN"

    def forward(self, input, hx=None):
        """``(output, h_n)`` for ``input`` of shape (L, N, H_in), (N, L, H_in) or (L, H_in),
        or a ``PackedSequence`` (then ``output`` is one too)."""
        if isinstance(input, PackedSequence):
            data, batch_sizes, sorted_indices, unsorted_indices = input
            if hx is None:
                hx = self._packed_zeros(data, batch_sizes, self.hidden_size)
            else:
                hx = self.permute_hidden(hx, sorted_indices)
            self.check_forward_args(data, hx, batch_sizes)
            output, (hidden,) = self._run_packed(data, batch_sizes, [hx])
            packed = PackedSequence(output, batch_sizes, sorted_indices, unsorted_indices)
            return packed, self.permute_hidden(hidden, unsorted_indices)
        input, is_batched, batch = self._prepare(input, self._name)
        if not is_batched:
            if hx is not None:
                if hx.dim() != 2:
                    raise RuntimeError(
                        "For unbatched 2-D input, hx should also be 2-D but got "
                        f"{hx.dim()}-D tensor"
                    )
                hx = hx.unsqueeze(1)
        elif hx is not None and hx.dim() != 3:
            raise RuntimeError(
                f"For batched 3-D input, hx should also be 3-D but got {hx.dim()}-D tensor"
            )
        if hx is None:
            hx = self._zeros(input, batch, self.hidden_size)
        self.check_forward_args(input, hx, None)
        output, (hidden,) = self._forward_seq(input, [hx])
        if not is_batched:
            output = output.squeeze(0 if self.batch_first else 1)
            hidden = hidden.squeeze(1)
        return output, hidden


class RNN(_SingleStateRNN):
    """``nn.RNN`` with ``nonlinearity`` ``'tanh'`` or ``'relu'`` (values as PyTorch's, see
    the module docstring for the graph)."""

    def __init__(self, *args, **kwargs) -> None:
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:
            self.nonlinearity = args[3]
            args = args[:3] + args[4:]
        else:
            self.nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if self.nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif self.nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(
                f"Unknown nonlinearity '{self.nonlinearity}'. Select from 'tanh' or 'relu'."
            )
        super().__init__(mode, *args, **kwargs)


class GRU(_SingleStateRNN):
    """``nn.GRU`` (gates r, z, n as PyTorch's CPU kernel)."""

    _name = "GRU"

    def __init__(self, *args, **kwargs) -> None:
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)


class LSTM(RNNBase):
    """``nn.LSTM`` with optional ``proj_size`` (gates i, f, g, o as PyTorch's CPU kernel)."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__("LSTM", *args, **kwargs)

    def get_expected_cell_size(self, input, batch_sizes) -> tuple[int, int, int]:
        mini_batch = _mini_batch(self, input, batch_sizes)
        num_directions = 2 if self.bidirectional else 1
        return (self.num_layers * num_directions, mini_batch, self.hidden_size)

    def check_forward_args(self, input, hidden, batch_sizes) -> None:
        self.check_input(input, batch_sizes)
        self.check_hidden_size(
            hidden[0],
            self.get_expected_hidden_size(input, batch_sizes),
            "Expected hidden[0] size {}, got {}",
        )
        self.check_hidden_size(
            hidden[1],
            self.get_expected_cell_size(input, batch_sizes),
            "Expected hidden[1] size {}, got {}",
        )

    def permute_hidden(self, hx, permutation):
        if permutation is None:
            return hx
        return hx[0].index_select(1, permutation), hx[1].index_select(1, permutation)

    def _warn_projections(self, input) -> None:
        if self.proj_size > 0 and input.dtype == _lg().float32 and input.device.type == "cpu":
            E.warn_once(_ONEDNN_PROJ, stacklevel=4)

    def forward(self, input, hx=None):
        """``(output, (h_n, c_n))``; ``hx`` is ``(h_0, c_0)`` or ``None`` for zeros; ``input``
        may be a ``PackedSequence`` (then ``output`` is one too)."""
        if _autocast.ANY[0] and _autocast.is_enabled("cpu"):
            # PyTorch runs it as one fused oneDNN node (MkldnnRnnLayerBackward0) in bfloat16
            raise NotImplementedError(
                "leafgrad: nn.LSTM inside torch.autocast('cpu') is not implemented (PyTorch "
                "runs its fused oneDNN kernel there); run the LSTM outside the autocast region"
            )
        real_hidden_size = self.proj_size if self.proj_size > 0 else self.hidden_size
        if isinstance(input, PackedSequence):
            data, batch_sizes, sorted_indices, unsorted_indices = input
            if hx is None:
                hx = (
                    self._packed_zeros(data, batch_sizes, real_hidden_size),
                    self._packed_zeros(data, batch_sizes, self.hidden_size),
                )
            else:
                hx = self.permute_hidden(hx, sorted_indices)
            # (packed input never takes PyTorch's oneDNN path, so no projection warning)
            self.check_forward_args(data, hx, batch_sizes)
            output, (h, c) = self._run_packed(data, batch_sizes, list(hx))
            packed = PackedSequence(output, batch_sizes, sorted_indices, unsorted_indices)
            return packed, self.permute_hidden((h, c), unsorted_indices)
        input, is_batched, batch = self._prepare(input, "LSTM")
        if hx is None:
            hx = (
                self._zeros(input, batch, real_hidden_size),
                self._zeros(input, batch, self.hidden_size),
            )
        elif is_batched:
            if hx[0].dim() != 3 or hx[1].dim() != 3:
                raise RuntimeError(
                    "For batched 3-D input, hx and cx should also be 3-D but got "
                    f"({hx[0].dim()}-D, {hx[1].dim()}-D) tensors"
                )
        else:
            if hx[0].dim() != 2 or hx[1].dim() != 2:
                raise RuntimeError(
                    "For unbatched 2-D input, hx and cx should also be 2-D but got "
                    f"({hx[0].dim()}-D, {hx[1].dim()}-D) tensors"
                )
            hx = (hx[0].unsqueeze(1), hx[1].unsqueeze(1))
        self.check_forward_args(input, hx, None)
        self._warn_projections(input)
        output, (h, c) = self._forward_seq(input, list(hx))
        if not is_batched:
            output = output.squeeze(0 if self.batch_first else 1)
            h, c = h.squeeze(1), c.squeeze(1)
        return output, (h, c)


# --- cells -------------------------------------------------------------------------------------


def _check_cell_input(input, input_size: int) -> None:
    if input.size(1) != input_size:
        raise RuntimeError(
            f"input has inconsistent input_size: got {input.size(1)} expected {input_size}"
        )


def _check_cell_hidden(input, hx, hidden_size: int, label: int) -> None:
    if input.size(0) != hx.size(0):
        raise RuntimeError(
            f"Input batch size {input.size(0)} doesn't match hidden{label} batch size {hx.size(0)}"
        )
    if hx.size(1) != hidden_size:
        raise RuntimeError(
            f"hidden{label} has inconsistent hidden_size: got {hx.size(1)}, expected {hidden_size}"
        )


class RNNCellBase(Module):
    """The parameters ``weight_ih``, ``weight_hh``, ``bias_ih``, ``bias_hh`` of a cell."""

    __constants__ = ["input_size", "hidden_size", "bias"]

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool,
        num_chunks: int,
        device=None,
        dtype=None,
    ) -> None:
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__()
        empty = _lg().empty
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        self.weight_ih = Parameter(empty((num_chunks * hidden_size, input_size), **factory_kwargs))
        self.weight_hh = Parameter(empty((num_chunks * hidden_size, hidden_size), **factory_kwargs))
        if bias:
            self.bias_ih = Parameter(empty(num_chunks * hidden_size, **factory_kwargs))
            self.bias_hh = Parameter(empty(num_chunks * hidden_size, **factory_kwargs))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self) -> str:
        s = "{input_size}, {hidden_size}"
        if "bias" in self.__dict__ and self.bias is not True:
            s += ", bias={bias}"
        if "nonlinearity" in self.__dict__ and self.nonlinearity != "tanh":
            s += ", nonlinearity={nonlinearity}"
        return s.format(**self.__dict__)

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            _uniform_(weight, -stdv, stdv)

    def _batched(self, input, hx, name: str, hidden_name: str = "hidden"):
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D instead")
        if hx is not None and hx.dim() not in (1, 2):
            raise ValueError(
                f"{name}: Expected {hidden_name} to be 1D or 2D, got {hx.dim()}D instead"
            )
        is_batched = input.dim() == 2
        if not is_batched:
            input = input.unsqueeze(0)
        if hx is None:
            hx = _lg().zeros(
                input.size(0), self.hidden_size, dtype=input.dtype, device=input.device
            )
        elif not is_batched:
            hx = hx.unsqueeze(0)
        return input, hx, is_batched


class RNNCell(RNNCellBase):
    """``nn.RNNCell``: ``act(W_ih x + b_ih + W_hh h + b_hh)``."""

    __constants__ = ["input_size", "hidden_size", "bias", "nonlinearity"]

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool = True,
        nonlinearity: str = "tanh",
        device=None,
        dtype=None,
    ) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device, dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        input, hx, is_batched = self._batched(input, hx, "RNNCell")
        if self.nonlinearity not in ("tanh", "relu"):
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        _check_cell_input(input, self.input_size)
        _check_cell_hidden(input, hx, self.hidden_size, 0)
        pre = F.linear(input, self.weight_ih, self.bias_ih)
        step = _tanh_step if self.nonlinearity == "tanh" else _relu_step
        ret = step(pre, hx, self.weight_hh, self.bias_hh)
        return ret if is_batched else ret.squeeze(0)


class LSTMCell(RNNCellBase):
    """``nn.LSTMCell``: returns ``(h', c')``."""

    def __init__(
        self, input_size: int, hidden_size: int, bias: bool = True, device=None, dtype=None
    ) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        if input.dim() not in (1, 2):
            raise ValueError(f"LSTMCell: Expected input to be 1D or 2D, got {input.dim()}D instead")
        if hx is not None:
            for idx, value in enumerate(hx):
                if value.dim() not in (1, 2):
                    raise ValueError(
                        f"LSTMCell: Expected hx[{idx}] to be 1D or 2D, got {value.dim()}D instead"
                    )
        is_batched = input.dim() == 2
        if not is_batched:
            input = input.unsqueeze(0)
        if hx is None:
            zeros = _lg().zeros(
                input.size(0), self.hidden_size, dtype=input.dtype, device=input.device
            )
            hx = (zeros, zeros)
        elif not is_batched:
            hx = (hx[0].unsqueeze(0), hx[1].unsqueeze(0))
        _check_cell_input(input, self.input_size)
        _check_cell_hidden(input, hx[0], self.hidden_size, 0)
        _check_cell_hidden(input, hx[1], self.hidden_size, 1)
        pre = F.linear(input, self.weight_ih, self.bias_ih)
        h, c = _lstm_step(pre, hx, self.weight_hh, self.bias_hh)
        return (h, c) if is_batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    """``nn.GRUCell``."""

    def __init__(
        self, input_size: int, hidden_size: int, bias: bool = True, device=None, dtype=None
    ) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        input, hx, is_batched = self._batched(input, hx, "GRUCell")
        _check_cell_input(input, self.input_size)
        _check_cell_hidden(input, hx, self.hidden_size, 0)
        pre = F.linear(input, self.weight_ih, self.bias_ih)
        ret = _gru_step(pre, hx, self.weight_hh, self.bias_hh)
        return ret if is_batched else ret.squeeze(0)
