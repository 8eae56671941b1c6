"""Launch helpers shared by the GPU kernel families: calls given as data and launched from C, one-dimensional
launches, elements moved as raw bytes of their size, and the arrays an in-place kernel writes into."""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from opforge import _C
from opforge.device.cublas import plan_gemm
from opforge.kernels.gpu.cuda import BLOCK, CudaKernel, function_for, grid_for, register_device_kernel

__all__ = [
    "BYTES_CTYPES",
    "StepPlan",
    "bytes_ctype",
    "copy_steps",
    "device_launch",
    "gemm_step",
    "launch_1d",
    "input_params",
    "launch_steps",
    "numel",
    "one_to_one",
    "output_specs",
    "step_1d",
    "write_inputs",
    "writes_in_place",
]

# The C++ type that moves one element of each size (csrc/kernels/cuda/copy.cuh): every dtype of a
# size shares a kernel, complex types included.
BYTES_CTYPES = {1: "uint8_t", 2: "uint16_t", 4: "uint32_t", 8: "uint64_t", 16: "opforge::cuda::Bytes16"}


# ``CopyKernel`` of each element size (csrc/kernels/cuda/copy.cuh, with Reshape's instantiations).
_COPY_KERNELS = {
    size: register_device_kernel(CudaKernel("reshape.cu", f"opforge::cuda::CopyKernel<{t}>", None))
    for size, t in BYTES_CTYPES.items()
}


def bytes_ctype(dtype) -> str:
    """The C++ type a copy kernel moves elements of the opforge ``dtype`` as."""
    return BYTES_CTYPES[np.dtype(dtype.np_dtype).itemsize]


def copy_steps(runtime, n: int, np_dtype, source, target) -> list:
    """The ``device_launch`` steps copying ``n`` elements of ``np_dtype`` from the param ``source`` into
    ``target``."""
    function = function_for(runtime, _COPY_KERNELS[np.dtype(np_dtype).itemsize])
    return step_1d(runtime, function, n, [source, target, np.int64(n)])


def numel(shape) -> int:
    return math.prod(shape)


def device_launch(spec, outputs, steps, temps=()):
    """``run(arrays)`` for a GPU call given as data: ``outputs`` and ``temps`` as ``[(shape, NumPy dtype)]``,
    allocated at each call (an output ``("in", i)`` is input ``i``, written in place); ``steps`` as
    ``[(function, grid, block, shared_mem, params)]``, launched in order, each param ``("in", i)``,
    ``("out", j)``, ``("tmp", k)`` or a NumPy scalar passed by value; or a GEMM (``gemm_step``) or a check of
    values the launches wrote (``check_step``). Where the runtime launches natively the call runs in C
    (``_C.DeviceLaunch``: no Python frame between the dispatcher and the driver but the allocator's); else here,
    through ``runtime.launch``."""
    runtime = spec.device.runtime
    outputs = [(a, b) if isinstance(a, str) else (tuple(a), np.dtype(b)) for a, b in outputs]
    temps = [(tuple(shape), np.dtype(dtype)) for shape, dtype in temps]
    steps = [step if isinstance(step[0], str) else _kernel_step(*step) for step in steps]
    if runtime.native_launches:
        return _C.DeviceLaunch(spec.op_name, runtime, len(spec.in_shapes), outputs, temps, steps).launch
    single = len(outputs) == 1

    def run(arrays):
        outs = [arrays[b] if isinstance(a, str) else runtime.empty(a, b) for a, b in outputs]
        launch_steps(runtime, steps, arrays, outs, [runtime.empty(shape, dtype) for shape, dtype in temps])
        return outs[0] if single else tuple(outs)

    return run


def _kernel_step(function, grid, block, shared, params) -> tuple:
    return (function, tuple(grid), tuple(block), int(shared), list(params))


def gemm_step(
    runtime, np_dtype, a, a_shape, b, b_shape, out, out_shape, transpose_a=False, transpose_b=False, offsets=(0, 0, 0)
):
    """A ``device_launch`` step computing ``out = op(a) @ op(b)`` by one cuBLAS GEMM (each operand a param
    ``("in", i)``, ..., seen with the given shape from its element ``offsets[k]`` on: C-contiguous arrays, a
    chunk's part of a temporary, one sample of a batch): from C through ``runtime.native_gemm``'s entry points,
    else (and while a graph is captured) by ``runtime.matmul``. None where cuBLAS cannot take it as one call
    (``plan_gemm``)."""
    plan = plan_gemm(np_dtype, a_shape, b_shape, out_shape, transpose_a, transpose_b)
    if plan is None:
        return None
    offsets = tuple(int(o) for o in offsets)

    def seen(array, shape, offset):  # the operand's elements from ``offset`` on, in its GEMM shape
        return runtime.view(runtime.reshape(array, (array.size,)), offset, shape)

    def fallback(x, y, z):
        x, y, z = seen(x, a_shape, offsets[0]), seen(y, b_shape, offsets[1]), seen(z, out_shape, offsets[2])
        runtime.matmul(x, y, z, transpose_a, transpose_b)

    step = ("gemm", dataclasses.astuple(plan), [a, b, out], fallback)
    if any(offsets):  # in bytes for _C.DeviceLaunch, which moves the pointers
        step += (tuple(o * np.dtype(np_dtype).itemsize for o in offsets),)
    return step


def check_step(word, none: int, error, fallback) -> tuple:
    """A ``device_launch`` step that reads back ``word`` (a ``("tmp", k)`` of one uint64 the launches before it
    wrote: the least position of a bad value, or ``none``) and, where it is not ``none``, raises
    ``error(position, inputs)`` (an exception; ``inputs`` the call's input arrays). ``fallback(word, inputs)``
    does the same through the runtime (while a device graph is captured: after each of its launches)."""
    return ("check", word, int(none), error, fallback)


class StepPlan:
    """The ``device_launch`` steps of one call being built: its temporaries, its kernels and its GEMMs.
    ``failed`` where a GEMM is not one cuBLAS call (``gemm_step`` gave None). ``aliases`` maps a param to the
    one the steps added from now on read and write instead (a widened copy of an input: ``widen`` in
    ``opforge/kernels/gpu/cast.py``)."""

    def __init__(self, runtime, np_dtype):
        self.runtime, self.np_dtype = runtime, np.dtype(np_dtype)
        self.steps, self.temps, self.failed = [], [], False
        self.checks: list = []  # check steps, after every launch: one synchronisation
        self.aliases: dict = {}

    def _param(self, p):
        return self.aliases.get(p, p) if isinstance(p, tuple) else p

    def temp(self, shape: tuple, np_dtype=None) -> tuple:
        """A temporary of ``shape`` in ``np_dtype`` (default: the plan's), as a param."""
        self.temps.append((tuple(shape), self.np_dtype if np_dtype is None else np.dtype(np_dtype)))
        return ("tmp", len(self.temps) - 1)

    def check(self, word, none: int, error, fallback) -> None:
        """A check step run after the plan's launches (``check_step``)."""
        self.checks.append(check_step(word, none, error, fallback))

    def kernel(self, function, n: int, params: list) -> None:
        """A grid-stride kernel over ``n`` elements (none for zero)."""
        self.steps += step_1d(self.runtime, function, n, [self._param(p) for p in params])

    def gemm(self, a, a_shape, b, b_shape, out, out_shape, **options) -> None:
        """``gemm_step``'s operands and options (transposes, offsets) in the plan's dtype."""
        a, b, out = self._param(a), self._param(b), self._param(out)
        step = gemm_step(self.runtime, self.np_dtype, a, a_shape, b, b_shape, out, out_shape, **options)
        if step is None:
            self.failed = True
        else:
            self.steps.append(step)

    def launch(self, spec, outputs):
        """``device_launch`` of these steps, then the checks, with ``outputs``; None where the plan failed."""
        return None if self.failed else device_launch(spec, outputs, self.steps + self.checks, self.temps)


def launch_steps(runtime, steps, inputs, outputs, temps) -> None:
    """Launch ``device_launch`` steps through ``runtime.launch`` (a GEMM through ``runtime.matmul``) on these
    arrays (a param ``("in", i)`` is ``inputs[i]``, and so on)."""
    buffers = {"in": inputs, "out": outputs, "tmp": temps}

    def resolve(params):
        return tuple(buffers[p[0]][p[1]] if isinstance(p, tuple) else p for p in params)

    for step in steps:
        if isinstance(step[0], str):
            if step[0] == "check":  # ("check", word, none, error, fallback)
                step[4](*resolve((step[1],)), inputs)
            else:  # ("gemm", plan, params, fallback)
                step[3](*resolve(step[2]))
            continue
        function, grid, block, shared, params = step
        runtime.launch(function, grid, block, resolve(params), shared)


def input_params(spec) -> list:
    """``("in", i)`` for every input of the call, in order: the params of a kernel that reads them all."""
    return [("in", i) for i in range(len(spec.in_shapes))]


def output_specs(spec) -> list:
    """The call's outputs for ``device_launch``: the inferred shapes with the kernel's dtypes."""
    dtypes = spec.entry.attr.output_dtypes_for(len(spec.out_shapes))
    return [(tuple(shape), t.np_dtype) for shape, t in zip(spec.out_shapes, dtypes)]


def step_1d(runtime, function, n: int, params: list) -> list:
    """The steps of a grid-stride kernel over ``n`` elements, for ``device_launch``: none for zero (a
    zero-block grid is an error)."""
    return [(function, grid_for(runtime, n), (BLOCK, 1, 1), 0, params)] if n > 0 else []


def launch_1d(runtime, function, n: int, args: tuple) -> None:
    """Launch a grid-stride kernel over ``n`` elements; none for zero (a zero-block grid is an error)."""
    if n > 0:
        runtime.launch(function, grid_for(runtime, n), (BLOCK, 1, 1), args)


def one_to_one(spec, function, *extra):
    """``run(arrays)`` for a kernel ``(x, y, n, *extra)``: one input, one output of the inferred shape
    and the kernel's dtype, a grid-stride loop over its ``n`` elements."""
    shape, np_dtype = spec.out_shapes[0], spec.entry.attr.outputs[0].np_dtype
    n = numel(shape)
    steps = step_1d(spec.device.runtime, function, n, [("in", 0), ("out", 0), np.int64(n), *extra])
    return device_launch(spec, [(shape, np_dtype)], steps)


def writes_in_place(spec, count: int) -> bool:
    """Whether the call writes outputs ``0..count-1`` into their own inputs (``spec.inplace[i] == i``
    for each): then ``device_launch`` can take ``("in", i)`` as output ``i``."""
    return len(spec.inplace or ()) >= count and all(spec.inplace[i] == i for i in range(count))


def write_inputs(plan, spec, count: int) -> list:
    """The outputs of a call whose kernels write inputs ``0..count-1`` (an optimizer's var and states,
    Assign's variable), for ``plan.launch``: input ``i`` itself where the call writes it in place
    (``spec.inplace[i] == i``: the Parameter is the output), else a new output that a first step copies
    input ``i`` into, and that the steps added from now on write instead (``plan.aliases``), so a call that
    does not write its inputs leaves them as they were."""
    inplace, outputs = spec.inplace or (), []
    for i in range(count):
        if len(inplace) > i and inplace[i] == i:
            outputs.append(("in", i))
            continue
        shape, np_dtype = tuple(spec.in_shapes[i]), np.dtype(spec.entry.attr.inputs[i].np_dtype)
        plan.steps += copy_steps(plan.runtime, numel(shape), np_dtype, ("in", i), ("out", i))
        plan.aliases[("in", i)] = ("out", i)
        outputs.append((shape, np_dtype))
    return outputs
