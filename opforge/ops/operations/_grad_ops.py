"""MindSpore's ``mindspore.ops.operations._grad_ops`` path (``from mindspore.ops.operations import _grad_ops as
G``, in custom bprops): the gradient primitives, those of opforge/primitives/_grad_ops.py and the ones kept
beside their forward operators (pooling, Conv2DBackpropFilter, ROIAlignGrad, attention)."""

from opforge.primitives._grad_ops import *  # noqa: F403
from opforge.primitives._grad_ops import __all__ as _GRAD_OPS
from opforge.primitives.attention_ops import ScaledDotProductAttentionGrad
from opforge.primitives.conv_ops import (
    AdaptiveAvgPool2DGrad,
    AvgPoolGrad,
    Conv2DBackpropFilter,
    MaxPoolGrad,
    MaxPoolGradGrad,
)
from opforge.primitives.detection_ops import ROIAlignGrad

__all__ = [
    *_GRAD_OPS,
    "AdaptiveAvgPool2DGrad",
    "AvgPoolGrad",
    "Conv2DBackpropFilter",
    "MaxPoolGrad",
    "MaxPoolGradGrad",
    "ROIAlignGrad",
    "ScaledDotProductAttentionGrad",
]
