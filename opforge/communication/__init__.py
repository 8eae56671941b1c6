"""``opforge.communication``: MindSpore's ``mindspore.communication``.

``init()`` starts the communication service (MPI on the CPU, NCCL on the GPU), ``get_rank`` and
``get_group_size`` describe the world or a group made by ``create_group``; the collectives
themselves are primitives (``ops.AllReduce``, ``ops.AllGather``, ...). See docs/distributed.md.
"""

from opforge.communication.management import (
    HCCL_WORLD_COMM_GROUP,
    MCCL_WORLD_COMM_GROUP,
    NCCL_WORLD_COMM_GROUP,
    CommunicationError,
    GlobalComm,
    create_group,
    destroy_group,
    get_group_rank_from_world_rank,
    get_group_size,
    get_local_rank,
    get_local_rank_size,
    get_rank,
    get_world_rank_from_group_rank,
    init,
    release,
)

__all__ = [
    "GlobalComm",
    "HCCL_WORLD_COMM_GROUP",
    "NCCL_WORLD_COMM_GROUP",
    "MCCL_WORLD_COMM_GROUP",
    "CommunicationError",
    "init",
    "release",
    "get_rank",
    "get_local_rank",
    "get_group_size",
    "get_local_rank_size",
    "get_world_rank_from_group_rank",
    "get_group_rank_from_world_rank",
    "create_group",
    "destroy_group",
]
