"""The benchmark suite behind ``opforge bench`` (and ``benchmarks/bench_ops.py`` / ``bench_train.py``).

Every case is timed with opforge, NumPy and PyTorch (when installed) side by side in one run, and
reported as the median time per call over several repeats, with ratios: opforge's time divided by
the other library's (below 1.0: opforge is faster).

Suites:

- ``ops``: ReLU and Add from 1 to 16M elements; ``x + 1`` and ``x * 2.0`` (a Tensor and a Python
  scalar) on 1,000; ``Elu()(x)``, a primitive constructed and called, on 5; ``Custom pyfunc``, an
  ``ops.Custom`` of a Python function on 5 (its numpy column: the function called directly, so the
  difference is the cost of the operator); ``Reshape(x, (6, 4))`` and ``ReduceSum(x, 1)`` on 4x6 (calls
  with a constant argument: the call path's cost); MatMul 64x64 and 1024x1024; the transcendental functions
  (Exp, Log, Tanh, Sigmoid, Erf, GeLU, Softplus, Expm1, Log1p, Elu, Sin, Cos) on 1M float32 against
  NumPy's (SciPy's expit and erf where NumPy has none) and PyTorch's; Softmax and LogSoftmax over the
  rows of 1024x1024 and 4096x10 float32 (NumPy: the stable formula written out); Sort and TopK (k=8) of
  the rows, CumSum and CumProd along each axis and Transpose of 1024x1024 float32 (NumPy's sort gives
  values only, its TopK column is ``argpartition``: PyTorch's columns are the like-for-like ones);
  TensorScatterAdd of 4096 rows into them (``np.add.at``, ``index_add``); Randn and RandExt of 1024x1024
  float32 (NumPy's Generator, ``torch.randn``/``rand``), ``random_gamma`` and ``random_poisson`` likewise;
  MatrixInverse, Cholesky, Eigh, MatrixSolve and MatrixTriangularSolve of 64 matrices of 64x64 (8 right-hand
  sides), Svd of 512x256 (``np.linalg``, ``torch.linalg``) and nn.CTCLoss (T=100, N=32, C=30, S=20) against
  ``torch.nn.functional.ctc_loss``, float32.
- ``conv``: Conv2D forward, and its backward (Conv2DBackpropInput and Conv2DBackpropFilter, both
  gradients, against ``torch.ops.aten.convolution_backward``), float32 NCHW, at LeNet sizes (batch 32:
  1x8x8 -> 6 channels 3x3, 1x28x28 -> 6 channels 5x5, 6x14x14 -> 16 channels 5x5) and at a ResNet
  block (32x64x56x56 -> 64 channels 3x3, pad 1). NumPy has no convolution: those columns are empty.
- ``jit``: the MLP training step of ``train`` and the LeNet-5 step of ``conv`` under ``opforge.jit``
  (one trace, replayed), and a chain of 20 elementwise operators (Add, Mul, ReLU, Neg, five times) on
  16 floats, jitted: its time per call divided by 20 is the replay's cost per operator.
- ``models``: real networks (``opforge/tools/bench_models.py``): a ResNet-50 step, an LSTM fwd+bwd, a
  Transformer encoder layer fwd+bwd.
- ``load`` (not in ``all``): Add and Exp on 1M floats at 1 and 2 threads while another process keeps
  a core busy, and the ratio (``opforge/tools/bench_load.py``).
- ``train``: one MLP training step (batch 64, 784 -> 256 -> ReLU -> 10, sparse softmax cross
  entropy, SGD lr 0.01: forward, backward and the in-place update; the implementations start from
  the same weights and are checked to agree first), and ``grad`` of ``relu(x).sum()`` on one
  element: the fixed cost of a differentiated call.
- ``comm`` (not part of ``all``: it starts its own mpiexec jobs): AllReduce against mpi4py's
  Allreduce, a 2-rank data-parallel training step against its floor and PyTorch DDP, and the same step
  tensor-parallel against one process.

``--quick`` runs small sizes with short timings: a smoke run whose figures are rough.

    opforge bench                          # every suite, 1 thread
    opforge bench --suite train --threads 2 --markdown out.md
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import importlib.util
import os
import statistics
import sys
import time

from opforge.tools import bench_load, bench_models

__all__ = ["SUITES", "measure", "threads_limited", "build_cases", "run", "render", "main"]

SUITES = ("ops", "train", "conv", "jit", "models")
QUICK_WARNING = (
    "opforge bench: warning: --quick times small sizes over a few milliseconds; its figures are rough "
    "(a smoke run), not ones to quote: run without --quick for those."
)
SUITE_CASES = {
    "ops": ("ReLU", "Add", "x + 1", "x * 2.0", "Elu()(x)", "Custom pyfunc", "MatMul")
    + ("Exp", "Log", "Tanh", "Sigmoid", "Erf", "GeLU", "Softplus", "Expm1", "Log1p", "Elu", "Sin", "Cos")
    + ("Softmax", "LogSoftmax", "Reshape", "ReduceSum", "Sort", "TopK", "CumSum", "Transpose")
    + ("CumProd", "TensorScatterAdd", "Randn", "RandExt")
    + ("RandomGamma", "RandomPoisson")
    + ("MatrixInverse", "Cholesky", "Svd", "Eigh", "MatrixSolve", "MatrixTriangularSolve", "CTCLoss"),
    "train": ("MLP train step", "grad relu(x).sum()"),
    "conv": ("Conv2D fwd", "Conv2D bwd", "LeNet train step"),
    "jit": ("MLP train step (jit)", "LeNet train step (jit)", "20-op chain (jit)"),
    "models": ("ResNet-50 train step", "LSTM fwd+bwd", "Transformer encoder layer fwd+bwd"),
}
LIBRARIES = ("opforge", "numpy", "torch", "torch.compile", "jax.jit")

# The training step.
BATCH, IN, HIDDEN, OUT, LR = 64, 784, 256, 10, 0.01
_THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


# ---------------------------------------------------------------------------------------------
# Timing and threads


def measure(fn, min_time: float = 0.05, repeats: int = 7) -> float:
    """Median seconds per call of ``fn`` over ``repeats`` batches of at least ``min_time`` each."""
    fn()  # warm up: plans, caches, page faults of the first allocation
    number = 1
    while True:
        start = time.perf_counter()
        for _ in range(number):
            fn()
        elapsed = time.perf_counter() - start
        if elapsed >= min_time:
            break
        number *= 2 if elapsed == 0 else max(2, int(min_time / elapsed * 1.2))
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        samples.append((time.perf_counter() - start) / number)
    return statistics.median(samples)


@contextlib.contextmanager
def threads_limited(n: int):
    """Run every library on ``n`` threads inside the block; yields a note on how NumPy's BLAS was
    limited, and restores the previous settings after.

    The environment variables reach the thread pools that have not started yet (set them before
    importing NumPy for them to reach NumPy's BLAS too); once NumPy is loaded, threadpoolctl (when
    installed) limits the BLAS pools already running. opforge and PyTorch are set directly.
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"the thread count must be an int >= 1, but got {n!r}")
    import opforge

    numpy_loaded = "numpy" in sys.modules
    saved_env = {var: os.environ.get(var) for var in _THREAD_VARS}
    saved_opforge = opforge.get_context("num_threads")
    torch = sys.modules.get("torch")
    saved_torch = torch.get_num_threads() if torch is not None else None
    for var in _THREAD_VARS:
        os.environ[var] = str(n)
    limiter, note = None, "environment"
    try:
        from threadpoolctl import threadpool_limits

        limiter, note = threadpool_limits(limits=n), "threadpoolctl"
    except ImportError:
        if numpy_loaded:
            note = "not limited: NumPy was loaded first and threadpoolctl is not installed"
    opforge.set_context(num_threads=n)
    if torch is not None:
        torch.set_num_threads(n)
    try:
        yield note
    finally:
        opforge.set_context(num_threads=saved_opforge)
        if saved_torch is not None:
            torch.set_num_threads(saved_torch)
        if limiter is not None:
            limiter.restore_original_limits()
        for var, value in saved_env.items():
            if value is None:
                os.environ.pop(var, None)
            else:
                os.environ[var] = value


@contextlib.contextmanager
def _memory_pool(opforge, enabled):
    """opforge's caching allocator on or off inside the block (None: unchanged)."""
    memory = getattr(opforge, "memory", None)
    if enabled is None or memory is None:
        yield
        return
    before = memory.is_enabled()
    memory.set_enabled(enabled)
    try:
        yield
    finally:
        memory.set_enabled(before)


def _import_torch(threads: int):
    """PyTorch on ``threads`` threads, or None when it is not installed."""
    try:
        import torch
    except ImportError:
        return None
    torch.set_num_threads(threads)
    return torch


# ---------------------------------------------------------------------------------------------
# The ops suite


def _ops_cases(np, opforge, torch, quick: bool = False) -> list:
    from opforge import ops

    rng = np.random.default_rng(0)
    relu, add, matmul = ops.ReLU(), ops.Add(), ops.MatMul()
    cases = []
    for n in (1, 1_000) if quick else (1, 1_000, 1_000_000, 16_000_000):
        a = rng.standard_normal(n, dtype=np.float32)
        b = rng.standard_normal(n, dtype=np.float32)
        x, y = opforge.Tensor(a), opforge.Tensor(b)
        libs = {"opforge": lambda x=x: relu(x), "numpy": lambda a=a: np.maximum(a, 0)}
        if torch is not None:
            ta = torch.from_numpy(a)
            libs["torch"] = lambda ta=ta: torch.relu(ta)
        cases.append(("ReLU", f"{n:,}", libs))
        libs = {"opforge": lambda x=x, y=y: add(x, y), "numpy": lambda a=a, b=b: np.add(a, b)}
        if torch is not None:
            ta, tb = torch.from_numpy(a), torch.from_numpy(b)
            libs["torch"] = lambda ta=ta, tb=tb: torch.add(ta, tb)
        cases.append(("Add", f"{n:,}", libs))
    cases += _scalar_and_construction_cases(np, opforge, torch, rng)
    for n in (64,) if quick else (64, 1024):
        a = rng.standard_normal((n, n), dtype=np.float32)
        b = rng.standard_normal((n, n), dtype=np.float32)
        x, y = opforge.Tensor(a), opforge.Tensor(b)
        libs = {"opforge": lambda x=x, y=y: matmul(x, y), "numpy": lambda a=a, b=b: np.matmul(a, b)}
        if torch is not None:
            ta, tb = torch.from_numpy(a), torch.from_numpy(b)
            libs["torch"] = lambda ta=ta, tb=tb: torch.matmul(ta, tb)
        cases.append(("MatMul", f"{n}x{n}", libs))
    cases += _transcendental_cases(np, opforge, torch, rng, 1_000 if quick else 1_000_000)
    cases += _softmax_cases(np, opforge, torch, rng, ((32, 32),) if quick else ((1024, 1024), (4096, 10)))
    cases += _layout_cases(np, opforge, torch, rng, 32 if quick else 1024)
    return cases + _linalg_ctc_cases(np, opforge, torch, rng, quick)


def _softmax_cases(np, opforge, torch, rng, shapes) -> list:
    """Softmax and LogSoftmax over the last axis (the CPU's blocks of rows, csrc/kernels/cpu/softmax_rows.h)."""
    from opforge import ops

    def np_log_softmax(v):
        shifted = v - v.max(axis=1, keepdims=True)
        return shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))

    def np_softmax(v):
        e = np.exp(v - v.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)

    cases = []
    for shape in shapes:
        a = rng.standard_normal(shape, dtype=np.float32)
        x = opforge.Tensor(a)
        for name, primitive, np_fn, torch_name in (
            ("Softmax", ops.Softmax(), np_softmax, "softmax"),
            ("LogSoftmax", ops.LogSoftmax(), np_log_softmax, "log_softmax"),
        ):
            libs = {"opforge": lambda p=primitive, x=x: p(x), "numpy": lambda g=np_fn, a=a: g(a)}
            if torch is not None:
                fn, ta = getattr(torch, torch_name), torch.from_numpy(a)
                libs["torch"] = lambda fn=fn, ta=ta: fn(ta, -1)
            cases.append((name, "x".join(map(str, shape)), libs))
    return cases


def _layout_cases(np, opforge, torch, rng, n: int) -> list:
    """Sort and TopK of rows, CumSum and CumProd along either axis and Transpose, on an n x n float32 array
    (NumPy's sort gives values only: PyTorch's, values and indices, is the like-for-like column);
    TensorScatterAdd of 4n rows into the n rows (NumPy's ``add.at``, PyTorch's ``index_add``); Randn,
    RandExt, random_gamma and random_poisson (``ops.randn``, ``ops.rand``, ...) of n x n float32 (NumPy's
    Generator, PyTorch's ``randn``, ``rand``, ``_standard_gamma``, ``poisson``)."""
    from opforge import ops

    a = rng.standard_normal((n, n), dtype=np.float32)
    x, ta = opforge.Tensor(a), (torch.from_numpy(a) if torch is not None else None)
    p = (1.0 + a * np.float32(0.001)).astype(np.float32)  # products that stay finite along a row
    xp, tp = opforge.Tensor(p), (torch.from_numpy(p) if torch is not None else None)
    rows_idx = rng.integers(0, n, 4 * n)
    upd = rng.standard_normal((4 * n, n), dtype=np.float32)
    idx, xu = opforge.Tensor(rows_idx.reshape(-1, 1)), opforge.Tensor(upd)
    ti, tu = (torch.from_numpy(rows_idx), torch.from_numpy(upd)) if torch is not None else (None, None)
    sort, topk, cumsum, transpose = ops.Sort(), ops.TopK(), ops.CumSum(), ops.Transpose()
    gen = np.random.default_rng(0)
    alpha, rate = opforge.Tensor(np.float32([2.5])), opforge.Tensor(np.float32([4.0]))
    t_alpha = torch.full((n, n), 2.5) if torch is not None else None
    t_rate = torch.full((n, n), 4.0) if torch is not None else None

    def np_scatter_add():
        out = a.copy()
        np.add.at(out, rows_idx, upd)
        return out

    rows = [
        ("Sort", "rows", lambda: sort(x), lambda: np.sort(a, -1), lambda: torch.sort(ta, stable=True, dim=-1)),
        ("TopK", "rows, k=8", lambda: topk(x, 8), lambda: np.argpartition(a, -8, -1), lambda: torch.topk(ta, 8)),
        ("CumSum", "axis 0", lambda: cumsum(x, 0), lambda: np.cumsum(a, 0), lambda: torch.cumsum(ta, 0)),
        ("CumSum", "axis 1", lambda: cumsum(x, 1), lambda: np.cumsum(a, 1), lambda: torch.cumsum(ta, 1)),
        ("Transpose", "(1, 0)", lambda: transpose(x, (1, 0)), lambda: np.ascontiguousarray(a.T),
         lambda: ta.t().contiguous()),
        ("CumProd", "axis 0", lambda: ops.cumprod(xp, 0), lambda: np.cumprod(p, 0), lambda: torch.cumprod(tp, 0)),
        ("CumProd", "axis 1", lambda: ops.cumprod(xp, 1), lambda: np.cumprod(p, 1), lambda: torch.cumprod(tp, 1)),
        ("TensorScatterAdd", f"{4 * n} rows", lambda: ops.tensor_scatter_add(x, idx, xu), np_scatter_add,
         lambda: ta.index_add(0, ti, tu)),
        ("Randn", "float32", lambda: ops.randn(n, n), lambda: gen.standard_normal((n, n), dtype=np.float32),
         lambda: torch.randn(n, n)),
        ("RandExt", "float32", lambda: ops.rand(n, n), lambda: gen.random((n, n), dtype=np.float32),
         lambda: torch.rand(n, n)),
        ("RandomGamma", "float32, alpha 2.5", lambda: ops.random_gamma((n, n), alpha),
         lambda: gen.standard_gamma(2.5, (n, n), dtype=np.float32), lambda: torch._standard_gamma(t_alpha)),
        ("RandomPoisson", "float32, rate 4", lambda: ops.random_poisson((n, n), rate),
         lambda: gen.poisson(4.0, (n, n)), lambda: torch.poisson(t_rate)),
    ]  # fmt: skip
    cases = []
    for name, what, mine, numpy_fn, torch_fn in rows:
        libs = {"opforge": mine, "numpy": numpy_fn}
        if torch is not None:
            libs["torch"] = torch_fn
        cases.append((name, f"{n}x{n}, {what}", libs))
    return cases


def _linalg_ctc_cases(np, opforge, torch, rng, quick: bool) -> list:
    """MatrixInverse and Cholesky of a batch of 64 square float32 matrices of 64 (LAPACK for opforge, NumPy
    and PyTorch alike), Svd of 512x256, and CTCLoss (nn.CTCLoss: 100 frames, batch 32, 30 classes, 20 labels)
    against PyTorch's ``ctc_loss`` (NumPy has none: its column is empty)."""
    from opforge import nn, ops

    n, m, frames = (8, 16, 10) if quick else (64, 256, 100)
    a = rng.standard_normal((64, n, n)).astype(np.float32) + np.float32(n) * np.eye(n, dtype=np.float32)
    spd = (a @ a.transpose(0, 2, 1)).astype(np.float32)
    rect = rng.standard_normal((2 * m, m)).astype(np.float32)
    x, xs, xr = opforge.Tensor(a), opforge.Tensor(spd), opforge.Tensor(rect)
    logits = rng.standard_normal((frames, 32, 30)).astype(np.float32)
    log_probs = (logits - np.log(np.exp(logits).sum(-1, keepdims=True))).astype(np.float32)
    targets = rng.integers(1, 30, (32, frames // 5)).astype(np.int32)
    lengths_in, lengths_out = (frames,) * 32, (frames // 5,) * 32
    ctc, lp, tg = nn.CTCLoss(), opforge.Tensor(log_probs), opforge.Tensor(targets)
    inverse, cholesky, svd, eigh = ops.MatrixInverse(), ops.Cholesky(), ops.Svd(), ops.Eigh()
    solve, tri_solve = ops.MatrixSolve(), ops.MatrixTriangularSolve()
    b = rng.standard_normal((64, n, 8)).astype(np.float32)
    lower = np.tril(a)
    xb, xl = opforge.Tensor(b), opforge.Tensor(lower)
    t = {k: torch.from_numpy(v) for k, v in dict(a=a, spd=spd, rect=rect, b=b, lower=lower).items()} if torch else {}
    rows = [
        ("MatrixInverse", f"64x{n}x{n}", lambda: inverse(x), lambda: np.linalg.inv(a),
         lambda: torch.linalg.inv(t["a"])),
        ("Cholesky", f"64x{n}x{n}", lambda: cholesky(xs), lambda: np.linalg.cholesky(spd),
         lambda: torch.linalg.cholesky(t["spd"])),
        ("Svd", f"{2 * m}x{m}", lambda: svd(xr), lambda: np.linalg.svd(rect, full_matrices=False),
         lambda: torch.linalg.svd(t["rect"], full_matrices=False)),
        ("Eigh", f"64x{n}x{n}", lambda: eigh(xs), lambda: np.linalg.eigh(spd), lambda: torch.linalg.eigh(t["spd"])),
        ("MatrixSolve", f"64x{n}x{n}, 8 columns", lambda: solve(x, xb), lambda: np.linalg.solve(a, b),
         lambda: torch.linalg.solve(t["a"], t["b"])),
        # NumPy has no triangular solve: its column is the general solve of the same systems
        ("MatrixTriangularSolve", f"64x{n}x{n}, 8 columns", lambda: tri_solve(xl, xb),
         lambda: np.linalg.solve(lower, b), lambda: torch.linalg.solve_triangular(t["lower"], t["b"], upper=False)),
    ]  # fmt: skip
    cases = []
    for name, what, mine, numpy_fn, torch_fn in rows:
        libs = {"opforge": mine, "numpy": numpy_fn}
        if torch is not None:
            libs["torch"] = torch_fn
        cases.append((name, what, libs))
    libs = {"opforge": lambda: ctc(lp, tg, lengths_in, lengths_out)}
    if torch is not None:
        tlp, ttg = torch.from_numpy(log_probs), torch.from_numpy(targets.astype(np.int64))
        tin, tout = torch.tensor(lengths_in), torch.tensor(lengths_out)
        libs["torch"] = lambda: torch.nn.functional.ctc_loss(tlp, ttg, tin, tout)
    cases.append(("CTCLoss", f"T={frames}, N=32, C=30, S={frames // 5}", libs))
    return cases


def _gelu_tanh_np(np, a):
    return 0.5 * a * (1 + np.tanh(np.float32(0.7978845608028654) * (a + np.float32(0.044715) * a * a * a)))


def _transcendental_cases(np, opforge, torch, rng, n) -> list:
    """The vectorised math (csrc/include/opforge/vmath.h) against NumPy's and PyTorch's, float32.
    Log and Log1p take |x| so that every library computes finite values."""
    from opforge import ops

    try:
        from scipy import special
    except ImportError:
        special = None
    a = rng.standard_normal(n, dtype=np.float32)
    pos = np.abs(a)
    f = torch.nn.functional if torch is not None else None
    table = (  # name, primitive, input, NumPy (None: none), PyTorch
        ("Exp", ops.Exp(), a, np.exp, lambda t: torch.exp(t)),
        ("Log", ops.Log(), pos, np.log, lambda t: torch.log(t)),
        ("Tanh", ops.Tanh(), a, np.tanh, lambda t: torch.tanh(t)),
        ("Sigmoid", ops.Sigmoid(), a, special and special.expit, lambda t: torch.sigmoid(t)),
        ("Erf", ops.Erf(), a, special and special.erf, lambda t: torch.erf(t)),
        ("GeLU", ops.GeLU(), a, lambda v: _gelu_tanh_np(np, v), lambda t: f.gelu(t, approximate="tanh")),
        ("Softplus", ops.Softplus(), a, lambda v: np.logaddexp(np.float32(0), v), lambda t: f.softplus(t)),
        ("Expm1", ops.Expm1(), a, np.expm1, lambda t: torch.expm1(t)),
        ("Log1p", ops.Log1p(), pos, np.log1p, lambda t: torch.log1p(t)),
        ("Elu", ops.Elu(), a, lambda v: np.where(v > 0, v, np.expm1(v)), lambda t: f.elu(t)),
        ("Sin", ops.Sin(), a, np.sin, lambda t: torch.sin(t)),
        ("Cos", ops.Cos(), a, np.cos, lambda t: torch.cos(t)),
    )
    cases = []
    for name, primitive, v, np_fn, torch_fn in table:
        x = opforge.Tensor(v)
        libs = {"opforge": lambda p=primitive, x=x: p(x)}
        if np_fn is not None:
            libs["numpy"] = lambda g=np_fn, v=v: g(v)
        if torch is not None:
            tv = torch.from_numpy(v)
            libs["torch"] = lambda g=torch_fn, t=tv: g(t)
        cases.append((name, f"{n:,}", libs))
    return cases


def _scalar_and_construction_cases(np, opforge, torch, rng) -> list:
    """A Tensor with a Python scalar (weak: the result keeps float32), and a primitive constructed
    and called in the timed loop (its attrs bound, its shared plan found)."""
    from opforge import ops

    a = rng.standard_normal(1_000, dtype=np.float32)
    x = opforge.Tensor(a)
    cases = []
    # One lambda per library, written out: a helper lambda around each would time two calls.
    ta = torch.from_numpy(a) if torch is not None else None
    one, two = np.float32(1), np.float32(2.0)
    plus = {"opforge": lambda: x + 1, "numpy": lambda: a + one, "torch": lambda: ta + 1}
    times = {"opforge": lambda: x * 2.0, "numpy": lambda: a * two, "torch": lambda: ta * 2.0}
    for name, libs in (("x + 1", plus), ("x * 2.0", times)):
        if torch is None:
            del libs["torch"]
        cases.append((name, "1,000", libs))
    small = rng.standard_normal(5, dtype=np.float32)
    xs = opforge.Tensor(small)
    libs = {"opforge": lambda: ops.Elu()(xs), "numpy": lambda: np.where(small > 0, small, np.expm1(small))}
    if torch is not None:
        ts = torch.from_numpy(small)
        libs["torch"] = lambda: torch.nn.ELU()(ts)
    cases.append(("Elu()(x)", "5", libs))
    cases.append(_custom_case(np, opforge, small))
    return cases + _constant_cases(np, opforge, torch, rng)


def _constant_cases(np, opforge, torch, rng) -> list:
    """Calls with a constant argument (a shape, an axis): the call path's cost on a small Tensor."""
    from opforge import ops

    a = rng.standard_normal((4, 6), dtype=np.float32)
    x, reshape, reduce_sum = opforge.Tensor(a), ops.Reshape(), ops.ReduceSum()
    ta = torch.from_numpy(a) if torch is not None else None
    shaped = {
        "opforge": lambda: reshape(x, (6, 4)),
        "numpy": lambda: a.reshape(6, 4),
        "torch": lambda: ta.reshape(6, 4),
    }
    summed = {"opforge": lambda: reduce_sum(x, 1), "numpy": lambda: a.sum(1), "torch": lambda: ta.sum(1)}
    cases = []
    for name, size, libs in (("Reshape", "4x6 to (6, 4)", shaped), ("ReduceSum", "4x6, axis 1", summed)):
        if torch is None:
            del libs["torch"]
        cases.append((name, size, libs))
    return cases


def _custom_case(np, opforge, small) -> tuple:
    """``ops.Custom`` of a Python function against calling the function itself: the operator's own cost."""

    def negate(a):
        return np.negative(a)

    custom = opforge.ops.Custom(negate, out_shape=lambda s: s, out_dtype=lambda t: t, func_type="pyfunc")
    xs = opforge.Tensor(small)
    return ("Custom pyfunc", "5", {"opforge": lambda: custom(xs), "numpy": lambda: negate(small)})


# ---------------------------------------------------------------------------------------------
# The train suite


def mlp_weights(np) -> tuple:
    """``([w1, b1, w2, b2], x, y)``: the MLP's starting weights and one batch, from a fixed seed."""
    rng = np.random.default_rng(0)
    w1 = (rng.standard_normal((HIDDEN, IN)) * np.sqrt(2 / IN)).astype(np.float32)
    w2 = (rng.standard_normal((OUT, HIDDEN)) * np.sqrt(2 / HIDDEN)).astype(np.float32)
    b1 = np.zeros(HIDDEN, np.float32)
    b2 = np.zeros(OUT, np.float32)
    x = rng.standard_normal((BATCH, IN), dtype=np.float32)
    y = rng.integers(0, OUT, BATCH).astype(np.int32)
    return [w1, b1, w2, b2], x, y


def opforge_step(np, opforge, weights, x, y, jit: bool = False, device_graph: bool = True) -> tuple:
    """``(step, weights)``: one opforge.nn training step (traced once and replayed with ``jit``, as one
    device graph on the GPU unless ``device_graph`` is False), and a function reading the weights back.
    Tensors are made on the context's device_target."""
    from opforge import nn

    net = nn.SequentialCell(
        nn.Dense(IN, HIDDEN, weight_init=opforge.Tensor(weights[0]), bias_init=opforge.Tensor(weights[1])),
        nn.ReLU(),
        nn.Dense(HIDDEN, OUT, weight_init=opforge.Tensor(weights[2]), bias_init=opforge.Tensor(weights[3])),
    )
    loss_fn = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    step = nn.TrainOneStepCell(nn.WithLossCell(net, loss_fn), nn.SGD(net.trainable_params(), learning_rate=LR))
    if jit:
        step = opforge.jit(step, device_graph=device_graph)
    tx, ty = opforge.Tensor(x), opforge.Tensor(y)
    params = net.trainable_params()
    return (lambda: step(tx, ty)), (lambda: [p.asnumpy() for p in params])


def numpy_step(np, weights, x, y) -> tuple:
    """The same step written by hand with NumPy (it computes only the gradients it needs)."""
    w1, b1, w2, b2 = (w.copy() for w in weights)
    rows = np.arange(BATCH)

    def step():
        nonlocal w1, b1, w2, b2  # updated in place
        h = x @ w1.T + b1
        a = np.maximum(h, 0)
        logits = a @ w2.T + b2
        shifted = logits - logits.max(axis=1, keepdims=True)
        e = np.exp(shifted)
        s = e.sum(axis=1, keepdims=True)
        loss = np.mean(np.log(s[:, 0]) - shifted[rows, y])
        d_logits = e / s
        d_logits[rows, y] -= 1
        d_logits /= BATCH
        d_w2 = d_logits.T @ a
        d_b2 = d_logits.sum(axis=0)
        d_h = (d_logits @ w2) * (h > 0)
        d_w1 = d_h.T @ x
        d_b1 = d_h.sum(axis=0)
        w1 -= LR * d_w1
        b1 -= LR * d_b1
        w2 -= LR * d_w2
        b2 -= LR * d_b2
        return loss

    return step, (lambda: [w1, b1, w2, b2])


def torch_step(torch, weights, x, y, device: str = "cpu") -> tuple:
    """The same step with PyTorch eager (nn.Linear, cross_entropy, optim.SGD) on ``device``."""
    net = torch.nn.Sequential(torch.nn.Linear(IN, HIDDEN), torch.nn.ReLU(), torch.nn.Linear(HIDDEN, OUT))
    with torch.no_grad():
        for p, w in zip(net.parameters(), weights):
            p.copy_(torch.from_numpy(w))
    net.to(device)
    opt = torch.optim.SGD(net.parameters(), lr=LR)
    tx, ty = torch.from_numpy(x).to(device), torch.from_numpy(y).long().to(device)

    def step():
        opt.zero_grad(set_to_none=True)
        loss = torch.nn.functional.cross_entropy(net(tx), ty)
        loss.backward()
        opt.step()
        return loss

    return step, (lambda: [p.detach().cpu().numpy().copy() for p in net.parameters()])


def jax_step(np, weights, x, y) -> tuple:
    """The same step as one ``jax.jit`` function (loss and gradients by ``jax.value_and_grad``, SGD written
    out), the weights carried from call to call and donated to the next (updated in place)."""
    import jax
    import jax.numpy as jnp

    def loss_fn(params, x, y):
        w1, b1, w2, b2 = params
        logits = jnp.maximum(x @ w1.T + b1, 0) @ w2.T + b2
        return -jnp.mean(jnp.take_along_axis(jax.nn.log_softmax(logits), y[:, None], axis=1))

    @functools.partial(jax.jit, donate_argnums=0)
    def update(params, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        return loss, [p - LR * g for p, g in zip(params, grads)]

    state = [[jnp.asarray(w) for w in weights]]
    jx, jy = jnp.asarray(x), jnp.asarray(y)

    def step():
        loss, state[0] = update(state[0], jx, jy)
        return loss.block_until_ready()

    return step, (lambda: [np.asarray(w) for w in state[0]])


def check_agreement(np, steps: dict) -> float:
    """Run each implementation's step three times from the same weights; the largest weight gap
    from NumPy's (an AssertionError above 1e-4)."""
    results = {}
    for lib, (step, weights) in steps.items():
        for _ in range(3):
            step()
        results[lib] = weights()
    ref = results["numpy"]
    gap = 0.0
    for ws in results.values():
        for a, b in zip(ws, ref):
            gap = max(gap, float(np.max(np.abs(np.asarray(a) - b))))
    if gap > 1e-4:
        raise AssertionError(f"the training steps disagree: max weight difference {gap:.3g}")
    return gap


def _mlp_case(np, opforge, torch, log, jit: bool = False, quick: bool = False) -> tuple:
    """The MLP step case (eager or jitted opforge), after checking three steps agree across libraries."""
    weights, x, y = mlp_weights(np)

    def fresh() -> dict:
        steps = {"opforge": opforge_step(np, opforge, weights, x, y, jit), "numpy": numpy_step(np, weights, x, y)}
        if torch is not None:
            steps["torch"] = torch_step(torch, weights, x, y)
        if jit and not quick and _installed("jax"):
            steps["jax.jit"] = jax_step(np, weights, x, y)
        return steps

    gap = check_agreement(np, fresh())
    log(f"  check: 3 steps from the same weights agree to {gap:.2g} (max |weight difference|)")
    name = "MLP train step (jit)" if jit else "MLP train step"
    return (name, f"{BATCH}x{IN}->{HIDDEN}->{OUT}", {k: v[0] for k, v in fresh().items()})


def _train_cases(np, opforge, torch, quick: bool = False, log=print) -> list:
    cases = [_mlp_case(np, opforge, torch, log)]

    relu = opforge.ops.ReLU()
    grad_fn = opforge.grad(lambda t: relu(t).sum())
    one = opforge.Tensor(np.array([0.5], np.float32))
    libs = {"opforge": lambda: grad_fn(one)}
    if torch is not None:
        tone = torch.tensor([0.5], requires_grad=True)
        libs["torch"] = lambda: torch.autograd.grad(torch.relu(tone).sum(), tone)
    cases.append(("grad relu(x).sum()", "1", libs))
    return cases


def _jit_cases(np, opforge, torch, quick: bool = False, log=print) -> list:
    cases = [_mlp_case(np, opforge, torch, log, jit=True, quick=quick), _lenet_case(np, opforge, torch, jit=True)]
    for n in (16,) if quick else (16, 1 << 20):
        label = "1M" if n == 1 << 20 else str(n)
        cases.append(("20-op chain (jit)", label, _chain_libs(np, opforge, torch, n, compiled=not quick)))
    return cases


def _chain_libs(np, opforge, torch, n: int = 16, compiled: bool = False) -> dict:
    """20 elementwise calls on ``n`` floats: opforge jitted (fused into one loop), NumPy and PyTorch eager,
    and with ``compiled`` ``torch.compile`` and ``jax.jit`` where they are installed and work here."""
    ops = opforge.ops
    add, mul, relu, neg = ops.Add(), ops.Mul(), ops.ReLU(), ops.Neg()

    def chain(a, b):
        for _ in range(5):
            a = neg(relu(mul(add(a, b), b)))
        return a

    a = np.linspace(-1, 1, n, dtype=np.float32)
    b = np.full(n, 0.5, np.float32)
    jitted, ta, tb = opforge.jit(chain), opforge.Tensor(a), opforge.Tensor(b)
    jitted(ta, tb)

    def numpy_chain():
        c = a
        for _ in range(5):
            c = -np.maximum((c + b) * b, 0)
        return c

    libs = {"opforge": lambda: jitted(ta, tb), "numpy": numpy_chain}
    if torch is not None:
        pa, pb = torch.from_numpy(a), torch.from_numpy(b)

        def torch_chain():
            c = pa
            for _ in range(5):
                c = -torch.relu((c + pb) * pb)
            return c

        libs["torch"] = torch_chain
        if compiled:
            libs.update(_compiled_peer("torch.compile", lambda: torch.compile(torch_chain)))
    if compiled:
        libs.update(_compiled_peer("jax.jit", lambda: _jax_chain(a, b)))
    return libs


def _installed(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def _compiled_peer(name: str, make) -> dict:
    """``{name: fn}`` after one warm-up call (the compile), or {} where the compiler is missing or fails."""
    try:
        fn = make()
        fn()
    except Exception:  # noqa: BLE001 - a peer that cannot compile here is left out of the table
        return {}
    return {name: fn}


def _jax_chain(a, b):
    import jax
    import jax.numpy as jnp

    @jax.jit
    def chain(x, y):
        for _ in range(5):
            x = -jnp.maximum((x + y) * y, 0)
        return x

    ja, jb = jnp.asarray(a), jnp.asarray(b)
    return lambda: chain(ja, jb).block_until_ready()


# (N, C, H, W, out channels, kernel, pad): LeNet's layers on batch 32, and a ResNet block.
CONV_CASES = [
    (32, 1, 8, 8, 6, 3, 0),
    (32, 1, 28, 28, 6, 5, 0),
    (32, 6, 14, 14, 16, 5, 0),
    (32, 64, 56, 56, 64, 3, 1),
]


def _conv_cases(np, opforge, torch, quick: bool = False) -> list:
    """Conv2D forward and backward (input and filter gradients) against PyTorch's."""
    from opforge import ops

    rng = np.random.default_rng(0)
    cases = []
    for n, c, h, w, o, k, pad in CONV_CASES[:2] if quick else CONV_CASES:
        attrs = {"out_channel": o, "kernel_size": k, "pad_mode": "pad" if pad else "valid", "pad": pad}
        conv, dgrad, wgrad = ops.Conv2D(**attrs), ops.Conv2DBackpropInput(**attrs), ops.Conv2DBackpropFilter(**attrs)
        xa = rng.standard_normal((n, c, h, w), dtype=np.float32)
        wa = rng.standard_normal((o, c, k, k), dtype=np.float32)
        oh, ow = h + 2 * pad - k + 1, w + 2 * pad - k + 1
        da = rng.standard_normal((n, o, oh, ow), dtype=np.float32)
        x, wt, d = opforge.Tensor(xa), opforge.Tensor(wa), opforge.Tensor(da)
        size = f"{n}x{c}x{h}x{w} {o}@{k}x{k}" + (f" p{pad}" if pad else "")
        fwd = {"opforge": lambda x=x, wt=wt, conv=conv: conv(x, wt)}
        bwd = {
            "opforge": lambda d=d, wt=wt, x=x, dg=dgrad, wg=wgrad, xs=xa.shape, ws=wa.shape: (
                dg(d, wt, xs),
                wg(d, x, ws),
            )
        }
        if torch is not None:
            tx, tw, td = torch.from_numpy(xa), torch.from_numpy(wa), torch.from_numpy(da)
            conv_bwd = torch.ops.aten.convolution_backward
            fwd["torch"] = lambda tx=tx, tw=tw, pad=pad: torch.nn.functional.conv2d(tx, tw, padding=pad)
            bwd["torch"] = lambda td=td, tx=tx, tw=tw, pad=pad, conv_bwd=conv_bwd: conv_bwd(
                td, tx, tw, None, [1, 1], [pad, pad], [1, 1], False, [0, 0], 1, [True, True, False]
            )
        cases.append(("Conv2D fwd", size, fwd))
        cases.append(("Conv2D bwd", size, bwd))
    cases.append(_lenet_case(np, opforge, torch))
    return cases


LENET_BATCH = 32


def _lenet_case(np, opforge, torch, jit: bool = False, torch_device: str = "cpu", device_graph: bool = True) -> tuple:
    """One SGD step of the demo's LeNet-5 (``opforge demo --model lenet``) on a batch of 8x8 digits
    (traced once and replayed with ``jit``; opforge's Tensors on the context's device_target), against
    the same network in PyTorch eager (Conv2d, ReLU, MaxPool2d, Linear, cross_entropy) on ``torch_device``."""
    from opforge import nn
    from opforge.tools.demo import LeNet5

    rng = np.random.default_rng(0)
    xa = rng.standard_normal((LENET_BATCH, 64), dtype=np.float32)
    ya = rng.integers(0, 10, LENET_BATCH).astype(np.int32)
    net = LeNet5()
    loss_fn = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    step = nn.TrainOneStepCell(nn.WithLossCell(net, loss_fn), nn.SGD(net.trainable_params(), learning_rate=LR))
    if jit:
        step = opforge.jit(step, device_graph=device_graph)
    x, y = opforge.Tensor(xa), opforge.Tensor(ya)
    libs = {"opforge": lambda: step(x, y)}
    if torch is not None:
        t = torch.nn
        tnet = t.Sequential(
            t.Unflatten(1, (1, 8, 8)),
            t.Conv2d(1, 32, 3, padding=1), t.ReLU(), t.MaxPool2d(2),
            t.Conv2d(32, 64, 3, padding=1), t.ReLU(), t.MaxPool2d(2),
            t.Flatten(), t.Linear(256, 128), t.ReLU(), t.Linear(128, 64), t.ReLU(), t.Linear(64, 10),
        )  # fmt: skip
        tnet.to(torch_device)
        opt = torch.optim.SGD(tnet.parameters(), lr=LR)
        tx, ty = torch.from_numpy(xa).to(torch_device), torch.from_numpy(ya).long().to(torch_device)

        def torch_step():
            opt.zero_grad(set_to_none=True)
            loss = torch.nn.functional.cross_entropy(tnet(tx), ty)
            loss.backward()
            opt.step()
            return loss

        libs["torch"] = torch_step
    return ("LeNet train step (jit)" if jit else "LeNet train step", f"{LENET_BATCH}x1x8x8", libs)


def build_cases(suite: str, np, opforge, torch, quick: bool = False, log=print) -> list:
    """``(name, size label, {library: callable})`` for every case of ``suite`` (one of ``SUITES``)."""
    if suite == "ops":
        return _ops_cases(np, opforge, torch, quick)
    if suite == "conv":
        return _conv_cases(np, opforge, torch, quick)
    if suite == "jit":
        return _jit_cases(np, opforge, torch, quick, log)
    if suite == "train":
        return _train_cases(np, opforge, torch, quick, log)
    if suite == "models":
        return bench_models.model_cases(np, opforge, torch, quick)
    raise ValueError(f"unknown benchmark suite {suite!r}; suites: {', '.join(SUITES)}")


# ---------------------------------------------------------------------------------------------
# Running and reporting


def run(
    suites=SUITES,
    threads: int = 1,
    only: str | None = None,
    quick: bool = False,
    use_torch: bool = True,
    log=print,
    pool: bool | None = None,
) -> tuple:
    """Time every case of ``suites`` on ``threads`` threads; returns ``(rows, versions)``.

    ``rows`` are ``(suite, name, size, {library: seconds per call})``. ``only`` keeps the cases of
    one operator or case name (``ReLU``, ``MLP train step``); ``quick`` runs small sizes with short
    timings (a smoke test, not figures to quote); ``use_torch=False`` leaves PyTorch out;
    ``pool`` turns opforge's caching allocator of kernel outputs on or off for the run
    (``opforge.memory``; None leaves it as it is).
    """
    import numpy as np

    import opforge

    for suite in suites:
        if suite not in SUITES:
            raise ValueError(f"unknown benchmark suite {suite!r}; suites: {', '.join(SUITES)}")
    min_time, repeats = (0.002, 3) if quick else (0.05, 7)
    rows = []
    with threads_limited(threads) as note, _memory_pool(opforge, pool):
        torch = _import_torch(threads) if use_torch else None
        for suite in suites:
            if only and only not in SUITE_CASES[suite]:
                continue
            for name, size, libs in build_cases(suite, np, opforge, torch, quick, log):
                if only and name != only:
                    continue
                times = {lib: measure(fn, min_time, repeats) for lib, fn in libs.items()}
                rows.append((suite, name, size, times))
                log(f"  {name:<20} {size:>16}: " + "  ".join(f"{k} {_fmt_us(v)} us" for k, v in times.items()))
    versions = {"numpy": np.__version__, "opforge": opforge.__version__}
    if torch is not None:
        versions["torch"] = torch.__version__
    used = {lib for row in rows for lib in row[3]}
    if "torch.compile" in used:
        versions["torch.compile"] = versions["torch"]
    if "jax.jit" in used:
        import jax

        versions["jax.jit"] = jax.__version__
    versions["numpy BLAS threads"] = note
    versions["OpenBLAS core"] = opforge_blas_core()
    return rows, versions


def opforge_blas_core() -> str:
    """The kernels opforge's OpenBLAS runs, and whether the environment chose them (the machines here set
    OPENBLAS_CORETYPE=Haswell: AVX2 kernels where OpenBLAS would pick its AVX-512 ones)."""
    from opforge import _C

    core = _C.blas_core() or "unknown"
    return f"{core} (OPENBLAS_CORETYPE)" if os.environ.get("OPENBLAS_CORETYPE") else core


def _fmt_us(seconds) -> str:
    return "-" if seconds is None else f"{seconds * 1e6:,.2f}"


def _fmt_ratio(a, b) -> str:
    return "-" if a is None or b is None else f"{a / b:.2f}x"


def _columns(versions: dict) -> list:
    libs = [lib for lib in LIBRARIES if lib in versions]
    return libs, [other for other in libs if other != "opforge"]


def table_rows(rows, versions) -> tuple:
    """``(header, body)``: the cells of the results table (times in us, then the ratios)."""
    libs, others = _columns(versions)
    header = ["case", "size"] + [f"{lib} (us)" for lib in libs] + [f"opforge/{o}" for o in others]
    body = []
    for _, name, size, t in rows:
        cells = [name, size] + [_fmt_us(t.get(lib)) for lib in libs]
        cells += [_fmt_ratio(t.get("opforge"), t.get(o)) for o in others]
        body.append(cells)
    return header, body


def machine_line(versions: dict, threads: int) -> str:
    libs = ", ".join(f"{k} {v}" for k, v in versions.items() if k in LIBRARIES)
    note = versions.get("numpy BLAS threads", "")
    warning = f" (NumPy's BLAS threads {note})" if note.startswith("not") else ""
    return (
        f"Machine: {_cpu_name()}, {os.cpu_count()} cores; threads: {threads}{warning}; "
        f"OpenBLAS kernels: {versions.get('OpenBLAS core', 'unknown')}; Python {sys.version.split()[0]}; {libs}."
    )


def render(rows, versions, threads: int, first_column: str = "case") -> str:
    """The results as a Markdown table, under a line naming the machine and the versions."""
    header, body = table_rows(rows, versions)
    header[0] = first_column
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cells) + " |" for cells in body]
    return machine_line(versions, threads) + "\n\n" + "\n".join(lines) + "\n"


def _cpu_name() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown CPU"


def _fmt_us_short(seconds) -> str:
    """Microseconds to about 4 significant digits (the terminal table; the Markdown keeps two decimals)."""
    if seconds is None:
        return "-"
    us = seconds * 1e6
    return f"{us:,.0f}" if us >= 1000 else f"{us:.1f}" if us >= 100 else f"{us:.2f}"


def terminal_rows(rows, versions) -> tuple:
    """``(header, body)`` of the table ``opforge bench`` prints: short enough for 80 columns."""
    libs, others = _columns(versions)
    header = ["case", "size"] + libs + [f"vs {o}" for o in others]
    body = []
    for _, name, size, t in rows:
        cells = [name, size] + [_fmt_us_short(t.get(lib)) for lib in libs]
        cells += [_fmt_ratio(t.get("opforge"), t.get(o)) for o in others]
        body.append(cells)
    return header, body


def _print_rich(rows, versions, threads: int) -> None:
    from rich import box
    from rich.console import Console
    from rich.table import Table

    header, body = terminal_rows(rows, versions)
    table = Table(
        title="median us per call; vs = opforge / other (below 1.00x: opforge faster)",
        box=box.SIMPLE_HEAD,
        padding=(0, 1),
        collapse_padding=True,
        pad_edge=False,
        show_edge=False,
    )
    for i, name in enumerate(header):
        table.add_column(
            name, justify="left" if i < 2 else "right", style="bold cyan" if i == 0 else None, no_wrap=True
        )
    for cells in body:
        table.add_row(*cells)
    console = Console()
    console.print(machine_line(versions, threads))
    console.print(table)


# ---------------------------------------------------------------------------------------------
# Command line


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``opforge bench`` (shared with ``python -m opforge.tools.bench``)."""
    parser.add_argument("--threads", type=int, default=1, help="threads for every library (default 1)")
    parser.add_argument(
        "--suite",
        action="append",
        choices=[*SUITES, "all", "comm", "load"],
        help="a suite to run: ops (ReLU, Add, MatMul), train (an MLP step, grad of a tiny call), conv "
        "(Conv2D forward and backward, a LeNet step), jit (traced steps and chains), models (a ResNet-50 step), "
        "comm (AllReduce vs mpi4py, a 2-rank data-parallel step vs its floor and PyTorch DDP, the step "
        "tensor-parallel vs one process: starts its own mpiexec jobs, not part of 'all'), load (Add and Exp on 1 "
        "and 2 threads "
        "while another process keeps a core busy: the 2-thread / 1-thread ratio; not part of 'all'); "
        "repeat it for several (default: all)",
    )
    parser.add_argument("--op", help="run one case only (ReLU, Add, MatMul, 'MLP train step', ...)")
    parser.add_argument(
        "--quick", action="store_true", help="small sizes, short timings: a smoke run (its figures are rough)"
    )
    parser.add_argument("--no-torch", action="store_true", help="leave PyTorch out even when it is installed")
    parser.add_argument("--no-pool", action="store_true", help="opforge's kernel outputs without the caching allocator")
    parser.add_argument("--markdown", metavar="FILE", help="also write the table as Markdown to this file")
    parser.add_argument(
        "--device", choices=["CPU", "GPU"], default="CPU", help="GPU: the CUDA kernels against a device copy and CuPy"
    )


def run_from_args(args, rich: bool = True) -> int:
    """Run ``opforge bench`` with parsed arguments: print the table (and write the Markdown)."""
    if args.threads < 1:
        print(f"opforge bench: --threads must be >= 1, but got {args.threads}", file=sys.stderr)
        return 2
    if getattr(args, "device", "CPU") == "GPU":
        from opforge.tools import bench_gpu

        return bench_gpu.run()
    if args.suite and "comm" in args.suite:
        from opforge.tools import bench_parallel

        return bench_parallel.run_from_args(args)
    if args.quick:
        print(QUICK_WARNING, file=sys.stderr)
    if args.suite and "load" in args.suite:
        table = bench_load.render(bench_load.run(measure, threads_limited, not args.no_torch, args.quick))
        print(table)
        if args.markdown:
            with open(args.markdown, "w") as f:
                f.write(table)
        return 0
    suites = list(SUITES) if not args.suite or "all" in args.suite else list(dict.fromkeys(args.suite))
    rows, versions = run(
        suites, args.threads, args.op, args.quick, not args.no_torch, pool=False if args.no_pool else None
    )
    if not rows:
        print(f"opforge bench: no case named {args.op!r} in the suites {', '.join(suites)}", file=sys.stderr)
        return 1
    table = render(rows, versions, args.threads)
    print()
    if rich:
        _print_rich(rows, versions, args.threads)
    else:
        print(table)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(table)
    return 0


def main(argv=None, rich: bool = True) -> int:
    parser = argparse.ArgumentParser(
        prog="opforge bench", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    add_arguments(parser)
    return run_from_args(parser.parse_args(argv), rich)


if __name__ == "__main__":
    sys.exit(main())
