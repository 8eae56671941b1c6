"""SqueezeNet as MindSpore's model zoo runs it (tests/zoo/squeezenet: research/cv/squeezenet with ``mindspore``
replaced by ``opforge``): train.py's ``train_net()`` on JPEG class folders written here (``ImageFolderDataset``,
``RandomCropDecodeResize`` to 227, ``RandomHorizontalFlip``, ``RandomColorAdjust``, ``Normalize``,
``CutOut(112)``, ``HWC2CHW``; ``CrossEntropySmooth``; Nesterov ``Momentum`` on the poly learning rates;
``Model`` in dataset sink mode with ``ModelCheckpoint``) and eval.py's ``eval_net()`` (top-1 and top-5
accuracy) on its last checkpoint, checked against the loaded network's own counts."""

import copy
import os

import numpy as np
import pytest
from PIL import Image
from zoo.squeezenet import eval as zoo_eval
from zoo.squeezenet import train as zoo_train
from zoo.squeezenet.model_utils.config import config
from zoo.squeezenet.src.lr_generator import get_lr
from zoo.squeezenet.src.squeezenet import SqueezeNet

import opforge
import opforge.dataset as ds
from opforge import Tensor, context
from opforge.train.callback import LambdaCallback

COLORS = np.array([[220, 30, 30], [30, 220, 30], [30, 30, 220]])


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


def _write_images(root, per_class=4, seed=0):
    rng = np.random.default_rng(seed)
    for c, color in enumerate(COLORS):
        os.makedirs(os.path.join(root, f"class{c}"), exist_ok=True)
        for i in range(per_class):
            pixels = np.clip(color + rng.normal(0, 25, (40, 48, 3)), 0, 255).astype(np.uint8)
            Image.fromarray(pixels).save(os.path.join(root, f"class{c}", f"{i}.jpg"))
    return str(root)


def test_squeezenet_shapes_parameters_and_init():
    net = SqueezeNet(num_classes=1000)
    # torchvision's squeezenet1_0: 1,248,424 parameters
    assert sum(int(np.prod(p.shape)) for p in net.trainable_params()) == 1_248_424
    assert not net.final_conv.bias.asnumpy().any()
    w = net.features[0].weight.asnumpy()  # he_uniform: bound sqrt(6 / fan_in)
    bound = np.sqrt(6 / (3 * 7 * 7))
    assert np.abs(w).max() <= bound + 1e-6 and np.abs(w).max() > 0.9 * bound
    assert net.final_conv.weight.asnumpy().std() == pytest.approx(0.01, rel=0.1)  # 'normal': sigma 0.01
    net.set_train(False)
    out = net(Tensor(np.random.default_rng(0).standard_normal((1, 3, 227, 227)).astype(np.float32)))
    assert out.shape == (1, 1000) and np.all(out.asnumpy() >= 0)  # the ReLU before the mean


def test_poly_learning_rate():
    lr = get_lr(lr_init=0, lr_end=0, lr_max=0.01, total_epochs=2, warmup_epochs=0, pretrain_epochs=0,
                steps_per_epoch=2, lr_decay_mode="poly")  # fmt: skip
    np.testing.assert_allclose(lr, np.float32([0.01 * (1 - i / 4) ** 2 for i in range(4)]), rtol=1e-6)


def test_train_py_then_eval_py(tmp_path, monkeypatch):
    config.data_path = _write_images(tmp_path / "images")
    config.output_path = str(tmp_path / "ckpt")
    config.lr_max, config.epoch_size = 0.002, 4
    losses = []

    class Recording(zoo_train.Model):
        def train(self, *args, callbacks=None, **kwargs):
            record = LambdaCallback(
                on_train_step_end=lambda rc: losses.append(float(rc.original_args().net_outputs.asnumpy()))
            )
            return super().train(*args, callbacks=[*callbacks, record], **kwargs)

    monkeypatch.setattr(zoo_train, "Model", Recording)
    zoo_train.train_net()
    assert len(losses) == 4 and np.all(np.isfinite(losses)) and min(losses[1:]) < losses[0], losses
    names = sorted(os.listdir(config.output_path))
    assert names == [f"squeezenet_imagenet-{e}_6.ckpt" for e in range(1, 5)]

    config.checkpoint_file_path = os.path.join(config.output_path, names[-1])
    printed = []
    monkeypatch.setattr("builtins.print", lambda *a, **k: printed.append(a))
    zoo_eval.eval_net()
    (res,) = [a[1] for a in printed if a and a[0] == "result:"]
    assert set(res) == {"top_1_accuracy", "top_5_accuracy"} and res["top_5_accuracy"] == 1.0  # 3 classes of 5
    net = SqueezeNet(num_classes=config.class_num)
    opforge.load_param_into_net(net, opforge.load_checkpoint(config.checkpoint_file_path))
    net.set_train(False)
    data = zoo_eval.create_dataset(dataset_path=config.data_path, do_train=False, batch_size=config.batch_size)
    hits = total = 0
    for image, label in data.create_tuple_iterator(output_numpy=True):
        hits += int((net(Tensor(image)).asnumpy().argmax(1) == label).sum())
        total += len(label)
    assert total == 12 and res["top_1_accuracy"] == pytest.approx(hits / total)
