"""Time opforge against NumPy (and PyTorch when installed) in one run, and print ratios.

    python benchmarks/bench_ops.py                 # 1 thread, every case
    python benchmarks/bench_ops.py --threads 2 --markdown out.md
    python benchmarks/bench_ops.py --op ReLU --no-pool   # outputs without the caching allocator

Each case reports the median time per call over several repeats. Ratios are opforge's time
divided by the other library's (below 1.0: opforge is faster).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time


def _set_threads(n: int) -> None:
    # Must happen before NumPy, OpenBLAS or PyTorch start their thread pools.
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(n)


def measure(fn, min_time: float = 0.05, repeats: int = 7) -> float:
    """Median seconds per call of ``fn`` over ``repeats`` batches of at least ``min_time`` each."""
    fn()  # warm up: plans, caches, page faults of the first allocation
    number = 1
    while True:
        start = time.perf_counter()
        for _ in range(number):
            fn()
        elapsed = time.perf_counter() - start
        if elapsed >= min_time:
            break
        number *= 2 if elapsed == 0 else max(2, int(min_time / elapsed * 1.2))
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        samples.append((time.perf_counter() - start) / number)
    return statistics.median(samples)


def build_cases(np, opforge, torch):
    """(name, size label, {library: callable}) for every benchmark case."""
    from opforge import ops

    rng = np.random.default_rng(0)
    relu, add, matmul = ops.ReLU(), ops.Add(), ops.MatMul()
    cases = []
    for n in (1, 1_000, 1_000_000, 16_000_000):
        a = rng.standard_normal(n, dtype=np.float32)
        b = rng.standard_normal(n, dtype=np.float32)
        x, y = opforge.Tensor(a), opforge.Tensor(b)
        libs = {"opforge": lambda x=x: relu(x), "numpy": lambda a=a: np.maximum(a, 0)}
        if torch is not None:
            ta = torch.from_numpy(a)
            libs["torch"] = lambda ta=ta: torch.relu(ta)
        cases.append(("ReLU", f"{n:,}", libs))
        libs = {"opforge": lambda x=x, y=y: add(x, y), "numpy": lambda a=a, b=b: np.add(a, b)}
        if torch is not None:
            ta, tb = torch.from_numpy(a), torch.from_numpy(b)
            libs["torch"] = lambda ta=ta, tb=tb: torch.add(ta, tb)
        cases.append(("Add", f"{n:,}", libs))
    for n in (64, 1024):
        a = rng.standard_normal((n, n), dtype=np.float32)
        b = rng.standard_normal((n, n), dtype=np.float32)
        x, y = opforge.Tensor(a), opforge.Tensor(b)
        libs = {"opforge": lambda x=x, y=y: matmul(x, y), "numpy": lambda a=a, b=b: np.matmul(a, b)}
        if torch is not None:
            ta, tb = torch.from_numpy(a), torch.from_numpy(b)
            libs["torch"] = lambda ta=ta, tb=tb: torch.matmul(ta, tb)
        cases.append(("MatMul", f"{n}x{n}", libs))
    return cases


def _fmt_us(seconds) -> str:
    return "-" if seconds is None else f"{seconds * 1e6:,.2f}"


def _fmt_ratio(a, b) -> str:
    return "-" if a is None or b is None else f"{a / b:.2f}x"


def run(threads: int, only: str | None = None, pool: bool = True) -> tuple:
    import numpy as np

    import opforge

    try:
        import torch

        torch.set_num_threads(threads)
    except ImportError:
        torch = None
    opforge.set_context(num_threads=threads)
    opforge.memory.set_enabled(pool)  # the caching allocator of kernel outputs (docs/memory.md)
    rows = []
    for name, size, libs in build_cases(np, opforge, torch):
        if only and name != only:
            continue
        times = {lib: measure(fn) for lib, fn in libs.items()}
        rows.append((name, size, times))
        print(f"  {name:<7} {size:>12}: " + "  ".join(f"{k} {_fmt_us(v)} us" for k, v in times.items()), flush=True)
    versions = {"numpy": np.__version__, "opforge": opforge.__version__}
    if torch is not None:
        versions["torch"] = torch.__version__
    return rows, versions


def render(rows, versions, threads) -> str:
    """The results as a Markdown table."""
    has_torch = "torch" in versions
    head = "| op | size | opforge (us) | numpy (us) |" + (" torch (us) |" if has_torch else "")
    head += " opforge/numpy |" + (" opforge/torch |" if has_torch else "")
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for name, size, t in rows:
        cells = [name, size, _fmt_us(t.get("opforge")), _fmt_us(t.get("numpy"))]
        if has_torch:
            cells.append(_fmt_us(t.get("torch")))
        cells.append(_fmt_ratio(t.get("opforge"), t.get("numpy")))
        if has_torch:
            cells.append(_fmt_ratio(t.get("opforge"), t.get("torch")))
        lines.append("| " + " | ".join(cells) + " |")
    lib_versions = ", ".join(f"{k} {v}" for k, v in versions.items())
    cpu = _cpu_name()
    return (
        f"Machine: {cpu}, {os.cpu_count()} cores; threads: {threads}; Python {sys.version.split()[0]}; "
        f"{lib_versions}.\n\n" + "\n".join(lines) + "\n"
    )


def _cpu_name() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown CPU"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--op", help="run one operator's cases only (ReLU, Add, MatMul)")
    parser.add_argument("--markdown", help="also write the table to this file")
    parser.add_argument("--no-pool", action="store_true", help="kernel outputs without the caching allocator")
    args = parser.parse_args(argv)
    _set_threads(args.threads)
    rows, versions = run(args.threads, args.op, pool=not args.no_pool)
    table = render(rows, versions, args.threads)
    print()
    print(table)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
