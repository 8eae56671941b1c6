"""GPU kernel of CTCLoss (``csrc/kernels/cuda/ctc_loss.cu``), launched from C with no read-back:
``CtcLayoutKernel`` checks the sparse labels and the sequence lengths on the device and lays them out row after
row (``CtcLayout`` of ``functors/ctc.h``, the CPU kernel's first step), then ``CtcLossKernel<T>`` takes a thread
per sequence with the CPU's math. A call the layout flags raises the CPU kernel's error after the launches, its
message made here from the inputs copied to the host (``host_error``)."""

from __future__ import annotations

import numpy as np

from opforge.errors import KernelError
from opforge.kernels.gpu.cuda import CudaKernel, ctype, function_for
from opforge.kernels.gpu.elementwise import mirror_cpu_kernels
from opforge.kernels.gpu.fill import fill_steps
from opforge.kernels.gpu.range_check import flag_word, raise_flagged
from opforge.kernels.gpu.support import StepPlan, output_specs

_SOURCE = "ctc_loss.cu"


def _required_frames(labels: list, merge: bool) -> int:
    return len(labels) + (sum(a == b for a, b in zip(labels, labels[1:])) if merge else 0)


def dense_labels(op_name: str, indices: np.ndarray, values: np.ndarray, batch: int, blank: int, collapse: bool):
    """Each sequence's labels from the sparse (indices, values) pair, checked as the CPU kernel checks them: a
    value at or above the blank is padding that ends its row (MindSpore's kernels read it so)."""
    rows = [[] for _ in range(batch)]
    for i, ((b, pos), v) in enumerate(zip(indices.reshape(-1, 2).tolist(), values.tolist())):
        if not 0 <= b < batch:
            raise KernelError(
                f"For '{op_name}', labels_indices[{i}] names batch {b}, but the batch has {batch} sequences."
            )
        if v < 0:
            raise KernelError(
                f"For '{op_name}', labels_values[{i}] must be in [0, {blank}) (the last class, {blank}, is the blank; "
                f"values at or above it pad the end of a row), but got {v}."
            )
        rows[b].append((pos, i, v))
    labels = []
    for b, row in enumerate(rows):
        row.sort()
        seq, padding_from = [], None
        for k, (pos, i, v) in enumerate(row):
            if pos != k:
                raise KernelError(
                    f"For '{op_name}', the labels of batch {b} must sit at positions 0, 1, ..., {len(row) - 1} of "
                    f"labels_indices, but position {pos} is there."
                )
            if v >= blank:
                padding_from = pos if padding_from is None else padding_from
                continue
            if padding_from is not None:
                raise KernelError(
                    f"For '{op_name}', labels_values[{i}] = {v} (batch {b}, position {pos}) follows the padding of its "
                    f"row (a value at or above the blank, {blank}, at position {padding_from}): such values may only "
                    f"end a row's labels."
                )
            if not (collapse and seq and seq[-1] == v):
                seq.append(v)
        labels.append(seq)
    return labels


def host_error(spec, indices, values, seq_len) -> KernelError:
    """The CPU kernel's error for a call ``CtcLayoutKernel`` flagged, from its inputs on the host."""
    time, batch, classes = spec.in_shapes[0]
    attrs = spec.attrs
    merge = bool(attrs.get("ctc_merge_repeated", True))
    collapse = bool(attrs.get("preprocess_collapse_repeated", False))
    try:
        labels = dense_labels(spec.op_name, indices, values, batch, classes - 1, collapse)
    except KernelError as error:
        return error
    seq_len = seq_len.reshape(-1)
    for b, seq in enumerate(labels):
        if not 0 <= seq_len[b] <= time:
            return KernelError(
                f"For '{spec.op_name}', sequence_length[{b}] must be in [0, {time}], but got {int(seq_len[b])}."
            )
        needed = _required_frames(seq, merge)
        if needed > seq_len[b] and not attrs.get("ignore_longer_outputs_than_inputs", False):
            return KernelError(
                f"For '{spec.op_name}', the labels of batch {b} need {needed} frames, but sequence_length[{b}] "
                f"is {int(seq_len[b])} (ignore_longer_outputs_than_inputs=True gives them loss 0)."
            )
    return KernelError(f"For '{spec.op_name}', the labels or sequence lengths are out of range.")


def _ctc_loop(spec, function, kernel):
    """Zero the gradient, ``CtcLayoutKernel`` (the labels checked and laid out on the device), then
    ``CtcLossKernel<T>``, a thread per sequence; a bad call raises the CPU's error after the launches."""
    time, batch, classes = spec.in_shapes[0]
    n = spec.in_shapes[2][0] if spec.in_shapes[2] else 0
    attrs = spec.attrs
    outputs = output_specs(spec)
    plan = StepPlan(spec.device.runtime, np.float64)
    plan.steps += fill_steps(plan.runtime, outputs[1][0], outputs[1][1], 0, ("out", 1))
    labels, start, length = (
        plan.temp((max(n, 1),), np.int32),
        plan.temp((batch,), np.int64),
        plan.temp((batch,), np.int64),
    )
    states = plan.temp((batch + 1,), np.int64)
    word = flag_word(plan, 1)
    flags = (attrs.get("preprocess_collapse_repeated", False), attrs.get("ctc_merge_repeated", True))
    flags += (attrs.get("ignore_longer_outputs_than_inputs", False),)
    layout = function_for(plan.runtime, kernel, kernel.helpers[0])
    sizes = (np.int64(n), np.int64(batch), np.int64(time), np.int32(classes - 1), *(np.int32(bool(f)) for f in flags))
    plan.kernel(layout, 1, [("in", 1), ("in", 2), ("in", 3), labels, start, length, states, word, *sizes])
    # work rows in double: the softmax [T, C] per sequence, alpha_in and beta [T] rows of every sequence's
    # states (2 n + batch at most), prev a row of them, the sums [C] per sequence
    all_states = 2 * n + batch
    work = [plan.temp((max(size, 1),)) for size in (batch * time * classes, time * all_states, time * all_states)]
    work += [plan.temp((max(all_states, 1),)), plan.temp((max(batch * classes, 1),))]
    params = [("in", 0), labels, start, length, states, ("in", 3), ("out", 0), ("out", 1), *work]
    plan.kernel(function, batch, [*params, np.int64(batch), np.int64(classes), np.int64(time), np.int32(flags[1])])
    raise_flagged(plan, word, 1, lambda _, host: host_error(spec, *host), (1, 2, 3))
    return plan.launch(spec, outputs)


mirror_cpu_kernels(
    "CTCLoss",
    lambda attr: CudaKernel(
        _SOURCE,
        f"opforge::cuda::CtcLossKernel<{ctype(attr.inputs[0])}>",
        _ctc_loop,
        helpers=("opforge::cuda::CtcLayoutKernel",),
    ),
)
