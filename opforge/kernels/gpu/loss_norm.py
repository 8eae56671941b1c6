"""GPU kernels of L2Loss, SmoothL1Loss, SmoothL1LossGrad, BCEWithLogitsLoss, NLLLoss and NLLLossGrad: the kernels of
``csrc/kernels/cuda/loss_norm.cu`` (the math of ``opforge/functors/loss.h``, shared with the CPU
kernels), for every KernelAttr the CPU registers. A reduced loss writes its terms (in double) to a
device workspace, one thread per element, and the passes of ``reduce.cuh`` add them up. NLLLoss's labels
are checked on the device as its kernels read them (``range_check.py``): one out of ``[0, C)`` that is not
the ignore_index raises after the launches."""

from __future__ import annotations

import math

import numpy as np

from opforge.errors import KernelError
from opforge.kernels.gpu.cuda import CudaKernel, ctype, function_for
from opforge.kernels.gpu.elementwise import mirror_cpu_kernels
from opforge.kernels.gpu.range_check import checked_steps
from opforge.kernels.gpu.reduce import ReducePlan, chunks_for, passes_for, reduce_kernel
from opforge.kernels.gpu.support import StepPlan, device_launch, input_params, output_specs, step_1d

__all__ = []

_SOURCE = "loss_norm.cu"


def _reduced_loss(spec, kernel, first: int, terms, params: list):
    """``run`` of a reduced loss: ``terms`` writes the n terms (in double) to ``("tmp", 0)`` (``params``), then the
    TermSum / TermMean passes among ``kernel``'s helpers from ``first`` add them up into the 0-d output."""
    runtime = spec.device.runtime
    n = math.prod(spec.in_shapes[0])
    names = kernel.helpers[first : first + 4]  # ReduceKernel, Partial, Combine, Finish
    passes = passes_for(runtime, CudaKernel(kernel.source, names[0], None, (), names[1:]), np.float64)
    plan = ReducePlan((), ((n, 1),) if n else (), 1, n)
    temps = [((n,), np.float64)]
    steps = step_1d(runtime, terms, n, params)
    steps += passes.steps(plan, chunks_for(runtime, plan), ("tmp", 0), ("out", 0), temps)
    return device_launch(spec, [((), spec.entry.attr.outputs[0].np_dtype)], steps, temps)


def _l2_loop(spec, function, kernel):
    n = math.prod(spec.in_shapes[0])
    return _reduced_loss(spec, kernel, 0, function, [("in", 0), ("tmp", 0), np.int64(n)])


def _smooth_l1_loop(spec, function, kernel):
    runtime = spec.device.runtime
    n = math.prod(spec.in_shapes[0])
    beta = np.float64(spec.attrs.get("beta", 1.0))
    reduction = spec.attrs.get("reduction", "none")
    if reduction == "none":
        elementwise = function_for(runtime, kernel, kernel.helpers[0])
        params = [("in", 0), ("in", 1), ("out", 0), np.int64(n), beta]
        outputs = output_specs(spec)
        return device_launch(spec, outputs, step_1d(runtime, elementwise, n, params))
    first = 1 if reduction == "sum" else 1 + len(kernel.helpers[1:]) // 2
    return _reduced_loss(spec, kernel, first, function, [("in", 0), ("in", 1), ("tmp", 0), np.int64(n), beta])


def _smooth_l1_grad_loop(spec, function, kernel):
    n = math.prod(spec.in_shapes[0])
    beta = np.float64(spec.attrs.get("beta", 1.0))
    reduction = {"none": 0, "sum": 1, "mean": 2}[spec.attrs.get("reduction", "none")]
    scale = np.float64(1.0 / max(n, 1) if reduction == 2 else 1.0)
    params = [*input_params(spec), ("out", 0), np.int64(n), beta, np.int32(reduction), scale]
    outputs = output_specs(spec)
    return device_launch(spec, outputs, step_1d(spec.device.runtime, function, n, params))


def _passes(reducer: str, t: str) -> tuple:
    k = reduce_kernel(_SOURCE, f"opforge::cuda::{reducer}<{t}>", "double", t, None)
    return (k.name, *k.helpers[:3])  # the grid-stride passes: a sum of terms is one output


def _make_l2(attr):
    t = ctype(attr.inputs[0])
    return CudaKernel(_SOURCE, f"opforge::cuda::L2LossTermsKernel<{t}>", _l2_loop, (), _passes("TermSum", t))


def _make_smooth_l1(attr):
    t = ctype(attr.inputs[0])
    helpers = (f"opforge::cuda::SmoothL1NoneKernel<{t}>", *_passes("TermSum", t), *_passes("TermMean", t))
    return CudaKernel(_SOURCE, f"opforge::cuda::SmoothL1TermsKernel<{t}>", _smooth_l1_loop, (), helpers)


def _make_smooth_l1_grad(attr):
    t = ctype(attr.inputs[0])
    return CudaKernel(_SOURCE, f"opforge::cuda::SmoothL1LossGradKernel<{t}>", _smooth_l1_grad_loop)


def _bce_loop(spec, function, kernel):
    """``BceTermsKernel<T>(logits, label, weight, pos_weight, terms, n)`` (or ``BceNoneKernel``): the four in
    one shape (the primitive broadcasts weight and pos_weight), as the CPU kernel requires."""
    runtime, logits = spec.device.runtime, list(spec.in_shapes[0])
    for name, shape in zip(("label", "weight", "pos_weight"), spec.in_shapes[1:]):
        if list(shape) != logits:
            raise KernelError(
                f"For '{spec.op_name}', the '{name}' must have the shape of 'logits' {logits} (after broadcasting), "
                f"but got {list(shape)}."
            )
    n = math.prod(logits)
    reduction = spec.attrs.get("reduction", "mean")
    if reduction == "none":
        elementwise = function_for(runtime, kernel, kernel.helpers[0])
        outputs = output_specs(spec)
        params = [*input_params(spec), ("out", 0), np.int64(n)]
        return device_launch(spec, outputs, step_1d(runtime, elementwise, n, params))
    params = [*input_params(spec), ("tmp", 0), np.int64(n)]
    return _reduced_loss(spec, kernel, 1 if reduction == "sum" else 5, function, params)


def _nll_labels(plan, spec, where: int, n: int, c: int, ignore: int) -> tuple:
    """The param of the labels (input ``where``) the kernel reads: their checked copy (``range_check``)."""
    if not n:
        return ("in", where)

    def error(i, value):
        return KernelError(
            f"For '{spec.op_name}', every 'labels' value must be in [0, {c}) or the ignore_index {ignore}, "
            f"but got labels[{i}] = {value}."
        )

    dtype = spec.entry.attr.inputs[where].np_dtype
    info = np.iinfo(dtype)  # an ignore_index no label can equal: none to let through
    return checked_steps(plan, ("in", where), n, dtype, c, error, ignore if info.min <= ignore <= info.max else None)


def _nll_geometry(spec):
    x = list(spec.in_shapes[0])
    if len(x) not in (1, 2):
        raise KernelError(f"For '{spec.op_name}', the 'logits' must be 1-D or 2-D, but got {x}.")
    return (x[0] if len(x) == 2 else 1), x[-1]


_REDUCTION = {"none": 0, "sum": 1, "mean": 2}


def _nll_loop(spec, function, kernel):
    """``NllLossKernel<T, L>(x, labels, w, loss, total, n, c, ignore, reduction)``: one thread, the rows in order."""
    n, c = _nll_geometry(spec)
    ignore = int(spec.attrs.get("ignore_index", -100))
    reduction = np.int32(_REDUCTION[spec.attrs.get("reduction", "mean")])
    plan = StepPlan(spec.device.runtime, spec.entry.attr.outputs[0].np_dtype)
    labels = _nll_labels(plan, spec, 1, n, c, ignore)
    sizes = (np.int64(n), np.int64(c), np.int64(ignore), reduction)
    plan.kernel(function, 1, [("in", 0), labels, ("in", 2), ("out", 0), ("out", 1), *sizes])
    return plan.launch(spec, output_specs(spec))


def _nll_grad_loop(spec, function, kernel):
    """``NllLossGradKernel<T, L>(dout, labels, w, total, dx, n, c, ignore, reduction)``: a thread per row."""
    n, c = _nll_geometry(spec)
    ignore = int(spec.attrs.get("ignore_index", -100))
    reduction = np.int32(_REDUCTION[spec.attrs.get("reduction", "mean")])
    plan = StepPlan(spec.device.runtime, spec.entry.attr.outputs[0].np_dtype)
    labels = _nll_labels(plan, spec, 2, n, c, ignore)
    sizes = (np.int64(n), np.int64(c), np.int64(ignore), reduction)
    plan.kernel(function, n, [("in", 1), labels, ("in", 3), ("in", 4), ("out", 0), *sizes])
    return plan.launch(spec, output_specs(spec))


def _make_bce(attr):
    t = ctype(attr.inputs[0])
    helpers = (f"opforge::cuda::BceNoneKernel<{t}>", *_passes("TermSum", t), *_passes("TermMean", t))
    return CudaKernel(_SOURCE, f"opforge::cuda::BceTermsKernel<{t}>", _bce_loop, (), helpers)


def _make_nll(attr):
    t, label = ctype(attr.inputs[0]), ctype(attr.inputs[1])
    return CudaKernel(_SOURCE, f"opforge::cuda::NllLossKernel<{t}, {label}>", _nll_loop)


def _make_nll_grad(attr):
    t, label = ctype(attr.inputs[0]), ctype(attr.inputs[2])
    return CudaKernel(_SOURCE, f"opforge::cuda::NllLossGradKernel<{t}, {label}>", _nll_grad_loop)


mirror_cpu_kernels("L2Loss", _make_l2)
mirror_cpu_kernels("BCEWithLogitsLoss", _make_bce)
mirror_cpu_kernels("NLLLoss", _make_nll)
mirror_cpu_kernels("NLLLossGrad", _make_nll_grad)
mirror_cpu_kernels("SmoothL1Loss", _make_smooth_l1)
mirror_cpu_kernels("SmoothL1LossGrad", _make_smooth_l1_grad)
