"""Object-detection primitives with kernels of their own: ``NMSWithMask`` (csrc/kernels/cpu/nms_with_mask.cc,
cuda/nms_with_mask.cu, the math of csrc/include/opforge/functors/nms.h). The detection operators built from
other primitives (IOU, ROIAlign, ...) are in opforge/ops/detection.py."""

from __future__ import annotations

from opforge import dtype as mstype
from opforge.dispatch import signature as sig
from opforge.primitives._utils import _Operator
from opforge.primitives.primitive import prim_attr_register
from opforge.primitives.validator import Validator as validator

__all__ = ["NMSWithMask"]


class NMSWithMask(_Operator):
    r"""Non-maximum suppression (MindSpore's ``ops.NMSWithMask``): ``NMSWithMask(iou_threshold=0.5)(bboxes)``,
    ``bboxes`` [N, 5] (x0, y0, x1, y1, score), N >= 1. Returns ``(output_boxes, output_idx, selected_mask)``:
    ``output_boxes`` [N, 5] the boxes sorted by score, highest first (ties keep their input order, NaN scores
    last); ``output_idx`` [N] int32, the positions 0..N-1 in ``output_boxes`` (MindSpore's CPU and GPU kernels
    give these, not the input positions); ``selected_mask`` [N] bool: going down the sorted boxes, box j is
    dropped when a kept box i before it overlaps it with

    .. math:: \frac{I_{ij}}{A_i + A_j - I_{ij}} > iou\_threshold

    (areas ``(x1 - x0)(y1 - y0)``, every operation rounded to the input's dtype). Runs in traces (``jit``,
    GRAPH_MODE) like any primitive; no gradient. dtypes: float16, float32, on CPU and GPU."""

    __mindspore_signature__ = (sig.make_sig("bboxes"),)

    @prim_attr_register
    def __init__(self, iou_threshold=0.5):
        validator.check_value_type("iou_threshold", iou_threshold, [float], self.name)
        self.init_prim_io_names(inputs=["bboxes"], outputs=["selected_boxes", "selected_idx", "selected_mask"])

    def infer_shape(self, bboxes):
        if len(bboxes) != 2 or bboxes[1] not in (5, -1):  # -1: a dim known only at run time
            raise ValueError(f"For '{self.name}', the 'bboxes' must have shape [n, 5], but got {list(bboxes)}.")
        if bboxes[0] == 0:
            raise ValueError(f"For '{self.name}', the 'bboxes' must hold at least one box, but got {list(bboxes)}.")
        n = bboxes[0]
        return [n, 5], [n], [n]

    def infer_dtype(self, bboxes):
        validator.check_tensor_dtype_valid("bboxes", bboxes, (mstype.float16, mstype.float32), self.name)
        return bboxes, mstype.int32, mstype.bool_
