"""Recurrent layers: ``nn.LSTM`` and ``nn.LSTMCell`` with MindSpore's signatures and parameter names.

Each layer and direction runs the ``LSTMLayer`` primitive (the recurrence over the whole sequence in one
C++/CUDA kernel, its bprop BPTT in one more); the Cell stacks layers, concatenates directions, applies
dropout between layers in training, and handles ``batch_first``, initial states and ``seq_length``.
"""

from __future__ import annotations

import math

import numpy as np

from opforge import dtype as mstype
from opforge import ops
from opforge.nn.cell import Cell
from opforge.nn.init import Uniform, initializer
from opforge.tensor import Parameter, Tensor

__all__ = ["LSTM", "LSTMCell"]


def _uniform(shape, bound, dtype):
    """U(-bound, bound) from the initializers' seeded generator (nn.set_seed)."""
    return initializer(Uniform(bound), shape, dtype)


class LSTM(Cell):
    r"""MindSpore's ``nn.LSTM(input_size, hidden_size, num_layers=1, has_bias=True, batch_first=False,
    dropout=0.0, bidirectional=False, dtype=mstype.float32)``, called as ``lstm(x, hx=None, seq_length=None)``
    with ``x`` [seq, batch, input] ([batch, seq, input] with ``batch_first``) and ``hx`` a tuple ``(h0, c0)``
    of [num_layers * num_directions, batch, hidden] (zeros when None). Returns ``(output, (h_n, c_n))``,
    ``output`` [seq, batch, num_directions * hidden]. Parameters ``weight_ih_l{k}``, ``weight_hh_l{k}``,
    ``bias_ih_l{k}``, ``bias_hh_l{k}`` (``_reverse`` for the backward direction), gates i, f, g, o, drawn
    from U(-1/sqrt(hidden), 1/sqrt(hidden)). ``seq_length`` ([batch] valid lengths): steps past a sample's
    length give zeros in ``output``, and its ``h_n``/``c_n`` are those of its last valid step.
    dtypes: float32, float64."""

    def __init__(self, input_size, hidden_size, num_layers=1, has_bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, dtype=mstype.float32):  # fmt: skip
        super().__init__()
        for name, value in (("input_size", input_size), ("hidden_size", hidden_size), ("num_layers", num_layers)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"For 'LSTM', the '{name}' must be an int >= 1, but got {value!r}.")
        if not isinstance(dropout, (int, float)) or not 0.0 <= dropout < 1.0:
            raise ValueError(f"For 'LSTM', the 'dropout' must be a float in [0, 1), but got {dropout!r}.")
        self.input_size, self.hidden_size, self.num_layers = input_size, hidden_size, num_layers
        self.has_bias, self.batch_first, self.bidirectional = bool(has_bias), bool(batch_first), bool(bidirectional)
        self.num_directions = 2 if bidirectional else 1
        self.dropout = float(dropout)
        self.dtype = mstype.to_dtype(dtype)
        bound = 1.0 / math.sqrt(hidden_size)
        for layer in range(num_layers):
            in_size = input_size if layer == 0 else hidden_size * self.num_directions
            for suffix in ("", "_reverse")[: self.num_directions]:
                names = (f"weight_ih_l{layer}{suffix}", f"weight_hh_l{layer}{suffix}")
                setattr(self, names[0], Parameter(_uniform((4 * hidden_size, in_size), bound, self.dtype), names[0]))
                setattr(
                    self, names[1], Parameter(_uniform((4 * hidden_size, hidden_size), bound, self.dtype), names[1])
                )
                if self.has_bias:
                    for b in (f"bias_ih_l{layer}{suffix}", f"bias_hh_l{layer}{suffix}"):
                        setattr(self, b, Parameter(_uniform((4 * hidden_size,), bound, self.dtype), b))
        self.forward_layer, self.backward_layer = ops.LSTMLayer(False), ops.LSTMLayer(True)
        self.transpose, self.concat, self.stack = ops.Transpose(), ops.Concat(-1), ops.Stack(0)
        self.dropout_op = ops.Dropout(keep_prob=1.0 - self.dropout) if self.dropout > 0 else None

    def _layer_params(self, layer: int, suffix: str) -> tuple:
        w_ih = getattr(self, f"weight_ih_l{layer}{suffix}")
        w_hh = getattr(self, f"weight_hh_l{layer}{suffix}")
        if self.has_bias:
            bias = getattr(self, f"bias_ih_l{layer}{suffix}") + getattr(self, f"bias_hh_l{layer}{suffix}")
        else:
            bias = ops.fill(w_ih.dtype, (4 * self.hidden_size,), 0)
        return w_ih, w_hh, bias

    def construct(self, x, hx=None, seq_length=None):
        if x.ndim != 3:
            raise ValueError(f"For 'LSTM', the 'x' must be 3-D, but got shape {list(x.shape)}.")
        if self.batch_first:
            x = self.transpose(x, (1, 0, 2))
        seq, batch = x.shape[0], x.shape[1]
        shape = (self.num_layers * self.num_directions, batch, self.hidden_size)
        if hx is None:
            zeros = ops.fill(x.dtype, shape, 0)
            h0, c0 = zeros, zeros
        else:
            h0, c0 = hx
            for name, t in (("h0", h0), ("c0", c0)):
                if tuple(t.shape) != shape:
                    raise ValueError(
                        f"For 'LSTM', the '{name}' must have shape {list(shape)}, but got {list(t.shape)}."
                    )
        mask = None if seq_length is None else self._mask(seq_length, seq, batch, x.dtype)
        h_n, c_n = [], []
        layer_in = x
        for layer in range(self.num_layers):
            outs = []
            for d, (suffix, prim) in enumerate(
                (("", self.forward_layer), ("_reverse", self.backward_layer))[: self.num_directions]
            ):
                k = layer * self.num_directions + d
                y, h, c = self._direction(
                    prim, layer_in, h0[k], c0[k], self._layer_params(layer, suffix), mask, seq_length
                )
                outs.append(y)
                h_n.append(h)
                c_n.append(c)
            layer_in = outs[0] if len(outs) == 1 else self.concat(tuple(outs))
            if self.dropout_op is not None and self.training and layer < self.num_layers - 1:
                layer_in = self.dropout_op(layer_in)[0]
        output = layer_in if not self.batch_first else self.transpose(layer_in, (1, 0, 2))
        return output, (self.stack(tuple(h_n)), self.stack(tuple(c_n)))

    def _mask(self, seq_length, seq, batch, dtype):
        lengths = seq_length.asnumpy() if isinstance(seq_length, Tensor) else np.asarray(seq_length)
        if lengths.shape != (batch,) or (lengths < 1).any() or (lengths > seq).any():
            raise ValueError(f"For 'LSTM', the 'seq_length' must be [batch] lengths in [1, {seq}], but got {lengths}.")
        return lengths

    def _direction(self, prim, x, h0, c0, params, lengths, seq_length):
        if lengths is None:
            y, h, c, _, _ = prim(x, h0, c0, *params)
            return y, h, c
        # Samples of different lengths: run each length group on its valid steps (a reversed direction
        # starts at the sample's last valid step), zeros after.
        ys, hs, cs = [None] * len(lengths), [None] * len(lengths), [None] * len(lengths)
        seq = x.shape[0]
        for n in sorted(set(lengths.tolist())):
            idx = Tensor(np.flatnonzero(lengths == n).astype(np.int32))
            xi = ops.Gather()(x[:n], idx, 1)
            y, h, c, _, _ = prim(xi, ops.Gather()(h0, idx, 0), ops.Gather()(c0, idx, 0), *params)
            if n < seq:
                y = ops.Concat(0)((y, ops.fill(y.dtype, (seq - n, y.shape[1], y.shape[2]), 0)))
            for j, b in enumerate(np.flatnonzero(lengths == n)):
                ys[b], hs[b], cs[b] = y[:, j], h[j], c[j]
        return ops.Stack(1)(tuple(ys)), ops.Stack(0)(tuple(hs)), ops.Stack(0)(tuple(cs))

    def extend_repr(self) -> str:
        return (
            f"input_size={self.input_size}, hidden_size={self.hidden_size}, num_layers={self.num_layers}, "
            f"has_bias={self.has_bias}, batch_first={self.batch_first}, dropout={self.dropout}, "
            f"bidirectional={self.bidirectional}"
        )


class LSTMCell(Cell):
    """MindSpore's ``nn.LSTMCell(input_size, hidden_size, has_bias=True, dtype=mstype.float32)``: one step,
    ``cell(x, (hx, cx)) -> (hy, cy)`` with ``x`` [batch, input] (the LSTMLayer primitive on a sequence of
    one). Parameters ``weight_ih``, ``weight_hh``, ``bias_ih``, ``bias_hh``."""

    def __init__(self, input_size, hidden_size, has_bias=True, dtype=mstype.float32):
        super().__init__()
        self.input_size, self.hidden_size, self.has_bias = input_size, hidden_size, bool(has_bias)
        dtype = mstype.to_dtype(dtype)
        bound = 1.0 / math.sqrt(hidden_size)
        self.weight_ih = Parameter(_uniform((4 * hidden_size, input_size), bound, dtype), "weight_ih")
        self.weight_hh = Parameter(_uniform((4 * hidden_size, hidden_size), bound, dtype), "weight_hh")
        if self.has_bias:
            self.bias_ih = Parameter(_uniform((4 * hidden_size,), bound, dtype), "bias_ih")
            self.bias_hh = Parameter(_uniform((4 * hidden_size,), bound, dtype), "bias_hh")
        self.layer = ops.LSTMLayer(False)
        self.expand = ops.ExpandDims()

    def construct(self, x, hx):
        h, c = hx
        bias = self.bias_ih + self.bias_hh if self.has_bias else ops.fill(x.dtype, (4 * self.hidden_size,), 0)
        _, hy, cy, _, _ = self.layer(self.expand(x, 0), h, c, self.weight_ih, self.weight_hh, bias)
        return hy, cy
