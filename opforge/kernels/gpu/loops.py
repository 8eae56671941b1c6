"""The launch glue of the CUDA kernels: for one LaunchSpec (fixed metas and attrs), ``run(arrays)``
allocates the outputs on the device, packs the arguments as the kernel declares them and launches
a grid-stride grid. Each loop matches one kernel template of ``csrc/kernels/cuda/``.
"""

from __future__ import annotations

import math

import numpy as np

from opforge import _C
from opforge.errors import KernelError
from opforge.kernels.gpu.cuda import functor_arg
from opforge.kernels.gpu.support import device_launch, input_params, one_to_one, output_specs, step_1d

__all__ = ["MAX_BROADCAST_DIMS", "unary", "same_shape_binary", "broadcast_binary", "broadcast_index", "simple"]

MAX_BROADCAST_DIMS = 8  # kMaxBroadcastDims of elementwise.cuh
# align=True: CuPy places a struct argument by its dtype's alignment, which must be the C++ struct's.
_INDEX_DTYPE = np.dtype(
    [
        ("ndim", np.int64),
        ("shape", np.int64, (MAX_BROADCAST_DIMS,)),
        ("a_stride", np.int64, (MAX_BROADCAST_DIMS,)),
        ("b_stride", np.int64, (MAX_BROADCAST_DIMS,)),
    ],
    align=True,
)


def unary(spec, function, kernel):
    """``UnaryKernel<T, Op>(x, y, n, op)``: y = op(x)."""
    return one_to_one(spec, function, functor_arg(kernel, spec.attrs))


def same_shape_binary(spec, function, kernel):
    """``SameShapeBinaryKernel<T, Op>(a, b, out, n, op)``: out = op(a, b), all of one shape."""
    shape, np_dtype = spec.out_shapes[0], spec.entry.attr.outputs[0].np_dtype
    if tuple(spec.in_shapes[0]) != tuple(spec.in_shapes[1]):
        raise KernelError(
            f"For '{spec.op_name}', the inputs must have the same shape, but got "
            f"{list(spec.in_shapes[0])} and {list(spec.in_shapes[1])}."
        )
    n = math.prod(shape)
    params = [("in", 0), ("in", 1), ("out", 0), np.int64(n), functor_arg(kernel, spec.attrs)]
    return device_launch(spec, [(shape, np_dtype)], step_1d(spec.device.runtime, function, n, params))


def broadcast_index(op_name: str, a_shape, b_shape, out_shape):
    """The kernels' ``BroadcastIndex`` for these shapes, from the CPU kernels' BroadcastPlan."""
    kind, numel, shape, a_strides, b_strides = _C.broadcast_plan(op_name, list(a_shape), list(b_shape), list(out_shape))
    index = np.zeros((), _INDEX_DTYPE)
    if kind == 1:  # a is one element
        shape, a_strides, b_strides = [numel], [0], [1]
    elif kind == 2:
        shape, a_strides, b_strides = [numel], [1], [0]
    if kind != 0:
        if len(shape) > MAX_BROADCAST_DIMS:
            raise KernelError(
                f"For '{op_name}', the GPU kernels broadcast at most {MAX_BROADCAST_DIMS} dims after merging, "
                f"but the shapes {list(a_shape)} and {list(b_shape)} need {len(shape)}."
            )
        index["ndim"] = len(shape)
        index["shape"][: len(shape)] = shape
        index["a_stride"][: len(shape)] = a_strides
        index["b_stride"][: len(shape)] = b_strides
    return index[()]


def broadcast_binary(spec, function, kernel):
    """``BroadcastBinaryKernel<T, Out, Op>(a, b, out, n, index, op)``: out = op(a, b) broadcast."""
    shape, np_dtype = spec.out_shapes[0], spec.entry.attr.outputs[0].np_dtype
    n = math.prod(shape)
    index = broadcast_index(spec.op_name, spec.in_shapes[0], spec.in_shapes[1], shape)
    params = [("in", 0), ("in", 1), ("out", 0), np.int64(n), index, functor_arg(kernel, spec.attrs)]
    return device_launch(spec, [(shape, np_dtype)], step_1d(spec.device.runtime, function, n, params))


def simple(*attrs):
    """The launch glue for a user's CUDA kernel with the simplest ABI:
    ``kernel(const T0* in0, ..., Out0* out0, ..., int64_t n, A0 attr0, ...)``, a grid-stride loop
    over ``n``, the number of elements of output 0. The outputs have the primitive's inferred
    shapes and the KernelAttr's dtypes; ``attrs`` are ``(name, NumPy dtype)`` pairs of the
    primitive's attrs, passed by value in that order::

        CudaKernel("/path/my_elu.cu", "my_elu<float>", loops.simple(("alpha", "float32")))
    """
    fields = tuple((name, np.dtype(t)) for name, t in attrs)

    def loop(spec, function, kernel):
        outs = output_specs(spec)
        n = math.prod(outs[0][0]) if outs else 0
        try:
            values = tuple(t.type(spec.attrs[name]) for name, t in fields)
        except KeyError as e:
            raise KernelError(
                f"For '{spec.op_name}', the CUDA kernel needs the attr {e}, which the primitive lacks."
            ) from None
        params = [*input_params(spec), *(("out", j) for j in range(len(outs))), np.int64(n), *values]
        return device_launch(spec, outs, step_1d(spec.device.runtime, function, n, params))

    return loop
