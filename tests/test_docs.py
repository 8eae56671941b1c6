"""The docs are true: every Python code block in README.md and docs/*.md runs (each file's blocks in
order, in one namespace), every C++ block compiles against the public headers, and every file a doc
cites exists."""

from __future__ import annotations

import pathlib
import re
import shutil
import subprocess

import pytest

from opforge.kernels.custom import include_dir

ROOT = pathlib.Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
PYTHON_BLOCK = re.compile(r"```python\n(.*?)```", re.S)
CPP_BLOCK = re.compile(r"```cpp\n(.*?)```", re.S)
# A repository path in backticks: `opforge/tools/cli.py`, `csrc/include/opforge/kernel.h`, `docs/nn.md`.
CITED_PATH = re.compile(r"`((?:opforge|csrc|tests|docs|benchmarks|scripts)/[\w./-]*\w)`")


def _ids(path):
    return path.name


@pytest.mark.parametrize("path", DOCS, ids=_ids)
def test_code_blocks_run(path):
    blocks = PYTHON_BLOCK.findall(path.read_text())
    namespace = {"__name__": f"doc_{path.stem}"}
    for i, block in enumerate(blocks):
        try:
            exec(compile(block, f"{path.name}[block {i}]", "exec"), namespace)
        except Exception as e:  # pragma: no cover - the failure message is the point
            raise AssertionError(f"{path.name}, code block {i} failed: {e!r}\n{block}") from e


CPP_DOCS = [p for p in DOCS if CPP_BLOCK.search(p.read_text())]


@pytest.mark.skipif(shutil.which("g++") is None, reason="no C++ compiler")
@pytest.mark.parametrize("path", CPP_DOCS, ids=_ids)
def test_cpp_blocks_compile(path, tmp_path):
    """As a user compiles them: the installed public headers (and, for blocks about opforge's own
    core, its source tree), warnings as errors."""
    for i, block in enumerate(CPP_BLOCK.findall(path.read_text())):
        source = tmp_path / f"{path.stem}_{i}.cc"
        source.write_text(block)
        cmd = ["g++", "-std=c++17", "-fsyntax-only", "-Wall", "-Wextra", "-Werror"]
        cmd += [f"-I{include_dir()}", f"-I{ROOT / 'csrc'}", str(source)]
        result = subprocess.run(cmd, capture_output=True, text=True)
        assert result.returncode == 0, f"{path.name}, C++ block {i} does not compile:\n{result.stderr}\n{block}"


@pytest.mark.parametrize("path", DOCS, ids=_ids)
def test_cited_files_exist(path):
    missing = [p for p in CITED_PATH.findall(path.read_text()) if not (ROOT / p).exists()]
    assert missing == [], f"{path.name} cites files that are not in the repository: {missing}"


def test_operator_reference_matches_the_registry():
    """docs/operators.md is generated from the registries: regenerate it when an operator changes."""
    from opforge.tools import op_reference

    page = (ROOT / "docs" / "operators.md").read_text()
    assert page == op_reference.render(), (
        "docs/operators.md is out of date: run `python -m opforge.tools.op_reference --write docs/operators.md`"
    )
