"""Run one rank of an ``opforge run`` job and name it if it dies (run by path, importing nothing of opforge).

``opforge run -n N script.py`` starts ``mpiexec -n N python rank_guard.py script.py args``: this guard
starts the script as its child (which inherits the launcher's PMI connection, so the child is the MPI
rank), waits for it, and when it ends abnormally - an exception (opforge's excepthook has named the rank
already), ``os._exit(code)``, ``sys.exit(code)`` or a signal - prints which rank died and how, then exits
with the child's status so that mpiexec ends the job. The child dies with the guard (PR_SET_PDEATHSIG),
so killing the job leaves no orphan rank.
"""

import ctypes
import os
import signal
import subprocess
import sys

PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except OSError:  # not Linux: the job's kill_job still finds the rank by its environment
        pass


def _rank() -> str:
    for var in ("PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK"):
        if os.environ.get(var, "").isdigit():
            return os.environ[var]
    return "?"


def describe(returncode: int) -> str:
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        return f"was killed by {name}"
    return f"exited with code {returncode}"


def main(argv: list) -> int:
    fds = tuple(int(os.environ[v]) for v in ("PMI_FD",) if os.environ.get(v, "").isdigit())
    child = subprocess.Popen([sys.executable, *argv], pass_fds=fds, preexec_fn=_die_with_parent)
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda s, _frame: child.send_signal(s))
    code = child.wait()
    if code != 0:
        print(f"opforge run: rank {_rank()} (pid {child.pid}) {describe(code)}", file=sys.stderr, flush=True)
    return code if code >= 0 else 128 - code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
