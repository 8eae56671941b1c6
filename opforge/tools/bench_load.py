"""``opforge bench --suite load``: threads on a shared machine.

A busy process (a Python loop) keeps one core taken; each library then runs the same call on 1 thread
and on 2 threads, side by side in one run. The figure is the ratio 2-thread / 1-thread: near or
below 1.0 when the parallel region copes with a core it does not get, 20 to 200 when idle OpenMP
workers spin for the time slice of the thread still working.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
import time

__all__ = ["busy_core", "loaded_cases", "run", "render"]

SIZE = 1_000_000


@contextlib.contextmanager
def busy_core():
    """Another process spinning on one core inside the block."""
    proc = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        time.sleep(0.2)  # let it start spinning
        yield proc
    finally:
        proc.kill()
        proc.wait()


def loaded_cases(np, opforge, torch) -> list:
    """``(name, {library: callable})``: a cheap and an expensive elementwise call on 1M float32."""
    from opforge import ops

    a = np.random.default_rng(0).standard_normal(SIZE, dtype=np.float32)
    x = opforge.Tensor(a)
    add, exp = ops.Add(), ops.Exp()
    cases = [
        ("Add", {"opforge": lambda: add(x, x), "numpy": lambda: np.add(a, a)}),
        ("Exp", {"opforge": lambda: exp(x), "numpy": lambda: np.exp(a)}),
    ]
    if torch is not None:
        ta = torch.from_numpy(a)
        cases[0][1]["torch"] = lambda: torch.add(ta, ta)
        cases[1][1]["torch"] = lambda: torch.exp(ta)
    return cases


def run(measure, threads_limited, use_torch: bool = True, quick: bool = False, log=print) -> list:
    """``[(case, library, seconds on 1 thread, seconds on 2 threads)]``, every call timed while one
    core is busy, with ``opforge.tools.bench``'s ``measure`` and ``threads_limited`` (passed in: that
    module imports this one)."""
    import numpy as np

    import opforge

    torch = None
    if use_torch:
        with contextlib.suppress(ImportError):
            import torch
    min_time, repeats = (0.002, 3) if quick else (0.05, 7)
    rows = []
    with busy_core():
        for name, libs in loaded_cases(np, opforge, torch):
            for lib, fn in libs.items():
                times = []
                for threads in (1, 2):
                    with threads_limited(threads):
                        times.append(measure(fn, min_time, repeats))
                rows.append((name, lib, times[0], times[1]))
                log(f"  {name} {lib}: 1 thread {times[0] * 1e6:,.1f} us, 2 threads {times[1] * 1e6:,.1f} us")
    return rows


def render(rows) -> str:
    """The rows as a Markdown table."""
    lines = [
        f"One core busy (another process); {SIZE:,} float32.",
        "",
        "| case | library | 1 thread (us) | 2 threads (us) | 2 threads / 1 thread |",
        "|---|---|---|---|---|",
    ]
    for name, lib, t1, t2 in rows:
        lines.append(f"| {name} | {lib} | {t1 * 1e6:,.1f} | {t2 * 1e6:,.1f} | {t2 / t1:.2f}x |")
    return "\n".join(lines) + "\n"
