"""The GPU backend end to end, on the GPU the tests run (a real one when CuPy finds it, else the
host emulation of the CUDA sources): tensors and devices, selection across devices and the CPU
fallback, autodiff and an optimizer step matching the CPU, the kernels really running on the GPU."""

from __future__ import annotations

import subprocess
import sys
import warnings

import numpy as np
import pytest
from conftest import GPU, GPU_IS_EMULATED

import opforge
from opforge import Parameter, Tensor, nn, ops
from opforge.dispatch.plan import CpuFallbackWarning
from opforge.errors import KernelNotFoundError


@pytest.fixture
def gpu_context():
    yield
    opforge.set_context(device_target="CPU", cpu_fallback=False)


def test_tensors_move_between_devices():
    host = np.arange(6, dtype=np.float32).reshape(2, 3)
    x = Tensor(host, device="GPU")
    assert x.device == "GPU" and x.shape == (2, 3) and x.dtype is opforge.float32
    assert isinstance(x._data, GPU.array_type)
    back = x.to("CPU")
    assert back.device == "CPU" and np.array_equal(back.asnumpy(), host)
    assert x.to("GPU") is x
    assert np.array_equal(Tensor(x, device="CPU").asnumpy(), host) and Tensor(back, device="GPU").device == "GPU"
    assert np.array_equal(np.asarray(x), host)  # a copy to the host
    with pytest.raises(ValueError, match="without a copy"):
        np.asarray(x, copy=False) if np.lib.NumpyVersion(np.__version__) >= "2.0.0" else x.__array__(copy=False)
    zeros = Tensor(shape=(2, 2), dtype=opforge.bfloat16, device="GPU")
    assert zeros.device == "GPU" and zeros.asnumpy().tolist() == [[0, 0], [0, 0]]
    assert Tensor(np.float32(2.5), device="GPU").shape == ()  # 0-d stays 0-d
    assert Tensor(np.float32(2.5), device="GPU").item() == 2.5


def test_context_device_target_makes_tensors_and_calls_on_the_gpu(gpu_context):
    opforge.set_context(device_target="GPU")
    x = Tensor([1.0, -2.0])
    assert x.device == "GPU"
    y = ops.ReLU()(x)
    assert y.device == "GPU" and y.asnumpy().tolist() == [1.0, 0.0]


def test_a_call_without_tensor_inputs_follows_a_device_change(gpu_context):
    # Fill has no Tensor input: its cached plan must not keep the device of the first call.
    assert ops.fill(opforge.float32, (2,), 1.0).device == "CPU"
    opforge.set_context(device_target="GPU")
    assert ops.fill(opforge.float32, (2,), 1.0).device == "GPU"
    opforge.set_context(device_target="CPU")
    assert ops.fill(opforge.float32, (2,), 1.0).device == "CPU"


def test_inputs_on_two_devices_raise_naming_both():
    x, y = Tensor(np.ones(2, np.float32), device="GPU"), Tensor(np.ones(2, np.float32))
    with pytest.raises(ValueError, match=r"For 'Add', .* input 'x' is on GPU and input 'y' is on CPU"):
        ops.Add()(x, y)


def _gpu_only_missing_op():
    """A user operator with a CPU kernel and none on the GPU."""
    from helpers import user_op

    from opforge.kernels import KernelAttr, register_kernel

    f32 = opforge.float32
    register_kernel("CpuOnlyProbe", "CPU", KernelAttr().add_input_attr(f32).add_output_attr(f32))(lambda x: x * 3)
    return user_op("CpuOnlyProbe")()


def test_no_gpu_kernel_raises_unless_cpu_fallback(isolated_registries, gpu_context):
    prim = _gpu_only_missing_op()
    x = Tensor(np.array([1.0, 2.0], np.float32), device="GPU")
    with pytest.raises(KernelNotFoundError, match=r"For 'CpuOnlyProbe'.*GPU.*cpu_fallback=True"):
        prim(x)
    opforge.set_context(cpu_fallback=True)
    with pytest.warns(CpuFallbackWarning, match="For 'CpuOnlyProbe'"):
        y = prim(x)
    assert y.device == "GPU" and y.asnumpy().tolist() == [3.0, 6.0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # once per operator
        prim(Tensor(np.array([5.0], np.float32), device="GPU"))


def test_gpu_kernels_really_run_on_the_gpu():
    if not GPU_IS_EMULATED:
        pytest.skip("launches are counted by the emulation")
    before = GPU.runtime.launches
    x = Tensor(np.linspace(-1, 1, 100_000, dtype=np.float32), device="GPU")  # several grid-stride turns
    y = ops.Sigmoid()(x) * 2.0 + x
    assert GPU.runtime.launches >= before + 3
    expected = 2.0 / (1.0 + np.exp(-x.asnumpy().astype(np.float64))) + x.asnumpy()
    np.testing.assert_allclose(y.asnumpy(), expected, rtol=1e-5, atol=1e-6)


def _train_steps(device: str) -> list:
    opforge.set_context(device_target=device, cpu_fallback=True)
    rng = np.random.default_rng(0)
    net = nn.SequentialCell(nn.Dense(4, 8), nn.ReLU(), nn.Dense(8, 3))
    for p, value in zip(net.trainable_params(), _WEIGHTS):
        p.set_data(Tensor(value, device=device))
    loss_fn = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    step = nn.TrainOneStepCell(nn.WithLossCell(net, loss_fn), nn.Momentum(net.trainable_params(), 0.1, 0.9))
    x = Tensor(rng.standard_normal((5, 4)).astype(np.float32))
    y = Tensor(np.array([0, 1, 2, 1, 0], np.int32))
    losses = [float(step(x, y).asnumpy()) for _ in range(3)]
    return losses + [p.asnumpy() for p in net.trainable_params()]


_WEIGHTS = [np.random.default_rng(1).standard_normal(s).astype(np.float32) * 0.5 for s in ((8, 4), (8,), (3, 8), (3,))]


def test_training_on_the_gpu_matches_the_cpu(gpu_context):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CpuFallbackWarning)
        cpu = _train_steps("CPU")
        gpu = _train_steps("GPU")
    for a, b in zip(cpu, gpu):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_gradients_on_the_gpu_match_the_cpu(gpu_context):
    opforge.set_context(cpu_fallback=True)
    w_host = np.array([0.5, -1.0, 2.0], np.float32)
    x_host = np.array([1.0, 2.0, -0.5], np.float32)

    def grads(device):
        w = Parameter(Tensor(w_host, device=device), name="w")
        fn = lambda x: (ops.Tanh()(x * w) + ops.Elu(alpha=0.7)(x)).sum()  # noqa: E731
        gx, gw = opforge.GradOperation(get_all=True, get_by_list=True)(fn, [w])(Tensor(x_host, device=device))
        return gx[0].asnumpy(), gw[0].asnumpy(), gx[0].device

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CpuFallbackWarning)
        cpu, gpu = grads("CPU"), grads("GPU")
    assert gpu[2] == "GPU"
    np.testing.assert_allclose(cpu[0], gpu[0], rtol=1e-6)
    np.testing.assert_allclose(cpu[1], gpu[1], rtol=1e-6)


def test_cupy_missing_is_a_clear_error():
    from opforge.device import gpu as gpu_module

    try:
        import cupy  # noqa: F401
    except ImportError:
        with pytest.raises(RuntimeError, match=r"CuPy is not installed.*opforge\[gpu\]"):
            gpu_module._cupy_device()
    else:
        pytest.skip("CuPy is installed")


def test_bench_gpu_without_a_gpu_exits_cleanly():
    result = subprocess.run(
        [sys.executable, "-m", "opforge.tools.cli", "bench", "--device", "GPU"], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    if GPU_IS_EMULATED:
        assert "no GPU here" in result.stdout


def test_python_conversions_read_through_the_device():
    t = Tensor(np.int32(3), device="GPU")
    assert (int(t), float(t), bool(t), t.tolist(), t.item()) == (3, 3.0, True, 3, 3)
    assert [10, 20, 30, 40][Tensor(np.int32(2), device="GPU")] == 30
    assert "Tensor(shape=[2]" in repr(Tensor(np.ones(2, np.float16), device="GPU"))
