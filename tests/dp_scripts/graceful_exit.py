"""Run under ``mpiexec -n N`` with MS_ENABLE_GRACEFUL_EXIT=1 and a folder as argv[1]: MindSpore's graceful exit in
data parallel. Rank 0 writes ``{"GracefulExit": 1}`` into a shared JSON file after step 2; each rank's OnRequestExit
reads it at a step's beginning (a rank may see it one step later than another), and the step agrees across the
ranks (ExitByRequest's AllReduce), so every rank stops after the same step, once all have asked, each saving
rank_<rank>/Net_train.ckpt. Prints "GRACEFUL-OK <step>" on rank 0, or exits 1."""

import os
import sys

import numpy as np
from mpi4py import MPI

import opforge
from opforge import nn
from opforge.communication import get_group_size, get_rank, init
from opforge.dataset import NumpySlicesDataset
from opforge.train import Callback, LambdaCallback, Model, OnRequestExit

init()
rank, size = get_rank(), get_group_size()
folder = sys.argv[1]
config = os.path.join(folder, "exit.json")
opforge.set_auto_parallel_context(parallel_mode="data_parallel", gradients_mean=True)
opforge.set_seed(0)
net = nn.Dense(4, 2)
model = Model(net, nn.MSELoss(), nn.Momentum(net.trainable_params(), 0.1, 0.9))
rng = np.random.default_rng(0)
data = NumpySlicesDataset(
    {"x": rng.standard_normal((40, 4)).astype(np.float32), "y": rng.standard_normal((40, 2)).astype(np.float32)},
    shuffle=False,
    num_shards=size,
    shard_id=rank,
).batch(2)


class AskAfterStep2(Callback):
    def on_train_step_end(self, run_context):
        if rank == 0 and run_context.original_args().cur_step_num == 2:
            with open(config + ".tmp", "w") as f:
                f.write('{"GracefulExit": 1}')
            os.replace(config + ".tmp", config)


steps = []
record = LambdaCallback(on_train_step_end=lambda rc: steps.append(rc.original_args().cur_step_num))
model.train(1, data, callbacks=[AskAfterStep2(), OnRequestExit(directory=folder, config_file=config), record])
last = MPI.COMM_WORLD.allgather(steps[-1])
if len(set(last)) != 1 or not 3 <= last[0] < 20 // size:
    print(f"GRACEFUL-FAIL rank {rank}: the ranks stopped after steps {last}", flush=True)
    sys.exit(1)
if not os.path.isfile(os.path.join(folder, f"rank_{rank}", "Net_train.ckpt")):
    print(f"GRACEFUL-FAIL rank {rank}: no checkpoint", flush=True)
    sys.exit(1)
if rank == 0:
    print(f"GRACEFUL-OK {last[0]}", flush=True)
