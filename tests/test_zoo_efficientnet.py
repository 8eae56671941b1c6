"""EfficientNet-B0 as MindSpore's model zoo runs it (tests/zoo/efficientnet: official/cv/Efficientnet/efficientnet-b0
with ``mindspore`` replaced by ``opforge``), on CIFAR-10 binary files written here: dataset.py's
``create_dataset`` (``Cifar10Dataset``, ``RandomResizedCrop``, ``RandomHorizontalFlip``, ``TypeCast`` and the
``RandAugment`` per-batch map: ``ToPIL``, Pillow augmentations, ``ToTensor``, ``Normalize``) and
``create_dataset_val`` (``Resize``, ``CenterCrop``, ``Rescale``, ``Normalize``, ``HWC2CHW``); train.py's main
(``efficientnet_b0`` with drop-connect, ``LabelSmoothingCrossEntropy``, ``RMSProp`` with a loss scale on
``get_lr``'s warm-up, ``Model`` with ``FixedLossScaleManager``, the callbacks ``TimeMonitor``, ``LossMonitor``,
``SummaryCollector``, ``ModelCheckpoint`` and the zoo's ``EvalCallBack``), and eval.py run as a script on the
checkpoint. The network's shape, the loss and the metrics are checked against independent references."""

import copy
import math
import os
import runpy
import sys

import numpy as np
import pytest
import summary_reader
from PIL import Image
from zoo.efficientnet import efficientnet as effnet
from zoo.efficientnet import train as zoo_train
from zoo.efficientnet.callbacks import EvalCallBack
from zoo.efficientnet.config import config
from zoo.efficientnet.dataset import create_dataset, create_dataset_val
from zoo.efficientnet.loss import LabelSmoothingCrossEntropy

import opforge
import opforge.dataset as ds
from opforge import Tensor, context, nn
from opforge.train.callback import (
    CheckpointConfig,
    LambdaCallback,
    LossMonitor,
    ModelCheckpoint,
    SummaryCollector,
    TimeMonitor,
)
from opforge.train.loss_scale_manager import FixedLossScaleManager
from opforge.train.model import Model
from opforge.train.serialization import load_checkpoint, load_param_into_net

COLORS = np.array([[220, 30, 30], [30, 220, 30], [30, 30, 220], [220, 220, 30]])
ds.config._state["seed"] = None  # dataset.py set it at import (collection): the other tests' runs do not see it


@pytest.fixture(autouse=True)
def _state():
    saved = copy.deepcopy(vars(config))
    ds.config.set_seed(config.random_seed)  # dataset.py sets it at import, as the zoo
    np.random.seed(0)
    opforge.set_seed(0)
    yield
    vars(config).clear()
    vars(config).update(saved)
    ds.config._state["seed"] = None
    context.set_context(mode=context.PYNATIVE_MODE)


def _write_cifar(root, count=16, seed=0):
    """CIFAR-10's binary layout: data_batch_1.bin (train) and test_batch.bin (the same rows): a label byte, then
    the red, green and blue 32 x 32 planes; images of four colours (labels 0..3) with noise."""
    rng = np.random.default_rng(seed)
    labels = (np.arange(count) % 4).astype(np.uint8)
    planes = COLORS[labels][:, :, None, None] + rng.normal(0, 20, (count, 3, 32, 32))
    images = np.clip(planes, 0, 255).astype(np.uint8)
    records = np.concatenate([labels[:, None], images.reshape(count, -1)], 1).tobytes()
    os.makedirs(root, exist_ok=True)
    for name in ("data_batch_1.bin", "test_batch.bin"):
        with open(os.path.join(root, name), "wb") as f:
            f.write(records)
    return str(root), labels, images.transpose(0, 2, 3, 1)


def _net():
    return effnet.efficientnet_b0(
        num_classes=config.num_classes,
        cfg=config,
        drop_rate=config.drop,
        drop_connect_rate=config.drop_connect,
        global_pool=config.gp,
        bn_tf=config.bn_tf,
    )


# ---------------------------------------------------------------------------------------------
# The network and its loss


def test_efficientnet_b0_has_the_paper_stages_and_parameter_count():
    stages = effnet._decode_arch_def(
        [
            ["ds_r1_k3_s1_e1_c16_se0.25"],
            ["ir_r2_k3_s2_e6_c24_se0.25"],
            ["ir_r2_k5_s2_e6_c40_se0.25"],
            ["ir_r3_k3_s2_e6_c80_se0.25"],
            ["ir_r3_k5_s1_e6_c112_se0.25"],
            ["ir_r4_k5_s2_e6_c192_se0.25"],
            ["ir_r1_k3_s1_e6_c320_se0.25"],
        ]
    )
    assert [len(s) for s in stages] == [1, 2, 2, 3, 3, 4, 1]
    assert [s[0]["out_chs"] for s in stages] == [16, 24, 40, 80, 112, 192, 320]
    assert [s[0]["dw_kernel_size"] for s in stages] == [3, 3, 5, 3, 5, 5, 3]
    assert [effnet._round_channels(c, m) for c, m in ((20, 1.2), (1280, 1.1), (30, 1.0), (32, 0.5))] == [
        24,
        1408,
        32,
        16,
    ]
    net = effnet.efficientnet_b0(num_classes=1000)
    assert [len(stage) for stage in net.blocks.layer] == [1, 2, 2, 3, 3, 4, 1]
    # EfficientNet-B0's 5,288,548 trainable parameters (the paper's 5.3M; timm's count of the same network)
    assert sum(int(np.prod(p.shape)) for p in net.trainable_params()) == 5_288_548
    net.set_train(False)
    out = net(Tensor(np.random.default_rng(0).standard_normal((2, 3, 32, 32)).astype(np.float32)))
    assert out.shape == (2, 1000) and np.all(np.isfinite(out.asnumpy()))


def test_drop_connect_keeps_or_drops_whole_samples_in_training_only():
    x = Tensor(np.random.default_rng(1).standard_normal((64, 2, 3, 3)).astype(np.float32))
    out = effnet.drop_connect(x, training=True, drop_connect_rate=0.5).asnumpy()
    kept = np.array([np.array_equal(o, v) for o, v in zip(out, x.asnumpy())])
    dropped = np.array([not o.any() for o in out])
    assert np.all(kept | dropped) and 10 < kept.sum() < 54  # P.Dropout's 0/1 mask, one value per sample
    assert effnet.drop_connect(x, training=False, drop_connect_rate=0.5) is x


def test_label_smoothing_cross_entropy_matches_numpy():
    rng = np.random.default_rng(2)
    logits = rng.standard_normal((5, 10)).astype(np.float32)
    labels = rng.integers(0, 10, 5).astype(np.int32)
    got = LabelSmoothingCrossEntropy(smooth_factor=0.1, num_classes=10)(Tensor(logits), Tensor(labels))
    target = np.full((5, 10), 0.1 / 9)
    target[np.arange(5), labels] = 0.9
    log_softmax = (
        logits
        - np.log(np.exp(logits - logits.max(1, keepdims=True)).sum(1, keepdims=True))
        - logits.max(1, keepdims=True)
    )
    np.testing.assert_allclose(got.asnumpy(), np.mean(-(target * log_softmax).sum(1)), rtol=1e-5)


def test_get_lr_warms_up_per_epoch_then_decays():
    lr = zoo_train.get_lr(
        base_lr=0.1,
        total_epochs=8,
        steps_per_epoch=2,
        decay_steps=2.4,
        decay_rate=0.97,
        warmup_steps=5,
        warmup_lr_init=0.01,
    )
    epochs = np.arange(16) // 2
    want = np.where(epochs < 5, 0.01 + epochs * (0.1 - 0.01) / 5, 0.1 * 0.97 ** np.floor(epochs / 2.4))
    np.testing.assert_allclose(lr, want.astype(np.float32), rtol=1e-6)


# ---------------------------------------------------------------------------------------------
# The datasets


def test_create_dataset_augments_with_rand_augment_and_val_matches_pillow(tmp_path):
    root, labels, images = _write_cifar(tmp_path / "cifar")
    train = create_dataset("cifar10", "efficientnet_b0", root, config.batch_size, workers=config.workers)
    assert train.get_dataset_size() == 4 and train.get_col_names() == ["image", "label"]
    for image, label in train.create_tuple_iterator(output_numpy=True):
        assert image.shape == (4, 3, 32, 32) and image.dtype == np.float32  # RandAugment's ToTensor + Normalize
        assert label.dtype == np.int32 and set(label.tolist()) <= {0, 1, 2, 3}
        assert image.min() >= (0 - max(config.mean)) / min(config.std) - 1e-4
        assert image.max() <= (1 - min(config.mean)) / min(config.std) + 1e-4

    val = create_dataset_val("cifar10", "efficientnet_b0", root, config.batch_size, workers=config.workers)
    image, label = next(val.create_tuple_iterator(output_numpy=True))
    assert label.tolist() == labels[:4].tolist()  # not shuffled
    size = math.floor(config.resize_value / 0.875)  # resize the shorter side to 36, then a 32 centre crop
    for got, raw in zip(image, images[:4]):
        resized = np.asarray(Image.fromarray(raw).resize((size, size), Image.BILINEAR), np.float32)
        top = (size - 32) // 2
        want = (resized[top : top + 32, top : top + 32] / 255.0 - config.mean) / config.std
        np.testing.assert_allclose(got, want.transpose(2, 0, 1), rtol=1e-5, atol=1e-5)


# ---------------------------------------------------------------------------------------------
# Training as train.py does


def test_the_train_step_learns_a_batch():
    """train.py's network, loss, RMSProp (loss scale 1024) and Model with FixedLossScaleManager, on one batch of
    random images seen 12 times, with the zoo's learning rates: the loss falls."""
    rng = np.random.default_rng(3)
    images = rng.standard_normal((8, 3, 32, 32)).astype(np.float32)
    data = ds.NumpySlicesDataset({"image": images, "label": np.arange(8, dtype=np.int32)}, shuffle=False).batch(8)
    net = _net()
    loss = LabelSmoothingCrossEntropy(smooth_factor=config.smoothing, num_classes=config.num_classes)
    lr = Tensor(
        zoo_train.get_lr(
            base_lr=config.lr,
            total_epochs=12,
            steps_per_epoch=1,
            decay_steps=config.decay_epochs,
            decay_rate=config.decay_rate,
            warmup_steps=config.warmup_epochs,
            warmup_lr_init=config.warmup_lr_init,
        )
    )
    model = Model(
        net,
        loss,
        zoo_train._create_optim(net, lr),
        loss_scale_manager=FixedLossScaleManager(config.loss_scale, drop_overflow_update=False),
    )
    losses = []
    model.train(
        12,
        data,
        callbacks=[
            LambdaCallback(on_train_step_end=lambda rc: losses.append(float(rc.original_args().net_outputs.asnumpy())))
        ],
    )
    assert len(losses) == 12 and np.all(np.isfinite(losses))
    assert np.mean(losses[-3:]) < 0.6 * losses[0], losses


def test_trains_as_train_py_main_and_evaluates_as_eval_py(tmp_path, monkeypatch, capsys):
    root, labels, _ = _write_cifar(tmp_path / "cifar")
    monkeypatch.chdir(tmp_path)
    config.data_path = root
    # train.py's main (CPU platform: no sink mode), its summary directory under tmp_path
    context.set_context(mode=context.GRAPH_MODE)
    context.set_context(device_target="CPU")
    net = zoo_train._create_net()
    train_dataset = create_dataset("cifar10", "efficientnet_b0", root, config.batch_size, workers=config.workers)
    batches_per_epoch = train_dataset.get_dataset_size()
    val_dataset = create_dataset_val("cifar10", "efficientnet_b0", root, config.batch_size, workers=config.workers)
    loss = LabelSmoothingCrossEntropy(smooth_factor=config.smoothing, num_classes=config.num_classes)
    summary_dir = str(tmp_path / "train" / "summary")
    callbacks = [
        TimeMonitor(data_size=batches_per_epoch),
        LossMonitor(per_print_times=1),
        SummaryCollector(summary_dir),
    ]
    eval_metrics = {
        "Loss": nn.Loss(),
        "Top1-Acc": nn.Top1CategoricalAccuracy(),
        "Top5-Acc": nn.Top5CategoricalAccuracy(),
    }
    config_ck = CheckpointConfig(
        save_checkpoint_steps=batches_per_epoch, keep_checkpoint_max=config.keep_checkpoint_max
    )
    callbacks += [ModelCheckpoint(prefix=config.model, directory="./ckpt_0/", config=config_ck)]
    lr = Tensor(
        zoo_train.get_lr(
            base_lr=config.lr,
            total_epochs=config.epochs,
            steps_per_epoch=batches_per_epoch,
            decay_steps=config.decay_epochs,
            decay_rate=config.decay_rate,
            warmup_steps=config.warmup_epochs,
            warmup_lr_init=config.warmup_lr_init,
            global_epoch=config.resume_start_epoch,
        )
    )
    optimizer = zoo_train._create_optim(net, lr)
    loss.add_flags_recursive(fp32=True, fp16=False)
    model = Model(
        net,
        loss,
        optimizer,
        loss_scale_manager=FixedLossScaleManager(config.loss_scale, drop_overflow_update=False),
        amp_level=config.amp_level,
        metrics=eval_metrics,
    )
    eval_log = {"Epoch": [], "Val_Loss": [], "Val_Top1-Acc": [], "Val_Top5-Acc": []}
    callbacks += [EvalCallBack(model, val_dataset, eval_per_epoch=1, eval_log=eval_log)]
    losses = []
    callbacks += [
        LambdaCallback(on_train_step_end=lambda rc: losses.append(float(rc.original_args().net_outputs.asnumpy())))
    ]
    model.train(config.epochs, train_dataset, callbacks=callbacks, dataset_sink_mode=False)

    assert len(losses) == config.epochs * batches_per_epoch and np.all(np.isfinite(losses))
    assert eval_log["Epoch"] == [1, 2] and all(0.0 <= a <= 1.0 for a in eval_log["Val_Top1-Acc"])
    out = capsys.readouterr().out
    assert "Validation performance improved! New best epoch: 1" in out and "epoch: 2 step: 4, loss is" in out
    assert sorted(os.listdir("ckpt_0")) == ["efficientnet_b0-1_4.ckpt", "efficientnet_b0-2_4.ckpt"]
    # SummaryCollector: the loss of step 1, the first five parameters' histograms (collect_freq 10 > 8 steps)
    # and the step's input images
    (summary_file,) = os.listdir(summary_dir)
    assert summary_file.startswith("events.out.events.summary.") and summary_file.endswith("_MS")
    events = summary_reader.events(os.path.join(summary_dir, summary_file))
    assert events[0]["version"] == "MindSpore.Event:1" and [e["step"] for e in events[1:]] == [1]
    values = {tag: (kind, value) for tag, kind, value in events[1]["values"]}
    assert values["loss/auto"] == ("scalar", pytest.approx(losses[0], rel=1e-6))
    first_five = [p.name + "/auto" for p in optimizer.parameters[:5]]
    assert sorted(values) == sorted(["loss/auto", "input_data/auto", *first_five])
    assert all(values[t][0] == "histogram" for t in first_five) and values["input_data/auto"][0] == "image"

    # eval.py, run as the script on the last checkpoint (its GRAPH_MODE, CPU: no sink mode)
    config.checkpoint = os.path.join("ckpt_0", "efficientnet_b0-2_4.ckpt")
    monkeypatch.setattr(sys, "argv", ["eval.py"])
    runpy.run_module("zoo.efficientnet.eval", run_name="__main__")
    printed = capsys.readouterr().out
    metrics = eval(printed.split("Metrics:")[1].splitlines()[0])  # the dict eval.py prints
    # the same metrics from the checkpoint's network, computed here
    context.set_context(mode=context.PYNATIVE_MODE)
    check = _net()
    load_param_into_net(check, load_checkpoint(config.checkpoint))
    check.set_train(False)
    top1 = top5 = total = 0
    losses = []
    for image, label in val_dataset.create_tuple_iterator(output_numpy=True):
        logits = check(Tensor(image)).asnumpy()
        order = np.argsort(-logits, axis=1)
        top1 += int((order[:, 0] == label).sum())
        top5 += int(sum(lab in row[:5] for lab, row in zip(label, order)))
        total += len(label)
        losses.append(float(loss(Tensor(logits), Tensor(label)).asnumpy()))
    assert metrics["Top1-Acc"] == pytest.approx(top1 / total) and metrics["Top5-Acc"] == pytest.approx(top5 / total)
    assert metrics["Loss"] == pytest.approx(np.mean(losses), rel=1e-5)
    assert total == len(labels)
