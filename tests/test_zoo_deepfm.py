"""DeepFM as MindSpore's model zoo runs it (tests/zoo/deepfm: official/recommend/DeepFM with ``mindspore`` replaced
by ``opforge``): src/preprocess_data.py turns a synthetic Criteo ``train.txt`` (label, 13 dense values, 26 hex
categories per line) into its statistics dictionaries and MindRecord files (21 train shards and 3 test shards,
``line_per_sample`` = 1000 lines per row), train.py's ``train_deepfm`` reads them back through ``create_dataset``
(``MindDataset``, ``batch``, the reshaping ``map``), trains ``TrainStepWrap`` (Adam with loss scale and a
``sens``-scaled ``GradOperation``) through ``Model.train`` in sink mode with the zoo's ``EvalCallBack`` (AUC
each epoch), ``LossCallBack`` and ``ModelCheckpoint``, and eval.py's ``eval_deepfm`` loads the last checkpoint
into the eval network and reports the AUC. The forward (float32 dense layers as on the CPU, float16 ones as
``convert_dtype`` gives elsewhere), the loss and one training step are checked against NumPy."""

import os

import numpy as np
import pytest
from zoo.deepfm import preprocess_data as pp
from zoo.deepfm.config import config
from zoo.deepfm.dataset import DataType, create_dataset
from zoo.deepfm.deepfm import DeepFMModel, NetWithLossClass, PredictWithSigmoid, TrainStepWrap

import opforge
from opforge import Tensor, context

LINES = 16000  # preprocess's seed 2020 sends lines 3999, 13999 and 14999 (ending rows 4, 14, 15) to the test set


@pytest.fixture(autouse=True)
def _state(monkeypatch):
    np.random.seed(0)
    opforge.set_seed(0)
    for key in ("dataset_path", "ckpt_path", "checkpoint_path", "device_target", "convert_dtype", "train_epochs"):
        monkeypatch.setattr(config, key, getattr(config, key))
    graph_kernel = context.get_context("enable_graph_kernel")  # train.py sets it
    yield
    context.set_context(mode=context.PYNATIVE_MODE, device_target="CPU", enable_graph_kernel=graph_kernel)


def _write_criteo(path, lines=LINES, seed=0):
    """Lines as Criteo's train.txt: label, 13 dense counts (10% empty), 26 categories of 4 values each (hex);
    the label drawn from a logistic model of the categories and the dense values."""
    rng = np.random.default_rng(seed)
    w_cat, w_val = rng.normal(0, 1.0, (26, 4)), rng.normal(0, 1.0, 13)
    cats, vals = rng.integers(0, 4, (lines, 26)), rng.integers(0, 50, (lines, 13))
    empty = rng.uniform(size=(lines, 13)) < 0.1
    logit = w_cat[np.arange(26), cats].sum(1) / 2 + (w_val * vals / 50 * ~empty).sum(1)
    labels = rng.uniform(size=lines) < 1 / (1 + np.exp(-logit))
    with open(path, "w") as f:
        for y, v, e, c in zip(labels, vals, empty, cats):
            dense = ["" if skip else str(x) for x, skip in zip(v, e)]
            f.write(
                "\t".join([str(int(y)), *dense, *(format(0x1000 * (i + 1) + int(x), "08x") for i, x in enumerate(c))])
            )
            f.write("\n")


@pytest.fixture(scope="module")
def criteo(tmp_path_factory):
    """preprocess_data.py's __main__, on the synthetic file: statistics, cat2id, the MindRecord split."""
    root = str(tmp_path_factory.mktemp("criteo")) + "/"
    for sub in ("origin_data", "stats_dict", "mindrecord"):
        pp.mkdir_path(root + sub)
    _write_criteo(root + "origin_data/train.txt")
    stats = pp.StatsDict(field_size=39, dense_dim=config.dense_dim, slot_dim=config.slot_dim,
                         skip_id_convert=config.skip_id_convert)  # fmt: skip
    pp.statsdata(root + "origin_data/train.txt", root + "stats_dict/", stats, dense_dim=13, slot_dim=26)
    stats.load_dict(dict_path=root + "stats_dict/", prefix="")
    stats.get_cat2id(threshold=config.threshold)
    cwd = os.getcwd()
    os.chdir(root)  # it saves items_error_size_lineCount.npy in the working folder
    try:
        pp.random_split_trans2mindrecord(root + "origin_data/train.txt", root + "mindrecord/", stats,
                                         part_rows=2000000, train_line_count=LINES, line_per_sample=1000,
                                         test_size=0.1, seed=2020, dense_dim=13, slot_dim=26)  # fmt: skip
    finally:
        os.chdir(cwd)
    return root, stats


def test_preprocess_writes_the_mindrecord_shards_create_dataset_reads(criteo):
    root, stats = criteo
    assert len(stats.cat2id_dict) == 13 + 26 + 26 * 4 <= config.data_vocab_size  # every category > threshold
    files = sorted(os.listdir(root + "mindrecord"))
    assert len([f for f in files if f.startswith("train") and not f.endswith(".db")]) == 21
    assert len([f for f in files if f.startswith("test") and not f.endswith(".db")]) == 3
    train = create_dataset(root + "mindrecord/", train_mode=True, epochs=1, batch_size=config.batch_size,
                           data_type=DataType(config.data_format))  # fmt: skip
    test = create_dataset(root + "mindrecord/", train_mode=False, epochs=1, batch_size=config.batch_size,
                          data_type=DataType(config.data_format))  # fmt: skip
    assert train.get_dataset_size() == 13 and test.get_dataset_size() == 3
    assert train.get_col_names() == ["feat_ids", "feat_vals", "label"]
    rows = list(test.create_tuple_iterator(output_numpy=True, num_epochs=1))
    ids, vals, label = rows[0]
    assert ids.shape == vals.shape == (1000, 39) and label.shape == (1000, 1)
    assert ids.dtype == np.int32 and vals.dtype == np.float32 and label.dtype == np.float32
    # the dense fields' ids are the field numbers, their values count / max; the categories' weights are 1
    assert (ids[:, :13] == np.arange(13)).all() and (vals[:, 13:] == 1).all() and (vals[:, :13] <= 1).all()
    assert (ids[:, 13:] >= 39).all() and (ids < len(stats.cat2id_dict)).all()
    # test.txt's lines 14000 to 14999 form one row (the shards hold whole rows; MindDataset reads all three)
    lines = open(root + "origin_data/train.txt").read().splitlines()
    labels = sorted(np.concatenate([r[2][:, 0] for r in rows]).tolist())
    want = sorted(float(line.split("\t")[0]) for k in (3, 13, 14) for line in lines[1000 * k : 1000 * (k + 1)])
    assert labels == want


def _deepfm_numpy(net, ids, wts):
    """DeepFMModel.construct in NumPy: the linear term, the FM term 0.5 * sum((sum vx)^2 - sum(vx^2)) and the
    float32 deep layers (ReLU on all but the last)."""
    mask = wts[:, :, None]
    linear = (net.fm_w.asnumpy()[ids] * mask).sum(1)
    vx = net.embedding_table.asnumpy()[ids] * mask
    fm = 0.5 * (vx.sum(1) ** 2 - (vx**2).sum(1)).sum(1, keepdims=True)
    x = vx.reshape(len(ids), -1)
    for i in range(1, 6):
        layer = getattr(net, f"dense_layer_{i}")
        x = x @ layer.weight.asnumpy() + layer.bias.asnumpy()
        x = np.maximum(x, 0) if i < 5 else x
    return linear + fm + x


def _small_config(monkeypatch):
    monkeypatch.setattr(config, "batch_size", 8)
    config.convert_dtype = False  # train.py's CPU choice
    rng = np.random.default_rng(1)
    ids = rng.integers(0, config.data_vocab_size, (8, 39)).astype(np.int32)
    wts = rng.uniform(0.2, 1.0, (8, 39)).astype(np.float32)
    label = rng.integers(0, 2, (8, 1)).astype(np.float32)
    return ids, wts, label


def test_deepfm_forward_and_loss_match_numpy(monkeypatch):
    ids, wts, label = _small_config(monkeypatch)
    net = DeepFMModel(config)
    # the zoo's "normal" init is N(0, 0.01) from NumPy's global generator
    assert net.fm_w.shape == (config.data_vocab_size, 1) and abs(net.embedding_table.asnumpy().std() - 0.01) < 2e-3
    for p in (net.fm_w, net.embedding_table):
        p.set_data(Tensor(np.random.default_rng(2).normal(0, 0.3, p.shape).astype(np.float32)))
    out, fm_w, table = net(Tensor(ids), Tensor(wts))
    want = _deepfm_numpy(net, ids, wts)
    np.testing.assert_allclose(out.asnumpy(), want, rtol=1e-4, atol=1e-5)
    loss = NetWithLossClass(net, l2_coef=config.l2_coef)(Tensor(ids), Tensor(wts), Tensor(label)).asnumpy()
    log_loss = np.maximum(want, 0) - want * label + np.log1p(np.exp(-np.abs(want)))
    l2 = config.l2_coef * ((fm_w.asnumpy() ** 2).sum() + (table.asnumpy() ** 2).sum()) * 0.5
    np.testing.assert_allclose(loss, log_loss.mean() + l2, rtol=1e-5)
    logits, probs, labels = PredictWithSigmoid(net)(Tensor(ids), Tensor(wts), Tensor(label))
    np.testing.assert_allclose(probs.asnumpy(), 1 / (1 + np.exp(-want)), rtol=1e-4)
    np.testing.assert_array_equal(labels.asnumpy(), label)


def test_train_step_wrap_is_one_unscaled_adam_step(monkeypatch):
    """sens = loss_scale = 1024 scales the gradients, Adam(loss_scale=1024) divides them back: the first step
    moves a parameter by lr * sqrt(1 - beta2) / (1 - beta1) * m / (sqrt(v) + eps) = lr * g / (|g| + eps'),
    lr * sign(g) for the last layer's bias, whose gradient is mean(sigmoid(out) - label)."""
    ids, wts, label = _small_config(monkeypatch)
    net = DeepFMModel(config)
    loss_net = NetWithLossClass(net, l2_coef=config.l2_coef)
    before = {p.name: p.asnumpy().copy() for p in loss_net.trainable_params()}
    out = _deepfm_numpy(net, ids, wts)
    grad_b5 = np.mean(1 / (1 + np.exp(-out)) - label)
    train = TrainStepWrap(loss_net, lr=config.learning_rate, eps=config.epsilon, loss_scale=config.loss_scale)
    loss = train(Tensor(ids), Tensor(wts), Tensor(label)).asnumpy()
    log_loss = np.maximum(out, 0) - out * label + np.log1p(np.exp(-np.abs(out)))
    l2 = config.l2_coef * 0.5 * sum((before[k] ** 2).sum() for k in before if "dense" not in k)
    np.testing.assert_allclose(loss, log_loss.mean() + l2, rtol=1e-4)  # the loss before the update
    step = net.dense_layer_5.bias.asnumpy() - before[net.dense_layer_5.bias.name]
    np.testing.assert_allclose(step, -config.learning_rate * np.sign(grad_b5), rtol=1e-3)
    after = {p.name: p.asnumpy() for p in loss_net.trainable_params()}
    assert all(not np.allclose(after[k], before[k]) for k in before)  # the L2 term reaches every table row


def _train_and_eval(criteo, tmp_path, monkeypatch):
    from zoo.deepfm import eval as dfm_eval  # eval.py sets GRAPH_MODE on import, as it does
    from zoo.deepfm import train as dfm_train  # train.py turns do_eval into a bool on import

    root, _ = criteo
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(config, "loss_file_name", str(tmp_path / "loss.log"))
    monkeypatch.setattr(config, "eval_file_name", str(tmp_path / "auc.log"))
    config.dataset_path = root + "mindrecord/"
    config.ckpt_path = str(tmp_path / "ckpt")
    assert config.do_eval is True
    monkeypatch.setattr(config, "rank_size", 1)  # train.py's get_device_num(); train_deepfm sets it to None
    dfm_train.train_deepfm()
    losses = [float(line.rsplit("loss is ", 1)[1]) for line in (tmp_path / "loss.log").read_text().splitlines()]
    aucs = [float(line.split("[")[1].split("]")[0]) for line in (tmp_path / "auc.log").read_text().splitlines()]
    # sink mode: one step_end per epoch, at its 13th step; the AUC after every epoch
    assert len(losses) == len(aucs) == config.train_epochs
    assert (tmp_path / "loss.log").read_text().count("step: 13,") == config.train_epochs
    ckpts = sorted(os.listdir(tmp_path / "ckpt"))
    assert [c for c in ckpts if c.endswith(".ckpt")] == [
        f"deepfm-{e}_13.ckpt" for e in range(1, config.train_epochs + 1)
    ]
    config.checkpoint_path = str(tmp_path / "ckpt" / f"deepfm-{config.train_epochs}_13.ckpt")
    res = dfm_eval.eval_deepfm()
    assert "AUC: " in (tmp_path / "auc.log").read_text()
    return losses, aucs, res["auc"]


def test_deepfm_trains_and_evaluates_on_cpu_as_train_and_eval_py(criteo, tmp_path, monkeypatch):
    losses, aucs, auc = _train_and_eval(criteo, tmp_path, monkeypatch)
    assert config.convert_dtype is False  # train.py: float16 dense layers everywhere but on the CPU
    assert losses[-1] < losses[0] - 0.04 and aucs[-1] > aucs[0] > 0.75, (losses, aucs)
    assert auc == pytest.approx(aucs[-1], abs=1e-6)  # eval.py's checkpoint is the last epoch's


def test_deepfm_float16_dense_layers_match_numpy(monkeypatch):
    """convert_dtype (train.py keeps it off the CPU): DenseLayer casts x, weight and bias to float16, multiplies,
    adds, activates and casts back to float32."""
    ids, wts, _ = _small_config(monkeypatch)
    config.convert_dtype = True
    net = DeepFMModel(config)
    for p in (net.fm_w, net.embedding_table):
        p.set_data(Tensor(np.random.default_rng(3).normal(0, 0.3, p.shape).astype(np.float32)))
    out = net(Tensor(ids), Tensor(wts))[0].asnumpy()
    assert out.dtype == np.float32
    x = (net.embedding_table.asnumpy()[ids] * wts[:, :, None]).reshape(len(ids), -1)
    for i in range(1, 6):
        layer = getattr(net, f"dense_layer_{i}")
        w, b = layer.weight.asnumpy().astype(np.float16), layer.bias.asnumpy().astype(np.float16)
        x = (x.astype(np.float16) @ w + b).astype(np.float16)
        x = (np.maximum(x, 0) if i < 5 else x).astype(np.float32)
    vx = net.embedding_table.asnumpy()[ids] * wts[:, :, None]
    want = (net.fm_w.asnumpy()[ids] * wts[:, :, None]).sum(1) + 0.5 * (vx.sum(1) ** 2 - (vx**2).sum(1)).sum(1)[:, None]
    np.testing.assert_allclose(out, want + x, rtol=1e-3, atol=1e-3)


def test_tfrecord_format_reads_the_rows_the_mindrecord_format_does(criteo, tmp_path):
    """create_dataset's TFRecord path (data_format 2): files named *test*tfrecord*, a ``ds.Schema`` of the three
    columns with mstype dtypes, the same batch-and-reshape map. The MindRecord rows, written as tf.train.Examples
    (int64 ids, float values and labels), read back as the same arrays."""
    from tfrecord_encoder import write

    root, _ = criteo
    mindrecord = create_dataset(root + "mindrecord/", train_mode=False, epochs=1, batch_size=config.batch_size,
                                data_type=DataType.MINDRECORD)  # fmt: skip
    rows = list(mindrecord.create_tuple_iterator(output_numpy=True, num_epochs=1))
    examples = [
        {"feat_ids": ("int64", ids.reshape(-1).tolist()), "feat_vals": ("float", vals.reshape(-1).tolist()),
         "label": ("float", label.reshape(-1).tolist())}
        for ids, vals, label in rows
    ]  # fmt: skip
    os.makedirs(tmp_path / "tf")
    write(tmp_path / "tf" / "test_part_0.tfrecord", examples[:2])
    write(tmp_path / "tf" / "test_part_1.tfrecord", examples[2:])
    write(tmp_path / "tf" / "train_part_0.tfrecord", examples[:1])  # not a test file: not read
    tfrecord = create_dataset(str(tmp_path / "tf"), train_mode=False, epochs=1, batch_size=config.batch_size,
                              data_type=DataType.TFRECORD)  # fmt: skip
    assert tfrecord.get_dataset_size() == 3
    got = list(tfrecord.create_tuple_iterator(output_numpy=True, num_epochs=1))
    for want, have in zip(rows, got):
        for w, h in zip(want, have):
            assert h.dtype == w.dtype and h.shape == w.shape
            np.testing.assert_array_equal(h, w)
