"""MindSpore's ROC metric and ``auc`` (``mindspore.nn.ROC``, ``mindspore.nn.auc``; ``mindspore.train`` has them
too), computed with NumPy on the host as MindSpore's:

- ``ROC(class_num=None, pos_label=None)``: ``update(y_pred, y)`` keeps the predictions and labels, ``eval()``
  gives ``(fpr, tpr, thresholds)``: one curve for binary inputs (``y_pred`` of ``y``'s rank), one per class
  (one-vs-rest, lists of arrays) for scores of rank ``y``'s + 1 and ``class_num`` classes.
- ``auc(x, y, reorder=False)``: the trapezoidal area under the points (x, y), x monotonic unless ``reorder``."""

from __future__ import annotations

import numpy as np

from opforge.nn.metric_base import Metric, rearrange_inputs

__all__ = ["ROC", "auc"]


def _binary_curve(scores: np.ndarray, labels: np.ndarray, pos_label) -> tuple:
    """False and true positive counts at each distinct score (descending; a stable sort of -score), and those
    scores."""
    order = np.argsort(-scores, kind="stable")
    scores, positive = scores[order], (labels[order] == pos_label).astype(np.int64)
    last = np.append(np.nonzero(np.diff(scores))[0], scores.shape[0] - 1)  # each distinct score's last position
    tps = np.cumsum(positive)[last]
    fps = last + 1 - tps
    return fps, tps, scores[last]


def _roc_curve(scores: np.ndarray, labels: np.ndarray, pos_label) -> tuple:
    fps, tps, thresholds = _binary_curve(scores, labels, pos_label)
    fps, tps = np.concatenate([[0], fps]), np.concatenate([[0], tps])
    thresholds = np.concatenate([thresholds[:1] + 1, thresholds])
    if fps[-1] <= 0:
        raise ValueError(
            "For 'ROC.eval', there is no negative samples in true value, false positive value is meaningless."
        )
    if tps[-1] <= 0:
        raise ValueError(
            "For 'ROC.eval', there is no positive samples in true value, true positive value is meaningless."
        )
    return fps / fps[-1], tps / tps[-1], thresholds


def _arrange(y_pred: np.ndarray, y: np.ndarray, class_num, pos_label) -> tuple:
    """(scores, labels, class_num, pos_label) of one update, checked as MindSpore's ROC checks them."""
    if y_pred.ndim == y.ndim:
        if class_num is not None and class_num != 1:
            raise ValueError(
                "For 'ROC', when predicted value (input[0]) and true value (input[1]) have the same shape, the "
                f"'class_num' must be 1, but got {class_num}."
            )
        return y_pred.reshape(-1), y.reshape(-1), 1, 1 if pos_label is None else pos_label
    if y_pred.ndim == y.ndim + 1:
        if pos_label is not None:
            raise ValueError(
                "For 'ROC', when the dimension of predicted value (input[0]) equals the dimension of true value "
                f"(input[1]) add 1, the 'pos_label' must be None, but got {pos_label}."
            )
        if class_num != y_pred.shape[1]:
            raise ValueError(
                "For 'ROC', the 'class_num' must equal the number of classes from predicted value (input[0]), but "
                f"got 'class_num' {class_num}, the number of classes from predicted value {y_pred.shape[1]}."
            )
        return (
            y_pred.reshape(y_pred.shape[0], class_num, -1).swapaxes(1, 2).reshape(-1, class_num),
            y.reshape(-1),
            class_num,
            None,
        )
    raise ValueError(
        "For 'ROC', predicted value (input[0]) and true value (input[1]) must have same dimensions, or the dimension "
        f"of predicted value equal the dimension of true value add 1, but got predicted value ndim: {y_pred.ndim}, "
        f"true value ndim: {y.ndim}."
    )


class ROC(Metric):
    """MindSpore's ``ROC(class_num=None, pos_label=None)`` metric: the receiver operating characteristic curve of
    the last ``update(y_pred, y)`` (Tensors, lists or arrays). Binary (``y_pred`` of ``y``'s rank): ``y == pos_label``
    (default 1) is positive. Multiclass (``y_pred`` [N, class_num, ...], ``y`` class ids): one curve per class c
    of ``y_pred[:, c]`` with class c positive. ``eval()`` returns ``(fpr, tpr, thresholds)``, arrays (lists of
    arrays for multiclass), the thresholds the distinct scores in descending order after the first score + 1;
    ``ValueError`` where the labels have no positive or no negative sample, ``RuntimeError`` before an update."""

    def __init__(self, class_num=None, pos_label=None):
        super().__init__()
        for arg, value in (("class_num", class_num), ("pos_label", pos_label)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
                raise TypeError(f"For 'ROC', the '{arg}' must be an int, but got {type(value).__name__}.")
        self.class_num, self.pos_label = class_num, pos_label
        self.clear()

    def clear(self):
        self.y_pred, self.y, self.sample_weights = 0, 0, None
        self._is_update = False

    @rearrange_inputs
    def update(self, *inputs):
        if len(inputs) != 2:
            raise ValueError(
                f"For 'ROC.update', it needs 2 inputs (predicted value, true value), but got {len(inputs)}."
            )
        y_pred, y = self._convert_data(inputs[0]), self._convert_data(inputs[1])
        self.y_pred, self.y, self.class_num, self.pos_label = _arrange(y_pred, y, self.class_num, self.pos_label)
        self._is_update = True

    def _curves(self, y_pred, y, class_num, pos_label) -> tuple:
        if class_num == 1:
            return _roc_curve(y_pred, y, pos_label)
        curves = [_roc_curve(y_pred[:, c], y, c) for c in range(class_num)]
        return tuple(list(part) for part in zip(*curves))

    def eval(self):
        if not self._is_update:
            raise RuntimeError("Please call the 'update' method before calling 'eval' method.")
        return self._curves(np.squeeze(self.y_pred), np.squeeze(self.y), self.class_num, self.pos_label)


def auc(x, y, reorder=False):
    """MindSpore's ``auc(x, y, reorder=False)``: the area under the curve through the points (x, y) by the
    trapezoidal rule (``ROC``'s ``fpr`` and ``tpr``). ``x`` and ``y`` are NumPy arrays of one length (at least
    2; 1-D or [N, 1]); ``x`` must rise or fall monotonically unless ``reorder`` sorts the points by x (then y)."""
    if not isinstance(x, np.ndarray) or not isinstance(y, np.ndarray):
        raise TypeError(f"For 'auc', the argument 'x' and 'y' must all be np.ndarray, but got {type(x)}, {type(y)}.")
    for a in (x, y):
        if a.ndim == 0:
            raise TypeError(f"For 'auc', a 0-d array {a} cannot be considered as a valid collection.")
    if x.shape[0] != y.shape[0]:
        raise ValueError(f"Found input variables with inconsistent numbers of samples: {[x.shape[0], y.shape[0]]}.")
    for a in (x, y):
        if not (a.ndim == 1 or (a.ndim == 2 and a.shape[1] == 1)):
            raise ValueError(
                "For 'auc', the input must be a 1-dimensional array, or a 2-dimensional array with the second "
                f"dimension of 1, but got shape {a.shape}."
            )
    x, y = x.ravel(), y.ravel()
    if x.shape[0] < 2:
        raise ValueError(
            f"For 'auc', the shape of the argument 'x' in axis 0 must be at least 2, but got {x.shape[0]}."
        )
    direction = 1
    if reorder:
        order = np.lexsort((y, x))
        x, y = x[order], y[order]
    else:
        dx = np.diff(x)
        if np.any(dx < 0):
            if not np.all(dx <= 0):
                raise ValueError(
                    f"For 'auc', if 'reorder' is False, 'x' must be increasing or decreasing, but got {x}."
                )
            direction = -1
    return direction * float(np.sum((x[1:] - x[:-1]) * (y[1:] + y[:-1]) / 2.0))
