"""GPU kernels of LSTMLayer, GRULayer, RNNLayer and their grads, float32 and float64.

The input projection and each step's recurrent product are cuBLAS GEMMs, the cell math of each step a kernel
of ``csrc/kernels/cuda/rnn.cu`` (the same functors as the C++ kernels): one GEMM and one kernel a step, as a
GPU LSTM without cuDNN runs. The sequence length is in the call's shapes, so the whole call is fixed when its
plan is made and given as ``device_launch`` steps (launched from C where the runtime can: no Python per step).
"""

from __future__ import annotations

import numpy as np

from opforge.errors import KernelError
from opforge.kernels import registry
from opforge.kernels.gpu.cuda import CudaKernel, ctype, function_for, register_cuda_kernels
from opforge.kernels.gpu.fill import fill_steps
from opforge.kernels.gpu.support import StepPlan, numel, output_specs

__all__ = []


class _Plan(StepPlan):
    """One call's steps: rnn.cu's helpers by name, zero fills, and GEMMs that leave empty products out."""

    def __init__(self, spec, kernel: CudaKernel):
        dtype = spec.entry.attr.outputs[0]
        super().__init__(spec.device.runtime, dtype.np_dtype)
        self.spec, self.source, self.ctype = spec, kernel, ctype(dtype)

    def helper(self, template: str):
        return function_for(self.runtime, self.source, f"opforge::cuda::{template}<{self.ctype}>")

    def zeros(self, target, shape: tuple) -> None:
        self.steps += fill_steps(self.runtime, shape, self.np_dtype, 0, target)

    def copy(self, dst, src, n: int) -> None:
        self.kernel(self.helper("CopyKernel"), n, [src, dst, np.int64(n)])

    def sum_rows(self, x, out, rows: int, cols: int) -> None:
        """out[j] = the sum of x [rows, cols]'s column j (zeros for no rows): a bias's gradient."""
        self.kernel(self.helper("SumRowsKernel"), cols, [x, out, np.int64(rows), np.int64(cols)])

    def product(self, a, a_shape, b, b_shape, out, out_shape, transpose_a=False, transpose_b=False) -> None:
        """out = op(a) @ op(b): nothing for an empty out, zeros for an empty sum (cuBLAS takes neither)."""
        if numel(out_shape) == 0:
            return
        if (a_shape[0] if transpose_a else a_shape[1]) == 0:
            self.zeros(out, out_shape)
            return
        self.gemm(a, a_shape, b, b_shape, out, out_shape, transpose_a=transpose_a, transpose_b=transpose_b)

    def weight_grads(self, dz, x, h_prev, w_ih, dx, dw_ih, dw_hh, sizes: tuple) -> None:
        """dx = dz_x W_ih (zeros unless the attr ``compute_dx``: the bprop's x may need no gradient),
        dW_ih = dz_x^T x, dW_hh = dz_h^T h_prev (dz_h: dz_x, or the GRU's dgh); ``sizes`` is (rows, input,
        hidden, gate columns)."""
        (dz_x, dz_h), (rows, inp, hidden, g) = dz, sizes
        if bool(self.spec.attrs.get("compute_dx", True)):
            self.product(dz_x, (rows, g), w_ih, (g, inp), dx, (rows, inp))
        else:
            self.zeros(dx, (rows, inp))
        self.product(dz_x, (rows, g), x, (rows, inp), dw_ih, (g, inp), transpose_a=True)
        self.product(dz_h, (rows, g), h_prev, (rows, hidden), dw_hh, (g, hidden), transpose_a=True)

    def launch(self):
        run = super().launch(self.spec, output_specs(self.spec))
        if run is None:  # every GEMM here is one plain 2-D product of a floating type
            raise KernelError(f"For '{self.spec.op_name}', a GEMM of {self.np_dtype} is not one cuBLAS call.")
        return run


def _sizes(spec, gates: int) -> tuple:
    """(seq, batch, input, hidden, the steps in the order the forward runs them): W_ih is [gates H, I], the
    call's fourth input for an LSTM (after c0), the third for the others."""
    seq, batch, inp = spec.in_shapes[0]
    hidden = spec.in_shapes[3 if gates == 4 else 2][0] // gates
    order = list(range(seq - 1, -1, -1)) if spec.attrs.get("reverse", False) else list(range(seq))
    return seq, batch, inp, hidden, order


def _params(kind: str, count: int) -> list:
    return [(kind, i) for i in range(count)]


def _steps_back(order: list):
    """(t, prev) for the BPTT steps: the forward's steps backwards, prev the one run before t (-1: none)."""
    for k in range(len(order) - 1, -1, -1):
        yield np.int64(order[k]), np.int64(order[k - 1] if k > 0 else -1)


def _relu(spec) -> np.int64:
    return np.int64(spec.attrs.get("nonlinearity", "tanh") == "relu")


def _lstm_forward(spec, function, kernel):
    seq, batch, inp, hidden, order = _sizes(spec, 4)
    plan, rows, g4, n = _Plan(spec, kernel), seq * batch, 4 * hidden, batch * hidden
    x, h0, c0, w_ih, w_hh, bias = _params("in", 6)
    y, h, c, gates, cs = _params("out", 5)
    plan.product(x, (rows, inp), w_ih, (g4, inp), gates, (rows, g4), transpose_b=True)
    plan.copy(h, h0, n)
    plan.copy(c, c0, n)
    hw = plan.temp((batch, g4))
    for t in order:
        plan.product(h, (batch, hidden), w_hh, (g4, hidden), hw, (batch, g4), transpose_b=True)
        plan.kernel(function, n, [gates, hw, bias, y, cs, h, c, np.int64(t), np.int64(batch), np.int64(hidden)])
    return plan.launch()


def _lstm_backward(spec, function, kernel):
    seq, batch, inp, hidden, order = _sizes(spec, 4)
    plan, rows, g4, n = _Plan(spec, kernel), seq * batch, 4 * hidden, batch * hidden
    x, h0, c0, w_ih, w_hh, y, gates, cs, dy, dh_n, dc_n = _params("in", 11)
    dx, dh, dc, dw_ih, dw_hh, dbias = _params("out", 6)
    dz, dz_step, h_prev = plan.temp((rows, g4)), plan.temp((batch, g4)), plan.temp((seq, batch, hidden))
    plan.copy(dc, dc_n, n)
    plan.copy(dh, dh_n, n)
    for t, prev in _steps_back(order):
        params = [gates, cs, c0, y, h0, dy, dh, dc, dz, dz_step, h_prev, t, prev, np.int64(batch), np.int64(hidden)]
        plan.kernel(function, n, params)
        plan.product(dz_step, (batch, g4), w_hh, (g4, hidden), dh, (batch, hidden))  # dh_{t-1} = dz W_hh
    plan.weight_grads((dz, dz), x, h_prev, w_ih, dx, dw_ih, dw_hh, (rows, inp, hidden, g4))
    plan.sum_rows(dz, dbias, rows, g4)
    return plan.launch()


def _gru_forward(spec, function, kernel):
    seq, batch, inp, hidden, order = _sizes(spec, 3)
    plan, rows, g3, n = _Plan(spec, kernel), seq * batch, 3 * hidden, batch * hidden
    x, h0, w_ih, w_hh, b_ih, b_hh = _params("in", 6)
    y, h, gates = _params("out", 3)
    gi, hw = plan.temp((rows, g3)), plan.temp((batch, g3))
    plan.product(x, (rows, inp), w_ih, (g3, inp), gi, (rows, g3), transpose_b=True)
    plan.copy(h, h0, n)
    for t in order:
        plan.product(h, (batch, hidden), w_hh, (g3, hidden), hw, (batch, g3), transpose_b=True)
        plan.kernel(function, n, [gi, gates, hw, b_ih, b_hh, y, h, np.int64(t), np.int64(batch), np.int64(hidden)])
    return plan.launch()


def _gru_backward(spec, function, kernel):
    seq, batch, inp, hidden, order = _sizes(spec, 3)
    plan, rows, g3, n = _Plan(spec, kernel), seq * batch, 3 * hidden, batch * hidden
    x, h0, w_ih, w_hh, y, gates, dy, dh_n = _params("in", 8)
    dx, dh0, dw_ih, dw_hh, db_ih, db_hh = _params("out", 6)
    dgi, dgh, dgh_step = plan.temp((rows, g3)), plan.temp((rows, g3)), plan.temp((batch, g3))
    h_prev, dh_mm, dh_dir = plan.temp((seq, batch, hidden)), plan.temp((batch, hidden)), plan.temp((batch, hidden))
    plan.copy(dh_mm, dh_n, n)
    plan.zeros(dh_dir, (batch, hidden))
    for t, prev in _steps_back(order):
        params = [gates, y, h0, dy, dh_mm, dh_dir, dgi, dgh, dgh_step, h_prev, t, prev, np.int64(batch),
                  np.int64(hidden)]  # fmt: skip
        plan.kernel(function, n, params)
        plan.product(dgh_step, (batch, g3), w_hh, (g3, hidden), dh_mm, (batch, hidden))  # dh_{t-1}'s part via W_hh
    plan.kernel(plan.helper("AddKernel"), n, [dh_mm, dh_dir, dh0, np.int64(n)])
    plan.weight_grads((dgi, dgh), x, h_prev, w_ih, dx, dw_ih, dw_hh, (rows, inp, hidden, g3))
    plan.sum_rows(dgi, db_ih, rows, g3)
    plan.sum_rows(dgh, db_hh, rows, g3)
    return plan.launch()


def _rnn_forward(spec, function, kernel):
    seq, batch, inp, hidden, order = _sizes(spec, 1)
    plan, rows, n = _Plan(spec, kernel), seq * batch, batch * hidden
    x, h0, w_ih, w_hh, bias = _params("in", 5)
    y, h = _params("out", 2)
    pre, hw = plan.temp((rows, hidden)), plan.temp((batch, hidden))
    plan.product(x, (rows, inp), w_ih, (hidden, inp), pre, (rows, hidden), transpose_b=True)
    plan.copy(h, h0, n)
    for t in order:
        plan.product(h, (batch, hidden), w_hh, (hidden, hidden), hw, (batch, hidden), transpose_b=True)
        plan.kernel(function, n, [pre, hw, bias, y, h, np.int64(t), np.int64(batch), np.int64(hidden), _relu(spec)])
    return plan.launch()


def _rnn_backward(spec, function, kernel):
    seq, batch, inp, hidden, order = _sizes(spec, 1)
    plan, rows, n = _Plan(spec, kernel), seq * batch, batch * hidden
    x, h0, w_ih, w_hh, y, dy, dh_n = _params("in", 7)
    dx, dh, dw_ih, dw_hh, dbias = _params("out", 5)
    dz, dz_step, h_prev = plan.temp((rows, hidden)), plan.temp((batch, hidden)), plan.temp((seq, batch, hidden))
    plan.copy(dh, dh_n, n)
    for t, prev in _steps_back(order):
        params = [y, h0, dy, dh, dz, dz_step, h_prev, t, prev, np.int64(batch), np.int64(hidden), _relu(spec)]
        plan.kernel(function, n, params)
        plan.product(dz_step, (batch, hidden), w_hh, (hidden, hidden), dh, (batch, hidden))  # dh_{t-1} = dz W_hh
    plan.weight_grads((dz, dz), x, h_prev, w_ih, dx, dw_ih, dw_hh, (rows, inp, hidden, hidden))
    plan.sum_rows(dz, dbias, rows, hidden)
    return plan.launch()


_HELPERS = {
    "LSTMLayer": ("CopyKernel",),
    "LSTMLayerGrad": ("CopyKernel", "SumRowsKernel"),
    "GRULayer": ("CopyKernel",),
    "GRULayerGrad": ("CopyKernel", "SumRowsKernel", "AddKernel"),
    "RNNLayer": ("CopyKernel",),
    "RNNLayerGrad": ("CopyKernel", "SumRowsKernel"),
}


def _register() -> None:
    for op, template, loop in (
        ("LSTMLayer", "LstmForwardStepKernel", _lstm_forward),
        ("LSTMLayerGrad", "LstmBackwardStepKernel", _lstm_backward),
        ("GRULayer", "GruForwardStepKernel", _gru_forward),
        ("GRULayerGrad", "GruBackwardStepKernel", _gru_backward),
        ("RNNLayer", "RnnForwardStepKernel", _rnn_forward),
        ("RNNLayerGrad", "RnnBackwardStepKernel", _rnn_backward),
    ):
        kernels = {}
        for entry in registry.kernels_for(op, "CPU", include_disabled=True):
            if entry.source != "builtin":
                continue
            t = ctype(entry.attr.inputs[0])
            helpers = tuple(f"opforge::cuda::{h}<{t}>" for h in _HELPERS[op])
            kernels[entry.attr] = CudaKernel("rnn.cu", f"opforge::cuda::{template}<{t}>", loop, helpers=helpers)
        register_cuda_kernels(op, kernels)


_register()
