"""The collectives' kernels, one builder per operator for both backends, and their launcher kind "comm".

A "comm" kernel's ``impl`` is ``build(spec) -> run(arrays)``: the plan builds it once per metas and
attrs; ``run`` takes an output from the device's allocator and hands the arrays to the communicator
of the primitive's group that the device owns (``Device.communicator``: MPI on the CPU,
``opforge/communication/mpi.py``; NCCL on the GPU, ``opforge/communication/nccl.py``). The communicator is
looked up again only when ``init``, ``release``, ``create_group`` or ``destroy_group`` ran since.
"""

from __future__ import annotations

from opforge import dtype as mstype
from opforge.communication import management
from opforge.kernels import registry
from opforge.kernels.kernel_attr import KernelAttr
from opforge.kernels.launch import LaunchSpec, register_launcher

__all__ = ["BUILDERS", "NATIVE", "REDUCE_DTYPES", "MOVE_DTYPES", "register_comm_kernels"]

REDUCE_DTYPES = mstype.int_type + mstype.uint_type + mstype.float_type + mstype.complex_type
MOVE_DTYPES = mstype.all_types


def _launcher(spec: LaunchSpec):
    return spec.entry.impl(spec)


register_launcher("comm", _launcher)


class _Comm:
    """The communicator of (operator, group, device), refreshed when the groups changed."""

    __slots__ = ("op_name", "group", "device", "comm", "generation")

    def __init__(self, spec: LaunchSpec):
        self.op_name, self.group, self.device = spec.op_name, spec.attrs.get("group"), spec.device
        self.generation = -1
        self.comm = None

    def get(self):
        if self.generation != management.generation():
            self.comm = management.communicator(self.op_name, self.group, self.device)
            self.generation = management.generation()
        return self.comm


def _out(spec, i: int = 0):
    return tuple(spec.out_shapes[i]), spec.entry.attr.output_dtypes_for(len(spec.out_shapes))[i].np_dtype


def _reduction(method: str):
    """A kernel factory for a reducing collective: ``communicator.<method>(op_name, x, out, op)``."""

    def factory(spec):
        comm, op_name, empty = _Comm(spec), spec.op_name, spec.device.empty
        shape, np_dtype = _out(spec)
        op = spec.attrs["op"]

        def run(arrays):
            out = empty(shape, np_dtype)
            getattr(comm.get(), method)(op_name, arrays[0], out, op)
            return out

        return run

    return factory


_all_reduce = _reduction("allreduce")
_reduce_scatter = _reduction("reduce_scatter")


def _all_gather(spec):
    comm, op_name, empty = _Comm(spec), spec.op_name, spec.device.empty
    shape, np_dtype = _out(spec)

    def run(arrays):
        c = comm.get()
        out = empty(shape, np_dtype)
        c.allgather(op_name, arrays[0], out)
        return out

    return run


def _broadcast(spec):
    comm, op_name, empty = _Comm(spec), spec.op_name, spec.device.empty
    outs = [_out(spec, i) for i in range(len(spec.out_shapes))]
    root = spec.attrs["root_rank"]

    def run(arrays):
        c = comm.get()
        results = tuple(empty(shape, np_dtype) for shape, np_dtype in outs)
        c.broadcast(op_name, arrays, results, root)
        return results if len(results) != 1 else results[0]

    return run


def _all_to_all(spec):
    comm, op_name, empty = _Comm(spec), spec.op_name, spec.device.empty
    shape, np_dtype = _out(spec)
    nd = len(spec.in_shapes[0])
    split_dim, concat_dim = spec.attrs["split_dim"] % nd, spec.attrs["concat_dim"] % nd

    def run(arrays):
        c = comm.get()
        out = empty(shape, np_dtype)
        c.alltoall(op_name, arrays[0], out, split_dim, concat_dim)
        return out

    return run


def _send(spec):
    comm, op_name, device = _Comm(spec), spec.op_name, spec.device
    dest, tag = spec.attrs["dest_rank"], spec.attrs["sr_tag"]

    def run(arrays):
        c = comm.get()
        out = device.asarray(arrays[0], None)  # the output is what is sent: no one writes it meanwhile
        c.send(op_name, out, dest, tag)
        return out

    return run


def _receive(spec):
    comm, op_name, empty = _Comm(spec), spec.op_name, spec.device.empty
    shape, np_dtype = _out(spec)
    src, tag = spec.attrs["src_rank"], spec.attrs["sr_tag"]

    def run(arrays):
        c = comm.get()
        out = empty(shape, np_dtype)
        c.recv(op_name, out, src, tag)
        return out

    return run


# The collectives csrc/kernels/cpu/comm.cc implements in C++ on the CPU (calling MPI itself, where it is MPICH).
NATIVE = ("AllReduce", "ReduceScatter", "AllGather", "AlltoAll")

# operator -> (builder, dtypes, KernelAttr maker)
BUILDERS = {
    "AllReduce": (_all_reduce, REDUCE_DTYPES, lambda t: KernelAttr([t], [t])),
    "ReduceScatter": (_reduce_scatter, REDUCE_DTYPES, lambda t: KernelAttr([t], [t])),
    "AllGather": (_all_gather, MOVE_DTYPES, lambda t: KernelAttr([t], [t])),
    "Broadcast": (_broadcast, MOVE_DTYPES, lambda t: KernelAttr([t], [t], all_same=True)),
    "AlltoAll": (_all_to_all, MOVE_DTYPES, lambda t: KernelAttr([t], [t])),
    "Send": (_send, MOVE_DTYPES, lambda t: KernelAttr([t], [t])),
    "Receive": (_receive, MOVE_DTYPES, lambda t: KernelAttr([], [t])),
}


def register_comm_kernels(backend: str, source: str) -> None:
    """Register every collective's kernels on ``backend`` (each dtype its KernelAttr), from ``source``,
    except where a built-in C++ kernel is registered already (on the CPU, ``NATIVE``: csrc/kernels/cpu/comm.cc)."""
    entries = []
    for op_name, (build, dtypes, make_attr) in BUILDERS.items():
        have = {e.attr for e in registry.kernels_for(op_name, backend, include_disabled=True) if e.source == "builtin"}
        entries += [
            registry.KernelEntry(op_name, backend, make_attr(t), "comm", build, source)
            for t in dtypes
            if make_attr(t) not in have
        ]
    registry.register_entries(entries)


def register_python_collectives() -> None:
    """Put the Python kernels in the place of the C++ ones (``NATIVE``) on an MPI they cannot call."""
    import warnings

    entries = []
    for op_name in NATIVE:
        build, dtypes, make_attr = BUILDERS[op_name]
        entries += [
            registry.KernelEntry(op_name, "CPU", make_attr(t), "comm", build, "python:opforge.kernels.cpu.comm")
            for t in dtypes
        ]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", registry.KernelOverrideWarning)
        registry.register_entries(entries)
