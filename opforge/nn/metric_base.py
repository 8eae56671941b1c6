"""The base class of the metrics (MindSpore's ``Metric``): ``clear()``, ``update(*inputs)``, ``eval()``; the
built-in ones are in ``metrics.py`` and ``metrics_segmentation.py``."""

from __future__ import annotations

import functools

import numpy as np

from opforge.tensor import Tensor

__all__ = ["Metric", "rearrange_inputs"]


def rearrange_inputs(func):
    """MindSpore's ``rearrange_inputs``: a decorator of a metric's ``update`` that passes it ``inputs[i]`` for each
    ``i`` of the metric's ``indexes`` (set by ``set_indexes``), in that order, or every input as given when the
    metric has no indexes."""

    @functools.wraps(func)
    def wrapper(self, *inputs):
        indexes = self.indexes
        return func(self, *(inputs if not indexes else [inputs[i] for i in indexes]))

    return wrapper


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

    @property
    def indexes(self):
        """The input positions ``update`` takes (``set_indexes``), or None for all of them in order."""
        return getattr(self, "_indexes", None)

    def set_indexes(self, indexes):
        """MindSpore's ``Metric.set_indexes``: ``update`` (decorated with ``rearrange_inputs``) gets
        ``inputs[i]`` for each ``i`` of ``indexes`` (a list of ints). Returns the metric."""
        if not isinstance(indexes, list) or not all(isinstance(i, int) and not isinstance(i, bool) for i in indexes):
            raise ValueError(
                f"For 'set_indexes', the argument 'indexes' must be a list and all its elements must be int, but got "
                f"{indexes!r}."
            )
        self._indexes = indexes
        return self

    def __call__(self, *inputs):
        """One evaluation: ``clear``, ``update(*inputs)``, ``eval``."""
        self.clear()
        self.update(*inputs)
        return self.eval()

    def clear(self) -> None:
        raise NotImplementedError

    def update(self, *inputs) -> None:
        raise NotImplementedError

    def eval(self):
        raise NotImplementedError

    def _need(self, inputs, n: int) -> None:
        if len(inputs) < n:
            raise ValueError(f"For '{type(self).__name__}.update', give {n} inputs, but got {len(inputs)}.")
