"""Metrics (MindSpore's ``mindspore.train`` metrics, also ``mindspore.nn``'s): ``clear()``,
``update(*inputs)``, ``eval()``.

``update`` takes what ``Model.eval`` passes: the network's outputs (logits) and the labels (class ids or
one-hot rows); ``Loss`` takes the loss."""

from __future__ import annotations

import numpy as np

from opforge.nn.metric_base import Metric

# MindSpore's ``mindspore.nn.metrics`` holds the segmentation metrics too (the zoo's LSTM-CRF imports
# ConfusionMatrixMetric from it).
from opforge.nn.metrics_segmentation import ConfusionMatrixMetric, HausdorffDistance
from opforge.tensor import Tensor

__all__ = [
    "Metric", "Accuracy", "Loss", "MAE", "MSE", "TopKCategoricalAccuracy", "Top1CategoricalAccuracy",
    "Top5CategoricalAccuracy", "Precision", "Recall", "get_metric_fn", "names", "Fbeta", "F1", "Dice",
    "ConfusionMatrix", "ConfusionMatrixMetric", "HausdorffDistance",
]  # fmt: skip


def _np(x) -> np.ndarray:
    return x.asnumpy() if isinstance(x, Tensor) else np.asarray(x)


def _labels(y: np.ndarray, logits: np.ndarray) -> np.ndarray:
    """Class ids from ids or one-hot rows."""
    return y.argmax(-1) if y.ndim == logits.ndim else y.reshape(-1)


def _check_eval_type(name: str, eval_type: str) -> str:
    if eval_type not in ("classification", "multilabel"):
        raise ValueError(f"For '{name}', the 'eval_type' must be 'classification' or 'multilabel', got {eval_type!r}.")
    return eval_type


class Accuracy(Metric):
    """The fraction of samples whose largest logit is the label's class (``eval_type`` "classification")."""

    def __init__(self, eval_type: str = "classification"):
        self.eval_type = _check_eval_type(type(self).__name__, eval_type)
        super().__init__()

    def clear(self) -> None:
        self._correct, self._total = 0, 0

    def update(self, *inputs) -> None:
        self._need(inputs, 2)
        logits, y = _np(inputs[0]), _np(inputs[1])
        if self.eval_type == "multilabel":
            self._correct += int(np.all((logits > 0.5) == (y > 0.5), axis=-1).sum())
            self._total += logits.shape[0]
            return
        pred = logits.reshape(-1, logits.shape[-1]).argmax(-1)
        self._correct += int((pred == _labels(y, logits)).sum())
        self._total += pred.shape[0]

    def eval(self) -> float:
        if self._total == 0:
            raise RuntimeError("For 'Accuracy', there is nothing to evaluate: call update first.")
        return self._correct / self._total


class TopKCategoricalAccuracy(Metric):
    """The fraction of samples whose label is among the ``k`` largest logits."""

    def __init__(self, k: int):
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise ValueError(f"For 'TopKCategoricalAccuracy', the 'k' must be an int >= 1, but got {k!r}.")
        self.k = k
        super().__init__()

    def clear(self) -> None:
        self._correct, self._total = 0, 0

    def update(self, *inputs) -> None:
        self._need(inputs, 2)
        logits, y = _np(inputs[0]), _np(inputs[1])
        top = np.argsort(-logits, axis=-1, kind="stable")[:, : self.k]
        self._correct += int((top == _labels(y, logits)[:, None]).any(-1).sum())
        self._total += logits.shape[0]

    def eval(self) -> float:
        if self._total == 0:
            raise RuntimeError(f"For '{type(self).__name__}', there is nothing to evaluate: call update first.")
        return self._correct / self._total


class Top1CategoricalAccuracy(TopKCategoricalAccuracy):
    def __init__(self):
        super().__init__(1)


class Top5CategoricalAccuracy(TopKCategoricalAccuracy):
    def __init__(self):
        super().__init__(5)


class Loss(Metric):
    """The mean of the losses given to ``update``."""

    def clear(self) -> None:
        self._sum, self._count = 0.0, 0

    def update(self, *inputs) -> None:
        self._need(inputs, 1)
        loss = _np(inputs[0])
        self._sum += float(loss.mean()) if loss.size else 0.0
        self._count += 1

    def eval(self) -> float:
        if self._count == 0:
            raise RuntimeError("For 'Loss', there is nothing to evaluate: call update first.")
        return self._sum / self._count


class MAE(Metric):
    """Mean absolute error of the outputs against the labels."""

    def clear(self) -> None:
        self._sum, self._count = 0.0, 0

    def update(self, *inputs) -> None:
        self._need(inputs, 2)
        d = _np(inputs[0]) - _np(inputs[1]).reshape(_np(inputs[0]).shape)
        self._sum += float(self._error(d).sum())
        self._count += d.shape[0] if d.ndim else 1

    def _error(self, d):
        return np.abs(d).reshape(d.shape[0], -1).mean(-1) if d.ndim else np.abs(d)

    def eval(self) -> float:
        if self._count == 0:
            raise RuntimeError(f"For '{type(self).__name__}', there is nothing to evaluate: call update first.")
        return self._sum / self._count


class MSE(MAE):
    """Mean squared error of the outputs against the labels."""

    def _error(self, d):
        return (d * d).reshape(d.shape[0], -1).mean(-1) if d.ndim else d * d


class _PerClass(Metric):
    """Counts per class of true positives and of predictions (``Precision``) or labels (``Recall``);
    ``eval(average=False)`` gives one value per class (an array), ``average=True`` their mean."""

    def __init__(self, eval_type: str = "classification"):
        self.eval_type = _check_eval_type(type(self).__name__, eval_type)
        super().__init__()

    def clear(self) -> None:
        self._true_positives, self._counted = 0, 0

    def update(self, *inputs) -> None:
        self._need(inputs, 2)
        logits, y = _np(inputs[0]), _np(inputs[1])
        if self.eval_type == "multilabel":
            pred, truth = (logits > 0.5).astype(np.int64), (y > 0.5).astype(np.int64)
        else:
            classes = logits.shape[-1]
            pred = np.eye(classes, dtype=np.int64)[logits.reshape(-1, classes).argmax(-1)]
            truth = np.eye(classes, dtype=np.int64)[_labels(y, logits).astype(np.int64)]
        self._true_positives = self._true_positives + (pred * truth).sum(0)
        self._counted = self._counted + self._denominator(pred, truth).sum(0)

    def eval(self, average: bool = False):
        if isinstance(self._counted, int):
            raise RuntimeError(f"For '{type(self).__name__}', there is nothing to evaluate: call update first.")
        with np.errstate(divide="ignore", invalid="ignore"):
            per_class = np.where(self._counted > 0, self._true_positives / np.maximum(self._counted, 1), 0.0)
        return float(per_class.mean()) if average else per_class


class Precision(_PerClass):
    """Per class: the fraction of the samples predicted as the class that are of it."""

    @staticmethod
    def _denominator(pred, truth):
        return pred


class Recall(_PerClass):
    """Per class: the fraction of the samples of the class predicted as it."""

    @staticmethod
    def _denominator(pred, truth):
        return truth


class Fbeta(Metric):
    r"""MindSpore's ``Fbeta(beta)``: per class, :math:`F_\beta = (1 + \beta^2) \frac{TP}{\beta^2 (TP + FN)
    + (TP + FP)}` (the weighted harmonic mean of precision and recall; 0 for a class never predicted nor seen).
    ``update(y_pred, y)``: scores [N, C] (the predicted class is the argmax) and labels [N] of class ids or
    one-hot [N, C]. ``eval(average=False)`` gives a float64 array of one value per class, ``average=True`` their
    mean."""

    def __init__(self, beta):
        if isinstance(beta, bool) or not isinstance(beta, (int, float)) or beta <= 0:
            raise ValueError(f"For '{type(self).__name__}', the 'beta' must be a number > 0, but got {beta!r}.")
        self.beta = float(beta)
        self.eps = np.finfo(np.float64).tiny
        super().__init__()

    def clear(self) -> None:
        self._class_num = 0
        self._true_positives = self._actual_positives = self._positives = 0

    def update(self, *inputs) -> None:
        name = type(self).__name__
        if len(inputs) != 2:
            raise ValueError(f"For '{name}.update', give 2 inputs (y_pred, y), but got {len(inputs)}.")
        y_pred, y = _np(inputs[0]), _np(inputs[1])
        if y_pred.ndim != 2:
            raise ValueError(f"For '{name}.update', the 'y_pred' must be [N, C], but got shape {list(y_pred.shape)}.")
        if y.ndim == 2:
            y = y.argmax(-1)
        if y.reshape(-1).shape[0] != y_pred.shape[0]:
            raise ValueError(
                f"For '{name}.update', the 'y' must hold one label per row of 'y_pred' ({y_pred.shape[0]}), "
                f"but got shape {list(y.shape)}."
            )
        classes = y_pred.shape[1]
        if self._class_num and classes != self._class_num:
            raise ValueError(f"For '{name}.update', the classes changed from {self._class_num} to {classes}.")
        labels = y.reshape(-1).astype(np.int64)
        if labels.size and (labels.min() < 0 or labels.max() >= classes):
            raise ValueError(f"For '{name}.update', the labels must be in [0, {classes}), but got {labels.tolist()}.")
        self._class_num = classes
        truth = np.eye(classes)[labels]
        pred = np.eye(classes)[y_pred.argmax(-1)]
        self._true_positives = self._true_positives + (truth * pred).sum(0)
        self._actual_positives = self._actual_positives + truth.sum(0)
        self._positives = self._positives + pred.sum(0)

    def eval(self, average: bool = False):
        name = type(self).__name__
        if not isinstance(average, bool):
            raise TypeError(f"For '{name}.eval', the 'average' must be bool, but got {type(average).__name__}.")
        if self._class_num == 0:
            raise RuntimeError(f"For '{name}', there is nothing to evaluate: call update first.")
        b2 = self.beta**2
        fbeta = (1.0 + b2) * self._true_positives / (b2 * self._actual_positives + self._positives + self.eps)
        return float(fbeta.mean()) if average else fbeta


class F1(Fbeta):
    """MindSpore's ``F1()``: ``Fbeta(1.0)``, per class :math:`2 TP / (2 TP + FN + FP)`."""

    def __init__(self):
        super().__init__(1.0)


class Dice(Metric):
    r"""MindSpore's ``Dice(smooth=1e-5)``: each ``update(y_pred, y)`` (same shapes) adds the coefficient
    :math:`2 \langle y, \hat y \rangle / (\lVert \hat y \rVert^2 + \lVert y \rVert^2 + smooth)` of the
    whole batch and counts its N = ``y.shape[0]`` samples; ``eval()`` is the sum of the coefficients over the
    count of samples (MindSpore's definition: a batch of N weighs 1 / N per batch)."""

    def __init__(self, smooth: float = 1e-5):
        if isinstance(smooth, bool) or not isinstance(smooth, (int, float)) or smooth <= 0:
            raise ValueError(f"For 'Dice', the 'smooth' must be a number > 0, but got {smooth!r}.")
        self.smooth = float(smooth)
        super().__init__()

    def clear(self) -> None:
        self._dice_coeff_sum, self._samples_num = 0.0, 0

    def update(self, *inputs) -> None:
        if len(inputs) != 2:
            raise ValueError(f"For 'Dice.update', give 2 inputs (y_pred, y), but got {len(inputs)}.")
        y_pred, y = _np(inputs[0]).astype(np.float64), _np(inputs[1]).astype(np.float64)
        if y_pred.shape != y.shape or y.ndim == 0:
            raise ValueError(
                f"For 'Dice.update', the 'y_pred' and 'y' must have one shape (with a batch dim), but got "
                f"{list(y_pred.shape)} and {list(y.shape)}."
            )
        self._samples_num += y.shape[0]
        a, b = y_pred.reshape(-1), y.reshape(-1)
        self._dice_coeff_sum += 2.0 * float(a @ b) / float(a @ a + b @ b + self.smooth)

    def eval(self) -> float:
        if self._samples_num == 0:
            raise RuntimeError("For 'Dice', there is nothing to evaluate: call update first.")
        return self._dice_coeff_sum / self._samples_num


class ConfusionMatrix(Metric):
    """MindSpore's ``ConfusionMatrix(num_classes, normalize="no_norm", threshold=0.5)``: ``matrix[i, j]`` counts
    the samples of label ``i`` predicted as ``j``. ``update(y_pred, y)``: ``y`` [N, ...] class ids; ``y_pred``
    the same shape (class ids, or float scores made 0 / 1 by ``>= threshold``) or [N, C, ...] scores (argmax
    over axis 1). ``eval()`` gives the float64 matrix, normalised per ``normalize``: "no_norm" (counts),
    "target" (rows sum to 1), "prediction" (columns) or "all" (the matrix); a 0 / 0 entry is 0."""

    def __init__(self, num_classes, normalize: str = "no_norm", threshold: float = 0.5):
        if isinstance(num_classes, bool) or not isinstance(num_classes, int) or num_classes < 1:
            raise ValueError(f"For 'ConfusionMatrix', the 'num_classes' must be an int >= 1, but got {num_classes!r}.")
        if normalize not in ("target", "prediction", "all", "no_norm"):
            raise ValueError(
                "For 'ConfusionMatrix', the 'normalize' must be 'target', 'prediction', 'all' or 'no_norm', "
                f"but got {normalize!r}."
            )
        if isinstance(threshold, bool) or not isinstance(threshold, float):
            raise TypeError(
                f"For 'ConfusionMatrix', the 'threshold' must be a float, but got {type(threshold).__name__}."
            )
        self.num_classes, self.normalize, self.threshold = num_classes, normalize, threshold
        super().__init__()

    def clear(self) -> None:
        self.confusion_matrix = np.zeros((self.num_classes, self.num_classes))
        self._is_update = False

    def update(self, *inputs) -> None:
        if len(inputs) != 2:
            raise ValueError(f"For 'ConfusionMatrix.update', give 2 inputs (y_pred, y), but got {len(inputs)}.")
        y_pred, y = _np(inputs[0]), _np(inputs[1])
        if y_pred.ndim not in (y.ndim, y.ndim + 1):
            raise ValueError(
                "For 'ConfusionMatrix.update', the 'y_pred' must have the rank of 'y' or one more, but got ranks "
                f"{y_pred.ndim} and {y.ndim}."
            )
        if y_pred.ndim == y.ndim + 1:
            y_pred = y_pred.argmax(1)
        elif y_pred.dtype.kind == "f":
            y_pred = (y_pred >= self.threshold).astype(np.int64)
        n = self.num_classes
        labels, preds = y.reshape(-1).astype(np.int64), y_pred.reshape(-1).astype(np.int64)
        for what, v in (("y", labels), ("y_pred", preds)):
            if v.size and (v.min() < 0 or v.max() >= n):
                raise ValueError(f"For 'ConfusionMatrix.update', the '{what}' classes must be in [0, {n}).")
        self.confusion_matrix += np.bincount(labels * n + preds, minlength=n * n).reshape(n, n)
        self._is_update = True

    def eval(self):
        if not self._is_update:
            raise RuntimeError("For 'ConfusionMatrix', there is nothing to evaluate: call update first.")
        matrix = self.confusion_matrix.astype(np.float64)
        if self.normalize == "no_norm":
            return matrix
        total = {"target": matrix.sum(1, keepdims=True), "prediction": matrix.sum(0, keepdims=True)}.get(
            self.normalize, matrix.sum()
        )
        with np.errstate(divide="ignore", invalid="ignore"):
            out = matrix / total
        return np.nan_to_num(out, nan=0.0)


_BY_NAME = {
    "acc": Accuracy, "accuracy": Accuracy, "loss": Loss, "mae": MAE, "mse": MSE,
    "top_1_accuracy": Top1CategoricalAccuracy, "top_5_accuracy": Top5CategoricalAccuracy, "F1": F1, "dice": Dice,
    "confusion_matrix_metric": ConfusionMatrixMetric, "hausdorff_distance": HausdorffDistance,
}  # fmt: skip


def names() -> list:
    return sorted(_BY_NAME)


def get_metric_fn(name: str) -> Metric:
    """A metric by MindSpore's name ("acc", "loss", "top_1_accuracy", ...)."""
    cls = _BY_NAME.get(name)
    if cls is None:
        raise KeyError(f"Unknown metric '{name}'; known: {names()}.")
    return cls()
