"""``opforge bench --device GPU``: the GPU kernels against the hardware and CuPy, as ratios.

* Elementwise kernels at 16M float32 elements: bytes moved per second as a fraction of a
  device-to-device copy's (``cupy.copyto``), the bound for a memory-bound kernel (goal >= 85%).
* MatMul against ``cupy.matmul`` on the same arrays (goal: within 5%).
* Host overhead per call on one element: ``ops.ReLU()`` against a ``cupy.ElementwiseKernel``
  doing the same (goal: lower).

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
    cases = [
        ("ReLU", lambda: ops.ReLU()(x), 2),
        ("Sigmoid", lambda: ops.Sigmoid()(x), 2),
        ("Tanh", lambda: ops.Tanh()(x), 2),
        ("Exp", lambda: ops.Exp()(x), 2),
        ("Add", lambda: ops.Add()(x, y), 3),
        ("Mul", lambda: ops.Mul()(x, y), 3),
        ("Add (a row broadcast)", lambda: ops.Add()(square, row), 2),
    ]
    for name, fn, arrays in cases:
        t = _gpu_time(cupy, fn)
        bw = arrays * src.nbytes / t
        rows.append((name, f"{N_ELEMENTWISE:,}", t, bw, bw / copy_bw))
    return rows


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

    one = opforge.Tensor(cupy.ones(1, dtype=cupy.float32), device="GPU")
    relu_cupy = cupy.ElementwiseKernel("float32 x", "float32 y", "y = x < 0 ? 0 : x", "opforge_bench_relu")
    relu = ops.ReLU()
    t_of = _host_time(cupy, lambda: relu(one))
    t_cp = _host_time(cupy, lambda: relu_cupy(one._data))
    table = Table(title="Host overhead per call, 1 element (goal: opforge lower)")
    for col in ("call", "us per call"):
        table.add_column(col, justify="right" if col != "call" else "left")
    table.add_row("opforge ops.ReLU()(x)", f"{t_of * 1e6:.2f}")
    table.add_row("cupy.ElementwiseKernel", f"{t_cp * 1e6:.2f}")
    table.add_row("ratio", f"{t_of / t_cp:.2f}")
    console.print(table)
    return 0
