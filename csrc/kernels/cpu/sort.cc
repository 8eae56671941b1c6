// Sort(axis, descending)(x) -> (values, indices) and TopK(sorted)(x, k) -> (values, indices) along the last
// dim; indices int32. The order is functors/sort.h's, shared with the GPU: each value becomes its order key
// (OrderKey), the keys are sorted by radix or selected.
#include <algorithm>
#include <numeric>
#include <utility>
#include <vector>

#include "opforge/functors/sort.h"
#include "opforge/kernel.h"
#include "opforge/parallel.h"

namespace opforge {
namespace {

// The order of one row at a time, with buffers kept across rows: keys (OrderKey) sorted stably with their
// indices, so ties keep the smaller index first. Whole rows by an LSD radix sort of one byte per pass (a
// pass whose byte is the same for every key is skipped), short rows by insertion; the first k of a long row
// (TopK) by one scan keeping the best k.
template <typename T>
class RowSorter {
  using K = typename SortKey<T>::U;
  static constexpr int kBytes = static_cast<int>(sizeof(K));
  static constexpr int64_t kInsertionMax = 32;
  static constexpr int64_t kSelectMax = 64;  // (a larger k: the whole row sorted by radix)
  static constexpr int64_t kBlock = 512;

 public:
  RowSorter(int64_t n, bool descending)
      : n_(n), descending_(descending), keys_(2 * static_cast<size_t>(n)), order_(2 * static_cast<size_t>(n)) {}

  // The indices of the first k elements of the row (n elements `stride` apart), in order.
  const int32_t* Order(const T* row, int64_t stride, int64_t k) {
    K* keys = keys_.data();
    int32_t* order = order_.data();
    const bool desc = descending_;
    if (stride == 1 && n_ > kInsertionMax && k <= kSelectMax && k * 8 < n_) return Select(row, k);
    if (stride == 1) {
      for (int64_t j = 0; j < n_; ++j) keys[j] = OrderKey(row[j], desc);
    } else {
      for (int64_t j = 0; j < n_; ++j) keys[j] = OrderKey(row[j * stride], desc);
    }
    std::iota(order, order + n_, int32_t{0});
    return n_ <= kInsertionMax ? InsertionSort(keys, order) : RadixSort(keys, order);
  }

 private:
  const int32_t* InsertionSort(K* keys, int32_t* order) const {
    for (int64_t i = 1; i < n_; ++i) {
      const K key = keys[i];
      const int32_t index = order[i];
      int64_t j = i;
      for (; j > 0 && keys[j - 1] > key; --j) {  // strictly greater: stable
        keys[j] = keys[j - 1];
        order[j] = order[j - 1];
      }
      keys[j] = key;
      order[j] = index;
    }
    return order;
  }

  const int32_t* RadixSort(K* keys, int32_t* order) {
    K* keys_out = keys + n_;
    int32_t* order_out = order + n_;
    int64_t counts[kBytes][256] = {};
    for (int64_t j = 0; j < n_; ++j) {
      for (int b = 0; b < kBytes; ++b) ++counts[b][(keys[j] >> (8 * b)) & 0xFF];
    }
    for (int b = 0; b < kBytes; ++b) {
      const int shift = 8 * b;
      if (counts[b][(keys[0] >> shift) & 0xFF] == n_) continue;  // one value of this byte: order unchanged
      int64_t offsets[256];
      int64_t sum = 0;
      for (int d = 0; d < 256; ++d) {
        offsets[d] = sum;
        sum += counts[b][d];
      }
      for (int64_t j = 0; j < n_; ++j) {
        const int64_t at = offsets[(keys[j] >> shift) & 0xFF]++;
        keys_out[at] = keys[j];
        order_out[at] = order[j];
      }
      std::swap(keys, keys_out);
      std::swap(order, order_out);
    }
    return order;
  }

  // The k smallest keys' indices, in order: a scan keeping the best k so far, sorted. An element enters
  // only when strictly smaller than the k-th (ties keep the earlier index), which for most rows is a
  // few times k ln(n / k) elements, each compared once.
  // A contiguous row (TopK's last dim).
  const int32_t* Select(const T* row, int64_t k) {
    K* best = keys_.data();
    int32_t* best_order = order_.data();
    K* block = keys_.data() + n_;  // the keys of kBlock elements at a time (a vectorised loop)
    int64_t count = 0;
    for (int64_t start = 0; start < n_; start += kBlock) {
      const int64_t m = std::min(kBlock, n_ - start);
      const bool desc = descending_;
      for (int64_t j = 0; j < m; ++j) block[j] = OrderKey(row[start + j], desc);
      for (int64_t j = 0; j < m; ++j) {
        const K key = block[j];
        if (count == k && !(key < best[k - 1])) continue;
        int64_t at = count < k ? count++ : k - 1;
        for (; at > 0 && best[at - 1] > key; --at) {
          best[at] = best[at - 1];
          best_order[at] = best_order[at - 1];
        }
        best[at] = key;
        best_order[at] = static_cast<int32_t>(start + j);
      }
    }
    return best_order;
  }

  int64_t n_;
  bool descending_;
  std::vector<K> keys_;  // two halves: a radix pass reads one and writes the other
  std::vector<int32_t> order_;
};

template <typename T>
class SortCpuKernel : public CpuKernel {
 public:
  void Init(const KernelContext& ctx) override {
    const std::string& op = ctx.op_name();
    const auto& x = ctx.input(0).shape;
    const int64_t nd = static_cast<int64_t>(x.size());
    topk_ = op == "TopK";
    int64_t axis = topk_ ? nd - 1 : ctx.GetInt("axis");
    OPF_CHECK(nd >= 1, "For '" << op << "', the input must have at least 1 dim.");
    OPF_CHECK(axis >= -nd && axis < nd, "For '" << op << "', the 'axis' must be in [" << -nd << ", " << nd
                                                << "), but got " << axis << ".");
    if (axis < 0) axis += nd;
    descending_ = topk_ || ctx.GetBool("descending");
    n_ = x[axis];
    outer_ = 1;
    inner_ = 1;
    for (int64_t d = 0; d < axis; ++d) outer_ *= x[d];
    for (int64_t d = axis + 1; d < nd; ++d) inner_ *= x[d];
    k_ = topk_ ? ctx.GetInt("k") : n_;
    OPF_CHECK(k_ >= 0 && k_ <= n_, "For '" << op << "', the 'k' must be in [0, " << n_ << "], but got " << k_ << ".");
    OPF_CHECK(n_ <= INT32_MAX, "For '" << op << "', the sorted dim must fit int32 indices.");
    std::vector<int64_t> want = x;
    want[axis] = k_;
    OPF_CHECK(ctx.output(0).shape == want && ctx.output(1).shape == want,
              "For '" << op << "', the outputs must have shape " << ShapeToString(want) << ".");
  }

  void Launch(const KernelArgs& args) override {
    const T* x = args.input<T>(0);
    T* values = args.output<T>(0);
    int32_t* indices = args.output<int32_t>(1);
    const int64_t rows = outer_ * inner_, n = n_, k = k_, inner = inner_;
    if (rows == 0 || k == 0) return;
    const int64_t grain = std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, n));
    ParallelFor(rows, grain, [&](int64_t begin, int64_t end) {
      RowSorter<T> sorter(n, descending_);
      for (int64_t r = begin; r < end; ++r) {
        const int64_t o = r / inner, c = r % inner;
        const T* row = x + o * n * inner + c;
        const int32_t* order = sorter.Order(row, inner, k);
        const int64_t base = o * k * inner + c;
        for (int64_t j = 0; j < k; ++j) {
          values[base + j * inner] = row[order[j] * inner];
          indices[base + j * inner] = order[j];
        }
      }
    });
  }

 private:
  bool topk_ = false, descending_ = false;
  int64_t n_ = 0, outer_ = 0, inner_ = 0, k_ = 0;
};

#define REG_SORT(T, ID)                                                                                  \
  MS_REG_CPU_KERNEL(Sort, KernelAttr().AddInputAttr(ID).AddOutputAttr(ID).AddOutputAttr(kNumberTypeInt32), \
                    SortCpuKernel<T>);                                                                   \
  MS_REG_CPU_KERNEL(TopK, KernelAttr().AddInputAttr(ID).AddOutputAttr(ID).AddOutputAttr(kNumberTypeInt32), \
                    SortCpuKernel<T>)

REG_SORT(float16, kNumberTypeFloat16);
REG_SORT(bfloat16, kNumberTypeBFloat16);
REG_SORT(float, kNumberTypeFloat32);
REG_SORT(double, kNumberTypeFloat64);
REG_SORT(int8_t, kNumberTypeInt8);
REG_SORT(int16_t, kNumberTypeInt16);
REG_SORT(int32_t, kNumberTypeInt32);
REG_SORT(int64_t, kNumberTypeInt64);
REG_SORT(uint8_t, kNumberTypeUInt8);

}  // namespace
}  // namespace opforge
