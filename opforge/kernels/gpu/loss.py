"""GPU kernels of SoftmaxCrossEntropyWithLogits and SparseSoftmaxCrossEntropyWithLogits (both modes
of ``is_grad``): the kernels of ``csrc/kernels/cuda/loss.cu`` for every KernelAttr the CPU registers:
rows of at least ``ROW_BLOCK_MIN`` classes take a block each (the ``*RowsKernel`` kernels: online max and
sum merged by warp shuffles and shared memory), shorter rows a thread each. The sparse loss's mean over
rows runs the passes of ``reduce.cuh``.

Labels outside [0, C) are an error, as on the CPU: the labels are read back to the host and checked
before the launch (a synchronisation; the kernels also never read outside a row).
"""

from __future__ import annotations

import functools

import numpy as np

from opforge.errors import KernelError
from opforge.kernels.gpu.cuda import BLOCK, CudaKernel, ctype, function_for, grid_for
from opforge.kernels.gpu.elementwise import mirror_cpu_kernels
from opforge.kernels.gpu.range_check import checked_indices
from opforge.kernels.gpu.reduce import ReducePlan, chunks_for, passes_for, reduce_kernel
from opforge.kernels.gpu.support import device_launch

__all__ = []

_SOURCE = "loss.cu"
ROW_BLOCK = 256  # threads per row of the *RowsKernel kernels (their kBlock)
ROW_BLOCK_MIN = 64  # rows of this many classes take a block; fewer a thread
_MAX_GRID = 65535


def _row_geometry(runtime, kernel, thread_name: str, n: int, c: int) -> tuple:
    """``(function, grid, block)`` over the n rows: a block per row (the ``thread_name``'s *Rows twin among
    ``kernel``'s helpers) when rows have at least ``ROW_BLOCK_MIN`` classes, else a thread per row."""
    if c >= ROW_BLOCK_MIN:
        return function_for(runtime, kernel, _rows(thread_name)), (min(n, _MAX_GRID), 1, 1), (ROW_BLOCK, 1, 1)
    return function_for(runtime, kernel, thread_name), grid_for(runtime, n), (BLOCK, 1, 1)


def _row_launcher(runtime, kernel, thread_name: str, n: int, c: int):
    """``launch(args)`` over the n rows, as ``_row_geometry`` lays them out."""
    function, grid, block = _row_geometry(runtime, kernel, thread_name, n, c)

    def launch(args):
        if n > 0:
            runtime.launch(function, grid, block, args)

    return launch


def _rows(name: str) -> str:
    """The block-per-row twin of a thread-per-row kernel's name expression."""
    base, _, args = name.partition("<")
    return f"{base.removesuffix('Kernel')}RowsKernel<{args[:-1]}, {ROW_BLOCK}>"


def _sce_loop(spec, function, kernel):
    """``SoftmaxCrossEntropyKernel<T>(logits, labels, loss, backprop, n, c)``."""
    n, c = spec.in_shapes[0]
    row_fn, grid, block = _row_geometry(spec.device.runtime, kernel, kernel.name, n, c)
    params = [("in", 0), ("in", 1), ("out", 0), ("out", 1), np.int64(n), np.int64(c)]
    outputs = [(shape, t.np_dtype) for shape, t in zip(spec.out_shapes[:2], spec.entry.attr.outputs)]
    return device_launch(spec, outputs, [(row_fn, grid, block, 0, params)] if n > 0 else [])


def _checked_labels(device, labels, c: int):
    def error(i, value):
        return KernelError(
            f"For 'SparseSoftmaxCrossEntropyWithLogits', every 'labels' value must be a class index in [0, {c}), "
            f"but got labels[{i}] = {value}."
        )

    return checked_indices(device, labels, c, error)


def _sparse_loop(spec, function, kernel, loss_name: str):
    """``is_grad``: ``SparseSoftmaxCrossEntropyGradKernel<T, L>(logits, labels, grad, n, c)``; else the
    row losses (``loss_name``) and their mean (the RowLossMean passes of ``kernel``)."""
    device, runtime = spec.device, spec.device.runtime
    n, c = spec.in_shapes[0]
    shape, np_dtype = spec.out_shapes[0], spec.entry.attr.outputs[0].np_dtype
    sizes = (np.int64(n), np.int64(c))
    if spec.attrs.get("is_grad", False):
        grad = _row_launcher(runtime, kernel, kernel.name, n, c)

        def run_grad(arrays):
            labels = _checked_labels(device, arrays[1], c)
            out = device.empty(shape, np_dtype)
            grad((arrays[0], labels, out, *sizes))
            return out

        return run_grad

    row_losses = _row_launcher(runtime, kernel, loss_name, n, c)
    mean = passes_for(runtime, _mean_kernel(kernel), np.float64)
    plan = ReducePlan((), ((n, 1),) if n else (), 1, n)
    chunks = chunks_for(runtime, plan)

    def run_loss(arrays):
        out = device.empty(shape, np_dtype)
        losses = device.empty((n,), np.float64)
        if n:
            row_losses((arrays[0], _checked_labels(device, arrays[1], c), losses, *sizes))
        mean.run(device, plan, chunks, losses, runtime.reshape(out, (1,)))
        return out

    return run_loss


def _mean_kernel(kernel: CudaKernel) -> CudaKernel:
    """The RowLossMean passes among ``kernel``'s helpers (after the row losses' and the *Rows kernels')."""
    names = kernel.helpers[3:]
    return CudaKernel(kernel.source, names[0], None, (), names[1:])


def _make_sce(attr):
    name = f"opforge::cuda::SoftmaxCrossEntropyKernel<{ctype(attr.inputs[0])}>"
    return CudaKernel(_SOURCE, name, _sce_loop, (), (_rows(name),))


def _make_sparse(attr):
    t, label = ctype(attr.inputs[0]), ctype(attr.inputs[1])
    loss_name = f"opforge::cuda::SparseSoftmaxCrossEntropyLossKernel<{t}, {label}>"
    grad_name = f"opforge::cuda::SparseSoftmaxCrossEntropyGradKernel<{t}, {label}>"
    mean = reduce_kernel(_SOURCE, f"opforge::cuda::RowLossMean<{t}>", "double", t, None)
    return CudaKernel(
        _SOURCE,
        grad_name,
        functools.partial(_sparse_loop, loss_name=loss_name),
        (),
        (loss_name, _rows(grad_name), _rows(loss_name), mean.name, *mean.helpers),
    )


mirror_cpu_kernels("SoftmaxCrossEntropyWithLogits", _make_sce)
mirror_cpu_kernels("SparseSoftmaxCrossEntropyWithLogits", _make_sparse)
