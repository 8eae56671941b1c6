"""GPU kernels of LSTMLayer, GRULayer, RNNLayer and their grads: the input projection and each step's recurrent product
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
        _weight_grads(runtime, (dz, dz), x, h_prev, w_ih, dx, dw_ih, dw_hh, rows, inp, hidden, _compute_dx(spec))
        if rows and g4:
            launch_1d(runtime, sum_rows, g4, (dz, dbias, np.int64(rows), np.int64(g4)))
        return dx, dh, dc, dw_ih, dw_hh, dbias

    return run


def _gru_sizes(spec, gates):
    seq, batch, inp = spec.in_shapes[0]
    hidden = spec.in_shapes[2][0] // gates
    reverse = bool(spec.attrs.get("reverse", False))
    return seq, batch, inp, hidden, (list(range(seq - 1, -1, -1)) if reverse else list(range(seq)))


def _relu(spec) -> np.int64:
    return np.int64(spec.attrs.get("nonlinearity", "tanh") == "relu")


def _project(runtime, x, w, out, rows, inp, cols):
    """out = x W^T for every step at once (x [T, B, I] as [T B, I]); zeros stay when nothing is summed."""
    if rows and inp and cols:
        runtime.matmul(runtime.reshape(x, (rows, inp)), w, out, False, True)


def _compute_dx(spec) -> bool:
    """The grads' ``compute_dx`` attribute: False leaves dx zeros (the bprop's x needs no gradient)."""
    return bool(spec.attrs.get("compute_dx", True))


def _weight_grads(runtime, dz, x, h_prev, w_ih, dx, dw_ih, dw_hh, rows, inp, hidden, compute_dx):
    """dx = dz W_ih (when ``compute_dx``), dW_ih = dz^T x, dW_hh = dz_h^T h_prev (dz_h: dz, or the GRU's dgh)."""
    dz_x, dz_h = dz
    if not rows or not dz_x.shape[1]:
        return
    if inp:
        if compute_dx:
            runtime.matmul(dz_x, w_ih, runtime.reshape(dx, (rows, inp)), False, False)
        runtime.matmul(dz_x, runtime.reshape(x, (rows, inp)), dw_ih, True, False)
    if hidden:
        runtime.matmul(dz_h, runtime.reshape(h_prev, (rows, hidden)), dw_hh, True, False)


def _gru_forward_loop(spec, function, kernel):
    device, runtime = spec.device, spec.device.runtime
    seq, batch, inp, hidden, order = _gru_sizes(spec, 3)
    np_dtype = spec.entry.attr.outputs[0].np_dtype
    n, rows = batch * hidden, seq * batch

    def run(arrays):
        x, h0, w_ih, w_hh, b_ih, b_hh = arrays
        gi = device.full((rows, 3 * hidden), 0, np_dtype)
        _project(runtime, x, w_ih, gi, rows, inp, hidden)
        gates = device.full((seq, batch, 4 * hidden), 0, np_dtype)
        y, h = device.full((seq, batch, hidden), 0, np_dtype), device.empty((batch, hidden), np_dtype)
        runtime.copy(h, h0)
        hw = device.full((batch, 3 * hidden), 0, np_dtype)
        for t in order:
            if hidden and batch:
                runtime.matmul(h, w_hh, hw, False, True)
            args = (gi, gates, hw, b_ih, b_hh, y, h, np.int64(t), np.int64(batch), np.int64(hidden))
            launch_1d(runtime, function, n, args)
        return y, h, gates

    return run


def _gru_backward_loop(spec, function, kernel):
    device, runtime = spec.device, spec.device.runtime
    seq, batch, inp, hidden, order = _gru_sizes(spec, 3)
    t_name = ctype(spec.entry.attr.outputs[0])
    np_dtype = spec.entry.attr.outputs[0].np_dtype
    n, rows, g3 = batch * hidden, seq * batch, 3 * hidden
    sum_rows = function_for(runtime, kernel, f"opforge::cuda::SumRowsKernel<{t_name}>")
    add = function_for(runtime, kernel, f"opforge::cuda::AddKernel<{t_name}>")

    def run(arrays):
        x, h0, w_ih, w_hh, y, gates, dy, dh_n = arrays
        dgi, dgh = device.full((rows, g3), 0, np_dtype), device.full((rows, g3), 0, np_dtype)
        dgh_step = device.full((batch, g3), 0, np_dtype)
        h_prev = device.full((seq, batch, hidden), 0, np_dtype)
        dh_mm, dh_dir = device.empty((batch, hidden), np_dtype), device.full((batch, hidden), 0, np_dtype)
        runtime.copy(dh_mm, dh_n)
        for k in range(seq - 1, -1, -1):
            t, prev = order[k], (order[k - 1] if k > 0 else -1)
            args = (gates, y, h0, dy, dh_mm, dh_dir, dgi, dgh, dgh_step, h_prev, np.int64(t), np.int64(prev),
                    np.int64(batch), np.int64(hidden))  # fmt: skip
            launch_1d(runtime, function, n, args)
            if batch and hidden:
                runtime.matmul(dgh_step, w_hh, dh_mm, False, False)  # the part of dh_{t-1} through W_hh
        dh0 = device.empty((batch, hidden), np_dtype)
        launch_1d(runtime, add, n, (dh_mm, dh_dir, dh0, np.int64(n)))
        dx = device.full((seq, batch, inp), 0, np_dtype)
        dw_ih, dw_hh = device.full((g3, inp), 0, np_dtype), device.full((g3, hidden), 0, np_dtype)
        db_ih, db_hh = device.full((g3,), 0, np_dtype), device.full((g3,), 0, np_dtype)
        _weight_grads(runtime, (dgi, dgh), x, h_prev, w_ih, dx, dw_ih, dw_hh, rows, inp, hidden, _compute_dx(spec))
        if rows and g3:
            launch_1d(runtime, sum_rows, g3, (dgi, db_ih, np.int64(rows), np.int64(g3)))
            launch_1d(runtime, sum_rows, g3, (dgh, db_hh, np.int64(rows), np.int64(g3)))
        return dx, dh0, dw_ih, dw_hh, db_ih, db_hh

    return run


def _rnn_forward_loop(spec, function, kernel):
    device, runtime = spec.device, spec.device.runtime
    seq, batch, inp, hidden, order = _gru_sizes(spec, 1)
    np_dtype = spec.entry.attr.outputs[0].np_dtype
    n, rows, relu = batch * hidden, seq * batch, _relu(spec)

    def run(arrays):
        x, h0, w_ih, w_hh, bias = arrays
        pre = device.full((rows, hidden), 0, np_dtype)
        _project(runtime, x, w_ih, pre, rows, inp, hidden)
        y, h = device.full((seq, batch, hidden), 0, np_dtype), device.empty((batch, hidden), np_dtype)
        runtime.copy(h, h0)
        hw = device.full((batch, hidden), 0, np_dtype)
        for t in order:
            if hidden and batch:
                runtime.matmul(h, w_hh, hw, False, True)
            launch_1d(runtime, function, n, (pre, hw, bias, y, h, np.int64(t), np.int64(batch), np.int64(hidden), relu))
        return y, h

    return run


def _rnn_backward_loop(spec, function, kernel):
    device, runtime = spec.device, spec.device.runtime
    seq, batch, inp, hidden, order = _gru_sizes(spec, 1)
    np_dtype = spec.entry.attr.outputs[0].np_dtype
    n, rows, relu = batch * hidden, seq * batch, _relu(spec)
    sum_rows = function_for(runtime, kernel, f"opforge::cuda::SumRowsKernel<{ctype(spec.entry.attr.outputs[0])}>")

    def run(arrays):
        x, h0, w_ih, w_hh, y, dy, dh_n = arrays
        dz, dz_step = device.full((rows, hidden), 0, np_dtype), device.full((batch, hidden), 0, np_dtype)
        h_prev = device.full((seq, batch, hidden), 0, np_dtype)
        dh = device.empty((batch, hidden), np_dtype)
        runtime.copy(dh, dh_n)
        for k in range(seq - 1, -1, -1):
            t, prev = order[k], (order[k - 1] if k > 0 else -1)
            args = (y, h0, dy, dh, dz, dz_step, h_prev, np.int64(t), np.int64(prev), np.int64(batch),
                    np.int64(hidden), relu)  # fmt: skip
            launch_1d(runtime, function, n, args)
            if batch and hidden:
                runtime.matmul(dz_step, w_hh, dh, False, False)  # dh_{t-1} = dz W_hh
        dx = device.full((seq, batch, inp), 0, np_dtype)
        dw_ih, dw_hh = device.full((hidden, inp), 0, np_dtype), device.full((hidden, hidden), 0, np_dtype)
        dbias = device.full((hidden,), 0, np_dtype)
        _weight_grads(runtime, (dz, dz), x, h_prev, w_ih, dx, dw_ih, dw_hh, rows, inp, hidden, _compute_dx(spec))
        if rows and hidden:
            launch_1d(runtime, sum_rows, hidden, (dz, dbias, np.int64(rows), np.int64(hidden)))
        return dx, dh, dw_ih, dw_hh, dbias

    return run


_HELPERS = {
    "LSTMLayerGrad": ("SumRowsKernel",),
    "GRULayerGrad": ("SumRowsKernel", "AddKernel"),
    "RNNLayerGrad": ("SumRowsKernel",),
}


def _register() -> None:
    for op, template, loop in (
        ("LSTMLayer", "LstmForwardStepKernel", _forward_loop),
        ("LSTMLayerGrad", "LstmBackwardStepKernel", _backward_loop),
        ("GRULayer", "GruForwardStepKernel", _gru_forward_loop),
        ("GRULayerGrad", "GruBackwardStepKernel", _gru_backward_loop),
        ("RNNLayer", "RnnForwardStepKernel", _rnn_forward_loop),
        ("RNNLayerGrad", "RnnBackwardStepKernel", _rnn_backward_loop),
    ):
        kernels = {}
        for entry in registry.kernels_for(op, "CPU", include_disabled=True):
            if entry.source != "builtin":
                continue
            t = ctype(entry.attr.inputs[0])
            helpers = tuple(f"opforge::cuda::{h}<{t}>" for h in _HELPERS.get(op, ()))
            kernels[entry.attr] = CudaKernel("rnn.cu", f"opforge::cuda::{template}<{t}>", loop, helpers=helpers)
        register_cuda_kernels(op, kernels)


_register()
