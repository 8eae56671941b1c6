"""SSD as MindSpore's model zoo runs it (tests/zoo/ssd: official/cv/SSD/src with ``mindspore`` replaced by
``opforge``; model_name "ssd300": ``SSD300`` over ``ssd_mobilenet_v2``, shrunk to 64 x 64 images): the anchors
and ``ssd_bboxes_encode``/``decode`` of box_utils.py, dataset.py's ``create_ssd_dataset`` pipeline (over a
``GeneratorDataset`` of PNG images of coloured squares instead of the MindRecord: ``Decode``, the zoo's crop /
resize / flip / encode ``preprocess_fn``, ``RandomColorAdjust``, ``Normalize``, ``HWC2CHW``, ``batch``),
``SSDWithLossCell`` (focal + smooth L1) against NumPy, train.py's ``TrainingWrapper`` + ``nn.Momentum`` with
``get_lr`` and ``init_net_param`` through ``Model.train`` (loss falling), and eval.py's ``SsdInferWithDecoder``
with eval_utils.py's NumPy NMS end to end."""

import io

import numpy as np
import pytest
from PIL import Image
from zoo.ssd import box_utils, eval_utils
from zoo.ssd.config import config
from zoo.ssd.dataset import create_ssd_dataset, preprocess_fn
from zoo.ssd.init_params import init_net_param
from zoo.ssd.lr_schedule import get_lr
from zoo.ssd.ssd import SSD300, SsdInferWithDecoder, SSDWithLossCell, TrainingWrapper, ssd_mobilenet_v2

import opforge as ms
import opforge.dataset as ds
import opforge.nn as nn
from opforge import Tensor, context
from opforge.train import Model
from opforge.train.callback import LambdaCallback


@pytest.fixture(autouse=True)
def _seeds():
    ds.config._state["seed"] = None
    np.random.seed(0)
    ms.set_seed(1)
    yield
    ds.config._state["seed"] = None
    context.set_context(mode=context.PYNATIVE_MODE)


class SquaresSource:
    """Rows as the zoo's MindRecord holds them: img_id, the PNG bytes, annotation rows (ymin, xmin, ymax,
    xmax, class) in pixels; one or two squares of class 1 (red) or 2 (green) on a dark 80 x 80 image."""

    def __init__(self, count):
        rng = np.random.default_rng(0)
        self.rows = []
        for i in range(count):
            img = np.full((80, 80, 3), 30, np.uint8)
            annos = []
            for _ in range(1 + i % 2):
                y0, x0 = (int(v) for v in rng.integers(2, 40, 2))
                size, cls = int(rng.integers(24, 38)), int(rng.integers(1, 3))
                img[y0 : y0 + size, x0 : x0 + size] = (220, 40, 40) if cls == 1 else (40, 220, 40)
                annos.append([y0, x0, y0 + size, x0 + size, cls])
            buf = io.BytesIO()
            Image.fromarray(img).save(buf, format="PNG")
            self.rows.append(
                (np.array([i], np.int32), np.frombuffer(buf.getvalue(), np.uint8), np.array(annos, np.int32))
            )

    def __getitem__(self, index):
        return self.rows[index]

    def __len__(self):
        return len(self.rows)


def _ssd(is_training=True):
    backbone = ssd_mobilenet_v2(width_mult=config.width_mult)
    net = SSD300(backbone=backbone, config=config, is_training=is_training)
    init_net_param(net)
    return net


def _tlbr(boxes):
    """(cy, cx, h, w) -> (y1, x1, y2, x2)."""
    return np.concatenate([boxes[:, :2] - boxes[:, 2:] / 2, boxes[:, :2] + boxes[:, 2:] / 2], -1)


def test_default_boxes_follow_the_config():
    boxes = box_utils.default_boxes
    assert (
        boxes.shape
        == (config.num_ssd_boxes, 4)
        == (sum(f * f * n for f, n in zip([4, 2, 1, 1, 1, 1], config.num_default)), 4)
    )
    # the first map: 4 x 4 cells of 16 pixels, 3 boxes each, centred in the cell
    np.testing.assert_allclose(boxes[:3, :2], [[0.125, 0.125]] * 3)
    np.testing.assert_allclose(boxes[0, 2:], [0.1, 0.1])
    np.testing.assert_allclose(box_utils.default_boxes_tlbr, _tlbr(boxes), atol=1e-6)


def test_bboxes_encode_then_decode_gives_the_boxes_back():
    gt = np.array([[0.1, 0.2, 0.6, 0.55, 1], [0.5, 0.5, 0.95, 0.9, 2]], np.float32)
    loc, label, num_match = box_utils.ssd_bboxes_encode(gt)
    assert loc.shape == (config.num_ssd_boxes, 4) and label.dtype == np.int32 and num_match.dtype == np.int32
    matched = np.nonzero(label)[0]
    assert num_match[0] == len(matched) >= 2  # each box takes at least its best anchor
    decoded = box_utils.ssd_bboxes_decode(loc)
    for i in matched:
        np.testing.assert_allclose(decoded[i], gt[label[i] - 1, :4], atol=1e-5)
    # every box's best anchor (by IoU) is matched to it
    for k, box in enumerate(gt):
        best = np.argmax(box_utils.jaccard_numpy(box_utils.default_boxes_tlbr, box[:4]))
        assert label[best] == k + 1


def _nms_reference(boxes, scores, thres, max_boxes):
    """Greedy NMS by pairwise IoU (the zoo's +1 pixel convention), written independently."""

    def iou(a, b):
        h = max(0.0, min(a[2], b[2]) - max(a[0], b[0]) + 1)
        w = max(0.0, min(a[3], b[3]) - max(a[1], b[1]) + 1)
        area = lambda r: (r[2] - r[0] + 1) * (r[3] - r[1] + 1)  # noqa: E731
        return h * w / (area(a) + area(b) - h * w)

    keep = []
    for i in sorted(range(len(scores)), key=lambda k: -scores[k]):
        if all(iou(boxes[i], boxes[j]) <= thres for j in keep):
            keep.append(i)
    return keep[:max_boxes]


def test_apply_nms_matches_a_greedy_reference():
    rng = np.random.default_rng(3)
    corners = rng.uniform(0, 60, (40, 2))
    boxes = np.concatenate([corners, corners + rng.uniform(5, 30, (40, 2))], 1)
    scores = rng.permutation(40) / 40.0
    for thres, max_boxes in ((0.3, 100), (0.6, 100), (0.5, 5)):
        assert list(eval_utils.apply_nms(boxes, scores, thres, max_boxes)) == _nms_reference(
            boxes, scores, thres, max_boxes
        )


def test_get_lr_warmup_then_cosine():
    lr = get_lr(
        global_step=2, lr_init=0.001, lr_end=0.00005, lr_max=0.05, warmup_epochs=1, total_epochs=3, steps_per_epoch=4
    )
    steps = np.arange(12)
    ref = np.where(
        steps < 4,
        0.001 + (0.05 - 0.001) * steps / 4,
        0.00005 + (0.05 - 0.00005) * (1 + np.cos(np.pi * (steps - 4) / 8)) / 2,
    )
    assert lr.dtype == np.float32
    np.testing.assert_allclose(lr, ref[2:], rtol=1e-6)


def test_init_net_param_draws_truncated_normal_weights():
    net = _ssd()
    weights = [p for p in net.trainable_params() if "weight" in p.name]
    values = np.concatenate([p.asnumpy().ravel() for p in weights])
    # TruncatedNormal(0.02): N(0, 0.02^2) cut at MindSpore's absolute bounds [-2, 2], so practically untruncated
    assert abs(values.std() - 0.02) < 0.001 and abs(values.mean()) < 0.001 and np.abs(values).max() < 0.15
    for p in net.trainable_params():
        if "gamma" in p.name:
            np.testing.assert_array_equal(p.asnumpy(), 1)
        if "beta" in p.name or "bias" in p.name:
            np.testing.assert_array_equal(p.asnumpy(), 0)


def test_training_pipeline_encodes_the_boxes():
    dataset = create_ssd_dataset(SquaresSource(4), batch_size=2, use_multiprocessing=False, num_parallel_workers=1)
    assert dataset.get_dataset_size() == 2
    rows = list(dataset.create_dict_iterator(output_numpy=True, num_epochs=1))
    for row in rows:
        assert row["image"].shape == (2, 3, 64, 64) and row["image"].dtype == np.float32
        assert row["box"].shape == (2, config.num_ssd_boxes, 4) and row["label"].shape == (2, config.num_ssd_boxes)
        np.testing.assert_array_equal((row["label"] > 0).sum(1), row["num_match"][:, 0])
        assert set(np.unique(row["label"])) <= {0, 1, 2} and (row["num_match"] > 0).all()
        assert abs(row["image"].mean()) < 3  # normalized with ImageNet's mean and std (x 255)


def _np_loss(pred_loc, pred_label, gt_loc, gt_label, num_matched):
    """SSDWithLossCell's loss in NumPy: sigmoid focal loss (gamma, alpha) + smooth L1 on the matched anchors,
    summed per image, divided by the batch's matched count."""
    mask = (gt_label > 0).astype(np.float64)[..., None]
    diff = np.abs(pred_loc - gt_loc)
    smooth = np.where(diff < 1, 0.5 * diff**2, diff - 0.5) * mask
    onehot = np.eye(pred_label.shape[-1])[gt_label]
    p = 1 / (1 + np.exp(-pred_label.astype(np.float64)))
    ce = -(onehot * np.log(p) + (1 - onehot) * np.log(1 - p))
    p_t = onehot * p + (1 - onehot) * (1 - p)
    alpha = onehot * config.alpha + (1 - onehot) * (1 - config.alpha)
    focal = (1 - p_t) ** config.gamma * alpha * ce
    per_image = focal.sum((1, 2)) + smooth.sum((1, 2))
    return (per_image / num_matched.sum()).sum()


def _fixed_batch():
    """One batch through the zoo's training preprocess_fn (crop, resize, flip, encode), fixed once."""
    source = SquaresSource(2)
    decode = ds.vision.Decode()
    out = [preprocess_fn(img_id, decode(image), annos, True) for img_id, image, annos in source.rows]
    mean, std = np.array([0.485, 0.456, 0.406]) * 255, np.array([0.229, 0.224, 0.225]) * 255
    images = np.stack([((o[0] - mean) / std).transpose(2, 0, 1) for o in out]).astype(np.float32)
    return images, np.stack([o[1] for o in out]), np.stack([o[2] for o in out]), np.stack([o[3] for o in out])


def test_loss_cell_matches_numpy():
    ssd = _ssd()
    net = SSDWithLossCell(ssd, config)
    images, box, label, num_match = _fixed_batch()
    loss = net(Tensor(images), Tensor(box), Tensor(label), Tensor(num_match))
    pred_loc, pred_label = ssd(Tensor(images))
    assert pred_loc.shape == (2, config.num_ssd_boxes, 4) and pred_label.shape == (2, config.num_ssd_boxes, 4)
    ref = _np_loss(pred_loc.asnumpy(), pred_label.asnumpy(), box, label, num_match)
    np.testing.assert_allclose(loss.asnumpy(), ref, rtol=1e-4)


def _train(net_with_loss, dataset, epochs, loss_scale=1.0, use_global_norm=False, lr=None):
    steps = dataset.get_dataset_size()
    if lr is None:
        lr = Tensor(
            get_lr(
                global_step=0,
                lr_init=config.lr_init,
                lr_end=config.lr_end_rate * config.lr,
                lr_max=config.lr,
                warmup_epochs=config.warmup_epochs,
                total_epochs=epochs,
                steps_per_epoch=steps,
            )
        )
    opt_scale = 1.0 if use_global_norm else loss_scale
    opt = nn.Momentum(
        filter(lambda x: x.requires_grad, net_with_loss.get_parameters()),
        lr,
        config.momentum,
        config.weight_decay,
        opt_scale,
    )
    net = TrainingWrapper(net_with_loss, opt, loss_scale, use_global_norm)
    losses = []
    monitor = LambdaCallback(
        on_train_step_end=lambda ctx: losses.append(float(ctx.original_args().net_outputs.asnumpy()))
    )
    Model(net).train(epochs, dataset, callbacks=[monitor], dataset_sink_mode=False)
    return losses


@pytest.mark.parametrize("mode", [context.PYNATIVE_MODE, context.GRAPH_MODE])
def test_training_wrapper_loss_falls_on_a_fixed_batch(mode):
    context.set_context(mode=mode)
    images, box, label, num_match = _fixed_batch()
    data = ds.NumpySlicesDataset(
        {"image": images, "box": box, "label": label, "num_match": num_match}, shuffle=False
    ).batch(2)
    losses = _train(SSDWithLossCell(_ssd(), config), data, 12, loss_scale=float(config.loss_scale), lr=0.01)
    assert len(losses) == 12 and np.isfinite(losses).all()
    assert np.mean(losses[-3:]) < 0.6 * np.mean(losses[:2]), losses


def test_train_py_pipeline_then_eval_with_decoder_and_nms(tmp_path):
    context.set_context(mode=context.GRAPH_MODE)
    ssd = _ssd()
    dataset = create_ssd_dataset(
        SquaresSource(4), batch_size=config.batch_size, use_multiprocessing=False, num_parallel_workers=1
    )
    losses = _train(SSDWithLossCell(ssd, config), dataset, 2, loss_scale=float(config.loss_scale), use_global_norm=True)
    assert len(losses) == 4 and np.isfinite(losses).all()
    ckpt = str(tmp_path / "ssd.ckpt")
    ms.save_checkpoint(ssd, ckpt)

    # eval.py: a fresh SSD300(is_training=False) in SsdInferWithDecoder, the checkpoint loaded into it
    net = SsdInferWithDecoder(
        SSD300(ssd_mobilenet_v2(width_mult=config.width_mult), config, is_training=False),
        Tensor(box_utils.default_boxes),
        config,
    )
    param_dict = ms.load_checkpoint(ckpt)
    net.init_parameters_data()
    ms.load_param_into_net(net, param_dict)
    net.set_train(False)
    eval_ds = create_ssd_dataset(
        SquaresSource(3), batch_size=1, is_training=False, use_multiprocessing=False, num_parallel_workers=1
    )
    seen = 0
    for data in eval_ds.create_dict_iterator(output_numpy=True, num_epochs=1):
        assert data["image"].shape == (1, 3, 64, 64)
        np.testing.assert_array_equal(data["image_shape"], [[80, 80]])
        boxes, scores = net(Tensor(data["image"]))
        boxes, scores = boxes.asnumpy()[0], scores.asnumpy()[0]
        assert boxes.shape == (config.num_ssd_boxes, 4) and scores.shape == (config.num_ssd_boxes, 4)
        assert (boxes >= 0).all() and (boxes <= 1).all() and (scores > 0).all() and (scores < 1).all()
        # the graph's decoder is box_utils' NumPy decoder
        pred_loc, _ = net.network(Tensor(data["image"]))
        np.testing.assert_allclose(boxes, box_utils.ssd_bboxes_decode(pred_loc.asnumpy()[0]), atol=1e-5)
        final_boxes, final_label, final_score = eval_utils.select_boxes(
            boxes, scores, data["image_shape"][0], config.num_classes, 0.0, config.nms_threshold, config.max_boxes
        )
        assert len(final_boxes) == len(final_label) == len(final_score) > 0
        assert (np.array(final_boxes) >= 0).all() and (np.array(final_boxes) <= 80).all()
        seen += 1
    assert seen == 3


def test_pre_trained_checkpoint_filtered_of_the_head_loads_strictly(tmp_path, capsys):
    """train.py with ``pre_trained`` and ``filter_weight``: the head's parameters are dropped from the
    checkpoint and the rest is loaded with ``strict_load=True`` (what was not loaded is returned)."""
    from zoo.ssd.init_params import filter_checkpoint_parameter_by_list

    source = SSDWithLossCell(_ssd(), config)
    ckpt = str(tmp_path / "pre.ckpt")
    ms.save_checkpoint(source, ckpt)
    param_dict = ms.load_checkpoint(ckpt)
    filter_checkpoint_parameter_by_list(param_dict, config.checkpoint_filter_list)
    assert "Delete parameter from checkpoint:  network.multi_box.multi_cls_layers.0.0.weight" in capsys.readouterr().out
    net = SSDWithLossCell(_ssd(), config)
    not_loaded, unused = ms.load_param_into_net(net, param_dict, True)
    assert unused == [] and not_loaded and all("multi_box" in name for name in not_loaded)
    backbone = "network.backbone.features_1.0.features.0.weight"
    np.testing.assert_array_equal(
        net.parameters_dict()[backbone].asnumpy(), source.parameters_dict()[backbone].asnumpy()
    )
