// ScaledDotProductAttention and its grad, with the math of opforge/functors/attention.h (shared with
// csrc/kernels/cpu/attention.cc). A thread per query row streams over the keys with the online softmax
// (running max and sum), so nothing of size Lq * Lk is stored; the grad recomputes p_ij = e^(s_ij - lse_i):
// AttentionDeltaKernel (D_i = dout_i . out_i, a thread per query row), AttentionDqKernel (a thread per query
// row) and AttentionDkDvKernel (a thread per key row), so no two threads write one element and no kernel
// needs a barrier. Head dims up to kMaxDim (the accumulators live in registers / local memory).
// Instantiated by name (opforge/kernels/gpu/attention.py registers which).
#include "opforge/cuda.h"
#include "opforge/functors/attention.h"

namespace opforge {
namespace cuda {

constexpr int kMaxDim = 256;
static_assert(kMaxDim <= 256, "per-thread accumulators of kMaxDim values live in local memory");

struct AttentionShape {
  int64_t bh, h, lq, lk, d, dv;
  int64_t ms0, ms1, ms2, ms3;  // the mask's strides over (b, h, i, j); 0 where it broadcasts
  double scale, keep_prob;
  int64_t seed0, seed1;
  int causal;
};

template <typename T>
__device__ compute_t<T> AttentionScore(const AttentionShape& g, const T* q, const T* k, const T* mask, int64_t bh,
                                       int64_t i, int64_t j) {
  using C = compute_t<T>;
  if (AttentionCausalHidden(g.causal != 0, i, j)) return -limits::Infinity<C>();
  const T* qi = q + (bh * g.lq + i) * g.d;
  const T* kj = k + (bh * g.lk + j) * g.d;
  C acc = 0;
  for (int64_t t = 0; t < g.d; ++t) acc += Load(qi[t]) * Load(kj[t]);
  const int64_t m = (bh / g.h) * g.ms0 + (bh % g.h) * g.ms1 + i * g.ms2 + j * g.ms3;
  return static_cast<C>(g.scale) * acc + Load(mask[m]);
}

template <typename T>
__global__ void AttentionKernel(const T* q, const T* k, const T* v, const T* mask, T* out, compute_t<T>* lse,
                                AttentionShape g) {
  using C = compute_t<T>;
  const uint64_t key = DropoutKey(g.seed0, g.seed1);
  OPF_GRID_STRIDE_LOOP(row, g.bh * g.lq) {
    const int64_t bh = row / g.lq, i = row % g.lq;
    C o[kMaxDim];
    for (int64_t t = 0; t < g.dv; ++t) o[t] = 0;
    C m = -limits::Infinity<C>(), l = 0;
    for (int64_t j = 0; j < g.lk; ++j) {
      const C s = AttentionScore(g, q, k, mask, bh, i, j);
      const C m_new = s > m ? s : m;
      const C alpha = AttentionRescale(m, m_new);
      const C p = AttentionProb(s, m_new);
      const C w = p * AttentionDropScale<C>(key, AttentionDropIndex(bh, i, j, g.lq, g.lk), g.keep_prob);
      const T* vj = v + (bh * g.lk + j) * g.dv;
      for (int64_t t = 0; t < g.dv; ++t) {  // a score of probability 0 adds nothing (not 0 * inf)
        o[t] = w == C(0) ? o[t] * alpha : o[t] * alpha + w * Load(vj[t]);
      }
      l = l * alpha + p;
      m = m_new;
    }
    T* dst = out + row * g.dv;
    for (int64_t t = 0; t < g.dv; ++t) dst[t] = Store<T>(l == C(0) ? limits::QuietNaN<C>() : o[t] / l);
    lse[row] = AttentionLse(m, l);
  }
}

template <typename T>
__global__ void AttentionDeltaKernel(const T* out, const T* dout, compute_t<T>* delta, AttentionShape g) {
  using C = compute_t<T>;
  OPF_GRID_STRIDE_LOOP(row, g.bh * g.lq) {
    C acc = 0;
    for (int64_t t = 0; t < g.dv; ++t) acc += Load(out[row * g.dv + t]) * Load(dout[row * g.dv + t]);
    delta[row] = acc;
  }
}

// ds_ij of the grad (scale included), recomputing the score and its probability p; w = p * drop. False where
// p = 0: the score adds nothing to any gradient (not even 0 * inf).
template <typename T>
__device__ bool AttentionDs(const AttentionShape& g, uint64_t key, const T* q, const T* k, const T* v,
                            const T* mask, const T* dout, const compute_t<T>* lse, const compute_t<T>* delta,
                            int64_t bh, int64_t i, int64_t j, compute_t<T>* ds, compute_t<T>* w) {
  using C = compute_t<T>;
  const int64_t row = bh * g.lq + i;
  const C p = AttentionProb(AttentionScore(g, q, k, mask, bh, i, j), lse[row]);
  if (p == C(0)) return false;
  const C drop = AttentionDropScale<C>(key, AttentionDropIndex(bh, i, j, g.lq, g.lk), g.keep_prob);
  *w = p * drop;
  const T* go = dout + row * g.dv;
  const T* vj = v + (bh * g.lk + j) * g.dv;
  C dp = 0;
  for (int64_t t = 0; t < g.dv; ++t) dp += Load(go[t]) * Load(vj[t]);
  *ds = static_cast<C>(g.scale) * p * (drop * dp - delta[row]);
  return true;
}

template <typename T>
__global__ void AttentionDqKernel(const T* q, const T* k, const T* v, const T* mask, const T* dout,
                                  const compute_t<T>* lse, const compute_t<T>* delta, T* dq, AttentionShape g) {
  using C = compute_t<T>;
  const uint64_t key = DropoutKey(g.seed0, g.seed1);
  OPF_GRID_STRIDE_LOOP(row, g.bh * g.lq) {
    const int64_t bh = row / g.lq, i = row % g.lq;
    C acc[kMaxDim];
    for (int64_t t = 0; t < g.d; ++t) acc[t] = 0;
    for (int64_t j = 0; j < g.lk; ++j) {
      C ds, w;
      if (!AttentionDs(g, key, q, k, v, mask, dout, lse, delta, bh, i, j, &ds, &w)) continue;
      const T* kj = k + (bh * g.lk + j) * g.d;
      for (int64_t t = 0; t < g.d; ++t) acc[t] += ds * Load(kj[t]);
    }
    for (int64_t t = 0; t < g.d; ++t) dq[row * g.d + t] = Store<T>(acc[t]);
  }
}

template <typename T>
__global__ void AttentionDkDvKernel(const T* q, const T* k, const T* v, const T* mask, const T* dout,
                                    const compute_t<T>* lse, const compute_t<T>* delta, T* dk, T* dv,
                                    AttentionShape g) {
  using C = compute_t<T>;
  const uint64_t key = DropoutKey(g.seed0, g.seed1);
  OPF_GRID_STRIDE_LOOP(col, g.bh * g.lk) {
    const int64_t bh = col / g.lk, j = col % g.lk;
    C ak[kMaxDim], av[kMaxDim];
    for (int64_t t = 0; t < g.d; ++t) ak[t] = 0;
    for (int64_t t = 0; t < g.dv; ++t) av[t] = 0;
    for (int64_t i = 0; i < g.lq; ++i) {
      C ds, w;
      if (!AttentionDs(g, key, q, k, v, mask, dout, lse, delta, bh, i, j, &ds, &w)) continue;
      const T* qi = q + (bh * g.lq + i) * g.d;
      const T* go = dout + (bh * g.lq + i) * g.dv;
      for (int64_t t = 0; t < g.d; ++t) ak[t] += ds * Load(qi[t]);
      for (int64_t t = 0; w != C(0) && t < g.dv; ++t) av[t] += w * Load(go[t]);  // a dropped score adds nothing
    }
    for (int64_t t = 0; t < g.d; ++t) dk[col * g.d + t] = Store<T>(ak[t]);
    for (int64_t t = 0; t < g.dv; ++t) dv[col * g.dv + t] = Store<T>(av[t]);
  }
}

}  // namespace cuda
}  // namespace opforge
