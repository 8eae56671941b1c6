"""Run by ``opforge run -n 2``: rank 1 dies (FAULT=exit: os._exit(3); signal: SIGKILL; raise: an exception)
while rank 0 waits in an AllReduce; the job must end and name rank 1."""

import os
import signal

import numpy as np

from opforge import Tensor, communication, ops

communication.init()
rank = communication.get_rank()
fault = os.environ["FAULT"]
if rank == 1:
    if fault == "exit":
        os._exit(3)
    if fault == "signal":
        os.kill(os.getpid(), signal.SIGKILL)
    if fault == "raise":
        raise ValueError("bug on rank 1")
ops.AllReduce()(Tensor(np.ones((4,), np.float32)))
print("done", rank)
