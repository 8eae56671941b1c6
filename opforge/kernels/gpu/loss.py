"""GPU kernels of SoftmaxCrossEntropyWithLogits and SparseSoftmaxCrossEntropyWithLogits (both modes
of ``is_grad``): the kernels of ``csrc/kernels/cuda/loss.cu`` for every KernelAttr the CPU registers:
rows of at least ``ROW_BLOCK_MIN`` classes take a block each (the ``*RowsKernel`` kernels: online max and
sum merged by warp shuffles and shared memory), shorter rows a thread each. The sparse loss's mean over
rows runs the passes of ``reduce.cuh``.

Labels outside [0, C) are an error, as on the CPU: checked on the device as the kernels read them, the
verdict read back after the launches (``range_check.py``; the kernels also never read outside a row).
"""

from __future__ import annotations

import functools

import numpy as np

from opforge.errors import KernelError
from opforge.kernels.gpu.cuda import BLOCK, CudaKernel, ctype, function_for, grid_for
from opforge.kernels.gpu.elementwise import mirror_cpu_kernels
from opforge.kernels.gpu.range_check import checked_steps
from opforge.kernels.gpu.reduce import ReducePlan, chunks_for, passes_for, reduce_kernel
from opforge.kernels.gpu.support import StepPlan, device_launch

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


def _label_error(c: int):
    def error(i, value):
        return KernelError(
            f"For 'SparseSoftmaxCrossEntropyWithLogits', every 'labels' value must be a class index in [0, {c}), "
            f"but got labels[{i}] = {value}."
        )

    return error


def _sparse_loop(spec, function, kernel, loss_name: str):
    """``is_grad``: ``SparseSoftmaxCrossEntropyGradKernel<T, L>(logits, labels, grad, n, c)``; else the
    row losses (``loss_name``) and their mean (the RowLossMean passes of ``kernel``). The labels are checked
    as the kernels read them (``checked_steps``)."""
    runtime = spec.device.runtime
    n, c = spec.in_shapes[0]
    shape, np_dtype = spec.out_shapes[0], spec.entry.attr.outputs[0].np_dtype
    sizes = (np.int64(n), np.int64(c))
    plan = StepPlan(runtime, np_dtype)
    labels = ("in", 1)
    if n:
        labels = checked_steps(plan, labels, n, spec.entry.attr.inputs[1].np_dtype, c, _label_error(c))
    if spec.attrs.get("is_grad", False):
        _add_rows(plan, kernel, kernel.name, n, c, [("in", 0), labels, ("out", 0), *sizes])
        return plan.launch(spec, [(shape, np_dtype)])
    losses = plan.temp((n,), np.float64)
    _add_rows(plan, kernel, loss_name, n, c, [("in", 0), labels, losses, *sizes])
    mean = passes_for(runtime, _mean_kernel(kernel), np.float64)
    rows = ReducePlan((), ((n, 1),) if n else (), 1, n)
    plan.steps += mean.steps(rows, chunks_for(runtime, rows), losses, ("out", 0), plan.temps)
    return plan.launch(spec, [(shape, np_dtype)])


def _add_rows(plan: StepPlan, kernel, thread_name: str, n: int, c: int, params: list) -> None:
    """The launch over the n rows (``_row_geometry``), none for no rows."""
    if n > 0 and c > 0:  # (no classes: every label is out of range, and nothing is read)
        plan.steps.append((*_row_geometry(plan.runtime, kernel, thread_name, n, c), 0, params))


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
