"""Data-movement operators on the GPU: the kernels of ``csrc/kernels/cuda/array.cu`` for every KernelAttr
the CPU registers (``csrc/kernels/cpu/array.cc``). The plans (which dims, strides and offsets each kernel
walks, ``StridedIndex`` of ``functors/array_index.h``) are built here as the CPU kernels build theirs."""

from __future__ import annotations

import math

import numpy as np

from opforge.errors import KernelError
from opforge.geometry import strided_slice_walk
from opforge.kernels.gpu.cuda import CudaKernel, ctype, function_for
from opforge.kernels.gpu.elementwise import mirror_cpu_kernels
from opforge.kernels.gpu.fill import fill_steps
from opforge.kernels.gpu.support import bytes_ctype, device_launch, numel, step_1d

__all__ = []

_SOURCE = "array.cu"
_MAX_DIMS = 8  # kMaxIndexDims of functors/array_index.h
# align=True: CuPy places a struct argument by its dtype's alignment, which must be the C++ struct's.
_INDEX_DTYPE = np.dtype(
    [
        ("ndim", np.int64),
        ("base", np.int64),
        ("size", np.int64, (_MAX_DIMS,)),
        ("mod", np.int64, (_MAX_DIMS,)),
        ("stride", np.int64, (_MAX_DIMS,)),
    ],
    align=True,
)


def _row_major(shape) -> list:
    return [math.prod(shape[d + 1 :]) for d in range(len(shape))]


class _Walk:
    """Dims of a strided walk (size, mod, stride) and the base offset, as array.cc's ``Walk``."""

    def __init__(self):
        self.dims, self.base = [], 0

    def add(self, size, mod, stride):
        self.dims.append((size, mod, stride))

    def count(self) -> int:
        return math.prod(s for s, _, _ in self.dims)

    def index(self, op_name: str):
        merged = []
        for size, mod, stride in self.dims:
            if size == 1:
                continue
            if merged and mod == size and merged[-1][1] == merged[-1][0] and merged[-1][2] == stride * size:
                s = merged[-1][0] * size
                merged[-1] = (s, s, stride)
                continue
            merged.append((size, mod, stride))
        if len(merged) > _MAX_DIMS:
            raise KernelError(
                f"For '{op_name}', the GPU kernel walks at most {_MAX_DIMS} dims after merging, but needs "
                f"{len(merged)}."
            )
        index = np.zeros((), _INDEX_DTYPE)
        index["ndim"] = len(merged)
        index["base"] = self.base
        for d, (size, mod, stride) in enumerate(merged):
            index["size"][d], index["mod"][d], index["stride"][d] = size, mod, stride
        return index[()]


def _slice_walk(attrs, shape) -> _Walk:
    strides, w = _row_major(shape), _Walk()
    for d, (b, s) in enumerate(zip(attrs["begin"], attrs["size"])):
        length = shape[d] - b if s == -1 else s
        w.base += b * strides[d]
        w.add(length, length, strides[d])
    return w


def _strided_slice_walk(op_name, attrs, shape) -> _Walk:
    names = ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask")
    masks = tuple(int(attrs.get(n, 0)) for n in names)
    walk, _ = strided_slice_walk(op_name, list(shape), attrs["begin"], attrs["end"], attrs["strides"], masks)
    strides, w = _row_major(shape), _Walk()
    for d, (start, step, length) in enumerate(walk):
        if length > 0:
            w.base += start * strides[d]
        w.add(length, length, step * strides[d])
    return w


def _reverse_walk(attrs, shape) -> _Walk:
    nd = len(shape)
    flip = {a % nd for a in attrs["axis"]} if nd else set()
    strides, w = _row_major(shape), _Walk()
    for d in range(nd):
        if d in flip and shape[d] > 0:
            w.base += (shape[d] - 1) * strides[d]
            w.add(shape[d], shape[d], -strides[d])
        else:
            w.add(shape[d], shape[d], strides[d])
    return w


def _tile_walk(attrs, shape) -> _Walk:
    multiples = list(attrs["multiples"])
    padded = [1] * (len(multiples) - len(shape)) + list(shape)
    strides, w = _row_major(padded), _Walk()
    for d, m in enumerate(multiples):
        size = padded[d] * m
        w.add(size, size if m == 1 or size == 0 else padded[d], strides[d])
    return w


def _copy_loop(spec, function, kernel):
    """``StridedCopyKernel<E>(x, y, n, index)``."""
    op, shape, attrs = spec.op_name, list(spec.in_shapes[0]), spec.attrs
    if op == "Slice":
        w = _slice_walk(attrs, shape)
    elif op == "StridedSlice":
        w = _strided_slice_walk(op, attrs, shape)
    elif op == "ReverseV2":
        w = _reverse_walk(attrs, shape)
    else:
        w = _tile_walk(attrs, shape)
    out_shape, np_dtype = spec.out_shapes[0], spec.entry.attr.outputs[0].np_dtype
    n = numel(out_shape)
    if w.count() != n:
        raise KernelError(f"For '{op}', the output {list(out_shape)} must have {w.count()} elements, but has {n}.")
    index = w.index(op)
    steps = step_1d(spec.device.runtime, function, n, [("in", 0), ("out", 0), np.int64(n), index])
    return device_launch(spec, [(out_shape, np_dtype)], steps)


def _scatter_loop(spec, function, kernel):
    """``StridedScatterKernel<E>(dy, dx, n, index)`` into zeros of the output's shape."""
    op, out_shape = spec.op_name, list(spec.out_shapes[0])
    np_dtype = spec.entry.attr.outputs[0].np_dtype
    if op == "SliceGrad":
        w = _slice_walk(spec.attrs, out_shape)
    elif op == "Pad":  # x is the output's block at the 'before' paddings
        begin = [p[0] for p in spec.attrs["paddings"]]
        w = _slice_walk({"begin": begin, "size": list(spec.in_shapes[0])}, out_shape)
    else:
        w = _strided_slice_walk(op, spec.attrs, out_shape)
    n = numel(spec.in_shapes[0])
    if w.count() != n:
        raise KernelError(f"For '{op}', the 'dy' must have {w.count()} elements (the slice's), but has {n}.")
    index = w.index(op)
    runtime = spec.device.runtime
    steps = fill_steps(runtime, out_shape, np_dtype, np.zeros((), np_dtype), ("out", 0))
    steps += step_1d(runtime, function, n, [("in", 0), ("out", 0), np.int64(n), index])
    return device_launch(spec, [(out_shape, np_dtype)], steps)


def _parts(spec):
    """(outer, cols of each part, total cols) for Concat/Stack (inputs are the parts) and Split/Unstack."""
    op = spec.op_name
    split = op in ("Split", "Unstack")
    parts = spec.out_shapes if split else spec.in_shapes
    first = list(parts[0])
    ndim = len(first) + (1 if op in ("Stack", "Unstack") else 0)
    axis = spec.attrs["axis"]
    axis = axis + ndim if axis < 0 else axis
    outer = math.prod(first[:axis])
    cols = [0 if outer == 0 else numel(p) // outer for p in parts]
    return outer, cols, sum(cols)


def _concat_loop(spec, function, kernel):
    """``ConcatKernel<E>(x_i, y, n_i, cols_i, total, col0_i)``, one launch per input."""
    outer, cols, total = _parts(spec)
    out_shape, np_dtype = spec.out_shapes[0], spec.entry.attr.outputs[0].np_dtype
    runtime = spec.device.runtime
    offsets = np.cumsum([0] + cols[:-1]).tolist()
    steps = []
    for i, (c, c0) in enumerate(zip(cols, offsets)):
        sizes = [np.int64(outer * c), np.int64(c), np.int64(total), np.int64(c0)]
        steps += step_1d(runtime, function, outer * c, [("in", i), ("out", 0), *sizes])
    return device_launch(spec, [(out_shape, np_dtype)], steps)


def _split_loop(spec, function, kernel):
    """``SplitKernel<E>(x, y_i, n_i, cols_i, total, col0_i)``, one launch per output."""
    outer, cols, total = _parts(spec)
    runtime = spec.device.runtime
    np_dtype = spec.entry.attr.outputs[0].np_dtype
    offsets = np.cumsum([0] + cols[:-1]).tolist()
    steps = []
    for j, (c, c0) in enumerate(zip(cols, offsets)):
        sizes = [np.int64(outer * c), np.int64(c), np.int64(total), np.int64(c0)]
        steps += step_1d(runtime, function, outer * c, [("in", 0), ("out", j), *sizes])
    return device_launch(spec, [(shape, np_dtype) for shape in spec.out_shapes], steps)


def _select_loop(spec, function, kernel):
    """``SelectKernel<E>(cond, x, y, out, n)``."""
    shape, np_dtype = spec.out_shapes[0], spec.entry.attr.outputs[0].np_dtype
    n = numel(shape)
    params = [("in", 0), ("in", 1), ("in", 2), ("out", 0), np.int64(n)]
    return device_launch(spec, [(shape, np_dtype)], step_1d(spec.device.runtime, function, n, params))


_ADD_N_DIRECT = 8  # the inputs AddNDirectKernel takes as parameters


def _add_n_loop(spec, function, kernel):
    """Up to 8 inputs: ``AddNDirectKernel<T>(x0, ..., x7, k, out, n)``; more: ``AddNKernel<T>(x0, ..., x7, k,
    acc, first, last, out, n)`` on 8 inputs at a time, the sum carried in a temporary of the compute type (float32
    for the half types): launched from C where the runtime can, inputs as launch parameters."""
    shape, dtype = spec.out_shapes[0], spec.entry.attr.outputs[0]
    runtime, n, k = spec.device.runtime, numel(shape), len(spec.in_shapes)
    outputs = [(shape, dtype.np_dtype)]
    if k <= _ADD_N_DIRECT:
        direct = function_for(runtime, kernel, kernel.helpers[0])
        inputs = [("in", min(j, k - 1)) for j in range(_ADD_N_DIRECT)]
        return device_launch(
            spec, outputs, step_1d(runtime, direct, n, [*inputs, np.int64(k), ("out", 0), np.int64(n)])
        )
    acc_dtype = np.float32 if str(dtype) in ("Float16", "BFloat16") else dtype.np_dtype  # compute_t<T>
    steps = []
    for start in range(0, k, _ADD_N_DIRECT):
        count = min(_ADD_N_DIRECT, k - start)
        inputs = [("in", start + min(j, count - 1)) for j in range(_ADD_N_DIRECT)]
        flags = (np.int64(start == 0), np.int64(start + count == k))
        steps += step_1d(runtime, function, n, [*inputs, np.int64(count), ("tmp", 0), *flags, ("out", 0), np.int64(n)])
    return device_launch(spec, outputs, steps, temps=[((n,), acc_dtype)])


def _kernel(template: str, loop, position: int = 0):
    def make(attr):
        return CudaKernel(_SOURCE, f"opforge::cuda::{template}<{bytes_ctype(attr.inputs[position])}>", loop)

    return make


for _op in ("Slice", "StridedSlice", "ReverseV2", "Tile"):
    mirror_cpu_kernels(_op, _kernel("StridedCopyKernel", _copy_loop))
for _op in ("SliceGrad", "StridedSliceGrad", "Pad"):
    mirror_cpu_kernels(_op, _kernel("StridedScatterKernel", _scatter_loop))
for _op in ("Concat", "Stack"):
    mirror_cpu_kernels(_op, _kernel("ConcatKernel", _concat_loop))
for _op in ("Split", "Unstack"):
    mirror_cpu_kernels(_op, _kernel("SplitKernel", _split_loop))
mirror_cpu_kernels("Select", _kernel("SelectKernel", _select_loop, 1))


def _make_add_n(attr):
    t = ctype(attr.inputs[0])
    return CudaKernel(
        _SOURCE, f"opforge::cuda::AddNKernel<{t}>", _add_n_loop, helpers=(f"opforge::cuda::AddNDirectKernel<{t}>",)
    )


mirror_cpu_kernels("AddN", _make_add_n)
