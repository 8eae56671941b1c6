"""``opforge run -n N script.py [args]``: start ``N`` ranks of a Python script under the installed MPI.

It wraps ``mpiexec`` (the ``mpich`` wheel's Hydra, found next to the Python interpreter or on the
PATH) and runs ``mpiexec -n N <this python> script.py args``; plain ``mpiexec -n N python script.py``
does the same. Each rank gets ``OMP_NUM_THREADS`` = cores // N (at least 1) unless it is set, so ranks do
not fight over the cores. The exit code is mpiexec's (non-zero when a rank failed).
"""

from __future__ import annotations

import os
import pathlib
import shutil
import subprocess
import sys

__all__ = ["MPI_INSTALL_HINT", "MpiNotFoundError", "find_mpiexec", "mpiexec_command", "run", "world_size", "world_rank"]

MPI_INSTALL_HINT = 'pip install "opforge[dist]"  (mpi4py and the mpich wheel, which ships mpiexec)'


class MpiNotFoundError(RuntimeError):
    """No ``mpiexec`` (or no mpi4py) is installed."""


def find_mpiexec() -> str:
    """The path of ``mpiexec``: next to ``sys.executable``, next to the base interpreter (a venv made
    with --system-site-packages), then on the PATH. Raises ``MpiNotFoundError`` saying how to install it."""
    env = os.environ.get("OPFORGE_MPIEXEC")
    if env:
        if not (os.path.isfile(env) and os.access(env, os.X_OK)):
            raise MpiNotFoundError(f"OPFORGE_MPIEXEC is {env!r}, which is not an executable file.")
        return env
    for folder in dict.fromkeys(
        [pathlib.Path(sys.executable).parent, pathlib.Path(sys.base_prefix) / "bin", pathlib.Path(sys.prefix) / "bin"]
    ):
        candidate = folder / "mpiexec"
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    found = shutil.which("mpiexec")
    if found:
        return found
    raise MpiNotFoundError(
        f"MPI is not installed: no 'mpiexec' next to {sys.executable} or on the PATH. {MPI_INSTALL_HINT}"
    )


def _check_mpi4py() -> None:
    try:
        import mpi4py  # noqa: F401, PLC0415 - only to say it is missing before N ranks fail
    except ImportError:
        raise MpiNotFoundError(f"mpi4py is not installed. {MPI_INSTALL_HINT}") from None


RANK_GUARD = str(pathlib.Path(__file__).with_name("rank_guard.py"))


def mpiexec_command(n: int, argv: list, mpiexec: str | None = None) -> list:
    """``[mpiexec, -n, N, python, rank_guard.py, *argv]``: each rank runs under a guard that names it
    when it dies (rank_guard.py)."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"the number of ranks must be an int >= 1, but got {n!r}.")
    return [mpiexec or find_mpiexec(), "-n", str(n), sys.executable, RANK_GUARD, *argv]


def rank_environment(n: int, env: dict | None = None) -> dict:
    """The ranks' environment: OMP_NUM_THREADS split between the ranks unless set."""
    env = dict(os.environ if env is None else env)
    env.setdefault("OMP_NUM_THREADS", str(max(1, (os.cpu_count() or 1) // n)))
    return env


def run(n: int, argv: list, env: dict | None = None) -> int:
    """Run ``python *argv`` on ``n`` ranks and wait; returns mpiexec's exit code."""
    import uuid

    _check_mpi4py()
    cmd = mpiexec_command(n, list(argv))
    env = rank_environment(n, env)
    job = env.setdefault(JOB_VARIABLE, uuid.uuid4().hex)  # an enclosing job's id is kept: it finds these too
    try:
        return subprocess.call(cmd, env=env)
    except KeyboardInterrupt:
        return 130
    finally:
        kill_job(job)  # no rank outlives the command (Hydra starts each in a session of its own)


def world_size() -> int:
    """The number of ranks this process was started with by mpiexec (1 without a launcher), read from
    the launcher's environment without starting MPI."""
    for var in ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "PMIX_SIZE"):
        value = os.environ.get(var, "")
        if value.isdigit():
            return int(value)
    return 1


JOB_VARIABLE = "OPFORGE_JOB_ID"


def job_processes(job_id: str) -> list:
    """The pids of the processes whose environment has ``OPFORGE_JOB_ID=job_id`` (Linux ``/proc``): the
    ranks of a job, which Hydra starts in sessions of their own, so killing ``mpiexec`` leaves them."""
    needle = f"{JOB_VARIABLE}={job_id}".encode() + b"\0"
    pids = []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return pids
    for name in entries:
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as f:
                if needle in f.read() + b"\0":
                    pids.append(int(name))
        except OSError:
            continue
    return pids


def kill_job(job_id: str) -> list:
    """SIGKILL every process of the job ``job_id``; returns their pids."""
    import signal

    pids = job_processes(job_id)
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    return pids


def world_rank() -> int:
    """This process's rank as the launcher set it (0 without a launcher), without starting MPI."""
    for var in ("PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK"):
        value = os.environ.get(var, "")
        if value.isdigit():
            return int(value)
    return 0


def main(args) -> int:
    """The ``opforge run`` command (parsed arguments: ``n``, ``script``, ``args``)."""
    if not args.script:
        print("opforge run: give a script to run: opforge run -n 2 script.py [args]", file=sys.stderr)
        return 2
    script = args.script
    argv = [script, *args.args]
    if not os.path.isfile(script):
        print(f"opforge run: no such script: {script}", file=sys.stderr)
        return 2
    try:
        return run(args.n, argv)
    except (MpiNotFoundError, ValueError) as e:
        print(f"opforge run: {e}", file=sys.stderr)
        return 1
