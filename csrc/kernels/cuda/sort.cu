// Sort and TopK on the GPU (the CPU's csrc/kernels/cpu/sort.cc), in the order of functors/sort.h: NaN
// greatest, ties by index. Each element becomes its order key (OrderKey of functors/sort.h, an unsigned
// integer in the order asked for), packed with its index (and its row) so that every key is unique. Three
// ways (opforge/kernels/gpu/sort.py picks one):
//  - Rows of at most 4096 elements of at most 32 bits, or 2048 of 64 bits: a block per row sorts the row's keys
//    in shared memory with bitonic networks, only the least k for TopK (BitonicRowsKernel).
//  - Longer rows: the GPU library's radix sort of unsigned integers (runtime.sort /
//    runtime.argsort: CUB through CuPy), of row, key and index packed in one word when they fit, else in two
//    stable passes (by key, then by row).
//  - RankSortKernel for short rows: one thread per element places it at its rank in its row (O(n) work per
//    element, one launch).
#include "opforge/cuda.h"
#include "opforge/functors/sort.h"

namespace opforge {
namespace cuda {

// x viewed as [outer, n, inner], sorted along n: element i is (o, j, c), of row o * inner + c.
// keys[i] = row << row_shift | order key << index_bits | j, in one word K (uint32_t or uint64_t) that
// holds all three: ascending keys are the rows one after the other, each in the order asked for.
template <typename T, typename K>
__global__ void PackSortKeysKernel(const T* x, K* keys, int64_t total, int64_t n, int64_t inner, int index_bits,
                                   int row_shift, bool descending) {
  constexpr int kWidth = static_cast<int>(sizeof(K) * 8);
  OPF_GRID_STRIDE_LOOP(i, total) {
    const int64_t c = i % inner, j = (i / inner) % n, o = i / (inner * n);
    const K row = static_cast<K>(o * inner + c);
    const K high = row_shift < kWidth ? static_cast<K>(row << row_shift) : K(0);  // one row: no row bits
    keys[i] = high | static_cast<K>(static_cast<K>(OrderKey(x[i], descending)) << index_bits) | static_cast<K>(j);
  }
}

// The first k of each sorted row of packed keys: values (and int32 indices) of shape [outer, k, inner].
template <typename T, typename K>
__global__ void UnpackSortedKernel(const T* x, const K* sorted, T* values, int32_t* indices, int64_t total_out,
                                   int64_t n, int64_t inner, int64_t k, K index_mask) {
  OPF_GRID_STRIDE_LOOP(t, total_out) {
    const int64_t c = t % inner, slot = (t / inner) % k, o = t / (inner * k);
    const int64_t j = static_cast<int64_t>(sorted[(o * inner + c) * n + slot] & index_mask);
    values[t] = x[(o * n + j) * inner + c];
    indices[t] = static_cast<int32_t>(j);
  }
}

// Two stable passes, when row, key and index do not fit one word: the order keys alone ...
template <typename T>
__global__ void OrderKeysKernel(const T* x, typename SortKey<T>::U* keys, int64_t total, bool descending) {
  OPF_GRID_STRIDE_LOOP(i, total) { keys[i] = OrderKey(x[i], descending); }
}

// ... sorted (by_key: element positions); then the row of each element in that order, sorted stably ...
__global__ void RowKeysKernel(const int64_t* by_key, uint64_t* rows, int64_t total, int64_t n, int64_t inner) {
  OPF_GRID_STRIDE_LOOP(t, total) {
    const int64_t i = by_key[t];
    rows[t] = static_cast<uint64_t>((i / (n * inner)) * inner + i % inner);
  }
}

// ... (by_row: positions in by_key): element by_key[by_row[r * n + slot]] is the slot-th of row r.
template <typename T>
__global__ void GatherTwoPassKernel(const T* x, const int64_t* by_key, const int64_t* by_row, T* values,
                                    int32_t* indices, int64_t total_out, int64_t n, int64_t inner, int64_t k) {
  OPF_GRID_STRIDE_LOOP(t, total_out) {
    const int64_t c = t % inner, slot = (t / inner) % k, o = t / (inner * k);
    const int64_t i = by_key[by_row[(o * inner + c) * n + slot]];
    values[t] = x[i];
    indices[t] = static_cast<int32_t>((i / inner) % n);
  }
}

// The key of a 64-bit element in BitonicRowsKernel: its order key and its index, compared as one 96-bit number
// (the two do not fit one word).
struct WideKey {
  uint64_t order;
  uint32_t index;
  OPF_HD bool operator<(const WideKey& o) const { return order < o.order || (order == o.order && index < o.index); }
  OPF_HD bool operator>(const WideKey& o) const { return o < *this; }
};

// A row's keys for BitonicRowsKernel: order key << index_bits | index in one unsigned word K, unique; the
// padding after the row is all ones, greater than every real key (order key and index take fewer bits).
template <typename K>
struct RowKeys {
  template <typename U>
  static __device__ K Make(U order, int index, int index_bits) {
    return static_cast<K>(static_cast<K>(order) << index_bits) | static_cast<K>(index);
  }
  static __device__ K Padding() { return static_cast<K>(~static_cast<K>(0)); }
  static __device__ int64_t Index(K key, int index_bits) {
    return static_cast<int64_t>(key & static_cast<K>((static_cast<K>(1) << index_bits) - 1));
  }
};

template <>
struct RowKeys<WideKey> {
  static __device__ WideKey Make(uint64_t order, int index, int) { return {order, static_cast<uint32_t>(index)}; }
  static __device__ WideKey Padding() { return {~uint64_t{0}, ~uint32_t{0}}; }  // an index no row reaches
  static __device__ int64_t Index(WideKey key, int) { return key.index; }
};

// keys[a] and keys[b] in the order asked for.
template <typename K>
__device__ void CompareExchange(K* keys, int a, int b, bool ascending) {
  const K p = keys[a], q = keys[b];
  if ((p > q) == ascending) {
    keys[a] = q;
    keys[b] = p;
  }
}

// A block per row of at most kCapacity elements (x viewed as [outer, n, inner]; row r is (r / inner, r % inner)):
// the row's keys (RowKeys: order key and index, unique, so the order is exact) in shared memory, padded to
// `padded` (a power of two >= n) with the greatest key, which never ties a real one. Bitonic networks then
// sort runs of `run` keys (a power of two >= k), and while more than one run is left, each pair of runs (A, B)
// keeps min(A[i], B[run - 1 - i]): a bitonic sequence holding the `run` least keys of the two, which a bitonic
// merge sorts. The first k keys of the last run are written out.
// run == padded: a full bitonic sort (Sort); a small run does far less work (TopK).
template <typename T, typename K, int kCapacity>
__global__ void BitonicRowsKernel(const T* x, T* values, int32_t* indices, int64_t rows, int64_t n, int64_t inner,
                                  int64_t k, int padded, int run, int index_bits, bool descending) {
  __shared__ K keys[kCapacity];
  const int tid = static_cast<int>(threadIdx.x), threads = static_cast<int>(blockDim.x);
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const int64_t o = r / inner, c = r % inner;
    const T* row = x + o * n * inner + c;
    for (int i = tid; i < padded; i += threads) {
      keys[i] = i < n ? RowKeys<K>::Make(OrderKey(row[i * inner], descending), i, index_bits) : RowKeys<K>::Padding();
    }
    // Sort every run ascending: bitonic sequences of growing size (alternating directions), run-sized last.
    for (int size = 2; size <= run; size <<= 1) {
      for (int stride = size >> 1; stride > 0; stride >>= 1) {
        __syncthreads();
        for (int t = tid; t < padded / 2; t += threads) {
          const int a = 2 * t - (t & (stride - 1));
          CompareExchange(keys, a, a + stride, size == run || (a & size) == 0);
        }
      }
    }
    // Halve the runs until one is left: the runs in use start `step` apart.
    for (int step = run; step < padded; step <<= 1) {
      const int pairs = padded / (2 * step);
      __syncthreads();
      for (int t = tid; t < pairs * run; t += threads) {
        const int base = (t / run) * 2 * step, i = t % run;
        const K other = keys[base + step + run - 1 - i];
        if (other < keys[base + i]) keys[base + i] = other;
      }
      for (int stride = run >> 1; stride > 0; stride >>= 1) {
        __syncthreads();
        for (int t = tid; t < pairs * (run / 2); t += threads) {
          const int u = t % (run / 2), a = (t / (run / 2)) * 2 * step + 2 * u - (u & (stride - 1));
          CompareExchange(keys, a, a + stride, true);
        }
      }
    }
    __syncthreads();
    for (int64_t slot = tid; slot < k; slot += threads) {
      const int64_t j = RowKeys<K>::Index(keys[slot], index_bits), at = (o * k + slot) * inner + c;
      values[at] = row[j * inner];
      indices[at] = static_cast<int32_t>(j);
    }
    __syncthreads();  // the keys are read before the next row's are written
  }
}

// Short rows: each element placed at its rank in its row, when that rank is below k.
template <typename T>
__global__ void RankSortKernel(const T* x, T* values, int32_t* indices, int64_t total, int64_t n, int64_t inner,
                               int64_t k, bool descending) {
  OPF_GRID_STRIDE_LOOP(i, total) {
    const int64_t c = i % inner, j = (i / inner) % n, o = i / (inner * n);
    const T* row = x + o * n * inner + c;
    const int64_t rank = RankInRow(row, n, inner, j, descending);
    if (rank < k) {
      const int64_t at = o * k * inner + rank * inner + c;
      values[at] = row[j * inner];
      indices[at] = static_cast<int32_t>(j);
    }
  }
}

}  // namespace cuda
}  // namespace opforge
