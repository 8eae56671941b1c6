"""GPU calls launched from C (``_C.DeviceLaunch``): a call given as data (outputs, temporaries, launches)
runs with no Python frame but the allocator's, gives what the same call through ``runtime.launch`` gives,
and refuses what it cannot run with errors naming the operator; a device graph's capture still sees every
launch. On the emulation the native entry point is its launcher; on a GPU, ``cuLaunchKernel``."""

from __future__ import annotations

import threading
import types

import numpy as np
import pytest
from conftest import GPU

import opforge
from opforge import _C, Parameter, Tensor, ops
from opforge.errors import KernelError
from opforge.kernels import registry, select_kernel
from opforge.kernels.gpu.cuda import COMPILE_OPTIONS
from opforge.kernels.gpu.support import device_launch, step_1d
from opforge.kernels.launch import make_launcher
from opforge.primitives._grad_ops import MaximumGrad, MinimumGrad

# long long, not int64_t: NVRTC compiles without the C library's headers.
SOURCE = """
template <typename T>
__global__ void Axpb(const T* x, T* y, long long n, T a, T b) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)blockDim.x * gridDim.x)
    y[i] = a * x[i] + b;
}
template <typename T>
__global__ void AddInto(const T* x, const T* t, T* y, long long n) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)blockDim.x * gridDim.x)
    y[i] = x[i] + t[i];
}
"""
NAMES = ("Axpb<float>", "AddInto<float>")


@pytest.fixture
def native(monkeypatch):
    """Native launches on, on the emulation and on a GPU (where CuPy's runtime has them off by default), the
    cached plans made again before and after."""
    monkeypatch.setattr(GPU.runtime, "native_launches", True)
    registry.invalidate()
    yield GPU.runtime
    registry.invalidate()


@pytest.fixture(scope="module")
def functions():
    get = GPU.runtime.load_module("test_device_launch", SOURCE, COMPILE_OPTIONS, NAMES)
    return {name.split("<")[0]: get(name) for name in NAMES}


def _spec(n_inputs: int, n: int):
    return types.SimpleNamespace(op_name="Demo", device=GPU, in_shapes=((n,),) * n_inputs)


def _axpb_then_add(functions, n: int):
    """y = x + (2x + 1), through a temporary: two launches."""
    runtime = GPU.runtime
    steps = step_1d(runtime, functions["Axpb"], n, [("in", 0), ("tmp", 0), np.int64(n), np.float32(2), np.float32(1)])
    steps += step_1d(runtime, functions["AddInto"], n, [("in", 0), ("tmp", 0), ("out", 0), np.int64(n)])
    return device_launch(_spec(1, n), [((n,), np.float32)], steps, temps=[((n,), np.float32)])


@pytest.mark.parametrize("n", [0, 1, 255, 257, 5000])
def test_a_call_given_as_data_runs_natively_as_through_the_runtime(native, functions, monkeypatch, n):
    x = np.linspace(-3, 3, n, dtype=np.float32)
    run = _axpb_then_add(functions, n)
    assert isinstance(run.__self__, _C.DeviceLaunch) and run.__self__.launches == (2 if n else 0)
    before = _C.device_launch_count()
    out = run((native.from_host(x),))
    assert _C.device_launch_count() == before + (2 if n else 0)
    assert out.shape == (n,) and out.dtype == np.float32
    np.testing.assert_array_equal(native.to_host(out), x + (np.float32(2) * x + np.float32(1)))
    monkeypatch.setattr(native, "native_launches", False)
    through_runtime = _axpb_then_add(functions, n)
    assert not isinstance(getattr(through_runtime, "__self__", None), _C.DeviceLaunch)
    np.testing.assert_array_equal(native.to_host(through_runtime((native.from_host(x),))), native.to_host(out))


def test_an_operator_on_the_gpu_is_a_plan_run_in_c(native):
    elu = ops.Elu(alpha=0.625)
    x = Tensor(np.array([-2.0, -0.5, 0.0, 1.5], np.float32), device="GPU")
    plan = elu._plan_for((x,))
    assert isinstance(plan, _C.FastPlan)
    before = _C.device_launch_count()
    y = elu(x)
    assert _C.device_launch_count() == before + 1
    host = x.asnumpy()
    expected = np.where(host > 0, host, np.float32(0.625) * np.expm1(host))
    np.testing.assert_allclose(y.asnumpy(), expected, rtol=1e-6)
    assert y.device == "GPU" and y.dtype is opforge.float32


def test_weak_scalars_become_device_arrays(native):
    x = Tensor(np.array([1.0, 2.0, 3.0], np.float32), device="GPU")
    add = ops.Add()
    for value in (0.5, 0.5, 2, 1e30):  # cached by value, an int, a value far from the others
        np.testing.assert_array_equal((add(x, value)).asnumpy(), x.asnumpy() + np.float32(value))
    with pytest.raises(OverflowError, match="Add"):
        ops.Add()(Tensor(np.array([1], np.int8), device="GPU"), 1000)


def test_bad_arrays_are_refused_naming_the_operator(native, functions):
    run = _axpb_then_add(functions, 4)
    with pytest.raises(TypeError, match=r"For 'Demo', the kernel's input 0 must be an array of the GPU runtime"):
        run((np.zeros(4, np.float32),))
    with pytest.raises(ValueError, match=r"For 'Demo', the kernel expects 1 inputs, but got 2"):
        run((native.from_host(np.zeros(4, np.float32)),) * 2)


def test_a_launch_the_device_refuses_raises_naming_operator_and_kernel(native, functions):
    n = 8
    params = [("in", 0), ("out", 0), np.int64(n), np.float32(1), np.float32(0)]
    run = device_launch(_spec(1, n), [((n,), np.float32)], [(functions["Axpb"], (1, 1, 1), (2048, 1, 1), 0, params)])
    with pytest.raises(KernelError, match=r"For 'Demo', .*kernel .*Axpb"):
        run((native.from_host(np.zeros(n, np.float32)),))


def test_switching_the_launch_path_makes_plans_again(native, monkeypatch):
    relu, x = ops.ReLU(), Tensor(np.array([-1.0, 2.0], np.float32), device="GPU")
    assert isinstance(relu._plan_for((x,)), _C.FastPlan)
    monkeypatch.setattr(native, "native_launches", False)
    registry.invalidate()
    assert not isinstance(relu._plan_for((x,)), _C.FastPlan)
    before = _C.device_launch_count()
    assert relu(x).asnumpy().tolist() == [0.0, 2.0] and _C.device_launch_count() == before


def test_paused_launches_go_through_the_runtime(native, functions, monkeypatch):
    seen = []
    monkeypatch.setattr(native, "launch", lambda function, grid, block, args, shared=0: seen.append((grid, args)))
    run = _axpb_then_add(functions, 300)
    x = native.from_host(np.ones(300, np.float32))
    before = _C.device_launch_count()
    assert _C.pause_device_launches(True) is False
    try:
        run((x,))
    finally:
        assert _C.pause_device_launches(False) is True
    assert _C.device_launch_count() == before and len(seen) == 2
    (_, first), (_, second) = seen
    assert first[0] is x and first[2:] == (np.int64(300), np.float32(2), np.float32(1))
    assert second[0] is x and second[1] is first[1]  # the temporary, shared by the two launches


def test_threads_share_a_native_plan(native):
    relu = ops.ReLU()
    inputs = [Tensor(np.linspace(-1, 1, 97, dtype=np.float32) * (k + 1), device="GPU") for k in range(4)]
    results, errors = [None] * 4, []

    def work(k):
        try:
            for _ in range(20):
                results[k] = relu(inputs[k]).asnumpy()
        except Exception as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for k in range(4):
        np.testing.assert_array_equal(results[k], np.maximum(inputs[k].asnumpy(), 0))


def test_softmax_reductions_and_layer_norm_launch_from_c(native, rng):
    """Row, reduction and normalization kernels run as plans in C: each call makes exactly its launches
    (several passes through temporaries included) and gives NumPy's results."""

    def launches(call, *args):
        before = _C.device_launch_count()
        result = call(*args)
        return _C.device_launch_count() - before, result

    # Rows too long for registers: SoftmaxRowsKernel, a block per row.
    x = rng.standard_normal((2, 20011)).astype(np.float32)
    count, y = launches(ops.Softmax(), Tensor(x, device="GPU"))
    e = np.exp(x.astype(np.float64) - x.max(axis=-1, keepdims=True))
    assert count == 1
    np.testing.assert_allclose(y.asnumpy(), e / e.sum(axis=-1, keepdims=True), rtol=1e-5, atol=1e-9)

    reduce_sum = ops.ReduceSum()
    # Every element of a contiguous run: block partials, then a block per output finishing them.
    x = rng.standard_normal(65537).astype(np.float32)
    count, y = launches(reduce_sum, Tensor(x, device="GPU"))
    assert count == 2 and y.shape == ()
    np.testing.assert_allclose(y.asnumpy(), x.astype(np.float64).sum(), rtol=1e-5)
    # A strided axis: chunk partials, a combine of 512 partials into 16, then the finish.
    x = rng.standard_normal((65539, 2)).astype(np.float32)
    count, y = launches(reduce_sum, Tensor(x, device="GPU"), 0)
    assert count == 3 and y.shape == (2,)
    np.testing.assert_allclose(y.asnumpy(), x.astype(np.float64).sum(axis=0), rtol=1e-5)

    # Rows held in the registers of a block: one launch writes y, mean and variance.
    x = rng.standard_normal((7, 301)).astype(np.float32)
    gamma, beta = rng.standard_normal(301).astype(np.float32), rng.standard_normal(301).astype(np.float32)
    layer_norm = ops.LayerNorm(begin_norm_axis=-1, begin_params_axis=-1, epsilon=3e-6)
    count, (y, mean, var) = launches(layer_norm, *(Tensor(a, device="GPU") for a in (x, gamma, beta)))
    assert count == 1
    host = x.astype(np.float64)
    mu, sigma2 = host.mean(axis=-1, keepdims=True), host.var(axis=-1, keepdims=True)
    np.testing.assert_allclose(mean.asnumpy(), mu, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(var.asnumpy(), sigma2, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(y.asnumpy(), (host - mu) / np.sqrt(sigma2 + 3e-6) * gamma + beta, rtol=1e-4, atol=1e-5)


def test_the_shape_fixed_gpu_loops_launch_from_c(native):
    """BiasAdd, OneHot, Cast, Concat (a launch per input), Pad (zeros, then the block) and ApplyMomentum on
    Parameters (var and accumulation written in place, var returned) launch natively, as NumPy computes; so
    does a Concat of more inputs than a kernel takes parameters."""
    rng = np.random.default_rng(3)

    def gpu(host):
        return Tensor(host, device="GPU")

    def launches(call, expected):
        before = _C.device_launch_count()
        out = call()
        assert _C.device_launch_count() == before + expected
        return out

    x, bias = rng.standard_normal((2, 3, 4)).astype(np.float32), rng.standard_normal(3).astype(np.float32)
    out = launches(lambda: ops.BiasAdd()(gpu(x), gpu(bias)), 1)
    np.testing.assert_array_equal(out.asnumpy(), x + bias[None, :, None])

    indices = np.array([[0, 3], [2, -1]], np.int32)
    on, off = gpu(np.array(2.5, np.float32)), gpu(np.array(-1.0, np.float32))
    out = launches(lambda: ops.OneHot(axis=1)(gpu(indices), 4, on, off), 1)
    want = np.where(np.arange(4)[None, :, None] == indices[:, None, :], np.float32(2.5), np.float32(-1.0))
    np.testing.assert_array_equal(out.asnumpy(), want)

    values = np.array([-2.75, -0.5, 0.0, 1.5, 3.9], np.float32)
    out = launches(lambda: ops.Cast()(gpu(values), opforge.int32), 1)
    assert out.dtype is opforge.int32 and out.asnumpy().tolist() == values.astype(np.int32).tolist()

    parts = [rng.standard_normal((2, k)).astype(np.float32) for k in (1, 3, 2)]
    out = launches(lambda: ops.Concat(axis=1)(tuple(gpu(p) for p in parts)), 3)
    np.testing.assert_array_equal(out.asnumpy(), np.concatenate(parts, axis=1))

    out = launches(lambda: ops.Pad(((1, 0), (2, 1)))(gpu(parts[1])), 2)
    np.testing.assert_array_equal(out.asnumpy(), np.pad(parts[1], ((1, 0), (2, 1))))

    w_host, acc_host, g_host = (rng.standard_normal(5).astype(np.float32) for _ in range(3))
    w, acc = Parameter(gpu(w_host), name="w"), Parameter(gpu(acc_host), name="acc")
    lr, momentum = gpu(np.array(0.1, np.float32)), gpu(np.array(0.9, np.float32))
    out = launches(lambda: ops.ApplyMomentum()(w, acc, lr, gpu(g_host), momentum), 1)
    want_acc = acc_host * np.float32(0.9) + g_host
    assert out is w
    np.testing.assert_allclose(acc.asnumpy(), want_acc, rtol=1e-6)
    np.testing.assert_allclose(w.asnumpy(), w_host - np.float32(0.1) * want_acc, rtol=1e-6)

    # more inputs than a kernel takes parameters (a launch each): from C too
    many = [np.full((2, 1), k, np.float32) for k in range(65)]
    out = launches(lambda: ops.Concat(axis=1)(tuple(gpu(p) for p in many)), 65)
    np.testing.assert_array_equal(out.asnumpy(), np.concatenate(many, axis=1))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_matmul_is_a_gemm_step_launched_from_c(native, monkeypatch, dtype):
    """MatMul and BatchMatMul (transposed operands, a batch broadcast from one matrix) call the runtime's GEMM
    entry points from C with cuBLAS's arguments, never runtime.matmul, partly broadcast batches as a GEMM step
    per index of the dims that broadcast (past 1,024 of them, a broadcast copy and one GEMM); while paused (a
    graph's capture) the GEMMs go through runtime.matmul."""
    rng = np.random.default_rng(5)
    python_calls = []
    real = native.matmul
    monkeypatch.setattr(native, "matmul", lambda *a: python_calls.append(a) or real(*a))

    def run(op, a, b, launches):
        before = _C.device_launch_count()
        out = op(Tensor(a, device="GPU"), Tensor(b, device="GPU"))
        assert _C.device_launch_count() == before + launches
        return out.asnumpy()

    tol = {"rtol": 2e-3, "atol": 2e-3} if dtype == np.float16 else {"rtol": 1e-5, "atol": 1e-5}
    a, b = rng.standard_normal((5, 7)).astype(dtype), rng.standard_normal((3, 7)).astype(dtype)
    want = a.astype(np.float64) @ b.astype(np.float64).T
    np.testing.assert_allclose(run(ops.MatMul(transpose_b=True), a, b, 1), want, **tol)
    x, y = rng.standard_normal((2, 3, 4, 6)).astype(dtype), rng.standard_normal((6, 5)).astype(dtype)
    np.testing.assert_allclose(run(ops.BatchMatMul(), x, y, 1), x.astype(np.float64) @ y, **tol)
    xt = rng.standard_normal((2, 3, 6, 4)).astype(dtype)
    want = np.swapaxes(xt.astype(np.float64), -1, -2) @ y
    np.testing.assert_allclose(run(ops.BatchMatMul(transpose_a=True), xt, y, 1), want, **tol)
    assert python_calls == []

    # Partly broadcast batches: a GEMM step per index of the leading dims that broadcast
    for a_shape, b_shape, ta, tb, steps in (
        ((2, 1, 4, 6), (1, 3, 6, 5), False, False, 2),
        ((3, 1, 2, 6, 4), (2, 1, 5, 6), True, True, 6),  # the middle dim broadcast, b's first absent
        ((1, 2, 4, 6), (3, 2, 6, 5), False, False, 3),  # a's leading 1, then equal dims: a batch of 2 per index
    ):
        x, y = rng.standard_normal(a_shape).astype(dtype), rng.standard_normal(b_shape).astype(dtype)
        xw, yw = x.astype(np.float64), y.astype(np.float64)
        want = (np.swapaxes(xw, -1, -2) if ta else xw) @ (np.swapaxes(yw, -1, -2) if tb else yw)
        np.testing.assert_allclose(run(ops.BatchMatMul(ta, tb), x, y, steps), want, **tol)
    assert python_calls == []
    # Past MAX_GEMM_STEPS (1,100 here): b's batch broadcast into a temporary, then one GEMM
    x, y = rng.standard_normal((1100, 2, 2, 3)).astype(dtype), rng.standard_normal((2, 4, 3)).astype(dtype)
    want = x.astype(np.float64) @ np.swapaxes(y.astype(np.float64), -1, -2)
    np.testing.assert_allclose(run(ops.BatchMatMul(False, True), x, y, 2), want, **tol)
    assert python_calls == []

    plan = ops.MatMul()._plan_for((Tensor(a, device="GPU"), Tensor(b.T.copy(), device="GPU")))
    assert _C.pause_device_launches(True) is False
    try:
        out = plan((Tensor(a, device="GPU"), Tensor(b.T.copy(), device="GPU")))
    finally:
        _C.pause_device_launches(False)
    assert len(python_calls) == 1
    np.testing.assert_allclose(out.asnumpy(), a.astype(np.float64) @ b.T, **tol)


def test_integer_matmul_and_an_empty_product_launch_from_c(native, monkeypatch):
    """An integer product is IntMatMulKernel (wrapping as the CPU: a batch from one matrix, transposes, int64
    overflow, batch dims broadcast partly), an empty sum a fill of zeros: launched from C."""
    python_calls = []
    real = native.matmul
    monkeypatch.setattr(native, "matmul", lambda *a: python_calls.append(a) or real(*a))

    def both(op, a, b, launches):
        want = op(Tensor(a), Tensor(b)).asnumpy()
        before = _C.device_launch_count()
        got = op(Tensor(a, device="GPU"), Tensor(b, device="GPU")).asnumpy()
        assert _C.device_launch_count() == before + launches
        np.testing.assert_array_equal(got, want)

    a, b = np.arange(6, dtype=np.int32).reshape(2, 3), np.arange(12, dtype=np.int32).reshape(3, 4)
    both(ops.MatMul(), a, b, 1)
    big = np.full((2, 3, 4), 2**62, np.int64)
    both(ops.BatchMatMul(transpose_a=True), big, np.arange(15, dtype=np.int64).reshape(3, 5), 1)
    both(ops.MatMul(), np.zeros((2, 0), np.float32), np.zeros((0, 3), np.float32), 1)
    partial = np.arange(12, dtype=np.int32).reshape(2, 1, 2, 3), np.arange(18, dtype=np.int32).reshape(1, 3, 3, 2)
    both(ops.BatchMatMul(), *partial, 1)  # any broadcast of the batch dims: one launch
    both(ops.BatchMatMul(True, False), np.ones((3, 1, 2, 3, 2), np.int64), np.ones((2, 1, 3, 4), np.int64), 1)
    nine = (1, 2) * 4 + (1, 2, 2)  # nine batch dims, merged into one
    both(ops.BatchMatMul(), np.ones(nine, np.int32), np.ones(nine[:-2] + (2, 1), np.int32), 1)
    assert python_calls == []


def test_conv2d_and_its_gradients_launch_from_c(native, monkeypatch):
    """Conv2D (im2col, GEMM), Conv2DBackpropInput (GEMM, col2im) and Conv2DBackpropFilter (im2col, GEMM,
    sample sum) are all steps launched from C, as the CPU computes them; so is a grouped convolution of several
    samples (its weights against the samples are not one cuBLAS call: a GEMM per sample, batched over the
    groups, each at its sample's offset)."""
    rng = np.random.default_rng(6)
    python_calls = []
    real = native.matmul
    monkeypatch.setattr(native, "matmul", lambda *a: python_calls.append(a) or real(*a))
    x, w = rng.standard_normal((2, 3, 9, 8)), rng.standard_normal((4, 3, 3, 3))
    conv = ops.Conv2D(4, 3, pad_mode="pad", pad=1, stride=2)
    y = conv(Tensor(x), Tensor(w)).asnumpy()
    dy = rng.standard_normal(y.shape)
    dx = ops.Conv2DBackpropInput(4, 3, pad_mode="pad", pad=1, stride=2)(Tensor(dy), Tensor(w), x.shape).asnumpy()
    dw = ops.Conv2DBackpropFilter(4, 3, pad_mode="pad", pad=1, stride=2)(Tensor(dy), Tensor(x), w.shape).asnumpy()

    def gpu(a):
        return Tensor(a, device="GPU")

    for call, want, launches in [
        (lambda: conv(gpu(x), gpu(w)), y, 2),
        (lambda: ops.Conv2DBackpropInput(4, 3, pad_mode="pad", pad=1, stride=2)(gpu(dy), gpu(w), x.shape), dx, 2),
        (lambda: ops.Conv2DBackpropFilter(4, 3, pad_mode="pad", pad=1, stride=2)(gpu(dy), gpu(x), w.shape), dw, 3),
    ]:
        before = _C.device_launch_count()
        got = call().asnumpy()
        assert _C.device_launch_count() == before + launches
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    assert python_calls == []

    w3 = rng.standard_normal((6, 1, 3, 3))
    grouped = ops.Conv2D(6, 3, pad_mode="same", group=3)
    y3 = grouped(Tensor(x), Tensor(w3)).asnumpy()
    dy3 = rng.standard_normal(y3.shape)
    backprop = ops.Conv2DBackpropInput(6, 3, pad_mode="same", group=3)
    dx3 = backprop(Tensor(dy3), Tensor(w3), x.shape).asnumpy()
    for call, want, launches in [
        (lambda: grouped(gpu(x), gpu(w3)), y3, 1 + 2),  # im2col, a GEMM per sample
        (lambda: backprop(gpu(dy3), gpu(w3), x.shape), dx3, 2 + 1),  # a GEMM per sample, col2im
    ]:
        before = _C.device_launch_count()
        got = call().asnumpy()
        assert _C.device_launch_count() == before + launches
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    assert python_calls == []


def test_recurrent_layers_launch_from_c(native, monkeypatch):
    """LSTMLayer, GRULayer, RNNLayer and their grads are one launch from C each: the input projection, then a
    GEMM and a cell kernel per step (and the weights' GEMMs after the backward's steps), never runtime.matmul;
    forward and backward agree with the CPU's kernels."""
    rng = np.random.default_rng(8)
    python_calls = []
    real = native.matmul
    monkeypatch.setattr(native, "matmul", lambda *a: python_calls.append(a) or real(*a))
    seq, batch, inp, hidden = 4, 3, 5, 6

    def args(*shapes):
        return [rng.standard_normal(s) for s in shapes]

    layers = [
        (ops.LSTMLayer(reverse=True), ops.LSTMLayerGrad(reverse=True), 4, ("h", "c"), 5),
        (ops.GRULayer(), ops.GRULayerGrad(), 3, ("h",), 3),
        (ops.RNNLayer(nonlinearity="relu"), ops.RNNLayerGrad(nonlinearity="relu"), 1, ("h",), 2),
    ]
    for forward, backward, gates, states, n_out in layers:
        biases = [(gates * hidden,)] * (2 if gates == 3 else 1)
        ins = args((seq, batch, inp), *[(batch, hidden)] * len(states), (gates * hidden, inp),
                   (gates * hidden, hidden), *biases)  # fmt: skip
        want = forward(*[Tensor(a) for a in ins])
        before = _C.device_launch_count()
        got = forward(*[Tensor(a, device="GPU") for a in ins])
        assert _C.device_launch_count() - before == 1 + len(states) + 2 * seq
        for g, w in zip(got, want):
            np.testing.assert_allclose(g.asnumpy(), w.asnumpy(), rtol=1e-10, atol=1e-12)
        saved = [w.asnumpy() for w in want]
        saved = [saved[0], saved[3], saved[4]] if gates == 4 else saved[:1] + saved[2:n_out]
        grads_in = [*ins[: 3 + len(states)], *saved, *args((seq, batch, hidden), *[(batch, hidden)] * len(states))]
        want = backward(*[Tensor(a) for a in grads_in])
        got = backward(*[Tensor(a, device="GPU") for a in grads_in])
        for g, w in zip(got, want):
            np.testing.assert_allclose(g.asnumpy(), w.asnumpy(), rtol=1e-10, atol=1e-12)
    assert python_calls == []


def test_bfloat16_matmul_and_conv2d_launch_from_c_between_widening_casts(native, monkeypatch):
    """bfloat16's MatMul and Conv2D are steps too: each input cast to float32 into a temporary, the float32 GEMM
    (and im2col), the result rounded back once: launched from C, never through runtime.matmul."""
    import ml_dtypes

    rng = np.random.default_rng(9)
    python_calls = []
    real = native.matmul
    monkeypatch.setattr(native, "matmul", lambda *a: python_calls.append(a) or real(*a))
    bf16 = ml_dtypes.bfloat16

    def run(op, a, b, launches):
        before = _C.device_launch_count()
        out = op(Tensor(a, device="GPU"), Tensor(b, device="GPU"))
        assert _C.device_launch_count() == before + launches
        assert out.dtype is opforge.bfloat16
        return out.asnumpy().astype(np.float64)

    a, b = rng.standard_normal((5, 7)).astype(bf16), rng.standard_normal((3, 7)).astype(bf16)
    want = a.astype(np.float64) @ b.astype(np.float64).T
    np.testing.assert_allclose(run(ops.MatMul(transpose_b=True), a, b, 4), want, rtol=1e-2, atol=1e-2)
    x, w = rng.standard_normal((2, 3, 6, 5)).astype(bf16), rng.standard_normal((4, 3, 3, 3)).astype(bf16)
    conv = ops.Conv2D(4, 3, pad_mode="same")
    want = conv(Tensor(x.astype(np.float64)), Tensor(w.astype(np.float64))).asnumpy()
    np.testing.assert_allclose(run(conv, x, w, 5), want, rtol=2e-2, atol=2e-2)  # casts 2, im2col, GEMM, cast
    assert python_calls == []


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.int8])
def test_add_n_of_many_inputs_launches_from_c_with_the_cpus_bits(native, dtype):
    """AddN of more than 8 inputs: 8 at a time, the sum carried in the compute type (float32 for float16), so the
    GPU gives the CPU kernel's bits (one rounding), launched from C, one launch per 8 inputs."""
    rng = np.random.default_rng(10)
    xs = [(rng.standard_normal((3, 5)) * 50).astype(dtype) for _ in range(20)]
    want = ops.AddN()(tuple(Tensor(x) for x in xs)).asnumpy()
    before = _C.device_launch_count()
    got = ops.AddN()(tuple(Tensor(x, device="GPU") for x in xs)).asnumpy()
    assert _C.device_launch_count() == before + 3
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_gather_and_sparse_losses_check_indices_on_the_device_launched_from_c(native, monkeypatch, dtype):
    """Gather's indices (and the sparse and NLL losses' labels) are checked as the kernel reads them (RangeCheckKernel,
    then one word read back in C): nothing goes through Python on a good call, and a bad index raises after the
    launch naming the operator, the position and the value, as the CPU does; launched from Python the same
    check runs through the runtime."""
    table = np.arange(15, dtype=np.float32).reshape(5, 3)
    reads = []
    real = native.to_host
    monkeypatch.setattr(native, "to_host", lambda *a, **k: reads.append(a[0].shape) or real(*a, **k))
    gather = ops.Gather()
    good = np.array([[4, 0], [2, 4]], dtype)
    args = (Tensor(table, device="GPU"), Tensor(good, device="GPU"), 0)
    before = _C.device_launch_count()
    out = gather(*args)
    assert _C.device_launch_count() == before + 3  # the word's fill, the range check, the gather
    assert reads == []
    np.testing.assert_array_equal(out.asnumpy(), table[good])
    reads.clear()
    message = r"For 'Gather', every 'input_indices' value must be in \[0, 5\), but got input_indices\[2\] = -1"
    bad = Tensor(np.array([1, 3, -1, 7], dtype), device="GPU")
    with pytest.raises(KernelError, match=message):
        gather(Tensor(table, device="GPU"), bad, 0)
    assert reads == [(4,)]  # only to name the value
    sparse = ops.SparseSoftmaxCrossEntropyWithLogits()
    logits = Tensor(np.zeros((3, 5), np.float32), device="GPU")
    labels = r"'SparseSoftmaxCrossEntropyWithLogits'.*\[0, 5\), but got labels\[1\] = 9"
    with pytest.raises(KernelError, match=labels):
        sparse(logits, Tensor(np.array([0, 9, 7], dtype), device="GPU"))
    np.testing.assert_allclose(sparse(logits, Tensor(np.array([0, 4, 2], dtype), device="GPU")).asnumpy(), np.log(5))
    nll, w = ops.NLLLoss(reduction="sum", ignore_index=-1), Tensor(np.ones(5, np.float32), device="GPU")
    with pytest.raises(KernelError, match=r"'NLLLoss'.*\[0, 5\) or the ignore_index -1, but got labels\[2\] = -2"):
        nll(logits, Tensor(np.array([0, -1, -2], dtype), device="GPU"), w)
    loss, total = nll(logits + 1, Tensor(np.array([0, -1, 4], dtype), device="GPU"), w)  # -1: ignored
    assert (float(loss.asnumpy()), float(total.asnumpy())) == (-2.0, 2.0)
    monkeypatch.setattr(native, "native_launches", False)
    registry.invalidate()
    with pytest.raises(KernelError, match=message):
        gather(Tensor(table, device="GPU"), bad, 0)
    with pytest.raises(KernelError, match=labels):
        sparse(logits, Tensor(np.array([0, 9, 7], dtype), device="GPU"))
    np.testing.assert_array_equal(gather(*args).asnumpy(), table[good])


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_index_rows_are_checked_on_the_device_and_a_parameter_is_not_written_on_error(native, dtype):
    """GatherNd's and the scatters' index rows: checked by RowRangeCheckKernel, launched from C, raising the
    CPU's error; a scatter into a Parameter checks before it writes, so a bad row leaves it as it was, and the
    Tensor scatters write a copy; an empty axis indexed raises without reading anything."""
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    rows = np.array([[0, 1], [2, 3], [3, 0]], dtype)
    want = r"For '{}', the index row 2 \[3, 0\] of 'indices' is out of range for 'x' of shape \[3, 4\]"
    with pytest.raises(KernelError, match=want.format("GatherNd")):
        ops.GatherNd()(Tensor(x, device="GPU"), Tensor(rows, device="GPU"))
    good = rows[:2]
    before = _C.device_launch_count()
    out = ops.GatherNd()(Tensor(x, device="GPU"), Tensor(good, device="GPU"))
    assert _C.device_launch_count() == before + 3  # the word's fill, the row check, the gather
    np.testing.assert_array_equal(out.asnumpy(), x[good[:, 0], good[:, 1]])

    param = Parameter(Tensor(x.copy(), device="GPU"), name="p")
    updates = Tensor(np.full(3, -1, np.float32), device="GPU")
    with pytest.raises(KernelError, match=want.format("ScatterNdUpdate")):
        ops.ScatterNdUpdate()(param, Tensor(rows, device="GPU"), updates)
    np.testing.assert_array_equal(param.asnumpy(), x)  # nothing written
    ops.ScatterNdAdd()(param, Tensor(good, device="GPU"), Tensor(np.ones(2, np.float32), device="GPU"))
    np.testing.assert_array_equal(param.asnumpy(), x + np.isin(np.arange(12), [1, 11]).reshape(3, 4))

    source = Tensor(x, device="GPU")
    with pytest.raises(KernelError, match=want.format("TensorScatterUpdate")):
        ops.TensorScatterUpdate()(source, Tensor(rows, device="GPU"), updates)
    np.testing.assert_array_equal(source.asnumpy(), x)
    with pytest.raises(KernelError, match=r"must be in \[0, 0\), but got input_indices\[0\] = 0"):
        ops.Gather()(Tensor(np.zeros((0, 3), np.float32), device="GPU"), Tensor(np.zeros(2, dtype), device="GPU"), 0)


def test_updates_of_copies_broadcast_gradients_complex_fills_and_empty_svds_launch_from_c(native, rng):
    """The calls that were launched from Python: an optimizer whose launcher writes copies (the inputs left as
    they were), FusedMatMulApplyGradientDescent (a GEMM, then the update), MaximumGrad and
    MinimumGrad of broadcast inputs (their gradients summed to the inputs' shapes), a complex128 fill, an SVD of
    zero-size matrices (u and v the identity's columns)."""

    def gpu(host):
        return Tensor(host, device="GPU")

    def launched_from_c(call):
        before = _C.device_launch_count()
        out = call()
        assert _C.device_launch_count() > before
        return out

    # A launcher made without in-place outputs (the dispatcher always passes the Parameters): copies written.
    var, m, v, grad = (rng.standard_normal(7).astype(np.float32) for _ in range(4))
    scalars = [np.array(s, np.float32) for s in (0.9, 0.999, 0.01, 0.9, 0.999, 1e-8)]
    f32 = opforge.float32
    adam = make_launcher(
        "Adam", select_kernel("Adam", "GPU", (f32,) * 10), GPU, (f32,) * 10,
        ((7,), (7,), (7,), *(((),) * 6), (7,)), ((7,),) * 3, (f32,) * 3, {"use_nesterov": False}, None,
    )  # fmt: skip
    inputs = [GPU.asarray(a, None) for a in (var, m, v, *scalars, grad)]
    out = launched_from_c(lambda: adam(tuple(inputs)))
    params = [Parameter(gpu(a), name=f"p{i}") for i, a in enumerate((var, m, v))]
    ops.Adam()(*params, *(gpu(s) for s in scalars), gpu(grad))
    for got, param, host, array in zip(out, params, (var, m, v), inputs):
        np.testing.assert_array_equal(GPU.to_host(got), param.asnumpy())
        np.testing.assert_array_equal(GPU.to_host(array), host)  # the copy was written, not the input

    w, x1, x2 = (rng.standard_normal(s).astype(np.float32) for s in ((3, 4), (5, 3), (5, 4)))
    weight = Parameter(gpu(w), name="w")
    fused = ops.FusedMatMulApplyGradientDescent(transpose_a=True)
    assert launched_from_c(lambda: fused(weight, 0.5, gpu(x1), gpu(x2))) is weight
    np.testing.assert_allclose(weight.asnumpy(), w - 0.5 * x1.T @ x2, rtol=1e-5, atol=1e-6)

    x, y = rng.standard_normal((1, 3)).astype(np.float32), rng.standard_normal((2, 1, 3)).astype(np.float32)
    dout = rng.standard_normal((2, 4, 3)).astype(np.float32)
    for grad_op, picks_x in ((MaximumGrad(), x >= y), (MinimumGrad(), x <= y)):
        dx, dy = launched_from_c(lambda grad_op=grad_op: grad_op(gpu(x), gpu(y), gpu(dout)))
        to_x = np.broadcast_to(picks_x, dout.shape)
        np.testing.assert_allclose(dx.asnumpy(), np.where(to_x, dout, 0).sum(0).sum(0, keepdims=True), rtol=1e-5)
        np.testing.assert_allclose(dy.asnumpy(), np.where(to_x, 0, dout).sum(1, keepdims=True), rtol=1e-5)
    empty = gpu(np.zeros(0, np.float32))
    dx, dy = launched_from_c(lambda: MaximumGrad()(gpu(np.ones(1, np.float32)), empty, empty))
    assert dx.asnumpy().tolist() == [0.0] and dy.shape == (0,)  # a sum of nothing

    value = np.complex128(1.5 - 2.25j)
    np.testing.assert_array_equal(GPU.to_host(GPU.full((2, 3), value, np.complex128)), np.full((2, 3), value))
    ones = launched_from_c(lambda: ops.OnesLike()(gpu(np.full((2, 3), value))))
    np.testing.assert_array_equal(ones.asnumpy(), np.ones((2, 3), np.complex128))

    s, u, v = launched_from_c(lambda: ops.Svd(full_matrices=True)(gpu(np.zeros((2, 3, 0), np.float32))))
    assert s.shape == (2, 0) and v.shape == (2, 0, 0)
    np.testing.assert_array_equal(u.asnumpy(), np.broadcast_to(np.eye(3), (2, 3, 3)))
    _, u, _ = ops.Svd(full_matrices=True, compute_uv=False)(gpu(np.zeros((1, 0, 2), np.float32)))
    np.testing.assert_array_equal(u.asnumpy(), np.zeros((1, 0, 0), np.float32))


def test_ctc_loss_lays_out_its_labels_on_the_device_launched_from_c(native, monkeypatch, rng):
    """CTCLoss checks and lays out its sparse labels on the device (CtcLayoutKernel): a good call reads nothing
    back and equals the CPU's (labels in any order, padded and collapsed rows, a row too long for its sequence
    given loss 0); a bad one raises the CPU's error after the launches."""
    reads = []
    real = native.to_host
    monkeypatch.setattr(native, "to_host", lambda *a, **k: reads.append(a[0].shape) or real(*a, **k))
    x = rng.standard_normal((6, 3, 5)).astype(np.float32)
    indices = np.array([[0, 1], [0, 0], [1, 0], [1, 1], [1, 2], [2, 0], [2, 1], [2, 2], [2, 3]], np.int64)
    values = np.array([2, 1, 3, 3, 4, 0, 1, 0, 1], np.int32)  # row 1 ends in the blank (4): padding
    seq_len = np.array([6, 5, 3], np.int32)  # row 2 needs 4 frames: loss 0
    ctc = ops.CTCLoss(preprocess_collapse_repeated=True, ignore_longer_outputs_than_inputs=True)
    args = (x, indices, values, seq_len)
    before = _C.device_launch_count()
    loss, grad = ctc(*(Tensor(a, device="GPU") for a in args))
    assert _C.device_launch_count() > before and reads == []
    want_loss, want_grad = ctc(*(Tensor(a) for a in args))
    np.testing.assert_allclose(loss.asnumpy(), want_loss.asnumpy(), rtol=1e-5)
    np.testing.assert_allclose(grad.asnumpy(), want_grad.asnumpy(), rtol=1e-5, atol=1e-6)
    assert loss.asnumpy()[2] == 0 and not grad.asnumpy()[:, 2].any()
    values[1] = 4  # row 0: padding before a label
    for device in ("GPU", "CPU"):
        with pytest.raises(KernelError, match=r"labels_values\[0\] = 2 \(batch 0, position 1\) follows the padding"):
            ops.CTCLoss()(*(Tensor(a, device=device) for a in args))
