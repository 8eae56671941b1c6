"""Cast on the GPU: the Cast operator's kernels (every pair the CPU registers) and the GPU device's
own casts (``GpuDevice.cast``: the launchers' widening casts, Tensor.astype on the device), both
``CastKernel`` of ``csrc/kernels/cuda/cast.cu``, the math of ``opforge/functors/cast.h`` that the CPU
runs too. Pairs that do the same to the stored bits share one kernel, as on the CPU.
"""

from __future__ import annotations

import functools

import numpy as np

from opforge import dtype as mstype
from opforge.kernels.gpu.cuda import CudaKernel, ctype, function_for
from opforge.kernels.gpu.elementwise import mirror_cpu_kernels
from opforge.kernels.gpu.support import StepPlan, launch_1d, numel, one_to_one

__all__ = ["cast", "cast_kernel", "widen"]

_INTS = {"Int8", "Int16", "Int32", "Int64", "UInt8", "UInt16", "UInt32", "UInt64"}
_UNSIGNED = {1: "uint8_t", 2: "uint16_t", 4: "uint32_t", 8: "uint64_t"}


def _size(dtype) -> int:
    return np.dtype(dtype.np_dtype).itemsize


def _template_args(src, dst) -> tuple | None:
    """The (S, D) of ``CastKernel<S, D>`` for ``src -> dst``, or None when the cast copies the bits.

    An integer to an integer of its width (or a dtype to itself) is a copy; otherwise an integer
    (or bool) becomes an integer modulo 2^bits, so only the widths matter, and the source's
    signedness only when it widens; an integer becomes a bool by a test against zero.
    """
    s, d = str(src), str(dst)
    if src is dst and _size(src) == 16:  # complex128: no 16-byte CopyKernel
        return ctype(src), ctype(dst)
    if src is dst or (s in _INTS and d in _INTS and _size(src) == _size(dst)):
        return None
    if d in _INTS and (s in _INTS or s == "Bool"):
        keeps_sign = s == "Bool" or _size(src) < _size(dst)
        return ("bool" if s == "Bool" else ctype(src) if keeps_sign else _UNSIGNED[_size(src)]), _UNSIGNED[_size(dst)]
    if s in _INTS and d == "Bool":
        return _UNSIGNED[_size(src)], "bool"
    return ("bool" if s == "Bool" else ctype(src)), ("bool" if d == "Bool" else ctype(dst))


@functools.cache
def cast_kernel(src: mstype.Type, dst: mstype.Type) -> CudaKernel:
    """The kernel that casts ``src`` to ``dst`` (``CopyKernel`` of the element size for a copy)."""
    args = _template_args(src, dst)
    if args is None:
        name = f"opforge::cuda::CopyKernel<{_UNSIGNED[_size(src)]}>"
    else:
        name = f"opforge::cuda::CastKernel<{args[0]}, {args[1]}>"
    return CudaKernel("cast.cu", name, _cast_loop)


def _cast_loop(spec, function, kernel):
    """``CastKernel<S, D>(x, y, n)`` (or ``CopyKernel<E>(x, y, n)``): y = x.astype(D)."""
    return one_to_one(spec, function)


def cast(device, array, np_dtype):
    """The GPU device's cast: a new device array of ``array``'s values as ``np_dtype``, as the Cast
    operator computes them."""
    runtime = device.runtime
    np_dtype = np.dtype(np_dtype)
    if array.dtype == np_dtype:
        out = runtime.empty(array.shape, np_dtype)
        runtime.copy(out, runtime.contiguous(array))
        return out
    try:
        src, dst = mstype.nptype_to_dtype(array.dtype), mstype.nptype_to_dtype(np_dtype)
    except TypeError:
        src = dst = None
    if src is None or dst is None:
        raise TypeError(
            f"For 'Cast', the GPU casts between bool, integer, floating-point and complex dtypes, but got "
            f"{array.dtype} to {np_dtype}."
        )
    out = runtime.empty(array.shape, np_dtype)
    n = array.size
    if n:
        function = function_for(runtime, cast_kernel(src, dst))
        launch_1d(runtime, function, n, (runtime.contiguous(array), out, np.int64(n)))
    return out


def widen(plan: StepPlan, spec, n_inputs: int):
    """Make ``plan``'s steps compute in its dtype (float32) for a call of a narrower float (bfloat16), as the
    launchers' widening casts do: each of the call's first ``n_inputs`` inputs is cast into a temporary that
    the steps added after read instead, and output 0 is written into a temporary; ``finish()``, called after
    the last step, casts that back into the output (rounding once)."""
    runtime, wide = plan.runtime, mstype.nptype_to_dtype(plan.np_dtype)
    narrow = spec.entry.attr.inputs[0]
    to_wide = function_for(runtime, cast_kernel(narrow, wide))
    for i in range(n_inputs):
        shape, n = spec.in_shapes[i], numel(spec.in_shapes[i])
        copy = plan.temp(shape)
        plan.kernel(to_wide, n, [("in", i), copy, np.int64(n)])
        plan.aliases[("in", i)] = copy
    out_shape = tuple(spec.out_shapes[0])
    result = plan.aliases[("out", 0)] = plan.temp(out_shape)

    def finish() -> None:
        del plan.aliases[("out", 0)]
        n = numel(out_shape)
        to_narrow = function_for(runtime, cast_kernel(wide, spec.entry.attr.outputs[0]))
        plan.kernel(to_narrow, n, [result, ("out", 0), np.int64(n)])

    return finish


mirror_cpu_kernels("Cast", lambda attr: cast_kernel(attr.inputs[0], attr.outputs[0]))
