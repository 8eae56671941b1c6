"""BERT pretraining as MindSpore's model zoo runs it (tests/zoo/bert: official/nlp/Bert/src as it is, with
``mindspore`` replaced by ``opforge``), on TFRecord files written here by an independent encoder (the record
framing with a bit-by-bit CRC-32C and the tf.train.Example wire format by hand): ``create_bert_dataset`` reads
them through ``ds.TFRecordDataset`` with the zoo's ``TypeCast`` maps; run_pretrain.py's optimizer setup
(``BertLearningRate`` for ``Lamb`` / ``AdamWeightDecay`` over decay / no-decay groups) and its step cells
(``BertTrainOneStepWithLossScaleCell`` with a ``DynamicLossScaleUpdateCell``, ``BertTrainOneStepCell``, the
GPU path's ``BertTrainOneStepWithLossScaleCellForAdam`` + ``AdamWeightDecayForBert``) train through
``Model.train``; ``BertPretrainEval`` evaluates with ``BertMetric``."""

import json

import numpy as np
import pytest
from tfrecord_encoder import example, record
from zoo.bert import bert_for_pre_training as pretrain
from zoo.bert import dataset as bert_dataset
from zoo.bert import utils as bert_utils
from zoo.bert.adam import AdamWeightDecayForBert
from zoo.bert.bert_model import BertConfig

import opforge
import opforge.dataset as ds
from opforge import nn
from opforge.common import dtype as mstype
from opforge.train.callback import LambdaCallback
from opforge.train.model import Model

SEQ, VOCAB, MAX_PRED = 16, 64, 4
COLUMNS = ["input_ids", "input_mask", "segment_ids", "next_sentence_labels", "masked_lm_positions",
           "masked_lm_ids", "masked_lm_weights"]  # fmt: skip


@pytest.fixture(autouse=True)
def _seeds():
    ds.config._state["seed"] = None
    np.random.seed(0)
    opforge.set_seed(0)
    yield
    ds.config._state["seed"] = None


# ---------------------------------------------------------------------------------------------
# The rows, written by the independent TFRecord writer (tests/tfrecord_encoder.py): int64 and float lists


def _example(columns: dict) -> bytes:
    return example(
        {k: ("float" if v.dtype.kind == "f" else "int64", v.reshape(-1).tolist()) for k, v in columns.items()}
    )


def _pretraining_rows(n, seed):
    """Rows as create_pretraining_data.py writes them: [CLS] a [SEP] b [SEP] padded to SEQ, up to MAX_PRED
    masked positions (token 3 = [MASK]); the next-sentence label is whether b repeats a's first token, so
    both heads have something to learn."""
    rng = np.random.default_rng(seed)
    rows = []
    for _ in range(n):
        length = int(rng.integers(12, SEQ + 1))
        half = length // 2
        tokens = rng.integers(5, VOCAB, length)
        tokens[0], tokens[half], tokens[length - 1] = 1, 2, 2
        is_next = int(rng.integers(0, 2))
        if is_next:
            tokens[half + 1] = tokens[1]
        segment = np.zeros(SEQ, np.int64)
        segment[half + 1 : length] = 1
        n_pred = int(rng.integers(2, MAX_PRED + 1))
        positions = np.sort(rng.choice(np.arange(2, half), n_pred, replace=False))
        ids = tokens.copy()
        lm_ids = np.zeros(MAX_PRED, np.int64)
        lm_pos = np.zeros(MAX_PRED, np.int64)
        weights = np.zeros(MAX_PRED, np.float32)
        lm_ids[:n_pred], lm_pos[:n_pred], weights[:n_pred] = tokens[positions], positions, 1.0
        ids[positions] = 3
        pad = np.zeros(SEQ, np.int64)
        input_ids, mask = pad.copy(), pad.copy()
        input_ids[:length], mask[:length] = ids, 1
        rows.append({
            "input_ids": input_ids, "input_mask": mask, "segment_ids": segment,
            "next_sentence_labels": np.array([is_next]), "masked_lm_positions": lm_pos,
            "masked_lm_ids": lm_ids, "masked_lm_weights": weights,
        })  # fmt: skip
    return rows


def _write_data_dir(path, files=2, rows_per_file=8):
    path.mkdir()
    rows = []
    for k in range(files):
        part = _pretraining_rows(rows_per_file, seed=k)
        (path / f"part-{k}.tfrecord").write_bytes(b"".join(record(_example(r)) for r in part))
        rows += part
    (path / "README").write_text("not a tfrecord: create_bert_dataset skips it")
    return rows


def _schema_file(path):
    columns = {c: {"type": "int64", "rank": 1, "shape": [SEQ]} for c in ("input_ids", "input_mask", "segment_ids")}
    columns["next_sentence_labels"] = {"type": "int64", "rank": 1, "shape": [1]}
    columns["masked_lm_positions"] = {"type": "int64", "rank": 1, "shape": [MAX_PRED]}
    columns["masked_lm_ids"] = {"type": "int64", "rank": 1, "shape": [MAX_PRED]}
    columns["masked_lm_weights"] = {"type": "float32", "rank": 1, "shape": [MAX_PRED]}
    path.write_text(json.dumps({"datasetType": "TF", "numRows": 16, "columns": columns}))
    return str(path)


def _config(compute_type=mstype.float32, **kwargs):
    """bert_net_cfg of pretrain_config.yaml ('base'), shrunk."""
    values = dict(seq_length=SEQ, vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                  intermediate_size=64, hidden_act="gelu", hidden_dropout_prob=0.1, attention_probs_dropout_prob=0.1,
                  max_position_embeddings=32, type_vocab_size=2, initializer_range=0.02,
                  use_relative_positions=False, dtype=mstype.float32, compute_type=compute_type)  # fmt: skip
    values.update(kwargs)
    return BertConfig(**values)


def _decay_filter(x):  # config.py's create_filter_fun(['layernorm', 'bias'])
    return not (True in [key in x.name.lower() for key in ["layernorm", "bias"]])  # noqa: E713 (the zoo's)


def _get_optimizer(name, network, train_steps, learning_rate):
    """run_pretrain.py's _get_optimizer for 'Lamb' and 'AdamWeightDecay' (pretrain_config.yaml's values, a
    larger learning rate and fewer warm-up steps for a few steps of training)."""
    lr_schedule = bert_utils.BertLearningRate(
        learning_rate=learning_rate,
        end_learning_rate=0.0,
        warmup_steps=2,
        decay_steps=train_steps,
        power=2.0 if name == "Lamb" else 5.0,
    )
    params = network.trainable_params()
    decay_params = list(filter(_decay_filter, params))
    other_params = list(filter(lambda x: not _decay_filter(x), params))
    if name == "Lamb":
        group_params = [{"params": decay_params, "weight_decay": 0.01}, {"params": other_params},
                        {"order_params": params}]  # fmt: skip
        return nn.Lamb(group_params, learning_rate=lr_schedule, beta1=0.99, beta2=0.999, eps=1e-8)
    group_params = [{"params": decay_params, "weight_decay": 1e-5}, {"params": other_params, "weight_decay": 0.0},
                    {"order_params": params}]  # fmt: skip
    if name == "AdamWeightDecayForBert":
        return AdamWeightDecayForBert(group_params, learning_rate=lr_schedule, eps=1e-6)
    return nn.AdamWeightDecay(group_params, learning_rate=lr_schedule, eps=1e-6)


def _train(net_with_grads, data_set, epochs):
    outputs = []
    cb = LambdaCallback(on_train_step_end=lambda rc: outputs.append(rc.original_args().net_outputs))
    callbacks = [nn_time_monitor(), bert_utils.LossCallBack(data_set.get_dataset_size()), cb]
    Model(net_with_grads).train(epochs, data_set, callbacks=callbacks, dataset_sink_mode=False)
    return outputs


def nn_time_monitor():
    from opforge.train.callback import TimeMonitor

    return TimeMonitor(1)


# ---------------------------------------------------------------------------------------------
# The dataset


@pytest.mark.parametrize("with_schema", [False, True])
def test_create_bert_dataset_reads_the_tfrecords_with_type_casts(tmp_path, with_schema):
    rows = _write_data_dir(tmp_path / "data")
    schema = _schema_file(tmp_path / "schema.json") if with_schema else ""
    data_set = bert_dataset.create_bert_dataset(1, 0, "false", str(tmp_path / "data"), schema, batch_size=4,
                                                dataset_format="tfrecord")  # fmt: skip
    assert data_set.get_col_names() == COLUMNS and data_set.get_dataset_size() == 4
    batches = list(data_set.create_tuple_iterator(output_numpy=True))
    assert len(batches) == 4
    for c, column in enumerate(COLUMNS):
        got = np.concatenate([b[c] for b in batches])
        assert got.dtype == (np.float32 if column == "masked_lm_weights" else np.int32), column
        # the files are read in sorted order, each in record order (do_shuffle "false")
        want = np.stack([r[column] for r in rows])
        np.testing.assert_array_equal(got, want.astype(got.dtype), err_msg=column)
    assert batches[0][3].shape == (4, 1) and batches[0][0].shape == (4, SEQ)


def test_create_bert_dataset_shards_and_shuffles_files(tmp_path):
    _write_data_dir(tmp_path / "data", files=2, rows_per_file=8)
    ids = []
    for rank in range(2):
        data_set = bert_dataset.create_bert_dataset(2, rank, "true", str(tmp_path / "data"), "", batch_size=2,
                                                    dataset_format="tfrecord")  # fmt: skip
        assert data_set.get_dataset_size() == 4  # shard_equal_rows: 16 rows / 2 shards / batch 2
        ids.append({tuple(row) for b in data_set.create_tuple_iterator(output_numpy=True) for row in b[0]})
    assert len(ids[0]) == len(ids[1]) == 8 and not ids[0] & ids[1]


# ---------------------------------------------------------------------------------------------
# The model


def test_bert_pretraining_shapes_and_loss_at_initialisation():
    config = _config()
    rows = _pretraining_rows(4, seed=5)
    batch = [opforge.Tensor(np.stack([r[c] for r in rows]).astype(np.float32 if c == "masked_lm_weights"
                                                                       else np.int32)) for c in COLUMNS]  # fmt: skip
    net = pretrain.BertPreTraining(config, False, False)
    mlm, nsp = net(batch[0], batch[1], batch[2], batch[4])
    assert mlm.shape == (4 * MAX_PRED, VOCAB) and nsp.shape == (4, 2)
    np.testing.assert_allclose(np.exp(mlm.asnumpy()).sum(-1), 1.0, rtol=1e-5)  # log-probabilities
    np.testing.assert_allclose(np.exp(nsp.asnumpy()).sum(-1), 1.0, rtol=1e-5)
    loss = pretrain.BertNetworkWithLoss(config, False)(*batch)
    # near-uniform predictions at initialisation (TruncatedNormal(0.02)): log(VOCAB) + log(2)
    assert loss.shape == (1,) and loss.dtype == mstype.float32  # (1,): the denominator's tuple_to_array((1e-5,))
    assert abs(float(loss.asnumpy()[0]) - (np.log(VOCAB) + np.log(2))) < 0.3


def test_bert_relative_positions_and_one_hot_embeddings_run():
    config = _config(use_relative_positions=True)
    rows = _pretraining_rows(2, seed=6)
    ids, mask, seg = (opforge.Tensor(np.stack([r[c] for r in rows]).astype(np.int32)) for c in COLUMNS[:3])
    model = pretrain.BertModel(config, False, use_one_hot_embeddings=True)
    seq, pooled, table = model(ids, seg, mask)
    assert seq.shape == (2, SEQ, 32) and pooled.shape == (2, 32) and table.shape == (VOCAB, 32)
    assert np.all(np.abs(pooled.asnumpy()) <= 1.0)  # tanh


# ---------------------------------------------------------------------------------------------
# Training as run_pretrain.py


@pytest.mark.parametrize("optimizer, learning_rate", [("Lamb", 5e-2), ("AdamWeightDecay", 2e-3)])
def test_bert_pretrains_with_dynamic_loss_scale(tmp_path, optimizer, learning_rate):
    """run_pretrain.py with enable_lossscale 'true' (Lamb's trust ratio ||w|| / ||update|| is small at
    TruncatedNormal(0.02): a larger learning rate): BertTrainOneStepWithLossScaleCell (ClipByNorm per gradient
    through the clip_grad MultitypeFuncGraph, under @jit) with a DynamicLossScaleUpdateCell, in Model.train."""
    _write_data_dir(tmp_path / "data")
    data_set = bert_dataset.create_bert_dataset(1, 0, "false", str(tmp_path / "data"), "", batch_size=4,
                                                dataset_format="tfrecord")  # fmt: skip
    epochs = 4
    net_with_loss = pretrain.BertNetworkWithLoss(_config(hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0),
                                                 True)  # fmt: skip
    optimizer = _get_optimizer(optimizer, net_with_loss, epochs * data_set.get_dataset_size(), learning_rate)
    update_cell = nn.DynamicLossScaleUpdateCell(loss_scale_value=2**16, scale_factor=2, scale_window=1000)
    net_with_grads = pretrain.BertTrainOneStepWithLossScaleCell(net_with_loss, optimizer=optimizer,
                                                                scale_update_cell=update_cell)  # fmt: skip
    outputs = _train(net_with_grads, data_set, epochs)
    losses = np.array([float(o[0].asnumpy().reshape(-1)[0]) for o in outputs])
    assert len(losses) == epochs * 4 and np.all(np.isfinite(losses)), losses
    assert losses[-4:].mean() < losses[:4].mean() - 0.2, losses
    assert not any(bool(o[1].asnumpy()) for o in outputs)  # float32: no overflow at 2**16
    assert all(float(o[2].asnumpy().reshape(-1)[0]) == 2.0**16 for o in outputs)


def _losses(outputs):
    return np.array([float((o[0] if isinstance(o, tuple) else o).asnumpy().reshape(-1)[0]) for o in outputs])


def test_bert_pretrains_without_loss_scale(tmp_path):
    """enable_lossscale 'false': BertTrainOneStepCell with enable_clip_grad (the sens as a [1] Tensor)."""
    _write_data_dir(tmp_path / "data")
    data_set = bert_dataset.create_bert_dataset(1, 0, "false", str(tmp_path / "data"), "", batch_size=4,
                                                dataset_format="tfrecord")  # fmt: skip
    net_with_loss = pretrain.BertNetworkWithLoss(_config(hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0),
                                                 True)  # fmt: skip
    optimizer = _get_optimizer("AdamWeightDecay", net_with_loss, 12, 2e-3)
    net_with_grads = pretrain.BertTrainOneStepCell(net_with_loss, optimizer=optimizer, enable_clip_grad=True)
    losses = _losses(_train(net_with_grads, data_set, 3))
    assert len(losses) == 12 and np.all(np.isfinite(losses)) and losses[-4:].mean() < losses[:4].mean() - 0.2


def test_bert_gpu_path_adam_weight_decay_for_bert_takes_the_overflow(tmp_path):
    """run_pretrain.py on the GPU with AdamWeightDecay and loss scale: BertTrainOneStepWithLossScaleCellForAdam
    hands ``overflow`` to AdamWeightDecayForBert (src/adam.py: the _adam_opt MultitypeFuncGraph over the
    parameter groups' decay_flags / optim_filter, Select between the update and none)."""
    _write_data_dir(tmp_path / "data")
    data_set = bert_dataset.create_bert_dataset(1, 0, "false", str(tmp_path / "data"), "", batch_size=4,
                                                dataset_format="tfrecord")  # fmt: skip
    net_with_loss = pretrain.BertNetworkWithLoss(_config(hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0),
                                                 True)  # fmt: skip
    optimizer = _get_optimizer("AdamWeightDecayForBert", net_with_loss, 12, 2e-3)
    assert optimizer.is_group and not optimizer.is_group_lr
    assert sum(optimizer.decay_flags) == len([p for p in optimizer.parameters if _decay_filter(p)])
    update_cell = nn.DynamicLossScaleUpdateCell(loss_scale_value=2**16, scale_factor=2, scale_window=1000)
    net_with_grads = pretrain.BertTrainOneStepWithLossScaleCellForAdam(net_with_loss, optimizer=optimizer,
                                                                       scale_update_cell=update_cell)  # fmt: skip
    outputs = _train(net_with_grads, data_set, 3)
    losses = _losses(outputs)
    assert np.all(np.isfinite(losses)) and losses[-4:].mean() < losses[:4].mean() - 0.2, losses
    # an overflow: the optimizer keeps every weight (beta1 = beta2 = 1, the update selected away)
    before = [p.asnumpy().copy() for p in optimizer.parameters]
    grads = tuple(opforge.Tensor(np.full(p.shape, np.inf, np.float32)) for p in optimizer.parameters)
    optimizer(grads, opforge.Tensor(np.array([True])))
    assert all(np.array_equal(b, p.asnumpy()) for b, p in zip(before, optimizer.parameters))


def test_bert_float16_compute_overflows_lower_the_loss_scale(tmp_path):
    """pretrain_config.yaml's base net: compute_type float16 (Dense and LayerNorm ``to_float``, SaturateCast)
    with a loss scale of 2**24: the first steps overflow in float16 and are skipped while the scale halves."""
    _write_data_dir(tmp_path / "data")
    data_set = bert_dataset.create_bert_dataset(1, 0, "false", str(tmp_path / "data"), "", batch_size=4,
                                                dataset_format="tfrecord")  # fmt: skip
    config = _config(compute_type=mstype.float16, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    net_with_loss = pretrain.BertNetworkWithLoss(config, True)
    optimizer = _get_optimizer("AdamWeightDecay", net_with_loss, 12, 2e-3)
    update_cell = nn.DynamicLossScaleUpdateCell(loss_scale_value=2**24, scale_factor=2, scale_window=1000)
    net_with_grads = pretrain.BertTrainOneStepWithLossScaleCell(net_with_loss, optimizer=optimizer,
                                                                scale_update_cell=update_cell)  # fmt: skip
    outputs = _train(net_with_grads, data_set, 3)
    overflow = [bool(o[1].asnumpy()) for o in outputs]
    scales = [float(o[2].asnumpy().reshape(-1)[0]) for o in outputs]
    assert overflow[0] and not overflow[-1], overflow
    k = overflow.index(False)
    assert all(overflow[:k]) and scales[k] == 2.0**24 / 2**k and scales[-1] == scales[k], scales
    losses = _losses(outputs)
    assert np.all(np.isfinite(losses)) and losses[-3:].mean() < losses[k], losses


def test_bert_pretrain_eval_with_bert_metric(tmp_path):
    """pretrain_eval.py / run_pretrain.py's train_with_eval: create_eval_dataset, BertPretrainEval as the
    eval_network of Model with BertMetric, and EvalCallBack at each epoch's end."""
    _write_data_dir(tmp_path / "data")
    data_set = bert_dataset.create_bert_dataset(1, 0, "false", str(tmp_path / "data"), "", batch_size=4,
                                                dataset_format="tfrecord")  # fmt: skip
    eval_ds = bert_dataset.create_eval_dataset(4, 1, 0, str(tmp_path / "data"), "", "tfrecord")
    assert eval_ds.get_dataset_size() == 4
    net_with_loss = pretrain.BertNetworkWithLoss(_config(), True)
    optimizer = _get_optimizer("AdamWeightDecay", net_with_loss, 8, 2e-3)
    net_with_grads = pretrain.BertTrainOneStepCell(net_with_loss, optimizer=optimizer, enable_clip_grad=True)
    net_eval = pretrain.BertPretrainEval(_config(), network=net_with_loss.bert)
    model = Model(net_with_grads, eval_network=net_eval, metrics={"bert_acc": bert_utils.BertMetric(4)})
    accuracies = []
    eval_callback = bert_utils.EvalCallBack(model, eval_ds, 4, 16)

    class Record(bert_utils.Callback):
        def epoch_end(self, run_context):
            accuracies.append(model.eval(eval_ds, dataset_sink_mode=False)["bert_acc"])

    model.train(2, data_set, callbacks=[eval_callback, Record()], dataset_sink_mode=False)
    # the reference: argmax of the masked-LM log-probabilities against the labels, weighted
    hits = total = 0.0
    net_eval.network.set_train(False)
    for batch in eval_ds.create_tuple_iterator():
        mlm, _ = net_eval.network(batch[0], batch[1], batch[2], batch[4])
        pred = mlm.asnumpy().argmax(-1).reshape(4, -1)
        weights = batch[6].asnumpy()
        hits += ((pred == batch[5].asnumpy()) * weights).sum()
        total += weights.sum()
    assert len(accuracies) == 2 and 0.0 <= accuracies[0] <= 1.0
    np.testing.assert_allclose(accuracies[-1], hits / total, rtol=1e-6)
