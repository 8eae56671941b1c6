"""Run under mpiexec: rank 1 raises (FAULT=raise), exits (FAULT=exit) or hangs (FAULT=hang) while the
others wait in an AllReduce (or, with COLLECTIVE=allgather_object, in ``allgather_object``); the job must end
on every rank, naming rank 1 where it raised."""

import os
import sys
import time

import numpy as np

from opforge import Tensor, communication, ops
from opforge.communication import management

communication.init()
rank = communication.get_rank()
fault = os.environ["FAULT"]
if rank == 1:
    print(f"FAULT AT {time.time():.3f}", flush=True)
    if fault == "raise":
        raise ValueError("a bug on rank 1")
    if fault == "exit":
        os._exit(3)
    if fault == "hang":
        time.sleep(3600)
if os.environ.get("COLLECTIVE") == "allgather_object":  # the exchange outside operators (strategy checks)
    management.allgather_object(rank)
else:
    ops.AllReduce()(Tensor(np.ones((4,), np.float32)))
print(f"rank {rank}: AllReduce returned", flush=True)
sys.exit(0)
