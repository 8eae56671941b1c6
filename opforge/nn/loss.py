"""Loss functions (MindSpore's ``nn.loss``), each built from primitives so they differentiate."""

from __future__ import annotations

import numpy as np

from opforge import dtype as mstype
from opforge import ops
from opforge.errors import KernelError
from opforge.nn.cell import Cell
from opforge.ops.functional_loss import (
    _check_bool,
    _check_margin,
    _check_number,
    _cosine_embedding,
    _gaussian_nll,
    _hinge_embedding,
    _huber,
    _l1,
    _margin_ranking,
    _multi_margin,
    _multilabel_margin,
    _pair_inputs,
    _poisson_nll,
    _reduce_in_float32,
    _soft_margin,
    _triplet_margin,
    binary_cross_entropy,
    cross_entropy,
    kl_div,
)
from opforge.tensor import Tensor

__all__ = [
    "LossBase",
    "MSELoss",
    "L1Loss",
    "SmoothL1Loss",
    "BCEWithLogitsLoss",
    "NLLLoss",
    "SoftmaxCrossEntropyWithLogits",
    "CrossEntropyLoss",
    "BCELoss",
    "KLDivLoss",
    "FocalLoss",
    "CosineEmbeddingLoss",
    "HuberLoss",
    "MarginRankingLoss",
    "TripletMarginLoss",
    "HingeEmbeddingLoss",
    "SoftMarginLoss",
    "MultiMarginLoss",
    "MultilabelMarginLoss",
    "PoissonNLLLoss",
    "GaussianNLLLoss",
    "RMSELoss",
    "MAELoss",
    "DiceLoss",
    "MultiClassDiceLoss",
]

_REDUCTIONS = ("none", "mean", "sum")


class LossBase(Cell):
    """Base of losses: ``get_loss(x)`` applies the reduction ("none", "mean" or "sum")."""

    def __init__(self, reduction: str = "mean"):
        super().__init__()
        if reduction not in _REDUCTIONS:
            raise ValueError(
                f"For '{type(self).__name__}', the 'reduction' must be one of {_REDUCTIONS}, but got {reduction!r}."
            )
        self.reduction = reduction
        self.reduce_mean = ops.ReduceMean()
        self.reduce_sum = ops.ReduceSum()

    def get_loss(self, x):
        if self.reduction == "mean":
            return self.reduce_mean(x, ())
        if self.reduction == "sum":
            return self.reduce_sum(x, ())
        return x

    def extend_repr(self) -> str:
        return f"reduction={self.reduction}"


_Loss = LossBase  # MindSpore 1.x's name (``from mindspore.nn.loss.loss import _Loss``)


class MSELoss(LossBase):
    r"""Mean squared error: :math:`\ell = (x - y)^2`, then reduced. ``loss(logits, labels)``."""

    def __init__(self, reduction: str = "mean"):
        super().__init__(reduction)
        self.sub = ops.Sub()
        self.mul = ops.Mul()

    def construct(self, logits, labels):
        diff = self.sub(logits, labels)
        return self.get_loss(self.mul(diff, diff))


class L1Loss(LossBase):
    r"""Mean absolute error: :math:`\ell = |x - y|`, then reduced (|d| as ReLU(d) + ReLU(-d))."""

    def __init__(self, reduction: str = "mean"):
        super().__init__(reduction)
        self.sub = ops.Sub()
        self.relu = ops.ReLU()
        self.neg = ops.Neg()
        self.add = ops.Add()

    def construct(self, logits, labels):
        diff = self.sub(logits, labels)
        return self.get_loss(self.add(self.relu(diff), self.relu(self.neg(diff))))


class SoftmaxCrossEntropyWithLogits(LossBase):
    r"""Cross entropy of ``softmax(logits)`` and the labels, one value per sample, then reduced.

    ``logits`` is ``[N, C]``. With ``sparse=False`` the labels are ``[N, C]`` probabilities of the
    logits' dtype; with ``sparse=True`` they are ``[N]`` class indices (int32 or int64).
    ``reduction`` is "none" (MindSpore's default), "mean" or "sum". The sparse mean uses the fused
    SparseSoftmaxCrossEntropyWithLogits primitive; the other cases SoftmaxCrossEntropyWithLogits
    (sparse labels are one-hot encoded with OneHot first).
    """

    def __init__(self, sparse: bool = False, reduction: str = "none"):
        super().__init__(reduction)
        if not isinstance(sparse, bool):
            raise TypeError(f"For 'SoftmaxCrossEntropyWithLogits', the 'sparse' must be bool, got {type(sparse)}.")
        self.sparse = sparse
        self._fused_sparse = None
        self._dense = None
        self._one_hot = None
        self._one_hot_values: dict = {}

    def extend_repr(self) -> str:
        return f"sparse={self.sparse}, reduction={self.reduction}"

    def _on_off(self, dtype) -> tuple:
        """OneHot's on and off values in ``dtype``: constants, built once per dtype."""
        values = self._one_hot_values.get(dtype)
        if values is None:
            values = self._one_hot_values[dtype] = (_scalar(1.0, dtype), _scalar(0.0, dtype))
        return values

    def _check(self, logits, labels) -> None:
        if logits.ndim != 2:
            raise ValueError(
                f"For 'SoftmaxCrossEntropyWithLogits', the 'logits' must be 2-D [N, C], but got {list(logits.shape)}."
            )
        expected = logits.shape[:1] if self.sparse else logits.shape
        got = labels.shape
        if len(got) != len(expected) or any(a != b and a >= 0 and b >= 0 for a, b in zip(got, expected)):
            kind = "class indices [N]" if self.sparse else "probabilities [N, C]"
            raise ValueError(
                f"For 'SoftmaxCrossEntropyWithLogits' (sparse={self.sparse}), the 'labels' must be {kind} with "
                f"shape {list(expected)}, but got {list(labels.shape)}."
            )
        if self.sparse and labels.dtype not in (mstype.int32, mstype.int64):
            raise TypeError(
                f"For 'SoftmaxCrossEntropyWithLogits' (sparse=True), the 'labels' must be class indices of dtype "
                f"Int32 or Int64, but got {labels.dtype}: cast them (labels.astype(opforge.int32)), or use "
                f"sparse=False for probabilities."
            )

    def construct(self, logits, labels):
        self._check(logits, labels)
        if self.sparse:
            if self.reduction == "mean":
                if self._fused_sparse is None:
                    self._fused_sparse = ops.SparseSoftmaxCrossEntropyWithLogits()
                return self._fused_sparse(logits, labels)
            if self._one_hot is None:
                self._one_hot = ops.OneHot()
            on, off = self._on_off(logits.dtype)
            labels = self._one_hot(labels, logits.shape[1], on, off)
        if self._dense is None:
            self._dense = ops.SoftmaxCrossEntropyWithLogits()
        loss = self._dense(logits, labels)[0]
        return self.get_loss(loss)


def _scalar(value: float, dtype: mstype.Type):
    return Tensor(value, dtype)


class SmoothL1Loss(LossBase):
    r"""Smooth L1: with :math:`d = x - y`, :math:`0.5 d^2 / \beta` where :math:`|d| < \beta`, else
    :math:`|d| - 0.5 \beta`; reduction "none" (default, as MindSpore), "mean" or "sum". The SmoothL1Loss
    primitive, differentiated by SmoothL1LossGrad. ``loss(logits, labels)``."""

    def __init__(self, beta: float = 1.0, reduction: str = "none"):
        super().__init__(reduction)
        self.beta = beta
        self.smooth_l1 = ops.SmoothL1Loss(beta=beta, reduction=reduction)

    def construct(self, logits, labels):
        return self.smooth_l1(logits, labels)


class BCEWithLogitsLoss(LossBase):
    r"""Binary cross entropy on logits (the BCEWithLogitsLoss primitive): ``loss(logits, labels)`` with
    optional ``weight`` and ``pos_weight`` Tensors that broadcast to the logits' shape (ones when None)."""

    def __init__(self, reduction: str = "mean", weight=None, pos_weight=None):
        super().__init__(reduction)
        self.weight, self.pos_weight = weight, pos_weight
        self.bce = ops.BCEWithLogitsLoss(reduction=reduction)
        self.ones_like = ops.OnesLike()

    def construct(self, logits, labels):
        ones = None if self.weight is not None and self.pos_weight is not None else self.ones_like(logits)
        weight = self.weight if self.weight is not None else ones
        pos_weight = self.pos_weight if self.pos_weight is not None else ones
        return self.bce(logits, labels, weight, pos_weight)


class NLLLoss(LossBase):
    r"""Negative log likelihood of log-probabilities [N, C] (the NLLLoss primitive's loss):
    ``loss(logits, labels)``, with an optional class ``weight`` [C] (ones when None) and ``ignore_index``."""

    def __init__(self, weight=None, ignore_index: int = -100, reduction: str = "mean"):
        super().__init__(reduction)
        self.weight = weight
        self.nll = ops.NLLLoss(reduction=reduction, ignore_index=ignore_index)
        self.fill = ops.Fill()

    def construct(self, logits, labels):
        weight = self.weight
        if weight is None:
            weight = self.fill(logits.dtype, (logits.shape[-1],), 1.0)
        return self.nll(logits, labels, weight)[0]


class CrossEntropyLoss(LossBase):
    r"""MindSpore's ``nn.CrossEntropyLoss(weight=None, ignore_index=-100, reduction='mean', label_smoothing=0.0)``:
    the cross entropy of ``softmax(logits)`` along the class dim (1; 0 for a 1-D input) and ``labels``, either
    class indices (int32/int64, shape of the logits without the class dim; :math:`l_n = -w_{y_n}
    \log p_{n, y_n}`, 0 where :math:`y_n` is ``ignore_index``, "mean" divides by the summed weights of the
    kept samples) or class probabilities (the logits' shape and dtype; :math:`l_n = -\sum_c w_c y_{n,c}
    \log p_{n,c}`). ``weight`` is a [C] Tensor (None: ones); ``label_smoothing`` :math:`\epsilon` mixes in
    the uniform distribution. ``ops.cross_entropy`` computes it (LogSoftmax, OneHot, Mul, ReduceSum).
    float16, float32, float64. ``loss(logits, labels)``."""

    def __init__(self, weight=None, ignore_index: int = -100, reduction: str = "mean", label_smoothing: float = 0.0):
        super().__init__(reduction)
        if isinstance(ignore_index, bool) or not isinstance(ignore_index, int):
            raise TypeError(
                f"For 'CrossEntropyLoss', the 'ignore_index' must be an int, but got {type(ignore_index).__name__}."
            )
        if isinstance(label_smoothing, bool) or not isinstance(label_smoothing, (int, float)):
            raise TypeError(
                f"For 'CrossEntropyLoss', the 'label_smoothing' must be a float, but got "
                f"{type(label_smoothing).__name__}."
            )
        if not 0.0 <= label_smoothing <= 1.0:
            raise ValueError(
                f"For 'CrossEntropyLoss', the 'label_smoothing' must be in [0, 1], but got {label_smoothing}."
            )
        self.weight, self.ignore_index, self.label_smoothing = weight, ignore_index, float(label_smoothing)

    def construct(self, logits, labels):
        return cross_entropy(logits, labels, self.weight, self.ignore_index, self.reduction, self.label_smoothing)

    def extend_repr(self) -> str:
        return f"ignore_index={self.ignore_index}, reduction={self.reduction}, label_smoothing={self.label_smoothing}"


class BCELoss(LossBase):
    r"""MindSpore's ``nn.BCELoss(weight=None, reduction='mean')``: binary cross entropy of probabilities,
    :math:`l_i = -w_i (y_i \log x_i + (1 - y_i) \log(1 - x_i))` (logs of arguments clamped to >= 1e-12),
    ``weight`` broadcasting to the logits (None: ones). ``ops.binary_cross_entropy`` computes it.
    float16, float32, float64. ``loss(logits, labels)``."""

    def __init__(self, weight=None, reduction: str = "mean"):
        super().__init__(reduction)
        self.weight = weight

    def construct(self, logits, labels):
        return binary_cross_entropy(logits, labels, self.weight, self.reduction)


class KLDivLoss(LossBase):
    r"""MindSpore's ``nn.KLDivLoss(reduction='mean')``: :math:`l_i = y_i (\log y_i - x_i)` for log-probabilities
    ``logits`` and probabilities ``labels`` (0 where :math:`y_i = 0`); ``reduction`` "none", "mean" (over all
    elements), "sum" or "batchmean" (the sum over dim 0's size). ``ops.kl_div`` computes it.
    float16, float32, float64. ``loss(logits, labels)``."""

    def __init__(self, reduction: str = "mean"):
        # LossBase checks the three common reductions; "batchmean" is KLDivLoss's own.
        super().__init__("sum" if reduction == "batchmean" else reduction)
        self.reduction = reduction

    def construct(self, logits, labels):
        return kl_div(logits, labels, self.reduction)


_FOCAL_LABEL_DTYPES = (mstype.int32, mstype.int64, mstype.float16, mstype.float32)


class FocalLoss(LossBase):
    r"""MindSpore's ``nn.FocalLoss(weight=None, gamma=2.0, reduction='mean')`` (Lin et al., "Focal Loss for
    Dense Object Detection"): the cross entropy of ``softmax(logits)`` over the class dim 1, each term scaled
    down by how well it is already predicted,

    .. math::
        FL(p_t) = -w_t (1 - p_t)^\gamma \log p_t

    ``loss(logits, labels)``: ``logits`` (N, C), (N, C, H) or (N, C, H, W) with C > 1; ``labels`` of the same
    rank, either

    - class indices (N, 1, ...) (int32, int64, or float16/float32 truncated to int32), each in [-C, C) (a
      negative one counts from the end): :math:`p_t` is the probability of the labelled class,
      :math:`w_t` its ``weight``; the per-sample loss averages the terms over the spatial positions, shape (N);
    - per-class targets (N, C, ...): the term of class c is :math:`-w_c (1 - p_c)^\gamma y_c \log p_c`, averaged
      over the spatial positions, shape (N, C).

    The labels need the logits' N and number of spatial positions (H, or H * W), not their spatial shape, as
    MindSpore reshapes both to (N, C, -1). MindSpore's documentation says a "none" loss has the logits' shape;
    its code (and this) gives the shapes above.

    ``weight``: None or a 1-D Tensor of C class weights, applied to the log-probability only (the focal factor
    uses the unweighted :math:`p_t`); ``gamma``: a float (an int is a TypeError, as MindSpore);
    ``reduction``: "none" (the per-sample shape above), "mean" (default) or "sum" of that (a float16 loss is
    reduced in float32). Composed of LogSoftmax, GatherNd (class indices: one out of range is an error), Exp,
    Pow, Mul and ReduceMean, so it differentiates and runs under ``jit``.
    dtypes: logits float16, float32, float64; labels int32, int64, float16, float32 (as MindSpore).
    """

    def __init__(self, weight=None, gamma: float = 2.0, reduction: str = "mean"):
        super().__init__(reduction)
        if isinstance(gamma, bool) or not isinstance(gamma, float):
            raise TypeError(f"For 'FocalLoss', the 'gamma' must be a float, but got {type(gamma).__name__}.")
        if weight is not None and not isinstance(weight, Tensor):
            raise TypeError(f"For 'FocalLoss', the 'weight' must be None or a Tensor, but got {type(weight).__name__}.")
        if weight is not None and weight.ndim != 1:
            raise ValueError(
                f"For 'FocalLoss', the 'weight' must be a 1-D Tensor (one weight per class), but got shape "
                f"{list(weight.shape)}."
            )
        self.gamma = gamma
        self.weight = weight
        self._grids: dict = {}  # (N, S) -> the constant (N, S) batch and position coordinates for GatherNd

    def extend_repr(self) -> str:
        return f"gamma={self.gamma}, reduction={self.reduction}"

    def _check(self, logits, labels) -> None:
        for name, value in (("logits", logits), ("labels", labels)):
            if not isinstance(value, Tensor):
                raise TypeError(f"For 'FocalLoss', the '{name}' must be a Tensor, but got {type(value).__name__}.")
        if logits.dtype not in (mstype.float16, mstype.float32, mstype.float64):
            raise TypeError(
                f"For 'FocalLoss', the 'logits' must be float16, float32 or float64, but got {logits.dtype}."
            )
        if labels.dtype not in _FOCAL_LABEL_DTYPES:
            raise TypeError(
                f"For 'FocalLoss', the 'labels' must be int32, int64, float16 or float32, but got {labels.dtype}."
            )
        for name, value in (("logits", logits), ("labels", labels)):
            if not 2 <= value.ndim <= 4:
                raise ValueError(
                    f"For 'FocalLoss', the '{name}' must have 2, 3 or 4 dims ((N, C), (N, C, H) or (N, C, H, W)), "
                    f"but got shape {list(value.shape)}."
                )
        if labels.ndim != logits.ndim:
            raise ValueError(
                f"For 'FocalLoss', the 'labels' must have the 'logits' rank {logits.ndim} (class indices as "
                f"(N, 1, ...)), but got shape {list(labels.shape)}."
            )
        classes = logits.shape[1]
        if classes == 1:
            raise ValueError(f"For 'FocalLoss', the 'logits' must have C > 1 classes (dim 1), but got {classes}.")
        if labels.shape[1] not in (1, classes):
            raise ValueError(
                f"For 'FocalLoss', the 'labels' dim 1 must be 1 (class indices) or the 'logits' C = {classes} "
                f"(per-class targets), but got shape {list(labels.shape)}."
            )
        if labels.shape[0] != logits.shape[0] or _size(labels.shape[2:]) != _size(logits.shape[2:]):
            raise ValueError(
                f"For 'FocalLoss', the 'labels' {list(labels.shape)} must have the batch size and the number of "
                f"spatial positions of the 'logits' {list(logits.shape)}."
            )
        if self.weight is not None and self.weight.shape[0] != classes:
            raise ValueError(
                f"For 'FocalLoss', the 'weight' must have one element per class (C = {classes}), but got "
                f"{self.weight.shape[0]}."
            )

    def _coordinates(self, batch: int, spatial: int, index):
        """(N, S, 3) GatherNd coordinates (n, index[n, s], s) into the (N, C, S) log-probabilities."""
        grids = self._grids.get((batch, spatial))
        if grids is None:
            rows, cols = np.indices((batch, spatial), dtype=np.int32)
            grids = self._grids[(batch, spatial)] = (Tensor(rows), Tensor(cols))
        return _stack((grids[0], index, grids[1]))

    def construct(self, logits, labels):
        self._check(logits, labels)
        dtype = logits.dtype
        batch, classes = logits.shape[0], logits.shape[1]
        spatial = _size(logits.shape[2:])
        log_p = _log_softmax_1(_reshape(logits, (batch, classes, spatial)))
        weight = self.weight
        if weight is not None and weight.dtype != dtype:
            weight = _cast(weight, dtype)
        if labels.shape[1] == 1:
            index = _reshape(labels, (batch, spatial))
            if index.dtype != mstype.int32:
                index = _cast(index, mstype.int32)
            index = _select(_less(index, 0), _add(index, classes), index)  # [-C, 0) counts from the end
            try:
                log_p = _gather_nd(log_p, self._coordinates(batch, spatial, index))  # log p_t, (N, S)
            except KernelError as e:  # an index out of range, named as the user wrote it
                raise KernelError(
                    f"For 'FocalLoss', every class index in 'labels' must be in [-{classes}, {classes}): {e}"
                ) from e
            focal = _pow(_sub(1.0, _exp(log_p)), self.gamma)
            if weight is not None:
                log_p = _mul(log_p, _gather(weight, index, 0))
            loss = _mean(_neg(_mul(focal, log_p)), 1)
        else:
            target = _reshape(labels if labels.dtype == dtype else _cast(labels, dtype), (batch, classes, spatial))
            focal = _pow(_sub(1.0, _exp(log_p)), self.gamma)
            if weight is not None:
                log_p = _mul(log_p, _reshape(weight, (1, classes, 1)))
            loss = _mean(_neg(_mul(_mul(focal, target), log_p)), 2)
        return _reduce_in_float32(loss, self.reduction)


class CosineEmbeddingLoss(LossBase):
    r"""MindSpore's ``nn.CosineEmbeddingLoss(margin=0.0, reduction='mean')``: for ``logits_x1`` and
    ``logits_x2`` of one shape and dtype, (N, D) or (N, D, d1, ...) (the vectors along dim 1), and ``labels``
    (N) or (N, d1, ...) of 1 (similar) or -1 (dissimilar),

    .. math::
        l = \begin{cases} 1 - \cos(x_1, x_2), & y = 1 \\ \max(0, \cos(x_1, x_2) - margin), & y = -1 \\
        0, & \text{otherwise} \end{cases}, \qquad
        \cos(x_1, x_2) = \frac{\sum_d x_{1,d} x_{2,d}}{\lVert x_1 \rVert \lVert x_2 \rVert}

    ``margin``: a float in [-1, 1] (an int is a TypeError, as MindSpore); ``reduction``: "none" (the labels'
    shape), "mean" (default) or "sum" (a float16 loss is reduced in float32). ``ops.cosine_embedding_loss``
    computes it (Mul, ReduceSum, Square, Sqrt, RealDiv, Maximum, Select). float16, float32, float64.
    ``loss(logits_x1, logits_x2, labels)``.
    """

    def __init__(self, margin: float = 0.0, reduction: str = "mean"):
        super().__init__(reduction)
        self.margin = _check_margin("CosineEmbeddingLoss", margin, allow_int=False)

    def extend_repr(self) -> str:
        return f"margin={self.margin}, reduction={self.reduction}"

    def construct(self, logits_x1, logits_x2, labels):
        names = ("logits_x1", "logits_x2", "labels")
        return _cosine_embedding(
            "CosineEmbeddingLoss", names, logits_x1, logits_x2, labels, self.margin, self.reduction
        )


def _size(shape) -> int:
    size = 1
    for d in shape:
        size *= d
    return size


_add = ops.Add()
_sub = ops.Sub()
_mul = ops.Mul()
_neg = ops.Neg()
_exp = ops.Exp()
_pow = ops.Pow()
_less = ops.Less()
_cast = ops.Cast()
_reshape = ops.Reshape()
_select = ops.Select()
_gather = ops.Gather()
_gather_nd = ops.GatherNd()
_stack = ops.Stack(axis=-1)
_mean = ops.ReduceMean()
_log_softmax_1 = ops.LogSoftmax(axis=1)
_sum = ops.ReduceSum()
_div = ops.RealDiv()
_square = ops.Square()
_sqrt_prim = ops.Sqrt()


class HuberLoss(LossBase):
    r"""MindSpore's ``nn.HuberLoss(reduction='mean', delta=1.0)``: with :math:`d = x - y`,
    :math:`l = 0.5 d^2` where :math:`|d| < \delta`, else :math:`\delta (|d| - 0.5 \delta)`, then reduced
    ("none": the broadcast shape). ``delta`` an int or float > 0. ``ops.huber_loss`` computes it.
    float16, float32, float64 (logits and labels of one dtype). ``loss(logits, labels)``."""

    def __init__(self, reduction: str = "mean", delta=1.0):
        super().__init__(reduction)
        self.delta = _check_number("HuberLoss", "delta", delta, (int, float), positive=True)

    def extend_repr(self) -> str:
        return f"reduction={self.reduction}, delta={self.delta}"

    def construct(self, logits, labels):
        return _huber("HuberLoss", ("logits", "labels"), logits, labels, self.reduction, self.delta)


class MarginRankingLoss(LossBase):
    r"""MindSpore's ``nn.MarginRankingLoss(margin=0.0, reduction='mean')``:
    :math:`l = \max(0, -y (x_1 - x_2) + margin)` for ``input1``, ``input2`` and ``target`` (1 or -1) of one shape
    and float dtype. ``margin`` a float. ``ops.margin_ranking_loss`` computes it. float16, float32, float64.
    ``loss(input1, input2, target)``."""

    def __init__(self, margin: float = 0.0, reduction: str = "mean"):
        super().__init__(reduction)
        self.margin = _check_number("MarginRankingLoss", "margin", margin, (float,))

    def extend_repr(self) -> str:
        return f"margin={self.margin}, reduction={self.reduction}"

    def construct(self, input1, input2, target):
        return _margin_ranking("MarginRankingLoss", input1, input2, target, self.margin, self.reduction)


class TripletMarginLoss(LossBase):
    r"""MindSpore's ``nn.TripletMarginLoss(p=2, swap=False, eps=1e-06, reduction='mean', margin=1.0)``:
    :math:`l_i = \max(d(a_i, p_i) - d(a_i, n_i) + margin, 0)` with :math:`d(x, y) = \lVert x - y + eps \rVert_p`
    over dim 1 of (N, D) or (N, D, ...) inputs (``swap``: :math:`d(a_i, n_i)` becomes
    :math:`\min(d(a_i, n_i), d(p_i, n_i))`). ``loss(x, positive, negative, margin=None)``: a ``margin`` given at
    the call (a float or a 0-d Tensor, as MindSpore 2.0's input) replaces the constructor's.
    ``ops.triplet_margin_loss`` computes it. float16, float32, float64."""

    def __init__(self, p: int = 2, swap: bool = False, eps: float = 1e-06, reduction: str = "mean", margin=1.0):
        super().__init__(reduction)
        self.p, self.swap, self.eps, self.margin = p, swap, eps, margin
        # Checks the arguments now, as MindSpore's constructor does (with a stand-in input).
        probe = Tensor(np.zeros((1, 1), np.float32))
        _triplet_margin("TripletMarginLoss", ("x", "positive", "negative"), probe, probe, probe, margin, p, eps,
                        swap, reduction)  # fmt: skip

    def extend_repr(self) -> str:
        return f"p={self.p}, swap={self.swap}, eps={self.eps}, reduction={self.reduction}, margin={self.margin}"

    def construct(self, x, positive, negative, margin=None):
        margin = self.margin if margin is None else margin
        names = ("x", "positive", "negative")
        return _triplet_margin(
            "TripletMarginLoss", names, x, positive, negative, margin, self.p, self.eps, self.swap, self.reduction
        )


class HingeEmbeddingLoss(LossBase):
    r"""MindSpore's ``nn.HingeEmbeddingLoss(margin=1.0, reduction='mean')``: :math:`l = x` where :math:`y = 1`
    and :math:`\max(0, margin - x)` where :math:`y = -1` (shapes that broadcast). ``margin`` an int or float.
    ``ops.hinge_embedding_loss`` computes it. logits float16, float32, float64; labels any number dtype.
    ``loss(logits, labels)``."""

    def __init__(self, margin=1.0, reduction: str = "mean"):
        super().__init__(reduction)
        self.margin = _check_number("HingeEmbeddingLoss", "margin", margin, (int, float))

    def extend_repr(self) -> str:
        return f"margin={self.margin}, reduction={self.reduction}"

    def construct(self, logits, labels):
        names = ("logits", "labels")
        return _hinge_embedding("HingeEmbeddingLoss", names, logits, labels, self.margin, self.reduction)


class SoftMarginLoss(LossBase):
    r"""MindSpore's ``nn.SoftMarginLoss(reduction='mean')``: :math:`l = \log(1 + \exp(-y x))` for ``logits`` and
    ``labels`` (1 or -1) of one shape and float dtype, computed as ``softplus(-y * x)``. ``ops.soft_margin_loss``
    computes it. float16, float32, float64. ``loss(logits, labels)``."""

    def construct(self, logits, labels):
        return _soft_margin("SoftMarginLoss", ("logits", "labels"), logits, labels, self.reduction)


class MultiMarginLoss(LossBase):
    r"""MindSpore's ``nn.MultiMarginLoss(p=1, margin=1.0, reduction='mean', weight=None)``: the multi-class hinge
    loss :math:`l_n = \frac{w_{y_n}}{C} \sum_{i \ne y_n} \max(0, margin - x_{n, y_n} + x_{n, i})^p` of scores
    (N, C) and class indices (N,) (int32 or int64). ``loss(x, target, weight=None)``: a (C,) ``weight`` given at
    the call replaces the constructor's. ``ops.multi_margin_loss`` computes it. float16, float32, float64."""

    def __init__(self, p: int = 1, margin=1.0, reduction: str = "mean", weight=None):
        super().__init__(reduction)
        if isinstance(p, bool) or not isinstance(p, int):
            raise TypeError(f"For 'MultiMarginLoss', the 'p' must be an int, but got {type(p).__name__}.")
        if p not in (1, 2):
            raise ValueError(f"For 'MultiMarginLoss', the 'p' must be 1 or 2, but got {p}.")
        if weight is not None and not isinstance(weight, Tensor):
            raise TypeError(
                f"For 'MultiMarginLoss', the 'weight' must be None or a Tensor, but got {type(weight).__name__}."
            )
        self.p, self.weight = p, weight
        self.margin = _check_number("MultiMarginLoss", "margin", margin, (int, float))

    def extend_repr(self) -> str:
        return f"p={self.p}, margin={self.margin}, reduction={self.reduction}"

    def construct(self, x, target, weight=None):
        weight = self.weight if weight is None else weight
        return _multi_margin("MultiMarginLoss", x, target, self.p, self.margin, weight, self.reduction)


class MultilabelMarginLoss(LossBase):
    r"""MindSpore's ``nn.MultilabelMarginLoss(reduction='mean')``: the multi-label hinge loss
    :math:`l_n = \frac{1}{C} \sum_j \sum_{i \notin y_n} \max(0, 1 - (x_{n, y_{n,j}} - x_{n, i}))` of scores
    (C) or (N, C) and ``target`` of that shape holding the target classes first, padded with -1 (int32 or int64).
    ``ops.multilabel_margin_loss`` computes it. float16, float32, float64. ``loss(x, target)``."""

    def construct(self, x, target):
        return _multilabel_margin("MultilabelMarginLoss", ("x", "target"), x, target, self.reduction)


class PoissonNLLLoss(LossBase):
    r"""MindSpore's ``nn.PoissonNLLLoss(log_input=True, full=False, eps=1e-08, reduction='mean')``: the negative
    log likelihood of ``target`` :math:`y` under Poisson distributions of rate :math:`\lambda`:

    .. math::
        l_i = \begin{cases} e^{x_i} - y_i x_i, & \text{log\_input} \ (x = \log \lambda) \\
        x_i - y_i \log(x_i + eps), & \text{otherwise} \ (x = \lambda) \end{cases}

    plus, with ``full``, Stirling's :math:`\log y_i! \approx y_i \log y_i - y_i + \frac{1}{2} \log(2 \pi y_i)` where
    :math:`y_i > 1`. ``input`` and ``target`` of one shape and float dtype; ``reduction`` "none", "mean" or
    "sum". Exp, Log, Mul, Sub, Select. float16, float32, float64. ``loss(input, target)``."""

    def __init__(self, log_input: bool = True, full: bool = False, eps: float = 1e-08, reduction: str = "mean"):
        super().__init__(reduction)
        where = "PoissonNLLLoss"
        self.log_input = _check_bool(where, "log_input", log_input)
        self.full = _check_bool(where, "full", full)
        self.eps = _check_number(where, "eps", eps, (float,), positive=True)

    def extend_repr(self) -> str:
        return f"log_input={self.log_input}, full={self.full}, eps={self.eps}, reduction={self.reduction}"

    def construct(self, input, target):  # noqa: A002 (MindSpore's name)
        return _poisson_nll("PoissonNLLLoss", input, target, self.log_input, self.full, self.eps, self.reduction)


class GaussianNLLLoss(LossBase):
    r"""MindSpore's ``nn.GaussianNLLLoss(*, full=False, eps=1e-06, reduction='mean')``:
    :math:`l = \frac{1}{2}(\log \max(var, eps) + (x - y)^2 / \max(var, eps))`, plus :math:`\frac{1}{2} \log 2\pi`
    with ``full``. ``var`` has the logits' shape, or it with one dim of 1, or without the last dim.
    ``ops.gaussian_nll_loss`` computes it. float16, float32, float64. ``loss(logits, labels, var)``."""

    def __init__(self, *, full: bool = False, eps: float = 1e-06, reduction: str = "mean"):
        super().__init__(reduction)
        self.full = _check_bool("GaussianNLLLoss", "full", full)
        self.eps = _check_number("GaussianNLLLoss", "eps", eps, (float,), positive=True)

    def extend_repr(self) -> str:
        return f"full={self.full}, eps={self.eps}, reduction={self.reduction}"

    def construct(self, logits, labels, var):
        names = ("logits", "labels", "var")
        return _gaussian_nll("GaussianNLLLoss", names, logits, labels, var, self.full, self.eps, self.reduction)


class RMSELoss(LossBase):
    r"""MindSpore's ``nn.RMSELoss()``: the root mean squared error :math:`\sqrt{\frac{1}{n} \sum_i (x_i - y_i)^2}`
    of ``logits`` and ``label`` (one float dtype, shapes that broadcast), a 0-d Tensor. Sub, Square,
    ReduceMean, Sqrt. float16, float32, float64. ``loss(logits, label)``."""

    def __init__(self):
        super().__init__("mean")

    def extend_repr(self) -> str:
        return ""

    def construct(self, logits, label):
        _pair_inputs("RMSELoss", ("logits", "label"), logits, label, same_shape=False)
        return _sqrt_prim(_reduce_in_float32(_square(_sub(logits, label)), "mean"))


class MAELoss(LossBase):
    r"""MindSpore's ``nn.MAELoss(reduction='mean')``: the mean absolute error :math:`l = |x - y|` of ``logits`` and
    ``label`` (shapes that broadcast), then reduced. As MindSpore's ``|logits - label|``, the subtraction promotes
    a label of another dtype (an int32 label with float32 logits: float32). float16, float32, float64 logits.
    ``loss(logits, label)``."""

    def construct(self, logits, label):
        return _l1("MAELoss", ("logits", "label"), logits, label, self.reduction, same_dtype=False)


def _dice(where: str, logits, label, smooth: float):
    """``1 - 2 sum(x y) / (sum(x^2) + sum(y^2) + smooth)`` over all elements: nn.DiceLoss, and per class in
    nn.MultiClassDiceLoss."""
    intersection = _sum(_mul(logits, label), ())
    union = _add(_sum(_mul(logits, logits), ()), _sum(_mul(label, label), ()))
    return _sub(1.0, _div(_mul(intersection, 2.0), _add(union, smooth)))


def _dice_inputs(where: str, logits, label) -> None:
    _pair_inputs(where, ("logits", "label"), logits, label, same_shape=True)


class DiceLoss(LossBase):
    r"""MindSpore's ``nn.DiceLoss(smooth=1e-5)``: one minus the Dice coefficient of ``logits`` :math:`x` and
    ``label`` :math:`y` (one shape and float dtype; usually probabilities and a 0/1 mask), over all elements:

    .. math::
        L = 1 - \frac{2 \sum_i x_i y_i}{\sum_i x_i^2 + \sum_i y_i^2 + smooth}

    a 0-d Tensor; ``smooth`` a float > 0 (keeps the division finite). Mul, ReduceSum, RealDiv.
    float16, float32, float64. ``loss(logits, label)``."""

    def __init__(self, smooth: float = 1e-5):
        super().__init__("mean")
        self.smooth = _check_number("DiceLoss", "smooth", smooth, (float,), positive=True)

    def extend_repr(self) -> str:
        return f"smooth={self.smooth}"

    def construct(self, logits, label):
        _dice_inputs("DiceLoss", logits, label)
        return _dice("DiceLoss", logits, label, self.smooth)


class MultiClassDiceLoss(LossBase):
    r"""MindSpore's ``nn.MultiClassDiceLoss(weights=None, ignore_indiex=None, activation='softmax')``: the mean over
    the C classes (dim 1) of the binary Dice losses (``nn.DiceLoss`` with smooth 1e-5) of ``logits[:, i]`` and
    ``label[:, i]``:

    .. math::
        L = \frac{1}{C} \sum_{i \ne ignore} w_i \left(1 - \frac{2 \sum x_{:,i} y_{:,i}}
        {\sum x_{:,i}^2 + \sum y_{:,i}^2 + 10^{-5}}\right)

    ``logits`` and ``label`` (one-hot) of one shape (N, C, ...) and float dtype. ``activation`` applied to the
    logits first: a name for ``nn.get_activation`` ("softmax", default: ``nn.Softmax()``, over the last dim as
    MindSpore's; "sigmoid"...), a Cell, or None. ``weights`` None or a Tensor whose dim 0 has C entries;
    ``ignore_indiex`` (MindSpore's spelling) None or a class left out of the sum (still counted in C).
    Composed of the activation, StridedSlice, Mul, ReduceSum, RealDiv. float16, float32, float64.
    ``loss(logits, label)``."""

    def __init__(self, weights=None, ignore_indiex=None, activation="softmax"):
        super().__init__("mean")
        where = "MultiClassDiceLoss"
        if weights is not None and not isinstance(weights, Tensor):
            raise TypeError(f"For '{where}', the 'weights' must be None or a Tensor, but got {type(weights).__name__}.")
        if ignore_indiex is not None and (isinstance(ignore_indiex, bool) or not isinstance(ignore_indiex, int)):
            raise TypeError(
                f"For '{where}', the 'ignore_indiex' must be None or an int, but got {type(ignore_indiex).__name__}."
            )
        if activation is not None and not isinstance(activation, (str, Cell)):
            raise TypeError(
                f"For '{where}', the 'activation' must be None, a str or a Cell, but got {type(activation).__name__}."
            )
        if isinstance(activation, str):
            from opforge.nn.layers import get_activation

            try:
                activation = get_activation(activation)
            except ValueError as e:
                raise ValueError(f"For '{where}', the 'activation' is not an activation: {e}") from None
        self.weights, self.ignore_indiex, self.activation = weights, ignore_indiex, activation
        self.smooth = 1e-5

    def extend_repr(self) -> str:
        return f"ignore_indiex={self.ignore_indiex}"

    def construct(self, logits, label):
        where = "MultiClassDiceLoss"
        _dice_inputs(where, logits, label)
        if logits.ndim < 2:
            raise ValueError(
                f"For '{where}', the 'logits' must have at least 2 dims (N, C, ...), but got shape "
                f"{list(logits.shape)}."
            )
        classes = label.shape[1]
        if self.weights is not None and self.weights.shape[0] != classes:
            raise ValueError(
                f"For '{where}', the 'weights' dim 0 must have C = {classes} (the classes) entries, but got shape "
                f"{list(self.weights.shape)}."
            )
        if self.activation is not None:
            logits = self.activation(logits)
        total = None
        for i in range(classes):
            if i == self.ignore_indiex:
                continue
            loss = _dice(where, logits[:, i], label[:, i], self.smooth)
            if self.weights is not None:
                w = self.weights[i]
                loss = _mul(loss, w if w.dtype == loss.dtype else _cast(w, loss.dtype))
            total = loss if total is None else _add(total, loss)
        if total is None:  # every class ignored
            total = _mul(_sum(logits, ()), 0.0)
        return _div(total, float(classes))
