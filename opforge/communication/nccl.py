"""The GPU device's communicator of one group: NCCL through CuPy (``cupy.cuda.nccl``), on the current
stream. ``init("nccl")`` makes one per group: rank 0 of the group draws NCCL's unique id and sends it
to the others over the group's MPI communicator, which also carries the header check (the same as
the CPU's, ``opforge/communication/mpi.py``) before each collective.

Importing this module needs no CuPy (``init`` imports it on the GPU only); making a communicator
does. The tests' CUDA emulation has no NCCL: this runs on a real GPU only (``tests/test_gpu_nccl.py``,
a 1-rank communicator: every collective for every dtype, and the data-parallel TrainOneStepCell; first
run on an H100, 2026-11-27). The timeout of the CPU's communicator covers the header exchange only
(NCCL calls are queued on the stream and return at once).

NCCL has no int16, uint16, bool or complex types: data movement sends bytes; reductions of int16 and
uint16 run in int32 (the same wrapped result: 2**16 divides 2**32), bfloat16 in float32 where the
NCCL has no bfloat16, complex SUM on the (real, imag) float pairs; complex PROD is refused.
"""

from __future__ import annotations

import numpy as np

from opforge.communication.management import CommunicationError
from opforge.communication.mpi import HEADER, MpiCommunicator, describe, header

__all__ = ["NcclCommunicator"]

_OP_CODES = {"sum": 1, "max": 2, "min": 3, "prod": 4}


class NcclCommunicator:
    def __init__(self, runtime, mpi_comm, name: str, timeout: float, check: bool):
        import cupy
        from cupy.cuda import nccl

        self.cupy, self.nccl, self.runtime = cupy, nccl, runtime
        self.host = MpiCommunicator(mpi_comm, name, timeout, check)  # headers, the unique id, timeouts
        self.name, self.rank, self.size = name, self.host.rank, self.host.size
        self.check = self.host.check
        uid = nccl.get_unique_id() if self.rank == 0 else None
        uid = mpi_comm.bcast(uid, root=0)
        self.comm = nccl.NcclCommunicator(self.size, uid, self.rank)
        self.ops = {"sum": nccl.NCCL_SUM, "prod": nccl.NCCL_PROD, "max": nccl.NCCL_MAX, "min": nccl.NCCL_MIN}
        self.types = {
            "int8": nccl.NCCL_INT8, "uint8": nccl.NCCL_UINT8, "int32": nccl.NCCL_INT32, "uint32": nccl.NCCL_UINT32,
            "int64": nccl.NCCL_INT64, "uint64": nccl.NCCL_UINT64, "float16": nccl.NCCL_FLOAT16,
            "float32": nccl.NCCL_FLOAT32, "float64": nccl.NCCL_FLOAT64,
        }  # fmt: skip
        if hasattr(nccl, "NCCL_BFLOAT16"):
            self.types["bfloat16"] = nccl.NCCL_BFLOAT16

    def check_same(self, op_name: str, kind: int, code: int, arrays) -> None:
        """Every rank about to run the same collective on the same arrays, over MPI (the CPU's check)."""
        self.host.check_same(op_name, kind, code, arrays)

    def _stream(self) -> int:
        return self.cupy.cuda.get_current_stream().ptr

    @staticmethod
    def _ptr(a) -> int:
        return a.data.ptr

    def _typed(self, op_name, x, op):
        """(array, NCCL type, element count, dtype to round back to or None) for a reduction of ``x``."""
        name = x.dtype.name
        if name in self.types:
            return x, self.types[name], x.size, None
        if name in ("int16", "uint16"):
            return x.astype("int32"), self.types["int32"], x.size, x.dtype
        if name == "bfloat16":  # an NCCL without bfloat16
            return x.astype("float32"), self.types["float32"], x.size, x.dtype
        if name in ("complex64", "complex128") and op == "sum":
            return x, self.types["float32" if name == "complex64" else "float64"], x.size * 2, None
        raise CommunicationError(f"For '{op_name}', NCCL cannot reduce {name} with the op '{op}'.")

    def _reduce(self, op_name, call, x, out, op, parts=1):
        data, nccl_type, count, back = self._typed(op_name, x, op)
        target = out if back is None else self.cupy.empty(out.shape, data.dtype)
        call(self._ptr(data), self._ptr(target), count // parts, nccl_type, self.ops[op], self._stream())
        if back is not None:
            out[...] = target.astype(back)

    def allreduce(self, op_name, x, out, op) -> None:
        self.host.check_same(op_name, 1, _OP_CODES[op], (x,))
        self._reduce(op_name, self.comm.allReduce, x, out, op)

    def reduce_scatter(self, op_name, x, out, op) -> None:
        self.host.check_same(op_name, 2, _OP_CODES[op], (x,))
        self._reduce(op_name, self.comm.reduceScatter, x, out, op, self.size)

    def allgather(self, op_name, x, out) -> None:
        self.host.check_same(op_name, 3, 0, (x,))
        self.comm.allGather(self._ptr(x), self._ptr(out), x.nbytes, self.nccl.NCCL_UINT8, self._stream())

    def broadcast(self, op_name, xs, outs, root) -> None:
        self.host.check_same(op_name, 4, root, xs)
        for x, out in zip(xs, outs):
            self.comm.broadcast(self._ptr(x), self._ptr(out), out.nbytes, self.nccl.NCCL_UINT8, root, self._stream())

    def alltoall(self, op_name, x, out, split_dim, concat_dim) -> None:
        self.host.check_same(op_name, 5, split_dim * 64 + concat_dim, (x,))
        cp, n = self.cupy, self.size
        send = cp.ascontiguousarray(cp.stack(cp.split(x, n, axis=split_dim)))
        recv = cp.empty_like(send)
        chunk, stream = send[0].nbytes, self._stream()
        self.nccl.groupStart()
        for peer in range(n):
            self.comm.send(self._ptr(send) + peer * chunk, chunk, self.nccl.NCCL_UINT8, peer, stream)
            self.comm.recv(self._ptr(recv) + peer * chunk, chunk, self.nccl.NCCL_UINT8, peer, stream)
        self.nccl.groupEnd()
        out[...] = cp.concatenate(list(recv), axis=concat_dim) if n > 1 else recv[0]

    def send(self, op_name, x, dest, tag) -> None:
        self.host._check_peer(op_name, "dest_rank", dest)
        self.host.wait(op_name, self.host.comm.Isend(header(6, 0, x), dest=dest, tag=tag))  # the header, over MPI
        self.comm.send(self._ptr(x), x.nbytes, self.nccl.NCCL_UINT8, dest, self._stream())

    def recv(self, op_name, out, src, tag) -> None:
        self.host._check_peer(op_name, "src_rank", src)
        h = np.empty(HEADER, np.int64)
        self.host.wait(op_name, self.host.comm.Irecv(h, source=src, tag=tag))
        mine = header(6, 0, out)
        if not (h == mine).all():
            raise CommunicationError(
                f"For '{op_name}', rank {self.rank} of the group '{self.host.group_name}' expects {describe(mine)} "
                f"from rank {src} (tag {tag}), but rank {src} sent {describe(h)}."
            )
        self.comm.recv(self._ptr(out), out.nbytes, self.nccl.NCCL_UINT8, src, self._stream())
