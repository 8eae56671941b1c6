// MaxPool, AvgPool (NCHW) and their gradients MaxPoolGrad, AvgPoolGrad (x, out, dout) -> dx, and
// AdaptiveAvgPool2D with AdaptiveAvgPool2DGrad (dout) -> dx, with the
// window math of opforge/functors/conv.h; the (sample, channel) planes run in parallel. MaxPool and
// MaxPoolGrad with 2x2 windows at stride 2 and no padding go straight over the rows (IsPool2x2), in AVX-512
// blocks where the CPU has it.
#include <algorithm>
#include <cstring>
#include <type_traits>
#include <vector>

#include "kernels/cpu/conv_geometry.h"
#include "kernels/cpu/elementwise.h"
#include "opforge/parallel.h"

namespace opforge {
namespace {

// The output columns [first, last) of a row whose windows lie inside the input's columns.
inline void InteriorColumns(const Window2D& g, int64_t* first, int64_t* last) {
  const int64_t lo = (g.pl + g.sw - 1) / g.sw;
  const int64_t span = g.w - g.kw + g.pl;
  const int64_t hi = span < 0 ? 0 : span / g.sw + 1;
  *first = std::min(lo, g.ow);
  *last = std::clamp(hi, *first, g.ow);
}

// The input elements one output's window covers at most (its work: a window larger than the input covers
// the input, and kh * kw could overflow).
inline int64_t WindowWork(const Window2D& g) { return std::min(g.kh, g.h) * std::min(g.kw, g.w); }

// Max pooling of output row i of one plane: idx[j] where the maximum of window (i, j) is (-1: an
// empty window) and m[j] its value, by MaxPoolArgmax's rule (the first maximum; a NaN wins, the first
// NaN stays). The columns whose windows lie inside the input go branch-free, window element by window
// element across the row (the compiler vectorises them); the edges take MaxPoolArgmax.
template <typename T>
void MaxPoolRow(const T* __restrict xp, const Window2D& g, int64_t i, compute_t<T>* __restrict m,
                int64_t* __restrict idx) {
  using C = compute_t<T>;
  int64_t first, last;
  InteriorColumns(g, &first, &last);
  for (int64_t j = 0; j < g.ow; ++j) {
    if (j == first) j = last;
    if (j >= g.ow) break;
    idx[j] = MaxPoolArgmax(xp, g, i, j);
    m[j] = idx[j] >= 0 ? Load(xp[idx[j]]) : -limits::Infinity<C>();
  }
  const int64_t sw = g.sw, w = g.w;  // (locals: the stores below cannot change them)
  bool started = false;
  int64_t p0 = 0, p1 = 0;
  if (first < last) ClippedWindow(i * g.sh - g.pt, g.kh, g.h, &p0, &p1);  // (no interior column: nothing here)
  for (int64_t p = p0; p < p1; ++p) {
    const int64_t y = i * g.sh - g.pt + p;
    for (int64_t q = 0; q < g.kw; ++q) {  // an interior column's window lies inside the row: kw <= w
      const int64_t base = y * w - g.pl + q;  // element (y, j * sw - pl + q) is xp[base + j * sw]
      if (!started) {
        for (int64_t j = first; j < last; ++j) {
          idx[j] = base + j * sw;
          m[j] = Load(xp[base + j * sw]);
        }
        started = true;
        continue;
      }
      for (int64_t j = first; j < last; ++j) {
        const C v = Load(xp[base + j * sw]);
        const C cur = m[j];
        // Selected by masks, not branches: random data makes a branch on the maximum mispredict often.
        const bool take = ((v > cur) | (v != v)) & (cur == cur);  // (x != x: x is NaN)
        m[j] = math::Select(take, v, cur);
        idx[j] ^= (idx[j] ^ (base + j * sw)) & -static_cast<int64_t>(take);
      }
    }
  }
  if (!started) {
    for (int64_t j = first; j < last; ++j) {
      idx[j] = -1;
      m[j] = -limits::Infinity<C>();
    }
  }
}

// 2x2 windows at stride 2 without padding (LeNet's, most CNNs' pooling): each output reads its own four
// inputs. The generic path's per-row set-up (window bounds, scratch rows) cost more than the maxima on
// small planes (a MaxPool of 32x32x8x8 took ~100 us); these loops run straight over the rows.
inline bool IsPool2x2(const Window2D& g) {
  return g.kh == 2 && g.kw == 2 && g.sh == 2 && g.sw == 2 && g.pt == 0 && g.pl == 0 && 2 * g.oh <= g.h &&
         2 * g.ow <= g.w;
}

// MaxPoolArgmax's rule for one step of the scan (v the next window element, cur the maximum so far): take
// v when it is larger or a NaN, unless cur is already a NaN. The scan of (a, b, c, d) equals the pairwise
// (a, b), (c, d) then the two winners (earlier winners keep ties and NaNs), so both give the same maximum
// and the same (first) place.
template <typename C>
inline bool MaxTakes(C v, C cur) {
  return ((v > cur) | (v != v)) & (cur == cur);  // (x != x: x is NaN)
}

// The maxima of the 2x2 windows of `planes` [h, w] planes: output (i, j) of a plane from input rows 2i and
// 2i + 1, columns 2j and 2j + 1.
template <typename T>
OPF_VECTOR_CLONES void MaxPool2x2Rows(const T* __restrict x, T* __restrict y, int64_t planes, int64_t h, int64_t w,
                                      int64_t oh, int64_t ow) {
  using C = compute_t<T>;
  for (int64_t pl = 0; pl < planes; ++pl) {
    for (int64_t i = 0; i < oh; ++i) {
      const T* __restrict top = x + pl * h * w + 2 * i * w;
      const T* __restrict bot = top + w;
      T* __restrict out = y + (pl * oh + i) * ow;
      for (int64_t j = 0; j < ow; ++j) {
        const C a = Load(top[2 * j]), b = Load(top[2 * j + 1]), c = Load(bot[2 * j]), d = Load(bot[2 * j + 1]);
        const C ab = math::Select(MaxTakes(b, a), b, a);
        const C cd = math::Select(MaxTakes(d, c), d, c);
        out[j] = Store<T>(math::Select(MaxTakes(cd, ab), cd, ab));
      }
    }
  }
}

// MaxPoolGrad of the 2x2 windows: dy of each window to its maximum (the forward's place), zeros to the
// other three; the rows and columns no window covers (odd h or w) get zeros.
template <typename T>
OPF_VECTOR_CLONES void MaxPoolGrad2x2Rows(const T* __restrict x, const T* __restrict dy, T* __restrict dx,
                                          int64_t planes, int64_t h, int64_t w, int64_t oh, int64_t ow) {
  using C = compute_t<T>;
  const T zero = Store<T>(C(0));
  for (int64_t pl = 0; pl < planes; ++pl) {
    for (int64_t i = 0; i < oh; ++i) {
      const T* __restrict top = x + pl * h * w + 2 * i * w;
      const T* __restrict bot = top + w;
      T* __restrict dtop = dx + pl * h * w + 2 * i * w;
      T* __restrict dbot = dtop + w;
      const T* __restrict d = dy + (pl * oh + i) * ow;
      for (int64_t j = 0; j < ow; ++j) {
        const C a = Load(top[2 * j]), b = Load(top[2 * j + 1]), c = Load(bot[2 * j]), e = Load(bot[2 * j + 1]);
        const bool take_b = MaxTakes(b, a), take_e = MaxTakes(e, c);
        const C ab = math::Select(take_b, b, a), ce = math::Select(take_e, e, c);
        const bool bottom = MaxTakes(ce, ab);
        const C g = Load(d[j]);
        dtop[2 * j] = Store<T>(math::Select(!bottom & !take_b, g, C(0)));
        dtop[2 * j + 1] = Store<T>(math::Select(!bottom & take_b, g, C(0)));
        dbot[2 * j] = Store<T>(math::Select(bottom & !take_e, g, C(0)));
        dbot[2 * j + 1] = Store<T>(math::Select(bottom & take_e, g, C(0)));
      }
      for (int64_t col = 2 * ow; col < w; ++col) dtop[col] = dbot[col] = zero;
    }
    T* __restrict rest = dx + pl * h * w + 2 * oh * w;
    for (int64_t e = 0; e < (h - 2 * oh) * w; ++e) rest[e] = zero;
  }
}

// The same on float and double in vectors of L = 64 bytes (one AVX-512 register): a block of L outputs
// reads 4 vectors of inputs, either L / ow whole row pairs (L a multiple of ow, the planes tiled exactly:
// LeNet's 4- and 2-wide outputs) or the top and bottom runs of L outputs of one row pair (ow a multiple
// of L); fixed permutations pick each window element's vector out of them and spread the gradient back.
template <typename S>
struct Pool2x2Tables {
  static constexpr int L = 64 / static_cast<int>(sizeof(S));
  using I = std::conditional_t<sizeof(S) == 4, int32_t, int64_t>;
  // With `run` outputs per row pair in a block (ow, or L for long rows): pick[pq][o] is where window
  // element pq (2 p + q) of output o lies in the block's 4 L inputs; input k belongs to output out[k] as its
  // window element pq[k].
  I pick[4][L], out[4 * L], pq[4 * L];

  explicit Pool2x2Tables(int64_t run) {
    for (int k = 0; k < 4 * L; ++k) {
      const int64_t r = k / (4 * run), rem = k % (4 * run), p = rem / (2 * run), col = rem % (2 * run);
      out[k] = static_cast<I>(r * run + col / 2);
      pq[k] = static_cast<I>(2 * p + col % 2);
    }
    for (int e = 0; e < 4; ++e) {
      for (int o = 0; o < L; ++o) {
        pick[e][o] = static_cast<I>((o / run) * 4 * run + (e / 2) * 2 * run + 2 * (o % run) + e % 2);
      }
    }
  }
};

// The block loop below is compiled for AVX-512 (x86-64-v4) alone and runs where the CPU has it: GCC 12
// lowers vector comparisons to scalar code, lane by lane, in target_clones' clones (before it knows
// their target), which made it slower than the scalar loops.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define OPF_POOL_VECTORS 1
#define OPF_POOL_TARGET __attribute__((target("arch=x86-64-v4")))
inline bool PoolVectorsRun() {
  static const bool v4 = __builtin_cpu_supports("x86-64-v4");
  return v4;
}
#else
#define OPF_POOL_VECTORS 0
#define OPF_POOL_TARGET
inline bool PoolVectorsRun() { return false; }
#endif

// Whether the vector path takes this pooling: an AVX-512 CPU, and exact tiling and L a multiple of ow
// (`rows`: blocks of whole row pairs), or ow a multiple of L.
template <typename T>
inline bool Pool2x2Vectorised(const Window2D& g, bool* rows) {
  if constexpr (OPF_POOL_VECTORS && (std::is_same_v<T, float> || std::is_same_v<T, double>)) {
    if (!PoolVectorsRun()) return false;
    constexpr int64_t L = Pool2x2Tables<T>::L;
    *rows = g.h == 2 * g.oh && g.w == 2 * g.ow && L % g.ow == 0;
    return *rows || g.ow % L == 0;
  }
  (void)g;
  *rows = false;
  return false;
}

// MaxPool (dx null) or MaxPoolGrad of `blocks` blocks of L outputs (see above). Everything is written out
// in this one function: a helper compiled for the baseline x86-64 would have its vector operations
// lowered to scalar code.
template <typename S>
OPF_POOL_TARGET void Pool2x2Blocks(const S* x, const S* dy, S* y, S* dx, int64_t blocks, int64_t h, int64_t w,
                                     int64_t oh, int64_t ow, bool rows) {
  using Tab = Pool2x2Tables<S>;
  using I = typename Tab::I;
  constexpr int64_t L = Tab::L;
  typedef S V __attribute__((vector_size(64)));
  typedef I M __attribute__((vector_size(64)));
  const Tab tab(rows ? ow : L);
  M pick[4], out[4], pq[4];
  std::memcpy(pick, tab.pick, sizeof(pick));
  std::memcpy(out, tab.out, sizeof(out));
  std::memcpy(pq, tab.pq, sizeof(pq));
  const M one = M{} + 1, low = M{} + (2 * L - 1), half = M{} + 2 * L;
  const int64_t per_row = rows ? 0 : ow / L;
  for (int64_t blk = 0; blk < blocks; ++blk) {
    int64_t in, o, down;  // the block's top run, its first output, its bottom run's distance from the top
    if (rows) {
      o = blk * L;
      in = 4 * o;
      down = 2 * L;
    } else {
      const int64_t r = blk / per_row, jb = blk % per_row, pl = r / oh, i = r % oh;
      in = pl * h * w + 2 * i * w + 2 * jb * L;
      o = r * ow + jb * L;
      down = w;
    }
    V z[4];
    std::memcpy(&z[0], x + in, 2 * sizeof(V));
    std::memcpy(&z[2], x + in + down, 2 * sizeof(V));
    V win[4];  // the window elements a, b, c, d of the L outputs
    for (int e = 0; e < 4; ++e) {
      const M local = pick[e] & low, upper = pick[e] < half;
      const V lo = __builtin_shuffle(z[0], z[1], local), hi = __builtin_shuffle(z[2], z[3], local);
      win[e] = reinterpret_cast<V>((reinterpret_cast<M>(lo) & upper) | (reinterpret_cast<M>(hi) & ~upper));
    }
    // MaxTakes lane by lane (lanes of a comparison are -1 where true), then the pairwise maxima.
    const M tb = ((win[1] > win[0]) | (win[1] != win[1])) & (win[0] == win[0]);
    const M td = ((win[3] > win[2]) | (win[3] != win[3])) & (win[2] == win[2]);
    const V ab = reinterpret_cast<V>((reinterpret_cast<M>(win[1]) & tb) | (reinterpret_cast<M>(win[0]) & ~tb));
    const V cd = reinterpret_cast<V>((reinterpret_cast<M>(win[3]) & td) | (reinterpret_cast<M>(win[2]) & ~td));
    const M bottom = ((cd > ab) | (cd != cd)) & (ab == ab);
    if (dx == nullptr) {
      const V m = reinterpret_cast<V>((reinterpret_cast<M>(cd) & bottom) | (reinterpret_cast<M>(ab) & ~bottom));
      std::memcpy(y + o, &m, sizeof(V));
      continue;
    }
    const M winner = (bottom & ((td & one) + 2)) | (~bottom & (tb & one));
    V g;
    std::memcpy(&g, dy + o, sizeof(V));
    V dz[4];
    for (int e = 0; e < 4; ++e) {
      const V ge = __builtin_shuffle(g, out[e]);
      const M we = __builtin_shuffle(winner, out[e]);
      dz[e] = reinterpret_cast<V>(reinterpret_cast<M>(ge) & (we == pq[e]));
    }
    std::memcpy(dx + in, &dz[0], 2 * sizeof(V));
    std::memcpy(dx + in + down, &dz[2], 2 * sizeof(V));
  }
}

// MaxPool (dx null) or MaxPoolGrad of `planes` planes: the vector blocks, then what they leave (the row
// pairs after the last whole block, or the columns and rows no window covers) by the scalar loops.
template <typename S>
void MaxPool2x2Vectorised(const S* x, const S* dy, S* y, S* dx, int64_t planes, int64_t h, int64_t w, int64_t oh,
                          int64_t ow, bool rows) {
  constexpr int64_t L = Pool2x2Tables<S>::L;
  if (!rows) {
    Pool2x2Blocks(x, dy, y, dx, planes * oh * (ow / L), h, w, oh, ow, false);
    if (dx == nullptr) return;
    for (int64_t pl = 0; pl < planes; ++pl) {
      S* plane = dx + pl * h * w;
      for (int64_t i = 0; i < 2 * oh; ++i) std::fill(plane + i * w + 2 * ow, plane + (i + 1) * w, S(0));
      std::fill(plane + 2 * oh * w, plane + h * w, S(0));
    }
    return;
  }
  const int64_t total = planes * oh * ow, whole = total / L * L;
  Pool2x2Blocks(x, dy, y, dx, whole / L, h, w, oh, ow, true);
  if (whole == total) return;
  // The blocks end on a row pair (ow divides L): the rest, from row pair `pairs` of plane `done` on.
  const int64_t done = whole / (oh * ow), pairs = whole / ow - done * oh, skip = done * h * w + pairs * 2 * w;
  if (dx == nullptr) {
    MaxPool2x2Rows(x + skip, y + whole, 1, h - 2 * pairs, w, oh - pairs, ow);
    MaxPool2x2Rows(x + (done + 1) * h * w, y + (done + 1) * oh * ow, planes - done - 1, h, w, oh, ow);
  } else {
    MaxPoolGrad2x2Rows(x + skip, dy + whole, dx + skip, 1, h - 2 * pairs, w, oh - pairs, ow);
    MaxPoolGrad2x2Rows(x + (done + 1) * h * w, dy + (done + 1) * oh * ow, dx + (done + 1) * h * w, planes - done - 1,
                       h, w, oh, ow);
  }
}

// Planes per task: enough work to pay for a thread. The vector blocks take about 0.1 ns an input
// element (LeNet's first MaxPoolGrad, 64K elements: 10 us), so they split only above 8 grains: waking
// the second thread cost more than it saved there, the more so on busy cores.
inline int64_t Pool2x2Grain(const Window2D& g, bool vectorised) {
  return std::max<int64_t>(1, (vectorised ? 8 : 1) * kParallelGrain / std::max<int64_t>(1, g.h * g.w));
}

// Per thread: a row's maxima and their places.
template <typename T>
struct RowScratch {
  explicit RowScratch(int64_t ow) : m(static_cast<size_t>(ow)), idx(static_cast<size_t>(ow)) {}
  std::vector<compute_t<T>> m;
  std::vector<int64_t> idx;
};

template <typename T, bool kMax>
class PoolCpuKernel : public CpuKernel {
 public:
  void Init(const KernelContext& ctx) override {
    g_ = MakeWindow2D(ctx, ctx.input(0).shape, ctx.output(0).shape, false);
    OPF_CHECK(g_.oc == g_.c, "For '" << ctx.op_name() << "', the output must keep the " << g_.c
                                     << " channels, but got " << g_.oc << ".");
  }

  void Launch(const KernelArgs& args) override {
    const T* x = args.input<T>(0);
    T* y = args.output<T>(0);
    const Window2D g = g_;
    const int64_t planes = g.n * g.c, hw = g.h * g.w, ohw = g.oh * g.ow;
    if (planes == 0 || ohw == 0) return;
    if (kMax && IsPool2x2(g)) {
      bool rows = false;
      const bool vectorised = Pool2x2Vectorised<T>(g, &rows);
      ParallelFor(planes, Pool2x2Grain(g, vectorised), [&](int64_t begin, int64_t end) {
        if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
          if (vectorised) {
            return MaxPool2x2Vectorised<T>(x + begin * hw, nullptr, y + begin * ohw, nullptr, end - begin, g.h,
                                           g.w, g.oh, g.ow, rows);
          }
        }
        MaxPool2x2Rows(x + begin * hw, y + begin * ohw, end - begin, g.h, g.w, g.oh, g.ow);
      });
      return;
    }
    ParallelFor(planes, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, ohw * WindowWork(g))),
                [&](int64_t begin, int64_t end) {
                  RowScratch<T> row(kMax ? g.ow : 0);
                  for (int64_t pl = begin; pl < end; ++pl) {
                    const T* xp = x + pl * hw;
                    T* yp = y + pl * ohw;
                    for (int64_t i = 0; i < g.oh; ++i) {
                      if constexpr (kMax) {
                        MaxPoolRow(xp, g, i, row.m.data(), row.idx.data());
                        for (int64_t j = 0; j < g.ow; ++j) yp[i * g.ow + j] = Store<T>(row.m[j]);
                      } else {
                        for (int64_t j = 0; j < g.ow; ++j) yp[i * g.ow + j] = Store<T>(AvgPoolWindow(xp, g, i, j));
                      }
                    }
                  }
                });
  }

 private:
  Window2D g_{};
};

template <typename T, bool kMax>
class PoolGradCpuKernel : public CpuKernel {
 public:
  void Init(const KernelContext& ctx) override {
    const std::string& op = ctx.op_name();
    OPF_CHECK(ctx.num_inputs() == 3 && ctx.num_outputs() == 1, "For '" << op << "', the kernel takes 3 inputs and 1 output.");
    g_ = MakeWindow2D(ctx, ctx.input(0).shape, ctx.input(2).shape, false);
    OPF_CHECK(ctx.input(1).shape == ctx.input(2).shape && ctx.output(0).shape == ctx.input(0).shape &&
                  g_.oc == g_.c,
              "For '" << op << "', 'out_origin' and 'grad' must have the pooled shape and the output the shape of "
                      << "'x_origin' " << ShapeToString(ctx.input(0).shape) << ".");
  }

  void Launch(const KernelArgs& args) override {
    using C = compute_t<T>;
    using A = acc_t<T>;
    const T* x = args.input<T>(0);
    const T* dy = args.input<T>(2);
    T* dx = args.output<T>(0);
    const Window2D g = g_;
    const int64_t planes = g.n * g.c, hw = g.h * g.w, ohw = g.oh * g.ow;
    if (planes == 0 || hw == 0) return;
    const int64_t grain = std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, hw + ohw * WindowWork(g)));
    if constexpr (kMax) {
      if (IsPool2x2(g)) {
        bool rows = false;
        const bool vectorised = Pool2x2Vectorised<T>(g, &rows);
        ParallelFor(planes, Pool2x2Grain(g, vectorised), [&](int64_t begin, int64_t end) {
          if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
            if (vectorised) {
              return MaxPool2x2Vectorised<T>(x + begin * hw, dy + begin * ohw, nullptr, dx + begin * hw,
                                             end - begin, g.h, g.w, g.oh, g.ow, rows);
            }
          }
          MaxPoolGrad2x2Rows(x + begin * hw, dy + begin * ohw, dx + begin * hw, end - begin, g.h, g.w, g.oh, g.ow);
        });
        return;
      }
      if (g.sh >= g.kh && g.sw >= g.kw) {  // disjoint windows: an input element gets one gradient at most
        ParallelFor(planes, grain, [&](int64_t begin, int64_t end) {
          RowScratch<T> row(g.ow);
          for (int64_t pl = begin; pl < end; ++pl) {
            const T* dp = dy + pl * ohw;
            T* out = dx + pl * hw;
            std::fill(out, out + hw, Store<T>(C(0)));
            for (int64_t i = 0; i < g.oh; ++i) {
              MaxPoolRow(x + pl * hw, g, i, row.m.data(), row.idx.data());
              for (int64_t j = 0; j < g.ow; ++j) {
                const int64_t a = row.idx[j];
                if (a >= 0) out[a] = Store<T>(static_cast<C>(A(0) + static_cast<A>(Load(dp[i * g.ow + j]))));
              }
            }
          }
        });
        return;
      }
    }
    ParallelFor(planes, grain,
                [&](int64_t begin, int64_t end) {
                  std::vector<A> acc(static_cast<size_t>(hw));
                  RowScratch<T> row(kMax ? g.ow : 0);
                  for (int64_t pl = begin; pl < end; ++pl) {
                    const T* xp = x + pl * hw;
                    const T* dp = dy + pl * ohw;
                    std::fill(acc.begin(), acc.end(), A(0));
                    for (int64_t i = 0; i < g.oh; ++i) {
                      if constexpr (kMax) MaxPoolRow(xp, g, i, row.m.data(), row.idx.data());
                      for (int64_t j = 0; j < g.ow; ++j) {
                        const A d = static_cast<A>(Load(dp[i * g.ow + j]));
                        if constexpr (kMax) {
                          const int64_t a = row.idx[j];
                          if (a >= 0) acc[a] += d;
                        } else {
                          const int64_t count = AvgPoolCount(g, i, j);
                          if (count == 0) continue;
                          const A share = d / static_cast<A>(count);
                          const int64_t y0 = std::max<int64_t>(0, i * g.sh - g.pt), y1 = std::min(g.h, i * g.sh - g.pt + g.kh);
                          const int64_t x0 = std::max<int64_t>(0, j * g.sw - g.pl), x1 = std::min(g.w, j * g.sw - g.pl + g.kw);
                          for (int64_t yy = y0; yy < y1; ++yy)
                            for (int64_t xx = x0; xx < x1; ++xx) acc[yy * g.w + xx] += share;
                        }
                      }
                    }
                    T* out = dx + pl * hw;
                    for (int64_t e = 0; e < hw; ++e) out[e] = Store<T>(static_cast<C>(acc[e]));
                  }
                });
  }

 private:
  Window2D g_{};
};

// MaxPoolGradGrad(x, out, grad) -> [n, c, oh, ow]: grad at each window's maximum.
template <typename T>
class MaxPoolGradGradCpuKernel : public CpuKernel {
 public:
  void Init(const KernelContext& ctx) override {
    const std::string& op = ctx.op_name();
    OPF_CHECK(ctx.num_inputs() == 3 && ctx.num_outputs() == 1, "For '" << op << "', the kernel takes 3 inputs and 1 output.");
    g_ = MakeWindow2D(ctx, ctx.input(0).shape, ctx.output(0).shape, false);
    OPF_CHECK(ctx.input(1).shape == ctx.output(0).shape && ctx.input(2).shape == ctx.input(0).shape && g_.oc == g_.c,
              "For '" << op << "', 'out_origin' must have the pooled shape and 'grad' the shape of 'x_origin' "
                      << ShapeToString(ctx.input(0).shape) << ".");
  }

  void Launch(const KernelArgs& args) override {
    const T* x = args.input<T>(0);
    const T* grad = args.input<T>(2);
    T* y = args.output<T>(0);
    const Window2D g = g_;
    const int64_t planes = g.n * g.c, hw = g.h * g.w, ohw = g.oh * g.ow;
    if (planes == 0 || ohw == 0) return;
    ParallelFor(planes, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, ohw * WindowWork(g))),
                [&](int64_t begin, int64_t end) {
                  RowScratch<T> row(g.ow);
                  for (int64_t pl = begin; pl < end; ++pl) {
                    const T* xp = x + pl * hw;
                    const T* gp = grad + pl * hw;
                    T* yp = y + pl * ohw;
                    for (int64_t i = 0; i < g.oh; ++i) {
                      MaxPoolRow(xp, g, i, row.m.data(), row.idx.data());
                      for (int64_t j = 0; j < g.ow; ++j) {
                        const int64_t a = row.idx[j];
                        yp[i * g.ow + j] = a >= 0 ? gp[a] : Store<T>(compute_t<T>(0));
                      }
                    }
                  }
                });
  }

 private:
  Window2D g_{};
};

// AdaptiveAvgPool2D (x [..., h, w] -> y [..., oh, ow]) and AdaptiveAvgPool2DGrad (dy [..., oh, ow] -> dx
// [..., h, w]): a plane per leading index, each element by the functors of opforge/functors/conv.h (the
// gradient gathers from the outputs whose windows hold it, as on the GPU).
template <typename T, bool kGrad>
class AdaptiveAvgPoolCpuKernel : public CpuKernel {
 public:
  void Init(const KernelContext& ctx) override {
    const std::string& op = ctx.op_name();
    const std::vector<int64_t>& in = ctx.input(0).shape;
    const std::vector<int64_t>& out = ctx.output(0).shape;
    OPF_CHECK(in.size() >= 2 && in.size() == out.size(),
              "For '" << op << "', the input and output must have the same rank of 2 or more, but got "
                      << ShapeToString(in) << " and " << ShapeToString(out) << ".");
    planes_ = 1;
    for (size_t d = 0; d + 2 < in.size(); ++d) {
      OPF_CHECK(in[d] == out[d], "For '" << op << "', the leading dims of " << ShapeToString(in) << " and "
                                         << ShapeToString(out) << " must agree.");
      planes_ *= in[d];
    }
    const std::vector<int64_t>& x = kGrad ? out : in;  // the forward's input and output planes
    const std::vector<int64_t>& y = kGrad ? in : out;
    h_ = x[x.size() - 2];
    w_ = x[x.size() - 1];
    oh_ = y[y.size() - 2];
    ow_ = y[y.size() - 1];
    OPF_CHECK(planes_ == 0 || (h_ > 0 && w_ > 0 && oh_ > 0 && ow_ > 0),
              "For '" << op << "', the input and pooled planes must be non-empty, but got " << h_ << " x " << w_
                      << " and " << oh_ << " x " << ow_ << ".");
  }

  void Launch(const KernelArgs& args) override {
    const T* src = args.input<T>(0);
    T* dst = args.output<T>(0);
    const int64_t h = h_, w = w_, oh = oh_, ow = ow_;
    const int64_t src_plane = kGrad ? oh * ow : h * w, dst_plane = kGrad ? h * w : oh * ow;
    if (planes_ == 0 || dst_plane == 0) return;
    ParallelFor(planes_, std::max<int64_t>(1, kParallelGrain / (src_plane + dst_plane)),
                [&](int64_t begin, int64_t end) {
                  for (int64_t p = begin; p < end; ++p) {
                    const T* sp = src + p * src_plane;
                    T* dp = dst + p * dst_plane;
                    const int64_t rows = kGrad ? h : oh, cols = kGrad ? w : ow;
                    for (int64_t i = 0; i < rows; ++i)
                      for (int64_t j = 0; j < cols; ++j)
                        dp[i * cols + j] = Store<T>(kGrad ? AdaptiveAvgPoolGradAt(sp, h, w, oh, ow, i, j)
                                                          : AdaptiveAvgPoolAt(sp, h, w, oh, ow, i, j));
                  }
                });
  }

 private:
  int64_t planes_ = 0, h_ = 0, w_ = 0, oh_ = 0, ow_ = 0;
};

#define REG_ADAPTIVE_POOL(T, ID)                                                                              \
  MS_REG_CPU_KERNEL(AdaptiveAvgPool2D, KernelAttr().AddInputAttr(ID).AddOutputAttr(ID),                       \
                    AdaptiveAvgPoolCpuKernel<T, false>);                                                      \
  MS_REG_CPU_KERNEL(AdaptiveAvgPool2DGrad, KernelAttr().AddInputAttr(ID).AddOutputAttr(ID),                   \
                    AdaptiveAvgPoolCpuKernel<T, true>)

REG_ADAPTIVE_POOL(float16, kNumberTypeFloat16);
REG_ADAPTIVE_POOL(float, kNumberTypeFloat32);
REG_ADAPTIVE_POOL(double, kNumberTypeFloat64);

#define REG_POOL(T, ID)                                                                                           \
  MS_REG_CPU_KERNEL(MaxPool, KernelAttr().AddInputAttr(ID).AddOutputAttr(ID), PoolCpuKernel<T, true>);            \
  MS_REG_CPU_KERNEL(AvgPool, KernelAttr().AddInputAttr(ID).AddOutputAttr(ID), PoolCpuKernel<T, false>);           \
  MS_REG_CPU_KERNEL(MaxPoolGrad, KernelAttr().AddInputAttr(ID).AddInputAttr(ID).AddInputAttr(ID).AddOutputAttr(ID), \
                    PoolGradCpuKernel<T, true>);                                                                  \
  MS_REG_CPU_KERNEL(AvgPoolGrad, KernelAttr().AddInputAttr(ID).AddInputAttr(ID).AddInputAttr(ID).AddOutputAttr(ID), \
                    PoolGradCpuKernel<T, false>);                                                                 \
  MS_REG_CPU_KERNEL(MaxPoolGradGrad,                                                                              \
                    KernelAttr().AddInputAttr(ID).AddInputAttr(ID).AddInputAttr(ID).AddOutputAttr(ID),           \
                    MaxPoolGradGradCpuKernel<T>)

REG_POOL(float16, kNumberTypeFloat16);
REG_POOL(bfloat16, kNumberTypeBFloat16);
REG_POOL(float, kNumberTypeFloat32);
REG_POOL(double, kNumberTypeFloat64);

}  // namespace
}  // namespace opforge
