"""ApplyGradientDescent, ApplyMomentum, Adam, ApplyRMSProp, ApplyCenteredRMSProp, ApplyAdagrad,
AdamWeightDecay and FusedMatMulApplyGradientDescent on the GPU, in place: the kernels of
``csrc/kernels/cuda/optimizer.cu`` (the updates of ``opforge/functors/optimizer.h``, the CPU's) write var
and the state inputs (ApplyMomentum's accumulation, Adam's m and v, ...) into the Parameters' own buffers;
the launcher returns the written inputs as the outputs (a call that does not write its inputs in place
writes copies of them: ``write_inputs``). The scalar inputs stay on the device; each call launches from C."""

from __future__ import annotations

import numpy as np

from opforge.errors import KernelError
from opforge.kernels.gpu.cuda import CudaKernel, ctype
from opforge.kernels.gpu.elementwise import mirror_cpu_kernels
from opforge.kernels.gpu.support import StepPlan, input_params, numel, write_inputs

__all__ = []


def _check(spec, scalars: dict, like: dict) -> int:
    """Inputs ``scalars`` ({index: name}) are scalars (shape [] or [1]); ``like`` ({index: name}) have
    the shape of input 0. Returns the number of elements updated."""
    op, shapes = spec.op_name, spec.in_shapes
    for i, name in scalars.items():
        if tuple(shapes[i]) not in ((), (1,)):
            raise KernelError(
                f"For '{op}', the '{name}' must be a scalar (shape [] or [1]), but got {list(shapes[i])}."
            )
    for i, name in like.items():
        if tuple(shapes[i]) != tuple(shapes[0]):
            raise KernelError(
                f"For '{op}', the '{name}' must have the shape of input 0 {list(shapes[0])}, but got {list(shapes[i])}."
            )
    return numel(shapes[0])


def _update(spec, function, n: int, count: int, params: list):
    """``run`` for one grid-stride launch of ``params`` over ``n`` elements that writes inputs ``0..count-1``:
    the Parameters in place, or copies of the inputs (``write_inputs``), returned as the outputs."""
    plan = StepPlan(spec.device.runtime, spec.entry.attr.inputs[0].np_dtype)
    outputs = write_inputs(plan, spec, count)
    plan.kernel(function, n, params)
    return plan.launch(spec, outputs)


def _gradient_descent_loop(spec, function, kernel):
    """``ApplyGradientDescentKernel<T>(var, alpha, delta, n)``."""
    n = _check(spec, {1: "alpha"}, {2: "delta"})
    return _update(spec, function, n, 1, [*input_params(spec), np.int64(n)])


def _matmul_gradient_descent_loop(spec, function, kernel):
    """FusedMatMulApplyGradientDescent: the product by a cuBLAS GEMM into a temporary, then
    ``ApplyGradientDescentKernel<T>(var, alpha, product, n)``. (The trace compiler fuses the pair on the
    CPU only, where the GEMM accumulates into var; here it is the pair's two launches.)"""
    _check(spec, {1: "alpha"}, {})
    ta, tb = bool(spec.attrs.get("transpose_a", False)), bool(spec.attrs.get("transpose_b", False))
    shape, x1, x2 = (tuple(spec.in_shapes[i]) for i in (0, 2, 3))
    n, k = numel(shape), x1[0 if ta else 1]
    plan = StepPlan(spec.device.runtime, spec.entry.attr.inputs[0].np_dtype)
    outputs = write_inputs(plan, spec, 1)
    if n and k:  # else nothing to update, or an empty sum: var as it was
        product = plan.temp(shape)
        plan.gemm(("in", 2), x1, ("in", 3), x2, product, shape, transpose_a=ta, transpose_b=tb)
        plan.kernel(function, n, [("in", 0), ("in", 1), product, np.int64(n)])
    return plan.launch(spec, outputs)  # float32 and float64 matrices: always one GEMM


def _momentum_loop(spec, function, kernel):
    """``ApplyMomentumKernel<T>(var, accumulation, lr, gradient, momentum, n, gradient_scale, nesterov)``;
    the accumulation input is written in place too (RW_WRITE, not an output)."""
    n = _check(spec, {2: "learning_rate", 4: "momentum"}, {1: "accumulation", 3: "gradient"})
    scale = np.float64(spec.attrs.get("gradient_scale", 1.0))
    nesterov = np.uint8(bool(spec.attrs.get("use_nesterov", False)))
    return _update(spec, function, n, 1, [*input_params(spec), np.int64(n), scale, nesterov])


_ADAM_SCALARS = {3: "beta1_power", 4: "beta2_power", 5: "lr", 6: "beta1", 7: "beta2", 8: "epsilon"}


def _adam_loop(spec, function, kernel):
    """``AdamKernel<T>(var, m, v, beta1_power, beta2_power, lr, beta1, beta2, epsilon, gradient, n, nesterov)``."""
    n = _check(spec, _ADAM_SCALARS, {1: "m", 2: "v", 9: "gradient"})
    nesterov = np.uint8(bool(spec.attrs.get("use_nesterov", False)))
    return _update(spec, function, n, 3, [*input_params(spec), np.int64(n), nesterov])


def _rms_prop_loop(spec, function, kernel):
    """``ApplyRMSPropKernel<T>(var, mean_square, moment, lr, grad, decay, momentum, epsilon, n)``; the
    mean_square and moment inputs are written in place too (RW_WRITE, not outputs)."""
    n = _check(
        spec, {3: "learning_rate", 5: "decay", 6: "momentum", 7: "epsilon"}, {1: "mean_square", 2: "moment", 4: "grad"}
    )
    return _update(spec, function, n, 1, [*input_params(spec), np.int64(n)])


def _centered_rms_prop_loop(spec, function, kernel):
    """``ApplyCenteredRMSPropKernel<T>(var, mean_gradient, mean_square, moment, grad, lr, decay, momentum,
    epsilon, n)``; the three states are written in place too."""
    n = _check(
        spec,
        {5: "learning_rate", 6: "decay", 7: "momentum", 8: "epsilon"},
        {1: "mean_gradient", 2: "mean_square", 3: "moment", 4: "grad"},
    )
    return _update(spec, function, n, 1, [*input_params(spec), np.int64(n)])


def _adagrad_loop(spec, function, kernel):
    """``ApplyAdagradKernel<T>(var, accum, lr, grad, n, update_slots)``."""
    n = _check(spec, {2: "lr"}, {1: "accum", 3: "grad"})
    update_slots = np.uint8(bool(spec.attrs.get("update_slots", True)))
    return _update(spec, function, n, 2, [*input_params(spec), np.int64(n), update_slots])


def _adam_weight_decay_loop(spec, function, kernel):
    """``AdamWeightDecayKernel<T>(var, m, v, lr, beta1, beta2, epsilon, decay, gradient, n)``."""
    n = _check(spec, {3: "lr", 4: "beta1", 5: "beta2", 6: "epsilon", 7: "decay"}, {1: "m", 2: "v", 8: "gradient"})
    return _update(spec, function, n, 3, [*input_params(spec), np.int64(n)])


for _op, _kernel, _loop in (
    ("ApplyGradientDescent", "ApplyGradientDescentKernel", _gradient_descent_loop),
    ("FusedMatMulApplyGradientDescent", "ApplyGradientDescentKernel", _matmul_gradient_descent_loop),
    ("ApplyMomentum", "ApplyMomentumKernel", _momentum_loop),
    ("Adam", "AdamKernel", _adam_loop),
    ("ApplyRMSProp", "ApplyRMSPropKernel", _rms_prop_loop),
    ("ApplyCenteredRMSProp", "ApplyCenteredRMSPropKernel", _centered_rms_prop_loop),
    ("ApplyAdagrad", "ApplyAdagradKernel", _adagrad_loop),
    ("AdamWeightDecay", "AdamWeightDecayKernel", _adam_weight_decay_loop),
):
    mirror_cpu_kernels(
        _op,
        lambda attr, _kernel=_kernel, _loop=_loop: CudaKernel(
            "optimizer.cu", f"opforge::cuda::{_kernel}<{ctype(attr.inputs[0])}>", _loop
        ),
    )
