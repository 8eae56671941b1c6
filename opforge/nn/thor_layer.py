"""The layers of the second-order optimizer THOR (MindSpore's ``nn.DenseThor``, ``nn.Conv2dThor``,
``nn.EmbeddingThor``) and ``ConvertNetUtils``, which puts them in place of a network's ``Dense``, ``Conv2d`` and
``Embedding`` cells (``nn.thor`` calls it; ``opforge/nn/optim_thor.py``).

While a layer's ``thor`` flag is True (``add_flags_recursive(thor=...)``; ``ModelThor`` sets it every ``frequency``
steps), its forward pass writes A, the covariance of its inputs, into Parameters of its own, and the backward pass
writes G, the covariance of the gradient of its output: the gradient goes through ``ops.InsertGradientOf``, whose
function records G and passes the gradient on (as MindSpore's layers do). Both are computed in float32 from values
cut off the tape, as MindSpore's GPU kernels compute them:

- ``DenseThor``: ``matrix_a = x^T x / rows``, ``matrix_g = dy^T dy / rows`` (rows: the batch, or every
  leading position of an input of higher rank).
- ``Conv2dThor``: the input's patches (the windows the convolution reads, its padding included) averaged over
  the batch, ``P`` [in_channels * kh * kw, L]; ``matrix_a = P P^T / L`` with ``a_normalizer = L`` (the output
  positions); the output gradient averaged over the batch, ``D`` [out_channels, L]; ``matrix_g = D D^T / L``
  with ``g_normalizer = L``.
- ``EmbeddingThor``: ``matrix_a`` the number of times each id was looked up, ``matrix_g = dy^T dy / tokens``.

With ``thor`` False a layer computes as the layer it replaced.
"""

from __future__ import annotations

import numpy as np

from opforge import dtype as mstype
from opforge import ops
from opforge.geometry import conv_output_and_pads
from opforge.nn import init as _init
from opforge.nn.cell import Cell
from opforge.nn.layers import Dense, Embedding, get_activation
from opforge.nn.layers_conv import Conv2d, _positive_tuple
from opforge.ops import functional as F
from opforge.tensor import Parameter, Tensor

__all__ = ["DenseThor", "Conv2dThor", "EmbeddingThor"]


def _positive_int(where: str, name: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"For '{where}', the '{name}' must be an int, but got {type(value).__name__}.")
    if value <= 0:
        raise ValueError(f"For '{where}', the '{name}' must be a positive int, but got {value}.")
    return int(value)


def _check_bool(where: str, name: str, value) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"For '{where}', the '{name}' must be a bool, but got {type(value).__name__}.")
    return value


def _matrix(value, name: str) -> Parameter:
    return Parameter(Tensor(np.asarray(value, np.float32)), name=name, requires_grad=False)


class _ThorLayer(Cell):
    """What the THOR layers share: the ``thor`` flag, the gradient hook and the float32 statistics."""

    def __init__(self):
        super().__init__()
        self.thor = True
        self._hook = ops.InsertGradientOf(self._record_gradient)  # (a bound method: a deep copy hooks the copy)
        self._matmul_ta = ops.MatMul(transpose_a=True)  # x^T x
        self._matmul_tb = ops.MatMul(transpose_b=True)  # x x^T
        self._cast = ops.Cast()
        self._reshape = ops.Reshape()

    def _record_gradient(self, dout):
        self.save_gradient(dout)
        return dout

    def _covariance(self, rows, transpose: bool = False):
        """``rows^T rows / len(rows)`` (or ``rows rows^T / its columns`` with ``transpose``), in float32, off the
        tape."""
        rows = self._cast(F.stop_gradient(rows), mstype.float32)
        if transpose:
            return self._matmul_tb(rows, rows) * (1.0 / rows.shape[1])
        return self._matmul_ta(rows, rows) * (1.0 / rows.shape[0])

    def save_gradient(self, dout):
        raise NotImplementedError


class DenseThor(_ThorLayer):
    r"""MindSpore's ``nn.DenseThor(in_channels, out_channels, weight_init='normal', bias_init='zeros',
    has_bias=True, activation=None)``: ``nn.Dense``'s :math:`\text{activation}(x W^T + b)` that records
    ``matrix_a`` [in_channels, in_channels] and ``matrix_g`` [out_channels, out_channels] for THOR (identities
    until the first step)."""

    def __init__(self, in_channels, out_channels, weight_init="normal", bias_init="zeros", has_bias=True,
                 activation=None):  # fmt: skip
        super().__init__()
        where = "DenseThor"
        self.in_channels = _positive_int(where, "in_channels", in_channels)
        self.out_channels = _positive_int(where, "out_channels", out_channels)
        self.has_bias = _check_bool(where, "has_bias", has_bias)
        self.weight = Parameter(_init.initializer(weight_init, (self.out_channels, self.in_channels)), "weight")
        self.bias = Parameter(_init.initializer(bias_init, (self.out_channels,)), "bias") if has_bias else None
        self.activation = get_activation(activation)
        self.activation_flag = self.activation is not None
        self.matrix_a = _matrix(np.eye(self.in_channels), "matrix_a")
        self.matrix_g = _matrix(np.eye(self.out_channels), "matrix_g")
        self.bias_add = ops.BiasAdd()

    def save_gradient(self, dout):
        self.matrix_g = self._covariance(dout)
        return dout

    def construct(self, x):
        shape = x.shape
        if len(shape) != 2:
            x = self._reshape(x, (-1, self.in_channels))
        params = self._params
        if self.thor:
            self.matrix_a = self._covariance(x)
            x = self._hook(self._matmul_tb(x, params["weight"]))
        else:
            x = self._matmul_tb(x, params["weight"])
        if self.has_bias:
            x = self.bias_add(x, params["bias"])
        if self.activation_flag:
            x = self._cells["activation"](x)
        if len(shape) != 2:
            x = self._reshape(x, (*shape[:-1], self.out_channels))
        return x

    def extend_repr(self) -> str:
        return f"input_channels={self.in_channels}, output_channels={self.out_channels}, has_bias={self.has_bias}"


class Conv2dThor(_ThorLayer):
    r"""MindSpore's ``nn.Conv2dThor(in_channels, out_channels, kernel_size, stride=1, pad_mode='same',
    padding=0, dilation=1, group=1, has_bias=False, weight_init='normal', bias_init='zeros')``: ``nn.Conv2d``
    (NCHW) recording ``matrix_a_cov`` [in_channels * kh * kw, same], ``matrix_g_cov`` [out_channels,
    out_channels] and their normalizers for THOR (zeros until the first step). ``group`` must be 1 (THOR's A of
    a grouped convolution is not the covariance this layer records)."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, pad_mode="same", padding=0, dilation=1,
                 group=1, has_bias=False, weight_init="normal", bias_init="zeros"):  # fmt: skip
        super().__init__()
        where = "Conv2dThor"
        self.in_channels = _positive_int(where, "in_channels", in_channels)
        self.out_channels = _positive_int(where, "out_channels", out_channels)
        self.group = _positive_int(where, "group", group)
        if self.group != 1:
            raise ValueError(f"For '{where}', the 'group' must be 1, but got {group}.")
        self.has_bias = _check_bool(where, "has_bias", has_bias)
        self.kernel_size = _positive_tuple(where, "kernel_size", kernel_size)
        self.stride = _positive_tuple(where, "stride", stride)
        self.dilation = _positive_tuple(where, "dilation", dilation)
        self.pad_mode, self.padding, self.bias_init = pad_mode, padding, bias_init
        self.conv2d = ops.Conv2D(self.out_channels, self.kernel_size, mode=1, pad_mode=pad_mode, pad=padding,
                                 stride=self.stride, dilation=self.dilation)  # fmt: skip
        shape = (self.out_channels, self.in_channels, *self.kernel_size)
        self.weight = Parameter(_init.initializer(weight_init, shape), "weight")
        self.bias = Parameter(_init.initializer(bias_init, (self.out_channels,)), "bias") if has_bias else None
        self.bias_add = ops.BiasAdd()
        self.matrix_a_dim = self.in_channels * self.kernel_size[0] * self.kernel_size[1]
        self.matrix_a_cov = _matrix(np.zeros((self.matrix_a_dim,) * 2), "matrix_a")
        self.matrix_g_cov = _matrix(np.zeros((self.out_channels,) * 2), "matrix_g")
        self.a_normalizer = _matrix([1.0], "a_normalizer")
        self.g_normalizer = _matrix([1.0], "g_normalizer")
        self._mean = ops.ReduceMean(keep_dims=False)

    def _pads(self, height: int, width: int) -> tuple:
        """(left, right, top, bottom): the zeros the convolution reads around the input."""
        pads = self.padding if isinstance(self.padding, tuple) else (self.padding,) * 4
        rows = conv_output_and_pads(self.cls_name, height, self.kernel_size[0], self.stride[0], self.dilation[0],
                                    self.pad_mode, pads[:2])  # fmt: skip
        cols = conv_output_and_pads(self.cls_name, width, self.kernel_size[1], self.stride[1], self.dilation[1],
                                    self.pad_mode, pads[2:])  # fmt: skip
        return (cols[1], cols[2], rows[1], rows[2])

    def _statistic(self, rows, normalizer_name: str):
        """``rows rows^T / L`` of ``rows`` [N, d, L] averaged over N; L recorded as the normalizer."""
        rows = self._mean(self._cast(F.stop_gradient(rows), mstype.float32), 0)
        setattr(self, normalizer_name, Tensor(np.array([rows.shape[1]], np.float32)))
        return self._covariance(rows, transpose=True)

    def save_gradient(self, dout):
        self.matrix_g_cov = self._statistic(self._reshape(dout, (dout.shape[0], self.out_channels, -1)), "g_normalizer")
        return dout

    def construct(self, x):
        weight = self._params["weight"]
        if self.thor:
            pads = self._pads(x.shape[2], x.shape[3])
            patches = F.stop_gradient(x)
            if any(pads):
                patches = ops.pad(patches, pads)
            patches = ops.unfold(patches, self.kernel_size, self.dilation, 0, self.stride)
            self.matrix_a_cov = self._statistic(patches, "a_normalizer")
            out = self.conv2d(x, weight)
            out = self._hook(out)
        else:
            out = self.conv2d(x, weight)
        if self.has_bias:
            out = self.bias_add(out, self._params["bias"])
        return out

    def extend_repr(self) -> str:
        return (
            f"input_channels={self.in_channels}, output_channels={self.out_channels}, kernel_size={self.kernel_size}, "
            f"stride={self.stride}, pad_mode={self.pad_mode}, padding={self.padding}, dilation={self.dilation}, "
            f"group={self.group}, has_bias={self.has_bias}, bias_init={self.bias_init}"
        )


class EmbeddingThor(_ThorLayer):
    """MindSpore's ``nn.EmbeddingThor(vocab_size, embedding_size, use_one_hot=False, embedding_table='normal',
    dtype=mstype.float32, padding_idx=None)``: ``nn.Embedding``'s lookup, recording ``matrix_a`` [vocab_size]
    (how often each id was looked up) and ``matrix_g`` [embedding_size, embedding_size] for THOR. With
    ``use_one_hot`` the lookup is OneHot(ids) @ table and records nothing, as MindSpore's."""

    def __init__(self, vocab_size, embedding_size, use_one_hot=False, embedding_table="normal", dtype=mstype.float32,
                 padding_idx=None):  # fmt: skip
        super().__init__()
        where = "EmbeddingThor"
        self.vocab_size = _positive_int(where, "vocab_size", vocab_size)
        self.embedding_size = _positive_int(where, "embedding_size", embedding_size)
        self.use_one_hot = _check_bool(where, "use_one_hot", use_one_hot)
        if dtype not in mstype.number_type:
            raise TypeError(f"For '{where}', the 'dtype' must be a number type, but got {dtype}.")
        if padding_idx is not None and (isinstance(padding_idx, bool) or not 0 <= padding_idx <= vocab_size):
            raise ValueError(f"For '{where}', the 'padding_idx' must be in [0, {vocab_size}], but got {padding_idx}.")
        self.dtype, self.padding_idx = dtype, padding_idx
        table = _init.initializer(embedding_table, (self.vocab_size, self.embedding_size))
        if padding_idx is not None and padding_idx < vocab_size:
            data = table.asnumpy().copy()
            data[padding_idx] = 0
            table = Tensor(data)
        self.embedding_table = Parameter(table, "embedding_table")
        self.matrix_a = _matrix(np.zeros(self.vocab_size), "matrix_a")
        self.matrix_g = _matrix(np.zeros((self.embedding_size,) * 2), "matrix_g")
        self.gather = ops.Gather()
        self.one_hot = ops.OneHot()
        self._sum = ops.ReduceSum(keep_dims=False)

    def save_gradient(self, dout):
        self.matrix_g = self._covariance(dout)
        return dout

    def construct(self, ids):
        if ids.dtype not in (mstype.int32, mstype.int64):
            raise TypeError(f"For 'EmbeddingThor', the 'input' must be int32 or int64 ids, but got {ids.dtype}.")
        flat = self._reshape(ids, (-1,))
        table = self._params["embedding_table"]
        if self.use_one_hot:
            on, off = Tensor(1.0, self.dtype), Tensor(0.0, self.dtype)
            rows = ops.matmul(self.one_hot(flat, self.vocab_size, on, off), table)
        elif self.thor:
            on, off = Tensor(1.0, mstype.float32), Tensor(0.0, mstype.float32)
            self.matrix_a = self._sum(self.one_hot(flat, self.vocab_size, on, off), 0)
            rows = self.gather(table, flat, 0)
            rows = self._hook(rows)
        else:
            rows = self.gather(table, flat, 0)
        return self._reshape(rows, (*ids.shape, self.embedding_size))

    def extend_repr(self) -> str:
        return (
            f"vocab_size={self.vocab_size}, embedding_size={self.embedding_size}, use_one_hot={self.use_one_hot}, "
            f"dtype={self.dtype}, padding_idx={self.padding_idx}"
        )


# -- conversion ---------------------------------------------------------------------------------------------
class ConvertNetUtils:
    """MindSpore's ``ConvertNetUtils`` (``mindspore.train.train_thor``): ``convert_to_thor_net(net)`` replaces, in
    place, each ``nn.Dense``, ``nn.Conv2d`` (``group`` 1) and ``nn.Embedding`` of ``net`` whose weight is trained
    by its THOR layer, which takes over the cell's Parameters (same objects, same names) and settings. Subclasses
    of these cells are searched like other cells, not converted; MindSpore's exceptions are kept (a Dense or
    Conv2d under a path holding 'wide' or 'rpn_with_loss.rpn_convs_list.')."""

    @staticmethod
    def _convert_dense(cell):
        new = DenseThor(cell.in_channels, cell.out_channels, weight_init="zeros", has_bias=cell.has_bias,
                        activation=cell.activation)  # fmt: skip
        new.weight = cell.weight
        if cell.has_bias:
            new.bias = cell.bias
        return new

    @staticmethod
    def _convert_conv2d(cell):
        new = Conv2dThor(cell.in_channels, cell.out_channels, cell.kernel_size, stride=cell.stride,
                         pad_mode=cell.pad_mode, padding=cell.padding, dilation=cell.dilation,
                         has_bias=cell.has_bias, weight_init="zeros")  # fmt: skip
        new.weight = cell.weight
        if cell.has_bias:
            new.bias = cell.bias
        return new

    @staticmethod
    def _convert_embedding(cell):
        new = EmbeddingThor(cell.vocab_size, cell.embedding_size, use_one_hot=False, embedding_table="zeros")
        new.embedding_table = cell.embedding_table
        return new

    _CONVERT = {Dense: "_convert_dense", Conv2d: "_convert_conv2d", Embedding: "_convert_embedding"}

    @staticmethod
    def _weight(cell) -> Parameter:
        return cell.embedding_table if isinstance(cell, Embedding) else cell.weight

    def _need_change(self, cell) -> bool:
        name = self._weight(cell).name.lower()
        if type(cell) is Conv2d and (cell.group != 1 or cell.data_format != "NCHW"):
            return False
        if type(cell) in (Dense, Conv2d) and ("rpn_with_loss.rpn_convs_list." in name or "wide" in name):
            return False
        return self._weight(cell).requires_grad

    def _convert_to_thor_net(self, net) -> None:
        for name, cell in net.name_cells().items():
            if cell is None or isinstance(cell, (DenseThor, Conv2dThor, EmbeddingThor)):
                continue
            method = self._CONVERT.get(type(cell))
            if method is None:
                self._convert_to_thor_net(cell)
                continue
            if not self._need_change(cell):
                continue
            weight_name = self._weight(cell).name
            prefix = weight_name.rpartition(".")[0]
            new = getattr(self, method)(cell)
            net.insert_child_to_cell(name, new)
            new.update_parameters_name(prefix + "." if prefix else "")
            to_float = cell.__dict__.get("_to_float")
            if to_float is not None:  # the cell's mixed precision (to_float) carries over
                new.to_float(to_float)

    def convert_to_thor_net(self, net) -> None:
        """Replace the Dense, Conv2d and Embedding cells of ``net`` by their THOR layers, in place."""
        if not isinstance(net, Cell):
            raise TypeError(f"For 'convert_to_thor_net', the 'net' must be a Cell, but got {type(net).__name__}.")
        self._convert_to_thor_net(net)
