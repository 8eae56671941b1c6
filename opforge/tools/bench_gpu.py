"""``opforge bench --device GPU``: the GPU kernels against the hardware and CuPy, as ratios.

* Elementwise kernels at 16M float32 elements: bytes moved per second as a fraction of a
  device-to-device copy's (``cupy.copyto``), the bound for a memory-bound kernel (goal >= 85%).
* MatMul against ``cupy.matmul`` on the same arrays (goal: within 5%).
* Host overhead per call on one element: ``ops.ReLU()`` against a ``cupy.ElementwiseKernel``
  doing the same (goal: lower).
* Row and layout kernels (Softmax, reductions, LayerNorm, Argmax, CumSum, Transpose, Sort,
  TopK, Conv2D and its backprops, pooling) against PyTorch eager on the same GPU, as ratios
  (goal: <= 1.5; PyTorch is skipped when absent).
* Training steps (the MLP and LeNet-5 steps of ``opforge bench --suite jit``) on the GPU: opforge
  eager, jitted launching kernel by kernel, and jitted as one device graph, against PyTorch CUDA eager
  (goal: the MLP step under jit at most PyTorch's); wall time per step, the device synchronised after
  each batch of steps, the libraries interleaved.

Times come from CUDA events on CuPy's current stream (medians of repeated batches). Without
CuPy or a GPU it says why and exits cleanly.
"""

from __future__ import annotations

import statistics
import time

__all__ = ["run"]

N_ELEMENTWISE = 16 * 1024 * 1024
MATMUL_SIZES = (1024, 4096)


def _gpu_time(cupy, fn, repeats: int = 7, number: int = 20) -> float:
    """Median seconds per call of ``fn`` measured with CUDA events."""
    fn()
    samples = []
    for _ in range(repeats):
        start, stop = cupy.cuda.Event(), cupy.cuda.Event()
        start.record()
        for _ in range(number):
            fn()
        stop.record()
        stop.synchronize()
        samples.append(cupy.cuda.get_elapsed_time(start, stop) / 1e3 / number)
    return statistics.median(samples)


def _host_time(cupy, fn, repeats: int = 7, number: int = 2000) -> float:
    """Median host seconds per call (the stream synchronised after each batch)."""
    fn()
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        samples.append((time.perf_counter() - t0) / number)
        cupy.cuda.get_current_stream().synchronize()
    return statistics.median(samples)


def _elementwise_rows(cupy, opforge, ops) -> list:
    x = opforge.Tensor(cupy.random.standard_normal(N_ELEMENTWISE, dtype=cupy.float32), device="GPU")
    y = opforge.Tensor(cupy.random.standard_normal(N_ELEMENTWISE, dtype=cupy.float32), device="GPU")
    square = ops.Reshape()(x, (4096, 4096))
    row = opforge.Tensor(cupy.ones(4096, dtype=cupy.float32), device="GPU")
    src, dst = x._data, cupy.empty_like(x._data)
    copy_s = _gpu_time(cupy, lambda: cupy.copyto(dst, src))
    copy_bw = 2 * src.nbytes / copy_s
    rows = [("copy (device to device)", f"{N_ELEMENTWISE:,}", copy_s, copy_bw, 1.0)]
    add, mul, relu, neg = ops.Add(), ops.Mul(), ops.ReLU(), ops.Neg()

    def chain(a, b):
        for _ in range(5):
            a = neg(relu(mul(add(a, b), b)))
        return a

    fused = opforge.jit(chain)
    fused(x, y)  # traced and compiled: one kernel for the 20 calls
    cases = [
        ("ReLU", lambda: ops.ReLU()(x), 2),
        ("Sigmoid", lambda: ops.Sigmoid()(x), 2),
        ("Tanh", lambda: ops.Tanh()(x), 2),
        ("Exp", lambda: ops.Exp()(x), 2),
        ("Add", lambda: ops.Add()(x, y), 3),
        ("Mul", lambda: ops.Mul()(x, y), 3),
        ("Add (a row broadcast)", lambda: ops.Add()(square, row), 2),
        ("20-op chain, jit (fused)", lambda: fused(x, y), 3),
    ]
    for name, fn, arrays in cases:
        t = _gpu_time(cupy, fn)
        bw = arrays * src.nbytes / t
        rows.append((name, f"{N_ELEMENTWISE:,}", t, bw, bw / copy_bw))
    return rows


def _row_cases(cupy, opforge, ops, torch):
    """(name, opforge call, torch call) on the same device arrays, float32."""
    rand = lambda *shape: cupy.random.standard_normal(shape, dtype=cupy.float32)  # noqa: E731
    wide, tall, norm = rand(4096, 4096), rand(65536, 128), rand(8192, 1024)
    image, weight = rand(32, 64, 56, 56), rand(64, 64, 3, 3)
    dout = rand(32, 64, 56, 56)
    gamma, beta = cupy.ones(1024, cupy.float32), cupy.zeros(1024, cupy.float32)
    # 64 matrices of 64x64: well conditioned, and symmetric positive definite ones; 8 right-hand sides each
    square = rand(64, 64, 64) + 64 * cupy.eye(64, dtype=cupy.float32)
    spd = cupy.ascontiguousarray(square @ square.transpose(0, 2, 1))
    rhs = rand(64, 64, 8)
    # Tensors made once: Tensor(array) copies, as MindSpore's does, and must stay out of the timings.
    arrays = (wide, tall, norm, image, weight, dout, gamma, beta, square, spd, rhs)
    tensors = {id(a): opforge.Tensor(a, device="GPU") for a in arrays}
    T = lambda a: tensors[id(a)]  # noqa: E731
    P = torch.from_dlpack  # zero-copy views of the same memory
    conv = ops.Conv2D(64, 3, pad_mode="pad", pad=1)
    conv_dx = ops.Conv2DBackpropInput(64, 3, pad_mode="pad", pad=1)
    conv_dw = ops.Conv2DBackpropFilter(64, 3, pad_mode="pad", pad=1)
    tf = torch.nn.functional
    return [
        ("Softmax 4096x4096", lambda: ops.Softmax()(T(wide)), lambda: torch.softmax(P(wide), -1)),
        ("Softmax 65536x128", lambda: ops.Softmax()(T(tall)), lambda: torch.softmax(P(tall), -1)),
        ("LogSoftmax 4096x4096", lambda: ops.LogSoftmax()(T(wide)), lambda: torch.log_softmax(P(wide), -1)),
        ("ReduceSum rows 4096x4096", lambda: ops.ReduceSum()(T(wide), -1), lambda: P(wide).sum(-1)),
        ("ReduceSum cols 4096x4096", lambda: ops.ReduceSum()(T(wide), 0), lambda: P(wide).sum(0)),
        ("ReduceSum all 4096x4096", lambda: ops.ReduceSum()(T(wide)), lambda: P(wide).sum()),
        ("ReduceMax rows 65536x128", lambda: ops.ReduceMax()(T(tall), -1), lambda: P(tall).amax(-1)),
        ("Argmax rows 4096x4096", lambda: ops.Argmax()(T(wide)), lambda: P(wide).argmax(-1)),
        (
            "LayerNorm 8192x1024",
            lambda: ops.LayerNorm(-1, -1)(T(norm), T(gamma), T(beta)),
            lambda: tf.layer_norm(P(norm), (1024,), P(gamma), P(beta)),
        ),
        ("CumSum rows 4096x4096", lambda: ops.CumSum()(T(wide), -1), lambda: P(wide).cumsum(-1)),
        ("Transpose 4096x4096", lambda: ops.Transpose()(T(wide), (1, 0)), lambda: P(wide).t().contiguous()),
        ("Sort rows 4096x4096", lambda: ops.Sort()(T(wide)), lambda: torch.sort(P(wide), -1)),
        ("TopK k=8 4096x4096", lambda: ops.TopK()(T(wide), 8), lambda: torch.topk(P(wide), 8)),
        (
            "Conv2D 32x64x56x56 3x3",
            lambda: conv(T(image), T(weight)),
            lambda: tf.conv2d(P(image), P(weight), padding=1),
        ),
        (
            "Conv2DBackpropInput",
            lambda: conv_dx(T(dout), T(weight), (32, 64, 56, 56)),
            lambda: torch.ops.aten.convolution_backward(
                P(dout), P(image), P(weight), None, (1, 1), (1, 1), (1, 1), False, (0, 0), 1, (True, False, False)
            ),
        ),
        (
            "Conv2DBackpropFilter",
            lambda: conv_dw(T(dout), T(image), (64, 64, 3, 3)),
            lambda: torch.ops.aten.convolution_backward(
                P(dout), P(image), P(weight), None, (1, 1), (1, 1), (1, 1), False, (0, 0), 1, (False, True, False)
            ),
        ),
        (
            "MaxPool 3x3/2 32x64x56x56",
            lambda: ops.MaxPool(3, 2, "valid")(T(image)),
            lambda: tf.max_pool2d(P(image), 3, 2),
        ),
        ("MatrixInverse 64x64x64", lambda: ops.MatrixInverse()(T(square)), lambda: torch.linalg.inv(P(square))),
        (
            "MatrixSolve 64x64x64, 8",
            lambda: ops.MatrixSolve()(T(square), T(rhs)),
            lambda: torch.linalg.solve(P(square), P(rhs)),
        ),
        ("Cholesky 64x64x64", lambda: ops.Cholesky()(T(spd)), lambda: torch.linalg.cholesky(P(spd))),
        ("Eigh 64x64x64", lambda: ops.Eigh()(T(spd)), lambda: torch.linalg.eigh(P(spd))),
        ("Qr 64x64x64", lambda: ops.Qr()(T(square)), lambda: torch.linalg.qr(P(square))),
        ("Svd 64x64x64", lambda: ops.Svd()(T(square)), lambda: torch.linalg.svd(P(square), full_matrices=False)),
    ]


def _row_table(cupy, opforge, ops):
    from rich.table import Table

    table = Table(title="Row and layout kernels, float32, against PyTorch eager (goal: ratio <= 1.5)")
    for col in ("kernel", "opforge us", "torch us", "ratio"):
        table.add_column(col, justify="right" if col != "kernel" else "left")
    try:
        import torch
    except ImportError:
        table.add_row("PyTorch is not installed", "", "", "")
        return table
    for name, ours, theirs in _row_cases(cupy, opforge, ops, torch):
        try:
            t_of = _gpu_time(cupy, ours, number=5)
            t_pt = _gpu_time(cupy, theirs, number=5)
        except Exception as e:  # one failing kernel must not hide the others' figures
            table.add_row(name, f"failed: {type(e).__name__}: {str(e)[:120]}", "", "")
            continue
        table.add_row(name, f"{t_of * 1e6:,.1f}", f"{t_pt * 1e6:,.1f}", f"{t_of / t_pt:.2f}")
    return table


def _step_times(steps: dict, sync, repeats: int = 7, number: int = 30) -> dict:
    """Median wall seconds per call of each of ``steps``, interleaved, ``sync()`` after each batch."""
    for fn in steps.values():
        fn()
        fn()  # past a jit's trace and first replay (a device graph is captured at the third call)
        fn()
    sync()
    samples = {name: [] for name in steps}
    for _ in range(repeats):
        for name, fn in steps.items():
            t0 = time.perf_counter()
            for _ in range(number):
                fn()
            sync()
            samples[name].append((time.perf_counter() - t0) / number)
    return {name: statistics.median(s) for name, s in samples.items()}


def _training_table(cupy, opforge):
    import numpy as np
    from rich.table import Table

    from opforge.tools import bench

    try:
        import torch
    except ImportError:
        torch = None
    table = Table(title="Training steps on the GPU against PyTorch CUDA eager (goal: jit <= 1.0)")
    for col in ("step", "variant", "opforge us", "torch us", "ratio"):
        table.add_column(col, justify="right" if col not in ("step", "variant") else "left")
    weights, x, y = bench.mlp_weights(np)
    variants = {"eager": {"jit": False}, "jit, kernel by kernel": {"jit": True, "device_graph": False}}
    variants["jit, one device graph"] = {"jit": True}
    opforge.set_context(device_target="GPU")
    try:
        for step_name in ("MLP", "LeNet-5"):
            steps = {}
            for variant, options in variants.items():
                if step_name == "MLP":
                    steps[variant] = bench.opforge_step(np, opforge, weights, x, y, **options)[0]
                else:
                    steps[variant] = bench._lenet_case(np, opforge, torch, torch_device="cuda", **options)[2]["opforge"]
            if torch is not None:
                steps["torch"] = (
                    bench.torch_step(torch, weights, x, y, device="cuda")[0]
                    if step_name == "MLP"
                    else bench._lenet_case(np, opforge, torch, torch_device="cuda")[2]["torch"]
                )
            times = _step_times(steps, lambda: (cupy.cuda.Device().synchronize(), torch and torch.cuda.synchronize()))
            t_pt = times.pop("torch", None)
            for variant, t in times.items():
                ratio = f"{t / t_pt:.2f}" if t_pt else ""
                table.add_row(step_name, variant, f"{t * 1e6:,.1f}", f"{t_pt * 1e6:,.1f}" if t_pt else "-", ratio)
    finally:
        opforge.set_context(device_target="CPU")
    return table


def run(console=None) -> int:
    from rich.console import Console
    from rich.table import Table

    import opforge
    from opforge import ops

    console = console or Console()
    try:
        gpu = opforge.device.get_device("GPU")
        import cupy
    except (RuntimeError, ImportError) as e:
        console.print(f"opforge bench --device GPU: no GPU here ({e}); nothing to measure.", markup=False)
        return 0
    if type(gpu.runtime).__name__ != "CupyRuntime":
        console.print("opforge bench --device GPU: the GPU is not CuPy's; nothing to measure.")
        return 0
    props = cupy.cuda.runtime.getDeviceProperties(cupy.cuda.Device().id)
    console.print(
        f"GPU: {gpu.runtime.device_name}, CUDA runtime {cupy.cuda.runtime.runtimeGetVersion()}, "
        f"CuPy {cupy.__version__}, {props['multiProcessorCount']} SMs",
        highlight=False,
    )

    table = Table(title="Elementwise, float32: bandwidth as a fraction of a device copy (goal >= 0.85)")
    for col in ("kernel", "elements", "us per call", "GB/s", "of copy"):
        table.add_column(col, justify="right" if col != "kernel" else "left")
    for name, n, t, bw, frac in _elementwise_rows(cupy, opforge, ops):
        table.add_row(name, n, f"{t * 1e6:,.1f}", f"{bw / 1e9:,.0f}", f"{frac:.2f}")
    console.print(table)

    table = Table(title="MatMul against cupy.matmul (goal: ratio <= 1.05)")
    for col in ("dtype", "size", "opforge us", "cupy us", "ratio"):
        table.add_column(col, justify="right")
    for dtype in ("float32", "float16"):
        for size in MATMUL_SIZES:
            a = cupy.random.standard_normal((size, size), dtype=cupy.float32).astype(dtype)
            b = cupy.random.standard_normal((size, size), dtype=cupy.float32).astype(dtype)
            ta, tb = opforge.Tensor(a, device="GPU"), opforge.Tensor(b, device="GPU")
            mm = ops.MatMul()
            t_of = _gpu_time(cupy, lambda mm=mm, ta=ta, tb=tb: mm(ta, tb), number=5)
            t_cp = _gpu_time(cupy, lambda a=a, b=b: cupy.matmul(a, b), number=5)
            table.add_row(dtype, f"{size}x{size}", f"{t_of * 1e6:,.1f}", f"{t_cp * 1e6:,.1f}", f"{t_of / t_cp:.2f}")
    console.print(table)

    console.print(_row_table(cupy, opforge, ops))
    console.print(_training_table(cupy, opforge))

    console.print(_host_table(cupy, opforge, ops, gpu.runtime))
    return 0


def _bound(primitive, *args):
    """A fresh primitive's call on ``args`` (its plan made at the first call)."""
    return lambda: primitive(*args)


def _host_table(cupy, opforge, ops, runtime):
    """The host time of a 1-element ReLU, a 1x1 MatMul and a small Gather, launched from Python and from C
    (``_C.DeviceLaunch``: the plans made again for each), against a ``cupy.ElementwiseKernel``'s, ``cupy.matmul``'s
    and ``cupy.take``'s."""
    from rich.table import Table

    from opforge.kernels import registry

    one = opforge.Tensor(cupy.ones(1, dtype=cupy.float32), device="GPU")
    square = opforge.Tensor(cupy.ones((1, 1), dtype=cupy.float32), device="GPU")
    rows = opforge.Tensor(cupy.ones((16, 8), dtype=cupy.float32), device="GPU")
    picks = opforge.Tensor(cupy.array([3, 0, 15, 7], dtype=cupy.int32), device="GPU")
    relu_cupy = cupy.ElementwiseKernel("float32 x", "float32 y", "y = x < 0 ? 0 : x", "opforge_bench_relu")
    calls = {  # name: (make the opforge call, the peer's call, the peer's name)
        "ops.ReLU()(x)": (lambda: _bound(ops.ReLU(), one), lambda: relu_cupy(one._data), "ElementwiseKernel"),
        "ops.MatMul()(a, a), 1x1": (
            lambda: _bound(ops.MatMul(), square, square),
            lambda: cupy.matmul(square._data, square._data),
            "cupy.matmul",
        ),
        # Gather checks its indices on the device and reads the verdict back (one synchronisation a call);
        # cupy.take does not check them (it wraps).
        "ops.Gather()(t, i, 0), 4 of 16 rows": (
            lambda: _bound(ops.Gather(), rows, picks, 0),
            lambda: cupy.take(rows._data, picks._data, axis=0),
            "cupy.take",
        ),
    }
    was = runtime.native_launches
    times = {}
    try:
        for native in (False, True):
            runtime.native_launches = native
            registry.invalidate()  # every cached plan dropped: made again with this path
            for name, (make, _, _) in calls.items():
                times[name, native] = _host_time(cupy, make())
    finally:
        runtime.native_launches = was
        registry.invalidate()
    table = Table(title="Host overhead per call (goal: opforge lower)")
    for col in ("call", "us per call", "/ CuPy"):
        table.add_column(col, justify="right" if col != "call" else "left")
    for name, (_, peer, peer_name) in calls.items():
        t_cp = _host_time(cupy, peer)
        for native, how in ((False, "from Python"), (True, "from C")):
            t = times[name, native]
            table.add_row(f"opforge {name}, launched {how}", f"{t * 1e6:.2f}", f"{t / t_cp:.2f}")
        table.add_row(f"CuPy {peer_name}", f"{t_cp * 1e6:.2f}", "1.00")
    return table
