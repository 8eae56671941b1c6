"""Who watches primitive calls: autodiff tapes and profilers.

A primitive call checks one list, ``watching``; it is empty unless a gradient is being taken or a
profiler is running, so the hot path pays a single truth test.
"""

from __future__ import annotations

__all__ = ["watching", "tapes", "profilers", "start", "stop"]

watching: list = []  # every active observer (tapes and profilers)
tapes: list = []  # active autodiff tapes, innermost last
profilers: list = []  # active profilers


def start(observer, kind: list) -> None:
    kind.append(observer)
    watching.append(observer)


def stop(observer, kind: list) -> None:
    kind.remove(observer)
    watching.remove(observer)
