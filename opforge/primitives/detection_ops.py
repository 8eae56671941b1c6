"""Object-detection primitives with kernels of their own: ``NMSWithMask`` (csrc/kernels/cpu/nms_with_mask.cc,
cuda/nms_with_mask.cu, the math of csrc/include/opforge/functors/nms.h), ``ROIAlign`` and ``ROIAlignGrad``
(csrc/kernels/cpu/roi_align.cc, cuda/roi_align.cu, the math of functors/roi_align.h). The detection operators
built from other primitives (IOU, CropAndResize, ...) are in opforge/ops/detection.py."""

from __future__ import annotations

from opforge import dtype as mstype
from opforge.dispatch import signature as sig
from opforge.primitives._utils import _Operator, same_shape
from opforge.primitives.primitive import prim_attr_register
from opforge.primitives.validator import Validator as validator

__all__ = ["NMSWithMask", "ROIAlign", "ROIAlignGrad"]


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


_ROI_DTYPES = (mstype.float16, mstype.float32, mstype.float64)
_MAX_SAMPLE_NUM = 1024  # kMaxRoiBinSamples of functors/roi_align.h is 1024 x 1024


class _RoiAlignBase(_Operator):
    """The attrs ROIAlign and ROIAlignGrad share, checked as MindSpore checks them."""

    def _init_roi_align(self, pooled_height, pooled_width, spatial_scale, sample_num, roi_end_mode):
        validator.check_value_type("pooled_height", pooled_height, [int], self.name)
        validator.check_value_type("pooled_width", pooled_width, [int], self.name)
        validator.check_value_type("spatial_scale", spatial_scale, [float], self.name)
        validator.check_value_type("sample_num", sample_num, [int], self.name)
        validator.check_value_type("roi_end_mode", roi_end_mode, [int], self.name)
        validator.check_positive_int(pooled_height, "pooled_height", self.name)
        validator.check_positive_int(pooled_width, "pooled_width", self.name)
        validator.check_non_negative_int(sample_num, "sample_num", self.name)
        if sample_num > _MAX_SAMPLE_NUM:  # sample_num^2 samples a bin: more is a hang, not a use
            raise ValueError(
                f"For '{self.name}', the 'sample_num' must be at most {_MAX_SAMPLE_NUM}, but got {sample_num}."
            )
        if roi_end_mode not in (0, 1):
            raise ValueError(f"For '{self.name}', the 'roi_end_mode' must be 0 or 1, but got {roi_end_mode}.")

    def _check_rois(self, rois) -> None:
        if len(rois) != 2 or rois[1] not in (5, -1):
            raise ValueError(f"For '{self.name}', the 'rois' must have shape [r, 5], but got {list(rois)}.")

    def _pooled(self, rois, channels) -> list:
        return [rois[0], channels, self.pooled_height, self.pooled_width]


class ROIAlign(_RoiAlignBase):
    r"""Region-of-interest align (MindSpore's ``ops.ROIAlign``, Mask R-CNN's RoIAlign):
    ``ROIAlign(pooled_height, pooled_width, spatial_scale, sample_num=2, roi_end_mode=1)(features, rois)``,
    ``features`` [N, C, H, W], ``rois`` [R, 5] (image index, x0, y0, x1, y1). Output [R, C, pooled_height,
    pooled_width]: each RoI, scaled by ``spatial_scale`` (its end by ``(x1 + roi_end_mode) * spatial_scale``;
    with ``roi_end_mode`` 0 its size at least 1), is cut into pooled_height x pooled_width bins, and each bin is
    the mean of ``g_h x g_w`` bilinear samples at the centres of a regular grid inside it,

    .. math:: out[r, c, i, j] = \frac{1}{g_h g_w} \sum_{a < g_h, b < g_w}
              \mathrm{bilinear}(features[n_r, c], y_0 + (i + \tfrac{a + 1/2}{g_h}) b_h,
              x_0 + (j + \tfrac{b + 1/2}{g_w}) b_w)

    with bin sizes ``b_h``, ``b_w`` and ``g_h = g_w = sample_num`` (or, when ``sample_num`` is 0,
    ``floor(b_h)`` and ``floor(b_w)`` per RoI; a bin under one pixel then has no samples and gives NaN, as
    MindSpore's 0 / 0). At most 2^20 samples a bin: ``sample_num`` up to 1024, and a RoI whose adaptive grid
    is larger is refused (a KernelError naming it). A sample below -1 or beyond the map contributes 0; below 0
    it reads the first pixel, from the last pixel on that pixel alone. A RoI whose x0 and x1 are both within
    0.001 of 0 gives zeros (MindSpore's kernels skip it). The image index is rounded (``rint(v + 7e-5)``) and
    must lie in [0, N - 1] (a KernelError naming the RoI otherwise). The gradient with respect to ``features``
    is ``ROIAlignGrad``; ``rois`` gets none (as MindSpore).

    dtypes: float16, float32, float64 (both inputs the same) on CPU and GPU; float16 computed in float32."""

    __mindspore_signature__ = (sig.make_sig("features"), sig.make_sig("rois"))

    @prim_attr_register
    def __init__(self, pooled_height, pooled_width, spatial_scale, sample_num=2, roi_end_mode=1):
        self._init_roi_align(pooled_height, pooled_width, spatial_scale, sample_num, roi_end_mode)
        self.init_prim_io_names(inputs=["features", "rois"], outputs=["output"])

    def infer_shape(self, features, rois):
        if len(features) != 4:
            raise ValueError(f"For '{self.name}', the 'features' must be 4-D (N, C, H, W), but got {list(features)}.")
        self._check_rois(rois)
        return self._pooled(rois, features[1])

    def infer_dtype(self, features, rois):
        args = {"features": features, "rois": rois}
        return validator.check_tensors_dtypes_same_and_valid(args, _ROI_DTYPES, self.name)


class ROIAlignGrad(_RoiAlignBase):
    r"""The gradient of ROIAlign with respect to its features (MindSpore's ``G.ROIAlignGrad``):
    ``ROIAlignGrad(pooled_height, pooled_width, spatial_scale, sample_num=2, roi_end_mode=1)(dy, rois,
    xdiff_shape)``, ``dy`` [R, C, pooled_height, pooled_width], ``xdiff_shape`` the features' shape (a constant
    (N, C, H, W)). Each output's gradient, divided by its bin's sample count, goes to the four corners of each of
    its samples with their bilinear weights:

    .. math:: dx[n_r, c, p] = \sum_{r, i, j} \frac{dy[r, c, i, j]}{g_h g_w} \sum_{samples} w_p

    (``roi_end_mode``, which MindSpore's ROIAlignGrad does not take, is ROIAlign's, so the gradient of either
    mode is exact). Its own gradient with respect to ``dy`` is ROIAlign (the two are adjoint). dtypes: float16,
    float32, float64 on CPU and GPU; float16 summed in float32. The CPU sums each plane in RoI order (the same
    bits at any thread count); the GPU adds with atomics (the last bits may change between runs)."""

    __mindspore_signature__ = (sig.make_sig("dy"), sig.make_sig("rois"), sig.make_sig("xdiff_shape"))
    constant_inputs = ((2, "xdiff_shape"),)

    @prim_attr_register
    def __init__(self, pooled_height, pooled_width, spatial_scale, sample_num=2, roi_end_mode=1):
        self._init_roi_align(pooled_height, pooled_width, spatial_scale, sample_num, roi_end_mode)
        self.init_prim_io_names(inputs=["dy", "rois", "xdiff_shape"], outputs=["dx"])

    def infer_shape(self, dy, rois, xdiff_shape):
        if (
            not isinstance(xdiff_shape, (tuple, list))
            or len(xdiff_shape) != 4
            or any(isinstance(d, bool) or not isinstance(d, int) or d < 0 for d in xdiff_shape)
        ):
            raise ValueError(
                f"For '{self.name}', the 'xdiff_shape' must be a tuple of 4 non-negative ints, but got {xdiff_shape!r}."
            )
        self._check_rois(rois)
        want = self._pooled(rois, xdiff_shape[1])
        if not same_shape(dy, want):
            raise ValueError(f"For '{self.name}', the 'dy' must have shape {want}, but got {list(dy)}.")
        return list(xdiff_shape)

    def infer_dtype(self, dy, rois, xdiff_shape):
        return validator.check_tensors_dtypes_same_and_valid({"dy": dy, "rois": rois}, _ROI_DTYPES, self.name)
