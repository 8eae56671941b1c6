"""MindSpore's module path ``mindspore.train.loss_scale_manager``,
which model-zoo scripts import from: the same objects as ``opforge.amp``."""

from opforge.amp import DynamicLossScaleManager, FixedLossScaleManager, LossScaleManager

__all__ = ["LossScaleManager", "FixedLossScaleManager", "DynamicLossScaleManager"]
