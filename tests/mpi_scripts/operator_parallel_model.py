"""Run under ``mpiexec -n N`` (N even; 8 is MindSpore's operator-parallel tutorial): a MindSpore-style program
written against ``mindspore`` with only its imports changed, in GRAPH_MODE.

The network of MindSpore's operator-parallel sample: a MatMul split ((2, N/2), (N/2, 1)) (the rows over 2 ranks, the
reduced dim over N/2: partial sums), a ReLU split ((N, 1),) (a ReduceScatter of those sums), trained by
``Model.train`` on a ``GeneratorDataset`` with ``LossMonitor`` and ``ModelCheckpoint``, the loss
``SoftmaxCrossEntropyWithLogits`` per row (a Tensor split as the ReLU's rows, which the callbacks read whole).
Rank 0 trains the same network in one process and prints "OPPAR-OK <steps>" when every step's loss and the final
weight are equal, or exits 1. The traced step is replayed from the third step: its loss, a split Tensor, must be
each replay's own.
"""

import os
import sys

import numpy as np

from opforge import Model, Parameter, context, set_seed
from opforge import communication as D
from opforge import dataset as ds
from opforge.common.initializer import initializer
from opforge.dispatch.sharding import gather_whole
from opforge.nn import Cell, Momentum, SoftmaxCrossEntropyWithLogits
from opforge.ops import operations as ops
from opforge.train.callback import Callback, LossMonitor, ModelCheckpoint

STEPS = 4


class Net(Cell):
    def __init__(self, ranks: int):
        super().__init__()
        self.matmul = ops.MatMul()
        self.relu = ops.ReLU()
        if ranks > 1:
            self.matmul.shard(((2, ranks // 2), (ranks // 2, 1)))
            self.relu.shard(((ranks, 1),))
        self.weight = Parameter(initializer("normal", [32, 16]), "w1")

    def construct(self, x):
        return self.relu(self.matmul(x, self.weight))


class Losses(Callback):
    def __init__(self):
        self.values = []

    def on_train_step_end(self, run_context):
        self.values.append(run_context.original_args().net_outputs.asnumpy())


def train(ranks: int, folder: str):
    set_seed(5)
    np.random.seed(1)
    x = np.random.rand(16, 32).astype(np.float32)
    y = np.random.rand(16, 16).astype(np.float32)

    def generate():
        for _ in range(STEPS):
            yield x, y

    net = Net(ranks)
    losses = Losses()
    model = Model(net, loss_fn=SoftmaxCrossEntropyWithLogits(), optimizer=Momentum(net.trainable_params(), 0.01, 0.9))
    callbacks = [LossMonitor(), ModelCheckpoint(directory=folder), losses]
    model.train(1, ds.GeneratorDataset(generate, ["input", "label"]), callbacks=callbacks, dataset_sink_mode=False)
    return losses.values, gather_whole(net.weight).asnumpy()


context.set_context(mode=context.GRAPH_MODE)
D.init()
rank, size = D.get_rank(), D.get_group_size()
root = sys.argv[1] if len(sys.argv) > 1 else "."
context.set_auto_parallel_context(parallel_mode="semi_auto_parallel", device_num=size, full_batch=True)
losses, weight = train(size, os.path.join(root, f"rank_{rank}"))
context.reset_auto_parallel_context()
if rank == 0:
    want_losses, want_weight = train(1, os.path.join(root, "one"))
    for k, (got, want) in enumerate(zip(losses, want_losses)):
        if got.shape != want.shape or not np.allclose(got, want, rtol=1e-5, atol=1e-6):
            print(f"OPPAR-FAIL step {k + 1}: loss {got} != {want}", flush=True)
            sys.exit(1)
    if len(losses) != STEPS or not np.allclose(weight, want_weight, rtol=1e-5, atol=1e-6):
        print(f"OPPAR-FAIL steps {len(losses)}, weight max difference {np.max(np.abs(weight - want_weight))}")
        sys.exit(1)
    print(f"OPPAR-OK {len(losses)}", flush=True)
