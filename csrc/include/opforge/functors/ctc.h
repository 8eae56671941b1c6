// Connectionist temporal classification (Graves et al., 2006) of one sequence, shared by CTCLoss's CPU
// kernel (csrc/kernels/cpu/ctc_loss.cc) and its CUDA kernel (csrc/kernels/cuda/ctc_loss.cu): the loss
// -log p(labels | x) over every alignment of the labels, with blanks between them, to the frames, and its
// gradient with respect to the logits x, by the forward (alpha) and backward (beta) recursions (TensorFlow's
// CTCLossCalculator semantics, which MindSpore's CTCLoss follows).
#pragma once

#include "opforge/half.h"
#include "opforge/limits.h"
#include "opforge/math.h"
#include "opforge/portable.h"

namespace opforge {

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

// What CtcLayout found wrong in a call's labels or lengths (kind kCtcFine: nothing), with what the CPU kernel's
// message names: the entry `index` of the sparse labels, its `batch` row and `position`, a `value` and an
// `other` (the padding's position; the sequence length a row's labels need more frames than).
enum CtcErrorKind { kCtcFine, kCtcBatch, kCtcNegative, kCtcPosition, kCtcAfterPadding, kCtcSeqLen, kCtcTooLong };
struct CtcLayoutError {
  int kind = kCtcFine;
  int64_t index = -1, batch = 0, position = 0, value = 0, other = 0;
};

// A call's sparse labels (n of them), sequence lengths and attrs, as CtcLayout reads them.
struct CtcLayoutArgs {
  const int64_t* indices;  // [n, 2] (batch, position)
  const int32_t* values;   // [n]
  const int32_t* seq_len;  // [batch]
  int64_t n, batch, time;
  int32_t blank;
  bool collapse, merge, ignore_longer;
};

// The entry of the sparse labels at (b, pos), for an error's message (-1 where none is).
OPF_HD int64_t CtcEntryAt(const CtcLayoutArgs& a, int64_t b, int64_t pos) {
  for (int64_t i = 0; i < a.n; ++i) {
    if (a.indices[2 * i] == b && a.indices[2 * i + 1] == pos) return i;
  }
  return -1;
}

// The sparse labels of a call, checked and laid out row after row in `labels` [n]: row b's labels (collapsed
// where asked, without the padding) start at start[b], length[b] of them (-1 for a row whose loss is 0 by
// ignore_longer: its labels need more frames than its sequence has); the rows' extended labels take
// states[b] .. states[b + 1] of sum (2 L_b + 1) <= 2 n + batch states. Entries sit at positions 0, 1, ... of
// their row in any order; a value at or above the blank is padding that ends its row (MindSpore's kernels
// read it so). O(n + batch), serial: the CPU kernel's first step, and one GPU thread's.
OPF_HD CtcLayoutError CtcLayout(const CtcLayoutArgs& a, int32_t* labels, int64_t* start, int64_t* length,
                                int64_t* states) {
  CtcLayoutError e;
  for (int64_t b = 0; b < a.batch; ++b) length[b] = 0;  // the row's entries, to begin with
  for (int64_t i = 0; i < a.n; ++i) {
    e.index = i;
    e.batch = a.indices[2 * i];
    e.value = a.values[i];
    e.kind = e.batch < 0 || e.batch >= a.batch ? kCtcBatch : e.value < 0 ? kCtcNegative : kCtcFine;
    if (e.kind != kCtcFine) return e;
    ++length[e.batch];
  }
  int64_t offset = 0;
  for (int64_t b = 0; b < a.batch; ++b) {
    start[b] = offset;
    offset += length[b];
  }
  for (int64_t i = 0; i < a.n; ++i) labels[i] = -1;  // (values are >= 0: -1 marks a free slot)
  for (int64_t i = 0; i < a.n; ++i) {  // positions 0 .. count - 1 of a row, each once
    const int64_t b = a.indices[2 * i], pos = a.indices[2 * i + 1];
    if (pos < 0 || pos >= length[b] || labels[start[b] + pos] >= 0) {
      e.kind = kCtcPosition;
      e.index = i;
      e.batch = b;
      e.position = pos;
      e.other = length[b];
      return e;
    }
    labels[start[b] + pos] = a.values[i];
  }
  for (int64_t b = 0; b < a.batch; ++b) {
    int32_t* row = labels + start[b];
    int64_t kept = 0, padding_from = -1;
    for (int64_t k = 0; k < length[b]; ++k) {
      const int32_t v = row[k];
      if (v >= a.blank) {
        padding_from = padding_from < 0 ? k : padding_from;
        continue;
      }
      if (padding_from >= 0) {
        e.kind = kCtcAfterPadding;
        e.index = CtcEntryAt(a, b, k);
        e.batch = b;
        e.position = k;
        e.value = v;
        e.other = padding_from;
        return e;
      }
      if (!(a.collapse && kept > 0 && row[kept - 1] == v)) row[kept++] = v;
    }
    length[b] = kept;
  }
  states[0] = 0;
  for (int64_t b = 0; b < a.batch; ++b) {
    e.batch = b;
    e.value = a.seq_len[b];
    if (e.value < 0 || e.value > a.time) {
      e.kind = kCtcSeqLen;
      return e;
    }
    const CtcLabels l{labels + start[b], length[b], a.blank, a.merge};
    states[b + 1] = states[b] + l.states();
    if (l.RequiredFrames() > e.value && !a.ignore_longer) {
      e.kind = kCtcTooLong;
      e.other = e.value;
      e.value = l.RequiredFrames();
      return e;
    }
    if (l.RequiredFrames() > e.value) length[b] = -1;
  }
  return CtcLayoutError{};
}

// One sequence of `steps` frames: x[t * x_stride + c] the logits of frame t (C classes). The recursions run on
// probabilities rescaled at every frame (Rabiner's scaling, as Graves' CTC paper does), in double: sums and
// products only, the logarithm once per frame. Work (compute type A): y [steps * C] (the softmax of each
// frame), alpha_in and beta [steps * states], prev [states], acc [C]. alpha_in[t][s] is the forward mass
// reaching state s at frame t before its emission; beta[t][s] the backward mass from s at t, emission
// included: the occupancy of s at t is alpha_in beta, up to a factor of the frame. Writes grad[t * x_stride
// + c] = y - occupancy of the class (steps frames; the caller zeroes the rest) and returns -log p(labels |
// x) (+inf, with a zero gradient, when no alignment exists).
template <typename T, typename A>
OPF_HD A CtcSequence(const T* x, int64_t x_stride, int64_t classes, int64_t steps, const CtcLabels& l, A* y,
                     A* alpha_in, A* beta, A* prev, A* acc, T* grad) {
  const int64_t states = l.states();
  for (int64_t t = 0; t < steps; ++t) {  // softmax of each frame
    const T* xt = x + t * x_stride;
    A* yt = y + t * classes;
    A hi = static_cast<A>(Load(xt[0]));
    for (int64_t c = 1; c < classes; ++c) {
      const A v = static_cast<A>(Load(xt[c]));
      hi = v > hi ? v : hi;
    }
    A sum = A(0);
    for (int64_t c = 0; c < classes; ++c) sum += (yt[c] = math::exp(static_cast<A>(Load(xt[c])) - hi));
    for (int64_t c = 0; c < classes; ++c) yt[c] /= sum;
  }
  if (steps == 0) return l.length == 0 ? A(0) : limits::Infinity<A>();
  // Forward: prev holds the normalised alpha of the frame before.
  A log_likelihood = A(0);
  bool possible = true;
  for (int64_t t = 0; t < steps && possible; ++t) {
    A* in = alpha_in + t * states;
    for (int64_t s = 0; s < states; ++s) {
      if (t == 0) {
        in[s] = s < 2 ? A(1) : A(0);
      } else {
        A v = prev[s];
        if (s >= 1) v += prev[s - 1];
        if (l.CanSkip(s)) v += prev[s - 2];
        in[s] = v;
      }
    }
    A scale = A(0);
    for (int64_t s = 0; s < states; ++s) scale += (prev[s] = in[s] * y[t * classes + l.At(s)]);
    if (math::IsNan(scale)) {  // a NaN (or an infinity) among the logits: NaN out
      for (int64_t u = 0; u < steps; ++u) {
        for (int64_t c = 0; c < classes; ++c) grad[u * x_stride + c] = Store<T>(static_cast<compute_t<T>>(scale));
      }
      return scale;
    }
    possible = scale > A(0);
    if (!possible) break;
    for (int64_t s = 0; s < states; ++s) prev[s] /= scale;
    log_likelihood += math::log(scale);
  }
  const A end = states >= 2 ? prev[states - 1] + prev[states - 2] : prev[0];
  possible = possible && end > A(0);
  if (possible) log_likelihood += math::log(end);
  // Backward, normalised at every frame (only ratios within a frame matter below).
  const int64_t last = steps - 1;
  for (int64_t s = 0; possible && s < states; ++s) {
    beta[last * states + s] = s >= states - 2 ? y[last * classes + l.At(s)] : A(0);
  }
  for (int64_t t = last - 1; possible && t >= 0; --t) {
    const A* next = beta + (t + 1) * states;
    A* cur = beta + t * states;
    A scale = A(0);
    for (int64_t s = 0; s < states; ++s) {
      A v = next[s];
      if (s + 1 < states) v += next[s + 1];
      if (s + 2 < states && l.CanSkip(s + 2)) v += next[s + 2];
      scale += (cur[s] = v * y[t * classes + l.At(s)]);
    }
    for (int64_t s = 0; s < states; ++s) cur[s] /= scale;
  }
  for (int64_t t = 0; t < steps; ++t) {
    T* gt = grad + t * x_stride;
    if (!possible) {
      for (int64_t c = 0; c < classes; ++c) gt[c] = Store<T>(compute_t<T>(0));
      continue;
    }
    for (int64_t c = 0; c < classes; ++c) acc[c] = A(0);
    A total = A(0);
    for (int64_t s = 0; s < states; ++s) {
      const A occupancy = alpha_in[t * states + s] * beta[t * states + s];
      acc[l.At(s)] += occupancy;
      total += occupancy;
    }
    for (int64_t c = 0; c < classes; ++c) {
      gt[c] = Store<T>(static_cast<compute_t<T>>(y[t * classes + c] - acc[c] / total));
    }
  }
  return possible ? -log_likelihood : limits::Infinity<A>();
}

}  // namespace opforge
