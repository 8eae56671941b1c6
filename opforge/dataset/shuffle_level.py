"""``mindspore.dataset.Shuffle``: the shuffle levels of the readers of several files (their orders:
``opforge/dataset/shuffle.py``)."""

from __future__ import annotations

import enum

__all__ = ["Shuffle"]


class Shuffle(str, enum.Enum):
    """MindSpore's shuffle levels of the file readers."""

    GLOBAL = "global"
    FILES = "files"
    INFILE = "infile"
