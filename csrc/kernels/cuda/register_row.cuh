// A row of n contiguous elements held in registers by a group of kGroup threads (a warp, or a block),
// kPer elements a thread: rows of n <= kGroup * kPer elements are read once and written once by the
// kernels that need several passes over them (softmax.cu, normalization.cu). Where the rows allow, a
// thread's elements are packs of kW contiguous ones (one 128-bit access each), else single elements
// kGroup apart; either way a warp's accesses are contiguous. Values are kept in compute_t<T>.
#pragma once

#include "opforge/cuda.h"
#include "pack.cuh"

namespace opforge {
namespace cuda {

// The threads of a block of a register-row kernel: kGroup, or the warp kernels' blocks of four rows
// (WARP_ROWS_BLOCK of opforge/kernels/gpu/register_rows.py); and the threads an SM should hold at once, for
// the launch bounds, from the bytes of registers a thread's row values and the kernel's other live values
// take: up to 32 bytes 1,024 threads (64 registers each), 64 bytes 768 (80), 128 bytes 512 (128), else
// 256 (255): no spills on sm_80 or sm_90 (tests/test_cuda_compile.py checks ptxas's report). A block
// larger than its bytes allow is not instantiated (register_rows.py's _fits, the same table).
template <int kGroup>
constexpr int kRegisterBlockThreads = kGroup == 32 ? 128 : kGroup;
template <int kBytes>
constexpr int kRegisterThreadsPerSm = kBytes <= 32 ? 1024 : kBytes <= 64 ? 768 : kBytes <= 128 ? 512 : 256;
template <int kGroup, int kBytes>
constexpr int kRegisterBlocksPerSm = kRegisterThreadsPerSm<kBytes> / kRegisterBlockThreads<kGroup>;

// Compiled into each register-row kernel: an instantiation register_rows.py's table should have left out
// (its block larger than its registers allow) fails to compile instead of launching with spills.
template <int kGroup, int kBytes>
constexpr bool kRegisterRowFits = kRegisterBlocksPerSm<kGroup, kBytes> >= 1;

template <typename T, int kGroup, int kPer>
struct RegisterRow {
  using C = compute_t<T>;
  static constexpr int kW = kPackWidth<T> < kPer ? kPackWidth<T> : kPer;

  C v[kPer];
  bool packed;  // the rows are read and written in packs (the same for every row of a launch)
  int lane;     // this thread's rank in its group

  // `packed`: whether every row of the launch may be read and written in packs (RowsPackable).
  __device__ explicit RegisterRow(bool packed_rows)
      : packed(packed_rows), lane(static_cast<int>(threadIdx.x) % kGroup) {}

  // The row index of this thread's j-th element.
  __device__ __forceinline__ int64_t Index(int j) const {
    if (packed) return (static_cast<int64_t>(j / kW) * kGroup + lane) * kW + j % kW;
    return static_cast<int64_t>(j) * kGroup + lane;
  }

  // Reads row[0, n); elements past n read as `pad`.
  __device__ __forceinline__ void Read(const T* row, int64_t n, C pad) {
    if (packed) {
#pragma unroll
      for (int j = 0; j < kPer; j += kW) {
        const int64_t k = Index(j);
        Pack<T, kW> q{};
        if (k < n) q = reinterpret_cast<const Pack<T, kW>*>(row)[k / kW];
#pragma unroll
        for (int i = 0; i < kW; ++i) v[j + i] = k < n ? static_cast<C>(Load(q.v[i])) : pad;
      }
    } else {
#pragma unroll
      for (int j = 0; j < kPer; ++j) v[j] = Index(j) < n ? static_cast<C>(Load(row[Index(j)])) : pad;
    }
  }

  // Writes f(v, k) to row[k] for k in [0, n) (rounded to T).
  template <typename F>
  __device__ __forceinline__ void Write(T* row, int64_t n, F f) const {
    if (packed) {
#pragma unroll
      for (int j = 0; j < kPer; j += kW) {
        const int64_t k = Index(j);
        if (k >= n) continue;
        Pack<T, kW> q;
#pragma unroll
        for (int i = 0; i < kW; ++i) q.v[i] = Store<T>(static_cast<C>(f(v[j + i], k + i)));
        reinterpret_cast<Pack<T, kW>*>(row)[k / kW] = q;
      }
    } else {
#pragma unroll
      for (int j = 0; j < kPer; ++j) {
        if (Index(j) < n) row[Index(j)] = Store<T>(static_cast<C>(f(v[j], Index(j))));
      }
    }
  }
};

// body(r) for each row r the group of kGroup threads this thread is in takes: blockDim.x / kGroup groups a
// block, rows grid-strided. A group's threads leave the loop together.
template <int kGroup, typename Body>
__device__ __forceinline__ void ForEachGroupRow(int64_t rows, Body body) {
  const int64_t groups_per_block = static_cast<int64_t>(blockDim.x) / kGroup;
  for (int64_t r = static_cast<int64_t>(blockIdx.x) * groups_per_block + static_cast<int64_t>(threadIdx.x) / kGroup;
       r < rows; r += static_cast<int64_t>(gridDim.x) * groups_per_block) {
    body(r);
  }
}

}  // namespace cuda
}  // namespace opforge
