"""Fixes from the third forward/training sweep of the model zoo's official networks (docs/zoo_api_survey.md,
"A forward/training sweep of the official networks": PanGu-alpha, FasterRCNN, TB-Net): ``Cell.set_comm_fusion``
and ``Parameter.comm_fusion``, ``Parameter.add_pipeline_stage``, ``Parameter.param_info`` (a ParamInfo holding
the name and flags, ``clone()`` for optimizer states), the residual ``add`` operators of the MindSpore 1.8
transformer layers, ``mindspore._checkparam``, MindRecord 0-d array fields (``"shape": []``) and
``C.matmul(x1, x2, dtype=None)``."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

import opforge as ms
import opforge.dataset as ds
from opforge import Parameter, Tensor, _checkparam, context, nn
from opforge.mindrecord import FileReader, FileWriter
from opforge.ops import composite as C
from opforge.ops import functional as F
from opforge.parallel._transformer import TransformerEncoderLayer
from opforge.param_info import ParamInfo

# -- Cell.set_comm_fusion, Parameter.comm_fusion ----------------------------------------------------------


class _Two(nn.Cell):
    def __init__(self):
        super().__init__()
        self.a = nn.Dense(2, 3)
        self.b = nn.BatchNorm1d(3)  # moving_mean / moving_variance: not trainable
        self.w = Parameter(Tensor(np.ones(2, np.float32)), name="w")


def test_comm_fusion_default_and_set_recursively():
    net = _Two()
    assert all(p.comm_fusion == 1 for p in net.get_parameters())  # MindSpore's ParamInfo default
    assert net.set_comm_fusion(3) is net
    for p in net.get_parameters():
        assert p.comm_fusion == (3 if p.requires_grad else 1), p.name
    net.a.set_comm_fusion(0)  # overwritten by a later call, as MindSpore notes
    assert net.a.weight.comm_fusion == 0 and net.w.comm_fusion == 3


def test_comm_fusion_not_recursive():
    net = _Two()
    net.set_comm_fusion(5, recurse=False)
    assert net.w.comm_fusion == 5
    assert net.a.weight.comm_fusion == 1 and net.b.gamma.comm_fusion == 1


@pytest.mark.parametrize("bad, err", [(-1, ValueError), (1.5, TypeError), (True, TypeError)])
def test_comm_fusion_rejects(bad, err):
    net = _Two()
    with pytest.raises(err):
        net.set_comm_fusion(bad)
    with pytest.raises(err):
        net.w.comm_fusion = bad


def test_comm_fusion_refused_in_pynative_auto_parallel():
    mode = context.get_context("mode")
    context.set_context(mode=context.PYNATIVE_MODE)
    context.set_auto_parallel_context(parallel_mode="semi_auto_parallel")
    try:
        with pytest.raises(RuntimeError, match="PYNATIVE_MODE"):
            _Two().set_comm_fusion(2)
    finally:
        context.reset_auto_parallel_context()
        context.set_context(mode=mode)


# -- Parameter.add_pipeline_stage ----------------------------------------------------------------------


def test_add_pipeline_stage_records_stages():
    p = Parameter(Tensor(np.zeros((4, 2), np.float32)), name="embedding_table")
    p.add_pipeline_stage(0)
    p.add_pipeline_stage(3)
    assert p._pipeline_stage_list == [0, 3]
    for bad in (-1, 1.0, "1"):
        with pytest.raises(TypeError):
            p.add_pipeline_stage(bad)
    assert p._pipeline_stage_list == [0, 3]


# -- Parameter.param_info ------------------------------------------------------------------------------


def test_param_info_holds_the_settings():
    p = Parameter(Tensor(np.ones(3, np.float32)), name="w", requires_grad=False, layerwise_parallel=True)
    info = p.param_info
    assert isinstance(info, ParamInfo) and info is p.param_info
    assert (info.name, info.requires_grad, info.layerwise_parallel, info.parallel_optimizer) == ("w", False, True, True)
    info.name = "renamed"  # the same record: the parameter reads it
    assert p.name == "renamed"
    p.requires_grad = True
    assert info.requires_grad is True


def test_param_info_clone_for_optimizer_states():
    """PanGu-alpha's FP32StateAdamWeightDecay.clone_state: a float32 state takes the weight's settings from a
    cloned ParamInfo, then is renamed; the weight keeps its own name and records the clone."""
    weight = Parameter(Tensor(np.ones((2, 2), np.float16)), name="blocks.0.dense.weight")
    weight.comm_fusion = 4
    state = Parameter(Tensor(np.zeros((2, 2), np.float32)))
    state.param_info = weight.param_info.clone()
    weight.param_info.cloned_obj = [state]
    state.is_init = False
    state.name = "adam_m." + state.name
    assert state.name == "adam_m.blocks.0.dense.weight" and weight.name == "blocks.0.dense.weight"
    assert state.comm_fusion == 4 and state.requires_grad
    assert weight.param_info.cloned_obj[0] is state
    assert not hasattr(state.param_info, "cloned_obj")  # clone copies the settings only
    assert state.dtype == ms.float32 and np.array_equal(state.asnumpy(), np.zeros((2, 2)))
    with pytest.raises(TypeError):
        state.param_info = {"name": "x"}


def test_parameter_clone_copy_and_pickle_keep_the_settings():
    p = Parameter(Tensor(np.arange(3, dtype=np.float32)), name="w", parallel_optimizer=False)
    p.comm_fusion = 2
    c = p.clone()
    assert (c.name, c.comm_fusion, c.parallel_optimizer) == ("w", 2, False)
    assert c.param_info is not p.param_info
    for q in (copy.deepcopy(p), pickle.loads(pickle.dumps(p))):
        assert (q.name, q.comm_fusion, q.parallel_optimizer) == ("w", 2, False)
        np.testing.assert_array_equal(q.asnumpy(), [0.0, 1.0, 2.0])


# -- the MindSpore 1.8 transformer layers' residual adds ----------------------------------------------------


def _layer(**kw):
    layer = TransformerEncoderLayer(batch_size=2, hidden_size=8, ffn_hidden_size=16, num_heads=2, seq_length=4,
                                    attention_dropout_rate=0.0, hidden_dropout_rate=0.0, **kw)  # fmt: skip
    return layer.set_train(False)


def test_encoder_layer_residuals_compose_its_sublayers():
    """The layer's output is x + Attn(LN1(x)), then + FFN(LN2(.)) (pre-layernorm), computed here from its own
    sublayers; ``add`` / ``add_3d`` are its Add primitives, as MindSpore's layer holds them."""
    layer = _layer()
    assert isinstance(layer.add, ms.ops.Add) and isinstance(layer.add_3d, ms.ops.Add)
    rng = np.random.default_rng(0)
    x = Tensor(rng.standard_normal((2, 4, 8)).astype(np.float32))
    mask = Tensor(np.tril(np.ones((4, 4), np.float32))[None].repeat(2, 0))
    out, _ = layer(x, mask)
    x2 = F.reshape(x, (-1, 8))
    h = F.cast(layer.layernorm1(x2), ms.float16)
    attention, _ = layer.attention(h, h, h, mask)
    h1 = x2.asnumpy().astype(np.float64) + attention.asnumpy().astype(np.float64)
    ffn_in = F.cast(layer.layernorm2(Tensor(h1.astype(np.float32))), ms.float16)
    ref = h1 + layer.output(ffn_in).asnumpy().astype(np.float64)
    np.testing.assert_allclose(out.asnumpy().reshape(-1, 8), ref, rtol=1e-2, atol=1e-2)


def test_encoder_layer_subclass_uses_its_operators():
    """PanGu-alpha's QueryLayer pattern: a subclass's construct uses the layer's ``add``, ``dtype`` and past ops."""

    class Query(TransformerEncoderLayer):
        def construct(self, x, query_vector, input_mask):
            input_x = F.cast(self.layernorm1(x), self.dtype)
            attention, _ = self.attention(query_vector, input_x, input_x, input_mask, self.key_past, self.value_past)
            x = self.add(x, attention)
            return self.add(x, self.output(F.cast(self.layernorm2(x), self.dtype)))

    layer = _layer()
    q = Query(batch_size=2, hidden_size=8, ffn_hidden_size=16, num_heads=2, seq_length=4,
              attention_dropout_rate=0.0, hidden_dropout_rate=0.0).set_train(False)  # fmt: skip
    ms.load_param_into_net(q, {p.name: p for p in layer.get_parameters()})
    rng = np.random.default_rng(1)
    x = Tensor(rng.standard_normal((8, 8)).astype(np.float32))
    mask = Tensor(np.ones((2, 4, 4), np.float32))
    ref, _ = layer(x, mask)
    query = F.cast(layer.layernorm1(x), ms.float16)  # the base layer's own query
    np.testing.assert_allclose(q(x, query, mask).asnumpy(), ref.asnumpy(), rtol=1e-3, atol=1e-3)
    past = _layer(use_past=True)
    assert isinstance(past.mul, ms.ops.Mul) and isinstance(past.assign, ms.ops.Assign)


# -- mindspore._checkparam ---------------------------------------------------------------------------------


def test_checkparam_1x_names():
    assert _checkparam.Validator.check_int_range(3, 0, 3, _checkparam.Rel.INC_BOTH, "padding_idx") == 3
    with pytest.raises(ValueError):
        _checkparam.Validator.check_int_range(4, 0, 3, _checkparam.Rel.INC_BOTH, "padding_idx", "EmbeddingMatrix")
    assert _checkparam.Validator.check_value_type("vocab_size", 5, [int]) == 5
    with pytest.raises(TypeError):
        _checkparam.Validator.check_value_type("vocab_size", 5.0, [int])


def test_checkparam_2x_module_names():
    assert _checkparam.check_positive_int(2) == 2
    assert _checkparam.check_int_range(0, 0, 3, _checkparam.INC_LEFT) == 0
    with pytest.raises(ValueError):
        _checkparam.check_int_range(3, 0, 3, _checkparam.INC_LEFT)
    with pytest.raises(ValueError):
        _checkparam.check_non_negative_int(-1)


# -- MindRecord: 0-d array fields -----------------------------------------------------------------------------


def test_mindrecord_zero_dim_array_fields(tmp_path):
    """TB-Net's schema: ``{"item": {"type": "int32", "shape": []}, "relation1": {"type": "int32", "shape": [-1]},
    "rating": {"type": "float32", "shape": []}}``; MindSpore's checks loop over the dims, so [] is accepted: a
    0-d array, batched to (batch,)."""
    path = str(tmp_path / "t.mindrecord")
    schema = {"item": {"type": "int32", "shape": []}, "relation1": {"type": "int32", "shape": [-1]},
              "rating": {"type": "float32", "shape": []}}  # fmt: skip
    rng = np.random.default_rng(0)
    rows = [{"item": np.array(k * 7, dtype=np.int64), "relation1": rng.integers(0, 9, 3),
             "rating": np.array(k % 2, dtype=np.float32)} for k in range(6)]  # fmt: skip
    writer = FileWriter(file_name=path, shard_num=1)
    writer.add_schema(schema, "zero-d fields")
    writer.write_raw_data(rows[:4])
    writer.write_raw_data(rows[4:])
    writer.commit()
    read = list(FileReader(path).get_next())
    assert [r["item"].shape for r in read] == [()] * 6 and read[5]["item"].dtype == np.int32
    data = ds.MindDataset(path, columns_list=["item", "relation1", "rating"], shuffle=False).batch(3)
    batches = list(data.create_tuple_iterator(output_numpy=True))
    np.testing.assert_array_equal(batches[1][0], [21, 28, 35])
    np.testing.assert_array_equal(batches[0][1], np.stack([r["relation1"] for r in rows[:3]]))
    np.testing.assert_array_equal(batches[0][2], np.array([0, 1, 0], np.float32))
    with pytest.raises(ValueError):
        FileWriter(file_name=str(tmp_path / "u.mindrecord"), shard_num=1).add_schema(
            {"x": {"type": "int32", "shape": [0]}}, "bad"
        )


# -- C.matmul ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "a, b",
    [((2, 3, 4, 4), (2, 3, 4, 1)), ((2, 1, 4, 5), (3, 5, 2)), ((4,), (4, 3)), ((2, 4), (4,)), ((4,), (4,))],
)
def test_composite_matmul_is_np_matmul(a, b):
    rng = np.random.default_rng(2)
    x, y = rng.standard_normal(a).astype(np.float32), rng.standard_normal(b).astype(np.float32)
    out = C.matmul(Tensor(x), Tensor(y))
    np.testing.assert_allclose(out.asnumpy(), np.matmul(x, y), rtol=1e-5, atol=1e-5)


def test_matmul_dtype():
    x = np.arange(2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4)
    y = np.arange(4 * 5, dtype=np.float32).reshape(4, 5)
    for f in (C.matmul, ms.numpy.matmul):
        out = f(Tensor(x), Tensor(y), dtype=ms.float16)
        assert out.dtype == ms.float16
        np.testing.assert_allclose(out.asnumpy().astype(np.float32), np.matmul(x, y), rtol=1e-3)
    assert ms.numpy.matmul(Tensor(x), Tensor(y)).dtype == ms.float32
