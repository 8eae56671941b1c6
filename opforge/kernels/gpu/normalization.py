"""GPU kernels of BatchNorm, BatchNormGrad, LayerNorm and LayerNormGrad: the kernels of
``csrc/kernels/cuda/normalization.cu`` (the math of ``opforge/functors/normalization.h``, shared with the CPU
kernels), for every KernelAttr the CPU registers.

BatchNorm runs two passes: a block per channel (``BatchNormStatsRowsKernel``, when training over channels of
at least ``ROW_BLOCK_MIN`` elements; else one thread per channel) works out the statistics and the affine
coefficients (in the accumulation type, into a device workspace), then one thread per element applies them.
BatchNormGrad likewise (per-channel sums, ``BatchNormGradSumsRowsKernel``, then dx). LayerNorm and
LayerNormGrad's dx take a block per row when rows have at least ``ROW_BLOCK_MIN`` elements
(``LayerNormRowsKernel``, ``LayerNormGradDxRowsKernel``: block sums of warp shuffles and shared memory), else
one thread per row; LayerNorm's rows of up to 4,096 elements are held in the registers of a warp or a
block (``LayerNormRegisterKernel``: one read of x instead of three); LayerNormGrad's dgamma and dbeta one
thread per gamma element.
"""

from __future__ import annotations

import math

import numpy as np

from opforge.errors import KernelError
from opforge.kernels.gpu.cuda import CudaKernel, ctype, function_for
from opforge.kernels.gpu.elementwise import mirror_cpu_kernels
from opforge.kernels.gpu.register_rows import RegisterRows
from opforge.kernels.gpu.support import device_launch, input_params, step_1d

__all__ = []

_SOURCE = "normalization.cu"
ROW_BLOCK = 256  # threads per row of the *RowsKernel kernels (their kBlock)
ROW_BLOCK_MIN = 64  # a row this long takes a block; shorter ones a thread
_MAX_GRID = 65535
# LayerNorm's rows of up to 256 elements a warp each, up to 4,096 a block each
LAYER_NORM_REGISTER_ROWS = RegisterRows(
    "opforge::cuda::LayerNormRegisterKernel", ((32, 8), (128, 8), (256, 8), (512, 8)), extra_bytes=32
)
# acc_t of opforge/functors/reduce.h: the type the statistics and coefficients are kept in.
_ACC = {"Float16": np.float32, "BFloat16": np.float32, "Float32": np.float64, "Float64": np.float64}


def _batch_geometry(spec, x_index: int) -> tuple:
    x = list(spec.in_shapes[x_index])
    if len(x) < 2:
        raise KernelError(f"For '{spec.op_name}', the 'x' must have rank 2 or more, but got shape {x}.")
    return x[0], x[1], math.prod(x[2:])


def _batch_norm_loop(spec, function, kernel):
    runtime = spec.device.runtime
    n, c, s = _batch_geometry(spec, 0)
    apply = function_for(runtime, kernel, kernel.helpers[0])
    acc = np.dtype(_ACC[str(spec.entry.attr.inputs[0])])
    np_dtype = spec.entry.attr.outputs[0].np_dtype
    training = np.int32(1 if spec.attrs.get("is_training", False) else 0)
    eps = np.float64(spec.attrs.get("epsilon", 1e-5))
    numel = n * c * s
    sizes = (np.int64(n), np.int64(c), np.int64(s))

    # Inference reads the given statistics: nothing to sum, a thread per channel.
    stats = [*input_params(spec), *(("out", j) for j in range(1, 5)), ("tmp", 0), *sizes, training, eps]
    steps = _row_steps(runtime, function, kernel, kernel.helpers[1], c, n * s if training else 0, stats)
    apply_params = [("in", 0), ("tmp", 0), ("out", 0), np.int64(numel), np.int64(c), np.int64(s)]
    steps += step_1d(runtime, apply, numel, apply_params)
    outputs = [(spec.out_shapes[0], np_dtype)] + [((c,), np_dtype)] * 4
    return device_launch(spec, outputs, steps, [((2 * c,), acc)])


def _batch_norm_grad_loop(spec, function, kernel):
    runtime = spec.device.runtime
    n, c, s = _batch_geometry(spec, 1)
    dx_fn = function_for(runtime, kernel, kernel.helpers[0])
    acc = np.dtype(_ACC[str(spec.entry.attr.inputs[0])])
    np_dtype = spec.entry.attr.outputs[0].np_dtype
    training = np.int32(1 if spec.attrs.get("is_training", False) else 0)
    eps = np.float64(spec.attrs.get("epsilon", 1e-5))
    numel = n * c * s
    sizes = (np.int64(n), np.int64(c), np.int64(s))

    sums = [*input_params(spec), ("out", 1), ("out", 2), ("tmp", 0), *sizes, training, eps]
    steps = _row_steps(runtime, function, kernel, kernel.helpers[1], c, n * s, sums)
    dx_params = [("in", 0), ("in", 1), ("tmp", 0), ("out", 0), np.int64(numel), np.int64(c), np.int64(s)]
    steps += step_1d(runtime, dx_fn, numel, dx_params)
    outputs = [(spec.out_shapes[0], np_dtype), ((c,), np_dtype), ((c,), np_dtype)]
    return device_launch(spec, outputs, steps, [((4 * c,), acc)])


def _layer_geometry(spec) -> tuple:
    x = list(spec.in_shapes[0])
    nd = len(x)
    axes = []
    for name in ("begin_norm_axis", "begin_params_axis"):
        a = int(spec.attrs.get(name, 1))
        if not -nd <= a < nd:
            raise KernelError(
                f"For '{spec.op_name}', the '{name}' must be in [{-nd}, {nd}) for 'input_x' of shape {x}, but got {a}."
            )
        axes.append(a % nd)
    return math.prod(x[: axes[0]]), math.prod(x[axes[0] :]), math.prod(x[axes[1] :])


def _row_steps(runtime, function, kernel, rows_name: str, rows: int, m: int, params: list, registers=None, dtype=None):
    """The ``device_launch`` steps over ``rows`` rows (or channels) of ``m`` elements. Rows long enough are held in
    the registers of a group of threads where they fit (``registers``: a RegisterRows whose kernels follow
    ``rows_name`` among the helpers; ``dtype``: the rows'), else take a block each (the helper ``rows_name``);
    shorter ones a thread each (``function``)."""
    if m >= ROW_BLOCK_MIN and rows:
        if registers is not None and registers.shape(m, dtype):
            first = kernel.helpers.index(rows_name) + 1
            fn, grid, block, _ = registers.launch(runtime, kernel, first, rows, m, dtype)
            return [(fn, grid, block, 0, params)]
        rows_fn = function_for(runtime, kernel, rows_name)
        return [(rows_fn, (min(rows, _MAX_GRID), 1, 1), (ROW_BLOCK, 1, 1), 0, params)]
    return step_1d(runtime, function, rows, params)


def _layer_norm_loop(spec, function, kernel):
    rows, m, p = _layer_geometry(spec)
    np_dtype = spec.entry.attr.outputs[0].np_dtype
    eps = np.float64(spec.attrs.get("epsilon", 1e-7))
    outputs = [(shape, np_dtype) for shape in spec.out_shapes]
    sizes = (np.int64(rows), np.int64(m), np.int64(p))
    params = [*input_params(spec), *(("out", j) for j in range(len(outputs))), *sizes, eps]
    registers = (LAYER_NORM_REGISTER_ROWS, spec.entry.attr.inputs[0])
    steps = _row_steps(spec.device.runtime, function, kernel, kernel.helpers[0], rows, m, params, *registers)
    return device_launch(spec, outputs, steps)


def _layer_norm_grad_loop(spec, function, kernel):
    runtime = spec.device.runtime
    rows, m, p = _layer_geometry(spec)
    param_fn = function_for(runtime, kernel, kernel.helpers[0])
    np_dtype = spec.entry.attr.outputs[0].np_dtype
    eps = np.float64(spec.attrs.get("epsilon", 1e-7))
    total = rows * m
    x, dy, var, mean, gamma = input_params(spec)
    dx_params = [x, dy, var, mean, gamma, ("out", 0), np.int64(rows), np.int64(m), np.int64(p), eps]
    steps = _row_steps(runtime, function, kernel, kernel.helpers[1], rows, m, dx_params)
    param_params = [x, dy, var, mean, ("out", 1), ("out", 2), np.int64(total), np.int64(m), np.int64(p), eps]
    steps += step_1d(runtime, param_fn, p, param_params)
    return device_launch(spec, [(shape, np_dtype) for shape in spec.out_shapes], steps)


def _instance(name: str, t: str) -> str:
    """``name`` instantiated for the C type ``t`` (and for ``ROW_BLOCK`` threads: a *RowsKernel)."""
    args = f"{t}, {ROW_BLOCK}" if name.endswith("RowsKernel") else t
    return f"opforge::cuda::{name}<{args}>"


def _make(first: str, helpers: tuple, loop, registers=None):
    def make(attr):
        t = ctype(attr.inputs[0])
        names = tuple(_instance(h, t) for h in helpers) + (registers.names(t, attr.inputs[0]) if registers else ())
        return CudaKernel(_SOURCE, f"opforge::cuda::{first}<{t}>", loop, (), names)

    return make


mirror_cpu_kernels(
    "BatchNorm", _make("BatchNormStatsKernel", ("BatchNormApplyKernel", "BatchNormStatsRowsKernel"), _batch_norm_loop)
)
mirror_cpu_kernels(
    "BatchNormGrad",
    _make("BatchNormGradSumsKernel", ("BatchNormGradDxKernel", "BatchNormGradSumsRowsKernel"), _batch_norm_grad_loop),
)
mirror_cpu_kernels(
    "LayerNorm", _make("LayerNormKernel", ("LayerNormRowsKernel",), _layer_norm_loop, LAYER_NORM_REGISTER_ROWS)
)
mirror_cpu_kernels(
    "LayerNormGrad",
    _make("LayerNormGradDxKernel", ("LayerNormGradParamKernel", "LayerNormGradDxRowsKernel"), _layer_norm_grad_loop),
)
