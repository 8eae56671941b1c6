"""Recurrent layers with MindSpore's signatures and parameter names: ``nn.LSTM``, ``nn.GRU``, ``nn.RNN`` and
the one-step ``nn.LSTMCell``, ``nn.GRUCell``, ``nn.RNNCell``.

Each layer and direction runs one primitive (``LSTMLayer``, ``GRULayer``, ``RNNLayer``: the recurrence over
the whole sequence in one C++/CUDA kernel, its bprop BPTT in one more); the Cells stack layers, concatenate
directions, apply dropout between layers in training, and handle ``batch_first``, initial states and
``seq_length``.
"""

from __future__ import annotations

import math

import numpy as np

from opforge import dtype as mstype
from opforge import ops
from opforge.nn import init as _init
from opforge.nn.cell import Cell
from opforge.nn.init import Uniform, initializer
from opforge.nn.layers import dropout_step, dropout_with
from opforge.tensor import Parameter, Tensor

__all__ = ["LSTM", "GRU", "RNN", "LSTMCell", "GRUCell", "RNNCell"]

# mode -> (gate rows per hidden unit, carried states); the gate orders are MindSpore's: LSTM i, f, g, o;
# GRU r, z, n.
_MODES = {"LSTM": (4, 2), "GRU": (3, 1), "RNN_TANH": (1, 1), "RNN_RELU": (1, 1)}


def _uniform(shape, bound, dtype):
    """U(-bound, bound) from the initializers' seeded generator (nn.set_seed)."""
    return initializer(Uniform(bound), shape, dtype)


def _check_size(cell: str, name: str, value) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"For '{cell}', the '{name}' must be an int >= 1, but got {value!r}.")


def _layer_primitive(mode: str, reverse: bool):
    """The primitive that runs one layer and direction of ``mode`` over a sequence."""
    if mode == "LSTM":
        return ops.LSTMLayer(reverse)
    if mode == "GRU":
        return ops.GRULayer(reverse)
    return ops.RNNLayer(reverse, "relu" if mode == "RNN_RELU" else "tanh")


_HALF = (mstype.float16, mstype.bfloat16)
_CAST = ops.Cast()


def _run_layer(mode: str, prim, x, states: tuple, w_ih, w_hh, b_ih, b_hh):
    """One layer and direction: ``(y, final states)``. The LSTM and RNN kernels take ``b_ih + b_hh``; the
    GRU keeps them apart (``b_hn`` sits inside the reset gate's product). A half-precision ``x`` (a
    ``to_float(float16)`` network's) runs the recurrence in float32, as the kernels compute half types, and
    gets its outputs in its own dtype."""
    if x.dtype in _HALF:
        half, wide = x.dtype, (lambda t: _CAST(t, mstype.float32))
        y, last = _run_layer(mode, prim, wide(x), tuple(map(wide, states)), *map(wide, (w_ih, w_hh, b_ih, b_hh)))
        return _CAST(y, half), tuple(_CAST(s, half) for s in last)
    if mode == "GRU":
        y, h, _ = prim(x, states[0], w_ih, w_hh, b_ih, b_hh)
        return y, (h,)
    bias = b_ih + b_hh
    if mode == "LSTM":
        y, h, c, _, _ = prim(x, states[0], states[1], w_ih, w_hh, bias)
        return y, (h, c)
    y, h = prim(x, states[0], w_ih, w_hh, bias)
    return y, (h,)


class _RNNBase(Cell):
    """The stacked, optionally bidirectional recurrent net behind LSTM, GRU and RNN (MindSpore's _RNNBase)."""

    def __init__(self, mode, input_size, hidden_size, num_layers=1, has_bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, dtype=mstype.float32):  # fmt: skip
        super().__init__()
        self.cls_name = {"RNN_TANH": "RNN", "RNN_RELU": "RNN"}.get(mode, mode)
        for name, value in (("input_size", input_size), ("hidden_size", hidden_size), ("num_layers", num_layers)):
            _check_size(self.cls_name, name, value)
        if isinstance(dropout, bool) or not isinstance(dropout, (int, float)) or not 0.0 <= dropout < 1.0:
            raise ValueError(f"For '{self.cls_name}', the 'dropout' must be a float in [0, 1), but got {dropout!r}.")
        self.mode = mode
        self.input_size, self.hidden_size, self.num_layers = input_size, hidden_size, num_layers
        self.has_bias, self.batch_first, self.bidirectional = bool(has_bias), bool(batch_first), bool(bidirectional)
        self.num_directions = 2 if bidirectional else 1
        self.dropout = float(dropout)
        self.dtype = mstype.to_dtype(dtype)
        gates, self.num_states = _MODES[mode]
        self.gate_size = gates * hidden_size
        bound = 1.0 / math.sqrt(hidden_size)
        for layer in range(num_layers):
            in_size = input_size if layer == 0 else hidden_size * self.num_directions
            for suffix in ("", "_reverse")[: self.num_directions]:
                shapes = {
                    f"weight_ih_l{layer}{suffix}": (self.gate_size, in_size),
                    f"weight_hh_l{layer}{suffix}": (self.gate_size, hidden_size),
                }
                if self.has_bias:
                    shapes[f"bias_ih_l{layer}{suffix}"] = (self.gate_size,)
                    shapes[f"bias_hh_l{layer}{suffix}"] = (self.gate_size,)
                for name, shape in shapes.items():
                    setattr(self, name, Parameter(_uniform(shape, bound, self.dtype), name))
        self.layer_prims = [_layer_primitive(mode, reverse) for reverse in (False, True)[: self.num_directions]]
        self.transpose, self.concat, self.stack = ops.Transpose(), ops.Concat(-1), ops.Stack(0)
        self.seed = _init.derived_seed() if self.dropout > 0 else 0  # of the dropout masks between layers
        self.step = 0

    def _layer_params(self, layer: int, suffix: str) -> tuple:
        w_ih = getattr(self, f"weight_ih_l{layer}{suffix}")
        w_hh = getattr(self, f"weight_hh_l{layer}{suffix}")
        if self.has_bias:
            return w_ih, w_hh, getattr(self, f"bias_ih_l{layer}{suffix}"), getattr(self, f"bias_hh_l{layer}{suffix}")
        zeros = ops.fill(w_ih.dtype, (self.gate_size,), 0)
        return w_ih, w_hh, zeros, zeros

    def _initial_states(self, hx, batch: int, dtype) -> tuple:
        shape = (self.num_layers * self.num_directions, batch, self.hidden_size)
        if hx is None:
            return (ops.fill(dtype, shape, 0),) * self.num_states
        states = tuple(hx) if self.num_states == 2 else (hx,)
        if self.num_states == 2 and len(states) != 2:
            raise ValueError(f"For '{self.cls_name}', the 'hx' must be a tuple (h0, c0), but got {len(states)} items.")
        for name, t in zip(("h0", "c0"), states):
            if tuple(t.shape) != shape:
                raise ValueError(
                    f"For '{self.cls_name}', the '{name}' must have shape {list(shape)}, but got {list(t.shape)}."
                )
        return states

    def construct(self, x, hx=None, seq_length=None):
        if x.ndim != 3:
            raise ValueError(f"For '{self.cls_name}', the 'x' must be 3-D, but got shape {list(x.shape)}.")
        if self.batch_first:
            x = self.transpose(x, (1, 0, 2))
        seq, batch = x.shape[0], x.shape[1]
        states0 = self._initial_states(hx, batch, x.dtype)
        lengths = None if seq_length is None else self._lengths(seq_length, seq, batch)
        finals = [[] for _ in states0]
        layer_in = x
        for layer in range(self.num_layers):
            outs = []
            for d, suffix in enumerate(("", "_reverse")[: self.num_directions]):
                k = layer * self.num_directions + d
                states = tuple(s[k] for s in states0)
                y, last = self._direction(
                    self.layer_prims[d], layer_in, states, self._layer_params(layer, suffix), lengths
                )
                outs.append(y)
                for acc, s in zip(finals, last):
                    acc.append(s)
            layer_in = outs[0] if len(outs) == 1 else self.concat(tuple(outs))
            if self.dropout > 0 and self.training and layer < self.num_layers - 1:
                layer_in = dropout_with(layer_in, 1.0 - self.dropout, self.seed, dropout_step(self, layer_in.device))
        output = layer_in if not self.batch_first else self.transpose(layer_in, (1, 0, 2))
        h_n = tuple(self.stack(tuple(acc)) for acc in finals)
        return output, (h_n if self.num_states == 2 else h_n[0])

    def _lengths(self, seq_length, seq: int, batch: int):
        lengths = seq_length.asnumpy() if isinstance(seq_length, Tensor) else np.asarray(seq_length)
        if lengths.shape != (batch,) or (lengths < 1).any() or (lengths > seq).any():
            raise ValueError(
                f"For '{self.cls_name}', the 'seq_length' must be [batch] lengths in [1, {seq}], but got {lengths}."
            )
        return lengths

    def _direction(self, prim, x, states, params, lengths):
        if lengths is None:
            return _run_layer(self.mode, prim, x, states, *params)
        # Samples of different lengths (MindSpore's seq_length): each length group runs on its valid steps
        # only (a reversed direction starts at the sample's last valid step); output steps past a sample's
        # length are zeros and its final states are those of its last valid step.
        seq = x.shape[0]
        ys, finals = [None] * len(lengths), [[None] * len(lengths) for _ in states]
        for n in sorted(set(lengths.tolist())):
            members = np.flatnonzero(lengths == n)
            idx = Tensor(members.astype(np.int32))
            y, last = _run_layer(
                self.mode, prim, ops.Gather()(x[:n], idx, 1), tuple(ops.Gather()(s, idx, 0) for s in states), *params
            )
            if n < seq:
                y = ops.Concat(0)((y, ops.fill(y.dtype, (seq - n, y.shape[1], y.shape[2]), 0)))
            for j, b in enumerate(members):
                ys[b] = y[:, j]
                for acc, s in zip(finals, last):
                    acc[b] = s[j]
        return ops.Stack(1)(tuple(ys)), tuple(ops.Stack(0)(tuple(acc)) for acc in finals)

    def extend_repr(self) -> str:
        return (
            f"input_size={self.input_size}, hidden_size={self.hidden_size}, num_layers={self.num_layers}, "
            f"has_bias={self.has_bias}, batch_first={self.batch_first}, dropout={self.dropout}, "
            f"bidirectional={self.bidirectional}"
        )


class LSTM(_RNNBase):
    r"""MindSpore's ``nn.LSTM(input_size, hidden_size, num_layers=1, has_bias=True, batch_first=False,
    dropout=0.0, bidirectional=False, dtype=mstype.float32)``, called as ``lstm(x, hx=None, seq_length=None)``
    with ``x`` [seq, batch, input] ([batch, seq, input] with ``batch_first``) and ``hx`` a tuple ``(h0, c0)``
    of [num_layers * num_directions, batch, hidden] (zeros when None). Returns ``(output, (h_n, c_n))``,
    ``output`` [seq, batch, num_directions * hidden]. Parameters ``weight_ih_l{k}``, ``weight_hh_l{k}``,
    ``bias_ih_l{k}``, ``bias_hh_l{k}`` (``_reverse`` for the backward direction), gates i, f, g, o, drawn
    from U(-1/sqrt(hidden), 1/sqrt(hidden)). ``seq_length`` ([batch] valid lengths): steps past a sample's
    length give zeros in ``output``, and its ``h_n``/``c_n`` are those of its last valid step.
    dtypes: float32, float64; float16 and bfloat16 (a ``to_float(float16)`` network's) computed in float32."""

    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)


class GRU(_RNNBase):
    r"""MindSpore's ``nn.GRU(input_size, hidden_size, num_layers=1, has_bias=True, batch_first=False,
    dropout=0.0, bidirectional=False, dtype=mstype.float32)``, called as ``gru(x, hx=None, seq_length=None)``
    with ``hx`` h0 [num_layers * num_directions, batch, hidden]; returns ``(output, h_n)``. Gates r, z, n
    (``weight_ih_l{k}`` [3 hidden, input]): :math:`n = \tanh(W_{in} x + b_{in} + r (W_{hn} h + b_{hn}))`,
    :math:`h' = (1 - z) n + z h`. ``seq_length``, ``batch_first`` and the parameters as in :class:`LSTM`."""

    def __init__(self, *args, **kwargs):
        super().__init__("GRU", *args, **kwargs)


class RNN(_RNNBase):
    r"""MindSpore's ``nn.RNN(input_size, hidden_size, num_layers=1, nonlinearity='tanh', has_bias=True,
    batch_first=False, dropout=0.0, bidirectional=False, dtype=mstype.float32)`` (``nonlinearity`` is taken
    by keyword, as MindSpore pops it from its keyword arguments): :math:`h' = act(W_{ih} x + b_{ih} + W_{hh} h
    + b_{hh})` with act ``'tanh'`` or ``'relu'``. Called as ``rnn(x, hx=None, seq_length=None)``; returns
    ``(output, h_n)``. Parameters, ``seq_length`` and ``batch_first`` as in :class:`LSTM`."""

    def __init__(self, *args, nonlinearity="tanh", **kwargs):
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"For 'RNN', the 'nonlinearity' must be 'tanh' or 'relu', but got {nonlinearity!r}.")
        super().__init__("RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU", *args, **kwargs)
        self.nonlinearity = nonlinearity


class _CellBase(Cell):
    """One step of a recurrent cell: the layer primitive on a sequence of one."""

    def __init__(self, mode, input_size, hidden_size, has_bias=True, dtype=mstype.float32):
        super().__init__()
        name = {"RNN_TANH": "RNNCell", "RNN_RELU": "RNNCell"}.get(mode, mode + "Cell")
        _check_size(name, "input_size", input_size)
        _check_size(name, "hidden_size", hidden_size)
        self.mode, self.input_size, self.hidden_size, self.has_bias = mode, input_size, hidden_size, bool(has_bias)
        self.gate_size = _MODES[mode][0] * hidden_size
        dtype = mstype.to_dtype(dtype)
        bound = 1.0 / math.sqrt(hidden_size)
        self.weight_ih = Parameter(_uniform((self.gate_size, input_size), bound, dtype), "weight_ih")
        self.weight_hh = Parameter(_uniform((self.gate_size, hidden_size), bound, dtype), "weight_hh")
        if self.has_bias:
            self.bias_ih = Parameter(_uniform((self.gate_size,), bound, dtype), "bias_ih")
            self.bias_hh = Parameter(_uniform((self.gate_size,), bound, dtype), "bias_hh")
        self.layer = _layer_primitive(mode, False)
        self.expand = ops.ExpandDims()

    def _step(self, x, states: tuple) -> tuple:
        if self.has_bias:
            b_ih, b_hh = self.bias_ih, self.bias_hh
        else:
            b_ih = b_hh = ops.fill(x.dtype, (self.gate_size,), 0)
        _, last = _run_layer(
            self.mode, self.layer, self.expand(x, 0), states, self.weight_ih, self.weight_hh, b_ih, b_hh
        )
        return last

    def extend_repr(self) -> str:
        return f"input_size={self.input_size}, hidden_size={self.hidden_size}, has_bias={self.has_bias}"


class LSTMCell(_CellBase):
    """MindSpore's ``nn.LSTMCell(input_size, hidden_size, has_bias=True, dtype=mstype.float32)``: one step,
    ``cell(x, (hx, cx)) -> (hy, cy)`` with ``x`` [batch, input] (the LSTMLayer primitive on a sequence of
    one). Parameters ``weight_ih``, ``weight_hh``, ``bias_ih``, ``bias_hh``."""

    def __init__(self, input_size, hidden_size, has_bias=True, dtype=mstype.float32):
        super().__init__("LSTM", input_size, hidden_size, has_bias, dtype)

    def construct(self, x, hx):
        h, c = hx
        return self._step(x, (h, c))


class GRUCell(_CellBase):
    """MindSpore's ``nn.GRUCell(input_size, hidden_size, has_bias=True, dtype=mstype.float32)``: one step,
    ``cell(x, hx) -> hy`` with ``x`` [batch, input], ``hx`` [batch, hidden] (the GRULayer primitive on a
    sequence of one). Parameters ``weight_ih`` [3 hidden, input], ``weight_hh``, ``bias_ih``, ``bias_hh``."""

    def __init__(self, input_size, hidden_size, has_bias=True, dtype=mstype.float32):
        super().__init__("GRU", input_size, hidden_size, has_bias, dtype)

    def construct(self, x, hx):
        return self._step(x, (hx,))[0]


class RNNCell(_CellBase):
    """MindSpore's ``nn.RNNCell(input_size, hidden_size, has_bias=True, nonlinearity='tanh',
    dtype=mstype.float32)``: one step, ``cell(x, hx) -> hy``, :math:`hy = act(W_{ih} x + b_{ih} + W_{hh} hx +
    b_{hh})` (the RNNLayer primitive on a sequence of one)."""

    def __init__(self, input_size, hidden_size, has_bias=True, nonlinearity="tanh", dtype=mstype.float32):
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"For 'RNNCell', the 'nonlinearity' must be 'tanh' or 'relu', but got {nonlinearity!r}.")
        super().__init__("RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU", input_size, hidden_size, has_bias, dtype)
        self.nonlinearity = nonlinearity

    def construct(self, x, hx):
        return self._step(x, (hx,))[0]
