"""``opforge.train.metrics`` (MindSpore's ``mindspore.train.metrics``): the metrics live in
``opforge.nn.metrics`` (MindSpore 1.x's ``mindspore.nn.metrics``, which ``opforge.nn`` re-exports), so
``opforge.nn`` needs nothing of ``opforge.train``."""

from opforge.nn.metrics import *  # noqa: F403
from opforge.nn.metrics import __all__ as _nn_metrics_all

__all__ = list(_nn_metrics_all)  # with the segmentation metrics
