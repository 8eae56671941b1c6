"""Time one MLP training step with opforge.nn against hand-written NumPy and PyTorch, and print ratios.

    python benchmarks/bench_train.py                  # 1 thread
    python benchmarks/bench_train.py --threads 2 --markdown out.md

The step: batch 64, 784 -> 256 -> ReLU -> 10, sparse softmax cross-entropy (mean), SGD with
learning rate 0.01: forward, backward and the in-place update. The three implementations start
from the same weights and are checked to agree before they are timed. A second case times the
whole autodiff machinery on a tiny input: ``grad`` of ``relu(x).sum()`` for one element (opforge
vs PyTorch autograd), i.e. the fixed cost per differentiated call.

A thin wrapper: the suite is ``opforge.tools.bench`` (``opforge bench --suite train``). Times are medians
per call; ratios are opforge's time divided by the other library's (below 1.0: opforge is faster).
"""

from __future__ import annotations

import argparse
import os
import sys


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--markdown", help="also write the table to this file")
    args = parser.parse_args(argv)
    # Before NumPy, OpenBLAS or PyTorch start their thread pools.
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(args.threads)
    from opforge.tools import bench

    forwarded = ["--suite", "train", "--threads", str(args.threads)]
    if args.markdown:
        forwarded += ["--markdown", args.markdown]
    return bench.main(forwarded, rich=False)


if __name__ == "__main__":
    sys.exit(main())
