"""MindSpore operators that move elements around, built from other primitives (no kernel of their own):
``DepthToSpace`` and ``SpaceToDepth`` (Reshape and Transpose), ``ReverseSequence`` (GatherD with indices
computed on the device from the lengths), ``repeat_elements`` (``np.repeat``: a Gather) and ``BinaryCrossEntropy``
(the operator class of ``ops.binary_cross_entropy``). They differentiate through the primitives they are made
of, and are constructed and called as MindSpore's (``ops.DepthToSpace(2)(x)``)."""

from __future__ import annotations

import numpy as np

from opforge import dtype as mstype
from opforge.ops import functional as F
from opforge.ops import functional_extra as _FX
from opforge.ops import functional_loss as _FL
from opforge.tensor import Tensor

__all__ = ["DepthToSpace", "SpaceToDepth", "ReverseSequence", "BinaryCrossEntropy", "repeat_elements"]


def _block_size(op: str, block_size) -> int:
    if isinstance(block_size, bool) or not isinstance(block_size, (int, np.integer)):
        raise TypeError(f"For '{op}', the 'block_size' must be an int, but got {type(block_size).__name__}.")
    if block_size < 2:
        raise ValueError(f"For '{op}', the 'block_size' must be >= 2, but got {block_size}.")
    return int(block_size)


def _nchw(op: str, x) -> Tensor:
    x = _FX._tensor(op, "x", x)
    if x.ndim != 4:
        raise ValueError(f"For '{op}', the 'x' must be 4-D (N, C, H, W), but got shape {list(x.shape)}.")
    return x


class DepthToSpace:
    r"""``DepthToSpace(block_size)(x)``: ``x`` of shape :math:`(N, C \cdot b^2, H, W)` (NCHW) rearranged into
    :math:`(N, C, H b, W b)` with :math:`out[n, c, h b + i, w b + j] = x[n, (i b + j) C + c, h, w]` (the
    depth holds the blocks' rows, then their columns, then the channels: TensorFlow's DCR order, as
    MindSpore's kernels). SpaceToDepth's inverse. Reshape, Transpose, Reshape; dtypes: all."""

    def __init__(self, block_size):
        self.block_size = _block_size("DepthToSpace", block_size)

    def __call__(self, x):
        x = _nchw("DepthToSpace", x)
        b = self.block_size
        n, c, h, w = x.shape
        if c % (b * b):
            raise ValueError(
                f"For 'DepthToSpace', the channels of 'x' ({c}) must be divisible by block_size ** 2 ({b * b})."
            )
        c_out = c // (b * b)
        blocks = F.reshape(x, (n, b, b, c_out, h, w))
        return F.reshape(F.transpose(blocks, (0, 3, 4, 1, 5, 2)), (n, c_out, h * b, w * b))

    def __repr__(self) -> str:
        return f"Prim[DepthToSpace]<block_size={self.block_size}>"


class SpaceToDepth:
    r"""``SpaceToDepth(block_size)(x)``: ``x`` of shape :math:`(N, C, H, W)` (H and W divisible by the block
    size b) rearranged into :math:`(N, C b^2, H / b, W / b)`, each b x b block moved into the depth in
    DepthToSpace's order: :math:`out[n, (i b + j) C + c, h, w] = x[n, c, h b + i, w b + j]`. Reshape,
    Transpose, Reshape; dtypes: all."""

    def __init__(self, block_size):
        self.block_size = _block_size("SpaceToDepth", block_size)

    def __call__(self, x):
        x = _nchw("SpaceToDepth", x)
        b = self.block_size
        n, c, h, w = x.shape
        if h % b or w % b:
            raise ValueError(
                f"For 'SpaceToDepth', the height and width of 'x' ({h}, {w}) must be divisible by block_size {b}."
            )
        cells = F.reshape(x, (n, c, h // b, b, w // b, b))
        return F.reshape(F.transpose(cells, (0, 3, 5, 1, 2, 4)), (n, c * b * b, h // b, w // b))

    def __repr__(self) -> str:
        return f"Prim[SpaceToDepth]<block_size={self.block_size}>"


class ReverseSequence:
    r"""``ReverseSequence(seq_dim, batch_dim=0)(x, seq_lengths)``: for each index :math:`i` along
    ``batch_dim``, the first ``seq_lengths[i]`` elements along ``seq_dim`` reversed, the rest unchanged:
    :math:`out[.., i, .., s, ..] = x[.., i, .., L_i - 1 - s, ..]` for :math:`s < L_i`. ``seq_lengths`` a 1-D
    int32 or int64 Tensor of ``x.shape[batch_dim]`` values in [0, ``x.shape[seq_dim]``]. The source indices
    are computed on the device from ``seq_lengths`` (Less, Sub, Select) and gathered with GatherD, so the
    result is differentiable in ``x``. dtypes: all."""

    def __init__(self, seq_dim, batch_dim=0):
        for name, value in (("seq_dim", seq_dim), ("batch_dim", batch_dim)):
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
                raise TypeError(f"For 'ReverseSequence', the '{name}' must be an int, but got {value!r}.")
        self.seq_dim, self.batch_dim = int(seq_dim), int(batch_dim)

    def __call__(self, x, seq_lengths):
        x = _FX._tensor("ReverseSequence", "x", x)
        lengths = _FX._tensor("ReverseSequence", "seq_lengths", seq_lengths)
        if lengths.dtype not in (mstype.int32, mstype.int64):
            raise TypeError(
                f"For 'ReverseSequence', the 'seq_lengths' must be int32 or int64, but got {lengths.dtype}."
            )
        seq = _FX._axis("ReverseSequence", "seq_dim", self.seq_dim, x.ndim)
        batch = _FX._axis("ReverseSequence", "batch_dim", self.batch_dim, x.ndim)
        if seq == batch:
            raise ValueError(f"For 'ReverseSequence', the 'seq_dim' and 'batch_dim' must differ, but both are {seq}.")
        if tuple(lengths.shape) != (x.shape[batch],):
            raise ValueError(
                f"For 'ReverseSequence', the 'seq_lengths' must have shape [{x.shape[batch]}] (x.shape[batch_dim]), "
                f"but got {list(lengths.shape)}."
            )
        shape_l, shape_s = [1] * x.ndim, [1] * x.ndim
        shape_l[batch], shape_s[seq] = x.shape[batch], x.shape[seq]
        length = F.reshape(F.cast(lengths, mstype.int64), tuple(shape_l))
        pos = _FX._const(np.arange(x.shape[seq], dtype=np.int64).reshape(shape_s), x)
        reversed_pos = F.sub(F.sub(length, 1), pos)
        index = F.select(F.less(pos, length), reversed_pos, F.broadcast_to(pos, reversed_pos.shape))
        return _FX.gather_elements(x, seq, F.broadcast_to(index, tuple(x.shape)))

    def __repr__(self) -> str:
        return f"Prim[ReverseSequence]<seq_dim={self.seq_dim}, batch_dim={self.batch_dim}>"


class BinaryCrossEntropy:
    r"""``BinaryCrossEntropy(reduction="mean")(logits, labels, weight=None)``: the operator class of
    ``ops.binary_cross_entropy``: :math:`l_i = -w_i (y_i \log x_i + (1 - y_i) \log(1 - x_i))` for
    probabilities ``logits``, reduced by ``reduction`` ("none", "mean" or "sum"). float16, float32, float64."""

    def __init__(self, reduction="mean"):
        if reduction not in ("none", "mean", "sum"):
            raise ValueError(
                f"For 'BinaryCrossEntropy', the 'reduction' must be 'none', 'mean' or 'sum', but got {reduction!r}."
            )
        self.reduction = reduction

    def __call__(self, logits, labels, weight=None):
        return _FL.binary_cross_entropy(logits, labels, weight, self.reduction)

    def __repr__(self) -> str:
        return f"Prim[BinaryCrossEntropy]<reduction={self.reduction}>"


def repeat_elements(x, rep, axis=0):
    """MindSpore's ``ops.repeat_elements``: each element of ``x`` repeated ``rep`` times along ``axis``
    (``np.repeat(x, rep, axis)``), by a Gather of the repeated indices (the gradient sums the copies).
    dtypes: all."""
    x = _FX._tensor("repeat_elements", "x", x)
    rep = _FX._int("repeat_elements", "rep", rep)
    if rep < 1:
        raise ValueError(f"For 'repeat_elements', the 'rep' must be >= 1, but got {rep}.")
    axis = _FX._axis("repeat_elements", "axis", axis, x.ndim)
    return _FX.repeat_interleave(x, rep, axis)
