"""AlexNet as MindSpore's model zoo runs it (tests/zoo/alexnet: research/cv/Alexnet with ``mindspore`` replaced
by ``opforge``) on CIFAR-10 binary files written here: train.py's CIFAR-10 pieces (``create_dataset_cifar10``
with ``RandomCrop((32, 32), [4, 4, 4, 4])``, ``Resize`` to 227, ``Rescale``, NHWC batches the network's
``DataNormTranspose`` normalizes and transposes; ``SoftmaxCrossEntropyWithLogits``, ``Momentum`` on
``get_lr_cifar10``, ``Model`` with ``amp_level="O2"`` as its GPU branch, ``ModelCheckpoint``: train.py's
``train_alexnet`` itself accepts only Ascend and GPU targets) and eval.py's ``eval_alexnet()`` (``Accuracy``) on
the checkpoint, checked against the loaded network's own count."""

import copy
import os

import numpy as np
import pytest
from zoo.alexnet import eval as zoo_eval
from zoo.alexnet.src.alexnet import AlexNet
from zoo.alexnet.src.dataset import create_dataset_cifar10
from zoo.alexnet.src.generator_lr import get_lr_cifar10
from zoo.alexnet.src.model_utils.config import config

import opforge
import opforge.dataset as ds
import opforge.nn as nn
from opforge import Tensor, context
from opforge.train import Model
from opforge.train.callback import CheckpointConfig, LambdaCallback, ModelCheckpoint

COLORS = np.array([[220, 30, 30], [30, 220, 30], [30, 30, 220], [200, 200, 40]])


@pytest.fixture(autouse=True)
def _state():
    saved = copy.deepcopy(vars(config))
    ds.config._state["seed"] = None
    np.random.seed(0)
    opforge.set_seed(0)
    yield
    vars(config).clear()
    vars(config).update(saved)
    ds.config._state["seed"] = None
    context.set_context(mode=context.PYNATIVE_MODE)


def _write_cifar(root, count=8, seed=0):
    """CIFAR-10's binary layout (data_batch_1.bin and test_batch.bin hold the same rows)."""
    rng = np.random.default_rng(seed)
    labels = (np.arange(count) % 4).astype(np.uint8)
    planes = COLORS[labels][:, :, None, None] + rng.normal(0, 20, (count, 3, 32, 32))
    images = np.clip(planes, 0, 255).astype(np.uint8)
    records = np.concatenate([labels[:, None], images.reshape(count, -1)], 1).tobytes()
    os.makedirs(root, exist_ok=True)
    for name in ("data_batch_1.bin", "test_batch.bin"):
        with open(os.path.join(root, name), "wb") as f:
            f.write(records)
    return str(root)


def test_alexnet_shapes_and_data_norm_transpose():
    net = AlexNet(10, phase="test", dataset_name="cifar10")
    assert net.fc1.in_channels == 6 * 6 * 256 and net.dropout.p == 0.0  # phase 'test': keep everything
    x = np.random.default_rng(0).random((1, 227, 227, 3)).astype(np.float32)
    mean, std = np.float32([0.4914, 0.4822, 0.4465]), np.float32([0.2023, 0.1994, 0.2010])
    want = ((x - mean) / std).transpose(0, 3, 1, 2)
    np.testing.assert_allclose(net.data_trans(Tensor(x)).asnumpy(), want, rtol=1e-5, atol=1e-5)
    net.set_train(False)
    assert net(Tensor(x)).shape == (1, 10)
    lr = get_lr_cifar10(0, 0.002, 5, 2)
    np.testing.assert_allclose(lr, np.float32([0.002] * 8 + [0.0002] * 2), rtol=1e-6)


def test_train_then_eval_py(tmp_path, monkeypatch):
    config.data_path = _write_cifar(tmp_path / "cifar")
    config.ckpt_path = str(tmp_path / "ckpt")
    config.learning_rate, config.epoch_size = 0.01, 2
    ds_train = create_dataset_cifar10(config, config.data_path, config.batch_size, target=config.device_target)
    network = AlexNet(config.num_classes, phase="train", dataset_name=config.dataset_name)
    step_per_epoch = ds_train.get_dataset_size()
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    lr = Tensor(get_lr_cifar10(0, config.learning_rate, config.epoch_size, step_per_epoch))
    opt = nn.Momentum(network.trainable_params(), lr, config.momentum)
    model = Model(network, loss_fn=loss, optimizer=opt, metrics={"Accuracy": nn.Accuracy()}, amp_level="O2")
    ckpt = ModelCheckpoint(
        prefix="checkpoint_alexnet",
        directory=config.ckpt_path,
        config=CheckpointConfig(save_checkpoint_steps=config.save_checkpoint_steps, keep_checkpoint_max=10),
    )
    losses = []
    record = LambdaCallback(on_train_step_end=lambda rc: losses.append(rc.original_args().net_outputs))
    model.train(config.epoch_size, ds_train, callbacks=[ckpt, record], dataset_sink_mode=False)
    values = [float((v[0] if isinstance(v, tuple) else v).asnumpy()) for v in losses]
    assert len(values) == 8 and np.all(np.isfinite(values)) and min(values[1:]) < values[0], (
        values
    )  # 16 rows: both files
    assert os.listdir(config.ckpt_path) == ["checkpoint_alexnet-2_4.ckpt"]

    config.ckpt_path = os.path.join(config.ckpt_path, "checkpoint_alexnet-2_4.ckpt")
    printed = []
    monkeypatch.setattr("builtins.print", lambda *a, **k: printed.append(a))
    zoo_eval.eval_alexnet()
    (line,) = [a[0] for a in printed if a and str(a[0]).startswith("result : ")]
    acc = float(line.split("'Accuracy': ")[1].rstrip("}"))
    net = AlexNet(config.num_classes, phase="test", dataset_name=config.dataset_name)
    opforge.load_param_into_net(net, opforge.load_checkpoint(config.ckpt_path))
    net.set_train(False)
    data = create_dataset_cifar10(config, config.data_path, config.batch_size, status="test", target="CPU")  # 16 rows
    hits = total = 0
    for image, label in data.create_tuple_iterator(output_numpy=True):
        hits += int((net(Tensor(image)).asnumpy().argmax(1) == label).sum())
        total += len(label)
    assert total == 16 and acc == pytest.approx(hits / total)
