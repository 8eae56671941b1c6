"""Loss functions (MindSpore's ``nn.loss``), each built from primitives so they differentiate."""

from __future__ import annotations

from opforge import dtype as mstype
from opforge import ops
from opforge.nn.cell import Cell
from opforge.ops.functional_loss import binary_cross_entropy, cross_entropy, kl_div

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
    from opforge.tensor import Tensor

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
