"""Sort and TopK on the GPU (``csrc/kernels/cuda/sort.cu``) in the CPU's order (NaN greatest, ties by index),
for every KernelAttr the CPU registers.

Rows longer than ``RANK_SORT_MAX_N`` go through the GPU library's radix sort of unsigned integers
(``GpuRuntime.sort`` / ``argsort``: CUB through CuPy). Each element becomes an order key whose ascending order
is the order asked for (descending: the key's bits flipped); row, key and index packed in one 32- or 64-bit
word when they fit (every key unique: the ties come out by index) take one in-place sort, else two stable
passes sort by key, then by row. The first k of each sorted row are then gathered: TopK is the first k of
the descending sort. (CuPy's own sort along an axis of a 2-d array merges with a comparator: about 11 times
slower than the one radix sort of packed keys, 4096x4096 float32 on an H200.)

Shorter rows take ``RankSortKernel``: one thread per element counts its rank in its row, one launch.
"""

from __future__ import annotations

import math

import numpy as np

from opforge.kernels.gpu.cuda import CudaKernel, ctype, function_for
from opforge.kernels.gpu.elementwise import mirror_cpu_kernels
from opforge.kernels.gpu.support import launch_1d, numel

__all__ = ["RANK_SORT_MAX_N", "sort_plan"]

RANK_SORT_MAX_N = 16  # rows this short are ranked in place: O(n) per element beats three launches and a sort

_KEY_DTYPES = {32: np.uint32, 64: np.uint64}  # the packed words: (row, order key, index)
_CTYPE_OF_KEY = {32: "uint32_t", 64: "uint64_t"}


def sort_plan(value_bits: int, rows: int, n: int) -> tuple:
    """How rows of ``n`` elements of ``value_bits`` bits are sorted: ``("rank",)``, ``("packed", width,
    index_bits, row_shift)`` (one word of ``width`` bits: row << row_shift | key << index_bits | index), or
    ``("two_pass",)``."""
    if n <= RANK_SORT_MAX_N:
        return ("rank",)
    index_bits = (n - 1).bit_length()
    used = (rows - 1).bit_length() + value_bits + index_bits
    for width in _KEY_DTYPES:
        if used <= width:
            return ("packed", width, index_bits, value_bits + index_bits)
    return ("two_pass",)


def _geometry(spec) -> tuple:
    """x viewed as [outer, n, inner] around the sorted axis: (outer, n, inner, k, descending)."""
    x = list(spec.in_shapes[0]) or [1]  # a 0-d input: one row of one element
    topk = spec.op_name == "TopK"
    axis = len(x) - 1 if topk else spec.attrs["axis"] % len(x)
    n, inner = x[axis], math.prod(x[axis + 1 :])
    k = int(spec.attrs["k"]) if topk else n
    descending = True if topk else bool(spec.attrs["descending"])
    return math.prod(x[:axis]), n, inner, k, descending


def _sort_loop(spec, function, kernel):
    outer, n, inner, k, descending = _geometry(spec)
    shape, outs = spec.out_shapes[0], spec.entry.attr.outputs
    device, runtime = spec.device, spec.device.runtime
    total, total_out, rows = outer * n * inner, numel(shape), outer * inner
    value_bits = 8 * np.dtype(spec.entry.attr.inputs[0].np_dtype).itemsize
    plan = sort_plan(value_bits, rows, n)
    helpers = dict(zip(("pack32", "pack64", "unpack32", "unpack64", "keys", "rows", "gather"), kernel.helpers))
    flag = np.bool_(descending)
    geometry = (np.int64(n), np.int64(inner))

    def outputs():
        return device.empty(shape, outs[0].np_dtype), device.empty(shape, outs[1].np_dtype)

    def run_rank(arrays):
        values, indices = outputs()
        if total_out:
            launch_1d(
                runtime, function, total, (arrays[0], values, indices, np.int64(total), *geometry, np.int64(k), flag)
            )
        return values, indices

    if plan[0] == "rank" or total_out == 0:
        return run_rank

    if plan[0] == "packed":
        _, width, index_bits, row_shift = plan
        key_dtype = _KEY_DTYPES[width]
        pack = function_for(runtime, kernel, helpers[f"pack{width}"])
        unpack = function_for(runtime, kernel, helpers[f"unpack{width}"])
        pack_tail = (np.int64(total), *geometry, np.int32(index_bits), np.int32(row_shift), flag)
        unpack_tail = (np.int64(total_out), *geometry, np.int64(k), key_dtype((1 << index_bits) - 1))

        def run_packed(arrays):
            keys = device.empty((total,), key_dtype)
            launch_1d(runtime, pack, total, (arrays[0], keys, *pack_tail))
            runtime.sort(keys)
            values, indices = outputs()
            launch_1d(runtime, unpack, total_out, (arrays[0], keys, values, indices, *unpack_tail))
            return values, indices

        return run_packed

    order_keys, row_keys, gather = (function_for(runtime, kernel, helpers[h]) for h in ("keys", "rows", "gather"))
    key_dtype = np.dtype(f"uint{value_bits}")

    def run_two_pass(arrays):
        keys = device.empty((total,), key_dtype)
        launch_1d(runtime, order_keys, total, (arrays[0], keys, np.int64(total), flag))
        by_key = runtime.argsort(keys)
        rows_of = device.empty((total,), np.uint64)
        launch_1d(runtime, row_keys, total, (by_key, rows_of, np.int64(total), *geometry))
        by_row = runtime.argsort(rows_of)
        values, indices = outputs()
        launch_1d(
            runtime,
            gather,
            total_out,
            (arrays[0], by_key, by_row, values, indices, np.int64(total_out), *geometry, np.int64(k)),
        )
        return values, indices

    return run_two_pass


def _make(attr) -> CudaKernel:
    t = ctype(attr.inputs[0])
    ns = "opforge::cuda::"
    helpers = (
        *(f"{ns}PackSortKeysKernel<{t}, {_CTYPE_OF_KEY[w]}>" for w in _KEY_DTYPES),
        *(f"{ns}UnpackSortedKernel<{t}, {_CTYPE_OF_KEY[w]}>" for w in _KEY_DTYPES),
        f"{ns}OrderKeysKernel<{t}>",
        f"{ns}RowKeysKernel",
        f"{ns}GatherTwoPassKernel<{t}>",
    )
    return CudaKernel("sort.cu", f"{ns}RankSortKernel<{t}>", _sort_loop, helpers=helpers)


for _op in ("Sort", "TopK"):
    mirror_cpu_kernels(_op, _make)
