"""Metrics (MindSpore's ``mindspore.train`` metrics, also ``mindspore.nn``'s): ``clear()``,
``update(*inputs)``, ``eval()``.

``update`` takes what ``Model.eval`` passes: the network's outputs (logits) and the labels (class ids or
one-hot rows); ``Loss`` takes the loss."""

from __future__ import annotations

import numpy as np

from opforge.tensor import Tensor

__all__ = [
    "Metric", "Accuracy", "Loss", "MAE", "MSE", "TopKCategoricalAccuracy", "Top1CategoricalAccuracy",
    "Top5CategoricalAccuracy", "Precision", "Recall", "get_metric_fn", "names",
]  # fmt: skip


def _np(x) -> np.ndarray:
    return x.asnumpy() if isinstance(x, Tensor) else np.asarray(x)


def _labels(y: np.ndarray, logits: np.ndarray) -> np.ndarray:
    """Class ids from ids or one-hot rows."""
    return y.argmax(-1) if y.ndim == logits.ndim else y.reshape(-1)


class Metric:
    """Base class: subclasses implement ``clear``, ``update`` and ``eval``."""

    def __init__(self):
        self.clear()

    def clear(self) -> None:
        raise NotImplementedError

    def update(self, *inputs) -> None:
        raise NotImplementedError

    def eval(self):
        raise NotImplementedError

    def _need(self, inputs, n: int) -> None:
        if len(inputs) < n:
            raise ValueError(f"For '{type(self).__name__}.update', give {n} inputs, but got {len(inputs)}.")


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


_BY_NAME = {
    "acc": Accuracy, "accuracy": Accuracy, "loss": Loss, "mae": MAE, "mse": MSE,
    "top_1_accuracy": Top1CategoricalAccuracy, "top_5_accuracy": Top5CategoricalAccuracy,
}  # fmt: skip


def names() -> list:
    return sorted(_BY_NAME)


def get_metric_fn(name: str) -> Metric:
    """A metric by MindSpore's name ("acc", "loss", "top_1_accuracy", ...)."""
    cls = _BY_NAME.get(name)
    if cls is None:
        raise KeyError(f"Unknown metric '{name}'; known: {names()}.")
    return cls()
