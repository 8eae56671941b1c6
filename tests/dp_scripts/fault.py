"""Run under mpiexec or ``opforge run``: data-parallel training where rank 1, at step 3, raises
(FAULT=raise), exits (FAULT=exit: ``os._exit(3)``), is killed (FAULT=signal: SIGKILL) or hangs
(FAULT=hang), while rank 0 waits for it in the reducer. The job must end on every rank: naming rank 1
where it died, and with the reducer's timeout error (OPFORGE_COMM_TIMEOUT) on the ranks that waited
for a rank that hangs."""

import os
import signal
import time

import numpy as np

import opforge
from opforge import nn
from opforge.communication import get_rank, init

init()
rank = get_rank()
opforge.set_auto_parallel_context(parallel_mode=opforge.ParallelMode.DATA_PARALLEL, gradients_mean=True)
net = nn.Dense(8, 2)
step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), nn.SGD(net.trainable_params(), 0.1))
x, y = opforge.Tensor(np.ones((4, 8), np.float32)), opforge.Tensor(np.zeros((4, 2), np.float32))
try:
    for i in range(5):
        if i == 3 and rank == 1:
            fault = os.environ["FAULT"]
            if fault == "raise":
                raise ValueError("a bug on rank 1 at step 3")
            if fault == "exit":
                os._exit(3)
            if fault == "signal":
                os.kill(os.getpid(), signal.SIGKILL)
            time.sleep(3600)
        step(x, y)
        print(f"rank {rank}: step {i} done", flush=True)
except Exception as e:
    # MPI's launcher sometimes loses an aborting rank's last output: the error also goes to a file.
    if os.environ.get("FAULT_LOG"):
        with open(f"{os.environ['FAULT_LOG']}.{rank}", "w") as f:
            f.write(f"{type(e).__name__}: {e}\n")
    raise
