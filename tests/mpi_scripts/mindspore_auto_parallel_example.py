"""Run under ``mpiexec -n 2``: the example of MindSpore 2.6's ``AutoParallel`` docstring (an MNIST network cut into
2 pipeline stages by ``Pipeline``'s ``stage_config``, optimizer parallel by ``hsdp()``, trained by ``Model``), with
``mindspore`` changed to ``opforge`` and a small MNIST written to a temporary folder (``DATA_PATH``). One line
differs: MatMulCell's ``self.print("out is:", out)`` of a 32x512 tensor every step, left out. Prints
"EXAMPLE-OK <first loss> <last loss>" on rank 0 or exits 1."""

import math
import os
import pathlib
import sys
import tempfile
import warnings

import numpy as np

import opforge as ms
import opforge.dataset as ds
from opforge import Parameter, nn, ops
from opforge.common.initializer import HeUniform, initializer
from opforge.communication import get_rank, init
from opforge.nn.utils import no_init_parameters
from opforge.parallel.auto_parallel import AutoParallel
from opforge.parallel.nn import Pipeline, PipelineGradReducer
from opforge.train import LossMonitor, Model

warnings.simplefilter("ignore", UserWarning)  # the settings opforge records without acting on them say so


def write_mnist(directory: pathlib.Path, n: int) -> None:
    rng = np.random.default_rng(0)
    labels = rng.integers(0, 10, n).astype(np.uint8)
    images = (rng.integers(0, 64, (n, 28, 28)) + labels[:, None, None] * 19).astype(np.uint8)  # learnable
    for name, magic, array in (("images-idx3", 2051, images), ("labels-idx1", 2049, labels)):
        header = np.array([magic, *array.shape], ">u4").tobytes()
        (directory / f"train-{name}-ubyte").write_bytes(header + array.tobytes())


ms.set_context(mode=ms.GRAPH_MODE)
init()
ms.set_seed(1)
data_dir = pathlib.Path(tempfile.mkdtemp())
write_mnist(data_dir, 128)
os.environ["DATA_PATH"] = str(data_dir)


def create_dataset(batch_size):
    dataset_path = os.getenv("DATA_PATH")
    dataset = ds.MnistDataset(dataset_path)
    image_transforms = [
        ds.vision.Rescale(1.0 / 255.0, 0),
        ds.vision.Normalize(mean=(0.1307,), std=(0.3081,)),
        ds.vision.HWC2CHW(),
    ]
    dataset = dataset.map(image_transforms, "image")
    dataset = dataset.map(ds.transforms.TypeCast(ms.int32), "label")
    dataset = dataset.batch(batch_size)
    return dataset


dataset = create_dataset(32)


class MatMulCell(nn.Cell):
    def __init__(self, param=None, shape=None):
        super().__init__()
        if shape is None:
            shape = [28 * 28, 512]
        weight_init = HeUniform(math.sqrt(5))
        self.param = Parameter(initializer(weight_init, shape), name="param")
        if param is not None:
            self.param = param
        self.print = ops.Print()
        self.matmul = ops.MatMul()

    def construct(self, x):
        out = self.matmul(x, self.param)
        return out


class Network(nn.Cell):
    def __init__(self):
        super().__init__()
        self.flatten = nn.Flatten()
        self.layer1 = MatMulCell()
        self.relu1 = nn.ReLU()
        self.layer2 = nn.Dense(512, 512)
        self.relu2 = nn.ReLU()
        self.layer3 = nn.Dense(512, 10)

    def construct(self, x):
        x = self.flatten(x)
        x = self.layer1(x)
        x = self.relu1(x)
        x = self.layer2(x)
        x = self.relu2(x)
        logits = self.layer3(x)
        return logits


with no_init_parameters():
    net = Network()
    optimizer = nn.SGD(net.trainable_params(), 1e-2)
    pp_grad_reducer = PipelineGradReducer(optimizer.parameters, opt_shard=False)

loss_fn = nn.CrossEntropyLoss()
net_with_loss = Pipeline(
    nn.WithLossCell(net, loss_fn),
    4,
    stage_config={
        "_backbone.flatten": 0,
        "_backbone.layer1": 0,
        "_backbone.relu1": 0,
        "_backbone.layer2": 1,
        "_backbone.relu2": 1,
        "_backbone.layer3": 1,
    },
)
parallel_net = AutoParallel(net_with_loss, parallel_mode="semi_auto")
parallel_net.hsdp()
parallel_net.pipeline(stages=2)
parallel_net.dataset_strategy("data_parallel")
parallel_net.save_param_strategy_file(f"{data_dir}/param_{get_rank()}.ckpt")
parallel_net.set_group_ckpt_save_file(f"{data_dir}/comm_group_{get_rank()}.ckpt")
parallel_net.dump_local_norm(f"{data_dir}/local_norm_{get_rank()}")
parallel_net.disable_strategy_file_only_for_trainable_params()
parallel_net.enable_fp32_communication()
parallel_net.enable_device_local_norm()
parallel_net.enable_gradients_mean()
parallel_net.disable_gradient_fp32_sync()
parallel_net.disable_loss_repeated_mean()


class Losses(ms.train.Callback):
    def __init__(self):
        self.values = []

    def step_end(self, run_context):
        self.values.append(float(run_context.original_args().net_outputs.asnumpy()))


losses = Losses()
model = Model(network=parallel_net, optimizer=optimizer)
model.train(epoch=2, train_dataset=dataset, callbacks=[LossMonitor(per_print_times=1), losses])
if not (len(losses.values) == 8 and all(map(math.isfinite, losses.values)) and losses.values[-1] < losses.values[0]):
    sys.exit(f"the losses were {losses.values}")
if not (data_dir / f"param_{get_rank()}.ckpt").exists():
    sys.exit("no strategy file was written")
if get_rank() == 0:
    print("EXAMPLE-OK", losses.values[0], losses.values[-1])
