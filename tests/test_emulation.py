"""The block-level host emulation of CUDA (tests/emulation/cuda_host.h): the threads of a block run
concurrently with real barriers, per-block shared memory and warp intrinsics, in a shuffled order, so
correct block-level kernels give NumPy's results and racy ones are caught."""

from __future__ import annotations

import numpy as np
import pytest
from emulation.runtime import EmulatedArray, EmulatedKernelError, EmulatedRuntime

from opforge.sysconfig import get_include

SOURCE = r"""
#include "opforge/cuda.h"

// A block tree reduction through shared memory: one sum per block.
template <typename T>
__global__ void BlockSum(const T* x, T* out, int64_t n) {
  __shared__ T partial[256];
  T acc = T(0);
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    acc += x[i];
  partial[threadIdx.x] = acc;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) partial[threadIdx.x] += partial[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) out[blockIdx.x] = partial[0];
}

// The same tree without its barriers: a thread reads partials others have not written yet.
__global__ void RacySum(const float* x, float* out, int64_t n) {
  __shared__ float partial[256];
  partial[threadIdx.x] = threadIdx.x < n ? x[threadIdx.x] : 0.0f;
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) partial[threadIdx.x] += partial[threadIdx.x + s];
  }
  if (threadIdx.x == 0) out[0] = partial[0];
}

// Shared memory read before the barrier that would publish it.
__global__ void MissingBarrier(float* out) {
  __shared__ float cell[64];
  cell[threadIdx.x] = static_cast<float>(threadIdx.x);
  out[threadIdx.x] = cell[(threadIdx.x + 1) % blockDim.x];
}

// A warp tree with shuffles: every lane gets the warp's sum.
__global__ void WarpSum(const float* x, float* out) {
  float v = x[threadIdx.x];
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);
  out[threadIdx.x] = v;
}

__global__ void ShuffleDown(const double* x, double* out) {
  out[threadIdx.x] = __shfl_down_sync(0xffffffffu, x[threadIdx.x], 3);
}

__global__ void Ballot(const int* x, unsigned* out) {
  out[threadIdx.x] = __ballot_sync(0xffffffffu, x[threadIdx.x] > 0);
}

// Threads that leave before a barrier the others wait at.
__global__ void EarlyExit(float* out, int64_t n) {
  if (threadIdx.x >= n) return;
  __syncthreads();
  out[threadIdx.x] = 1.0f;
}

__global__ void AtomicCount(int* counter) { atomicAdd(counter, 1); }

// Reads a shared cell its block never wrote: what the previous block left there without poisoning.
template <typename T>
__global__ void ReadBeforeWrite(T* out) {
  __shared__ T cell[64];
  if (blockIdx.x == 0) cell[threadIdx.x] = T(7);
  __syncthreads();
  out[blockIdx.x * blockDim.x + threadIdx.x] = cell[threadIdx.x];
}

// A block tree over dynamic shared memory (the launch gives blockDim.x values); blocks tile x, the
// last one partly out of range.
template <typename T>
__global__ void ExternBlockSum(const T* x, T* out, int64_t n) {
  extern __shared__ __align__(16) unsigned char raw[];
  T* partial = reinterpret_cast<T*>(raw);
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  partial[threadIdx.x] = i < n ? x[i] : T(0);
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) partial[threadIdx.x] += partial[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) out[blockIdx.x] = partial[0];
}

// The same tree forgetting the threads past the end: their cells are never written.
__global__ void ExternSumSkippingTail(const float* x, float* out, int64_t n) {
  extern __shared__ float cells[];
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) cells[threadIdx.x] = x[i];
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) cells[threadIdx.x] += cells[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) out[blockIdx.x] = cells[0];
}
"""

NAMES = (
    "BlockSum<float>", "BlockSum<double>", "RacySum", "MissingBarrier", "WarpSum", "ShuffleDown", "Ballot",
    "EarlyExit", "AtomicCount", "ReadBeforeWrite<float>", "ReadBeforeWrite<int>", "ReadBeforeWrite<double>",
    "ExternBlockSum<float>", "ExternBlockSum<double>", "ExternSumSkippingTail",
)  # fmt: skip


@pytest.fixture(scope="module")
def kernels():
    runtime = EmulatedRuntime()
    get = runtime.load_module("emulation_test.cu", SOURCE, (f"-I{get_include()}",), NAMES)
    return runtime, get


def _arr(a):
    return EmulatedArray(np.ascontiguousarray(a))


@pytest.mark.parametrize("n", [1, 255, 256, 1000, 4096 * 3 + 7])
@pytest.mark.parametrize("dtype", ["float", "double"])
def test_block_reduction_matches_numpy(kernels, n, dtype):
    runtime, get = kernels
    x = np.random.default_rng(n).standard_normal(n).astype(np.float32 if dtype == "float" else np.float64)
    blocks = 3
    out = _arr(np.zeros(blocks, x.dtype))
    runtime.launch(get(f"BlockSum<{dtype}>"), (blocks, 1, 1), (256, 1, 1), (_arr(x), out, np.int64(n)))
    np.testing.assert_allclose(out._host.sum(), x.sum(dtype=np.float64), rtol=1e-5 if dtype == "float" else 1e-12)


def test_a_race_changes_the_result_between_runs(kernels):
    """Without barriers the tree reads partials in whatever order the shuffled threads left them."""
    runtime, get = kernels
    x = np.ones(256, np.float32)
    results = set()
    for _ in range(6):
        out = _arr(np.zeros(1, np.float32))
        runtime.launch(get("RacySum"), (1, 1, 1), (256, 1, 1), (_arr(x), out, np.int64(256)))
        results.add(float(out._host[0]))
    assert results != {256.0}, "the emulation ran the racy kernel as if it were correct"


def test_a_missing_barrier_reads_unwritten_shared_memory(kernels):
    runtime, get = kernels
    wrong = 0
    for _ in range(4):
        out = _arr(np.full(64, -1.0, np.float32))
        runtime.launch(get("MissingBarrier"), (1, 1, 1), (64, 1, 1), (out,))
        wrong += int((out._host != (np.arange(64) + 1) % 64).sum())
    assert wrong > 0


def test_warp_shuffles_and_ballot(kernels):
    runtime, get = kernels
    x = np.arange(64, dtype=np.float32)
    out = _arr(np.zeros(64, np.float32))
    runtime.launch(get("WarpSum"), (1, 1, 1), (64, 1, 1), (_arr(x), out))
    np.testing.assert_array_equal(out._host, np.repeat([x[:32].sum(), x[32:].sum()], 32))
    d = np.arange(32, dtype=np.float64)
    out = _arr(np.zeros(32))
    runtime.launch(get("ShuffleDown"), (1, 1, 1), (32, 1, 1), (_arr(d), out))
    np.testing.assert_array_equal(out._host, np.where(np.arange(32) + 3 < 32, d + 3, d))
    flags = np.array([1 if i % 3 == 0 else 0 for i in range(32)], np.int32)
    out = _arr(np.zeros(32, np.uint32))
    runtime.launch(get("Ballot"), (1, 1, 1), (32, 1, 1), (_arr(flags), out))
    assert set(out._host.tolist()) == {sum(1 << i for i in range(0, 32, 3))}


def test_a_thread_leaving_a_barrier_is_an_error(kernels):
    runtime, get = kernels
    out = _arr(np.zeros(64, np.float32))
    with pytest.raises(EmulatedKernelError, match=r"EarlyExit.*block \(0, 0, 0\) of 64 threads: 24 thread\(s\) exited"):
        runtime.launch(get("EarlyExit"), (1, 1, 1), (64, 1, 1), (out, np.int64(40)))


def test_atomics_count_every_thread(kernels):
    runtime, get = kernels
    counter = _arr(np.zeros(1, np.int32))
    runtime.launch(get("AtomicCount"), (5, 1, 1), (128, 1, 1), (counter,))
    assert int(counter._host[0]) == 640


@pytest.mark.parametrize(("dtype", "np_dtype"), [("float", np.float32), ("double", np.float64), ("int", np.int32)])
def test_shared_memory_a_block_did_not_write_is_poisoned(kernels, dtype, np_dtype):
    """Only block 0 writes the cells; the other blocks read poison (NaN, or a huge integer), not block 0's 7."""
    runtime, get = kernels
    out = _arr(np.zeros(3 * 64, np_dtype))
    runtime.launch(get(f"ReadBeforeWrite<{dtype}>"), (3, 1, 1), (64, 1, 1), (out,))
    first, rest = out._host[:64], out._host[64:]
    np.testing.assert_array_equal(first, 7)
    if np_dtype == np.int32:
        assert (rest == 0x7FFF7FFF).all()
    else:
        assert np.isnan(rest).all()


@pytest.mark.parametrize("n", [0, 1, 100, 255, 256, 257, 1000, 4096 * 3 + 7])
@pytest.mark.parametrize(("dtype", "np_dtype"), [("float", np.float32), ("double", np.float64)])
def test_extern_shared_block_reduction_matches_numpy(kernels, n, dtype, np_dtype):
    runtime, get = kernels
    threads = 128
    x = np.random.default_rng(n).standard_normal(n).astype(np_dtype)
    blocks = max(1, -(-n // threads))
    out = _arr(np.full(blocks, -1, np_dtype))
    shared = threads * np.dtype(np_dtype).itemsize
    runtime.launch(
        get(f"ExternBlockSum<{dtype}>"), (blocks, 1, 1), (threads, 1, 1), (_arr(x), out, np.int64(n)), shared
    )
    expected = [x[b * threads : (b + 1) * threads].sum(dtype=np.float64) for b in range(blocks)]
    np.testing.assert_allclose(out._host, expected, rtol=1e-5 if dtype == "float" else 1e-12, atol=1e-6)


def test_extern_shared_cells_left_unwritten_are_poisoned(kernels):
    """A tree that leaves the out-of-range cells unset sums poison into the last block."""
    runtime, get = kernels
    n, threads = 300, 128
    x = np.ones(n, np.float32)
    out = _arr(np.zeros(3, np.float32))
    runtime.launch(get("ExternSumSkippingTail"), (3, 1, 1), (threads, 1, 1), (_arr(x), out, np.int64(n)), threads * 4)
    np.testing.assert_array_equal(out._host[:2], [128.0, 128.0])
    assert np.isnan(out._host[2])


@pytest.mark.parametrize(
    ("grid", "block", "shared", "match"),
    [
        ((0, 1, 1), (128, 1, 1), 512, "zero dimension"),
        ((1, 1, 1), (0, 1, 1), 0, "zero dimension"),
        ((1, 1, 1), (2048, 1, 1), 0, "more than 1024 threads"),
        ((1, 1, 1), (128, 1, 1), 64 * 1024, "65536 bytes of dynamic shared memory"),
    ],
)
def test_a_launch_a_gpu_refuses_is_an_error(kernels, grid, block, shared, match):
    """A zero-size grid (an empty input launched anyway), too many threads or too much shared memory."""
    runtime, get = kernels
    x, out = _arr(np.zeros(0, np.float32)), _arr(np.zeros(1, np.float32))
    with pytest.raises(EmulatedKernelError, match=match):
        runtime.launch(get("ExternBlockSum<float>"), grid, block, (x, out, np.int64(0)), shared)
