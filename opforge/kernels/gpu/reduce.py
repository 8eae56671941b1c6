"""GPU kernels of ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd, ReduceAll and ReduceAny: the
reducers of ``opforge/functors/reduce.h`` (shared with the CPU kernels) in the passes of
``csrc/kernels/cuda/reduce.cuh``, for every KernelAttr the CPU registers.

The input is seen as the CPU kernels see it: dims of size 1 dropped, neighbouring dims that are both
kept or both reduced merged, so kept dims (selecting an output) alternate with reduced dims (walked
for each output). Many outputs take one pass, one thread per output. Few outputs over many elements
(a full reduction) split each output's elements into strided chunks, one thread per (output, chunk),
writing partial results in the accumulation type to a device workspace; the partials are folded
(``_FOLD`` at a time) until few are left, and a last pass combines them per output and stores.
Contiguous rows of at least 256 elements take blocks instead (shared-memory trees: one pass when a block
per output fills the GPU, else a partial per block and one finishing block per output; 16-byte packs where a
row is one aligned run), rows of 32 to 255 a warp each; the tests' host emulation runs every pass with its
barriers.
"""

from __future__ import annotations

import functools
import math
from typing import NamedTuple

import numpy as np

from opforge.errors import KernelError
from opforge.kernels.gpu.cuda import BLOCK, BLOCKS_PER_MULTIPROCESSOR, CudaKernel, ctype, function_for, grid_for
from opforge.kernels.gpu.elementwise import mirror_cpu_kernels
from opforge.kernels.gpu.support import device_launch, launch_steps, output_specs

__all__ = ["ReducePlan", "ReducePasses", "chunks_for", "passes_for", "reduce_kernel", "reduce_plan", "sum_to_steps"]

_MAX_DIMS = 8  # kMaxReduceDims of reduce.cuh
# align=True: CuPy places a struct argument by its dtype's alignment, which must be the C++ struct's.
_INDEX_DTYPE = np.dtype(
    [
        ("kept_ndim", np.int64),
        ("kept_size", np.int64, (_MAX_DIMS,)),
        ("kept_stride", np.int64, (_MAX_DIMS,)),
        ("red_ndim", np.int64),
        ("red_size", np.int64, (_MAX_DIMS,)),
        ("red_stride", np.int64, (_MAX_DIMS,)),
        ("outputs", np.int64),
        ("count", np.int64),
        ("chunks", np.int64),
        ("chunk_fastest", np.int64),
    ],
    align=True,
)

_MIN_CHUNK = 128  # reduced elements a pass-1 thread takes at least: less is not worth a second pass
_FOLD = 32  # partials one thread of a combine pass folds; the last pass combines at most this many


class ReducePlan(NamedTuple):
    """The merged view of one reduction: (size, input stride) of each kept and each reduced dim."""

    kept: tuple
    reduced: tuple
    outputs: int
    count: int  # elements per output; 0 for an empty reduction

    def index(self, chunks: int) -> np.void:
        """The kernels' ``ReduceIndex`` with ``chunks`` chunks per output."""
        index = np.zeros((), _INDEX_DTYPE)
        for prefix, dims in (("kept", self.kept), ("red", self.reduced)):
            index[f"{prefix}_ndim"] = len(dims)
            for d, (size, stride) in enumerate(dims):
                index[f"{prefix}_size"][d] = size
                index[f"{prefix}_stride"][d] = stride
        index["outputs"], index["count"], index["chunks"] = self.outputs, self.count, chunks
        # The innermost merged dim reduced (or nothing kept): neighbouring chunks are neighbours in memory.
        innermost_reduced = not self.kept or (self.reduced and self.reduced[-1][1] == 1)
        index["chunk_fastest"] = 1 if innermost_reduced else 0
        return index[()]


def _normalized_axes(axis, ndim: int) -> set:
    axes = (axis,) if isinstance(axis, int) else tuple(axis or ())
    rank = max(ndim, 1)  # a 0-d input accepts axis 0 / -1, as in NumPy
    return {a % rank for a in axes}


def reduce_plan(op_name: str, shape, axis) -> ReducePlan:
    """How ``shape`` is reduced over ``axis`` (an int, a tuple; empty: every axis), merged as the CPU
    kernels merge it (csrc/kernels/cpu/reduce.cc, ReducePlan). The primitive validated ``axis``."""
    shape = tuple(int(d) for d in shape)
    axes = _normalized_axes(axis, len(shape))
    flags = [not axes or d in axes for d in range(len(shape))]
    outputs = math.prod(d for d, f in zip(shape, flags) if not f)
    if math.prod(shape) == 0:
        return ReducePlan((), (), outputs, 0)
    sizes, merged_flags = [], []
    for d, f in zip(shape, flags):
        if d == 1:
            continue
        if merged_flags and merged_flags[-1] == f:
            sizes[-1] *= d
        else:
            sizes.append(d)
            merged_flags.append(f)
    strides = [math.prod(sizes[i + 1 :]) for i in range(len(sizes))]
    kept = tuple((s, t) for s, t, f in zip(sizes, strides, merged_flags) if not f)
    reduced = tuple((s, t) for s, t, f in zip(sizes, strides, merged_flags) if f) or ((1, 0),)
    if len(kept) > _MAX_DIMS or len(reduced) > _MAX_DIMS:
        raise KernelError(
            f"For '{op_name}', the GPU kernels reduce at most {_MAX_DIMS} kept and {_MAX_DIMS} reduced dims after "
            f"merging, but the input shape {list(shape)} with axis {axis!r} needs {len(kept)} and {len(reduced)}."
        )
    return ReducePlan(kept, reduced, outputs, math.prod(s for s, _ in reduced))


def chunks_for(runtime, plan: ReducePlan) -> int:
    """Chunks per output: enough threads to fill the GPU, each taking at least ``_MIN_CHUNK`` elements."""
    threads = runtime.multiprocessor_count * BLOCKS_PER_MULTIPROCESSOR * BLOCK
    return max(1, min(-(-threads // max(plan.outputs, 1)), plan.count // _MIN_CHUNK))


REDUCE_BLOCK = 256  # threads of ReduceBlockKernel (kBlock)
_BLOCK_MIN_COUNT = 256  # elements per output from which contiguous rows take blocks
_WARP_MIN_COUNT = 32  # from which (to _BLOCK_MIN_COUNT) they take a warp each
_MAX_GRID = 65535


class ReducePasses:
    """The compiled passes of one reducer (``names``: ReduceKernel, ReducePartialKernel,
    ReduceCombineKernel, ReduceFinishKernel, and optionally ReduceBlockKernel, ReduceBlockFinishKernel,
    ReduceWarpKernel), accumulating in NumPy's ``acc_dtype``; ``run`` launches them, ``steps`` gives them as a
    ``device_launch``'s data."""

    def __init__(self, runtime, kernel: CudaKernel, names: tuple, acc_dtype):
        self.runtime, self.acc_dtype = runtime, np.dtype(acc_dtype)
        functions = [function_for(runtime, kernel, n) for n in names]
        self.one_pass, self.partial, self.combine, self.finish = functions[:4]
        self.block, self.block_finish = functions[4:6] if len(functions) >= 6 else (None, None)
        self.warp = functions[6] if len(functions) >= 7 else None

    def _warp_rows(self, plan: ReducePlan) -> bool:
        """Whether each output's rows take a warp: 32 to 255 elements, the innermost contiguous."""
        return self.warp is not None and _WARP_MIN_COUNT <= plan.count < _BLOCK_MIN_COUNT and plan.reduced[-1][1] == 1

    def _blocks_per_output(self, plan: ReducePlan) -> int:
        """How many blocks reduce each output (0: the rows are not contiguous, or too short for blocks)."""
        if self.block is None or plan.count < _BLOCK_MIN_COUNT or plan.reduced[-1][1] != 1:
            return 0
        fill = self.runtime.multiprocessor_count * BLOCKS_PER_MULTIPROCESSOR * BLOCK
        wanted = -(-fill // (plan.outputs * REDUCE_BLOCK))
        return max(1, min(wanted, plan.count // (REDUCE_BLOCK * 4)))

    def steps(self, plan: ReducePlan, chunks: int, x, out, temps: list) -> list:
        """The launches of ``run`` as ``device_launch`` steps: ``x`` and ``out`` the params of the flat input and
        output; the workspaces are appended to ``temps`` (the call's ``[(shape, dtype)]``, ``("tmp", k)`` each)."""
        runtime = self.runtime
        if plan.outputs == 0:
            return []

        def workspace(size: int) -> tuple:
            temps.append(((size,), self.acc_dtype))
            return ("tmp", len(temps) - 1)

        per_output = self._blocks_per_output(plan)
        if per_output:
            block, index = (REDUCE_BLOCK, 1, 1), plan.index(1)
            blocks = plan.outputs * per_output
            partial = workspace(blocks if per_output > 1 else 1)
            params = [x, partial, out, index, np.int64(per_output)]
            steps = [(self.block, (min(blocks, _MAX_GRID), 1, 1), block, 0, params)]
            if per_output > 1:
                params = [partial, out, np.int64(per_output), index]
                steps.append((self.block_finish, (min(plan.outputs, _MAX_GRID), 1, 1), block, 0, params))
            return steps
        if self._warp_rows(plan):
            grid = (min(-(-plan.outputs // (REDUCE_BLOCK // 32)), _MAX_GRID), 1, 1)
            return [(self.warp, grid, (REDUCE_BLOCK, 1, 1), 0, [x, out, plan.index(1)])]
        block = (BLOCK, 1, 1)
        if chunks <= 1 or plan.count == 0:
            return [(self.one_pass, grid_for(runtime, plan.outputs), block, 0, [x, out, plan.index(1)])]
        index = plan.index(chunks)
        outputs = np.int64(plan.outputs)
        partial = workspace(chunks * plan.outputs)
        steps = [(self.partial, grid_for(runtime, chunks * plan.outputs), block, 0, [x, partial, index])]
        n = chunks
        while n > _FOLD:
            n_out = -(-n // _FOLD)
            folded = workspace(n_out * plan.outputs)
            params = [partial, folded, outputs, np.int64(n), np.int64(n_out)]
            steps.append((self.combine, grid_for(runtime, n_out * plan.outputs), block, 0, params))
            partial, n = folded, n_out
        steps.append((self.finish, grid_for(runtime, plan.outputs), block, 0, [partial, out, np.int64(n), index]))
        return steps

    def run(self, device, plan: ReducePlan, chunks: int, x, out) -> None:
        """out[o] = the reduction of output o's elements of ``x`` (flat device arrays)."""
        temps = []
        steps = self.steps(plan, chunks, ("in", 0), ("out", 0), temps)
        launch_steps(self.runtime, steps, (x,), (out,), [device.empty(shape, dtype) for shape, dtype in temps])


def reduce_kernel(source: str, reducer: str, in_t: str, out_t: str, loop) -> CudaKernel:
    """A CudaKernel of the passes of ``reducer`` (a C++ type) from ``in_t`` to ``out_t`` elements in
    ``source`` (which includes reduce.cuh), run by ``loop``."""
    ns = "opforge::cuda::"
    names = (
        f"{ns}ReduceKernel<{reducer}, {in_t}, {out_t}>",
        f"{ns}ReducePartialKernel<{reducer}, {in_t}>",
        f"{ns}ReduceCombineKernel<{reducer}>",
        f"{ns}ReduceFinishKernel<{reducer}, {out_t}>",
        f"{ns}ReduceBlockKernel<{reducer}, {in_t}, {out_t}, {REDUCE_BLOCK}>",
        f"{ns}ReduceBlockFinishKernel<{reducer}, {out_t}, {REDUCE_BLOCK}>",
        f"{ns}ReduceWarpKernel<{reducer}, {in_t}, {out_t}, {REDUCE_BLOCK}>",
    )
    return CudaKernel(source, names[0], loop, (), names[1:])


def passes_for(runtime, kernel: CudaKernel, acc_dtype) -> ReducePasses:
    """The ReducePasses of a kernel made by ``reduce_kernel``."""
    return ReducePasses(runtime, kernel, (kernel.name, *kernel.helpers), acc_dtype)


def _reduce_loop(spec, function, kernel, acc_dtype, empty_ok: bool):
    """ReduceSum / ReduceMean / ReduceMax over the constant ``axis``, accumulating in ``acc_dtype``;
    ``empty_ok``: the reducer has an identity, so a zero-size axis may be reduced."""
    runtime = spec.device.runtime
    plan = reduce_plan(spec.op_name, spec.in_shapes[0], spec.attrs.get("axis", ()))
    if plan.count == 0 and plan.outputs > 0 and not empty_ok:
        raise KernelError(
            f"For '{spec.op_name}', cannot reduce a zero-size axis of input shape {list(spec.in_shapes[0])}: "
            f"the reduction has no identity."
        )
    temps = []
    passes = passes_for(runtime, kernel, acc_dtype)
    steps = passes.steps(plan, chunks_for(runtime, plan), ("in", 0), ("out", 0), temps)
    return device_launch(spec, output_specs(spec), steps, temps)


# The type each reducer accumulates in (acc_t / compute_t of opforge/functors/reduce.h, half.h).
_SUM_ACC = {"Float16": np.float32, "BFloat16": np.float32, "Float32": np.float64, "Float64": np.float64}
_MAX_ACC = {"Float16": np.float32, "BFloat16": np.float32}


def accumulator_dtype(reducer: str, dtype) -> np.dtype:
    """The dtype ``reducer`` (of opforge/functors/reduce.h) accumulates ``dtype`` in, as NumPy's."""
    if reducer in ("AllReducer", "AnyReducer"):
        return np.dtype(np.uint8)
    if reducer in ("MaxReducer", "MinReducer"):
        return np.dtype(_MAX_ACC.get(str(dtype), dtype.np_dtype))
    return np.dtype(_SUM_ACC.get(str(dtype), np.uint64))


def _make(reducer: str):
    def make(attr):
        t = ctype(attr.inputs[0])
        acc = accumulator_dtype(reducer, attr.inputs[0])
        loop = functools.partial(_reduce_loop, acc_dtype=acc, empty_ok=reducer not in ("MaxReducer", "MinReducer"))
        functor = f"opforge::{reducer}" if reducer in ("AllReducer", "AnyReducer") else f"opforge::{reducer}<{t}>"
        return reduce_kernel("reduce.cu", functor, t, t, loop)

    return make


def sum_to_steps(runtime, op_name: str, dtype, from_shape, to_shape, x, out, temps: list) -> list:
    """The ``device_launch`` steps summing the ``from_shape`` array ``x`` (a param) of the opforge ``dtype``
    into ``out`` over the dims along which ``to_shape`` was broadcast to it (the gradient of a broadcast), by
    ReduceSum's passes; their workspaces are appended to ``temps``."""
    lead = len(from_shape) - len(to_shape)
    axes = tuple(range(lead)) + tuple(lead + i for i, d in enumerate(to_shape) if d == 1 and from_shape[lead + i] != 1)
    plan = reduce_plan(op_name, from_shape, axes)
    t = ctype(dtype)
    passes = passes_for(
        runtime,
        reduce_kernel("reduce.cu", f"opforge::SumReducer<{t}>", t, t, None),
        accumulator_dtype("SumReducer", dtype),
    )
    return passes.steps(plan, chunks_for(runtime, plan), x, out, temps)


for _op, _reducer in (
    ("ReduceSum", "SumReducer"),
    ("ReduceMean", "MeanReducer"),
    ("ReduceMax", "MaxReducer"),
    ("ReduceMin", "MinReducer"),
    ("ReduceProd", "ProdReducer"),
    ("ReduceAll", "AllReducer"),
    ("ReduceAny", "AnyReducer"),
):
    mirror_cpu_kernels(_op, _make(_reducer))
