"""FastText as MindSpore's model zoo runs it (tests/zoo/fasttext: research/nlp/fasttext with ``mindspore``
replaced by ``opforge``), on synthetic token rows: src/dataset.py's bucket padding writes them to one
MindRecord file per bucket (``write_to_mindrecord``), ``load_dataset`` reads them back (``MindDataset``,
``rename``, ``batch``, the buckets joined with ``+`` and shuffled), train.py's ``_build_training_pipeline``
trains ``FastTextNetWithLoss`` through ``FastTextTrainOneStepCell`` (grad clipping by ``clip_grad``'s
``MultitypeFuncGraph``, ``Adam`` on ``polynomial_decay_scheduler``) with ``Model.train`` and its callbacks, and
eval.py's ``run_fasttext_infer`` loads the checkpoint into a bare ``FastText`` and predicts through
``FastTextInferCell``. The network and its loss are checked against NumPy."""

import os

import numpy as np
import pytest
from zoo.fasttext import dataset as ft_data
from zoo.fasttext import eval as ft_eval
from zoo.fasttext.config import config
from zoo.fasttext.fasttext_model import FastText
from zoo.fasttext.fasttext_train import FastTextNetWithLoss
from zoo.fasttext.load_dataset import load_dataset

import opforge
import opforge.common.dtype as mstype
import opforge.dataset as ds
from opforge import Tensor, context
from opforge.train.model import Model
from opforge.train.serialization import load_checkpoint, load_param_into_net

CLASSES = 4


@pytest.fixture(autouse=True)
def _seeds():
    ds.config._state["seed"] = None
    np.random.seed(0)
    opforge.set_seed(0)
    yield
    ds.config._state["seed"] = None
    context.set_context(mode=context.PYNATIVE_MODE)


def _rows(count, seed):
    """[src_tokens, length, label_idx] rows as FastTextDataPreProcess.load builds them: class c's tokens are
    ids in [2 + 50c, 2 + 50(c + 1)) (0 is PAD, 1 UNK), 3 to 21 of them."""
    rng = np.random.default_rng(seed)
    rows = []
    for _ in range(count):
        c, n = int(rng.integers(CLASSES)), int(rng.integers(3, 22))
        rows.append([[int(t) for t in rng.integers(2 + 50 * c, 2 + 50 * (c + 1), n)], n, c])
    return rows


def _write_data(path):
    path.mkdir()
    train = ft_data.pad_to_buckets(_rows(64, 0), config.buckets, {b: [] for b in config.buckets})
    test = ft_data.pad_to_buckets(_rows(16, 1), config.test_buckets, {b: [] for b in config.test_buckets})
    for b, items in train.items():
        ft_data.write_to_mindrecord(items, str(path / f"train_dataset_bs_{b}.mindrecord"))
    for b, items in test.items():
        ft_data.write_to_mindrecord(items, str(path / f"test_dataset_bs_{b}.mindrecord"))
    return str(path), train


def test_fasttext_network_and_loss_against_numpy():
    net = FastText(config.vocab_size, config.embedding_dims, CLASSES)
    rng = np.random.default_rng(2)
    table = rng.normal(size=(config.vocab_size, config.embedding_dims)).astype(np.float32)
    net.embeding_func.embedding_table.set_data(Tensor(table))
    tokens = rng.integers(0, config.vocab_size, (3, 8)).astype(np.int32)
    length = np.array([[8], [8], [8]], np.int32)  # int32, as the MindRecord column: RealDiv promotes it
    got = net(Tensor(tokens), Tensor(length)).asnumpy()
    w, b = net.fc.weight.asnumpy(), net.fc.bias.asnumpy()
    want = (table[tokens].sum(1) / length) @ w.T + b
    np.testing.assert_allclose(got, want, rtol=1e-2, atol=1e-2)  # the Dense runs in float16 (to_float)
    assert got.dtype == np.float32
    labels = np.array([[0], [3], [1]], np.int32)
    loss = FastTextNetWithLoss(config.vocab_size, config.embedding_dims, CLASSES)
    loss.fasttext = net
    logp = got - np.log(np.exp(got).sum(1, keepdims=True))
    want_loss = -logp[np.arange(3), labels[:, 0]].mean()
    got_loss = loss(Tensor(tokens), Tensor(length), Tensor(labels)).asnumpy()
    np.testing.assert_allclose(got_loss, want_loss, rtol=1e-2)


def test_fasttext_buckets_written_and_loaded_as_load_dataset_reads_them(tmp_path):
    path, train = _write_data(tmp_path / "data")
    data = load_dataset(dataset_path=path, batch_size=config.batch_size, epoch_count=1, bucket=config.buckets)
    sizes = {b: len(items) for b, items in train.items()}
    assert data.get_dataset_size() == sum(-(-n // config.batch_size) for n in sizes.values())
    assert data.get_col_names() == ["src_token_text", "src_tokens_text_length", "label_idx_tag"]
    seen = {b: 0 for b in config.buckets}
    for tokens, length, label in data.create_tuple_iterator(output_numpy=True, num_epochs=1):
        bucket = tokens.shape[1]  # a batch holds one bucket's rows: every length is the bucket's
        assert (length[:, 0] == bucket).all() and tokens.dtype == np.int32 and label.shape == (len(tokens), 1)
        seen[bucket] += len(tokens)
    assert seen == sizes


def test_fasttext_trains_and_evaluates_as_train_and_eval_py(tmp_path, monkeypatch):
    from zoo.fasttext import train as ft_train  # sets GRAPH_MODE, as train.py does (the fixture resets it)

    path, _ = _write_data(tmp_path / "data")
    monkeypatch.chdir(tmp_path)  # LossCallBack writes ./loss_0.log
    monkeypatch.setattr(config, "save_ckpt_dir", str(tmp_path / "ckpt"))
    pre = ft_train.load_dataset(
        dataset_path=path, batch_size=config.batch_size, epoch_count=config.epoch_count, bucket=config.buckets
    )
    ft_train._build_training_pipeline(pre)
    losses = [float(line.rsplit("loss: ", 1)[1]) for line in (tmp_path / "loss_0.log").read_text().splitlines()]
    steps = pre.get_dataset_size()
    assert len(losses) == config.epoch * steps
    assert np.mean(losses[-steps:]) < np.mean(losses[:steps]) - 0.3
    ckpts = [os.path.join(r, f) for r, _, fs in os.walk(tmp_path / "ckpt") for f in fs if f.endswith(".ckpt")]
    assert [os.path.basename(c) for c in ckpts] == [f"fasttext-{config.epoch}_{steps}.ckpt"]

    # eval.py's run_fasttext_infer: the checkpoint names "fasttext.fc.weight"; the bare FastText loads it
    dataset = ft_eval.load_infer_dataset(batch_size=config.batch_size, datafile=path, bucket=config.test_buckets)
    fasttext_model = FastText(config.vocab_size, config.embedding_dims, config.num_class)
    parameter_dict = load_checkpoint(ckpts[0])
    not_loaded, _ = load_param_into_net(fasttext_model, parameter_dict=parameter_dict)
    assert not_loaded == []
    np.testing.assert_array_equal(fasttext_model.fc.weight.asnumpy(), parameter_dict["fasttext.fc.weight"].asnumpy())
    model = Model(ft_eval.FastTextInferCell(fasttext_model))
    predictions, target_sens = [], []
    for batch in dataset.create_dict_iterator(output_numpy=True, num_epochs=1):
        target_sens.append(batch["label_idx"])
        src_tokens = Tensor(batch["src_tokens"], mstype.int32)
        src_tokens_length = Tensor(batch["src_tokens_length"], mstype.int32)
        predicted_idx = model.predict(src_tokens, src_tokens_length)
        predictions.append(predicted_idx.asnumpy())
    target_sens = np.array(target_sens).flatten()
    predictions = np.array(predictions).flatten()
    assert predictions.shape == target_sens.shape == (16,)
    assert (predictions == target_sens).mean() > 0.5  # chance is 0.25
