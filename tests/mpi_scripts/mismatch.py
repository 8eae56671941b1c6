"""Run under mpiexec: shapes and dtypes that differ between ranks raise on every rank, naming them."""

import numpy as np

import opforge
from opforge import Tensor, communication, ops
from opforge.communication import CommunicationError

communication.init()
rank, n = communication.get_rank(), communication.get_group_size()

cases = [
    (
        "AllReduce",
        lambda: ops.AllReduce()(Tensor(np.ones((2, rank + 1), np.float32))),
        lambda r: f"rank {r}: float32[2, {r + 1}]",
    ),
    (
        "AllReduce",
        lambda: ops.AllReduce()(Tensor(np.ones((2,), np.float32 if rank == 0 else np.float64))),
        lambda r: f"rank {r}: {'float32' if r == 0 else 'float64'}[2]",
    ),
    (
        "Broadcast",
        lambda: ops.Broadcast(0)((Tensor(np.ones((rank + 2,), np.int32)),)),
        lambda r: f"rank {r}: int32[{r + 2}]",
    ),
    (
        "AlltoAll",
        lambda: ops.AlltoAll(n, 0, 0)(Tensor(np.ones((n * (rank + 1),), np.int8))),
        lambda r: f"rank {r}: int8[{n * (r + 1)}]",
    ),
    (
        "ReduceScatter",
        lambda: ops.ReduceScatter("max")(Tensor(np.ones((n * (rank + 1),), np.int64))),
        lambda r: f"rank {r}: int64[{n * (r + 1)}]",
    ),
]
for name, call, part in cases:
    try:
        call()
        raise SystemExit(f"{name}: no error")
    except CommunicationError as e:
        text = str(e)
        assert text.startswith(f"For '{name}'"), text
        for r in range(n):
            assert part(r) in text, (part(r), text)
# different ops (SUM on one rank, MAX on another) are refused too
try:
    ops.AllReduce("sum" if rank == 0 else "max")(Tensor(np.ones((2,), np.float32)))
    raise SystemExit("ops: no error")
except CommunicationError as e:
    assert "other attrs" in str(e), str(e)
# Receive of another shape: the receiver raises naming both; the sender is not left waiting
if rank == 0:
    ops.Send(3, 1)(Tensor(np.ones((4,), np.float32)))
elif rank == 1:
    try:
        ops.Receive(3, 0, [5], opforge.float32)()
        raise SystemExit("Receive: no error")
    except CommunicationError as e:
        assert "expects float32[5]" in str(e) and "sent float32[4]" in str(e), str(e)
# and the world still works afterwards
out = ops.AllReduce()(Tensor(np.ones((3,), np.float32)))
assert (out.asnumpy() == n).all()
print(f"OK rank {rank}", flush=True)
