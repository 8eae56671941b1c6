// The per-element math of ScaledDotProductAttention and its grad, shared by the CPU kernels
// (csrc/kernels/cpu/attention.cc) and the CUDA kernels (csrc/kernels/cuda/attention.cu).
//
// Forward, per query row i, streamed over the keys j with an online softmax (FlashAttention):
//   s_ij = scale * q_i . k_j + mask_ij   (-inf where is_causal and j > i)
//   m' = max(m, max_j s_ij);  l' = l * e^(m - m') + sum_j e^(s_ij - m')
//   o' = o * e^(m - m') + sum_j drop_ij e^(s_ij - m') v_j,   drop_ij = keep_ij / keep_prob
//   out_i = o / l,  lse_i = m + log(l)   (the only statistics the backward needs)
// Backward, recomputing p_ij = e^(s_ij - lse_i) block by block, with D_i = dout_i . out_i:
//   dv_j += sum_i drop_ij p_ij dout_i;  ds_ij = p_ij (drop_ij dout_i . v_j - D_i)
//   dq_i += scale sum_j ds_ij k_j;  dk_j += scale sum_i ds_ij q_i
// Host and device; no standard library.
#pragma once

#include "opforge/functors/random.h"
#include "opforge/functors/reduce.h"
#include "opforge/math.h"
#include "opforge/portable.h"

namespace opforge {

// Whether (i, j) is hidden by the causal mask (top-left aligned: query i sees keys 0..i).
OPF_HD bool AttentionCausalHidden(bool is_causal, int64_t i, int64_t j) { return is_causal && j > i; }

// The dropout counter of score (bh, i, j): its index in the [B*H, Lq, Lk] scores.
OPF_HD int64_t AttentionDropIndex(int64_t bh, int64_t i, int64_t j, int64_t lq, int64_t lk) {
  return (bh * lq + i) * lk + j;
}

// The factor on a score kept by dropout: 1 / keep_prob, or 0 where dropped.
template <typename C>
OPF_HD C AttentionDropScale(uint64_t key, int64_t index, double keep_prob) {
  if (keep_prob >= 1.0) return C(1);
  return DropoutKeep(key, index, keep_prob) ? static_cast<C>(1.0 / keep_prob) : C(0);
}

// e^(m_old - m_new), the factor on the running sums when the row maximum rises; 0 while every
// score so far was -inf (the sums are still 0 then).
template <typename C>
OPF_HD C AttentionRescale(C m_old, C m_new) {
  if (m_old == -limits::Infinity<C>()) return C(0);
  return math::exp(m_old - m_new);
}

// e^(s - m) for a score against the running maximum (0 for s = -inf).
template <typename C>
OPF_HD C AttentionProb(C s, C m) {
  return math::Select(s == -limits::Infinity<C>(), C(0), math::exp(s - m));  // (no branch: loops vectorise)
}

// The row's logsumexp from its maximum and sum: m + log(l).
template <typename C>
OPF_HD C AttentionLse(C m, C l) {
  return m + math::log(l);
}

}  // namespace opforge
