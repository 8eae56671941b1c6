"""A small profiler of primitive calls: which kernels ran, how often and for how long.

with opforge.profiler.profile() as p:
    train_step(x, y)
p.print()            # a table: operator, backend, KernelAttr, calls, total time
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from rich.console import Console
from rich.table import Table

from opforge.dispatch.interpreter import Interpreter

__all__ = ["profile", "Profile", "KernelStats"]


@dataclass
class KernelStats:
    op: str
    backend: str
    kernel_attr: str
    impl: str
    calls: int = 0
    total_s: float = 0.0


class Profile(Interpreter):
    """Collects per-kernel call counts and times while active (see ``profile()``): an interpreter,
    so it sees the calls of the thread that entered it."""

    observer = True  # a trace may start above it (opforge.jit): it times the replays

    def __init__(self):
        self._stats: dict = {}
        self.wall_s = 0.0
        self._start = 0.0

    def process_primitive(self, prim, args: tuple):
        start = time.perf_counter()
        out = self.parent.process_primitive(prim, args)
        self.add(prim._plan_for(args).kernel, time.perf_counter() - start)
        return out

    def add(self, label, elapsed: float) -> None:
        stats = self._stats.get(label)
        if stats is None:
            stats = self._stats[label] = KernelStats(*label)
        stats.calls += 1
        stats.total_s += elapsed

    def __enter__(self) -> Profile:
        self._start = time.perf_counter()
        return super().__enter__()

    def __exit__(self, *exc) -> None:
        super().__exit__(*exc)
        self.wall_s += time.perf_counter() - self._start

    def stats(self) -> list:
        """Every kernel that ran, most total time first."""
        return sorted(self._stats.values(), key=lambda s: s.total_s, reverse=True)

    def table(self, limit: int | None = None) -> Table:
        table = Table(title="Kernels that ran")
        for name, justify in (
            ("Operator", "left"),
            ("Backend", "left"),
            ("KernelAttr", "left"),
            ("Impl", "left"),
            ("Calls", "right"),
            ("Total (ms)", "right"),
            ("Mean (us)", "right"),
            ("Share", "right"),
        ):
            table.add_column(name, justify=justify)
        stats = self.stats()
        total = sum(s.total_s for s in stats) or 1.0
        for s in stats[:limit]:
            table.add_row(
                s.op,
                s.backend,
                s.kernel_attr,
                s.impl,
                f"{s.calls:,}",
                f"{s.total_s * 1e3:,.1f}",
                f"{s.total_s / s.calls * 1e6:,.1f}",
                f"{s.total_s / total:.0%}",
            )
        return table

    def print(self, limit: int | None = None, console: Console | None = None) -> None:
        (console or Console()).print(self.table(limit))


def profile() -> Profile:
    """A context manager that profiles every primitive call made inside it."""
    return Profile()
