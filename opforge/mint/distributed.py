"""MindSpore's ``mindspore.mint.distributed``: PyTorch's ``torch.distributed`` functions over opforge's
communication (``opforge.communication``: MPI through mpi4py on the CPU, NCCL through CuPy on the GPU) and its
collective primitives. The collectives write their result into the tensors they are given, in place (an
eager API: a ``jit`` trace does not record these writes); ``async_op=True`` returns a handle whose ``wait()``
returns at once (the collective has completed). Ranks given to ``src`` and ``dst`` are world ranks, as in
PyTorch; ``group`` None is the world."""

from __future__ import annotations

from opforge import ops
from opforge.communication import management as comm
from opforge.primitives import comm_ops as K
from opforge.tensor import Tensor

__all__ = [
    "init_process_group", "destroy_process_group", "is_available", "is_initialized", "get_rank",
    "get_world_size", "new_group", "get_backend", "get_global_rank", "get_group_rank",
    "get_process_group_ranks", "all_reduce", "all_gather", "all_gather_into_tensor", "reduce_scatter_tensor",
    "reduce", "broadcast", "barrier", "send", "recv", "all_gather_object", "broadcast_object_list",
    "all_to_all", "all_to_all_single", "gather", "scatter", "reduce_scatter", "isend", "irecv", "gather_object",
    "scatter_object_list",
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


def _one_per_rank(name: str, arg: str, tensors, group) -> list:
    size = get_world_size(group)
    if not isinstance(tensors, (list, tuple)) or len(tensors) != size:
        raise ValueError(f"For '{name}', the '{arg}' must be a list of {size} Tensors, one per rank of the group.")
    return list(tensors)


def _rows(pieces: list, width: int, like: Tensor) -> Tensor:
    """The 1-D ``pieces`` padded with zeros to ``width`` and stacked: [len(pieces), width]."""
    rows = []
    for p in pieces:
        n = p.shape[0]
        if n < width:
            fill = ops.zeros((width - n,), like.dtype)
            p = fill if n == 0 else ops.cat((p, fill), 0)
        rows.append(p)
    return ops.stack(tuple(rows), 0)


def all_to_all(output_tensor_list: list, input_tensor_list: list, group=None, async_op=False):
    """``output_tensor_list[j]`` set to what rank j's ``input_tensor_list[i]`` holds, i this rank (each pair of
    ranks may exchange Tensors of any shapes, of one element count at both ends; one dtype)."""
    outs = _one_per_rank("all_to_all", "output_tensor_list", output_tensor_list, group)
    ins = _one_per_rank("all_to_all", "input_tensor_list", input_tensor_list, group)
    flat = [ops.reshape(ops.cast(t, ins[0].dtype), (-1,)) for t in ins]
    width = max(comm.allgather_object(max(t.shape[0] for t in flat), _group(group)))
    if width:
        got = K.AlltoAll(len(ins), 0, 0, _group(group))(_rows(flat, width, ins[0]))
        for j, out in enumerate(outs):
            out.assign_value(ops.cast(ops.reshape(got[j][: out.size], tuple(out.shape)), out.dtype))
    return _result(async_op)


def _splits(name: str, arg: str, sizes, tensor: Tensor, n: int) -> list:
    if sizes is None:
        if tensor.shape[0] % n:
            raise ValueError(f"For '{name}', the dim 0 of the '{arg}' ({tensor.shape[0]}) must divide by {n} ranks.")
        return [tensor.shape[0] // n] * n
    sizes = [int(v) for v in sizes]
    if len(sizes) != n or sum(sizes) != tensor.shape[0] or min(sizes) < 0:
        raise ValueError(
            f"For '{name}', the '{arg}_split_sizes' must be {n} sizes >= 0 adding up to the dim 0 of the '{arg}' "
            f"({tensor.shape[0]}), but got {sizes}."
        )
    return sizes


def all_to_all_single(output: Tensor, input: Tensor, output_split_sizes=None, input_split_sizes=None, group=None,
                      async_op=False):  # fmt: skip
    """``input`` split along dim 0 (in ``input_split_sizes``, else evenly), block j sent to rank j; ``output`` set
    to the blocks received, in rank order (their sizes ``output_split_sizes``, else even)."""
    n = get_world_size(group)
    if output_split_sizes is None and input_split_sizes is None:
        if input.shape[0] % n:
            raise ValueError(
                f"For 'all_to_all_single', the dim 0 of the 'input' ({input.shape[0]}) must divide by {n}."
            )
        output.assign_value(K.AlltoAll(n, 0, 0, _group(group))(input))
        return _result(async_op)
    ins = _splits("all_to_all_single", "input", input_split_sizes, input, n)
    outs = _splits("all_to_all_single", "output", output_split_sizes, output, n)
    row = tuple(input.shape[1:])
    flat = ops.reshape(input, (input.shape[0], -1)) if row else ops.reshape(input, (-1, 1))
    per = flat.shape[1]
    starts = [sum(ins[:j]) for j in range(n)]
    pieces = [ops.reshape(flat[s : s + k], (-1,)) if k else ops.zeros((0,), input.dtype) for s, k in zip(starts, ins)]
    width = max(comm.allgather_object(max(ins), _group(group))) * per
    if width:
        got = K.AlltoAll(n, 0, 0, _group(group))(_rows(pieces, width, input))
        blocks = [ops.reshape(got[j][: k * per], (k, *row)) for j, k in enumerate(outs) if k]
        if blocks:
            output.assign_value(ops.cast(ops.cat(tuple(blocks), 0), output.dtype))
    return _result(async_op)


def gather(tensor: Tensor, gather_list=None, dst=0, group=None, async_op=False):
    """On world rank ``dst``, ``gather_list[i]`` set to group rank i's ``tensor`` (one shape everywhere)."""
    gathered = K.AllGather(_group(group))(tensor.reshape((1, *tensor.shape)))
    if comm.get_rank() == dst:
        for i, out in enumerate(_one_per_rank("gather", "gather_list", gather_list, group)):
            out.assign_value(gathered[i])
    return _result(async_op)


def scatter(tensor: Tensor, scatter_list=None, src=0, group=None, async_op=False):
    """``tensor`` set to ``scatter_list[i]`` of world rank ``src``, i this rank's group rank (``scatter_list`` is
    read on ``src`` only: Tensors of ``tensor``'s shape)."""
    n = get_world_size(group)
    if comm.get_rank() == src:
        parts = _one_per_rank("scatter", "scatter_list", scatter_list, group)
        if any(tuple(p.shape) != tuple(tensor.shape) for p in parts):
            raise ValueError(
                f"For 'scatter', every Tensor of the 'scatter_list' must have the shape {list(tensor.shape)}."
            )
        stacked = ops.stack(tuple(ops.cast(p, tensor.dtype) for p in parts), 0)
    else:
        stacked = ops.zeros((n, *tensor.shape), tensor.dtype)
    whole = K.Broadcast(get_group_rank(group, src), _group(group))((stacked,))[0]
    tensor.assign_value(whole[get_rank(group)])
    return _result(async_op)


def reduce_scatter(output: Tensor, input_list: list, op="sum", group=None, async_op=False):
    """``output`` set to the reduction over the ranks of their ``input_list[i]``, i this rank (one shape)."""
    parts = _one_per_rank("reduce_scatter", "input_list", input_list, group)
    output.assign_value(K.ReduceScatter(op, _group(group))(ops.cat(tuple(parts), 0)).reshape(tuple(output.shape)))
    return _result(async_op)


def isend(tensor: Tensor, dst=0, group=None, tag=0) -> _Done:
    """``send`` as a work handle: the message is sent before it returns (its ``wait()`` returns at once); a
    rank that isends to a peer which isends back before either receives relies on MPI buffering the message."""
    send(tensor, dst, group, tag)
    return _Done()


def irecv(tensor: Tensor, src=0, group=None, tag=0) -> _Done:
    """``recv`` as a work handle: ``tensor`` is written before it returns (its ``wait()`` returns at once)."""
    recv(tensor, src, group, tag)
    return _Done()


def gather_object(obj, object_gather_list=None, dst=0, group=None) -> None:
    """On world rank ``dst``, ``object_gather_list`` set to every rank's ``obj``, in group rank order."""
    everything = comm.allgather_object(obj, _group(group))
    if comm.get_rank() == dst:
        if not isinstance(object_gather_list, list):
            raise ValueError("For 'gather_object', the 'object_gather_list' on 'dst' must be a list.")
        object_gather_list[:] = everything


def scatter_object_list(scatter_object_output_list: list, scatter_object_input_list=None, src=0, group=None) -> None:
    """``scatter_object_output_list[0]`` set to item i of world rank ``src``'s ``scatter_object_input_list``, i
    this rank's group rank."""
    mine = list(scatter_object_input_list) if comm.get_rank() == src else None
    items = comm.allgather_object(mine, _group(group))[get_group_rank(group, src)]
    if len(items) != get_world_size(group):
        raise ValueError(
            f"For 'scatter_object_list', the 'scatter_object_input_list' must hold {get_world_size(group)} items."
        )
    scatter_object_output_list[0] = items[get_rank(group)]
