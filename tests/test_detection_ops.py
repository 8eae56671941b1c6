"""MindSpore's detection operators (opforge/ops/detection.py): IOU, BoundingBoxEncode/Decode, CheckValid,
NMSWithMask, ROIAlign (its reference in op_db_detection.py) and CropAndResize against loop-by-loop NumPy
transcriptions of MindSpore's CPU kernels,
MindSpore's documented examples, gradients against central differences, jit against eager, and bad inputs."""

import numpy as np
import op_db  # noqa: F401  (op_db imports op_db_detection at its end)
import pytest
from op_db_detection import roi_align_reference

import opforge
from opforge import Tensor, nn, ops
from opforge import dtype as ms


def _rng(seed=0):
    return np.random.default_rng(seed)


def _boxes(rng, n, low=0.0, high=20.0):
    xy = rng.uniform(low, high, (n, 2))
    wh = rng.uniform(1.0, 10.0, (n, 2))
    return np.concatenate([xy, xy + wh], 1)


def _numeric_grad(f, arrays, i, eps=1e-6):
    """d sum(f(*arrays)) / d arrays[i] by central differences."""
    x = arrays[i]
    grad = np.zeros_like(x)
    for idx in np.ndindex(x.shape):
        plus = [a.copy() for a in arrays]
        minus = [a.copy() for a in arrays]
        plus[i][idx] += eps
        minus[i][idx] -= eps
        hi = f(*(Tensor(a) for a in plus)).asnumpy().astype(np.float64).sum()
        lo = f(*(Tensor(a) for a in minus)).asnumpy().astype(np.float64).sum()
        grad[idx] = (hi - lo) / (2 * eps)
    return grad


def _check_grad(f, arrays, positions, eps=1e-6, rtol=1e-5, atol=1e-6):
    got = opforge.grad(lambda *xs: f(*xs).sum(), grad_position=positions)(*(Tensor(a) for a in arrays))
    got = got if isinstance(got, tuple) else (got,)
    for g, i in zip(got, positions):
        np.testing.assert_allclose(g.asnumpy(), _numeric_grad(f, arrays, i, eps), rtol=rtol, atol=atol)


# -- IOU ------------------------------------------------------------------------------------------------------


def _iou_ref(anchors, gts, mode):
    out = np.zeros((len(gts), len(anchors)))
    for i, g in enumerate(gts):
        for j, a in enumerate(anchors):
            w = max(0.0, min(a[2], g[2]) - max(a[0], g[0]) + 1)
            h = max(0.0, min(a[3], g[3]) - max(a[1], g[1]) + 1)
            area_a = (a[2] - a[0] + 1) * (a[3] - a[1] + 1)
            area_g = (g[2] - g[0] + 1) * (g[3] - g[1] + 1)
            out[i, j] = w * h / (area_a + area_g - w * h + 1e-10) if mode == "iou" else w * h / (area_g + 1e-10)
    return out


@pytest.mark.parametrize("mode", ["iou", "iof"])
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_iou_matches_numpy(mode, dtype):
    rng = _rng(1)
    anchors, gts = _boxes(rng, 5).astype(dtype), _boxes(rng, 3).astype(dtype)
    for got in (ops.IOU(mode)(Tensor(anchors), Tensor(gts)), ops.iou(Tensor(anchors), Tensor(gts), mode)):
        assert got.shape == (3, 5) and got.dtype == ms.to_dtype(dtype)
        tol = 2e-3 if dtype == np.float16 else 1e-6
        np.testing.assert_allclose(got.asnumpy(), _iou_ref(anchors.astype(np.float64), gts.astype(np.float64), mode),
                                   rtol=tol, atol=tol)  # fmt: skip
    assert ops.IOU().mode == "iou"


def test_iou_gradient_and_jit():
    rng = _rng(2)
    anchors, gts = _boxes(rng, 4), _boxes(rng, 3, 3.0, 12.0)
    _check_grad(lambda a, g: ops.iou(a, g), [anchors, gts], (0, 1))
    eager = ops.iou(Tensor(anchors), Tensor(gts), "iof")
    np.testing.assert_allclose(opforge.jit(lambda a, g: ops.iou(a, g, "iof"))(Tensor(anchors), Tensor(gts)).asnumpy(),
                               eager.asnumpy())  # fmt: skip


def test_iou_bad_inputs():
    box = Tensor(np.zeros((2, 4), np.float32))
    with pytest.raises(KeyError, match="iou"):
        ops.IOU("giou")
    with pytest.raises(TypeError, match="'gt_boxes'"):
        ops.iou(box, np.zeros((2, 4)))
    with pytest.raises(ValueError, match=r"'anchor_boxes'.*\[n, 4\]"):
        ops.iou(Tensor(np.zeros((2, 5), np.float32)), box)
    with pytest.raises(TypeError, match="IOU"):
        ops.iou(box, Tensor(np.zeros((2, 4), np.int32)))


# -- BoundingBoxEncode / Decode ---------------------------------------------------------------------------------


def _encode_ref(anchors, gts, means, stds):
    px, py = (anchors[:, 0] + anchors[:, 2]) / 2, (anchors[:, 1] + anchors[:, 3]) / 2
    pw, ph = anchors[:, 2] - anchors[:, 0] + 1, anchors[:, 3] - anchors[:, 1] + 1
    gx, gy = (gts[:, 0] + gts[:, 2]) / 2, (gts[:, 1] + gts[:, 3]) / 2
    gw, gh = gts[:, 2] - gts[:, 0] + 1, gts[:, 3] - gts[:, 1] + 1
    d = np.stack([(gx - px) / pw, (gy - py) / ph, np.log(gw / pw), np.log(gh / ph)], 1)
    return (d - np.array(means)) / np.array(stds)


def _decode_ref(anchors, deltas, max_shape, means, stds, clip):
    d = deltas * np.array(stds) + np.array(means)
    limit = abs(np.log(clip))
    dw, dh = np.clip(d[:, 2], -limit, limit), np.clip(d[:, 3], -limit, limit)
    px, py = (anchors[:, 0] + anchors[:, 2]) / 2, (anchors[:, 1] + anchors[:, 3]) / 2
    pw, ph = anchors[:, 2] - anchors[:, 0] + 1, anchors[:, 3] - anchors[:, 1] + 1
    gx, gy, gw, gh = px + pw * d[:, 0], py + ph * d[:, 1], pw * np.exp(dw), ph * np.exp(dh)
    out = np.stack([gx - gw / 2 + 0.5, gy - gh / 2 + 0.5, gx + gw / 2 - 0.5, gy + gh / 2 - 0.5], 1)
    out[:, 0::2] = np.clip(out[:, 0::2], 0, max_shape[1])
    out[:, 1::2] = np.clip(out[:, 1::2], 0, max_shape[0])
    return out


def test_bounding_box_encode_decode_match_numpy_and_docs():
    a = Tensor(np.array([[2, 2, 2, 3], [2, 2, 2, 3]], np.float32))
    g = Tensor(np.array([[1, 2, 1, 4], [1, 2, 1, 4]], np.float32))
    np.testing.assert_allclose(ops.bounding_box_encode(a, g).asnumpy(), [[-1, 0.25, 0, 0.40546513]] * 2, rtol=1e-6)
    a = Tensor(np.array([[4, 1, 2, 1], [2, 2, 2, 3]], np.float32))
    d = Tensor(np.array([[3, 1, 2, 2], [1, 2, 1, 4]], np.float32))
    want = [[4.194528, 0.0, 0.0, 5.194528], [2.1408591, 0.0, 3.8591409, 60.598152]]
    np.testing.assert_allclose(ops.bounding_box_decode(a, d, max_shape=(768, 1280)).asnumpy(), want, rtol=1e-6)
    rng = _rng(3)
    anchors, gts = _boxes(rng, 6), _boxes(rng, 6)
    means, stds = (0.1, -0.2, 0.0, 0.3), (0.5, 2.0, 1.0, 0.25)
    enc = ops.BoundingBoxEncode(means, stds)(Tensor(anchors), Tensor(gts))
    np.testing.assert_allclose(enc.asnumpy(), _encode_ref(anchors, gts, means, stds), rtol=1e-12)
    deltas = rng.standard_normal((6, 4)) * 3
    dec = ops.BoundingBoxDecode((30, 25), means, stds, 0.05)(Tensor(anchors), Tensor(deltas))
    np.testing.assert_allclose(dec.asnumpy(), _decode_ref(anchors, deltas, (30, 25), means, stds, 0.05), rtol=1e-12)
    # decode inverts encode inside the image
    back = ops.bounding_box_decode(Tensor(anchors), enc, (100, 100), means, stds, 1e-6)
    np.testing.assert_allclose(back.asnumpy(), gts, rtol=1e-9, atol=1e-9)
    half = ops.bounding_box_encode(Tensor(anchors.astype(np.float16)), Tensor(gts.astype(np.float16)))
    assert half.dtype == ms.float16


def test_bounding_box_gradients_and_jit():
    rng = _rng(4)
    anchors, gts = _boxes(rng, 3), _boxes(rng, 3)
    means, stds = (0.1, -0.2, 0.0, 0.3), (0.5, 2.0, 1.0, 0.25)
    _check_grad(lambda a, g: ops.bounding_box_encode(a, g, means, stds), [anchors, gts], (0, 1))
    deltas = rng.standard_normal((3, 4)) * 0.5
    _check_grad(lambda a, d: ops.bounding_box_decode(a, d, (100, 100), means, stds), [anchors, deltas], (0, 1))
    fn = opforge.jit(lambda a, d: ops.bounding_box_decode(a, d, (30, 30)))
    eager = ops.bounding_box_decode(Tensor(anchors), Tensor(deltas), (30, 30))
    np.testing.assert_allclose(fn(Tensor(anchors), Tensor(deltas)).asnumpy(), eager.asnumpy())


def test_bounding_box_bad_inputs():
    box = Tensor(np.zeros((2, 4), np.float32))
    with pytest.raises(TypeError, match="'means' must be a tuple"):
        ops.BoundingBoxEncode(means=[0.0] * 4)
    with pytest.raises(ValueError, match="'stds' must have 4"):
        ops.BoundingBoxEncode(stds=(1.0, 1.0))
    with pytest.raises(TypeError, match="'max_shape' must be a tuple"):
        ops.BoundingBoxDecode([10, 10])
    with pytest.raises(TypeError, match="'wh_ratio_clip'"):
        ops.BoundingBoxDecode((10, 10), wh_ratio_clip=1)
    with pytest.raises(ValueError, match="one shape"):
        ops.bounding_box_encode(box, Tensor(np.zeros((3, 4), np.float32)))
    with pytest.raises(TypeError, match="'deltas'"):
        ops.bounding_box_decode(box, "deltas", (10, 10))


# -- CheckValid ---------------------------------------------------------------------------------------------------


def test_check_valid_matches_numpy_and_docs():
    bboxes = Tensor(np.linspace(0, 6, 12).reshape(3, 4), ms.float32)
    assert ops.check_valid(bboxes, Tensor(np.array([2, 1, 3]), ms.float32)).asnumpy().tolist() == [True, False, False]
    rng = _rng(5)
    for dtype in (np.float32, np.float16, np.int16, np.uint8):
        boxes = rng.integers(0, 40, (20, 4)).astype(dtype)
        boxes[:3, 0] = 0
        metas = np.array([20, 30, 1.5]).astype(dtype)
        h, w, r = metas.astype(np.float64)
        want = (boxes[:, 0] >= 0) & (boxes[:, 1] >= 0) & (boxes[:, 2] <= w * r - 1) & (boxes[:, 3] <= h * r - 1)
        got = ops.CheckValid()(Tensor(boxes), Tensor(metas))
        assert got.dtype == ms.bool_
        np.testing.assert_array_equal(got.asnumpy(), want)
    with pytest.raises(ValueError, match=r"'img_metas'.*\[3\]"):
        ops.check_valid(bboxes, Tensor(np.ones(2, np.float32)))
    with pytest.raises(TypeError, match="CheckValid"):
        ops.check_valid(bboxes, Tensor(np.ones(3, np.float16)))


# -- NMSWithMask ---------------------------------------------------------------------------------------------------


def _nms_ref(boxes, threshold):
    order = sorted(range(len(boxes)), key=lambda i: -boxes[i, 4])  # stable
    s = boxes[order]
    keep = [True] * len(s)
    for i in range(len(s)):
        if not keep[i]:
            continue
        for j in range(i + 1, len(s)):
            w = max(min(s[i, 2], s[j, 2]) - max(s[i, 0], s[j, 0]), 0)
            h = max(min(s[i, 3], s[j, 3]) - max(s[i, 1], s[j, 1]), 0)
            a_i = (s[i, 2] - s[i, 0]) * (s[i, 3] - s[i, 1])
            a_j = (s[j, 2] - s[j, 0]) * (s[j, 3] - s[j, 1])
            if w * h / (a_i + a_j - w * h) > threshold:
                keep[j] = False
    return s, np.array(keep)


def test_nms_with_mask_docs_example_and_numpy():
    bbox = np.array([[100.0, 100.0, 50.0, 68.0, 0.63], [150.0, 75.0, 165.0, 115.0, 0.55],
                     [12.0, 190.0, 288.0, 200.0, 0.9], [28.0, 130.0, 106.0, 172.0, 0.3]])  # fmt: skip
    bbox[:, 2] += bbox[:, 0]
    bbox[:, 3] += bbox[:, 1]
    boxes, idx, mask = ops.NMSWithMask(0.1)(Tensor(bbox, ms.float32))
    assert idx.asnumpy()[mask.asnumpy()].tolist() == [0, 1, 2]
    assert boxes.dtype == ms.float32 and idx.dtype == ms.int32 and mask.dtype == ms.bool_
    np.testing.assert_allclose(boxes.asnumpy()[:, 4], [0.9, 0.63, 0.55, 0.3], rtol=1e-6)
    rng = _rng(6)
    for threshold in (0.1, 0.3, 0.7):
        b = np.concatenate([_boxes(rng, 30, 0, 15), rng.uniform(0, 1, (30, 1))], 1).astype(np.float32)
        b[5, 4] = b[9, 4]  # a tie keeps the input order
        boxes, idx, mask = ops.NMSWithMask(threshold)(Tensor(b))
        want_boxes, want_keep = _nms_ref(b.astype(np.float64), threshold)
        np.testing.assert_array_equal(boxes.asnumpy(), want_boxes.astype(np.float32))
        np.testing.assert_array_equal(idx.asnumpy(), np.arange(30))
        np.testing.assert_array_equal(mask.asnumpy(), want_keep)


def test_nms_with_mask_bad_inputs():
    with pytest.raises(TypeError, match="iou_threshold"):
        ops.NMSWithMask(1)
    with pytest.raises(ValueError, match=r"\[n, 5\]"):
        ops.NMSWithMask()(Tensor(np.zeros((3, 4), np.float32)))
    with pytest.raises(TypeError, match="NMSWithMask"):
        ops.NMSWithMask()(Tensor(np.zeros((3, 5), np.float64)))
    with pytest.raises(ValueError, match="at least one box"):
        ops.NMSWithMask()(Tensor(np.zeros((0, 5), np.float32)))


# -- ROIAlign ---------------------------------------------------------------------------------------------------------


def _rois(rng, count, batch, extent):
    boxes = _boxes(rng, count, -2.0, extent)
    first = rng.integers(0, batch, (count, 1)).astype(np.float64)
    return np.concatenate([first, boxes], 1)


def test_roi_align_docs_example():
    features = Tensor(np.array([[[[1.0, 2.0], [3.0, 4.0]]]]), ms.float32)
    rois = Tensor(np.array([[0, 0.2, 0.3, 0.2, 0.3]]), ms.float32)
    out = ops.ROIAlign(2, 2, 0.5, 2)(features, rois)
    np.testing.assert_allclose(out.asnumpy(), [[[[1.775, 2.025], [2.275, 2.525]]]], rtol=1e-6)


@pytest.mark.parametrize(
    "sample_num, end_mode, scale", [(2, 1, 0.5), (1, 0, 1.0), (0, 1, 0.25), (0, 0, 2.0), (3, 0, 0.7)]
)
def test_roi_align_matches_numpy(sample_num, end_mode, scale):
    rng = _rng(7)
    x = rng.standard_normal((2, 3, 7, 9))
    rois = _rois(rng, 5, 2, 8.0 / scale)
    rois[4, [1, 3]] = 0.0  # MindSpore's kernel skips such a RoI (zeros)
    op = ops.ROIAlign(2, 3, scale, sample_num, end_mode)
    got = op(Tensor(x), Tensor(rois))
    want = roi_align_reference(op, x, rois)
    assert got.shape == (5, 3, 2, 3)
    np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-10, atol=1e-12)
    half = ops.ROIAlign(2, 3, scale, sample_num, end_mode)(
        Tensor(x.astype(np.float16)), Tensor(rois.astype(np.float16))
    )
    assert half.dtype == ms.float16


def test_roi_align_gradient_reaches_features_only_and_jit():
    rng = _rng(8)
    x, rois = rng.standard_normal((2, 2, 5, 6)), _rois(rng, 3, 2, 5.0)
    op = ops.ROIAlign(2, 2, 1.0, 2)
    _check_grad(lambda f, r: op(f, r), [x, rois], (0,))
    d_rois = opforge.grad(lambda f, r: op(f, r).sum(), grad_position=1)(Tensor(x), Tensor(rois))
    assert not d_rois.asnumpy().any()
    np.testing.assert_allclose(
        opforge.jit(op)(Tensor(x), Tensor(rois)).asnumpy(), op(Tensor(x), Tensor(rois)).asnumpy()
    )


def test_roi_align_bad_inputs():
    x = Tensor(np.zeros((1, 1, 4, 4), np.float32))
    with pytest.raises(TypeError, match="spatial_scale"):
        ops.ROIAlign(2, 2, 1)
    with pytest.raises(ValueError, match="roi_end_mode"):
        ops.ROIAlign(2, 2, 1.0, 2, 2)
    with pytest.raises(ValueError, match="pooled_height"):
        ops.ROIAlign(0, 2, 1.0)
    with pytest.raises(opforge.KernelError, match=r"ROIAlign.*image_index.*\[0, 0\], but got 1 in RoI 0"):
        ops.ROIAlign(2, 2, 1.0)(x, Tensor(np.array([[1, 0, 0, 2, 2]], np.float32)))
    with pytest.raises(ValueError, match=r"rois.*\[r, 5\]"):
        ops.ROIAlign(2, 2, 1.0)(x, Tensor(np.zeros((1, 4), np.float32)))
    with pytest.raises(ValueError, match="4-D"):
        ops.ROIAlign(2, 2, 1.0)(Tensor(np.zeros((4, 4), np.float32)), Tensor(np.zeros((1, 5), np.float32)))


@pytest.mark.parametrize("device", ["CPU", "GPU"])
def test_roi_align_kernels_traced_and_differentiated(device):
    """The kernels (CPU and GPU) eagerly, in a trace and under grad, against the reference; ROIAlignGrad is
    ROIAlign's adjoint (the grad sweep checks both against finite differences, second order included)."""
    rng = _rng(9)
    x, rois = rng.standard_normal((2, 4, 9, 11)), _rois(rng, 7, 2, 10.0)
    op = ops.ROIAlign(3, 2, 0.8, 0)
    want = roi_align_reference(op, x, rois)
    features, boxes = Tensor(x, device=device), Tensor(rois, device=device)
    np.testing.assert_allclose(op(features, boxes).asnumpy(), want, rtol=1e-10, atol=1e-12)
    traced = opforge.jit(op)
    for _ in range(2):  # the recording call and a replay
        np.testing.assert_allclose(traced(features, boxes).asnumpy(), want, rtol=1e-10, atol=1e-12)
    dy = rng.standard_normal(want.shape)
    dx = ops.ROIAlignGrad(3, 2, 0.8, 0)(Tensor(dy, device=device), boxes, x.shape).asnumpy()
    # adjoint: <ROIAlign(x), dy> = <x, ROIAlignGrad(dy)>; a NaN output (a bin without samples) adds nothing
    finite = np.isfinite(want)
    np.testing.assert_allclose((want * dy)[finite].sum(), (x * dx).sum(), rtol=1e-9)
    square = opforge.grad(lambda f: (op(f, boxes) ** 2).sum())
    np.testing.assert_allclose(
        square(features).asnumpy(),
        2 * ops.ROIAlignGrad(3, 2, 0.8, 0)(Tensor(np.nan_to_num(want), device=device), boxes, x.shape).asnumpy(),
        rtol=1e-10,
    )


def test_roi_align_grad_has_the_same_bits_at_any_thread_count():
    rng = _rng(10)
    rois = _rois(rng, 40, 2, 30.0)
    dy = Tensor(rng.standard_normal((40, 16, 7, 7)).astype(np.float32))
    op, boxes = ops.ROIAlignGrad(7, 7, 0.5), Tensor(rois.astype(np.float32))
    before = opforge.get_context("num_threads")
    try:
        results = []
        for threads in (1, 2, 3):
            opforge.set_context(num_threads=threads)
            results.append(op(dy, boxes, (2, 16, 16, 16)).asnumpy())
    finally:
        opforge.set_context(num_threads=before)
    for r in results[1:]:
        np.testing.assert_array_equal(r, results[0])


@pytest.mark.parametrize("device", ["CPU", "GPU"])
def test_roi_align_image_index_out_of_range_names_the_roi(device):
    features = Tensor(np.zeros((2, 1, 4, 4), np.float32), device=device)
    rois = np.array([[1, 0, 0, 2, 2], [2.4, 1, 1, 3, 3]], np.float32)
    with pytest.raises(opforge.KernelError, match=r"'ROIAlign'.*\[0, 1\], but got 2.4 in RoI 1"):
        ops.ROIAlign(2, 2, 1.0)(features, Tensor(rois, device=device))
    dy = Tensor(np.zeros((2, 1, 2, 2), np.float32), device=device)
    with pytest.raises(opforge.KernelError, match=r"'ROIAlignGrad'.*in RoI 1"):
        ops.ROIAlignGrad(2, 2, 1.0)(dy, Tensor(rois, device=device), (2, 1, 4, 4))


@pytest.mark.parametrize("mode", [opforge.GRAPH_MODE, opforge.PYNATIVE_MODE])
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_roi_align_grad_as_mindspore_calls_it(mode, dtype):
    """``G.ROIAlignGrad(3, 3, 0.25, 2)(dy, rois, Shape()(x))`` in a Cell, MindSpore's import path and call: a RoI
    over the whole 6 x 6 map spreads each column of dy over two columns of dx (MindSpore's values)."""
    from opforge.ops.operations import _grad_ops as G

    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.shape = ops.Shape()
            self.grad = G.ROIAlignGrad(3, 3, 0.25, 2)

        def construct(self, dy, rois, x):
            return self.grad(dy, rois, self.shape(x))

    before = opforge.get_context("mode")
    opforge.set_context(mode=mode)
    try:
        rois = Tensor(np.array([[0, -2.0, -2.0, 21.0, 21.0]], dtype))
        dy = Tensor(np.tile(np.array([0.1, 0.2, 0.3], dtype), (1, 1, 3, 1)))
        dx = Net()(dy, rois, Tensor(np.zeros((1, 1, 6, 6), dtype))).asnumpy()
    finally:
        opforge.set_context(mode=before)
    want = np.tile(np.array([0.025, 0.025, 0.05, 0.05, 0.075, 0.075]), (1, 1, 6, 1))
    np.testing.assert_allclose(dx, want, rtol=2e-3 if dtype == np.float16 else 1e-6)


@pytest.mark.parametrize("device", ["CPU", "GPU"])
def test_roi_align_refuses_grids_that_would_never_end(device):
    """At most 2^20 samples a bin: a sample_num above 1024 is refused when the primitive is made; with
    sample_num 0 a RoI whose floor(bin size) grid is larger (a huge or infinite box) is refused naming it, where
    it would have run for hours; a NaN box has no samples (NaN, as MindSpore's 0 / 0)."""
    with pytest.raises(ValueError, match=r"'ROIAlign'.*'sample_num' must be at most 1024, but got 1025"):
        ops.ROIAlign(2, 2, 1.0, 1025)
    features = Tensor(np.ones((1, 1, 4, 4), np.float32), device=device)
    for box in ([0, 0, 0, 3e3, 3e3], [0, 0, 0, np.inf, 2]):
        rois = Tensor(np.array([[0, 0, 0, 2, 2], box], np.float32), device=device)
        with pytest.raises(opforge.KernelError, match=r"'ROIAlign'.*RoI 1 has bins of"):
            ops.ROIAlign(2, 2, 1.0, 0)(features, rois)
    nan = Tensor(np.array([[0, 0, np.nan, 3, 3]], np.float32), device=device)
    assert np.isnan(ops.ROIAlign(2, 2, 1.0, 0)(features, nan).asnumpy()).all()
    big = Tensor(np.array([[0, 0, 0, 2000, 2000]], np.float32), device=device)  # 1000 x 1000 samples a bin: taken
    assert ops.ROIAlign(2, 2, 1.0, 0)(features, big).shape == (1, 1, 2, 2)


# -- CropAndResize ----------------------------------------------------------------------------------------------------


def _crop_ref(image, boxes, index, crop, method, extrapolation):
    """TensorFlow's / MindSpore's crop_and_resize, one output element at a time (float64)."""
    _, h, w, d = image.shape
    ch, cw = crop
    out = np.zeros((len(boxes), ch, cw, d))
    for k, (y1, x1, y2, x2) in enumerate(boxes.astype(np.float64)):
        img = image[index[k]].astype(np.float64)
        for i in range(ch):
            ty = y1 * (h - 1) + i * (y2 - y1) * (h - 1) / (ch - 1) if ch > 1 else 0.5 * (y1 + y2) * (h - 1)
            for j in range(cw):
                tx = x1 * (w - 1) + j * (x2 - x1) * (w - 1) / (cw - 1) if cw > 1 else 0.5 * (x1 + x2) * (w - 1)
                if method == "bilinear_v2":
                    out[k, i, j] = _v2_ref(img, (y1, x1, y2, x2), i, j, crop)
                elif ty < 0 or ty > h - 1 or tx < 0 or tx > w - 1:
                    out[k, i, j] = extrapolation
                elif method == "nearest":
                    out[k, i, j] = img[int(np.floor(ty + 0.5)), int(np.floor(tx + 0.5))]
                else:
                    t, b, left, r = int(np.floor(ty)), int(np.ceil(ty)), int(np.floor(tx)), int(np.ceil(tx))
                    top = img[t, left] + (img[t, r] - img[t, left]) * (tx - left)
                    bottom = img[b, left] + (img[b, r] - img[b, left]) * (tx - left)
                    out[k, i, j] = top + (bottom - top) * (ty - t)
    return out


def _v2_ref(img, box, i, j, crop):
    h, w = img.shape[:2]
    y1, x1, y2, x2 = box
    y1h, x1w, y2h, x2w = int(y1 * h), int(x1 * w), int(y2 * h), int(x2 * w)
    bw, bh = max(x2w - x1w + 1, 1), max(y2h - y1h + 1, 1)
    yp = (i + 0.5) * (bh / crop[0]) - 0.5
    xp = (j + 0.5) * (bw / crop[1]) - 0.5
    top, bottom = min(max(0, int(np.floor(yp))), bh - 1), min(max(0, int(np.ceil(yp))), bh - 1)
    left, right = min(max(0, int(np.floor(xp))), bw - 1), min(max(0, int(np.ceil(xp))), bw - 1)
    yl, xl = yp - top, xp - left
    yt, yb = max(0, y1h + top), max(0, y1h + bottom)
    xa, xb = max(0, x1w + left), max(0, x1w + right)
    return (img[yt, xa] * (1 - yl) * (1 - xl) + img[yb, xb] * yl * xl + img[yt, xb] * (1 - yl) * xl
            + img[yb, xa] * yl * (1 - xl))  # fmt: skip


@pytest.mark.parametrize("method", ["bilinear", "nearest", "bilinear_v2"])
@pytest.mark.parametrize("crop", [(3, 4), (1, 5)])
def test_crop_and_resize_matches_numpy(method, crop):
    rng = _rng(9)
    image = rng.standard_normal((2, 6, 7, 3)).astype(np.float32)
    boxes = rng.uniform(-0.2, 1.2, (5, 4)).astype(np.float32)
    if method == "bilinear_v2":
        boxes = np.sort(rng.uniform(0.0, 0.9, (5, 2, 2)), axis=1).transpose(0, 2, 1).reshape(5, 4).astype(np.float32)
    index = rng.integers(0, 2, 5).astype(np.int32)
    got = ops.CropAndResize(method, 0.5)(Tensor(image), Tensor(boxes), Tensor(index), crop)
    assert got.shape == (5, *crop, 3) and got.dtype == ms.float32
    np.testing.assert_allclose(got.asnumpy(), _crop_ref(image, boxes, index, crop, method, 0.5), rtol=1e-5, atol=1e-5)
    ints = ops.crop_and_resize(Tensor((image * 10).astype(np.int16)), Tensor(boxes), Tensor(index), crop, method)
    want = _crop_ref((image * 10).astype(np.int16), boxes, index, crop, method, 0.0)
    np.testing.assert_allclose(ints.asnumpy(), want, rtol=1e-5, atol=1e-4)


def test_crop_and_resize_gradients_and_jit():
    rng = _rng(10)
    image = rng.standard_normal((1, 4, 5, 2)).astype(np.float32)
    boxes = np.array([[0.1, 0.2, 0.8, 0.9], [0.3, 0.05, 0.7, 0.6]], np.float32)
    index = Tensor(np.zeros(2, np.int32))
    f = lambda img, b: ops.crop_and_resize(img, b, index, (3, 3))  # noqa: E731
    # linear in the image: a large step is exact
    _check_grad(f, [image, boxes], (0,), eps=0.5, rtol=1e-4, atol=1e-4)
    _check_grad(f, [image, boxes], (1,), eps=1e-2, rtol=2e-2, atol=2e-3)
    eager = f(Tensor(image), Tensor(boxes))
    np.testing.assert_allclose(opforge.jit(f)(Tensor(image), Tensor(boxes)).asnumpy(), eager.asnumpy())


def test_crop_and_resize_bad_inputs():
    image = Tensor(np.zeros((1, 4, 4, 1), np.float32))
    boxes, index = Tensor(np.zeros((1, 4), np.float32)), Tensor(np.zeros(1, np.int32))
    with pytest.raises(ValueError, match="method"):
        ops.CropAndResize("bicubic")
    with pytest.raises(TypeError, match="extrapolation_value"):
        ops.CropAndResize("bilinear", 1)
    with pytest.raises(TypeError, match="'crop_size' must be a tuple"):
        ops.crop_and_resize(image, boxes, index, [2, 2])
    with pytest.raises(ValueError, match="positive"):
        ops.crop_and_resize(image, boxes, index, (0, 2))
    with pytest.raises(TypeError, match="'boxes'"):
        ops.crop_and_resize(image, Tensor(np.zeros((1, 4), np.float64)), index, (2, 2))
    with pytest.raises(ValueError, match=r"box_index must be in \[0, 1\)"):
        ops.crop_and_resize(image, boxes, Tensor(np.array([1], np.int32)), (2, 2))
    with pytest.raises(ValueError, match="4-D"):
        ops.crop_and_resize(Tensor(np.zeros((4, 4, 1), np.float32)), boxes, index, (2, 2))
    with pytest.raises(ValueError, match="one entry per box"):
        ops.crop_and_resize(image, boxes, Tensor(np.zeros(2, np.int32)), (2, 2))
