// ScaledDotProductAttention(scale, keep_prob, is_causal, Seed0, Seed1)(q, k, v, attn_mask) -> (out, lse) and
// its grad, FlashAttention-style, with the math of opforge/functors/attention.h (shared with
// csrc/kernels/cuda/attention.cu). The forward streams over key blocks with an online softmax per query row,
// so its scratch is O(block * (block + D)) per task and never Lq * Lk; it keeps only out and the per-row
// logsumexp. The grad recomputes the scores block by block. Every product of blocks (Q K^T, P V, and the
// grad's dO V^T, P^T dO, dS K, dS^T Q) is an OpenBLAS GEMM (kernels/cpu/gemm.h) on single-threaded BLAS, the
// threads taking (batch, head, query block) tasks, but for a block holding an infinity, where a score of
// probability 0 must add nothing (GemmAdd). Values are computed in compute_t<T> (float for float16).
// The mask broadcasts to [B, H, Lq, Lk] (a dim of 1 has stride 0).
#include <algorithm>
#include <cstdint>
#include <vector>

#include "kernels/cpu/gemm.h"
#include "opforge/functors/attention.h"
#include "opforge/half.h"
#include "opforge/kernel.h"
#include "opforge/parallel.h"

namespace opforge {
namespace {

constexpr int64_t kBlockQ = 64;   // query rows per task / block
constexpr int64_t kBlockK = 128;  // keys per block

struct AttentionGeometry {
  int64_t b = 0, h = 0, lq = 0, lk = 0, d = 0, dv = 0;
  int64_t mask_stride[4] = {0, 0, 0, 0};  // over (b, h, i, j); 0 where the mask broadcasts
  double scale = 1.0, keep_prob = 1.0;
  bool causal = false;
  uint64_t key = 0;
  int64_t bh() const { return b * h; }
  int64_t MaskOffset(int64_t bh_index, int64_t i) const {
    return (bh_index / h) * mask_stride[0] + (bh_index % h) * mask_stride[1] + i * mask_stride[2];
  }
};

void CheckShapeIs(const KernelContext& ctx, const TensorMeta& t, const char* name, const std::vector<int64_t>& want) {
  OPF_CHECK(t.shape == want, "For '" << ctx.op_name() << "', the '" << name << "' must have shape "
                                     << ShapeToString(want) << ", but got " << ShapeToString(t.shape) << ".");
}

AttentionGeometry GeometryOf(const KernelContext& ctx) {
  const std::string& op = ctx.op_name();
  const TensorMeta& q = ctx.input(0);
  const TensorMeta& k = ctx.input(1);
  const TensorMeta& v = ctx.input(2);
  const TensorMeta& mask = ctx.input(3);
  OPF_CHECK(q.ndim() == 4 && k.ndim() == 4 && v.ndim() == 4 && mask.ndim() == 4,
            "For '" << op << "', 'query', 'key', 'value' and 'attn_mask' must be 4-D, but got "
                    << ShapeToString(q.shape) << ", " << ShapeToString(k.shape) << ", " << ShapeToString(v.shape)
                    << " and " << ShapeToString(mask.shape) << ".");
  AttentionGeometry g;
  g.b = q.shape[0];
  g.h = q.shape[1];
  g.lq = q.shape[2];
  g.d = q.shape[3];
  g.lk = k.shape[2];
  g.dv = v.shape[3];
  CheckShapeIs(ctx, k, "key", {g.b, g.h, g.lk, g.d});
  CheckShapeIs(ctx, v, "value", {g.b, g.h, g.lk, g.dv});
  const int64_t full[4] = {g.b, g.h, g.lq, g.lk};
  int64_t stride = 1;
  for (int axis = 3; axis >= 0; --axis) {
    const int64_t n = mask.shape[axis];
    OPF_CHECK(n == 1 || n == full[axis], "For '" << op << "', the 'attn_mask' of shape " << ShapeToString(mask.shape)
                                                 << " does not broadcast to [" << g.b << ", " << g.h << ", " << g.lq
                                                 << ", " << g.lk << "].");
    g.mask_stride[axis] = n == 1 ? 0 : stride;
    stride *= n;
  }
  g.scale = ctx.GetFloat("scale");
  g.keep_prob = ctx.GetFloat("keep_prob");
  g.causal = ctx.GetBool("is_causal");
  g.key = DropoutKey(ctx.GetInt("Seed0"), ctx.GetInt("Seed1"));
  return g;
}

template <typename T, typename C>
void LoadRows(const T* src, int64_t rows, int64_t cols, C* dst) {
  for (int64_t t = 0; t < rows * cols; ++t) dst[t] = static_cast<C>(Load(src[t]));
}

// Scores of rows [i0, i0 + nq) against keys [j0, j0 + nk): scale * q.k + mask, -inf where causal hides them.
// qb holds the nq query rows, kb the nk key rows (d each); s gets [nq, nk].
template <typename T, typename C>
void Scores(const AttentionGeometry& g, int64_t bh, int64_t i0, int64_t nq, int64_t j0, int64_t nk, const C* qb,
            const C* kb, const T* mask, C* s) {
  Gemm<C>(false, true, nq, nk, g.d, qb, g.d, kb, g.d, C(0), s, nk);
  const C scale = static_cast<C>(g.scale);
  const int64_t mask_step = g.mask_stride[3];
  for (int64_t r = 0; r < nq; ++r) {
    const int64_t i = i0 + r;
    const T* mrow = mask + g.MaskOffset(bh, i) + j0 * mask_step;
    C* srow = s + r * nk;
#pragma omp simd
    for (int64_t c = 0; c < nk; ++c) srow[c] = scale * srow[c] + static_cast<C>(Load(mrow[c * mask_step]));
    for (int64_t c = std::max<int64_t>(0, i + 1 - j0); g.causal && c < nk; ++c) {  // the keys after i
      srow[c] = -limits::Infinity<C>();
    }
  }
}

template <typename C>
bool AllFinite(const C* x, int64_t count) {
  bool finite = true;
  for (int64_t t = 0; t < count; ++t) finite &= math::IsFinite(x[t]);
  return finite;
}

// c += op(a) b with op(a) m x kk and b kk x n (rows contiguous), as Gemm with beta 1, but a zero coefficient of
// a adds nothing even where its row of b is infinite (a GEMM gives 0 * inf = NaN): attention's rule that a
// score of probability 0 (hidden or dropped) adds nothing. The loop runs only for a block whose b is not
// finite, so the GEMM stays the common path.
template <typename C>
void GemmAdd(bool trans_a, int64_t m, int64_t n, int64_t kk, const C* a, int64_t lda, const C* b, C* c,
             int64_t ldc) {
  if (AllFinite(b, kk * n)) {
    Gemm<C>(trans_a, false, m, n, kk, a, lda, b, n, C(1), c, ldc);
    return;
  }
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t p = 0; p < kk; ++p) {
      const C coef = trans_a ? a[p * lda + i] : a[i * lda + p];
      if (coef == C(0)) continue;
      for (int64_t t = 0; t < n; ++t) c[i * ldc + t] += coef * b[p * n + t];
    }
  }
}

template <typename T>
class AttentionCpuKernel : public CpuKernel {
  using C = compute_t<T>;

 public:
  void Init(const KernelContext& ctx) override {
    OPF_CHECK(ctx.num_inputs() == 4 && ctx.num_outputs() == 2,
              "For '" << ctx.op_name() << "', the kernel takes 4 inputs and 2 outputs.");
    g_ = GeometryOf(ctx);
    CheckShapeIs(ctx, ctx.output(0), "output", {g_.b, g_.h, g_.lq, g_.dv});
    CheckShapeIs(ctx, ctx.output(1), "softmax_lse", {g_.b, g_.h, g_.lq});
  }

  void Launch(const KernelArgs& args) override {
    const AttentionGeometry g = g_;
    const int64_t q_blocks = (g.lq + kBlockQ - 1) / kBlockQ;
    const T* q = args.input<T>(0);
    const T* k = args.input<T>(1);
    const T* v = args.input<T>(2);
    const T* mask = args.input<T>(3);
    T* out = args.output<T>(0);
    C* lse = args.output<C>(1);
    const int64_t per_task = kBlockQ * g.lk * (g.d + g.dv);
    const int64_t grain = std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, per_task));
    BlasOneThread one_thread;
    ParallelFor(g.bh() * q_blocks, grain, [&](int64_t begin, int64_t end) {
      std::vector<C> qb(kBlockQ * g.d), kb(kBlockK * g.d), vb(kBlockK * g.dv), o(kBlockQ * g.dv), s(kBlockQ * kBlockK);
      std::vector<C> m(kBlockQ), l(kBlockQ);
      for (int64_t task = begin; task < end; ++task) {
        const int64_t bh = task / q_blocks;
        const int64_t i0 = (task % q_blocks) * kBlockQ;
        const int64_t nq = std::min(kBlockQ, g.lq - i0);
        Block(g, bh, i0, nq, q, k, v, mask, out, lse, qb.data(), kb.data(), vb.data(), o.data(), s.data(), m.data(),
              l.data());
      }
    });
  }

 private:
  static void Block(const AttentionGeometry& g, int64_t bh, int64_t i0, int64_t nq, const T* q, const T* k,
                    const T* v, const T* mask, T* out, C* lse, C* qb, C* kb, C* vb, C* o, C* s, C* m, C* l) {
    LoadRows(q + (bh * g.lq + i0) * g.d, nq, g.d, qb);
    std::fill(o, o + nq * g.dv, C(0));
    std::fill(m, m + nq, -limits::Infinity<C>());
    std::fill(l, l + nq, C(0));
    const int64_t j_end = g.causal ? std::min(g.lk, i0 + nq) : g.lk;  // causal: later keys are all hidden
    for (int64_t j0 = 0; j0 < j_end; j0 += kBlockK) {
      const int64_t nk = std::min(kBlockK, j_end - j0);
      LoadRows(k + (bh * g.lk + j0) * g.d, nk, g.d, kb);
      LoadRows(v + (bh * g.lk + j0) * g.dv, nk, g.dv, vb);
      Scores<T, C>(g, bh, i0, nq, j0, nk, qb, kb, mask, s);
      for (int64_t r = 0; r < nq; ++r) {  // s becomes the block's dropped probabilities
        C* srow = s + r * nk;
        C m_new = m[r];
        for (int64_t c = 0; c < nk; ++c) m_new = srow[c] > m_new ? srow[c] : m_new;
        const C alpha = AttentionRescale(m[r], m_new);
        C* orow = o + r * g.dv;
        for (int64_t t = 0; t < g.dv; ++t) orow[t] *= alpha;
        C sum = 0;
#pragma omp simd reduction(+ : sum)
        for (int64_t c = 0; c < nk; ++c) {
          const C p = AttentionProb(srow[c], m_new);
          sum += p;
          srow[c] = p;
        }
        for (int64_t c = 0; g.keep_prob < 1.0 && c < nk; ++c) {
          srow[c] *= AttentionDropScale<C>(g.key, AttentionDropIndex(bh, i0 + r, j0 + c, g.lq, g.lk), g.keep_prob);
        }
        l[r] = l[r] * alpha + sum;
        m[r] = m_new;
      }
      GemmAdd<C>(false, nq, g.dv, nk, s, nk, vb, o, g.dv);  // o += P V
    }
    for (int64_t r = 0; r < nq; ++r) {
      const int64_t i = i0 + r;
      const C inv = C(1) / l[r];  // 0 rows (every score -inf) give NaN, as the NumPy formula does
      T* dst = out + (bh * g.lq + i) * g.dv;
      for (int64_t t = 0; t < g.dv; ++t) {
        dst[t] = Store<T>(static_cast<compute_t<T>>(l[r] == C(0) ? limits::QuietNaN<C>() : o[r * g.dv + t] * inv));
      }
      lse[bh * g.lq + i] = AttentionLse(m[r], l[r]);
    }
  }

  AttentionGeometry g_;
};

// ScaledDotProductAttentionGrad(...)(q, k, v, attn_mask, out, dout, lse) -> (dq, dk, dv); a task per (batch, head),
// whose scratch is O((Lq + Lk) * D) and the score blocks.
template <typename T>
class AttentionGradCpuKernel : public CpuKernel {
  using C = compute_t<T>;

 public:
  void Init(const KernelContext& ctx) override {
    OPF_CHECK(ctx.num_inputs() == 7 && ctx.num_outputs() == 3,
              "For '" << ctx.op_name() << "', the kernel takes 7 inputs and 3 outputs.");
    g_ = GeometryOf(ctx);
    CheckShapeIs(ctx, ctx.input(4), "out", {g_.b, g_.h, g_.lq, g_.dv});
    CheckShapeIs(ctx, ctx.input(5), "dout", {g_.b, g_.h, g_.lq, g_.dv});
    CheckShapeIs(ctx, ctx.input(6), "softmax_lse", {g_.b, g_.h, g_.lq});
    CheckShapeIs(ctx, ctx.output(0), "dq", ctx.input(0).shape);
    CheckShapeIs(ctx, ctx.output(1), "dk", ctx.input(1).shape);
    CheckShapeIs(ctx, ctx.output(2), "dv", ctx.input(2).shape);
  }

  void Launch(const KernelArgs& args) override {
    const AttentionGeometry g = g_;
    Inputs in{args.input<T>(0), args.input<T>(1), args.input<T>(2), args.input<T>(3),
              args.input<T>(4), args.input<T>(5), args.input<C>(6)};
    T* dq = args.output<T>(0);
    T* dk = args.output<T>(1);
    T* dv = args.output<T>(2);
    BlasOneThread one_thread;
    ParallelFor(g.bh(), 1, [&](int64_t begin, int64_t end) {
      for (int64_t bh = begin; bh < end; ++bh) Head(g, bh, in, dq, dk, dv);
    });
  }

 private:
  struct Inputs {
    const T *q, *k, *v, *mask, *out, *dout;
    const C* lse;
  };

  static void Head(const AttentionGeometry& g, int64_t bh, const Inputs& in, T* dq_out, T* dk_out, T* dv_out) {
    const int64_t lq = g.lq, lk = g.lk, d = g.d, dvn = g.dv;
    std::vector<C> q(lq * d), k(lk * d), v(lk * dvn), dout(lq * dvn), delta(lq, C(0));
    std::vector<C> dq(lq * d, C(0)), dk(lk * d, C(0)), dv(lk * dvn, C(0));
    std::vector<C> s(kBlockQ * kBlockK), pd(kBlockQ * kBlockK), ds(kBlockQ * kBlockK);
    LoadRows(in.q + bh * lq * d, lq, d, q.data());
    LoadRows(in.k + bh * lk * d, lk, d, k.data());
    LoadRows(in.v + bh * lk * dvn, lk, dvn, v.data());
    LoadRows(in.dout + bh * lq * dvn, lq, dvn, dout.data());
    for (int64_t i = 0; i < lq; ++i) {
      if (in.lse[bh * lq + i] == limits::Infinity<C>()) {  // every p of the row is 0: its dout adds nothing
        std::fill(dout.begin() + i * dvn, dout.begin() + (i + 1) * dvn, C(0));
        continue;
      }
      for (int64_t t = 0; t < dvn; ++t) {
        delta[i] += static_cast<C>(Load(in.out[(bh * lq + i) * dvn + t])) * dout[i * dvn + t];
      }
    }
    const C scale = static_cast<C>(g.scale);
    for (int64_t i0 = 0; i0 < lq; i0 += kBlockQ) {
      const int64_t nq = std::min(kBlockQ, lq - i0);
      const int64_t j_end = g.causal ? std::min(lk, i0 + nq) : lk;
      const C* qb = q.data() + i0 * d;
      const C* gob = dout.data() + i0 * dvn;
      for (int64_t j0 = 0; j0 < j_end; j0 += kBlockK) {
        const int64_t nk = std::min(kBlockK, j_end - j0);
        const C* kb = k.data() + j0 * d;
        const C* vb = v.data() + j0 * dvn;
        Scores<T, C>(g, bh, i0, nq, j0, nk, qb, kb, in.mask, s.data());
        Gemm<C>(false, true, nq, nk, dvn, gob, dvn, vb, dvn, C(0), ds.data(), nk);  // dP = dO V^T
        for (int64_t r = 0; r < nq; ++r) {
          const int64_t i = i0 + r;
          const C lse = in.lse[bh * lq + i], di = delta[i];
          C* pr = pd.data() + r * nk;  // the dropout scale of each score, then P' = P * scale
          C* dr = ds.data() + r * nk;  // dP, then dS = scale * P * (dP * drop - delta)
          const C* sr = s.data() + r * nk;
          for (int64_t c = 0; c < nk; ++c) {
            pr[c] = g.keep_prob >= 1.0
                        ? C(1)
                        : AttentionDropScale<C>(g.key, AttentionDropIndex(bh, i, j0 + c, lq, lk), g.keep_prob);
          }
#pragma omp simd
          for (int64_t c = 0; c < nk; ++c) {
            const C p = AttentionProb(sr[c], lse);
            // a score with p = 0 adds nothing (a fully hidden row's delta is NaN, a hidden v_j may be infinite)
            dr[c] = math::Select(p == C(0), C(0), scale * p * (pr[c] * dr[c] - di));
            pr[c] *= p;
          }
        }
        GemmAdd<C>(true, nk, dvn, nq, pd.data(), nk, gob, dv.data() + j0 * dvn, dvn);  // dV += P'^T dO
        GemmAdd<C>(false, nq, d, nk, ds.data(), nk, kb, dq.data() + i0 * d, d);             // dQ += dS K
        GemmAdd<C>(true, nk, d, nq, ds.data(), nk, qb, dk.data() + j0 * d, d);              // dK += dS^T Q
      }
    }
    StoreRows(dq, dq_out + bh * lq * d);
    StoreRows(dk, dk_out + bh * lk * d);
    StoreRows(dv, dv_out + bh * lk * dvn);
  }

  static void StoreRows(const std::vector<C>& src, T* dst) {
    for (size_t t = 0; t < src.size(); ++t) dst[t] = Store<T>(static_cast<compute_t<T>>(src[t]));
  }

  AttentionGeometry g_;
};

// The logsumexp is float32 for float16 inputs (compute_t), else the inputs' dtype.
#define REG_ATTENTION(T, ID, LSE_ID)                                                                        \
  MS_REG_CPU_KERNEL(ScaledDotProductAttention,                                                              \
                    KernelAttr()                                                                            \
                        .AddInputAttr(ID)                                                                   \
                        .AddInputAttr(ID)                                                                   \
                        .AddInputAttr(ID)                                                                   \
                        .AddInputAttr(ID)                                                                   \
                        .AddOutputAttr(ID)                                                                  \
                        .AddOutputAttr(LSE_ID),                                                             \
                    AttentionCpuKernel<T>);                                                                 \
  MS_REG_CPU_KERNEL(ScaledDotProductAttentionGrad,                                                          \
                    KernelAttr()                                                                            \
                        .AddInputAttr(ID)                                                                   \
                        .AddInputAttr(ID)                                                                   \
                        .AddInputAttr(ID)                                                                   \
                        .AddInputAttr(ID)                                                                   \
                        .AddInputAttr(ID)                                                                   \
                        .AddInputAttr(ID)                                                                   \
                        .AddInputAttr(LSE_ID)                                                               \
                        .AddOutputAttr(ID)                                                                  \
                        .AddOutputAttr(ID)                                                                  \
                        .AddOutputAttr(ID),                                                                 \
                    AttentionGradCpuKernel<T>)

REG_ATTENTION(float16, kNumberTypeFloat16, kNumberTypeFloat32);
REG_ATTENTION(float, kNumberTypeFloat32, kNumberTypeFloat32);
REG_ATTENTION(double, kNumberTypeFloat64, kNumberTypeFloat64);

}  // namespace
}  // namespace opforge
