"""MindSpore's object-detection operators, built from other primitives (no kernel of their own): ``IOU``/``iou``,
``BoundingBoxEncode``/``bounding_box_encode``, ``BoundingBoxDecode``/``bounding_box_decode``,
``CheckValid``/``check_valid`` and ``CropAndResize``/``crop_and_resize`` are element-wise math and gathers
(opforge/ops/sampling.py), so they differentiate, run under ``jit`` and on the CPU and the GPU.
``NMSWithMask`` and ``ROIAlign`` are primitives with kernels of their own (opforge/primitives/detection_ops.py).

The formulas are those of MindSpore's CPU kernels: boxes are (x0, y0, x1, y1) in pixels, a box's width is
``x1 - x0 + 1`` (IOU, BoundingBoxEncode/Decode). float16 inputs are computed in
float32 and cast back.
"""

from __future__ import annotations

import math

import numpy as np

from opforge import dtype as mstype
from opforge.dispatch.trace import tracing
from opforge.ops import functional as F
from opforge.ops.host_op import HostOp
from opforge.ops.sampling import Corner, clamp_index, interpolate
from opforge.primitives.validator import Validator as validator
from opforge.tensor import Tensor

__all__ = [
    "IOU", "iou", "BoundingBoxEncode", "bounding_box_encode", "BoundingBoxDecode", "bounding_box_decode",
    "CheckValid", "check_valid", "CropAndResize", "crop_and_resize",
]  # fmt: skip

_BOX_FLOATS = (mstype.float16, mstype.float32, mstype.float64)


# ---------------------------------------------------------------------------------------------
# Arguments


def _tensor(op: str, arg: str, x) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"For '{op}', the '{arg}' must be a Tensor, but got {type(x).__name__}.")
    return x


def _boxes(op: str, arg: str, x, cols: int = 4, dtypes=_BOX_FLOATS) -> Tensor:
    """A 2-D Tensor [n, cols] of one of ``dtypes``."""
    x = _tensor(op, arg, x)
    validator.check_tensor_dtype_valid(arg, x.dtype, dtypes, op)
    if x.ndim != 2 or x.shape[1] != cols:
        raise ValueError(f"For '{op}', the '{arg}' must have shape [n, {cols}], but got {list(x.shape)}.")
    return x


def _float_tuple(op: str, arg: str, value, n: int = 4) -> tuple:
    """MindSpore's ``means``/``stds``: a tuple of ``n`` numbers (ints are taken as floats)."""
    if not isinstance(value, tuple):
        raise TypeError(f"For '{op}', the '{arg}' must be a tuple, but got {type(value).__name__}.")
    if len(value) != n:
        raise ValueError(f"For '{op}', the '{arg}' must have {n} elements, but got {len(value)}: {value!r}.")
    for v in value:
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise TypeError(f"For '{op}', the '{arg}' must hold floats, but got {value!r}.")
    return tuple(float(v) for v in value)


def _compute(x: Tensor) -> Tensor:
    """float16 is computed in float32 (cast back by the caller)."""
    return F.cast(x, mstype.float32) if x.dtype == mstype.float16 else x


def _back(y: Tensor, dtype) -> Tensor:
    return y if y.dtype == dtype else F.cast(y, dtype)


def _columns(x: Tensor) -> tuple:
    return tuple(F.unstack(x, axis=1))


def _host_checks() -> bool:
    """Whether the data may be read for a check (not while a trace records: its values are not known)."""
    return not tracing()


# ---------------------------------------------------------------------------------------------
# IOU


class IOU(HostOp):
    r"""Intersection over union (MindSpore's ``ops.IOU``) of every ground-truth box with every anchor box:
    ``IOU(mode)(anchor_boxes, gt_boxes)``, boxes (x0, y0, x1, y1), ``anchor_boxes`` [N, 4], ``gt_boxes`` [M, 4];
    the output [M, N] holds at (i, j)

    .. math:: \text{iou} = \frac{I}{A_j + G_i - I + 10^{-10}}, \qquad \text{iof} = \frac{I}{G_i + 10^{-10}}

    with widths and heights ``x1 - x0 + 1`` (so ``A = (x1 - x0 + 1)(y1 - y0 + 1)``) and the intersection ``I``
    the product of ``max(0, min(x1) - max(x0) + 1)`` and the same in y. ``mode`` "iou" (default) or "iof"
    (anything else: KeyError, as MindSpore). dtypes: float16, float32, float64 (both inputs the same); output
    as ``anchor_boxes``. Element-wise math, so it differentiates (MindSpore's has no gradient)."""

    def __init__(self, mode="iou"):
        if mode not in ("iou", "iof"):
            raise KeyError(f"For 'IOU', only 'iou' or 'iof' are supported, but got 'mode': {mode!r}.")
        self.mode = mode

    def __call__(self, anchor_boxes, gt_boxes):
        a, g = _boxes("IOU", "anchor_boxes", anchor_boxes), _boxes("IOU", "gt_boxes", gt_boxes)
        validator.check_tensors_dtypes_same_and_valid(
            {"anchor_boxes": a.dtype, "gt_boxes": g.dtype}, _BOX_FLOATS, "IOU"
        )
        ax0, ay0, ax1, ay1 = (F.expand_dims(c, 0) for c in _columns(_compute(a)))  # [1, N]
        gx0, gy0, gx1, gy1 = (F.expand_dims(c, 1) for c in _columns(_compute(g)))  # [M, 1]
        width = F.maximum(F.minimum(ax1, gx1) - F.maximum(ax0, gx0) + 1.0, 0.0)
        height = F.maximum(F.minimum(ay1, gy1) - F.maximum(ay0, gy0) + 1.0, 0.0)
        overlap = width * height
        area_gt = (gx1 - gx0 + 1.0) * (gy1 - gy0 + 1.0)
        if self.mode == "iou":
            area_anchor = (ax1 - ax0 + 1.0) * (ay1 - ay0 + 1.0)
            out = overlap / (area_anchor + area_gt - overlap + 1e-10)
        else:
            out = overlap / (area_gt + 1e-10)
        return _back(out, a.dtype)


def iou(anchor_boxes, gt_boxes, mode="iou"):
    """MindSpore's ``ops.iou``: ``IOU(mode)(anchor_boxes, gt_boxes)``, [M, N]."""
    return IOU(mode)(anchor_boxes, gt_boxes)


# ---------------------------------------------------------------------------------------------
# BoundingBoxEncode / BoundingBoxDecode


def _centres(boxes: Tensor) -> tuple:
    """(cx, cy, w, h) of boxes (x0, y0, x1, y1), widths ``x1 - x0 + 1``."""
    x0, y0, x1, y1 = _columns(boxes)
    return (x0 + x1) * 0.5, (y0 + y1) * 0.5, x1 - x0 + 1.0, y1 - y0 + 1.0


def _pair_shapes(op: str, first: str, a: Tensor, second: str, b: Tensor) -> None:
    validator.check_tensors_dtypes_same_and_valid({first: a.dtype, second: b.dtype}, _BOX_FLOATS, op)
    if tuple(a.shape) != tuple(b.shape):
        raise ValueError(
            f"For '{op}', the '{first}' and '{second}' must have one shape, but got {list(a.shape)} and "
            f"{list(b.shape)}."
        )


class BoundingBoxEncode(HostOp):
    r"""The offsets of ground-truth boxes from anchor boxes (MindSpore's ``ops.BoundingBoxEncode``):
    ``BoundingBoxEncode(means, stds)(anchor_box, groundtruth_box)``, both [n, 4] (x0, y0, x1, y1). With centres
    and sizes ``(px, py, pw, ph)`` of the anchor and ``(gx, gy, gw, gh)`` of the ground truth (``w = x1 - x0 +
    1``), the output [n, 4] is

    .. math:: \Big(\frac{(g_x - p_x)/p_w - m_0}{s_0}, \frac{(g_y - p_y)/p_h - m_1}{s_1},
              \frac{\ln(g_w/p_w) - m_2}{s_2}, \frac{\ln(g_h/p_h) - m_3}{s_3}\Big).

    ``means`` and ``stds``: tuples of 4 floats (defaults 0 and 1). dtypes: float16, float32, float64;
    element-wise math, so it differentiates."""

    def __init__(self, means=(0.0, 0.0, 0.0, 0.0), stds=(1.0, 1.0, 1.0, 1.0)):
        self.means = _float_tuple("BoundingBoxEncode", "means", means)
        self.stds = _float_tuple("BoundingBoxEncode", "stds", stds)
        if 0.0 in self.stds:
            raise ValueError(f"For 'BoundingBoxEncode', the 'stds' must not hold 0, but got {stds!r}.")

    def __call__(self, anchor_box, groundtruth_box):
        a = _boxes("BoundingBoxEncode", "anchor_box", anchor_box)
        g = _boxes("BoundingBoxEncode", "groundtruth_box", groundtruth_box)
        _pair_shapes("BoundingBoxEncode", "anchor_box", a, "groundtruth_box", g)
        px, py, pw, ph = _centres(_compute(a))
        gx, gy, gw, gh = _centres(_compute(g))
        deltas = ((gx - px) / pw, (gy - py) / ph, F.log(gw / pw), F.log(gh / ph))
        out = F.stack([(d - m) / s for d, m, s in zip(deltas, self.means, self.stds)], 1)
        return _back(out, a.dtype)


def bounding_box_encode(anchor_box, groundtruth_box, means=(0.0, 0.0, 0.0, 0.0), stds=(1.0, 1.0, 1.0, 1.0)):
    """MindSpore's ``ops.bounding_box_encode``: ``BoundingBoxEncode(means, stds)(anchor_box, groundtruth_box)``."""
    return BoundingBoxEncode(means, stds)(anchor_box, groundtruth_box)


class BoundingBoxDecode(HostOp):
    r"""Boxes from anchor boxes and offsets (MindSpore's ``ops.BoundingBoxDecode``, the inverse of
    BoundingBoxEncode): ``BoundingBoxDecode(max_shape, means, stds, wh_ratio_clip)(anchor_box, deltas)``, both
    [n, 4]. With ``d = deltas * stds + means``, ``d_w`` and ``d_h`` clipped to :math:`\pm|\ln(wh\_ratio\_clip)|`,
    and the anchor's centre and size ``(px, py, pw, ph)`` (``pw = x1 - x0 + 1``):

    .. math:: g_x = p_x + p_w d_x,\ g_y = p_y + p_h d_y,\ g_w = p_w e^{d_w},\ g_h = p_h e^{d_h},

    and the output is ``(gx - gw/2 + 1/2, gy - gh/2 + 1/2, gx + gw/2 - 1/2, gy + gh/2 - 1/2)``, its x clipped to
    [0, max_shape[1]] and its y to [0, max_shape[0]]. ``max_shape``: a tuple (height, width); ``means``/``stds``
    tuples of 4 floats; ``wh_ratio_clip`` a float (0.016). dtypes: float16, float32, float64; element-wise
    math, so it differentiates."""

    def __init__(self, max_shape, means=(0.0, 0.0, 0.0, 0.0), stds=(1.0, 1.0, 1.0, 1.0), wh_ratio_clip=0.016):
        name = "BoundingBoxDecode"
        self.means = _float_tuple(name, "means", means)
        self.stds = _float_tuple(name, "stds", stds)
        if not isinstance(max_shape, tuple):
            raise TypeError(f"For '{name}', the 'max_shape' must be a tuple, but got {type(max_shape).__name__}.")
        if len(max_shape) != 2 or any(isinstance(v, bool) or not isinstance(v, int) for v in max_shape):
            raise ValueError(f"For '{name}', the 'max_shape' must be 2 ints (height, width), but got {max_shape!r}.")
        self.max_shape = max_shape
        validator.check_value_type("wh_ratio_clip", wh_ratio_clip, [float], name)
        if wh_ratio_clip <= 0:
            raise ValueError(f"For '{name}', the 'wh_ratio_clip' must be positive, but got {wh_ratio_clip}.")
        self.wh_ratio_clip = wh_ratio_clip

    def __call__(self, anchor_box, deltas):
        a = _boxes("BoundingBoxDecode", "anchor_box", anchor_box)
        d = _boxes("BoundingBoxDecode", "deltas", deltas)
        _pair_shapes("BoundingBoxDecode", "anchor_box", a, "deltas", d)
        px, py, pw, ph = _centres(_compute(a))
        dx, dy, dw, dh = (c * s + m for c, s, m in zip(_columns(_compute(d)), self.stds, self.means))
        limit = abs(math.log(self.wh_ratio_clip))
        dw, dh = F.clip_by_value(dw, -limit, limit), F.clip_by_value(dh, -limit, limit)
        gx, gy = px + pw * dx, py + ph * dy
        half_w, half_h = pw * F.exp(dw) * 0.5, ph * F.exp(dh) * 0.5
        height, width = float(self.max_shape[0]), float(self.max_shape[1])
        corners = (
            F.clip_by_value(gx - half_w + 0.5, 0.0, width),
            F.clip_by_value(gy - half_h + 0.5, 0.0, height),
            F.clip_by_value(gx + half_w - 0.5, 0.0, width),
            F.clip_by_value(gy + half_h - 0.5, 0.0, height),
        )
        return _back(F.stack(corners, 1), a.dtype)


def bounding_box_decode(anchor_box, deltas, max_shape, means=(0.0, 0.0, 0.0, 0.0), stds=(1.0, 1.0, 1.0, 1.0),
                        wh_ratio_clip=0.016):  # fmt: skip
    """MindSpore's ``ops.bounding_box_decode``: ``BoundingBoxDecode(max_shape, means, stds, wh_ratio_clip)(anchor_box,
    deltas)``."""
    return BoundingBoxDecode(max_shape, means, stds, wh_ratio_clip)(anchor_box, deltas)


# ---------------------------------------------------------------------------------------------
# CheckValid


_CHECK_VALID_DTYPES = (mstype.float16, mstype.float32, mstype.float64, mstype.int16, mstype.uint8)


class CheckValid(HostOp):
    r"""Whether each box lies inside the image (MindSpore's ``ops.CheckValid``): ``CheckValid()(bboxes,
    img_metas)``, ``bboxes`` [N, 4] (x0, y0, x1, y1), ``img_metas`` [3] (height, width, ratio); output [N] bool,
    True where ``x0 >= 0``, ``y0 >= 0``, ``x1 <= width * ratio - 1`` and ``y1 <= height * ratio - 1`` (compared
    in float64). dtypes: float16, float32, float64, int16, uint8 (both inputs the same)."""

    def __call__(self, bboxes, img_metas):
        b = _boxes("CheckValid", "bboxes", bboxes, dtypes=_CHECK_VALID_DTYPES)
        m = _tensor("CheckValid", "img_metas", img_metas)
        validator.check_tensors_dtypes_same_and_valid({"bboxes": b.dtype, "img_metas": m.dtype}, _CHECK_VALID_DTYPES,
                                                      "CheckValid")  # fmt: skip
        if tuple(m.shape) != (3,):
            raise ValueError(
                f"For 'CheckValid', the 'img_metas' must have shape [3] (height, width, ratio), but got "
                f"{list(m.shape)}."
            )
        x0, y0, x1, y1 = _columns(F.cast(b, mstype.float64))
        height, width, ratio = F.unstack(F.cast(m, mstype.float64), axis=0)
        inside = (
            F.greater_equal(x0, 0.0),
            F.greater_equal(y0, 0.0),
            F.less_equal(x1, width * ratio - 1.0),
            F.less_equal(y1, height * ratio - 1.0),
        )
        out = inside[0]
        for flag in inside[1:]:
            out = F.logical_and(out, flag)
        return out


def check_valid(bboxes, img_metas):
    """MindSpore's ``ops.check_valid``: ``CheckValid()(bboxes, img_metas)``."""
    return CheckValid()(bboxes, img_metas)


# ---------------------------------------------------------------------------------------------
# CropAndResize


_CROP_IMAGE_DTYPES = (
    mstype.int8, mstype.int16, mstype.int32, mstype.int64, mstype.uint8, mstype.uint16,
    mstype.float16, mstype.float32, mstype.float64,
)  # fmt: skip
_CROP_METHODS = ("bilinear", "nearest", "bilinear_v2")


def _crop_size(crop_size) -> tuple:
    if not isinstance(crop_size, tuple):
        raise TypeError(
            f"For 'CropAndResize', the 'crop_size' must be a tuple of 2 ints, but got {type(crop_size).__name__}."
        )
    if len(crop_size) != 2:
        raise ValueError(f"For 'CropAndResize', the 'crop_size' must have 2 elements, but got {crop_size!r}.")
    if any(isinstance(v, bool) or not isinstance(v, int) for v in crop_size):
        raise TypeError(f"For 'CropAndResize', the 'crop_size' must hold ints, but got {crop_size!r}.")
    if any(v <= 0 for v in crop_size):
        raise ValueError(f"For 'CropAndResize', the 'crop_size' must hold positive ints, but got {crop_size!r}.")
    return crop_size


class CropAndResize(HostOp):
    r"""Crops of an image batch resized to one size (MindSpore's ``ops.CropAndResize``, TensorFlow's
    ``crop_and_resize``): ``CropAndResize(method, extrapolation_value)(x, boxes, box_index, crop_size)``, ``x``
    [B, H, W, D] (NHWC), ``boxes`` [K, 4] float32 normalised (y1, x1, y2, x2), ``box_index`` [K] int32 (the image
    of each box, in [0, B)), ``crop_size`` a tuple (crop_height, crop_width). Output [K, crop_height,
    crop_width, D] float32: output row i samples the image at

    .. math:: y = y_1 (H - 1) + i \frac{(y_2 - y_1)(H - 1)}{crop\_height - 1}

    (``(y1 + y2) (H - 1) / 2`` when crop_height is 1, TensorFlow's rule), the columns likewise; "bilinear"
    interpolates between the 4 neighbouring pixels, "nearest" takes the nearest (halves away from zero), and a
    sample outside the image is ``extrapolation_value``. "bilinear_v2" is MindSpore's other resampling: the
    box spans the pixels ``int(y1 H) .. int(y2 H)`` (h of them, at least 1) and row i samples ``(i + 1/2) h /
    crop_height - 1/2`` of them, clamped into the box, with no extrapolation.

    Gathers and element-wise math (opforge/ops/sampling.py), so it differentiates with respect to ``x`` and, in
    "bilinear" mode, ``boxes`` (MindSpore's CropAndResizeGradImage and GradBoxes; "nearest" has the gather's
    gradient where MindSpore gives 0). dtypes of ``x``: int8, int16, int32, int64, uint8, uint16, float16,
    float32, float64 (computed in float32)."""

    def __init__(self, method="bilinear", extrapolation_value=0.0):
        validator.check_value_type("method", method, [str], "CropAndResize")
        if method not in _CROP_METHODS:
            raise ValueError(f"For 'CropAndResize', the 'method' must be one of {_CROP_METHODS}, but got {method!r}.")
        validator.check_value_type("extrapolation_value", extrapolation_value, [float], "CropAndResize")
        self.method, self.extrapolation_value = method, extrapolation_value

    def __call__(self, x, boxes, box_index, crop_size):
        image = _tensor("CropAndResize", "x", x)
        validator.check_tensor_dtype_valid("x", image.dtype, _CROP_IMAGE_DTYPES, "CropAndResize")
        if image.ndim != 4:
            raise ValueError(f"For 'CropAndResize', the 'x' must be 4-D (B, H, W, D), but got {list(image.shape)}.")
        b = _boxes("CropAndResize", "boxes", boxes, dtypes=(mstype.float32,))
        index = _tensor("CropAndResize", "box_index", box_index)
        validator.check_tensor_dtype_valid("box_index", index.dtype, (mstype.int32, mstype.int64), "CropAndResize")
        if index.ndim != 1 or index.shape[0] != b.shape[0]:
            raise ValueError(
                f"For 'CropAndResize', the 'box_index' must be 1-D with one entry per box ({b.shape[0]}), but got "
                f"shape {list(index.shape)}."
            )
        crop_h, crop_w = _crop_size(crop_size)
        batch, height, width, _ = image.shape
        if _host_checks():
            values = index.asnumpy()
            bad = (values < 0) | (values >= batch)
            if bad.any():
                raise ValueError(
                    f"For 'CropAndResize', the value of box_index must be in [0, {batch}), but got "
                    f"[{int(values[bad][0])}]."
                )
        source = F.cast(image, mstype.float32)
        y1, x1, y2, x2 = _columns(b)
        batch_index = F.reshape(F.cast(index, mstype.int32), (-1, 1, 1))
        grid = (b.shape[0], crop_h, crop_w)
        if self.method == "bilinear_v2":
            rows = _v2_corners(y1, y2, height, crop_h)
            cols = _v2_corners(x1, x2, width, crop_w)
            return self._gather(source, batch_index, rows, cols, grid)
        ty, in_y = _crop_positions(y1, y2, height, crop_h)
        tx, in_x = _crop_positions(x1, x2, width, crop_w)
        if self.method == "nearest":
            rows = (Corner(clamp_index(F.floor(ty + 0.5), height), F.ones_like(ty)),)
            cols = (Corner(clamp_index(F.floor(tx + 0.5), width), F.ones_like(tx)),)
        else:
            rows, cols = _floor_ceil_corners(ty, height), _floor_ceil_corners(tx, width)
        out = self._gather(source, batch_index, rows, cols, grid)
        inside = F.expand_dims(F.logical_and(F.expand_dims(in_y, 2), F.expand_dims(in_x, 1)), -1)
        return F.where(inside, out, F.fill(mstype.float32, (), self.extrapolation_value))

    @staticmethod
    def _gather(source, batch_index, rows, cols, grid) -> Tensor:
        return interpolate(source, batch_index, [
            [Corner(F.expand_dims(k.index, 2), F.expand_dims(k.weight, 2)) for k in rows],
            [Corner(F.expand_dims(k.index, 1), F.expand_dims(k.weight, 1)) for k in cols],
        ], grid)  # fmt: skip


def _crop_positions(start: Tensor, stop: Tensor, size: int, crop: int) -> tuple:
    """The sample positions [K, crop] of CropAndResize along one dim and whether each lies in [0, size - 1]."""
    start, stop = F.expand_dims(start, 1), F.expand_dims(stop, 1)
    if crop > 1:
        steps = Tensor(np.arange(crop, dtype=np.float32)[None, :], device=start.device)
        scale = (stop - start) * float(size - 1) / float(crop - 1)
        pos = start * float(size - 1) + steps * scale
    else:
        pos = (start + stop) * 0.5 * float(size - 1)
    inside = F.logical_and(F.greater_equal(pos, 0.0), F.less_equal(pos, float(size - 1)))
    return pos, inside


def _floor_ceil_corners(pos: Tensor, size: int) -> tuple:
    """CropAndResize's bilinear corners: floor(pos) and ceil(pos), the second weighted ``pos - floor(pos)``."""
    low = F.floor(pos)
    frac = pos - low
    return Corner(clamp_index(low, size), 1.0 - frac), Corner(clamp_index(F.ceil(pos), size), frac)


def _v2_corners(start: Tensor, stop: Tensor, size: int, crop: int) -> tuple:
    """The corners of "bilinear_v2" along one dim (MindSpore's kernel): the box spans pixels ``int(start *
    size)`` on, ``max(int(stop * size) - int(start * size) + 1, 1)`` of them."""
    first = F.trunc(F.expand_dims(start, 1) * float(size))
    span = F.maximum(F.trunc(F.expand_dims(stop, 1) * float(size)) - first + 1.0, 1.0)
    steps = Tensor(np.arange(crop, dtype=np.float32)[None, :], device=start.device)
    point = (steps + 0.5) * (span / float(crop)) - 0.5
    top = F.minimum(F.maximum(F.floor(point), 0.0), span - 1.0)
    bottom = F.minimum(F.maximum(F.ceil(point), 0.0), span - 1.0)
    frac = point - top
    return (
        Corner(clamp_index(F.maximum(first + top, 0.0), size), 1.0 - frac),
        Corner(clamp_index(F.maximum(first + bottom, 0.0), size), frac),
    )


def crop_and_resize(image, boxes, box_indices, crop_size, method="bilinear", extrapolation_value=0.0):
    """MindSpore's ``ops.crop_and_resize``: ``CropAndResize(method, extrapolation_value)(image, boxes,
    box_indices, crop_size)`` (``boxes`` float32, ``box_indices`` int32)."""
    for arg, value in (("image", image), ("boxes", boxes), ("box_indices", box_indices)):
        _tensor("crop_and_resize", arg, value)
    if box_indices.dtype != mstype.int32:
        raise TypeError(f"For 'crop_and_resize', the 'box_indices' must be int32, but got {box_indices.dtype}.")
    return CropAndResize(method, extrapolation_value)(image, boxes, box_indices, crop_size)
