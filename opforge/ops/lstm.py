"""MindSpore's ``ops.LSTM`` primitive (``P.LSTM``): a stacked, optionally bidirectional LSTM whose weights come
in one flat Tensor ``w``, packed as MindSpore's GPU kernel hands it to cuDNN. Built on ``LSTMLayer`` (one
layer and direction over the sequence in one C++/CUDA kernel, BPTT in one more, as ``nn.LSTM`` runs):
``w`` is sliced into each layer's matrices, so gradients reach ``x``, ``h``, ``c`` and ``w`` through the
layers' bprops and the slices'.

The packing of ``w`` (cuDNN's ``CUDNN_LINEAR_INPUT`` LSTM with ``CUDNN_RNN_DOUBLE_BIAS``, which MindSpore's
GPU kernel sets up, and the order MindSpore's own ``nn.LSTM`` concatenates its GPU weights in): for each
layer, for each direction (forward, then reverse), ``w_ih`` [4 hidden, in] row-major, ``w_hh`` [4 hidden,
hidden], then, with ``has_bias``, ``b_ih`` [4 hidden] and ``b_hh`` [4 hidden]; gates i, f, g, o; ``in`` is
``input_size`` for layer 0 and ``num_directions * hidden_size`` above it."""

from __future__ import annotations

import numpy as np

from opforge import dtype as mstype
from opforge.dispatch.trace import replay_counter
from opforge.ops import functional as F
from opforge.ops import functional_extra as _FX
from opforge.primitives import array_ops, nn_ops
from opforge.primitives.validator import Rel
from opforge.primitives.validator import Validator as validator
from opforge.seed import derived_seed
from opforge.tensor import Tensor

__all__ = ["LSTM", "lstm_weight_size"]

_GATES = 4
_DTYPES = (mstype.float16, mstype.float32, mstype.float64)
_slice = array_ops.Slice()


def lstm_weight_size(input_size: int, hidden_size: int, num_layers: int, has_bias: bool, bidirectional: bool) -> int:
    """The number of elements of ``ops.LSTM``'s ``w`` (cuDNN's parameter size): for each layer and direction
    ``4 hidden * (in + hidden)``, plus ``2 * 4 hidden`` with ``has_bias``."""
    directions = 2 if bidirectional else 1
    gate_size = _GATES * hidden_size
    total = 0
    for layer in range(num_layers):
        in_size = input_size if layer == 0 else hidden_size * directions
        total += directions * (gate_size * (in_size + hidden_size) + (2 * gate_size if has_bias else 0))
    return total


class LSTM:
    r"""``LSTM(input_size, hidden_size, num_layers, has_bias, bidirectional, dropout)(x, h, c, w)`` returns
    ``(output, h_n, c_n, reserve, state)``:

    * ``x`` [seq, batch, input_size]; ``h`` and ``c`` [num_layers * num_directions, batch, hidden_size] (the
      initial states, index ``layer * num_directions + direction``); ``w`` the flat packed weights (any
      shape of rank >= 3 holding :func:`lstm_weight_size` elements, MindSpore's [size, 1, 1]; packing in the
      module's docstring);
    * ``output`` [seq, batch, num_directions * hidden_size] (the last layer's h at each step, the
      directions concatenated), ``h_n`` and ``c_n`` like ``h`` (each layer and direction's last state);
    * ``reserve`` [r, 1]: each layer and direction's activated gates and cell states (what the backward pass
      reads, as cuDNN's reserve space), ``state`` [s, 1]: the dropout masks applied between layers (s = 0
      without dropout).

    Each layer computes :math:`(i, f, g, o) = (\sigma, \sigma, \tanh, \sigma)(x_t W_{ih}^T + b_{ih} +
    h_{t-1} W_{hh}^T + b_{hh})`, :math:`c_t = f c_{t-1} + i g`, :math:`h_t = o \tanh(c_t)`; the reverse
    direction runs from the last step. ``dropout`` (a float in [0, 1]) drops the input of every layer but
    the first, at each call (the primitive has no training flag: MindSpore's GPU kernel always runs cuDNN's
    training forward), with masks drawn from a seed of its own and a step moved on per call (a ``jit`` trace
    moves it on per replay). Errors as MindSpore's: TypeError for a non-int size, a non-bool ``has_bias`` /
    ``bidirectional``, a non-float ``dropout`` or an input of another dtype; ValueError for a size <= 0, a
    ``dropout`` outside [0, 1], a shape that does not match, or a ``w`` of the wrong size. dtypes: float16
    (computed in float32), float32, float64 (the same for all four inputs)."""

    def __init__(self, input_size, hidden_size, num_layers, has_bias, bidirectional, dropout):
        self.name = "LSTM"
        self.input_size = validator.check_positive_int(input_size, "input_size", self.name)
        self.hidden_size = validator.check_positive_int(hidden_size, "hidden_size", self.name)
        self.num_layers = validator.check_positive_int(num_layers, "num_layers", self.name)
        self.has_bias = validator.check_value_type("has_bias", has_bias, (bool,), self.name)
        self.bidirectional = validator.check_value_type("bidirectional", bidirectional, (bool,), self.name)
        validator.check_value_type("dropout", dropout, [float], self.name)
        self.dropout = validator.check_float_range(dropout, 0, 1, Rel.INC_BOTH, "dropout", self.name)
        self.num_directions = 2 if bidirectional else 1
        self.weight_size = lstm_weight_size(input_size, hidden_size, num_layers, has_bias, bidirectional)
        self._layers = tuple(nn_ops.LSTMLayer(reverse) for reverse in (False, True)[: self.num_directions])
        # the dropout masks between layers: (seed, step), a new step per call (nn.Dropout's scheme)
        self.seed = derived_seed() if 0 < self.dropout < 1 and num_layers > 1 else 0
        self.step = 0

    def __repr__(self) -> str:
        return (
            f"Prim[LSTM]<input_size={self.input_size}, hidden_size={self.hidden_size}, "
            f"num_layers={self.num_layers}, has_bias={self.has_bias}, bidirectional={self.bidirectional}, "
            f"dropout={self.dropout}>"
        )

    # -- checks ---------------------------------------------------------------------------------------------
    def _check(self, x, h, c, w) -> None:
        for name, t in (("x", x), ("h", h), ("c", c), ("w", w)):
            _FX._tensor(self.name, name, t)
        validator.check_tensors_dtypes_same_and_valid(
            {"x": x.dtype, "h": h.dtype, "c": c.dtype, "w": w.dtype}, _DTYPES, self.name
        )
        validator.check_equal_int(x.ndim, 3, "x rank", self.name)
        validator.check_equal_int(x.shape[2], self.input_size, "x[2]", self.name)
        validator.check_equal_int(h.ndim, 3, "h rank", self.name)
        if tuple(h.shape) != tuple(c.shape):
            raise ValueError(
                f"For '{self.name}', the 'h' and 'c' must have the same shape, but got {list(h.shape)} and "
                f"{list(c.shape)}."
            )
        validator.check_equal_int(h.shape[0], self.num_layers * self.num_directions, "h[0]", self.name)
        validator.check_equal_int(h.shape[1], x.shape[1], "h[1]", self.name)
        validator.check_equal_int(h.shape[2], self.hidden_size, "h[2]", self.name)
        if w.ndim < 3:
            raise ValueError(f"For '{self.name}', the dimension of weight cannot be less than 3, but got {w.ndim}.")
        if w.size != self.weight_size:
            raise ValueError(
                f"For '{self.name}', the size of weight must be equal to {self.weight_size} (input_size "
                f"{self.input_size}, hidden_size {self.hidden_size}, num_layers {self.num_layers}, has_bias "
                f"{self.has_bias}, bidirectional {self.bidirectional}), but got {w.size} (shape {list(w.shape)})."
            )

    # -- the computation ------------------------------------------------------------------------------------
    def _unpack(self, flat):
        """Each layer and direction's ``(w_ih, w_hh, bias)`` sliced from the flat weights (``bias`` is
        ``b_ih + b_hh``, the sum LSTMLayer takes; zeros without ``has_bias``)."""
        gate_size, hidden = _GATES * self.hidden_size, self.hidden_size
        offset, params = 0, []

        def take(*shape):
            nonlocal offset
            n = int(np.prod(shape))
            part = F.reshape(_slice(flat, (offset,), (n,)), shape)
            offset += n
            return part

        for layer in range(self.num_layers):
            in_size = self.input_size if layer == 0 else hidden * self.num_directions
            for _ in range(self.num_directions):
                w_ih, w_hh = take(gate_size, in_size), take(gate_size, hidden)
                if self.has_bias:
                    b_ih, b_hh = take(gate_size), take(gate_size)
                    bias = F.add(b_ih, b_hh)
                else:
                    bias = F.fill(flat.dtype, (gate_size,), 0)
                params.append((w_ih, w_hh, bias))
        return params

    def _drop(self, x):
        """The next layer's input through this call's dropout mask: ``(x', mask)``."""
        if self.dropout == 1.0:
            zeros = F.zeros_like(x)
            return zeros, zeros
        keep = 1.0 - self.dropout

        def advance() -> int:
            step = self.step
            self.step = step + 1
            return step

        counter = replay_counter(advance, x.device)
        if counter is None:
            out, mask = nn_ops.Dropout(keep_prob=keep, Seed0=self.seed, Seed1=advance())(x)
        else:  # a trace records: the step a Tensor each replay refills
            seed = Tensor(np.array(self.seed, np.int64), device=x.device)
            out, mask = nn_ops.DropoutExt(p=self.dropout)(x, seed, counter)
        return out, mask

    def __call__(self, x, h, c, w):
        self._check(x, h, c, w)
        dtype = x.dtype
        if dtype == mstype.float16:  # LSTMLayer's kernels are float32 / float64
            x, h, c, w = (F.cast(t, mstype.float32) for t in (x, h, c, w))
        params = self._unpack(F.reshape(w, (-1,)))
        layer_in, h_n, c_n, saved, masks = x, [], [], [], []
        for layer in range(self.num_layers):
            if layer > 0 and self.dropout > 0:
                layer_in, mask = self._drop(layer_in)
                masks.append(F.reshape(mask, (-1, 1)))
            outs = []
            for d, prim in enumerate(self._layers):
                k = layer * self.num_directions + d
                y, hk, ck, gates, cells = prim(layer_in, h[k], c[k], *params[k])
                outs.append(y)
                h_n.append(hk)
                c_n.append(ck)
                saved += [F.reshape(gates, (-1, 1)), F.reshape(cells, (-1, 1))]
            layer_in = outs[0] if len(outs) == 1 else F.concat(tuple(outs), -1)
        outputs = (
            layer_in,
            F.stack(tuple(h_n), 0),
            F.stack(tuple(c_n), 0),
            F.concat(tuple(saved), 0),
            F.concat(tuple(masks), 0) if masks else F.fill(layer_in.dtype, (0, 1), 0),
        )
        if dtype == mstype.float16:
            outputs = tuple(F.cast(t, dtype) for t in outputs)
        return outputs
