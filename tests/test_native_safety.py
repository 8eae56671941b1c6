"""The C++ core stays safe with many kernel authors, threads, forks and hostile inputs.

A kernel library as large as a real one's (thousands of kernels) must not move the kernels that
exist already; loading the same file twice imports nothing; a forked child runs kernels after the
parent used its thread pools; the thread count is one for the whole process; integer kernels wrap
instead of overflowing; impossible shapes and misaligned arrays are refused with clear errors.
"""

from __future__ import annotations

import multiprocessing
import os
import shutil
import signal
import subprocess
import threading
import time

import numpy as np
import pytest

from opforge import _C, Tensor, get_context, ops, set_context
from opforge.kernels import load_library, registry
from opforge.kernels.custom import include_dir

MANY_OPS = 1600

MANY_SOURCE = r"""
#include <string>

#include "opforge/kernel.h"

using namespace opforge;

// y = x + k for the op named "ManyOp<k>": one class serves every op this library registers.
class AddOpNumberKernel : public CpuKernel {
 public:
  void Init(const KernelContext& ctx) override {
    k_ = std::stof(ctx.op_name().substr(6));
    n_ = ctx.input(0).numel();
  }
  void Launch(const KernelArgs& args) override {
    const float* x = args.input<float>(0);
    float* y = args.output<float>(0);
    for (int64_t i = 0; i < n_; ++i) y[i] = x[i] + k_;
  }

 private:
  float k_ = 0.0f;
  int64_t n_ = 0;
};

[[maybe_unused]] const bool g_registered = [] {
  for (int i = 0; i < MANY_OPS; ++i) {
    const std::string name = "ManyOp" + std::to_string(i);
    detail::RegisterKernel<AddOpNumberKernel>(
        "CPU", name.c_str(), KernelAttr().AddInputAttr(kNumberTypeFloat32).AddOutputAttr(kNumberTypeFloat32));
  }
  return true;
}();
"""


def _compile(folder, name, source, defines=()):
    compiler = shutil.which("g++") or shutil.which("c++")
    if compiler is None:
        pytest.skip("no C++ compiler")
    src = folder / f"{name}.cc"
    src.write_text(source)
    lib = folder / f"lib{name}.so"
    cmd = [compiler, "-std=c++17", "-O1", "-shared", "-fPIC", "-fvisibility=hidden", "-Wall", "-Wextra", "-Werror"]
    cmd += [f"-D{d}" for d in defines] + [f"-I{include_dir()}", str(src), "-o", str(lib)]
    subprocess.run(cmd, check=True, capture_output=True, text=True)
    return lib


F32 = np.dtype(np.float32)


def _instance(index, op, shape, type_id=_C.kNumberTypeFloat32, np_dtype=F32):
    """A kernel instance with one input and one output of the same meta."""
    return _C.KernelInstance(
        index, op, [list(shape)], [type_id], [np_dtype], [list(shape)], [type_id], [np_dtype], {}, []
    )


def _builtin_index(op, type_id, n_inputs):
    for index, name, _backend, ins, outs, _same, source in _C.kernel_defs():
        if name == op and source == "builtin" and tuple(ins) == (type_id,) * n_inputs and tuple(outs) == (type_id,):
            return index
    raise AssertionError(f"no builtin kernel {op}")


@pytest.fixture(scope="module")
def many_library(tmp_path_factory):
    folder = tmp_path_factory.mktemp("many_kernels")
    return _compile(folder, "many_kernels", MANY_SOURCE, defines=[f"MANY_OPS={MANY_OPS}"])


# ---------------------------------------------------------------------------------------------
# 1. A large library does not move the kernels that exist


def test_kernels_made_before_a_large_library_loads_still_run(many_library, rng):
    x = rng.standard_normal((64, 32)).astype(np.float32)
    add = ops.Add()
    reduce_sum = ops.ReduceSum()
    # Plans (and their C++ kernel instances) made before the load...
    np.testing.assert_allclose(add(Tensor(x), Tensor(x)).asnumpy(), x + x)
    np.testing.assert_allclose(reduce_sum(Tensor(x), 1).asnumpy(), x.sum(1), rtol=1e-5)
    relu = _instance(_builtin_index("ReLU", _C.kNumberTypeFloat32, 1), "ReLU", x.shape)
    before = len(_C.kernel_defs())

    saved = registry.snapshot()
    try:
        entries = load_library(many_library)
    finally:
        registry.restore(saved)
    assert len(entries) == MANY_OPS
    assert len(_C.kernel_defs()) == before + MANY_OPS

    # ... run unchanged after it, and the new kernels run too.
    for _ in range(3):
        np.testing.assert_allclose(add(Tensor(x), Tensor(x)).asnumpy(), x + x)
        np.testing.assert_allclose(reduce_sum(Tensor(x), 1).asnumpy(), x.sum(1), rtol=1e-5)
        np.testing.assert_array_equal(relu.launch((x,)), np.maximum(x, 0))
    last = entries[-1]
    assert last.op_name == f"ManyOp{MANY_OPS - 1}"
    y = _instance(last.impl, last.op_name, x.shape).launch((x,))
    np.testing.assert_array_equal(y, x + np.float32(MANY_OPS - 1))


def test_loading_a_library_twice_imports_nothing(many_library, tmp_path):
    first_loaded, first = _C.load_library(str(many_library))  # loaded already by the test above, or now
    count = len(_C.kernel_defs())
    again, entries = _C.load_library(str(many_library))
    assert again is True
    assert entries == first
    assert len(_C.kernel_defs()) == count
    # The file is the identity, not the path: a symlink and a roundabout path find the same library.
    link = tmp_path / "link.so"
    link.symlink_to(many_library)
    roundabout = many_library.parent / ".." / many_library.parent.name / many_library.name
    for path in (link, roundabout):
        assert _C.load_library(str(path)) == (True, first)
    assert len(_C.kernel_defs()) == count
    assert isinstance(first_loaded, bool)


def test_kernel_index_out_of_range_is_an_error():
    with pytest.raises(IndexError, match="out of range"):
        _instance(len(_C.kernel_defs()) + 5, "ReLU", (2,))


# ---------------------------------------------------------------------------------------------
# 2. fork() after parallel kernels

BIG = 1_000_000
HANG_TIMEOUT = 120  # seconds: a child that hangs fails the test instead of the suite


@pytest.fixture
def parallel_parent():
    """The parent has run parallel kernels (OpenMP and BLAS) on several threads before it forks."""
    saved = _C.get_num_threads()
    set_context(num_threads=4)
    rng = np.random.default_rng(0)
    data = {
        "x": rng.standard_normal(BIG).astype(np.float32),
        "y": rng.standard_normal(BIG).astype(np.float32),
        "a": rng.standard_normal((512, 512)).astype(np.float32),
        "b": rng.standard_normal((512, 512)).astype(np.float32),
    }
    assert _C._parallel_team_size(BIG) == 4
    _check_kernels(data)
    yield data
    set_context(num_threads=saved)


def _check_kernels(data) -> int:
    """Runs large kernels and checks them against NumPy; returns the team size a region uses."""
    x, y, a, b = data["x"], data["y"], data["a"], data["b"]
    np.testing.assert_allclose(ops.Add()(Tensor(x), Tensor(y)).asnumpy(), x + y)
    total = ops.ReduceSum()(Tensor(x)).asnumpy()
    np.testing.assert_allclose(total, x.astype(np.float64).sum(), rtol=1e-4)
    np.testing.assert_allclose(ops.MatMul()(Tensor(a), Tensor(b)).asnumpy(), a @ b, rtol=1e-4, atol=1e-3)
    return _C._parallel_team_size(BIG)


def _pool_task(seed):
    data = _FORK_DATA
    shift = np.float32(seed)
    shifted = {**data, "x": data["x"] + shift}
    return _check_kernels(shifted), _C.in_forked_child()


_FORK_DATA = None


def test_fork_pool_runs_kernels_after_parallel_parent(parallel_parent):
    global _FORK_DATA
    _FORK_DATA = parallel_parent
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(2) as pool:
        results = pool.map_async(_pool_task, range(4)).get(timeout=HANG_TIMEOUT)
    assert results == [(1, True)] * 4  # one thread each: the pool of the parent is gone
    assert not _C.in_forked_child()
    assert _check_kernels(parallel_parent) == 4  # the parent keeps its threads


def test_os_fork_child_runs_kernels_after_parallel_parent(parallel_parent):
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report, never return into pytest
        code = 1
        try:
            set_context(num_threads=3)  # asking for threads in the child is harmless
            team = _check_kernels(parallel_parent)
            os.write(write_end, f"ok {team}".encode())
            code = 0
        except BaseException as e:  # noqa: BLE001 - anything goes back to the parent
            os.write(write_end, f"error {e!r}"[:4000].encode())
        finally:
            os._exit(code)
    os.close(write_end)
    deadline = time.monotonic() + HANG_TIMEOUT
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            pytest.fail(f"the forked child hung for {HANG_TIMEOUT} s running kernels")
        time.sleep(0.05)
    report = os.read(read_end, 8192).decode()
    os.close(read_end)
    assert os.waitstatus_to_exitcode(status) == 0, report
    assert report == "ok 1"


# ---------------------------------------------------------------------------------------------
# 3. One thread count for the whole process


def _in_thread(fn):
    out = {}

    def run():
        try:
            out["value"] = fn()
        except BaseException as e:  # noqa: BLE001 - re-raised in the caller
            out["error"] = e

    t = threading.Thread(target=run)
    t.start()
    t.join(HANG_TIMEOUT)
    assert not t.is_alive()
    if "error" in out:
        raise out["error"]
    return out["value"]


@pytest.fixture
def restore_threads():
    saved = _C.get_num_threads()
    yield
    set_context(num_threads=saved)


@pytest.mark.parametrize("n", [1, 3])
def test_num_threads_set_in_one_thread_applies_in_another(restore_threads, n):
    set_context(num_threads=n)
    assert get_context("num_threads") == n
    assert _C._parallel_team_size(BIG) == n
    assert _in_thread(lambda: _C._parallel_team_size(BIG)) == n
    assert _in_thread(_C.get_num_threads) == n


def test_num_threads_set_in_a_thread_applies_to_the_main_thread(restore_threads):
    _in_thread(lambda: set_context(num_threads=3))
    assert _C.get_num_threads() == 3
    assert _C._parallel_team_size(BIG) == 3
    assert _C._parallel_team_size(1000) == 1  # small work stays on one thread


def test_kernels_in_many_threads_agree(restore_threads):
    set_context(num_threads=2)
    rng = np.random.default_rng(1)
    xs = [rng.standard_normal(200_000).astype(np.float32) for _ in range(4)]
    results = [None] * len(xs)
    reduce_sum = ops.ReduceSum()  # one primitive: every thread launches the same cached kernel instance

    def work(i):
        for _ in range(5):
            results[i] = reduce_sum(Tensor(xs[i])).asnumpy()

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(xs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(HANG_TIMEOUT)
    for x, r in zip(xs, results):
        np.testing.assert_allclose(r, x.astype(np.float64).sum(), rtol=1e-4)


# ---------------------------------------------------------------------------------------------
# 4. No undefined behaviour: integer wrap-around, element counts, alignment


@pytest.mark.parametrize("np_dtype", [np.int32, np.int64])
def test_neg_of_the_minimum_int_wraps_as_numpy(np_dtype):
    info = np.iinfo(np_dtype)
    x = np.array([info.min, info.min + 1, -1, 0, 1, info.max], np_dtype)
    np.testing.assert_array_equal(ops.Neg()(Tensor(x)).asnumpy(), np.negative(x))


@pytest.mark.parametrize("np_dtype", [np.int32, np.int64])
def test_integer_kernels_wrap_as_numpy(np_dtype):
    info = np.iinfo(np_dtype)
    big = np.array([info.max, info.min, info.max - 1, info.min + 3], np_dtype)
    ones = np.array([1, -1, 2, -5], np_dtype)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(ops.Add()(Tensor(big), Tensor(ones)).asnumpy(), big + ones)
        np.testing.assert_array_equal(ops.Sub()(Tensor(big), Tensor(-ones)).asnumpy(), big - (-ones))
        np.testing.assert_array_equal(ops.Mul()(Tensor(big), Tensor(big)).asnumpy(), big * big)
        np.testing.assert_array_equal(ops.Square()(Tensor(big)).asnumpy(), big * big)
        np.testing.assert_array_equal(
            ops.ReduceSum()(Tensor(np.full(8, info.max, np_dtype))).asnumpy(),
            np.full(8, info.max, np_dtype).sum(dtype=np_dtype),
        )
        a = np.full((2, 3), info.max, np_dtype)
        np.testing.assert_array_equal(ops.MatMul()(Tensor(a), Tensor(a.T.copy())).asnumpy(), a @ a.T)


@pytest.mark.parametrize(
    "shape,message",
    [
        ([2**40, 2**40], r"has more elements than fit in int64"),
        ([3, 2**62], r"has more elements than fit in int64"),
        ([2**31, 2**31], r"has more bytes than fit in int64"),
        ([2, -3], r"must have no negative dims"),
    ],
)
def test_impossible_shapes_are_refused_naming_the_operator(shape, message):
    index = _builtin_index("ReLU", _C.kNumberTypeFloat32, 1)
    pattern = rf"^For 'ReLU', the input 0 shape \[{shape[0]}, {shape[1]}\] .*{message}"
    with pytest.raises(ValueError, match=pattern):
        _instance(index, "ReLU", shape)


def test_plan_with_mismatched_operand_lists_is_refused():
    index = _builtin_index("ReLU", _C.kNumberTypeFloat32, 1)
    with pytest.raises(ValueError, match="one shape, type id and NumPy dtype per operand"):
        _C.KernelInstance(index, "ReLU", [[2], [2]], [_C.kNumberTypeFloat32], [F32], [[2]], [12], [F32], {}, [])


def _misaligned(np_dtype, n, offset=1):
    buffer = np.zeros(n * np.dtype(np_dtype).itemsize + 16, np.uint8)
    start = (-buffer.ctypes.data) % 16 + offset  # 16-aligned, then `offset` bytes off
    return buffer[start : start + n * np.dtype(np_dtype).itemsize].view(np_dtype)


@pytest.mark.parametrize(
    "op,np_dtype,type_id,offset,align",
    [
        ("ReLU", np.float32, _C.kNumberTypeFloat32, 1, 4),
        ("ReLU", np.float64, _C.kNumberTypeFloat64, 4, 8),
        ("Neg", np.int64, _C.kNumberTypeInt64, 2, 8),
    ],
)
def test_misaligned_input_is_refused_naming_the_operator(op, np_dtype, type_id, offset, align):
    x = _misaligned(np_dtype, 6, offset)
    assert x.ctypes.data % align != 0
    kernel = _instance(_builtin_index(op, type_id, 1), op, x.shape, type_id, np.dtype(np_dtype))
    with pytest.raises(
        ValueError, match=rf"^For '{op}', the kernel's input 0 must have its data aligned to {align} bytes"
    ):
        kernel.launch((x,))
    x_aligned = x.copy()
    expected = np.maximum(x_aligned, 0) if op == "ReLU" else -x_aligned
    np.testing.assert_array_equal(kernel.launch((x_aligned,)), expected)


def test_complex64_must_be_8_aligned():
    # NumPy calls a complex64 array at a 4-byte offset aligned; kernels read it as 8-byte words.
    x = _misaligned(np.complex64, 4, 4)
    index = _builtin_index("ZerosLike", _C.kNumberTypeComplex64, 1)
    kernel = _instance(index, "ZerosLike", x.shape, _C.kNumberTypeComplex64, np.dtype(np.complex64))
    with pytest.raises(ValueError, match="aligned to 8 bytes"):
        kernel.launch((x,))
