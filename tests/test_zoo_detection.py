"""The detection parts of the model zoo's Faster R-CNN (tests/zoo/faster_rcnn_parts.py,
official/cv/FasterRCNN): the RPN's bbox assigner/sampler against NumPy (IOU, BoundingBoxEncode, the sampled
counts), the RoI extractor's level mapping and ROIAlign, the whole ``Faster_Rcnn`` (RPN + proposal generator +
stage-2 sampler + RoI extractor + R-CNN head over a small conv pyramid) trained three steps through
``TrainOneStepCell`` as network_define.py wraps it, and its test mode (``get_det_bboxes``, ``multiclass_nms``)."""

import types

import numpy as np
from zoo import faster_rcnn_parts as fr

import opforge as ms
from opforge import Tensor


def config():
    c = types.SimpleNamespace(
        img_width=128,
        img_height=128,
        without_bg_loss=True,
        anchor_scales=[8],
        anchor_ratios=[0.5, 1.0, 2.0],
        anchor_strides=[4, 8, 16, 32, 64],
        num_anchors=3,
        fpn_out_channels=8,
        fpn_num_outs=5,
        rpn_in_channels=8,
        rpn_feat_channels=8,
        rpn_loss_cls_weight=1.0,
        rpn_loss_reg_weight=1.0,
        rpn_cls_out_channels=1,
        neg_iou_thr=0.3,
        pos_iou_thr=0.7,
        min_pos_iou=0.3,
        num_gts=4,
        num_expected_neg=32,
        num_expected_pos=16,
        activate_num_classes=2,
        use_sigmoid_cls=True,
        roi_layer=types.SimpleNamespace(type="RoIAlign", out_size=7, sample_num=2),
        roi_align_out_channels=8,
        roi_align_featmap_strides=[4, 8, 16, 32],
        roi_align_finest_scale=56,
        roi_sample_num=16,
        neg_iou_thr_stage2=0.5,
        pos_iou_thr_stage2=0.5,
        min_pos_iou_stage2=0.5,
        num_bboxes_stage2=32,
        num_expected_pos_stage2=4,
        num_expected_neg_stage2=12,
        num_expected_total_stage2=12,
        rcnn_num_layers=2,
        rcnn_in_channels=8,
        rcnn_fc_out_channels=16,
        rcnn_loss_cls_weight=1,
        rcnn_loss_reg_weight=1,
        rcnn_target_means=[0.0, 0.0, 0.0, 0.0],
        rcnn_target_stds=[0.1, 0.1, 0.2, 0.2],
        rpn_proposal_nms_across_levels=False,
        rpn_proposal_nms_pre=64,
        rpn_proposal_nms_post=64,
        rpn_proposal_max_num=32,
        rpn_proposal_nms_thr=0.7,
        rpn_proposal_min_bbox_size=0,
        rpn_nms_across_levels=False,
        rpn_nms_pre=32,
        rpn_nms_post=32,
        rpn_max_num=32,
        rpn_nms_thr=0.7,
        rpn_min_bbox_min_size=0,
        test_score_thr=0.05,
        test_iou_thr=0.5,
        test_max_per_img=100,
        test_batch_size=1,
        batch_size=1,
        num_classes=3,
    )
    c.feature_shapes = [(128 // s, 128 // s) for s in c.anchor_strides]
    c.num_bboxes = sum(h * w * 3 for h, w in c.feature_shapes)
    return c


def _inputs():
    rng = np.random.default_rng(0)
    img = Tensor(rng.standard_normal((1, 3, 128, 128)).astype(np.float32))
    gt = Tensor(np.array([[[8, 8, 60, 60], [40, 60, 120, 124], [0, 0, 0, 0], [0, 0, 0, 0]]], np.float32))
    labels = Tensor(np.array([[1, 2, 0, 0]], np.int32))
    valids = Tensor(np.array([[True, True, False, False]]))
    return img, gt, labels, valids


def _np_iou(a, g):
    w = np.maximum(np.minimum(a[None, :, 2], g[:, None, 2]) - np.maximum(a[None, :, 0], g[:, None, 0]) + 1, 0)
    h = np.maximum(np.minimum(a[None, :, 3], g[:, None, 3]) - np.maximum(a[None, :, 1], g[:, None, 1]) + 1, 0)
    area = lambda b: (b[:, 2] - b[:, 0] + 1) * (b[:, 3] - b[:, 1] + 1)
    return w * h / (area(a)[None] + area(g)[:, None] - w * h + 1e-10)


def test_rpn_bbox_assign_sample_matches_numpy():
    ms.set_seed(0)
    cfg = config()
    net = fr.Faster_Rcnn(cfg)
    anchors = np.concatenate([a.asnumpy() for a in net.anchor_list])
    assert anchors.shape == (cfg.num_bboxes, 4)
    _, gt, _, valids = _inputs()
    sampler = fr.BboxAssignSample(cfg, 1, cfg.num_bboxes, False)
    valid = ms.ops.CheckValid()(Tensor(anchors), Tensor(np.array([128, 128, 1.0], np.float32)))
    v = anchors
    np.testing.assert_array_equal(
        valid.asnumpy(), (v[:, 0] >= 0) & (v[:, 1] >= 0) & (v[:, 2] <= 127) & (v[:, 3] <= 127)
    )
    targets, weights, labels, label_weights = sampler(
        gt[0], Tensor(np.ones(4, np.uint8)), valid, Tensor(anchors), valids[0]
    )
    targets, weights = targets.asnumpy(), weights.asnumpy()
    overlaps = _np_iou(
        np.where(valid.asnumpy()[:, None], anchors, -2), np.where(valids.asnumpy()[0, :, None], gt.asnumpy()[0], -1)
    )
    best = overlaps.max(0)
    pos = weights.astype(bool)
    assert 0 < pos.sum() <= cfg.num_expected_pos and np.all(valid.asnumpy()[pos])
    # a positive anchor overlaps its ground truth by >= pos_iou_thr, or is a ground truth's best anchor
    is_best = np.isclose(overlaps, overlaps.max(1, keepdims=True)) & (overlaps.max(1, keepdims=True) >= 0.3)
    assert np.all((best[pos] >= 0.7) | is_best.any(0)[pos])
    # targets: BoundingBoxEncode (means 0, stds 1) of each positive anchor to its assigned ground truth
    assigned = gt.asnumpy()[0][np.argmax(np.where(is_best, 2.0, overlaps), 0)[pos]]
    a = anchors[pos]
    pw, ph = a[:, 2] - a[:, 0] + 1, a[:, 3] - a[:, 1] + 1
    gw, gh = assigned[:, 2] - assigned[:, 0] + 1, assigned[:, 3] - assigned[:, 1] + 1
    dx = ((assigned[:, 0] + assigned[:, 2]) - (a[:, 0] + a[:, 2])) * 0.5 / pw
    dy = ((assigned[:, 1] + assigned[:, 3]) - (a[:, 1] + a[:, 3])) * 0.5 / ph
    expected = np.stack([dx, dy, np.log(gw / pw), np.log(gh / ph)], 1)
    np.testing.assert_allclose(targets[pos], expected, rtol=1e-4, atol=1e-5)
    # MindSpore's ScatterNd sums: the unused sample slots (index 0, zeroed) add their rows into anchor 0 only
    others = ~pos & (np.arange(len(pos)) != 0)
    assert np.all(targets[others] == 0) and np.all(labels.asnumpy()[pos] == 1)
    negatives = label_weights.asnumpy() & ~pos
    assert 0 < negatives.sum() <= cfg.num_expected_neg and np.all(best[negatives] < 0.3)


def test_roi_extractor_maps_levels_and_aligns():
    ms.set_seed(0)
    cfg = config()
    extractor = fr.SingleRoIExtractor(cfg, cfg.roi_layer, 8, cfg.roi_align_featmap_strides, 1, 56)
    rng = np.random.default_rng(1)
    feats = [Tensor(rng.standard_normal((1, 8, 128 // s, 128 // s)).astype(np.float32)) for s in (4, 8, 16, 32)]
    sizes = np.array([10, 50, 120, 20, 200, 30, 60, 100, 16, 250, 40, 90, 127, 5, 70, 111], np.float32)
    rois = np.stack([np.zeros(16), np.zeros(16), np.zeros(16), sizes, sizes], 1).astype(np.float32)
    out = extractor(Tensor(rois), *feats).asnumpy()
    assert out.shape == (16, 8, 7, 7)
    levels = np.clip(np.floor(np.log2(np.sqrt((sizes + 1) ** 2) / 56 + 1e-6)), 0, 3).astype(int)
    for lvl in range(4):
        align = ms.ops.ROIAlign(7, 7, 1 / (4 * 2**lvl), 2)(feats[lvl], Tensor(rois)).asnumpy()
        np.testing.assert_allclose(out[levels == lvl], align[levels == lvl], rtol=1e-6)


def test_faster_rcnn_trains_and_detects():
    """network_define.py's LossNet (rpn_loss + rcnn_loss) in a WithLossCell and TrainOneStepCell, three Momentum
    steps with every detection operator in the graph; then test mode's boxes, labels and masks."""
    ms.set_seed(0)
    cfg = config()
    net = fr.Faster_Rcnn(cfg)
    img, gt, labels, valids = _inputs()
    metas = Tensor(np.array([[128, 128, 1.0]], np.float32))

    class LossNet(ms.nn.Cell):
        def construct(self, x1, x2, x3, x4, x5, x6):
            return x1 + x2

    class WithLossCell(ms.nn.Cell):
        def __init__(self, backbone, loss_fn):
            super().__init__(auto_prefix=False)
            self._backbone, self._loss_fn = backbone, loss_fn

        def construct(self, x, img_shape, gt_bboxe, gt_label, gt_num):
            loss1, loss2, loss3, loss4, loss5, loss6 = self._backbone(x, img_shape, gt_bboxe, gt_label, gt_num)
            return self._loss_fn(loss1, loss2, loss3, loss4, loss5, loss6)

    net.set_train(True)
    rpn_loss, rcnn_loss, rpn_cls, rpn_reg, rcnn_cls, rcnn_reg = net(img, metas, gt, labels, valids)
    np.testing.assert_allclose(rpn_loss.asnumpy(), rpn_cls.asnumpy() + rpn_reg.asnumpy(), rtol=1e-5)
    np.testing.assert_allclose(rcnn_cls.asnumpy(), np.log(3), rtol=1e-2)  # near-zero logits over 3 classes
    opt = ms.nn.Momentum(net.trainable_params(), 0.02, 0.9, weight_decay=1e-5)
    step = ms.nn.TrainOneStepCell(WithLossCell(net, LossNet()), opt, sens=1.0)
    step.set_train()
    stem, fc = net.backbone.stem.weight.asnumpy().copy(), net.rcnn.shared_fc_0.weight.asnumpy().copy()
    losses = [float(step(img, metas, gt, labels, valids).asnumpy()[0]) for _ in range(3)]
    assert np.all(np.isfinite(losses)) and losses[-1] < losses[0], losses
    assert not np.allclose(net.backbone.stem.weight.asnumpy(), stem)  # the RPN loss reaches the backbone
    assert not np.allclose(net.rcnn.shared_fc_0.weight.asnumpy(), fc)  # and the R-CNN head learns through ROIAlign
    net.set_train(False)
    boxes, det_labels, masks = net(img, Tensor(np.array([[128, 128, 1.0, 1.0]], np.float32)), gt, labels, valids)
    n = (cfg.num_classes - 1) * cfg.rpn_max_num
    assert boxes.shape == (1, n, 5) and det_labels.shape == (1, n, 1) and masks.shape == (1, n, 1)
    kept = boxes.asnumpy()[0][masks.asnumpy()[0, :, 0]]
    assert len(kept) > 0 and np.all(kept[:, 4] > cfg.test_score_thr)
    assert np.all((kept[:, :4] >= 0) & (kept[:, :4] <= 128)), kept
