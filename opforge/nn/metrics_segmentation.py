"""Segmentation metrics (MindSpore's ``mindspore.train.ConfusionMatrixMetric`` and ``HausdorffDistance``, also
``mindspore.nn``'s in 1.x), computed on the host with NumPy as MindSpore's are. ``HausdorffDistance`` needs no
SciPy: its edges are a binary erosion of NumPy shifts, its distances the exact nearest-edge distances by
brute force (what SciPy's distance transforms give), in blocks of bounded memory."""

from __future__ import annotations

import numpy as np

from opforge.nn.metric_base import Metric

__all__ = ["ConfusionMatrixMetric", "HausdorffDistance"]


def _bool_arg(cell: str, name: str, value) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"For '{cell}', the '{name}' must be bool, but got {type(value).__name__}.")
    return value


# ---------------------------------------------------------------------------------------------
# ConfusionMatrixMetric

# Every accepted name (spaces read as underscores, any case) -> its short name.
_METRIC_NAMES = {
    "sensitivity": "tpr", "recall": "tpr", "hit_rate": "tpr", "true_positive_rate": "tpr", "tpr": "tpr",
    "specificity": "tnr", "selectivity": "tnr", "true_negative_rate": "tnr", "tnr": "tnr",
    "precision": "ppv", "positive_predictive_value": "ppv", "ppv": "ppv",
    "negative_predictive_value": "npv", "npv": "npv",
    "miss_rate": "fnr", "false_negative_rate": "fnr", "fnr": "fnr",
    "fall_out": "fpr", "false_positive_rate": "fpr", "fpr": "fpr",
    "false_discovery_rate": "fdr", "fdr": "fdr",
    "false_omission_rate": "for", "for": "for",
    "prevalence_threshold": "pt", "pt": "pt",
    "threat_score": "ts", "critical_success_index": "ts", "ts": "ts", "csi": "ts",
    "accuracy": "acc", "acc": "acc",
    "balanced_accuracy": "ba", "ba": "ba",
    "f1_score": "f1", "f1": "f1",
    "matthews_correlation_coefficient": "mcc", "mcc": "mcc",
    "fowlkes_mallows_index": "fm", "fm": "fm",
    "informedness": "bm", "bookmaker_informedness": "bm", "bm": "bm",
    "markedness": "mk", "deltap": "mk", "mk": "mk",
}  # fmt: skip
_DECREASES = ("none", "mean", "sum", "mean_batch", "sum_batch", "mean_channel", "sum_channel")


def _short_metric_name(metric_name: str) -> str:
    short = _METRIC_NAMES.get(metric_name.replace(" ", "_").lower())
    if short is None:
        raise NotImplementedError(
            f"For 'ConfusionMatrixMetric', the metric {metric_name!r} is not implemented; known names: "
            f"{sorted(_METRIC_NAMES)}."
        )
    return short


def _ratio(numerator, denominator):
    """numerator / denominator, NaN where the denominator is 0."""
    return np.where(denominator > 0, numerator / np.where(denominator > 0, denominator, 1.0), np.nan)


def _metric_terms(short: str, tp, fp, tn, fn) -> tuple:
    """(numerator, denominator) of a confusion-matrix metric, element-wise over the counts (MindSpore's)."""
    p, n = tp + fn, fp + tn
    tpr, tnr = _ratio(tp, p), _ratio(tn, n)
    ppv, npv = _ratio(tp, tp + fp), _ratio(tn, tn + fn)
    terms = {
        "tpr": (tp, p), "tnr": (tn, n), "ppv": (tp, tp + fp), "npv": (tn, tn + fn), "fnr": (fn, p), "fpr": (fp, n),
        "fdr": (fp, fp + tp), "for": (fn, fn + tn), "ts": (tp, tp + fn + fp), "acc": (tp + tn, p + n),
        "f1": (2.0 * tp, 2.0 * tp + fn + fp),
        "mcc": (tp * tn - fp * fn, np.sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn))),
        "ba": (tpr + tnr, 2.0), "fm": (np.sqrt(ppv * tpr), 1.0), "bm": (tpr + tnr - 1.0, 1.0),
        "mk": (ppv + npv - 1.0, 1.0),
    }  # fmt: skip
    if short == "pt":
        return np.sqrt(tpr * (1.0 - tnr)) + tnr - 1.0, tpr + tnr - 1.0
    return terms[short]


def confusion_matrix_metric(short: str, matrix: np.ndarray) -> np.ndarray:
    """The metric of each [..., 4] (tp, fp, tn, fn) row of ``matrix`` (a 1-D one taken as [1, 4]); NaN where a
    count denominator is 0."""
    matrix = np.asarray(matrix, np.float64)
    if matrix.ndim == 1:
        matrix = matrix[None]
    with np.errstate(divide="ignore", invalid="ignore"):
        numerator, denominator = _metric_terms(short, *(matrix[..., k] for k in range(4)))
        if isinstance(denominator, np.ndarray):
            return np.where(denominator != 0, numerator / np.where(denominator != 0, denominator, 1.0), np.nan)
        return numerator / denominator


def _counts(y_pred: np.ndarray, y: np.ndarray, skip_channel: bool) -> np.ndarray:
    """[B, C, 4]: (tp, fp, tn, fn) of each batch element and channel, over the other dims."""
    if not skip_channel:  # MindSpore's code drops channel 0 when skip_channel is False (its docs say the reverse)
        y = y[:, 1:] if y.shape[1] > 1 else y
        y_pred = y_pred[:, 1:] if y_pred.shape[1] > 1 else y_pred
    if y.shape != y_pred.shape:
        raise ValueError(
            "For 'ConfusionMatrixMetric.update', the 'y_pred' and 'y' must have one shape (both one-hot [N, C, ...]), "
            f"but got {list(y_pred.shape)} and {list(y.shape)}."
        )
    b, c = y_pred.shape[:2]
    y_pred = y_pred.astype(np.float64).reshape(b, c, -1)
    y = y.astype(np.float64).reshape(b, c, -1)
    tp = ((y_pred + y) == 2).sum(axis=2).astype(np.float64)
    tn = ((y_pred + y) == 0).sum(axis=2).astype(np.float64)
    p = y.sum(axis=2)
    n = y.shape[-1] - p
    return np.stack([tp, n - tn, tn, p - tp], axis=-1)


def _decrease(chart: np.ndarray, decrease: str) -> tuple:
    """(the reduced chart, the count of non-NaN values behind it) of a [B, C] chart, NaNs left out."""
    nans = np.isnan(chart)
    not_nans = (~nans).astype(np.float64)
    chart = np.where(nans, 0.0, chart)
    with np.errstate(divide="ignore", invalid="ignore"):
        if decrease == "mean":
            per_batch = not_nans.sum(axis=1)
            chart = np.where(per_batch > 0, chart.sum(axis=1) / per_batch, 0.0)
            count = (per_batch > 0).astype(np.float64).sum(axis=0)
            return np.where(count > 0, chart.sum(axis=0) / count, 0.0), count
        if decrease == "sum":
            return chart.sum(axis=(0, 1)), not_nans.sum(axis=(0, 1))
        if decrease == "none":
            return chart, not_nans
        axis = 0 if decrease.endswith("batch") else 1
        count = not_nans.sum(axis=axis)
        total = chart.sum(axis=axis)
        return (np.where(count > 0, total / count, 0.0) if decrease.startswith("mean") else total), count


class ConfusionMatrixMetric(Metric):
    r"""MindSpore's ``ConfusionMatrixMetric(skip_channel=True, metric_name="sensitivity", calculation_method=False,
    decrease="mean")``: a metric of the confusion counts (tp, fp, tn, fn) of one-hot predictions against one-hot
    labels, e.g. sensitivity :math:`tp / (tp + fn)`, precision :math:`tp / (tp + fp)`, F1 :math:`2tp / (2tp + fn +
    fp)`, MCC, balanced accuracy... ``metric_name``: one of "sensitivity" ("recall", "hit_rate", "tpr"),
    "specificity" ("tnr"), "precision" ("ppv"), "negative predictive value", "miss rate", "fall out", "false
    discovery rate", "false omission rate", "prevalence threshold", "threat score", "accuracy", "balanced
    accuracy", "f1 score", "matthews correlation coefficient", "fowlkes mallows index", "informedness",
    "markedness" (spaces or underscores, any case); another is a NotImplementedError.

    ``update(y_pred, y)``: binarized one-hot [N, C, ...] arrays of one shape (Tensor, list or ndarray; ``y`` must
    hold 0 / 1 and ``y_pred`` have at least 2 dims, else ValueError). Counts per (n, c) over the other dims. As
    MindSpore's code, ``skip_channel=False`` leaves channel 0 out (when C > 1) and True keeps every channel.

    ``calculation_method=False``: the counts summed over every update, ``eval()`` the metric of the totals, a
    float64 array of one value (NaN when its denominator is 0). ``calculation_method=True``: each update computes
    the metric per (n, c), reduces it by ``decrease`` leaving NaNs out, and ``eval()`` is the mean over updates
    weighted by their non-NaN counts (a float; RuntimeError before any update). Only "mean" and "sum" (or a
    reduction to one value) can be accumulated so, as in MindSpore; another reduction giving several values is a
    ValueError. Classification inputs ([N, C] or [N, C, 1]) switch ``calculation_method`` off, as MindSpore's."""

    def __init__(self, skip_channel=True, metric_name="sensitivity", calculation_method=False, decrease="mean"):
        name = "ConfusionMatrixMetric"
        self.skip_channel = _bool_arg(name, "skip_channel", skip_channel)
        self.calculation_method = _bool_arg(name, "calculation_method", calculation_method)
        if not isinstance(metric_name, str):
            raise TypeError(f"For '{name}', the 'metric_name' must be str, but got {type(metric_name).__name__}.")
        self.metric_name = metric_name
        self._short = _short_metric_name(metric_name)
        if not isinstance(decrease, str):
            raise TypeError(f"For '{name}', the 'decrease' must be str, but got {type(decrease).__name__}.")
        if decrease not in _DECREASES:
            raise ValueError(f"For '{name}', the 'decrease' must be one of {list(_DECREASES)}, but got {decrease!r}.")
        self.decrease = decrease
        self._per_sample = calculation_method  # MindSpore turns it off for good on classification inputs
        super().__init__()
        self.clear()

    def clear(self) -> None:
        self._total_num, self._class_num = 0.0, 0
        self._total_tp = self._total_fp = self._total_tn = self._total_fn = 0.0

    def update(self, *inputs) -> None:
        name = "ConfusionMatrixMetric.update"
        if len(inputs) != 2:
            raise ValueError(f"For '{name}', give 2 inputs (y_pred, y), but got {len(inputs)}.")
        y_pred, y = self._convert_data(inputs[0]), self._convert_data(inputs[1])
        if not np.all(y.astype(np.uint8) == y):
            raise ValueError(f"For '{name}', the 'y' must be binarized (one-hot 0 / 1 values).")
        if y_pred.ndim < 2:
            raise ValueError(f"For '{name}', the 'y_pred' must have at least 2 dims, but got {y_pred.ndim}.")
        if y_pred.ndim == 2 or (y_pred.ndim == 3 and y_pred.shape[-1] == 1):
            self._per_sample = False
        counts = _counts(y_pred, y, self.skip_channel)
        if not self._per_sample:
            self._total_tp, self._total_fp, self._total_tn, self._total_fn = (
                total + float(counts[..., k].sum())
                for k, total in enumerate((self._total_tp, self._total_fp, self._total_tn, self._total_fn))
            )
            return
        score, not_nans = _decrease(confusion_matrix_metric(self._short, counts), self.decrease)
        if np.size(score) != 1:
            raise ValueError(
                f"For '{name}', with calculation_method=True the 'decrease' {self.decrease!r} must reduce each update "
                f"to one value (use 'mean' or 'sum'), but it gave shape {list(np.shape(score))}."
            )
        count = int(np.asarray(not_nans).item())
        self._total_num += float(np.asarray(score).item()) * count
        self._class_num += count

    def eval(self):
        if self._per_sample:
            if self._class_num == 0:
                raise RuntimeError(
                    "For 'ConfusionMatrixMetric', there is nothing to evaluate: no update has given a value that is "
                    "not NaN (call update first, with non-empty inputs)."
                )
            return self._total_num / self._class_num
        totals = np.array([self._total_tp, self._total_fp, self._total_tn, self._total_fn])
        return confusion_matrix_metric(self._short, totals)


# ---------------------------------------------------------------------------------------------
# HausdorffDistance


def _erode(mask: np.ndarray) -> np.ndarray:
    """Binary erosion by the cross of each dim's two neighbours (SciPy's default structure), outside = False."""
    out = mask.copy()
    for axis in range(mask.ndim):
        length = mask.shape[axis]
        for shift in (1, -1):
            neighbour = np.zeros_like(mask)
            dst = [slice(None)] * mask.ndim
            src = [slice(None)] * mask.ndim
            dst[axis] = slice(0, length - 1) if shift == 1 else slice(1, length)
            src[axis] = slice(1, length) if shift == 1 else slice(0, length - 1)
            neighbour[tuple(dst)] = mask[tuple(src)]
            out &= neighbour
    return out


def _nearest_distances(points: np.ndarray, targets: np.ndarray, metric: str) -> np.ndarray:
    """For each of ``points`` [P, D], its distance to the nearest of ``targets`` [T, D] (T > 0)."""
    out = np.empty(points.shape[0], np.float64)
    block = max(1, (1 << 22) // max(1, targets.shape[0]))  # about 4M differences per block
    for start in range(0, points.shape[0], block):
        diff = np.abs(points[start : start + block, None, :] - targets[None, :, :]).astype(np.float64)
        if metric == "euclidean":
            dist = np.sqrt((diff * diff).sum(-1))
        elif metric == "chessboard":
            dist = diff.max(-1) if diff.shape[-1] else diff.sum(-1)
        else:
            dist = diff.sum(-1)
        out[start : start + block] = dist.min(1)
    return out


class HausdorffDistance(Metric):
    r"""MindSpore's ``HausdorffDistance(distance_metric="euclidean", percentile=None, directed=False, crop=True)``:
    the Hausdorff distance between the edges of a predicted and a true mask,

    .. math:: H(A, B) = \max(h(A, B), h(B, A)), \quad h(A, B) = \max_{a \in A} \min_{b \in B} \lVert a - b \rVert

    (``directed``: :math:`h(\hat y, y)` only), with ``percentile`` (a float in [0, 100]) the percentile of the
    nearest distances instead of their max. ``distance_metric``: "euclidean", "chessboard" (L-inf) or "taxicab"
    (L1). ``update(y_pred, y, label_idx)``: arrays of one non-empty shape (Tensor, list or ndarray) and an int or
    float; the masks are ``y_pred == label_idx`` and ``y == label_idx`` (``label_idx`` must occur in one of them).
    With ``crop`` both masks are cut to the bounding box of their union and size-1 dims dropped (NumPy's
    squeeze); the edges are each mask XOR its binary erosion (the cross of face neighbours, outside counting as
    background). Each update replaces the previous one. ``eval()`` gives the distance (a float64; inf when
    either mask has no edge pixel, e.g. both empty; int32 for "chessboard" / "taxicab" as SciPy's chamfer
    transform gives MindSpore); RuntimeError before any update, ValueError for a percentile outside [0, 100]."""

    def __init__(self, distance_metric="euclidean", percentile=None, directed=False, crop=True):
        name = "HausdorffDistance"
        if not isinstance(distance_metric, str):
            raise TypeError(
                f"For '{name}', the 'distance_metric' must be str, but got {type(distance_metric).__name__}."
            )
        if distance_metric not in ("euclidean", "chessboard", "taxicab"):
            raise ValueError(
                f"For '{name}', the 'distance_metric' must be one of ['euclidean', 'chessboard', 'taxicab'], but got "
                f"{distance_metric!r}."
            )
        if percentile is not None and not isinstance(percentile, float):
            raise TypeError(f"For '{name}', the 'percentile' must be a float, but got {type(percentile).__name__}.")
        self.distance_metric, self.percentile = distance_metric, percentile
        self.directed = directed if directed is None else _bool_arg(name, "directed", directed)
        self.crop = crop if crop is None else _bool_arg(name, "crop", crop)
        super().__init__()
        self.clear()

    def clear(self) -> None:
        self.y_pred_edges, self.y_edges = 0, 0
        self._is_update = False

    def update(self, *inputs) -> None:
        name = "HausdorffDistance.update"
        if len(inputs) != 3:
            raise ValueError(f"For '{name}', give 3 inputs (y_pred, y, label_idx), but got {len(inputs)}.")
        y_pred, y = self._convert_data(inputs[0]), self._convert_data(inputs[1])
        label_idx = inputs[2]
        if isinstance(label_idx, bool) or not isinstance(label_idx, (int, float)):
            raise ValueError(
                f"For '{name}', the 'label_idx' must be an int or a float, but got {type(label_idx).__name__}."
            )
        if y_pred.size == 0 or y_pred.shape != y.shape:
            raise ValueError(
                f"For '{name}', the 'y_pred' and 'y' must have one non-empty shape, but got {list(y_pred.shape)} and "
                f"{list(y.shape)}."
            )
        pred_mask, true_mask = y_pred == label_idx, y == label_idx
        if not (pred_mask.any() or true_mask.any()):
            raise ValueError(
                f"For '{name}', the 'label_idx' {label_idx} must occur in 'y_pred' or 'y', but it does not."
            )
        self._is_update = True
        self.y_pred_edges, self.y_edges = self._edges(pred_mask, true_mask)

    def _edges(self, y_pred: np.ndarray, y: np.ndarray) -> tuple:
        if self.crop:
            union = y_pred | y
            if not union.any():
                return np.zeros_like(y_pred), np.zeros_like(y)
            where = np.nonzero(union)
            box = tuple(slice(int(i.min()), int(i.max()) + 1) for i in where)
            y_pred, y = np.squeeze(y_pred[box]), np.squeeze(y[box])
        return _erode(y_pred) ^ y_pred, _erode(y) ^ y

    def _directed(self, from_edges: np.ndarray, to_edges: np.ndarray):
        if not np.any(from_edges):
            return np.inf
        points = np.argwhere(from_edges)
        if not np.any(to_edges):
            distances = np.full(points.shape[0], np.inf)
        else:
            distances = _nearest_distances(points, np.argwhere(to_edges), self.distance_metric)
            if self.distance_metric != "euclidean":
                distances = distances.astype(np.int32)  # SciPy's chamfer transform is int32
        if not self.percentile:
            return distances.max()
        if 0 <= self.percentile <= 100:
            return np.percentile(distances, self.percentile)
        raise ValueError(f"For 'HausdorffDistance', the 'percentile' must be in [0, 100], but got {self.percentile}.")

    def eval(self):
        if not self._is_update:
            raise RuntimeError("For 'HausdorffDistance', there is nothing to evaluate: call update first.")
        hd = self._directed(self.y_pred_edges, self.y_edges)
        if self.directed:
            return hd
        return max(hd, self._directed(self.y_edges, self.y_pred_edges))
