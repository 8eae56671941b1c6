"""Sort and TopK on the GPU (``csrc/kernels/cuda/sort.cu``) in the CPU's order (NaN greatest, ties by index),
for every KernelAttr the CPU registers. Each element becomes an order key, an unsigned integer whose ascending
order is the order asked for (descending: the key's bits flipped), packed with its index (and its row) so that
every key is unique and the ties come out by index. Three ways, by row length and element size (``sort_plan``):

- rows of ``RANK_SORT_MAX_N`` elements or fewer: ``RankSortKernel``, one thread per element counts its rank
  in its row (one launch);
- rows of up to ``BLOCK_SORT_MAX_N`` elements of at most 32 bits, or ``WIDE_BLOCK_SORT_MAX_N`` of 64 bits:
  ``BitonicRowsKernel``, a block per row sorts its keys in shared memory with bitonic networks and writes the
  first k (one launch); for TopK only runs of k keys are sorted, then halved pairwise to the least k (far less
  work when k is small);
- longer rows: the GPU library's radix sort of unsigned integers (``GpuRuntime.sort`` /
  ``argsort``: CUB through CuPy). Row, key and index packed in one 32- or 64-bit word when they fit take one
  in-place sort, else two stable passes sort by key, then by row; the first k of each row are gathered.

TopK is the first k of the descending sort. Measured on an H200 with stand-alone copies of these kernels,
PyTorch eager in the same run (two runs), float32 rows: 4096x4096, Sort through the bitonic blocks 985-987 us
(512 threads; 1,030 with 1024) against 543-544, through the radix sort of packed keys about 1,300; TopK k=8
264-272 against 319-320, k=100 530-541 against 341-342. 65536x256: Sort 769 against 1,552, TopK k=8 652
against 833. CuPy's own sort along an axis of a 2-d array (a merge sort with a comparator): 6,100 us.
"""

from __future__ import annotations

import math

import numpy as np

from opforge.kernels.gpu.cuda import CudaKernel, ctype, function_for
from opforge.kernels.gpu.elementwise import mirror_cpu_kernels
from opforge.kernels.gpu.support import device_launch, launch_1d, numel, step_1d

__all__ = ["BLOCK_SORT_MAX_N", "RANK_SORT_MAX_N", "WIDE_BLOCK_SORT_MAX_N", "sort_plan"]

RANK_SORT_MAX_N = 16  # rows this short are ranked in place: O(n) per element beats a sort
BLOCK_SORT_MAX_N = 4096  # rows up to this long are sorted by a block in shared memory (kCapacity)
WIDE_BLOCK_SORT_MAX_N = 2048  # the same for 64-bit elements, whose keys take 16 bytes (WideKey)
_BLOCK_CAPACITIES = {  # BitonicRowsKernel's kCapacity by key width (bits); an eighth of it threads
    32: (512, BLOCK_SORT_MAX_N),
    64: (512, BLOCK_SORT_MAX_N),
    128: (512, WIDE_BLOCK_SORT_MAX_N),
}
_BLOCK_KEY_CTYPES = {32: "uint32_t", 64: "uint64_t", 128: "opforge::cuda::WideKey"}
_MAX_GRID = 65535

_KEY_DTYPES = {32: np.uint32, 64: np.uint64}  # the packed words: (row, order key, index)
_CTYPE_OF_KEY = {32: "uint32_t", 64: "uint64_t"}


def _block_key_bits(value_bits: int) -> int:
    """The width of BitonicRowsKernel's keys: one word of order key << index_bits | index, under all ones, or
    for 64-bit elements a WideKey (128 bits with its padding)."""
    return 32 if value_bits <= 16 else 64 if value_bits <= 32 else 128


def sort_plan(value_bits: int, rows: int, n: int) -> tuple:
    """How rows of ``n`` elements of ``value_bits`` bits are sorted: ``("rank",)``, ``("block", capacity,
    width, index_bits)`` (BitonicRowsKernel), ``("packed", width, index_bits, row_shift)`` (one word of
    ``width`` bits: row << row_shift | key << index_bits | index), or ``("two_pass",)``."""
    if n <= RANK_SORT_MAX_N:
        return ("rank",)
    index_bits = (n - 1).bit_length()
    key_bits = _block_key_bits(value_bits)
    if n <= _BLOCK_CAPACITIES[key_bits][-1]:
        capacity = next(c for c in _BLOCK_CAPACITIES[key_bits] if n <= c)
        return ("block", capacity, key_bits, index_bits)
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
    names = _helper_names(ctype(spec.entry.attr.inputs[0]), value_bits)
    flag = np.bool_(descending)
    geometry = (np.int64(n), np.int64(inner))

    def outputs():
        return device.empty(shape, outs[0].np_dtype), device.empty(shape, outs[1].np_dtype)

    out_specs = [(shape, outs[0].np_dtype), (shape, outs[1].np_dtype)]
    if plan[0] == "rank" or total_out == 0:
        params = [("in", 0), ("out", 0), ("out", 1), np.int64(total), *geometry, np.int64(k), flag]
        return device_launch(spec, out_specs, step_1d(runtime, function, total, params) if total_out else [])

    if plan[0] == "block":
        _, capacity, _, index_bits = plan
        block = function_for(runtime, kernel, names[f"block{capacity}"])
        padded = 1 << index_bits
        run = 1 << max(k - 1, 0).bit_length()  # the sorted runs: the least power of two >= k
        grid, threads = (min(rows, _MAX_GRID), 1, 1), (capacity // 8, 1, 1)
        tail = (np.int64(rows), *geometry, np.int64(k), np.int32(padded), np.int32(run), np.int32(index_bits), flag)
        return device_launch(spec, out_specs, [(block, grid, threads, 0, [("in", 0), ("out", 0), ("out", 1), *tail])])

    if plan[0] == "packed":
        _, width, index_bits, row_shift = plan
        key_dtype = _KEY_DTYPES[width]
        pack = function_for(runtime, kernel, names[f"pack{width}"])
        unpack = function_for(runtime, kernel, names[f"unpack{width}"])
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

    order_keys, row_keys, gather = (function_for(runtime, kernel, names[h]) for h in ("keys", "rows", "gather"))
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


def _helper_names(t: str, value_bits: int) -> dict:
    """The instantiations a loop launches besides RankSortKernel, by role."""
    ns = "opforge::cuda::"
    names = {f"pack{w}": f"{ns}PackSortKeysKernel<{t}, {c}>" for w, c in _CTYPE_OF_KEY.items()}
    names.update({f"unpack{w}": f"{ns}UnpackSortedKernel<{t}, {c}>" for w, c in _CTYPE_OF_KEY.items()})
    names.update(keys=f"{ns}OrderKeysKernel<{t}>", rows=f"{ns}RowKeysKernel", gather=f"{ns}GatherTwoPassKernel<{t}>")
    bits = _block_key_bits(value_bits)
    key = _BLOCK_KEY_CTYPES[bits]
    names.update({f"block{c}": f"{ns}BitonicRowsKernel<{t}, {key}, {c}>" for c in _BLOCK_CAPACITIES[bits]})
    return names


def _make(attr) -> CudaKernel:
    t = ctype(attr.inputs[0])
    helpers = tuple(_helper_names(t, 8 * np.dtype(attr.inputs[0].np_dtype).itemsize).values())
    return CudaKernel("sort.cu", f"opforge::cuda::RankSortKernel<{t}>", _sort_loop, helpers=helpers)


for _op in ("Sort", "TopK"):
    mirror_cpu_kernels(_op, _make)
