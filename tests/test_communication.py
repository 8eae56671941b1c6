"""opforge.communication and the collectives, in real MPI jobs: ``mpiexec -n 2`` and ``-n 3`` run the
scripts of tests/mpi_scripts/ (each checks every collective and its bprop against NumPy on every rank, or a
fault), with a timeout. hydra starts each rank in a session of its own, so killing mpiexec leaves the
ranks running: every rank inherits a marker in its environment, and whatever still carries it when
a job ends is killed (by pid, read from /proc)."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import numpy as np
import pytest

import opforge
from opforge import Tensor, communication, ops

# The mpiexec jobs run one at a time, on one pytest-xdist worker (tests/test_data_parallel.py's group).
pytestmark = pytest.mark.xdist_group("mpi")
MPI = pytest.importorskip("mpi4py.MPI", reason='the collectives need mpi4py: pip install -e ".[test,dist]"')
MPIEXEC = shutil.which("mpiexec") or str(Path(sys.executable).parent / "mpiexec")
DIST = Path(__file__).parent / "mpi_scripts"
_MARK = "OPFORGE_TEST_MPI_MARKER"


def _kill_marked(marker: str) -> list:
    needle = f"{_MARK}={marker}".encode()
    killed = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as f:
                env = f.read().split(b"\0")
        except OSError:
            continue
        if needle in env:
            try:
                os.kill(int(name), signal.SIGKILL)
                killed.append(int(name))
            except OSError:
                pass
    return killed


def after_fault(out: str) -> float:
    """Seconds from the fault (dead_rank.py prints when rank 1 makes it) to now, the job having ended."""
    match = re.search(r"FAULT AT ([0-9.]+)", out)
    assert match, out
    return time.time() - float(match.group(1))


def run_mpi(script: str, n: int, timeout: float, **env):
    """(returncode, stdout + stderr, seconds) of ``mpiexec -n n python tests/mpi_scripts/script``."""
    marker = uuid.uuid4().hex
    full_env = {**os.environ, _MARK: marker, "OMP_NUM_THREADS": "1", **env}
    cmd = [MPIEXEC, "-n", str(n), sys.executable, str(DIST / script)]  # script may be an absolute path
    start = time.monotonic()
    try:
        proc = subprocess.run(cmd, env=full_env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"").decode(errors="replace") + (e.stderr or b"").decode(errors="replace")
        pytest.fail(f"{' '.join(cmd)} did not finish within {timeout} s:\n{out}", pytrace=False)
    finally:
        _kill_marked(marker)
    return proc.returncode, proc.stdout + proc.stderr, time.monotonic() - start


@pytest.mark.parametrize("n, check", [(2, "1"), (3, "1"), (2, "0")], ids=["2 ranks", "3 ranks", "2 ranks, no check"])
def test_every_collective_and_bprop_against_numpy(n, check):
    rc, out, _ = run_mpi("collectives.py", n, timeout=240, OPFORGE_COMM_CHECK=check)
    assert rc == 0, out
    for r in range(n):
        assert f"OK rank {r} of {n}" in out, out


def test_the_docs_run_on_two_ranks(tmp_path):
    """docs/distributed.md's code blocks, under mpiexec -n 2 (tests/test_docs.py runs them in one process)."""
    text = (Path(__file__).parent.parent / "docs" / "distributed.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    script = tmp_path / "distributed_md.py"
    script.write_text("\n".join(blocks) + "\nprint(f'DOC OK rank {rank}', flush=True)\n")
    rc, out, _ = run_mpi(str(script), 2, timeout=120)
    assert rc == 0, out
    assert "DOC OK rank 0" in out and "DOC OK rank 1" in out, out


@pytest.mark.parametrize("n", [2, 3])
def test_ranks_that_disagree_all_raise_naming_every_rank(n):
    rc, out, _ = run_mpi("mismatch.py", n, timeout=120)
    assert rc == 0, out
    for r in range(n):
        assert f"OK rank {r}" in out, out


def test_a_rank_that_raises_ends_the_job_naming_it():
    rc, out, _ = run_mpi("dead_rank.py", 3, timeout=150, FAULT="raise", OPFORGE_COMM_TIMEOUT="300")
    assert rc != 0, out
    assert "rank 1 raised ValueError: a bug on rank 1" in out, out
    assert "AllReduce returned" not in out, out
    assert after_fault(out) < 30, out  # MPI_Abort, not the 300 s timeout


def test_a_rank_that_exits_ends_the_job():
    rc, out, _ = run_mpi("dead_rank.py", 2, timeout=150, FAULT="exit", OPFORGE_COMM_TIMEOUT="300")
    assert rc != 0, out
    assert "AllReduce returned" not in out, out
    assert after_fault(out) < 30, out


def test_an_object_exchange_a_rank_never_joins_times_out():
    """``allgather_object`` (the ranks' strategy check, outside operators) waits at most OPFORGE_COMM_TIMEOUT for
    every rank of its group, as the collectives do: a blocking MPI allgather would wait forever."""
    env = {"FAULT": "hang", "OPFORGE_COMM_TIMEOUT": "2", "COLLECTIVE": "allgather_object"}
    rc, out, _ = run_mpi("dead_rank.py", 2, timeout=150, **env)
    assert rc != 0, out
    assert "For 'allgather_object', rank 0 waited 2 s (OPFORGE_COMM_TIMEOUT)" in out, out
    assert 1 <= after_fault(out) < 32, out


def test_a_rank_that_hangs_ends_the_job_after_the_timeout():
    rc, out, _ = run_mpi("dead_rank.py", 2, timeout=150, FAULT="hang", OPFORGE_COMM_TIMEOUT="2")
    assert rc != 0, out
    assert "For 'AllReduce', rank 0 waited 2 s (OPFORGE_COMM_TIMEOUT)" in out, out
    assert "rank 0 ends the job" in out, out
    assert 1 <= after_fault(out) < 32, out  # the 2 s timeout, then the abort; without it rank 0 would wait forever


# ---------------------------------------------------------------------------------------------
# In this process: a world of one rank


@pytest.fixture
def world():
    communication.init()
    yield
    communication.init()  # leave it initialised: the sweep's records run collectives in this process


def test_before_init_a_collective_names_the_operator(world):
    communication.release()
    assert not communication.GlobalComm.INITED and communication.GlobalComm.BACKEND == "undefined"
    x = Tensor(np.ones((2,), np.float32))
    for prim in (ops.AllReduce(), ops.AllGather(), ops.Broadcast(0)):
        with pytest.raises(RuntimeError, match=rf"For '{prim.name}', the communication service is not initialized"):
            prim((x,) if prim.name == "Broadcast" else x)
    with pytest.raises(RuntimeError, match="For 'get_rank', the communication service is not initialized"):
        communication.get_rank()
    # a plan built before release() is not run on a released communicator either
    communication.init()
    allreduce = ops.AllReduce()
    allreduce(x)
    communication.release()
    with pytest.raises(RuntimeError, match="For 'AllReduce', the communication service is not initialized"):
        allreduce(x)


def test_unknown_group_names_the_operator_and_the_group(world):
    x = Tensor(np.ones((2,), np.float32))
    with pytest.raises(ValueError, match=r"For 'AllReduce', the group 'nope' does not exist"):
        ops.AllReduce(group="nope")(x)
    with pytest.raises(ValueError, match=r"For 'get_group_size', the group 'nope' does not exist"):
        communication.get_group_size("nope")
    with pytest.raises(TypeError, match="For 'AllGather', the 'group'"):
        ops.AllGather(group=3)


def test_a_world_of_one_rank(world):
    g = communication.GlobalComm
    assert g.INITED and g.BACKEND == "mpi" and g.WORLD_COMM_GROUP == "mccl_world_group"
    assert communication.get_rank() == 0 and communication.get_group_size() == 1
    assert communication.get_rank("hccl_world_group") == 0  # MindSpore's default name is the world too
    assert communication.get_local_rank() == 0 and communication.get_local_rank_size() == 1
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(ops.AllReduce(ops.ReduceOp.MAX)(Tensor(x)).asnumpy(), x)
    np.testing.assert_array_equal(ops.AllGather()(Tensor(x)).asnumpy(), x)
    communication.create_group("me", [0])
    assert communication.get_group_size("me") == 1
    np.testing.assert_array_equal(ops.AllReduce(group="me")(Tensor(x)).asnumpy(), x)
    communication.destroy_group("me")
    with pytest.raises(ValueError, match="does not exist"):
        communication.get_rank("me")
    with pytest.raises(ValueError, match="For 'create_group', every rank id must be an int in \\[0, 1\\)"):
        communication.create_group("bad", [0, 1])
    with pytest.raises(TypeError, match="For 'init', the 'backend_name' must be a str"):
        communication.release() or communication.init(3)
    with pytest.raises(RuntimeError, match="For 'init', the backend 'nccl' runs GPU tensors"):
        communication.init("nccl")
    assert opforge.communication.management.get_rank is communication.get_rank


def test_the_cpu_collectives_run_in_cpp_on_mpich(world):
    """AllReduce, ReduceScatter, AllGather and AlltoAll call MPI from C++ (csrc/kernels/cpu/comm.cc) for every
    dtype but the complex reductions (their Python kernels); a sharded network's redistributions need no Python."""
    from opforge.kernels import registry
    from opforge.kernels.comm import BUILDERS, NATIVE

    if not communication.management._state.get("native"):
        pytest.skip("this MPI is not the MPICH ABI: the Python kernels run")
    for op_name in NATIVE:
        sources = {e.attr: e.source for e in registry.kernels_for(op_name, "CPU")}
        _, dtypes, make_attr = BUILDERS[op_name]
        for t in dtypes:
            reducing_complex = op_name in ("AllReduce", "ReduceScatter") and t in opforge.dtype.complex_type
            assert (sources[make_attr(t)] == "builtin") != reducing_complex, (op_name, t, sources[make_attr(t)])
    x = np.arange(12, dtype=np.float16).reshape(2, 3, 2)  # one rank: each is the identity (ReduceScatter too)
    for prim in (ops.AllReduce(), ops.ReduceScatter(), ops.AllGather(), ops.AlltoAll(1, 1, 2)):
        np.testing.assert_array_equal(prim(Tensor(x)).asnumpy(), x)


def test_attrs_are_checked_naming_the_operator(world):
    with pytest.raises(ValueError, match="For 'AllReduce', the 'op'"):
        ops.AllReduce("mean")
    with pytest.raises(TypeError, match="For 'AllReduce', the op 'max' does not order complex"):
        ops.AllReduce("max")(Tensor(np.ones((2,), np.complex64)))
    with pytest.raises(ValueError, match="For 'AlltoAll', the 'split_count' must be the group size 1"):
        ops.AlltoAll(2, 0, 0)(Tensor(np.ones((2,), np.float32)))
    with pytest.raises(ValueError, match="For 'Send', the 'dest_rank' must be a rank of the group"):
        ops.Send(0, 1)(Tensor(np.ones((2,), np.float32)))
    with pytest.raises(ValueError, match="For 'Broadcast', the 'root_rank' must be in \\[0, 1\\)"):
        ops.Broadcast(1)((Tensor(np.ones((2,), np.float32)),))


def test_the_collectives_are_listed_by_the_tools(world, capsys):
    from opforge.testing import opcheck
    from opforge.tools import profiler
    from opforge.tools.cli import doctor_problems, main

    assert main(["ops"]) == 0
    listed = capsys.readouterr().out
    for name in ("AllReduce", "AllGather", "ReduceScatter", "Broadcast", "AlltoAll", "Send", "Receive"):
        assert name in listed
    for prim in (ops.AllReduce(), ops.AllGather(), ops.ReduceScatter(), ops.AlltoAll(1, 0, 1)):
        report = opcheck(prim, [(np.arange(6.0).reshape(2, 3),)], lambda x: x, backends=["CPU"], check_double_grad=True)
        assert report.passed, str(report)

    assert not [p for p in doctor_problems() if any(k in p for k in ("AllReduce", "AllGather", "Broadcast"))]
    with profiler.Profile() as prof:
        ops.AllReduce()(Tensor(np.ones((4,), np.float32)))
        ops.AllGather()(Tensor(np.ones((4,), np.float32)))
    assert sorted((s.op, s.backend, s.impl) for s in prof.stats()) == [
        ("AllGather", "CPU", "cpp"),  # (both C++ kernels: csrc/kernels/cpu/comm.cc)
        ("AllReduce", "CPU", "cpp"),
    ]
