"""GPU kernels of LSTMLayer and LSTMLayerGrad: the input projection and each step's recurrent product
through the runtime's library GEMM (cuBLAS through CuPy), the cell math of each step a kernel of
``csrc/kernels/cuda/rnn.cu`` (the same functors as the C++ kernels). The steps are launched from the host,
one GEMM and one kernel each, as a GPU LSTM without cuDNN runs. float32 and float64."""

from __future__ import annotations

import numpy as np

from opforge.kernels import registry
from opforge.kernels.gpu.cuda import CudaKernel, ctype, function_for, register_cuda_kernels
from opforge.kernels.gpu.support import launch_1d

__all__ = []


def _sizes(spec):
    seq, batch, inp = spec.in_shapes[0]
    hidden = spec.in_shapes[3][0] // 4
    reverse = bool(spec.attrs.get("reverse", False))
    order = list(range(seq - 1, -1, -1)) if reverse else list(range(seq))
    return seq, batch, inp, hidden, order


def _forward_loop(spec, function, kernel):
    device, runtime = spec.device, spec.device.runtime
    seq, batch, inp, hidden, order = _sizes(spec)
    np_dtype = spec.entry.attr.outputs[0].np_dtype
    n = batch * hidden

    def run(arrays):
        x, h0, c0, w_ih, w_hh, bias = arrays
        gates = device.full((seq * batch, 4 * hidden), 0, np_dtype)
        if seq * batch and inp:
            runtime.matmul(runtime.reshape(x, (seq * batch, inp)), w_ih, gates, False, True)
        y, cs = device.full((seq, batch, hidden), 0, np_dtype), device.full((seq, batch, hidden), 0, np_dtype)
        h, c = device.empty((batch, hidden), np_dtype), device.empty((batch, hidden), np_dtype)
        runtime.copy(h, h0)
        runtime.copy(c, c0)
        hw = device.full((batch, 4 * hidden), 0, np_dtype)
        for t in order:
            if hidden and batch:
                runtime.matmul(h, w_hh, hw, False, True)
            args = (gates, hw, bias, y, cs, h, c, np.int64(t), np.int64(batch), np.int64(hidden))
            launch_1d(runtime, function, n, args)
        return y, h, c, runtime.reshape(gates, (seq, batch, 4 * hidden)), cs

    return run


def _backward_loop(spec, function, kernel):
    device, runtime = spec.device, spec.device.runtime
    seq, batch, inp, hidden, order = _sizes(spec)
    np_dtype = spec.entry.attr.outputs[0].np_dtype
    n, rows, g4 = batch * hidden, seq * batch, 4 * hidden
    sum_rows = function_for(runtime, kernel, f"opforge::cuda::SumRowsKernel<{ctype(spec.entry.attr.outputs[0])}>")

    def run(arrays):
        x, h0, c0, w_ih, w_hh, y, gates, cs, dy, dh_n, dc_n = arrays
        dz = device.full((rows, g4), 0, np_dtype)
        dz_step = device.full((batch, g4), 0, np_dtype)
        h_prev = device.full((seq, batch, hidden), 0, np_dtype)
        dc = device.empty((batch, hidden), np_dtype)
        runtime.copy(dc, dc_n)
        dh = device.empty((batch, hidden), np_dtype)
        runtime.copy(dh, dh_n)
        for k in range(seq - 1, -1, -1):
            t, prev = order[k], (order[k - 1] if k > 0 else -1)
            args = (gates, cs, c0, y, h0, dy, dh, dc, dz, dz_step, h_prev, np.int64(t), np.int64(prev),
                    np.int64(batch), np.int64(hidden))  # fmt: skip
            launch_1d(runtime, function, n, args)
            if batch and hidden:
                runtime.matmul(dz_step, w_hh, dh, False, False)  # dh_{t-1} = dz W_hh
        dx = device.full((seq, batch, inp), 0, np_dtype)
        dw_ih, dw_hh = device.full((g4, inp), 0, np_dtype), device.full((g4, hidden), 0, np_dtype)
        dbias = device.full((g4,), 0, np_dtype)
        if rows and g4:
            if inp:
                runtime.matmul(dz, w_ih, runtime.reshape(dx, (rows, inp)), False, False)
                runtime.matmul(dz, runtime.reshape(x, (rows, inp)), dw_ih, True, False)
            runtime.matmul(dz, runtime.reshape(h_prev, (rows, hidden)), dw_hh, True, False)
            launch_1d(runtime, sum_rows, g4, (dz, dbias, np.int64(rows), np.int64(g4)))
        return dx, dh, dc, dw_ih, dw_hh, dbias

    return run


def _register() -> None:
    for op, template, loop in (
        ("LSTMLayer", "LstmForwardStepKernel", _forward_loop),
        ("LSTMLayerGrad", "LstmBackwardStepKernel", _backward_loop),
    ):
        kernels = {}
        for entry in registry.kernels_for(op, "CPU", include_disabled=True):
            if entry.source != "builtin":
                continue
            t = ctype(entry.attr.inputs[0])
            helpers = (f"opforge::cuda::SumRowsKernel<{t}>",) if op == "LSTMLayerGrad" else ()
            kernels[entry.attr] = CudaKernel("rnn.cu", f"opforge::cuda::{template}<{t}>", loop, helpers=helpers)
        register_cuda_kernels(op, kernels)


_register()
