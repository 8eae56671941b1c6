"""Data-parallel training: the auto-parallel context, nn.DistributedGradReducer, TrainOneStepCell's
reduction, the tape's on_ready hook, ``opforge run`` and ``opforge demo --workers``.

The equality tests start real ``mpiexec -n 2`` and ``-n 3`` jobs: every rank trains on its share of
each global batch and must end with the parameters of one process trained on the whole batches.
Each job has a timeout; on a timeout every process of the job (found by ``OPFORGE_JOB_ID`` in its
environment, since Hydra starts each rank in a session of its own) is killed.
"""

from __future__ import annotations

import os
import pathlib
import re
import subprocess
import sys
import time
import uuid

import numpy as np
import pytest

import opforge
from opforge import communication, nn
from opforge.bprop.grad_operation import _value_and_grad
from opforge.context import ParallelMode
from opforge.tools import bench_parallel, cli, launch

HERE = pathlib.Path(__file__).parent
DOC = HERE.parent / "docs" / "distributed_training.md"
SCRIPTS = HERE / "dp_scripts"

try:
    MPIEXEC = launch.find_mpiexec()
    import mpi4py  # noqa: F401
except (launch.MpiNotFoundError, ImportError):  # pragma: no cover - the dist extra installs both
    MPIEXEC = None

_skip_without_mpi = pytest.mark.skipif(MPIEXEC is None, reason='needs MPI: pip install "opforge[dist]"')
# The mpiexec jobs share one pytest-xdist worker (`--dist loadgroup`), so they never run at once: each
# starts 2-4 ranks that poll their requests, and several jobs together oversubscribe the cores.
mpi_jobs = pytest.mark.xdist_group("mpi")


def needs_mpi(test):
    """A test that starts mpiexec jobs: skipped without MPI, and in the "mpi" xdist group."""
    return _skip_without_mpi(mpi_jobs(test))


def run_job(argv: list, n: int | None = None, timeout: float = 120.0, env: dict | None = None):
    """Run ``[mpiexec -n n python] *argv`` (or ``argv`` as is when ``n`` is None); returns the
    CompletedProcess. On a timeout, kill every process of the job and fail."""
    job = uuid.uuid4().hex
    full_env = {**os.environ, "OMP_NUM_THREADS": "1", **(env or {}), launch.JOB_VARIABLE: job}
    cmd = argv if n is None else [MPIEXEC, "-n", str(n), sys.executable, *argv]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=full_env)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        launch.kill_job(job)
        proc.kill()
        out, err = proc.communicate()
        pytest.fail(f"the job {cmd} did not finish in {timeout} s:\n{out}\n{err}")
    finally:
        deadline = time.monotonic() + 5
        while launch.job_processes(job) and time.monotonic() < deadline:  # nothing of the job outlives the test
            time.sleep(0.1)
        launch.kill_job(job)
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


@pytest.fixture(autouse=True)
def _stand_alone():
    communication.init()  # a world of one rank in this process
    opforge.reset_auto_parallel_context()
    yield
    opforge.reset_auto_parallel_context()


# ---------------------------------------------------------------------------------------------
# The auto-parallel context


def test_context_defaults_set_get_reset():
    assert opforge.ParallelMode is ParallelMode and opforge.context.ParallelMode is ParallelMode
    assert opforge.get_auto_parallel_context("parallel_mode") == "stand_alone"
    assert opforge.get_auto_parallel_context("gradients_mean") is False
    assert opforge.get_auto_parallel_context("device_num") == 1
    assert opforge.get_auto_parallel_context("global_rank") == 0
    assert opforge.get_auto_parallel_context("all_reduce_fusion_config") == []
    opforge.set_auto_parallel_context(
        parallel_mode=ParallelMode.DATA_PARALLEL,
        gradients_mean=True,
        device_num=2,
        global_rank=1,
        parameter_broadcast=False,
        all_reduce_fusion_config=[2, 4],
        comm_fusion={"allreduce": {"mode": "size", "config": 32}},
    )
    assert opforge.get_auto_parallel_context("parallel_mode") == "data_parallel"
    assert opforge.get_auto_parallel_context("device_num") == 2
    assert opforge.get_auto_parallel_context("comm_fusion")["allreduce"] == {"mode": "size", "config": 32}
    opforge.reset_auto_parallel_context()
    assert opforge.get_auto_parallel_context("parallel_mode") == "stand_alone"
    assert opforge.get_auto_parallel_context("parameter_broadcast") is True


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"parallel_mode": "hybrid_parallel"}, ValueError, "not supported by opforge"),
        ({"parallel_mode": "nope"}, ValueError, "must be one of"),
        ({"gradients_mean": 1}, TypeError, "'gradients_mean' must be bool"),
        ({"device_num": 0}, ValueError, r"'device_num' must be in \[1, 4096\]"),
        ({"global_rank": 4096}, ValueError, "'global_rank'"),
        ({"all_reduce_fusion_config": [3, 2]}, ValueError, "increasing"),
        ({"comm_fusion": {"allreduce": {"mode": "size", "config": -1}}}, ValueError, "MB > 0"),
        ({"comm_fusion": {"allreduce": {"mode": "fast"}}}, ValueError, r"\['mode'\] must be"),
        ({"nope": 1}, ValueError, "unknown option 'nope'"),
    ],
)
def test_context_bad_options(kwargs, error, match):
    with pytest.raises(error, match=match):
        opforge.set_auto_parallel_context(**kwargs)
    assert opforge.get_auto_parallel_context("parallel_mode") == "stand_alone"  # nothing changed
    with pytest.raises(ValueError, match="unknown option"):
        opforge.get_auto_parallel_context("nope")


# ---------------------------------------------------------------------------------------------
# One rank: the reducer, buckets, the tape hook


def _mlp(seed=0):
    nn.set_seed(seed)
    return nn.SequentialCell(nn.Dense(8, 16, activation="tanh"), nn.Dense(16, 16, activation="tanh"), nn.Dense(16, 3))


def test_reducer_on_one_rank_is_the_identity_and_buckets_by_size():
    net = _mlp()
    params = net.trainable_params()
    reducer = nn.DistributedGradReducer(params, mean=True)
    assert reducer.group_size == 1 and reducer.degree == 1 and reducer.collectives_per_step == 0
    assert len(reducer.bucket_sizes) == 1  # 6 small parameters: one 25 MB bucket
    grads = tuple(opforge.Tensor(np.full(p.shape, i, np.float32)) for i, p in enumerate(params))
    out = reducer(grads)
    for i, (g, p) in enumerate(zip(out, params)):
        assert g.shape == p.shape and g.dtype == p.dtype and np.all(g.asnumpy() == i)
    # Per-parameter all-reduces (fusion_type 0), explicit split indices, small buckets.
    assert len(nn.DistributedGradReducer(params, fusion_type=0).bucket_sizes) == len(params)
    opforge.set_auto_parallel_context(all_reduce_fusion_config=[2, 4])
    assert len(nn.DistributedGradReducer(params).bucket_sizes) == 3
    opforge.reset_auto_parallel_context()
    small = nn.DistributedGradReducer(params, bucket_cap_mb=16 * 16 * 4 / 2**20)  # one 16x16 weight
    assert 2 < len(small.bucket_sizes) < len(params)
    # mean divides by the degree.
    halved = nn.DistributedGradReducer(params, mean=True, degree=2)(grads)
    assert np.all(halved[1].asnumpy() == 0.5)


def test_reducer_bad_input():
    params = _mlp().trainable_params()
    with pytest.raises(ValueError, match="must not be empty"):
        nn.DistributedGradReducer([])
    with pytest.raises(TypeError, match="'mean' must be bool"):
        nn.DistributedGradReducer(params, mean=1)
    with pytest.raises(ValueError, match="'degree' must be an int >= 1"):
        nn.DistributedGradReducer(params, degree=0)
    with pytest.raises(ValueError, match="For 'DistributedGradReducer', the group 'nope' does not exist"):
        nn.DistributedGradReducer(params, group="nope")
    communication.release()
    try:
        with pytest.raises(RuntimeError, match="For 'DistributedGradReducer', the communication service is not init"):
            nn.DistributedGradReducer(params)
    finally:
        communication.init()
    reducer = nn.DistributedGradReducer(params)
    with pytest.raises(ValueError, match="one gradient per parameter"):
        reducer(())
    with pytest.raises(ValueError, match=r"gradient 0 .* must have shape \[16, 8\]"):
        reducer(tuple(opforge.Tensor(np.zeros((2,), np.float32)) for _ in params))


def test_tape_reports_each_gradient_when_it_is_final():
    net = _mlp()
    loss = nn.WithLossCell(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"))
    params = net.trainable_params()
    seen = []
    run = _value_and_grad(loss, None, params, False, "test", False, lambda key, g: seen.append((key, g)))
    x = opforge.Tensor(np.random.default_rng(0).normal(size=(5, 8)).astype(np.float32))
    y = opforge.Tensor(np.array([0, 1, 2, 0, 1], np.int32))
    _, grads = run(x, y)
    ids = [id(p) for p in params]
    # Every parameter once, last layer first (the order the backward pass finishes them), each with
    # the final gradient the call returns.
    assert [ids.index(k) for k, _ in seen] == [5, 4, 3, 2, 1, 0]
    for key, g in seen:
        assert g is grads[ids.index(key)]


def test_train_one_step_cell_stand_alone_has_no_reducer_and_one_rank_data_parallel_is_unchanged():
    x = np.random.default_rng(1).normal(size=(6, 8)).astype(np.float32)
    y = np.array([0, 1, 2, 0, 1, 2], np.int32)
    results = []
    for mode in (ParallelMode.STAND_ALONE, ParallelMode.DATA_PARALLEL):
        opforge.set_auto_parallel_context(parallel_mode=mode, gradients_mean=True)
        net = _mlp(3)
        loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
        step = nn.TrainOneStepCell(nn.WithLossCell(net, loss), nn.Momentum(net.trainable_params(), 0.1, 0.9))
        assert step.reducer_flag == (mode == ParallelMode.DATA_PARALLEL)
        assert isinstance(step.grad_reducer, nn.Identity) == (mode == ParallelMode.STAND_ALONE)  # as MindSpore's
        for _ in range(3):
            step(opforge.Tensor(x), opforge.Tensor(y))
        results.append([p.asnumpy() for p in net.trainable_params()])
    for a, b in zip(*results):
        np.testing.assert_array_equal(a, b)


# ---------------------------------------------------------------------------------------------
# Real MPI jobs


@needs_mpi
@pytest.mark.parametrize(
    "n, extra",
    [
        (2, ["--optimizer", "momentum"]),
        (2, ["--optimizer", "momentum", "--graph"]),  # GRAPH_MODE, the TrainOneStepCell called directly
        (2, ["--optimizer", "adam", "--bucket-mb", "0.001"]),  # a bucket per 1 KB: several overlapped all-reduces
        (3, ["--optimizer", "adam"]),
        (3, ["--optimizer", "sgd", "--bucket-mb", "0.0005"]),
    ],
)
def test_data_parallel_equals_one_process_on_the_whole_batches(n, extra):
    result = run_job([str(SCRIPTS / "equality.py"), "--batch", "12", *extra], n=n, timeout=180)
    assert result.returncode == 0, result.stdout + result.stderr
    line = next(ln for ln in result.stdout.splitlines() if "DP-OK" in ln)
    fields = dict(f.split("=") for f in line.split()[1:])
    assert int(fields["ranks"]) == n
    assert int(fields["collectives_per_step"]) < int(fields["params"])  # fused buckets
    if "--bucket-mb" in extra:
        assert int(fields["collectives_per_step"]) > 1


@needs_mpi
def test_a_rank_that_raises_during_training_ends_the_job_naming_it():
    start = time.monotonic()
    result = run_job([str(SCRIPTS / "fault.py")], n=2, timeout=60, env={"FAULT": "raise"})
    out = result.stdout + result.stderr
    assert result.returncode != 0 and time.monotonic() - start < 40, out
    # The message naming rank 1 is communication's excepthook's. Hydra sometimes loses the aborting
    # rank's last output (2 runs in 12 here, the traceback cut short or absent): then nothing is named.
    if "opforge.communication: rank" in out:
        assert "opforge.communication: rank 1 raised ValueError: a bug on rank 1 at step 3" in out, out
    assert "step 4 done" not in out  # no rank trained past the fault


@needs_mpi
def test_a_rank_that_hangs_during_training_times_out_in_the_reducer(tmp_path):
    start = time.monotonic()
    log = tmp_path / "fault"
    env = {"FAULT": "hang", "OPFORGE_COMM_TIMEOUT": "3", "FAULT_LOG": str(log)}
    result = run_job([str(SCRIPTS / "fault.py")], n=2, timeout=60, env=env)
    out = result.stdout + result.stderr
    out += "".join(p.read_text() for p in tmp_path.glob("fault.*"))  # (the launcher may lose the last output)
    assert result.returncode != 0 and time.monotonic() - start < 40, out
    assert "For 'DistributedGradReducer', rank 0 waited 3 s (OPFORGE_COMM_TIMEOUT)" in out


@needs_mpi
@pytest.mark.parametrize(
    "fault, named",
    [
        ("raise", r"opforge\.communication: rank 1 raised ValueError: a bug on rank 1 at step 3"),  # excepthook
        ("exit", r"opforge run: rank 1 \(pid \d+\) exited with code 3"),  # the rank guard
        ("signal", r"opforge run: rank 1 \(pid \d+\) was killed by SIGKILL"),
    ],
)
def test_opforge_run_names_a_rank_that_dies_during_data_parallel_training(fault, named):
    """Rank 1 dies at step 3 while rank 0 waits for it in the reducer's all-reduce: under ``opforge run``
    the job ends (well before rank 0's reducer would time out) naming rank 1 and how it died."""
    start = time.monotonic()
    argv = [sys.executable, "-m", "opforge", "run", "-n", "2", str(SCRIPTS / "fault.py")]
    result = run_job(argv, timeout=90, env={"FAULT": fault, "OPFORGE_COMM_TIMEOUT": "60"})
    out = result.stdout + result.stderr
    assert result.returncode != 0 and time.monotonic() - start < 50, out
    assert re.search(named, out), out
    assert "rank 0: step 2 done" in out and "step 3 done" not in out and "step 4 done" not in out


@needs_mpi
def test_opforge_run_launches_a_script_on_n_ranks(tmp_path):
    script = tmp_path / "hello.py"
    script.write_text(
        "import pathlib, sys\nfrom mpi4py import MPI\nc = MPI.COMM_WORLD\n"
        "total = c.allreduce(c.Get_rank())\n"
        "out = pathlib.Path(sys.argv[1]) / f'rank{c.Get_rank()}.txt'\n"
        "out.write_text(f'rank {c.Get_rank()} of {c.Get_size()} sum {total} {sys.argv[2:]}')\n"
    )
    argv = [sys.executable, "-m", "opforge.tools.cli", "run", "-n", "2", str(script), str(tmp_path), "a", "--b"]
    result = run_job(argv, timeout=60)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "rank0.txt").read_text() == "rank 0 of 2 sum 1 ['a', '--b']"
    assert (tmp_path / "rank1.txt").read_text() == "rank 1 of 2 sum 1 ['a', '--b']"


def test_opforge_run_errors(tmp_path, capsys, monkeypatch):
    assert cli.main(["run", "-n", "2", str(tmp_path / "missing.py")]) == 2
    assert "no such script" in capsys.readouterr().err
    script = tmp_path / "s.py"
    script.write_text("pass\n")
    assert cli.main(["run", "-n", "0", str(script)]) == 1
    assert "must be an int >= 1" in capsys.readouterr().err
    monkeypatch.setenv("OPFORGE_MPIEXEC", str(tmp_path / "nowhere"))
    assert cli.main(["run", "-n", "2", str(script)]) == 1
    assert "not an executable" in capsys.readouterr().err
    monkeypatch.delenv("OPFORGE_MPIEXEC")
    monkeypatch.setattr(sys, "executable", str(tmp_path / "python"))
    monkeypatch.setattr(sys, "base_prefix", str(tmp_path))
    monkeypatch.setattr(sys, "prefix", str(tmp_path))
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(launch.MpiNotFoundError, match=r"MPI is not installed.*opforge\[dist\]"):
        launch.find_mpiexec()


@needs_mpi
def test_demo_with_two_workers_prints_from_rank_0_only():
    result = run_job(
        [sys.executable, "-m", "opforge.tools.cli", "demo", "--workers", "2", "--epochs", "2", "--batch-size", "64"],
        timeout=240,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    assert out.count("opforge 0.1.0 demo") == 1 or out.count("demo[/bold]") == 0
    assert out.count("final test accuracy") == 1  # rank 0 only
    assert "data parallel on 2 MPI ranks" in out and "all-reduce(s) per step" in out
    assert out.count("epoch   2") == 1
    accuracy = float(out.split("final test accuracy: ")[1].split("%")[0])
    assert accuracy > 80.0


@needs_mpi
def test_the_docs_code_runs_on_two_ranks(tmp_path):
    """docs/distributed_training.md's Python blocks, in order, as one script on every rank of a 2-rank job
    (tests/test_docs.py runs them in one process, a world of one rank)."""
    import re

    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S)
    assert len(blocks) >= 2
    script = tmp_path / "doc.py"
    script.write_text("\n".join(blocks) + "\nprint('DOC-OK', flush=True)\n")
    result = run_job([str(script)], n=2, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.count("DOC-OK") == 2


@needs_mpi
def test_bench_suite_comm_quick_run_without_torch():
    """A smoke run of ``opforge bench --suite comm --quick`` (its own mpiexec jobs; times never asserted)."""
    results = bench_parallel.run(quick=True, use_torch=False, timeout=300)
    assert results["ranks"] == 2 and results["params"] == 4 and results["collectives_per_step"] == 1
    for key in ("dp_step", "half_steps", "grad_allreduce", "floor", "one_process_step", "tp_step"):
        assert results[key] > 0, key
    assert [row["size"] for row in results["allreduce"]] == ["4 KB", "1 MB"]
    assert all(row["opforge"] > 0 and row["mpi4py"] > 0 for row in results["allreduce"])
    assert results["dp_vs_one_process_max_diff"] < 1e-5  # the data-parallel step trains as one process
    assert results["tp_vs_one_process_max_diff"] < 1e-5  # and so does the tensor-parallel one
    table = bench_parallel.render(results)
    assert "| AllReduce float32 4 KB |" in table and "us/call |" in table
    assert "floor: half-batch steps + all-reduce" in table and "PyTorch DDP" not in table
    assert "| collectives per step | 1 | parameters | 4 |" in table
    assert "tensor parallel (fc1 column-, fc2 row-parallel), eager |" in table


@needs_mpi
@pytest.mark.parametrize("n", [2, 4])
def test_distributed_data_parallel_averages_gradients_in_the_backward_pass(n):
    """MindSpore 2.7's DistributedDataParallel: value_and_grad through it returns the averaged gradients (eager and
    jitted), the ranks' different initial weights synced from rank 0, and no_sync() leaves them each rank's own."""
    job = run_job([str(SCRIPTS / "ddp.py")], n=n, timeout=240)
    assert job.returncode == 0, job.stdout + job.stderr
    assert float(re.search(r"DDP-OK (\S+)", job.stdout).group(1)) <= 1e-5


def test_distributed_data_parallel_checks_its_arguments():
    from opforge.parallel.distributed import DistributedDataParallel

    communication.init()
    with pytest.raises(TypeError, match="'module' must be a Cell"):
        DistributedDataParallel(lambda x: x)
    with pytest.raises(TypeError, match="'static_graph' must be bool"):
        DistributedDataParallel(opforge.nn.Dense(2, 2), static_graph=1)
    with pytest.raises(ValueError, match="'reducer_mode' must be one of"):
        DistributedDataParallel(opforge.nn.Dense(2, 2), reducer_mode="Fast")
    with pytest.raises(ValueError, match="'bucket_cap_mb' must be a number > 0"):
        DistributedDataParallel(opforge.nn.Dense(2, 2), bucket_cap_mb=0)
    dense = opforge.nn.Dense(2, 2)
    ddp = DistributedDataParallel(dense)  # one rank: the gradients are one process's
    x = opforge.Tensor(np.ones((3, 2), np.float32))
    _, got = opforge.value_and_grad(lambda a: ddp(a).sum(), None, ddp.trainable_params())(x)
    _, want = opforge.value_and_grad(lambda a: dense(a).sum(), None, dense.trainable_params())(x)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.asnumpy(), w.asnumpy())
