"""ROIAlign and ROIAlignGrad on the GPU (``csrc/kernels/cuda/roi_align.cu``, the math of
``opforge/functors/roi_align.h`` shared with the CPU kernels), for every KernelAttr the CPU registers: the
forward a thread per output element; the gradient a thread per element of ``dy`` adding into a zeroed
accumulator with atomics (float for float16, then rounded), so its last bits may differ between runs, where the
CPU's plane-by-plane sum does not. The RoIs are checked on the device as the CPU checks them (an image index out
of range, bins of too many samples: ``RoiCheckKernel``), the kernels leaving such a RoI out, and the CPU's error
is raised after the launches (``range_check.raise_flagged``), in a device graph too."""

from __future__ import annotations

import numpy as np

from opforge.errors import KernelError
from opforge.kernels.gpu.cuda import CudaKernel, ctype, function_for
from opforge.kernels.gpu.elementwise import mirror_cpu_kernels
from opforge.kernels.gpu.fill import fill_steps
from opforge.kernels.gpu.range_check import flag_word, raise_flagged
from opforge.kernels.gpu.support import StepPlan, numel, output_specs

__all__ = []

_SOURCE = "roi_align.cu"
_MAX_BIN_SAMPLES = 1 << 20  # kMaxRoiBinSamples of functors/roi_align.h
# RoiAlignAttrs of functors/roi_align.h, passed by value.
_ATTRS = np.dtype(
    [("pooled_h", np.int64), ("pooled_w", np.int64), ("sample_num", np.int64), ("end_mode", np.int64),
     ("scale", np.float64)],
    align=True,
)  # fmt: skip


def _attrs(spec):
    a = spec.attrs
    value = np.zeros((), _ATTRS)
    value["pooled_h"], value["pooled_w"] = a["pooled_height"], a["pooled_width"]
    value["sample_num"], value["end_mode"] = a["sample_num"], a.get("roi_end_mode", 1)
    value["scale"] = a["spatial_scale"]
    return value[()]


def _adaptive_grids(spec, rois: np.ndarray) -> np.ndarray:
    """Each RoI's samples per bin where ``sample_num`` is 0 (floor of the bin size per dim), as the kernels
    compute them (in float64 here: a grid at the limit may differ by one)."""
    a = spec.attrs
    scale, end = a["spatial_scale"], a.get("roi_end_mode", 1)
    with np.errstate(all="ignore"):
        sizes = (rois[:, 3:5] + end) * scale - rois[:, 1:3] * scale  # (width, height)
        if end == 0:
            sizes = np.maximum(sizes, 1.0)
        bins = sizes / np.array([a["pooled_width"], a["pooled_height"]])
        grids = np.where(bins >= 1, np.floor(np.minimum(bins, 2.0**24)), 0)
    return grids[:, 0] * grids[:, 1]


def _host_error(spec, rois: np.ndarray, images: int) -> KernelError | None:
    """The CPU kernel's error for the first RoI it would refuse (an image index out of range, or bins of too
    many samples), from the RoIs on the host; None where there is none."""
    first = rois[:, 0]
    index = np.rint(first + 7e-5)
    bad = np.flatnonzero(~((index >= 0) & (index < images)))
    if bad.size:
        r = int(bad[0])
        return KernelError(
            f"For '{spec.op_name}', the image_index (column 0 of 'rois') must be a number in "
            f"[0, {images - 1}], but got {first[r]:g} in RoI {r}."
        )
    if spec.attrs["sample_num"] == 0:
        skip = (np.abs(rois[:, 1]) < 0.001) & (np.abs(rois[:, 3]) < 0.001)
        big = np.flatnonzero((_adaptive_grids(spec, rois) > _MAX_BIN_SAMPLES) & ~skip)
        if big.size:
            return KernelError(
                f"For '{spec.op_name}', RoI {int(big[0])} has bins of more than {_MAX_BIN_SAMPLES} samples "
                f"(sample_num 0 takes floor(bin size) per dim)."
            )
    return None


def _checked_rois(plan: StepPlan, spec, kernel, images: int) -> None:
    """``RoiCheckKernel<T>(rois, count, images, attrs, first)`` before the kernels (which leave such a RoI out), and
    the CPU kernel's error for the first RoI it flags, after the launches."""
    count = spec.in_shapes[1][0]
    if not count:
        return
    runtime = plan.runtime
    word = flag_word(plan, count)
    check = function_for(runtime, kernel, kernel.helpers[-1])
    plan.kernel(check, count, [("in", 1), np.int64(count), np.int64(images), _attrs(spec), word])

    def error(r, rois):
        found = _host_error(spec, np.asarray(rois, np.float64).reshape(-1, 5), images)
        return found or KernelError(f"For '{spec.op_name}', RoI {r} is out of the image range or its bins too large.")

    raise_flagged(plan, word, count, error, 1)


def _roi_align_loop(spec, function, kernel):
    """``RoiAlignKernel<T>(x, rois, y, count, channels, images, h, w, attrs)``."""
    images, channels, h, w = spec.in_shapes[0]
    count = spec.in_shapes[1][0]
    outputs = output_specs(spec)
    plan = StepPlan(spec.device.runtime, outputs[0][1])
    _checked_rois(plan, spec, kernel, images)
    dims = [np.int64(d) for d in (count, channels, images, h, w)]
    plan.kernel(function, numel(outputs[0][0]), [("in", 0), ("in", 1), ("out", 0), *dims, _attrs(spec)])
    return plan.launch(spec, outputs)


def _roi_align_grad_loop(spec, function, kernel):
    """Zero the accumulator, ``RoiAlignGradKernel<T, A>(dy, rois, acc, count, channels, images, h, w, attrs)``,
    then ``RoiAlignStoreKernel<T, A>`` where the accumulator is float32 for a float16 gradient."""
    runtime = spec.device.runtime
    count = spec.in_shapes[1][0]
    outputs = output_specs(spec)
    shape, np_dtype = outputs[0]
    images, channels, h, w = shape
    n = numel(shape)
    widened = np_dtype == np.float16
    plan = StepPlan(runtime, np.float32 if widened else np_dtype)
    _checked_rois(plan, spec, kernel, images)
    acc = plan.temp(shape) if widened else ("out", 0)
    plan.steps += fill_steps(runtime, shape, plan.np_dtype, 0, acc)
    dims = [np.int64(d) for d in (count, channels, images, h, w)]
    plan.kernel(function, numel(spec.in_shapes[0]), [("in", 0), ("in", 1), acc, *dims, _attrs(spec)])
    if widened:
        plan.kernel(function_for(runtime, kernel, kernel.helpers[0]), n, [acc, ("out", 0), np.int64(n)])
    return plan.launch(spec, outputs)


def _make_roi_align(attr):
    t = ctype(attr.inputs[0])
    check = f"opforge::cuda::RoiCheckKernel<{t}>"
    return CudaKernel(_SOURCE, f"opforge::cuda::RoiAlignKernel<{t}>", _roi_align_loop, helpers=(check,))


def _make_roi_align_grad(attr):
    t = ctype(attr.inputs[0])
    a = "float" if attr.inputs[0].np_dtype == np.float16 else t
    return CudaKernel(
        _SOURCE,
        f"opforge::cuda::RoiAlignGradKernel<{t}, {a}>",
        _roi_align_grad_loop,
        helpers=(f"opforge::cuda::RoiAlignStoreKernel<{t}, {a}>", f"opforge::cuda::RoiCheckKernel<{t}>"),
    )


mirror_cpu_kernels("ROIAlign", _make_roi_align)
mirror_cpu_kernels("ROIAlignGrad", _make_roi_align_grad)
