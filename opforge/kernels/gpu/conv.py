"""Conv2D, its two gradients, MaxPool, AvgPool and their gradients on the GPU, for every KernelAttr the
CPU registers.

The convolutions are im2col + GEMM, as on the CPU (``csrc/kernels/cpu/conv.cc``): the batch runs in chunks
of samples whose im2col columns stay under ``COLUMN_BYTES``; per chunk ``csrc/kernels/cuda/conv.cu``'s
``Im2ColKernel`` lays the columns out as [samples, group, K, oh * ow] (K = in channels / group * kh * kw) and
one batched cuBLAS GEMM (``gemm_step``) with the weights viewed as [group, out channels / group, K] writes the
NCHW output. Conv2DBackpropInput is the GEMM with the weights
transposed, then ``Col2ImKernel`` (a thread per input element summing the entries that read it: no atomics,
the same bits every run). Conv2DBackpropFilter is a GEMM per sample of the columns and the output gradient,
then ``SampleSumKernel`` sums the samples in order. A 1x1 window with unit strides and no padding uses the
input itself as the columns. Where a group has one output channel (depthwise among them) the GEMM would be a
matrix-vector product reusing nothing: Conv2D and Conv2DBackpropInput run the direct sums instead
(``Conv2DKernel``, ``Conv2DBackpropInputKernel``: a thread per output element). float32, float64 and
float16 (cuBLAS's half GEMM, summing in float32) run in their own type. Each call is fixed when its plan is
made, so it is given as ``device_launch`` steps (``_StepPlan``: the kernels and ``gemm_step``s, the chunks' scratch as
temporaries) and launched from C, a grouped forward or input gradient of several samples as a GEMM per sample
(weights [group, og, K] against [samples, group, K, P] is not one cuBLAS call: each sample's is, batched over
the groups); bfloat16's steps run in float32 between widening casts (``widen``: the GPU's Cast kernels, the
result rounded back once), as MatMul's do. An empty batch or window is a fill of zeros.

Pooling runs the direct kernels of ``pool.cu`` (a thread per output element, the window math of
``opforge/functors/conv.h`` the CPU kernels use); AdaptiveAvgPool2D's gradient a thread per input element,
gathering from the outputs whose windows hold it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from opforge.errors import KernelError
from opforge.geometry import conv_output_and_pads
from opforge.kernels.gpu.cast import widen
from opforge.kernels.gpu.cuda import CudaKernel, ctype, function_for
from opforge.kernels.gpu.elementwise import mirror_cpu_kernels
from opforge.kernels.gpu.fill import fill_steps
from opforge.kernels.gpu.matmul import GEMM_VIA_FLOAT32
from opforge.kernels.gpu.support import StepPlan, device_launch, numel, step_1d

__all__ = ["COLUMN_BYTES"]

# The most bytes of im2col columns (and, for the filter gradient, per-sample GEMM results) one chunk of the
# batch holds: a large batch or image runs in several chunks instead of one buffer of any size.
COLUMN_BYTES = 256 << 20
MAX_WINDOW_ATTR = 1 << 31  # kMaxWindowAttr of csrc/kernels/cpu/conv_geometry.h


def _window(spec, x, y, conv: bool) -> tuple:
    """The int64 geometry ``(pad_top, pad_left, kh, kw, sh, sw, dh, dw, group)`` checked against the
    shapes: ``x`` the forward's input, ``y`` its output."""
    op, attrs = spec.op_name, spec.attrs
    if len(x) != 4 or len(y) != 4:
        raise KernelError(f"For '{op}', the tensors must be 4-D (NCHW), but got {list(x)} and {list(y)}.")
    k = tuple(attrs["kernel_size"])[-2:]
    s = tuple(attrs["stride" if conv else "strides"])[-2:]
    d = tuple(attrs["dilation"])[-2:] if conv else (1, 1)
    group = int(attrs["group"]) if conv else 1
    if max(*k, *s, *d) > MAX_WINDOW_ATTR:  # as the CPU kernels: window arithmetic must not overflow int64
        raise KernelError(
            f"For '{op}', the kernel size, strides and dilations must be at most {MAX_WINDOW_ATTR}, but got kernel "
            f"{list(k)}, strides {list(s)}, dilations {list(d)}."
        )
    mode = attrs["pad_mode"]
    pad = tuple(attrs.get("pad", (0, 0, 0, 0))) if conv else (0, 0, 0, 0)
    oh, pt, _ = conv_output_and_pads(op, x[2], k[0], s[0], d[0], mode, pad[:2])
    ow, pl, _ = conv_output_and_pads(op, x[3], k[1], s[1], d[1], mode, pad[2:])
    if list(y[2:]) != [oh, ow] or y[0] != x[0]:
        raise KernelError(f"For '{op}', the output shape {list(y)} does not match the input {list(x)} and the attrs.")
    return pt, pl, k, s, d, group


# ---------------------------------------------------------------------------------------------
# Convolutions: im2col + GEMM


@dataclass(frozen=True)
class _Conv:
    """One convolution problem: the forward's x [n, c, h, w] and y [n, oc, oh, ow], the kernels' int64
    window arguments, and the compiled ``_HELPERS`` (indexed by ``_IM2COL`` ...)."""

    n: int
    c: int
    h: int
    w: int
    oc: int
    oh: int
    ow: int
    group: int
    window: tuple  # (kh, kw, sh, sw, dh, dw, pt, pl)
    args: tuple  # the kernels' OPF_WINDOW_PARAMS
    functions: tuple

    @property
    def k(self) -> int:  # the GEMM depth: in channels per group times the window
        return self.c // self.group * self.window[0] * self.window[1]

    @property
    def og(self) -> int:
        return self.oc // self.group

    @property
    def p(self) -> int:  # outputs per channel
        return self.oh * self.ow

    @property
    def empty(self) -> bool:  # nothing to compute, or empty sums: zeros
        return self.n == 0 or self.oc == 0 or self.p == 0 or self.k == 0

    @property
    def pointwise(self) -> bool:
        """A 1x1 window, unit strides, no padding: the columns are the input itself."""
        kh, kw, sh, sw, _, _, pt, pl = self.window
        return (kh, kw, sh, sw, pt, pl) == (1, 1, 1, 1, 0, 0) and (self.oh, self.ow) == (self.h, self.w)

    def chunk(self, itemsize: int, filter_grad: bool) -> int:
        """Samples per chunk: as many as keep the columns (and the per-sample dw) under COLUMN_BYTES."""
        per_sample = self.c * self.window[0] * self.window[1] * self.p + (self.oc * self.k if filter_grad else 0)
        return max(1, min(self.n, COLUMN_BYTES // max(1, per_sample * itemsize)))


def _chunks(n: int, nb: int):
    for b0 in range(0, n, nb):
        yield b0, min(nb, n - b0)


_IM2COL, _COL2IM, _COPY, _SAMPLE_SUM, _DIRECT_FORWARD, _DIRECT_INPUT = range(6)
_HELPERS = (
    "Im2ColKernel",
    "Col2ImKernel",
    "CopySpanKernel",
    "SampleSumKernel",
    "Conv2DKernel",
    "Conv2DBackpropInputKernel",
)


# ---------------------------------------------------------------------------------------------
# The computations as device_launch steps (launched from C where the runtime can): every chunk's scratch is a
# prefix of one temporary of the largest chunk's shape.


class _StepPlan(StepPlan):
    """The steps of one convolution call, built chunk by chunk, its kernels named by their index in
    ``_Conv.functions``; ``failed`` where one of its GEMMs is not one cuBLAS call (a grouped convolution's
    weights against several samples)."""

    def __init__(self, runtime, cv: _Conv, np_dtype):
        super().__init__(runtime, np_dtype)
        self.cv = cv

    def run(self, index: int, n: int, params: list) -> None:
        self.kernel(self.cv.functions[index], n, params)

    def copy_span(self, src, src_offset: int, dst, dst_offset: int, span: int) -> None:
        self.run(_COPY, span, [src, np.int64(src_offset), dst, np.int64(dst_offset), np.int64(span)])

    def weights_gemm(self, w, w_shape, x, x_shape, out, out_shape, **transposes) -> None:
        """The weights [group, ., .] against ``m`` samples [m, group, ., P]: one batched GEMM, or for a grouped
        convolution of several samples (not one cuBLAS call: the weights repeat per sample) one per sample, each
        batched over the groups at the sample's offset."""
        m = x_shape[0]
        if self.cv.group == 1 or m == 1:
            self.gemm(w, w_shape, x, x_shape, out, out_shape, **transposes)
            return
        x_one, out_one = x_shape[1:], out_shape[1:]
        for s in range(m):
            offsets = (0, s * numel(x_one), s * numel(out_one))
            self.gemm(w, w_shape, x, x_one, out, out_one, offsets=offsets, **transposes)


def _forward_steps(plan: _StepPlan, cv: _Conv) -> None:
    nb = cv.chunk(plan.np_dtype.itemsize, False)
    cols = None if cv.pointwise and nb == cv.n else plan.temp((nb, cv.group, cv.k, cv.p))
    rows = None if nb == cv.n else plan.temp((nb, cv.group, cv.og, cv.p))
    for b0, m in _chunks(cv.n, nb):
        if cols is not None:
            plan.run(_IM2COL, m * cv.c * cv.p, [("in", 0), cols, np.int64(b0), np.int64(m), *cv.args])
        target = ("out", 0) if m == cv.n else rows
        plan.weights_gemm(("in", 1), (cv.group, cv.og, cv.k), cols or ("in", 0), (m, cv.group, cv.k, cv.p), target,
                          (m, cv.group, cv.og, cv.p))  # fmt: skip
        if m != cv.n:
            plan.copy_span(rows, 0, ("out", 0), b0 * cv.oc * cv.p, m * cv.oc * cv.p)


def _chunk_rows(plan: _StepPlan, cv: _Conv, rows, b0: int, m: int):
    """dout's samples [b0, b0 + m) as [m, group, og, P]: input 0 itself for the whole batch, else a copy."""
    if m == cv.n:
        return ("in", 0)
    plan.copy_span(("in", 0), b0 * cv.oc * cv.p, rows, 0, m * cv.oc * cv.p)
    return rows


def _input_grad_steps(plan: _StepPlan, cv: _Conv) -> None:
    nb = cv.chunk(plan.np_dtype.itemsize, False)
    rows = None if nb == cv.n else plan.temp((nb, cv.group, cv.og, cv.p))
    cols = None if cv.pointwise and nb == cv.n else plan.temp((nb, cv.group, cv.k, cv.p))
    for b0, m in _chunks(cv.n, nb):
        source = _chunk_rows(plan, cv, rows, b0, m)
        shapes = ((cv.group, cv.og, cv.k), (m, cv.group, cv.og, cv.p), (m, cv.group, cv.k, cv.p))
        if cols is None:  # the columns are dx itself
            plan.weights_gemm(("in", 1), shapes[0], source, shapes[1], ("out", 0), shapes[2], transpose_a=True)
            continue
        plan.weights_gemm(("in", 1), shapes[0], source, shapes[1], cols, shapes[2], transpose_a=True)
        plan.run(_COL2IM, m * cv.c * cv.h * cv.w, [cols, ("out", 0), np.int64(b0), np.int64(m), *cv.args])


def _filter_grad_steps(plan: _StepPlan, cv: _Conv) -> None:
    nb = cv.chunk(plan.np_dtype.itemsize, True)
    cols = None if cv.pointwise and nb == cv.n else plan.temp((nb, cv.group, cv.k, cv.p))
    rows = None if nb == cv.n else plan.temp((nb, cv.group, cv.og, cv.p))
    part = plan.temp((nb, cv.group, cv.k, cv.og))
    for b0, m in _chunks(cv.n, nb):
        if cols is not None:
            plan.run(_IM2COL, m * cv.c * cv.p, [("in", 1), cols, np.int64(b0), np.int64(m), *cv.args])
        source = _chunk_rows(plan, cv, rows, b0, m)
        plan.gemm(cols or ("in", 1), (m, cv.group, cv.k, cv.p), source, (m, cv.group, cv.og, cv.p), part,
                  (m, cv.group, cv.k, cv.og), transpose_b=True)  # fmt: skip
        sizes = (m, cv.group, cv.og, cv.k, int(b0 > 0))
        plan.run(_SAMPLE_SUM, cv.oc * cv.k, [part, ("out", 0), *(np.int64(v) for v in sizes)])


def _direct_steps(index: int):
    def build(plan: _StepPlan, cv: _Conv) -> None:
        shape = (cv.n, cv.oc, cv.oh, cv.ow) if index == _DIRECT_FORWARD else (cv.n, cv.c, cv.h, cv.w)
        plan.run(index, numel(shape), [("in", 0), ("in", 1), ("out", 0), *cv.args])

    return build


_STEP_PLANS = {"forward": _forward_steps, "input": _input_grad_steps, "filter": _filter_grad_steps}
_DIRECT_STEP_PLANS = {"forward": _direct_steps(_DIRECT_FORWARD), "input": _direct_steps(_DIRECT_INPUT)}


def _conv_launch(spec, kind: str, cv: _Conv, shape: tuple, gemm_dtype, out_dtype):
    """The call as ``device_launch`` steps computing in ``gemm_dtype`` (bfloat16's between widening casts), or
    None where a GEMM is not a cuBLAS call (``gemm_step``)."""
    direct = cv.og == 1 and kind in _DIRECT_STEP_PLANS
    plan = _StepPlan(spec.device.runtime, cv, gemm_dtype)
    finish = widen(plan, spec, 2) if gemm_dtype != out_dtype else None
    build = _DIRECT_STEP_PLANS[kind] if direct else _STEP_PLANS[kind]
    build(plan, cv)
    if finish is not None:
        finish()
    return plan.launch(spec, [(shape, out_dtype)])


def _conv_loop(kind: str):
    def loop(spec, function, kernel):
        """im2col + GEMM, or the direct sums where a group has one output channel: ``kernel.helpers`` are the
        ``_HELPERS`` instantiations of the GEMM's dtype."""
        runtime = spec.device.runtime
        a, b, out = (list(s) for s in (*spec.in_shapes[:2], spec.out_shapes[0]))
        x = {"forward": a, "input": out, "filter": b}[kind]
        y = a if kind != "forward" else out
        pt, pl, k, s, d, group = _window(spec, x, y, True)
        window = (*k, *s, *d, pt, pl)
        args = tuple(np.int64(v) for v in (*x, y[1], y[2], y[3], *window, group))
        functions = tuple(function_for(runtime, kernel, name) for name in kernel.helpers)
        cv = _Conv(*x, y[1], y[2], y[3], group, window, args, functions)
        shape, dtype = tuple(spec.out_shapes[0]), spec.entry.attr.outputs[0]
        gemm_dtype = np.dtype(np.float32) if dtype in GEMM_VIA_FLOAT32 else np.dtype(dtype.np_dtype)
        out_dtype = np.dtype(dtype.np_dtype)
        if cv.empty:  # an empty batch or window: zeros
            return device_launch(spec, [(shape, out_dtype)], fill_steps(runtime, shape, out_dtype, 0, ("out", 0)))
        launch = _conv_launch(spec, kind, cv, shape, gemm_dtype, out_dtype)
        if launch is None:  # every GEMM here is one cuBLAS call of a floating type
            raise KernelError(f"For '{spec.op_name}', a GEMM of {gemm_dtype} is not one cuBLAS call.")
        return launch

    return loop


def _conv(kind: str):
    """The kernels of one KernelAttr, named by the first kernel the GEMM path launches."""

    def make(attr):
        t = "float" if attr.inputs[0] in GEMM_VIA_FLOAT32 else ctype(attr.inputs[0])
        helpers = tuple(f"opforge::cuda::{name}<{t}>" for name in _HELPERS)
        first = helpers[_COL2IM if kind == "input" else _IM2COL]
        return CudaKernel("conv.cu", first, _conv_loop(kind), helpers=helpers)

    return make


def _pool_loop(grad: bool, grad_grad: bool = False):
    def loop(spec, function, kernel):
        """``PoolKernel<T, kMax>(x, y, ...)`` / ``PoolGradKernel<T, kMax>(x, out, dy, dx, ...)`` with
        ``(n, c, h, w, oh, ow, kh, kw, sh, sw, pt, pl)``."""
        x = list(spec.in_shapes[0])
        y = list(spec.in_shapes[2]) if grad and not grad_grad else list(spec.out_shapes[0])
        pt, pl, k, s, _, _ = _window(spec, x, y, False)
        geometry = tuple(np.int64(v) for v in (*x, y[2], y[3], *k, *s, pt, pl))
        shape, np_dtype = spec.out_shapes[0], spec.entry.attr.outputs[0].np_dtype
        params = [*(("in", i) for i in range(3 if grad else 1)), ("out", 0), *geometry]
        return device_launch(spec, [(shape, np_dtype)], step_1d(spec.device.runtime, function, numel(shape), params))

    return loop


def _pool(name: str, is_max: bool, grad: bool):
    flag = "true" if is_max else "false"
    return lambda attr: CudaKernel(
        "pool.cu", f"opforge::cuda::{name}<{ctype(attr.inputs[0])}, {flag}>", _pool_loop(grad)
    )


mirror_cpu_kernels("Conv2D", _conv("forward"))
mirror_cpu_kernels("Conv2DBackpropInput", _conv("input"))
mirror_cpu_kernels("Conv2DBackpropFilter", _conv("filter"))
mirror_cpu_kernels("MaxPool", _pool("PoolKernel", True, False))
mirror_cpu_kernels("AvgPool", _pool("PoolKernel", False, False))
mirror_cpu_kernels("MaxPoolGrad", _pool("PoolGradKernel", True, True))
mirror_cpu_kernels("AvgPoolGrad", _pool("PoolGradKernel", False, True))
mirror_cpu_kernels(
    "MaxPoolGradGrad",
    lambda attr: CudaKernel(
        "pool.cu", f"opforge::cuda::MaxPoolGradGradKernel<{ctype(attr.inputs[0])}>", _pool_loop(True, True)
    ),
)


def _adaptive_pool_loop(grad: bool):
    def loop(spec, function, kernel):
        """``AdaptiveAvgPoolKernel<T, kGrad>(src, dst, planes, h, w, oh, ow)`` over the leading dims' planes."""
        src, dst = list(spec.in_shapes[0]), list(spec.out_shapes[0])
        x, y = (dst, src) if grad else (src, dst)
        if len(x) < 2 or len(x) != len(y) or x[:-2] != y[:-2]:
            raise KernelError(f"For '{spec.op_name}', the shapes {x} and {y} do not pool one into the other.")
        planes = int(np.prod(x[:-2], dtype=np.int64))
        if planes and 0 in (*x[-2:], *y[-2:]):
            raise KernelError(f"For '{spec.op_name}', the input and pooled planes must be non-empty: {x}, {y}.")
        geometry = tuple(np.int64(v) for v in (planes, *x[-2:], *y[-2:]))
        shape, np_dtype = tuple(dst), spec.entry.attr.outputs[0].np_dtype
        params = [("in", 0), ("out", 0), *geometry]
        return device_launch(spec, [(shape, np_dtype)], step_1d(spec.device.runtime, function, numel(shape), params))

    return loop


def _adaptive_pool(grad: bool):
    flag = "true" if grad else "false"
    return lambda attr: CudaKernel(
        "pool.cu", f"opforge::cuda::AdaptiveAvgPoolKernel<{ctype(attr.inputs[0])}, {flag}>", _adaptive_pool_loop(grad)
    )


mirror_cpu_kernels("AdaptiveAvgPool2D", _adaptive_pool(False))
mirror_cpu_kernels("AdaptiveAvgPool2DGrad", _adaptive_pool(True))
