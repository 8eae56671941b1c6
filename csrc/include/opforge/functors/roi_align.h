// ROIAlign's math, shared by the CPU kernels (csrc/kernels/cpu/roi_align.cc) and the CUDA kernels
// (csrc/kernels/cuda/roi_align.cu), as MindSpore's kernels define it. A RoI is (image index, x0, y0, x1, y1);
// scaled by `scale` it is cut into pooled_h x pooled_w bins, each the mean of grid_h x grid_w bilinear samples
// at the centres of a regular grid inside it. ROIAlignGrad spreads each output's gradient back over the same
// samples' corners with the same weights, so the two stay each other's adjoint.
#pragma once

#include "opforge/half.h"
#include "opforge/limits.h"
#include "opforge/math.h"
#include "opforge/portable.h"

namespace opforge {

constexpr int kRoiColumns = 5;  // (image index, x0, y0, x1, y1)
// The most samples one bin may take (sample_num at most 1024; an adaptive grid, sample_num 0, of a RoI larger
// than that is refused): a bigger grid is a hang, not a use.
constexpr int64_t kMaxRoiBinSamples = int64_t{1} << 20;

// The attrs of ROIAlign and ROIAlignGrad, passed to a CUDA kernel by value.
struct RoiAlignAttrs {
  int64_t pooled_h, pooled_w, sample_num, end_mode;
  double scale;
};

// One RoI in feature-map coordinates.
template <typename C>
struct RoiGeometry {
  int64_t image;  // the image it reads, -1 when column 0 does not round to one of [0, images)
  C start_h, start_w, bin_h, bin_w;
  int64_t grid_h, grid_w;  // samples per bin along each dim
  bool skip;               // x0 and x1 both within 0.001 of 0: MindSpore's kernels leave it out (zeros)
};

// One sample's bilinear corners along a dim: `low` and `high` (equal at the last pixel) and the weight
// `frac` of `high`; `inside` false for a sample below -1 or beyond the map, which adds nothing.
template <typename C>
struct RoiAxis {
  int64_t low, high;
  C frac;
  bool inside;
};

namespace roi_align {

// Column 0 rounded (+7e-5, as MindSpore's kernels) to an image in [0, images), else -1 (NaN included).
template <typename C>
OPF_HD int64_t Image(C value, int64_t images) {
  const C rounded = math::rint(value + C(7e-5));
  return rounded >= C(0) && rounded < C(images) ? static_cast<int64_t>(rounded) : -1;
}

// floor(bin) samples per bin where sample_num is 0: none for a bin under one pixel (or NaN); capped so the
// count stays an int64 and a sample index a float without loss.
template <typename C>
OPF_HD int64_t AdaptiveGrid(C bin) {
  if (!(bin >= C(1))) return 0;
  return bin >= C(1 << 24) ? int64_t{1} << 24 : static_cast<int64_t>(math::floor(bin));
}

// Sample k of bin `index` along a dim.
template <typename C>
OPF_HD C Sample(C start, C bin, int64_t grid, int64_t index, int64_t k) {
  return start + C(index) * bin + (C(k) + C(0.5)) * bin / C(grid);
}

}  // namespace roi_align

template <typename T>
OPF_HD RoiGeometry<compute_t<T>> RoiAlignGeometry(const T* roi, const RoiAlignAttrs& a, int64_t images) {
  using C = compute_t<T>;
  RoiGeometry<C> g;
  const C x0 = Load(roi[1]), y0 = Load(roi[2]), x1 = Load(roi[3]), y1 = Load(roi[4]);
  const C scale = static_cast<C>(a.scale), end = static_cast<C>(a.end_mode);
  g.image = roi_align::Image(Load(roi[0]), images);
  g.skip = x0 > C(-0.001) && x0 < C(0.001) && x1 > C(-0.001) && x1 < C(0.001);
  g.start_w = x0 * scale;
  g.start_h = y0 * scale;
  C roi_w = (x1 + end) * scale - g.start_w;
  C roi_h = (y1 + end) * scale - g.start_h;
  if (a.end_mode == 0) {  // MindSpore's older definition: a RoI at least one pixel wide and high
    roi_w = roi_w < C(1) ? C(1) : roi_w;
    roi_h = roi_h < C(1) ? C(1) : roi_h;
  }
  g.bin_h = roi_h / C(a.pooled_h);
  g.bin_w = roi_w / C(a.pooled_w);
  g.grid_h = a.sample_num > 0 ? a.sample_num : roi_align::AdaptiveGrid(g.bin_h);
  g.grid_w = a.sample_num > 0 ? a.sample_num : roi_align::AdaptiveGrid(g.bin_w);
  return g;
}

// A sample at `coord` of a dim of `size` pixels: below 0 it reads pixel 0; from size - 1 on, that pixel alone.
template <typename C>
OPF_HD RoiAxis<C> RoiAlignAxis(C coord, int64_t size) {
  RoiAxis<C> axis{0, 0, C(0), false};
  if (!(coord >= C(-1) && coord <= C(size))) return axis;
  axis.inside = true;
  coord = coord < C(0) ? C(0) : coord;
  axis.low = static_cast<int64_t>(math::floor(coord));
  if (axis.low >= size - 1) {
    axis.low = axis.high = size - 1;
  } else {
    axis.high = axis.low + 1;
    axis.frac = coord - C(axis.low);
  }
  return axis;
}

// visit(y, x) for each sample of bin (i, j) inside an h x w map.
template <typename C, typename F>
OPF_HD void ForEachRoiSample(const RoiGeometry<C>& g, int64_t h, int64_t w, int64_t i, int64_t j, F&& visit) {
  for (int64_t a = 0; a < g.grid_h; ++a) {
    const RoiAxis<C> y = RoiAlignAxis(roi_align::Sample(g.start_h, g.bin_h, g.grid_h, i, a), h);
    if (!y.inside) continue;
    for (int64_t b = 0; b < g.grid_w; ++b) {
      const RoiAxis<C> x = RoiAlignAxis(roi_align::Sample(g.start_w, g.bin_w, g.grid_w, j, b), w);
      if (x.inside) visit(y, x);
    }
  }
}

// Whether a RoI is one the kernels take: its image in range, and bins of at most kMaxRoiBinSamples samples
// (a RoI they leave out anyway excepted). Any other is the caller's error.
template <typename C>
OPF_HD bool RoiAlignValid(const RoiGeometry<C>& g) {
  return g.image >= 0 && (g.skip || g.grid_h * g.grid_w <= kMaxRoiBinSamples);
}

// 1 / the samples of a bin (NaN for none: sample_num 0 and a bin under one pixel, as MindSpore's 0 / 0).
template <typename C>
OPF_HD C RoiAlignInverseCount(const RoiGeometry<C>& g) {
  const int64_t count = g.grid_h * g.grid_w;
  return count > 0 ? C(1) / C(count) : limits::QuietNaN<C>();
}

// Output (i, j) of a RoI over `plane`, one [h, w] channel of its image.
template <typename T>
OPF_HD compute_t<T> RoiAlignBin(const T* plane, int64_t h, int64_t w, const RoiGeometry<compute_t<T>>& g, int64_t i,
                                int64_t j) {
  using C = compute_t<T>;
  C acc = C(0);
  ForEachRoiSample(g, h, w, i, j, [&](const RoiAxis<C>& y, const RoiAxis<C>& x) {
    const T* top = plane + y.low * w;
    const T* bottom = plane + y.high * w;
    const C hy = C(1) - y.frac, hx = C(1) - x.frac;
    acc += hy * hx * Load(top[x.low]) + hy * x.frac * Load(top[x.high]) + y.frac * hx * Load(bottom[x.low]) +
           y.frac * x.frac * Load(bottom[x.high]);
  });
  return acc * RoiAlignInverseCount(g);
}

// ROIAlignGrad's share of output (i, j), whose gradient is `d` already divided by the count: add(offset,
// value) for each corner of each sample, offsets within the [h, w] plane.
template <typename C, typename Add>
OPF_HD void RoiAlignBinGrad(int64_t h, int64_t w, const RoiGeometry<C>& g, int64_t i, int64_t j, C d, Add&& add) {
  ForEachRoiSample(g, h, w, i, j, [&](const RoiAxis<C>& y, const RoiAxis<C>& x) {
    const C hy = C(1) - y.frac, hx = C(1) - x.frac;
    add(y.low * w + x.low, d * hy * hx);
    add(y.low * w + x.high, d * hy * x.frac);
    add(y.high * w + x.low, d * y.frac * hx);
    add(y.high * w + x.high, d * y.frac * x.frac);
  });
}

}  // namespace opforge
