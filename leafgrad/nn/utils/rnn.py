"""``leafgrad.nn.utils.rnn``: packed and padded batches of variable-length sequences, as
``torch.nn.utils.rnn``.

A ``PackedSequence`` holds the time steps of a batch of sequences, sorted by decreasing length,
one after another: ``data`` has the rows of step 0 of every sequence, then step 1 of those still
running, and so on; ``batch_sizes`` (a CPU int64 tensor) says how many rows each step has.

The graphs are PyTorch's: packing is one node (``PackPaddedSequenceBackward0``, a gather of the
padded rows whose VJP scatters them back); padding is PyTorch's composite, a ``full`` tensor into
whose slices blocks of ``data`` are copied (``CopySlices`` nodes over ``SliceBackward0`` and
``ViewBackward0``), and ``pad_sequence`` copies each sequence into its slot the same way. The
lengths are read on the host, as PyTorch reads them: they decide the shapes.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

import jax.numpy as jnp
import numpy as np

from ... import _dtype as D
from ..._tensor import Tensor
from ...ops.api import register_ops
from ...ops.dispatch import dispatch
from ...ops.table import OPS, OpDef

__all__ = [
    "PackedSequence",
    "invert_permutation",
    "pack_padded_sequence",
    "pad_packed_sequence",
    "pad_sequence",
    "unpad_sequence",
    "pack_sequence",
    "unpack_sequence",
]


def _lg():
    import leafgrad

    return leafgrad


# --- the packing op -----------------------------------------------------------------------------


def _batch_sizes(lengths: tuple[int, ...]) -> np.ndarray:
    """Rows per time step of a batch with these (decreasing) lengths."""
    steps = np.arange(lengths[0])
    return (np.asarray(lengths)[None, :] > steps[:, None]).sum(1).astype(np.int64)


def _pack(x, lengths, batch_first):
    """The rows of the sequences' steps, step by step (the order of PyTorch's blocks), and the
    batch sizes; the row indices are constants of the lengths."""
    sizes = _batch_sizes(lengths)
    steps = np.repeat(np.arange(len(sizes)), sizes)
    rows = np.concatenate([np.arange(n) for n in sizes])
    data = x[rows, steps] if batch_first else x[steps, rows]
    return data, jnp.asarray(sizes, dtype=jnp.int64)


def _pack_rule(meta, static):
    return (None,), (meta[0][0], D.int64)


register_ops(
    OpDef(
        "nn.pack_padded_sequence",
        _pack,
        "PackPaddedSequenceBackward0",
        ("input",),
        _pack_rule,
        # PyTorch's node saves the batch sizes (its result1), freed by backward
        saves={"input": ("indices",)},
        n_out=2,
        differentiable_outputs=(0,),
    )
)


def _check_lengths(lengths: Tensor) -> None:
    if lengths.dim() != 1 or lengths.device.type != "cpu" or lengths.dtype != _lg().int64:
        raise RuntimeError(
            "'lengths' argument should be a 1D CPU int64 tensor, but got "
            f"{lengths.dim()}D {lengths.device} {lengths.dtype._legacy} tensor"
        )


def _packed(input: Tensor, lengths: Tensor, batch_first: bool):
    """``_pack_padded_sequence``: ``(data, batch_sizes)``, with PyTorch's checks in its order."""
    _check_lengths(lengths)
    if input.dim() < 2:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [-{max(input.dim(), 1)}, "
            f"{max(input.dim(), 1) - 1}], but got 1)"
        )
    steps_dim, batch_dim = (1, 0) if batch_first else (0, 1)
    batch_size = input.shape[batch_dim]
    values = tuple(int(v) for v in lengths.tolist())
    if input.numel() == 0:
        raise RuntimeError("Cannot pack empty tensors.")
    if len(values) != batch_size:
        raise RuntimeError(
            "Expected `len(lengths)` to be equal to batch_size, but got "
            f"{len(values)} (batch_size={batch_size})"
        )
    if values[-1] <= 0:
        raise RuntimeError(
            "Length of all samples has to be greater than 0, but found an element in 'lengths' "
            "that is <= 0"
        )
    if any(a < b for a, b in zip(values, values[1:])):
        raise RuntimeError(
            "`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. "
            "You can pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence "
            "to sidestep this requirement if you do not need ONNX exportability."
        )
    if values[0] > input.shape[steps_dim]:
        # PyTorch reads past the input here; a length is never longer than the padded steps
        raise RuntimeError(
            f"pack_padded_sequence: a length ({values[0]}) is larger than the number of "
            f"time steps of the input ({input.shape[steps_dim]})"
        )
    data, batch_sizes = dispatch(
        OPS["nn.pack_padded_sequence"], input, lengths=values, batch_first=bool(batch_first)
    )
    return data, batch_sizes.cpu()


# --- PackedSequence -----------------------------------------------------------------------------


class PackedSequence_(NamedTuple):
    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Tensor | None
    unsorted_indices: Tensor | None


def _bind(optional, fn):
    return None if optional is None else fn(optional)


class PackedSequence(PackedSequence_):
    """The data and ``batch_sizes`` of a packed batch of sequences; made by
    ``pack_padded_sequence`` and ``pack_sequence``, taken by every RNN module.

    ``sorted_indices`` says which input sequence each packed column is (``None`` when the input
    was sorted already) and ``unsorted_indices`` is its inverse."""

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        return super().__new__(
            cls, *_packed_sequence_init_args(data, batch_sizes, sorted_indices, unsorted_indices)
        )

    def pin_memory(self):
        return type(self)(
            self.data.pin_memory(),
            self.batch_sizes,
            _bind(self.sorted_indices, lambda t: t.pin_memory()),
            _bind(self.unsorted_indices, lambda t: t.pin_memory()),
        )

    def to(self, *args, **kwargs):
        """``data.to(...)``; the index tensors follow ``data`` 's device. ``self`` when nothing
        changes, as ``Tensor.to``."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self

        def call_to(t):
            return t.to(data.device, non_blocking=kwargs.get("non_blocking", False))

        return type(self)(
            data,
            self.batch_sizes,
            _bind(self.sorted_indices, call_to),
            _bind(self.unsorted_indices, call_to),
        )

    def cuda(self, *args, **kwargs):
        ex = _lg().tensor((), dtype=self.data.dtype, device=self.data.device).to(*args, **kwargs)
        if ex.is_cuda:
            return self.to(*args, **kwargs)
        kwargs["device"] = "cuda"
        return self.to(*args, **kwargs)

    def cpu(self, *args, **kwargs):
        ex = _lg().tensor((), dtype=self.data.dtype, device=self.data.device).to(*args, **kwargs)
        if ex.device.type == "cpu":
            return self.to(*args, **kwargs)
        kwargs["device"] = "cpu"
        return self.to(*args, **kwargs)

    def double(self):
        return self.to(dtype=_lg().double)

    def float(self):
        return self.to(dtype=_lg().float)

    def half(self):
        return self.to(dtype=_lg().half)

    def long(self):
        return self.to(dtype=_lg().long)

    def int(self):
        return self.to(dtype=_lg().int)

    def short(self):
        return self.to(dtype=_lg().short)

    def char(self):
        return self.to(dtype=_lg().int8)

    def byte(self):
        return self.to(dtype=_lg().uint8)

    @property
    def is_cuda(self) -> bool:
        return self.data.is_cuda

    def is_pinned(self) -> bool:
        return self.data.is_pinned()


def _packed_sequence_init_args(data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
    if unsorted_indices is None:
        unsorted_indices = invert_permutation(sorted_indices)
    if batch_sizes is not None:
        if batch_sizes.device.type != "cpu":
            raise ValueError(
                "batch_sizes should always be on CPU. Instances of PackedSequence should never "
                "be created manually. They should be instantiated by functions like "
                "pack_sequence and pack_padded_sequences in nn.utils.rnn. "
                "https://pytorch.org/docs/stable/nn.html#torch.nn.utils.rnn.pack_sequence"
            )
        return data, batch_sizes, sorted_indices, unsorted_indices
    if not (isinstance(data, (list, tuple)) and len(data) == 2):
        raise AssertionError("Expected data to be a list or tuple of length 2")
    return data[0], data[1], sorted_indices, unsorted_indices


def invert_permutation(permutation: Tensor | None) -> Tensor | None:
    """The inverse of a permutation of ``0..n-1`` (``None`` for ``None``)."""
    if permutation is None:
        return None
    lg = _lg()
    output = lg.empty_like(permutation)
    output.scatter_(0, permutation, lg.arange(0, permutation.numel(), device=permutation.device))
    return output


# --- packing and padding ------------------------------------------------------------------------


def pack_padded_sequence(
    input: Tensor, lengths, batch_first: bool = False, enforce_sorted: bool = True
) -> PackedSequence:
    """Pack a padded batch ``(T, B, *)`` (``(B, T, *)`` with ``batch_first``) of sequences of the
    given ``lengths``. With ``enforce_sorted=False`` the batch is sorted by length first and the
    order is remembered in ``sorted_indices``."""
    lg = _lg()
    if not isinstance(lengths, Tensor):
        lengths = lg.as_tensor(lengths, dtype=lg.int64, device="cpu")
    else:
        lengths = lengths.to(dtype=lg.int64)
    if enforce_sorted:
        sorted_indices = None
    else:
        lengths, sorted_indices = lg.sort(lengths, descending=True)
        sorted_indices = sorted_indices.to(input.device)
        batch_dim = 0 if batch_first else 1
        input = input.index_select(batch_dim, sorted_indices)
    data, batch_sizes = _packed(input, lengths, batch_first)
    return PackedSequence(data, batch_sizes, sorted_indices, None)


def _pad_packed(data: Tensor, batch_sizes: Tensor, batch_first, padding_value, total_length):
    """``_pad_packed_sequence``: PyTorch's composite, block by block of equal batch size."""
    _check_lengths(batch_sizes)
    lg = _lg()
    sizes = [int(b) for b in batch_sizes.tolist()]
    max_batch_size = sizes[0]
    max_real = len(sizes)
    max_seq_length = max_real
    if total_length > 0:
        if total_length < max_seq_length:
            raise RuntimeError(
                "Expected total_length to be at least the length of the longest sequence in "
                f"input, but got total_length={total_length} and max sequence length being "
                f"{max_seq_length}"
            )
        max_seq_length = total_length
    trailing = tuple(data.shape[1:])
    output = lg.full(
        (max_seq_length, max_batch_size) + trailing,
        padding_value,
        dtype=data.dtype,
        device=data.device,
    )
    lengths = [0] * max_batch_size
    offset, prev_batch, prev_i = 0, max_batch_size, 0
    for i in range(max_real + 1):
        batch = sizes[i] if i != max_real else 0
        if batch != prev_batch:
            n = prev_batch * (i - prev_i)
            block = data.narrow(0, offset, n).view((i - prev_i, prev_batch) + trailing)
            output.narrow(0, prev_i, i - prev_i).narrow(1, 0, prev_batch).copy_(block)
            offset += n
            prev_i = i
        for j in range(batch, prev_batch):
            lengths[j] = i
        prev_batch = batch
    if batch_first:
        output = output.transpose(0, 1)
    return output, lg.tensor(lengths, dtype=lg.int64)


def pad_packed_sequence(
    sequence: PackedSequence,
    batch_first: bool = False,
    padding_value: float = 0.0,
    total_length: int | None = None,
) -> tuple[Tensor, Tensor]:
    """The inverse of ``pack_padded_sequence``: ``(padded, lengths)``, padded to the longest
    sequence (or ``total_length`` steps) with ``padding_value``, in the original batch order."""
    max_seq_length = sequence.batch_sizes.size(0)
    if total_length is not None:
        if total_length < max_seq_length:
            raise ValueError(
                "Expected total_length to be at least the length of the longest sequence in "
                f"input, but got total_length={total_length} and max sequence length being "
                f"{max_seq_length}"
            )
        max_seq_length = total_length
    padded_output, lengths = _pad_packed(
        sequence.data, sequence.batch_sizes, batch_first, padding_value, max_seq_length
    )
    unsorted_indices = sequence.unsorted_indices
    if unsorted_indices is not None:
        batch_dim = 0 if batch_first else 1
        return (
            padded_output.index_select(batch_dim, unsorted_indices),
            lengths[unsorted_indices.cpu()],
        )
    return padded_output, lengths


def pad_sequence(
    sequences, batch_first: bool = False, padding_value: float = 0.0, padding_side: str = "right"
) -> Tensor:
    """Stack tensors of shapes ``(L_i, *)`` into ``(max L, B, *)`` (``(B, max L, *)`` with
    ``batch_first``), padding each with ``padding_value`` on ``padding_side``."""
    if not isinstance(sequences, Iterable):
        raise RuntimeError(
            "pad_sequence: Expected iterable for input sequences, but got arg of type: "
            f"{type(sequences)}"
        )
    sequences = tuple(sequences)
    if padding_side not in ("left", "right"):
        raise RuntimeError(
            f"Expected padding_side to be one of left or right, but got {padding_side}."
        )
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    first = sequences[0]
    if first.dim() == 0:
        raise RuntimeError("ArrayRef: invalid slice, N = 1; size = 0")
    max_len = max(s.size(0) for s in sequences)
    n = len(sequences)
    dims = (n, max_len) if batch_first else (max_len, n)
    out = _lg().full(
        dims + tuple(first.shape[1:]), padding_value, dtype=first.dtype, device=first.device
    )
    for i, seq in enumerate(sequences):
        length = seq.size(0)
        start = 0 if padding_side == "right" else max_len - length
        if batch_first:
            out.select(0, i).narrow(0, start, length).copy_(seq)
        else:
            out.narrow(0, start, length).select(1, i).copy_(seq)
    return out


def unpad_sequence(padded_sequences: Tensor, lengths: Tensor, batch_first: bool = False):
    """The sequences of a padded batch, cut to their ``lengths``. Like PyTorch's, transposes a
    sequence-first ``padded_sequences`` in place."""
    lg = _lg()
    unpadded = []
    if not batch_first:
        padded_sequences.transpose_(0, 1)
    max_length = padded_sequences.shape[1]
    idx = lg.arange(max_length, device=lengths.device)
    for seq, length in zip(padded_sequences, lengths, strict=True):
        unpadded.append(seq[idx < length])
    return unpadded


def pack_sequence(sequences, enforce_sorted: bool = True) -> PackedSequence:
    """``pack_padded_sequence(pad_sequence(sequences), lengths)``."""
    lengths = _lg().as_tensor([v.size(0) for v in sequences])
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences: PackedSequence) -> list[Tensor]:
    """The list of sequences a ``PackedSequence`` holds, in their original order."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
