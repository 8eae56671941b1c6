"""bprops of the detection primitives (primitives/detection_ops.py). NMSWithMask: which boxes it keeps is a
choice, not a function of the boxes one could differentiate, so no gradient reaches them (MindSpore's reaches
none either); zeros let it sit inside differentiated code. ROIAlign is linear in its features: their gradient
is ROIAlignGrad, whose own gradient is ROIAlign again (the two are adjoint); the RoIs get none, as in
MindSpore."""

from __future__ import annotations

from opforge.bprop._utils import needs_input_grad, zero_grads, zeros_like
from opforge.bprop.registry import bprop_getters
from opforge.primitives import detection_ops


@bprop_getters.register(detection_ops.NMSWithMask)
def get_bprop_nms_with_mask(self):
    def bprop(bboxes, out, dout):
        return zero_grads(bboxes)

    return bprop


def _roi_align_attrs(prim) -> tuple:
    return prim.pooled_height, prim.pooled_width, prim.spatial_scale, prim.sample_num, prim.roi_end_mode


@bprop_getters.register(detection_ops.ROIAlign)
def get_bprop_roi_align(self):
    features_grad = detection_ops.ROIAlignGrad(*_roi_align_attrs(self))

    def bprop(features, rois, out, dout):
        dx = features_grad(dout, rois, tuple(features.shape)) if needs_input_grad(0) else None
        return dx, zeros_like(rois)

    return bprop


@bprop_getters.register(detection_ops.ROIAlignGrad)
def get_bprop_roi_align_grad(self):
    align = detection_ops.ROIAlign(*_roi_align_attrs(self))

    def bprop(dy, rois, xdiff_shape, out, dout):
        return align(dout, rois) if needs_input_grad(0) else None, zeros_like(rois), None

    return bprop
