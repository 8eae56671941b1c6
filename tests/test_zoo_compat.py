"""What the model zoo's VGG16, DCGAN and U-Net programs (tests/zoo/) needed of opforge, one focused check each:
MindSpore's module paths, initializers by class name and user ``Initializer`` subclasses, optimizer parameter
groups, ``ops.functional``'s shape helpers, context options, multi-epoch dataset iterators, the old callback
hook names, ``nn.CentralCrop``, ``Cast`` of a number and ``nn.Metric``'s protocol."""

import numpy as np
import pytest

import opforge
from opforge import Tensor, context, nn
from opforge.common.initializer import Initializer, _assignment, _calculate_fan_in_and_fan_out, initializer


def test_mindspore_module_paths_import():
    from opforge.nn.loss.loss import LossBase
    from opforge.nn.optim.momentum import Momentum
    from opforge.nn.wrap.cell_wrapper import TrainOneStepCell
    from opforge.nn.wrap.loss_scale import TrainOneStepWithLossScaleCell

    from opforge.common import set_seed  # noqa: F401
    from opforge.common.tensor import Tensor as T
    from opforge.train.loss_scale_manager import FixedLossScaleManager
    from opforge.train.serialization import load_checkpoint

    assert T is Tensor and LossBase is nn.LossBase and Momentum is nn.Momentum
    assert TrainOneStepCell is nn.TrainOneStepCell and TrainOneStepWithLossScaleCell is nn.TrainOneStepWithLossScaleCell
    assert FixedLossScaleManager is opforge.FixedLossScaleManager and load_checkpoint is opforge.load_checkpoint
    assert opforge.train.loss_scale_manager.FixedLossScaleManager is FixedLossScaleManager


@pytest.mark.parametrize("name", ["XavierUniform", "HeNormal", "HeUniform", "xavier_uniform", "TruncatedNormal"])
def test_initializer_by_class_name(name):
    w = initializer(name, (8, 4, 3, 3), opforge.float32)
    assert w.shape == (8, 4, 3, 3) and w.dtype == opforge.float32 and np.abs(w.asnumpy()).max() > 0


class _Fill(Initializer):
    """A user's initializer, MindSpore style: fills the array in place."""

    def __init__(self, value):
        super().__init__()
        self.value = value

    def _initialize(self, arr):
        _assignment(arr, np.full(arr.shape, self.value))


def test_user_initializer_fills_in_place():
    assert np.all(initializer(_Fill(3.0), (2, 3), opforge.float32).asnumpy() == 3.0)
    arr = np.zeros((2, 2))
    _Fill(5.0)(arr)  # MindSpore's Initializer.__call__(arr)
    assert np.all(arr == 5.0)
    layer = nn.Dense(3, 2, weight_init=_Fill(0.5))
    assert np.all(layer.weight.asnumpy() == 0.5)
    assert _calculate_fan_in_and_fan_out(layer.weight) == (3, 2)
    with pytest.raises(NotImplementedError, match="'_initialize"):
        initializer(Initializer(), (2,))


def test_optimizer_parameter_groups():
    net = nn.Dense(2, 1, weight_init="ones", bias_init="ones")
    w, b = net.weight, net.bias
    groups = [{"params": [b], "weight_decay": 0.0, "lr": 0.5}, {"params": [w]}, {"order_params": [w, b]}]
    opt = nn.SGD(groups, learning_rate=0.1, weight_decay=1.0)
    assert opt.parameters == (w, b) and opt.weight_decays == (1.0, 0.0) and opt.is_group_lr
    opt((Tensor(np.zeros((1, 2), np.float32)), Tensor(np.ones(1, np.float32))))
    np.testing.assert_allclose(w.asnumpy(), [[0.9, 0.9]], rtol=1e-6)  # decay only: 1 - 0.1 * 1.0 * 1
    np.testing.assert_allclose(b.asnumpy(), [0.5], rtol=1e-6)  # its group's lr, no decay: 1 - 0.5 * 1
    with pytest.raises(ValueError, match="'params'"):
        nn.Momentum([{"weight_decay": 0.1}], 0.1, 0.9)
    with pytest.raises(TypeError, match="all Parameters or all dicts"):
        nn.Momentum([w, {"params": [b]}], 0.1, 0.9)


def test_functional_shape_helpers():
    from opforge.ops import functional as F

    x = Tensor(np.zeros((2, 3, 4), np.float32))
    assert F.shape(x) == (2, 3, 4) and F.tuple_len(F.shape(x)) == 3 and F.make_range(0, 3) == (0, 1, 2)
    assert F.make_range(2) == (0, 1) and F.rank(x) == 3 and F.size(x) == 24
    assert F.stop_gradient is opforge.ops.stop_gradient
    assert opforge.ops.operations.Shape()(x) == (2, 3, 4)
    np.testing.assert_allclose(opforge.ops.operations.identity()(x).asnumpy(), x.asnumpy())


def test_context_accepts_mindspore_options():
    context.set_context(device_id=0, save_graphs=False, enable_graph_kernel=False, max_call_depth=2000)
    assert context.get_context("device_id") == 0 and context.get_context("max_call_depth") == 2000
    with pytest.raises(TypeError, match="'device_id'"):
        context.set_context(device_id="0")


def test_iterator_reads_one_epoch_per_loop():
    from opforge.dataset import GeneratorDataset

    ds = GeneratorDataset([(np.float32(i),) for i in range(3)], column_names=["x"], shuffle=False)
    it = ds.create_dict_iterator(output_numpy=True, num_epochs=2)
    epochs = [[float(row["x"]) for row in it] for _ in range(3)]
    assert epochs == [[0.0, 1.0, 2.0], [0.0, 1.0, 2.0], []]
    assert len(list(ds.create_tuple_iterator())) == 3


def test_model_checkpoint_old_hook_names(tmp_path):
    from opforge.train.callback import CheckpointConfig, ModelCheckpoint, RunContext, _InternalCallbackParam

    cb_params = _InternalCallbackParam()
    cb_params.train_network = nn.Dense(2, 1)
    cb_params.batch_num, cb_params.cur_epoch_num, cb_params.cur_step_num = 2, 1, 2
    ckpt = ModelCheckpoint(prefix="p", directory=str(tmp_path), config=CheckpointConfig(save_checkpoint_steps=2))
    ckpt.begin(RunContext(cb_params))
    ckpt.step_end(RunContext(cb_params))  # a hand-written loop calls the hook itself
    assert [p.name for p in tmp_path.iterdir()] == ["p-1_2.ckpt"]


def test_central_crop():
    x = np.arange(2 * 1 * 10 * 8, dtype=np.float32).reshape(2, 1, 10, 8)
    out = nn.CentralCrop(central_fraction=0.5)(Tensor(x))
    np.testing.assert_array_equal(out.asnumpy(), x[:, :, 2:8, 2:6])
    np.testing.assert_array_equal(nn.CentralCrop(0.5)(Tensor(x[0])).asnumpy(), x[0, :, 2:8, 2:6])
    assert nn.CentralCrop(1.0)(Tensor(x)).shape == (2, 1, 10, 8)
    with pytest.raises(ValueError, match="'central_fraction'"):
        nn.CentralCrop(0.0)


def test_cast_accepts_a_number():
    out = opforge.ops.Cast()(1.0, opforge.float32)
    assert out.dtype == opforge.float32 and out.shape == () and float(out.asnumpy()) == 1.0


def test_user_metric_clears_itself():
    class Dice(nn.Metric):
        def __init__(self):
            super().__init__()
            self.scale = 2.0  # read by clear: MindSpore's Metric.__init__ does not call clear
            self.clear()

        def clear(self):
            self.total = 0.0 * self.scale

        def update(self, *inputs):
            self.total += float(self._convert_data(inputs[0]).sum()) + float(self._convert_data([1.0]).sum())

        def eval(self):
            return self.total

    metric = Dice()
    metric.update(Tensor(np.ones(3, np.float32)))
    assert metric.eval() == 4.0
    assert nn.Accuracy()._total == 0  # the built-in metrics clear themselves


def test_parallel_utils_paths_read_the_context():
    from opforge.context import ParallelMode
    from opforge.parallel._auto_parallel_context import _get_auto_parallel_context, auto_parallel_context
    from opforge.parallel._utils import (
        _device_number_check,
        _get_device_num,
        _get_gradients_mean,
        _get_parallel_mode,
        _get_pipeline_stages,
        _is_in_auto_parallel_mode,
    )

    opforge.reset_auto_parallel_context()
    try:
        assert (_get_device_num(), _get_parallel_mode(), _get_gradients_mean()) == (1, ParallelMode.STAND_ALONE, False)
        _device_number_check(ParallelMode.STAND_ALONE, 1)
        with pytest.raises(ValueError, match="stand_alone"):
            _device_number_check(ParallelMode.STAND_ALONE, 2)
        opforge.set_auto_parallel_context(
            parallel_mode=ParallelMode.SEMI_AUTO_PARALLEL, device_num=4, gradients_mean=True, pipeline_stages=2
        )
        assert _get_device_num() == 4 and _get_gradients_mean() and _get_pipeline_stages() == 2
        assert _is_in_auto_parallel_mode() and auto_parallel_context().get_device_num() == 4
        assert _get_auto_parallel_context("parallel_mode") == ParallelMode.SEMI_AUTO_PARALLEL
    finally:
        opforge.reset_auto_parallel_context()


def test_constexpr_runs_the_function():
    from opforge.ops import constexpr
    from opforge.ops.primitive import PrimitiveWithInfer, prim_attr_register  # noqa: F401 (MindSpore's path)

    @constexpr
    def doubled(shape):
        return tuple(2 * d for d in shape)

    @constexpr(get_instance=False)
    def plus_one(value):
        return value + 1

    assert doubled((2, 3)) == (4, 6) and plus_one()(1) == 2


def test_parameter_takes_mindspore_parallel_arguments():
    p = opforge.Parameter(Tensor(np.ones(3, np.float32)), "w", True, False, False)
    assert p.layerwise_parallel is False and p.parallel_optimizer is False
    q = opforge.Parameter(Tensor(np.ones(3, np.float32)), parallel_optimizer=False)
    assert q.requires_grad and not q.parallel_optimizer
    with pytest.raises(TypeError, match="'parallel_optimizer' must be bool"):
        opforge.Parameter(Tensor(np.ones(3, np.float32)), parallel_optimizer=1)


def test_model_trains_a_step_cell_without_optimizer():
    net = nn.Dense(3, 1)
    step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), nn.SGD(net.trainable_params(), 0.1))
    model = opforge.Model(step)
    data = [(np.ones(3, np.float32), np.zeros(1, np.float32))] * 4
    ds = opforge.dataset.GeneratorDataset(data, column_names=["x", "y"], shuffle=False).batch(2)
    before = net.weight.asnumpy().copy()
    model.train(1, ds)
    assert not np.allclose(before, net.weight.asnumpy())


def test_checkpoint_append_info_and_choice_func(tmp_path):
    from opforge.train.callback import CheckpointConfig, ModelCheckpoint, RunContext, _InternalCallbackParam

    net = nn.Dense(2, 2)
    cfg = CheckpointConfig(save_checkpoint_steps=1, append_info=["epoch_num", {"step_num": 0, "tag": 7}])
    cb = _InternalCallbackParam()
    cb.train_network, cb.cur_epoch_num, cb.cur_step_num, cb.batch_num = net, 2, 5, 5
    ModelCheckpoint(prefix="n", directory=str(tmp_path), config=cfg).step_end(RunContext(cb))
    params = opforge.load_checkpoint(str(tmp_path / "n-2_5.ckpt"))
    assert {k: int(params[k].asnumpy()) for k in ("epoch_num", "step_num", "tag")} == {"epoch_num": 2, "step_num": 5,
                                                                                        "tag": 7}  # fmt: skip
    kept = opforge.load_checkpoint(str(tmp_path / "n-2_5.ckpt"), choice_func=lambda name: name.startswith("weight"))
    assert list(kept) == ["weight"]
    assert list(opforge.load_checkpoint(str(tmp_path / "n-2_5.ckpt"), specify_prefix="bias")) == ["bias"]
    with pytest.raises(ValueError, match="'append_info' element"):
        CheckpointConfig(append_info=["lr"])


def test_get_context_enable_ge():
    assert context.get_context("enable_ge") is False


def test_parameter_tuple_clone_with_an_initializer():
    from opforge.common.parameter import ParameterTuple

    net = nn.Dense(3, 2)
    opt = nn.Momentum(net.trainable_params(), 0.1, 0.9, loss_scale=4.0)
    assert isinstance(opt.parameters, ParameterTuple)
    assert opt.need_scale and float(opt.reciprocal_scale.asnumpy()) == 0.25 and not opt.exec_weight_decay
    moments = opt.parameters.clone(prefix="moments", init="zeros")
    assert [m.name for m in moments] == ["moments.weight", "moments.bias"]
    assert all(np.all(m.asnumpy() == 0) and m.shape == p.shape for m, p in zip(moments, opt.parameters))


def test_fused_weight_scale_apply_momentum():
    var = opforge.Parameter(Tensor(np.array([1.0, 2.0], np.float32)), "var")
    acc = opforge.Parameter(Tensor(np.array([0.5, 0.5], np.float32)), "acc")
    grad = Tensor(np.array([4.0, 8.0], np.float32))
    f32 = opforge.float32
    fused = opforge.ops.FusedWeightScaleApplyMomentum()
    fused(Tensor(0.1, f32), Tensor(0.5, f32), var, acc, Tensor(0.1, f32), grad, Tensor(0.9, f32))
    g = np.array([4.0, 8.0]) * 0.5 + 0.1 * np.array([1.0, 2.0])
    new_acc = 0.5 * 0.9 + g
    np.testing.assert_allclose(acc.asnumpy(), new_acc, rtol=1e-6)
    np.testing.assert_allclose(var.asnumpy(), np.array([1.0, 2.0]) - 0.1 * new_acc, rtol=1e-6)
