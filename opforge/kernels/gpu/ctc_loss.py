"""GPU kernel of CTCLoss: ``CtcLossKernel<T>`` of ``csrc/kernels/cuda/ctc_loss.cu``, a thread per sequence with the
CPU's math (``functors/ctc.h``). The sparse labels and the sequence lengths are read back to the host (a
synchronisation), checked as the CPU checks them, and laid out densely for the launch."""

from __future__ import annotations

import numpy as np

from opforge.errors import KernelError
from opforge.kernels.gpu.cuda import CudaKernel, ctype
from opforge.kernels.gpu.elementwise import mirror_cpu_kernels
from opforge.kernels.gpu.fill import fill
from opforge.kernels.gpu.support import launch_1d

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


def _ctc_loop(spec, function, kernel):
    device, runtime = spec.device, spec.device.runtime
    time, batch, classes = spec.in_shapes[0]
    attrs = spec.attrs
    merge = bool(attrs.get("ctc_merge_repeated", True))
    np_dtype = spec.entry.attr.outputs[0].np_dtype

    def run(arrays):
        loss, grad = device.empty((batch,), np_dtype), device.empty((time, batch, classes), np_dtype)
        fill(device, grad, np.zeros((), np_dtype))
        labels = dense_labels(
            spec.op_name,
            runtime.to_host(arrays[1]),
            runtime.to_host(arrays[2]),
            batch,
            classes - 1,
            bool(attrs.get("preprocess_collapse_repeated", False)),
        )
        seq_len = runtime.to_host(arrays[3]).reshape(-1)
        lengths = np.array([len(seq) for seq in labels], np.int64)
        for b, seq in enumerate(labels):
            if not 0 <= seq_len[b] <= time:
                raise KernelError(
                    f"For '{spec.op_name}', sequence_length[{b}] must be in [0, {time}], but got {int(seq_len[b])}."
                )
            needed = _required_frames(seq, merge)
            if needed > seq_len[b]:
                if not attrs.get("ignore_longer_outputs_than_inputs", False):
                    raise KernelError(
                        f"For '{spec.op_name}', the labels of batch {b} need {needed} frames, but sequence_length[{b}] "
                        f"is {int(seq_len[b])} (ignore_longer_outputs_than_inputs=True gives them loss 0)."
                    )
                lengths[b] = -1
        max_labels = max([len(seq) for seq in labels] + [0])
        dense = np.zeros((batch, max(max_labels, 1)), np.int32)
        for b, seq in enumerate(labels):
            dense[b, : len(seq)] = seq
        states = 2 * max_labels + 1
        # work rows in double: the softmax [T, C], alpha_in and beta [T, 2L + 1], prev [2L + 1], the sums [C]
        sizes_of = (time * classes, time * states, time * states, states, classes)
        work = [device.empty((max(batch * n, 1),), np.float64) for n in sizes_of]
        sizes = (np.int64(batch), np.int64(classes), np.int64(max_labels), np.int64(time), np.int32(merge))
        labels_dev, lengths_dev = runtime.from_host(dense), runtime.from_host(lengths)
        args = (arrays[0], labels_dev, lengths_dev, arrays[3], loss, grad, *work)
        launch_1d(runtime, function, batch, (*args, *sizes))
        return loss, grad

    return run


mirror_cpu_kernels(
    "CTCLoss", lambda attr: CudaKernel(_SOURCE, f"opforge::cuda::CtcLossKernel<{ctype(attr.inputs[0])}>", _ctc_loop)
)
