"""Sweep record (see op_db.py) of NMSWithMask (primitives/detection_ops.py; kernels csrc/kernels/cpu/nms_with_mask.cc
and cuda/nms_with_mask.cu, the math of functors/nms.h). The boxes have integer corners in [0, 30] and the
thresholds are powers of two, so every IoU is at least 2^-13 away from the threshold and the reference decides
each pair in float64 as the kernels do in float16 and float32 (tests/test_nms_with_mask.py checks other
values against a transcription in the input's dtype)."""

from __future__ import annotations

import numpy as np
from op_db import ErrorInput, OpRecord, Sample, _t

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
    order = sorted(range(len(boxes)), key=lambda i: -boxes[i, 4])  # stable: ties by position
    s = boxes[order]
    area = (s[:, 2] - s[:, 0]) * (s[:, 3] - s[:, 1])
    keep = np.ones(len(s), bool)
    for i in range(len(s)):
        for j in range(i + 1, len(s)):
            w = max(min(s[i, 2], s[j, 2]) - max(s[i, 0], s[j, 0]), 0.0)
            h = max(min(s[i, 3], s[j, 3]) - max(s[i, 1], s[j, 1]), 0.0)
            union = area[i] + area[j] - w * h
            if keep[i] and union > 0 and w * h / union > prim.iou_threshold:
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


RECORDS = [
    OpRecord(
        "NMSWithMask",
        {"iou_threshold=0.5": ops.NMSWithMask, "iou_threshold=0.25": lambda: ops.NMSWithMask(0.25)},
        _samples,
        _reference,
        exact=True,
        error_inputs=_errors,
    ),
]
