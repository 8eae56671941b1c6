"""Sweep record (see op_db.py) of CTCLoss (primitives/ctc_ops.py; kernels csrc/kernels/cpu/ctc_loss.cc and
cuda/ctc_loss.cu, the math of functors/ctc.h). The reference runs TensorFlow's recursions in probability space
in float64 (no logarithms), an independent form of the kernels' log-space ones; tests/test_ctc_loss.py checks
it against the sum over every alignment."""

from __future__ import annotations

import numpy as np
from op_db import Arg, ErrorInput, OpRecord, Sample, _t

from opforge import Tensor, ops
from opforge import dtype as mstype
from opforge.errors import KernelError

# (max_time, batch, classes) and each sequence's (frames, labels).
_CASES = [
    ((5, 2, 4), [(5, [0, 1]), (3, [2])]),
    ((8, 3, 6), [(8, [1, 1, 3]), (6, [4, 0, 2, 2]), (2, [])]),
    ((1, 1, 2), [(1, [0])]),
    ((3, 2, 1), [(3, []), (0, [])]),  # the blank only
    ((4, 0, 3), []),
    ((6, 2, 5), [(6, [3, 3, 3]), (5, [1, 2, 1, 2])]),
]


def _samples(record, prim, ins, outs, rng):
    for (time, batch, classes), seqs in _CASES:
        labels = [list(seq) for _, seq in seqs]  # repeats too: each variant reads them its way
        x = rng.uniform(-2.0, 2.0, size=(time, batch, classes)).astype(ins[0].np_dtype)
        indices = np.array([(b, k) for b, seq in enumerate(labels) for k in range(len(seq))], np.int64).reshape(-1, 2)
        values = np.array([v for seq in labels for v in seq], np.int32)
        seq_len = np.array([f for f, _ in seqs], np.int32)
        yield Sample((x, indices, values, seq_len), desc=f"x{[time, batch, classes]} labels{labels}")
    # the model zoo's dense labels: every (batch, position) listed, rows padded with the blank or above it
    x = rng.uniform(-2.0, 2.0, size=(6, 3, 5)).astype(ins[0].np_dtype)
    dense = np.array([[0, 1, 4], [2, 4, 9], [4, 4, 4]], np.int32)
    indices = np.array([(b, k) for b in range(3) for k in range(3)], np.int64)
    yield Sample((x, indices, dense.reshape(-1), np.array([6, 4, 5], np.int32)), desc="padded rows")
    if prim.ignore_longer_outputs_than_inputs:  # a sequence too short for its labels: loss 0
        x = rng.uniform(-2.0, 2.0, size=(3, 2, 3)).astype(ins[0].np_dtype)
        indices = np.array([[0, 0], [0, 1], [0, 2], [1, 0]], np.int64)
        yield Sample((x, indices, np.array([0, 1, 0, 1], np.int32), np.array([2, 3], np.int32)), desc="too long")


def _labels_of(indices, values, batch, blank, collapse):
    """Each row's labels; values at or above the blank pad a row's end (MindSpore's kernels' rule)."""
    labels = [[] for _ in range(batch)]
    for (b, _), v in sorted(zip(map(tuple, indices.tolist()), values.tolist())):
        if v < blank and not (collapse and labels[b] and labels[b][-1] == v):
            labels[b].append(v)
    return labels


def _ctc_reference(prim, x, indices, values, seq_len):
    x = x.astype(np.float64)
    time, batch, classes = x.shape
    blank = classes - 1
    loss, grad = np.zeros(batch), np.zeros_like(x)
    for b, labels in enumerate(_labels_of(indices, values, batch, blank, prim.preprocess_collapse_repeated)):
        steps = int(seq_len[b])
        ext = [blank] + [v for label in labels for v in (label, blank)]
        s_count = len(ext)
        merge = prim.ctc_merge_repeated
        needed = len(labels) + (sum(a == c for a, c in zip(labels, labels[1:])) if merge else 0)
        if needed > steps:  # the sample's ignore_longer case
            continue
        y = np.exp(x[:steps, b] - x[:steps, b].max(axis=1, keepdims=True))
        y /= y.sum(axis=1, keepdims=True)
        if steps == 0:
            continue
        skip = [s >= 2 and ext[s] != blank and not (merge and ext[s] == ext[s - 2]) for s in range(s_count)]
        alpha, beta = np.zeros((steps, s_count)), np.zeros((steps, s_count))
        alpha[0, : min(2, s_count)] = y[0, ext[: min(2, s_count)]]
        for t in range(1, steps):
            for s in range(s_count):
                a = (
                    alpha[t - 1, s]
                    + (alpha[t - 1, s - 1] if s >= 1 else 0.0)
                    + (alpha[t - 1, s - 2] if skip[s] else 0.0)
                )
                alpha[t, s] = a * y[t, ext[s]]
        beta[steps - 1, max(s_count - 2, 0) :] = y[steps - 1, ext[max(s_count - 2, 0) :]]
        for t in range(steps - 2, -1, -1):
            for s in range(s_count):
                v = beta[t + 1, s] + (beta[t + 1, s + 1] if s + 1 < s_count else 0.0)
                v += beta[t + 1, s + 2] if s + 2 < s_count and skip[s + 2] else 0.0
                beta[t, s] = v * y[t, ext[s]]
        p = alpha[steps - 1, -1] + (alpha[steps - 1, -2] if s_count >= 2 else 0.0)
        loss[b] = -np.log(p)
        for t in range(steps):
            occupancy = np.zeros(classes)
            for s in range(s_count):
                if y[t, ext[s]] > 0:  # a class of probability 0 (a -inf logit) occupies nothing, not 0 / 0
                    occupancy[ext[s]] += alpha[t, s] * beta[t, s] / y[t, ext[s]]
            grad[t, b] = y[t] - occupancy / p
    return loss, grad


def _errors():
    x = Tensor(np.zeros((4, 2, 3), np.float32))
    idx, seq = Tensor(np.array([[0, 0], [1, 0]], np.int64)), Tensor(np.array([4, 4], np.int32))
    ctc = ops.CTCLoss()
    return [
        ErrorInput("2-d-x", lambda: ctc(_t((4, 3)), idx, _t((2,), mstype.int32), seq), ValueError, "3-D"),
        ErrorInput(
            "negative-label", lambda: ctc(x, idx, Tensor(np.array([0, -1], np.int32)), seq), KernelError, "blank"
        ),
        ErrorInput(  # values at or above the blank only pad the end of a row (MindSpore's kernels)
            "label-after-padding",
            lambda: ctc(x, Tensor(np.array([[0, 0], [0, 1]], np.int64)), Tensor(np.array([2, 0], np.int32)), seq),
            KernelError,
            "follows the padding",
        ),
        ErrorInput(
            "too-long",
            lambda: ctc(x, Tensor(np.array([[0, k] for k in range(5)], np.int64)), Tensor(np.zeros(5, np.int32)), seq),
            KernelError,
            "need 9 frames",
        ),
        ErrorInput("float-values", lambda: ctc(x, idx, _t((2,)), seq), TypeError, "labels_values"),
        ErrorInput(
            "seq-len-shape",
            lambda: ctc(x, idx, _t((2,), mstype.int32), _t((3,), mstype.int32)),
            ValueError,
            "sequence_length",
        ),
        ErrorInput("attr", lambda: ops.CTCLoss(ctc_merge_repeated=1), TypeError, "ctc_merge_repeated"),
    ]


RECORDS = [
    OpRecord(
        "CTCLoss",
        {
            "": ops.CTCLoss,
            "ctc_merge_repeated=False": lambda: ops.CTCLoss(ctc_merge_repeated=False),
            "preprocess_collapse_repeated": lambda: ops.CTCLoss(preprocess_collapse_repeated=True),
            "ignore_longer": lambda: ops.CTCLoss(ignore_longer_outputs_than_inputs=True),
        },
        _samples,
        _ctc_reference,
        args=(Arg(), Arg(), Arg(), Arg()),
        tols={"Float16": (2e-3, 2e-3), "Float32": (2e-5, 2e-6)},
        error_inputs=_errors,
    ),
]
