"""GPU kernels of ScaledDotProductAttention and its grad (``csrc/kernels/cuda/attention.cu``, the math of
``opforge/functors/attention.h`` shared with the CPU kernels), for every KernelAttr the CPU registers. A
thread per query row streams over the keys with the online softmax; the grad recomputes the probabilities:
D_i per query row into a workspace, then dq a thread per query row and dk, dv a thread per key row. No
kernel needs a barrier or an atomic; head dims are limited to ``MAX_DIM`` (per-thread accumulators)."""

from __future__ import annotations

import numpy as np

from opforge.errors import KernelError
from opforge.kernels.gpu.cuda import CudaKernel, ctype, function_for
from opforge.kernels.gpu.elementwise import mirror_cpu_kernels
from opforge.kernels.gpu.support import device_launch, input_params, step_1d

__all__ = []

_SOURCE = "attention.cu"
MAX_DIM = 256  # kMaxDim of attention.cu
_SHAPE = np.dtype(
    [(n, np.int64) for n in ("bh", "h", "lq", "lk", "d", "dv", "ms0", "ms1", "ms2", "ms3")]
    + [("scale", np.float64), ("keep_prob", np.float64), ("seed0", np.int64), ("seed1", np.int64)]
    + [("causal", np.int32)],
    align=True,
)


def _shape_arg(spec):
    """AttentionShape of attention.cu for the launch: sizes, the mask's broadcast strides and the attrs."""
    q, k, v, mask = (list(s) for s in spec.in_shapes[:4])
    b, h, lq, d = q
    lk, dv = k[2], v[3]
    if max(d, dv) > MAX_DIM:
        raise KernelError(
            f"For '{spec.op_name}', the GPU kernel takes head dims up to {MAX_DIM}, but got D={d} and Dv={dv}."
        )
    strides, stride = [0, 0, 0, 0], 1
    for axis in (3, 2, 1, 0):
        strides[axis] = 0 if mask[axis] == 1 else stride
        stride *= mask[axis]
    g = np.zeros((), _SHAPE)
    for name, value in zip(("bh", "h", "lq", "lk", "d", "dv"), (b * h, h, lq, lk, d, dv)):
        g[name] = value
    for axis in range(4):
        g[f"ms{axis}"] = strides[axis]
    g["scale"], g["keep_prob"] = spec.attrs.get("scale", 1.0), spec.attrs.get("keep_prob", 1.0)
    g["seed0"], g["seed1"] = spec.attrs.get("Seed0", 0), spec.attrs.get("Seed1", 0)
    g["causal"] = int(bool(spec.attrs.get("is_causal", False)))
    return g[()], b * h * lq, b * h * lk  # a NumPy scalar (np.void): the struct passed by value


def _forward_loop(spec, function, kernel):
    g, rows, _ = _shape_arg(spec)
    outputs = [(shape, o.np_dtype) for shape, o in zip(spec.out_shapes[:2], spec.entry.attr.outputs)]
    params = [*input_params(spec), ("out", 0), ("out", 1), g]
    return device_launch(spec, outputs, step_1d(spec.device.runtime, function, rows, params))


def _grad_loop(spec, function, kernel):
    runtime = spec.device.runtime
    g, rows, cols = _shape_arg(spec)
    dq_fn, dkdv_fn = (function_for(runtime, kernel, name) for name in kernel.helpers)
    np_dtype = spec.entry.attr.outputs[0].np_dtype
    lse_dtype = spec.entry.attr.inputs[6].np_dtype
    q, k, v, mask, out, dout, lse = (("in", i) for i in range(7))
    delta = ("tmp", 0)
    steps = step_1d(runtime, function, rows, [out, dout, delta, g])
    steps += step_1d(runtime, dq_fn, rows, [q, k, v, mask, dout, lse, delta, ("out", 0), g])
    steps += step_1d(runtime, dkdv_fn, cols, [q, k, v, mask, dout, lse, delta, ("out", 1), ("out", 2), g])
    outputs = [(shape, np_dtype) for shape in spec.out_shapes]
    return device_launch(spec, outputs, steps, [(spec.in_shapes[6], lse_dtype)])


def _make(first: str, helpers: tuple, loop):
    def make(attr):
        t = ctype(attr.inputs[0])
        names = tuple(f"opforge::cuda::{h}<{t}>" for h in helpers)
        return CudaKernel(_SOURCE, f"opforge::cuda::{first}<{t}>", loop, (), names)

    return make


mirror_cpu_kernels("ScaledDotProductAttention", _make("AttentionKernel", (), _forward_loop))
mirror_cpu_kernels(
    "ScaledDotProductAttentionGrad",
    _make("AttentionDeltaKernel", ("AttentionDqKernel", "AttentionDkDvKernel"), _grad_loop),
)
