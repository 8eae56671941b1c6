"""The CPU device's communicator of one group: MPI through mpi4py.

Each collective is one non-blocking MPI call (``Iallreduce``, ``Iallgather``, ...) whose request is
polled until it completes or ``timeout`` seconds pass, so a rank whose partners never come raises a
``CommunicationError`` naming the operator and the group instead of waiting forever.

Before the payload, unless ``check`` is off (``OPFORGE_COMM_CHECK=0``), the ranks exchange a small
header (an ``Iallgather`` of 13 int64: the call's kind and attrs, its dtype and shape), so ranks that
disagree all raise the same error naming the operator and every rank's dtype and shape, instead of
reducing garbage or hanging. Send and Receive send the header ahead of the payload.

MPI has no 16-bit float types: float16 and bfloat16 are moved as their bits, and reduced (SUM, MAX,
MIN, PROD) by widening to float32, reducing in float32 and rounding once to the half type at the end
(more accurate than a reduction in the half type itself).
"""

from __future__ import annotations

import os
import time

import numpy as np

from opforge.communication.management import CommunicationError

__all__ = ["MpiCommunicator", "DTYPE_CODES"]

# Stable codes for the header (not np.dtype.num: ml_dtypes' bfloat16 gets its number at run time).
DTYPE_CODES = {
    name: i + 1
    for i, name in enumerate(
        (
            "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
            "float16", "bfloat16", "float32", "float64", "complex64", "complex128",
        )
    )
}  # fmt: skip
_CODE_NAMES = {v: k for k, v in DTYPE_CODES.items()}
_HALF = ("float16", "bfloat16")
_MAX_DIMS = 8
HEADER = 5 + _MAX_DIMS  # kind, attr code, dtype, ndim, nbytes, dims...

_SPINS = 200  # Test() calls before yielding the core between polls (ranks may share cores)
# os.sched_yield, not time.sleep(0): Linux sleeps at least the timer slack (50 us; 70-75 us measured here)
# even for 0 s, and a rank that sleeps does not progress its part of a non-blocking collective, so each
# sleep stalled its partners too (the 2-rank MLP step of bench --suite comm: 10-25% slower).
_yield = getattr(os, "sched_yield", lambda: time.sleep(0))


def wait_with_deadline(request, timeout: float, op_name: str, rank: int, group: str, size: int) -> None:
    """Wait for an MPI ``request`` at most ``timeout`` seconds (OPFORGE_COMM_TIMEOUT), or a CommunicationError
    naming the call and the group: a rank that never comes (died, hangs, or runs another program)."""
    if request.Test():
        return
    deadline = time.monotonic() + timeout
    spins = 0
    while not request.Test():
        spins += 1
        if spins > _SPINS:
            _yield()  # let a rank sharing this core run
            if spins % 64 == 0 and time.monotonic() > deadline:
                raise CommunicationError(
                    f"For '{op_name}', rank {rank} waited {timeout:g} s (OPFORGE_COMM_TIMEOUT) for the other ranks "
                    f"of the group '{group}' ({size} ranks): one of them did not call it, died or hangs."
                )


def header(kind: int, code: int, array) -> np.ndarray:
    """The 13 int64 that describe one array of a call (dims past the 8th folded into the 8th)."""
    h = np.zeros(HEADER, np.int64)
    shape = array.shape
    h[:5] = (kind, code, DTYPE_CODES.get(array.dtype.name, 99), len(shape), array.nbytes)
    dims = list(shape[:_MAX_DIMS])
    if len(shape) > _MAX_DIMS:
        dims[-1] = int(np.prod(shape[_MAX_DIMS - 1 :]))
    h[5 : 5 + len(dims)] = dims
    return h


def describe(h) -> str:
    """``float32[2, 3]`` from a header."""
    ndim = int(h[3])
    dims = [int(d) for d in h[5 : 5 + min(ndim, _MAX_DIMS)]]
    if ndim > _MAX_DIMS:
        dims[-1:] = [f"{dims[-1]} (dims {_MAX_DIMS}.. folded)"]
    return f"{_CODE_NAMES.get(int(h[2]), '?')}{dims}".replace("'", "")


class MpiCommunicator:
    """One group's MPI communicator: ``comm`` (an mpi4py Intracomm), its name, the timeout and whether
    the header check runs."""

    def __init__(self, comm, name: str, timeout: float, check: bool):
        from mpi4py import MPI

        self.MPI = MPI
        self.comm = comm
        self.name = name
        self.rank = comm.Get_rank()
        self.size = comm.Get_size()
        self.world_rank = MPI.COMM_WORLD.Get_rank()
        self.timeout = float(timeout)
        self.check = bool(check)
        self.ops = {"sum": MPI.SUM, "max": MPI.MAX, "min": MPI.MIN, "prod": MPI.PROD}
        self.types = {
            "int8": MPI.INT8_T, "int16": MPI.INT16_T, "int32": MPI.INT32_T, "int64": MPI.INT64_T,
            "uint8": MPI.UINT8_T, "uint16": MPI.UINT16_T, "uint32": MPI.UINT32_T, "uint64": MPI.UINT64_T,
            "float32": MPI.FLOAT, "float64": MPI.DOUBLE, "complex64": MPI.C_FLOAT_COMPLEX,
            "complex128": MPI.C_DOUBLE_COMPLEX, "bool": MPI.C_BOOL,
        }  # fmt: skip
        self._headers = np.empty((self.size, HEADER), np.int64)
        self._pending = []  # sends to this rank itself, until its Receive takes them

    @property
    def group_name(self) -> str:
        from opforge.communication.management import GlobalComm

        return GlobalComm.WORLD_COMM_GROUP if self.name == "world" else self.name

    # -- waiting with a deadline -----------------------------------------------------------------
    def wait(self, op_name: str, request) -> None:
        wait_with_deadline(request, self.timeout, op_name, self.world_rank, self.group_name, self.size)

    # -- the header check --------------------------------------------------------------------------
    def check_same(self, op_name: str, kind: int, code: int, arrays) -> None:
        """Every rank calls with the same kind, attrs, dtypes and shapes, or every rank raises."""
        if not self.check or self.size == 1:
            return
        mine = (
            np.concatenate([header(kind, code, a) for a in arrays])
            if len(arrays) != 1
            else header(kind, code, arrays[0])
        )
        n = mine.size
        if self._headers.size != self.size * n:
            self._headers = np.empty((self.size, n), np.int64)
        self.wait(op_name, self.comm.Iallgather(mine, self._headers))
        rows = self._headers
        if (rows == rows[0]).all():
            return
        parts = []
        for r in range(self.size):
            row = rows[r].reshape(-1, HEADER)
            if (row[:, 0] != kind).any():
                parts.append(f"rank {r}: another collective (or attrs)")
                continue
            text = ", ".join(describe(h) for h in row)
            if (row[:, 1] != code).any():
                text += " (other attrs)"
            parts.append(f"rank {r}: {text}" if len(row) == 1 else f"rank {r}: ({text})")
        raise CommunicationError(
            f"For '{op_name}', the ranks of the group '{self.group_name}' must call it with the same attrs, dtypes "
            f"and shapes, but got {'; '.join(parts)}."
        )

    # -- buffers -------------------------------------------------------------------------------------
    def _typed(self, array):
        return [array, self.types[array.dtype.name]]

    @staticmethod
    def _bytes(array):
        return array.reshape(-1).view(np.uint8)

    # -- collectives ---------------------------------------------------------------------------------
    def allreduce(self, op_name: str, x, out, op: str) -> None:
        self.check_same(op_name, 1, _OP_CODES[op], (x,))
        if x.dtype.name in _HALF:
            wide = np.empty(x.shape, np.float32)
            self.wait(
                op_name,
                self.comm.Iallreduce([x.astype(np.float32), self.MPI.FLOAT], [wide, self.MPI.FLOAT], self.ops[op]),
            )
            out[...] = wide.astype(out.dtype)
            return
        self.wait(op_name, self.comm.Iallreduce(self._typed(x), self._typed(out), self.ops[op]))

    def start_allreduce(self, x, out, op: str = "sum"):
        """Start an all-reduce of the host arrays ``x`` into ``out`` (MPI types only: no float16 or
        bfloat16) and return its request, to ``wait`` for later: what a gradient reducer overlaps with
        the backward pass. No header check: the caller's buckets are the same on every rank."""
        return self.comm.Iallreduce(self._typed(x), self._typed(out), self.ops[op])

    def reduce_scatter(self, op_name: str, x, out, op: str) -> None:
        self.check_same(op_name, 2, _OP_CODES[op], (x,))
        if x.dtype.name in _HALF:
            wide = np.empty(out.shape, np.float32)
            req = self.comm.Ireduce_scatter_block(
                [x.astype(np.float32), self.MPI.FLOAT], [wide, self.MPI.FLOAT], self.ops[op]
            )
            self.wait(op_name, req)
            out[...] = wide.astype(out.dtype)
            return
        self.wait(op_name, self.comm.Ireduce_scatter_block(self._typed(x), self._typed(out), self.ops[op]))

    def allgather(self, op_name: str, x, out) -> None:
        self.check_same(op_name, 3, 0, (x,))
        self.wait(op_name, self.comm.Iallgather(self._bytes(x), self._bytes(out)))

    def broadcast(self, op_name: str, xs, outs, root: int) -> None:
        self.check_same(op_name, 4, root, xs)
        if self.rank == root:
            for x, out in zip(xs, outs):
                out[...] = x
        for out in outs:
            self.wait(op_name, self.comm.Ibcast(self._bytes(out), root=root))

    def alltoall(self, op_name: str, x, out, split_dim: int, concat_dim: int) -> None:
        """Chunk j of ``x`` along ``split_dim`` goes to rank j; the chunks received are concatenated
        along ``concat_dim`` in rank order."""
        self.check_same(op_name, 5, split_dim * 64 + concat_dim, (x,))
        n = self.size
        send = np.ascontiguousarray(np.stack(np.split(x, n, axis=split_dim)))
        recv = np.empty_like(send)
        self.wait(op_name, self.comm.Ialltoall(self._bytes(send), self._bytes(recv)))
        out[...] = np.concatenate(list(recv), axis=concat_dim) if n > 1 else recv[0]

    def send(self, op_name: str, x, dest: int, tag: int) -> None:
        """Send ``x`` (the caller's own copy: it is not written until the send completes). A send to this
        rank itself stays pending until this rank's Receive takes it."""
        self._check_peer(op_name, "dest_rank", dest)
        r1 = self.comm.Isend(header(6, 0, x), dest=dest, tag=tag)
        r2 = self.comm.Isend(self._bytes(x), dest=dest, tag=tag)
        if dest == self.rank:
            self._pending += [r1, r2]
            return
        self.wait(op_name, r1)
        self.wait(op_name, r2)

    def close(self) -> None:
        """Take back the sends to this rank itself that no Receive took: each holds a request on the
        communicator, and MPI would end the process reporting them as pending references. Such a send
        is complete locally (its message waits in this rank's queue), so it is received and dropped."""
        status = self.MPI.Status()
        while self._pending and self.comm.Iprobe(source=self.rank, tag=self.MPI.ANY_TAG, status=status):
            self.comm.Recv(np.empty(status.Get_count(self.MPI.BYTE), np.uint8), source=self.rank, tag=status.tag)
            self._pending = [r for r in self._pending if not r.Test()]
        self._pending = []

    def recv(self, op_name: str, out, src: int, tag: int) -> None:
        self._check_peer(op_name, "src_rank", src)
        h = np.empty(HEADER, np.int64)
        self.wait(op_name, self.comm.Irecv(h, source=src, tag=tag))
        mine = header(6, 0, out)
        ok = (h == mine).all()
        target = self._bytes(out) if ok else np.empty(int(h[4]), np.uint8)  # a mismatch is taken anyway,
        self.wait(op_name, self.comm.Irecv(target, source=src, tag=tag))  # so the sender is not left waiting
        if self._pending:
            self._pending = [r for r in self._pending if not r.Test()]
        if not ok:
            raise CommunicationError(
                f"For '{op_name}', rank {self.rank} of the group '{self.group_name}' expects {describe(mine)} from "
                f"rank {src} (tag {tag}), but rank {src} sent {describe(h)}."
            )

    def _check_peer(self, op_name: str, name: str, peer: int) -> None:
        if not 0 <= peer < self.size:
            raise ValueError(
                f"For '{op_name}', the '{name}' must be a rank of the group '{self.group_name}' (in [0, {self.size})), "
                f"but got {peer}."
            )


_OP_CODES = {"sum": 1, "max": 2, "min": 3, "prod": 4}


# ---------------------------------------------------------------------------------------------------
# The C++ AllReduce kernel (csrc/kernels/cpu/comm.cc) calls MPI itself: it is told the library mpi4py
# loaded, the handles of the dtypes and ops, and each group's communicator (the MPICH ABI: ints).


def _native():
    import ctypes

    from opforge import _C

    lib = ctypes.CDLL(_C.__file__)
    lib.opforge_comm_setup.argtypes = [ctypes.c_char_p]
    lib.opforge_comm_set_handles.argtypes = [
        ctypes.POINTER(ctypes.c_int),
        ctypes.c_int,
        ctypes.c_int,
        ctypes.POINTER(ctypes.c_int),
    ]
    lib.opforge_comm_set_group.argtypes = (
        [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_uint] + [ctypes.c_int] * 3 + [ctypes.c_double, ctypes.c_int]
    )
    return lib


def _libmpi_path() -> str | None:
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                path = line.split()[-1]
                if "/libmpi" in path and ".so" in path:
                    return path
    except OSError:
        pass
    return None


def native_setup(MPI) -> bool:  # noqa: N803 - the mpi4py module
    """Prepare the C++ kernels; False when this MPI is not one they can call (not the MPICH ABI)."""
    import ctypes

    if not MPI.Get_library_version().startswith("MPICH") or not 0 <= MPI.COMM_WORLD.handle < 2**32:
        return False
    path = _libmpi_path()
    lib = _native()
    if path is None or lib.opforge_comm_setup(path.encode()) != 0:
        return False
    types = {
        "int8": MPI.INT8_T,
        "int16": MPI.INT16_T,
        "int32": MPI.INT32_T,
        "int64": MPI.INT64_T,
        "uint8": MPI.UINT8_T,
        "uint16": MPI.UINT16_T,
        "uint32": MPI.UINT32_T,
        "uint64": MPI.UINT64_T,
        "float16": MPI.FLOAT,
        "bfloat16": MPI.FLOAT,
        "float32": MPI.FLOAT,
        "float64": MPI.DOUBLE,
    }  # fmt: skip  (float16 and bfloat16 are reduced widened to float32)
    handles = (ctypes.c_int * 16)()
    for name, t in types.items():
        handles[DTYPE_CODES[name]] = t.handle
    ops = (ctypes.c_int * 4)(MPI.SUM.handle, MPI.MAX.handle, MPI.MIN.handle, MPI.PROD.handle)
    lib.opforge_comm_set_handles(handles, 16, MPI.INT64_T.handle, ops)
    return True


def native_set_group(key: str, display: str, communicator) -> None:
    """Tell the C++ kernels about a group (``communicator`` an MpiCommunicator), or forget it (None)."""
    lib = _native()
    if communicator is None:
        lib.opforge_comm_set_group(key.encode(), b"", 0, 0, 0, 0, 0.0, 0)
        return
    c = communicator
    lib.opforge_comm_set_group(
        key.encode(),
        display.encode(),
        c.comm.handle & 0xFFFFFFFF,
        c.rank,
        c.size,
        c.world_rank,
        c.timeout,
        int(c.check),
    )
