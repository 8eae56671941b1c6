"""Run under mpiexec -n N: every collective and its bprop against NumPy on every rank, every dtype."""

import os
import sys

import numpy as np

import opforge
from opforge import Tensor, communication, ops
from opforge import dtype as mstype
from opforge.communication import CommunicationError

communication.init()
rank, n = communication.get_rank(), communication.get_group_size()
assert communication.GlobalComm.INITED and communication.GlobalComm.BACKEND == "mpi"
assert communication.get_local_rank() == rank and communication.get_local_rank_size() == n

REDUCE = mstype.int_type + mstype.uint_type + mstype.float_type + mstype.complex_type
ALL = mstype.all_types


def data(r, shape, dtype, salt=0):
    """Rank r's input: small integers (exact in every dtype, products included)."""
    g = np.random.default_rng(1000 * salt + r)
    if dtype is mstype.bool_:
        return g.integers(0, 2, shape).astype(bool)
    vals = g.integers(1, 4, shape)
    if dtype.np_dtype.kind == "c":
        vals = vals + 1j * g.integers(1, 3, shape)
    return vals.astype(dtype.np_dtype)


def same(got, want, what):
    got = got.asnumpy() if isinstance(got, Tensor) else got
    assert got.dtype == want.dtype and got.shape == want.shape, (
        f"{what}: {got.dtype}{got.shape} vs {want.dtype}{want.shape}"
    )
    assert np.array_equal(
        got.astype(np.complex128 if got.dtype.kind == "c" else np.float64),
        want.astype(np.complex128 if want.dtype.kind == "c" else np.float64),
    ), f"{what}: {got} vs {want}"


for t in REDUCE:
    shape = (3, 2)
    xs = [data(r, shape, t, 1) for r in range(n)]
    wide = [x.astype(np.complex128 if t.np_dtype.kind == "c" else np.float64) for x in xs]
    for op, ref in (("sum", np.sum), ("prod", np.prod), ("max", np.max), ("min", np.min)):
        if op in ("max", "min") and t in mstype.complex_type:
            continue
        got = ops.AllReduce(op)(Tensor(xs[rank]))
        want = ref(np.stack(wide), axis=0) if op in ("sum", "prod") else ref(np.stack(wide), axis=0)
        same(got, want.astype(t.np_dtype), f"AllReduce {op} {t}")
    rs_in = [data(r, (2 * n, 3), t, 2) for r in range(n)]
    got = ops.ReduceScatter("sum")(Tensor(rs_in[rank]))
    total = np.sum(np.stack([x.astype(np.complex128 if t.np_dtype.kind == "c" else np.float64) for x in rs_in]), axis=0)
    same(got, total[2 * rank : 2 * rank + 2].astype(t.np_dtype), f"ReduceScatter {t}")

for t in ALL:
    xs = [data(r, (2, 3), t, 3) for r in range(n)]
    same(ops.AllGather()(Tensor(xs[rank])), np.concatenate(xs), f"AllGather {t}")
    root = n - 1
    b = ops.Broadcast(root)((Tensor(xs[rank]), Tensor(xs[rank][:1])))
    assert isinstance(b, tuple) and len(b) == 2
    same(b[0], xs[root], f"Broadcast {t}")
    same(b[1], xs[root][:1], f"Broadcast {t} [1]")
    a2a = [data(r, (2 * n, 3), t, 4) for r in range(n)]
    got = ops.AlltoAll(n, 0, 1)(Tensor(a2a[rank]))
    want = np.concatenate([a2a[r][2 * rank : 2 * rank + 2] for r in range(n)], axis=1)
    same(got, want, f"AlltoAll {t}")
    # other (split_dim, concat_dim) pairs, on 3 dims: split before, after and at the concat dim
    a3 = [data(r, (2 * n, n, 3), t, 7) for r in range(n)]
    for split_dim, concat_dim in ((0, 2), (1, 0), (-2, 1), (1, -1), (0, 0)):
        got = ops.AlltoAll(n, split_dim, concat_dim)(Tensor(a3[rank]))
        want = np.concatenate([np.split(a3[r], n, axis=split_dim)[rank] for r in range(n)], axis=concat_dim)
        same(got, want, f"AlltoAll({split_dim}, {concat_dim}) {t}")
    # Send / Receive around a ring (even ranks send first so nothing waits on itself)
    if n > 1:
        nxt, prv = (rank + 1) % n, (rank - 1) % n
        send, recv = ops.Send(5, nxt), ops.Receive(5, prv, [2, 3], t)
        if rank % 2 == 0:
            send(Tensor(xs[rank]))
            got = recv()
        else:
            got = recv()
            send(Tensor(xs[rank]))
        same(got, xs[prv], f"Send/Receive {t}")

# zero-size and 0-d
same(ops.AllReduce()(Tensor(np.zeros((0, 3), np.float32))), np.zeros((0, 3), np.float32), "AllReduce [0, 3]")
same(ops.AllReduce()(Tensor(np.float32(rank))), np.float32(sum(range(n))), "AllReduce 0-d")

# bprops, against NumPy
x = Tensor(data(rank, (2, 3), mstype.float32, 5))
dx = opforge.grad(lambda v: (ops.AllReduce()(v) * float(rank + 1)).sum())(x)
same(dx, np.full((2, 3), sum(r + 1 for r in range(n)), np.float32), "grad AllReduce sum")
xs = [data(r, (2, 3), mstype.float32, 6) for r in range(n)]
dx = opforge.grad(lambda v: ops.AllReduce("max")(v).sum())(Tensor(xs[rank]))
same(dx, np.where(xs[rank] == np.max(np.stack(xs), 0), float(n), 0.0).astype(np.float32), "grad AllReduce max")
w = np.arange(2 * n * 3, dtype=np.float32).reshape(2 * n, 3)
dx = opforge.grad(lambda v: (ops.AllGather()(v) * Tensor(w * (rank + 1))).sum())(x)
same(dx, (w * sum(r + 1 for r in range(n)))[2 * rank : 2 * rank + 2], "grad AllGather")
xr = Tensor(data(rank, (2 * n, 3), mstype.float32, 7))
dx = opforge.grad(lambda v: (ops.ReduceScatter()(v) * float(rank + 1)).sum())(xr)
same(
    dx, np.repeat(np.arange(1, n + 1, dtype=np.float32), 2)[:, None] * np.ones((1, 3), np.float32), "grad ReduceScatter"
)
dx = opforge.grad(lambda v: (ops.Broadcast(0)((v,))[0] * float(rank + 1)).sum())(x)
want = np.full((2, 3), sum(r + 1 for r in range(n)), np.float32) if rank == 0 else np.zeros((2, 3), np.float32)
same(dx, want, "grad Broadcast")
xa = Tensor(data(rank, (2 * n, 3), mstype.float32, 8))
wa = np.arange(2 * 3 * n, dtype=np.float32).reshape(2, 3 * n)
dx = opforge.grad(lambda v: (ops.AlltoAll(n, 0, 1)(v) * Tensor(wa + rank)).sum())(xa)
# out[:, 3r:3r+3] on rank q came from rank r's rows 2q:2q+2 -> rank r's row block q gets (wa + q)[:, 3r:3r+3]
want = np.concatenate([(wa + q)[:, 3 * rank : 3 * rank + 3] for q in range(n)], axis=0)
same(dx, want, "grad AlltoAll")
if n > 1 and rank < 2:
    # Send's bprop receives the gradient that the destination sends back
    if rank == 0:
        dx = opforge.grad(lambda v: ops.Send(9, 1)(v * 2.0).sum() * 0.0)(x)
        same(dx, np.full((2, 3), 2 * 7.0, np.float32), "grad Send")
    else:
        got = ops.Receive(9, 0, [2, 3], mstype.float32)()
        ops.Send(9, 0)(Tensor(np.full((2, 3), 7.0, np.float32)))

# groups
if n >= 2:
    communication.create_group("pair", [1, 0])
    if rank in (0, 1):
        assert communication.get_group_size("pair") == 2 and communication.get_rank("pair") == 1 - rank
        got = ops.AllGather("pair")(Tensor(np.array([rank], np.int32)))
        same(got, np.array([1, 0], np.int32), "AllGather group")
    communication.destroy_group("pair")

# uneven AllGather inputs: a clear error on every rank (unless OPFORGE_COMM_CHECK=0 switched the check off)
try:
    if os.environ.get("OPFORGE_COMM_CHECK") == "0":
        raise CommunicationError(" ".join(f"rank {r}: float32[{r + 1}, 2]" for r in range(n)) + " AllGather")
    ops.AllGather()(Tensor(np.zeros((rank + 1, 2), np.float32)))
    ok = n == 1
except CommunicationError as e:
    ok = "AllGather" in str(e) and all(f"rank {r}: float32[{r + 1}, 2]" in str(e) for r in range(n))
assert ok, "uneven AllGather"

opforge.communication.release()
print(f"OK rank {rank} of {n}", flush=True)
sys.exit(0)
