"""MindSpore's ``mindspore.communication.management``: initialising the communication service, the
groups of ranks, and their communicators.

``init()`` starts the engine of the context's device (``device_target``): MPI through mpi4py on the
CPU (backend "mpi"), NCCL through CuPy on the GPU (backend "nccl", bootstrapped over MPI). Started by
``mpiexec -n N python script.py`` it joins the N ranks; run alone it makes a world of one rank, so a
script runs the same with and without a launcher. Every group gets a communicator, owned by the
device (``Device.set_communicator``), which the collective kernels ask for by the group's name.

Faults: after ``init`` in a world of more than one rank, an exception nobody catches ends the whole
job (``MPI_Abort``) with a message naming the rank that raised, instead of leaving the other ranks
waiting in their next collective; a collective waits at most ``OPFORGE_COMM_TIMEOUT`` seconds
(default 300) and then raises on the rank that waited, naming the operator and the group.
"""

from __future__ import annotations

import atexit
import os
import sys
import threading
import time

from opforge import context
from opforge.device import get_device
from opforge.errors import CommunicationError

__all__ = [
    "GlobalComm",
    "HCCL_WORLD_COMM_GROUP",
    "NCCL_WORLD_COMM_GROUP",
    "MCCL_WORLD_COMM_GROUP",
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
    "CommunicationError",
]

HCCL_WORLD_COMM_GROUP = "hccl_world_group"
NCCL_WORLD_COMM_GROUP = "nccl_world_group"
MCCL_WORLD_COMM_GROUP = "mccl_world_group"
# Every name of the world group: MindSpore's default argument (``GlobalComm.WORLD_COMM_GROUP`` read at
# import, "hccl_world_group") and each backend's world name all mean the world here.
_WORLD_NAMES = (HCCL_WORLD_COMM_GROUP, NCCL_WORLD_COMM_GROUP, MCCL_WORLD_COMM_GROUP)
_WORLD = "world"  # the key of the world group's communicator on the device

DEFAULT_TIMEOUT = 300.0  # seconds a collective waits for the other ranks (OPFORGE_COMM_TIMEOUT)
_ABORT_GRACE_S = 0.5  # a raising rank waits this long for its summary to leave before MPI_Abort


class GlobalComm:
    """The communication state, as MindSpore's: ``BACKEND`` ("mpi" on the CPU, "nccl" on the GPU,
    "undefined" before ``init``), ``WORLD_COMM_GROUP`` (MindSpore's "hccl_world_group" before ``init``,
    then "mccl_world_group" on the CPU and "nccl_world_group" on the GPU; every one of these names the
    world group), ``INITED`` and ``CHECK_ENVS``."""

    BACKEND = "undefined"
    WORLD_COMM_GROUP = HCCL_WORLD_COMM_GROUP
    INITED = False
    CHECK_ENVS = True


class _Group:
    __slots__ = ("name", "ranks", "mpi_comm")

    def __init__(self, name, ranks, mpi_comm):
        self.name = name
        self.ranks = tuple(ranks)  # world ranks, in group-rank order
        self.mpi_comm = mpi_comm  # None on a rank outside the group


_lock = threading.RLock()
_state: dict = {"groups": {}, "device": None, "mpi": None, "local": (0, 1), "hook": None, "timeout": DEFAULT_TIMEOUT}


_generation = [0]  # grows whenever the groups or their communicators change


def generation() -> int:
    """A number that changes whenever ``init``, ``release``, ``create_group`` or ``destroy_group`` ran:
    a communicator looked up at one generation stays valid while it is current."""
    return _generation[0]


def _key(group: str) -> str:
    return _WORLD if group in _WORLD_NAMES else group


def _check_str(caller: str, name: str, value) -> None:
    if not isinstance(value, str):
        raise TypeError(f"For '{caller}', the '{name}' must be a str, but got {type(value).__name__}.")


def require_init(caller: str) -> None:
    """Raise naming ``caller`` when ``init`` has not run."""
    if not GlobalComm.INITED:
        raise RuntimeError(
            f"For '{caller}', the communication service is not initialized: call "
            "opforge.communication.init() first (under mpiexec for several ranks)."
        )


def _group(caller: str, group) -> _Group:
    _check_str(caller, "group", group)
    require_init(caller)
    found = _state["groups"].get(_key(group))
    if found is None:
        names = [GlobalComm.WORLD_COMM_GROUP] + [g for g in _state["groups"] if g != _WORLD]
        raise ValueError(
            f"For '{caller}', the group '{group}' does not exist: create it with create_group first (groups: {names})."
        )
    return found


def group_size(caller: str, group) -> int:
    """The size of ``group``; errors name ``caller`` (a collective's inference calls this)."""
    return len(_group(caller, group).ranks)


def group_rank(caller: str, group) -> int:
    """This process's rank in ``group``; errors name ``caller``."""
    g = _group(caller, group)
    rank = _state["mpi"].COMM_WORLD.Get_rank()
    if rank not in g.ranks:
        raise ValueError(
            f"For '{caller}', this process (world rank {rank}) is not in the group '{group}' {list(g.ranks)}."
        )
    return g.ranks.index(rank)


def communicator(caller: str, group, device):
    """The communicator of ``group`` that ``device`` owns; errors name ``caller``."""
    g = _group(caller, group)
    comm = device.communicator(_key(group))
    if comm is None:
        if g.mpi_comm is None:
            rank = _state["mpi"].COMM_WORLD.Get_rank()
            raise ValueError(
                f"For '{caller}', this process (world rank {rank}) is not in the group '{group}' {list(g.ranks)}."
            )
        raise RuntimeError(
            f"For '{caller}', the {device.name} device has no communicator for the group '{group}': "
            f"init() started the {GlobalComm.BACKEND} backend for {_state['device'].name} tensors."
        )
    return comm


def _timeout() -> float:
    text = os.environ.get("OPFORGE_COMM_TIMEOUT")
    if text is None:
        return DEFAULT_TIMEOUT
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"For 'init', OPFORGE_COMM_TIMEOUT must be a number of seconds, but got {text!r}.") from None
    if not value > 0:
        raise ValueError(f"For 'init', OPFORGE_COMM_TIMEOUT must be > 0, but got {text!r}.")
    return value


def _checks_enabled() -> bool:
    return os.environ.get("OPFORGE_COMM_CHECK", "1").strip().lower() not in ("0", "false", "no", "off")


def _import_mpi():
    try:
        from mpi4py import MPI
    except ImportError as e:
        raise RuntimeError(
            f"For 'init', mpi4py is needed for the communication service ({e}); install it with "
            'pip install "opforge[dist]" (mpi4py and the mpich wheel).'
        ) from e
    return MPI


def init(backend_name=None) -> None:
    """Start the communication service: ``backend_name`` "mpi" (the CPU; MindSpore's "mccl" is taken as
    the same) or "nccl" (the GPU), by default the one of ``get_context("device_target")``. Under
    ``mpiexec -n N`` the world has N ranks; run alone, one. Calling it again changes nothing."""
    if backend_name is not None:
        _check_str("init", "backend_name", backend_name)
    with _lock:
        if GlobalComm.INITED:
            return
        target = context.get_context("device_target")
        backend = backend_name or ("nccl" if target == "GPU" else "mpi")
        if backend == "mccl":
            backend = "mpi"
        if backend not in ("mpi", "nccl"):
            raise RuntimeError(
                f"For 'init', the 'backend_name' must be 'mpi' (CPU) or 'nccl' (GPU), but got {backend_name!r}."
            )
        want = "GPU" if backend == "nccl" else "CPU"
        if want != target:
            raise RuntimeError(
                f"For 'init', the backend '{backend}' runs {want} tensors, but the device_target is {target}: "
                f"set_context(device_target='{want}') first, or init('{'nccl' if target == 'GPU' else 'mpi'}')."
            )
        MPI = _import_mpi()
        device = get_device(want)
        timeout, check = _timeout(), _checks_enabled()
        world = MPI.COMM_WORLD
        local = world.Split_type(MPI.COMM_TYPE_SHARED)
        _state.update(mpi=MPI, device=device, local=(local.Get_rank(), local.Get_size()), timeout=timeout)
        local.Free()
        _state["groups"] = {_WORLD: _Group(_WORLD, range(world.Get_size()), world)}
        world_comm = _make_communicator(backend, device, world, _WORLD, timeout, check)
        device.set_communicator(_WORLD, world_comm)
        if backend == "mpi":
            _start_native(MPI, world_comm)
        GlobalComm.BACKEND = backend
        GlobalComm.WORLD_COMM_GROUP = NCCL_WORLD_COMM_GROUP if backend == "nccl" else MCCL_WORLD_COMM_GROUP
        GlobalComm.INITED = True
        _generation[0] += 1
        if world.Get_size() > 1:
            _install_excepthook(MPI)
        if not _state.get("atexit"):  # before mpi4py's own exit hook finalizes MPI (atexit runs in reverse)
            atexit.register(release)
            _state["atexit"] = True


def _close(communicator) -> None:
    """Let a communicator finish what it holds (an MPI request on its communicator) before it is dropped."""
    close = getattr(communicator, "close", None)
    if close is not None:
        close()


def _make_communicator(backend, device, mpi_comm, name, timeout, check):
    if backend == "nccl":
        from opforge.communication.nccl import NcclCommunicator  # CuPy's NCCL: imported on the GPU only

        return NcclCommunicator(device.runtime, mpi_comm, name, timeout, check)
    from opforge.communication.mpi import MpiCommunicator

    return MpiCommunicator(mpi_comm, name, timeout, check)


def _start_native(MPI, world_comm) -> None:  # noqa: N803 - the mpi4py module
    """The C++ collective kernels call MPI directly (csrc/kernels/cpu/comm.cc); with an MPI they cannot
    call (not the MPICH ABI), the Python kernels take their place."""
    from opforge.communication import mpi

    if _state.get("native") is None:
        _state["native"] = mpi.native_setup(MPI)
        if not _state["native"]:
            from opforge.kernels.comm import register_python_collectives

            register_python_collectives()
    if _state["native"]:
        mpi.native_set_group(_WORLD, MCCL_WORLD_COMM_GROUP, world_comm)


def _native_group(key: str, display: str, communicator) -> None:
    if _state.get("native"):
        from opforge.communication import mpi

        mpi.native_set_group(key, display, communicator)


def _install_excepthook(MPI) -> None:  # noqa: N803 - the mpi4py module
    previous = sys.excepthook
    rank = MPI.COMM_WORLD.Get_rank()

    def abort_job(exc_type, exc, tb):
        try:
            # The summary first: when the abort tears the job down, mpiexec may drop the end of the output.
            sys.stderr.write(
                f"opforge.communication: rank {rank} raised {exc_type.__name__}: {exc}\n"
                f"opforge.communication: rank {rank} ends the job on every rank (MPI_Abort).\n"
            )
            sys.stderr.flush()
            previous(exc_type, exc, tb)
            sys.stderr.flush()
            sys.stdout.flush()
            # mpiexec forwards a rank's output from a pipe; an abort at once can tear the job down
            # before the summary is passed on (seen on a loaded 2-core machine): give it a moment
            time.sleep(_ABORT_GRACE_S)
        finally:
            MPI.COMM_WORLD.Abort(1)

    _state["hook"] = (previous, abort_job)
    sys.excepthook = abort_job


def release() -> None:
    """Release the communicators and groups (MPI itself is finalized when the process exits). A later
    ``init`` starts again."""
    with _lock:
        if not GlobalComm.INITED:
            return
        device = _state["device"]
        for key, g in list(_state["groups"].items()):
            if g.mpi_comm is not None:
                _close(device.communicator(key))
            device.set_communicator(key, None)
            _native_group(key, key, None)
            if key != _WORLD and g.mpi_comm is not None:
                g.mpi_comm.Free()
        _state["groups"] = {}
        hook = _state["hook"]
        if hook is not None and sys.excepthook is hook[1]:
            sys.excepthook = hook[0]
        _state["hook"] = None
        GlobalComm.BACKEND = "undefined"
        GlobalComm.WORLD_COMM_GROUP = HCCL_WORLD_COMM_GROUP
        GlobalComm.INITED = False
        _generation[0] += 1


def allgather_object(value, group=GlobalComm.WORLD_COMM_GROUP) -> list:
    """Every rank's ``value`` (a small picklable object), in rank order, over ``group`` (MPI, which NCCL's
    bootstrap uses too; this rank must be in it). For agreements outside operators, such as the ranks'
    sharding strategies."""
    require_init("allgather_object")
    mpi = _state["mpi"]
    if mpi is None:  # a world of one rank
        return [value]
    if group in _WORLD_NAMES or group == _WORLD:
        comm, group = mpi.COMM_WORLD, GlobalComm.WORLD_COMM_GROUP
    else:
        found = _state["groups"].get(group)
        if found is None or found.mpi_comm is None:
            raise ValueError(f"For 'allgather_object', this rank is not in a group named {group!r}.")
        comm = found.mpi_comm
    from opforge.communication.mpi import wait_with_deadline  # (mpi4py's backend: imported once MPI is there)

    # every rank of the group has come once the barrier completes: the blocking allgather cannot hang then
    rank = mpi.COMM_WORLD.Get_rank()
    wait_with_deadline(comm.Ibarrier(), _state["timeout"], "allgather_object", rank, group, comm.Get_size())
    return comm.allgather(value)


def get_rank(group=GlobalComm.WORLD_COMM_GROUP) -> int:
    """This process's rank in ``group``."""
    return group_rank("get_rank", group)


def get_group_size(group=GlobalComm.WORLD_COMM_GROUP) -> int:
    """The number of ranks in ``group``."""
    return group_size("get_group_size", group)


def get_local_rank(group=GlobalComm.WORLD_COMM_GROUP) -> int:
    """This process's rank among the ranks of the world on its machine (the world group only)."""
    _group("get_local_rank", group)
    if _key(group) != _WORLD:
        raise ValueError("For 'get_local_rank', only the world group is supported.")
    return _state["local"][0]


def get_local_rank_size(group=GlobalComm.WORLD_COMM_GROUP) -> int:
    """The number of ranks of the world on this process's machine (the world group only)."""
    _group("get_local_rank_size", group)
    if _key(group) != _WORLD:
        raise ValueError("For 'get_local_rank_size', only the world group is supported.")
    return _state["local"][1]


def get_world_rank_from_group_rank(group, group_rank_id) -> int:
    g = _group("get_world_rank_from_group_rank", group)
    if not isinstance(group_rank_id, int) or not 0 <= group_rank_id < len(g.ranks):
        raise ValueError(
            f"For 'get_world_rank_from_group_rank', the 'group_rank_id' must be in [0, {len(g.ranks)}), "
            f"but got {group_rank_id!r}."
        )
    return g.ranks[group_rank_id]


def get_group_rank_from_world_rank(world_rank_id, group) -> int:
    g = _group("get_group_rank_from_world_rank", group)
    if world_rank_id not in g.ranks:
        raise ValueError(
            f"For 'get_group_rank_from_world_rank', the world rank {world_rank_id!r} is not in the group "
            f"'{group}' {list(g.ranks)}."
        )
    return g.ranks.index(world_rank_id)


def create_group(group, rank_ids) -> None:
    """Create the group ``group`` of the world ranks ``rank_ids`` (its ranks in that order). Every rank
    in ``rank_ids`` must call it (a collective over them); a rank outside the group may call it too and
    then knows the group without being in it."""
    _check_str("create_group", "group", group)
    require_init("create_group")
    with _lock:
        if group in _WORLD_NAMES or group == _WORLD or group in _state["groups"]:
            raise ValueError(f"For 'create_group', the group '{group}' exists already.")
        world = _state["mpi"].COMM_WORLD
        size = world.Get_size()
        if not isinstance(rank_ids, (list, tuple)) or not rank_ids:
            raise TypeError(
                f"For 'create_group', the 'rank_ids' must be a non-empty list of ints, but got {rank_ids!r}."
            )
        if not all(isinstance(r, int) and not isinstance(r, bool) and 0 <= r < size for r in rank_ids):
            raise ValueError(
                f"For 'create_group', every rank id must be an int in [0, {size}), but got {list(rank_ids)}."
            )
        if len(set(rank_ids)) != len(rank_ids):
            raise ValueError(f"For 'create_group', the 'rank_ids' must not repeat a rank, but got {list(rank_ids)}.")
        comm = None
        if world.Get_rank() in rank_ids:
            comm = world.Create_group(world.Get_group().Incl(list(rank_ids)), tag=7)
        _state["groups"][group] = _Group(group, rank_ids, comm)
        _generation[0] += 1
        if comm is not None:
            device = _state["device"]
            made = _make_communicator(
                GlobalComm.BACKEND, device, comm, group, _state["timeout"], device.communicator(_WORLD).check
            )
            device.set_communicator(group, made)
            if GlobalComm.BACKEND == "mpi":
                _native_group(group, group, made)


def destroy_group(group) -> None:
    """Forget the group ``group`` (not the world) and free its communicator."""
    _check_str("destroy_group", "group", group)
    require_init("destroy_group")
    with _lock:
        if group in _WORLD_NAMES or group == _WORLD:
            raise ValueError(f"For 'destroy_group', the world group '{group}' cannot be destroyed.")
        g = _group("destroy_group", group)
        if g.mpi_comm is not None:
            _close(_state["device"].communicator(group))
        _state["device"].set_communicator(group, None)
        _native_group(group, group, None)
        if g.mpi_comm is not None:
            g.mpi_comm.Free()
        del _state["groups"][group]
        _generation[0] += 1
