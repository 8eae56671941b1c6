"""Elementwise fusion under jit (opforge/dispatch/fusion.py, opforge/kernels/cpu/fused.py): generated
from the registry, every operator whose built-in kernel is a plain elementwise functor is fused and
must give what its unfused kernel gives."""

import numpy as np
import pytest

import opforge
from opforge import dtype as mstype
from opforge import ops
from opforge.dispatch import fusion
from opforge.kernels import KernelAttr, registry
from opforge.kernels.fusion import Expression, FusedGroup, Reduction, elementwise_functor
from opforge.kernels.gpu.cuda import include_dirs
from opforge.kernels.gpu.fused import cuda_source
from opforge.tools import cuda_check

N = fusion.MIN_ELEMENTS + 37  # not a multiple of any vector width


def _fusable_ops(dtype) -> list:
    """(name, arity) of every operator with a fusable kernel for ``dtype`` that builds with its defaults."""
    found = []
    for name in sorted({e.op_name for e in registry.all_kernels()}):
        prim_cls = getattr(ops, name, None)
        if prim_cls is None:
            continue
        try:
            prim = prim_cls()
        except TypeError:  # a required attribute: not generated here
            continue
        functor = elementwise_functor(name, dtype, prim.attrs)
        if functor is not None:
            found.append((prim, functor[1]))
    return found


@pytest.mark.parametrize("device", ["CPU", "GPU"])
@pytest.mark.parametrize("dtype", [mstype.float32, mstype.float64])
def test_every_fusable_operator_matches_its_kernel(dtype, device):
    found = _fusable_ops(dtype)
    assert len(found) >= 40, [p.name for p, _ in found]  # the registry's elementwise families
    rng = np.random.default_rng(0)
    x = opforge.Tensor((rng.random(N) * 1.6 + 0.2).astype(dtype.np_dtype), device=device)  # every op's domain
    y = opforge.Tensor((rng.random(N) * 1.6 + 0.2).astype(dtype.np_dtype), device=device)

    def each(a, b):
        return tuple(prim(a) if arity == 1 else prim(a, b) for prim, arity in found)

    fused = opforge.jit(each)
    fused(x, y)
    trace = fused.traces()[0]
    assert len(trace.program) == 1 and len(trace.steps) == len(found)  # one kernel for them all
    # The same functor in the same dtype; a compiler may still contract a * b + c into an FMA in one
    # loop and not the other, which shows where a gradient cancels (TanhGrad's 1 - y * y near 1).
    rtol, atol = (1e-5, 1e-6) if dtype == mstype.float32 else (1e-12, 1e-14)
    for (prim, _), got, want in zip(found, fused(x, y), each(x, y)):
        np.testing.assert_allclose(got.asnumpy(), want.asnumpy(), rtol=rtol, atol=atol, err_msg=prim.name)


def _chain(a, b):
    relu, add, mul, neg = ops.ReLU(), ops.Add(), ops.Mul(), ops.Neg()
    c = relu(add(a, b))
    d = neg(mul(c, 0.5))  # weak scalar
    return ops.Exp()(d), c  # c read after the run: written; the others stay in registers


@pytest.mark.parametrize("device", ["CPU", "GPU"])
def test_intermediates_read_later_are_written_and_others_are_not(device):
    rng = np.random.default_rng(1)
    x, y = (opforge.Tensor(rng.standard_normal((64, 100)).astype(np.float32), device=device) for _ in range(2))
    fused = opforge.jit(_chain)
    fused(x, y)
    (step,) = fused.traces()[0].program
    assert len(step.outputs) == 2
    for got, want in zip(fused(x, y), _chain(x, y)):  # (Exp: the same functor, built with other flags)
        np.testing.assert_allclose(got.asnumpy(), want.asnumpy(), rtol=1e-6)


def test_fuse_false_and_small_tensors_run_every_kernel():
    x = opforge.Tensor(np.ones((64, 100), np.float32))
    unfused = opforge.jit(_chain, fuse=False)
    unfused(x, x)
    trace = unfused.traces()[0]
    assert trace.program is trace.steps
    small = opforge.Tensor(np.ones(16, np.float32))
    tiny = opforge.jit(_chain)
    tiny(small, small)
    assert len(tiny.traces()[0].program) == len(tiny.traces()[0].steps)


def test_a_gradient_through_a_fused_function_replays_the_recorded_calls():
    rng = np.random.default_rng(2)
    x, y = (opforge.Tensor(rng.standard_normal(N).astype(np.float32)) for _ in range(2))
    fused = opforge.jit(lambda a, b: _chain(a, b)[0])
    fused(x, y)
    grad = opforge.grad(lambda a, b: ops.ReduceSum()(fused(a, b)))(x, y)
    want = opforge.grad(lambda a, b: ops.ReduceSum()(_chain(a, b)[0]))(x, y)
    np.testing.assert_allclose(grad.asnumpy(), want.asnumpy(), rtol=1e-6)


@pytest.mark.usefixtures("isolated_registries")
def test_a_kernel_registered_by_a_user_is_not_fused():
    assert elementwise_functor("ReLU", mstype.float32, {}) is not None
    attr = KernelAttr().add_input_attr(mstype.float32).add_output_attr(mstype.float32)
    with pytest.warns(Warning):  # it replaces the built-in kernel
        registry.register_kernel("ReLU", "CPU", attr)(lambda x: np.maximum(x, 0))
    assert elementwise_functor("ReLU", mstype.float32, {}) is None
    assert elementwise_functor("ReLU", mstype.float64, {}) is not None


@pytest.mark.parametrize("reduction", [None, "MaxReducer", "MeanReducer"])
@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_the_fused_cuda_kernel_compiles_with_nvrtc(arch, reduction):
    """The emulation runs the generated CUDA on the host; NVRTC compiles it for the real GPUs."""
    found = _fusable_ops(mstype.float32)
    group = FusedGroup(
        mstype.float32,
        (N,),
        opforge.device.get_device("GPU"),
        2,
        (0.5,),
        tuple(Expression(elementwise_functor(p.name, mstype.float32, p.attrs)[0], (("in", 0),) * a) for p, a in found)
        + (Expression("opforge::MulOp{}", (("value", 0), ("scalar", 0))),),
        (0, len(found)),
        tuple(p.name for p, _ in found),
    )
    names = ("opforge::cuda::FusedKernel<0>",)
    if reduction is not None:  # the value of the last expression folded over all N elements
        group = group._replace(reduction=Reduction(reduction, len(found), N, ()))
        names += ("opforge::cuda::FusedFinish<0>",)
    nvrtc = cuda_check._Nvrtc(cuda_check.find_nvrtc())
    options = [f"--gpu-architecture={arch}", "--std=c++17", *(f"-I{d}" for d in include_dirs("elementwise.cuh"))]
    ok, log, _ = nvrtc.compile("fused.cu", cuda_source(group), options, names)
    assert ok, log


@pytest.mark.parametrize("device", ["CPU", "GPU"])
def test_inputs_broadcast_from_trailing_dims_fuse(device):
    """relu(x * gamma + beta) with per-channel gamma and beta and a 1-element shift: one kernel, the
    rows of the broadcast inputs read in place."""
    rng = np.random.default_rng(3)
    x = opforge.Tensor(rng.standard_normal((97, 64)).astype(np.float32), device=device)
    gamma = opforge.Tensor(rng.standard_normal(64).astype(np.float32), device=device)
    beta = opforge.Tensor(rng.standard_normal((1, 64)).astype(np.float32), device=device)
    shift = opforge.Tensor(np.array([0.25], np.float32), device=device)

    def affine(a, g, b, s):
        return ops.ReLU()(ops.Sub()(ops.Add()(ops.Mul()(a, g), b), s))

    fused = opforge.jit(affine)
    fused(x, gamma, beta, shift)
    assert len(fused.traces()[0].program) == 1
    got, want = fused(x, gamma, beta, shift), affine(x, gamma, beta, shift)
    np.testing.assert_allclose(got.asnumpy(), want.asnumpy(), rtol=1e-6, atol=1e-7)


SOFT_CLIP_H = r"""
#pragma once
#include "opforge/math.h"
#include "opforge/portable.h"

// y = limit * tanh(x / limit): a user's functor, shared by their kernels and the fused ones.
struct SoftClipOp {
  double limit;
  template <typename T>
  OPF_HD T operator()(T x) const {
    const T l = static_cast<T>(limit);
    return l * opforge::math::tanh(x / l);
  }
};
"""

SOFT_CLIP_CPP = (
    r"""
#include "opforge/kernel.h"
#include "opforge/parallel.h"
"""
    + SOFT_CLIP_H
    + r"""
namespace {
using namespace opforge;

template <typename T>
class SoftClipKernel : public CpuKernel {
 public:
  void Init(const KernelContext& ctx) override {
    op_ = SoftClipOp{ctx.GetFloat("limit")};
    n_ = ctx.input(0).numel();
  }
  void Launch(const KernelArgs& args) override {
    const T* x = args.input<T>(0);
    T* y = args.output<T>(0);
    const SoftClipOp op = op_;
    ParallelFor(n_, kParallelGrain, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) y[i] = op(x[i]);
    });
  }

 private:
  SoftClipOp op_{1.0};
  int64_t n_ = 0;
};
}  // namespace

MS_REG_CPU_KERNEL(SoftClip, KernelAttr().AddInputAttr(kNumberTypeFloat32).AddOutputAttr(kNumberTypeFloat32),
                  SoftClipKernel<float>);
"""
)


@pytest.mark.usefixtures("isolated_registries")
def test_a_users_functor_operator_fuses_like_a_built_in(monkeypatch):
    from opforge.kernels import fusion as kernel_fusion
    from opforge.op_info import CpuRegOp, DataType, op_info_register
    from opforge.primitives import PrimitiveWithInfer, prim_attr_register
    from opforge.utils import cpp_extension

    class SoftClip(PrimitiveWithInfer):
        @prim_attr_register
        def __init__(self, limit=1.0):
            self.init_prim_io_names(inputs=["x"], outputs=["y"])

        def infer_shape(self, x_shape):
            return x_shape

        def infer_dtype(self, x_dtype):
            return x_dtype

    op_info_register(
        CpuRegOp("SoftClip")
        .input(0, "x", "required")
        .output(0, "y", "required")
        .attr("limit", "optional", "float", "all", "1.0")
        .dtype_format(DataType.F32_Default, DataType.F32_Default)
        .get_op_info()
    )
    cpp_extension.load_inline("soft_clip_fusion_test", SOFT_CLIP_CPP)
    monkeypatch.setattr(kernel_fusion, "_USER_FUNCTORS", {})
    kernel_fusion.register_functor("SoftClip", "SoftClipOp", SOFT_CLIP_H, arity=1, fields=(("limit", "float64", 1.0),))

    clip, add, relu = SoftClip(limit=2.5), ops.Add(), ops.ReLU()
    chain = lambda a, b: relu(add(clip(add(a, b)), b))  # noqa: E731
    rng = np.random.default_rng(1)
    x = opforge.Tensor(rng.standard_normal(N).astype(np.float32) * 4)
    y = opforge.Tensor(rng.standard_normal(N).astype(np.float32))
    fused = opforge.jit(chain)
    got = fused(x, y)
    assert "fused[4] Add SoftClip Add ReLU" in fused.explain()
    np.testing.assert_allclose(got.asnumpy(), chain(x, y).asnumpy(), rtol=1e-6, atol=1e-6)
    want = np.maximum(2.5 * np.tanh((x.asnumpy() + y.asnumpy()) / 2.5) + y.asnumpy(), 0)
    np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-5, atol=1e-6)
    # NVRTC takes the same prelude for the GPU's fused kernel
    group = fused.traces()[0].program[0].group
    assert SOFT_CLIP_H in cuda_source(group)


def test_register_functor_checks_its_arguments():
    from opforge.kernels import fusion as kernel_fusion

    with pytest.raises(ValueError, match="For 'SoftClip', the functor's 'arity' must be 1, 2 or 3, but got 0"):
        kernel_fusion.register_functor("SoftClip", "SoftClipOp", SOFT_CLIP_H, arity=0)
    with pytest.raises(ValueError, match="the functor 'OtherOp' is not defined in the header given"):
        kernel_fusion.register_functor("SoftClip", "OtherOp", SOFT_CLIP_H, arity=1)


# -- runs ending in a reduction -----------------------------------------------------------------

_REDUCTIONS = ("ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin")
_SHAPE = (5, 7, 131)  # 4,585 elements: above MIN_ELEMENTS, rows not a multiple of the vector width


# Per reducer, both dtypes, every form of trailing axes and both keep_dims (each case compiles a kernel).
_REDUCTION_FORMS = [
    pytest.param(mstype.float32, (), False, id="float32-all"),
    pytest.param(mstype.float32, -1, True, id="float32-last-keep_dims"),
    pytest.param(mstype.float64, (1, 2), False, id="float64-last-two"),
    pytest.param(mstype.float64, [2, 1, 0], True, id="float64-all-listed-keep_dims"),
]


@pytest.mark.parametrize("dtype, axis, keep_dims", _REDUCTION_FORMS)
@pytest.mark.parametrize("name", _REDUCTIONS)
@pytest.mark.parametrize("device", ["CPU", "GPU"])
def test_a_run_ending_in_a_reduction_is_one_kernel(device, name, dtype, axis, keep_dims):
    reduce, sub, mul, relu = getattr(ops, name)(keep_dims=keep_dims), ops.Sub(), ops.Mul(), ops.ReLU()

    def loss(a, b):
        d = sub(a, b)
        return reduce(relu(mul(d, d)) - b, axis)  # b: a row broadcast from the trailing dim

    rng = np.random.default_rng(2)
    a = opforge.Tensor(rng.standard_normal(_SHAPE).astype(dtype.np_dtype), device=device)
    b = opforge.Tensor(rng.standard_normal(_SHAPE[-1:]).astype(dtype.np_dtype), device=device)
    fused = opforge.jit(loss)
    got = fused(a, b)
    program = fused.traces()[0].program
    assert len(program) == 1 and program[0].group.reduction.reducer == name[6:] + "Reducer", fused.explain()
    rtol = 1e-6 if dtype == mstype.float32 else 1e-13
    want = loss(a, b)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got.asnumpy(), want.asnumpy(), rtol=rtol, atol=rtol)


@pytest.mark.parametrize("device", ["CPU", "GPU"])
def test_a_reduced_value_read_elsewhere_is_written_too(device):
    square, rsum = ops.Square(), ops.ReduceSum()
    x = opforge.Tensor(np.linspace(-2, 2, N).astype(np.float32), device=device)

    def f(a):
        s = square(a + 1.0)
        return rsum(s), s

    total, s = opforge.jit(f)(x)
    np.testing.assert_allclose(s.asnumpy(), (x.asnumpy() + 1) ** 2, rtol=1e-6)
    np.testing.assert_allclose(total.asnumpy(), np.sum((x.asnumpy().astype(np.float64) + 1) ** 2), rtol=1e-6)


def test_a_fused_reduction_does_not_depend_on_the_thread_count():
    """Segments of fixed length, combined in order: 1 and 2 threads give the same bits."""
    f = lambda a: ops.ReduceSum()(ops.Exp()(a * 0.001))  # noqa: E731
    x = opforge.Tensor(np.random.default_rng(3).standard_normal(1 << 18).astype(np.float32))
    results, before = [], opforge.get_context("num_threads")
    for threads in (1, 2):
        opforge.set_context(num_threads=threads)
        try:
            results.append(opforge.jit(f)(x).asnumpy())
        finally:
            opforge.set_context(num_threads=before)
    assert results[0].tobytes() == results[1].tobytes()


@pytest.mark.parametrize("axis", [0, (0, 1)], ids=["first", "leading"])
def test_a_reduction_over_leading_dims_is_not_fused(axis):
    f = lambda a: ops.ReduceSum()(ops.ReLU()(a) * 2.0, axis)  # noqa: E731
    x = opforge.Tensor(np.ones(_SHAPE, np.float32))
    jf = opforge.jit(f)
    np.testing.assert_allclose(jf(x).asnumpy(), f(x).asnumpy())
    assert [getattr(s.prim, "name", "fused") for s in jf.traces()[0].program] == ["fused", "ReduceSum"]


def _with_outliers(n: int, seed: int) -> np.ndarray:
    """float32 in [-10, 10], but the 2nd and 4th blocks of 1024 hold values beyond the trig functors' vector
    path (|x| > 6000, inf, NaN): those blocks take the fused loop's second pass, the others only its first."""
    x = (np.random.default_rng(seed).random(n) * 20 - 10).astype(np.float32)
    x[[1024 + 5, 3 * 1024 + 700]] = [7.5e5, -np.inf]
    x[3 * 1024 + 3] = np.nan
    return x


@pytest.mark.parametrize("row", [0, 131], ids=["flat", "broadcast-row"])
def test_sin_cos_tan_fused_give_their_kernels_bits(row):
    """Sin, Cos and Tan take their vector path in a fused loop's first pass (opforge/fused_loop.h); a block
    with an argument beyond it (an input, or a value computed in the loop) is computed again by the functors.
    Either way each element is what the unfused kernels give, bit for bit (no a * b + c here to contract)."""
    sin, cos, tan, mul, add = ops.Sin(), ops.Cos(), ops.Tan(), ops.Mul(), ops.Add()

    def f(a, b):
        s = sin(a)
        c = cos(mul(s, b))  # |s * b| up to 9000: beyond the vector path where b is
        return tan(add(c, a)), c

    n = 5 * 1024 + 37 if not row else 40 * row
    a = opforge.Tensor(_with_outliers(n, 4).reshape((-1, row) if row else (n,)))
    b_np = np.full(row or n, 0.5, np.float32)
    b_np[17 if row else 2 * 1024 + 9] = 9000.0
    b = opforge.Tensor(b_np)
    fused, unfused = opforge.jit(f), opforge.jit(f, fuse=False)
    fused(a, b)  # traced (the kernels run one by one)
    got, want = fused(a, b), unfused(a, b)  # replayed: one fused kernel
    assert len(fused.traces()[0].program) == 1, fused.explain()
    for g, w in zip(got, want):
        assert g.asnumpy().tobytes() == w.asnumpy().tobytes()


def test_a_fused_reduction_of_sin_folds_its_kernels_values():
    """A reduced block whose first pass met an argument beyond Sin's vector path is folded again from the
    accumulators it started from: the sum equals the fused sum of the unfused kernel's values."""
    sin, neg, rsum = ops.Sin(), ops.Neg(), ops.ReduceSum()
    x = opforge.Tensor(_with_outliers((1 << 15) + 37, 5))  # two segments of 16384
    x_np = x.asnumpy().copy()
    x_np[[3 * 1024 + 3, 3 * 1024 + 700]] = 1.0  # NaN, inf: would hide the sum
    x = opforge.Tensor(x_np)
    fused, folded = opforge.jit(lambda a: rsum(sin(a))), opforge.jit(lambda v: rsum(neg(neg(v))))
    values = sin(x)
    fused(x), folded(values)  # traced (the kernels run one by one)
    got, want = fused(x), folded(values)  # replayed: the same folds of the same values
    assert len(fused.traces()[0].program) == 1 and len(folded.traces()[0].program) == 1
    assert got.asnumpy().tobytes() == want.asnumpy().tobytes()
    np.testing.assert_allclose(got.asnumpy(), np.sum(np.sin(x_np.astype(np.float64))), rtol=1e-5)
