"""MindSpore's summary operators: ``ScalarSummary``, ``ImageSummary``, ``TensorSummary`` and ``HistogramSummary``.

Called in a network's ``construct`` as ``ops.ScalarSummary()("loss", loss)``, each keeps its value under
``"{name}[:Scalar]"`` (``[:Image]``, ``[:Tensor]``, ``[:Histogram]``), the newest one per name, until a
``SummaryRecord`` (opforge/train/summary.py; ``SummaryCollector`` uses one) takes them at its next ``record`` in
train mode and writes them, as MindSpore's do. Under ``jit`` (GRAPH_MODE) the values are extra outputs of the
trace, handed over at every replay (opforge/dispatch/side_outputs.py), so each step records that step's values.
Each returns None.
"""

from __future__ import annotations

import threading

from opforge.dispatch import side_outputs
from opforge.tensor import Tensor

__all__ = ["ScalarSummary", "ImageSummary", "TensorSummary", "HistogramSummary"]

_lock = threading.Lock()
_values: dict = {}  # "name[:Type]" -> the newest Tensor


def _keep(key: str, value: Tensor) -> None:
    with _lock:
        _values[key] = value


def take_summary_values() -> dict:
    """``{"name[:Type]": Tensor}`` kept since the last call, and forget them."""
    global _values
    with _lock:
        taken, _values = _values, {}
    return taken


class _Summary:
    kind = ""  # "Scalar", "Image", "Tensor", "Histogram"

    def _check_value(self, value: Tensor) -> None:
        pass

    def __call__(self, name, value):
        op = type(self).__name__
        if not isinstance(name, str):
            raise TypeError(f"For '{op}', the 'name' must be a str, but got {type(name).__name__}.")
        if not name:
            raise ValueError(f"For '{op}', the 'name' must not be empty.")
        if not isinstance(value, Tensor):
            raise TypeError(f"For '{op}', the 'value' must be a Tensor, but got {type(value).__name__}.")
        self._check_value(value)
        side_outputs.emit(_keep, f"{name}[:{self.kind}]", value)


class ScalarSummary(_Summary):
    """``ScalarSummary()(name, value)``: ``value`` a scalar Tensor (rank 0 or 1)."""

    kind = "Scalar"

    def _check_value(self, value: Tensor) -> None:
        if value.ndim > 1:
            raise ValueError(f"For 'ScalarSummary', the 'value' must have rank 0 or 1, but got {value.ndim}.")


class ImageSummary(_Summary):
    """``ImageSummary()(name, value)``: ``value`` a batch of images [N, C, H, W]."""

    kind = "Image"

    def _check_value(self, value: Tensor) -> None:
        if value.ndim != 4:
            raise ValueError(f"For 'ImageSummary', the 'value' must be 4-D (NCHW), but got rank {value.ndim}.")


class TensorSummary(_Summary):
    """``TensorSummary()(name, value)``: any Tensor."""

    kind = "Tensor"


class HistogramSummary(_Summary):
    """``HistogramSummary()(name, value)``: any Tensor, written as a histogram of its values."""

    kind = "Histogram"
