"""Device time per kernel of the row-table cases of ``opforge bench --device GPU``, from CUPTI through
``torch.profiler``: separates what the GPU spends in each of opforge's kernels from the host's share
of a call. Run on a machine with a GPU, CuPy and PyTorch (scripts/gpu_check.sh does)."""

import sys

import cupy
import torch
from torch.profiler import ProfilerActivity, profile

import opforge
from opforge import ops
from opforge.tools.bench_gpu import _row_cases

wanted = sys.argv[1:]
for name, ours, theirs in _row_cases(cupy, opforge, ops, torch):
    if wanted and not any(w in name for w in wanted):
        continue
    for fn in (ours, theirs):
        fn()
    cupy.cuda.Device().synchronize()
    for who, fn in (("opforge", ours), ("torch", theirs)):
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for _ in range(5):
                fn()
            cupy.cuda.Device().synchronize()
        kernels = [e for e in prof.key_averages() if e.device_time_total > 0]
        total = sum(e.device_time_total for e in kernels) / 5
        parts = ", ".join(f"{e.key[:60]} {e.device_time_total / 5:.1f}" for e in kernels[:4])
        print(f"{name:28s} {who:8s} device us/call {total:9.1f}  [{parts}]", flush=True)
