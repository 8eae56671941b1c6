"""GPU kernels of SoftmaxCrossEntropyWithLogits and SparseSoftmaxCrossEntropyWithLogits (both modes
of ``is_grad``): the kernels of ``csrc/kernels/cuda/loss.cu``, one thread per row, for every
KernelAttr the CPU registers. The sparse loss's mean over rows runs the passes of ``reduce.cuh``.

Labels outside [0, C) are an error, as on the CPU: the labels are read back to the host and checked
before the launch (a synchronisation; the kernels also never read outside a row).
"""

from __future__ import annotations

import functools

import numpy as np

from opforge.errors import KernelError
from opforge.kernels.gpu.cuda import BLOCK, CudaKernel, ctype, function_for, grid_for
from opforge.kernels.gpu.elementwise import mirror_cpu_kernels
from opforge.kernels.gpu.reduce import ReducePlan, chunks_for, passes_for, reduce_kernel

__all__ = []

_SOURCE = "loss.cu"


def _launch_rows(runtime, function, n: int, args: tuple) -> None:
    if n > 0:
        runtime.launch(function, grid_for(runtime, n), (BLOCK, 1, 1), args)


def _sce_loop(spec, function, kernel):
    """``SoftmaxCrossEntropyKernel<T>(logits, labels, loss, backprop, n, c)``."""
    device, runtime = spec.device, spec.device.runtime
    n, c = spec.in_shapes[0]
    outs = spec.entry.attr.outputs
    sizes = (np.int64(n), np.int64(c))

    def run(arrays):
        loss = device.empty(spec.out_shapes[0], outs[0].np_dtype)
        backprop = device.empty(spec.out_shapes[1], outs[1].np_dtype)
        _launch_rows(runtime, function, n, (arrays[0], arrays[1], loss, backprop, *sizes))
        return loss, backprop

    return run


def _check_labels(runtime, labels, n: int, c: int) -> None:
    host = runtime.to_host(labels)
    bad = np.flatnonzero((host < 0) | (host >= c))
    if bad.size:
        i = int(bad[0])
        raise KernelError(
            f"For 'SparseSoftmaxCrossEntropyWithLogits', every 'labels' value must be a class index in [0, {c}), "
            f"but got labels[{i}] = {int(host[i])}."
        )


def _sparse_loop(spec, function, kernel, loss_name: str):
    """``is_grad``: ``SparseSoftmaxCrossEntropyGradKernel<T, L>(logits, labels, grad, n, c)``; else the
    row losses (``loss_name``) and their mean (the RowLossMean passes of ``kernel``)."""
    device, runtime = spec.device, spec.device.runtime
    n, c = spec.in_shapes[0]
    shape, np_dtype = spec.out_shapes[0], spec.entry.attr.outputs[0].np_dtype
    sizes = (np.int64(n), np.int64(c))
    if spec.attrs.get("is_grad", False):
        grad = function_for(runtime, kernel)

        def run_grad(arrays):
            if n:
                _check_labels(runtime, arrays[1], n, c)
            out = device.empty(shape, np_dtype)
            _launch_rows(runtime, grad, n, (arrays[0], arrays[1], out, *sizes))
            return out

        return run_grad

    row_losses = function_for(runtime, kernel, loss_name)
    mean = passes_for(runtime, _mean_kernel(kernel), np.float64)
    plan = ReducePlan((), ((n, 1),) if n else (), 1, n)
    chunks = chunks_for(runtime, plan)

    def run_loss(arrays):
        out = device.empty(shape, np_dtype)
        losses = device.empty((n,), np.float64)
        if n:
            _check_labels(runtime, arrays[1], n, c)
            _launch_rows(runtime, row_losses, n, (arrays[0], arrays[1], losses, *sizes))
        mean.run(device, plan, chunks, losses, runtime.reshape(out, (1,)))
        return out

    return run_loss


def _mean_kernel(kernel: CudaKernel) -> CudaKernel:
    """The RowLossMean passes among ``kernel``'s helpers (after the grad kernel's name and the row losses')."""
    names = kernel.helpers[1:]
    return CudaKernel(kernel.source, names[0], None, (), names[1:])


def _make_sce(attr):
    return CudaKernel(_SOURCE, f"opforge::cuda::SoftmaxCrossEntropyKernel<{ctype(attr.inputs[0])}>", _sce_loop)


def _make_sparse(attr):
    t, label = ctype(attr.inputs[0]), ctype(attr.inputs[1])
    loss_name = f"opforge::cuda::SparseSoftmaxCrossEntropyLossKernel<{t}, {label}>"
    mean = reduce_kernel(_SOURCE, f"opforge::cuda::RowLossMean<{t}>", "double", t, None)
    return CudaKernel(
        _SOURCE,
        f"opforge::cuda::SparseSoftmaxCrossEntropyGradKernel<{t}, {label}>",
        functools.partial(_sparse_loop, loss_name=loss_name),
        (),
        (loss_name, mean.name, *mean.helpers),
    )


mirror_cpu_kernels("SoftmaxCrossEntropyWithLogits", _make_sce)
mirror_cpu_kernels("SparseSoftmaxCrossEntropyWithLogits", _make_sparse)
