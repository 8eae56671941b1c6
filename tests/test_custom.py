"""``ops.Custom``: pyfunc on the CPU and the GPU, aot from a source compiled on demand and from a
prebuilt library, out_shape/out_dtype as values and functions, several outputs, bprop, reg_info, and
the errors of each argument."""

from __future__ import annotations

import shutil
import subprocess
import textwrap

import numpy as np
import pytest
from conftest import GPU

import opforge
from opforge import Tensor, ops
from opforge import dtype as mstype
from opforge.errors import KernelError, KernelNotFoundError
from opforge.kernels import registry
from opforge.ops.custom import FUNC_TYPES
from opforge.tools import bench, cli

needs_compiler = pytest.mark.skipif(shutil.which("g++") is None, reason="no C++ compiler")

AOT_SOURCE = textwrap.dedent(
    r"""
    #include <cstdint>
    #include <cstring>

    // z = x + y * scale for float32 tensors of one shape; fails with 2 for any other dtype.
    extern "C" int CustomAddScaled(int nparam, void** params, int* ndims, int64_t** shapes, const char** dtypes,
                                   void* stream, void* extra) {
      if (nparam != 3 || stream != nullptr || extra != nullptr) return 1;
      for (int i = 0; i < nparam; ++i) {
        if (std::strcmp(dtypes[i], "float32") != 0) return 2;
      }
      int64_t n = 1;
      for (int d = 0; d < ndims[2]; ++d) n *= shapes[2][d];
      const float* x = static_cast<const float*>(params[0]);
      const float* y = static_cast<const float*>(params[1]);
      float* z = static_cast<float*>(params[2]);
      for (int64_t i = 0; i < n; ++i) z[i] = x[i] + y[i] * SCALE;
      return 0;
    }

    // Both outputs: the number of dimensions and the last extent of the input, as int64.
    extern "C" int CustomDims(int nparam, void** params, int* ndims, int64_t** shapes, const char** dtypes,
                              void*, void*) {
      if (nparam != 3 || std::strcmp(dtypes[1], "int64") != 0) return 1;
      *static_cast<int64_t*>(params[1]) = ndims[0];
      *static_cast<int64_t*>(params[2]) = shapes[0][ndims[0] - 1];
      return 0;
    }
    """
)


@pytest.fixture(autouse=True)
def _registries(isolated_registries):
    """Every Custom registers kernels: they are dropped after each test."""


@pytest.fixture
def build_root(tmp_path, monkeypatch):
    root = tmp_path / "extensions"
    monkeypatch.setenv("OPFORGE_EXTENSIONS_DIR", str(root))
    return root


def _source(tmp_path, scale: str = "1.0f", name: str = "add_scaled.cc"):
    path = tmp_path / name
    path.write_text(f"#define SCALE {scale}\n" + AOT_SOURCE)
    return path


def same(s):
    return s


def negate(x):
    """-x on either device's arrays (the GPU's through the host: the emulation's arrays have no arithmetic)."""
    return np.negative(x) if isinstance(x, np.ndarray) else GPU.asarray(-GPU.to_host(x), None)


# ---------------------------------------------------------------------------------------------
# pyfunc


def test_pyfunc_on_the_cpu_gets_numpy_arrays_and_runs_through_the_plan_cache(rng):
    seen = []

    def scaled_tanh(x):
        seen.append(type(x))
        return np.tanh(x) * np.float32(2)

    op = ops.Custom(scaled_tanh, out_shape=same, out_dtype=same, func_type="pyfunc")
    a = rng.standard_normal((3, 4)).astype(np.float32)
    for _ in range(3):
        y = op(Tensor(a))
    assert y.dtype is opforge.float32 and y.shape == (3, 4) and y.device == "CPU"
    np.testing.assert_allclose(y.asnumpy(), np.tanh(a) * 2, rtol=1e-6)
    assert seen == [np.ndarray] * 3
    assert len(op._plans) == 1  # one plan, built once, found on the later calls
    (entry,) = registry.kernels_for(op.name, "CPU")
    assert entry.kind == "pyfunc" and entry.attr.short() == "Float32 -> Float32"
    assert op.name.startswith("Custom_scaled_tanh_") and op.func_type == "pyfunc"


def test_each_instance_is_an_operator_of_its_own():
    double = ops.Custom(lambda x: x * 2, out_shape=same, out_dtype=same)  # func_type defaults to pyfunc
    triple = ops.Custom(lambda x: x * 3, out_shape=same, out_dtype=same)
    x = Tensor(np.array([1.0, 2.0], np.float32))
    assert double.name != triple.name
    assert double(x).asnumpy().tolist() == [2.0, 4.0] and triple(x).asnumpy().tolist() == [3.0, 6.0]


def test_pyfunc_on_the_gpu_gets_the_runtimes_arrays_and_its_output_stays_there():
    seen = []

    def halve(x):
        seen.append(type(x))
        return GPU.asarray(GPU.to_host(x) / 2, None)  # any computation on the device's arrays

    op = ops.Custom(halve, out_shape=same, out_dtype=same)
    x = Tensor(np.array([2.0, -4.0, 6.0], np.float32), device="GPU")
    y = op(x)
    assert y.device == "GPU" and isinstance(y._data, GPU.array_type) and seen == [GPU.array_type]
    assert y.to("CPU").asnumpy().tolist() == [1.0, -2.0, 3.0]
    # A host array returned on the GPU is moved to the device.
    host = ops.Custom(lambda x: GPU.to_host(x) + 1, out_shape=same, out_dtype=same)
    z = host(x)
    assert z.device == "GPU" and z.to("CPU").asnumpy().tolist() == [3.0, -3.0, 7.0]


def test_out_shape_and_out_dtype_as_functions_of_the_input_metas():
    calls = []

    def shape_of(x_shape, w_shape):
        calls.append(("shape", x_shape, w_shape))
        return [x_shape[0]]

    def dtype_of(x_dtype, w_dtype):
        calls.append(("dtype", x_dtype, w_dtype))
        return mstype.float64

    op = ops.Custom(lambda x, w: (x @ w).astype(np.float64)[:, 0], out_shape=shape_of, out_dtype=dtype_of)
    x = Tensor(np.ones((4, 3), np.float32))
    w = Tensor(np.full((3, 2), 0.5, np.float32))
    y = op(x, w)
    assert y.dtype is opforge.float64 and y.shape == (4,) and y.asnumpy().tolist() == [1.5] * 4
    assert calls == [("shape", [4, 3], [3, 2]), ("dtype", opforge.float32, opforge.float32)]
    op(x, w)
    assert len(calls) == 2  # inference runs once per input metas


def test_values_for_out_shape_and_out_dtype():
    op = ops.Custom(lambda x: x.sum(dtype=np.int32).reshape(()), out_shape=(), out_dtype=mstype.int32)
    y = op(Tensor(np.arange(5, dtype=np.int32)))
    assert y.shape == () and y.dtype is opforge.int32 and int(y.asnumpy()) == 10


def test_several_outputs():
    def sum_and_difference(x, y):
        return x + y, x - y

    op = ops.Custom(sum_and_difference, out_shape=lambda a, b: (a, a), out_dtype=(mstype.float32, mstype.float32))
    s, d = op(Tensor(np.array([3.0, 4.0], np.float32)), Tensor(np.array([1.0, 1.0], np.float32)))
    assert s.asnumpy().tolist() == [4.0, 5.0] and d.asnumpy().tolist() == [2.0, 3.0]
    wrong = ops.Custom(lambda x: x, out_shape=lambda a: (a, a), out_dtype=lambda t: (t, t))
    with pytest.raises(KernelError, match=r"For 'Custom_lambda_\d+', the pyfunc '<lambda>' must return 2 arrays"):
        wrong(Tensor(np.ones(2, np.float32)))


def test_a_pyfunc_result_unlike_out_shape_or_out_dtype_is_refused():
    op = ops.Custom(lambda x: x.astype(np.float64), out_shape=same, out_dtype=same)
    with pytest.raises(
        KernelError,
        match=r"output 0 of the pyfunc '<lambda>' must be Float32\[2\] as out_shape and out_dtype say, but got Float64",
    ):
        op(Tensor(np.ones(2, np.float32)))
    short = ops.Custom(lambda x: x[:1], out_shape=same, out_dtype=same)
    with pytest.raises(KernelError, match=r"must be Float32\[2\] .* but got Float32\[1\]"):
        short(Tensor(np.ones(2, np.float32)))


def test_a_non_contiguous_or_read_only_result_is_copied():
    transpose = ops.Custom(lambda x: x.T, out_shape=lambda s: s[::-1], out_dtype=same)
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    y = transpose(Tensor(a))
    assert y._data.flags.c_contiguous and y.asnumpy().tolist() == a.T.tolist()
    frozen = ops.Custom(lambda x: np.broadcast_to(x[:1], x.shape), out_shape=same, out_dtype=same)
    assert frozen(Tensor(a[0])).asnumpy().tolist() == [0.0, 0.0, 0.0]


def test_inputs_must_be_tensors():
    op = ops.Custom(lambda x, k: x * k, out_shape=lambda s, k: s, out_dtype=lambda t, k: t)
    with pytest.raises(TypeError, match=r"For 'Custom_lambda_\d+', every input must be a Tensor, but input 1 is int"):
        op(Tensor(np.ones(2, np.float32)), 3)


# ---------------------------------------------------------------------------------------------
# bprop


def test_bprop_is_used_by_grad():
    def cube_bprop(x, out, dout):
        return (dout * 3 * x * x,)

    cube = ops.Custom(lambda x: x**3, out_shape=same, out_dtype=same, bprop=cube_bprop)
    x = Tensor(np.array([1.0, -2.0, 0.5], np.float32))
    g = opforge.grad(lambda t: cube(t).sum())(x)
    np.testing.assert_allclose(g.asnumpy(), 3 * x.asnumpy() ** 2)

    def mul_bprop(x, y, out, dout):
        return dout * y, dout * x

    mul = ops.Custom(np.multiply, out_shape=lambda a, b: a, out_dtype=lambda a, b: a, bprop=mul_bprop)
    y = Tensor(np.array([4.0, 5.0, 6.0], np.float32))
    gx, gy = opforge.grad(lambda a, b: (mul(a, b) * cube(a)).sum(), grad_position=(0, 1))(x, y)
    xa, ya = x.asnumpy(), y.asnumpy()
    np.testing.assert_allclose(gx.asnumpy(), ya * xa**3 + xa * ya * 3 * xa**2, rtol=1e-6)
    np.testing.assert_allclose(gy.asnumpy(), xa * xa**3, rtol=1e-6)


def test_without_bprop_grad_says_so():
    op = ops.Custom(np.sin, out_shape=same, out_dtype=same)
    with pytest.raises(TypeError, match=r"For 'Custom_sin_\d+', no bprop was given"):
        opforge.grad(lambda t: op(t).sum())(Tensor(np.ones(2, np.float32)))
    with pytest.raises(TypeError, match="the 'bprop' must be a function"):
        ops.Custom(np.sin, out_shape=same, out_dtype=same, bprop=3)


# ---------------------------------------------------------------------------------------------
# aot


@needs_compiler
def test_aot_from_a_source_compiled_on_demand_and_cached(tmp_path, build_root, capfd):
    source = _source(tmp_path, "2.0f")
    op = ops.Custom(f"{source}:CustomAddScaled", out_shape=lambda a, b: a, out_dtype=lambda a, b: a, func_type="aot")
    x = Tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    y = Tensor(np.ones((2, 3), np.float32))
    assert op(x, y).asnumpy().tolist() == (np.arange(6).reshape(2, 3) + 2.0).tolist()
    assert "compiling extension 'custom_aot_add_scaled'" in capfd.readouterr().err
    again = ops.Custom(f"{source}:CustomAddScaled", out_shape=lambda a, b: a, out_dtype=lambda a, b: a, func_type="aot")
    assert again(x, y).asnumpy()[0, 0] == 2.0
    assert "compiling" not in capfd.readouterr().err  # the cache's library
    (entry,) = registry.kernels_for(op.name, "CPU")
    assert entry.kind == "aot" and entry.source.endswith(":CustomAddScaled")
    # An edited source is a new library.
    source.write_text(source.read_text().replace("#define SCALE 2.0f", "#define SCALE 3.0f"))
    edited = ops.Custom(
        f"{source}:CustomAddScaled", out_shape=lambda a, b: a, out_dtype=lambda a, b: a, func_type="aot"
    )
    assert edited(x, y).asnumpy()[0, 0] == 3.0


@needs_compiler
def test_aot_from_a_prebuilt_library_with_several_outputs(tmp_path):
    library = tmp_path / "libdims.so"
    subprocess.run(["g++", "-shared", "-fPIC", "-o", str(library), str(_source(tmp_path))], check=True)
    dims = ops.Custom(
        f"{library}:CustomDims", out_shape=((), ()), out_dtype=(mstype.int64, mstype.int64), func_type="aot"
    )
    rank, last = dims(Tensor(np.zeros((2, 5, 7), np.float32)))
    assert int(rank.asnumpy()) == 3 and int(last.asnumpy()) == 7
    add = ops.Custom(f"{library}:CustomAddScaled", out_shape=lambda a, b: a, out_dtype=lambda a, b: a, func_type="aot")
    assert add(Tensor(np.ones(3, np.float32)), Tensor(np.ones(3, np.float32))).asnumpy().tolist() == [2.0] * 3


@needs_compiler
def test_a_nonzero_aot_return_raises_naming_the_operator_and_the_function(tmp_path, build_root):
    add = ops.Custom(
        f"{_source(tmp_path)}:CustomAddScaled", out_shape=lambda a, b: a, out_dtype=lambda a, b: a, func_type="aot"
    )
    x = Tensor(np.ones(2, np.float64))
    with pytest.raises(KernelError, match=r"For 'Custom_CustomAddScaled_\d+', the aot function 'CustomAddScaled' .* 2"):
        add(x, x)


@needs_compiler
def test_aot_runs_on_the_cpu_only(tmp_path, build_root):
    add = ops.Custom(
        f"{_source(tmp_path)}:CustomAddScaled", out_shape=lambda a, b: a, out_dtype=lambda a, b: a, func_type="aot"
    )
    x = Tensor(np.ones(2, np.float32), device="GPU")
    with pytest.raises(KernelNotFoundError, match="cpu_fallback=True"):
        add(x, x)


@needs_compiler
def test_bad_aot_func_specs(tmp_path, build_root):
    source = _source(tmp_path)
    kwargs = dict(out_shape=same, out_dtype=same, func_type="aot")
    with pytest.raises(ValueError, match=r"For 'Custom', the 'func' of func_type 'aot' must be 'path/to/lib.so:func_"):
        ops.Custom(str(source), **kwargs)  # no ':'
    with pytest.raises(ValueError, match="must be 'path/to/lib.so:func_name'"):
        ops.Custom(f"{source}:", **kwargs)
    with pytest.raises(TypeError, match="must be a str"):
        ops.Custom(np.sin, **kwargs)
    with pytest.raises(FileNotFoundError, match="the file '.*missing.so' of the aot function 'f' does not exist"):
        ops.Custom(f"{tmp_path}/missing.so:f", **kwargs)
    with pytest.raises(ValueError, match="has no function 'CustomMissing'"):
        ops.Custom(f"{source}:CustomMissing", **kwargs)
    cuda = tmp_path / "k.cu"
    cuda.write_text("")
    with pytest.raises(NotImplementedError, match="aot CUDA sources"):
        ops.Custom(f"{cuda}:k", **kwargs)
    not_a_library = tmp_path / "notes.txt"
    not_a_library.write_text("hello")
    with pytest.raises(ValueError, match="cannot be loaded"):
        ops.Custom(f"{not_a_library}:f", **kwargs)


# ---------------------------------------------------------------------------------------------
# reg_info and the other arguments


def test_reg_info_decides_the_dtypes_of_its_target():
    info = (
        ops.CustomRegOp()
        .input(0, "x")
        .output(0, "y")
        .dtype_format(ops.DataType.F32_Default, ops.DataType.F32_Default)
        .target("CPU")
        .get_op_info()
    )
    op = ops.Custom(negate, out_shape=same, out_dtype=same, reg_info=info)
    assert [e.attr.short() for e in registry.kernels_for(op.name, "CPU")] == ["Float32 -> Float32"]
    assert op(Tensor(np.array([1.0], np.float32))).asnumpy().tolist() == [-1.0]
    with pytest.raises(KernelNotFoundError, match=rf"For '{op.name}', no CPU kernel accepts inputs \(Int32"):
        op(Tensor(np.array([1], np.int32)))
    assert registry.kernels_for(op.name, "CPU")[0].attr.short() == "Float32 -> Float32"  # nothing added
    # float16 widens to the float32 kernel losslessly and the result is cast back, as for any operator.
    assert op(Tensor(np.array([2.0], np.float16))).dtype is opforge.float16
    # A target reg_info does not name takes the dtypes of each call.
    assert op(Tensor(np.array([3], np.int32), device="GPU")).to("CPU").asnumpy().tolist() == [-3]


def test_reg_info_errors():
    f32 = ops.DataType.F32_Default
    row = ops.CustomRegOp().input(0, "x").output(0, "y").dtype_format(f32, f32)
    with pytest.raises(TypeError, match="the 'reg_info' must be an op info"):
        ops.Custom(np.negative, out_shape=same, out_dtype=same, reg_info={"x": 1})
    with pytest.raises(ValueError, match="names the target 'CPU' twice"):
        ops.Custom(np.negative, out_shape=same, out_dtype=same, reg_info=[row, row])
    two = ops.CustomRegOp().input(0, "x").output(0, "y").output(1, "z")
    two.dtype_format(*[ops.DataType.F32_Default] * 3)
    with pytest.raises(ValueError, match="must give 1 outputs as 'out_dtype' does, but a row gives 2"):
        ops.Custom(np.negative, out_shape=(2,), out_dtype=mstype.float32, reg_info=two)
    gpu = ops.CustomRegOp().input(0, "x").output(0, "y").target("GPU")
    with pytest.raises(ValueError, match=r"target of a 'reg_info' of func_type 'aot' must be one of \('CPU',\)"):
        ops.Custom("lib.so:f", out_shape=same, out_dtype=same, func_type="aot", reg_info=gpu)


def test_a_wildcard_reg_info_takes_the_dtypes_of_each_call():
    info = ops.CustomRegOp().input(0, "x").output(0, "y").dtype_format(ops.DataType.None_None, ops.DataType.None_None)
    op = ops.Custom(np.negative, out_shape=same, out_dtype=same, reg_info=info)
    assert op(Tensor(np.array([1], np.int8))).asnumpy().tolist() == [-1]


@pytest.mark.parametrize("func_type", ["hybrid", "akg", "julia"])
def test_mindspore_func_types_opforge_does_not_run(func_type):
    with pytest.raises(NotImplementedError, match=rf"func_type '{func_type}' is not supported; supported: pyfunc, aot"):
        ops.Custom(np.sin, out_shape=same, out_dtype=same, func_type=func_type)


def test_bad_arguments():
    with pytest.raises(ValueError, match=r"the 'func_type' must be one of \('pyfunc', 'aot'\), but got 'python'"):
        ops.Custom(np.sin, out_shape=same, out_dtype=same, func_type="python")
    with pytest.raises(TypeError, match="the 'func' of func_type 'pyfunc' must be a Python function, but got str"):
        ops.Custom("lib.so:f", out_shape=same, out_dtype=same)
    with pytest.raises(ValueError, match="the 'out_shape' must be given"):
        ops.Custom(np.sin, out_dtype=same)
    with pytest.raises(ValueError, match="the 'out_dtype' must be given"):
        ops.Custom(np.sin, out_shape=same)
    with pytest.raises(TypeError, match="the 'out_shape' must be a shape"):
        ops.Custom(np.sin, out_shape=(2, -1), out_dtype=same)
    with pytest.raises(TypeError, match="the 'out_dtype' must be an opforge dtype"):
        ops.Custom(np.sin, out_shape=same, out_dtype=np.float32)
    x = Tensor(np.ones(2, np.float32))
    with pytest.raises(TypeError, match=r"the 'out_dtype' must give an opforge dtype .* but gave 'float32'"):
        ops.Custom(np.sin, out_shape=same, out_dtype=lambda t: "float32")(x)
    with pytest.raises(TypeError, match=r"the 'out_shape' must give 2 shapes, one per output dtype, but gave \[2\]"):
        ops.Custom(np.sin, out_shape=same, out_dtype=lambda t: (t, t))(x)
    assert set(FUNC_TYPES) == {"pyfunc", "aot"}


def test_the_pyfunc_overhead_is_measured():
    """A Custom call against calling its function directly (printed: times are never asserted)."""
    a = np.ones(5, np.float32)
    x = Tensor(a)
    op = ops.Custom(np.negative, out_shape=same, out_dtype=same)
    custom = bench.measure(lambda: op(x), min_time=0.02, repeats=5)
    direct = bench.measure(lambda: np.negative(a), min_time=0.02, repeats=5)
    print(f"\nCustom pyfunc: {custom * 1e6:.2f} us per call, the function alone {direct * 1e6:.2f} us: "
          f"{(custom - direct) * 1e6:.2f} us overhead")  # fmt: skip
    assert custom > 0 and direct > 0


def test_doctor_leaves_custom_kernels_alone():
    """They are declared by the instance (its reg_info or its calls), not by op info of a named operator."""
    op = ops.Custom(np.negative, out_shape=same, out_dtype=same)
    op(Tensor(np.ones(2, np.float32)))
    assert registry.kernels_for(op.name, "CPU")
    assert [p for p in cli.doctor_problems() if op.name in p] == []  # (other tests may leave kernels of their own)
