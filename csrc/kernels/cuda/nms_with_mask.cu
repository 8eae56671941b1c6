// NMSWithMask on the GPU with the math of opforge/functors/nms.h (shared with csrc/kernels/cpu/nms_with_mask.cc),
// in three launches (opforge/kernels/gpu/nms_with_mask.py):
//   NmsSortKernel   a thread per box counts the boxes before it and copies it to that place;
//   NmsMaskKernel   a block per 64 x 64 tile of sorted boxes: bit j of mask[i][j / 64] says that box i
//                   overlaps a later box j above the threshold;
//   NmsScanKernel   one block walks the sorted boxes 64 at a time, each thread replaying the word's greedy
//                   choice in registers, then the threads fold the kept boxes' rows into the later words.
#include "opforge/cuda.h"
#include "opforge/functors/nms.h"

namespace opforge {
namespace cuda {

constexpr int kNmsTile = 64;  // boxes per mask word

template <typename T>
__global__ void NmsSortKernel(const T* boxes, T* sorted, int32_t* index, int64_t n) {
  OPF_GRID_STRIDE_LOOP(i, n) {
    const T* box = boxes + i * kNmsBoxColumns;
    int64_t rank = 0;
    for (int64_t j = 0; j < n; ++j) rank += NmsBefore(boxes + j * kNmsBoxColumns, j, box, i) ? 1 : 0;
    for (int c = 0; c < kNmsBoxColumns; ++c) sorted[rank * kNmsBoxColumns + c] = box[c];
    index[i] = static_cast<int32_t>(i);
  }
}

// Block (x, y) of kNmsTile threads: the rows y * 64 + threadIdx.x against the columns of word x. Only words at
// or after a row's own are read by the scan, so tiles wholly below the diagonal write nothing.
template <typename T>
__global__ void NmsMaskKernel(const T* sorted, uint64_t* mask, int64_t n, int64_t words, float threshold) {
  __shared__ T columns[kNmsTile * kNmsBoxColumns];
  const int64_t row0 = static_cast<int64_t>(blockIdx.y) * kNmsTile;
  const int64_t col0 = static_cast<int64_t>(blockIdx.x) * kNmsTile;
  if (blockIdx.x < blockIdx.y) return;  // the whole block: no barrier is skipped by some threads only
  const int64_t count = n - col0 < kNmsTile ? n - col0 : kNmsTile;
  for (int64_t k = threadIdx.x; k < count * kNmsBoxColumns; k += blockDim.x) {
    columns[k] = sorted[col0 * kNmsBoxColumns + k];
  }
  __syncthreads();
  const int64_t i = row0 + threadIdx.x;
  if (i >= n) return;
  const T* box = sorted + i * kNmsBoxColumns;
  uint64_t bits = 0;
  for (int64_t c = i >= col0 ? i - col0 + 1 : 0; c < count; ++c) {
    if (NmsOverlaps(box, columns + c * kNmsBoxColumns, threshold)) bits |= uint64_t{1} << c;
  }
  mask[i * words + blockIdx.x] = bits;
}

// One block of kBlock threads. removed[w]: the boxes of word w that a kept box suppresses, complete for word w once every word
// before it is done. keep: bytes (bools).
template <int kBlock>
__global__ void __launch_bounds__(kBlock) NmsScanKernel(const uint64_t* mask, uint64_t* removed, uint8_t* keep, int64_t n, int64_t words) {
  for (int64_t w = threadIdx.x; w < words; w += kBlock) removed[w] = 0;
  __syncthreads();
  for (int64_t w = 0; w < words; ++w) {
    const int64_t first = w * kNmsTile;
    const int count = static_cast<int>(n - first < kNmsTile ? n - first : kNmsTile);
    uint64_t gone = removed[w], kept = 0;
    for (int b = 0; b < count; ++b) {  // every thread the same greedy pass, on values all threads read
      if (!((gone >> b) & 1)) {
        kept |= uint64_t{1} << b;
        gone |= mask[(first + b) * words + w];
      }
    }
    if (threadIdx.x < static_cast<unsigned>(count)) keep[first + threadIdx.x] = (kept >> threadIdx.x) & 1;
    for (int64_t v = w + 1 + threadIdx.x; v < words; v += kBlock) {
      uint64_t acc = removed[v];
      for (int b = 0; b < count; ++b) {
        if ((kept >> b) & 1) acc |= mask[(first + b) * words + v];
      }
      removed[v] = acc;
    }
    __syncthreads();
  }
}

}  // namespace cuda
}  // namespace opforge
