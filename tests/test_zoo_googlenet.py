"""GoogleNet as MindSpore's model zoo runs it (tests/zoo/googlenet: research/cv/googlenet with ``mindspore``
replaced by ``opforge``): train.py's ``run_train()`` on CIFAR-10 binary files written here (``Cifar10Dataset``
with ``RandomCrop((32, 32), (4, 4, 4, 4))``, ``RandomHorizontalFlip``, ``Resize``, ``Rescale``, ``Normalize``,
``HWC2CHW``; ``Momentum`` on the step learning rates; ``Model`` with ``amp_level="O2"`` in dataset sink mode;
``ModelCheckpoint``) and eval.py's ``run_eval()`` on its checkpoint (the ``acc`` metric), then the ImageNet
branch (``ImageFolderDataset``, ``CrossEntropySmooth``, the warm-up step learning rates, parameter groups and
``FixedLossScaleManager``). The architecture, the loss and the learning rates are checked against
references."""

import copy
import os

import numpy as np
import pytest
from PIL import Image
from zoo.googlenet import eval as zoo_eval
from zoo.googlenet import train as zoo_train
from zoo.googlenet.model_utils.config import config
from zoo.googlenet.src.CrossEntropySmooth import CrossEntropySmooth
from zoo.googlenet.src.googlenet import GoogleNet
from zoo.googlenet.src.lr_scheduler.warmup_step_lr import warmup_step_lr

import opforge
import opforge.dataset as ds
from opforge import Tensor, context
from opforge.train.callback import LambdaCallback

COLORS = np.array([[220, 30, 30], [30, 220, 30], [30, 30, 220], [200, 200, 40]])


@pytest.fixture(autouse=True)
def _state():
    saved = copy.deepcopy(vars(config))
    ds.config.set_seed(5)  # the dataset's shuffles and augmentations: the same losses in every run
    np.random.seed(0)
    opforge.set_seed(0)
    yield
    vars(config).clear()
    vars(config).update(saved)
    ds.config._state["seed"] = None
    context.set_context(mode=context.PYNATIVE_MODE)


def _write_cifar(root, count=16, seed=0):
    """CIFAR-10's binary layout under cifar-10-batches-bin (train) and cifar-10-verify-bin (eval): a label
    byte, then the red, green and blue 32 x 32 planes; images of four colours (labels 0..3) with noise."""
    rng = np.random.default_rng(seed)
    labels = (np.arange(count) % 4).astype(np.uint8)
    planes = COLORS[labels][:, :, None, None] + rng.normal(0, 20, (count, 3, 32, 32))
    images = np.clip(planes, 0, 255).astype(np.uint8)
    records = np.concatenate([labels[:, None], images.reshape(count, -1)], 1).tobytes()
    for sub, name in (("cifar-10-batches-bin", "data_batch_1.bin"), ("cifar-10-verify-bin", "test_batch.bin")):
        os.makedirs(os.path.join(root, sub), exist_ok=True)
        with open(os.path.join(root, sub, name), "wb") as f:
            f.write(records)
    return str(root)


def _write_images(root, per_class=3, seed=0):
    rng = np.random.default_rng(seed)
    for c, color in enumerate(COLORS[:3]):
        os.makedirs(os.path.join(root, f"class{c}"), exist_ok=True)
        for i in range(per_class):
            pixels = np.clip(color + rng.normal(0, 25, (40, 48, 3)), 0, 255).astype(np.uint8)
            Image.fromarray(pixels).save(os.path.join(root, f"class{c}", f"{i}.jpg"))
    return str(root)


class _Recording(zoo_train.Model):
    """The zoo's Model, recording the step losses."""

    losses: list = []

    def train(self, *args, callbacks=None, **kwargs):
        record = LambdaCallback(
            on_train_step_end=lambda rc: _Recording.losses.append(float(rc.original_args().net_outputs.asnumpy()))
        )
        return super().train(*args, callbacks=[*callbacks, record], **kwargs)


def test_googlenet_has_the_paper_inception_blocks():
    net = GoogleNet(num_classes=1000)
    assert [net.block3a.b1.conv.out_channels, net.block5b.b4.conv.out_channels] == [64, 128]
    # torchvision's googlenet (no aux heads) has 6,624,904 parameters; the zoo's 3x3 "5x5" branch and
    # BatchNorm (gamma, beta), conv biases off: counted here from the block table
    table = [(192, 64, 96, 128, 16, 32, 32), (256, 128, 128, 192, 32, 96, 64), (480, 192, 96, 208, 16, 48, 64),
             (512, 160, 112, 224, 24, 64, 64), (512, 128, 128, 256, 24, 64, 64), (512, 112, 144, 288, 32, 64, 64),
             (528, 256, 160, 320, 32, 128, 128), (832, 256, 160, 320, 32, 128, 128),
             (832, 384, 192, 384, 48, 128, 128)]  # fmt: skip

    def block(i, o, k):
        return i * o * k * k + 2 * o

    want = block(3, 64, 7) + block(64, 64, 1) + block(64, 192, 3) + 1024 * 1000 + 1000
    for cin, n1, r3, n3, r5, n5, pp in table:
        want += block(cin, n1, 1) + block(cin, r3, 1) + block(r3, n3, 3) + block(cin, r5, 1) + block(r5, n5, 3)
        want += block(cin, pp, 1)
    assert sum(int(np.prod(p.shape)) for p in net.trainable_params()) == want
    # TruncatedNormal(0.02) weights (MindSpore 2's bounds a=-2, b=2 are absolute: hardly any truncation)
    w = net.block4c.b2[1].conv.weight.asnumpy()
    assert abs(w.mean()) < 1e-3 and w.std() == pytest.approx(0.02, rel=0.05)
    net.set_train(False)
    out = net(Tensor(np.random.default_rng(0).standard_normal((2, 3, 32, 32)).astype(np.float32)))
    assert out.shape == (2, 1000) and np.all(np.isfinite(out.asnumpy()))


def test_loss_and_learning_rates_match_references():
    rng = np.random.default_rng(1)
    logits = rng.standard_normal((6, 5)).astype(np.float32)
    labels = rng.integers(0, 5, 6).astype(np.int32)
    got = CrossEntropySmooth(sparse=True, reduction="mean", smooth_factor=0.1, num_classes=5)(
        Tensor(logits), Tensor(labels)
    )
    target = np.full((6, 5), 0.1 / 4)
    target[np.arange(6), labels] = 0.9
    shifted = logits - logits.max(1, keepdims=True)
    log_softmax = shifted - np.log(np.exp(shifted).sum(1, keepdims=True))
    np.testing.assert_allclose(got.asnumpy(), np.mean(-(target * log_softmax).sum(1)), rtol=1e-5)

    lr = zoo_train.lr_steps_cifar10(0, lr_max=0.1, total_epochs=5, steps_per_epoch=2)
    np.testing.assert_allclose(lr, np.float32([0.1] * 3 + [0.01] * 3 + [0.001] * 2 + [0.0001] * 2), rtol=1e-6)
    lr = warmup_step_lr(0.1, [2, 3], 2, 1, 4, gamma=0.3)
    np.testing.assert_allclose(lr, np.float32([0.05, 0.1, 0.1, 0.1, 0.03, 0.03, 0.009, 0.009]), rtol=1e-6)


def test_train_py_then_eval_py_on_cifar10(tmp_path, monkeypatch):
    config.train_data_path = config.val_data_path = _write_cifar(tmp_path / "cifar")
    config.ckpt_save_dir = str(tmp_path / "ckpt")
    config.lr_init = 0.01
    config.epoch_size = 3
    _Recording.losses = []
    monkeypatch.setattr(zoo_train, "Model", _Recording)
    zoo_train.run_train()
    # dataset sink mode: one step-end per epoch of 4 steps; the checkpoint written at the end
    losses = _Recording.losses
    assert len(losses) == 3 and np.all(np.isfinite(losses)) and losses[-1] < losses[0], losses
    assert os.listdir(config.ckpt_save_dir) == ["train_googlenet_cifar10-3_4.ckpt"]

    config.checkpoint_path = os.path.join(config.ckpt_save_dir, "train_googlenet_cifar10-3_4.ckpt")
    results = []
    monkeypatch.setattr("builtins.print", lambda *a, **k: results.append(a))
    zoo_eval.run_eval()
    (acc,) = [a[1] for a in results if a and a[0] == "accuracy: "]
    assert set(acc) == {"acc"} and 0.0 <= acc["acc"] <= 1.0
    # eval.py's number is the accuracy of the loaded network on the verify files (no shuffle, 16 rows)
    net = GoogleNet(num_classes=config.num_classes)
    opforge.load_param_into_net(net, opforge.load_checkpoint(config.checkpoint_path))
    net.set_train(False)
    data = zoo_eval.create_dataset_cifar10(config.val_data_path, 1, False, cifar_cfg=config)
    hits = total = 0
    for image, label in data.create_tuple_iterator(output_numpy=True):
        hits += int((net(Tensor(image)).asnumpy().argmax(1) == label).sum())
        total += len(label)
    assert total == 16 and acc["acc"] == pytest.approx(hits / total)


def test_train_py_imagenet_branch(tmp_path, monkeypatch):
    config.dataset_name = config.name = "imagenet"
    config.train_data_path = _write_images(tmp_path / "images")
    config.ckpt_save_dir = str(tmp_path / "ckpt")
    config.num_classes, config.lr_init, config.epoch_size, config.batch_size = 3, 0.001, 2, 3
    vars(config).update(lr_scheduler="exponential", lr_epochs=[1], lr_gamma=0.3, eta_min=0.0, T_max=150)
    vars(config).update(warmup_epochs=0, is_dynamic_loss_scale=0, loss_scale=1024, label_smooth_factor=0.1)
    config.use_label_smooth = True
    config.image_height = config.image_width = 96  # 3 x 3 before the pooling: fp16 BatchNorm (O2) stays finite
    _Recording.losses = []
    monkeypatch.setattr(zoo_train, "Model", _Recording)
    zoo_train.run_train()
    assert len(_Recording.losses) == 2 and np.all(np.isfinite(_Recording.losses))
    assert os.listdir(config.ckpt_save_dir) == ["train_googlenet_imagenet-2_3.ckpt"]
