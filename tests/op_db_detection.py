"""Sweep records (see op_db.py) of the detection primitives (primitives/detection_ops.py).

NMSWithMask (kernels csrc/kernels/cpu/nms_with_mask.cc and cuda/nms_with_mask.cu, the math of functors/nms.h).
The boxes have integer corners in [0, 30] and the
thresholds are powers of two, so every IoU is at least 2^-13 away from the threshold and the reference decides
each pair in float64 as the kernels do in float16 and float32 (tests/test_nms_with_mask.py checks other
values against a transcription in the input's dtype).

ROIAlign and ROIAlignGrad (kernels csrc/kernels/cpu/roi_align.cc and cuda/roi_align.cu, the math of
functors/roi_align.h) against ``roi_align_taps``, a transcription of MindSpore's kernel one sample at a time:
the forward sums the taps, the gradient scatters through the same taps."""

from __future__ import annotations

import numpy as np
from op_db import Arg, ErrorInput, OpRecord, Sample, _t

from opforge import dtype as mstype
from opforge import ops

_COUNTS = (1, 2, 5, 64, 65, 100)  # around the GPU's 64-box mask words


def _samples(record, prim, ins, outs, rng):
    for n in _COUNTS:
        corner = rng.integers(0, 20, size=(n, 2))
        size = rng.integers(0, 11, size=(n, 2))  # empty boxes too
        score = rng.choice(np.arange(8) / 8.0, size=(n, 1))  # ties
        boxes = np.concatenate([corner, corner + size, score], 1).astype(ins[0].np_dtype)
        yield Sample((boxes,), desc=f"{n} boxes")


def _reference(prim, boxes):
    # score descending, NaN scores last; stable: ties by position
    order = sorted(range(len(boxes)), key=lambda i: (np.isnan(boxes[i, 4]), -boxes[i, 4]))
    s = boxes[order]
    area = (s[:, 2] - s[:, 0]) * (s[:, 3] - s[:, 1])
    keep = np.ones(len(s), bool)
    with np.errstate(all="ignore"):  # NaN and infinite coordinates: a NaN IoU suppresses nothing
        for i in range(len(s)):
            for j in range(i + 1, len(s)):
                w = np.maximum(np.minimum(s[i, 2], s[j, 2]) - np.maximum(s[i, 0], s[j, 0]), 0.0)
                h = np.maximum(np.minimum(s[i, 3], s[j, 3]) - np.maximum(s[i, 1], s[j, 1]), 0.0)
                if keep[i] and w * h / (area[i] + area[j] - w * h) > prim.iou_threshold:
                    keep[j] = False
    return s, np.arange(len(s), dtype=np.int32), keep


def _errors():
    f = ops.NMSWithMask
    return [
        ErrorInput("threshold-int", lambda: f(1), TypeError, "iou_threshold"),
        ErrorInput("4-columns", lambda: f()(_t((3, 4))), ValueError, "[n, 5]"),
        ErrorInput("1-d", lambda: f()(_t((5,))), ValueError, "[n, 5]"),
        ErrorInput("no-box", lambda: f()(_t((0, 5))), ValueError, "at least one box"),
        ErrorInput("float64", lambda: f()(_t((3, 5), mstype.float64)), TypeError, "bboxes"),
        ErrorInput("int32", lambda: f()(_t((3, 5), mstype.int32)), TypeError, "bboxes"),
    ]


# ---------------------------------------------------------------------------------------------
# ROIAlign / ROIAlignGrad


def _roi_axis(coord, size):
    """(low, high, frac) of a sample along a dim, or None outside [-1, size]."""
    if not -1.0 <= coord <= size:
        return None
    coord = max(coord, 0.0)
    low = int(np.floor(coord))
    if low >= size - 1:
        return size - 1, size - 1, 0.0
    return low, low + 1, coord - low


def roi_align_taps(roi, h, w, ph, pw, scale, sample_num, end_mode):
    """MindSpore's ROIAlign for one RoI (float64): ``(image, taps, count)`` with ``taps[i][j]`` the bin's
    ``[(weight, y, x)]`` (each sample's four corners, weights already divided by the sample count ``count``;
    none where it is 0), or ``(image, None, 0)`` for a RoI the kernels skip."""
    image = int(np.rint(roi[0] + 7e-5))
    if abs(roi[1]) < 0.001 and abs(roi[3]) < 0.001:
        return image, None, 0
    sx, sy = roi[1] * scale, roi[2] * scale
    rw, rh = (roi[3] + end_mode) * scale - sx, (roi[4] + end_mode) * scale - sy
    if end_mode == 0:
        rw, rh = max(rw, 1.0), max(rh, 1.0)
    bh, bw = rh / ph, rw / pw
    gh = sample_num if sample_num > 0 else max(int(np.floor(bh)), 0)
    gw = sample_num if sample_num > 0 else max(int(np.floor(bw)), 0)
    count = gh * gw
    taps = [[[] for _ in range(pw)] for _ in range(ph)]
    for i in range(ph):
        for j in range(pw):
            for a in range(gh):
                y = _roi_axis(sy + i * bh + (a + 0.5) * bh / gh, h)
                for b in range(gw):
                    x = _roi_axis(sx + j * bw + (b + 0.5) * bw / gw, w)
                    if y is None or x is None:
                        continue
                    (yl, yh, fy), (xl, xh, fx) = y, x
                    taps[i][j] += [
                        ((1 - fy) * (1 - fx) / count, yl, xl), ((1 - fy) * fx / count, yl, xh),
                        (fy * (1 - fx) / count, yh, xl), (fy * fx / count, yh, xh),
                    ]  # fmt: skip
    return image, taps, count


def _roi_attrs(prim):
    return prim.pooled_height, prim.pooled_width, prim.spatial_scale, prim.sample_num, prim.roi_end_mode


def roi_align_reference(prim, features, rois):
    _, c, h, w = features.shape
    ph, pw, *rest = _roi_attrs(prim)
    out = np.zeros((len(rois), c, ph, pw))
    for r, roi in enumerate(rois):
        image, taps, count = roi_align_taps(roi, h, w, ph, pw, *rest)
        if taps is None:
            continue
        if count == 0:  # MindSpore's 0 / 0
            out[r] = np.nan
        for i in range(ph):
            for j in range(pw):
                for weight, y, x in taps[i][j]:
                    out[r, :, i, j] += weight * features[image, :, y, x]
    return out


def roi_align_grad_reference(prim, dy, rois, xdiff_shape):
    dx = np.zeros(xdiff_shape)
    _, _, h, w = xdiff_shape
    ph, pw, *rest = _roi_attrs(prim)
    for r, roi in enumerate(rois):
        image, taps, _ = roi_align_taps(roi, h, w, ph, pw, *rest)
        if taps is None:
            continue
        for i in range(ph):
            for j in range(pw):
                for weight, y, x in taps[i][j]:
                    dx[image, :, y, x] += weight * dy[r, :, i, j]
    return dx


def roi_boxes(rng, count, images, extent):
    """[count, 5] RoIs (image index, x0, y0, x1, y1) with corners in [-2, extent], a few past the map."""
    corners = rng.uniform(-2.0, extent, (count, 4))
    boxes = np.concatenate([np.minimum(corners[:, :2], corners[:, 2:]), np.maximum(corners[:, :2], corners[:, 2:])], 1)
    return np.concatenate([rng.integers(0, images, (count, 1)).astype(np.float64), boxes], 1)


# (features shape, RoI count): a RoI count of 0, a skipped RoI, channels to split across threads.
_ROI_CASES = (((1, 1, 5, 6), 3), ((2, 3, 7, 9), 6), ((2, 5, 4, 4), 0), ((2, 40, 11, 13), 33))


def _roi_samples(grad: bool):
    def samples(record, prim, ins, outs, rng):
        ph, pw = prim.pooled_height, prim.pooled_width
        extent = max(12.0, 16.0 / prim.spatial_scale)
        for shape, count in _ROI_CASES:
            rois = roi_boxes(rng, count, shape[0], extent)
            if count > 1:
                rois[1, [1, 3]] = 0.0  # MindSpore's kernels skip such a RoI (zeros)
            rois = rois.astype(ins[1].np_dtype)
            desc = f"features{list(shape)} {count} RoIs"
            if grad:
                dy = rng.uniform(-2.0, 2.0, (count, shape[1], ph, pw)).astype(ins[0].np_dtype)
                yield Sample((dy, rois, shape), desc=desc)
            else:
                yield Sample((rng.uniform(-3.0, 3.0, shape).astype(ins[0].np_dtype), rois), desc=desc)

    return samples


_ROI_VARIANTS = {
    "2x3 scale=0.5 sample_num=2": (2, 3, 0.5, 2, 1),
    "3x2 scale=1.0 sample_num=0 roi_end_mode=0": (3, 2, 1.0, 0, 0),
    "1x1 scale=2.0 sample_num=3": (1, 1, 2.0, 3, 1),
}
# New RoIs of a shape (vmap's batch elements): image 0, valid for any batch of features.
_ROI_ARG = Arg(make=lambda shape, dtype, rng: roi_boxes(rng, shape[0], 1, 12.0))
# The kernels place the samples in float32 for float16 and float32, the reference in float64.
_ROI_TOLS = {"Float16": (4e-3, 4e-3), "Float32": (1e-5, 1e-5)}


def _roi_errors(op):
    f = getattr(ops, op)

    def call(features_shape, rois_shape, dtype=mstype.float32, rois_dtype=None):
        if op == "ROIAlign":
            return f(2, 2, 1.0)(_t(features_shape, dtype), _t(rois_shape, rois_dtype or dtype, 0))
        return f(2, 2, 1.0)(_t((rois_shape[0], 1, 2, 2), dtype), _t(rois_shape, rois_dtype or dtype, 0), features_shape)

    errors = [
        ErrorInput("scale-int", lambda: f(2, 2, 1), TypeError, "spatial_scale"),
        ErrorInput("pooled-0", lambda: f(0, 2, 1.0), ValueError, "pooled_height"),
        ErrorInput("sample-negative", lambda: f(2, 2, 1.0, -1), ValueError, "sample_num"),
        ErrorInput("end-mode-2", lambda: f(2, 2, 1.0, 2, 2), ValueError, "roi_end_mode"),
        ErrorInput("rois-4-columns", lambda: call((1, 1, 4, 4), (3, 4)), ValueError, "[r, 5]"),
        ErrorInput("int32", lambda: call((1, 1, 4, 4), (3, 5), mstype.int32), TypeError, "Int32"),
        ErrorInput("dtypes-differ", lambda: call((1, 1, 4, 4), (3, 5), rois_dtype=mstype.float16), TypeError, "rois"),
    ]
    if op == "ROIAlign":
        errors.append(ErrorInput("features-3d", lambda: call((1, 4, 4), (3, 5)), ValueError, "4-D"))
    else:
        errors.append(ErrorInput("shape-3", lambda: call((1, 4, 4), (3, 5)), ValueError, "xdiff_shape"))
    return errors


RECORDS = [
    OpRecord(
        "ROIAlign",
        {name: (lambda a=a: ops.ROIAlign(*a)) for name, a in _ROI_VARIANTS.items()},
        _roi_samples(grad=False),
        roi_align_reference,
        args=(Arg(), _ROI_ARG),
        tols=_ROI_TOLS,
        error_inputs=lambda: _roi_errors("ROIAlign"),
    ),
    OpRecord(
        "ROIAlignGrad",
        {name: (lambda a=a: ops.ROIAlignGrad(*a)) for name, a in _ROI_VARIANTS.items()},
        _roi_samples(grad=True),
        roi_align_grad_reference,
        args=(Arg(), _ROI_ARG),
        tols=_ROI_TOLS,
        error_inputs=lambda: _roi_errors("ROIAlignGrad"),
    ),
    OpRecord(
        "NMSWithMask",
        {"iou_threshold=0.5": ops.NMSWithMask, "iou_threshold=0.25": lambda: ops.NMSWithMask(0.25)},
        _samples,
        _reference,
        exact=True,
        error_inputs=_errors,
    ),
]
