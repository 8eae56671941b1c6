// NMSWithMask(iou_threshold)(bboxes [N, 5]) -> (output_boxes [N, 5], output_idx [N] int32, selected_mask [N]
// bool): the boxes by score, highest first; output_idx = 0 .. N - 1 (positions in output_boxes, as MindSpore's
// kernels give them); going down the sorted boxes, a box is dropped when a kept box before it overlaps it
// above the threshold (functors/nms.h, shared with csrc/kernels/cuda/nms_with_mask.cu).
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "opforge/functors/nms.h"
#include "opforge/kernel.h"
#include "opforge/parallel.h"

namespace opforge {
namespace {

template <typename T>
class NmsWithMaskCpuKernel : public CpuKernel {
 public:
  void Init(const KernelContext& ctx) override {
    const std::string op = ctx.op_name();
    const auto& shape = ctx.input(0).shape;
    OPF_CHECK(shape.size() == 2 && shape[1] == kNmsBoxColumns && shape[0] >= 1,
              "For '" << op << "', the 'bboxes' must be [n, 5] with n >= 1, but got shape " << ShapeToString(shape)
                      << ".");
    n_ = shape[0];
    threshold_ = Load(Store<T>(static_cast<compute_t<T>>(ctx.GetFloat("iou_threshold"))));
  }

  void Launch(const KernelArgs& args) override {
    const T* boxes = args.input<T>(0);
    T* sorted = args.output<T>(0);
    int32_t* index = args.output<int32_t>(1);
    uint8_t* keep = args.output<uint8_t>(2);  // bools are bytes
    std::vector<int64_t> order(static_cast<size_t>(n_));
    std::iota(order.begin(), order.end(), int64_t{0});
    std::stable_sort(order.begin(), order.end(), [boxes](int64_t a, int64_t b) {
      return NmsBefore(boxes + a * kNmsBoxColumns, a, boxes + b * kNmsBoxColumns, b);
    });
    for (int64_t i = 0; i < n_; ++i) {
      std::copy_n(boxes + order[static_cast<size_t>(i)] * kNmsBoxColumns, kNmsBoxColumns,
                  sorted + i * kNmsBoxColumns);
      index[i] = static_cast<int32_t>(i);
      keep[i] = 1;
    }
    for (int64_t i = 0; i + 1 < n_; ++i) {
      if (!keep[i]) continue;
      const T* kept = sorted + i * kNmsBoxColumns;
      // Each kept box tests every later one: split across threads when there are many.
      ParallelFor(n_ - i - 1, 4096, [&](int64_t begin, int64_t end) {
        for (int64_t j = i + 1 + begin; j < i + 1 + end; ++j) {
          if (keep[j] && NmsOverlaps(kept, sorted + j * kNmsBoxColumns, threshold_)) keep[j] = 0;
        }
      });
    }
  }

 private:
  int64_t n_ = 0;
  compute_t<T> threshold_ = 0;
};

#define REG_NMS_WITH_MASK(T, ID)                                                                 \
  MS_REG_CPU_KERNEL(NMSWithMask,                                                                 \
                    KernelAttr()                                                                 \
                        .AddInputAttr(ID)                                                        \
                        .AddOutputAttr(ID)                                                       \
                        .AddOutputAttr(kNumberTypeInt32)                                         \
                        .AddOutputAttr(kNumberTypeBool),                                         \
                    NmsWithMaskCpuKernel<T>)

REG_NMS_WITH_MASK(float16, kNumberTypeFloat16);
REG_NMS_WITH_MASK(float, kNumberTypeFloat32);

}  // namespace
}  // namespace opforge
