// CumSum, CumProd, Cummax, Cummin, Dropout and DropoutGrad on the GPU with the math of opforge/functors/scan.h and random.h
// (shared with csrc/kernels/cpu/cumsum.cc). CumSum (x viewed as [outer, n, inner]): a block scans each long
// contiguous row (CumSumRowsKernel), else one thread per line (CumScanKernel, CumProd's every line). Dropout: one thread per element
// (the counter-based generator gives every backend the same mask for the same seeds). Instantiated by name
// (opforge/kernels/gpu/cumsum.py).
#include "block.cuh"
#include "opforge/cuda.h"
#include "opforge/functors/random.h"
#include "opforge/functors/scan.h"

namespace opforge {
namespace cuda {

// R: SumReducer<T> (CumSum) or ProdReducer<T> (CumProd).
template <typename T, typename R>
__global__ void CumScanKernel(const T* x, T* y, int64_t lines, int64_t n, int64_t inner, int exclusive, int reverse) {
  OPF_GRID_STRIDE_LOOP(l, lines) {
    const int64_t base = (l / inner) * n * inner + l % inner;
    ScanLine<R>(x + base, y + base, n, inner, exclusive != 0, reverse != 0);
  }
}

// Contiguous rows (inner == 1), one block of kBlock threads per row, in tiles of kBlock * chunk elements
// (chunk = the elements per thread, at most kItems): each thread sums its `chunk` neighbouring elements of
// the tile, the block scans those sums (BlockExclusiveScan), then each thread writes its elements from its
// prefix; the tile's total carries into the next. Sums in acc_t<T> as ScanLine, in another order: floats
// may round differently from the CPU's serial sum, integers wrap to the same result.
template <typename T, int kBlock, int kItems>
__global__ void CumSumRowsKernel(const T* x, T* y, int64_t rows, int64_t n, int chunk, int exclusive,
                                 int reverse) {
  using A = acc_t<T>;
  __shared__ A cells[kBlock / 32 + 1];
  const int64_t tile = static_cast<int64_t>(kBlock) * chunk;
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const T* xr = x + r * n;
    T* yr = y + r * n;
    A carry = A(0);
    for (int64_t start = 0; start < n; start += tile) {
      const int64_t first = start + static_cast<int64_t>(threadIdx.x) * chunk;  // in scan order
      A v[kItems];
      A mine = A(0);
#pragma unroll
      for (int q = 0; q < kItems; ++q) {
        const int64_t p = first + q;
        v[q] = q < chunk && p < n ? SumReducer<T>::Widen(xr[reverse ? n - 1 - p : p]) : A(0);
        mine += v[q];
      }
      A tile_total;
      A acc = carry + BlockExclusiveScan<A, kBlock>(mine, cells, &tile_total);
#pragma unroll
      for (int q = 0; q < kItems; ++q) {
        const int64_t p = first + q;
        if (q < chunk && p < n) {
          if (!exclusive) acc += v[q];
          yr[reverse ? n - 1 - p : p] = SumReducer<T>::Finish(acc, 1);
          if (exclusive) acc += v[q];
        }
      }
      carry += tile_total;
    }
  }
}

// Cummax (kMax) and Cummin: one thread per line along the axis (ExtremeScanLine).
template <typename T, bool kMax>
__global__ void ExtremeScanKernel(const T* x, T* y, int64_t* index, int64_t lines, int64_t n, int64_t inner) {
  OPF_GRID_STRIDE_LOOP(l, lines) {
    const int64_t base = (l / inner) * n * inner + l % inner;
    ExtremeScanLine<kMax>(x + base, y + base, index + base, n, inner);
  }
}

template <typename T>
__global__ void DropoutKernel(const T* x, T* out, T* mask, int64_t n, uint64_t key, double keep_prob) {
  using C = compute_t<T>;
  const C scale = static_cast<C>(1.0 / keep_prob);
  OPF_GRID_STRIDE_LOOP(i, n) {
    const bool keep = DropoutKeep(key, i, keep_prob);
    mask[i] = Store<T>(keep ? C(1) : C(0));
    out[i] = Store<T>(keep ? Load(x[i]) * scale : C(0));
  }
}

// DropoutExt: the seeds are one int64 each in device memory (a counter a trace moves on between replays),
// so each thread makes the key itself (two SplitMix64 rounds) rather than the host reading them back.
template <typename T>
__global__ void DropoutExtKernel(const T* x, const int64_t* seed, const int64_t* offset, T* out, T* mask, int64_t n,
                                 double keep_prob) {
  using C = compute_t<T>;
  const C scale = static_cast<C>(1.0 / keep_prob);
  const uint64_t key = DropoutKey(*seed, *offset);
  OPF_GRID_STRIDE_LOOP(i, n) {
    const bool keep = DropoutKeep(key, i, keep_prob);
    mask[i] = Store<T>(keep ? C(1) : C(0));
    out[i] = Store<T>(keep ? Load(x[i]) * scale : C(0));
  }
}

template <typename T>
__global__ void DropoutGradKernel(const T* dy, const T* mask, T* dx, int64_t n, double keep_prob) {
  using C = compute_t<T>;
  const C scale = static_cast<C>(1.0 / keep_prob);
  OPF_GRID_STRIDE_LOOP(i, n) { dx[i] = Store<T>(Load(dy[i]) * Load(mask[i]) * scale); }
}

}  // namespace cuda
}  // namespace opforge
