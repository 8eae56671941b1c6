r"""THOR, the second-order optimizer (MindSpore's ``nn.thor`` / ``nn.optim.thor``), as MindSpore's GPU version
(``ThorGpu``) computes it.

``thor(net, learning_rate, damping, momentum, weight_decay=0.0, loss_scale=1.0, batch_size=32,
use_nesterov=False, decay_filter=lambda x: x.name not in [], split_indices=None, enable_clip_grad=False,
frequency=100)`` converts ``net`` to THOR layers in place (``ConvertNetUtils``, opforge/nn/thor_layer.py) and
returns the optimizer of its trainable Parameters. ``learning_rate`` and ``damping`` are Tensors: one value, or
one per step (step ``i`` reads entry ``i``, the last once they run out).

A step, with :math:`\lambda` the step's damping, :math:`s` the loss scale and :math:`B` the batch size:

- every gradient is divided by :math:`s`;
- when the ``thor`` flag is set (every ``frequency`` steps under ``ModelThor``, every step otherwise) the
  inverses are computed from the statistics the layers recorded and kept in the Parameters
  ``matrix_a_inv_<k>`` / ``matrix_g_inv_<k>`` (k: the layer); the other steps reuse them. For a Dense layer,
  :math:`A^{-1} = (A + \sqrt{\lambda} I)^{-1}` and :math:`G^{-1} = (G B^2 / s^2 + \sqrt{\lambda} I)^{-1}`; for
  a Conv2d layer the same with :math:`\sqrt{\lambda / n_A}` and :math:`\sqrt{\lambda / n_G}` (its normalizers)
  added, both inverses then multiplied by :math:`\sqrt{1 / n_A}`. Each is the inverse of the matrix's diagonal
  blocks of 128 rows (a matrix of up to 128 rows: the whole of it), as MindSpore's GPU CholeskyTrsm computes it;
- a Dense or Conv2d weight's gradient :math:`g` [out, in...] becomes :math:`G^{-1} g A^{-1}`; an embedding
  table's :math:`a^{-1} \odot g \, G^{-1}` with :math:`a^{-1} = 1 / (a / B + \sqrt{\lambda})` (a: the id
  counts) and :math:`G^{-1}` the whole inverse; a LayerNorm parameter's :math:`g / (g^2 / B + \sqrt{\lambda})`;
  other gradients stay;
- ``weight_decay * w`` is added to the gradients of the Parameters ``decay_filter`` accepts (every one by
  default), each gradient is clipped to norm 1 with ``enable_clip_grad``, and the momentum update runs
  (ApplyMomentum, Nesterov's with ``use_nesterov``).

In a data-parallel run the inverses are averaged over the ranks (``gradients_mean``) before use, as MindSpore
all-reduces them.
"""

from __future__ import annotations

import numpy as np

from opforge import dtype as mstype
from opforge import ops
from opforge.common.parameter import ParameterTuple
from opforge.nn.grad_reducer import DistributedGradReducer
from opforge.nn.layers import ClipByNorm
from opforge.nn.normalization import LayerNorm
from opforge.nn.optim import Optimizer, _check_float
from opforge.nn.thor_layer import Conv2dThor, ConvertNetUtils, DenseThor, EmbeddingThor
from opforge.parallel_context import ParallelMode, get_auto_parallel_context
from opforge.tensor import Parameter, Tensor

__all__ = ["thor"]

_SPLIT_DIM = 128  # the diagonal blocks MindSpore's GPU THOR inverts
_OTHER, _CONV, _FC, _EMBEDDING, _LAYER_NORM = -1, 1, 2, 3, 4  # MindSpore's layer types


def _check_type(name: str, value, types: tuple, type_name: str):
    if isinstance(value, bool) and bool not in types or not isinstance(value, types):
        raise TypeError(f"For 'thor', the '{name}' must be {type_name}, but got {type(value).__name__}.")
    return value


def _layer_types(net) -> dict:
    """{id of a Parameter: (its layer type, the THOR layer or None)} for the Parameters THOR treats apart."""
    types = {}
    for _, cell in net.cells_and_names():
        if isinstance(cell, (DenseThor, Conv2dThor)):
            types[id(cell.weight)] = (_CONV if isinstance(cell, Conv2dThor) else _FC, cell)
        elif isinstance(cell, EmbeddingThor):
            types[id(cell.embedding_table)] = (_EMBEDDING, cell)
        elif isinstance(cell, LayerNorm):
            for p in cell.get_parameters():
                types[id(p)] = (_LAYER_NORM, None)
    return types


class _Blocks:
    """The diagonal blocks of a ``dim`` x ``dim`` matrix: ``count`` blocks of ``size`` rows, the last padded."""

    def __init__(self, dim: int):
        self.dim, self.size = dim, min(dim, _SPLIT_DIM)
        self.count = -(-dim // self.size)
        self.pad = self.count * self.size - dim
        rows = (np.arange(self.count * self.size) < dim).astype(np.float32).reshape(self.count, self.size)
        self.eye = Tensor(np.stack([np.diag(r) for r in rows]))  # the damping's: the matrix's own rows
        self.padding = Tensor(np.stack([np.diag(1.0 - r) for r in rows]))  # the identity on the padded rows
        self.diagonal = Tensor(np.arange(self.count, dtype=np.int32) * (self.count + 1))


class ThorGpu(Optimizer):
    """The optimizer ``thor`` returns (MindSpore's class name); see the module docstring."""

    def __init__(self, net, learning_rate, damping, momentum, weight_decay=0.0, loss_scale=1.0, batch_size=32,
                 use_nesterov=False, decay_filter=lambda x: x.name not in [], split_indices=None,
                 enable_clip_grad=False, frequency=100):  # fmt: skip
        _check_type("learning_rate", learning_rate, (Tensor,), "a Tensor")
        _check_type("damping", damping, (Tensor,), "a Tensor")
        if damping.ndim > 1 or damping.size == 0:
            raise ValueError(f"For 'thor', the 'damping' must be a 0-d or 1-d Tensor, but got {list(damping.shape)}.")
        params = [p for p in net.get_parameters() if p.requires_grad]
        super().__init__(learning_rate, params, weight_decay, loss_scale)
        _check_type("momentum", momentum, (float,), "a float")
        self.momentum = _check_float("thor", "momentum", momentum)
        _check_type("frequency", frequency, (int,), "an int")
        if frequency < 2:
            raise ValueError(f"For 'thor', the 'frequency' must be at least 2, but got {frequency}.")
        self.frequency = frequency
        self.batch_size = _check_type("batch_size", batch_size, (int,), "an int")
        if batch_size <= 0:
            raise ValueError(f"For 'thor', the 'batch_size' must be positive, but got {batch_size}.")
        self.use_nesterov = _check_type("use_nesterov", use_nesterov, (bool,), "a bool")
        self.enable_clip_grad = _check_type("enable_clip_grad", enable_clip_grad, (bool,), "a bool")
        if not callable(decay_filter):
            raise TypeError(f"For 'thor', the 'decay_filter' must be callable, but got {type(decay_filter).__name__}.")
        if split_indices is not None and (
            not isinstance(split_indices, (list, tuple)) or not all(isinstance(i, int) for i in split_indices)
        ):
            raise TypeError(f"For 'thor', the 'split_indices' must be a list of int or None, not {split_indices!r}.")
        self.split_indices = split_indices
        self.decay_flags = tuple(bool(decay_filter(p)) for p in self.parameters)
        self.damping = ops.reshape(ops.cast(damping, mstype.float32), (-1,))
        self.momentum_value = Tensor(np.float32(self.momentum))
        self.moments = self._clone_state("moments")
        self._apply_momentum = ops.ApplyMomentum(use_nesterov=use_nesterov)
        self.cov_step = Parameter(np.zeros((1,), np.int32), name="cov_step", requires_grad=False)
        self.thor = True
        self._g_scale = float(batch_size) ** 2 / float(self.loss_scale) ** 2
        self._setup_layers(net)
        self._matmul, self._batch_matmul, self._inverse = ops.MatMul(), ops.BatchMatMul(), ops.MatrixInverse()
        self._clip = ClipByNorm()
        self._setup_reducers()

    def get_frequency(self) -> int:
        """How many steps each inverse serves (``ModelThor`` reads it)."""
        return self.frequency

    # -- setup ------------------------------------------------------------------------------------------------
    def _setup_layers(self, net) -> None:
        """Each Parameter's layer type and, for a THOR layer's weight, its index k and inverses' Parameters."""
        types = _layer_types(net)
        kinds, layers, matrix_a, matrix_g = [], [], [], []
        for p in self.parameters:
            kind, layer = types.get(id(p), (_OTHER, None))
            kinds.append(kind)
            if layer is None:
                layers.append(None)
                continue
            k = len(matrix_a)
            if kind == _EMBEDDING:
                a_shape, g_shape = (layer.vocab_size,), (layer.embedding_size,) * 2
                blocks = (None, None)
            else:
                blocks = (_Blocks(int(np.prod(p.shape[1:]))), _Blocks(p.shape[0]))
                a_shape, g_shape = ((b.count, b.size, b.size) for b in blocks)
            for store, name, shape in ((matrix_a, "matrix_a_inv_", a_shape), (matrix_g, "matrix_g_inv_", g_shape)):
                inverse = Parameter(np.zeros(shape, np.float32), name=f"{name}{k}", requires_grad=False)
                self.insert_param_to_cell(inverse.name, inverse)
                store.append(inverse)
            layers.append((k, layer, *blocks))
        self._kinds, self._layers = tuple(kinds), tuple(layers)
        self.matrix_a, self.matrix_g = ParameterTuple(matrix_a), ParameterTuple(matrix_g)
        embedding = [entry[1].embedding_size for entry in layers if entry is not None and entry[2] is None]
        self._eyes = {e: Tensor(np.eye(e, dtype=np.float32)) for e in embedding}

    def _setup_reducers(self) -> None:
        """MindSpore's: in a distributed run the inverses are all-reduced (averaged with gradients_mean)."""
        self.is_distributed = get_auto_parallel_context("parallel_mode") != ParallelMode.STAND_ALONE
        self._reducers = None
        if self.is_distributed and len(self.matrix_a):
            mean = get_auto_parallel_context("gradients_mean")
            self._reducers = (DistributedGradReducer(self.matrix_a, mean, fusion_type=6),
                              DistributedGradReducer(self.matrix_g, mean, fusion_type=8))  # fmt: skip

    # -- the inverses -----------------------------------------------------------------------------------------
    def _block_inverse(self, matrix, damping, blocks: _Blocks):
        """The inverses of the diagonal blocks of ``matrix + damping * I`` [count, size, size]."""
        if blocks.pad:
            matrix = ops.pad(matrix, (0, blocks.pad, 0, blocks.pad))
        if blocks.count > 1:
            n, s = blocks.count, blocks.size
            matrix = ops.transpose(ops.reshape(matrix, (n, s, n, s)), (0, 2, 1, 3))
            matrix = ops.gather(ops.reshape(matrix, (n * n, s, s)), blocks.diagonal, 0)
        else:
            matrix = ops.reshape(matrix, (1, blocks.size, blocks.size))
        return self._inverse(matrix + damping * blocks.eye + blocks.padding)

    def _refresh_inverses(self, damping) -> None:
        """The inverses of this step's statistics, kept in ``matrix_a`` / ``matrix_g``."""
        sqrt_damping = ops.sqrt(damping)
        inverses_a, inverses_g = [], []
        for entry in self._layers:
            if entry is None:
                continue
            _, layer, blocks_a, blocks_g = entry
            if blocks_a is None:  # an embedding table: the ids' counts, and G whole
                inverses_a.append(1.0 / (layer.matrix_a * (1.0 / self.batch_size) + sqrt_damping))
                eye = self._eyes[layer.embedding_size]
                inverses_g.append(self._inverse(layer.matrix_g * self._g_scale + sqrt_damping * eye))
                continue
            if isinstance(layer, Conv2dThor):
                matrix_a, matrix_g = layer.matrix_a_cov, layer.matrix_g_cov
                a_norm, g_norm = ops.reshape(layer.a_normalizer, ()), ops.reshape(layer.g_normalizer, ())
                damping_a, damping_g = ops.sqrt(damping / a_norm), ops.sqrt(damping / g_norm)
                feature_map = ops.sqrt(1.0 / a_norm)
            else:
                matrix_a, matrix_g = layer.matrix_a, layer.matrix_g
                damping_a = damping_g = sqrt_damping
                feature_map = None
            inverse_a = self._block_inverse(matrix_a, damping_a, blocks_a)
            inverse_g = self._block_inverse(matrix_g * self._g_scale, damping_g, blocks_g)
            if feature_map is not None:
                inverse_a, inverse_g = inverse_a * feature_map, inverse_g * feature_map
            inverses_a.append(inverse_a)
            inverses_g.append(inverse_g)
        if self._reducers is not None:
            inverses_a, inverses_g = self._reducers[0](tuple(inverses_a)), self._reducers[1](tuple(inverses_g))
        for store, values in ((self.matrix_a, inverses_a), (self.matrix_g, inverses_g)):
            for param, value in zip(store, values):
                self._assign(param, value)

    # -- the step ---------------------------------------------------------------------------------------------
    def _right(self, g, inverse, blocks: _Blocks):
        """``g`` [rows, dim] times the block-diagonal matrix of ``inverse`` [count, size, size]."""
        rows = g.shape[0]
        if blocks.pad:
            g = ops.pad(g, (0, blocks.pad))
        g = ops.transpose(ops.reshape(g, (rows, blocks.count, blocks.size)), (1, 0, 2))
        g = ops.reshape(ops.transpose(self._batch_matmul(g, inverse), (1, 0, 2)), (rows, -1))
        return g[:, : blocks.dim] if blocks.pad else g

    def _left(self, g, inverse, blocks: _Blocks):
        """The block-diagonal matrix of ``inverse`` [count, size, size] times ``g`` [dim, columns]."""
        columns = g.shape[1]
        if blocks.pad:
            g = ops.pad(g, (0, 0, 0, blocks.pad))
        g = self._batch_matmul(inverse, ops.reshape(g, (blocks.count, blocks.size, columns)))
        g = ops.reshape(g, (-1, columns))
        return g[: blocks.dim] if blocks.pad else g

    def _precondition(self, index: int, g, sqrt_damping):
        kind = self._kinds[index]
        if kind == _LAYER_NORM:
            return g / (ops.square(g) * (1.0 / self.batch_size) + sqrt_damping)
        if kind == _OTHER:
            return g
        k, _, blocks_a, blocks_g = self._layers[index]
        inverse_a, inverse_g = self.matrix_a[k], self.matrix_g[k]
        if kind == _EMBEDDING:
            return self._matmul(ops.expand_dims(inverse_a, 1) * g, inverse_g)
        shape = g.shape
        g = ops.reshape(g, (shape[0], -1))
        g = self._left(self._right(g, inverse_a, blocks_a), inverse_g, blocks_g)
        return ops.reshape(g, shape)

    def construct(self, gradients):
        gradients = self.scale_grad(self._check_gradients(gradients))
        self._next_step()  # this step's learning rate; global_step + 1
        step = self._minimum(self.cov_step, self.damping.shape[0] - 1)
        damping = ops.reshape(self._gather(self.damping, step, 0), ())
        if self.thor:
            self._refresh_inverses(damping)
        sqrt_damping = ops.sqrt(damping)
        gradients = [self._precondition(i, g, sqrt_damping) for i, g in enumerate(gradients)]
        self._assign(self.cov_step, self._add(self.cov_step, 1))
        if self.weight_decay > 0:
            gradients = [g + p * self.weight_decay if flag else g
                         for p, g, flag in zip(self.parameters, gradients, self.decay_flags)]  # fmt: skip
        if self.enable_clip_grad:
            gradients = [self._clip(g, 1.0) for g in gradients]
        for i, (p, g) in enumerate(zip(self.parameters, gradients)):
            lr = self._like(self._lr(i), p)
            self._apply_momentum(p, self.moments[i], lr, g, self._constant_like(self.momentum_value, p))
        return self.parameters

    def extend_repr(self) -> str:
        return super().extend_repr() + f", momentum={self.momentum:g}, frequency={self.frequency}"


def thor(net, learning_rate, damping, momentum, weight_decay=0.0, loss_scale=1.0, batch_size=32,
         use_nesterov=False, decay_filter=lambda x: x.name not in [], split_indices=None, enable_clip_grad=False,
         frequency=100):  # fmt: skip
    """MindSpore's ``nn.thor``: converts ``net`` to THOR layers in place and returns its THOR optimizer (see the
    module docstring)."""
    ConvertNetUtils().convert_to_thor_net(net)
    return ThorGpu(net, learning_rate, damping, momentum, weight_decay, loss_scale, batch_size, use_nesterov,
                   decay_filter, split_indices, enable_clip_grad, frequency)  # fmt: skip
