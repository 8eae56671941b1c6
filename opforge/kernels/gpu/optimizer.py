"""ApplyGradientDescent, ApplyMomentum, Adam, ApplyRMSProp, ApplyCenteredRMSProp, ApplyAdagrad,
AdamWeightDecay and FusedMatMulApplyGradientDescent on the GPU, in place: the kernels of
``csrc/kernels/cuda/optimizer.cu`` (the updates of ``opforge/functors/optimizer.h``, the CPU's) write var
and the state inputs (ApplyMomentum's accumulation, Adam's m and v, ...) into the Parameters' own buffers;
the launcher returns the written inputs as the outputs. The scalar inputs stay on the device."""

from __future__ import annotations

import numpy as np

from opforge.errors import KernelError
from opforge.kernels.gpu.cuda import CudaKernel, ctype
from opforge.kernels.gpu.elementwise import mirror_cpu_kernels
from opforge.kernels.gpu.support import device_launch, launch_1d, numel, step_1d, writes_in_place, written_targets

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


def _in_place(spec, function, n: int, count: int, params: list):
    """``run`` for a call that writes outputs ``0..count-1`` into their own inputs (the Parameters; see
    ``writes_in_place``): outputs ``("in", i)``, one grid-stride launch of ``params``, given as data."""
    outputs = [("in", i) for i in range(count)]
    return device_launch(spec, outputs, step_1d(spec.device.runtime, function, n, params))


def _gradient_descent_loop(spec, function, kernel):
    """``ApplyGradientDescentKernel<T>(var, alpha, delta, n)``."""
    n = _check(spec, {1: "alpha"}, {2: "delta"})
    if writes_in_place(spec, 1):
        return _in_place(spec, function, n, 1, [("in", 0), ("in", 1), ("in", 2), np.int64(n)])
    runtime = spec.device.runtime

    def run(arrays):
        (var,) = written_targets(spec, arrays, 1)
        launch_1d(runtime, function, n, (var, arrays[1], arrays[2], np.int64(n)))
        return var

    return run


def _matmul_gradient_descent_loop(spec, function, kernel):
    """FusedMatMulApplyGradientDescent: the product by the runtime's GEMM (cuBLAS) into a scratch array,
    then ``ApplyGradientDescentKernel<T>(var, alpha, product, n)``. (The trace compiler fuses the pair on
    the CPU only, where the GEMM accumulates into var; here it is the pair's two launches.)"""
    _check(spec, {1: "alpha"}, {})
    device, runtime = spec.device, spec.device.runtime
    ta, tb = bool(spec.attrs.get("transpose_a", False)), bool(spec.attrs.get("transpose_b", False))
    shape = tuple(spec.in_shapes[0])
    n, k = numel(shape), spec.in_shapes[2][0 if ta else 1]

    def run(arrays):
        (var,) = written_targets(spec, arrays, 1)
        if n == 0 or k == 0:  # nothing to update, or an empty sum: var as it was
            return var
        product = device.empty(shape, arrays[0].dtype)
        runtime.matmul(arrays[2], arrays[3], product, ta, tb)
        launch_1d(runtime, function, n, (var, arrays[1], product, np.int64(n)))
        return var

    return run


def _momentum_loop(spec, function, kernel):
    """``ApplyMomentumKernel<T>(var, accumulation, lr, gradient, momentum, n, gradient_scale, nesterov)``;
    the accumulation input is written in place too (RW_WRITE, not an output)."""
    n = _check(spec, {2: "learning_rate", 4: "momentum"}, {1: "accumulation", 3: "gradient"})
    runtime = spec.device.runtime
    scale = np.float64(spec.attrs.get("gradient_scale", 1.0))
    nesterov = np.uint8(bool(spec.attrs.get("use_nesterov", False)))
    if writes_in_place(spec, 1):
        return _in_place(spec, function, n, 1, [*(("in", i) for i in range(5)), np.int64(n), scale, nesterov])

    def run(arrays):
        (var,) = written_targets(spec, arrays, 1)
        launch_1d(runtime, function, n, (var, *arrays[1:5], np.int64(n), scale, nesterov))
        return var

    return run


_ADAM_SCALARS = {3: "beta1_power", 4: "beta2_power", 5: "lr", 6: "beta1", 7: "beta2", 8: "epsilon"}


def _adam_loop(spec, function, kernel):
    """``AdamKernel<T>(var, m, v, beta1_power, beta2_power, lr, beta1, beta2, epsilon, gradient, n, nesterov)``."""
    n = _check(spec, _ADAM_SCALARS, {1: "m", 2: "v", 9: "gradient"})
    runtime = spec.device.runtime
    nesterov = np.uint8(bool(spec.attrs.get("use_nesterov", False)))
    if writes_in_place(spec, 3):
        return _in_place(spec, function, n, 3, [*(("in", i) for i in range(10)), np.int64(n), nesterov])

    def run(arrays):
        var, m, v = written_targets(spec, arrays, 3)
        launch_1d(runtime, function, n, (var, m, v, *arrays[3:10], np.int64(n), nesterov))
        return var, m, v

    return run


def _rms_prop_loop(spec, function, kernel):
    """``ApplyRMSPropKernel<T>(var, mean_square, moment, lr, grad, decay, momentum, epsilon, n)``; the
    mean_square and moment inputs are written in place too (RW_WRITE, not outputs)."""
    n = _check(
        spec, {3: "learning_rate", 5: "decay", 6: "momentum", 7: "epsilon"}, {1: "mean_square", 2: "moment", 4: "grad"}
    )
    if writes_in_place(spec, 1):
        return _in_place(spec, function, n, 1, [*(("in", i) for i in range(8)), np.int64(n)])
    runtime = spec.device.runtime

    def run(arrays):
        (var,) = written_targets(spec, arrays, 1)
        launch_1d(runtime, function, n, (var, *arrays[1:8], np.int64(n)))
        return var

    return run


def _centered_rms_prop_loop(spec, function, kernel):
    """``ApplyCenteredRMSPropKernel<T>(var, mean_gradient, mean_square, moment, grad, lr, decay, momentum,
    epsilon, n)``; the three states are written in place too."""
    n = _check(
        spec,
        {5: "learning_rate", 6: "decay", 7: "momentum", 8: "epsilon"},
        {1: "mean_gradient", 2: "mean_square", 3: "moment", 4: "grad"},
    )
    if writes_in_place(spec, 1):
        return _in_place(spec, function, n, 1, [*(("in", i) for i in range(9)), np.int64(n)])
    runtime = spec.device.runtime

    def run(arrays):
        (var,) = written_targets(spec, arrays, 1)
        launch_1d(runtime, function, n, (var, *arrays[1:9], np.int64(n)))
        return var

    return run


def _adagrad_loop(spec, function, kernel):
    """``ApplyAdagradKernel<T>(var, accum, lr, grad, n, update_slots)``."""
    n = _check(spec, {2: "lr"}, {1: "accum", 3: "grad"})
    runtime = spec.device.runtime
    update_slots = np.uint8(bool(spec.attrs.get("update_slots", True)))
    if writes_in_place(spec, 2):
        return _in_place(spec, function, n, 2, [*(("in", i) for i in range(4)), np.int64(n), update_slots])

    def run(arrays):
        var, accum = written_targets(spec, arrays, 2)
        launch_1d(runtime, function, n, (var, accum, *arrays[2:4], np.int64(n), update_slots))
        return var, accum

    return run


def _adam_weight_decay_loop(spec, function, kernel):
    """``AdamWeightDecayKernel<T>(var, m, v, lr, beta1, beta2, epsilon, decay, gradient, n)``."""
    n = _check(spec, {3: "lr", 4: "beta1", 5: "beta2", 6: "epsilon", 7: "decay"}, {1: "m", 2: "v", 8: "gradient"})
    if writes_in_place(spec, 3):
        return _in_place(spec, function, n, 3, [*(("in", i) for i in range(9)), np.int64(n)])
    runtime = spec.device.runtime

    def run(arrays):
        var, m, v = written_targets(spec, arrays, 3)
        launch_1d(runtime, function, n, (var, m, v, *arrays[3:9], np.int64(n)))
        return var, m, v

    return run


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
