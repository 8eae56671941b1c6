// ROIAlign(features [N, C, H, W], rois [R, 5]) -> [R, C, pooled_h, pooled_w] and ROIAlignGrad(dy, rois) -> dx
// [N, C, H, W], with the math of functors/roi_align.h (shared with csrc/kernels/cuda/roi_align.cu). The
// gradient is gathered plane by plane: each (image, channel) plane is summed by one thread, over the RoIs in
// order, so the result has the same bits at any thread count.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "opforge/functors/roi_align.h"
#include "opforge/kernel.h"
#include "opforge/parallel.h"

namespace opforge {
namespace {

RoiAlignAttrs ReadAttrs(const KernelContext& ctx) {
  return {ctx.GetInt("pooled_height"), ctx.GetInt("pooled_width"), ctx.GetInt("sample_num"),
          ctx.GetInt("roi_end_mode"), ctx.GetFloat("spatial_scale")};
}

// Every RoI's geometry, its image checked: an index out of range is the caller's error, named.
template <typename T>
std::vector<RoiGeometry<compute_t<T>>> Geometries(const std::string& op, const T* rois, int64_t count,
                                                  const RoiAlignAttrs& attrs, int64_t images) {
  std::vector<RoiGeometry<compute_t<T>>> out(static_cast<size_t>(count));
  for (int64_t r = 0; r < count; ++r) {
    const auto& g = out[static_cast<size_t>(r)] = RoiAlignGeometry(rois + r * kRoiColumns, attrs, images);
    OPF_CHECK(g.image >= 0, "For '" << op << "', the image_index (column 0 of 'rois') must be a number in [0, "
                                    << images - 1 << "], but got " << static_cast<double>(Load(rois[r * kRoiColumns]))
                                    << " in RoI " << r << ".");
    OPF_CHECK(RoiAlignValid(g),
              "For '" << op << "', RoI " << r << " has bins of " << g.grid_h << " x " << g.grid_w
                      << " samples (sample_num 0 takes floor(bin size) per dim), but at most " << kMaxRoiBinSamples
                      << " are taken.");
  }
  return out;
}

// What ROIAlign and ROIAlignGrad know at Init: the op, its attrs, the features' [N, C, H, W] and the RoI count.
class RoiAlignProblem : public CpuKernel {
 protected:
  void InitProblem(const KernelContext& ctx, const std::vector<int64_t>& features, const char* features_name) {
    op_ = ctx.op_name();
    OPF_CHECK(features.size() == 4, "For '" << op_ << "', the '" << features_name << "' must be 4-D, but got "
                                            << ShapeToString(features) << ".");
    const auto& rois = ctx.input(1).shape;
    OPF_CHECK(rois.size() == 2 && rois[1] == kRoiColumns,
              "For '" << op_ << "', the 'rois' must be [r, 5], but got shape " << ShapeToString(rois) << ".");
    attrs_ = ReadAttrs(ctx);
    images_ = features[0], channels_ = features[1], h_ = features[2], w_ = features[3];
    count_ = rois[0];
  }

  std::string op_;
  RoiAlignAttrs attrs_{};
  int64_t images_ = 0, channels_ = 0, h_ = 0, w_ = 0, count_ = 0;
};

template <typename T>
class RoiAlignCpuKernel : public RoiAlignProblem {
 public:
  void Init(const KernelContext& ctx) override { InitProblem(ctx, ctx.input(0).shape, "features"); }

  void Launch(const KernelArgs& args) override {
    const T* x = args.input<T>(0);
    T* y = args.output<T>(0);
    const auto rois = Geometries(op_, args.input<T>(1), count_, attrs_, images_);
    const int64_t bins = attrs_.pooled_h * attrs_.pooled_w;
    ParallelFor(count_ * channels_, 16, [&](int64_t begin, int64_t end) {
      for (int64_t rc = begin; rc < end; ++rc) {
        const auto& g = rois[static_cast<size_t>(rc / channels_)];
        const T* plane = x + (g.image * channels_ + rc % channels_) * h_ * w_;
        T* out = y + rc * bins;
        for (int64_t b = 0; b < bins; ++b) {
          const compute_t<T> v = g.skip ? compute_t<T>(0) : RoiAlignBin(plane, h_, w_, g, b / attrs_.pooled_w,
                                                                       b % attrs_.pooled_w);
          out[b] = Store<T>(v);
        }
      }
    });
  }
};

template <typename T>
class RoiAlignGradCpuKernel : public RoiAlignProblem {
 public:
  void Init(const KernelContext& ctx) override {
    InitProblem(ctx, ctx.output(0).shape, "xdiff_shape");
    const auto& dy = ctx.input(0).shape;
    const std::vector<int64_t> want = {count_, channels_, attrs_.pooled_h, attrs_.pooled_w};
    OPF_CHECK(dy == want, "For '" << op_ << "', the 'dy' must have shape " << ShapeToString(want) << ", but got "
                                  << ShapeToString(dy) << ".");
  }

  void Launch(const KernelArgs& args) override {
    using C = compute_t<T>;
    const T* dy = args.input<T>(0);
    T* dx = args.output<T>(0);
    const auto rois = Geometries(op_, args.input<T>(1), count_, attrs_, images_);
    const int64_t bins = attrs_.pooled_h * attrs_.pooled_w, pixels = h_ * w_;
    ParallelFor(images_ * channels_, 1, [&](int64_t begin, int64_t end) {
      std::vector<C> sum(static_cast<size_t>(pixels));  // a plane summed in C: float16 gradients in float
      for (int64_t plane = begin; plane < end; ++plane) {
        std::fill(sum.begin(), sum.end(), C(0));
        const int64_t image = plane / channels_, channel = plane % channels_;
        for (int64_t r = 0; r < count_; ++r) {
          const auto& g = rois[static_cast<size_t>(r)];
          if (g.image != image || g.skip) continue;
          const C inverse = RoiAlignInverseCount(g);
          const T* d = dy + (r * channels_ + channel) * bins;
          for (int64_t b = 0; b < bins; ++b) {
            RoiAlignBinGrad(h_, w_, g, b / attrs_.pooled_w, b % attrs_.pooled_w, Load(d[b]) * inverse,
                            [&](int64_t offset, C v) { sum[static_cast<size_t>(offset)] += v; });
          }
        }
        T* out = dx + plane * pixels;
        for (int64_t p = 0; p < pixels; ++p) out[p] = Store<T>(sum[static_cast<size_t>(p)]);
      }
    });
  }
};

#define REG_ROI_ALIGN(T, ID)                                                                                 \
  MS_REG_CPU_KERNEL(ROIAlign, KernelAttr().AddInputAttr(ID).AddInputAttr(ID).AddOutputAttr(ID),             \
                    RoiAlignCpuKernel<T>);                                                                  \
  MS_REG_CPU_KERNEL(ROIAlignGrad, KernelAttr().AddInputAttr(ID).AddInputAttr(ID).AddOutputAttr(ID),         \
                    RoiAlignGradCpuKernel<T>)

REG_ROI_ALIGN(float16, kNumberTypeFloat16);
REG_ROI_ALIGN(float, kNumberTypeFloat32);
REG_ROI_ALIGN(double, kNumberTypeFloat64);

}  // namespace
}  // namespace opforge
