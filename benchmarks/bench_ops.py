"""Time opforge against NumPy (and PyTorch when installed) in one run, and print ratios.

    python benchmarks/bench_ops.py                 # 1 thread, every case
    python benchmarks/bench_ops.py --threads 2 --markdown out.md
    python benchmarks/bench_ops.py --op ReLU --no-pool   # outputs without the caching allocator

Each case reports the median time per call over several repeats. Ratios are opforge's time
divided by the other library's (below 1.0: opforge is faster). A thin wrapper: the suite is
``opforge.tools.bench`` (``opforge bench --suite ops``).
"""

from __future__ import annotations

import argparse
import os
import sys


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--op", help="run one operator's cases only (ReLU, Add, MatMul)")
    parser.add_argument("--markdown", help="also write the table to this file")
    parser.add_argument("--no-pool", action="store_true", help="kernel outputs without the caching allocator")
    args = parser.parse_args(argv)
    # Before NumPy, OpenBLAS or PyTorch start their thread pools.
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(args.threads)
    from opforge.tools import bench

    forwarded = ["--suite", "ops", "--threads", str(args.threads)]
    if args.op:
        forwarded += ["--op", args.op]
    if args.markdown:
        forwarded += ["--markdown", args.markdown]
    if args.no_pool:
        forwarded.append("--no-pool")
    return bench.main(forwarded, rich=False)


if __name__ == "__main__":
    sys.exit(main())
