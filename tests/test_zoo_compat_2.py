"""What the model zoo's Wide&Deep and Faster R-CNN (tests/zoo/wide_and_deep.py, tests/zoo/faster_rcnn_parts.py)
needed of opforge, one focused check each: ``from mindspore import log as logger``, ``nn.optim``'s package
exports (``from mindspore.nn.optim import FTRL``) and ``nn.layer``, ``ops.DType``, ``shard``/``add_prim_attr``
on operators that are not Primitives (``ops.Unique().shard(...)``), ``Model.eval`` giving a user's eval network's
outputs to each metric, and ``ArgMaxWithValue``/``ArgMinWithValue``, ``ScatterNd``, ``Flatten`` and
``RandomChoiceWithMask``."""

import logging

import numpy as np
import pytest

import opforge
from opforge import Tensor, nn, ops
from opforge.dataset import GeneratorDataset
from opforge.testing import numeric_grad
from opforge.train import Model


def test_log_module_as_mindspore_log():
    from opforge import log as logger

    assert logger.get_level() == "2" and logger.get_log_config()["GLOG_v"] == "2"  # GLOG_v unset: WARNING
    records = []
    handler = logging.Handler()
    handler.emit = records.append
    logging.getLogger("opforge").addHandler(handler)
    try:
        logger.warning("auc %s", 0.5)
        logger.info("not shown")
    finally:
        logging.getLogger("opforge").removeHandler(handler)
    assert [r.getMessage() for r in records] == ["auc 0.5"]


def test_nn_optim_package_exports_and_layer_path():
    from opforge.nn.optim.ftrl import FTRL as FTRL2
    from opforge.nn.optim.lazyadam import LazyAdam as LazyAdam2

    from opforge.nn import layer as L
    from opforge.nn.optim import FTRL, Adam, LazyAdam, ProximalAdagrad

    assert FTRL is nn.FTRL is FTRL2 and LazyAdam is nn.LazyAdam is LazyAdam2 and Adam is nn.Adam
    assert ProximalAdagrad is nn.ProximalAdagrad
    assert L.CellList is nn.CellList and nn.layer.Dense is nn.Dense and L.Conv2d is nn.Conv2d


def test_dtype_operator():
    x = Tensor(np.zeros((2, 3), np.float16))
    assert ops.DType()(x) == opforge.float16 and ops.operations.DType()(x) == opforge.float16
    y = ops.Fill()(ops.DType()(x), ops.Shape()(x), 1024.0)  # TrainStepWrap's sens
    assert y.dtype == opforge.float16 and np.all(y.asnumpy() == 1024)
    with pytest.raises(TypeError, match="'DType'.*'input_x' must be a Tensor"):
        ops.DType()(np.zeros(2))


def test_operators_that_are_not_primitives_take_shard_and_attrs():
    unique = ops.Unique().shard(((1,),))
    assert unique.attrs["in_strategy"] == ((1,),) and unique.name == "Unique"
    y, idx = unique(Tensor(np.array([3, 1, 3], np.int32)))
    np.testing.assert_array_equal(y.asnumpy(), [1, 3])
    iou = ops.IOU().add_prim_attr("cross_batch", True).set_device("CPU")
    assert iou.attrs == {"cross_batch": True, "primitive_target": "CPU"}
    assert ops.ROIAlign(2, 2, 1.0).shard(((1, 1, 1, 1), (1, 1))) is not None
    with pytest.raises(ValueError, match="'Unique.shard'.*>= 1"):
        ops.Unique().shard(((0,),))
    with pytest.raises(TypeError, match="'Unique.shard'"):
        ops.Unique().shard((1,))
    with pytest.raises(ValueError, match="'device_target'"):
        ops.Unique().set_device("NPU")


class _Probs(nn.Cell):
    def construct(self, x, label):
        return x, ops.sigmoid(x), label


class _AllInputs(nn.Metric):
    def clear(self):
        self.seen = []

    def update(self, *inputs):
        self.seen.append(len(inputs))

    def eval(self):
        return self.seen


def test_model_eval_gives_a_user_eval_network_all_outputs():
    """MindSpore's rule: an eval_network without eval_indexes -> metric.update(*outputs); with them (or Model's
    own WithEvalCell) -> update(outputs[i1], outputs[i2])."""
    data = GeneratorDataset([(np.zeros(2, np.float32), np.ones(2, np.float32))] * 2, ["x", "label"]).batch(1)
    model = Model(nn.Dense(2, 2), eval_network=_Probs(), metrics={"all": _AllInputs()})
    assert model.eval(data)["all"] == [3, 3]
    model = Model(nn.Dense(2, 2), eval_network=_Probs(), eval_indexes=[0, 1, 2], metrics={"all": _AllInputs()})
    assert model.eval(data)["all"] == [2, 2]
    model = Model(nn.Dense(2, 2), loss_fn=nn.MSELoss(), metrics={"all": _AllInputs(), "loss": nn.Loss()})
    assert model.eval(data)["all"] == [2, 2]


@pytest.mark.parametrize("cls, pick", [(ops.ArgMaxWithValue, np.argmax), (ops.ArgMinWithValue, np.argmin)])
@pytest.mark.parametrize("axis, keep_dims", [(0, False), (1, True), (-1, False)])
def test_arg_with_value_matches_numpy_and_differentiates(cls, pick, axis, keep_dims):
    x = np.random.default_rng(0).standard_normal((3, 5))
    index, value = cls(axis=axis, keep_dims=keep_dims)(Tensor(x))
    expected_index = pick(x, axis=axis)
    expected_value = np.take_along_axis(x, np.expand_dims(expected_index, axis), axis)
    if not keep_dims:
        expected_value = expected_value.squeeze(axis)
    else:
        expected_index = np.expand_dims(expected_index, axis)
    assert index.dtype == opforge.int32
    np.testing.assert_array_equal(index.asnumpy(), expected_index)
    np.testing.assert_allclose(value.asnumpy(), expected_value, rtol=1e-12)
    w = np.random.default_rng(1).standard_normal(value.shape)
    grad = opforge.grad(lambda t: (cls(axis=axis, keep_dims=keep_dims)(t)[1] * Tensor(w)).sum())(Tensor(x))
    numeric = numeric_grad(lambda a: float((cls(axis=axis, keep_dims=keep_dims)(Tensor(a))[1].asnumpy() * w).sum()), x)
    np.testing.assert_allclose(grad.asnumpy(), numeric, rtol=1e-5, atol=1e-7)


def test_arg_with_value_errors():
    with pytest.raises(TypeError, match="'ArgMaxWithValue'.*'axis' must be an int"):
        ops.ArgMaxWithValue(axis=1.0)
    with pytest.raises(TypeError, match="'keep_dims' must be a bool"):
        ops.ArgMinWithValue(keep_dims=1)
    with pytest.raises(ValueError, match="'axis' must be in"):
        ops.ArgMaxWithValue(axis=2)(Tensor(np.zeros((2, 2), np.float32)))


def test_scatter_nd_sums_duplicates_and_differentiates():
    indices = np.array([[0, 1], [2, 0], [0, 1]], np.int32)
    updates = np.random.default_rng(2).standard_normal((3, 4))
    out = ops.ScatterNd()(Tensor(indices), Tensor(updates), (3, 2, 4))
    expected = np.zeros((3, 2, 4))
    np.add.at(expected, (indices[:, 0], indices[:, 1]), updates)
    np.testing.assert_allclose(out.asnumpy(), expected, rtol=1e-12)
    np.testing.assert_allclose(ops.scatter_nd(Tensor(indices), Tensor(updates), (3, 2, 4)).asnumpy(), expected)
    flags = ops.ScatterNd()(Tensor(np.array([[1], [3]], np.int64)), Tensor(np.array([True, True])), (4,))
    assert flags.dtype == opforge.bool_ and flags.asnumpy().tolist() == [False, True, False, True]
    w = np.random.default_rng(3).standard_normal((3, 2, 4))
    f = lambda u: (ops.ScatterNd()(Tensor(indices), u, (3, 2, 4)) * Tensor(w)).sum()  # noqa: E731
    grad = opforge.grad(f)(Tensor(updates))
    numeric = numeric_grad(lambda a: float(f(Tensor(a)).asnumpy()), updates)
    np.testing.assert_allclose(grad.asnumpy(), numeric, rtol=1e-5, atol=1e-7)
    jitted = opforge.jit(lambda i, u: ops.ScatterNd()(i, u, (3, 2, 4)))
    np.testing.assert_allclose(jitted(Tensor(indices), Tensor(updates)).asnumpy(), expected, rtol=1e-12)
    with pytest.raises(ValueError, match="'ScatterNd'.*'updates' must have shape"):
        ops.ScatterNd()(Tensor(indices), Tensor(updates), (3, 2, 5))
    with pytest.raises(TypeError, match="'indices' must be int32 or int64"):
        ops.ScatterNd()(Tensor(indices.astype(np.float32)), Tensor(updates), (3, 2, 4))
    with pytest.raises(ValueError, match="'shape' must hold positive ints"):
        ops.ScatterNd()(Tensor(indices), Tensor(updates), (3, 0, 4))


def test_flatten_operator():
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    np.testing.assert_array_equal(ops.Flatten()(Tensor(x)).asnumpy(), x.reshape(2, 12))
    assert ops.Flatten()(Tensor(np.zeros(3, np.float32))).shape == (3, 1)
    with pytest.raises(ValueError, match="'Flatten'.*at least 1 dim"):
        ops.Flatten()(Tensor(np.float32(1)))


def test_random_choice_with_mask():
    rng = np.random.default_rng(4)
    x = rng.uniform(size=(4, 5, 3)) < 0.3
    opforge.set_seed(5)
    chooser = ops.RandomChoiceWithMask(count=8)
    index, mask = chooser(Tensor(x))
    assert index.shape == (8, 3) and index.dtype == opforge.int32 and mask.shape == (8,) and mask.dtype == opforge.bool_
    chosen = index.asnumpy()[mask.asnumpy()]
    assert len(chosen) == min(8, x.sum()) and np.all(x[tuple(chosen.T)])
    assert len({tuple(c) for c in chosen}) == len(chosen)  # without replacement
    assert np.all(index.asnumpy()[~mask.asnumpy()] == 0)
    second = chooser(Tensor(x))[0].asnumpy()
    assert not np.array_equal(second, index.asnumpy())  # each call draws anew
    opforge.set_seed(5)
    np.testing.assert_array_equal(ops.RandomChoiceWithMask(count=8)(Tensor(x))[0].asnumpy(), index.asnumpy())
    few = np.zeros(6, bool)
    few[[1, 4]] = True
    index, mask = ops.RandomChoiceWithMask(count=10)(Tensor(few))  # count > elements: padded
    assert index.shape == (10, 1) and mask.asnumpy().sum() == 2
    assert sorted(index.asnumpy()[mask.asnumpy(), 0].tolist()) == [1, 4]
    with pytest.raises(TypeError, match="'RandomChoiceWithMask'.*must be bool"):
        ops.RandomChoiceWithMask()(Tensor(np.zeros(3, np.float32)))
    with pytest.raises(ValueError, match="'count' must be > 0"):
        ops.RandomChoiceWithMask(count=0)
    with pytest.raises(ValueError, match="1 to 5 dims"):
        ops.RandomChoiceWithMask()(Tensor(np.zeros((1,) * 6, bool)))
