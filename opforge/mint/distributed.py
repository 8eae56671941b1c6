"""MindSpore's ``mindspore.mint.distributed``: PyTorch's ``torch.distributed`` functions over opforge's
communication (``opforge.communication``: MPI through mpi4py on the CPU, NCCL through CuPy on the GPU) and its
collective primitives. The collectives write their result into the tensors they are given, in place (an
eager API: a ``jit`` trace does not record these writes); ``async_op=True`` returns a handle whose ``wait()``
returns at once (the collective has completed). Ranks given to ``src`` and ``dst`` are world ranks, as in
PyTorch; ``group`` None is the world."""

from __future__ import annotations

from opforge.communication import management as comm
from opforge.primitives import comm_ops as K
from opforge.tensor import Tensor

__all__ = [
    "init_process_group", "destroy_process_group", "is_available", "is_initialized", "get_rank",
    "get_world_size", "new_group", "get_backend", "get_global_rank", "get_group_rank",
    "get_process_group_ranks", "all_reduce", "all_gather", "all_gather_into_tensor", "reduce_scatter_tensor",
    "reduce", "broadcast", "barrier", "send", "recv", "all_gather_object", "broadcast_object_list",
]  # fmt: skip

_BACKENDS = ("hccl", "nccl", "mccl", "mpi", "gloo")
_made: set = set()  # the groups new_group created


class _Done:
    """The handle of an ``async_op=True`` call: the collective has completed already."""

    def wait(self, timeout=None) -> bool:
        return True

    def is_completed(self) -> bool:
        return True


def _group(group) -> str:
    return comm.GlobalComm.WORLD_COMM_GROUP if group is None else group


def _result(async_op: bool):
    return _Done() if async_op else None


def init_process_group(backend="hccl", init_method=None, timeout=None, world_size=-1, rank=-1, store=None,
                       pg_options=None, device_id=None) -> None:  # fmt: skip
    """Start the communication service on the backend of ``set_context(device_target=...)`` (MPI on the CPU,
    NCCL on the GPU, whatever ``backend`` names: "hccl" is MindSpore's default). ``world_size`` and ``rank``,
    when given, must be the job's (``mpiexec`` sets them)."""
    if backend not in _BACKENDS:
        raise ValueError(f"For 'init_process_group', the 'backend' must be one of {list(_BACKENDS)}, got {backend!r}.")
    comm.init()
    for name, given, actual in (("world_size", world_size, comm.get_group_size()), ("rank", rank, comm.get_rank())):
        if given not in (-1, actual):
            raise ValueError(f"For 'init_process_group', the '{name}' is {actual} in this job, but got {given}.")


def destroy_process_group(group=None) -> None:
    """The group released (``group`` None: the communication service, as ``opforge.communication.release``)."""
    if group is None or group == comm.GlobalComm.WORLD_COMM_GROUP:
        comm.release()
        _made.clear()
    else:
        comm.destroy_group(group)
        _made.discard(group)


def is_available() -> bool:
    return True


def is_initialized() -> bool:
    return comm.GlobalComm.INITED


def get_rank(group=None) -> int:
    return comm.get_rank(_group(group))


def get_world_size(group=None) -> int:
    return comm.get_group_size(_group(group))


def new_group(ranks=None, timeout=None, backend=None, pg_options=None, use_local_synchronization=False,
              group_desc=None) -> str:  # fmt: skip
    """A group of the world ``ranks`` (every rank calls it; None: the world), by name: ``group_desc`` or one
    made of the ranks."""
    if ranks is None:
        return comm.GlobalComm.WORLD_COMM_GROUP
    ranks = sorted(int(r) for r in ranks)
    name = group_desc or "mint_group_" + "_".join(map(str, ranks))
    if name not in _made:  # (the same ranks again: the same group, as PyTorch hands out)
        comm.create_group(name, ranks)
        _made.add(name)
    return name


def get_backend(group=None) -> str:
    return comm.GlobalComm.BACKEND


def get_global_rank(group, group_rank) -> int:
    return comm.get_world_rank_from_group_rank(_group(group), group_rank)


def get_group_rank(group, global_rank) -> int:
    return comm.get_group_rank_from_world_rank(global_rank, _group(group))


def get_process_group_ranks(group=None) -> list:
    return [get_global_rank(group, i) for i in range(get_world_size(group))]


def all_reduce(tensor: Tensor, op="sum", group=None, async_op=False):
    """``tensor`` set to the reduction (``op`` "sum", "max", "min" or "prod") of every rank's."""
    tensor.assign_value(K.AllReduce(op, _group(group))(tensor))
    return _result(async_op)


def all_gather(tensor_list: list, tensor: Tensor, group=None, async_op=False):
    """``tensor_list[i]`` set to rank i's ``tensor`` (one Tensor per rank of the group, of its shape)."""
    size = get_world_size(group)
    if not isinstance(tensor_list, list) or len(tensor_list) != size:
        raise ValueError(f"For 'all_gather', the 'tensor_list' must be a list of {size} Tensors, one per rank.")
    gathered = K.AllGather(_group(group))(tensor.reshape((1, *tensor.shape)))
    for i, out in enumerate(tensor_list):
        out.assign_value(gathered[i])
    return _result(async_op)


def all_gather_into_tensor(output_tensor: Tensor, input_tensor: Tensor, group=None, async_op=False):
    """``output_tensor`` set to the ranks' ``input_tensor`` concatenated along dim 0."""
    output_tensor.assign_value(K.AllGather(_group(group))(input_tensor))
    return _result(async_op)


def reduce_scatter_tensor(output: Tensor, input: Tensor, op="sum", group=None, async_op=False):
    """``output`` set to this rank's block (along dim 0) of the reduction of the ranks' ``input``."""
    output.assign_value(K.ReduceScatter(op, _group(group))(input))
    return _result(async_op)


def reduce(tensor: Tensor, dst, op="sum", group=None, async_op=False):
    """The reduction of the ranks' ``tensor`` into rank ``dst``'s (the others' stay as they are)."""
    total = K.AllReduce(op, _group(group))(tensor)
    if comm.get_rank() == dst:
        tensor.assign_value(total)
    return _result(async_op)


def broadcast(tensor: Tensor, src, group=None, async_op=False):
    """``tensor`` set to world rank ``src``'s on every rank of the group."""
    tensor.assign_value(K.Broadcast(get_group_rank(group, src), _group(group))((tensor,))[0])
    return _result(async_op)


def barrier(group=None, async_op=False, device_ids=None):
    """Returns once every rank of the group has called it."""
    comm.allgather_object(None, _group(group))
    return _result(async_op)


def send(tensor: Tensor, dst=0, group=None, tag=0) -> None:
    """``tensor`` to world rank ``dst`` (which calls ``recv`` with this ``tag``)."""
    K.Send(tag, get_group_rank(group, dst), _group(group))(tensor)


def recv(tensor: Tensor, src=0, group=None, tag=0) -> int:
    """``tensor`` set to what world rank ``src`` sends with this ``tag`` (of this shape and dtype); ``src``."""
    tensor.assign_value(K.Receive(tag, get_group_rank(group, src), tuple(tensor.shape), tensor.dtype, _group(group))())
    return src


def all_gather_object(object_list: list, obj, group=None) -> None:
    """``object_list`` set to every rank's ``obj`` (a picklable object), in rank order."""
    object_list[:] = comm.allgather_object(obj, _group(group))


def broadcast_object_list(object_list: list, src=0, group=None, device=None) -> None:
    """``object_list``'s items set to world rank ``src``'s."""
    mine = list(object_list) if comm.get_rank() == src else None
    object_list[:] = comm.allgather_object(mine, _group(group))[get_group_rank(group, src)]
