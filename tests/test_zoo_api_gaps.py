"""The MindSpore APIs the model zoo's official/ programs used and opforge lacked (docs/zoo_api_survey.md): the
composite operators (DepthToSpace, SpaceToDepth, ReverseSequence, repeat_elements, BinaryCrossEntropy), the
functional names, RowTensor and the module paths, nn.SyncBatchNorm / Conv2dBnAct / DenseBnAct, the
mindspore.numpy functions, and the dataset's zip, transforms and augmentations; each against NumPy (or an
independent computation: Pillow, a loop over the definition), the differentiable ones' gradients (float64)
against central differences."""

import importlib
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import opforge
import opforge.numpy as mnp
from opforge import Tensor, nn, ops
from opforge import dtype as mstype


@pytest.fixture(autouse=True)
def _no_dataset_seed():
    """Each test starts and ends without a dataset seed (as the dataset tests do)."""
    opforge.dataset.config._state["seed"] = None
    yield
    opforge.dataset.config._state["seed"] = None


def _rng(seed=0):
    return np.random.default_rng(seed)


def _numeric_grad(f, x, eps=1e-6):
    """d sum(f(x) * w) / dx by central differences (float64), w fixed random weights."""
    w = _rng(7).standard_normal(f(Tensor(x)).shape)
    grad = np.zeros_like(x)
    for idx in np.ndindex(x.shape):
        plus, minus = x.copy(), x.copy()
        plus[idx] += eps
        minus[idx] -= eps
        grad[idx] = ((f(Tensor(plus)).asnumpy() * w).sum() - (f(Tensor(minus)).asnumpy() * w).sum()) / (2 * eps)
    return grad, w


def _check_grad(f, x):
    x = np.asarray(x, np.float64)
    want, w = _numeric_grad(f, x)
    got = opforge.grad(lambda v: (f(v) * Tensor(w)).sum())(Tensor(x))
    np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-6, atol=1e-7)


# -- operators -----------------------------------------------------------------------------------------------


def _depth_to_space_loops(x, b):
    n, c, h, w = x.shape
    c_out = c // (b * b)
    out = np.empty((n, c_out, h * b, w * b), x.dtype)
    for i in range(h * b):
        for j in range(w * b):
            for k in range(c_out):
                out[:, k, i, j] = x[:, (b * (i % b) + j % b) * c_out + k, i // b, j // b]
    return out


@pytest.mark.parametrize("b", [2, 3])
def test_depth_to_space_and_space_to_depth_follow_the_kernel_index_map(b):
    x = _rng().standard_normal((2, 2 * b * b, 3, 2)).astype(np.float32)
    out = ops.DepthToSpace(b)(Tensor(x))
    np.testing.assert_array_equal(out.asnumpy(), _depth_to_space_loops(x, b))
    np.testing.assert_array_equal(ops.SpaceToDepth(b)(out).asnumpy(), x)
    ints = np.arange(2 * 4 * 2 * 2, dtype=np.int32).reshape(2, 4, 2, 2)
    np.testing.assert_array_equal(
        ops.operations.DepthToSpace(2)(Tensor(ints)).asnumpy(), _depth_to_space_loops(ints, 2)
    )
    _check_grad(ops.DepthToSpace(b), x.astype(np.float64))
    with pytest.raises(ValueError, match="block_size"):
        ops.DepthToSpace(1)
    with pytest.raises(ValueError, match="divisible"):
        ops.DepthToSpace(2)(Tensor(np.zeros((1, 3, 2, 2), np.float32)))


def _reverse_sequence_loops(x, lengths, seq_dim, batch_dim):
    out = x.copy()
    for i, n in enumerate(lengths):
        src = np.take(x, i, axis=batch_dim)
        dst = np.moveaxis(src, seq_dim - (seq_dim > batch_dim), 0).copy()
        dst[:n] = dst[:n][::-1]
        index = [slice(None)] * x.ndim
        index[batch_dim] = i
        out[tuple(index)] = np.moveaxis(dst, 0, seq_dim - (seq_dim > batch_dim))
    return out


@pytest.mark.parametrize("seq_dim, batch_dim, shape", [(1, 0, (3, 5, 2)), (0, 2, (4, 2, 3)), (2, 1, (2, 3, 4))])
@pytest.mark.parametrize("len_dtype", [np.int32, np.int64])
def test_reverse_sequence_reverses_each_prefix(seq_dim, batch_dim, shape, len_dtype):
    x = _rng().standard_normal(shape)
    lengths = _rng(1).integers(0, shape[seq_dim] + 1, shape[batch_dim]).astype(len_dtype)
    lengths[0] = shape[seq_dim]
    op = ops.ReverseSequence(seq_dim, batch_dim)
    got = op(Tensor(x), Tensor(lengths))
    np.testing.assert_array_equal(got.asnumpy(), _reverse_sequence_loops(x, lengths, seq_dim, batch_dim))
    _check_grad(lambda v: op(v, Tensor(lengths)), x)


def test_reverse_sequence_checks_its_arguments():
    with pytest.raises(ValueError, match="seq_lengths"):
        ops.ReverseSequence(1)(Tensor(np.zeros((2, 3), np.float32)), Tensor(np.array([1, 2, 3], np.int32)))
    with pytest.raises(TypeError, match="int32 or int64"):
        ops.ReverseSequence(1)(Tensor(np.zeros((2, 3), np.float32)), Tensor(np.array([1.0, 2.0], np.float32)))


def test_repeat_elements_is_np_repeat_and_sums_the_copies_back():
    x = _rng().standard_normal((2, 3))
    for axis in (0, 1, -1):
        np.testing.assert_array_equal(ops.repeat_elements(Tensor(x), 3, axis).asnumpy(), np.repeat(x, 3, axis))
    assert ops.composite.repeat_elements is ops.repeat_elements
    _check_grad(lambda v: ops.repeat_elements(v, 2, 1), x)
    with pytest.raises(ValueError, match="rep"):
        ops.repeat_elements(Tensor(x), 0)


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_binary_cross_entropy_operator_class(reduction):
    p = _rng().uniform(0.05, 0.95, (3, 4)).astype(np.float32)
    y = _rng(1).integers(0, 2, (3, 4)).astype(np.float32)
    w = _rng(2).uniform(0.5, 2.0, (3, 4)).astype(np.float32)
    loss = -w * (y * np.log(p) + (1 - y) * np.log(1 - p))
    want = {"none": loss, "mean": loss.mean(), "sum": loss.sum()}[reduction]
    got = ops.operations.BinaryCrossEntropy(reduction)(Tensor(p), Tensor(y), Tensor(w))
    np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-5)
    plain = loss / w
    want = {"none": plain, "mean": plain.mean(), "sum": plain.sum()}[reduction]
    np.testing.assert_allclose(ops.BinaryCrossEntropy(reduction)(Tensor(p), Tensor(y)).asnumpy(), want, rtol=1e-5)


def test_gather_v2_is_gather_and_shards():
    x = Tensor(np.arange(12, dtype=np.float32).reshape(3, 4))
    op = ops.operations.GatherV2()
    assert isinstance(op, ops.Gather)
    np.testing.assert_array_equal(op(x, Tensor(np.array([2, 0])), 0).asnumpy(), x.asnumpy()[[2, 0]])
    assert op.shard(((1, 1), (1,))) is op


def test_functional_names_and_composite_like_ops():
    from opforge.ops import composite as C
    from opforge.ops import functional as F

    x, y = Tensor(np.array([1.5, -2.0], np.float32)), Tensor(np.array([2.0, 4.0], np.float32))
    np.testing.assert_array_equal(F.tensor_mul(x, y).asnumpy(), [3.0, -8.0])
    np.testing.assert_array_equal(F.tensor_add(x, y).asnumpy(), [3.5, 2.0])
    np.testing.assert_array_equal(F.tensor_floordiv(x, y).asnumpy(), np.floor_divide([1.5, -2.0], [2.0, 4.0]))
    np.testing.assert_array_equal(ops.absolute(x).asnumpy(), [1.5, 2.0])
    s = F.scalar_to_tensor(3, mstype.int32)
    assert s.dtype == mstype.int32 and s.shape == () and int(s.asnumpy()) == 3
    assert F.scalar_to_tensor(1.0).dtype == mstype.float32
    with pytest.raises(TypeError):
        F.scalar_to_tensor("1")
    np.testing.assert_array_equal(C.ones_like(x).asnumpy(), [1.0, 1.0])
    np.testing.assert_array_equal(C.zeros_like(x).asnumpy(), [0.0, 0.0])
    ints = Tensor(np.array([1, 2], np.int32))
    cast = F.mixed_precision_cast(mstype.float16, (x, [ints, {"k": y}], 3))
    assert cast[0].dtype == mstype.float16 and cast[1][0].dtype == mstype.int32
    assert cast[1][1]["k"].dtype == mstype.float16 and cast[2] == 3
    np.testing.assert_array_equal(cast[0].asnumpy(), np.float16([1.5, -2.0]))


def test_ops_function_module_holds_the_functional_api():
    from opforge.ops import function as F

    np.testing.assert_array_equal(F.range(0, 5, 2).asnumpy(), [0, 2, 4])
    assert F.tril is ops.tril and F.cast is ops.cast
    assert not any(isinstance(getattr(F, n), type) for n in F.__all__)


# -- RowTensor, module paths ---------------------------------------------------------------------------------


def test_row_tensor_parts_and_the_multitype_overload():
    from opforge.common import RowTensor as CommonRowTensor

    indices, values = Tensor(np.array([0, 2])), Tensor(np.array([[1.0, 2.0], [3.0, 4.0]], np.float32))
    row = opforge.RowTensor(indices, values, (3, 2))
    assert CommonRowTensor is opforge.RowTensor
    assert row.dense_shape == (3, 2) and row.indices is indices and row.values is values
    copy = opforge.RowTensor(row_tensor=row)
    assert copy.dense_shape == (3, 2) and copy.values is values
    with pytest.raises(ValueError, match="shape"):
        opforge.RowTensor(indices, values, (3, 3))
    with pytest.raises(ValueError, match="one row per index"):
        opforge.RowTensor(Tensor(np.array([0])), values, (3, 2))

    # the zoo's gradient scaling: a "Tensor", "RowTensor" overload beside the dense one
    grad_scale = ops.MultitypeFuncGraph("grad_scale")

    @grad_scale.register("Tensor", "Tensor")
    def _dense(scale, grad):
        return grad / scale

    @grad_scale.register("Tensor", "RowTensor")
    def _rows(scale, grad):
        return opforge.RowTensor(grad.indices, grad.values / scale, grad.dense_shape)

    scale = Tensor(np.float32(2.0))
    scaled = ops.HyperMap()(ops.partial(grad_scale, scale), (values, row))
    np.testing.assert_array_equal(scaled[0].asnumpy(), values.asnumpy() / 2)
    assert isinstance(scaled[1], opforge.RowTensor)
    np.testing.assert_array_equal(scaled[1].values.asnumpy(), values.asnumpy() / 2)


@pytest.mark.parametrize(
    "path, names",
    [
        ("opforge.train.model", ["ParallelMode"]),
        ("opforge.common.seed", ["set_seed", "get_seed"]),
        ("opforge.profiler.profiling", ["Profiler"]),
        ("opforge.nn.wrap", ["FixedLossScaleUpdateCell", "DynamicLossScaleUpdateCell"]),
        ("opforge.nn.wrap.cell_wrapper", ["MicroBatchInterleaved"]),
        ("opforge.dataset.engine", ["ImageFolderDataset", "DistributedSampler", "PaddedDataset", "MindDataset"]),
        ("opforge.dataset.vision.utils", ["Inter", "Border"]),
        ("opforge", ["RowTensor", "build_train_network"]),
        ("opforge.ops.operations.comm_ops", ["ReduceOp", "AllReduce"]),
        ("opforge.ops.operations._grad_ops", ["ReluGrad", "MaxPoolGrad", "Conv2DBackpropFilter", "ROIAlignGrad"]),
        ("opforge.nn.optim.optimizer", ["opt_init_args_register"]),
    ],
)
def test_the_module_paths_the_zoo_imports(path, names):
    module = importlib.import_module(path)
    for name in names:
        assert getattr(module, name) is not None, (path, name)


def test_opt_init_args_register_records_the_arguments():
    from opforge.nn.optim.optimizer import opt_init_args_register

    class Scaled(nn.Optimizer):
        @opt_init_args_register
        def __init__(self, params, learning_rate=0.1, beta=0.5, *, clip=False):
            super().__init__(learning_rate, params)
            self.beta = beta

    params = nn.Dense(2, 3).trainable_params()
    opt = Scaled(params, beta=0.7)
    assert opt.init_args == {"learning_rate": 0.1, "beta": 0.7, "clip": False}
    assert opt.init_params["params"] is params and opt.beta == 0.7
    assert Scaled.__init__.__name__ == "__init__"


def test_common_seed_sets_the_global_seed():
    from opforge.common import seed

    seed.set_seed(123)
    assert opforge.get_seed() == 123 and seed.get_seed() == 123


# -- nn ------------------------------------------------------------------------------------------------------


def _batch_norm(x, axes, gamma, beta, eps):
    mean, var = x.mean(axes, keepdims=True), x.var(axes, keepdims=True)
    shape = [1] * x.ndim
    shape[1] = -1
    return (x - mean) / np.sqrt(var + eps) * gamma.reshape(shape) + beta.reshape(shape)


@pytest.mark.parametrize("shape", [(4, 3, 2, 2), (6, 3)])
def test_sync_batch_norm_on_one_process_is_batch_norm(shape):
    x = _rng().standard_normal(shape).astype(np.float32) * 3 + 1
    gamma = np.array([1.0, 2.0, -1.0], np.float32)
    bn = nn.SyncBatchNorm(3, momentum=0.7, gamma_init=Tensor(gamma))
    bn.set_train()
    axes = (0,) if len(shape) == 2 else (0, 2, 3)
    np.testing.assert_allclose(bn(Tensor(x)).asnumpy(), _batch_norm(x, axes, gamma, np.zeros(3), 1e-5), atol=1e-5)
    n = x.size // 3
    np.testing.assert_allclose(bn.moving_mean.asnumpy(), 0.3 * x.mean(axes), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(bn.moving_variance.asnumpy(), 0.7 + 0.3 * x.var(axes) * n / (n - 1), rtol=1e-5)
    bn.set_train(False)
    mm, mv = bn.moving_mean.asnumpy(), bn.moving_variance.asnumpy()
    s = [1, -1] + [1] * (len(shape) - 2)
    want = (x - mm.reshape(s)) / np.sqrt(mv.reshape(s) + 1e-5) * gamma.reshape(s)
    np.testing.assert_allclose(bn(Tensor(x)).asnumpy(), want, atol=1e-5)
    with pytest.raises(ValueError, match="SyncBatchNorm"):
        bn(Tensor(np.zeros((2, 3, 4), np.float32)))


@pytest.mark.xdist_group("mpi")  # one mpiexec job at a time (tests/test_communication.py's group)
@pytest.mark.skipif(shutil.which("mpiexec") is None and not (Path(sys.executable).parent / "mpiexec").exists(),
                    reason="needs mpiexec")  # fmt: skip
def test_sync_batch_norm_normalises_over_the_ranks():
    """tests/mpi_scripts/sync_batch_norm.py under mpiexec -n 2: the whole batch's statistics and gradients."""
    pytest.importorskip("mpi4py.MPI")
    mpiexec = shutil.which("mpiexec") or str(Path(sys.executable).parent / "mpiexec")
    script = Path(__file__).parent / "mpi_scripts" / "sync_batch_norm.py"
    env = {**__import__("os").environ, "OMP_NUM_THREADS": "1"}
    proc = subprocess.run([mpiexec, "-n", "2", sys.executable, str(script)], env=env, capture_output=True, text=True,
                          timeout=120)  # fmt: skip
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert "SYNCBN-OK rank 0" in out and "SYNCBN-OK rank 1" in out, out


def test_dense_bn_act_against_numpy():
    x = _rng().standard_normal((5, 4)).astype(np.float32)
    cell = nn.DenseBnAct(4, 3, has_bn=True, activation="leakyrelu", alpha=0.1)
    cell.set_train()
    w, b = cell.dense.weight.asnumpy(), cell.dense.bias.asnumpy()
    h = _batch_norm(x @ w.T + b, (0,), np.ones(3), np.zeros(3), 1e-5)
    np.testing.assert_allclose(cell(Tensor(x)).asnumpy(), np.where(h > 0, h, 0.1 * h), atol=1e-5)
    assert [p.name for p in cell.get_parameters()][:2] == ["dense.weight", "dense.bias"]
    plain = nn.DenseBnAct(4, 3)
    np.testing.assert_allclose(plain(Tensor(x)).asnumpy(), x @ plain.dense.weight.asnumpy().T, atol=1e-5)
    with pytest.raises(TypeError, match="activation"):
        nn.DenseBnAct(4, 3, activation=3)


def test_conv2d_bn_act_is_its_layers_in_order():
    x = _rng().standard_normal((2, 3, 6, 6)).astype(np.float32)
    cell = nn.Conv2dBnAct(3, 4, 3, stride=2, has_bn=True, momentum=0.9, activation="relu")
    cell.set_train()
    conv = nn.Conv2d(3, 4, 3, stride=2, pad_mode="same", has_bias=False)
    conv.weight.set_data(cell.conv.weight.data)
    h = conv(Tensor(x)).asnumpy()
    want = np.maximum(_batch_norm(h, (0, 2, 3), np.ones(4), np.zeros(4), 1e-5), 0)
    np.testing.assert_allclose(cell(Tensor(x)).asnumpy(), want, atol=1e-5)
    assert cell.batchnorm.momentum == 0.9
    names = [p.name for p in cell.get_parameters()]
    assert names[:3] == ["conv.weight", "batchnorm.gamma", "batchnorm.beta"]


# -- mindspore.numpy -----------------------------------------------------------------------------------------


def test_numpy_dtype_names_and_constants():
    assert mnp.float32 is mstype.float32 and mnp.int64 is mstype.int64 and mnp.bool_ is mstype.bool_
    assert mnp.pi == np.pi and mnp.inf == np.inf and np.isnan(mnp.nan) and mnp.newaxis is None


@pytest.mark.parametrize("k", [-2, 0, 1])
def test_numpy_diag_both_ways_and_its_gradient(k):
    v = _rng().standard_normal(3)
    np.testing.assert_array_equal(mnp.diag(Tensor(v), k).asnumpy(), np.diag(v, k))
    m = _rng(1).standard_normal((3, 4))
    np.testing.assert_array_equal(mnp.diag(Tensor(m), k).asnumpy(), np.diag(m, k))
    _check_grad(lambda t: mnp.diag(t, k), v)
    _check_grad(lambda t: mnp.diag(t, k), m)


def test_numpy_elementwise_functions():
    x = np.array([-2.5, -0.5, 0.0, 0.5, 1.5, 2.675], np.float32)
    y = np.array([2.0, -3.0, 1.0, 4.0, -1.5, 0.5], np.float32)
    for name, want in [("sign", np.sign(x)), ("cos", np.cos(x)), ("sin", np.sin(x)), ("tan", np.tan(x)),
                       ("tanh", np.tanh(x)), ("floor", np.floor(x)), ("ceil", np.ceil(x))]:  # fmt: skip
        np.testing.assert_allclose(getattr(mnp, name)(Tensor(x)).asnumpy(), want, rtol=1e-6, err_msg=name)
    np.testing.assert_array_equal(mnp.round(Tensor(x)).asnumpy(), np.round(x))
    np.testing.assert_allclose(mnp.around(Tensor(x), 1).asnumpy(), np.around(x, 1), atol=1e-6)
    np.testing.assert_allclose(mnp.reciprocal(Tensor(y)).asnumpy(), 1 / y, rtol=1e-6)
    np.testing.assert_allclose(mnp.remainder(Tensor(x), Tensor(y)).asnumpy(), np.remainder(x, y), atol=1e-6)
    for name in ("greater", "greater_equal", "less", "less_equal", "equal", "not_equal"):
        np.testing.assert_array_equal(getattr(mnp, name)(Tensor(x), Tensor(y)).asnumpy(), getattr(np, name)(x, y))
    np.testing.assert_array_equal(mnp.isinf(Tensor(np.array([1.0, np.inf, -np.inf]))).asnumpy(), [0, 1, 1])
    assert mnp.sign(Tensor(x), dtype=mstype.int32).dtype == mstype.int32


def test_numpy_matrices_and_norms():
    m = _rng().standard_normal((3, 4))
    for k in (-1, 0, 2):
        np.testing.assert_array_equal(mnp.tril(Tensor(m), k).asnumpy(), np.tril(m, k))
        np.testing.assert_array_equal(mnp.triu(Tensor(m), k).asnumpy(), np.triu(m, k))
    np.testing.assert_array_equal(mnp.tril(Tensor(np.arange(3.0))).asnumpy(), np.tril(np.arange(3.0)))
    np.testing.assert_allclose(mnp.outer(Tensor(m[0]), Tensor(m[1])).asnumpy(), np.outer(m[0], m[1]))
    x = _rng(1).standard_normal((2, 3, 4))
    for ord_, axis in [(None, None), (None, 1), (2, -1), (1, 0), (np.inf, 2), (-np.inf, 1), (0, 1), (3, 2),
                       ("fro", (1, 2)), (1, (1, 2)), (-1, (2, 1)), (np.inf, (1, 2)), (-np.inf, (0, 2)),
                       (2, (1, 2)), (-2, (1, 2)), ("nuc", (1, 2))]:  # fmt: skip
        for keepdims in (False, True):
            want = np.linalg.norm(x, ord_, axis, keepdims)
            got = mnp.norm(Tensor(x), ord_, axis, keepdims).asnumpy()
            np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-9, err_msg=f"{ord_} {axis} {keepdims}")
    np.testing.assert_allclose(mnp.norm(Tensor(m), 1).asnumpy(), np.linalg.norm(m, 1), rtol=1e-9)
    _check_grad(lambda t: mnp.norm(t, None, 1), x)


def test_numpy_array_manipulation():
    a = _rng().standard_normal((3, 4))
    np.testing.assert_array_equal(mnp.roll(Tensor(a), 2).asnumpy(), np.roll(a, 2))
    np.testing.assert_array_equal(mnp.roll(Tensor(a), (1, -1), (0, 1)).asnumpy(), np.roll(a, (1, -1), (0, 1)))
    np.testing.assert_array_equal(mnp.roll(Tensor(a), (1, 2), (1, 1)).asnumpy(), np.roll(a, (1, 2), (1, 1)))
    for mode in ("constant", "edge", "reflect", "symmetric", "wrap"):
        want = np.pad(a, ((1, 2), (3, 1)), mode=mode)
        np.testing.assert_array_equal(mnp.pad(Tensor(a), ((1, 2), (3, 1)), mode=mode).asnumpy(), want, err_msg=mode)
    want = np.pad(a, 2, constant_values=((1, 2), (3, 4)))
    np.testing.assert_array_equal(mnp.pad(Tensor(a), 2, constant_values=((1, 2), (3, 4))).asnumpy(), want)
    _check_grad(lambda t: mnp.pad(t, ((1, 0), (2, 2)), mode="reflect"), a)
    with pytest.raises(ValueError, match="mode"):
        mnp.pad(Tensor(a), 1, mode="median")
    c = mnp.copy(Tensor(a))
    np.testing.assert_array_equal(c.asnumpy(), a)
    np.testing.assert_array_equal(mnp.copy([1, 2]).asnumpy(), [1, 2])
    np.testing.assert_array_equal(mnp.ravel(Tensor(a)).asnumpy(), a.ravel())
    np.testing.assert_array_equal(mnp.swapaxes(Tensor(a), 0, 1).asnumpy(), a.T)
    v = np.arange(3.0)
    np.testing.assert_array_equal(mnp.vstack((Tensor(v), Tensor(v + 1))).asnumpy(), np.vstack((v, v + 1)))
    np.testing.assert_array_equal(mnp.hstack((Tensor(v), Tensor(v + 1))).asnumpy(), np.hstack((v, v + 1)))
    np.testing.assert_array_equal(mnp.hstack((Tensor(a), Tensor(a))).asnumpy(), np.hstack((a, a)))
    x, y, z = np.arange(2.0), np.arange(3.0), np.arange(4.0)
    for indexing in ("xy", "ij"):
        for sparse in (False, True):
            got = mnp.meshgrid(Tensor(x), Tensor(y), Tensor(z), sparse=sparse, indexing=indexing)
            for g, w in zip(got, np.meshgrid(x, y, z, sparse=sparse, indexing=indexing)):
                np.testing.assert_array_equal(g.asnumpy(), w)


# -- dataset -------------------------------------------------------------------------------------------------


def test_dataset_zip_reads_the_datasets_side_by_side():
    import opforge.dataset as ds

    a = ds.NumpySlicesDataset({"x": np.arange(5)}, shuffle=False)
    b = ds.NumpySlicesDataset({"y": np.arange(3) * 10, "z": np.arange(3) * 100}, shuffle=False)
    for zipped in (ds.zip((a, b)), a.zip(b)):
        assert zipped.get_col_names() == ["x", "y", "z"] and zipped.get_dataset_size() == 3
        rows = [tuple(int(v) for v in r) for r in zipped.create_tuple_iterator(output_numpy=True)]
        assert rows == [(0, 0, 0), (1, 10, 100), (2, 20, 200)]
    mapped = ds.zip((a.map(lambda v: v + 1, input_columns="x"), b)).batch(2)
    assert [r[0].tolist() for r in mapped.create_tuple_iterator(output_numpy=True)] == [[1, 2], [3]]
    with pytest.raises(ValueError, match="differ"):
        ds.zip((a, a))


def test_inter_area_pilcubic_and_antialias_resize():
    from PIL import Image

    from opforge.dataset import vision
    from opforge.dataset.vision.utils import Inter

    img = _rng().uniform(0, 255, (8, 6, 3)).astype(np.float32)
    area = vision.Resize((4, 3), Inter.AREA)(img)
    np.testing.assert_allclose(area, img.reshape(4, 2, 3, 2, 3).mean((1, 3)), rtol=1e-5)
    u8 = _rng(1).integers(0, 256, (9, 7, 3)).astype(np.uint8)
    want = np.asarray(Image.fromarray(u8).resize((4, 5), Image.BICUBIC))
    np.testing.assert_array_equal(vision.Resize((5, 4), Inter.PILCUBIC)(u8), want)
    want = np.asarray(Image.fromarray(u8).resize((4, 5), Image.LANCZOS))
    np.testing.assert_array_equal(vision.Resize((5, 4), Inter.ANTIALIAS)(u8), want)


def _image(seed=0, shape=(6, 5, 3)):
    return _rng(seed).integers(0, 256, shape).astype(np.uint8)


def _equalize_reference(plane):
    """OpenCV's equalizeHist written out: each level's share of the pixels above the lowest level."""
    counts = [int((plane == v).sum()) for v in range(256)]
    lowest = next(v for v in range(256) if counts[v])
    if counts[lowest] == plane.size:
        return np.full_like(plane, lowest)
    scale = np.float32(255) / np.float32(plane.size - counts[lowest])
    lut, running = np.zeros(256, np.uint8), 0
    for v in range(lowest + 1, 256):
        running += counts[v]
        lut[v] = min(255, int(np.rint(np.float32(running) * scale)))
    return lut[plane]


def test_invert_equalize_and_autocontrast():
    from PIL import Image, ImageOps

    from opforge.dataset import vision

    img = _image()
    np.testing.assert_array_equal(vision.Invert()(img), 255 - img)
    want = np.stack([_equalize_reference(img[..., c]) for c in range(3)], -1)
    np.testing.assert_array_equal(vision.Equalize()(img), want)
    flat = np.full((3, 3), 7, np.uint8)
    np.testing.assert_array_equal(vision.Equalize()(flat), flat)
    narrow = (img // 4 + 60).astype(np.uint8)
    for cutoff, ignore in ((0.0, None), (10.0, None), (0.0, [60])):
        want = np.asarray(ImageOps.autocontrast(Image.fromarray(narrow), cutoff=cutoff, ignore=ignore))
        got = vision.AutoContrast(cutoff, ignore)(narrow)
        assert np.abs(got.astype(int) - want).max() <= 1, (cutoff, ignore)
        assert (got == want).mean() > 0.9, (cutoff, ignore)
    gray = narrow[..., 0]
    lo, hi = int(gray.min()), int(gray.max())
    scale = np.float32(255) / np.float32(hi - lo)  # MindSpore's kernel: float32, truncated toward zero
    lut = [min(255, max(0, int(np.float32(i) * scale - np.float32(lo) * scale))) for i in range(256)]
    np.testing.assert_array_equal(vision.AutoContrast()(gray), np.array(lut, np.uint8)[gray])


def test_solarize_posterize_color_and_sharpness():
    from PIL import Image, ImageEnhance, ImageOps

    from opforge.dataset import vision

    img = _image(1)
    out = vision.RandomSolarize((100, 100))(img)
    np.testing.assert_array_equal(out, np.where(img >= 100, 255 - img, img))
    opforge.dataset.config.set_seed(3)
    out = vision.RandomSolarize((50, 200))(img)
    changed = out != img
    assert changed.any() and np.all(out[changed] == 255 - img[changed])
    for bits in (1, 3, 8):
        want = np.asarray(ImageOps.posterize(Image.fromarray(img), bits))
        np.testing.assert_array_equal(vision.RandomPosterize((bits, bits))(img), want)
    gray = (img[..., 0] * 0.299 + img[..., 1] * 0.587 + img[..., 2] * 0.114)[..., None]
    for t in (0.0, 0.5, 1.6):
        want = np.clip(np.rint(img * t + gray * (1 - t)), 0, 255)
        assert np.abs(vision.RandomColor((t, t))(img).astype(int) - want).max() <= 1, t
    np.testing.assert_array_equal(vision.RandomColor((1.0, 1.0))(img), img)
    for t in (0.3, 1.0, 1.7):
        want = np.asarray(ImageEnhance.Sharpness(Image.fromarray(img)).enhance(t))
        assert np.abs(vision.RandomSharpness((t, t))(img).astype(int) - want).max() <= 1, t


def test_rotation_and_affine_against_exact_moves():
    from opforge.dataset import vision

    square = _image(2, (5, 5, 3))
    np.testing.assert_array_equal(vision.RandomRotation((90, 90))(square), np.rot90(square))
    np.testing.assert_array_equal(vision.RandomRotation((180, 180))(square), square[::-1, ::-1])
    wide = _image(3, (4, 6, 3))
    np.testing.assert_array_equal(vision.RandomRotation((-90, -90), expand=True)(wide), np.rot90(wide, -1))
    # RandomAffine's angle turns the other way (its matrix is torchvision's: clockwise on screen)
    np.testing.assert_array_equal(vision.RandomAffine((90, 90))(square), np.rot90(square, -1))
    moved = vision.RandomAffine(0, translate=(2 / 6, 2 / 6, -1 / 4, -1 / 4), fill_value=(1, 2, 3))(wide)
    want = np.empty_like(wide)
    want[...] = np.array([1, 2, 3], np.uint8)
    want[:3, 2:] = wide[1:, :4]
    np.testing.assert_array_equal(moved, want)
    # a horizontal shear of s degrees moves row y by -tan(s) * (y - cy) pixels (nearest)
    tall = _image(4, (7, 3, 3))
    sheared = vision.RandomAffine(0, shear=(45, 45))(tall)
    for y in range(7):
        shift = -(y - 3)
        for x in range(3):
            src = x - shift
            assert (sheared[y, x] == (tall[y, src] if 0 <= src < 3 else 0)).all(), (y, x)
    float_img = _rng().standard_normal((4, 4)).astype(np.float32)
    np.testing.assert_allclose(vision.RandomRotation((90, 90), resample=vision.Inter.BILINEAR)(float_img),
                               np.rot90(float_img), atol=1e-6)  # fmt: skip
    with pytest.raises(ValueError, match="resample"):
        vision.RandomRotation(10, resample=vision.Inter.BICUBIC)


def test_random_select_subpolicy_choice_and_apply():
    from opforge.dataset import transforms, vision

    img = _image(5)
    opforge.dataset.config.set_seed(0)
    policy = vision.RandomSelectSubpolicy([[(vision.Invert(), 1.0)], [(vision.Invert(), 0.0)]])
    outs = {policy(img).tobytes() for _ in range(20)}
    assert outs == {img.tobytes(), (255 - img).tobytes()}
    choice = transforms.RandomChoice([lambda v: v + 1, lambda v: v + 2])
    assert {int(choice(np.int64(0))) for _ in range(30)} == {1, 2}
    assert transforms.RandomApply([lambda v: v + 1], prob=0.0)(np.int64(0)) == 0
    assert transforms.RandomApply([lambda v: v + 1, lambda v: v * 3], prob=1.0)(np.int64(1)) == 6
    opforge.dataset.config.set_seed(5)
    first = [vision.RandomRotation(30)(img) for _ in range(3)]
    opforge.dataset.config.set_seed(5)
    again = [vision.RandomRotation(30)(img) for _ in range(3)]
    assert all((a == b).all() for a, b in zip(first, again))


def test_normalize_pad_appends_a_zero_channel():
    from opforge.dataset import vision

    img = _image(7, (2, 3, 3))
    mean, std = np.array([10.0, 20.0, 30.0]), np.array([2.0, 4.0, 5.0])
    out = vision.NormalizePad(mean.tolist(), std.tolist())(img)
    want = np.concatenate([(img - mean) / std, np.zeros((2, 3, 1))], -1)
    assert out.dtype == np.float32 and out.shape == (2, 3, 4)
    np.testing.assert_allclose(out, want, rtol=1e-6)
    chw = vision.NormalizePad(mean.tolist(), std.tolist(), "float16", is_hwc=False)(img.transpose(2, 0, 1))
    assert chw.dtype == np.float16 and chw.shape == (4, 2, 3)
    np.testing.assert_allclose(chw, want.transpose(2, 0, 1).astype(np.float16), rtol=1e-3)


def test_pad_transform():
    from opforge.dataset import vision

    img = _image(6, (3, 4, 3))
    np.testing.assert_array_equal(vision.Pad(1)(img), np.pad(img, ((1, 1), (1, 1), (0, 0))))
    want = np.pad(img, ((2, 4), (1, 3), (0, 0)), mode="edge")
    np.testing.assert_array_equal(vision.Pad((1, 2, 3, 4), padding_mode=vision.Border.EDGE)(img), want)
    out = vision.Pad((2, 1), fill_value=(9, 8, 7))(img)
    assert out.shape == (5, 8, 3) and (out[0, 0] == [9, 8, 7]).all()
    with pytest.raises(TypeError, match="'Pad'"):
        vision.Pad("x")


def test_data_transforms():
    from opforge.dataset import transforms as T

    x = np.array([1, 2, 3], np.int32)
    np.testing.assert_array_equal(T.Concatenate(0, np.array([0]), np.array([9, 9]))(x), [0, 1, 2, 3, 9, 9])
    words = np.array(["b", "c"])
    np.testing.assert_array_equal(T.Concatenate(prepend=np.array(["a"]))(words), ["a", "b", "c"])
    a, b = T.Duplicate()(x)
    assert (a == x).all() and (b == x).all() and b is not x
    np.testing.assert_array_equal(T.Fill(7)(x), [7, 7, 7])
    assert T.Fill(7)(x).dtype == np.int32
    np.testing.assert_array_equal(T.Mask(T.Relational.GE, 2)(x), [False, True, True])
    np.testing.assert_array_equal(T.Mask(T.Relational.EQ, 2, mstype.int32)(x), [0, 1, 0])
    np.testing.assert_array_equal(T.Mask(T.Relational.NE, "b")(words), [False, True])
    np.testing.assert_array_equal(T.PadEnd([5], -1)(x), [1, 2, 3, -1, -1])
    np.testing.assert_array_equal(T.PadEnd([2])(x), [1, 2])
    np.testing.assert_array_equal(T.PadEnd([3, None])(np.ones((2, 2))), [[1, 1], [1, 1], [0, 0]])
    np.testing.assert_array_equal(T.PadEnd([3])(words), ["b", "c", ""])
    m = np.arange(12).reshape(3, 4)
    np.testing.assert_array_equal(T.Slice(1)(x), [2])
    np.testing.assert_array_equal(T.Slice(slice(0, 2), [0, 3])(m), m[0:2][:, [0, 3]])
    np.testing.assert_array_equal(T.Slice(Ellipsis, 1)(m), m[:, [1]])
    np.testing.assert_array_equal(T.Slice(None, slice(1, None, 2))(m), m[:, 1::2])
    with pytest.raises(TypeError, match="Slice"):
        T.Slice(1.5)
