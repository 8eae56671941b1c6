"""GPU kernels of CumSum, CumProd, Cummax, Cummin, Dropout, DropoutExt and DropoutGrad: the kernels of
``csrc/kernels/cuda/cumsum.cu`` (the math of ``opforge/functors/scan.h`` and ``random.h``, shared with the CPU
kernels), for every KernelAttr the CPU registers. CumSum along the last axis over rows of at least
``ROW_SCAN_MIN`` elements takes a block per row (``CumSumRowsKernel``: a block scan of per-thread chunks, tile
after tile with a carried prefix); otherwise, and for CumProd, Cummax and Cummin, one thread per line along the
axis (coalesced when the axis is not the last: neighbouring threads take neighbouring lines). Dropout takes one
thread per element, with the counter-based generator keyed by (Seed0, Seed1) (DropoutExt: by its seed and
offset inputs, read on the device), so the GPU's mask is the CPU's."""

from __future__ import annotations

import math

import numpy as np

from opforge.errors import KernelError
from opforge.kernels.gpu.cuda import CudaKernel, ctype, function_for
from opforge.kernels.gpu.elementwise import mirror_cpu_kernels
from opforge.kernels.gpu.support import device_launch, input_params, output_specs, step_1d

__all__ = ["dropout_key"]

_SOURCE = "cumsum.cu"
ROW_SCAN_BLOCK = 256  # threads per row of CumSumRowsKernel (kBlock)
ROW_SCAN_ITEMS = 8  # elements a thread takes per tile at most (kItems): tiles of up to 2048
ROW_SCAN_MIN = 256  # a contiguous row this long takes a block; shorter ones a thread
_MAX_GRID = 65535
_MASK = (1 << 64) - 1


def _splitmix64(z: int) -> int:
    z = (z + 0x9E3779B97F4A7C15) & _MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    return z ^ (z >> 31)


def dropout_key(seed0: int, seed1: int) -> int:
    """DropoutKey of ``opforge/functors/random.h``: SplitMix64(SplitMix64(seed0) ^ seed1)."""
    return _splitmix64(_splitmix64(seed0 & _MASK) ^ (seed1 & _MASK))


def _cumsum_loop(spec, function, kernel):
    runtime = spec.device.runtime
    x = list(spec.in_shapes[0])
    axis = spec.attrs.get("axis", 0)
    axis = axis[0] if isinstance(axis, (tuple, list)) else axis
    rank = max(len(x), 1)
    if not -rank <= axis < rank:
        raise KernelError(f"For '{spec.op_name}', the 'axis' must be in [{-rank}, {rank}), but got {axis}.")
    axis %= rank
    n = x[axis] if x else 1
    inner = math.prod(x[axis + 1 :])
    lines = math.prod(x) // n if n else 0
    flags = (np.int32(bool(spec.attrs.get("exclusive", False))), np.int32(bool(spec.attrs.get("reverse", False))))
    np_dtype = spec.entry.attr.outputs[0].np_dtype
    if kernel.helpers and inner == 1 and n >= ROW_SCAN_MIN:
        rows_fn = function_for(runtime, kernel, kernel.helpers[0])
        chunk = min(ROW_SCAN_ITEMS, -(-n // ROW_SCAN_BLOCK))  # fewer per thread on rows shorter than a tile
        grid, args = (min(lines, _MAX_GRID), 1, 1), [np.int64(lines), np.int64(n), np.int32(chunk), *flags]
        steps = [(rows_fn, grid, (ROW_SCAN_BLOCK, 1, 1), 0, [("in", 0), ("out", 0), *args])] if lines else []
    else:
        params = [("in", 0), ("out", 0), np.int64(lines), np.int64(n), np.int64(inner), *flags]
        steps = step_1d(runtime, function, lines, params)
    return device_launch(spec, [(spec.out_shapes[0], np_dtype)], steps)


def _extreme_scan_loop(spec, function, kernel):
    """``ExtremeScanKernel<T, kMax>(x, values, indices, lines, n, inner)``: one thread per line."""
    shape = list(spec.in_shapes[0])
    axis = spec.attrs["axis"] % len(shape)
    n, inner = shape[axis], math.prod(shape[axis + 1 :])
    lines = math.prod(shape) // n if n else 0
    np_dtype = spec.entry.attr.outputs[0].np_dtype
    params = [("in", 0), ("out", 0), ("out", 1), np.int64(lines), np.int64(n), np.int64(inner)]
    steps = step_1d(spec.device.runtime, function, lines, params)
    return device_launch(spec, [(shape, np_dtype), (shape, np.int64)], steps)


def _dropout_loop(spec, function, kernel):
    """Dropout (its seeds attrs: the key made here) and DropoutExt (its seeds inputs, read on the device):
    ``DropoutKernel(x, out, mask, n, key, keep_prob)``, ``DropoutExtKernel(x, seed, offset, out, mask, n,
    keep_prob)``."""
    n = math.prod(spec.in_shapes[0])
    if spec.op_name == "DropoutExt":
        key, keep_prob = (), np.float64(1.0 - spec.attrs.get("p", 0.5))
    else:
        key = (np.uint64(dropout_key(int(spec.attrs.get("Seed0", 0)), int(spec.attrs.get("Seed1", 0)))),)
        keep_prob = np.float64(spec.attrs.get("keep_prob", 0.5))
    params = [*input_params(spec), ("out", 0), ("out", 1), np.int64(n), *key, keep_prob]
    return device_launch(spec, output_specs(spec), step_1d(spec.device.runtime, function, n, params))


def _dropout_grad_loop(spec, function, kernel):
    n = math.prod(spec.in_shapes[0])
    keep_prob = np.float64(spec.attrs.get("keep_prob", 0.5))
    np_dtype = spec.entry.attr.outputs[0].np_dtype
    steps = step_1d(spec.device.runtime, function, n, [("in", 0), ("in", 1), ("out", 0), np.int64(n), keep_prob])
    return device_launch(spec, [(spec.out_shapes[0], np_dtype)], steps)


def _make(name: str, loop):
    return lambda attr: CudaKernel(_SOURCE, f"opforge::cuda::{name}<{ctype(attr.inputs[0])}>", loop)


def _make_cumsum(attr) -> CudaKernel:
    t = ctype(attr.inputs[0])
    rows = f"opforge::cuda::CumSumRowsKernel<{t}, {ROW_SCAN_BLOCK}, {ROW_SCAN_ITEMS}>"
    return CudaKernel(
        _SOURCE, f"opforge::cuda::CumScanKernel<{t}, opforge::SumReducer<{t}>>", _cumsum_loop, helpers=(rows,)
    )


def _make_cumprod(attr) -> CudaKernel:
    t = ctype(attr.inputs[0])
    return CudaKernel(_SOURCE, f"opforge::cuda::CumScanKernel<{t}, opforge::ProdReducer<{t}>>", _cumsum_loop)


mirror_cpu_kernels("CumSum", _make_cumsum)
mirror_cpu_kernels("CumProd", _make_cumprod)
for _name, _is_max in (("Cummax", "true"), ("Cummin", "false")):
    mirror_cpu_kernels(
        _name,
        lambda attr, m=_is_max: CudaKernel(
            _SOURCE, f"opforge::cuda::ExtremeScanKernel<{ctype(attr.inputs[0])}, {m}>", _extreme_scan_loop
        ),
    )
mirror_cpu_kernels("Dropout", _make("DropoutKernel", _dropout_loop))
mirror_cpu_kernels("DropoutExt", _make("DropoutExtKernel", _dropout_loop))
mirror_cpu_kernels("DropoutGrad", _make("DropoutGradKernel", _dropout_grad_loop))
