"""Model-zoo networks (tests/zoo/, written as MindSpore's model zoo writes them) build and train through
``Model.train`` on a ``GeneratorDataset``, as a MindSpore training script does, and lose loss."""

import numpy as np
import pytest
from zoo.lstm import SentimentNet
from zoo.mobilenetv2 import mobilenet_v2
from zoo.resnet import resnet18, resnet50
from zoo.vit import ViT

import opforge
from opforge import nn
from opforge.dataset import GeneratorDataset
from opforge.train import Callback, LossMonitor, Model


class StepLosses(Callback):
    """Records every step's loss, as a user's callback reads it from the run context."""

    def __init__(self):
        super().__init__()
        self.losses = []

    def on_train_step_end(self, run_context):
        self.losses.append(float(run_context.original_args().net_outputs.asnumpy()))


class Images:
    """A random-access source of (image, label) pairs: a small set the network can memorise."""

    def __init__(self, n, shape, classes, seed=0):
        rng = np.random.default_rng(seed)
        self.x = rng.standard_normal((n, *shape)).astype(np.float32)
        self.y = rng.integers(0, classes, n).astype(np.int32)

    def __getitem__(self, i):
        return self.x[i], self.y[i]

    def __len__(self):
        return len(self.y)


class Sentences(Images):
    def __init__(self, n, seq, vocab, classes, seed=0):
        rng = np.random.default_rng(seed)
        self.x = rng.integers(0, vocab, (n, seq)).astype(np.int32)
        self.y = rng.integers(0, classes, n).astype(np.int32)


def momentum(params):
    return nn.Momentum(params, 0.05, 0.9)


def adam(params):
    return nn.Adam(params, 0.005)


def _train(net, source, epochs, optimizer, batch=8):
    opforge.set_seed(0)
    dataset = GeneratorDataset(source, column_names=["data", "label"], shuffle=False).batch(batch, drop_remainder=True)
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    model = Model(net, loss_fn=loss, optimizer=optimizer(net.trainable_params()), metrics={"acc"})
    steps = StepLosses()
    model.train(epochs, dataset, callbacks=[steps, LossMonitor(per_print_times=100)])
    per_epoch = np.array(steps.losses).reshape(epochs, -1).mean(axis=1)
    return per_epoch, model, dataset


def _sentiment_net():
    table = np.random.default_rng(1).standard_normal((50, 16)).astype(np.float32)
    return SentimentNet(50, 16, 16, 2, True, 2, table, 8)


# name -> (network, data, epochs, optimizer)
NETWORKS = {
    "resnet18": (lambda: resnet18(class_num=4, width=8), lambda: Images(16, (3, 32, 32), 4), 6, momentum),
    "resnet50": (lambda: resnet50(class_num=4, width=4), lambda: Images(16, (3, 32, 32), 4), 6, momentum),
    "mobilenet_v2": (
        lambda: mobilenet_v2(num_classes=4, width_mult=0.25, last_channel=64),
        lambda: Images(16, (3, 32, 32), 4),
        8,
        adam,
    ),
    "vit": (
        lambda: ViT(image_size=16, patch_size=4, embed_dim=32, num_heads=4, num_classes=4),
        lambda: Images(16, (3, 16, 16), 4),
        8,
        adam,
    ),
    "lstm": (_sentiment_net, lambda: Sentences(16, 12, 50, 2), 8, adam),
}


@pytest.mark.parametrize("name", sorted(NETWORKS))
def test_network_trains_through_model_train(name):
    build, source, epochs, optimizer = NETWORKS[name]
    np.random.seed(0)
    opforge.set_seed(0)
    net = build()
    per_epoch, model, dataset = _train(net, source(), epochs, optimizer)
    assert np.all(np.isfinite(per_epoch))
    assert per_epoch[-1] < 0.8 * per_epoch[0], per_epoch
    metrics = model.eval(dataset)
    assert 0.0 <= metrics["acc"] <= 1.0
