"""``opforge bench`` and ``opforge.tools.bench``: a tiny smoke run of the suite (times are never asserted)."""

from __future__ import annotations

import os

import numpy as np
import pytest

import opforge
from opforge.tools import bench, cli

# Benchmarks run one after another on one pytest-xdist worker: timings never overlap each other.
pytestmark = pytest.mark.xdist_group("bench")


@pytest.fixture(autouse=True)
def _wide_terminal(monkeypatch):
    monkeypatch.setenv("COLUMNS", "250")


def _quiet(*args, **kwargs):
    pass


def test_quick_run_of_every_suite_without_torch():
    threads_before = opforge.get_context("num_threads")
    env_before = {v: os.environ.get(v) for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS")}
    rows, versions = bench.run(threads=1, quick=True, use_torch=False, log=_quiet)
    names = [name for _, name, _, _ in rows]
    assert {"ReLU", "Add", "MatMul", "Custom pyfunc", "MLP train step", "grad relu(x).sum()"} <= set(names)
    assert {suite for suite, *_ in rows} == set(bench.SUITES)
    for _, name, _, times in rows:
        assert "torch" not in times
        assert times["opforge"] > 0 and np.isfinite(times["opforge"]), name
    assert "torch" not in versions and versions["opforge"] == opforge.__version__
    # The thread settings are restored afterwards.
    assert opforge.get_context("num_threads") == threads_before
    assert {v: os.environ.get(v) for v in env_before} == env_before


def test_one_case_and_the_markdown_table():
    pooled = opforge.memory.is_enabled()
    rows, versions = bench.run(["ops"], threads=1, only="MatMul", quick=True, use_torch=False, log=_quiet, pool=False)
    assert opforge.memory.is_enabled() == pooled  # --no-pool holds for the run only
    assert [name for _, name, _, _ in rows] == ["MatMul"]
    table = bench.render(rows, versions, threads=1)
    assert "| case | size | opforge (us) | numpy (us) | opforge/numpy |" in table
    assert table.splitlines()[0].startswith("Machine:") and "threads: 1" in table
    assert "| MatMul | 64x64 |" in table and table.rstrip().endswith("x |")
    with pytest.raises(ValueError, match="unknown benchmark suite"):
        bench.run(["nope"], quick=True, use_torch=False, log=_quiet)


def test_table_ratios_and_the_torch_columns():
    rows = [
        ("train", "case", "1", {"opforge": 2e-6, "numpy": 4e-6, "torch": 1e-6}),
        ("train", "g", "1", {"opforge": 1e-6}),
    ]
    versions = {"numpy": "1", "opforge": "2", "torch": "3"}
    header, body = bench.table_rows(rows, versions)
    assert header == ["case", "size", "opforge (us)", "numpy (us)", "torch (us)", "opforge/numpy", "opforge/torch"]
    assert body[0] == ["case", "1", "2.00", "4.00", "1.00", "0.50x", "2.00x"]
    assert body[1] == ["g", "1", "1.00", "-", "-", "-", "-"]


def test_the_training_steps_agree_before_they_are_timed():
    weights, x, y = bench.mlp_weights(np)
    steps = {"opforge": bench.opforge_step(np, opforge, weights, x, y), "numpy": bench.numpy_step(np, weights, x, y)}
    assert bench.check_agreement(np, steps) < 1e-4


def test_cli_bench_smoke(tmp_path, capsys):
    out = tmp_path / "bench.md"
    code = cli.main(["bench", "--quick", "--no-torch", "--suite", "train", "--threads", "1", "--markdown", str(out)])
    assert code == 0
    printed = capsys.readouterr().out
    assert "MLP train step" in printed and "grad relu(x).sum()" in printed and "vs numpy" in printed
    text = out.read_text()
    assert "| MLP train step | 64x784->256->10 |" in text and "ReLU" not in text


def test_cli_bench_arguments(capsys):
    assert cli.main(["bench", "--quick", "--no-torch", "--suite", "ops", "--op", "NoSuchCase"]) == 1
    assert "no case named 'NoSuchCase'" in capsys.readouterr().err
    assert cli.main(["bench", "--threads", "0"]) == 2
    with pytest.raises(SystemExit):
        cli.main(["bench", "--suite", "nope"])


def test_torch_column_when_installed():
    pytest.importorskip("torch")
    rows, versions = bench.run(["train"], threads=1, only="grad relu(x).sum()", quick=True, log=_quiet)
    ((_, _, _, times),) = rows
    assert set(times) == {"opforge", "torch"} and "torch" in versions
    assert "opforge/torch" in bench.render(rows, versions, threads=1)


def test_the_printed_table_fits_80_columns(monkeypatch, capsys):
    rows = [
        ("train", "grad relu(x).sum()", "1", {"opforge": 2.4e-5, "numpy": None, "torch": 6.9e-5}),
        ("train", "MLP train step", "64x784->256->10", {"opforge": 0.0009, "numpy": 0.00087, "torch": 0.0012}),
        ("ops", "MatMul", "1024x1024", {"opforge": 0.0226401, "numpy": 0.02305, "torch": 0.02306945}),
    ]
    versions = {"opforge": "0.1.0", "numpy": "2.4.6", "torch": "2.13.0", "numpy BLAS threads": "threadpoolctl"}
    monkeypatch.setenv("COLUMNS", "80")
    bench._print_rich(rows, versions, threads=2)
    lines = capsys.readouterr().out.splitlines()
    assert all(len(line) <= 80 for line in lines)
    assert "…" not in "".join(lines)  # nothing cut short
    assert any("22,640" in line and "0.98x" in line for line in lines)
    assert bench.terminal_rows(rows, versions)[0] == [
        "case",
        "size",
        "opforge",
        "numpy",
        "torch",
        "vs numpy",
        "vs torch",
    ]
