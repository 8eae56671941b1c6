// ROIAlign and ROIAlignGrad on the GPU with the math of opforge/functors/roi_align.h (shared with
// csrc/kernels/cpu/roi_align.cc), launched by opforge/kernels/gpu/roi_align.py:
//   RoiAlignKernel      a thread per output element;
//   RoiAlignGradKernel  a thread per element of dy, adding its share to the samples' corners with atomics into
//                       a zeroed accumulator A (float for float16, else T), so the sum's order, and its last bits,
//                       may change from run to run (as MindSpore's and torchvision's);
//   RoiAlignStoreKernel the accumulator rounded to float16, where A is not T.
//   RoiCheckKernel      the least RoI the kernels cannot take (RoiAlignValid), which the host raises after the
//                       launches; such a RoI reads and writes nothing meanwhile.
#include "opforge/cuda.h"
#include "opforge/functors/roi_align.h"

namespace opforge {
namespace cuda {

template <typename T>
__global__ void RoiAlignKernel(const T* x, const T* rois, T* y, int64_t count, int64_t channels, int64_t images,
                               int64_t h, int64_t w, RoiAlignAttrs attrs) {
  const int64_t bins = attrs.pooled_h * attrs.pooled_w;
  OPF_GRID_STRIDE_LOOP(i, count * channels * bins) {
    const int64_t b = i % bins, rc = i / bins;
    const auto g = RoiAlignGeometry(rois + (rc / channels) * kRoiColumns, attrs, images);
    compute_t<T> v = compute_t<T>(0);
    if (!g.skip && RoiAlignValid(g)) {
      const T* plane = x + (g.image * channels + rc % channels) * h * w;
      v = RoiAlignBin(plane, h, w, g, b / attrs.pooled_w, b % attrs.pooled_w);
    }
    y[i] = Store<T>(v);
  }
}

template <typename T, typename A>
__global__ void RoiAlignGradKernel(const T* dy, const T* rois, A* dx, int64_t count, int64_t channels,
                                   int64_t images, int64_t h, int64_t w, RoiAlignAttrs attrs) {
  using C = compute_t<T>;
  const int64_t bins = attrs.pooled_h * attrs.pooled_w;
  OPF_GRID_STRIDE_LOOP(i, count * channels * bins) {
    const int64_t b = i % bins, rc = i / bins;
    const auto g = RoiAlignGeometry(rois + (rc / channels) * kRoiColumns, attrs, images);
    if (g.skip || !RoiAlignValid(g)) continue;
    A* plane = dx + (g.image * channels + rc % channels) * h * w;
    RoiAlignBinGrad(h, w, g, b / attrs.pooled_w, b % attrs.pooled_w, Load(dy[i]) * RoiAlignInverseCount(g),
                    [&](int64_t offset, C v) { atomicAdd(plane + offset, static_cast<A>(v)); });
  }
}

template <typename T>
__global__ void RoiCheckKernel(const T* rois, int64_t count, int64_t images, RoiAlignAttrs attrs,
                               unsigned long long* first) {
  OPF_GRID_STRIDE_LOOP(r, count) {
    if (!RoiAlignValid(RoiAlignGeometry(rois + r * kRoiColumns, attrs, images))) {
      atomicMin(first, static_cast<unsigned long long>(r));
    }
  }
}

template <typename T, typename A>
__global__ void RoiAlignStoreKernel(const A* sum, T* dx, int64_t n) {
  OPF_GRID_STRIDE_LOOP(i, n) { dx[i] = Store<T>(static_cast<compute_t<T>>(sum[i])); }
}

}  // namespace cuda
}  // namespace opforge
