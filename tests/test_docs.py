"""Every Python code block in README.md and docs/*.md runs (each file's blocks in order, in one namespace)."""

from __future__ import annotations

import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BLOCK = re.compile(r"```python\n(.*?)```", re.S)


@pytest.mark.parametrize("path", DOCS, ids=lambda p: p.name)
def test_code_blocks_run(path):
    blocks = BLOCK.findall(path.read_text())
    namespace = {"__name__": f"doc_{path.stem}"}
    for i, block in enumerate(blocks):
        try:
            exec(compile(block, f"{path.name}[block {i}]", "exec"), namespace)
        except Exception as e:  # pragma: no cover - the failure message is the point
            raise AssertionError(f"{path.name}, code block {i} failed: {e!r}\n{block}") from e
