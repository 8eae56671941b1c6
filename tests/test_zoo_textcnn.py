"""TextCNN as MindSpore's model zoo runs it (tests/zoo/textcnn: research/nlp/textcnn with ``mindspore`` replaced
by ``opforge``), on a synthetic MovieReview folder (``rt-polarity.pos`` / ``rt-polarity.neg`` sentences whose
polarity words decide the label): train.py's ``train_net`` reads it through ``MovieReview`` (vocabulary,
padding to ``word_len``, the 9-trunk split), trains ``TextCNN`` with ``SoftmaxCrossEntropyExpand`` and Adam on
the warm-up/shrink learning-rate list through ``Model.train`` -- the CPU branch as it is, and the device branch
(``dataset_sink_mode=True`` with ``sink_size`` and the zoo's ``EvalCallback`` keeping the best checkpoint) --
and eval.py's ``eval_net`` loads the checkpoint and reports ``Accuracy``. The network and the loss are checked
against NumPy."""

import os
import random

import numpy as np
import pytest
from zoo.textcnn import eval as tc_eval
from zoo.textcnn import train as tc_train
from zoo.textcnn.config import config
from zoo.textcnn.dataset import MovieReview
from zoo.textcnn.textcnn import SoftmaxCrossEntropyExpand, TextCNN

import opforge
from opforge import Tensor, context


def _word(stem, i):
    return stem + "abcdefghijklmnopqrstuvwxyz"[i // 26] + "abcdefghijklmnopqrstuvwxyz"[i % 26]  # read_data drops digits


WORDS = {"pos": [_word("good", i) for i in range(12)], "neg": [_word("bad", i) for i in range(12)]}


@pytest.fixture(autouse=True)
def _state(monkeypatch):
    random.seed(0)  # MovieReview.split_dataset shuffles with Python's random
    np.random.seed(0)
    opforge.set_seed(0)
    for key in ("data_path", "output_path", "checkpoint_file_path", "sink_size", "device_target"):
        monkeypatch.setattr(config, key, getattr(config, key))  # train_net writes config.sink_size
    yield
    context.set_context(mode=context.PYNATIVE_MODE, device_target="CPU")


def _write_mr(root, count=160, seed=0):
    """Sentences of 4 to 11 neutral words with two polarity words inserted, punctuation and digits that
    read_data strips."""
    rng = np.random.default_rng(seed)
    os.makedirs(root)
    neutral = [_word("w", i) for i in range(40)]
    for polarity, words in WORDS.items():
        with open(os.path.join(root, f"rt-polarity.{polarity}"), "w") as f:
            for _ in range(count):
                tokens = [str(rng.choice(neutral)) for _ in range(int(rng.integers(4, 12)))]
                for _ in range(2):
                    tokens.insert(int(rng.integers(0, len(tokens))), str(rng.choice(words)))
                f.write(" ".join(tokens) + ", (1999) .\n")
    return str(root)


def test_movie_review_reads_splits_and_batches(tmp_path):
    root = _write_mr(tmp_path / "data")
    instance = MovieReview(root_dir=root, maxlen=config.word_len, split=0.9)
    assert len(instance.Pos) == len(instance.Neg) == 160 and instance.maxlen == 13 and instance.minlen == 6
    # int(1 / (1 - 0.9)) is 10 trunks of ceil(0.1 * 160) = 16 rows per polarity: trunk 2 is the test set
    assert len(instance.test) == 32 and len(instance.train) == 288
    assert instance.get_dict_len() == 40 + 24  # "(1999)", "," and "." become "" and are filtered out
    train = instance.create_train_dataset(batch_size=config.batch_size, epoch_size=config.epoch_size)
    assert train.get_dataset_size() == 18 and train.get_col_names() == ["data", "label"]
    data, label = next(train.create_tuple_iterator(output_numpy=True, num_epochs=1))
    assert data.shape == (16, config.word_len) and data.dtype == np.int32 and label.shape == (16,)
    assert label.dtype == np.int32
    assert instance.create_test_dataset(batch_size=config.batch_size).get_dataset_size() == 2


def _np_textcnn(net, tokens):
    """TextCNN.construct in NumPy (eval mode): embedding, three (h, vec_length) convolutions with padding 1,
    ReLU, max-pool over word_len - h + 1 rows (stride 1), the global max, concat, dense."""
    table = net.embedding.embedding_table.asnumpy()
    x = np.pad(table[tokens], ((0, 0), (1, 1), (1, 1)))  # [B, L + 2, V + 2]
    feats = []
    for h, layer in zip((3, 4, 5), (net.layer1, net.layer2, net.layer3)):
        conv = layer[0]
        w, b = conv.weight.asnumpy()[:, 0], conv.bias.asnumpy()  # [96, h, V]
        rows, cols = x.shape[1] - h + 1, x.shape[2] - w.shape[2] + 1
        out = (
            np.stack(
                [
                    np.einsum("bhv,ohv->bo", x[:, i : i + h, j : j + w.shape[2]], w)
                    for i in range(rows)
                    for j in range(cols)
                ],
                -1,
            )
            + b[None, :, None]
        )
        out = np.maximum(out, 0).reshape(len(tokens), 96, rows, cols)
        k = config.word_len - h + 1
        pooled = np.stack([out[:, :, i : i + k].max(2) for i in range(rows - k + 1)], 2)
        feats.append(pooled.max((2, 3)))
    x = np.concatenate(feats, 1)
    return x @ net.fc.weight.asnumpy().T + net.fc.bias.asnumpy()


def test_textcnn_and_loss_match_numpy():
    net = TextCNN(vocab_len=30, word_len=config.word_len, num_classes=2, vec_length=config.vec_length)
    net.set_train(False)
    rng = np.random.default_rng(1)
    tokens = rng.integers(0, 30, (4, config.word_len)).astype(np.int32)
    logits = net(Tensor(tokens)).asnumpy()
    assert logits.shape == (4, 2)
    np.testing.assert_allclose(logits, _np_textcnn(net, tokens), rtol=1e-4, atol=1e-5)
    labels = np.array([0, 1, 1, 0], np.int32)
    loss = SoftmaxCrossEntropyExpand(sparse=True)(Tensor(logits), Tensor(labels)).asnumpy()
    logp = logits - logits.max(1, keepdims=True)
    logp = logp - np.log(np.exp(logp).sum(1, keepdims=True))
    np.testing.assert_allclose(loss, -logp[np.arange(4), labels].mean(), rtol=1e-5)
    assert loss.shape == ()


def _ckpts(path):
    return sorted(f for _, _, fs in os.walk(path) for f in fs if f.endswith(".ckpt"))


def test_textcnn_trains_on_cpu_and_evaluates_as_train_and_eval_py(tmp_path, monkeypatch, capsys):
    config.data_path = _write_mr(tmp_path / "data")
    config.output_path = str(tmp_path / "train")
    tc_train.train_net()
    out = capsys.readouterr().out
    losses = [float(line.rsplit("loss is ", 1)[1]) for line in out.splitlines() if "loss is" in line]
    assert len(losses) == config.epoch_size * 18 and "train success" in out
    assert np.mean(losses[-18:]) < 0.1 < 0.6 < np.mean(losses[:4]), losses
    assert config.sink_size == 18  # train_net sets it to the batch count
    # ModelCheckpoint every sink_size steps, keep_checkpoint_max=1: only the last one stays
    assert _ckpts(tmp_path / "train") == [f"train_textcnn-{config.epoch_size}_18.ckpt"]

    random.seed(0)  # eval.py rebuilds MovieReview: the same split, the same vocabulary
    config.checkpoint_file_path = os.path.join(config.output_path, config.checkpoint_path, _ckpts(tmp_path)[0])
    acc = tc_eval.eval_net()
    assert set(acc) == {"acc"} and acc["acc"] > 0.9


def test_textcnn_device_branch_sinks_and_keeps_the_best_checkpoint(tmp_path, capsys):
    """train.py's non-CPU branch: epoch_count sinks of sink_size steps, EvalCallback saving best_acc.ckpt."""
    config.data_path = _write_mr(tmp_path / "data")
    config.output_path = str(tmp_path / "train")
    config.device_target = "GPU"
    tc_train.train_net()
    out = capsys.readouterr().out
    assert out.count("the best epoch is") >= 1 and "train success" in out
    best = [float(line.rsplit("best acc is ", 1)[1]) for line in out.splitlines() if "best acc is" in line]
    assert best == sorted(best) and best[-1] > 0.9
    assert _ckpts(tmp_path / "train") == ["best_acc.ckpt", f"train_textcnn-{config.epoch_size}_18.ckpt"]
    params = opforge.load_checkpoint(str(tmp_path / "train" / "checkpoint" / "best_acc.ckpt"))
    assert "fc.weight" in params and "moment1.fc.weight" in params  # the train network's parameters
