"""What a newcomer trips on (issue 23): opcheck with what users hold, errors that name the layer the
user called, importing from the checkout, a CLI that tells the truth, MindSpore's first names."""

from __future__ import annotations

import ast
import os
import pathlib
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest

import opforge
from opforge import ops
from opforge.testing import Sample, opcheck
from opforge.tools import bench, cli, cuda_check


def _elu(x):
    return np.where(x > 0, x, np.expm1(np.minimum(x, 0.0)))


# ---------------------------------------------------------------------------------------------
# 1. opcheck accepts Tensors, arrays and Python numbers


@pytest.mark.parametrize(
    "make",
    [
        lambda a: (opforge.Tensor(a),),
        lambda a: Sample((opforge.Tensor(a),)),
        lambda a: opforge.Tensor(a),
        lambda a: a,
        lambda a: (a,),
    ],
    ids=["tuple-of-tensor", "sample-of-tensor", "bare-tensor", "bare-array", "tuple-of-array"],
)
def test_opcheck_accepts_tensor_and_array_samples(rng, make):
    a = rng.uniform(0.2, 2.0, (2, 3)) * rng.choice([-1.0, 1.0], (2, 3))
    report = opcheck(ops.Elu(), [make(a)], _elu, grad_samples=[make(a)])
    counts = report.counts()
    assert counts["forward"][0] == counts["forward"][1] > 0
    assert counts["gradient"][0] == counts["gradient"][1] > 0


def test_opcheck_accepts_python_numbers():
    report = opcheck(ops.Elu(), [-0.5, 2.0], _elu)
    assert report.counts()["forward"][1] >= 2
    # in a tuple a number is a weak scalar of a dtype group (Add's y)
    report = opcheck(ops.Add(), [(opforge.Tensor(np.ones((2,), np.float32)), 2)], lambda x, y: x + y)
    assert report.passed


@pytest.mark.parametrize("bad", [{"x": 1}, "abc", None])
def test_opcheck_names_a_bad_sample(bad):
    with pytest.raises(TypeError, match=r"For 'opcheck', sample 1 must be a Sample, a tuple of arguments"):
        opcheck(ops.Elu(), [(np.ones(2),), bad], _elu)


# ---------------------------------------------------------------------------------------------
# 3. Importing the checkout without its built extension


def test_import_from_a_source_tree_without_the_extension_says_what_to_do(tmp_path):
    src = os.path.dirname(opforge.__file__)
    shutil.copytree(src, tmp_path / "opforge", ignore=shutil.ignore_patterns("_C*", "__pycache__", "*.so"))
    numpy_dir = os.path.dirname(os.path.dirname(np.__file__))
    # -S: no site, so no editable-install finder; the copy comes first on the path, as the cwd would
    code = f"import sys; sys.path[:0] = [{str(tmp_path)!r}, {numpy_dir!r}]; import opforge"
    r = subprocess.run([sys.executable, "-S", "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode != 0
    assert "circular import" not in r.stderr
    assert "opforge._C" in r.stderr and "pip install -e ." in r.stderr and "another directory" in r.stderr


# ---------------------------------------------------------------------------------------------
# 4. The CLI tells the truth


def _cli(capsys, *argv):
    code = cli.main(list(argv))
    out = capsys.readouterr()
    return code, out.out + out.err


def test_ops_matches_names_ignoring_case(capsys):
    code, out = _cli(capsys, "ops", "--op", "relu")
    assert code == 0 and "ReLU" in out and "2 operator/backend pairs" in out


@pytest.mark.parametrize("name, hint", [("NoSuchOp", "opforge ops` lists them all"), ("Rel", "did you mean ReLU")])
def test_ops_without_a_match_exits_1_and_suggests(capsys, name, hint):
    code, out = _cli(capsys, "ops", "--op", name)
    assert code == 1 and f"no operator named '{name}'" in out and hint in out


def test_ops_imports_a_users_module(capsys, tmp_path, monkeypatch, isolated_registries):
    module = tmp_path / "twice_ops.py"
    module.write_text(
        "import numpy as np\n"
        "from opforge import dtype as mstype\n"
        "from opforge.kernels import KernelAttr, register_kernel\n"
        "from opforge.primitives import PrimitiveWithInfer, prim_attr_register\n"
        "class TwiceCli(PrimitiveWithInfer):\n"
        "    @prim_attr_register\n"
        "    def __init__(self):\n"
        "        self.init_prim_io_names(inputs=['x'], outputs=['y'])\n"
        "F32 = KernelAttr().add_input_attr(mstype.float32).add_output_attr(mstype.float32)\n"
        "@register_kernel('TwiceCli', 'CPU', F32)\n"
        "def twice(x):\n"
        "    return 2 * x\n"
    )
    monkeypatch.chdir(tmp_path)
    code, out = _cli(capsys, "ops", "--import", "twice_ops.py", "--op", "twicecli")
    assert code == 0 and "TwiceCli" in out and "1 operator/backend pairs" in out


def test_doctor_cuda_without_nvrtc_is_a_note(capsys, monkeypatch):
    monkeypatch.setattr(cuda_check, "find_nvrtc", lambda: None)
    monkeypatch.setattr(cli, "doctor_problems", lambda: [])  # the registries are another test's subject
    code, out = _cli(capsys, "doctor", "--cuda")
    assert code == 0 and "note:" in out and "nvidia-cuda-nvrtc" in out and "error" not in out


def test_bench_help_describes_every_suite(capsys):
    with pytest.raises(SystemExit):
        cli.main(["bench", "--help"])
    out = capsys.readouterr().out
    for suite in (*bench.SUITES, "comm"):
        assert f"- ``{suite}``" in out, suite
    assert "rough" in out


def test_a_send_never_received_is_taken_back_before_mpi_ends(tmp_path):
    pytest.importorskip("mpi4py")
    script = tmp_path / "send_only.py"
    script.write_text(
        "import numpy as np\n"
        "import opforge\n"
        "from opforge import ops\n"
        "from opforge.communication import init\n"
        "init()\n"
        "ops.Send(1, 0)(opforge.Tensor(np.ones(2, np.float32)))  # to this rank itself, never received\n"
        "ops.Send(2, 0)(opforge.Tensor(np.ones(3, np.float32)))\n"
        "print('sent')\n"
    )
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and "sent" in r.stdout, r.stderr
    assert "pending" not in r.stderr, r.stderr


# ---------------------------------------------------------------------------------------------
# 9. A suite that fits a developer's loop: `python -m pytest` runs on every core


def test_pytest_runs_in_parallel_with_the_serial_jobs_grouped():
    tomllib = pytest.importorskip("tomllib")
    root = pathlib.Path(__file__).parent.parent
    config = tomllib.loads((root / "pyproject.toml").read_text())
    addopts = config["tool"]["pytest"]["ini_options"]["addopts"].split()
    assert "-n" in addopts and "--dist" in addopts and addopts[addopts.index("--dist") + 1] == "loadgroup"
    assert any(r.startswith("pytest-xdist") for r in config["project"]["optional-dependencies"]["test"])
    import test_bench
    import test_communication
    import test_data_parallel

    def group(marks):
        return [m.args for m in marks if m.name == "xdist_group"]

    assert group(test_data_parallel.test_data_parallel_equals_one_process_on_the_whole_batches.pytestmark) == [("mpi",)]
    assert group([test_communication.pytestmark]) == [("mpi",)] and group([test_bench.pytestmark]) == [("bench",)]


# ---------------------------------------------------------------------------------------------
# 7. Layering: nothing imports what sits above it


def _imported_modules(path: pathlib.Path) -> set:
    """Every module a source file imports, at the top or inside a function."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{a.name}" for a in node.names)
    return names


@pytest.mark.parametrize(
    "layer, above",
    [
        ("device", ("opforge.communication", "opforge.primitives", "opforge.ops", "opforge.kernels")),
        ("kernels/gpu", ("opforge.primitives", "opforge.ops")),
        ("primitives", ("opforge.ops", "opforge.nn", "opforge.bprop")),
    ],
)
def test_no_layer_imports_one_above_it(layer, above):
    root = pathlib.Path(opforge.__file__).parent
    bad = [
        f"{path.relative_to(root)} imports {name}"
        for path in sorted((root / layer).rglob("*.py"))
        for name in sorted(_imported_modules(path))
        if name.startswith(above)
    ]
    assert not bad, "\n".join(bad)


# ---------------------------------------------------------------------------------------------
# 5. MindSpore names users reach for first


def test_set_seed_and_transpose_property():
    opforge.set_seed(3)
    x = opforge.Tensor(np.arange(24, dtype=np.float32).reshape(2, 3, 4))
    np.testing.assert_array_equal(x.T.asnumpy(), x.asnumpy().T)


def test_boolean_mask_getitem_and_its_gradient():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    x = opforge.Tensor(a)
    np.testing.assert_array_equal(x[x > 2].asnumpy(), a[a > 2])
    rows = np.array([False, True])
    np.testing.assert_array_equal(x[opforge.Tensor(rows)].asnumpy(), a[rows])
    g = opforge.grad(lambda t: (t[t > 2] * 3).sum())(x)
    np.testing.assert_array_equal(g.asnumpy(), np.where(a > 2, 3.0, 0.0))
    with pytest.raises(IndexError, match="boolean mask must have the shape"):
        x[opforge.Tensor(np.array([True, False, True]))]


@pytest.mark.parametrize(
    "key",
    [(0, 1), (slice(None), 1), (Ellipsis, slice(1, None)), 1, "mask"],
    ids=["int", "slice", "ellipsis", "row", "mask"],
)
def test_setitem_values_match_numpy(key):
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    x = opforge.Tensor(a)
    if key == "mask":
        key_t, key = x > 2, a > 2
    else:
        key_t = key
    expected = a.copy()
    expected[key] = -7
    x[key_t] = -7.0
    np.testing.assert_array_equal(x.asnumpy(), expected)
    assert x.dtype is opforge.float32


def test_setitem_is_differentiable_in_the_tensor_and_the_value():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)

    def f(x, v):
        y = x * 2
        before = y.sum()  # read before the assignment: sees the old value
        y[:, 1] = v * 3
        return (y * y).sum() + before

    g = opforge.grad(f, grad_position=(0, 1))(opforge.Tensor(a), opforge.Tensor(np.array([1.0, 2.0], np.float32)))
    expected_x = np.where(np.arange(3) == 1, 0.0, 8 * a) + 2
    np.testing.assert_allclose(g[0].asnumpy(), expected_x)
    np.testing.assert_allclose(g[1].asnumpy(), [18.0, 36.0])


def test_setitem_into_a_differentiated_input_raises():
    def f(x):
        x[0] = 1.0
        return x.sum()

    with pytest.raises(RuntimeError, match="Tensor.__setitem__"):
        opforge.grad(f)(opforge.Tensor(np.ones(3, np.float32)))


def test_setitem_on_a_parameter_bumps_its_version():
    p = opforge.Parameter(opforge.Tensor(np.zeros(3, np.float32)), name="p")
    version = p._version
    p[1] = 2.0
    assert p._version == version + 1 and p.asnumpy().tolist() == [0.0, 2.0, 0.0]


def test_zeros_ones_depend_print(capsys):
    from opforge.ops import operations as P

    assert ops.Zeros()((2, 3), opforge.float32).asnumpy().tolist() == [[0.0] * 3] * 2
    assert P.Ones()(2, opforge.int32).dtype is opforge.int32
    assert ops.zeros(3).dtype is opforge.float32 and ops.ones((2, 2)).asnumpy().sum() == 4
    assert ops.Depend()(5, 6) == 5
    ops.Print()("value:", opforge.Tensor(np.array([1.5], np.float32)))
    out = capsys.readouterr().out
    assert "value:" in out and "1.5" in out


def test_cell_to_float_casts_the_inputs_of_every_cell():
    seen = []

    class Probe(opforge.nn.Cell):
        def construct(self, x):
            seen.append(x.dtype)
            return x

    outer = opforge.nn.SequentialCell(Probe(), Probe())
    assert outer.to_float(opforge.float16) is outer
    outer(opforge.Tensor(np.ones(2, np.float32)))
    assert seen == [opforge.float16, opforge.float16]
    with pytest.raises(ValueError, match="For 'to_float', the 'dst_type'"):
        outer.to_float(opforge.int32)


# ---------------------------------------------------------------------------------------------
# 2. Errors name what the user called; one dtype rule


def test_dense_promotes_float64_inputs_as_matmul_does_and_keeps_the_weights_dtype():
    dense = opforge.nn.Dense(3, 2)
    x = opforge.Tensor(np.ones((2, 3)))  # float64, the weights float32
    assert dense(x).dtype is opforge.float64
    dx, (dw, db) = opforge.grad(lambda x: dense(x).sum(), grad_position=0, weights=dense.trainable_params())(x)
    assert dx.dtype is opforge.float64 and dw.dtype is opforge.float32 and db.dtype is opforge.float32
    assert ops.BiasAdd()(x, opforge.Tensor(np.ones(3, np.float32))).dtype is opforge.float64


def test_a_cells_error_names_the_cell_and_its_inputs_first():
    with pytest.raises(ValueError, match=r"^For 'Dense', the input's last dimension"):  # its own check: unchanged
        opforge.nn.SequentialCell(opforge.nn.Dense(3, 2))(opforge.Tensor(np.ones((2, 4), np.float32)))

    class Net(opforge.nn.Cell):
        def construct(self, x, y):
            return ops.MatMul()(x, y)

    with pytest.raises(
        ValueError, match=r"^For 'Net' \(a Cell\) called with x=Tensor\(Float32, \[2, 3\]\), y=.*For 'MatMul'"
    ):
        Net()(opforge.Tensor(np.ones((2, 3), np.float32)), opforge.Tensor(np.ones((2, 3), np.float32)))


def test_sparse_softmax_cross_entropy_names_its_labels():
    loss = opforge.nn.SoftmaxCrossEntropyWithLogits(sparse=True)
    with pytest.raises(TypeError, match=r"^For 'SoftmaxCrossEntropyWithLogits' \(sparse=True\), the 'labels' must be"):
        loss(opforge.Tensor(np.ones((2, 3), np.float32)), opforge.Tensor(np.ones(2, np.float32)))


def _twice_class():
    from opforge.primitives import PrimitiveWithInfer, prim_attr_register

    class TwiceNew(PrimitiveWithInfer):
        @prim_attr_register
        def __init__(self):
            self.init_prim_io_names(inputs=["x"], outputs=["y"])

        def infer_shape(self, s):
            return s

        def infer_dtype(self, d):
            return d

    return TwiceNew


def test_a_kernel_under_a_name_no_operator_has_warns_and_the_miss_says_so(isolated_registries):
    from opforge import dtype as mstype
    from opforge.kernels import KernelAttr, UnknownOperatorWarning, register_kernel

    twice = _twice_class()
    attr = KernelAttr().add_input_attr(mstype.float32).add_output_attr(mstype.float32)
    with pytest.warns(UnknownOperatorWarning, match="did you mean 'TwiceNew'"):
        register_kernel("twicenew", "CPU", attr)(lambda x: 2 * x)
    with pytest.raises(opforge.KernelNotFoundError, match="Kernels are registered under 'twicenew'"):
        twice()(opforge.Tensor(np.ones(2, np.float32)))


def test_a_missing_bprop_suggests_the_users_class(isolated_registries):
    from opforge import dtype as mstype
    from opforge.kernels import KernelAttr, register_kernel

    twice = _twice_class()
    attr = KernelAttr().add_input_attr(mstype.float32).add_output_attr(mstype.float32)
    register_kernel("TwiceNew", "CPU", attr)(lambda x: 2 * x)
    with pytest.raises(TypeError, match=r"@bprop_getters.register\(TwiceNew\)"):
        opforge.grad(lambda x: twice()(x).sum())(opforge.Tensor(np.ones(2, np.float32)))


def test_huge_numbers_name_the_operator():
    with pytest.raises(OverflowError, match=r"^For 'Equal', the 'x'"):
        ops.Equal()(2**70, opforge.Tensor(np.ones(2, np.int32)))
    one = opforge.Tensor(np.float32(1))
    with pytest.raises(ValueError, match=r"^For 'OneHot'"):
        ops.OneHot()(opforge.Tensor(np.array([0, 1], np.int32)), 2**32 + 1, one, one)


# ---------------------------------------------------------------------------------------------
# 8. Docs that match the code


def test_the_readme_speed_sentence_names_the_bench_run_and_its_cases():
    readme = (pathlib.Path(__file__).parent.parent / "README.md").read_text()
    sentence = readme[readme.index("A cached call runs entirely in C") :].split("Large outputs")[0]
    assert "opforge bench --suite ops" in sentence
    for case in re.findall(r"`(ReLU|x \+ 1)`", sentence):
        assert case in bench.SUITE_CASES["ops"], case
    assert re.search(r"\d{4}-\d{2}-\d{2}", sentence), "the day it was measured"


def test_mindspore_md_says_nothing_is_missing_that_exists():
    text = (pathlib.Path(__file__).parent.parent / "docs" / "mindspore.md").read_text()
    assert "not yet" not in text


@pytest.mark.xdist_group("bench")
def test_bench_quick_warns_that_its_figures_are_rough(capsys):
    assert cli.main(["bench", "--suite", "ops", "--op", "ReLU", "--quick", "--no-torch"]) == 0
    assert "rough" in capsys.readouterr().err
