// Data-movement operators: Slice, StridedSlice, ReverseV2, Tile (a StridedIndex per output element),
// Pad, SliceGrad and StridedSliceGrad (the same, scattered into zeros),
// Concat and Stack (rows of each input copied into the output's rows), Split and Unstack (the
// reverse), Select. Elements move as raw bytes of their size, so every dtype of one size shares a
// kernel. The index math is functors/array_index.h, shared with csrc/kernels/cuda/array.cu; the
// plans (which dims, strides and offsets) are built here and, for the GPU, in
// opforge/kernels/gpu/array.py.
#include <algorithm>
#include <cstring>
#include <vector>

#include "opforge/functors/array_index.h"
#include "opforge/kernel.h"
#include "opforge/parallel.h"

namespace opforge {
namespace {

struct alignas(8) Bytes16 {
  uint64_t lo, hi;
};

std::vector<int64_t> RowMajorStrides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> strides(shape.size());
  int64_t acc = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    strides[d] = acc;
    acc *= shape[d];
  }
  return strides;
}

// The dims of a strided walk before merging: size, mod (== size: no wrap), stride.
struct Walk {
  std::vector<int64_t> size, mod, stride;
  int64_t base = 0;

  void Add(int64_t s, int64_t m, int64_t st) {
    size.push_back(s);
    mod.push_back(m);
    stride.push_back(st);
  }

  // Size-1 dims dropped, neighbours merged where the walk continues; at most kMaxIndexDims left.
  StridedIndex Finish(const std::string& op) const {
    std::vector<int64_t> sz, md, st;
    for (size_t d = 0; d < size.size(); ++d) {
      if (size[d] == 1) continue;
      const bool wraps = mod[d] != size[d];
      if (!sz.empty() && !wraps && md.back() == sz.back() && st.back() == stride[d] * size[d]) {
        sz.back() *= size[d];
        md.back() = sz.back();
        st.back() = stride[d];
        continue;
      }
      sz.push_back(size[d]);
      md.push_back(mod[d]);
      st.push_back(stride[d]);
    }
    OPF_CHECK(sz.size() <= static_cast<size_t>(kMaxIndexDims),
              "For '" << op << "', the kernel walks at most " << kMaxIndexDims << " dims after merging, but needs "
                      << sz.size() << ".");
    StridedIndex index{};
    index.ndim = static_cast<int64_t>(sz.size());
    index.base = base;
    for (size_t d = 0; d < sz.size(); ++d) {
      index.size[d] = sz[d];
      index.mod[d] = md[d];
      index.stride[d] = st[d];
    }
    return index;
  }
};

int64_t NormAxis(const std::string& op, const char* name, int64_t axis, int64_t ndim) {
  OPF_CHECK(axis >= -ndim && axis < ndim, "For '" << op << "', the '" << name << "' must be in [" << -ndim << ", "
                                                  << ndim << "), but got " << axis << ".");
  return axis < 0 ? axis + ndim : axis;
}

// Slice(x, begin, size): dim d walks begin[d], begin[d] + 1, ... for size[d] (-1: to the end).
Walk SliceWalk(const KernelContext& ctx, const std::vector<int64_t>& in) {
  const std::string& op = ctx.op_name();
  const std::vector<int64_t> begin = ctx.GetInts("begin"), size = ctx.GetInts("size");
  OPF_CHECK(begin.size() == in.size() && size.size() == in.size(),
            "For '" << op << "', the 'begin' and 'size' must have one entry per dim of 'x' " << ShapeToString(in)
                    << ", but got " << ShapeToString(begin) << " and " << ShapeToString(size) << ".");
  const std::vector<int64_t> strides = RowMajorStrides(in);
  Walk w;
  for (size_t d = 0; d < in.size(); ++d) {
    const int64_t len = size[d] == -1 ? in[d] - begin[d] : size[d];
    OPF_CHECK(begin[d] >= 0 && len >= 0 && begin[d] + len <= in[d],
              "For '" << op << "', the slice begin " << ShapeToString(begin) << " size " << ShapeToString(size)
                      << " must lie within 'x' " << ShapeToString(in) << ".");
    w.base += begin[d] * strides[d];
    w.Add(len, len, strides[d]);
  }
  return w;
}

// Pad(paddings): x is the block of the output that starts at each dim's 'before' padding (the output's
// other elements are zeros), so Pad is SliceGrad's scatter with begin = the 'before' paddings.
Walk PadWalk(const KernelContext& ctx, const std::vector<int64_t>& x, const std::vector<int64_t>& out) {
  const std::string& op = ctx.op_name();
  const std::vector<int64_t> paddings = ctx.GetInts("paddings");  // flattened (before, after) pairs
  OPF_CHECK(paddings.size() == 2 * x.size() && out.size() == x.size(),
            "For '" << op << "', the 'paddings' must hold one (before, after) pair per dim of 'x' "
                    << ShapeToString(x) << ", but got " << paddings.size() << " numbers.");
  const std::vector<int64_t> strides = RowMajorStrides(out);
  Walk w;
  for (size_t d = 0; d < x.size(); ++d) {
    const int64_t before = paddings[2 * d], after = paddings[2 * d + 1];
    OPF_CHECK(before >= 0 && after >= 0 && out[d] == x[d] + before + after,
              "For '" << op << "', the output " << ShapeToString(out) << " must be 'x' " << ShapeToString(x)
                      << " padded by non-negative 'paddings'.");
    w.base += before * strides[d];
    w.Add(x[d], x[d], strides[d]);
  }
  return w;
}

// StridedSlice: TensorFlow's and MindSpore's masks, resolved to (start, step, length) per dim of x.
Walk StridedSliceWalk(const KernelContext& ctx, const std::vector<int64_t>& in) {
  const std::string& op = ctx.op_name();
  const std::vector<int64_t> begin = ctx.GetInts("begin"), end = ctx.GetInts("end"), steps = ctx.GetInts("strides");
  const int64_t begin_mask = ctx.GetInt("begin_mask"), end_mask = ctx.GetInt("end_mask");
  const int64_t ellipsis_mask = ctx.GetInt("ellipsis_mask"), new_axis_mask = ctx.GetInt("new_axis_mask");
  const int64_t shrink_mask = ctx.GetInt("shrink_axis_mask");
  const int64_t n = static_cast<int64_t>(begin.size()), nd = static_cast<int64_t>(in.size());
  OPF_CHECK(static_cast<int64_t>(end.size()) == n && static_cast<int64_t>(steps.size()) == n,
            "For '" << op << "', the 'begin', 'end' and 'strides' must have one length.");
  int64_t specified = 0;  // spec entries that consume a dim of x
  for (int64_t i = 0; i < n; ++i)
    if (!((new_axis_mask >> i) & 1) && !((ellipsis_mask >> i) & 1)) ++specified;
  const std::vector<int64_t> strides = RowMajorStrides(in);
  Walk w;
  int64_t dim = 0;
  auto full = [&](int64_t d) { w.Add(in[d], in[d], strides[d]); };
  for (int64_t i = 0; i < n; ++i) {
    if ((ellipsis_mask >> i) & 1) {
      const int64_t count = nd - specified;  // the dims the ellipsis stands for
      for (int64_t k = 0; k < count; ++k) full(dim++);
      continue;
    }
    if ((new_axis_mask >> i) & 1) continue;  // a dim of size 1: nothing to walk
    OPF_CHECK(dim < nd, "For '" << op << "', the slice has more entries than 'x' " << ShapeToString(in)
                                << " has dims.");
    const int64_t size = in[dim], step = steps[i];
    OPF_CHECK(step != 0, "For '" << op << "', the 'strides' must not hold 0.");
    if ((shrink_mask >> i) & 1) {
      int64_t b = begin[i] < 0 ? begin[i] + size : begin[i];
      OPF_CHECK(b >= 0 && b < size, "For '" << op << "', the index " << begin[i] << " is out of range for dim "
                                            << dim << " of size " << size << ".");
      w.base += b * strides[dim];
      w.Add(1, 1, strides[dim]);
      ++dim;
      continue;
    }
    int64_t b, e;
    if (step > 0) {
      b = (begin_mask >> i) & 1 ? 0 : begin[i];
      e = (end_mask >> i) & 1 ? size : end[i];
      if (!((begin_mask >> i) & 1)) b = std::min(std::max(b < 0 ? b + size : b, int64_t{0}), size);
      if (!((end_mask >> i) & 1)) e = std::min(std::max(e < 0 ? e + size : e, int64_t{0}), size);
    } else {
      b = (begin_mask >> i) & 1 ? size - 1 : begin[i];
      e = (end_mask >> i) & 1 ? -1 : end[i];
      if (!((begin_mask >> i) & 1)) b = std::min(std::max(b < 0 ? b + size : b, int64_t{-1}), size - 1);
      if (!((end_mask >> i) & 1)) e = std::min(std::max(e < 0 ? e + size : e, int64_t{-1}), size - 1);
    }
    const int64_t span = step > 0 ? e - b : b - e, astep = step > 0 ? step : -step;
    const int64_t len = span <= 0 ? 0 : (span + astep - 1) / astep;
    if (len > 0) w.base += b * strides[dim];
    // one element or none: its step is never taken (and a huge one, INT64_MAX, would overflow the product)
    w.Add(len, len, len > 1 ? step * strides[dim] : 0);
    ++dim;
  }
  while (dim < nd) full(dim++);
  return w;
}

// ReverseV2(axis): the dims in 'axis' walk backwards from their last element.
Walk ReverseWalk(const KernelContext& ctx, const std::vector<int64_t>& in) {
  const std::string& op = ctx.op_name();
  const int64_t nd = static_cast<int64_t>(in.size());
  std::vector<bool> flip(in.size(), false);
  for (int64_t a : ctx.GetInts("axis")) flip[NormAxis(op, "axis", a, nd)] = true;
  const std::vector<int64_t> strides = RowMajorStrides(in);
  Walk w;
  for (int64_t d = 0; d < nd; ++d) {
    if (flip[d] && in[d] > 0) {
      w.base += (in[d] - 1) * strides[d];
      w.Add(in[d], in[d], -strides[d]);
    } else {
      w.Add(in[d], in[d], strides[d]);
    }
  }
  return w;
}

// Tile(x, multiples): x padded with leading 1s to len(multiples) dims; output dim d wraps modulo x's.
Walk TileWalk(const KernelContext& ctx, const std::vector<int64_t>& in) {
  const std::string& op = ctx.op_name();
  const std::vector<int64_t> multiples = ctx.GetInts("multiples");
  OPF_CHECK(multiples.size() >= in.size(), "For '" << op << "', the 'multiples' " << ShapeToString(multiples)
                                                   << " must have at least as many entries as 'x' "
                                                   << ShapeToString(in) << " has dims.");
  std::vector<int64_t> padded(multiples.size() - in.size(), 1);
  padded.insert(padded.end(), in.begin(), in.end());
  const std::vector<int64_t> strides = RowMajorStrides(padded);
  Walk w;
  for (size_t d = 0; d < padded.size(); ++d) {
    OPF_CHECK(multiples[d] >= 0, "For '" << op << "', the 'multiples' must be >= 0, but got "
                                         << ShapeToString(multiples) << ".");
    const int64_t size = padded[d] * multiples[d];
    w.Add(size, multiples[d] == 1 || size == 0 ? size : padded[d], strides[d]);
  }
  return w;
}

template <typename E>
class StridedCopyCpuKernel : public CpuKernel {
 public:
  void Init(const KernelContext& ctx) override {
    const TensorMeta& x = ctx.input(0);
    const TensorMeta& y = ctx.output(0);
    const std::string& op = ctx.op_name();
    OPF_CHECK(x.dtype == y.dtype, "For '" << op << "', the output must have the input's dtype "
                                          << TypeIdName(x.dtype) << ", but got " << TypeIdName(y.dtype) << ".");
    OPF_CHECK(TypeIdSize(x.dtype) == static_cast<int64_t>(sizeof(E)),
              "For '" << op << "', the kernel moves " << sizeof(E) << "-byte elements, but got "
                      << TypeIdName(x.dtype) << ".");
    Walk w;
    if (op == "Slice") {
      w = SliceWalk(ctx, x.shape);
    } else if (op == "StridedSlice") {
      w = StridedSliceWalk(ctx, x.shape);
    } else if (op == "ReverseV2") {
      w = ReverseWalk(ctx, x.shape);
    } else if (op == "Tile") {
      w = TileWalk(ctx, x.shape);
    } else {
      OPF_CHECK(false, "The strided copy kernel does not run '" << op << "'.");
    }
    int64_t count = 1;
    for (int64_t s : w.size) count *= s;
    n_ = y.numel();
    OPF_CHECK(count == n_, "For '" << op << "', the output " << ShapeToString(y.shape) << " must have " << count
                                   << " elements, but has " << n_ << ".");
    index_ = w.Finish(op);
  }

  // Row by row of the innermost (merged) dim: its offset computed once per row, then a contiguous copy or a
  // strided loop (Offset's divisions per element made a Slice of 128K floats take 1 ms).
  void Launch(const KernelArgs& args) override {
    const E* x = args.input<E>(0);
    E* y = args.output<E>(0);
    const StridedIndex index = index_;
    const int64_t last = index.ndim - 1;
    const int64_t len = last >= 0 ? index.size[last] : 1;
    if (n_ == 0 || len == 0) return;
    const int64_t mod = last >= 0 ? index.mod[last] : 1, stride = last >= 0 ? index.stride[last] : 0;
    ParallelFor(n_ / len, std::max<int64_t>(1, kParallelGrain / len), [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        const E* src = x + index.Offset(r * len);
        E* dst = y + r * len;
        if (stride == 1 && mod == len) {
          std::memcpy(static_cast<void*>(dst), static_cast<const void*>(src), sizeof(E) * static_cast<size_t>(len));
        } else if (mod == len) {
          for (int64_t j = 0; j < len; ++j) dst[j] = src[j * stride];
        } else {
          for (int64_t j = 0; j < len; ++j) dst[j] = src[(j % mod) * stride];
        }
      }
    });
  }

 private:
  StridedIndex index_{};
  int64_t n_ = 0;
};

// SliceGrad(dy, x, begin, size) and StridedSliceGrad(dy, shapex, begin, end, strides): zeros of x's
// shape with dy written where the slice read from (the slice's StridedIndex, which never wraps, so
// no two elements of dy land on one place).
template <typename E>
class StridedScatterCpuKernel : public CpuKernel {
 public:
  void Init(const KernelContext& ctx) override {
    const TensorMeta& dy = ctx.input(0);
    const TensorMeta& dx = ctx.output(0);
    const std::string& op = ctx.op_name();
    OPF_CHECK(dy.dtype == dx.dtype && TypeIdSize(dy.dtype) == static_cast<int64_t>(sizeof(E)),
              "For '" << op << "', the output must have the dtype of 'dy' " << TypeIdName(dy.dtype) << ", but got "
                      << TypeIdName(dx.dtype) << ".");
    Walk w;
    if (op == "SliceGrad") {
      OPF_CHECK(ctx.input(1).shape == dx.shape, "For '" << op << "', the output must have the shape of 'x' "
                                                        << ShapeToString(ctx.input(1).shape) << ".");
      w = SliceWalk(ctx, dx.shape);
    } else if (op == "StridedSliceGrad") {
      OPF_CHECK(ctx.GetInts("shapex") == dx.shape, "For '" << op << "', the output must have the shape 'shapex'.");
      w = StridedSliceWalk(ctx, dx.shape);
    } else if (op == "Pad") {
      w = PadWalk(ctx, dy.shape, dx.shape);
    } else {
      OPF_CHECK(false, "The strided scatter kernel does not run '" << op << "'.");
    }
    int64_t count = 1;
    for (int64_t s : w.size) count *= s;
    n_ = dy.numel();
    OPF_CHECK(count == n_, "For '" << op << "', the 'dy' " << ShapeToString(dy.shape) << " must have " << count
                                   << " elements (the slice's), but has " << n_ << ".");
    out_n_ = dx.numel();
    index_ = w.Finish(op);
  }

  void Launch(const KernelArgs& args) override {
    const E* dy = args.input<E>(0);
    E* dx = args.output<E>(0);
    if (out_n_ > 0) std::memset(static_cast<void*>(dx), 0, static_cast<size_t>(out_n_) * sizeof(E));
    const StridedIndex index = index_;
    const int64_t last = index.ndim - 1;
    const int64_t len = last >= 0 ? index.size[last] : 1;
    if (n_ == 0 || len == 0) return;
    const int64_t stride = last >= 0 ? index.stride[last] : 0;
    // Row by row of the innermost dim, as the strided copy (a slice's walk never wraps).
    ParallelFor(n_ / len, std::max<int64_t>(1, kParallelGrain / len), [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        E* dst = dx + index.Offset(r * len);
        const E* src = dy + r * len;
        if (stride == 1) {
          std::memcpy(static_cast<void*>(dst), static_cast<const void*>(src), sizeof(E) * static_cast<size_t>(len));
        } else {
          for (int64_t j = 0; j < len; ++j) dst[j * stride] = src[j];
        }
      }
    });
  }

 private:
  StridedIndex index_{};
  int64_t n_ = 0, out_n_ = 0;
};

// Concat, Stack (gather = false: inputs are the parts) and Split, Unstack (outputs are the parts):
// every part viewed as [outer, cols_i], the whole as [outer, sum cols_i].
template <typename E>
class RowsCpuKernel : public CpuKernel {
 public:
  void Init(const KernelContext& ctx) override {
    const std::string& op = ctx.op_name();
    split_ = op == "Split" || op == "Unstack";
    const size_t n_parts = split_ ? ctx.num_outputs() : ctx.num_inputs();
    const TensorMeta& whole = split_ ? ctx.input(0) : ctx.output(0);
    const TensorMeta& first = split_ ? ctx.output(0) : ctx.input(0);
    const bool stacked = op == "Stack" || op == "Unstack";
    const int64_t part_ndim = first.ndim();
    const int64_t axis = NormAxis(op, "axis", ctx.GetInt("axis"), stacked ? part_ndim + 1 : part_ndim);
    outer_ = 1;
    for (int64_t d = 0; d < axis; ++d) outer_ *= first.shape[d];
    total_cols_ = 0;
    cols_.clear();
    for (size_t i = 0; i < n_parts; ++i) {
      const TensorMeta& part = split_ ? ctx.output(i) : ctx.input(i);
      OPF_CHECK(part.dtype == whole.dtype && TypeIdSize(part.dtype) == static_cast<int64_t>(sizeof(E)),
                "For '" << op << "', every part must have dtype " << TypeIdName(whole.dtype) << ", but part " << i
                        << " is " << TypeIdName(part.dtype) << ".");
      int64_t lead = 1;
      for (int64_t d = 0; d < axis && d < part.ndim(); ++d) lead *= part.shape[d];
      OPF_CHECK(part.ndim() == part_ndim && lead == outer_, "For '" << op << "', part " << i << " of shape "
                                                                    << ShapeToString(part.shape)
                                                                    << " does not match the others.");
      const int64_t cols = outer_ == 0 ? 0 : part.numel() / outer_;
      cols_.push_back(cols);
      total_cols_ += cols;
    }
    OPF_CHECK(outer_ * total_cols_ == whole.numel(), "For '" << op << "', the parts do not add up to "
                                                             << ShapeToString(whole.shape) << ".");
  }

  void Launch(const KernelArgs& args) override {
    if (outer_ == 0 || total_cols_ == 0) return;
    const size_t n_parts = cols_.size();
    char* whole = split_ ? const_cast<char*>(args.input<char>(0)) : args.output<char>(0);
    const int64_t grain = std::max<int64_t>(1, kParallelGrain / total_cols_);
    ParallelFor(outer_, grain, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        int64_t col0 = 0;
        for (size_t p = 0; p < n_parts; ++p) {
          const int64_t cols = cols_[p];
          if (cols > 0) {
            E* w = reinterpret_cast<E*>(whole) + ConcatOffset(r * cols, cols, total_cols_, col0);
            const size_t bytes = static_cast<size_t>(cols) * sizeof(E);
            if (split_) {
              std::memcpy(args.output<E>(static_cast<int32_t>(p)) + r * cols, w, bytes);
            } else {
              std::memcpy(w, args.input<E>(static_cast<int32_t>(p)) + r * cols, bytes);
            }
          }
          col0 += cols;
        }
      }
    });
  }

 private:
  bool split_ = false;
  int64_t outer_ = 0, total_cols_ = 0;
  std::vector<int64_t> cols_;
};

// Select(cond, x, y): out = cond ? x : y, one shape.
template <typename E>
class SelectCpuKernel : public CpuKernel {
 public:
  void Init(const KernelContext& ctx) override {
    const std::string& op = ctx.op_name();
    const TensorMeta& out = ctx.output(0);
    for (size_t i = 0; i < 3; ++i) {
      OPF_CHECK(ctx.input(i).shape == out.shape, "For '" << op << "', the inputs must have the output's shape "
                                                         << ShapeToString(out.shape) << ", but input " << i
                                                         << " is " << ShapeToString(ctx.input(i).shape) << ".");
    }
    OPF_CHECK(ctx.input(0).dtype == kNumberTypeBool, "For '" << op << "', the 'cond' must be bool.");
    n_ = out.numel();
  }

  void Launch(const KernelArgs& args) override {
    const uint8_t* cond = args.input<uint8_t>(0);
    const E* x = args.input<E>(1);
    const E* y = args.input<E>(2);
    E* out = args.output<E>(0);
    ParallelFor(n_, kParallelGrain, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) out[i] = cond[i] ? x[i] : y[i];
    });
  }

 private:
  int64_t n_ = 0;
};

#define REG_ONE(OP, ID, E) MS_REG_CPU_KERNEL(OP, KernelAttr().AddInputAttr(ID).AddOutputAttr(ID), StridedCopyCpuKernel<E>)
#define REG_ROWS(OP, ID, E) \
  MS_REG_CPU_KERNEL(OP, KernelAttr().AddAllSameAttr(true).AddInputAttr(ID).AddOutputAttr(ID), RowsCpuKernel<E>)
#define REG_SELECT(ID, E)                                                                                      \
  MS_REG_CPU_KERNEL(                                                                                           \
      Select,                                                                                                  \
      KernelAttr().AddInputAttr(kNumberTypeBool).AddInputAttr(ID).AddInputAttr(ID).AddOutputAttr(ID), \
      SelectCpuKernel<E>)
#define REG_SCATTER(OP, ID, E) \
  MS_REG_CPU_KERNEL(OP, KernelAttr().AddInputAttr(ID).AddOutputAttr(ID), StridedScatterCpuKernel<E>)
#define REG_SLICE_GRAD(ID, E) \
  MS_REG_CPU_KERNEL(SliceGrad, KernelAttr().AddInputAttr(ID).AddInputAttr(ID).AddOutputAttr(ID), \
                    StridedScatterCpuKernel<E>)
#define REG_ARRAY_ALL(ID, E) \
  REG_SCATTER(StridedSliceGrad, ID, E); \
  REG_SCATTER(Pad, ID, E); \
  REG_SLICE_GRAD(ID, E); \
  REG_ONE(Slice, ID, E);     \
  REG_ONE(StridedSlice, ID, E); \
  REG_ONE(ReverseV2, ID, E); \
  REG_ONE(Tile, ID, E);      \
  REG_ROWS(Concat, ID, E);   \
  REG_ROWS(Stack, ID, E);    \
  REG_ROWS(Split, ID, E);    \
  REG_ROWS(Unstack, ID, E);  \
  REG_SELECT(ID, E)

REG_ARRAY_ALL(kNumberTypeBool, uint8_t);
REG_ARRAY_ALL(kNumberTypeInt8, uint8_t);
REG_ARRAY_ALL(kNumberTypeInt16, uint16_t);
REG_ARRAY_ALL(kNumberTypeInt32, uint32_t);
REG_ARRAY_ALL(kNumberTypeInt64, uint64_t);
REG_ARRAY_ALL(kNumberTypeUInt8, uint8_t);
REG_ARRAY_ALL(kNumberTypeUInt16, uint16_t);
REG_ARRAY_ALL(kNumberTypeUInt32, uint32_t);
REG_ARRAY_ALL(kNumberTypeUInt64, uint64_t);
REG_ARRAY_ALL(kNumberTypeFloat16, uint16_t);
REG_ARRAY_ALL(kNumberTypeBFloat16, uint16_t);
REG_ARRAY_ALL(kNumberTypeFloat32, uint32_t);
REG_ARRAY_ALL(kNumberTypeFloat64, uint64_t);
REG_ARRAY_ALL(kNumberTypeComplex64, uint64_t);
REG_ARRAY_ALL(kNumberTypeComplex128, Bytes16);

}  // namespace
}  // namespace opforge
