"""The base class of the metrics (MindSpore's ``Metric``): ``clear()``, ``update(*inputs)``, ``eval()``; the
built-in ones are in ``metrics.py`` and ``metrics_segmentation.py``."""

from __future__ import annotations

import numpy as np

from opforge.tensor import Tensor

__all__ = ["Metric"]

# The modules of the built-in metrics, which clear themselves when built (Metric.__init__).
_BUILTIN_MODULES = ("opforge.nn.metrics", "opforge.nn.metrics_segmentation")


class Metric:
    """Base class: subclasses implement ``clear``, ``update`` and ``eval``.

    As MindSpore's, ``Metric.__init__`` does not call ``clear`` for a user's subclass, which sets its own
    attributes after ``super().__init__()`` and then calls ``self.clear()`` itself (the model zoo's metrics
    do; their ``clear`` may read those attributes). The built-in metrics (and subclasses of them) are
    cleared when built, as MindSpore's built-in metrics clear themselves in their ``__init__``."""

    def __init__(self):
        self._indexes = None
        if any(c.__module__ in _BUILTIN_MODULES and c is not Metric for c in type(self).__mro__):
            self.clear()

    @staticmethod
    def _convert_data(data) -> np.ndarray:
        """``data`` (a Tensor, a list or a NumPy array) as a NumPy array, as MindSpore's ``Metric._convert_data``
        (what a user's ``update`` calls on its inputs)."""
        if isinstance(data, Tensor):
            return data.asnumpy()
        if isinstance(data, np.ndarray):
            return data
        if isinstance(data, list):
            return np.array(data)
        raise TypeError(
            f"For 'Metric', the input data type must be a Tensor, a list or a numpy.ndarray, but got {type(data)}."
        )

    def clear(self) -> None:
        raise NotImplementedError

    def update(self, *inputs) -> None:
        raise NotImplementedError

    def eval(self):
        raise NotImplementedError

    def _need(self, inputs, n: int) -> None:
        if len(inputs) < n:
            raise ValueError(f"For '{type(self).__name__}.update', give {n} inputs, but got {len(inputs)}.")
