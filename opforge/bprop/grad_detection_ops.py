"""bprop of NMSWithMask (primitives/detection_ops.py): which boxes it keeps is a choice, not a function of the
boxes one could differentiate, so no gradient reaches them (MindSpore's reaches none either); zeros let it sit
inside differentiated code."""

from __future__ import annotations

from opforge.bprop._utils import zero_grads
from opforge.bprop.registry import bprop_getters
from opforge.primitives import detection_ops


@bprop_getters.register(detection_ops.NMSWithMask)
def get_bprop_nms_with_mask(self):
    def bprop(bboxes, out, dout):
        return zero_grads(bboxes)

    return bprop
