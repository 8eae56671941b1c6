"""MindSpore's ``ops.DynamicRNN`` (``P.DynamicRNN``): a one-layer LSTM over a time-major sequence whose weights
come as one matrix ``w`` [input_size + hidden_size, 4 * hidden_size] and one bias ``b`` [4 * hidden_size], the
gates in the order i, j, f, o (input, candidate, forget, output: the order MindSpore's Ascend ``nn.LSTM``
repacks its weights into before calling it). MindSpore runs it on Ascend only; the zoo's CTPN builds one in
every configuration (its GPU path then runs ``nn.LSTM``), the Ascend path calls it.

Built from primitives (MatMul, BiasAdd, Split, Sigmoid, Tanh, Mul, Add, Stack), one step after another, so
gradients, ``jit`` and both backends come with it. Each step:

.. math::
    (i, j, f, o) = [x_t, h_{t-1}] W + b, \\quad
    c_t = \\sigma(f + forget\\_bias) c_{t-1} + \\sigma(i) \\tanh(j), \\quad
    h_t = \\sigma(o) \\tanh(c_t).
"""

from __future__ import annotations

from opforge import dtype as mstype
from opforge.primitives import array_ops, math_ops, nn_ops
from opforge.primitives.validator import Validator as validator
from opforge.tensor import Tensor

__all__ = ["DynamicRNN"]

_matmul = math_ops.MatMul()
_bias_add = nn_ops.BiasAdd()
_split4 = array_ops.Split(axis=1, output_num=4)
_concat1 = array_ops.Concat(axis=1)
_stack = array_ops.Stack(axis=0)
_sigmoid = nn_ops.Sigmoid()
_tanh = nn_ops.Tanh()
_cast = array_ops.Cast()
_reshape = array_ops.Reshape()
_FLOATS = (mstype.float16, mstype.float32)


def _check_tensor(name: str, value, rank: int) -> Tensor:
    if not isinstance(value, Tensor):
        raise TypeError(f"For 'DynamicRNN', the '{name}' must be a Tensor, but got {type(value).__name__}.")
    if value.dtype not in _FLOATS:
        raise TypeError(f"For 'DynamicRNN', the '{name}' must be float16 or float32, but got {value.dtype}.")
    if len(value.shape) != rank:
        raise ValueError(f"For 'DynamicRNN', the '{name}' must be {rank}-D, but got shape {list(value.shape)}.")
    return value


class DynamicRNN:
    r"""``DynamicRNN(cell_type='LSTM', direction='UNIDIRECTIONAL', cell_depth=1, use_peephole=False,
    keep_prob=1.0, cell_clip=-1.0, num_proj=0, time_major=True, activation='tanh', forget_bias=0.0,
    is_training=True)(x, w, b, seq_length, init_h, init_c)``.

    Inputs: ``x`` [num_step, batch, input_size]; ``w`` [input_size + hidden_size, 4 * hidden_size]; ``b``
    [4 * hidden_size]; ``seq_length`` None (as MindSpore's, no other value); ``init_h`` and ``init_c``
    [1, batch, hidden_size]. MindSpore's kernel takes ``x``, ``w``, ``init_h``, ``init_c`` in float16 and ``b``
    in float16 or float32; here float32 is accepted for all of them too. The steps compute in ``b``'s dtype.

    Returns ``(y, output_h, output_c, i, j, f, o, tanhc)``, each [num_step, batch, hidden_size] in ``b``'s
    dtype: ``y`` and ``output_h`` the hidden state after each step, ``output_c`` the cell state,
    ``i, j, f, o`` the activated gates (sigmoid, tanh, sigmoid, sigmoid) and ``tanhc`` :math:`\tanh(c_t)`.

    The attributes MindSpore accepts but supports one value of (``cell_type`` 'LSTM', ``direction``
    'UNIDIRECTIONAL', ``time_major`` True, ``activation`` 'tanh') are checked as MindSpore checks them;
    ``cell_depth`` 1, ``use_peephole`` False, ``num_proj`` 0 and ``cell_clip`` < 0 are the only values run here
    (others raise ValueError). ``keep_prob`` and ``is_training`` are recorded."""

    def __init__(
        self,
        cell_type="LSTM",
        direction="UNIDIRECTIONAL",
        cell_depth=1,
        use_peephole=False,
        keep_prob=1.0,
        cell_clip=-1.0,
        num_proj=0,
        time_major=True,
        activation="tanh",
        forget_bias=0.0,
        is_training=True,
    ):
        name = "DynamicRNN"
        validator.check_value_type("cell_type", cell_type, [str], name)
        validator.check_value_type("direction", direction, [str], name)
        validator.check_value_type("cell_depth", cell_depth, [int], name)
        validator.check_value_type("use_peephole", use_peephole, [bool], name)
        validator.check_value_type("keep_prob", keep_prob, [float], name)
        validator.check_value_type("cell_clip", cell_clip, [float], name)
        validator.check_value_type("num_proj", num_proj, [int], name)
        validator.check_value_type("time_major", time_major, [bool], name)
        validator.check_value_type("activation", activation, [str], name)
        validator.check_value_type("forget_bias", forget_bias, [float], name)
        validator.check_value_type("is_training", is_training, [bool], name)
        for arg, value, only in (
            ("cell_type", cell_type, "LSTM"),
            ("direction", direction, "UNIDIRECTIONAL"),
            ("time_major", time_major, True),
            ("activation", activation, "tanh"),
            ("cell_depth", cell_depth, 1),
            ("use_peephole", use_peephole, False),
            ("num_proj", num_proj, 0),
        ):
            if value != only:
                raise ValueError(f"For '{name}', the '{arg}' supports only {only!r}, but got {value!r}.")
        if cell_clip >= 0:
            raise ValueError(
                f"For '{name}', only a negative 'cell_clip' (no clipping) is supported, but got {cell_clip}."
            )
        self.cell_type, self.direction, self.cell_depth = cell_type, direction, cell_depth
        self.use_peephole, self.keep_prob, self.cell_clip = use_peephole, keep_prob, cell_clip
        self.num_proj, self.time_major, self.activation = num_proj, time_major, activation
        self.forget_bias, self.is_training = forget_bias, is_training

    @property
    def name(self) -> str:
        return "DynamicRNN"

    def __call__(self, x, w, b, seq_length, init_h, init_c):
        x = _check_tensor("x", x, 3)
        w = _check_tensor("w", w, 2)
        b = _check_tensor("b", b, 1)
        init_h = _check_tensor("init_h", init_h, 3)
        init_c = _check_tensor("init_c", init_c, 3)
        if seq_length is not None:
            raise ValueError(f"For 'DynamicRNN', the 'seq_length' must be None, but got {type(seq_length).__name__}.")
        steps, batch, in_size = x.shape
        hidden = init_h.shape[-1]
        if tuple(w.shape) != (in_size + hidden, 4 * hidden) or tuple(b.shape) != (4 * hidden,):
            raise ValueError(
                f"For 'DynamicRNN', the 'w' must be {[in_size + hidden, 4 * hidden]} and the 'b' {[4 * hidden]} "
                f"(input_size {in_size}, hidden_size {hidden}), but got {list(w.shape)} and {list(b.shape)}."
            )
        for arg, state in (("init_h", init_h), ("init_c", init_c)):
            if tuple(state.shape) != (1, batch, hidden):
                raise ValueError(
                    f"For 'DynamicRNN', the '{arg}' must be {[1, batch, hidden]}, but got {list(state.shape)}."
                )
        dtype = b.dtype
        x, w, h, c = (t if t.dtype is dtype else _cast(t, dtype) for t in (x, w, init_h, init_c))
        h, c = _reshape(h, (batch, hidden)), _reshape(c, (batch, hidden))
        outs = {k: [] for k in ("h", "c", "i", "j", "f", "o", "tanhc")}
        for t in range(steps):
            gates = _bias_add(_matmul(_concat1((x[t], h)), w), b)
            i, j, f, o = _split4(gates)
            i, j, o = _sigmoid(i), _tanh(j), _sigmoid(o)
            f = _sigmoid(f + self.forget_bias) if self.forget_bias != 0.0 else _sigmoid(f)
            c = f * c + i * j
            tanhc = _tanh(c)
            h = o * tanhc
            for k, v in (("h", h), ("c", c), ("i", i), ("j", j), ("f", f), ("o", o), ("tanhc", tanhc)):
                outs[k].append(v)
        y = _stack(outs["h"])
        return (y, y, _stack(outs["c"]), *(_stack(outs[k]) for k in ("i", "j", "f", "o", "tanhc")))
