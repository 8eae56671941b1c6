// Connectionist temporal classification (Graves et al., 2006) of one sequence, shared by CTCLoss's CPU
// kernel (csrc/kernels/cpu/ctc_loss.cc) and its CUDA kernel (csrc/kernels/cuda/ctc_loss.cu): the loss
// -log p(labels | x) over every alignment of the labels, with blanks between them, to the frames, and its
// gradient with respect to the logits x, by the forward (alpha) and backward (beta) recursions in log space
// (TensorFlow's CTCLossCalculator semantics, which MindSpore's CTCLoss follows).
#pragma once

#include "opforge/half.h"
#include "opforge/limits.h"
#include "opforge/math.h"
#include "opforge/portable.h"

namespace opforge {

// log(e^a + e^b), exact at -inf.
template <typename C>
OPF_HD C LogAddExp(C a, C b) {
  const C lowest = -limits::Infinity<C>();
  if (a == lowest) return b;
  if (b == lowest) return a;
  const C hi = a > b ? a : b, lo = a > b ? b : a;
  return hi + math::log1p(math::exp(lo - hi));
}

// The extended labels l' of a sequence: blank, l_0, blank, l_1, ..., blank (2L + 1 states).
struct CtcLabels {
  const int32_t* labels;
  int64_t length;
  int32_t blank;
  bool merge_repeated;  // ctc_merge_repeated: equal neighbouring labels need a blank between them

  OPF_HD int64_t states() const { return 2 * length + 1; }
  OPF_HD int32_t At(int64_t s) const { return (s & 1) ? labels[s / 2] : blank; }
  // Whether a path may go from state s - 2 to state s, skipping the blank between.
  OPF_HD bool CanSkip(int64_t s) const {
    if (s < 2 || At(s) == blank) return false;
    return !(merge_repeated && At(s) == At(s - 2));
  }
  // The frames an alignment needs: one per label, and a blank between equal neighbours when they merge.
  OPF_HD int64_t RequiredFrames() const {
    int64_t frames = length;
    for (int64_t i = 1; merge_repeated && i < length; ++i) frames += labels[i] == labels[i - 1];
    return frames;
  }
};

// One sequence of `steps` frames: x[t * x_stride + c] the logits of frame t (C classes). Work: logp
// [steps * C], alpha and beta [steps * states], acc [C], of compute type A. Writes grad[t * x_stride + c]
// (steps frames; the caller zeroes the frames past them) and returns the loss (+inf, with a zero gradient,
// when no alignment exists).
template <typename T, typename A>
OPF_HD A CtcSequence(const T* x, int64_t x_stride, int64_t classes, int64_t steps, const CtcLabels& l, A* logp,
                     A* alpha, A* beta, A* acc, T* grad) {
  const A lowest = -limits::Infinity<A>();
  const int64_t states = l.states();
  for (int64_t t = 0; t < steps; ++t) {  // log softmax of each frame
    const T* xt = x + t * x_stride;
    A hi = static_cast<A>(Load(xt[0]));
    for (int64_t c = 1; c < classes; ++c) {
      const A v = static_cast<A>(Load(xt[c]));
      hi = v > hi ? v : hi;
    }
    A sum = A(0);
    for (int64_t c = 0; c < classes; ++c) sum += math::exp(static_cast<A>(Load(xt[c])) - hi);
    const A norm = hi + math::log(sum);
    for (int64_t c = 0; c < classes; ++c) logp[t * classes + c] = static_cast<A>(Load(xt[c])) - norm;
  }
  if (steps == 0) return l.length == 0 ? A(0) : limits::Infinity<A>();
  for (int64_t s = 0; s < states; ++s) alpha[s] = s < 2 ? logp[l.At(s)] : lowest;
  for (int64_t t = 1; t < steps; ++t) {
    const A* prev = alpha + (t - 1) * states;
    A* cur = alpha + t * states;
    for (int64_t s = 0; s < states; ++s) {
      A sum = prev[s];
      if (s >= 1) sum = LogAddExp(sum, prev[s - 1]);
      if (l.CanSkip(s)) sum = LogAddExp(sum, prev[s - 2]);
      cur[s] = sum == lowest ? lowest : sum + logp[t * classes + l.At(s)];
    }
  }
  const int64_t last = steps - 1;
  for (int64_t s = 0; s < states; ++s) beta[last * states + s] = s >= states - 2 ? logp[last * classes + l.At(s)] : lowest;
  for (int64_t t = last - 1; t >= 0; --t) {
    const A* next = beta + (t + 1) * states;
    A* cur = beta + t * states;
    for (int64_t s = 0; s < states; ++s) {
      A sum = next[s];
      if (s + 1 < states) sum = LogAddExp(sum, next[s + 1]);
      if (s + 2 < states && l.CanSkip(s + 2)) sum = LogAddExp(sum, next[s + 2]);
      cur[s] = sum == lowest ? lowest : sum + logp[t * classes + l.At(s)];
    }
  }
  const A* end = alpha + last * states;
  const A log_likelihood = states >= 2 ? LogAddExp(end[states - 1], end[states - 2]) : end[0];
  for (int64_t t = 0; t < steps; ++t) {
    T* gt = grad + t * x_stride;
    if (log_likelihood == lowest) {
      for (int64_t c = 0; c < classes; ++c) gt[c] = Store<T>(compute_t<T>(0));
      continue;
    }
    for (int64_t c = 0; c < classes; ++c) acc[c] = lowest;
    for (int64_t s = 0; s < states; ++s) {  // alpha beta counts frame t's emission twice
      const int32_t c = l.At(s);
      acc[c] = LogAddExp(acc[c], alpha[t * states + s] + beta[t * states + s] - logp[t * classes + c]);
    }
    for (int64_t c = 0; c < classes; ++c) {
      const A p = math::exp(logp[t * classes + c]);
      gt[c] = Store<T>(static_cast<compute_t<T>>(p - math::exp(acc[c] - log_likelihood)));
    }
  }
  return -log_likelihood;
}

}  // namespace opforge
