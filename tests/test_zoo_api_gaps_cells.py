"""MindSpore API the model zoo calls that opforge lacked (docs/zoo_api_survey.md, "Keyword arguments the zoo
passes"): ``Cell(auto_prefix, flags)`` (BMN), ``CellList(auto_prefix=False)`` (wukong-huahua) and ``CellDict``'s,
``ops.dot(x1=, x2=)`` (mmoe), and ``Model.infer_predict_layout`` / ``infer_train_layout`` (Pangu-alpha, CPM):
here in one process (a world of one rank) and on 2 and 4 ranks (tests/mpi_scripts/infer_layout.py)."""

from __future__ import annotations

import pathlib

import numpy as np
import pytest
from test_data_parallel import needs_mpi, run_job

import opforge
from opforge import Tensor, nn, ops
from opforge import dtype as mstype
from opforge.dataset import GeneratorDataset
from opforge.nn.loss_scale import DynamicLossScaleUpdateCell
from opforge.train import DynamicLossScaleManager, Model

SCRIPTS = pathlib.Path(__file__).parent / "mpi_scripts"


pytestmark = pytest.mark.usefixtures("one_rank_parallel")  # (tests/conftest.py)


# ---------------------------------------------------------------------------------------------
# Cell(auto_prefix, flags)


class _WithLoss(nn.Cell):
    """BMN's BMNWithLossCell: ``super().__init__(auto_prefix, flags)``."""

    def __init__(self, net, auto_prefix=False, flags=None):
        super().__init__(auto_prefix, flags)
        self.network = net

    def construct(self, x):
        return self.network(x)


def test_cell_takes_flags_as_its_second_argument():
    cell = nn.Cell(True, {"loop_can_unroll": True, "tag": 3})
    assert cell.get_flags() == {"loop_can_unroll": True, "tag": 3}
    assert cell.loop_can_unroll is True and cell.tag == 3
    assert nn.Cell(flags={"x": 1}).get_flags() == {"x": 1}
    assert nn.Cell().get_flags() == {} and nn.Cell(True, None).get_flags() == {}
    with pytest.raises(TypeError, match="'flags' must be a dict"):
        nn.Cell(True, [("x", 1)])


def test_a_subclass_passes_auto_prefix_and_flags_positionally():
    wrapped = _WithLoss(nn.Dense(3, 2), False, {"fp16": True})
    assert [p.name for p in wrapped.trainable_params()] == ["weight", "bias"]  # auto_prefix=False: no "network."
    assert [p.name for p in _WithLoss(nn.Dense(3, 2), True).trainable_params()] == ["network.weight", "network.bias"]
    # the precision flag acts as add_flags(fp16=True) does: the cell's float inputs run in float16
    x = np.arange(6, dtype=np.float32).reshape(2, 3)

    class Echo(nn.Cell):
        def __init__(self, flags=None):
            super().__init__(True, flags)

        def construct(self, t):
            return t

    assert Echo({"fp16": True})(Tensor(x)).dtype == mstype.float16
    assert Echo()(Tensor(x)).dtype == mstype.float32


# ---------------------------------------------------------------------------------------------
# CellList(auto_prefix=...), CellDict(auto_prefix=...)


def _block(prefix: str) -> nn.Cell:
    """wukong-huahua's Decoder: a Cell of layers whose names it sets itself (update_parameters_name)."""
    up = nn.Cell()
    up.conv = nn.Dense(2, 2)
    up.update_parameters_name(prefix=prefix)
    return up


def test_celllist_without_auto_prefix_keeps_the_names_its_cells_have():
    ups = nn.CellList(auto_prefix=False)
    for level in reversed(range(3)):  # the Decoder's order: insert(0, ...) after the first append
        up = _block(f"decoder.up.{level}.")
        if ups:
            ups.insert(0, up)
        else:
            ups.append(up)
    names = [p.name for p in ups.get_parameters()]
    assert names == [f"decoder.up.{i}.conv.{w}" for i in range(3) for w in ("weight", "bias")]
    ups.extend([_block("extra.")])
    ups[0] = _block("replaced.")
    del ups[1]
    assert [p.name for p in ups.get_parameters()][::2] == ["replaced.conv.weight", "decoder.up.2.conv.weight",
                                                          "extra.conv.weight"]  # fmt: skip
    # the default prefixes each cell's parameters with its index
    prefixed = nn.CellList([_block("a."), _block("b.")])
    assert [p.name for p in prefixed.get_parameters()][::2] == ["0.conv.weight", "1.conv.weight"]
    assert [p.name for p in nn.CellList([_block("a.")], auto_prefix=True).get_parameters()][0] == "0.conv.weight"


def test_celllist_arguments_are_checked():
    with pytest.raises(TypeError, match="only keyword argument is 'auto_prefix'"):
        nn.CellList([], prefix=False)
    with pytest.raises(TypeError, match="at most one list"):
        nn.CellList([nn.ReLU()], [nn.ReLU()])
    assert len(nn.CellList()) == 0 and len(nn.CellList(None)) == 0


def test_celldict_without_auto_prefix_keeps_the_names_its_cells_have():
    kept = nn.CellDict({"enc": _block("encoder.")}, auto_prefix=False)
    kept["dec"] = _block("decoder.")
    assert [p.name for p in kept.get_parameters()][::2] == ["encoder.conv.weight", "decoder.conv.weight"]
    prefixed = nn.CellDict({"enc": _block("encoder.")}, dec=_block("decoder."))  # keyword cells still added
    assert [p.name for p in prefixed.get_parameters()][::2] == ["enc.conv.weight", "dec.conv.weight"]
    assert list(nn.CellDict(auto_prefix=True, relu=nn.ReLU()).keys()) == ["relu"]


# ---------------------------------------------------------------------------------------------
# ops.dot(x1=, x2=)


def test_dot_takes_mindspore_1x_names(rng):
    a, b = rng.standard_normal((2, 3)).astype(np.float32), rng.standard_normal((4, 3, 5)).astype(np.float32)
    want = np.dot(a, b)  # input.shape[:-1] + other.shape[:-2] + other.shape[-1:]
    for got in (ops.dot(x1=Tensor(a), x2=Tensor(b)), ops.dot(Tensor(a), x2=Tensor(b)), ops.dot(Tensor(a), Tensor(b)),
                ops.dot(input=Tensor(a), other=Tensor(b))):  # fmt: skip
        assert got.shape == (2, 4, 5)
        np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-5, atol=1e-5)
    with pytest.raises(TypeError, match="both 'input' and 'x1'"):
        ops.dot(Tensor(a), Tensor(b), x1=Tensor(a))
    with pytest.raises(TypeError, match="'other' \\(MindSpore 1.x: 'x2'\\) is missing"):
        ops.dot(x1=Tensor(a))


# ---------------------------------------------------------------------------------------------
# Model.infer_predict_layout / infer_train_layout (a world of one rank: every layout whole)


class _Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Dense(4, 6)
        self.bn = nn.BatchNorm1d(6)
        self.fc2 = nn.Dense(6, 3)
        self.fc1.matmul.shard(((1, 1), (1, 1)))

    def construct(self, x):
        return self.fc2(self.bn(self.fc1(x)))


_R = np.random.default_rng(5)
_BATCHES = [(_R.standard_normal((8, 4)).astype(np.float32), _R.integers(0, 3, 8).astype(np.int32)) for _ in range(3)]


def _dataset():
    return GeneratorDataset(lambda: iter(_BATCHES), ["x", "y"], shuffle=False)


def _model(loss_scale: bool = False):
    """A Model of ``_Net``; with ``loss_scale`` its step is a dynamic loss-scale cell (Pangu-alpha's kind; its
    parallel GRAPH_MODE training: tests/test_loss_scale_parallel_graph.py)."""
    nn.set_seed(1)
    net = _Net()
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    optimizer = nn.Momentum(net.trainable_params(), 0.1, 0.9)
    if not loss_scale:
        return Model(net, loss, optimizer), net
    manager = DynamicLossScaleManager(init_loss_scale=2.0**10, scale_factor=2, scale_window=2)
    return Model(net, loss, optimizer, loss_scale_manager=manager), net


def _semi_auto(**options):
    opforge.set_context(mode=opforge.GRAPH_MODE)
    opforge.set_auto_parallel_context(parallel_mode="semi_auto_parallel", full_batch=True, **options)


def _values(cell) -> dict:
    return {p.name: p.asnumpy().copy() for p in cell.get_parameters()}


def _whole(p) -> tuple:
    return [1], [-1] * len(p.shape), list(p.shape), 0, True, ""


def test_infer_train_layout_lays_out_without_a_step():
    _semi_auto()
    model, net = _model(loss_scale=True)
    step = model.train_network
    update = next(c for _, c in step.cells_and_names() if isinstance(c, DynamicLossScaleUpdateCell))
    before = _values(step)
    layout = model.infer_train_layout(_dataset(), sink_size=2)
    assert layout == {p.name: _whole(p) for p in step.get_parameters()}
    assert "moments.fc1.weight" in layout and "bn.moving_mean" in layout and layout["global_step"][2] == []
    after = _values(step)
    assert all(np.array_equal(before[k], after[k]) for k in before)  # BatchNorm's statistics given back
    assert int(update.cur_iter.asnumpy()) == 1  # the loss scale's update (after the gradients) did not run
    # the forward pass does write the statistics: the layout step gave them back
    net.set_train(True)
    net(Tensor(_BATCHES[0][0]))
    assert not np.array_equal(net.bn.moving_mean.asnumpy(), before["bn.moving_mean"])


def test_training_after_infer_train_layout_is_unchanged():
    _semi_auto()
    asked, asked_net = _model()
    asked.infer_train_layout(_dataset())
    twin, twin_net = _model()
    for m in (asked, twin):
        m.train(2, _dataset(), dataset_sink_mode=True)
    for p, q in zip(asked.train_network.get_parameters(), twin.train_network.get_parameters()):
        np.testing.assert_array_equal(p.asnumpy(), q.asnumpy(), err_msg=p.name)


def test_infer_predict_layout_feeds_load_distributed_checkpoint(tmp_path):
    """Pangu-alpha's predict.py: the prediction layout, then the training ranks' block files loaded with it."""
    path = str(tmp_path / "strategy.ckpt")
    _semi_auto(strategy_ckpt_config={"save_file": path, "only_trainable_params": False})  # BatchNorm's statistics too
    trained, trained_net = _model()
    trained.train(1, _dataset(), dataset_sink_mode=True)  # the first step writes the strategy file
    block = opforge.save_checkpoint(trained_net, str(tmp_path / "rank0.ckpt"), integrated_save=False)

    opforge.set_auto_parallel_context(strategy_ckpt_config={"save_file": ""})
    predicting, net = _model()
    x = Tensor(_BATCHES[0][0])
    before = _values(net)
    layout = predicting.infer_predict_layout(x)
    assert layout == {p.name: _whole(p) for p in net.get_parameters()}
    assert all(np.array_equal(v, _values(net)[k]) for k, v in before.items())
    opforge.load_distributed_checkpoint(net, [block], layout, train_strategy_filename=path)
    for name, p in net.parameters_dict().items():
        np.testing.assert_array_equal(p.asnumpy(), trained_net.parameters_dict()[name].asnumpy(), err_msg=name)
    np.testing.assert_allclose(predicting.predict(x).asnumpy(), trained.predict(x).asnumpy(), rtol=1e-6)


def test_infer_predict_layout_again_and_after_prediction():
    """Pangu-alpha's incremental prediction asks twice, the second time with other input shapes."""
    _semi_auto()
    model, net = _model()
    x = Tensor(_BATCHES[0][0])
    first = model.infer_predict_layout(x)
    assert model.infer_predict_layout(Tensor(_BATCHES[1][0][:4])) == first
    predicted = model.predict(x).asnumpy()
    assert model.infer_predict_layout(x) == first
    np.testing.assert_array_equal(model.predict(x).asnumpy(), predicted)
    asked_late, _ = _model()
    asked_late.predict(x)
    assert asked_late.infer_predict_layout(x) == first


def test_infer_layout_refusals_are_mindspore_s(caplog):
    model, _ = _model()
    x = Tensor(_BATCHES[0][0])
    with pytest.raises(RuntimeError, match="only supports GRAPH MODE"):  # PYNATIVE_MODE
        model.infer_predict_layout(x)
    opforge.set_context(mode=opforge.GRAPH_MODE)
    with pytest.raises(RuntimeError, match="'semi_auto_parallel' and 'auto_parallel' mode, but got stand_alone"):
        model.infer_train_layout(_dataset())
    opforge.set_auto_parallel_context(parallel_mode="data_parallel")
    with pytest.raises(RuntimeError, match="but got data_parallel"):
        model.infer_predict_layout(x)
    opforge.set_auto_parallel_context(parallel_mode="semi_auto_parallel")
    with caplog.at_level("WARNING", logger="opforge"):  # MindSpore 2.x warns (1.x raised)
        assert isinstance(model.infer_predict_layout(x), dict)
    assert "non full-batch dataset in model prediction" in caplog.text
    _semi_auto(enable_parallel_optimizer=True)  # (refused by MindSpore 1.x only)
    assert isinstance(model.infer_predict_layout(x), dict)
    _semi_auto(enable_parallel_optimizer=False)
    with pytest.raises(TypeError, match="must be Tensors, but got ndarray"):
        model.infer_predict_layout(_BATCHES[0][0])
    with pytest.raises(ValueError, match="Only dataset sink mode"):
        model.infer_train_layout(_dataset(), dataset_sink_mode=False)
    with pytest.raises(TypeError, match="'dataset_sink_mode' must be a bool"):
        model.infer_train_layout(_dataset(), dataset_sink_mode=1)
    with pytest.raises(ValueError, match="'sink_size' must be -1 or positive"):
        model.infer_train_layout(_dataset(), sink_size=0)
    with pytest.raises(RuntimeError, match="needs an 'optimizer'"):
        Model(_Net(), nn.MSELoss()).infer_train_layout(_dataset())


@needs_mpi
@pytest.mark.parametrize("n", [2, 4])
def test_layouts_of_a_tensor_parallel_network(n):
    """The entries from the strategies (column- and row-parallel Dense), the parameters split with their values
    kept, and training / prediction afterwards as a twin network's (tests/mpi_scripts/infer_layout.py)."""
    job = run_job([str(SCRIPTS / "infer_layout.py")], n=n, timeout=120)
    assert job.returncode == 0 and "LAYOUT-OK" in job.stdout, job.stdout + job.stderr


def test_infer_train_layout_writes_the_strategy_file(tmp_path):
    """MindSpore writes strategy_ckpt_config's save_file when it compiles for infer_train_layout: its
    transformation sample (--only_compile=1) transforms checkpoints with that file before any training step."""
    path = str(tmp_path / "dst_strategy.ckpt")
    _semi_auto(strategy_ckpt_config={"save_file": path})
    model, net = _model()
    model.infer_train_layout(_dataset())
    assert set(opforge.build_searched_strategy(path)) >= {p.name for p in net.trainable_params()}
