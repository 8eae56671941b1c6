"""Gather, GatherNd, the scatters and UnsortedSegmentSum on the GPU: the kernels of
``csrc/kernels/cuda/gather.cu`` for every KernelAttr the CPU registers. Out-of-range indices are an error,
as on the CPU: Gather's indices and the others' index rows are checked on the device as the kernels read them,
the verdict read back after the launches (``range_check.py``: one word, launched from C); a scatter into a
Parameter reads it back before it writes. ScatterUpdate, ScatterNdUpdate and the reducing ScatterR and
ScatterNdR (R: Add, Sub, Mul, Div, Max, Min) write the Parameter in place; TensorScatterUpdate and
TensorScatterR a copy of ``input_x``."""

from __future__ import annotations

import math

import numpy as np

from opforge.errors import KernelError
from opforge.kernels.gpu.cuda import CudaKernel, ctype
from opforge.kernels.gpu.elementwise import mirror_cpu_kernels
from opforge.kernels.gpu.fill import fill_steps
from opforge.kernels.gpu.range_check import checked_row_steps, checked_steps
from opforge.kernels.gpu.support import (
    StepPlan,
    bytes_ctype,
    copy_steps,
    device_launch,
    numel,
    step_1d,
    writes_in_place,
)

__all__ = []

_SOURCE = "gather.cu"
_MAX_DIMS = 8  # kMaxNdIndexDims of functors/gather.h
_ND_DTYPE = np.dtype(
    [("k", np.int64), ("inner", np.int64), ("dim", np.int64, (_MAX_DIMS,)), ("stride", np.int64, (_MAX_DIMS,))],
    align=True,
)


def _gather_loop(spec, function, kernel):
    """``GatherKernel<E, I>(params, indices, out, total, p, n, inner)``."""
    params, indices = list(spec.in_shapes[0]), list(spec.in_shapes[1])
    axis = spec.attrs["axis"] % len(params)
    p, inner, n = params[axis], math.prod(params[axis + 1 :]), math.prod(indices)
    shape, np_dtype = spec.out_shapes[0], spec.entry.attr.outputs[0].np_dtype
    runtime = spec.device.runtime
    total = numel(shape)

    def error(j, value):
        return KernelError(
            f"For 'Gather', every 'input_indices' value must be in [0, {p}), but got input_indices[{j}] = {value}."
        )

    plan = StepPlan(runtime, np_dtype)
    if total:
        indices = checked_steps(plan, ("in", 1), n, spec.entry.attr.inputs[1].np_dtype, p, error)
        if p:  # (an empty axis: every index is out of range, and nothing is read)
            params = [("in", 0), indices, ("out", 0), *(np.int64(v) for v in (total, p, n, inner))]
            plan.kernel(function, total, params)
    return plan.launch(spec, [(shape, np_dtype)])


def _nd_index(op_name, x, indices):
    k = indices[-1]
    nd = np.zeros((), _ND_DTYPE)
    nd["k"], nd["inner"] = k, math.prod(x[k:])
    for d in range(k):
        nd["dim"][d], nd["stride"][d] = x[d], math.prod(x[d + 1 :])
    return nd[()], math.prod(indices[:-1]), k


def _row_error(op_name, rows: int, k: int, x):
    """``error(host)``: the KernelError naming the first index row of ``host`` out of range for ``x``."""

    def error(host):
        host = host.reshape(rows, k)
        bad = (host < 0) | (host >= np.asarray(x[:k]))
        row = int(np.flatnonzero(bad.any(axis=1))[0])
        d = int(np.flatnonzero(bad[row])[0])
        coords = ", ".join(str(int(v)) for v in host[row])
        return KernelError(
            f"For '{op_name}', the index row {row} [{coords}] of 'indices' is out of range for 'x' of shape {x}: "
            f"its coordinate {d} must be in [0, {x[d]})."
        )

    return error


def _checked_rows(plan, spec, nd, rows: int, k: int, x, before_writes=False) -> tuple:
    """The param of the index rows (input 1) a kernel may read: their in-range copy, checked (``range_check``)."""
    if rows == 0 or k == 0:
        return ("in", 1)
    error = _row_error(spec.op_name, rows, k, x)
    dtype = spec.entry.attr.inputs[1].np_dtype
    return checked_row_steps(plan, ("in", 1), rows, nd, dtype, error, before_writes)


def _gather_nd_loop(spec, function, kernel):
    """``GatherNdKernel<E, I>(x, indices, out, total, nd)``."""
    x, indices = list(spec.in_shapes[0]), list(spec.in_shapes[1])
    nd, rows, k = _nd_index(spec.op_name, x, indices)
    shape, np_dtype = spec.out_shapes[0], spec.entry.attr.outputs[0].np_dtype
    total = numel(shape)
    plan = StepPlan(spec.device.runtime, np_dtype)
    reads = _checked_rows(plan, spec, nd, rows, k, x)
    if total and 0 not in x[:k]:  # (an empty dim indexed: every row is out of range, and nothing is read)
        plan.kernel(function, total, [("in", 0), reads, ("out", 0), np.int64(total), nd])
    return plan.launch(spec, [(shape, np_dtype)])


# The reducing scatters' reductions and the functors (functors/arithmetic.h) they fold rows with.
_REDUCERS = {"Add": "AddOp", "Sub": "SubOp", "Mul": "MulOp", "Div": "DivOp", "Max": "MaximumOp", "Min": "MinimumOp"}
# ScatterUpdate and ScatterR index x's first dim: rows of one coordinate.
_ROW_INDEXED = ("ScatterUpdate",) + tuple(f"Scatter{r}" for r in _REDUCERS)


def _scatter_loop(spec, function, kernel):
    """``ScatterNdUpdateKernel<E, I>(updates, indices, x, total, nd)`` (one thread per element) or
    ``ScatterReduceKernel<T, I, F>(updates, indices, x, rows, nd)`` (one per column of the slices) into the
    Parameter (its index rows checked before it is written), or into a copy of ``input_x`` (the Tensor
    scatters)."""
    x, indices = list(spec.in_shapes[0]), list(spec.in_shapes[1])
    nd, rows, k = _nd_index(spec.op_name, x, indices + [1] if spec.op_name in _ROW_INDEXED else indices)
    runtime, op_name = spec.device.runtime, spec.op_name
    reduces = "Update" not in op_name
    total = int(nd["inner"]) if reduces else numel(spec.in_shapes[2])
    size = np.int64(rows if reduces else total)
    dtype = spec.entry.attr.inputs[0]
    plan = StepPlan(runtime, dtype.np_dtype)
    if writes_in_place(spec, 1):
        target, outputs = ("in", 0), [("in", 0)]
    else:
        target, outputs, n = ("out", 0), [(tuple(x), dtype.np_dtype)], numel(x)
        plan.steps += copy_steps(runtime, n, dtype.np_dtype, ("in", 0), target)
    reads = _checked_rows(plan, spec, nd, rows, k, x, before_writes=target == ("in", 0))
    if total and rows and 0 not in x[:k]:
        plan.kernel(function, total, [("in", 2), reads, target, size, nd])
    return plan.launch(spec, outputs)


def _segment_sum_loop(spec, function, kernel):
    """``UnsortedSegmentSumKernel<T, I>(x, ids, out, total, rows, inner)``."""
    x, ids = list(spec.in_shapes[0]), list(spec.in_shapes[1])
    rows, inner = math.prod(ids), math.prod(x[len(ids) :])
    shape, np_dtype = spec.out_shapes[0], spec.entry.attr.outputs[0].np_dtype
    runtime, total = spec.device.runtime, numel(shape)
    if total and not rows:  # no segment gets a row: zeros
        steps = fill_steps(runtime, shape, np_dtype, np.zeros((), np_dtype), ("out", 0))
    else:
        sizes = [np.int64(total), np.int64(rows), np.int64(inner)]
        steps = step_1d(runtime, function, total, [("in", 0), ("in", 1), ("out", 0), *sizes])
    return device_launch(spec, [(shape, np_dtype)], steps)


def _make(template, loop, ctype_of=bytes_ctype, functor=None):
    def make(attr):
        args = [ctype_of(attr.inputs[0]), ctype(attr.inputs[1])] + ([f"opforge::{functor}"] if functor else [])
        return CudaKernel(_SOURCE, f"opforge::cuda::{template}<{', '.join(args)}>", loop)

    return make


mirror_cpu_kernels("Gather", _make("GatherKernel", _gather_loop))
mirror_cpu_kernels("GatherNd", _make("GatherNdKernel", _gather_nd_loop))
for _name in ("ScatterNdUpdate", "TensorScatterUpdate", "ScatterUpdate"):
    mirror_cpu_kernels(_name, _make("ScatterNdUpdateKernel", _scatter_loop))
for _reduction, _functor in _REDUCERS.items():
    for _name in (f"Scatter{_reduction}", f"ScatterNd{_reduction}", f"TensorScatter{_reduction}"):
        mirror_cpu_kernels(_name, _make("ScatterReduceKernel", _scatter_loop, ctype, _functor))
mirror_cpu_kernels("UnsortedSegmentSum", _make("UnsortedSegmentSumKernel", _segment_sum_loop, ctype))
