// Transpose(x, perm): y[i_0, ..., i_{n-1}] = x[j] with j[perm[k]] = i_k, so y.shape[k] = x.shape[perm[k]]
// (np.transpose). Elements are moved as raw bytes of their size, so every dtype shares five kernels.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "opforge/kernel.h"
#include "opforge/parallel.h"

namespace opforge {
namespace {

struct alignas(8) Bytes16 {
  uint64_t lo, hi;
};

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
// Square blocks transposed in AVX registers: out row k = in column k, rows `in_stride` and `out_stride`
// elements apart. Shuffles move bits and nothing else, so any 4- or 8-byte element goes through the
// float forms (a NaN's payload included).
__attribute__((target("avx"))) void Transpose8x8(const uint32_t* in, int64_t in_stride, uint32_t* out,
                                                 int64_t out_stride) {
  __m256 r[8], t[8];
  for (int k = 0; k < 8; ++k) r[k] = _mm256_loadu_ps(reinterpret_cast<const float*>(in + k * in_stride));
  for (int k = 0; k < 8; k += 2) {
    t[k] = _mm256_unpacklo_ps(r[k], r[k + 1]);
    t[k + 1] = _mm256_unpackhi_ps(r[k], r[k + 1]);
  }
  for (int k = 0; k < 8; k += 4) {
    r[k] = _mm256_shuffle_ps(t[k], t[k + 2], _MM_SHUFFLE(1, 0, 1, 0));
    r[k + 1] = _mm256_shuffle_ps(t[k], t[k + 2], _MM_SHUFFLE(3, 2, 3, 2));
    r[k + 2] = _mm256_shuffle_ps(t[k + 1], t[k + 3], _MM_SHUFFLE(1, 0, 1, 0));
    r[k + 3] = _mm256_shuffle_ps(t[k + 1], t[k + 3], _MM_SHUFFLE(3, 2, 3, 2));
  }
  for (int k = 0; k < 4; ++k) {
    float* to = reinterpret_cast<float*>(out);
    _mm256_storeu_ps(to + k * out_stride, _mm256_permute2f128_ps(r[k], r[k + 4], 0x20));
    _mm256_storeu_ps(to + (k + 4) * out_stride, _mm256_permute2f128_ps(r[k], r[k + 4], 0x31));
  }
}

__attribute__((target("avx"))) void Transpose4x4(const uint64_t* in, int64_t in_stride, uint64_t* out,
                                                 int64_t out_stride) {
  __m256d r[4];
  for (int k = 0; k < 4; ++k) r[k] = _mm256_loadu_pd(reinterpret_cast<const double*>(in + k * in_stride));
  const __m256d t0 = _mm256_unpacklo_pd(r[0], r[1]), t1 = _mm256_unpackhi_pd(r[0], r[1]);
  const __m256d t2 = _mm256_unpacklo_pd(r[2], r[3]), t3 = _mm256_unpackhi_pd(r[2], r[3]);
  double* to = reinterpret_cast<double*>(out);
  _mm256_storeu_pd(to, _mm256_permute2f128_pd(t0, t2, 0x20));
  _mm256_storeu_pd(to + out_stride, _mm256_permute2f128_pd(t1, t3, 0x20));
  _mm256_storeu_pd(to + 2 * out_stride, _mm256_permute2f128_pd(t0, t2, 0x31));
  _mm256_storeu_pd(to + 3 * out_stride, _mm256_permute2f128_pd(t1, t3, 0x31));
}

bool HasAvx() {
  static const bool has = __builtin_cpu_supports("avx");
  return has;
}
#define OPF_TRANSPOSE_AVX 1
#else
bool HasAvx() { return false; }
#endif

// The side of the register blocks for elements of type E (0: none).
template <typename E>
constexpr int64_t RegisterBlock() {
#ifdef OPF_TRANSPOSE_AVX
  if constexpr (std::is_same_v<E, uint32_t>) return 8;
  if constexpr (std::is_same_v<E, uint64_t>) return 4;
#endif
  return 0;
}

// out[r][c] = in[c][r] for a b x b block (b = RegisterBlock<E>()).
template <typename E>
void TransposeBlock(const E* in, int64_t in_stride, E* out, int64_t out_stride) {
#ifdef OPF_TRANSPOSE_AVX
  if constexpr (std::is_same_v<E, uint32_t>) Transpose8x8(in, in_stride, out, out_stride);
  if constexpr (std::is_same_v<E, uint64_t>) Transpose4x4(in, in_stride, out, out_stride);
#endif
}

// Output dims with size-1 dims dropped and neighbours merged where they are also neighbours, in the
// same order, in the input; each with the input stride it walks.
struct TransposePlan {
  std::vector<int64_t> sizes, strides;
  int64_t numel = 0;

  void Init(const std::string& op, const std::vector<int64_t>& in_shape, std::vector<int64_t> perm,
            const std::vector<int64_t>& out_shape) {
    const int64_t nd = static_cast<int64_t>(in_shape.size());
    OPF_CHECK(static_cast<int64_t>(perm.size()) == nd, "For '" << op << "', the 'perm' must have one entry per "
                                                                  << "dim of the input " << ShapeToString(in_shape)
                                                                  << ", but got " << ShapeToString(perm) << ".");
    std::vector<bool> seen(static_cast<size_t>(nd), false);
    for (int64_t& p : perm) {
      OPF_CHECK(p >= -nd && p < nd && !seen[p < 0 ? p + nd : p],
                "For '" << op << "', the 'perm' must be a permutation of the input's " << nd
                        << " dims, but got " << ShapeToString(perm) << ".");
      if (p < 0) p += nd;
      seen[p] = true;
    }
    std::vector<int64_t> in_strides(static_cast<size_t>(nd));
    int64_t acc = 1;
    for (int64_t d = nd; d-- > 0;) {
      in_strides[d] = acc;
      acc *= in_shape[d];
    }
    std::vector<int64_t> want(static_cast<size_t>(nd));
    for (int64_t k = 0; k < nd; ++k) want[k] = in_shape[perm[k]];
    OPF_CHECK(want == out_shape, "For '" << op << "', the output shape must be " << ShapeToString(want)
                                         << " for 'perm' " << ShapeToString(perm) << ", but got "
                                         << ShapeToString(out_shape) << ".");
    numel = acc;
    for (int64_t k = 0; k < nd; ++k) {
      const int64_t size = want[k], stride = in_strides[perm[k]];
      if (size == 1) continue;
      if (!sizes.empty() && strides.back() == stride * size) {  // contiguous with the previous kept dim
        sizes.back() *= size;
        strides.back() = stride;
      } else {
        sizes.push_back(size);
        strides.push_back(stride);
      }
    }
  }

  // A plain copy: nothing moves (at most one dim is left, walked contiguously).
  bool IsCopy() const { return sizes.empty() || (sizes.size() == 1 && strides[0] == 1); }
};

template <typename E>
class TransposeCpuKernel : public CpuKernel {
 public:
  void Init(const KernelContext& ctx) override {
    const TensorMeta& x = ctx.input(0);
    const TensorMeta& y = ctx.output(0);
    OPF_CHECK(x.dtype == y.dtype, "For '" << ctx.op_name() << "', the output must have the input's dtype "
                                          << TypeIdName(x.dtype) << ", but got " << TypeIdName(y.dtype) << ".");
    OPF_CHECK(TypeIdSize(x.dtype) == static_cast<int64_t>(sizeof(E)),
              "For '" << ctx.op_name() << "', the kernel moves " << sizeof(E) << "-byte elements, but got "
                      << TypeIdName(x.dtype) << ".");
    plan_.Init(ctx.op_name(), x.shape, ctx.GetInts("perm"), y.shape);
  }

  void Launch(const KernelArgs& args) override {
    const E* x = args.input<E>(0);
    E* y = args.output<E>(0);
    const TransposePlan& p = plan_;
    if (p.numel == 0) return;
    if (p.IsCopy()) {
      ParallelFor(p.numel, kParallelGrain, [&](int64_t begin, int64_t end) {
        std::memcpy(y + begin, x + begin, static_cast<size_t>(end - begin) * sizeof(E));
      });
      return;
    }
    const size_t nd = p.sizes.size();
    if (nd >= 2 && p.strides[nd - 1] != 1) {
      Tiled(x, y);
      return;
    }
    // The innermost output dim is contiguous in the input too: copy runs.
    ParallelFor(p.numel, kParallelGrain, [&](int64_t begin, int64_t end) {
      ForEachRun(begin, end, [&](int64_t o, int64_t i, int64_t n) {
        std::memcpy(y + o, x + i, static_cast<size_t>(n) * sizeof(E));
      });
    });
  }

 private:
  // Calls f(out_offset, in_offset, count) for the runs of [begin, end) along the innermost output dim.
  template <typename F>
  void ForEachRun(int64_t begin, int64_t end, F&& f) const {
    const TransposePlan& p = plan_;
    const size_t nd = p.sizes.size(), last = nd - 1;
    std::vector<int64_t> idx(nd);
    int64_t in = 0, rem = begin;
    for (size_t d = nd; d-- > 0;) {
      idx[d] = rem % p.sizes[d];
      rem /= p.sizes[d];
      in += idx[d] * p.strides[d];
    }
    for (int64_t pos = begin; pos < end;) {
      const int64_t run = std::min(p.sizes[last] - idx[last], end - pos);
      f(pos, in, run);
      pos += run;
      idx[last] += run;
      in += run * p.strides[last];
      for (size_t d = last; d > 0 && idx[d] == p.sizes[d]; --d) {
        idx[d] = 0;
        in += p.strides[d - 1] - p.sizes[d] * p.strides[d];
        ++idx[d - 1];
      }
    }
  }

  // The innermost output dim strides through the input: walk the two innermost output dims in square
  // tiles, so the strided reads of one tile reuse the cache lines they load (when the second-innermost
  // dim is the input's contiguous one, which the merging of dims makes the common case, every read
  // row of a tile is contiguous).
  //
  // The side of a tile: 32, smaller when the strided reads step by a power of two of bytes, from 1 KB
  // on (then the rows of a tile share one set of the L1 cache and evict each other). Measured on Zen 5,
  // float32, 1 thread, with the register blocks: 1024x1024 (4 KB) 285 us with 16, 425 with 8, 495 with
  // 32; 4096x4096 (16 KB) 10.2 ms with 8, 27 with 16; (64, 128, 128) to (0, 2, 1) (512 B) 140 us with 32,
  // 188 with 16; NCHW to NHWC at 56x56 (12,544 B) 3.5 ms with 32, 6.5 with 16.
  static int64_t TileSide(uint64_t stride_bytes) {
    if ((stride_bytes & (stride_bytes - 1)) != 0 || stride_bytes < 1024) return 32;
    return stride_bytes < 16384 ? 16 : 8;
  }

  // Within a tile, 4- and 8-byte elements move as square blocks transposed in AVX registers (when the
  // tile's input rows are contiguous), the edges one by one.
  void Tiled(const E* x, E* y) const {
    const TransposePlan& p = plan_;
    const size_t nd = p.sizes.size();
    const int64_t rows = p.sizes[nd - 2], cols = p.sizes[nd - 1];
    const int64_t rs = p.strides[nd - 2], cs = p.strides[nd - 1];
    const uint64_t stride_bytes = static_cast<uint64_t>(cs) * sizeof(E);
    const int64_t kTile = TileSide(stride_bytes);
    constexpr int64_t kBlock = RegisterBlock<E>();
    const int64_t outer = p.numel / (rows * cols);
    const int64_t row_tiles = (rows + kTile - 1) / kTile, col_tiles = (cols + kTile - 1) / kTile;
    const int64_t tiles = outer * row_tiles * col_tiles;
    const int64_t grain = std::max<int64_t>(1, kParallelGrain / (kTile * kTile));
    ParallelFor(tiles, grain, [&](int64_t begin, int64_t end) {
      for (int64_t t = begin; t < end; ++t) {
        const int64_t ct = t % col_tiles, rt = (t / col_tiles) % row_tiles, o = t / (col_tiles * row_tiles);
        int64_t base = 0, rem = o;  // input offset of the outer index o over the dims before the last two
        for (size_t d = nd - 2; d-- > 0;) {
          base += (rem % p.sizes[d]) * p.strides[d];
          rem /= p.sizes[d];
        }
        const int64_t r0 = rt * kTile, r1 = std::min(rows, r0 + kTile);
        const int64_t c0 = ct * kTile, c1 = std::min(cols, c0 + kTile);
        E* out = y + o * rows * cols;
        int64_t r_done = r0, c_done = c0;  // the part done in registers: [r0, r_done) x [c0, c_done)
        if (kBlock > 0 && rs == 1 && HasAvx()) {
          // Each input row of a block (fixed c) is contiguous along r.
          r_done = r0 + (r1 - r0) / kBlock * kBlock;
          c_done = c0 + (c1 - c0) / kBlock * kBlock;
          for (int64_t r = r0; r < r_done; r += kBlock) {
            for (int64_t c = c0; c < c_done; c += kBlock) {
              TransposeBlock(x + base + r + c * cs, cs, out + r * cols + c, cols);
            }
          }
        }
        for (int64_t r = r0; r < r1; ++r) {
          const E* src = x + base + r * rs;
          E* dst = out + r * cols;
          for (int64_t c = r < r_done ? c_done : c0; c < c1; ++c) dst[c] = src[c * cs];
        }
      }
    });
  }

  TransposePlan plan_;
};

#define REG_TRANSPOSE(ID, E) \
  MS_REG_CPU_KERNEL(Transpose, KernelAttr().AddInputAttr(ID).AddOutputAttr(ID), TransposeCpuKernel<E>)

REG_TRANSPOSE(kNumberTypeBool, uint8_t);
REG_TRANSPOSE(kNumberTypeInt8, uint8_t);
REG_TRANSPOSE(kNumberTypeInt16, uint16_t);
REG_TRANSPOSE(kNumberTypeInt32, uint32_t);
REG_TRANSPOSE(kNumberTypeInt64, uint64_t);
REG_TRANSPOSE(kNumberTypeUInt8, uint8_t);
REG_TRANSPOSE(kNumberTypeUInt16, uint16_t);
REG_TRANSPOSE(kNumberTypeUInt32, uint32_t);
REG_TRANSPOSE(kNumberTypeUInt64, uint64_t);
REG_TRANSPOSE(kNumberTypeFloat16, uint16_t);
REG_TRANSPOSE(kNumberTypeBFloat16, uint16_t);
REG_TRANSPOSE(kNumberTypeFloat32, uint32_t);
REG_TRANSPOSE(kNumberTypeFloat64, uint64_t);
REG_TRANSPOSE(kNumberTypeComplex64, uint64_t);
REG_TRANSPOSE(kNumberTypeComplex128, Bytes16);

}  // namespace
}  // namespace opforge
