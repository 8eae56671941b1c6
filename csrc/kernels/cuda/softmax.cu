// Softmax and LogSoftmax along one axis, the input seen as [outer, n, inner] around it, with the math of
// opforge/functors/softmax.h:
// - rows along the last axis (inner == 1) that fit in the registers of a warp or a block
//   (SoftmaxRegisterKernel): one read and one write per element; the loads of a thread are independent,
//   so they are all in flight at once (the latency of HBM, not its bandwidth, bounded the strided loop);
// - longer rows: a block per row (SoftmaxRowsKernel). Each thread builds the online statistics (max,
//   sum of exp) of its strided elements in one read, the warps merge them with shuffles and the block
//   through shared memory, then every thread writes its elements: two reads and one write per element;
// - otherwise (rows across the inner dims): one thread per row (SoftmaxKernel).
// All are coalesced and deterministic for a shape.
// Instantiated by name (opforge/kernels/gpu/softmax.py registers which).
#include "opforge/cuda.h"
#include "opforge/functors/softmax.h"
#include "register_row.cuh"
#include "softmax.cuh"

namespace opforge {
namespace cuda {

template <typename T, bool kLog>
__global__ void SoftmaxKernel(const T* x, T* y, int64_t outer, int64_t n, int64_t inner) {
  using C = compute_t<T>;
  using S = acc_t<T>;
  OPF_GRID_STRIDE_LOOP(r, outer * inner) {
    const int64_t base = (r / inner) * n * inner + r % inner;
    const T* xr = x + base;
    T* yr = y + base;
    const SoftmaxRowStats<T> st = SoftmaxStats(xr, n, inner);
    // kLog: log(s), else 1 / s
    const S scale = kLog ? S(math::log(st.sum)) : S(1) / st.sum;
    for (int64_t k = 0; k < n; ++k) {
      const C v = Load(xr[k * inner]);
      yr[k * inner] = Store<T>(static_cast<C>(kLog ? LogSoftmaxOf(v, st, scale) : SoftmaxOf(v, st, scale)));
    }
  }
}

// A group of kGroup threads per row (a warp, several rows to a block, or the block of kGroup threads),
// the row in their registers (RegisterRow): rows of n <= kGroup * kPer elements, read once and written
// once. The plain two-pass formula of SoftmaxStats over the registers (max, then the sum of
// exp(x - max)): NaN, +inf and all -inf rows come out NaN as on the CPU. The per-element math stays in
// compute_t<T>: only a thread's partial sum is widened to acc_t<T> (float to double conversions are slow
// on a GPU), and the launch bounds keep enough threads of an SM in flight to cover the loads' latency.
template <typename T, bool kLog, int kGroup, int kPer>
__global__ void __launch_bounds__(kRegisterBlockThreads<kGroup>,
                                  kRegisterBlocksPerSm<kGroup, kPer * sizeof(compute_t<T>)>)
    SoftmaxRegisterKernel(const T* x, T* y, int64_t rows, int64_t n) {
  using C = compute_t<T>;
  using S = acc_t<T>;
  static_assert(kRegisterRowFits<kGroup, kPer * sizeof(compute_t<T>)>, "a block too large for its registers");
  __shared__ S cells[kGroup == 32 ? 1 : kGroup / 32 + 1];
  RegisterRow<T, kGroup, kPer> row(RowsPackable<T, RegisterRow<T, kGroup, kPer>::kW>(n, x, y));
  const C neg_inf = -limits::Infinity<C>();
  ForEachGroupRow<kGroup>(rows, [&](int64_t r) {
    row.Read(x + r * n, n, neg_inf);
    C m = neg_inf;
#pragma unroll
    for (int j = 0; j < kPer; ++j) m = row.v[j] > m ? row.v[j] : m;
    m = static_cast<C>(GroupReduce<kGroup, true>(static_cast<S>(m), cells));
    C part = C(0);
#pragma unroll
    for (int j = 0; j < kPer; ++j) {
      if (row.Index(j) < n) part += math::exp(row.v[j] - m);
    }
    const S s = GroupReduce<kGroup, false>(static_cast<S>(part), cells);
    // kLog: log(s), else 1 / s
    const C scale = static_cast<C>(kLog ? S(math::log(s)) : S(1) / s);
    row.Write(y + r * n, n, [&](C v, int64_t) { return kLog ? LogSoftmaxOf(v, m, scale) : SoftmaxOf(v, m, scale); });
  });
}

// kBlock threads (a multiple of 32) per row; rows taken block by block (grid-stride over rows).
template <typename T, bool kLog, int kBlock>
__global__ void SoftmaxRowsKernel(const T* x, T* y, int64_t rows, int64_t n) {
  using C = compute_t<T>;
  using S = acc_t<T>;
  constexpr int kWarps = kBlock / 32;
  __shared__ S warp_max[kWarps];
  __shared__ S warp_sum[kWarps];
  __shared__ S row_max[1];
  __shared__ S row_scale[1];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const T* xr = x + r * n;
    T* yr = y + r * n;
    SoftmaxPiece<S> piece{S(0), S(0)};
    for (int64_t k = threadIdx.x; k < n; k += kBlock) piece = SoftmaxMerge(piece, SoftmaxPiece<S>{S(Load(xr[k])), S(1)});
    piece = WarpMergeSoftmax(piece);
    if (lane == 0) {
      warp_max[warp] = piece.max;
      warp_sum[warp] = piece.sum;
    }
    __syncthreads();
    if (warp == 0) {
      piece = lane < kWarps ? SoftmaxPiece<S>{warp_max[lane], warp_sum[lane]} : SoftmaxPiece<S>{S(0), S(0)};
      piece = WarpMergeSoftmax(piece);
      if (lane == 0) {
        row_max[0] = piece.max;
        row_scale[0] = kLog ? S(math::log(piece.sum)) : S(1) / piece.sum;
      }
    }
    __syncthreads();
    const SoftmaxRowStats<T> st{static_cast<C>(row_max[0]), S(0)};
    const S scale = row_scale[0];
    for (int64_t k = threadIdx.x; k < n; k += kBlock) {
      const C v = Load(xr[k]);
      yr[k] = Store<T>(static_cast<C>(kLog ? LogSoftmaxOf(v, st, scale) : SoftmaxOf(v, st, scale)));
    }
    __syncthreads();  // the shared cells are the next row's
  }
}

}  // namespace cuda
}  // namespace opforge
