"""NMSWithMask on the GPU (``csrc/kernels/cuda/nms_with_mask.cu``, the math of ``opforge/functors/nms.h``
shared with the CPU kernel), for every KernelAttr the CPU registers: the boxes ranked by score (a thread per
box), a bit mask of the overlaps of each box with the later ones (a block per 64 x 64 tile), then one block
walks it greedily. The mask takes n x ceil(n / 64) 64-bit words of device memory for n boxes."""

from __future__ import annotations

import numpy as np

from opforge.kernels.gpu.cuda import CudaKernel, ctype, function_for
from opforge.kernels.gpu.elementwise import mirror_cpu_kernels
from opforge.kernels.gpu.support import device_launch, step_1d

_SOURCE = "nms_with_mask.cu"
_TILE = 64  # boxes per mask word (kNmsTile)
_SCAN_BLOCK = 256  # threads of the scan's one block (kBlock): each folds kept rows into words of its own
_MAX_GRID_Y = 65535


def _nms_loop(spec, function, kernel):
    runtime = spec.device.runtime
    n = spec.in_shapes[0][0]
    words = -(-n // _TILE)
    outs = spec.entry.attr.outputs
    threshold = np.float32(np.dtype(outs[0].np_dtype).type(spec.attrs["iou_threshold"]))
    mask_fn, scan_fn = (function_for(runtime, kernel, name) for name in kernel.helpers)
    if words > _MAX_GRID_Y:
        raise ValueError(f"For 'NMSWithMask', the GPU takes at most {_MAX_GRID_Y * _TILE} boxes, but got {n}.")

    outputs = [((n, 5), outs[0].np_dtype), ((n,), outs[1].np_dtype), ((n,), outs[2].np_dtype)]
    boxes, index, keep, mask, removed = ("out", 0), ("out", 1), ("out", 2), ("tmp", 0), ("tmp", 1)
    steps = step_1d(runtime, function, n, [("in", 0), boxes, index, np.int64(n)])
    steps.append((mask_fn, (words, words, 1), (_TILE, 1, 1), 0, [boxes, mask, np.int64(n), np.int64(words), threshold]))
    steps.append((scan_fn, (1, 1, 1), (_SCAN_BLOCK, 1, 1), 0, [mask, removed, keep, np.int64(n), np.int64(words)]))
    return device_launch(spec, outputs, steps, [((n * words,), np.uint64), ((words,), np.uint64)])


def _make(attr):
    t = ctype(attr.inputs[0])
    return CudaKernel(
        _SOURCE,
        f"opforge::cuda::NmsSortKernel<{t}>",
        _nms_loop,
        helpers=(f"opforge::cuda::NmsMaskKernel<{t}>", f"opforge::cuda::NmsScanKernel<{_SCAN_BLOCK}>"),
    )


mirror_cpu_kernels("NMSWithMask", _make)
