"""``nn.DistributedGradReducer``: data-parallel gradients, all-reduced in fused buckets.

As PyTorch DDP and Horovod's tensor fusion, gradients are copied into a few flat buffers
(*buckets*, about 25 MB each by default) and each bucket is all-reduced with one collective, so a
step runs a handful of collectives instead of one per parameter. The parameters are assigned to
buckets in reverse order, the order in which the backward pass produces their gradients: fed by the
tape (``TrainOneStepCell`` passes ``reducer.ready`` as the backward pass's ``on_ready``), a bucket's
all-reduce starts (MPI's non-blocking ``Iallreduce``) as soon as its last gradient is final, while the
backward pass goes on; ``reducer(grads)`` starts what was not started, waits, and returns the reduced
gradients.

The collectives run on the group's communicator, the same object the collective primitives' kernels
use (``opforge.communication``, owned by the parameters' device), and the buckets live on that device:

- CPU (MPI): an ``Iallreduce`` in place on the communicator's mpi4py ``comm``, each wait bounded by
  ``OPFORGE_COMM_TIMEOUT`` through its ``wait`` (a rank that never comes raises a
  ``CommunicationError`` naming the reducer and the group); the mean's 1/degree is applied as the
  gradients are copied in.
- GPU (NCCL): the buckets are device arrays, all-reduced in place by NCCL on the current stream, so
  the kernels after it wait for it on the GPU and the host never does; the mean is applied to the
  reduced gradients (one kernel each).

The buckets' sizes are checked once across the ranks when the reducer is built.
``communication.init()`` must have run. With one rank nothing is sent.

While a trace records (``jit``, GRAPH_MODE), ``reduce_with_operators`` reduces instead: one ``AllReduce``
operator per gradient, which the trace replays from C++ with the rest of the step (a trace has no tape
hooks to fill buckets with, and no overlap: its collectives run after the backward pass).
"""

from __future__ import annotations

import numpy as np

from opforge import dtype as mstype
from opforge.communication import management
from opforge.communication.management import GlobalComm
from opforge.dispatch.trace import tracing
from opforge.nn.cell import Cell
from opforge.parallel_context import _fusion_plan, get_auto_parallel_context
from opforge.primitives.array_ops import ZerosLike
from opforge.primitives.comm_ops import AllReduce, ReduceOp
from opforge.tensor import Parameter, Tensor

__all__ = ["DistributedGradReducer"]

_zeros_like = ZerosLike()

_WHERE = "DistributedGradReducer"


def _communicator(group, device):
    """``(communicator, rank, size)`` of ``group``: the communicator object the collective primitives'
    kernels use (``opforge.communication``'s, owned by ``device``); None for a group of one rank,
    which sends nothing."""
    rank, size = management.group_rank(_WHERE, group), management.group_size(_WHERE, group)
    return (management.communicator(_WHERE, group, device) if size > 1 else None), rank, size


class _Bucket:
    """One flat buffer of the parameters' gradients on their device (``slots``: a view per parameter),
    all-reduced in place."""

    __slots__ = ("buffer", "slots", "np_dtype", "request", "fed")

    def __init__(self, indices, params, np_dtype, device):
        sizes = [int(np.prod(params[i].shape, dtype=np.int64)) for i in indices]
        self.np_dtype = np_dtype
        self.buffer = device.empty((sum(sizes),), np_dtype)  # every element is a slot's: all written
        self.slots = []  # (param index, view of the buffer in the parameter's shape)
        offset = 0
        for i, n in zip(indices, sizes):
            self.slots.append((i, device.view(self.buffer, offset, tuple(params[i].shape))))
            offset += n
        self.request = None
        self.fed = {}  # param index -> the gradient Tensor copied in through ready()

    @property
    def nbytes(self) -> int:
        return self.buffer.nbytes


class DistributedGradReducer(Cell):
    """All-reduce the gradients of ``parameters`` over ``group`` (MindSpore's ``nn.DistributedGradReducer``).

    ``reducer(grads)`` takes one gradient per parameter (in the parameters' order) and returns them
    summed over the ranks, divided by ``degree`` when ``mean`` (``mean=None`` reads
    ``gradients_mean`` from the auto-parallel context). ``degree`` defaults to the group's size.

    Fusion: ``fusion_type`` 0 all-reduces each gradient on its own; any other value fuses them into
    buckets as the auto-parallel context says (``comm_fusion={"allreduce": {"mode": "size", "config":
    MB}}`` or ``all_reduce_fusion_config=[indices]``; default buckets of 25 MB), and ``bucket_cap_mb``
    (opforge's, as DDP's) overrides the size. Gradients of half types are reduced in float32 buffers.

    The returned gradients are views of the buckets: valid until the next reduction.
    ``collectives_per_step`` is the number of all-reduces one call runs; ``num_collectives`` counts
    them since construction (eager calls: a trace's AllReduce operators are the trace's).
    """

    def __init__(
        self,
        parameters,
        mean=True,
        degree=None,
        fusion_type: int = 1,
        group: str = GlobalComm.WORLD_COMM_GROUP,
        bucket_cap_mb: float | None = None,
    ):
        super().__init__(auto_prefix=False)
        where = _WHERE
        if isinstance(parameters, Parameter):
            parameters = [parameters]
        params = list(parameters)
        if not params:
            raise ValueError(f"For '{where}', the 'parameters' must not be empty.")
        for p in params:
            if not isinstance(p, Tensor):
                raise TypeError(f"For '{where}', every parameter must be a Parameter, but got {type(p).__name__}.")
        if mean is None:
            mean = get_auto_parallel_context("gradients_mean")
        if not isinstance(mean, bool):
            raise TypeError(f"For '{where}', the 'mean' must be bool, but got {type(mean).__name__}.")
        if isinstance(fusion_type, bool) or not isinstance(fusion_type, int) or fusion_type < 0:
            raise ValueError(f"For '{where}', the 'fusion_type' must be an int >= 0, but got {fusion_type!r}.")
        if not isinstance(group, str):
            raise TypeError(f"For '{where}', the 'group' must be str, but got {type(group).__name__}.")
        if bucket_cap_mb is not None and (
            isinstance(bucket_cap_mb, bool) or not isinstance(bucket_cap_mb, (int, float)) or bucket_cap_mb <= 0
        ):
            raise ValueError(f"For '{where}', the 'bucket_cap_mb' must be a number > 0, but got {bucket_cap_mb!r}.")
        self._device = params[0]._meta[2]
        self._on_host = self._device.name == "CPU"
        self._comm, self.rank, self.group_size = _communicator(group, self._device)
        if degree is None:
            degree = self.group_size
        if isinstance(degree, bool) or not isinstance(degree, int) or degree < 1:
            raise ValueError(f"For '{where}', the 'degree' must be an int >= 1, but got {degree!r}.")
        self.parameters = tuple(params)
        self.mean, self.degree, self.group, self.fusion_type = mean, degree, group, fusion_type
        self._index = {id(p): i for i, p in enumerate(params)}
        self._buckets = self._make_buckets(params, fusion_type, bucket_cap_mb)
        self._slot_of = {i: (b, view) for b in self._buckets for i, view in b.slots}  # ready()'s lookup
        self._in_flight = []  # the requests ready() started this step, until a Test() completes them
        self.num_collectives = 0
        self._scale = 1.0 / degree if mean and degree != 1 else None
        self._all_reduce = AllReduce(ReduceOp.SUM, group)  # reduce_with_operators'
        if self.group_size > 1:  # every rank reduces the same buckets, or every rank raises naming them
            self._comm.check_same(_WHERE, 1, 0, [b.buffer for b in self._buckets])

    # -- buckets ---------------------------------------------------------------------------------

    @staticmethod
    def _buffer_dtype(p):
        np_dtype = np.dtype(p.dtype.np_dtype)
        return np.dtype(np.float32) if p.dtype in (mstype.float16, mstype.bfloat16) else np_dtype

    def _make_buckets(self, params, fusion_type, bucket_cap_mb) -> list:
        n = len(params)
        if fusion_type == 0:
            groups = [[i] for i in reversed(range(n))]
        else:
            mode, config = ("size", float(bucket_cap_mb)) if bucket_cap_mb is not None else _fusion_plan()
            if mode == "index":
                bounds = [0, *[i for i in config if i < n], n]
                groups = [list(reversed(range(a, b))) for a, b in zip(bounds, bounds[1:]) if b > a][::-1]
            else:
                cap = config * 1024 * 1024
                groups, current, size = [], [], 0
                for i in reversed(range(n)):  # the order the backward pass finishes them
                    nbytes = params[i].size * self._buffer_dtype(params[i]).itemsize
                    if current and size + nbytes > cap:
                        groups.append(current)
                        current, size = [], 0
                    current.append(i)
                    size += nbytes
                if current:
                    groups.append(current)
        buckets = []
        for indices in groups:  # a bucket holds one dtype: split a group where the dtype changes
            by_dtype: dict = {}
            for i in indices:
                by_dtype.setdefault(self._buffer_dtype(params[i]), []).append(i)
            buckets += [_Bucket(idx, params, dt, self._device) for dt, idx in by_dtype.items()]
        return buckets

    @property
    def collectives_per_step(self) -> int:
        return len(self._buckets) if self.group_size > 1 else 0

    @property
    def bucket_sizes(self) -> list:
        """The bytes of each bucket, in the order their all-reduces start."""
        return [b.nbytes for b in self._buckets]

    # -- reduction -------------------------------------------------------------------------------

    def _start(self, bucket: _Bucket) -> None:
        bucket.request = _DONE
        if self.group_size == 1:
            return
        comm = self._comm
        if self._on_host:
            # In place (MPI_IN_PLACE) on the communicator's mpi4py comm: an output buffer as large as the
            # bucket (the communicator's start_allreduce) made the 2-rank MLP step 10-40% slower.
            bucket.request = comm.comm.Iallreduce(comm.MPI.IN_PLACE, bucket.buffer, comm.MPI.SUM)
        else:  # NCCL, queued on the stream: the kernels reading the bucket run after it
            comm.allreduce(_WHERE, bucket.buffer, bucket.buffer, "sum")
        self.num_collectives += 1

    def _copy_in(self, view, grad, scale=None) -> None:
        """``grad`` into its place in a bucket, on the CPU times ``scale`` (the mean's 1/degree, applied on
        the way in as DDP's pre-division: one pass over the gradient instead of two)."""
        if not self._on_host:
            self._device.write(view, grad._data)  # the scale comes after the reduction (_as_grad)
        elif scale is None:
            np.copyto(view, grad._data, casting="unsafe")
        else:
            np.multiply(grad._data, scale, out=view, casting="unsafe")

    def ready(self, key, grad) -> None:
        """The tape's ``on_ready``: parameter ``id`` ``key``'s gradient is final; when it completes its
        bucket, the bucket's all-reduce starts now."""
        index = self._index.get(key)
        if index is None or self.group_size == 1 or tracing():  # a trace reduces with operators instead
            return
        bucket, view = self._slot_of[index]
        if bucket.request is not None or index in bucket.fed:
            return
        self._copy_in(view, grad, self._scale)
        bucket.fed[index] = grad
        in_flight = self._in_flight
        if in_flight:  # MPI progresses a non-blocking collective only inside MPI calls: test those in flight
            in_flight[:] = [r for r in in_flight if not r.Test()]
        if len(bucket.fed) == len(bucket.slots):
            self._start(bucket)
            if self._on_host:
                in_flight.append(bucket.request)

    def _call_construct(self, args, kwargs):
        # Always eager, GRAPH_MODE too: the reduction talks MPI outside operators, so a trace of it would
        # record nothing and replay the first step's gradients.
        return self.construct(*args, **kwargs)

    def _checked(self, grads) -> tuple:
        grads = tuple(grads)
        if len(grads) != len(self.parameters):
            raise ValueError(
                f"For 'DistributedGradReducer', there must be one gradient per parameter ({len(self.parameters)}), "
                f"but got {len(grads)}."
            )
        for i, (p, g) in enumerate(zip(self.parameters, grads)):
            if not isinstance(g, Tensor) or g.shape != p.shape:
                got = list(g.shape) if isinstance(g, Tensor) else type(g).__name__
                raise ValueError(
                    f"For 'DistributedGradReducer', the gradient {i} ('{p.name}') must have shape {list(p.shape)}, "
                    f"but got {got}."
                )
        return grads

    def construct(self, grads):
        grads = self._checked(grads)
        if self.group_size == 1 and self._scale is None:
            return grads  # a world of one rank: nothing to add up
        try:
            for bucket in self._buckets:
                stale = [i for i, g in bucket.fed.items() if g is not grads[i]]
                if stale and bucket.request is not None:  # fed other tensors than these: reduce these
                    self._wait(bucket)
                    bucket.request, bucket.fed = None, {}
                if bucket.request is None:
                    for i, view in bucket.slots:
                        if i not in bucket.fed:
                            self._copy_in(view, grads[i], self._scale)
                    self._start(bucket)
            for bucket in self._buckets:
                self._wait(bucket)
        finally:  # after an error (a timeout), the requests are dropped: waiting again could hang
            for bucket in self._buckets:
                bucket.request, bucket.fed = None, {}
            self._in_flight.clear()
        out = [None] * len(grads)
        for bucket in self._buckets:
            for i, view in bucket.slots:
                out[i] = self._as_grad(view, self.parameters[i])
        return tuple(out)

    def finish(self, grads: dict) -> dict:
        """A tape's ``{id: gradient}`` with these parameters' gradients reduced (zeros for those it did not
        reach; the tape fed ``ready`` on the way): what ``enlist_reducer`` asks of a reducer. Unchanged when
        the gradient taken was of none of them. While a trace records, by operators."""
        mine = tuple(grads.get(id(p)) for p in self.parameters)
        if all(g is None for g in mine):
            return grads
        mine = tuple(_zeros_like(p) if g is None else g for p, g in zip(self.parameters, mine))
        reduced = self.reduce_with_operators(mine) if tracing() else self(mine)
        return {**grads, **{id(p): g for p, g in zip(self.parameters, reduced)}}

    @property
    def traceable(self) -> bool:
        """Whether a trace may record ``reduce_with_operators`` (the CPU's MPI; NCCL inside a device graph has
        not run on a GPU)."""
        return self._on_host

    def reduce_with_operators(self, grads) -> tuple:
        """``construct``'s result computed by operators, for a trace to record: each gradient times the
        mean's 1/degree, all-reduced by an ``AllReduce`` (in float32 for the half types, as the buckets)."""
        grads = self._checked(grads)
        out = []
        for p, g in zip(self.parameters, grads):
            wide = mstype.nptype_to_dtype(self._buffer_dtype(p))
            g = g if g.dtype == wide else g.astype(wide)
            if self._scale is not None:
                g = g * self._scale
            if self.group_size > 1:
                g = self._all_reduce(g)
            out.append(g if g.dtype == p.dtype else g.astype(p.dtype))
        return tuple(out)

    def _wait(self, bucket: _Bucket) -> None:
        if bucket.request is not _DONE:
            self._comm.wait(_WHERE, bucket.request)  # bounded by OPFORGE_COMM_TIMEOUT, naming the group

    def _as_grad(self, view, p) -> Tensor:
        """The reduced gradient of ``p`` in its dtype: a view of the bucket where the dtypes agree."""
        dtype, device = p._meta[0], p._meta[2]
        if self._on_host:
            if view.dtype != np.dtype(dtype.np_dtype):
                view = view.astype(dtype.np_dtype)
            return Tensor._from_array(view, dtype, device)
        grad = Tensor._from_array(view, mstype.nptype_to_dtype(view.dtype), device)
        if self._scale is not None:
            grad = grad * self._scale
        return grad if grad.dtype == dtype else grad.astype(dtype)

    def broadcast_parameters(self, root: int = 0) -> None:
        """Every parameter set to ``root``'s value (one broadcast per bucket), so all ranks start equal."""
        if self.group_size == 1:
            return
        for bucket in self._buckets:
            for i, view in bucket.slots:
                self._copy_in(view, self.parameters[i])
            self._comm.broadcast(_WHERE, [bucket.buffer], [bucket.buffer], root)
            self.num_collectives += 1
            for i, view in bucket.slots:
                p = self.parameters[i]
                if isinstance(p, Parameter):  # a copy: the bucket is the next step's
                    p.set_data(Tensor._from_array(self._device.asarray(view, p.dtype.np_dtype), p.dtype, self._device))

    def extend_repr(self) -> str:
        return (
            f"mean={self.mean}, degree={self.degree}, group={self.group}, buckets={len(self._buckets)} "
            f"({', '.join(f'{b.nbytes / 1e6:.2f} MB' for b in self._buckets)})"
        )


class _Done:
    """A completed request (one rank: nothing to wait for)."""

    @staticmethod
    def Wait():  # noqa: N802 - mpi4py's name
        return None


_DONE = _Done()
